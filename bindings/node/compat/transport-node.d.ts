// Types of natsio/transport-node: nats.js 3.x's @nats-io/transport-node
// shapes (see transport-node.js). The names follow nats.js.
/// <reference types="node" />

export type Payload = Uint8Array | string;

export declare const Match: { readonly Exact: 'exact'; readonly CanonicalMIME: 'canonical'; readonly IgnoreCase: 'insensitive' };
export type Match = (typeof Match)[keyof typeof Match];

export interface MsgHdrs extends Iterable<[string, string[]]> {
  readonly hasError: boolean;
  readonly status: string;
  readonly code: number;
  readonly description: string;
  get(k: string, match?: Match): string;
  last(k: string, match?: Match): string;
  set(k: string, v: string, match?: Match): void;
  append(k: string, v: string, match?: Match): void;
  has(k: string, match?: Match): boolean;
  keys(): string[];
  values(k: string, match?: Match): string[];
  delete(k: string, match?: Match): void;
  toRecord(): Record<string, string[]>;
}

export declare class MsgHdrsImpl implements MsgHdrs {
  constructor(code?: number, description?: string);
  headers: Map<string, string[]>;
  [Symbol.iterator](): IterableIterator<[string, string[]]>;
  readonly hasError: boolean;
  readonly status: string;
  readonly code: number;
  readonly description: string;
  size(): number;
  findKeys(k: string, match?: Match): string[];
  get(k: string, match?: Match): string;
  last(k: string, match?: Match): string;
  set(k: string, v: string, match?: Match): void;
  append(k: string, v: string, match?: Match): void;
  has(k: string, match?: Match): boolean;
  keys(): string[];
  values(k: string, match?: Match): string[];
  delete(k: string, match?: Match): void;
  toRecord(): Record<string, string[]>;
  static fromRecord(r: Record<string, string[]>): MsgHdrs;
}

export declare function headers(code?: number, description?: string): MsgHdrs;
export declare function canonicalMIMEHeaderKey(k: string): string;

export interface PublishOptions {
  reply?: string;
  headers?: MsgHdrs;
}

export interface Msg {
  subject: string;
  sid: number;
  reply?: string;
  data: Uint8Array;
  headers?: MsgHdrs;
  respond(payload?: Payload, opts?: PublishOptions): boolean;
  string(): string;
  json<T = unknown>(reviver?: (this: unknown, key: string, value: unknown) => unknown): T;
}

export type MsgCallback<T> = (err: Error | null, msg: T) => void;

export interface SubscriptionOptions {
  queue?: string;
  max?: number;
  timeout?: number;
  callback?: MsgCallback<Msg>;
}

export interface QueuedIterator<T> extends AsyncIterable<T> {
  next(): Promise<IteratorResult<T>>;
  getProcessed(): number;
  getPending(): number;
  getReceived(): number;
  stop?(err?: Error): void;
}

export interface Subscription extends AsyncIterable<Msg> {
  closed: Promise<void | Error>;
  unsubscribe(max?: number): void;
  drain(): Promise<void>;
  isDraining(): boolean;
  isClosed(): boolean;
  getSubject(): string;
  getReceived(): number;
  getProcessed(): number;
  getPending(): number;
  getID(): number;
  getMax(): number | undefined;
}

export interface RequestOptions {
  timeout: number;
  headers?: MsgHdrs;
}

export interface RequestManyOptions {
  strategy: 'timer' | 'count' | 'stall' | 'sentinel';
  maxWait: number;
  headers?: MsgHdrs;
  maxMessages?: number;
  stall?: number;
}

export interface Stats {
  inBytes: number;
  outBytes: number;
  inMsgs: number;
  outMsgs: number;
}

export type Status =
  | { type: 'disconnect'; server: string }
  | { type: 'reconnect'; server: string }
  | { type: 'update'; added?: string[]; deleted?: string[] }
  | { type: 'ldm'; server: string }
  | { type: 'reconnecting' }
  | { type: 'forceReconnect' }
  | { type: 'error'; error: Error }
  | { type: 'close' };

export interface ServerInfo {
  server_id: string;
  server_name: string;
  version: string;
  host: string;
  port: number;
  max_payload: number;
  headers?: boolean;
  jetstream?: boolean;
  [k: string]: unknown;
}

export interface SemVer {
  major: number;
  minor: number;
  micro: number;
}

/** One server of the pool, as getServers() lists it (a frozen copy). */
export interface Server {
  /** The host (an IPv6 address without brackets). */
  hostname: string;
  port: number;
  /** host:port, as setServers() takes it. */
  listen: string;
  /** The entry given for it (a discovered server's host:port). */
  src: string;
  /** Always '' (the core checks TLS names itself). */
  tlsName: string;
  /** Failed attempts to connect to it since last connected to it. */
  reconnects: number;
  /** When it was last tried, as far as this connection saw (ms since the epoch; 0: never). */
  lastConnect: number;
  /** Learned from the cluster rather than configured. */
  gossiped: boolean;
  /** Whether the connection has been connected to it. */
  didConnect: boolean;
}

