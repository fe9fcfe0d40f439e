// Type declarations of the natsio Node binding (require and import alike).
// They use Node's own types (EventEmitter, streams, Buffer): @types/node,
// a dependency of this package.
/// <reference types="node" />
import { EventEmitter } from 'node:events';
import { Readable, Writable } from 'node:stream';

export type Payload = string | Uint8Array | ArrayBuffer | ArrayBufferView | null | undefined;

/** Headers to send: a Map, a plain object, or [name, value] pairs; values may repeat. */
export type HeadersInit =
  | Map<string, string | string[]>
  | Record<string, string | string[]>
  | Array<[string, string | string[]]>;

export type PendingPolicy = 'dropNew' | 'dropOld' | 'block' | 'error' | 0 | 1 | 2 | 3;

/** Log levels of ConnectOptions.logLevel, least to most verbose. */
export type LogLevel = 'off' | 'error' | 'warn' | 'info' | 'debug' | 'trace';

export interface ConnectOptions {
  /** One URL, a comma-separated list, or an array (tried in order). Default nats://127.0.0.1:4222. */
  servers?: string | string[];
  /** Connection name shown by the server's monitoring. */
  name?: string;
  /** Timeout of each connection attempt, ms. */
  timeout?: number;
  /** Do not receive this connection's own publishes. */
  noEcho?: boolean;
  /** Prefix of reply inboxes (default "_INBOX"). */
  inboxPrefix?: string;
  /** Default pending limits of new subscriptions (0 or less: unlimited). */
  pendingLimits?: { msgs?: number; bytes?: number };
  pendingMsgsLimit?: number;
  pendingBytesLimit?: number;
  /** Default bound of drain(), ms. */
  drainTimeout?: number;
  /** Default bound of flush() and of a full write buffer, ms. */
  flushTimeout?: number;
  /** Default request timeout, ms. */
  requestTimeout?: number;
  pingInterval?: number;
  maxPingsOut?: number;
  /** Write buffer bound in bytes. */
  maxPendingSize?: number;
  maxControlLine?: number;
  user?: string;
  pass?: string;
  token?: string;

  /** Reconnect after losing the connection (default true). */
  reconnect?: boolean;
  /** Consecutive failed attempts per server before it leaves the pool (default 60; -1: unlimited). */
  maxReconnectAttempts?: number;
  /** Wait between attempts to one server, ms, doubling up to reconnectTimeWaitMax (defaults 2000, 8000). */
  reconnectTimeWait?: number;
  reconnectTimeWaitMax?: number;
  /** Random extra wait per attempt, ms, for plain and TLS connections (defaults 100, 1000). */
  reconnectJitter?: number;
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

  /** Require TLS (certificates are always verified); `true`: the system's trust roots. */
  tls?: boolean | TlsOptions;
}

export interface TlsOptions {
  /** PEM CA bundle to verify servers against (default: the system's roots). */
  caFile?: string;
  /** Client certificate and key (PEM, both or neither) for mutual TLS. */
  certFile?: string;
  keyFile?: string;
  /** Verify the server certificate against this name instead of the URL's host. */
  hostname?: string;
  /** Start TLS before the server's INFO (servers with handshake_first). */
  handshakeFirst?: boolean;
}

export interface PublishOptions {
  reply?: string;
  headers?: HeadersInit;
}

export interface SubscribeOptions {
  /** Queue group to join. */
  queue?: string;
  /** Callback mode; without it the subscription is an async iterator. */
  callback?: (err: NatsError | null, msg: Msg | undefined) => void;
  /** Pending message limit (0: the connection's default, negative: unlimited). */
  pendingMsgsLimit?: number;
  /** Pending byte limit (0: the connection's default, negative: unlimited). */
  pendingBytesLimit?: number;
  /** What happens when a pending limit is exceeded (default 'dropNew'). */
  policy?: PendingPolicy;
}

export interface RequestOptions {
  /** ms; 0 or absent: the connection's request timeout. */
  timeout?: number;
  headers?: HeadersInit;
}

export interface RequestManyOptions extends RequestOptions {
  /** Stop after this many replies. */
  maxMessages?: number;
  /** Stop when no reply arrives for this long (ms) after the first. */
  stall?: number;
}

