'use strict';
// Stream reads and listings against a real nats-server with JetStream:
// getMessage by next_by_subj (with and without Direct Get), stream info
// with subjects_filter, streams.list, apiLevel, the PubAck of counter
// streams, and error messages that name their status once.
const { test } = require('node:test');
const assert = require('node:assert/strict');
const nats = require('..');
const { useJetStream, rejectsWith } = require('./jetstream-env');

let nc;
let js;
useJetStream('natsio-node-streams-', (env) => ({ nc, js } = env));

/** Runs `fn`, then deletes the streams named (each test leaves none behind,
 * so streams.list() sees only its own). */
async function withStreams(names, fn) {
  try {
    await fn();
  } finally {
    for (const name of names) await js.streams.delete(name).catch(() => {});
  }
}

/** How often `text` occurs in `s`. */
const occurrences = (s, text) => s.split(text).length - 1;

test('getMessage next_by_subj walks one subject among interleaved ones, then MessageNotFoundError', async () => {
  await withStreams(['WALK'], async () => {
    await js.streams.add({ name: 'WALK', subjects: ['w.>'], storage: 'memory' });
    const sent = [
      ['w.a', 'a1'],
      ['w.b', 'b1'],
      ['w.a', 'a2'],
      ['w.c', 'c1'],
      ['w.b', 'b2'],
      ['w.a', 'a3'],
    ];
    for (const [subject, data] of sent) await js.publish(subject, data);

    // Walk w.a: each read starts after the last one found.
    const walked = [];
    let seq = 1;
    for (;;) {
      let m;
      try {
        m = await js.streams.getMessage('WALK', { seq, next_by_subj: 'w.a' });
      } catch (e) {
        assert.ok(e instanceof nats.MessageNotFoundError, `${e.name}: ${e.message}`);
        break;
      }
      assert.equal(m.subject, 'w.a');
      walked.push([m.seq, m.string()]);
      seq = m.seq + 1;
      assert.ok(walked.length <= sent.length, 'the walk does not end');
    }
    assert.deepEqual(walked, [
      [1, 'a1'],
      [3, 'a2'],
      [6, 'a3'],
    ]);
    assert.equal(seq, 7);
    await rejectsWith(js.streams.getMessage('WALK', { seq: 7, next_by_subj: 'w.a' }), nats.MessageNotFoundError);

    // The camelCase name, a wildcard, and a start from the beginning (seq omitted).
    const c = await js.streams.getMessage('WALK', { seq: 4, nextBySubject: 'w.*' });
    assert.deepEqual([c.subject, c.seq, c.string()], ['w.c', 4, 'c1']);
    const b = await js.streams.getMessage('WALK', { next_by_subj: 'w.b' });
    assert.deepEqual([b.subject, b.seq], ['w.b', 2]);
    await rejectsWith(js.streams.getMessage('WALK', { seq: 1, next_by_subj: 'w.none' }), nats.MessageNotFoundError);

    // Argument errors.
    await assert.rejects(js.streams.getMessage('WALK', { seq: 1, next_by_subj: 'w.a', last_by_subj: 'w.a' }), TypeError);
    await assert.rejects(js.streams.getMessage('WALK', { seq: 1, next_by_subj: 5 }), TypeError);
    await assert.rejects(js.streams.getMessage('WALK', { seq: -1, next_by_subj: 'w.a' }), TypeError);
    await rejectsWith(js.streams.getMessage('WALK', { seq: 1, next_by_subj: 'w..a' }), nats.BadSubjectError);
    await rejectsWith(js.streams.getMessage('NOPE', { seq: 1, next_by_subj: 'w.a' }), nats.StreamNotFoundError);
  });
});

