'use strict';
// The asynchronous model of the binding, against a real nats-server with
// JetStream: operations in flight cost no thread, waiting loops hold no
// threadpool thread, consume and watch deliver what the library buffered
// while the reader was away, and no callback runs after unsubscribe/stop.
const { test } = require('node:test');
const assert = require('node:assert/strict');
const crypto = require('node:crypto');
const fs = require('node:fs');
const nats = require('..');
const { useJetStream } = require('./jetstream-env');
const { collectUntil, settledHandles } = require('./gc');
const { sleep, eventually } = require('./wait');

let server;
let nc;
let js;
useJetStream('natsio-node-model-', (env) => ({ server, nc, js } = env));

/** The process's OS thread count (Threads: in /proc/self/status). */
function threadCount() {
  return Number(fs.readFileSync('/proc/self/status', 'latin1').match(/^Threads:\s+(\d+)/m)[1]);
}

/** Resolves with the promise's value, or rejects after `ms`. */
function within(promise, ms, what) {
  let timer;
  return Promise.race([
    promise,
    new Promise((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${what}: not within ${ms} ms`)), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}

test('10,000 KV gets in flight at once: the thread count does not grow with them', async () => {
  const kv = await js.kv.create({ bucket: 'PAR', storage: 'memory' });
  try {
    const keys = 50;
    for (let i = 0; i < keys; i++) await kv.put(`k${i}`, `v${i}`);
    await kv.get('k0'); // every lazily started library thread is up
    const idle = threadCount();
    let peak = idle;
    const timer = setInterval(() => (peak = Math.max(peak, threadCount())), 2);
    const n = 10_000;
    const gets = [];
    for (let i = 0; i < n; i++) gets.push(kv.get(`k${i % keys}`));
    const atIssue = threadCount(); // all 10,000 are in flight now
    const entries = await Promise.all(gets);
    clearInterval(timer);
    peak = Math.max(peak, atIssue, threadCount());
    if (process.env.NATSIO_NODE_DEBUG) console.log({ idle, atIssue, peak });
    assert.equal(entries.length, n);
    entries.forEach((e, i) => assert.equal(e.string(), `v${i % keys}`));
    // A thread per waiting call would add thousands; allow a few for
    // anything the runtime or Node starts on its own.
    assert.ok(peak <= idle + 4, `threads: idle ${idle}, peak ${peak} with ${n} gets in flight`);
  } finally {
    kv.close();
    await js.kv.delete('PAR');
  }
});

test('more waiting consume and watch loops than the libuv threadpool has threads all make progress', async () => {
  const loops = 6; // of each kind; libuv's pool has 4 threads by default
  await js.streams.add({ name: 'MANY', subjects: ['MANY.>'], storage: 'memory' });
  const kv = await js.kv.create({ bucket: 'MANY', storage: 'memory' });
  const iters = [];
  try {
    for (let i = 0; i < loops; i++) {
      await js.consumers.add('MANY', { durable_name: `c${i}`, ack_policy: 'explicit', filter_subject: `MANY.${i}` });
      iters.push(await js.consume('MANY', `c${i}`, { expires: 2000 }));
      iters.push(await kv.watch({ key: `k${i}` }));
    }
    const got = iters.map(() => []);
    const running = iters.map((it, j) =>
      (async () => {
        for await (const x of it) {
          got[j].push(x.string());
          if (x instanceof nats.JsMsg) x.ack();
        }
      })(),
    );
    await sleep(200); // every loop waits now
    // The threadpool is free meanwhile: 8 jobs on its 4 threads finish at once.
    const t0 = Date.now();
    await within(
      Promise.all(Array.from({ length: 8 }, () => new Promise((r, j) => crypto.pbkdf2('p', 's', 1000, 32, 'sha256', (e) => (e ? j(e) : r()))))),
      2000,
      'threadpool jobs while the loops wait',
    );
    const poolMs = Date.now() - t0;
    for (let round = 0; round < 3; round++) {
      for (let i = 0; i < loops; i++) {
        await js.publish(`MANY.${i}`, `m${round}`);
        await kv.put(`k${i}`, `w${round}`);
      }
    }
    await eventually(() => got.every((g) => g.length === 3), 5000, 'every loop got its three items');
    got.forEach((g, j) => assert.deepEqual(g, j % 2 === 0 ? ['m0', 'm1', 'm2'] : ['w0', 'w1', 'w2'], `loop ${j}`));
    assert.ok(poolMs < 2000, `threadpool jobs took ${poolMs} ms`);
    for (const it of iters) it.stop();
    await within(Promise.all(running), 2000, 'loops end after stop');
  } finally {
    for (const it of iters) it.stop();
    kv.close();
    await js.kv.delete('MANY');
    await js.streams.delete('MANY');
  }
});

test('consume delivers what was published while the reader was away, in order', async () => {
  await js.streams.add({ name: 'AWAY', subjects: ['AWAY.>'], storage: 'memory' });
  try {
    await js.consumers.add('AWAY', { durable_name: 'c', ack_policy: 'explicit', ack_wait: '30s' });
    const msgs = await js.consume('AWAY', 'c', { maxMessages: 50, expires: 1000 });
    const first = await within((async () => {
      await js.publish('AWAY.x', 'm0');
      return msgs.next();
    })(), 3000, 'first message');
    first.value.ack();
    const n = 300; // more than the consume's buffer and the binding's window
    for (let i = 1; i <= n; i++) await js.publish(`AWAY.${i % 5}`, `m${i}`);
    await sleep(1500); // past a pull expiry: the library kept pulling meanwhile
    let i = 1;
    for await (const m of msgs) {
      assert.equal(m.string(), `m${i}`);
      assert.equal(m.info.streamSequence, i + 1);
      m.ack();
      if (++i > n) break;
    }
    assert.equal(i, n + 1);
    await eventually(async () => (await js.consumers.info('AWAY', 'c')).num_ack_pending === 0, 3000, 'acks');
  } finally {
    await js.streams.delete('AWAY');
  }
});

test('no callback runs after unsubscribe() returns, while messages keep coming', async () => {
  const pub = await nats.connect({ servers: server.url });
  try {
    let calls = 0;
    let after = 0;
    let unsubscribed = false;
    const sub = nc.subscribe('flow.cb', {
      callback: () => {
        calls++;
        if (unsubscribed) after++;
      },
    });
    await nc.flush();
    let publishing = true;
    const publisher = (async () => {
      while (publishing) {
        for (let i = 0; i < 500; i++) pub.publish('flow.cb', 'x');
        await pub.flush();
      }
    })();
    await eventually(() => calls > 2000, 5000, 'messages flowing');
    sub.unsubscribe(); // from outside the callback, with batches on their way
    unsubscribed = true;
    await sleep(200);
    publishing = false;
    await publisher;
    await pub.flush();
    await sleep(50); // an absence: no callback within 50 ms
    assert.equal(after, 0, `${after} callbacks after unsubscribe returned`);
    assert.equal(sub.isClosed, true);
  } finally {
    await pub.close();
  }
});

test('no item is yielded after stop() of a consume or watch that is receiving', async () => {
  await js.streams.add({ name: 'STOPF', subjects: ['STOPF.>'], storage: 'memory' });
  const kv = await js.kv.create({ bucket: 'STOPF', storage: 'memory' });
  try {
    await js.consumers.add('STOPF', { durable_name: 'c', ack_policy: 'none' });
    const msgs = await js.consume('STOPF', 'c', { maxMessages: 100, expires: 2000 });
    const w = await kv.watch();
    const pubs = [];
    for (let i = 0; i < 500; i++) {
      pubs.push(js.publishAsync('STOPF.x', String(i)));
      pubs.push(kv.put(`k${i % 10}`, String(i)));
    }
    const seen = { msgs: 0, w: 0 };
    const stoppedAt = {};
    const loops = [
      (async () => {
        for await (const _m of msgs) {
          if (++seen.msgs === 50) {
            msgs.stop();
            stoppedAt.msgs = seen.msgs;
          }
        }
      })(),
      (async () => {
        for await (const _e of w) {
          if (++seen.w === 20) {
            w.stop();
            stoppedAt.w = seen.w;
          }
        }
      })(),
    ];
    await Promise.all(pubs);
    // A generous bound on the event (a loaded CI machine took more than 3 s).
    await within(Promise.all(loops), 20000, 'loops end');
    await sleep(100); // an absence: no item after stop within 100 ms
    assert.deepEqual(seen, stoppedAt);
    assert.equal(await msgs.closed, undefined);
    assert.equal(await w.closed, undefined);
  } finally {
    kv.close();
    await js.kv.delete('STOPF');
    await js.streams.delete('STOPF');
  }
});

test('a for-await loop over an otherwise unreferenced watch survives garbage collection while it waits', async () => {
  const kv = await js.kv.create({ bucket: 'GCLOOP', storage: 'memory' });
  try {
    const before = await settledHandles();
    const first = (async () => {
      for await (const e of await kv.watch({ key: 'later' })) return [e.key, e.string()];
      return null;
    })();
    // A watch nobody loops over, dropped once both exist: the collections
    // below free it, so they would free the waiting loop's watch too if
    // that were not held.
    let dropped = await kv.watch({ key: 'never' });
    await collectUntil((l) => l.watches === before.watches + 2, 'both watches to exist');
    await sleep(200);
    dropped = null;
    await collectUntil((l) => l.watches === before.watches + 1, 'the dropped watch (only)');
    await kv.put('later', 'v');
    assert.deepEqual(await within(first, 3000, 'entry after gc'), ['later', 'v']);
    // The loop returned, which stopped its watch: now it is freed too.
    await collectUntil((l) => l.watches === before.watches, "the loop's watch after the loop");
  } finally {
    kv.close();
    await js.kv.delete('GCLOOP');
  }
});

test('deleting a watched bucket ends the watch with BucketNotFoundError', async () => {
  const kv = await js.kv.create({ bucket: 'GONE', storage: 'memory' });
  await kv.put('a', '1');
  const w = await kv.watch();
  const keys = [];
  const loop = (async () => {
    for await (const e of w) keys.push(e.key);
  })();
  loop.catch(() => {}); // it may reject before the delete call returns
  await within(w.initialized, 2000, 'initialized');
  await js.kv.delete('GONE');
  await assert.rejects(within(loop, 5000, 'loop end'), nats.BucketNotFoundError);
  assert.deepEqual(keys, ['a']);
  assert.ok((await w.closed) instanceof nats.BucketNotFoundError);
  kv.close();
});
