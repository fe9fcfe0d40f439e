'use strict';
// Object Store (ADR-20) against a real nats-server with JetStream enabled:
// buckets, round trips through Node streams, replace, delete, rename,
// links, seal, watch, list, aborted writes, corrupted data and bad input.
const { test } = require('node:test');
const assert = require('node:assert/strict');
const crypto = require('node:crypto');
const { Readable, Writable } = require('node:stream');
const { pipeline } = require('node:stream/promises');
const nats = require('..');
const { useJetStream, rejectsWith } = require('./jetstream-env');
const { liveHandles, collectUntil, settledHandles } = require('./gc');
const { eventually } = require('./wait');

let nc;
let js;
useJetStream('natsio-node-object-', (env) => ({ nc, js } = env));

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

/** `n` bytes of a deterministic pattern that differs per `seed`. */
function pattern(n, seed = 1) {
  const b = Buffer.alloc(n);
  let x = seed * 2654435761;
  for (let i = 0; i < n; i++) {
    x = (x * 1103515245 + 12345) >>> 0;
    b[i] = x >>> 24;
  }
  return b;
}

/** The ADR-20 digest of `data`: SHA-256, base64url with padding. */
function digestOf(data) {
  const b64 = crypto.createHash('sha256').update(data).digest('base64');
  return `SHA-256=${b64.replace(/\+/g, '-').replace(/\//g, '_')}`;
}

/** Pieces of `data` of `size` bytes each, as a Readable. */
function readableOf(data, size) {
  const pieces = [];
  for (let i = 0; i < data.length; i += size) pieces.push(data.subarray(i, i + size));
  return Readable.from(pieces, { objectMode: false });
}

/** Everything a Readable yields, through stream.pipeline. */
async function readAll(stream) {
  const parts = [];
  await pipeline(
    stream,
    new Writable({
      write(chunk, _enc, cb) {
        parts.push(chunk);
        cb();
      },
    }),
  );
  return Buffer.concat(parts);
}

async function withStore(bucket, fn, cfg = {}) {
  const os = await js.createObjectStore({ bucket, storage: 'memory', ...cfg });
  try {
    return await fn(os);
  } finally {
    os.close();
    await js.deleteObjectStore(bucket);
  }
}

/** Messages in the bucket's stream (chunks plus one meta per object). */
async function storedMessages(os) {
  return (await os.status()).streamInfo.state.messages;
}

test('round trips of 0 B, 1 B, one chunk, one chunk + 1 and 2 MiB, through streams and bytes', async () => {
  await withStore('RT', async (os) => {
    const cases = [
      ['empty', 0, 1024, 0],
      ['one-byte', 1, 1024, 1],
      ['one-chunk', 1024, 1024, 1],
      ['chunk-plus-one', 1025, 1024, 2],
    ];
    for (const [name, size, chunkSize, chunks] of cases) {
      const data = pattern(size, size + 1);
      // put from a Readable of 100-byte pieces (re-chunked by the library)
      const put = await os.put({ name, chunkSize }, readableOf(data, 100));
      assert.ok(put instanceof nats.ObjectInfo);
      assert.deepEqual(
        [put.name, put.bucket, put.size, put.chunks, put.digest, put.deleted],
        [name, 'RT', size, chunks, digestOf(data), false],
        name,
      );
      assert.ok(put.nuid.length > 0);
      assert.ok(Math.abs(put.mtime.getTime() - Date.now()) < 60000, 'mtime is now');
      const { info, stream } = await os.get(name);
      assert.deepEqual([info.name, info.size, info.chunks, info.digest, info.nuid], [name, size, chunks, put.digest, put.nuid]);
      assert.equal(stream.info, info);
      assert.ok((await readAll(stream)).equals(data), `${name}: the bytes read back`);
      assert.ok((await os.getBytes(name)).equals(data), `${name}: getBytes`);
      // The same through putBytes (one call) under another name.
      const again = await os.putBytes({ name: `${name}-bytes`, chunkSize }, data);
      assert.deepEqual([again.size, again.chunks, again.digest], [size, chunks, put.digest]);
      assert.ok((await os.getBytes(`${name}-bytes`)).equals(data));
    }

    // ~2 MiB through stream.pipeline both ways (default 128 KiB chunks).
    const big = pattern(2 * 1024 * 1024 + 123, 7);
    const ws = os.createWriteStream({ name: 'big', description: 'two MiB' });
    assert.ok(ws instanceof nats.ObjectWriteStream);
    await pipeline(readableOf(big, 64 * 1024 + 7), ws);
    assert.ok(ws.info instanceof nats.ObjectInfo, 'info set once finished');
    assert.deepEqual(
      [ws.info.size, ws.info.chunks, ws.info.digest, ws.info.description],
      [big.length, 17, digestOf(big), 'two MiB'],
    );
    const { info, stream } = await os.get('big');
    assert.equal(info.size, big.length);
    assert.ok((await readAll(stream)).equals(big), '2 MiB read back');
    // putString, and put of a plain string/Uint8Array/async generator.
    assert.equal((await os.putString('s', 'héllo')).size, 6);
    assert.equal((await os.getBytes('s')).toString(), 'héllo');
    async function* gen() {
      yield 'ab';
      yield new Uint8Array([99, 100]);
      yield Buffer.from('e');
    }
    assert.equal((await os.put('g', gen())).size, 5);
    assert.equal((await os.getBytes('g')).toString(), 'abcde');
    assert.equal((await os.put('u', new Uint8Array([1, 2, 3]))).size, 3);
    // Every reader and writer handle is freed as its stream ends (no
    // collection needed).
    await eventually(() => liveHandles().objectReaders === 0 && liveHandles().objectWriters === 0, 2000, 'freed');
  });
});

