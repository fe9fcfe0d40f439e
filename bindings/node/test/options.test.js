'use strict';
const { test, after } = require('node:test');
const assert = require('node:assert/strict');
const nats = require('..');
const { startServer, freePort } = require('./server');

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
  assert.ok(
    connz.connections.some((c) => c.name === 'node-options-test'),
    JSON.stringify(connz.connections.map((c) => c.name)),
  );
  await nc.close();
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
