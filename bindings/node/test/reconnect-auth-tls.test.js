'use strict';
// Reconnect, auth and TLS: restart mid-stream with lifecycle events in
// order, the reconnect buffer, forceReconnect/rtt/servers, and secured
// servers (TLS with the fixture CA, creds in operator mode, NKeys). Each test
// runs its own nats-server.
const { test, after } = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const nats = require('..');
const { startServer, startConfiguredServer, fixture, freePort } = require('./server');
const { eventually } = require('./wait');

const servers = [];
after(async () => {
  await Promise.all(servers.map((s) => s.stop()));
});
async function track(serverPromise) {
  const s = await serverPromise;
  servers.push(s);
  return s;
}

const fastReconnect = {
  reconnectTimeWait: 20,
  reconnectTimeWaitMax: 100,
  reconnectJitter: 5,
  reconnectJitterTls: 5,
  maxReconnectAttempts: -1,
  noRandomize: true,
};

/** Records every lifecycle event of nc, in order. */
function recordEvents(nc) {
  const events = [];
  for (const name of ['connect', 'disconnect', 'reconnect', 'ldm', 'servers', 'close']) {
    nc.on(name, (arg) => events.push({ name, arg }));
  }
  return events;
}

/** The next n messages of an iterator subscription, as strings (next(),
 * not for-await: leaving a for-await loop would end the subscription). */
async function take(sub, n) {
  const got = [];
  while (got.length < n) {
    const { value, done } = await sub.next();
    if (done) break;
    got.push(value.string());
  }
  return got;
}

/** Connects and closes the connection when the test ends, pass or fail. */
async function connectFor(t, opts) {
  const nc = await nats.connect(opts);
  t.after(() => nc.close());
  return nc;
}

test('restart mid-stream: events in order, buffered publishes arrive, subscription resumes', async (t) => {
  const s = await track(startServer());
  const nc = await connectFor(t, { servers: s.url, ...fastReconnect });
  const events = recordEvents(nc);
  const got = [];
  nc.subscribe('survive.>', { callback: (err, m) => !err && got.push(m.string()) });
  nc.publish('survive.before', 'b');
  await nc.flush();
  await eventually(() => got.length === 1, 5000, 'first message');

  await s.stop();
  await eventually(() => nc.status === 'RECONNECTING', 5000, 'RECONNECTING');
  const during = [];
  for (let i = 0; i < 50; i++) {
    during.push(`d${i}`);
    nc.publish('survive.during', `d${i}`);
  }
  await s.restart();
  await eventually(() => nc.status === 'CONNECTED', 8000, 'CONNECTED');
  await nc.flush();
  nc.publish('survive.after', 'a');
  await nc.flush();
  await eventually(() => got.length === 52, 5000, 'all messages');
  assert.deepEqual(got, ['b', ...during, 'a']);
  assert.equal(nc.stats().reconnects, 1);

  await nc.close();
  assert.deepEqual(
    events.map((e) => e.name),
    ['connect', 'disconnect', 'reconnect', 'close'],
  );
  assert.match(events[0].arg, new RegExp(`:${s.port}$`));
  assert.ok(events[1].arg instanceof nats.NatsError, `disconnect carries its cause: ${events[1].arg}`);
  assert.match(events[2].arg, new RegExp(`:${s.port}$`));
});

test('reconnect: false closes on a lost connection; reconnectBufSize -1 fails publishes', async (t) => {
  const s = await track(startServer());
  const noBuffer = await connectFor(t, { servers: s.url, ...fastReconnect, reconnectBufSize: -1 });
  const once = await connectFor(t, { servers: s.url, reconnect: false });
  const closed = new Promise((r) => once.on('close', r));
  await s.stop();
  await closed;
  assert.equal(once.status, 'CLOSED');
  await eventually(() => noBuffer.status === 'RECONNECTING', 5000, 'RECONNECTING');
  assert.throws(() => noBuffer.publish('x', '1'), nats.ReconnectBufExceededError);
  await noBuffer.close();
});

