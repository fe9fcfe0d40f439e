// Type declarations of the natsio Node binding (require and import alike).
// They use Node's own types (EventEmitter, streams, Buffer): @types/node,
// a dependency of this package.
/// <reference types="node" />
import { EventEmitter } from 'node:events';
import { Readable, Writable } from 'node:stream';

/** A payload to send: a string (sent as UTF-8), bytes (Buffer, Uint8Array, ArrayBuffer or another ArrayBufferView), or null/undefined for none. Anything else throws TypeError. */
export type Payload = string | Uint8Array | ArrayBuffer | ArrayBufferView | null | undefined;

/** Headers to send: a Map, a plain object, or [name, value] pairs; values may repeat. */
export type HeadersInit =
  | Map<string, string | string[]>
  | Record<string, string | string[]>
  | Array<[string, string | string[]]>;

/**
 * What a subscription does when a pending limit is exceeded: 'dropNew' (0,
 * the default) discards the arriving message; 'dropOld' (1) evicts the
 * oldest queued ones; 'block' (2) pauses reading the whole connection until
 * the subscription catches up (nothing is lost); 'error' (3) ends the
 * subscription with SlowConsumerError, discarding its backlog. An unknown
 * name throws InvalidArgumentError.
 */
export type PendingPolicy = 'dropNew' | 'dropOld' | 'block' | 'error' | 0 | 1 | 2 | 3;

/** Log levels of ConnectOptions.logLevel, least to most verbose. */
export type LogLevel = 'off' | 'error' | 'warn' | 'info' | 'debug' | 'trace';

/** Options of connect(); durations in ms. An invalid value rejects connect() (mostly with ConfigError). */
export interface ConnectOptions {
  /** One URL, a comma-separated list, or an array; tried in random order unless noRandomize. Default DEFAULT_URL (nats://127.0.0.1:4222), also for '' and []. */
  servers?: string | string[];
  /** Connection name shown by the server's monitoring. */
  name?: string;
  /** Timeout of each connection attempt, ms (default 5000). */
  timeout?: number;
  /** Do not receive this connection's own publishes. */
  noEcho?: boolean;
  /** The server acknowledges every operation with +OK (default false); the client reads past them. */
  verbose?: boolean;
  /** The server checks this connection's protocol strictly (default false). */
  pedantic?: boolean;
  /** A subscription the server refuses for lack of permission ends with PermissionsError (besides the 'error' event; default false). */
  permissionErrOnSubscribe?: boolean;
  /** Prefix of reply inboxes (default "_INBOX"). */
  inboxPrefix?: string;
  /** Default pending limits of new subscriptions (0 or less: unlimited). */
  pendingLimits?: { msgs?: number; bytes?: number };
  /** Default pending message limit of new subscriptions (default 65536; 0 or less: unlimited). pendingLimits, when given, replaces it. */
  pendingMsgsLimit?: number;
  /** Default pending byte limit of new subscriptions (default 64 MiB; 0 or less: unlimited). pendingLimits, when given, replaces it. */
  pendingBytesLimit?: number;
  /** Default bound of drain() and of Subscription.drain(), ms (default 30000). */
  drainTimeout?: number;
  /** The bound of flush() without a timeout (it rejects with TimeoutError past it), and, with waitForWriteRoom, how long publish() blocks the JS thread waiting for room in a full write buffer before TimeoutError, ms (default 10000). */
  flushTimeout?: number;
  /** Default request timeout, ms (default 5000). */
  requestTimeout?: number;
  /** How often the client PINGs the server, ms (default 120000). */
  pingInterval?: number;
  /** PINGs left unanswered before the connection is stale and dropped (default 2). */
  maxPingsOut?: number;
  /** Write buffer bound in bytes (default 2 MiB): past it publish() pauses (writeRoomPause) or, with waitForWriteRoom, blocks. */
  maxPendingSize?: number;
  /**
   * How long publish() (and respond, acks) pauses the JS thread for room
   * when the write buffer is over maxPendingSize, ms (default 500; 0: no
   * pause). After the pause the message is queued over the bound: a
   * publish never throws or drops for lack of room. While the server
   * keeps reading, a loop that publishes faster than the connection
   * writes is paced by it and the buffer stays near maxPendingSize; once
   * a pause ran out with nothing written meanwhile (a server that stopped
   * reading), publishes queue at once until the connection writes again,
   * so a stalled server costs one pause, and the buffer grows as without
   * a pause. Ignored with waitForWriteRoom.
   */
  writeRoomPause?: number;
  /**
   * Whether publish() (and respond, acks) waits for room when the write
   * buffer is over maxPendingSize: it then blocks the JS thread up to
   * flushTimeout, then throws TimeoutError. Default false: publish()
   * pauses at most writeRoomPause, then queues past maxPendingSize (as
   * nats.js's socket buffer grows), so that the JS thread keeps handling
   * what its subscriptions receive.
   */
  waitForWriteRoom?: boolean;
  /** Longest control line accepted from the server, bytes (default 4096, at least 64). */
  maxControlLine?: number;
  /** User name, with pass (credentials in the URL take precedence); a function (returning a string or a promise of one) is called on every connect and reconnect. */
  user?: string | (() => string | Promise<string>);
  /** Password of user; a function as for user. */
  pass?: string | (() => string | Promise<string>);
  /** Authentication token; a function (returning a string or a promise of one) is called on every connect and reconnect. */
  token?: string | (() => string | Promise<string>);

  /** Reconnect after losing the connection (default true). */
  reconnect?: boolean;
  /** Consecutive failed attempts per server before it leaves the pool (default 60; -1: unlimited). */
  maxReconnectAttempts?: number;
  /** Wait between attempts to one server, ms, doubling up to reconnectTimeWaitMax (defaults 2000, 8000). */
  reconnectTimeWait?: number;
  /** Upper bound of the doubling reconnect wait, ms (default 8000, or reconnectTimeWait if larger). */
  reconnectTimeWaitMax?: number;
  /** Random extra wait per attempt, ms, for plain and TLS connections (defaults 100, 1000). */
  reconnectJitter?: number;
  /** Random extra wait per attempt on TLS connections, ms (default 1000). */
  reconnectJitterTls?: number;
  /** Bytes of publishes kept while disconnected (default 8 MiB; -1: none, publish throws ReconnectBufExceededError). */
  reconnectBufSize?: number;
  /** Try servers in the given order instead of randomly. */
  noRandomize?: boolean;
  /** Ignore servers announced by the cluster. */
  ignoreDiscoveredServers?: boolean;
  /** Resolve with a reconnecting connection when no server is reachable yet. */
  waitOnFirstConnect?: boolean;
  /** Same as waitOnFirstConnect. */
  retryOnFailedConnect?: boolean;
  /** Keep retrying a server that rejects the credentials twice in a row. */
  ignoreAuthErrorAbort?: boolean;
  /** Paces reconnects as nats.go's CustomReconnectDelay: the servers are
   * tried in turn and, before the last server of each turn (with one
   * server, before every attempt), the client waits the milliseconds this
   * returns for that turn's number (1, 2, ... afresh on every reconnect),
   * in place of reconnectTimeWait and the jitter. Synchronous; a negative
   * number is 0. A throw or an answer that is not a number fails that
   * attempt (reported as a callback error, event 'reconnectDelayHandler').
   * It is asked from a library thread that waits for the event loop at
   * most the connect timeout: past that, the reconnectTimeWait plus
   * jitter is waited instead. */
  reconnectDelayHandler?: (attempts: number) => number;

  /** What the connection logs: 'error' (asynchronous errors), 'warn' (slow
   * consumers, lost connections, failed attempts), 'info' (connects,
   * reconnects, closes), 'debug' (each attempt), 'trace' (every protocol
   * frame, payloads cut short, CONNECT's secrets redacted). Default 'off';
   * the environment variable NATSIO_LOG=<level> turns logging on without
   * code. */
  logLevel?: LogLevel;
  /** Same as logLevel: 'trace' (nats.js's protocol tracing switch). */
  debug?: boolean;
  /** Receives the log lines, in order, on the JS thread. Default: standard
   * error, as "natsio LEVEL: message". */
  logger?: (level: LogLevel, message: string) => void;

  /** NKey seed ("SU..."). One auth kind per connection. */
  nkeySeed?: string;
  /** File holding an NKey seed, read on every connect. */
  nkeyFile?: string;
  /** .creds file (user JWT + NKey seed), read on every connect. */
  credsFile?: string;
  /**
   * The user JWT, or a function giving it (or a promise of it), asked on
   * every connect and reconnect; with signatureCB (nats.go's UserJWT
   * callbacks, nats.js 1.x's userJWT). Keys can stay elsewhere (an HSM, a
   * vault). One auth kind per connection (ConfigError with another).
   */
  userJWT?: string | (() => string | Promise<string>);
  /**
   * Signs the server's nonce with the user's Ed25519 (NKey) key: returns
   * the 64-byte signature (or a promise of it). Called on the JS thread
   * while a library thread that connects waits for the answer, at most the
   * connect timeout: a throw, a rejection, a wrong length or no answer in
   * time fails that attempt (what the callback threw goes to the 'error'
   * event as a CallbackError, or the logger). The event loop is never
   * blocked.
   */
  signatureCB?: (nonce: Uint8Array) => Uint8Array | Promise<Uint8Array>;
  /**
   * nats.js's custom authenticator: called on every connect and reconnect
   * with that server's nonce (undefined when it sent none), it gives the
   * CONNECT's credentials (any of Auth's fields: user/pass, auth_token,
   * nkey with sig, jwt with sig), or a promise of them. A list's results
   * are merged, later ones winning, as nats.js merges them. Runs on the JS
   * thread while a library thread that connects waits for the answer, at
   * most the connect timeout: a throw, a rejection, a field that is not a
   * string or no answer in time fails that attempt (ConfigError; what was
   * thrown goes to the 'error' event as a CallbackError, or the logger).
   * The fields are sent as JSON: any text is safe in them. One auth kind
   * per connection (ConfigError with another).
   */
  authenticator?: Authenticator | Authenticator[];

  /** Require TLS (certificates are always verified); `true`: the system's trust roots. */
  tls?: boolean | TlsOptions;
}

/** The CONNECT credentials an Authenticator gives (nats.js's Auth): an
 * absent field is not sent. `sig` is the URL-safe base64 (no padding) of
 * the Ed25519 signature of the nonce. */
export interface Auth {
  /** The user of user/password authentication. */
  user?: string;
  /** The password. */
  pass?: string;
  /** A token. */
  auth_token?: string;
  /** A user JWT (decentralized authentication; with sig). */
  jwt?: string;
  /** An NKey public key ("U..."; with sig). */
  nkey?: string;
  /** The nonce's Ed25519 signature, URL-safe base64 without padding (standard base64 is accepted too). */
  sig?: string;
}

/** nats.js's Authenticator: the credentials for one connection attempt. */
export type Authenticator = (nonce?: string) => Auth | undefined | Promise<Auth | undefined>;

/** ConnectOptions.tls: PEM files and TLS behaviour. */
export interface TlsOptions {
  /** PEM CA bundle to verify servers against (default: the system's roots). */
  caFile?: string;
  /** Client certificate and key (PEM, both or neither) for mutual TLS. */
  certFile?: string;
  /** The private key of certFile (PEM). */
  keyFile?: string;
  /** caFile's PEM text itself, in memory (nats.js's `ca`); a file given
   * beside in-memory items is read once, at connect. */
  ca?: string | Uint8Array;
  /** certFile's PEM text itself, in memory. */
  cert?: string | Uint8Array;
  /** keyFile's PEM text itself, in memory. */
  key?: string | Uint8Array;
  /** Verify the server certificate against this name instead of the URL's host. */
  hostname?: string;
  /** Start TLS before the server's INFO (servers with handshake_first). */
  handshakeFirst?: boolean;
}

/** Options of Connection.publish. */
export interface PublishOptions {
  /** Reply subject sent with the message (e.g. from newInbox()). */
  reply?: string;
  /** Headers sent with the message. */
  headers?: HeadersInit;
}

/** Options of Connection.subscribe. */
export interface SubscribeOptions {
  /** Queue group to join. */
  queue?: string;
  /** Callback mode; without it the subscription is an async iterator. */
  callback?: (err: NatsError | null, msg: Msg | undefined) => void;
  /** Pending message limit (absent: the connection's pendingMsgsLimit; 0 or negative: unlimited, as in the reference client). */
  pendingMsgsLimit?: number;
  /** Pending byte limit (absent: the connection's pendingBytesLimit; 0 or negative: unlimited). */
  pendingBytesLimit?: number;
  /** What happens when a pending limit is exceeded (default 'dropNew'). */
  policy?: PendingPolicy;
}

/** Options of Connection.request. */
export interface RequestOptions {
  /** ms; 0 or absent: the connection's request timeout. */
  timeout?: number;
  /** Headers sent with the request. */
  headers?: HeadersInit;
}

