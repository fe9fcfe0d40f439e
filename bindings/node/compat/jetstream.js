'use strict';
// natsio/jetstream: the shapes of nats.js 3.x's @nats-io/jetstream over
// this package's binding (see transport-node.js): jetstream(nc) and
// jetstreamManager(nc), Stream and Consumer handles, JsMsg, the enum
// objects, and JetStreamApiError with the API's error code.

const natsio = require('../index.js');

const INTERNAL = Symbol.for('natsio.compat.internal');
const core = require('./transport-node.js');

const { coreError, mapped, bindingConnection, hdrsFrom, hdrsTo, u8, payload, decoder, QueuedIterator, NatsConnectionImpl } = core[INTERNAL];

// ---------------------------------------------------------------------------
// Enums, with nats.js's values (the server's strings).

const RetentionPolicy = Object.freeze({ Limits: 'limits', Interest: 'interest', Workqueue: 'workqueue' });
const DiscardPolicy = Object.freeze({ Old: 'old', New: 'new' });
const StorageType = Object.freeze({ File: 'file', Memory: 'memory' });
const DeliverPolicy = Object.freeze({
  All: 'all',
  Last: 'last',
  New: 'new',
  StartSequence: 'by_start_sequence',
  StartTime: 'by_start_time',
  LastPerSubject: 'last_per_subject',
});
const AckPolicy = Object.freeze({ None: 'none', All: 'all', Explicit: 'explicit', FlowControl: 'flow_control', NotSet: '' });
const ReplayPolicy = Object.freeze({ Instant: 'instant', Original: 'original' });
const StoreCompression = Object.freeze({ None: 'none', S2: 's2' });
const PersistMode = Object.freeze({ Default: 'default', Async: 'async' });
const PriorityPolicy = Object.freeze({ None: 'none', Overflow: 'overflow', PinnedClient: 'pinned_client', Prioritized: 'prioritized' });
// Header names: nats.js's objects over the core's names (natsio.h's
// NATSIO_JS_HEADER_ defines, natsio.JS_HEADERS); the consumer-status ones
// the core does not name are nats.js's own.
const H = natsio.JS_HEADERS;
const PubHeaders = Object.freeze({
  MsgIdHdr: H.MSG_ID,
  ExpectedStreamHdr: H.EXPECTED_STREAM,
  ExpectedLastSeqHdr: H.EXPECTED_LAST_SEQUENCE,
  ExpectedLastMsgIdHdr: H.EXPECTED_LAST_MSG_ID,
  ExpectedLastSubjectSequenceHdr: H.EXPECTED_LAST_SUBJECT_SEQUENCE,
  ExpectedLastSubjectSequenceSubjectHdr: H.EXPECTED_LAST_SUBJECT_SEQUENCE_SUBJECT,
  MessageTTL: H.TTL,
  Schedule: H.SCHEDULE,
  ScheduleTarget: H.SCHEDULE_TARGET,
  ScheduleSource: H.SCHEDULE_SOURCE,
  ScheduleTTL: H.SCHEDULE_TTL,
  ScheduleTimeZone: H.SCHEDULE_TIME_ZONE,
  ScheduleRollup: H.SCHEDULE_ROLLUP,
  Scheduler: H.SCHEDULER,
  ScheduleNext: H.SCHEDULE_NEXT,
});
const JsHeaders = Object.freeze({
  StreamSourceHdr: 'Nats-Stream-Source',
  LastConsumerSeqHdr: 'Nats-Last-Consumer',
  LastStreamSeqHdr: 'Nats-Last-Stream',
  ConsumerStalledHdr: 'Nats-Consumer-Stalled',
  MessageSizeHdr: H.MSG_SIZE,
  RollupHdr: H.ROLLUP,
  RollupValueSubject: H.ROLLUP_SUBJECT,
  RollupValueAll: H.ROLLUP_ALL,
  PendingMessagesHdr: H.PENDING_MESSAGES,
  PendingBytesHdr: H.PENDING_BYTES,
  RequiredApiLevel: H.REQUIRED_API_LEVEL,
});
const DirectMsgHeaders = Object.freeze({
  Stream: H.STREAM,
  Sequence: H.SEQUENCE,
  TimeStamp: H.TIME_STAMP,
  Subject: H.SUBJECT,
  LastSequence: H.LAST_SEQUENCE,
  NumPending: H.NUM_PENDING,
});
const RepublishHeaders = Object.freeze({
  Stream: H.STREAM,
  Subject: H.SUBJECT,
  Sequence: H.SEQUENCE,
  LastSequence: H.LAST_SEQUENCE,
  Size: H.MSG_SIZE,
});
const AdvisoryKind = Object.freeze({
  API: 'api_audit',
  StreamAction: 'stream_action',
  ConsumerAction: 'consumer_action',
  SnapshotCreate: 'snapshot_create',
  SnapshotComplete: 'snapshot_complete',
  RestoreCreate: 'restore_create',
  RestoreComplete: 'restore_complete',
  MaxDeliver: 'max_deliver',
  Terminated: 'terminated',
  Ack: 'consumer_ack',
  StreamLeaderElected: 'stream_leader_elected',
  StreamQuorumLost: 'stream_quorum_lost',
  ConsumerLeaderElected: 'consumer_leader_elected',
  ConsumerQuorumLost: 'consumer_quorum_lost',
});
const JetStreamApiCodes = Object.freeze({
  ConsumerNotFound: 10014,
  StreamNotFound: 10059,
  JetStreamNotEnabledForAccount: 10039,
  StreamWrongLastSequence: 10071,
  StreamWrongLastSequenceUnknown: 10164,
  NoMessageFound: 10037,
});

// ---------------------------------------------------------------------------
// Errors

class JetStreamError extends Error {
  constructor(message, options) {
    super(message, options);
    this.name = 'JetStreamError';
  }
}

class JetStreamNotEnabled extends Error {
  constructor(message, options) {
    super(message, options);
    this.name = 'JetStreamNotEnabled';
  }
}

/** A JetStream API error: `code` is the API's err_code (10071, ...),
 * `status` its HTTP-like code, the message the server's description. */
class JetStreamApiError extends Error {
  #apiError;

  constructor(jsErr, options) {
    super(jsErr.description, options);
    this.#apiError = jsErr;
    this.name = 'JetStreamApiError';
  }

  get code() {
    return this.#apiError.err_code;
  }

  get status() {
    return this.#apiError.code;
  }

