// ES module entry point of natsio/jetstream: the CommonJS module (jetstream.js)
// under its named exports (one instance, so instanceof holds across
// import and require). test/compat.test.js checks the list.
import m from './jetstream.js';

export const {
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
} = m;
