/*
 * JetStream through the C ABI against a real nats-server: stream management
 * (create with each natsio_create_action, info/names/purge/delete, JSON
 * configs and their errors),
 * publishing with acks and expectations, reading and deleting stored
 * messages, asynchronous publishing (window, callbacks, stalls, ack
 * timeouts), token kinds, account info, use after the client is closed, and
 * bad input for every JetStream and stream function.
 *
 * The cases share one server; each uses its own stream names and subjects.
 */
#define _POSIX_C_SOURCE 200809L

#include "harness.h"
#include "util.h"

#include <natsio.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- helpers ------------------------------------------------------------ */

static void pub_ack_free_cb(void *ack) { natsio_pub_ack_free((natsio_pub_ack *)ack); }
static void stored_msg_free_cb(void *m) { natsio_stored_msg_free((natsio_stored_msg *)m); }

/* Options structs as their _init functions make them. */
static natsio_js_options js_options(void) {
    natsio_js_options o;
    natsio_js_options_init(&o);
    return o;
}

static natsio_js_publish_options pub_options(void) {
    natsio_js_publish_options o;
    natsio_js_publish_options_init(&o);
    return o;
}

/* The stream's message `seq` has payload `want`. */
static bool stored_payload_is(natsio_js *js, const char *stream, uint64_t seq, const char *want) {
    natsio_stored_msg *m = NULL;
    natsio_status st = natsio_js_stream_get_msg(js, stream, seq, NULL, &m);
    if (st != NATSIO_OK) {
        nt_fail_at(__FILE__, __LINE__, "get %s/%llu: %s (%s)", stream, (unsigned long long)seq,
                   natsio_status_str(st), natsio_last_error());
        return false;
    }
    bool ok = natsio_stored_msg_data_len(m) == strlen(want) &&
              memcmp(natsio_stored_msg_data(m), want, strlen(want)) == 0;
    natsio_stored_msg_free(m);
    if (!ok) nt_fail_at(__FILE__, __LINE__, "%s/%llu is not %s", stream, (unsigned long long)seq, want);
    return ok;
}

/* The stream's state.messages, or -1. */
static int64_t stream_messages(natsio_js *js, const char *name) {
    char *info = NULL;
    if (natsio_js_stream_info(js, name, NULL, &info) != NATSIO_OK) return -1;
    int64_t n = -1;
    const char *state = strstr(info, "\"state\"");
    if (!state || !json_int(state, "messages", &n)) n = -1;
    natsio_string_free(info);
    return n;
}

/* ---- streams ------------------------------------------------------------- */

static void test_stream_create_update_info_names_delete(void) {
    natsio_js *js = connect_js();
    NT_CHECK(js != NULL);
    const char *cfg = "{\"name\":\"LIFE\",\"subjects\":[\"life.>\"],\"max_age\":\"1h\","
                      "\"storage\":\"memory\"}";
    char *info = NULL;
    EXPECT_OK(natsio_js_stream_create(js, cfg, NATSIO_CREATE, &info));
    kept(info);
    NT_CHECK_MSG(strstr(info, "\"name\":\"LIFE\"") != NULL, "%s", info);
    int64_t max_age = 0;
    NT_CHECK(json_int(info, "max_age", &max_age));
    NT_CHECK_INT_EQ(max_age, 3600000000000LL); /* "1h" in nanoseconds */
    NT_CHECK_MSG(strstr(info, "\"storage\":\"memory\"") != NULL, "%s", info);

    /* The same configuration again is fine (info not wanted: NULL). */
    EXPECT_OK(natsio_js_stream_create(js, cfg, NATSIO_CREATE, NULL));
    /* Another configuration under the same name is not; out untouched. */
    char *out = SENTINEL_STR;
    EXPECT_FAILS(NATSIO_ERR_STREAM_NAME_IN_USE,
                 natsio_js_stream_create(
                     js, "{\"name\":\"LIFE\",\"subjects\":[\"other.>\"],\"storage\":\"memory\"}", NATSIO_CREATE,
                     &out));
    NT_CHECK(out == SENTINEL_STR);

    /* NATSIO_UPDATE changes it; a missing stream cannot be updated. */
    char *upd = NULL;
    EXPECT_OK(natsio_js_stream_create(
        js, "{\"name\":\"LIFE\",\"subjects\":[\"life.>\"],\"max_age\":\"2h\",\"storage\":\"memory\"}", NATSIO_UPDATE,
        &upd));
    kept(upd);
    NT_CHECK(json_int(upd, "max_age", &max_age));
    NT_CHECK_INT_EQ(max_age, 7200000000000LL);
    EXPECT_FAILS(NATSIO_ERR_STREAM_NOT_FOUND,
                 natsio_js_stream_create(js, "{\"name\":\"LIFE_NOPE\",\"subjects\":[\"nope.x\"]}", NATSIO_UPDATE,
                                         &out));
    NT_CHECK(out == SENTINEL_STR);

    /* NATSIO_CREATE_OR_UPDATE: creates, then updates. */
    char *cu = NULL;
    EXPECT_OK(natsio_js_stream_create(
        js, "{\"name\":\"LIFE2\",\"subjects\":[\"life2.>\"],\"max_msgs\":10}", NATSIO_CREATE_OR_UPDATE, &cu));
    kept(cu);
    int64_t max_msgs = 0;
    NT_CHECK(json_int(cu, "max_msgs", &max_msgs));
    NT_CHECK_INT_EQ(max_msgs, 10);
    cu = NULL;
    EXPECT_OK(natsio_js_stream_create(
        js, "{\"name\":\"LIFE2\",\"subjects\":[\"life2.>\"],\"max_msgs\":20}", NATSIO_CREATE_OR_UPDATE, &cu));
    kept(cu);
    NT_CHECK(json_int(cu, "max_msgs", &max_msgs));
    NT_CHECK_INT_EQ(max_msgs, 20);

    /* Info reads the current configuration and state. */
    char *got = NULL;
    EXPECT_OK(natsio_js_stream_info(js, "LIFE", NULL, &got));
    kept(got);
    NT_CHECK_MSG(strstr(got, "\"name\":\"LIFE\"") != NULL, "%s", got);
    NT_CHECK(json_int(got, "max_age", &max_age));
    NT_CHECK_INT_EQ(max_age, 7200000000000LL);
    NT_CHECK_INT_EQ(stream_messages(js, "LIFE"), 0);

    /* Names: a string list; filtered by subject. */
    char joined[512];
    natsio_string_list *names = NULL;
    EXPECT_OK(natsio_js_stream_names(js, NULL, &names));
    kept_list(names);
    NT_CHECK_MSG(string_list_has(names, "LIFE") && string_list_has(names, "LIFE2"), "%s",
                 string_list_join(names, joined, sizeof joined));
    NT_CHECK(natsio_string_list_get(names, natsio_string_list_count(names)) == NULL);
    natsio_string_list *only = NULL;
    EXPECT_OK(natsio_js_stream_names(js, "life.orders.1", &only));
    kept_list(only);
    NT_CHECK_INT_EQ(natsio_string_list_count(only), 1);
    NT_CHECK_STR_EQ(natsio_string_list_get(only, 0), "LIFE");
    natsio_string_list *none = NULL;
    EXPECT_OK(natsio_js_stream_names(js, "nobody.holds.this", &none));
    kept_list(none);
    NT_CHECK_INT_EQ(natsio_string_list_count(none), 0);
    NT_CHECK(natsio_string_list_get(none, 0) == NULL);

    /* Delete; then it is gone. */
    EXPECT_OK(natsio_js_stream_delete(js, "LIFE"));
    EXPECT_FAILS(NATSIO_ERR_STREAM_NOT_FOUND, natsio_js_stream_info(js, "LIFE", NULL, &out));
    NT_CHECK(out == SENTINEL_STR);
    EXPECT_FAILS(NATSIO_ERR_STREAM_NOT_FOUND, natsio_js_stream_delete(js, "LIFE"));
    natsio_string_list *after = NULL;
    EXPECT_OK(natsio_js_stream_names(js, "life.orders.1", &after));
    kept_list(after);
    NT_CHECK_INT_EQ(natsio_string_list_count(after), 0);
    EXPECT_OK(natsio_js_stream_delete(js, "LIFE2"));
}

static void test_stream_config_errors_name_the_field(void) {
    natsio_js *js = connect_js();
    NT_CHECK(js != NULL);
    char *out = SENTINEL_STR;

    EXPECT_FAILS_NAMING(NATSIO_ERR_CONFIG, "StreamConfig.max_age",
                        natsio_js_stream_create(js, "{\"name\":\"CFGERR\",\"max_age\":\"soon\"}", NATSIO_CREATE, &out));
    EXPECT_FAILS_NAMING(NATSIO_ERR_CONFIG, "StreamConfig.max_msgs",
                        natsio_js_stream_create(js, "{\"name\":\"CFGERR\",\"max_msgs\":\"many\"}", NATSIO_CREATE,
                                                &out));
    EXPECT_FAILS_NAMING(NATSIO_ERR_CONFIG, "StreamConfig.subjects",
                        natsio_js_stream_create(js, "{\"name\":\"CFGERR\",\"subjects\":\"a.b\"}", NATSIO_CREATE, &out));
    EXPECT_FAILS_NAMING(NATSIO_ERR_CONFIG, "StreamConfig.storage",
                        natsio_js_stream_create(js, "{\"name\":\"CFGERR\",\"storage\":\"disk\"}", NATSIO_CREATE, &out));
    EXPECT_FAILS_NAMING(NATSIO_ERR_CONFIG, "StreamConfig.name",
                        natsio_js_stream_create(js, "{\"subjects\":[\"cfgerr.a\"]}", NATSIO_CREATE, &out));
    EXPECT_FAILS(NATSIO_ERR_CONFIG, natsio_js_stream_create(js, "not json", NATSIO_CREATE, &out));
    EXPECT_FAILS(NATSIO_ERR_CONFIG, natsio_js_stream_create(js, "[1,2]", NATSIO_CREATE, &out));
    EXPECT_FAILS(NATSIO_ERR_CONFIG, natsio_js_stream_create(js, "{\"name\":\"CFGERR\",\"max_age\":true}", NATSIO_UPDATE,
                                                            &out));
    EXPECT_FAILS(NATSIO_ERR_CONFIG,
                 natsio_js_stream_create(js, "{\"name\":\"CFGERR\",\"max_age\":\"1x\"}", NATSIO_CREATE_OR_UPDATE,
                                         &out));
    /* Bad stream names. */
    EXPECT_FAILS(NATSIO_ERR_INVALID_ARGUMENT, natsio_js_stream_create(js, "{\"name\":\"a.b\"}", NATSIO_CREATE, &out));
    EXPECT_FAILS(NATSIO_ERR_INVALID_ARGUMENT, natsio_js_stream_create(js, "{\"name\":\"a b\"}", NATSIO_CREATE, &out));
    EXPECT_FAILS(NATSIO_ERR_INVALID_ARGUMENT, natsio_js_stream_create(js, "{\"name\":\"\"}", NATSIO_CREATE, &out));
    EXPECT_FAILS(NATSIO_ERR_INVALID_ARGUMENT, natsio_js_stream_info(js, "a.b", NULL, &out));
    EXPECT_FAILS(NATSIO_ERR_INVALID_ARGUMENT, natsio_js_stream_info(js, "a*", NULL, &out));
    EXPECT_FAILS(NATSIO_ERR_INVALID_ARGUMENT, natsio_js_stream_delete(js, "a>"));
    EXPECT_FAILS(NATSIO_ERR_INVALID_ARGUMENT, natsio_js_stream_purge(js, "", NULL, NULL));
    NT_CHECK(out == SENTINEL_STR);
    /* Nothing was created by the rejected calls. */
    EXPECT_FAILS(NATSIO_ERR_STREAM_NOT_FOUND, natsio_js_stream_info(js, "CFGERR", NULL, &out));

    /* A field the library does not model reaches the server unchanged. */
    EXPECT_FAILS_NAMING(NATSIO_ERR_JS_API, "x_unknown",
                        natsio_js_stream_create(js, "{\"name\":\"CFGERR\",\"x_unknown\":1}", NATSIO_CREATE, &out));
    /* A server-side rejection: subjects overlapping another stream. */
    NT_CHECK(create_stream(js, "CFGOK", "cfgok.>"));
    EXPECT_FAILS(NATSIO_ERR_JS_API,
                 natsio_js_stream_create(js, "{\"name\":\"CFGOVER\",\"subjects\":[\"cfgok.x\"]}", NATSIO_CREATE, &out));
    NT_CHECK(out == SENTINEL_STR);

    /* Durations: Go-style strings and plain nanoseconds. */
    char *info = NULL;
    EXPECT_OK(natsio_js_stream_create(js,
                                      "{\"name\":\"CFGOK\",\"subjects\":[\"cfgok.>\"],\"storage\":"
                                      "\"memory\",\"max_age\":\"1h30m\",\"duplicate_window\":\"90s\"}", NATSIO_UPDATE,
                                      &info));
    kept(info);
    int64_t v = 0;
    NT_CHECK(json_int(info, "max_age", &v));
    NT_CHECK_INT_EQ(v, 5400000000000LL);
    NT_CHECK(json_int(info, "duplicate_window", &v));
    NT_CHECK_INT_EQ(v, 90000000000LL);
    info = NULL;
    EXPECT_OK(natsio_js_stream_create(js,
                                      "{\"name\":\"CFGOK\",\"subjects\":[\"cfgok.>\"],\"storage\":"
                                      "\"memory\",\"max_age\":120000000000}", NATSIO_UPDATE,
                                      &info));
    kept(info);
    NT_CHECK(json_int(info, "max_age", &v));
    NT_CHECK_INT_EQ(v, 120000000000LL);

    /* Bad purge options. */
    uint64_t purged = 777;
    EXPECT_FAILS(NATSIO_ERR_CONFIG, natsio_js_stream_purge(js, "CFGOK", "{\"keep\":1,\"seq\":2}", &purged));
    EXPECT_FAILS(NATSIO_ERR_CONFIG, natsio_js_stream_purge(js, "CFGOK", "not json", &purged));
    EXPECT_FAILS(NATSIO_ERR_STREAM_NOT_FOUND, natsio_js_stream_purge(js, "CFGNONE", NULL, &purged));
    NT_CHECK_INT_EQ(purged, 777);
    EXPECT_OK(natsio_js_stream_delete(js, "CFGOK"));
}

static void test_stream_purge(void) {
    natsio_js *js = connect_js();
    NT_CHECK(js != NULL);
    NT_CHECK(create_stream(js, "PURGE", "purge.>"));
    for (int i = 0; i < 5; i++) {
        char subj[32];
        snprintf(subj, sizeof subj, "purge.%d", i % 2);
        EXPECT_OK(natsio_js_publish(js, subj, "x", 1, NULL, NULL));
    }
    NT_CHECK_INT_EQ(stream_messages(js, "PURGE"), 5);
    uint64_t purged = 0;
    EXPECT_OK(natsio_js_stream_purge(js, "PURGE", "{\"filter\":\"purge.0\"}", &purged));
    NT_CHECK_INT_EQ(purged, 3);
    NT_CHECK_INT_EQ(stream_messages(js, "PURGE"), 2);
    EXPECT_OK(natsio_js_stream_purge(js, "PURGE", "{\"keep\":1}", &purged));
    NT_CHECK_INT_EQ(purged, 1);
    NT_CHECK_INT_EQ(stream_messages(js, "PURGE"), 1);
    /* The kept message is the newest left (5 went with purge.0). */
    natsio_stored_msg *m = NULL;
    EXPECT_OK(natsio_js_stream_get_msg(js, "PURGE", 0, "purge.1", &m));
    NT_CHECK_INT_EQ(natsio_stored_msg_seq(m), 4);
    natsio_stored_msg_free(m);
    m = SENTINEL;
    EXPECT_FAILS(NATSIO_ERR_MESSAGE_NOT_FOUND, natsio_js_stream_get_msg(js, "PURGE", 2, NULL, &m));
    NT_CHECK(m == SENTINEL);
    /* Everything, with and without a count wanted. */
    EXPECT_OK(natsio_js_stream_purge(js, "PURGE", NULL, &purged));
    NT_CHECK_INT_EQ(purged, 1);
    NT_CHECK_INT_EQ(stream_messages(js, "PURGE"), 0);
    EXPECT_OK(natsio_js_publish(js, "purge.9", "x", 1, NULL, NULL));
    EXPECT_OK(natsio_js_stream_purge(js, "PURGE", NULL, NULL));
    NT_CHECK_INT_EQ(stream_messages(js, "PURGE"), 0);
    /* Sequences go on after a purge. */
    natsio_pub_ack *ack = NULL;
    EXPECT_OK(natsio_js_publish(js, "purge.1", "y", 1, NULL, &ack));
    uint64_t seq = natsio_pub_ack_seq(ack);
    natsio_pub_ack_free(ack);
    NT_CHECK_INT_EQ(seq, 7);
    EXPECT_OK(natsio_js_stream_delete(js, "PURGE"));
}