test('description, headers and metadata round trip; chunk size is recorded', async () => {
  await withStore('META', async (os) => {
    const put = await os.putBytes(
      {
        name: 'doc.txt',
        description: 'a document',
        headers: { 'Content-Type': 'text/plain', 'X-Tag': ['a', 'b'] },
        metadata: { owner: 'me', kind: 'text' },
        chunkSize: 4096,
      },
      'text',
    );
    for (const info of [put, await os.info('doc.txt'), (await os.get('doc.txt')).info]) {
      assert.equal(info.description, 'a document');
      assert.deepEqual(info.headers.get('Content-Type'), ['text/plain']);
      assert.deepEqual(info.headers.get('X-Tag'), ['a', 'b']);
      assert.deepEqual(info.metadata, { owner: 'me', kind: 'text' });
      assert.equal(info.options.max_chunk_size, 4096);
      assert.equal(info.isLink, false);
    }
    const plain = await os.putBytes('plain', 'x');
    assert.equal(plain.description, undefined);
    assert.equal(plain.headers, undefined);
    assert.deepEqual(plain.metadata, {});
    // Infos compare and print as plain data (no handle among their fields).
    assert.ok(!Object.keys(plain).includes('_handle'));
    assert.equal(JSON.parse(JSON.stringify({ ...plain, mtimeNanos: 0 })).name, 'plain');
  });
});

test('replace: the newer object wins and the old chunks are purged', async () => {
  await withStore('REP', async (os) => {
    const v1 = await os.putBytes({ name: 'o', chunkSize: 100 }, pattern(1000, 1));
    assert.equal(await storedMessages(os), 10 + 1);
    const v2 = await os.put({ name: 'o', chunkSize: 100 }, readableOf(pattern(250, 2), 64));
    assert.notEqual(v2.nuid, v1.nuid);
    assert.ok((await os.getBytes('o')).equals(pattern(250, 2)));
    assert.equal((await os.info('o')).digest, digestOf(pattern(250, 2)));
    assert.equal(await eventually(async () => (await storedMessages(os)) === 3 + 1, 3000, 'old chunks purged'), true);
    assert.equal((await os.list()).length, 1);
  });
});