/** Options of Connection.requestMany; `timeout` is the overall deadline. The replies end at the first limit reached, or at once when nobody is subscribed. */
export interface RequestManyOptions extends RequestOptions {
  /** Stop after this many replies. */
  maxMessages?: number;
  /** Stop when no reply arrives for this long (ms) after the first. */
  stall?: number;
}

/** The state of a connection (Connection.status). */
export type ConnectionStatus = 'DISCONNECTED' | 'CONNECTING' | 'CONNECTED' | 'RECONNECTING' | 'DRAINING' | 'CLOSED';

/** Traffic counters of a connection (Connection.stats). */
export interface ConnectionStats {
  /** Messages received (delivered to subscriptions or replies). */
  inMsgs: number;
  /** Messages published. */
  outMsgs: number;
  /** Payload bytes received. */
  inBytes: number;
  /** Payload bytes published. */
  outBytes: number;
  /** Successful reconnects since connect. */
  reconnects: number;
  /** Asynchronous errors reported (slow consumers, server -ERR, ...). */
  errors: number;
  /** PINGs the server sent (each answered with a PONG). */
  serverPings: number;
}

/** Counters of the library's iterator (subscription, consume, watch). */
export interface SubscriptionStats {
  /** Items handed over by the library. */
  delivered: number;
  /** Items dropped by the pending-limit policy. */
  dropped: number;
  /** Items buffered in the library, not yet handed over. */
  pendingMsgs: number;
  /** Bytes buffered in the library, not yet handed over. */
  pendingBytes: number;
  /** Times a pulling iterator (consume, watch) found its buffer full and paused pulling. */
  stalls: number;
}

/** Message headers: name -> values, names case-sensitive, wire order kept. */
export class MsgHeaders extends Map<string, string[]> {
  /** The first value of `name`, or undefined. */
  first(name: string): string | undefined;
  /** Appends `value` to the values of `name`. */
  append(name: string, value: string): this;
}

/** A message received by a subscription, or a request's reply. */
export class Msg {
  /** The subject it was published to. */
  readonly subject: string;
  /** Its reply subject, if any. */
  readonly reply: string | undefined;
  /** The payload (at runtime a Buffer; a subscription's messages are slices of one buffer per delivery batch). */
  readonly data: Uint8Array;
  /** Its headers, parsed on first access; undefined without any. */
  readonly headers: MsgHeaders | undefined;
  /** Inline status of the header block (e.g. 503), or 0. */
  readonly status: number;
  /** The text beside the inline status (e.g. "Request Timeout" for 408), "" when none. */
  readonly statusDescription: string;
  /** True when the received header block had corrupt lines (skipped: headers holds the good ones); the message is delivered anyway. */
  readonly headersMalformed: boolean;
  /** The id of the subscription it was delivered on (Subscription.sid). */
  readonly sid: number;
  /** The payload decoded as UTF-8. */
  string(): string;
  /** The payload parsed as JSON (throws SyntaxError if it is not). */
  json<T = unknown>(): T;
  /** Publishes to the reply subject; throws NoReplySubjectError without one. */
  respond(data?: Payload, opts?: { headers?: HeadersInit }): void;
}

/** The messages of a subscription or of requestMany, as an async iterator (`for await`). */
declare class MessageStream implements AsyncIterableIterator<Msg> {
  /** Resolves once closed: undefined, or the error that ended it. */
  readonly closed: Promise<NatsError | undefined>;
  /**
   * The next message; done once the stream has ended (unsubscribed,
   * drained, its unsubscribeAfter count reached, requestMany finished);
   * rejects once with the error that ended it (e.g. SlowConsumerError
   * under the 'error' policy, ConnectionClosedError once the connection
   * closed: as in C, C++ and Go, where nats.js ends quietly). Rejects with
   * IllegalStateError on a callback subscription.
   */
  next(): Promise<IteratorResult<Msg, undefined>>;
  /** Stops at once (a subscription unsubscribes); queued messages are dropped. `break` in `for await` calls it. */
  return(): Promise<IteratorResult<Msg, undefined>>;
  /** The stream is its own iterator. */
  [Symbol.asyncIterator](): this;
}

/**
 * A subscription (nc.subscribe): an async iterator of Msg, or, with a
 * callback, calls to it. It ends when unsubscribed, drained, after its
 * unsubscribeAfter count, or when the connection closes: then a loop
 * throws ConnectionClosedError (as C, C++ and Go fail with
 * CONNECTION_CLOSED; nats.js ends it quietly), a callback is not called
 * again.
 */
export class Subscription extends MessageStream {
  /** The subject subscribed to (wildcards included). */
  readonly subject: string;
  /** The queue group, if any. */
  readonly queue: string | undefined;
  /** The server-side subscription id. */
  readonly sid: number;
  /** True once the subscription has ended. */
  readonly isClosed: boolean;
  /** Stops at once; no callback runs after it returns. Idempotent. */
  unsubscribe(): void;
  /** Ends after `max` messages in total, counting those already received; throws InvalidArgumentError unless `max` is positive, SubscriptionClosedError once ended. */
  unsubscribeAfter(max: number): void;
  /**
   * The next message (as the iterator gives it); with `timeout` (ms) it
   * rejects with TimeoutError when none arrived within it, and the
   * subscription goes on (the reference's next_msg(timeout)). A message
   * already queued is given at once. TypeError for a negative timeout.
   */
  next(timeout?: number): Promise<IteratorResult<Msg, undefined>>;
  /** Stops new deliveries, lets the backlog be delivered, then ends; resolves once it has. Bounded by `timeout` ms (default ConnectOptions.drainTimeout): past it this rejects with TimeoutError and the drain goes on (an iterator must go on being read). */
  drain(timeout?: number): Promise<void>;
  /** Counters of the subscription's buffer. */
  stats(): SubscriptionStats;
}

/** The replies of nc.requestMany(), as they arrive (see RequestManyOptions for when they end). */
export type Replies = MessageStream;

/** An asynchronous error of a Connection's 'error' event. */
export interface AsyncError extends NatsError {
  /** The id of the subscription it concerns, or 0. */
  sid: number;
  /** The subject of the subscription it concerns, if any. */
  subject: string | undefined;
}

/** One server of Connection.serverPool(). */
export interface PoolServer {
  /** The URL as the pool holds it: configured as given; a discovered one as nats://host:port (tls://, ws://, wss://). */
  url: string;
  /** Attempts to connect to it that failed since it was last connected to (nats.go's Server.Reconnects). */
  reconnects: number;
  /** Whether the connection has been connected to it. */
  didConnect: boolean;
  /** Whether it was learned from the cluster (a server's INFO) rather than configured (nats.js's gossiped). */
  discovered: boolean;
}

/**
 * A connection (from connect()). Events, in order: 'connect', 'disconnect',
 * 'reconnectFailed', 'reconnect', 'ldm', 'servers', 'error', and 'close' last. An open
 * connection keeps the process running; close() or drain() ends it.
 */
export class Connection extends EventEmitter {
  /** The connection's state now. */
  readonly status: ConnectionStatus;
  /** True once closed for good. */
  readonly isClosed: boolean;
  /** The largest payload (headers included) the server accepts, bytes. */
  readonly maxPayload: number;
  /** The server's latest INFO. */
  readonly info: Record<string, unknown> & { server_id: string; max_payload: number };
  /** URL of the server connected to (the last one while reconnecting); throws ConnectionClosedError once closed. */
  readonly connectedUrl: string;
  /** A new unique subject under the inbox prefix, to receive replies on. */
  newInbox(): string;
  /** The prefix of reply inboxes (inboxPrefix, default "_INBOX"); readable after close too. */
  readonly inboxPrefix: string;
  /**
   * Publishes `data` to `subject`; returns once it is buffered, without
   * waiting for the server. Throws BadSubjectError, MaxPayloadExceededError,
   * BadHeadersError, ConnectionClosedError, ReconnectBufExceededError
   * (while disconnected), TimeoutError (only with waitForWriteRoom: write
   * buffer full for flushTimeout),
   * TypeError for data or headers of another type.
   */
  publish(subject: string, data?: Payload, opts?: PublishOptions): void;
  /**
   * Subscribes to `subject` (wildcards allowed), at once: no message
   * published after this returns is missed (flush() to be sure the server
   * has it). Throws BadSubjectError, BadQueueNameError,
   * InvalidArgumentError (policy), ConnectionClosedError.
   */
  subscribe(subject: string, opts?: SubscribeOptions): Subscription;
  /** Sends a request and resolves with the first reply. Rejects with NoRespondersError (at once when nobody is subscribed) or TimeoutError. */
  request(subject: string, data?: Payload, opts?: RequestOptions): Promise<Msg>;
  /** Sends one request and iterates over its replies; throws as publish does. */
  requestMany(subject: string, data?: Payload, opts?: RequestManyOptions): Replies;
  /** Resolves once the server has processed everything sent before (a PING/PONG round trip). Rejects with TimeoutError after `timeout` ms (default: ConnectOptions.flushTimeout, 10000), with ConnectionClosedError if the connection closes first. */
  flush(timeout?: number): Promise<void>;
  /**
   * Drains every subscription (their backlogs are delivered), flushes, then
   * closes; resolves once closed. Bounded by `timeout` ms (default
   * ConnectOptions.drainTimeout): past it the connection closes anyway and
   * this rejects with DrainTimeoutError. IllegalStateError if already
   * draining.
   */
  drain(timeout?: number): Promise<void>;
  /**
   * Closes: buffered publishes are sent (best effort), pending requests
   * and flushes reject with ConnectionClosedError, iterators end, 'close'
   * is emitted. Resolves once closed; a second call returns the same promise.
   */
  close(): Promise<void>;
  /** Traffic counters. */
  stats(): ConnectionStats;
  /** The server pool: configured and discovered URLs. */
  readonly servers: string[];
  /** The server pool in the order its servers are tried, with each one's reconnect bookkeeping: a snapshot (nats.go's ServerPool). Readable after close too. */
  serverPool(): PoolServer[];
  /**
   * Replaces the server pool with `urls`, in that order (not shuffled;
   * nats.go's SetServerPool). The connection stays up, even when its
   * server is not among them: the next reconnect picks from the new pool
   * (forceReconnect() moves now). A server already in the pool (same host
   * and port) keeps its bookkeeping. Throws ConfigError (an empty list or
   * an invalid URL; the pool is unchanged), TypeError (not an array of
   * strings), ConnectionClosedError.
   */
  setServerPool(urls: string[]): void;
  /** Drops the connection and reconnects; subscriptions are restored. Returns at once. */
  forceReconnect(): void;
  /** One PING/PONG round trip, in microseconds (a flush timed by the library thread that completes it). */
  rtt(): Promise<number>;
  /** A JetStream context over this connection (sends nothing; throws ConfigError for a bad domain or prefix). */
  jetstream(opts?: JetStreamOptions): JetStreamClient;

  /** Asynchronous errors (slow consumer, server -ERR, lost connection, drain timeout), and what user callbacks threw (CallbackError). Emitted only when someone listens: never thrown. */
  on(event: 'error', listener: (err: AsyncError | CallbackError) => void): this;
  /** Lifecycle events, in order; 'close' is always last. */
  on(event: 'connect' | 'reconnect' | 'ldm', listener: (url: string) => void): this;
  on(event: 'disconnect', listener: (err: NatsError | null) => void): this;
  /** One per failed reconnect attempt (nats.go's ReconnectErrHandler), after 'disconnect' and before 'reconnect' or 'close': the attempt's error, its message "reconnect to <url> failed: <why>". */
  on(event: 'reconnectFailed', listener: (err: NatsError) => void): this;
  on(event: 'servers', listener: (discovered: string[]) => void): this;
  on(event: 'close', listener: () => void): this;
  on(event: string | symbol, listener: (...args: any[]) => void): this;
}

/**
 * Connects; resolves once the server accepted the connection. `opts` may be
 * a URL string (servers). Rejects with NoServersAvailableError,
 * TimeoutError, AuthorizationViolationError, ConfigError (invalid
 * options), TypeError (logLevel, logger, userJWT, signatureCB).
 */
export function connect(opts?: ConnectOptions | string): Promise<Connection>;

// ---------------------------------------------------------------------------
// JetStream and Key-Value. Every method that talks to the server returns a
// promise settled from the library's completion token (nothing waits on
// the JS thread or the libuv threadpool); errors (argument TypeErrors
// included) reject the promise.

/** Options of nc.jetstream(). */
export interface JetStreamOptions {
  /** JetStream domain (API prefix $JS.<domain>.API). */
  domain?: string;
  /** Custom API prefix, overriding domain (default $JS.API). */
  apiPrefix?: string;
  /** API request and publish timeout, ms (default 5000). */
  timeout?: number;
  /** Asynchronous publishes awaiting acks before publishAsync stalls (default 4000). */
  publishAsyncMaxPending?: number;
  /** How long a stalled publishAsync waits for room before TooManyStalledMsgsError, ms (default 200). */
  publishAsyncStallWait?: number;
  /** How long a publishAsync waits for its ack before AsyncPublishTimeoutError, ms (default: timeout). */
  publishAsyncTimeout?: number;
  /** Stream, consumer and account infos keep the server's `type` field, as nats.js hands them out (default false). */
  keepResponseType?: boolean;
}