/* ---- publishing ----------------------------------------------------------- */

static void test_publish_acks_and_expectations(void) {
    natsio_js *js = connect_js();
    NT_CHECK(js != NULL);
    NT_CHECK(create_stream(js, "PUB", "pub.>"));

    natsio_pub_ack *ack = NULL;
    EXPECT_OK(natsio_js_publish(js, "pub.a", "one", 3, NULL, &ack));
    nt_cleanup(pub_ack_free_cb, ack);
    NT_CHECK_STR_EQ(natsio_pub_ack_stream(ack), "PUB");
    NT_CHECK_INT_EQ(natsio_pub_ack_seq(ack), 1);
    NT_CHECK(!natsio_pub_ack_duplicate(ack));
    NT_CHECK(natsio_pub_ack_domain(ack) == NULL);

    /* No ack wanted; options fresh from their _init set nothing. */
    natsio_js_publish_options none = pub_options();
    EXPECT_OK(natsio_js_publish(js, "pub.a", "two", 3, &none, NULL));

    /* Deduplication by message id. */
    natsio_js_publish_options dedupe = pub_options();
    dedupe.msg_id = "id-1";
    natsio_pub_ack *a3 = NULL, *a3again = NULL;
    EXPECT_OK(natsio_js_publish(js, "pub.a", "three", 5, &dedupe, &a3));
    nt_cleanup(pub_ack_free_cb, a3);
    EXPECT_OK(natsio_js_publish(js, "pub.a", "three again", 11, &dedupe, &a3again));
    nt_cleanup(pub_ack_free_cb, a3again);
    NT_CHECK_INT_EQ(natsio_pub_ack_seq(a3), 3);
    NT_CHECK(!natsio_pub_ack_duplicate(a3));
    NT_CHECK(natsio_pub_ack_duplicate(a3again));
    NT_CHECK_INT_EQ(natsio_pub_ack_seq(a3again), 3);
    NT_CHECK_INT_EQ(stream_messages(js, "PUB"), 3);

    /* Expected last sequence of the stream. */
    natsio_js_publish_options expect = pub_options();
    uint64_t last = 1;
    expect.expected_last_seq = &last;
    natsio_pub_ack *out = SENTINEL;
    EXPECT_FAILS(NATSIO_ERR_WRONG_LAST_SEQUENCE, natsio_js_publish(js, "pub.a", "x", 1, &expect, &out));
    NT_CHECK(out == SENTINEL);
    last = 3;
    natsio_pub_ack *a4 = NULL;
    EXPECT_OK(natsio_js_publish(js, "pub.a", "x", 1, &expect, &a4));
    NT_CHECK_INT_EQ(natsio_pub_ack_seq(a4), 4);
    natsio_pub_ack_free(a4);

    /* Expected last sequence of the subject (0: nothing on it yet). */
    natsio_js_publish_options subj = pub_options();
    uint64_t zero = 0;
    subj.expected_last_subject_seq = &zero;
    EXPECT_OK(natsio_js_publish(js, "pub.b", "first on b", 10, &subj, NULL));
    EXPECT_FAILS(NATSIO_ERR_WRONG_LAST_SEQUENCE, natsio_js_publish(js, "pub.b", "x", 1, &subj, &out));
    NT_CHECK(out == SENTINEL);

    /* A wrong expected stream: another JetStream rejection. */
    natsio_js_publish_options wrong = pub_options();
    wrong.expected_stream = "OTHER";
    EXPECT_FAILS(NATSIO_ERR_JS_API, natsio_js_publish(js, "pub.a", "x", 1, &wrong, &out));
    natsio_js_publish_options right = pub_options();
    right.expected_stream = "PUB";
    EXPECT_OK(natsio_js_publish(js, "pub.a", "x", 1, &right, NULL));
    NT_CHECK(out == SENTINEL);
    NT_CHECK_INT_EQ(stream_messages(js, "PUB"), 6);

    /* No stream holds the subject: retried, then NO_STREAM_RESPONSE. */
    int64_t start = nt_now_ms();
    EXPECT_FAILS(NATSIO_ERR_NO_STREAM_RESPONSE, natsio_js_publish(js, "nostream.pub", "x", 1, NULL, &out));
    NT_CHECK(out == SENTINEL);
    NT_CHECK_MSG(nt_now_ms() - start < 4000, "took %lld ms", (long long)(nt_now_ms() - start));
    EXPECT_OK(natsio_js_stream_delete(js, "PUB"));
}

/* Messages client `c` has sent so far (natsio_client_stats.out_msgs). */
static uint64_t sent_msgs(natsio_client *c) {
    natsio_client_stats st;
    memset(&st, 0, sizeof st);
    if (natsio_client_get_stats(c, &st) != NATSIO_OK) nt_fail_at(__FILE__, __LINE__, "client stats");
    return st.out_msgs;
}

/* A publish no stream answers is sent 1 + retry_attempts times (nats.go's
 * RetryAttempts): counted by the client's sent messages. */
static void test_publish_retry_attempts(void) {
    natsio_client *c = connect_client();
    NT_CHECK(c != NULL);
    natsio_js *js = new_jetstream(c, NULL);
    NT_CHECK(js != NULL);
    natsio_pub_ack *out = SENTINEL;
    struct {
        int32_t attempts;
        uint64_t sent;
    } cases[] = {{0, 3}, {NATSIO_PUBLISH_NO_RETRY, 1}, {4, 5}};
    for (size_t i = 0; i < NT_COUNT(cases); i++) {
        natsio_js_publish_options o = pub_options();
        o.retry_attempts = cases[i].attempts;
        o.retry_wait_ms = 10;
        uint64_t before = sent_msgs(c);
        EXPECT_FAILS(NATSIO_ERR_NO_STREAM_RESPONSE, natsio_js_publish(js, "noretry.pub", "x", 1, &o, &out));
        NT_CHECK_MSG(sent_msgs(c) - before == cases[i].sent, "retry_attempts %d: sent %llu, want %llu",
                     (int)cases[i].attempts, (unsigned long long)(sent_msgs(c) - before),
                     (unsigned long long)cases[i].sent);
    }
    NT_CHECK(out == SENTINEL);
    /* The asynchronous form retries the same way. */
    natsio_js_publish_options o = pub_options();
    o.retry_attempts = 3;
    o.retry_wait_ms = 10;
    uint64_t before = sent_msgs(c);
    natsio_token *t = NULL;
    EXPECT_OK(natsio_js_publish_async(js, "noretry.pub", "x", 1, &o, &t));
    nt_cleanup(token_free_cb, t);
    NT_CHECK_INT_EQ(token_outcome(t, 10000), NATSIO_ERR_NO_STREAM_RESPONSE);
    NT_CHECK_INT_EQ(sent_msgs(c) - before, 4);
    /* A retry due after the ack deadline is not waited for: the publish
     * fails at its deadline (500 ms), not when the wait (60 s) ends. */
    o.retry_attempts = 1;
    o.retry_wait_ms = 60000;
    o.timeout_ms = 500;
    before = sent_msgs(c);
    natsio_token *late = NULL;
    EXPECT_OK(natsio_js_publish_async(js, "noretry.pub", "x", 1, &o, &late));
    nt_cleanup(token_free_cb, late);
    NT_CHECK_INT_EQ(token_outcome(late, 20000), NATSIO_ERR_ASYNC_PUBLISH_TIMEOUT);
    NT_CHECK_INT_EQ(sent_msgs(c) - before, 1);
    /* The longest wait there is, the same (no overflow on the way). */
    o.retry_wait_ms = INT64_MAX;
    natsio_token *longest = NULL;
    EXPECT_OK(natsio_js_publish_async(js, "noretry.pub", "x", 1, &o, &longest));
    nt_cleanup(token_free_cb, longest);
    NT_CHECK_INT_EQ(token_outcome(longest, 20000), NATSIO_ERR_ASYNC_PUBLISH_TIMEOUT);
    /* A version 2 struct has no retry fields: the default 2 retries. */
    o = pub_options();
    o.version = 2;
    o.retry_attempts = NATSIO_PUBLISH_NO_RETRY;
    before = sent_msgs(c);
    EXPECT_FAILS(NATSIO_ERR_NO_STREAM_RESPONSE, natsio_js_publish(js, "noretry.pub", "x", 1, &o, &out));
    NT_CHECK_INT_EQ(sent_msgs(c) - before, 3);
    /* Bad values, refused before anything is sent. */
    o = pub_options();
    o.retry_attempts = -2;
    before = sent_msgs(c);
    EXPECT_FAILS_NAMING(NATSIO_ERR_INVALID_ARGUMENT, "retry_attempts", natsio_js_publish(js, "noretry.pub", "x", 1, &o, &out));
    o = pub_options();
    o.retry_wait_ms = -1;
    EXPECT_FAILS_NAMING(NATSIO_ERR_INVALID_ARGUMENT, "retry_wait_ms", natsio_js_publish(js, "noretry.pub", "x", 1, &o, &out));
    NT_CHECK_INT_EQ(sent_msgs(c) - before, 0);
    NT_CHECK(out == SENTINEL);
}

/* The header name constants: every one listed once, and the server acts
 * on them (a duplicate Msg-Id, a wrong Expected-Stream, a rollup; the
 * stored message's Nats-TTL). */
static void test_js_header_constants(void) {
#define JS_HEADER_VALUE(suffix) NATSIO_JS_HEADER_##suffix,
    static const char *const values[] = {NATSIO_JS_HEADERS(JS_HEADER_VALUE)};
#undef JS_HEADER_VALUE
    const size_t count = sizeof values / sizeof values[0];
    NT_CHECK_INT_EQ(count, 35);
    for (size_t i = 0; i < count; i++) {
        bool rollup_value = strcmp(values[i], "sub") == 0 || strcmp(values[i], "all") == 0;
        NT_CHECK_MSG(rollup_value || strncmp(values[i], "Nats-", 5) == 0, "%s", values[i]);
        for (size_t j = i + 1; j < count; j++) NT_CHECK_MSG(strcmp(values[i], values[j]) != 0, "%s twice", values[i]);
    }

    natsio_js *js = connect_js();
    NT_CHECK(js != NULL);
    NT_CHECK(create_stream_config(js, "{\"name\":\"HDRS\",\"subjects\":[\"hdrs.>\"],\"storage\":\"memory\","
                                      "\"allow_rollup_hdrs\":true,\"allow_msg_ttl\":true}"));
    natsio_headers *h = NULL;
    EXPECT_OK(natsio_headers_new(&h));
    nt_cleanup(headers_free_cb, h);
    EXPECT_OK(natsio_headers_set(h, NATSIO_JS_HEADER_MSG_ID, "once"));
    EXPECT_OK(natsio_headers_set(h, NATSIO_JS_HEADER_TTL, "90s"));
    natsio_js_publish_options o = pub_options();
    o.headers = h;
    natsio_pub_ack *ack = NULL;
    EXPECT_OK(natsio_js_publish(js, "hdrs.a", "1", 1, &o, &ack));
    NT_CHECK(!natsio_pub_ack_duplicate(ack));
    natsio_pub_ack_free(ack);
    ack = NULL;
    EXPECT_OK(natsio_js_publish(js, "hdrs.a", "1", 1, &o, &ack));
    NT_CHECK(natsio_pub_ack_duplicate(ack));
    natsio_pub_ack_free(ack);
    natsio_stored_msg *m = NULL;
    EXPECT_OK(natsio_js_stream_get_msg(js, "HDRS", 1, NULL, &m));
    nt_cleanup(stored_msg_free_cb, m);
    const char *v = NULL;
    EXPECT_OK(natsio_headers_get(natsio_stored_msg_headers(m), NATSIO_JS_HEADER_TTL, &v));
    NT_CHECK_STR_EQ(v, "90s");

    natsio_headers *wrong = NULL;
    EXPECT_OK(natsio_headers_new(&wrong));
    nt_cleanup(headers_free_cb, wrong);
    EXPECT_OK(natsio_headers_set(wrong, NATSIO_JS_HEADER_EXPECTED_STREAM, "OTHER"));
    o.headers = wrong;
    EXPECT_FAILS(NATSIO_ERR_JS_API, natsio_js_publish(js, "hdrs.a", "2", 1, &o, NULL));

    /* Rollup of the subject: hdrs.b keeps only its last message. */
    EXPECT_OK(natsio_js_publish(js, "hdrs.b", "b1", 2, NULL, NULL));
    EXPECT_OK(natsio_js_publish(js, "hdrs.b", "b2", 2, NULL, NULL));
    natsio_headers *rollup = NULL;
    EXPECT_OK(natsio_headers_new(&rollup));
    nt_cleanup(headers_free_cb, rollup);
    EXPECT_OK(natsio_headers_set(rollup, NATSIO_JS_HEADER_ROLLUP, NATSIO_JS_HEADER_ROLLUP_SUBJECT));
    o.headers = rollup;
    EXPECT_OK(natsio_js_publish(js, "hdrs.b", "b3", 2, &o, NULL));
    NT_CHECK_INT_EQ(stream_messages(js, "HDRS"), 2);
    EXPECT_OK(natsio_js_stream_delete(js, "HDRS"));
}

