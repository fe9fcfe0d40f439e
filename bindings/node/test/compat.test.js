'use strict';
// The nats.js facades (natsio/transport-node, /jetstream, /kv, /obj,
// /services): what the corpus (tests/corpus/node) cannot show by comparing
// outputs: the package's subpath entry points, the error classes a
// binding error becomes, header values as single strings, authenticators.
const { test, before, after } = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const nats = require('..');
const { startServer, startConfiguredServer, allThreadsStopped, freePort } = require('./server');
const { eventually, within } = require('./wait');

const pkg = require('../package.json');
// nats-core: the same module as transport-node (which re-exports it).
const SUBPATHS = ['transport-node', 'nats-core', 'jetstream', 'kv', 'obj', 'services'];

let server;
let store;
before(async () => {
  store = fs.mkdtempSync(path.join(require('node:os').tmpdir(), 'natsio-compat-'));
  server = await startServer(['-js', '-sd', store]);
});
after(async () => {
  await server?.stop();
  fs.rmSync(store, { recursive: true, force: true });
});

test('each facade resolves by its subpath from CommonJS and ES modules, with the same exports, types and files shipped', async () => {
  const dir = path.join(__dirname, '..');
  const shipped = (f) => pkg.files.some((p) => (p.endsWith('/') ? f.startsWith(p) : f === p));
  for (const sub of SUBPATHS) {
    const entry = pkg.exports[`./${sub}`];
    assert.deepEqual(Object.keys(entry), ['types', 'import', 'require'], sub);
    for (const f of Object.values(entry).map((f) => path.normalize(f))) {
      assert.ok(fs.existsSync(path.join(dir, f)), `${f} exists`);
      assert.ok(shipped(f), `${f} is in "files"`);
    }
    const cjs = require(`natsio/${sub}`);
    const esm = await import(`natsio/${sub}`);
    assert.deepEqual(Object.keys(esm).sort(), Object.keys(cjs).sort(), `compat/${sub}.mjs names every export`);
    for (const k of Object.keys(cjs)) assert.equal(esm[k], cjs[k], `${sub}: ${k}`);
    const dts = fs.readFileSync(path.join(dir, entry.types), 'utf8');
    const declared = new Set([...dts.matchAll(/export (?:declare )?(?:class|function|const) (\w+)|export \{([^}]*)\}/g)].flatMap((m) => (m[1] ? [m[1]] : m[2].split(',').map((s) => s.trim()))));
    assert.deepEqual(Object.keys(cjs).filter((k) => !declared.has(k)), [], `${entry.types} declares every export`);
  }
});

test('binding errors become nats.js classes: RequestError(NoResponders), TimeoutError, JetStreamApiError with the API code', async () => {
  const { connect, errors } = require('natsio/transport-node');
  const { jetstreamManager, jetstream, JetStreamApiError } = require('natsio/jetstream');
  const nc = await connect({ servers: server.url });
  try {
    const noone = await nc.request('compat.nobody', 'x').catch((e) => e);
    assert.ok(noone instanceof errors.RequestError);
    assert.ok(!(noone instanceof nats.NatsError), 'not the binding class');
    assert.equal(noone.isNoResponders(), true);
    assert.ok(noone.cause instanceof errors.NoRespondersError);
    assert.equal(noone.message, "no responders: 'compat.nobody'");
    nc.subscribe('compat.silent', { callback: () => {} });
    await nc.flush();
    const late = await nc.request('compat.silent', 'x', { timeout: 100 }).catch((e) => e);
    assert.ok(late instanceof errors.TimeoutError);
    assert.equal(late.message, 'timeout');
    assert.throws(() => nc.publish('bad subject', 'x'), errors.InvalidSubjectError);

    const jsm = await jetstreamManager(nc);
    await jsm.streams.add({ name: 'COMPAT', subjects: ['compat.js'] });
    const missing = await jsm.streams.info('COMPAT_MISSING').catch((e) => e);
    assert.equal(missing.name, 'StreamNotFoundError');
    assert.ok(missing instanceof JetStreamApiError);
    assert.equal(missing.code, 10059);
    assert.equal(missing.status, 404);
    assert.equal(missing.message, 'stream not found');
    const js = jetstream(nc);
    await js.publish('compat.js', 'one');
    const wrong = await js.publish('compat.js', 'two', { expect: { lastSequence: 5 } }).catch((e) => e);
    assert.ok(wrong instanceof JetStreamApiError);
    assert.equal(wrong.code, 10071);
    assert.equal(wrong.message, 'wrong last sequence: 1');
    const noConsumer = await js.consumers.get('COMPAT', 'nope').catch((e) => e);
    assert.equal(noConsumer.name, 'ConsumerNotFoundError');
    assert.ok(noConsumer instanceof JetStreamApiError);
    assert.equal(noConsumer.code, 10014);
  } finally {
    await nc.close();
  }
});

