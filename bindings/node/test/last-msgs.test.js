'use strict';
// Batch Direct Get of the last message per subject
// (js.streams.getLastMessagesFor, natsio_js_stream_get_last_msgs_for)
// against a real nats-server with JetStream enabled, and nats.js
// (@nats-io/jetstream's jsm.direct.getLastMessagesFor) reading the same.
const { test } = require('node:test');
const assert = require('node:assert/strict');
const natsjs = require('@nats-io/transport-node');
const { jetstreamManager } = require('@nats-io/jetstream');
const nats = require('..');
const { runNodeFixture } = require('./server');
const { useJetStream, rejectsWith } = require('./jetstream-env');
const { liveHandles, collectUntil, settledHandles } = require('./gc');
const { sleep } = require('./wait');

let server;
let nc;
let js;
useJetStream('natsio-node-last-msgs-', (env) => ({ server, nc, js } = env));

// The stream of most tests: seqs 1..6 on lm.a.1 lm.b.1 lm.a.2 lm.b.2 |
// lm.a.3 lm.a.1, with `cut` a time between seqs 4 and 5.
const STREAM = 'LM';
const PUBLISHED = ['lm.a.1', 'lm.b.1', 'lm.a.2', 'lm.b.2', 'lm.a.3', 'lm.a.1'];
let cut;
let made;

/** Makes the stream once (the first test that needs it waits for it). */
function lmStream() {
  made ??= (async () => {
    await js.streams.add({ name: STREAM, subjects: ['lm.>'], storage: 'memory', allow_direct: true });
    for (const [i, subject] of PUBLISHED.entries()) {
      if (i === 4) {
        await sleep(20);
        cut = new Date();
        await sleep(20);
      }
      const ack = await js.publish(subject, `${subject}#${i + 1}`, { headers: { 'X-Seq': String(i + 1) } });
      assert.equal(ack.seq, i + 1);
    }
  })();
  return made;
}

/** [seq, subject] of every message of the iterator, till its end. */
async function drain(msgs) {
  const got = [];
  for await (const m of msgs) got.push([m.seq, m.subject]);
  return got;
}

const seqs = async (msgs) => (await drain(msgs)).map(([seq]) => seq);

test('getLastMessagesFor("lm.a.*") yields the last message of each subject in stream order, then ends', async () => {
  await lmStream();
  const msgs = js.streams.getLastMessagesFor(STREAM, 'lm.a.*');
  assert.ok(msgs instanceof nats.StoredMsgs);
  assert.equal(msgs.stream, STREAM);
  const got = [];
  for await (const m of msgs) {
    assert.ok(m instanceof nats.StoredMsg);
    got.push([m.seq, m.subject, m.string(), m.headers.first('X-Seq')]);
    assert.ok(m.time instanceof Date && m.time.getTime() > 0);
  }
  assert.deepEqual(got, [
    [3, 'lm.a.2', 'lm.a.2#3', '3'],
    [5, 'lm.a.3', 'lm.a.3#5', '5'],
    [6, 'lm.a.1', 'lm.a.1#6', '6'],
  ]);
  // Ended by the batch's end: done from then on, closed without error.
  assert.deepEqual(await msgs.next(), { value: undefined, done: true });
  assert.equal(await msgs.closed, undefined);
  assert.equal(msgs.isClosed, true);
  assert.equal(msgs.stats().delivered, 3);
  msgs.stop(); // idempotent after the end
  // An array of one filter is the same request.
  assert.deepEqual(await seqs(js.streams.getLastMessagesFor(STREAM, ['lm.a.*'])), [3, 5, 6]);
});

test('getLastMessagesFor with two filters, and in nats.js form ({multi_last})', async () => {
  await lmStream();
  const both = [
    [2, 'lm.b.1'],
    [3, 'lm.a.2'],
    [4, 'lm.b.2'],
    [5, 'lm.a.3'],
    [6, 'lm.a.1'],
  ];
  assert.deepEqual(await drain(js.streams.getLastMessagesFor(STREAM, ['lm.a.*', 'lm.b.*'])), both);
  assert.deepEqual(await drain(js.streams.getLastMessagesFor(STREAM, { multi_last: ['lm.a.*', 'lm.b.*'] })), both);
  // Overlapping filters name each subject once.
  assert.deepEqual(await drain(js.streams.getLastMessagesFor(STREAM, ['lm.>', 'lm.a.*'])), both);
});

test('getLastMessagesFor with batch yields at most that many, the first in stream order', async () => {
  await lmStream();
  assert.deepEqual(await seqs(js.streams.getLastMessagesFor(STREAM, 'lm.a.*', { batch: 2 })), [3, 5]);
  assert.deepEqual(await seqs(js.streams.getLastMessagesFor(STREAM, { multi_last: ['lm.>'], batch: 1 })), [2]);
  assert.deepEqual(await seqs(js.streams.getLastMessagesFor(STREAM, 'lm.a.*', { batch: 10 })), [3, 5, 6]);
});

