'use strict';
// The names the nats.js facades gained to close surface gaps (see
// test/surface.test.js): each one's behaviour against nats.js's own, the
// helpers by the same inputs, the JetStream calls against a real server
// with both clients side by side.
const { test } = require('node:test');
const assert = require('node:assert/strict');
const { startServer, startConfiguredServer, freePort } = require('./server');
const { useJetStream, failure, described } = require('./jetstream-env');
const { within } = require('./wait');

const ours = {
  core: require('natsio/transport-node'),
  js: require('natsio/jetstream'),
  kv: require('natsio/kv'),
  obj: require('natsio/obj'),
};
const theirs = {
  core: require('@nats-io/transport-node'),
  js: require('@nats-io/jetstream'),
  kv: require('@nats-io/kv'),
  obj: require('@nats-io/obj'),
};

// A JetStream server for this file (both clients connect to it).
let server;
useJetStream('natsio-compat-surface-', (env) => {
  server = env.server;
});

/** Runs `fn` with a connection of each client ({ours, theirs}), closed after. */
async function withBoth(fn) {
  const nc = { ours: await ours.core.connect({ servers: server.url }), theirs: await theirs.core.connect({ servers: server.url }) };
  try {
    return await fn(nc);
  } finally {
    await nc.ours.close();
    await nc.theirs.close();
  }
}

test('timeout() and deadline() reject with TimeoutError as nats.js\'s; deadline passes a faster outcome through', async () => {
  for (const m of [ours.core, theirs.core]) {
    await assert.rejects(m.timeout(5), (e) => e instanceof m.errors.TimeoutError && e.message === 'timeout');
    await assert.rejects(m.deadline(new Promise(() => {}), 5), (e) => e instanceof m.errors.TimeoutError);
    assert.equal(await m.deadline(Promise.resolve(7), 1000), 7);
    await assert.rejects(m.deadline(Promise.reject(new Error('own')), 1000), /own/);
    const t = m.timeout(1000);
    assert.equal(typeof t.cancel, 'function');
    t.cancel();
  }
});

test("backoff() gives nats.js's delays for each attempt, jitter included", () => {
  const random = Math.random;
  try {
    for (const r of [0, 0.25, 0.999]) {
      Math.random = () => r;
      for (const policy of [undefined, [0, 100, 1000], 'not a list']) {
        const a = ours.core.backoff(policy);
        const b = theirs.core.backoff(policy);
        for (let attempt = 0; attempt < 10; attempt++) assert.equal(a.backoff(attempt), b.backoff(attempt), `${policy} ${attempt} ${r}`);
      }
    }
  } finally {
    Math.random = random;
  }
});

test('collect() and syncIterator() read an async iterable as nats.js\'s do', async () => {
  async function* values() {
    yield 1;
    yield 'two';
    yield { three: 3 };
  }
  for (const m of [ours.core, theirs.core]) {
    assert.deepEqual(await m.collect(values()), [1, 'two', { three: 3 }]);
    const it = m.syncIterator(values());
    assert.deepEqual([await it.next(), await it.next(), await it.next(), await it.next()], [1, 'two', { three: 3 }, null]);
  }
});

test("hasWsProtocol() and wsUrlParseFn() read servers as nats.js's", () => {
  for (const opts of [undefined, {}, { servers: 'ws://h:1' }, { servers: ['nats://a', 'WSS://b'] }, { servers: ['localhost:4222'] }]) {
    assert.equal(ours.core.hasWsProtocol(opts), theirs.core.hasWsProtocol(opts), JSON.stringify(opts));
  }
  const urls = ['ws://h:8080', 'wss://h', 'h:9222', 'h', 'http://h', 'https://h:1/p?q=1', 'nats://h', 'tls://h:4443', 'ws://[::1]:80', 'x://h:5', 'x://h'];
  for (const u of urls) {
    for (const encrypted of [undefined, true, false]) {
      assert.equal(ours.core.wsUrlParseFn(u, encrypted), theirs.core.wsUrlParseFn(u, encrypted), `${u} ${encrypted}`);
    }
  }
});