test('delete: ObjectDeletedError (a kind of ObjectNotFoundError); showDeleted; list; never-existing objects', async () => {
  await withStore('DEL', async (os) => {
    await os.putBytes({ name: 'gone', chunkSize: 10 }, pattern(95));
    await os.putBytes('kept', 'k');
    await os.delete('gone');
    for (const call of [() => os.get('gone'), () => os.getBytes('gone'), () => os.info('gone')]) {
      await assert.rejects(call(), (e) => {
        assert.ok(e instanceof nats.ObjectDeletedError, `${e.name}: ${e.message}`);
        assert.ok(e instanceof nats.ObjectNotFoundError);
        assert.ok(e instanceof nats.NatsError);
        assert.equal(e.code, 'OBJECT_DELETED');
        assert.equal(e.status, nats.Status.OBJECT_DELETED);
        return true;
      });
    }
    const tomb = await os.info('gone', { showDeleted: true });
    assert.deepEqual([tomb.name, tomb.deleted, tomb.isDeleted, tomb.size, tomb.chunks], ['gone', true, true, 0, 0]);
    // Its 10 chunks are purged: one meta per object is left.
    assert.equal(await storedMessages(os), 1 + 1 + 1);
    assert.deepEqual((await os.list()).map((i) => i.name), ['kept']);
    assert.deepEqual(
      (await os.list({ includeDeleted: true })).map((i) => [i.name, i.deleted]).sort(),
      [['gone', true], ['kept', false]],
    );
    for (const call of [() => os.get('never'), () => os.info('never'), () => os.delete('never')]) {
      await assert.rejects(call(), (e) => {
        assert.ok(e instanceof nats.ObjectNotFoundError, `${e.name}: ${e.message}`);
        assert.ok(!(e instanceof nats.ObjectDeletedError));
        return true;
      });
    }
    // A deleted name can be used again.
    await os.putBytes('gone', 'back');
    assert.equal((await os.getBytes('gone')).toString(), 'back');
  });
});

test('updateMeta: description and metadata, rename, rename onto a live object refused', async () => {
  await withStore('REN', async (os) => {
    await os.putBytes({ name: 'a', description: 'first' }, 'data-a');
    await os.putBytes('b', 'data-b');
    await os.updateMeta('a', { description: 'changed', metadata: { v: '2' } });
    let a = await os.info('a');
    assert.deepEqual([a.description, a.metadata], ['changed', { v: '2' }]);
    // Rename: the data is reachable under the new name only.
    await os.updateMeta('a', { name: 'c', description: 'renamed' });
    const c = await os.info('c');
    assert.deepEqual([c.name, c.description, c.size], ['c', 'renamed', 6]);
    assert.equal((await os.getBytes('c')).toString(), 'data-a');
    await assert.rejects(os.info('a'), nats.ObjectNotFoundError);
    assert.deepEqual((await os.list()).map((i) => i.name).sort(), ['b', 'c']);
    // Onto a live object: refused, both unchanged.
    await rejectsWith(os.updateMeta('c', { name: 'b' }), nats.ObjectExistsError);
    assert.equal((await os.getBytes('b')).toString(), 'data-b');
    assert.equal((await os.getBytes('c')).toString(), 'data-a');
    // Onto a deleted name: allowed.
    await os.delete('b');
    await os.updateMeta('c', { name: 'b' });
    assert.equal((await os.getBytes('b')).toString(), 'data-a');
    // A deleted or missing object's meta cannot be updated.
    await os.putBytes('d', 'x');
    await os.delete('d');
    await rejectsWith(os.updateMeta('d', { description: 'x' }), nats.ObjectDeletedError);
    await rejectsWith(os.updateMeta('nope', { description: 'x' }), nats.ObjectNotFoundError);
    a = await os.info('b');
    assert.equal(a.name, 'b');
  });
});

