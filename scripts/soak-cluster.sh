#!/usr/bin/env bash
# Soak of a 3-node JetStream cluster (tests/c/soak_cluster.c): mixed load
# (publishes with msg-ids, a consume with acks, KV puts and a watch) with a
# fault every few seconds (step-downs, a leader kill, a lame duck), RSS and
# thread count sampled each second. Not run by CI: it takes minutes.
#
#   scripts/soak-cluster.sh [seconds]     (default 180)
#
# Uses target/release/libnatsio.so and the build dir `build` (override with
# BUILD_DIR); NATS_SERVER_BIN as the tests do.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${BUILD_DIR:-$root/build}"
cd "$root"
cargo build --release
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DNATSIO_LIB_DIR="$root/target/release" >/dev/null
cmake --build "$build" --target soak_cluster
SOAK_SECONDS="${1:-180}" "$build/tests/c/soak_cluster"