test('forceReconnect, rtt and servers', async (t) => {
  const s = await track(startServer());
  const nc = await connectFor(t, { servers: s.url, ...fastReconnect });
  const events = recordEvents(nc);
  const rtt = await nc.rtt();
  assert.equal(typeof rtt, 'number');
  // A loopback round trip through the server takes microseconds, never 1
  // (the floor the addon reports for an unmeasured one).
  assert.ok(rtt > 1 && rtt < 5_000_000, `rtt ${rtt} µs`);
  assert.ok(
    nc.servers.some((u) => u.endsWith(`:${s.port}`)),
    `servers ${JSON.stringify(nc.servers)}`,
  );
  const reconnected = new Promise((r) => nc.once('reconnect', r));
  nc.forceReconnect();
  await reconnected;
  assert.equal(nc.stats().reconnects, 1);
  assert.deepEqual(events.map((e) => e.name).filter((n) => n !== 'servers'), ['connect', 'disconnect', 'reconnect']);
  await nc.close();
  assert.throws(() => nc.forceReconnect(), nats.ConnectionClosedError);
});

test('setServerPool: the pool listed and replaced, the connection kept; the next reconnect counts the dead server and names it in one reconnectFailed per attempt; bad lists and a closed connection throw', async (t) => {
  const [a, b] = [await track(startServer()), await track(startServer())];
  const deadPort = await freePort();
  const dead = `nats://127.0.0.1:${deadPort}`;
  const nc = await connectFor(t, { servers: a.url, ...fastReconnect });
  const events = recordEvents(nc);
  nc.on('reconnectFailed', (arg) => events.push({ name: 'reconnectFailed', arg }));
  assert.deepEqual(nc.serverPool(), [{ url: a.url, reconnects: 0, didConnect: true, discovered: false }]);

  nc.setServerPool([dead, b.url]);
  // Still on A; the pool is the new list, in order, nothing tried yet.
  assert.equal(nc.connectedUrl, a.url);
  await nc.flush();
  assert.deepEqual(nc.serverPool(), [
    { url: dead, reconnects: 0, didConnect: false, discovered: false },
    { url: b.url, reconnects: 0, didConnect: false, discovered: false },
  ]);

  // The next reconnect: the dead server first, then B.
  nc.forceReconnect();
  await eventually(() => events.some((e) => e.name === 'reconnect'), 10000, 'reconnected', () => JSON.stringify(events));
  assert.equal(nc.connectedUrl, b.url);
  const pool = nc.serverPool();
  const d = pool.find((s) => s.url === dead);
  assert.equal(d?.didConnect, false, JSON.stringify(pool));
  assert.ok(d.reconnects >= 1, JSON.stringify(pool));
  assert.deepEqual(pool.find((s) => s.url === b.url), { url: b.url, reconnects: 0, didConnect: true, discovered: false });
  // One event per failed attempt, between the disconnect and the
  // reconnect, each the attempt's error naming the dead server.
  const names = events.map((e) => e.name).filter((n) => n !== 'servers');
  assert.deepEqual(names, ['connect', 'disconnect', ...Array(d.reconnects).fill('reconnectFailed'), 'reconnect']);
  for (const e of events.filter((e) => e.name === 'reconnectFailed')) {
    assert.ok(e.arg instanceof nats.NatsError, `${e.arg}`);
    assert.ok(e.arg.message.includes(`reconnect to ${dead} failed: `), e.arg.message);
  }

  // Kept servers keep their bookkeeping, in whatever order; A, dropped
  // by the first replacement, comes back new.
  nc.setServerPool([b.url, dead, a.url]);
  assert.deepEqual(nc.serverPool(), [
    { url: b.url, reconnects: 0, didConnect: true, discovered: false },
    { url: dead, reconnects: d.reconnects, didConnect: false, discovered: false },
    { url: a.url, reconnects: 0, didConnect: false, discovered: false },
  ]);

  // Bad lists throw and change nothing.
  const before = nc.serverPool();
  assert.throws(() => nc.setServerPool([]), nats.ConfigError);
  assert.throws(() => nc.setServerPool([a.url, 'nats://127.0.0.1:notaport']), nats.ConfigError);
  assert.throws(() => nc.setServerPool(a.url), TypeError);
  assert.throws(() => nc.setServerPool([a.url, 7]), TypeError);
  assert.deepEqual(nc.serverPool(), before);

  // Closed: the pool is still readable, no longer replaceable.
  await nc.close();
  assert.throws(() => nc.setServerPool([a.url]), nats.ConnectionClosedError);
  assert.deepEqual(nc.serverPool(), before);
});

test('waitOnFirstConnect resolves while the server is down and connects when it appears', async (t) => {
  const port = await freePort();
  const nc = await connectFor(t, { servers: `nats://127.0.0.1:${port}`, ...fastReconnect, waitOnFirstConnect: true });
  assert.equal(nc.status, 'RECONNECTING');
  const connected = new Promise((r) => nc.once('connect', r));
  await track(startServer([], port));
  await connected;
  assert.equal(nc.status, 'CONNECTED');
  await nc.close();
});

