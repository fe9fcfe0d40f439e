'use strict';
// natsio for Node: idiom (promises, async iterators, EventEmitter, Error
// classes) over the native addon. Every semantic lives in libnatsio; this
// layer only translates. See src/internal.h (and README.md, "How it works")
// for the threading design.

const { EventEmitter } = require('node:events');
const path = require('node:path');
const { Readable, Writable } = require('node:stream');

// NATSIO_NODE_BUILD_DIR: an addon built elsewhere by build.js (the
// sanitized one of scripts/sanitize.sh); by default build/.
const buildDir = process.env.NATSIO_NODE_BUILD_DIR
  ? path.resolve(process.env.NATSIO_NODE_BUILD_DIR)
  : path.join(__dirname, 'build');
const native = loadAddon(path.join(buildDir, 'natsio.node'));

function loadAddon(file) {
  try {
    return require(file);
  } catch (err) {
    if (err.code !== 'MODULE_NOT_FOUND') throw err;
    // The install script builds it; --ignore-scripts skips that.
    throw new Error(`natsio: ${file} is not built: run "npm rebuild natsio" (or "npm run build" in bindings/node)`, {
      cause: err,
    });
  }
}

// ---------------------------------------------------------------------------
// Errors: one class per natsio status code, all extending NatsError.

class NatsError extends Error {
  constructor(message, status, code) {
    super(message);
    this.name = 'NatsError';
    /** numeric natsio status, e.g. 200 */
    this.status = status;
    /** status name without prefix, e.g. 'TIMEOUT' */
    this.code = code;
  }
}

/** What a user callback threw (a subscription's message callback, a
 * Connection event listener, the logger), as the Connection's 'error'
 * event carries it: `cause` is the thrown value, `subject` and `sid` the
 * subscription's (undefined otherwise), `event` the name of the event
 * whose listener threw ('connect', 'disconnect', ...), or 'logger',
 * 'userJWT', 'signatureCB', 'authenticator', 'reconnectDelayHandler'. Not a NatsError: no natsio status stands for
 * it. */
class CallbackError extends Error {
  constructor(cause, where) {
    const what = where.subject !== undefined ? `subscription callback on "${where.subject}"` : `"${where.event}" callback`;
    const text = cause instanceof Error ? cause.message : String(cause);
    super(`${what} threw: ${text}`, { cause });
    this.name = 'CallbackError';
    this.subject = where.subject;
    this.sid = where.sid;
    this.event = where.event;
  }
}

// One class per error status of include/natsio.h (build.js extracts the
// natsio_status enum into build/status-codes.json, so codes added to the
// library get their class without touching this file). The class name is
// the code in PascalCase plus "Error", or the reference name where the
// reference documents use a longer one.
const REFERENCE_NAMES = {
  NO_SERVERS: 'NoServersAvailableError',
  MAX_CONTROL_LINE: 'MaxControlLineExceededError',
  MAX_PAYLOAD: 'MaxPayloadExceededError',
  AUTHORIZATION: 'AuthorizationViolationError',
  AUTH_EXPIRED: 'AuthenticationExpiredError',
  PERMISSIONS: 'PermissionsViolationError',
  MAX_SUBSCRIPTIONS: 'MaxSubscriptionsExceededError',
  WEBSOCKET: 'WebsocketError',
  JETSTREAM: 'JetStreamError',
  JS_API: 'JetStreamApiError',
  JS_NOT_ENABLED: 'JetStreamNotEnabledError',
  TOO_MANY_STALLED: 'TooManyStalledMsgsError',
};

function className(code) {
  if (REFERENCE_NAMES[code]) return REFERENCE_NAMES[code];
  const pascal = code
    .toLowerCase()
    .split('_')
    .map((w) => w.charAt(0).toUpperCase() + w.slice(1))
    .join('');
  return `${pascal}Error`;
}

const STATUS_CODES = require(path.join(buildDir, 'status-codes.json'));

/** The URL a connection without one uses (NATSIO_DEFAULT_URL). */
const DEFAULT_URL = native.DEFAULT_URL;

/** The names of the headers JetStream reads and writes, and Nats-Rollup's
 * values, keyed by natsio.h's NATSIO_JS_HEADER_ suffixes (frozen). */
const JS_HEADERS = native.JS_HEADERS;

// The error tree is the library's (natsio_status_parent): each class
// extends its first parent's class (NatsError at the top), so stack traces
// and names read as usual, and `instanceof` asks the library
// (natsio_status_is) when the prototype chain alone does not say it: a
// NoMessagesError (parents JetStream and Timeout) is also a TimeoutError.
const errors = { NatsError };
const errorByStatus = new Map();
const codeByStatus = new Map(STATUS_CODES.filter(([status]) => status >= 100));

function errorClass(status) {
  const known = errorByStatus.get(status);
  if (known) return known;
  const code = codeByStatus.get(status);
  const name = className(code);
  const parentStatus = native.statusParent(status, 0);
  const parent = parentStatus >= 100 && codeByStatus.has(parentStatus) ? errorClass(parentStatus) : NatsError;
  // A named class per code, so `instanceof TimeoutError` and stack traces work.
  const cls = {
    [name]: class extends parent {
      constructor(message) {
        super(message, status, code);
        this.name = name;
        this.status = status;
        this.code = code;
      }

      static [Symbol.hasInstance](value) {
        if (Function.prototype[Symbol.hasInstance].call(this, value)) return true;
        // Only natsio's own classes follow the library's tree (a user's
        // subclass of one keeps the plain prototype test).
        const own = errorByStatus.get(this.status);
        return (
          own === this &&
          Function.prototype[Symbol.hasInstance].call(NatsError, value) &&
          Number.isInteger(value.status) &&
          native.statusIs(value.status, this.status)
        );
      }
    },
  }[name];
  Object.defineProperty(cls, 'status', { value: status });
  Object.defineProperty(cls, 'code', { value: code });
  errorByStatus.set(status, cls);
  errors[name] = cls;
  return cls;
}
for (const status of codeByStatus.keys()) errorClass(status);

/** The message of an error: its status text, then the detail, once. A
 * detail that already starts with the status text (the server's
 * description of a JetStream error often does: "wrong last sequence: 2
 * (code 400, err_code 10071)") is the whole message, not appended to it. */
function errorMessage(summary, detail) {
  if (!detail) return summary;
  const head = detail.slice(0, summary.length);
  const next = detail.charAt(summary.length);
  // A prefix that ends a word: "stream not found" is in "stream not found
  // (code 404)", not in "stream not foundry".
  if (head.toLowerCase() === summary.toLowerCase() && !/[\p{L}\p{N}_]/u.test(next)) return detail;
  return `${summary}: ${detail}`;
}

/** Builds the Error for a natsio status and its detail text, with the
 * failure's data when it has any: apiCode (the JetStream API error's code,
 * e.g. 404), errCode (its err_code, e.g. 10059), revision (the key revision
 * a KEY_DELETED or KEY_EXISTS concerns). Zeros mean none. */
function makeError(status, detail, apiCode, errCode, revision) {
  const message = errorMessage(native.statusStr(status), detail);
  const cls = errorByStatus.get(status);
  const error = cls ? new cls(message) : new NatsError(message, status, `UNKNOWN_${status}`);
  if (apiCode) error.apiCode = apiCode;
  if (errCode) error.errCode = errCode;
  if (revision) error.revision = revision;
  return error;
}

/** Status numbers by code name: Status.TIMEOUT === 200. */
const Status = Object.freeze(Object.fromEntries(STATUS_CODES.map(([status, code]) => [code, status])));

// ---------------------------------------------------------------------------
// Dispatch from the addon's doorbell: feed batches and client events carry
// the id of their target. (Operations settle their promises in the addon.)

const EV_MSG = 1;
const EV_END = 2;
const EV_ERROR = 4;
const EV_CONN = 5;
const EV_ITEMS = 6;
const EV_LOG = 7;
const EV_SVC_ERROR = 8;

// id -> target, or a WeakRef to it for targets the garbage collector may
// take (consume and watch iterators dropped without stop()).
const targets = new Map();
let nextTargetId = 1;
const weakTargets = new FinalizationRegistry((id) => {
  const t = targets.get(id);
  if (t instanceof WeakRef && t.deref() === undefined) targets.delete(id);
});

function register(target, weak = false) {
  let id;
  do {
    id = nextTargetId;
    nextTargetId = nextTargetId >= 0xfffffff0 ? 1 : nextTargetId + 1;
  } while (targets.has(id));
  if (weak) {
    targets.set(id, new WeakRef(target));
    weakTargets.register(target, id);
  } else {
    targets.set(id, target);
  }
  return id;
}

function dispatch(id, kind, a, b, c, d, e) {
  let target = targets.get(id);
  if (target instanceof WeakRef) target = target.deref();
  if (target === undefined) return; // closed on the JS side: nothing runs
  switch (kind) {
    case EV_MSG:
      // a batch: a = count, b = meta, c = data, d = subjects, e = extras
      target.onBatch(a, b, c, d, e);
      break;
    case EV_ITEMS:
      target.onItems(a, b);
      break;
    case EV_END:
      targets.delete(id);
      // a = status, b = detail, c = apiCode, d = errCode, e = revision
      target.onEnd(a, b, c, d, e);
      break;
    case EV_ERROR:
      target.onError(c, b);
      break;
    case EV_CONN:
      target.onEvent(b.kind, b.text, c);
      break;
    case EV_LOG:
      target.onLog(a, b);
      break;
    case EV_SVC_ERROR:
      target.onServiceError(a, b, c, d);
      break;
  }
}

// While one operation is awaited the event loop spins briefly, in steps
// that let timers and I/O run between them (src/hub.c, "Spinning for one
// awaited answer").
function spinStep() {
  if (native.spinStep()) setImmediate(spinStep);
}

native.init(
  dispatch,
  makeError,
  () => setImmediate(spinStep),
  // Acks and asynchronous publishes of a turn go out together after it
  // (src/hub.c, "Acks and publishes sent once per turn").
  () => setImmediate(native.sendDeferred),
);

/**
 * Signs `data` (a server's nonce) with the NKey seed `seed` ("SU..."), as
 * the library signs for NKey and JWT authentication (natsio_nkey_sign,
 * nats.c's nats_Sign): for an `authenticator` that holds its seed.
 * Returns the seed's public key ("U...") and the signature as CONNECT
 * carries it (URL-safe base64). Throws ConfigError for a bad seed,
 * TypeError for a seed that is not a string.
 */
function nkeySign(seed, data) {
  return native.nkeySign(seed, toBytes(data ?? new Uint8Array(0)));
}

/**
 * Sets how long a wait for an answer (a request's reply, a JetStream or KV
 * call) first spins, checking for it, before the thread sleeps: an answer
 * within the spin is seen with no thread wake-up, which on a virtual machine
 * can cost as much as the round trip. Here the event loop spins while one
 * operation is in flight, in steps of 20 us between which timers and I/O
 * are served; the price is CPU time. `us` microseconds (default 200, skipped
 * while the machine's CPUs are contended; 0 turns spinning off). Process-wide: every connection, every worker thread, and
 * C or Go code using the library in the same process.
 */
function setWaitSpin(us) {
  if (typeof us !== 'number' || !Number.isFinite(us) || us < 0) {
    throw new TypeError('setWaitSpin: microseconds must be a finite number >= 0');
  }
  native.setWaitSpin(Math.floor(us));
}

// Open connections keep the event loop alive, as open sockets do (the
// addon also keeps it alive while operations are in flight).
let activeReasons = 0;
function holdEventLoop() {
  if (activeReasons++ === 0) native.setActive(true);
}
function releaseEventLoop() {
  if (--activeReasons === 0) native.setActive(false);
}

// ---------------------------------------------------------------------------
// Data and headers

/** Bytes an object put hands the library at a time. */
const PUT_PIECE = 1 << 20;

/** `bytes` (or null: nothing) in pieces of PUT_PIECE: the library copies
 * what each write is given, so putBytes never copies its data whole. */
function* pieces(bytes) {
  for (let at = 0; bytes !== null && at < bytes.length; at += PUT_PIECE) yield bytes.subarray(at, at + PUT_PIECE);
}

function toBytes(data) {
  if (data === undefined || data === null) return null;
  if (typeof data === 'string') return Buffer.from(data, 'utf8');
  if (data instanceof Uint8Array) return data;
  if (data instanceof ArrayBuffer) return new Uint8Array(data);
  if (ArrayBuffer.isView(data)) return new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
  throw new TypeError('data must be a string, Buffer, Uint8Array or ArrayBuffer');
}

/** Flattens headers (Map, MsgHeaders, plain object, or [name, value] pairs)
 * into [name, value, name, value, ...]; values may be string or string[]. */
function flattenHeaders(headers) {
  if (headers === undefined || headers === null) return null;
  const flat = [];
  const add = (name, value) => {
    if (Array.isArray(value)) for (const v of value) flat.push(String(name), String(v));
    else flat.push(String(name), String(value));
  };
  if (headers instanceof Map || Array.isArray(headers)) {
    for (const [name, value] of headers) add(name, value);
  } else if (typeof headers === 'object') {
    for (const name of Object.keys(headers)) add(name, headers[name]);
  } else {
    throw new TypeError('headers must be a Map, an object or an array of pairs');
  }
  return flat;
}

/** Message headers: a Map of name -> string[] (case-sensitive names, wire
 * order kept). */
class MsgHeaders extends Map {
  /** The first value of `name`, or undefined. */
  first(name) {
    const values = super.get(name);
    return values === undefined ? undefined : values[0];
  }

  /** Appends a value to `name`. */
  append(name, value) {
    const values = super.get(name);
    if (values) values.push(String(value));
    else super.set(name, [String(value)]);
    return this;
  }
}

function headersFromFlat(flat) {
  const h = new MsgHeaders();
  for (let i = 0; i + 1 < flat.length; i += 2) h.append(flat[i], flat[i + 1]);
  return h;
}

// ---------------------------------------------------------------------------
// Msg

class Msg {
  constructor(connection, subject, reply, data, rawHeaders, status, sid) {
    this._connection = connection;
    /** @type {string} */
    this.subject = subject;
    /** @type {string|undefined} */
    this.reply = reply === null ? undefined : reply;
    /** @type {Buffer} (a Uint8Array) */
    this.data = data;
    this._rawHeaders = rawHeaders;
    this._headers = undefined;
    /** inline status of the header block (e.g. 503), or 0 */
    this.status = status;
    /** the id of the subscription it was delivered on (Subscription.sid) */
    this.sid = sid;
  }

  /** The text beside the inline status (e.g. 'Request Timeout' for 408), '' when none. */
  get statusDescription() {
    return this._rawHeaders?.statusDescription ?? '';
  }

  /** True when the received header block had corrupt lines (skipped: headers holds the good ones); the message is delivered anyway. */
  get headersMalformed() {
    return this._rawHeaders?.malformed === true;
  }

  /** @returns {MsgHeaders|undefined} */
  get headers() {
    if (this._headers === undefined && this._rawHeaders !== null) {
      this._headers = headersFromFlat(this._rawHeaders);
    }
    return this._headers;
  }

  string() {
    return this.data.toString('utf8');
  }

  json() {
    return JSON.parse(this.string());
  }

  /** Publishes `data` to this message's reply subject. */
  respond(data, opts = {}) {
    if (!this.reply) throw makeError(Status.NO_REPLY_SUBJECT, 'the message has no reply subject');
    // Written at once, not batched: the requester is waiting for it.
    native.publish(this._connection._handle, this.reply, toBytes(data), null, flattenHeaders(opts.headers), true);
  }
}

// ---------------------------------------------------------------------------
// Feeds: subscriptions, requestMany, consume and KV watch. The library
// delivers each in push mode on its own thread; the addon hands the items to
// this thread in batches, at most `window` of them between the library and
// the application (see src/feed.c). Callback feeds take a batch at once;
// iterators give the window back as the loop consumes (feedCredit).
// Subscriptions are the exception: this thread takes their messages from
// the library's queue itself (feed.c's pull mode), a callback's as they
// come, an iterator's while its window has room.

const DEFAULT_WINDOW = 256;
const SKIP = Symbol('skip');

/** The window of an iterator read in pull mode (a subscription, an
 * endpoint) whose library queue holds at most `limit` messages (0 or less,
 * or not a number: no limit). What the window holds unread adds to those
 * pending limits: kept small when they are, so that the limits keep their
 * meaning. (A callback feed has none: see above.) */
function iteratorWindow(limit) {
  return typeof limit === 'number' && limit > 0 ? Math.min(limit, DEFAULT_WINDOW) : DEFAULT_WINDOW;
}

class Feed {
  constructor(window) {
    this._window = window;
    this._creditBatch = Math.max(1, Math.floor(window / 4));
    this._owed = 0;
    this._queue = [];
    this._waiters = [];
    this._done = false;
    this._error = null;
    // Iterate what is queued before the error that ended the feed.
    this._itemsBeforeError = false;
    this._callback = null;
    this._handle = null;
    this._id = 0;
    this._weak = false;
    this._closedResolve = null;
    /** Resolves (with undefined, or the error that ended it) once closed. Never rejects. */
    this.closed = new Promise((resolve) => {
      this._closedResolve = resolve;
    });
  }

  /** Switches the library iterator to push mode towards this object. */
  _start(handle, weak = false) {
    this._handle = handle;
    this._weak = weak;
    this._id = register(this, weak);
    try {
      native.feedStart(handle, this._id, this._window, this._callback !== null);
    } catch (e) {
      targets.delete(this._id);
      throw e;
    }
  }

  /** An iterator consumed n items: give the window back, in batches. */
  _credit(n) {
    this._owed += n;
    if (this._owed >= this._creditBatch && !this._done) {
      native.feedCredit(this._handle, this._owed);
      this._owed = 0;
    }
  }

  /** A weakly registered feed is held strongly while a next() waits: a
   * suspended `for await` loop alone does not keep it reachable. */
  _pin() {
    if (this._weak && !this._done && targets.has(this._id)) {
      targets.set(this._id, this._waiters.length > 0 ? this : new WeakRef(this));
    }
  }

  /** What next() yields for a queued item, or SKIP. */
  _take(item) {
    return item;
  }

  _deliver(item) {
    // An unsubscribe or close from a callback ends delivery mid-batch.
    if (this._done) return;
    if (this._callback) {
      try {
        this._callback(null, item);
      } catch (error) {
        // Reported (see _callbackThrew); the rest of the batch is still
        // delivered, and so are the next messages.
        this._callbackThrew(error);
      }
      return;
    }
    if (this._waiters.length > 0 && this._queue.length === 0) {
      this._credit(1);
      const value = this._take(item);
      if (value !== SKIP) {
        this._waiters.shift().resolve({ value, done: false });
        if (this._waiters.length === 0) this._pin();
      }
      return;
    }
    this._queue.push(item);
  }

  /** The library's final call: DONE after the last item (stopped, drained,
   * finished), or the error that ended it, CONNECTION_CLOSED included (as
   * in C, C++ and Go; nats.js ends quietly there). After an error the
   * backlog is dropped, as the library drops its own. A callback is not
   * told of a closed connection (it has no loop to end). A fetch's feed
   * (`_itemsBeforeError`) keeps it: its library hands out every message
   * before the error. */
  onEnd(status, detail, apiCode, errCode, revision) {
    if (status !== Status.DONE && !this._itemsBeforeError) this._queue.length = 0;
    const quiet = status === Status.DONE || (status === Status.CONNECTION_CLOSED && this._callback);
    this._finish(quiet ? null : makeError(status, detail, apiCode, errCode, revision));
  }

  /** Ends delivery on the JS side: items already queued are still iterated. */
  _finish(error) {
    if (this._done) return;
    this._done = true;
    this._error = error;
    targets.delete(this._id);
    this._onFinish();
    if (this._callback) {
      if (error) {
        try {
          this._callback(error, undefined);
        } catch (thrown) {
          this._callbackThrew(thrown);
        }
      }
    } else {
      this._drainWaiters();
    }
    this._closedResolve(error || undefined);
  }

  _onFinish() {}

  /** A callback of this feed threw `error`: as an uncaught exception of
   * its own event, unless a subclass knows better. */
  _callbackThrew(error) {
    native.reportUncaught(error);
  }

