// Types of natsio/services: nats.js 3.x's @nats-io/services shapes (see
// services.js); the client and the error class are the binding's.
import type { Msg, NatsConnection, Payload, PublishOptions, QueuedIterator } from './transport-node';
export { ServiceError, ServiceErrorHeader, ServiceErrorCodeHeader, ServiceVerb, ServiceResponseType } from '../index';
export type { ServiceClient } from '../index';

export interface ServiceMsg extends Msg {
  respondError(code: number, description: string, data?: Payload, opts?: PublishOptions): boolean;
}
export type ServiceHandler = (err: Error | null, msg: ServiceMsg) => void | Promise<void>;
export interface EndpointOptions {
  subject?: string;
  handler?: ServiceHandler;
  metadata?: Record<string, string>;
  queue?: string;
}
export interface ServiceGroup {
  addEndpoint(name: string, opts?: ServiceHandler | EndpointOptions): QueuedIterator<ServiceMsg> | unknown;
  addGroup(subject?: string, queue?: string): ServiceGroup;
}
export interface ServiceConfig {
  name: string;
  version: string;
  description?: string;
  metadata?: Record<string, string>;
  queue?: string;
  statsHandler?: (endpoint: { name: string; subject: string }) => Promise<unknown | null>;
}
export interface Service extends ServiceGroup {
  stopped: Promise<null | Error>;
  readonly isStopped: boolean;
  info(): any;
  ping(): any;
  stats(): Promise<any>;
  reset(): void;
  stop(err?: Error): Promise<null | Error>;
}
export declare class Svcm {
  constructor(nc: NatsConnection);
  add(config: ServiceConfig): Promise<Service>;
  client(opts?: { maxWait?: number; strategy?: string; maxMessages?: number; stall?: number }, prefix?: string): import('../index').ServiceClient;
}