export type ConnectionStatus = 'DISCONNECTED' | 'CONNECTING' | 'CONNECTED' | 'RECONNECTING' | 'DRAINING' | 'CLOSED';

export interface ConnectionStats {
  inMsgs: number;
  outMsgs: number;
  inBytes: number;
  outBytes: number;
  reconnects: number;
  errors: number;
}

/** Counters of the library's iterator (subscription, consume, watch). */
export interface SubscriptionStats {
  /** Items handed over by the library. */
  delivered: number;
  /** Items dropped by the pending-limit policy. */
  dropped: number;
  /** Items buffered in the library, not yet handed over. */
  pendingMsgs: number;
  pendingBytes: number;
  /** Times a pulling iterator (consume, watch) found its buffer full and paused pulling. */
  stalls: number;
}

/** Message headers: name -> values, names case-sensitive, wire order kept. */
export class MsgHeaders extends Map<string, string[]> {
  first(name: string): string | undefined;
  append(name: string, value: string): this;
}

export class Msg {
  readonly subject: string;
  readonly reply: string | undefined;
  readonly data: Uint8Array;
  readonly headers: MsgHeaders | undefined;
  /** Inline status of the header block (e.g. 503), or 0. */
  readonly status: number;
  string(): string;
  json<T = unknown>(): T;
  /** Publishes to the reply subject; throws NoReplySubjectError without one. */
  respond(data?: Payload, opts?: { headers?: HeadersInit }): void;
}

declare class MessageStream implements AsyncIterableIterator<Msg> {
  /** Resolves once closed: undefined, or the error that ended it. */
  readonly closed: Promise<NatsError | undefined>;
  next(): Promise<IteratorResult<Msg, undefined>>;
  return(): Promise<IteratorResult<Msg, undefined>>;
  [Symbol.asyncIterator](): this;
}

export class Subscription extends MessageStream {
  readonly subject: string;
  readonly queue: string | undefined;
  readonly sid: number;
  readonly isClosed: boolean;
  /** Stops at once; no callback runs after it returns. Idempotent. */
  unsubscribe(): void;
  unsubscribeAfter(max: number): void;
  drain(): Promise<void>;
  stats(): SubscriptionStats;
}

export type Replies = MessageStream;

export interface AsyncError extends NatsError {
  sid: number;
  subject: string | undefined;
}

export class Connection extends EventEmitter {
  readonly status: ConnectionStatus;
  readonly isClosed: boolean;
  readonly maxPayload: number;
  /** The server's latest INFO. */
  readonly info: Record<string, unknown> & { server_id: string; max_payload: number };
  readonly connectedUrl: string;
  newInbox(): string;
  publish(subject: string, data?: Payload, opts?: PublishOptions): void;
  subscribe(subject: string, opts?: SubscribeOptions): Subscription;
  request(subject: string, data?: Payload, opts?: RequestOptions): Promise<Msg>;
  requestMany(subject: string, data?: Payload, opts?: RequestManyOptions): Replies;
  flush(): Promise<void>;
  drain(timeout?: number): Promise<void>;
  close(): Promise<void>;
  stats(): ConnectionStats;
  /** The server pool: configured and discovered URLs. */
  readonly servers: string[];
  /** Drops the connection and reconnects; subscriptions are restored. Returns at once. */
  forceReconnect(): void;
  /** One PING/PONG round trip, in microseconds (a flush timed by the library thread that completes it). */
  rtt(): Promise<number>;
  /** A JetStream context over this connection (sends nothing; throws ConfigError for a bad domain or prefix). */
  jetstream(opts?: JetStreamOptions): JetStreamClient;

  /** Asynchronous errors (slow consumer, server -ERR, lost connection, drain timeout). */
  on(event: 'error', listener: (err: AsyncError) => void): this;
  /** Lifecycle events, in order; 'close' is always last. */
  on(event: 'connect' | 'reconnect' | 'ldm', listener: (url: string) => void): this;
  on(event: 'disconnect', listener: (err: NatsError | null) => void): this;
  on(event: 'servers', listener: (discovered: string[]) => void): this;
  on(event: 'close', listener: () => void): this;
  on(event: string | symbol, listener: (...args: any[]) => void): this;
}

export function connect(opts?: ConnectOptions): Promise<Connection>;

