'use strict';
// Key-Value interoperability with nats.js (@nats-io/kv, the official
// JavaScript client) over the same nats-server: bucket listing and status
// each way, per-key TTLs (ADR-48) written by one client and seen
// expiring by the other's watcher, filtered key listings of what the
// other wrote, and mirrors and sources (natsio/kv beside nats.js's Kvm).
const { test, after } = require('node:test');
const assert = require('node:assert/strict');
const natsjs = require('@nats-io/transport-node');
const { Kvm } = require('@nats-io/kv');
const { useJetStream } = require('./jetstream-env');
const { startHubAndLeaf } = require('./server');
const { eventually } = require('./wait');
const compat = { ...require('../compat/transport-node.js'), ...require('../compat/kv.js') };

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

// Mirrors and sources: natsio/kv (compat) beside nats.js's Kvm.

/** A compat connection and Kvm to `url`: {nc, kvm}. */
async function compatKvm(url) {
  const nc = await compat.connect({ servers: url });
  return { nc, kvm: new compat.Kvm(nc) };
}

/** Waits until the nats.js-shaped KV `kv` (either client's: get resolves
 * null for a missing key) reads `key` as `value`: a mirror or source
 * copies asynchronously. */
async function untilRead(kv, key, value, what) {
  let last;
  await eventually(async () => (last = (await kv.get(key))?.string()) === value, 10000, what, () => `read ${last}`);
}

test('natsio/kv reads the keys a nats.js bucket with sources copied from the buckets nats.js writes', async () => {
  const m = await natsjsKvm();
  const { nc, kvm } = await compatKvm(server.url);
  try {
    const origin = await m.create('NJS_SRC_O', { storage: 'memory' });
    await m.create('NJS_SRC_SUM', { storage: 'memory', sources: [{ name: 'NJS_SRC_O' }] });
    await origin.put('a.b', '1');
    const sum = await kvm.open('NJS_SRC_SUM');
    await untilRead(sum, 'a.b', '1', "nats.js's sourced key through natsio/kv");
    await origin.put('a.b', '2');
    await untilRead(sum, 'a.b', '2', 'the next revision');
  } finally {
    await nc.close();
    for (const b of ['NJS_SRC_SUM', 'NJS_SRC_O']) await js.kv.delete(b).catch(() => {});
  }
});

test("natsio/kv makes the streams nats.js's Kvm makes for the same mirror and sources options, and nats.js reads them back", async () => {
  const m = await natsjsKvm();
  const { nc, kvm } = await compatKvm(server.url);
  const made = [];
  // Each client creates its bucket `<who>_<what>` from the same options.
  const both = async (what, opts) => {
    made.push(`NJS_${what}`, `CPT_${what}`);
    await m.create(`NJS_${what}`, { storage: 'memory', ...opts });
    await kvm.create(`CPT_${what}`, { storage: 'memory', ...opts });
    // nats.js opens both and reads their stream configs; the bucket's own
    // name (in transforms) is written the same way for the comparison.
    const config = async (who) => {
      const { streamInfo } = await (await m.open(`${who}_${what}`)).status();
      const c = streamInfo.config;
      const { mirror, sources, mirror_direct, subjects } = c;
      const shown = JSON.stringify({ mirror, sources, mirror_direct, subjects });
      return JSON.parse(shown.replaceAll(`$KV.${who}_${what}.`, '$KV.<bucket>.'));
    };
    const [theirs, ours] = [await config('NJS'), await config('CPT')];
    assert.deepEqual(ours, theirs, `${what}: mirror, sources, mirror_direct, subjects`);
    return theirs;
  };
  try {
    for (const b of ['O_A', 'O_B', 'O_C']) {
      made.push(b);
      await m.create(b, { storage: 'memory' });
    }
    const mirrored = await both('MIRROR', { mirror: { name: 'O_A' } });
    assert.equal(mirrored.mirror.name, 'KV_O_A');
    assert.deepEqual([mirrored.mirror_direct, mirrored.subjects], [true, undefined]);
    await both('MIRROR_KV', { mirror: { name: 'KV_O_A', opt_start_seq: 2 } });
    // nats.js replaces a source's own transforms with its mapping: so does
    // natsio/kv.
    const { sources } = await both('SOURCES', {
      sources: [
        { name: 'O_A' },
        { name: 'KV_O_B', opt_start_seq: 2 },
        { name: 'O_C', subject_transforms: [{ src: '$KV.O_C.only.>', dest: '$KV.O_C.only.>' }] },
      ],
    });
    assert.deepEqual(
      sources.map((s) => [s.name, s.subject_transforms]),
      ['O_A', 'O_B', 'O_C'].map((b) => [`KV_${b}`, [{ src: `$KV.${b}.>`, dest: '$KV.<bucket>.>' }]]),
    );
    // With both, the mirror wins.
    await both('MIRROR_WINS', { mirror: { name: 'O_A' }, sources: [{ name: 'O_B' }] });
    // A bad name is the library's ConfigError, not the server's rejection.
    await assert.rejects(kvm.create('CPT_BAD', { sources: [{ name: 'a b' }] }), /KeyValueConfig\.sources\.name/);

    // Either client reads the origin's keys through natsio/kv's buckets.
    await (await m.open('O_A')).put('k', 'v');
    await untilRead(await kvm.open('CPT_SOURCES'), 'k', 'v', "O_A's key in natsio/kv's sourcing bucket");
    await untilRead(await m.open('CPT_SOURCES'), 'k', 'v', "O_A's key in it read by nats.js");
    await untilRead(await kvm.open('CPT_MIRROR'), 'k', 'v', "O_A's key through natsio/kv's mirror");
  } finally {
    await nc.close();
    for (const b of made.reverse()) await js.kv.delete(b).catch(() => {});
  }
});

