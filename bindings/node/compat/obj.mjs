// ES module entry point of natsio/obj: the CommonJS module (obj.js)
// under its named exports (one instance, so instanceof holds across
// import and require). test/compat.test.js checks the list.
import m from './obj.js';

export const {
  Objm,
  StorageType,
  Base64Codec,
  Base64UrlCodec,
  Base64UrlPaddedCodec,
} = m;
