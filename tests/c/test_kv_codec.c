/*
 * Key-Value codecs through the C ABI against a real nats-server: built-in
 * key codecs (base64 in nats.js's and orbit.go's forms, path, chains) and
 * value codecs (zlib, base64, chains) on a handle from
 * natsio_kv_with_codecs, the stored form read through a plain handle on
 * the same bucket, custom codecs as C callbacks (their failures, a missing
 * filter form, release of their user data), the codec helpers, and bad
 * input.
 *
 * The cases share one server; each uses its own bucket names.
 */
#define _POSIX_C_SOURCE 200809L

#include "harness.h"
#include "util.h"

#include <natsio.h>

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void key_codec_free_cb(void *c) { natsio_kv_key_codec_free((natsio_kv_key_codec *)c); }
static void value_codec_free_cb(void *c) { natsio_kv_value_codec_free((natsio_kv_value_codec *)c); }

static natsio_kv_key_codec *key_codec(int kind) {
    natsio_kv_key_codec *c = NULL;
    natsio_status st = natsio_kv_key_codec_new(kind, &c);
    if (st != NATSIO_OK) {
        nt_fail_at(__FILE__, __LINE__, "key codec %d: %s", kind, natsio_status_str(st));
        return NULL;
    }
    nt_cleanup(key_codec_free_cb, c);
    return c;
}

/* `kv` seen through the codecs, freed when the case ends. */
static natsio_kv *with_codecs(natsio_kv *kv, const natsio_kv_key_codec *k, const natsio_kv_value_codec *v) {
    natsio_kv *out = NULL;
    natsio_status st = natsio_kv_with_codecs(kv, k, v, &out);
    if (st != NATSIO_OK) {
        nt_fail_at(__FILE__, __LINE__, "with_codecs: %s", natsio_status_str(st));
        return NULL;
    }
    nt_cleanup(kv_free_cb, out);
    return out;
}

/* The sorted, ','-joined keys of `kv` (all, or those of one filter). */
static const char *keys_of(natsio_kv *kv, const char *filter, char *buf, size_t cap) {
    natsio_string_list *list = NULL;
    natsio_status st = filter ? natsio_kv_keys_filtered(kv, &filter, 1, &list) : natsio_kv_keys(kv, &list);
    if (st != NATSIO_OK) {
        nt_fail_at(__FILE__, __LINE__, "keys: %s (%s)", natsio_status_str(st), natsio_last_error());
        return "";
    }
    kept_list(list);
    size_t n = natsio_string_list_count(list);
    const char *sorted[16];
    for (size_t i = 0; i < n && i < 16; i++) sorted[i] = natsio_string_list_get(list, i);
    for (size_t i = 1; i < n && i < 16; i++)
        for (size_t j = i; j > 0 && strcmp(sorted[j - 1], sorted[j]) > 0; j--) {
            const char *t = sorted[j];
            sorted[j] = sorted[j - 1];
            sorted[j - 1] = t;
        }
    buf[0] = '\0';
    for (size_t i = 0; i < n && i < 16; i++) {
        if (i) strncat(buf, ",", cap - strlen(buf) - 1);
        strncat(buf, sorted[i], cap - strlen(buf) - 1);
    }
    return buf;
}

static natsio_kv_entry *get_entry(natsio_kv *kv, const char *key) {
    natsio_kv_entry *e = NULL;
    natsio_status st = natsio_kv_get(kv, key, &e);
    if (st != NATSIO_OK) {
        nt_fail_at(__FILE__, __LINE__, "get %s: %s (%s)", key, natsio_status_str(st), natsio_last_error());
        return NULL;
    }
    nt_cleanup(kv_entry_free_cb, e);
    return e;
}

static bool value_is(const natsio_kv_entry *e, const char *s) {
    return e && span_eq(natsio_kv_entry_value(e), natsio_kv_entry_value_len(e), s);
}

/* ---- built-in codecs --------------------------------------------------- */

