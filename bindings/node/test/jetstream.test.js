'use strict';
// JetStream and Key-Value against a real nats-server with JetStream enabled.
const { test } = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const nats = require('..');
const { startConfiguredServer } = require('./server');
const { useJetStream, rejectsWith } = require('./jetstream-env');
const { liveHandles, collectUntil, settledHandles } = require('./gc');
const { sleep } = require('./wait');

let server;
let nc;
let js;
useJetStream('natsio-node-js-', (env) => ({ server, nc, js } = env));

test('stream lifecycle: add, info, update, createOrUpdate, names, purge, delete', async () => {
  const info = await js.streams.add({ name: 'ORDERS', subjects: ['orders.>'], max_age: '1h', storage: 'memory' });
  assert.equal(info.config.name, 'ORDERS');
  assert.equal(info.config.max_age, 3_600_000_000_000);
  assert.equal(info.state.messages, 0);
  // Same config again is fine; another config: the name is in use.
  await js.streams.add({ name: 'ORDERS', subjects: ['orders.>'], max_age: '1h', storage: 'memory' });
  await rejectsWith(
    js.streams.add({ name: 'ORDERS', subjects: ['other.>'], storage: 'memory' }),
    nats.StreamNameInUseError,
  );
  const upd = await js.streams.update({ name: 'ORDERS', subjects: ['orders.>'], max_age: '2h', storage: 'memory' });
  assert.equal(upd.config.max_age, 7_200_000_000_000);
  await rejectsWith(js.streams.update({ name: 'NOPE', subjects: ['nope'] }), nats.StreamNotFoundError);
  await js.streams.createOrUpdate({ name: 'ORDERS2', subjects: ['orders2.>'], storage: 'memory' });

  assert.deepEqual((await js.streams.names()).sort(), ['ORDERS', 'ORDERS2']);
  assert.deepEqual(await js.streams.names('orders.x'), ['ORDERS']);

  for (let i = 0; i < 5; i++) await js.publish(`orders.${i % 2}`, 'x');
  assert.deepEqual(await js.streams.purge('ORDERS', { filter: 'orders.0' }), { success: true, purged: 3 });
  assert.equal((await js.streams.purge('ORDERS', { keep: 1 })).purged, 1);
  await rejectsWith(js.streams.purge('ORDERS', { keep: 1, seq: 2 }), nats.ConfigError);
  assert.equal((await js.streams.info('ORDERS')).state.messages, 1);
  assert.equal((await js.streams.purge('ORDERS')).purged, 1);

  assert.equal(await js.streams.delete('ORDERS'), true);
  await rejectsWith(js.streams.info('ORDERS'), nats.StreamNotFoundError);
  await rejectsWith(js.streams.delete('ORDERS'), nats.StreamNotFoundError);
  await js.streams.delete('ORDERS2');

  const account = await js.accountInfo();
  assert.equal(typeof account.streams, 'number');
});

test('stream config errors name the field; bad names and server rejections have their classes', async () => {
  await rejectsWith(js.streams.add({ name: 'X', max_age: 'soon' }), nats.ConfigError, 'StreamConfig.max_age');
  await rejectsWith(js.streams.add({ subjects: ['a'] }), nats.ConfigError, 'name');
  await rejectsWith(js.streams.add({ name: 'a.b' }), nats.InvalidArgumentError);
  // A field the library does not model reaches the server, which rejects it.
  await rejectsWith(js.streams.add({ name: 'X', x_unknown: 1 }), nats.JetStreamApiError, 'x_unknown');
  await js.streams.add({ name: 'OVL', subjects: ['ovl.>'], storage: 'memory' });
  await rejectsWith(js.streams.add({ name: 'OVL2', subjects: ['ovl.a'] }), nats.JetStreamApiError);
  await js.streams.delete('OVL');
});