test('links: to an object (same and other bucket), to a bucket; links to links and to deleted objects refused', async () => {
  await withStore('LNK', async (os) => {
    await withStore('LNK2', async (other) => {
      const target = await os.putBytes({ name: 'target', description: 'the data' }, 'linked bytes');
      const link = await os.addLink('link', target);
      assert.deepEqual(
        [link.name, link.bucket, link.isLink, link.options.link, link.digest, link.size],
        ['link', 'LNK', true, { bucket: 'LNK', name: 'target' }, '', 0],
      );
      // Reading the link reads the target (get's info is the target's).
      const { info, stream } = await os.get('link');
      assert.deepEqual([info.name, info.description, info.size], ['target', 'the data', 12]);
      assert.equal((await readAll(stream)).toString(), 'linked bytes');
      // info() does not follow it.
      assert.equal((await os.info('link')).isLink, true);
      // From another bucket, by info or by {bucket, name}.
      const far = await other.addLink('far', target);
      assert.deepEqual(far.options.link, { bucket: 'LNK', name: 'target' });
      assert.equal((await other.getBytes('far')).toString(), 'linked bytes');
      const byName = await other.addLink('by-name', { bucket: 'LNK', name: 'target' });
      assert.deepEqual(byName.options.link, { bucket: 'LNK', name: 'target' });
      // A link to a link: refused.
      await rejectsWith(os.addLink('chain', link), nats.ObjectLinkError);
      // A link onto a live object's name: refused.
      await os.putBytes('occupied', 'x');
      await rejectsWith(os.addLink('occupied', target), nats.ObjectExistsError);
      // A bucket link: stored, but not readable as an object.
      const bl = await os.addBucketLink('bucket-link', other);
      assert.deepEqual([bl.isLink, bl.options.link], [true, { bucket: 'LNK2' }]);
      assert.deepEqual((await os.addBucketLink('bucket-link-2', 'LNK2')).options.link, { bucket: 'LNK2' });
      await rejectsWith(os.get('bucket-link'), nats.ObjectLinkError);
      // To a deleted object: refused.
      await os.putBytes('doomed', 'd');
      await os.delete('doomed');
      await rejectsWith(os.addLink('to-deleted', await os.info('doomed', { showDeleted: true })), nats.ObjectLinkError);
      await rejectsWith(os.info('to-deleted'), nats.ObjectNotFoundError);
      // A link whose target was deleted since: reading it says so.
      await os.delete('target');
      await assert.rejects(os.getBytes('link'), nats.ObjectNotFoundError);
      // Bad targets.
      await assert.rejects(os.addLink('x', null), TypeError);
      await assert.rejects(os.addLink('x', { name: 'target' }), TypeError);
    });
  });
});

test('seal: the bucket stays readable, changes are refused with BucketSealedError', async () => {
  await withStore('SEAL', async (os) => {
    await os.putBytes('kept', 'still here');
    assert.equal((await os.status()).sealed, false);
    const st = await os.seal();
    assert.equal(st.sealed, true);
    assert.equal((await os.status()).sealed, true);
    await rejectsWith(os.putBytes('new', 'x'), nats.BucketSealedError);
    await rejectsWith(os.put('new', readableOf(pattern(5000), 1000)), nats.BucketSealedError);
    await rejectsWith(os.putBytes('kept', 'replaced'), nats.BucketSealedError);
    await rejectsWith(os.delete('kept'), nats.BucketSealedError);
    await rejectsWith(os.updateMeta('kept', { description: 'x' }), nats.BucketSealedError);
    const ws = os.createWriteStream('streamed');
    await assert.rejects(pipeline(readableOf(pattern(10), 5), ws), nats.BucketSealedError);
    assert.equal((await os.getBytes('kept')).toString(), 'still here');
    assert.deepEqual((await os.list()).map((i) => i.name), ['kept']);
  });
});