test('getMessage reads the same message from a stream with allow_direct and one without; a deleted stream: not found', async () => {
  const streams = { DIRECT: 'dir', LEADER: 'ldr' };
  await withStreams(Object.keys(streams), async () => {
    for (const [name, prefix] of Object.entries(streams)) {
      const info = await js.streams.add({
        name,
        subjects: [`${prefix}.>`],
        storage: 'memory',
        allow_direct: name === 'DIRECT',
      });
      assert.equal(info.config.allow_direct, name === 'DIRECT');
      await js.publish(`${prefix}.a`, 'one', { headers: { 'X-N': '1' } });
      await js.publish(`${prefix}.b`, 'two');
      await js.publish(`${prefix}.a`, 'three', { headers: { 'X-N': ['3', '3b'] } });
    }
    // A Direct Get reply also carries where the message is (as nats.go and
    // nats.js keep them): not part of the message, so not compared.
    const DIRECT_GET_HEADERS = new Set([
      'Nats-Stream',
      'Nats-Subject',
      'Nats-Sequence',
      'Nats-Time-Stamp',
      'Nats-Last-Sequence',
      'Nats-Num-Pending',
      'Nats-UpTo-Sequence',
    ]);
    /** What a read gives, with the stream's subject prefix taken off. */
    const read = async (name, query) => {
      const m = await js.streams.getMessage(name, typeof query === 'function' ? query(streams[name]) : query);
      const headers = [...(m.headers ?? [])].filter(([k]) => !DIRECT_GET_HEADERS.has(k));
      return {
        subject: m.subject.slice(streams[name].length),
        seq: m.seq,
        data: m.string(),
        headers: headers.length > 0 ? Object.fromEntries(headers) : undefined,
        time: m.time.getTime() > 0,
      };
    };
    const queries = [
      2,
      { seq: 3 },
      (p) => ({ last_by_subj: `${p}.a` }),
      (p) => ({ seq: 2, next_by_subj: `${p}.a` }),
      (p) => ({ seq: 1, next_by_subj: `${p}.>` }),
    ];
    const expected = [
      { subject: '.b', seq: 2, data: 'two', headers: undefined, time: true },
      { subject: '.a', seq: 3, data: 'three', headers: { 'X-N': ['3', '3b'] }, time: true },
      { subject: '.a', seq: 3, data: 'three', headers: { 'X-N': ['3', '3b'] }, time: true },
      { subject: '.a', seq: 3, data: 'three', headers: { 'X-N': ['3', '3b'] }, time: true },
      { subject: '.a', seq: 1, data: 'one', headers: { 'X-N': ['1'] }, time: true },
    ];
    for (let i = 0; i < queries.length; i++) {
      const direct = await read('DIRECT', queries[i]);
      const leader = await read('LEADER', queries[i]);
      assert.deepEqual(direct, leader, `query ${i}`);
      assert.deepEqual(direct, expected[i], `query ${i}`);
    }
    for (const name of Object.keys(streams)) {
      await rejectsWith(js.streams.getMessage(name, 99), nats.MessageNotFoundError);
    }

    // Deleted through another context: this one still believes the stream
    // is there. Its Direct Get finds no one to answer (MessageNotFoundError,
    // and the context forgets what it knew); from then on, and for the
    // stream read through its leader, the API says StreamNotFoundError.
    const other = nc.jetstream();
    try {
      for (const [name, prefix] of Object.entries(streams)) {
        await other.streams.delete(name);
        const queries = [{ seq: 1 }, { last_by_subj: `${prefix}.a` }, { seq: 1, next_by_subj: `${prefix}.a` }];
        for (const [i, query] of queries.entries()) {
          const cls = name === 'DIRECT' && i === 0 ? nats.MessageNotFoundError : nats.StreamNotFoundError;
          await rejectsWith(js.streams.getMessage(name, query), cls);
        }
      }
    } finally {
      other.close();
    }
  });
});

test('getMessage after the stream is deleted through the same context: StreamNotFoundError, with or without allow_direct', async () => {
  for (const allowDirect of [true, false]) {
    await js.streams.add({ name: 'GONE', subjects: ['gone.>'], storage: 'memory', allow_direct: allowDirect });
    await js.publish('gone.a', 'x');
    assert.equal((await js.streams.getMessage('GONE', { seq: 1, next_by_subj: 'gone.a' })).string(), 'x');
    await js.streams.delete('GONE');
    for (const query of [{ seq: 1 }, { last_by_subj: 'gone.a' }, { seq: 1, next_by_subj: 'gone.a' }]) {
      await rejectsWith(js.streams.getMessage('GONE', query), nats.StreamNotFoundError, 'stream not found');
    }
  }
});

test('info with subjects_filter: state.subjects maps each matching subject to its count', async () => {
  await withStreams(['SUBJ'], async () => {
    await js.streams.add({ name: 'SUBJ', subjects: ['a.>', 'b.>'], storage: 'memory' });
    for (const subject of ['a.1', 'a.1', 'a.2', 'b.1']) await js.publish(subject, 'x');

    const info = await js.streams.info('SUBJ', { subjects_filter: 'a.>' });
    assert.equal(info.config.name, 'SUBJ');
    assert.equal(info.state.messages, 4);
    assert.deepEqual(info.state.subjects, { 'a.1': 2, 'a.2': 1 });
    assert.deepEqual((await js.streams.info('SUBJ', { subjectsFilter: '*.1' })).state.subjects, { 'a.1': 2, 'b.1': 1 });
    assert.deepEqual((await js.streams.info('SUBJ', { subjects_filter: '>' })).state.subjects, {
      'a.1': 2,
      'a.2': 1,
      'b.1': 1,
    });
    // Without a filter (or with none set) there is no map.
    assert.equal((await js.streams.info('SUBJ')).state.subjects, undefined);
    assert.equal((await js.streams.info('SUBJ', {})).state.subjects, undefined);
    const none = (await js.streams.info('SUBJ', { subjects_filter: 'c.>' })).state.subjects;
    assert.ok(none === undefined || Object.keys(none).length === 0, JSON.stringify(none));

    await rejectsWith(js.streams.info('NOPE', { subjects_filter: 'a.>' }), nats.StreamNotFoundError);
    await rejectsWith(js.streams.info('SUBJ', { subjects_filter: 'a..b' }), nats.BadSubjectError);
    await assert.rejects(js.streams.info('SUBJ', { subjects_filter: 1 }), TypeError);
    await assert.rejects(js.streams.info('SUBJ', 'a.>'), TypeError);
  });
});