test('publish: acks, msgID dedupe, expectations, headers and ttl, stored messages', async () => {
  await js.streams.add({ name: 'P', subjects: ['p.>'], storage: 'memory', allow_msg_ttl: true });
  const a1 = await js.publish('p.a', 'one');
  assert.deepEqual(a1, { stream: 'P', seq: 1, duplicate: false });
  const a2 = await js.publish('p.a', Buffer.from('two'), { msgID: 'id-1' });
  const a3 = await js.publish('p.a', new Uint8Array([1, 2]), { msgID: 'id-1' });
  assert.equal(a2.seq, 2);
  assert.deepEqual([a3.seq, a3.duplicate], [2, true]);

  await rejectsWith(js.publish('p.a', 'x', { expect: { lastMsgID: 'nope' } }), nats.JetStreamApiError);
  assert.equal((await js.publish('p.a', 'x', { expect: { stream: 'P', lastMsgID: 'id-1' } })).seq, 3);
  await rejectsWith(js.publish('p.a', 'x', { expect: { lastSequence: 1 } }), nats.WrongLastSequenceError);
  assert.equal((await js.publish('p.a', 'y', { expect: { lastSequence: 3 } })).seq, 4);
  assert.equal((await js.publish('p.b', 'first on p.b', { expect: { lastSubjectSequence: 0 } })).seq, 5);
  await rejectsWith(js.publish('p.b', 'x', { expect: { lastSubjectSequence: 0 } }), nats.WrongLastSequenceError);
  await rejectsWith(js.publish('p.a', 'x', { expect: { stream: 'OTHER' } }), nats.JetStreamApiError);

  const { seq } = await js.publish('p.h', 'with headers', { headers: { 'X-Trace': 't1' }, ttl: '1m' });
  const stored = await js.streams.getMessage('P', { seq });
  assert.equal(stored.subject, 'p.h');
  assert.equal(stored.seq, seq);
  assert.equal(stored.string(), 'with headers');
  assert.deepEqual(stored.headers.get('X-Trace'), ['t1']);
  assert.equal(stored.headers.first('Nats-TTL'), '60s');
  assert.ok(Math.abs(stored.time.getTime() - Date.now()) < 60_000, String(stored.time));

  const last = await js.streams.getMessage('P', { lastBySubject: 'p.b' });
  assert.deepEqual([last.seq, last.string()], [5, 'first on p.b']);
  assert.equal((await js.streams.getMessage('P', { seq: 1 })).headers, undefined);
  assert.deepEqual([...(await js.streams.getMessage('P', 3)).data], [...Buffer.from('x')]);
  assert.equal(await js.streams.deleteMessage('P', 5), true);
  await rejectsWith(js.streams.getMessage('P', { seq: 5 }), nats.MessageNotFoundError);
  await rejectsWith(js.streams.deleteMessage('P', 5, false), nats.MessageNotFoundError, 'not found');
  await rejectsWith(js.streams.getMessage('NOPE', { seq: 1 }), nats.StreamNotFoundError);
  await js.streams.delete('P');
});

test('publish to a subject no stream holds: NoStreamResponseError, without blocking the event loop', async () => {
  let ticks = 0;
  const timer = setInterval(() => ticks++, 10);
  try {
    // The library retries "no responders" twice 250 ms apart by default.
    await rejectsWith(js.publish('no.stream.here', 'x'), nats.NoStreamResponseError);
  } finally {
    clearInterval(timer);
  }
  assert.ok(ticks >= 10, `the event loop ran only ${ticks} timer ticks while publishing`);
  await rejectsWith(js.publishAsync('no.stream.here', 'x'), nats.NoStreamResponseError);
});