test('watch: initial infos, the initial-done marker, then updates and deletes; ignoreDeletes; updatesOnly', async () => {
  await withStore('WATCH', async (os) => {
    await os.putBytes('one', '1');
    await os.putBytes('two', '22');
    await os.putBytes('one', '111'); // the latest of each is initial
    const w = await os.watch();
    assert.ok(w instanceof nats.ObjectWatcher);
    assert.equal(w.bucket, 'WATCH');
    let initialized = false;
    w.initialized.then((v) => (initialized = v));
    const it = w[Symbol.asyncIterator]();
    const i1 = (await within(it.next(), 2000, 'first initial')).value;
    const i2 = (await within(it.next(), 2000, 'second initial')).value;
    assert.ok(i1 instanceof nats.ObjectInfo);
    assert.deepEqual(
      [[i1.name, i1.size], [i2.name, i2.size]].sort(),
      [['one', 3], ['two', 2]],
    );
    assert.equal(initialized, false, 'not initialized while initial infos are yielded');
    const pending = it.next(); // passes the marker, then waits for a change
    assert.equal(await within(w.initialized, 2000, 'initialized'), true);
    await os.putBytes('three', '333');
    const up = (await within(pending, 2000, 'update')).value;
    assert.deepEqual([up.name, up.size, up.deleted], ['three', 3, false]);
    await os.delete('two');
    const del = (await within(it.next(), 2000, 'delete')).value;
    assert.deepEqual([del.name, del.deleted], ['two', true]);
    await os.updateMeta('three', { description: 'meta only' });
    const meta = (await within(it.next(), 2000, 'meta update')).value;
    assert.deepEqual([meta.name, meta.description], ['three', 'meta only']);
    w.stop();
    assert.deepEqual(await it.next(), { value: undefined, done: true });
    assert.equal(await within(w.closed, 1500, 'closed'), undefined);

    // ignoreDeletes: the deleted 'two' is not an initial info, nor a later delete.
    const nd = await os.watch({ ignoreDeletes: true });
    const seen = [];
    const loop = (async () => {
      for await (const info of nd) seen.push([info.name, info.deleted]);
    })();
    assert.equal(await within(nd.initialized, 2000, 'ignoreDeletes initialized'), true);
    await eventually(() => seen.length === 2, 2000, 'initial infos');
    await os.delete('one');
    await os.putBytes('four', '4');
    await eventually(() => seen.length === 3, 2000, 'the put after the delete');
    assert.deepEqual(seen, [['one', false], ['three', false], ['four', false]]);
    nd.stop();
    await within(loop, 1000, 'loop end');

    // updatesOnly: nothing initial.
    const u = await os.watch({ updatesOnly: true });
    const first = u.next();
    assert.equal(await within(u.initialized, 2000, 'updatesOnly initialized'), true);
    await os.putBytes('five', '5');
    assert.equal((await within(first, 2000, 'update')).value.name, 'five');
    u.stop();

    // An empty bucket: initialized at once.
    await withStore('WATCH_EMPTY', async (empty) => {
      const we = await empty.watch();
      const next = we.next();
      assert.equal(await within(we.initialized, 2000, 'empty initialized'), true);
      await empty.putBytes('x', 'y');
      assert.equal((await within(next, 2000, 'first put')).value.name, 'x');
      we.stop();
    });
  });
});

test('list: every live object with its info; an empty bucket lists none', async () => {
  await withStore('LIST', async (os) => {
    assert.deepEqual(await os.list(), []);
    const names = ['a', 'b/c', 'with space', 'ünïcode', 'dots.and.more'];
    for (const [i, name] of names.entries()) await os.putBytes(name, pattern(i * 10, i));
    const list = await os.list();
    assert.deepEqual(list.map((i) => i.name).sort(), [...names].sort());
    for (const info of list) {
      const i = names.indexOf(info.name);
      assert.deepEqual([info.size, info.digest, info.bucket], [i * 10, digestOf(pattern(i * 10, i)), 'LIST']);
      assert.ok((await os.getBytes(info.name)).equals(pattern(i * 10, i)));
    }
  });
});

test("revision: the stream sequence of the object's info, after put, info, get, updateMeta, links and delete; list and watch agree", async () => {
  await withStore('OREV', async (os) => {
    const lastSeq = async () => (await js.streams.info('OBJ_OREV')).state.last_seq;
    const put1 = await os.putBytes('a', 'one');
    assert.equal(put1.revision, 2, 'its chunk at 1, its info at 2');
    assert.equal((await os.info('a')).revision, 2);
    // Replaced through a stream (two chunks, then its info); read back by info and get.
    const put2 = await os.put({ name: 'a', chunkSize: 1000 }, readableOf(pattern(1500, 2), 700));
    assert.equal(put2.revision, await lastSeq());
    assert.ok(put2.revision > put1.revision);
    assert.equal((await os.info('a')).revision, put2.revision);
    const { info: got, stream } = await os.get('a');
    assert.equal(got.revision, put2.revision);
    await readAll(stream);
    // A write stream's info is the stored one.
    const ws = os.createWriteStream('b');
    await pipeline(readableOf(pattern(10, 3), 5), ws);
    assert.equal(ws.info.revision, await lastSeq());
    assert.equal((await os.info('b')).revision, ws.info.revision);
    // updateMeta stores a new info.
    await os.updateMeta('a', { description: 'changed' });
    const updated = await os.info('a');
    assert.equal(updated.description, 'changed');
    assert.equal(updated.revision, await lastSeq());
    assert.ok(updated.revision > ws.info.revision);
    // Links: as stored, and as read back.
    const link = await os.addLink('to-a', updated);
    assert.equal(link.revision, await lastSeq());
    assert.equal((await os.info('to-a')).revision, link.revision);
    await withStore('OREV2', async (other) => {
      const bl = await os.addBucketLink('to-other', other);
      assert.equal(bl.revision, await lastSeq());
      assert.equal((await os.info('to-other')).revision, bl.revision);
    });
    // list and watch read the same revisions as info.
    const list = await os.list();
    assert.deepEqual(list.map((i) => i.name).sort(), ['a', 'b', 'to-a', 'to-other']);
    for (const i of list) assert.equal(i.revision, (await os.info(i.name)).revision, `list: ${i.name}`);
    const w = await os.watch();
    const it = w[Symbol.asyncIterator]();
    for (let n = 0; n < 4; n++) {
      const i = (await within(it.next(), 2000, `initial info ${n}`)).value;
      assert.equal(i.revision, (await os.info(i.name)).revision, `watch: ${i.name}`);
    }
    const pending = it.next(); // past the initial-done marker
    assert.equal(await within(w.initialized, 2000, 'initialized'), true);
    // A delete's tombstone is the newest info: the watch and info({ showDeleted }) read it.
    await os.delete('a');
    const gone = (await within(pending, 2000, 'delete')).value;
    assert.deepEqual([gone.name, gone.deleted], ['a', true]);
    assert.equal(gone.revision, await lastSeq());
    assert.ok(gone.revision > link.revision);
    const tomb = await os.info('a', { showDeleted: true });
    assert.equal(tomb.revision, gone.revision);
    w.stop();
  });
});