static void test_publish_with_headers_then_get_and_delete_msg(void) {
    natsio_js *js = connect_js();
    NT_CHECK(js != NULL);
    NT_CHECK(create_stream_config(
        js, "{\"name\":\"GET\",\"subjects\":[\"get.>\"],\"storage\":\"memory\",\"allow_msg_ttl\":true}"));

    natsio_headers *h = NULL;
    EXPECT_OK(natsio_headers_new(&h));
    nt_cleanup(headers_free_cb, h);
    EXPECT_OK(natsio_headers_add(h, "X-Trace", "t1"));
    EXPECT_OK(natsio_headers_add(h, "X-Multi", "a"));
    EXPECT_OK(natsio_headers_add(h, "X-Multi", "b"));
    natsio_js_publish_options o = pub_options();
    o.headers = h;
    o.ttl_s = 60;
    natsio_pub_ack *ack = NULL;
    EXPECT_OK(natsio_js_publish(js, "get.a", "with\0headers", 12, &o, &ack));
    uint64_t seq1 = natsio_pub_ack_seq(ack);
    natsio_pub_ack_free(ack);
    NT_CHECK_INT_EQ(seq1, 1);
    EXPECT_OK(natsio_js_publish(js, "get.b", "b1", 2, NULL, NULL));
    EXPECT_OK(natsio_js_publish(js, "get.b", "b2", 2, NULL, NULL));
    EXPECT_OK(natsio_js_publish(js, "get.c", NULL, 0, NULL, NULL)); /* empty payload */

    /* By sequence: subject, data (with its NUL byte), headers, time. */
    natsio_stored_msg *m = NULL;
    EXPECT_OK(natsio_js_stream_get_msg(js, "GET", seq1, NULL, &m));
    nt_cleanup(stored_msg_free_cb, m);
    NT_CHECK_STR_EQ(natsio_stored_msg_subject(m), "get.a");
    NT_CHECK_INT_EQ(natsio_stored_msg_seq(m), 1);
    NT_CHECK_MEM_EQ(natsio_stored_msg_data(m), natsio_stored_msg_data_len(m), "with\0headers", 12);
    int64_t age_ns = abs64(now_realtime_ns() - natsio_stored_msg_time_ns(m));
    NT_CHECK_MSG(age_ns < 60000000000LL, "time_ns %lld is not near now",
                 (long long)natsio_stored_msg_time_ns(m));
    const natsio_headers *rh = natsio_stored_msg_headers(m);
    NT_CHECK(rh != NULL);
    const char *v = NULL;
    EXPECT_OK(natsio_headers_get(rh, "X-Trace", &v));
    NT_CHECK_STR_EQ(v, "t1");
    NT_CHECK_INT_EQ(natsio_headers_count(rh, "X-Multi"), 2);
    EXPECT_OK(natsio_headers_get_nth(rh, "X-Multi", 1, &v));
    NT_CHECK_STR_EQ(v, "b");
    EXPECT_OK(natsio_headers_get(rh, "Nats-TTL", &v));
    NT_CHECK_STR_EQ(v, "60s");

    /* By last subject: seq is ignored. */
    natsio_stored_msg *last = NULL;
    EXPECT_OK(natsio_js_stream_get_msg(js, "GET", 999, "get.b", &last));
    nt_cleanup(stored_msg_free_cb, last);
    NT_CHECK_STR_EQ(natsio_stored_msg_subject(last), "get.b");
    NT_CHECK_INT_EQ(natsio_stored_msg_seq(last), 3);
    NT_CHECK_MEM_EQ(natsio_stored_msg_data(last), natsio_stored_msg_data_len(last), "b2", 2);
    NT_CHECK(natsio_stored_msg_headers(last) == NULL);

    natsio_stored_msg *empty = NULL;
    EXPECT_OK(natsio_js_stream_get_msg(js, "GET", 4, NULL, &empty));
    nt_cleanup(stored_msg_free_cb, empty);
    NT_CHECK_STR_EQ(natsio_stored_msg_subject(empty), "get.c");
    NT_CHECK_INT_EQ(natsio_stored_msg_data_len(empty), 0);

    /* Missing messages and streams, bad subjects; the out stays put. */
    natsio_stored_msg *out = SENTINEL;
    EXPECT_FAILS(NATSIO_ERR_MESSAGE_NOT_FOUND, natsio_js_stream_get_msg(js, "GET", 99, NULL, &out));
    EXPECT_FAILS(NATSIO_ERR_MESSAGE_NOT_FOUND, natsio_js_stream_get_msg(js, "GET", 0, "get.none", &out));
    EXPECT_FAILS(NATSIO_ERR_STREAM_NOT_FOUND, natsio_js_stream_get_msg(js, "GETNONE", 1, NULL, &out));
    EXPECT_FAILS(NATSIO_ERR_BAD_SUBJECT, natsio_js_stream_get_msg(js, "GET", 0, "get b", &out));
    EXPECT_FAILS(NATSIO_ERR_BAD_SUBJECT, natsio_js_stream_get_msg(js, "GET", 0, "get..b", &out));
    EXPECT_FAILS(NATSIO_ERR_BAD_SUBJECT, natsio_js_stream_get_msg(js, "GET", 0, "", &out));
    NT_CHECK(out == SENTINEL);

    /* Delete a message (keeping and erasing its bytes). */
    EXPECT_OK(natsio_js_stream_delete_msg(js, "GET", 3, false));
    EXPECT_FAILS(NATSIO_ERR_MESSAGE_NOT_FOUND, natsio_js_stream_get_msg(js, "GET", 3, NULL, &out));
    EXPECT_FAILS(NATSIO_ERR_MESSAGE_NOT_FOUND, natsio_js_stream_delete_msg(js, "GET", 3, false));
    /* The last on get.b is now the earlier one. */
    natsio_stored_msg *prev = NULL;
    EXPECT_OK(natsio_js_stream_get_msg(js, "GET", 0, "get.b", &prev));
    nt_cleanup(stored_msg_free_cb, prev);
    NT_CHECK_INT_EQ(natsio_stored_msg_seq(prev), 2);
    EXPECT_OK(natsio_js_stream_delete_msg(js, "GET", 2, true));
    EXPECT_FAILS(NATSIO_ERR_MESSAGE_NOT_FOUND, natsio_js_stream_get_msg(js, "GET", 0, "get.b", &out));
    EXPECT_FAILS(NATSIO_ERR_MESSAGE_NOT_FOUND, natsio_js_stream_delete_msg(js, "GET", 99, true));
    EXPECT_FAILS(NATSIO_ERR_STREAM_NOT_FOUND, natsio_js_stream_delete_msg(js, "GETNONE", 1, true));
    NT_CHECK(out == SENTINEL);
    NT_CHECK_INT_EQ(stream_messages(js, "GET"), 2);
    EXPECT_OK(natsio_js_stream_delete(js, "GET"));
}

/* ---- reading by subject, Direct Get, listings ------------------------------ */

/* Publishes a.1 b.1 a.2 b.2 a.3 (seq 1..5) to `prefix`.<subject>. */
static void publish_interleaved(natsio_js *js, const char *prefix) {
    const char *subjects[] = {"a.1", "b.1", "a.2", "b.2", "a.3"};
    for (size_t i = 0; i < NT_COUNT(subjects); i++) {
        char subject[64];
        snprintf(subject, sizeof subject, "%s.%s", prefix, subjects[i]);
        EXPECT_OK(natsio_js_publish(js, subject, subjects[i], strlen(subjects[i]), NULL, NULL));
    }
}

/* Walks `filter` from sequence 1 with natsio_js_stream_get_next_msg until
 * it reports not found; the sequences found go to `seqs` (at most `cap`).
 * Returns how many, or SIZE_MAX on any other status. */
static size_t walk_subject(natsio_js *js, const char *stream, const char *filter, uint64_t *seqs, size_t cap) {
    size_t n = 0;
    uint64_t from = 1;
    for (;;) {
        natsio_stored_msg *m = NULL;
        natsio_status st = natsio_js_stream_get_next_msg(js, stream, from, filter, &m);
        if (st == NATSIO_ERR_MESSAGE_NOT_FOUND) return n;
        if (st != NATSIO_OK || n == cap) {
            natsio_stored_msg_free(m);
            return SIZE_MAX;
        }
        seqs[n++] = natsio_stored_msg_seq(m);
        from = natsio_stored_msg_seq(m) + 1;
        natsio_stored_msg_free(m);
    }
}

static void test_get_msg_with_and_without_direct_get(void) {
    natsio_js *js = connect_js();
    NT_CHECK(js != NULL);
    NT_CHECK(create_stream_config(
        js, "{\"name\":\"DIRECT\",\"subjects\":[\"direct.>\"],\"storage\":\"memory\",\"allow_direct\":true}"));
    NT_CHECK(create_stream_config(js, "{\"name\":\"LEADER\",\"subjects\":[\"leader.>\"],\"storage\":\"memory\"}"));
    publish_interleaved(js, "direct");
    publish_interleaved(js, "leader");

    const char *streams[] = {"DIRECT", "LEADER"};
    for (size_t i = 0; i < 2; i++) {
        const char *stream = streams[i];
        const char *prefix = i == 0 ? "direct" : "leader";
        char a_any[32], b_2[32];
        snprintf(a_any, sizeof a_any, "%s.a.*", prefix);
        snprintf(b_2, sizeof b_2, "%s.b.2", prefix);

        /* The same message by sequence, by last subject, by next subject. */
        natsio_stored_msg *by_seq = NULL, *last = NULL, *next = NULL;
        EXPECT_OK(natsio_js_stream_get_msg(js, stream, 3, NULL, &by_seq));
        nt_cleanup(stored_msg_free_cb, by_seq);
        NT_CHECK_MEM_EQ(natsio_stored_msg_data(by_seq), natsio_stored_msg_data_len(by_seq), "a.2", 3);
        EXPECT_OK(natsio_js_stream_get_msg(js, stream, 0, b_2, &last));
        nt_cleanup(stored_msg_free_cb, last);
        NT_CHECK_INT_EQ(natsio_stored_msg_seq(last), 4);
        NT_CHECK_STR_EQ(natsio_stored_msg_subject(last), b_2);
        EXPECT_OK(natsio_js_stream_get_next_msg(js, stream, 2, a_any, &next));
        nt_cleanup(stored_msg_free_cb, next);
        NT_CHECK_INT_EQ(natsio_stored_msg_seq(next), 3);
        NT_CHECK_MEM_EQ(natsio_stored_msg_data(next), natsio_stored_msg_data_len(next), "a.2", 3);

        /* The last message by a wildcard subject: the last on any subject
         * the filter matches (as nats.go's GetLastMsgForSubject). */
        char b_any[32], all[32], one_token[32];
        snprintf(b_any, sizeof b_any, "%s.b.*", prefix);
        snprintf(all, sizeof all, "%s.>", prefix);
        snprintf(one_token, sizeof one_token, "%s.*", prefix);
        natsio_stored_msg *last_b = NULL, *last_all = NULL, *none = SENTINEL;
        EXPECT_OK(natsio_js_stream_get_msg(js, stream, 0, b_any, &last_b));
        nt_cleanup(stored_msg_free_cb, last_b);
        NT_CHECK_INT_EQ(natsio_stored_msg_seq(last_b), 4);
        NT_CHECK_STR_EQ(natsio_stored_msg_subject(last_b), b_2);
        EXPECT_OK(natsio_js_stream_get_msg(js, stream, 0, all, &last_all));
        nt_cleanup(stored_msg_free_cb, last_all);
        NT_CHECK_INT_EQ(natsio_stored_msg_seq(last_all), 5);
        NT_CHECK_MEM_EQ(natsio_stored_msg_data(last_all), natsio_stored_msg_data_len(last_all), "a.3", 3);
        EXPECT_FAILS(NATSIO_ERR_MESSAGE_NOT_FOUND, natsio_js_stream_get_msg(js, stream, 0, one_token, &none));
        EXPECT_FAILS(NATSIO_ERR_BAD_SUBJECT, natsio_js_stream_get_msg(js, stream, 0, "a.>.b", &none));
        NT_CHECK(none == SENTINEL);

        /* Direct Get answers with its metadata headers; the leader's
         * MSG.GET gives the message's own headers (none here). */
        const natsio_headers *h = natsio_stored_msg_headers(by_seq);
        if (i == 0) {
            const char *v = NULL;
            NT_CHECK(h != NULL);
            EXPECT_OK(natsio_headers_get(h, "Nats-Stream", &v));
            NT_CHECK_STR_EQ(v, "DIRECT");
        } else {
            NT_CHECK(h == NULL);
        }

        /* Walking one subject among interleaved ones. */
        uint64_t seqs[8];
        size_t n = walk_subject(js, stream, a_any, seqs, 8);
        NT_CHECK_INT_EQ(n, 3);
        NT_CHECK(n == 3 && seqs[0] == 1 && seqs[1] == 3 && seqs[2] == 5);
        natsio_stored_msg *out = SENTINEL;
        EXPECT_FAILS(NATSIO_ERR_MESSAGE_NOT_FOUND, natsio_js_stream_get_next_msg(js, stream, 6, a_any, &out));
        EXPECT_FAILS(NATSIO_ERR_MESSAGE_NOT_FOUND, natsio_js_stream_get_msg(js, stream, 99, NULL, &out));
        EXPECT_FAILS(NATSIO_ERR_BAD_SUBJECT, natsio_js_stream_get_next_msg(js, stream, 1, "a..b", &out));
        NT_CHECK(out == SENTINEL);

        /* The token form. */
        natsio_token *tok = NULL;
        EXPECT_OK(natsio_js_stream_get_next_msg_async(js, stream, 4, a_any, &tok));
        EXPECT_OK(natsio_token_wait(tok, 5000));
        natsio_stored_msg *via_token = NULL;
        EXPECT_OK(natsio_token_stored_msg(tok, &via_token));
        NT_CHECK_INT_EQ(natsio_stored_msg_seq(via_token), 5);
        natsio_stored_msg_free(via_token);
        natsio_token_free(tok);
    }

    /* Deleted behind this context's back (it read each stream's config
     * already): Direct Get goes unanswered, which reads as not found; the
     * leader's API says the stream is gone. */
    natsio_js *other = connect_js();
    NT_CHECK(other != NULL);
    EXPECT_OK(natsio_js_stream_delete(other, "DIRECT"));
    EXPECT_OK(natsio_js_stream_delete(other, "LEADER"));
    natsio_stored_msg *out = SENTINEL;
    EXPECT_FAILS(NATSIO_ERR_MESSAGE_NOT_FOUND, natsio_js_stream_get_msg(js, "DIRECT", 1, NULL, &out));
    EXPECT_FAILS(NATSIO_ERR_STREAM_NOT_FOUND, natsio_js_stream_get_msg(js, "DIRECT", 1, NULL, &out));
    EXPECT_FAILS(NATSIO_ERR_STREAM_NOT_FOUND, natsio_js_stream_get_msg(js, "LEADER", 1, NULL, &out));
    NT_CHECK(out == SENTINEL);
}

/* Reads every message of a batch read; seqs and subjects (last tokens)
 * go to `seqs` / `tails`. Returns the status that ended it. */
static natsio_status drain_stored_msgs(natsio_stored_msgs *it, uint64_t *seqs, size_t cap, size_t *n) {
    *n = 0;
    for (;;) {
        natsio_stored_msg *m = NULL;
        natsio_status st = natsio_stored_msgs_next(it, 5000, &m);
        if (st != NATSIO_OK) return st;
        if (*n < cap) seqs[*n] = natsio_stored_msg_seq(m);
        (*n)++;
        natsio_stored_msg_free(m);
    }
}

typedef struct {
    atomic_int items;
    atomic_int final_status;
    atomic_bool released;
} batch_seen;

static void on_stored_msg(void *user_data, const natsio_stored_msg *m, natsio_status st) {
    batch_seen *seen = user_data;
    if (m) {
        atomic_fetch_add(&seen->items, 1);
    } else {
        atomic_store(&seen->final_status, st);
    }
}

static void on_batch_release(void *user_data) { atomic_store(&((batch_seen *)user_data)->released, true); }

static void stored_msgs_free_cb(void *it) { natsio_stored_msgs_free((natsio_stored_msgs *)it); }