test("consumer.fetch() yields each message as it arrives, as nats.js's: the first while the fetch is open, the end at the expiry", async () => {
  const { connect } = require('natsio/transport-node');
  const { jetstreamManager, jetstream } = require('natsio/jetstream');
  const nc = await connect({ servers: server.url });
  try {
    const jsm = await jetstreamManager(nc);
    await jsm.streams.add({ name: 'COMPAT_FETCH', subjects: ['compat.fetch'] });
    await jsm.consumers.add('COMPAT_FETCH', { durable_name: 'c', ack_policy: 'explicit' });
    const js = jetstream(nc);
    await js.publish('compat.fetch', 'first');
    const c = await js.consumers.get('COMPAT_FETCH', 'c');
    const events = [];
    for await (const m of await c.fetch({ max_messages: 10, expires: 2000 })) {
      events.push(m.string());
      m.ack();
      // Published after the first came: the same fetch, still open, yields it.
      if (events.length === 1) await js.publish('compat.fetch', 'second');
    }
    events.push('end');
    assert.deepEqual(events, ['first', 'second', 'end']);
  } finally {
    await nc.close();
  }
});

/** The payload of the first message of `msgs` (a fetch's or a consume's
 * ConsumerMessages, nats.js's or natsio's), acked; then it stops. */
async function firstData(msgs) {
  try {
    for await (const m of msgs) {
      m.ack();
      return m.string();
    }
    return 'nothing';
  } finally {
    msgs.stop();
  }
}

test("priority reaches the server from consumer.fetch() and consume() as from nats.js's: on a prioritized consumer the lower number gets the message, whichever client waits first", async () => {
  const { jetstreamManager, jetstream, AckPolicy } = require('@nats-io/jetstream');
  const theirs = await require('@nats-io/transport-node').connect({ servers: server.url });
  const ours = await require('natsio/transport-node').connect({ servers: server.url });
  const jsm = await jetstreamManager(theirs);
  await jsm.streams.add({ name: 'COMPAT_PRZ', subjects: ['compat.prz.>'], storage: 'memory' });
  try {
    const pub = jetstream(theirs);
    const pull = { group: 'P', max_messages: 1, expires: 10000 };
    let round = 0;
    for (const [first, second] of [['nats.js', 'natsio'], ['natsio', 'nats.js']]) {
      for (const how of ['fetch', 'consume']) {
        // A consumer of its own each round: no request of an earlier one waits on it.
        const name = `pz${round}`;
        const subject = `compat.prz.${round++}`;
        await jsm.consumers.add('COMPAT_PRZ', {
          durable_name: name, ack_policy: AckPolicy.Explicit, filter_subject: subject,
          priority_groups: ['P'], priority_policy: 'prioritized',
        });
        const consumer = {
          'nats.js': await jetstream(theirs).consumers.get('COMPAT_PRZ', name),
          natsio: await require('natsio/jetstream').jetstream(ours).consumers.get('COMPAT_PRZ', name),
        };
        const waiting = (n) => eventually(
          async () => (await jsm.consumers.info('COMPAT_PRZ', name)).num_waiting >= n, 10000, `${n} requests waiting on ${name}`);
        const what = `${first}'s ${how} at 5 waits, then ${second}'s fetch at 1`;
        // The first waiter at 5, the second at 1: the second gets the
        // message (were the first's priority not sent, 0 would win).
        // nats.js sends its request once the loop starts reading.
        const low = firstData(await consumer[first][how]({ ...pull, priority: 5 }));
        await waiting(1);
        const high = firstData(await consumer[second].fetch({ ...pull, priority: 1 }));
        await waiting(2);
        await pub.publish(subject, 'one');
        assert.equal(await within(high, 5000, what), 'one', what);
        await pub.publish(subject, 'two');
        assert.equal(await within(low, 5000, what), 'two', what);
      }
    }
  } finally {
    await jsm.streams.delete('COMPAT_PRZ');
    await ours.close();
    await theirs.close();
  }
});