test('a write stream destroyed halfway, or a failing source, keeps the old version', async () => {
  await withStore('ABORT', async (os) => {
    const v1 = pattern(3000, 1);
    await os.putBytes({ name: 'doc', chunkSize: 1024 }, v1);
    const before = await storedMessages(os);
    assert.equal(before, 3 + 1);

    const ws = os.createWriteStream({ name: 'doc', chunkSize: 1024 });
    const failed = new Promise((resolve) => ws.on('error', resolve));
    for (let i = 0; i < 5; i++) {
      await new Promise((resolve, reject) => ws.write(pattern(1024, 10 + i), (e) => (e ? reject(e) : resolve())));
    }
    // Five chunks are published by now; then the writer is given up.
    const boom = new Error('given up');
    ws.destroy(boom);
    assert.equal(await failed, boom);
    assert.equal(ws.info, undefined);
    assert.ok((await os.getBytes('doc')).equals(v1), 'the old version is still read');
    assert.equal((await os.info('doc')).digest, digestOf(v1));
    await eventually(async () => (await storedMessages(os)) === before, 5000, 'the aborted chunks purged');

    // put() from a source that fails midway rejects with its error.
    async function* failing() {
      yield pattern(2048, 3);
      throw new Error('source broke');
    }
    await assert.rejects(os.put({ name: 'doc', chunkSize: 1024 }, failing()), /source broke/);
    // pipeline() into a write stream from a failing Readable.
    const src = new Readable({
      read() {
        this.push(pattern(1500, 4));
        this.destroy(new Error('readable broke'));
      },
    });
    await assert.rejects(pipeline(src, os.createWriteStream('doc')), /readable broke/);
    assert.ok((await os.getBytes('doc')).equals(v1), 'still the old version');
    await eventually(async () => (await storedMessages(os)) === before, 5000, 'the aborted chunks purged');
    await eventually(() => liveHandles().objectWriters === 0, 3000, 'writers freed');
  });
});

test('corrupted data: a digest mismatch fails the read stream with DigestMismatchError', async () => {
  await withStore('CORRUPT', async (os) => {
    const data = pattern(500, 9);
    const info = await os.putBytes('victim', data);
    assert.equal(info.chunks, 1);
    // Replace the one chunk with other bytes of the same length.
    const stream = `OBJ_CORRUPT`;
    const subject = `$O.CORRUPT.C.${info.nuid}`;
    const chunk = await js.streams.getMessage(stream, { lastBySubject: subject });
    assert.ok(chunk.data.equals(data));
    await js.streams.deleteMessage(stream, chunk.seq);
    await js.publish(subject, pattern(500, 10));
    const got = await os.get('victim');
    await rejectsWith(readAll(got.stream), nats.DigestMismatchError);
    await rejectsWith(os.getBytes('victim'), nats.DigestMismatchError);
  });
});

