'use strict';
// Pull consumers, JsMsg acks and KV keys/history against a real
// nats-server with JetStream enabled.
const { test } = require('node:test');
const assert = require('node:assert/strict');
const nats = require('..');
const { useJetStream, rejectsWith } = require('./jetstream-env');
const { liveHandles, collectUntil, settledHandles } = require('./gc');
const { allThreadsStopped } = require('./server');
const { sleep, eventually, within } = require('./wait');

let server;
let nc;
let js;
useJetStream('natsio-node-cons-', (env) => ({ server, nc, js } = env));

/** A fresh stream `name` on `name.>` holding `count` messages m0..m{n-1}
 * published to `name.<i % 2>`. */
async function streamWith(name, count) {
  await js.streams.add({ name, subjects: [`${name}.>`], storage: 'memory' });
  for (let i = 0; i < count; i++) await js.publish(`${name}.${i % 2}`, `m${i}`, { headers: { Idx: String(i) } });
}

test('consumer lifecycle: add, info, update, createOrUpdate, names, delete, with the error classes', async () => {
  await streamWith('CL', 4);
  try {
    const cfg = { durable_name: 'work', ack_policy: 'explicit', ack_wait: '2s', filter_subject: 'CL.0' };
    const info = await js.consumers.add('CL', cfg);
    assert.equal(info.name, 'work');
    assert.equal(info.stream_name, 'CL');
    assert.equal(info.config.ack_wait, 2_000_000_000);
    assert.equal(info.num_pending, 2); // CL.0 holds m0 and m2
    await js.consumers.add('CL', cfg); // identical: fine
    await rejectsWith(js.consumers.add('CL', { ...cfg, ack_wait: '3s' }), nats.JetStreamApiError);

    const upd = await js.consumers.update('CL', { ...cfg, description: 'updated' });
    assert.equal(upd.config.description, 'updated');
    assert.equal((await js.consumers.info('CL', 'work')).config.description, 'updated');
    await rejectsWith(js.consumers.update('CL', { name: 'nope', ack_policy: 'explicit' }), nats.ConsumerNotFoundError);

    const eph = await js.consumers.createOrUpdate('CL', { inactive_threshold: '30s' });
    assert.equal(typeof eph.name, 'string');
    assert.ok(eph.name.length > 0);
    assert.deepEqual((await js.consumers.names('CL')).sort(), ['work', eph.name].sort());

    await rejectsWith(js.consumers.add('CL', { durable_name: 'x', ack_policy: 'sometimes' }), nats.ConfigError, 'ack_policy');
    await rejectsWith(js.consumers.add('CL', { durable_name: 'x', ack_wait: 'soon' }), nats.ConfigError, 'ack_wait');
    await rejectsWith(js.consumers.add('NOSUCH', { durable_name: 'x' }), nats.StreamNotFoundError);
    await rejectsWith(js.consumers.add('CL', { durable_name: 'a.b' }), nats.InvalidArgumentError);
    await rejectsWith(js.consumers.info('CL', 'nope'), nats.ConsumerNotFoundError);
    await rejectsWith(js.consumers.names('NOSUCH'), nats.StreamNotFoundError);

    assert.equal(await js.consumers.delete('CL', 'work'), true);
    await rejectsWith(js.consumers.info('CL', 'work'), nats.ConsumerNotFoundError);
    await rejectsWith(js.consumers.delete('CL', 'work'), nats.ConsumerNotFoundError);
    assert.deepEqual(await js.consumers.names('CL'), [eph.name]);

    // Argument errors reject (never throw).
    await assert.rejects(js.consumers.add('CL'), TypeError);
    await assert.rejects(js.consumers.add(7, { durable_name: 'x' }), TypeError);
    await assert.rejects(js.consumers.info('CL'), TypeError);
    await assert.rejects(js.consumers.delete(undefined, 'x'), TypeError);
  } finally {
    await js.streams.delete('CL');
  }
});

test('fetch: a batch in order, with data, headers and delivery metadata; acks move the ack floor', async () => {
  const before = Date.now();
  await streamWith('FB', 5);
  try {
    await js.consumers.add('FB', { durable_name: 'c', ack_policy: 'explicit' });
    const batch = await js.fetch('FB', 'c', { maxMessages: 3, expires: 2000 });
    assert.equal(batch.length, 3);
    assert.deepEqual(batch.map((m) => m.string()), ['m0', 'm1', 'm2']);
    assert.deepEqual(batch.map((m) => m.subject), ['FB.0', 'FB.1', 'FB.0']);
    assert.ok(batch.every((m) => m instanceof nats.JsMsg && Buffer.isBuffer(m.data)));
    assert.equal(batch[1].headers.first('Idx'), '1');
    assert.match(batch[0].reply, /^\$JS\.ACK\./);
    const md = batch[0].info;
    assert.equal(md, batch[0].metadata);
    assert.equal(md.stream, 'FB');
    assert.equal(md.consumer, 'c');
    assert.equal(md.domain, undefined);
    assert.equal(md.deliveryCount, 1);
    assert.equal(md.redelivered, false);
    assert.deepEqual(
      batch.map((m) => [m.info.streamSequence, m.info.consumerSequence, m.info.pending]),
      [
        [1, 1, 4],
        [2, 2, 3],
        [3, 3, 2],
      ],
    );
    assert.equal(batch[2].seq, 3);
    assert.equal(typeof md.timestampNanos, 'bigint');
    assert.ok(md.timestamp instanceof Date);
    assert.ok(md.timestamp.getTime() >= before - 1000 && md.timestamp.getTime() <= Date.now() + 1000);
    assert.equal(md.timestamp.getTime(), Number(md.timestampNanos / 1000000n));

    for (const m of batch) m.ack();
    const rest = await js.fetch('FB', 'c', { maxMessages: 10, expires: 300 });
    assert.deepEqual(rest.map((m) => m.string()), ['m3', 'm4']);
    await rest[0].ackAck(2000);
    assert.equal(await rest[1].ackAck({ timeout: 2000 }), true);
    const ci = await js.consumers.info('FB', 'c');
    assert.equal(ci.num_ack_pending, 0);
    assert.equal(ci.ack_floor.stream_seq, 5);

    // maxBytes: the batch stops before the message that would not fit.
    for (let i = 0; i < 3; i++) await js.publish('FB.big', Buffer.alloc(100, 0x41 + i));
    const one = await js.fetch('FB', 'c', { maxMessages: 10, maxBytes: 250, expires: 1000 });
    assert.equal(one.length, 1);
    assert.deepEqual(one[0].data, Buffer.alloc(100, 0x41));
    one[0].ack();
    const two = await js.fetch('FB', 'c', { maxMessages: 10, expires: 300 });
    assert.equal(two.length, 2);
    for (const m of two) m.ack();
  } finally {
    await js.streams.delete('FB');
  }
});