/** Options of js.publish and js.publishAsync. */
export interface JetStreamPublishOptions {
  /** Nats-Msg-Id: a second message with this id within the duplicate window is dropped (ack.duplicate). */
  msgID?: string;
  /** Conditions the stream checks before storing; a failed one rejects (WrongLastSequenceError for the sequences, JetStreamApiError for stream and lastMsgID). */
  expect?: {
    /** Fail unless the message lands in this stream. */
    stream?: string;
    /** Fail (WrongLastSequenceError) unless the stream's last sequence is this (0: empty stream). */
    lastSequence?: number | bigint;
    /** Likewise for the last sequence of the subject (or of lastSubjectSequenceSubject). */
    lastSubjectSequence?: number | bigint;
    lastSubjectSequenceSubject?: string;
    /** Fail unless the stream's last message has this id. */
    lastMsgID?: string;
  };
  /** Per-message TTL (the stream needs allow_msg_ttl): whole seconds, 'never', or '90s', '5m', '1h30m' (digits alone: seconds). */
  ttl?: number | string;
  /** Headers sent with the message. */
  headers?: HeadersInit;
  /** How long to wait for the ack, ms (default: the context's). */
  timeout?: number;
  /** How many times "no responders" (no stream listens on the subject yet, e.g. while its leader moves) is retried before NoStreamResponseError: a whole number, 0 for no retry (default 2, as nats.go's DefaultPubRetryAttempts). Anything else (negative, fractional, 2^31 or more, not a number) rejects with TypeError. For publishAsync the retries end at the ack's deadline at the latest. */
  retryAttempts?: number;
  /** The wait before each retry, whole ms, at least 1 (default 250, as nats.go's DefaultPubRetryWait); anything else rejects with TypeError. */
  retryWait?: number;
}

/** The stream's acknowledgement of a JetStream publish. */
export interface PubAck {
  /** The stream that stored the message. */
  stream: string;
  /** Its sequence in the stream (for a duplicate, the original's). */
  seq: number;
  /** True if the stream had stored a message with this msgID already: nothing new was stored. */
  duplicate: boolean;
  /** The stream's JetStream domain, when it has one. */
  domain?: string;
  /** On a stream with allow_msg_counter (server 2.12+): the counter's value after this message, as decimal text (it may exceed 2^53); absent for other streams. */
  val?: string;
  /** For the commit of an atomic batch publish (server 2.12+): the batch's id; absent for other publishes. */
  batch?: string;
  /** For the commit of an atomic batch publish: how many messages the batch stored; absent (like batch) for other publishes. */
  count?: number;
}

/** StreamConfig / KeyValueConfig / infos: the server's JSON, field names as the server spells them. */
export type JsonObject = Record<string, any>;

/** A message read back from a stream (js.streams.getMessage, getLastMessagesFor). */
export class StoredMsg {
  /** The subject it was stored under. */
  readonly subject: string;
  /** Its sequence in the stream. */
  readonly seq: number;
  /** When the stream stored it. */
  readonly time: Date;
  /** The payload. */
  readonly data: Buffer;
  /** Its headers, parsed on first access; undefined without any. */
  readonly headers: MsgHeaders | undefined;
  /** The payload decoded as UTF-8. */
  string(): string;
  /** The payload parsed as JSON (throws SyntaxError if it is not). */
  json<T = unknown>(): T;
}

/** Options of js.streams.info(). */
export interface StreamInfoOptions {
  /** Report the stored subjects matching this filter (wildcards allowed, e.g. "orders.>") with their message counts, in state.subjects. */
  subjects_filter?: string;
  /** Alias of subjects_filter. */
  subjectsFilter?: string;
}

/**
 * Which message js.streams.getMessage() reads (nats.js field names are
 * accepted too): {seq}, {lastBySubject} / {last_by_subj}, or
 * {seq, nextBySubject} / {seq, next_by_subj}.
 */
export type StreamMsgQuery =
  | { seq: number | bigint }
  | { lastBySubject: string }
  | { last_by_subj: string }
  | { seq?: number | bigint; nextBySubject: string }
  | { seq?: number | bigint; next_by_subj: string };

/**
 * Options of js.streams.getLastMessagesFor(), with the names of nats.js's
 * DirectLastFor (camelCase aliases accepted). up_to_seq and up_to_time
 * exclude each other (InvalidArgumentError).
 */
export interface LastMessagesForOptions {
  /** At most this many messages (default: the server's limit). */
  batch?: number;
  /** The last messages as of this stream sequence instead of now. */
  up_to_seq?: number | bigint;
  /** Alias of up_to_seq. */
  upToSeq?: number | bigint;
  /** The last messages as of this time instead of now: a Date, an RFC 3339 string (its nanoseconds kept), ms since the epoch (number) or ns since the epoch (bigint). */
  up_to_time?: Date | string | number | bigint;
  /** Alias of up_to_time. */
  upToTime?: Date | string | number | bigint;
}

/** nats.js's DirectLastFor: the subject filters in `multi_last`, with the options. */
export interface LastMessagesForRequest extends LastMessagesForOptions {
  /** The subject filters (wildcards allowed). */
  multi_last: string[];
}

/**
 * The messages of one batch Direct Get (js.streams.getLastMessagesFor), as
 * an async iterator of StoredMsg in stream order. The library gathers them
 * from the moment the call returns, whether or not the loop reads. The
 * iteration ends after the last message (at once when none matched), and
 * throws the error that ended the batch: NoRespondersError when no stream
 * answered (no such stream, or it does not allow direct get),
 * JetStreamApiError for another server status, TimeoutError when the batch
 * stalled for the context's timeout. A closed connection ends it with
 * ConnectionClosedError (unless it had finished).
 */
export class StoredMsgs implements AsyncIterableIterator<StoredMsg> {
  /** The stream read. */
  readonly stream: string;
  /** Resolves once the batch read is over (every message received, stop(), an error, or the connection closed): undefined, or the error that ended it. Never rejects. */
  readonly closed: Promise<NatsError | undefined>;
  /** True once the batch read has ended. */
  readonly isClosed: boolean;
  /** Ends the iteration at once (a pending next() resolves done; messages received but not yielded are dropped). Idempotent. */
  stop(): void;
  /** Counters of the library's buffer. */
  stats(): SubscriptionStats;
  /** The next message; done after the last one or stop(); rejects once with the error that ended the batch. */
  next(): Promise<IteratorResult<StoredMsg, undefined>>;
  /** Breaking out of `for await` stops. */
  return(): Promise<IteratorResult<StoredMsg, undefined>>;
  /** The batch read is its own iterator. */
  [Symbol.asyncIterator](): this;
}

/**
 * A listing of a bucket's keys (kv.listKeys): an async iterator of strings,
 * each key holding a value once (deleted and purged keys left out), read
 * by the library as the iteration goes (the whole set is never held); it
 * ends after the last key stored when the listing started, at once for an
 * empty bucket. Throws BucketNotFoundError for a missing bucket.
 */
export class KvKeyLister implements AsyncIterableIterator<string> {
  /** The bucket listed. */
  readonly bucket: string;
  /** Resolves once the listing is over (every key received, stop(), an error, or the connection closed): undefined, or the error that ended it. Never rejects. */
  readonly closed: Promise<NatsError | undefined>;
  /** True once the listing has ended. */
  readonly isClosed: boolean;
  /** Ends the iteration at once (keys received but not yielded are dropped). Idempotent. */
  stop(): void;
  /** Counters of the library's buffer. */
  stats(): SubscriptionStats;
  /** The next key; done after the last one or stop(); rejects once with the error that ended the listing. */
  next(): Promise<IteratorResult<string, undefined>>;
  /** Breaking out of `for await` stops. */
  return(): Promise<IteratorResult<string, undefined>>;
  /** The listing is its own iterator. */
  [Symbol.asyncIterator](): this;
}

/** js.streams: stream management (StreamNotFoundError for a stream that does not exist). */
export interface Streams {
  /** Creates a stream (durations: ns or strings like "1h"); resolves with its StreamInfo. */
  add(cfg: JsonObject): Promise<JsonObject>;
  /** Changes a stream's configuration; resolves with its StreamInfo. */
  update(cfg: JsonObject): Promise<JsonObject>;
  /** Creates the stream, or changes it if it exists; resolves with its StreamInfo. */
  createOrUpdate(cfg: JsonObject): Promise<JsonObject>;
  /** The stream's StreamInfo (config, state, created, cluster). With `subjects_filter`, state.subjects maps each stored subject matching it to its message count. */
  info(name: string, opts?: StreamInfoOptions): Promise<JsonObject>;
  /** Deletes the stream and all its messages; resolves true. */
  delete(name: string): Promise<true>;
  /** Removes every message, or per `opts`: those on subject `filter`, those below sequence `seq`, or all but the newest `keep` (seq and keep exclude each other). Resolves with how many were removed. */
  purge(name: string, opts?: { filter?: string; seq?: number; keep?: number }): Promise<{ success: true; purged: number }>;
  /** Names of all streams, or of those holding `subject`. */
  names(subject?: string): Promise<string[]>;
  /** The StreamInfo of every stream, or of those holding `subject` (wildcards allowed), as nats.js's jsm.streams.list(subject) lists them (here as one array). */
  list(subject?: string): Promise<JsonObject[]>;
  /** One message: by sequence (a number or {seq}), the last one on a subject ({lastBySubject}), or the first one at or after `seq` on a subject ({seq, nextBySubject}; wildcards allowed). MessageNotFoundError if there is none. */
  getMessage(stream: string, query: number | StreamMsgQuery): Promise<StoredMsg>;
  /**
   * The last message of every subject of `stream` matching one of
   * `subjects` (a subject or several; wildcards allowed), in stream order,
   * read with one batch Direct Get (ADR-31: the stream needs allow_direct,
   * the server 2.11+). Returns at once (no await needed); the messages come
   * through the StoredMsgs iterator. Also callable as nats.js's
   * jsm.direct.getLastMessagesFor(stream, { multi_last, ... }). Throws
   * TypeError for arguments of the wrong type, InvalidArgumentError (a bad
   * stream name, no subjects, both up_to_seq and up_to_time),
   * BadSubjectError, ConnectionClosedError, IllegalStateError (the context
   * is closed).
   */
  getLastMessagesFor(stream: string, subjects: string | string[], opts?: LastMessagesForOptions): StoredMsgs;
  getLastMessagesFor(stream: string, request: LastMessagesForRequest): StoredMsgs;
  /** `erase` (default true) also overwrites the bytes on disk. */
  deleteMessage(stream: string, seq: number | bigint, erase?: boolean): Promise<true>;
}

/** What a KvEntry records: a value ('PUT'), a delete marker ('DEL') or a purge marker ('PURGE'). */
export type KvOperation = 'PUT' | 'DEL' | 'PURGE';

/** One revision of a key (kv.get, kv.history, a watch). */
export class KvEntry {
  /** The bucket's name. */
  readonly bucket: string;
  /** The key. */
  readonly key: string;
  /** The value (empty for delete and purge markers, and in a metaOnly watch). */
  readonly value: Buffer;
  /** The revision: its sequence in the bucket's stream. */
  readonly revision: number;
  /** What the revision records. */
  readonly operation: KvOperation;
  /** When the revision was stored (millisecond precision). */
  readonly created: Date;
  /** Newer revisions of the key (0 for get). */
  readonly delta: number;
  /** The value decoded as UTF-8. */
  string(): string;
  /** The value parsed as JSON (throws SyntaxError if it is not). */
  json<T = unknown>(): T;
}

/** A Key-Value bucket's status (kv.status(), js.kv.statuses(), js.kv.list()), with nats.js KvStatus's field names. */
export interface KvStatus {
  /** The bucket's name. */
  bucket: string;
  /** Messages in the bucket's stream: every revision kept, markers included. */
  values: number;
  /** Revisions kept per key. */
  history: number;
  /** How long revisions live, ms; 0: forever. */
  ttl: number;
  /** Bytes in the bucket's stream (same as bytes). */
  size: number;
  /** Bytes in the bucket's stream (same as size). */
  bytes: number;
  /** 'file' or 'memory'. */
  storage: 'file' | 'memory';
  /** Same as storage (nats.js's name). */
  backingStore: 'file' | 'memory';
  /** How many replicas the bucket has. */
  replicas: number;
  /** True if the backing stream compresses (s2). */
  compression: boolean;
  /** The bucket's description ('' without one). */
  description: string;
  /** The bucket's string metadata ({} without any). */
  metadata: Record<string, string>;
  /** How long the server's markers for keys removed by their TTL or a limit live, ms (the config's limit_marker_ttl); 0: no markers and no per-key TTL. */
  markerTTL: number;
  /** The largest value stored, bytes; -1: no limit. */
  maxValueSize: number;
  /** The bucket's size limit, bytes; -1: no limit. */
  max_bytes: number;
  /** Same as max_bytes. */
  maxBucketSize: number;
  /** The backing stream's StreamInfo. */
  streamInfo: JsonObject;
}

