'use strict';
// Waiting in tests: a pause, polling for a condition with a deadline, and
// a message's round trip through the server.

const assert = require('node:assert/strict');

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// Resolves with fn()'s first truthy value (fn may be async), asking every
// 10 ms; rejects after `ms` naming `what`, and what detail() says if given.
async function eventually(fn, ms, what, detail = null) {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > deadline) {
      throw new Error(`${what}: not within ${ms} ms${detail ? `: ${detail()}` : ''}`);
    }
    await sleep(10);
  }
}

// Resolves as `promise` does; rejects naming `what` if it has not settled
// after `ms` (a generous bound on an event, not a measurement).
function within(promise, ms, what) {
  let timer;
  const bound = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: not within ${ms} ms`)), ms);
  });
  return Promise.race([promise, bound]).finally(() => clearTimeout(timer));
}

// Subscribes to `subject`, publishes 'hi' there and waits (2 s) for it to
// come back: the connection `nc` works end to end.
async function roundTrip(nc, subject) {
  const sub = nc.subscribe(subject);
  await nc.flush();
  nc.publish(subject, 'hi');
  const { value } = await sub.next(2000);
  assert.equal(value.string(), 'hi');
  sub.unsubscribe();
}

module.exports = { sleep, eventually, within, roundTrip };
