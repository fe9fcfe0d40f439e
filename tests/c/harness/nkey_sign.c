/*
 * nkey_sign.c - Ed25519 signing with an NKey seed, for the auth tests'
 * signature callback, and minting of NKeys and JWTs. The key arithmetic is
 * OpenSSL's (libcrypto); this file only encodes and decodes keys: base32
 * (RFC 4648, no padding) of
 *   seed:   [prefix byte 1][prefix byte 2][32-byte Ed25519 seed][CRC-16 LE]
 *   public: [type prefix][32-byte Ed25519 public key][CRC-16 LE]
 * where a seed's first 5 bits are the "seed" prefix (S), the next 5 the
 * key type's, and the CRC is CRC-16/XMODEM over everything before it.
 * A JWT is base64url (no padding) of its header and claims, joined by '.',
 * then '.' and the base64url Ed25519 signature of those two parts.
 */
#include "harness.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>
#include <openssl/rand.h>

enum { NKEY_SEED_RAW_LEN = 36, NKEY_PUBLIC_RAW_LEN = 35, ED25519_SEED_LEN = 32, NKEY_PREFIX_SEED = 18 << 3 };

static int base32_value(char c) {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= '2' && c <= '7') return c - '2' + 26;
    return -1;
}

/* Decodes `len` chars; returns the byte count, or -1 on a bad character or
 * overflow of `cap`. */
static int base32_decode(const char *text, size_t len, unsigned char *out, size_t cap) {
    unsigned buffer = 0;
    int bits = 0;
    size_t n = 0;
    for (size_t i = 0; i < len; i++) {
        int v = base32_value(text[i]);
        if (v < 0) return -1;
        buffer = (buffer << 5) | (unsigned)v;
        bits += 5;
        if (bits >= 8) {
            bits -= 8;
            if (n == cap) return -1;
            out[n++] = (unsigned char)((buffer >> bits) & 0xFF);
        }
    }
    return (int)n;
}

static uint16_t crc16_xmodem(const unsigned char *data, size_t len) {
    uint16_t crc = 0;
    for (size_t i = 0; i < len; i++) {
        crc ^= (uint16_t)(data[i] << 8);
        for (int b = 0; b < 8; b++) crc = (uint16_t)((crc & 0x8000) ? (crc << 1) ^ 0x1021 : crc << 1);
    }
    return crc;
}

/* The 32-byte Ed25519 seed and the type prefix byte of an NKey seed
 * string (trailing whitespace ignored); false if malformed. */
static bool decode_seed(const char *seed, unsigned char key_out[ED25519_SEED_LEN], unsigned char *type_out) {
    size_t seed_len = strlen(seed);
    while (seed_len > 0 && isspace((unsigned char)seed[seed_len - 1])) seed_len--;
    unsigned char raw[NKEY_SEED_RAW_LEN + 4];
    bool ok = base32_decode(seed, seed_len, raw, sizeof raw) == NKEY_SEED_RAW_LEN &&
              (raw[0] & 0xF8) == NKEY_PREFIX_SEED &&
              crc16_xmodem(raw, NKEY_SEED_RAW_LEN - 2) ==
                  (uint16_t)(raw[NKEY_SEED_RAW_LEN - 2] | (raw[NKEY_SEED_RAW_LEN - 1] << 8));
    if (ok) {
        memcpy(key_out, raw + 2, ED25519_SEED_LEN);
        *type_out = (unsigned char)(((raw[0] & 0x07) << 5) | ((raw[1] & 0xF8) >> 3));
    }
    memset(raw, 0, sizeof raw);
    return ok;
}

bool nt_nkey_sign(const char *seed, const void *msg, size_t len, uint8_t sig_out[64]) {
    if (!seed || (!msg && len > 0) || !sig_out) return false;
    unsigned char key_seed[ED25519_SEED_LEN], type;
    if (!decode_seed(seed, key_seed, &type)) return false;

    bool ok = false;
    EVP_PKEY *key = EVP_PKEY_new_raw_private_key(EVP_PKEY_ED25519, NULL, key_seed, ED25519_SEED_LEN);
    EVP_MD_CTX *ctx = EVP_MD_CTX_new();
    size_t sig_len = 64;
    if (key && ctx && EVP_DigestSignInit(ctx, NULL, NULL, NULL, key) == 1 &&
        EVP_DigestSign(ctx, sig_out, &sig_len, (const unsigned char *)msg, len) == 1 && sig_len == 64)
        ok = true;
    EVP_MD_CTX_free(ctx);
    EVP_PKEY_free(key);
    memset(key_seed, 0, sizeof key_seed);
    return ok;
}

/* Base32 of `len` bytes, unpadded, NUL-terminated; `out` holds
 * (len * 8 + 4) / 5 + 1 chars. */