  apiError() {
    return { ...this.#apiError };
  }
}

class ConsumerNotFoundError extends JetStreamApiError {
  constructor(jsErr, options) {
    super(jsErr, options);
    this.name = 'ConsumerNotFoundError';
  }
}

class InvalidNameError extends Error {
  constructor(message = '', options) {
    super(message, options);
    this.name = 'InvalidNameError';
  }
}

class StreamNotFoundError extends JetStreamApiError {
  constructor(jsErr, options) {
    super(jsErr, options);
    this.name = 'StreamNotFoundError';
  }
}


/** The server's description in a binding error's message. The binding
 * writes "<status text>: <description> (code N, err_code M)", or the
 * description alone when it starts with the status text ("wrong last
 * sequence: 1 (code 400, err_code 10071)"): a part after ": " that starts
 * with a digit is the description's own. */
function apiDescription(e) {
  const m = e.message.replace(/\s*\(code \d+, err_code \d+\)\s*$/, '');
  const at = m.indexOf(': ');
  if (at < 0 || /^\d/.test(m.slice(at + 2))) return m;
  return m.slice(at + 2);
}

/** The nats.js error for a binding error of a JetStream call. */
function jsError(e, subject) {
  if (!(e instanceof natsio.NatsError)) return e;
  if (e.errCode) {
    return apiError({ code: e.apiCode ?? 0, err_code: e.errCode, description: apiDescription(e) }, { cause: e });
  }
  // nats.js reads a JetStream request nobody answered (a publish to a
  // subject no stream holds included) as JetStream not being enabled.
  if (e.code === 'JS_NOT_ENABLED' || e.code === 'NO_STREAM_RESPONSE' || e.code === 'NO_RESPONDERS') {
    return new JetStreamNotEnabled('jetstream is not enabled', { cause: e });
  }
  return coreError(e, subject);
}

async function jsCall(p, subject) {
  try {
    return await p;
  } catch (e) {
    throw jsError(e, subject);
  }
}

/** nats.js's JetStreamStatusError: a JetStream reply that is a status
 * message (`code` its status, the message its description, lower case). */
class JetStreamStatusError extends JetStreamError {
  constructor(message, code, options) {
    super(message, options);
    this.code = code;
    this.name = 'JetStreamStatusError';
  }
}

/** The status of a reply that is a status message, 0 for a message. */
function statusCode(m) {
  return m.headers?.code || 0;
}

/** A status's description as nats.js reports it: lower case, else named
 * by its code. */
function statusText(code, description) {
  return description?.toLowerCase() || (code === 503 ? 'no responders' : 'unknown');
}

/** The JetStreamStatusError of a status message. */
function statusError(m) {
  const code = statusCode(m);
  return new JetStreamStatusError(statusText(code, m.headers?.description), code);
}

/** The nats.js error for a JetStream API error ({code, err_code,
 * description}): its class by err_code, as nats.js parses responses. */
function apiError(api, options) {
  if (api.err_code === JetStreamApiCodes.ConsumerNotFound) return new ConsumerNotFoundError(api, options);
  if (api.err_code === JetStreamApiCodes.StreamNotFound) return new StreamNotFoundError(api, options);
  if (api.err_code === JetStreamApiCodes.JetStreamNotEnabledForAccount) {
    const e = new JetStreamApiError(api, options);
    return new JetStreamNotEnabled(e.message, { cause: e });
  }
  return new JetStreamApiError(api, options);
}

/** A JetStream API response's JSON; its `error` thrown as nats.js throws it. */
function parseJsResponse(m) {
  const v = JSON.parse(decoder.decode(m.data));
  if (v.error) throw apiError(v.error);
  return v;
}

/** The names nats.js refuses for a stream or consumer, with its errors. */
function validateName(context, name = '') {
  if (name === '') throw Error(`${context} name required`);
  for (const [c, shown] of [['.'], ['*'], ['>'], ['/'], ['\\'], [' '], ['\t', '\\t'], ['\n', '\\n'], ['\r', '\\r']]) {
    if (name.includes(c)) throw new InvalidNameError(`${context} name ('${name}') cannot contain '${shown ?? c}'`);
  }
}

/** A request to the JetStream API of `client` (a JetStreamClientImpl) over
 * its connection, as nats.js's API calls make it: JSON body, the client's
 * timeout, no responders read as JetStream not being enabled. */
async function apiRequest(client, subj, body) {
  return parseJsResponse(await jsRequest(client, subj, body === undefined ? core.Empty : JSON.stringify(body)));
}

/** A request to JetStream over the connection of `client` (with `headers`
 * if given, within `timeout` or the client's), no responders read as
 * JetStream not being enabled, as nats.js's. */
async function jsRequest(client, subj, data, headers, timeout, retries) {
  const opts = { timeout: timeout || client._timeout };
  if (headers) opts.headers = headers;
  const noResponders = (e) => e instanceof core.errors.RequestError && e.isNoResponders();
  try {
    return await withRetries(retries, () => client.nc.request(subj, data, opts), (e) => e instanceof core.errors.TimeoutError || noResponders(e));
  } catch (e) {
    if (noResponders(e)) throw new JetStreamNotEnabled('jetstream is not enabled', { cause: e });
    throw e;
  }
}

/** nats.js's retry loop of a JetStream publish: `attempt()` up to
 * `retries` times (its count of attempts, default 1; it loops `i <
 * retries`, so 2.5 makes 3), again after a failure `retryable(e)` accepts
 * (nats.js: a timeout or no responders) with nats.js's backoff between
 * (0, 250, 250, 500, 500, 3000 then 5000 ms, jittered); the last failure
 * is thrown. */
async function withRetries(retries, attempt, retryable) {
  const attempts = retries || 1;
  const bo = core.backoff();
  for (let i = 0; ; i++) {
    try {
      return await attempt();
    } catch (e) {
      if (!retryable(e) || !(i + 1 < attempts)) throw e;
      await core.delay(bo.backoff(i));
    }
  }
}

// ---------------------------------------------------------------------------
// Messages

/** A message read back from a stream (nats.js's StoredMsg: `header`). */
class StoredMsgImpl {
  constructor(sm) {
    this.subject = sm.subject;
    this.seq = sm.seq;
    this.header = hdrsFrom(sm.headers) ?? core.headers();
    this.data = u8(sm.data);
    this.time = sm.time;
    this.timestamp = sm.time.toISOString();
    this.lastSequence = 0;
    this.pending = 0;
  }

  string() {
    return decoder.decode(this.data);
  }

  json(reviver) {
    return JSON.parse(this.string(), reviver);
  }
}

class JsMsgImpl {
  constructor(m, nc) {
    this._m = m;
    this._nc = nc;
    this.subject = m.subject;
    this.reply = m.reply ?? '';
    this.data = payload(m.data);
    this.headers = hdrsFrom(m.headers);
    this.sid = 0;
  }

  get info() {
    const i = this._m.info;
    return {
      domain: i.domain ?? '',
      stream: i.stream,
      consumer: i.consumer,
      deliveryCount: i.deliveryCount,
      redeliveryCount: i.deliveryCount,
      streamSequence: i.streamSequence,
      deliverySequence: i.consumerSequence,
      timestampNanos: Number(i.timestampNanos),
      pending: i.pending,
      redelivered: i.deliveryCount > 1,
    };
  }

  get seq() {
    return this._m.seq;
  }

  get redelivered() {
    return this._m.redelivered;
  }

  get timestampNanos() {
    return this._m.info.timestampNanos;
  }

  get time() {
    return this._m.info.timestamp;
  }

  get timestamp() {
    return this.time.toISOString();
  }

  /** Acknowledges the message and asks the consumer for the next
   * (`opts.batch`, default 1; `expires` ms; `no_wait`), delivered to `subj`,
   * which the program subscribes to: nats.js's "+NXT" to the ack subject.
   * The server counts it as the ack; without `subj` nothing is delivered. */
  next(subj, opts = { batch: 1 }) {
    const args = { batch: opts.batch || 1, no_wait: opts.no_wait || false };
    if (opts.expires && opts.expires > 0) args.expires = core.nanos(opts.expires);
    if (!this.reply) return;
    this._nc.publish(this.reply, `+NXT ${JSON.stringify(args)}`, subj ? { reply: subj } : undefined);
  }

  // nats.js sends a message's first acknowledgement and ignores later ones.
  _ack(fn) {
    try {
      fn();
    } catch (e) {
      if (e.code !== 'MESSAGE_ALREADY_ACKED') throw jsError(e);
    }
  }

  ack() {
    this._ack(() => this._m.ack());
  }

  nak(millis) {
    this._ack(() => this._m.nak(millis));
  }

  working() {
    this._ack(() => this._m.working());
  }

  term(reason) {
    this._ack(() => this._m.term(reason));
  }

  async ackAck(opts) {
    try {
      return await this._m.ackAck(opts?.timeout);
    } catch (e) {
      if (e.code === 'MESSAGE_ALREADY_ACKED') return false;
      throw jsError(e);
    }
  }

  string() {
    return decoder.decode(this.data);
  }

  json(reviver) {
    return JSON.parse(this.string(), reviver);
  }
}

// ---------------------------------------------------------------------------
// ConsumerMessages: nats.js's iterator of JsMsg (or a callback), over the
// binding's ConsumerMessages (a consume, or one fetch). It reads from the binding
// as the program reads, so the binding's flow control stays.

class ConsumerMessagesImpl {
  constructor(source, opts = {}) {
    this._source = source; // a promise of an async iterator of binding JsMsg
    this._inner = null;
    this._processed = 0;
    this._received = 0;
    this._done = false;
    this._closedResolve = null;
    this._closed = new Promise((resolve) => {
      this._closedResolve = resolve;
    });
    this._limit = opts.limit ?? Infinity;
    this._nc = opts.nc; // the connection of the messages' next()
    this._onYield = opts.onYield;
    if (opts.callback) {
      const cb = opts.callback;
      (async () => {
        try {
          for await (const m of this) await cb(m);
        } catch (e) {
          this._end(e);
        }
      })();
    }
  }

  async _iter() {
    if (!this._inner) this._inner = await this._source;
    return this._inner;
  }

