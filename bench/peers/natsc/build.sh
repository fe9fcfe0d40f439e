#!/usr/bin/env bash
# Builds the nats.c peer harness: bench/peers/natsc/natsc_bench
#
# nats.c comes from the system (pkg-config libnats or /usr/include/nats)
# or, when the system has none, from Debian's packages at a pinned version,
# unpacked under .tools/ without installing anything (apt-get download +
# dpkg-deb -x; the library's own dependencies beside it). A machine where
# neither works fails here, loudly: bench/run.sh then refuses to print a
# table without the C client users would pick instead.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../../.." && pwd)"
CC="${CC:-gcc}"
NATSC_DEB_VERSION="3.4.1-1+b1"
NATSC_PACKAGES=(libnats-dev libnats3.4 libprotobuf-c1)

unpack_natsc() {
    local dir="$1" dl
    dl="$(mktemp -d)"
    trap 'rm -rf "$dl"' RETURN
    (cd "$dl" && apt-get download "libnats-dev=$NATSC_DEB_VERSION" "libnats3.4=$NATSC_DEB_VERSION" \
        "${NATSC_PACKAGES[2]}") >/dev/null 2>&1 ||
        { [ "$(id -u)" = 0 ] && apt-get update -qq >/dev/null 2>&1 &&
            (cd "$dl" && apt-get download "libnats-dev=$NATSC_DEB_VERSION" \
                "libnats3.4=$NATSC_DEB_VERSION" "${NATSC_PACKAGES[2]}") >/dev/null 2>&1; } ||
        return 1
    mkdir -p "$dir"
    for deb in "$dl"/*.deb; do dpkg-deb -x "$deb" "$dir"; done
    [ -f "$dir/usr/include/nats/nats.h" ]
}

if pkg-config --exists libnats 2>/dev/null; then
    cflags="$(pkg-config --cflags libnats)"
    libs="$(pkg-config --libs libnats)"
elif [ -f /usr/include/nats/nats.h ]; then
    cflags=""
    libs="-lnats"
else
    dir="$root/.tools/libnats-$NATSC_DEB_VERSION"
    if [ ! -f "$dir/usr/include/nats/nats.h" ] && ! unpack_natsc "$dir"; then
        echo "build.sh: nats.c not found, and Debian's libnats-dev $NATSC_DEB_VERSION could not be downloaded" >&2
        exit 1
    fi
    libdir="$(dirname "$(find "$dir/usr/lib" -name 'libnats.so*' | head -1)")"
    cflags="-I$dir/usr/include"
    # DT_RPATH (not RUNPATH): libnats finds its libprotobuf-c beside it too.
    libs="-L$libdir -l:$(basename "$(find "$libdir" -name 'libnats.so.*' | head -1)") -Wl,--disable-new-dtags,-rpath,$libdir"
fi
# shellcheck disable=SC2086
# bench/common: the spec's CLI, clock, statistics and output lines, shared
# with the libnatsio harness.
"$CC" -O2 -std=gnu11 -Wall -Wextra $cflags -o "$here/natsc_bench" "$here/natsc_bench.c" \
    "$here/../../common/bench_common.c" $libs -lpthread -lm
echo "$here/natsc_bench"
