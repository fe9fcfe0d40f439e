'use strict';
// Push consumers (js.pushConsume) against a real nats-server with
// JetStream enabled: delivery in order with metadata and acks, a queue
// group sharing the messages, stop, and the errors.
const { test } = require('node:test');
const assert = require('node:assert/strict');
const nats = require('..');
const { useJetStream, rejectsWith } = require('./jetstream-env');
const { eventually } = require('./wait');

let nc;
let js;
useJetStream('natsio-node-push-', (env) => ({ nc, js } = env));

test('pushConsume: messages in order with metadata; acks move the ack floor; stop ends the loop', async () => {
  await js.streams.add({ name: 'PU', subjects: ['PU.>'], storage: 'memory' });
  try {
    for (let i = 0; i < 3; i++) await js.publish('PU.a', `p${i}`);
    await js.consumers.add('PU', { durable_name: 'd', ack_policy: 'explicit', deliver_subject: nc.newInbox(), idle_heartbeat: '1s', flow_control: true });
    const msgs = await js.pushConsume('PU', 'd');
    const seen = [];
    for await (const m of msgs) {
      seen.push([m.string(), m.info.streamSequence, m.info.stream]);
      m.ack();
      if (seen.length === 3) break;
    }
    assert.deepEqual(seen, [['p0', 1, 'PU'], ['p1', 2, 'PU'], ['p2', 3, 'PU']]);
    await eventually(async () => (await js.consumers.info('PU', 'd')).ack_floor.stream_seq === 3);

    await js.consumers.add('PU', { durable_name: 'pull' });
    await rejectsWith(js.pushConsume('PU', 'pull'), nats.InvalidArgumentError, 'not a push consumer');
    await rejectsWith(js.pushConsume('PU', 'missing'), nats.ConsumerNotFoundError);
  } finally {
    await js.streams.delete('PU');
  }
});

test('pushConsume: two members of a deliver group share the messages, none twice', async () => {
  await js.streams.add({ name: 'PQ', subjects: ['PQ.>'], storage: 'memory' });
  try {
    await js.consumers.add('PQ', { durable_name: 'q', ack_policy: 'explicit', deliver_subject: nc.newInbox(), deliver_group: 'workers' });
    const a = await js.pushConsume('PQ', 'q');
    const b = await js.pushConsume('PQ', 'q');
    for (let i = 0; i < 40; i++) await js.publish('PQ.x', String(i));
    const got = { a: [], b: [] };
    const read = async (name, msgs) => {
      for await (const m of msgs) {
        got[name].push(Number(m.string()));
        m.ack();
        if (got.a.length + got.b.length === 40) {
          a.stop();
          b.stop();
        }
      }
    };
    await Promise.all([read('a', a), read('b', b)]);
    const all = [...got.a, ...got.b].sort((x, y) => x - y);
    assert.deepEqual(all, Array.from({ length: 40 }, (_, i) => i));
    assert.ok(got.a.length > 0 && got.b.length > 0, `one member got everything (${got.a.length}, ${got.b.length})`);
  } finally {
    await js.streams.delete('PQ');
  }
});
