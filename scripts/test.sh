#!/usr/bin/env bash
# The one command that runs the whole libnatsio test suite:
#
#   1. system tools (cmake, ninja, g++, GoogleTest; apt-get only if missing)
#   2. nats-server at the pinned version (scripts/install-nats-server.sh),
#      the nats CLI too (scripts/install-natscli.sh: the Go interop tests
#      run `nats micro`)
#   3. cargo build --release, and the committed include/natsio{,_sys}.h are unchanged;
#      abi/generate.py --check: the ABI description and generated glue too;
#      scripts/docs.sh: the C API reference (doxygen, warnings are errors)
#   4. cargo test, as a debug build (Rust core: overflow checks and debug
#      assertions on; every later stage tests the release library)
#   5. cmake + ninja + ctest in build/           (C suite, C++ binding, harness)
#      then the README's two commands: scripts/demo.sh (the other is this run)
#      then scripts/test-install.sh: install into a prefix, use it from outside
#   6. go test -race in bindings/go (cgo flags from $BUILD_DIR/pkgconfig),
#      then scripts/test-install-go.sh: the module used from outside the tree
#      then tests/corpus/go/run.py: nats.go programs run as written and with
#      their imports pointed at the facade (bindings/go/nats), outputs compared
#   7. npm test in bindings/node, then the nats.js corpus (tests/corpus/node:
#      nats.js programs run as written and with natsio's imports, compared)
#      then scripts/test-install-node.sh: npm pack, install outside the tree, use
#   8. scripts/readme_blocks.py: every code block of the READMEs runs
#   9. scripts/sanitize.sh: the suites under ASan+UBSan and valgrind
#  10. scripts/fuzz.sh $FUZZ_SECONDS: bounded cargo-fuzz runs (default 10 s/target)
#      (8-10 as the README's blocks say: they are read from it); the
#      targets are built in the background (nice 19, raised when the
#      stage needs them) from stage 3 on
#
# A failing run ends with the counts table and, when a script named the
# cause (today: scripts/sanitize.sh), a digest of the failed checks.
#
# Every stage's test count is checked against its floor in
# scripts/test-floors.txt: a stage that ran fewer tests than that fails the
# run, so a test that was dropped, skipped or never built cannot pass
# unnoticed. The counts of each run go to $BUILD_DIR/test-counts.txt (the
# floors file's format) and a table at the end; see the floors file for
# how to raise a floor when you add tests.
#
# Environment:
#   CARGO_TARGET_DIR     honoured; the C/C++ build links <it>/release/libnatsio.so
#   BUILD_DIR            CMake build dir (default: build)
#   NATS_SERVER_VERSION  / NATS_SERVER_BIN: see scripts/install-nats-server.sh
#   NATS_CLI_VERSION / NATS_CLI_BIN: see scripts/install-natscli.sh
#   FUZZ_SECONDS         seconds of fuzzing per target (default 10: a smoke run that keeps CI short; longer runs by hand; 0 skips it)
#   CTEST_JOBS           ctest programs at once (default 2); scripts/sanitize.sh has SANITIZE_JOBS, scripts/readme_blocks.py README_JOBS
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
ROOT="$(pwd)"
BUILD_DIR="${BUILD_DIR:-build}"
TARGET_DIR="${CARGO_TARGET_DIR:-$ROOT/target}"
case "$TARGET_DIR" in /*) ;; *) TARGET_DIR="$ROOT/$TARGET_DIR" ;; esac
LIB_DIR="$TARGET_DIR/release"

# Each step shows the seconds since the run began, so a slow stage stands out.
step() { printf '\n==> [%4d s] %s\n' "$SECONDS" "$*"; }

# --------------------------------------------------------------------------
# Test counts. Each stage records how many tests it ran (count KEY N); the
# floors file says how many each must run at least. Checked after every
# stage (fail fast) and shown as a table at the end, also when a stage fails.
FLOORS_FILE="$ROOT/scripts/test-floors.txt"
LOG_DIR="$ROOT/$BUILD_DIR/test-logs"
COUNTS_FILE="$ROOT/$BUILD_DIR/test-counts.txt"
case "$BUILD_DIR" in /*) LOG_DIR="$BUILD_DIR/test-logs"; COUNTS_FILE="$BUILD_DIR/test-counts.txt" ;; esac
mkdir -p "$LOG_DIR"
: >"$COUNTS_FILE"
# What a failing stage's scripts name as the cause (scripts/sanitize.sh
# writes it), repeated after the counts table: the end of a CI log is what
# gets read.
export NATSIO_FAILURE_DIGEST="$LOG_DIR/failure-digest.txt"
: >"$NATSIO_FAILURE_DIGEST"
# shellcheck source=scripts/lib/background-build.sh
. scripts/lib/background-build.sh
# shellcheck source=scripts/lib/go-cgo-env.sh
. scripts/lib/go-cgo-env.sh
FUZZ_BUILD_PID=""

declare -A FLOOR=() COUNT=() NOTE=()
FLOOR_KEYS=()
while read -r key floor _; do
    case "$key" in '' | '#'*) continue ;; esac
    [[ "$floor" =~ ^[0-9]+$ ]] || { echo "$FLOORS_FILE: bad floor for $key: '$floor'" >&2; exit 1; }
    FLOOR[$key]=$floor
    FLOOR_KEYS+=("$key")
done <"$FLOORS_FILE"
COUNT_KEYS=()
STAGE="setup"

count() { # KEY N
    COUNT[$1]=$2
    COUNT_KEYS+=("$1")
    printf '%-32s %s\n' "$1" "$2" >>"$COUNTS_FILE"
}

note() { # STAGE TEXT: a stage with no test count (ran, or skipped on purpose)
    NOTE[$1]=$2
    COUNT_KEYS+=("$1")
}

# Fails the stage when a count is zero, differs from its floor (below or
# above: floors are exact) or has no floor, or a floor was not counted. A KEY ending in / stands for every key under it, counted
# or with a floor (ctest/: each test program).
check_counts() { # KEY...
    local key k bad=0 keys=()
    local -A seen=()
    for key in "$@"; do
        if [[ "$key" == */ ]]; then
            for k in "${FLOOR_KEYS[@]}" "${COUNT_KEYS[@]}"; do
                [[ "$k" == "$key"* ]] && keys+=("$k")
            done
        else
            keys+=("$key")
        fi
    done
    for key in "${keys[@]}"; do
        [ -z "${seen[$key]:-}" ] || continue
        seen[$key]=1
        if [ -z "${FLOOR[$key]:-}" ]; then
            echo "test counts: $key ran ${COUNT[$key]:-?} tests but has no floor in scripts/test-floors.txt" >&2
            bad=1
        elif [ -z "${COUNT[$key]:-}" ]; then
            echo "test counts: $key did not run (floor ${FLOOR[$key]})" >&2
            bad=1
        elif [ "${COUNT[$key]}" -eq 0 ]; then
            echo "test counts: $key ran no tests" >&2
            bad=1
        elif [ "${COUNT[$key]}" -lt "${FLOOR[$key]}" ]; then
            echo "test counts: $key ran ${COUNT[$key]} tests, fewer than its floor ${FLOOR[$key]}" >&2
            bad=1
        elif [ "${COUNT[$key]}" -gt "${FLOOR[$key]}" ]; then
            # Exact: a test added in one place must not hide one lost in
            # another behind the same total.
            echo "test counts: $key ran ${COUNT[$key]} tests, more than its floor ${FLOOR[$key]}: set the floor to the new count" >&2
            bad=1
        fi
    done
    [ "$bad" -eq 0 ] || exit 1
}