static void test_base64_keys_and_zlib_values_through_every_verb(void) {
    natsio_js *js = connect_js();
    NT_CHECK(js != NULL);
    natsio_kv *plain = create_bucket(js, "{\"bucket\":\"CB64\",\"history\":5}");
    NT_CHECK(plain != NULL);
    natsio_kv_key_codec *b64 = key_codec(NATSIO_KV_KEY_CODEC_BASE64);
    natsio_kv_value_codec *zlib = NULL;
    NT_CHECK_INT_EQ(natsio_kv_value_codec_zlib(9, &zlib), NATSIO_OK);
    nt_cleanup(value_codec_free_cb, zlib);
    natsio_kv *kv = with_codecs(plain, b64, zlib);
    NT_CHECK(kv != NULL);
    NT_CHECK_STR_EQ(natsio_kv_bucket(kv), "CB64");

    /* A key the key rules refuse, valid once encoded. */
    uint64_t r1 = 0, r2 = 0, rd = 0;
    EXPECT_FAILS(NATSIO_ERR_INVALID_KEY, natsio_kv_put(plain, "user.john doe", "v", 1, NULL, &r1));
    NT_CHECK_INT_EQ(natsio_kv_put(kv, "user.john doe", "first", 5, NULL, &r1), NATSIO_OK);
    char buf[256];
    /* nats.js's Base64KeyCodec form, per token. */
    NT_CHECK_STR_EQ(keys_of(plain, NULL, buf, sizeof buf), "dXNlcg==.am9obiBkb2U=");
    natsio_kv_entry *stored = get_entry(plain, "dXNlcg==.am9obiBkb2U=");
    NT_CHECK(stored && natsio_kv_entry_value_len(stored) > 2 && (unsigned char)natsio_kv_entry_value(stored)[0] == 0x78);

    natsio_kv_entry *e = get_entry(kv, "user.john doe");
    NT_CHECK(value_is(e, "first"));
    NT_CHECK_STR_EQ(natsio_kv_entry_key(e), "user.john doe");
    NT_CHECK_INT_EQ(natsio_kv_update(kv, "user.john doe", "second", 6, r1, &r2), NATSIO_OK);
    EXPECT_FAILS(NATSIO_ERR_KEY_EXISTS, natsio_kv_create(kv, "user.john doe", "x", 1, NULL, &rd));
    NT_CHECK_INT_EQ(natsio_kv_create(kv, "user.jane", "created", 7, NULL, &rd), NATSIO_OK);
    NT_CHECK_STR_EQ(keys_of(kv, NULL, buf, sizeof buf), "user.jane,user.john doe");
    NT_CHECK_STR_EQ(keys_of(kv, "user.*", buf, sizeof buf), "user.jane,user.john doe");

    natsio_kv_entry_list *h = NULL;
    NT_CHECK_INT_EQ(natsio_kv_history(kv, "user.john doe", &h), NATSIO_OK);
    nt_cleanup(kv_entry_list_free_cb, h);
    NT_CHECK_INT_EQ(natsio_kv_entry_list_count(h), 2);
    NT_CHECK(value_is(natsio_kv_entry_list_get(h, 0), "first"));
    NT_CHECK(value_is(natsio_kv_entry_list_get(h, 1), "second"));

    /* A watch with a wildcard filter: entries decoded. */
    const char *filter = "user.*";
    natsio_kv_watcher *w = NULL;
    NT_CHECK_INT_EQ(natsio_kv_watch(kv, &filter, 1, NULL, &w), NATSIO_OK);
    nt_cleanup(kv_watcher_free_cb, w);
    int seen = 0;
    for (;;) {
        natsio_kv_entry *we = NULL;
        NT_CHECK_INT_EQ(natsio_kv_watcher_next(w, 5000, &we), NATSIO_OK);
        if (!we) break;
        bool done = natsio_kv_entry_operation(we) == NATSIO_KV_INITIAL_DONE;
        if (!done) {
            const char *k = natsio_kv_entry_key(we);
            NT_CHECK(strcmp(k, "user.jane") == 0 ? value_is(we, "created") : value_is(we, "second"));
            seen++;
        }
        natsio_kv_entry_free(we);
        if (done) break;
    }
    NT_CHECK_INT_EQ(seen, 2);
    NT_CHECK_INT_EQ(natsio_kv_delete(kv, "user.john doe", &r2, &rd), NATSIO_OK);
    natsio_kv_entry *del = NULL;
    NT_CHECK_INT_EQ(natsio_kv_watcher_next(w, 5000, &del), NATSIO_OK);
    NT_CHECK(del != NULL);
    if (del) {
        NT_CHECK_STR_EQ(natsio_kv_entry_key(del), "user.john doe");
        NT_CHECK_INT_EQ(natsio_kv_entry_operation(del), NATSIO_KV_DEL);
        NT_CHECK_INT_EQ(natsio_kv_entry_revision(del), rd);
        natsio_kv_entry_free(del);
    }
    natsio_kv_entry *gone = NULL;
    EXPECT_FAILS(NATSIO_ERR_KEY_DELETED, natsio_kv_get(kv, "user.john doe", &gone));
    NT_CHECK_INT_EQ(natsio_kv_purge(kv, "user.jane", NULL, NULL, &rd), NATSIO_OK);
    NT_CHECK_STR_EQ(keys_of(kv, NULL, buf, sizeof buf), "");

    /* A stored value that is no zlib data fails the get. */
    NT_CHECK_INT_EQ(natsio_kv_put(plain, "raw", "plain", 5, NULL, &r1), NATSIO_OK);
    natsio_kv *zonly = with_codecs(plain, NULL, zlib);
    EXPECT_FAILS(NATSIO_ERR_KV_VALUE_DECODE_FAILED, natsio_kv_get(zonly, "raw", &gone));
}