/** What kv.purgeDeletes() removed. */
export interface KvPurgeResponse {
  /** Always true (a failure rejects). */
  success: true;
  /** Messages removed: markers and the revisions before them. */
  purged: number;
}

/** A per-key TTL (kv.create's markerTTL, kv.purge's ttl): whole seconds, 'never', or a duration as nats.js takes it ('10s', '1m', '1h30m'; digits alone: seconds). */
export type KvTtl = number | string;

/** A value to store: a string (UTF-8) or bytes; null and undefined reject with TypeError. */
export type KvValue = string | Uint8Array | ArrayBuffer | ArrayBufferView;

/** Options of kv.watch(). */
export interface KvWatchOptions {
  /** A key pattern ('a.*', 'a.>', '*.b'), or several; default every key. InvalidKeyError for a bad one. */
  key?: string | string[];
  /** Every kept revision first, not only the latest per key. */
  includeHistory?: boolean;
  /** Leave out delete and purge markers. */
  ignoreDeletes?: boolean;
  /** Entries without their values (key, revision, operation). */
  metaOnly?: boolean;
  /** No initial values: only changes made after the watch started. */
  updatesOnly?: boolean;
  /** Resume at this revision: every revision of the matching keys from it on (markers too unless ignoreDeletes), then initialized, then changes. Not with updatesOnly (InvalidArgumentError). */
  resumeFromRevision?: number | bigint;
}

/**
 * A running watch (kv.watch): the initial values (latest per key, or the
 * history, or none with updatesOnly), then every change. The library
 * buffers changes from the moment kv.watch() resolves, whether or not the
 * loop reads (up to the connection's pending limits; a full buffer pauses
 * pulling, nothing is skipped). It recovers by itself if its server-side
 * consumer is lost.
 */
export class KvWatcher implements AsyncIterableIterator<KvEntry> {
  /** The bucket watched. */
  readonly bucket: string;
  /**
   * Resolves true once the iteration has gone past the initial values (every
   * entry yielded before is an initial value, every later one a change), or
   * false if the watch ended first. Reached by iterating: it does not resolve
   * while nobody iterates. Never rejects.
   */
  readonly initialized: Promise<boolean>;
  /** Resolves once the watch is over and its library handle freed: undefined, or the error that ended it. */
  readonly closed: Promise<NatsError | undefined>;
  /** True once the watch has ended. */
  readonly isClosed: boolean;
  /** Ends the iteration at once (a pending next() resolves done) and deletes the server-side consumer. Idempotent. */
  stop(): void;
  /** Counters of the library's buffer. */
  stats(): SubscriptionStats;
  /** The next entry; done after stop() or nc.close(); rejects once with the error that ended the watch. */
  next(): Promise<IteratorResult<KvEntry, undefined>>;
  /** Breaking out of `for await` stops. */
  return(): Promise<IteratorResult<KvEntry, undefined>>;
  /** The watcher is its own iterator. */
  [Symbol.asyncIterator](): this;
}

/** A built-in Key-Value codec (KeyCodecs / ValueCodecs), run by the library. */
export interface KvCodec<K extends 'key' | 'value'> {
  /** 'key' or 'value'. */
  readonly kind: K;
  /** The codec's name ('base64', 'zlib(9)', 'chain', ...). */
  readonly name: string;
}
/** Built-in key codecs: base64 (nats.js's Base64KeyCodec form), base64Url (orbit.go's kvcodec form), path ('/a/b' as '_root_.a.b'), noop, chain. */
export declare const KeyCodecs: {
  noop(): KvCodec<'key'>;
  base64(): KvCodec<'key'>;
  base64Url(): KvCodec<'key'>;
  path(): KvCodec<'key'>;
  chain(...codecs: KvCodec<'key'>[]): KvCodec<'key'>;
};
/** Built-in value codecs: base64, zlib(level = -1), noop, chain. */
export declare const ValueCodecs: {
  noop(): KvCodec<'value'>;
  base64(): KvCodec<'value'>;
  zlib(level?: number): KvCodec<'value'>;
  chain(...codecs: KvCodec<'value'>[]): KvCodec<'value'>;
};

/** A bound Key-Value bucket (js.kv.create, bind, ...). Keys: [-/_=.A-Za-z0-9]+ without empty tokens (else InvalidKeyError). */
export class KV {
  /** The bucket's name. */
  readonly bucket: string;
  /** The same bucket through built-in codecs: every verb encodes what it is given and decodes what it returns. */
  withCodecs(codecs: { key?: KvCodec<'key'>; value?: KvCodec<'value'> }): KV;
  /** True after close(). */
  readonly isClosed: boolean;
  /** Resolves with the new revision. With `previousSeq`, only if the key's latest revision is that one (WrongLastSequenceError otherwise); with `ttl` (as create's markerTTL) the revision expires and the server writes a purge marker (the bucket needs limit_marker_ttl, else JetStreamApiError). */
  put(key: string, value: KvValue, opts?: { previousSeq?: number; ttl?: KvTtl }): Promise<number>;
  /** KeyExistsError if the key has a live value. With `markerTTL` the revision expires after that long and the server writes a purge marker (the bucket needs limit_marker_ttl, else JetStreamApiError). */
  create(key: string, value: KvValue, markerTTL?: KvTtl): Promise<number>;
  /** WrongLastSequenceError unless the key's latest revision is `last`. */
  update(key: string, value: KvValue, last: number | bigint): Promise<number>;
  /** KeyNotFoundError, or KeyDeletedError when the latest revision is a delete/purge marker. */
  get(key: string, opts?: { revision?: number | bigint }): Promise<KvEntry>;
  /** Revision `revision` of `key`; KeyNotFoundError if it belongs to another key or is gone. */
  getRevision(key: string, revision: number | bigint): Promise<KvEntry>;
  /** Writes a delete marker (the history stays); with `last`, only if the key's latest revision is `last` (else WrongLastSequenceError). */
  delete(key: string, opts?: { last?: number | bigint; previousSeq?: number | bigint }): Promise<void>;
  /** Writes a purge marker that replaces every earlier revision of `key`; `last` as for delete; with `ttl` the marker itself expires (the bucket needs limit_marker_ttl). */
  purge(key: string, opts?: { last?: number | bigint; previousSeq?: number | bigint; ttl?: KvTtl }): Promise<void>;
  /** Removes delete and purge markers older than `olderMillis` (default, and 0: 30 minutes, as in C, C++ and Go; negative: all) with their keys' history; younger markers stay, their earlier revisions go. */
  purgeDeletes(olderMillis?: number): Promise<KvPurgeResponse>;
  /** The bucket's status. */
  status(): Promise<KvStatus>;
  /** The keys holding a value now (deleted and purged keys left out), all or those matching `filter` ('a.*', 'a.>', or an array of patterns); an array (so `for await` over it works as with nats.js); InvalidKeyError for a bad filter. */
  keys(filter?: string | string[]): Promise<string[]>;
  /** The same keys as a KvKeyLister that yields each as it is read (nats.go's ListKeys); InvalidKeyError for a bad filter. */
  listKeys(filter?: string | string[]): Promise<KvKeyLister>;
  /** Every kept revision of `key`, oldest first, markers included; KeyNotFoundError if none. */
  history(key: string): Promise<KvEntry[]>;
  /** Watches the bucket (see KvWatcher); InvalidKeyError for a bad pattern. */
  watch(opts?: KvWatchOptions): Promise<KvWatcher>;
  /** Frees the handle (the bucket stays); later calls reject with IllegalStateError. Idempotent. */
  close(): void;
}

/** js.kv: Key-Value bucket management. */
export interface KvManager {
  /**
   * A KeyValueConfig ({bucket, history, ttl, storage, ...}), or (bucket, config). An identical bucket is bound.
   * `mirror` (a StreamSource object: {name, domain | external, opt_start_seq, ...}) makes the bucket a
   * read-only copy of the bucket named (`KV_` added when missing; `domain` for one in another JetStream
   * domain): its stream has mirror_direct and no subjects, and its handle reads the copied keys and writes
   * to the mirrored bucket. `sources` (a list of them; ignored with a mirror) copy those buckets' keys into
   * this one (each gets `KV_` and the transform of its keys into this bucket's, unless it has its own
   * subject_transforms: then it is taken as given). A bad one: ConfigError naming mirror/sources and the field.
   */
  create(cfg: JsonObject): Promise<KV>;
  create(bucket: string, cfg?: JsonObject): Promise<KV>;
  /** Changes a bucket's configuration; BucketNotFoundError if it does not exist. */
  update(cfg: JsonObject): Promise<KV>;
  update(bucket: string, cfg?: JsonObject): Promise<KV>;
  /** Creates the bucket, or changes it if it exists. */
  createOrUpdate(cfg: JsonObject): Promise<KV>;
  createOrUpdate(bucket: string, cfg?: JsonObject): Promise<KV>;
  /** BucketNotFoundError if it does not exist. */
  bind(bucket: string): Promise<KV>;
  /** Deletes the bucket with all its keys and history; resolves true. */
  delete(bucket: string): Promise<true>;
  /** The names of the account's Key-Value buckets (other streams left out). */
  names(): Promise<string[]>;
  /** The status of every Key-Value bucket. */
  statuses(): Promise<KvStatus[]>;
  /** As nats.js kvm.list(): the statuses, as an async iterator. */
  list(): AsyncIterableIterator<KvStatus>;
}

// ---------------------------------------------------------------------------
// Object Store

/** An object's name (put: given separately or as `name`) and what is stored with it. nats.js ObjectStoreMeta names work too. */
export interface ObjectMeta {
  /** put: the object's name; updateMeta: the new name (a rename). */
  name?: string;
  /** The object's description. */
  description?: string;
  /** Headers stored with the object. */
  headers?: HeadersInit;
  /** String metadata stored with the object. */
  metadata?: Record<string, string>;
  /** put only: bytes per chunk (default 131072). Same as chunk_size or options.max_chunk_size. */
  chunkSize?: number;
  /** Same as chunkSize. */
  chunk_size?: number;
  /** nats.js's form of chunkSize. */
  options?: { max_chunk_size?: number };
}

/** Where a link points (ObjectInfo.options.link). */
export interface ObjectLink {
  /** The target's bucket. */
  bucket: string;
  /** Absent for a link to a whole bucket. */
  name?: string;
}

/** What an object is; infos compare and print as plain data. */
export class ObjectInfo {
  /** The object's name. */
  readonly name: string;
  /** Its description, if any. */
  readonly description: string | undefined;
  /** The bucket holding it. */
  readonly bucket: string;
  /** The id of the chunks' subject. */
  readonly nuid: string;
  /** Bytes (0 for links and deleted objects). */
  readonly size: number;
  /** How many chunks hold it. */
  readonly chunks: number;
  /** 'SHA-256=<base64url>'; '' when none (a link). */
  readonly digest: string;
  /** True for the tombstone of a deleted object. */
  readonly deleted: boolean;
  /** When its info was stored (the server's time; millisecond precision). */
  readonly mtime: Date;
  /** ns since the Unix epoch. */
  readonly mtimeNanos: bigint;
  /**
   * The sequence, in the bucket's stream, that its info is stored at: as read back (info, get,
   * list, watch) or as stored by the call that returned it (put, putBytes, addLink,
   * addBucketLink). Every change of the object (put, updateMeta, delete) stores a new info, so
   * it grows with each; a deleted object's is its tombstone's (info with showDeleted).
   */
  readonly revision: number;
  /** Its headers; undefined without any. */
  readonly headers: MsgHeaders | undefined;
  /** Its string metadata ({} without any). */
  readonly metadata: Record<string, string>;
  /** `link`: where a link points; `max_chunk_size`: the chunk size the writer recorded. */
  readonly options: { link?: ObjectLink; max_chunk_size?: number };
  /** True for a link (options.link is set). */
  readonly isLink: boolean;
  /** Same as deleted. */
  readonly isDeleted: boolean;
}

/** An object store bucket's status (store.status(), seal(), objectStoreStatuses()). */
export interface ObjectStoreStatus {
  /** The bucket's name. */
  bucket: string;
  /** Its description, if any. */
  description: string | undefined;
  /** ms; 0: objects never expire. */
  ttl: number;
  /** 'file' or 'memory'. */
  storage: string;
  /** How many replicas the bucket has. */
  replicas: number;
  /** Bytes stored. */
  size: number;
  /** True once sealed: readable, no longer changeable. */
  sealed: boolean;
  /** True if the backing stream compresses (s2). */
  compression: boolean;
  /** The bucket's string metadata ({} without any). */
  metadata: Record<string, string>;
  /** Always 'JetStream'. */
  backingStore: 'JetStream';
  /** The backing stream's StreamInfo. */
  streamInfo: JsonObject;
}

/** What store.put() stores: bytes, nothing (null or undefined: an empty object), or a Readable, web ReadableStream or (async) iterable of bytes or strings, streamed. */
export type ObjectData =
  | KvValue
  | null
  | undefined
  | NodeJS.ReadableStream
  | AsyncIterable<Uint8Array | string>
  | Iterable<Uint8Array | string>;

