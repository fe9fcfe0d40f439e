'use strict';
// js.consumers.getBoundPushConsumer (natsio/jetstream): a push consumer
// created with jsm.consumers.add, read by its deliver subject alone,
// against a real nats-server; each case runs the same program with
// nats.js (@nats-io/*) and compares what a user observes.
const { test } = require('node:test');
const assert = require('node:assert/strict');
const { useJetStream, failure, described } = require('./jetstream-env');
const { eventually, within } = require('./wait');

const ours = { core: require('natsio/transport-node'), js: require('natsio/jetstream') };
const theirs = { core: require('@nats-io/transport-node'), js: require('@nats-io/jetstream') };
const clients = { ours, theirs };

// A JetStream server for this file (both clients connect to it).
let server;
useJetStream('natsio-bound-push-', (env) => {
  server = env.server;
});

const MS = 1e6; // ns

/** Runs `fn(client, nc, jsm, name)` with each client on its own
 * connection ("ours", "theirs" the name), the JetStream setup through
 * nats.js's manager; resolves with {ours, theirs}, what each returned. */
async function bothClients(fn) {
  const out = {};
  for (const [name, client] of Object.entries(clients)) {
    const nc = await client.core.connect({ servers: server.url });
    try {
      const jsm = await theirs.js.jetstreamManager(await theirs.core.connect({ servers: server.url }));
      try {
        out[name] = await fn(client, nc, jsm, name);
      } finally {
        await jsm.nc.close();
      }
    } finally {
      await nc.close();
    }
  }
  return out;
}

/** The status() notifications of `msgs`, collected as they come; `seen(pred)`
 * resolves with the first one matching. */
function collectStatus(msgs) {
  const all = [];
  const waiters = [];
  (async () => {
    for await (const s of msgs.status()) {
      all.push(s);
      for (const w of waiters.splice(0)) {
        if (w.pred(s)) w.resolve(s);
        else waiters.push(w);
      }
    }
  })();
  return {
    all,
    seen(pred) {
      const found = all.find(pred);
      return found ? Promise.resolve(found) : new Promise((resolve) => waiters.push({ pred, resolve }));
    },
  };
}

test('getBoundPushConsumer: messages in order with their delivery info, acks applied, heartbeats in status(), stop() ends the loop; as nats.js', async () => {
  const got = await bothClients(async (client, nc, jsm, who) => {
    const stream = `BOUND_${who}`;
    await jsm.streams.add({ name: stream, subjects: [`bound.${who}.>`], storage: 'memory' });
    try {
      const js = client.js.jetstream(nc);
      for (let i = 0; i < 5; i++) await js.publish(`bound.${who}.a`, `m${i}`);
      const deliver = `deliver.bound.${who}`;
      await jsm.consumers.add(stream, { durable_name: 'd', ack_policy: 'explicit', deliver_subject: deliver, idle_heartbeat: 300 * MS, flow_control: true });

      const pc = await js.consumers.getBoundPushConsumer({ deliver_subject: deliver, idle_heartbeat: 300 * MS });
      const msgs = await pc.consume();
      const status = collectStatus(msgs);
      const seen = [];
      const loop = (async () => {
        for await (const m of msgs) {
          const i = m.info;
          seen.push([m.subject, m.string(), m.seq, m.redelivered, i.stream, i.consumer, i.domain, i.streamSequence, i.deliverySequence, i.deliveryCount, i.pending]);
          m.ack();
        }
      })();
      await eventually(() => seen.length === 5, 5000, 'the 5 messages');
      // The server's idle heartbeat after the last delivery names it.
      const hb = await within(status.seen((s) => s.type === 'heartbeat'), 3000, 'a heartbeat');
      await eventually(async () => (await jsm.consumers.info(stream, 'd')).num_ack_pending === 0, 5000, 'the acks applied');
      const { ack_floor: floor } = await jsm.consumers.info(stream, 'd');
      const again = await failure(() => pc.consume());
      msgs.stop();
      await within(loop, 3000, 'the loop ending after stop()');
      await within(msgs.closed(), 3000, 'closed()');
      return { seen, hb, floor: [floor.consumer_seq, floor.stream_seq], again };
    } finally {
      await jsm.streams.delete(stream);
    }
  });
  const expected = (who) =>
    Array.from({ length: 5 }, (_, k) => [`bound.${who}.a`, `m${k}`, k + 1, false, `BOUND_${who}`, 'd', '', k + 1, k + 1, 1, 4 - k]);
  assert.deepEqual(got.ours.seen, expected('ours'));
  assert.deepEqual(got.theirs.seen, expected('theirs'));
  assert.deepEqual(got.ours.hb, { type: 'heartbeat', lastConsumerSequence: 5, lastStreamSequence: 5 });
  assert.deepEqual(got.ours.floor, [5, 5]);
  assert.equal(got.ours.again, 'InvalidOperationError: consumer already started');
  const normalize = (r) => ({ ...r, seen: r.seen.map(([subject, ...rest]) => [subject.replace(/ours|theirs/, 'X'), ...rest.map((v) => (typeof v === 'string' ? v.replace(/ours|theirs/, 'X') : v))]) });
  assert.deepEqual(normalize(got.ours), normalize(got.theirs));
});

