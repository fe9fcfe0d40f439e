'use strict';
// The ordered consumer (js.consumers.get(stream, opts)) against a real
// nats-server with JetStream enabled: order and metadata, deliver
// policies, filters, headers only, untilDrained, idleTimeout, healing
// after its consumer is deleted, stop, and bad input.
const { test } = require('node:test');
const assert = require('node:assert/strict');
const nats = require('..');
const { useJetStream, rejectsWith } = require('./jetstream-env');

let nc;
let js;
useJetStream('natsio-node-ord-', (env) => ({ nc, js } = env));

const SHORT = { expires: 2000, heartbeat: 500 };

async function streamWith(name, count) {
  await js.streams.add({ name, subjects: [`${name}.>`], storage: 'memory' });
  for (let i = 0; i < count; i++) await js.publish(`${name}.${i % 2}`, `m${i}`);
}

async function drainedSeqs(stream, opts) {
  const oc = await js.consumers.get(stream, opts);
  const seqs = [];
  for await (const m of await oc.consume({ ...SHORT, untilDrained: true })) seqs.push(m.info.streamSequence);
  await oc.stop();
  oc.close();
  return seqs;
}

test('ordered consumer: in order with metadata; one consumption at a time; stop deletes its consumer', async () => {
  await streamWith('OA', 6);
  try {
    const oc = await js.consumers.get('OA');
    assert.ok(oc instanceof nats.OrderedConsumer);
    const info = await oc.info();
    assert.match(info.name, /^[0-9A-Za-z]{22}_1$/); // nats.go's <NUID>_<serial>
    assert.equal(info.num_pending, 6);
    assert.equal(info.config.ack_policy, 'none');
    assert.equal((await oc.info(true)).name, info.name);
    const msgs = await oc.consume(SHORT);
    let i = 0;
    for await (const m of msgs) {
      assert.equal(m.string(), `m${i}`);
      assert.equal(m.info.streamSequence, i + 1);
      assert.equal(m.info.consumer, info.name);
      i++;
      if (i === 6) break;
    }
    // After break the consumption ended; the next continues after m5.
    await js.publish('OA.0', 'm6');
    const next = await oc.consume(SHORT);
    await rejectsWith(oc.consume(SHORT), nats.IllegalStateError);
    const it = next[Symbol.asyncIterator]();
    const r = await it.next();
    assert.equal(r.value.info.streamSequence, 7);
    const running = await oc.info();
    assert.ok((await js.consumers.names('OA')).includes(running.name));
    await oc.stop();
    assert.ok(!(await js.consumers.names('OA')).includes(running.name));
    assert.equal((await it.next()).done, true);
    await oc.stop();
    await rejectsWith(oc.consume(), nats.IllegalStateError);
    oc.close();
  } finally {
    await js.streams.delete('OA');
  }
});

test('ordered consumer: deliver policies, filters and headers only', async () => {
  await streamWith('OB', 3); // 1..3
  try {
    await new Promise((r) => setTimeout(r, 50));
    const between = new Date();
    await new Promise((r) => setTimeout(r, 50));
    for (let i = 3; i < 6; i++) await js.publish(`OB.${i % 2}`, `m${i}`); // 4..6
    assert.deepEqual(await drainedSeqs('OB'), [1, 2, 3, 4, 5, 6]);
    assert.deepEqual(await drainedSeqs('OB', { filter_subjects: ['OB.1'] }), [2, 4, 6]);
    assert.deepEqual(await drainedSeqs('OB', { deliver_policy: 'last' }), [6]);
    assert.deepEqual(await drainedSeqs('OB', { deliver_policy: 'last_per_subject' }), [5, 6]);
    assert.deepEqual(await drainedSeqs('OB', { deliver_policy: 'by_start_sequence', opt_start_seq: 4 }), [4, 5, 6]);
    assert.deepEqual(await drainedSeqs('OB', { deliver_policy: 'by_start_time', opt_start_time: between }), [4, 5, 6]);

    const oc = await js.consumers.get('OB', { headers_only: true });
    const it = (await oc.consume({ ...SHORT, untilDrained: true }))[Symbol.asyncIterator]();
    const m = (await it.next()).value;
    assert.equal(m.data.length, 0);
    assert.equal(String(m.headers.get('Nats-Msg-Size')), '2');
    await oc.stop();

    await assert.rejects(js.consumers.get('OB', { deliver_policy: 'sideways' }), TypeError);
    await rejectsWith(js.consumers.get('a.b'), nats.InvalidArgumentError);
    await rejectsWith(js.consumers.get('OB', { filter_subjects: ['bad..x'] }), nats.BadSubjectError);
    await rejectsWith(js.consumers.get('OB', { deliver_policy: 'by_start_sequence' }), nats.InvalidArgumentError);
    const missing = await js.consumers.get('NOSUCH');
    await rejectsWith(missing.info(), nats.StreamNotFoundError);
    await rejectsWith(missing.consume(), nats.StreamNotFoundError);
  } finally {
    await js.streams.delete('OB');
  }
});