  async next() {
    if (this._done) return { value: undefined, done: true };
    if (this._received >= this._limit) {
      this._abort();
      return { value: undefined, done: true };
    }
    let r;
    try {
      r = await (await this._iter()).next();
    } catch (e) {
      this._end();
      throw jsError(e);
    }
    if (r.done || this._done) {
      this._end();
      return { value: undefined, done: true };
    }
    this._received++;
    this._processed++;
    this._silent = false;
    const m = new JsMsgImpl(r.value, this._nc);
    this._onYield?.(m);
    return { value: m, done: false };
  }

  return() {
    this._abort();
    return Promise.resolve({ value: undefined, done: true });
  }

  [Symbol.asyncIterator]() {
    return this;
  }

  _end(err) {
    if (this._done) return;
    this._done = true;
    this._closedResolve(err);
  }

  /** Ends now: nothing more is yielded. */
  _abort(err) {
    const inner = this._inner;
    this._end(err);
    if (inner?.stop) inner.stop();
    else if (!inner) Promise.resolve(this._source).then((i) => i?.stop?.(), () => {});
  }

  /** As nats.js: nothing more is asked of the server, and what it sent
   * already is still yielded before the iteration ends (the library's
   * drain: in flight too, so nothing is left to redeliver; left unread
   * past the connection's drainTimeout, it is dropped); with `err`, a
   * second time, or once heartbeats were missed, it ends now. */
  stop(err) {
    // A drain waits on the server: one that went silent (heartbeats
    // missed) would hold the loop until the drain timeout, where nats.js's
    // loop ends at once (nothing came from it meanwhile to be yielded).
    if (err || this._done || this._stopping || this._silent) return this._abort(err);
    this._stopping = true;
    this._iter().then(
      (i) => (i.drain ? i.drain().catch(() => i.stop()) : i.stop?.()),
      () => {},
    );
  }

  async close() {
    this.stop();
    return this._closed;
  }

  closed() {
    return this._closed;
  }

  getProcessed() {
    return this._processed;
  }

  getReceived() {
    return this._received;
  }

  getPending() {
    return 0;
  }

  status() {
    const it = new QueuedIterator();
    (this._statusIters ??= new Set()).add(it);
    (this._statusEnd ?? this._closed).then(() => it._stop());
    return it;
  }

  /** Hands a notification to the status() iterators. */
  _notify(n) {
    // Told first: a program that stops on it is stopped at once.
    if (n.type === 'heartbeats_missed') this._silent = true;
    else if (n.type !== 'next') this._silent = false; // the server spoke
    for (const it of this._statusIters ?? []) it._push(n);
  }
}

function pullOptions(opts = {}) {
  const o = {};
  const max = opts.max_messages ?? opts.maxMessages;
  if (max !== undefined) o.max_messages = max;
  const bytes = opts.max_bytes ?? opts.maxBytes;
  if (bytes !== undefined) o.max_bytes = bytes;
  o.expires = opts.expires ?? 30000;
  if (o.expires < 1000) throw core.InvalidArgumentError.format('expires', 'must be at least 1000ms');
  // As nats.js: heartbeats on every request (a fetch's too), half of
  // expires by default, kept within 500 ms and 30 s.
  const hb = opts.idle_heartbeat || opts.heartbeat || o.expires / 2;
  o.idle_heartbeat = Math.min(Math.max(hb, 500), 30000);
  for (const k of ['threshold_messages', 'threshold_bytes', 'group', 'min_pending', 'min_ack_pending']) {
    if (opts[k] !== undefined) o[k] = opts[k];
  }
  // As nats.js: a priority is sent with a group, and only a number.
  if (typeof opts.group === 'string' && typeof opts.priority === 'number') o.priority = opts.priority;
  return o;
}

// ---------------------------------------------------------------------------
// Consumers

/** A named pull consumer (js.consumers.get(stream, name)). */
class PullConsumerImpl {
  constructor(js, info) {
    this._js = js;
    this.stream = info.stream_name;
    this.name = info.name;
    this._info = info;
  }

  isPullConsumer() {
    return true;
  }

  isPushConsumer() {
    return false;
  }

  async info(cached = false) {
    if (cached && this._info) return this._info;
    this._info = await jsCall(this._js._js.consumers.info(this.stream, this.name));
    return this._info;
  }

  async delete() {
    return jsCall(this._js._js.consumers.delete(this.stream, this.name));
  }

  async consume(opts = {}) {
    const source = jsCall(this._js._js.consume(this.stream, this.name, pullOptions(opts)));
    const inner = await source; // a missing consumer rejects here, as nats.js's does
    const msgs = new ConsumerMessagesImpl(source, { nc: this._js.nc, callback: opts.callback });
    forwardStatus(inner, msgs);
    return msgs;
  }

  async fetch(opts = {}) {
    const o = pullOptions(opts);
    if (o.max_messages === undefined && o.max_bytes === undefined) o.max_messages = 100;
    // Yielded as they arrive, as nats.js's fetch does.
    const source = jsCall(this._js._js.fetchMessages(this.stream, this.name, o));
    const inner = await source;
    const msgs = new ConsumerMessagesImpl(source, { nc: this._js.nc, callback: opts.callback });
    forwardStatus(inner, msgs);
    return msgs;
  }

  async next(opts = {}) {
    const { expires } = pullOptions(opts);
    try {
      const m = await this._js._js.next(this.stream, this.name, { timeout: expires });
      return new JsMsgImpl(m, this._js.nc);
    } catch (e) {
      if (e instanceof natsio.TimeoutError) return null; // NoMessagesError is one
      throw jsError(e);
    }
  }
}

/** nats.js's server-side configuration of an ordered consumer
 * (ConsumersImpl.ordered in @nats-io/jetstream) as the binding's options:
 * without a deliver policy it starts by sequence (opt_start_seq, default
 * 1), a start time wins over the policy, and max_deliver is 1 (nats.go,
 * the library's default, sets neither). */
function orderedOptions(opts, namePrefix) {
  const o = {
    name_prefix: namePrefix,
    deliver_policy: opts.deliver_policy || DeliverPolicy.StartSequence,
    max_deliver: 1,
  };
  if (o.deliver_policy === DeliverPolicy.StartSequence) o.opt_start_seq = opts.opt_start_seq || 1;
  if (opts.opt_start_time) {
    o.deliver_policy = DeliverPolicy.StartTime;
    delete o.opt_start_seq;
    o.opt_start_time = opts.opt_start_time;
  }
  for (const k of ['filter_subjects', 'headers_only', 'inactive_threshold']) {
    if (opts[k] !== undefined) o[k] = opts[k];
  }
  // An array goes as filter_subjects, a string as filter_subject.
  o.filter_subjects_as_list = Array.isArray(opts.filter_subjects);
  return o;
}

/** An ordered consumer (js.consumers.get(stream[, opts])). Each
 * consumption (consume, fetch, next) reads through a binding ordered
 * consumer that starts after the last stream sequence this one yielded,
 * so a fetch after a fetch goes on where the first stopped whatever the
 * binding kept buffered. Their server-side consumers are named as nats.js
 * names its: `<name_prefix>_<serial>`, one prefix for all of them. */
class OrderedConsumerImpl {
  constructor(js, stream, opts) {
    this._js = js;
    this.stream = stream;
    this._opts = opts ?? {};
    this._namePrefix = this._opts.name_prefix || core.nuid.next();
    this._oc = null;
    this._lastSeq = 0;
    this._used = false;
    // As nats.js: an ordered consumer is consumed once, or fetched from
    // one fetch at a time, never both.
    this._kind = null;
    this._fetching = null;
  }

  _begin(kind) {
    const { InvalidOperationError } = core.errors;
    if (kind === 'consume') {
      if (this._kind === 'fetch') throw new InvalidOperationError('ordered consumer initialized as fetch');
      if (this._kind === 'consume') throw new InvalidOperationError("ordered consumer doesn't support concurrent consume");
    } else {
      if (this._kind === 'consume') throw new InvalidOperationError('ordered consumer already initialized as consume');
      if (this._fetching) throw new InvalidOperationError("ordered consumer doesn't support concurrent fetch");
    }
    this._kind = kind;
  }