  _drainWaiters() {
    while (this._waiters.length > 0 && this._queue.length > 0) {
      const value = this._take(this._queue.shift());
      if (value !== SKIP) this._waiters.shift().resolve({ value, done: false });
    }
    if (this._queue.length > 0 || this._waiters.length === 0) return;
    const waiters = this._waiters.splice(0);
    const error = this._error;
    this._error = null; // thrown once
    waiters.forEach((w, i) => {
      if (error && i === 0) w.reject(error);
      else w.resolve({ value: undefined, done: true });
    });
  }

  /** Stops at once on the JS side: nothing queued is delivered any more. */
  _abort() {
    this._queue.length = 0;
    this._finish(null);
  }

  /** Stops the library iterator (its final call is made when this returns), then the JS side. */
  _stop() {
    if (this._done) return;
    try {
      native.feedStop(this._handle);
    } finally {
      this._abort();
    }
  }

  next() {
    if (this._callback) {
      return Promise.reject(makeError(Status.ILLEGAL_STATE, 'a callback subscription cannot be iterated'));
    }
    while (this._queue.length > 0) {
      this._credit(1);
      const value = this._take(this._queue.shift());
      if (value !== SKIP) return Promise.resolve({ value, done: false });
    }
    if (this._done) {
      const error = this._error;
      this._error = null;
      return error ? Promise.reject(error) : Promise.resolve({ value: undefined, done: true });
    }
    return new Promise((resolve, reject) => {
      this._waiters.push({ resolve, reject });
      if (this._waiters.length === 1) this._pin();
    });
  }

  [Symbol.asyncIterator]() {
    return this;
  }
}

/** Numbers per message in a batch's meta array (src/internal.h META_INTS):
 * subject index, data end, status, extras index, sid. */
const META_INTS = 5;

/** Subscriptions and requestMany: messages arrive as batches (layout: see
 * batch_to_js in src/util.c); each message's data is a slice of `data`. */
class MessageStream extends Feed {
  constructor(connection, window) {
    super(window);
    this._connection = connection;
  }

  onBatch(count, meta, data, subjects, extras) {
    const connection = this._connection;
    let start = 0;
    for (let i = 0, j = 0; i < count; i++, j += META_INTS) {
      if (this._done) return;
      const end = meta[j + 1];
      const x = meta[j + 3];
      const msg =
        x < 0
          ? new Msg(connection, subjects[meta[j]], null, data.subarray(start, end), null, meta[j + 2], meta[j + 4])
          : new Msg(connection, subjects[meta[j]], extras[2 * x], data.subarray(start, end), extras[2 * x + 1], meta[j + 2], meta[j + 4]);
      start = end;
      this._deliver(msg);
    }
  }

  _onFinish() {
    this._connection._streams.delete(this);
  }

  /** The connection's 'error' event carries it (see Connection._callbackError). */
  _callbackThrew(error) {
    let sid;
    try {
      sid = native.sub_sid(this._handle);
    } catch {
      sid = undefined;
    }
    this._connection._callbackError(error, { subject: this.subject, sid });
  }

  /** The connection closed: this stream ends now (a drain has ended it
   * already), an iterator with CONNECTION_CLOSED (see onEnd). */
  _connectionClosed() {
    if (this._done) return;
    if (this._callback) {
      this._abort();
    } else {
      this._queue.length = 0;
      this._finish(makeError(Status.CONNECTION_CLOSED, 'the connection closed'));
    }
  }
}

class Subscription extends MessageStream {
  constructor(connection, subject, opts) {
    // The subscription's own limit, else the connection's (0 or less: none).
    super(connection, iteratorWindow(opts.pendingMsgsLimit ?? connection._pendingMsgsLimit));
    this.subject = subject;
    this.queue = opts.queue;
    if (opts.callback !== undefined && typeof opts.callback !== 'function') {
      throw new TypeError('callback must be a function');
    }
    this._callback = opts.callback || null;
    const handle = native.client_subscribe(connection._handle, subject, opts.queue ?? null, {
      // Absent: the connection's limits (NATSIO_PENDING_LIMIT_DEFAULT); 0
      // or less: no limit.
      pending_msgs_limit: opts.pendingMsgsLimit,
      pending_bytes_limit: opts.pendingBytesLimit,
      policy: policyNumber(opts.policy),
    });
    this._start(handle);
    connection._streams.add(this);
  }

  /** The server-side subscription id. */
  get sid() {
    return native.sub_sid(this._handle);
  }

  get isClosed() {
    return this._done || native.sub_is_closed(this._handle);
  }

  /** Stops delivery at once and discards queued messages: no callback runs
   * after this returns. Idempotent. */
  unsubscribe() {
    this._stop();
  }

  /** Closes the subscription after `max` messages in total. */
  unsubscribeAfter(max) {
    native.sub_unsubscribe_after(this._handle, max);
  }

  /** The next message, as the iterator gives it; with `timeout` (ms),
   * rejects with TimeoutError when none arrives within it and the
   * subscription stays usable (the reference's next_msg(timeout)). */
  next(timeout) {
    if (timeout === undefined || timeout === null || this._callback || this._queue.length > 0 || this._done) {
      return super.next();
    }
    if (typeof timeout !== 'number' || Number.isNaN(timeout) || timeout < 0) {
      return Promise.reject(new TypeError('timeout must be a non-negative number (ms)'));
    }
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        const at = this._waiters.indexOf(waiter);
        if (at < 0) return;
        this._waiters.splice(at, 1);
        reject(makeError(Status.TIMEOUT, `no message within ${timeout} ms`));
      }, timeout);
      const waiter = {
        resolve(value) {
          clearTimeout(timer);
          resolve(value);
        },
        reject(error) {
          clearTimeout(timer);
          reject(error);
        },
      };
      this._waiters.push(waiter);
    });
  }

  /** Stops new deliveries, lets the backlog be handled, then closes;
   * bounded by `timeout` ms (default: the connection's drainTimeout). */
  async drain(timeout) {
    await native.sub_drain(this._handle, timeoutArg(timeout));
    // The library has handed over the backlog; it ends after the last one.
    await this.closed;
  }

  /** {delivered, dropped, pendingMsgs, pendingBytes, stalls} */
  stats() {
    return native.feedStats(this._handle);
  }

  /** Breaking out of `for await` unsubscribes. */
  return() {
    this._stop();
    return Promise.resolve({ value: undefined, done: true });
  }
}

class Replies extends MessageStream {
  constructor(connection, subject, data, opts) {
    super(connection, DEFAULT_WINDOW);
    const handle = native.client_request_many(connection._handle, subject, flattenHeaders(opts.headers), toBytes(data), {
      max_msgs: opts.maxMessages,
      stall_ms: opts.stall,
      timeout_ms: opts.timeout,
    });
    this._start(handle);
    connection._streams.add(this);
  }

  /** Stops reading replies (the inbox is released by the library). */
  return() {
    this._stop();
    return Promise.resolve({ value: undefined, done: true });
  }
}

// ---------------------------------------------------------------------------
// Services (ADR-32), in the shape of nats.js's @nats-io/services: new
// Svcm(nc).add(config) starts a service that PING/INFO/STATS discover
// (answered by the library); each endpoint is a feed of requests (src/
// service.c), handed to its handler or yielded by its iterator.

const ServiceErrorHeader = 'Nats-Service-Error';
const ServiceErrorCodeHeader = 'Nats-Service-Error-Code';
const ServiceVerb = Object.freeze({ PING: 'PING', STATS: 'STATS', INFO: 'INFO' });
const SERVICE_VERB_NUMBER = { PING: 0, INFO: 1, STATS: 2 };
const ServiceResponseType = Object.freeze({
  STATS: 'io.nats.micro.v1.stats_response',
  INFO: 'io.nats.micro.v1.info_response',
  PING: 'io.nats.micro.v1.ping_response',
});
/** How long the library waits for a statsHandler's answer to one STATS
 * request (on its own thread) before it leaves that endpoint's data out. */
const STATS_HANDLER_TIMEOUT_MS = 1000;

/** An error reply of a service (the Nats-Service-Error headers), or an
 * error a handler throws to answer with its code. */
class ServiceError extends Error {
  constructor(code, message) {
    super(message);
    this.name = 'ServiceError';
    /** @type {number} */
    this.code = code;
  }

  static isServiceError(msg) {
    return ServiceError.toServiceError(msg) !== null;
  }

  /** The ServiceError a reply carries, or null. */
  static toServiceError(msg) {
    const h = msg?.headers;
    const first = (name) => {
      const v = h?.get(name);
      return Array.isArray(v) ? v[0] : v;
    };
    const scode = first(ServiceErrorCodeHeader) || '';
    if (scode === '') return null;
    const description = first(ServiceErrorHeader) || '';
    return new ServiceError(parseInt(scode, 10) || 400, description.length ? description : scode);
  }
}

/** A request to an endpoint: the message, and its answers. */
class ServiceMsg {
  constructor(connection, raw) {
    this._connection = connection;
    this._req = raw[0];
    const [subject, reply, data, rawHeaders] = raw[1];
    /** @type {string} */
    this.subject = subject;
    /** @type {string} ("" when the request has no reply subject) */
    this.reply = reply ?? '';
    /** @type {Buffer} */
    this.data = data;
    this._rawHeaders = rawHeaders;
    this._headers = undefined;
    this._answered = false;
  }

  /** @returns {MsgHeaders|undefined} */
  get headers() {
    if (this._headers === undefined && this._rawHeaders !== null) this._headers = headersFromFlat(this._rawHeaders);
    return this._headers;
  }

  string() {
    return this.data.toString('utf8');
  }

  json(reviver) {
    return JSON.parse(this.string(), reviver);
  }

  /** The first answer goes through the library (it ends the request's
   * processing time) and frees its handle; a later one is a plain publish
   * to the reply subject. */
  _answer(first) {
    if (!this.reply) return false;
    if (this._answered) return null;
    this._answered = true;
    try {
      first();
    } finally {
      native.serviceRequestRelease(this._req);
    }
    return true;
  }

  /** Answers with `data`; false when the request has no reply subject. */
  respond(data, opts = {}) {
    const bytes = toBytes(data);
    const headers = flattenHeaders(opts?.headers);
    const r = this._answer(() => native.service_request_respond(this._req, headers, bytes));
    if (r === null) native.publish(this._connection._handle, this.reply, bytes, null, headers, true);
    return r !== false;
  }

  /** Answers with an error: the Nats-Service-Error and
   * Nats-Service-Error-Code headers, `data` as the body; counts as an
   * error of the endpoint. */
  respondError(code, description, data, opts = {}) {
    const bytes = toBytes(data);
    const headers = flattenHeaders(opts?.headers);
    const r = this._answer(() =>
      native.service_request_respond_error(this._req, code, String(description), headers, bytes),
    );
    if (r === null) {
      const flat = [...(headers ?? []), ServiceErrorHeader, String(description), ServiceErrorCodeHeader, String(code)];
      native.publish(this._connection._handle, this.reply, bytes, null, flat, true);
    }
    return r !== false;
  }

  /** The handler failed with `error`: a ServiceError answers with its
   * code; anything else is the library's handler failure (a 500 reply
   * unless answered, an error counted, the error handler called). */
  _fail(error) {
    if (error instanceof ServiceError && !this._answered) {
      try {
        this.respondError(error.code, error.message || 'handler error');
        return;
      } catch {
        // not a valid error reply: the library's failure below
      }
    }
    this._answered = true;
    try {
      native.service_request_fail(this._req, String(error?.message ?? error ?? 'handler error'));
    } catch {
      // released already: answered, and its error is counted there
    } finally {
      native.serviceRequestRelease(this._req);
    }
  }
}

/** An endpoint's pendingMsgsLimit and pendingBytesLimit (nats.go's
 * WithEndpointPendingLimits) into `out` under the library's names. The
 * library refuses 0, and the fields anywhere but on an endpoint
 * (ServiceConfigError); here a number that JSON would turn into null (NaN,
 * an infinity: no limit) or that is no integer is refused the same way,
 * anything but a number with TypeError. */
function pendingLimitsConfig(opts, out) {
  for (const [name, field] of [
    ['pendingMsgsLimit', 'pending_msgs_limit'],
    ['pendingBytesLimit', 'pending_bytes_limit'],
  ]) {
    const v = opts[name];
    if (v === undefined || v === null) continue;
    if (typeof v !== 'number') throw new TypeError(`${name} must be a number`);
    if (!Number.isInteger(v)) {
      throw makeError(Status.SERVICE_CONFIG, `${name} must be an integer (negative: no limit), not ${v}`);
    }
    out[field] = v;
  }
  return out;
}

function queueConfig(queue, out) {
  if (queue === undefined || queue === null) return out;
  if (queue === '') out.queue_group_disabled = true;
  else out.queue_group = queue;
  return out;
}

/**
 * An endpoint of a service: its requests go to its handler, or, without
 * one, it is an async iterator of ServiceMsg. A handler's throw or
 * rejected promise answers 500 (a ServiceError: its code), counts an
 * error and calls the service's errorHandler; the endpoint keeps serving.
 * Its pendingMsgsLimit / pendingBytesLimit bound the requests the library
 * queues for it unread (an iterator holds up to pendingMsgsLimit more):
 * over them requests are dropped, each slow-consumer report counted as an
 * error and told to the errorHandler (code 0).
 */
class ServiceEndpoint extends Feed {
  constructor(service, group, name, opts) {
    if (typeof opts === 'function') opts = { handler: opts };
    opts = opts ?? {};
    if (opts.handler !== undefined && opts.handler !== null && typeof opts.handler !== 'function') {
      throw new TypeError('handler must be a function');
    }
    const cfg = pendingLimitsConfig(opts, queueConfig(opts.queue, { name }));
    if (opts.subject !== undefined && opts.subject !== null) cfg.subject = opts.subject;
    if (opts.metadata !== undefined && opts.metadata !== null) cfg.metadata = opts.metadata;
    // The endpoint's own limit, else the connection's (as a subscription's).
    super(iteratorWindow(cfg.pending_msgs_limit ?? service._connection._pendingMsgsLimit));
    this._service = service;
    this._handler = opts.handler ?? null;
    const handle = native.serviceAddEndpoint(service._handle, group, JSON.stringify(cfg));
    /** @type {string} */
    this.name = native.endpoint_name(handle);
    /** @type {string} the full subject (group prefix included) */
    this.subject = native.endpoint_subject(handle);
    /** @type {string} ("" without a queue group) */
    this.queue = native.endpoint_queue_group(handle) ?? '';
    /** @type {Record<string, string>|undefined} */
    this.metadata = opts.metadata;
    if (this._handler) this._callback = () => {};
    this._start(handle);
    service._endpoints.add(this);
  }

  onItems(count, items) {
    for (let i = 0; i < count; i++) {
      if (this._done) return;
      if (this._handler) this._serve(items[i]);
      else this._deliver(items[i]);
    }
  }

  _take(raw) {
    return new ServiceMsg(this._service._connection, raw);
  }

  _serve(raw) {
    const msg = new ServiceMsg(this._service._connection, raw);
    let result;
    try {
      result = this._handler(null, msg);
    } catch (error) {
      msg._fail(error);
      return;
    }
    if (result !== null && typeof result === 'object' && typeof result.then === 'function') {
      result.then(undefined, (error) => msg._fail(error));
    }
  }

  _onFinish() {
    this._service._endpoints.delete(this);
  }

  get isClosed() {
    return this._done;
  }

  /** Stops this endpoint alone (it stays in INFO and STATS). */
  stop() {
    this._stop();
  }

  /** Breaking out of `for await` stops the endpoint. */
  return() {
    this._stop();
    return Promise.resolve({ value: undefined, done: true });
  }

  /** This endpoint's STATS entry ({name, subject, num_requests, ...}). */
  stats() {
    return JSON.parse(native.endpoint_stats_json(this._handle));
  }

  /** The library's counters of this endpoint's requests, as
   * Subscription.stats(): {delivered, dropped (over the pending limits),
   * pendingMsgs, pendingBytes (queued in the library, not yet taken),
   * stalls}. */
  iteratorStats() {
    return native.feedStats(this._handle);
  }
}

/** A subject prefix (and queue group) for endpoints. */
class ServiceGroup {
  constructor(service, parent, name, queue) {
    this._service = service;
    this._handle = native.serviceAddGroup(service._handle, parent, JSON.stringify(queueConfig(queue, { name })));
  }

  /** Adds an endpoint: `opts` a handler(err, msg), or {handler, subject,
   * queue, metadata, pendingMsgsLimit, pendingBytesLimit}; without a
   * handler the endpoint is an async iterator. */
  addEndpoint(name, opts) {
    return new ServiceEndpoint(this._service, this._handle, name, opts);
  }

  /** A group under this one: `queue` undefined keeps this group's queue
   * group, "" none. */
  addGroup(name = '', queue) {
    return new ServiceGroup(this._service, this._handle, name, queue);
  }
}

/** A running service (Svcm.add). */
class Service {
  constructor(connection, handle, config) {
    this._connection = connection;
    this._handle = handle;
    this._config = config;
    this._endpoints = new Set();
    this._error = null;
    this._id = register(this);
    // A service stops by stop() or its connection's close, the two paths
    // that resolve this. (Not natsio_service_end_async: an operation that
    // stays in flight would keep the event loop from spinning for others.)
    this._stoppedResolve = null;
    this.stopped = new Promise((resolve) => {
      this._stoppedResolve = resolve;
    });
    native.serviceSetHandlers(
      handle,
      this._id,
      typeof config.statsHandler === 'function' ? (kind, key, request) => this._statsAsked(key, request) : null,
      STATS_HANDLER_TIMEOUT_MS,
    );
    connection._services.add(this);
  }

  get id() {
    return native.service_id(this._handle);
  }

  get name() {
    return native.service_name(this._handle);
  }

  get version() {
    return native.service_version(this._handle);
  }

  get description() {
    return this._config.description ?? '';
  }

  get metadata() {
    return this._config.metadata;
  }

  get isStopped() {
    return native.service_is_stopped(this._handle);
  }

  /** Adds an endpoint to the service's root (see ServiceGroup.addEndpoint). */
  addEndpoint(name, opts) {
    return new ServiceEndpoint(this, null, name, opts);
  }

  /** A group of endpoints under subject prefix `name`; `queue` undefined:
   * the service's queue group, "": none. */
  addGroup(name = '', queue) {
    return new ServiceGroup(this, null, name, queue);
  }

  /** The INFO response (io.nats.micro.v1.info_response). */
  info() {
    return JSON.parse(native.service_info_json(this._handle));
  }

  /** The PING response. */
  ping() {
    const { name, id, version, metadata } = this.info();
    return { type: ServiceResponseType.PING, name, id, version, metadata };
  }

  /** The STATS response; each endpoint's `data` from the statsHandler. */
  async stats() {
    const stats = JSON.parse(native.service_stats_json(this._handle));
    const handler = this._config.statsHandler;
    if (typeof handler === 'function') {
      for (const e of stats.endpoints ?? []) {
        try {
          const data = await handler(e);
          if (data !== undefined && data !== null) e.data = data;
        } catch {
          // no data for this endpoint
        }
      }
    }
    return stats;
  }

  /** Zeroes every endpoint's counters and restarts `started`. */
  reset() {
    native.service_reset(this._handle);
  }

  /** Stops: every endpoint drains (requests received are still handled and
   * may be answered; new ones find no responder). Resolves with `err`
   * (or null) once stopped, as `stopped` does. */
  async stop(err) {
    if (err !== undefined && this._error === null) this._error = err;
    await native.service_stop(this._handle);
    this._ended();
    return this.stopped;
  }

  // The library asks for an endpoint's STATS data on its own thread
  // (src/auth.c): key is "<name> <subject>".
  _statsAsked(key, request) {
    const at = key.indexOf(' ');
    const endpoint = { name: key.slice(0, at), subject: key.slice(at + 1) };
    Promise.resolve()
      .then(() => this._config.statsHandler(endpoint))
      .then((data) => (data === undefined || data === null ? undefined : JSON.stringify(data)))
      .then(
        (json) => native.authReply(request, json),
        () => native.authReply(request, undefined), // the handler failed: no data
      );
  }

  onServiceError(code, endpoint, subject, description) {
    const handler = this._config.errorHandler;
    if (typeof handler !== 'function') return;
    const error = new ServiceError(code, description);
    error.endpoint = endpoint;
    error.subject = subject;
    try {
      handler(error);
    } catch (e) {
      native.reportUncaught(e);
    }
  }