// ---------------------------------------------------------------------------
// JetStream and Key-Value. Every method that talks to the server returns a
// promise settled from the library's completion token (nothing waits on
// the JS thread or the libuv threadpool); errors (argument TypeErrors
// included) reject the promise.

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
}

export interface JetStreamPublishOptions {
  /** Nats-Msg-Id: a second message with this id within the duplicate window is dropped (ack.duplicate). */
  msgID?: string;
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
  /** Per-message TTL (the stream needs allow_msg_ttl): whole seconds, 'never', or '90s', '5m', '1h30m'. */
  ttl?: number | string;
  headers?: HeadersInit;
  /** How long to wait for the ack, ms (default: the context's). */
  timeout?: number;
}

export interface PubAck {
  stream: string;
  seq: number;
  duplicate: boolean;
  domain?: string;
}

/** StreamConfig / KeyValueConfig / infos: the server's JSON, field names as the server spells them. */
export type JsonObject = Record<string, any>;

export class StoredMsg {
  readonly subject: string;
  readonly seq: number;
  /** When the stream stored it. */
  readonly time: Date;
  readonly data: Buffer;
  readonly headers: MsgHeaders | undefined;
  string(): string;
  json<T = unknown>(): T;
}

export interface Streams {
  /** Creates a stream (durations: ns or strings like "1h"); resolves with its StreamInfo. */
  add(cfg: JsonObject): Promise<JsonObject>;
  update(cfg: JsonObject): Promise<JsonObject>;
  createOrUpdate(cfg: JsonObject): Promise<JsonObject>;
  info(name: string): Promise<JsonObject>;
  delete(name: string): Promise<true>;
  purge(name: string, opts?: { filter?: string; seq?: number; keep?: number }): Promise<{ success: true; purged: number }>;
  /** Names of all streams, or of those holding `subject`. */
  names(subject?: string): Promise<string[]>;
  getMessage(stream: string, query: number | { seq: number | bigint } | { lastBySubject: string }): Promise<StoredMsg>;
  /** `erase` (default true) also overwrites the bytes on disk. */
  deleteMessage(stream: string, seq: number | bigint, erase?: boolean): Promise<true>;
}

export type KvOperation = 'PUT' | 'DEL' | 'PURGE';

export class KvEntry {
  readonly bucket: string;
  readonly key: string;
  readonly value: Buffer;
  readonly revision: number;
  readonly operation: KvOperation;
  readonly created: Date;
  /** Newer revisions of the key (0 for get). */
  readonly delta: number;
  string(): string;
  json<T = unknown>(): T;
}

export interface KvStatus {
  bucket: string;
  values: number;
  history: number;
  /** ms; 0: none. */
  ttl: number;
  bytes: number;
  storage: string;
  /** The backing stream's StreamInfo. */
  streamInfo: JsonObject;
}

export type KvValue = string | Uint8Array | ArrayBuffer | ArrayBufferView;

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
  readonly isClosed: boolean;
  /** Ends the iteration at once (a pending next() resolves done) and deletes the server-side consumer. Idempotent. */
  stop(): void;
  /** Counters of the library's buffer. */
  stats(): SubscriptionStats;
  next(): Promise<IteratorResult<KvEntry, undefined>>;
  /** Breaking out of `for await` stops. */
  return(): Promise<IteratorResult<KvEntry, undefined>>;
  [Symbol.asyncIterator](): this;
}

export class KV {
  readonly bucket: string;
  readonly isClosed: boolean;
  /** Resolves with the new revision. */
  put(key: string, value: KvValue): Promise<number>;
  /** KeyExistsError if the key has a live value. */
  create(key: string, value: KvValue): Promise<number>;
  /** WrongLastSequenceError unless the key's latest revision is `last`. */
  update(key: string, value: KvValue, last: number | bigint): Promise<number>;
  /** KeyNotFoundError, or KeyDeletedError when the latest revision is a delete/purge marker. */
  get(key: string, opts?: { revision?: number | bigint }): Promise<KvEntry>;
  getRevision(key: string, revision: number | bigint): Promise<KvEntry>;
  delete(key: string, opts?: { last?: number | bigint }): Promise<void>;
  purge(key: string, opts?: { last?: number | bigint }): Promise<void>;
  status(): Promise<KvStatus>;
  /** The keys holding a value now (deleted and purged keys left out). */
  keys(): Promise<string[]>;
  /** Every kept revision of `key`, oldest first, markers included; KeyNotFoundError if none. */
  history(key: string): Promise<KvEntry[]>;
  /** Watches the bucket (see KvWatcher); InvalidKeyError for a bad pattern. */
  watch(opts?: KvWatchOptions): Promise<KvWatcher>;
  /** Frees the handle (the bucket stays); later calls reject with IllegalStateError. Idempotent. */
  close(): void;
}

