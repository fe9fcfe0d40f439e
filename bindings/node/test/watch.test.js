'use strict';
// Continuous consumption (js.consume) and KV watches (kv.watch) against a
// real nats-server with JetStream enabled.
const { test } = require('node:test');
const assert = require('node:assert/strict');
const nats = require('..');
const { runNodeFixture } = require('./server');
const { useJetStream, rejectsWith } = require('./jetstream-env');
const { liveHandles, collectUntil, settledHandles } = require('./gc');
const { sleep, eventually } = require('./wait');

let server;
let nc;
let js;
useJetStream('natsio-node-watch-', (env) => ({ server, nc, js } = env));

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

/** Polls `fn` until it returns truthy (or fails after `ms`). */

async function streamWithConsumer(name) {
  await js.streams.add({ name, subjects: [`${name}.>`], storage: 'memory' });
  await js.consumers.add(name, { durable_name: 'c', ack_policy: 'explicit', ack_wait: '30s' });
}

/** Entries as [key, value, operation]. */
const kvt = (e) => [e.key, e.string(), e.operation];

test('consume: many messages in order, acked, across batches; break stops and frees', async () => {
  await streamWithConsumer('CM');
  try {
    const n = 1000;
    const pubs = [];
    for (let i = 0; i < n; i++) pubs.push(js.publishAsync(`CM.${i % 3}`, String(i), { headers: { Idx: String(i) } }));
    await Promise.all(pubs);
    const msgs = await js.consume('CM', 'c', { maxMessages: 100, expires: 2000 });
    assert.ok(msgs instanceof nats.ConsumerMessages);
    assert.equal(msgs.stream, 'CM');
    assert.equal(msgs.consumer, 'c');
    let i = 0;
    for await (const m of msgs) {
      assert.ok(m instanceof nats.JsMsg);
      assert.equal(m.string(), String(i));
      assert.equal(m.subject, `CM.${i % 3}`);
      assert.equal(m.headers.first('Idx'), String(i));
      assert.equal(m.info.streamSequence, i + 1);
      assert.equal(m.info.deliveryCount, 1);
      m.ack();
      if (++i === n) break;
    }
    assert.equal(i, n);
    assert.equal(msgs.isClosed, true);
    assert.equal(await within(msgs.closed, 2000, 'closed after break'), undefined);
    assert.deepEqual(await msgs.next(), { value: undefined, done: true });
    const info = await eventually(async () => {
      const ci = await js.consumers.info('CM', 'c');
      return ci.ack_floor.stream_seq === n && ci;
    }, 3000, 'every ack reached the server');
    assert.equal(info.num_ack_pending, 0);
    assert.equal(info.num_pending, 0);
  } finally {
    await js.streams.delete('CM');
  }
});

test('consume goes on across idle periods longer than the pull expiry, without blocking the event loop', async () => {
  await streamWithConsumer('CI');
  try {
    const msgs = await js.consume('CI', 'c', { expires: 1000, heartbeat: 500 });
    await js.publish('CI.a', 'first');
    const first = await within(msgs.next(), 3000, 'first message');
    assert.equal(first.value.string(), 'first');
    first.value.ack();
    // A read is pending across 2.5 s (two and a half request lifetimes):
    // timers keep firing and other library calls still complete.
    const pending = msgs.next();
    let ticks = 0;
    const timer = setInterval(() => ticks++, 100);
    const t0 = Date.now();
    for (let k = 0; k < 5; k++) {
      await sleep(500);
      await within(js.streams.info('CI'), 1500, 'a stream info while consuming');
    }
    clearInterval(timer);
    assert.ok(ticks >= 15, `the event loop ran timers (${ticks} ticks in ${Date.now() - t0} ms)`);
    const t1 = Date.now();
    await js.publish('CI.b', 'late');
    const late = await within(pending, 3000, 'message after the idle period');
    assert.equal(late.done, false);
    assert.equal(late.value.string(), 'late');
    assert.ok(Date.now() - t1 < 1500, 'delivered promptly');
    late.value.ack();
    msgs.stop();
    await msgs.closed;
  } finally {
    await js.streams.delete('CI');
  }
});

