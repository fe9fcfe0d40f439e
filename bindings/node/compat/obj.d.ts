// Types of natsio/obj: nats.js 3.x's @nats-io/obj shapes (see obj.js).
import type { MsgHdrs, NatsConnection, QueuedIterator } from './transport-node';
import type { JetStreamClient, Lister, PurgeResponse, StreamInfo } from './jetstream';
export { StorageType } from './jetstream';

export interface ObjectStoreLink {
  bucket: string;
  name?: string;
}
export interface ObjectStoreMeta {
  name: string;
  description?: string;
  headers?: MsgHdrs;
  options?: { link?: ObjectStoreLink; max_chunk_size?: number };
  metadata?: Record<string, string>;
}
export interface ObjectInfo extends ObjectStoreMeta {
  bucket: string;
  nuid: string;
  size: number;
  chunks: number;
  digest: string;
  deleted: boolean;
  mtime: string;
  /**
   * The sequence, in the bucket's stream, of the info's message: as read back (info, get, list,
   * watch) or as stored by the call that returned it (put, putBlob, link, linkStore); grows with
   * every change of the object. nats.js's list() and watch() entries leave it undefined.
   */
  revision: number;
  isLink(): boolean;
}
export type ObjectWatchInfo = Omit<ObjectInfo, 'isLink' | 'headers'> & { headers?: Record<string, string[]>; isUpdate: boolean };
export interface ObjectResult {
  info: ObjectInfo;
  data: ReadableStream<Uint8Array>;
  error: Promise<Error | null>;
}
export interface ObjectStoreStatus {
  bucket: string;
  description: string;
  ttl: number;
  storage: string;
  replicas: number;
  sealed: boolean;
  size: number;
  backingStore: string;
  streamInfo: StreamInfo;
  metadata?: Record<string, string>;
  compression: boolean;
}
export interface ObjectStoreOptions {
  description: string;
  ttl: number;
  storage: 'file' | 'memory';
  replicas: number;
  max_bytes: number;
  metadata: Record<string, string>;
  compression: boolean;
}
export interface ObjectStore {
  info(name: string): Promise<ObjectInfo | null>;
  list(): Promise<ObjectInfo[]>;
  get(name: string): Promise<ObjectResult | null>;
  getBlob(name: string): Promise<Uint8Array | null>;
  put(meta: ObjectStoreMeta, rs: ReadableStream<Uint8Array> | AsyncIterable<Uint8Array>): Promise<ObjectInfo>;
  putBlob(meta: ObjectStoreMeta, data: Uint8Array | null): Promise<ObjectInfo>;
  delete(name: string): Promise<PurgeResponse>;
  link(name: string, meta: ObjectInfo): Promise<ObjectInfo>;
  linkStore(name: string, bucket: ObjectStore): Promise<ObjectInfo>;
  watch(opts?: Partial<{ ignoreDeletes: boolean; includeHistory: boolean }>): Promise<QueuedIterator<ObjectWatchInfo>>;
  seal(): Promise<ObjectStoreStatus>;
  status(): Promise<ObjectStoreStatus>;
  update(name: string, meta: Partial<ObjectStoreMeta>): Promise<void>;
  destroy(): Promise<boolean>;
}
export declare class Objm {
  constructor(nc: JetStreamClient | NatsConnection);
  /** The JetStreamClient given, or one made for the NatsConnection given. */
  readonly js: JetStreamClient;
  create(name: string, opts?: Partial<ObjectStoreOptions>): Promise<ObjectStore>;
  open(name: string): Promise<ObjectStore>;
  list(): Lister<ObjectStoreStatus>;
}

/** nats.js's base64 codecs (decode: a binary string, or bytes when `binary`). */
export declare class Base64Codec {
  static encode(bytes: string | Uint8Array): string;
  static decode(s: string, binary?: boolean): string | Uint8Array;
}
export declare class Base64UrlCodec {
  static encode(bytes: string | Uint8Array): string;
  static decode(s: string, binary?: boolean): string | Uint8Array;
  static toB64URLEncoding(b64str: string): string;
  static fromB64URLEncoding(b64str: string): string;
}
export declare class Base64UrlPaddedCodec {
  static encode(bytes: string | Uint8Array): string;
  static decode(s: string, binary?: boolean): string | Uint8Array;
  static toB64URLEncoding(b64str: string): string;
  static fromB64URLEncoding(b64str: string): string;
}
