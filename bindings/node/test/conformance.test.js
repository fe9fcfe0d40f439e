'use strict';
// The conformance table (tests/conformance/cases.txt, shared by the C, C++,
// Go and Node tests): every line runs here, as one test named after it,
// against a real nats-server. A line this file has no check for fails.
const { test, before, after } = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const nats = require('..');
const { startServer, allThreadsStopped, threadStates, freePort } = require('./server');
const { eventually, sleep, within } = require('./wait');

const CASES = path.join(__dirname, '..', '..', '..', 'tests', 'conformance', 'cases.txt');
const lines = fs
  .readFileSync(CASES, 'utf8')
  .split('\n')
  .map((l) => l.replace(/#.*/, '').trim())
  .filter((l) => l !== '');

// The error classes natsio exports, by status.
const classByStatus = new Map();
for (const v of Object.values(nats)) {
  if (typeof v === 'function' && v.prototype instanceof nats.NatsError) classByStatus.set(new v('x').status, v);
}
// The error lines: status -> {name, ancestors}.
const tree = new Map();
for (const line of lines) {
  const [kind, status, name, ...ancestors] = line.split(/\s+/);
  if (kind === 'error') tree.set(Number(status), { name, ancestors: ancestors.map(Number) });
}

// One JetStream server for the data and default lines (started lazily, so
// that the error lines need none).
let js;
let jsEnv;
async function jetstream() {
  if (!jsEnv) {
    const storeDir = fs.mkdtempSync(path.join(os.tmpdir(), 'natsio-conformance-'));
    jsEnv = { storeDir };
    jsEnv.server = await startServer(['-js', '-sd', storeDir]);
    jsEnv.nc = await nats.connect({ servers: jsEnv.server.url });
    js = jsEnv.nc.jetstream();
  }
  return jsEnv;
}
after(async () => {
  js?.close();
  await jsEnv?.nc?.close();
  await jsEnv?.server?.stop();
  if (jsEnv) fs.rmSync(jsEnv.storeDir, { recursive: true, force: true });
});

async function rejection(promise) {
  try {
    await promise;
  } catch (e) {
    return e;
  }
  assert.fail('expected a rejection');
}

function checkError(status, name, ancestors) {
  const cls = classByStatus.get(status);
  assert.ok(cls, `no error class for status ${status} (${name})`);
  const e = new cls('from the conformance table');
  assert.equal(e.status, status);
  assert.equal(e.code, name);
  assert.ok(e instanceof nats.NatsError && e instanceof Error);
  assert.ok(e instanceof cls, `${cls.name}`);
  const expected = new Set([status, ...ancestors]);
  for (const [other, otherCls] of classByStatus) {
    assert.equal(
      e instanceof otherCls,
      expected.has(other),
      `${cls.name} instanceof ${otherCls.name} should be ${expected.has(other)}`,
    );
  }
  // The prototype chain follows the first parent (names and stack traces).
  const first = ancestors[0];
  assert.equal(Object.getPrototypeOf(cls), first === undefined ? nats.NatsError : classByStatus.get(first));
}

const data = {
  async api_error() {
    await jetstream();
    await js.streams.add({ name: 'CONF_API', subjects: ['conf.api.a'] });
    const inUse = await rejection(js.streams.add({ name: 'CONF_API', subjects: ['conf.api.b'] }));
    assert.ok(inUse instanceof nats.StreamNameInUseError, `${inUse}`);
    assert.equal(inUse.apiCode, 400);
    assert.equal(inUse.errCode, 10058);
    const missing = await rejection(js.streams.info('CONF_NO_SUCH_STREAM'));
    assert.ok(missing instanceof nats.StreamNotFoundError, `${missing}`);
    assert.equal(missing.apiCode, 404);
    assert.equal(missing.errCode, 10059);
    // Errors that are no JetStream API rejection carry none.
    const local = await rejection(jsEnv.nc.request('conf.nobody', 'x', { timeout: 1000 }));
    assert.ok(local instanceof nats.NoRespondersError);
    assert.equal(local.apiCode, undefined);
    assert.equal(local.errCode, undefined);
  },
  async key_revision() {
    await jetstream();
    const kv = await js.kv.create('CONF_REV', { history: 5 });
    try {
      assert.equal(await kv.put('k', 'v1'), 1);
      const exists = await rejection(kv.create('k', 'again'));
      assert.ok(exists instanceof nats.KeyExistsError, `${exists}`);
      assert.equal(exists.revision, 1);
      await kv.delete('k');
      const deleted = await rejection(kv.get('k'));
      assert.ok(deleted instanceof nats.KeyDeletedError, `${deleted}`);
      assert.ok(deleted instanceof nats.KeyNotFoundError);
      assert.equal(deleted.revision, 2);
    } finally {
      kv.close();
    }
  },
};

async function outcome(promise) {
  try {
    const nc = await promise;
    const where = nc.connectedUrl;
    await nc.close();
    return `connected to ${where}`;
  } catch (e) {
    return `${e.name}: ${e.message}`;
  }
}

const defaults = {
  async default_url(value) {
    assert.equal(nats.DEFAULT_URL, value);
    const opts = { reconnect: false, timeout: 1000 };
    const explicit = await outcome(nats.connect({ ...opts, servers: value }));
    assert.ok(/^(connected to|NoServersAvailableError:)/.test(explicit), explicit);
    // Proof that the default address was used: the connected URL, or the
    // error naming host:port when nothing listens there.
    assert.ok(explicit.includes(value.replace('nats://', '')), explicit);
    assert.equal(await outcome(nats.connect({ ...opts, servers: '' })), explicit, "servers: ''");
    assert.equal(await outcome(nats.connect({ ...opts, servers: [] })), explicit, 'servers: []');
    assert.equal(await outcome(nats.connect({ ...opts })), explicit, 'no servers');
    assert.equal(await outcome(nats.connect('')), explicit, "connect('')");
  },
  async delete_msg_erase(value) {
    assert.equal(value, 'true');
    const { server, nc } = await jetstream();
    await js.streams.add({ name: 'CONF_DEL', subjects: ['conf.del'] });
    for (let i = 0; i < 2; i++) await js.publish('conf.del', `m${i}`);
    const spyConn = await nats.connect({ servers: server.url });
    try {
      const requests = [];
      spyConn.subscribe('$JS.API.STREAM.MSG.DELETE.CONF_DEL', { callback: (err, m) => requests.push(m.json()) });
      await spyConn.flush();
      assert.equal(await js.streams.deleteMessage('CONF_DEL', 1), true);
      await eventually(() => requests.length === 1, 3000, 'the erase request');
      assert.notEqual(requests[0].no_erase, true, JSON.stringify(requests[0]));
      assert.equal(requests[0].seq, 1);
      const gone = await rejection(js.streams.getMessage('CONF_DEL', 1));
      assert.ok(gone instanceof nats.MessageNotFoundError, `${gone}`);
      await js.streams.deleteMessage('CONF_DEL', 2, false);
      await eventually(() => requests.length === 2, 3000, 'the no-erase request');
      assert.equal(requests[1].no_erase, true, JSON.stringify(requests[1]));
    } finally {
      await spyConn.close();
    }
    assert.ok(nc);
  },
  async sub_pending_limit_zero(value) {
    assert.equal(value, 'disabled');
    const { server } = await jetstream();
    const nc = await nats.connect({ servers: server.url, pendingMsgsLimit: 10 });
    try {
      const unlimited = nc.subscribe('conf.pending', { pendingMsgsLimit: 0 });
      const limited = nc.subscribe('conf.pending'); // the client's limit, 10
      await nc.flush();
      for (let i = 0; i < 50; i++) nc.publish('conf.pending', `m${i}`);
      await nc.flush();
      // The limited one drops: the client's limit of 10 is real here.
      await eventually(() => limited.stats().dropped > 0, 3000, 'drops beyond the client limit');
      assert.equal(unlimited.stats().dropped, 0);
      for (let i = 0; i < 50; i++) {
        const { value: m, done } = await unlimited.next(2000);
        assert.equal(done, false);
        assert.equal(m.string(), `m${i}`);
      }
      assert.equal(unlimited.stats().dropped, 0);
    } finally {
      await nc.close();
    }
  },
};

const behaviours = {
  async iterator_closed() {
    const { server } = await jetstream();
    const nc = await nats.connect({ servers: server.url });
    const sub = nc.subscribe('conf.closed');
    await nc.flush();
    const waiting = rejection(sub[Symbol.asyncIterator]().next()); // a loop waiting for its next message
    await nc.close();
    const e = await waiting;
    assert.ok(e instanceof nats.ConnectionClosedError, `${e}`);
  },
  async purge_deletes_zero() {
    await jetstream();
    const kv = await js.kv.create('CONF_PURGE', { history: 5, storage: 'memory' });
    try {
      await kv.put('k', 'v1');
      await kv.put('k', 'v2');
      await kv.delete('k');
      // 0: the default age (30 minutes): the young marker stays, the values go.
      assert.deepEqual(await kv.purgeDeletes(0), { success: true, purged: 2 });
      assert.ok((await rejection(kv.get('k'))) instanceof nats.KeyDeletedError);
      // Below 0: every marker, whatever its age.
      assert.deepEqual(await kv.purgeDeletes(-1), { success: true, purged: 1 });
      const gone = await rejection(kv.get('k'));
      assert.ok(gone instanceof nats.KeyNotFoundError && !(gone instanceof nats.KeyDeletedError), `${gone}`);
    } finally {
      kv.close();
      await js.kv.delete('CONF_PURGE');
    }
  },
  async sync_publish() {
    const { server } = await jetstream();
    // A plain subscriber takes the asynchronous publish and never acks.
    const holder = await nats.connect({ servers: server.url });
    const nc = await nats.connect({ servers: server.url });
    holder.subscribe('conf.sync.held');
    await holder.flush();
    const windowed = nc.jetstream({ publishAsyncMaxPending: 1, publishAsyncStallWait: 100 });
    await js.streams.add({ name: 'CONF_SYNC', subjects: ['conf.sync.stored'], storage: 'memory' });
    try {
      const held = windowed.publishAsync('conf.sync.held', 'a');
      held.catch(() => {}); // no ack ever comes; it fails at its timeout or at close
      assert.equal(windowed.publishAsyncPending, 1);
      const stalled = await rejection(windowed.publishAsync('conf.sync.stored', 'x'));
      assert.ok(stalled instanceof nats.TooManyStalledMsgsError, `${stalled}`);
      const ack = await windowed.publish('conf.sync.stored', 's');
      assert.equal(ack.stream, 'CONF_SYNC');
      assert.equal(ack.seq, 1);
      assert.equal(windowed.publishAsyncPending, 1);
    } finally {
      windowed.close();
      await nc.close();
      await holder.close();
      await js.streams.delete('CONF_SYNC');
    }
  },
  async ack_bodies() {
    const { server } = await jetstream();
    const spyConn = await nats.connect({ servers: server.url });
    await js.streams.add({ name: 'CONF_ACKS', subjects: ['conf.acks'], storage: 'memory' });
    try {
      for (let i = 0; i < 4; i++) await js.publish('conf.acks', 'm');
      await js.consumers.add('CONF_ACKS', { durable_name: 'c', ack_policy: 'explicit', ack_wait: '30s' });
      const spy = spyConn.subscribe('$JS.ACK.CONF_ACKS.>');
      await spyConn.flush();
      const batch = await js.fetch('CONF_ACKS', 'c', { maxMessages: 4, expires: 5000 });
      assert.equal(batch.length, 4);
      batch[0].working();
      batch[1].nak(2000);
      batch[2].term('bad');
      batch[3].ack();
      const seen = [];
      await within(
        (async () => {
          for await (const m of spy) {
            seen.push(m.string());
            if (seen.length === 4) break;
          }
        })(),
        10000,
        'the four acknowledgements',
      );
      assert.deepEqual(seen, ['+WPI', '-NAK {"delay":2000000000}', '+TERM bad', '+ACK']);
    } finally {
      await spyConn.close();
      await js.streams.delete('CONF_ACKS');
    }
  },
  async kv_bind_subjects() {
    await jetstream();
    await js.streams.add({ name: 'KV_CONF_PLAIN', subjects: ['conf.plain.>'], storage: 'memory' });
    await js.streams.add({ name: 'KV_CONF_WIDE', subjects: ['$KV.CONF_WIDE.>'], storage: 'memory' });
    try {
      const e = await rejection(js.kv.bind('CONF_PLAIN'));
      assert.ok(e instanceof nats.BucketNotFoundError, `${e}`);
      const kv = await js.kv.bind('CONF_WIDE');
      assert.equal(kv.bucket, 'CONF_WIDE');
      kv.close();
    } finally {
      await js.streams.delete('KV_CONF_PLAIN');
      await js.streams.delete('KV_CONF_WIDE');
    }
  },
  async kv_codec() {
    await jetstream();
    const plain = await js.kv.create({ bucket: 'CONF_CODEC', storage: 'memory' });
    try {
      const kv = plain.withCodecs({ key: nats.KeyCodecs.base64(), value: nats.ValueCodecs.zlib() });
      await kv.put('a.b c', 'v');
      const stored = await plain.get('YQ==.YiBj');
      assert.equal(stored.value[0], 0x78);
      const e = await kv.get('a.b c');
      assert.equal(e.key, 'a.b c');
      assert.equal(e.string(), 'v');
      assert.deepEqual(await kv.keys(), ['a.b c']);
      kv.close();
    } finally {
      plain.close();
      await js.kv.delete('CONF_CODEC');
    }
  },
  async service_handler_failure() {
    const { server } = await jetstream();
    const nc = await nats.connect({ servers: server.url });
    const reported = [];
    const svc = await new nats.Svcm(nc).add({
      name: 'conf',
      version: '1.0.0',
      errorHandler: (err) => reported.push(err),
    });
    try {
      svc.addEndpoint('op', {
        subject: 'conf.svc.op',
        handler: (err, msg) => {
          if (msg.string() === 'fail') throw new Error('failing handler');
          msg.respond(msg.data);
        },
      });
      await nc.flush();
      const failed = await nc.request('conf.svc.op', 'fail');
      assert.equal(failed.headers.first(nats.ServiceErrorCodeHeader), '500');
      assert.equal((await nc.request('conf.svc.op', 'next')).string(), 'next');
      await eventually(() => reported.length === 1, 5000, 'the error handler called');
      assert.equal(reported[0].code, 500);
      const { endpoints } = await svc.stats();
      assert.deepEqual([endpoints[0].num_requests, endpoints[0].num_errors], [2, 1]);
      assert.equal(reported.length, 1);
    } finally {
      await svc.stop();
      await nc.close();
    }
  },
  async prioritized_pull() {
    await jetstream();
    await js.streams.add({ name: 'CONF_PRIO', subjects: ['conf.prio'], storage: 'memory' });
    try {
      await js.consumers.add('CONF_PRIO', { durable_name: 'c', priority_groups: ['P'], priority_policy: 'prioritized' });
      const waiting = async (n) => {
        let last;
        await eventually(
          async () => (last = (await js.consumers.info('CONF_PRIO', 'c')).num_waiting) === n,
          5000,
          `${n} pull requests waiting`,
          () => `num_waiting ${last}`,
        );
      };
      const fetchAt = (priority) => js.fetch('CONF_PRIO', 'c', { group: 'P', priority, maxMessages: 1, expires: 10000 });
      const low = fetchAt(5);
      await waiting(1);
      const high = fetchAt(1);
      await waiting(2);
      const only = async (fetch, what) => {
        const msgs = await within(fetch, 5000, what);
        assert.equal(msgs.length, 1);
        msgs[0].ack();
        return msgs[0].string();
      };
      await js.publish('conf.prio', 'first');
      assert.equal(await only(high, 'the priority 1 fetch'), 'first');
      await js.publish('conf.prio', 'second');
      assert.equal(await only(low, 'the priority 5 fetch'), 'second');
      const e = await rejection(js.fetch('CONF_PRIO', 'c', { group: 'P', priority: 10, noWait: true }));
      assert.ok(e instanceof nats.InvalidArgumentError, `${e}`);
    } finally {
      await js.streams.delete('CONF_PRIO');
    }
  },
  async kv_mirror() {
    await jetstream();
    const stored = async (kv, key) => {
      try {
        return await kv.get(key);
      } catch (e) {
        if (e instanceof nats.KeyNotFoundError) return null;
        throw e;
      }
    };
    // A mirror or source copies asynchronously, and a bucket's mirror
    // answers its Direct Gets too: polled, the entry read returned.
    const copied = async (kv, key, value, what) => {
      let entry;
      await eventually(async () => (entry = await stored(kv, key))?.string() === value, 10000, what);
      return entry;
    };
    const origin = await js.kv.create({ bucket: 'CONF_MIR_O', storage: 'memory' });
    try {
      const mirror = await js.kv.create({ bucket: 'CONF_MIR_M', storage: 'memory', mirror: { name: 'CONF_MIR_O' } });
      const { config } = await js.streams.info('KV_CONF_MIR_M');
      assert.equal(config.mirror.name, 'KV_CONF_MIR_O');
      assert.equal(config.mirror_direct, true);
      assert.equal(config.subjects, undefined);
      await origin.put('k', 'v1');
      await copied(mirror, 'k', 'v1', "the origin's k through the mirror");
      const rev = await mirror.put('w', 'v2');
      const w = await copied(origin, 'w', 'v2', "the mirror's w in the origin");
      assert.equal(w.revision, rev);

      const sourced = await js.kv.create({ bucket: 'CONF_MIR_S', storage: 'memory', sources: [{ name: 'CONF_MIR_O' }] });
      await copied(sourced, 'k', 'v1', "the origin's k in the sourcing bucket");
      await sourced.put('s', 'v3');
      const e = await rejection(origin.get('s'));
      assert.ok(e instanceof nats.KeyNotFoundError, `${e}`);
    } finally {
      for (const bucket of ['CONF_MIR_M', 'CONF_MIR_S']) await js.kv.delete(bucket).catch(() => {});
      await js.kv.delete('CONF_MIR_O');
    }
  },
  async server_pool() {
    const { server: a } = await jetstream();
    const b = await startServer();
    const dead = `nats://127.0.0.1:${await freePort()}`;
    const nc = await nats.connect({ servers: a.url, noRandomize: true, maxReconnectAttempts: -1, reconnectTimeWait: 50, reconnectJitter: 10 });
    const failed = [];
    let reconnected = false;
    nc.on('reconnectFailed', (err) => failed.push(err));
    nc.on('reconnect', () => (reconnected = true));
    try {
      assert.deepEqual(nc.serverPool(), [{ url: a.url, reconnects: 0, didConnect: true, discovered: false }]);
      nc.setServerPool([dead, b.url]);
      await nc.flush();
      assert.equal(nc.connectedUrl, a.url);
      assert.deepEqual(nc.serverPool().map((s) => s.url), [dead, b.url]);
      nc.forceReconnect();
      // The failed attempt is told before the reconnect.
      await eventually(() => reconnected, 8000, 'reconnected');
      assert.equal(nc.connectedUrl, b.url);
      const pool = nc.serverPool();
      assert.deepEqual(pool.find((s) => s.url === dead), { url: dead, reconnects: 1, didConnect: false, discovered: false });
      assert.deepEqual(pool.find((s) => s.url === b.url), { url: b.url, reconnects: 0, didConnect: true, discovered: false });
      assert.equal(failed.length, 1);
      assert.ok(failed[0] instanceof nats.NatsError && failed[0].message.includes(`reconnect to ${dead} failed: `), `${failed[0]}`);
      assert.throws(() => nc.setServerPool([]), nats.ConfigError);
      assert.deepEqual(nc.serverPool(), pool);
    } finally {
      await nc.close();
      await b.stop();
    }
  },
  async reconnect_delay_callback() {
    const s = await startServer();
    const args = [];
    let failed = 0;
    let reconnected = false;
    const nc = await nats.connect({
      servers: s.url,
      maxReconnectAttempts: -1,
      reconnectDelayHandler: (attempts) => {
        args.push(attempts);
        return 20;
      },
    });
    nc.on('reconnectFailed', () => failed++);
    nc.on('reconnect', () => (reconnected = true));
    try {
      await s.stop();
      await eventually(() => args.length >= 2, 10000, 'two calls of the handler');
      await s.restart();
      await eventually(() => reconnected, 10000, 'reconnected');
      assert.deepEqual(args, args.map((_, i) => i + 1));
      assert.equal(failed, args.length - 1, `${failed} failed attempts for ${args.length} calls`);
    } finally {
      await nc.close();
      await s.stop();
    }
  },
  async authenticator_callback() {
    const { fixture, startConfiguredServer } = require('./server');
    const read = (rel) => fs.readFileSync(fixture(rel), 'utf8').trim();
    const { nkeyPrivateKey: keyOf, sign } = require('./nkey-sign');
    const pub = read('auth/nkey-user.pub');
    const signer = (key, nonces) => (nonce) => {
      nonces.push(nonce);
      return { nkey: pub, sig: sign(key, nonce).toString('base64url') };
    };
    const server = await startConfiguredServer(`authorization { users = [ { nkey: ${pub} } ] }\n`);
    try {
      const nonces = [];
      const nc = await nats.connect({
        servers: server.url,
        reconnectTimeWait: 20,
        reconnectJitter: 5,
        authenticator: signer(keyOf(read('auth/nkey-user.nk')), nonces),
      });
      try {
        assert.equal(nonces.length, 1);
        assert.ok(typeof nonces[0] === 'string' && nonces[0].length > 0, `${nonces[0]}`);
        nc.forceReconnect();
        await eventually(() => nonces.length >= 2 && nc.status === 'CONNECTED', 10000, 'a second call and a reconnect');
        await nc.flush();
        assert.ok(nonces[1].length > 0 && nonces[1] !== nonces[0], JSON.stringify(nonces));
      } finally {
        await nc.close();
      }
      const base = { servers: server.url, reconnect: false, logger: () => {} };
      const wrong = await rejection(nats.connect({ ...base, authenticator: signer(keyOf(read('auth/nkey-other.nk')), []) }));
      assert.ok(wrong instanceof nats.AuthorizationViolationError, `${wrong}`);
      const thrown = await rejection(nats.connect({ ...base, authenticator: () => { throw new Error('no key'); } }));
      assert.ok(thrown instanceof nats.ConfigError && thrown.message.includes('authenticator callback'), `${thrown}`);
    } finally {
      await server.stop();
    }
  },
  async endpoint_pending_limits() {
    const { server } = await jetstream();
    const nc = await nats.connect({ servers: server.url });
    nc.on('error', () => {}); // the slow consumer is also the connection's error
    const reported = [];
    const svc = await new nats.Svcm(nc).add({
      name: 'conflimits',
      version: '1.0.0',
      errorHandler: (err) => reported.push(err),
    });
    try {
      const ep = svc.addEndpoint('held', { subject: 'conf.limits', pendingMsgsLimit: 2, pendingBytesLimit: -1 });
      await nc.flush();
      const counts = async (ok, what) => {
        let st;
        await eventually(() => ok((st = ep.iteratorStats())), 5000, what, () => JSON.stringify(st));
      };
      // A Node iterator also holds as many as the limit taken from the
      // library but unread (as a subscription's): two warm-ups fill it,
      // then only the library's queue takes the requests nobody reads.
      for (const w of ['w0', 'w1']) nc.publish('conf.limits', w, { reply: 'conf.limits.reply' });
      await counts((s) => s.delivered === 2 && s.pendingMsgs === 0, 'the iterator to hold the warm-ups');
      for (let i = 0; i < 5; i++) nc.publish('conf.limits', `r${i}`, { reply: 'conf.limits.reply' });
      await counts((s) => s.dropped === 3 && s.pendingMsgs === 2, '3 dropped and 2 queued');
      const stats = ep.stats();
      assert.ok(stats.num_errors >= 1 && stats.last_error.startsWith('slow consumer'), JSON.stringify(stats));
      await eventually(() => reported.length > 0, 5000, 'the error handler told');
      assert.ok(reported[0] instanceof nats.ServiceError, `${reported[0]}`);
      assert.equal(reported[0].endpoint, 'held');
      assert.equal(reported[0].code, 0);
      assert.match(reported[0].message, /slow consumer/i);
      const got = [];
      for (let i = 0; i < 4; i++) got.push((await ep.next()).value.string());
      assert.deepEqual(got, ['w0', 'w1', 'r0', 'r1']);
    } finally {
      await svc.stop();
      await nc.close();
    }
  },
  async consume_budget() {
    await jetstream();
    await js.streams.add({ name: 'CONF_BUDGET', subjects: ['conf.budget'], storage: 'memory' });
    try {
      await Promise.all(Array.from({ length: 100 }, () => js.publishAsync('conf.budget', 'm')));
      await js.consumers.add('CONF_BUDGET', { durable_name: 'c', ack_policy: 'explicit' });
      const msgs = await js.consume('CONF_BUDGET', 'c', { maxMessages: 10 });
      try {
        const first = await msgs[Symbol.asyncIterator]().next();
        await first.value.ackAck();
        let most = 0;
        for (const until = Date.now() + 1500; Date.now() < until; await sleep(50)) {
          most = Math.max(most, (await js.consumers.info('CONF_BUDGET', 'c')).num_ack_pending);
        }
        assert.ok(most >= 5 && most <= 10, `num_ack_pending reached ${most} (maxMessages 10)`);
      } finally {
        msgs.stop();
      }
    } finally {
      await js.streams.delete('CONF_BUDGET');
    }
  },
  async last_by_wildcard() {
    await jetstream();
    for (const direct of [false, true]) {
      const name = `CONF_WILD_${direct}`;
      const prefix = `conf.wild.${direct}`;
      await js.streams.add({ name, subjects: [`${prefix}.>`], storage: 'memory', allow_direct: direct });
      for (const tail of ['a', 'b.c', 'b', 'a.x']) await js.publish(`${prefix}.${tail}`, 'm');
      assert.equal((await js.streams.getMessage(name, { last_by_subj: `${prefix}.*` })).seq, 3, `${name} *`);
      assert.equal((await js.streams.getMessage(name, { last_by_subj: `${prefix}.>` })).seq, 4, `${name} >`);
      await js.streams.delete(name);
    }
  },
  async fetch_refused() {
    await jetstream();
    await js.streams.add({ name: 'CONF_REFUSED', subjects: ['conf.refused'], storage: 'memory' });
    try {
      await js.consumers.add('CONF_REFUSED', { durable_name: 'c', max_batch: 10 });
      const e = await rejection(js.fetch('CONF_REFUSED', 'c', { maxMessages: 20, expires: 500 }));
      assert.ok(e instanceof nats.JetStreamError, `${e}`);
      assert.match(e.message, /Exceeded MaxRequestBatch/);
    } finally {
      await js.streams.delete('CONF_REFUSED');
    }
  },
  async flush_bound() {
    const server = await startServer();
    const nc = await nats.connect({ servers: server.url, flushTimeout: 300, reconnect: false });
    let stopped = false;
    try {
      await nc.flush();
      process.kill(server.pid, 'SIGSTOP');
      stopped = true;
      await eventually(() => allThreadsStopped(server.pid), 3000, 'the server to stop');
      const t0 = Date.now();
      // Seen once in about fifteen runs of the whole suite (never when
      // this file runs alone): the flush resolved at once. The message
      // carries what a diagnosis needs.
      const e = await nc.flush().then(
        () => assert.fail(`the flush resolved after ${Date.now() - t0} ms with the server's threads in states ` +
          `${threadStates(server.pid).join('')}; client stats ${JSON.stringify(nc.stats())}`),
        (err) => err,
      );
      const elapsed = Date.now() - t0;
      assert.ok(e instanceof nats.TimeoutError, `${e}`);
      assert.ok(elapsed >= 250 && elapsed < 2000, `flush failed after ${elapsed} ms`);
    } finally {
      if (stopped) process.kill(server.pid, 'SIGCONT');
      await nc.close();
      await server.stop();
    }
  },
  async callback_error() {
    const { server } = await jetstream();
    const nc = await nats.connect({ servers: server.url });
    try {
      const errors = [];
      nc.on('error', (e) => errors.push(e));
      const got = [];
      nc.subscribe('conf.cb', {
        callback: (err, m) => {
          got.push(m.string());
          if (got.length === 1) throw new Error('boom');
        },
      });
      await nc.flush();
      nc.publish('conf.cb', 'one');
      nc.publish('conf.cb', 'two');
      await eventually(() => got.length === 2, 3000, 'the second message');
      assert.deepEqual(got, ['one', 'two']);
      assert.equal(errors.length, 1);
      assert.ok(errors[0] instanceof nats.CallbackError, `${errors[0]}`);
      assert.equal(errors[0].subject, 'conf.cb');
      assert.equal(errors[0].cause.message, 'boom');
      assert.match(errors[0].message, /conf\.cb.*boom/);
    } finally {
      await nc.close();
    }
  },
};

// The "facade node" lines: where the nats.js-shaped facades (natsio/
// transport-node, /jetstream, /kv) follow nats.js rather than the core.
const facades = {
  async kv_get_missing_null(nc) {
    const { Kvm } = require('../compat/kv.js');
    const kv = await new Kvm(nc).create('FACADE_KV_NULL', { storage: 'memory' });
    try {
      assert.equal(await kv.get('missing'), null);
    } finally {
      await kv.destroy();
    }
  },
  async request_no_responders(nc) {
    const compat = require('../compat/transport-node.js');
    const e = await rejection(nc.request('conf.facade.nobody', 'x', { timeout: 2000 }));
    assert.ok(e instanceof compat.RequestError, `${e}`);
    assert.ok(e.cause instanceof compat.NoRespondersError, `${e.cause}`);
  },
  async api_error_code(nc) {
    const { jetstreamManager, JetStreamApiError } = require('../compat/jetstream.js');
    const jsm = await jetstreamManager(nc);
    const e = await rejection(jsm.streams.info('FACADE_MISSING'));
    assert.ok(e instanceof JetStreamApiError, `${e}`); // nats.js's StreamNotFoundError
    assert.equal(e.code, 10059);
  },
  async queue_empty(nc) {
    const a = nc.subscribe('conf.facade.queue', { queue: '' });
    const b = nc.subscribe('conf.facade.queue', { queue: '' });
    await nc.flush();
    nc.publish('conf.facade.queue', 'both');
    // No queue group: each subscription gets the message.
    for (const sub of [a, b]) {
      const { value } = await sub[Symbol.asyncIterator]().next();
      assert.equal(value.string(), 'both');
    }
  },
  async second_ack_ignored(nc) {
    const { jetstream, jetstreamManager } = require('../compat/jetstream.js');
    const jsm = await jetstreamManager(nc);
    await jsm.streams.add({ name: 'FACADE_ACK', subjects: ['conf.facade.ack'], storage: 'memory' });
    try {
      await jsm.consumers.add('FACADE_ACK', { durable_name: 'c', ack_policy: 'explicit' });
      const js = jetstream(nc);
      await js.publish('conf.facade.ack', 'm');
      const c = await js.consumers.get('FACADE_ACK', 'c');
      const m = await c.next({ expires: 5000 });
      assert.ok(m);
      m.ack();
      m.ack(); // nats.js ignores it; the core refuses it (MESSAGE_ALREADY_ACKED)
      assert.equal(await m.ackAck(), false);
    } finally {
      await jsm.streams.delete('FACADE_ACK');
    }
  },
  async unsubscribe_keeps_received(nc) {
    const sub = nc.subscribe('conf.facade.unsub');
    await nc.flush();
    nc.publish('conf.facade.unsub', 'one');
    nc.publish('conf.facade.unsub', 'two');
    await nc.flush();
    while (sub.getReceived() < 2) await new Promise((resolve) => setImmediate(resolve));
    sub.unsubscribe();
    const got = [];
    for await (const m of sub) got.push(m.string());
    assert.deepEqual(got, ['one', 'two']);
  },
  async watch_include_updates(nc) {
    const { Kvm } = require('../compat/kv.js');
    const kv = await new Kvm(nc).create('FACADE_KV_UPD', { storage: 'memory' });
    try {
      await kv.put('before', 'old');
      const w = await kv.watch({ include: 'updates' });
      await kv.put('after', 'new');
      const { value } = await w[Symbol.asyncIterator]().next();
      assert.equal(value.key, 'after');
      w.stop();
    } finally {
      await kv.destroy();
    }
  },
  async os_watch_no_history(nc) {
    const { Objm } = require('../compat/obj.js');
    const os = await new Objm(nc).create('FACADE_OS_WATCH', { storage: 'memory' });
    try {
      await os.putBlob({ name: 'before' }, new TextEncoder().encode('old'));
      const w = await os.watch();
      await os.putBlob({ name: 'after' }, new TextEncoder().encode('new'));
      const { value } = await w[Symbol.asyncIterator]().next();
      assert.equal(value.name, 'after');
      w.stop();
    } finally {
      await os.destroy();
    }
  },
  async fetch_default_expires(nc) {
    const { jetstream, jetstreamManager } = require('../compat/jetstream.js');
    const jsm = await jetstreamManager(nc);
    await jsm.streams.add({ name: 'FACADE_FE', subjects: ['conf.facade.fe'], storage: 'memory' });
    try {
      await jsm.consumers.add('FACADE_FE', { durable_name: 'c', ack_policy: 'explicit' });
      const js = jetstream(nc);
      await js.publish('conf.facade.fe', 'm');
      const spy = nc.subscribe('$JS.API.CONSUMER.MSG.NEXT.FACADE_FE.c', { max: 1 });
      await nc.flush();
      const c = await js.consumers.get('FACADE_FE', 'c');
      for await (const m of await c.fetch({ max_messages: 1 })) m.ack();
      const { value } = await spy[Symbol.asyncIterator]().next();
      assert.equal(value.json().expires, 30_000_000_000);
    } finally {
      await jsm.streams.delete('FACADE_FE');
    }
  },
  async pull_status(nc) {
    const { jetstream, jetstreamManager } = require('../compat/jetstream.js');
    const jsm = await jetstreamManager(nc);
    await jsm.streams.add({ name: 'FACADE_PS', subjects: ['conf.facade.ps'], storage: 'memory' });
    try {
      await jsm.consumers.add('FACADE_PS', { durable_name: 'c', ack_policy: 'explicit' });
      const c = await jetstream(nc).consumers.get('FACADE_PS', 'c');
      const msgs = await c.fetch({ max_messages: 1, expires: 1000 });
      const told = (async () => {
        const out = [];
        for await (const s of msgs.status()) if (s.type !== 'heartbeat') out.push(s);
        return out;
      })();
      for await (const m of msgs) assert.fail(`unexpected ${m.subject}`);
      assert.deepEqual(await told, [
        { type: 'next', options: { batch: 1, max_bytes: 0, idle_heartbeat: 500e6, expires: 1000e6 } },
        { type: 'discard', messagesLeft: 1, bytesLeft: 0 },
        { type: 'debug', code: 408, description: 'request timeout' },
      ]);
    } finally {
      await jsm.streams.delete('FACADE_PS');
    }
  },
  async data_buffer(nc) {
    const sub = nc.subscribe('conf.facade.data', { max: 1 });
    nc.publish('conf.facade.data', 'text');
    for await (const m of sub) {
      assert.ok(Buffer.isBuffer(m.data));
      assert.equal(`${m.data}`, 'text');
    }
  },
  async publish_schedule(nc) {
    const { jetstream, jetstreamManager } = require('../compat/jetstream.js');
    const jsm = await jetstreamManager(nc);
    await jsm.streams.add({ name: 'FACADE_SCHED', subjects: ['conf.facade.sched.>'], storage: 'memory', allow_msg_schedules: true, allow_msg_ttl: true });
    try {
      const spy = nc.subscribe('conf.facade.sched.s', { max: 1 });
      await nc.flush();
      await jetstream(nc).publish('conf.facade.sched.s', '', {
        schedule: { specification: { every: '1s' }, target: 'conf.facade.sched.t', source: 'conf.facade.sched.d', ttl: '5s' },
      });
      for await (const m of spy) {
        assert.equal(m.headers.get('Nats-Schedule'), '@every 1s');
        assert.equal(m.headers.get('Nats-Schedule-Target'), 'conf.facade.sched.t');
        assert.equal(m.headers.get('Nats-Schedule-Source'), 'conf.facade.sched.d');
        assert.equal(m.headers.get('Nats-Schedule-TTL'), '5s');
      }
    } finally {
      await jsm.streams.delete('FACADE_SCHED');
    }
  },
  async get_server_port(nc) {
    const { hostPort } = require('../compat/transport-node.js')[Symbol.for('natsio.compat.internal')];
    assert.equal(hostPort('nats://localhost'), 'localhost:4222');
    assert.match(nc.getServer(), /^127\.0\.0\.1:\d+$/);
  },
  async ordered_consumer_config(nc) {
    const { jetstream, jetstreamManager } = require('../compat/jetstream.js');
    const jsm = await jetstreamManager(nc);
    await jsm.streams.add({ name: 'FACADE_OC', subjects: ['conf.facade.oc.*'], storage: 'memory' });
    try {
      const js = jetstream(nc);
      const oc = await js.consumers.get('FACADE_OC');
      const created = await oc.info(true);
      assert.equal(created.type, 'io.nats.jetstream.api.v1.consumer_create_response');
      assert.match(created.name, /^[0-9A-Za-z]{22}_1$/);
      // Created by get(), before anything read it.
      const ci = await jsm.consumers.info('FACADE_OC', created.name);
      assert.equal(ci.config.deliver_policy, 'by_start_sequence');
      assert.equal(ci.config.opt_start_seq, 1);
      assert.equal(ci.config.max_deliver, 1);
      assert.equal(ci.config.ack_policy, 'none');
      assert.equal(ci.config.mem_storage, true);
      const listed = await js.consumers.get('FACADE_OC', { filter_subjects: ['conf.facade.oc.a'], name_prefix: 'mine' });
      const { config } = await jsm.consumers.info('FACADE_OC', 'mine_1');
      assert.equal((await listed.info(true)).name, 'mine_1');
      assert.deepEqual(config.filter_subjects, ['conf.facade.oc.a']);
      assert.equal(config.filter_subject, undefined);
    } finally {
      await jsm.streams.delete('FACADE_OC');
    }
  },
  async info_type(nc) {
    const { jetstreamManager } = require('../compat/jetstream.js');
    const jsm = await jetstreamManager(nc);
    const added = await jsm.streams.add({ name: 'FACADE_IT', subjects: ['conf.facade.it'], storage: 'memory' });
    try {
      assert.equal(added.type, 'io.nats.jetstream.api.v1.stream_create_response');
      const raw = (await nc.request('$JS.API.STREAM.INFO.FACADE_IT')).json();
      const si = await jsm.streams.info('FACADE_IT');
      assert.deepEqual(Object.keys(si), Object.keys(raw));
      assert.deepEqual(Object.keys(si.config), Object.keys(raw.config));
      const ci = await jsm.consumers.add('FACADE_IT', { durable_name: 'c' });
      assert.equal(ci.type, 'io.nats.jetstream.api.v1.consumer_create_response');
      const info = await jsm.consumers.info('FACADE_IT', 'c');
      assert.equal(info.type, 'io.nats.jetstream.api.v1.consumer_info_response');
      assert.equal(Object.keys(info)[0], 'type');
    } finally {
      await jsm.streams.delete('FACADE_IT');
    }
  },
};

for (const line of lines) {
  const [lineKind, language] = line.split(/\s+/);
  if (lineKind === 'facade' && language !== 'node') continue; // another language's facade
  test(line, { timeout: 10000 }, async () => {
    const [kind, a, b, ...rest] = line.split(/\s+/);
    switch (kind) {
      case 'error':
        return checkError(Number(a), b, rest.map(Number));
      case 'data':
        assert.ok(data[a], `no Node check for data ${a}`);
        return data[a]();
      case 'default':
        assert.ok(defaults[a], `no Node check for default ${a}`);
        return defaults[a](b);
      case 'behaviour':
        assert.ok(behaviours[a], `no Node check for behaviour ${a}`);
        return behaviours[a]();
      case 'facade': {
        assert.ok(facades[b], `no Node check for facade ${b}`);
        const { server } = await jetstream();
        const { connect } = require('../compat/transport-node.js');
        const nc = await connect({ servers: server.url });
        try {
          return await facades[b](nc);
        } finally {
          await nc.close();
        }
      }
      default:
        assert.fail(`no Node check for "${kind}" lines`);
    }
  });
}

test('every error status of the table has a class, and every class a line', () => {
  const header = fs.readFileSync(path.join(__dirname, '..', '..', '..', 'include', 'natsio.h'), 'utf8');
  const statuses = [...header.matchAll(/NATSIO_ERR_[A-Z0-9_]+ = (\d+)/g)].map((m) => Number(m[1]));
  assert.deepEqual([...tree.keys()].sort(), [...new Set(statuses)].sort(), 'the table lists every status of natsio.h');
  assert.deepEqual([...classByStatus.keys()].sort(), [...tree.keys()].sort(), 'one class per line');
});
