'use strict';
// Object Store interoperability with nats.js (@nats-io/obj, the official
// JavaScript client) over the same nats-server: what one writes, the other
// reads back byte for byte with the same info, links included.
const { test, after } = require('node:test');
const assert = require('node:assert/strict');
const { Readable } = require('node:stream');
const natsjs = require('@nats-io/transport-node');
const { Objm, StorageType } = require('@nats-io/obj');
const nats = require('..');
const { useJetStream, rejectsWith } = require('./jetstream-env');

let server;
let js;
useJetStream('natsio-node-object-interop-', (env) => ({ server, js } = env));

// The nats.js side: its own connection to the same server, made by the
// first test that needs it.
let njs;
let objm;
async function natsjsObjm() {
  if (!objm) {
    njs = await natsjs.connect({ servers: server.url });
    objm = new Objm(njs);
  }
  return objm;
}
after(() => njs?.close());

function pattern(n, seed = 1) {
  const b = Buffer.alloc(n);
  let x = seed * 2654435761;
  for (let i = 0; i < n; i++) {
    x = (x * 1103515245 + 12345) >>> 0;
    b[i] = x >>> 24;
  }
  return b;
}

/** All of a nats.js web ReadableStream. */
async function readWeb(rs) {
  const parts = [];
  for await (const chunk of rs) parts.push(Buffer.from(chunk));
  return Buffer.concat(parts);
}

/** Asserts that this binding's info and nats.js's describe the same object
 * (nats.js leaves out of a link's info what it has not: nuid, size, digest). */
function assertSameInfo(ours, theirs, what) {
  assert.equal(ours.name, theirs.name, `${what}: name`);
  assert.equal(ours.bucket, theirs.bucket, `${what}: bucket`);
  assert.equal(ours.nuid, theirs.nuid ?? '', `${what}: nuid`);
  assert.equal(ours.size, theirs.size ?? 0, `${what}: size`);
  assert.equal(ours.chunks, theirs.chunks ?? 0, `${what}: chunks`);
  assert.equal(ours.digest, theirs.digest ?? '', `${what}: digest`);
  assert.equal(ours.deleted, theirs.deleted, `${what}: deleted`);
  // The mtime written into the info, or (read back here, as nats.go
  // reports it) when the server stored it: the same moment, give or take.
  // (nats.js writes none into a link.)
  if (theirs.mtime !== undefined) {
    const skew = Math.abs(ours.mtime.getTime() - Date.parse(theirs.mtime));
    assert.ok(skew < 2000, `${what}: mtime ${ours.mtime.toISOString()} vs ${theirs.mtime}`);
  }
  assert.equal(ours.description ?? '', theirs.description ?? '', `${what}: description`);
  assert.deepEqual(ours.metadata, theirs.metadata ?? {}, `${what}: metadata`);
  assert.equal(ours.isLink, theirs.isLink(), `${what}: isLink`);
  if (ours.isLink) assert.deepEqual(ours.options.link, theirs.options.link, `${what}: link`);
  else assert.equal(ours.options.max_chunk_size, theirs.options?.max_chunk_size, `${what}: max_chunk_size`);
  const theirHeaders = theirs.headers
    ? Object.fromEntries(theirs.headers.keys().map((k) => [k, theirs.headers.values(k)]))
    : {};
  const ourHeaders = ours.headers ? Object.fromEntries(ours.headers) : {};
  assert.deepEqual(ourHeaders, theirHeaders, `${what}: headers`);
}