static void test_get_last_msgs_for(void) {
    natsio_js *js = connect_js();
    NT_CHECK(js != NULL);
    NT_CHECK(create_stream_config(
        js, "{\"name\":\"LASTS\",\"subjects\":[\"lasts.>\"],\"storage\":\"memory\",\"allow_direct\":true}"));
    /* a.1 b.1 a.2 b.2 a.3 (seq 1..5), then a.1 again (seq 6). */
    publish_interleaved(js, "lasts");
    EXPECT_OK(natsio_js_publish(js, "lasts.a.1", "a.1 again", 9, NULL, NULL));

    /* The last of each a.* subject, in stream order: a.2 (3), a.3 (5), a.1 (6). */
    const char *a_only[] = {"lasts.a.*"};
    natsio_stored_msgs *it = NULL;
    EXPECT_OK(natsio_js_stream_get_last_msgs_for(js, "LASTS", a_only, 1, 0, 0, 0, &it));
    nt_cleanup(stored_msgs_free_cb, it);
    uint64_t seqs[16];
    size_t n = 0;
    NT_CHECK_INT_EQ(drain_stored_msgs(it, seqs, 16, &n), NATSIO_DONE);
    NT_CHECK_INT_EQ(n, 3);
    NT_CHECK(n == 3 && seqs[0] == 3 && seqs[1] == 5 && seqs[2] == 6);
    /* Ended: DONE again. */
    natsio_stored_msg *m = SENTINEL;
    NT_CHECK_INT_EQ(natsio_stored_msgs_next(it, 0, &m), NATSIO_DONE);
    NT_CHECK(m == NULL);

    /* Two filters; a batch cap; as of sequence 4 (before a.3 and a.1 again). */
    const char *both[] = {"lasts.a.1", "lasts.b.>"};
    natsio_stored_msgs *two = NULL;
    EXPECT_OK(natsio_js_stream_get_last_msgs_for(js, "LASTS", both, 2, 0, 0, 0, &two));
    nt_cleanup(stored_msgs_free_cb, two);
    NT_CHECK_INT_EQ(drain_stored_msgs(two, seqs, 16, &n), NATSIO_DONE);
    NT_CHECK(n == 3 && seqs[0] == 2 && seqs[1] == 4 && seqs[2] == 6);
    natsio_stored_msgs *capped = NULL;
    EXPECT_OK(natsio_js_stream_get_last_msgs_for(js, "LASTS", both, 2, 2, 0, 0, &capped));
    nt_cleanup(stored_msgs_free_cb, capped);
    NT_CHECK_INT_EQ(drain_stored_msgs(capped, seqs, 16, &n), NATSIO_DONE);
    NT_CHECK(n == 2 && seqs[0] == 2 && seqs[1] == 4);
    natsio_stored_msgs *asof = NULL;
    EXPECT_OK(natsio_js_stream_get_last_msgs_for(js, "LASTS", a_only, 1, 0, 4, 0, &asof));
    nt_cleanup(stored_msgs_free_cb, asof);
    NT_CHECK_INT_EQ(drain_stored_msgs(asof, seqs, 16, &n), NATSIO_DONE);
    NT_CHECK(n == 2 && seqs[0] == 1 && seqs[1] == 3);

    /* Nothing matches: done at once, empty. */
    const char *none[] = {"lasts.zzz"};
    natsio_stored_msgs *empty = NULL;
    EXPECT_OK(natsio_js_stream_get_last_msgs_for(js, "LASTS", none, 1, 0, 0, 0, &empty));
    nt_cleanup(stored_msgs_free_cb, empty);
    NT_CHECK_INT_EQ(drain_stored_msgs(empty, seqs, 16, &n), NATSIO_DONE);
    NT_CHECK_INT_EQ(n, 0);

    /* Push mode: every item, then DONE, then release. */
    batch_seen seen = {0};
    atomic_store(&seen.final_status, -1);
    natsio_stored_msgs *pushed = NULL;
    EXPECT_OK(natsio_js_stream_get_last_msgs_for(js, "LASTS", a_only, 1, 0, 0, 0, &pushed));
    EXPECT_OK(natsio_stored_msgs_set_callback(pushed, on_stored_msg, &seen, on_batch_release));
    for (int i = 0; i < 500 && !atomic_load(&seen.released); i++) nt_sleep_ms(10);
    NT_CHECK(atomic_load(&seen.released));
    NT_CHECK_INT_EQ(atomic_load(&seen.items), 3);
    NT_CHECK_INT_EQ(atomic_load(&seen.final_status), NATSIO_DONE);
    natsio_iter_stats stats;
    EXPECT_OK(natsio_stored_msgs_get_stats(pushed, &stats));
    NT_CHECK_INT_EQ(stats.delivered, 3);
    natsio_stored_msgs_free(pushed);

    /* Tokens. */
    natsio_stored_msgs *tokened = NULL;
    EXPECT_OK(natsio_js_stream_get_last_msgs_for(js, "LASTS", a_only, 1, 1, 0, 0, &tokened));
    nt_cleanup(stored_msgs_free_cb, tokened);
    natsio_token *tok = NULL;
    EXPECT_OK(natsio_stored_msgs_next_async(tokened, &tok));
    EXPECT_OK(natsio_token_wait(tok, 5000));
    natsio_stored_msg *first = NULL;
    EXPECT_OK(natsio_token_stored_msg(tok, &first));
    NT_CHECK_INT_EQ(natsio_stored_msg_seq(first), 3);
    natsio_stored_msg_free(first);
    natsio_token_free(tok);
    EXPECT_OK(natsio_stored_msgs_next_async(tokened, &tok));
    EXPECT_OK(natsio_token_wait(tok, 5000));
    NT_CHECK_INT_EQ(natsio_token_status(tok), NATSIO_DONE);
    natsio_token_free(tok);

    /* Stopped early: DONE. */
    natsio_stored_msgs *stopped = NULL;
    EXPECT_OK(natsio_js_stream_get_last_msgs_for(js, "LASTS", a_only, 1, 0, 0, 0, &stopped));
    nt_cleanup(stored_msgs_free_cb, stopped);
    EXPECT_OK(natsio_stored_msgs_stop(stopped));
    EXPECT_OK(natsio_stored_msgs_stop(stopped));
    NT_CHECK_INT_EQ(natsio_stored_msgs_next(stopped, 1000, &m), NATSIO_DONE);

    /* A stream without Direct Get, and no stream: nobody answers. */
    NT_CHECK(create_stream(js, "NODIRECT", "nodirect.>"));
    const char *nd[] = {"nodirect.>"};
    natsio_stored_msgs *unanswered = NULL;
    EXPECT_OK(natsio_js_stream_get_last_msgs_for(js, "NODIRECT", nd, 1, 0, 0, 0, &unanswered));
    nt_cleanup(stored_msgs_free_cb, unanswered);
    NT_CHECK_INT_EQ(drain_stored_msgs(unanswered, seqs, 16, &n), NATSIO_ERR_NO_RESPONDERS);
    NT_CHECK_INT_EQ(n, 0);
    /* The error ends it: the same error again. */
    NT_CHECK_INT_EQ(natsio_stored_msgs_next(unanswered, 0, &m), NATSIO_ERR_NO_RESPONDERS);

    /* Bad input loses nothing. */
    natsio_stored_msgs *out = SENTINEL;
    EXPECT_NULL_ARG("js", natsio_js_stream_get_last_msgs_for(NULL, "LASTS", a_only, 1, 0, 0, 0, &out));
    EXPECT_NULL_ARG("stream", natsio_js_stream_get_last_msgs_for(js, NULL, a_only, 1, 0, 0, 0, &out));
    EXPECT_NULL_ARG("subjects", natsio_js_stream_get_last_msgs_for(js, "LASTS", NULL, 1, 0, 0, 0, &out));
    EXPECT_NULL_ARG("msgs_out", natsio_js_stream_get_last_msgs_for(js, "LASTS", a_only, 1, 0, 0, 0, NULL));
    const char *with_null[] = {"lasts.a.1", NULL};
    EXPECT_NULL_ARG("subject", natsio_js_stream_get_last_msgs_for(js, "LASTS", with_null, 2, 0, 0, 0, &out));
    const char *bad_utf8[] = {BAD_UTF8};
    EXPECT_FAILS_NAMING(NATSIO_ERR_INVALID_UTF8, "subject",
                        natsio_js_stream_get_last_msgs_for(js, "LASTS", bad_utf8, 1, 0, 0, 0, &out));
    const char *bad[] = {"lasts..a"};
    EXPECT_FAILS(NATSIO_ERR_BAD_SUBJECT, natsio_js_stream_get_last_msgs_for(js, "LASTS", bad, 1, 0, 0, 0, &out));
    EXPECT_FAILS(NATSIO_ERR_INVALID_ARGUMENT, natsio_js_stream_get_last_msgs_for(js, "LASTS", a_only, 0, 0, 0, 0, &out));
    EXPECT_FAILS(NATSIO_ERR_INVALID_ARGUMENT, natsio_js_stream_get_last_msgs_for(js, "LASTS", a_only, 1, 0, 4,
                                                                                 now_realtime_ns(), &out));
    EXPECT_FAILS(NATSIO_ERR_INVALID_ARGUMENT, natsio_js_stream_get_last_msgs_for(js, "LA.STS", a_only, 1, 0, 0, 0, &out));
    NT_CHECK(out == SENTINEL);
    natsio_stored_msg *mo = SENTINEL;
    EXPECT_NULL_ARG("msgs", natsio_stored_msgs_next(NULL, 0, &mo));
    EXPECT_NULL_ARG("msg_out", natsio_stored_msgs_next(it, 0, NULL));
    NT_CHECK(mo == SENTINEL);
    EXPECT_NULL_ARG("msgs", natsio_stored_msgs_stop(NULL));
    EXPECT_NULL_ARG("cb", natsio_stored_msgs_set_callback(it, NULL, NULL, NULL));
    natsio_stored_msgs_free(NULL);
    EXPECT_OK(natsio_js_stream_delete(js, "LASTS"));
    EXPECT_OK(natsio_js_stream_delete(js, "NODIRECT"));
}

/* The entry of `list` whose "config" names `name`, or NULL. */
static const char *info_named(const natsio_string_list *list, const char *name) {
    char needle[80];
    snprintf(needle, sizeof needle, "\"name\":\"%s\"", name);
    for (size_t i = 0; i < natsio_string_list_count(list); i++) {
        const char *info = natsio_string_list_get(list, i);
        if (strstr(info, needle)) return info;
    }
    return NULL;
}

static void test_stream_infos_subjects_and_api_level(void) {
    natsio_js *js = connect_js();
    NT_CHECK(js != NULL);
    NT_CHECK(create_stream(js, "LISTA", "lista.>"));
    NT_CHECK(create_stream(js, "LISTB", "listb.>"));
    publish_interleaved(js, "lista");
    EXPECT_OK(natsio_js_publish(js, "lista.a.1", "again", 5, NULL, NULL));

    /* Every stream, with its config and state. */
    natsio_string_list *all = NULL;
    EXPECT_OK(natsio_js_stream_infos(js, NULL, &all));
    nt_cleanup(string_list_free_cb, all);
    const char *a = info_named(all, "LISTA");
    NT_CHECK(a != NULL && info_named(all, "LISTB") != NULL);
    int64_t messages = -1;
    NT_CHECK(a && json_int(strstr(a, "\"state\""), "messages", &messages));
    NT_CHECK_INT_EQ(messages, 6);

    /* Only those holding a subject; the token form too. */
    natsio_token *tok = NULL;
    EXPECT_OK(natsio_js_stream_infos_async(js, "listb.x", &tok));
    EXPECT_OK(natsio_token_wait(tok, 5000));
    natsio_string_list *only_b = NULL;
    EXPECT_OK(natsio_token_string_list(tok, &only_b));
    natsio_token_free(tok);
    nt_cleanup(string_list_free_cb, only_b);
    NT_CHECK_INT_EQ(natsio_string_list_count(only_b), 1);
    NT_CHECK(info_named(only_b, "LISTB") != NULL);

    /* Per-subject counts for a filter. */
    char *info = NULL;
    EXPECT_OK(natsio_js_stream_info(js, "LISTA", STREAM_SUBJECTS("lista.a.>"), &info));
    nt_cleanup(string_free_cb, info);
    const char *subjects = strstr(info, "\"subjects\":{");
    NT_CHECK_MSG(subjects != NULL, "no subjects map in %s", info);
    int64_t a1 = -1, a2 = -1, a3 = -1;
    NT_CHECK(subjects && json_int(subjects, "lista.a.1", &a1) && json_int(subjects, "lista.a.2", &a2) &&
             json_int(subjects, "lista.a.3", &a3));
    NT_CHECK(a1 == 2 && a2 == 1 && a3 == 1);
    NT_CHECK(subjects && strstr(subjects, "lista.b.") == NULL);
    /* Without the filter (NULL options, or a NULL filter) the info has no
     * subject map. */
    char *plain = NULL;
    EXPECT_OK(natsio_js_stream_info(js, "LISTA", NULL, &plain));
    NT_CHECK(strstr(plain, "\"subjects\":{") == NULL);
    natsio_string_free(plain);
    plain = NULL;
    EXPECT_OK(natsio_js_stream_info(js, "LISTA", STREAM_SUBJECTS(NULL), &plain));
    NT_CHECK(plain != NULL && strstr(plain, "\"subjects\":{") == NULL);
    natsio_string_free(plain);
    EXPECT_OK(natsio_js_stream_info_async(js, "LISTA", STREAM_SUBJECTS("lista.b.2"), &tok));
    EXPECT_OK(natsio_token_wait(tok, 5000));
    char *b_info = NULL;
    EXPECT_OK(natsio_token_string(tok, &b_info));
    natsio_token_free(tok);
    NT_CHECK(strstr(b_info, "\"subjects\":{\"lista.b.2\":1}") != NULL);
    natsio_string_free(b_info);

    /* The server (2.14) reports its API level. */
    uint64_t level = 0;
    EXPECT_OK(natsio_js_api_level(js, &level));
    NT_CHECK_MSG(level >= 1, "api level %llu", (unsigned long long)level);
    EXPECT_OK(natsio_js_api_level_async(js, &tok));
    EXPECT_OK(natsio_token_wait(tok, 5000));
    uint64_t level2 = 0;
    EXPECT_OK(natsio_token_u64(tok, &level2));
    natsio_token_free(tok);
    NT_CHECK_INT_EQ(level2, level);

    EXPECT_OK(natsio_js_stream_delete(js, "LISTA"));
    EXPECT_OK(natsio_js_stream_delete(js, "LISTB"));
}

static void test_counter_and_plain_pub_acks(void) {
    natsio_js *js = connect_js();
    NT_CHECK(js != NULL);
    NT_CHECK(create_stream_config(js, "{\"name\":\"COUNT\",\"subjects\":[\"count.>\"],\"storage\":\"memory\","
                                      "\"allow_msg_counter\":true}"));
    natsio_headers *h = NULL;
    EXPECT_OK(natsio_headers_new(&h));
    nt_cleanup(headers_free_cb, h);
    EXPECT_OK(natsio_headers_set(h, "Nats-Incr", "5"));
    natsio_js_publish_options o = pub_options();
    o.headers = h;
    natsio_pub_ack *first = NULL, *second = NULL;
    EXPECT_OK(natsio_js_publish(js, "count.hits", NULL, 0, &o, &first));
    nt_cleanup(pub_ack_free_cb, first);
    EXPECT_OK(natsio_js_publish(js, "count.hits", NULL, 0, &o, &second));
    nt_cleanup(pub_ack_free_cb, second);
    NT_CHECK_STR_EQ(natsio_pub_ack_val(first), "5");
    NT_CHECK_STR_EQ(natsio_pub_ack_val(second), "10");

    /* A plain publish: no counter value, no batch. */
    NT_CHECK(create_stream(js, "PLAIN", "plain.>"));
    natsio_pub_ack *plain = NULL;
    EXPECT_OK(natsio_js_publish(js, "plain.x", "x", 1, NULL, &plain));
    nt_cleanup(pub_ack_free_cb, plain);
    NT_CHECK(natsio_pub_ack_val(plain) == NULL);
    NT_CHECK(natsio_pub_ack_batch_id(plain) == NULL);
    NT_CHECK_INT_EQ(natsio_pub_ack_batch_size(plain), 0);
    NT_CHECK(natsio_pub_ack_val(NULL) == NULL && natsio_pub_ack_batch_id(NULL) == NULL);
    NT_CHECK_INT_EQ(natsio_pub_ack_batch_size(NULL), 0);
    EXPECT_OK(natsio_js_stream_delete(js, "COUNT"));
    EXPECT_OK(natsio_js_stream_delete(js, "PLAIN"));
}

/* ---- create-or-update from many places at once ------------------------------ */

typedef struct {
    natsio_js *js;
    int index;
    bool bucket;
    natsio_status status;
    char detail[256];
} asserter;

