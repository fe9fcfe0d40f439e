'use strict';
// natsio/transport-node: the shapes of nats.js 3.x's @nats-io/transport-node
// (and @nats-io/nats-core, which it re-exports) over this package's
// binding, so that a nats.js program moves by changing its import lines.
// A thin facade: the work is done by index.js and its addon; this file
// renames, reshapes and maps errors to nats.js's classes. Where nats.js's
// observable behaviour differs from the binding's and a program can depend
// on it, this follows nats.js (see the README's "Moving from nats.js").

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const crypto = require('node:crypto');
const natsio = require('../index.js');

const INTERNAL = Symbol.for('natsio.compat.internal');

// ---------------------------------------------------------------------------
// Errors: nats-core's classes, names and messages.

class InvalidSubjectError extends Error {
  constructor(subject, options) {
    super(`illegal subject: '${subject}'`, options);
    this.name = 'InvalidSubjectError';
  }
}

class InvalidArgumentError extends Error {
  constructor(message, options) {
    super(message, options);
    this.name = 'InvalidArgumentError';
  }

  static format(property, message, options) {
    const names = Array.isArray(property) ? property.map((n) => `'${n}'`).join(',') : `'${property}'`;
    return new InvalidArgumentError(`${names} ${message}`, options);
  }
}

class InvalidOperationError extends Error {
  constructor(message, options) {
    super(message, options);
    this.name = 'InvalidOperationError';
  }
}

class UserAuthenticationExpiredError extends Error {
  constructor(message, options) {
    super(message, options);
    this.name = 'UserAuthenticationExpiredError';
  }
}

class AuthorizationError extends Error {
  constructor(message, options) {
    super(message, options);
    this.name = 'AuthorizationError';
  }
}

class ClosedConnectionError extends Error {
  constructor() {
    super('closed connection');
    this.name = 'ClosedConnectionError';
  }
}

class DrainingConnectionError extends Error {
  constructor() {
    super('connection draining');
    this.name = 'DrainingConnectionError';
  }
}

class ConnectionError extends Error {
  constructor(message, options) {
    super(message, options);
    this.name = 'ConnectionError';
  }
}

class ProtocolError extends Error {
  constructor(message, options) {
    super(message, options);
    this.name = 'ProtocolError';
  }
}

class RequestError extends Error {
  constructor(message = '', options) {
    super(message, options);
    this.name = 'RequestError';
  }

  isNoResponders() {
    return this.cause instanceof NoRespondersError;
  }
}

class TimeoutError extends Error {
  constructor(options) {
    super('timeout', options);
    this.name = 'TimeoutError';
  }
}

class NoRespondersError extends Error {
  constructor(subject, options) {
    super(`no responders: '${subject}'`, options);
    this.subject = subject;
    // nats.js's own spelling.
    this.name = 'NoResponders';
  }
}

class PermissionViolationError extends Error {
  constructor(message, operation, subject, queue, options) {
    super(message, options);
    this.name = 'PermissionViolationError';
    this.operation = operation;
    this.subject = subject;
    this.queue = queue;
  }
}

const errors = {
  AuthorizationError,
  ClosedConnectionError,
  ConnectionError,
  DrainingConnectionError,
  InvalidArgumentError,
  InvalidOperationError,
  InvalidSubjectError,
  NoRespondersError,
  PermissionViolationError,
  ProtocolError,
  RequestError,
  TimeoutError,
  UserAuthenticationExpiredError,
};

/** The nats.js error for a binding error `e` (others are returned as
 * they are); `subject` names what a request or publish was about. */
function coreError(e, subject) {
  if (!(e instanceof natsio.NatsError)) return e;
  const options = { cause: e };
  switch (e.code) {
    case 'TIMEOUT':
      return new TimeoutError(options);
    case 'NO_RESPONDERS':
      return new RequestError(`no responders: '${subject}'`, { cause: new NoRespondersError(subject, options) });
    case 'CONNECTION_CLOSED':
      return new ClosedConnectionError();
    case 'NO_SERVERS':
      // nats.js names a refused connection so, without the address.
      return new ConnectionError(/connection refused/i.test(e.message) ? 'connection refused' : e.message, options);
    case 'BAD_SUBJECT':
      return new InvalidSubjectError(subject ?? '', options);
    case 'AUTHORIZATION':
      return new AuthorizationError(e.message, options);
    case 'AUTH_EXPIRED':
      return new UserAuthenticationExpiredError(e.message, options);
    case 'PERMISSIONS':
      return new PermissionViolationError(e.message, 'publish', subject ?? '', undefined, options);
    case 'INVALID_ARGUMENT':
    case 'BAD_QUEUE_NAME':
      return new InvalidArgumentError(e.message, options);
    case 'PROTOCOL':
    case 'PARSER':
      return new ProtocolError(e.message, options);
    default:
      return e;
  }
}

/** Calls `fn`, throwing its error as nats.js's. */
function mapped(fn, subject) {
  try {
    return fn();
  } catch (e) {
    throw coreError(e, subject);
  }
}

// ---------------------------------------------------------------------------
// Small helpers nats-core exports.

const Empty = new Uint8Array(0);

const NUID_DIGITS = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** nats.js's Nuid: 22 base-62 digits, a random prefix and a sequence. */
class Nuid {
  constructor() {
    this.reset();
  }

  reset() {
    this._prefix = Array.from(crypto.randomBytes(12), (b) => NUID_DIGITS[b % 62]).join('');
    this._seq = crypto.randomInt(0, 62 ** 8);
    this._inc = 33 + crypto.randomInt(0, 300);
  }

  next() {
    this._seq += this._inc;
    if (this._seq >= 62 ** 10) this.reset();
    let n = this._seq;
    let tail = '';
    for (let i = 0; i < 10; i++) {
      tail = NUID_DIGITS[n % 62] + tail;
      n = Math.floor(n / 62);
    }
    return this._prefix + tail;
  }
}