test('empty fetches: noWait resolves [] at once, expires bounds the wait; next rejects with NoMessagesError', async () => {
  await streamWith('EF', 0);
  try {
    await js.consumers.add('EF', { durable_name: 'c', ack_policy: 'explicit' });
    // noWait ends on the server's "no messages" answer, not on the
    // request's expiry: given a 60 s expiry it still resolves, and leaves
    // no request waiting on the server.
    assert.deepEqual(await within(js.fetch('EF', 'c', { noWait: true, expires: 60000 }), 30000, 'the noWait fetch'), []);
    assert.equal((await js.consumers.info('EF', 'c')).num_waiting, 0);

    let t0 = Date.now();
    // The event loop runs meanwhile: the fetch is a token, not a blocked thread.
    let ticks = 0;
    const timer = setInterval(() => ticks++, 20);
    const none = await js.fetch('EF', 'c', { maxMessages: 5, expires: 300 });
    clearInterval(timer);
    assert.deepEqual(none, []);
    const waited = Date.now() - t0;
    // Not early (the expiry is the wait), and not never: the upper bound
    // leaves room for a loaded machine.
    assert.ok(waited >= 250 && waited < 10000, `waited ${waited} ms`);
    assert.ok(ticks >= 1, `the event loop ran (${ticks} ticks)`);

    // Idle heartbeats while the request is open end nothing early. (Two
    // missed ones fail the fetch: 500 ms apart, not 100, so a starved
    // machine does not miss two.)
    t0 = Date.now();
    assert.deepEqual(await js.fetch('EF', 'c', { expires: 1200, heartbeat: 500 }), []);
    assert.ok(Date.now() - t0 >= 1000);

    t0 = Date.now();
    await rejectsWith(js.next('EF', 'c', { timeout: 200 }), nats.NoMessagesError);
    assert.ok(Date.now() - t0 < 10000, 'ended by its 200 ms timeout');

    // A message published while next waits is delivered.
    const pending = js.next('EF', 'c', { timeout: 30000 });
    await eventually(async () => (await js.consumers.info('EF', 'c')).num_waiting === 1, 10000, 'next waiting on the server');
    await js.publish('EF.x', 'late');
    const m = await pending;
    assert.equal(m.string(), 'late');
    assert.equal(m.info.streamSequence, 1);
    m.ack();
  } finally {
    await js.streams.delete('EF');
  }
});

test('fetch: a request beyond the consumer limits rejects with the server reason; a held noWait fetch ends within a second or so', async () => {
  await streamWith('FL', 6);
  try {
    await js.consumers.add('FL', {
      durable_name: 'c', ack_policy: 'explicit', filter_subject: 'FL.0',
      max_batch: 10, max_expires: 1_000_000_000, max_bytes: 1000, max_ack_pending: 2,
    });
    await rejectsWith(js.fetch('FL', 'c', { maxMessages: 20, expires: 500 }), nats.JetStreamError, 'Exceeded MaxRequestBatch');
    await rejectsWith(js.fetch('FL', 'c', { maxMessages: 5, expires: 2000 }), nats.JetStreamError, 'Exceeded MaxRequestExpires');
    await rejectsWith(js.fetch('FL', 'c', { maxMessages: 5, expires: 500, maxBytes: 2000 }), nats.JetStreamError,
      'Exceeded MaxRequestMaxBytes');
    // Two of the three on FL.0 come (max_ack_pending 2); the server then
    // holds a noWait request for the third.
    assert.equal((await js.fetch('FL', 'c', { maxMessages: 10, expires: 500 })).length, 2);
    const t0 = Date.now();
    assert.deepEqual(await js.fetch('FL', 'c', { maxMessages: 10, noWait: true }), []);
    assert.ok(Date.now() - t0 < 3000, `a held noWait fetch took ${Date.now() - t0} ms`);
  } finally {
    await js.streams.delete('FL');
  }
});

