'use strict';
// natsio/obj: the shapes of nats.js 3.x's @nats-io/obj over this package's
// binding (see transport-node.js): new Objm(nc | js).create/open, an ObjectStore
// whose info and get resolve null for a missing object (info: the deleted
// info for a deleted one), web streams for data, watch as nats.js's.

const { Readable } = require('node:stream');
const natsio = require('../index.js');

const INTERNAL = Symbol.for('natsio.compat.internal');
const core = require('./transport-node.js');
const jetstream = require('./jetstream.js');
const kv = require('./kv.js');

const { u8, hdrsFrom, hdrsTo } = core[INTERNAL];
const { jsError, jsCall, ListerImpl } = jetstream[INTERNAL];
const { bindingJs, jsClientOf, watchIterator } = kv[INTERNAL];

/** RFC 3339 with nanoseconds, as the server writes mtime. */
function mtimeString(nanos) {
  const ms = nanos / 1000000n;
  const iso = new Date(Number(ms)).toISOString();
  const frac = String(nanos % 1000000000n).padStart(9, '0').replace(/0+$/, '');
  return `${iso.slice(0, 19)}${frac ? `.${frac}` : ''}Z`;
}

/** The server's JSON of an object's info (what nats.js's watch yields). */
function infoJson(i) {
  const o = { name: i.name };
  if (i.description) o.description = i.description;
  if (i.headers) o.headers = Object.fromEntries(i.headers);
  if (Object.keys(i.options).length) o.options = { ...i.options };
  if (Object.keys(i.metadata).length) o.metadata = { ...i.metadata };
  o.bucket = i.bucket;
  o.nuid = i.nuid;
  o.size = Number(i.size);
  o.mtime = mtimeString(i.mtimeNanos);
  o.chunks = i.chunks;
  if (i.digest) o.digest = i.digest;
  if (i.deleted) o.deleted = true;
  return o;
}

/** nats.js's ObjectInfo: fields, and isLink() as a method. */
class ObjectInfoImpl {
  constructor(i) {
    this.name = i.name;
    this.description = i.description ?? '';
    this.headers = hdrsFrom(i.headers) ?? core.headers();
    this.options = { ...i.options };
    this.bucket = i.bucket;
    this.nuid = i.nuid;
    this.size = Number(i.size);
    this.chunks = i.chunks;
    this.digest = i.digest;
    this.deleted = Boolean(i.deleted);
    this.mtime = mtimeString(i.mtimeNanos);
    this.revision = i.revision;
    this.metadata = { ...i.metadata };
  }

  isLink() {
    return this.options.link !== undefined && this.options.link !== null;
  }
}

function isMissing(e) {
  return e instanceof natsio.ObjectNotFoundError;
}

/** nats.js's meta: headers as MsgHdrs, options.max_chunk_size. */
function bindingMeta(meta) {
  if (typeof meta === 'string') return meta;
  const m = { name: meta.name };
  if (meta.description !== undefined) m.description = meta.description;
  if (meta.headers !== undefined) m.headers = hdrsTo(meta.headers);
  if (meta.metadata !== undefined) m.metadata = meta.metadata;
  if (meta.options?.max_chunk_size) m.chunkSize = meta.options.max_chunk_size;
  return m;
}

class ObjectStoreImpl {
  constructor(os, js) {
    this._os = os;
    this._js = js;
    this.name = os.bucket;
  }

  async info(name) {
    try {
      return new ObjectInfoImpl(await this._os.info(name, { showDeleted: true }));
    } catch (e) {
      if (isMissing(e)) return null;
      throw jsError(e);
    }
  }

  async list() {
    return (await jsCall(this._os.list())).map((i) => new ObjectInfoImpl(i));
  }

  async get(name) {
    let r;
    try {
      r = await this._os.get(name);
    } catch (e) {
      if (isMissing(e)) return null;
      throw jsError(e);
    }
    let settle;
    const error = new Promise((resolve) => {
      settle = resolve;
    });
    // nats.js resolves it with undefined once the data was read whole.
    r.stream.once('end', () => settle(undefined));
    r.stream.once('error', (e) => settle(jsError(e)));
    return { info: new ObjectInfoImpl(r.info), data: Readable.toWeb(r.stream), error };
  }

  async getBlob(name) {
    try {
      return u8(await this._os.getBytes(name));
    } catch (e) {
      if (isMissing(e)) return null;
      throw jsError(e);
    }
  }

  async put(meta, rs) {
    return new ObjectInfoImpl(await jsCall(this._os.put(bindingMeta(meta), rs ?? core.Empty)));
  }

  async putBlob(meta, data) {
    return new ObjectInfoImpl(await jsCall(this._os.putBytes(bindingMeta(meta), data ?? core.Empty)));
  }

  /** Resolves as nats.js's: the purge of the object's chunks. */
  async delete(name) {
    const info = await this.info(name);
    if (info === null || info.deleted) return { purged: 0, success: false };
    await jsCall(this._os.delete(name));
    return { success: true, purged: info.chunks };
  }