test('retryAttempts: "no responders" is retried that many times (counted in the messages the connection sent), by publish and publishAsync', async () => {
  // A connection of its own: its outMsgs counts this test's publishes only.
  const c = await nats.connect({ servers: server.url });
  const cjs = c.jetstream();
  try {
    const sent = async (p, what) => {
      const before = c.stats().outMsgs;
      await rejectsWith(p(), nats.NoStreamResponseError);
      return c.stats().outMsgs - before;
    };
    for (const method of ['publish', 'publishAsync']) {
      const pub = (opts) => () => cjs[method]('no.stream.retry', 'x', opts);
      // 1 + retries attempts; retryWait 1 ms keeps the test short (nothing is timed).
      assert.equal(await sent(pub({ retryAttempts: 0 })), 1, `${method}: retryAttempts 0 is no retry`);
      assert.equal(await sent(pub({ retryAttempts: 1, retryWait: 1 })), 2, `${method}: retryAttempts 1`);
      assert.equal(await sent(pub({ retryAttempts: 4, retryWait: 1 })), 5, `${method}: retryAttempts 4`);
      // Absent (or null): the library's default, 2 retries 250 ms apart.
      assert.equal(await sent(pub(undefined)), 3, `${method}: default`);
      assert.equal(await sent(pub({ retryAttempts: null, retryWait: 1 })), 3, `${method}: null is the default`);
    }
  } finally {
    cjs.close();
    await c.close();
  }
});

test('retryAttempts and retryWait: a value the library would cut or change rejects with TypeError, and nothing is sent', async () => {
  const c = await nats.connect({ servers: server.url });
  const cjs = c.jetstream();
  try {
    const bad = [
      [{ retryAttempts: -1 }, 'retryAttempts'],
      [{ retryAttempts: 1.5 }, 'retryAttempts'],
      [{ retryAttempts: 2 ** 31 }, 'retryAttempts'],
      [{ retryAttempts: '2' }, 'retryAttempts'],
      [{ retryAttempts: NaN }, 'retryAttempts'],
      [{ retryWait: 0 }, 'retryWait'],
      [{ retryWait: -5 }, 'retryWait'],
      [{ retryWait: 2.5 }, 'retryWait'],
      [{ retryWait: Infinity }, 'retryWait'],
      [{ retryWait: '100' }, 'retryWait'],
    ];
    const before = c.stats().outMsgs;
    for (const method of ['publish', 'publishAsync']) {
      for (const [opts, name] of bad) {
        await rejectsWith(cjs[method]('no.stream.retry', 'x', opts), TypeError, name);
      }
    }
    assert.equal(c.stats().outMsgs - before, 0, 'no publish went out');
    // The largest count is taken (the stream answers at once: one message).
    await js.streams.add({ name: 'RETRYARGS', subjects: ['retry.args'], storage: 'memory' });
    try {
      const ack = await cjs.publish('retry.args', 'x', { retryAttempts: 2 ** 31 - 1, retryWait: Number.MAX_SAFE_INTEGER });
      assert.equal(ack.seq, 1);
    } finally {
      await js.streams.delete('RETRYARGS');
    }
  } finally {
    cjs.close();
    await c.close();
  }
});

test('publishAsync: thousands of publishes through a small window, distinct sequences, publishAsyncComplete', async () => {
  await js.streams.add({ name: 'A', subjects: ['a.>'], storage: 'memory' });
  const small = nc.jetstream({ publishAsyncMaxPending: 64 });
  try {
    const n = 3000;
    const promises = [];
    for (let i = 0; i < n; i++) promises.push(small.publishAsync('a.x', `m${i}`));
    // The window is full: the rest waits in order off the JS thread.
    assert.ok(small.publishAsyncPending > 64, `pending ${small.publishAsyncPending}`);
    let settled = 0;
    for (const p of promises) p.then(() => settled++);
    await small.publishAsyncComplete(10000);
    assert.equal(small.publishAsyncPending, 0);
    const acks = await Promise.all(promises);
    assert.equal(settled, n, 'every promise settled before publishAsyncComplete resolved');
    const seqs = acks.map((a) => a.seq);
    assert.deepEqual(seqs, Array.from({ length: n }, (_, i) => i + 1), 'sent in call order');
    assert.ok(acks.every((a) => a.stream === 'A' && a.duplicate === false));
    assert.equal((await js.streams.info('A')).state.messages, n);
    const lastMsg = await js.streams.getMessage('A', { lastBySubject: 'a.x' });
    assert.equal(lastMsg.string(), `m${n - 1}`);
    // Options travel with asynchronous publishes too.
    const dup = await Promise.all([small.publishAsync('a.d', 'x', { msgID: 'd1' }), small.publishAsync('a.d', 'x', { msgID: 'd1' })]);
    assert.deepEqual(dup.map((a) => a.duplicate), [false, true]);
    await rejectsWith(small.publishAsync('a.x', 'x', { expect: { lastSequence: 1 } }), nats.WrongLastSequenceError);
  } finally {
    small.close();
    await js.streams.delete('A');
  }
});

