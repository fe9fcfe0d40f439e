/*
 * nkey_sign.c - Ed25519 signing with an NKey seed, for the auth tests'
 * signature callback. The key arithmetic is OpenSSL's (libcrypto); this file
 * only decodes the seed: base32 (RFC 4648, no padding) of
 *   [prefix byte 1][prefix byte 2][32-byte Ed25519 seed][CRC-16 little endian]
 * where the first 5 bits are the "seed" prefix (S) and the CRC is
 * CRC-16/XMODEM over everything before it.
 */
#include "harness.h"

#include <ctype.h>
#include <string.h>

#include <openssl/evp.h>

enum { NKEY_SEED_RAW_LEN = 36, ED25519_SEED_LEN = 32, NKEY_PREFIX_SEED = 18 << 3 };

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

bool nt_nkey_sign(const char *seed, const void *msg, size_t len, uint8_t sig_out[64]) {
    if (!seed || (!msg && len > 0) || !sig_out) return false;
    size_t seed_len = strlen(seed);
    while (seed_len > 0 && isspace((unsigned char)seed[seed_len - 1])) seed_len--;
    unsigned char raw[NKEY_SEED_RAW_LEN + 4];
    if (base32_decode(seed, seed_len, raw, sizeof raw) != NKEY_SEED_RAW_LEN) return false;
    if ((raw[0] & 0xF8) != NKEY_PREFIX_SEED) return false;
    uint16_t stored = (uint16_t)(raw[NKEY_SEED_RAW_LEN - 2] | (raw[NKEY_SEED_RAW_LEN - 1] << 8));
    if (crc16_xmodem(raw, NKEY_SEED_RAW_LEN - 2) != stored) return false;

    bool ok = false;
    EVP_PKEY *key = EVP_PKEY_new_raw_private_key(EVP_PKEY_ED25519, NULL, raw + 2, ED25519_SEED_LEN);
    EVP_MD_CTX *ctx = EVP_MD_CTX_new();
    size_t sig_len = 64;
    if (key && ctx && EVP_DigestSignInit(ctx, NULL, NULL, NULL, key) == 1 &&
        EVP_DigestSign(ctx, sig_out, &sig_len, (const unsigned char *)msg, len) == 1 && sig_len == 64)
        ok = true;
    EVP_MD_CTX_free(ctx);
    EVP_PKEY_free(key);
    memset(raw, 0, sizeof raw);
    return ok;
}