  /** The binding's ordered consumer for the next consumption: a new one
   * after a consumption has yielded messages (the previous one stopped
   * first: its consumer has the same name). */
  async _consumer(fresh = false) {
    if (this._oc && fresh && this._used) {
      await this._oc.stop().catch(() => {});
      this._oc.close();
      this._oc = null;
    }
    if (!this._oc) {
      const o = orderedOptions(this._opts, this._namePrefix);
      if (this._lastSeq > 0) {
        o.deliver_policy = DeliverPolicy.StartSequence;
        o.opt_start_seq = this._lastSeq + 1;
        delete o.opt_start_time;
      }
      this._oc = await jsCall(this._js._js.consumers.get(this.stream, o));
      this._used = false;
    }
    return this._oc;
  }

  isPullConsumer() {
    return true;
  }

  isPushConsumer() {
    return false;
  }

  async info(cached = false) {
    return jsCall((await this._consumer()).info(cached));
  }

  async delete() {
    return jsCall((await this._consumer()).delete());
  }

  _messages(opts) {
    const o = {};
    if (opts.max_messages !== undefined) o.max_messages = opts.max_messages;
    if (opts.expires !== undefined) o.expires = opts.expires;
    return this._consumer(true).then((oc) => {
      this._used = true;
      return jsCall(oc.consume(o));
    });
  }

  _yielded(m) {
    this._lastSeq = m.info.streamSequence;
  }

  async consume(opts = {}) {
    this._begin('consume');
    const source = this._messages(opts);
    const inner = await source;
    const msgs = new ConsumerMessagesImpl(source, { nc: this._js.nc, callback: opts.callback, onYield: (m) => this._yielded(m) });
    forwardStatus(inner, msgs);
    return msgs;
  }

  /** Up to max_messages (default 100) within expires (default 30 s). */
  async fetch(opts = {}) {
    this._begin('fetch');
    const max = opts.max_messages ?? 100;
    this._fetching = true;
    let msgs;
    try {
      const source = this._messages({ max_messages: max });
      const inner = await source;
      msgs = new ConsumerMessagesImpl(source, { nc: this._js.nc, callback: opts.callback, limit: max, onYield: (m) => this._yielded(m) });
      forwardStatus(inner, msgs);
    } catch (e) {
      this._fetching = null;
      throw e;
    }
    const timer = setTimeout(() => msgs.stop(), opts.expires ?? 30000);
    msgs.closed().then(() => {
      clearTimeout(timer);
      this._fetching = null;
    });
    return msgs;
  }

  async next(opts = {}) {
    const msgs = await this.fetch({ max_messages: 1, expires: opts.expires ?? 30000 });
    for await (const m of msgs) {
      msgs.stop();
      return m;
    }
    return null;
  }
}

/** A status event of the library (ConsumerMessages.nextStatus) in
 * nats.js's notification shape. */
function notification(n) {
  switch (n.type) {
    case 'heartbeat':
      return { type: 'heartbeat', lastConsumerSequence: n.last_consumer_seq, lastStreamSequence: n.last_stream_seq };
    case 'discard':
      return { type: 'discard', messagesLeft: n.messages_left, bytesLeft: n.bytes_left };
    case 'next': {
      // The pull request, its fields in nats.js's order (max_bytes 0 when
      // the request has none).
      const { batch, max_bytes: maxBytes = 0, idle_heartbeat: hb, expires, ...rest } = n.options;
      return { type: 'next', options: { batch, max_bytes: maxBytes, idle_heartbeat: hb, expires, ...rest } };
    }
    default: {
      // heartbeats_missed {count}, consumer_deleted, exceeded_limits and
      // debug {code, description}, no_responders {code}, consumer_pinned
      // {id}: the library's fields are nats.js's, type first.
      const { type, ...rest } = n;
      return { type, ...rest };
    }
  }
}

/** Hands the status events of the binding's consumption `inner` to the
 * status() iterators of `msgs` until the consumption ends. */
function forwardStatus(inner, msgs) {
  // The status() iterators end with the events, which the library ends
  // after the consumption's last one (nats.js tells each before its end).
  msgs._statusEnd = (async () => {
    for (;;) {
      const n = await inner.nextStatus().catch(() => null);
      if (!n) return;
      msgs._notify(notification(n));
    }
  })();
}

/** A push consumer (js.consumers.getPushConsumer(stream, name)): the
 * server sends its messages to its deliver subject; consume() subscribes
 * there. */
class PushConsumerImpl {
  constructor(js, info) {
    this._js = js;
    this.stream = info.stream_name;
    this.name = info.name;
    this._info = info;
    this._consuming = false;
  }

  isPullConsumer() {
    return false;
  }

  isPushConsumer() {
    return true;
  }

  async info(cached = false) {
    if (cached && this._info) return this._info;
    this._info = await jsCall(this._js._js.consumers.info(this.stream, this.name));
    return this._info;
  }

  async delete() {
    return jsCall(this._js._js.consumers.delete(this.stream, this.name));
  }

  async consume(opts = {}) {
    if (this._consuming) throw new core.errors.InvalidOperationError('consumer already started');
    if (!this._info.config.deliver_group && this._info.push_bound) {
      throw new core.errors.InvalidOperationError('consumer is already bound');
    }
    const source = jsCall(this._js._js.pushConsume(this.stream, this.name));
    const inner = await source;
    this._consuming = true;
    const msgs = new ConsumerMessagesImpl(source, { nc: this._js.nc, callback: opts.callback });
    forwardStatus(inner, msgs);
    msgs.closed().then(() => {
      this._consuming = false;
    });
    return msgs;
  }
}

/** nats.js's ordered push consumer (getPushConsumer(stream[, opts])): read
 * through the binding's ordered consumer, which delivers the same
 * messages in the same order (it pulls; deliver_prefix has no use). */
class OrderedPushConsumerImpl {
  constructor(js, stream, opts = {}) {
    const { deliver_prefix: _unused, ...rest } = opts;
    this._ordered = new OrderedConsumerImpl(js, stream, rest);
  }

  isPullConsumer() {
    return false;
  }

  isPushConsumer() {
    return true;
  }

  info(cached = false) {
    return this._ordered.info(cached);
  }

  delete() {
    return this._ordered.delete();
  }

  consume(opts = {}) {
    return this._ordered.consume({ callback: opts.callback });
  }
}

// ---------------------------------------------------------------------------
// Bound push consumers (js.consumers.getBoundPushConsumer): the program
// names only the deliver subject of a push consumer made elsewhere, so
// neither the stream nor the consumer is known and no JetStream API call is
// made (a program may lack the permission). The binding's push consume
// needs both names, so this reads a core subscription to the deliver
// subject and does there what that consume does: JsMsgs from the messages,
// heartbeats watched, flow-control requests answered.

/** The delivery info a JetStream ack subject carries, as nats.js parses
 * it: "$JS.ACK.<stream>.<consumer>.<delivered>.<sseq>.<dseq>.<ns>.<pending>",
 * or that with the domain ("_" for none) and account hash after "ACK". */
function ackSubjectInfo(reply) {
  const t = (reply ?? '').split('.');
  if (t.length === 9) t.splice(2, 0, '_', '');
  if (t.length < 11 || t[0] !== '$JS' || t[1] !== 'ACK' || !/^\d+$/.test(t[9])) {
    throw new Error('unable to parse delivery info - not a jetstream message');
  }
  const timestampNanos = BigInt(t[9]);
  const deliveryCount = parseInt(t[6], 10);
  return {
    domain: t[2] === '_' ? '' : t[2],
    stream: t[4],
    consumer: t[5],
    deliveryCount,
    redelivered: deliveryCount > 1,
    streamSequence: parseInt(t[7], 10),
    consumerSequence: parseInt(t[8], 10),
    timestampNanos,
    timestamp: new Date(Number(timestampNanos / 1000000n)),
    pending: parseInt(t[10], 10),
  };
}

/** A bound push consumer's message, from the core subscription, with what
 * JsMsgImpl reads of the binding's JsMsg: the delivery info from its ack
 * subject, the acknowledgements published to it. As nats.js's: the first
 * ack, nak or term is sent and later ones are not ("+WPI" is not final). */
class SubscribedJsMsg {
  constructor(m, nc) {
    this._nc = nc; // the facade connection the acknowledgements go through
    this.subject = m.subject;
    this.reply = m.reply;
    this.data = m.data;
    this.headers = m.headers;
    this._info = undefined;
    this._acked = false;
  }