static void test_path_and_chained_codecs(void) {
    natsio_js *js = connect_js();
    NT_CHECK(js != NULL);
    natsio_kv *plain = create_bucket(js, "{\"bucket\":\"CPATH\"}");
    NT_CHECK(plain != NULL);
    natsio_kv_key_codec *path = key_codec(NATSIO_KV_KEY_CODEC_PATH);
    natsio_kv_key_codec *url = key_codec(NATSIO_KV_KEY_CODEC_BASE64_URL);
    natsio_kv *paths = with_codecs(plain, path, NULL);
    uint64_t rev = 0;
    NT_CHECK_INT_EQ(natsio_kv_put(paths, "/etc/hosts", "h", 1, NULL, &rev), NATSIO_OK);
    char buf[256];
    NT_CHECK_STR_EQ(keys_of(plain, NULL, buf, sizeof buf), "_root_.etc.hosts");
    NT_CHECK_STR_EQ(keys_of(paths, "/etc/*", buf, sizeof buf), "/etc/hosts");

    const natsio_kv_key_codec *keys[] = {path, url};
    natsio_kv_key_codec *chain = NULL;
    NT_CHECK_INT_EQ(natsio_kv_key_codec_chain(keys, 2, &chain), NATSIO_OK);
    nt_cleanup(key_codec_free_cb, chain);
    natsio_kv_value_codec *z = NULL, *b = NULL, *vchain = NULL;
    NT_CHECK_INT_EQ(natsio_kv_value_codec_zlib(-1, &z), NATSIO_OK);
    nt_cleanup(value_codec_free_cb, z);
    NT_CHECK_INT_EQ(natsio_kv_value_codec_new(NATSIO_KV_VALUE_CODEC_BASE64, &b), NATSIO_OK);
    nt_cleanup(value_codec_free_cb, b);
    const natsio_kv_value_codec *values[] = {z, b};
    NT_CHECK_INT_EQ(natsio_kv_value_codec_chain(values, 2, &vchain), NATSIO_OK);
    nt_cleanup(value_codec_free_cb, vchain);
    natsio_kv *chained = with_codecs(plain, chain, vchain);
    NT_CHECK_INT_EQ(natsio_kv_put(chained, "/a b/~~~", "chained", 7, NULL, &rev), NATSIO_OK);
    NT_CHECK_STR_EQ(keys_of(plain, "X3Jvb3Rf.>", buf, sizeof buf), "X3Jvb3Rf.YSBi.fn5-");
    NT_CHECK(value_is(get_entry(chained, "/a b/~~~"), "chained"));
    NT_CHECK_STR_EQ(keys_of(chained, "/a b/*", buf, sizeof buf), "/a b/~~~");

    /* The helpers run a codec alone. */
    char *out = NULL;
    NT_CHECK_INT_EQ(natsio_kv_key_codec_encode(chain, "/a b/~~~", &out), NATSIO_OK);
    NT_CHECK_STR_EQ(out, "X3Jvb3Rf.YSBi.fn5-");
    natsio_string_free(out);
    NT_CHECK_INT_EQ(natsio_kv_key_codec_decode(url, "dXNlcnM=.am9obg", &out), NATSIO_OK);
    NT_CHECK_STR_EQ(out, "users.john");
    natsio_string_free(out);
    EXPECT_FAILS(NATSIO_ERR_KV_KEY_DECODE_FAILED, natsio_kv_key_codec_decode(url, "x", &out));
}