test('parseSemVer, compare, Feature and Features answer as nats.js\'s', () => {
  assert.deepEqual({ ...ours.core.Feature }, { ...theirs.core.Feature });
  for (const v of ['2.9.0', 'v2.14.3-beta', '1.2']) {
    assert.equal(described(tryCall(() => ours.core.parseSemVer(v))), described(tryCall(() => theirs.core.parseSemVer(v))));
  }
  const versions = ['2.9.0', '2.10.0', '2.10.1', '3.0.0', '2.14.0'].map((v) => theirs.core.parseSemVer(v));
  for (const a of versions) for (const b of versions) assert.equal(ours.core.compare(a, b), theirs.core.compare(a, b));
  for (const v of ['2.9.0', '2.11.0', '2.14.3']) {
    const a = new ours.core.Features(ours.core.parseSemVer(v));
    const b = new theirs.core.Features(theirs.core.parseSemVer(v));
    for (const f of Object.values(theirs.core.Feature)) {
      assert.deepEqual(a.get(f), b.get(f), `${v} ${f}`);
      assert.equal(a.supports(f), b.supports(f));
    }
    a.disable(ours.core.Feature.JS_KV);
    b.disable(theirs.core.Feature.JS_KV);
    assert.deepEqual(a.get('js_kv'), b.get('js_kv'));
    assert.equal(a.isDisabled('js_kv'), true);
    a.resetDisabled();
    b.resetDisabled();
    assert.deepEqual(a.get('js_kv'), b.get('js_kv'));
    assert.equal(a.require('2.10.0'), b.require('2.10.0'));
  }
});

function tryCall(fn) {
  try {
    return { name: 'ok', message: JSON.stringify(fn()) };
  } catch (e) {
    return e;
  }
}

test('DEFAULT_MAX_RECONNECT_ATTEMPTS is nats.js\'s', () => {
  assert.equal(ours.core.DEFAULT_MAX_RECONNECT_ATTEMPTS, theirs.core.DEFAULT_MAX_RECONNECT_ATTEMPTS);
});

test('buildAuthenticator() merges the options\' authenticator, token and user/pass; connect() authenticates with it', async () => {
  const users = await startConfiguredServer('authorization { users: [ { user: "ann", password: "s3cret" } ] }\n');
  const tokens = await startConfiguredServer('authorization { token: "t0ken" }\n');
  const { connect, buildAuthenticator, tokenAuthenticator, errors } = ours.core;
  try {
    const a = await connect({ servers: users.url, authenticator: buildAuthenticator({ user: 'ann', pass: 's3cret' }) });
    await a.flush();
    await a.close();
    // The later part wins, as nats.js merges: user/pass over the authenticator's token.
    const b = await connect({ servers: tokens.url, authenticator: buildAuthenticator({ authenticator: tokenAuthenticator('wrong'), token: 't0ken' }) });
    await b.flush();
    await b.close();
    const bad = await connect({ servers: users.url, maxReconnectAttempts: 0, authenticator: buildAuthenticator({ user: 'ann', pass: 'nope' }) }).catch((e) => e);
    assert.ok(bad instanceof errors.AuthorizationError, described(bad));
    // No credentials: nats.js's no-op authenticator; an open server takes it.
    const open = await connect({ servers: server.url, authenticator: buildAuthenticator({}) });
    await open.close();
  } finally {
    await users.stop();
    await tokens.stop();
  }
});

test('wsconnect() reaches a server over WebSocket; tls is refused with nats.js\'s error', async () => {
  const wsPort = await freePort();
  const ws = await startConfiguredServer(`websocket {\n listen: "127.0.0.1:${wsPort}"\n no_tls: true\n}\n`);
  try {
    const nc = await ours.core.wsconnect({ servers: `ws://127.0.0.1:${wsPort}` });
    const tcp = await ours.core.connect({ servers: ws.url });
    try {
      tcp.subscribe('ws.echo', { callback: (_err, m) => m.respond(m.data) });
      await tcp.flush();
      const r = await nc.request('ws.echo', 'over ws');
      assert.equal(r.string(), 'over ws');
    } finally {
      await nc.close();
      await tcp.close();
    }
    const ourTls = await failure(() => ours.core.wsconnect({ servers: `ws://127.0.0.1:${wsPort}`, tls: {} }));
    const theirTls = await failure(() => theirs.core.wsconnect({ servers: `ws://127.0.0.1:${wsPort}`, tls: {} }));
    assert.equal(ourTls, "InvalidArgumentError: 'tls' is not configurable on w3c websocket connections");
    assert.equal(ourTls, theirTls);
  } finally {
    await ws.stop();
  }
});