  get info() {
    this._info ??= ackSubjectInfo(this.reply);
    return this._info;
  }

  get seq() {
    return this.info.streamSequence;
  }

  get redelivered() {
    return this.info.deliveryCount > 1;
  }

  _send(body, final = true) {
    if (this._acked) return;
    this._acked = final;
    if (this.reply) this._nc.publish(this.reply, body);
  }

  ack() {
    this._send('+ACK');
  }

  nak(millis) {
    this._send(millis ? `-NAK ${JSON.stringify({ delay: core.nanos(millis) })}` : '-NAK');
  }

  working() {
    this._send('+WPI', false);
  }

  term(reason) {
    this._send(reason ? `+TERM ${reason}` : '+TERM');
  }

  /** The ack as a request: true once the server answered it, false when
   * the message was acked before (or has no ack subject). */
  async ackAck(timeout) {
    const first = !this._acked;
    this._acked = true;
    if (!first || !this.reply) return false;
    await this._nc.request(this.reply, '+ACK', { timeout: timeout || 5000 });
    return true;
  }
}

/** nats.js's client-side watch of a consumer's idle heartbeats: every
 * interval without a message or heartbeat is counted, and from the second
 * one on each check reports the count (`onMissed`) until one comes. */
class HeartbeatWatch {
  constructor(interval, onMissed) {
    this._interval = interval;
    this._onMissed = onMissed;
    this._last = Date.now();
    this._missed = 0;
    this._timer = null;
    this.restart();
  }

  work() {
    this._last = Date.now();
    this._missed = 0;
  }

  /** While disconnected nothing can come: not watched. */
  cancel() {
    clearInterval(this._timer);
    this._timer = null;
    this._missed = 0;
  }

  restart() {
    this.cancel();
    this._timer = setInterval(() => {
      if (Date.now() - this._last > this._interval) this._missed++;
      if (this._missed >= 2) this._onMissed(this._missed);
    }, this._interval);
  }
}

/** The consumption of a bound push consumer: a core subscription to the
 * deliver subject (in the deliver group, if any), read as the binding's
 * ConsumerMessages is (next, stop, drain, nextStatus), for a
 * ConsumerMessagesImpl. As nats.js: what comes to the deliver subject
 * itself is the server's status (heartbeats, flow-control requests, the
 * consumer's deletion), the rest the consumer's messages; a flow-control
 * request is answered when the program's reading reaches it, so the server
 * sends more as the program keeps up. */
class BoundPushMessages {
  constructor(nc, cfg, opts = {}) {
    this._nc = nc;
    this._subject = cfg.deliver_subject;
    this._abortOnMissing = opts.abort_on_missing_resource === true;
    this._queue = []; // SubscribedJsMsg, or a function run when the reading reaches it
    this._wakers = [];
    this._done = false;
    this._error = undefined;
    this._statuses = [];
    this._statusWakers = [];
    this._bnc = bindingConnection(nc);
    this._sub = mapped(
      () =>
        this._bnc.subscribe(this._subject, {
          queue: cfg.deliver_group || undefined,
          callback: (err, m) => {
            if (!err) this._received(m);
          },
        }),
      this._subject,
    );
    this._watch = null;
    const hb = cfg.idle_heartbeat ? core.millis(cfg.idle_heartbeat) : 0;
    if (hb > 0) {
      this._watch = new HeartbeatWatch(hb, (count) => this._status({ type: 'heartbeats_missed', count }));
      this._watchConnection();
    }
    this._sub.closed.then(() => this._finish());
  }

  /** The heartbeat watch paused while disconnected (the connection's
   * status iterator, as nats.js; the binding's events for a binding
   * connection). */
  _watchConnection() {
    const onStatus = (type) => {
      if (type === 'disconnect') this._watch?.cancel();
      else if (type === 'reconnect') this._watch?.restart();
    };
    if (this._nc instanceof NatsConnectionImpl) {
      this._connStatus = this._nc.status();
      (async () => {
        for await (const s of this._connStatus) onStatus(s.type);
      })();
    } else {
      this._onDisconnect = () => onStatus('disconnect');
      this._onReconnect = () => onStatus('reconnect');
      this._bnc.on('disconnect', this._onDisconnect);
      this._bnc.on('reconnect', this._onReconnect);
    }
  }

  _received(m) {
    this._watch?.work();
    if (m.subject !== this._subject) {
      this._enqueue(new SubscribedJsMsg(m, this._nc));
      return;
    }
    const code = m.status;
    const description = statusText(code, m.statusDescription);
    if (code === 100 && description === 'flowcontrol request') {
      this._enqueue(() => {
        if (m.reply) this._nc.publish(m.reply, core.Empty);
        this._status({ type: 'flow_control' });
      });
    } else if (code === 100 && description === 'idle heartbeat') {
      const last = (h) => parseInt(m.headers?.first(h) || '0', 10);
      this._status({ type: 'heartbeat', last_consumer_seq: last(JsHeaders.LastConsumerSeqHdr), last_stream_seq: last(JsHeaders.LastStreamSeqHdr) });
      // The server stalled on an unanswered flow-control request names
      // where the answer goes.
      const stalled = m.headers?.first(JsHeaders.ConsumerStalledHdr);
      if (stalled) this._nc.publish(stalled, core.Empty);
    } else {
      if (code === 409 && description === 'consumer deleted') this._status({ type: 'consumer_deleted', code, description });
      if (this._abortOnMissing) this._enqueue(() => this._stopWith(new JetStreamStatusError(description, code)));
    }
  }

  _enqueue(item) {
    if (this._done) return;
    this._queue.push(item);
    this._wake();
  }

  _wake() {
    for (const w of this._wakers.splice(0)) w();
  }

  _status(n) {
    if (this._statusWakers.length) this._statusWakers.shift()(n);
    else this._statuses.push(n);
  }

  async next() {
    for (;;) {
      const item = this._queue.shift();
      if (typeof item === 'function') {
        item();
        continue;
      }
      if (item) return { value: item, done: false };
      if (this._done) {
        const err = this._error;
        this._error = undefined;
        if (err) throw err;
        return { value: undefined, done: true };
      }
      await new Promise((resolve) => this._wakers.push(resolve));
    }
  }

  /** Ends now: nothing more is yielded. */
  stop() {
    this._queue.length = 0;
    this._sub.unsubscribe();
    this._finish();
  }

  _stopWith(err) {
    this._error = err;
    this.stop();
  }

  /** The subscription withdrawn, what the server sent is still yielded. */
  async drain() {
    await this._sub.drain();
  }

  /** The next status event, null once the consumption has ended and its
   * events are read. */
  nextStatus() {
    if (this._statuses.length) return Promise.resolve(this._statuses.shift());
    if (this._done) return Promise.resolve(null);
    return new Promise((resolve) => this._statusWakers.push(resolve));
  }

  _finish() {
    if (this._done) return;
    this._done = true;
    this._watch?.cancel();
    this._watch = null;
    this._connStatus?.return();
    if (this._onDisconnect) {
      this._bnc.off('disconnect', this._onDisconnect);
      this._bnc.off('reconnect', this._onReconnect);
    }
    this._wake();
    for (const w of this._statusWakers.splice(0)) w(null);
  }
}

/** nats.js's bound push consumer (js.consumers.getBoundPushConsumer): a
 * push consumer known by its deliver subject only. As nats.js's: info()
 * and delete() are refused (no name to ask about), one consume() at a
 * time. */
class BoundPushConsumerImpl {
  constructor(js, opts) {
    this._js = js;
    // The consumer's configuration as far as the program gave it (the
    // deliver subject and group, idle_heartbeat in ns); nats.js keeps it
    // as the info's config, and so keeps stream and name undefined.
    this._config = { ...opts };
    this.stream = undefined;
    this.name = undefined;
    this._consuming = false;
  }

  isPullConsumer() {
    return false;
  }

  isPushConsumer() {
    return true;
  }

  async info() {
    throw new core.errors.InvalidOperationError('bound consumers cannot info');
  }

  async delete() {
    throw new core.errors.InvalidOperationError('bound consumers cannot delete');
  }