test('publishAsync stalls: TooManyStalledMsgsError rejects, unacked ones time out', async () => {
  // A plain subscriber that never acks stands in for a stuck stream.
  const sink = nc.subscribe('stuck');
  await nc.flush();
  // The stall is long against the 5 ms timer below, so that a loaded
  // machine still shows ticks while the library waits.
  const stuck = nc.jetstream({ publishAsyncMaxPending: 2, publishAsyncStallWait: 250, publishAsyncTimeout: 800 });
  try {
    const p1 = stuck.publishAsync('stuck', '1');
    const p2 = stuck.publishAsync('stuck', '2');
    const p3 = stuck.publishAsync('stuck', '3'); // no room: stalls in the library, then fails
    assert.ok(p3 instanceof Promise);
    let ticks = 0;
    const timer = setInterval(() => ticks++, 5);
    await rejectsWith(stuck.publishAsyncComplete(10), nats.TimeoutError);
    await rejectsWith(p3, nats.TooManyStalledMsgsError);
    clearInterval(timer);
    assert.ok(ticks >= 2, 'the stall did not block the event loop');
    await rejectsWith(p1, nats.AsyncPublishTimeoutError);
    await rejectsWith(p2, nats.AsyncPublishTimeoutError);
    await stuck.publishAsyncComplete(1000);
    assert.equal(stuck.publishAsyncPending, 0);
    // Room again.
    const p4 = stuck.publishAsync('stuck', '4');
    assert.equal(stuck.publishAsyncPending, 1);
    await rejectsWith(p4, nats.AsyncPublishTimeoutError);
  } finally {
    stuck.close();
    sink.unsubscribe();
  }
});

test('KV: put, get, revisions, create, update, delete, purge, status', async () => {
  const kv = await js.kv.create({ bucket: 'CFG', history: 5, ttl: '1h', storage: 'memory' });
  try {
    assert.equal(kv.bucket, 'CFG');
    const info = await js.streams.info('KV_CFG');
    assert.equal(info.config.max_msgs_per_subject, 5);

    const r1 = await kv.put('app.color', 'red');
    const r2 = await kv.put('app.color', Buffer.from('blue'));
    assert.ok(r2 > r1);
    const e = await kv.get('app.color');
    assert.equal(e.bucket, 'CFG');
    assert.equal(e.key, 'app.color');
    assert.ok(Buffer.isBuffer(e.value));
    assert.equal(e.string(), 'blue');
    assert.deepEqual([e.revision, e.operation, e.delta], [r2, 'PUT', 0]);
    assert.ok(e.created instanceof Date && Math.abs(e.created.getTime() - Date.now()) < 60_000);
    assert.equal((await kv.getRevision('app.color', r1)).string(), 'red');
    assert.equal((await kv.get('app.color', { revision: r1 })).string(), 'red');
    await rejectsWith(kv.getRevision('app.size', r1), nats.KeyNotFoundError);
    await rejectsWith(kv.get('missing'), nats.KeyNotFoundError);

    await rejectsWith(kv.update('app.color', 'green', r1), nats.WrongLastSequenceError);
    const r3 = await kv.update('app.color', 'green', r2);
    await rejectsWith(kv.create('app.color', 'x'), nats.KeyExistsError);
    assert.ok((await kv.create('app.new', new Uint8Array([0, 1, 0, 255]))) > r3);
    assert.deepEqual([...(await kv.get('app.new')).value], [0, 1, 0, 255]);

    await kv.delete('app.color');
    await rejectsWith(kv.get('app.color'), nats.KeyDeletedError);
    const r4 = await kv.create('app.color', 'again'); // a deleted key can be created again
    assert.equal((await kv.get('app.color')).string(), 'again');
    await rejectsWith(kv.delete('app.color', { last: r4 - 1 }), nats.WrongLastSequenceError);
    await kv.purge('app.color', { last: r4 });
    await rejectsWith(kv.get('app.color'), nats.KeyDeletedError);
    await rejectsWith(kv.getRevision('app.color', r1), nats.KeyNotFoundError); // purged history

    await kv.put('json', JSON.stringify({ a: 1 }));
    assert.deepEqual((await kv.get('json')).json(), { a: 1 });
    await kv.put('empty', '');
    assert.equal((await kv.get('empty')).value.length, 0);

    const st = await kv.status();
    assert.equal(st.bucket, 'CFG');
    assert.equal(st.history, 5);
    assert.equal(st.ttl, 3_600_000);
    assert.equal(st.streamInfo.config.name, 'KV_CFG');
    assert.ok(st.values >= 3);
  } finally {
    kv.close();
    await js.kv.delete('CFG');
  }
});