test('nats.js puts objects that this binding reads back byte-equal with the same info', async () => {
  const objm = await natsjsObjm();
  const theirs = await objm.create('FROMJS', { storage: StorageType.Memory, description: 'made by nats.js' });
  const os = await js.objectStore('FROMJS');
  try {
    const hdrs = natsjs.headers();
    hdrs.append('Content-Type', 'application/octet-stream');
    hdrs.append('X-Multi', 'one');
    hdrs.append('X-Multi', 'two');
    const objects = [
      ['empty', Buffer.alloc(0), {}],
      ['small', Buffer.from('hello from nats.js'), {}],
      ['exactly-one-chunk', pattern(4096, 2), { options: { max_chunk_size: 4096 } }],
      ['multi-chunk', pattern(300 * 1024 + 17, 3), { options: { max_chunk_size: 32 * 1024 } }],
      ['default-chunks', pattern(400 * 1024, 4), {}],
      ['described', pattern(1000, 5), { description: 'with meta', headers: hdrs, metadata: { a: '1', b: 'two' } }],
      // Names are any text; ASCII only here: nats.js 3.4 encodes the name
      // in the meta subject from UTF-16 code units (btoa), not from UTF-8
      // as ADR-20 and nats.go do, so non-ASCII names do not interoperate.
      ['dir/sub dir/name with spaces.bin', pattern(10, 6), {}],
    ];
    for (const [name, data, meta] of objects) {
      const put = await theirs.putBlob({ name, ...meta }, data);
      const info = await os.info(name);
      assertSameInfo(info, put, name);
      assertSameInfo(info, await theirs.info(name), name);
      const got = await os.get(name);
      assertSameInfo(got.info, put, `${name} (get)`);
      const parts = [];
      for await (const chunk of got.stream) parts.push(chunk);
      assert.ok(Buffer.concat(parts).equals(data), `${name}: bytes through the read stream`);
      assert.ok((await os.getBytes(name)).equals(data), `${name}: getBytes`);
    }
    assert.equal((await os.info('multi-chunk')).chunks, 10);
    assert.deepEqual((await os.list()).map((i) => i.name).sort(), objects.map(([n]) => n).sort());
    // A nats.js put that replaces an object, and a nats.js delete.
    await theirs.putBlob({ name: 'small' }, Buffer.from('replaced by nats.js'));
    assert.equal((await os.getBytes('small')).toString(), 'replaced by nats.js');
    await theirs.delete('small');
    await rejectsWith(os.get('small'), nats.ObjectDeletedError);
    assert.equal((await os.info('small', { showDeleted: true })).deleted, true);
    // A nats.js rename.
    await theirs.update('described', { name: 'renamed', description: 'renamed by nats.js' });
    await assert.rejects(os.info('described'), nats.ObjectNotFoundError);
    const renamed = await os.info('renamed');
    assert.equal(renamed.description, 'renamed by nats.js');
    assert.ok((await os.getBytes('renamed')).equals(pattern(1000, 5)));
    const st = await os.status();
    assert.deepEqual([st.bucket, st.description, st.storage, st.sealed], ['FROMJS', 'made by nats.js', 'memory', false]);
  } finally {
    os.close();
    await theirs.destroy();
  }
});

test('this binding puts objects that nats.js reads back byte-equal with the same info', async () => {
  const objm = await natsjsObjm();
  const os = await js.createObjectStore({ bucket: 'TOJS', storage: 'memory', description: 'made by natsio' });
  const theirs = await objm.open('TOJS');
  try {
    const objects = [
      ['empty', Buffer.alloc(0), {}],
      ['small', Buffer.from('hello from natsio'), {}],
      ['exactly-one-chunk', pattern(4096, 12), { chunkSize: 4096 }],
      ['multi-chunk', pattern(300 * 1024 + 17, 13), { chunkSize: 32 * 1024 }],
      ['default-chunks', pattern(400 * 1024, 14), {}],
      [
        'described',
        pattern(1000, 15),
        {
          description: 'with meta',
          headers: { 'Content-Type': 'application/octet-stream', 'X-Multi': ['one', 'two'] },
          metadata: { a: '1', b: 'two' },
        },
      ],
      ['dir/sub dir/name with spaces.bin', pattern(10, 16), {}],
    ];
    for (const [i, [name, data, meta]] of objects.entries()) {
      // Alternately in one call and streamed through the writer.
      const put =
        i % 2 === 0
          ? await os.putBytes({ name, ...meta }, data)
          : await os.put({ name, ...meta }, Readable.from([data.subarray(0, 7), data.subarray(7)]));
      const info = await theirs.info(name);
      assert.ok(info, `${name}: nats.js finds it`);
      assertSameInfo(put, info, name);
      const r = await theirs.get(name);
      assertSameInfo(put, r.info, `${name} (get)`);
      assert.ok((await readWeb(r.data)).equals(data), `${name}: bytes read by nats.js`);
      assert.equal((await r.error) ?? null, null, `${name}: nats.js read it without an error`);
      assert.ok(Buffer.from(await theirs.getBlob(name)).equals(data), `${name}: getBlob`);
    }
    assert.equal((await theirs.info('multi-chunk')).chunks, 10);
    assert.deepEqual((await theirs.list()).map((i) => i.name).sort(), objects.map(([n]) => n).sort());
    // Replace, rename and delete by this binding, as nats.js sees them.
    await os.putBytes('small', 'replaced by natsio');
    assert.equal(Buffer.from(await theirs.getBlob('small')).toString(), 'replaced by natsio');
    await os.updateMeta('described', { name: 'renamed', description: 'renamed by natsio' });
    assert.equal(await theirs.info('described'), null);
    assert.equal((await theirs.info('renamed')).description, 'renamed by natsio');
    assert.ok(Buffer.from(await theirs.getBlob('renamed')).equals(pattern(1000, 15)));
    await os.delete('small');
    assert.equal((await theirs.info('small')).deleted, true);
    assert.equal(await theirs.get('small'), null);
    const st = await theirs.status();
    assert.deepEqual([st.bucket, st.description, st.sealed], ['TOJS', 'made by natsio', false]);
    await os.seal();
    assert.equal((await theirs.status()).sealed, true);
    await assert.rejects(theirs.putBlob({ name: 'after-seal' }, Buffer.from('x')));
  } finally {
    os.close();
    await js.deleteObjectStore('TOJS');
  }
});