  _connectionClosed() {
    for (const e of [...this._endpoints]) e._abort();
    this._ended();
  }

  _ended() {
    targets.delete(this._id);
    this._connection._services.delete(this);
    this._stoppedResolve(this._error);
  }
}

function serviceConfigJson(config) {
  if (config === null || typeof config !== 'object') throw new TypeError('service config must be an object');
  // Pending limits are an endpoint's: the library refuses them here.
  const out = pendingLimitsConfig(config, queueConfig(config.queue, { name: config.name, version: config.version }));
  if (config.description !== undefined) out.description = config.description;
  if (config.metadata !== undefined && config.metadata !== null) out.metadata = config.metadata;
  return JSON.stringify(out);
}

/** Asks services for their PING, INFO or STATS responses. */
class ServiceClient {
  /** `opts`: {maxWait (ms, default 2000), strategy ("stall" by default:
   * ends `stall` ms, default 300, after the last answer; "count": after
   * maxMessages), maxMessages, stall}; `prefix` replaces "$SRV". */
  constructor(connection, opts, prefix) {
    this._connection = connection;
    this._opts = opts ?? { strategy: 'stall', maxWait: 2000 };
    this._prefix = prefix;
  }

  ping(name = '', id = '') {
    return this._q(ServiceVerb.PING, name, id);
  }

  stats(name = '', id = '') {
    return this._q(ServiceVerb.STATS, name, id);
  }

  info(name = '', id = '') {
    return this._q(ServiceVerb.INFO, name, id);
  }

  /** An async iterator of the decoded responses. */
  async _q(verb, name, id) {
    const o = this._opts;
    const strategy = o.strategy ?? 'stall';
    const opts = {
      timeout_ms: o.maxWait ?? 2000,
      stall_ms: strategy === 'stall' ? (o.stall ?? o.jitter ?? 300) : undefined,
      max_msgs: strategy === 'count' ? o.maxMessages : undefined,
    };
    let replies;
    if (this._prefix !== undefined) {
      const subject = [this._prefix, verb, name, id].filter((t) => t !== '').join('.');
      replies = this._connection.requestMany(subject, null, {
        timeout: opts.timeout_ms,
        stall: opts.stall_ms,
        maxMessages: opts.max_msgs,
      });
    } else {
      replies = new ServiceReplies(this._connection, SERVICE_VERB_NUMBER[verb], name || null, id || null, opts);
    }
    return (async function* decoded() {
      for await (const m of replies) yield m.json();
    })();
  }
}

/** Discovery replies (natsio_client_service_discover), read as requestMany's. */
class ServiceReplies extends MessageStream {
  constructor(connection, verb, name, id, opts) {
    super(connection, DEFAULT_WINDOW);
    this._start(native.client_service_discover(connection._handle, verb, name, id, opts));
    connection._streams.add(this);
  }

  return() {
    this._stop();
    return Promise.resolve({ value: undefined, done: true });
  }
}

/** nats.js's Svcm: services over a connection. */
class Svcm {
  constructor(nc) {
    this.nc = nc;
  }

  /** Starts a service from {name, version, description, metadata, queue
   * ("" for none; default "q"), statsHandler(endpoint) (async: an
   * endpoint's STATS data), errorHandler(err) (told of handler failures,
   * code 500, and of requests dropped over an endpoint's pending limits,
   * code 0: a ServiceError with endpoint and subject)};
   * a bad name or version rejects with ServiceConfigError before anything
   * is sent. */
  async add(config) {
    const handle = native.client_add_service(this.nc._handle, serviceConfigJson(config));
    return new Service(this.nc, handle, { ...config });
  }

  /** A client that pings/infos/stats services (see ServiceClient). */
  client(opts, prefix) {
    return new ServiceClient(this.nc, opts, prefix);
  }
}

const POLICIES = {
  dropNew: 0,
  drop_new: 0,
  DROP_NEW: 0,
  dropOld: 1,
  drop_old: 1,
  DROP_OLD: 1,
  block: 2,
  BLOCK: 2,
  error: 3,
  ERROR: 3,
};

function policyNumber(policy) {
  if (policy === undefined || policy === null) return 0;
  if (typeof policy === 'number') return policy;
  const n = POLICIES[policy];
  if (n === undefined) throw makeError(Status.INVALID_ARGUMENT, `unknown pending policy "${policy}"`);
  return n;
}

// ---------------------------------------------------------------------------
// Connection

const CONN_STATUS = ['DISCONNECTED', 'CONNECTING', 'CONNECTED', 'RECONNECTING', 'DRAINING', 'CLOSED'];

class Connection extends EventEmitter {
  constructor(handle, id, log = () => {}, pendingMsgsLimit = undefined) {
    super();
    this._handle = handle;
    this._id = id;
    this._log = log;
    this._pendingMsgsLimit = pendingMsgsLimit;
    this._streams = new Set();
    this._services = new Set();
    this._open = true;
    this._closing = null;
    holdEventLoop();
  }

  // Asynchronous errors from the library (slow consumers, server -ERR,
  // lost connection, drain timeout). Emitted as 'error' only when someone
  // listens, so a slow consumer never crashes a process that did not ask.
  onError(error, info) {
    if (!this._open) return;
    error.sid = info.sid;
    error.subject = info.subject ?? undefined;
    if (this.listenerCount('error') > 0) this.emit('error', error);
    if (native.client_status(this._handle) === 5) this._markClosed();
  }

  // A user callback threw (a subscription's callback, an event listener,
  // the logger): the 'error' event carries it as a CallbackError and
  // delivery goes on. Without an 'error' listener it is logged at 'error'
  // level to the connection's logger (or standard error), whatever
  // logLevel says: never thrown, so it cannot end the process. An 'error'
  // listener that throws itself is an uncaught exception, as in Node.
  _callbackError(thrown, where) {
    const error = new CallbackError(thrown, where);
    if (this.listenerCount('error') > 0) {
      this.emit('error', error);
      return;
    }
    const stack = thrown instanceof Error && thrown.stack ? `\n${thrown.stack}` : '';
    const line = `${error.message}${stack}`;
    try {
      this._log(1, line);
    } catch {
      process.stderr.write(`natsio ERROR: ${line}\n`);
    }
  }

  /** Emits a lifecycle event; a listener that throws is reported through
   * _callbackError, and the remaining listeners still run. */
  _emitEvent(name, ...args) {
    for (const listener of this.rawListeners(name)) {
      try {
        listener.apply(this, args); // a once() wrapper removes itself
      } catch (thrown) {
        this._callbackError(thrown, { event: name });
      }
    }
  }

  // Lifecycle events of the library (natsio_event_kind), in order:
  // 'connect' (url), 'disconnect' (error), 'reconnectFailed' (error, one
  // per failed reconnect attempt), 'reconnect' (url), 'ldm' (url),
  // 'servers' (string[] of new URLs); the library's CLOSED ends the JS side
  // too, which emits 'close' once. Kinds not known here are ignored.
  onEvent(kind, text, error) {
    if (!this._open) return;
    switch (kind) {
      case 0:
        this._emitEvent('connect', text);
        break;
      case 1:
        this._emitEvent('disconnect', error ?? null);
        break;
      case 2:
        this._emitEvent('reconnect', text);
        break;
      case 3:
        this._emitEvent('ldm', text);
        break;
      case 4:
        this._emitEvent('servers', splitUrls(text));
        break;
      case 5:
        this._markClosed();
        break;
      case 6:
        this._emitEvent('reconnectFailed', error);
        break;
    }
  }

  get status() {
    return CONN_STATUS[native.client_status(this._handle)] ?? 'UNKNOWN';
  }

  /** The server pool: configured and discovered URLs. */
  get servers() {
    return native.client_servers(this._handle);
  }

  /** The server pool in the order its servers are tried, each as {url,
   * reconnects (failed attempts since last connected to it), didConnect,
   * discovered (learned from the cluster)}: a snapshot (nats.go's
   * ServerPool). Readable after close too. */
  serverPool() {
    return native.serverPool(this._handle);
  }

  /** Replaces the server pool with `urls`, in that order (not shuffled);
   * the connection stays up and the next reconnect picks from the new
   * pool (forceReconnect() moves now). A server already in the pool (same
   * host and port) keeps its bookkeeping. Throws ConfigError (empty list,
   * invalid URL: the pool is unchanged), TypeError (not an array of
   * strings), ConnectionClosedError. */
  setServerPool(urls) {
    if (!Array.isArray(urls)) throw new TypeError('urls must be an array of strings');
    native.client_set_server_pool(this._handle, urls);
  }

  /** Drops the connection and reconnects (to another server of the pool
   * when there is one); subscriptions are restored. Returns at once. */
  forceReconnect() {
    native.client_force_reconnect(this._handle);
  }

  /** One PING/PONG round trip in microseconds: a flush, timed from its
   * start to its settling on this thread (where nats.js measures it too). */
  async rtt() {
    const t0 = process.hrtime.bigint();
    await native.client_flush(this._handle, -1);
    return Math.max(1, Number((process.hrtime.bigint() - t0) / 1000n));
  }

  get isClosed() {
    return !this._open || native.client_status(this._handle) === 5;
  }

  /** Largest payload (headers included) the server accepts. */
  get maxPayload() {
    return native.client_max_payload(this._handle);
  }

  /** The server's latest INFO. */
  get info() {
    return JSON.parse(native.client_server_info(this._handle));
  }

  get connectedUrl() {
    return native.client_connected_url(this._handle);
  }

  newInbox() {
    return native.client_new_inbox(this._handle);
  }

  /** The prefix of this connection's reply inboxes (inboxPrefix, default
   * '_INBOX'); readable after close too. */
  get inboxPrefix() {
    return native.client_inbox_prefix(this._handle);
  }

  publish(subject, data, opts = {}) {
    native.publish(this._handle, subject, toBytes(data), opts.reply ?? null, flattenHeaders(opts.headers));
  }

  subscribe(subject, opts = {}) {
    return new Subscription(this, subject, opts);
  }

  async request(subject, data, opts = {}) {
    const raw = await native.client_request(
      this._handle,
      subject,
      flattenHeaders(opts.headers),
      toBytes(data),
      timeoutArg(opts.timeout),
    );
    return new Msg(this, raw[0], raw[1], raw[2], raw[3], raw[4], raw[5]);
  }

  /** Replies to one request, as an async iterator. Options: maxMessages,
   * stall (ms without a reply after the first), timeout (ms overall). */
  requestMany(subject, data, opts = {}) {
    return new Replies(this, subject, data, opts);
  }

  /** Resolves once the server has processed everything sent before; rejects
   * with TimeoutError after `timeout` ms (default: the connection's
   * flushTimeout). */
  async flush(timeout) {
    return native.client_flush(this._handle, timeoutArg(timeout));
  }

  /** Drains every subscription, flushes, then closes. */
  async drain(timeout) {
    try {
      await native.client_drain(this._handle, timeoutArg(timeout));
    } finally {
      if (native.client_status(this._handle) === 5) {
        // Every subscription ends after its backlog: deliver it before
        // closing the JS side.
        await Promise.all([...this._streams].map((stream) => stream.closed));
        await this.close();
      }
    }
  }

  close() {
    if (!this._closing) {
      // Nothing of this connection is wanted any more: its dispatchers must
      // not wait for JS, or the close (which waits for them) could not end.
      native.releaseFeeds(this._handle);
      this._closing = native
        .client_close(this._handle)
        .catch((e) => {
          if (e.status !== Status.CONNECTION_CLOSED) throw e; // closing a closed connection is fine
        })
        .then(() => this._markClosed());
    }
    return this._closing;
  }

  /** {inMsgs, outMsgs, inBytes, outBytes, reconnects, errors, serverPings} */
  stats() {
    return native.stats(this._handle);
  }

  _markClosed() {
    if (!this._open) return;
    this._open = false;
    // Iterators end; no callback of this connection runs again.
    for (const stream of [...this._streams]) stream._connectionClosed();
    for (const service of [...this._services]) service._connectionClosed();
    targets.delete(this._id);
    releaseEventLoop();
    this._emitEvent('close');
  }
}

/** A timeout option in ms for the library: undefined means the default of
 * the handle (NATSIO_TIMEOUT_DEFAULT). */
function timeoutArg(timeout) {
  if (timeout === undefined || timeout === null) return -1;
  if (typeof timeout !== 'number' || Number.isNaN(timeout)) throw new TypeError('timeout must be a number (ms)');
  return timeout;
}

function splitUrls(text) {
  return text ? text.split(',').filter((u) => u !== '') : [];
}

// Library defaults, needed when only one of a pair of options is given
// (the C ABI sets both at once).
const DEFAULT_RECONNECT_WAIT_MS = 2000;
const DEFAULT_RECONNECT_WAIT_MAX_MS = 8000;
const DEFAULT_JITTER_MS = 100;
const DEFAULT_JITTER_TLS_MS = 1000;

/** Maps the reconnect, auth and TLS options onto the addon's flat names. */
function reconnectAuthTlsOptions(opts, nativeOpts) {
  if (opts.reconnect !== undefined) nativeOpts.allowReconnect = Boolean(opts.reconnect);
  if (opts.reconnectTimeWait !== undefined || opts.reconnectTimeWaitMax !== undefined) {
    const wait = opts.reconnectTimeWait ?? DEFAULT_RECONNECT_WAIT_MS;
    nativeOpts.reconnectWaitMs = wait;
    nativeOpts.reconnectWaitMaxMs = opts.reconnectTimeWaitMax ?? Math.max(wait, DEFAULT_RECONNECT_WAIT_MAX_MS);
  }
  if (opts.reconnectJitter !== undefined || opts.reconnectJitterTls !== undefined) {
    nativeOpts.reconnectJitterMs = opts.reconnectJitter ?? DEFAULT_JITTER_MS;
    nativeOpts.reconnectJitterTlsMs = opts.reconnectJitterTls ?? DEFAULT_JITTER_TLS_MS;
  }
  const retry = opts.retryOnFailedConnect ?? opts.waitOnFirstConnect;
  if (retry !== undefined) nativeOpts.retryOnFailedConnect = Boolean(retry);
  const tls = opts.tls;
  if (tls) {
    nativeOpts.tls = true;
    if (typeof tls === 'object') {
      nativeOpts.tlsCaFile = tls.caFile;
      nativeOpts.tlsCertFile = tls.certFile;
      nativeOpts.tlsKeyFile = tls.keyFile;
      if (tls.ca !== undefined || tls.cert !== undefined || tls.key !== undefined) {
        // In-memory PEM (nats.js's ca, cert, key); a file given beside
        // them is read now, once.
        const pem = (text, file, name) => {
          if (text !== undefined && file !== undefined) throw new TypeError(`tls: give ${name} or ${name}File, not both`);
          if (text === undefined) return file === undefined ? null : require('node:fs').readFileSync(file);
          if (typeof text === 'string') return Buffer.from(text);
          if (text instanceof Uint8Array) return text;
          throw new TypeError(`tls.${name} must be PEM text (a string or bytes)`);
        };
        nativeOpts.tlsPem = [pem(tls.ca, tls.caFile, 'ca'), pem(tls.cert, tls.certFile, 'cert'), pem(tls.key, tls.keyFile, 'key')];
      }
      nativeOpts.tlsHostname = tls.hostname;
      if (tls.handshakeFirst !== undefined) nativeOpts.tlsHandshakeFirst = Boolean(tls.handshakeFirst);
    }
  } else {
    delete nativeOpts.tls;
  }
}

const DEFAULT_CONNECT_TIMEOUT_MS = 5000;
// The library's defaults of the other half of a pair set together.
const DEFAULT_PING_INTERVAL_MS = 120000;
const DEFAULT_MAX_PINGS_OUT = 2;
const DEFAULT_PENDING_MSGS_LIMIT = 65536;
const DEFAULT_PENDING_BYTES_LIMIT = 64 * 1024 * 1024;
// The Node binding's own default: a publish past maxPendingSize pauses the
// JS thread at most this long for room (the library's default is none).
const DEFAULT_WRITE_ROOM_PAUSE_MS = 500;

/** A library options handle (native.optionsNew) set from connect()'s
 * normalized options `n`, one generated setter (options_set_*) per option;
 * connect adds the callbacks. */
function libraryOptions(n) {
  const o = native.optionsNew();
  const str = (v, set) => v !== undefined && v !== null && set(o, v);
  const int = (v, set) => typeof v === 'number' && set(o, v);
  const bool = (v, set) => typeof v === 'boolean' && set(o, v);
  const num = (v, dflt) => (typeof v === 'number' ? v : dflt);
  if (Array.isArray(n.servers)) native.options_set_servers(o, n.servers);
  str(n.name, native.options_set_name);
  str(n.inboxPrefix, native.options_set_inbox_prefix);
  // A function (called on every connect) goes through the auth handler.
  if (typeof n.token !== 'function') str(n.token, native.options_set_token);
  if (typeof n.user !== 'function' && typeof n.pass !== 'function') {
    str(n.user, (opts, user) => native.options_set_user_password(opts, user, n.pass ?? null));
  }
  int(n.timeout, native.options_set_connect_timeout_ms);
  bool(n.noEcho, (opts, noEcho) => native.options_set_echo(opts, !noEcho));
  bool(n.verbose, native.options_set_verbose);
  bool(n.pedantic, native.options_set_pedantic);
  bool(n.permissionErrOnSubscribe, native.options_set_permission_err_on_subscribe);
  // publish() runs on the JS thread, which also handles what the
  // subscriptions receive: a publish that waited long for room in a full
  // write buffer would stop that too, and a subscription of the same thread
  // could overflow meanwhile. By default it pauses briefly (writeRoomPause)
  // and then queues over the bound: paced by a server that keeps reading,
  // never stalled by one that does not. waitForWriteRoom: true bounds the
  // buffer and blocks up to flushTimeout.
  native.options_set_wait_for_write_room(o, n.waitForWriteRoom === true);
  native.options_set_write_room_pause_ms(o, num(n.writeRoomPause, DEFAULT_WRITE_ROOM_PAUSE_MS));
  int(n.drainTimeout, native.options_set_drain_timeout_ms);
  int(n.flushTimeout, native.options_set_flush_timeout_ms);
  int(n.requestTimeout, native.options_set_request_timeout_ms);
  int(n.maxPendingSize, native.options_set_max_pending_size);
  int(n.maxControlLine, native.options_set_max_control_line);
  if (typeof n.pingInterval === 'number' || typeof n.maxPingsOut === 'number') {
    native.options_set_ping(o, num(n.pingInterval, DEFAULT_PING_INTERVAL_MS), num(n.maxPingsOut, DEFAULT_MAX_PINGS_OUT));
  }
  if (typeof n.pendingMsgsLimit === 'number' || typeof n.pendingBytesLimit === 'number') {
    native.options_set_pending_limits(
      o,
      num(n.pendingMsgsLimit, DEFAULT_PENDING_MSGS_LIMIT),
      num(n.pendingBytesLimit, DEFAULT_PENDING_BYTES_LIMIT),
    );
  }
  // The server's monitoring shows this binding as itself.
  native.options_set_client_lang(o, 'natsio-node', native.version());
  // Reconnect, auth and TLS (reconnectAuthTlsOptions' names).
  bool(n.allowReconnect, native.options_set_allow_reconnect);
  int(n.maxReconnectAttempts, native.options_set_max_reconnect_attempts);
  if (typeof n.reconnectWaitMs === 'number' && typeof n.reconnectWaitMaxMs === 'number') {
    native.options_set_reconnect_wait(o, n.reconnectWaitMs, n.reconnectWaitMaxMs);
  }
  if (typeof n.reconnectJitterMs === 'number' && typeof n.reconnectJitterTlsMs === 'number') {
    native.options_set_reconnect_jitter(o, n.reconnectJitterMs, n.reconnectJitterTlsMs);
  }
  int(n.reconnectBufSize, native.options_set_reconnect_buf_size);
  bool(n.noRandomize, native.options_set_no_randomize);
  bool(n.ignoreDiscoveredServers, native.options_set_ignore_discovered_servers);
  bool(n.retryOnFailedConnect, native.options_set_retry_on_failed_connect);
  bool(n.ignoreAuthErrorAbort, native.options_set_ignore_auth_error_abort);
  if (n.reconnectDelayAsk) native.optionsSetReconnectDelay(o, n.reconnectDelayAsk, n.reconnectDelayTimeoutMs);
  str(n.nkeySeed, native.options_set_nkey_seed);
  str(n.nkeyFile, native.options_set_nkey_file);
  str(n.credsFile, native.options_set_credentials_file);
  if (n.tls === true) {
    if (n.tlsPem) native.options_set_tls_pem(o, ...n.tlsPem);
    else native.options_set_tls(o, n.tlsCaFile ?? null, n.tlsCertFile ?? null, n.tlsKeyFile ?? null);
    str(n.tlsHostname, native.options_set_tls_hostname);
    bool(n.tlsHandshakeFirst, native.options_set_tls_handshake_first);
  }
  return o;
}