test('list: the StreamInfo of every stream, and a subject narrows it', async () => {
  await withStreams(['LIST1', 'LIST2'], async () => {
    assert.deepEqual(await js.streams.list(), []);
    await js.streams.add({ name: 'LIST1', subjects: ['l1.>'], storage: 'memory' });
    await js.streams.add({ name: 'LIST2', subjects: ['l2.>'], storage: 'memory', description: 'second' });
    await js.publish('l2.x', 'x');

    const all = await js.streams.list();
    assert.equal(all.length, 2);
    assert.deepEqual(all.map((si) => si.config.name).sort(), ['LIST1', 'LIST2']);
    for (const si of all) {
      assert.equal(typeof si.state.messages, 'number');
      assert.equal(typeof si.created, 'string');
    }

    const narrowed = await js.streams.list('l2.x');
    assert.equal(narrowed.length, 1);
    assert.equal(narrowed[0].config.name, 'LIST2');
    assert.equal(narrowed[0].config.description, 'second');
    assert.equal(narrowed[0].state.messages, 1);
    assert.deepEqual(
      (await js.streams.list('l1.*')).map((si) => si.config.name),
      ['LIST1'],
    );
    assert.deepEqual(await js.streams.list('nothing.here'), []);
    // The same streams as names().
    assert.deepEqual((await js.streams.list()).map((si) => si.config.name).sort(), (await js.streams.names()).sort());
    await rejectsWith(js.streams.list('l1..x'), nats.BadSubjectError);
    await assert.rejects(js.streams.list(7), TypeError);
  });
});

test('apiLevel: the JetStream API level the server reports', async () => {
  const level = await js.apiLevel();
  assert.equal(typeof level, 'number');
  assert.ok(Number.isInteger(level));
  // nats-server 2.11 reports 1; the suite runs 2.14.
  assert.ok(level >= 1, `api level ${level}`);
});

test('PubAck: a counter stream gives val; a plain publish has no val, batch or count', async () => {
  await withStreams(['PLAIN', 'COUNTER'], async () => {
    await js.streams.add({ name: 'PLAIN', subjects: ['plain.>'], storage: 'memory' });
    const plain = await js.publish('plain.a', 'x');
    assert.deepEqual(plain, { stream: 'PLAIN', seq: 1, duplicate: false });
    assert.equal(plain.val, undefined);
    assert.equal(plain.batch, undefined);
    assert.equal(plain.count, undefined);
    assert.equal('val' in (await js.publishAsync('plain.a', 'y')), false);

    await js.streams.add({ name: 'COUNTER', subjects: ['cnt.>'], storage: 'memory', allow_msg_counter: true });
    const first = await js.publish('cnt.hits', undefined, { headers: { 'Nats-Incr': '5' } });
    assert.deepEqual(first, { stream: 'COUNTER', seq: 1, duplicate: false, val: '5' });
    const second = await js.publish('cnt.hits', undefined, { headers: { 'Nats-Incr': '5' } });
    assert.equal(second.val, '10');
    assert.equal(second.seq, 2);
    assert.equal(second.batch, undefined);
    assert.equal(second.count, undefined);
    // Another subject counts on its own; publishAsync gives val too.
    assert.equal((await js.publishAsync('cnt.other', undefined, { headers: { 'Nats-Incr': '-2' } })).val, '-2');
    // The stored counter agrees.
    const stored = await js.streams.getMessage('COUNTER', { last_by_subj: 'cnt.hits' });
    assert.equal(stored.json().val, '10');
  });
});

test('error messages name their status once: wrong last sequence', async () => {
  await withStreams(['ERRTEXT'], async () => {
    await js.streams.add({ name: 'ERRTEXT', subjects: ['errtext.>'], storage: 'memory' });
    await js.publish('errtext.a', 'x');
    await js.publish('errtext.a', 'y');
    await assert.rejects(js.publish('errtext.a', 'z', { expect: { lastSequence: 1 } }), (e) => {
      assert.ok(e instanceof nats.WrongLastSequenceError, `${e.name}: ${e.message}`);
      assert.equal(occurrences(e.message, 'wrong last sequence'), 1, e.message);
      // The server's detail is kept.
      assert.match(e.message, /10071/);
      return true;
    });
    await assert.rejects(js.streams.info('NOPE'), (e) => {
      assert.ok(e instanceof nats.StreamNotFoundError);
      assert.equal(occurrences(e.message, 'stream not found'), 1, e.message);
      return true;
    });
    // A detail that does not start with the status text follows it.
    await assert.rejects(js.streams.add({ name: 'ERRX', x_unknown: 1 }), (e) => {
      assert.ok(e instanceof nats.JetStreamApiError);
      assert.ok(e.message.startsWith('JetStream API error: '), e.message);
      assert.match(e.message, /x_unknown/);
      return true;
    });
  });
});