export interface KvManager {
  /** A KeyValueConfig ({bucket, history, ttl, storage, ...}), or (bucket, config). An identical bucket is bound. */
  create(cfg: JsonObject): Promise<KV>;
  create(bucket: string, cfg?: JsonObject): Promise<KV>;
  update(cfg: JsonObject): Promise<KV>;
  update(bucket: string, cfg?: JsonObject): Promise<KV>;
  createOrUpdate(cfg: JsonObject): Promise<KV>;
  createOrUpdate(bucket: string, cfg?: JsonObject): Promise<KV>;
  /** BucketNotFoundError if it does not exist. */
  bind(bucket: string): Promise<KV>;
  delete(bucket: string): Promise<true>;
}

// ---------------------------------------------------------------------------
// Object Store

/** An object's name (put: given separately or as `name`) and what is stored with it. nats.js ObjectStoreMeta names work too. */
export interface ObjectMeta {
  /** put: the object's name; updateMeta: the new name (a rename). */
  name?: string;
  description?: string;
  headers?: HeadersInit;
  metadata?: Record<string, string>;
  /** put only: bytes per chunk (default 131072). Same as chunk_size or options.max_chunk_size. */
  chunkSize?: number;
  chunk_size?: number;
  options?: { max_chunk_size?: number };
}

export interface ObjectLink {
  bucket: string;
  /** Absent for a link to a whole bucket. */
  name?: string;
}

/** What an object is; infos compare and print as plain data. */
export class ObjectInfo {
  readonly name: string;
  readonly description: string | undefined;
  readonly bucket: string;
  /** The id of the chunks' subject. */
  readonly nuid: string;
  readonly size: number;
  readonly chunks: number;
  /** 'SHA-256=<base64url>'; '' when none (a link). */
  readonly digest: string;
  readonly deleted: boolean;
  readonly mtime: Date;
  /** ns since the Unix epoch. */
  readonly mtimeNanos: bigint;
  readonly headers: MsgHeaders | undefined;
  readonly metadata: Record<string, string>;
  readonly options: { link?: ObjectLink; max_chunk_size?: number };
  readonly isLink: boolean;
  readonly isDeleted: boolean;
}

export interface ObjectStoreStatus {
  bucket: string;
  description: string | undefined;
  /** ms; 0: objects never expire. */
  ttl: number;
  storage: string;
  replicas: number;
  /** Bytes stored. */
  size: number;
  sealed: boolean;
  compression: boolean;
  metadata: Record<string, string>;
  backingStore: 'JetStream';
  streamInfo: JsonObject;
}

export type ObjectData =
  | KvValue
  | null
  | undefined
  | NodeJS.ReadableStream
  | AsyncIterable<Uint8Array | string>
  | Iterable<Uint8Array | string>;

/** An object's bytes (store.get): ends once size, chunk count and digest were verified, else fails (DigestMismatchError, ...). */
export class ObjectReadStream extends Readable {
  readonly info: ObjectInfo;
}

/** Stores one object (store.createWriteStream): end() finishes it (`info` is set before 'finish'); destroy() or an error aborts it, an earlier object of the name stays. */
export class ObjectWriteStream extends Writable {
  readonly name: string;
  readonly info: ObjectInfo | undefined;
}

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
  readonly bucket: string;
  /** Resolves true once the iteration has gone past the initial infos, false if the watch ended first. Never rejects. */
  readonly initialized: Promise<boolean>;
  readonly closed: Promise<NatsError | undefined>;
  readonly isClosed: boolean;
  /** Ends the iteration at once. Idempotent. */
  stop(): void;
  stats(): SubscriptionStats;
  next(): Promise<IteratorResult<ObjectInfo, undefined>>;
  return(): Promise<IteratorResult<ObjectInfo, undefined>>;
  [Symbol.asyncIterator](): this;
}