static void *assert_config(void *arg) {
    asserter *a = arg;
    char cfg[256];
    if (a->bucket) {
        snprintf(cfg, sizeof cfg, "{\"bucket\":\"racing\",\"description\":\"asserter %d\",\"storage\":\"memory\"}",
                 a->index);
        natsio_kv *kv = NULL;
        a->status = natsio_js_kv_create(a->js, cfg, NATSIO_CREATE_OR_UPDATE, &kv);
        natsio_kv_free(kv);
    } else {
        snprintf(cfg, sizeof cfg,
                 "{\"name\":\"RACING\",\"subjects\":[\"racing.>\"],\"storage\":\"memory\","
                 "\"description\":\"asserter %d\"}",
                 a->index);
        a->status = natsio_js_stream_create(a->js, cfg, NATSIO_CREATE_OR_UPDATE, NULL);
    }
    if (a->status != NATSIO_OK) snprintf(a->detail, sizeof a->detail, "%s", natsio_last_error());
    return NULL;
}

static void test_concurrent_create_or_update_all_succeed(void) {
    enum { ASSERTERS = 8, ROUNDS = 3 };
    natsio_js *js = connect_js();
    NT_CHECK(js != NULL);
    for (int round = 0; round < ROUNDS; round++) {
        for (int bucket = 0; bucket < 2; bucket++) {
            asserter a[ASSERTERS];
            pthread_t threads[ASSERTERS];
            for (int i = 0; i < ASSERTERS; i++) {
                a[i] = (asserter){.js = js, .index = i, .bucket = bucket};
                NT_CHECK(pthread_create(&threads[i], NULL, assert_config, &a[i]) == 0);
            }
            for (int i = 0; i < ASSERTERS; i++) pthread_join(threads[i], NULL);
            for (int i = 0; i < ASSERTERS; i++) {
                NT_CHECK_MSG(a[i].status == NATSIO_OK, "round %d %s asserter %d: %s: %s", round,
                             bucket ? "bucket" : "stream", i, natsio_status_str(a[i].status), a[i].detail);
            }
            /* One of them won last; the resource exists with its config. */
            char *info = NULL;
            EXPECT_OK(natsio_js_stream_info(js, bucket ? "KV_racing" : "RACING", NULL, &info));
            NT_CHECK(info && strstr(info, "\"description\":\"asserter ") != NULL);
            natsio_string_free(info);
            EXPECT_OK(bucket ? natsio_js_kv_delete(js, "racing") : natsio_js_stream_delete(js, "RACING"));
        }
    }
}

/* ---- asynchronous publishing ----------------------------------------------- */

typedef struct {
    natsio_token **tokens;
    size_t count;
    unsigned char *seen;
} token_batch;

static void free_token_batch(void *arg) {
    token_batch *b = (token_batch *)arg;
    for (size_t i = 0; i < b->count; i++) natsio_token_free(b->tokens[i]);
    free(b->tokens);
    free(b->seen);
    free(b);
}

static token_batch *new_token_batch(size_t n) {
    token_batch *b = (token_batch *)calloc(1, sizeof *b);
    if (!b) return NULL;
    b->tokens = (natsio_token **)calloc(n, sizeof *b->tokens);
    b->seen = (unsigned char *)calloc(n + 1, 1);
    if (!b->tokens || !b->seen) {
        free(b->tokens);
        free(b->seen);
        free(b);
        return NULL;
    }
    nt_cleanup(free_token_batch, b);
    return b;
}

static void test_publish_async_window_acks_every_message(void) {
    enum { N = 5000, WINDOW = 128 };
    natsio_js_options jo = js_options();
    jo.publish_async_max_pending = WINDOW;
    natsio_js *js = connect_js_with(&jo);
    NT_CHECK(js != NULL);
    NT_CHECK(create_stream(js, "ASYNC", "async.>"));
    token_batch *b = new_token_batch(N);
    NT_CHECK(b != NULL);

    size_t max_seen_pending = 0;
    for (size_t i = 0; i < N; i++) {
        char payload[32];
        int len = snprintf(payload, sizeof payload, "m%zu", i);
        natsio_status st = natsio_js_publish_async(js, "async.x", payload, (size_t)len, NULL, &b->tokens[i]);
        NT_CHECK_MSG(st == NATSIO_OK, "publish %zu: %s (%s)", i, natsio_status_str(st), natsio_last_error());
        b->count = i + 1;
        size_t pending = natsio_js_publish_async_pending(js);
        if (pending > max_seen_pending) max_seen_pending = pending;
    }
    NT_CHECK_MSG(max_seen_pending <= WINDOW, "%zu pending with a window of %d", max_seen_pending, WINDOW);
    EXPECT_OK(natsio_js_publish_async_complete(js, 10000));
    NT_CHECK_INT_EQ(natsio_js_publish_async_pending(js), 0);

    /* Every token completed with its own ack: sequences 1..N, each once. */
    for (size_t i = 0; i < N; i++) {
        natsio_token *t = b->tokens[i];
        NT_CHECK_MSG(natsio_token_is_done(t), "token %zu not done after publish_async_complete", i);
        NT_CHECK_INT_EQ(natsio_token_status(t), NATSIO_OK);
        natsio_pub_ack *ack = NULL;
        natsio_status st = natsio_token_pub_ack(t, &ack);
        NT_CHECK_MSG(st == NATSIO_OK, "token %zu: %s (%s)", i, natsio_status_str(st), natsio_last_error());
        uint64_t seq = natsio_pub_ack_seq(ack);
        bool stream_ok = natsio_pub_ack_stream(ack) && strcmp(natsio_pub_ack_stream(ack), "ASYNC") == 0;
        bool dup = natsio_pub_ack_duplicate(ack);
        natsio_pub_ack_free(ack);
        NT_CHECK_MSG(seq >= 1 && seq <= N, "token %zu: seq %llu", i, (unsigned long long)seq);
        NT_CHECK_MSG(!b->seen[seq], "seq %llu acked twice", (unsigned long long)seq);
        b->seen[seq] = 1;
        NT_CHECK(stream_ok && !dup);
    }
    NT_CHECK_INT_EQ(stream_messages(js, "ASYNC"), N);
    /* In order on one connection: the first and last payloads. */
    NT_CHECK(stored_payload_is(js, "ASYNC", 1, "m0"));
    NT_CHECK(stored_payload_is(js, "ASYNC", N, "m4999"));
    EXPECT_OK(natsio_js_stream_delete(js, "ASYNC"));
}

static struct {
    atomic_long calls;
    atomic_long ok;
    atomic_long released;
    atomic_long last_status;
    atomic_ullong seq_sum;
} g_cb;

static void on_publish_done(void *user_data, natsio_token *token) {
    (void)user_data;
    atomic_store(&g_cb.last_status, natsio_token_status(token));
    natsio_pub_ack *ack = NULL;
    if (natsio_token_pub_ack(token, &ack) == NATSIO_OK) {
        atomic_fetch_add(&g_cb.seq_sum, natsio_pub_ack_seq(ack));
        atomic_fetch_add(&g_cb.ok, 1);
        natsio_pub_ack_free(ack);
    }
    atomic_fetch_add(&g_cb.calls, 1);
}

static void on_release(void *user_data) {
    (void)user_data;
    atomic_fetch_add(&g_cb.released, 1);
}

static void test_publish_async_token_callbacks(void) {
    enum { N = 200 };
    memset(&g_cb, 0, sizeof g_cb);
    natsio_js *js = connect_js();
    NT_CHECK(js != NULL);
    NT_CHECK(create_stream(js, "ASYNCCB", "asynccb.>"));
    token_batch *b = new_token_batch(N);
    NT_CHECK(b != NULL);
    for (size_t i = 0; i < N; i++) {
        EXPECT_OK(natsio_js_publish_async(js, "asynccb.x", "p", 1, NULL, &b->tokens[i]));
        b->count = i + 1;
        EXPECT_OK(natsio_token_on_complete(b->tokens[i], on_publish_done, NULL, on_release));
    }
    NT_CHECK_MSG(wait_at_least(&g_cb.calls, N, 10000), "%ld of %d callbacks ran", atomic_load(&g_cb.calls), N);
    NT_CHECK_INT_EQ(atomic_load(&g_cb.ok), N);
    NT_CHECK_INT_EQ(atomic_load(&g_cb.seq_sum), (uint64_t)N * (N + 1) / 2); /* 1..N once each */
    NT_CHECK(wait_at_least(&g_cb.released, N, 5000));
    NT_CHECK_INT_EQ(atomic_load(&g_cb.calls), N);

    /* Registered after completion: runs at once. A second registration is refused. */
    memset(&g_cb, 0, sizeof g_cb);
    EXPECT_FAILS(NATSIO_ERR_ILLEGAL_STATE, natsio_token_on_complete(b->tokens[0], on_publish_done, NULL, NULL));
    natsio_token *late = NULL;
    EXPECT_OK(natsio_js_publish_async(js, "asynccb.late", "p", 1, NULL, &late));
    nt_cleanup(token_free_cb, late);
    EXPECT_OK(natsio_token_wait(late, 5000));
    EXPECT_OK(natsio_token_on_complete(late, on_publish_done, NULL, on_release));
    NT_CHECK(wait_at_least(&g_cb.calls, 1, 5000));
    NT_CHECK_INT_EQ(atomic_load(&g_cb.seq_sum), N + 1);

    /* No stream: the token fails with NO_STREAM_RESPONSE, callback too. */
    memset(&g_cb, 0, sizeof g_cb);
    natsio_token *t = NULL;
    EXPECT_OK(natsio_js_publish_async(js, "nostream.async", "x", 1, NULL, &t));
    nt_cleanup(token_free_cb, t);
    EXPECT_OK(natsio_token_on_complete(t, on_publish_done, NULL, on_release));
    EXPECT_OK(natsio_token_wait(t, 5000));
    EXPECT_FAILS(NATSIO_ERR_NO_STREAM_RESPONSE, natsio_token_status(t));
    natsio_pub_ack *out = SENTINEL;
    EXPECT_FAILS(NATSIO_ERR_NO_STREAM_RESPONSE, natsio_token_pub_ack(t, &out));
    NT_CHECK(out == SENTINEL);
    NT_CHECK(wait_at_least(&g_cb.calls, 1, 5000));
    NT_CHECK_INT_EQ(atomic_load(&g_cb.last_status), NATSIO_ERR_NO_STREAM_RESPONSE);
    NT_CHECK_INT_EQ(atomic_load(&g_cb.ok), 0);
    EXPECT_OK(natsio_js_stream_delete(js, "ASYNCCB"));
}

static void test_publish_async_stalls_then_times_out(void) {
    char subj[128];
    natsio_client *c = connect_client();
    NT_CHECK(c != NULL);
    /* A plain subscriber that never acks stands in for a stuck stream. */
    NT_CHECK(subscribe_and_flush(c, case_subject(subj, sizeof subj, "stuck")) != NULL);
    natsio_js_options jo = js_options();
    jo.publish_async_max_pending = 2;
    /* The stall is bounded well apart from the ack timeout, so that the
     * slots stay taken for the whole stall even under valgrind. */
    jo.publish_async_stall_wait_ms = 300;
    jo.publish_async_timeout_ms = 3000;
    natsio_js *js = new_jetstream(c, &jo);
    NT_CHECK(js != NULL);

    natsio_token *t1 = NULL, *t2 = NULL;
    EXPECT_OK(natsio_js_publish_async(js, subj, "1", 1, NULL, &t1));
    nt_cleanup(token_free_cb, t1);
    EXPECT_OK(natsio_js_publish_async(js, subj, "2", 1, NULL, &t2));
    nt_cleanup(token_free_cb, t2);
    NT_CHECK_INT_EQ(natsio_js_publish_async_pending(js), 2);
    /* Still waiting: the ack is pending, and the token says so. */
    natsio_pub_ack *ack = SENTINEL;
    NT_CHECK_INT_EQ(natsio_token_pub_ack(t1, &ack), NATSIO_PENDING);
    NT_CHECK(ack == SENTINEL);
    NT_CHECK_INT_EQ(natsio_token_status(t1), NATSIO_PENDING);

    natsio_token *t3 = SENTINEL;
    int64_t start = nt_now_ms();
    EXPECT_FAILS(NATSIO_ERR_TOO_MANY_STALLED, natsio_js_publish_async(js, subj, "3", 1, NULL, &t3));
    int64_t stalled = nt_now_ms() - start;
    NT_CHECK(t3 == SENTINEL);
    NT_CHECK_MSG(stalled >= 290 && stalled < 2500, "stalled for %lld ms (stall wait 300 ms, acks time out after 3 s)",
                 (long long)stalled);
    NT_CHECK_INT_EQ(natsio_js_publish_async_pending(js), 2);
    EXPECT_FAILS(NATSIO_ERR_TIMEOUT, natsio_js_publish_async_complete(js, 10));

    /* The acks never come: both fail with ASYNC_PUBLISH_TIMEOUT. */
    EXPECT_OK(natsio_token_wait(t1, 10000));
    EXPECT_OK(natsio_token_wait(t2, 10000));
    EXPECT_FAILS(NATSIO_ERR_ASYNC_PUBLISH_TIMEOUT, natsio_token_status(t1));
    EXPECT_FAILS(NATSIO_ERR_ASYNC_PUBLISH_TIMEOUT, natsio_token_pub_ack(t2, &ack));
    NT_CHECK(ack == SENTINEL);
    EXPECT_OK(natsio_js_publish_async_complete(js, 1000));
    NT_CHECK_INT_EQ(natsio_js_publish_async_pending(js), 0);

    /* Room again; a cancelled publish frees its slot. */
    natsio_token *t4 = NULL;
    EXPECT_OK(natsio_js_publish_async(js, subj, "4", 1, NULL, &t4));
    nt_cleanup(token_free_cb, t4);
    NT_CHECK_INT_EQ(natsio_js_publish_async_pending(js), 1);
    EXPECT_OK(natsio_token_cancel(t4));
    EXPECT_OK(natsio_token_wait(t4, 1000));
    EXPECT_FAILS(NATSIO_ERR_CANCELLED, natsio_token_pub_ack(t4, &ack));
    NT_CHECK(ack == SENTINEL);
    NT_CHECK_INT_EQ(natsio_js_publish_async_pending(js), 0);

    /* A synchronous publish without an ack times out as a plain timeout. */
    natsio_js_publish_options po = pub_options();
    po.timeout_ms = 100;
    natsio_pub_ack *never = SENTINEL;
    EXPECT_FAILS(NATSIO_ERR_TIMEOUT, natsio_js_publish(js, subj, "6", 1, &po, &never));
    NT_CHECK(never == SENTINEL);
}

/* natsio_js_publish_request_async is natsio_js_publish as a token, not the
 * windowed natsio_js_publish_async: a full window neither stalls nor
 * refuses it, and it waits for its ack up to the context's timeout, past
 * the async publish timeout that fails a windowed publish. */