/** An object's bytes (store.get): ends once size, chunk count and digest were verified, else fails (DigestMismatchError, ...). */
export class ObjectReadStream extends Readable {
  /** The info of the object read (a link's target). */
  readonly info: ObjectInfo;
}

/** Stores one object (store.createWriteStream): end() finishes it (`info` is set before 'finish'); destroy() or an error aborts it, an earlier object of the name stays. */
export class ObjectWriteStream extends Writable {
  /** The object's name. */
  readonly name: string;
  /** The stored object's info once finished; undefined until then. */
  readonly info: ObjectInfo | undefined;
}

/** Options of store.watch(). */
export interface ObjectWatchOptions {
  /** Leave deleted objects out. */
  ignoreDeletes?: boolean;
  /** Every kept info first, not only the latest per object. */
  includeHistory?: boolean;
  /** No initial infos: only changes made after the watch started. */
  updatesOnly?: boolean;
}

/** A running watch (store.watch): the latest info of every object, then every change. */
export class ObjectWatcher implements AsyncIterableIterator<ObjectInfo> {
  /** The bucket watched. */
  readonly bucket: string;
  /** Resolves true once the iteration has gone past the initial infos, false if the watch ended first. Never rejects. */
  readonly initialized: Promise<boolean>;
  /** Resolves once the watch is over and its library handle freed: undefined, or the error that ended it. */
  readonly closed: Promise<NatsError | undefined>;
  /** True once the watch has ended. */
  readonly isClosed: boolean;
  /** Ends the iteration at once. Idempotent. */
  stop(): void;
  /** Counters of the library's buffer. */
  stats(): SubscriptionStats;
  /** The next info; done after stop() or nc.close(); rejects once with the error that ended the watch. */
  next(): Promise<IteratorResult<ObjectInfo, undefined>>;
  /** Breaking out of `for await` stops. */
  return(): Promise<IteratorResult<ObjectInfo, undefined>>;
  /** The watcher is its own iterator. */
  [Symbol.asyncIterator](): this;
}

/** Options of store.get(), getBytes() and info(). */
export interface ObjectGetOptions {
  /** Also a deleted object (else ObjectDeletedError). */
  showDeleted?: boolean;
}

/** A bound object store bucket (js.objectStores.createObjectStore, objectStore, ...). */
export class ObjectStore {
  /** The bucket's name. */
  readonly bucket: string;
  /** True after close(). */
  readonly isClosed: boolean;
  /** Stores bytes, or streams a Readable / (async) iterable through the library's writer; replaces an object of that name once complete. */
  put(meta: string | ObjectMeta, data: ObjectData): Promise<ObjectInfo>;
  /** Stores `data` (null or undefined: an empty object) as one object; resolves with its info. */
  putBytes(meta: string | ObjectMeta, data: KvValue | null | undefined): Promise<ObjectInfo>;
  /** Stores `text` as UTF-8; resolves with the object's info. */
  putString(meta: string | ObjectMeta, text: string): Promise<ObjectInfo>;
  /** Throws InvalidObjectNameError at once for an empty name. */
  createWriteStream(meta: string | ObjectMeta): ObjectWriteStream;
  /** Follows a link. ObjectNotFoundError, or ObjectDeletedError (a kind of it). */
  get(name: string, opts?: ObjectGetOptions): Promise<{ info: ObjectInfo; stream: ObjectReadStream }>;
  /** The object's bytes as one Buffer, verified as get()'s stream is; errors as get(). */
  getBytes(name: string, opts?: ObjectGetOptions): Promise<Buffer>;
  /** The object's own info (a link is not followed). */
  info(name: string, opts?: ObjectGetOptions): Promise<ObjectInfo>;
  /** Replaces the description, headers and metadata with those of `meta` (absent ones are cleared); a `name` renames (ObjectExistsError onto a live object). */
  updateMeta(name: string, meta: ObjectMeta): Promise<void>;
  /** Deletes the object: a tombstone replaces its info and its chunks are purged. ObjectNotFoundError if there is none. */
  delete(name: string): Promise<void>;
  /** The latest info of every object; deleted ones too with includeDeleted (or showDeleted). */
  list(opts?: { includeDeleted?: boolean; showDeleted?: boolean }): Promise<ObjectInfo[]>;
  /** Watches the bucket (see ObjectWatcher); changes are buffered from the moment this resolves. */
  watch(opts?: ObjectWatchOptions): Promise<ObjectWatcher>;
  /** ObjectLinkError for a deleted target or a link to a link; ObjectExistsError if a live object (not a link) has the name. */
  addLink(name: string, target: ObjectInfo | { bucket: string; name: string }): Promise<ObjectInfo>;
  /** Stores a link named `name` to a whole bucket; reading it as an object fails with ObjectLinkError. */
  addBucketLink(name: string, bucket: string | ObjectStore): Promise<ObjectInfo>;
  /** Later changes reject with BucketSealedError. */
  seal(): Promise<ObjectStoreStatus>;
  /** The bucket's status. */
  status(): Promise<ObjectStoreStatus>;
  /** Frees the handle (the bucket stays). Idempotent. */
  close(): void;
}

/** js.objectStores; the same methods are on the JetStream context. */
export interface ObjectStoreManager {
  /** An ObjectStoreConfig ({bucket, description, ttl, max_bytes, storage, replicas, placement, compression, metadata}), or (bucket, config). */
  createObjectStore(cfg: JsonObject): Promise<ObjectStore>;
  createObjectStore(bucket: string, cfg?: JsonObject): Promise<ObjectStore>;
  /** Changes a bucket's configuration; BucketNotFoundError if it does not exist. */
  updateObjectStore(cfg: JsonObject): Promise<ObjectStore>;
  updateObjectStore(bucket: string, cfg?: JsonObject): Promise<ObjectStore>;
  /** Creates the bucket, or changes it if it exists. */
  createOrUpdateObjectStore(cfg: JsonObject): Promise<ObjectStore>;
  createOrUpdateObjectStore(bucket: string, cfg?: JsonObject): Promise<ObjectStore>;
  /** BucketNotFoundError if it does not exist. */
  objectStore(bucket: string): Promise<ObjectStore>;
  /** Deletes the bucket with every object in it; resolves true. */
  deleteObjectStore(bucket: string): Promise<true>;
  /** The names of the account's object store buckets. */
  objectStoreNames(): Promise<string[]>;
  /** The status of every object store bucket. */
  objectStoreStatuses(): Promise<ObjectStoreStatus[]>;
}

/** Delivery metadata of a JsMsg, parsed from its ack subject. */
export class JsMsgInfo {
  /** The stream's name. */
  readonly stream: string;
  /** The consumer's name. */
  readonly consumer: string;
  /** The JetStream domain, if any. */
  readonly domain: string | undefined;
  /** How many times the message was delivered (1 the first time). */
  readonly deliveryCount: number;
  /** True if delivered before (deliveryCount > 1). */
  readonly redelivered: boolean;
  /** The message's sequence in the stream. */
  readonly streamSequence: number;
  /** Its delivery sequence for this consumer. */
  readonly consumerSequence: number;
  /** When the stream stored it (millisecond precision). */
  readonly timestamp: Date;
  /** When the stream stored it, ns since the Unix epoch. */
  readonly timestampNanos: bigint;
  /** Messages left for the consumer after this one. */
  readonly pending: number;
}

/**
 * A message from a pull consumer. It owns its library message (freed once an
 * ack, nak or term is sent, else by the garbage collector with the rest of
 * its batch); a second ack, nak or term throws MessageAlreadyAckedError.
 * ack/nak/term/working only buffer (like publish) and throw on error;
 * ackAck resolves when the server confirmed the ack.
 */
export class JsMsg {
  /** The subject it was stored under. */
  readonly subject: string;
  /** The ack subject. */
  readonly reply: string | undefined;
  /** The payload. */
  readonly data: Buffer;
  /** Its headers, parsed on first access; undefined without any. */
  readonly headers: MsgHeaders | undefined;
  /** True when the header block had corrupt lines (skipped: headers holds the good ones), as Msg.headersMalformed. */
  readonly headersMalformed: boolean;
  /** Delivery metadata, parsed on first access. */
  readonly info: JsMsgInfo;
  /** Same as info. */
  readonly metadata: JsMsgInfo;
  /** The stream sequence. */
  readonly seq: number;
  /** True if delivered before. */
  readonly redelivered: boolean;
  /** The payload decoded as UTF-8. */
  string(): string;
  /** The payload parsed as JSON (throws SyntaxError if it is not). */
  json<T = unknown>(): T;
  /** Acknowledges: done with the message. */
  ack(): void;
  /** Redeliver, after `delay` ms if given. */
  nak(delay?: number): void;
  /** Never redeliver; `reason` is recorded by the server. */
  term(reason?: string): void;
  /** Still in progress: resets the ack wait. */
  working(): void;
  /** Acks and waits for the server's confirmation (default: the connection's request timeout); resolves true. */
  ackAck(timeout?: number | { timeout?: number }): Promise<true>;
}

/** Options of js.fetch(). */
export interface FetchOptions {
  /** Messages at most (default 100). */
  maxMessages?: number;
  /** Bytes at most (default: no limit). */
  maxBytes?: number;
  /** How long the server holds the request open, ms (default 5000). */
  expires?: number;
  /** Only the messages available now (possibly none). */
  noWait?: boolean;
  /** Idle heartbeat interval, ms (default none); two silent intervals reject with TimeoutError ("no heartbeat received"). */
  heartbeat?: number;
  /** ADR-42 priority group (required when the consumer has priority groups, and one of them; else InvalidArgumentError). */
  group?: string;
  /** Overflow policy: served only while the consumer has at least this many pending (needs group). */
  min_pending?: number;
  /** Overflow policy: served only while at least this many await acks (needs group). */
  min_ack_pending?: number;
  /** Same as min_pending. */
  minPending?: number;
  /** Same as min_ack_pending. */
  minAckPending?: number;
  /**
   * Prioritized policy (server 2.12+): 0 (the default, served first) to 9; the server serves the waiting requests of a
   * consumer whose priority_policy is "prioritized" lowest number first (other policies ignore it). Needs group above 0.
   * InvalidArgumentError: out of range ("priority must be between 0 and 9"), not an integer (or beyond an int32),
   * above 0 without a group ("priority needs a priority group"); TypeError: not a number.
   */
  priority?: number;
}

/** Options of js.next(). */
export interface NextOptions {
  /** How long to wait, ms (default: the context's timeout). */
  timeout?: number;
  /** ADR-42 priority group, as in FetchOptions. */
  group?: string;
  /** As in FetchOptions. */
  min_pending?: number;
  /** As in FetchOptions. */
  min_ack_pending?: number;
  /** Same as min_pending. */
  minPending?: number;
  /** Same as min_ack_pending. */
  minAckPending?: number;
  /** As in FetchOptions. */
  priority?: number;
}

/** Options of js.consume(). */
export interface ConsumeOptions {
  /** Messages kept requested (and buffered) at most (default 500). */
  maxMessages?: number;
  /** Lifetime of each pull request, ms (default 30000, at least 1000). */
  expires?: number;
  /** Idle heartbeat interval, ms (default half of expires, at most 30000; at most half of expires). */
  heartbeat?: number;
  /** Bytes kept requested at most: requests bounded by bytes (not with maxMessages); a larger message ends the iteration with JetStreamError. */
  max_bytes?: number;
  /** Same as max_bytes. */
  maxBytes?: number;
  /** Pull again once what is outstanding falls to this fraction (default 0.5). */
  threshold?: number;
  /** Pull again once that few messages are outstanding. */
  threshold_messages?: number;
  /** Pull again once that few bytes are outstanding (with max_bytes). */
  threshold_bytes?: number;
  /** Same as threshold_messages. */
  thresholdMessages?: number;
  /** Same as threshold_bytes. */
  thresholdBytes?: number;
  /** ADR-42 priority group, checked when the consume starts; a pinned client keeps its pin. */
  group?: string;
  /** Overflow policy: served only while the consumer has at least this many pending (needs group). */
  min_pending?: number;
  /** Overflow policy: served only while at least this many await acks (needs group). */
  min_ack_pending?: number;
  /** Same as min_pending. */
  minPending?: number;
  /** Same as min_ack_pending. */
  minAckPending?: number;
  /** Prioritized policy: 0 (the default, served first) to 9, each pull request of the consume at it; as in FetchOptions (errors when the consume starts). */
  priority?: number;
}

/**
 * A continuous pull (js.consume): an async iterator of JsMsg that goes on
 * across idle periods until stop(), `break`, nc.close() (the loop throws
 * ConnectionClosedError, as every iterator does; nats.js ends quietly) or
 * the consumer's deletion (the loop throws ConsumerDeletedError or
 * ConsumerNotFoundError). The library keeps maxMessages pulled and
 * buffered from the moment js.consume() resolves, whether or not the loop
 * reads, and pulls again at once after a reconnect.
 */
