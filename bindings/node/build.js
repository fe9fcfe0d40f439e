#!/usr/bin/env node
// Builds build/natsio.node with a direct compiler call: no node-gyp, no
// header download. Node-API headers come from the running Node's own
// include directory when it ships them, else from the `node-api-headers`
// npm package (a dependency). libnatsio is linked statically when it can
// be, so the addon is self-contained.
//
//   node build.js            (npm run build, npm test's pretest) in the
//                            repository: links <CARGO_TARGET_DIR or
//                            target>/release/libnatsio.a, which
//                            `cargo build --release` at the root makes
//   node build.js --install  (the package's install script, so also
//                            `npm rebuild natsio`) links the first of:
//     1. an installed libnatsio found by pkg-config: natsio-static (the
//        addon stays self-contained), else natsio (shared, with an rpath),
//        of the same major version (and minor, while 0.x) as this package
//     2. in the repository: target/release/libnatsio.a, as above
//     3. the Rust crate: the one shipped in this package (crate/, copied by
//        prepack.js) or, in the repository, the repository's own, built
//        with `cargo build --release` (a few minutes; CARGO_TARGET_DIR is
//        honoured, else crate/target)
//   and otherwise fails saying what to install.
//   Outside the repository a plain `node build.js` works as --install.
//
// Environment:
//   CC                     the C compiler, with any arguments of its own
//                          ("ccache gcc", "clang --target=..."; default cc)
//   CFLAGS, LDFLAGS        more compiler and linker flags, after the build's own
//   PKG_CONFIG             pkg-config program (default pkg-config); its
//                          PKG_CONFIG_PATH / PKG_CONFIG_LIBDIR apply
//   CARGO                  cargo program (default cargo, then ~/.cargo/bin/cargo)
//   CARGO_TARGET_DIR       where cargo builds (and the repository's build looks)
//   NATSIO_NODE_LIBNATSIO  pkg-config | tree | crate: only that source (--install)
//   NODE_API_INCLUDE_DIR   a directory holding node_api.h
// For scripts/sanitize.sh (unset for the normal build):
//   NATSIO_NODE_BUILD_DIR  output directory instead of build/ (index.js loads
//                          from the same variable), so an instrumented addon
//                          never replaces the normal one
//   NATSIO_NODE_SANITIZE   -fsanitize= list for the addon's C code, e.g.
//                          "address,undefined" (the Rust archive itself is
//                          not instrumented)
'use strict';
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { execFileSync, spawnSync } = require('node:child_process');

const here = __dirname;
const root = path.resolve(here, '..', '..');
const pkg = require('./package.json');
const argv = process.argv.slice(2);
const srcDir = path.join(here, 'src');
// Every .c file of src/ and src/gen/ (see src/internal.h for which does what).
const sources = ['', 'gen']
  .flatMap((dir) => fs.readdirSync(path.join(srcDir, dir)).filter((f) => f.endsWith('.c')).sort().map((f) => path.join(srcDir, dir, f)));
const internalHeader = path.join(srcDir, 'internal.h');
const buildDir = process.env.NATSIO_NODE_BUILD_DIR
  ? path.resolve(process.env.NATSIO_NODE_BUILD_DIR)
  : path.join(here, 'build');
const sanitize = process.env.NATSIO_NODE_SANITIZE || '';
const output = path.join(buildDir, 'natsio.node');
const statusTable = path.join(buildDir, 'status-codes.json');
// The compiler command of the last build: a change of flags rebuilds.
const commandFile = path.join(buildDir, 'build-command.txt');

function fail(message) {
  console.error(`natsio: ${message}`);
  process.exit(1);
}

function realpath(p) {
  try {
    return fs.realpathSync(p);
  } catch {
    return null;
  }
}

// This directory is bindings/node of a libnatsio checkout (not a copy
// installed from a tarball or the registry).
const inTree =
  fs.existsSync(path.join(root, 'Cargo.toml')) &&
  fs.existsSync(path.join(root, 'include', 'natsio.h')) &&
  realpath(path.join(root, 'bindings', 'node')) === realpath(here);
const installMode = argv.includes('--install') || !inTree;

// Runs a program; its trimmed stdout, or null when it is missing or fails.
function run(program, args) {
  const r = spawnSync(program, args, { encoding: 'utf8' });
  return r.error || r.status !== 0 ? null : r.stdout.trim();
}