/** index.js's side of the authentication callbacks (src/auth.c): the
 * addon calls handler(kind, nonce, request) on the JS thread for a
 * library thread that connects and waits for native.authReply(request,
 * value). kind 0: the user JWT (userJWT: a string, or a function returning
 * one or a promise of one); kind 1: the signature of `nonce`
 * (signatureCB(nonce) returning 64 bytes, or a promise of them). A throw,
 * a rejection or a wrong value fails that connection attempt. */
function makeAuthHandler(opts, relay) {
  const { userJWT, signatureCB } = opts;
  const general = authenticatorHandler(opts, relay);
  const credentials = credentialsHandler(opts, relay);
  if (general) {
    const other = credentials ? 'a user, pass or token function' : userJWT !== undefined || signatureCB !== undefined ? 'userJWT' : undefined;
    if (other) throw makeError(Status.CONFIG, `authenticator: ${other} is already set (one authentication kind only)`);
    return general;
  }
  if (credentials) return credentials;
  if (userJWT === undefined && signatureCB === undefined) return undefined;
  if (typeof userJWT !== 'string' && typeof userJWT !== 'function') {
    throw new TypeError('userJWT must be a string or a function returning one (with signatureCB)');
  }
  if (typeof signatureCB !== 'function') {
    throw new TypeError('signatureCB must be a function (nonce: Uint8Array) => Uint8Array (with userJWT)');
  }
  return (kind, nonce, request) => {
    const event = kind === 0 ? 'userJWT' : 'signatureCB';
    const failed = (thrown) => {
      native.authReply(request, undefined);
      relay.callbackError(thrown, { event });
    };
    let answer;
    try {
      answer = kind === 0 ? (typeof userJWT === 'function' ? userJWT() : userJWT) : signatureCB(nonce);
    } catch (thrown) {
      failed(thrown);
      return;
    }
    if (answer !== null && typeof answer === 'object' && typeof answer.then === 'function') {
      Promise.resolve(answer).then((value) => native.authReply(request, value), failed);
    } else {
      native.authReply(request, answer);
    }
  };
}

/** The handler of opts.reconnectDelayHandler (src/auth.c's kind 6): a
 * function (attempts: number) => number of milliseconds, asked before the
 * last server of each turn through the pool (with one server, before
 * every reconnect attempt), `attempts` the turn (1, 2, ... afresh on
 * every reconnect), as nats.go's CustomReconnectDelay. It must answer
 * synchronously: a throw, or an answer that is not a number (NaN
 * included), fails that attempt and is reported ('callbackError', event
 * 'reconnectDelayHandler'); a negative number is 0. Asked from a library
 * thread that waits at most the connect timeout for the event loop: past
 * it, the library's own delay (reconnectTimeWait and jitter) is used. */
function reconnectDelayHandler(opts, relay) {
  const fn = opts.reconnectDelayHandler;
  if (fn === undefined || fn === null) return undefined;
  if (typeof fn !== 'function') throw new TypeError("'reconnectDelayHandler' must be a function");
  return (kind, attempts, request) => {
    let ms;
    try {
      ms = fn(attempts);
    } catch (thrown) {
      native.authReply(request, undefined);
      relay.callbackError(thrown, { event: 'reconnectDelayHandler' });
      return;
    }
    if (typeof ms !== 'number' || Number.isNaN(ms)) {
      native.authReply(request, undefined);
      relay.callbackError(new TypeError(`reconnectDelayHandler returned ${typeof ms === 'number' ? 'NaN' : typeof ms}, not a number of milliseconds`), {
        event: 'reconnectDelayHandler',
      });
      return;
    }
    native.authReply(request, ms);
  };
}

/** The handler of callable credentials (src/auth.c's kinds 3 and 4):
 * `user`/`pass` or `token` given as functions (returning a string or a
 * promise of one) are called on every connect and reconnect, so rotated
 * secrets are picked up. Its `kind` tells native.connect which to register. */
function credentialsHandler(opts, relay) {
  const { user, pass, token } = opts;
  const userPassword = typeof user === 'function' || typeof pass === 'function';
  if (!userPassword && typeof token !== 'function') return undefined;
  const call = (v) => (typeof v === 'function' ? v() : v);
  const handler = (kind, nonce, request) => {
    const failed = (thrown) => {
      native.authReply(request, undefined);
      relay.callbackError(thrown, { event: kind === 3 ? 'user' : 'token' });
    };
    try {
      const answer = kind === 3 ? Promise.all([call(user), call(pass)]) : Promise.resolve(call(token));
      answer.then((value) => native.authReply(request, value), failed);
    } catch (thrown) {
      failed(thrown);
    }
  };
  handler.kind = userPassword ? 3 : 4;
  return handler;
}

/** The fields of nats.js's Auth, in the order src/auth.c reads them
 * (natsio_auth_fields: user, pass, token, jwt, nkey, sig). */
const AUTH_FIELDS = ['user', 'pass', 'auth_token', 'jwt', 'nkey', 'sig'];

/** The handler of a general authenticator (src/auth.c's kind 5):
 * opts.authenticator, nats.js's Authenticator, a function (nonce?: string)
 * => Auth ({user, pass, auth_token, jwt, nkey, sig}, each a string or
 * absent) or a promise of one, or a list of them whose results are merged,
 * later ones winning, as nats.js merges them. Called on every connect and
 * reconnect with that server's nonce (undefined when it sent none). A
 * throw, a rejection, or a result that is not such an object fails that
 * connection attempt. */
function authenticatorHandler(opts, relay) {
  const { authenticator } = opts;
  if (authenticator === undefined || authenticator === null) return undefined;
  const list = [].concat(authenticator);
  if (list.length === 0 || list.some((a) => typeof a !== 'function')) {
    throw new TypeError('authenticator must be a function (nonce?: string) => Auth, or a list of them');
  }
  const fieldsOf = (results) => {
    const auth = {};
    for (const r of results) {
      if (r === undefined || r === null) continue;
      if (typeof r !== 'object') throw new TypeError(`authenticator returned ${typeof r}, not an Auth object`);
      Object.assign(auth, r);
    }
    return AUTH_FIELDS.map((name) => {
      const v = auth[name];
      if (v === undefined || v === null) return null;
      if (typeof v !== 'string' || v.includes('\0')) {
        throw new TypeError(`authenticator: ${name} must be a string without NUL characters`);
      }
      return v;
    });
  };
  const handler = (kind, nonce, request) => {
    const failed = (thrown) => {
      native.authReply(request, undefined);
      relay.callbackError(thrown, { event: 'authenticator' });
    };
    const reply = (results) => {
      try {
        native.authReply(request, fieldsOf(results));
      } catch (thrown) {
        failed(thrown);
      }
    };
    try {
      const results = list.map((a) => a(nonce ?? undefined));
      if (results.some((r) => r !== null && typeof r === 'object' && typeof r.then === 'function')) {
        Promise.all(results).then(reply, failed);
      } else {
        reply(results);
      }
    } catch (thrown) {
      failed(thrown);
    }
  };
  handler.kind = 5;
  return handler;
}

const LOG_LEVELS = ['off', 'error', 'warn', 'info', 'debug', 'trace'];

/** The natsio_log_level of the options: logLevel by name, or debug: true
 * (nats.js's switch for protocol tracing) for 'trace'. */
function logLevelOf(opts) {
  if (opts.logLevel !== undefined) {
    const level = LOG_LEVELS.indexOf(String(opts.logLevel).toLowerCase());
    if (level < 0) throw new TypeError(`logLevel must be one of ${LOG_LEVELS.join(', ')}`);
    return level;
  }
  return opts.debug ? LOG_LEVELS.indexOf('trace') : 0;
}

/** Where a connection's log lines go: opts.logger(level, message), or
 * standard error as "natsio LEVEL: message". */
function makeLogger(opts) {
  if (opts.logger !== undefined && typeof opts.logger !== 'function') {
    throw new TypeError('logger must be a function (level, message)');
  }
  const logger = opts.logger;
  return (level, message) => {
    const name = LOG_LEVELS[level] ?? 'info';
    if (logger) logger(name, message);
    else process.stderr.write(`natsio ${name.toUpperCase()}: ${message}\n`);
  };
}

/**
 * Connects to NATS (`opts` may be a URL string). Options: servers (string
 * or string[]; none, '' or []: DEFAULT_URL), name, timeout
 * (connect, ms), noEcho, verbose, pedantic, permissionErrOnSubscribe,
 * inboxPrefix, pendingMsgsLimit, pendingBytesLimit,
 * drainTimeout, flushTimeout, requestTimeout, pingInterval, maxPingsOut,
 * maxPendingSize, writeRoomPause (ms, default 500: how long a publish
 * past maxPendingSize pauses for room before it queues over the bound; 0:
 * never), waitForWriteRoom (default false; true: publish blocks up to
 * flushTimeout, then throws), maxControlLine, user, pass,
 * token; reconnect,
 * maxReconnectAttempts, reconnectTimeWait, reconnectTimeWaitMax,
 * reconnectJitter, reconnectJitterTls, reconnectBufSize, noRandomize,
 * ignoreDiscoveredServers, waitOnFirstConnect / retryOnFailedConnect,
 * ignoreAuthErrorAbort, reconnectDelayHandler (attempts => ms: see
 * reconnectDelayHandler); nkeySeed, nkeyFile, credsFile; userJWT with
 * signatureCB (see makeAuthHandler); authenticator (nats.js's
 * Authenticator, or a list of them: see authenticatorHandler); tls: {caFile,
 * certFile, keyFile, or ca, cert, key as PEM text, hostname, handshakeFirst}; logLevel ('off', 'error',
 * 'warn', 'info', 'debug', 'trace': every protocol frame) or debug: true
 * (= 'trace'), with logger(level, message) (default: standard error). The
 * environment variable NATSIO_LOG=<level> turns logging on without code.
 */
async function connect(opts = {}) {
  if (typeof opts === 'string') opts = { servers: opts };
  opts = opts ?? {};
  let servers = opts.servers ?? [];
  if (typeof servers === 'string') servers = servers.split(',').map((s) => s.trim());
  // No URL (absent, '', []): DEFAULT_URL, as natsio_client_connect_url("").
  if (Array.isArray(servers)) servers = servers.filter((s) => s !== '');
  if (Array.isArray(servers) && servers.length === 0) servers = [DEFAULT_URL];
  // Lifecycle events may arrive before the Connection exists ('connect'
  // always does): they wait in `early` and are replayed, in order, once
  // the caller has had the chance to add listeners.
  const relay = {
    connection: null,
    early: [],
    onError(error, info) {
      this.connection?.onError(error, info);
    },
    onEvent(kind, text, error) {
      if (this.early) this.early.push([kind, text, error]);
      else this.connection.onEvent(kind, text, error);
    },
    // Lines from the handshake on: no Connection needed.
    log: makeLogger(opts),
    onLog(level, message) {
      try {
        this.log(level, message);
      } catch (thrown) {
        this.callbackError(thrown, { event: 'logger' });
      }
    },
    // A user callback threw: the Connection reports it; before it exists
    // (the first connect's authentication), the logger does.
    callbackError(thrown, where) {
      if (this.connection) {
        this.connection._callbackError(thrown, where);
        return;
      }
      const line = new CallbackError(thrown, where).message;
      try {
        this.log(1, line);
      } catch {
        process.stderr.write(`natsio ERROR: ${line}\n`);
      }
    },
  };
  const authHandler = makeAuthHandler(opts, relay);
  const delayAsk = reconnectDelayHandler(opts, relay);
  const id = register(relay);
  const nativeOpts = { ...opts, servers, logLevel: logLevelOf(opts) };
  if (delayAsk) {
    nativeOpts.reconnectDelayAsk = delayAsk;
    // The longest a reconnect waits for the event loop's answer.
    nativeOpts.reconnectDelayTimeoutMs = opts.timeout ?? DEFAULT_CONNECT_TIMEOUT_MS;
  }
  if (authHandler) {
    nativeOpts.authHandler = authHandler;
    // The longest a connection attempt waits for an answer: its timeout.
    nativeOpts.authTimeoutMs = opts.timeout ?? DEFAULT_CONNECT_TIMEOUT_MS;
  }
  if (opts.pendingLimits) {
    nativeOpts.pendingMsgsLimit = opts.pendingLimits.msgs;
    nativeOpts.pendingBytesLimit = opts.pendingLimits.bytes;
  }
  reconnectAuthTlsOptions(opts, nativeOpts);
  let handle;
  try {
    handle = await native.connect(
      libraryOptions(nativeOpts),
      id,
      nativeOpts.logLevel,
      nativeOpts.authHandler ?? null,
      nativeOpts.authTimeoutMs ?? 0,
      nativeOpts.authHandler?.kind ?? 0,
    );
  } catch (e) {
    targets.delete(id);
    throw e;
  }
  relay.connection = new Connection(
    handle,
    id,
    (level, message) => relay.log(level, message),
    nativeOpts.pendingMsgsLimit,
  );
  setImmediate(() => {
    const early = relay.early;
    relay.early = null;
    for (const [kind, text, error] of early) relay.connection.onEvent(kind, text, error);
  });
  return relay.connection;
}

// ---------------------------------------------------------------------------
// JetStream and Key-Value: every call is a promise settled from the
// library's completion token (nothing waits on the JS thread or on a
// thread of the addon). Configurations are plain objects with the server's
// field names, serialized to JSON; infos come back parsed.

const DEFAULT_PUBLISH_ASYNC_MAX_PENDING = 4000; // natsio_js_options defaults
const DEFAULT_PUBLISH_ASYNC_STALL_WAIT = 200;
const DEFAULT_JS_TIMEOUT = 5000;
const TTL_NEVER = -1; // NATSIO_TTL_NEVER
const KV_OPERATIONS = ['PUT', 'DEL', 'PURGE'];

/** A message TTL in whole seconds (0: none): a number of seconds, 'never',
 * or a duration such as '90s', '5m', '1h30m' (digits alone are seconds,
 * as in a Nats-TTL header). */