test('getBoundPushConsumer: flow-control requests are answered as the program reads, so a stream larger than the window arrives whole; as nats.js', async () => {
  const count = 48;
  const size = 64 * 1024; // 3 MiB in all: past the server's 2 MiB initial window
  const got = await bothClients(async (client, nc, jsm, who) => {
    const stream = `BOUNDFC_${who}`;
    await jsm.streams.add({ name: stream, subjects: [`boundfc.${who}`], storage: 'memory' });
    try {
      const js = client.js.jetstream(nc);
      for (let i = 0; i < count; i++) await js.publish(`boundfc.${who}`, new Uint8Array(size).fill(i));
      const deliver = `deliver.boundfc.${who}`;
      // A long heartbeat interval: a stalled consumer is not rescued by
      // the heartbeat's stalled header within the test's bound.
      await jsm.consumers.add(stream, { durable_name: 'fc', ack_policy: 'explicit', deliver_subject: deliver, idle_heartbeat: 10000 * MS, flow_control: true });
      const pc = await js.consumers.getBoundPushConsumer({ deliver_subject: deliver });
      const msgs = await pc.consume();
      const status = collectStatus(msgs);
      const seqs = [];
      let intact = true;
      await within(
        (async () => {
          for await (const m of msgs) {
            seqs.push(m.seq);
            intact &&= m.data.length === size && m.data.every((b) => b === ((m.seq - 1) & 0xff));
            m.ack();
            if (seqs.length === count) break;
          }
        })(),
        8000,
        'every message',
      );
      await eventually(async () => (await jsm.consumers.info(stream, 'fc')).num_ack_pending === 0, 5000, 'the acks applied');
      return { seqs, intact, flowControl: status.all.some((s) => s.type === 'flow_control') };
    } finally {
      await jsm.streams.delete(stream);
    }
  });
  assert.deepEqual(got.ours, { seqs: Array.from({ length: count }, (_, k) => k + 1), intact: true, flowControl: true });
  assert.deepEqual(got.ours, got.theirs);
});

test('getBoundPushConsumer: heartbeats_missed when the deliver subject stays silent; stop() then ends at once; as nats.js', async () => {
  const got = await bothClients(async (client, nc, jsm, who) => {
    const pc = await client.js.jetstream(nc).consumers.getBoundPushConsumer({ deliver_subject: `deliver.silent.${who}`, idle_heartbeat: 100 * MS });
    const msgs = await pc.consume();
    const first = await within(msgs.status()[Symbol.asyncIterator]().next(), 3000, 'a status');
    const loop = (async () => {
      for await (const _ of msgs) return 'a message';
      return 'ended';
    })();
    msgs.stop();
    return { first: first.value, end: await within(loop, 3000, 'the loop ending after stop()') };
  });
  assert.deepEqual(got.ours, { first: { type: 'heartbeats_missed', count: 2 }, end: 'ended' });
  assert.deepEqual(got.ours, got.theirs);
});

