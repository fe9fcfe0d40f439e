#!/usr/bin/env bash
# The C test suite (tests/c/test_*.c) under sanitizers, against the normal
# release libnatsio.so (cargo build --release):
#
#   1. AddressSanitizer + UndefinedBehaviorSanitizer (+ LeakSanitizer): the
#      tests are built with gcc -fsanitize=address,undefined in their own
#      CMake build dir and every one is run. The Rust library is not
#      instrumented, but ASan replaces malloc/free process-wide, so the
#      library's heap is checked for leaks and bad frees along with ours.
#   2. valgrind memcheck on the normal build (--leak-check=full, zero
#      definite leaks, zero errors). scripts/valgrind.supp holds the few
#      justified suppressions (today: memcheck cannot follow ring's AES-GCM
#      assembly in the TLS tests); the Rust runtime's one-time allocations
#      stay reachable and need none.
#
# Usage: scripts/sanitize.sh            (CI: called from scripts/test.sh)
# Environment:
#   CARGO_TARGET_DIR   honoured, as in scripts/test.sh
#   BUILD_DIR          the normal CMake build dir (default: build)
#   ASAN_BUILD_DIR     the sanitizer build dir (default: build-asan)
#   VALGRIND_TESTS     space-separated test names to run under valgrind
#                      (default: every C test; each takes seconds)
#   NATS_SERVER_BIN    nats-server binary (default: scripts/install-nats-server.sh)
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
ROOT="$(pwd)"
BUILD_DIR="${BUILD_DIR:-build}"
ASAN_BUILD_DIR="${ASAN_BUILD_DIR:-build-asan}"
TARGET_DIR="${CARGO_TARGET_DIR:-$ROOT/target}"
case "$TARGET_DIR" in /*) ;; *) TARGET_DIR="$ROOT/$TARGET_DIR" ;; esac
LIB_DIR="$TARGET_DIR/release"

step() { printf '\n==> %s\n' "$*"; }

if ! command -v valgrind >/dev/null; then
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

[ -f "$LIB_DIR/libnatsio.so" ] || cargo build --release

# Every C test program, by target name.
mapfile -t C_TESTS < <(cd tests/c && ls test_*.c | sed 's/\.c$//')

failures=()
# Runs one test program; its output goes to a log, shown only on failure.
run_logged() {
    local label="$1" log="$2"
    shift 2
    local start=$SECONDS
    if "$@" >"$log" 2>&1; then
        printf '  %-28s ok    %3ds  %s\n' "$label" $((SECONDS - start)) "$(grep -E 'passed, [0-9]+ failed' "$log" | tail -n 1)"
    else
        printf '  %-28s FAIL  %3ds\n' "$label" $((SECONDS - start))
        sed 's/^/    | /' "$log" | tail -n 60
        failures+=("$label")
    fi
}

# --------------------------------------------------------------------------
step "C tests under AddressSanitizer + UndefinedBehaviorSanitizer ($ASAN_BUILD_DIR)"
SANITIZE_FLAGS="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer"
cmake -S . -B "$ASAN_BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DNATSIO_LIB_DIR="$LIB_DIR" \
    -DCMAKE_C_FLAGS="$SANITIZE_FLAGS" -DCMAKE_CXX_FLAGS="$SANITIZE_FLAGS" \
    -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined" >/dev/null
cmake --build "$ASAN_BUILD_DIR" --target "${C_TESTS[@]}"
mkdir -p "$ASAN_BUILD_DIR/logs"
for t in "${C_TESTS[@]}"; do
    ASAN_OPTIONS="detect_leaks=1:halt_on_error=1:abort_on_error=0:detect_stack_use_after_return=1" \
        UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1" \
        run_logged "asan $t" "$ASAN_BUILD_DIR/logs/$t.log" "$ASAN_BUILD_DIR/tests/c/$t"
done

# --------------------------------------------------------------------------
step "C tests under valgrind memcheck ($BUILD_DIR)"
if [ ! -f "$BUILD_DIR/build.ninja" ] && [ ! -f "$BUILD_DIR/Makefile" ]; then
    cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release -DNATSIO_LIB_DIR="$LIB_DIR" >/dev/null
fi
read -r -a VG_TESTS <<<"${VALGRIND_TESTS:-${C_TESTS[*]}}"
cmake --build "$BUILD_DIR" --target "${VG_TESTS[@]}"
mkdir -p "$BUILD_DIR/valgrind-logs"
VALGRIND_ARGS=(--leak-check=full --errors-for-leak-kinds=definite --show-leak-kinds=definite
    --error-exitcode=99 --num-callers=40 --track-origins=no)
[ -f scripts/valgrind.supp ] && VALGRIND_ARGS+=(--suppressions=scripts/valgrind.supp)
for t in "${VG_TESTS[@]}"; do
    # Cases are slower under valgrind: give each more than the default 60 s.
    NT_CASE_TIMEOUT=180 run_logged "valgrind $t" "$BUILD_DIR/valgrind-logs/$t.log" \
        valgrind "${VALGRIND_ARGS[@]}" "$BUILD_DIR/tests/c/$t"
done

if [ ${#failures[@]} -gt 0 ]; then
    echo
    echo "sanitizer failures: ${failures[*]}" >&2
    exit 1
fi
step "sanitizers: all clean"