test('stop() ends a waiting for-await loop promptly, also from inside the loop; unacked messages come back', async () => {
  await streamWithConsumer('CS');
  try {
    const msgs = await js.consume('CS', 'c', { expires: 5000 });
    const got = [];
    const loop = (async () => {
      for await (const m of msgs) got.push(m.string());
      return 'ended';
    })();
    await sleep(300);
    const t0 = Date.now();
    msgs.stop();
    assert.equal(await within(loop, 500, 'loop end after stop'), 'ended');
    // The pending read was woken (not left to its slice) and the handle freed.
    assert.equal(await within(msgs.closed, 700, 'closed after stop'), undefined);
    assert.ok(Date.now() - t0 < 700);
    assert.deepEqual(got, []);
    msgs.stop(); // idempotent

    for (let i = 0; i < 5; i++) await js.publish(`CS.${i}`, `m${i}`);
    const again = await js.consume('CS', 'c', { maxMessages: 10, expires: 2000 });
    const seen = [];
    for await (const m of again) {
      seen.push(m.string());
      if (seen.length === 2) {
        m.ack();
        again.stop(); // from the loop body: the loop ends, no error
      } else if (seen.length === 1) {
        m.ack();
      }
    }
    assert.deepEqual(seen, ['m0', 'm1']);
    await again.closed;
    // m2..m4 were buffered but never yielded, so never acked: a consumer
    // with a short ack wait gets them redelivered.
    await js.consumers.update('CS', { durable_name: 'c', ack_policy: 'explicit', ack_wait: '1s' });
    const third = await js.consume('CS', 'c', { expires: 2000 });
    const rest = [];
    for await (const m of third) {
      rest.push(m.string());
      m.ack();
      if (rest.length === 3) break;
    }
    assert.deepEqual(rest, ['m2', 'm3', 'm4']);
  } finally {
    await js.streams.delete('CS');
  }
});

test('deleting the consumer ends the iteration with ConsumerDeletedError', async () => {
  await streamWithConsumer('CD');
  try {
    await js.publish('CD.x', 'one');
    // Requests of 30 s with 5 s heartbeats: the deletion meets the open one
    // (the server's 409 on it). With short ones a request could expire just
    // before the delete and the next pull find no consumer (ConsumerNotFoundError).
    const msgs = await js.consume('CD', 'c', { expires: 30000, heartbeat: 5000 });
    const got = [];
    const loop = (async () => {
      for await (const m of msgs) {
        got.push(m.string());
        m.ack();
      }
    })();
    loop.catch(() => {}); // it may reject before the delete call returns
    // Delete once the loop has the message and the pull waits on the server.
    await eventually(async () => got.length === 1 && (await js.consumers.info('CD', 'c')).num_waiting >= 1, 10000,
      'the message read and the pull waiting on the server');
    await js.consumers.delete('CD', 'c');
    // Ended by the deletion: the request's expiry is 30 s away.
    await assert.rejects(within(loop, 20000, 'loop end after the deletion'), (e) => {
      assert.ok(e instanceof nats.ConsumerDeletedError, `${e?.name}: ${e?.message}`);
      assert.equal(e.status, 512);
      assert.match(e.message, /consumer "c" was deleted/);
      return true;
    });
    assert.deepEqual(got, ['one']);
    const closedWith = await msgs.closed;
    assert.ok(closedWith instanceof nats.NatsError, 'closed resolves with the error');
    // The error is thrown once; then the iterator is done.
    assert.deepEqual(await msgs.next(), { value: undefined, done: true });
  } finally {
    await js.streams.delete('CD');
  }
});

