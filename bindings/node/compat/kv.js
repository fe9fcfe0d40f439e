'use strict';
// natsio/kv: the shapes of nats.js 3.x's @nats-io/kv over this package's
// binding (see transport-node.js): new Kvm(nc | js).create/open, a KV whose get
// resolves null for a missing key and a DEL/PURGE entry for a deleted one,
// iterators for keys, history and watch (include: 'updates' and isUpdate
// as nats.js has them).

const natsio = require('../index.js');

const INTERNAL = Symbol.for('natsio.compat.internal');
const core = require('./transport-node.js');
const jetstream = require('./jetstream.js');

const { payload, decoder, QueuedIterator, bindingConnection } = core[INTERNAL];
const { jsError, jsCall, JetStreamClientImpl } = jetstream[INTERNAL];

// Codecs (nats.js's KvOptions.codec: { key: KvKeyCodec, value:
// KvPayloadCodec }). nats.js applies the key codec to each '.'-separated
// token ('*' and '>' kept) and the value codec to whole values. Its own
// Base64KeyCodec and NoopKvCodecs are run by the library here (the same
// wire form: standard base64 per token, padded), tagged with the built-in
// they stand for; a program's own codec objects run in JS around the
// binding's calls (never called off the JS thread), with nats.js's rules.
const BUILTIN = Symbol('natsio.compat.builtinCodec');

function perToken(key, step) {
  return key
    .split('.')
    .map((t) => (t === '*' || t === '>' ? t : step(t)))
    .join('.');
}

/** nats.js's Base64KeyCodec: each token btoa'd (standard alphabet, '='
 * padding). */
function Base64KeyCodec() {
  return Object.freeze({
    encode: (key) => perToken(key, btoa),
    decode: (key) => perToken(key, atob),
    [BUILTIN]: natsio.KeyCodecs.base64(),
  });
}

function NoopKvCodecs() {
  return {
    key: Object.freeze({ encode: (k) => k, decode: (k) => k, [BUILTIN]: null }),
    value: Object.freeze({
      encode: (v) => (typeof v === 'string' ? new TextEncoder().encode(v) : v),
      decode: (v) => v,
      [BUILTIN]: null,
    }),
  };
}

/** How a KvOptions.codec is applied: `native` (built-ins, by the library:
 * { key, value } for kv.withCodecs), or `js` (the codecs themselves);
 * null without codecs. */
function codecPlan(codec) {
  if (!codec) return null;
  const key = codec.key;
  const value = codec.value;
  const builtin = (c) => c === undefined || (c !== null && typeof c === 'object' && BUILTIN in c);
  if (builtin(key) && builtin(value)) {
    const k = key?.[BUILTIN] ?? undefined;
    const v = value?.[BUILTIN] ?? undefined;
    return k || v ? { native: { key: k, value: v }, storedKey: k ? key.encode : null } : null;
  }
  return { js: { key: key ?? NoopKvCodecs().key, value: value ?? NoopKvCodecs().value } };
}

/** A KV entry seen through a program's own codecs. */
function decodedEntry(e, codec) {
  const value = e.operation === 'PUT' ? codec.value.decode(payload(e.value)) : e.value;
  return { ...e, key: perToken(e.key, (t) => codec.key.decode(t)), value };
}

const KvWatchInclude = Object.freeze({ LastValue: '', AllHistory: 'history', UpdatesOnly: 'updates' });

/** The binding's JetStream context for what Kvm and Objm take: a
 * JetStreamClient of natsio/jetstream or a NatsConnection. */
function bindingJs(ncOrJs) {
  if (ncOrJs instanceof JetStreamClientImpl) return ncOrJs._js;
  return bindingConnection(ncOrJs).jetstream();
}

class KvEntryImpl {
  constructor(e, isUpdate, rawKey) {
    this.bucket = e.bucket;
    this.key = e.key;
    this.rawKey = rawKey ?? e.key;
    this.value = payload(e.value);
    this.created = e.created;
    this.revision = e.revision;
    this.delta = e.delta;
    this.operation = e.operation;
    this.length = this.value.length;
    if (isUpdate !== undefined) this.isUpdate = isUpdate;
  }

  string() {
    return decoder.decode(this.value);
  }

  json() {
    return JSON.parse(this.string());
  }
}

