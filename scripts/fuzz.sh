#!/usr/bin/env bash
# Bounded libFuzzer runs of the fuzz targets in fuzz/ (cargo-fuzz):
#
#   parser      arbitrary server bytes cut into arbitrary reads: no panic,
#               bounded memory, same frames whatever the read boundaries
#   round_trip  well-formed MSG/HMSG frames (arbitrary subject, reply, sid,
#               headers, payload) parse back to what was encoded
#   headers     arbitrary header blocks: no panic, encode(parse(x)) re-parses
#               to the same entries
#   info_and_urls  INFO JSON and server URLs: no panic
#   js_config   JetStream JSON configs (stream, KV, purge), Go durations,
#               RFC 3339 timestamps, publish-ack replies: no panic, a
#               normalised config normalises to itself
#   ws_frames   bytes from a WebSocket server: no panic, no more payload
#               than came in, the same frames however the reads are cut
#
# Without target names, every [[bin]] of fuzz/Cargo.toml is fuzzed. A target
# that executes no input fails the run. With NATSIO_FUZZ_COUNTS set, the
# number of targets that ran clean (executions, no crash) is written there,
# for scripts/test.sh to check against its floor ("fuzz").
#
# Usage: scripts/fuzz.sh [seconds per target, default 60] [target...]
#        scripts/fuzz.sh --build-only   (install cargo-fuzz, build, stop:
#                                        scripts/test.sh runs it early, in
#                                        the background)
#
# Each run starts from the committed seeds in fuzz/corpus/<target>/ (never
# modified: new inputs go to a scratch corpus) and replays them first, so
# inputs that once crashed (fuzz/corpus/parser/regression_*) are checked on
# every run. A crash fails the script; libFuzzer's input is saved under
# fuzz/artifacts/<target>/ and printed in base64: add it to the corpus and
# as a test in tests/fuzz_regressions.rs.
#
# cargo-fuzz needs nightly-only rustc flags (-Zsanitizer=address); the stable
# toolchain accepts them with RUSTC_BOOTSTRAP=1, so no nightly is needed.
# cargo-fuzz itself is installed from crates.io when missing.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
BUILD_ONLY=0
if [ "${1:-}" = "--build-only" ]; then
    BUILD_ONLY=1
    shift
fi
SECONDS_PER_TARGET="${1:-60}"
shift || true
TARGETS=("$@")
# Every target fuzz/Cargo.toml declares ([[bin]] name = "..."): a new one is
# fuzzed without editing this script.
if [ ${#TARGETS[@]} -eq 0 ]; then
    mapfile -t TARGETS < <(awk '
        /^\[\[bin\]\]/ { in_bin = 1; next }
        /^\[/ { in_bin = 0 }
        in_bin && /^name *= *"/ { sub(/^name *= *"/, ""); sub(/".*/, ""); print }
    ' fuzz/Cargo.toml)
    [ ${#TARGETS[@]} -gt 0 ] || { echo "no [[bin]] targets in fuzz/Cargo.toml" >&2; exit 1; }
fi

step() { printf '\n==> %s\n' "$*"; }
started=$SECONDS

if ! cargo fuzz --version >/dev/null 2>&1; then
    step "installing cargo-fuzz"
    cargo install --locked cargo-fuzz
fi
export RUSTC_BOOTSTRAP=1

step "building fuzz targets (ASan, debug assertions)"
(cd fuzz && cargo fuzz build)
HOST_TRIPLE="$(rustc -vV | sed -n 's/^host: //p')"
FUZZ_TARGET_DIR="${CARGO_TARGET_DIR:-$PWD/fuzz/target}"
case "$FUZZ_TARGET_DIR" in /*) ;; *) FUZZ_TARGET_DIR="$PWD/fuzz/$FUZZ_TARGET_DIR" ;; esac
BIN_DIR="$FUZZ_TARGET_DIR/$HOST_TRIPLE/release"
echo "built in $((SECONDS - started)) s"
[ "$BUILD_ONLY" = 0 ] || exit 0

scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
summary=()
status=0
fuzzed=0
for target in "${TARGETS[@]}"; do
    step "fuzzing $target for ${SECONDS_PER_TARGET} s"
    mkdir -p "$scratch/$target"
    log="$scratch/$target.log"
    mkdir -p "fuzz/artifacts/$target"
    # The binary built above, run directly (`cargo fuzz run` would re-check
    # the build each time). -rss_limit_mb: fail on runaway memory;
    # -print_final_stats: executions.
    if ASAN_OPTIONS="detect_odr_violation=0" "$BIN_DIR/$target" \
        -artifact_prefix="fuzz/artifacts/$target/" -max_total_time="$SECONDS_PER_TARGET" \
        -rss_limit_mb=2048 -print_final_stats=1 -close_fd_mask=1 \
        "$scratch/$target" "fuzz/corpus/$target" >"$log" 2>&1; then
        result="ok"
    else
        result="CRASH"
        status=1
        grep -vE '^#[0-9]+' "$log" | tail -n 40
        echo "reproduce: (cd fuzz && RUSTC_BOOTSTRAP=1 cargo fuzz run $target artifacts/$target/<file>)"
    fi
    execs="$(grep -oE 'stat::number_of_executed_units: *[0-9]+' "$log" | grep -oE '[0-9]+$' | tail -n 1)"
    # A run that executed nothing (a target that exits at once, a corpus
    # it cannot read) fuzzed nothing: a failure, not a pass.
    if [ "$result" = ok ] && [ "${execs:-0}" -eq 0 ]; then
        result="NO RUNS"
        status=1
        tail -n 20 "$log"
    fi
    [ "$result" != ok ] || fuzzed=$((fuzzed + 1))
    corpus_size="$(find "$scratch/$target" -type f | wc -l)"
    summary+=("$(printf '%-11s %-5s %10s executions, %5s new corpus inputs' "$target" "$result" "${execs:-?}" "$corpus_size")")
done

step "fuzz summary (${SECONDS_PER_TARGET} s per target, $((SECONDS - started)) s in all)"
printf '  %s\n' "${summary[@]}"
[ -z "${NATSIO_FUZZ_COUNTS:-}" ] || echo "$fuzzed" >"$NATSIO_FUZZ_COUNTS"
exit $status