test('consume rejects: missing consumer or stream, bad options', async () => {
  await streamWithConsumer('CX');
  try {
    await rejectsWith(js.consume('CX', 'nope'), nats.ConsumerNotFoundError);
    await rejectsWith(js.consume('NOSUCH', 'c'), nats.StreamNotFoundError);
    await rejectsWith(js.consume('CX', 'c', { expires: 2000, heartbeat: 1500 }), nats.InvalidArgumentError);
    await rejectsWith(js.consume('CX', 'c', { maxMessages: -1 }), nats.InvalidArgumentError);
    await rejectsWith(js.consume('a.b', 'c'), nats.InvalidArgumentError);
    await assert.rejects(js.consume('CX', 'c', { maxMessages: 'many' }), TypeError);
    await assert.rejects(js.consume('CX', 'c', 'fast'), TypeError);
    await assert.rejects(js.consume('CX'), TypeError);
    await assert.rejects(js.consume(1, 'c'), TypeError);
  } finally {
    await js.streams.delete('CX');
  }
});

test('watch: initial values, then initialized, then puts, deletes and purges as they happen', async () => {
  const kv = await js.kv.create({ bucket: 'W', history: 5, storage: 'memory' });
  try {
    await kv.put('a.1', 'x1');
    await kv.put('a.1', 'x2');
    await kv.put('b.1', 'y');
    const w = await kv.watch();
    assert.ok(w instanceof nats.KvWatcher);
    assert.equal(w.bucket, 'W');
    let initialized = false;
    w.initialized.then((v) => (initialized = v));
    const it = w[Symbol.asyncIterator]();
    const e1 = (await it.next()).value;
    const e2 = (await it.next()).value;
    assert.ok(e1 instanceof nats.KvEntry);
    assert.deepEqual([kvt(e1), kvt(e2)], [
      ['a.1', 'x2', 'PUT'],
      ['b.1', 'y', 'PUT'],
    ]);
    assert.equal(e1.bucket, 'W');
    assert.equal(e1.revision, 2);
    assert.equal(e2.revision, 3);
    assert.equal(initialized, false, 'not initialized while initial values are yielded');
    const pending = it.next(); // passes the marker, then waits for a change
    assert.equal(await within(w.initialized, 2000, 'initialized'), true);
    await kv.put('c', 'z');
    assert.deepEqual(kvt((await within(pending, 2000, 'put')).value), ['c', 'z', 'PUT']);
    await kv.delete('a.1');
    const del = (await within(it.next(), 2000, 'delete')).value;
    assert.deepEqual([del.key, del.operation, del.revision], ['a.1', 'DEL', 5]);
    await kv.purge('b.1');
    const pur = (await within(it.next(), 2000, 'purge')).value;
    assert.deepEqual([pur.key, pur.operation], ['b.1', 'PURGE']);
    w.stop();
    assert.deepEqual(await it.next(), { value: undefined, done: true });
    assert.equal(await within(w.closed, 1500, 'closed'), undefined);

    // An empty bucket: initialized at once, with a for-await loop running.
    const empty = await js.kv.create({ bucket: 'WE', storage: 'memory' });
    const we = await empty.watch();
    const seen = [];
    const loop = (async () => {
      for await (const e of we) seen.push(kvt(e));
    })();
    assert.equal(await within(we.initialized, 2000, 'empty initialized'), true);
    await empty.put('k', 'v');
    await eventually(() => seen.length === 1, 2000, 'entry');
    assert.deepEqual(seen, [['k', 'v', 'PUT']]);
    we.stop();
    await within(loop, 500, 'loop end');
    empty.close();
    await js.kv.delete('WE');
  } finally {
    kv.close();
    await js.kv.delete('W');
  }
});