/** A deleted key's marker as nats.js's get returns it, read from the stream. */
function markerEntry(bucket, key, sm) {
  const op = sm.headers?.first('KV-Operation') ?? 'DEL';
  return new KvEntryImpl({ bucket, key, value: sm.data, created: sm.time, revision: sm.seq, delta: undefined, operation: op });
}

/** Whether a binding watcher has yielded its initial values: its
 * `initialized` settles when the iteration takes the library's marker,
 * before the entry after it is handed out, so this flag is set (a
 * reaction queued first) by the time that entry reaches the program. */
function initialFlag(watcher) {
  const flag = { done: false };
  watcher.initialized.then((v) => {
    flag.done = v;
  });
  return flag;
}

/**
 * nats.js's iterator of a watch over a binding watcher `w`, each entry
 * made by make(item, isUpdate). nats.js counts the consumer's pending
 * messages when the watch starts and marks an entry an update once that
 * many were seen: the last initial value is marked as an update too, and
 * so is it here (it is held until the next item or the end of the initial
 * values shows that it was the last).
 */
function watchIterator(w, make) {
  const initial = initialFlag(w);
  const out = new QueuedIterator();
  out.stop = () => {
    out._queue.length = 0;
    out._stop();
    w.stop();
  };
  out._onBreak = () => w.stop();
  const INIT = Symbol('initial values done');
  const initDone = w.initialized.then(() => INIT);
  (async () => {
    let held = null;
    const release = () => {
      if (held) out._push(make(held, true));
      held = null;
    };
    try {
      let pending = w.next();
      let init = false;
      for (;;) {
        const r = init ? await pending : await Promise.race([pending, initDone]);
        if (r === INIT) {
          init = true;
          release();
          continue;
        }
        if (r.done || out._done) break;
        pending = w.next();
        if (initial.done) {
          release();
          out._push(make(r.value, true));
        } else {
          if (held) out._push(make(held, false));
          held = r.value;
        }
      }
      release();
      out._stop();
    } catch (e) {
      out._stop(jsError(e));
    }
  })();
  return out;
}

/** nats.js's QueuedIterator of what a binding iterator yields, mapped by
 * `map` (undefined: skipped); stop() ends it. As nats.js's, it reads
 * ahead of the program without bound. */
function mappedIterator(sourcePromise, map) {
  const out = new QueuedIterator();
  let source = null;
  out.stop = () => {
    out._queue.length = 0;
    out._stop();
    source?.stop?.();
  };
  out._onBreak = () => source?.stop?.();
  (async () => {
    try {
      source = await sourcePromise;
      for await (const item of source) {
        if (out._done) break;
        const v = map(item, source);
        if (v !== undefined) out._push(v);
      }
      out._stop();
    } catch (e) {
      out._stop(jsError(e));
    }
  })();
  return out;
}

function watchFlags(opts = {}) {
  const include = opts.include ?? KvWatchInclude.LastValue;
  return {
    key: opts.key ?? '>',
    includeHistory: include === KvWatchInclude.AllHistory,
    updatesOnly: include === KvWatchInclude.UpdatesOnly,
    ignoreDeletes: Boolean(opts.ignoreDeletes),
    metaOnly: Boolean(opts.headers_only),
    resumeFromRevision: opts.resumeFromRevision,
  };
}

class Bucket {
  /** `plan`: codecPlan's, for the bucket's codecs. */
  constructor(kv, js, plan) {
    this._js = js;
    this.bucket = kv.bucket;
    this._kv = plan?.native ? kv.withCodecs(plan.native) : kv;
    /** A program's own codecs, applied here (null: none, or the library's). */
    this._codec = plan?.js ?? null;
    /** The stored form of a key under the library's key codec. */
    this._storedKey = plan?.storedKey ?? null;
  }

  /** The key as stored (a program's own key codec, per token). */
  _k(k) {
    return this._codec && typeof k === 'string' ? perToken(k, (t) => this._codec.key.encode(t)) : k;
  }

  _v(data) {
    return this._codec ? this._codec.value.encode(data) : data;
  }

  /** An entry of the binding as nats.js's, decoded by a program's codecs. */
  _entry(e, isUpdate) {
    return this._codec ? new KvEntryImpl(decodedEntry(e, this._codec), isUpdate, e.key) : new KvEntryImpl(e, isUpdate);
  }

