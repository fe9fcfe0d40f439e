#!/usr/bin/env bash
# The Node package as its users get it: `npm pack`ed, then installed into
# projects outside this tree. Run by scripts/test.sh after `npm test` (with
# a prefix installed from that run's CMake build dir); by hand:
#
#   scripts/test-install-node.sh [PREFIX]
#
# PREFIX: a libnatsio install (`cmake --install <build> --prefix PREFIX`);
# without one, ${BUILD_DIR:-build} is installed into a temporary prefix.
#
# 1. `npm pack` in bindings/node (its prepack copies the Rust crate into
#    the tarball, its postpack removes the copy); the tarball's contents.
# 2. The tarball installed with PKG_CONFIG_PATH=PREFIX/lib/pkgconfig: the
#    addon links PREFIX's natsio-static (no libnatsio.so needed, nothing of
#    this tree); then, against a nats-server -js of its own:
#      check.cjs   require('natsio')
#      check.mjs   import { ... } from 'natsio' (named exports, instanceof)
#    each: connect, publish + subscribe, request to its own responder,
#    TimeoutError, KV put/get, KeyNotFoundError; and README.md's three Node
#    tour files, run as written but for the server's address. The install
#    itself is bindings/node/README.md's line for a prefix, as written. `tsc --noEmit` (typescript from the registry) on a
#    .mts and a .cts file using the package's types.
# 3. No libnatsio visible to pkg-config and only that source allowed: the
#    install fails and says what to install.
# 4. No libnatsio visible to pkg-config: the install builds the shipped
#    crate with cargo (a full release build, a few minutes; its own
#    CARGO_TARGET_DIR in the temporary dir), then check.cjs runs.
#
# Needs node, npm (and the npm registry, for the package's dependencies
# and typescript), cc, pkg-config, cargo. Prints "node install checks
# passed: N" last (scripts/test.sh counts N).
set -euo pipefail
# PREFIX as given, relative to the caller's directory.
PREFIX=""
if [ $# -ge 1 ]; then PREFIX="$(cd "$1" && pwd)" || { echo "no such prefix: $1" >&2; exit 1; }; fi
cd "$(dirname "${BASH_SOURCE[0]}")/.."
ROOT="$(pwd)"
NATS_SERVER_BIN="${NATS_SERVER_BIN:-$(scripts/install-nats-server.sh | tail -n 1)}"
TS_VERSION="${TS_VERSION:-5.9.3}"

# shellcheck source=scripts/lib/install-check.sh
. scripts/lib/install-check.sh
install_check_begin install-node
# Quiet npm: no audit, funding or update notices; script output kept in the log.
npm_q() { npm --no-audit --no-fund --no-update-notifier --foreground-scripts "$@"; }

VERSION="$(node -p 'require("./bindings/node/package.json").version')"

if [ -z "$PREFIX" ]; then
    BUILD_DIR="${BUILD_DIR:-build}"
    PREFIX="$WORK/prefix"
    echo "--- cmake --install $BUILD_DIR --prefix $PREFIX"
    cmake --install "$BUILD_DIR" --prefix "$PREFIX" >"$WORK/install.log" || { cat "$WORK/install.log"; die "install"; }
fi
PC_DIR="$(dirname "$(find "$PREFIX" -name natsio-static.pc | head -n 1)")"
[ -f "$PC_DIR/natsio-static.pc" ] || die "no natsio-static.pc under $PREFIX"
STATIC_LIB="$(PKG_CONFIG_PATH="$PC_DIR" pkg-config --variable=libdir natsio-static)/libnatsio.a"
[ -f "$STATIC_LIB" ] || die "$STATIC_LIB missing"
STATIC_LIB="$(realpath "$STATIC_LIB")"
EMPTY_PC="$WORK/no-pkgconfig"
mkdir -p "$EMPTY_PC"

echo "--- npm pack (bindings/node)"
[ ! -e bindings/node/crate ] || die "bindings/node/crate exists before npm pack (a leftover copy: remove it)"
(cd bindings/node && npm pack --pack-destination "$WORK") >"$WORK/pack.log" 2>&1 || { cat "$WORK/pack.log"; die "npm pack"; }
TARBALL="$WORK/natsio-$VERSION.tgz"
[ -f "$TARBALL" ] || die "npm pack made no natsio-$VERSION.tgz: $(cat "$WORK/pack.log")"
[ ! -e bindings/node/crate ] && [ ! -e bindings/node/LICENSE ] || die "postpack left bindings/node/crate or LICENSE behind"
tar -tzf "$TARBALL" | sort >"$WORK/contents.txt"
for f in package.json README.md LICENSE index.js index.mjs index.d.ts build.js src/addon.c src/internal.h \
    compat/transport-node.js compat/transport-node.mjs compat/transport-node.d.ts compat/jetstream.js compat/kv.js compat/obj.js compat/services.js \
    crate/Cargo.toml crate/Cargo.lock crate/build.rs crate/cbindgen.toml crate/LICENSE crate/src/lib.rs crate/include/natsio.h crate/include/natsio_sys.h; do
    grep -qx "package/$f" "$WORK/contents.txt" || die "$f not in the tarball"
done
if grep -E '^package/(build|test|node_modules|examples|crate/target)/' "$WORK/contents.txt"; then die "the tarball ships the files above"; fi
tar -xzOf "$TARBALL" package/package.json | node -e '
    const p = JSON.parse(require("fs").readFileSync(0, "utf8"));
    if (p.private) throw new Error("private");
    if (!/build\.js --install/.test(p.scripts.install)) throw new Error("no install script");
    if (p.license !== "Apache-2.0" || !p.repository || p.repository.directory !== "bindings/node")
        throw new Error("license or repository missing");' || die "package.json"
ok "npm pack: $(basename "$TARBALL") ($(du -h "$TARBALL" | cut -f1), $(wc -l <"$WORK/contents.txt") files, the Rust crate included)"

start_nats_server

# The programs a user would write, CommonJS and ESM: `ok NAME ...` or a failure.
cat >"$WORK/check.cjs" <<'EOF'
'use strict';
const assert = require('node:assert/strict');
const natsio = require('natsio');
const { connect, NatsError, TimeoutError, KeyNotFoundError } = natsio;
const [url, name] = process.argv.slice(2);

(async () => {
  const nc = await connect({ servers: url, name });
  const sub = nc.subscribe(`${name}.greet`);
  nc.publish(`${name}.greet`, 'hello');
  for await (const m of sub) {
    assert.equal(m.string(), 'hello');
    break;
  }
  nc.subscribe(`${name}.echo`, { callback: (err, m) => m.respond(`re: ${m.string()}`) });
  assert.equal((await nc.request(`${name}.echo`, 'ping', { timeout: 5000 })).string(), 're: ping');
  nc.subscribe(`${name}.silent`); // takes requests, answers none
  await assert.rejects(nc.request(`${name}.silent`, 'x', { timeout: 200 }), (e) => e instanceof TimeoutError && e instanceof NatsError);
  const js = nc.jetstream();
  const kv = await js.kv.create({ bucket: `b_${name}` });
  await kv.put('color', 'blue');
  assert.equal((await kv.get('color')).value.toString(), 'blue');
  await assert.rejects(kv.get('nothing'), KeyNotFoundError);
  kv.close();
  js.close();
  await nc.drain();
  console.log(`ok ${name} libnatsio ${natsio.version}`);
})().catch((e) => {
  console.error(e);
  process.exit(1);
});
EOF
cat >"$WORK/check.mjs" <<'EOF'
import assert from 'node:assert/strict';
import natsio, { connect, NatsError, TimeoutError, KeyNotFoundError, version } from 'natsio';
import { createRequire } from 'node:module';

const [url, name] = process.argv.slice(2);
// One module for import and require: the same classes.
assert.equal(createRequire(import.meta.url)('natsio').TimeoutError, TimeoutError);
assert.equal(natsio.connect, connect);

const nc = await connect({ servers: url, name });
const sub = nc.subscribe(`${name}.greet`);
nc.publish(`${name}.greet`, 'hello');
for await (const m of sub) {
  assert.equal(m.string(), 'hello');
  break;
}
nc.subscribe(`${name}.echo`, { callback: (err, m) => m.respond(`re: ${m.string()}`) });
assert.equal((await nc.request(`${name}.echo`, 'ping', { timeout: 5000 })).string(), 're: ping');
nc.subscribe(`${name}.silent`);
try {
  await nc.request(`${name}.silent`, 'x', { timeout: 200 });
  assert.fail('no timeout');
} catch (e) {
  if (!(e instanceof TimeoutError) || !(e instanceof NatsError)) throw e;
  assert.equal(e.code, 'TIMEOUT');
}
const js = nc.jetstream();
const kv = await js.kv.create({ bucket: `b_${name}` });
await kv.put('color', 'blue');
assert.equal((await kv.get('color')).value.toString(), 'blue');
await assert.rejects(kv.get('nothing'), KeyNotFoundError);
kv.close();
js.close();
await nc.drain();
console.log(`ok ${name} libnatsio ${version}`);
EOF

# new_project DIR: an empty npm project outside the tree, with the checks.
new_project() {
    mkdir -p "$1"
    printf '{ "name": "%s", "version": "1.0.0", "private": true }\n' "$(basename "$1")" >"$1/package.json"
    cp "$WORK/check.cjs" "$WORK/check.mjs" "$1/"
}
# run_check DIR FILE NAME: node FILE in DIR must print "ok NAME ...".
run_check() {
    local out
    out="$(cd "$1" && timeout 120 node "$2" "$URL" "$3" 2>&1)" || die "$3: $out"
    [[ "$out" == "ok $3 "* ]] || die "$3 printed: $out"
}
# self_contained APP NAME [ALLOWED]: the addon is static and names nothing
# of this tree, except ALLOWED (the cargo target dir the crate was built
# into, when scripts/test.sh shares the tree's).
self_contained() {
    local addon="$1/node_modules/natsio/build/natsio.node"
    [ -f "$addon" ] || die "$2: no $addon"
    [ ! -L "$1/node_modules/natsio" ] || die "$2: node_modules/natsio is a link"
    if readelf -d "$addon" | grep -q 'NEEDED.*libnatsio'; then die "$2: the addon needs libnatsio.so"; fi
    local command_file="$1/node_modules/natsio/build/build-command.txt"
    if { if [ -n "${3:-}" ]; then sed "s|$3||g" "$command_file"; else cat "$command_file"; fi; } | grep -qF "$ROOT"; then
        die "$2: the addon was built from this tree: $(cat "$command_file")"
    fi
}

echo "--- npm install the tarball, libnatsio from pkg-config ($PC_DIR)"
APP="$WORK/app-pkgconfig"
new_project "$APP"
# The README's install lines (bindings/node/README.md, block "npm-install"):
# the second, for a libnatsio in a prefix pkg-config does not search, run as
# written but for the prefix and, the package being unpublished, the packed
# tarball in place of the registry's "natsio" (npm's output made verbose
# enough to show the install script's lines). The first line is the same
# command without PKG_CONFIG_PATH.
python3 scripts/readme_blocks.py commands bindings/node/README.md npm-install >"$WORK/npm-install.readme"
[ "$(sed -n 1p "$WORK/npm-install.readme")" = "npm install natsio" ] &&
    sed -n 2p "$WORK/npm-install.readme" | grep -qE '^PKG_CONFIG_PATH=/opt/natsio/lib/pkgconfig npm install natsio$' ||
    die "bindings/node/README.md's install lines changed: $(cat "$WORK/npm-install.readme")"
sed -n 2p "$WORK/npm-install.readme" |
    sed -e "s#/opt/natsio/lib/pkgconfig#$PC_DIR#" \
        -e "s#npm install natsio#npm --no-audit --no-fund --no-update-notifier --foreground-scripts install $TARBALL#" \
        >"$WORK/npm-install.sh"
(cd "$APP" && bash -euo pipefail "$WORK/npm-install.sh") >"$WORK/app-pkgconfig.log" 2>&1 ||
    { cat "$WORK/app-pkgconfig.log"; die "npm install (pkg-config), the README's line"; }
grep -q "natsio: linking libnatsio from natsio-static $VERSION" "$WORK/app-pkgconfig.log" ||
    { cat "$WORK/app-pkgconfig.log"; die "the install did not link natsio-static $VERSION"; }
self_contained "$APP" pkg-config
linked="$(tr ' ' '\n' <"$APP/node_modules/natsio/build/build-command.txt" | grep 'libnatsio\.a$')"
[ "$(realpath "$linked")" = "$STATIC_LIB" ] || die "the addon linked $linked, not $STATIC_LIB"
ok "install with pkg-config: the addon links $STATIC_LIB (natsio-static), needs no libnatsio.so"
run_check "$APP" check.cjs cjs
ok "CommonJS: require('natsio'): publish/subscribe, request, TimeoutError, KV"
run_check "$APP" check.mjs esm
ok "ESM: named imports: publish/subscribe, request, TimeoutError instanceof, KV"

# The README's Node tour files (README.md, blocks "tour-mjs",
# "jetstream-mjs", "objects-mjs"; bindings/node/README.md's are run in the
# tree by scripts/readme_blocks.py), as written but for the server's
# address, inside the project: 'natsio' is the installed package.
mkdir -p "$APP/readme"
for id in tour-mjs jetstream-mjs objects-mjs; do
    file="$APP/readme/$id.mjs"
    python3 scripts/readme_blocks.py extract README.md "$id" >"$file" || die "README.md has no block $id"
    grep -q 'nats://127.0.0.1:4222' "$file" || die "$id does not connect to nats://127.0.0.1:4222"
    sed -i "s#nats://127.0.0.1:4222#$URL#g" "$file"
    out="$(cd "$APP/readme" && timeout 60 node "$id.mjs" 2>&1)" || die "README snippet $id: $out"
    echo "$id.mjs" >>"$WORK/snippets.txt"
done
ok "README snippets run as written: $(tr '\n' ' ' <"$WORK/snippets.txt")"

echo "--- tsc --noEmit (typescript@$TS_VERSION)"
(cd "$APP" && npm_q install --save-dev "typescript@$TS_VERSION") >"$WORK/tsc-install.log" 2>&1 ||
    { cat "$WORK/tsc-install.log"; die "npm install typescript@$TS_VERSION"; }
cat >"$APP/tsconfig.json" <<'EOF'
{ "compilerOptions": { "module": "nodenext", "moduleResolution": "nodenext", "target": "es2022",
    "strict": true, "noEmit": true, "skipLibCheck": false }, "files": ["types.mts", "types.cts"] }
EOF
cat >"$APP/types.mts" <<'EOF'
import natsio, { connect, TimeoutError, NatsError, type Connection, type KvEntry } from 'natsio';
const nc: Connection = await connect({ servers: 'nats://127.0.0.1:4222' });
const entry: KvEntry | null = await (await nc.jetstream().kv.bind('b')).get('k').catch(() => null);
const bytes: Buffer | undefined = entry?.value; // Node's Buffer: @types/node
try {
  await nc.request('x', 'y', { timeout: 100 });
} catch (e) {
  if (e instanceof TimeoutError) { const s: number = e.status; const c: string = e.code; console.log(s, c); }
}
const err: NatsError = new natsio.TimeoutError('t');
console.log(bytes?.length, err, natsio.version);
await nc.close();
// The nats.js facades' types (natsio/transport-node, natsio/jetstream, natsio/kv).
import { connect as jsConnect, headers, type NatsConnection } from 'natsio/transport-node';
import { jetstream, type JsMsg } from 'natsio/jetstream';
import { Kvm } from 'natsio/kv';
async function moved(): Promise<void> {
  const c: NatsConnection = await jsConnect({ servers: 'nats://127.0.0.1:4222' });
  const h = headers();
  h.set('a', 'b');
  const one: string = h.get('a');
  const m: JsMsg | null = await (await jetstream(c).consumers.get('S', 'c')).next();
  const v = await (await new Kvm(c).open('b')).get('k');
  console.log(one, m?.info.deliverySequence, v?.string());
}
void moved;
EOF
cat >"$APP/types.cts" <<'EOF'
import natsio = require('natsio');
async function main(): Promise<void> {
  const nc = await natsio.connect({ servers: 'nats://127.0.0.1:4222' });
  for await (const m of nc.subscribe('a.*')) { const b: Uint8Array = m.data; console.log(b.length, m.headers?.get('h')); break; }
  await nc.drain();
}
void main();
EOF
(cd "$APP" && npx --no-install tsc -p .) >"$WORK/tsc.log" 2>&1 || { cat "$WORK/tsc.log"; die "tsc --noEmit"; }
# And a type error is reported (the types are read, not any).
echo "const n: number = (await import('natsio')).version;" >"$APP/bad.mts"
if (cd "$APP" && npx --no-install tsc --noEmit --module nodenext --target es2022 --strict bad.mts) >"$WORK/tsc-bad.log" 2>&1; then
    die "tsc accepted a string assigned to a number: the package's types are not used"
fi
grep -q "TS2322" "$WORK/tsc-bad.log" || { cat "$WORK/tsc-bad.log"; die "tsc: unexpected error"; }
ok "types: tsc --noEmit (strict, nodenext) on an ES module and a CommonJS file, @types/node from the package's dependencies"

echo "--- npm install the tarball, no libnatsio and only pkg-config allowed: a clear error"
APP="$WORK/app-none"
new_project "$APP"
if (cd "$APP" && PKG_CONFIG_PATH="$EMPTY_PC" PKG_CONFIG_LIBDIR="$EMPTY_PC" NATSIO_NODE_LIBNATSIO=pkg-config \
    npm_q install "$TARBALL") >"$WORK/app-none.log" 2>&1; then
    die "npm install succeeded with no libnatsio"
fi
for want in "no libnatsio to build the Node addon against" "PKG_CONFIG_PATH=<prefix>/lib/pkgconfig npm install natsio" \
    "https://rustup.rs"; do
    grep -qF "$want" "$WORK/app-none.log" || { cat "$WORK/app-none.log"; die "the error does not say: $want"; }
done
ok "no libnatsio: npm install fails and says what to install"

echo "--- npm install the tarball, no libnatsio: cargo builds the shipped crate (a few minutes)"
APP="$WORK/app-crate"
new_project "$APP"
# NATSIO_CRATE_TARGET_DIR: scripts/test.sh passes the tree's target dir, so
# cargo reuses the dependencies it compiled there (registry crates are keyed
# by name, version and features, not by where the depending crate lives) and
# compiles only libnatsio from the shipped sources: minutes less per run.
CRATE_TARGET="${NATSIO_CRATE_TARGET_DIR:-$WORK/cargo-target}"
start=$SECONDS
(cd "$APP" && PKG_CONFIG_PATH="$EMPTY_PC" PKG_CONFIG_LIBDIR="$EMPTY_PC" CARGO_TARGET_DIR="$CRATE_TARGET" \
    npm_q install "$TARBALL") >"$WORK/app-crate.log" 2>&1 || { cat "$WORK/app-crate.log"; die "npm install (crate)"; }
grep -q "natsio: building libnatsio with .*cargo build --release --lib --locked in $APP/node_modules/natsio/crate" \
    "$WORK/app-crate.log" || { cat "$WORK/app-crate.log"; die "the install did not build the shipped crate"; }
self_contained "$APP" crate "$CRATE_TARGET"
grep -qF "$CRATE_TARGET/release/libnatsio.a" "$APP/node_modules/natsio/build/build-command.txt" ||
    die "the addon did not link $CRATE_TARGET/release/libnatsio.a"
ok "install with no libnatsio: cargo built the shipped crate ($((SECONDS - start)) s), the addon links it"
run_check "$APP" check.cjs crate_cjs
ok "CommonJS on the crate-built addon: publish/subscribe, request, TimeoutError, KV"

echo "node install checks passed: $passed"