test('acks: a second ack, nak or term throws MessageAlreadyAckedError; ackAck rejects the same way', async () => {
  await streamWith('DA', 3);
  try {
    await js.consumers.add('DA', { durable_name: 'c', ack_policy: 'explicit' });
    const [a, b, c] = await js.fetch('DA', 'c', { maxMessages: 3, expires: 1000 });
    a.ack();
    assert.throws(() => a.ack(), nats.MessageAlreadyAckedError);
    assert.throws(() => a.nak(), (e) => e instanceof nats.MessageAlreadyAckedError && e.code === 'MESSAGE_ALREADY_ACKED');
    assert.throws(() => a.term(), nats.MessageAlreadyAckedError);
    await rejectsWith(a.ackAck(), nats.MessageAlreadyAckedError);

    b.term('bad input');
    assert.throws(() => b.ack(), nats.MessageAlreadyAckedError);

    await c.ackAck(2000);
    assert.throws(() => c.ack(), nats.MessageAlreadyAckedError);
    await rejectsWith(c.ackAck(), nats.MessageAlreadyAckedError);

    assert.equal((await js.consumers.info('DA', 'c')).num_ack_pending, 0);
    // Argument errors throw TypeError without acking.
    const [d] = await js.fetch('DA', 'c', { noWait: true }).then(async (none) => {
      assert.deepEqual(none, []);
      await js.publish('DA.x', 'd');
      return js.fetch('DA', 'c', { maxMessages: 1, expires: 1000 });
    });
    assert.throws(() => d.nak('soon'), TypeError);
    assert.throws(() => d.term(5), TypeError);
    await assert.rejects(d.ackAck('soon'), TypeError);
    // A message outlives the context it was fetched with.
    const ctx = nc.jetstream();
    await js.publish('DA.x', 'e');
    const [e] = await ctx.fetch('DA', 'c', { maxMessages: 1, expires: 1000 });
    ctx.close();
    d.ack();
    await e.ackAck(2000);
    assert.equal(e.string(), 'e');
    assert.equal((await js.consumers.info('DA', 'c')).num_ack_pending, 0);
  } finally {
    await js.streams.delete('DA');
  }
});

test('nak: the message comes again (delivered twice), after the delay when one is given', async () => {
  await streamWith('NK', 3);
  try {
    await js.consumers.add('NK', { durable_name: 'c', ack_policy: 'explicit', ack_wait: '30s' });
    const first = await js.fetch('NK', 'c', { maxMessages: 3, expires: 1000 });
    assert.equal(first.length, 3);
    first[0].nak();
    first[1].nak(700);
    first[2].ack();
    assert.throws(() => first[0].ack(), nats.MessageAlreadyAckedError);

    // The immediate nak comes back (the server may send other messages first).
    const again = await js.fetch('NK', 'c', { maxMessages: 1, expires: 2000 });
    assert.equal(again.length, 1);
    assert.equal(again[0].string(), 'm0');
    assert.equal(again[0].info.deliveryCount, 2);
    assert.equal(again[0].redelivered, true);
    assert.equal(again[0].info.streamSequence, 1);
    again[0].ack(); // a new delivery is a new message: its own ack state

    // The delayed one is not back before its delay ...
    const t0 = Date.now();
    assert.deepEqual(await js.fetch('NK', 'c', { noWait: true }), []);
    // ... and is after it.
    const delayed = await js.next('NK', 'c', { timeout: 3000 });
    assert.ok(Date.now() - t0 >= 300, 'the nak delay was honoured');
    assert.equal(delayed.string(), 'm1');
    assert.equal(delayed.info.deliveryCount, 2);
    delayed.ack();
  } finally {
    await js.streams.delete('NK');
  }
});

test('a fetch waiting on a consumer that gets deleted rejects with ConsumerDeletedError', async () => {
  await streamWith('CD', 0);
  try {
    await js.consumers.add('CD', { durable_name: 'c', ack_policy: 'explicit' });
    const t0 = Date.now();
    // The rejection may come before the delete call's own reply.
    const waiting = rejectsWith(js.fetch('CD', 'c', { maxMessages: 5, expires: 5000 }), nats.ConsumerDeletedError);
    await eventually(async () => (await js.consumers.info('CD', 'c')).num_waiting === 1, 10000, 'the fetch waiting on the server');
    await js.consumers.delete('CD', 'c');
    await waiting;
    assert.ok(Date.now() - t0 < 4000, 'ended by the deletion, not the expiry');
    // Pulling from a consumer that does not exist fails at once.
    const missing = (e) => e instanceof nats.ConsumerNotFoundError;
    const t1 = Date.now();
    await assert.rejects(js.fetch('CD', 'c', { noWait: true }), missing);
    await assert.rejects(js.fetch('CD', 'c', { expires: 3000 }), missing);
    await assert.rejects(js.next('CD', 'c', { timeout: 3000 }), missing);
    assert.ok(Date.now() - t1 < 2000, 'no wait for the expiry');
  } finally {
    await js.streams.delete('CD');
  }
});

test('fetchMessages yields each message as it arrives, ends at the expiry, and throws an error after the messages before it', async () => {
  await streamWith('FM', 1);
  try {
    await js.consumers.add('FM', { durable_name: 'c', ack_policy: 'explicit' });
    const msgs = await js.fetchMessages('FM', 'c', { maxMessages: 10, expires: 2000 });
    const it = msgs[Symbol.asyncIterator]();
    const events = [];
    let r = await it.next();
    events.push(r.done ? 'end' : r.value.string());
    r.value.ack();
    // Still open: a message published now comes through the same request.
    await js.publish('FM.0', 'late');
    r = await it.next();
    events.push(r.done ? 'end' : r.value.string());
    r.value.ack();
    r = await it.next();
    events.push(r.done ? 'end' : r.value.string());
    assert.deepEqual(events, ['m0', 'late', 'end']);
    assert.equal(msgs.stats().delivered, 2);

    // An error after a message: the message, then ConsumerDeletedError.
    await js.publish('FM.0', 'last');
    const doomed = await js.fetchMessages('FM', 'c', { maxMessages: 5, expires: 30000 });
    await eventually(async () => (await js.consumers.info('FM', 'c')).num_ack_pending === 1, 10000, 'the message delivered');
    await js.consumers.delete('FM', 'c');
    const seen = [];
    await assert.rejects(
      (async () => {
        for await (const m of doomed) seen.push(m.string());
      })(),
      nats.ConsumerDeletedError,
    );
    assert.deepEqual(seen, ['last']);
    await assert.rejects(js.fetchMessages('FM', 'a b'), nats.InvalidArgumentError);
  } finally {
    await js.streams.delete('FM');
  }
});