summary() {
    local rc=$? key status
    trap - EXIT
    step "test counts (floors: scripts/test-floors.txt; this run: $COUNTS_FILE)"
    printf '%-32s %8s %8s  %s\n' stage ran floor status
    local -A shown=()
    for key in "${COUNT_KEYS[@]}" "${FLOOR_KEYS[@]}"; do
        [ -z "${shown[$key]:-}" ] || continue
        shown[$key]=1
        if [ -n "${NOTE[$key]:-}" ]; then
            printf '%-32s %8s %8s  %s\n' "$key" - - "${NOTE[$key]}"
            continue
        fi
        local ran="${COUNT[$key]:-}" floor="${FLOOR[$key]:-}"
        if [ -z "$floor" ]; then status="NO FLOOR: add it"
        elif [ -z "$ran" ]; then status="no count (stage failed or not reached)"
        elif [ "$ran" -lt "$floor" ]; then status="BELOW FLOOR"
        elif [ "$ran" -gt "$floor" ]; then status="ABOVE FLOOR: set it to the count"
        else status="ok"
        fi
        printf '%-32s %8s %8s  %s\n' "$key" "${ran:--}" "${floor:--}" "$status"
    done
    if [ -n "$FUZZ_BUILD_PID" ]; then
        kill -- "-$FUZZ_BUILD_PID" 2>/dev/null || true
    fi
    if [ "$rc" -ne 0 ]; then
        echo "FAILED in stage: $STAGE (exit $rc)"
        if [ -s "$NATSIO_FAILURE_DIGEST" ]; then
            echo "what failed:"
            tail -n 24 "$NATSIO_FAILURE_DIGEST"
        fi
    fi
    exit "$rc"
}
trap summary EXIT