test('watch options: updatesOnly, includeHistory, ignoreDeletes, metaOnly', async () => {
  const kv = await js.kv.create({ bucket: 'WO', history: 10, storage: 'memory' });
  try {
    await kv.put('a', '1');
    await kv.put('a', '2');
    await kv.put('b', '1');
    await kv.delete('b');

    // updatesOnly: nothing initial; initialized before the first entry.
    const u = await kv.watch({ updatesOnly: true });
    let initAtFirst;
    const first = u.next().then((r) => {
      initAtFirst = initSeen;
      return r;
    });
    let initSeen = false;
    u.initialized.then(() => (initSeen = true));
    assert.equal(await within(u.initialized, 2000, 'updatesOnly initialized'), true);
    await kv.put('c', 'new');
    assert.deepEqual(kvt((await within(first, 2000, 'update')).value), ['c', 'new', 'PUT']);
    assert.equal(initAtFirst, true);
    u.stop();

    // includeHistory: every kept revision, markers included.
    const h = await kv.watch({ includeHistory: true });
    const hist = [];
    for await (const e of h) {
      hist.push([e.key, e.string(), e.operation, e.revision]);
      if (hist.length === 5) break;
    }
    assert.deepEqual(hist, [
      ['a', '1', 'PUT', 1],
      ['a', '2', 'PUT', 2],
      ['b', '1', 'PUT', 3],
      ['b', '', 'DEL', 4],
      ['c', 'new', 'PUT', 5],
    ]);
    // The loop stopped before the iteration reached the marker.
    assert.equal(await h.initialized, false);

    // Without history: the latest per key, a delete marker included.
    const latest = await kv.watch();
    const init = [];
    const loop = (async () => {
      for await (const e of latest) init.push(kvt(e));
    })();
    await within(latest.initialized, 2000, 'initialized');
    assert.deepEqual(init, [
      ['a', '2', 'PUT'],
      ['b', '', 'DEL'],
      ['c', 'new', 'PUT'],
    ]);
    latest.stop();
    await loop;

    // ignoreDeletes: no markers, initially or later.
    const nd = await kv.watch({ ignoreDeletes: true });
    const got = [];
    const ndLoop = (async () => {
      for await (const e of nd) got.push(kvt(e));
    })();
    await within(nd.initialized, 2000, 'initialized');
    assert.deepEqual(got, [
      ['a', '2', 'PUT'],
      ['c', 'new', 'PUT'],
    ]);
    await kv.delete('a');
    await kv.purge('c');
    await kv.put('d', 'after');
    await eventually(() => got.length === 3, 2000, 'put after deletes');
    assert.deepEqual(got[2], ['d', 'after', 'PUT']);
    nd.stop();
    await ndLoop;

    // metaOnly: keys, revisions and operations, no values.
    const meta = await kv.watch({ metaOnly: true, key: 'd' });
    const m = (await within(meta.next(), 2000, 'metaOnly entry')).value;
    assert.deepEqual([m.key, m.operation, m.value.length], ['d', 'PUT', 0]);
    assert.ok(m.revision > 0);
    meta.stop();
    await Promise.all([u.closed, h.closed, latest.closed, nd.closed, meta.closed]);
  } finally {
    kv.close();
    await js.kv.delete('WO');
  }
});

