'use strict';
const { test, after } = require('node:test');
const assert = require('node:assert/strict');
const nats = require('..');
const { startServer, startConfiguredServer, freePort } = require('./server');
const { eventually } = require('./wait');

const servers = [];
after(async () => {
  await Promise.all(servers.map((s) => s.stop()));
});

async function server(args) {
  const s = await startServer(args);
  servers.push(s);
  return s;
}

test('name reaches the server (monitoring connz)', async () => {
  const monitorPort = await freePort();
  const s = await server(['-m', String(monitorPort)]);
  const nc = await nats.connect({ servers: s.url, name: 'node-options-test' });
  const connz = await (await fetch(`http://127.0.0.1:${monitorPort}/connz`)).json();
  const mine = connz.connections.find((c) => c.name === 'node-options-test');
  assert.ok(mine, JSON.stringify(connz.connections.map((c) => c.name)));
  // Each binding names itself: lang and version as CONNECT said them.
  assert.equal(mine.lang, 'natsio-node');
  assert.equal(mine.version, require('../package.json').version);
  await nc.close();
});

test('logLevel and logger: lifecycle lines and traced frames, in order', async () => {
  const s = await server([]);
  const lines = [];
  const nc = await nats.connect({ servers: s.url, logLevel: 'trace', logger: (level, message) => lines.push([level, message]) });
  const sub = nc.subscribe('log.x');
  nc.publish('log.x', 'hi');
  for await (const m of sub) {
    assert.equal(m.string(), 'hi');
    break;
  }
  await nc.flush();
  const has = (level, part) => lines.some(([l, m]) => l === level && m.includes(part));
  const dump = () => lines.map((l) => l.join(' ')).join('\n');
  // Lifecycle lines are written on the events thread (so a logger may
  // publish), frames by the connection: the connected line may come later.
  await eventually(() => has('info', 'connected to nats://'), 5000, 'the connected line', dump);
  const text = dump();
  assert.ok(has('trace', '>>> CONNECT {'), text);
  assert.ok(has('trace', '"lang":"natsio-node"'), text);
  assert.ok(has('trace', '>>> PUB log.x 2 "hi"'), text);
  assert.ok(has('trace', '<<< MSG log.x'), text);
  const sent = lines.findIndex(([, m]) => m.startsWith('>>> PUB log.x'));
  const received = lines.findIndex(([, m]) => m.startsWith('<<< MSG log.x'));
  assert.ok(sent >= 0 && sent < received, text);
  await nc.close();

  // debug: true is trace; a bad level is a TypeError before connecting.
  const traced = [];
  const nc2 = await nats.connect({ servers: s.url, debug: true, logger: (level, m) => traced.push(level) });
  await nc2.flush();
  await nc2.close();
  assert.ok(traced.includes('trace'), traced.join(','));
  await assert.rejects(nats.connect({ servers: s.url, logLevel: 'loud' }), TypeError);
});

test('token authentication: accepted with the token, AUTHORIZATION without', async () => {
  const s = await server(['--auth', 's3cret']);
  const nc = await nats.connect({ servers: s.url, token: 's3cret' });
  assert.equal(nc.status, 'CONNECTED');
  await nc.close();
  await assert.rejects(
    nats.connect({ servers: s.url, token: 'wrong', timeout: 2000 }),
    (e) => e instanceof nats.AuthorizationViolationError && e.code === 'AUTHORIZATION' && e.status === 306,
  );
});

test('user and password authentication', async () => {
  const s = await server(['--user', 'alice', '--pass', 'pw']);
  const nc = await nats.connect({ servers: s.url, user: 'alice', pass: 'pw' });
  assert.equal(nc.status, 'CONNECTED');
  await nc.close();
  await assert.rejects(nats.connect({ servers: s.url, user: 'alice', pass: 'nope' }), { code: 'AUTHORIZATION' });
  await assert.rejects(nats.connect({ servers: s.url, user: 'alice', pass: 'pw', token: 't' }), nats.ConfigError);
});

test('servers are tried in order: an unreachable first URL falls through to the next', async () => {
  const s = await server([]);
  const dead = await freePort();
  const nc = await nats.connect({ servers: [`nats://127.0.0.1:${dead}`, s.url], timeout: 1000 });
  assert.match(nc.connectedUrl, new RegExp(`:${s.port}$`));
  await nc.close();
});

test('requestTimeout is the default of request()', async () => {
  const s = await server([]);
  const nc = await nats.connect({ servers: s.url, requestTimeout: 100 });
  nc.subscribe('silent', { callback: () => {} });
  await nc.flush();
  const started = Date.now();
  await assert.rejects(nc.request('silent', 'x'), nats.TimeoutError);
  assert.ok(Date.now() - started < 4000, 'used the 100 ms option, not the 5 s default');
  await nc.close();
});

test('verbose and pedantic are sent; the +OK acks verbose brings are read past', async () => {
  const s = await server([]);
  const lines = [];
  const nc = await nats.connect({ servers: s.url, verbose: true, pedantic: true, logLevel: 'trace', logger: (level, m) => lines.push(m) });
  const sub = nc.subscribe('verbose.x');
  for (let i = 0; i < 3; i++) nc.publish('verbose.x', `m${i}`);
  let n = 0;
  for await (const m of sub) {
    assert.equal(m.string(), `m${n}`);
    if (++n === 3) break;
  }
  await nc.flush();
  assert.equal(nc.isClosed, false);
  const text = lines.join('\n');
  assert.ok(text.includes('"verbose":true'), text);
  assert.ok(text.includes('"pedantic":true'), text);
  assert.ok(text.includes('<<< +OK'), text);
  assert.ok(!text.includes('<<< -ERR'), text);
  await nc.close();
});

test('inboxPrefix reads back, also after close', async () => {
  const s = await server([]);
  const plain = await nats.connect({ servers: s.url });
  assert.equal(plain.inboxPrefix, '_INBOX');
  await plain.close();
  const nc = await nats.connect({ servers: s.url, inboxPrefix: '_NODE_INBOX' });
  assert.equal(nc.inboxPrefix, '_NODE_INBOX');
  assert.ok(nc.newInbox().startsWith('_NODE_INBOX.'));
  await nc.close();
  assert.equal(nc.inboxPrefix, '_NODE_INBOX');
});

test('permissionErrOnSubscribe: a refused subscription ends with PermissionsViolationError', async () => {
  const s = await startConfiguredServer(
    'authorization { users = [ { user: bob, password: pw, permissions: { subscribe: { deny: ["hidden.>"] } } } ] }\n',
  );
  servers.push(s);
  const nc = await nats.connect({ servers: s.url, user: 'bob', pass: 'pw', permissionErrOnSubscribe: true });
  nc.on('error', () => {});
  const allowed = nc.subscribe('open.x');
  const denied = nc.subscribe('hidden.x');
  await assert.rejects(
    (async () => {
      for await (const m of denied) assert.fail(`got ${m.subject}`);
    })(),
    nats.PermissionsViolationError,
  );
  nc.publish('open.x', 'hi');
  for await (const m of allowed) {
    assert.equal(m.string(), 'hi');
    break;
  }
  await nc.close();
});