test("js.publish's retries is nats.js's: as many messages go out to a subject no stream holds, then JetStreamNotEnabled", async () => {
  const theirs = await require('@nats-io/transport-node').connect({ servers: server.url });
  const ours = await require('natsio/transport-node').connect({ servers: server.url });
  const clients = {
    'nats.js': { nc: theirs, js: require('@nats-io/jetstream').jetstream(theirs), mod: require('@nats-io/jetstream') },
    natsio: { nc: ours, js: require('natsio/jetstream').jetstream(ours), mod: require('natsio/jetstream') },
  };
  try {
    // undefined: no options at all; {}: options without retries.
    for (const retries of [undefined, 'none', 0, 1, 2, 4]) {
      const sent = {};
      const errors = {};
      for (const [who, { nc, js, mod }] of Object.entries(clients)) {
        const before = nc.stats().outMsgs;
        const opts = retries === undefined ? undefined : retries === 'none' ? {} : { retries };
        const e = await js.publish('compat.retry.nostream', 'x', opts).then(() => null, (e) => e);
        sent[who] = nc.stats().outMsgs - before;
        // JetStreamNotEnabled is not exported: its name, message and base classes.
        assert.ok(e instanceof Error, `${who}, retries ${retries}: ${e}`);
        errors[who] = `${e.name}: ${e.message} (JetStreamError: ${e instanceof mod.JetStreamError})`;
      }
      const attempts = typeof retries === 'number' && retries > 1 ? retries : 1;
      assert.deepEqual(sent, { 'nats.js': attempts, natsio: attempts }, `messages sent with retries ${retries}`);
      assert.equal(errors['nats.js'], 'JetStreamNotEnabled: jetstream is not enabled (JetStreamError: false)');
      assert.equal(errors.natsio, errors['nats.js'], `the error with retries ${retries}`);
    }
  } finally {
    await ours.close();
    await theirs.close();
  }
});

test("js.publish and startBatch retry as nats.js does: a timeout as well as no responders, as many messages as retries, then the same error", async () => {
  const theirs = await require('@nats-io/transport-node').connect({ servers: server.url });
  const ours = await require('natsio/transport-node').connect({ servers: server.url });
  // A subscriber that never answers: each request to its subject times out.
  const silent = await require('@nats-io/transport-node').connect({ servers: server.url });
  silent.subscribe('compat.retry.silent', () => {});
  await silent.flush();
  const clients = {
    'nats.js': { nc: theirs, js: require('@nats-io/jetstream').jetstream(theirs) },
    natsio: { nc: ours, js: require('natsio/jetstream').jetstream(ours) },
  };
  const cases = [
    ['publish, silent', (js, retries) => js.publish('compat.retry.silent', 'x', { retries, timeout: 200 })],
    ['startBatch, silent', (js, retries) => js.startBatch('compat.retry.silent', 'x', { retries, timeout: 200 })],
    ['startBatch, no stream', (js, retries) => js.startBatch('compat.retry.nostream', 'x', { retries, timeout: 200 })],
  ];
  try {
    for (const [what, call] of cases) {
      for (const retries of [1, 3]) {
        const sent = {};
        const errors = {};
        for (const [who, { nc, js }] of Object.entries(clients)) {
          const before = nc.stats().outMsgs;
          const e = await call(js, retries).then(() => null, (e) => e);
          sent[who] = nc.stats().outMsgs - before;
          assert.ok(e instanceof Error, `${who}, ${what}, retries ${retries}: ${e}`);
          errors[who] = `${e.name}: ${e.message}`;
        }
        assert.deepEqual(sent, { 'nats.js': retries, natsio: retries }, `messages sent: ${what}, retries ${retries}`);
        assert.equal(errors.natsio, errors['nats.js'], `the error: ${what}, retries ${retries}`);
      }
    }
  } finally {
    await ours.close();
    await theirs.close();
    await silent.close();
  }
});

