#!/usr/bin/env bash
# The C suite and every binding's suite under sanitizers, against the normal
# release build of the Rust library (cargo build --release). The Rust code
# is not instrumented, but ASan replaces malloc/free process-wide, so the
# library's heap is checked for leaks and bad frees along with ours.
#
#   c         C tests (tests/c/test_*.c) built with gcc
#             -fsanitize=address,undefined (+ LeakSanitizer) in their own
#             CMake build dir ($ASAN_BUILD_DIR); every one but ASAN_SKIP's
#             is run (below: programs each of whose C ABI calls another
#             sanitized program makes too; ctest runs them all).
#   cpp       the C++17 GoogleTest program (natsio_cpp_tests: every C++ test
#             file but test_cxx20.cpp, whose two cases run in ctest) in the
#             same build dir, at -O0 with
#             line tables only (-g1): sanitized template-heavy C++ takes ~5x
#             as long to compile at -O2 -g, and the tests wait on the
#             network, not the CPU.
#   node      the Node addon's C code built by bindings/node/build.js with
#             -fsanitize=address,undefined into $ASAN_BUILD_DIR/node (the
#             normal build/ is untouched; index.js loads it through
#             NATSIO_NODE_BUILD_DIR) and the whole `node --test` suite run
#             with libasan preloaded into the uninstrumented node. Leak
#             checking stays on: scripts/lsan-node.supp names the few
#             allocations node itself leaves at exit.
#   go        `go test -asan` over bindings/go: the cgo glue (natsio_go.c)
#             and Go's own memory accesses instrumented, LeakSanitizer at
#             exit (-race, its alternative, runs in scripts/test.sh).
#   valgrind  C tests under valgrind memcheck on the normal build
#             (--leak-check=full, zero definite leaks, zero errors), but
#             VALGRIND_SKIP's (below: as ASAN_SKIP's; the two slowest under
#             memcheck were 2 of its 5 minutes).
#             scripts/valgrind.supp holds the few justified suppressions
#             (today: memcheck cannot follow ring's AES-GCM assembly in the
#             TLS tests); the Rust runtime's one-time allocations stay
#             reachable and need none. The bindings get ASan only: their
#             suites under valgrind would cost many minutes for the same
#             library code paths.
#
# A suite whose program is missing, fails to build or runs zero tests is a
# failure, never a skip; each prints its counts.
#
# Usage: scripts/sanitize.sh            (CI: called from scripts/test.sh)
# Environment:
#   CARGO_TARGET_DIR   honoured, as in scripts/test.sh
#   BUILD_DIR          the normal CMake build dir (default: build)
#   ASAN_BUILD_DIR     the sanitizer build dir (default: build-asan)
#   SANITIZE_SUITES    which of "c cpp node go valgrind" to run (default: all;
#                      node and go only when bindings/node, bindings/go exist)
#   VALGRIND_TESTS     space-separated test names to run under valgrind
#                      (default: every C test but VALGRIND_SKIP's)
#   SANITIZE_JOBS      C test programs run at once, under ASan and under
#                      valgrind (default 2: they mostly wait on servers and
#                      timers; each has its own server, port and temp dir)
#   NATS_SERVER_BIN    nats-server binary (default: scripts/install-nats-server.sh)
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
ROOT="$(pwd)"
# shellcheck source=scripts/lib/background-build.sh
. scripts/lib/background-build.sh
# shellcheck source=scripts/lib/go-cgo-env.sh
. scripts/lib/go-cgo-env.sh
BUILD_DIR="${BUILD_DIR:-build}"
ASAN_BUILD_DIR="${ASAN_BUILD_DIR:-build-asan}"
case "$ASAN_BUILD_DIR" in /*) ;; *) ASAN_BUILD_DIR="$ROOT/$ASAN_BUILD_DIR" ;; esac
TARGET_DIR="${CARGO_TARGET_DIR:-$ROOT/target}"
case "$TARGET_DIR" in /*) ;; *) TARGET_DIR="$ROOT/$TARGET_DIR" ;; esac
LIB_DIR="$TARGET_DIR/release"

default_suites="c cpp"
[ -d bindings/node ] && default_suites+=" node"
[ -d bindings/go ] && default_suites+=" go"
default_suites+=" valgrind"
read -r -a SUITES <<<"${SANITIZE_SUITES:-$default_suites}"
want() { [[ " ${SUITES[*]} " == *" $1 "* ]]; }
for s in "${SUITES[@]}"; do
    case "$s" in c | cpp | node | go | valgrind) ;; *) echo "unknown suite in SANITIZE_SUITES: $s" >&2; exit 2 ;; esac
done

step() { printf '\n==> %s\n' "$*"; }

if want valgrind && ! command -v valgrind >/dev/null; then
    step "installing valgrind"
    SUDO=""
    [ "$(id -u)" -eq 0 ] || SUDO="sudo"
    $SUDO apt-get update
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y --no-install-recommends valgrind
fi

if [ -z "${NATS_SERVER_BIN:-}" ]; then
    NATS_SERVER_BIN="$(scripts/install-nats-server.sh | tail -n 1)"
fi
export NATS_SERVER_BIN

[ -f "$LIB_DIR/libnatsio.so" ] && [ -f "$LIB_DIR/libnatsio.a" ] || cargo build --release

# Every C test program, by target name.
mapfile -t C_TESTS < <(cd tests/c && ls test_*.c | sed 's/\.c$//')

# Programs a sanitizer leaves out: each C ABI function they call is called
# by another program run under the same tool (checked when this list was
# made: no natsio_ call of theirs is theirs alone), so what they add is
# behaviour (cluster elections, load, the server's side of watches), which
# ctest runs unsanitized. The sanitizers check memory at the C ABI; the
# library itself is not instrumented.
#   test_js_cluster  JetStream clusters: elections, step-downs (84 s under
#                    ASan, 91 s under memcheck, the longest program of each)
#   test_stress      load, RSS and CPU figures (under memcheck it would
#                    measure memcheck; its churn of 1,000 subscriptions stays
#                    under ASan for leaks)
#   test_watch       KV watches and consumes; test_iterators, test_kv and
#                    test_async call the same functions
ASAN_SKIP=(test_js_cluster)
VALGRIND_SKIP=(test_js_cluster test_stress test_watch)
# The C tests minus those of a skip list.
c_tests_but() {
    local t out=()
    for t in "${C_TESTS[@]}"; do
        [[ " $* " == *" $t "* ]] || out+=("$t")
    done
    echo "${out[*]}"
}

# Sanitizer settings of the instrumented programs (C, C++, Go): stop at the
# first report, leaks included.
ASAN_OPTS="detect_leaks=1:halt_on_error=1:abort_on_error=0:detect_stack_use_after_return=1"
UBSAN_OPTS="print_stacktrace=1:halt_on_error=1"

failures=()
fail() {
    printf '  %-28s FAIL  %s\n' "$1" "$2"
    failures+=("$1")
    [ -z "${NATSIO_FAILURE_DIGEST:-}" ] || printf 'sanitizers: %s FAIL %s\n' "$1" "$2" >>"$NATSIO_FAILURE_DIGEST"
}

# The lines of a failed run's log that name what failed (and the two lines
# before each, where Go and the C harness print the failed check), for the
# digest scripts/test.sh shows last.
digest_failure() {
    [ -n "${NATSIO_FAILURE_DIGEST:-}" ] || return 0
    grep -E -B2 -m 6 -e '--- FAIL|\[ FAIL \]|\[  FAILED  \]|^not ok|panicked|ERROR: AddressSanitizer|ERROR: LeakSanitizer|runtime error|ERROR SUMMARY: [1-9]' "$1" |
        cut -c 1-200 | head -n 18 | sed 's/^/    | /' >>"$NATSIO_FAILURE_DIGEST" || true
}

# Test counts from a log, as "N passed, M failed"; empty when none are found.
count_c() { grep -E 'passed, [0-9]+ failed' "$1" | tail -n 1; }
count_gtest() {
    local ran passed
    ran="$(sed -nE 's/^\[==========\] ([0-9]+) tests? from .* ran\..*/\1/p' "$1" | tail -n 1)"
    passed="$(sed -nE 's/^\[  PASSED  \] ([0-9]+) tests?\..*/\1/p' "$1" | tail -n 1)"
    [ -n "$ran" ] && echo "${passed:-0} passed, $((ran - ${passed:-0})) failed"
}
count_node() {
    local pass nfail
    pass="$(sed -nE 's/^# pass ([0-9]+)$/\1/p' "$1" | tail -n 1)"
    nfail="$(sed -nE 's/^# fail ([0-9]+)$/\1/p' "$1" | tail -n 1)"
    [ -n "$pass" ] && echo "$pass passed, ${nfail:-0} failed"
}
count_go() {
    local pass nfail sub
    pass="$(grep -cE '^--- PASS' "$1" || true)"
    nfail="$(grep -cE '^--- FAIL' "$1" || true)"
    sub="$(grep -cE '^ +--- PASS' "$1" || true)"
    [ "$((pass + nfail))" -gt 0 ] && echo "$pass passed, $nfail failed (+$sub subtests)"
}

