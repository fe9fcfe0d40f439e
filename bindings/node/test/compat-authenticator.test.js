'use strict';
// nats.js's custom authenticators beside natsio/transport-node's: the same
// ConnectionOptions.authenticator (a program's own function signing the
// nonce with @nats-io/nkeys, the factories given functions, lists merged)
// connects through both with the same calls (count and nonces: a string
// at a connect to an NKey server, a new one after reconnect()), and the
// same failures (a wrong key, a throw) reject the same way.
const { test, before, after } = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const nkeys = require('@nats-io/nkeys');
const { startConfiguredServer, fixture } = require('./server');
const { eventually } = require('./wait');

const clients = {
  natsio: require('natsio/transport-node'),
  'nats.js': require('@nats-io/transport-node'),
};

const read = (rel) => fs.readFileSync(fixture(rel), 'utf8').trim();
const pub = read('auth/nkey-user.pub');
const seed = new TextEncoder().encode(read('auth/nkey-user.nk'));
const otherSeed = new TextEncoder().encode(read('auth/nkey-other.nk'));

let nkeyServer;
let users;
let operator;
before(async () => {
  nkeyServer = await startConfiguredServer(`authorization { users = [ { nkey: ${pub} } ] }\n`);
  users = await startConfiguredServer('authorization { user: alice, password: "s3cret" }\n');
  operator = await startConfiguredServer(read('auth/operator.conf') + '\n');
});
after(async () => {
  await nkeyServer?.stop();
  await users?.stop();
  await operator?.stop();
});

/** A program's own authenticator: signs the nonce with @nats-io/nkeys. */
function signer(seedBytes, calls) {
  const kp = nkeys.fromSeed(seedBytes);
  return (nonce) => {
    calls.push(nonce);
    return { nkey: kp.getPublicKey(), sig: nkeys.encode(kp.sign(new TextEncoder().encode(nonce))) };
  };
}

/** Connects with `opts`, checks a round trip, forces a reconnect and waits
 * until `calls` grew to two, then checks another round trip. */
async function connectAndReconnect(mod, opts, calls) {
  const nc = await mod.connect({ reconnectTimeWait: 20, ...opts });
  try {
    await nc.flush();
    assert.equal(calls.length, 1, 'one call at the connect');
    await nc.reconnect();
    await eventually(() => calls.length >= 2, 10000, 'a call at the reconnect');
    await nc.flush();
  } finally {
    await nc.close();
  }
}

test('a custom authenticator signs each nonce, in natsio as in nats.js', async () => {
  const seen = {};
  for (const [name, mod] of Object.entries(clients)) {
    const calls = [];
    await connectAndReconnect(mod, { servers: nkeyServer.url, authenticator: signer(seed, calls) }, calls);
    assert.equal(calls.length, 2, name);
    assert.ok(calls.every((n) => typeof n === 'string' && n.length > 0), `${name}: ${JSON.stringify(calls)}`);
    assert.notEqual(calls[0], calls[1], name);
    seen[name] = calls.length;
  }
  assert.deepEqual(seen, { natsio: 2, 'nats.js': 2 });
});

test('factories given functions call them on every connect, as nats.js does', async () => {
  const counts = {};
  for (const [name, mod] of Object.entries(clients)) {
    const seedCalls = [];
    await connectAndReconnect(mod, {
      servers: nkeyServer.url,
      authenticator: mod.nkeyAuthenticator(() => {
        seedCalls.push(1);
        return seed;
      }),
    }, seedCalls);
    const credsCalls = [];
    const creds = fs.readFileSync(fixture('auth/user.creds'));
    const nc = await mod.connect({
      servers: operator.url,
      authenticator: mod.credsAuthenticator(() => {
        credsCalls.push(1);
        return creds;
      }),
    });
    await nc.flush();
    await nc.close();
    counts[name] = { seed: seedCalls.length, creds: credsCalls.length };
  }
  assert.deepEqual(counts.natsio, counts['nats.js']);
  assert.equal(counts.natsio.seed, 2);
});

test('a list merges later-wins with the options\' user and pass; no nonce without NKeys', async () => {
  for (const [name, mod] of Object.entries(clients)) {
    const nonces = [];
    const nc = await mod.connect({
      servers: users.url,
      authenticator: [
        (nonce) => {
          nonces.push(nonce);
          return { user: 'alice', pass: 'wrong' };
        },
        () => ({ pass: 's3cret' }),
      ],
    });
    await nc.flush();
    await nc.close();
    assert.deepEqual(nonces, [undefined], name);
    // The options' user/pass come after the authenticators, and win.
    const byOptions = await mod.connect({ servers: users.url, authenticator: () => ({ user: 'bob', pass: 'x' }), user: 'alice', pass: 's3cret' });
    await byOptions.flush();
    await byOptions.close();
  }
});

test('a wrong key and a throwing authenticator fail the connect the same way', async () => {
  const outcomes = {};
  for (const [name, mod] of Object.entries(clients)) {
    const wrong = await mod
      .connect({ servers: nkeyServer.url, maxReconnectAttempts: 0, authenticator: signer(otherSeed, []) })
      .catch((e) => e);
    const sealed = new Error('vault sealed');
    const threw = await mod
      .connect({ servers: nkeyServer.url, maxReconnectAttempts: 0, authenticator: () => { throw sealed; } })
      .catch((e) => e);
    outcomes[name] = { wrong: wrong?.name, wrongIsAuth: wrong instanceof mod.errors.AuthorizationError, threwSame: threw === sealed };
  }
  assert.deepEqual(outcomes.natsio, outcomes['nats.js']);
  assert.deepEqual(outcomes.natsio, { wrong: 'AuthorizationError', wrongIsAuth: true, threwSame: true });
});