test('watch patterns: one, several, and invalid ones (InvalidKeyError)', async () => {
  const kv = await js.kv.create({ bucket: 'WP', storage: 'memory' });
  try {
    for (const k of ['a.1', 'a.2.x', 'b.1', 'b.2.y', 'c', 'd']) await kv.put(k, k);
    const collect = async (w) => {
      const keys = [];
      const loop = (async () => {
        for await (const e of w) keys.push(e.key);
      })();
      await within(w.initialized, 2000, 'initialized');
      return { w, keys, loop };
    };
    const one = await collect(await kv.watch({ key: 'a.*' }));
    assert.deepEqual(one.keys, ['a.1']);
    const many = await collect(await kv.watch({ key: ['b.>', 'c'] }));
    assert.deepEqual(many.keys, ['b.1', 'b.2.y', 'c']);
    const comma = await collect(await kv.watch({ key: '*.1,d' }));
    assert.deepEqual(comma.keys, ['a.1', 'b.1', 'd']);
    // Live changes are filtered the same way.
    await kv.put('a.3', 'n');
    await kv.put('b.3.z', 'n');
    await kv.put('e', 'n');
    await eventually(() => one.keys.length === 2 && many.keys.length === 4, 2000, 'live changes');
    await sleep(100); // an absence: no other change within 100 ms
    assert.deepEqual(one.keys, ['a.1', 'a.3']);
    assert.deepEqual(many.keys, ['b.1', 'b.2.y', 'c', 'b.3.z']);
    assert.deepEqual(comma.keys, ['a.1', 'b.1', 'd']);

    for (const bad of ['a..b', 'a.>.b', 'a*', '*x', 'has space', '', ['a', 'b,c'], ['ok', '']]) {
      await rejectsWith(kv.watch({ key: bad }), nats.InvalidKeyError);
    }
    await assert.rejects(kv.watch({ key: 5 }), TypeError);
    await assert.rejects(kv.watch({ key: ['a', 5] }), TypeError);
    await assert.rejects(kv.watch('a.*'), TypeError);
    for (const c of [one, many, comma]) c.w.stop();
    await within(Promise.all([one.loop, many.loop, comma.loop]), 500, 'loops end');
  } finally {
    kv.close();
    await js.kv.delete('WP');
  }
});

test('a watch recovers when its server-side consumer is deleted, without repeating entries', async () => {
  const kv = await js.kv.create({ bucket: 'WR', storage: 'memory' });
  try {
    await kv.put('k', 'v1');
    const w = await kv.watch();
    const seen = [];
    const loop = (async () => {
      for await (const e of w) seen.push(kvt(e));
    })();
    await within(w.initialized, 2000, 'initialized');
    await kv.put('k', 'v2');
    await eventually(() => seen.length === 2, 2000, 'v2');
    const names = await js.consumers.names('KV_WR');
    assert.equal(names.length, 1, 'the watch runs one consumer');
    for (const name of names) await js.consumers.delete('KV_WR', name);
    await kv.put('k', 'v3');
    await kv.put('other', 'x');
    await eventually(() => seen.length === 4, 5000, 'entries after the consumer was deleted');
    assert.deepEqual(seen, [
      ['k', 'v1', 'PUT'],
      ['k', 'v2', 'PUT'],
      ['k', 'v3', 'PUT'],
      ['other', 'x', 'PUT'],
    ]);
    w.stop();
    await loop;
    await w.closed;
    // Freed after stop: its consumer goes away.
    await eventually(async () => (await js.consumers.names('KV_WR')).length === 0, 3000, 'watch consumer deleted');
  } finally {
    kv.close();
    await js.kv.delete('WR');
  }
});

test('several consumes and watches waiting at once leave other calls free to run', async () => {
  await streamWithConsumer('CP');
  const kv = await js.kv.create({ bucket: 'WPOOL', storage: 'memory' });
  try {
    await js.consumers.add('CP', { durable_name: 'd', ack_policy: 'explicit' });
    const a = await js.consume('CP', 'c', { expires: 2000 });
    const b = await js.consume('CP', 'd', { expires: 2000 });
    const w = await kv.watch();
    const counts = { a: 0, b: 0, w: 0 };
    const loops = [
      (async () => {
        for await (const m of a) {
          counts.a++;
          m.ack();
        }
      })(),
      (async () => {
        for await (const m of b) {
          counts.b++;
          m.ack();
        }
      })(),
      (async () => {
        for await (const _e of w) counts.w++;
      })(),
    ];
    await sleep(200); // all three reads are waiting (tokens, no thread each)
    const t0 = Date.now();
    for (let i = 0; i < 20; i++) {
      await js.publish('CP.x', String(i));
      await kv.put(`k${i}`, String(i));
    }
    assert.ok(Date.now() - t0 < 3000, `40 round trips took ${Date.now() - t0} ms`);
    await eventually(() => counts.a === 20 && counts.b === 20 && counts.w === 20, 3000, 'all delivered');
    a.stop();
    b.stop();
    w.stop();
    await Promise.all(loops);
    await Promise.all([a.closed, b.closed, w.closed]);
  } finally {
    kv.close();
    await js.kv.delete('WPOOL');
    await js.streams.delete('CP');
  }
});