test('getLastMessagesFor up_to_seq / up_to_time reads the last messages as of that point', async () => {
  await lmStream();
  assert.deepEqual(await seqs(js.streams.getLastMessagesFor(STREAM, 'lm.a.*', { up_to_seq: 4 })), [1, 3]);
  assert.deepEqual(await seqs(js.streams.getLastMessagesFor(STREAM, 'lm.a.*', { upToSeq: 4n })), [1, 3]);
  assert.deepEqual(await seqs(js.streams.getLastMessagesFor(STREAM, { multi_last: ['lm.>'], up_to_seq: 2 })), [1, 2]);
  // `cut` lies between seqs 4 and 5: as a Date, an RFC 3339 string, ms, ns.
  for (const upTo of [cut, cut.toISOString(), cut.getTime(), BigInt(cut.getTime()) * 1000000n]) {
    assert.deepEqual(await seqs(js.streams.getLastMessagesFor(STREAM, 'lm.a.*', { up_to_time: upTo })), [1, 3], String(upTo));
  }
  assert.deepEqual(await seqs(js.streams.getLastMessagesFor(STREAM, 'lm.a.*', { upToTime: cut, batch: 1 })), [1]);
  // Before the first message: none.
  assert.deepEqual(await seqs(js.streams.getLastMessagesFor(STREAM, 'lm.a.*', { up_to_time: new Date(cut.getTime() - 3600e3) })), []);
});

test('getLastMessagesFor with no matching subject yields nothing and ends cleanly', async () => {
  await lmStream();
  const msgs = js.streams.getLastMessagesFor(STREAM, 'lm.c.*');
  assert.deepEqual(await drain(msgs), []);
  assert.equal(await msgs.closed, undefined);
  assert.deepEqual(await seqs(js.streams.getLastMessagesFor(STREAM, ['lm.c.*', 'other.>'])), []);
});

test('breaking out of for await stops the batch read and frees it (window full: 300 subjects)', async () => {
  const name = 'LMBIG';
  await js.streams.add({ name, subjects: ['big.>'], storage: 'memory', allow_direct: true });
  try {
    const acks = [];
    for (let i = 0; i < 300; i++) acks.push(js.publishAsync(`big.${i}`, `m${i}`));
    await Promise.all(acks);
    // All 300 when read to the end (more than the addon's window of 256).
    const all = await seqs(js.streams.getLastMessagesFor(name, 'big.>'));
    assert.deepEqual(all, Array.from({ length: 300 }, (_, i) => i + 1));

    const before = await settledHandles();
    // (Each iterator lives in its own function, so none stays reachable.)
    await (async () => {
      const msgs = js.streams.getLastMessagesFor(name, 'big.>');
      assert.equal(liveHandles().storedMsgs, before.storedMsgs + 1);
      const got = [];
      for await (const m of msgs) {
        got.push(m.seq);
        if (got.length === 2) break;
      }
      assert.deepEqual(got, [1, 2]);
      assert.equal(msgs.isClosed, true);
      assert.equal(await msgs.closed, undefined);
      assert.deepEqual(await msgs.next(), { value: undefined, done: true });
    })();
    await (async () => {
      // stop() while the library waits for the loop to take more.
      const other = js.streams.getLastMessagesFor(name, 'big.>');
      assert.equal((await other.next()).value.seq, 1);
      await sleep(50);
      other.stop();
      assert.deepEqual(await other.next(), { value: undefined, done: true });
      assert.equal(await other.closed, undefined);
    })();
    // Stopped, or dropped unread without stop(): the garbage collector frees them.
    js.streams.getLastMessagesFor(name, 'big.>');
    await collectUntil((l) => l.storedMsgs === before.storedMsgs, 'the stopped and dropped batch reads');
  } finally {
    await js.streams.delete(name);
  }
});

for (const mode of ['break', 'unread']) {
  test(`the process exits on its own after a batch read (${mode}, then close)`, async () => {
    const r = await runNodeFixture('last-msgs-exit.js', [server.url, mode], 8000);
    assert.equal(r.stderr, '');
    assert.equal(r.stdout, `read=${mode === 'break' ? 1 : 0} error=undefined closed=true\n`);
    assert.equal(r.exitedOnItsOwn, true, 'child still running');
    assert.equal(r.code, 0);
  });
}

test('getLastMessagesFor on a stream without allow_direct, or on no stream, throws NoRespondersError from the loop', async () => {
  await lmStream();
  await js.streams.add({ name: 'LMND', subjects: ['nd.>'], storage: 'memory' });
  try {
    await js.publish('nd.a', 'x');
    const msgs = js.streams.getLastMessagesFor('LMND', 'nd.>');
    await rejectsWith(drain(msgs), nats.NoRespondersError, 'LMND');
    // closed resolves with that error; the loop threw it once.
    assert.ok((await msgs.closed) instanceof nats.NoRespondersError);
    assert.deepEqual(await msgs.next(), { value: undefined, done: true });
    await rejectsWith(drain(js.streams.getLastMessagesFor('LM_NO_SUCH_STREAM', 'lm.>')), nats.NoRespondersError);
  } finally {
    await js.streams.delete('LMND');
  }
});