/* ---- custom codecs ------------------------------------------------------- */

typedef struct {
    atomic_int encodes, decodes, released;
} codec_calls;

/* ROT13 of the letters: its own inverse. Fails for the key "fail". */
static natsio_status rot13(void *ud, const char *in, size_t len, natsio_kv_codec_output *out) {
    codec_calls *calls = ud;
    atomic_fetch_add(&calls->encodes, 1);
    if (len == 4 && memcmp(in, "fail", 4) == 0) return NATSIO_ERR_INVALID_ARGUMENT;
    /* A C enum holds any int: a status the library does not know. */
    if (len == 5 && memcmp(in, "weird", 5) == 0) return (natsio_status)12345;
    char buf[256];
    if (len >= sizeof buf || in[len] != '\0') return NATSIO_ERR_INVALID_ARGUMENT;
    for (size_t i = 0; i < len; i++) {
        char c = in[i];
        if (c >= 'a' && c <= 'z') c = (char)('a' + (c - 'a' + 13) % 26);
        buf[i] = c;
    }
    return natsio_kv_codec_output_set(out, buf, len);
}

/* XOR 0x5A of every byte: its own inverse. */
static natsio_status xor5a(void *ud, const char *in, size_t len, natsio_kv_codec_output *out) {
    codec_calls *calls = ud;
    atomic_fetch_add(&calls->decodes, 1);
    unsigned char buf[256];
    if (len > sizeof buf) return NATSIO_ERR_INVALID_ARGUMENT;
    for (size_t i = 0; i < len; i++) buf[i] = (unsigned char)in[i] ^ 0x5A;
    return natsio_kv_codec_output_set(out, buf, len);
}

static void on_release(void *ud) { atomic_fetch_add(&((codec_calls *)ud)->released, 1); }

static void test_custom_codecs_are_c_callbacks(void) {
    static codec_calls keys_calls, values_calls;
    natsio_js *js = connect_js();
    NT_CHECK(js != NULL);
    natsio_kv *plain = create_bucket(js, "{\"bucket\":\"CCUSTOM\"}");
    NT_CHECK(plain != NULL);
    natsio_kv_key_codec *kc = NULL;
    natsio_kv_value_codec *vc = NULL;
    NT_CHECK_INT_EQ(natsio_kv_key_codec_custom(rot13, rot13, NULL, &keys_calls, on_release, &kc), NATSIO_OK);
    NT_CHECK_INT_EQ(natsio_kv_value_codec_custom(xor5a, xor5a, &values_calls, on_release, &vc), NATSIO_OK);
    natsio_kv *kv = NULL;
    NT_CHECK_INT_EQ(natsio_kv_with_codecs(plain, kc, vc, &kv), NATSIO_OK);
    /* The handle keeps the codecs: their user data stays until it goes. */
    natsio_kv_key_codec_free(kc);
    natsio_kv_value_codec_free(vc);
    NT_CHECK_INT_EQ(atomic_load(&keys_calls.released), 0);

    uint64_t rev = 0;
    NT_CHECK_INT_EQ(natsio_kv_put(kv, "hello.world", "AB", 2, NULL, &rev), NATSIO_OK);
    natsio_kv_entry *stored = get_entry(plain, "uryyb.jbeyq");
    NT_CHECK(stored && natsio_kv_entry_value_len(stored) == 2 && natsio_kv_entry_value(stored)[0] == ('A' ^ 0x5A));
    natsio_kv_entry *e = get_entry(kv, "hello.world");
    NT_CHECK_STR_EQ(natsio_kv_entry_key(e), "hello.world");
    NT_CHECK(value_is(e, "AB"));
    char buf[128];
    NT_CHECK_STR_EQ(keys_of(kv, NULL, buf, sizeof buf), "hello.world");
    NT_CHECK_STR_EQ(keys_of(kv, "hello.world", buf, sizeof buf), "hello.world");

    /* No filter form: a wildcard filter is refused. */
    const char *filter = "hello.*";
    natsio_kv_watcher *w = NULL;
    EXPECT_FAILS(NATSIO_ERR_KV_WILDCARD_NOT_SUPPORTED, natsio_kv_watch(kv, &filter, 1, NULL, &w));
    natsio_string_list *list = NULL;
    EXPECT_FAILS(NATSIO_ERR_KV_WILDCARD_NOT_SUPPORTED, natsio_kv_keys_filtered(kv, &filter, 1, &list));
    /* A failing callback fails the verb with the step's status. */
    EXPECT_FAILS_NAMING(NATSIO_ERR_KV_KEY_ENCODE_FAILED, "invalid argument",
                        natsio_kv_put(kv, "fail", "x", 1, NULL, &rev));
    EXPECT_FAILS_NAMING(NATSIO_ERR_KV_KEY_ENCODE_FAILED, "unknown status code",
                        natsio_kv_put(kv, "weird", "x", 1, NULL, &rev));
    NT_CHECK(atomic_load(&keys_calls.encodes) > 0 && atomic_load(&values_calls.decodes) > 0);

    natsio_kv_free(kv);
    NT_CHECK_INT_EQ(atomic_load(&keys_calls.released), 1);
    NT_CHECK_INT_EQ(atomic_load(&values_calls.released), 1);
}

