// Types of natsio/jetstream: nats.js 3.x's @nats-io/jetstream shapes (see
// jetstream.js). Configurations and infos are the server's JSON.
/// <reference types="node" />
import type { MsgHdrs, NatsConnection, Payload, QueuedIterator } from './transport-node';

export declare const RetentionPolicy: { readonly Limits: 'limits'; readonly Interest: 'interest'; readonly Workqueue: 'workqueue' };
export type RetentionPolicy = (typeof RetentionPolicy)[keyof typeof RetentionPolicy];
export declare const DiscardPolicy: { readonly Old: 'old'; readonly New: 'new' };
export type DiscardPolicy = (typeof DiscardPolicy)[keyof typeof DiscardPolicy];
export declare const StorageType: { readonly File: 'file'; readonly Memory: 'memory' };
export type StorageType = (typeof StorageType)[keyof typeof StorageType];
export declare const DeliverPolicy: {
  readonly All: 'all';
  readonly Last: 'last';
  readonly New: 'new';
  readonly StartSequence: 'by_start_sequence';
  readonly StartTime: 'by_start_time';
  readonly LastPerSubject: 'last_per_subject';
};
export type DeliverPolicy = (typeof DeliverPolicy)[keyof typeof DeliverPolicy];
export declare const AckPolicy: {
  readonly None: 'none';
  readonly All: 'all';
  readonly Explicit: 'explicit';
  readonly FlowControl: 'flow_control';
  readonly NotSet: '';
};
export type AckPolicy = (typeof AckPolicy)[keyof typeof AckPolicy];
export declare const ReplayPolicy: { readonly Instant: 'instant'; readonly Original: 'original' };
export type ReplayPolicy = (typeof ReplayPolicy)[keyof typeof ReplayPolicy];
export declare const StoreCompression: { readonly None: 'none'; readonly S2: 's2' };
export type StoreCompression = (typeof StoreCompression)[keyof typeof StoreCompression];
export declare const PersistMode: { readonly Default: 'default'; readonly Async: 'async' };
export declare const PriorityPolicy: {
  readonly None: 'none';
  readonly Overflow: 'overflow';
  readonly PinnedClient: 'pinned_client';
  readonly Prioritized: 'prioritized';
};
export type PriorityPolicy = (typeof PriorityPolicy)[keyof typeof PriorityPolicy];
export declare const PubHeaders: Readonly<Record<string, string>>;
export declare const JsHeaders: Readonly<Record<string, string>>;
export declare const DirectMsgHeaders: Readonly<Record<string, string>>;
export declare const RepublishHeaders: Readonly<Record<string, string>>;
export declare const AdvisoryKind: Readonly<Record<string, string>>;
export declare const JetStreamApiCodes: {
  readonly ConsumerNotFound: 10014;
  readonly StreamNotFound: 10059;
  readonly JetStreamNotEnabledForAccount: 10039;
  readonly StreamWrongLastSequence: 10071;
  readonly StreamWrongLastSequenceUnknown: 10164;
  readonly NoMessageFound: 10037;
};

export interface ApiError {
  code: number;
  err_code?: number;
  description: string;
}
export declare class JetStreamError extends Error {
  constructor(message: string, options?: ErrorOptions);
}
export declare class JetStreamApiError extends Error {
  constructor(jsErr: ApiError, options?: ErrorOptions);
  get code(): number;
  get status(): number;
  apiError(): ApiError;
}

/** A stream's or consumer's configuration or info: the server's JSON. */
export type StreamConfig = { name: string; [k: string]: any };
export type StreamInfo = { config: StreamConfig; state: { messages: number; bytes: number; first_seq: number; last_seq: number; [k: string]: any }; [k: string]: any };
export type ConsumerConfig = { [k: string]: any };
export type ConsumerInfo = { name: string; stream_name: string; config: ConsumerConfig; num_pending: number; [k: string]: any };

export interface PubAck {
  stream: string;
  domain?: string;
  seq: number;
  duplicate: boolean;
}

