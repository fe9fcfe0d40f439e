/*
 * Key-Value buckets through the C ABI against a real nats-server: bucket
 * create (each natsio_create_action)/bind/delete and their errors, put/get and
 * every entry field, revisions, create and compare-and-set, delete and
 * purge markers, keys and bucket names, binary and empty values, status
 * JSON, listing keys (natsio_kv_keys, a string list; filtered with
 * natsio_kv_keys_filtered; as an iterator with natsio_kv_list_keys) and revisions
 * (natsio_kv_history), removing markers (natsio_kv_purge_deletes), per-key
 * TTLs (natsio_kv_write_options.ttl_s of put, create and purge), mirrors
 * (of a bucket in this domain and, through a leaf node, in another) and
 * sources, bucket
 * listings (natsio_js_kv_names, natsio_js_kv_statuses) and the typed
 * status (natsio_kv_get_status),
 * use after the client is closed, and bad input for every function.
 *
 * The cases share one server, each with its own bucket names; the mirror
 * cases start their own, which need JetStream domains.
 */
#define _POSIX_C_SOURCE 200809L

#include "harness.h"
#include "util.h"

#include <natsio.h>

#include <stdatomic.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- helpers ------------------------------------------------------------ */

#define REV_SENTINEL UINT64_C(0xDEADBEEF)

/* The latest entry of `key`, freed when the case ends (NULL on failure). */
/* Write options with a per-key TTL of `ttl_s` (each call its own struct,
 * so that several may be used in one statement). */
