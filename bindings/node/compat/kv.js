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

const { u8, decoder, QueuedIterator, bindingConnection } = core[INTERNAL];
const { jsError, jsCall, JetStreamClientImpl } = jetstream[INTERNAL];

const KvWatchInclude = Object.freeze({ LastValue: '', AllHistory: 'history', UpdatesOnly: 'updates' });

/** The binding's JetStream context for what Kvm and Objm take: a
 * JetStreamClient of natsio/jetstream or a NatsConnection. */
function bindingJs(ncOrJs) {
  if (ncOrJs instanceof JetStreamClientImpl) return ncOrJs._js;
  return bindingConnection(ncOrJs).jetstream();
}

class KvEntryImpl {
  constructor(e, isUpdate) {
    this.bucket = e.bucket;
    this.key = e.key;
    this.rawKey = e.key;
    this.value = u8(e.value);
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
  constructor(kv, js) {
    this._kv = kv;
    this._js = js;
    this.bucket = kv.bucket;
  }

  async get(k, opts) {
    try {
      const e = opts?.revision > 0 ? await this._kv.get(k, { revision: opts.revision }) : await this._kv.get(k);
      return new KvEntryImpl(e);
    } catch (e) {
      if (e instanceof natsio.KeyDeletedError) {
        // nats.js hands back the marker itself.
        try {
          const sm = await this._js.streams.getMessage(`KV_${this.bucket}`, { lastBySubject: `$KV.${this.bucket}.${k}` });
          return markerEntry(this.bucket, k, sm);
        } catch {
          return null;
        }
      }
      if (e instanceof natsio.KeyNotFoundError) return null;
      throw jsError(e);
    }
  }

  async put(k, data, opts) {
    return jsCall(this._kv.put(k, data ?? core.Empty, opts?.previousSeq !== undefined ? { previousSeq: opts.previousSeq } : undefined));
  }

  async create(k, data, markerTTL) {
    try {
      return await this._kv.create(k, data ?? core.Empty, markerTTL);
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
    return jsCall(this._kv.update(k, data ?? core.Empty, version));
  }

  async delete(k, opts) {
    return jsCall(this._kv.delete(k, opts?.previousSeq !== undefined ? { last: opts.previousSeq } : undefined));
  }

  async purge(k, opts) {
    const o = {};
    if (opts?.previousSeq !== undefined) o.last = opts.previousSeq;
    if (opts?.ttl !== undefined) o.ttl = opts.ttl;
    return jsCall(this._kv.purge(k, o));
  }

  async keys(filter) {
    return mappedIterator(jsCall(this._kv.listKeys(filter)), (k) => k);
  }

  /** Every kept revision of the keys matching `key` (default every key),
   * oldest first, then the iterator ends. */
  async history(opts = {}) {
    const w = await jsCall(this._kv.watch(watchFlags({ key: opts.key, include: KvWatchInclude.AllHistory })));
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
          out._push(new KvEntryImpl(r.value, false));
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
    const w = await jsCall(this._kv.watch(watchFlags(opts)));
    return watchIterator(w, (e, isUpdate) => new KvEntryImpl(e, isUpdate));
  }

  async status() {
    return jsCall(this._kv.status());
  }

  async destroy() {
    return jsCall(this._js.kv.delete(this.bucket));
  }

  async close() {
    this._kv.close();
  }
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
  return c;
}

class Kvm {
  constructor(nc) {
    this._js = bindingJs(nc);
    this.js = nc instanceof JetStreamClientImpl ? nc : undefined;
  }

  /** Creates the bucket, or opens it when it exists (whatever its
   * configuration: as nats.js's create). */
  async create(name, opts) {
    try {
      return new Bucket(await this._js.kv.create(kvConfig(name, opts)), this._js);
    } catch (e) {
      if (e instanceof natsio.BucketExistsError) return this.open(name);
      throw jsError(e);
    }
  }

  async open(name) {
    return new Bucket(await jsCall(this._js.kv.bind(name)), this._js);
  }

  list() {
    return new jetstream[INTERNAL].ListerImpl(() => this._js.kv.statuses());
  }
}

module.exports = { Kvm, Bucket, KvWatchInclude };
// For the other compat modules; not nats.js API.
Object.defineProperty(module.exports, INTERNAL, { value: { bindingJs, mappedIterator, watchIterator } });