test('reconnectDelayHandler: asked before each attempt with the turn; a throw or a non-number fails that attempt and is reported, the client goes on; a non-function is a TypeError', async (t) => {
  const s = await track(startServer());
  const args = [];
  const handler = (attempts) => {
    args.push(attempts);
    if (attempts === 1) throw new Error('no delay today');
    if (attempts === 2) return 'soon';
    return 20;
  };
  const nc = await connectFor(t, { servers: s.url, ...fastReconnect, reconnectDelayHandler: handler });
  const failed = [];
  const errors = [];
  let reconnected = false;
  nc.on('reconnectFailed', (err) => failed.push(err));
  nc.on('error', (err) => errors.push(err));
  nc.on('reconnect', () => (reconnected = true));
  await s.stop();
  await eventually(() => args.length >= 3, 10000, 'three calls of the handler');
  await s.restart();
  await eventually(() => reconnected, 10000, 'reconnected');
  assert.deepEqual(args, args.map((_, i) => i + 1));
  assert.equal(failed.length, args.length - 1);
  for (const err of failed.slice(0, 2)) {
    assert.ok(err instanceof nats.ConfigError && err.message.includes('reconnect delay callback failed'), `${err}`);
  }
  assert.deepEqual(
    errors.map((e) => [e.event, e.cause?.message ?? e.message]),
    [
      ['reconnectDelayHandler', 'no delay today'],
      ['reconnectDelayHandler', 'reconnectDelayHandler returned string, not a number of milliseconds'],
    ],
  );
  await assert.rejects(nats.connect({ servers: s.url, reconnectDelayHandler: 20 }), TypeError);
});

test('reconnectDelayHandler: while the event loop cannot answer, reconnects go on after the connect timeout with reconnectTimeWait', async (t) => {
  const s = await track(startServer());
  let calls = 0;
  const nc = await connectFor(t, {
    servers: s.url,
    ...fastReconnect,
    timeout: 300,
    reconnectDelayHandler: () => {
      calls++;
      return 60000; // heeded, this would hold the next attempt for a minute
    },
  });
  s.stop(); // SIGKILL now; the loop stays blocked below
  const until = Date.now() + 8000;
  while (nc.serverPool()[0].reconnects < 2 && Date.now() < until) {
    // busy: the library thread's question waits in the queue
  }
  const attempts = nc.serverPool()[0].reconnects;
  assert.equal(calls, 0);
  assert.ok(attempts >= 2, `${attempts} attempts while the loop was blocked`);
  await eventually(() => calls >= 1, 5000, 'the late questions reach the handler');
});

function tlsConfig(verify) {
  return `tls {
  cert_file: "${fixture('tls/server-cert.pem')}"
  key_file: "${fixture('tls/server-key.pem')}"
  ca_file: "${fixture('tls/ca.pem')}"
  verify: ${verify}
  timeout: 2
}
`;
}

async function roundTrip(nc, subject) {
  const sub = nc.subscribe(subject);
  nc.publish(subject, 'secret');
  assert.deepEqual(await take(sub, 1), ['secret']);
}

test('TLS with the fixture CA; another CA is rejected', async (t) => {
  const s = await track(startConfiguredServer(tlsConfig(false)));
  const url = `tls://127.0.0.1:${s.port}`;
  const nc = await connectFor(t, { servers: url, reconnect: false, tls: { caFile: fixture('tls/ca.pem') } });
  assert.equal(nc.info.tls_required, true);
  await roundTrip(nc, 'secured.tls');
  await nc.close();
  await assert.rejects(
    nats.connect({ servers: url, reconnect: false, tls: { caFile: fixture('tls/other-ca.pem') } }),
    nats.IoError,
  );
});

test('mutual TLS with a hostname override', async (t) => {
  const s = await track(startConfiguredServer(tlsConfig(true)));
  const url = `tls://127.0.0.1:${s.port}`;
  const tls = {
    caFile: fixture('tls/ca.pem'),
    certFile: fixture('tls/client-cert.pem'),
    keyFile: fixture('tls/client-key.pem'),
    hostname: 'localhost',
  };
  const nc = await connectFor(t, { servers: url, reconnect: false, tls });
  await roundTrip(nc, 'secured.mtls');
  await nc.close();
  await assert.rejects(nats.connect({ servers: url, reconnect: false, tls: { caFile: fixture('tls/ca.pem') } }));
  await assert.rejects(
    nats.connect({ servers: url, tls: { caFile: fixture('tls/ca.pem'), certFile: fixture('tls/client-cert.pem') } }),
    nats.ConfigError,
  );
});

