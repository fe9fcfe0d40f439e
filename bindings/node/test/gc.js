'use strict';
// Leak checks of the garbage-collection tests: the addon's count of native
// handles not freed yet, and collections until an expected count is seen
// (node-api finalizers run from the event loop after a collection, so each
// round also yields to it).
const assert = require('node:assert/strict');
const nats = require('..');

/** {clients, jetstream, kv, jsMsgs, subscriptions, replies, consumes, watches,
 * objectStores, objectInfos, objectReaders, objectWriters, objectWatches,
 * storedMsgs, keyListers} */
const liveHandles = nats[Symbol.for('natsio.liveHandles')];

function requireGc() {
  assert.equal(typeof global.gc, 'function', 'run with --expose-gc');
}

async function collectOnce() {
  global.gc();
  await new Promise(setImmediate);
  await new Promise((r) => setTimeout(r, 10));
}

/** Collects until `cond(liveHandles())` holds; fails after 10 s. */
async function collectUntil(cond, what) {
  requireGc();
  const deadline = Date.now() + 10000;
  for (;;) {
    await collectOnce();
    const live = liveHandles();
    if (cond(live)) return live;
    if (Date.now() > deadline) assert.fail(`not freed: ${what} (live handles ${JSON.stringify(live)})`);
  }
}

/** The live handles once collections no longer free any: the baseline of
 * a test (garbage of earlier tests is gone by then). */
async function settledHandles() {
  requireGc();
  let last = JSON.stringify(liveHandles());
  for (let same = 0, rounds = 0; same < 3 && rounds < 200; rounds++) {
    await collectOnce();
    const now = JSON.stringify(liveHandles());
    same = now === last ? same + 1 : 0;
    last = now;
  }
  return JSON.parse(last);
}

module.exports = { liveHandles, collectUntil, settledHandles };