// ---------------------------------------------------------------------------
// Where libnatsio comes from: {what, header, includeDirs, linkArgs, inputs}.

/** The repository's cargo output (null when it is not built). */
function fromTree() {
  const targetDir = process.env.CARGO_TARGET_DIR
    ? path.resolve(root, process.env.CARGO_TARGET_DIR)
    : path.join(root, 'target');
  const staticLib = path.join(targetDir, 'release', 'libnatsio.a');
  if (!fs.existsSync(staticLib)) return null;
  const header = path.join(root, 'include', 'natsio.h');
  return { what: staticLib, header, includeDirs: [path.dirname(header)], linkArgs: [staticLib], inputs: [staticLib] };
}

/** Same major version, and same minor while the major is 0. */
function compatible(version) {
  const want = pkg.version.split('.').map(Number);
  const got = String(version).split('.').map(Number);
  return got[0] === want[0] && (want[0] !== 0 || got[1] === want[1]);
}

/** An installed libnatsio by pkg-config; `notes` says why not. */
function fromPkgConfig(notes) {
  const pc = process.env.PKG_CONFIG || 'pkg-config';
  if (run(pc, ['--version']) === null) {
    notes.push(`${pc} not found`);
    return null;
  }
  for (const name of ['natsio-static', 'natsio']) {
    const version = run(pc, ['--modversion', name]);
    if (version === null) {
      notes.push(`${name}.pc not found`);
      continue;
    }
    if (!compatible(version)) {
      notes.push(`${name} ${version} is installed, but natsio ${pkg.version} needs ${pkg.version.replace(/\.\d+$/, '.x')}`);
      continue;
    }
    const cflags = (run(pc, ['--cflags', name]) || '').split(/\s+/).filter(Boolean);
    const libs = (run(pc, ['--libs', name]) || '').split(/\s+/).filter(Boolean);
    const includeDirs = cflags.filter((f) => f.startsWith('-I')).map((f) => f.slice(2));
    const includedir = run(pc, ['--variable=includedir', name]);
    if (includedir) includeDirs.push(includedir);
    const header = includeDirs.map((d) => path.join(d, 'natsio.h')).find((f) => fs.existsSync(f));
    if (!header) {
      notes.push(`${name} ${version}: natsio.h not found in ${includeDirs.join(', ') || 'its Cflags'}`);
      continue;
    }
    const libdir = path.resolve(run(pc, ['--variable=libdir', name]) || '.');
    let inputs;
    let linkArgs;
    if (name === 'natsio-static') {
      const archive = libs.find((f) => f.endsWith('.a')) || path.join(libdir, 'libnatsio.a');
      if (!fs.existsSync(archive)) {
        notes.push(`${name} ${version}: ${archive} is missing`);
        continue;
      }
      inputs = [archive];
      linkArgs = [...cflags.filter((f) => !f.startsWith('-I')), ...libs];
    } else {
      const shared = path.join(libdir, process.platform === 'darwin' ? 'libnatsio.dylib' : 'libnatsio.so');
      inputs = fs.existsSync(shared) ? [shared] : [];
      // The addon finds the shared library where it was installed.
      linkArgs = [...cflags.filter((f) => !f.startsWith('-I')), ...libs, `-Wl,-rpath,${libdir}`];
    }
    return { what: `${name} ${version} (pkg-config: ${inputs[0] || libdir})`, header, includeDirs, linkArgs, inputs };
  }
  return null;
}

function findCargo() {
  const candidates = [process.env.CARGO, 'cargo', path.join(os.homedir(), '.cargo', 'bin', 'cargo')].filter(Boolean);
  return candidates.find((c) => run(c, ['--version']) !== null) || null;
}

/** The Rust crate: shipped in crate/, or the repository itself. */
function crateDir() {
  if (inTree) return root;
  const dir = path.join(here, 'crate');
  return fs.existsSync(path.join(dir, 'Cargo.toml')) ? dir : null;
}