test('consumers.list: the ConsumerInfo of each consumer, with names and num_pending', async () => {
  await streamWith('LS', 4);
  try {
    await js.consumers.add('LS', { durable_name: 'evens', ack_policy: 'explicit', filter_subject: 'LS.0' });
    await js.consumers.add('LS', { durable_name: 'all', ack_policy: 'explicit' });
    const infos = await js.consumers.list('LS');
    assert.ok(Array.isArray(infos));
    const byName = Object.fromEntries(infos.map((i) => [i.name, i]));
    assert.deepEqual(Object.keys(byName).sort(), ['all', 'evens']);
    assert.equal(byName.all.num_pending, 4);
    assert.equal(byName.evens.num_pending, 2);
    assert.equal(byName.evens.stream_name, 'LS');
    assert.equal(byName.evens.config.filter_subject, 'LS.0');
    await rejectsWith(js.consumers.list('NOSUCH'), nats.StreamNotFoundError);
    await assert.rejects(js.consumers.list(), TypeError);
  } finally {
    await js.streams.delete('LS');
  }
  await streamWith('LE', 0);
  try {
    assert.deepEqual(await js.consumers.list('LE'), []);
  } finally {
    await js.streams.delete('LE');
  }
});

test('consumers.pause / resume: a paused consumer delivers nothing, resumed it delivers; error classes', async () => {
  await streamWith('PZ', 3);
  try {
    await js.consumers.add('PZ', { durable_name: 'p', ack_policy: 'explicit' });
    const until = new Date(Date.now() + 3600_000);
    const r = await js.consumers.pause('PZ', 'p', until);
    assert.equal(r.paused, true);
    assert.equal(typeof r.pause_until, 'string');
    assert.ok(Math.abs(Date.parse(r.pause_until) - until.getTime()) < 1000, r.pause_until);
    assert.ok(r.pause_remaining > 59 * 60 * 1e9, `pause_remaining ${r.pause_remaining}`);
    const info = await js.consumers.info('PZ', 'p');
    assert.equal(info.paused, true);
    assert.ok(info.pause_remaining > 59 * 60 * 1e9);
    assert.equal(Date.parse(info.config.pause_until), Date.parse(r.pause_until));
    const t0 = Date.now();
    assert.deepEqual(await js.fetch('PZ', 'p', { maxMessages: 3, expires: 500 }), []);
    assert.ok(Date.now() - t0 >= 400, 'the fetch waited out its expiry');

    const res = await js.consumers.resume('PZ', 'p');
    assert.equal(res.paused, false);
    assert.ok(!res.pause_remaining, `pause_remaining ${res.pause_remaining}`);
    assert.ok(!(await js.consumers.info('PZ', 'p')).paused);
    const msgs = await js.fetch('PZ', 'p', { maxMessages: 3, expires: 2000 });
    assert.deepEqual(msgs.map((m) => m.string()), ['m0', 'm1', 'm2']);
    for (const m of msgs) m.ack();
    // Resuming a running consumer leaves it running.
    assert.equal((await js.consumers.resume('PZ', 'p')).paused, false);
    // A time already past leaves it running too.
    assert.equal((await js.consumers.pause('PZ', 'p', new Date(Date.now() - 60_000))).paused, false);

    await rejectsWith(js.consumers.pause('PZ', 'nope', until), nats.ConsumerNotFoundError);
    await rejectsWith(js.consumers.resume('PZ', 'nope'), nats.ConsumerNotFoundError);
    await rejectsWith(js.consumers.pause('NOSUCH', 'p', until), nats.StreamNotFoundError);
    await rejectsWith(js.consumers.pause('PZ', 'a.b', until), nats.InvalidArgumentError);
    await assert.rejects(js.consumers.pause('PZ', 'p', new Date('not a date')), TypeError);
    await assert.rejects(js.consumers.pause('PZ', 'p', 'tomorrow'), TypeError);
    await assert.rejects(js.consumers.pause('PZ', 'p', {}), TypeError);
    await assert.rejects(js.consumers.pause('PZ', 'p'), TypeError);
    await assert.rejects(js.consumers.resume('PZ'), TypeError);
  } finally {
    await js.streams.delete('PZ');
  }
});

test('fetch and next argument errors', async () => {
  await assert.rejects(js.fetch(1, 'c'), TypeError);
  await assert.rejects(js.fetch('S'), TypeError);
  await assert.rejects(js.fetch('S', 'c', 'all'), TypeError);
  await assert.rejects(js.fetch('S', 'c', { maxMessages: 'ten' }), TypeError);
  await assert.rejects(js.next('S', 'c', { timeout: 'soon' }), TypeError);
  await rejectsWith(js.fetch('S', 'c', { maxMessages: -1 }), nats.InvalidArgumentError);
  await rejectsWith(js.fetch('a.b', 'c'), nats.InvalidArgumentError);
  await rejectsWith(js.next('S', 'c d'), nats.InvalidArgumentError);
});

test('KV keys and history', async () => {
  const kv = await js.kv.create({ bucket: 'KH', history: 5, storage: 'memory' });
  try {
    assert.deepEqual(await kv.keys(), []);
    await kv.put('a', '1');
    await kv.put('b', 'x');
    await kv.put('a', '2');
    await kv.put('c.d', 'y');
    await kv.put('a', '3');
    await kv.delete('b');
    assert.deepEqual((await kv.keys()).sort(), ['a', 'c.d']);
    const seen = [];
    for await (const k of await kv.keys()) seen.push(k);
    assert.equal(seen.length, 2);

    const h = await kv.history('a');
    assert.ok(h.every((e) => e instanceof nats.KvEntry && e.bucket === 'KH' && e.key === 'a'));
    assert.deepEqual(
      h.map((e) => [e.string(), e.revision, e.operation, e.delta]),
      [
        ['1', 1, 'PUT', 2],
        ['2', 3, 'PUT', 1],
        ['3', 5, 'PUT', 0],
      ],
    );
    assert.ok(h[0].created instanceof Date);

    const hb = await kv.history('b');
    assert.deepEqual(hb.map((e) => [e.operation, e.revision]), [
      ['PUT', 2],
      ['DEL', 6],
    ]);
    await kv.purge('a');
    assert.deepEqual((await kv.history('a')).map((e) => e.operation), ['PURGE']);
    assert.deepEqual(await kv.keys(), ['c.d']);

    await rejectsWith(kv.history('missing'), nats.KeyNotFoundError);
    await rejectsWith(kv.history('bad key'), nats.InvalidKeyError);
    await assert.rejects(kv.history(), TypeError);
  } finally {
    kv.close();
    await js.kv.delete('KH');
  }
  await rejectsWith(kv.keys(), nats.IllegalStateError, 'closed');
  await rejectsWith(kv.history('a'), nats.IllegalStateError);
});