export class ConsumerMessages implements AsyncIterableIterator<JsMsg> {
  /** The stream consumed. */
  readonly stream: string;
  /** The consumer's name. */
  readonly consumer: string;
  /** Resolves once the consumption is over and its library handle freed: undefined, or the error that ended it. */
  readonly closed: Promise<NatsError | undefined>;
  /** True once the consumption has ended. */
  readonly isClosed: boolean;
  /**
   * Ends the iteration at once (a pending next() resolves done) and stops
   * pulling; messages buffered but not yielded are not acked (the server
   * redelivers them after the ack wait). Idempotent.
   */
  stop(): void;
  /**
   * Ends the consumption gracefully: no more pull requests (a push
   * consume withdraws its subscription), while what the server already
   * sent is still yielded, then the iteration ends; acknowledge what it
   * yields and nothing is redelivered. Resolves once the library handed
   * everything over (the loop must go on reading), bounded by `timeout` ms
   * (default: the connection's drainTimeout; TimeoutError, the drain goes
   * on); SubscriptionClosedError when stopped first.
   */
  drain(timeout?: number): Promise<void>;
  /**
   * The next status event of a consumption, kept from its start (the
   * newest 256 when unread): a heartbeat (with the last sequences it
   * names), a heartbeat interval missed from the second on (counted); push:
   * a flow-control request answered; pull: each request sent, a request
   * ended with messages left, and the server's statuses; an ordered
   * consumer's: its consumer recreated. Resolves null once the
   * consumption ended and its events are read.
   */
  nextStatus(): Promise<ConsumerStatusEvent | null>;
  /** Counters of the library's buffer. */
  stats(): SubscriptionStats;
  /** The next message; done after stop() or nc.close(); rejects once with the error that ended the consumption. */
  next(): Promise<IteratorResult<JsMsg, undefined>>;
  /** Breaking out of `for await` stops. */
  return(): Promise<IteratorResult<JsMsg, undefined>>;
  /** The consumption is its own iterator. */
  [Symbol.asyncIterator](): this;
}

/** A status event of a push consumption (ConsumerMessages.nextStatus). */
export type PushStatusEvent =
  | { type: 'heartbeat'; last_consumer_seq: number; last_stream_seq: number }
  | { type: 'flow_control' }
  | { type: 'heartbeats_missed'; count: number };

/** A status event of a consumption (ConsumerMessages.nextStatus): a push
 * consumption's, or a pull one's (consume, fetchMessages). */
export type ConsumerStatusEvent =
  | PushStatusEvent
  | { type: 'next'; options: Record<string, unknown> }
  | { type: 'discard'; messages_left: number; bytes_left: number }
  | { type: 'consumer_deleted' | 'exceeded_limits' | 'debug'; code: number; description: string }
  | { type: 'no_responders'; code: number }
  | { type: 'consumer_pinned'; id: string }
  | { type: 'consumer_unpinned' }
  | { type: 'reset' | 'ordered_consumer_recreated'; name: string };

/** What js.consumers.get(stream, opts) reads (nats.js's OrderedConsumerOptions); by default the whole stream from its first message. */
export interface OrderedConsumerOptions {
  /** Subjects (wildcards allowed) to read; none: the whole stream. */
  filter_subjects?: string | string[];
  /** Where it starts (default "all"). */
  deliver_policy?: 'all' | 'last' | 'new' | 'by_start_sequence' | 'by_start_time' | 'last_per_subject';
  /** The first stream sequence, for "by_start_sequence" only. */
  opt_start_seq?: number;
  /** The start time, for "by_start_time" only: a Date, an RFC 3339 string, ms (number) or ns (bigint) since the epoch. */
  opt_start_time?: Date | string | number | bigint;
  /** Deliver headers only (the payload's size in Nats-Msg-Size). */
  headers_only?: boolean;
  /** Its server-side consumers are named `<name_prefix>_<serial>`, the serial counting them from 1 (default prefix: a fresh NUID). */
  name_prefix?: string;
  /** How long the server keeps a consumer nobody reads, ms (default 300000). */
  inactive_threshold?: number;
  /** The consumers' max_deliver, shown in their info only (default: not set). */
  max_deliver?: number;
  /** One filter subject goes to the server as a list (filter_subjects), as nats.js sends an array; default: as filter_subject, as nats.go. */
  filter_subjects_as_list?: boolean;
  /** String metadata every consumer it creates carries in its config.metadata (default none; not in nats.js); anything but an object of strings: TypeError. */
  metadata?: Record<string, string>;
}

/** Options of OrderedConsumer.consume(). */
export interface OrderedConsumeOptions {
  /** Messages per pull request at most (default 500). */
  maxMessages?: number;
  /** Lifetime of each pull request, ms (default 30000, at least 1000). */
  expires?: number;
  /** Idle heartbeat interval, ms (default half of expires, at most 5000; at most half of expires). */
  heartbeat?: number;
  /** ms: the loop throws NoMessagesError once nothing has arrived for that long (default: never). */
  idleTimeout?: number;
  /** End the loop once caught up (after the message delivered with nothing more pending; at once when nothing is). */
  untilDrained?: boolean;
}

/**
 * An ordered consumer (ADR-17; js.consumers.get(stream, opts)): an
 * always-in-order, self-healing view of one stream, backed by an ephemeral
 * server-side consumer that the library deletes and recreates after the
 * last delivered stream sequence on a gap, missed heartbeats, a reconnect
 * or its loss. One consume() at a time; a consumption ends with stop(),
 * `break`, untilDrained or idleTimeout (NoMessagesError) and deletes its
 * consumer; the next consume() continues after the last message yielded.
 */
export class OrderedConsumer {
  /** The stream it reads. */
  readonly stream: string;
  /** The ConsumerInfo of the server-side consumer in use (created if there is none); `cached`: the last one read. */
  info(cached?: boolean): Promise<JsonObject>;
  /** Starts a consumption of JsMsg in stream order (no acks needed); IllegalStateError while another runs or after stop(). */
  consume(opts?: OrderedConsumeOptions): Promise<ConsumerMessages>;
  /** Ends a consumption, deletes the server-side consumer and ends the ordered consumer. Idempotent. */
  stop(): Promise<void>;
  /** nats.js's name for stop(). */
  delete(): Promise<true>;
  /** Frees the library handle (an unused server-side consumer is deleted without waiting). Idempotent. */
  close(): void;
}

/** js.consumers: pull consumer management (StreamNotFoundError for a stream that does not exist). */
export interface Consumers {
  /** An ordered consumer on the stream (nats.js's get(stream, opts) form); sends nothing. */
  get(stream: string, opts?: OrderedConsumerOptions): Promise<OrderedConsumer>;
  /** Creates a pull consumer from a ConsumerConfig (server field names); resolves with its ConsumerInfo. */
  add(stream: string, cfg: JsonObject): Promise<JsonObject>;
  /** ConsumerNotFoundError if it does not exist. */
  update(stream: string, cfg: JsonObject): Promise<JsonObject>;
  /** Creates the consumer, or changes it if it exists; resolves with its ConsumerInfo. */
  createOrUpdate(stream: string, cfg: JsonObject): Promise<JsonObject>;
  /** The consumer's ConsumerInfo (config, delivered, ack_floor, num_pending, ...); ConsumerNotFoundError if it does not exist. */
  info(stream: string, name: string): Promise<JsonObject>;
  /** A fetch waiting on it rejects with ConsumerDeletedError. */
  delete(stream: string, name: string): Promise<true>;
  /** The names of the stream's consumers. */
  names(stream: string): Promise<string[]>;
  /** The ConsumerInfo of every consumer of the stream, as nats.js's jsm.consumers.list(stream) lists them (here as one array). */
  list(stream: string): Promise<JsonObject[]>;
  /**
   * Pauses the consumer until `until` (server 2.11+): until then it delivers nothing and pulls wait; its ConsumerInfo shows
   * paused, pause_until and pause_remaining. `until` is a Date (as in nats.js), or an RFC 3339 string, ms since the epoch
   * (number) or ns (bigint); a time already past leaves it running. TypeError for an invalid time; ConsumerNotFoundError
   * if it does not exist.
   */
  pause(stream: string, name: string, until: Date | string | number | bigint): Promise<ConsumerPauseResponse>;
  /** Resumes a paused consumer now (a running one stays running); resolves with paused false. ConsumerNotFoundError if it does not exist. */
  resume(stream: string, name: string): Promise<ConsumerPauseResponse>;
  /** Releases the pinned client of priority group `group` (ADR-42 pinned_client, server 2.11+). */
  unpin(stream: string, name: string, group: string): Promise<void>;
}

/** What js.consumers.pause() and resume() resolve with (nats.js field names). */
export interface ConsumerPauseResponse {
  /** Whether the consumer is paused now. */
  paused: boolean;
  /** When it resumes (RFC 3339), while paused. */
  pause_until?: string;
  /** Nanoseconds until it resumes, while paused. */
  pause_remaining?: number;
}

/** The ObjectStoreManager methods, on the context too: js.createObjectStore(...) is js.objectStores.createObjectStore(...). */
export interface JetStreamClient extends ObjectStoreManager {}

/** A JetStream context (nc.jetstream()): publishes, pulls from consumers, and manages streams, consumers and buckets. */
export class JetStreamClient {
  /** The connection it works over. */
  readonly nc: Connection;
  /** Stream management. */
  readonly streams: Streams;
  /** Pull consumer management. */
  readonly consumers: Consumers;
  /** Key-Value bucket management. */
  readonly kv: KvManager;
  /** Object store bucket management. */
  readonly objectStores: ObjectStoreManager;
  /** True after close(). */
  readonly isClosed: boolean;
  /** Asynchronous publishes awaiting their ack or room to be sent. */
  readonly publishAsyncPending: number;
  /** Publishes and waits for the ack (default timeout: the context's); "no responders" is retried `retryAttempts` times (default 2) `retryWait` ms apart (default 250), then NoStreamResponseError. It is not in the publishAsync window: it never stalls, is not counted in publishAsyncPending and never rejects with AsyncPublishTimeoutError. */
  publish(subject: string, data?: Payload, opts?: JetStreamPublishOptions): Promise<PubAck>;
  /**
   * Publishes without waiting; resolves with the ack. Never throws: every
   * error rejects (TooManyStalledMsgsError when the window stayed full for
   * the stall wait, AsyncPublishTimeoutError, NoStreamResponseError, ...).
   * Publishes that meet a full window are queued in order until an ack makes room.
   */
  publishAsync(subject: string, data?: Payload, opts?: JetStreamPublishOptions): Promise<PubAck>;
  /** Resolves once every publishAsync has completed and its promise settled; TimeoutError after `timeout` ms. */
  publishAsyncComplete(timeout?: number): Promise<void>;
  /** The account's JetStream usage and limits ($JS.API.INFO); JetStreamNotEnabledError without JetStream. */
  accountInfo(): Promise<JsonObject>;
  /** The JetStream API level the server implements (2.11 reports 1, 2.12 reports 2, ...; 0 for servers too old to report one). */
  apiLevel(): Promise<number>;
  /** Pulls a batch (possibly empty) from a pull consumer. */
  fetch(stream: string, consumer: string, opts?: FetchOptions): Promise<JsMsg[]>;
  /** The messages of one fetch (fetch()'s options and ends), yielded as they arrive; the loop throws fetch()'s error after the messages before it; stop() withdraws the request. */
  fetchMessages(stream: string, consumer: string, opts?: FetchOptions): Promise<ConsumerMessages>;
  /** One message; NoMessagesError when none arrives within `timeout` ms (default: the context's timeout; 0: only one available now). */
  next(stream: string, consumer: string, opts?: number | NextOptions): Promise<JsMsg>;
  /** Consumes continuously (see ConsumerMessages); ConsumerNotFoundError if there is no such consumer. */
  consume(stream: string, consumer: string, opts?: ConsumeOptions): Promise<ConsumerMessages>;
  /** Consumes a push consumer (one with a deliver_subject); ConsumerNotFoundError if there is none, InvalidArgumentError if it is a pull consumer. */
  pushConsume(stream: string, consumer: string): Promise<ConsumerMessages>;
  /** Frees the context (acks of sent publishes still arrive; KV handles live on). Idempotent. */
  close(): void;
}

/**
 * Signs `data` (a server's nonce) with the NKey seed `seed` ("SU..."), as
 * the library signs for NKey and JWT authentication (nats.c's nats_Sign):
 * for an `authenticator` that holds its seed. Returns the seed's public
 * key ("U...") and the signature as CONNECT carries it (URL-safe base64).
 * Throws ConfigError for a bad seed.
 */
export function nkeySign(seed: string, data: Uint8Array | string): { publicKey: string; sig: string };

/**
 * Sets how long a wait for an answer (a request's reply, a JetStream or KV
 * call) first spins before the thread sleeps, in microseconds (default 200,
 * skipped while the machine's CPUs are contended; 0 turns spinning off). The event loop spins while one operation is in
 * flight, in 20 us steps between which timers and I/O are served. An answer
 * within the spin is seen with no thread wake-up; the price is CPU time.
 * Process-wide (every connection and worker, and C or Go code in the same
 * process). Throws TypeError for a negative or non-finite number.
 */
export function setWaitSpin(us: number): void;

