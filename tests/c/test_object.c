/*
 * Object Store through the C ABI against a real nats-server.
 *
 * Buckets: create (an identical create binds, another configuration is
 * refused, update of a missing bucket), bind, names (a plain stream on
 * $O.<x>.C.> not named OBJ_ is left out), statuses and their typed fields,
 * seal, delete. Objects: round trips of 0 B, 1 B, one chunk, one chunk + 1
 * and 10 MiB of random bytes with the digest computed here, every info
 * field, the wire layout ADR-20 gives (stream, chunk and meta subjects);
 * the writer (pieces, async pieces, abort, free unfinished) and the reader
 * (read, next_async); a corrupted chunk read back as a digest mismatch;
 * replace, delete, update_meta, links to objects and buckets, list, watch
 * (every option, next_async, push mode, stop); use after the client is
 * closed (also in the middle of a put and a get) or the bucket deleted
 * under a reader and a writer, and bad input for every function.
 *
 * The cases share one server; each uses its own buckets. Small chunk
 * sizes (meta "chunk_size") keep multi-chunk objects small, so that the
 * program runs in seconds, also under valgrind.
 */
#define _POSIX_C_SOURCE 200809L

#include "harness.h"
#include "util.h"

#include <natsio.h>

#include <openssl/evp.h>

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- helpers ------------------------------------------------------------ */

#define DEFAULT_CHUNK 131072

static void obj_free_cb(void *o) { natsio_obj_free((natsio_obj *)o); }
static void info_free_cb(void *i) { natsio_obj_info_free((natsio_obj_info *)i); }
static void info_list_free_cb(void *l) { natsio_obj_info_list_free((natsio_obj_info_list *)l); }
static void status_free_cb(void *s) { natsio_obj_status_free((natsio_obj_status *)s); }
static void status_list_free_cb(void *l) { natsio_obj_status_list_free((natsio_obj_status_list *)l); }
static void reader_free_cb(void *r) { natsio_obj_reader_free((natsio_obj_reader *)r); }
static void writer_free_cb(void *w) { natsio_obj_writer_free((natsio_obj_writer *)w); }
static void watcher_free_cb(void *w) { natsio_obj_watcher_free((natsio_obj_watcher *)w); }

/* Creates (NATSIO_CREATE) a bucket, freed when the case ends. */
static natsio_obj *create_store_at(int line, natsio_js *js, const char *config) {
    natsio_obj *obj = NULL;
    natsio_status st = natsio_js_obj_create(js, config, NATSIO_CREATE, &obj);
    if (st != NATSIO_OK) {
        nt_fail_at(__FILE__, line, "create bucket %s: %s (%s)", config, natsio_status_str(st), natsio_last_error());
        return NULL;
    }
    nt_cleanup(obj_free_cb, obj);
    return obj;
}
#define CREATE_STORE(js, config) create_store_at(__LINE__, (js), (config))

/* A memory bucket `name` with the defaults otherwise. */
static natsio_obj *memory_store_at(int line, natsio_js *js, const char *name) {
    char cfg[160];
    snprintf(cfg, sizeof cfg, "{\"bucket\":\"%s\",\"storage\":\"memory\"}", name);
    return create_store_at(line, js, cfg);
}
#define MEMORY_STORE(js, name) memory_store_at(__LINE__, (js), (name))

/* Puts `len` bytes as `name`; the info is freed when the case ends (NULL,
 * and a failure recorded at `line`, if the put fails). */
static natsio_obj_info *put_at(int line, const natsio_obj *obj, const char *name, const char *meta, const void *data,
                               size_t len) {
    natsio_obj_info *info = NULL;
    natsio_status st = natsio_obj_put(obj, name, meta, data, len, &info);
    if (st != NATSIO_OK) {
        nt_fail_at(__FILE__, line, "put %s (%zu bytes): %s (%s)", name, len, natsio_status_str(st),
                   natsio_last_error());
        return NULL;
    }
    nt_cleanup(info_free_cb, info);
    return info;
}
#define PUT(obj, name, meta, data, len) put_at(__LINE__, (obj), (name), (meta), (data), (len))
#define PUT_STR(obj, name, text) put_at(__LINE__, (obj), (name), NULL, (text), strlen(text))

/* The info of `name` (freed when the case ends); NULL and a failure if it
 * cannot be had. */
static natsio_obj_info *info_of_at(int line, const natsio_obj *obj, const char *name, bool show_deleted) {
    natsio_obj_info *info = NULL;
    natsio_status st = natsio_obj_get_info(obj, name, show_deleted, &info);
    if (st != NATSIO_OK) {
        nt_fail_at(__FILE__, line, "get_info %s: %s (%s)", name, natsio_status_str(st), natsio_last_error());
        return NULL;
    }
    nt_cleanup(info_free_cb, info);
    return info;
}
#define INFO_OF(obj, name) info_of_at(__LINE__, (obj), (name), false)
#define DELETED_INFO_OF(obj, name) info_of_at(__LINE__, (obj), (name), true)

/* Reads `r` to its end, `step` bytes at most per read, into a new buffer
 * (*out, freed when the case ends; never NULL on NATSIO_DONE). Returns the
 * status that ended the reading: NATSIO_DONE when every byte was read and
 * verified. */
static natsio_status read_all_within(natsio_obj_reader *r, size_t step, int64_t timeout_ms, unsigned char **out,
                                     size_t *len_out) {
    size_t cap = 4096, len = 0;
    unsigned char *buf = (unsigned char *)malloc(cap);
    if (!buf) return NATSIO_ERR_INTERNAL;
    natsio_status st;
    for (;;) {
        if (cap - len < step) {
            while (cap - len < step) cap *= 2;
            unsigned char *bigger = (unsigned char *)realloc(buf, cap);
            if (!bigger) {
                free(buf);
                return NATSIO_ERR_INTERNAL;
            }
            buf = bigger;
        }
        size_t n = SIZE_MAX;
        st = natsio_obj_reader_read(r, buf + len, step, &n, timeout_ms);
        if (st == NATSIO_OK) {
            if (n == 0 || n > step) {
                nt_fail_at(__FILE__, __LINE__, "read returned NATSIO_OK with %zu bytes (cap %zu)", n, step);
                st = NATSIO_ERR_INTERNAL;
                break;
            }
            len += n;
            continue;
        }
        if (st == NATSIO_DONE && n != 0) {
            nt_fail_at(__FILE__, __LINE__, "NATSIO_DONE with n_out %zu", n);
            st = NATSIO_ERR_INTERNAL;
        }
        break;
    }
    nt_cleanup(free, buf);
    *out = buf;
    *len_out = len;
    return st;
}

static natsio_status read_all(natsio_obj_reader *r, size_t step, unsigned char **out, size_t *len_out) {
    return read_all_within(r, step, 10000, out, len_out);
}

/* Gets `name` and reads it to the end (see read_all); the status of the
 * get if it fails. */
static natsio_status get_bytes(const natsio_obj *obj, const char *name, size_t step, unsigned char **out,
                               size_t *len) {
    natsio_obj_reader *r = NULL;
    natsio_status st = natsio_obj_get(obj, name, false, &r);
    if (st != NATSIO_OK) return st;
    st = read_all(r, step, out, len);
    natsio_obj_reader_free(r);
    return st;
}

/* `name` reads back as exactly `len` bytes of `data`, verified. */
static bool reads_back_at(int line, const natsio_obj *obj, const char *name, const void *data, size_t len) {
    unsigned char *got = NULL;
    size_t got_len = 0;
    natsio_status st = get_bytes(obj, name, 65536, &got, &got_len);
    if (st != NATSIO_DONE) {
        nt_fail_at(__FILE__, line, "reading %s: %s (%s) after %zu bytes", name, natsio_status_str(st),
                   natsio_last_error(), got_len);
        return false;
    }
    if (got_len != len || (len > 0 && memcmp(got, data, len) != 0)) {
        size_t at = 0;
        while (at < len && at < got_len && got[at] == ((const unsigned char *)data)[at]) at++;
        nt_fail_at(__FILE__, line, "%s read back %zu bytes, want %zu; first difference at %zu", name, got_len, len,
                   at);
        return false;
    }
    return true;
}
#define CHECK_READS_BACK(obj, name, data, len) NT_CHECK(reads_back_at(__LINE__, (obj), (name), (data), (len)))
#define CHECK_READS_STR(obj, name, text) NT_CHECK(reads_back_at(__LINE__, (obj), (name), (text), strlen(text)))

/* `call` must return `expected` (no detail required: for statuses that
 * come out of a reader or a token). */
#define EXPECT_STATUS(expected, call)                                                                        \
    do {                                                                                                     \
        natsio_status got_s_ = (call);                                                                       \
        NT_CHECK_MSG(got_s_ == (natsio_status)(expected), "%s: got %d (%s), want %d (%s); last error: %s", \
                     #call, (int)got_s_, natsio_status_str(got_s_), (int)(expected),                        \
                     natsio_status_str(expected), natsio_last_error());                                     \
    } while (0)

/* `call` (an _async call writing its token to `t`) must be refused by the
 * call itself with `expected`, before any token exists: a bad argument is
 * known at the call, not when the operation runs. */