  /** Subscribes to the deliver subject. `callback` instead of the
   * iterator; `abort_on_missing_resource` ends the consumption with the
   * server's status error when the consumer is deleted (else that is only
   * a consumer_deleted status). */
  async consume(opts = {}) {
    if (this._consuming) throw new core.errors.InvalidOperationError('consumer already started');
    if (!this._config.deliver_subject) throw new Error('deliver_subject is not set, not a push consumer');
    const inner = new BoundPushMessages(this._js.nc, this._config, opts);
    this._consuming = true;
    const msgs = new ConsumerMessagesImpl(Promise.resolve(inner), { nc: this._js.nc, callback: opts.callback });
    forwardStatus(inner, msgs);
    msgs.closed().then(() => {
      this._consuming = false;
    });
    return msgs;
  }
}

/** nats.js's test for BoundPushConsumerOptions: an object naming a
 * deliver subject, deliver group or idle heartbeat. */
function isBoundPushConsumerOptions(v) {
  return typeof v === 'object' && v !== null && ('deliver_subject' in v || 'deliver_group' in v || 'idle_heartbeat' in v);
}

class ConsumersImpl {
  constructor(js) {
    this._js = js;
  }

  async get(stream, name) {
    if (typeof name === 'string') {
      const info = await jsCall(this._js._js.consumers.info(stream, name));
      return new PullConsumerImpl(this._js, info);
    }
    // As nats.js: the server-side consumer is created now (a missing
    // stream rejects here), and info(true) is what its creation answered.
    const oc = new OrderedConsumerImpl(this._js, stream, name);
    await oc.info();
    return oc;
  }

  /** The push consumer `name` of `stream`; without a name (or with
   * OrderedPushConsumerOptions) an ordered one. */
  async getPushConsumer(stream, name) {
    if (name === undefined || (typeof name === 'object' && name !== null)) {
      return new OrderedPushConsumerImpl(this._js, stream, name);
    }
    if (typeof name !== 'string') throw new Error('unsupported push consumer type');
    const info = await jsCall(this._js._js.consumers.info(stream, name));
    if (!info.config.deliver_subject) {
      throw new Error('not a push consumer');
    }
    return new PushConsumerImpl(this._js, info);
  }

  /** A push consumer created elsewhere, bound by its deliver subject
   * (and deliver group, idle_heartbeat in ns, as in its configuration):
   * no API call is made. */
  async getBoundPushConsumer(opts) {
    if (!isBoundPushConsumerOptions(opts)) throw core.errors.InvalidArgumentError.format('deliver_subject', 'is required');
    return new BoundPushConsumerImpl(this._js, opts);
  }

  getConsumerFromInfo(ci) {
    return new PullConsumerImpl(this._js, ci);
  }
}

/** A stream handle (js.streams.get(name), jsm.streams.get(name)). */
class StreamImpl {
  constructor(js, info) {
    this._js = js;
    this.name = info.config.name;
    this._info = info;
  }

  async info(cached = false, opts) {
    if (cached && this._info) return this._info;
    this._info = await jsCall(this._js._js.streams.info(this.name, opts));
    return this._info;
  }

  async getConsumer(name) {
    return this._js.consumers.get(this.name, name);
  }

  /** The push consumer `name` of this stream, or an ordered one. */
  async getPushConsumer(name) {
    return this._js.consumers.getPushConsumer(this.name, name);
  }

  /** Resets consumer `name` of this stream (ConsumerAPI.reset). */
  async resetConsumer(name, seq) {
    return resetConsumer(this._js, this.name, name, seq);
  }

  async getMessage(query) {
    return getMessage(this._js._js, this.name, query);
  }

  async deleteMessage(seq, erase) {
    return jsCall(this._js._js.streams.deleteMessage(this.name, seq, erase ?? true));
  }

  async alternates() {
    return [];
  }

  async best() {
    return this;
  }
}

class StreamsImpl {
  constructor(js) {
    this._js = js;
  }

  async get(name) {
    return new StreamImpl(this._js, await jsCall(this._js._js.streams.info(name)));
  }
}

async function getMessage(bjs, stream, query) {
  const q = {};
  if (query.seq !== undefined) q.seq = query.seq;
  if (query.last_by_subj !== undefined) q.lastBySubject = query.last_by_subj;
  if (query.next_by_subj !== undefined) q.nextBySubject = query.next_by_subj;
  try {
    return new StoredMsgImpl(await bjs.streams.getMessage(stream, q));
  } catch (e) {
    // nats.js: null when there is no such message.
    if (e.code === 'MESSAGE_NOT_FOUND') return null;
    throw jsError(e);
  }
}

/** nats.js's Lister: `for await` over the items, or next() for a page. */
class ListerImpl {
  constructor(load) {
    this._load = load;
    this._done = false;
  }

  async next() {
    if (this._done) return [];
    this._done = true;
    return jsCall(this._load());
  }

  async *[Symbol.asyncIterator]() {
    yield* await this.next();
  }
}

// ---------------------------------------------------------------------------
// Clients

function jsOptions(opts = {}) {
  // Infos as nats.js hands them out: the server's JSON, `type` included.
  const o = { keepResponseType: true };
  if (opts.apiPrefix !== undefined) o.apiPrefix = opts.apiPrefix;
  if (opts.domain !== undefined) o.domain = opts.domain;
  if (opts.timeout !== undefined) o.timeout = opts.timeout;
  return o;
}

function publishAck(a) {
  const out = { stream: a.stream };
  if (a.domain) out.domain = a.domain;
  out.seq = a.seq;
  out.duplicate = Boolean(a.duplicate);
  if (a.val !== undefined) out.val = a.val;
  return out;
}

/** The milliseconds of a Go-style duration ("1s", "1m30s", "500ms"),
 * NaN when it is not one. */
function durationMillis(text) {
  const units = { ns: 1e-6, us: 1e-3, 'µs': 1e-3, ms: 1, s: 1000, m: 60000, h: 3600000 };
  const d = text.trim();
  const parts = [...d.matchAll(/(\d+(?:\.\d+)?)(ns|us|µs|ms|s|m|h)/gy)];
  if (d === '' || parts.reduce((n, p) => n + p[0].length, 0) !== d.length) return NaN;
  return parts.reduce((ms, p) => ms + Number(p[1]) * units[p[2]], 0);
}

/** The Nats-Schedule value of nats.js's ScheduleSpec ({at}, {every},
 * {cron}, {predefined}), a Date (@at) or a string (as it is). */
function scheduleHeader(spec) {
  if (typeof spec === 'string') return spec;
  const iso = (t) => (t instanceof Date ? t.toISOString() : t);
  if (spec instanceof Date) return `@at ${iso(spec)}`;
  if ('at' in spec) return `@at ${iso(spec.at)}`;
  if ('every' in spec) {
    const ms = durationMillis(spec.every);
    if (Number.isNaN(ms)) throw new Error(`@every: unrecognized duration format: "${spec.every}"`);
    if (ms < 1000) throw new Error('@every interval must be at least 1s');
    return `@every ${spec.every}`;
  }
  if ('cron' in spec) return spec.cron;
  if ('predefined' in spec) return spec.predefined;
  throw new Error('invalid schedule specification');
}

/** The headers nats.js adds for a publish's schedule ({specification,
 * target, source, ttl, timezone, rollup}) or cancelSchedule. */
function scheduleHeaders(subj, opts) {
  if (opts.schedule && opts.cancelSchedule) throw new Error('schedule and cancelSchedule are mutually exclusive');
  const out = [];
  const so = opts.schedule;
  if (so) {
    if (so.specification) out.push([PubHeaders.Schedule, scheduleHeader(so.specification)]);
    if (so.target) out.push([PubHeaders.ScheduleTarget, so.target]);
    if (so.source) out.push([PubHeaders.ScheduleSource, so.source]);
    if (so.ttl) out.push([PubHeaders.ScheduleTTL, so.ttl]);
    if (so.timezone) out.push([PubHeaders.ScheduleTimeZone, so.timezone]);
    if (so.rollup) out.push([PubHeaders.ScheduleRollup, so.rollup]);
  }
  if (opts.cancelSchedule) {
    if (opts.cancelSchedule.scheduleSubject === subj) {
      throw new Error('cancelSchedule.scheduleSubject must not equal the publish subject');
    }
    out.push([PubHeaders.Scheduler, opts.cancelSchedule.scheduleSubject], [PubHeaders.ScheduleNext, 'purge']);
  }
  return out;
}

/** The binding's options of a nats.js publish. Retries are compat's own
 * (withRetries, as nats.js retries timeouts too, with its backoff): the
 * binding retries nothing (its own default would be 2 retries). */
function publishOptions(subj, opts) {
  if (!opts) return { retryAttempts: 0 };
  let headers = hdrsTo(opts.headers);
  const added = scheduleHeaders(subj, opts);
  if (added.length) {
    // Set over the program's own (as nats.js), in a copy of them.
    headers = new Map(headers instanceof Map ? headers : Object.entries(headers ?? {}));
    for (const [k, v] of added) headers.set(k, [v]);
  }
  const o = { headers, msgID: opts.msgID, timeout: opts.timeout, ttl: opts.ttl, retryAttempts: 0 };
  if (opts.expect) {
    o.expect = {
      stream: opts.expect.streamName,
      lastSequence: opts.expect.lastSequence,
      lastSubjectSequence: opts.expect.lastSubjectSequence,
      lastSubjectSequenceSubject: opts.expect.lastSubjectSequenceSubject,
      lastMsgID: opts.expect.lastMsgID,
    };
  }
  return o;
}

/** The headers nats.js's publish options make (over a copy of the
 * options' own headers). */
function publishHeaders(subj, opts = {}) {
  const h = core.headers();
  for (const [k, vs] of opts.headers ?? []) for (const v of vs) h.append(k, v);
  const expect = opts.expect ?? {};
  if (opts.msgID) h.set(PubHeaders.MsgIdHdr, opts.msgID);
  if (expect.lastMsgID) h.set(PubHeaders.ExpectedLastMsgIdHdr, expect.lastMsgID);
  if (expect.streamName) h.set(PubHeaders.ExpectedStreamHdr, expect.streamName);
  if (typeof expect.lastSequence === 'number') h.set(PubHeaders.ExpectedLastSeqHdr, `${expect.lastSequence}`);
  if (typeof expect.lastSubjectSequence === 'number') h.set(PubHeaders.ExpectedLastSubjectSequenceHdr, `${expect.lastSubjectSequence}`);
  if (expect.lastSubjectSequenceSubject) h.set(PubHeaders.ExpectedLastSubjectSequenceSubjectHdr, expect.lastSubjectSequenceSubject);
  if (opts.ttl) h.set(PubHeaders.MessageTTL, `${opts.ttl}`);
  for (const [k, v] of scheduleHeaders(subj, opts)) h.set(k, v);
  return h;
}

/** nats.js's Batch (js.startBatch): the messages of one atomic batch
 * publish, each with the batch's id and its sequence in the batch; the
 * stream stores all of them at the commit, or none. */
class BatchImpl {
  constructor(js) {
    this._js = js;
    this.id = core.nuid.next();
    this.count = 0;
    this._done = false;
  }