export interface NatsConnection {
  readonly info?: ServerInfo;
  closed(): Promise<void | Error>;
  close(): Promise<void>;
  publish(subject: string, payload?: Payload, options?: PublishOptions): void;
  publishMessage(msg: Msg): void;
  respondMessage(msg: Msg): boolean;
  subscribe(subject: string, opts?: SubscriptionOptions): Subscription;
  request(subject: string, payload?: Payload, opts?: Partial<RequestOptions>): Promise<Msg>;
  requestMany(subject: string, payload?: Payload, opts?: Partial<RequestManyOptions>): Promise<QueuedIterator<Msg>>;
  flush(): Promise<void>;
  drain(): Promise<void>;
  isClosed(): boolean;
  isDraining(): boolean;
  getServer(): string;
  /** The server pool, in the order its servers are tried. */
  getServers(): ReadonlyArray<Server>;
  /**
   * Replaces the server pool with host:port entries (or URLs), shuffled
   * unless noRandomize; the connection stays up and the next reconnect
   * picks from the new pool (reconnect() moves now). A server kept keeps
   * its reconnect count. Throws InvalidArgumentError when empty.
   */
  setServers(servers: string[]): void;
  getServerVersion(): SemVer | undefined;
  readonly features: Features;
  status(): QueuedIterator<Status>;
  stats(): Stats;
  rtt(): Promise<number>;
  reconnect(): Promise<void>;
}

export type Authenticator = (nonce?: string) => unknown;

export interface TlsOptions {
  caFile?: string;
  certFile?: string;
  keyFile?: string;
  ca?: string;
  cert?: string;
  key?: string;
  handshakeFirst?: boolean;
}

export interface ConnectionOptions {
  servers?: string | string[];
  port?: number;
  name?: string;
  user?: string;
  pass?: string;
  token?: string;
  authenticator?: Authenticator | Authenticator[];
  noEcho?: boolean;
  timeout?: number;
  reconnect?: boolean;
  maxReconnectAttempts?: number;
  reconnectTimeWait?: number;
  reconnectJitter?: number;
  reconnectJitterTLS?: number;
  /** Milliseconds to wait before the next reconnect attempt (in place of
   * reconnectTimeWait and the jitter); asked before the last server of
   * each turn through the pool (with one server, before every attempt),
   * not on the first connect. */
  reconnectDelayHandler?: () => number;
  pingInterval?: number;
  maxPingOut?: number;
  noRandomize?: boolean;
  waitOnFirstConnect?: boolean;
  ignoreClusterUpdates?: boolean;
  inboxPrefix?: string;
  ignoreAuthErrorAbort?: boolean;
  tls?: TlsOptions | null;
  debug?: boolean;
}

export declare function connect(opts?: ConnectionOptions): Promise<NatsConnection>;

export declare function usernamePasswordAuthenticator(user: string | (() => string), pass?: string | (() => string)): Authenticator;
export declare function tokenAuthenticator(token: string | (() => string)): Authenticator;
export declare function nkeyAuthenticator(seed?: Uint8Array | (() => Uint8Array)): Authenticator;
export declare function credsAuthenticator(creds: Uint8Array | (() => Uint8Array)): Authenticator;
export declare function jwtAuthenticator(ajwt: string | (() => string), seed?: Uint8Array | (() => Uint8Array)): Authenticator;

export declare const Empty: Uint8Array;

export declare class Nuid {
  reset(): void;
  next(): string;
}
export declare const nuid: Nuid;
export declare function createInbox(prefix?: string): string;
export declare function nanos(millis: number): number;
export declare function millis(ns: number): number;