const nuid = new Nuid();

function createInbox(prefix = '') {
  return `${prefix || '_INBOX'}.${nuid.next()}`;
}

function nanos(millis) {
  return millis * 1000000;
}

function millis(ns) {
  return Math.floor(ns / 1000000);
}

function deferred() {
  let resolve;
  let reject;
  const promise = new Promise((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return Object.assign(promise, { resolve, reject });
}

function delay(ms = 0) {
  let timer;
  const d = deferred();
  timer = setTimeout(() => d.resolve(), ms);
  d.cancel = () => {
    clearTimeout(timer);
    d.resolve();
  };
  return d;
}

/** nats.js's timeout(): a promise rejected with TimeoutError after `ms`
 * unless cancel() is called first (then it never settles). With
 * asyncTraces (the default) the error's stack is the caller's. */
function timeout(ms, asyncTraces = true) {
  const early = asyncTraces ? new TimeoutError() : null;
  let timer;
  const p = new Promise((_resolve, reject) => {
    timer = setTimeout(() => reject(early ?? new TimeoutError()), ms);
  });
  return Object.assign(p, { cancel: () => clearTimeout(timer) });
}

/** nats.js's deadline(): `p`'s outcome, or TimeoutError when it takes
 * longer than `millis`. */
async function deadline(p, millis = 1000) {
  const late = timeout(millis, false);
  try {
    return await Promise.race([p, late]);
  } finally {
    late.cancel();
  }
}

/** A delay of about `n` ms: uniformly in [n/2, 3n/2), 0 for 0 (nats.js's
 * jitter of a backoff step). */
function jitter(n) {
  return n === 0 ? 0 : Math.floor(n / 2 + Math.random() * n);
}

/** nats.js's backoff(): {backoff(attempt)}, the policy's step for the
 * attempt (the last step past its end), jittered. */
function backoff(policy = [0, 250, 250, 500, 500, 3000, 5000]) {
  if (!Array.isArray(policy)) policy = [0, 250, 250, 500, 500, 3000, 5000];
  const max = policy.length - 1;
  return { backoff: (attempt) => jitter(attempt > max ? policy[max] : policy[attempt]) };
}

/** nats.js's collect(): every value of an async iterable, in an array. */
async function collect(iter) {
  const out = [];
  for await (const v of iter) out.push(v);
  return out;
}

/** nats.js's syncIterator(): pull-style reading of an async iterable,
 * next() resolving with the next value or null at the end. */
function syncIterator(src) {
  const iter = src[Symbol.asyncIterator]();
  return {
    async next() {
      const r = await iter.next();
      return r.done ? null : r.value;
    },
  };
}

/** nats.js's default of ConnectionOptions.maxReconnectAttempts, which
 * connect() passes on when the options do not set it (the binding's own
 * default is 60). */
const DEFAULT_MAX_RECONNECT_ATTEMPTS = 10;

/** nats.js's hasWsProtocol(): whether any of the options' servers is a
 * ws:// or wss:// URL. */
function hasWsProtocol(opts) {
  let servers = opts?.servers;
  if (typeof servers === 'string') servers = [servers];
  return Boolean(servers?.some((s) => /^wss?:\/\//i.test(s)));
}

const Match = Object.freeze({ Exact: 'exact', CanonicalMIME: 'canonical', IgnoreCase: 'insensitive' });

function canonicalMIMEHeaderKey(k) {
  return k
    .split('-')
    .map((w) => (w.length ? w[0].toUpperCase() + w.slice(1).toLowerCase() : w))
    .join('-');
}

// ---------------------------------------------------------------------------
// Headers: nats.js's MsgHdrs (get returns one string, '' when absent).

class MsgHdrsImpl {
  constructor(code = 0, description = '') {
    this._code = code;
    this._description = description;
    this.headers = new Map();
  }

  [Symbol.iterator]() {
    return this.headers.entries();
  }

  size() {
    return this.headers.size;
  }

  keys() {
    return [...this.headers.keys()];
  }

  findKeys(k, match = Match.Exact) {
    const keys = this.keys();
    if (match === Match.Exact) return keys.filter((v) => v === k);
    if (match === Match.CanonicalMIME) {
      const ck = canonicalMIMEHeaderKey(k);
      return keys.filter((v) => v === ck);
    }
    const lk = k.toLowerCase();
    return keys.filter((v) => v.toLowerCase() === lk);
  }

  get(k, match = Match.Exact) {
    const keys = this.findKeys(k, match);
    return keys.length ? (this.headers.get(keys[0])?.[0] ?? '') : '';
  }

  last(k, match = Match.Exact) {
    const keys = this.findKeys(k, match);
    const v = keys.length ? this.headers.get(keys[0]) : undefined;
    return v && v.length ? v[v.length - 1] : '';
  }

  has(k, match = Match.Exact) {
    return this.findKeys(k, match).length > 0;
  }

  set(k, v, match = Match.Exact) {
    this.delete(k, match);
    this.append(k, v, match);
  }

  append(k, v, match = Match.Exact) {
    if (match === Match.CanonicalMIME) k = canonicalMIMEHeaderKey(k);
    const keys = this.findKeys(k, match);
    const key = keys.length ? keys[0] : k;
    const value = String(v).trim();
    if (/[\r\n]/.test(value)) throw InvalidArgumentError.format('value', 'invalid header value - \\r and \\n are not allowed');
    const values = this.headers.get(key);
    if (values) values.push(value);
    else this.headers.set(key, [value]);
  }

  values(k, match = Match.Exact) {
    return this.findKeys(k, match).flatMap((key) => this.headers.get(key) ?? []);
  }

  delete(k, match = Match.Exact) {
    for (const key of this.findKeys(k, match)) this.headers.delete(key);
  }

  get hasError() {
    return this._code >= 300;
  }

  get status() {
    return `${this._code} ${this._description}`.trim();
  }

  get code() {
    return this._code;
  }

  get description() {
    return this._description;
  }

  toRecord() {
    return Object.fromEntries([...this.headers].map(([k, v]) => [k, [...v]]));
  }

  static fromRecord(r) {
    const h = new MsgHdrsImpl();
    for (const [k, v] of Object.entries(r)) h.headers.set(k, [...v]);
    return h;
  }
}

function headers(code = 0, description = '') {
  if (code === 0 && description !== '') throw InvalidArgumentError.format('code', 'is required');
  if (code > 0 && description === '') throw InvalidArgumentError.format('description', 'is required');
  return new MsgHdrsImpl(code, description);
}

/** MsgHdrs from the binding's MsgHeaders (a Map of string[]) and inline
 * status; undefined when the message has neither. */
function hdrsFrom(map, status = 0, description = '') {
  if (!map && !status) return undefined;
  const h = new MsgHdrsImpl(status, description ?? '');
  if (map) for (const [k, v] of map) h.headers.set(k, [...v]);
  return h;
}

/** What the binding takes as headers: MsgHdrs become a Map. */
function hdrsTo(h) {
  if (h === undefined || h === null) return undefined;
  if (h instanceof MsgHdrsImpl) return h.headers;
  return h;
}

/** Bytes as nats.js returns what it assembles (an object's content, a
 * stored message's decoded data): a plain Uint8Array over the same memory. */
function u8(buf) {
  if (!buf) return Empty;
  return new Uint8Array(buf.buffer, buf.byteOffset, buf.byteLength);
}

/** A received payload as nats.js hands it out under Node: a Buffer (a
 * slice of what the socket read), so `${m.data}` and m.data.toString()
 * give the text. The binding's own Buffer, or a Buffer over the same
 * memory: nothing is copied and nothing more is kept alive. */
function payload(buf) {
  if (!buf) return Buffer.alloc(0);
  if (Buffer.isBuffer(buf)) return buf;
  return Buffer.from(buf.buffer, buf.byteOffset, buf.byteLength);
}

const decoder = new TextDecoder();

// ---------------------------------------------------------------------------
// Msg

class MsgImpl {
  constructor(nc, m, sid) {
    this._nc = nc;
    this.subject = m.subject;
    this.reply = m.reply || undefined;
    this.data = payload(m.data);
    this.headers = hdrsFrom(m.headers, m.status, m.statusDescription);
    this.sid = sid;
  }

  respond(data = Empty, opts) {
    if (!this.reply) return false;
    this._nc.publish(this.reply, data, opts);
    return true;
  }

  string() {
    return decoder.decode(this.data);
  }

  json(reviver) {
    return JSON.parse(this.string(), reviver);
  }
}

// ---------------------------------------------------------------------------
// A queued iterator: what nats.js's QueuedIterator does for a
// subscription: messages received are yielded even after unsubscribe()
// until the queue is empty; a callback gets them instead.

class QueuedIterator {
  constructor(callback) {
    this._callback = callback ?? null;
    this._queue = [];
    this._waiters = [];
    this._done = false;
    this._error = null;
    this._processed = 0;
    this._received = 0;
    this._closedD = deferred();
  }

  _push(v) {
    if (this._done) return;
    this._received++;
    if (this._callback) {
      this._processed++;
      this._callback(null, v);
      return;
    }
    if (this._waiters.length) {
      this._processed++;
      this._waiters.shift().resolve({ value: v, done: false });
    } else {
      this._queue.push(v);
    }
  }

  /** Ends: what is queued is still yielded, then `err` is thrown (or the
   * iteration ends). */
  _stop(err) {
    if (this._done) return;
    this._done = true;
    this._error = err ?? null;
    if (this._callback) {
      if (err) this._callback(err, {});
    } else if (this._queue.length === 0) {
      this._flushWaiters();
    }
    this._closedD.resolve(err ?? undefined);
  }

  _flushWaiters() {
    const waiters = this._waiters.splice(0);
    const err = this._error;
    this._error = null;
    waiters.forEach((w, i) => (err && i === 0 ? w.reject(err) : w.resolve({ value: undefined, done: true })));
  }

  next() {
    if (this._callback) return Promise.reject(new InvalidOperationError('iterator cannot be used when a callback is registered'));
    if (this._queue.length) {
      this._processed++;
      return Promise.resolve({ value: this._queue.shift(), done: false });
    }
    if (this._done) {
      const err = this._error;
      this._error = null;
      return err ? Promise.reject(err) : Promise.resolve({ value: undefined, done: true });
    }
    return new Promise((resolve, reject) => this._waiters.push({ resolve, reject }));
  }

  return() {
    this._onBreak();
    this._queue.length = 0;
    this._stop();
    return Promise.resolve({ value: undefined, done: true });
  }

  _onBreak() {}

  [Symbol.asyncIterator]() {
    return this;
  }

  getProcessed() {
    return this._processed;
  }

  getReceived() {
    return this._received;
  }

  getPending() {
    return this._queue.length;
  }
}

// ---------------------------------------------------------------------------
// Subscription

class SubscriptionImpl extends QueuedIterator {
  constructor(nc, subject, opts = {}) {
    const callback = opts.callback;
    super(callback ? (err, m) => callback(err, m) : null);
    this._nc = nc;
    this._subject = subject;
    this._max = opts.max > 0 ? opts.max : undefined;
    this._draining = false;
    this.requestSubject = undefined;
    const queue = opts.queue === '' ? undefined : opts.queue;
    // The binding's callback mode: this object keeps what the program has
    // not read yet (nats.js's unbounded queue), so unsubscribe() keeps it.
    this._sub = mapped(
      () =>
        nc._nc.subscribe(subject, {
          queue,
          callback: (err, m) => {
            if (err) return;
            this._clearTimer();
            this._push(new MsgImpl(nc, m, this._sid));
          },
        }),
      subject,
    );
    this._sid = this._sub.sid;
    if (this._max) this._sub.unsubscribeAfter(this._max);
    this._timer = null;
    if (opts.timeout > 0) {
      this._timer = setTimeout(() => {
        this._timer = null;
        if (this._received === 0) {
          this._sub.unsubscribe();
          this._stop(new TimeoutError());
        }
      }, opts.timeout);
    }
    this._sub.closed.then((err) => {
      this._clearTimer();
      this._stop(err ? coreError(err, subject) : undefined);
    });
    this.closed = this._closedD.then((err) => err);
  }

  _clearTimer() {
    if (this._timer) {
      clearTimeout(this._timer);
      this._timer = null;
    }
  }

  _onBreak() {
    this._clearTimer();
    this._sub.unsubscribe();
  }

  get callback() {
    return this._callback;
  }

  unsubscribe(max) {
    if (this._done) return;
    if (max > 0) {
      this._max = max;
      this._sub.unsubscribeAfter(max);
      return;
    }
    this._clearTimer();
    this._sub.unsubscribe();
    this._stop();
  }

  async drain() {
    if (this._done) return;
    this._draining = true;
    this._clearTimer();
    await this._sub.drain().catch((e) => {
      throw coreError(e, this._subject);
    });
    await this._closedD;
  }

  isDraining() {
    return this._draining && !this._done;
  }

  isClosed() {
    return this._done;
  }

  getSubject() {
    return this._subject;
  }

  getID() {
    return this._sid;
  }

  getMax() {
    return this._max;
  }
}

// ---------------------------------------------------------------------------
// Server versions and the features they bring (nats.js's Features).

function parseSemVer(s = '') {
  const m = String(s).match(/(\d+).(\d+).(\d+)/);
  if (!m) throw new Error(`'${s}' is not a semver value`);
  return { major: Number(m[1]), minor: Number(m[2]), micro: Number(m[3]) };
}

function compareSemVer(a, b) {
  for (const k of ['major', 'minor', 'micro']) {
    if (a[k] !== b[k]) return a[k] < b[k] ? -1 : 1;
  }
  return 0;
}

/** nats.js's Feature: the names of what depends on the server's version. */
const Feature = Object.freeze({
  JS_KV: 'js_kv',
  JS_OBJECTSTORE: 'js_objectstore',
  JS_PULL_MAX_BYTES: 'js_pull_max_bytes',
  JS_NEW_CONSUMER_CREATE_API: 'js_new_consumer_create',
  JS_ALLOW_DIRECT: 'js_allow_direct',
  JS_MULTIPLE_CONSUMER_FILTER: 'js_multiple_consumer_filter',
  JS_SIMPLIFICATION: 'js_simplification',
  JS_STREAM_CONSUMER_METADATA: 'js_stream_consumer_metadata',
  JS_CONSUMER_FILTER_SUBJECTS: 'js_consumer_filter_subjects',
  JS_STREAM_FIRST_SEQ: 'js_stream_first_seq',
  JS_STREAM_SUBJECT_TRANSFORM: 'js_stream_subject_transform',
  JS_STREAM_SOURCE_SUBJECT_TRANSFORM: 'js_stream_source_subject_transform',
  JS_STREAM_COMPRESSION: 'js_stream_compression',
  JS_DEFAULT_CONSUMER_LIMITS: 'js_default_consumer_limits',
  JS_BATCH_DIRECT_GET: 'js_batch_direct_get',
  JS_PRIORITY_GROUPS: 'js_priority_groups',
  JS_CONSUMER_RESET: 'js_consumer_reset',
});

// nats.js's Feature names and the server version each needs.
const FEATURE_VERSIONS = Object.freeze({
  js_kv: '2.6.2',
  js_objectstore: '2.6.3',
  js_pull_max_bytes: '2.8.3',
  js_new_consumer_create: '2.9.0',
  js_allow_direct: '2.9.0',
  js_multiple_consumer_filter: '2.10.0',
  js_simplification: '2.9.4',
  js_stream_consumer_metadata: '2.10.0',
  js_consumer_filter_subjects: '2.10.0',
  js_stream_first_seq: '2.10.0',
  js_stream_subject_transform: '2.10.0',
  js_stream_source_subject_transform: '2.10.0',
  js_stream_compression: '2.10.0',
  js_default_consumer_limits: '2.10.0',
  js_batch_direct_get: '2.11.0',
  js_priority_groups: '2.11.0',
  js_consumer_reset: '2.14.0',
});

class Features {
  constructor(version) {
    this.disabled = [];
    this.features = new Map();
    this.update(version);
  }

  update(v) {
    this.server = typeof v === 'string' ? parseSemVer(v) : v;
    this.features.clear();
    for (const [f, min] of Object.entries(FEATURE_VERSIONS)) {
      if (!this.disabled.includes(f)) this.set(f, min);
    }
  }

  /** Records that feature `f` needs server version `requires`. */
  set(f, requires) {
    this.features.set(f, { min: requires, ok: compareSemVer(this.server, parseSemVer(requires)) >= 0 });
  }

  get(f) {
    return this.features.get(f) || { min: 'unknown', ok: false };
  }

  supports(f) {
    return this.get(f).ok;
  }

  require(v) {
    return compareSemVer(this.server, typeof v === 'string' ? parseSemVer(v) : v) >= 0;
  }

  disable(f) {
    this.disabled.push(f);
    this.update(this.server);
  }

  isDisabled(f) {
    return this.disabled.includes(f);
  }

  resetDisabled() {
    this.disabled.length = 0;
    this.update(this.server);
  }
}

// ---------------------------------------------------------------------------
// Connection

const STATUS_TYPES = {
  disconnect: (err, nc) => ({ type: 'disconnect', server: nc._lastServer }),
  reconnect: (url) => ({ type: 'reconnect', server: hostPort(url) }),
  ldm: (url) => ({ type: 'ldm', server: hostPort(url) }),
  servers: (added) => ({ type: 'update', added: added.map(hostPort), deleted: [] }),
};

/** A server URL as nats.js names a server (its "listen"): host:port,
 * with the scheme's default port when the URL has none. */
function hostPort(url) {
  if (!url) return '';
  const text = String(url);
  const scheme = (text.match(/^([a-z]+):\/\//i)?.[1] ?? 'nats').toLowerCase();
  const hp = text.replace(/^[a-z]+:\/\//i, '').replace(/\/.*$/, '').replace(/^[^@]*@/, '');
  if (/:\d+$/.test(hp)) return hp;
  const port = { ws: 80, wss: 443 }[scheme] ?? 4222;
  return `${hp}:${port}`;
}

/** A nats.js server entry (host:port, or a URL) as the binding's URL. */
function serverUrl(entry) {
  return /^[a-z]+:\/\//i.test(entry) ? entry : `nats://${entry}`;
}

/** Shuffles `a` in place (Fisher-Yates), as nats.js's shuffle(). */
function shuffle(a) {
  for (let i = a.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [a[i], a[j]] = [a[j], a[i]];
  }
  return a;
}

class NatsConnectionImpl {
  constructor(nc, options) {
    this._nc = nc;
    this.options = options;
    this._draining = false;
    this._statusIters = new Set();
    // Per listen (host:port): the entry a program gave for it (nats.js's
    // Server.src), and when it was last tried (lastConnect, ms).
    this._srcs = new Map();
    for (const given of options.servers ?? []) this._srcs.set(hostPort(given), given);
    this._lastConnect = new Map();
    this._lastServer = this.getServer();
    this._lastConnect.set(this._lastServer, Date.now());
    this._closedD = deferred();
    nc.on('error', (err) => {
      // A push consumer's missed heartbeats (a timeout naming its deliver
      // subject) are its consumption's status (compat/jetstream.js), not
      // the connection's, as in nats.js.
      if (err instanceof natsio.TimeoutError && err.subject) return;
      // What a program's callback threw: reported, as the binding does
      // when nobody listens, unless a status() iterator takes it.
      if (err instanceof natsio.CallbackError && this._statusIters.size === 0) {
        process.stderr.write(`natsio ERROR: ${err.message}\n${err.cause?.stack ?? ''}\n`);
      }
      this._status({ type: 'error', error: coreError(err) });
    });
    for (const [event, make] of Object.entries(STATUS_TYPES)) {
      nc.on(event, (...args) => this._status(make(...args, this)));
    }
    // nats.js reports "reconnecting" as each reconnect attempt starts, the
    // one that succeeds included; the binding tells of each attempt that
    // failed. So: one as the first attempt starts (the disconnect), then
    // one per failed attempt for the next, unless none follows (closed, or
    // every server dropped from the pool after too many attempts).
    nc.on('disconnect', () => {
      if (options.reconnect !== false) this._status({ type: 'reconnecting' });
    });
    nc.on('reconnectFailed', (err) => {
      const listen = hostPort(/reconnect to (\S+) failed/.exec(err.message)?.[1]);
      if (listen) this._lastConnect.set(listen, Date.now());
      if (!this.isClosed() && this._nc.serverPool().length > 0) this._status({ type: 'reconnecting' });
    });
    nc.on('connect', () => {
      this._lastServer = this.getServer();
      this._lastConnect.set(this._lastServer, Date.now());
    });
    nc.on('reconnect', () => {
      this._lastServer = this.getServer();
      this._lastConnect.set(this._lastServer, Date.now());
    });
    nc.on('close', () => {
      this._status({ type: 'close' });
      for (const it of this._statusIters) it._stop();
      this._closedD.resolve();
    });
  }

  _status(s) {
    for (const it of this._statusIters) it._push(s);
  }

  get info() {
    try {
      return this.isClosed() ? undefined : this._nc.info;
    } catch {
      return undefined;
    }
  }

  /** What the connected server's version supports (nats.js's Features),
   * kept across reconnects to a server of the same version. */
  get features() {
    const version = this.info?.version ?? this._features?.server;
    if (!this._features) this._features = new Features(version ?? '0.0.0');
    else if (typeof version === 'string' && compareSemVer(parseSemVer(version), this._features.server) !== 0) this._features.update(version);
    return this._features;
  }

  getServerVersion() {
    const info = this.info;
    return info ? parseSemVer(info.version) : undefined;
  }

  closed() {
    return this._closedD;
  }

  async close() {
    await this._nc.close();
    await this._closedD;
  }

  publish(subject, data = Empty, options = {}) {
    mapped(() => this._nc.publish(subject, data ?? Empty, { reply: options?.reply, headers: hdrsTo(options?.headers) }), subject);
  }

  publishMessage(msg) {
    this.publish(msg.subject, msg.data, { reply: msg.reply, headers: msg.headers });
  }

  respondMessage(msg) {
    if (!msg.reply) return false;
    this.publish(msg.reply, msg.data, { headers: msg.headers });
    return true;
  }

  subscribe(subject, opts = {}) {
    if (this.isClosed()) throw new ClosedConnectionError();
    if (this._draining) throw new DrainingConnectionError();
    return new SubscriptionImpl(this, subject, opts ?? {});
  }

  async request(subject, data = Empty, opts = { timeout: 1000 }) {
    const timeout = opts?.timeout ?? 1000;
    if (timeout < 1) throw InvalidArgumentError.format('timeout', 'must be greater than 0');
    if (this.isClosed()) throw new ClosedConnectionError();
    try {
      const m = await this._nc.request(subject, data ?? Empty, { timeout, headers: hdrsTo(opts?.headers) });
      return new MsgImpl(this, m, 0);
    } catch (e) {
      throw coreError(e, subject);
    }
  }

  /** nats.js's strategies: timer (all replies within maxWait), count
   * (maxMessages), stall (300 ms after the last), sentinel (up to an empty
   * reply, yielded). */
  async requestMany(subject, data = Empty, opts = {}) {
    const strategy = opts.strategy || 'timer';
    const maxWait = opts.maxWait || 1000;
    if (maxWait < 1) throw InvalidArgumentError.format('timeout', 'must be greater than 0');
    const o = { timeout: maxWait, headers: hdrsTo(opts.headers) };
    if (strategy === 'count' && opts.maxMessages > 0) o.maxMessages = opts.maxMessages;
    if (strategy === 'stall') o.stall = opts.stall || 300;
    const replies = mapped(() => this._nc.requestMany(subject, data ?? Empty, o), subject);
    const out = new QueuedIterator();
    out._onBreak = () => replies.return();
    (async () => {
      try {
        for await (const m of replies) {
          out._push(new MsgImpl(this, m, 0));
          if (strategy === 'sentinel' && m.data.length === 0) break;
        }
        out._stop();
      } catch (e) {
        // The timer's end is not an error in nats.js; no responders is.
        if (e.code === 'TIMEOUT') out._stop();
        else out._stop(coreError(e, subject));
      }
    })();
    return out;
  }

  async flush() {
    if (this.isClosed()) throw new ClosedConnectionError();
    try {
      await this._nc.flush();
    } catch (e) {
      throw coreError(e);
    }
  }

  async drain() {
    if (this.isClosed()) throw new ClosedConnectionError();
    if (this._draining) throw new DrainingConnectionError();
    this._draining = true;
    try {
      await this._nc.drain();
    } catch (e) {
      throw coreError(e);
    }
    await this._closedD;
  }

  isClosed() {
    return this._nc.isClosed;
  }

  isDraining() {
    return this._draining && !this.isClosed();
  }

  getServer() {
    try {
      return this.isClosed() ? '' : hostPort(this._nc.connectedUrl);
    } catch {
      return '';
    }
  }

  /** nats.js's getServers(): the pool as frozen Server objects, in the
   * order they are tried: listen (host:port), hostname, port, src (the
   * entry given; a discovered server's host:port), tlsName '', reconnects
   * (failed attempts since last connected to it), lastConnect (ms of the
   * last attempt seen: a failed one or a connect; 0 for none), gossiped
   * (discovered from the cluster), didConnect. */
  getServers() {
    return this._nc.serverPool().map((s) => {
      const listen = hostPort(s.url);
      const port = Number(/:(\d+)$/.exec(listen)[1]);
      return Object.freeze({
        hostname: listen.replace(/:\d+$/, '').replace(/^\[(.*)\]$/, '$1'),
        port,
        listen,
        src: this._srcs.get(listen) ?? listen,
        tlsName: '',
        reconnects: s.reconnects,
        lastConnect: this._lastConnect.get(listen) ?? 0,
        gossiped: s.discovered,
        didConnect: s.didConnect,
      });
    });
  }

  /** nats.js's setServers(): replaces the pool with `servers` (host:port
   * entries, or URLs), shuffled unless noRandomize; the connection stays
   * up and the next reconnect picks from the new pool (reconnect() moves
   * now); a server kept keeps its reconnect count. InvalidArgumentError
   * when empty or not an array; a closed connection ignores it, as
   * nats.js's does. */
  setServers(servers) {
    if (!Array.isArray(servers) || servers.length === 0) throw InvalidArgumentError.format('servers', 'cannot be empty');
    const given = [...servers];
    if (!this.options.noRandomize) shuffle(given);
    if (this.isClosed()) return;
    const kept = new Set(this._nc.serverPool().map((s) => hostPort(s.url)));
    mapped(() => this._nc.setServerPool(given.map(serverUrl)));
    // A server kept keeps its src and lastConnect, as nats.js's; a new one
    // starts afresh.
    for (const g of given) {
      const listen = hostPort(g);
      if (kept.has(listen)) continue;
      this._srcs.set(listen, g);
      this._lastConnect.delete(listen);
    }
  }

  status() {
    const it = new QueuedIterator();
    it._onBreak = () => this._statusIters.delete(it);
    if (this.isClosed()) it._stop();
    else this._statusIters.add(it);
    return it;
  }

  stats() {
    const s = this._nc.stats();
    return { inBytes: s.inBytes, outBytes: s.outBytes, inMsgs: s.inMsgs, outMsgs: s.outMsgs };
  }

  async rtt() {
    if (this.isClosed()) throw new ClosedConnectionError();
    // The binding measures microseconds; nats.js gives milliseconds.
    return Math.round((await this._nc.rtt()) / 1000);
  }

  async reconnect() {
    if (this.isClosed()) throw new ClosedConnectionError();
    this._status({ type: 'forceReconnect' });
    this._nc.forceReconnect();
  }
}

// ---------------------------------------------------------------------------
// Authenticators: nats.js's Authenticator is a function of the nonce
// giving the CONNECT's credentials (Auth: user, pass, auth_token, jwt, nkey,
// sig). This module's factories make such functions, computing what
// nats.js's do; one whose arguments are all values (no functions) also
// carries a description (AUTH) that connect() hands to the binding's own
// options, so the core reads seeds and creds itself and signs there. Any
// other authenticator (a program's own, or a factory given functions) is
// called, with the others, on every connect and reconnect through the
// binding's `authenticator`, as nats.js calls them.

const AUTH = Symbol('natsio.auth');

function described(fn, opts) {
  fn[AUTH] = opts;
  return fn;
}

function text(v) {
  return typeof v === 'string' ? v : decoder.decode(v);
}

const call = (v) => (typeof v === 'function' ? v() : v);
const isFn = (v) => typeof v === 'function';

/** nats.js's NKeyAuth for the nonce: the seed's public key, and the nonce
 * signed when there is one (by the library's signer, natsio.nkeySign:
 * URL-safe base64 where nats.js writes standard base64; the server reads
 * both). A malformed seed throws, as nkeys does. */
function nkeyAuth(seed, nonce) {
  if (!seed) return { nkey: '', sig: '' };
  const { publicKey, sig } = natsio.nkeySign(text(seed).trim(), nonce ?? '');
  return { nkey: publicKey, sig: nonce ? sig : '' };
}

/** The JWT and the seed of a .creds file's text, as nats.js parses it. */
function parseCreds(creds) {
  const CREDS = /\s*(?:(?:[-]{3,}[^\n]*[-]{3,}\n)(.+)(?:\n\s*[-]{3,}[^\n]*[-]{3,}\n))/gi;
  const s = text(creds);
  const jwt = CREDS.exec(s);
  const seed = jwt && CREDS.exec(s);
  if (!seed) throw new Error('unable to parse credentials');
  return { jwt: jwt[1].trim(), seed: seed[1].trim() };
}

function usernamePasswordAuthenticator(user, pass) {
  // Functions are passed on as they are: the binding calls them on every
  // connect and reconnect.
  return described(() => ({ user: call(user), pass: call(pass) }), { user, pass });
}

function tokenAuthenticator(token) {
  return described(() => ({ auth_token: call(token) }), { token });
}

function nkeyAuthenticator(seed) {
  const fn = (nonce) => nkeyAuth(call(seed), nonce);
  return isFn(seed) || !seed ? fn : described(fn, { nkeySeed: text(seed) });
}

function credsAuthenticator(creds) {
  // As nats.js: the JWT and the seed each parse the creds (a function is
  // called twice per connect).
  const fn = jwtAuthenticator(() => parseCreds(call(creds)).jwt, () => parseCreds(call(creds)).seed);
  return isFn(creds) ? fn : described(fn, { creds: text(creds) });
}

function jwtAuthenticator(jwt, seed) {
  const fn = (nonce) => ({ jwt: call(jwt), ...nkeyAuth(call(seed), nonce) });
  if (isFn(jwt) || isFn(seed)) return fn;
  const s = seed ? text(seed) : '';
  const creds = `-----BEGIN NATS USER JWT-----\n${text(jwt)}\n------END NATS USER JWT------\n\n-----BEGIN USER NKEY SEED-----\n${s}\n------END USER NKEY SEED------\n`;
  return described(fn, { creds });
}

/** The options' `authenticator` (one or a list) as a list of functions
 * (else InvalidArgumentError, as nats.js requires functions). */
function authenticatorsOf(opts) {
  return (opts.authenticator === undefined ? [] : [].concat(opts.authenticator)).map((a) => {
    if (typeof a !== 'function') throw new InvalidArgumentError('natsio: authenticator must be a function (nonce?: string) => Auth');
    return a;
  });
}

/** nats.js's buildAuthenticator(): one authenticator from the options'
 * `authenticator` (one or a list), `token` and `user`/`pass`, later ones
 * overriding what earlier ones set, as nats.js merges their results. */
function buildAuthenticator(opts) {
  const parts = authenticatorsOf(opts);
  if (opts.token) parts.push(tokenAuthenticator(opts.token));
  if (opts.user) parts.push(usernamePasswordAuthenticator(opts.user, opts.pass));
  const merged = (nonce) => Object.assign({}, ...parts.map((a) => a(nonce) || {}));
  return parts.every((a) => a[AUTH]) ? described(merged, Object.assign({}, ...parts.map((a) => a[AUTH]))) : merged;
}

/** nats.js's wsUrlParseFn(): a server as the WebSocket URL nats.js dials:
 * ws: for ws/http/nats (port 80 by default), wss: for wss/https/tls (443);
 * without a scheme, wss: unless `encrypted` is false. */
function wsUrlParseFn(u, encrypted) {
  if (!/^(.*:\/\/)(.*)/.test(u)) u = `${encrypted === false ? 'http' : 'https'}://${u}`;
  let url = new URL(u);
  const scheme = url.protocol.toLowerCase();
  if (scheme === 'ws:') encrypted = false;
  if (scheme === 'wss:') encrypted = true;
  // nats.js parses other schemes' host and port through http:.
  if (scheme !== 'https:' && scheme !== 'http') url = new URL(`http://${u.replace(/^(.*:\/\/)(.*)/gm, '$2')}`);
  let protocol;
  let port;
  if (['http:', 'ws:', 'nats:'].includes(scheme)) {
    port = url.port || '80';
    protocol = 'ws:';
  } else if (['https:', 'wss:', 'tls:'].includes(scheme)) {
    port = url.port || '443';
    protocol = 'wss:';
  } else {
    // As nats.js: a port given means 443 here.
    port = url.port || encrypted === true ? '443' : '80';
    protocol = encrypted === true ? 'wss:' : 'ws:';
  }
  return `${protocol}//${url.hostname}:${port}${url.pathname}${url.search || ''}`;
}

/** nats.js's wsconnect(): connect() over WebSocket, each server read as
 * wsUrlParseFn reads it (a bare host:port is wss://host:port; the default
 * server 127.0.0.1:443). `tls` is refused as nats.js refuses it (its
 * WebSocket is the W3C one). */
async function wsconnect(opts = {}) {
  if (opts.tls) throw InvalidArgumentError.format('tls', 'is not configurable on w3c websocket connections');
  let servers = opts.servers ?? [];
  if (typeof servers === 'string') servers = [servers];
  if (servers.length > 0 && opts.port) throw InvalidArgumentError.format(['servers', 'port'], 'are mutually exclusive');
  if (servers.length === 0) servers = [`127.0.0.1:${opts.port ?? 443}`];
  return connect({ ...opts, port: undefined, servers: servers.map((s) => wsUrlParseFn(s)) });
}

/** The binding's options for nats.js's ConnectionOptions. */
function bindingOptions(opts) {
  const o = {};
  const { servers } = opts;
  if (Array.isArray(servers)) o.servers = servers.map(serverUrl);
  for (const k of [
    'name',
    'user',
    'pass',
    'token',
    'noEcho',
    'timeout',
    'maxReconnectAttempts',
    'reconnectTimeWait',
    'reconnect',
    'reconnectJitter',
    'pingInterval',
    'noRandomize',
    'waitOnFirstConnect',
    'inboxPrefix',
    'ignoreAuthErrorAbort',
  ]) {
    if (opts[k] !== undefined) o[k] = opts[k];
  }
  o.maxReconnectAttempts ??= DEFAULT_MAX_RECONNECT_ATTEMPTS;
  if (opts.reconnectJitterTLS !== undefined) o.reconnectJitterTls = opts.reconnectJitterTLS;
  if (opts.reconnectDelayHandler !== undefined) {
    // nats.js's () => number, called without arguments; the binding asks
    // it before each turn's last attempt (nats.go's rule, not nats.js's
    // per-server wait: see the README). Not a function: the binding's
    // TypeError, nats.js's text.
    const handler = opts.reconnectDelayHandler;
    o.reconnectDelayHandler = typeof handler === 'function' ? () => handler() : handler;
  }
  if (opts.maxPingOut !== undefined) o.maxPingsOut = opts.maxPingOut;
  if (opts.ignoreClusterUpdates !== undefined) o.ignoreDiscoveredServers = opts.ignoreClusterUpdates;
  if (opts.tls) {
    const t = opts.tls;
    o.tls = {
      caFile: t.caFile,
      certFile: t.certFile,
      keyFile: t.keyFile,
      ca: t.ca,
      cert: t.cert,
      key: t.key,
      handshakeFirst: t.handshakeFirst,
    };
  }
  let tmpCreds;
  const authenticators = authenticatorsOf(opts);
  if (!authenticators.every((a) => a[AUTH])) {
    // Called by the binding on every (re)connect, merged as nats.js's
    // buildAuthenticator merges them: the authenticators, then the token,
    // then user/pass. A throw is kept for connect() to reject with.
    const parts = [...authenticators];
    if (opts.token) parts.push(tokenAuthenticator(opts.token));
    if (opts.user) parts.push(usernamePasswordAuthenticator(opts.user, opts.pass));
    delete o.user;
    delete o.pass;
    delete o.token;
    const thrown = {};
    o.authenticator = parts.map((a) => (nonce) => {
      try {
        return a(nonce);
      } catch (e) {
        thrown.error = e;
        throw e;
      }
    });
    return { o, tmpCreds, thrown };
  }
  for (const given of authenticators.map((a) => a[AUTH])) {
    const { creds, ...rest } = given;
    if (creds !== undefined) {
      // The binding reads credentials from a file (on every connect).
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'natsio-creds-'));
      tmpCreds = path.join(dir, 'user.creds');
      fs.writeFileSync(tmpCreds, creds, { mode: 0o600 });
      o.credsFile = tmpCreds;
    }
    Object.assign(o, rest);
  }
  return { o, tmpCreds };
}

/** The servers of nats.js's ConnectionOptions as nats.js leaves them in
 * the caller's object: a list, the port's or the default server when none. */
function normalizeServers(opts) {
  const defaultServer = '127.0.0.1:4222';
  opts.servers = opts.servers || [];
  if (typeof opts.servers === 'string') opts.servers = [opts.servers];
  if (opts.servers.length > 0 && opts.port) throw InvalidArgumentError.format(['servers', 'port'], 'are mutually exclusive');
  if (opts.servers.length === 0) opts.servers = [opts.port ? `127.0.0.1:${opts.port}` : defaultServer];
  return opts;
}

/** nats.js's connect(): resolves with a NatsConnection. */
async function connect(opts) {
  opts = normalizeServers(opts ?? { servers: [] });
  const { o, tmpCreds, thrown } = bindingOptions(opts);
  let nc;
  try {
    nc = await natsio.connect(o);
  } catch (e) {
    if (tmpCreds) fs.rmSync(path.dirname(tmpCreds), { recursive: true, force: true });
    // An authenticator that threw: nats.js rejects with what it threw.
    if (thrown?.error !== undefined && e instanceof natsio.ConfigError) throw thrown.error;
    throw coreError(e);
  }
  const conn = new NatsConnectionImpl(nc, { ...opts });
  if (tmpCreds) conn.closed().then(() => fs.rmSync(path.dirname(tmpCreds), { recursive: true, force: true }));
  return conn;
}

/** The binding's Connection under a NatsConnection of this facade (or a
 * binding Connection given as is). */
function bindingConnection(nc) {
  if (nc instanceof NatsConnectionImpl) return nc._nc;
  if (nc instanceof natsio.Connection) return nc;
  throw new TypeError('expected a NatsConnection from natsio/transport-node');
}

module.exports = {
  connect,
  headers,
  MsgHdrsImpl,
  Match,
  canonicalMIMEHeaderKey,
  Empty,
  nuid,
  Nuid,
  createInbox,
  nanos,
  millis,
  deferred,
  delay,
  timeout,
  deadline,
  backoff,
  collect,
  syncIterator,
  DEFAULT_MAX_RECONNECT_ATTEMPTS,
  hasWsProtocol,
  wsconnect,
  wsUrlParseFn,
  buildAuthenticator,
  Feature,
  Features,
  parseSemVer,
  compare: compareSemVer,
  errors,
  ...errors,
  usernamePasswordAuthenticator,
  tokenAuthenticator,
  nkeyAuthenticator,
  credsAuthenticator,
  jwtAuthenticator,
};
// For the other compat modules; not nats.js API.
Object.defineProperty(module.exports, INTERNAL, { value: { coreError, mapped, bindingConnection, hdrsFrom, hdrsTo, u8, payload, decoder, QueuedIterator, NatsConnectionImpl, hostPort } });
