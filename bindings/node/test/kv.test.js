'use strict';
// Key-Value against a real nats-server with JetStream enabled: resumed
// watches, purgeDeletes, per-key TTLs (ADR-48), bucket listing and the
// typed bucket status.
const { test } = require('node:test');
const assert = require('node:assert/strict');
const nats = require('..');
const { useJetStream, rejectsWith } = require('./jetstream-env');
const { sleep, eventually } = require('./wait');

let js;
useJetStream('natsio-node-kv-', (env) => ({ js } = env));

/** Resolves with the promise's value, or rejects after `ms`. */
function within(promise, ms, what) {
  let timer;
  return Promise.race([
    promise,
    new Promise((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${what}: not within ${ms} ms`)), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}

/** Polls `fn` until it returns truthy (or fails after `ms`). */

/** How reading `key` ends: 'value', 'deleted' (a marker) or 'gone'. */
async function keyState(kv, key) {
  try {
    await kv.get(key);
    return 'value';
  } catch (e) {
    if (e instanceof nats.KeyDeletedError) return 'deleted';
    if (e instanceof nats.KeyNotFoundError) return 'gone';
    throw e;
  }
}

/** Entries as [key, value, operation, revision]. */
const kvr = (e) => [e.key, e.string(), e.operation, e.revision];

/** Runs `fn(kv)` on a new bucket, deleted afterwards. */
async function withBucket(cfg, fn) {
  const kv = await js.kv.create(cfg);
  try {
    return await fn(kv);
  } finally {
    kv.close();
    await js.kv.delete(cfg.bucket);
  }
}

test('watch resumeFromRevision: exactly the revisions from N on, markers included, then initialized, then changes', async () => {
  await withBucket({ bucket: 'RESUME', history: 10, storage: 'memory' }, async (kv) => {
    await kv.put('a', '1'); // 1
    await kv.put('b', '1'); // 2
    await kv.put('a', '2'); // 3
    await kv.delete('b'); // 4
    await kv.put('c', '1'); // 5

    const w = await kv.watch({ resumeFromRevision: 3 });
    let initialized = false;
    w.initialized.then((v) => (initialized = v));
    const it = w[Symbol.asyncIterator]();
    const initial = [];
    for (let i = 0; i < 3; i++) initial.push(kvr((await within(it.next(), 2000, `entry ${i}`)).value));
    assert.deepEqual(initial, [
      ['a', '2', 'PUT', 3],
      ['b', '', 'DEL', 4],
      ['c', '1', 'PUT', 5],
    ]);
    assert.equal(initialized, false, 'not initialized while stored revisions are yielded');
    const pending = it.next(); // passes the marker, then waits for a change
    assert.equal(await within(w.initialized, 2000, 'initialized'), true);
    await kv.put('d', 'live');
    await kv.put('a', '3');
    assert.deepEqual(kvr((await within(pending, 2000, 'live put')).value), ['d', 'live', 'PUT', 6]);
    assert.deepEqual(kvr((await within(it.next(), 2000, 'live put 2')).value), ['a', '3', 'PUT', 7]);
    w.stop();
    assert.deepEqual(await it.next(), { value: undefined, done: true });

    // With a key filter and ignoreDeletes: only the matching revisions from N on.
    const only = await kv.watch({ key: ['a', 'b'], resumeFromRevision: 2n, ignoreDeletes: true });
    const got = [];
    const loop = (async () => {
      for await (const e of only) got.push(kvr(e));
    })();
    assert.equal(await within(only.initialized, 2000, 'filtered initialized'), true);
    assert.deepEqual(got, [
      ['b', '1', 'PUT', 2],
      ['a', '2', 'PUT', 3],
      ['a', '3', 'PUT', 7],
    ]);
    await kv.put('c', 'not watched');
    await kv.put('b', 'again');
    await eventually(() => got.length === 4, 2000, 'live b');
    assert.deepEqual(got[3], ['b', 'again', 'PUT', 9]);
    only.stop();
    await within(loop, 1000, 'loop end');

    // Past every stored revision: initialized at once, then only changes.
    const late = await kv.watch({ resumeFromRevision: 10 });
    const next = late.next();
    assert.equal(await within(late.initialized, 2000, 'late initialized'), true);
    await kv.put('e', 'x');
    assert.deepEqual(kvr((await within(next, 2000, 'late change')).value), ['e', 'x', 'PUT', 10]);
    late.stop();

    await rejectsWith(kv.watch({ resumeFromRevision: 2, updatesOnly: true }), nats.InvalidArgumentError);
    await assert.rejects(kv.watch({ resumeFromRevision: -1 }), TypeError);
    await assert.rejects(kv.watch({ resumeFromRevision: 'soon' }), TypeError);
    await Promise.all([w.closed, only.closed, late.closed]);
  });
});

test('purgeDeletes: the default keeps young markers (their history goes), a negative age removes every marker', async () => {
  await withBucket({ bucket: 'PD', history: 5, storage: 'memory' }, async (kv) => {
    await kv.put('a', '1');
    await kv.put('a', '2');
    await kv.delete('a'); // DEL over two revisions
    await kv.put('b', 'kept');
    await kv.put('c', '1');
    await kv.purge('c'); // PURGE marker alone (the purge removed c's revision)
    assert.equal((await kv.status()).values, 5);

    // Default (30 min): every marker is young, so only a's two revisions go.
    assert.deepEqual(await kv.purgeDeletes(), { success: true, purged: 2 });
    assert.deepEqual(
      (await kv.history('a')).map((e) => e.operation),
      ['DEL'],
    );
    assert.equal(await keyState(kv, 'a'), 'deleted');
    assert.equal(await keyState(kv, 'c'), 'deleted');
    assert.equal((await kv.status()).values, 3);

    // Negative: every marker goes, whatever its age; values stay.
    assert.deepEqual(await kv.purgeDeletes(-1), { success: true, purged: 2 });
    assert.equal(await keyState(kv, 'a'), 'gone');
    assert.equal(await keyState(kv, 'c'), 'gone');
    await rejectsWith(kv.history('a'), nats.KeyNotFoundError);
    assert.equal((await kv.get('b')).string(), 'kept');
    assert.equal((await kv.status()).values, 1);
    assert.deepEqual(await kv.purgeDeletes(-1), { success: true, purged: 0 });

    // A positive age: older markers go, younger ones stay.
    await kv.put('old', 'x');
    await kv.delete('old');
    await sleep(600);
    await kv.put('young', 'x');
    await kv.delete('young');
    assert.deepEqual(await kv.purgeDeletes(400), { success: true, purged: 3 });
    assert.equal(await keyState(kv, 'old'), 'gone');
    assert.equal(await keyState(kv, 'young'), 'deleted');

    await assert.rejects(kv.purgeDeletes('soon'), TypeError);
  });
});

test('create with a 1 s marker TTL: the key expires, a watcher sees the purge marker, and it can be created again', async () => {
  await withBucket({ bucket: 'TTLC', storage: 'memory', limit_marker_ttl: '1s' }, async (kv) => {
    assert.equal((await kv.status()).markerTTL, 1000);
    const w = await kv.watch({ updatesOnly: true });
    const seen = [];
    const loop = (async () => {
      for await (const e of w) seen.push([e.key, e.operation]);
    })();
    await within(w.initialized, 2000, 'initialized');

    const rev = await kv.create('k', 'short-lived', '1s');
    await kv.create('forever', 'v', 'never');
    assert.equal((await kv.get('k')).revision, rev);
    await rejectsWith(kv.create('k', 'again', 1), nats.KeyExistsError);
    const t0 = Date.now();
    await eventually(async () => (await keyState(kv, 'k')) !== 'value', 5000, 'k expires');
    assert.ok(Date.now() - t0 < 5000);
    assert.deepEqual(await kv.keys(), ['forever']);
    await eventually(() => seen.some(([k, op]) => k === 'k' && op === 'PURGE'), 3000, 'the purge marker');
    assert.deepEqual(seen.slice(0, 2), [
      ['k', 'PUT'],
      ['forever', 'PUT'],
    ]);
    // The server's marker, then the key again (create retries against the marker).
    assert.ok((await kv.create('k', 'back')) > rev);
    assert.equal((await kv.get('k')).string(), 'back');
    assert.equal((await kv.get('forever')).string(), 'v');
    w.stop();
    await within(loop, 1000, 'loop end');

    await assert.rejects(kv.create('x', 'v', 'soon'), TypeError);
    await rejectsWith(kv.create('x', 'v', -5), nats.InvalidArgumentError);
  });
  // Without limit_marker_ttl the bucket refuses per-key TTLs.
  await withBucket({ bucket: 'NOTTL', storage: 'memory' }, async (kv) => {
    assert.equal((await kv.status()).markerTTL, 0);
    await rejectsWith(kv.create('k', 'v', '1s'), nats.JetStreamApiError);
    assert.equal(await kv.create('k', 'v'), 1);
  });
});

test('put with a TTL: the value expires with a purge marker; previousSeq is an update', async () => {
  await withBucket({ bucket: 'TTLPUT', storage: 'memory', history: 3, limit_marker_ttl: '1s' }, async (kv) => {
    const w = await kv.watch({ updatesOnly: true });
    const seen = [];
    const loop = (async () => {
      for await (const e of w) seen.push([e.key, e.operation]);
    })();
    await within(w.initialized, 2000, 'initialized');
    const stays = await kv.put('stays', 'v');
    const rev = await kv.put('brief', 'short-lived', { ttl: '1s' });
    assert.ok(rev > stays);
    assert.equal((await kv.get('brief')).string(), 'short-lived');
    await eventually(async () => (await keyState(kv, 'brief')) !== 'value', 5000, 'brief expires');
    await eventually(() => seen.some(([k, op]) => k === 'brief' && op === 'PURGE'), 3000, 'the purge marker');
    assert.deepEqual(seen.slice(0, 2), [
      ['stays', 'PUT'],
      ['brief', 'PUT'],
    ]);
    assert.deepEqual(await kv.keys(), ['stays']);
    // previousSeq: nats.js's compare-and-set form of put.
    await rejectsWith(kv.put('stays', 'x', { previousSeq: stays + 100 }), nats.WrongLastSequenceError);
    assert.ok((await kv.put('stays', 'y', { previousSeq: stays })) > rev);
    await rejectsWith(kv.put('k', 'v', { ttl: -5 }), nats.InvalidArgumentError);
    w.stop();
    await within(loop, 1000, 'loop end');
  });
  await withBucket({ bucket: 'NOTTLPUT', storage: 'memory' }, async (kv) => {
    await rejectsWith(kv.put('k', 'v', { ttl: '1s' }), nats.JetStreamApiError);
  });
});

test('purge with a TTL leaves a marker that expires, then the key leaves no trace', async () => {
  await withBucket({ bucket: 'TTLP', history: 5, storage: 'memory', limit_marker_ttl: '1s' }, async (kv) => {
    await kv.put('k', '1');
    const r2 = await kv.put('k', '2');
    await rejectsWith(kv.purge('k', { ttl: '1s', previousSeq: r2 - 1 }), nats.WrongLastSequenceError);
    await kv.purge('k', { ttl: '1', last: r2 }); // digits alone: seconds
    assert.equal(await keyState(kv, 'k'), 'deleted');
    assert.deepEqual(
      (await kv.history('k')).map((e) => e.operation),
      ['PURGE'],
    );
    await eventually(async () => (await keyState(kv, 'k')) === 'gone', 5000, 'the marker expires');
    await rejectsWith(kv.history('k'), nats.KeyNotFoundError);
    assert.equal((await kv.status()).values, 0);
  });
});

test('js.kv.names, statuses and list: every bucket and nothing else', async () => {
  // Not buckets: a plain stream, a stream on $KV subjects not named KV_*, an object store.
  await js.streams.add({ name: 'PLAIN', subjects: ['plain.>'], storage: 'memory' });
  await js.streams.add({ name: 'FAKEKV', subjects: ['$KV.fake.>'], storage: 'memory' });
  const os = await js.objectStores.createObjectStore({ bucket: 'OBJS', storage: 'memory' });
  const one = await js.kv.create({ bucket: 'ONE', history: 2, storage: 'memory' });
  const two = await js.kv.create({ bucket: 'TWO', history: 7, storage: 'memory', description: 'second' });
  try {
    await one.put('k', 'v');
    assert.deepEqual((await js.kv.names()).sort(), ['ONE', 'TWO']);
    const statuses = (await js.kv.statuses()).sort((a, b) => a.bucket.localeCompare(b.bucket));
    assert.deepEqual(
      statuses.map((s) => [s.bucket, s.history, s.values, s.description, s.streamInfo.config.name]),
      [
        ['ONE', 2, 1, '', 'KV_ONE'],
        ['TWO', 7, 0, 'second', 'KV_TWO'],
      ],
    );
    const listed = [];
    for await (const s of js.kv.list()) listed.push(s.bucket);
    assert.deepEqual(listed.sort(), ['ONE', 'TWO']);
    // Same as each bucket's own status (but the counters' timestamps).
    const own = await two.status();
    const listedTwo = statuses[1];
    for (const k of ['bucket', 'values', 'history', 'ttl', 'size', 'storage', 'replicas', 'markerTTL', 'description']) {
      assert.deepEqual(listedTwo[k], own[k], k);
    }
  } finally {
    one.close();
    two.close();
    os.close();
    await js.kv.delete('ONE');
    await js.kv.delete('TWO');
    await js.objectStores.deleteObjectStore('OBJS');
    await js.streams.delete('PLAIN');
    await js.streams.delete('FAKEKV');
  }
  assert.deepEqual(await js.kv.names(), []);
  assert.deepEqual(await js.kv.statuses(), []);
});

test('kv.status: typed, with nats.js KvStatus field names, as configured', async () => {
  const cfg = {
    bucket: 'TYPED',
    description: 'typed status',
    history: 4,
    ttl: '1h',
    max_value_size: 1024,
    max_bytes: 1 << 20,
    compression: true,
    metadata: { team: 'kv' },
    limit_marker_ttl: '5s',
  };
  await withBucket(cfg, async (kv) => {
    await kv.put('a', 'hello');
    await kv.put('b', 'world');
    const st = await kv.status();
    assert.equal(st.bucket, 'TYPED');
    assert.equal(st.values, 2);
    assert.equal(st.history, 4);
    assert.equal(st.ttl, 3_600_000);
    assert.equal(st.markerTTL, 5000);
    assert.equal(st.description, 'typed status');
    assert.equal(st.storage, 'file');
    assert.equal(st.backingStore, 'file');
    assert.equal(st.replicas, 1);
    assert.equal(st.compression, true);
    assert.equal(st.metadata.team, 'kv');
    assert.equal(st.maxValueSize, 1024);
    assert.equal(st.max_bytes, 1 << 20);
    assert.equal(st.maxBucketSize, 1 << 20);
    assert.ok(st.size > 0);
    assert.equal(st.bytes, st.size);
    assert.equal(st.size, st.streamInfo.state.bytes);
    assert.equal(st.streamInfo.config.name, 'KV_TYPED');
    assert.equal(st.streamInfo.config.subject_delete_marker_ttl, 5_000_000_000);
  });
  // Defaults: no description, no limits, no markers.
  await withBucket({ bucket: 'PLAINKV', storage: 'memory' }, async (kv) => {
    const st = await kv.status();
    assert.deepEqual(
      [st.values, st.history, st.ttl, st.markerTTL, st.description, st.storage, st.compression, st.maxValueSize, st.max_bytes],
      [0, 1, 0, 0, '', 'memory', false, -1, -1],
    );
    assert.equal(typeof st.metadata, 'object');
  });
});