export interface ObjectGetOptions {
  /** Also a deleted object (else ObjectDeletedError). */
  showDeleted?: boolean;
}

export class ObjectStore {
  readonly bucket: string;
  readonly isClosed: boolean;
  /** Stores bytes, or streams a Readable / (async) iterable through the library's writer; replaces an object of that name once complete. */
  put(meta: string | ObjectMeta, data: ObjectData): Promise<ObjectInfo>;
  putBytes(meta: string | ObjectMeta, data: KvValue | null | undefined): Promise<ObjectInfo>;
  putString(meta: string | ObjectMeta, text: string): Promise<ObjectInfo>;
  /** Throws InvalidObjectNameError at once for an empty name. */
  createWriteStream(meta: string | ObjectMeta): ObjectWriteStream;
  /** Follows a link. ObjectNotFoundError, or ObjectDeletedError (a kind of it). */
  get(name: string, opts?: ObjectGetOptions): Promise<{ info: ObjectInfo; stream: ObjectReadStream }>;
  getBytes(name: string, opts?: ObjectGetOptions): Promise<Buffer>;
  /** The object's own info (a link is not followed). */
  info(name: string, opts?: ObjectGetOptions): Promise<ObjectInfo>;
  /** A `name` renames (ObjectExistsError onto a live object). */
  updateMeta(name: string, meta: ObjectMeta): Promise<void>;
  delete(name: string): Promise<void>;
  list(opts?: { includeDeleted?: boolean; showDeleted?: boolean }): Promise<ObjectInfo[]>;
  watch(opts?: ObjectWatchOptions): Promise<ObjectWatcher>;
  /** ObjectLinkError for a deleted target or a link to a link; ObjectExistsError if a live object (not a link) has the name. */
  addLink(name: string, target: ObjectInfo | { bucket: string; name: string }): Promise<ObjectInfo>;
  addBucketLink(name: string, bucket: string | ObjectStore): Promise<ObjectInfo>;
  /** Later changes reject with BucketSealedError. */
  seal(): Promise<ObjectStoreStatus>;
  status(): Promise<ObjectStoreStatus>;
  /** Frees the handle (the bucket stays). Idempotent. */
  close(): void;
}

/** js.objectStores; the same methods are on the JetStream context. */
export interface ObjectStoreManager {
  /** An ObjectStoreConfig ({bucket, description, ttl, max_bytes, storage, replicas, placement, compression, metadata}), or (bucket, config). */
  createObjectStore(cfg: JsonObject): Promise<ObjectStore>;
  createObjectStore(bucket: string, cfg?: JsonObject): Promise<ObjectStore>;
  updateObjectStore(cfg: JsonObject): Promise<ObjectStore>;
  updateObjectStore(bucket: string, cfg?: JsonObject): Promise<ObjectStore>;
  createOrUpdateObjectStore(cfg: JsonObject): Promise<ObjectStore>;
  createOrUpdateObjectStore(bucket: string, cfg?: JsonObject): Promise<ObjectStore>;
  /** BucketNotFoundError if it does not exist. */
  objectStore(bucket: string): Promise<ObjectStore>;
  deleteObjectStore(bucket: string): Promise<true>;
  objectStoreNames(): Promise<string[]>;
  objectStoreStatuses(): Promise<ObjectStoreStatus[]>;
}

/** Delivery metadata of a JsMsg, parsed from its ack subject. */
export class JsMsgInfo {
  readonly stream: string;
  readonly consumer: string;
  readonly domain: string | undefined;
  /** How many times the message was delivered (1 the first time). */
  readonly deliveryCount: number;
  readonly redelivered: boolean;
  readonly streamSequence: number;
  readonly consumerSequence: number;
  /** When the stream stored it (millisecond precision). */
  readonly timestamp: Date;
  /** When the stream stored it, ns since the Unix epoch. */
  readonly timestampNanos: bigint;
  /** Messages left for the consumer after this one. */
  readonly pending: number;
}

/**
 * A message from a pull consumer. It owns its library message (freed by the
 * garbage collector); a second ack, nak or term throws MessageAlreadyAckedError.
 * ack/nak/term/working only buffer (like publish) and throw on error;
 * ackAck resolves when the server confirmed the ack.
 */
