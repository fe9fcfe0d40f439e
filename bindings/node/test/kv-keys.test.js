'use strict';
// Key-Value key listings against a real nats-server: kv.keys(filter) with
// '*' and '>' and several filters (nats.js's argument), and kv.listKeys(),
// an async iterator that yields keys as they are read: every key of a
// 1000-key bucket then the end, stop midway, an empty bucket, bad filters
// and a missing bucket.
const { test } = require('node:test');
const assert = require('node:assert/strict');
const nats = require('..');
const { useJetStream, rejectsWith } = require('./jetstream-env');

let js;
useJetStream('natsio-node-kv-keys-', (env) => ({ js } = env));

async function withBucket(cfg, fn) {
  const kv = await js.kv.create(cfg);
  try {
    return await fn(kv);
  } finally {
    kv.close();
    await js.kv.delete(cfg.bucket);
  }
}

async function drained(lister) {
  const keys = [];
  for await (const k of lister) keys.push(k);
  return keys.sort();
}

test('keys(filter): * and > and several filters; deleted and purged keys left out; bad filters reject', async () => {
  await withBucket({ bucket: 'KEYSF', history: 3, storage: 'memory' }, async (kv) => {
    assert.deepEqual(await kv.keys('app.*'), []);
    for (const k of ['app.a', 'app.b', 'app.b.deep', 'app.gone', 'app.purged', 'users.x.name', 'users.y.mail', 'other']) {
      await kv.put(k, 'v');
    }
    await kv.put('app.a', 'again');
    await kv.delete('app.gone');
    await kv.purge('app.purged');
    assert.deepEqual((await kv.keys('app.*')).sort(), ['app.a', 'app.b']);
    assert.deepEqual((await kv.keys('users.>')).sort(), ['users.x.name', 'users.y.mail']);
    assert.deepEqual((await kv.keys(['app.*.deep', 'users.*.mail', 'other'])).sort(), ['app.b.deep', 'other', 'users.y.mail']);
    assert.equal((await kv.keys()).length, 6);
    assert.equal((await kv.keys('>')).length, 6);
    // nats.js's loop works over the array.
    const seen = [];
    for await (const k of await kv.keys('users.*.name')) seen.push(k);
    assert.deepEqual(seen, ['users.x.name']);
    for (const bad of ['a.>.b', 'a..b', 'a b', ['app.*', '']]) {
      await rejectsWith(kv.keys(bad), nats.InvalidKeyError);
      await rejectsWith(kv.listKeys(bad), nats.InvalidKeyError);
    }
    await assert.rejects(kv.keys(42), TypeError);
  });
});

test('listKeys(): every key of a 1000-key bucket once, then the end; stop midway; empty bucket; missing bucket', async () => {
  await withBucket({ bucket: 'KEYSL', storage: 'memory' }, async (kv) => {
    const empty = await kv.listKeys();
    assert.ok(empty instanceof nats.KvKeyLister);
    assert.deepEqual(await drained(empty), []);
    assert.equal(await empty.closed, undefined);

    const many = 1000;
    const puts = [];
    for (let i = 0; i < many; i++) puts.push(kv.put(`k.${i}`, 'v'));
    await Promise.all(puts);
    await kv.put('other', 'v');
    await kv.delete('k.1');
    const keys = await drained(await kv.listKeys('k.*'));
    assert.equal(keys.length, many - 1);
    assert.equal(new Set(keys).size, many - 1);
    assert.ok(!keys.includes('k.1') && keys.includes('k.999') && !keys.includes('other'));
    assert.deepEqual(await drained(await kv.listKeys(['other', 'k.5'])), ['k.5', 'other']);

    // Stopped midway (break): the iteration ends.
    const half = await kv.listKeys();
    let n = 0;
    for await (const k of half) {
      assert.equal(typeof k, 'string');
      if (++n === 10) break;
    }
    assert.equal(n, 10);
    assert.deepEqual(await half.next(), { value: undefined, done: true });
    assert.equal(half.isClosed, true);
  });
  // The bucket is gone: the iteration throws.
  const kv = await js.kv.create({ bucket: 'KEYSGONE', storage: 'memory' });
  await js.kv.delete('KEYSGONE');
  try {
    const gone = await kv.listKeys();
    await rejectsWith(drained(gone), nats.BucketNotFoundError);
  } finally {
    kv.close();
  }
});