/** The natsio library's version, e.g. "0.1.0". */
export const version: string;

/** The URL a connection given none uses: 'nats://127.0.0.1:4222' (NATSIO_DEFAULT_URL). connect(), connect(''), and servers '' or [] connect there. */
export const DEFAULT_URL: string;
/** The names of the headers JetStream reads and writes, and Nats-Rollup's values, keyed by natsio.h's NATSIO_JS_HEADER_ suffixes: JS_HEADERS.MSG_ID is 'Nats-Msg-Id', JS_HEADERS.ROLLUP_SUBJECT 'sub'. */
export const JS_HEADERS: Readonly<Record<string, string>>;

/**
 * What a user callback threw, as the Connection's 'error' event carries
 * it: a subscription's message callback, a Connection event listener
 * ('connect', 'disconnect', 'reconnectFailed', 'reconnect', 'ldm', 'servers', 'close'), the
 * logger, userJWT or signatureCB. Delivery goes on (the next message still
 * reaches the callback). With no 'error' listener it is written to the
 * connection's logger (default: standard error) at 'error' level, whatever
 * logLevel says, and never thrown. An 'error' listener that throws is an
 * uncaught exception, as in Node. Not a NatsError: no natsio status stands
 * for it. The message reads `subscription callback on "<subject>" threw:
 * <message>` or `"<event>" callback threw: <message>`.
 */
export class CallbackError extends Error {
  /** What the callback threw. */
  readonly cause: unknown;
  /** The subscription's subject (a message callback), else undefined. */
  readonly subject: string | undefined;
  /** The subscription's id (a message callback), else undefined. */
  readonly sid: number | undefined;
  /** The event whose listener threw, or 'logger', 'userJWT', 'signatureCB', 'authenticator', 'reconnectDelayHandler'; undefined for a message callback. */
  readonly event: string | undefined;
  private constructor();
}

/** Status numbers by code name (Status.TIMEOUT === 200): those of the error classes, and OK (0), DONE (1), PENDING (2). */
export const Status: Readonly<Record<string, number>>;

/**
 * Base class of every natsio error; each status code has its own subclass
 * below, so `instanceof TimeoutError` works. The classes form the
 * reference client's error tree, the library's own (natsio_status_parent):
 * each class extends its first parent (as declared here), and `instanceof`
 * also holds for a second parent: a NoMessagesError or an
 * AsyncPublishTimeoutError is a JetStreamError and a TimeoutError, a
 * DrainTimeoutError a TimeoutError, a KeyDeletedError a KeyNotFoundError,
 * a NoServersAvailableError a ConnectionClosedError.
 */
export class NatsError extends Error {
  /** natsio status number, e.g. 200. */
  readonly status: number;
  /** Status name, e.g. 'TIMEOUT', 'NO_RESPONDERS'. */
  readonly code: string;
  /** The JetStream API error's code (e.g. 400, 404, 503) when the server rejected a JetStream API request; absent otherwise. */
  readonly apiCode?: number;
  /** The JetStream API error's err_code (e.g. 10058 stream name in use, 10059 stream not found); absent when none. */
  readonly errCode?: number;
  /** KeyDeletedError: the revision of the delete/purge marker; KeyExistsError: the revision of the live value. Absent otherwise. */
  readonly revision?: number;
  /** Made by natsio; the subclasses take only the message. */
  constructor(message: string, status: number, code: string);
}

/** The root of the per-code error classes (not exported: at runtime a class without a parent code extends NatsError directly, the others their first parent's class). */
declare class CodedError extends NatsError {
  /** `status` and `code` come from the class. */
  constructor(message: string);
}
/** A required argument was missing (code 'NULL_ARGUMENT', status 100). */
export class NullArgumentError extends InvalidArgumentError {}
/** A string argument was not valid UTF-8 (code 'INVALID_UTF8', status 101). */
export class InvalidUtf8Error extends InvalidArgumentError {}
/** An argument was out of range or malformed (code 'INVALID_ARGUMENT', status 102). */
export class InvalidArgumentError extends CodedError {}
/** A subject was empty, had empty tokens, whitespace or misplaced wildcards (code 'BAD_SUBJECT', status 103). */
export class BadSubjectError extends CodedError {}
/** A queue group name was empty or had whitespace (code 'BAD_QUEUE_NAME', status 104). */
export class BadQueueNameError extends CodedError {}
/** A header name or value could break the wire framing (code 'BAD_HEADERS', status 105). */
export class BadHeadersError extends CodedError {}
/** Options were invalid, alone or together (code 'CONFIG', status 106). */
export class ConfigError extends CodedError {}
/** The call is not allowed in the object's current state, e.g. after close() (code 'ILLEGAL_STATE', status 107). */
export class IllegalStateError extends CodedError {}
/** The requested item does not exist (code 'NOT_FOUND', status 108). */
export class NotFoundError extends CodedError {}
/** A bug in natsio; the message says where (code 'INTERNAL', status 109). */
export class InternalError extends CodedError {}
/** The operation did not complete in time (code 'TIMEOUT', status 200). */
export class TimeoutError extends CodedError {}
/** The connection is closed or draining (code 'CONNECTION_CLOSED', status 201). */
export class ConnectionClosedError extends CodedError {}
/** No server could be reached (code 'NO_SERVERS', status 202). */
export class NoServersAvailableError extends ConnectionClosedError {}
/** A socket error (code 'IO', status 203). */
export class IoError extends CodedError {}
/** A drain did not finish in time; the connection closed anyway (code 'DRAIN_TIMEOUT', status 204). */
export class DrainTimeoutError extends TimeoutError {}
/** The operation was cancelled (code 'CANCELLED', status 205). */
export class CancelledError extends CodedError {}
/** A publish made while disconnected did not fit the reconnect buffer, or buffering is off (code 'RECONNECT_BUF_EXCEEDED', status 206). */
export class ReconnectBufExceededError extends CodedError {}
/** The server violated the protocol (code 'PROTOCOL', status 300). */
export class ProtocolError extends CodedError {}
/** A frame from the server could not be parsed (code 'PARSER', status 301). */
export class ParserError extends ProtocolError {}
/** A control line from the server exceeded maxControlLine (code 'MAX_CONTROL_LINE', status 302). */
export class MaxControlLineExceededError extends ParserError {}
/** A message is larger than the server's max_payload (code 'MAX_PAYLOAD', status 303). */
export class MaxPayloadExceededError extends ProtocolError {}
/** The server sent an -ERR that no other class covers (code 'SERVER', status 304). */
export class ServerError extends CodedError {}
/** The connection went stale: maxPingsOut PINGs unanswered (code 'STALE_CONNECTION', status 305). */
export class StaleConnectionError extends ServerError {}
/** Authentication was rejected (code 'AUTHORIZATION', status 306). */
export class AuthorizationViolationError extends ServerError {}
/** Credentials expired or were revoked (code 'AUTH_EXPIRED', status 307). */
export class AuthenticationExpiredError extends ServerError {}
/** A publish or subscribe was denied (code 'PERMISSIONS', status 308). */
export class PermissionsViolationError extends ServerError {}
/** The account's subscription limit was reached (code 'MAX_SUBSCRIPTIONS', status 309). */
export class MaxSubscriptionsExceededError extends ServerError {}
/** A ws:// or wss:// server failed the WebSocket upgrade or broke the framing (code 'WEBSOCKET', status 310). */
export class WebsocketError extends ProtocolError {}
/** Nobody is subscribed to the request subject; from JetStream, nobody answered its API request (a leader election: retry; or no JetStream on the server) (code 'NO_RESPONDERS', status 400). */
export class NoRespondersError extends CodedError {}
/** The message has no reply subject (code 'NO_REPLY_SUBJECT', status 401). */
export class NoReplySubjectError extends CodedError {}
/** The subscription has ended (code 'SUBSCRIPTION_CLOSED', status 402). */
export class SubscriptionClosedError extends CodedError {}
/** Pending limits were exceeded (code 'SLOW_CONSUMER', status 403). */
export class SlowConsumerError extends CodedError {}
/** A JetStream operation failed, e.g. on an unexpected reply (code 'JETSTREAM', status 500). */
export class JetStreamError extends CodedError {}
/** The JetStream API returned an error no other class covers; the message gives its code, err_code and description (code 'JS_API', status 501). */
export class JetStreamApiError extends JetStreamError {}
/** JetStream is not enabled for the account or server: the server says so, or nobody answers accountInfo (code 'JS_NOT_ENABLED', status 502). */
export class JetStreamNotEnabledError extends JetStreamApiError {}
/** No stream answered a JetStream publish: none holds the subject (code 'NO_STREAM_RESPONSE', status 503). */
export class NoStreamResponseError extends JetStreamError {}
/** The stream does not exist (code 'STREAM_NOT_FOUND', status 504). */
export class StreamNotFoundError extends JetStreamApiError {}
/** A stream of that name exists with another configuration (code 'STREAM_NAME_IN_USE', status 505). */
export class StreamNameInUseError extends JetStreamApiError {}
/** The consumer does not exist (code 'CONSUMER_NOT_FOUND', status 506). */
export class ConsumerNotFoundError extends JetStreamApiError {}
/** The stream has no such message (code 'MESSAGE_NOT_FOUND', status 507). */
export class MessageNotFoundError extends JetStreamApiError {}
/** An expected last sequence did not match: publish's expect, kv.update, or kv.delete/purge with `last` (code 'WRONG_LAST_SEQUENCE', status 508). */
export class WrongLastSequenceError extends JetStreamApiError {}
/** publishAsyncMaxPending publishes awaited their acks for longer than the stall wait (code 'TOO_MANY_STALLED', status 509). */
export class TooManyStalledMsgsError extends JetStreamError {}
/** An asynchronous publish got no ack within publishAsyncTimeout; also instanceof TimeoutError (code 'ASYNC_PUBLISH_TIMEOUT', status 510). */
export class AsyncPublishTimeoutError extends JetStreamError {}
/** A fetch or next ended without a message (next rejects with it; fetch resolves []); also instanceof TimeoutError (code 'NO_MESSAGES', status 511). */
export class NoMessagesError extends JetStreamError {}
/** The consumer was deleted while a fetch or consume waited on it (code 'CONSUMER_DELETED', status 512). */
export class ConsumerDeletedError extends JetStreamError {}
/** A second ack, nak or term of the same JsMsg (code 'MESSAGE_ALREADY_ACKED', status 513). */
export class MessageAlreadyAckedError extends JetStreamError {}
/** The message has no JetStream ack subject (code 'NOT_JS_MESSAGE', status 514). */
export class NotJsMessageError extends JetStreamError {}
/** The Key-Value or object store bucket does not exist (code 'BUCKET_NOT_FOUND', status 600). */
export class BucketNotFoundError extends JetStreamError {}
/** A bucket of that name exists with another configuration (code 'BUCKET_EXISTS', status 601). */
export class BucketExistsError extends JetStreamError {}
/** The key has no value (code 'KEY_NOT_FOUND', status 602). */
export class KeyNotFoundError extends JetStreamError {}
/** The key's latest revision is a delete or purge marker (code 'KEY_DELETED', status 603). */
export class KeyDeletedError extends KeyNotFoundError {}
/** kv.create found a live value for the key (code 'KEY_EXISTS', status 604). */
export class KeyExistsError extends JetStreamError {}
/** A bucket name outside [A-Za-z0-9_-]+ (code 'INVALID_BUCKET_NAME', status 605). */
export class InvalidBucketNameError extends ConfigError {}
/** A key outside [-/_=.A-Za-z0-9]+ or with empty tokens, or a bad watch pattern (code 'INVALID_KEY', status 606). */
export class InvalidKeyError extends ConfigError {}
/** A Key-Value codec chain of no codecs (code 'KV_NO_CODECS', status 607). */
export class KvNoCodecsError extends InvalidArgumentError {}
/** A wildcard filter and a key codec without a filter form (code 'KV_WILDCARD_NOT_SUPPORTED', status 608). */
export class KvWildcardNotSupportedError extends InvalidKeyError {}
/** The key codec failed to encode a key (code 'KV_KEY_ENCODE_FAILED', status 609). */
export class KvKeyEncodeFailedError extends NatsError {}
/** The key codec failed to decode a stored key (code 'KV_KEY_DECODE_FAILED', status 610). */
export class KvKeyDecodeFailedError extends NatsError {}
/** The value codec failed to encode a value (code 'KV_VALUE_ENCODE_FAILED', status 611). */
export class KvValueEncodeFailedError extends NatsError {}
/** The value codec failed to decode a stored value (code 'KV_VALUE_DECODE_FAILED', status 612). */
export class KvValueDecodeFailedError extends NatsError {}
/** The key codec failed to encode a filter (code 'KV_FILTER_ENCODE_FAILED', status 613). */
export class KvFilterEncodeFailedError extends NatsError {}
/** No object of that name (code 'OBJECT_NOT_FOUND', status 700). */
export class ObjectNotFoundError extends JetStreamError {}
/** Only the object's tombstone is left; a kind of ObjectNotFoundError (code 'OBJECT_DELETED', status 701). */
export class ObjectDeletedError extends ObjectNotFoundError {}
/** A live object has that name (rename or link onto it) (code 'OBJECT_EXISTS', status 702). */
export class ObjectExistsError extends JetStreamError {}
/** The bytes read do not match the recorded SHA-256 digest, size or chunk count (code 'DIGEST_MISMATCH', status 703). */
export class DigestMismatchError extends JetStreamError {}
/** A link to a deleted object or to a link, or a bucket link read as an object (code 'OBJECT_LINK', status 704). */
export class ObjectLinkError extends JetStreamError {}
/** An empty object name; a kind of ConfigError (code 'INVALID_OBJECT_NAME', status 705). */
export class InvalidObjectNameError extends ConfigError {}
/** The bucket is sealed: readable, no longer changeable (code 'BUCKET_SEALED', status 706). */
export class BucketSealedError extends JetStreamError {}
/** A service's configuration was refused (bad name, version, subject or queue group): nothing was sent; a kind of ConfigError (code 'SERVICE_CONFIG', status 800). */
export class ServiceConfigError extends ConfigError {}

