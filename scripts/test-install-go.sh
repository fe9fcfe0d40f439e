#!/usr/bin/env bash
# The Go binding as its users get it: libnatsio installed into a prefix,
# github.com/libnatsio/natsio/bindings/go fetched as a released module by a
# Go module outside this tree. Run by scripts/test.sh in its Go stage; by
# hand:
#
#   scripts/test-install-go.sh [PREFIX]
#
# PREFIX is an install prefix made by `cmake --install`; without it,
# ${BUILD_DIR:-build} (a configured CMake build dir) is installed into a
# temporary one.
#
# 1. A file-based module proxy (GOPROXY=file://...) serving bindings/go as
#    v<Cargo.toml's version> (list, .info, .mod, .zip; nested modules such
#    as interop/ left out, as a release zip does). Nothing else is reached:
#    no other proxy, no VCS, no checksum database (GOPRIVATE).
# 2. A module in a temporary directory requires it (`go get ...@v0.1.0`).
#    The build errors a user meets: no natsio-static.pc on the pkg-config
#    path, and CGO_ENABLED=0. Then a small program (connect,
#    publish+subscribe, request with its own responder, Key-Value put/get)
#    is built and run against a nats-server:
#      static   the default: pkg-config natsio-static, PKG_CONFIG_PATH
#               alone; no libnatsio.so needed, run with no LD_LIBRARY_PATH
#      shared   -tags natsio_shared: DT_NEEDED libnatsio.so.<major>, run
#               with LD_LIBRARY_PATH=<prefix>/lib only
#      vendor   `go mod vendor`, then `go build -mod=vendor`
#
# Prints "go install checks passed: N" last (scripts/test.sh counts N).
set -euo pipefail
ARG_PREFIX=""
if [ $# -ge 1 ]; then
    ARG_PREFIX="$(cd "$1" && pwd)" || { echo "no such prefix: $1" >&2; exit 1; }
fi
cd "$(dirname "${BASH_SOURCE[0]}")/.."
ROOT="$(pwd)"
BUILD_DIR="${BUILD_DIR:-build}"
NATS_SERVER_BIN="${NATS_SERVER_BIN:-$(scripts/install-nats-server.sh | tail -n 1)}"
MODULE="github.com/libnatsio/natsio/bindings/go"

# shellcheck source=scripts/lib/install-check.sh
. scripts/lib/install-check.sh
install_check_begin install-go

case "$WORK" in "$ROOT"/*) die "temporary directory $WORK is inside the repository (TMPDIR)" ;; esac
command -v go >/dev/null || die "go not found"
command -v pkg-config >/dev/null || die "pkg-config not found"

VERSION="$(sed -nE 's/^version = "([0-9]+\.[0-9]+\.[0-9]+)"$/\1/p' Cargo.toml | head -n 1)"
MAJOR="${VERSION%%.*}"
GOVERSION="v$VERSION"

if [ -n "$ARG_PREFIX" ]; then
    PREFIX="$ARG_PREFIX"
else
    PREFIX="$WORK/prefix"
    echo "--- cmake --install $BUILD_DIR --prefix $PREFIX"
    cmake --install "$BUILD_DIR" --prefix "$PREFIX" >"$WORK/install.log" || { cat "$WORK/install.log"; die "install"; }
fi
LIBDIR="$PREFIX/lib"
[ -f "$LIBDIR/pkgconfig/natsio-static.pc" ] ||
    LIBDIR="$(dirname "$(dirname "$(find "$PREFIX" -name natsio-static.pc | head -n 1)")")"
[ -f "$LIBDIR/pkgconfig/natsio-static.pc" ] && [ -f "$LIBDIR/pkgconfig/natsio.pc" ] ||
    die "no natsio-static.pc / natsio.pc under $PREFIX"

# --------------------------------------------------------------------------
echo "--- module proxy: $MODULE@$GOVERSION"
PROXY="$WORK/proxy"
python3 - "$ROOT/bindings/go" "$PROXY" "$MODULE" "$GOVERSION" <<'EOF'
import json, os, re, sys, zipfile
src, proxy, module, version = sys.argv[1:]
# Module path escaping of the proxy protocol: an upper-case letter is !lower.
esc = re.sub(r"[A-Z]", lambda m: "!" + m.group(0).lower(), module)
vdir = os.path.join(proxy, esc, "@v")
os.makedirs(vdir)
with open(os.path.join(vdir, "list"), "w") as f:
    f.write(version + "\n")
with open(os.path.join(vdir, version + ".info"), "w") as f:
    json.dump({"Version": version, "Time": "2025-01-01T00:00:00Z"}, f)
with open(os.path.join(src, "go.mod"), "rb") as f:
    gomod = f.read()
with open(os.path.join(vdir, version + ".mod"), "wb") as f:
    f.write(gomod)
# What a release zip holds: the module's files, without nested modules
# (a directory with its own go.mod), vendor/ and VCS directories.
names = []
for dirpath, dirnames, filenames in os.walk(src):
    rel = os.path.relpath(dirpath, src)
    keep = []
    for d in sorted(dirnames):
        if d in (".git", ".hg", ".svn", ".bzr", "vendor"):
            continue
        if os.path.exists(os.path.join(dirpath, d, "go.mod")):
            continue
        keep.append(d)
    dirnames[:] = keep
    for name in sorted(filenames):
        path = os.path.join(dirpath, name)
        if os.path.isfile(path) and not os.path.islink(path):
            names.append(os.path.normpath(os.path.join(rel, name)))
with zipfile.ZipFile(os.path.join(vdir, version + ".zip"), "w", zipfile.ZIP_DEFLATED) as z:
    for name in names:
        z.write(os.path.join(src, name), module + "@" + version + "/" + name)
print(len(names), "files in", version + ".zip")
EOF
zip="$(find "$PROXY" -name "$GOVERSION.zip")"
python3 -c 'import sys, zipfile; n = zipfile.ZipFile(sys.argv[1]).namelist(); p = sys.argv[2] + "@" + sys.argv[3] + "/"
assert all(x.startswith(p) for x in n), "entry outside " + p
for f in ("go.mod", "natsio.go", "natsio_go.c", "natsio_go.h", "link_static.go", "link_shared.go", "nocgo.go"):
    assert p + f in n, f + " missing"
assert not any("/interop/" in x for x in n), "nested module interop/ in the zip"' "$zip" "$MODULE" "$GOVERSION" ||
    die "module zip $zip"
ok "file proxy serves $MODULE@$GOVERSION (list, .info, .mod, .zip without interop/)"

# Every go command runs with this environment only: the file proxy, its
# own module cache, no checksum database, the local toolchain, and none of
# the caller's cgo or loader settings.
GO_ENV=(
    GOPROXY="file://$PROXY" GOPRIVATE=github.com/libnatsio GONOPROXY=none GONOSUMDB=github.com/libnatsio
    GOSUMDB=off GOFLAGS= GOWORK=off GOTOOLCHAIN=local GOMODCACHE="$WORK/gomodcache"
    GOPATH="$WORK/gopath" CGO_ENABLED=1
)
gox() {
    env -u CGO_CFLAGS -u CGO_CPPFLAGS -u CGO_LDFLAGS -u LIBRARY_PATH -u CPATH -u C_INCLUDE_PATH \
        -u LD_LIBRARY_PATH -u PKG_CONFIG_PATH -u PKG_CONFIG_LIBDIR "${GO_ENV[@]}" "$@"
}

APP="$WORK/app"
mkdir -p "$APP"
cat >"$APP/main.go" <<'EOF'
// A user's program: connect, publish+subscribe, request with its own
// responder, Key-Value put/get. Prints "ok <name> <version>".
package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"time"

	natsio "github.com/libnatsio/natsio/bindings/go"
)

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: app URL NAME")
		os.Exit(2)
	}
	if err := run(os.Args[1], os.Args[2]); err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", os.Args[2], err)
		os.Exit(1)
	}
	fmt.Printf("ok %s %s\n", os.Args[2], natsio.Version())
}

func run(url, name string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	nc, err := natsio.Connect(url, natsio.Name("install-go-"+name))
	if err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	defer nc.Close()

	sub, err := nc.SubscribeSync("install." + name)
	if err != nil {
		return fmt.Errorf("subscribe: %w", err)
	}
	if err := nc.Publish("install."+name, []byte("hello")); err != nil {
		return fmt.Errorf("publish: %w", err)
	}
	m, err := sub.NextMsg(ctx)
	if err != nil || string(m.Data) != "hello" {
		return fmt.Errorf("next message: %v", err)
	}

	if _, err := nc.Subscribe("svc."+name, func(m *natsio.Msg) {
		m.Respond(append([]byte("re: "), m.Data...))
	}); err != nil {
		return fmt.Errorf("responder: %w", err)
	}
	if err := nc.Flush(ctx); err != nil {
		return fmt.Errorf("flush: %w", err)
	}
	reply, err := nc.Request(ctx, "svc."+name, []byte("ping"))
	if err != nil || string(reply.Data) != "re: ping" {
		return fmt.Errorf("request: %v", err)
	}

	js, err := nc.JetStream()
	if err != nil {
		return fmt.Errorf("jetstream: %w", err)
	}
	defer js.Close()
	kv, err := js.CreateKeyValue(ctx, natsio.KeyValueConfig{Bucket: "install_go_" + name})
	if err != nil {
		return fmt.Errorf("create bucket: %w", err)
	}
	if _, err := kv.Put(ctx, "key", []byte(name)); err != nil {
		return fmt.Errorf("kv put: %w", err)
	}
	e, err := kv.Get(ctx, "key")
	if err != nil || !bytes.Equal(e.Value, []byte(name)) {
		return fmt.Errorf("kv get: %v", err)
	}
	return nil
}
EOF

echo "--- go get $MODULE@$GOVERSION, go mod tidy (in $APP)"
(
    cd "$APP"
    gox go mod init example.com/natsio-install-go >"$WORK/get.log" 2>&1 &&
        gox go get "$MODULE@$GOVERSION" >>"$WORK/get.log" 2>&1 &&
        gox go mod tidy >>"$WORK/get.log" 2>&1
) || { cat "$WORK/get.log"; die "go get $MODULE@$GOVERSION, go mod tidy"; }
grep -q "^require $MODULE $GOVERSION\$" "$APP/go.mod" || die "go.mod does not require $MODULE $GOVERSION: $(cat "$APP/go.mod")"
grep -q "^$MODULE $GOVERSION h1:" "$APP/go.sum" || die "go.sum has no hash of $MODULE $GOVERSION"
moddir="$(cd "$APP" && gox go list -m -f '{{.Dir}}' "$MODULE")"
[ "$moddir" = "$WORK/gomodcache/$MODULE@$GOVERSION" ] || die "$MODULE resolved to $moddir, not the module cache"
ok "go get $MODULE@$GOVERSION + go mod tidy from the proxy (go.mod, go.sum, module cache)"

start_nats_server

# build NAME ARGS...: go build in the app with only the prefix's pkg-config
# files, into $WORK/NAME.
build() {
    local name="$1"
    shift
    (cd "$APP" && gox PKG_CONFIG_PATH="$LIBDIR/pkgconfig" go build "$@" -o "$WORK/$name" .) \
        >"$WORK/$name.log" 2>&1 || { cat "$WORK/$name.log"; die "go build $* ($name)"; }
}
# run NAME [LD_LIBRARY_PATH]: runs the program with that loader path only.
run() {
    local out
    if [ -n "${2:-}" ]; then
        out="$(env -u LD_LIBRARY_PATH LD_LIBRARY_PATH="$2" "$WORK/$1" "$URL" "$1" 2>&1)" || die "$1: $out"
    else
        out="$(env -u LD_LIBRARY_PATH "$WORK/$1" "$URL" "$1" 2>&1)" || die "$1: $out"
    fi
    [ "$out" = "ok $1 $VERSION" ] || die "$1 printed: $out"
}

echo "--- build errors a user meets"
# No libnatsio on the pkg-config path: pkg-config's message, naming the
# package and PKG_CONFIG_PATH (PKG_CONFIG_LIBDIR hides the system's .pc
# files). Checked before any successful build: Go's build cache does not
# key a cgo package by pkg-config's output (`go help cache`), so once this
# module cache's copy of the package is built, pkg-config is not asked again.
mkdir -p "$WORK/empty"
if (cd "$APP" && gox PKG_CONFIG_PATH="$WORK/empty" PKG_CONFIG_LIBDIR="$WORK/empty" go build -o /dev/null .) \
    >"$WORK/missing.log" 2>&1; then
    die "build without natsio-static.pc succeeded"
fi
grep -q "natsio-static" "$WORK/missing.log" && grep -q "PKG_CONFIG_PATH" "$WORK/missing.log" ||
    { cat "$WORK/missing.log"; die "the missing-library error names neither natsio-static nor PKG_CONFIG_PATH"; }
sed 's/^/       | /' "$WORK/missing.log"
ok "no natsio-static.pc: the build fails naming natsio-static and PKG_CONFIG_PATH"
if (cd "$APP" && gox CGO_ENABLED=0 go build -o /dev/null .) >"$WORK/nocgo.log" 2>&1; then
    die "build with CGO_ENABLED=0 succeeded"
fi
grep -q "undefined: natsio_requires_cgo_set_CGO_ENABLED_1" "$WORK/nocgo.log" ||
    { cat "$WORK/nocgo.log"; die "CGO_ENABLED=0 does not fail with natsio_requires_cgo_set_CGO_ENABLED_1"; }
[ "$(grep -c 'undefined:' "$WORK/nocgo.log")" -eq 1 ] || { cat "$WORK/nocgo.log"; die "CGO_ENABLED=0 reports other errors too"; }
sed 's/^/       | /' "$WORK/nocgo.log"
ok "CGO_ENABLED=0: the build fails with natsio_requires_cgo_set_CGO_ENABLED_1... and nothing else"

# The README's commands for Go users (README.md, block "go-get";
# bindings/go/README.md must say the same), run as written in the module,
# with the prefix as $PREFIX and, for the plain `go build`, on pkg-config's
# path (as a standard prefix would be). Each line builds over the last; the
# final program is the shared build.
echo "--- the README's go commands"
python3 scripts/readme_blocks.py extract README.md go-get >"$WORK/go-get.sh"
diff <(python3 scripts/readme_blocks.py commands README.md go-get) \
    <(python3 scripts/readme_blocks.py commands bindings/go/README.md go-get) >/dev/null ||
    die "bindings/go/README.md's go commands differ from README.md's"
grep -q "^go get $MODULE@$GOVERSION" "$WORK/go-get.sh" || die "the README's go get names no $MODULE@$GOVERSION"
(cd "$APP" && gox PREFIX="$PREFIX" PKG_CONFIG_PATH="$LIBDIR/pkgconfig" bash -euo pipefail "$WORK/go-get.sh") \
    >"$WORK/go-get.log" 2>&1 || { cat "$WORK/go-get.log"; die "the README's go commands"; }
cp "$APP/natsio-install-go" "$WORK/readme_go"
run readme_go "$LIBDIR"
ok "the README's go get / go build lines, as written: built, the last (-tags natsio_shared) runs"

echo "--- static (pkg-config natsio-static)"
build static
no_libnatsio "$WORK/static"
run static
ok "static: built with PKG_CONFIG_PATH=<prefix>/lib/pkgconfig only, no libnatsio.so needed, runs (pub/sub, request, KV)"

echo "--- shared (-tags natsio_shared, pkg-config natsio)"
build shared -tags natsio_shared
dyn="$(readelf -d "$WORK/shared")"
grep -q "NEEDED.*\[libnatsio.so.$MAJOR\]" <<<"$dyn" || die "shared does not need libnatsio.so.$MAJOR: $dyn"
if grep -E 'R(UN)?PATH' <<<"$dyn" | grep -qF "$ROOT"; then die "shared searches the build tree: $dyn"; fi
run shared "$LIBDIR"
ok "shared: DT_NEEDED libnatsio.so.$MAJOR, runs with LD_LIBRARY_PATH=<prefix>/lib only"

echo "--- vendor (go mod vendor, go build -mod=vendor)"
(cd "$APP" && gox go mod vendor) >"$WORK/vendor.log" 2>&1 || { cat "$WORK/vendor.log"; die "go mod vendor"; }
for f in natsio.go natsio_go.c natsio_go.h link_static.go; do
    [ -f "$APP/vendor/$MODULE/$f" ] || die "vendor/$MODULE/$f missing"
done
build vendored -mod=vendor
no_libnatsio "$WORK/vendored"
run vendored
ok "vendor: go mod vendor (C sources included), go build -mod=vendor, runs"

echo "go install checks passed: $passed"