test('messages dropped without acks are freed by the garbage collector, even with an ackAck in flight', async () => {
  await streamWith('GC', 20);
  try {
    await js.consumers.add('GC', { durable_name: 'c', ack_policy: 'explicit' });
    const before = await settledHandles();
    // Only the promises are kept: every JsMsg is unreachable while its
    // ackAck is in flight in the library.
    const acks = await js.fetch('GC', 'c', { maxMessages: 20, expires: 1000 }).then((batch) => {
      assert.equal(liveHandles().jsMsgs, before.jsMsgs + 20);
      return batch.map((m) => m.ackAck(2000));
    });
    global.gc();
    await sleep(10);
    global.gc();
    assert.deepEqual(await Promise.all(acks), new Array(20).fill(true));
    assert.equal((await js.consumers.info('GC', 'c')).num_ack_pending, 0);
    await collectUntil((l) => l.jsMsgs === before.jsMsgs, '20 acked messages');
    // Fetched and dropped: nothing to free by hand.
    for (let i = 0; i < 5; i++) await js.publish('GC.x', 'y');
    assert.equal((await js.fetch('GC', 'c', { maxMessages: 5, expires: 1000 })).length, 5);
    assert.equal(liveHandles().jsMsgs, before.jsMsgs + 5);
    await collectUntil((l) => l.jsMsgs === before.jsMsgs, '5 fetched messages');
  } finally {
    await js.streams.delete('GC');
  }
});

test('a sent ack, nak or term frees its library message at once; working() keeps it; the batch stays readable', async () => {
  await streamWith('AF', 4);
  try {
    await js.consumers.add('AF', { durable_name: 'c', ack_policy: 'explicit' });
    const before = await settledHandles();
    const [a, b, c, d] = await js.fetch('AF', 'c', { maxMessages: 4, expires: 1000 });
    assert.equal(liveHandles().jsMsgs, before.jsMsgs + 4);
    a.ack();
    b.nak(60000);
    c.term();
    d.working();
    // No garbage collection needed: only d's library copy is left.
    assert.equal(liveHandles().jsMsgs, before.jsMsgs + 1);
    assert.throws(() => a.ack(), nats.MessageAlreadyAckedError);
    // What was read into JS stays: data, subject, metadata of freed ones.
    assert.deepEqual([a, b, c, d].map((m) => m.string()), ['m0', 'm1', 'm2', 'm3']);
    assert.deepEqual([a, b, c, d].map((m) => m.info.streamSequence), [1, 2, 3, 4]);
    assert.equal(c.info.consumer, 'c');
    d.ack();
    assert.equal(liveHandles().jsMsgs, before.jsMsgs);
    // Only b (nak'ed with a delay) stays pending; the server applies acks
    // apart from its API requests, so wait for it.
    await eventually(async () => (await js.consumers.info('AF', 'c')).num_ack_pending === 1, 5000, 'one ack pending');
  } finally {
    await js.streams.delete('AF');
  }
});

test('after nc.close(): pulls, consumer calls, acks and KV keys/history fail cleanly with ConnectionClosedError', async () => {
  const c = await nats.connect({ servers: server.url });
  const ctx = c.jetstream();
  await ctx.streams.add({ name: 'NC', subjects: ['NC.>'], storage: 'memory' });
  await ctx.publish('NC.a', 'x');
  await ctx.publish('NC.b', 'y');
  await ctx.consumers.add('NC', { durable_name: 'c', ack_policy: 'explicit' });
  const [m1, m2] = await ctx.fetch('NC', 'c', { maxMessages: 2, expires: 1000 });
  const kv = await ctx.kv.create({ bucket: 'NC', storage: 'memory' });
  await kv.put('k', 'v');
  await c.close();
  assert.throws(() => m1.ack(), nats.ConnectionClosedError);
  assert.throws(() => m1.nak(), nats.ConnectionClosedError);
  assert.throws(() => m1.term(), nats.ConnectionClosedError);
  assert.throws(() => m1.working(), nats.ConnectionClosedError);
  await rejectsWith(m2.ackAck(500), nats.ConnectionClosedError);
  assert.equal(m1.info.stream, 'NC'); // metadata needs no connection
  await rejectsWith(ctx.fetch('NC', 'c', { noWait: true }), nats.ConnectionClosedError);
  await rejectsWith(ctx.next('NC', 'c', { timeout: 200 }), nats.ConnectionClosedError);
  await rejectsWith(ctx.consumers.info('NC', 'c'), nats.ConnectionClosedError);
  await rejectsWith(ctx.consumers.add('NC', { durable_name: 'd' }), nats.ConnectionClosedError);
  await rejectsWith(ctx.consumers.names('NC'), nats.ConnectionClosedError);
  await rejectsWith(kv.keys(), nats.ConnectionClosedError);
  await rejectsWith(kv.history('k'), nats.ConnectionClosedError);
  kv.close();
  ctx.close();
  await rejectsWith(ctx.fetch('NC', 'c'), nats.IllegalStateError, 'closed');
  await rejectsWith(ctx.consumers.names('NC'), nats.IllegalStateError);
  // The messages were never acked: still pending on the server.
  assert.equal((await js.consumers.info('NC', 'c')).num_ack_pending, 2);
  await js.streams.delete('NC');
  await js.kv.delete('NC');
});