  async link(name, meta) {
    return new ObjectInfoImpl(await jsCall(this._os.addLink(name, { bucket: meta.bucket, name: meta.name })));
  }

  async linkStore(name, bucket) {
    return new ObjectInfoImpl(await jsCall(this._os.addBucketLink(name, bucket.name ?? bucket)));
  }

  /** nats.js's watch: changes only, or with includeHistory the latest info
   * of each object first; deleted infos unless ignoreDeletes. Entries are
   * the infos' JSON with revision (which nats.js's lack) and isUpdate. */
  async watch(opts = {}) {
    const w = await jsCall(
      this._os.watch({ updatesOnly: !opts.includeHistory, ignoreDeletes: Boolean(opts.ignoreDeletes) }),
    );
    return watchIterator(w, (i, isUpdate) => ({ ...infoJson(i), revision: i.revision, isUpdate }));
  }

  async seal() {
    await jsCall(this._os.seal());
    return this.status();
  }

  async status() {
    const s = await jsCall(this._os.status());
    return {
      bucket: s.bucket,
      description: s.description ?? '',
      ttl: Math.round(s.ttl * 1e6),
      storage: s.storage,
      replicas: s.replicas,
      sealed: s.sealed,
      size: s.size,
      backingStore: 'JetStream',
      streamInfo: s.streamInfo,
      metadata: s.metadata,
      compression: s.compression,
    };
  }

  async update(name, meta) {
    await jsCall(this._os.updateMeta(name, bindingMeta({ name, ...meta })));
  }

  async destroy() {
    return jsCall(this._js.objectStores.deleteObjectStore(this.name));
  }
}

function objConfig(name, opts = {}) {
  const c = { bucket: name };
  for (const k of ['description', 'storage', 'replicas', 'max_bytes', 'placement', 'metadata']) {
    if (opts[k] !== undefined) c[k] = opts[k];
  }
  if (opts.ttl) c.ttl = opts.ttl; // nanoseconds, as nats.js takes it
  if (opts.compression !== undefined) c.compression = Boolean(opts.compression);
  return c;
}

class Objm {
  constructor(nc) {
    this._js = bindingJs(nc);
    this._client = jsClientOf(nc);
  }

  /** The JetStreamClient given, or made for the NatsConnection given. */
  get js() {
    return this._client();
  }

  /** Creates the bucket, or opens it when it exists (whatever its
   * configuration: as nats.js's create). */
  async create(name, opts) {
    try {
      return new ObjectStoreImpl(await this._js.objectStores.createObjectStore(objConfig(name, opts)), this._js);
    } catch (e) {
      if (e instanceof natsio.BucketExistsError) return this.open(name);
      throw jsError(e);
    }
  }

  async open(name) {
    return new ObjectStoreImpl(await jsCall(this._js.objectStores.objectStore(name)), this._js);
  }

  list() {
    return new ListerImpl(async () => (await this._js.objectStores.objectStoreStatuses()).map((s) => ({ ...s, backingStore: 'JetStream' })));
  }
}

const StorageType = jetstream.StorageType;

// nats.js's base64 codecs (static encode/decode; decode gives a binary
// string, or bytes when `binary`): the digest and the info's encodings.
class Base64Codec {
  static encode(bytes) {
    return typeof bytes === 'string' ? btoa(bytes) : Buffer.from(bytes).toString('base64');
  }

  static decode(s, binary = false) {
    const bin = atob(s);
    return binary ? Uint8Array.from(bin, (c) => c.charCodeAt(0)) : bin;
  }
}

class Base64UrlCodec {
  static encode(bytes) {
    return Base64UrlCodec.toB64URLEncoding(Base64Codec.encode(bytes));
  }

  static decode(s, binary = false) {
    return Base64Codec.decode(Base64UrlCodec.fromB64URLEncoding(s), binary);
  }

  static toB64URLEncoding(b64str) {
    return b64str.replace(/=/g, '').replace(/\+/g, '-').replace(/\//g, '_');
  }

  static fromB64URLEncoding(b64str) {
    return b64str.replace(/_/g, '/').replace(/-/g, '+');
  }
}

class Base64UrlPaddedCodec {
  static encode(bytes) {
    return Base64UrlPaddedCodec.toB64URLEncoding(Base64Codec.encode(bytes));
  }

  static decode(s, binary = false) {
    return Base64UrlCodec.decode(Base64UrlPaddedCodec.fromB64URLEncoding(s), binary);
  }

  static toB64URLEncoding(b64str) {
    return b64str.replace(/\+/g, '-').replace(/\//g, '_');
  }

  static fromB64URLEncoding(b64str) {
    return b64str.replace(/_/g, '/').replace(/-/g, '+');
  }
}

module.exports = { Objm, StorageType, Base64Codec, Base64UrlCodec, Base64UrlPaddedCodec };