test('getLastMessagesFor rejects bad input at once: TypeError for wrong types, the library error classes otherwise', async () => {
  await lmStream();
  const get = (...args) => () => js.streams.getLastMessagesFor(...args);
  const live = liveHandles().storedMsgs;
  // No subjects, a bad subject, both bounds, a bad stream name: the library's checks.
  assert.throws(get(STREAM, []), nats.InvalidArgumentError);
  assert.throws(get(STREAM, { multi_last: [] }), nats.InvalidArgumentError);
  assert.throws(get(STREAM, 'lm..a'), nats.BadSubjectError);
  assert.throws(get(STREAM, ['lm.a.*', '']), nats.BadSubjectError);
  assert.throws(get(STREAM, 'lm.a.*', { up_to_seq: 4, up_to_time: cut }), (e) => e instanceof nats.InvalidArgumentError && /exclude/.test(e.message));
  assert.throws(get('L.M', 'lm.a.*'), nats.InvalidArgumentError);
  assert.throws(get(STREAM, 'lm.a.*', { batch: 2 ** 32 }), nats.InvalidArgumentError);
  // Wrong types: TypeError, as everywhere in the binding.
  assert.throws(get(STREAM), TypeError);
  assert.throws(get(STREAM, {}), TypeError);
  assert.throws(get(STREAM, 42), TypeError);
  assert.throws(get(STREAM, ['lm.a.*', 7]), TypeError);
  assert.throws(get(42, 'lm.a.*'), TypeError);
  assert.throws(get(STREAM, 'lm.a.*', 'batch'), TypeError);
  assert.throws(get(STREAM, 'lm.a.*', { batch: -1 }), TypeError);
  assert.throws(get(STREAM, 'lm.a.*', { batch: 1.5 }), TypeError);
  assert.throws(get(STREAM, 'lm.a.*', { up_to_seq: -4 }), TypeError);
  assert.throws(get(STREAM, 'lm.a.*', { up_to_time: 'yesterday' }), TypeError);
  assert.throws(get(STREAM, 'lm.a.*', { up_to_time: new Date(NaN) }), TypeError);
  assert.throws(get(STREAM, 'lm.a.*', { up_to_time: {} }), TypeError);
  // No batch read was started by the failed calls.
  assert.equal(liveHandles().storedMsgs, live);
});

test('getLastMessagesFor on a closed context throws IllegalStateError; a closed connection ends it with ConnectionClosedError', async () => {
  await lmStream();
  const c = await nats.connect({ servers: server.url });
  const ctx = c.jetstream();
  const msgs = ctx.streams.getLastMessagesFor(STREAM, 'lm.a.*');
  assert.deepEqual(await seqs(msgs), [3, 5, 6]);
  ctx.close();
  assert.throws(() => ctx.streams.getLastMessagesFor(STREAM, 'lm.a.*'), nats.IllegalStateError);
  const ctx2 = c.jetstream();
  const unread = ctx2.streams.getLastMessagesFor(STREAM, 'lm.a.*');
  await c.close();
  // Unless the read had finished by then (it reads three messages at once).
  const end = await unread.closed;
  assert.ok(end === undefined || end instanceof nats.ConnectionClosedError, `${end}`);
  assert.throws(() => ctx2.streams.getLastMessagesFor(STREAM, 'lm.a.*'), nats.ConnectionClosedError);
  ctx2.close();
});

test('nats.js (jsm.direct.getLastMessagesFor) reads what this binding published: the same messages', async () => {
  await lmStream();
  const njs = await natsjs.connect({ servers: server.url });
  try {
    const jsm = await jetstreamManager(njs);
    const theirs = async (opts) => {
      const got = [];
      for await (const m of await jsm.direct.getLastMessagesFor(STREAM, opts)) got.push([m.seq, m.subject, m.string()]);
      return got;
    };
    const ours = async (opts) => {
      const got = [];
      for await (const m of js.streams.getLastMessagesFor(STREAM, opts)) got.push([m.seq, m.subject, m.string()]);
      return got;
    };
    for (const opts of [
      { multi_last: ['lm.a.*'] },
      { multi_last: ['lm.a.*', 'lm.b.*'] },
      { multi_last: ['lm.>'], batch: 2 },
      { multi_last: ['lm.a.*'], up_to_seq: 4 },
      { multi_last: ['lm.>'], up_to_time: cut },
    ]) {
      const expected = await theirs(opts);
      assert.ok(expected.length > 0, `nats.js read nothing for ${JSON.stringify(opts)}`);
      assert.deepEqual(await ours(opts), expected, JSON.stringify(opts));
    }
    assert.deepEqual(
      (await theirs({ multi_last: ['lm.a.*'] })).map(([seq]) => seq),
      [3, 5, 6],
    );
  } finally {
    await njs.close();
  }
});