static void test_publish_request_async_is_the_synchronous_publish(void) {
    char subj[128], stored[128];
    natsio_client *c = connect_client();
    NT_CHECK(c != NULL);
    /* A plain subscriber that never acks stands in for a stuck stream. */
    natsio_sub *stuck = subscribe_and_flush(c, case_subject(subj, sizeof subj, "stuck"));
    NT_CHECK(stuck != NULL);
    natsio_js_options jo = js_options();
    jo.publish_async_max_pending = 1;
    jo.publish_async_stall_wait_ms = 200;
    jo.publish_async_timeout_ms = 1500;
    jo.timeout_ms = 30000;
    natsio_js *js = new_jetstream(c, &jo);
    NT_CHECK(js != NULL);
    NT_CHECK(create_stream(js, "PUBREQ", case_subject(stored, sizeof stored, "stored")));

    /* A token-form publish to the stuck subject, then a windowed one that
     * fills the window of one. */
    natsio_token *slow = NULL, *windowed = NULL;
    EXPECT_OK(natsio_js_publish_request_async(js, subj, "slow", 4, NULL, &slow));
    nt_cleanup(token_free_cb, slow);
    EXPECT_OK(natsio_js_publish_async(js, subj, "w", 1, NULL, &windowed));
    nt_cleanup(token_free_cb, windowed);
    NT_CHECK_INT_EQ(natsio_js_publish_async_pending(js), 1);
    natsio_token *refused = SENTINEL;
    EXPECT_FAILS(NATSIO_ERR_TOO_MANY_STALLED, natsio_js_publish_async(js, stored, "x", 1, NULL, &refused));
    NT_CHECK(refused == SENTINEL);

    /* The full window does not hold the token form: it completes with the
     * stream's ack, and takes no slot. */
    natsio_token *acked = NULL;
    EXPECT_OK(natsio_js_publish_request_async(js, stored, "s", 1, NULL, &acked));
    nt_cleanup(token_free_cb, acked);
    EXPECT_OK(natsio_token_wait(acked, 10000));
    natsio_pub_ack *ack = NULL;
    EXPECT_OK(natsio_token_pub_ack(acked, &ack));
    NT_CHECK_STR_EQ(natsio_pub_ack_stream(ack), "PUBREQ");
    NT_CHECK_INT_EQ(natsio_pub_ack_seq(ack), 1);
    natsio_pub_ack_free(ack);
    NT_CHECK_INT_EQ(natsio_js_publish_async_pending(js), 1);

    /* The windowed publish fails with ASYNC_PUBLISH_TIMEOUT; the older
     * token-form one still waits, and takes the ack given late. */
    EXPECT_OK(natsio_token_wait(windowed, 10000));
    EXPECT_FAILS(NATSIO_ERR_ASYNC_PUBLISH_TIMEOUT, natsio_token_status(windowed));
    NT_CHECK_INT_EQ(natsio_token_status(slow), NATSIO_PENDING);
    natsio_msg *request = NULL;
    for (int i = 0; i < 2 && request == NULL; i++) {
        natsio_msg *m = NULL;
        EXPECT_OK(natsio_sub_next(stuck, 5000, &m));
        if (payload_is(m, "slow"))
            request = m;
        else
            natsio_msg_free(m);
    }
    NT_CHECK(request != NULL);
    nt_cleanup(msg_free_cb, request);
    const char *late = "{\"stream\":\"LATE\",\"seq\":7}";
    EXPECT_OK(natsio_client_publish(c, natsio_msg_reply(request), late, strlen(late)));
    EXPECT_OK(natsio_token_wait(slow, 10000));
    EXPECT_OK(natsio_token_pub_ack(slow, &ack));
    NT_CHECK_STR_EQ(natsio_pub_ack_stream(ack), "LATE");
    NT_CHECK_INT_EQ(natsio_pub_ack_seq(ack), 7);
    natsio_pub_ack_free(ack);
    EXPECT_OK(natsio_js_stream_delete(js, "PUBREQ"));
}

/* Leaves a request of `c` unanswered (its subject's one subscriber never
 * replies) for the rest of the case, so that no asynchronous publish of
 * `c` is the only one awaiting its reply (which is sent at once). */
static bool hold_a_request(natsio_client *c) {
    char subj[128];
    if (subscribe_and_flush(c, case_subject(subj, sizeof subj, "silent")) == NULL) return false;
    natsio_token *t = NULL;
    natsio_status st = natsio_client_request_async(c, subj, NULL, "q", 1, 60000, &t);
    if (st != NATSIO_OK) {
        nt_fail_at(__FILE__, __LINE__, "request: %s (%s)", natsio_status_str(st), natsio_last_error());
        return false;
    }
    nt_cleanup(token_free_cb, t);
    return true;
}

static bool token_done(void *t) { return natsio_token_is_done((natsio_token *)t); }

/* `n` asynchronous publishes of `len` bytes with defer_send into `tokens`
 * (freed when the case ends). */
static bool publish_deferred(natsio_js *js, const char *subject, size_t len, natsio_token **tokens, size_t n) {
    static char payload[1024];
    natsio_js_publish_options po = pub_options();
    po.defer_send = true;
    for (size_t i = 0; i < n; i++) {
        natsio_status st = natsio_js_publish_async(js, subject, payload, len, &po, &tokens[i]);
        if (st != NATSIO_OK) {
            nt_fail_at(__FILE__, __LINE__, "publish %zu: %s (%s)", i, natsio_status_str(st), natsio_last_error());
            return false;
        }
        nt_cleanup(token_free_cb, tokens[i]);
    }
    return true;
}

static void test_deferred_publishes_arrive_in_order(void) {
    natsio_client *c = connect_client_past_first_ping();
    NT_CHECK(c != NULL);
    natsio_js *js = new_jetstream(c, NULL);
    NT_CHECK(js != NULL);
    NT_CHECK(create_stream(js, "DEFER", "defer.>"));
    NT_CHECK(hold_a_request(c));
    natsio_js_publish_options deferred = pub_options();
    deferred.defer_send = true;

    /* The first wakes the idle writer; the next two, 0.3 ms later, find
     * it looking again within its tick (deferred frames came), and wake
     * nothing: only that tick sends them (no call, no wait, no other
     * frame; the server's next PING is minutes away). */
    natsio_token *t[3];
    NT_CHECK(publish_deferred(js, "defer.a", 1, t, 1));
    nanosleep(&(struct timespec){.tv_sec = 0, .tv_nsec = 300000}, NULL);
    NT_CHECK(publish_deferred(js, "defer.a", 1, t + 1, 2));
    NT_CHECK_MSG(nt_wait_until(token_done, t[2], 5000), "deferred publishes never sent");
    for (int i = 0; i < 3; i++) NT_CHECK_INT_EQ(natsio_token_status(t[i]), NATSIO_OK);

    /* Deferred and plain ones, then natsio_client_send_deferred: stored in
     * the order they were published. */
    const char *order[] = {"d1", "p2", "d3", "d4", "p5", "d6"};
    natsio_token *u[6];
    for (int i = 0; i < 6; i++) {
        bool defer = order[i][0] == 'd';
        EXPECT_OK(natsio_js_publish_async(js, "defer.b", order[i], 2, defer ? &deferred : NULL, &u[i]));
        nt_cleanup(token_free_cb, u[i]);
    }
    EXPECT_OK(natsio_client_send_deferred(c));
    EXPECT_OK(natsio_client_send_deferred(c)); /* nothing left: harmless */
    NT_CHECK(nt_wait_until(token_done, u[5], 5000));
    for (int i = 0; i < 6; i++) {
        NT_CHECK_INT_EQ(natsio_token_status(u[i]), NATSIO_OK);
        NT_CHECK(stored_payload_is(js, "DEFER", (uint64_t)(4 + i), order[i]));
    }

    /* A wait on a token of the client sends them too. */
    natsio_token *v[2];
    NT_CHECK(publish_deferred(js, "defer.c", 1, v, 2));
    EXPECT_OK(natsio_token_wait(v[1], 5000));
    NT_CHECK_INT_EQ(natsio_token_status(v[1]), NATSIO_OK);
    NT_CHECK(nt_wait_until(token_done, v[0], 5000));
    NT_CHECK_INT_EQ(stream_messages(js, "DEFER"), 11);
    EXPECT_FAILS(NATSIO_ERR_NULL_ARGUMENT, natsio_client_send_deferred(NULL));
    EXPECT_OK(natsio_js_stream_delete(js, "DEFER"));
}

static void test_deferred_publishes_go_out_when_they_must(void) {
    enum { WINDOW = 8, STALLING = 30, BIG = 100 };
    natsio_client *c = connect_client();
    NT_CHECK(c != NULL);
    natsio_js *wide = new_jetstream(c, NULL);
    NT_CHECK(wide != NULL);
    NT_CHECK(create_stream(wide, "DEFER2", "defer2.>"));
    NT_CHECK(hold_a_request(c));

    /* Past 64 KiB queued the writer is woken anyway. */
    natsio_token *big[BIG];
    NT_CHECK(publish_deferred(wide, "defer2.b", 1024, big, BIG));
    NT_CHECK_MSG(nt_wait_until(token_done, big[0], 10000), "100 KiB of deferred publishes: none sent");
    EXPECT_OK(natsio_client_send_deferred(c));
    NT_CHECK(nt_wait_until(token_done, big[BIG - 1], 5000));
    for (int i = 0; i < BIG; i++) NT_CHECK_INT_EQ(natsio_token_status(big[i]), NATSIO_OK);

    /* A publish stalled on the window sends the deferred ones it waits
     * for (else the stall would end in NATSIO_ERR_TOO_MANY_STALLED). */
    natsio_js_options jo = js_options();
    jo.publish_async_max_pending = WINDOW;
    jo.publish_async_stall_wait_ms = 5000;
    natsio_js *js = new_jetstream(c, &jo);
    NT_CHECK(js != NULL);
    natsio_token *t[STALLING];
    NT_CHECK(publish_deferred(js, "defer2.a", 16, t, STALLING));
    /* natsio_js_publish_async_complete sends the rest. */
    EXPECT_OK(natsio_js_publish_async_complete(js, 5000));
    for (int i = 0; i < STALLING; i++) NT_CHECK_INT_EQ(natsio_token_status(t[i]), NATSIO_OK);
    NT_CHECK_INT_EQ(stream_messages(js, "DEFER2"), STALLING + BIG);
    EXPECT_OK(natsio_js_stream_delete(js, "DEFER2"));
}

static void test_publish_async_own_timeout_behind_a_longer_one(void) {
    char subj[128];
    natsio_client *c = connect_client();
    NT_CHECK(c != NULL);
    NT_CHECK(subscribe_and_flush(c, case_subject(subj, sizeof subj, "stuck")) != NULL);
    natsio_js_options jo = js_options();
    jo.publish_async_timeout_ms = 3000;
    natsio_js *js = new_jetstream(c, &jo);
    NT_CHECK(js != NULL);

    /* A publish waits for its ack for the context's 3 s... */
    natsio_token *slow = NULL;
    EXPECT_OK(natsio_js_publish_async(js, subj, "slow", 4, NULL, &slow));
    nt_cleanup(token_free_cb, slow);
    nt_sleep_ms(20);
    /* ...while one with its own 50 ms timeout gives up after 50 ms. */
    natsio_js_publish_options po = pub_options();
    po.timeout_ms = 50;
    natsio_token *fast = NULL;
    int64_t start = nt_now_ms();
    EXPECT_OK(natsio_js_publish_async(js, subj, "fast", 4, &po, &fast));
    nt_cleanup(token_free_cb, fast);
    EXPECT_OK(natsio_token_wait(fast, 5000));
    int64_t took = nt_now_ms() - start;
    EXPECT_FAILS(NATSIO_ERR_ASYNC_PUBLISH_TIMEOUT, natsio_token_status(fast));
    /* Its own timeout, not the earlier publish's: the bound leaves the
     * slow one about a second to go, even under valgrind. */
    NT_CHECK_MSG(took >= 45 && took < 2000, "a 50 ms ack timeout took %lld ms behind a 3 s one", (long long)took);
    NT_CHECK(!natsio_token_is_done(slow));
    EXPECT_OK(natsio_token_wait(slow, 10000));
    EXPECT_FAILS(NATSIO_ERR_ASYNC_PUBLISH_TIMEOUT, natsio_token_status(slow));
    EXPECT_OK(natsio_js_publish_async_complete(js, 1000));
}

static void test_token_kinds(void) {
    char subj[128];
    natsio_client *c = connect_client();
    NT_CHECK(c != NULL);
    natsio_js *js = new_jetstream(c, NULL);
    NT_CHECK(js != NULL);
    NT_CHECK(create_stream(js, "KINDS", "kinds.>"));

    /* A publish token gives an ack, not a message. */
    natsio_token *pub = NULL;
    EXPECT_OK(natsio_js_publish_async(js, "kinds.a", "x", 1, NULL, &pub));
    nt_cleanup(token_free_cb, pub);
    EXPECT_OK(natsio_token_wait(pub, 5000));
    EXPECT_OK(natsio_token_status(pub));
    natsio_msg *m = SENTINEL;
    EXPECT_FAILS(NATSIO_ERR_ILLEGAL_STATE, natsio_token_msg(pub, &m));
    NT_CHECK(m == SENTINEL);
    /* Each call hands out a new ack. */
    natsio_pub_ack *a = NULL, *b = NULL;
    EXPECT_OK(natsio_token_pub_ack(pub, &a));
    nt_cleanup(pub_ack_free_cb, a);
    EXPECT_OK(natsio_token_pub_ack(pub, &b));
    nt_cleanup(pub_ack_free_cb, b);
    NT_CHECK(a != b);
    NT_CHECK_INT_EQ(natsio_pub_ack_seq(a), natsio_pub_ack_seq(b));
    NT_CHECK_INT_EQ(natsio_pub_ack_seq(a), 1);
    EXPECT_FAILS(NATSIO_ERR_ILLEGAL_STATE, natsio_token_cancel(pub));

    /* A request token gives a message, not an ack. */
    NT_CHECK(start_responder(c, case_subject(subj, sizeof subj, "echo"), echo_cb) != NULL);
    natsio_token *req = NULL;
    EXPECT_OK(natsio_client_request_async(c, subj, NULL, "q", 1, 5000, &req));
    nt_cleanup(token_free_cb, req);
    EXPECT_OK(natsio_token_wait(req, 5000));
    natsio_pub_ack *ack = SENTINEL;
    EXPECT_FAILS(NATSIO_ERR_ILLEGAL_STATE, natsio_token_pub_ack(req, &ack));
    NT_CHECK(ack == SENTINEL);
    EXPECT_OK(natsio_token_msg(req, &m));
    natsio_msg_free(m);

    /* So does a flush token: neither. */
    natsio_token *flush = NULL;
    EXPECT_OK(natsio_client_flush_async(c, NATSIO_TIMEOUT_DEFAULT, &flush));
    nt_cleanup(token_free_cb, flush);
    EXPECT_OK(natsio_token_wait(flush, 5000));
    EXPECT_FAILS(NATSIO_ERR_ILLEGAL_STATE, natsio_token_pub_ack(flush, &ack));
    NT_CHECK(ack == SENTINEL);

    /* An ack outlives its token and context. */
    natsio_token *t = NULL;
    EXPECT_OK(natsio_js_publish_async(js, "kinds.b", "y", 1, NULL, &t));
    EXPECT_OK(natsio_token_wait(t, 5000));
    natsio_pub_ack *kept_ack = NULL;
    natsio_status st = natsio_token_pub_ack(t, &kept_ack);
    natsio_token_free(t);
    NT_CHECK_INT_EQ(st, NATSIO_OK);
    nt_cleanup(pub_ack_free_cb, kept_ack);
    EXPECT_OK(natsio_js_stream_delete(js, "KINDS"));
    NT_CHECK_STR_EQ(natsio_pub_ack_stream(kept_ack), "KINDS");
    NT_CHECK_INT_EQ(natsio_pub_ack_seq(kept_ack), 2);
}