test("ObjectInfo.revision is nats.js's: what natsio/obj's put, link and info report, nats.js's info() reports for the same object, and the other way round", async () => {
  const theirs = await require('@nats-io/transport-node').connect({ servers: server.url });
  const ours = await require('natsio/transport-node').connect({ servers: server.url });
  const bytes = new TextEncoder().encode('some bytes');
  const theirOs = await new (require('@nats-io/obj').Objm)(theirs).create('COMPAT_REV', { storage: 'memory' });
  const ourOs = await new (require('natsio/obj').Objm)(ours).open('COMPAT_REV');
  try {
    const same = async (name, revision, what) => {
      assert.equal(typeof revision, 'number', `${what}: a number`);
      assert.equal((await theirOs.info(name)).revision, revision, `${what}: nats.js's info()`);
      assert.equal((await ourOs.info(name)).revision, revision, `${what}: natsio's info()`);
    };
    // natsio writes, nats.js reads.
    const ourPut = await ourOs.putBlob({ name: 'a' }, bytes);
    assert.equal(ourPut.revision, 2, 'its chunk at 1, its info at 2');
    await same('a', ourPut.revision, "natsio's putBlob");
    const ourStreamed = await ourOs.put({ name: 'a' }, new Blob([bytes, bytes]).stream());
    assert.ok(ourStreamed.revision > ourPut.revision);
    await same('a', ourStreamed.revision, "natsio's put");
    // nats.js writes, natsio reads.
    const theirPut = await theirOs.putBlob({ name: 'b' }, bytes);
    assert.ok(theirPut.revision > ourStreamed.revision);
    await same('b', theirPut.revision, "nats.js's putBlob");
    assert.equal((await ourOs.get('b')).info.revision, (await theirOs.get('b')).info.revision, 'get');
    // A meta update, by either: the new info's revision.
    await ourOs.update('b', { description: 'by natsio' });
    const updated = (await theirOs.info('b')).revision;
    assert.ok(updated > theirPut.revision);
    await same('b', updated, "natsio's update");
    await theirOs.update('a', { description: 'by nats.js' });
    assert.ok((await ourOs.info('a')).revision > updated);
    await same('a', (await ourOs.info('a')).revision, "nats.js's update");
    // Links, by either.
    const ourLink = await ourOs.link('to-a', await ourOs.info('a'));
    await same('to-a', ourLink.revision, "natsio's link");
    const theirLink = await theirOs.link('to-b', await theirOs.info('b'));
    await same('to-b', theirLink.revision, "nats.js's link");
    // natsio's list and watch entries carry it too (nats.js's leave it undefined).
    for (const i of await ourOs.list()) assert.equal(i.revision, (await theirOs.info(i.name)).revision, `list: ${i.name}`);
    const w = await ourOs.watch({ includeHistory: true });
    for (let n = 0; n < 4; n++) {
      const { value: i } = await within(w.next(), 5000, `watch entry ${n}`);
      assert.equal(i.revision, (await theirOs.info(i.name)).revision, `watch: ${i.name}`);
    }
    // A delete, by either: the tombstone's revision.
    await ourOs.delete('a');
    const gone = await theirOs.info('a');
    assert.equal(gone.deleted, true);
    assert.ok(gone.revision > theirLink.revision);
    await same('a', gone.revision, "natsio's delete");
    assert.equal((await within(w.next(), 5000, 'watch: the delete')).value.revision, gone.revision);
    await theirOs.delete('b');
    await same('b', (await ourOs.info('b')).revision, "nats.js's delete");
    assert.ok((await ourOs.info('b')).revision > gone.revision);
    w.stop();
  } finally {
    await theirOs.destroy();
    await ours.close();
    await theirs.close();
  }
});

