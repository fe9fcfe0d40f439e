'use strict';
// Key-Value interoperability with nats.js (@nats-io/kv, the official
// JavaScript client) over the same nats-server: bucket listing and status
// each way, per-key TTLs (ADR-48) written by one client and seen
// expiring by the other's watcher, and filtered key listings of what the
// other wrote.
const { test, after } = require('node:test');
const assert = require('node:assert/strict');
const natsjs = require('@nats-io/transport-node');
const { Kvm } = require('@nats-io/kv');
const { useJetStream } = require('./jetstream-env');
const { eventually } = require('./wait');

let server;
let js;
useJetStream('natsio-node-kv-interop-', (env) => ({ server, js } = env));

// The nats.js side: its own connection to the same server, made by the
// first test that needs it.
let njs;
let kvm;
async function natsjsKvm() {
  if (!kvm) {
    njs = await natsjs.connect({ servers: server.url });
    kvm = new Kvm(njs);
  }
  return kvm;
}
after(() => njs?.close());

/** Polls `fn` until it returns truthy (or fails after `ms`). */

/** The KvStatus fields both clients report, from either side's status. */
const STATUS_FIELDS = [
  'bucket',
  'values',
  'history',
  'ttl',
  'markerTTL',
  'size',
  'storage',
  'backingStore',
  'replicas',
  'compression',
  'description',
  'metadata',
  'maxValueSize',
  'max_bytes',
];
/** Metadata without the server's reserved `_nats.*` keys (a STREAM.INFO
 * reply carries more of them than a STREAM.LIST entry). */
const userMetadata = (m) => Object.fromEntries(Object.entries(m).filter(([k]) => !k.startsWith('_nats')));
function assertSameStatus(ours, theirs, what) {
  for (const k of STATUS_FIELDS) {
    const [a, b] = k === 'metadata' ? [userMetadata(ours[k]), userMetadata(theirs[k])] : [ours[k], theirs[k]];
    assert.deepEqual(a, b, `${what}: ${k}`);
  }
}

test('nats.js kvm.list() and status() see a bucket this binding made, as configured; and the reverse', async () => {
  const kvm = await natsjsKvm();
  const ours = await js.kv.create({
    bucket: 'OURS',
    history: 3,
    ttl: '1h',
    description: 'made by natsio',
    metadata: { owner: 'natsio' },
    max_value_size: 4096,
    limit_marker_ttl: '2s',
    storage: 'memory',
  });
  const theirs = await kvm.create('THEIRS', { history: 2, markerTTL: 1500, storage: 'memory', description: 'nats.js' });
  try {
    await ours.put('a', '1');
    await ours.put('a', '2');
    await ours.put('b', '1');
    await theirs.put('x', 'y');

    // nats.js lists both buckets; its status of ours matches ours.
    const listed = new Map();
    for await (const st of kvm.list()) listed.set(st.bucket, st);
    assert.deepEqual([...listed.keys()].sort(), ['OURS', 'THEIRS']);
    const ourStatus = await ours.status();
    const theirView = listed.get('OURS');
    assert.equal(theirView.values, 3);
    assert.equal(theirView.history, 3);
    assert.equal(theirView.ttl, 3_600_000);
    assert.equal(theirView.markerTTL, 2000);
    assert.equal(theirView.description, 'made by natsio');
    assert.equal(theirView.metadata.owner, 'natsio');
    assertSameStatus(ourStatus, theirView, 'OURS listed by nats.js');
    assertSameStatus(ourStatus, await (await kvm.open('OURS')).status(), 'OURS status by nats.js');

    // This binding lists both too; its status of nats.js's bucket matches nats.js's.
    assert.deepEqual((await js.kv.names()).sort(), ['OURS', 'THEIRS']);
    const statuses = new Map((await js.kv.statuses()).map((s) => [s.bucket, s]));
    const theirStatus = await theirs.status();
    assert.equal(statuses.get('THEIRS').markerTTL, 1500);
    assert.equal(statuses.get('THEIRS').history, 2);
    assertSameStatus(statuses.get('THEIRS'), theirStatus, 'THEIRS listed by natsio');
    const bound = await js.kv.bind('THEIRS');
    assertSameStatus(await bound.status(), theirStatus, 'THEIRS status by natsio');
    bound.close();
  } finally {
    ours.close();
    await js.kv.delete('OURS');
    await js.kv.delete('THEIRS');
  }
});