# Runs one test program; its output goes to a log, shown only on failure.
# A run that exits 0 but reports no passed test fails too. With
# NATSIO_SANITIZE_COUNTS set, a passing run appends "<label> <passed>" to
# that file (subtests included), for scripts/test.sh to check against the
# floors of the same programs: a sanitizer run that ran fewer cases (a
# filter left in the environment) fails there.
run_logged() {
    local label="$1" counter="$2" log="$3"
    shift 3
    local start=$SECONDS counts=""
    if "$@" >"$log" 2>&1; then
        counts="$("$counter" "$log" || true)"
        if [[ "$counts" =~ ^([1-9][0-9]*)\ passed ]]; then
            printf '  %-28s ok    %3ds  %s\n' "$label" $((SECONDS - start)) "$counts"
            if [ -n "${NATSIO_SANITIZE_COUNTS:-}" ]; then
                local n="${BASH_REMATCH[1]}"
                [[ "$counts" =~ \(\+([0-9]+)\ subtests\) ]] && n=$((n + BASH_REMATCH[1]))
                printf '%s %s\n' "${label// /:}" "$n" >>"$NATSIO_SANITIZE_COUNTS"
            fi
            return
        fi
        fail "$label" "$(printf '%3ds  ran no tests (%s)' $((SECONDS - start)) "${counts:-no counts}")"
    else
        fail "$label" "$(printf '%3ds  %s' $((SECONDS - start)) "$("$counter" "$log" || true)")"
    fi
    digest_failure "$log"
    sed 's/^/    | /' "$log" | tail -n 60
}

