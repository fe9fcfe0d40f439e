// Types of natsio/kv: nats.js 3.x's @nats-io/kv shapes (see kv.js).
import type { NatsConnection, Payload, QueuedIterator } from './transport-node';
import type { JetStreamClient, Lister, StreamInfo } from './jetstream';

export declare const KvWatchInclude: { readonly LastValue: ''; readonly AllHistory: 'history'; readonly UpdatesOnly: 'updates' };
export type KvWatchInclude = (typeof KvWatchInclude)[keyof typeof KvWatchInclude];

export interface KvEntry {
  bucket: string;
  key: string;
  rawKey: string;
  value: Uint8Array;
  created: Date;
  revision: number;
  delta?: number;
  operation: 'PUT' | 'DEL' | 'PURGE';
  length: number;
  json<T = unknown>(): T;
  string(): string;
}
export type KvWatchEntry = KvEntry & { isUpdate: boolean };

export interface KvWatchOptions {
  key?: string | string[];
  headers_only?: boolean;
  ignoreDeletes?: boolean;
  include?: KvWatchInclude;
  resumeFromRevision?: number;
}

export interface KvStatus {
  bucket: string;
  values: number;
  history: number;
  ttl: number;
  backingStore: string;
  storage: string;
  replicas: number;
  description: string;
  size: number;
  streamInfo: StreamInfo;
  /** The stream's placement ({cluster: '', tags: []} when it has none). */
  placement: { cluster: string; tags: string[] };
  /** The stream's republish ({src: '', dest: ''} when it has none). */
  republish: { src: string; dest: string; headers_only?: boolean };
  [k: string]: unknown;
}

/** A key codec, applied to each '.'-separated token ('*' and '>' kept). */
export type KvKeyCodec = { encode(k: string): string; decode(k: string): string };
/** A value codec. */
export type KvPayloadCodec = { encode(v: Payload): Uint8Array; decode(d: Uint8Array): Uint8Array };
export type KvCodecs = { key: KvKeyCodec; value: KvPayloadCodec };
/** nats.js's Base64KeyCodec (standard base64 per token, padded), run by the library. */
export declare function Base64KeyCodec(): KvKeyCodec;
export declare function NoopKvCodecs(): KvCodecs;

export interface KvOptions {
  /** Key and value codecs; a program's own run in JS around the calls. */
  codec: Partial<KvCodecs>;
  history: number;
  ttl: number;
  max_bytes: number;
  maxValueSize: number;
  storage: 'file' | 'memory';
  replicas: number;
  description: string;
  compression: boolean;
  metadata: Record<string, string>;
  markerTTL: number;
  /** Makes the bucket a read-only copy of another (nats.js's StreamSource:
   * name with or without `KV_`, domain or external, opt_start_seq, ...);
   * wins over sources. Its handle reads the copied keys; writes go to the
   * mirrored bucket. */
  mirror: KvStreamSource;
  /** Buckets whose keys are copied into this one (each `name` gets `KV_`;
   * the keys of another bucket are mapped into this bucket's, as nats.js
   * maps them). */
  sources: KvStreamSource[];
  [k: string]: unknown;
}

/** nats.js's StreamSource, as KvOptions.mirror and sources take it. */
export interface KvStreamSource {
  name: string;
  /** The JetStream domain the bucket lives in (becomes external). */
  domain?: string;
  external?: { api: string; deliver?: string };
  opt_start_seq?: number;
  opt_start_time?: string;
  filter_subject?: string;
  subject_transforms?: { src: string; dest: string }[];
  [k: string]: unknown;
}

export interface KV {
  get(k: string, opts?: { revision: number }): Promise<KvEntry | null>;
  put(k: string, data: Payload, opts?: Partial<{ previousSeq: number; timeout: number }>): Promise<number>;
  create(k: string, data: Payload, markerTTL?: string): Promise<number>;
  update(k: string, data: Payload, version: number): Promise<number>;
  delete(k: string, opts?: Partial<{ previousSeq: number }>): Promise<void>;
  purge(k: string, opts?: Partial<{ previousSeq: number; ttl: string }>): Promise<void>;
  keys(filter?: string | string[]): Promise<QueuedIterator<string>>;
  history(opts?: { key?: string | string[] }): Promise<QueuedIterator<KvWatchEntry>>;
  watch(opts?: KvWatchOptions): Promise<QueuedIterator<KvWatchEntry>>;
  status(): Promise<KvStatus>;
  destroy(): Promise<boolean>;
  close(): Promise<void>;
}

export declare class Bucket implements KV {
  readonly bucket: string;
  get(k: string, opts?: { revision: number }): Promise<KvEntry | null>;
  put(k: string, data: Payload, opts?: Partial<{ previousSeq: number; timeout: number }>): Promise<number>;
  create(k: string, data: Payload, markerTTL?: string): Promise<number>;
  update(k: string, data: Payload, version: number): Promise<number>;
  delete(k: string, opts?: Partial<{ previousSeq: number }>): Promise<void>;
  purge(k: string, opts?: Partial<{ previousSeq: number; ttl: string }>): Promise<void>;
  keys(filter?: string | string[]): Promise<QueuedIterator<string>>;
  history(opts?: { key?: string | string[] }): Promise<QueuedIterator<KvWatchEntry>>;
  watch(opts?: KvWatchOptions): Promise<QueuedIterator<KvWatchEntry>>;
  status(): Promise<KvStatus>;
  destroy(): Promise<boolean>;
  close(): Promise<void>;
}

export declare class Kvm {
  constructor(nc: JetStreamClient | NatsConnection);
  /** The JetStreamClient given, or one made for the NatsConnection given. */
  readonly js: JetStreamClient;
  create(name: string, opts?: Partial<KvOptions>): Promise<KV>;
  open(name: string, opts?: Partial<KvOptions>): Promise<KV>;
  list(): Lister<KvStatus>;
}

/** The options a bucket gets when create() is given none. */
export declare function defaultBucketOpts(): Partial<KvOptions>;