test('mutual TLS from PEM text in memory (tls.ca, cert, key)', async (t) => {
  const s = await track(startConfiguredServer(tlsConfig(true)));
  const url = `tls://127.0.0.1:${s.port}`;
  const read = (name) => fs.readFileSync(fixture(`tls/${name}`), 'utf8');
  const tls = { ca: read('ca.pem'), cert: read('client-cert.pem'), key: Buffer.from(read('client-key.pem')) };
  const nc = await connectFor(t, { servers: url, reconnect: false, tls });
  await roundTrip(nc, 'secured.mtls.memory');
  await nc.close();
  // Without the certificate the server refuses; another CA refuses the
  // server; a key that is no PEM is a ConfigError.
  await assert.rejects(nats.connect({ servers: url, reconnect: false, tls: { ca: tls.ca } }), nats.IoError);
  await assert.rejects(nats.connect({ servers: url, reconnect: false, tls: { ca: read('other-ca.pem') } }), nats.IoError);
  await assert.rejects(
    nats.connect({ servers: url, reconnect: false, tls: { ...tls, key: 'not a key' } }),
    nats.ConfigError,
  );
});

test('credsFile in operator mode; a stranger is rejected', async (t) => {
  const s = await track(startConfiguredServer(fs.readFileSync(fixture('auth/operator.conf'), 'utf8')));
  const nc = await connectFor(t, { servers: s.url, reconnect: false, credsFile: fixture('auth/user.creds') });
  await roundTrip(nc, 'secured.creds');
  await nc.close();
  await assert.rejects(
    nats.connect({ servers: s.url, reconnect: false, credsFile: fixture('auth/stranger.creds') }),
    nats.AuthorizationViolationError,
  );
  await assert.rejects(nats.connect({ servers: s.url, credsFile: fixture('auth/missing.creds') }), nats.ConfigError);
});

test('user/pass and token as functions: called again at a reconnect, the new value is used', async (t) => {
  for (const { before, after, opts } of [
    {
      before: 'authorization { user: alice, password: "s3cret" }',
      after: 'authorization { user: alice, password: "changed" }',
      opts: (calls) => ({ user: 'alice', pass: () => (calls.n++ === 0 ? 's3cret' : 'changed') }),
    },
    {
      before: 'authorization { token: "t1" }',
      after: 'authorization { token: "t2" }',
      opts: (calls) => ({ token: async () => (calls.n++ === 0 ? 't1' : 't2') }),
    },
  ]) {
    const s = await track(startConfiguredServer(before));
    const calls = { n: 0 };
    const nc = await connectFor(t, { servers: s.url, reconnectTimeWait: 20, maxReconnectAttempts: -1, ...opts(calls) });
    assert.equal(calls.n, 1);
    await roundTrip(nc, 'secured.rotate.before');
    fs.writeFileSync(s.configFile, after);
    await s.restart();
    await eventually(() => nc.stats().reconnects === 1 && nc.status === 'CONNECTED', 10000, 'a reconnect with the new secret');
    assert.ok(calls.n >= 2);
    await roundTrip(nc, 'secured.rotate.after');
    await nc.close();
  }
});

test('nkeySeed and nkeyFile; two auth kinds are a ConfigError', async (t) => {
  const pub = fs.readFileSync(fixture('auth/nkey-user.pub'), 'utf8').trim();
  const seed = fs.readFileSync(fixture('auth/nkey-user.nk'), 'utf8').trim();
  const s = await track(startConfiguredServer(`authorization { users = [ { nkey: ${pub} } ] }`));
  for (const auth of [{ nkeySeed: seed }, { nkeyFile: fixture('auth/nkey-user.nk') }]) {
    const nc = await connectFor(t, { servers: s.url, reconnect: false, ...auth });
    await roundTrip(nc, 'secured.nkey');
    await nc.close();
  }
  await assert.rejects(
    nats.connect({ servers: s.url, reconnect: false, nkeyFile: fixture('auth/nkey-other.nk') }),
    nats.AuthorizationViolationError,
  );
  await assert.rejects(nats.connect({ servers: s.url, token: 't', nkeySeed: seed }), nats.ConfigError);
});