  _headers(subj, opts) {
    const h = publishHeaders(subj, opts);
    h.set('Nats-Batch-Id', this.id);
    this.count++;
    h.set('Nats-Batch-Sequence', `${this.count}`);
    return h;
  }

  _request(subj, data, h, timeout, retries) {
    return jsRequest(this._js, subj, data ?? core.Empty, h, timeout, retries);
  }

  /** Adds a message; with {ack: true} resolves once the server took it
   * (a failure ends the batch), else publishes and returns. */
  add(subj, data, opts = { ack: false }) {
    if (this._done) throw new Error('batch publisher is done');
    const h = this._headers(subj, opts);
    if (opts.ack === true) {
      // Only the first message (startBatch) retries, as in nats.js.
      return this._request(subj, data, h, opts.timeout, this.count === 1 ? opts.retries : undefined).then(
        (m) => {
          if (m.data.length > 0) parseJsResponse(m);
        },
        (e) => {
          this._done = true;
          throw e;
        },
      );
    }
    return this._js.nc.publish(subj, data ?? core.Empty, { headers: h });
  }

  /** Publishes the last message and commits: resolves with the stream's
   * ack (batch id and count included). */
  async commit(subj, data, opts = {}) {
    if (this._done) throw new Error('batch publisher is done');
    this._done = true;
    const h = this._headers(subj, opts);
    h.set('Nats-Batch-Commit', '1');
    const ack = (await this._request(subj, data, h, opts.timeout)).json();
    if (ack.count !== this.count) {
      // nats.js's error, also for a server's error response (its cause here).
      throw new Error("batch didn't contain number of published messages", ack.error ? { cause: apiError(ack.error) } : undefined);
    }
    return ack;
  }
}

class JetStreamClientImpl {
  constructor(nc, opts = {}) {
    this.nc = nc;
    this._opts = { ...opts };
    this._js = bindingConnection(nc).jetstream(jsOptions(opts));
    // As nats.js: a domain's API prefix over apiPrefix; 5 s by default.
    this._apiPrefix = opts.domain ? `$JS.${opts.domain}.API` : opts.apiPrefix || '$JS.API';
    this._timeout = opts.timeout || 5000;
    this.consumers = new ConsumersImpl(this);
    this.streams = new StreamsImpl(this);
  }

  /** The JetStream API prefix the options make ("$JS.API" by default). */
  get apiPrefix() {
    return this._apiPrefix;
  }

  /** Starts an atomic batch publish (server 2.12+, the stream needs
   * allow_atomic): publishes its first message and resolves with the
   * Batch once the server took it. */
  async startBatch(subj, data, opts) {
    const batch = new BatchImpl(this);
    await batch.add(subj, data, { ...opts, ack: true });
    return batch;
  }

  getOptions() {
    return { ...this._opts };
  }

  async publish(subj, data = core.Empty, opts) {
    const o = publishOptions(subj, opts);
    const retryable = (e) => e instanceof natsio.NatsError && ['TIMEOUT', 'NO_STREAM_RESPONSE', 'NO_RESPONDERS'].includes(e.code);
    return publishAck(await jsCall(withRetries(opts?.retries, () => this._js.publish(subj, data ?? core.Empty, o), retryable), subj));
  }

  async jetstreamManager(checkAPI) {
    return jetstreamManager(this.nc, { ...this._opts, checkAPI });
  }
}

class StreamAPIImpl {
  constructor(jsm) {
    this._jsm = jsm;
  }

  get _b() {
    return this._jsm._js.streams;
  }

  async add(cfg) {
    return jsCall(this._b.add(cfg));
  }

  async update(name, cfg = {}) {
    const old = await jsCall(this._b.info(name));
    return jsCall(this._b.update(Object.assign(old.config, cfg)));
  }

  async info(name, opts) {
    return jsCall(this._b.info(name, opts));
  }

  async delete(name) {
    return jsCall(this._b.delete(name));
  }

  async purge(name, opts) {
    return jsCall(this._b.purge(name, opts));
  }

  list(subject) {
    return new ListerImpl(() => this._b.list(subject));
  }

  names(subject) {
    return new ListerImpl(() => this._b.names(subject));
  }

  async find(subject) {
    const names = await jsCall(this._b.names(subject));
    if (names.length !== 1) throw new JetStreamError('no stream matches subject');
    return names[0];
  }

  async getMessage(stream, query) {
    return getMessage(this._jsm._js, stream, query);
  }

  async deleteMessage(stream, seq, erase = true) {
    return jsCall(this._b.deleteMessage(stream, seq, erase));
  }

  async get(name) {
    return new StreamImpl(this._jsm._client, await jsCall(this._b.info(name)));
  }
}

class ConsumerAPIImpl {
  constructor(jsm) {
    this._jsm = jsm;
  }

  get _b() {
    return this._jsm._js.consumers;
  }

  async add(stream, cfg) {
    return jsCall(this._b.add(stream, cfg));
  }

  async update(stream, name, cfg) {
    const old = await jsCall(this._b.info(stream, name));
    return jsCall(this._b.update(stream, Object.assign(old.config, cfg)));
  }

  async info(stream, name) {
    return jsCall(this._b.info(stream, name));
  }

  async delete(stream, name) {
    return jsCall(this._b.delete(stream, name));
  }

  list(stream) {
    return new ListerImpl(() => this._b.list(stream));
  }

  async pause(stream, name, until) {
    return jsCall(this._b.pause(stream, name, until));
  }