test('ordered consumer metadata: every consumer it creates carries it, read back from consumer info; bad metadata is a TypeError', async () => {
  await streamWith('OM', 2);
  try {
    const metadata = { team: 'billing', tier: '2' };
    const oc = await js.consumers.get('OM', { metadata });
    const first = await oc.info();
    const read = await js.consumers.info('OM', first.name);
    // The server adds its own _nats.* keys.
    assert.equal(read.config.metadata?.team, 'billing', JSON.stringify(read.config));
    assert.equal(read.config.metadata.tier, '2');
    // The consumer that replaces a deleted one carries it too.
    const it = (await oc.consume(SHORT))[Symbol.asyncIterator]();
    for (let seq = 1; seq <= 2; seq++) assert.equal((await it.next()).value.info.streamSequence, seq);
    await js.consumers.delete('OM', first.name);
    await js.publish('OM.0', 'm2');
    const m = (await it.next()).value;
    assert.equal(m.info.streamSequence, 3);
    assert.notEqual(m.info.consumer, first.name);
    const healed = await js.consumers.info('OM', m.info.consumer);
    assert.equal(healed.config.metadata?.team, 'billing', JSON.stringify(healed.config));
    assert.equal(healed.config.metadata.tier, '2');
    await oc.stop();
    oc.close();
    // Without metadata: none of its own keys.
    const plain = await js.consumers.get('OM');
    assert.equal((await plain.info()).config.metadata?.team, undefined);
    await plain.stop();
    plain.close();

    for (const bad of ['team=billing', ['billing'], { tier: 2 }, { team: null }]) {
      await assert.rejects(js.consumers.get('OM', { metadata: bad }), (e) => {
        assert.ok(e instanceof TypeError, `${e?.name}: ${e?.message}`);
        assert.match(e.message, /metadata must be an object of strings/);
        return true;
      });
    }
  } finally {
    await js.streams.delete('OM');
  }
});

test('ordered consumer: heals when its consumer is deleted, then idleTimeout ends it with NoMessagesError', async () => {
  await streamWith('OC', 3);
  try {
    const oc = await js.consumers.get('OC');
    const first = (await oc.info()).name;
    const it = (await oc.consume({ ...SHORT, idleTimeout: 400 }))[Symbol.asyncIterator]();
    for (let seq = 1; seq <= 3; seq++) assert.equal((await it.next()).value.info.streamSequence, seq);
    await js.consumers.delete('OC', first);
    for (let i = 3; i < 6; i++) await js.publish('OC.0', `m${i}`);
    for (let seq = 4; seq <= 6; seq++) {
      const m = (await it.next()).value;
      assert.equal(m.info.streamSequence, seq);
      assert.notEqual(m.info.consumer, first);
    }
    const t0 = Date.now();
    await rejectsWith(it.next(), nats.NoMessagesError);
    assert.ok(Date.now() - t0 < 3000);
    // An empty remainder with untilDrained ends at once.
    const rest = await oc.consume({ ...SHORT, untilDrained: true });
    assert.equal((await rest[Symbol.asyncIterator]().next()).done, true);
    await oc.stop();
  } finally {
    await js.streams.delete('OC');
  }
});
