#!/usr/bin/env bash
# libnatsio as its users get it: installed into a prefix, then used from a
# project outside this tree. Run by scripts/test.sh after the C/C++ stage
# (it installs from that stage's CMake build dir); by hand:
#
#   scripts/test-install.sh [BUILD_DIR]      (default: build)
#
# 1. `cmake --install` into a temporary prefix; the layout is checked: the
#    versioned .so with its SONAME and symlinks, the .a, the headers, the
#    CMake package, the .pc files, no debug info.
# 2. tests/install built as a user would, each program then run against a
#    nats-server (publish, request, Key-Value put/get):
#      find_package(natsio)   consumer (shared), consumer_static, consumer_cpp
#      pkg-config             natsio (shared) and natsio-static
#      add_subdirectory       of the repository (cargo rebuilds nothing: it
#                             shares the tree's target dir)
#    and the README's C tour ("The C API in five minutes"), a whole program,
#    built with pkg-config and run.
#    Shared programs run with nothing but <prefix>/lib on the loader path,
#    and must name libnatsio.so.<major> (the SONAME), never a build path.
#
# Prints "install checks passed: N" last (scripts/test.sh counts N).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
ROOT="$(pwd)"
BUILD_DIR="${1:-${BUILD_DIR:-build}}"
TARGET_DIR="${CARGO_TARGET_DIR:-$ROOT/target}"
case "$TARGET_DIR" in /*) ;; *) TARGET_DIR="$ROOT/$TARGET_DIR" ;; esac
NATS_SERVER_BIN="${NATS_SERVER_BIN:-$(scripts/install-nats-server.sh | tail -n 1)}"

# shellcheck source=scripts/lib/install-check.sh
. scripts/lib/install-check.sh
install_check_begin install
PREFIX="$WORK/prefix"

VERSION="$(sed -nE 's/^version = "([0-9]+\.[0-9]+\.[0-9]+)"$/\1/p' Cargo.toml | head -n 1)"
MAJOR="${VERSION%%.*}"

echo "--- cmake --install $BUILD_DIR --prefix $PREFIX"
cmake --install "$BUILD_DIR" --prefix "$PREFIX" >"$WORK/install.log" || { cat "$WORK/install.log"; die "install"; }
LIBDIR="$PREFIX/lib"
[ -d "$LIBDIR" ] || LIBDIR="$(dirname "$(find "$PREFIX" -name "libnatsio.so.$VERSION" | head -n 1)")"

so="$LIBDIR/libnatsio.so.$VERSION"
[ -f "$so" ] && [ ! -L "$so" ] || die "no libnatsio.so.$VERSION file"
[ "$(readlink "$LIBDIR/libnatsio.so.$MAJOR")" = "libnatsio.so.$VERSION" ] || die "libnatsio.so.$MAJOR is not a link to libnatsio.so.$VERSION"
[ "$(readlink "$LIBDIR/libnatsio.so")" = "libnatsio.so.$MAJOR" ] || die "libnatsio.so is not a link to libnatsio.so.$MAJOR"
soname="$(readelf -d "$so" | sed -nE 's/.*\(SONAME\).*\[(.*)\]/\1/p')"
[ "$soname" = "libnatsio.so.$MAJOR" ] || die "SONAME is '$soname', not libnatsio.so.$MAJOR"
ok "libnatsio.so.$VERSION, SONAME $soname, links .so.$MAJOR and .so"
for f in "$so" "$LIBDIR/libnatsio.a"; do
    if readelf -S -W "$f" 2>/dev/null | grep -q '\.debug_info'; then die "$(basename "$f") carries debug info"; fi
done
ok "no debug info in the .so ($(du -h "$so" | cut -f1)) or the .a ($(du -h "$LIBDIR/libnatsio.a" | cut -f1))"
for f in include/natsio.h include/natsio/natsio.hpp include/natsio/jetstream.hpp include/natsio/object.hpp \
    include/natsio/errors.hpp; do
    [ -f "$PREFIX/$f" ] || die "$f not installed"
done
for f in cmake/natsio/natsioConfig.cmake cmake/natsio/natsioConfigVersion.cmake pkgconfig/natsio.pc \
    pkgconfig/natsio-static.pc; do
    [ -f "$LIBDIR/$f" ] || die "lib/$f not installed"
done
grep -q "#define NATSIO_VERSION_STRING \"$VERSION\"" "$PREFIX/include/natsio.h" || die "natsio.h does not say version $VERSION"
ok "headers, CMake package and .pc files"

start_nats_server

# run PROGRAM NAME: runs it with only the prefix on the loader path.
run() {
    local out
    out="$(env -u LD_LIBRARY_PATH LD_LIBRARY_PATH="$LIBDIR" "$1" "$URL" "$2" 2>&1)" || die "$2: $out"
    [[ "$out" == "ok $2 "* ]] || die "$2 printed: $out"
}
# needs_soname PROGRAM: DT_NEEDED names the SONAME, and no build path of
# this tree is on its search path.
needs_soname() {
    local dyn
    dyn="$(readelf -d "$1")"
    grep -q "NEEDED.*\[libnatsio.so.$MAJOR\]" <<<"$dyn" || die "$(basename "$1") does not need libnatsio.so.$MAJOR: $dyn"
    if grep -E 'R(UN)?PATH' <<<"$dyn" | grep -qF "$ROOT"; then die "$(basename "$1") searches the build tree: $dyn"; fi
}

echo "--- find_package(natsio)"
cmake -S tests/install -B "$WORK/find" -DCMAKE_PREFIX_PATH="$PREFIX" -DCMAKE_BUILD_TYPE=Release >"$WORK/find.log" 2>&1 &&
    cmake --build "$WORK/find" >>"$WORK/find.log" 2>&1 || { cat "$WORK/find.log"; die "find_package build"; }
needs_soname "$WORK/find/consumer"
run "$WORK/find/consumer" find_shared
ok "C, natsio::natsio: publish, request, KV"
no_libnatsio "$WORK/find/consumer_static"
run "$WORK/find/consumer_static" find_static
ok "C, natsio::natsio_static: publish, request, KV"
needs_soname "$WORK/find/consumer_cpp"
run "$WORK/find/consumer_cpp" find_cpp
ok "C++, natsio::cpp: publish, request, KV"

echo "--- pkg-config"
export PKG_CONFIG_PATH="$LIBDIR/pkgconfig"
[ "$(pkg-config --modversion natsio)" = "$VERSION" ] || die "pkg-config --modversion natsio"
# shellcheck disable=SC2046
cc -std=c11 -Wall -Werror -o "$WORK/pc_shared" tests/install/consumer.c $(pkg-config --cflags --libs natsio)
needs_soname "$WORK/pc_shared"
run "$WORK/pc_shared" pc_shared
ok "C, pkg-config natsio: publish, request, KV"
# shellcheck disable=SC2046
cc -std=c11 -Wall -Werror -o "$WORK/pc_static" tests/install/consumer.c $(pkg-config --cflags --libs natsio-static)
no_libnatsio "$WORK/pc_static"
run "$WORK/pc_static" pc_static
ok "C, pkg-config natsio-static: publish, request, KV"

# The README's C tour is a whole program: copied as a reader would, built
# against the install, run against our server.
awk '/^## The C API in five minutes/ { tour = 1 }
     tour && /^```c$/ { code = 1; next }
     code && /^```$/ { exit }
     code { print }' README.md | sed "s|nats://127.0.0.1:4222|$URL|" >"$WORK/tour.c"
[ -s "$WORK/tour.c" ] || die "README.md has no C tour under \"The C API in five minutes\""
# shellcheck disable=SC2046
cc -std=c11 -Wall -Werror -o "$WORK/tour" "$WORK/tour.c" $(pkg-config --cflags --libs natsio) ||
    die "the README's C tour does not build"
tour_out="$(env -u LD_LIBRARY_PATH LD_LIBRARY_PATH="$LIBDIR" timeout 30 "$WORK/tour" 2>&1)" ||
    die "the README's C tour failed: $tour_out"
ok "README's C tour: built with pkg-config natsio, ran ($(wc -l <<<"$tour_out") lines of output)"

echo "--- add_subdirectory(libnatsio)"
cmake -S tests/install -B "$WORK/sub" -DNATSIO_SOURCE="$ROOT" -DNATSIO_CARGO_TARGET_DIR="$TARGET_DIR" \
    -DCMAKE_BUILD_TYPE=Release >"$WORK/sub.log" 2>&1 &&
    cmake --build "$WORK/sub" >>"$WORK/sub.log" 2>&1 || { cat "$WORK/sub.log"; die "add_subdirectory build"; }
grep -q "cargo build --release" "$WORK/sub.log" || die "the subproject build did not run cargo"
run "$WORK/sub/consumer" sub_shared
run "$WORK/sub/consumer_static" sub_static
run "$WORK/sub/consumer_cpp" sub_cpp
ok "add_subdirectory: cargo through CMake, no tests built; shared, static and C++ programs"

echo "install checks passed: $passed"