test('nc.close() with operations pending: a request, a fetch, a next and a flush each reject with ConnectionClosedError at once', async () => {
  const c = await nats.connect({ servers: server.url });
  const ctx = c.jetstream();
  await ctx.streams.add({ name: 'PEND', subjects: ['PEND.>'], storage: 'memory' });
  await ctx.consumers.add('PEND', { durable_name: 'idle', ack_policy: 'explicit' });
  // A responder that takes the request and never answers: it tells when
  // the request has reached the server.
  const silent = await nats.connect({ servers: server.url });
  const taken = silent.subscribe('svc.silent');
  await silent.flush();
  let paused = false;
  try {
    const outcomes = [
      c.request('svc.silent', '?', { timeout: 60000 }),
      ctx.fetch('PEND', 'idle', { maxMessages: 1, expires: 50000 }),
      ctx.next('PEND', 'idle', { timeout: 50000 }),
    ].map((p) => p.then(() => 'resolved', (e) => e));
    for await (const m of taken) {
      assert.equal(m.subject, 'svc.silent');
      break;
    }
    // Both pull requests wait on the server.
    const until = Date.now() + 10000;
    while ((await js.consumers.info('PEND', 'idle')).num_waiting < 2) {
      assert.ok(Date.now() < until, 'the pull requests never waited on the server');
      await sleep(10);
    }
    // A flush the server cannot answer: stopped (SIGSTOP) with everything
    // above in flight.
    process.kill(server.pid, 'SIGSTOP');
    paused = true;
    await eventually(() => allThreadsStopped(server.pid), 5000, 'the server stopped');
    outcomes.push(c.flush().then(() => 'resolved', (e) => e));
    const closedAt = Date.now();
    await c.close();
    const ended = await Promise.all(outcomes);
    for (const [what, e] of ['request', 'fetch', 'next', 'flush'].map((w, i) => [w, ended[i]])) {
      assert.ok(e instanceof nats.ConnectionClosedError, `${what}: ${e?.name ?? e}: ${e?.message}`);
    }
    assert.ok(Date.now() - closedAt < 10000, 'an operation waited out its own deadline');
  } finally {
    if (paused) process.kill(server.pid, 'SIGCONT');
    await silent.close();
    await js.streams.delete('PEND');
  }
});

test('priority groups: validation, overflow min_pending, pinned client and consumers.unpin; max_bytes ends a consume', async () => {
  await streamWith('PG', 6);
  const other = nc.jetstream();
  try {
    const info = await js.consumers.add('PG', {
      durable_name: 'ov', ack_policy: 'explicit', priority_groups: ['A'], priority_policy: 'overflow',
    });
    assert.deepEqual(info.config.priority_groups, ['A']);
    assert.equal(info.config.priority_policy, 'overflow');
    await rejectsWith(js.fetch('PG', 'ov', { max_messages: 1, expires: 300 }), nats.InvalidArgumentError);
    await rejectsWith(js.fetch('PG', 'ov', { group: 'B', expires: 300 }), nats.InvalidArgumentError);
    await rejectsWith(js.consume('PG', 'ov'), nats.InvalidArgumentError);
    assert.equal((await js.fetch('PG', 'ov', { group: 'A', min_pending: 7, expires: 300 })).length, 0);
    const got = await js.fetch('PG', 'ov', { group: 'A', min_pending: 6, max_messages: 1, expires: 2000 });
    assert.equal(got.length, 1);
    assert.equal(got[0].data.toString(), 'm0');
    const m = await js.next('PG', 'ov', { group: 'A', minPending: 5, timeout: 2000 });
    assert.equal(m.data.toString(), 'm1');

    // Pinned client: only the pinned context gets messages until unpinned.
    await js.consumers.add('PG', {
      durable_name: 'pin', ack_policy: 'explicit', priority_groups: ['G'], priority_policy: 'pinned_client',
    });
    const long = { group: 'G', max_messages: 1, expires: 2000 };
    const short = { group: 'G', max_messages: 1, expires: 300 };
    assert.equal((await js.fetch('PG', 'pin', long)).length, 1);
    assert.equal((await other.fetch('PG', 'pin', short)).length, 0);
    await js.consumers.unpin('PG', 'pin', 'G');
    assert.equal((await other.fetch('PG', 'pin', long)).length, 1);
    assert.equal((await js.fetch('PG', 'pin', short)).length, 0);
    await rejectsWith(js.consumers.unpin('PG', 'pin', 'Z'), nats.InvalidArgumentError);
    await rejectsWith(js.consumers.unpin('PG', 'nope', 'G'), nats.ConsumerNotFoundError);

    // A consume whose max_bytes is below a message's size ends with JetStreamError.
    await js.consumers.add('PG', { durable_name: 'small', ack_policy: 'explicit' });
    const tiny = await js.consume('PG', 'small', { max_bytes: 10, expires: 2000 });
    await assert.rejects(
      (async () => {
        for await (const msg of tiny) msg.ack();
      })(),
      (e) => e instanceof nats.JetStreamError,
    );
  } finally {
    other.close?.();
    await js.streams.delete('PG');
  }
});

/** Resolves once consumer `name` of `stream` has `n` pull requests waiting
 * (its info's num_waiting). */
async function requestsWaiting(stream, name, n) {
  let last;
  await eventually(
    async () => (last = (await js.consumers.info(stream, name)).num_waiting) >= n,
    10000,
    `${n} requests waiting on ${stream}/${name}`,
    () => `num_waiting ${last}`,
  );
}

/** The payload of a one-message pull's message, acked. */
function onlyData(msgs) {
  assert.equal(msgs.length, 1);
  msgs[0].ack();
  return msgs[0].string();
}