test("defaultBucketOpts() are nats.js's and make the same bucket", async () => {
  const a = ours.kv.defaultBucketOpts();
  const b = theirs.kv.defaultBucketOpts();
  const { codec: ca, ...restA } = a;
  const { codec: cb, ...restB } = b;
  assert.deepEqual(restA, restB);
  assert.equal(ca.key.encode('a.b'), cb.key.encode('a.b'));
  assert.deepEqual([...ca.value.encode(new Uint8Array([1, 2]))], [...cb.value.encode(new Uint8Array([1, 2]))]);
  await withBoth(async (nc) => {
    const kvA = await new ours.kv.Kvm(nc.ours).create('defaults_ours', ours.kv.defaultBucketOpts());
    const kvB = await new theirs.kv.Kvm(nc.theirs).create('defaults_theirs', theirs.kv.defaultBucketOpts());
    const [sa, sb] = [await kvA.status(), await kvB.status()];
    for (const k of ['history', 'ttl', 'storage', 'replicas', 'maxValueSize', 'max_bytes', 'placement', 'republish']) assert.deepEqual(sa[k], sb[k], k);
    await kvA.destroy();
    await kvB.destroy();
  });
});

test("KvStatus's placement and republish are the stream's, nats.js's empty ones without", async () => {
  await withBoth(async (nc) => {
    const republish = { src: '>', dest: 'repub.>' };
    const kvA = await new ours.kv.Kvm(nc.ours).create('repub_status', { republish });
    const kvB = await new theirs.kv.Kvm(nc.theirs).open('repub_status');
    const [sa, sb] = [await kvA.status(), await kvB.status()];
    assert.deepEqual(sa.republish, sb.republish);
    assert.equal(sa.republish.dest, 'repub.>');
    assert.deepEqual(sa.placement, sb.placement);
    const listed = [];
    for await (const s of new ours.kv.Kvm(nc.ours).list()) listed.push(s);
    assert.deepEqual(listed.find((s) => s.bucket === 'repub_status').republish, sb.republish);
    await kvA.destroy();
  });
});

test('Kvm.js and Objm.js are a JetStreamClient: the one given, or one for the connection', async () => {
  await withBoth(async (nc) => {
    const js = ours.js.jetstream(nc.ours);
    assert.equal(new ours.kv.Kvm(js).js, js);
    assert.equal(new ours.obj.Objm(js).js, js);
    const jsm = await ours.js.jetstreamManager(nc.ours);
    await jsm.streams.add({ name: 'KVM_JS', subjects: ['kvmjs.>'] });
    for (const m of [new ours.kv.Kvm(nc.ours), new ours.obj.Objm(nc.ours)]) {
      assert.equal(m.js.apiPrefix, '$JS.API');
      assert.equal((await m.js.publish('kvmjs.x', 'x')).stream, 'KVM_JS');
    }
    await jsm.streams.delete('KVM_JS');
  });
});

test("Base64Codec, Base64UrlCodec and Base64UrlPaddedCodec encode and decode as nats.js's", () => {
  const inputs = ['', 'a', 'hello', new Uint8Array([0xfb, 0xff, 0xbf]), new Uint8Array([0, 1, 2, 3, 250, 251, 252, 253, 254, 255])];
  for (const codec of ['Base64Codec', 'Base64UrlCodec', 'Base64UrlPaddedCodec']) {
    const a = ours.obj[codec];
    const b = theirs.obj[codec];
    for (const v of inputs) {
      const text = a.encode(v);
      assert.equal(text, b.encode(v), `${codec} ${v}`);
      assert.equal(a.decode(text), b.decode(text));
      assert.deepEqual([...a.decode(text, true)], [...b.decode(text, true)]);
    }
  }
  assert.equal(ours.obj.Base64UrlCodec.encode(new Uint8Array([0xfb, 0xff])), '-_8');
});

test('js.apiPrefix is nats.js\'s for the default, a domain and an apiPrefix', async () => {
  await withBoth(async (nc) => {
    for (const opts of [undefined, { domain: 'hub' }, { apiPrefix: 'X.API' }]) {
      assert.equal(ours.js.jetstream(nc.ours, opts).apiPrefix, theirs.js.jetstream(nc.theirs, opts).apiPrefix, JSON.stringify(opts));
    }
  });
});

