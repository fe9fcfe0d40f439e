'use strict';
// The binding's own machinery under stress: the hub (src/hub.c) settling
// many operations while close() or a worker's teardown races their
// completions, and a feed's window (src/feed.c) holding a lagging reader's
// backlog in the library, not in JavaScript.
const { test } = require('node:test');
const assert = require('node:assert/strict');
const path = require('node:path');
const { Worker } = require('node:worker_threads');
const nats = require('..');
const { useJetStream } = require('./jetstream-env');
const { eventually, within } = require('./wait');

let server;
let js;
useJetStream('natsio-node-stress-', (env) => ({ server, js } = env));

test('close() with requests and flushes in flight, racing their replies: each settles once, with its own reply or ConnectionClosedError', async (t) => {
  const responder = await nats.connect({ servers: server.url });
  // Replies spread over about 100 ms, so that they keep arriving while the
  // client closes (answered at once, all would come in one turn). A reply
  // after the responder closed is dropped.
  const respondLater = (m) => {
    try {
      m.respond(m.data);
    } catch (e) {
      if (!(e instanceof nats.ConnectionClosedError)) throw e;
    }
  };
  responder.subscribe('stress.echo', { callback: (_e, m) => setTimeout(respondLater, Math.random() * 100, m) });
  responder.subscribe('stress.silent'); // holds its requests unanswered
  await responder.flush();
  const nc = await nats.connect({ servers: server.url });
  try {
    const n = 600;
    let settled = 0;
    const outcomes = { replied: 0, closed: 0 };
    const wrong = [];
    const track = (p, what, want) =>
      p.then(
        (v) => {
          settled++;
          if (want !== undefined && v.string() !== want) wrong.push(`${what}: reply ${v.string()}`);
          outcomes.replied++;
          // Close from the settling of one of the requests: the rest are
          // in flight, their replies arriving.
          if (want !== undefined && ++requestsReplied === closeAfter) closing = nc.close();
        },
        (e) => {
          settled++;
          if (e instanceof nats.ConnectionClosedError) outcomes.closed++;
          else wrong.push(`${what}: ${e?.name}: ${e?.message}`);
        },
      );
    const closeAfter = n / 4;
    let closing;
    let requestsReplied = 0;
    const all = [];
    for (let i = 0; i < n; i++) {
      all.push(track(nc.request('stress.echo', `r${i}`, { timeout: 60000 }), `request r${i}`, `r${i}`));
      if (i % 4 === 0) all.push(track(nc.flush(), `flush ${i}`));
      if (i % 20 === 0) all.push(track(nc.request('stress.silent', `s${i}`, { timeout: 60000 }), `silent s${i}`, `s${i}`));
    }
    await within(Promise.all(all), 30000, 'every operation settled after close');
    assert.ok(closing, 'closed while replies were arriving');
    await closing;
    assert.deepEqual(wrong, []);
    assert.equal(settled, all.length, 'each operation settled exactly once');
    t.diagnostic(`${outcomes.replied} resolved (${requestsReplied} requests), ${outcomes.closed} ended by the close`);
    // The silent ones were all pending at close (and, most runs, some of
    // the others: the diagnostic line says how many).
    assert.ok(outcomes.closed >= Math.ceil(n / 20), `${outcomes.closed} ended by the close`);
    // Settled promises stay settled: nothing is delivered after close.
    await new Promise((r) => setImmediate(r));
    assert.equal(settled, all.length);
  } finally {
    await nc.close();
    await responder.close();
  }
});

test('workers terminated with operations in flight: the hub tears down while completions keep coming', async () => {
  const main = await nats.connect({ servers: server.url });
  main.subscribe('main.svc', { callback: (_e, m) => m.respond(m.data) });
  main.subscribe('main.silent', { callback: () => {} });
  await main.flush();
  try {
    for (let round = 0; round < 4; round++) {
      const exit = await within(
        new Promise((resolve, reject) => {
          const w = new Worker(path.join(__dirname, 'fixtures', 'worker-inflight.js'), {
            workerData: { url: server.url, n: 300 },
          });
          w.on('message', (m) => {
            if (m === 'replies arriving') w.terminate();
            else reject(new Error(`round ${round}: ${JSON.stringify(m)}`));
          });
          w.on('error', reject);
          w.on('exit', resolve);
        }),
        30000,
        `round ${round}: the worker's exit`,
      );
      assert.equal(exit, 1, `round ${round}: terminated`);
    }
    // This thread's hub and connection are unaffected.
    assert.equal((await main.request('main.svc', 'still here', { timeout: 10000 })).string(), 'still here');
  } finally {
    await main.close();
  }
});

test("a watcher's window holds a lagging reader's backlog in the library (at most the window in JavaScript), then delivers all of it in order", async (t) => {
  const changes = 1000;
  const window = 256; // index.js DEFAULT_WINDOW
  const kv = await js.kv.create({ bucket: 'WINDOW', history: 1, storage: 'memory' });
  try {
    const w = await kv.watch();
    const it = w[Symbol.asyncIterator]();
    const first = it.next(); // the (empty) initial values, then the first change
    assert.equal(await within(w.initialized, 10000, 'initialized'), true);
    // A key each: with history 1, a revision the watcher has not pulled
    // yet is gone once its key is written again, so keys written over
    // would make what arrives depend on how fast the watcher pulls.
    for (let i = 0; i < changes; i++) await kv.put(`k${i}`, `v${i}`);
    // Every change pulled: what JavaScript does not hold stays pending in
    // the library, and what it was handed is bounded by the window (one
    // more may sit in the library's callback, counted by both sides).
    const st = await eventually(() => {
      const s = w.stats();
      return s.delivered + s.pendingMsgs >= changes ? s : null;
    }, 60000, 'the changes pulled', () => JSON.stringify(w.stats()));
    t.diagnostic(`while nobody reads: ${JSON.stringify(st)}`);
    assert.ok(st.delivered <= window + 2, `handed to JavaScript while nobody reads: ${JSON.stringify(st)}`);
    assert.ok(st.pendingMsgs >= changes - window - 2, `kept in the library: ${JSON.stringify(st)}`);
    const got = [(await within(first, 10000, 'first change')).value.string()];
    while (got.length < changes) {
      const { value, done } = await within(it.next(), 10000, `change ${got.length + 1}`);
      assert.equal(done, false);
      got.push(value.string());
    }
    assert.deepEqual(got, Array.from({ length: changes }, (_, i) => `v${i}`), 'every change, in order');
    const end = w.stats();
    assert.equal(end.dropped, 0);
    assert.equal(end.pendingMsgs, 0);
    w.stop();
    assert.deepEqual(await it.next(), { value: undefined, done: true });
  } finally {
    kv.close();
    await js.kv.delete('WINDOW');
  }
});