test('prioritized policy: a waiting request of a lower priority number gets the message first (fetch, next, consume); priority argument errors', async () => {
  await js.streams.add({ name: 'PRZ', subjects: ['prz.>'], storage: 'memory' });
  try {
    const info = await js.consumers.add('PRZ', {
      durable_name: 'pz', ack_policy: 'explicit', priority_groups: ['P'], priority_policy: 'prioritized',
    });
    assert.equal(info.config.priority_policy, 'prioritized');
    const fetchAt = (priority) => js.fetch('PRZ', 'pz', { group: 'P', priority, max_messages: 1, expires: 10000 });

    // Priority 5 waits first, 1 after it: the message goes to 1 (sent
    // without the priority both would be 0, and the first would get it).
    const low = fetchAt(5);
    await requestsWaiting('PRZ', 'pz', 1);
    const high = fetchAt(1);
    await requestsWaiting('PRZ', 'pz', 2);
    await js.publish('prz.x', 'a');
    assert.equal(onlyData(await within(high, 5000, 'the priority 1 fetch')), 'a');
    await js.publish('prz.x', 'b');
    assert.equal(onlyData(await within(low, 5000, 'the priority 5 fetch')), 'b');

    // next() and fetchMessages() carry it too.
    const streamed = await js.fetchMessages('PRZ', 'pz', { group: 'P', priority: 5, max_messages: 1, expires: 10000 });
    await requestsWaiting('PRZ', 'pz', 1);
    const one = js.next('PRZ', 'pz', { group: 'P', priority: 2, timeout: 10000 });
    await requestsWaiting('PRZ', 'pz', 2);
    await js.publish('prz.x', 'c');
    const m = await within(one, 5000, 'the priority 2 next');
    m.ack();
    assert.equal(m.string(), 'c');
    await js.publish('prz.x', 'd');
    for await (const s of streamed) {
      s.ack();
      assert.equal(s.string(), 'd');
    }

    // A consume's requests carry its priority: a fetch at 1 that waits
    // after a consume at 5 gets the next message, the consume the one after.
    const consume = await js.consume('PRZ', 'pz', { group: 'P', priority: 5, max_messages: 1, expires: 10000 });
    try {
      await requestsWaiting('PRZ', 'pz', 1);
      const fetch = fetchAt(1);
      await requestsWaiting('PRZ', 'pz', 2);
      await js.publish('prz.x', 'e');
      assert.equal(onlyData(await within(fetch, 5000, 'the priority 1 fetch')), 'e');
      await js.publish('prz.x', 'f');
      const r = await within(consume.next(), 5000, 'the consume at priority 5');
      r.value.ack();
      assert.equal(r.value.string(), 'f');
    } finally {
      consume.stop();
    }

    // Refused before anything is sent.
    const now = { group: 'P', no_wait: true };
    for (const priority of [10, -1]) {
      await rejectsWith(js.fetch('PRZ', 'pz', { ...now, priority }), nats.InvalidArgumentError, 'priority must be between 0 and 9');
      await rejectsWith(js.consume('PRZ', 'pz', { group: 'P', priority }), nats.InvalidArgumentError, 'priority must be between 0 and 9');
      await rejectsWith(js.next('PRZ', 'pz', { group: 'P', priority, timeout: 1000 }), nats.InvalidArgumentError, 'priority must be between 0 and 9');
    }
    // Beyond an int32 or a fraction: never cut to a valid priority (2**32+1 would be 1).
    for (const priority of [2 ** 32 + 1, 1.5, Infinity]) {
      await rejectsWith(js.fetch('PRZ', 'pz', { ...now, priority }), nats.InvalidArgumentError, 'priority must be an integer between 0 and 9');
      await rejectsWith(js.fetchMessages('PRZ', 'pz', { ...now, priority }), nats.InvalidArgumentError, 'priority must be an integer');
      await rejectsWith(js.consume('PRZ', 'pz', { group: 'P', priority }), nats.InvalidArgumentError, 'priority must be an integer');
    }
    await assert.rejects(js.fetch('PRZ', 'pz', { ...now, priority: '1' }), TypeError);
    await rejectsWith(js.fetch('PRZ', 'pz', { no_wait: true, priority: 1 }), nats.InvalidArgumentError, 'priority needs a priority group');
    await rejectsWith(js.consume('PRZ', 'pz', { priority: 1 }), nats.InvalidArgumentError, 'priority needs a priority group');
    assert.deepEqual(await js.fetch('PRZ', 'pz', { ...now, priority: 9 }), []);
    assert.equal((await js.consumers.info('PRZ', 'pz')).num_ack_pending, 0);
  } finally {
    await js.streams.delete('PRZ');
  }
});

/** Resolves once stream `stream` holds `want` messages and consumer
 * `consumer` of stream `origin` has acknowledged through stream sequence
 * `want` (its ack floor). */
async function sourcedAndAcked(stream, origin, consumer, want) {
  let held;
  let floor;
  await eventually(
    async () => {
      held = (await js.streams.info(stream)).state.messages;
      floor = (await js.consumers.info(origin, consumer)).ack_floor.stream_seq;
      return held === want && floor === want;
    },
    20000,
    `${stream} sourcing ${want} messages through ${origin}/${consumer}`,
    () => `${held} messages, ack floor ${floor}`,
  );
}

