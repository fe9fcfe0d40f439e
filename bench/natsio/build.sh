#!/usr/bin/env bash
# Builds the libnatsio benchmark harness: build/bench-natsio/natsio_bench,
# and the Rust-core publish loop used for the FFI-overhead figure:
# bench/natsio/rust-core-pub/target/release/natsio-rust-core-pub.
# Prints the harness path on its last line.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
(cd "$root" && cargo build --release --quiet)
gen=()
if [ ! -f "$root/build/bench-natsio/CMakeCache.txt" ] && command -v ninja >/dev/null; then
    gen=(-G Ninja)
fi
cmake -S "$here" -B "$root/build/bench-natsio" "${gen[@]}" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$root/build/bench-natsio" >/dev/null
if [ "${NATSIO_BENCH_SKIP_RUST_CORE:-0}" != 1 ]; then
    cargo build --release --quiet --manifest-path "$here/rust-core-pub/Cargo.toml"
fi
echo "$root/build/bench-natsio/natsio_bench"