test('consumers.reset() and stream.resetConsumer() move delivery back as nats.js\'s; errors as its', async () => {
  await withBoth(async (nc) => {
    const jsm = await ours.js.jetstreamManager(nc.ours);
    const theirJsm = await theirs.js.jetstreamManager(nc.theirs);
    await jsm.streams.add({ name: 'RESET', subjects: ['reset.>'] });
    const js = ours.js.jetstream(nc.ours);
    for (let i = 1; i <= 5; i++) await js.publish('reset.a', `m${i}`);
    for (const name of ['ours', 'theirs']) await jsm.consumers.add('RESET', { durable_name: name, ack_policy: 'explicit' });
    const c = await js.consumers.get('RESET', 'ours');
    const read = async (consumer) => {
      const m = await consumer.next({ expires: 2000 });
      m.ack();
      return m.seq;
    };
    assert.deepEqual([await read(c), await read(c), await read(c)], [1, 2, 3]);

    const ourReset = await jsm.consumers.reset('RESET', 'ours', 2);
    const theirConsumer = await theirs.js.jetstream(nc.theirs).consumers.get('RESET', 'theirs');
    for (let i = 0; i < 3; i++) (await theirConsumer.next({ expires: 2000 })).ack();
    await nc.theirs.flush();
    const theirReset = await theirJsm.consumers.reset('RESET', 'theirs', 2);
    assert.equal(ourReset.reset_seq, 2);
    assert.equal(ourReset.reset_seq, theirReset.reset_seq);
    assert.deepEqual(Object.keys(ourReset).sort(), Object.keys(theirReset).sort());
    assert.equal(await read(c), 2);

    // Without a sequence: the ack floor + 1.
    const stream = await jsm.streams.get('RESET');
    const again = await stream.resetConsumer('ours');
    assert.equal(again.reset_seq, 3);
    assert.equal(await read(c), 3);

    // The server does not answer a reset of a consumer it does not have:
    // both time out (after the managers' timeout).
    const quick = { ours: await ours.js.jetstreamManager(nc.ours, { timeout: 300 }), theirs: await theirs.js.jetstreamManager(nc.theirs, { timeout: 300 }) };
    assert.equal(await failure(() => quick.ours.consumers.reset('RESET', 'missing')), 'TimeoutError: timeout');
    assert.equal(await failure(() => quick.theirs.consumers.reset('RESET', 'missing')), 'TimeoutError: timeout');
    for (const [args, what] of [
      [['RE.SET', 'ours'], 'a bad stream name'],
      [['RESET', ''], 'no consumer name'],
      [['RESET', 'ours', -1], 'a negative sequence'],
      [['RESET', 'ours', 1.5], 'a fraction'],
    ]) {
      assert.equal(await failure(() => jsm.consumers.reset(...args)), await failure(() => theirJsm.consumers.reset(...args)), what);
    }
    await jsm.streams.delete('RESET');
  });
});

/** What a user reads of a StoredMsg of a Direct Get. */
const directView = (m) => m && { subject: m.subject, seq: m.seq, data: Buffer.from(m.data).toString(), stream: m.stream, timestamp: m.timestamp, time: m.time.getTime(), lastSequence: m.lastSequence, pending: m.pending };

