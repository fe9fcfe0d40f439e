'use strict';
// An NKey signer for the tests, independent of the library's own: the
// Ed25519 key of a seed ("SU...": base32 of two prefix bytes, the 32-byte
// seed and a CRC-16), through node:crypto.
const crypto = require('node:crypto');

/** The Ed25519 private key of an NKey seed's text. */
function nkeyPrivateKey(seedText) {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
  let bits = 0;
  let value = 0;
  const bytes = [];
  for (const c of seedText.trim()) {
    value = ((value << 5) | alphabet.indexOf(c)) & 0xffff;
    bits += 5;
    if (bits >= 8) {
      bytes.push((value >>> (bits - 8)) & 0xff);
      bits -= 8;
    }
  }
  const pkcs8 = Buffer.concat([Buffer.from('302e020100300506032b657004220420', 'hex'), Buffer.from(bytes.slice(2, 34))]);
  return crypto.createPrivateKey({ key: pkcs8, format: 'der', type: 'pkcs8' });
}

/** The 64-byte signature of `data` (bytes or a string) by `key`. */
function sign(key, data) {
  return crypto.sign(null, Buffer.from(data), key);
}

module.exports = { nkeyPrivateKey, sign };
