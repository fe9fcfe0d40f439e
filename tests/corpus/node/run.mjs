// The nats.js corpus (issue 44): each program here is written for nats.js
// 3.x and imports the official @nats-io/* modules. It runs twice, each time
// against a fresh nats-server (JetStream on): once as written, once with
// only its import specifiers rewritten to natsio's (natsio/transport-node,
// natsio/jetstream, ...). The two outputs must match line for line; lines
// between "[unordered]" and "[/unordered]" (printed by a program where
// order is not defined) are sorted first.
//
//   node tests/corpus/node/run.mjs [program.mjs ...]
//
// Both variants are resolved from bindings/node (the official packages are
// its devDependencies; natsio is the package itself): they are written to
// a bindings/node/.corpus-XXXXXX/ directory and run from there. nats-server comes from
// NATS_SERVER_BIN, else .tools/nats-server-2.14.3/nats-server. Prints
// "corpus programs passed: N" and exits non-zero if any program differs
// or fails. The nats.js run is the reference: when it exits non-zero it is
// run again (REFERENCE_ATTEMPTS in all, each retry logged), since its own
// rare failures are not what the corpus tests; the natsio run is never
// retried (as tests/corpus/go/run.py does for nats.go).

import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
// The Node suite's port picker: below the ephemeral range, where no outgoing
// connection can take the port before the server binds it.
const { freePort } = createRequire(import.meta.url)('../../../bindings/node/test/server.js');
const root = path.resolve(here, '..', '..', '..');
const REFERENCE_ATTEMPTS = 3;
const pkgDir = path.join(root, 'bindings', 'node');
// Set by main(): its own directory per run (runs may overlap), inside the
// package so that both variants resolve from it.
let workDir;
const PROGRAM_TIMEOUT_MS = 60000;

const serverBin =
  process.env.NATS_SERVER_BIN || path.join(root, '.tools', 'nats-server-2.14.3', 'nats-server');

/** The program with its @nats-io/* import specifiers pointed at natsio. */
export function rewriteImports(source) {
  return source.replace(/(["'])@nats-io\/(transport-node|nats-core|jetstream|kv|obj|services)\1/g, '$1natsio/$2$1');
}

/** Output lines, the [unordered] sections sorted. */
export function normalize(text) {
  const out = [];
  let section = null;
  for (const line of text.split('\n')) {
    if (line === '[unordered]') {
      section = [];
      out.push(line);
    } else if (line === '[/unordered]' && section) {
      out.push(...section.sort(), line);
      section = null;
    } else if (section) {
      section.push(line);
    } else {
      out.push(line);
    }
  }
  if (section) out.push(...section.sort());
  return out;
}

function canConnect(port) {
  return new Promise((resolve) => {
    const s = net.connect(port, '127.0.0.1');
    s.once('connect', () => {
      s.destroy();
      resolve(true);
    });
    s.once('error', () => resolve(false));
  });
}

/** A fresh nats-server with JetStream in its own store directory. */
async function startServer() {
  const port = await freePort();
  const store = fs.mkdtempSync(path.join(os.tmpdir(), 'natsio-corpus-'));
  const proc = spawn(serverBin, ['-a', '127.0.0.1', '-p', String(port), '-js', '-sd', store], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  proc.stderr.on('data', (d) => (stderr += d));
  const deadline = Date.now() + 10000;
  while (!(await canConnect(port))) {
    if (proc.exitCode !== null || Date.now() > deadline) {
      proc.kill('SIGKILL');
      throw new Error(`nats-server did not start: ${stderr}`);
    }
    await new Promise((r) => setTimeout(r, 25));
  }
  const stop = () =>
    new Promise((resolve) => {
      const done = () => {
        fs.rmSync(store, { recursive: true, force: true });
        resolve();
      };
      if (proc.exitCode !== null || proc.signalCode !== null) return done();
      proc.once('exit', done);
      proc.kill('SIGTERM');
    });
  return { url: `nats://127.0.0.1:${port}`, stop };
}

function runProgram(file, url) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [file], {
      cwd: workDir,
      env: { ...process.env, NATS_URL: url },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), PROGRAM_TIMEOUT_MS);
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
  });
}

async function runOnFreshServer(file) {
  const server = await startServer();
  try {
    return await runProgram(file, server.url);
  } finally {
    await server.stop();
  }
}

function describe(r) {
  return r.signal ? `killed by ${r.signal} (over ${PROGRAM_TIMEOUT_MS} ms?)` : `exit ${r.code}`;
}

async function main() {
  const names = process.argv.slice(2).map((a) => path.basename(a));
  const programs = (names.length ? names : fs.readdirSync(here).filter((f) => f.endsWith('.mjs') && f !== 'run.mjs')).sort();
  if (!fs.existsSync(serverBin)) {
    console.error(`nats-server not found at ${serverBin}: set NATS_SERVER_BIN or run scripts/install-nats-server.sh`);
    process.exit(2);
  }
  workDir = fs.mkdtempSync(path.join(pkgDir, '.corpus-'));
  let passed = 0;
  const failed = [];
  for (const name of programs) {
    const source = fs.readFileSync(path.join(here, name), 'utf8');
    const rewritten = rewriteImports(source);
    if (rewritten === source || /@nats-io\//.test(rewritten)) {
      failed.push(name);
      console.log(`FAIL ${name}: its imports are not all @nats-io/{transport-node,nats-core,jetstream,kv,obj,services}`);
      continue;
    }
    const official = path.join(workDir, `official-${name}`);
    const ours = path.join(workDir, `natsio-${name}`);
    fs.writeFileSync(official, source);
    fs.writeFileSync(ours, rewritten);
    let a;
    for (let attempt = 1; ; attempt++) {
      a = await runOnFreshServer(official);
      if (a.code === 0 || attempt === REFERENCE_ATTEMPTS) break;
      console.log(`note ${name}: nats.js run ${attempt} of ${REFERENCE_ATTEMPTS}: ${describe(a)}, run again\n${a.stderr}`);
    }
    const b = await runOnFreshServer(ours);
    const problems = [];
    if (a.code !== 0) problems.push(`nats.js run: ${describe(a)}\n${a.stderr}`);
    if (b.code !== 0) problems.push(`natsio run: ${describe(b)}\n${b.stderr}`);
    const la = normalize(a.stdout);
    const lb = normalize(b.stdout);
    if (a.stdout.trim() === '') problems.push('nats.js run printed nothing');
    for (let i = 0; i < Math.max(la.length, lb.length); i++) {
      if (la[i] !== lb[i]) {
        problems.push(`line ${i + 1} differs:\n  nats.js: ${JSON.stringify(la[i])}\n  natsio:  ${JSON.stringify(lb[i])}`);
        break;
      }
    }
    if (problems.length) {
      failed.push(name);
      console.log(`FAIL ${name}\n${problems.join('\n')}`);
    } else {
      passed++;
      console.log(`ok   ${name} (${la.length} lines)`);
    }
  }
  fs.rmSync(workDir, { recursive: true, force: true });
  console.log(`corpus programs passed: ${passed}`);
  if (failed.length) {
    console.log(`corpus programs failed: ${failed.length} (${failed.join(', ')})`);
    process.exit(1);
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await main();