test('jsm.direct reads messages, batches and last messages per subject as nats.js\'s', async () => {
  await withBoth(async (nc) => {
    const jsm = await ours.js.jetstreamManager(nc.ours);
    const theirJsm = await theirs.js.jetstreamManager(nc.theirs);
    await jsm.streams.add({ name: 'DIRECT', subjects: ['direct.>'], allow_direct: true });
    await jsm.streams.add({ name: 'NOT_DIRECT', subjects: ['notdirect.>'] });
    const js = ours.js.jetstream(nc.ours);
    for (const [subj, data] of [['direct.a', 'a1'], ['direct.b', 'b1'], ['direct.a', 'a2'], ['direct.c', 'c1'], ['direct.b', 'b2']]) await js.publish(subj, data);

    for (const q of [{ seq: 2 }, { last_by_subj: 'direct.a' }, { next_by_subj: 'direct.b', seq: 3 }, { seq: 99 }, { last_by_subj: 'direct.none' }, { start_time: new Date(0) }]) {
      const a = await jsm.direct.getMessage('DIRECT', q);
      const b = await theirJsm.direct.getMessage('DIRECT', q);
      assert.deepEqual(directView(a), directView(b), JSON.stringify(q));
    }
    assert.equal((await jsm.direct.getMessage('DIRECT', { last_by_subj: 'direct.a' })).string(), 'a2');
    assert.equal(await jsm.direct.getMessage('DIRECT', { seq: 99 }), null);

    // The messages, then the error that ended the iteration if one did.
    const collect = async (it) => {
      const out = [];
      try {
        for await (const m of it) out.push(directView(m));
      } catch (e) {
        out.push(`${described(e)} (${e.code})`);
      }
      return out;
    };
    for (const opts of [{ seq: 2, batch: 2 }, { seq: 1 }, { seq: 1, next_by_subj: 'direct.b' }, { start_time: new Date(0), batch: 3 }, { seq: 99 }]) {
      const a = await collect(await jsm.direct.getBatch('DIRECT', { ...opts }));
      const b = await collect(await theirJsm.direct.getBatch('DIRECT', { ...opts }));
      assert.deepEqual(a, b, JSON.stringify(opts));
    }
    assert.deepEqual((await collect(await jsm.direct.getBatch('DIRECT', { seq: 2, batch: 2 }))).map((m) => m.data), ['b1', 'a2']);
    for (const opts of [{ multi_last: ['direct.a', 'direct.b'] }, { multi_last: ['direct.>'], up_to_seq: 3 }, { multi_last: ['direct.none'] }]) {
      const a = await collect(await jsm.direct.getLastMessagesFor('DIRECT', { ...opts }));
      const b = await collect(await theirJsm.direct.getLastMessagesFor('DIRECT', { ...opts }));
      assert.deepEqual(a, b, JSON.stringify(opts));
    }
    assert.deepEqual((await collect(await jsm.direct.getLastMessagesFor('DIRECT', { multi_last: ['direct.>'] }))).map((m) => m.data), ['a2', 'c1', 'b2']);

    // A stream without allow_direct has no responder, as nats.js reports it.
    assert.equal(await failure(() => jsm.direct.getMessage('NOT_DIRECT', { seq: 1 })), await failure(() => theirJsm.direct.getMessage('NOT_DIRECT', { seq: 1 })));
    assert.equal(await failure(() => jsm.direct.getMessage('BAD.NAME', { seq: 1 })), await failure(() => theirJsm.direct.getMessage('BAD.NAME', { seq: 1 })));
    await jsm.streams.delete('DIRECT');
    await jsm.streams.delete('NOT_DIRECT');
  });
});

test("jsm.advisories() yields the account's advisories as {kind, data}, as nats.js's", async () => {
  await withBoth(async (nc) => {
    const jsm = await ours.js.jetstreamManager(nc.ours);
    const theirJsm = await theirs.js.jetstreamManager(nc.theirs);
    const firstCreated = async (iter) => {
      for await (const a of iter) if (a.kind === 'consumer_action' && a.data.action === 'create') return a;
      return undefined;
    };
    const ourAdvisory = firstCreated(jsm.advisories());
    const theirAdvisory = firstCreated(theirJsm.advisories());
    await nc.ours.flush();
    await nc.theirs.flush();
    await jsm.streams.add({ name: 'ADVISED', subjects: ['advised.>'] });
    await jsm.consumers.add('ADVISED', { durable_name: 'watched' });
    const [a, b] = await within(Promise.all([ourAdvisory, theirAdvisory]), 5000, 'the consumer_action advisory');
    assert.equal(a.data.consumer, 'watched');
    assert.equal(a.data.stream, 'ADVISED');
    assert.deepEqual(a, b);
    await jsm.streams.delete('ADVISED');
  });
});