export interface JetStreamPublishOptions {
  msgID: string;
  timeout: number;
  headers: MsgHdrs;
  ttl: string;
  expect: Partial<{ lastMsgID: string; streamName: string; lastSequence: number; lastSubjectSequence: number; lastSubjectSequenceSubject: string }>;
  /** A message schedule (server 2.12+; every, cron, predefined 2.14+): sent as the Nats-Schedule* headers. */
  schedule: ScheduleOptions;
  /** Cancels the schedule on `scheduleSubject` with this publish (Nats-Scheduler, Nats-Schedule-Next: purge). */
  cancelSchedule: { scheduleSubject: string };
  /** How many times the publish is attempted while no stream answers it ("no responders"), as nats.js's (default 1: no retry); then JetStreamNotEnabled. Unlike nats.js, a timeout is not retried, and the attempts are 250 ms apart (nats.js backs off: about 0, 250, 250, 500 ms...). */
  retries: number;
}

export type ScheduleSpec =
  | { at: Date | string }
  | { every: string }
  | { cron: string }
  | { predefined: '@yearly' | '@annually' | '@monthly' | '@weekly' | '@daily' | '@midnight' | '@hourly' };

export interface ScheduleOptions {
  specification: string | Date | ScheduleSpec;
  target: string;
  source?: string;
  ttl?: string;
  timezone?: string;
  rollup?: 'sub';
}

/** A consumption's status notification (ConsumerMessages.status()). */
export type ConsumerNotification =
  | { type: 'heartbeats_missed'; count: number }
  | { type: 'heartbeat'; lastConsumerSequence: number; lastStreamSequence: number }
  | { type: 'flow_control' }
  | { type: 'next'; options: Record<string, unknown> }
  | { type: 'discard'; messagesLeft: number; bytesLeft: number }
  | { type: 'consumer_deleted' | 'exceeded_limits' | 'debug'; code: number; description: string }
  | { type: 'no_responders'; code: number }
  | { type: 'consumer_pinned'; id: string }
  | { type: 'consumer_unpinned' }
  | { type: 'reset' | 'ordered_consumer_recreated'; name: string };

export interface DeliveryInfo {
  domain: string;
  stream: string;
  consumer: string;
  deliveryCount: number;
  redeliveryCount: number;
  streamSequence: number;
  deliverySequence: number;
  timestampNanos: number;
  pending: number;
  redelivered: boolean;
}

export interface JsMsg {
  redelivered: boolean;
  info: DeliveryInfo;
  seq: number;
  headers: MsgHdrs | undefined;
  data: Uint8Array;
  subject: string;
  sid: number;
  time: Date;
  timestamp: string;
  timestampNanos: bigint;
  ack(): void;
  nak(millis?: number): void;
  working(): void;
  term(reason?: string): void;
  ackAck(opts?: { timeout?: number }): Promise<boolean>;
  /** Acks and asks the consumer for the next message(s), delivered to `subj`. */
  next(subj?: string, opts?: Partial<{ batch: number; expires: number; no_wait: boolean }>): void;
  json<T = unknown>(reviver?: (this: unknown, key: string, value: unknown) => unknown): T;
  string(): string;
}

export interface StoredMsg {
  subject: string;
  seq: number;
  header: MsgHdrs;
  data: Uint8Array;
  time: Date;
  timestamp: string;
  lastSequence: number;
  pending: number;
  json<T = unknown>(reviver?: (this: unknown, key: string, value: unknown) => unknown): T;
  string(): string;
}

export interface ConsumerMessages extends AsyncIterable<JsMsg> {
  next(): Promise<IteratorResult<JsMsg>>;
  stop(err?: Error): void;
  close(): Promise<void | Error>;
  closed(): Promise<void | Error>;
  getProcessed(): number;
  getPending(): number;
  getReceived(): number;
  status(): AsyncIterable<ConsumerNotification>;
}

export interface PullOptions {
  max_messages: number;
  max_bytes: number;
  expires: number;
  idle_heartbeat: number;
  threshold_messages: number;
  threshold_bytes: number;
  /** ADR-42 priority group (required when the consumer has priority groups, and one of them). */
  group: string;
  /** Overflow policy: served only while the consumer has at least this many pending (with group). */
  min_pending: number;
  /** Overflow policy: served only while at least this many await acks (with group). */
  min_ack_pending: number;
  /**
   * Prioritized policy: 0 (the default, served first) to 9; a "prioritized" consumer serves its waiting requests lowest
   * number first. Sent only with a group, as nats.js; out of range or not an integer: InvalidArgumentError.
   */
  priority: number;
  callback: (m: JsMsg) => void;
}