#define EXPECT_ASYNC_REFUSED(expected, t, call)                                                              \
    do {                                                                                                     \
        (t) = NULL;                                                                                          \
        EXPECT_FAILS((expected), call);                                                                      \
        NT_CHECK_MSG((t) == NULL, "%s: refused but wrote a token", #call);                                   \
        if (t) natsio_token_free(t);                                                                         \
    } while (0)

/* The target of natsio_obj_add_link is NULL: the detail names it as the
 * header does ("target"). */
#define EXPECT_NULL_TARGET(call)                                                                            \
    do {                                                                                                     \
        EXPECT_FAILS(NATSIO_ERR_NULL_ARGUMENT, call);                                                        \
        NT_CHECK_MSG(strstr(natsio_last_error(), "target") != NULL, "%s: detail \"%s\" does not name target", \
                     #call, natsio_last_error());                                                            \
    } while (0)

/* The integer `key` of the "state" of stream `stream`; INT64_MIN if none. */
static int64_t stream_state_int(natsio_js *js, const char *stream, const char *key) {
    char *info = NULL;
    if (natsio_js_stream_info(js, stream, NULL, &info) != NATSIO_OK) return INT64_MIN;
    int64_t v = INT64_MIN;
    const char *state = strstr(info, "\"state\"");
    if (!state || !json_int(state, key, &v)) v = INT64_MIN;
    natsio_string_free(info);
    return v;
}

static int64_t stream_messages(natsio_js *js, const char *stream) {
    return stream_state_int(js, stream, "messages");
}

typedef struct {
    natsio_js *js;
    const char *stream;
    int64_t want;
    int64_t last;
} messages_wait;

static bool messages_are(void *arg) {
    messages_wait *w = (messages_wait *)arg;
    w->last = stream_messages(w->js, w->stream);
    return w->last == w->want;
}

/* Waits (up to 10 s) until `stream` holds `want` messages: what core
 * publishes (no acks) sent there is stored a little after the flush. */
static bool wait_stream_messages(natsio_js *js, const char *stream, int64_t want) {
    messages_wait w = {js, stream, want, INT64_MIN};
    if (nt_wait_until(messages_are, &w, 10000)) return true;
    fprintf(stderr, "%s holds %lld messages, want %lld\n", stream, (long long)w.last, (long long)want);
    return false;
}

/* base64url with padding, as ADR-20 encodes digests and meta subjects. */
static void base64url(const unsigned char *in, size_t len, char *out, size_t cap) {
    static const char tab[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    size_t o = 0;
    for (size_t i = 0; i < len && o + 5 < cap; i += 3) {
        uint32_t v = (uint32_t)in[i] << 16;
        if (i + 1 < len) v |= (uint32_t)in[i + 1] << 8;
        if (i + 2 < len) v |= in[i + 2];
        out[o++] = tab[(v >> 18) & 63];
        out[o++] = tab[(v >> 12) & 63];
        out[o++] = i + 1 < len ? tab[(v >> 6) & 63] : '=';
        out[o++] = i + 2 < len ? tab[v & 63] : '=';
    }
    out[o] = '\0';
}

/* "SHA-256=<base64url>" of the bytes, computed here with libcrypto. */
static void digest_of(const void *data, size_t len, char out[80]) {
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int md_len = 0;
    EVP_Digest(len ? data : "", len, md, &md_len, EVP_sha256(), NULL);
    char b64[60];
    base64url(md, md_len, b64, sizeof b64);
    snprintf(out, 80, "SHA-256=%s", b64);
}

/* `n` pseudo-random bytes (xorshift, seeded from the clock), freed when
 * the case ends. */
static unsigned char *random_bytes(size_t n) {
    unsigned char *p = (unsigned char *)malloc(n ? n : 1);
    if (!p) return NULL;
    nt_cleanup(free, p);
    uint64_t x = (uint64_t)now_realtime_ns() | 1;
    for (size_t i = 0; i < n; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        p[i] = (unsigned char)(x >> 24);
    }
    return p;
}

/* `n` bytes of a recognisable pattern (offset-dependent), freed when the
 * case ends. */
static unsigned char *pattern_bytes(size_t n, unsigned salt) {
    unsigned char *p = (unsigned char *)malloc(n ? n : 1);
    if (!p) return NULL;
    nt_cleanup(free, p);
    for (size_t i = 0; i < n; i++) p[i] = (unsigned char)(i * 131 + (i >> 8) + salt);
    return p;
}

/* Checks every field of a fresh object's info. */
static bool check_info_at(int line, const natsio_obj_info *info, const char *bucket, const char *name,
                          const void *data, size_t len, uint64_t chunk_size) {
    char want_digest[80];
    digest_of(data, len, want_digest);
    uint64_t want_chunks = (len + chunk_size - 1) / chunk_size;
    const char *got_name = natsio_obj_info_name(info);
    const char *got_bucket = natsio_obj_info_bucket(info);
    const char *digest = natsio_obj_info_digest(info);
    const char *nuid = natsio_obj_info_nuid(info);
    int64_t age = now_realtime_ns() - natsio_obj_info_mtime_ns(info);
    bool ok = got_name && strcmp(got_name, name) == 0 && got_bucket && strcmp(got_bucket, bucket) == 0 &&
              natsio_obj_info_size(info) == len && natsio_obj_info_chunks(info) == want_chunks && digest &&
              strcmp(digest, want_digest) == 0 && nuid && strlen(nuid) >= 16 && !natsio_obj_info_deleted(info) &&
              !natsio_obj_info_is_link(info) && natsio_obj_info_link_bucket(info) == NULL &&
              natsio_obj_info_link_name(info) == NULL && age > -60000000000LL && age < 60000000000LL;
    if (!ok) {
        nt_fail_at(__FILE__, line,
                   "info of %s/%s: name %s bucket %s size %llu chunks %llu (want %llu) digest %s (want %s) nuid %s "
                   "deleted %d link %d mtime %lld ns ago",
                   bucket, name, got_name ? got_name : "(null)", got_bucket ? got_bucket : "(null)",
                   (unsigned long long)natsio_obj_info_size(info), (unsigned long long)natsio_obj_info_chunks(info),
                   (unsigned long long)want_chunks, digest ? digest : "(null)", want_digest, nuid ? nuid : "(null)",
                   natsio_obj_info_deleted(info), natsio_obj_info_is_link(info), (long long)age);
        return false;
    }
    if (strncmp(digest, "SHA-256=", 8) != 0) {
        nt_fail_at(__FILE__, line, "digest %s lacks the SHA-256= prefix", digest);
        return false;
    }
    return true;
}
#define CHECK_INFO(info, bucket, name, data, len, chunk) \
    NT_CHECK(check_info_at(__LINE__, (info), (bucket), (name), (data), (len), (chunk)))

/* The names in `list` joined with ',' (for checks and failure messages). */
static const char *list_names(const natsio_obj_info_list *list, char *buf, size_t cap) {
    buf[0] = '\0';
    for (size_t i = 0; i < natsio_obj_info_list_count(list); i++) {
        const natsio_obj_info *info = natsio_obj_info_list_get(list, i);
        if (i) strncat(buf, ",", cap - strlen(buf) - 1);
        strncat(buf, natsio_obj_info_name(info) ? natsio_obj_info_name(info) : "(null)", cap - strlen(buf) - 1);
        if (natsio_obj_info_deleted(info)) strncat(buf, "(deleted)", cap - strlen(buf) - 1);
    }
    return buf;
}

/* ---- buckets --------------------------------------------------------------- */

static void test_bucket_create_bind_update_delete(void) {
    natsio_js *js = connect_js();
    NT_CHECK(js != NULL);
    const char *cfg = "{\"bucket\":\"OLIFE\",\"description\":\"first\",\"storage\":\"memory\"}";
    natsio_obj *obj = CREATE_STORE(js, cfg);
    NT_CHECK(obj != NULL);
    NT_CHECK_STR_EQ(natsio_obj_bucket(obj), "OLIFE");

    /* The backing stream, as ADR-20 lays it out. */
    char *info = NULL;
    EXPECT_OK(natsio_js_stream_info(js, "OBJ_OLIFE", NULL, &info));
    kept(info);
    NT_CHECK_MSG(strstr(info, "\"$O.OLIFE.C.>\"") != NULL && strstr(info, "\"$O.OLIFE.M.>\"") != NULL, "%s", info);
    NT_CHECK_MSG(strstr(info, "\"allow_rollup_hdrs\":true") != NULL, "%s", info);
    NT_CHECK_MSG(strstr(info, "\"discard\":\"new\"") != NULL, "%s", info);
    NT_CHECK_MSG(strstr(info, "\"description\":\"first\"") != NULL, "%s", info);

    /* An identical create binds: both handles see the same objects. */
    natsio_obj *again = CREATE_STORE(js, cfg);
    NT_CHECK(again != NULL && again != obj);
    NT_CHECK(PUT_STR(obj, "hello", "world") != NULL);
    CHECK_READS_STR(again, "hello", "world");
    /* Another configuration is refused, and nothing changed. */
    natsio_obj *out = SENTINEL;
    EXPECT_FAILS(NATSIO_ERR_BUCKET_EXISTS,
                 natsio_js_obj_create(js, "{\"bucket\":\"OLIFE\",\"description\":\"other\",\"storage\":\"memory\"}",
                                      NATSIO_CREATE, &out));
    NT_CHECK(out == SENTINEL);
    CHECK_READS_STR(again, "hello", "world");

    /* Update changes it; a missing bucket cannot be updated. */
    natsio_obj *upd = NULL;
    EXPECT_OK(natsio_js_obj_create(js, "{\"bucket\":\"OLIFE\",\"description\":\"second\",\"storage\":\"memory\"}",
                                   NATSIO_UPDATE, &upd));
    nt_cleanup(obj_free_cb, upd);
    NT_CHECK_STR_EQ(natsio_obj_bucket(upd), "OLIFE");
    natsio_obj_status *status = NULL;
    EXPECT_OK(natsio_obj_get_status(obj, &status));
    nt_cleanup(status_free_cb, status);
    NT_CHECK_STR_EQ(natsio_obj_status_description(status), "second");
    CHECK_READS_STR(upd, "hello", "world");
    EXPECT_FAILS(NATSIO_ERR_BUCKET_NOT_FOUND,
                 natsio_js_obj_create(js, "{\"bucket\":\"OLIFE_NONE\"}", NATSIO_UPDATE, &out));
    NT_CHECK(out == SENTINEL);
    char *none = SENTINEL_STR;
    EXPECT_FAILS(NATSIO_ERR_STREAM_NOT_FOUND, natsio_js_stream_info(js, "OBJ_OLIFE_NONE", NULL, &none));
    NT_CHECK(none == SENTINEL_STR);

    /* Create-or-update: creates, then updates. */
    natsio_obj *cu = NULL;
    EXPECT_OK(natsio_js_obj_create(js, "{\"bucket\":\"OLIFE2\",\"storage\":\"memory\"}", NATSIO_CREATE_OR_UPDATE,
                                   &cu));
    nt_cleanup(obj_free_cb, cu);
    natsio_obj *cu2 = NULL;
    EXPECT_OK(natsio_js_obj_create(js, "{\"bucket\":\"OLIFE2\",\"description\":\"d2\",\"storage\":\"memory\"}",
                                   NATSIO_CREATE_OR_UPDATE, &cu2));
    nt_cleanup(obj_free_cb, cu2);
    natsio_obj_status *s2 = NULL;
    EXPECT_OK(natsio_obj_get_status(cu, &s2));
    nt_cleanup(status_free_cb, s2);
    NT_CHECK_STR_EQ(natsio_obj_status_description(s2), "d2");

    /* Bind sees what another handle wrote; a missing bucket is not found. */
    natsio_obj *bound = NULL;
    EXPECT_OK(natsio_js_obj_bind(js, "OLIFE", &bound));
    nt_cleanup(obj_free_cb, bound);
    NT_CHECK_STR_EQ(natsio_obj_bucket(bound), "OLIFE");
    CHECK_READS_STR(bound, "hello", "world");
    EXPECT_FAILS(NATSIO_ERR_BUCKET_NOT_FOUND, natsio_js_obj_bind(js, "OLIFE_NONE", &out));
    NT_CHECK(out == SENTINEL);
    /* A Key-Value bucket is no object store. */
    natsio_kv *kv = create_bucket(js, "{\"bucket\":\"OLIFEKV\",\"storage\":\"memory\"}");
    NT_CHECK(kv != NULL);
    EXPECT_FAILS(NATSIO_ERR_BUCKET_NOT_FOUND, natsio_js_obj_bind(js, "OLIFEKV", &out));
    NT_CHECK(out == SENTINEL);
    EXPECT_OK(natsio_js_kv_delete(js, "OLIFEKV"));

    /* The token forms. */
    natsio_token *t = NULL;
    EXPECT_OK(natsio_js_obj_create_async(js, "{\"bucket\":\"OLIFE3\",\"storage\":\"memory\"}", NATSIO_CREATE, &t));
    nt_cleanup(token_free_cb, t);
    NT_CHECK_INT_EQ(token_outcome(t, 10000), NATSIO_OK);
    natsio_obj *from_token = NULL;
    EXPECT_OK(natsio_token_obj(t, &from_token));
    nt_cleanup(obj_free_cb, from_token);
    natsio_obj *second = NULL;
    EXPECT_OK(natsio_token_obj(t, &second)); /* a new handle each call */
    nt_cleanup(obj_free_cb, second);
    NT_CHECK(second != from_token);
    NT_CHECK_STR_EQ(natsio_obj_bucket(from_token), "OLIFE3");
    NT_CHECK_STR_EQ(natsio_obj_bucket(second), "OLIFE3");
    natsio_token *bt = NULL;
    EXPECT_OK(natsio_js_obj_bind_async(js, "OLIFE_NONE", &bt));
    nt_cleanup(token_free_cb, bt);
    NT_CHECK_INT_EQ(token_outcome(bt, 10000), NATSIO_ERR_BUCKET_NOT_FOUND);
    EXPECT_FAILS(NATSIO_ERR_BUCKET_NOT_FOUND, natsio_token_obj(bt, &out));
    NT_CHECK(out == SENTINEL);
    natsio_token *bt2 = NULL;
    EXPECT_OK(natsio_js_obj_bind_async(js, "OLIFE3", &bt2));
    nt_cleanup(token_free_cb, bt2);
    NT_CHECK_INT_EQ(token_outcome(bt2, 10000), NATSIO_OK);
    natsio_token *dt = NULL;
    EXPECT_OK(natsio_js_obj_delete_async(js, "OLIFE3", &dt));
    nt_cleanup(token_free_cb, dt);
    NT_CHECK_INT_EQ(token_outcome(dt, 10000), NATSIO_OK);

    /* Delete: the bucket and its stream are gone; handles fail cleanly. */
    EXPECT_OK(natsio_js_obj_delete(js, "OLIFE"));
    EXPECT_FAILS(NATSIO_ERR_BUCKET_NOT_FOUND, natsio_js_obj_bind(js, "OLIFE", &out));
    EXPECT_FAILS(NATSIO_ERR_BUCKET_NOT_FOUND, natsio_js_obj_delete(js, "OLIFE"));
    EXPECT_FAILS(NATSIO_ERR_BUCKET_NOT_FOUND, natsio_js_obj_delete(js, "OLIFE3"));
    NT_CHECK(out == SENTINEL);
    char *gone = SENTINEL_STR;
    EXPECT_FAILS(NATSIO_ERR_STREAM_NOT_FOUND, natsio_js_stream_info(js, "OBJ_OLIFE", NULL, &gone));
    NT_CHECK(gone == SENTINEL_STR);
    natsio_obj_reader *r = SENTINEL;
    natsio_status st = natsio_obj_get(obj, "hello", false, &r);
    NT_CHECK_MSG(st != NATSIO_OK, "get from a deleted bucket succeeded");
    NT_CHECK(r == SENTINEL);
    EXPECT_FAILS(NATSIO_ERR_BUCKET_NOT_FOUND, natsio_obj_put(obj, "x", NULL, "x", 1, NULL));
    EXPECT_OK(natsio_js_obj_delete(js, "OLIFE2"));
}

static void test_bucket_name_and_config_errors(void) {
    natsio_js *js = connect_js();
    NT_CHECK(js != NULL);
    natsio_obj *out = SENTINEL;
    const char *bad_names[] = {"bad.name", "b c", "", "a*", "a>", "\xc3\xbc", "a/b", "$O"};
    for (size_t i = 0; i < NT_COUNT(bad_names); i++) {
        char cfg[64];
        snprintf(cfg, sizeof cfg, "{\"bucket\":\"%s\"}", bad_names[i]);
        EXPECT_FAILS(NATSIO_ERR_INVALID_BUCKET_NAME, natsio_js_obj_create(js, cfg, NATSIO_CREATE, &out));
        EXPECT_FAILS(NATSIO_ERR_INVALID_BUCKET_NAME, natsio_js_obj_create(js, cfg, NATSIO_UPDATE, &out));
        EXPECT_FAILS(NATSIO_ERR_INVALID_BUCKET_NAME, natsio_js_obj_create(js, cfg, NATSIO_CREATE_OR_UPDATE, &out));
        EXPECT_FAILS(NATSIO_ERR_INVALID_BUCKET_NAME, natsio_js_obj_bind(js, bad_names[i], &out));
        EXPECT_FAILS(NATSIO_ERR_INVALID_BUCKET_NAME, natsio_js_obj_delete(js, bad_names[i]));
    }
    static const struct {
        const char *config;
        const char *field;
    } bad_configs[] = {
        {"{\"bucket\":\"OCFG\",\"ttl\":\"soon\"}", "ttl"},
        {"{\"bucket\":\"OCFG\",\"storage\":\"disk\"}", "storage"},
        {"{\"bucket\":\"OCFG\",\"max_bytes\":\"lots\"}", "max_bytes"},
        {"{\"bucket\":\"OCFG\",\"compression\":\"yes\"}", "compression"},
        {"{\"bucket\":\"OCFG\",\"metadata\":{\"k\":1}}", "metadata"},
        {"{\"description\":\"no bucket\"}", "bucket"},
    };
    for (size_t i = 0; i < NT_COUNT(bad_configs); i++)
        EXPECT_FAILS_NAMING(NATSIO_ERR_CONFIG, bad_configs[i].field,
                            natsio_js_obj_create(js, bad_configs[i].config, NATSIO_CREATE, &out));
    /* An unknown field is refused (by the library, or by the server). */
    plant_error_marker();
    natsio_status unknown = natsio_js_obj_create(js, "{\"bucket\":\"OCFG\",\"color\":\"red\"}", NATSIO_CREATE, &out);
    NT_CHECK_MSG((unknown == NATSIO_ERR_CONFIG || unknown == NATSIO_ERR_JS_API) &&
                     strstr(natsio_last_error(), "color") != NULL,
                 "unknown field: %s (%s)", natsio_status_str(unknown), natsio_last_error());
    EXPECT_FAILS(NATSIO_ERR_CONFIG, natsio_js_obj_create(js, "not json", NATSIO_CREATE, &out));
    EXPECT_FAILS(NATSIO_ERR_CONFIG, natsio_js_obj_create(js, "[]", NATSIO_UPDATE, &out));
    EXPECT_FAILS(NATSIO_ERR_CONFIG, natsio_js_obj_create(js, "{\"bucket\":7}", NATSIO_CREATE_OR_UPDATE, &out));
    EXPECT_FAILS_NAMING(NATSIO_ERR_INVALID_ARGUMENT, "action",
                        natsio_js_obj_create(js, "{\"bucket\":\"OCFG\"}", 3, &out));
    EXPECT_FAILS_NAMING(NATSIO_ERR_INVALID_ARGUMENT, "action",
                        natsio_js_obj_create(js, "{\"bucket\":\"OCFG\"}", -1, &out));
    NT_CHECK(out == SENTINEL);
    /* None of them created anything. */
    EXPECT_FAILS(NATSIO_ERR_BUCKET_NOT_FOUND, natsio_js_obj_bind(js, "OCFG", &out));
    NT_CHECK(out == SENTINEL);
    /* Durations in nanoseconds and as text are the same. */
    natsio_obj *a = CREATE_STORE(js, "{\"bucket\":\"OTTL1\",\"ttl\":90000000000,\"storage\":\"memory\"}");
    natsio_obj *b = CREATE_STORE(js, "{\"bucket\":\"OTTL2\",\"ttl\":\"1m30s\",\"storage\":\"memory\"}");
    NT_CHECK(a != NULL && b != NULL);
    natsio_obj_status *sa = NULL, *sb = NULL;
    EXPECT_OK(natsio_obj_get_status(a, &sa));
    nt_cleanup(status_free_cb, sa);
    EXPECT_OK(natsio_obj_get_status(b, &sb));
    nt_cleanup(status_free_cb, sb);
    NT_CHECK_INT_EQ(natsio_obj_status_ttl_ns(sa), 90000000000LL);
    NT_CHECK_INT_EQ(natsio_obj_status_ttl_ns(sb), 90000000000LL);
    EXPECT_OK(natsio_js_obj_delete(js, "OTTL1"));
    EXPECT_OK(natsio_js_obj_delete(js, "OTTL2"));
}

/* The status in `list` of bucket `bucket`, or NULL. */
static const natsio_obj_status *status_in(const natsio_obj_status_list *list, const char *bucket) {
    for (size_t i = 0; i < natsio_obj_status_list_count(list); i++) {
        const natsio_obj_status *s = natsio_obj_status_list_get(list, i);
        if (natsio_obj_status_bucket(s) && strcmp(natsio_obj_status_bucket(s), bucket) == 0) return s;
    }
    return NULL;
}

static void test_names_and_statuses(void) {
    natsio_js *js = connect_js();
    NT_CHECK(js != NULL);
    natsio_obj *full = CREATE_STORE(js, "{\"bucket\":\"OSTAT\",\"description\":\"typed fields\",\"ttl\":\"2h\","
                                        "\"storage\":\"memory\",\"replicas\":1,\"compression\":true,"
                                        "\"metadata\":{\"team\":\"blue\"}}");
    NT_CHECK(full != NULL);
    natsio_obj *plain = CREATE_STORE(js, "{\"bucket\":\"OSTAT_PLAIN\"}");
    NT_CHECK(plain != NULL);
    /* Streams that only look like buckets in one way. */
    NT_CHECK(create_stream_config(js, "{\"name\":\"NOTOBJ\",\"subjects\":[\"$O.fake.C.>\",\"$O.fake.M.>\"],"
                                      "\"storage\":\"memory\"}"));
    NT_CHECK(create_stream_config(js, "{\"name\":\"OBJ_NOTSUBJ\",\"subjects\":[\"notsubj.>\"],"
                                      "\"storage\":\"memory\"}"));
    natsio_kv *kv = create_bucket(js, "{\"bucket\":\"OSTATKV\",\"storage\":\"memory\"}");
    NT_CHECK(kv != NULL);

    natsio_string_list *names = NULL;
    EXPECT_OK(natsio_js_obj_names(js, &names));
    kept_list(names);
    char joined[1024];
    string_list_join(names, joined, sizeof joined);
    NT_CHECK_MSG(string_list_has(names, "OSTAT") && string_list_has(names, "OSTAT_PLAIN"), "names: %s", joined);
    NT_CHECK_MSG(!string_list_has(names, "NOTOBJ") && !string_list_has(names, "fake") &&
                     !string_list_has(names, "OBJ_OSTAT") && !string_list_has(names, "NOTSUBJ") &&
                     !string_list_has(names, "OSTATKV"),
                 "names: %s", joined);
    natsio_token *nt = NULL;
    EXPECT_OK(natsio_js_obj_names_async(js, &nt));
    nt_cleanup(token_free_cb, nt);
    NT_CHECK_INT_EQ(token_outcome(nt, 10000), NATSIO_OK);
    natsio_string_list *names2 = NULL;
    EXPECT_OK(natsio_token_string_list(nt, &names2));
    kept_list(names2);
    NT_CHECK_INT_EQ(natsio_string_list_count(names2), natsio_string_list_count(names));

    /* Statuses: one per bucket, the same ones. */
    uint64_t size_before = 0;
    {
        natsio_obj_status_list *list = NULL;
        EXPECT_OK(natsio_js_obj_statuses(js, &list));
        nt_cleanup(status_list_free_cb, list);
        NT_CHECK_INT_EQ(natsio_obj_status_list_count(list), natsio_string_list_count(names));
        NT_CHECK(natsio_obj_status_list_get(list, natsio_obj_status_list_count(list)) == NULL);
        NT_CHECK(status_in(list, "NOTOBJ") == NULL && status_in(list, "fake") == NULL &&
                 status_in(list, "NOTSUBJ") == NULL);
        const natsio_obj_status *s = status_in(list, "OSTAT");
        NT_CHECK_MSG(s != NULL, "names: %s", joined);
        NT_CHECK_STR_EQ(natsio_obj_status_description(s), "typed fields");
        NT_CHECK_INT_EQ(natsio_obj_status_ttl_ns(s), 7200000000000LL);
        NT_CHECK_STR_EQ(natsio_obj_status_storage(s), "memory");
        NT_CHECK_INT_EQ(natsio_obj_status_replicas(s), 1);
        NT_CHECK(natsio_obj_status_compression(s));
        NT_CHECK(!natsio_obj_status_sealed(s));
        const char *md = natsio_obj_status_metadata_json(s);
        NT_CHECK_MSG(md != NULL && strstr(md, "\"team\":\"blue\"") != NULL, "metadata %s", md ? md : "(null)");
        const char *si = natsio_obj_status_stream_info_json(s);
        NT_CHECK_MSG(si != NULL && strstr(si, "\"name\":\"OBJ_OSTAT\"") != NULL, "%s", si ? si : "(null)");
        size_before = natsio_obj_status_size(s);
        const natsio_obj_status *p = status_in(list, "OSTAT_PLAIN");
        NT_CHECK(p != NULL);
        NT_CHECK(natsio_obj_status_description(p) == NULL);
        NT_CHECK_INT_EQ(natsio_obj_status_ttl_ns(p), 0);
        NT_CHECK_STR_EQ(natsio_obj_status_storage(p), "file");
        NT_CHECK_INT_EQ(natsio_obj_status_replicas(p), 1);
        NT_CHECK(!natsio_obj_status_compression(p));
        NT_CHECK_INT_EQ(natsio_obj_status_size(p), 0);
        const char *pmd = natsio_obj_status_metadata_json(p);
        NT_CHECK_MSG(pmd != NULL && pmd[0] == '{' && strstr(pmd, "team") == NULL, "%s", pmd ? pmd : "(null)");
    }

    /* The size follows the data. */
    unsigned char *data = pattern_bytes(5000, 1);
    NT_CHECK(data != NULL);
    NT_CHECK(PUT(full, "five-k", NULL, data, 5000) != NULL);
    natsio_obj_status *st = NULL;
    EXPECT_OK(natsio_obj_get_status(full, &st));
    nt_cleanup(status_free_cb, st);
    NT_CHECK_STR_EQ(natsio_obj_status_bucket(st), "OSTAT");
    NT_CHECK_MSG(natsio_obj_status_size(st) > size_before && natsio_obj_status_size(st) > 0,
                 "size %llu after a put (before %llu)", (unsigned long long)natsio_obj_status_size(st),
                 (unsigned long long)size_before);
    NT_CHECK_STR_EQ(natsio_obj_status_description(st), "typed fields");
    NT_CHECK_INT_EQ(natsio_obj_status_ttl_ns(st), 7200000000000LL);
    natsio_token *stt = NULL;
    EXPECT_OK(natsio_obj_get_status_async(full, &stt));
    nt_cleanup(token_free_cb, stt);
    NT_CHECK_INT_EQ(token_outcome(stt, 10000), NATSIO_OK);
    natsio_obj_status *st2 = NULL;
    EXPECT_OK(natsio_token_obj_status(stt, &st2));
    nt_cleanup(status_free_cb, st2);
    NT_CHECK_INT_EQ(natsio_obj_status_size(st2), natsio_obj_status_size(st));
    natsio_token *lt = NULL;
    EXPECT_OK(natsio_js_obj_statuses_async(js, &lt));
    nt_cleanup(token_free_cb, lt);
    NT_CHECK_INT_EQ(token_outcome(lt, 10000), NATSIO_OK);
    natsio_obj_status_list *list2 = NULL;
    EXPECT_OK(natsio_token_obj_status_list(lt, &list2));
    nt_cleanup(status_list_free_cb, list2);
    const natsio_obj_status *s2 = status_in(list2, "OSTAT");
    NT_CHECK(s2 != NULL);
    NT_CHECK_INT_EQ(natsio_obj_status_size(s2), natsio_obj_status_size(st));

    /* Deleted buckets leave the lists. */
    EXPECT_OK(natsio_js_obj_delete(js, "OSTAT"));
    EXPECT_OK(natsio_js_obj_delete(js, "OSTAT_PLAIN"));
    natsio_string_list *after = NULL;
    EXPECT_OK(natsio_js_obj_names(js, &after));
    kept_list(after);
    NT_CHECK(!string_list_has(after, "OSTAT") && !string_list_has(after, "OSTAT_PLAIN"));
    EXPECT_OK(natsio_js_stream_delete(js, "NOTOBJ"));
    EXPECT_OK(natsio_js_stream_delete(js, "OBJ_NOTSUBJ"));
    EXPECT_OK(natsio_js_kv_delete(js, "OSTATKV"));
}

/* ---- round trips ------------------------------------------------------------- */

static void test_round_trips_small_sizes(void) {
    natsio_js *js = connect_js();
    NT_CHECK(js != NULL);
    natsio_obj *obj = MEMORY_STORE(js, "OSMALL");
    NT_CHECK(obj != NULL);
    const char *meta = "{\"chunk_size\":1024}";
    static const size_t sizes[] = {0, 1, 1024, 1025, 3 * 1024 + 7};
    int64_t metas = 0, chunks = 0;
    for (size_t i = 0; i < NT_COUNT(sizes); i++) {
        size_t n = sizes[i];
        char name[32];
        snprintf(name, sizeof name, "size-%zu", n);
        unsigned char *data = random_bytes(n);
        NT_CHECK(data != NULL);
        natsio_obj_info *info = PUT(obj, name, meta, data, n);
        NT_CHECK(info != NULL);
        CHECK_INFO(info, "OSMALL", name, data, n, 1024);
        NT_CHECK_INT_EQ(natsio_obj_info_max_chunk_size(info), 1024);
        metas++;
        chunks += (int64_t)natsio_obj_info_chunks(info);
        /* Read back whole, and in uneven small reads. */
        CHECK_READS_BACK(obj, name, data, n);
        unsigned char *got = NULL;
        size_t got_len = 0;
        EXPECT_STATUS(NATSIO_DONE, get_bytes(obj, name, 333, &got, &got_len));
        NT_CHECK_MEM_EQ(got, got_len, data, n);
        /* The stored info agrees with the put's. */
        natsio_obj_info *stored = INFO_OF(obj, name);
        NT_CHECK(stored != NULL);
        CHECK_INFO(stored, "OSMALL", name, data, n, 1024);
        NT_CHECK_STR_EQ(natsio_obj_info_nuid(stored), natsio_obj_info_nuid(info));
    }
    /* One meta message per object and one message per chunk. */
    NT_CHECK_INT_EQ(stream_messages(js, "OBJ_OSMALL"), metas + chunks);
    /* A reader's info is the object's; a read after the end stays done. */
    natsio_obj_reader *r = NULL;
    EXPECT_OK(natsio_obj_get(obj, "size-1025", false, &r));
    nt_cleanup(reader_free_cb, r);
    const natsio_obj_info *ri = natsio_obj_reader_info(r);
    NT_CHECK_STR_EQ(natsio_obj_info_name(ri), "size-1025");
    NT_CHECK_INT_EQ(natsio_obj_info_size(ri), 1025);
    NT_CHECK_INT_EQ(natsio_obj_info_chunks(ri), 2);
    unsigned char *all = NULL;
    size_t all_len = 0;
    EXPECT_STATUS(NATSIO_DONE, read_all(r, 4096, &all, &all_len));
    NT_CHECK_INT_EQ(all_len, 1025);
    char buf[16];
    size_t n = SIZE_MAX;
    EXPECT_STATUS(NATSIO_DONE, natsio_obj_reader_read(r, buf, sizeof buf, &n, 1000));
    NT_CHECK_INT_EQ(n, 0);
    /* The 0-byte object is done at once. */
    natsio_obj_reader *empty = NULL;
    EXPECT_OK(natsio_obj_get(obj, "size-0", false, &empty));
    nt_cleanup(reader_free_cb, empty);
    n = SIZE_MAX;
    EXPECT_STATUS(NATSIO_DONE, natsio_obj_reader_read(empty, buf, sizeof buf, &n, 1000));
    NT_CHECK_INT_EQ(n, 0);
    NT_CHECK_STR_EQ(natsio_obj_info_digest(natsio_obj_reader_info(empty)),
                    "SHA-256=47DEQpj8HBSa-_TImW-5JCeuQeRkm5NMpJWZG3hSuFU=");
    /* Missing objects. */
    natsio_obj_reader *none = SENTINEL;
    natsio_obj_info *none_info = SENTINEL;
    EXPECT_FAILS(NATSIO_ERR_OBJECT_NOT_FOUND, natsio_obj_get(obj, "missing", false, &none));
    EXPECT_FAILS(NATSIO_ERR_OBJECT_NOT_FOUND, natsio_obj_get_info(obj, "missing", true, &none_info));
    NT_CHECK(none == SENTINEL && none_info == SENTINEL);
    /* NULL data with length 0 is an empty object too. */
    natsio_obj_info *nul = PUT(obj, "null-data", NULL, NULL, 0);
    NT_CHECK(nul != NULL);
    CHECK_INFO(nul, "OSMALL", "null-data", "", 0, DEFAULT_CHUNK);
    EXPECT_OK(natsio_js_obj_delete(js, "OSMALL"));
}

static void test_round_trip_10_mib_random(void) {
    natsio_js *js = connect_js();
    NT_CHECK(js != NULL);
    natsio_obj *obj = MEMORY_STORE(js, "OBIG");
    NT_CHECK(obj != NULL);
    size_t n = 10u * 1024u * 1024u;
    unsigned char *data = random_bytes(n);
    NT_CHECK(data != NULL);
    natsio_obj_info *info = PUT(obj, "big.bin", NULL, data, n);
    NT_CHECK(info != NULL);
    CHECK_INFO(info, "OBIG", "big.bin", data, n, DEFAULT_CHUNK);
    NT_CHECK_INT_EQ(natsio_obj_info_chunks(info), 80);
    NT_CHECK_INT_EQ(natsio_obj_info_max_chunk_size(info), DEFAULT_CHUNK);
    /* Every chunk but the meta is a full default chunk. */
    NT_CHECK_INT_EQ(stream_messages(js, "OBJ_OBIG"), 81);
    int64_t bytes = stream_state_int(js, "OBJ_OBIG", "bytes");
    NT_CHECK_MSG(bytes > (int64_t)n, "the stream holds %lld bytes", (long long)bytes);
    unsigned char *got = NULL;
    size_t got_len = 0;
    EXPECT_STATUS(NATSIO_DONE, get_bytes(obj, "big.bin", 100000, &got, &got_len));
    NT_CHECK_INT_EQ(got_len, n);
    NT_CHECK_MSG(memcmp(got, data, n) == 0, "10 MiB read back differ");
    char digest[80];
    digest_of(got, got_len, digest);
    NT_CHECK_STR_EQ(natsio_obj_info_digest(info), digest);
    EXPECT_OK(natsio_js_obj_delete(js, "OBIG"));
}

static void test_wire_layout_and_info_json(void) {
    natsio_js *js = connect_js();
    NT_CHECK(js != NULL);
    natsio_obj *obj = MEMORY_STORE(js, "OWIRE");
    NT_CHECK(obj != NULL);
    const char *name = "dir/file name.txt"; /* any text is a name */
    unsigned char *data = pattern_bytes(2500, 3);
    NT_CHECK(data != NULL);
    natsio_obj_info *info = PUT(obj, name, "{\"chunk_size\":1000,\"description\":\"layout\"}", data, 2500);
    NT_CHECK(info != NULL);
    CHECK_INFO(info, "OWIRE", name, data, 2500, 1000);

    /* The meta message sits on $O.<bucket>.M.<base64url(name)>, rolled up. */
    char enc[64], subject[128];
    base64url((const unsigned char *)name, strlen(name), enc, sizeof enc);
    snprintf(subject, sizeof subject, "$O.OWIRE.M.%s", enc);
    natsio_stored_msg *m = NULL;
    EXPECT_OK(natsio_js_stream_get_msg(js, "OBJ_OWIRE", 0, subject, &m));
    const char *json = natsio_stored_msg_data(m);
    bool has_name = strstr(json, "\"name\":\"dir/file name.txt\"") != NULL;
    bool has_nuid = strstr(json, natsio_obj_info_nuid(info)) != NULL;
    bool has_digest = strstr(json, natsio_obj_info_digest(info)) != NULL;
    bool has_bucket = strstr(json, "\"bucket\":\"OWIRE\"") != NULL;
    const char *rollup = NULL;
    natsio_status hs = natsio_headers_get(natsio_stored_msg_headers(m), "Nats-Rollup", &rollup);
    bool rollup_sub = hs == NATSIO_OK && rollup && strcmp(rollup, "sub") == 0;
    char meta_copy[1024];
    snprintf(meta_copy, sizeof meta_copy, "%s", json);
    natsio_stored_msg_free(m);
    NT_CHECK_MSG(has_name && has_nuid && has_digest && has_bucket, "meta message: %s", meta_copy);
    NT_CHECK_MSG(rollup_sub, "meta message has no Nats-Rollup: sub header");

    /* The chunks sit on $O.<bucket>.C.<nuid>, in order. */
    snprintf(subject, sizeof subject, "$O.OWIRE.C.%s", natsio_obj_info_nuid(info));
    EXPECT_OK(natsio_js_stream_get_msg(js, "OBJ_OWIRE", 0, subject, &m));
    size_t last_len = natsio_stored_msg_data_len(m);
    bool last_ok = last_len == 500 && memcmp(natsio_stored_msg_data(m), data + 2000, 500) == 0;
    natsio_stored_msg_free(m);
    NT_CHECK_MSG(last_ok, "last chunk: %zu bytes", last_len);
    NT_CHECK_INT_EQ(stream_messages(js, "OBJ_OWIRE"), 4);

    /* The info JSON is ADR-20's. */
    const char *ij = natsio_obj_info_json(info);
    NT_CHECK(ij != NULL);
    NT_CHECK_MSG(strstr(ij, "\"name\":\"dir/file name.txt\"") && strstr(ij, "\"bucket\":\"OWIRE\"") &&
                     strstr(ij, "\"size\":2500") && strstr(ij, "\"chunks\":3") &&
                     strstr(ij, "\"description\":\"layout\"") && strstr(ij, "\"max_chunk_size\":1000"),
                 "%s", ij);
    NT_CHECK_STR_EQ(natsio_obj_info_description(info), "layout");
    NT_CHECK(natsio_obj_info_headers(info) == NULL);
    NT_CHECK_STR_EQ(natsio_obj_info_metadata_json(info), "{}");
    NT_CHECK(!natsio_obj_info_is_initial_done(info));
    /* A clone is a handle of its own. */
    natsio_obj_info *clone = NULL;
    EXPECT_OK(natsio_obj_info_clone(info, &clone));
    nt_cleanup(info_free_cb, clone);
    NT_CHECK(clone != info);
    NT_CHECK_STR_EQ(natsio_obj_info_nuid(clone), natsio_obj_info_nuid(info));
    NT_CHECK_STR_EQ(natsio_obj_info_json(clone), ij);
    EXPECT_OK(natsio_js_obj_delete(js, "OWIRE"));
}

/* ---- writer and reader ----------------------------------------------------------- */

static void test_writer_in_odd_pieces(void) {
    natsio_js *js = connect_js();
    NT_CHECK(js != NULL);
    natsio_obj *obj = MEMORY_STORE(js, "OWRITE");
    NT_CHECK(obj != NULL);
    size_t total = 20000;
    unsigned char *data = random_bytes(total);
    NT_CHECK(data != NULL);

    natsio_obj_writer *w = NULL;
    EXPECT_OK(natsio_obj_writer_open(obj, "pieces", "{\"chunk_size\":1024,\"description\":\"written\"}", &w));
    nt_cleanup(writer_free_cb, w);
    /* Nothing is stored before the finish. */
    natsio_obj_info *early = SENTINEL;
    EXPECT_FAILS(NATSIO_ERR_OBJECT_NOT_FOUND, natsio_obj_get_info(obj, "pieces", false, &early));
    static const size_t pieces[] = {1, 7, 1000, 3333, 0, 17, 1024, 4096, 5};
    size_t off = 0;
    for (size_t i = 0; off < total; i++) {
        size_t n = pieces[i % NT_COUNT(pieces)];
        if (n > total - off) n = total - off;
        natsio_status st = natsio_obj_writer_write(w, data + off, n);
        NT_CHECK_MSG(st == NATSIO_OK, "write %zu bytes at %zu: %s (%s)", n, off, natsio_status_str(st),
                     natsio_last_error());
        off += n;
    }
    EXPECT_OK(natsio_obj_writer_write(w, NULL, 0));
    natsio_obj_info *info = NULL;
    EXPECT_OK(natsio_obj_writer_finish(w, &info));
    nt_cleanup(info_free_cb, info);
    CHECK_INFO(info, "OWRITE", "pieces", data, total, 1024);
    NT_CHECK_STR_EQ(natsio_obj_info_description(info), "written");
    CHECK_READS_BACK(obj, "pieces", data, total);

    /* Finished: writes and finishes are refused; an abort does not undo
     * the object. */
    EXPECT_FAILS(NATSIO_ERR_ILLEGAL_STATE, natsio_obj_writer_write(w, "x", 1));
    natsio_token *t = NULL;
    EXPECT_ASYNC_REFUSED(NATSIO_ERR_ILLEGAL_STATE, t, natsio_obj_writer_write_async(w, "x", 1, &t));
    natsio_obj_info *again = SENTINEL;
    EXPECT_FAILS(NATSIO_ERR_ILLEGAL_STATE, natsio_obj_writer_finish(w, &again));
    EXPECT_ASYNC_REFUSED(NATSIO_ERR_ILLEGAL_STATE, t, natsio_obj_writer_finish_async(w, &t));
    NT_CHECK(again == SENTINEL);
    natsio_status abort_st = natsio_obj_writer_abort(w);
    NT_CHECK_MSG(abort_st == NATSIO_OK || abort_st == NATSIO_ERR_ILLEGAL_STATE, "abort after finish: %s",
                 natsio_status_str(abort_st));
    CHECK_READS_BACK(obj, "pieces", data, total);
    NT_CHECK_INT_EQ(stream_messages(js, "OBJ_OWRITE"), 20 + 1);

    /* A writer of nothing makes an empty object; info_out may be NULL. */
    natsio_obj_writer *w0 = NULL;
    EXPECT_OK(natsio_obj_writer_open(obj, "nothing", NULL, &w0));
    nt_cleanup(writer_free_cb, w0);
    EXPECT_OK(natsio_obj_writer_finish(w0, NULL));
    natsio_obj_info *i0 = INFO_OF(obj, "nothing");
    NT_CHECK(i0 != NULL);
    CHECK_INFO(i0, "OWRITE", "nothing", "", 0, DEFAULT_CHUNK);
    CHECK_READS_BACK(obj, "nothing", "", 0);
    EXPECT_OK(natsio_js_obj_delete(js, "OWRITE"));
}

static void test_writer_async_and_put_async(void) {
    natsio_js *js = connect_js();
    NT_CHECK(js != NULL);
    natsio_obj *obj = MEMORY_STORE(js, "OWASYNC");
    NT_CHECK(obj != NULL);
    size_t total = 50000;
    unsigned char *data = random_bytes(total);
    NT_CHECK(data != NULL);

    natsio_obj_writer *w = NULL;
    EXPECT_OK(natsio_obj_writer_open(obj, "async", "{\"chunk_size\":2048}", &w));
    nt_cleanup(writer_free_cb, w);
    /* Pieces are copied before the call returns and applied in call
     * order: the buffer is scribbled over right after each call. */
    unsigned char piece[3001];
    natsio_token *tokens[32];
    size_t nt = 0, off = 0;
    while (off < total) {
        size_t n = total - off < sizeof piece ? total - off : sizeof piece;
        memcpy(piece, data + off, n);
        NT_CHECK(nt < NT_COUNT(tokens));
        EXPECT_OK(natsio_obj_writer_write_async(w, piece, n, &tokens[nt]));
        nt_cleanup(token_free_cb, tokens[nt]);
        memset(piece, 0xAB, sizeof piece);
        nt++;
        off += n;
    }
    for (size_t i = 0; i < nt; i++) NT_CHECK_INT_EQ(token_outcome(tokens[i], 10000), NATSIO_OK);
    natsio_token *ft = NULL;
    EXPECT_OK(natsio_obj_writer_finish_async(w, &ft));
    nt_cleanup(token_free_cb, ft);
    NT_CHECK_INT_EQ(token_outcome(ft, 10000), NATSIO_OK);
    natsio_obj_info *info = NULL;
    EXPECT_OK(natsio_token_obj_info(ft, &info));
    nt_cleanup(info_free_cb, info);
    CHECK_INFO(info, "OWASYNC", "async", data, total, 2048);
    CHECK_READS_BACK(obj, "async", data, total);
    EXPECT_FAILS(NATSIO_ERR_ILLEGAL_STATE, natsio_obj_writer_write(w, "x", 1));

    /* put_async copies the data before it returns, too. */
    unsigned char *copy = (unsigned char *)malloc(total);
    NT_CHECK(copy != NULL);
    memcpy(copy, data, total);
    natsio_token *pt = NULL;
    natsio_status st = natsio_obj_put_async(obj, "put-async", "{\"chunk_size\":4096}", copy, total, &pt);
    memset(copy, 0, total);
    free(copy);
    NT_CHECK_INT_EQ(st, NATSIO_OK);
    nt_cleanup(token_free_cb, pt);
    NT_CHECK_INT_EQ(token_outcome(pt, 10000), NATSIO_OK);
    natsio_obj_info *pinfo = NULL;
    EXPECT_OK(natsio_token_obj_info(pt, &pinfo));
    nt_cleanup(info_free_cb, pinfo);
    CHECK_INFO(pinfo, "OWASYNC", "put-async", data, total, 4096);
    CHECK_READS_BACK(obj, "put-async", data, total);
    /* A failing put_async: the token carries the status. */
    natsio_token *bad = NULL;
    EXPECT_OK(natsio_js_obj_delete(js, "OWASYNC"));
    EXPECT_OK(natsio_obj_put_async(obj, "late", NULL, "x", 1, &bad));
    nt_cleanup(token_free_cb, bad);
    NT_CHECK_INT_EQ(token_outcome(bad, 10000), NATSIO_ERR_BUCKET_NOT_FOUND);
    natsio_obj_info *none = SENTINEL;
    EXPECT_FAILS(NATSIO_ERR_BUCKET_NOT_FOUND, natsio_token_obj_info(bad, &none));
    NT_CHECK(none == SENTINEL);
}

static void test_reader_async_and_get_async(void) {
    natsio_js *js = connect_js();
    NT_CHECK(js != NULL);
    natsio_obj *obj = MEMORY_STORE(js, "ORASYNC");
    NT_CHECK(obj != NULL);
    size_t total = 10 * 1024 + 100;
    unsigned char *data = random_bytes(total);
    NT_CHECK(data != NULL);
    NT_CHECK(PUT(obj, "obj", "{\"chunk_size\":1024}", data, total) != NULL);

    natsio_token *gt = NULL;
    EXPECT_OK(natsio_obj_get_async(obj, "obj", false, &gt));
    nt_cleanup(token_free_cb, gt);
    NT_CHECK_INT_EQ(token_outcome(gt, 10000), NATSIO_OK);
    natsio_obj_reader *r = NULL;
    EXPECT_OK(natsio_token_obj_reader(gt, &r));
    nt_cleanup(reader_free_cb, r);
    natsio_obj_reader *twice = SENTINEL;
    EXPECT_FAILS(NATSIO_ERR_ILLEGAL_STATE, natsio_token_obj_reader(gt, &twice)); /* once */
    NT_CHECK(twice == SENTINEL);
    NT_CHECK_INT_EQ(natsio_obj_info_size(natsio_obj_reader_info(r)), total);

    /* The pieces come through tokens, then NATSIO_DONE. */
    size_t got = 0;
    natsio_status st = NATSIO_OK;
    for (int i = 0; i < 1000; i++) {
        natsio_token *t = NULL;
        EXPECT_OK(natsio_obj_reader_next_async(r, &t));
        NT_CHECK_INT_EQ(natsio_token_wait(t, 10000), NATSIO_OK);
        const void *p = SENTINEL;
        size_t len = SIZE_MAX;
        st = natsio_token_obj_chunk(t, &p, &len);
        if (st == NATSIO_OK) {
            bool same = len > 0 && got + len <= total && memcmp(p, data + got, len) == 0;
            natsio_token_free(t);
            NT_CHECK_MSG(same, "piece of %zu bytes at %zu differs", len, got);
            got += len;
            continue;
        }
        natsio_token_free(t);
        break;
    }
    NT_CHECK_INT_EQ(st, NATSIO_DONE);
    NT_CHECK_INT_EQ(got, total);
    /* Done for good. */
    natsio_token *t = NULL;
    EXPECT_OK(natsio_obj_reader_next_async(r, &t));
    nt_cleanup(token_free_cb, t);
    NT_CHECK_INT_EQ(token_outcome(t, 10000), NATSIO_DONE);

    /* A get of a missing object: the token carries the status. */
    natsio_token *mt = NULL;
    EXPECT_OK(natsio_obj_get_async(obj, "missing", false, &mt));
    nt_cleanup(token_free_cb, mt);
    NT_CHECK_INT_EQ(token_outcome(mt, 10000), NATSIO_ERR_OBJECT_NOT_FOUND);
    natsio_obj_reader *none = SENTINEL;
    EXPECT_FAILS(NATSIO_ERR_OBJECT_NOT_FOUND, natsio_token_obj_reader(mt, &none));
    NT_CHECK(none == SENTINEL);

    /* A reader freed halfway, and one never read, end cleanly. */
    natsio_obj_reader *half = NULL;
    EXPECT_OK(natsio_obj_get(obj, "obj", false, &half));
    char buf[100];
    size_t n = 0;
    EXPECT_OK(natsio_obj_reader_read(half, buf, sizeof buf, &n, 10000));
    NT_CHECK_MEM_EQ(buf, n, data, n);
    natsio_obj_reader_free(half);
    natsio_obj_reader *unread = NULL;
    EXPECT_OK(natsio_obj_get(obj, "obj", false, &unread));
    natsio_obj_reader_free(unread);
    /* Readers leave no consumers behind. */
    natsio_string_list *consumers = NULL;
    for (int i = 0; i < 100; i++) {
        natsio_string_list_free(consumers);
        consumers = NULL;
        EXPECT_OK(natsio_js_consumer_names(js, "OBJ_ORASYNC", &consumers));
        if (natsio_string_list_count(consumers) == 0) break;
        nt_sleep_ms(50);
    }
    kept_list(consumers);
    NT_CHECK_INT_EQ(natsio_string_list_count(consumers), 0);
    EXPECT_OK(natsio_js_obj_delete(js, "ORASYNC"));
}

/* ---- corruption, replace, delete, abort --------------------------------------- */

enum { CHUNK_SUBJECT_MAX = 128, CHUNK_PURGE_MAX = 192 };

/* The chunk subject of `info` in `bucket`, and the stream purge request
 * that removes every chunk on it (for tests that replace chunks). */
static void chunk_subject_and_purge(const char *bucket, const natsio_obj_info *info,
                                    char subject[CHUNK_SUBJECT_MAX], char purge[CHUNK_PURGE_MAX]) {
    snprintf(subject, CHUNK_SUBJECT_MAX, "$O.%s.C.%s", bucket, natsio_obj_info_nuid(info));
    snprintf(purge, CHUNK_PURGE_MAX, "{\"filter\":\"%s\"}", subject);
}

static void test_corrupted_chunk_is_a_digest_mismatch(void) {
    natsio_client *c = connect_client();
    NT_CHECK(c != NULL);
    natsio_js *js = new_jetstream(c, NULL);
    NT_CHECK(js != NULL);
    natsio_obj *obj = MEMORY_STORE(js, "OCORRUPT");
    NT_CHECK(obj != NULL);
    size_t total = 3000;
    unsigned char *data = pattern_bytes(total, 9);
    NT_CHECK(data != NULL);
    natsio_obj_info *info = PUT(obj, "victim", "{\"chunk_size\":1024}", data, total);
    NT_CHECK(info != NULL);
    CHECK_READS_BACK(obj, "victim", data, total);

    /* The test replaces the chunks with ones of the same sizes, one byte
     * of the last one flipped: size and chunk count still match. */
    char subject[CHUNK_SUBJECT_MAX], purge[CHUNK_PURGE_MAX];
    chunk_subject_and_purge("OCORRUPT", info, subject, purge);
    uint64_t purged = 0;
    EXPECT_OK(natsio_js_stream_purge(js, "OBJ_OCORRUPT", purge, &purged));
    NT_CHECK_INT_EQ(purged, 3);
    unsigned char bad[3000];
    memcpy(bad, data, total);
    bad[2500] ^= 0x01;
    EXPECT_OK(natsio_client_publish(c, subject, bad, 1024));
    EXPECT_OK(natsio_client_publish(c, subject, bad + 1024, 1024));
    EXPECT_OK(natsio_client_publish(c, subject, bad + 2048, total - 2048));
    EXPECT_OK(natsio_client_flush(c, 5000));
    NT_CHECK(wait_stream_messages(js, "OBJ_OCORRUPT", 4));

    unsigned char *got = NULL;
    size_t got_len = 0;
    EXPECT_STATUS(NATSIO_ERR_DIGEST_MISMATCH, get_bytes(obj, "victim", 65536, &got, &got_len));
    /* The reader reported the mismatch instead of NATSIO_DONE, again on
     * every later read. */
    natsio_obj_reader *r = NULL;
    EXPECT_OK(natsio_obj_get(obj, "victim", false, &r));
    nt_cleanup(reader_free_cb, r);
    EXPECT_STATUS(NATSIO_ERR_DIGEST_MISMATCH, read_all(r, 500, &got, &got_len));
    char buf[16];
    size_t n = 0;
    EXPECT_STATUS(NATSIO_ERR_DIGEST_MISMATCH, natsio_obj_reader_read(r, buf, sizeof buf, &n, 1000));
    /* And through tokens. */
    natsio_obj_reader *r2 = NULL;
    EXPECT_OK(natsio_obj_get(obj, "victim", false, &r2));
    nt_cleanup(reader_free_cb, r2);
    natsio_status st = NATSIO_OK;
    for (int i = 0; i < 100 && st == NATSIO_OK; i++) {
        natsio_token *t = NULL;
        EXPECT_OK(natsio_obj_reader_next_async(r2, &t));
        natsio_token_wait(t, 10000);
        const void *p = NULL;
        size_t len = 0;
        st = natsio_token_obj_chunk(t, &p, &len);
        natsio_token_free(t);
    }
    NT_CHECK_INT_EQ(st, NATSIO_ERR_DIGEST_MISMATCH);

    /* A missing chunk fails too (never NATSIO_DONE), and soon: the stream
     * has nothing more to send. */
    EXPECT_OK(natsio_js_stream_purge(js, "OBJ_OCORRUPT", purge, NULL));
    EXPECT_OK(natsio_client_publish(c, subject, data, 1024));
    EXPECT_OK(natsio_client_publish(c, subject, data + 2048, total - 2048));
    EXPECT_OK(natsio_client_flush(c, 5000));
    NT_CHECK(wait_stream_messages(js, "OBJ_OCORRUPT", 3));
    natsio_obj_reader *r3 = NULL;
    EXPECT_OK(natsio_obj_get(obj, "victim", false, &r3));
    nt_cleanup(reader_free_cb, r3);
    natsio_status st3 = read_all_within(r3, 65536, 3000, &got, &got_len);
    NT_CHECK_MSG(st3 == NATSIO_ERR_DIGEST_MISMATCH, "a missing chunk read as %s (%s) after %zu bytes",
                 natsio_status_str(st3), natsio_last_error(), got_len);
    EXPECT_OK(natsio_js_obj_delete(js, "OCORRUPT"));
}

/* A one-chunk object is read with one Get, not an ordered consumer: the
 * same checks apply (a changed chunk, a missing one). */
static void test_one_chunk_object_is_checked_too(void) {
    natsio_client *c = connect_client();
    NT_CHECK(c != NULL);
    natsio_js *js = new_jetstream(c, NULL);
    NT_CHECK(js != NULL);
    natsio_obj *obj = MEMORY_STORE(js, "OCORRUPT1");
    NT_CHECK(obj != NULL);
    size_t total = 1000;
    unsigned char *data = pattern_bytes(total, 5);
    NT_CHECK(data != NULL);
    natsio_obj_info *info = PUT(obj, "small", NULL, data, total);
    NT_CHECK(info != NULL);
    NT_CHECK_INT_EQ(natsio_obj_info_chunks(info), 1);
    CHECK_READS_BACK(obj, "small", data, total);

    char subject[CHUNK_SUBJECT_MAX], purge[CHUNK_PURGE_MAX];
    chunk_subject_and_purge("OCORRUPT1", info, subject, purge);
    unsigned char bad[1000];
    memcpy(bad, data, total);
    bad[999] ^= 0x80;
    EXPECT_OK(natsio_js_stream_purge(js, "OBJ_OCORRUPT1", purge, NULL));
    EXPECT_OK(natsio_client_publish(c, subject, bad, total));
    EXPECT_OK(natsio_client_flush(c, 5000));
    NT_CHECK(wait_stream_messages(js, "OBJ_OCORRUPT1", 2));
    unsigned char *got = NULL;
    size_t got_len = 0;
    EXPECT_STATUS(NATSIO_ERR_DIGEST_MISMATCH, get_bytes(obj, "small", 4096, &got, &got_len));

    EXPECT_OK(natsio_js_stream_purge(js, "OBJ_OCORRUPT1", purge, NULL));
    NT_CHECK(wait_stream_messages(js, "OBJ_OCORRUPT1", 1));
    EXPECT_STATUS(NATSIO_ERR_DIGEST_MISMATCH, get_bytes(obj, "small", 4096, &got, &got_len));

    /* Put back as it was, it reads again. */
    EXPECT_OK(natsio_client_publish(c, subject, data, total));
    EXPECT_OK(natsio_client_flush(c, 5000));
    NT_CHECK(wait_stream_messages(js, "OBJ_OCORRUPT1", 2));
    CHECK_READS_BACK(obj, "small", data, total);
    EXPECT_OK(natsio_js_obj_delete(js, "OCORRUPT1"));
}

static void test_replace_purges_the_old_chunks(void) {
    natsio_js *js = connect_js();
    NT_CHECK(js != NULL);
    natsio_obj *obj = MEMORY_STORE(js, "OREPLACE");
    NT_CHECK(obj != NULL);
    unsigned char *v1 = pattern_bytes(5 * 1024, 1);
    unsigned char *v2 = pattern_bytes(2 * 1024 - 1, 2);
    NT_CHECK(v1 != NULL && v2 != NULL);
    natsio_obj_info *i1 = PUT(obj, "doc", "{\"chunk_size\":1024}", v1, 5 * 1024);
    NT_CHECK(i1 != NULL);
    NT_CHECK(PUT_STR(obj, "other", "stays") != NULL);
    NT_CHECK_INT_EQ(stream_messages(js, "OBJ_OREPLACE"), 5 + 1 + 1 + 1);
    natsio_obj_info *i2 = PUT(obj, "doc", "{\"chunk_size\":1024}", v2, 2 * 1024 - 1);
    NT_CHECK(i2 != NULL);
    NT_CHECK(strcmp(natsio_obj_info_nuid(i1), natsio_obj_info_nuid(i2)) != 0);
    CHECK_READS_BACK(obj, "doc", v2, 2 * 1024 - 1);
    /* Left: the new chunks and meta, and the other object. */
    NT_CHECK_INT_EQ(stream_messages(js, "OBJ_OREPLACE"), 2 + 1 + 1 + 1);
    char subject[128];
    snprintf(subject, sizeof subject, "$O.OREPLACE.C.%s", natsio_obj_info_nuid(i1));
    natsio_stored_msg *m = SENTINEL;
    EXPECT_FAILS(NATSIO_ERR_MESSAGE_NOT_FOUND, natsio_js_stream_get_msg(js, "OBJ_OREPLACE", 0, subject, &m));
    NT_CHECK(m == SENTINEL);
    CHECK_READS_STR(obj, "other", "stays");
    /* The list holds it once. */
    natsio_obj_info_list *list = NULL;
    EXPECT_OK(natsio_obj_list(obj, false, &list));
    nt_cleanup(info_list_free_cb, list);
    char names[256];
    NT_CHECK_STR_EQ(list_names(list, names, sizeof names), "other,doc");
    EXPECT_OK(natsio_js_obj_delete(js, "OREPLACE"));
}

static void test_delete_leaves_a_tombstone(void) {
    natsio_js *js = connect_js();
    NT_CHECK(js != NULL);
    natsio_obj *obj = MEMORY_STORE(js, "ODELETE");
    NT_CHECK(obj != NULL);
    unsigned char *data = pattern_bytes(3000, 4);
    NT_CHECK(data != NULL);
    natsio_obj_info *live = PUT(obj, "doomed", "{\"chunk_size\":1000,\"description\":\"bye\"}", data, 3000);
    NT_CHECK(live != NULL);
    NT_CHECK_INT_EQ(stream_messages(js, "OBJ_ODELETE"), 4);
    EXPECT_OK(natsio_obj_delete(obj, "doomed"));

    natsio_obj_reader *r = SENTINEL;
    natsio_obj_info *info = SENTINEL;
    EXPECT_FAILS(NATSIO_ERR_OBJECT_DELETED, natsio_obj_get(obj, "doomed", false, &r));
    EXPECT_FAILS(NATSIO_ERR_OBJECT_DELETED, natsio_obj_get_info(obj, "doomed", false, &info));
    NT_CHECK(r == SENTINEL && info == SENTINEL);
    natsio_obj_info *tomb = DELETED_INFO_OF(obj, "doomed");
    NT_CHECK(tomb != NULL);
    NT_CHECK(natsio_obj_info_deleted(tomb));
    NT_CHECK_INT_EQ(natsio_obj_info_size(tomb), 0);
    NT_CHECK_INT_EQ(natsio_obj_info_chunks(tomb), 0);
    NT_CHECK_STR_EQ(natsio_obj_info_digest(tomb), "");
    NT_CHECK_STR_EQ(natsio_obj_info_name(tomb), "doomed");
    NT_CHECK_STR_EQ(natsio_obj_info_nuid(tomb), natsio_obj_info_nuid(live));
    /* The chunks are purged: only the tombstone is left. */
    NT_CHECK_INT_EQ(stream_messages(js, "OBJ_ODELETE"), 1);
    /* A get that shows deleted objects reads the tombstone: no bytes. */
    natsio_obj_reader *tr = NULL;
    EXPECT_OK(natsio_obj_get(obj, "doomed", true, &tr));
    nt_cleanup(reader_free_cb, tr);
    NT_CHECK(natsio_obj_info_deleted(natsio_obj_reader_info(tr)));
    char buf[8];
    size_t n = SIZE_MAX;
    EXPECT_STATUS(NATSIO_DONE, natsio_obj_reader_read(tr, buf, sizeof buf, &n, 1000));
    NT_CHECK_INT_EQ(n, 0);
    /* Deleting it again changes nothing. */
    EXPECT_OK(natsio_obj_delete(obj, "doomed"));
    NT_CHECK_INT_EQ(stream_messages(js, "OBJ_ODELETE"), 1);
    /* Operations on it. */
    EXPECT_FAILS(NATSIO_ERR_OBJECT_DELETED, natsio_obj_update_meta(obj, "doomed", "{\"description\":\"x\"}"));
    EXPECT_FAILS(NATSIO_ERR_OBJECT_NOT_FOUND, natsio_obj_delete(obj, "never-was"));
    /* A put brings it back. */
    NT_CHECK(PUT_STR(obj, "doomed", "reborn") != NULL);
    CHECK_READS_STR(obj, "doomed", "reborn");
    natsio_obj_info *back = INFO_OF(obj, "doomed");
    NT_CHECK(back != NULL);
    NT_CHECK(!natsio_obj_info_deleted(back));
    /* The token form. */
    natsio_token *t = NULL;
    EXPECT_OK(natsio_obj_delete_async(obj, "doomed", &t));
    nt_cleanup(token_free_cb, t);
    NT_CHECK_INT_EQ(token_outcome(t, 10000), NATSIO_OK);
    EXPECT_FAILS(NATSIO_ERR_OBJECT_DELETED, natsio_obj_get_info(obj, "doomed", false, &info));
    natsio_token *it = NULL;
    EXPECT_OK(natsio_obj_get_info_async(obj, "doomed", true, &it));
    nt_cleanup(token_free_cb, it);
    NT_CHECK_INT_EQ(token_outcome(it, 10000), NATSIO_OK);
    natsio_obj_info *ti = NULL;
    EXPECT_OK(natsio_token_obj_info(it, &ti));
    nt_cleanup(info_free_cb, ti);
    NT_CHECK(natsio_obj_info_deleted(ti));
    EXPECT_OK(natsio_js_obj_delete(js, "ODELETE"));
}

static void test_writer_abort_keeps_the_previous_version(void) {
    natsio_js *js = connect_js();
    NT_CHECK(js != NULL);
    natsio_obj *obj = MEMORY_STORE(js, "OABORT");
    NT_CHECK(obj != NULL);
    unsigned char *v1 = pattern_bytes(2048, 5);
    unsigned char *v2 = random_bytes(8 * 1024);
    NT_CHECK(v1 != NULL && v2 != NULL);
    natsio_obj_info *i1 = PUT(obj, "doc", "{\"chunk_size\":1024}", v1, 2048);
    NT_CHECK(i1 != NULL);
    NT_CHECK_INT_EQ(stream_messages(js, "OBJ_OABORT"), 3);

    /* Halfway through the new version (several chunks published). */
    natsio_obj_writer *w = NULL;
    EXPECT_OK(natsio_obj_writer_open(obj, "doc", "{\"chunk_size\":1024}", &w));
    nt_cleanup(writer_free_cb, w);
    EXPECT_OK(natsio_obj_writer_write(w, v2, 4 * 1024 + 10));
    EXPECT_OK(natsio_obj_writer_abort(w));
    /* The previous version, untouched, and none of the new chunks. */
    CHECK_READS_BACK(obj, "doc", v1, 2048);
    natsio_obj_info *now = INFO_OF(obj, "doc");
    NT_CHECK(now != NULL);
    NT_CHECK_STR_EQ(natsio_obj_info_nuid(now), natsio_obj_info_nuid(i1));
    NT_CHECK_INT_EQ(stream_messages(js, "OBJ_OABORT"), 3);
    /* Aborted: every further use is refused. */
    EXPECT_FAILS(NATSIO_ERR_ILLEGAL_STATE, natsio_obj_writer_write(w, "x", 1));
    natsio_obj_info *info = SENTINEL;
    EXPECT_FAILS(NATSIO_ERR_ILLEGAL_STATE, natsio_obj_writer_finish(w, &info));
    NT_CHECK(info == SENTINEL);

    /* Freed unfinished: aborted in the background, chunks purged. */
    natsio_obj_writer *w2 = NULL;
    EXPECT_OK(natsio_obj_writer_open(obj, "doc", "{\"chunk_size\":1024}", &w2));
    EXPECT_OK(natsio_obj_writer_write(w2, v2, 6 * 1024));
    /* Its 6 chunks stored first: a count of 3 read before they land would
     * prove nothing (and the purge could then come after the next check). */
    NT_CHECK(wait_stream_messages(js, "OBJ_OABORT", 3 + 6));
    natsio_obj_writer_free(w2);
    NT_CHECK(wait_stream_messages(js, "OBJ_OABORT", 3));
    CHECK_READS_BACK(obj, "doc", v1, 2048);
    /* A new object aborted leaves nothing at all. */
    natsio_obj_writer *w3 = NULL;
    EXPECT_OK(natsio_obj_writer_open(obj, "fresh", "{\"chunk_size\":1024}", &w3));
    nt_cleanup(writer_free_cb, w3);
    EXPECT_OK(natsio_obj_writer_write(w3, v2, 3000));
    EXPECT_OK(natsio_obj_writer_abort(w3));
    EXPECT_FAILS(NATSIO_ERR_OBJECT_NOT_FOUND, natsio_obj_get_info(obj, "fresh", true, &info));
    NT_CHECK_INT_EQ(stream_messages(js, "OBJ_OABORT"), 3);
    EXPECT_OK(natsio_js_obj_delete(js, "OABORT"));
}

/* ---- update_meta -------------------------------------------------------------- */

static void test_update_meta(void) {
    natsio_js *js = connect_js();
    NT_CHECK(js != NULL);
    natsio_obj *obj = MEMORY_STORE(js, "OMETA");
    NT_CHECK(obj != NULL);
    unsigned char *data = pattern_bytes(2500, 6);
    NT_CHECK(data != NULL);
    natsio_obj_info *orig = PUT(obj, "a.txt", "{\"chunk_size\":1000,\"description\":\"one\"}", data, 2500);
    NT_CHECK(orig != NULL);
    NT_CHECK(PUT_STR(obj, "taken", "another object") != NULL);

    /* Description, headers and metadata change; data stays. */
    EXPECT_OK(natsio_obj_update_meta(obj, "a.txt",
                                     "{\"description\":\"two\",\"headers\":{\"Content-Type\":[\"text/plain\"],"
                                     "\"X-Multi\":[\"a\",\"b\"],\"X-One\":\"single\"},\"metadata\":{\"k\":\"v\"}}"));
    natsio_obj_info *info = INFO_OF(obj, "a.txt");
    NT_CHECK(info != NULL);
    NT_CHECK_STR_EQ(natsio_obj_info_description(info), "two");
    const natsio_headers *h = natsio_obj_info_headers(info);
    NT_CHECK(h != NULL);
    const char *v = NULL;
    EXPECT_OK(natsio_headers_get(h, "Content-Type", &v));
    NT_CHECK_STR_EQ(v, "text/plain");
    NT_CHECK_INT_EQ(natsio_headers_count(h, "X-Multi"), 2);
    EXPECT_OK(natsio_headers_get_nth(h, "X-Multi", 1, &v));
    NT_CHECK_STR_EQ(v, "b");
    EXPECT_OK(natsio_headers_get(h, "X-One", &v));
    NT_CHECK_STR_EQ(v, "single");
    const char *md = natsio_obj_info_metadata_json(info);
    NT_CHECK_MSG(md && strstr(md, "\"k\":\"v\""), "metadata %s", md ? md : "(null)");
    NT_CHECK_INT_EQ(natsio_obj_info_size(info), 2500);
    NT_CHECK_STR_EQ(natsio_obj_info_nuid(info), natsio_obj_info_nuid(orig));
    NT_CHECK_STR_EQ(natsio_obj_info_digest(info), natsio_obj_info_digest(orig));
    CHECK_READS_BACK(obj, "a.txt", data, 2500);

    /* Rename: the data moves to the new name; the old one is gone. */
    EXPECT_OK(natsio_obj_update_meta(obj, "a.txt", "{\"name\":\"b.txt\",\"description\":\"renamed\"}"));
    CHECK_READS_BACK(obj, "b.txt", data, 2500);
    natsio_obj_info *renamed = INFO_OF(obj, "b.txt");
    NT_CHECK(renamed != NULL);
    NT_CHECK_STR_EQ(natsio_obj_info_name(renamed), "b.txt");
    NT_CHECK_STR_EQ(natsio_obj_info_description(renamed), "renamed");
    NT_CHECK_STR_EQ(natsio_obj_info_nuid(renamed), natsio_obj_info_nuid(orig));
    natsio_obj_info *out = SENTINEL;
    natsio_status st = natsio_obj_get_info(obj, "a.txt", false, &out);
    NT_CHECK_MSG(st == NATSIO_ERR_OBJECT_NOT_FOUND || st == NATSIO_ERR_OBJECT_DELETED, "old name: %s",
                 natsio_status_str(st));
    NT_CHECK(out == SENTINEL);
    /* Onto a live object: refused, nothing changes. */
    EXPECT_FAILS(NATSIO_ERR_OBJECT_EXISTS, natsio_obj_update_meta(obj, "b.txt", "{\"name\":\"taken\"}"));
    CHECK_READS_STR(obj, "taken", "another object");
    CHECK_READS_BACK(obj, "b.txt", data, 2500);
    /* Onto a deleted one: allowed. */
    EXPECT_OK(natsio_obj_delete(obj, "taken"));
    EXPECT_OK(natsio_obj_update_meta(obj, "b.txt", "{\"name\":\"taken\"}"));
    CHECK_READS_BACK(obj, "taken", data, 2500);
    /* Without a name the name stays. */
    EXPECT_OK(natsio_obj_update_meta(obj, "taken", "{\"description\":\"kept name\"}"));
    natsio_obj_info *kept_name = INFO_OF(obj, "taken");
    NT_CHECK(kept_name != NULL);
    NT_CHECK_STR_EQ(natsio_obj_info_description(kept_name), "kept name");
    /* Missing and deleted objects. */
    EXPECT_FAILS(NATSIO_ERR_OBJECT_NOT_FOUND, natsio_obj_update_meta(obj, "missing", "{\"description\":\"x\"}"));
    /* Bad meta. */
    EXPECT_FAILS(NATSIO_ERR_CONFIG, natsio_obj_update_meta(obj, "taken", "not json"));
    EXPECT_FAILS_NAMING(NATSIO_ERR_CONFIG, "color", natsio_obj_update_meta(obj, "taken", "{\"color\":1}"));
    EXPECT_FAILS_NAMING(NATSIO_ERR_CONFIG, "chunk_size", natsio_obj_update_meta(obj, "taken", "{\"chunk_size\":5}"));
    /* A rename to an empty name is refused and changes nothing. */
    EXPECT_FAILS(NATSIO_ERR_INVALID_OBJECT_NAME,
                 natsio_obj_update_meta(obj, "taken", "{\"name\":\"\",\"description\":\"kept name\"}"));
    CHECK_READS_BACK(obj, "taken", data, 2500);
    natsio_obj_info_list *names_now = NULL;
    EXPECT_OK(natsio_obj_list(obj, true, &names_now));
    nt_cleanup(info_list_free_cb, names_now);
    char listed[256];
    NT_CHECK_STR_EQ(list_names(names_now, listed, sizeof listed), "taken");
    /* The token form. */
    natsio_token *t = NULL;
    EXPECT_OK(natsio_obj_update_meta_async(obj, "taken", "{\"name\":\"final\"}", &t));
    nt_cleanup(token_free_cb, t);
    NT_CHECK_INT_EQ(token_outcome(t, 10000), NATSIO_OK);
    CHECK_READS_BACK(obj, "final", data, 2500);
    EXPECT_OK(natsio_js_obj_delete(js, "OMETA"));
}

/* ---- links ---------------------------------------------------------------------- */

static void test_links(void) {
    natsio_js *js = connect_js();
    NT_CHECK(js != NULL);
    natsio_obj *obj = MEMORY_STORE(js, "OLINKS");
    natsio_obj *other = MEMORY_STORE(js, "OLINKS_OTHER");
    NT_CHECK(obj != NULL && other != NULL);
    unsigned char *data = pattern_bytes(2100, 7);
    NT_CHECK(data != NULL);
    natsio_obj_info *target = PUT(obj, "target", "{\"chunk_size\":1024}", data, 2100);
    NT_CHECK(target != NULL);
    natsio_obj_info *far = PUT_STR(other, "far", "in the other bucket");
    NT_CHECK(far != NULL);

    /* A link to an object reads as the object. */
    natsio_obj_info *link = NULL;
    EXPECT_OK(natsio_obj_add_link(obj, "link", target, &link));
    nt_cleanup(info_free_cb, link);
    NT_CHECK(natsio_obj_info_is_link(link));
    NT_CHECK_STR_EQ(natsio_obj_info_name(link), "link");
    NT_CHECK_STR_EQ(natsio_obj_info_link_bucket(link), "OLINKS");
    NT_CHECK_STR_EQ(natsio_obj_info_link_name(link), "target");
    CHECK_READS_BACK(obj, "link", data, 2100);
    natsio_obj_reader *r = NULL;
    EXPECT_OK(natsio_obj_get(obj, "link", false, &r));
    nt_cleanup(reader_free_cb, r);
    NT_CHECK_STR_EQ(natsio_obj_info_name(natsio_obj_reader_info(r)), "target");
    NT_CHECK_INT_EQ(natsio_obj_info_size(natsio_obj_reader_info(r)), 2100);
    natsio_obj_info *stored = INFO_OF(obj, "link");
    NT_CHECK(stored != NULL);
    NT_CHECK(natsio_obj_info_is_link(stored));
    NT_CHECK_STR_EQ(natsio_obj_info_link_name(stored), "target");
    /* Across buckets, info_out NULL. */
    EXPECT_OK(natsio_obj_add_link(obj, "far-link", far, NULL));
    CHECK_READS_STR(obj, "far-link", "in the other bucket");
    natsio_obj_info *fl = INFO_OF(obj, "far-link");
    NT_CHECK(fl != NULL);
    NT_CHECK_STR_EQ(natsio_obj_info_link_bucket(fl), "OLINKS_OTHER");
    NT_CHECK_STR_EQ(natsio_obj_info_link_name(fl), "far");
    /* A link follows the target's new versions. */
    NT_CHECK(PUT_STR(obj, "target", "version two") != NULL);
    CHECK_READS_STR(obj, "link", "version two");

    /* A link to a bucket: a link without a name, that cannot be read. */
    natsio_obj_info *blink = NULL;
    EXPECT_OK(natsio_obj_add_bucket_link(obj, "blink", "OLINKS_OTHER", &blink));
    nt_cleanup(info_free_cb, blink);
    NT_CHECK(natsio_obj_info_is_link(blink));
    NT_CHECK_STR_EQ(natsio_obj_info_link_bucket(blink), "OLINKS_OTHER");
    NT_CHECK(natsio_obj_info_link_name(blink) == NULL);
    natsio_obj_reader *none = SENTINEL;
    EXPECT_FAILS(NATSIO_ERR_OBJECT_LINK, natsio_obj_get(obj, "blink", false, &none));
    NT_CHECK(none == SENTINEL);
    natsio_obj_info *bstored = INFO_OF(obj, "blink");
    NT_CHECK(bstored != NULL);
    NT_CHECK(natsio_obj_info_is_link(bstored) && natsio_obj_info_link_name(bstored) == NULL);

    /* Refused: a link to a link, to a deleted object, over a live object. */
    natsio_obj_info *out = SENTINEL;
    EXPECT_FAILS(NATSIO_ERR_OBJECT_LINK, natsio_obj_add_link(obj, "link2", stored, &out));
    EXPECT_FAILS(NATSIO_ERR_OBJECT_LINK, natsio_obj_add_link(obj, "link2", bstored, &out));
    NT_CHECK(PUT_STR(obj, "short-lived", "x") != NULL);
    EXPECT_OK(natsio_obj_delete(obj, "short-lived"));
    natsio_obj_info *dead = DELETED_INFO_OF(obj, "short-lived");
    NT_CHECK(dead != NULL);
    EXPECT_FAILS(NATSIO_ERR_OBJECT_LINK, natsio_obj_add_link(obj, "link2", dead, &out));
    EXPECT_FAILS(NATSIO_ERR_OBJECT_EXISTS, natsio_obj_add_link(obj, "target", far, &out));
    EXPECT_FAILS(NATSIO_ERR_OBJECT_EXISTS, natsio_obj_add_bucket_link(obj, "target", "OLINKS_OTHER", &out));
    NT_CHECK(out == SENTINEL);
    EXPECT_FAILS(NATSIO_ERR_OBJECT_NOT_FOUND, natsio_obj_get_info(obj, "link2", true, &out));
    CHECK_READS_STR(obj, "target", "version two");
    /* An existing link may be replaced. */
    EXPECT_OK(natsio_obj_add_link(obj, "link", far, NULL));
    CHECK_READS_STR(obj, "link", "in the other bucket");
    /* A link whose target was deleted since. */
    EXPECT_OK(natsio_obj_add_link(obj, "link", target, NULL));
    EXPECT_OK(natsio_obj_delete(obj, "target"));
    EXPECT_FAILS(NATSIO_ERR_OBJECT_DELETED, natsio_obj_get(obj, "link", false, &none));
    NT_CHECK(none == SENTINEL);

    /* The token forms. */
    natsio_token *t = NULL;
    EXPECT_OK(natsio_obj_add_link_async(obj, "async-link", far, &t));
    nt_cleanup(token_free_cb, t);
    NT_CHECK_INT_EQ(token_outcome(t, 10000), NATSIO_OK);
    natsio_obj_info *al = NULL;
    EXPECT_OK(natsio_token_obj_info(t, &al));
    nt_cleanup(info_free_cb, al);
    NT_CHECK_STR_EQ(natsio_obj_info_link_name(al), "far");
    natsio_token *bt = NULL;
    EXPECT_OK(natsio_obj_add_bucket_link_async(obj, "async-blink", "OLINKS_OTHER", &bt));
    nt_cleanup(token_free_cb, bt);
    NT_CHECK_INT_EQ(token_outcome(bt, 10000), NATSIO_OK);
    CHECK_READS_STR(obj, "async-link", "in the other bucket");
    EXPECT_OK(natsio_js_obj_delete(js, "OLINKS"));
    EXPECT_OK(natsio_js_obj_delete(js, "OLINKS_OTHER"));
}

/* ---- seal and list ----------------------------------------------------------------- */

static void test_seal(void) {
    natsio_js *js = connect_js();
    NT_CHECK(js != NULL);
    natsio_obj *obj = MEMORY_STORE(js, "OSEAL");
    NT_CHECK(obj != NULL);
    unsigned char *data = pattern_bytes(3000, 8);
    NT_CHECK(data != NULL);
    NT_CHECK(PUT(obj, "kept", "{\"chunk_size\":1024}", data, 3000) != NULL);
    natsio_obj_writer *w = NULL;
    EXPECT_OK(natsio_obj_writer_open(obj, "in-flight", "{\"chunk_size\":1024}", &w));
    nt_cleanup(writer_free_cb, w);
    EXPECT_OK(natsio_obj_writer_write(w, "abc", 3));

    EXPECT_OK(natsio_obj_seal(obj));
    natsio_obj_status *s = NULL;
    EXPECT_OK(natsio_obj_get_status(obj, &s));
    nt_cleanup(status_free_cb, s);
    NT_CHECK(natsio_obj_status_sealed(s));
    /* Writes are refused; reads go on. */
    natsio_obj_info *out = SENTINEL;
    EXPECT_FAILS(NATSIO_ERR_BUCKET_SEALED, natsio_obj_put(obj, "new", NULL, "x", 1, &out));
    EXPECT_FAILS(NATSIO_ERR_BUCKET_SEALED, natsio_obj_put(obj, "kept", NULL, "x", 1, &out));
    NT_CHECK(out == SENTINEL);
    natsio_status st = natsio_obj_writer_write(w, data, 3000);
    if (st == NATSIO_OK) st = natsio_obj_writer_finish(w, &out);
    NT_CHECK_MSG(st == NATSIO_ERR_BUCKET_SEALED, "writer into a sealed bucket: %s (%s)", natsio_status_str(st),
                 natsio_last_error());
    NT_CHECK(out == SENTINEL);
    NT_CHECK(natsio_obj_delete(obj, "kept") != NATSIO_OK);
    NT_CHECK(natsio_obj_update_meta(obj, "kept", "{\"description\":\"x\"}") != NATSIO_OK);
    CHECK_READS_BACK(obj, "kept", data, 3000);
    natsio_obj_info_list *list = NULL;
    EXPECT_OK(natsio_obj_list(obj, false, &list));
    nt_cleanup(info_list_free_cb, list);
    char names[128];
    NT_CHECK_STR_EQ(list_names(list, names, sizeof names), "kept");
    /* Another handle sees it sealed too; the token form. */
    natsio_obj *bound = NULL;
    EXPECT_OK(natsio_js_obj_bind(js, "OSEAL", &bound));
    nt_cleanup(obj_free_cb, bound);
    EXPECT_FAILS(NATSIO_ERR_BUCKET_SEALED, natsio_obj_put(bound, "new", NULL, "x", 1, NULL));
    natsio_obj *other = MEMORY_STORE(js, "OSEAL2");
    NT_CHECK(other != NULL);
    natsio_token *t = NULL;
    EXPECT_OK(natsio_obj_seal_async(other, &t));
    nt_cleanup(token_free_cb, t);
    NT_CHECK_INT_EQ(token_outcome(t, 10000), NATSIO_OK);
    EXPECT_FAILS(NATSIO_ERR_BUCKET_SEALED, natsio_obj_put(other, "new", NULL, "x", 1, NULL));
    EXPECT_OK(natsio_js_obj_delete(js, "OSEAL"));
    EXPECT_OK(natsio_js_obj_delete(js, "OSEAL2"));
}

static void test_list(void) {
    natsio_js *js = connect_js();
    NT_CHECK(js != NULL);
    natsio_obj *obj = MEMORY_STORE(js, "OLIST");
    NT_CHECK(obj != NULL);
    natsio_obj_info_list *empty = NULL;
    EXPECT_OK(natsio_obj_list(obj, true, &empty));
    nt_cleanup(info_list_free_cb, empty);
    NT_CHECK_INT_EQ(natsio_obj_info_list_count(empty), 0);
    NT_CHECK(natsio_obj_info_list_get(empty, 0) == NULL);

    NT_CHECK(PUT_STR(obj, "a", "1") != NULL);
    NT_CHECK(PUT_STR(obj, "b", "22") != NULL);
    NT_CHECK(PUT_STR(obj, "c", "333") != NULL);
    NT_CHECK(PUT_STR(obj, "gone", "x") != NULL);
    EXPECT_OK(natsio_obj_delete(obj, "gone"));
    natsio_obj_info *b = INFO_OF(obj, "b");
    NT_CHECK(b != NULL);
    EXPECT_OK(natsio_obj_add_link(obj, "to-b", b, NULL));

    char names[256];
    natsio_obj_info_list *live = NULL;
    EXPECT_OK(natsio_obj_list(obj, false, &live));
    nt_cleanup(info_list_free_cb, live);
    NT_CHECK_STR_EQ(list_names(live, names, sizeof names), "a,b,c,to-b");
    NT_CHECK_INT_EQ(natsio_obj_info_size(natsio_obj_info_list_get(live, 2)), 3);
    NT_CHECK_STR_EQ(natsio_obj_info_bucket(natsio_obj_info_list_get(live, 2)), "OLIST");
    NT_CHECK(natsio_obj_info_is_link(natsio_obj_info_list_get(live, 3)));
    NT_CHECK(natsio_obj_info_list_get(live, 4) == NULL);
    NT_CHECK(natsio_obj_info_list_get(live, SIZE_MAX) == NULL);
    natsio_obj_info_list *all = NULL;
    EXPECT_OK(natsio_obj_list(obj, true, &all));
    nt_cleanup(info_list_free_cb, all);
    NT_CHECK_STR_EQ(list_names(all, names, sizeof names), "a,b,c,gone(deleted),to-b");
    /* Entries outlive other changes (they are the list's own). */
    EXPECT_OK(natsio_obj_delete(obj, "a"));
    NT_CHECK_STR_EQ(list_names(live, names, sizeof names), "a,b,c,to-b");
    natsio_token *t = NULL;
    EXPECT_OK(natsio_obj_list_async(obj, false, &t));
    nt_cleanup(token_free_cb, t);
    NT_CHECK_INT_EQ(token_outcome(t, 10000), NATSIO_OK);
    natsio_obj_info_list *tl = NULL;
    EXPECT_OK(natsio_token_obj_info_list(t, &tl));
    nt_cleanup(info_list_free_cb, tl);
    NT_CHECK_STR_EQ(list_names(tl, names, sizeof names), "b,c,to-b");
    /* Listing leaves no consumers behind. */
    natsio_string_list *consumers = NULL;
    for (int i = 0; i < 100; i++) {
        natsio_string_list_free(consumers);
        consumers = NULL;
        EXPECT_OK(natsio_js_consumer_names(js, "OBJ_OLIST", &consumers));
        if (natsio_string_list_count(consumers) == 0) break;
        nt_sleep_ms(50);
    }
    kept_list(consumers);
    NT_CHECK_INT_EQ(natsio_string_list_count(consumers), 0);
    EXPECT_OK(natsio_js_obj_delete(js, "OLIST"));
}

/* ---- watch ------------------------------------------------------------------------- */

static natsio_obj_watch_options watch_options(void) {
    natsio_obj_watch_options o;
    natsio_obj_watch_options_init(&o);
    return o;
}

static natsio_obj_watcher *watch_at(int line, const natsio_obj *obj, const natsio_obj_watch_options *o) {
    natsio_obj_watcher *w = NULL;
    natsio_status st = natsio_obj_watch(obj, o, &w);
    if (st != NATSIO_OK) {
        nt_fail_at(__FILE__, line, "watch: %s (%s)", natsio_status_str(st), natsio_last_error());
        return NULL;
    }
    nt_cleanup(watcher_free_cb, w);
    return w;
}
#define WATCH(obj, o) watch_at(__LINE__, (obj), (o))

/* The next event of `w` must be the info of `name` (deleted or not); it
 * goes to *out (freed when the case ends) if out is not NULL. */
static bool expect_info_at(int line, const natsio_obj_watcher *w, const char *name, bool deleted,
                           const natsio_obj_info **out) {
    natsio_obj_info *info = NULL;
    natsio_status st = natsio_obj_watcher_next(w, 5000, &info);
    if (st != NATSIO_OK || info == NULL) {
        nt_fail_at(__FILE__, line, "watcher_next: %s (%s), want %s", natsio_status_str(st), natsio_last_error(),
                   name);
        return false;
    }
    nt_cleanup(info_free_cb, info);
    const char *got = natsio_obj_info_name(info);
    if (natsio_obj_info_is_initial_done(info) || !got || strcmp(got, name) != 0 ||
        natsio_obj_info_deleted(info) != deleted) {
        nt_fail_at(__FILE__, line, "got %s%s%s, want %s%s", natsio_obj_info_is_initial_done(info) ? "the marker " : "",
                   got ? got : "(null)", natsio_obj_info_deleted(info) ? " (deleted)" : "", name,
                   deleted ? " (deleted)" : "");
        return false;
    }
    if (out) *out = info;
    return true;
}
#define EXPECT_INFO(w, name) NT_CHECK(expect_info_at(__LINE__, (w), (name), false, NULL))
#define EXPECT_DELETED(w, name) NT_CHECK(expect_info_at(__LINE__, (w), (name), true, NULL))

static bool expect_marker_at(int line, const natsio_obj_watcher *w, const char *bucket) {
    natsio_obj_info *info = NULL;
    natsio_status st = natsio_obj_watcher_next(w, 5000, &info);
    if (st != NATSIO_OK || info == NULL) {
        nt_fail_at(__FILE__, line, "watcher_next: %s (%s), want the marker", natsio_status_str(st),
                   natsio_last_error());
        return false;
    }
    bool ok = natsio_obj_info_is_initial_done(info) && natsio_obj_info_name(info) &&
              natsio_obj_info_name(info)[0] == '\0' && natsio_obj_info_bucket(info) &&
              strcmp(natsio_obj_info_bucket(info), bucket) == 0;
    if (!ok)
        nt_fail_at(__FILE__, line, "got %s of %s, want the marker of %s",
                   natsio_obj_info_name(info) ? natsio_obj_info_name(info) : "(null)",
                   natsio_obj_info_bucket(info) ? natsio_obj_info_bucket(info) : "(null)", bucket);
    natsio_obj_info_free(info);
    return ok;
}
#define EXPECT_MARKER(w, bucket) NT_CHECK(expect_marker_at(__LINE__, (w), (bucket)))

/* Nothing else is pending in `w`: a put of `name` made now is its next
 * event. */
#define EXPECT_QUIET_UNTIL_PUT(obj, w, name)  \
    do {                                      \
        NT_CHECK(PUT_STR((obj), (name), "barrier") != NULL); \
        EXPECT_INFO((w), (name));             \
    } while (0)

static void test_watch_initial_values_marker_then_changes(void) {
    natsio_js *js = connect_js();
    NT_CHECK(js != NULL);
    natsio_obj *obj = MEMORY_STORE(js, "OWATCH");
    NT_CHECK(obj != NULL);
    /* An empty bucket: the marker at once. */
    natsio_obj_watcher *first = WATCH(obj, NULL);
    NT_CHECK(first != NULL);
    EXPECT_MARKER(first, "OWATCH");

    NT_CHECK(PUT_STR(obj, "a", "1") != NULL);
    NT_CHECK(PUT_STR(obj, "b", "2") != NULL);
    NT_CHECK(PUT_STR(obj, "gone", "3") != NULL);
    EXPECT_OK(natsio_obj_delete(obj, "gone"));
    NT_CHECK(PUT_STR(obj, "a", "1 again") != NULL); /* latest of a comes after b */
    EXPECT_INFO(first, "a");
    EXPECT_INFO(first, "b");
    EXPECT_INFO(first, "gone");
    EXPECT_DELETED(first, "gone");
    const natsio_obj_info *a2 = NULL;
    NT_CHECK(expect_info_at(__LINE__, first, "a", false, &a2));
    NT_CHECK_INT_EQ(natsio_obj_info_size(a2), 7);
    /* An idle watch times out and goes on. */
    natsio_obj_info *e = SENTINEL;
    NT_CHECK_INT_EQ(natsio_obj_watcher_next(first, 200, &e), NATSIO_ERR_TIMEOUT);
    NT_CHECK(e == SENTINEL);

    /* The latest of each object, oldest first, then the marker. */
    natsio_obj_watcher *w = WATCH(obj, NULL);
    NT_CHECK(w != NULL);
    const natsio_obj_info *b = NULL;
    NT_CHECK(expect_info_at(__LINE__, w, "b", false, &b));
    NT_CHECK_STR_EQ(natsio_obj_info_bucket(b), "OWATCH");
    NT_CHECK_INT_EQ(natsio_obj_info_size(b), 1);
    int64_t age = now_realtime_ns() - natsio_obj_info_mtime_ns(b);
    NT_CHECK_MSG(age > -60000000000LL && age < 60000000000LL, "mtime %lld ns ago", (long long)age);
    EXPECT_DELETED(w, "gone");
    EXPECT_INFO(w, "a");
    EXPECT_MARKER(w, "OWATCH");
    /* Then changes: puts, deletes, meta updates, links. */
    NT_CHECK(PUT_STR(obj, "c", "new") != NULL);
    EXPECT_INFO(w, "c");
    EXPECT_OK(natsio_obj_delete(obj, "b"));
    EXPECT_DELETED(w, "b");
    EXPECT_OK(natsio_obj_update_meta(obj, "c", "{\"description\":\"changed\"}"));
    const natsio_obj_info *c = NULL;
    NT_CHECK(expect_info_at(__LINE__, w, "c", false, &c));
    NT_CHECK_STR_EQ(natsio_obj_info_description(c), "changed");
    natsio_obj_info *ci = INFO_OF(obj, "c");
    NT_CHECK(ci != NULL);
    EXPECT_OK(natsio_obj_add_link(obj, "to-c", ci, NULL));
    const natsio_obj_info *l = NULL;
    NT_CHECK(expect_info_at(__LINE__, w, "to-c", false, &l));
    NT_CHECK(natsio_obj_info_is_link(l));
    EXPECT_QUIET_UNTIL_PUT(obj, w, "last");

    /* Stop: NATSIO_DONE from then on. */
    EXPECT_OK(natsio_obj_watcher_stop(w));
    e = SENTINEL;
    NT_CHECK_INT_EQ(natsio_obj_watcher_next(w, 1000, &e), NATSIO_DONE);
    NT_CHECK(e == NULL);
    EXPECT_OK(natsio_obj_watcher_stop(w));
    e = SENTINEL;
    NT_CHECK_INT_EQ(natsio_obj_watcher_next(w, NATSIO_NO_WAIT, &e), NATSIO_DONE);
    NT_CHECK(e == NULL);
    /* The first watch saw the same changes. */
    EXPECT_INFO(first, "c");
    EXPECT_DELETED(first, "b");
    EXPECT_OK(natsio_js_obj_delete(js, "OWATCH"));
}

static void test_watch_options(void) {
    natsio_js *js = connect_js();
    NT_CHECK(js != NULL);
    natsio_obj *obj = MEMORY_STORE(js, "OWOPTS");
    NT_CHECK(obj != NULL);
    NT_CHECK(PUT_STR(obj, "a", "1") != NULL);
    NT_CHECK(PUT_STR(obj, "gone", "2") != NULL);
    EXPECT_OK(natsio_obj_delete(obj, "gone"));
    NT_CHECK(PUT_STR(obj, "b", "3") != NULL);

    /* updates_only: no old objects, the marker, then changes. */
    natsio_obj_watch_options o = watch_options();
    o.updates_only = true;
    natsio_obj_watcher *u = WATCH(obj, &o);
    NT_CHECK(u != NULL);
    EXPECT_MARKER(u, "OWOPTS");
    NT_CHECK(PUT_STR(obj, "c", "4") != NULL);
    EXPECT_INFO(u, "c");
    EXPECT_OK(natsio_obj_delete(obj, "a"));
    EXPECT_DELETED(u, "a");

    /* ignore_deletes: deletions are left out, old and new. */
    o = watch_options();
    o.ignore_deletes = true;
    natsio_obj_watcher *nd = WATCH(obj, &o);
    NT_CHECK(nd != NULL);
    EXPECT_INFO(nd, "b");
    EXPECT_INFO(nd, "c");
    EXPECT_MARKER(nd, "OWOPTS");
    EXPECT_OK(natsio_obj_delete(obj, "b"));
    EXPECT_QUIET_UNTIL_PUT(obj, nd, "d");

    /* include_history: every kept meta message (one per name, as each is
     * rolled up), deletions too. */
    o = watch_options();
    o.include_history = true;
    natsio_obj_watcher *h = WATCH(obj, &o);
    NT_CHECK(h != NULL);
    EXPECT_DELETED(h, "gone");
    EXPECT_INFO(h, "c");
    EXPECT_DELETED(h, "a");
    EXPECT_DELETED(h, "b");
    EXPECT_INFO(h, "d");
    EXPECT_MARKER(h, "OWOPTS");
    EXPECT_QUIET_UNTIL_PUT(obj, h, "e");
    /* The updates-only watch saw all of it, in order. */
    EXPECT_DELETED(u, "b");
    EXPECT_INFO(u, "d");
    EXPECT_INFO(u, "e");

    /* An options struct of another version is refused. */
    o = watch_options();
    o.version = 99;
    natsio_obj_watcher *out = SENTINEL;
    EXPECT_FAILS(NATSIO_ERR_INVALID_ARGUMENT, natsio_obj_watch(obj, &o, &out));
    NT_CHECK(out == SENTINEL);
    natsio_obj_watch_options fresh;
    memset(&fresh, 0x5A, sizeof fresh);
    EXPECT_OK(natsio_obj_watch_options_init(&fresh));
    NT_CHECK_INT_EQ(fresh.version, NATSIO_OBJ_WATCH_OPTIONS_VERSION);
    NT_CHECK(!fresh.include_history && !fresh.ignore_deletes && !fresh.updates_only);
    EXPECT_OK(natsio_js_obj_delete(js, "OWOPTS"));
}

/* What a push-mode watch received. */
typedef struct {
    pthread_mutex_t mu;
    char names[512];
    long infos;
    long markers;
    long finals;
    natsio_status final_status;
    atomic_long released;
} watch_record;

static void record_cb(void *user_data, const natsio_obj_info *info, natsio_status status) {
    watch_record *r = (watch_record *)user_data;
    pthread_mutex_lock(&r->mu);
    if (info == NULL) {
        r->finals++;
        r->final_status = status;
    } else if (natsio_obj_info_is_initial_done(info)) {
        r->markers++;
        strncat(r->names, "|", sizeof r->names - strlen(r->names) - 1);
    } else {
        r->infos++;
        strncat(r->names, natsio_obj_info_name(info), sizeof r->names - strlen(r->names) - 1);
        strncat(r->names, natsio_obj_info_deleted(info) ? "-," : ",", sizeof r->names - strlen(r->names) - 1);
    }
    pthread_mutex_unlock(&r->mu);
}

static void record_release(void *user_data) { atomic_fetch_add(&((watch_record *)user_data)->released, 1); }

static bool record_has(void *arg) {
    watch_record *r = (watch_record *)arg;
    pthread_mutex_lock(&r->mu);
    bool done = strstr(r->names, "c,") != NULL;
    pthread_mutex_unlock(&r->mu);
    return done;
}

static bool record_final(void *arg) {
    watch_record *r = (watch_record *)arg;
    return atomic_load(&r->released) > 0;
}

static void test_watch_async_push_and_token(void) {
    natsio_js *js = connect_js();
    NT_CHECK(js != NULL);
    natsio_obj *obj = MEMORY_STORE(js, "OWPUSH");
    NT_CHECK(obj != NULL);
    NT_CHECK(PUT_STR(obj, "a", "1") != NULL);

    /* watch_async, next_async. */
    natsio_token *wt = NULL;
    EXPECT_OK(natsio_obj_watch_async(obj, NULL, &wt));
    nt_cleanup(token_free_cb, wt);
    NT_CHECK_INT_EQ(token_outcome(wt, 10000), NATSIO_OK);
    natsio_obj_watcher *w = NULL;
    EXPECT_OK(natsio_token_obj_watcher(wt, &w));
    nt_cleanup(watcher_free_cb, w);
    natsio_token *t1 = NULL, *t2 = NULL, *t3 = NULL;
    EXPECT_OK(natsio_obj_watcher_next_async(w, &t1));
    nt_cleanup(token_free_cb, t1);
    EXPECT_OK(natsio_obj_watcher_next_async(w, &t2));
    nt_cleanup(token_free_cb, t2);
    EXPECT_OK(natsio_obj_watcher_next_async(w, &t3));
    nt_cleanup(token_free_cb, t3);
    NT_CHECK_INT_EQ(token_outcome(t1, 10000), NATSIO_OK);
    NT_CHECK_INT_EQ(token_outcome(t2, 10000), NATSIO_OK);
    natsio_obj_info *i1 = NULL, *i2 = NULL;
    EXPECT_OK(natsio_token_obj_info(t1, &i1));
    nt_cleanup(info_free_cb, i1);
    EXPECT_OK(natsio_token_obj_info(t2, &i2));
    nt_cleanup(info_free_cb, i2);
    NT_CHECK_STR_EQ(natsio_obj_info_name(i1), "a");
    NT_CHECK(natsio_obj_info_is_initial_done(i2));
    NT_CHECK(!natsio_token_is_done(t3));
    NT_CHECK(PUT_STR(obj, "b", "2") != NULL);
    NT_CHECK_INT_EQ(token_outcome(t3, 10000), NATSIO_OK);
    natsio_obj_info *i3 = NULL;
    EXPECT_OK(natsio_token_obj_info(t3, &i3));
    nt_cleanup(info_free_cb, i3);
    NT_CHECK_STR_EQ(natsio_obj_info_name(i3), "b");
    natsio_iter_stats stats;
    EXPECT_OK(natsio_obj_watcher_get_stats(w, &stats));
    NT_CHECK_INT_EQ(stats.delivered, 3);
    /* Stopped: a pending token ends with NATSIO_DONE. */
    natsio_token *t4 = NULL;
    EXPECT_OK(natsio_obj_watcher_next_async(w, &t4));
    nt_cleanup(token_free_cb, t4);
    EXPECT_OK(natsio_obj_watcher_stop(w));
    NT_CHECK_INT_EQ(token_outcome(t4, 10000), NATSIO_DONE);

    /* Push mode: every info in order, the marker, then changes, then the
     * final call with NATSIO_DONE after stop, then release. */
    watch_record *rec = (watch_record *)calloc(1, sizeof *rec);
    NT_CHECK(rec != NULL);
    nt_cleanup(free, rec);
    pthread_mutex_init(&rec->mu, NULL);
    natsio_obj_watcher *pw = NULL;
    EXPECT_OK(natsio_obj_watch(obj, NULL, &pw));
    natsio_status st = natsio_obj_watcher_set_callback(pw, record_cb, rec, record_release);
    if (st != NATSIO_OK) natsio_obj_watcher_free(pw);
    NT_CHECK_MSG(st == NATSIO_OK, "set_callback: %s (%s)", natsio_status_str(st), natsio_last_error());
    NT_CHECK(PUT_STR(obj, "c", "3") != NULL);
    bool arrived = nt_wait_until(record_has, rec, 10000);
    EXPECT_OK(natsio_obj_watcher_stop(pw));
    bool released = nt_wait_until(record_final, rec, 10000);
    natsio_obj_info *after = SENTINEL;
    natsio_status next_st = natsio_obj_watcher_next(pw, NATSIO_NO_WAIT, &after);
    natsio_obj_watcher_free(pw);
    pthread_mutex_lock(&rec->mu);
    char names[512];
    snprintf(names, sizeof names, "%s", rec->names);
    long finals = rec->finals, markers = rec->markers;
    natsio_status final_status = rec->final_status;
    pthread_mutex_unlock(&rec->mu);
    pthread_mutex_destroy(&rec->mu);
    NT_CHECK_MSG(arrived, "push watch saw \"%s\"", names);
    NT_CHECK_STR_EQ(names, "a,b,|c,");
    NT_CHECK_INT_EQ(markers, 1);
    NT_CHECK(released);
    NT_CHECK_INT_EQ(finals, 1);
    NT_CHECK_INT_EQ(final_status, NATSIO_DONE);
    NT_CHECK_INT_EQ(atomic_load(&rec->released), 1);
    NT_CHECK_MSG(next_st == NATSIO_DONE || next_st == NATSIO_ERR_ILLEGAL_STATE, "next in push mode: %s",
                 natsio_status_str(next_st));
    EXPECT_OK(natsio_js_obj_delete(js, "OWPUSH"));
}

/* ---- a bucket deleted under its users --------------------------------------------- */

/* Every info carries its revision, the stream sequence its description is
 * stored at (nats.js's ObjectInfo.revision): put, get_info, update, link,
 * list, watch and delete agree with the stream's last sequence. */
static void test_revision_is_the_descriptions_stream_sequence(void) {
    natsio_js *js = connect_js();
    NT_CHECK(js != NULL);
    natsio_obj *obj = MEMORY_STORE(js, "OREV");
    NT_CHECK(obj != NULL);
    natsio_obj_info *put1 = PUT_STR(obj, "a", "one");
    NT_CHECK(put1 != NULL);
    uint64_t r1 = natsio_obj_info_revision(put1);
    NT_CHECK_INT_EQ(r1, 2); /* its chunk at 1, its description at 2 */
    NT_CHECK_INT_EQ(natsio_obj_info_revision(INFO_OF(obj, "a")), r1);
    natsio_obj_info *put2 = PUT_STR(obj, "a", "two");
    NT_CHECK(put2 != NULL);
    uint64_t r2 = natsio_obj_info_revision(put2);
    NT_CHECK_INT_EQ(r2, stream_state_int(js, "OBJ_OREV", "last_seq"));
    NT_CHECK(r2 > r1);
    EXPECT_OK(natsio_obj_update_meta(obj, "a", "{\"description\":\"changed\"}"));
    natsio_obj_info *updated = INFO_OF(obj, "a");
    NT_CHECK(updated != NULL);
    uint64_t r3 = natsio_obj_info_revision(updated);
    NT_CHECK_INT_EQ(r3, stream_state_int(js, "OBJ_OREV", "last_seq"));
    NT_CHECK(r3 > r2);
    natsio_obj_info *link = NULL;
    EXPECT_OK(natsio_obj_add_link(obj, "to-a", updated, &link));
    nt_cleanup(info_free_cb, link);
    NT_CHECK_INT_EQ(natsio_obj_info_revision(link), stream_state_int(js, "OBJ_OREV", "last_seq"));
    NT_CHECK_INT_EQ(natsio_obj_info_revision(INFO_OF(obj, "to-a")), natsio_obj_info_revision(link));
    /* The list and a watch read the same revisions. */
    natsio_obj_info_list *list = NULL;
    EXPECT_OK(natsio_obj_list(obj, false, &list));
    nt_cleanup(info_list_free_cb, list);
    NT_CHECK_INT_EQ(natsio_obj_info_list_count(list), 2);
    for (size_t i = 0; i < natsio_obj_info_list_count(list); i++) {
        const natsio_obj_info *li = natsio_obj_info_list_get(list, i);
        natsio_obj_info *fresh = INFO_OF(obj, natsio_obj_info_name(li));
        NT_CHECK(fresh != NULL && natsio_obj_info_revision(li) == natsio_obj_info_revision(fresh));
    }
    natsio_obj_watcher *w = WATCH(obj, NULL);
    NT_CHECK(w != NULL);
    const natsio_obj_info *wa = NULL;
    NT_CHECK(expect_info_at(__LINE__, w, "a", false, &wa));
    NT_CHECK_INT_EQ(natsio_obj_info_revision(wa), r3);
    EXPECT_INFO(w, "to-a");
    EXPECT_MARKER(w, "OREV");
    /* A delete's tombstone is the newest description. */
    EXPECT_OK(natsio_obj_delete(obj, "a"));
    const natsio_obj_info *gone = NULL;
    NT_CHECK(expect_info_at(__LINE__, w, "a", true, &gone));
    NT_CHECK_INT_EQ(natsio_obj_info_revision(gone), stream_state_int(js, "OBJ_OREV", "last_seq"));
    NT_CHECK_INT_EQ(natsio_obj_info_revision(DELETED_INFO_OF(obj, "a")), natsio_obj_info_revision(gone));
    NT_CHECK_INT_EQ(natsio_obj_info_revision(NULL), 0);
    EXPECT_OK(natsio_js_obj_delete(js, "OREV"));
}

static void test_bucket_deleted_under_a_reader_and_a_writer(void) {
    natsio_js *js = connect_js();
    NT_CHECK(js != NULL);
    natsio_obj *obj = MEMORY_STORE(js, "OGONE");
    NT_CHECK(obj != NULL);
    size_t total = 200000;
    unsigned char *data = pattern_bytes(total, 11);
    NT_CHECK(data != NULL);
    NT_CHECK(PUT(obj, "big", "{\"chunk_size\":1000}", data, total) != NULL);
    natsio_obj_reader *r = NULL;
    EXPECT_OK(natsio_obj_get(obj, "big", false, &r));
    nt_cleanup(reader_free_cb, r);
    char buf[1000];
    size_t n = 0;
    EXPECT_OK(natsio_obj_reader_read(r, buf, sizeof buf, &n, 10000));
    natsio_obj_writer *w = NULL;
    EXPECT_OK(natsio_obj_writer_open(obj, "new", "{\"chunk_size\":100}", &w));
    nt_cleanup(writer_free_cb, w);
    EXPECT_OK(natsio_js_obj_delete(js, "OGONE"));

    /* The reader ends (never with NATSIO_DONE unless it had every byte). */
    size_t got = n;
    natsio_status st;
    while ((st = natsio_obj_reader_read(r, buf, sizeof buf, &n, 10000)) == NATSIO_OK) got += n;
    NT_CHECK_MSG(st == NATSIO_ERR_BUCKET_NOT_FOUND || (st == NATSIO_DONE && got == total),
                 "reader of a deleted bucket: %s (%s) after %zu of %zu bytes", natsio_status_str(st),
                 natsio_last_error(), got, total);
    /* The writer's put fails, from a write or from the finish. */
    natsio_obj_info *info = SENTINEL;
    st = natsio_obj_writer_write(w, data, 1000);
    if (st == NATSIO_OK) st = natsio_obj_writer_finish(w, &info);
    NT_CHECK_MSG(st == NATSIO_ERR_BUCKET_NOT_FOUND, "writer of a deleted bucket: %s (%s)", natsio_status_str(st),
                 natsio_last_error());
    NT_CHECK(info == SENTINEL);
    natsio_obj_reader *r2 = SENTINEL;
    EXPECT_FAILS(NATSIO_ERR_BUCKET_NOT_FOUND, natsio_obj_get(obj, "big", false, &r2));
    EXPECT_FAILS(NATSIO_ERR_BUCKET_NOT_FOUND, natsio_obj_get_info(obj, "big", false, &info));
    EXPECT_FAILS(NATSIO_ERR_BUCKET_NOT_FOUND, natsio_obj_delete(obj, "big"));
    natsio_obj_info_list *l = SENTINEL;
    EXPECT_FAILS(NATSIO_ERR_BUCKET_NOT_FOUND, natsio_obj_list(obj, false, &l));
    NT_CHECK(r2 == SENTINEL && info == SENTINEL && l == SENTINEL);
}

/* ---- use after close ------------------------------------------------------------- */

static void check_calls_fail_closed(natsio_js *js, natsio_obj *obj, const natsio_obj_info *info) {
    natsio_obj *o = SENTINEL;
    natsio_obj_info *i = SENTINEL;
    natsio_obj_reader *r = SENTINEL;
    natsio_obj_watcher *w = SENTINEL;
    natsio_obj_info_list *l = SENTINEL;
    natsio_obj_status *s = SENTINEL;
    natsio_obj_status_list *sl = SENTINEL;
    natsio_string_list *names = SENTINEL;
    EXPECT_FAILS(NATSIO_ERR_CONNECTION_CLOSED, natsio_js_obj_create(js, "{\"bucket\":\"OCLOSED\"}", NATSIO_CREATE, &o));
    EXPECT_FAILS(NATSIO_ERR_CONNECTION_CLOSED, natsio_js_obj_bind(js, "OCLOSED", &o));
    EXPECT_FAILS(NATSIO_ERR_CONNECTION_CLOSED, natsio_js_obj_delete(js, "OCLOSED"));
    EXPECT_FAILS(NATSIO_ERR_CONNECTION_CLOSED, natsio_js_obj_names(js, &names));
    EXPECT_FAILS(NATSIO_ERR_CONNECTION_CLOSED, natsio_js_obj_statuses(js, &sl));
    EXPECT_FAILS(NATSIO_ERR_CONNECTION_CLOSED, natsio_obj_get_status(obj, &s));
    EXPECT_FAILS(NATSIO_ERR_CONNECTION_CLOSED, natsio_obj_seal(obj));
    EXPECT_FAILS(NATSIO_ERR_CONNECTION_CLOSED, natsio_obj_put(obj, "k", NULL, "x", 1, &i));
    EXPECT_FAILS(NATSIO_ERR_CONNECTION_CLOSED, natsio_obj_put(obj, "k", NULL, NULL, 0, &i));
    EXPECT_FAILS(NATSIO_ERR_CONNECTION_CLOSED, natsio_obj_get(obj, "k", false, &r));
    EXPECT_FAILS(NATSIO_ERR_CONNECTION_CLOSED, natsio_obj_get_info(obj, "k", true, &i));
    EXPECT_FAILS(NATSIO_ERR_CONNECTION_CLOSED, natsio_obj_update_meta(obj, "k", "{\"description\":\"x\"}"));
    EXPECT_FAILS(NATSIO_ERR_CONNECTION_CLOSED, natsio_obj_delete(obj, "k"));
    EXPECT_FAILS(NATSIO_ERR_CONNECTION_CLOSED, natsio_obj_list(obj, true, &l));
    EXPECT_FAILS(NATSIO_ERR_CONNECTION_CLOSED, natsio_obj_add_link(obj, "l", info, &i));
    EXPECT_FAILS(NATSIO_ERR_CONNECTION_CLOSED, natsio_obj_add_bucket_link(obj, "l", "OCLOSED", &i));
    EXPECT_FAILS(NATSIO_ERR_CONNECTION_CLOSED, natsio_obj_watch(obj, NULL, &w));
    NT_CHECK(o == SENTINEL && i == SENTINEL && r == SENTINEL && w == SENTINEL && l == SENTINEL && s == SENTINEL &&
             sl == SENTINEL && names == SENTINEL);
    /* A writer: opening does no I/O; the first chunk fails. */
    natsio_obj_writer *wr = NULL;
    natsio_status st = natsio_obj_writer_open(obj, "k", "{\"chunk_size\":1024}", &wr);
    if (st == NATSIO_OK) {
        static unsigned char chunk[2048];
        st = natsio_obj_writer_write(wr, chunk, sizeof chunk);
        if (st == NATSIO_OK) st = natsio_obj_writer_finish(wr, &i);
        natsio_obj_writer_free(wr);
    }
    NT_CHECK_MSG(st == NATSIO_ERR_CONNECTION_CLOSED, "writer: %s (%s)", natsio_status_str(st), natsio_last_error());
    NT_CHECK(i == SENTINEL);
    /* The name is still readable; argument errors stay argument errors. */
    NT_CHECK_STR_EQ(natsio_obj_bucket(obj), "OCLOSED");
    EXPECT_FAILS(NATSIO_ERR_INVALID_OBJECT_NAME, natsio_obj_put(obj, "", NULL, "x", 1, NULL));
}

static void test_use_after_client_close_and_free(void) {
    natsio_client *c = NULL;
    EXPECT_OK(natsio_client_connect_url(nt_server_url(g_server), &c));
    natsio_js *js = NULL;
    natsio_obj *obj = NULL;
    natsio_obj_info *info = NULL;
    natsio_status st = natsio_client_jetstream(c, NULL, &js);
    if (st == NATSIO_OK)
        st = natsio_js_obj_create(js, "{\"bucket\":\"OCLOSED\",\"storage\":\"memory\"}", NATSIO_CREATE, &obj);
    if (st == NATSIO_OK) st = natsio_obj_put(obj, "k", NULL, "before", 6, &info);
    if (st == NATSIO_OK) st = natsio_client_close(c);
    nt_cleanup(js_free_cb, js);
    nt_cleanup(obj_free_cb, obj);
    nt_cleanup(info_free_cb, info);
    if (st != NATSIO_OK) natsio_client_free(c);
    NT_CHECK_MSG(st == NATSIO_OK, "setup: %s (%s)", natsio_status_str(st), natsio_last_error());

    check_calls_fail_closed(js, obj, info);
    natsio_client_free(c);
    NT_CHECK(!nt_failed());
    check_calls_fail_closed(js, obj, info);
    NT_CHECK(!nt_failed());
    /* An info had before stays readable. */
    NT_CHECK_INT_EQ(natsio_obj_info_size(info), 6);

    /* The object is still there for another client. */
    natsio_js *other = connect_js();
    NT_CHECK(other != NULL);
    natsio_obj *again = NULL;
    EXPECT_OK(natsio_js_obj_bind(other, "OCLOSED", &again));
    nt_cleanup(obj_free_cb, again);
    CHECK_READS_STR(again, "k", "before");
    EXPECT_OK(natsio_js_obj_delete(other, "OCLOSED"));
}

/* Closes the client after delay_ms. */
typedef struct {
    natsio_client *c;
    int64_t delay_ms;
} delayed_close;

static void *close_thread(void *arg) {
    delayed_close *d = (delayed_close *)arg;
    nt_sleep_ms(d->delay_ms);
    natsio_client_close(d->c);
    return NULL;
}

static void test_client_closed_during_put_and_get(void) {
    natsio_js *setup = connect_js();
    NT_CHECK(setup != NULL);
    natsio_obj *sobj = MEMORY_STORE(setup, "OMIDWAY");
    NT_CHECK(sobj != NULL);
    size_t total = 512 * 1024;
    unsigned char *data = random_bytes(total);
    NT_CHECK(data != NULL);
    NT_CHECK(PUT(sobj, "old", "{\"chunk_size\":1024}", data, total) != NULL);

    natsio_client *c = NULL;
    EXPECT_OK(natsio_client_connect_url(nt_server_url(g_server), &c));
    nt_cleanup(client_free_cb, c);
    natsio_js *js = new_jetstream(c, NULL);
    NT_CHECK(js != NULL);
    natsio_obj *obj = NULL;
    EXPECT_OK(natsio_js_obj_bind(js, "OMIDWAY", &obj));
    nt_cleanup(obj_free_cb, obj);

    /* A reader that has begun: reading ends with the close (or, if every
     * chunk had already come, with all the bytes, verified). */
    natsio_obj_reader *r = NULL;
    EXPECT_OK(natsio_obj_get(obj, "old", false, &r));
    nt_cleanup(reader_free_cb, r);
    char buf[1024];
    size_t n = 0;
    EXPECT_OK(natsio_obj_reader_read(r, buf, sizeof buf, &n, 10000));
    /* A writer that has begun. */
    natsio_obj_writer *w = NULL;
    EXPECT_OK(natsio_obj_writer_open(obj, "old", "{\"chunk_size\":1024}", &w));
    nt_cleanup(writer_free_cb, w);
    EXPECT_OK(natsio_obj_writer_write(w, data, 4096));
    /* A put in flight, closed from another thread. */
    natsio_token *pt = NULL;
    EXPECT_OK(natsio_obj_put_async(obj, "old", "{\"chunk_size\":1024}", data, total, &pt));
    nt_cleanup(token_free_cb, pt);
    delayed_close d = {c, 5};
    pthread_t th;
    NT_CHECK(pthread_create(&th, NULL, close_thread, &d) == 0);
    pthread_join(th, NULL);

    natsio_status pst = token_outcome(pt, 10000);
    NT_CHECK_MSG(pst == NATSIO_ERR_CONNECTION_CLOSED || pst == NATSIO_OK, "put in flight: %s",
                 natsio_status_str(pst));
    natsio_status wst = natsio_obj_writer_write(w, data, 8192);
    if (wst == NATSIO_OK) wst = natsio_obj_writer_finish(w, NULL);
    NT_CHECK_MSG(wst == NATSIO_ERR_CONNECTION_CLOSED, "writer after the close: %s (%s)", natsio_status_str(wst),
                 natsio_last_error());
    size_t got = n;
    natsio_status rst = NATSIO_OK;
    while (rst == NATSIO_OK) {
        rst = natsio_obj_reader_read(r, buf, sizeof buf, &n, 10000);
        if (rst == NATSIO_OK) got += n;
    }
    NT_CHECK_MSG(rst == NATSIO_ERR_CONNECTION_CLOSED || (rst == NATSIO_DONE && got == total),
                 "reader after the close: %s after %zu of %zu bytes", natsio_status_str(rst), got, total);
    natsio_obj_reader *r2 = SENTINEL;
    EXPECT_FAILS(NATSIO_ERR_CONNECTION_CLOSED, natsio_obj_get(obj, "old", false, &r2));
    NT_CHECK(r2 == SENTINEL);

    /* A failed put left the old version; a finished one the new (same
     * bytes): either way the object reads back whole. */
    CHECK_READS_BACK(sobj, "old", data, total);
    EXPECT_OK(natsio_js_obj_delete(setup, "OMIDWAY"));
}

/* ---- bad input ------------------------------------------------------------------- */

static void test_null_tolerant_getters_and_frees(void) {
    NT_CHECK(natsio_obj_bucket(NULL) == NULL);
    NT_CHECK(natsio_obj_status_bucket(NULL) == NULL);
    NT_CHECK(natsio_obj_status_description(NULL) == NULL);
    NT_CHECK_INT_EQ(natsio_obj_status_ttl_ns(NULL), 0);
    NT_CHECK(natsio_obj_status_storage(NULL) == NULL);
    NT_CHECK_INT_EQ(natsio_obj_status_replicas(NULL), 0);
    NT_CHECK_INT_EQ(natsio_obj_status_size(NULL), 0);
    NT_CHECK(!natsio_obj_status_sealed(NULL));
    NT_CHECK(!natsio_obj_status_compression(NULL));
    NT_CHECK(natsio_obj_status_metadata_json(NULL) == NULL);
    NT_CHECK(natsio_obj_status_stream_info_json(NULL) == NULL);
    NT_CHECK_INT_EQ(natsio_obj_status_list_count(NULL), 0);
    NT_CHECK(natsio_obj_status_list_get(NULL, 0) == NULL);
    NT_CHECK(natsio_obj_info_name(NULL) == NULL);
    NT_CHECK(natsio_obj_info_description(NULL) == NULL);
    NT_CHECK(natsio_obj_info_bucket(NULL) == NULL);
    NT_CHECK(natsio_obj_info_nuid(NULL) == NULL);
    NT_CHECK_INT_EQ(natsio_obj_info_size(NULL), 0);
    NT_CHECK_INT_EQ(natsio_obj_info_chunks(NULL), 0);
    NT_CHECK(natsio_obj_info_digest(NULL) == NULL);
    NT_CHECK(!natsio_obj_info_deleted(NULL));
    NT_CHECK_INT_EQ(natsio_obj_info_mtime_ns(NULL), 0);
    NT_CHECK(natsio_obj_info_headers(NULL) == NULL);
    NT_CHECK(natsio_obj_info_metadata_json(NULL) == NULL);
    NT_CHECK(!natsio_obj_info_is_link(NULL));
    NT_CHECK(natsio_obj_info_link_bucket(NULL) == NULL);
    NT_CHECK(natsio_obj_info_link_name(NULL) == NULL);
    NT_CHECK_INT_EQ(natsio_obj_info_max_chunk_size(NULL), 0);
    NT_CHECK(natsio_obj_info_json(NULL) == NULL);
    NT_CHECK(!natsio_obj_info_is_initial_done(NULL));
    NT_CHECK_INT_EQ(natsio_obj_info_list_count(NULL), 0);
    NT_CHECK(natsio_obj_info_list_get(NULL, 0) == NULL);
    NT_CHECK(natsio_obj_reader_info(NULL) == NULL);

    plant_error_marker();
    natsio_obj_free(NULL);
    natsio_obj_status_free(NULL);
    natsio_obj_status_list_free(NULL);
    natsio_obj_info_free(NULL);
    natsio_obj_info_list_free(NULL);
    natsio_obj_writer_free(NULL);
    natsio_obj_reader_free(NULL);
    natsio_obj_watcher_free(NULL);
    NT_CHECK_MSG(strstr(natsio_last_error(), ERROR_MARKER) != NULL,
                 "a _free(NULL) changed natsio_last_error() to \"%s\"",
                 natsio_last_error());
    natsio_obj_info *out = SENTINEL;
    EXPECT_NULL_ARG("info", natsio_obj_info_clone(NULL, &out));
    NT_CHECK(out == SENTINEL);
    EXPECT_NULL_ARG("opts", natsio_obj_watch_options_init(NULL));
}

static void test_bad_input_bucket_functions(void) {
    natsio_js *js = connect_js();
    NT_CHECK(js != NULL);
    const char *cfg = "{\"bucket\":\"OBADB\",\"storage\":\"memory\"}";
    natsio_obj *obj = SENTINEL;
    natsio_token *t = SENTINEL;
    natsio_string_list *names = SENTINEL;
    natsio_obj_status_list *sl = SENTINEL;

    EXPECT_NULL_ARG("js", natsio_js_obj_create(NULL, cfg, NATSIO_CREATE, &obj));
    EXPECT_NULL_ARG("config_json", natsio_js_obj_create(js, NULL, NATSIO_CREATE, &obj));
    EXPECT_NULL_ARG("obj_out", natsio_js_obj_create(js, cfg, NATSIO_CREATE, NULL));
    EXPECT_FAILS_NAMING(NATSIO_ERR_INVALID_UTF8, "config_json",
                        natsio_js_obj_create(js, BAD_UTF8, NATSIO_CREATE, &obj));
    EXPECT_NULL_ARG("js", natsio_js_obj_create_async(NULL, cfg, NATSIO_CREATE, &t));
    EXPECT_NULL_ARG("config_json", natsio_js_obj_create_async(js, NULL, NATSIO_CREATE, &t));
    EXPECT_NULL_ARG("token_out", natsio_js_obj_create_async(js, cfg, NATSIO_CREATE, NULL));
    EXPECT_FAILS(NATSIO_ERR_CONFIG,
                 natsio_js_obj_create_async(js, "{\"bucket\":\"OBADB\",\"ttl\":\"x\"}", NATSIO_CREATE, &t));
    EXPECT_FAILS(NATSIO_ERR_INVALID_BUCKET_NAME,
                 natsio_js_obj_create_async(js, "{\"bucket\":\"a.b\"}", NATSIO_CREATE, &t));
    EXPECT_FAILS_NAMING(NATSIO_ERR_INVALID_ARGUMENT, "action", natsio_js_obj_create_async(js, cfg, 7, &t));

    EXPECT_NULL_ARG("js", natsio_js_obj_bind(NULL, "OBADB", &obj));
    EXPECT_NULL_ARG("bucket", natsio_js_obj_bind(js, NULL, &obj));
    EXPECT_NULL_ARG("obj_out", natsio_js_obj_bind(js, "OBADB", NULL));
    EXPECT_FAILS_NAMING(NATSIO_ERR_INVALID_UTF8, "bucket", natsio_js_obj_bind(js, BAD_UTF8, &obj));
    EXPECT_NULL_ARG("js", natsio_js_obj_bind_async(NULL, "OBADB", &t));
    EXPECT_NULL_ARG("bucket", natsio_js_obj_bind_async(js, NULL, &t));
    EXPECT_NULL_ARG("token_out", natsio_js_obj_bind_async(js, "OBADB", NULL));
    EXPECT_FAILS(NATSIO_ERR_INVALID_BUCKET_NAME, natsio_js_obj_bind_async(js, "a b", &t));

    EXPECT_NULL_ARG("js", natsio_js_obj_delete(NULL, "OBADB"));
    EXPECT_NULL_ARG("bucket", natsio_js_obj_delete(js, NULL));
    EXPECT_FAILS_NAMING(NATSIO_ERR_INVALID_UTF8, "bucket", natsio_js_obj_delete(js, BAD_UTF8));
    EXPECT_NULL_ARG("js", natsio_js_obj_delete_async(NULL, "OBADB", &t));
    EXPECT_NULL_ARG("bucket", natsio_js_obj_delete_async(js, NULL, &t));
    EXPECT_NULL_ARG("token_out", natsio_js_obj_delete_async(js, "OBADB", NULL));
    EXPECT_FAILS(NATSIO_ERR_INVALID_BUCKET_NAME, natsio_js_obj_delete_async(js, "a*", &t));

    EXPECT_NULL_ARG("js", natsio_js_obj_names(NULL, &names));
    EXPECT_NULL_ARG("list_out", natsio_js_obj_names(js, NULL));
    EXPECT_NULL_ARG("js", natsio_js_obj_names_async(NULL, &t));
    EXPECT_NULL_ARG("token_out", natsio_js_obj_names_async(js, NULL));
    EXPECT_NULL_ARG("js", natsio_js_obj_statuses(NULL, &sl));
    EXPECT_NULL_ARG("list_out", natsio_js_obj_statuses(js, NULL));
    EXPECT_NULL_ARG("js", natsio_js_obj_statuses_async(NULL, &t));
    EXPECT_NULL_ARG("token_out", natsio_js_obj_statuses_async(js, NULL));
    NT_CHECK(obj == SENTINEL && t == SENTINEL && names == SENTINEL && sl == SENTINEL);

    /* Tokens of the wrong kind, and NULL tokens. */
    natsio_token *kt = NULL;
    EXPECT_OK(natsio_js_stream_names_async(js, NULL, &kt));
    nt_cleanup(token_free_cb, kt);
    NT_CHECK_INT_EQ(token_outcome(kt, 10000), NATSIO_OK);
    EXPECT_FAILS(NATSIO_ERR_ILLEGAL_STATE, natsio_token_obj(kt, &obj));
    natsio_obj_info *info = SENTINEL;
    natsio_obj_reader *r = SENTINEL;
    natsio_obj_watcher *w = SENTINEL;
    natsio_obj_info_list *l = SENTINEL;
    natsio_obj_status *s = SENTINEL;
    const void *p = SENTINEL;
    size_t len = 77;
    EXPECT_FAILS(NATSIO_ERR_ILLEGAL_STATE, natsio_token_obj_info(kt, &info));
    EXPECT_FAILS(NATSIO_ERR_ILLEGAL_STATE, natsio_token_obj_reader(kt, &r));
    EXPECT_FAILS(NATSIO_ERR_ILLEGAL_STATE, natsio_token_obj_watcher(kt, &w));
    EXPECT_FAILS(NATSIO_ERR_ILLEGAL_STATE, natsio_token_obj_info_list(kt, &l));
    EXPECT_FAILS(NATSIO_ERR_ILLEGAL_STATE, natsio_token_obj_status(kt, &s));
    EXPECT_FAILS(NATSIO_ERR_ILLEGAL_STATE, natsio_token_obj_status_list(kt, &sl));
    EXPECT_FAILS(NATSIO_ERR_ILLEGAL_STATE, natsio_token_obj_chunk(kt, &p, &len));
    EXPECT_NULL_ARG("token", natsio_token_obj(NULL, &obj));
    EXPECT_NULL_ARG("token", natsio_token_obj_info(NULL, &info));
    EXPECT_NULL_ARG("token", natsio_token_obj_reader(NULL, &r));
    EXPECT_NULL_ARG("token", natsio_token_obj_watcher(NULL, &w));
    EXPECT_NULL_ARG("token", natsio_token_obj_info_list(NULL, &l));
    EXPECT_NULL_ARG("token", natsio_token_obj_status(NULL, &s));
    EXPECT_NULL_ARG("token", natsio_token_obj_status_list(NULL, &sl));
    EXPECT_NULL_ARG("token", natsio_token_obj_chunk(NULL, &p, &len));
    EXPECT_NULL_ARG("obj_out", natsio_token_obj(kt, NULL));
    EXPECT_NULL_ARG("info_out", natsio_token_obj_info(kt, NULL));
    EXPECT_NULL_ARG("reader_out", natsio_token_obj_reader(kt, NULL));
    EXPECT_NULL_ARG("watcher_out", natsio_token_obj_watcher(kt, NULL));
    EXPECT_NULL_ARG("list_out", natsio_token_obj_info_list(kt, NULL));
    EXPECT_NULL_ARG("status_out", natsio_token_obj_status(kt, NULL));
    EXPECT_NULL_ARG("list_out", natsio_token_obj_status_list(kt, NULL));
    EXPECT_NULL_ARG("data_out", natsio_token_obj_chunk(kt, NULL, &len));
    EXPECT_NULL_ARG("len_out", natsio_token_obj_chunk(kt, &p, NULL));
    NT_CHECK(obj == SENTINEL && info == SENTINEL && r == SENTINEL && w == SENTINEL && l == SENTINEL && s == SENTINEL &&
             sl == SENTINEL && p == SENTINEL && len == 77);
    /* No bucket came of it. */
    EXPECT_FAILS(NATSIO_ERR_BUCKET_NOT_FOUND, natsio_js_obj_bind(js, "OBADB", &obj));
    NT_CHECK(obj == SENTINEL);
}

static void test_bad_input_object_functions(void) {
    natsio_js *js = connect_js();
    NT_CHECK(js != NULL);
    natsio_obj *obj = MEMORY_STORE(js, "OBADO");
    NT_CHECK(obj != NULL);
    natsio_obj_info *kept_info = PUT_STR(obj, "k", "kept");
    NT_CHECK(kept_info != NULL);
    natsio_obj_info *info = SENTINEL;
    natsio_obj_reader *r = SENTINEL;
    natsio_obj_writer *wr = SENTINEL;
    natsio_obj_info_list *l = SENTINEL;
    natsio_obj_status *s = SENTINEL;
    natsio_token *t = SENTINEL;

    /* Bucket handle calls. */
    EXPECT_NULL_ARG("obj", natsio_obj_get_status(NULL, &s));
    EXPECT_NULL_ARG("status_out", natsio_obj_get_status(obj, NULL));
    EXPECT_NULL_ARG("obj", natsio_obj_get_status_async(NULL, &t));
    EXPECT_NULL_ARG("token_out", natsio_obj_get_status_async(obj, NULL));
    EXPECT_NULL_ARG("obj", natsio_obj_seal(NULL));
    EXPECT_NULL_ARG("obj", natsio_obj_seal_async(NULL, &t));
    EXPECT_NULL_ARG("token_out", natsio_obj_seal_async(obj, NULL));

    /* put */
    EXPECT_NULL_ARG("obj", natsio_obj_put(NULL, "n", NULL, "x", 1, &info));
    EXPECT_NULL_ARG("name", natsio_obj_put(obj, NULL, NULL, "x", 1, &info));
    EXPECT_NULL_ARG("data", natsio_obj_put(obj, "n", NULL, NULL, 1, &info));
    EXPECT_FAILS_NAMING(NATSIO_ERR_INVALID_UTF8, "name", natsio_obj_put(obj, BAD_UTF8, NULL, "x", 1, &info));
    EXPECT_FAILS_NAMING(NATSIO_ERR_INVALID_UTF8, "meta_json", natsio_obj_put(obj, "n", BAD_UTF8, "x", 1, &info));
    EXPECT_FAILS(NATSIO_ERR_INVALID_OBJECT_NAME, natsio_obj_put(obj, "", NULL, "x", 1, &info));
    EXPECT_FAILS(NATSIO_ERR_CONFIG, natsio_obj_put(obj, "n", "not json", "x", 1, &info));
    EXPECT_FAILS_NAMING(NATSIO_ERR_CONFIG, "color", natsio_obj_put(obj, "n", "{\"color\":1}", "x", 1, &info));
    EXPECT_FAILS_NAMING(NATSIO_ERR_CONFIG, "chunk_size",
                        natsio_obj_put(obj, "n", "{\"chunk_size\":\"big\"}", "x", 1, &info));
    EXPECT_FAILS_NAMING(NATSIO_ERR_CONFIG, "chunk_size",
                        natsio_obj_put(obj, "n", "{\"chunk_size\":-1}", "x", 1, &info));
    EXPECT_FAILS_NAMING(NATSIO_ERR_CONFIG, "chunk_size",
                        natsio_obj_put(obj, "n", "{\"chunk_size\":0}", "x", 1, &info));
    EXPECT_FAILS(NATSIO_ERR_CONFIG, natsio_obj_put(obj, "n", "{\"description\":5}", "x", 1, &info));
    EXPECT_FAILS(NATSIO_ERR_CONFIG, natsio_obj_put(obj, "n", "{\"headers\":{\"H\":5}}", "x", 1, &info));
    EXPECT_FAILS(NATSIO_ERR_CONFIG, natsio_obj_put(obj, "n", "{\"metadata\":{\"k\":[1]}}", "x", 1, &info));
    EXPECT_NULL_ARG("obj", natsio_obj_put_async(NULL, "n", NULL, "x", 1, &t));
    EXPECT_NULL_ARG("name", natsio_obj_put_async(obj, NULL, NULL, "x", 1, &t));
    EXPECT_NULL_ARG("data", natsio_obj_put_async(obj, "n", NULL, NULL, 1, &t));
    EXPECT_NULL_ARG("token_out", natsio_obj_put_async(obj, "n", NULL, "x", 1, NULL));
    EXPECT_FAILS(NATSIO_ERR_INVALID_OBJECT_NAME, natsio_obj_put_async(obj, "", NULL, "x", 1, &t));
    EXPECT_FAILS(NATSIO_ERR_CONFIG, natsio_obj_put_async(obj, "n", "{\"x\":1}", "x", 1, &t));
    NT_CHECK(info == SENTINEL && t == SENTINEL && s == SENTINEL);

    /* writer */
    EXPECT_NULL_ARG("obj", natsio_obj_writer_open(NULL, "n", NULL, &wr));
    EXPECT_NULL_ARG("name", natsio_obj_writer_open(obj, NULL, NULL, &wr));
    EXPECT_NULL_ARG("writer_out", natsio_obj_writer_open(obj, "n", NULL, NULL));
    EXPECT_FAILS_NAMING(NATSIO_ERR_INVALID_UTF8, "name", natsio_obj_writer_open(obj, BAD_UTF8, NULL, &wr));
    EXPECT_FAILS(NATSIO_ERR_INVALID_OBJECT_NAME, natsio_obj_writer_open(obj, "", NULL, &wr));
    EXPECT_FAILS(NATSIO_ERR_CONFIG, natsio_obj_writer_open(obj, "n", "{\"chunk_size\":\"x\"}", &wr));
    NT_CHECK(wr == SENTINEL);
    EXPECT_NULL_ARG("writer", natsio_obj_writer_write(NULL, "x", 1));
    EXPECT_NULL_ARG("writer", natsio_obj_writer_write_async(NULL, "x", 1, &t));
    EXPECT_NULL_ARG("writer", natsio_obj_writer_finish(NULL, &info));
    EXPECT_NULL_ARG("writer", natsio_obj_writer_finish_async(NULL, &t));
    EXPECT_NULL_ARG("writer", natsio_obj_writer_abort(NULL));
    natsio_obj_writer *w = NULL;
    EXPECT_OK(natsio_obj_writer_open(obj, "w", NULL, &w));
    nt_cleanup(writer_free_cb, w);
    EXPECT_NULL_ARG("data", natsio_obj_writer_write(w, NULL, 1));
    EXPECT_NULL_ARG("data", natsio_obj_writer_write_async(w, NULL, 1, &t));
    EXPECT_NULL_ARG("token_out", natsio_obj_writer_write_async(w, "x", 1, NULL));
    EXPECT_NULL_ARG("token_out", natsio_obj_writer_finish_async(w, NULL));
    /* The writer still works after those. */
    EXPECT_OK(natsio_obj_writer_write(w, "ok", 2));
    EXPECT_OK(natsio_obj_writer_finish(w, NULL));
    CHECK_READS_STR(obj, "w", "ok");

    /* get, reader */
    EXPECT_NULL_ARG("obj", natsio_obj_get(NULL, "k", false, &r));
    EXPECT_NULL_ARG("name", natsio_obj_get(obj, NULL, false, &r));
    EXPECT_NULL_ARG("reader_out", natsio_obj_get(obj, "k", false, NULL));
    EXPECT_FAILS_NAMING(NATSIO_ERR_INVALID_UTF8, "name", natsio_obj_get(obj, BAD_UTF8, false, &r));
    EXPECT_FAILS(NATSIO_ERR_INVALID_OBJECT_NAME, natsio_obj_get(obj, "", false, &r));
    EXPECT_NULL_ARG("obj", natsio_obj_get_async(NULL, "k", false, &t));
    EXPECT_NULL_ARG("name", natsio_obj_get_async(obj, NULL, false, &t));
    EXPECT_NULL_ARG("token_out", natsio_obj_get_async(obj, "k", false, NULL));
    NT_CHECK(r == SENTINEL && t == SENTINEL);
    natsio_token *et = NULL;
    EXPECT_ASYNC_REFUSED(NATSIO_ERR_INVALID_OBJECT_NAME, et, natsio_obj_get_async(obj, "", false, &et));
    EXPECT_ASYNC_REFUSED(NATSIO_ERR_INVALID_OBJECT_NAME, et, natsio_obj_get_info_async(obj, "", true, &et));
    EXPECT_ASYNC_REFUSED(NATSIO_ERR_INVALID_OBJECT_NAME, et, natsio_obj_update_meta_async(obj, "", "{}", &et));
    EXPECT_ASYNC_REFUSED(NATSIO_ERR_INVALID_OBJECT_NAME, et, natsio_obj_delete_async(obj, "", &et));
    EXPECT_ASYNC_REFUSED(NATSIO_ERR_INVALID_OBJECT_NAME, et, natsio_obj_add_link_async(obj, "", kept_info, &et));
    EXPECT_ASYNC_REFUSED(NATSIO_ERR_INVALID_OBJECT_NAME, et,
                       natsio_obj_add_bucket_link_async(obj, "", "OBADO", &et));
    EXPECT_FAILS(NATSIO_ERR_CONFIG, natsio_obj_update_meta_async(obj, "k", "{\"x\":1}", &t));
    EXPECT_FAILS(NATSIO_ERR_INVALID_BUCKET_NAME, natsio_obj_add_bucket_link_async(obj, "l", "a.b", &t));
    NT_CHECK(t == SENTINEL);
    char buf[16];
    size_t n = 77;
    EXPECT_NULL_ARG("reader", natsio_obj_reader_read(NULL, buf, sizeof buf, &n, 1000));
    EXPECT_NULL_ARG("reader", natsio_obj_reader_next_async(NULL, &t));
    natsio_obj_reader *rd = NULL;
    EXPECT_OK(natsio_obj_get(obj, "k", false, &rd));
    nt_cleanup(reader_free_cb, rd);
    EXPECT_NULL_ARG("buf", natsio_obj_reader_read(rd, NULL, sizeof buf, &n, 1000));
    EXPECT_NULL_ARG("n_out", natsio_obj_reader_read(rd, buf, sizeof buf, NULL, 1000));
    EXPECT_FAILS(NATSIO_ERR_INVALID_ARGUMENT, natsio_obj_reader_read(rd, buf, sizeof buf, &n, -7));
    EXPECT_FAILS(NATSIO_ERR_INVALID_ARGUMENT, natsio_obj_reader_read(rd, buf, 0, &n, 1000));
    NT_CHECK_MSG(n == 77, "a refused read wrote n_out (%zu)", n);
    EXPECT_NULL_ARG("token_out", natsio_obj_reader_next_async(rd, NULL));
    /* The reader still reads the whole object after those. */
    unsigned char *all = NULL;
    size_t all_len = 0;
    EXPECT_STATUS(NATSIO_DONE, read_all(rd, 3, &all, &all_len));
    NT_CHECK_MEM_EQ(all, all_len, "kept", 4);

    /* info, update_meta, delete, list */
    EXPECT_NULL_ARG("obj", natsio_obj_get_info(NULL, "k", false, &info));
    EXPECT_NULL_ARG("name", natsio_obj_get_info(obj, NULL, false, &info));
    EXPECT_NULL_ARG("info_out", natsio_obj_get_info(obj, "k", false, NULL));
    EXPECT_FAILS_NAMING(NATSIO_ERR_INVALID_UTF8, "name", natsio_obj_get_info(obj, BAD_UTF8, false, &info));
    EXPECT_FAILS(NATSIO_ERR_INVALID_OBJECT_NAME, natsio_obj_get_info(obj, "", true, &info));
    EXPECT_NULL_ARG("obj", natsio_obj_get_info_async(NULL, "k", false, &t));
    EXPECT_NULL_ARG("name", natsio_obj_get_info_async(obj, NULL, false, &t));
    EXPECT_NULL_ARG("token_out", natsio_obj_get_info_async(obj, "k", false, NULL));
    EXPECT_NULL_ARG("obj", natsio_obj_update_meta(NULL, "k", "{}"));
    EXPECT_NULL_ARG("name", natsio_obj_update_meta(obj, NULL, "{}"));
    EXPECT_FAILS_NAMING(NATSIO_ERR_INVALID_UTF8, "name", natsio_obj_update_meta(obj, BAD_UTF8, "{}"));
    EXPECT_FAILS_NAMING(NATSIO_ERR_INVALID_UTF8, "meta_json", natsio_obj_update_meta(obj, "k", BAD_UTF8));
    EXPECT_FAILS(NATSIO_ERR_INVALID_OBJECT_NAME, natsio_obj_update_meta(obj, "", "{}"));
    EXPECT_NULL_ARG("obj", natsio_obj_update_meta_async(NULL, "k", "{}", &t));
    EXPECT_NULL_ARG("name", natsio_obj_update_meta_async(obj, NULL, "{}", &t));
    EXPECT_NULL_ARG("token_out", natsio_obj_update_meta_async(obj, "k", "{}", NULL));
    EXPECT_NULL_ARG("obj", natsio_obj_delete(NULL, "k"));
    EXPECT_NULL_ARG("name", natsio_obj_delete(obj, NULL));
    EXPECT_FAILS_NAMING(NATSIO_ERR_INVALID_UTF8, "name", natsio_obj_delete(obj, BAD_UTF8));
    EXPECT_FAILS(NATSIO_ERR_INVALID_OBJECT_NAME, natsio_obj_delete(obj, ""));
    EXPECT_NULL_ARG("obj", natsio_obj_delete_async(NULL, "k", &t));
    EXPECT_NULL_ARG("name", natsio_obj_delete_async(obj, NULL, &t));
    EXPECT_NULL_ARG("token_out", natsio_obj_delete_async(obj, "k", NULL));
    EXPECT_NULL_ARG("obj", natsio_obj_list(NULL, false, &l));
    EXPECT_NULL_ARG("list_out", natsio_obj_list(obj, false, NULL));
    EXPECT_NULL_ARG("obj", natsio_obj_list_async(NULL, false, &t));
    EXPECT_NULL_ARG("token_out", natsio_obj_list_async(obj, false, NULL));
    NT_CHECK(info == SENTINEL && l == SENTINEL && t == SENTINEL);

    /* links */
    EXPECT_NULL_ARG("obj", natsio_obj_add_link(NULL, "l", kept_info, &info));
    EXPECT_NULL_ARG("name", natsio_obj_add_link(obj, NULL, kept_info, &info));
    EXPECT_NULL_TARGET(natsio_obj_add_link(obj, "l", NULL, &info));
    EXPECT_FAILS_NAMING(NATSIO_ERR_INVALID_UTF8, "name", natsio_obj_add_link(obj, BAD_UTF8, kept_info, &info));
    EXPECT_FAILS(NATSIO_ERR_INVALID_OBJECT_NAME, natsio_obj_add_link(obj, "", kept_info, &info));
    EXPECT_NULL_ARG("obj", natsio_obj_add_link_async(NULL, "l", kept_info, &t));
    EXPECT_NULL_ARG("name", natsio_obj_add_link_async(obj, NULL, kept_info, &t));
    EXPECT_NULL_TARGET(natsio_obj_add_link_async(obj, "l", NULL, &t));
    EXPECT_NULL_ARG("token_out", natsio_obj_add_link_async(obj, "l", kept_info, NULL));
    EXPECT_NULL_ARG("obj", natsio_obj_add_bucket_link(NULL, "l", "OBADO", &info));
    EXPECT_NULL_ARG("name", natsio_obj_add_bucket_link(obj, NULL, "OBADO", &info));
    EXPECT_NULL_ARG("bucket", natsio_obj_add_bucket_link(obj, "l", NULL, &info));
    EXPECT_FAILS_NAMING(NATSIO_ERR_INVALID_UTF8, "bucket", natsio_obj_add_bucket_link(obj, "l", BAD_UTF8, &info));
    EXPECT_FAILS(NATSIO_ERR_INVALID_OBJECT_NAME, natsio_obj_add_bucket_link(obj, "", "OBADO", &info));
    EXPECT_FAILS(NATSIO_ERR_INVALID_BUCKET_NAME, natsio_obj_add_bucket_link(obj, "l", "a.b", &info));
    EXPECT_NULL_ARG("obj", natsio_obj_add_bucket_link_async(NULL, "l", "OBADO", &t));
    EXPECT_NULL_ARG("bucket", natsio_obj_add_bucket_link_async(obj, "l", NULL, &t));
    EXPECT_NULL_ARG("token_out", natsio_obj_add_bucket_link_async(obj, "l", "OBADO", NULL));
    NT_CHECK(info == SENTINEL && t == SENTINEL);

    /* watch */
    natsio_obj_watcher *w2 = SENTINEL;
    EXPECT_NULL_ARG("obj", natsio_obj_watch(NULL, NULL, &w2));
    EXPECT_NULL_ARG("watcher_out", natsio_obj_watch(obj, NULL, NULL));
    EXPECT_NULL_ARG("obj", natsio_obj_watch_async(NULL, NULL, &t));
    EXPECT_NULL_ARG("token_out", natsio_obj_watch_async(obj, NULL, NULL));
    natsio_obj_watch_options bad_opts = watch_options();
    bad_opts.version = 0;
    EXPECT_FAILS(NATSIO_ERR_INVALID_ARGUMENT, natsio_obj_watch_async(obj, &bad_opts, &t));
    NT_CHECK(w2 == SENTINEL && t == SENTINEL);
    natsio_iter_stats stats;
    EXPECT_NULL_ARG("watcher", natsio_obj_watcher_next(NULL, 100, &info));
    EXPECT_NULL_ARG("watcher", natsio_obj_watcher_next_async(NULL, &t));
    EXPECT_NULL_ARG("watcher", natsio_obj_watcher_set_callback(NULL, record_cb, NULL, NULL));
    EXPECT_NULL_ARG("watcher", natsio_obj_watcher_get_stats(NULL, &stats));
    EXPECT_NULL_ARG("watcher", natsio_obj_watcher_stop(NULL));
    natsio_obj_watcher *wt = WATCH(obj, NULL);
    NT_CHECK(wt != NULL);
    EXPECT_NULL_ITEM_OUT("info_out", natsio_obj_watcher_next(wt, 100, NULL));
    EXPECT_FAILS(NATSIO_ERR_INVALID_ARGUMENT, natsio_obj_watcher_next(wt, -9, &info));
    EXPECT_NULL_ARG("token_out", natsio_obj_watcher_next_async(wt, NULL));
    EXPECT_NULL_ARG("cb", natsio_obj_watcher_set_callback(wt, NULL, NULL, NULL));
    EXPECT_NULL_ARG("stats_out", natsio_obj_watcher_get_stats(wt, NULL));
    NT_CHECK(info == SENTINEL && t == SENTINEL);
    /* The watch still works after those. */
    EXPECT_INFO(wt, "k");
    EXPECT_INFO(wt, "w");
    EXPECT_MARKER(wt, "OBADO");

    /* Nothing changed. */
    natsio_obj_info_list *list = NULL;
    EXPECT_OK(natsio_obj_list(obj, true, &list));
    nt_cleanup(info_list_free_cb, list);
    char names[128];
    NT_CHECK_STR_EQ(list_names(list, names, sizeof names), "k,w");
    CHECK_READS_STR(obj, "k", "kept");
    EXPECT_OK(natsio_js_obj_delete(js, "OBADO"));
}

int main(int argc, char **argv) {
    static const nt_case cases[] = {
        NT_CASE(test_bucket_create_bind_update_delete),
        NT_CASE(test_bucket_name_and_config_errors),
        NT_CASE(test_names_and_statuses),
        NT_CASE(test_round_trips_small_sizes),
        NT_CASE(test_round_trip_10_mib_random),
        NT_CASE(test_wire_layout_and_info_json),
        NT_CASE(test_writer_in_odd_pieces),
        NT_CASE(test_writer_async_and_put_async),
        NT_CASE(test_reader_async_and_get_async),
        NT_CASE(test_corrupted_chunk_is_a_digest_mismatch),
        NT_CASE(test_one_chunk_object_is_checked_too),
        NT_CASE(test_replace_purges_the_old_chunks),
        NT_CASE(test_delete_leaves_a_tombstone),
        NT_CASE(test_writer_abort_keeps_the_previous_version),
        NT_CASE(test_update_meta),
        NT_CASE(test_links),
        NT_CASE(test_seal),
        NT_CASE(test_list),
        NT_CASE(test_watch_initial_values_marker_then_changes),
        NT_CASE(test_watch_options),
        NT_CASE(test_watch_async_push_and_token),
        NT_CASE(test_revision_is_the_descriptions_stream_sequence),
        NT_CASE(test_bucket_deleted_under_a_reader_and_a_writer),
        NT_CASE(test_use_after_client_close_and_free),
        NT_CASE(test_client_closed_during_put_and_get),
        NT_CASE(test_null_tolerant_getters_and_frees),
        NT_CASE(test_bad_input_bucket_functions),
        NT_CASE(test_bad_input_object_functions),
    };
    return run_cases_with_shared_server(argc, argv, "objtest", cases, NT_COUNT(cases));
}