test('the flow_control ack policy: a stream sources through a durable push consumer the server acks by flow control; refused on a pull consumer', async () => {
  await js.streams.add({ name: 'FCO', subjects: ['fco.>'], storage: 'memory' });
  try {
    for (let i = 0; i < 3; i++) await js.publish('fco.x', `m${i}`);
    const info = await js.consumers.add('FCO', {
      durable_name: 'fcsrc', deliver_subject: 'fco_deliver.sink', ack_policy: 'flow_control',
      flow_control: true, idle_heartbeat: '1s', max_ack_pending: 100,
    });
    assert.equal(info.config.ack_policy, 'flow_control');
    await js.streams.add({
      name: 'FCS', storage: 'memory',
      sources: [{ name: 'FCO', consumer: { name: 'fcsrc', deliver_subject: 'fco_deliver.sink' } }],
    });
    await sourcedAndAcked('FCS', 'FCO', 'fcsrc', 3);
    for (let i = 3; i < 5; i++) await js.publish('fco.x', `m${i}`);
    await sourcedAndAcked('FCS', 'FCO', 'fcsrc', 5);
    const last = await js.streams.getMessage('FCS', { seq: 5 });
    assert.equal(last.string(), 'm4');

    await rejectsWith(js.consumers.add('FCO', { durable_name: 'fcpull', ack_policy: 'flow_control' }), nats.JetStreamApiError);
    await rejectsWith(js.consumers.add('FCO', { durable_name: 'x', ack_policy: 'flowcontrol' }), nats.ConfigError, 'ack_policy');
  } finally {
    await js.streams.delete('FCS').catch(() => {});
    await js.streams.delete('FCO');
  }
});

test('consume holds at most maxMessages (or maxBytes) unacked while its loop stalls after one message, as nats.js', async () => {
  await js.streams.add({ name: 'BUDGET', subjects: ['BUDGET.>'], storage: 'memory' });
  try {
    const payload = Buffer.alloc(1000, 'p');
    await Promise.all(Array.from({ length: 400 }, () => js.publishAsync('BUDGET.x', payload)));
    // [options, the most messages they allow]: 10,000 bytes hold at most
    // 10 messages of 1,000 bytes of payload.
    for (const [opts, max] of [[{ maxMessages: 10 }, 10], [{ maxMessages: 100 }, 100], [{ maxBytes: 10_000 }, 10]]) {
      const name = `c${JSON.stringify(opts).replace(/\W/g, '')}`;
      await js.consumers.add('BUDGET', { durable_name: name, ack_policy: 'explicit', ack_wait: '60s' });
      const msgs = await js.consume('BUDGET', name, opts);
      try {
        const it = msgs[Symbol.asyncIterator]();
        const first = await it.next();
        assert.equal(first.done, false);
        await first.value.ackAck();
        // The loop stalls: the server's unacked count stays within the budget.
        let most = 0;
        for (const until = Date.now() + 2000; Date.now() < until; ) {
          most = Math.max(most, (await js.consumers.info('BUDGET', name)).num_ack_pending);
          await sleep(50);
        }
        assert.ok(most <= max && most >= max / 2, `${JSON.stringify(opts)}: num_ack_pending reached ${most}`);
      } finally {
        msgs.stop();
      }
    }
  } finally {
    await js.streams.delete('BUDGET');
  }
});

test('acks reach the server before a JetStream call made right after them: a second connection sees them first, 20 runs in a row', async () => {
  // The server handles acks on the consumer's own queue, apart from API
  // requests, so an info right after may still count them as pending (for
  // nats.js too); what a client controls is the order on the wire, which a
  // second connection subscribed to both subjects sees.
  await js.streams.add({ name: 'ACKORD', subjects: ['ACKORD.>'], storage: 'memory' });
  const watcher = await nats.connect({ servers: server.url });
  try {
    await js.consumers.add('ACKORD', { durable_name: 'c', ack_policy: 'explicit' });
    const seen = [];
    // One subscription for both: the order across two is not defined.
    watcher.subscribe('$JS.>', {
      callback: (err, m) => {
        if (err) seen.push('error');
        else if (m.subject.startsWith('$JS.ACK.ACKORD.c.')) seen.push('ack');
        else if (m.subject === '$JS.API.CONSUMER.INFO.ACKORD.c') seen.push('info');
      },
    });
    await watcher.flush();
    for (let run = 0; run < 20; run++) {
      await Promise.all(Array.from({ length: 10 }, (_, i) => js.publishAsync('ACKORD.x', `r${run}m${i}`)));
      const batch = await js.fetch('ACKORD', 'c', { maxMessages: 10, expires: 2000 });
      assert.equal(batch.length, 10);
      seen.length = 0;
      for (const m of batch) m.ack();
      await js.consumers.info('ACKORD', 'c');
      await eventually(() => seen.length === 11, 5000, `run ${run}: acks and info seen`, () => seen.join(','));
      assert.deepEqual(seen, [...Array(10).fill('ack'), 'info'], `run ${run}`);
    }
    // And the server applies them (on its own time).
    await eventually(async () => (await js.consumers.info('ACKORD', 'c')).num_ack_pending === 0, 5000, 'all acked');
  } finally {
    await watcher.close();
    await js.streams.delete('ACKORD');
  }
});

test('an inline status reaches a plain subscription with its code and description', async () => {
  await streamWith('CSTAT', 0);
  try {
    await js.consumers.add('CSTAT', { durable_name: 's', ack_policy: 'explicit' });
    const inbox = nc.newInbox();
    const sub = nc.subscribe(inbox);
    await nc.flush();
    const it = sub[Symbol.asyncIterator]();
    const pull = async (body) => {
      nc.publish('$JS.API.CONSUMER.MSG.NEXT.CSTAT.s', body, { reply: inbox });
      const { value } = await it.next();
      return value;
    };
    const none = await pull('{"batch":1,"no_wait":true}');
    assert.equal(none.status, 404);
    assert.equal(none.statusDescription, 'No Messages');
    const expired = await pull('{"batch":1,"expires":50000000}');
    assert.equal(expired.status, 408);
    assert.equal(expired.statusDescription, 'Request Timeout');
    await js.publish('CSTAT.a', 'm0');
    // A pull that waits: right after the publish's ack the consumer may not
    // have seen the message yet, and a no-wait pull would answer 404.
    const plain = await pull('{"batch":1,"expires":5000000000}');
    assert.equal(plain.status, 0);
    assert.equal(plain.statusDescription, '');
    assert.equal(plain.string(), 'm0');
    sub.unsubscribe();
  } finally {
    await js.streams.delete('CSTAT');
  }
});