# "N passed" of each test binary of a cargo test log, as "name N" lines:
# lib (the unit tests), the tests/ target's name, doc (the doc-tests). A
# binary that passed nothing is left out: its floor then fails as not run.
cargo_counts() {
    awk '
        /^ *Running unittests / { name = "lib"; next }
        /^ *Running / { name = $2; sub(/^tests\//, "", name); sub(/(\/main)?\.rs$/, "", name); next }
        /^ *Doc-tests / { name = "doc"; next }
        /^test result: / { if (name != "" && $4 > 0) print name, $4; name = "" }
    ' "$1"
}

# "--- PASS" lines (tests and subtests) of each package of a `go test -v`
# log, as "package N" lines, the package named by its import path without
# PREFIX: its lines come before its "ok" line.
go_counts() { # PREFIX LOG
    awk -v prefix="$1" '
        /^[[:space:]]*--- PASS: / { n++ }
        /^ok[[:space:]]/ { p = $2; if (index(p, prefix) == 1) p = substr(p, length(prefix) + 1); print p, n + 0; n = 0 }
        /^(FAIL|\?)[[:space:]]/ { n = 0 }
    ' "$2"
}

# The count of every ctest entry from ctest's log: the program's own
# "N passed, M failed" (tests/c/harness) or GoogleTest's
# "[  PASSED  ] N tests." line, the last one the program printed.
# Prints "name count" lines; "none" when a program printed neither.
ctest_counts() {
    awk '
        /^[0-9]+\/[0-9]+ Testing: / { name = $3; n = "none"; next }
        /^[0-9]+ passed, [0-9]+ failed$/ { n = $1 }
        /^\[  PASSED  \] [0-9]+ tests?\.$/ { n = $4 }
        /^"[^"]*" end time:/ { if (name != "") print name, n; name = "" }
    ' "$1"
}

# --------------------------------------------------------------------------
STAGE="system dependencies"
step "$STAGE"
missing=()
command -v cmake >/dev/null || missing+=(cmake)
command -v ninja >/dev/null || missing+=(ninja-build)
command -v cc >/dev/null || missing+=(gcc)
command -v c++ >/dev/null || missing+=(g++)
[ -f /usr/include/gtest/gtest.h ] || missing+=(libgtest-dev)
# libcrypto headers: the C test harness signs NKey nonces (auth callback tests).
[ -f /usr/include/openssl/evp.h ] || missing+=(libssl-dev)
command -v git >/dev/null || missing+=(git)
# doxygen: the C API reference, built and checked by scripts/docs.sh.
command -v doxygen >/dev/null || missing+=(doxygen)
if [ ${#missing[@]} -gt 0 ]; then
    echo "installing: ${missing[*]}"
    SUDO=""
    [ "$(id -u)" -eq 0 ] || SUDO="sudo"
    $SUDO apt-get update
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y --no-install-recommends "${missing[@]}"
else
    echo "all present"
fi

# --------------------------------------------------------------------------
STAGE="nats-server"
step "$STAGE"
NATS_SERVER_BIN="$(scripts/install-nats-server.sh | tail -n 1)"
export NATS_SERVER_BIN
"$NATS_SERVER_BIN" --version
# The nats CLI (natscli, built from the Go module proxy, cached under .tools/).
NATS_CLI_BIN="$(scripts/install-natscli.sh | tail -n 1)"
export NATS_CLI_BIN

# Bindings and examples load libnatsio.so from the cargo output in place.
export LD_LIBRARY_PATH="$LIB_DIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

# --------------------------------------------------------------------------
STAGE="cargo build --release"
step "$STAGE"
cargo build --release

# The fuzz targets' build (cargo-fuzz; ASan and coverage over every
# dependency: about 5 minutes of CPU) starts now, at the lowest priority,
# and goes on while the suites below mostly wait on their servers. The
# fuzzing stage waits for it (scripts/lib/background-build.sh); its own
# build step then finds nothing, or only the rest, to do.
if [ "${FUZZ_SECONDS:-10}" != "0" ]; then
    background_build_start "$LOG_DIR/fuzz-build.log" "$LOG_DIR/fuzz-build.status" scripts/fuzz.sh --build-only
    FUZZ_BUILD_PID=$BACKGROUND_PGID
fi

# A build that changed a committed header means the header was stale.
# (Only a git checkout can tell; an export is built as it is.)
STAGE="header check"
if git rev-parse --is-inside-work-tree >/dev/null 2>&1 &&
    git ls-files --error-unmatch include/natsio.h include/natsio_sys.h >/dev/null 2>&1; then
    step "include/natsio.h and include/natsio_sys.h match the generated headers"
    if ! git diff --exit-code include/natsio.h include/natsio_sys.h; then
        echo "include/natsio.h or include/natsio_sys.h changed during the build: commit the regenerated headers" >&2
        exit 1
    fi
    note header "ok: include/natsio.h and include/natsio_sys.h unchanged"
else
    note header "not checked: not a git checkout"
fi

# The ABI's description (abi/natsio.abi.json) and the bindings' generated
# per-verb layer follow the header: stale ones fail the run.
STAGE="generated bindings check"
step "abi/natsio.abi.json and the generated bindings match the header"
python3 abi/generate.py --check
note generated "ok: abi/generate.py --check"

# The C API reference from the header: any doxygen warning (something
# undocumented, a malformed comment) fails the run.
STAGE="API reference"
step "$STAGE (scripts/docs.sh)"
scripts/docs.sh "$BUILD_DIR/docs"
note docs "ok: doxygen built the C API reference without a warning"

# --------------------------------------------------------------------------
# The Rust tests run once, built as debug: integer overflow panics and
# debug_assert!s are checked, which the release profile compiles out. They
# no longer run a second time as release (a 2.7 min LTO build of the test
# binaries): the release library itself is what the C, C++, Go, Node,
# install, README and sanitizer stages below exercise.
STAGE="cargo test (debug)"
step "$STAGE"
cargo test 2>&1 | tee "$LOG_DIR/cargo-test-debug.log"
while read -r name n; do
    count "cargo-test-debug/$name" "$n"
done < <(cargo_counts "$LOG_DIR/cargo-test-debug.log")
check_counts cargo-test-debug/

# --------------------------------------------------------------------------
# One ctest entry per test program; each program's own case count is read
# from ctest's log and checked too (a program whose cases were cut down
# still passes as one entry).
STAGE="C / C++ (cmake, ctest)"
step "$STAGE"
cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release -DNATSIO_LIB_DIR="$LIB_DIR"
cmake --build "$BUILD_DIR"
# Two programs at a time: they mostly wait on servers and timers, and the
# harness gives each its own server, port and temp dir.
ctest --test-dir "$BUILD_DIR" --output-on-failure -j "${CTEST_JOBS:-2}"
ctest_log="$BUILD_DIR/Testing/Temporary/LastTest.log"
ctest_entries=0
while read -r name n; do
    ctest_entries=$((ctest_entries + 1))
    if [ "$n" = none ]; then
        echo "test counts: ctest/$name printed no \"N passed\" or \"[  PASSED  ] N tests.\" line" >&2
        exit 1
    fi
    count "ctest/$name" "$n"
done < <(ctest_counts "$ctest_log")
count ctest "$ctest_entries"
check_counts ctest ctest/

# The README's two commands (block "two-commands"): the demo runs as written
# (everything is built: it configures and builds the same $BUILD_DIR, then
# runs the C demo against a server of its own); the tests are this run.
STAGE="two commands"
step "README's two commands: scripts/demo.sh (scripts/test.sh is this run)"
python3 scripts/readme_blocks.py extract README.md two-commands >"$LOG_DIR/two-commands.sh"
grep -q '^scripts/test.sh' "$LOG_DIR/two-commands.sh" || { echo "README's two commands no longer name scripts/test.sh" >&2; exit 1; }
grep -v '^scripts/test.sh' "$LOG_DIR/two-commands.sh" >"$LOG_DIR/two-commands-demo.sh"
BUILD_DIR="$BUILD_DIR" bash -euo pipefail "$LOG_DIR/two-commands-demo.sh"
note two-commands "ok: scripts/demo.sh as the README shows it"

# --------------------------------------------------------------------------
# The library as users get it: installed into a temporary prefix (from the
# build dir above) and used by a project outside the tree through
# find_package, pkg-config and add_subdirectory. Counted: its checks.
STAGE="install and use"
step "$STAGE (scripts/test-install.sh)"
scripts/test-install.sh 2>&1 | tee "$LOG_DIR/install.log"
count install "$(sed -nE 's/^install checks passed: ([0-9]+)$/\1/p' "$LOG_DIR/install.log")"
check_counts install

# --------------------------------------------------------------------------
# Go binding (cgo). Its cgo flags come from pkg-config (natsio-static;
# natsio with -tags natsio_shared): here from the uninstalled .pc files the
# CMake configure above wrote into $BUILD_DIR/pkgconfig, which name
# $LIB_DIR (libnatsio.a, libnatsio.so) and include/. Go's build cache does
# not key a cgo package by pkg-config's output (`go help cache`), so its
# checksum goes into CGO_CPPFLAGS: another cargo output is never linked from
# a stale cache entry. The shared link is built too (the example).
# The binding's module: standard library only. Its interop/ module (the
# Object Store read and written by nats.go) fetches nats.go from the module
# proxy (versions pinned by its go.sum) and runs beside it, its output
# appended to the same log. Counted: "--- PASS" lines of -v (tests and
# subtests; a skipped one is "--- SKIP" and does not count).
STAGE="go test"
step "Go binding: go vet, go test -race"
GO_PC_DIR="$BUILD_DIR/pkgconfig"
case "$GO_PC_DIR" in /*) ;; *) GO_PC_DIR="$ROOT/$GO_PC_DIR" ;; esac
(
    cd bindings/go
    go_cgo_env "$GO_PC_DIR" # cgo against $BUILD_DIR (in a subshell)
    go vet ./...
    go build -o /dev/null ./examples/pubsub
    go build -tags natsio_shared -o /dev/null ./examples/pubsub
    go test -race -count=1 -v ./... 2>&1 | tee "$LOG_DIR/go-test.log"
    cd interop
    go vet ./...
    go test -race -count=1 -v ./... 2>&1 | tee -a "$LOG_DIR/go-test.log"
)
while read -r pkg n; do
    count "go-test/$pkg" "$n"
done < <(go_counts github.com/libnatsio/natsio/ "$LOG_DIR/go-test.log")
check_counts go-test/

# The binding as Go users get it: libnatsio installed from the build dir
# into a temporary prefix, the module served as v<version> by a local
# module proxy and required by a module outside the tree (static, shared,
# vendored; the build errors without the library or cgo). Counted: its checks.
STAGE="go install and use"
step "$STAGE (scripts/test-install-go.sh)"
BUILD_DIR="$BUILD_DIR" scripts/test-install-go.sh 2>&1 | tee "$LOG_DIR/install-go.log"
count install-go "$(sed -nE 's/^go install checks passed: ([0-9]+)$/\1/p' "$LOG_DIR/install-go.log")"
check_counts install-go

# nats.go programs (tests/corpus/go), each built as written (nats.go from the
# module proxy) and with only its imports pointed at the facade, run against
# fresh nats-servers: the outputs must match. Counted: the programs that did.
STAGE="go corpus"
step "$STAGE (tests/corpus/go/run.py)"
(
    go_cgo_env "$GO_PC_DIR" # cgo against $BUILD_DIR (in a subshell)
    python3 tests/corpus/go/run.py
) 2>&1 | tee "$LOG_DIR/go-corpus.log"
count go-corpus "$(sed -nE 's/^go corpus programs passed: ([0-9]+)$/\1/p' "$LOG_DIR/go-corpus.log")"
check_counts go-corpus

# --------------------------------------------------------------------------
# Node binding (node --test via npm test). Counted: the runner's "pass N"
# summary (TAP "# pass N", or "ℹ pass N" from the spec reporter).
STAGE="node test"
step "Node binding: npm test"
(
    cd bindings/node
    if [ -f package-lock.json ]; then npm ci; else npm install; fi
    # npm test's command with a second reporter beside TAP: the passed
    # tests of each file (scripts/node-test-counts.mjs).
    npm run --silent pretest
    test_cmd="$(node -p "require('./package.json').scripts.test")"
    [[ "$test_cmd" == "node "*" --test "* ]] || { echo "package.json's test script is not a node --test command: $test_cmd" >&2; exit 1; }
    reporters="--test-reporter=tap --test-reporter-destination=stdout"
    reporters+=" --test-reporter=$ROOT/scripts/node-test-counts.mjs --test-reporter-destination=$LOG_DIR/node-test-counts.txt"
    bash -euo pipefail -c "${test_cmd/ --test / --test $reporters } 2>&1" | tee "$LOG_DIR/node-test.log"
)
while read -r file n; do
    count "node-test/${file%.test.js}" "$n"
done <"$LOG_DIR/node-test-counts.txt"
check_counts node-test/

# nats.js programs moved by their import lines (issue 44): each program of
# tests/corpus/node runs against the official @nats-io/* packages (the
# devDependencies installed above) and again with its imports rewritten
# to natsio/*, each time on a fresh nats-server; the outputs must match.
# Counted: the programs that matched.
STAGE="node corpus"
step "$STAGE (tests/corpus/node/run.mjs)"
node tests/corpus/node/run.mjs 2>&1 | tee "$LOG_DIR/corpus-node.log"
count corpus-node "$(sed -nE 's/^corpus programs passed: ([0-9]+)$/\1/p' "$LOG_DIR/corpus-node.log")"
check_counts corpus-node

# The package as npm users get it: packed (with the Rust crate), installed
# in projects outside the tree against a prefix installed from the build
# dir above (pkg-config natsio-static) and built from its crate (a cargo
# release build of the shipped sources; the dependencies come compiled from
# the tree's target dir), then used from CommonJS, ESM and TypeScript. Counted: its checks.
STAGE="node install and use"
step "$STAGE (scripts/test-install-node.sh)"
BUILD_DIR="$BUILD_DIR" NATSIO_CRATE_TARGET_DIR="$TARGET_DIR" scripts/test-install-node.sh 2>&1 |
    tee "$LOG_DIR/install-node.log"
count install-node "$(sed -nE 's/^node install checks passed: ([0-9]+)$/\1/p' "$LOG_DIR/install-node.log")"
check_counts install-node

# --------------------------------------------------------------------------
# Every code block of README.md and bindings/*/README.md: programs built
# against this tree and run against fresh servers, shell blocks run
# (scripts/readme_blocks.py; blocks marked `by` are run by the install
# scripts above and the stages around). Counted: programs and shell blocks.
STAGE="readme"
step "README code blocks (scripts/readme_blocks.py)"
BUILD_DIR="$BUILD_DIR" NATSIO_LIB_DIR="$LIB_DIR" python3 scripts/readme_blocks.py run 2>&1 | tee "$LOG_DIR/readme.log"
count readme "$(sed -nE 's/^readme blocks passed: ([0-9]+)$/\1/p' "$LOG_DIR/readme.log")"
check_counts readme

# --------------------------------------------------------------------------
# Hardening: the suites under sanitizers, then short fuzz runs (the longer
# runs are `scripts/fuzz.sh 60` or more, by hand). sanitize.sh fails itself
# when a program fails or is missing; its exit status is the check here.
# Its knobs for running a subset are cleared: this is the whole suite.
STAGE="sanitizers"
# The README's hardening commands (block "hardening"): each line run as
# written, but fuzz.sh for $FUZZ_SECONDS per target instead of the README's
# longer run.
hardening="$(python3 scripts/readme_blocks.py commands README.md hardening)"
[ "$(grep -c . <<<"$hardening")" = 2 ] && grep -qx 'scripts/sanitize.sh' <<<"$hardening" &&
    grep -qE '^scripts/fuzz.sh [0-9]+$' <<<"$hardening" ||
    { echo "README's hardening block changed; this stage runs its two lines: $hardening" >&2; exit 1; }
step "sanitizers: tests under ASan+UBSan and valgrind"
SANITIZE_COUNTS="$LOG_DIR/sanitize-counts.txt"
: >"$SANITIZE_COUNTS"
env -u SANITIZE_SUITES -u VALGRIND_TESTS -u GTEST_FILTER -u GOFLAGS BUILD_DIR="$BUILD_DIR" \
    NATSIO_SANITIZE_COUNTS="$SANITIZE_COUNTS" \
    bash -euo pipefail -c "$(grep '^scripts/sanitize.sh' <<<"$hardening")"
# Each sanitized run ran exactly the cases of the same program in the
# stages above: its floor is that program's (node: the sum over its files; go: over
# bindings/go's packages).
node_total=0 go_total=0
for key in "${FLOOR_KEYS[@]}"; do
    [[ "$key" == node-test/* ]] && node_total=$((node_total + FLOOR[$key]))
    # bindings/go's packages (interop/ is a module of its own, not run there)
    [[ "$key" == go-test/bindings/go || "$key" == go-test/bindings/go/nats* ]] && go_total=$((go_total + FLOOR[$key]))
done
while read -r label n; do
    tool="${label%%:*}"
    case "$label" in
        *:test_*) program="${label#*:}" same="${FLOOR[ctest/$program]:-}" ;;
        asan:natsio_cpp_tests) program=cpp_binding same="${FLOOR[ctest/cpp_binding]:-}" ;;
        asan:node:--test) program=node same="$node_total" ;;
        asan:go:test) program=go same="$go_total" ;;
        *) program="${label#*:}" same="" ;; # no floor: check_counts says so
    esac
    key="sanitize/$tool/$program"
    [ -z "$same" ] || { FLOOR[$key]=$same; FLOOR_KEYS+=("$key"); }
    count "$key" "$n"
done <"$SANITIZE_COUNTS"
check_counts sanitize/

STAGE="fuzzing"
if [ "${FUZZ_SECONDS:-10}" != "0" ]; then
    step "fuzzing: the background build of the targets"
    if background_build_finish "$FUZZ_BUILD_PID" "$LOG_DIR/fuzz-build.status"; then
        tail -n 1 "$LOG_DIR/fuzz-build.log"
    else
        tail -n 40 "$LOG_DIR/fuzz-build.log"
        echo "the background build failed or was stopped (above); fuzz.sh builds again"
    fi
    FUZZ_BUILD_PID=""
    step "fuzzing: ${FUZZ_SECONDS:-10} s per target"
    # Counted: the targets that ran clean (every [[bin]] of fuzz/Cargo.toml,
    # each with executions), against the floor "fuzz".
    FUZZ_COUNTS="$LOG_DIR/fuzz-counts.txt"
    : >"$FUZZ_COUNTS"
    NATSIO_FUZZ_COUNTS="$FUZZ_COUNTS" \
        bash -euo pipefail -c "$(grep '^scripts/fuzz.sh' <<<"$hardening" | sed -E "s/[0-9]+$/${FUZZ_SECONDS:-10}/")"
    count fuzz "$(cat "$FUZZ_COUNTS")"
    check_counts fuzz
else
    note fuzzing "skipped: FUZZ_SECONDS=0"
fi

STAGE="done"
step "all tests passed"