static void test_js_free_with_async_publishes_in_flight(void) {
    natsio_client *c = connect_client();
    NT_CHECK(c != NULL);
    natsio_js *setup = new_jetstream(c, NULL);
    NT_CHECK(setup != NULL);
    NT_CHECK(create_stream(setup, "INFLIGHT", "inflight.>"));
    natsio_js *js = NULL;
    EXPECT_OK(natsio_client_jetstream(c, NULL, &js));
    enum { N = 50 };
    natsio_token *tokens[N] = {0};
    for (int i = 0; i < N; i++) {
        natsio_status st = natsio_js_publish_async(js, "inflight.x", "z", 1, NULL, &tokens[i]);
        if (st != NATSIO_OK) {
            for (int j = 0; j < i; j++) natsio_token_free(tokens[j]);
            natsio_js_free(js);
            NT_FAIL("publish %d: %s", i, natsio_status_str(st));
        }
    }
    /* The context goes; its publishes go on and their tokens stay valid. */
    natsio_js_free(js);
    int acked = 0;
    for (int i = 0; i < N; i++) {
        natsio_pub_ack *ack = NULL;
        if (natsio_token_wait(tokens[i], 5000) == NATSIO_OK && natsio_token_pub_ack(tokens[i], &ack) == NATSIO_OK)
            acked++;
        natsio_pub_ack_free(ack);
        natsio_token_free(tokens[i]);
    }
    NT_CHECK_INT_EQ(acked, N);
    NT_CHECK_INT_EQ(stream_messages(setup, "INFLIGHT"), N);
    EXPECT_OK(natsio_js_stream_delete(setup, "INFLIGHT"));
}

/* ---- account info, JetStream not enabled --------------------------------- */

static void test_account_info(void) {
    natsio_js *js = connect_js();
    NT_CHECK(js != NULL);
    NT_CHECK(create_stream(js, "ACCT", "acct.>"));
    char *json = NULL;
    EXPECT_OK(natsio_js_account_info(js, &json));
    kept(json);
    NT_CHECK_MSG(json[0] == '{', "%s", json);
    int64_t streams = 0, memory = -1;
    NT_CHECK_MSG(json_int(json, "streams", &streams), "%s", json);
    NT_CHECK_MSG(streams >= 1, "%s", json);
    NT_CHECK_MSG(json_int(json, "memory", &memory) && memory >= 0, "%s", json);
    NT_CHECK_MSG(strstr(json, "\"limits\"") != NULL, "%s", json);
    EXPECT_OK(natsio_js_stream_delete(js, "ACCT"));
}

static void test_jetstream_not_enabled_for_account(void) {
    nt_server *s = start_server("accounts: { NOJS: { users: [ { user: u, password: p } ] } }\n");
    NT_CHECK(s != NULL);
    char url[128];
    snprintf(url, sizeof url, "nats://u:p@127.0.0.1:%d", nt_server_port(s));
    natsio_client *c = connect_url(url);
    NT_CHECK(c != NULL);
    natsio_js *js = new_jetstream(c, NULL);
    NT_CHECK(js != NULL);
    char *out = SENTINEL_STR;
    natsio_string_list *names = SENTINEL;
    EXPECT_FAILS(NATSIO_ERR_JS_NOT_ENABLED, natsio_js_account_info(js, &out));
    EXPECT_FAILS(NATSIO_ERR_JS_NOT_ENABLED, natsio_js_stream_create(js, "{\"name\":\"S\"}", NATSIO_CREATE, &out));
    EXPECT_FAILS(NATSIO_ERR_JS_NOT_ENABLED, natsio_js_stream_names(js, NULL, &names));
    NT_CHECK(out == SENTINEL_STR && names == SENTINEL);
    /* Through a token: the same error. */
    natsio_token *t = NULL;
    EXPECT_OK(natsio_js_account_info_async(js, &t));
    nt_cleanup(token_free_cb, t);
    NT_CHECK_INT_EQ(token_outcome(t, 5000), NATSIO_ERR_JS_NOT_ENABLED);
    EXPECT_FAILS(NATSIO_ERR_JS_NOT_ENABLED, natsio_token_string(t, &out));
    NT_CHECK(out == SENTINEL_STR);
}

/* ---- use after close --------------------------------------------------------- */

/* Every JetStream call on `js`, whose client is closed, fails with
 * NATSIO_ERR_CONNECTION_CLOSED and leaves its outputs alone. */
static void check_js_calls_fail_closed(natsio_js *js) {
    char *s = SENTINEL_STR;
    natsio_pub_ack *ack = SENTINEL;
    natsio_token *t = SENTINEL;
    natsio_stored_msg *m = SENTINEL;
    uint64_t purged = 42;
    EXPECT_FAILS(NATSIO_ERR_CONNECTION_CLOSED, natsio_js_account_info(js, &s));
    EXPECT_FAILS(NATSIO_ERR_CONNECTION_CLOSED, natsio_js_publish(js, "closed.x", "x", 1, NULL, &ack));
    EXPECT_FAILS(NATSIO_ERR_CONNECTION_CLOSED, natsio_js_publish(js, "closed.x", "x", 1, NULL, NULL));
    EXPECT_FAILS(NATSIO_ERR_CONNECTION_CLOSED, natsio_js_publish_async(js, "closed.x", "x", 1, NULL, &t));
    EXPECT_FAILS(NATSIO_ERR_CONNECTION_CLOSED,
                 natsio_js_stream_create(js, "{\"name\":\"CLOSED\",\"subjects\":[\"closed.>\"]}", NATSIO_CREATE, &s));
    EXPECT_FAILS(NATSIO_ERR_CONNECTION_CLOSED,
                 natsio_js_stream_create(js, "{\"name\":\"CLOSED\",\"subjects\":[\"closed.>\"]}", NATSIO_UPDATE, &s));
    EXPECT_FAILS(NATSIO_ERR_CONNECTION_CLOSED,
                 natsio_js_stream_create(js, "{\"name\":\"CLOSED\",\"subjects\":[\"closed.>\"]}",
                                         NATSIO_CREATE_OR_UPDATE, &s));
    EXPECT_FAILS(NATSIO_ERR_CONNECTION_CLOSED, natsio_js_stream_info(js, "CLOSED", NULL, &s));
    natsio_string_list *names = SENTINEL;
    EXPECT_FAILS(NATSIO_ERR_CONNECTION_CLOSED, natsio_js_stream_names(js, NULL, &names));
    NT_CHECK(names == SENTINEL);
    EXPECT_FAILS(NATSIO_ERR_CONNECTION_CLOSED, natsio_js_stream_purge(js, "CLOSED", NULL, &purged));
    EXPECT_FAILS(NATSIO_ERR_CONNECTION_CLOSED, natsio_js_stream_get_msg(js, "CLOSED", 1, NULL, &m));
    EXPECT_FAILS(NATSIO_ERR_CONNECTION_CLOSED, natsio_js_stream_delete_msg(js, "CLOSED", 1, false));
    EXPECT_FAILS(NATSIO_ERR_CONNECTION_CLOSED, natsio_js_stream_delete(js, "CLOSED"));
    NT_CHECK(s == SENTINEL_STR && ack == SENTINEL && t == SENTINEL && m == SENTINEL);
    NT_CHECK_INT_EQ(purged, 42);
    NT_CHECK_INT_EQ(natsio_js_publish_async_pending(js), 0);
    EXPECT_OK(natsio_js_publish_async_complete(js, 100));
    /* Argument errors are still argument errors. */
    EXPECT_FAILS(NATSIO_ERR_BAD_SUBJECT, natsio_js_publish(js, "a b", "x", 1, NULL, NULL));
}

static void test_use_after_client_close_and_free(void) {
    natsio_client *c = NULL;
    EXPECT_OK(natsio_client_connect_url(nt_server_url(g_server), &c));
    natsio_js *js = NULL;
    natsio_status st = natsio_client_jetstream(c, NULL, &js);
    if (st != NATSIO_OK) natsio_client_free(c);
    NT_CHECK_INT_EQ(st, NATSIO_OK);
    nt_cleanup(js_free_cb, js); /* runs after the client is gone */
    st = natsio_js_stream_create(js, "{\"name\":\"CLOSED\",\"subjects\":[\"closed.>\"],\"storage\":\"memory\"}",
                                 NATSIO_CREATE,
                                 NULL);
    natsio_status closed = natsio_client_close(c);
    if (st != NATSIO_OK || closed != NATSIO_OK) natsio_client_free(c);
    NT_CHECK_INT_EQ(st, NATSIO_OK);
    NT_CHECK_INT_EQ(closed, NATSIO_OK);

    /* Closed: every call fails cleanly. A new context can still be made. */
    check_js_calls_fail_closed(js);
    if (nt_failed()) natsio_client_free(c);
    NT_CHECK(!nt_failed());
    natsio_js *js2 = NULL;
    st = natsio_client_jetstream(c, NULL, &js2);
    if (st == NATSIO_OK) {
        check_js_calls_fail_closed(js2);
        natsio_js_free(js2);
    }
    natsio_client_free(c);
    NT_CHECK_INT_EQ(st, NATSIO_OK);
    NT_CHECK(!nt_failed());

    /* Freed: the context does not keep the client alive, and still fails
     * cleanly; it is freed (at the end of the case) after the client. */
    check_js_calls_fail_closed(js);
    NT_CHECK(!nt_failed());

    /* The stream is still there for another client. */
    natsio_js *other = connect_js();
    NT_CHECK(other != NULL);
    EXPECT_OK(natsio_js_stream_delete(other, "CLOSED"));
}

/* ---- bad input ------------------------------------------------------------------ */

static void test_null_tolerant_getters_and_frees(void) {
    NT_CHECK(natsio_pub_ack_stream(NULL) == NULL);
    NT_CHECK_INT_EQ(natsio_pub_ack_seq(NULL), 0);
    NT_CHECK(!natsio_pub_ack_duplicate(NULL));
    NT_CHECK(natsio_pub_ack_domain(NULL) == NULL);
    NT_CHECK(natsio_stored_msg_subject(NULL) == NULL);
    NT_CHECK_INT_EQ(natsio_stored_msg_seq(NULL), 0);
    NT_CHECK_INT_EQ(natsio_stored_msg_time_ns(NULL), 0);
    NT_CHECK(natsio_stored_msg_data(NULL) == NULL);
    NT_CHECK_INT_EQ(natsio_stored_msg_data_len(NULL), 0);
    NT_CHECK(natsio_stored_msg_headers(NULL) == NULL);
    NT_CHECK_INT_EQ(natsio_js_publish_async_pending(NULL), 0);

    plant_error_marker();
    natsio_js_free(NULL);
    natsio_pub_ack_free(NULL);
    natsio_stored_msg_free(NULL);
    NT_CHECK_MSG(strstr(natsio_last_error(), ERROR_MARKER) != NULL,
                 "a _free(NULL) changed natsio_last_error() to \"%s\"", natsio_last_error());
}

static void test_bad_input_creating_a_context(void) {
    natsio_client *c = connect_client();
    NT_CHECK(c != NULL);
    natsio_js *js = SENTINEL;
    natsio_js_options o = js_options();
    EXPECT_NULL_ARG("client", natsio_client_jetstream(NULL, NULL, &js));
    EXPECT_NULL_ARG("client", natsio_client_jetstream(NULL, &o, &js));
    EXPECT_NULL_ARG("js_out", natsio_client_jetstream(c, NULL, NULL));
    EXPECT_NULL_ARG("js_out", natsio_client_jetstream(c, &o, NULL));

    o.domain = BAD_UTF8;
    EXPECT_FAILS_NAMING(NATSIO_ERR_INVALID_UTF8, "domain", natsio_client_jetstream(c, &o, &js));
    o.domain = "a.b";
    EXPECT_FAILS(NATSIO_ERR_CONFIG, natsio_client_jetstream(c, &o, &js));
    o.domain = NULL;
    o.api_prefix = BAD_UTF8;
    EXPECT_FAILS_NAMING(NATSIO_ERR_INVALID_UTF8, "api_prefix", natsio_client_jetstream(c, &o, &js));
    o.api_prefix = "bad prefix";
    EXPECT_FAILS(NATSIO_ERR_CONFIG, natsio_client_jetstream(c, &o, &js));
    o.api_prefix = NULL;

    natsio_js_options neg = js_options();
    neg.timeout_ms = -1;
    EXPECT_FAILS_NAMING(NATSIO_ERR_INVALID_ARGUMENT, "timeout_ms", natsio_client_jetstream(c, &neg, &js));
    neg = js_options();
    neg.publish_async_max_pending = -1;
    EXPECT_FAILS_NAMING(NATSIO_ERR_INVALID_ARGUMENT, "publish_async_max_pending",
                        natsio_client_jetstream(c, &neg, &js));
    neg = js_options();
    neg.publish_async_stall_wait_ms = -5;
    EXPECT_FAILS_NAMING(NATSIO_ERR_INVALID_ARGUMENT, "publish_async_stall_wait_ms",
                        natsio_client_jetstream(c, &neg, &js));
    neg = js_options();
    neg.publish_async_timeout_ms = INT64_MIN;
    EXPECT_FAILS_NAMING(NATSIO_ERR_INVALID_ARGUMENT, "publish_async_timeout_ms",
                        natsio_client_jetstream(c, &neg, &js));
    NT_CHECK(js == SENTINEL);

    /* A domain and a custom prefix are accepted (nothing is sent). */
    o = js_options();
    o.domain = "hub";
    natsio_js *with_domain = NULL;
    EXPECT_OK(natsio_client_jetstream(c, &o, &with_domain));
    natsio_js_free(with_domain);
    o = js_options();
    o.api_prefix = "$JS.API.";
    natsio_js *with_prefix = NULL;
    EXPECT_OK(natsio_client_jetstream(c, &o, &with_prefix));
    nt_cleanup(js_free_cb, with_prefix);
    /* "$JS.API." is the default prefix, trailing dot and all. */
    char *info = NULL;
    EXPECT_OK(natsio_js_account_info(with_prefix, &info));
    natsio_string_free(info);
}