test('buckets: create, bind, update, createOrUpdate, names, statuses, delete, and their errors', async () => {
  const os = await js.objectStores.createObjectStore({
    bucket: 'BK',
    description: 'a bucket',
    storage: 'memory',
    ttl: '1h',
    metadata: { team: 'x' },
  });
  try {
    assert.ok(os instanceof nats.ObjectStore);
    assert.equal(os.bucket, 'BK');
    const st = await os.status();
    assert.deepEqual(
      [st.bucket, st.description, st.storage, st.ttl, st.sealed, st.replicas, st.backingStore],
      ['BK', 'a bucket', 'memory', 3600000, false, 1, 'JetStream'],
    );
    assert.equal(st.metadata.team, 'x');
    assert.equal(st.streamInfo.config.name, 'OBJ_BK');
    await os.putBytes('x', pattern(100));
    assert.ok((await os.status()).size > 100);

    // The same config again binds; another one is refused.
    (await js.createObjectStore({ bucket: 'BK', description: 'a bucket', storage: 'memory', ttl: '1h', metadata: { team: 'x' } })).close();
    await rejectsWith(js.createObjectStore({ bucket: 'BK', description: 'other', storage: 'memory' }), nats.BucketExistsError);
    const up = await js.updateObjectStore('BK', { description: 'updated', storage: 'memory' });
    assert.equal((await up.status()).description, 'updated');
    up.close();
    const cu = await js.objectStores.createOrUpdateObjectStore({ bucket: 'BK2', storage: 'memory' });
    cu.close();
    await rejectsWith(js.updateObjectStore({ bucket: 'NOPE', storage: 'memory' }), nats.BucketNotFoundError);

    const bound = await js.objectStore('BK');
    assert.equal((await bound.getBytes('x')).length, 100);
    bound.close();
    await rejectsWith(js.objectStore('NOPE'), nats.BucketNotFoundError);

    assert.deepEqual((await js.objectStoreNames()).sort(), ['BK', 'BK2']);
    const statuses = await js.objectStores.objectStoreStatuses();
    assert.deepEqual(statuses.map((s) => s.bucket).sort(), ['BK', 'BK2']);
    assert.equal(statuses.find((s) => s.bucket === 'BK').description, 'updated');

    assert.equal(await js.deleteObjectStore('BK2'), true);
    await rejectsWith(js.objectStore('BK2'), nats.BucketNotFoundError);
    await rejectsWith(js.deleteObjectStore('BK2'), nats.BucketNotFoundError);
    await rejectsWith(js.createObjectStore({ bucket: 'bad.name' }), nats.InvalidBucketNameError);
    await rejectsWith(js.createObjectStore({ bucket: 'BK3', ttl: 'soon' }), nats.ConfigError, 'ttl');
    await rejectsWith(js.createObjectStore({ storage: 'memory' }), nats.ConfigError, 'bucket');
    await assert.rejects(js.createObjectStore(42), TypeError);
    // A handle of a deleted bucket.
    const gone = await js.createObjectStore({ bucket: 'BK4', storage: 'memory' });
    await js.deleteObjectStore('BK4');
    await rejectsWith(gone.putBytes('x', 'y'), nats.BucketNotFoundError);
    gone.close();
  } finally {
    os.close();
    await js.deleteObjectStore('BK');
  }
});