# running_of PID...: how many of these jobs of the shell are still running.
running_of() {
    local running=0 pid
    for pid in $(jobs -rp); do
        case " $* " in *" $pid "*) running=$((running + 1)) ;; esac
    done
    echo "$running"
}

# run_programs LABEL COUNTER LOGDIR PROGRAM... -- COMMAND...: run_logged
# for each program (COMMAND then the program's path), SANITIZE_JOBS at a
# time, reported in the programs' order once all have ended. The label and
# log of each are LABEL <name> and LOGDIR/<name>.log.
run_programs() {
    local label="$1" counter="$2" logdir="$3"
    shift 3
    local programs=() prog name
    while [ $# -gt 0 ] && [ "$1" != "--" ]; do programs+=("$1"); shift; done
    shift
    local jobs="${SANITIZE_JOBS:-2}" pids=() pid
    for prog in "${programs[@]}"; do
        name="$(basename "$prog")"
        rm -f "$logdir/$name.failed"
        (
            failures=()
            run_logged "$label $name" "$counter" "$logdir/$name.log" "$@" "$prog"
            [ ${#failures[@]} -eq 0 ] || touch "$logdir/$name.failed"
        ) >"$logdir/$name.report" 2>&1 &
        pids+=("$!")
        # Only these programs count, and only they are waited for: the
        # shell's other job (the C++ build in the background) may run
        # long after them on a busy machine, at nice 19.
        while [ "$(running_of "${pids[@]}")" -ge "$jobs" ]; do wait -n || true; done
    done
    for pid in "${pids[@]}"; do wait "$pid" || true; done
    for prog in "${programs[@]}"; do
        name="$(basename "$prog")"
        cat "$logdir/$name.report"
        [ ! -e "$logdir/$name.failed" ] || failures+=("$label $name")
    done
}

# --------------------------------------------------------------------------
if want c || want cpp; then
    step "CMake build with AddressSanitizer + UndefinedBehaviorSanitizer ($ASAN_BUILD_DIR)"
    SANITIZE_FLAGS="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer"
    cmake -S . -B "$ASAN_BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
        -DNATSIO_LIB_DIR="$LIB_DIR" \
        -DCMAKE_C_FLAGS="$SANITIZE_FLAGS" -DCMAKE_CXX_FLAGS="$SANITIZE_FLAGS" \
        -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O0 -g1 -DNDEBUG" \
        -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined" >/dev/null
    mkdir -p "$ASAN_BUILD_DIR/logs"
fi

if want c; then
    step "C tests under ASan + UBSan (all but ${ASAN_SKIP[*]})"
    [ ${#C_TESTS[@]} -gt 0 ] || fail "asan C tests" "no tests/c/test_*.c"
    read -r -a ASAN_C_TESTS <<<"$(c_tests_but "${ASAN_SKIP[@]}")"
    cmake --build "$ASAN_BUILD_DIR" --target "${ASAN_C_TESTS[@]}"
    # The C++ program's build (about 2 minutes of CPU) goes on meanwhile,
    # at the lowest priority (scripts/lib/background-build.sh): the C
    # programs mostly wait on their servers. (After the C build: two
    # builds in one ninja dir must not overlap.) Its own process group,
    # so that run_programs' job slots count only the C programs.
    CPP_BUILD_STATUS=""
    if want cpp; then
        CPP_BUILD_STATUS="$ASAN_BUILD_DIR/logs/cpp-build.status"
        background_build_start "$ASAN_BUILD_DIR/logs/cpp-build.log" "$CPP_BUILD_STATUS" \
            cmake --build "$ASAN_BUILD_DIR" --target natsio_cpp_tests
        CPP_BUILD_PGID=$BACKGROUND_PGID
    fi
    run_programs asan count_c "$ASAN_BUILD_DIR/logs" "${ASAN_C_TESTS[@]/#/$ASAN_BUILD_DIR/tests/c/}" -- \
        env ASAN_OPTIONS="$ASAN_OPTS" UBSAN_OPTIONS="$UBSAN_OPTS"
fi

if want cpp; then
    step "C++ GoogleTest suites under ASan + UBSan"
    CPP_TESTS=(natsio_cpp_tests)
    # A target CMake left out (no GoogleTest, no libnatsio) is an error here.
    start=$SECONDS
    # Built in the background during the C tests: wait for its status
    # (then the build below finds nothing to do; a failure there is
    # reported by building again here).
    if [ -n "${CPP_BUILD_STATUS:-}" ]; then
        background_build_finish "$CPP_BUILD_PGID" "$CPP_BUILD_STATUS" ||
            tail -n 40 "$ASAN_BUILD_DIR/logs/cpp-build.log"
    fi
    if cmake --build "$ASAN_BUILD_DIR" --target "${CPP_TESTS[@]}"; then
        echo "  (built in $((SECONDS - start)) s after the C tests)"
        for t in "${CPP_TESTS[@]}"; do
            ASAN_OPTIONS="$ASAN_OPTS" UBSAN_OPTIONS="$UBSAN_OPTS" \
                run_logged "asan $t" count_gtest "$ASAN_BUILD_DIR/logs/$t.log" \
                "$ASAN_BUILD_DIR/bindings/cpp/$t"
        done
    else
        fail "asan C++ tests" "build of ${CPP_TESTS[*]} failed"
    fi
fi

# --------------------------------------------------------------------------
if want node; then
    step "Node addon tests under ASan + UBSan ($ASAN_BUILD_DIR/node)"
    NODE_OUT="$ASAN_BUILD_DIR/node"
    mkdir -p "$ASAN_BUILD_DIR/logs"
    LIBASAN="$("${CC:-cc}" -print-file-name=libasan.so)"
    if ! command -v node >/dev/null || [ ! -f bindings/node/package.json ]; then
        fail "asan node" "node or bindings/node/package.json missing"
    elif [ ! -f "$LIBASAN" ]; then
        fail "asan node" "libasan.so not found (${CC:-cc} -print-file-name=libasan.so)"
    else
        (cd bindings/node && { [ -d node_modules ] || npm ci --no-audit --no-fund; })
        if (cd bindings/node && NATSIO_NODE_BUILD_DIR="$NODE_OUT" \
            NATSIO_NODE_SANITIZE=address,undefined node build.js); then
            # node is not instrumented: libasan must be loaded before it
            # (LD_PRELOAD, inherited by the test files' child processes,
            # workers and spawned fixtures). Leaks are checked, minus node's
            # own (lsan-node.supp).
            pushd bindings/node >/dev/null
            run_logged "asan node --test" count_node "$ASAN_BUILD_DIR/logs/node.log" \
                env NATSIO_NODE_BUILD_DIR="$NODE_OUT" LD_PRELOAD="$LIBASAN" \
                ASAN_OPTIONS="detect_leaks=1:halt_on_error=1:abort_on_error=0" \
                LSAN_OPTIONS="suppressions=$ROOT/scripts/lsan-node.supp:print_suppressions=0" \
                UBSAN_OPTIONS="$UBSAN_OPTS" \
                node --expose-gc --test --test-concurrency=1 test/*.test.js
            popd >/dev/null
        else
            fail "asan node" "sanitized addon build failed"
        fi
    fi
fi

# --------------------------------------------------------------------------
if want go; then
    step "Go binding tests: go test -asan"
    mkdir -p "$ASAN_BUILD_DIR/logs"
    if ! command -v go >/dev/null; then
        fail "asan go" "go not found"
    else
        # The binding's cgo flags come from pkg-config: the uninstalled
        # .pc files (naming $LIB_DIR and include/) of a CMake configure of
        # its own, with nothing to build: cargo's instrumented archive is
        # linked as it is, not reduced (go_cgo_env: scripts/lib/go-cgo-env.sh,
        # run in a subshell so that the settings stay with this stage).
        GO_CMAKE_DIR="$ASAN_BUILD_DIR/go-pkgconfig"
        cmake -S . -B "$GO_CMAKE_DIR" -DNATSIO_LIB_DIR="$LIB_DIR" -DNATSIO_BUILD_TESTS=OFF \
            -DNATSIO_BUILD_EXAMPLES=OFF -DNATSIO_REDUCED_STATIC_LIBRARY=OFF \
            >"$ASAN_BUILD_DIR/logs/go-cmake.log" 2>&1 ||
            cat "$ASAN_BUILD_DIR/logs/go-cmake.log"
        mapfile -t go_env < <(go_cgo_env "$GO_CMAKE_DIR/pkgconfig"
            printf '%s\n' "CGO_ENABLED=$CGO_ENABLED" "PKG_CONFIG_PATH=$PKG_CONFIG_PATH" \
                "CGO_CPPFLAGS=$CGO_CPPFLAGS")
        go_env+=(ASAN_OPTIONS="$ASAN_OPTS")
        pushd bindings/go >/dev/null
        # -v: the per-test lines are the counts. go test strips the test
        # binary's symbols, which ASan's reports need: keep them.
        run_logged "asan go test" count_go "$ASAN_BUILD_DIR/logs/go.log" \
            env "${go_env[@]}" go test -asan -ldflags='-s=false -w=false' \
            -count=1 -v ./...
        popd >/dev/null
    fi
fi

# --------------------------------------------------------------------------
if want valgrind; then
    step "C tests under valgrind memcheck ($BUILD_DIR; all but ${VALGRIND_SKIP[*]})"
    if [ ! -f "$BUILD_DIR/build.ninja" ] && [ ! -f "$BUILD_DIR/Makefile" ]; then
        cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release -DNATSIO_LIB_DIR="$LIB_DIR" >/dev/null
    fi
    read -r -a VG_TESTS <<<"${VALGRIND_TESTS:-$(c_tests_but "${VALGRIND_SKIP[@]}")}"
    cmake --build "$BUILD_DIR" --target "${VG_TESTS[@]}"
    mkdir -p "$BUILD_DIR/valgrind-logs"
    VALGRIND_ARGS=(--leak-check=full --errors-for-leak-kinds=definite --show-leak-kinds=definite
        --error-exitcode=99 --num-callers=40 --track-origins=no)
    [ -f scripts/valgrind.supp ] && VALGRIND_ARGS+=(--suppressions=scripts/valgrind.supp)
    # Cases are slower under valgrind: give each more than the default 60 s.
    run_programs valgrind count_c "$BUILD_DIR/valgrind-logs" "${VG_TESTS[@]/#/$BUILD_DIR/tests/c/}" -- \
        env NT_CASE_TIMEOUT=180 valgrind "${VALGRIND_ARGS[@]}"
fi

if [ ${#failures[@]} -gt 0 ]; then
    echo
    echo "sanitizer failures: ${failures[*]}" >&2
    exit 1
fi
step "sanitizers: all clean (${SUITES[*]})"