test('KV buckets: bind, create/update/createOrUpdate, delete, and every bucket and key error class', async () => {
  await rejectsWith(js.kv.bind('NONE'), nats.BucketNotFoundError);
  await rejectsWith(js.kv.bind('bad.name'), nats.InvalidBucketNameError);
  await rejectsWith(js.kv.create({ bucket: 'b c' }), nats.InvalidBucketNameError);
  await rejectsWith(js.kv.create({ bucket: 'B', history: 65 }), nats.ConfigError, 'history');
  await rejectsWith(js.kv.create({ history: 2 }), nats.ConfigError, 'bucket');
  await rejectsWith(js.kv.update({ bucket: 'B' }), nats.BucketNotFoundError);

  const kv = await js.kv.create('B', { storage: 'memory' });
  await (await js.kv.create({ bucket: 'B', storage: 'memory' })).close(); // identical: bound
  await rejectsWith(js.kv.create({ bucket: 'B', history: 3, storage: 'memory' }), nats.BucketExistsError);
  await js.kv.update({ bucket: 'B', history: 3, storage: 'memory' });
  (await js.kv.createOrUpdate({ bucket: 'C', storage: 'memory' })).close();
  await kv.put('k', 'v1');
  const bound = await js.kv.bind('B');
  assert.equal((await bound.get('k')).string(), 'v1');
  for (const bad of ['', '.a', 'a.', 'a..b', 'a b', 'a*', 'a>']) {
    await rejectsWith(kv.put(bad, 'x'), nats.InvalidKeyError);
  }
  await rejectsWith(kv.get('a*'), nats.InvalidKeyError);
  bound.close();
  kv.close();

  assert.equal(await js.kv.delete('B'), true);
  await js.kv.delete('C');
  await rejectsWith(js.kv.bind('B'), nats.BucketNotFoundError);
  await rejectsWith(js.kv.delete('B'), nats.BucketNotFoundError);
});

