'use strict';
// The general authenticator (ConnectOptions.authenticator, nats.js's
// Authenticator shape): asked on the JS thread for every connect and
// reconnect with that server's nonce, against an NKey server (the nonce
// signed here with node:crypto from the fixture's seed) and a
// user/password server. Lists merge as nats.js merges them; throws,
// rejections and wrong answers fail the attempt.
const { test, before, after } = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const nats = require('..');
const { startConfiguredServer, fixture } = require('./server');
const { sleep, roundTrip } = require('./wait');
const { nkeyPrivateKey, sign } = require('./nkey-sign');

const pub = fs.readFileSync(fixture('auth/nkey-user.pub'), 'utf8').trim();
const userKey = nkeyPrivateKey(fs.readFileSync(fixture('auth/nkey-user.nk'), 'utf8'));
const otherKey = nkeyPrivateKey(fs.readFileSync(fixture('auth/nkey-other.nk'), 'utf8'));
const signed = (key, nonce) => ({ nkey: pub, sig: sign(key, nonce).toString('base64url') });

// The password has what would break a CONNECT written by hand: quotes,
// braces, CR LF.
const PASSWORD = 'p"w},"user":"root"}\r\nPUB x 1\r\n';
let nkeys;
let users;
before(async () => {
  nkeys = await startConfiguredServer(`authorization { users = [ { nkey: ${pub} } ] }\n`);
  users = await startConfiguredServer('authorization { user: alice, password: "p\\"w},\\"user\\":\\"root\\"}\\r\\nPUB x 1\\r\\n" }\n');
});
after(async () => {
  await nkeys?.stop();
  await users?.stop();
});

test('authenticator signs the nonce at the connect and again, a new one, at a reconnect', async () => {
  const nonces = [];
  const nc = await nats.connect({
    servers: nkeys.url,
    reconnectTimeWait: 20,
    reconnectJitter: 5,
    maxReconnectAttempts: -1,
    authenticator: (nonce) => {
      nonces.push(nonce);
      return signed(userKey, nonce);
    },
  });
  try {
    await roundTrip(nc, 'auth.fields.first');
    assert.equal(nonces.length, 1);
    assert.equal(typeof nonces[0], 'string');
    assert.ok(nonces[0].length > 0);
    const reconnected = new Promise((resolve) => nc.once('reconnect', resolve));
    await nkeys.restart();
    await reconnected;
    await roundTrip(nc, 'auth.fields.again');
    assert.ok(nonces.length >= 2, JSON.stringify(nonces));
    assert.notEqual(nonces.at(-1), nonces[0]);
  } finally {
    await nc.close();
  }
});

test('a promise, and a list merged later-wins; no nonce from a user/password server; fields go as JSON', async () => {
  const nonces = [];
  const nc = await nats.connect({
    servers: users.url,
    reconnect: false,
    authenticator: [
      (nonce) => {
        nonces.push(nonce);
        return { user: 'alice', pass: 'overridden' };
      },
      async () => {
        await sleep(5);
        return { pass: PASSWORD };
      },
      () => undefined,
    ],
  });
  try {
    await roundTrip(nc, 'auth.fields.list');
    assert.deepEqual(nonces, [undefined]);
  } finally {
    await nc.close();
  }
});

test('a wrong signature is an AuthorizationViolationError', async () => {
  await assert.rejects(
    nats.connect({ servers: nkeys.url, reconnect: false, authenticator: (nonce) => signed(otherKey, nonce) }),
    nats.AuthorizationViolationError,
  );
});

test('a throw, a rejection or a wrong answer fails the attempt; other auth kinds conflict', async () => {
  const logged = [];
  const base = { servers: users.url, reconnect: false, logger: (level, line) => logged.push([level, line]) };
  const refused = (e) => e instanceof nats.ConfigError && /the authenticator callback failed with status/.test(e.message);
  await assert.rejects(nats.connect({ ...base, authenticator: () => { throw new Error('vault sealed'); } }), refused);
  assert.ok(logged.some(([level, line]) => level === 'error' && /authenticator.*vault sealed/.test(line)), JSON.stringify(logged));
  await assert.rejects(nats.connect({ ...base, authenticator: () => Promise.reject(new Error('later')) }), refused);
  await assert.rejects(nats.connect({ ...base, authenticator: () => ({ user: 'alice', pass: 42 }) }), refused);
  await assert.rejects(nats.connect({ ...base, authenticator: () => 'alice' }), refused);
  await assert.rejects(nats.connect({ ...base, authenticator: () => ({ user: 'al\0ice' }) }), refused);
  await assert.rejects(nats.connect({ ...base, authenticator: 'alice' }), TypeError);
  await assert.rejects(nats.connect({ ...base, authenticator: [] }), TypeError);
  await assert.rejects(nats.connect({ ...base, authenticator: () => ({}), userJWT: 'x', signatureCB: () => {} }), nats.ConfigError);
  await assert.rejects(nats.connect({ ...base, authenticator: () => ({}), token: 't' }), nats.ConfigError);
});

test("nkeySign signs as @nats-io/nkeys does: the seed's public key and a signature its verify accepts; a bad seed is a ConfigError", () => {
  const nkeys = require('@nats-io/nkeys');
  const seed = fs.readFileSync(fixture('auth/nkey-user.nk'), 'utf8').trim();
  const theirs = nkeys.fromSeed(new TextEncoder().encode(seed));
  for (const nonce of ['a server nonce', new Uint8Array([0, 1, 2, 255])]) {
    const { publicKey, sig } = nats.nkeySign(seed, nonce);
    assert.equal(publicKey, theirs.getPublicKey());
    assert.equal(publicKey, pub);
    const bytes = typeof nonce === 'string' ? new TextEncoder().encode(nonce) : nonce;
    assert.ok(theirs.verify(bytes, Buffer.from(sig, 'base64url')), `nkeys verifies the signature of ${nonce}`);
    assert.deepEqual(Buffer.from(sig, 'base64url'), Buffer.from(theirs.sign(bytes)), 'Ed25519 is deterministic: the same bytes');
  }
  assert.throws(() => nats.nkeySign('SUnotaseed', 'x'), nats.ConfigError);
  assert.throws(() => nats.nkeySign(undefined, 'x'), TypeError);
});