test('getBoundPushConsumer: members of the deliver group share the messages, none twice; as nats.js', async () => {
  const got = await bothClients(async (client, nc, jsm, who) => {
    const stream = `BOUNDQ_${who}`;
    await jsm.streams.add({ name: stream, subjects: [`boundq.${who}`], storage: 'memory' });
    try {
      const deliver = `deliver.boundq.${who}`;
      await jsm.consumers.add(stream, { durable_name: 'q', ack_policy: 'explicit', deliver_subject: deliver, deliver_group: 'workers' });
      const js = client.js.jetstream(nc);
      const members = [];
      for (let k = 0; k < 2; k++) {
        const pc = await js.consumers.getBoundPushConsumer({ deliver_subject: deliver, deliver_group: 'workers' });
        members.push({ msgs: await pc.consume(), got: [] });
      }
      await nc.flush();
      for (let i = 0; i < 40; i++) await js.publish(`boundq.${who}`, String(i));
      const total = () => members.reduce((n, m) => n + m.got.length, 0);
      await within(
        Promise.all(
          members.map(async (member) => {
            for await (const m of member.msgs) {
              member.got.push(Number(m.string()));
              m.ack();
              if (total() === 40) for (const x of members) x.msgs.stop();
            }
          }),
        ),
        5000,
        'the 40 messages',
      );
      const all = members.flatMap((m) => m.got).sort((a, b) => a - b);
      return { all, everyMemberGotSome: members.every((m) => m.got.length > 0) };
    } finally {
      await jsm.streams.delete(stream);
    }
  });
  assert.deepEqual(got.ours, { all: Array.from({ length: 40 }, (_, i) => i), everyMemberGotSome: true });
  assert.deepEqual(got.ours, got.theirs);
});

test('getBoundPushConsumer: a message to the deliver subject itself is not a JsMsg; with abort_on_missing_resource it ends the loop with its status error; as nats.js', async () => {
  const got = await bothClients(async (client, nc, jsm, who) => {
    const stream = `BOUNDX_${who}`;
    await jsm.streams.add({ name: stream, subjects: [`boundx.${who}`], storage: 'memory' });
    try {
      const js = client.js.jetstream(nc);
      const run = async (name, abort) => {
        const deliver = `deliver.boundx.${who}.${name}`;
        await jsm.consumers.add(stream, { durable_name: name, ack_policy: 'explicit', deliver_subject: deliver, deliver_policy: 'new' });
        const pc = await js.consumers.getBoundPushConsumer({ deliver_subject: deliver });
        const msgs = await pc.consume({ abort_on_missing_resource: abort });
        await nc.flush();
        nc.publish(deliver, 'not from the consumer');
        // Without abort_on_missing_resource, the consumer's message is
        // what the loop gets (with it, the loop ends before any).
        if (!abort) await js.publish(`boundx.${who}`, `for ${name}`);
        try {
          return await within(
            (async () => {
              for await (const m of msgs) {
                m.ack();
                msgs.stop();
                return m.string();
              }
              return 'ended';
            })(),
            3000,
            'the loop',
          );
        } catch (e) {
          return described(e);
        }
      };
      return { plain: await run('plain', false), aborted: await run('aborted', true) };
    } finally {
      await jsm.streams.delete(stream);
    }
  });
  assert.deepEqual(got.ours, { plain: 'for plain', aborted: 'JetStreamStatusError: unknown' });
  assert.deepEqual(got.ours, got.theirs);
});

test('getBoundPushConsumer: its argument checks, info() and delete() refused, isPushConsumer; as nats.js', async () => {
  const got = await bothClients(async (client, nc) => {
    const consumers = client.js.jetstream(nc).consumers;
    const out = {
      noOptions: await failure(() => consumers.getBoundPushConsumer()),
      empty: await failure(() => consumers.getBoundPushConsumer({})),
    };
    const groupOnly = await consumers.getBoundPushConsumer({ deliver_group: 'g' });
    out.groupOnlyConsume = await failure(() => groupOnly.consume());
    const pc = await consumers.getBoundPushConsumer({ deliver_subject: 'deliver.nowhere' });
    out.kind = [pc.isPushConsumer(), pc.isPullConsumer(), client.js.isPushConsumer(pc)];
    out.info = await failure(() => pc.info());
    out.delete = await failure(() => pc.delete());
    return out;
  });
  assert.deepEqual(got.ours, {
    noOptions: "InvalidArgumentError: 'deliver_subject' is required",
    empty: "InvalidArgumentError: 'deliver_subject' is required",
    groupOnlyConsume: 'Error: deliver_subject is not set, not a push consumer',
    kind: [true, false, true],
    info: 'InvalidOperationError: bound consumers cannot info',
    delete: 'InvalidOperationError: bound consumers cannot delete',
  });
  assert.deepEqual(got.ours, got.theirs);
});