export interface Deferred<T> extends Promise<T> {
  resolve: (value?: T | PromiseLike<T>) => void;
  reject: (reason?: unknown) => void;
}
export declare function deferred<T = void>(): Deferred<T>;
export interface Delay extends Promise<void> {
  cancel: () => void;
}
export declare function delay(ms?: number): Delay;
export interface Timeout<T> extends Promise<T> {
  cancel: () => void;
}
/** Rejects with TimeoutError after `ms` unless cancelled. */
export declare function timeout<T>(ms: number, asyncTraces?: boolean): Timeout<T>;
/** `p`'s outcome, or TimeoutError after `millis` (default 1000). */
export declare function deadline<T>(p: Promise<T>, millis?: number): Promise<T>;
export interface Backoff {
  backoff(attempt: number): number;
}
/** The policy's delay (ms, jittered) for each attempt. */
export declare function backoff(policy?: number[]): Backoff;
export declare function collect<T>(iter: AsyncIterable<T>): Promise<T[]>;
export interface SyncIterator<T> {
  next(): Promise<T | null>;
}
export declare function syncIterator<T>(src: AsyncIterable<T>): SyncIterator<T>;
/** nats.js's default maxReconnectAttempts, which connect() applies. */
export declare const DEFAULT_MAX_RECONNECT_ATTEMPTS: number;
export declare function hasWsProtocol(opts?: ConnectionOptions): boolean;
/** connect() over WebSocket; a bare host:port is wss://. */
export declare function wsconnect(opts?: ConnectionOptions): Promise<NatsConnection>;
export declare function wsUrlParseFn(u: string, encrypted?: boolean): string;
/** One authenticator from the options' authenticator(s), token and user/pass. */
export declare function buildAuthenticator(opts: ConnectionOptions): Authenticator;
export declare const Feature: {
  readonly JS_KV: 'js_kv';
  readonly JS_OBJECTSTORE: 'js_objectstore';
  readonly JS_PULL_MAX_BYTES: 'js_pull_max_bytes';
  readonly JS_NEW_CONSUMER_CREATE_API: 'js_new_consumer_create';
  readonly JS_ALLOW_DIRECT: 'js_allow_direct';
  readonly JS_MULTIPLE_CONSUMER_FILTER: 'js_multiple_consumer_filter';
  readonly JS_SIMPLIFICATION: 'js_simplification';
  readonly JS_STREAM_CONSUMER_METADATA: 'js_stream_consumer_metadata';
  readonly JS_CONSUMER_FILTER_SUBJECTS: 'js_consumer_filter_subjects';
  readonly JS_STREAM_FIRST_SEQ: 'js_stream_first_seq';
  readonly JS_STREAM_SUBJECT_TRANSFORM: 'js_stream_subject_transform';
  readonly JS_STREAM_SOURCE_SUBJECT_TRANSFORM: 'js_stream_source_subject_transform';
  readonly JS_STREAM_COMPRESSION: 'js_stream_compression';
  readonly JS_DEFAULT_CONSUMER_LIMITS: 'js_default_consumer_limits';
  readonly JS_BATCH_DIRECT_GET: 'js_batch_direct_get';
  readonly JS_PRIORITY_GROUPS: 'js_priority_groups';
  readonly JS_CONSUMER_RESET: 'js_consumer_reset';
};
export type Feature = (typeof Feature)[keyof typeof Feature];
/** What a server version supports (nc.features is one). */
export declare class Features {
  constructor(v: string | SemVer);
  server: SemVer;
  features: Map<string, { min: string; ok: boolean }>;
  disabled: string[];
  update(v: string | SemVer): void;
  set(f: string, requires: string): void;
  get(f: string): { min: string; ok: boolean };
  supports(f: string): boolean;
  require(v: string | SemVer): boolean;
  disable(f: string): void;
  isDisabled(f: string): boolean;
  resetDisabled(): void;
}
export declare function parseSemVer(s?: string): SemVer;
/** -1, 0 or 1 as `a` is older than, the same as or newer than `b`. */
export declare function compare(a: SemVer, b: SemVer): number;

export declare class InvalidSubjectError extends Error {
  constructor(subject: string, options?: ErrorOptions);
}
export declare class InvalidArgumentError extends Error {
  constructor(message: string, options?: ErrorOptions);
  static format(property: string | string[], message: string, options?: ErrorOptions): InvalidArgumentError;
}
export declare class InvalidOperationError extends Error {
  constructor(message: string, options?: ErrorOptions);
}
export declare class UserAuthenticationExpiredError extends Error {
  constructor(message: string, options?: ErrorOptions);
}
export declare class AuthorizationError extends Error {
  constructor(message: string, options?: ErrorOptions);
}
export declare class ClosedConnectionError extends Error {
  constructor();
}
export declare class DrainingConnectionError extends Error {
  constructor();
}
export declare class ConnectionError extends Error {
  constructor(message: string, options?: ErrorOptions);
}
export declare class ProtocolError extends Error {
  constructor(message: string, options?: ErrorOptions);
}
export declare class RequestError extends Error {
  constructor(message?: string, options?: ErrorOptions);
  isNoResponders(): boolean;
}
export declare class TimeoutError extends Error {
  constructor(options?: ErrorOptions);
}
export declare class NoRespondersError extends Error {
  subject: string;
  constructor(subject: string, options?: ErrorOptions);
}
export declare class PermissionViolationError extends Error {
  operation: 'publish' | 'subscription';
  subject: string;
  queue?: string;
  constructor(message: string, operation: 'publish' | 'subscription', subject: string, queue?: string, options?: ErrorOptions);
}
export declare const errors: {
  AuthorizationError: typeof AuthorizationError;
  ClosedConnectionError: typeof ClosedConnectionError;
  ConnectionError: typeof ConnectionError;
  DrainingConnectionError: typeof DrainingConnectionError;
  InvalidArgumentError: typeof InvalidArgumentError;
  InvalidOperationError: typeof InvalidOperationError;
  InvalidSubjectError: typeof InvalidSubjectError;
  NoRespondersError: typeof NoRespondersError;
  PermissionViolationError: typeof PermissionViolationError;
  ProtocolError: typeof ProtocolError;
  RequestError: typeof RequestError;
  TimeoutError: typeof TimeoutError;
  UserAuthenticationExpiredError: typeof UserAuthenticationExpiredError;
};