test('headers: get() is one string (empty when absent), values() every one; received headers too', async () => {
  const { connect, headers, errors } = require('natsio/transport-node');
  const h = headers();
  h.append('A', '1');
  h.append('A', '2');
  assert.equal(h.get('A'), '1');
  assert.equal(h.last('A'), '2');
  assert.deepEqual(h.values('A'), ['1', '2']);
  assert.equal(h.get('a'), '');
  assert.equal(h.get('a', 'insensitive'), '1');
  assert.throws(() => headers(0, 'no code'), errors.InvalidArgumentError);
  const nc = await connect({ servers: server.url });
  try {
    const sub = nc.subscribe('compat.h', { max: 1 });
    nc.publish('compat.h', 'x', { headers: h });
    for await (const m of sub) {
      assert.equal(typeof m.headers.get('A'), 'string');
      assert.deepEqual(m.headers.values('A'), ['1', '2']);
      // nats.js under Node hands out a Buffer: `${m.data}` is the text.
      assert.ok(Buffer.isBuffer(m.data), 'data is a Buffer');
      assert.equal(`${m.data}`, 'x');
    }
  } finally {
    await nc.close();
  }
});

test('authenticators: user/password and token reach the server; a wrong password is an AuthorizationError', async () => {
  const { connect, usernamePasswordAuthenticator, tokenAuthenticator, errors } = require('natsio/transport-node');
  const users = await startConfiguredServer('authorization { users: [ { user: "ann", password: "s3cret" } ] }\n');
  const tokens = await startConfiguredServer('authorization { token: "t0ken" }\n');
  try {
    const a = await connect({ servers: users.url, authenticator: usernamePasswordAuthenticator('ann', 's3cret') });
    await a.flush();
    await a.close();
    const b = await connect({ servers: tokens.url, authenticator: tokenAuthenticator('t0ken') });
    await b.flush();
    await b.close();
    const bad = await connect({
      servers: users.url,
      authenticator: usernamePasswordAuthenticator('ann', 'wrong'),
      maxReconnectAttempts: 0,
    }).catch((e) => e);
    assert.ok(bad instanceof errors.AuthorizationError, `${bad?.name}: ${bad?.message}`);
    // A program's own authenticator (nats.js's Authenticator) is called
    // as nats.js calls it; what is not a function is refused.
    const c = await connect({ servers: users.url, authenticator: () => ({ user: 'ann', pass: 's3cret' }) });
    await c.flush();
    await c.close();
    await assert.rejects(connect({ servers: users.url, authenticator: { user: 'ann' } }), errors.InvalidArgumentError);
  } finally {
    await users.stop();
    await tokens.stop();
  }
});

test("header names: natsio/jetstream's objects are nats.js's, from the core's names", () => {
  const ours = require('../compat/jetstream.js');
  const theirs = require('@nats-io/jetstream');
  for (const name of ['PubHeaders', 'JsHeaders', 'DirectMsgHeaders', 'RepublishHeaders']) {
    assert.deepEqual({ ...ours[name] }, { ...theirs[name] }, name);
  }
  assert.equal(ours.PubHeaders.MsgIdHdr, nats.JS_HEADERS.MSG_ID);
});

/** nats.js's 06_heartbeats with `mod`'s client (@nats-io or natsio) on a
 * consumer of its own server, stopped (SIGSTOP) after the first message:
 * the notifications up to the second missed heartbeat, what was read, and
 * how long the loop took to end after stop(). `name` undefined: an
 * ordered consumer, as the example's own consumers.get(stream, info). */