export class JsMsg {
  readonly subject: string;
  /** The ack subject. */
  readonly reply: string | undefined;
  readonly data: Buffer;
  readonly headers: MsgHeaders | undefined;
  readonly info: JsMsgInfo;
  /** Same as info. */
  readonly metadata: JsMsgInfo;
  /** The stream sequence. */
  readonly seq: number;
  readonly redelivered: boolean;
  string(): string;
  json<T = unknown>(): T;
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

export interface FetchOptions {
  /** Messages at most (default 100). */
  maxMessages?: number;
  /** Bytes at most (default: no limit). */
  maxBytes?: number;
  /** How long the server holds the request open, ms (default 5000). */
  expires?: number;
  /** Only the messages available now (possibly none). */
  noWait?: boolean;
  /** Idle heartbeat interval, ms (default none). */
  heartbeat?: number;
}

export interface ConsumeOptions {
  /** Messages kept requested (and buffered) at most (default 500). */
  maxMessages?: number;
  /** Lifetime of each pull request, ms (default 30000, at least 1000). */
  expires?: number;
  /** Idle heartbeat interval, ms (default half of expires, at most 15000; at most half of expires). */
  heartbeat?: number;
}

/**
 * A continuous pull (js.consume): an async iterator of JsMsg that goes on
 * across idle periods until stop(), `break`, nc.close() (the loop ends) or
 * the consumer's deletion (the loop throws ConsumerDeletedError or
 * ConsumerNotFoundError). The library keeps maxMessages pulled and
 * buffered from the moment js.consume() resolves, whether or not the loop
 * reads, and pulls again at once after a reconnect.
 */
export class ConsumerMessages implements AsyncIterableIterator<JsMsg> {
  readonly stream: string;
  readonly consumer: string;
  /** Resolves once the consumption is over and its library handle freed: undefined, or the error that ended it. */
  readonly closed: Promise<NatsError | undefined>;
  readonly isClosed: boolean;
  /**
   * Ends the iteration at once (a pending next() resolves done) and stops
   * pulling; messages buffered but not yielded are not acked (the server
   * redelivers them after the ack wait). Idempotent.
   */
  stop(): void;
  /** Counters of the library's buffer. */
  stats(): SubscriptionStats;
  next(): Promise<IteratorResult<JsMsg, undefined>>;
  /** Breaking out of `for await` stops. */
  return(): Promise<IteratorResult<JsMsg, undefined>>;
  [Symbol.asyncIterator](): this;
}

export interface Consumers {
  /** Creates a pull consumer from a ConsumerConfig (server field names); resolves with its ConsumerInfo. */
  add(stream: string, cfg: JsonObject): Promise<JsonObject>;
  /** ConsumerNotFoundError if it does not exist. */
  update(stream: string, cfg: JsonObject): Promise<JsonObject>;
  createOrUpdate(stream: string, cfg: JsonObject): Promise<JsonObject>;
  info(stream: string, name: string): Promise<JsonObject>;
  /** A fetch waiting on it rejects with ConsumerDeletedError. */
  delete(stream: string, name: string): Promise<true>;
  names(stream: string): Promise<string[]>;
}

export interface JetStreamClient extends ObjectStoreManager {}

export class JetStreamClient {
  readonly nc: Connection;
  readonly streams: Streams;
  readonly consumers: Consumers;
  readonly kv: KvManager;
  readonly objectStores: ObjectStoreManager;
  readonly isClosed: boolean;
  /** Asynchronous publishes awaiting their ack or room to be sent. */
  readonly publishAsyncPending: number;
  /** Publishes and waits for the ack (default timeout: the context's); "no responders" is retried twice 250 ms apart. */
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
  accountInfo(): Promise<JsonObject>;
  /** Pulls a batch (possibly empty) from a pull consumer. */
  fetch(stream: string, consumer: string, opts?: FetchOptions): Promise<JsMsg[]>;
  /** One message; NoMessagesError when none arrives within `timeout` ms (default: the context's timeout; 0: only one available now). */
  next(stream: string, consumer: string, opts?: number | { timeout?: number }): Promise<JsMsg>;
  /** Consumes continuously (see ConsumerMessages); ConsumerNotFoundError if there is no such consumer. */
  consume(stream: string, consumer: string, opts?: ConsumeOptions): Promise<ConsumerMessages>;
  /** Frees the context (acks of sent publishes still arrive; KV handles live on). Idempotent. */
  close(): void;
}

export const version: string;

export const Status: Readonly<Record<string, number>>;

export class NatsError extends Error {
  /** natsio status number, e.g. 200. */
  readonly status: number;
  /** Status name, e.g. 'TIMEOUT', 'NO_RESPONDERS'. */
  readonly code: string;
  constructor(message: string, status: number, code: string);
}

declare class CodedError extends NatsError {
  constructor(message: string);
}
export class NullArgumentError extends CodedError {}
export class InvalidUtf8Error extends CodedError {}
export class InvalidArgumentError extends CodedError {}
export class BadSubjectError extends CodedError {}
export class BadQueueNameError extends CodedError {}
export class BadHeadersError extends CodedError {}
export class ConfigError extends CodedError {}
export class IllegalStateError extends CodedError {}
export class NotFoundError extends CodedError {}
export class InternalError extends CodedError {}
export class TimeoutError extends CodedError {}
export class ConnectionClosedError extends CodedError {}
export class NoServersAvailableError extends CodedError {}
export class IoError extends CodedError {}
export class DrainTimeoutError extends CodedError {}
export class CancelledError extends CodedError {}
export class ReconnectBufExceededError extends CodedError {}
export class ProtocolError extends CodedError {}
export class ParserError extends CodedError {}
export class MaxControlLineExceededError extends CodedError {}
export class MaxPayloadExceededError extends CodedError {}
export class ServerError extends CodedError {}
export class StaleConnectionError extends CodedError {}
export class AuthorizationViolationError extends CodedError {}
export class AuthenticationExpiredError extends CodedError {}
export class PermissionsViolationError extends CodedError {}
export class MaxSubscriptionsExceededError extends CodedError {}
export class NoRespondersError extends CodedError {}
export class NoReplySubjectError extends CodedError {}
export class SubscriptionClosedError extends CodedError {}
export class SlowConsumerError extends CodedError {}
export class JetStreamError extends CodedError {}
export class JetStreamApiError extends CodedError {}
export class JetStreamNotEnabledError extends CodedError {}
export class NoStreamResponseError extends CodedError {}
export class StreamNotFoundError extends CodedError {}
export class StreamNameInUseError extends CodedError {}
export class ConsumerNotFoundError extends CodedError {}
export class MessageNotFoundError extends CodedError {}
export class WrongLastSequenceError extends CodedError {}
export class TooManyStalledMsgsError extends CodedError {}
export class AsyncPublishTimeoutError extends CodedError {}
/** A fetch or next ended without a message (next rejects with it; fetch resolves []). */
export class NoMessagesError extends CodedError {}
/** The consumer was deleted while a fetch or consume waited on it. */
export class ConsumerDeletedError extends CodedError {}
/** A second ack, nak or term of the same JsMsg. */
export class MessageAlreadyAckedError extends CodedError {}
/** The message has no JetStream ack subject. */
export class NotJsMessageError extends CodedError {}
export class BucketNotFoundError extends CodedError {}
export class BucketExistsError extends CodedError {}
export class KeyNotFoundError extends CodedError {}
export class KeyDeletedError extends CodedError {}
export class KeyExistsError extends CodedError {}
export class InvalidBucketNameError extends CodedError {}
export class InvalidKeyError extends CodedError {}
/** No object of that name. */
export class ObjectNotFoundError extends CodedError {}
/** Only the object's tombstone is left; a kind of ObjectNotFoundError. */
export class ObjectDeletedError extends ObjectNotFoundError {}
/** A live object has that name (rename or link onto it). */
export class ObjectExistsError extends CodedError {}
/** The bytes read do not match the recorded SHA-256 digest, size or chunk count. */
export class DigestMismatchError extends CodedError {}
/** A link to a deleted object or to a link, or a bucket link read as an object. */
export class ObjectLinkError extends CodedError {}
/** An empty object name; a kind of ConfigError. */
export class InvalidObjectNameError extends ConfigError {}
/** The bucket is sealed: readable, no longer changeable. */
export class BucketSealedError extends CodedError {}
