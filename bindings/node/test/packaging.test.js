'use strict';
// The package as npm users get it: entry points, types and package.json.
// (scripts/test-install-node.sh installs the packed tarball outside the
// tree and runs it.)
const { test } = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');

const dir = path.join(__dirname, '..');
const pkg = require('../package.json');
// By its own name: the package resolves itself through its "exports" map.
const cjs = require('natsio');

test('require and import resolve through "exports": index.mjs names every export of index.js', async () => {
  assert.equal(require.resolve('natsio'), path.join(dir, 'index.js'));
  const esm = await import('natsio');
  const named = Object.keys(esm).filter((k) => k !== 'default');
  assert.deepEqual(named.sort(), Object.keys(cjs).sort(), 'index.mjs must list every export of index.js');
  for (const k of named) assert.equal(esm[k], cjs[k], k);
  assert.equal(esm.default, cjs);
  // One module instance: errors made by either are instances of both.
  assert.ok(new esm.TimeoutError('t') instanceof cjs.TimeoutError);
  assert.ok(new cjs.ObjectDeletedError('d') instanceof esm.ObjectNotFoundError);
});

test('index.d.ts declares every export of index.js, with @types/node referenced and depended on', () => {
  const dts = fs.readFileSync(path.join(dir, 'index.d.ts'), 'utf8');
  const declared = new Set([...dts.matchAll(/^export (?:declare )?(?:abstract )?(?:class|function|const|let) (\w+)/gm)].map((m) => m[1]));
  const missing = Object.keys(cjs).filter((k) => !declared.has(k));
  assert.deepEqual(missing, [], 'exports of index.js missing from index.d.ts');
  assert.match(dts, /^\/\/\/ <reference types="node" \/>$/m);
  assert.ok(pkg.dependencies['@types/node'], '@types/node is a dependency');
});

test('package.json: publishable, entry points shipped, addon built at install time', () => {
  assert.equal(pkg.private, undefined);
  const cargo = fs.readFileSync(path.join(dir, '..', '..', 'Cargo.toml'), 'utf8');
  assert.equal(pkg.version, cargo.match(/^version = "([^"]+)"/m)[1], 'package.json and Cargo.toml versions');
  const entry = pkg.exports['.'];
  assert.deepEqual(Object.keys(entry), ['types', 'import', 'require'], '"types" first, then import and require');
  const shipped = (f) => pkg.files.some((p) => (p.endsWith('/') ? f.startsWith(p) : f === p));
  for (const f of [...Object.values(entry), pkg.main, pkg.types].map((f) => path.normalize(f))) {
    assert.ok(fs.existsSync(path.join(dir, f)), `${f} exists`);
    assert.ok(shipped(f), `${f} is in "files"`);
  }
  for (const f of ['build.js', 'src/addon.c', 'src/internal.h', 'crate/Cargo.toml']) assert.ok(shipped(f), `${f} is in "files"`);
  assert.match(pkg.scripts.install, /build\.js --install/);
  assert.match(pkg.scripts.prepack, /prepack\.js/);
  // Needed at install time, so not devDependencies.
  assert.ok(pkg.dependencies['node-api-headers']);
});