async function heartbeatsMissed(mod, name) {
  const own = await startServer(['-js']);
  const { connect } = require(`${mod}/transport-node`);
  const { jetstream, jetstreamManager } = require(`${mod}/jetstream`);
  const nc = await connect({ servers: own.url });
  let stopped = false;
  try {
    const jsm = await jetstreamManager(nc);
    await jsm.streams.add({ name: 'HB', subjects: ['hb.>'], storage: 'memory' });
    if (name) await jsm.consumers.add('HB', { durable_name: name, ack_policy: 'explicit' });
    const js = jetstream(nc);
    await js.publish('hb.a', 'one');
    const c = name ? await js.consumers.get('HB', name) : await js.consumers.get('HB');
    const messages = await c.consume({ max_messages: 1, expires: 2000 });
    const told = [];
    let stoppedAt = 0;
    const watching = (async () => {
      for await (const s of messages.status()) {
        told.push(s.type === 'next' ? `next ${s.options.batch}/${s.options.idle_heartbeat}/${s.options.expires}` : JSON.stringify(s));
        if (s.type === 'heartbeats_missed' && s.count === 2) {
          stoppedAt = Date.now();
          messages.stop();
        }
      }
    })();
    const got = [];
    for await (const m of messages) {
      got.push(`${m.data}`);
      m.ack();
      await nc.flush();
      process.kill(own.pid, 'SIGSTOP');
      stopped = true;
      await eventually(() => allThreadsStopped(own.pid), 3000, 'the server to stop');
    }
    const endedAfter = Date.now() - stoppedAt;
    await watching;
    return { got, told: told.slice(0, told.indexOf('{"type":"heartbeats_missed","count":2}') + 1), endedAfter };
  } finally {
    if (stopped) process.kill(own.pid, 'SIGCONT');
    await nc.close();
    await own.stop();
  }
}

for (const [kind, name] of [['pull', 'c'], ['ordered', undefined]]) {
  test(`${kind} consume status(): a request is "next"; a silent server is told as heartbeats_missed from the second interval, and stop() then ends the loop at once; as nats.js`, async () => {
    const official = await heartbeatsMissed('@nats-io', name);
    const ours = await heartbeatsMissed('natsio', name);
    assert.deepEqual(official.got, ['one']);
    assert.deepEqual(ours.got, official.got);
    assert.deepEqual(ours.told.at(-1), '{"type":"heartbeats_missed","count":2}', ours.told.join(' | '));
    // The first request and the one after the message, then the silence.
    assert.deepEqual(ours.told, official.told);
    // Not held by a drain the stopped server cannot answer (drainTimeout).
    assert.ok(ours.endedAfter < 5000, `the loop ended ${ours.endedAfter} ms after stop()`);
  });
}

test('getServer() names a server as nats.js does: host:port, the scheme\'s default port when its URL has none', async () => {
  const { hostPort } = require('natsio/transport-node')[Symbol.for('natsio.compat.internal')];
  assert.equal(hostPort('nats://localhost'), 'localhost:4222');
  assert.equal(hostPort('localhost'), 'localhost:4222');
  assert.equal(hostPort('tls://a.example:4443'), 'a.example:4443');
  assert.equal(hostPort('nats://user:pw@[::1]'), '[::1]:4222');
  assert.equal(hostPort('ws://h/path'), 'h:80');
  assert.equal(hostPort('wss://h'), 'h:443');
  const { connect } = require('natsio/transport-node');
  const nc = await connect({ servers: `localhost:${server.port}` });
  try {
    assert.equal(nc.getServer(), `localhost:${server.port}`);
  } finally {
    await nc.close();
  }
});

/** `mod`'s client (@nats-io or natsio) connected to A alone: setServers
 * ([dead, B]) then reconnect(). What its getServers() said before and
 * after, the server it ended on, and the status() types it told from the
 * forced reconnect to the reconnect (the reconnect with its server). */
async function movedByPool(mod, a, b, dead) {
  const { connect } = require(`${mod}/transport-node`);
  const nc = await connect({ servers: a, noRandomize: true, reconnectTimeWait: 100, reconnectJitter: 10, maxReconnectAttempts: -1 });
  const told = [];
  const watching = (async () => {
    for await (const s of nc.status()) {
      if (s.type === 'reconnect') told.push(`reconnect ${s.server}`);
      else if (['forceReconnect', 'disconnect', 'reconnecting'].includes(s.type)) told.push(s.type);
    }
  })();
  const view = (servers) => servers.map((s) => ({ ...s, lastConnect: s.lastConnect > 0 }));
  try {
    const before = view(nc.getServers());
    assert.throws(() => nc.setServers([]), (e) => e.name === 'InvalidArgumentError' && e.message === "'servers' cannot be empty", `${mod}: empty`);
    nc.setServers([dead, b]);
    await nc.flush();
    const kept = nc.getServer();
    const set = view(nc.getServers());
    await nc.reconnect();
    await eventually(() => told.some((t) => t.startsWith('reconnect ')), 10000, `${mod}: reconnected`, () => told.join(' | '));
    const sorted = (servers) => servers.sort((x, y) => x.listen.localeCompare(y.listen));
    return { before, kept, set: sorted(set), after: sorted(view(nc.getServers())), on: nc.getServer(), told };
  } finally {
    await nc.close();
    await watching;
  }
}