/* ---- bad input ----------------------------------------------------------- */

static void test_bad_input(void) {
    natsio_kv_key_codec *kc = NULL;
    natsio_kv_value_codec *vc = NULL;
    EXPECT_FAILS(NATSIO_ERR_INVALID_ARGUMENT, natsio_kv_key_codec_new(42, &kc));
    EXPECT_FAILS(NATSIO_ERR_NULL_ARGUMENT, natsio_kv_key_codec_new(NATSIO_KV_KEY_CODEC_PATH, NULL));
    EXPECT_FAILS(NATSIO_ERR_INVALID_ARGUMENT, natsio_kv_value_codec_new(-1, &vc));
    EXPECT_FAILS(NATSIO_ERR_INVALID_ARGUMENT, natsio_kv_value_codec_zlib(10, &vc));
    EXPECT_FAILS(NATSIO_ERR_KV_NO_CODECS, natsio_kv_key_codec_chain(NULL, 0, &kc));
    EXPECT_FAILS(NATSIO_ERR_KV_NO_CODECS, natsio_kv_value_codec_chain(NULL, 0, &vc));
    const natsio_kv_key_codec *none[] = {NULL};
    EXPECT_FAILS(NATSIO_ERR_NULL_ARGUMENT, natsio_kv_key_codec_chain(none, 1, &kc));
    EXPECT_FAILS(NATSIO_ERR_NULL_ARGUMENT, natsio_kv_key_codec_custom(NULL, rot13, NULL, NULL, NULL, &kc));
    EXPECT_FAILS(NATSIO_ERR_NULL_ARGUMENT, natsio_kv_value_codec_custom(xor5a, NULL, NULL, NULL, &vc));
    natsio_kv *kv = NULL;
    EXPECT_FAILS(NATSIO_ERR_NULL_ARGUMENT, natsio_kv_with_codecs(NULL, NULL, NULL, &kv));
    EXPECT_FAILS(NATSIO_ERR_NULL_ARGUMENT, natsio_kv_codec_output_set(NULL, "x", 1));
    NT_CHECK(kc == NULL && vc == NULL && kv == NULL);
    natsio_kv_key_codec_free(NULL);
    natsio_kv_value_codec_free(NULL);
    NT_CHECK_STR_EQ(natsio_status_str(NATSIO_ERR_KV_WILDCARD_NOT_SUPPORTED),
                    "key codec does not support wildcard filters");
}

int main(int argc, char **argv) {
    static const nt_case cases[] = {
        NT_CASE(test_base64_keys_and_zlib_values_through_every_verb),
        NT_CASE(test_path_and_chained_codecs),
        NT_CASE(test_custom_codecs_are_c_callbacks),
        NT_CASE(test_bad_input),
    };
    return run_cases_with_shared_server(argc, argv, "kvcodec", cases, NT_COUNT(cases));
}