static const natsio_kv_write_options *ttl_opts(int64_t ttl_s) {
    static natsio_kv_write_options ring[4];
    static unsigned next;
    natsio_kv_write_options *o = &ring[next++ % 4];
    natsio_kv_write_options_init(o);
    o->ttl_s = ttl_s;
    return o;
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

/* An integer of the bucket's status JSON, searched after `section` (e.g.
 * "\"config\"" or "\"state\""); INT64_MIN when absent. */
static int64_t status_int(natsio_kv *kv, const char *section, const char *key) {
    char *json = NULL;
    if (natsio_kv_status(kv, &json) != NATSIO_OK) return INT64_MIN;
    int64_t v = INT64_MIN;
    const char *from = strstr(json, section);
    if (!from || !json_int(from, key, &v)) v = INT64_MIN;
    natsio_string_free(json);
    return v;
}

/* ---- buckets --------------------------------------------------------------- */

static void test_bucket_create_bind_update_delete(void) {
    natsio_js *js = connect_js();
    NT_CHECK(js != NULL);
    natsio_kv *kv = create_bucket(js, "{\"bucket\":\"LIFE\",\"history\":5,\"ttl\":\"1h\",\"storage\":\"memory\"}");
    NT_CHECK(kv != NULL);
    NT_CHECK_STR_EQ(natsio_kv_bucket(kv), "LIFE");

    /* Its backing stream, as the server has it. */
    char *info = NULL;
    EXPECT_OK(natsio_js_stream_info(js, "KV_LIFE", NULL, &info));
    nt_cleanup(string_free_cb, info);
    int64_t v = 0;
    NT_CHECK(json_int(info, "max_msgs_per_subject", &v));
    NT_CHECK_INT_EQ(v, 5);
    NT_CHECK(json_int(info, "max_age", &v));
    NT_CHECK_INT_EQ(v, 3600000000000LL);
    NT_CHECK_MSG(strstr(info, "\"$KV.LIFE.>\"") != NULL, "%s", info);
    NT_CHECK_MSG(strstr(info, "\"allow_direct\":true") != NULL, "%s", info);

    /* Status: the stream info, with the bucket's settings and state. */
    char *status = NULL;
    EXPECT_OK(natsio_kv_status(kv, &status));
    nt_cleanup(string_free_cb, status);
    NT_CHECK_MSG(strstr(status, "\"name\":\"KV_LIFE\"") != NULL, "%s", status);
    NT_CHECK_INT_EQ(status_int(kv, "\"config\"", "max_msgs_per_subject"), 5);
    NT_CHECK_INT_EQ(status_int(kv, "\"state\"", "messages"), 0);
    EXPECT_OK(natsio_kv_put(kv, "k", "v", 1, NULL, NULL));
    EXPECT_OK(natsio_kv_put(kv, "k2", "v", 1, NULL, NULL));
    NT_CHECK_INT_EQ(status_int(kv, "\"state\"", "messages"), 2);

    /* The identical configuration binds; another one is refused. */
    natsio_kv *again = create_bucket(js, "{\"bucket\":\"LIFE\",\"history\":5,\"ttl\":\"1h\",\"storage\":\"memory\"}");
    NT_CHECK(again != NULL);
    NT_CHECK(again != kv);
    natsio_kv_entry *e = get_entry(again, "k");
    NT_CHECK(e != NULL);
    natsio_kv *out = SENTINEL;
    EXPECT_FAILS(NATSIO_ERR_BUCKET_EXISTS,
                 natsio_js_kv_create(js, "{\"bucket\":\"LIFE\",\"history\":2,\"storage\":\"memory\"}", NATSIO_CREATE,
                                     &out));
    NT_CHECK(out == SENTINEL);

    /* NATSIO_UPDATE changes it; a missing bucket cannot be updated. */
    natsio_kv *upd = NULL;
    EXPECT_OK(natsio_js_kv_create(js, "{\"bucket\":\"LIFE\",\"history\":3,\"ttl\":\"1h\",\"storage\":\"memory\"}",
                                  NATSIO_UPDATE,
                                  &upd));
    nt_cleanup(kv_free_cb, upd);
    NT_CHECK_STR_EQ(natsio_kv_bucket(upd), "LIFE");
    NT_CHECK_INT_EQ(status_int(kv, "\"config\"", "max_msgs_per_subject"), 3);
    EXPECT_FAILS(NATSIO_ERR_BUCKET_NOT_FOUND, natsio_js_kv_create(js, "{\"bucket\":\"LIFE_NONE\"}", NATSIO_UPDATE,
                                                                  &out));
    NT_CHECK(out == SENTINEL);
    char *none_info = SENTINEL_STR;
    EXPECT_FAILS(NATSIO_ERR_STREAM_NOT_FOUND, natsio_js_stream_info(js, "KV_LIFE_NONE", NULL, &none_info));
    NT_CHECK(none_info == SENTINEL_STR);

    /* NATSIO_CREATE_OR_UPDATE: creates, then updates. */
    natsio_kv *cu = NULL;
    EXPECT_OK(natsio_js_kv_create(js, "{\"bucket\":\"LIFE2\",\"storage\":\"memory\"}", NATSIO_CREATE_OR_UPDATE, &cu));
    nt_cleanup(kv_free_cb, cu);
    NT_CHECK_STR_EQ(natsio_kv_bucket(cu), "LIFE2");
    NT_CHECK_INT_EQ(status_int(cu, "\"config\"", "max_msgs_per_subject"), 1); /* history default */
    natsio_kv *cu2 = NULL;
    EXPECT_OK(natsio_js_kv_create(js, "{\"bucket\":\"LIFE2\",\"history\":7,\"storage\":\"memory\"}",
                                  NATSIO_CREATE_OR_UPDATE, &cu2));
    nt_cleanup(kv_free_cb, cu2);
    NT_CHECK_INT_EQ(status_int(cu, "\"config\"", "max_msgs_per_subject"), 7);

    /* Bind sees what another handle wrote. */
    natsio_kv *bound = NULL;
    EXPECT_OK(natsio_js_kv_bind(js, "LIFE", &bound));
    nt_cleanup(kv_free_cb, bound);
    NT_CHECK_STR_EQ(natsio_kv_bucket(bound), "LIFE");
    natsio_kv_entry *be = get_entry(bound, "k2");
    NT_CHECK(be != NULL);
    NT_CHECK_MEM_EQ(natsio_kv_entry_value(be), natsio_kv_entry_value_len(be), "v", 1);
    EXPECT_FAILS(NATSIO_ERR_BUCKET_NOT_FOUND, natsio_js_kv_bind(js, "LIFE_NONE", &out));
    NT_CHECK(out == SENTINEL);

    /* Delete: the bucket and its stream are gone. */
    EXPECT_OK(natsio_js_kv_delete(js, "LIFE"));
    EXPECT_FAILS(NATSIO_ERR_BUCKET_NOT_FOUND, natsio_js_kv_bind(js, "LIFE", &out));
    EXPECT_FAILS(NATSIO_ERR_BUCKET_NOT_FOUND, natsio_js_kv_delete(js, "LIFE"));
    char *gone = SENTINEL_STR;
    EXPECT_FAILS(NATSIO_ERR_STREAM_NOT_FOUND, natsio_js_stream_info(js, "KV_LIFE", NULL, &gone));
    NT_CHECK(out == SENTINEL && gone == SENTINEL_STR);
    /* A handle of a deleted bucket fails cleanly. */
    natsio_kv_entry *ge = SENTINEL;
    natsio_status st = natsio_kv_get(kv, "k", &ge);
    NT_CHECK_MSG(st != NATSIO_OK, "get from a deleted bucket succeeded");
    NT_CHECK(ge == SENTINEL);
    EXPECT_OK(natsio_js_kv_delete(js, "LIFE2"));
}

static void test_bucket_name_and_config_errors(void) {
    natsio_js *js = connect_js();
    NT_CHECK(js != NULL);
    natsio_kv *out = SENTINEL;
    const char *bad_names[] = {"bad.name", "b c", "", "a*", "a>", "ü", "a/b"};
    for (size_t i = 0; i < NT_COUNT(bad_names); i++) {
        char cfg[64];
        snprintf(cfg, sizeof cfg, "{\"bucket\":\"%s\"}", bad_names[i]);
        EXPECT_FAILS(NATSIO_ERR_INVALID_BUCKET_NAME, natsio_js_kv_create(js, cfg, NATSIO_CREATE, &out));
        EXPECT_FAILS(NATSIO_ERR_INVALID_BUCKET_NAME, natsio_js_kv_create(js, cfg, NATSIO_UPDATE, &out));
        EXPECT_FAILS(NATSIO_ERR_INVALID_BUCKET_NAME, natsio_js_kv_create(js, cfg, NATSIO_CREATE_OR_UPDATE, &out));
        EXPECT_FAILS(NATSIO_ERR_INVALID_BUCKET_NAME, natsio_js_kv_bind(js, bad_names[i], &out));
        EXPECT_FAILS(NATSIO_ERR_INVALID_BUCKET_NAME, natsio_js_kv_delete(js, bad_names[i]));
    }
    EXPECT_FAILS_NAMING(NATSIO_ERR_CONFIG, "KeyValueConfig.history",
                        natsio_js_kv_create(js, "{\"bucket\":\"CFG\",\"history\":65}", NATSIO_CREATE, &out));
    EXPECT_FAILS_NAMING(NATSIO_ERR_CONFIG, "KeyValueConfig.history",
                        natsio_js_kv_create(js, "{\"bucket\":\"CFG\",\"history\":0}", NATSIO_CREATE, &out));
    EXPECT_FAILS_NAMING(NATSIO_ERR_CONFIG, "KeyValueConfig.ttl",
                        natsio_js_kv_create(js, "{\"bucket\":\"CFG\",\"ttl\":\"10ms\"}", NATSIO_CREATE, &out));
    EXPECT_FAILS_NAMING(NATSIO_ERR_CONFIG, "KeyValueConfig.ttl",
                        natsio_js_kv_create(js, "{\"bucket\":\"CFG\",\"ttl\":\"soon\"}", NATSIO_CREATE, &out));
    EXPECT_FAILS_NAMING(NATSIO_ERR_CONFIG, "KeyValueConfig.bucket",
                        natsio_js_kv_create(js, "{\"history\":2}", NATSIO_CREATE, &out));
    EXPECT_FAILS_NAMING(NATSIO_ERR_CONFIG, "KeyValueConfig.storage",
                        natsio_js_kv_create(js, "{\"bucket\":\"CFG\",\"storage\":\"disk\"}", NATSIO_CREATE, &out));
    EXPECT_FAILS_NAMING(NATSIO_ERR_CONFIG, "KeyValueConfig.max_bytes",
                        natsio_js_kv_create(js, "{\"bucket\":\"CFG\",\"max_bytes\":\"lots\"}", NATSIO_CREATE, &out));
    EXPECT_FAILS(NATSIO_ERR_CONFIG, natsio_js_kv_create(js, "not json", NATSIO_CREATE, &out));
    EXPECT_FAILS(NATSIO_ERR_CONFIG, natsio_js_kv_create(js, "[]", NATSIO_UPDATE, &out));
    EXPECT_FAILS(NATSIO_ERR_CONFIG, natsio_js_kv_create(js, "{\"bucket\":7}", NATSIO_CREATE_OR_UPDATE, &out));
    NT_CHECK(out == SENTINEL);
    /* None of them created anything. */
    EXPECT_FAILS(NATSIO_ERR_BUCKET_NOT_FOUND, natsio_js_kv_bind(js, "CFG", &out));
    NT_CHECK(out == SENTINEL);
}

/* ---- values ------------------------------------------------------------------- */

static void test_put_get_and_entry_fields(void) {
    natsio_js *js = connect_js();
    NT_CHECK(js != NULL);
    natsio_kv *kv = create_bucket(js, "{\"bucket\":\"VALS\",\"history\":5,\"storage\":\"memory\"}");
    NT_CHECK(kv != NULL);

    uint64_t r1 = 0, r2 = 0;
    EXPECT_OK(natsio_kv_put(kv, "app.color", "red", 3, NULL, &r1));
    EXPECT_OK(natsio_kv_put(kv, "app.color", "blue", 4, NULL, &r2));
    NT_CHECK(r1 >= 1);
    NT_CHECK_MSG(r2 > r1, "revisions %llu then %llu", (unsigned long long)r1, (unsigned long long)r2);
    EXPECT_OK(natsio_kv_put(kv, "app.size", "10", 2, NULL, NULL)); /* revision not wanted */

    natsio_kv_entry *e = get_entry(kv, "app.color");
    NT_CHECK(e != NULL);
    NT_CHECK_MEM_EQ(natsio_kv_entry_value(e), natsio_kv_entry_value_len(e), "blue", 4);
    NT_CHECK_INT_EQ(natsio_kv_entry_value(e)[4], '\0'); /* usable as a C string */
    NT_CHECK_STR_EQ(natsio_kv_entry_value(e), "blue");
    NT_CHECK_INT_EQ(natsio_kv_entry_revision(e), r2);
    NT_CHECK_INT_EQ(natsio_kv_entry_operation(e), NATSIO_KV_PUT);
    NT_CHECK_STR_EQ(natsio_kv_entry_key(e), "app.color");
    NT_CHECK_STR_EQ(natsio_kv_entry_bucket(e), "VALS");
    NT_CHECK_INT_EQ(natsio_kv_entry_delta(e), 0);
    int64_t age = now_realtime_ns() - natsio_kv_entry_created_ns(e);
    NT_CHECK_MSG(age > -60000000000LL && age < 60000000000LL, "created_ns %lld is not near now",
                 (long long)natsio_kv_entry_created_ns(e));

    /* An older revision, and one that belongs to another key. */
    natsio_kv_entry *old = NULL;
    EXPECT_OK(natsio_kv_get_revision(kv, "app.color", r1, &old));
    nt_cleanup(kv_entry_free_cb, old);
    NT_CHECK_STR_EQ(natsio_kv_entry_value(old), "red");
    NT_CHECK_INT_EQ(natsio_kv_entry_value_len(old), 3);
    NT_CHECK_INT_EQ(natsio_kv_entry_revision(old), r1);
    NT_CHECK_STR_EQ(natsio_kv_entry_key(old), "app.color");
    natsio_kv_entry *out = SENTINEL;
    EXPECT_FAILS(NATSIO_ERR_KEY_NOT_FOUND, natsio_kv_get_revision(kv, "app.size", r1, &out));
    EXPECT_FAILS(NATSIO_ERR_KEY_NOT_FOUND, natsio_kv_get_revision(kv, "app.color", 9999, &out));
    EXPECT_FAILS(NATSIO_ERR_KEY_NOT_FOUND, natsio_kv_get(kv, "app.missing", &out));
    NT_CHECK(out == SENTINEL);

    /* Each get returns a new entry; entries outlive their handle. */
    natsio_kv_entry *e2 = get_entry(kv, "app.color");
    NT_CHECK(e2 != NULL && e2 != e);
    natsio_kv *bound = NULL;
    EXPECT_OK(natsio_js_kv_bind(js, "VALS", &bound));
    natsio_kv_entry *survivor = NULL;
    natsio_status st = natsio_kv_get(bound, "app.size", &survivor);
    natsio_kv_free(bound);
    NT_CHECK_INT_EQ(st, NATSIO_OK);
    nt_cleanup(kv_entry_free_cb, survivor);
    NT_CHECK_STR_EQ(natsio_kv_entry_value(survivor), "10");
    NT_CHECK_STR_EQ(natsio_kv_entry_bucket(survivor), "VALS");
    EXPECT_OK(natsio_js_kv_delete(js, "VALS"));
}

static void test_create_and_compare_and_set(void) {
    natsio_js *js = connect_js();
    NT_CHECK(js != NULL);
    natsio_kv *kv = create_bucket(js, "{\"bucket\":\"CAS\",\"history\":10,\"storage\":\"memory\"}");
    NT_CHECK(kv != NULL);

    uint64_t r1 = 0, r = REV_SENTINEL;
    EXPECT_OK(natsio_kv_create(kv, "k", "first", 5, NULL, &r1));
    EXPECT_FAILS(NATSIO_ERR_KEY_EXISTS, natsio_kv_create(kv, "k", "second", 6, NULL, &r));
    NT_CHECK_INT_EQ(r, REV_SENTINEL);
    natsio_kv_entry *e = get_entry(kv, "k");
    NT_CHECK(e != NULL);
    NT_CHECK_STR_EQ(natsio_kv_entry_value(e), "first");

    /* Compare and set. */
    EXPECT_FAILS(NATSIO_ERR_WRONG_LAST_SEQUENCE, natsio_kv_update(kv, "k", "x", 1, r1 + 100, &r));
    EXPECT_FAILS(NATSIO_ERR_WRONG_LAST_SEQUENCE, natsio_kv_update(kv, "k", "x", 1, 0, &r));
    NT_CHECK_INT_EQ(r, REV_SENTINEL);
    uint64_t r2 = 0;
    EXPECT_OK(natsio_kv_update(kv, "k", "second", 6, r1, &r2));
    NT_CHECK(r2 > r1);
    EXPECT_FAILS(NATSIO_ERR_WRONG_LAST_SEQUENCE, natsio_kv_update(kv, "k", "stale", 5, r1, &r));
    NT_CHECK_INT_EQ(r, REV_SENTINEL);
    e = get_entry(kv, "k");
    NT_CHECK(e != NULL);
    NT_CHECK_STR_EQ(natsio_kv_entry_value(e), "second");
    NT_CHECK_INT_EQ(natsio_kv_entry_revision(e), r2);
    /* The revision a key's CAS checks is its own, not the bucket's. */
    uint64_t other = 0;
    EXPECT_OK(natsio_kv_put(kv, "other", "o", 1, NULL, &other));
    uint64_t r3 = 0;
    EXPECT_OK(natsio_kv_update(kv, "k", "third", 5, r2, &r3));
    NT_CHECK(r3 > other);
    /* Update with last 0 on a key that never existed creates it. */
    uint64_t fresh = 0;
    EXPECT_OK(natsio_kv_update(kv, "fresh", "f", 1, 0, &fresh));
    NT_CHECK(fresh > r3);
    EXPECT_OK(natsio_js_kv_delete(js, "CAS"));
}

static void test_delete_and_purge(void) {
    natsio_js *js = connect_js();
    NT_CHECK(js != NULL);
    natsio_kv *kv = create_bucket(js, "{\"bucket\":\"DEL\",\"history\":10,\"storage\":\"memory\"}");
    NT_CHECK(kv != NULL);
    uint64_t r1 = 0, r2 = 0;
    EXPECT_OK(natsio_kv_put(kv, "k", "v1", 2, NULL, &r1));
    EXPECT_OK(natsio_kv_put(kv, "k", "v2", 2, NULL, &r2));

    /* The delete marker's revision comes back. */
    uint64_t rdel = 0;
    EXPECT_OK(natsio_kv_delete(kv, "k", NULL, &rdel));
    NT_CHECK_INT_EQ(rdel, r2 + 1);
    natsio_kv_entry *out = SENTINEL;
    EXPECT_FAILS(NATSIO_ERR_KEY_DELETED, natsio_kv_get(kv, "k", &out));
    NT_CHECK(out == SENTINEL);
    /* History is kept: the earlier revisions are still there. */
    natsio_kv_entry *old = NULL;
    EXPECT_OK(natsio_kv_get_revision(kv, "k", r1, &old));
    nt_cleanup(kv_entry_free_cb, old);
    NT_CHECK_STR_EQ(natsio_kv_entry_value(old), "v1");
    /* The marker's own revision reads as deleted. */
    EXPECT_FAILS(NATSIO_ERR_KEY_DELETED, natsio_kv_get_revision(kv, "k", r2 + 1, &out));
    NT_CHECK(out == SENTINEL);

    /* A deleted key can be created again. */
    uint64_t r4 = 0;
    EXPECT_OK(natsio_kv_create(kv, "k", "again", 5, NULL, &r4));
    NT_CHECK_INT_EQ(r4, r2 + 2);
    natsio_kv_entry *e = get_entry(kv, "k");
    NT_CHECK(e != NULL);
    NT_CHECK_STR_EQ(natsio_kv_entry_value(e), "again");
    NT_CHECK_INT_EQ(natsio_kv_entry_operation(e), NATSIO_KV_PUT);

    /* Delete and purge guarded by the last revision. */
    uint64_t wrong = r4 - 1;
    uint64_t untouched = REV_SENTINEL;
    EXPECT_FAILS(NATSIO_ERR_WRONG_LAST_SEQUENCE, natsio_kv_delete(kv, "k", &wrong, &untouched));
    EXPECT_FAILS(NATSIO_ERR_WRONG_LAST_SEQUENCE, natsio_kv_purge(kv, "k", &wrong, NULL, &untouched));
    NT_CHECK_INT_EQ(untouched, REV_SENTINEL);
    e = get_entry(kv, "k");
    NT_CHECK(e != NULL);
    NT_CHECK_STR_EQ(natsio_kv_entry_value(e), "again");
    uint64_t rpurge = 0;
    EXPECT_OK(natsio_kv_purge(kv, "k", &r4, NULL, &rpurge));
    NT_CHECK_INT_EQ(rpurge, r4 + 1);
    EXPECT_FAILS(NATSIO_ERR_KEY_DELETED, natsio_kv_get(kv, "k", &out));
    /* The purge marker is the key's latest revision. */
    natsio_kv_entry_list *marker = NULL;
    EXPECT_OK(natsio_kv_history(kv, "k", &marker));
    nt_cleanup(kv_entry_list_free_cb, marker);
    NT_CHECK_INT_EQ(natsio_kv_entry_list_count(marker), 1);
    NT_CHECK_INT_EQ(natsio_kv_entry_revision(natsio_kv_entry_list_get(marker, 0)), rpurge);
    /* Purge removed the older revisions: only the marker is left. */
    EXPECT_FAILS(NATSIO_ERR_KEY_NOT_FOUND, natsio_kv_get_revision(kv, "k", r1, &out));
    EXPECT_FAILS(NATSIO_ERR_KEY_NOT_FOUND, natsio_kv_get_revision(kv, "k", r4, &out));
    NT_CHECK(out == SENTINEL);
    NT_CHECK_INT_EQ(status_int(kv, "\"state\"", "messages"), 1);

    /* Create after purge works too; deleting a key that never existed is fine. */
    EXPECT_OK(natsio_kv_create(kv, "k", "reborn", 6, NULL, NULL));
    EXPECT_OK(natsio_kv_delete(kv, "never", NULL, NULL));
    EXPECT_FAILS(NATSIO_ERR_KEY_DELETED, natsio_kv_get(kv, "never", &out));
    uint64_t zero = 0;
    EXPECT_OK(natsio_kv_purge(kv, "never2", &zero, NULL, NULL));
    EXPECT_OK(natsio_js_kv_delete(js, "DEL"));
}

static void test_binary_empty_and_large_values(void) {
    natsio_js *js = connect_js();
    NT_CHECK(js != NULL);
    natsio_kv *kv = create_bucket(js, "{\"bucket\":\"BIN\",\"storage\":\"memory\"}");
    NT_CHECK(kv != NULL);

    static const char bin[] = {'a', 0, 'b', 0, (char)0xff, 0, 0};
    EXPECT_OK(natsio_kv_put(kv, "bin", bin, sizeof bin, NULL, NULL));
    natsio_kv_entry *e = get_entry(kv, "bin");
    NT_CHECK(e != NULL);
    NT_CHECK_MEM_EQ(natsio_kv_entry_value(e), natsio_kv_entry_value_len(e), bin, sizeof bin);

    /* Empty values: a NULL pointer with length 0, and a real empty string. */
    EXPECT_OK(natsio_kv_put(kv, "empty", NULL, 0, NULL, NULL));
    e = get_entry(kv, "empty");
    NT_CHECK(e != NULL);
    NT_CHECK_INT_EQ(natsio_kv_entry_value_len(e), 0);
    NT_CHECK(natsio_kv_entry_value(e) != NULL);
    NT_CHECK_STR_EQ(natsio_kv_entry_value(e), "");
    NT_CHECK_INT_EQ(natsio_kv_entry_operation(e), NATSIO_KV_PUT); /* not a delete marker */
    EXPECT_OK(natsio_kv_create(kv, "empty2", "", 0, NULL, NULL));
    EXPECT_FAILS(NATSIO_ERR_KEY_EXISTS, natsio_kv_create(kv, "empty2", "x", 1, NULL, NULL));

    /* A large value round-trips byte for byte. */
    size_t n = 256 * 1024;
    unsigned char *big = (unsigned char *)malloc(n);
    NT_CHECK(big != NULL);
    nt_cleanup(free, big);
    for (size_t i = 0; i < n; i++) big[i] = (unsigned char)(i * 31 + 7);
    EXPECT_OK(natsio_kv_put(kv, "big", big, n, NULL, NULL));
    e = get_entry(kv, "big");
    NT_CHECK(e != NULL);
    NT_CHECK_MEM_EQ(natsio_kv_entry_value(e), natsio_kv_entry_value_len(e), big, n);
    NT_CHECK_INT_EQ(natsio_kv_entry_value(e)[n], '\0');

    /* Larger than the bucket's max_value_size: rejected by the server. */
    natsio_kv *small = create_bucket(js, "{\"bucket\":\"BINSMALL\",\"max_value_size\":16,\"storage\":\"memory\"}");
    NT_CHECK(small != NULL);
    EXPECT_OK(natsio_kv_put(small, "k", "0123456789abcdef", 16, NULL, NULL));
    uint64_t r = REV_SENTINEL;
    EXPECT_FAILS(NATSIO_ERR_JS_API, natsio_kv_put(small, "k", "0123456789abcdefg", 17, NULL, &r));
    NT_CHECK_INT_EQ(r, REV_SENTINEL);
    EXPECT_OK(natsio_js_kv_delete(js, "BIN"));
    EXPECT_OK(natsio_js_kv_delete(js, "BINSMALL"));
}

static void test_keys(void) {
    natsio_js *js = connect_js();
    NT_CHECK(js != NULL);
    natsio_kv *kv = create_bucket(js, "{\"bucket\":\"KEYS\",\"storage\":\"memory\"}");
    NT_CHECK(kv != NULL);

    const char *good = "a/b_c-d=e.F9";
    EXPECT_OK(natsio_kv_put(kv, good, "g", 1, NULL, NULL));
    natsio_kv_entry *e = get_entry(kv, good);
    NT_CHECK(e != NULL);
    NT_CHECK_STR_EQ(natsio_kv_entry_key(e), good);

    const char *bad[] = {"", ".a", "a.", "a..b", "a b", "a*", "a>", "a.*", "ü", "a\tb", "$KV"};
    uint64_t r = REV_SENTINEL;
    uint64_t last = 1;
    natsio_kv_entry *out = SENTINEL;
    for (size_t i = 0; i < NT_COUNT(bad); i++) {
        const char *k = bad[i];
        EXPECT_FAILS(NATSIO_ERR_INVALID_KEY, natsio_kv_put(kv, k, "x", 1, NULL, &r));
        EXPECT_FAILS(NATSIO_ERR_INVALID_KEY, natsio_kv_create(kv, k, "x", 1, NULL, &r));
        EXPECT_FAILS(NATSIO_ERR_INVALID_KEY, natsio_kv_update(kv, k, "x", 1, 1, &r));
        EXPECT_FAILS(NATSIO_ERR_INVALID_KEY, natsio_kv_get(kv, k, &out));
        EXPECT_FAILS(NATSIO_ERR_INVALID_KEY, natsio_kv_get_revision(kv, k, 1, &out));
        EXPECT_FAILS(NATSIO_ERR_INVALID_KEY, natsio_kv_delete(kv, k, NULL, &r));
        EXPECT_FAILS(NATSIO_ERR_INVALID_KEY, natsio_kv_purge(kv, k, &last, NULL, &r));
    }
    NT_CHECK_INT_EQ(r, REV_SENTINEL);
    NT_CHECK(out == SENTINEL);
    /* Nothing was written by the rejected calls. */
    NT_CHECK_INT_EQ(status_int(kv, "\"state\"", "messages"), 1);
    EXPECT_OK(natsio_js_kv_delete(js, "KEYS"));
}

/* ---- use after close --------------------------------------------------------- */

static void check_kv_calls_fail_closed(natsio_js *js, natsio_kv *kv) {
    uint64_t r = REV_SENTINEL;
    uint64_t last = 1;
    natsio_kv_entry *e = SENTINEL;
    natsio_kv *k = SENTINEL;
    char *s = SENTINEL_STR;
    EXPECT_FAILS(NATSIO_ERR_CONNECTION_CLOSED, natsio_kv_put(kv, "k", "x", 1, NULL, &r));
    EXPECT_FAILS(NATSIO_ERR_CONNECTION_CLOSED, natsio_kv_create(kv, "k2", "x", 1, NULL, &r));
    EXPECT_FAILS(NATSIO_ERR_CONNECTION_CLOSED, natsio_kv_update(kv, "k", "x", 1, 1, &r));
    EXPECT_FAILS(NATSIO_ERR_CONNECTION_CLOSED, natsio_kv_get(kv, "k", &e));
    EXPECT_FAILS(NATSIO_ERR_CONNECTION_CLOSED, natsio_kv_get_revision(kv, "k", 1, &e));
    EXPECT_FAILS(NATSIO_ERR_CONNECTION_CLOSED, natsio_kv_delete(kv, "k", NULL, &r));
    EXPECT_FAILS(NATSIO_ERR_CONNECTION_CLOSED, natsio_kv_purge(kv, "k", &last, NULL, &r));
    EXPECT_FAILS(NATSIO_ERR_CONNECTION_CLOSED, natsio_kv_status(kv, &s));
    EXPECT_FAILS(NATSIO_ERR_CONNECTION_CLOSED, natsio_kv_create(kv, "k3", "x", 1, ttl_opts(5), &r));
    EXPECT_FAILS(NATSIO_ERR_CONNECTION_CLOSED, natsio_kv_purge(kv, "k", NULL, ttl_opts(5), &r));
    EXPECT_FAILS(NATSIO_ERR_CONNECTION_CLOSED, natsio_kv_purge_deletes(kv, -1, &r));
    natsio_kv_bucket_status *bs = SENTINEL;
    natsio_kv_bucket_status_list *bl = SENTINEL;
    natsio_string_list *names = SENTINEL;
    EXPECT_FAILS(NATSIO_ERR_CONNECTION_CLOSED, natsio_kv_get_status(kv, &bs));
    EXPECT_FAILS(NATSIO_ERR_CONNECTION_CLOSED, natsio_js_kv_names(js, &names));
    EXPECT_FAILS(NATSIO_ERR_CONNECTION_CLOSED, natsio_js_kv_statuses(js, &bl));
    NT_CHECK(bs == SENTINEL && bl == SENTINEL && names == SENTINEL);
    EXPECT_FAILS(NATSIO_ERR_CONNECTION_CLOSED, natsio_js_kv_create(js, "{\"bucket\":\"CLOSED\"}", NATSIO_CREATE, &k));
    EXPECT_FAILS(NATSIO_ERR_CONNECTION_CLOSED, natsio_js_kv_create(js, "{\"bucket\":\"CLOSED\"}", NATSIO_UPDATE, &k));
    EXPECT_FAILS(NATSIO_ERR_CONNECTION_CLOSED, natsio_js_kv_create(js, "{\"bucket\":\"CLOSED\"}",
                                                                   NATSIO_CREATE_OR_UPDATE, &k));
    EXPECT_FAILS(NATSIO_ERR_CONNECTION_CLOSED, natsio_js_kv_bind(js, "CLOSED", &k));
    EXPECT_FAILS(NATSIO_ERR_CONNECTION_CLOSED, natsio_js_kv_delete(js, "CLOSED"));
    NT_CHECK_INT_EQ(r, REV_SENTINEL);
    NT_CHECK(e == SENTINEL && k == SENTINEL && s == SENTINEL_STR);
    /* The handle's name is still readable; argument errors stay argument errors. */
    NT_CHECK_STR_EQ(natsio_kv_bucket(kv), "CLOSED");
    EXPECT_FAILS(NATSIO_ERR_INVALID_KEY, natsio_kv_put(kv, "a b", "x", 1, NULL, NULL));
}

static void test_use_after_client_close_and_free(void) {
    natsio_client *c = NULL;
    EXPECT_OK(natsio_client_connect_url(nt_server_url(g_server), &c));
    natsio_js *js = NULL;
    natsio_kv *kv = NULL;
    natsio_status st = natsio_client_jetstream(c, NULL, &js);
    if (st == NATSIO_OK) st = natsio_js_kv_create(js, "{\"bucket\":\"CLOSED\",\"storage\":\"memory\"}", NATSIO_CREATE,
                                                  &kv);
    if (st == NATSIO_OK) st = natsio_kv_put(kv, "k", "before", 6, NULL, NULL);
    if (st == NATSIO_OK) st = natsio_client_close(c);
    /* Freed at the end of the case, after the client: kv first, then js. */
    nt_cleanup(js_free_cb, js);
    nt_cleanup(kv_free_cb, kv);
    if (st != NATSIO_OK) natsio_client_free(c);
    NT_CHECK_MSG(st == NATSIO_OK, "setup: %s (%s)", natsio_status_str(st), natsio_last_error());

    check_kv_calls_fail_closed(js, kv);
    natsio_client_free(c);
    NT_CHECK(!nt_failed());
    /* The bucket handle does not keep the freed client alive either. */
    check_kv_calls_fail_closed(js, kv);
    NT_CHECK(!nt_failed());

    /* The bucket and its value are still there for another client. */
    natsio_js *other = connect_js();
    NT_CHECK(other != NULL);
    natsio_kv *again = NULL;
    EXPECT_OK(natsio_js_kv_bind(other, "CLOSED", &again));
    nt_cleanup(kv_free_cb, again);
    natsio_kv_entry *e = get_entry(again, "k");
    NT_CHECK(e != NULL);
    NT_CHECK_STR_EQ(natsio_kv_entry_value(e), "before");
    EXPECT_OK(natsio_js_kv_delete(other, "CLOSED"));
}

/* ---- bad input ------------------------------------------------------------------ */

static void test_null_tolerant_getters_and_frees(void) {
    NT_CHECK(natsio_kv_bucket(NULL) == NULL);
    NT_CHECK(natsio_kv_entry_bucket(NULL) == NULL);
    NT_CHECK(natsio_kv_entry_key(NULL) == NULL);
    NT_CHECK(natsio_kv_entry_value(NULL) == NULL);
    NT_CHECK_INT_EQ(natsio_kv_entry_value_len(NULL), 0);
    NT_CHECK_INT_EQ(natsio_kv_entry_revision(NULL), 0);
    NT_CHECK_INT_EQ(natsio_kv_entry_operation(NULL), NATSIO_KV_PUT);
    NT_CHECK_INT_EQ(natsio_kv_entry_created_ns(NULL), 0);
    NT_CHECK_INT_EQ(natsio_kv_entry_delta(NULL), 0);
    NT_CHECK(natsio_kv_bucket_status_bucket(NULL) == NULL);
    NT_CHECK_INT_EQ(natsio_kv_bucket_status_values(NULL), 0);
    NT_CHECK_INT_EQ(natsio_kv_bucket_status_history(NULL), 0);
    NT_CHECK_INT_EQ(natsio_kv_bucket_status_ttl_ns(NULL), 0);
    NT_CHECK_INT_EQ(natsio_kv_bucket_status_bytes(NULL), 0);
    NT_CHECK(natsio_kv_bucket_status_storage(NULL) == NULL);
    NT_CHECK_INT_EQ(natsio_kv_bucket_status_replicas(NULL), 0);
    NT_CHECK(!natsio_kv_bucket_status_is_compressed(NULL));
    NT_CHECK(natsio_kv_bucket_status_description(NULL) == NULL);
    NT_CHECK(natsio_kv_bucket_status_metadata_json(NULL) == NULL);
    NT_CHECK_INT_EQ(natsio_kv_bucket_status_limit_marker_ttl_ns(NULL), 0);
    NT_CHECK(natsio_kv_bucket_status_stream_info_json(NULL) == NULL);
    NT_CHECK_INT_EQ(natsio_kv_bucket_status_list_count(NULL), 0);
    NT_CHECK(natsio_kv_bucket_status_list_get(NULL, 0) == NULL);

    plant_error_marker();
    natsio_kv_free(NULL);
    natsio_kv_entry_free(NULL);
    natsio_kv_bucket_status_free(NULL);
    natsio_kv_bucket_status_list_free(NULL);
    NT_CHECK_MSG(strstr(natsio_last_error(), ERROR_MARKER) != NULL,
                 "a _free(NULL) changed natsio_last_error() to \"%s\"", natsio_last_error());
}

static void test_bad_input_bucket_functions(void) {
    natsio_js *js = connect_js();
    NT_CHECK(js != NULL);
    const char *cfg = "{\"bucket\":\"BADB\",\"storage\":\"memory\"}";
    natsio_kv *kv = SENTINEL;

    EXPECT_NULL_ARG("js", natsio_js_kv_create(NULL, cfg, NATSIO_CREATE, &kv));
    EXPECT_NULL_ARG("config_json", natsio_js_kv_create(js, NULL, NATSIO_CREATE, &kv));
    EXPECT_NULL_ARG("kv_out", natsio_js_kv_create(js, cfg, NATSIO_CREATE, NULL));
    EXPECT_FAILS_NAMING(NATSIO_ERR_INVALID_UTF8, "config_json", natsio_js_kv_create(js, BAD_UTF8, NATSIO_CREATE, &kv));

    EXPECT_NULL_ARG("js", natsio_js_kv_create(NULL, cfg, NATSIO_UPDATE, &kv));
    EXPECT_NULL_ARG("config_json", natsio_js_kv_create(js, NULL, NATSIO_UPDATE, &kv));
    EXPECT_NULL_ARG("kv_out", natsio_js_kv_create(js, cfg, NATSIO_UPDATE, NULL));
    EXPECT_FAILS_NAMING(NATSIO_ERR_INVALID_UTF8, "config_json", natsio_js_kv_create(js, BAD_UTF8, NATSIO_UPDATE, &kv));

    EXPECT_NULL_ARG("js", natsio_js_kv_create(NULL, cfg, NATSIO_CREATE_OR_UPDATE, &kv));
    EXPECT_NULL_ARG("config_json", natsio_js_kv_create(js, NULL, NATSIO_CREATE_OR_UPDATE, &kv));
    EXPECT_NULL_ARG("kv_out", natsio_js_kv_create(js, cfg, NATSIO_CREATE_OR_UPDATE, NULL));
    EXPECT_FAILS_NAMING(NATSIO_ERR_INVALID_UTF8, "config_json",
                        natsio_js_kv_create(js, BAD_UTF8, NATSIO_CREATE_OR_UPDATE, &kv));
    /* An action that is not a natsio_create_action. */
    EXPECT_FAILS_NAMING(NATSIO_ERR_INVALID_ARGUMENT, "action", natsio_js_kv_create(js, cfg, 3, &kv));
    EXPECT_FAILS_NAMING(NATSIO_ERR_INVALID_ARGUMENT, "action", natsio_js_kv_create(js, cfg, INT32_MIN, &kv));

    EXPECT_NULL_ARG("js", natsio_js_kv_bind(NULL, "BADB", &kv));
    EXPECT_NULL_ARG("bucket", natsio_js_kv_bind(js, NULL, &kv));
    EXPECT_NULL_ARG("kv_out", natsio_js_kv_bind(js, "BADB", NULL));
    EXPECT_FAILS_NAMING(NATSIO_ERR_INVALID_UTF8, "bucket", natsio_js_kv_bind(js, BAD_UTF8, &kv));

    EXPECT_NULL_ARG("js", natsio_js_kv_delete(NULL, "BADB"));
    EXPECT_NULL_ARG("bucket", natsio_js_kv_delete(js, NULL));
    EXPECT_FAILS_NAMING(NATSIO_ERR_INVALID_UTF8, "bucket", natsio_js_kv_delete(js, BAD_UTF8));
    NT_CHECK(kv == SENTINEL);

    natsio_string_list *names = SENTINEL;
    natsio_kv_bucket_status_list *statuses = SENTINEL;
    natsio_token *t = SENTINEL;
    EXPECT_NULL_ARG("js", natsio_js_kv_names(NULL, &names));
    EXPECT_NULL_ARG("list_out", natsio_js_kv_names(js, NULL));
    EXPECT_NULL_ARG("js", natsio_js_kv_names_async(NULL, &t));
    EXPECT_NULL_ARG("token_out", natsio_js_kv_names_async(js, NULL));
    EXPECT_NULL_ARG("js", natsio_js_kv_statuses(NULL, &statuses));
    EXPECT_NULL_ARG("list_out", natsio_js_kv_statuses(js, NULL));
    EXPECT_NULL_ARG("js", natsio_js_kv_statuses_async(NULL, &t));
    EXPECT_NULL_ARG("token_out", natsio_js_kv_statuses_async(js, NULL));
    NT_CHECK(names == SENTINEL && statuses == SENTINEL && t == SENTINEL);
    /* No bucket came of it. */
    EXPECT_FAILS(NATSIO_ERR_BUCKET_NOT_FOUND, natsio_js_kv_bind(js, "BADB", &kv));
    NT_CHECK(kv == SENTINEL);
}

static void test_bad_input_key_value_functions(void) {
    natsio_js *js = connect_js();
    NT_CHECK(js != NULL);
    natsio_kv *kv = create_bucket(js, "{\"bucket\":\"BADKV\",\"history\":5,\"storage\":\"memory\"}");
    NT_CHECK(kv != NULL);
    uint64_t rev = 0;
    EXPECT_OK(natsio_kv_put(kv, "k", "kept", 4, NULL, &rev));
    uint64_t r = REV_SENTINEL;
    natsio_kv_entry *e = SENTINEL;
    char *s = SENTINEL_STR;

    EXPECT_NULL_ARG("kv", natsio_kv_put(NULL, "k", "x", 1, NULL, &r));
    EXPECT_NULL_ARG("key", natsio_kv_put(kv, NULL, "x", 1, NULL, &r));
    EXPECT_NULL_ARG("value", natsio_kv_put(kv, "k", NULL, 1, NULL, &r));
    EXPECT_FAILS_NAMING(NATSIO_ERR_INVALID_UTF8, "key", natsio_kv_put(kv, BAD_UTF8, "x", 1, NULL, &r));

    EXPECT_NULL_ARG("kv", natsio_kv_create(NULL, "n", "x", 1, NULL, &r));
    EXPECT_NULL_ARG("key", natsio_kv_create(kv, NULL, "x", 1, NULL, &r));
    EXPECT_NULL_ARG("value", natsio_kv_create(kv, "n", NULL, 1, NULL, &r));
    EXPECT_FAILS_NAMING(NATSIO_ERR_INVALID_UTF8, "key", natsio_kv_create(kv, BAD_UTF8, "x", 1, NULL, &r));

    EXPECT_NULL_ARG("kv", natsio_kv_update(NULL, "k", "x", 1, rev, &r));
    EXPECT_NULL_ARG("key", natsio_kv_update(kv, NULL, "x", 1, rev, &r));
    EXPECT_NULL_ARG("value", natsio_kv_update(kv, "k", NULL, 1, rev, &r));
    EXPECT_FAILS_NAMING(NATSIO_ERR_INVALID_UTF8, "key", natsio_kv_update(kv, BAD_UTF8, "x", 1, rev, &r));
    NT_CHECK_INT_EQ(r, REV_SENTINEL);

    EXPECT_NULL_ARG("kv", natsio_kv_get(NULL, "k", &e));
    EXPECT_NULL_ARG("key", natsio_kv_get(kv, NULL, &e));
    EXPECT_NULL_ARG("entry_out", natsio_kv_get(kv, "k", NULL));
    EXPECT_FAILS_NAMING(NATSIO_ERR_INVALID_UTF8, "key", natsio_kv_get(kv, BAD_UTF8, &e));
    EXPECT_NULL_ARG("kv", natsio_kv_get_revision(NULL, "k", rev, &e));
    EXPECT_NULL_ARG("key", natsio_kv_get_revision(kv, NULL, rev, &e));
    EXPECT_NULL_ARG("entry_out", natsio_kv_get_revision(kv, "k", rev, NULL));
    EXPECT_FAILS_NAMING(NATSIO_ERR_INVALID_UTF8, "key", natsio_kv_get_revision(kv, BAD_UTF8, rev, &e));
    NT_CHECK(e == SENTINEL);

    EXPECT_NULL_ARG("kv", natsio_kv_delete(NULL, "k", NULL, NULL));
    EXPECT_NULL_ARG("key", natsio_kv_delete(kv, NULL, NULL, NULL));
    EXPECT_FAILS_NAMING(NATSIO_ERR_INVALID_UTF8, "key", natsio_kv_delete(kv, BAD_UTF8, NULL, NULL));
    EXPECT_NULL_ARG("kv", natsio_kv_purge(NULL, "k", NULL, NULL, NULL));
    EXPECT_NULL_ARG("key", natsio_kv_purge(kv, NULL, NULL, NULL, NULL));
    EXPECT_FAILS_NAMING(NATSIO_ERR_INVALID_UTF8, "key", natsio_kv_purge(kv, BAD_UTF8, NULL, NULL, NULL));

    EXPECT_NULL_ARG("kv", natsio_kv_status(NULL, &s));
    EXPECT_NULL_ARG("json_out", natsio_kv_status(kv, NULL));
    NT_CHECK(s == SENTINEL_STR);

    /* Per-key TTL: the arguments are checked before anything is sent (the
     * bucket has no limit_marker_ttl, so a write that got through would
     * fail on the server instead). */
    natsio_token *t = SENTINEL;
    EXPECT_NULL_ARG("kv", natsio_kv_create(NULL, "n", "x", 1, ttl_opts(5), &r));
    EXPECT_NULL_ARG("key", natsio_kv_create(kv, NULL, "x", 1, ttl_opts(5), &r));
    EXPECT_NULL_ARG("value", natsio_kv_create(kv, "n", NULL, 1, ttl_opts(5), &r));
    EXPECT_FAILS_NAMING(NATSIO_ERR_INVALID_UTF8, "key", natsio_kv_create(kv, BAD_UTF8, "x", 1, ttl_opts(5), &r));
    EXPECT_FAILS(NATSIO_ERR_INVALID_KEY, natsio_kv_create(kv, "a..b", "x", 1, ttl_opts(5), &r));
    EXPECT_FAILS_NAMING(NATSIO_ERR_INVALID_ARGUMENT, "ttl_s", natsio_kv_create(kv, "n", "x", 1, ttl_opts(-2), &r));
    EXPECT_FAILS_NAMING(NATSIO_ERR_INVALID_ARGUMENT, "ttl_s", natsio_kv_create(kv, "n", "x", 1, ttl_opts(-5), &r));
    EXPECT_FAILS_NAMING(NATSIO_ERR_INVALID_ARGUMENT, "ttl_s", natsio_kv_put(kv, "n", "x", 1, ttl_opts(-5), &r));
    EXPECT_FAILS_NAMING(NATSIO_ERR_INVALID_ARGUMENT, "ttl_s", natsio_kv_put_async(kv, "n", "x", 1, ttl_opts(-5), &t));
    /* An options struct that was never initialised (version 0). */
    natsio_kv_write_options uninit;
    memset(&uninit, 0, sizeof uninit);
    uninit.ttl_s = 5;
    EXPECT_FAILS(NATSIO_ERR_INVALID_ARGUMENT, natsio_kv_put(kv, "n", "x", 1, &uninit, &r));
    EXPECT_FAILS(NATSIO_ERR_INVALID_ARGUMENT, natsio_kv_purge(kv, "n", NULL, &uninit, &r));
    EXPECT_NULL_ARG("opts", natsio_kv_write_options_init(NULL));
    EXPECT_FAILS_NAMING(NATSIO_ERR_INVALID_ARGUMENT, "ttl_s",
                        natsio_kv_create(kv, "n", "x", 1, ttl_opts(INT64_MIN), &r));
    EXPECT_NULL_ARG("kv", natsio_kv_create_async(NULL, "n", "x", 1, ttl_opts(5), &t));
    EXPECT_NULL_ARG("token_out", natsio_kv_create_async(kv, "n", "x", 1, ttl_opts(5), NULL));
    EXPECT_FAILS_NAMING(NATSIO_ERR_INVALID_ARGUMENT, "ttl_s", natsio_kv_create_async(kv, "n", "x", 1, ttl_opts(-3), &t));
    EXPECT_NULL_ARG("kv", natsio_kv_purge(NULL, "k", NULL, ttl_opts(5), &r));
    EXPECT_NULL_ARG("key", natsio_kv_purge(kv, NULL, NULL, ttl_opts(5), &r));
    EXPECT_FAILS_NAMING(NATSIO_ERR_INVALID_UTF8, "key", natsio_kv_purge(kv, BAD_UTF8, NULL, ttl_opts(5), &r));
    EXPECT_FAILS_NAMING(NATSIO_ERR_INVALID_ARGUMENT, "ttl_s", natsio_kv_purge(kv, "k", NULL, ttl_opts(-2), &r));
    EXPECT_FAILS_NAMING(NATSIO_ERR_INVALID_ARGUMENT, "ttl_s", natsio_kv_purge(kv, "k", &rev, ttl_opts(-7), &r));
    EXPECT_NULL_ARG("kv", natsio_kv_purge_async(NULL, "k", NULL, ttl_opts(5), &t));
    EXPECT_NULL_ARG("token_out", natsio_kv_purge_async(kv, "k", NULL, ttl_opts(5), NULL));
    EXPECT_NULL_ARG("kv", natsio_kv_purge_deletes(NULL, 0, &r));
    EXPECT_NULL_ARG("kv", natsio_kv_purge_deletes_async(NULL, 0, &t));
    EXPECT_NULL_ARG("token_out", natsio_kv_purge_deletes_async(kv, 0, NULL));
    NT_CHECK_INT_EQ(r, REV_SENTINEL);
    natsio_kv_bucket_status *bs = SENTINEL;
    EXPECT_NULL_ARG("kv", natsio_kv_get_status(NULL, &bs));
    EXPECT_NULL_ARG("status_out", natsio_kv_get_status(kv, NULL));
    EXPECT_NULL_ARG("kv", natsio_kv_get_status_async(NULL, &t));
    EXPECT_NULL_ARG("token_out", natsio_kv_get_status_async(kv, NULL));
    NT_CHECK(bs == SENTINEL && t == SENTINEL);
    /* A token of another kind is no status. */
    natsio_token *put_t = NULL;
    EXPECT_OK(natsio_kv_put_async(kv, "other", "x", 1, NULL, &put_t));
    nt_cleanup(token_free_cb, put_t);
    NT_CHECK_INT_EQ(token_outcome(put_t, 10000), NATSIO_OK);
    EXPECT_FAILS(NATSIO_ERR_ILLEGAL_STATE, natsio_token_kv_bucket_status(put_t, &bs));
    natsio_kv_bucket_status_list *bl = SENTINEL;
    EXPECT_FAILS(NATSIO_ERR_ILLEGAL_STATE, natsio_token_kv_bucket_status_list(put_t, &bl));
    EXPECT_NULL_ARG("status_out", natsio_token_kv_bucket_status(put_t, NULL));
    NT_CHECK(bs == SENTINEL && bl == SENTINEL);
    EXPECT_OK(natsio_kv_delete(kv, "other", NULL, NULL));

    /* The key is untouched by all of that. */
    natsio_kv_entry *got = get_entry(kv, "k");
    NT_CHECK(got != NULL);
    NT_CHECK_STR_EQ(natsio_kv_entry_value(got), "kept");
    NT_CHECK_INT_EQ(natsio_kv_entry_revision(got), rev);
    NT_CHECK_INT_EQ(status_int(kv, "\"state\"", "messages"), 3);
    EXPECT_OK(natsio_js_kv_delete(js, "BADKV"));
}

/* ---- keys and history ---------------------------------------------------------- */

/* natsio_kv_keys, freed when the case ends (NULL on failure). */
static natsio_string_list *keys_of(natsio_kv *kv) {
    natsio_string_list *keys = NULL;
    natsio_status st = natsio_kv_keys(kv, &keys);
    if (st != NATSIO_OK) {
        nt_fail_at(__FILE__, __LINE__, "keys: %s (%s)", natsio_status_str(st), natsio_last_error());
        return NULL;
    }
    return kept_list(keys);
}

/* The keys joined with ',' (for failure messages). */
static const char *joined(const natsio_string_list *keys) {
    static char buf[8192];
    return string_list_join(keys, buf, sizeof buf);
}

/* natsio_kv_history, freed when the case ends (NULL on failure). */
static natsio_kv_entry_list *history_of(natsio_kv *kv, const char *key) {
    natsio_kv_entry_list *list = NULL;
    natsio_status st = natsio_kv_history(kv, key, &list);
    if (st != NATSIO_OK) {
        nt_fail_at(__FILE__, __LINE__, "history %s: %s (%s)", key, natsio_status_str(st), natsio_last_error());
        return NULL;
    }
    nt_cleanup(kv_entry_list_free_cb, list);
    return list;
}

/* The consumers of a bucket's stream: a scan must leave none behind. */
static bool no_consumers_left(natsio_js *js, const char *stream) {
    natsio_string_list *names = NULL;
    if (natsio_js_consumer_names(js, stream, &names) != NATSIO_OK) return false;
    bool none = natsio_string_list_count(names) == 0;
    if (!none) fprintf(stderr, "consumers left on %s: %s\n", stream, joined(names));
    natsio_string_list_free(names);
    return none;
}

static void test_keys_lists_live_keys(void) {
    natsio_js *js = connect_js();
    NT_CHECK(js != NULL);
    natsio_kv *kv = create_bucket(js, "{\"bucket\":\"KEYLIST\",\"history\":5,\"storage\":\"memory\"}");
    NT_CHECK(kv != NULL);
    natsio_string_list *empty = keys_of(kv);
    NT_CHECK(empty != NULL);
    NT_CHECK_INT_EQ(natsio_string_list_count(empty), 0);
    NT_CHECK(natsio_string_list_get(empty, 0) == NULL);

    for (int i = 0; i < 3; i++) EXPECT_OK(natsio_kv_put(kv, "a", "v", 1, NULL, NULL)); /* listed once */
    EXPECT_OK(natsio_kv_put(kv, "b.c", "x", 1, NULL, NULL));
    EXPECT_OK(natsio_kv_put(kv, "gone", "x", 1, NULL, NULL));
    EXPECT_OK(natsio_kv_delete(kv, "gone", NULL, NULL));
    EXPECT_OK(natsio_kv_put(kv, "purged", "x", 1, NULL, NULL));
    EXPECT_OK(natsio_kv_purge(kv, "purged", NULL, NULL, NULL));
    EXPECT_OK(natsio_kv_put(kv, "empty", NULL, 0, NULL, NULL)); /* an empty value is a value */
    natsio_string_list *keys = keys_of(kv);
    NT_CHECK(keys != NULL);
    NT_CHECK_MSG(natsio_string_list_count(keys) == 3, "%s", joined(keys));
    NT_CHECK_MSG(string_list_has(keys, "a") && string_list_has(keys, "b.c") && string_list_has(keys, "empty"), "%s",
                 joined(keys));
    NT_CHECK_MSG(!string_list_has(keys, "gone") && !string_list_has(keys, "purged"), "%s", joined(keys));
    NT_CHECK(natsio_string_list_get(keys, 3) == NULL);

    /* A deleted key that gets a value again is back. */
    EXPECT_OK(natsio_kv_put(kv, "gone", "again", 5, NULL, NULL));
    natsio_string_list *back = keys_of(kv);
    NT_CHECK(back != NULL);
    NT_CHECK_MSG(natsio_string_list_count(back) == 4 && string_list_has(back, "gone"), "%s", joined(back));

    /* More keys than one batch of the scan (256). */
    enum { MANY = 300 };
    for (int i = 0; i < MANY; i++) {
        char key[32];
        snprintf(key, sizeof key, "many.%d", i);
        natsio_status st = natsio_kv_put(kv, key, "m", 1, NULL, NULL);
        NT_CHECK_MSG(st == NATSIO_OK, "put %s: %s", key, natsio_status_str(st));
    }
    natsio_string_list *all = keys_of(kv);
    NT_CHECK(all != NULL);
    NT_CHECK_MSG(natsio_string_list_count(all) == MANY + 4, "%zu keys", natsio_string_list_count(all));
    for (int i = 0; i < MANY; i++) {
        char key[32];
        snprintf(key, sizeof key, "many.%d", i);
        NT_CHECK_MSG(string_list_has(all, key), "%s is missing", key);
    }
    NT_CHECK(string_list_has(all, "a") && string_list_has(all, "gone") && !string_list_has(all, "purged"));
    /* Deleting some of them (across both batches) leaves them out. */
    EXPECT_OK(natsio_kv_delete(kv, "many.0", NULL, NULL));
    EXPECT_OK(natsio_kv_purge(kv, "many.299", NULL, NULL, NULL));
    natsio_string_list *fewer = keys_of(kv);
    NT_CHECK(fewer != NULL);
    NT_CHECK_MSG(natsio_string_list_count(fewer) == MANY + 2, "%zu keys", natsio_string_list_count(fewer));
    NT_CHECK(!string_list_has(fewer, "many.0") && !string_list_has(fewer, "many.299") &&
             string_list_has(fewer, "many.1"));
    /* The scans left no consumers behind. */
    NT_CHECK(no_consumers_left(js, "KV_KEYLIST"));
    EXPECT_OK(natsio_js_kv_delete(js, "KEYLIST"));
}

static void test_history_revisions_markers_and_limits(void) {
    natsio_js *js = connect_js();
    NT_CHECK(js != NULL);
    natsio_kv *kv = create_bucket(js, "{\"bucket\":\"HIST\",\"history\":10,\"storage\":\"memory\"}");
    NT_CHECK(kv != NULL);
    natsio_kv_entry_list *out = SENTINEL;
    EXPECT_FAILS(NATSIO_ERR_KEY_NOT_FOUND, natsio_kv_history(kv, "a", &out));
    const char *bad[] = {"", "a b", "a.*", "a.>", ".a", "a..b", "ü"};
    for (size_t i = 0; i < NT_COUNT(bad); i++)
        EXPECT_FAILS(NATSIO_ERR_INVALID_KEY, natsio_kv_history(kv, bad[i], &out));
    NT_CHECK(out == SENTINEL);

    /* Three values of "a", with other keys (one below it) in between. */
    int64_t start_ns = now_realtime_ns();
    uint64_t revs[3];
    for (int i = 0; i < 3; i++) {
        char v[8];
        int len = snprintf(v, sizeof v, "a%d", i);
        EXPECT_OK(natsio_kv_put(kv, "a", v, (size_t)len, NULL, &revs[i]));
        EXPECT_OK(natsio_kv_put(kv, "a.x", "other", 5, NULL, NULL));
        EXPECT_OK(natsio_kv_put(kv, "b", "other", 5, NULL, NULL));
    }
    natsio_kv_entry_list *h = history_of(kv, "a");
    NT_CHECK(h != NULL);
    NT_CHECK_INT_EQ(natsio_kv_entry_list_count(h), 3);
    for (size_t i = 0; i < 3; i++) {
        const natsio_kv_entry *e = natsio_kv_entry_list_get(h, i);
        NT_CHECK(e != NULL);
        char want[8];
        snprintf(want, sizeof want, "a%zu", i);
        NT_CHECK_MEM_EQ(natsio_kv_entry_value(e), natsio_kv_entry_value_len(e), want, strlen(want));
        NT_CHECK_STR_EQ(natsio_kv_entry_key(e), "a");
        NT_CHECK_STR_EQ(natsio_kv_entry_bucket(e), "HIST");
        NT_CHECK_INT_EQ(natsio_kv_entry_revision(e), revs[i]);
        NT_CHECK_INT_EQ(natsio_kv_entry_operation(e), NATSIO_KV_PUT);
        NT_CHECK_INT_EQ(natsio_kv_entry_delta(e), 2 - i);
        int64_t created = natsio_kv_entry_created_ns(e);
        NT_CHECK_MSG(created > start_ns - 30000000000LL && created < now_realtime_ns() + 30000000000LL,
                     "created_ns %lld is not near now", (long long)created);
    }
    NT_CHECK(natsio_kv_entry_list_get(h, 3) == NULL);
    NT_CHECK(natsio_kv_entry_list_get(h, SIZE_MAX) == NULL);
    /* The latest agrees with get. */
    natsio_kv_entry *latest = get_entry(kv, "a");
    NT_CHECK(latest != NULL);
    NT_CHECK_INT_EQ(natsio_kv_entry_revision(latest), natsio_kv_entry_revision(natsio_kv_entry_list_get(h, 2)));

    /* A delete marker ends the history: empty, delta 0; get no longer
     * finds the key, history still does. */
    EXPECT_OK(natsio_kv_delete(kv, "a", NULL, NULL));
    natsio_kv_entry_list *d = history_of(kv, "a");
    NT_CHECK(d != NULL);
    NT_CHECK_INT_EQ(natsio_kv_entry_list_count(d), 4);
    const natsio_kv_entry *marker = natsio_kv_entry_list_get(d, 3);
    NT_CHECK_INT_EQ(natsio_kv_entry_operation(marker), NATSIO_KV_DEL);
    NT_CHECK_INT_EQ(natsio_kv_entry_value_len(marker), 0);
    NT_CHECK_INT_EQ(natsio_kv_entry_delta(marker), 0);
    NT_CHECK_INT_EQ(natsio_kv_entry_delta(natsio_kv_entry_list_get(d, 0)), 3);
    NT_CHECK(natsio_kv_entry_revision(marker) > revs[2]);
    natsio_kv_entry *e = SENTINEL;
    EXPECT_FAILS(NATSIO_ERR_KEY_DELETED, natsio_kv_get(kv, "a", &e));
    NT_CHECK(e == SENTINEL);
    /* The earlier list is unaffected (it holds its own entries). */
    NT_CHECK_INT_EQ(natsio_kv_entry_list_count(h), 3);
    NT_CHECK_MEM_EQ(natsio_kv_entry_value(natsio_kv_entry_list_get(h, 0)),
                    natsio_kv_entry_value_len(natsio_kv_entry_list_get(h, 0)), "a0", 2);

    /* A purge leaves only its marker. */
    EXPECT_OK(natsio_kv_purge(kv, "a", NULL, NULL, NULL));
    natsio_kv_entry_list *p = history_of(kv, "a");
    NT_CHECK(p != NULL);
    NT_CHECK_INT_EQ(natsio_kv_entry_list_count(p), 1);
    NT_CHECK_INT_EQ(natsio_kv_entry_operation(natsio_kv_entry_list_get(p, 0)), NATSIO_KV_PURGE);
    NT_CHECK_INT_EQ(natsio_kv_entry_delta(natsio_kv_entry_list_get(p, 0)), 0);
    /* The other keys kept theirs. */
    natsio_kv_entry_list *b = history_of(kv, "b");
    NT_CHECK(b != NULL);
    NT_CHECK_INT_EQ(natsio_kv_entry_list_count(b), 3);
    natsio_kv_entry_list *ax = history_of(kv, "a.x");
    NT_CHECK(ax != NULL);
    NT_CHECK_INT_EQ(natsio_kv_entry_list_count(ax), 3);
    NT_CHECK_STR_EQ(natsio_kv_entry_key(natsio_kv_entry_list_get(ax, 1)), "a.x");

    /* The bucket's history setting bounds what is kept: the newest two. */
    natsio_kv *two = create_bucket(js, "{\"bucket\":\"HIST2\",\"history\":2,\"storage\":\"memory\"}");
    NT_CHECK(two != NULL);
    for (int i = 0; i < 5; i++) {
        char v[8];
        int len = snprintf(v, sizeof v, "v%d", i);
        EXPECT_OK(natsio_kv_put(two, "k", v, (size_t)len, NULL, NULL));
    }
    natsio_kv_entry_list *kept2 = history_of(two, "k");
    NT_CHECK(kept2 != NULL);
    NT_CHECK_INT_EQ(natsio_kv_entry_list_count(kept2), 2);
    const natsio_kv_entry *k0 = natsio_kv_entry_list_get(kept2, 0);
    const natsio_kv_entry *k1 = natsio_kv_entry_list_get(kept2, 1);
    NT_CHECK_MEM_EQ(natsio_kv_entry_value(k0), natsio_kv_entry_value_len(k0), "v3", 2);
    NT_CHECK_MEM_EQ(natsio_kv_entry_value(k1), natsio_kv_entry_value_len(k1), "v4", 2);
    NT_CHECK_INT_EQ(natsio_kv_entry_revision(k0), 4);
    NT_CHECK_INT_EQ(natsio_kv_entry_revision(k1), 5);
    NT_CHECK_INT_EQ(natsio_kv_entry_delta(k0), 1);

    NT_CHECK(no_consumers_left(js, "KV_HIST"));
    NT_CHECK(no_consumers_left(js, "KV_HIST2"));
    EXPECT_OK(natsio_js_kv_delete(js, "HIST"));
    EXPECT_OK(natsio_js_kv_delete(js, "HIST2"));
}

static void check_keys_history_fail_closed(natsio_kv *kv) {
    natsio_string_list *s = SENTINEL;
    natsio_kv_entry_list *l = SENTINEL;
    EXPECT_FAILS(NATSIO_ERR_CONNECTION_CLOSED, natsio_kv_keys(kv, &s));
    EXPECT_FAILS(NATSIO_ERR_CONNECTION_CLOSED, natsio_kv_history(kv, "k", &l));
    NT_CHECK(s == SENTINEL && l == SENTINEL);
    EXPECT_FAILS(NATSIO_ERR_INVALID_KEY, natsio_kv_history(kv, "a b", &l));
    NT_CHECK(l == SENTINEL);
}

static void test_keys_and_history_after_client_close_and_free(void) {
    natsio_client *c = NULL;
    EXPECT_OK(natsio_client_connect_url(nt_server_url(g_server), &c));
    natsio_js *js = NULL;
    natsio_kv *kv = NULL;
    natsio_kv_entry_list *before = NULL;
    natsio_status st = natsio_client_jetstream(c, NULL, &js);
    if (st == NATSIO_OK) st = natsio_js_kv_create(js, "{\"bucket\":\"KHCLOSED\",\"storage\":\"memory\"}", NATSIO_CREATE,
                                                  &kv);
    if (st == NATSIO_OK) st = natsio_kv_put(kv, "k", "before", 6, NULL, NULL);
    if (st == NATSIO_OK) st = natsio_kv_history(kv, "k", &before);
    if (st == NATSIO_OK) st = natsio_client_close(c);
    nt_cleanup(js_free_cb, js);
    nt_cleanup(kv_free_cb, kv);
    nt_cleanup(kv_entry_list_free_cb, before);
    if (st != NATSIO_OK) natsio_client_free(c);
    NT_CHECK_MSG(st == NATSIO_OK, "setup: %s (%s)", natsio_status_str(st), natsio_last_error());

    check_keys_history_fail_closed(kv);
    natsio_client_free(c);
    NT_CHECK(!nt_failed());
    check_keys_history_fail_closed(kv);
    NT_CHECK(!nt_failed());
    /* A list read before stays readable. */
    NT_CHECK_INT_EQ(natsio_kv_entry_list_count(before), 1);
    NT_CHECK_STR_EQ(natsio_kv_entry_value(natsio_kv_entry_list_get(before, 0)), "before");

    natsio_js *other = connect_js();
    NT_CHECK(other != NULL);
    EXPECT_OK(natsio_js_kv_delete(other, "KHCLOSED"));
}

static void test_bad_input_keys_and_history(void) {
    NT_CHECK_INT_EQ(natsio_kv_entry_list_count(NULL), 0);
    NT_CHECK(natsio_kv_entry_list_get(NULL, 0) == NULL);
    plant_error_marker();
    natsio_kv_entry_list_free(NULL);
    NT_CHECK_MSG(strstr(natsio_last_error(), ERROR_MARKER) != NULL,
                 "natsio_kv_entry_list_free(NULL) changed natsio_last_error() to \"%s\"", natsio_last_error());

    natsio_js *js = connect_js();
    NT_CHECK(js != NULL);
    natsio_kv *kv = create_bucket(js, "{\"bucket\":\"BADKH\",\"storage\":\"memory\"}");
    NT_CHECK(kv != NULL);
    EXPECT_OK(natsio_kv_put(kv, "k", "kept", 4, NULL, NULL));
    natsio_string_list *s = SENTINEL;
    natsio_kv_entry_list *l = SENTINEL;
    EXPECT_NULL_ARG("kv", natsio_kv_keys(NULL, &s));
    EXPECT_NULL_ARG("list_out", natsio_kv_keys(kv, NULL));
    EXPECT_NULL_ARG("kv", natsio_kv_history(NULL, "k", &l));
    EXPECT_NULL_ARG("key", natsio_kv_history(kv, NULL, &l));
    EXPECT_NULL_ARG("list_out", natsio_kv_history(kv, "k", NULL));
    EXPECT_FAILS_NAMING(NATSIO_ERR_INVALID_UTF8, "key", natsio_kv_history(kv, BAD_UTF8, &l));
    NT_CHECK(s == SENTINEL && l == SENTINEL);
    /* Nothing changed, and the rejected calls left no consumers. */
    natsio_string_list *keys = keys_of(kv);
    NT_CHECK(keys != NULL);
    NT_CHECK_INT_EQ(natsio_string_list_count(keys), 1);
    NT_CHECK_STR_EQ(natsio_string_list_get(keys, 0), "k");
    NT_CHECK(no_consumers_left(js, "KV_BADKH"));
    EXPECT_OK(natsio_js_kv_delete(js, "BADKH"));
}

/* ---- keys with filters, and as an iterator --------------------------------- */

/* natsio_kv_keys_filtered, freed when the case ends (NULL on failure). */
static natsio_string_list *keys_matching(natsio_kv *kv, const char *const *filters, size_t n) {
    natsio_string_list *keys = NULL;
    natsio_status st = natsio_kv_keys_filtered(kv, filters, n, &keys);
    if (st != NATSIO_OK) {
        nt_fail_at(__FILE__, __LINE__, "keys_filtered: %s (%s)", natsio_status_str(st), natsio_last_error());
        return NULL;
    }
    return kept_list(keys);
}

static void key_lister_free_cb(void *l) { natsio_kv_key_lister_free((natsio_kv_key_lister *)l); }

/* Reads a lister to its end: the number of keys (each checked to be
 * "k.<i>" with i < cap, seen at most once in `seen`), and the ending
 * status through *end. */
static size_t drain_lister(natsio_kv_key_lister *l, unsigned char *seen, size_t cap, natsio_status *end) {
    size_t n = 0;
    for (;;) {
        char *key = SENTINEL_STR;
        natsio_status st = natsio_kv_key_lister_next(l, 10000, &key);
        if (st != NATSIO_OK) {
            *end = st;
            if (key != NULL) nt_fail_at(__FILE__, __LINE__, "key_out not NULL at the end");
            return n;
        }
        unsigned long i = 0;
        if (seen && (sscanf(key, "k.%lu", &i) != 1 || i >= cap || seen[i]++)) {
            nt_fail_at(__FILE__, __LINE__, "unexpected or repeated key %s", key);
        }
        natsio_string_free(key);
        n++;
    }
}

static void test_keys_filtered_lists_matching_live_keys(void) {
    natsio_js *js = connect_js();
    NT_CHECK(js != NULL);
    natsio_kv *kv = create_bucket(js, "{\"bucket\":\"KEYSFILT\",\"history\":3,\"storage\":\"memory\"}");
    NT_CHECK(kv != NULL);
    static const char *const star[] = {"app.*"};
    natsio_string_list *none = keys_matching(kv, star, 1);
    NT_CHECK(none != NULL);
    NT_CHECK_INT_EQ(natsio_string_list_count(none), 0); /* an empty bucket */

    static const char *const puts[] = {"app.a", "app.b", "app.b.deep", "app.gone", "users.x.name", "users.y.mail",
                                       "other", "app.purged"};
    for (size_t i = 0; i < sizeof puts / sizeof puts[0]; i++) EXPECT_OK(natsio_kv_put(kv, puts[i], "v", 1, NULL, NULL));
    EXPECT_OK(natsio_kv_put(kv, "app.a", "again", 5, NULL, NULL)); /* listed once */
    EXPECT_OK(natsio_kv_delete(kv, "app.gone", NULL, NULL));
    EXPECT_OK(natsio_kv_purge(kv, "app.purged", NULL, NULL, NULL));

    /* `*`: one whole token; deleted and purged keys are left out. */
    natsio_string_list *apps = keys_matching(kv, star, 1);
    NT_CHECK(apps != NULL);
    NT_CHECK_MSG(natsio_string_list_count(apps) == 2 && string_list_has(apps, "app.a") &&
                     string_list_has(apps, "app.b"),
                 "%s", joined(apps));
    /* `>`: the rest. */
    static const char *const users[] = {"users.>"};
    natsio_string_list *u = keys_matching(kv, users, 1);
    NT_CHECK(u != NULL);
    NT_CHECK_MSG(natsio_string_list_count(u) == 2 && string_list_has(u, "users.x.name") &&
                     string_list_has(u, "users.y.mail"),
                 "%s", joined(u));
    /* Several filters, one of them an exact key, one given twice. */
    static const char *const several[] = {"app.*.deep", "users.*.mail", "other", "other", "nothing.*"};
    natsio_string_list *sev = keys_matching(kv, several, 5);
    NT_CHECK(sev != NULL);
    NT_CHECK_MSG(natsio_string_list_count(sev) == 3 && string_list_has(sev, "app.b.deep") &&
                     string_list_has(sev, "users.y.mail") && string_list_has(sev, "other"),
                 "%s", joined(sev));
    /* No filters, and ">": every live key, as natsio_kv_keys. */
    natsio_string_list *all = keys_matching(kv, NULL, 0);
    static const char *const gt[] = {">"};
    natsio_string_list *all_gt = keys_matching(kv, gt, 1);
    NT_CHECK(all != NULL && all_gt != NULL);
    NT_CHECK_MSG(natsio_string_list_count(all) == 6 && !string_list_has(all, "app.gone") &&
                     !string_list_has(all, "app.purged"),
                 "%s", joined(all));
    NT_CHECK_INT_EQ(natsio_string_list_count(all_gt), 6);

    /* The token form. */
    natsio_token *tok = NULL;
    EXPECT_OK(natsio_kv_keys_filtered_async(kv, users, 1, &tok));
    nt_cleanup(token_free_cb, tok);
    NT_CHECK_INT_EQ(token_outcome(tok, 10000), NATSIO_OK);
    natsio_string_list *from_token = NULL;
    EXPECT_OK(natsio_token_string_list(tok, &from_token));
    kept_list(from_token);
    NT_CHECK_MSG(natsio_string_list_count(from_token) == 2 && string_list_has(from_token, "users.x.name"), "%s",
                 joined(from_token));

    /* Bad filters: the key-pattern rules of natsio_kv_watch. */
    natsio_string_list *s = SENTINEL;
    natsio_token *t = SENTINEL;
    static const char *const bad[][1] = {{""}, {"a.>.b"}, {"a..b"}, {"a b"}, {"a.*x"}, {".a"}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        EXPECT_FAILS(NATSIO_ERR_INVALID_KEY, natsio_kv_keys_filtered(kv, bad[i], 1, &s));
        EXPECT_FAILS(NATSIO_ERR_INVALID_KEY, natsio_kv_keys_filtered_async(kv, bad[i], 1, &t));
    }
    static const char *const one_bad[] = {"app.*", "a.>.b"};
    EXPECT_FAILS(NATSIO_ERR_INVALID_KEY, natsio_kv_keys_filtered(kv, one_bad, 2, &s));
    NT_CHECK(s == SENTINEL && t == SENTINEL);
    NT_CHECK(no_consumers_left(js, "KV_KEYSFILT"));
    EXPECT_OK(natsio_js_kv_delete(js, "KEYSFILT"));
}

typedef struct {
    atomic_int keys;
    atomic_int final_status;
    atomic_bool released;
} keys_seen;

static void on_key(void *user_data, const char *key, natsio_status st) {
    keys_seen *seen = user_data;
    if (key) {
        if (strncmp(key, "k.", 2) == 0 && st == NATSIO_OK) atomic_fetch_add(&seen->keys, 1);
    } else {
        atomic_store(&seen->final_status, st);
    }
}

static void on_keys_release(void *user_data) { atomic_store(&((keys_seen *)user_data)->released, true); }

static void test_list_keys_iterates_every_key_then_done(void) {
    natsio_js *js = connect_js();
    NT_CHECK(js != NULL);
    natsio_kv *kv = create_bucket(js, "{\"bucket\":\"KEYITER\",\"storage\":\"memory\"}");
    NT_CHECK(kv != NULL);
    /* An empty bucket ends at once. */
    natsio_kv_key_lister *empty = NULL;
    EXPECT_OK(natsio_kv_list_keys(kv, NULL, 0, &empty));
    nt_cleanup(key_lister_free_cb, empty);
    natsio_status end = NATSIO_OK;
    NT_CHECK_INT_EQ(drain_lister(empty, NULL, 0, &end), 0);
    NT_CHECK_INT_EQ(end, NATSIO_DONE);
    char *key = SENTINEL_STR;
    NT_CHECK_INT_EQ(natsio_kv_key_lister_next(empty, NATSIO_NO_WAIT, &key), NATSIO_DONE); /* and stays ended */
    NT_CHECK(key == NULL);

    /* 1000 keys (several pulls), some deleted or purged. */
    enum { MANY = 1000 };
    for (int i = 0; i < MANY; i++) {
        char k[32];
        snprintf(k, sizeof k, "k.%d", i);
        natsio_status st = natsio_kv_put(kv, k, "v", 1, NULL, NULL);
        NT_CHECK_MSG(st == NATSIO_OK, "put %s: %s", k, natsio_status_str(st));
    }
    EXPECT_OK(natsio_kv_put(kv, "skip.me", "v", 1, NULL, NULL));
    EXPECT_OK(natsio_kv_delete(kv, "k.7", NULL, NULL));
    EXPECT_OK(natsio_kv_purge(kv, "k.999", NULL, NULL, NULL));
    static unsigned char seen[MANY];
    memset(seen, 0, sizeof seen);
    static const char *const ks[] = {"k.*"};
    natsio_kv_key_lister *l = NULL;
    EXPECT_OK(natsio_kv_list_keys(kv, ks, 1, &l));
    nt_cleanup(key_lister_free_cb, l);
    NT_CHECK_INT_EQ(drain_lister(l, seen, MANY, &end), MANY - 2);
    NT_CHECK_INT_EQ(end, NATSIO_DONE);
    NT_CHECK(!seen[7] && !seen[999] && seen[0] && seen[500] && seen[998]);
    natsio_iter_stats stats;
    EXPECT_OK(natsio_kv_key_lister_get_stats(l, &stats));
    NT_CHECK_INT_EQ(stats.delivered, MANY - 2);
    NT_CHECK_INT_EQ(stats.pending_items, 0);

    /* Stopped midway: DONE at once, the rest dropped. */
    natsio_kv_key_lister *half = NULL;
    EXPECT_OK(natsio_kv_list_keys(kv, NULL, 0, &half));
    nt_cleanup(key_lister_free_cb, half);
    for (int i = 0; i < 10; i++) {
        char *k = NULL;
        EXPECT_OK(natsio_kv_key_lister_next(half, 10000, &k));
        natsio_string_free(k);
    }
    EXPECT_OK(natsio_kv_key_lister_stop(half));
    EXPECT_OK(natsio_kv_key_lister_stop(half)); /* idempotent */
    key = SENTINEL_STR;
    NT_CHECK_INT_EQ(natsio_kv_key_lister_next(half, 1000, &key), NATSIO_DONE);
    NT_CHECK(key == NULL);

    /* Tokens: each holds a key as a string, then DONE. */
    static const char *const one[] = {"skip.me"};
    natsio_kv_key_lister *tl = NULL;
    EXPECT_OK(natsio_kv_list_keys(kv, one, 1, &tl));
    nt_cleanup(key_lister_free_cb, tl);
    natsio_token *tok = NULL;
    EXPECT_OK(natsio_kv_key_lister_next_async(tl, &tok));
    EXPECT_OK(natsio_token_wait(tok, 10000));
    char *first = NULL;
    EXPECT_OK(natsio_token_string(tok, &first));
    NT_CHECK_STR_EQ(first, "skip.me");
    natsio_string_free(first);
    natsio_token_free(tok);
    EXPECT_OK(natsio_kv_key_lister_next_async(tl, &tok));
    EXPECT_OK(natsio_token_wait(tok, 10000));
    NT_CHECK_INT_EQ(natsio_token_status(tok), NATSIO_DONE);
    natsio_token_free(tok);

    /* Push mode: every key, then DONE, then release. */
    keys_seen pushed = {0};
    atomic_store(&pushed.final_status, -1);
    natsio_kv_key_lister *cl = NULL;
    EXPECT_OK(natsio_kv_list_keys(kv, ks, 1, &cl));
    EXPECT_OK(natsio_kv_key_lister_set_callback(cl, on_key, &pushed, on_keys_release));
    for (int i = 0; i < 1000 && !atomic_load(&pushed.released); i++) nt_sleep_ms(10);
    NT_CHECK(atomic_load(&pushed.released));
    NT_CHECK_INT_EQ(atomic_load(&pushed.keys), MANY - 2);
    NT_CHECK_INT_EQ(atomic_load(&pushed.final_status), NATSIO_DONE);
    natsio_kv_key_lister_free(cl);

    /* Every lister's consumer is gone once it ended or was stopped. */
    bool clean = false;
    for (int i = 0; i < 100 && !clean; i++) {
        natsio_string_list *names = NULL;
        if (natsio_js_consumer_names(js, "KV_KEYITER", &names) == NATSIO_OK) {
            clean = natsio_string_list_count(names) == 0;
            natsio_string_list_free(names);
        }
        if (!clean) nt_sleep_ms(20);
    }
    NT_CHECK(clean);
    EXPECT_OK(natsio_js_kv_delete(js, "KEYITER"));
}

static void test_bad_input_list_keys(void) {
    natsio_js *js = connect_js();
    NT_CHECK(js != NULL);
    natsio_kv *kv = create_bucket(js, "{\"bucket\":\"BADKL\",\"storage\":\"memory\"}");
    NT_CHECK(kv != NULL);
    EXPECT_OK(natsio_kv_put(kv, "k", "v", 1, NULL, NULL));
    natsio_kv_key_lister *l = SENTINEL;
    natsio_string_list *s = SENTINEL;
    natsio_token *t = SENTINEL;
    static const char *const ok[] = {"k"};
    static const char *const with_null[] = {"k", NULL};
    static const char *const bad_utf8[] = {BAD_UTF8};
    static const char *const bad[] = {"k.>.x"};
    EXPECT_NULL_ARG("kv", natsio_kv_list_keys(NULL, ok, 1, &l));
    EXPECT_NULL_ARG("filters", natsio_kv_list_keys(kv, NULL, 1, &l));
    EXPECT_NULL_ARG("key filter", natsio_kv_list_keys(kv, with_null, 2, &l));
    EXPECT_NULL_ARG("lister_out", natsio_kv_list_keys(kv, ok, 1, NULL));
    EXPECT_FAILS_NAMING(NATSIO_ERR_INVALID_UTF8, "key filter", natsio_kv_list_keys(kv, bad_utf8, 1, &l));
    EXPECT_FAILS(NATSIO_ERR_INVALID_KEY, natsio_kv_list_keys(kv, bad, 1, &l));
    EXPECT_NULL_ARG("kv", natsio_kv_keys_filtered(NULL, ok, 1, &s));
    EXPECT_NULL_ARG("filters", natsio_kv_keys_filtered(kv, NULL, 1, &s));
    EXPECT_NULL_ARG("list_out", natsio_kv_keys_filtered(kv, ok, 1, NULL));
    EXPECT_FAILS_NAMING(NATSIO_ERR_INVALID_UTF8, "key filter", natsio_kv_keys_filtered(kv, bad_utf8, 1, &s));
    EXPECT_NULL_ARG("kv", natsio_kv_keys_filtered_async(NULL, ok, 1, &t));
    EXPECT_NULL_ARG("token_out", natsio_kv_keys_filtered_async(kv, ok, 1, NULL));
    NT_CHECK(l == SENTINEL && s == SENTINEL && t == SENTINEL);

    natsio_kv_key_lister *live = NULL;
    EXPECT_OK(natsio_kv_list_keys(kv, ok, 1, &live));
    nt_cleanup(key_lister_free_cb, live);
    char *key = SENTINEL_STR;
    natsio_iter_stats stats;
    EXPECT_NULL_ARG("lister", natsio_kv_key_lister_next(NULL, 1000, &key));
    EXPECT_NULL_ARG("key_out", natsio_kv_key_lister_next(live, 1000, NULL));
    EXPECT_FAILS(NATSIO_ERR_INVALID_ARGUMENT, natsio_kv_key_lister_next(live, -7, &key));
    EXPECT_NULL_ARG("lister", natsio_kv_key_lister_next_async(NULL, &t));
    EXPECT_NULL_ARG("token_out", natsio_kv_key_lister_next_async(live, NULL));
    EXPECT_NULL_ARG("lister", natsio_kv_key_lister_set_callback(NULL, on_key, NULL, NULL));
    EXPECT_NULL_ARG("cb", natsio_kv_key_lister_set_callback(live, NULL, NULL, NULL));
    EXPECT_NULL_ARG("lister", natsio_kv_key_lister_stop(NULL));
    EXPECT_NULL_ARG("lister", natsio_kv_key_lister_get_stats(NULL, &stats));
    EXPECT_NULL_ARG("stats_out", natsio_kv_key_lister_get_stats(live, NULL));
    NT_CHECK(key == SENTINEL_STR && t == SENTINEL);
    natsio_kv_key_lister_free(NULL);
    /* The rejected calls changed nothing: the listing still works. */
    EXPECT_OK(natsio_kv_key_lister_next(live, 10000, &key));
    NT_CHECK_STR_EQ(key, "k");
    natsio_string_free(key);
    NT_CHECK_INT_EQ(natsio_kv_key_lister_next(live, 10000, &key), NATSIO_DONE);

    /* A bucket deleted after binding: the listing fails with it. */
    EXPECT_OK(natsio_js_kv_delete(js, "BADKL"));
    natsio_kv_key_lister *gone = NULL;
    EXPECT_OK(natsio_kv_list_keys(kv, NULL, 0, &gone));
    nt_cleanup(key_lister_free_cb, gone);
    key = SENTINEL_STR;
    NT_CHECK_INT_EQ(natsio_kv_key_lister_next(gone, 10000, &key), NATSIO_ERR_BUCKET_NOT_FOUND);
    NT_CHECK_INT_EQ(natsio_kv_key_lister_next(gone, 10000, &key), NATSIO_ERR_BUCKET_NOT_FOUND); /* again */
    NT_CHECK(key == SENTINEL_STR);
    EXPECT_FAILS(NATSIO_ERR_BUCKET_NOT_FOUND, natsio_kv_keys_filtered(kv, ok, 1, &s));
}

/* ---- purge_deletes, per-key TTL, listings, typed status --------------------- */

/* How many revisions natsio_kv_history has of `key` (0 when none: not found). */
static size_t revisions_of(natsio_kv *kv, const char *key) {
    natsio_kv_entry_list *list = NULL;
    natsio_status st = natsio_kv_history(kv, key, &list);
    if (st == NATSIO_ERR_KEY_NOT_FOUND) return 0;
    if (st != NATSIO_OK) {
        nt_fail_at(__FILE__, __LINE__, "history %s: %s (%s)", key, natsio_status_str(st), natsio_last_error());
        return SIZE_MAX;
    }
    size_t n = natsio_kv_entry_list_count(list);
    natsio_kv_entry_list_free(list);
    return n;
}

/* The number a u64 token completed with (UINT64_MAX, and a failure, if
 * it did not). */
static uint64_t token_u64_of(natsio_token *t) {
    nt_cleanup(token_free_cb, t);
    uint64_t v = UINT64_MAX;
    natsio_status st = token_outcome(t, 10000);
    if (st == NATSIO_OK) st = natsio_token_u64(t, &v);
    if (st != NATSIO_OK) nt_fail_at(__FILE__, __LINE__, "token: %s (%s)", natsio_status_str(st), natsio_last_error());
    return v;
}

static void test_purge_deletes_removes_old_markers_and_keeps_young_ones(void) {
    natsio_js *js = connect_js();
    NT_CHECK(js != NULL);
    natsio_kv *kv = create_bucket(js, "{\"bucket\":\"PDEL\",\"history\":10,\"storage\":\"memory\"}");
    NT_CHECK(kv != NULL);
    /* a: two values and a delete marker; b: a purge marker (the purge
     * already removed its value); c: a live value. */
    EXPECT_OK(natsio_kv_put(kv, "a", "1", 1, NULL, NULL));
    EXPECT_OK(natsio_kv_put(kv, "a", "2", 1, NULL, NULL));
    EXPECT_OK(natsio_kv_delete(kv, "a", NULL, NULL));
    EXPECT_OK(natsio_kv_put(kv, "b", "1", 1, NULL, NULL));
    EXPECT_OK(natsio_kv_purge(kv, "b", NULL, NULL, NULL));
    EXPECT_OK(natsio_kv_put(kv, "c", "1", 1, NULL, NULL));
    EXPECT_OK(natsio_kv_put(kv, "c", "2", 1, NULL, NULL));
    NT_CHECK_INT_EQ(status_int(kv, "\"state\"", "messages"), 6);

    /* The default threshold (30 minutes): the markers are young, so they
     * stay, and only the revisions before them go (a's two values). */
    uint64_t purged = REV_SENTINEL;
    EXPECT_OK(natsio_kv_purge_deletes(kv, 0, &purged));
    NT_CHECK_INT_EQ(purged, 2);
    NT_CHECK_INT_EQ(revisions_of(kv, "a"), 1);
    NT_CHECK_INT_EQ(revisions_of(kv, "b"), 1);
    NT_CHECK_INT_EQ(revisions_of(kv, "c"), 2);
    natsio_kv_entry *out = SENTINEL;
    EXPECT_FAILS(NATSIO_ERR_KEY_DELETED, natsio_kv_get(kv, "a", &out));
    EXPECT_FAILS(NATSIO_ERR_KEY_DELETED, natsio_kv_get(kv, "b", &out));
    NT_CHECK(out == SENTINEL);

    /* A threshold between old and young markers (1.2 s): a's, b's and d's
     * markers are older and go with everything before them; f's is younger
     * and stays alone. Live keys are never touched. */
    EXPECT_OK(natsio_kv_put(kv, "d", "1", 1, NULL, NULL));
    EXPECT_OK(natsio_kv_delete(kv, "d", NULL, NULL));
    nt_sleep_ms(2500);
    EXPECT_OK(natsio_kv_put(kv, "f", "1", 1, NULL, NULL));
    EXPECT_OK(natsio_kv_put(kv, "f", "2", 1, NULL, NULL));
    EXPECT_OK(natsio_kv_delete(kv, "f", NULL, NULL));
    EXPECT_OK(natsio_kv_purge_deletes(kv, 1200, &purged));
    /* a (1 marker), b (1 marker), d (value and marker) removed entirely; f keeps its marker. */
    NT_CHECK_INT_EQ(purged, 1 + 1 + 2 + 2);
    NT_CHECK_INT_EQ(revisions_of(kv, "a"), 0);
    NT_CHECK_INT_EQ(revisions_of(kv, "b"), 0);
    NT_CHECK_INT_EQ(revisions_of(kv, "d"), 0);
    NT_CHECK_INT_EQ(revisions_of(kv, "f"), 1);
    EXPECT_FAILS(NATSIO_ERR_KEY_NOT_FOUND, natsio_kv_get(kv, "a", &out));
    EXPECT_FAILS(NATSIO_ERR_KEY_DELETED, natsio_kv_get(kv, "f", &out));
    NT_CHECK(out == SENTINEL);
    NT_CHECK_INT_EQ(revisions_of(kv, "c"), 2);

    /* A negative threshold: every marker, whatever its age (the token form;
     * purged_out may be NULL in the blocking one). */
    natsio_token *t = NULL;
    EXPECT_OK(natsio_kv_purge_deletes_async(kv, -1, &t));
    NT_CHECK_INT_EQ(token_u64_of(t), 1);
    NT_CHECK_INT_EQ(revisions_of(kv, "f"), 0);
    NT_CHECK_INT_EQ(status_int(kv, "\"state\"", "messages"), 2);
    EXPECT_OK(natsio_kv_purge_deletes(kv, -1, NULL));
    EXPECT_OK(natsio_kv_purge_deletes(kv, -1, &purged));
    NT_CHECK_INT_EQ(purged, 0);
    natsio_kv_entry *c = get_entry(kv, "c");
    NT_CHECK(c != NULL);
    NT_CHECK_STR_EQ(natsio_kv_entry_value(c), "2");
    /* The scans left no consumers behind. */
    natsio_string_list *consumers = NULL;
    EXPECT_OK(natsio_js_consumer_names(js, "KV_PDEL", &consumers));
    kept_list(consumers);
    NT_CHECK_INT_EQ(natsio_string_list_count(consumers), 0);
    EXPECT_OK(natsio_js_kv_delete(js, "PDEL"));
}

/* Polls natsio_kv_get of `key` until it returns `want` (true) or
 * timeout_ms passes (false). */
static bool wait_get_status(natsio_kv *kv, const char *key, natsio_status want, int64_t timeout_ms) {
    int64_t end = nt_now_ms() + timeout_ms;
    for (;;) {
        natsio_kv_entry *e = NULL;
        natsio_status st = natsio_kv_get(kv, key, &e);
        natsio_kv_entry_free(e);
        if (st == want) return true;
        if (nt_now_ms() > end) {
            fprintf(stderr, "get %s: still %s, want %s\n", key, natsio_status_str(st), natsio_status_str(want));
            return false;
        }
        nt_sleep_ms(100);
    }
}

static void test_per_key_ttl_put_create_and_purge(void) {
    natsio_js *js = connect_js();
    NT_CHECK(js != NULL);
    natsio_kv *kv = create_bucket(
        js, "{\"bucket\":\"KTTL\",\"history\":5,\"storage\":\"memory\",\"limit_marker_ttl\":\"1s\"}");
    NT_CHECK(kv != NULL);
    natsio_kv_watch_options wo;
    EXPECT_OK(natsio_kv_watch_options_init(&wo));
    wo.updates_only = true;
    natsio_kv_watcher *w = NULL;
    const char *const eph[] = {"eph"};
    EXPECT_OK(natsio_kv_watch(kv, eph, 1, &wo, &w));
    nt_cleanup(kv_watcher_free_cb, w);
    natsio_kv_entry *e = NULL;
    EXPECT_OK(natsio_kv_watcher_next(w, 5000, &e));
    NT_CHECK_INT_EQ(natsio_kv_entry_operation(e), NATSIO_KV_INITIAL_DONE);
    natsio_kv_entry_free(e);

    /* A key created with a 1 s TTL is there, then gone: the watcher sees
     * the server's purge marker, which expires in turn (limit_marker_ttl). */
    uint64_t rev = 0;
    EXPECT_OK(natsio_kv_create(kv, "eph", "short", 5, ttl_opts(1), &rev));
    NT_CHECK(rev > 0);
    natsio_kv_entry *got = get_entry(kv, "eph");
    NT_CHECK(got != NULL);
    NT_CHECK_STR_EQ(natsio_kv_entry_value(got), "short");
    /* Creating it again while it lives fails. */
    EXPECT_FAILS(NATSIO_ERR_KEY_EXISTS, natsio_kv_create(kv, "eph", "again", 5, ttl_opts(1), NULL));
    e = NULL;
    EXPECT_OK(natsio_kv_watcher_next(w, 5000, &e));
    NT_CHECK_INT_EQ(natsio_kv_entry_operation(e), NATSIO_KV_PUT);
    NT_CHECK_INT_EQ(natsio_kv_entry_revision(e), rev);
    natsio_kv_entry_free(e);
    e = NULL;
    EXPECT_OK(natsio_kv_watcher_next(w, 10000, &e));
    NT_CHECK_INT_EQ(natsio_kv_entry_operation(e), NATSIO_KV_PURGE);
    NT_CHECK_STR_EQ(natsio_kv_entry_key(e), "eph");
    NT_CHECK(natsio_kv_entry_revision(e) > rev);
    natsio_kv_entry_free(e);
    NT_CHECK(wait_get_status(kv, "eph", NATSIO_ERR_KEY_NOT_FOUND, 10000));

    /* A create over a delete marker re-resolves against it, as create does. */
    EXPECT_OK(natsio_kv_put(kv, "re", "v", 1, NULL, NULL));
    EXPECT_OK(natsio_kv_delete(kv, "re", NULL, NULL));
    natsio_token *ct = NULL;
    EXPECT_OK(natsio_kv_create_async(kv, "re", "back", 4, ttl_opts(60), &ct));
    uint64_t rre = token_u64_of(ct);
    NT_CHECK(rre != UINT64_MAX && rre > 0);
    got = get_entry(kv, "re");
    NT_CHECK(got != NULL);
    NT_CHECK_STR_EQ(natsio_kv_entry_value(got), "back");

    /* NATSIO_TTL_NEVER: the value stays. */
    EXPECT_OK(natsio_kv_create(kv, "forever", "x", 1, ttl_opts(NATSIO_TTL_NEVER), NULL));

    /* A put with a TTL (the reference's put(key, value, ttl)): the value
     * is there, then gone with a purge marker the watcher sees; ttl_s 0
     * is no TTL of its own (the defaults), so that value stays. */
    EXPECT_OK(natsio_kv_watcher_stop(w));
    natsio_kv_watcher *pw = NULL;
    const char *const brief[] = {"brief"};
    EXPECT_OK(natsio_kv_watch(kv, brief, 1, &wo, &pw));
    nt_cleanup(kv_watcher_free_cb, pw);
    e = NULL;
    EXPECT_OK(natsio_kv_watcher_next(pw, 5000, &e));
    NT_CHECK_INT_EQ(natsio_kv_entry_operation(e), NATSIO_KV_INITIAL_DONE);
    natsio_kv_entry_free(e);
    EXPECT_OK(natsio_kv_put(kv, "stays", "long", 4, ttl_opts(0), NULL));
    natsio_token *bt = NULL;
    EXPECT_OK(natsio_kv_put_async(kv, "brief", "short", 5, ttl_opts(1), &bt));
    uint64_t rb = token_u64_of(bt);
    NT_CHECK(rb != UINT64_MAX && rb > 0);
    got = get_entry(kv, "brief");
    NT_CHECK(got != NULL);
    NT_CHECK_STR_EQ(natsio_kv_entry_value(got), "short");
    e = NULL;
    EXPECT_OK(natsio_kv_watcher_next(pw, 5000, &e));
    NT_CHECK_INT_EQ(natsio_kv_entry_operation(e), NATSIO_KV_PUT);
    NT_CHECK_INT_EQ(natsio_kv_entry_revision(e), rb);
    natsio_kv_entry_free(e);
    e = NULL;
    EXPECT_OK(natsio_kv_watcher_next(pw, 10000, &e));
    NT_CHECK_INT_EQ(natsio_kv_entry_operation(e), NATSIO_KV_PURGE);
    NT_CHECK_STR_EQ(natsio_kv_entry_key(e), "brief");
    NT_CHECK(natsio_kv_entry_revision(e) > rb);
    natsio_kv_entry_free(e);
    NT_CHECK(wait_get_status(kv, "brief", NATSIO_ERR_KEY_NOT_FOUND, 10000));

    /* A purge with a TTL: the marker replaces the values, then expires,
     * leaving no trace of the key. */
    uint64_t r1 = 0;
    EXPECT_OK(natsio_kv_put(kv, "p", "1", 1, NULL, NULL));
    EXPECT_OK(natsio_kv_put(kv, "p", "2", 1, NULL, &r1));
    uint64_t wrong = r1 - 1, untouched = REV_SENTINEL;
    EXPECT_FAILS(NATSIO_ERR_WRONG_LAST_SEQUENCE, natsio_kv_purge(kv, "p", &wrong, ttl_opts(1), &untouched));
    NT_CHECK_INT_EQ(untouched, REV_SENTINEL);
    uint64_t rp = 0;
    EXPECT_OK(natsio_kv_purge(kv, "p", &r1, ttl_opts(1), &rp));
    NT_CHECK_INT_EQ(rp, r1 + 1);
    natsio_kv_entry *out = SENTINEL;
    EXPECT_FAILS(NATSIO_ERR_KEY_DELETED, natsio_kv_get(kv, "p", &out));
    NT_CHECK(out == SENTINEL);
    NT_CHECK_INT_EQ(revisions_of(kv, "p"), 1);
    NT_CHECK(wait_get_status(kv, "p", NATSIO_ERR_KEY_NOT_FOUND, 10000));
    NT_CHECK_INT_EQ(revisions_of(kv, "p"), 0);
    /* The token form. */
    EXPECT_OK(natsio_kv_put(kv, "q", "1", 1, NULL, NULL));
    natsio_token *pt = NULL;
    EXPECT_OK(natsio_kv_purge_async(kv, "q", NULL, ttl_opts(1), &pt));
    NT_CHECK(token_u64_of(pt) != UINT64_MAX);
    NT_CHECK(wait_get_status(kv, "q", NATSIO_ERR_KEY_NOT_FOUND, 10000));

    /* The values without a TTL are still there. */
    NT_CHECK(get_entry(kv, "forever") != NULL);
    NT_CHECK(get_entry(kv, "stays") != NULL);
    NT_CHECK(get_entry(kv, "re") != NULL);
    natsio_kv_bucket_status *st = NULL;
    EXPECT_OK(natsio_kv_get_status(kv, &st));
    NT_CHECK_INT_EQ(natsio_kv_bucket_status_limit_marker_ttl_ns(st), 1000000000LL);
    natsio_kv_bucket_status_free(st);

    /* A bucket without limit_marker_ttl refuses per-key TTLs (the server
     * says so), and nothing is stored. */
    natsio_kv *plain = create_bucket(js, "{\"bucket\":\"KTTLPLAIN\",\"storage\":\"memory\"}");
    NT_CHECK(plain != NULL);
    uint64_t nr = REV_SENTINEL;
    EXPECT_FAILS(NATSIO_ERR_JS_API, natsio_kv_create(plain, "k", "x", 1, ttl_opts(1), &nr));
    EXPECT_FAILS(NATSIO_ERR_JS_API, natsio_kv_put(plain, "k", "x", 1, ttl_opts(1), &nr));
    EXPECT_FAILS(NATSIO_ERR_JS_API, natsio_kv_purge(plain, "k", NULL, ttl_opts(1), &nr));
    NT_CHECK_INT_EQ(nr, REV_SENTINEL);
    NT_CHECK_INT_EQ(status_int(plain, "\"state\"", "messages"), 0);
    EXPECT_OK(natsio_js_kv_delete(js, "KTTLPLAIN"));
    EXPECT_OK(natsio_js_kv_delete(js, "KTTL"));
}

/* The status of `bucket` in `list` (NULL if absent). */
static const natsio_kv_bucket_status *kv_status_in(const natsio_kv_bucket_status_list *list, const char *bucket) {
    for (size_t i = 0; i < natsio_kv_bucket_status_list_count(list); i++) {
        const natsio_kv_bucket_status *s = natsio_kv_bucket_status_list_get(list, i);
        if (strcmp(natsio_kv_bucket_status_bucket(s), bucket) == 0) return s;
    }
    return NULL;
}

static void kv_status_list_free_cb(void *list) { natsio_kv_bucket_status_list_free(list); }
static void kv_status_free_cb(void *s) { natsio_kv_bucket_status_free(s); }

/* The typed fields of the bucket KVLA (see its config below). */
static void check_kvla_status(const natsio_kv_bucket_status *s, uint64_t values) {
    NT_CHECK(s != NULL);
    NT_CHECK_STR_EQ(natsio_kv_bucket_status_bucket(s), "KVLA");
    NT_CHECK_INT_EQ(natsio_kv_bucket_status_values(s), values);
    NT_CHECK_INT_EQ(natsio_kv_bucket_status_history(s), 5);
    NT_CHECK_INT_EQ(natsio_kv_bucket_status_ttl_ns(s), 3600000000000LL);
    NT_CHECK_STR_EQ(natsio_kv_bucket_status_storage(s), "memory");
    NT_CHECK_INT_EQ(natsio_kv_bucket_status_replicas(s), 1);
    NT_CHECK(natsio_kv_bucket_status_is_compressed(s));
    NT_CHECK_STR_EQ(natsio_kv_bucket_status_description(s), "typed status");
    const char *md = natsio_kv_bucket_status_metadata_json(s);
    NT_CHECK_MSG(md != NULL && strstr(md, "\"team\":\"red\"") != NULL, "metadata %s", md ? md : "(null)");
    NT_CHECK_INT_EQ(natsio_kv_bucket_status_limit_marker_ttl_ns(s), 0);
    const char *si = natsio_kv_bucket_status_stream_info_json(s);
    NT_CHECK_MSG(si != NULL && strstr(si, "\"name\":\"KV_KVLA\"") != NULL, "%s", si ? si : "(null)");
    NT_CHECK(values == 0 ? natsio_kv_bucket_status_bytes(s) == 0 : natsio_kv_bucket_status_bytes(s) > 0);
}

static void test_bucket_names_statuses_and_typed_status(void) {
    natsio_js *js = connect_js();
    NT_CHECK(js != NULL);
    natsio_kv *a = create_bucket(js, "{\"bucket\":\"KVLA\",\"history\":5,\"ttl\":\"1h\",\"storage\":\"memory\","
                                     "\"description\":\"typed status\",\"compression\":true,"
                                     "\"metadata\":{\"team\":\"red\"}}");
    NT_CHECK(a != NULL);
    natsio_kv *b = create_bucket(js, "{\"bucket\":\"KVLB\"}");
    NT_CHECK(b != NULL);
    /* Streams that only look like buckets in one way, and an Object Store. */
    NT_CHECK(create_stream_config(js, "{\"name\":\"NOTKV\",\"subjects\":[\"$KV.fake.>\"],\"storage\":\"memory\"}"));
    NT_CHECK(create_stream_config(js, "{\"name\":\"KV_NOTSUBJ\",\"subjects\":[\"kvnotsubj.>\"],"
                                      "\"storage\":\"memory\"}"));
    natsio_obj *os = NULL;
    EXPECT_OK(natsio_js_obj_create(js, "{\"bucket\":\"KVLOBJ\",\"storage\":\"memory\"}", NATSIO_CREATE, &os));
    natsio_obj_free(os);

    natsio_string_list *names = NULL;
    EXPECT_OK(natsio_js_kv_names(js, &names));
    kept_list(names);
    char all[1024];
    string_list_join(names, all, sizeof all);
    NT_CHECK_MSG(string_list_has(names, "KVLA") && string_list_has(names, "KVLB"), "names: %s", all);
    NT_CHECK_MSG(!string_list_has(names, "NOTKV") && !string_list_has(names, "fake") &&
                     !string_list_has(names, "NOTSUBJ") && !string_list_has(names, "KV_KVLA") &&
                     !string_list_has(names, "KVLOBJ"),
                 "names: %s", all);
    natsio_token *nt = NULL;
    EXPECT_OK(natsio_js_kv_names_async(js, &nt));
    nt_cleanup(token_free_cb, nt);
    NT_CHECK_INT_EQ(token_outcome(nt, 10000), NATSIO_OK);
    natsio_string_list *names2 = NULL;
    EXPECT_OK(natsio_token_string_list(nt, &names2));
    kept_list(names2);
    NT_CHECK_INT_EQ(natsio_string_list_count(names2), natsio_string_list_count(names));

    /* Statuses: one per bucket, the same ones, with the typed fields. */
    natsio_kv_bucket_status_list *list = NULL;
    EXPECT_OK(natsio_js_kv_statuses(js, &list));
    nt_cleanup(kv_status_list_free_cb, list);
    NT_CHECK_INT_EQ(natsio_kv_bucket_status_list_count(list), natsio_string_list_count(names));
    NT_CHECK(natsio_kv_bucket_status_list_get(list, natsio_kv_bucket_status_list_count(list)) == NULL);
    NT_CHECK(kv_status_in(list, "NOTKV") == NULL && kv_status_in(list, "fake") == NULL &&
             kv_status_in(list, "NOTSUBJ") == NULL && kv_status_in(list, "KVLOBJ") == NULL);
    check_kvla_status(kv_status_in(list, "KVLA"), 0);
    const natsio_kv_bucket_status *sb = kv_status_in(list, "KVLB");
    NT_CHECK(sb != NULL);
    NT_CHECK_INT_EQ(natsio_kv_bucket_status_history(sb), 1);
    NT_CHECK_INT_EQ(natsio_kv_bucket_status_ttl_ns(sb), 0);
    NT_CHECK_STR_EQ(natsio_kv_bucket_status_storage(sb), "file");
    NT_CHECK(!natsio_kv_bucket_status_is_compressed(sb));
    NT_CHECK(natsio_kv_bucket_status_description(sb) == NULL);
    const char *bmd = natsio_kv_bucket_status_metadata_json(sb);
    NT_CHECK_MSG(bmd != NULL && bmd[0] == '{' && strstr(bmd, "team") == NULL, "%s", bmd ? bmd : "(null)");

    /* The typed status of one bucket follows its data. */
    EXPECT_OK(natsio_kv_put(a, "k", "v1", 2, NULL, NULL));
    EXPECT_OK(natsio_kv_put(a, "k", "v2", 2, NULL, NULL));
    EXPECT_OK(natsio_kv_delete(a, "j", NULL, NULL));
    natsio_kv_bucket_status *st = NULL;
    EXPECT_OK(natsio_kv_get_status(a, &st));
    nt_cleanup(kv_status_free_cb, st);
    check_kvla_status(st, 3);
    natsio_token *stt = NULL;
    EXPECT_OK(natsio_kv_get_status_async(a, &stt));
    nt_cleanup(token_free_cb, stt);
    NT_CHECK_INT_EQ(token_outcome(stt, 10000), NATSIO_OK);
    natsio_kv_bucket_status *st2 = NULL;
    EXPECT_OK(natsio_token_kv_bucket_status(stt, &st2));
    nt_cleanup(kv_status_free_cb, st2);
    check_kvla_status(st2, 3);
    NT_CHECK_INT_EQ(natsio_kv_bucket_status_bytes(st2), natsio_kv_bucket_status_bytes(st));
    natsio_token *lt = NULL;
    EXPECT_OK(natsio_js_kv_statuses_async(js, &lt));
    nt_cleanup(token_free_cb, lt);
    NT_CHECK_INT_EQ(token_outcome(lt, 10000), NATSIO_OK);
    natsio_kv_bucket_status_list *list2 = NULL;
    EXPECT_OK(natsio_token_kv_bucket_status_list(lt, &list2));
    nt_cleanup(kv_status_list_free_cb, list2);
    check_kvla_status(kv_status_in(list2, "KVLA"), 3);
    /* The JSON status (kept for other bindings) says the same. */
    NT_CHECK_INT_EQ(status_int(a, "\"state\"", "messages"), 3);

    /* A deleted bucket leaves the lists; its handle's status says so. */
    EXPECT_OK(natsio_js_kv_delete(js, "KVLB"));
    natsio_kv_bucket_status *gone = SENTINEL;
    EXPECT_FAILS(NATSIO_ERR_BUCKET_NOT_FOUND, natsio_kv_get_status(b, &gone));
    NT_CHECK(gone == SENTINEL);
    natsio_string_list *after = NULL;
    EXPECT_OK(natsio_js_kv_names(js, &after));
    kept_list(after);
    NT_CHECK(string_list_has(after, "KVLA") && !string_list_has(after, "KVLB"));
    EXPECT_OK(natsio_js_stream_delete(js, "NOTKV"));
    EXPECT_OK(natsio_js_stream_delete(js, "KV_NOTSUBJ"));
    EXPECT_OK(natsio_js_obj_delete(js, "KVLOBJ"));
    EXPECT_OK(natsio_js_kv_delete(js, "KVLA"));
}

/* ---- mirrors and sources ------------------------------------------------ */

/* Polled: a mirror or a source copies asynchronously, and a bucket's
 * mirror answers the bucket's Direct Gets too (util.h). */
#define EXPECT_KV_VALUE(kv, key, want) NT_CHECK(wait_kv_value((kv), (key), (want), 10000, NULL))

typedef struct {
    natsio_kv *kv;
    const char *key;
} kv_key_wait;

/* `key` of `kv` reads as deleted (a predicate for nt_wait_until). */
static bool kv_key_deleted(void *arg) {
    const kv_key_wait *w = arg;
    natsio_kv_entry *e = NULL;
    natsio_status st = natsio_kv_get(w->kv, w->key, &e);
    natsio_kv_entry_free(e);
    return st == NATSIO_ERR_KEY_DELETED;
}

/* Whether the bucket's status JSON holds `needle`; printed when not as
 * `expected`. */
static bool status_holds(natsio_kv *kv, const char *needle, bool expected) {
    char *json = NULL;
    if (natsio_kv_status(kv, &json) != NATSIO_OK) return false;
    bool has = strstr(json, needle) != NULL;
    if (has != expected) fprintf(stderr, "status %s %s: %s\n", has ? "holds" : "lacks", needle, json);
    natsio_string_free(json);
    return has;
}
#define status_has(kv, needle) status_holds((kv), (needle), true)

static void test_mirror_reads_the_origin_and_writes_to_it(void) {
    /* In a domain, so that writes through the domain's prefix are tested
     * too. */
    nt_server *srv = start_server("jetstream { domain: HUB }");
    NT_CHECK(srv != NULL);
    natsio_client *c = connect_url(nt_server_url(srv));
    NT_CHECK(c != NULL);
    natsio_js *js = new_jetstream(c, NULL);
    NT_CHECK(js != NULL);
    natsio_kv *origin = create_bucket(js, "{\"bucket\":\"ORIGIN\",\"history\":5}");
    NT_CHECK(origin != NULL);
    EXPECT_OK(natsio_kv_put(origin, "a", "1", 1, NULL, NULL));

    /* Named without KV_, as nats.go allows. */
    natsio_kv *mirror = create_bucket(js, "{\"bucket\":\"MIR\",\"mirror\":{\"name\":\"ORIGIN\"}}");
    NT_CHECK(mirror != NULL);
    NT_CHECK(status_has(mirror, "\"mirror\":{\"name\":\"KV_ORIGIN\""));
    NT_CHECK(status_has(mirror, "\"mirror_direct\":true"));
    NT_CHECK(!status_holds(mirror, "\"subjects\"", false));
    EXPECT_KV_VALUE(mirror, "a", "1");
    /* A write through the mirror lands in the origin (at the revision the
     * put returned), and comes back. */
    uint64_t rev = 0, read_rev = 0;
    EXPECT_OK(natsio_kv_put(mirror, "b", "2", 1, NULL, &rev));
    NT_CHECK(wait_kv_value(origin, "b", "2", 10000, &read_rev));
    NT_CHECK_INT_EQ(read_rev, rev);
    EXPECT_KV_VALUE(mirror, "b", "2");
    EXPECT_OK(natsio_kv_delete(mirror, "a", NULL, NULL));
    kv_key_wait deleted = {origin, "a"};
    NT_CHECK(nt_wait_until(kv_key_deleted, &deleted, 10000));
    /* Keys and history read the mirrored keys; a bound handle is the same. */
    natsio_kv *bound = NULL;
    EXPECT_OK(natsio_js_kv_bind(js, "MIR", &bound));
    nt_cleanup(kv_free_cb, bound);
    EXPECT_KV_VALUE(bound, "b", "2");
    natsio_string_list *keys = NULL;
    EXPECT_OK(natsio_kv_keys(bound, &keys));
    kept_list(keys);
    NT_CHECK(natsio_string_list_count(keys) == 1 && string_list_has(keys, "b"));

    /* A context of the domain writes through its prefix
     * ($JS.HUB.API.$KV.ORIGIN.d, which the server maps to $KV.ORIGIN.d). */
    natsio_js_options o;
    natsio_js_options_init(&o);
    o.domain = "HUB";
    natsio_js *hub = new_jetstream(c, &o);
    NT_CHECK(hub != NULL);
    natsio_kv *via_hub = NULL;
    EXPECT_OK(natsio_js_kv_bind(hub, "ORIGIN", &via_hub));
    nt_cleanup(kv_free_cb, via_hub);
    EXPECT_OK(natsio_kv_put(via_hub, "d", "4", 1, NULL, NULL));
    EXPECT_KV_VALUE(origin, "d", "4");
    EXPECT_KV_VALUE(via_hub, "d", "4");

    /* Bad mirrors fail before anything is sent, naming the field. */
    natsio_kv *bad = SENTINEL;
    EXPECT_FAILS_NAMING(NATSIO_ERR_CONFIG, "both set",
                        natsio_js_kv_create(js,
                                            "{\"bucket\":\"BAD\",\"mirror\":{\"name\":\"ORIGIN\",\"domain\":\"HUB\","
                                            "\"external\":{\"api\":\"$JS.HUB.API\"}}}",
                                            NATSIO_CREATE, &bad));
    EXPECT_FAILS_NAMING(NATSIO_ERR_CONFIG, "mirror.name",
                        natsio_js_kv_create(js, "{\"bucket\":\"BAD\",\"mirror\":{}}", NATSIO_CREATE, &bad));
    EXPECT_FAILS_NAMING(NATSIO_ERR_CONFIG, "mirror",
                        natsio_js_kv_create(js, "{\"bucket\":\"BAD\",\"mirror\":\"ORIGIN\"}", NATSIO_CREATE, &bad));
    EXPECT_FAILS_NAMING(NATSIO_ERR_CONFIG, "sources.name",
                        natsio_js_kv_create(js, "{\"bucket\":\"BAD\",\"sources\":[{\"name\":\"a.b\"}]}",
                                            NATSIO_CREATE, &bad));
    NT_CHECK(bad == SENTINEL);
}

/* A leaf node server with its own JetStream domain mirrors a bucket of the
 * hub's (the mirror names the hub's domain): the mirror's handle reads the
 * hub's keys on the leaf and writes to the hub's bucket through the hub's
 * domain prefix, as nats.go's TestKeyValueMirrorCrossDomains. */
static void test_mirror_of_a_bucket_in_another_domain(void) {
    int leaf_port = nt_free_port();
    char hub_conf[256], leaf_conf[256];
    snprintf(hub_conf, sizeof hub_conf,
             "server_name: hub\njetstream { domain: HUB }\nleafnodes { listen: \"127.0.0.1:%d\" }\n", leaf_port);
    snprintf(leaf_conf, sizeof leaf_conf,
             "server_name: leaf\njetstream { domain: LEAF }\n"
             "leafnodes { remotes: [ { url: \"nats-leaf://127.0.0.1:%d\" } ] }\n",
             leaf_port);
    nt_server *hub_srv = start_server(hub_conf);
    nt_server *leaf_srv = start_server(leaf_conf);
    NT_CHECK(hub_srv != NULL && leaf_srv != NULL);
    natsio_client *hc = connect_url(nt_server_url(hub_srv));
    natsio_client *lc = connect_url(nt_server_url(leaf_srv));
    NT_CHECK(hc != NULL && lc != NULL);
    natsio_js *hub = new_jetstream(hc, NULL);
    natsio_js *leaf = new_jetstream(lc, NULL);
    NT_CHECK(hub != NULL && leaf != NULL);
    natsio_kv *origin = create_bucket(hub, "{\"bucket\":\"TEST\"}");
    NT_CHECK(origin != NULL);
    EXPECT_OK(natsio_kv_put(origin, "name", "derek", 5, NULL, NULL));

    natsio_kv *far = create_bucket(leaf, "{\"bucket\":\"MIRROR\",\"mirror\":{\"name\":\"TEST\",\"domain\":\"HUB\"}}");
    NT_CHECK(far != NULL);
    NT_CHECK(status_has(far, "\"external\":{\"api\":\"$JS.HUB.API\""));
    /* The leaf connection comes up in its own time: the mirror syncs then. */
    EXPECT_KV_VALUE(far, "name", "derek");
    EXPECT_OK(natsio_kv_put(far, "name", "rip", 3, NULL, NULL));
    NT_CHECK_STR_EQ(natsio_kv_entry_value(get_entry(origin, "name")), "rip");
    EXPECT_KV_VALUE(far, "name", "rip");
    EXPECT_OK(natsio_kv_delete(far, "name", NULL, NULL));
    natsio_kv_entry *gone = NULL;
    EXPECT_FAILS(NATSIO_ERR_KEY_DELETED, natsio_kv_get(origin, "name", &gone));

    /* The hub's bucket through the leaf connection, in the hub's domain. */
    natsio_js_options o;
    natsio_js_options_init(&o);
    o.domain = "HUB";
    natsio_js *remote = new_jetstream(lc, &o);
    NT_CHECK(remote != NULL);
    natsio_kv *rkv = NULL;
    EXPECT_OK(natsio_js_kv_bind(remote, "TEST", &rkv));
    nt_cleanup(kv_free_cb, rkv);
    EXPECT_OK(natsio_kv_put(rkv, "name", "ivan", 4, NULL, NULL));
    EXPECT_KV_VALUE(far, "name", "ivan");
    NT_CHECK_STR_EQ(natsio_kv_entry_value(get_entry(origin, "name")), "ivan");
}

static void test_sources_copy_keys_into_the_bucket(void) {
    natsio_js *js = connect_js();
    NT_CHECK(js != NULL);
    natsio_kv *a = create_bucket(js, "{\"bucket\":\"SRCA\",\"storage\":\"memory\"}");
    natsio_kv *b = create_bucket(js, "{\"bucket\":\"SRCB\",\"storage\":\"memory\"}");
    NT_CHECK(a != NULL && b != NULL);
    EXPECT_OK(natsio_kv_put(a, "x", "from a", 6, NULL, NULL));
    natsio_kv *both = create_bucket(js, "{\"bucket\":\"SRCAB\",\"storage\":\"memory\","
                                        "\"sources\":[{\"name\":\"SRCA\"},{\"name\":\"KV_SRCB\"}]}");
    NT_CHECK(both != NULL);
    NT_CHECK(status_has(both, "\"subject_transforms\":[{\"src\":\"$KV.SRCA.>\",\"dest\":\"$KV.SRCAB.>\"}]"));
    NT_CHECK(status_has(both, "\"subject_transforms\":[{\"src\":\"$KV.SRCB.>\",\"dest\":\"$KV.SRCAB.>\"}]"));
    EXPECT_OK(natsio_kv_put(b, "y", "from b", 6, NULL, NULL));
    EXPECT_KV_VALUE(both, "x", "from a");
    EXPECT_KV_VALUE(both, "y", "from b");
    /* The bucket keeps its own keys, written as usual. */
    EXPECT_OK(natsio_kv_put(both, "z", "own", 3, NULL, NULL));
    NT_CHECK_STR_EQ(natsio_kv_entry_value(get_entry(both, "z")), "own");
    natsio_kv_entry *none = NULL;
    EXPECT_FAILS(NATSIO_ERR_KEY_NOT_FOUND, natsio_kv_get(a, "z", &none));
}

int main(int argc, char **argv) {
    static const nt_case cases[] = {
        NT_CASE(test_bucket_create_bind_update_delete),
        NT_CASE(test_bucket_name_and_config_errors),
        NT_CASE(test_put_get_and_entry_fields),
        NT_CASE(test_create_and_compare_and_set),
        NT_CASE(test_delete_and_purge),
        NT_CASE(test_binary_empty_and_large_values),
        NT_CASE(test_keys),
        NT_CASE(test_use_after_client_close_and_free),
        NT_CASE(test_null_tolerant_getters_and_frees),
        NT_CASE(test_bad_input_bucket_functions),
        NT_CASE(test_bad_input_key_value_functions),
        NT_CASE(test_keys_lists_live_keys),
        NT_CASE(test_history_revisions_markers_and_limits),
        NT_CASE(test_keys_and_history_after_client_close_and_free),
        NT_CASE(test_bad_input_keys_and_history),
        NT_CASE(test_keys_filtered_lists_matching_live_keys),
        NT_CASE(test_list_keys_iterates_every_key_then_done),
        NT_CASE(test_bad_input_list_keys),
        NT_CASE(test_purge_deletes_removes_old_markers_and_keeps_young_ones),
        NT_CASE(test_per_key_ttl_put_create_and_purge),
        NT_CASE(test_bucket_names_statuses_and_typed_status),
        NT_CASE(test_mirror_reads_the_origin_and_writes_to_it),
        NT_CASE(test_mirror_of_a_bucket_in_another_domain),
        NT_CASE(test_sources_copy_keys_into_the_bucket),
    };
    return run_cases_with_shared_server(argc, argv, "kvtest", cases, NT_COUNT(cases));
}