test("through a leaf's mirror of the hub's bucket (domain HUB), nats.js and natsio/kv read what the other writes; a source in the hub's domain is made the same", async () => {
  const { hub, leaf, stop } = await startHubAndLeaf();
  const onHub = await compatKvm(hub.url);
  const onLeaf = await compatKvm(leaf.url);
  const njsLeaf = await natsjs.connect({ servers: leaf.url });
  try {
    const origin = await onHub.kvm.create('TEST', { storage: 'memory' });
    const ours = await onLeaf.kvm.create('MIRROR', { storage: 'memory', mirror: { name: 'TEST', domain: 'HUB' } });
    // nats.js's open() binds without reading the stream (a handle of a
    // mirror would look for the keys under its own name): its create()
    // of the existing bucket reads the mirror from the stream's info.
    const theirs = await new Kvm(njsLeaf).create('MIRROR', { mirror: { name: 'TEST', domain: 'HUB' } });
    assert.equal((await theirs.status()).streamInfo.config.mirror.external.api, '$JS.HUB.API');

    await origin.put('hub', '0');
    await untilRead(theirs, 'hub', '0', "the hub's key through nats.js's mirror handle");
    await untilRead(ours, 'hub', '0', "the hub's key through natsio/kv's mirror handle");

    // Writes through either mirror handle go to the hub's bucket and come
    // back to the mirror for the other to read.
    const revOurs = await ours.put('ours', '1');
    assert.equal((await origin.get('ours')).revision, revOurs);
    await untilRead(theirs, 'ours', '1', "natsio/kv's write read by nats.js");
    const revTheirs = await theirs.put('theirs', '2');
    assert.equal((await origin.get('theirs')).revision, revTheirs);
    await untilRead(ours, 'theirs', '2', "nats.js's write read by natsio/kv");

    // A source in another domain: the same stream from both clients, and
    // the hub's keys mapped into the leaf's bucket.
    const fromHub = { sources: [{ name: 'TEST', domain: 'HUB' }] };
    const sum = await onLeaf.kvm.create('SUM', { storage: 'memory', ...fromHub });
    await new Kvm(njsLeaf).create('NJS_SUM', { storage: 'memory', ...fromHub });
    const sourceOf = async (bucket) => (await (await onLeaf.kvm.open(bucket)).status()).streamInfo.config.sources;
    const [oursSources, theirsSources] = [await sourceOf('SUM'), await sourceOf('NJS_SUM')];
    assert.equal(oursSources[0].external.api, '$JS.HUB.API');
    assert.deepEqual(
      JSON.parse(JSON.stringify(oursSources).replaceAll('$KV.SUM.', '$KV.NJS_SUM.')),
      theirsSources,
      'the sources of the same options',
    );
    await untilRead(sum, 'hub', '0', "the hub's key in natsio/kv's bucket sourcing it");
  } finally {
    await njsLeaf.close();
    await onLeaf.nc.close();
    await onHub.nc.close();
    await stop();
  }
});