test('bad arguments reject with TypeError or the invalid-argument error classes', async () => {
  await assert.rejects(js.publish(42, 'x'), TypeError);
  await assert.rejects(js.publish(undefined, 'x'), TypeError);
  await assert.rejects(js.publishAsync(42, 'x'), TypeError); // rejects, never throws
  await assert.rejects(js.publish('p', 'x', { ttl: 'soon' }), TypeError);
  await assert.rejects(js.publish('p', 'x', { expect: { lastSequence: -1 } }), TypeError);
  await assert.rejects(js.publish('p', { not: 'bytes' }), TypeError);
  await rejectsWith(js.publish('bad subject', 'x'), nats.BadSubjectError);
  await rejectsWith(js.publishAsync('', 'x'), nats.BadSubjectError);
  await assert.rejects(js.streams.add(), TypeError);
  await assert.rejects(js.streams.add('NAME'), TypeError);
  await assert.rejects(js.streams.info(), TypeError);
  await assert.rejects(js.streams.getMessage('S'), TypeError);
  await assert.rejects(js.streams.purge('S', 'all'), TypeError);
  await assert.rejects(js.kv.create(), TypeError);
  await assert.rejects(js.kv.bind(7), TypeError);
  await assert.rejects(js.publishAsyncComplete('soon'), TypeError);
  const kv = await js.kv.create({ bucket: 'ARGS', storage: 'memory' });
  try {
    await assert.rejects(kv.put('k'), TypeError);
    await assert.rejects(kv.put(5, 'x'), TypeError);
    await assert.rejects(kv.update('k', 'x'), TypeError);
    await assert.rejects(kv.getRevision('k'), TypeError);
  } finally {
    kv.close();
    await js.kv.delete('ARGS');
  }
  assert.throws(() => nc.jetstream('opts'), TypeError);
  assert.throws(() => nc.jetstream({ domain: 'a.b' }), nats.ConfigError);
  assert.throws(() => nc.jetstream({ apiPrefix: 'bad prefix' }), nats.ConfigError);
  assert.throws(() => nc.jetstream({ timeout: -1 }), nats.InvalidArgumentError);
});

test('close: deterministic and idempotent; calls after close reject, in-flight calls finish', async () => {
  const ctx = nc.jetstream();
  await ctx.streams.add({ name: 'CL', subjects: ['cl.>'], storage: 'memory' });
  const kv = await ctx.kv.create({ bucket: 'CLKV', storage: 'memory' });
  const inFlight = ctx.publish('cl.a', 'x'); // its job keeps the C handle until it completes
  ctx.close();
  ctx.close();
  assert.equal(ctx.isClosed, true);
  assert.equal((await inFlight).seq, 1);
  await rejectsWith(ctx.publish('cl.a', 'x'), nats.IllegalStateError, 'closed');
  await rejectsWith(ctx.publishAsync('cl.a', 'x'), nats.IllegalStateError);
  await rejectsWith(ctx.publishAsyncComplete(), nats.IllegalStateError);
  await rejectsWith(ctx.streams.info('CL'), nats.IllegalStateError);
  await rejectsWith(ctx.kv.bind('CLKV'), nats.IllegalStateError);
  await rejectsWith(ctx.accountInfo(), nats.IllegalStateError);
  assert.throws(() => ctx.publishAsyncPending, nats.IllegalStateError);
  // A bucket handle lives on its own.
  assert.equal(await kv.put('k', 'v'), 1);
  const pending = kv.get('k');
  kv.close();
  kv.close();
  assert.equal((await pending).string(), 'v');
  await rejectsWith(kv.put('k', 'v'), nats.IllegalStateError, 'closed');
  await rejectsWith(kv.status(), nats.IllegalStateError);
  await js.streams.delete('CL');
  await js.kv.delete('CLKV');
});

test('handles dropped without close are freed by the garbage collector, even with a call in flight', async () => {
  await js.kv.create({ bucket: 'GC', storage: 'memory' }).then((kv) => kv.put('k', 'v').then(() => kv.close()));
  const before = await settledHandles();
  // 20 contexts and buckets, dropped with their gets in flight (made in a
  // function of their own: a suspended async frame may keep its last
  // locals): a collected handle's C object waits for its calls.
  const pending = await (async () => {
    const gets = [];
    for (let i = 0; i < 20; i++) {
      const kv = await nc.jetstream().kv.bind('GC');
      gets.push(kv.get('k'));
    }
    const live = liveHandles();
    assert.equal(live.jetstream, before.jetstream + 20);
    assert.equal(live.kv, before.kv + 20);
    return gets;
  })();
  global.gc();
  await sleep(10);
  global.gc();
  const entries = await Promise.all(pending);
  assert.ok(entries.every((e) => e.string() === 'v'));
  const live = await collectUntil(
    (l) => l.jetstream === before.jetstream && l.kv === before.kv,
    '20 dropped contexts and buckets',
  );
  assert.equal(live.clients, before.clients);
  await js.kv.delete('GC');
});

