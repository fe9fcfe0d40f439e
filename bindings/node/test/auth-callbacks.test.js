'use strict';
// Authentication callbacks: userJWT and signatureCB answer the library's
// (re)connects from JS, against a nats-server in operator mode (the
// fixtures of tests/fixtures/auth). The nonce is signed here with
// node:crypto from the fixture's NKey seed (./nkey-sign).
const { test, before, after } = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const nats = require('..');
const { startConfiguredServer, fixture } = require('./server');
const { sleep, roundTrip } = require('./wait');
const { nkeyPrivateKey, sign } = require('./nkey-sign');

let server;
before(async () => {
  server = await startConfiguredServer(fs.readFileSync(fixture('auth/operator.conf'), 'utf8'));
});
after(() => server?.stop());

const jwt = fs.readFileSync(fixture('auth/user.jwt'), 'utf8').trim();

const userKey = nkeyPrivateKey(fs.readFileSync(fixture('auth/user.nk'), 'utf8'));
const otherKey = nkeyPrivateKey(fs.readFileSync(fixture('auth/nkey-other.nk'), 'utf8'));

test('userJWT and signatureCB answer from JS, at the connect and again at a reconnect', async () => {
  const calls = { jwt: 0, sign: 0, nonces: [] };
  const nc = await nats.connect({
    servers: server.url,
    reconnectTimeWait: 20,
    reconnectJitter: 5,
    maxReconnectAttempts: -1,
    userJWT: () => {
      calls.jwt++;
      return jwt;
    },
    signatureCB: (nonce) => {
      calls.sign++;
      assert.ok(nonce instanceof Uint8Array);
      calls.nonces.push(Buffer.from(nonce).toString('hex'));
      return sign(userKey, nonce);
    },
  });
  try {
    await roundTrip(nc, 'auth.cb.first');
    assert.equal(calls.jwt, 1);
    assert.equal(calls.sign, 1);
    assert.ok(calls.nonces[0].length > 0);
    // A reconnect asks again (a new nonce), on a library thread, while
    // the event loop runs.
    const reconnected = new Promise((resolve) => nc.once('reconnect', resolve));
    await server.restart();
    await reconnected;
    await roundTrip(nc, 'auth.cb.again');
    assert.ok(calls.jwt >= 2 && calls.sign >= 2, JSON.stringify(calls));
    assert.notEqual(calls.nonces[0], calls.nonces.at(-1));
  } finally {
    await nc.close();
  }
});

test('answers may be promises; a JWT may be a string', async () => {
  const nc = await nats.connect({
    servers: server.url,
    reconnect: false,
    userJWT: jwt,
    signatureCB: async (nonce) => {
      await sleep(5);
      return new Uint8Array(sign(userKey, nonce));
    },
  });
  try {
    await roundTrip(nc, 'auth.cb.async');
  } finally {
    await nc.close();
  }
});

test('a signature by another key is rejected with AuthorizationViolationError', async () => {
  await assert.rejects(
    nats.connect({
      servers: server.url,
      reconnect: false,
      userJWT: () => jwt,
      signatureCB: (nonce) => sign(otherKey, nonce),
    }),
    nats.AuthorizationViolationError,
  );
});

test('a callback that throws, answers wrongly or never answers fails the attempt, without blocking the loop', async () => {
  const logged = [];
  const logger = (level, line) => logged.push([level, line]);
  const base = { servers: server.url, reconnect: false, logger };
  // A refusal of the application's is a configuration error naming the
  // callback, as in C (the callback's INVALID_ARGUMENT, 102).
  const refusedBy = (what) => (e) => e instanceof nats.ConfigError && e.code === 'CONFIG' && what.test(e.message);
  const signatureRefused = refusedBy(/the signature callback failed with status 102$/);
  await assert.rejects(
    nats.connect({ ...base, userJWT: () => jwt, signatureCB: () => { throw new Error('no key here'); } }),
    signatureRefused,
  );
  assert.ok(
    logged.some(([level, line]) => level === 'error' && /signatureCB.*no key here/.test(line)),
    JSON.stringify(logged),
  );
  await assert.rejects(nats.connect({ ...base, userJWT: () => jwt, signatureCB: () => new Uint8Array(3) }), signatureRefused);
  await assert.rejects(
    nats.connect({ ...base, userJWT: () => Promise.reject(new Error('no jwt')), signatureCB: (n) => sign(userKey, n) }),
    refusedBy(/the JWT callback returned NULL$/),
  );
  // Never answered: bounded by the connect timeout; timers keep running.
  // The pending promise stays reachable (its resolve is kept): one the GC
  // can collect can never answer, and the addon fails its request at once
  // when the request is collected with it.
  let ticks = 0;
  const ticker = setInterval(() => ticks++, 10);
  const unanswered = [];
  const t0 = Date.now();
  try {
    await assert.rejects(
      nats.connect({
        ...base,
        timeout: 300,
        userJWT: () => jwt,
        signatureCB: () => new Promise((resolve) => unanswered.push(resolve)),
      }),
      // The connect timeout or the wait for the answer (the same 300 ms),
      // whichever ends first: a TimeoutError, or the callback failing with
      // TIMEOUT (200).
      (e) => e instanceof nats.TimeoutError || refusedBy(/the signature callback failed with status 200$/)(e),
    );
  } finally {
    clearInterval(ticker);
  }
  assert.equal(unanswered.length, 1);
  unanswered[0](new Uint8Array(64)); // too late: ignored
  const elapsed = Date.now() - t0;
  assert.ok(elapsed < 3000, `failed after ${elapsed} ms`);
  assert.ok(ticks >= 5, `the event loop ran ${ticks} ticks`);
});

test('userJWT and signatureCB go together, and with no other auth kind', async () => {
  await assert.rejects(nats.connect({ servers: server.url, signatureCB: () => new Uint8Array(64) }), TypeError);
  await assert.rejects(nats.connect({ servers: server.url, userJWT: jwt }), TypeError);
  await assert.rejects(
    nats.connect({ servers: server.url, userJWT: jwt, signatureCB: () => {}, credsFile: fixture('auth/user.creds') }),
    nats.ConfigError,
  );
});