/** Builds the crate with cargo; null when there is no crate or no cargo. */
function fromCrate(notes) {
  const dir = crateDir();
  if (!dir) {
    notes.push('no Rust crate in this package (crate/)');
    return null;
  }
  const cargo = findCargo();
  if (!cargo) {
    notes.push('cargo not found (to build the Rust crate shipped in this package)');
    return null;
  }
  const targetDir = process.env.CARGO_TARGET_DIR
    ? path.resolve(dir, process.env.CARGO_TARGET_DIR)
    : path.join(dir, 'target');
  // The shipped crate builds exactly the dependencies of its Cargo.lock.
  const args = ['build', '--release', '--lib', ...(inTree ? [] : ['--locked'])];
  console.log(`natsio: building libnatsio with ${cargo} ${args.join(' ')} in ${dir} (a few minutes)`);
  const r = spawnSync(cargo, args, {
    cwd: dir,
    stdio: 'inherit',
    env: { ...process.env, CARGO_TARGET_DIR: targetDir },
  });
  if (r.error || r.status !== 0) {
    fail(`cargo build of the Rust crate in ${dir} failed (it needs Rust ${rustVersion(dir) || 'stable'} or newer; see above)`);
  }
  const staticLib = path.join(targetDir, 'release', 'libnatsio.a');
  if (!fs.existsSync(staticLib)) fail(`cargo built no ${staticLib}`);
  const header = path.join(dir, 'include', 'natsio.h');
  return { what: `${staticLib} (built from the crate)`, header, includeDirs: [path.dirname(header)], linkArgs: [staticLib], inputs: [staticLib] };
}

function rustVersion(dir) {
  try {
    return fs.readFileSync(path.join(dir, 'Cargo.toml'), 'utf8').match(/^rust-version\s*=\s*"([^"]+)"/m)?.[1];
  } catch {
    return undefined;
  }
}

function findLibnatsio() {
  if (!installMode) {
    const tree = fromTree();
    if (!tree) {
      const t = process.env.CARGO_TARGET_DIR ? path.resolve(root, process.env.CARGO_TARGET_DIR) : path.join(root, 'target');
      fail(`${path.join(t, 'release', 'libnatsio.a')} is missing: run "cargo build --release" in ${root} first`);
    }
    return tree;
  }
  const only = process.env.NATSIO_NODE_LIBNATSIO || '';
  if (only && !['pkg-config', 'tree', 'crate'].includes(only)) {
    fail(`NATSIO_NODE_LIBNATSIO=${only}: expected pkg-config, tree or crate`);
  }
  const notes = [];
  const want = (source) => !only || only === source;
  let found = want('pkg-config') ? fromPkgConfig(notes) : null;
  if (!found && want('tree')) {
    if (inTree) {
      found = fromTree();
      if (!found) notes.push(`the repository's libnatsio.a is not built`);
    } else if (only) {
      notes.push('not in a libnatsio repository');
    }
  }
  if (!found && want('crate')) found = fromCrate(notes);
  if (found) return found;
  fail(
    `no libnatsio to build the Node addon against${only ? ` (NATSIO_NODE_LIBNATSIO=${only})` : ''}:\n` +
      notes.map((n) => `  - ${n}\n`).join('') +
      'Either\n' +
      '  - install libnatsio (cmake --install <build dir> --prefix <prefix>) and let pkg-config see it:\n' +
      '      PKG_CONFIG_PATH=<prefix>/lib/pkgconfig npm install natsio\n' +
      '    (natsio-static is linked when present: the addon then needs no libnatsio.so at run time)\n' +
      `  - or install Rust (https://rustup.rs; cargo ${rustVersion(crateDir() || here) || '1.85'} or newer) and a C compiler:\n` +
      '    the Rust crate shipped in this package is then built (cargo build --release, a few minutes)\n' +
      'then run `npm rebuild natsio`.',
  );
}

// The error classes of index.js are derived from the header's
// natsio_status enum, so every status code (present and future) maps to
// exactly one class: [[status, CODE, description], ...].
function writeStatusTable(header) {
  const text = fs.readFileSync(header, 'utf8');
  const body = text.match(/enum natsio_status\b[\s\S]*?\{([\s\S]*?)\};/);
  if (!body) throw new Error('enum natsio_status not found in natsio.h');
  const entries = [];
  const re = /\/\*\*([\s\S]*?)\*\/\s*NATSIO_([A-Z0-9_]+)\s*=\s*(\d+)/g;
  for (const m of body[1].matchAll(re)) {
    const doc = m[1].replace(/^\s*\*\s?/gm, '').replace(/\s+/g, ' ').trim();
    entries.push([Number(m[3]), m[2].replace(/^ERR_/, ''), doc]);
  }
  fs.mkdirSync(path.dirname(statusTable), { recursive: true });
  fs.writeFileSync(statusTable, JSON.stringify(entries, null, 1) + '\n');
}