test('after nc.close(): running loops throw ConnectionClosedError, consume and watch reject with it', async () => {
  const c = await nats.connect({ servers: server.url });
  const ctx = c.jetstream();
  await ctx.streams.add({ name: 'NCW', subjects: ['NCW.>'], storage: 'memory' });
  await ctx.consumers.add('NCW', { durable_name: 'c', ack_policy: 'explicit' });
  const kv = await ctx.kv.create({ bucket: 'NCW', storage: 'memory' });
  try {
    await ctx.publish('NCW.a', 'x');
    await kv.put('k', 'v');
    const msgs = await ctx.consume('NCW', 'c', { expires: 5000 });
    const w = await kv.watch();
    const idle = await kv.watch(); // never iterated
    const got = [];
    // What each loop threw (as C, C++ and Go: the conformance line iterator_closed).
    const thrown = (loop) => loop.then(() => null, (e) => e);
    const loops = [
      thrown(
        (async () => {
          for await (const m of msgs) got.push(m.string());
        })(),
      ),
      thrown(
        (async () => {
          for await (const e of w) got.push(e.key);
        })(),
      ),
    ];
    await within(w.initialized, 2000, 'initialized');
    await eventually(() => got.length === 2, 2000, 'both delivered');
    const t0 = Date.now();
    await c.close();
    const errors = await within(Promise.all(loops), 2000, 'loops end after close');
    assert.ok(Date.now() - t0 < 2000);
    for (const e of errors) assert.ok(e instanceof nats.ConnectionClosedError, `${e}`);
    assert.ok((await msgs.closed) instanceof nats.ConnectionClosedError);
    assert.ok((await w.closed) instanceof nats.ConnectionClosedError);
    assert.equal(await w.initialized, true);
    // A watch that never iterated ends so too, before its initial values.
    await assert.rejects(idle.next(), nats.ConnectionClosedError);
    assert.equal(await idle.initialized, false);
    await rejectsWith(ctx.consume('NCW', 'c'), nats.ConnectionClosedError);
    await rejectsWith(kv.watch(), nats.ConnectionClosedError);
  } finally {
    kv.close();
    ctx.close();
    await js.streams.delete('NCW');
    await js.kv.delete('NCW');
  }
});

test('consumes and watches dropped without stop() are freed by the garbage collector', async () => {
  await streamWithConsumer('GCW');
  const kv = await js.kv.create({ bucket: 'GCW', storage: 'memory' });
  try {
    const before = await settledHandles();
    await js.consume('GCW', 'c');
    await kv.watch();
    const live = liveHandles();
    assert.equal(live.consumes, before.consumes + 1);
    assert.equal(live.watches, before.watches + 1);
    await eventually(async () => (await js.consumers.names('KV_GCW')).length === 1, 2000, 'watch consumer');
    await collectUntil(
      (l) => l.consumes === before.consumes && l.watches === before.watches,
      'the dropped consume and watch',
    );
    // The freed watch deletes its consumer.
    await eventually(async () => (await js.consumers.names('KV_GCW')).length === 0, 3000, 'watch consumer deleted');
  } finally {
    kv.close();
    await js.kv.delete('GCW');
    await js.streams.delete('GCW');
  }
});

function runChild(mode, waitMs) {
  return runNodeFixture('consume-exit.js', [server.url, mode], waitMs);
}

for (const mode of ['close', 'stop']) {
  test(`the process exits on its own once consume and watch loops end (${mode})`, async () => {
    const r = await runChild(mode, 8000);
    assert.equal(r.stderr, '');
    assert.equal(r.stdout, 'consumed=1 watched=1\n');
    assert.equal(r.exitedOnItsOwn, true, 'child still running');
    assert.equal(r.code, 0);
  });
}