test("a key nats.js creates with a marker TTL expires and this binding's watcher sees the purge marker", async () => {
  const kvm = await natsjsKvm();
  const theirs = await kvm.create('JSTTL', { markerTTL: 1000, storage: 'memory' });
  const ours = await js.kv.bind('JSTTL');
  const w = await ours.watch({ updatesOnly: true });
  try {
    const seen = [];
    const loop = (async () => {
      for await (const e of w) seen.push([e.key, e.operation, e.string()]);
    })();
    await w.initialized;
    await theirs.create('k', 'from nats.js', '1s');
    await eventually(() => seen.some(([k, op]) => k === 'k' && op === 'PURGE'), 5000, 'the purge marker');
    assert.deepEqual(seen[0], ['k', 'PUT', 'from nats.js']);
    assert.equal(seen.length, 2);
    // nats.js reads the key as gone too (null, or its marker).
    const e = await theirs.get('k');
    assert.ok(e === null || e.operation !== 'PUT');
    w.stop();
    await loop;
  } finally {
    w.stop();
    ours.close();
    await js.kv.delete('JSTTL');
  }
});

test('a key this binding creates with a marker TTL, and a purge with a TTL, expire under a nats.js watcher', async () => {
  const kvm = await natsjsKvm();
  const ours = await js.kv.create({ bucket: 'NODETTL', history: 3, storage: 'memory', limit_marker_ttl: '1s' });
  const theirs = await kvm.open('NODETTL');
  const iter = await theirs.watch({ include: 'updates' });
  try {
    const seen = [];
    const loop = (async () => {
      for await (const e of iter) seen.push([e.key, e.operation]);
    })();
    await ours.create('k', 'from natsio', 1);
    await ours.put('p', '1');
    // The purge removes p's value from the stream: a watcher that has not
    // been handed it yet (a loaded machine) never is. Purge once it was.
    await eventually(() => seen.some(([k, op]) => k === 'p' && op === 'PUT'), 20000, 'the put of p');
    await ours.purge('p', { ttl: '1s' });
    await eventually(() => seen.some(([k, op]) => k === 'k' && op === 'PURGE'), 20000, 'the expiry marker of k');
    assert.deepEqual(seen.slice(0, 3), [
      ['k', 'PUT'],
      ['p', 'PUT'],
      ['p', 'PURGE'],
    ]);
    // The purge marker of p expires too: nats.js then finds no trace of p.
    await eventually(async () => (await theirs.get('p')) === null, 20000, 'p leaves no trace');
    iter.stop();
    await loop;
  } finally {
    iter.stop();
    ours.close();
    await js.kv.delete('NODETTL');
  }
});

test('keys nats.js puts are listed by this binding with filters, and nats.js lists the keys this binding puts', async () => {
  const m = await natsjsKvm();
  const theirs = await m.create('KEYSINTEROP', { history: 3, storage: 'memory' });
  const ours = await js.kv.bind('KEYSINTEROP');
  try {
    for (const k of ['app.a', 'app.b', 'app.b.deep', 'app.gone', 'users.x']) await theirs.put(k, 'v');
    await theirs.delete('app.gone');
    assert.deepEqual((await ours.keys('app.*')).sort(), ['app.a', 'app.b']);
    assert.deepEqual((await ours.keys(['app.>', 'users.*'])).sort(), ['app.a', 'app.b', 'app.b.deep', 'users.x']);
    const listed = [];
    for await (const k of await ours.listKeys('app.>')) listed.push(k);
    assert.deepEqual(listed.sort(), ['app.a', 'app.b', 'app.b.deep']);
    // The reverse: nats.js's filtered keys() over what this binding wrote.
    await ours.put('users.y', 'v');
    await ours.delete('users.x');
    const theirsListed = [];
    for await (const k of await theirs.keys('users.*')) theirsListed.push(k);
    assert.deepEqual(theirsListed, ['users.y']);
  } finally {
    ours.close();
    await js.kv.delete('KEYSINTEROP').catch(() => {});
  }
});