  async get(k, opts) {
    const key = k;
    k = this._k(k);
    try {
      const e = opts?.revision > 0 ? await this._kv.get(k, { revision: opts.revision }) : await this._kv.get(k);
      return this._entry(e);
    } catch (e) {
      if (e instanceof natsio.KeyDeletedError) {
        // nats.js hands back the marker itself.
        try {
          const stored = this._storedKey ? this._storedKey(k) : k;
          const sm = await this._js.streams.getMessage(`KV_${this.bucket}`, { lastBySubject: `$KV.${this.bucket}.${stored}` });
          return markerEntry(this.bucket, key, sm);
        } catch {
          return null;
        }
      }
      if (e instanceof natsio.KeyNotFoundError) return null;
      throw jsError(e);
    }
  }

  async put(k, data, opts) {
    return jsCall(this._kv.put(this._k(k), this._v(data ?? core.Empty), opts?.previousSeq !== undefined ? { previousSeq: opts.previousSeq } : undefined));
  }

  async create(k, data, markerTTL) {
    try {
      return await this._kv.create(this._k(k), this._v(data ?? core.Empty), markerTTL);
    } catch (e) {
      if (e instanceof natsio.KeyExistsError) {
        // nats.js's create is a put expecting no revision: the server's error.
        const api = { code: 400, err_code: 10071, description: `wrong last sequence: ${e.revision ?? 0}` };
        throw new jetstream.JetStreamApiError(api, { cause: e });
      }
      throw jsError(e);
    }
  }

  async update(k, data, version) {
    return jsCall(this._kv.update(this._k(k), this._v(data ?? core.Empty), version));
  }

  async delete(k, opts) {
    return jsCall(this._kv.delete(this._k(k), opts?.previousSeq !== undefined ? { last: opts.previousSeq } : undefined));
  }

  async purge(k, opts) {
    const o = {};
    if (opts?.previousSeq !== undefined) o.last = opts.previousSeq;
    if (opts?.ttl !== undefined) o.ttl = opts.ttl;
    return jsCall(this._kv.purge(this._k(k), o));
  }

  async keys(filter) {
    const filters = Array.isArray(filter) ? filter.map((f) => this._k(f)) : this._k(filter);
    const decode = this._codec ? (k) => perToken(k, (t) => this._codec.key.decode(t)) : (k) => k;
    return mappedIterator(jsCall(this._kv.listKeys(filters)), decode);
  }

  /** Every kept revision of the keys matching `key` (default every key),
   * oldest first, then the iterator ends. */
  async history(opts = {}) {
    const w = await jsCall(this._kv.watch(watchFlags({ key: this._filter(opts.key), include: KvWatchInclude.AllHistory })));
    const initial = initialFlag(w);
    const out = new QueuedIterator();
    out.stop = () => {
      out._stop();
      w.stop();
    };
    out._onBreak = () => w.stop();
    (async () => {
      try {
        for (;;) {
          const r = await Promise.race([w.next(), w.initialized.then(() => null)]);
          // The initial values are over (the entry after them is a change).
          if (r === null || r.done || initial.done) break;
          out._push(this._entry(r.value, false));
        }
        w.stop();
        out._stop();
      } catch (e) {
        out._stop(jsError(e));
      }
    })();
    return out;
  }

  /** nats.js's watch: entries of the keys matching `key`, each with
   * isUpdate; include: '' (last values), 'history', 'updates' (changes
   * only). */
  async watch(opts = {}) {
    const w = await jsCall(this._kv.watch(watchFlags({ ...opts, key: this._filter(opts.key) })));
    return watchIterator(w, (e, isUpdate) => this._entry(e, isUpdate));
  }

  /** A watch filter (a key, or keys) as stored. */
  _filter(key) {
    if (key === undefined) return undefined;
    return Array.isArray(key) ? key.map((k) => this._k(k)) : this._k(key);
  }

  async status() {
    return kvStatus(await jsCall(this._kv.status()));
  }

  async destroy() {
    return jsCall(this._js.kv.delete(this.bucket));
  }

  async close() {
    this._kv.close();
  }
}

/** nats.js's KvStatus from the binding's: with the stream's placement and
 * republish (nats.js's empty ones when the stream has none). */
function kvStatus(st) {
  const cfg = st.streamInfo?.config ?? {};
  st.placement = cfg.placement || { cluster: '', tags: [] };
  st.republish = cfg.republish ?? { src: '', dest: '' };
  return st;
}