test('js.startBatch() publishes an atomic batch: stored at the commit, with nats.js\'s ack; refused as nats.js\'s where the stream does not allow it', async () => {
  await withBoth(async (nc) => {
    const jsm = await ours.js.jetstreamManager(nc.ours);
    await jsm.streams.add({ name: 'ATOMIC', subjects: ['atomic.>'], allow_atomic: true });
    await jsm.streams.add({ name: 'PLAIN', subjects: ['plain.>'] });
    const js = ours.js.jetstream(nc.ours);
    const batch = await js.startBatch('atomic.a', 'one');
    assert.equal(batch.count, 1);
    batch.add('atomic.b', 'two');
    await batch.add('atomic.a', 'three', { ack: true });
    // Nothing is stored before the commit.
    assert.equal((await jsm.streams.info('ATOMIC')).state.messages, 0);
    const ack = await batch.commit('atomic.c', 'four');
    assert.deepEqual(ack, { stream: 'ATOMIC', seq: 4, batch: batch.id, count: 4 });
    assert.throws(() => batch.add('atomic.a', 'late'), /batch publisher is done/);

    // Read back by nats.js: the four, in order.
    const theirJsm = await theirs.js.jetstreamManager(nc.theirs);
    const stored = [];
    for (let seq = 1; seq <= 4; seq++) {
      const m = await theirJsm.streams.getMessage('ATOMIC', { seq });
      stored.push(`${m.subject}:${m.string()}`);
    }
    assert.deepEqual(stored, ['atomic.a:one', 'atomic.b:two', 'atomic.a:three', 'atomic.c:four']);

    // The same batch by nats.js: the same ack but for the id and sequence.
    const theirBatch = await theirs.js.jetstream(nc.theirs).startBatch('atomic.a', 'one');
    theirBatch.add('atomic.b', 'two');
    await theirBatch.add('atomic.a', 'three', { ack: true });
    const theirAck = await theirBatch.commit('atomic.c', 'four');
    assert.deepEqual(Object.keys(ack).sort(), Object.keys(theirAck).sort());

    const refused = await failure(() => js.startBatch('plain.a', 'x'));
    assert.equal(refused, await failure(() => theirs.js.jetstream(nc.theirs).startBatch('plain.a', 'x')));
    assert.match(refused, /^JetStreamApiError: /);
    await jsm.streams.delete('ATOMIC');
    await jsm.streams.delete('PLAIN');
  });
});

test('stream.getPushConsumer() gives the stream\'s push consumer, which delivers its messages', async () => {
  const nc = await ours.core.connect({ servers: server.url });
  try {
    const jsm = await ours.js.jetstreamManager(nc);
    await jsm.streams.add({ name: 'PUSHED', subjects: ['pushed.>'] });
    await jsm.consumers.add('PUSHED', { durable_name: 'p', deliver_subject: 'deliver.pushed', ack_policy: 'explicit' });
    const js = ours.js.jetstream(nc);
    await js.publish('pushed.a', 'one');
    const stream = await js.streams.get('PUSHED');
    const pc = await stream.getPushConsumer('p');
    assert.equal(pc.isPushConsumer(), true);
    const messages = await pc.consume();
    for await (const m of messages) {
      assert.equal(m.string(), 'one');
      m.ack();
      break;
    }
    assert.equal(await failure(() => stream.getPushConsumer(42)), 'Error: unsupported push consumer type');
    await jsm.streams.delete('PUSHED');
  } finally {
    await nc.close();
  }
});

test("jsMsg.next(subj) acks and has the consumer deliver the next message to subj, as nats.js's", async () => {
  await withBoth(async (nc) => {
    const jsm = await ours.js.jetstreamManager(nc.ours);
    await jsm.streams.add({ name: 'NEXTED', subjects: ['nexted.>'] });
    const js = ours.js.jetstream(nc.ours);
    for (const d of ['one', 'two', 'three']) await js.publish('nexted.a', d);
    /** The first message by consumer.next(), then the next two through
     * jsMsg.next(inbox): what the inbox got, and the consumer's ack floor. */
    async function chain(client, nc, name) {
      await jsm.consumers.add('NEXTED', { durable_name: name, ack_policy: 'explicit' });
      const c = await client.js.jetstream(nc).consumers.get('NEXTED', name);
      const first = await c.next({ expires: 2000 });
      const inbox = client.core.createInbox();
      const sub = nc.subscribe(inbox, { max: 2 });
      await nc.flush();
      first.next(inbox, { batch: 2, expires: 2000 });
      const got = [first.string()];
      for await (const m of sub) {
        got.push(`${m.subject} ${m.string()} ${m.reply.startsWith('$JS.ACK.NEXTED.')}`);
        m.respond('+ACK');
      }
      await nc.flush();
      const info = await jsm.consumers.info('NEXTED', name);
      return { got, acked: info.ack_floor.stream_seq, pending: info.num_ack_pending };
    }
    const a = await chain(ours, nc.ours, 'ours');
    const b = await chain(theirs, nc.theirs, 'theirs');
    assert.deepEqual(a.got, ['one', 'nexted.a two true', 'nexted.a three true']);
    assert.deepEqual(a, b);
    await jsm.streams.delete('NEXTED');
  });
});
