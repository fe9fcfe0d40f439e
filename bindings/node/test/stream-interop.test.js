'use strict';
// Stream reads interoperability with nats.js (@nats-io/jetstream, the
// official JavaScript client) over the same nats-server: nats.js's
// JetStream manager reads by last_by_subj / next_by_subj what this binding
// published, and this binding reads the same way what nats.js published.
const { test, after } = require('node:test');
const assert = require('node:assert/strict');
const natsjs = require('@nats-io/transport-node');
const { jetstream, jetstreamManager } = require('@nats-io/jetstream');
const { useJetStream } = require('./jetstream-env');

let server;
let js;
useJetStream('natsio-node-stream-interop-', (env) => ({ server, js } = env));

let njs;
after(() => njs?.close());

test('nats.js reads with last_by_subj / next_by_subj what this binding published, and the other way round', async () => {
  njs = await natsjs.connect({ servers: server.url });
  const jsm = await jetstreamManager(njs);
  const theirJs = jetstream(njs);
  await js.streams.add({ name: 'IOP', subjects: ['iop.>'], storage: 'memory' });
  try {
    // This binding publishes; nats.js reads.
    assert.equal((await js.publish('iop.ours', 'ours-1', { headers: { 'X-From': 'natsio' } })).seq, 1);
    assert.equal((await js.publish('iop.other', 'noise')).seq, 2);
    assert.equal((await js.publish('iop.ours', 'ours-2', { headers: { 'X-From': 'natsio' } })).seq, 3);

    const last = await jsm.streams.getMessage('IOP', { last_by_subj: 'iop.ours' });
    assert.ok(last, 'nats.js found no last message on iop.ours');
    assert.deepEqual([last.subject, last.seq, last.string()], ['iop.ours', 3, 'ours-2']);
    assert.equal(last.header.get('X-From'), 'natsio');
    // nats.js sends the request as given: next_by_subj reaches the server too.
    const next = await jsm.streams.getMessage('IOP', { seq: 2, next_by_subj: 'iop.ours' });
    assert.ok(next, 'nats.js found no next message on iop.ours');
    assert.deepEqual([next.subject, next.seq, next.string()], ['iop.ours', 3, 'ours-2']);
    const first = await jsm.streams.getMessage('IOP', { seq: 1, next_by_subj: 'iop.ours' });
    assert.deepEqual([first.seq, first.string()], [1, 'ours-1']);

    // nats.js publishes; this binding reads.
    const h = natsjs.headers();
    h.set('X-From', 'nats.js');
    assert.equal((await theirJs.publish('iop.theirs', 'theirs-1', { headers: h })).seq, 4);
    assert.equal((await theirJs.publish('iop.other', 'noise')).seq, 5);
    assert.equal((await theirJs.publish('iop.theirs', 'theirs-2', { headers: h })).seq, 6);

    const ourLast = await js.streams.getMessage('IOP', { last_by_subj: 'iop.theirs' });
    assert.deepEqual([ourLast.subject, ourLast.seq, ourLast.string()], ['iop.theirs', 6, 'theirs-2']);
    assert.deepEqual(ourLast.headers.get('X-From'), ['nats.js']);
    const walked = [];
    for (let seq = 1; ; ) {
      let m;
      try {
        m = await js.streams.getMessage('IOP', { seq, next_by_subj: 'iop.theirs' });
      } catch (e) {
        assert.equal(e.code, 'MESSAGE_NOT_FOUND', `${e.name}: ${e.message}`);
        break;
      }
      walked.push([m.seq, m.string(), m.headers.first('X-From')]);
      seq = m.seq + 1;
    }
    assert.deepEqual(walked, [
      [4, 'theirs-1', 'nats.js'],
      [6, 'theirs-2', 'nats.js'],
    ]);

    // Both see the same stream: the subjects filter and the list agree.
    const ours = await js.streams.info('IOP', { subjects_filter: 'iop.>' });
    const theirs = await jsm.streams.info('IOP', { subjects_filter: 'iop.>' });
    assert.deepEqual(ours.state.subjects, { 'iop.ours': 2, 'iop.other': 2, 'iop.theirs': 2 });
    assert.deepEqual(ours.state.subjects, theirs.state.subjects);
    const theirList = [];
    for await (const si of jsm.streams.list('iop.x')) theirList.push(si.config.name);
    assert.deepEqual((await js.streams.list('iop.x')).map((si) => si.config.name), theirList);
    assert.deepEqual(theirList, ['IOP']);

    // The last message by a wildcard subject: the same from both clients.
    await js.publish('iop.deep.er', 'deeper');
    for (const [filter, seq] of [['iop.*', 6], ['iop.>', 7], ['iop.*.er', 7]]) {
      const theirsLast = await jsm.streams.getMessage('IOP', { last_by_subj: filter });
      const oursLast = await js.streams.getMessage('IOP', { last_by_subj: filter });
      assert.deepEqual([oursLast.subject, oursLast.seq], [theirsLast.subject, theirsLast.seq], filter);
      assert.equal(oursLast.seq, seq, filter);
    }
  } finally {
    await js.streams.delete('IOP');
  }
});