/** `mod`'s client (@nats-io or natsio) of its own server S, with a
 * reconnectDelayHandler answering `wait` ms: S is stopped, and restarted
 * once three attempts were told ('reconnecting'); what the handler was
 * called with, the times of the attempts told, and the server the client
 * reconnected to. */
async function pacedByHandler(mod, wait) {
  const { connect } = require(`${mod}/transport-node`);
  const s = await startServer();
  const calls = [];
  const nc = await connect({
    servers: `127.0.0.1:${s.port}`,
    maxReconnectAttempts: -1,
    reconnectDelayHandler: (...args) => {
      calls.push(args);
      return wait;
    },
  });
  const attempts = [];
  let reconnected;
  const watching = (async () => {
    for await (const st of nc.status()) {
      if (st.type === 'reconnecting') attempts.push(Date.now());
      else if (st.type === 'reconnect') reconnected = st.server;
    }
  })();
  try {
    await s.stop();
    await eventually(() => attempts.length >= 3, 10000, `${mod}: three attempts`);
    await s.restart();
    await eventually(() => reconnected !== undefined, 10000, `${mod}: reconnected`);
    return { calls, attempts, reconnected, port: s.port };
  } finally {
    await nc.close();
    await watching;
    await s.stop();
  }
}

test("reconnectDelayHandler paces the reconnect attempts as nats.js's: called without arguments, its answer spaces the attempts, the client reconnects when the server is back; not a function is nats.js's TypeError", async () => {
  for (const mod of ['@nats-io', 'natsio']) {
    const { calls, attempts, reconnected, port } = await pacedByHandler(mod, 300);
    assert.ok(calls.length >= 2 && calls.every((args) => args.length === 0), `${mod}: ${JSON.stringify(calls)}`);
    for (let i = 1; i < 3; i++) {
      assert.ok(attempts[i] - attempts[i - 1] >= 250, `${mod}: attempts ${attempts[i] - attempts[i - 1]} ms apart`);
    }
    assert.equal(reconnected, `127.0.0.1:${port}`, mod);
    const { connect } = require(`${mod}/transport-node`);
    await assert.rejects(connect({ servers: `127.0.0.1:${server.port}`, reconnectDelayHandler: 300 }), (e) => e instanceof TypeError && e.message === "'reconnectDelayHandler' must be a function", mod);
  }
});

test('setServers([dead, B]) then reconnect(): the connection stays on A until then, ends on B, getServers() counts the dead server\'s failed attempt, and status() tells each attempt as "reconnecting"; as nats.js', async () => {
  const [a, b] = [await startServer(), await startServer()];
  try {
    const [hpA, hpB, dead] = [`127.0.0.1:${a.port}`, `127.0.0.1:${b.port}`, `127.0.0.1:${await freePort()}`];
    const official = await movedByPool('@nats-io', hpA, hpB, dead);
    const ours = await movedByPool('natsio', hpA, hpB, dead);
    const server = (listen, reconnects, didConnect, lastConnect) => ({
      hostname: '127.0.0.1',
      port: Number(listen.split(':')[1]),
      listen,
      src: listen,
      tlsName: '',
      reconnects,
      lastConnect,
      gossiped: false,
      didConnect,
    });
    assert.deepEqual(official.before, [server(hpA, 0, true, true)]);
    assert.deepEqual(official.kept, hpA);
    assert.deepEqual(official.on, hpB);
    assert.deepEqual(official.after, [server(hpB, 0, true, true), server(dead, 1, false, true)].sort((x, y) => x.listen.localeCompare(y.listen)));
    assert.deepEqual(official.told, ['forceReconnect', 'disconnect', 'reconnecting', 'reconnecting', `reconnect ${hpB}`]);
    for (const k of ['before', 'kept', 'set', 'after', 'on', 'told']) assert.deepEqual(ours[k], official[k], k);
  } finally {
    await a.stop();
    await b.stop();
  }
});

