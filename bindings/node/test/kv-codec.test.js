'use strict';
// Key-Value codecs: the library's built-ins through kv.withCodecs (every
// verb, the stored form read through a plain handle), and nats.js's
// KvOptions.codec through natsio/kv, interoperating with nats.js
// (@nats-io/kv) on the same bucket: its Base64KeyCodec and a program's own
// codec objects, written by one client and read by the other.
const { test, after } = require('node:test');
const assert = require('node:assert/strict');
const zlib = require('node:zlib');
const nats = require('..');
const natsjs = require('@nats-io/transport-node');
const officialKv = require('@nats-io/kv');
const { useJetStream, rejectsWith } = require('./jetstream-env');

let server;
let js;
useJetStream('natsio-node-kv-codec-', (env) => ({ server, js } = env));

let njs;
let ours;
after(async () => {
  await njs?.close();
  await ours?.close();
});
async function clients() {
  if (!njs) {
    njs = await natsjs.connect({ servers: server.url });
    ours = await require('../compat/transport-node.js').connect({ servers: server.url });
  }
  return { theirs: new officialKv.Kvm(njs), mine: new (require('../compat/kv.js').Kvm)(ours) };
}

async function all(it) {
  const out = [];
  for await (const v of it) out.push(v);
  return out;
}

test('built-in codecs: every verb encodes and decodes, the stored form is base64 per token and zlib', async () => {
  const plain = await js.kv.create({ bucket: 'NCODEC', history: 5 });
  const kv = plain.withCodecs({ key: nats.KeyCodecs.base64(), value: nats.ValueCodecs.zlib(9) });
  assert.equal(kv.bucket, 'NCODEC');
  const key = 'user.john doe';
  await rejectsWith(plain.put(key, 'v'), nats.InvalidKeyError);
  const r1 = await kv.put(key, 'first');

  assert.deepEqual(await plain.keys(), ['dXNlcg==.am9obiBkb2U=']);
  const stored = await plain.get('dXNlcg==.am9obiBkb2U=');
  assert.equal(zlib.inflateSync(stored.value).toString(), 'first');

  const e = await kv.get(key);
  assert.equal(e.key, key);
  assert.equal(e.string(), 'first');
  const r2 = await kv.update(key, 'second', r1);
  await rejectsWith(kv.create(key, 'x'), nats.KeyExistsError);
  await kv.create('user.jane', 'created');
  assert.deepEqual((await kv.keys()).sort(), ['user.jane', key]);
  assert.deepEqual((await kv.keys('user.*')).sort(), ['user.jane', key]);
  assert.deepEqual(
    (await kv.history(key)).map((h) => h.string()),
    ['first', 'second'],
  );

  const w = await kv.watch({ key: 'user.*' });
  const seen = [];
  for await (const entry of w) {
    seen.push([entry.key, entry.string()]);
    if (seen.length === 2) break;
  }
  assert.deepEqual(seen.sort(), [
    ['user.jane', 'created'],
    [key, 'second'],
  ]);
  await kv.delete(key, { last: r2 });
  await rejectsWith(kv.get(key), nats.KeyDeletedError);

  // A codec without a filter form, and values that do not decode.
  const chained = plain.withCodecs({
    key: nats.KeyCodecs.chain(nats.KeyCodecs.path(), nats.KeyCodecs.base64Url()),
    value: nats.ValueCodecs.chain(nats.ValueCodecs.zlib(), nats.ValueCodecs.base64()),
  });
  await chained.put('/a b/~~~', 'chained');
  assert.ok((await plain.keys()).includes('X3Jvb3Rf.YSBi.fn5-'));
  assert.equal((await chained.get('/a b/~~~')).string(), 'chained');
  assert.deepEqual(await chained.keys('/a b/*'), ['/a b/~~~']);
  await plain.put('raw', 'not zlib');
  const zonly = plain.withCodecs({ value: nats.ValueCodecs.zlib() });
  await rejectsWith(zonly.get('raw'), nats.KvValueDecodeFailedError);
  assert.throws(() => nats.ValueCodecs.zlib(10), nats.InvalidArgumentError);
  assert.throws(() => nats.KeyCodecs.chain(), nats.KvNoCodecsError);
  assert.throws(() => plain.withCodecs({ key: { encode: (k) => k, decode: (k) => k } }), TypeError);
});

test("nats.js's Base64KeyCodec: what either client writes, the other reads, under the same stored keys", async () => {
  const { theirs, mine } = await clients();
  const codec = { key: officialKv.Base64KeyCodec(), value: officialKv.NoopKvCodecs().value };
  const a = await theirs.create('NB64', { codec });
  const b = await mine.open('NB64', { codec: { key: require('../compat/kv.js').Base64KeyCodec() } });
  await a.put('from.natsjs', 'one');
  await b.put('from.natsio', 'two');
  assert.equal((await b.get('from.natsjs')).string(), 'one');
  assert.equal((await a.get('from.natsio')).string(), 'two');
  assert.deepEqual((await all(await a.keys())).sort(), ['from.natsio', 'from.natsjs']);
  assert.deepEqual((await all(await b.keys('from.*'))).sort(), ['from.natsio', 'from.natsjs']);
  // The stored keys: nats.js's form, whoever wrote them.
  const raw = await mine.open('NB64');
  assert.deepEqual((await all(await raw.keys())).sort(), ['ZnJvbQ==.bmF0c2lv', 'ZnJvbQ==.bmF0c2pz']);
  // A deleted key: nats.js's marker entry, under the program's key.
  await b.delete('from.natsjs');
  const marker = await b.get('from.natsjs');
  assert.equal(marker.operation, 'DEL');
  assert.equal(marker.key, 'from.natsjs');
  // The library's own base64 reads nats.js's keys as well.
  const native = (await js.kv.bind('NB64')).withCodecs({ key: nats.KeyCodecs.base64() });
  assert.equal((await native.get('from.natsio')).string(), 'two');
});

test("a program's own codec objects run as nats.js runs them (per key token; values whole)", async () => {
  const { theirs, mine } = await clients();
  const rot13 = (s) => s.replace(/[a-z]/g, (c) => String.fromCharCode(((c.charCodeAt(0) - 97 + 13) % 26) + 97));
  const flip = (v) => Uint8Array.from(typeof v === 'string' ? new TextEncoder().encode(v) : v, (x) => x ^ 0x5a);
  const codec = { key: { encode: rot13, decode: rot13 }, value: { encode: flip, decode: flip } };
  const a = await theirs.create('NOWN', { codec });
  const b = await mine.open('NOWN', { codec });
  await a.put('hello.world', 'AB');
  await b.put('hello.there', 'CD');
  assert.equal((await b.get('hello.world')).string(), 'AB');
  assert.equal((await a.get('hello.there')).string(), 'CD');
  const raw = await mine.open('NOWN');
  assert.deepEqual((await all(await raw.keys())).sort(), ['uryyb.gurer', 'uryyb.jbeyq']);
  assert.deepEqual((await raw.get('uryyb.gurer')).value, Buffer.from(flip('CD'))); // a Buffer, as nats.js's
  assert.deepEqual((await all(await b.keys('hello.*'))).sort(), ['hello.there', 'hello.world']);
  const w = await b.watch({ key: 'hello.*' });
  const seen = [];
  for await (const e of w) {
    seen.push(`${e.key}=${e.string()}`);
    if (seen.length === 2) break;
  }
  assert.deepEqual(seen.sort(), ['hello.there=CD', 'hello.world=AB']);
});