// ---------------------------------------------------------------------------
// Services (ADR-32), in the shape of nats.js's @nats-io/services

/** The header of an error reply that carries its description. */
export const ServiceErrorHeader: 'Nats-Service-Error';
/** The header of an error reply that carries its code. */
export const ServiceErrorCodeHeader: 'Nats-Service-Error-Code';

/** The monitoring verbs ($SRV.PING|INFO|STATS). */
export const ServiceVerb: Readonly<{ PING: 'PING'; STATS: 'STATS'; INFO: 'INFO' }>;
/** One of the monitoring verbs. */
export type ServiceVerb = 'PING' | 'STATS' | 'INFO';

/** The `type` of the monitoring responses. */
export const ServiceResponseType: Readonly<{
  STATS: 'io.nats.micro.v1.stats_response';
  INFO: 'io.nats.micro.v1.info_response';
  PING: 'io.nats.micro.v1.ping_response';
}>;

/** An error reply of a service, or an error a handler throws to answer with its code. */
export class ServiceError extends Error {
  /** The error's code (Nats-Service-Error-Code); for the errorHandler, 500 for a handler failure, 0 for requests dropped over an endpoint's pending limits. */
  code: number;
  /** For the errorHandler: the endpoint's name. */
  endpoint?: string;
  /** For the errorHandler: the request's subject. */
  subject?: string;
  /** An error of `code` with `message` as its description. */
  constructor(code: number, message: string);
  /** Whether `msg` is an error reply (it has Nats-Service-Error-Code). */
  static isServiceError(msg: Msg): boolean;
  /** The ServiceError an error reply carries, or null. */
  static toServiceError(msg: Msg): ServiceError | null;
}

/** A service's configuration (nats.js's ServiceConfig). */
export interface ServiceConfig {
  /** The service's name: letters, digits, `-` and `_`. */
  name: string;
  /** Its SemVer 2.0 version. */
  version: string;
  /** A description for INFO. */
  description?: string;
  /** Metadata for PING, INFO and STATS. */
  metadata?: Record<string, string>;
  /** The endpoints' default queue group: "q" when absent, "" for none (every instance gets every request). */
  queue?: string;
  /**
   * An endpoint's STATS `data`. For a STATS request the library waits for
   * it on its own thread (at most 1 s, then the data is left out); the
   * event loop is never blocked.
   */
  statsHandler?: (endpoint: { name: string; subject: string }) => unknown | Promise<unknown>;
  /**
   * Told of handler failures (a throw or rejection: code 500) and requests dropped
   * over an endpoint's pending limits (EndpointOptions.pendingMsgsLimit: code 0, the message the slow-consumer text,
   * "slow consumer ..."). `err.endpoint` is the endpoint's name, `err.subject` the request's subject (for a dropped
   * request, the endpoint's). Called on the JS thread; a throw is reported as an uncaught exception. An extension of
   * nats.js's shape (nats.go's ErrorHandler).
   */
  errorHandler?: (err: ServiceError) => void;
}

/** An endpoint's handler: `err` is always null here (nats.js's signature); it may return a promise. A throw or rejection answers 500 (a ServiceError: its code), counts an error and calls the errorHandler; the endpoint keeps serving. */
export type ServiceHandler = (err: Error | null, msg: ServiceMsg) => void | Promise<void>;

/** How an endpoint is added. */
export interface EndpointOptions {
  /** The handler; without one the endpoint is an async iterator of ServiceMsg. */
  handler?: ServiceHandler;
  /** The subject (under the group's prefix); default: the name. */
  subject?: string;
  /** Its queue group; absent: the group's or service's, "": none. */
  queue?: string;
  /** Metadata for INFO. */
  metadata?: Record<string, string>;
  /**
   * The most requests the library queues for this endpoint unread (nats.go's WithEndpointPendingLimits; not in nats.js).
   * Absent: the connection's pendingMsgsLimit; negative: no limit. A request over it is dropped: it counts in the
   * endpoint's STATS (num_errors, last_error "slow consumer ..."), the errorHandler gets it (a ServiceError of code 0)
   * and the connection's 'error' event a SlowConsumerError, as for any subscription. With a handler the JS thread takes
   * requests as they arrive (a handler may be async), so the limit holds those that wait while the thread is busy; the
   * request a handler is busy with does not count (nats.go counts it: with the same limits a Node endpoint holds one
   * request more). An iterator holds up to this many more, taken but not yet read (as a subscription's iterator).
   * ServiceConfigError: 0,
   * or not an integer (NaN, an infinity, a fraction); TypeError: not a number. Only endpoints take it: in a
   * ServiceConfig it is refused with ServiceConfigError.
   */
  pendingMsgsLimit?: number;
  /** The most bytes of requests queued unread, as pendingMsgsLimit (absent: the connection's pendingBytesLimit; negative: no limit; 0 refused). */
  pendingBytesLimit?: number;
}

/** A request to an endpoint. */
export class ServiceMsg {
  /** The subject it was sent to. */
  readonly subject: string;
  /** Its reply subject ("" without one). */
  readonly reply: string;
  /** The payload. */
  readonly data: Uint8Array;
  /** Its headers, parsed on first access; undefined without any. */
  readonly headers: MsgHeaders | undefined;
  /** The payload decoded as UTF-8. */
  string(): string;
  /** The payload parsed as JSON. */
  json<T = unknown>(reviver?: (key: string, value: unknown) => unknown): T;
  /** Answers (the first answer ends its processing time); false without a reply subject. */
  respond(data?: Payload, opts?: { headers?: HeadersInit }): boolean;
  /** Answers with an error (Nats-Service-Error / Nats-Service-Error-Code, `data` as the body); counts as an error. */
  respondError(code: number, description: string, data?: Payload, opts?: { headers?: HeadersInit }): boolean;
}

/** An endpoint: with a handler its requests go there; without one it is an async iterator of ServiceMsg. */
export class ServiceEndpoint implements AsyncIterableIterator<ServiceMsg> {
  /** Its name. */
  readonly name: string;
  /** Its full subject (group prefix included). */
  readonly subject: string;
  /** Its queue group ("" for none). */
  readonly queue: string;
  /** Its metadata, as given. */
  readonly metadata: Record<string, string> | undefined;
  /** True once it has ended (stopped, or the service stopped). */
  readonly isClosed: boolean;
  /** Resolves once it has ended. */
  readonly closed: Promise<NatsError | undefined>;
  /** The next request (iterator form); done once the endpoint has ended. */
  next(): Promise<IteratorResult<ServiceMsg, undefined>>;
  /** Stops this endpoint (`break` in `for await` calls it). */
  return(): Promise<IteratorResult<ServiceMsg, undefined>>;
  /** The endpoint is its own iterator. */
  [Symbol.asyncIterator](): this;
  /** Stops this endpoint alone; it stays in INFO and STATS. */
  stop(): void;
  /** This endpoint's STATS entry. */
  stats(): NamedEndpointStats;
  /** The library's counters of this endpoint's requests (as Subscription.stats()): dropped over the pending limits, and pendingMsgs / pendingBytes queued in the library, not yet taken by the handler or the iterator. */
  iteratorStats(): SubscriptionStats;
}

/** A subject prefix, with its queue group, for endpoints. */
export class ServiceGroup {
  /** Adds an endpoint (see EndpointOptions); throws ServiceConfigError for a bad name or subject. */
  addEndpoint(name: string, opts?: ServiceHandler | EndpointOptions): ServiceEndpoint;
  /** A group below this one; `queue` undefined keeps this group's queue group, "" none. */
  addGroup(name?: string, queue?: string): ServiceGroup;
}

/** PING's answer. */
export interface ServiceIdentity {
  /** The response type. */
  type: string;
  /** The service's name. */
  name: string;
  /** The instance's id. */
  id: string;
  /** The service's version. */
  version: string;
  /** Its metadata. */
  metadata: Record<string, string>;
}

/** An endpoint in INFO. */
export interface EndpointInfo {
  /** Its name. */
  name: string;
  /** Its subject. */
  subject: string;
  /** Its queue group ("" for none). */
  queue_group: string;
  /** Its metadata, null without any. */
  metadata: Record<string, string> | null;
}

/** INFO's answer. */
export interface ServiceInfo extends ServiceIdentity {
  /** The description. */
  description: string;
  /** The endpoints. */
  endpoints: EndpointInfo[];
}

/** An endpoint in STATS. */
export interface NamedEndpointStats {
  /** Its name. */
  name: string;
  /** Its subject. */
  subject: string;
  /** Its queue group ("" for none). */
  queue_group: string;
  /** Requests answered (or dropped unanswered). */
  num_requests: number;
  /** Error replies and failed handlers. */
  num_errors: number;
  /** The last error, "code:description" ("" for none). */
  last_error: string;
  /** Nanoseconds from delivery to the first answer, summed. */
  processing_time: number;
  /** processing_time / num_requests. */
  average_processing_time: number;
  /** The statsHandler's data, if any. */
  data?: unknown;
}

/** STATS's answer. */
export interface ServiceStats extends ServiceIdentity {
  /** When the service started (or was reset), RFC 3339. */
  started: string;
  /** The endpoints. */
  endpoints: NamedEndpointStats[];
}

/** A running service (Svcm.add). It keeps running until stop() or its connection's close. */
export class Service {
  /** Adds an endpoint at the root (see ServiceGroup.addEndpoint). */
  addEndpoint(name: string, opts?: ServiceHandler | EndpointOptions): ServiceEndpoint;
  /** A group of endpoints under prefix `name`; `queue` undefined: the service's queue group, "" none. */
  addGroup(name?: string, queue?: string): ServiceGroup;
  /** The instance's id (a NUID). */
  readonly id: string;
  /** The service's name. */
  readonly name: string;
  /** Its version. */
  readonly version: string;
  /** Its description. */
  readonly description: string;
  /** Its metadata, as given. */
  readonly metadata: Record<string, string> | undefined;
  /** Resolves once stopped (by stop() or the connection's close): null, or the error given to stop(). */
  readonly stopped: Promise<Error | null>;
  /** True once stopped. */
  readonly isStopped: boolean;
  /** The INFO response. */
  info(): ServiceInfo;
  /** The PING response. */
  ping(): ServiceIdentity;
  /** The STATS response, each endpoint's data from the statsHandler. */
  stats(): Promise<ServiceStats>;
  /** Zeroes every endpoint's counters and restarts `started`. */
  reset(): void;
  /** Drains every endpoint (requests received are still handled; new ones find no responder); resolves as `stopped` does. */
  stop(err?: Error): Promise<Error | null>;
}

/** How a ServiceClient waits for answers (nats.js's RequestManyOptions). */
export interface ServiceClientOptions {
  /** Overall wait in ms (default 2000). */
  maxWait?: number;
  /** "stall" (default): end `stall` ms after the last answer; "count": after maxMessages; "timer": at maxWait. */
  strategy?: 'stall' | 'count' | 'timer';
  /** For "count". */
  maxMessages?: number;
  /** For "stall", in ms (default 300). */
  stall?: number;
}

/** Asks services for PING, INFO or STATS: each an async iterator of every instance's answer. */
export class ServiceClient {
  /** PING of every service, those named `name`, or one instance. */
  ping(name?: string, id?: string): Promise<AsyncIterableIterator<ServiceIdentity>>;
  /** STATS, as ping. */
  stats(name?: string, id?: string): Promise<AsyncIterableIterator<ServiceStats>>;
  /** INFO, as ping. */
  info(name?: string, id?: string): Promise<AsyncIterableIterator<ServiceInfo>>;
}

/** nats.js's Svcm: services over a connection. */
export class Svcm {
  /** The connection. */
  readonly nc: Connection;
  /** Services over `nc`. */
  constructor(nc: Connection);
  /** Starts a service; rejects with ServiceConfigError (bad name, version, queue group) before anything is sent. */
  add(config: ServiceConfig): Promise<Service>;
  /** A client for discovery; `prefix` replaces "$SRV". */
  client(opts?: ServiceClientOptions, prefix?: string): ServiceClient;
}