function nodeApiIncludeDir() {
  const candidates = [
    process.env.NODE_API_INCLUDE_DIR,
    path.resolve(path.dirname(process.execPath), '..', 'include', 'node'),
    '/usr/include/node',
    '/usr/local/include/node',
  ].filter(Boolean);
  for (const dir of candidates) {
    if (fs.existsSync(path.join(dir, 'node_api.h'))) return dir;
  }
  try {
    return require('node-api-headers').include_dir;
  } catch {
    fail('node_api.h not found: install Node\'s headers (NODE_API_INCLUDE_DIR) or the node-api-headers package');
  }
}

function upToDate(command, lib) {
  if (!fs.existsSync(output)) return false;
  if (!fs.existsSync(commandFile) || fs.readFileSync(commandFile, 'utf8') !== command) return false;
  const built = fs.statSync(output).mtimeMs;
  if (!fs.existsSync(statusTable)) return false;
  const inputs = [...sources, internalHeader, path.join(srcDir, 'gen', 'gen.h'), ...lib.inputs, lib.header, __filename];
  return inputs.every((f) => fs.statSync(f).mtimeMs <= built);
}

/** Splits a flags variable on white space (no shell quoting, as make's $(CC)). */
function words(value) {
  return (value || '').trim().split(/\s+/).filter(Boolean);
}

const [cc = 'cc', ...ccArgs] = words(process.env.CC);

/**
 * How a Node addon links on this platform: Node-API's symbols come from the
 * node binary at load time, and what the Rust standard library needs from
 * the system when linked statically (`--print native-static-libs`).
 */
function platformLinkArgs(platform) {
  if (platform === 'darwin') {
    return [
      '-undefined', 'dynamic_lookup',
      '-Wl,-dead_strip',
      // rustls-native-certs reads the keychain through Security.framework.
      '-framework', 'Security', '-framework', 'CoreFoundation',
      '-liconv', '-lm',
    ];
  }
  if (platform === 'win32') {
    fail('building the addon on Windows is not supported by build.js (it drives a Unix cc)');
  }
  // ELF: Linux and the BSDs.
  return [
    // Keep the Rust library's symbols private to the addon.
    '-Wl,--exclude-libs,ALL',
    '-Wl,--gc-sections',
    // Resolve every symbol at load time, so a missing one fails require()
    // loudly instead of the first call.
    '-Wl,-z,now',
    // What the Rust standard library needs from the system (unwinding, time, threads).
    ...(platform === 'linux'
      ? ['-lgcc_s', '-lrt', '-lutil', '-lm', '-ldl', '-lpthread']
      : ['-lexecinfo', '-lgcc_s', '-lrt', '-lutil', '-lm', '-lpthread']),
  ];
}

if (run(cc, [...ccArgs, '--version']) === null) {
  fail(`no C compiler: ${[cc, ...ccArgs].join(' ')} not found (install gcc or clang, or set CC)`);
}
const lib = findLibnatsio();
if (installMode) console.log(`natsio: linking libnatsio from ${lib.what}`);
const args = [
  ...ccArgs,
  '-shared', '-fPIC', '-O2', '-std=c11', '-Wall', '-Wextra', '-Wno-unused-parameter',
  // Sanitized: readable stacks, and the first UB report is fatal like ASan's.
  ...(sanitize ? [`-fsanitize=${sanitize}`, '-fno-sanitize-recover=all', '-fno-omit-frame-pointer', '-g'] : []),
  '-D_GNU_SOURCE', '-Werror=implicit-function-declaration',
  '-fvisibility=hidden',
  ...words(process.env.CFLAGS),
  `-I${nodeApiIncludeDir()}`,
  ...lib.includeDirs.map((d) => `-I${d}`),
  ...sources,
  ...lib.linkArgs,
  ...platformLinkArgs(process.platform),
  ...words(process.env.LDFLAGS),
  '-o', output,
];
const command = [cc, ...args].join(' ');
if (upToDate(command, lib) && !argv.includes('--force')) {
  console.log(`${path.relative(here, output)} is up to date`);
  process.exit(0);
}
fs.mkdirSync(buildDir, { recursive: true });
writeStatusTable(lib.header);
console.log(command);
try {
  execFileSync(cc, args, { stdio: 'inherit' });
} catch {
  fail(`compiling the addon failed (${cc}; see above)`);
}
fs.writeFileSync(commandFile, command);