function ttlSeconds(ttl) {
  if (ttl === undefined || ttl === null) return 0;
  if (ttl === 'never') return TTL_NEVER;
  if (typeof ttl === 'number' && Number.isInteger(ttl)) return ttl;
  if (typeof ttl === 'string') {
    if (/^\d+$/.test(ttl)) return Number(ttl);
    const m = ttl.match(/^(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?$/);
    if (m && ttl !== '') return Number(m[1] ?? 0) * 3600 + Number(m[2] ?? 0) * 60 + Number(m[3] ?? 0);
  }
  throw new TypeError("ttl must be whole seconds, 'never', or a duration like '90s' or '1h'");
}

const PUBLISH_NO_RETRY = -1; // NATSIO_PUBLISH_NO_RETRY

/** The library's retry_attempts of a publish's `retryAttempts`: how many
 * times "no responders" is retried (0: none); absent: 0, the library's
 * default (2). */
function retryAttempts(n) {
  if (n === undefined || n === null) return 0;
  if (!Number.isInteger(n) || n < 0 || n >= 2 ** 31) {
    throw new TypeError('retryAttempts must be a whole number from 0 (no retry) to 2147483647');
  }
  return n === 0 ? PUBLISH_NO_RETRY : n;
}

/** The library's retry_wait_ms of a publish's `retryWait` (ms, at least 1:
 * the library reads 0 as its default); absent: 0, the default 250 ms. */
function retryWait(ms) {
  if (ms === undefined || ms === null) return 0;
  if (!Number.isSafeInteger(ms) || ms < 1) {
    throw new TypeError('retryWait must be a whole number of milliseconds, at least 1');
  }
  return ms;
}

/** Flattens nats.js-style publish options for the addon; `timeout` is
 * the ack's wait when the options give none (undefined: the library's). */
function jsPublishOptions(opts, timeout) {
  if (opts === undefined || opts === null) return timeout === undefined ? null : { timeout };
  if (typeof opts !== 'object') throw new TypeError('publish options must be an object');
  const expect = opts.expect ?? {};
  if (typeof expect !== 'object') throw new TypeError('expect must be an object');
  return {
    headers: flattenHeaders(opts.headers),
    msgId: opts.msgID ?? opts.msgId,
    expectStream: expect.stream ?? expect.streamName,
    expectLastSequence: expect.lastSequence,
    expectLastSubjectSequence: expect.lastSubjectSequence,
    expectLastSubjectSequenceSubject: expect.lastSubjectSequenceSubject,
    expectLastMsgId: expect.lastMsgID ?? expect.lastMsgId,
    ttl: ttlSeconds(opts.ttl),
    timeout: opts.timeout ?? timeout,
    retryAttempts: retryAttempts(opts.retryAttempts),
    retryWait: retryWait(opts.retryWait),
  };
}

function configJson(cfg, what) {
  if (cfg === null || typeof cfg !== 'object' || Array.isArray(cfg)) {
    throw new TypeError(`${what} must be an object`);
  }
  return JSON.stringify(cfg);
}

function checkTimeout(timeout) {
  if (timeout === undefined || timeout === null) return -1;
  if (typeof timeout !== 'number' || Number.isNaN(timeout)) throw new TypeError('timeout must be a number (ms)');
  return timeout;
}

/** Resolves once `done()` holds (re-checked on each wake-up from `waiters`),
 * or rejects after `ms` (negative: never) with TimeoutError(what), or with
 * what `error()` makes. */
function waitUntil(done, waiters, ms, what, error) {
  if (done()) return Promise.resolve();
  return new Promise((resolve, reject) => {
    let timer = null;
    const waiter = () => {
      if (!done()) return false;
      if (timer) clearTimeout(timer);
      resolve();
      return true;
    };
    waiters.push(waiter);
    if (ms >= 0) {
      timer = setTimeout(() => {
        const i = waiters.indexOf(waiter);
        if (i >= 0) waiters.splice(i, 1);
        reject(error ? error() : makeError(Status.TIMEOUT, what));
      }, ms);
    }
  });
}

function wake(waiters) {
  for (let i = 0; i < waiters.length; ) {
    if (waiters[i]()) waiters.splice(i, 1);
    else i++;
  }
}

/** A message read back from a stream. */
class StoredMsg {
  constructor(raw) {
    /** @type {string} */
    this.subject = raw[0];
    /** @type {number} */
    this.seq = raw[1];
    /** When the stream stored it. */
    this.time = new Date(raw[2]);
    /** @type {Buffer} */
    this.data = raw[3];
    this._rawHeaders = raw[4];
    this._headers = undefined;
  }

  /** @returns {MsgHeaders|undefined} */
  get headers() {
    if (this._headers === undefined && this._rawHeaders !== null) this._headers = headersFromFlat(this._rawHeaders);
    return this._headers;
  }

  string() {
    return this.data.toString('utf8');
  }

  json() {
    return JSON.parse(this.string());
  }
}

/** One revision of a key. */
class KvEntry {
  constructor(raw) {
    this.bucket = raw[0];
    this.key = raw[1];
    /** @type {Buffer} */
    this.value = raw[2];
    this.revision = raw[3];
    /** 'PUT', 'DEL' or 'PURGE' */
    this.operation = KV_OPERATIONS[raw[4]] ?? 'PUT';
    this.created = new Date(raw[5]);
    /** How many newer revisions of the key exist (0 for get). */
    this.delta = raw[6];
  }

  string() {
    return this.value.toString('utf8');
  }

  json() {
    return JSON.parse(this.string());
  }
}

function kvValue(value) {
  if (value === undefined || value === null) throw new TypeError('value must be a string, Buffer or Uint8Array');
  return toBytes(value);
}

function revisionArg(v) {
  return v === undefined || v === null ? undefined : v;
}

/** A bucket's status from the addon's array (kv.status(), js.kv.statuses()),
 * with nats.js KvStatus's field names. */
function kvStatus(raw) {
  const streamInfo = JSON.parse(raw[11] ?? '{}');
  const config = streamInfo.config ?? {};
  return {
    bucket: raw[0],
    values: raw[1],
    history: raw[2],
    /** ms; 0: revisions never expire */
    ttl: raw[3] / 1e6,
    /** bytes stored (also as `bytes`) */
    size: raw[4],
    bytes: raw[4],
    storage: raw[5],
    backingStore: raw[5],
    replicas: raw[6],
    compression: raw[7],
    description: raw[8] ?? '',
    metadata: JSON.parse(raw[9] ?? '{}'),
    /** ms the server's markers live (limit_marker_ttl); 0: none, and no per-key TTL */
    markerTTL: raw[10] / 1e6,
    maxValueSize: config.max_msg_size ?? -1,
    max_bytes: config.max_bytes ?? -1,
    maxBucketSize: config.max_bytes ?? -1,
    streamInfo,
  };
}

/** A bound Key-Value bucket (js.kv.create / bind / ...). */
// Key-Value codecs: the library's built-in ones, applied in the core (the
// same wire forms in every language). A descriptor carries its specs
// (kv.c's codec specs: a NATSIO_KV_*_CODEC_* kind, or 16 + level + 1 for
// zlib); a chain concatenates them.
const CODEC_SPECS = Symbol.for('natsio.kvCodecSpecs');
function codecDescriptor(kind, specs, name) {
  return Object.freeze({ kind, name, [CODEC_SPECS]: specs });
}
function chainOf(kind, codecs) {
  if (codecs.length === 0) throw makeError(Status.KV_NO_CODECS, 'a codec chain needs at least one codec');
  const specs = [];
  for (const c of codecs) {
    if (c?.kind !== kind || !c[CODEC_SPECS]) throw new TypeError(`chain: not a built-in ${kind} codec`);
    specs.push(...c[CODEC_SPECS]);
  }
  return codecDescriptor(kind, specs, 'chain');
}

/** Built-in key codecs for kv.withCodecs: base64 (nats.js's
 * Base64KeyCodec form: each token in the standard alphabet, padded),
 * base64Url (orbit.go's kvcodec form: URL-safe, unpadded; both decode
 * either), path ('/a/b' stored as '_root_.a.b'), noop, chain(...codecs). */
const KeyCodecs = Object.freeze({
  noop: () => codecDescriptor('key', [0], 'noop'),
  base64: () => codecDescriptor('key', [1], 'base64'),
  base64Url: () => codecDescriptor('key', [2], 'base64Url'),
  path: () => codecDescriptor('key', [3], 'path'),
  chain: (...codecs) => chainOf('key', codecs),
});

/** Built-in value codecs for kv.withCodecs: base64 (URL-safe, unpadded
 * when writing; either form when reading), zlib(level = -1: zlib's
 * default; 0..9), noop, chain(...codecs). */
const ValueCodecs = Object.freeze({
  noop: () => codecDescriptor('value', [0], 'noop'),
  base64: () => codecDescriptor('value', [1], 'base64'),
  zlib: (level = -1) => {
    if (!Number.isInteger(level) || level < -1 || level > 9) {
      throw makeError(Status.INVALID_ARGUMENT, `zlib level ${level}: use 0..9, or -1 for the default`);
    }
    return codecDescriptor('value', [16 + level + 1], `zlib(${level})`);
  },
  chain: (...codecs) => chainOf('value', codecs),
});

function codecSpecs(codec, kind) {
  if (codec === undefined || codec === null) return null;
  if (codec.kind !== kind || !codec[CODEC_SPECS]) {
    throw new TypeError(`withCodecs: ${kind} must be one of ${kind === 'key' ? 'KeyCodecs' : 'ValueCodecs'}`);
  }
  return codec[CODEC_SPECS];
}

class KV {
  constructor(handle) {
    this._handle = handle;
    /** @type {string} */
    this.bucket = native.kv_bucket(handle);
    this._closed = false;
  }

  /** The same bucket seen through built-in codecs ({ key: KeyCodecs.x(),
   * value: ValueCodecs.y() }, either may be left out): every verb of the
   * returned KV encodes the keys, filters and values it is given and
   * decodes what it returns; only the encoded key is validated. The codecs
   * run in the library (encoding on this thread, decoding as entries
   * arrive), so every language stores the same form. A wildcard filter on
   * a codec without a filter form rejects with KvWildcardNotSupportedError;
   * a stored key or value that does not decode with KvKeyDecodeFailedError
   * / KvValueDecodeFailedError. This KV keeps its own codecs. */
  withCodecs({ key, value } = {}) {
    if (this._closed) throw makeError(Status.ILLEGAL_STATE, 'the KV bucket handle is closed');
    return new KV(native.kvWithCodecs(this._handle, codecSpecs(key, 'key'), codecSpecs(value, 'value')));
  }

  /** Stores `value`; resolves with the new revision. Options (nats.js's
   * KvPutOptions): previousSeq (store only if the key's latest revision is
   * that one: update), ttl (as create's markerTTL: the revision expires;
   * the bucket needs limit_marker_ttl). */
  async put(key, value, opts) {
    const ttl = ttlSeconds(opts?.ttl);
    const previous = revisionArg(opts?.previousSeq);
    if (previous !== undefined) {
      if (ttl !== 0) throw new TypeError('put: previousSeq and ttl cannot be combined');
      return native.kv_update(this._handle, key, kvValue(value), previous);
    }
    return native.kv_put(this._handle, key, kvValue(value), { ttl_s: ttl });
  }

  /** Stores `value` only if `key` has no live value (else KeyExistsError).
   * With `markerTTL` (as nats.js: '10s', '1m', '1h', digits alone are
   * seconds; also a number of seconds or 'never'), the revision expires
   * after that long (ADR-48 per-key TTL; the bucket needs limit_marker_ttl).
   */
  async create(key, value, markerTTL) {
    return native.kv_create(this._handle, key, kvValue(value), { ttl_s: ttlSeconds(markerTTL) });
  }

  /** Stores `value` only if `key`'s latest revision is `last` (else WrongLastSequenceError). */
  async update(key, value, last) {
    return native.kv_update(this._handle, key, kvValue(value), last);
  }

  /** The latest value (or, with {revision}, that revision) of `key`.
   * Rejects with KeyNotFoundError, or KeyDeletedError when the latest
   * revision is a delete or purge marker. */
  async get(key, opts) {
    const revision = revisionArg(opts?.revision);
    if (revision === undefined) return new KvEntry(await native.kv_get(this._handle, key));
    return new KvEntry(await native.kv_get_revision(this._handle, key, revision));
  }

  /** Revision `revision` of `key` (KeyNotFoundError if it belongs to another key or is gone). */
  async getRevision(key, revision) {
    if (revision === undefined || revision === null) throw new TypeError('revision must be a non-negative integer');
    return new KvEntry(await native.kv_get_revision(this._handle, key, revision));
  }

  /** Writes a delete marker; with {last}, only if the latest revision is `last`. */
  async delete(key, opts) {
    await native.kv_delete(this._handle, key, revisionArg(opts?.last ?? opts?.previousSeq));
  }

  /** Writes a purge marker that replaces every earlier revision of `key`.
   * With {ttl} (as create's markerTTL) the marker itself expires, and the
   * key leaves no trace (the bucket needs limit_marker_ttl). */
  async purge(key, opts) {
    const last = revisionArg(opts?.last ?? opts?.previousSeq);
    await native.kv_purge(this._handle, key, last, { ttl_s: ttlSeconds(opts?.ttl) });
  }

  /**
   * Removes delete and purge markers, as nats.js's purgeDeletes: a key whose
   * latest revision is a marker older than `olderMillis` (default, and 0:
   * 30 minutes, as in C, C++ and Go; negative: every marker) goes
   * entirely; a younger marker stays and only the revisions before it go.
   * Resolves with {success: true, purged} (messages removed).
   */
  async purgeDeletes(olderMillis) {
    let older = 0; // the library's default, 30 minutes
    if (olderMillis !== undefined && olderMillis !== null) {
      if (typeof olderMillis !== 'number' || !Number.isFinite(olderMillis)) {
        throw new TypeError('olderMillis must be a number (ms)');
      }
      older = olderMillis < 0 ? -1 : Math.ceil(olderMillis);
    }
    return { success: true, purged: await native.kv_purge_deletes(this._handle, older) };
  }

  /** The keys that hold a value now (deleted and purged keys are left out),
   * all of them or those matching `filter` (nats.js's argument: a pattern
   * such as 'a.*' or 'a.>', or an array of them; '>' is every key), read
   * through one consumer. An array, so nats.js's
   * `for await (const k of await kv.keys(filter))` works too; listKeys()
   * yields them as they are read instead. Rejects with InvalidKeyError for
   * a bad filter. */
  async keys(filter) {
    const filters = watchKeys(filter);
    if (filters === null) return native.kv_keys(this._handle);
    return native.kv_keys_filtered(this._handle, filters);
  }

  /** The keys as keys(filter) lists them, as a KvKeyLister: an async
   * iterator of strings that yields each key as the library reads it (the
   * whole set is never held) and ends after the last one (at once for an
   * empty bucket); as nats.go's ListKeys / ListKeysFiltered. Rejects with
   * InvalidKeyError for a bad filter; a missing bucket is thrown by the
   * iteration (BucketNotFoundError). */
  async listKeys(filter) {
    const filters = watchKeys(filter);
    return new KvKeyLister(native.kv_list_keys(this._handle, filters), this.bucket);
  }

  /** Every kept revision of `key`, oldest first, delete and purge markers
   * included (each entry's delta counts the newer revisions). Rejects with
   * KeyNotFoundError when the key has none. */
  async history(key) {
    return (await native.kv_history(this._handle, key)).map((raw) => new KvEntry(raw));
  }

  /**
   * Watches the bucket: resolves with a KvWatcher, an async iterator of
   * KvEntry (see KvWatcher). Options: key (a pattern such as 'a.*' or
   * 'a.>', or an array of them; default every key), includeHistory,
   * ignoreDeletes, metaOnly (entries without values), updatesOnly (no
   * initial values), resumeFromRevision (every revision of the matching
   * keys from that one on, then changes; not with updatesOnly). Rejects
   * with InvalidKeyError for a bad pattern. From
   * the moment this resolves, changes are buffered by the library whether
   * or not the watcher is iterated.
   */
  async watch(opts) {
    if (opts !== undefined && opts !== null && typeof opts !== 'object') {
      throw new TypeError('watch options must be an object');
    }
    const o = opts ?? {};
    const keys = watchKeys(o.key ?? o.keys);
    const flags = {
      include_history: Boolean(o.includeHistory),
      ignore_deletes: Boolean(o.ignoreDeletes),
      meta_only: Boolean(o.metaOnly),
      updates_only: Boolean(o.updatesOnly),
      resume_from_revision: o.resumeFromRevision,
    };
    return new KvWatcher(await native.kv_watch(this._handle, keys, flags), this.bucket);
  }

  /** {bucket, values, history, ttl (ms), size (= bytes), storage (=
   * backingStore), replicas, compression, description, metadata, markerTTL
   * (ms), maxValueSize, max_bytes, streamInfo}: nats.js KvStatus's fields. */
  async status() {
    return kvStatus(await native.kv_get_status(this._handle));
  }

  get isClosed() {
    return this._closed;
  }

  /** Frees the handle (the bucket stays). Later calls reject with IllegalStateError. */
  close() {
    if (this._closed) return;
    this._closed = true;
    native.kvClose(this._handle);
  }
}

/**
 * What the Key-Value and Object Store managers share: one kind's bucket
 * create, bind, delete, names and statuses over the addon's js_<kind>_*
 * verbs (`kind`: {create, bind, delete, names, statuses} verbs, `config`
 * the name config errors give, `wrap(handle, js)`, `status(raw)`).
 */
class BucketManager {
  constructor(js, kind) {
    this._js = js;
    this._kind = kind;
  }

  /** mode: a natsio_create_action (0 create, 1 update, 2 create or update). */
  async _open(mode, cfg, opts) {
    if (typeof cfg === 'string') cfg = { ...(opts ?? {}), bucket: cfg };
    const json = configJson(cfg, this._kind.config);
    return this._kind.wrap(await this._kind.create(this._js._handle, json, mode), this._js);
  }

  async _bind(bucket) {
    return this._kind.wrap(await this._kind.bind(this._js._handle, bucket), this._js);
  }

  async _delete(bucket) {
    await this._kind.delete(this._js._handle, bucket);
    return true;
  }

  async _names() {
    return this._kind.names(this._js._handle);
  }

  async _statuses() {
    return (await this._kind.statuses(this._js._handle)).map(this._kind.status);
  }
}

const KV_BUCKETS = {
  create: (js, json, mode) => native.js_kv_create(js, json, mode),
  bind: (js, bucket) => native.js_kv_bind(js, bucket),
  delete: (js, bucket) => native.js_kv_delete(js, bucket),
  names: (js) => native.js_kv_names(js),
  statuses: (js) => native.js_kv_statuses(js),
  config: 'KV config',
  wrap: (h) => new KV(h),
  status: (raw) => kvStatus(raw),
};

/** js.kv: bucket management. */
class KvManager extends BucketManager {
  constructor(js) {
    super(js, KV_BUCKETS);
  }

  /** Creates a bucket from a KeyValueConfig ({bucket, history, ttl, ...},
   * server field names), or (name, config). An identical bucket is bound. */
  async create(cfg, opts) {
    return this._open(0, cfg, opts);
  }

  async update(cfg, opts) {
    return this._open(1, cfg, opts);
  }

  async createOrUpdate(cfg, opts) {
    return this._open(2, cfg, opts);
  }

  /** Binds an existing bucket (BucketNotFoundError if there is none). */
  async bind(bucket) {
    return this._bind(bucket);
  }

  /** Deletes a bucket with all its keys and history. */
  async delete(bucket) {
    return this._delete(bucket);
  }

  /** The names of the account's Key-Value buckets (streams KV_<name> on
   * $KV.<name>.>; other streams are left out). */
  async names() {
    return this._names();
  }

  /** The status of every Key-Value bucket (see KV.status), read from the
   * stream list without a request per bucket. */
  async statuses() {
    return this._statuses();
  }

  /** nats.js's kvm.list(): the statuses of statuses(), as an async iterator. */
  async *list() {
    yield* await this.statuses();
  }
}

/** Delivery metadata of a JsMsg (parsed from its ack subject). */
class JsMsgInfo {
  constructor(raw) {
    /** @type {string} */
    this.stream = raw[0];
    /** @type {string} */
    this.consumer = raw[1];
    /** @type {string|undefined} */
    this.domain = raw[2] === null ? undefined : raw[2];
    /** How many times the message was delivered (1 the first time). */
    this.deliveryCount = raw[3];
    this.streamSequence = raw[4];
    this.consumerSequence = raw[5];
    /** When the stream stored it, in nanoseconds since the epoch. @type {bigint} */
    this.timestampNanos = raw[6];
    /** Messages left for the consumer after this one. */
    this.pending = raw[7];
  }

  /** When the stream stored it (millisecond precision). */
  get timestamp() {
    return new Date(Number(this.timestampNanos / 1000000n));
  }

  get redelivered() {
    return this.deliveryCount > 1;
  }
}

function timeoutOption(opts) {
  return timeoutArg(typeof opts === 'object' && opts !== null ? opts.timeout : opts);
}

/** The messages of a batch from the addon (js_msgs_to_js in src/js.c):
 * one handle owns their library messages, their payloads are slices of one
 * buffer, their metadata is numbers read once in C. */
function jsMsgsOf(batch) {
  const count = batch.length === 0 ? 0 : batch[5].length / JS_MD_NUMS;
  const out = new Array(count);
  for (let i = 0; i < count; i++) out[i] = new JsMsg(batch, i);
  return out;
}

const JS_MD_NUMS = 8;

/**
 * A message consumed from a pull consumer (js.fetch / js.next / js.consume). It owns its
 * library message: acknowledgements go through the library, which refuses
 * a second ack, nak or term (MessageAlreadyAckedError). Messages arrive in
 * batches: a sent ack, nak or term frees the message's library copy at
 * once; an unacknowledged one is freed when every JsMsg of its batch has
 * been garbage collected (and its data is a slice of the batch's buffer).
 */
class JsMsg {
  constructor(batch, index) {
    const meta = batch[1];
    const j = index * META_INTS;
    const x = meta[j + 3];
    this._batch = batch;
    this._index = index;
    /** @type {string} */
    this.subject = batch[3][meta[j]];
    /** The ack subject. @type {string|undefined} */
    this.reply = x < 0 ? undefined : (batch[4][2 * x] ?? undefined);
    /** @type {Buffer} */
    this.data = batch[2].subarray(index === 0 ? 0 : meta[j - META_INTS + 1], meta[j + 1]);
    this._rawHeaders = x < 0 ? null : batch[4][2 * x + 1];
    this._headers = undefined;
    this._info = undefined;
  }

  /** @returns {MsgHeaders|undefined} */
  get headers() {
    if (this._headers === undefined && this._rawHeaders !== null) this._headers = headersFromFlat(this._rawHeaders);
    return this._headers;
  }

  /** True when the header block had corrupt lines (skipped: headers holds the good ones), as Msg.headersMalformed. */
  get headersMalformed() {
    return this._rawHeaders?.malformed === true;
  }

  /** Delivery metadata: {stream, consumer, domain, deliveryCount,
   * streamSequence, consumerSequence, timestamp (Date), timestampNanos
   * (bigint), pending, redelivered}. */
  get info() {
    if (this._info === undefined) {
      const md = this._batch[5];
      const k = this._index * JS_MD_NUMS;
      if (md[k] !== 0) {
        // The batch carries no metadata for it: the addon says why (throws).
        this._info = new JsMsgInfo(native.jsMsgMetadata(this._batch[0], this._index));
      } else {
        const names = this._batch[6];
        const n = md[k + 7] * 3;
        const nanos = BigInt(md[k + 5]) * 1000000n + BigInt(md[k + 6]);
        this._info = new JsMsgInfo([names[n], names[n + 1], names[n + 2], md[k + 1], md[k + 2], md[k + 3], nanos, md[k + 4]]);
      }
    }
    return this._info;
  }

  /** Same as info. */
  get metadata() {
    return this.info;
  }

  /** The stream sequence. */
  get seq() {
    return this.info.streamSequence;
  }

  get redelivered() {
    const md = this._batch[5];
    const k = this._index * JS_MD_NUMS;
    return md[k] === 0 ? md[k + 1] > 1 : this.info.redelivered;
  }

  string() {
    return this.data.toString('utf8');
  }

  json() {
    return JSON.parse(this.string());
  }

  /** Acknowledges (buffered like a publish; throws MessageAlreadyAckedError
   * after an earlier ack, nak or term of this message). It reaches the
   * server before anything sent on the connection after it; the server
   * applies acks on the consumer's own queue, so a consumer info read at
   * once may still count it as pending: ackAck() waits until it is applied. */
  ack() {
    native.jsMsgAck(this._batch[0], this._index, 0, null);
  }

  /** Asks for redelivery, after `delay` ms if given. */
  nak(delay) {
    if (delay !== undefined && delay !== null && (typeof delay !== 'number' || Number.isNaN(delay))) {
      throw new TypeError('delay must be a number (ms)');
    }
    native.jsMsgAck(this._batch[0], this._index, 1, delay ?? 0);
  }

  /** Stops redelivery for good; `reason` is recorded by the server. */
  term(reason) {
    native.jsMsgAck(this._batch[0], this._index, 2, reason ?? null);
  }

  /** Still working on it: resets the ack wait (any number of times before the final ack). */
  working() {
    native.jsMsgAck(this._batch[0], this._index, 3, null);
  }

  /** Acknowledges and waits for the server to confirm it: `timeout` ms or
   * {timeout} (default: the connection's request timeout). Resolves true;
   * rejects with MessageAlreadyAckedError, TimeoutError, ... */
  async ackAck(opts) {
    await native.jsMsgAckSync(this._batch[0], this._index, timeoutOption(opts));
    return true;
  }
}

function fetchOptions(opts) {
  if (opts === undefined || opts === null) return null;
  if (typeof opts !== 'object') throw new TypeError('fetch options must be an object');
  const out = {};
  for (const [name, alias] of [
    ['maxMessages', 'max_messages'],
    ['maxBytes', 'max_bytes'],
    ['expires', 'expires'],
    ['heartbeat', 'idle_heartbeat'],
  ]) {
    const v = opts[name] ?? opts[alias];
    if (v === undefined || v === null) continue;
    if (typeof v !== 'number' || !Number.isFinite(v)) throw new TypeError(`${name} must be a number`);
    out[name] = v;
  }
  out.noWait = Boolean(opts.noWait ?? opts.no_wait);
  priorityOptions(opts, out);
  return out;
}

/** The ADR-42 fields of pull options (nats.js's group, min_pending,
 * min_ack_pending, priority; camelCase too) into `out`. */
function priorityOptions(opts, out) {
  const group = opts.group;
  if (group !== undefined && group !== null) {
    if (typeof group !== 'string') throw new TypeError('group must be a string');
    out.group = group;
  }
  const priority = opts.priority;
  if (priority !== undefined && priority !== null) {
    if (typeof priority !== 'number') throw new TypeError('priority must be a number');
    // The library reads an int32 and checks its range (0..9): a fraction or
    // a number beyond an int32 would reach it cut to another value.
    if (!Number.isInteger(priority) || priority < -(2 ** 31) || priority >= 2 ** 31) {
      throw makeError(Status.INVALID_ARGUMENT, `priority must be an integer between 0 and 9, not ${priority}`);
    }
    out.priority = priority;
  }
  for (const [name, alias] of [
    ['minPending', 'min_pending'],
    ['minAckPending', 'min_ack_pending'],
  ]) {
    const v = opts[name] ?? opts[alias];
    if (v === undefined || v === null) continue;
    if (typeof v !== 'number' || !Number.isFinite(v)) throw new TypeError(`${name} must be a number`);
    out[name] = v;
  }
  return out;
}

// The raw verbs read an options struct by its C field names: these are the
// pull options' (fetch, consume, the ordered consumer's messages, the
// ordered consumer) that differ from this file's camelCase names.
const C_FIELDS = {
  maxMessages: 'max_messages',
  maxBytes: 'max_bytes',
  expires: 'expires_ms',
  heartbeat: 'idle_heartbeat_ms',
  noWait: 'no_wait',
  minPending: 'min_pending',
  minAckPending: 'min_ack_pending',
  thresholdMessages: 'threshold_messages',
  thresholdBytes: 'threshold_bytes',
  idleTimeout: 'idle_timeout_ms',
  untilDrained: 'until_drained',
  filterSubjects: 'filter_subjects',
  deliverPolicy: 'deliver_policy',
  optStartSeq: 'opt_start_seq',
  optStartTimeNs: 'opt_start_time_ns',
  headersOnly: 'headers_only',
  namePrefix: 'name_prefix',
  inactiveThreshold: 'inactive_threshold_ms',
  maxDeliver: 'max_deliver',
  filterSubjectsAsList: 'filter_subjects_as_list',
  metadataJson: 'metadata_json',
};

/** `o` (null: none) with C field names. */
function cFields(o) {
  if (o === null || o === undefined) return null;
  const out = {};
  for (const [k, v] of Object.entries(o)) out[C_FIELDS[k] ?? k] = v;
  return out;
}

/** next()'s pull options when it has priority-group ones (null: a plain
 * next with its timeout); the timeout is the request's expiry. */
function nextPullOptions(opts) {
  if (typeof opts !== 'object' || opts === null) return null;
  const out = priorityOptions(opts, {});
  if (Object.keys(out).length === 0) return null;
  if (opts.timeout !== undefined && opts.timeout !== null) {
    if (typeof opts.timeout !== 'number' || !Number.isFinite(opts.timeout)) {
      throw new TypeError('timeout must be a number');
    }
    out.expires = opts.timeout;
  }
  return out;
}

/**
 * Continuous pulls (js.consume), KV watches (kv.watch) and batch reads of
 * stored messages (js.streams.getLastMessagesFor): the library buffers
 * from the moment they start, whether or not the loop reads, and delivers
 * in push mode like a subscription (see Feed). stop() ends one at
 * once: a pending next() resolves done; items delivered but not yet
 * yielded are dropped. The garbage collector may take one dropped without
 * stop() (its library handle is then stopped and freed).
 */
class ItemStream extends Feed {
  constructor(handle, window) {
    super(window);
    this._start(handle, true);
  }

  onItems(count, items) {
    for (let i = 0; i < count; i++) this._deliver(items[i]);
  }

  get isClosed() {
    return this._done;
  }

  /** Stops at once; idempotent. */
  stop() {
    this._stop();
  }

  /** Breaking out of `for await` stops. */
  return() {
    this._stop();
    return Promise.resolve({ value: undefined, done: true });
  }

  /** {delivered, dropped, pendingMsgs, pendingBytes, stalls} of the library's buffer. */
  stats() {
    return native.feedStats(this._handle);
  }
}

/** Items of a pull flow (consume, an ordered consume) the library asks for
 * when the application gives none. */
const DEFAULT_PULL_MESSAGES = 500;

/**
 * Splits a pull flow's maxMessages between this binding's window (what it
 * takes from the library ahead of the loop: queued here, or handed to the
 * iterator and not taken yet) and the library's own budget (requested,
 * buffered, and the one item its dispatcher is handing over, which the
 * window counts too: hence the + 1), so that together they hold at most
 * maxMessages, as nats.js does. A budget in bytes is not split (sizes
 * are not known ahead): the window is then one message, which the library
 * counts until the window holds it. Other options, and values the library
 * refuses, go to it as given. Returns [window, options for the library].
 */
function splitPullBudget(o) {
  const given = o.maxMessages;
  if (o.maxBytes !== undefined) return [1, o];
  if (given !== undefined && !(Number.isInteger(given) && given > 0)) {
    return [Math.min(DEFAULT_WINDOW, given > 0 ? given : DEFAULT_WINDOW), o];
  }
  const total = given ?? DEFAULT_PULL_MESSAGES;
  const window = Math.min(DEFAULT_WINDOW, Math.ceil(total / 2));
  const library = total - window + 1;
  const out = { ...o, maxMessages: library };
  if (o.thresholdMessages !== undefined) {
    // The same point of the whole budget, scaled to the library's share.
    const t = Math.min(library - 1, Math.max(1, Math.floor((o.thresholdMessages * library) / total)));
    if (t > 0) out.thresholdMessages = t;
    else delete out.thresholdMessages;
  }
  return [window, out];
}

/**
 * A continuous pull from a consumer (js.consume): an async iterator of
 * JsMsg. The library keeps `maxMessages` requested and buffered and pulls
 * again as they are taken (and at once after a reconnect), so the
 * iteration goes on across idle periods and request expiries until stop(),
 * `break`, the consumer's deletion (the loop throws ConsumerDeletedError or
 * ConsumerNotFoundError) or nc.close() (the loop ends).
 */
class ConsumerMessages extends ItemStream {
  constructor(handle, stream, consumer, window) {
    super(handle, window);
    /** @type {string} */
    this.stream = stream;
    /** @type {string} */
    this.consumer = consumer;
  }

  /** A batch of messages (js_msgs_to_js): queued one by one. */
  onItems(count, batch) {
    for (let i = 0; i < count; i++) this._deliver(new JsMsg(batch, i));
  }

  /**
   * Ends the consumption gracefully: a pull consume sends no more pull
   * requests, a push consume withdraws its subscription, and what the
   * server sent before that is still yielded (acknowledge it, and nothing
   * is redelivered); then the iteration ends. Resolves once the library
   * has handed everything over, which needs the loop to go on reading;
   * bounded by `timeout` ms (default: the connection's drainTimeout:
   * TimeoutError, the drain goes on). Rejects with
   * SubscriptionClosedError when stopped first.
   */
  async drain(timeout) {
    await native.js_messages_drain(this._handle, timeoutArg(timeout));
    await this.closed;
  }

  /**
   * The next status event of a consumption, kept from its start (the
   * newest 256 when unread): {type: 'heartbeat', last_consumer_seq,
   * last_stream_seq} for each idle heartbeat, {type: 'heartbeats_missed',
   * count} for each heartbeat interval missed from the second on; push:
   * {type: 'flow_control'} for each flow-control request answered; pull
   * (consume, fetchMessages): {type: 'next', options} for each request
   * sent, {type: 'discard', messages_left, bytes_left} for one ended with
   * messages left, and the server's statuses as consumer_deleted,
   * exceeded_limits, no_responders, consumer_unpinned and debug {code,
   * description} (natsio.h's natsio_js_messages_next_status lists them).
   * An ordered consumer's run tells its pulls' events, and reset then
   * ordered_consumer_recreated {name} when it recreates its consumer.
   * Resolves null once the consumption ended and its events are read.
   */
  async nextStatus() {
    if (!this._handle) return null;
    try {
      const text = await native.js_messages_next_status(this._handle);
      return typeof text === 'string' ? JSON.parse(text) : null;
    } catch (e) {
      // The end (DONE), or the iterator freed meanwhile.
      if (e?.status === Status.DONE || e?.status === Status.ILLEGAL_STATE) return null;
      throw e;
    }
  }

  _take(msg) {
    return msg;
  }
}

/**
 * A running watch of a KV bucket (kv.watch): an async iterator of KvEntry,
 * first the current values (or the history, or none with updatesOnly),
 * then every change. `initialized` resolves true when the iteration has
 * gone past the initial values (the library's marker entry: every entry
 * yielded before it resolves is an initial value, every later one a
 * change), or false if the watch ended before that. The watch survives the
 * loss of its server-side consumer (it is recreated after the last revision
 * seen).
 */
class KvWatcher extends ItemStream {
  constructor(handle, bucket) {
    super(handle, DEFAULT_WINDOW);
    /** @type {string} */
    this.bucket = bucket;
    this._initResolve = null;
    /** @type {Promise<boolean>} */
    this.initialized = new Promise((resolve) => {
      this._initResolve = resolve;
    });
  }

  _take(raw) {
    if (raw === true) {
      // The initial-values marker (NATSIO_KV_INITIAL_DONE).
      this._initResolve(true);
      return SKIP;
    }
    return new KvEntry(raw);
  }

  _onFinish() {
    this._initResolve(false);
  }
}

/**
 * The messages of one batch Direct Get (js.streams.getLastMessagesFor): an
 * async iterator of StoredMsg, in stream order, that ends after the last
 * one (at once when none matched) and throws the error that ended the
 * batch (NoRespondersError when no stream answered: no such stream, or it
 * does not allow direct get).
 */
class StoredMsgs extends ItemStream {
  constructor(handle, stream) {
    super(handle, DEFAULT_WINDOW);
    /** @type {string} */
    this.stream = stream;
  }

  _take(raw) {
    return new StoredMsg(raw);
  }
}

/**
 * A listing of a KV bucket's keys (kv.listKeys): an async iterator of
 * strings, each key that holds a value once, ending after the last key
 * stored when the listing started; stop() or `break` ends it early.
 */
class KvKeyLister extends ItemStream {
  constructor(handle, bucket) {
    super(handle, DEFAULT_WINDOW);
    /** @type {string} */
    this.bucket = bucket;
  }

  _take(raw) {
    return raw;
  }
}

function consumeOptions(opts) {
  if (opts === undefined || opts === null) return {};
  if (typeof opts !== 'object') throw new TypeError('consume options must be an object');
  const out = {};
  for (const [name, alias] of [
    ['maxMessages', 'max_messages'],
    ['maxBytes', 'max_bytes'],
    ['expires', 'expires'],
    ['heartbeat', 'idle_heartbeat'],
    ['threshold', 'threshold'],
    ['thresholdMessages', 'threshold_messages'],
    ['thresholdBytes', 'threshold_bytes'],
  ]) {
    const v = opts[name] ?? opts[alias];
    if (v === undefined || v === null) continue;
    if (typeof v !== 'number' || !Number.isFinite(v)) throw new TypeError(`${name} must be a number`);
    out[name] = v;
  }
  priorityOptions(opts, out);
  return out;
}

/** kv.watch's key option: undefined/null (every key), a pattern or
 * several separated by commas, or an array of patterns. */
function watchKeys(key) {
  if (key === undefined || key === null) return null;
  let keys;
  if (typeof key === 'string') keys = key.split(',');
  else if (Array.isArray(key)) keys = key;
  else throw new TypeError('key must be a string or an array of strings');
  if (keys.length === 0) return null;
  for (const k of keys) {
    if (typeof k !== 'string') throw new TypeError('key must be a string or an array of strings');
    if (k.includes(',') || k === '') throw makeError(Status.INVALID_KEY, `invalid key pattern: '${k}'`);
  }
  return keys;
}

/** nats.js's DeliverPolicy values, as natsio_deliver_policy. */
const DELIVER_POLICIES = {
  all: 0,
  last: 1,
  new: 2,
  by_start_sequence: 3,
  by_start_time: 4,
  last_per_subject: 5,
};

function orderedConfig(opts) {
  if (opts === undefined || opts === null) return {};
  if (typeof opts !== 'object') throw new TypeError('ordered consumer options must be an object');
  const out = {};
  let filters = opts.filter_subjects ?? opts.filterSubjects;
  if (filters !== undefined && filters !== null) {
    if (typeof filters === 'string') filters = [filters];
    if (!Array.isArray(filters)) throw new TypeError('filter_subjects must be a string or an array of strings');
    out.filterSubjects = filters;
    out.filterSubjectsAsList = Boolean(opts.filter_subjects_as_list ?? opts.filterSubjectsAsList);
  }
  const policy = opts.deliver_policy ?? opts.deliverPolicy;
  if (policy !== undefined && policy !== null) {
    if (!Object.hasOwn(DELIVER_POLICIES, policy)) throw new TypeError(`unknown deliver_policy: ${String(policy)}`);
    out.deliverPolicy = DELIVER_POLICIES[policy];
  }
  const seq = opts.opt_start_seq ?? opts.optStartSeq;
  if (seq !== undefined && seq !== null) out.optStartSeq = seq;
  const time = opts.opt_start_time ?? opts.optStartTime;
  if (time !== undefined && time !== null) out.optStartTimeNs = timeNanos(time, 'opt_start_time');
  out.headersOnly = Boolean(opts.headers_only ?? opts.headersOnly);
  const prefix = opts.name_prefix ?? opts.namePrefix;
  if (prefix !== undefined && prefix !== null) out.namePrefix = prefix;
  for (const [name, alias] of [
    ['inactiveThreshold', 'inactive_threshold'],
    ['maxDeliver', 'max_deliver'],
  ]) {
    const v = opts[name] ?? opts[alias];
    if (v === undefined || v === null) continue;
    if (typeof v !== 'number' || !Number.isFinite(v)) throw new TypeError(`${alias} must be a number`);
    out[name] = v;
  }
  if (opts.metadata !== undefined && opts.metadata !== null) {
    out.metadataJson = JSON.stringify(stringMetadata(opts.metadata));
  }
  return out;
}

/** `metadata` if it is an object of strings; TypeError otherwise. */
function stringMetadata(metadata) {
  if (typeof metadata !== 'object' || metadata === null || Array.isArray(metadata)) {
    throw new TypeError('metadata must be an object of strings');
  }
  for (const v of Object.values(metadata)) {
    if (typeof v !== 'string') throw new TypeError('metadata must be an object of strings');
  }
  return metadata;
}

function orderedMessagesOptions(opts) {
  if (opts === undefined || opts === null) return {};
  if (typeof opts !== 'object') throw new TypeError('consume options must be an object');
  const out = {};
  for (const [name, alias] of [
    ['maxMessages', 'max_messages'],
    ['expires', 'expires'],
    ['heartbeat', 'idle_heartbeat'],
    ['idleTimeout', 'idle_timeout'],
  ]) {
    const v = opts[name] ?? opts[alias];
    if (v === undefined || v === null) continue;
    if (typeof v !== 'number' || !Number.isFinite(v)) throw new TypeError(`${name} must be a number`);
    out[name] = v;
  }
  out.untilDrained = Boolean(opts.untilDrained ?? opts.until_drained);
  return out;
}

/**
 * An ordered consumer (ADR-17; js.consumers.get(stream, opts)): an
 * always-in-order, self-healing view of one stream, backed by an
 * ephemeral server-side consumer (no acks, memory, one replica) that the
 * library deletes and recreates after the last delivered stream sequence on
 * a gap, missed heartbeats, a reconnect or its loss. Creating it sends
 * nothing; info() creates the server-side consumer (consume() does if
 * needed). One consume() at a time; a consumption ends with stop(),
 * `break`, untilDrained (the loop ends once caught up) or idleTimeout (the
 * loop throws NoMessagesError), and deletes its consumer; the next
 * consume() continues after the last message yielded. stop() (alias
 * delete()) ends it all and deletes the server-side consumer.
 */
class OrderedConsumer {
  constructor(js, stream, opts) {
    this._handle = native.js_ordered_consumer(js._handle, stream, cFields(orderedConfig(opts)));
    /** @type {string} */
    this.stream = stream;
    this._info = null;
  }

  /** The ConsumerInfo of the server-side consumer in use, creating it if
   * there is none; `cached` resolves the last one read, if any. */
  async info(cached = false) {
    if (cached && this._info) return this._info;
    this._info = JSON.parse(await native.ordered_consumer_start(this._handle));
    return this._info;
  }

  /** Starts a consumption: resolves with a ConsumerMessages of JsMsg in
   * stream order (no acks needed). Options: maxMessages (per pull request,
   * default 500), expires (ms, default 30000), heartbeat (ms, default half
   * of expires, at most 5000), idleTimeout (ms: NoMessagesError when
   * nothing arrives for that long), untilDrained (end once caught up).
   * Rejects with IllegalStateError while another consumption runs or after
   * stop(), StreamNotFoundError. */
  async consume(opts) {
    const [window, o] = splitPullBudget(orderedMessagesOptions(opts));
    const handle = await native.ordered_consumer_messages(this._handle, cFields(o));
    return new ConsumerMessages(handle, this.stream, this._info ? this._info.name : '', window);
  }

  /** Ends a consumption (its loop ends), deletes the server-side consumer
   * and ends the ordered consumer. Idempotent. */
  async stop() {
    await native.ordered_consumer_stop(this._handle);
  }

  /** nats.js's name for stop(). */
  async delete() {
    await this.stop();
    return true;
  }

  /** Frees the library handle (an unused server-side consumer is deleted
   * without waiting). Idempotent. */
  close() {
    native.ocClose(this._handle);
  }
}

/** js.consumers: pull consumer management. */
class Consumers {
  constructor(js) {
    this._js = js;
  }

  /** An ordered consumer on `stream` (nats.js's js.consumers.get(stream,
   * opts) form): opts {filter_subjects, deliver_policy ("all", "last",
   * "new", "by_start_sequence", "by_start_time", "last_per_subject"),
   * opt_start_seq, opt_start_time (Date, RFC 3339 string, ms or ns),
   * headers_only, name_prefix (its consumers are `<name_prefix>_<serial>`;
   * default a fresh NUID), inactive_threshold (ms, default 5 min),
   * max_deliver (shown in the consumer's info only; default unset),
   * filter_subjects_as_list (one filter subject goes to the server as a
   * list, as nats.js sends an array; default as filter_subject),
   * metadata (an object of strings every consumer it creates carries in
   * its config.metadata; TypeError for anything else; default none)}.
   * Sends nothing (a missing stream shows at info() or consume()). Named
   * pull consumers are read with js.consume/fetch/next. */
  async get(stream, opts) {
    if (typeof opts === 'string') {
      throw new TypeError('js.consumers.get(stream, name): read named consumers with js.consume, js.fetch or js.next');
    }
    return new OrderedConsumer(this._js, stream, opts);
  }

  async _put(mode, stream, cfg) {
    const json = configJson(cfg, 'consumer config');
    return JSON.parse(await native.js_consumer_create(this._js._handle, stream, json, mode));
  }

  /** Creates a pull consumer on `stream` from a ConsumerConfig (server
   * field names: durable_name or name, filter_subject(s), ack_policy,
   * ack_wait, max_deliver, inactive_threshold, ...); resolves with its
   * ConsumerInfo (info.name is its name). An identical consumer is fine. */
  async add(stream, cfg) {
    return this._put(0, stream, cfg);
  }

  /** Changes an existing consumer (ConsumerNotFoundError if there is none). */
  async update(stream, cfg) {
    return this._put(1, stream, cfg);
  }

  async createOrUpdate(stream, cfg) {
    return this._put(2, stream, cfg);
  }

  async info(stream, name) {
    return JSON.parse(await native.js_consumer_info(this._js._handle, stream, name));
  }

  /** Deletes the consumer; a fetch waiting on it rejects with ConsumerDeletedError. */
  async delete(stream, name) {
    await native.js_consumer_delete(this._js._handle, stream, name);
    return true;
  }

  /** The names of `stream`'s consumers. */
  async names(stream) {
    return native.js_consumer_names(this._js._handle, stream);
  }

  /** The ConsumerInfo of every consumer of `stream` (nats.js's
   * jsm.consumers.list(stream), here as one array). */
  async list(stream) {
    return (await native.js_consumer_infos(this._js._handle, stream)).map((json) => JSON.parse(json));
  }

  /** Pauses the consumer until `until` (a Date; also an RFC 3339 string,
   * ms since the epoch or ns as a bigint): it delivers nothing and pulls
   * wait until then (server 2.11+). Resolves with {paused, pause_until,
   * pause_remaining (ns)}. */
  async pause(stream, name, until) {
    if (until === undefined || until === null) throw new TypeError('until must be a Date');
    const ns = timeNanos(until, 'until');
    return JSON.parse(await native.js_consumer_pause(this._js._handle, stream, name, ns));
  }

  /** Resumes a paused consumer now; resolves as pause() does (paused false). */
  async resume(stream, name) {
    return JSON.parse(await native.js_consumer_resume(this._js._handle, stream, name));
  }

  /** Releases the pinned client of priority group `group` (ADR-42
   * pinned_client, server 2.11+): the next pull of any client in the group
   * gets pinned. Rejects with ConsumerNotFoundError, or InvalidArgumentError
   * for a group that is not one of the consumer's. */
  async unpin(stream, name, group) {
    if (typeof group !== 'string') throw new TypeError('group must be a string');
    await native.js_consumer_unpin(this._js._handle, stream, name, group);
  }
}

/** nats.js's up_to_time (a Date or an RFC 3339 string), or ms since the
 * epoch (number), or ns since the epoch (bigint), in ns since the epoch
 * (bigint; the fraction of a string keeps its nanoseconds). */
function timeNanos(v, what) {
  if (typeof v === 'bigint') return v;
  let ms;
  let subMs = 0n;
  if (v instanceof Date) {
    ms = v.getTime();
  } else if (typeof v === 'number') {
    ms = Number.isFinite(v) ? Math.trunc(v) : NaN;
  } else if (typeof v === 'string') {
    ms = Date.parse(v);
    // Date.parse keeps milliseconds; the server's timestamps have ns.
    const fraction = /T[^.]*\.(\d+)/.exec(v);
    if (fraction && fraction[1].length > 3) subMs = BigInt(fraction[1].slice(3, 9).padEnd(6, '0'));
  } else {
    throw new TypeError(`${what} must be a Date, an RFC 3339 string, ms (number) or ns (bigint) since the epoch`);
  }
  if (Number.isNaN(ms)) throw new TypeError(`${what} is not a valid time: ${String(v)}`);
  return BigInt(ms) * 1000000n + subMs;
}

/** getLastMessagesFor's subjects: a subject or an array of them (wildcards allowed). */
function lastForSubjects(subjects) {
  if (typeof subjects === 'string') return [subjects];
  if (Array.isArray(subjects)) return subjects;
  throw new TypeError('subjects must be a string or an array of strings');
}

/** js.streams: stream management. */
class Streams {
  constructor(js) {
    this._js = js;
  }

  async _put(mode, cfg) {
    return JSON.parse(await native.js_stream_create(this._js._handle, configJson(cfg, 'stream config'), mode));
  }

  /** Creates a stream from a StreamConfig (server field names); resolves with its StreamInfo. */
  async add(cfg) {
    return this._put(0, cfg);
  }

  async update(cfg) {
    return this._put(1, cfg);
  }

  async createOrUpdate(cfg) {
    return this._put(2, cfg);
  }

  /** The stream's StreamInfo. opts: {subjects_filter} (alias
   * subjectsFilter): state.subjects then maps each stored subject matching
   * the filter (wildcards allowed) to its message count. */
  async info(name, opts) {
    if (opts !== undefined && opts !== null && typeof opts !== 'object') throw new TypeError('stream info options must be an object');
    const filter = opts?.subjects_filter ?? opts?.subjectsFilter;
    if (filter !== undefined && filter !== null && typeof filter !== 'string') {
      throw new TypeError('subjects_filter must be a string');
    }
    const c = filter === undefined || filter === null ? null : { subjects_filter: filter };
    return JSON.parse(await native.js_stream_info(this._js._handle, name, c));
  }

  async delete(name) {
    await native.js_stream_delete(this._js._handle, name);
    return true;
  }

  /** Purges all messages, or as `opts` says: {filter, seq, keep}. */
  async purge(name, opts) {
    const json = opts === undefined || opts === null ? null : configJson(opts, 'purge options');
    const purged = await native.js_stream_purge(this._js._handle, name, json ?? null);
    return { success: true, purged };
  }

  /** The names of all streams, or of those holding `subject`. */
  async names(subject) {
    return native.js_stream_names(this._js._handle, subject ?? null);
  }

  /** The StreamInfo of every stream, or of those holding `subject` (wildcards allowed). */
  async list(subject) {
    return (await native.js_stream_infos(this._js._handle, subject ?? null)).map((json) => JSON.parse(json));
  }

  /** One message: {seq}, {lastBySubject} (alias last_by_subj; wildcards
   * allowed: the last message on any matching subject), or
   * {seq, nextBySubject} (alias next_by_subj): the first message at or
   * after seq (default 1) on that subject. */
  async getMessage(stream, query) {
    const usage = 'query must be {seq}, {lastBySubject} or {seq, nextBySubject}';
    if (typeof query === 'number' || typeof query === 'bigint') query = { seq: query };
    if (query === null || typeof query !== 'object') throw new TypeError(usage);
    const last = query.lastBySubject ?? query.last_by_subj;
    const next = query.nextBySubject ?? query.next_by_subj;
    if (last !== undefined && next !== undefined) throw new TypeError('lastBySubject and nextBySubject exclude each other');
    if (next !== undefined) {
      if (typeof next !== 'string') throw new TypeError('nextBySubject must be a string');
      return new StoredMsg(await native.js_stream_get_next_msg(this._js._handle, stream, query.seq ?? 1, next));
    }
    if (last === undefined && query.seq === undefined) throw new TypeError(usage);
    if (last !== undefined && typeof last !== 'string') throw new TypeError('lastBySubject must be a string');
    return new StoredMsg(await native.js_stream_get_msg(this._js._handle, stream, last === undefined ? query.seq : 0, last ?? null));
  }

  /**
   * The last message of every subject of `stream` matching one of
   * `subjects` (wildcards allowed), in stream order, read with one batch
   * Direct Get (the stream needs allow_direct, the server 2.11+): a
   * StoredMsgs async iterator, returned at once. Options (nats.js's
   * DirectLastFor names): batch (at most this many), up_to_seq (alias
   * upToSeq) or up_to_time (alias upToTime: a Date, an RFC 3339 string,
   * ms since the epoch, or ns as a bigint): the last messages as of that
   * point instead of now. nats.js's form works too:
   * getLastMessagesFor(stream, { multi_last: [...], batch, up_to_seq }).
   */
  getLastMessagesFor(stream, subjects, opts) {
    if (subjects !== null && typeof subjects === 'object' && !Array.isArray(subjects) && opts === undefined) {
      opts = subjects;
      subjects = subjects.multi_last;
    }
    subjects = lastForSubjects(subjects);
    if (opts === undefined || opts === null) opts = {};
    if (typeof opts !== 'object') throw new TypeError('getLastMessagesFor options must be an object');
    const upToSeq = opts.up_to_seq ?? opts.upToSeq ?? null;
    const upToTime = opts.up_to_time ?? opts.upToTime;
    const handle = native.js_stream_get_last_msgs_for(
      this._js._handle,
      stream,
      subjects,
      opts.batch ?? 0,
      upToSeq ?? 0,
      upToTime === undefined || upToTime === null ? 0 : timeNanos(upToTime, 'up_to_time'),
    );
    return new StoredMsgs(handle, stream);
  }

  /** Deletes message `seq`; `erase` (default true) also overwrites its bytes. */
  async deleteMessage(stream, seq, erase = true) {
    await native.js_stream_delete_msg(this._js._handle, stream, seq, Boolean(erase));
    return true;
  }
}

/**
 * A JetStream context (nc.jetstream(opts)). Options: domain, apiPrefix,
 * timeout (API requests and publish, ms), publishAsyncMaxPending,
 * publishAsyncStallWait (ms), publishAsyncTimeout (ms), keepResponseType
 * (stream, consumer and account infos keep the server's `type` field, as
 * nats.js hands them out).
 */
class JetStreamClient {
  constructor(nc, opts = {}) {
    if (opts === null || typeof opts !== 'object') throw new TypeError('JetStream options must be an object');
    this.nc = nc;
    this._handle = native.client_jetstream(nc._handle, {
      domain: opts.domain,
      api_prefix: opts.apiPrefix,
      timeout_ms: opts.timeout,
      publish_async_max_pending: opts.publishAsyncMaxPending,
      publish_async_stall_wait_ms: opts.publishAsyncStallWait,
      publish_async_timeout_ms: opts.publishAsyncTimeout,
      keep_response_type: Boolean(opts.keepResponseType),
    });
    this._maxPending = opts.publishAsyncMaxPending > 0 ? opts.publishAsyncMaxPending : DEFAULT_PUBLISH_ASYNC_MAX_PENDING;
    this._stallWait = opts.publishAsyncStallWait > 0 ? opts.publishAsyncStallWait : DEFAULT_PUBLISH_ASYNC_STALL_WAIT;
    this._timeout = opts.timeout > 0 ? opts.timeout : DEFAULT_JS_TIMEOUT;
    this._closed = false;
    // Publishes that met a full window wait here, in order, until an ack
    // makes room (the library's own stall would block the JS thread).
    this._backlog = [];
    this._backlogWaiters = [];
    this._roomWaiters = [];
    // Publish promises not settled yet, and who waits for none.
    this._outstanding = 0;
    this._settleWaiters = [];
    this.streams = new Streams(this);
    this.consumers = new Consumers(this);
    this.kv = new KvManager(this);
    this.objectStores = new ObjectStoreManager(this);
  }

  /**
   * Pulls a batch from the pull consumer `consumer` of `stream`: resolves
   * with an array of JsMsg (possibly empty) once `maxMessages` (default
   * 100) or `maxBytes` arrived or the request expired (`expires` ms,
   * default 5000; `noWait`: only what is there now). `heartbeat` (ms) asks
   * for idle heartbeats (two silent intervals reject with TimeoutError).
   * `group`, `min_pending`, `min_ack_pending`, `priority`: ADR-42 priority
   * groups (a group missing or not the consumer's rejects with
   * InvalidArgumentError; a pinned client's pin is kept per context;
   * `priority`, 0 (the default, served first) to 9, orders the waiting
   * requests of a "prioritized" consumer, needs `group`, and is refused
   * with InvalidArgumentError out of range, not an integer, or above 0
   * without a group). A request the consumer's limits refuse (beyond its
   * max_batch, max_expires or max_bytes, or
   * max_waiting requests waiting) rejects with JetStreamError carrying the
   * server's reason; a noWait fetch the server holds ends within a second.
   * The wait is the library's: the event loop runs on.
   */
  async fetch(stream, consumer, opts) {
    return jsMsgsOf(await native.js_fetch(this._handle, stream, consumer, cFields(fetchOptions(opts))));
  }

  /**
   * The messages of one fetch (fetch()'s options), yielded one by one as
   * they arrive rather than once the batch is complete: resolves, once the
   * pull request is sent, with a ConsumerMessages whose loop ends where
   * fetch() would resolve (maxMessages delivered, maxBytes reached, the
   * request expired or, with noWait, nothing more there) and throws
   * fetch()'s error after the messages that came before it. stop() or
   * `break` withdraws the request at the server.
   */
  async fetchMessages(stream, consumer, opts) {
    const handle = await native.js_fetch_messages(this._handle, stream, consumer, cFields(fetchOptions(opts)));
    const msgs = new ConsumerMessages(handle, stream, consumer, DEFAULT_WINDOW);
    msgs._itemsBeforeError = true;
    return msgs;
  }

  /**
   * Consumes the pull consumer `consumer` of `stream` continuously:
   * resolves with a ConsumerMessages, an async iterator of JsMsg
   * (`for await (const m of msgs)`), with stop() and `closed`. Options:
   * maxMessages (kept requested and buffered, default 500), expires (ms,
   * lifetime of each pull request, default 30000, at least 1000),
   * heartbeat (ms, default half of expires, at most 30000; at most half of
   * expires), maxBytes (requests bounded by bytes instead; not with
   * maxMessages), threshold (fraction, default 0.5) or thresholdMessages /
   * thresholdBytes (pull again once that few are outstanding), group,
   * minPending, minAckPending, priority (ADR-42 priority groups, priority
   * as in fetch(); snake_case names too). Rejects with
   * ConsumerNotFoundError when there is no such consumer,
   * InvalidArgumentError for a group missing or not the consumer's. A
   * push consumer, or a message larger than maxBytes, ends the iteration
   * with JetStreamError.
   */
  async consume(stream, consumer, opts) {
    const o = consumeOptions(opts);
    const [window, libraryOptions] = splitPullBudget(o);
    const handle = await native.js_consume(this._handle, stream, consumer, cFields(libraryOptions));
    return new ConsumerMessages(handle, stream, consumer, window);
  }

  /**
   * Consumes the push consumer `consumer` of `stream` (one created with a
   * deliver_subject): the library subscribes to its deliver subject (in
   * its deliver_group's queue group when it has one) and buffers what the
   * server sends; resolves with a ConsumerMessages as consume() does.
   * Flow-control requests are answered once what came before them was
   * read; missed heartbeats are reported to the connection's error
   * status. Rejects with ConsumerNotFoundError when there is no such
   * consumer, InvalidArgumentError when it is not a push consumer.
   */
  async pushConsume(stream, consumer) {
    const handle = await native.js_push_consume(this._handle, stream, consumer);
    return new ConsumerMessages(handle, stream, consumer, DEFAULT_WINDOW);
  }

  /** One message from the pull consumer; rejects with NoMessagesError when
   * none arrives within `timeout` ms (default: the context's timeout). */
  async next(stream, consumer, opts) {
    const pull = nextPullOptions(opts);
    // The wait: the pull options' (their timeout), else `timeout` (default
    // the context's: expires 0; 0: no_wait; a negative one goes on as
    // expires, which the library refuses).
    const c = pull ?? {};
    if (pull === null) {
      const timeout = timeoutOption(opts);
      if (timeout === 0) c.noWait = true;
      else if (timeout !== -1) c.expires = timeout;
    }
    return new JsMsg(await native.js_next(this._handle, stream, consumer, cFields(c)), 0);
  }

  /** Publishes and waits for the stream's ack: {stream, seq, duplicate,
   * domain?, val?} (val: a counter stream's value after the message).
   * Options: msgID, expect {stream, lastSequence, lastSubjectSequence,
   * lastSubjectSequenceSubject, lastMsgID}, ttl, headers, timeout (ms,
   * default the context's timeout), retryAttempts, retryWait (ms).
   * "No responders" (no stream listens on the subject yet, e.g. while its
   * leader moves) is retried retryAttempts times (default 2; 0: none)
   * retryWait ms apart (default 250), then rejects with
   * NoStreamResponseError; a bad retryAttempts or retryWait rejects with
   * TypeError. It is the
   * synchronous publish of every binding: not in the asynchronous window
   * (no stall, not counted in publishAsyncPending, never
   * AsyncPublishTimeoutError). */
  async publish(subject, data, opts) {
    if (typeof subject !== 'string') throw new TypeError('subject must be a string');
    return native.jsPublish(this._handle, subject, toBytes(data), jsPublishOptions(opts, this._timeout));
  }

  /**
   * Publishes without waiting: the promise resolves with the ack. The
   * options are publish()'s; the retries of "no responders" end at the
   * ack's deadline (timeout, default publishAsyncTimeout) at the latest.
   * Every error rejects the promise (nothing throws): argument errors,
   * ConnectionClosedError, and TooManyStalledMsgsError when
   * publishAsyncMaxPending publishes have awaited their acks for longer
   * than the stall wait. A publish that meets a full window waits in this
   * context's queue (order is kept) while the event loop goes on.
   */
  publishAsync(subject, data, opts) {
    let args;
    try {
      if (typeof subject !== 'string') throw new TypeError('subject must be a string');
      args = [subject, toBytes(data), jsPublishOptions(opts)];
    } catch (e) {
      return Promise.reject(e);
    }
    return this._enqueue(args);
  }

  /** Resolves once every asynchronous publish of this context has
   * completed and its promise settled; TimeoutError after `timeout` ms
   * (default: no limit; each publish is bounded by publishAsyncTimeout). */
  async publishAsyncComplete(timeout) {
    const ms = checkTimeout(timeout);
    const start = Date.now();
    // For the library: a positive wait, or NATSIO_WAIT_FOREVER.
    const left = () => (ms < 0 ? -2 : Math.max(1, ms - (Date.now() - start)));
    const what = 'asynchronous publishes still pending';
    await waitUntil(() => this._backlog.length === 0, this._backlogWaiters, ms, what);
    await native.js_publish_async_complete(this._handle, left());
    // The library is done; the acks may still be on their way to JS.
    await waitUntil(() => this._outstanding === 0, this._settleWaiters, ms < 0 ? -1 : left(), what);
  }

  /** How many asynchronous publishes await their ack (or room to be sent). */
  get publishAsyncPending() {
    return native.js_publish_async_pending(this._handle) + this._backlog.length;
  }

  /** The account's JetStream usage and limits ($JS.API.INFO). */
  async accountInfo() {
    return JSON.parse(await native.js_account_info(this._handle));
  }

  /** The JetStream API level of the server (2.11: 1, 2.12: 2, ...; 0 for
   * servers too old to report one). */
  async apiLevel() {
    return native.js_api_level(this._handle);
  }

  get isClosed() {
    return this._closed;
  }

  /** Frees the context. Acks of publishes already sent still arrive; queued
   * ones and later calls reject with IllegalStateError. Closing twice is fine. */
  close() {
    if (this._closed) return;
    this._closed = true;
    native.jsClose(this._handle);
    wake(this._roomWaiters); // queued publishes fail now, not at their stall wait
  }

  _hasRoom() {
    return native.js_publish_async_pending(this._handle) < this._maxPending;
  }

  _deferred() {
    this._outstanding++;
    let settled = false;
    const d = {};
    d.promise = new Promise((resolve, reject) => {
      const settle = (fn) => (v) => {
        if (settled) return;
        settled = true;
        fn(v);
        if (--this._outstanding === 0) wake(this._settleWaiters);
      };
      d.resolve = settle(resolve);
      d.reject = settle(reject);
    });
    return d;
  }

  /** Sends now if the window has room and nothing waits before it, else
   * queues; the promise settles with the ack. */
  _enqueue(args) {
    const d = this._deferred();
    try {
      if (this._backlog.length === 0 && this._hasRoom()) {
        this._sendNow(args, d);
        return d.promise;
      }
    } catch (e) {
      d.reject(e);
      return d.promise;
    }
    this._backlog.push({ args, d });
    if (this._backlog.length === 1) this._runBacklog();
    return d.promise;
  }

  _sendNow(args, d) {
    // Each settled ack frees a slot of the library's window.
    native.jsPublishAsync(this._handle, args[0], args[1], args[2]).then(
      (ack) => {
        d.resolve(ack);
        wake(this._roomWaiters);
      },
      (e) => {
        d.reject(e);
        wake(this._roomWaiters);
      },
    );
  }

  async _runBacklog() {
    const room = () => {
      try {
        return this._hasRoom();
      } catch {
        return true; // closed: the send below fails with the reason
      }
    };
    const stalled = () => makeError(Status.TOO_MANY_STALLED, 'no room for an asynchronous publish within the stall wait');
    while (this._backlog.length > 0) {
      const { args, d } = this._backlog[0];
      try {
        if (!room()) await waitUntil(room, this._roomWaiters, this._stallWait, null, stalled);
        this._sendNow(args, d);
      } catch (e) {
        d.reject(e);
      }
      this._backlog.shift();
    }
    wake(this._backlogWaiters);
  }
}

// ---------------------------------------------------------------------------
// Object Store (ADR-20): named objects of any size in a bucket, stored in
// chunks with a SHA-256 digest; interoperable with nats.js, nats.go and the
// other clients. Reads and writes go one chunk per library token, so a large
// object never blocks the event loop and the library's bounds apply as the
// backpressure of the Node streams (see src/object.c).

/** The description, headers, metadata and chunk size of an object put or
 * update (nats.js ObjectStoreMeta field names are accepted too), as the
 * library's meta JSON; null when there is nothing to say. */
function objectMetaJson(meta, forPut) {
  if (meta === undefined || meta === null) return null;
  if (typeof meta !== 'object' || Array.isArray(meta)) throw new TypeError('object meta must be an object');
  const out = {};
  if (!forPut && meta.name !== undefined && meta.name !== null) {
    if (typeof meta.name !== 'string') throw new TypeError('object name must be a string');
    out.name = meta.name;
  }
  if (meta.description !== undefined && meta.description !== null) {
    if (typeof meta.description !== 'string') throw new TypeError('description must be a string');
    out.description = meta.description;
  }
  const flat = flattenHeaders(meta.headers);
  if (flat !== null) {
    const headers = {};
    for (let i = 0; i + 1 < flat.length; i += 2) (headers[flat[i]] ??= []).push(flat[i + 1]);
    out.headers = headers;
  }
  if (meta.metadata !== undefined && meta.metadata !== null) out.metadata = stringMetadata(meta.metadata);
  if (forPut) {
    const size = meta.chunkSize ?? meta.chunk_size ?? meta.options?.max_chunk_size;
    if (size !== undefined && size !== null) {
      if (!Number.isInteger(size) || size <= 0) throw new TypeError('chunkSize must be a positive integer');
      out.chunk_size = size;
    }
  }
  return Object.keys(out).length > 0 ? JSON.stringify(out) : null;
}

/** put()'s meta: a name, or {name, description, headers, metadata, chunkSize}. */
function putArgs(meta) {
  if (typeof meta === 'string') return [meta, null];
  if (meta === null || typeof meta !== 'object') throw new TypeError('meta must be an object name or {name, ...}');
  if (typeof meta.name !== 'string') throw new TypeError('object name must be a string');
  return [meta.name, objectMetaJson(meta, true)];
}

function isBytes(data) {
  return typeof data === 'string' || data instanceof ArrayBuffer || ArrayBuffer.isView(data);
}

/** What an object is: its name and meta, where its chunks are (nuid), and
 * what they add up to (size, chunks, digest). A link has no data of its
 * own: options.link names the bucket and, for an object link, the object. */
class ObjectInfo {
  constructor(raw) {
    // The library's info (for addLink), not enumerable: infos compare and
    // print as plain data.
    Object.defineProperty(this, '_handle', { value: raw[0] });
    /** @type {string} */
    this.name = raw[1];
    /** @type {string|undefined} */
    this.description = raw[2] ?? undefined;
    /** @type {string} */
    this.bucket = raw[3];
    /** The id of the chunks' subject. @type {string} */
    this.nuid = raw[4];
    /** Bytes. */
    this.size = raw[5];
    this.chunks = raw[6];
    /** 'SHA-256=<base64url>', '' when none (a link). */
    this.digest = raw[7];
    this.deleted = raw[8];
    /** When the meta was written, ns since the epoch. @type {bigint} */
    this.mtimeNanos = raw[9];
    /** @type {Date} */
    this.mtime = new Date(Number(raw[9] / 1000000n));
    /** The stream sequence its info is stored at: as read back (info, get,
     * list, watch) or as stored by the call that returned it (put, link);
     * grows with every change of the object. */
    this.revision = raw[16];
    /** @type {MsgHeaders|undefined} */
    this.headers = raw[10] === null ? undefined : headersFromFlat(raw[10]);
    /** @type {Record<string, string>} */
    this.metadata = JSON.parse(raw[11] ?? '{}');
    /** {link?: {bucket, name?}, max_chunk_size?} */
    this.options = {};
    if (raw[12]) this.options.link = raw[14] === null ? { bucket: raw[13] } : { bucket: raw[13], name: raw[14] };
    if (raw[15] > 0) this.options.max_chunk_size = raw[15];
  }

  get isLink() {
    return this.options.link !== undefined;
  }

  get isDeleted() {
    return this.deleted;
  }
}

/** An object's bytes as a Readable: one library token per chunk, read as the
 * consumer takes them. It ends once the size, chunk count and SHA-256 digest
 * were verified; otherwise it fails (DigestMismatchError, TimeoutError when
 * no chunk came within 30 s, ...). */
class ObjectReadStream extends Readable {
  constructor(reader, info) {
    super();
    this._reader = reader;
    /** @type {ObjectInfo} */
    this.info = info;
  }

  _read() {
    let next;
    try {
      next = native.objReaderNext(this._reader);
    } catch (e) {
      this.destroy(e);
      return;
    }
    next.then(
      (chunk) => {
        if (!this.destroyed) this.push(chunk); // null: the verified end
      },
      (e) => this.destroy(e),
    );
  }

  _destroy(error, callback) {
    native.objClose(this._reader); // stops reading (once no read is in flight)
    callback(error);
  }
}

/** A Writable that stores one object: end() finishes it (then `info` is the
 * stored object's, before 'finish'), destroy() or an error aborts it (its
 * chunks are purged; an earlier object of the name stays). Each write is
 * handed to the library, whose bound on unacknowledged chunks (8 MiB) holds
 * the write callback back: backpressure without blocking the event loop. */
class ObjectWriteStream extends Writable {
  constructor(writer, name) {
    super();
    this._writer = writer;
    /** @type {string} */
    this.name = name;
    /** The stored object's info once finished. @type {ObjectInfo|undefined} */
    this.info = undefined;
  }

  _write(chunk, encoding, callback) {
    let p;
    try {
      p = native.obj_writer_write(this._writer, toBytes(chunk));
    } catch (e) {
      callback(e);
      return;
    }
    p.then(() => callback(), callback);
  }

  _final(callback) {
    let p;
    try {
      p = native.obj_writer_finish(this._writer);
    } catch (e) {
      callback(e);
      return;
    }
    p.then((raw) => {
      this.info = new ObjectInfo(raw);
      callback();
    }, callback);
  }

  _destroy(error, callback) {
    // Unfinished: the library aborts it in the background.
    native.objClose(this._writer);
    callback(error);
  }
}

/**
 * A running watch of an object store (store.watch): an async iterator of
 * ObjectInfo, first the latest info of every object (or none with
 * updatesOnly), then every change. `initialized` resolves true when the
 * iteration has gone past the initial infos (the library's marker), or false
 * if the watch ended before that.
 */
class ObjectWatcher extends ItemStream {
  constructor(handle, bucket) {
    super(handle, DEFAULT_WINDOW);
    /** @type {string} */
    this.bucket = bucket;
    this._initResolve = null;
    /** @type {Promise<boolean>} */
    this.initialized = new Promise((resolve) => {
      this._initResolve = resolve;
    });
  }

  _take(raw) {
    if (raw === true) {
      this._initResolve(true);
      return SKIP;
    }
    return new ObjectInfo(raw);
  }

  _onFinish() {
    this._initResolve(false);
  }
}

function objectStoreStatus(raw) {
  return {
    bucket: raw[0],
    description: raw[1] ?? undefined,
    /** ms; 0: objects never expire */
    ttl: raw[2] / 1e6,
    storage: raw[3],
    replicas: raw[4],
    /** bytes stored */
    size: raw[5],
    sealed: raw[6],
    compression: raw[7],
    metadata: JSON.parse(raw[8] ?? '{}'),
    backingStore: 'JetStream',
    streamInfo: JSON.parse(raw[9] ?? '{}'),
  };
}

function showDeleted(opts) {
  if (opts === undefined || opts === null) return false;
  if (typeof opts !== 'object') throw new TypeError('options must be an object');
  return Boolean(opts.showDeleted ?? opts.includeDeleted);
}

/** A bound object store bucket (js.objectStores / js.objectStore()). */
class ObjectStore {
  constructor(handle, js) {
    this._handle = handle;
    this._js = js;
    /** @type {string} */
    this.bucket = native.obj_bucket(handle);
    this._closed = false;
  }

  /**
   * Stores an object: `meta` is its name or {name, description, headers,
   * metadata, chunkSize}; `data` bytes (string, Buffer, Uint8Array,
   * ArrayBuffer), or a Readable, web ReadableStream or any (async) iterable
   * of them, streamed through the library's writer. Replaces an object of
   * that name once complete; resolves with the stored ObjectInfo.
   */
  async put(meta, data) {
    if (data === undefined || data === null || isBytes(data)) return this.putBytes(meta, data);
    if (typeof data[Symbol.asyncIterator] !== 'function' && typeof data[Symbol.iterator] !== 'function') {
      throw new TypeError('data must be bytes, a Readable or an (async) iterable of bytes');
    }
    const [name, json] = putArgs(meta);
    return this._putFrom(name, json, data);
  }

  /** Stores `data` (bytes, or nothing for an empty object) in one call. */
  async putBytes(meta, data) {
    const [name, json] = putArgs(meta);
    const bytes = toBytes(data);
    // Up to a writer's piece, one library call (its copy of the bytes is
    // the piece's copy): a small object skips the writer's three calls,
    // ~10% of a 1 KiB put. Larger ones stream a piece at a time, so the
    // library never holds a second copy of the whole object.
    if (bytes === null || bytes.length <= PUT_PIECE) {
      return new ObjectInfo(await native.obj_put(this._handle, name, json, bytes));
    }
    return this._putFrom(name, json, pieces(bytes));
  }

  /** Writes what `source` (an (async) iterable of bytes) yields as one
   * object; a failing source or write abandons it. */
  async _putFrom(name, json, source) {
    const writer = native.obj_writer_open(this._handle, name, json);
    try {
      for await (const chunk of source) {
        const bytes = toBytes(chunk);
        if (bytes === null) throw new TypeError('data must yield bytes');
        if (bytes.length > 0) await native.obj_writer_write(writer, bytes);
      }
      return new ObjectInfo(await native.obj_writer_finish(writer));
    } finally {
      native.objClose(writer); // unfinished (the source failed): aborted
    }
  }

  /** Stores a string as UTF-8. */
  async putString(meta, text) {
    if (typeof text !== 'string') throw new TypeError('text must be a string');
    return this.putBytes(meta, text);
  }

  /** A Writable that stores one object (see ObjectWriteStream); `meta` as
   * for put(). Throws InvalidObjectNameError at once for an empty name. */
  createWriteStream(meta) {
    const [name, json] = putArgs(meta);
    return new ObjectWriteStream(native.obj_writer_open(this._handle, name, json), name);
  }

  /**
   * Reads an object: resolves with {info, stream}, `stream` a Readable of
   * its bytes (usable with stream.pipeline) that fails with
   * DigestMismatchError when they do not match the info. A link is
   * followed (info is the target's). Rejects with ObjectNotFoundError, or
   * ObjectDeletedError (a kind of it) for a deleted object unless
   * {showDeleted}.
   */
  async get(name, opts) {
    const [reader, raw] = await native.obj_get(this._handle, name, showDeleted(opts));
    const info = new ObjectInfo(raw);
    return { info, stream: new ObjectReadStream(reader, info) };
  }

  /** An object's bytes as one Buffer (verified as get's stream is). */
  async getBytes(name, opts) {
    const [reader, raw] = await native.obj_get(this._handle, name, showDeleted(opts));
    try {
      // Chunks are copied into one buffer of the recorded size as they come
      // (the library fails the read before handing out more than that), so
      // they are garbage at once and no second copy is made at the end.
      const info = new ObjectInfo(raw);
      const out = Buffer.allocUnsafe(info.deleted ? 0 : Number(info.size));
      let at = 0;
      for (;;) {
        const chunk = await native.objReaderNext(reader);
        if (chunk === null) return at === out.length ? out : out.subarray(0, at);
        if (chunk.length > out.length - at) throw new Error(`object ${name}: more data than its info records`);
        at += chunk.copy(out, at);
      }
    } finally {
      native.objClose(reader);
    }
  }

  /** An object's info (not following links); ObjectNotFoundError, or
   * ObjectDeletedError unless {showDeleted}. */
  async info(name, opts) {
    return new ObjectInfo(await native.obj_get_info(this._handle, name, showDeleted(opts)));
  }

  /** Changes description, headers and metadata; a `name` renames the
   * object (ObjectExistsError if a live object has that name). */
  async updateMeta(name, meta) {
    if (meta === undefined || meta === null || typeof meta !== 'object') throw new TypeError('meta must be an object');
    await native.obj_update_meta(this._handle, name, objectMetaJson(meta, false) ?? '{}');
  }

  /** Deletes an object: its chunks are purged, a deleted info stays. */
  async delete(name) {
    await native.obj_delete(this._handle, name);
  }

  /** The infos of the bucket's objects ({includeDeleted}: deleted ones too). */
  async list(opts) {
    return (await native.obj_list(this._handle, showDeleted(opts))).map((raw) => new ObjectInfo(raw));
  }

  /** Watches the bucket (see ObjectWatcher). Options: ignoreDeletes,
   * includeHistory, updatesOnly. */
  async watch(opts) {
    if (opts !== undefined && opts !== null && typeof opts !== 'object') {
      throw new TypeError('watch options must be an object');
    }
    const o = opts ?? {};
    const flags = {
      include_history: Boolean(o.includeHistory),
      ignore_deletes: Boolean(o.ignoreDeletes),
      updates_only: Boolean(o.updatesOnly),
    };
    return new ObjectWatcher(await native.obj_watch(this._handle, flags), this.bucket);
  }

  /**
   * Stores a link named `name` to the object of `target` (an ObjectInfo, or
   * {bucket, name}), in this or another bucket; reading the link reads the
   * target. ObjectLinkError for a deleted target or a link to a link,
   * ObjectExistsError if a live object (not a link) has the name.
   */
  async addLink(name, target) {
    if (target === null || typeof target !== 'object') throw new TypeError('target must be an ObjectInfo');
    let info = target;
    if (!(info instanceof ObjectInfo)) {
      if (typeof target.name !== 'string' || typeof target.bucket !== 'string') {
        throw new TypeError('target must be an ObjectInfo or {bucket, name}');
      }
      if (target.bucket === this.bucket) {
        info = await this.info(target.name, { showDeleted: true });
      } else {
        const other = await this._js.objectStores.objectStore(target.bucket);
        try {
          info = await other.info(target.name, { showDeleted: true });
        } finally {
          other.close();
        }
      }
    }
    return new ObjectInfo(await native.objAddLink(this._handle, name, info._handle));
  }

  /** Stores a link named `name` to a whole bucket (a name or an ObjectStore). */
  async addBucketLink(name, bucket) {
    const b = bucket instanceof ObjectStore ? bucket.bucket : bucket;
    return new ObjectInfo(await native.obj_add_bucket_link(this._handle, name, b));
  }

  /** Seals the bucket: it can be read, no longer changed (puts, deletes and
   * meta updates reject with BucketSealedError). Resolves with its status. */
  async seal() {
    await native.obj_seal(this._handle);
    return this.status();
  }

  /** {bucket, description, ttl (ms), storage, replicas, size, sealed,
   * compression, metadata, backingStore, streamInfo} */
  async status() {
    return objectStoreStatus(await native.obj_get_status(this._handle));
  }

  get isClosed() {
    return this._closed;
  }

  /** Frees the handle (the bucket stays). Later calls reject with IllegalStateError. */
  close() {
    if (this._closed) return;
    this._closed = true;
    native.objClose(this._handle);
  }
}

const OBJECT_BUCKETS = {
  create: (js, json, mode) => native.js_obj_create(js, json, mode),
  bind: (js, bucket) => native.js_obj_bind(js, bucket),
  delete: (js, bucket) => native.js_obj_delete(js, bucket),
  names: (js) => native.js_obj_names(js),
  statuses: (js) => native.js_obj_statuses(js),
  config: 'object store config',
  wrap: (h, js) => new ObjectStore(h, js),
  status: (raw) => objectStoreStatus(raw),
};

/** js.objectStores: object store bucket management (also on the context:
 * js.createObjectStore(...) and so on). */
class ObjectStoreManager extends BucketManager {
  constructor(js) {
    super(js, OBJECT_BUCKETS);
  }

  /** Creates a bucket from an ObjectStoreConfig ({bucket, description, ttl,
   * max_bytes, storage, replicas, placement, compression, metadata}), or
   * (bucket, config). An identical bucket is bound; another one with that
   * name rejects with BucketExistsError. */
  async createObjectStore(cfg, opts) {
    return this._open(0, cfg, opts);
  }

  /** Changes a bucket's configuration (BucketNotFoundError if there is none). */
  async updateObjectStore(cfg, opts) {
    return this._open(1, cfg, opts);
  }

  async createOrUpdateObjectStore(cfg, opts) {
    return this._open(2, cfg, opts);
  }

  /** Binds an existing bucket (BucketNotFoundError if there is none). */
  async objectStore(bucket) {
    return this._bind(bucket);
  }

  /** Deletes a bucket with all its objects. */
  async deleteObjectStore(bucket) {
    return this._delete(bucket);
  }

  /** The names of the account's object store buckets. */
  async objectStoreNames() {
    return this._names();
  }

  /** The status of every object store bucket (see ObjectStore.status). */
  async objectStoreStatuses() {
    return this._statuses();
  }
}

for (const method of Object.getOwnPropertyNames(ObjectStoreManager.prototype)) {
  if (method === 'constructor' || method.startsWith('_')) continue;
  JetStreamClient.prototype[method] = function objectStoreCall(...args) {
    return this.objectStores[method](...args);
  };
}

/** A JetStream context over this connection (see JetStreamClient). */
Connection.prototype.jetstream = function jetstream(opts) {
  return new JetStreamClient(this, opts);
};

module.exports = {
  connect,
  Connection,
  Subscription,
  Msg,
  MsgHeaders,
  JetStreamClient,
  KV,
  KvEntry,
  KeyCodecs,
  ValueCodecs,
  StoredMsg,
  StoredMsgs,
  JsMsg,
  JsMsgInfo,
  ConsumerMessages,
  OrderedConsumer,
  KvWatcher,
  KvKeyLister,
  ObjectStore,
  ObjectInfo,
  ObjectWatcher,
  ObjectReadStream,
  ObjectWriteStream,
  Status,
  DEFAULT_URL,
  JS_HEADERS,
  CallbackError,
  Svcm,
  Service,
  ServiceGroup,
  ServiceEndpoint,
  ServiceMsg,
  ServiceClient,
  ServiceError,
  ServiceErrorHeader,
  ServiceErrorCodeHeader,
  ServiceVerb,
  ServiceResponseType,
  version: native.version(),
  setWaitSpin,
  nkeySign,
  ...errors,
};

// For the tests' leak checks, not an API: the native handles not freed yet
// by kind, process-wide ({clients, jetstream, kv, jsMsgs, subscriptions,
// replies, consumes, watches, objectStores, objectInfos, objectReaders,
// objectWriters, objectWatches, storedMsgs}).
// The addon counts iterators by their C type (feeds); the names here.
const LIVE_FEED_NAMES = {
  sub: 'subscriptions',
  replies: 'replies',
  js_messages: 'consumes',
  kv_watcher: 'watches',
  obj_watcher: 'objectWatches',
  stored_msgs: 'storedMsgs',
  kv_key_lister: 'keyListers',
  endpoint: 'endpoints',
};
function liveHandles() {
  const { feeds, ...live } = native.liveHandles();
  for (const [type, n] of Object.entries(feeds)) live[LIVE_FEED_NAMES[type] ?? type] = n;
  return live;
}
Object.defineProperty(module.exports, Symbol.for('natsio.liveHandles'), { value: liveHandles });
