// ES module entry point of natsio/kv: the CommonJS module (kv.js)
// under its named exports (one instance, so instanceof holds across
// import and require). test/compat.test.js checks the list.
import m from './kv.js';

export const {
  Kvm,
  Bucket,
  KvWatchInclude,
  Base64KeyCodec,
  NoopKvCodecs,
  defaultBucketOpts,
} = m;