export interface Consumer {
  isPullConsumer(): boolean;
  isPushConsumer(): boolean;
  info(cached?: boolean): Promise<ConsumerInfo>;
  delete(): Promise<boolean>;
  consume(opts?: Partial<PullOptions>): Promise<ConsumerMessages>;
  fetch(opts?: Partial<PullOptions>): Promise<ConsumerMessages>;
  next(opts?: Partial<{ expires: number }>): Promise<JsMsg | null>;
}

/** A push consumer (js.consumers.getPushConsumer): the server sends its
 * messages to its deliver subject; consume() subscribes there (one at a
 * time). */
export interface PushConsumer {
  isPullConsumer(): boolean;
  isPushConsumer(): boolean;
  info(cached?: boolean): Promise<ConsumerInfo>;
  delete(): Promise<boolean>;
  consume(opts?: Partial<{ callback: (m: JsMsg) => void }>): Promise<ConsumerMessages>;
}

/** What getBoundPushConsumer binds to: a push consumer created elsewhere,
 * by the values of its configuration. At least one of the three keys. */
export interface BoundPushConsumerOptions {
  /** The consumer's deliver subject, which consume() subscribes to. */
  deliver_subject: string;
  /** The consumer's deliver group: consume() subscribes in it. */
  deliver_group?: string;
  /** The consumer's idle_heartbeat, ns: from two intervals without a
   * message or heartbeat on, status() reports heartbeats_missed. */
  idle_heartbeat?: number;
  /** Allowed as in nats.js's type, and as there not used: the callback
   * that counts is consume()'s. */
  callback?: (m: JsMsg) => void;
}

/** A bound push consumer (js.consumers.getBoundPushConsumer): known only
 * by its deliver subject, so info() and delete() reject with
 * InvalidOperationError, as nats.js's do. */
export interface BoundPushConsumer extends PushConsumer {
  /** Subscribes to the deliver subject; heartbeats and flow-control
   * requests are handled and reported in status(). With
   * abort_on_missing_resource the consumer's deletion ends the
   * consumption with that status error (else it is only reported). */
  consume(opts?: Partial<{ callback: (m: JsMsg) => void; abort_on_missing_resource: boolean }>): Promise<ConsumerMessages>;
}

export interface OrderedConsumerOptions {
  filter_subjects: string[] | string;
  deliver_policy: DeliverPolicy;
  opt_start_seq: number;
  opt_start_time: string;
  headers_only: boolean;
}

export interface MsgRequest {
  seq?: number;
  last_by_subj?: string;
  next_by_subj?: string;
}

export interface Stream {
  name: string;
  info(cached?: boolean, opts?: { subjects_filter?: string }): Promise<StreamInfo>;
  getConsumer(name?: string | Partial<OrderedConsumerOptions>): Promise<Consumer>;
  getMessage(query: MsgRequest): Promise<StoredMsg | null>;
  deleteMessage(seq: number, erase?: boolean): Promise<boolean>;
  alternates(): Promise<unknown[]>;
  best(): Promise<Stream>;
  getPushConsumer(name?: string | Partial<OrderedConsumerOptions & { deliver_prefix: string }>): Promise<PushConsumer>;
  /** ConsumerAPI.reset for a consumer of this stream. */
  resetConsumer(name: string, seq?: number): Promise<ConsumerResetResponse>;
}

/** The server's answer to a consumer reset: the consumer's info and the
 * stream sequence its delivery restarts from. */
export type ConsumerResetResponse = ConsumerInfo & { reset_seq: number };

/** A message of a Direct Get; what it is comes from its headers. */
export interface DirectMsg extends StoredMsg {
  stream: string;
}

/** jsm.direct: reads through the stream's Direct Get API (allow_direct). */
export interface DirectStreamAPI {
  getMessage(stream: string, query: MsgRequest | { start_time: Date | string }): Promise<DirectMsg | null>;
  getBatch(stream: string, opts: { batch?: number; max_bytes?: number; seq?: number; start_time?: Date | string; next_by_subj?: string }): Promise<QueuedIterator<DirectMsg>>;
  getLastMessagesFor(stream: string, opts: { multi_last: string[]; batch?: number; up_to_seq?: number; up_to_time?: Date | string }): Promise<QueuedIterator<DirectMsg>>;
}

/** One JetStream advisory: the last token of its type, and its JSON. */
export interface Advisory {
  kind: string;
  data: { [k: string]: any };
}

