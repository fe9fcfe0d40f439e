#!/usr/bin/env node
// Builds build/natsio.node with a direct compiler call: no node-gyp, no
// header download. Node-API headers come from the running Node's own
// include directory when it ships them, else from the `node-api-headers`
// npm package (a devDependency). libnatsio is linked statically so the addon
// is self-contained; the Rust library must be built first
// (`cargo build --release` at the repository root).
//
// Environment (for scripts/sanitize.sh; unset for the normal build):
//   NATSIO_NODE_BUILD_DIR  output directory instead of build/ (index.js loads
//                          from the same variable), so an instrumented addon
//                          never replaces the normal one
//   NATSIO_NODE_SANITIZE   -fsanitize= list for the addon's C code, e.g.
//                          "address,undefined" (the Rust archive itself is
//                          not instrumented)
'use strict';
const fs = require('node:fs');
const path = require('node:path');
const { execFileSync } = require('node:child_process');

const here = __dirname;
const root = path.resolve(here, '..', '..');
const targetDir = process.env.CARGO_TARGET_DIR
  ? path.resolve(root, process.env.CARGO_TARGET_DIR)
  : path.join(root, 'target');
const staticLib = path.join(targetDir, 'release', 'libnatsio.a');
const srcDir = path.join(here, 'src');
// Every .c file of src/ (see src/internal.h for which does what).
const sources = fs.readdirSync(srcDir).filter((f) => f.endsWith('.c')).sort().map((f) => path.join(srcDir, f));
const internalHeader = path.join(srcDir, 'internal.h');
const buildDir = process.env.NATSIO_NODE_BUILD_DIR
  ? path.resolve(process.env.NATSIO_NODE_BUILD_DIR)
  : path.join(here, 'build');
const sanitize = process.env.NATSIO_NODE_SANITIZE || '';
const output = path.join(buildDir, 'natsio.node');
const header = path.join(root, 'include', 'natsio.h');
const statusTable = path.join(buildDir, 'status-codes.json');
// The compiler command of the last build: a change of flags rebuilds.
const commandFile = path.join(buildDir, 'build-command.txt');

// The error classes of index.js are derived from the header's
// natsio_status enum, so every status code (present and future) maps to
// exactly one class: [[status, CODE, description], ...].
function writeStatusTable() {
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
    throw new Error('node_api.h not found: install Node headers or run npm install (node-api-headers)');
  }
}

function upToDate(command) {
  if (!fs.existsSync(output)) return false;
  if (!fs.existsSync(commandFile) || fs.readFileSync(commandFile, 'utf8') !== command) return false;
  const built = fs.statSync(output).mtimeMs;
  if (!fs.existsSync(statusTable)) return false;
  const inputs = [...sources, internalHeader, staticLib, header, __filename];
  return inputs.every((f) => fs.statSync(f).mtimeMs <= built);
}

if (!fs.existsSync(staticLib)) {
  console.error(`${staticLib} is missing: run "cargo build --release" in ${root} first`);
  process.exit(1);
}
const cc = process.env.CC || 'cc';
const args = [
  '-shared', '-fPIC', '-O2', '-std=c11', '-Wall', '-Wextra', '-Wno-unused-parameter',
  // Sanitized: readable stacks, and the first UB report is fatal like ASan's.
  ...(sanitize ? [`-fsanitize=${sanitize}`, '-fno-sanitize-recover=all', '-fno-omit-frame-pointer', '-g'] : []),
  '-D_GNU_SOURCE', '-Werror=implicit-function-declaration',
  '-fvisibility=hidden',
  `-I${nodeApiIncludeDir()}`,
  `-I${path.join(root, 'include')}`,
  ...sources,
  staticLib,
  // Keep the Rust library's symbols private to the addon.
  '-Wl,--exclude-libs,ALL',
  '-Wl,--gc-sections',
  // Resolve every symbol at load time, so a missing one fails require()
  // loudly instead of the first call.
  '-Wl,-z,now',
  // What the Rust standard library needs from the system (unwinding, time, threads).
  '-lgcc_s', '-lrt', '-lutil', '-lm', '-ldl', '-lpthread',
  '-o', output,
];
const command = [cc, ...args].join(' ');
if (upToDate(command) && !process.argv.includes('--force')) {
  console.log(`${path.relative(here, output)} is up to date`);
  process.exit(0);
}
fs.mkdirSync(buildDir, { recursive: true });
writeStatusTable();
console.log(command);
execFileSync(cc, args, { stdio: 'inherit' });
fs.writeFileSync(commandFile, command);
