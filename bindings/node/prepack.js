#!/usr/bin/env node
// npm pack / npm publish: ships the Rust crate inside the package, so an
// install with no libnatsio on the system can build it (build.js --install).
//
//   node prepack.js          (prepack) copies Cargo.toml, Cargo.lock,
//                            build.rs, cbindgen.toml, src/ and include/ of
//                            the repository root into crate/ (gitignored)
//                            and the repository's LICENSE into the package
//   node prepack.js --clean  (postpack) removes crate/ and LICENSE again
//
// The copied Cargo.toml gets an empty [workspace] table: the crate is its
// own workspace, wherever the package is installed (even inside a user's
// cargo workspace).
'use strict';
const fs = require('node:fs');
const path = require('node:path');

const here = __dirname;
const root = path.resolve(here, '..', '..');
const crate = path.join(here, 'crate');
const ENTRIES = ['Cargo.toml', 'Cargo.lock', 'build.rs', 'cbindgen.toml', 'src', 'include', 'LICENSE'];

const license = path.join(here, 'LICENSE');
fs.rmSync(crate, { recursive: true, force: true });
fs.rmSync(license, { force: true });
if (process.argv.includes('--clean')) process.exit(0);

for (const entry of ENTRIES) {
  if (!fs.existsSync(path.join(root, entry))) {
    console.error(`prepack: ${path.join(root, entry)} is missing: npm pack runs in bindings/node of a libnatsio checkout`);
    process.exit(1);
  }
}
const version = fs.readFileSync(path.join(root, 'Cargo.toml'), 'utf8').match(/^version\s*=\s*"([^"]+)"/m)?.[1];
const pkg = require('./package.json');
if (version !== pkg.version) {
  console.error(`prepack: Cargo.toml says version ${version}, package.json ${pkg.version}: make them agree`);
  process.exit(1);
}
fs.mkdirSync(crate);
for (const entry of ENTRIES) {
  fs.cpSync(path.join(root, entry), path.join(crate, entry), { recursive: true });
}
fs.copyFileSync(path.join(root, 'LICENSE'), license);
const manifest = path.join(crate, 'Cargo.toml');
fs.appendFileSync(manifest, '\n# Added by bindings/node/prepack.js: this copy is a workspace of its own.\n[workspace]\n');
console.error(`prepack: copied ${ENTRIES.join(', ')} into ${path.relative(process.cwd(), crate) || '.'}/`);