test('links made by one client are read through the other', async () => {
  const objm = await natsjsObjm();
  const os = await js.createObjectStore({ bucket: 'LINKS', storage: 'memory' });
  const theirs = await objm.open('LINKS');
  const other = await objm.create('LINKS_OTHER', { storage: StorageType.Memory });
  try {
    await other.putBlob({ name: 'far-target' }, Buffer.from('in the other bucket'));
    // nats.js links, read here.
    await theirs.putBlob({ name: 'js-target', description: 'nats.js data' }, pattern(70000, 21));
    const jsLink = await theirs.link('js-link', await theirs.info('js-target'));
    const ourView = await os.info('js-link');
    assertSameInfo(ourView, jsLink, 'js-link');
    assert.deepEqual(ourView.options.link, { bucket: 'LINKS', name: 'js-target' });
    const got = await os.get('js-link');
    assert.equal(got.info.name, 'js-target');
    assert.ok((await os.getBytes('js-link')).equals(pattern(70000, 21)));
    await theirs.link('js-far-link', await other.info('far-target'));
    assert.equal((await os.getBytes('js-far-link')).toString(), 'in the other bucket');
    await theirs.linkStore('js-bucket-link', other);
    const bl = await os.info('js-bucket-link');
    assert.deepEqual([bl.isLink, bl.options.link], [true, { bucket: 'LINKS_OTHER' }]);
    await rejectsWith(os.get('js-bucket-link'), nats.ObjectLinkError);
    // A link to a nats.js link is refused here too.
    await rejectsWith(os.addLink('chain', ourView), nats.ObjectLinkError);

    // Links made here, read by nats.js.
    const target = await os.putBytes({ name: 'our-target', chunkSize: 1000 }, pattern(5500, 22));
    const link = await os.addLink('our-link', target);
    const theirView = await theirs.info('our-link');
    assertSameInfo(link, theirView, 'our-link');
    assert.equal(theirView.isLink(), true);
    assert.ok(Buffer.from(await theirs.getBlob('our-link')).equals(pattern(5500, 22)));
    const far = await os.addLink('our-far-link', { bucket: 'LINKS_OTHER', name: 'far-target' });
    assert.deepEqual(far.options.link, { bucket: 'LINKS_OTHER', name: 'far-target' });
    assert.equal(Buffer.from(await theirs.getBlob('our-far-link')).toString(), 'in the other bucket');
    await os.addBucketLink('our-bucket-link', 'LINKS_OTHER');
    const theirBl = await theirs.info('our-bucket-link');
    assert.deepEqual(theirBl.options.link, { bucket: 'LINKS_OTHER' });
    await assert.rejects(theirs.get('our-bucket-link'), /link is a bucket/);
    // nats.js refuses to link to our link as well.
    await assert.rejects(theirs.link('chain', theirView), /link/);
  } finally {
    os.close();
    await js.deleteObjectStore('LINKS');
    await other.destroy();
  }
});
