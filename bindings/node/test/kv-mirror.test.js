'use strict';
// Key-Value mirrors and sources against real nats-servers: the streams
// the config's mirror/sources make (as nats.go and nats.js make them),
// what a mirror's handle reads and where it writes, keys copied from
// sources, a mirror of a bucket in another JetStream domain (a hub and a
// leaf node), and the ConfigErrors of bad ones.
const { test } = require('node:test');
const assert = require('node:assert/strict');
const nats = require('..');
const { useJetStream, rejectsWith } = require('./jetstream-env');
const { startHubAndLeaf } = require('./server');
const { eventually } = require('./wait');

let js;
useJetStream('natsio-node-kv-mirror-', (env) => ({ js } = env));

/** The entry of `key` in `kv`, or null while it has none. */
async function entryOf(kv, key) {
  try {
    return await kv.get(key);
  } catch (e) {
    if (e instanceof nats.KeyNotFoundError) return null;
    throw e;
  }
}

/** Waits until `kv` reads `key` as `value` and returns that entry: a
 * mirror or source copies asynchronously, and a bucket's mirror answers
 * the bucket's Direct Gets too (it may not have a write yet). */
async function untilCopied(kv, key, value, what) {
  let last;
  await eventually(async () => (last = await entryOf(kv, key))?.string() === value, 10000, what, () => `read ${last?.string()}`);
  return last;
}

test("a mirror's stream has the origin's stream as mirror, mirror_direct and no subjects; its handle reads the origin's keys and writes to the origin", async () => {
  const origin = await js.kv.create({ bucket: 'MIR_ORIGIN', storage: 'memory' });
  const mirror = await js.kv.create({ bucket: 'MIR_COPY', storage: 'memory', mirror: { name: 'MIR_ORIGIN' } });
  try {
    const { config } = await js.streams.info('KV_MIR_COPY');
    assert.equal(config.mirror.name, 'KV_MIR_ORIGIN', 'KV_ added to the name');
    assert.equal(config.mirror_direct, true);
    assert.equal(config.subjects, undefined, 'a mirror holds no subjects of its own');

    await origin.put('k', 'v1');
    await untilCopied(mirror, 'k', 'v1', 'the origin\'s key read through the mirror');

    // A write through the mirror goes to the origin (read polled: the
    // mirror answers the origin's Direct Gets too).
    const rev = await mirror.put('w', 'v2');
    const e = await untilCopied(origin, 'w', 'v2', "the mirror's write in the origin");
    assert.equal(e.revision, rev);
    // ...and comes back to the mirror, as every write to the origin does.
    await untilCopied(mirror, 'w', 'v2', 'the write through the mirror copied back to it');
  } finally {
    await js.kv.delete('MIR_COPY');
    await js.kv.delete('MIR_ORIGIN');
  }
});

test("a bucket with sources copies their keys into its own (the transforms show in its stream config); its own keys stay in it", async () => {
  const a = await js.kv.create({ bucket: 'SRC_A', storage: 'memory' });
  const b = await js.kv.create({ bucket: 'SRC_B', storage: 'memory' });
  const sum = await js.kv.create({
    bucket: 'SRC_SUM',
    storage: 'memory',
    sources: [{ name: 'SRC_A' }, { name: 'KV_SRC_B' }],
  });
  try {
    const { config } = await js.streams.info('KV_SRC_SUM');
    assert.deepEqual(config.subjects, ['$KV.SRC_SUM.>']);
    assert.deepEqual(
      config.sources.map((s) => [s.name, s.subject_transforms]),
      [
        ['KV_SRC_A', [{ src: '$KV.SRC_A.>', dest: '$KV.SRC_SUM.>' }]],
        ['KV_SRC_B', [{ src: '$KV.SRC_B.>', dest: '$KV.SRC_SUM.>' }]],
      ],
    );

    await a.put('from.a', '1');
    await b.put('from.b', '2');
    await untilCopied(sum, 'from.a', '1', "source A's key");
    await untilCopied(sum, 'from.b', '2', "source B's key");

    await sum.put('own', '3');
    assert.equal((await entryOf(sum, 'own'))?.string(), '3');
    assert.equal(await entryOf(a, 'own'), null, 'a source is not written to');
  } finally {
    for (const bucket of ['SRC_SUM', 'SRC_A', 'SRC_B']) await js.kv.delete(bucket);
  }
});

test("a leaf's mirror of the hub's bucket (domain HUB) reads the hub's keys and writes to the hub's bucket", async () => {
  const { hub, leaf, stop } = await startHubAndLeaf();
  const hnc = await nats.connect({ servers: hub.url });
  const lnc = await nats.connect({ servers: leaf.url });
  const hjs = hnc.jetstream();
  const ljs = lnc.jetstream();
  try {
    const origin = await hjs.kv.create({ bucket: 'TEST', storage: 'memory' });
    const far = await ljs.kv.create({ bucket: 'MIRROR', storage: 'memory', mirror: { name: 'TEST', domain: 'HUB' } });
    const { config } = await ljs.streams.info('KV_MIRROR');
    assert.equal(config.mirror.external.api, '$JS.HUB.API', 'the domain became the API prefix');

    await origin.put('k', 'hub');
    await untilCopied(far, 'k', 'hub', "the hub's key on the leaf");

    const rev = await far.put('w', 'leaf');
    const e = await origin.get('w');
    assert.equal(e.string(), 'leaf', "the leaf's write is in the hub's bucket");
    assert.equal(e.revision, rev);
    await untilCopied(far, 'w', 'leaf', 'the write copied back to the mirror');
  } finally {
    hjs.close();
    ljs.close();
    await hnc.close();
    await lnc.close();
    await stop();
  }
});

test('a bad mirror or sources config rejects with ConfigError naming the field', async () => {
  const bad = [
    [{ mirror: 'ORIGIN' }, 'mirror'],
    [{ mirror: { domain: 'HUB' } }, 'mirror.name'],
    [{ mirror: { name: 'a b' } }, 'mirror.name'],
    [{ mirror: { name: 'O', domain: 'a.b' } }, 'mirror.domain'],
    [{ mirror: { name: 'O', domain: 'HUB', external: { api: '$JS.HUB.API' } } }, 'domain and external are both set'],
    [{ sources: [7] }, 'sources'],
    [{ sources: [{ name: 'a b' }] }, 'sources.name'],
    [{ sources: [{ name: 'O', domain: 'x*' }] }, 'sources.domain'],
  ];
  for (const [cfg, field] of bad) {
    await rejectsWith(js.kv.create({ bucket: 'BAD_MIRROR', ...cfg }), nats.ConfigError, field);
  }
  assert.deepEqual(await js.kv.names(), [], 'no bucket made');
});