static void base32_encode(const unsigned char *data, size_t len, char *out) {
    static const char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
    unsigned buffer = 0;
    int bits = 0;
    size_t n = 0;
    for (size_t i = 0; i < len; i++) {
        buffer = (buffer << 8) | data[i];
        bits += 8;
        while (bits >= 5) {
            bits -= 5;
            out[n++] = alphabet[(buffer >> bits) & 31];
        }
    }
    if (bits > 0) out[n++] = alphabet[(buffer << (5 - bits)) & 31];
    out[n] = '\0';
}

static void put_crc(unsigned char *raw, size_t len) {
    uint16_t crc = crc16_xmodem(raw, len);
    raw[len] = (unsigned char)(crc & 0xFF);
    raw[len + 1] = (unsigned char)(crc >> 8);
}

static int type_prefix(char type) {
    switch (type) {
    case 'O': return 14 << 3;
    case 'A': return 0;
    case 'U': return 20 << 3;
    default: return -1;
    }
}

bool nt_nkey_create(char type, char seed_out[NT_NKEY_SEED_CAP]) {
    int prefix = type_prefix(type);
    if (prefix < 0 || !seed_out) return false;
    unsigned char raw[NKEY_SEED_RAW_LEN];
    raw[0] = (unsigned char)(NKEY_PREFIX_SEED | (prefix >> 5));
    raw[1] = (unsigned char)((prefix & 31) << 3);
    if (RAND_bytes(raw + 2, ED25519_SEED_LEN) != 1) return false;
    put_crc(raw, NKEY_SEED_RAW_LEN - 2);
    base32_encode(raw, sizeof raw, seed_out);
    memset(raw, 0, sizeof raw);
    return true;
}

bool nt_nkey_public(const char *seed, char pub_out[NT_NKEY_PUBLIC_CAP]) {
    if (!seed || !pub_out) return false;
    unsigned char key_seed[ED25519_SEED_LEN], type;
    if (!decode_seed(seed, key_seed, &type)) return false;
    unsigned char raw[NKEY_PUBLIC_RAW_LEN];
    size_t pub_len = ED25519_SEED_LEN;
    EVP_PKEY *key = EVP_PKEY_new_raw_private_key(EVP_PKEY_ED25519, NULL, key_seed, ED25519_SEED_LEN);
    bool ok = key && EVP_PKEY_get_raw_public_key(key, raw + 1, &pub_len) == 1 && pub_len == ED25519_SEED_LEN;
    EVP_PKEY_free(key);
    memset(key_seed, 0, sizeof key_seed);
    if (!ok) return false;
    raw[0] = type;
    put_crc(raw, NKEY_PUBLIC_RAW_LEN - 2);
    base32_encode(raw, sizeof raw, pub_out);
    return true;
}

/* Base64url of `len` bytes, unpadded, appended at `out` (which has room
 * for 4 * (len + 2) / 3 + 1 chars); returns the chars written. */
static size_t base64url_encode(const unsigned char *data, size_t len, char *out) {
    static const char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    size_t n = 0;
    for (size_t i = 0; i < len; i += 3) {
        unsigned v = (unsigned)data[i] << 16;
        if (i + 1 < len) v |= (unsigned)data[i + 1] << 8;
        if (i + 2 < len) v |= data[i + 2];
        out[n++] = alphabet[(v >> 18) & 63];
        out[n++] = alphabet[(v >> 12) & 63];
        if (i + 1 < len) out[n++] = alphabet[(v >> 6) & 63];
        if (i + 2 < len) out[n++] = alphabet[v & 63];
    }
    out[n] = '\0';
    return n;
}

char *nt_jwt_encode(const char *claims_json, const char *issuer_seed) {
    static const char header[] = "{\"typ\":\"JWT\",\"alg\":\"ed25519-nkey\"}";
    if (!claims_json || !issuer_seed) return NULL;
    size_t claims_len = strlen(claims_json);
    size_t cap = 4 * (sizeof header + claims_len + 64 + 6) / 3 + 8;
    char *jwt = (char *)malloc(cap);
    if (!jwt) return NULL;
    size_t n = base64url_encode((const unsigned char *)header, sizeof header - 1, jwt);
    jwt[n++] = '.';
    n += base64url_encode((const unsigned char *)claims_json, claims_len, jwt + n);
    uint8_t sig[64];
    if (!nt_nkey_sign(issuer_seed, jwt, n, sig)) {
        free(jwt);
        return NULL;
    }
    jwt[n++] = '.';
    base64url_encode(sig, sizeof sig, jwt + n);
    return jwt;
}

bool nt_nkey_sign_base64url(const char *seed, const void *msg, size_t len, char sig_out[NT_NKEY_SIG_B64_CAP]) {
    uint8_t sig[64];
    if (!nt_nkey_sign(seed, msg, len, sig)) return false;
    base64url_encode(sig, sizeof sig, sig_out);
    return true;
}
