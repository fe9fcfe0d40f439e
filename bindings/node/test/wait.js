'use strict';
// Waiting in tests: a pause, and polling for a condition with a deadline.

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

module.exports = { sleep, eventually };