static void test_bad_input_publishing(void) {
    natsio_js *js = connect_js();
    NT_CHECK(js != NULL);
    NT_CHECK(create_stream(js, "BADPUB", "badpub.>"));
    natsio_pub_ack *ack = SENTINEL;
    natsio_token *t = SENTINEL;

    EXPECT_NULL_ARG("js", natsio_js_publish(NULL, "badpub.a", "x", 1, NULL, &ack));
    EXPECT_NULL_ARG("subject", natsio_js_publish(js, NULL, "x", 1, NULL, &ack));
    EXPECT_NULL_ARG("data", natsio_js_publish(js, "badpub.a", NULL, 1, NULL, &ack));
    EXPECT_NULL_ARG("js", natsio_js_publish_async(NULL, "badpub.a", "x", 1, NULL, &t));
    EXPECT_NULL_ARG("subject", natsio_js_publish_async(js, NULL, "x", 1, NULL, &t));
    EXPECT_NULL_ARG("data", natsio_js_publish_async(js, "badpub.a", NULL, 1, NULL, &t));
    EXPECT_NULL_ARG("token_out", natsio_js_publish_async(js, "badpub.a", "x", 1, NULL, NULL));
    EXPECT_NULL_ARG("js", natsio_js_publish_request_async(NULL, "badpub.a", "x", 1, NULL, &t));
    EXPECT_NULL_ARG("subject", natsio_js_publish_request_async(js, NULL, "x", 1, NULL, &t));
    EXPECT_NULL_ARG("data", natsio_js_publish_request_async(js, "badpub.a", NULL, 1, NULL, &t));
    EXPECT_NULL_ARG("token_out", natsio_js_publish_request_async(js, "badpub.a", "x", 1, NULL, NULL));
    EXPECT_NULL_ARG("js", natsio_js_publish_async_complete(NULL, NATSIO_TIMEOUT_DEFAULT));

    EXPECT_FAILS_NAMING(NATSIO_ERR_INVALID_UTF8, "subject", natsio_js_publish(js, BAD_UTF8, "x", 1, NULL, &ack));
    EXPECT_FAILS_NAMING(NATSIO_ERR_INVALID_UTF8, "subject",
                        natsio_js_publish_async(js, BAD_UTF8, "x", 1, NULL, &t));
    const char *bad_subjects[] = {"", "badpub..a", "badpub.a.", ".badpub", "badpub a", "badpub.*", "badpub.>",
                                  "badpub.\t"};
    for (size_t i = 0; i < NT_COUNT(bad_subjects); i++) {
        EXPECT_FAILS(NATSIO_ERR_BAD_SUBJECT, natsio_js_publish(js, bad_subjects[i], "x", 1, NULL, &ack));
        EXPECT_FAILS(NATSIO_ERR_BAD_SUBJECT, natsio_js_publish_async(js, bad_subjects[i], "x", 1, NULL, &t));
        EXPECT_FAILS(NATSIO_ERR_BAD_SUBJECT,
                     natsio_js_publish_request_async(js, bad_subjects[i], "x", 1, NULL, &t));
    }

    /* Bad option fields. */
    natsio_js_publish_options o = pub_options();
    o.msg_id = BAD_UTF8;
    EXPECT_FAILS_NAMING(NATSIO_ERR_INVALID_UTF8, "msg_id", natsio_js_publish(js, "badpub.a", "x", 1, &o, &ack));
    EXPECT_FAILS_NAMING(NATSIO_ERR_INVALID_UTF8, "msg_id", natsio_js_publish_async(js, "badpub.a", "x", 1, &o, &t));
    EXPECT_FAILS_NAMING(NATSIO_ERR_INVALID_UTF8, "msg_id",
                        natsio_js_publish_request_async(js, "badpub.a", "x", 1, &o, &t));
    o = pub_options();
    o.expected_stream = BAD_UTF8;
    EXPECT_FAILS_NAMING(NATSIO_ERR_INVALID_UTF8, "expected_stream",
                        natsio_js_publish(js, "badpub.a", "x", 1, &o, &ack));
    o = pub_options();
    o.expected_last_subject_seq_subject = BAD_UTF8;
    EXPECT_FAILS_NAMING(NATSIO_ERR_INVALID_UTF8, "expected_last_subject_seq_subject",
                        natsio_js_publish(js, "badpub.a", "x", 1, &o, &ack));
    o = pub_options();
    o.expected_last_msg_id = BAD_UTF8;
    EXPECT_FAILS_NAMING(NATSIO_ERR_INVALID_UTF8, "expected_last_msg_id",
                        natsio_js_publish(js, "badpub.a", "x", 1, &o, &ack));
    o = pub_options();
    o.ttl_s = -2;
    EXPECT_FAILS_NAMING(NATSIO_ERR_INVALID_ARGUMENT, "ttl_s", natsio_js_publish(js, "badpub.a", "x", 1, &o, &ack));
    EXPECT_FAILS_NAMING(NATSIO_ERR_INVALID_ARGUMENT, "ttl_s",
                        natsio_js_publish_async(js, "badpub.a", "x", 1, &o, &t));
    o = pub_options();
    o.timeout_ms = -1;
    EXPECT_FAILS_NAMING(NATSIO_ERR_INVALID_ARGUMENT, "timeout_ms",
                        natsio_js_publish(js, "badpub.a", "x", 1, &o, &ack));
    EXPECT_FAILS_NAMING(NATSIO_ERR_INVALID_ARGUMENT, "timeout_ms",
                        natsio_js_publish_async(js, "badpub.a", "x", 1, &o, &t));
    NT_CHECK(ack == SENTINEL && t == SENTINEL);
    NT_CHECK_INT_EQ(natsio_js_publish_async_pending(js), 0);

    /* Nothing was stored by the rejected calls; NULL data with length 0 is
     * an empty message. */
    NT_CHECK_INT_EQ(stream_messages(js, "BADPUB"), 0);
    natsio_pub_ack *ok = NULL;
    EXPECT_OK(natsio_js_publish(js, "badpub.a", NULL, 0, NULL, &ok));
    NT_CHECK_INT_EQ(natsio_pub_ack_seq(ok), 1);
    natsio_pub_ack_free(ok);
    NT_CHECK_INT_EQ(stream_messages(js, "BADPUB"), 1);

    /* Token accessors. */
    natsio_token *pub = NULL;
    EXPECT_OK(natsio_js_publish_async(js, "badpub.b", "x", 1, NULL, &pub));
    nt_cleanup(token_free_cb, pub);
    EXPECT_OK(natsio_token_wait(pub, 5000));
    EXPECT_NULL_ARG("token", natsio_token_pub_ack(NULL, &ack));
    EXPECT_NULL_ARG("ack_out", natsio_token_pub_ack(pub, NULL));
    NT_CHECK(ack == SENTINEL);
    EXPECT_OK(natsio_js_publish_async_complete(js, 1000));
    EXPECT_OK(natsio_js_stream_delete(js, "BADPUB"));
}

static void test_bad_input_stream_functions(void) {
    natsio_js *js = connect_js();
    NT_CHECK(js != NULL);
    NT_CHECK(create_stream(js, "BADSTR", "badstr.>"));
    EXPECT_OK(natsio_js_publish(js, "badstr.a", "x", 1, NULL, NULL));
    char *s = SENTINEL_STR;
    natsio_stored_msg *m = SENTINEL;
    uint64_t purged = 42;
    const char *cfg = "{\"name\":\"BADSTR\",\"subjects\":[\"badstr.>\"],\"storage\":\"memory\"}";

    EXPECT_NULL_ARG("js", natsio_js_account_info(NULL, &s));
    EXPECT_NULL_ARG("json_out", natsio_js_account_info(js, NULL));

    EXPECT_NULL_ARG("js", natsio_js_stream_create(NULL, cfg, NATSIO_CREATE, &s));
    EXPECT_NULL_ARG("config_json", natsio_js_stream_create(js, NULL, NATSIO_CREATE, &s));
    EXPECT_NULL_ARG("js", natsio_js_stream_create(NULL, cfg, NATSIO_UPDATE, &s));
    EXPECT_NULL_ARG("config_json", natsio_js_stream_create(js, NULL, NATSIO_UPDATE, &s));
    EXPECT_NULL_ARG("js", natsio_js_stream_create(NULL, cfg, NATSIO_CREATE_OR_UPDATE, &s));
    EXPECT_NULL_ARG("config_json", natsio_js_stream_create(js, NULL, NATSIO_CREATE_OR_UPDATE, &s));
    EXPECT_FAILS_NAMING(NATSIO_ERR_INVALID_UTF8, "config_json", natsio_js_stream_create(js, BAD_UTF8, NATSIO_CREATE,
                                                                                        &s));
    EXPECT_FAILS_NAMING(NATSIO_ERR_INVALID_UTF8, "config_json", natsio_js_stream_create(js, BAD_UTF8, NATSIO_UPDATE,
                                                                                        &s));
    EXPECT_FAILS_NAMING(NATSIO_ERR_INVALID_UTF8, "config_json",
                        natsio_js_stream_create(js, BAD_UTF8, NATSIO_CREATE_OR_UPDATE, &s));
    /* An action that is not a natsio_create_action. */
    EXPECT_FAILS_NAMING(NATSIO_ERR_INVALID_ARGUMENT, "action", natsio_js_stream_create(js, cfg, 3, &s));
    EXPECT_FAILS_NAMING(NATSIO_ERR_INVALID_ARGUMENT, "action", natsio_js_stream_create(js, cfg, -1, &s));

    EXPECT_NULL_ARG("js", natsio_js_stream_info(NULL, "BADSTR", NULL, &s));
    EXPECT_NULL_ARG("name", natsio_js_stream_info(js, NULL, NULL, &s));
    EXPECT_NULL_ARG("info_json_out", natsio_js_stream_info(js, "BADSTR", NULL, NULL));
    EXPECT_FAILS_NAMING(NATSIO_ERR_INVALID_UTF8, "name", natsio_js_stream_info(js, BAD_UTF8, NULL, &s));

    EXPECT_NULL_ARG("js", natsio_js_stream_delete(NULL, "BADSTR"));
    EXPECT_NULL_ARG("name", natsio_js_stream_delete(js, NULL));
    EXPECT_FAILS_NAMING(NATSIO_ERR_INVALID_UTF8, "name", natsio_js_stream_delete(js, BAD_UTF8));

    EXPECT_NULL_ARG("js", natsio_js_stream_purge(NULL, "BADSTR", NULL, &purged));
    EXPECT_NULL_ARG("name", natsio_js_stream_purge(js, NULL, NULL, &purged));
    EXPECT_FAILS_NAMING(NATSIO_ERR_INVALID_UTF8, "name", natsio_js_stream_purge(js, BAD_UTF8, NULL, &purged));
    EXPECT_FAILS_NAMING(NATSIO_ERR_INVALID_UTF8, "options_json",
                        natsio_js_stream_purge(js, "BADSTR", BAD_UTF8, &purged));

    natsio_string_list *names = SENTINEL;
    EXPECT_NULL_ARG("js", natsio_js_stream_names(NULL, NULL, &names));
    EXPECT_NULL_ARG("list_out", natsio_js_stream_names(js, NULL, NULL));
    EXPECT_FAILS_NAMING(NATSIO_ERR_INVALID_UTF8, "subject", natsio_js_stream_names(js, BAD_UTF8, &names));
    NT_CHECK(names == SENTINEL);

    EXPECT_NULL_ARG("js", natsio_js_stream_get_msg(NULL, "BADSTR", 1, NULL, &m));
    EXPECT_NULL_ARG("stream", natsio_js_stream_get_msg(js, NULL, 1, NULL, &m));
    EXPECT_NULL_ARG("msg_out", natsio_js_stream_get_msg(js, "BADSTR", 1, NULL, NULL));
    EXPECT_FAILS_NAMING(NATSIO_ERR_INVALID_UTF8, "stream", natsio_js_stream_get_msg(js, BAD_UTF8, 1, NULL, &m));
    EXPECT_FAILS_NAMING(NATSIO_ERR_INVALID_UTF8, "last_by_subject",
                        natsio_js_stream_get_msg(js, "BADSTR", 1, BAD_UTF8, &m));
    EXPECT_FAILS(NATSIO_ERR_INVALID_ARGUMENT, natsio_js_stream_get_msg(js, "BAD.STR", 1, NULL, &m));

    EXPECT_NULL_ARG("js", natsio_js_stream_get_next_msg(NULL, "BADSTR", 1, "badstr.a", &m));
    EXPECT_NULL_ARG("stream", natsio_js_stream_get_next_msg(js, NULL, 1, "badstr.a", &m));
    EXPECT_NULL_ARG("subject", natsio_js_stream_get_next_msg(js, "BADSTR", 1, NULL, &m));
    EXPECT_NULL_ARG("msg_out", natsio_js_stream_get_next_msg(js, "BADSTR", 1, "badstr.a", NULL));
    EXPECT_FAILS_NAMING(NATSIO_ERR_INVALID_UTF8, "subject", natsio_js_stream_get_next_msg(js, "BADSTR", 1, BAD_UTF8, &m));
    EXPECT_FAILS(NATSIO_ERR_BAD_SUBJECT, natsio_js_stream_get_next_msg(js, "BADSTR", 1, "", &m));
    EXPECT_FAILS(NATSIO_ERR_INVALID_ARGUMENT, natsio_js_stream_get_next_msg(js, "BAD.STR", 1, "badstr.a", &m));

    EXPECT_NULL_ARG("js", natsio_js_stream_info(NULL, "BADSTR", STREAM_SUBJECTS(">"), &s));
    EXPECT_NULL_ARG("name", natsio_js_stream_info(js, NULL, STREAM_SUBJECTS(">"), &s));
    EXPECT_FAILS_NAMING(NATSIO_ERR_INVALID_UTF8, "subjects_filter",
                        natsio_js_stream_info(js, "BADSTR", STREAM_SUBJECTS(BAD_UTF8), &s));
    natsio_stream_info_options uninitialised;
    memset(&uninitialised, 0, sizeof uninitialised); /* version 0 */
    EXPECT_FAILS(NATSIO_ERR_INVALID_ARGUMENT, natsio_js_stream_info(js, "BADSTR", &uninitialised, &s));
    EXPECT_NULL_ARG("info_json_out", natsio_js_stream_info(js, "BADSTR", STREAM_SUBJECTS(">"), NULL));
    EXPECT_FAILS(NATSIO_ERR_BAD_SUBJECT, natsio_js_stream_info(js, "BADSTR", STREAM_SUBJECTS("a b"), &s));
    EXPECT_FAILS(NATSIO_ERR_STREAM_NOT_FOUND, natsio_js_stream_info(js, "NOSUCH", STREAM_SUBJECTS(">"), &s));

    EXPECT_NULL_ARG("js", natsio_js_stream_infos(NULL, NULL, &names));
    EXPECT_NULL_ARG("list_out", natsio_js_stream_infos(js, NULL, NULL));
    EXPECT_FAILS_NAMING(NATSIO_ERR_INVALID_UTF8, "subject", natsio_js_stream_infos(js, BAD_UTF8, &names));
    EXPECT_FAILS(NATSIO_ERR_BAD_SUBJECT, natsio_js_stream_infos(js, "a..b", &names));
    NT_CHECK(names == SENTINEL);

    uint64_t level = 42;
    EXPECT_NULL_ARG("js", natsio_js_api_level(NULL, &level));
    EXPECT_NULL_ARG("level_out", natsio_js_api_level(js, NULL));
    NT_CHECK_INT_EQ(level, 42);

    EXPECT_NULL_ARG("js", natsio_js_stream_delete_msg(NULL, "BADSTR", 1, false));
    EXPECT_NULL_ARG("stream", natsio_js_stream_delete_msg(js, NULL, 1, false));
    EXPECT_FAILS_NAMING(NATSIO_ERR_INVALID_UTF8, "stream", natsio_js_stream_delete_msg(js, BAD_UTF8, 1, false));
    EXPECT_FAILS(NATSIO_ERR_INVALID_ARGUMENT, natsio_js_stream_delete_msg(js, "BAD STR", 1, false));

    NT_CHECK(s == SENTINEL_STR && m == SENTINEL);
    NT_CHECK_INT_EQ(purged, 42);
    /* The stream and its message survived every rejected call. */
    NT_CHECK_INT_EQ(stream_messages(js, "BADSTR"), 1);
    EXPECT_OK(natsio_js_stream_delete(js, "BADSTR"));
}

int main(int argc, char **argv) {
    static const nt_case cases[] = {
        NT_CASE(test_stream_create_update_info_names_delete),
        NT_CASE(test_stream_config_errors_name_the_field),
        NT_CASE(test_stream_purge),
        NT_CASE(test_js_header_constants),
        NT_CASE(test_publish_acks_and_expectations),
        NT_CASE(test_publish_retry_attempts),
        NT_CASE(test_publish_with_headers_then_get_and_delete_msg),
        NT_CASE(test_get_msg_with_and_without_direct_get),
        NT_CASE(test_get_last_msgs_for),
        NT_CASE(test_stream_infos_subjects_and_api_level),
        NT_CASE(test_counter_and_plain_pub_acks),
        NT_CASE(test_concurrent_create_or_update_all_succeed),
        NT_CASE(test_publish_async_window_acks_every_message),
        NT_CASE(test_publish_async_token_callbacks),
        NT_CASE(test_publish_async_stalls_then_times_out),
        NT_CASE(test_publish_request_async_is_the_synchronous_publish),
        NT_CASE(test_publish_async_own_timeout_behind_a_longer_one),
        NT_CASE(test_deferred_publishes_arrive_in_order),
        NT_CASE(test_deferred_publishes_go_out_when_they_must),
        NT_CASE(test_token_kinds),
        NT_CASE(test_js_free_with_async_publishes_in_flight),
        NT_CASE(test_account_info),
        NT_CASE(test_jetstream_not_enabled_for_account),
        NT_CASE(test_use_after_client_close_and_free),
        NT_CASE(test_null_tolerant_getters_and_frees),
        NT_CASE(test_bad_input_creating_a_context),
        NT_CASE(test_bad_input_publishing),
        NT_CASE(test_bad_input_stream_functions),
    };
    return run_cases_with_shared_server(argc, argv, "jstest", cases, NT_COUNT(cases));
}
