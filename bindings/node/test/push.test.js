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

// Publishes `n` messages "<prefix><i>" to `subject`.
async function publishN(subject, prefix, n) {
  for (let i = 0; i < n; i++) await js.publish(subject, `${prefix}${i}`);
}

test('drain of a push consumption: what the server sent is still yielded and acked, none redelivered, nothing after', async () => {
  await js.streams.add({ name: 'PDN', subjects: ['PDN.>'], storage: 'memory' });
  try {
    const n = 30;
    await publishN('PDN.a', 'd', n);
    await js.consumers.add('PDN', { durable_name: 'd', ack_policy: 'explicit', ack_wait: 30e9, deliver_subject: nc.newInbox() });
    const info = () => js.consumers.info('PDN', 'd');
    const msgs = await js.pushConsume('PDN', 'd');
    // All of it sent (none acked yet) before the drain.
    await eventually(async () => (await info()).num_ack_pending === n, 10000, 'the deliveries');
    const drained = msgs.drain();
    const seen = [];
    for await (const m of msgs) {
      seen.push(m.string());
      m.ack();
    }
    await drained;
    assert.deepEqual(seen, Array.from({ length: n }, (_, i) => `d${i}`));
    await eventually(async () => (await info()).num_ack_pending === 0, 10000, 'the acks');
    assert.equal((await info()).num_redelivered, 0);
    await js.publish('PDN.a', 'late');
    await eventually(async () => (await info()).num_pending === 1, 10000, 'the late message held at the server');
  } finally {
    await js.streams.delete('PDN');
  }
});

test('drain of a pull consumption: no more pulls; what was pulled is yielded; the rest stays at the server', async () => {
  await js.streams.add({ name: 'PDL', subjects: ['PDL.>'], storage: 'memory' });
  try {
    // Large messages: the drain comes while the server still sends the
    // first pull's batch, so that request is open then.
    const n = 300;
    const window = 100;
    const pad = 'x'.repeat(16 * 1024);
    for (let i = 0; i < n; i++) await js.publish('PDL.a', `p${i} ${pad}`);
    await js.consumers.add('PDL', { durable_name: 'p', ack_policy: 'explicit', ack_wait: 30e9 });
    const msgs = await js.consume('PDL', 'p', { maxMessages: window });
    let read = 0;
    let drained = null;
    for await (const m of msgs) {
      assert.equal(m.string().slice(0, m.string().indexOf(' ')), `p${read}`);
      m.ack();
      read++;
      drained ??= msgs.drain();
    }
    await drained;
    const info = () => js.consumers.info('PDL', 'p');
    // Everything the server delivered was read and acked, none redelivered:
    // the drain ended its open pull requests before withdrawing their inbox,
    // so nothing was sent to it after (that would stay pending until ack_wait).
    await eventually(async () => (await info()).num_ack_pending === 0, 10000, 'the acks');
    const ci = await info();
    assert.ok(read <= window, `the drain pulled again (${read})`);
    assert.equal(ci.delivered.consumer_seq, read);
    assert.equal(ci.num_redelivered, 0);
    assert.equal(ci.num_pending, n - read);
    // Stopped first: nothing to drain.
    const stopped = await js.consume('PDL', 'p');
    stopped.stop();
    await rejectsWith(stopped.drain(), nats.SubscriptionClosedError);
  } finally {
    await js.streams.delete('PDL');
  }
});

test('nats.js facade: stop() of a push consume still yields what the server sent, as nats.js yields what it queued', async () => {
  const { jetstream } = require('natsio/jetstream');
  await js.streams.add({ name: 'PDF', subjects: ['PDF.>'], storage: 'memory' });
  try {
    const n = 20;
    await publishN('PDF.a', 'f', n);
    await js.consumers.add('PDF', { durable_name: 'f', ack_policy: 'explicit', ack_wait: 30e9, deliver_subject: nc.newInbox() });
    const info = () => js.consumers.info('PDF', 'f');
    const c = await jetstream(nc).consumers.getPushConsumer('PDF', 'f');
    const msgs = await c.consume();
    await eventually(async () => (await info()).num_ack_pending === n, 10000, 'the deliveries');
    let read = 0;
    for await (const m of msgs) {
      m.ack();
      if (read++ === 0) msgs.stop();
    }
    assert.equal(read, n);
    await msgs.closed();
    await eventually(async () => (await info()).num_ack_pending === 0, 10000, 'the acks');
    assert.equal((await info()).num_redelivered, 0);
  } finally {
    await js.streams.delete('PDF');
  }
});