/** The binding's KeyValueConfig for nats.js's KvOptions. */
function kvConfig(name, opts = {}) {
  const c = { bucket: name };
  const ms = (v) => Math.round(v * 1e6);
  if (opts.history !== undefined) c.history = opts.history;
  if (opts.ttl) c.ttl = ms(opts.ttl);
  const maxBytes = opts.max_bytes ?? opts.maxBucketSize;
  if (maxBytes !== undefined) c.max_bytes = maxBytes;
  if (opts.maxValueSize !== undefined) c.max_value_size = opts.maxValueSize;
  if (opts.storage !== undefined) c.storage = opts.storage;
  if (opts.replicas !== undefined) c.replicas = opts.replicas;
  if (opts.description !== undefined) c.description = opts.description;
  if (opts.compression !== undefined) c.compression = Boolean(opts.compression);
  if (opts.metadata !== undefined) c.metadata = opts.metadata;
  if (opts.placement !== undefined) c.placement = opts.placement;
  if (opts.republish !== undefined) c.republish = opts.republish;
  if (opts.markerTTL) {
    c.allow_msg_ttl = true;
    c.limit_marker_ttl = ms(opts.markerTTL);
  }
  // As nats.js's init: a mirror wins over sources.
  if (opts.mirror) c.mirror = { ...opts.mirror };
  else if (opts.sources) c.sources = opts.sources.map((s) => bucketSource(s, name));
  return c;
}

const KV_PREFIX = 'KV_';

/** One of KvOptions.sources as nats.js's init makes it for bucket `name`:
 * `KV_` added, and a source without `external` (a `domain` counts as
 * none) of another bucket gets the transform of its keys into this
 * bucket's, replacing any it has. The library adds the same transform to
 * a source without one, but keeps a source's own transforms and maps an
 * `external` one of another bucket too (as nats.go): nats.js's choice is
 * made here, its transforms handed over as given (the library still turns
 * a `domain` into `external`, for every stream source). */
function bucketSource(source, name) {
  const s = { ...source };
  if (typeof s.name !== 'string' || s.external) return s; // the library's checks and mapping
  const from = s.name.startsWith(KV_PREFIX) ? s.name.slice(KV_PREFIX.length) : s.name;
  // The same bucket (nats.js adds nothing) or a bad name: the library's
  // (it reports ConfigError naming the field).
  if (from === name || !/^[-\w]+$/.test(from)) return s;
  s.name = KV_PREFIX + from;
  s.subject_transforms = [{ src: `$KV.${from}.>`, dest: `$KV.${name}.>` }];
  return s;
}

/** nats.js's defaultBucketOpts(): the options a bucket gets when create()
 * is given none. */
function defaultBucketOpts() {
  return {
    replicas: 1,
    history: 1,
    timeout: 2000,
    max_bytes: -1,
    maxValueSize: -1,
    codec: NoopKvCodecs(),
    storage: jetstream.StorageType.File,
  };
}

/** The JetStreamClient of a Kvm or Objm (nats.js's `js`): the one given,
 * or, for a NatsConnection, one with the default options (made when first
 * read). */
function jsClientOf(nc) {
  let client = nc instanceof JetStreamClientImpl ? nc : undefined;
  return () => (client ??= jetstream.jetstream(nc));
}

class Kvm {
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
    const plan = codecPlan(opts?.codec);
    try {
      return new Bucket(await this._js.kv.create(kvConfig(name, opts)), this._js, plan);
    } catch (e) {
      if (e instanceof natsio.BucketExistsError) return this.open(name, opts);
      throw jsError(e);
    }
  }

  /** Opens an existing bucket; opts.codec as create's. */
  async open(name, opts) {
    return new Bucket(await jsCall(this._js.kv.bind(name)), this._js, codecPlan(opts?.codec));
  }

  list() {
    return new jetstream[INTERNAL].ListerImpl(async () => (await this._js.kv.statuses()).map(kvStatus));
  }
}

module.exports = { Kvm, Bucket, KvWatchInclude, Base64KeyCodec, NoopKvCodecs, defaultBucketOpts };
// For the other compat modules; not nats.js API.
Object.defineProperty(module.exports, INTERNAL, { value: { bindingJs, jsClientOf, mappedIterator, watchIterator } });
