#!/usr/bin/env bash
# libnatsio as its users get it: installed into a prefix by the README's own
# commands, then used from a project outside this tree as the READMEs show.
# Run by scripts/test.sh after the C/C++ stage; by hand:
#
#   scripts/test-install.sh
#
# 1. The README's install block (README.md, marked `by scripts/test-install.sh
#    install`; bindings/go/README.md repeats it and must say the same) run
#    as written, but into a temporary build dir and prefix and without sudo.
#    The layout is checked: the versioned .so with its SONAME and symlinks,
#    the .a, the headers, the CMake package, the .pc files, no debug info.
# 2. Programs built as a user would, each run against a nats-server
#    (publish, request, Key-Value put/get; tests/install/consumer.c/.cpp):
#      find_package(natsio)   the README's find_package and
#                             target_link_libraries lines (and the C++
#                             README's), one program per line: shared,
#                             static, C++
#      pkg-config             natsio (shared) and natsio-static
#      the README's pkg-config lines, building its C tour (a whole program)
#      add_subdirectory       of the repository (cargo rebuilds nothing: it
#                             shares the tree's target dir)
#    Shared programs run with nothing but <prefix>/lib on the loader path,
#    and must name libnatsio.so.<major> (the SONAME), never a build path.
#
# Prints "install checks passed: N" last (scripts/test.sh counts N).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
ROOT="$(pwd)"
TARGET_DIR="${CARGO_TARGET_DIR:-$ROOT/target}"
case "$TARGET_DIR" in /*) ;; *) TARGET_DIR="$ROOT/$TARGET_DIR" ;; esac
NATS_SERVER_BIN="${NATS_SERVER_BIN:-$(scripts/install-nats-server.sh | tail -n 1)}"

# shellcheck source=scripts/lib/install-check.sh
. scripts/lib/install-check.sh
install_check_begin install
PREFIX="$WORK/prefix"

VERSION="$(sed -nE 's/^version = "([0-9]+\.[0-9]+\.[0-9]+)"$/\1/p' Cargo.toml | head -n 1)"
MAJOR="${VERSION%%.*}"

# readme_block FILE ID: a README block marked `by scripts/test-install.sh ID`;
# readme_commands FILE ID: the same without comments and blank lines.
readme_block() { python3 scripts/readme_blocks.py extract "$1" "$2"; }
readme_commands() { python3 scripts/readme_blocks.py commands "$1" "$2"; }

# The README's install commands (README.md, block "install"), as written but
# for a temporary build dir and prefix instead of build-install and
# /usr/local, and without sudo. cargo runs as part of the build (the tree's
# target dir: up to date after scripts/test.sh's cargo stage).
echo "--- the README's install commands, into $PREFIX"
readme_block README.md install >"$WORK/install.readme"
diff <(readme_commands README.md install) <(readme_commands bindings/go/README.md install) >/dev/null ||
    die "bindings/go/README.md's install commands differ from README.md's"
grep -q -- "--prefix /usr/local" "$WORK/install.readme" || die "README.md's install block no longer installs into /usr/local"
sed -e "s#build-install#$WORK/build-install#g" -e 's#sudo ##' -e "s#--prefix /usr/local#--prefix $PREFIX#" \
    "$WORK/install.readme" >"$WORK/install.sh"
bash -euo pipefail "$WORK/install.sh" >"$WORK/install.log" 2>&1 || { cat "$WORK/install.log"; die "the README's install commands"; }
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
# The installed archive is the reduced one (cmake/natsio_static_archive.cmake):
# one object, so a link without --gc-sections (cgo's) takes no unused code.
members="$(ar t "$LIBDIR/libnatsio.a" | wc -l)"
[ "$members" = 1 ] || die "libnatsio.a holds $members objects, not the one reduced object"
ok "no debug info in the .so ($(du -h "$so" | cut -f1)) or the .a ($(du -h "$LIBDIR/libnatsio.a" | cut -f1), one object)"
for f in include/natsio.h include/natsio_sys.h include/natsio/natsio.hpp include/natsio/jetstream.hpp include/natsio/object.hpp \
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

# The README's find_package lines (README.md "find-package"; the C++
# README's "cpp-find-package" line too): one project, each
# target_link_libraries line given its own program (app -> app_1, app_2, ...).
echo "--- find_package(natsio), the README's lines"
mkdir -p "$WORK/find-src"
cp tests/install/consumer.c tests/install/consumer.cpp "$WORK/find-src/"
readme_commands README.md find-package >"$WORK/find.readme"
readme_commands bindings/cpp/README.md cpp-find-package >"$WORK/find-cpp.readme"
grep -qxF "$(grep '^find_package' "$WORK/find-cpp.readme")" "$WORK/find.readme" ||
    die "bindings/cpp/README.md's find_package line differs from README.md's"
{
    echo "cmake_minimum_required(VERSION 3.20)"
    echo "project(readme_find_package C CXX)"
    grep '^find_package' "$WORK/find.readme"
    n=0
    while read -r line; do
        n=$((n + 1))
        case "$line" in *natsio::cpp*) src=consumer.cpp ;; *) src=consumer.c ;; esac
        echo "add_executable(app_$n $src)"
        echo "${line/(app /(app_$n }"
    done < <(grep '^target_link_libraries(app ' "$WORK/find.readme")
    echo "add_executable(my_app consumer.cpp)"
    grep '^target_link_libraries(my_app ' "$WORK/find-cpp.readme"
} >"$WORK/find-src/CMakeLists.txt"
grep -q 'natsio::natsio)' "$WORK/find-src/CMakeLists.txt" && grep -q 'natsio::natsio_static)' "$WORK/find-src/CMakeLists.txt" &&
    grep -q 'app_3 PRIVATE natsio::cpp)' "$WORK/find-src/CMakeLists.txt" && grep -q 'my_app PRIVATE natsio::cpp)' "$WORK/find-src/CMakeLists.txt" ||
    die "the README's find_package lines changed: $(cat "$WORK/find-src/CMakeLists.txt")"
cmake -S "$WORK/find-src" -B "$WORK/find" -DCMAKE_PREFIX_PATH="$PREFIX" -DCMAKE_BUILD_TYPE=Release >"$WORK/find.log" 2>&1 &&
    cmake --build "$WORK/find" >>"$WORK/find.log" 2>&1 || { cat "$WORK/find.log"; die "find_package build"; }
needs_soname "$WORK/find/app_1"
run "$WORK/find/app_1" find_shared
ok "C, natsio::natsio: publish, request, KV"
no_libnatsio "$WORK/find/app_2"
run "$WORK/find/app_2" find_static
ok "C, natsio::natsio_static: publish, request, KV"
needs_soname "$WORK/find/app_3"
run "$WORK/find/app_3" find_cpp
run "$WORK/find/my_app" find_cpp_readme
ok "C++, natsio::cpp (both READMEs' lines): publish, request, KV"

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

# The README's pkg-config lines (block "pkg-config"), with app.c the
# README's C tour (block "c-tour", a whole program): each line built as
# written in its own directory and the program run (a.out).
echo "--- the README's pkg-config lines, building its C tour"
readme_commands README.md pkg-config >"$WORK/pc.readme"
readme_block README.md c-tour | sed "s|nats://127.0.0.1:4222|$URL|" >"$WORK/tour.c"
[ "$(grep -c '^cc app.c ' "$WORK/pc.readme")" = 2 ] || die "README's pkg-config block changed: $(cat "$WORK/pc.readme")"
n=0
while read -r line; do
    n=$((n + 1))
    mkdir -p "$WORK/pc$n"
    cp "$WORK/tour.c" "$WORK/pc$n/app.c"
    (cd "$WORK/pc$n" && bash -euo pipefail -c "$line") >"$WORK/pc$n.log" 2>&1 ||
        { cat "$WORK/pc$n.log"; die "$line"; }
    case "$line" in *natsio-static*) no_libnatsio "$WORK/pc$n/a.out" ;; *) needs_soname "$WORK/pc$n/a.out" ;; esac
    tour_out="$(env -u LD_LIBRARY_PATH LD_LIBRARY_PATH="$LIBDIR" timeout 30 "$WORK/pc$n/a.out" 2>&1)" ||
        die "the README's C tour ($line) failed: $tour_out"
    ok "README: $line: the C tour built and ran ($(wc -l <<<"$tour_out") lines of output)"
done <"$WORK/pc.readme"

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
