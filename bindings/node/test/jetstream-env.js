'use strict';
// Shared setup of the JetStream test files: a real nats-server with
// JetStream enabled (store in a temporary directory), a connection and a
// JetStream context, plus small assertion helpers. Not a test file itself
// (the test script runs test/*.test.js only).
const { before, after } = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const nats = require('..');
const { startServer } = require('./server');

/** Starts the server (store dir named `prefix`XXXXXX), connects and opens a
 * JetStream context: {server, nc, js, stop()}. stop() closes all and
 * removes the store; a failed start cleans up what it made. */
async function startJetStream(prefix) {
  const env = { server: undefined, nc: undefined, js: undefined, storeDir: undefined };
  env.stop = async () => {
    env.js?.close();
    await env.nc?.close();
    await env.server?.stop();
    if (env.storeDir) fs.rmSync(env.storeDir, { recursive: true, force: true });
  };
  try {
    env.storeDir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
    env.server = await startServer(['-js', '-sd', env.storeDir]);
    env.nc = await nats.connect({ servers: env.server.url });
    env.js = env.nc.jetstream();
  } catch (e) {
    await env.stop();
    throw e;
  }
  return env;
}

/** Runs a JetStream server for the calling test file: started before its
 * tests (onReady gets {server, nc, js}), stopped after them. */
function useJetStream(prefix, onReady) {
  let env;
  before(async () => {
    env = await startJetStream(prefix);
    onReady(env);
  });
  after(() => env?.stop());
}

/** Asserts that `promise` rejects with an instance of `cls` (and, if given,
 * a message containing `text`). */
async function rejectsWith(promise, cls, text) {
  await assert.rejects(promise, (e) => {
    assert.ok(e instanceof cls, `expected ${cls.name}, got ${e?.name}: ${e?.message}`);
    if (text) assert.match(e.message, new RegExp(text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')));
    return true;
  });
}

/** What a user reads of an error: its class name and message. */
const described = (e) => `${e?.name}: ${e?.message}`;

/** The error `fn` throws or its promise rejects with, described ('no
 * error' if none): what side-by-side tests compare between clients. */
async function failure(fn) {
  try {
    await fn();
  } catch (e) {
    return described(e);
  }
  return 'no error';
}

module.exports = { useJetStream, rejectsWith, described, failure };
