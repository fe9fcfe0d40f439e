'use strict';
const { test, before, after } = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const nats = require('..');
const { startServer, freePort } = require('./server');
const { sleep } = require('./wait');

let server;
let nc;
before(async () => {
  server = await startServer();
  nc = await nats.connect({ servers: server.url });
});
after(async () => {
  await nc?.close();
  await server?.stop();
});

test('every natsio error status has its own NatsError subclass, one to one', () => {
  const header = fs.readFileSync(path.join(__dirname, '..', '..', '..', 'include', 'natsio.h'), 'utf8');
  const codes = [...header.matchAll(/NATSIO_ERR_([A-Z0-9_]+) = (\d+)/g)].map((m) => [m[1], Number(m[2])]);
  assert.ok(codes.length >= 30);
  const classes = new Set();
  for (const [code, status] of codes) {
    assert.equal(nats.Status[code], status, `Status.${code}`);
    const cls = Object.values(nats).find(
      (v) => typeof v === 'function' && v.prototype instanceof nats.NatsError && new v('x').status === status,
    );
    assert.ok(cls, `no error class for ${code}`);
    const e = new cls('detail');
    assert.ok(e instanceof Error && e instanceof nats.NatsError);
    assert.equal(e.code, code);
    classes.add(cls);
  }
  assert.equal(classes.size, codes.length);
  const errorClasses = Object.values(nats).filter((v) => typeof v === 'function' && v.prototype instanceof nats.NatsError);
  assert.equal(errorClasses.length, codes.length, 'no class without a status code');
});

test('every error class declared in index.d.ts exists with the documented code and parent', () => {
  const dts = fs.readFileSync(path.join(__dirname, '..', 'index.d.ts'), 'utf8');
  const declared = [...dts.matchAll(/export class (\w+Error) extends (\w+) \{\}/g)].map((m) => [m[1], m[2]]);
  assert.ok(declared.length >= 60);
  for (const [name, parent] of declared) {
    assert.equal(typeof nats[name], 'function', name);
    assert.equal(new nats[name]('x').name, name);
    // The declared base is the runtime one (CodedError: NatsError directly).
    assert.equal(Object.getPrototypeOf(nats[name]), parent === 'CodedError' ? nats.NatsError : nats[parent], name);
  }
  assert.equal(new nats.TimeoutError('x').code, 'TIMEOUT');
  assert.equal(new nats.MaxPayloadExceededError('x').status, 303);
  assert.equal(new nats.NoServersAvailableError('x').code, 'NO_SERVERS');
  assert.equal(nats.Status.NO_RESPONDERS, 400);
});

test('NO_RESPONDERS when nobody listens', async () => {
  await assert.rejects(nc.request('nobody.home', 'x', { timeout: 2000 }), (e) => {
    assert.ok(e instanceof nats.NoRespondersError);
    assert.equal(e.code, 'NO_RESPONDERS');
    assert.equal(e.status, 400);
    return true;
  });
});

test('TIMEOUT when the responder stays silent', async () => {
  const silent = nc.subscribe('silent.svc', { callback: () => {} });
  await nc.flush();
  await assert.rejects(nc.request('silent.svc', 'x', { timeout: 150 }), nats.TimeoutError);
  silent.unsubscribe();
});

test('BAD_SUBJECT from publish, subscribe and request', async () => {
  for (const subject of ['', 'has space', 'a..b', 'trailing.']) {
    assert.throws(() => nc.publish(subject, 'x'), { code: 'BAD_SUBJECT', status: 103 }, subject);
  }
  assert.throws(() => nc.publish('wild.*', 'x'), nats.BadSubjectError);
  assert.throws(() => nc.subscribe('a..b'), nats.BadSubjectError);
  await assert.rejects(nc.request('bad subject', 'x'), nats.BadSubjectError);
});

test('BAD_QUEUE_NAME for a queue group with whitespace', () => {
  assert.throws(() => nc.subscribe('ok.subject', { queue: 'bad queue' }), nats.BadQueueNameError);
});

test('MAX_PAYLOAD before anything is sent', () => {
  const big = Buffer.alloc(nc.maxPayload + 1);
  assert.throws(() => nc.publish('big', big), (e) => e instanceof nats.MaxPayloadExceededError && e.status === 303);
  assert.doesNotThrow(() => nc.publish('big', Buffer.alloc(nc.maxPayload - 64)));
});

test('BAD_HEADERS for header names or values that break framing', () => {
  assert.throws(() => nc.publish('h', 'x', { headers: { 'Bad:Name': 'v' } }), nats.BadHeadersError);
  assert.throws(() => nc.publish('h', 'x', { headers: { Name: 'line\r\nbreak' } }), { code: 'BAD_HEADERS' });
});

test('NO_REPLY_SUBJECT when responding to a message without reply', async () => {
  const sub = nc.subscribe('noreply');
  nc.publish('noreply', 'x');
  const { value } = await sub.next();
  assert.throws(() => value.respond('y'), nats.NoReplySubjectError);
  sub.unsubscribe();
});

test('NO_SERVERS when nothing listens at the URL', async () => {
  const port = await freePort();
  await assert.rejects(
    nats.connect({ servers: `nats://127.0.0.1:${port}`, timeout: 500 }),
    (e) => e instanceof nats.NoServersAvailableError && e.code === 'NO_SERVERS' && e.status === 202,
  );
});

test('CONFIG for invalid options', async () => {
  await assert.rejects(nats.connect({ servers: server.url, inboxPrefix: 'bad prefix' }), nats.ConfigError);
  await assert.rejects(nats.connect({ servers: server.url, timeout: 0 }), { code: 'CONFIG' });
});

test('INVALID_ARGUMENT for unsubscribeAfter(0) and an unknown policy', () => {
  const sub = nc.subscribe('inval');
  assert.throws(() => sub.unsubscribeAfter(0), nats.InvalidArgumentError);
  sub.unsubscribe();
  assert.throws(() => nc.subscribe('inval', { policy: 'bogus' }), nats.InvalidArgumentError);
});

test('ILLEGAL_STATE when iterating a callback subscription', async () => {
  const sub = nc.subscribe('cbonly', { callback: () => {} });
  await assert.rejects(sub.next(), nats.IllegalStateError);
  sub.unsubscribe();
});

test('SLOW_CONSUMER: the ERROR policy fails the subscription and reports an error event', async () => {
  const errors = [];
  const onError = (e) => errors.push(e);
  nc.on('error', onError);
  const sub = nc.subscribe('slow.err', { pendingMsgsLimit: 5, policy: 'error' });
  for (let i = 0; i < 500; i++) nc.publish('slow.err', String(i));
  await nc.flush();
  let received = 0;
  await assert.rejects(
    (async () => {
      for await (const _m of sub) received++;
    })(),
    (e) => e instanceof nats.SlowConsumerError && e.code === 'SLOW_CONSUMER',
  );
  assert.ok(received < 500, `received ${received}`);
  for (let i = 0; i < 100 && errors.length === 0; i++) await sleep(10);
  nc.off('error', onError);
  assert.ok(errors.some((e) => e instanceof nats.SlowConsumerError && e.subject === 'slow.err'), String(errors));
});
