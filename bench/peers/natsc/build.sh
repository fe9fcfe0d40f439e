#!/usr/bin/env bash
# Builds the nats.c peer harness: bench/peers/natsc/natsc_bench
# Needs nats.c headers and library (Debian: apt-get install libnats-dev).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
CC="${CC:-gcc}"
if [ ! -f /usr/include/nats/nats.h ] && ! pkg-config --exists libnats 2>/dev/null; then
    echo "build.sh: nats.c not found (install libnats-dev)" >&2
    exit 1
fi
cflags="$(pkg-config --cflags libnats 2>/dev/null || true)"
libs="$(pkg-config --libs libnats 2>/dev/null || echo -lnats)"
# shellcheck disable=SC2086
# bench/common: the spec's CLI, clock, statistics and output lines, shared
# with the libnatsio harness.
"$CC" -O2 -std=gnu11 -Wall -Wextra $cflags -o "$here/natsc_bench" "$here/natsc_bench.c" \
    "$here/../../common/bench_common.c" $libs -lpthread -lm
echo "$here/natsc_bench"