/** An atomic batch publish (js.startBatch). */
export interface Batch {
  readonly id: string;
  readonly count: number;
  add(subj: string, payload?: Payload, opts?: Partial<JetStreamPublishOptions> & { ack?: false }): void;
  add(subj: string, payload: Payload | undefined, opts: Partial<JetStreamPublishOptions> & { ack: true }): Promise<void>;
  commit(subj: string, payload?: Payload, opts?: Partial<JetStreamPublishOptions>): Promise<PubAck & { batch: string; count: number }>;
}

export interface Lister<T> extends AsyncIterable<T> {
  next(): Promise<T[]>;
}

export interface PurgeResponse {
  success: boolean;
  purged: number;
}

export interface StreamAPI {
  add(cfg: StreamConfig): Promise<StreamInfo>;
  update(name: string, cfg?: Partial<StreamConfig>): Promise<StreamInfo>;
  info(name: string, opts?: { subjects_filter?: string }): Promise<StreamInfo>;
  delete(name: string): Promise<boolean>;
  purge(name: string, opts?: { filter?: string; seq?: number; keep?: number }): Promise<PurgeResponse>;
  list(subject?: string): Lister<StreamInfo>;
  names(subject?: string): Lister<string>;
  find(subject: string): Promise<string>;
  getMessage(stream: string, query: MsgRequest): Promise<StoredMsg | null>;
  deleteMessage(stream: string, seq: number, erase?: boolean): Promise<boolean>;
  get(name: string): Promise<Stream>;
}

export interface ConsumerAPI {
  add(stream: string, cfg: ConsumerConfig): Promise<ConsumerInfo>;
  update(stream: string, name: string, cfg: Partial<ConsumerConfig>): Promise<ConsumerInfo>;
  info(stream: string, name: string): Promise<ConsumerInfo>;
  delete(stream: string, name: string): Promise<boolean>;
  list(stream: string): Lister<ConsumerInfo>;
  pause(stream: string, name: string, until: Date): Promise<{ paused: boolean; pause_until?: string }>;
  resume(stream: string, name: string): Promise<{ paused: boolean; pause_until?: string }>;
  unpin(stream: string, name: string, group: string): Promise<void>;
  /** Moves delivery back to `seq`, or to the ack floor + 1 (server 2.14+). */
  reset(stream: string, name: string, seq?: number): Promise<ConsumerResetResponse>;
}

export interface JetStreamOptions {
  apiPrefix?: string;
  domain?: string;
  timeout?: number;
}

export interface JetStreamClient {
  nc: NatsConnection;
  consumers: {
    get(stream: string, name?: string | Partial<OrderedConsumerOptions>): Promise<Consumer>;
    getPushConsumer(stream: string, name?: string | Partial<OrderedConsumerOptions & { deliver_prefix: string }>): Promise<PushConsumer>;
    getConsumerFromInfo(ci: ConsumerInfo): Consumer;
    /** Binds to a push consumer created elsewhere by its deliver subject; no API call is made. InvalidArgumentError without deliver_subject, deliver_group or idle_heartbeat. */
    getBoundPushConsumer(opts: BoundPushConsumerOptions): Promise<BoundPushConsumer>;
  };
  streams: { get(name: string): Promise<Stream> };
  publish(subj: string, payload?: Payload, options?: Partial<JetStreamPublishOptions>): Promise<PubAck>;
  /** Starts an atomic batch publish with its first message (server 2.12+). */
  startBatch(subj: string, payload?: Payload, opts?: Partial<JetStreamPublishOptions>): Promise<Batch>;
  /** The JetStream API prefix ("$JS.API", or the domain's). */
  readonly apiPrefix: string;
  jetstreamManager(checkAPI?: boolean): Promise<JetStreamManager>;
  getOptions(): JetStreamOptions;
}

export interface JetStreamManager {
  streams: StreamAPI;
  consumers: ConsumerAPI;
  direct: DirectStreamAPI;
  getAccountInfo(): Promise<{ [k: string]: any }>;
  /** The account's JetStream advisories, as they come. */
  advisories(): AsyncIterable<Advisory>;
  jetstream(): JetStreamClient;
  getOptions(): JetStreamOptions;
}

export declare function jetstream(nc: NatsConnection, opts?: JetStreamOptions): JetStreamClient;
export declare function jetstreamManager(nc: NatsConnection, opts?: JetStreamOptions & { checkAPI?: boolean }): Promise<JetStreamManager>;
export declare function isPullConsumer(v: unknown): boolean;
export declare function isPushConsumer(v: unknown): boolean;
export type { QueuedIterator };