  async resume(stream, name) {
    return jsCall(this._b.resume(stream, name));
  }

  async unpin(stream, name, group) {
    return jsCall(this._b.unpin(stream, name, group));
  }

  /** Moves the consumer's delivery back (server 2.14+, ADR-60): to `seq`,
   * or without one (or 0) to its ack floor + 1; resolves with the server's
   * response (the consumer's info and the sequence reset to). */
  async reset(stream, name, seq) {
    return resetConsumer(this._jsm._client, stream, name, seq);
  }
}

async function resetConsumer(client, stream, name, seq) {
  validateName('stream', stream);
  validateName('durable', name);
  const { min, ok } = client.nc.features.get(core.Feature.JS_CONSUMER_RESET);
  if (!ok) throw new Error(`consumer reset requires server ${min}`);
  if (typeof seq === 'number' && (!Number.isInteger(seq) || seq < 0)) {
    throw core.errors.InvalidArgumentError.format('seq', 'must be a non-negative integer');
  }
  return apiRequest(client, `${client.apiPrefix}.CONSUMER.RESET.${stream}.${name}`, typeof seq === 'number' ? { seq } : undefined);
}

/** jsm.direct: nats.js's DirectStreamAPI, requests to the stream's Direct
 * Get API (the stream needs allow_direct) over the connection. */
class DirectStreamAPIImpl {
  constructor(client) {
    this._client = client;
  }

  /** One message: by {seq}, {last_by_subj}, {next_by_subj[, seq]} or
   * {start_time}; null when there is none. */
  async getMessage(stream, query) {
    validateName('stream', stream);
    const nc = this._client.nc;
    if ('start_time' in query) {
      const { min, ok } = nc.features.get(core.Feature.JS_BATCH_DIRECT_GET);
      if (!ok) throw new Error(`start_time direct option require server ${min}`);
    }
    const last = query.last_by_subj;
    const pre = this._client.apiPrefix;
    const subj = last ? `${pre}.DIRECT.GET.${stream}.${last}` : `${pre}.DIRECT.GET.${stream}`;
    const m = await nc.request(subj, last ? core.Empty : JSON.stringify(query), { timeout: this._client._timeout });
    if (statusCode(m) !== 0) {
      const status = statusError(m);
      if (status.code === 404 && status.message === 'message not found') return null;
      throw status;
    }
    return new DirectMsgImpl(m);
  }

  /** The messages from {seq} or {start_time} (at most `batch`, default
   * 1024, or `max_bytes`; `next_by_subj` a filter), through an iterator. */
  getBatch(stream, opts) {
    opts.batch = opts.batch || 1024;
    return this._batch(stream, opts);
  }

  /** The last message of each subject in `multi_last` (as of `up_to_seq`
   * or `up_to_time`), through an iterator. */
  getLastMessagesFor(stream, opts) {
    return this._batch(stream, opts);
  }

  /** A batch Direct Get: the messages to an inbox up to the end-of-batch
   * status (servers 2.11+, checked first). */
  async _batch(stream, opts) {
    opts = { ...opts };
    const nc = this._client.nc;
    const { min, ok } = nc.features.get(core.Feature.JS_BATCH_DIRECT_GET);
    if (!ok) throw new Error(`batch direct require server ${min}`);
    validateName('stream', stream);
    const iter = new QueuedIterator();
    iter.stop = (err) => {
      sub.unsubscribe();
      iter._stop(err);
    };
    const inbox = core.createInbox(nc.options?.inboxPrefix);
    const sub = nc.subscribe(inbox, {
      timeout: 5000,
      callback: (err, m) => {
        if (err) return iter.stop(err);
        if (statusCode(m) !== 0) {
          // The end of the batch, or no message matched: the end; another
          // status: its error after the messages (as nats.js).
          const status = statusError(m);
          const end = (status.code === 204 && status.message === 'eob') || (status.code === 404 && status.message === 'no results');
          return iter.stop(end ? undefined : status);
        }
        iter._push(new DirectMsgImpl(m));
      },
    });
    const body = JSON.stringify(opts, (key, value) => ((key === 'up_to_time' || key === 'start_time') && value instanceof Date ? value.toISOString() : value));
    nc.publish(`${this._client.apiPrefix}.DIRECT.GET.${stream}`, body, { reply: inbox });
    return iter;
  }
}

/** A message of a Direct Get (nats.js's DirectMsg): what it is, read
 * from the reply's headers. */
class DirectMsgImpl {
  constructor(m) {
    if (!m.headers) throw new Error('headers expected');
    this.data = m.data;
    this.header = m.headers;
  }

  get subject() {
    return this.header.last(DirectMsgHeaders.Subject);
  }

  get seq() {
    return this._int(DirectMsgHeaders.Sequence);
  }

  get time() {
    return new Date(Date.parse(this.timestamp));
  }

  get timestamp() {
    return this.header.last(DirectMsgHeaders.TimeStamp);
  }

  get stream() {
    return this.header.last(DirectMsgHeaders.Stream);
  }

  get lastSequence() {
    return this._int(DirectMsgHeaders.LastSequence);
  }

  get pending() {
    return this._int(DirectMsgHeaders.NumPending);
  }

  /** As nats.js: NaN when the header is absent (last() gives ''). */
  _int(h) {
    return parseInt(this.header.last(h), 10);
  }

  json(reviver) {
    return JSON.parse(this.string(), reviver);
  }

  string() {
    return decoder.decode(this.data);
  }
}

class JetStreamManagerImpl {
  constructor(nc, opts = {}) {
    this.nc = nc;
    this._opts = { ...opts };
    this._client = new JetStreamClientImpl(nc, opts);
    this._js = this._client._js;
    this.streams = new StreamAPIImpl(this);
    this.consumers = new ConsumerAPIImpl(this);
    this.direct = new DirectStreamAPIImpl(this._client);
  }

  async getAccountInfo() {
    return jsCall(this._js.accountInfo());
  }

  /** The account's JetStream advisories as they come: {kind, data}, kind
   * the last token of the advisory's type ("api_audit", "consumer_action",
   * ...), data the advisory's JSON. A core subscription, as nats.js's: it
   * lasts as long as the connection. */
  advisories() {
    const iter = new QueuedIterator();
    iter.stop = (err) => iter._stop(err);
    this.nc.subscribe('$JS.EVENT.ADVISORY.>', {
      callback: (err, m) => {
        if (err) return iter.stop(err);
        try {
          const data = parseJsResponse(m);
          iter._push({ kind: data.type.split('.').at(-1), data });
        } catch (e) {
          iter.stop(e);
        }
      },
    });
    return iter;
  }

  jetstream() {
    return this._client;
  }

  getOptions() {
    return { ...this._opts };
  }
}

function jetstream(nc, opts = {}) {
  return new JetStreamClientImpl(nc, opts);
}

/** Resolves with a JetStreamManager; as nats.js's, it first asks the
 * server for the account's JetStream info (checkAPI false: not). */
async function jetstreamManager(nc, opts = {}) {
  const jsm = new JetStreamManagerImpl(nc, opts);
  if (opts.checkAPI !== false) await jsm.getAccountInfo();
  return jsm;
}

function isPullConsumer(v) {
  return typeof v?.isPullConsumer === 'function' && v.isPullConsumer();
}

function isPushConsumer(v) {
  return typeof v?.isPushConsumer === 'function' && v.isPushConsumer();
}

module.exports = {
  // @nats-io/jetstream's exports (its error subclasses are not among them:
  // programs tell them by name and code).
  jetstream,
  jetstreamManager,
  AckPolicy,
  AdvisoryKind,
  DeliverPolicy,
  DirectMsgHeaders,
  DiscardPolicy,
  isPullConsumer,
  isPushConsumer,
  JetStreamApiCodes,
  JetStreamApiError,
  JetStreamError,
  JsHeaders,
  PersistMode,
  PriorityPolicy,
  PubHeaders,
  ReplayPolicy,
  RepublishHeaders,
  RetentionPolicy,
  StorageType,
  StoreCompression,
};
// For the other compat modules; not nats.js API.
Object.defineProperty(module.exports, INTERNAL, { value: { jsError, jsCall, JetStreamClientImpl, JsMsgImpl, StoredMsgImpl, ListerImpl } });