test('JetStreamNotEnabledError for an account without JetStream', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'natsio-node-js-'));
  const s = await startConfiguredServer(
    `jetstream { store_dir: "${dir}" }\naccounts: { NOJS: { users: [ { user: u, password: p } ] } }\n`,
  );
  const c = await nats.connect({ servers: s.url, user: 'u', pass: 'p' });
  try {
    const ctx = c.jetstream();
    await rejectsWith(ctx.accountInfo(), nats.JetStreamNotEnabledError);
    await rejectsWith(ctx.streams.add({ name: 'S' }), nats.JetStreamNotEnabledError);
    ctx.close();
  } finally {
    await c.close();
    await s.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('after nc.close() every call rejects cleanly with ConnectionClosedError', async () => {
  const c = await nats.connect({ servers: server.url });
  const ctx = c.jetstream();
  await ctx.streams.add({ name: 'NCC', subjects: ['ncc.>'], storage: 'memory' });
  const kv = await ctx.kv.create({ bucket: 'NCC', storage: 'memory' });
  await kv.put('k', 'v');
  await c.close();
  await rejectsWith(ctx.publish('ncc.a', 'x'), nats.ConnectionClosedError);
  await rejectsWith(ctx.publishAsync('ncc.a', 'x'), nats.ConnectionClosedError);
  await rejectsWith(ctx.streams.info('NCC'), nats.ConnectionClosedError);
  await rejectsWith(ctx.accountInfo(), nats.ConnectionClosedError);
  await rejectsWith(kv.put('k', 'x'), nats.ConnectionClosedError);
  await rejectsWith(kv.get('k'), nats.ConnectionClosedError);
  await rejectsWith(ctx.kv.bind('NCC'), nats.ConnectionClosedError);
  await ctx.publishAsyncComplete(1000); // nothing pending
  // A context made after close fails the same way.
  await rejectsWith(c.jetstream().publish('ncc.a', 'x'), nats.ConnectionClosedError);
  kv.close();
  ctx.close();
  await js.streams.delete('NCC');
  await js.kv.delete('NCC');
});

test('JS_HEADERS are natsio.h\'s header names, and the server acts on them', async () => {
  assert.equal(nats.JS_HEADERS.MSG_ID, 'Nats-Msg-Id');
  assert.equal(nats.JS_HEADERS.EXPECTED_LAST_SUBJECT_SEQUENCE, 'Nats-Expected-Last-Subject-Sequence');
  assert.equal(nats.JS_HEADERS.ROLLUP, 'Nats-Rollup');
  assert.equal(nats.JS_HEADERS.ROLLUP_SUBJECT, 'sub');
  assert.equal(nats.JS_HEADERS.ROLLUP_ALL, 'all');
  assert.equal(nats.JS_HEADERS.REQUIRED_API_LEVEL, 'Nats-Required-Api-Level');
  const values = Object.values(nats.JS_HEADERS);
  assert.equal(values.length, 35);
  assert.equal(new Set(values).size, 35);
  assert.ok(Object.isFrozen(nats.JS_HEADERS));

  await js.streams.add({ name: 'HDRS', subjects: ['hdrs.>'], storage: 'memory', allow_rollup_hdrs: true });
  try {
    const once = { headers: { [nats.JS_HEADERS.MSG_ID]: 'once' } };
    assert.equal((await js.publish('hdrs.a', '1', once)).duplicate, false);
    assert.equal((await js.publish('hdrs.a', '1', once)).duplicate, true);
    await js.publish('hdrs.b', 'b1');
    await js.publish('hdrs.b', 'b2', { headers: { [nats.JS_HEADERS.ROLLUP]: nats.JS_HEADERS.ROLLUP_SUBJECT } });
    assert.equal((await js.streams.info('HDRS')).state.messages, 2);
  } finally {
    await js.streams.delete('HDRS');
  }
});