test('bad input: empty and non-string names, bad meta and data; calls after close', async () => {
  await withStore('BAD', async (os) => {
    const calls = [
      () => os.putBytes('', 'x'),
      () => os.get(''),
      () => os.info(''),
      () => os.delete(''),
      () => os.getBytes(''),
      () => os.put('', gen()),
      () => os.addBucketLink('', 'BAD'),
    ];
    for (const call of calls) {
      await assert.rejects(call(), (e) => {
        assert.ok(e instanceof nats.InvalidObjectNameError, `${e.name}: ${e.message}`);
        assert.ok(e instanceof nats.ConfigError);
        return true;
      });
    }
    async function* gen() {
      yield 'x';
    }
    assert.throws(() => os.createWriteStream(''), nats.InvalidObjectNameError);
    await rejectsWith(os.updateMeta('', { description: 'x' }), nats.InvalidObjectNameError);
    await os.putBytes('ok', 'x');
    for (const name of [undefined, null, 42, {}, ['a']]) {
      await assert.rejects(os.putBytes(name, 'x'), TypeError);
      await assert.rejects(os.put({ name }, 'x'), TypeError);
      await assert.rejects(os.get(name), TypeError);
      await assert.rejects(os.info(name), TypeError);
      await assert.rejects(os.delete(name), TypeError);
      assert.throws(() => os.createWriteStream({ name }), TypeError);
    }
    await assert.rejects(os.putBytes('x', 42), TypeError);
    await assert.rejects(os.put('x', 42), TypeError);
    await assert.rejects(os.put('x', [42]), TypeError);
    await assert.rejects(os.putBytes({ name: 'x', chunkSize: 0 }, 'y'), TypeError);
    await assert.rejects(os.putBytes({ name: 'x', metadata: { a: 1 } }, 'y'), TypeError);
    await assert.rejects(os.putBytes({ name: 'x', description: 5 }, 'y'), TypeError);
    await assert.rejects(os.updateMeta('ok', null), TypeError);
    await assert.rejects(os.get('ok', 'yes'), TypeError);
    // Nothing was stored by any of these.
    assert.deepEqual((await os.list()).map((i) => i.name), ['ok']);

    // After close: every call rejects, an in-flight one finishes.
    const pending = os.getBytes('ok');
    os.close();
    os.close();
    assert.equal(os.isClosed, true);
    assert.equal((await pending).toString(), 'x');
    await rejectsWith(os.putBytes('y', 'z'), nats.IllegalStateError, 'closed');
    await rejectsWith(os.info('ok'), nats.IllegalStateError);
    await rejectsWith(os.watch(), nats.IllegalStateError);
    assert.throws(() => os.createWriteStream('y'), nats.IllegalStateError);
  });
});

test('handles dropped without close are freed by the garbage collector; an unread object frees its reader', async () => {
  await withStore('GCO', async (os) => {
    await os.putBytes({ name: 'o', chunkSize: 64 }, pattern(1000));
    const before = await settledHandles();
    await (async () => {
      for (let i = 0; i < 10; i++) {
        const b = await js.objectStore('GCO');
        await b.get('o'); // a reader never read
        b.createWriteStream('never'); // a writer never written
        await b.watch(); // a watch never iterated
      }
      const live = liveHandles();
      assert.equal(live.objectStores, before.objectStores + 10);
      assert.equal(live.objectReaders, before.objectReaders + 10);
      assert.equal(live.objectWriters, before.objectWriters + 10);
      assert.equal(live.objectWatches, before.objectWatches + 10);
    })();
    const live = await collectUntil(
      (l) =>
        l.objectStores === before.objectStores &&
        l.objectReaders === before.objectReaders &&
        l.objectWriters === before.objectWriters &&
        l.objectWatches === before.objectWatches &&
        l.objectInfos === before.objectInfos,
      'dropped buckets, readers, writers and watches',
    );
    assert.equal(live.clients, before.clients);
    // A read stream destroyed early frees its reader at once.
    const { stream } = await os.get('o');
    stream.destroy();
    await eventually(() => liveHandles().objectReaders === before.objectReaders, 2000, 'reader freed');
    assert.ok((await os.getBytes('o')).equals(pattern(1000)));
    assert.equal((await os.list()).length, 1, 'the never-written writer stored nothing');
  });
});

test('after nc.close(): object calls reject with ConnectionClosedError', async () => {
  // A connection of its own (the shared one stays open for other tests).
  const other = await nats.connect({ servers: nc.connectedUrl });
  const ojs = other.jetstream();
  const os = await ojs.createObjectStore({ bucket: 'CLOSED', storage: 'memory' });
  await os.putBytes('o', pattern(100));
  const ws = os.createWriteStream('w');
  await other.close();
  await rejectsWith(os.putBytes('p', 'x'), nats.ConnectionClosedError);
  await rejectsWith(os.info('o'), nats.ConnectionClosedError);
  await rejectsWith(os.get('o'), nats.ConnectionClosedError);
  await rejectsWith(os.watch(), nats.ConnectionClosedError);
  await rejectsWith(pipeline(readableOf(pattern(10), 5), ws), nats.ConnectionClosedError);
  os.close();
  ojs.close();
  assert.deepEqual((await js.objectStore('CLOSED').then((b) => b.list().finally(() => b.close()))).map((i) => i.name), ['o']);
  await js.deleteObjectStore('CLOSED');
});