test('nextStatus: heartbeats name the last sequences; missed intervals counted from the second; null at the end; a pull consume tells its requests', async () => {
  await js.streams.add({ name: 'PST', subjects: ['PST.>'], storage: 'memory' });
  try {
    await js.consumers.add('PST', { durable_name: 's', ack_policy: 'none', deliver_subject: nc.newInbox(), idle_heartbeat: 200e6 });
    const msgs = await js.pushConsume('PST', 's');
    await js.publish('PST.a', 'one');
    for await (const m of msgs) {
      assert.equal(m.string(), 'one');
      break;
    }
    // break stopped it: events already queued are read, then null.
    let e;
    while ((e = await msgs.nextStatus()) !== null) assert.ok(['heartbeat', 'heartbeats_missed'].includes(e.type), e.type);

    const again = await js.pushConsume('PST', 's');
    const next = async (type) => {
      for (;;) {
        const ev = await again.nextStatus();
        if (ev === null || ev.type === type) return ev;
      }
    };
    assert.deepEqual(await next('heartbeat'), { type: 'heartbeat', last_consumer_seq: 1, last_stream_seq: 1 });
    await js.consumers.delete('PST', 's');
    assert.deepEqual(await next('heartbeats_missed'), { type: 'heartbeats_missed', count: 2 });
    assert.deepEqual(await again.nextStatus(), { type: 'heartbeats_missed', count: 3 });
    again.stop();
    while ((e = await again.nextStatus()) !== null);

    await js.consumers.add('PST', { durable_name: 'pull' });
    const pull = await js.consume('PST', 'pull', { expires: 5000 });
    const request = await pull.nextStatus();
    assert.equal(request.type, 'next');
    assert.equal(request.options.expires, 5e9);
    pull.stop();
    while ((e = await pull.nextStatus()) !== null);
  } finally {
    await js.streams.delete('PST');
  }
});

test('nats.js facade: status() yields heartbeat notifications; a second consume() is an InvalidOperationError', async () => {
  const { jetstream } = require('natsio/jetstream');
  const { errors } = require('natsio/transport-node');
  await js.streams.add({ name: 'PSF', subjects: ['PSF.>'], storage: 'memory' });
  try {
    await js.consumers.add('PSF', { durable_name: 'f', ack_policy: 'none', deliver_subject: nc.newInbox(), idle_heartbeat: 200e6 });
    const c = await jetstream(nc).consumers.getPushConsumer('PSF', 'f');
    const msgs = await c.consume();
    const second = await c.consume().catch((err) => err);
    assert.ok(second instanceof errors.InvalidOperationError, `${second?.name}: ${second?.message}`);
    assert.equal(second.message, 'consumer already started');
    for await (const s of msgs.status()) {
      if (s.type !== 'heartbeat') continue;
      assert.deepEqual(s, { type: 'heartbeat', lastConsumerSequence: 0, lastStreamSequence: 0 });
      break;
    }
    // close() ends the iteration once what was received is read, as nats.js.
    const closing = msgs.close();
    for await (const m of msgs) assert.fail(`nothing was published, got ${m.subject}`);
    await closing;
  } finally {
    await js.streams.delete('PSF');
  }
});

test('JsMsg.headersMalformed: a stored message whose header block had a corrupt line (raw HPUB) is consumed with the flag and its good lines', async () => {
  await js.streams.add({ name: 'PHM', subjects: ['PHM.>'], storage: 'memory' });
  try {
    const blocks = { bad: 'NATS/1.0\r\nGood: yes\r\nno colon here\r\n\r\n', good: 'NATS/1.0\r\nGood: yes\r\n\r\n' };
    let frames = 'CONNECT {"verbose":false,"headers":true}\r\n';
    for (const [tail, block] of Object.entries(blocks)) {
      frames += `HPUB PHM.${tail} ${block.length} ${block.length + 4}\r\n${block}data\r\n`;
    }
    const url = new URL(nc.connectedUrl);
    await new Promise((resolve, reject) => {
      const raw = require('node:net').connect(Number(url.port), url.hostname, () => raw.write(`${frames}PING\r\n`));
      let seen = '';
      raw.on('data', (d) => {
        seen += d;
        if (seen.includes('PONG\r\n')) raw.end(resolve);
      });
      raw.on('error', reject);
    });
    await eventually(async () => (await js.streams.info('PHM')).state.messages === 2, 10000, 'both stored');
    await js.consumers.add('PHM', { durable_name: 'h', ack_policy: 'none', deliver_subject: nc.newInbox() });
    const msgs = await js.pushConsume('PHM', 'h');
    const got = [];
    for await (const m of msgs) {
      got.push([m.subject, m.headersMalformed, m.headers?.get('Good')]);
      if (got.length === 2) break;
    }
    assert.deepEqual(got, [['PHM.bad', true, ['yes']], ['PHM.good', false, ['yes']]]);
  } finally {
    await js.streams.delete('PHM');
  }
});
