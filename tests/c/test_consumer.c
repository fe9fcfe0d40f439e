/*
 * Pull consumers through the C ABI against a real nats-server: consumer
 * management (create with each natsio_create_action, info/names/delete, durable and
 * generated names, config and name errors), fetching (batches, metadata,
 * max_bytes, no_wait, expires, next), acknowledgements (ack, ack_sync, nak
 * with and without delay, term, in_progress, double acks, ack policy
 * "none", borrowed and cloned messages, messages that are not JetStream
 * messages), a fetch ended by deleting its consumer, use after the client
 * is closed and freed, and bad input for every consumer, fetch, list and
 * ack function.
 *
 * The cases share one server; each uses its own stream names and subjects.
 * Waits are kept short (a few hundred ms each) so that the program runs in
 * seconds.
 */
#define _POSIX_C_SOURCE 200809L

#include "harness.h"
#include "util.h"

#include <natsio.h>

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- helpers ------------------------------------------------------------ */

/* Fetch options as natsio_fetch_options_init makes them (the defaults). */
static natsio_fetch_options fetch_options(void) {
    natsio_fetch_options o;
    natsio_fetch_options_init(&o);
    return o;
}

/* A consumer name list, freed when the case ends (NULL on failure). */
static natsio_string_list *names_of(natsio_js *js, const char *stream) {
    natsio_string_list *names = NULL;
    natsio_status st = natsio_js_consumer_names(js, stream, &names);
    if (st != NATSIO_OK) {
        nt_fail_at(__FILE__, __LINE__, "consumer names of %s: %s (%s)", stream, natsio_status_str(st),
                   natsio_last_error());
        return NULL;
    }
    return kept_list(names);
}

/* The names joined with ',' (for failure messages). */
static const char *joined(const natsio_string_list *names) {
    static char buf[1024];
    return string_list_join(names, buf, sizeof buf);
}

/* Publishes "<prefix><i>" for i in [0, count) to `subject`. */
static bool publish_n(natsio_js *js, const char *subject, const char *prefix, int count) {
    for (int i = 0; i < count; i++) {
        char payload[64];
        int len = snprintf(payload, sizeof payload, "%s%d", prefix, i);
        natsio_status st = natsio_js_publish(js, subject, payload, (size_t)len, NULL, NULL);
        if (st != NATSIO_OK) {
            nt_fail_at(__FILE__, __LINE__, "publish %d to %s: %s (%s)", i, subject, natsio_status_str(st),
                       natsio_last_error());
            return false;
        }
    }
    return true;
}

/* Fetches up to `max` messages waiting up to `expires_ms`; the list is
 * freed when the case ends. NULL (and a recorded failure) on error. */
static natsio_msg_list *fetch(natsio_js *js, const char *stream, const char *consumer, int64_t max,
                              int64_t expires_ms) {
    natsio_fetch_options o = fetch_options();
    o.max_messages = max;
    o.expires_ms = expires_ms;
    natsio_msg_list *list = NULL;
    natsio_status st = natsio_js_fetch(js, stream, consumer, &o, &list);
    if (st != NATSIO_OK) {
        nt_fail_at(__FILE__, __LINE__, "fetch %s/%s: %s (%s)", stream, consumer, natsio_status_str(st),
                   natsio_last_error());
        return NULL;
    }
    nt_cleanup(msg_list_free_cb, list);
    return list;
}

/* ---- consumer management ---------------------------------------------------- */

static void test_consumer_create_update_info_names_delete(void) {
    natsio_js *js = connect_js();
    NT_CHECK(js != NULL);
    NT_CHECK(create_stream(js, "CMGMT", "cmgmt.>"));
    for (int i = 0; i < 6; i++) {
        char subj[32];
        snprintf(subj, sizeof subj, "cmgmt.%d", i % 2);
        EXPECT_OK(natsio_js_publish(js, subj, "x", 1, NULL, NULL));
    }

    const char *cfg = "{\"durable_name\":\"work\",\"ack_policy\":\"explicit\",\"ack_wait\":\"2s\","
                      "\"filter_subject\":\"cmgmt.0\"}";
    char *info = NULL;
    EXPECT_OK(natsio_js_consumer_create(js, "CMGMT", cfg, NATSIO_CREATE, &info));
    kept(info);
    char name[64];
    NT_CHECK_MSG(json_str(info, "name", name, sizeof name), "%s", info);
    NT_CHECK_STR_EQ(name, "work");
    NT_CHECK_MSG(strstr(info, "\"stream_name\":\"CMGMT\"") != NULL, "%s", info);
    int64_t v = 0;
    NT_CHECK(json_int(info, "ack_wait", &v));
    NT_CHECK_INT_EQ(v, 2000000000LL);
    NT_CHECK(json_int(info, "num_pending", &v));
    NT_CHECK_INT_EQ(v, 3); /* cmgmt.0 holds 3 of the 6 */

    /* The same configuration again is fine (info not wanted: NULL). */
    EXPECT_OK(natsio_js_consumer_create(js, "CMGMT", cfg, NATSIO_CREATE, NULL));
    /* Another configuration under the same name is not; out untouched. */
    char *out = SENTINEL_STR;
    EXPECT_FAILS(NATSIO_ERR_JS_API,
                 natsio_js_consumer_create(js, "CMGMT",
                                           "{\"durable_name\":\"work\",\"ack_policy\":\"explicit\","
                                           "\"ack_wait\":\"3s\",\"filter_subject\":\"cmgmt.0\"}", NATSIO_CREATE,
                                           &out));
    NT_CHECK(out == SENTINEL_STR);
    NT_CHECK_INT_EQ(consumer_int(js, "CMGMT", "work", "ack_wait"), 2000000000LL);

    /* Update: a missing consumer is not found; an existing one changes. */
    EXPECT_FAILS(NATSIO_ERR_CONSUMER_NOT_FOUND,
                 natsio_js_consumer_create(js, "CMGMT", "{\"name\":\"nope\",\"ack_policy\":\"explicit\"}",
                                           NATSIO_UPDATE, &out));
    NT_CHECK(out == SENTINEL_STR);
    char *upd = NULL;
    EXPECT_OK(natsio_js_consumer_create(js, "CMGMT",
                                        "{\"durable_name\":\"work\",\"ack_policy\":\"explicit\","
                                        "\"ack_wait\":\"5s\",\"filter_subject\":\"cmgmt.0\","
                                        "\"description\":\"updated\"}", NATSIO_UPDATE,
                                        &upd));
    kept(upd);
    NT_CHECK(json_int(upd, "ack_wait", &v));
    NT_CHECK_INT_EQ(v, 5000000000LL);
    NT_CHECK_MSG(strstr(upd, "\"description\":\"updated\"") != NULL, "%s", upd);

    /* create_or_update: creates, then updates. */
    char *cu = NULL;
    EXPECT_OK(natsio_js_consumer_create(js, "CMGMT",
                                                  "{\"name\":\"cu\",\"ack_policy\":\"explicit\","
                                                  "\"max_deliver\":3}", NATSIO_CREATE_OR_UPDATE,
                                                  &cu));
    kept(cu);
    NT_CHECK(json_int(cu, "max_deliver", &v));
    NT_CHECK_INT_EQ(v, 3);
    NT_CHECK(json_int(cu, "num_pending", &v));
    NT_CHECK_INT_EQ(v, 6); /* no filter */
    EXPECT_OK(natsio_js_consumer_create(
        js, "CMGMT", "{\"name\":\"cu\",\"ack_policy\":\"explicit\",\"max_deliver\":7}", NATSIO_CREATE_OR_UPDATE, NULL));
    NT_CHECK_INT_EQ(consumer_int(js, "CMGMT", "cu", "max_deliver"), 7);

    /* Info reads the current configuration and state. */
    char *got = NULL;
    EXPECT_OK(natsio_js_consumer_info(js, "CMGMT", "work", &got));
    kept(got);
    NT_CHECK(json_str(got, "name", name, sizeof name));
    NT_CHECK_STR_EQ(name, "work");
    NT_CHECK(json_int(got, "num_pending", &v));
    NT_CHECK_INT_EQ(v, 3);
    NT_CHECK(json_int(got, "num_ack_pending", &v));
    NT_CHECK_INT_EQ(v, 0);
    EXPECT_OK(natsio_js_publish(js, "cmgmt.0", "y", 1, NULL, NULL));
    NT_CHECK(wait_consumer_int(js, "CMGMT", "work", "num_pending", 4));

    /* Names: a string list. */
    natsio_string_list *names = names_of(js, "CMGMT");
    NT_CHECK(names != NULL);
    NT_CHECK_MSG(natsio_string_list_count(names) == 2, "%s", joined(names));
    NT_CHECK_MSG(string_list_has(names, "work") && string_list_has(names, "cu"), "%s", joined(names));

    /* Delete; then it is gone, and the other is left. */
    EXPECT_OK(natsio_js_consumer_delete(js, "CMGMT", "work"));
    EXPECT_FAILS(NATSIO_ERR_CONSUMER_NOT_FOUND, natsio_js_consumer_info(js, "CMGMT", "work", &out));
    NT_CHECK(out == SENTINEL_STR);
    EXPECT_FAILS(NATSIO_ERR_CONSUMER_NOT_FOUND, natsio_js_consumer_delete(js, "CMGMT", "work"));
    natsio_string_list *after = names_of(js, "CMGMT");
    NT_CHECK(after != NULL);
    NT_CHECK_INT_EQ(natsio_string_list_count(after), 1);
    NT_CHECK_STR_EQ(natsio_string_list_get(after, 0), "cu");
    EXPECT_OK(natsio_js_consumer_delete(js, "CMGMT", "cu"));
    natsio_string_list *none = names_of(js, "CMGMT");
    NT_CHECK(none != NULL);
    NT_CHECK_INT_EQ(natsio_string_list_count(none), 0);
    EXPECT_OK(natsio_js_stream_delete(js, "CMGMT"));
}

static void test_consumer_infos_pause_and_resume(void) {
    natsio_js *js = connect_js();
    NT_CHECK(js != NULL);
    NT_CHECK(create_stream(js, "CPAUSE", "cpause.>"));
    NT_CHECK(publish_n(js, "cpause.x", "m", 3));
    EXPECT_OK(natsio_js_consumer_create(js, "CPAUSE", "{\"durable_name\":\"p1\"}", NATSIO_CREATE, NULL));
    EXPECT_OK(natsio_js_consumer_create(js, "CPAUSE", "{\"durable_name\":\"p2\",\"filter_subject\":\"cpause.y\"}",
                                        NATSIO_CREATE, NULL));

    /* Every consumer's info, with its state. */
    natsio_string_list *infos = NULL;
    EXPECT_OK(natsio_js_consumer_infos(js, "CPAUSE", &infos));
    nt_cleanup(string_list_free_cb, infos);
    NT_CHECK_INT_EQ(natsio_string_list_count(infos), 2);
    int64_t pending_p1 = -1, pending_p2 = -1;
    for (size_t i = 0; i < natsio_string_list_count(infos); i++) {
        const char *info = natsio_string_list_get(infos, i);
        if (strstr(info, "\"name\":\"p1\"")) NT_CHECK(json_int(info, "num_pending", &pending_p1));
        if (strstr(info, "\"name\":\"p2\"")) NT_CHECK(json_int(info, "num_pending", &pending_p2));
    }
    NT_CHECK(pending_p1 == 3 && pending_p2 == 0);
    natsio_token *tok = NULL;
    EXPECT_OK(natsio_js_consumer_infos_async(js, "CPAUSE", &tok));
    EXPECT_OK(natsio_token_wait(tok, 5000));
    natsio_string_list *via_token = NULL;
    EXPECT_OK(natsio_token_string_list(tok, &via_token));
    natsio_token_free(tok);
    NT_CHECK_INT_EQ(natsio_string_list_count(via_token), 2);
    natsio_string_list_free(via_token);

    /* Paused for an hour: the info says so, a fetch gets nothing. */
    int64_t hour_ahead = now_realtime_ns() + 3600LL * 1000000000LL;
    char *answer = NULL;
    EXPECT_OK(natsio_js_consumer_pause(js, "CPAUSE", "p1", hour_ahead, &answer));
    nt_cleanup(string_free_cb, answer);
    NT_CHECK_MSG(strstr(answer, "\"paused\":true") != NULL, "%s", answer);
    int64_t remaining = 0;
    NT_CHECK(json_int(answer, "pause_remaining", &remaining));
    NT_CHECK_MSG(remaining > 3500LL * 1000000000LL, "pause_remaining %lld", (long long)remaining);
    char *info = NULL;
    EXPECT_OK(natsio_js_consumer_info(js, "CPAUSE", "p1", &info));
    NT_CHECK(strstr(info, "\"paused\":true") != NULL);
    natsio_string_free(info);
    natsio_msg_list *none = fetch(js, "CPAUSE", "p1", 3, 300);
    NT_CHECK(none != NULL && natsio_msg_list_count(none) == 0);

    /* Resumed: it delivers again. The token form too. */
    EXPECT_OK(natsio_js_consumer_resume_async(js, "CPAUSE", "p1", &tok));
    EXPECT_OK(natsio_token_wait(tok, 5000));
    char *resumed = NULL;
    EXPECT_OK(natsio_token_string(tok, &resumed));
    natsio_token_free(tok);
    NT_CHECK_MSG(strstr(resumed, "\"paused\":false") != NULL, "%s", resumed);
    natsio_string_free(resumed);
    natsio_msg_list *all = fetch(js, "CPAUSE", "p1", 3, 2000);
    NT_CHECK(all != NULL && natsio_msg_list_count(all) == 3);

    /* A time already past leaves it running; no answer wanted. */
    EXPECT_OK(natsio_js_consumer_pause(js, "CPAUSE", "p2", now_realtime_ns() - 1000000000LL, NULL));
    EXPECT_OK(natsio_js_consumer_pause_async(js, "CPAUSE", "p2", hour_ahead, &tok));
    EXPECT_OK(natsio_token_wait(tok, 5000));
    NT_CHECK_INT_EQ(natsio_token_status(tok), NATSIO_OK);
    natsio_token_free(tok);
    EXPECT_OK(natsio_js_consumer_resume(js, "CPAUSE", "p2", NULL));

    /* Errors; outputs stay put. */
    char *out = SENTINEL_STR;
    EXPECT_FAILS(NATSIO_ERR_CONSUMER_NOT_FOUND, natsio_js_consumer_pause(js, "CPAUSE", "nope", hour_ahead, &out));
    EXPECT_FAILS(NATSIO_ERR_CONSUMER_NOT_FOUND, natsio_js_consumer_resume(js, "CPAUSE", "nope", &out));
    EXPECT_FAILS(NATSIO_ERR_STREAM_NOT_FOUND, natsio_js_consumer_pause(js, "NOPAUSE", "p1", hour_ahead, &out));
    EXPECT_FAILS_NAMING(NATSIO_ERR_INVALID_ARGUMENT, "pause_until_ns",
                        natsio_js_consumer_pause(js, "CPAUSE", "p1", 0, &out));
    EXPECT_FAILS(NATSIO_ERR_INVALID_ARGUMENT, natsio_js_consumer_pause(js, "CPAUSE", "p.1", hour_ahead, &out));
    EXPECT_NULL_ARG("js", natsio_js_consumer_pause(NULL, "CPAUSE", "p1", hour_ahead, &out));
    EXPECT_NULL_ARG("stream", natsio_js_consumer_pause(js, NULL, "p1", hour_ahead, &out));
    EXPECT_NULL_ARG("consumer", natsio_js_consumer_resume(js, "CPAUSE", NULL, &out));
    NT_CHECK(out == SENTINEL_STR);
    natsio_string_list *list = SENTINEL;
    EXPECT_FAILS(NATSIO_ERR_STREAM_NOT_FOUND, natsio_js_consumer_infos(js, "NOPAUSE", &list));
    EXPECT_NULL_ARG("stream", natsio_js_consumer_infos(js, NULL, &list));
    EXPECT_NULL_ARG("list_out", natsio_js_consumer_infos(js, "CPAUSE", NULL));
    NT_CHECK(list == SENTINEL);
    EXPECT_OK(natsio_js_stream_delete(js, "CPAUSE"));
}

static void test_unnamed_consumer_gets_a_generated_name(void) {
    natsio_js *js = connect_js();
    NT_CHECK(js != NULL);
    NT_CHECK(create_stream(js, "CEPH", "ceph.>"));
    NT_CHECK(publish_n(js, "ceph.a", "e", 2));

    char *a = NULL, *b = NULL;
    EXPECT_OK(natsio_js_consumer_create(js, "CEPH", "{\"inactive_threshold\":\"30s\"}", NATSIO_CREATE, &a));
    kept(a);
    EXPECT_OK(natsio_js_consumer_create(js, "CEPH", "{\"inactive_threshold\":\"30s\"}", NATSIO_CREATE_OR_UPDATE, &b));
    kept(b);
    char name_a[128], name_b[128];
    NT_CHECK_MSG(json_str(a, "name", name_a, sizeof name_a), "%s", a);
    NT_CHECK_MSG(json_str(b, "name", name_b, sizeof name_b), "%s", b);
    NT_CHECK_MSG(name_a[0] != '\0' && name_b[0] != '\0', "%s / %s", a, b);
    NT_CHECK_MSG(strcmp(name_a, name_b) != 0, "two unnamed consumers share the name %s", name_a);
    /* Not durable. */
    NT_CHECK_MSG(strstr(a, "\"durable_name\"") == NULL, "%s", a);
    int64_t v = 0;
    NT_CHECK(json_int(a, "inactive_threshold", &v));
    NT_CHECK_INT_EQ(v, 30000000000LL);

    /* It is listed, and usable by its name. */
    natsio_string_list *names = names_of(js, "CEPH");
    NT_CHECK(names != NULL);
    NT_CHECK_MSG(natsio_string_list_count(names) == 2, "%s", joined(names));
    NT_CHECK_MSG(string_list_has(names, name_a) && string_list_has(names, name_b), "%s", joined(names));
    natsio_msg_list *list = fetch(js, "CEPH", name_a, 5, 300);
    NT_CHECK(list != NULL);
    NT_CHECK_INT_EQ(natsio_msg_list_count(list), 2);
    natsio_js_msg_metadata md = metadata_of(natsio_msg_list_get(list, 0));
    NT_CHECK(!nt_failed());
    NT_CHECK_MSG(span_eq(md.consumer, md.consumer_len, name_a), "consumer %.*s, want %s", (int)md.consumer_len,
                 md.consumer, name_a);

    EXPECT_OK(natsio_js_consumer_delete(js, "CEPH", name_a));
    EXPECT_OK(natsio_js_consumer_delete(js, "CEPH", name_b));
    EXPECT_OK(natsio_js_stream_delete(js, "CEPH"));
}

static void test_consumer_config_and_name_errors(void) {
    natsio_js *js = connect_js();
    NT_CHECK(js != NULL);
    NT_CHECK(create_stream(js, "CCFG", "ccfg.>"));
    char *out = SENTINEL_STR;
    natsio_string_list *no_names = SENTINEL;

    EXPECT_FAILS_NAMING(NATSIO_ERR_CONFIG, "ConsumerConfig.ack_wait",
                        natsio_js_consumer_create(js, "CCFG", "{\"name\":\"c\",\"ack_wait\":\"soon\"}", NATSIO_CREATE,
                                                  &out));
    EXPECT_FAILS_NAMING(NATSIO_ERR_CONFIG, "ConsumerConfig.ack_policy",
                        natsio_js_consumer_create(js, "CCFG", "{\"name\":\"c\",\"ack_policy\":\"sometimes\"}",
                                                  NATSIO_CREATE, &out));
    EXPECT_FAILS_NAMING(NATSIO_ERR_CONFIG, "ConsumerConfig.deliver_policy",
                        natsio_js_consumer_create(js, "CCFG", "{\"name\":\"c\",\"deliver_policy\":1}", NATSIO_CREATE,
                                                  &out));
    EXPECT_FAILS_NAMING(NATSIO_ERR_CONFIG, "ConsumerConfig.max_deliver",
                        natsio_js_consumer_create(js, "CCFG", "{\"name\":\"c\",\"max_deliver\":\"many\"}",
                                                  NATSIO_CREATE, &out));
    EXPECT_FAILS_NAMING(NATSIO_ERR_CONFIG, "ConsumerConfig.filter_subjects",
                        natsio_js_consumer_create(js, "CCFG", "{\"name\":\"c\",\"filter_subjects\":\"ccfg.a\"}",
                                                  NATSIO_CREATE, &out));
    EXPECT_FAILS_NAMING(NATSIO_ERR_CONFIG, "ConsumerConfig.inactive_threshold",
                        natsio_js_consumer_create(js, "CCFG", "{\"inactive_threshold\":\"1x\"}",
                                                  NATSIO_CREATE_OR_UPDATE, &out));
    EXPECT_FAILS_NAMING(NATSIO_ERR_CONFIG, "ConsumerConfig.backoff",
                        natsio_js_consumer_create(js, "CCFG", "{\"name\":\"c\",\"backoff\":[\"1s\",\"later\"]}",
                                                  NATSIO_UPDATE, &out));
    /* Contradictions, and update without a name. */
    EXPECT_FAILS(NATSIO_ERR_CONFIG,
                 natsio_js_consumer_create(js, "CCFG", "{\"name\":\"a\",\"durable_name\":\"b\"}", NATSIO_CREATE, &out));
    EXPECT_FAILS(NATSIO_ERR_CONFIG,
                 natsio_js_consumer_create(
                     js, "CCFG", "{\"name\":\"c\",\"filter_subject\":\"ccfg.a\",\"filter_subjects\":[\"ccfg.b\"]}",
                     NATSIO_CREATE, &out));
    EXPECT_FAILS_NAMING(NATSIO_ERR_CONFIG, "name",
                        natsio_js_consumer_create(js, "CCFG", "{\"ack_policy\":\"explicit\"}", NATSIO_UPDATE, &out));
    EXPECT_FAILS(NATSIO_ERR_CONFIG, natsio_js_consumer_create(js, "CCFG", "not json", NATSIO_CREATE, &out));
    EXPECT_FAILS(NATSIO_ERR_CONFIG, natsio_js_consumer_create(js, "CCFG", "[1]", NATSIO_CREATE, &out));
    EXPECT_FAILS(NATSIO_ERR_CONFIG, natsio_js_consumer_create(js, "CCFG", "", NATSIO_CREATE, &out));

    /* Bad consumer names (in the config or as arguments) and stream names. */
    const char *bad_names[] = {"a.b", "a b", "a*", "a>"};
    for (size_t i = 0; i < NT_COUNT(bad_names); i++) {
        char cfg[64];
        snprintf(cfg, sizeof cfg, "{\"durable_name\":\"%s\"}", bad_names[i]);
        EXPECT_FAILS(NATSIO_ERR_INVALID_ARGUMENT, natsio_js_consumer_create(js, "CCFG", cfg, NATSIO_CREATE, &out));
        snprintf(cfg, sizeof cfg, "{\"name\":\"%s\"}", bad_names[i]);
        EXPECT_FAILS(NATSIO_ERR_INVALID_ARGUMENT, natsio_js_consumer_create(js, "CCFG", cfg, NATSIO_CREATE_OR_UPDATE,
                                                                            &out));
        EXPECT_FAILS(NATSIO_ERR_INVALID_ARGUMENT, natsio_js_consumer_info(js, "CCFG", bad_names[i], &out));
        EXPECT_FAILS(NATSIO_ERR_INVALID_ARGUMENT, natsio_js_consumer_delete(js, "CCFG", bad_names[i]));
        EXPECT_FAILS(NATSIO_ERR_INVALID_ARGUMENT,
                     natsio_js_consumer_create(js, bad_names[i], "{\"name\":\"c\"}", NATSIO_CREATE, &out));
        EXPECT_FAILS(NATSIO_ERR_INVALID_ARGUMENT, natsio_js_consumer_info(js, bad_names[i], "c", &out));
        EXPECT_FAILS(NATSIO_ERR_INVALID_ARGUMENT, natsio_js_consumer_delete(js, bad_names[i], "c"));
        EXPECT_FAILS(NATSIO_ERR_INVALID_ARGUMENT, natsio_js_consumer_names(js, bad_names[i], &no_names));
    }
    EXPECT_FAILS(NATSIO_ERR_INVALID_ARGUMENT, natsio_js_consumer_info(js, "CCFG", "", &out));
    EXPECT_FAILS(NATSIO_ERR_INVALID_ARGUMENT, natsio_js_consumer_info(js, "CCFG", "a\tb", &out));
    EXPECT_FAILS(NATSIO_ERR_INVALID_ARGUMENT, natsio_js_consumer_delete(js, "CCFG", "a\rb"));
    EXPECT_FAILS(NATSIO_ERR_INVALID_ARGUMENT, natsio_js_consumer_names(js, "", &no_names));
    NT_CHECK(out == SENTINEL_STR && no_names == SENTINEL);
    /* Nothing was created by the rejected calls. */
    natsio_string_list *names = names_of(js, "CCFG");
    NT_CHECK(names != NULL);
    NT_CHECK_INT_EQ(natsio_string_list_count(names), 0);

    /* A missing stream, a missing consumer. */
    EXPECT_FAILS(NATSIO_ERR_STREAM_NOT_FOUND, natsio_js_consumer_create(js, "CCFG_NONE", "{\"name\":\"c\"}",
                                                                        NATSIO_CREATE, &out));
    EXPECT_FAILS(NATSIO_ERR_STREAM_NOT_FOUND,
                 natsio_js_consumer_create(js, "CCFG_NONE", "{\"name\":\"c\"}", NATSIO_CREATE_OR_UPDATE, &out));
    EXPECT_FAILS(NATSIO_ERR_STREAM_NOT_FOUND, natsio_js_consumer_info(js, "CCFG_NONE", "c", &out));
    EXPECT_FAILS(NATSIO_ERR_STREAM_NOT_FOUND, natsio_js_consumer_delete(js, "CCFG_NONE", "c"));
    EXPECT_FAILS(NATSIO_ERR_STREAM_NOT_FOUND, natsio_js_consumer_names(js, "CCFG_NONE", &no_names));
    NT_CHECK(no_names == SENTINEL);
    EXPECT_FAILS(NATSIO_ERR_CONSUMER_NOT_FOUND, natsio_js_consumer_info(js, "CCFG", "none", &out));
    EXPECT_FAILS(NATSIO_ERR_CONSUMER_NOT_FOUND, natsio_js_consumer_delete(js, "CCFG", "none"));
    NT_CHECK(out == SENTINEL_STR);

    /* A server-side rejection: a start sequence policy without one. */
    EXPECT_FAILS(NATSIO_ERR_JS_API,
                 natsio_js_consumer_create(js, "CCFG", "{\"name\":\"c\",\"deliver_policy\":\"by_start_sequence\"}",
                                           NATSIO_CREATE,
                                           &out));
    NT_CHECK(out == SENTINEL_STR);

    /* Durations: Go-style strings and plain nanoseconds; filter_subjects. */
    char *info = NULL;
    EXPECT_OK(natsio_js_consumer_create(js, "CCFG",
                                        "{\"name\":\"d\",\"ack_policy\":\"explicit\",\"ack_wait\":\"1m30s\","
                                        "\"filter_subjects\":[\"ccfg.a\",\"ccfg.b\"],"
                                        "\"max_expires\":2500000000}", NATSIO_CREATE,
                                        &info));
    kept(info);
    int64_t v = 0;
    NT_CHECK(json_int(info, "ack_wait", &v));
    NT_CHECK_INT_EQ(v, 90000000000LL);
    NT_CHECK(json_int(info, "max_expires", &v));
    NT_CHECK_INT_EQ(v, 2500000000LL);
    NT_CHECK_MSG(strstr(info, "\"ccfg.b\"") != NULL, "%s", info);
    EXPECT_OK(natsio_js_stream_delete(js, "CCFG"));
}

/* ---- fetching ------------------------------------------------------------------ */

static void test_fetch_batch_order_payloads_and_metadata(void) {
    natsio_js *js = connect_js();
    NT_CHECK(js != NULL);
    NT_CHECK(create_stream(js, "CFETCH", "cfetch.>"));
    NT_CHECK(publish_n(js, "cfetch.a", "m", 10));
    NT_CHECK(create_consumer(js, "CFETCH", "{\"durable_name\":\"f\",\"ack_policy\":\"explicit\"}"));
    int64_t start_ns = now_realtime_ns();

    natsio_msg_list *list = fetch(js, "CFETCH", "f", 4, 1000);
    NT_CHECK(list != NULL);
    NT_CHECK_INT_EQ(natsio_msg_list_count(list), 4);
    for (size_t i = 0; i < 4; i++) {
        const natsio_msg *m = natsio_msg_list_get(list, i);
        NT_CHECK(m != NULL);
        char want[16];
        snprintf(want, sizeof want, "m%zu", i);
        NT_CHECK_MSG(payload_is(m, want), "message %zu: %.*s, want %s", i, (int)natsio_msg_data_len(m),
                     (const char *)natsio_msg_data(m), want);
        NT_CHECK_STR_EQ(natsio_msg_subject(m), "cfetch.a");
        natsio_js_msg_metadata md = metadata_of(m);
        NT_CHECK(!nt_failed());
        NT_CHECK_MSG(span_eq(md.stream, md.stream_len, "CFETCH"), "stream %.*s", (int)md.stream_len, md.stream);
        NT_CHECK_MSG(span_eq(md.consumer, md.consumer_len, "f"), "consumer %.*s", (int)md.consumer_len,
                     md.consumer);
        NT_CHECK(md.domain == NULL);
        NT_CHECK_INT_EQ(md.domain_len, 0);
        NT_CHECK_INT_EQ(md.stream_seq, i + 1);
        NT_CHECK_INT_EQ(md.consumer_seq, i + 1);
        NT_CHECK_INT_EQ(md.num_delivered, 1);
        NT_CHECK_INT_EQ(md.num_pending, 10 - (i + 1));
        NT_CHECK_MSG(abs64(md.timestamp_ns - start_ns) < 30000000000LL, "timestamp %lld is not near now (%lld)",
                     (long long)md.timestamp_ns, (long long)start_ns);
        EXPECT_OK(natsio_msg_ack(m));
    }
    /* Out of range. */
    NT_CHECK(natsio_msg_list_get(list, 4) == NULL);
    NT_CHECK(natsio_msg_list_get(list, SIZE_MAX) == NULL);

    /* The next batch goes on where this one ended; a larger batch than
     * what is left returns what is there when the request expires. */
    natsio_msg_list *rest = fetch(js, "CFETCH", "f", 100, 300);
    NT_CHECK(rest != NULL);
    NT_CHECK_INT_EQ(natsio_msg_list_count(rest), 6);
    for (size_t i = 0; i < 6; i++) {
        const natsio_msg *m = natsio_msg_list_get(rest, i);
        char want[16];
        snprintf(want, sizeof want, "m%zu", i + 4);
        NT_CHECK_MSG(payload_is(m, want), "message %zu is not %s", i, want);
        natsio_js_msg_metadata md = metadata_of(m);
        NT_CHECK(!nt_failed());
        NT_CHECK_INT_EQ(md.stream_seq, i + 5);
        NT_CHECK_INT_EQ(md.consumer_seq, i + 5);
        NT_CHECK_INT_EQ(md.num_pending, 5 - i);
        EXPECT_OK(natsio_msg_ack(m));
    }
    NT_CHECK(natsio_msg_list_get(rest, 6) == NULL);

    /* NULL options: the defaults, a batch of up to 100 (returned as soon
     * as it is full). */
    NT_CHECK(publish_n(js, "cfetch.b", "n", 101));
    natsio_msg_list *dflt = NULL;
    int64_t t0 = nt_now_ms();
    EXPECT_OK(natsio_js_fetch(js, "CFETCH", "f", NULL, &dflt));
    nt_cleanup(msg_list_free_cb, dflt);
    NT_CHECK_MSG(nt_now_ms() - t0 < 2000, "a full batch took %lld ms", (long long)(nt_now_ms() - t0));
    NT_CHECK_INT_EQ(natsio_msg_list_count(dflt), 100);
    NT_CHECK(payload_is(natsio_msg_list_get(dflt, 0), "n0"));
    NT_CHECK(payload_is(natsio_msg_list_get(dflt, 99), "n99"));
    NT_CHECK_STR_EQ(natsio_msg_subject(natsio_msg_list_get(dflt, 99)), "cfetch.b");
    NT_CHECK(natsio_msg_list_get(dflt, 100) == NULL);
    for (size_t i = 0; i < 100; i++) EXPECT_OK(natsio_msg_ack(natsio_msg_list_get(dflt, i)));

    /* natsio_js_next: one owned message (NULL options: the context's
     * timeout, and a message is there at once). */
    natsio_msg *m = NULL;
    t0 = nt_now_ms();
    EXPECT_OK(natsio_js_next(js, "CFETCH", "f", NULL, &m));
    nt_cleanup(msg_free_cb, m);
    NT_CHECK_MSG(nt_now_ms() - t0 < 2000, "next took %lld ms", (long long)(nt_now_ms() - t0));
    NT_CHECK(payload_is(m, "n100"));
    natsio_js_msg_metadata md = metadata_of(m);
    NT_CHECK(!nt_failed());
    NT_CHECK_INT_EQ(md.stream_seq, 111);
    NT_CHECK_INT_EQ(md.consumer_seq, 111);
    NT_CHECK_INT_EQ(md.num_pending, 0);
    EXPECT_OK(natsio_msg_ack_sync(m, 2000));
    NT_CHECK(wait_consumer_int(js, "CFETCH", "f", "num_ack_pending", 0));
    NT_CHECK_INT_EQ(consumer_int(js, "CFETCH", "f", "num_pending"), 0);
    EXPECT_OK(natsio_js_stream_delete(js, "CFETCH"));
}

static void test_fetch_max_bytes(void) {
    natsio_js *js = connect_js();
    NT_CHECK(js != NULL);
    NT_CHECK(create_stream(js, "CBYTES", "cbytes.>"));
    char payload[100];
    memset(payload, 'p', sizeof payload);
    for (int i = 0; i < 5; i++) EXPECT_OK(natsio_js_publish(js, "cbytes.a", payload, sizeof payload, NULL, NULL));
    NT_CHECK(create_consumer(js, "CBYTES", "{\"durable_name\":\"b\",\"ack_policy\":\"explicit\"}"));

    /* 250 bytes hold at most two 100-byte payloads (fewer once the server
     * counts subjects and headers too); never all five. */
    natsio_fetch_options o = fetch_options();
    o.max_messages = 10;
    o.max_bytes = 250;
    o.expires_ms = 500;
    natsio_msg_list *list = NULL;
    int64_t t0 = nt_now_ms();
    EXPECT_OK(natsio_js_fetch(js, "CBYTES", "b", &o, &list));
    nt_cleanup(msg_list_free_cb, list);
    size_t n = natsio_msg_list_count(list);
    NT_CHECK_MSG(n >= 1 && n <= 2, "%zu messages within max_bytes 250", n);
    NT_CHECK_MSG(nt_now_ms() - t0 < 1500, "took %lld ms", (long long)(nt_now_ms() - t0));
    for (size_t i = 0; i < n; i++) EXPECT_OK(natsio_msg_ack(natsio_msg_list_get(list, i)));

    /* Without a byte limit the rest come. */
    natsio_msg_list *rest = fetch(js, "CBYTES", "b", 10, 300);
    NT_CHECK(rest != NULL);
    NT_CHECK_INT_EQ(natsio_msg_list_count(rest), 5 - n);
    natsio_js_msg_metadata md = metadata_of(natsio_msg_list_get(rest, 0));
    NT_CHECK(!nt_failed());
    NT_CHECK_INT_EQ(md.stream_seq, n + 1);
    EXPECT_OK(natsio_js_stream_delete(js, "CBYTES"));
}

static void test_no_wait_expires_and_next_on_an_empty_consumer(void) {
    natsio_js *js = connect_js();
    NT_CHECK(js != NULL);
    NT_CHECK(create_stream(js, "CEMPTY", "cempty.>"));
    NT_CHECK(create_consumer(js, "CEMPTY", "{\"durable_name\":\"e\",\"ack_policy\":\"explicit\"}"));

    /* no_wait: an empty list at once (even with a long expires). */
    natsio_fetch_options o = fetch_options();
    o.no_wait = true;
    o.expires_ms = 10000;
    natsio_msg_list *list = NULL;
    int64_t t0 = nt_now_ms();
    EXPECT_OK(natsio_js_fetch(js, "CEMPTY", "e", &o, &list));
    int64_t took = nt_now_ms() - t0;
    nt_cleanup(msg_list_free_cb, list);
    NT_CHECK(list != NULL);
    NT_CHECK_INT_EQ(natsio_msg_list_count(list), 0);
    NT_CHECK(natsio_msg_list_get(list, 0) == NULL);
    NT_CHECK_MSG(took < 1000, "no_wait took %lld ms", (long long)took);

    /* expires bounds the wait: empty after about expires_ms. */
    natsio_fetch_options e = fetch_options();
    e.max_messages = 5;
    e.expires_ms = 400;
    natsio_msg_list *empty = NULL;
    t0 = nt_now_ms();
    EXPECT_OK(natsio_js_fetch(js, "CEMPTY", "e", &e, &empty));
    took = nt_now_ms() - t0;
    nt_cleanup(msg_list_free_cb, empty);
    NT_CHECK_INT_EQ(natsio_msg_list_count(empty), 0);
    NT_CHECK_MSG(took >= 300 && took < 1900, "a 400 ms fetch took %lld ms", (long long)took);

    /* With idle heartbeats (well below expires): still just empty. */
    e.idle_heartbeat_ms = 100;
    natsio_msg_list *hb = NULL;
    t0 = nt_now_ms();
    EXPECT_OK(natsio_js_fetch(js, "CEMPTY", "e", &e, &hb));
    took = nt_now_ms() - t0;
    nt_cleanup(msg_list_free_cb, hb);
    NT_CHECK_INT_EQ(natsio_msg_list_count(hb), 0);
    NT_CHECK_MSG(took >= 300 && took < 1900, "a 400 ms fetch with heartbeats took %lld ms", (long long)took);

    /* next: NO_MESSAGES after its timeout; the out stays put. */
    natsio_msg *m = SENTINEL;
    t0 = nt_now_ms();
    EXPECT_FAILS(NATSIO_ERR_NO_MESSAGES, natsio_js_next(js, "CEMPTY", "e", NEXT_WAIT(300), &m));
    took = nt_now_ms() - t0;
    NT_CHECK(m == SENTINEL);
    NT_CHECK_MSG(took >= 200 && took < 1800, "a 300 ms next took %lld ms", (long long)took);
    /* NATSIO_NO_WAIT: a no-wait pull, NO_MESSAGES at once. */
    t0 = nt_now_ms();
    EXPECT_FAILS(NATSIO_ERR_NO_MESSAGES, natsio_js_next(js, "CEMPTY", "e", NEXT_WAIT(NATSIO_NO_WAIT), &m));
    took = nt_now_ms() - t0;
    NT_CHECK(m == SENTINEL);
    NT_CHECK_MSG(took < 1000, "a no-wait next took %lld ms", (long long)took);

    /* A fetch ends as soon as its batch is full, long before expires. */
    natsio_fetch_options one = fetch_options();
    one.max_messages = 1;
    one.expires_ms = 3000;
    natsio_js *other = connect_js();
    NT_CHECK(other != NULL);
    EXPECT_OK(natsio_js_publish(other, "cempty.x", "late", 4, NULL, NULL));
    natsio_msg_list *got = NULL;
    t0 = nt_now_ms();
    EXPECT_OK(natsio_js_fetch(js, "CEMPTY", "e", &one, &got));
    nt_cleanup(msg_list_free_cb, got);
    NT_CHECK_INT_EQ(natsio_msg_list_count(got), 1);
    NT_CHECK(payload_is(natsio_msg_list_get(got, 0), "late"));
    NT_CHECK_MSG(nt_now_ms() - t0 < 2000, "took %lld ms", (long long)(nt_now_ms() - t0));
    EXPECT_OK(natsio_msg_ack(natsio_msg_list_get(got, 0)));
    /* A no-wait next takes a message that is there. "There" is the
     * consumer's view: the server can ack the publish before the
     * consumer's pending count (updated off its own queues) has caught up,
     * and a no-wait pull in between is told 404 (seen once, under ASan
     * with the server on a loaded CPU). */
    EXPECT_OK(natsio_js_publish(other, "cempty.x", "now", 3, NULL, NULL));
    NT_CHECK(wait_consumer_int(js, "CEMPTY", "e", "num_pending", 1));
    natsio_msg *now = NULL;
    EXPECT_OK(natsio_js_next(js, "CEMPTY", "e", NEXT_WAIT(NATSIO_NO_WAIT), &now));
    nt_cleanup(msg_free_cb, now);
    NT_CHECK(payload_is(now, "now"));
    EXPECT_OK(natsio_msg_ack_sync(now, NATSIO_TIMEOUT_DEFAULT));
    EXPECT_OK(natsio_js_stream_delete(js, "CEMPTY"));
}

/* A pull request beyond the consumer's max_batch, max_expires or max_bytes
 * fails with the server's reason, not as an empty batch; a no-wait fetch
 * the server holds (messages pending, max_ack_pending reached) ends within
 * about a second, not after the context's timeout. */
static void test_fetch_refused_by_consumer_limits_and_held_no_wait(void) {
    natsio_js *js = connect_js();
    NT_CHECK(js != NULL);
    NT_CHECK(create_stream(js, "CLIMITS", "climits.>"));
    NT_CHECK(create_consumer(js, "CLIMITS",
                             "{\"durable_name\":\"l\",\"ack_policy\":\"explicit\",\"max_batch\":10,"
                             "\"max_expires\":1000000000,\"max_bytes\":1000,\"max_ack_pending\":2}"));
    NT_CHECK(publish_n(js, "climits.x", "m", 3));

    natsio_msg_list *list = SENTINEL;
    natsio_fetch_options o = fetch_options();
    o.max_messages = 20;
    o.expires_ms = 500;
    EXPECT_FAILS_NAMING(NATSIO_ERR_JETSTREAM, "Exceeded MaxRequestBatch", natsio_js_fetch(js, "CLIMITS", "l", &o, &list));
    o.max_messages = 5;
    o.expires_ms = 2000;
    EXPECT_FAILS_NAMING(NATSIO_ERR_JETSTREAM, "Exceeded MaxRequestExpires",
                        natsio_js_fetch(js, "CLIMITS", "l", &o, &list));
    o.expires_ms = 500;
    o.max_bytes = 2000;
    EXPECT_FAILS_NAMING(NATSIO_ERR_JETSTREAM, "Exceeded MaxRequestMaxBytes",
                        natsio_js_fetch(js, "CLIMITS", "l", &o, &list));
    NT_CHECK(list == SENTINEL);

    /* Two of the three come (max_ack_pending 2); the server then holds a
     * no-wait request for the third. */
    natsio_msg_list *two = fetch(js, "CLIMITS", "l", 10, 500);
    NT_CHECK(two != NULL && natsio_msg_list_count(two) == 2);
    natsio_fetch_options nw = fetch_options();
    nw.max_messages = 10;
    nw.no_wait = true;
    natsio_msg_list *held = NULL;
    int64_t t0 = nt_now_ms();
    EXPECT_OK(natsio_js_fetch(js, "CLIMITS", "l", &nw, &held));
    int64_t took = nt_now_ms() - t0;
    nt_cleanup(msg_list_free_cb, held);
    NT_CHECK_INT_EQ(natsio_msg_list_count(held), 0);
    NT_CHECK_MSG(took < 3000, "a held no-wait fetch took %lld ms", (long long)took);
    EXPECT_OK(natsio_js_stream_delete(js, "CLIMITS"));
}

/* ---- fetching message by message ------------------------------------------------ */

/* Fetch options for `max` messages within `expires_ms`. */
static natsio_fetch_options fetch_of(int64_t max, int64_t expires_ms) {
    natsio_fetch_options o = fetch_options();
    o.max_messages = max;
    o.expires_ms = expires_ms;
    return o;
}

/* A fetch iterator, freed when the case ends (NULL on failure). */
static natsio_js_messages *fetch_messages(natsio_js *js, const char *stream, const char *consumer,
                                          const natsio_fetch_options *o) {
    natsio_js_messages *it = NULL;
    natsio_status st = natsio_js_fetch_messages(js, stream, consumer, o, &it);
    if (st != NATSIO_OK) {
        nt_fail_at(__FILE__, __LINE__, "fetch_messages %s/%s: %s (%s)", stream, consumer,
                   natsio_status_str(st), natsio_last_error());
        return NULL;
    }
    nt_cleanup(js_messages_free_cb, it);
    return it;
}

/* The next message of `it` within `timeout_ms`, freed when the case ends;
 * its payload must be `payload`. */
static void expect_next(natsio_js_messages *it, int64_t timeout_ms, const char *payload) {
    natsio_msg *m = NULL;
    natsio_status st = natsio_js_messages_next(it, timeout_ms, &m);
    NT_CHECK_MSG(st == NATSIO_OK, "next (want %s): %s (%s)", payload, natsio_status_str(st), natsio_last_error());
    if (m == NULL) return;
    nt_cleanup(msg_free_cb, m);
    NT_CHECK_MSG(payload_is(m, payload), "want payload %s", payload);
    EXPECT_OK(natsio_msg_ack(m));
}

/* The iterator's end: `want` (NATSIO_DONE or the error), *out NULL. */
static void expect_end(natsio_js_messages *it, natsio_status want) {
    natsio_msg *m = SENTINEL;
    natsio_status st = natsio_js_messages_next(it, 10000, &m);
    NT_CHECK_MSG(st == want, "end: got %s (%s), want %s", natsio_status_str(st), natsio_last_error(),
                 natsio_status_str(want));
    NT_CHECK(m == NULL || m == SENTINEL);
    if (m != NULL && m != SENTINEL) natsio_msg_free(m);
}

/* A fetch hands out each message as it arrives: one message published to
 * a consumer asked for ten within 2 s comes out of the iterator while the
 * request is still open (a no-wait next after it times out rather than
 * ending), one published after that comes out of the same request, and
 * only then does the iterator end, without error, at the expiry. */
static void test_fetch_messages_hands_out_each_message_as_it_arrives(void) {
    natsio_js *js = connect_js();
    NT_CHECK(js != NULL);
    NT_CHECK(create_stream(js, "CFITER", "cfiter.>"));
    NT_CHECK(create_consumer(js, "CFITER", "{\"durable_name\":\"f\",\"ack_policy\":\"explicit\"}"));
    NT_CHECK(publish_n(js, "cfiter.a", "m", 1));

    natsio_fetch_options o = fetch_of(10, 2000);
    natsio_js_messages *it = fetch_messages(js, "CFITER", "f", &o);
    NT_CHECK(it != NULL);
    expect_next(it, 10000, "m0");
    /* Handed out while the fetch is open: not ended, just nothing yet. */
    natsio_msg *m = SENTINEL;
    EXPECT_FAILS(NATSIO_ERR_TIMEOUT, natsio_js_messages_next(it, NATSIO_NO_WAIT, &m));
    NT_CHECK(m == SENTINEL);
    NT_CHECK(publish_n(js, "cfiter.a", "late", 1));
    expect_next(it, 10000, "late0");
    /* Then the request expires: the end, without error, for good. */
    expect_end(it, NATSIO_DONE);
    expect_end(it, NATSIO_DONE);
    natsio_iter_stats stats;
    EXPECT_OK(natsio_js_messages_get_stats(it, &stats));
    NT_CHECK_INT_EQ(stats.delivered, 2);
    NT_CHECK_INT_EQ(stats.pending_items, 0);
    EXPECT_OK(natsio_js_stream_delete(js, "CFITER"));
}

/* What a callback of a fetch iterator saw. */
typedef struct {
    pthread_mutex_t mu;
    int msgs;
    char first[16];
    natsio_status end;
    bool ended;
} fetch_log;

static void fetch_log_cb(void *user_data, const natsio_msg *msg, natsio_status status) {
    fetch_log *l = user_data;
    pthread_mutex_lock(&l->mu);
    if (msg != NULL) {
        if (l->msgs++ == 0) {
            size_t n = natsio_msg_data_len(msg) < sizeof l->first - 1 ? natsio_msg_data_len(msg) : sizeof l->first - 1;
            memcpy(l->first, natsio_msg_data(msg), n);
            l->first[n] = '\0';
        }
        natsio_msg_ack(msg);
    } else {
        l->end = status;
        l->ended = true;
    }
    pthread_mutex_unlock(&l->mu);
}

static bool fetch_log_ended(void *arg) {
    fetch_log *l = arg;
    pthread_mutex_lock(&l->mu);
    bool ended = l->ended;
    pthread_mutex_unlock(&l->mu);
    return ended;
}

/* The ends of a fetch iterator are those of natsio_js_fetch: the batch
 * complete, no_wait with nothing left, max_bytes reached, an error after
 * the messages before it; a callback gets the messages then the end; the
 * token form hands the iterator over once; stop withdraws the request. */
static void test_fetch_messages_ends_callback_token_and_stop(void) {
    natsio_js *js = connect_js();
    NT_CHECK(js != NULL);
    NT_CHECK(create_stream(js, "CFENDS", "cfends.>"));
    NT_CHECK(create_consumer(js, "CFENDS",
                             "{\"durable_name\":\"e\",\"ack_policy\":\"explicit\",\"filter_subject\":\"cfends.a\"}"));
    NT_CHECK(publish_n(js, "cfends.a", "m", 3));

    /* The batch complete: two of three, then the end long before expires. */
    natsio_fetch_options two = fetch_of(2, 30000);
    natsio_js_messages *batch = fetch_messages(js, "CFENDS", "e", &two);
    NT_CHECK(batch != NULL);
    expect_next(batch, 10000, "m0");
    expect_next(batch, 10000, "m1");
    int64_t t0 = nt_now_ms();
    expect_end(batch, NATSIO_DONE);
    NT_CHECK_MSG(nt_now_ms() - t0 < 10000, "a complete batch ended after %lld ms", (long long)(nt_now_ms() - t0));

    /* no_wait: what is there, then the end (the server's 404). */
    natsio_fetch_options nw = fetch_of(10, 0);
    nw.no_wait = true;
    /* (The consumer's own view first: a no-wait pull the server takes
     * before its pending count caught up is told 404, as above.) */
    NT_CHECK(wait_consumer_int(js, "CFENDS", "e", "num_pending", 1));
    natsio_js_messages *now = fetch_messages(js, "CFENDS", "e", &nw);
    NT_CHECK(now != NULL);
    expect_next(now, 10000, "m2");
    expect_end(now, NATSIO_DONE);

    /* max_bytes: 250 bytes hold at most two of the 100-byte messages (as
     * the server counts them, with subject and reply); the iterator ends
     * then, long before the request's 30 s expiry. */
    NT_CHECK(create_consumer(js, "CFENDS",
                             "{\"durable_name\":\"b\",\"ack_policy\":\"explicit\",\"filter_subject\":\"cfends.b\"}"));
    char payload[100];
    memset(payload, 'p', sizeof payload);
    for (int i = 0; i < 5; i++) EXPECT_OK(natsio_js_publish(js, "cfends.b", payload, sizeof payload, NULL, NULL));
    natsio_fetch_options by = fetch_of(10, 30000);
    by.max_bytes = 250;
    natsio_js_messages *bytes = fetch_messages(js, "CFENDS", "b", &by);
    NT_CHECK(bytes != NULL);
    int got_bytes = 0;
    natsio_status st;
    for (;;) {
        natsio_msg *bm = NULL;
        st = natsio_js_messages_next(bytes, 10000, &bm);
        if (st != NATSIO_OK) break;
        got_bytes++;
        natsio_msg_free(bm);
    }
    NT_CHECK_MSG(st == NATSIO_DONE, "max_bytes end: %s (%s)", natsio_status_str(st), natsio_last_error());
    NT_CHECK_MSG(got_bytes >= 1 && got_bytes <= 2, "%d messages within max_bytes 250", got_bytes);

    /* Push mode through the token form: the messages, then NATSIO_DONE. */
    NT_CHECK(create_consumer(js, "CFENDS",
                             "{\"durable_name\":\"p\",\"ack_policy\":\"explicit\",\"filter_subject\":\"cfends.p\"}"));
    NT_CHECK(publish_n(js, "cfends.p", "cb", 3));
    natsio_token *tok = NULL;
    natsio_fetch_options cb = fetch_of(2, 30000);
    EXPECT_OK(natsio_js_fetch_messages_async(js, "CFENDS", "p", &cb, &tok));
    nt_cleanup(token_free_cb, tok);
    EXPECT_OK(token_outcome(tok, 10000));
    natsio_js_messages *pushed = NULL;
    EXPECT_OK(natsio_token_js_messages(tok, &pushed));
    nt_cleanup(js_messages_free_cb, pushed);
    natsio_js_messages *again = SENTINEL;
    EXPECT_FAILS(NATSIO_ERR_ILLEGAL_STATE, natsio_token_js_messages(tok, &again));
    NT_CHECK(again == SENTINEL);
    fetch_log log = {PTHREAD_MUTEX_INITIALIZER, 0, "", NATSIO_OK, false};
    EXPECT_OK(natsio_js_messages_set_callback(pushed, fetch_log_cb, &log, NULL));
    NT_CHECK(nt_wait_until(fetch_log_ended, &log, 10000));
    pthread_mutex_lock(&log.mu);
    NT_CHECK_INT_EQ(log.msgs, 2);
    NT_CHECK_STR_EQ(log.first, "cb0");
    NT_CHECK_MSG(log.end == NATSIO_DONE, "callback end: %s", natsio_status_str(log.end));
    pthread_mutex_unlock(&log.mu);

    /* Stop withdraws the request: a message published after it goes to
     * the next fetch at once (not after the ack wait of one nobody read). */
    NT_CHECK(create_consumer(js, "CFENDS",
                             "{\"durable_name\":\"s\",\"ack_policy\":\"explicit\",\"filter_subject\":\"cfends.s\","
                             "\"ack_wait\":\"60s\"}"));
    natsio_fetch_options wait = fetch_of(5, 30000);
    natsio_js_messages *stopped = fetch_messages(js, "CFENDS", "s", &wait);
    NT_CHECK(stopped != NULL);
    NT_CHECK(wait_consumer_int(js, "CFENDS", "s", "num_waiting", 1));
    EXPECT_OK(natsio_js_messages_stop(stopped));
    expect_end(stopped, NATSIO_DONE);
    NT_CHECK(publish_n(js, "cfends.s", "after", 1));
    natsio_js_messages *next = fetch_messages(js, "CFENDS", "s", &wait);
    NT_CHECK(next != NULL);
    expect_next(next, 10000, "after0");
    EXPECT_OK(natsio_js_messages_stop(next));

    /* An error after a message: the message first, then the error. */
    NT_CHECK(create_consumer(js, "CFENDS",
                             "{\"durable_name\":\"d\",\"ack_policy\":\"explicit\",\"filter_subject\":\"cfends.d\"}"));
    NT_CHECK(publish_n(js, "cfends.d", "last", 1));
    natsio_js_messages *doomed = fetch_messages(js, "CFENDS", "d", &wait);
    NT_CHECK(doomed != NULL);
    NT_CHECK(wait_consumer_int(js, "CFENDS", "d", "num_ack_pending", 1));
    EXPECT_OK(natsio_js_consumer_delete(js, "CFENDS", "d"));
    natsio_msg *m = NULL;
    EXPECT_OK(natsio_js_messages_next(doomed, 10000, &m));
    nt_cleanup(msg_free_cb, m);
    NT_CHECK(payload_is(m, "last0"));
    expect_end(doomed, NATSIO_ERR_CONSUMER_DELETED);

    /* Argument errors at the call; a missing consumer ends the iterator. */
    natsio_js_messages *bad = SENTINEL;
    EXPECT_NULL_ARG("messages_out", natsio_js_fetch_messages(js, "CFENDS", "e", NULL, NULL));
    EXPECT_NULL_ARG("stream", natsio_js_fetch_messages(js, NULL, "e", NULL, &bad));
    EXPECT_FAILS(NATSIO_ERR_INVALID_ARGUMENT, natsio_js_fetch_messages(js, "CFENDS", "a b", NULL, &bad));
    natsio_fetch_options neg = fetch_of(-1, 0);
    EXPECT_FAILS(NATSIO_ERR_INVALID_ARGUMENT, natsio_js_fetch_messages(js, "CFENDS", "e", &neg, &bad));
    NT_CHECK(bad == SENTINEL);
    natsio_fetch_options brief = fetch_of(1, 300);
    natsio_js_messages *gone = fetch_messages(js, "CFENDS", "d", &brief);
    NT_CHECK(gone != NULL);
    expect_end(gone, NATSIO_ERR_CONSUMER_NOT_FOUND);
    EXPECT_OK(natsio_js_stream_delete(js, "CFENDS"));
}

/* ---- acknowledgements ------------------------------------------------------------ */

static void test_acks_and_double_acks(void) {
    natsio_js *js = connect_js();
    NT_CHECK(js != NULL);
    NT_CHECK(create_stream(js, "CACK", "cack.>"));
    NT_CHECK(publish_n(js, "cack.a", "a", 5));
    NT_CHECK(create_consumer(js, "CACK", "{\"durable_name\":\"k\",\"ack_policy\":\"explicit\",\"ack_wait\":\"30s\"}"));
    natsio_msg_list *list = fetch(js, "CACK", "k", 5, 1000);
    NT_CHECK(list != NULL);
    NT_CHECK_INT_EQ(natsio_msg_list_count(list), 5);
    const natsio_msg *m0 = natsio_msg_list_get(list, 0);
    const natsio_msg *m1 = natsio_msg_list_get(list, 1);
    const natsio_msg *m2 = natsio_msg_list_get(list, 2);
    const natsio_msg *m3 = natsio_msg_list_get(list, 3);
    const natsio_msg *m4 = natsio_msg_list_get(list, 4);
    NT_CHECK_INT_EQ(consumer_int(js, "CACK", "k", "num_ack_pending"), 5);

    /* ack, then every terminal kind again is refused. */
    EXPECT_OK(natsio_msg_ack(m0));
    EXPECT_FAILS(NATSIO_ERR_MESSAGE_ALREADY_ACKED, natsio_msg_ack(m0));
    EXPECT_FAILS(NATSIO_ERR_MESSAGE_ALREADY_ACKED, natsio_msg_ack_sync(m0, 1000));
    EXPECT_FAILS(NATSIO_ERR_MESSAGE_ALREADY_ACKED, natsio_msg_nak(m0, 0));
    EXPECT_FAILS(NATSIO_ERR_MESSAGE_ALREADY_ACKED, natsio_msg_term(m0, NULL));

    /* ack_sync: confirmed by the server, then refused too. */
    EXPECT_OK(natsio_msg_ack_sync(m1, 2000));
    EXPECT_FAILS(NATSIO_ERR_MESSAGE_ALREADY_ACKED, natsio_msg_ack(m1));
    EXPECT_FAILS(NATSIO_ERR_MESSAGE_ALREADY_ACKED, natsio_msg_ack_sync(m1, NATSIO_TIMEOUT_DEFAULT));

    /* After a nak. */
    EXPECT_OK(natsio_msg_nak(m2, 0));
    EXPECT_FAILS(NATSIO_ERR_MESSAGE_ALREADY_ACKED, natsio_msg_ack(m2));
    EXPECT_FAILS(NATSIO_ERR_MESSAGE_ALREADY_ACKED, natsio_msg_nak(m2, 0));
    EXPECT_FAILS(NATSIO_ERR_MESSAGE_ALREADY_ACKED, natsio_msg_term(m2, "late"));

    /* After a term (with a reason). A term with a reason that is not UTF-8
     * is refused before anything is sent, and leaves the message ackable. */
    EXPECT_FAILS_NAMING(NATSIO_ERR_INVALID_UTF8, "reason", natsio_msg_term(m3, BAD_UTF8));
    EXPECT_OK(natsio_msg_term(m3, "bad input"));
    EXPECT_FAILS(NATSIO_ERR_MESSAGE_ALREADY_ACKED, natsio_msg_term(m3, NULL));
    EXPECT_FAILS(NATSIO_ERR_MESSAGE_ALREADY_ACKED, natsio_msg_ack_sync(m3, 1000));
    EXPECT_FAILS(NATSIO_ERR_MESSAGE_ALREADY_ACKED, natsio_msg_nak(m3, 100));

    /* in_progress does not count as an answer: any number, then the ack. */
    EXPECT_OK(natsio_msg_in_progress(m4));
    EXPECT_OK(natsio_msg_in_progress(m4));
    EXPECT_OK(natsio_msg_in_progress(m4));
    EXPECT_OK(natsio_msg_term(m4, NULL));
    EXPECT_FAILS(NATSIO_ERR_MESSAGE_ALREADY_ACKED, natsio_msg_ack(m4));

    /* The server saw them: only the nak'ed one comes back (delivered
     * twice). */
    natsio_msg_list *again = fetch(js, "CACK", "k", 5, 500);
    NT_CHECK(again != NULL);
    NT_CHECK_INT_EQ(natsio_msg_list_count(again), 1);
    const natsio_msg *r = natsio_msg_list_get(again, 0);
    NT_CHECK(payload_is(r, "a2"));
    natsio_js_msg_metadata md = metadata_of(r);
    NT_CHECK(!nt_failed());
    NT_CHECK_INT_EQ(md.num_delivered, 2);
    NT_CHECK_INT_EQ(md.stream_seq, 3);
    /* The new delivery is a new handle: it can be acked. */
    EXPECT_OK(natsio_msg_ack_sync(r, 2000));
    NT_CHECK(wait_consumer_int(js, "CACK", "k", "num_ack_pending", 0));
    NT_CHECK_INT_EQ(consumer_int(js, "CACK", "k", "num_redelivered"), 0);
    EXPECT_OK(natsio_js_stream_delete(js, "CACK"));
}

static void test_deferred_acks_are_sent(void) {
    natsio_client *c = connect_client_past_first_ping();
    NT_CHECK(c != NULL);
    natsio_js *js = new_jetstream(c, NULL);
    NT_CHECK(js != NULL);
    natsio_js *other = connect_js(); /* looks without sending c's queue */
    NT_CHECK(other != NULL);
    NT_CHECK(create_stream(js, "CDEFER", "cdefer.>"));
    NT_CHECK(publish_n(js, "cdefer.a", "d", 4));
    NT_CHECK(create_consumer(js, "CDEFER", "{\"durable_name\":\"q\",\"ack_policy\":\"explicit\",\"ack_wait\":\"30s\"}"));
    natsio_msg_list *list = fetch(js, "CDEFER", "q", 4, 1000);
    NT_CHECK(list != NULL);
    NT_CHECK_INT_EQ(natsio_msg_list_count(list), 4);
    /* Acked at once for the handle (a second ack of any kind is refused)
     * and sent by the library's own tick: no call, no wait, no other
     * frame (the server's next PING is minutes away). */
    for (size_t i = 0; i < 3; i++) EXPECT_OK(natsio_msg_ack_deferred(natsio_msg_list_get(list, i)));
    EXPECT_FAILS(NATSIO_ERR_MESSAGE_ALREADY_ACKED, natsio_msg_ack_deferred(natsio_msg_list_get(list, 0)));
    EXPECT_FAILS(NATSIO_ERR_MESSAGE_ALREADY_ACKED, natsio_msg_ack(natsio_msg_list_get(list, 1)));
    NT_CHECK(wait_consumer_int(other, "CDEFER", "q", "num_ack_pending", 1));

    /* natsio_client_send_deferred sends at once. */
    EXPECT_OK(natsio_msg_ack_deferred(natsio_msg_list_get(list, 3)));
    EXPECT_OK(natsio_client_send_deferred(c));
    NT_CHECK(wait_consumer_int(other, "CDEFER", "q", "num_ack_pending", 0));
    NT_CHECK_INT_EQ(consumer_int(js, "CDEFER", "q", "num_redelivered"), 0);
    EXPECT_NULL_ARG("msg", natsio_msg_ack_deferred(NULL));
    EXPECT_OK(natsio_js_stream_delete(js, "CDEFER"));
}

static void test_in_progress_holds_a_message_past_ack_wait(void) {
    natsio_js *js = connect_js();
    NT_CHECK(js != NULL);
    NT_CHECK(create_stream(js, "CWPI", "cwpi.>"));
    NT_CHECK(publish_n(js, "cwpi.a", "w", 1));
    NT_CHECK(create_consumer(js, "CWPI", "{\"durable_name\":\"w\",\"ack_policy\":\"explicit\",\"ack_wait\":\"1s\"}"));
    natsio_msg_list *list = fetch(js, "CWPI", "w", 1, 1000);
    NT_CHECK(list != NULL);
    NT_CHECK_INT_EQ(natsio_msg_list_count(list), 1);
    const natsio_msg *m = natsio_msg_list_get(list, 0);

    /* 4 x 400 ms is past the 1 s ack wait: without the +WPI the message
     * would come again in one of these fetches. */
    for (int i = 0; i < 4; i++) {
        EXPECT_OK(natsio_msg_in_progress(m));
        natsio_msg_list *none = fetch(js, "CWPI", "w", 1, 400);
        NT_CHECK(none != NULL);
        NT_CHECK_MSG(natsio_msg_list_count(none) == 0, "redelivered after %d x 400 ms of in_progress", i + 1);
    }
    EXPECT_OK(natsio_msg_ack_sync(m, 2000));
    NT_CHECK_INT_EQ(consumer_int(js, "CWPI", "w", "num_ack_pending"), 0);
    NT_CHECK_INT_EQ(consumer_int(js, "CWPI", "w", "num_redelivered"), 0);
    EXPECT_OK(natsio_js_stream_delete(js, "CWPI"));
}

static void test_nak_redelivers_and_nak_delay_waits(void) {
    natsio_js *js = connect_js();
    NT_CHECK(js != NULL);
    NT_CHECK(create_stream(js, "CNAK", "cnak.>"));
    NT_CHECK(publish_n(js, "cnak.a", "n", 4));
    NT_CHECK(create_consumer(js, "CNAK", "{\"durable_name\":\"n\",\"ack_policy\":\"explicit\",\"ack_wait\":\"30s\"}"));

    /* nak the first of two: it comes again (order not guaranteed against
     * newer messages), delivered twice; the newer ones once. */
    natsio_msg_list *first = fetch(js, "CNAK", "n", 2, 1000);
    NT_CHECK(first != NULL);
    NT_CHECK_INT_EQ(natsio_msg_list_count(first), 2);
    EXPECT_OK(natsio_msg_nak(natsio_msg_list_get(first, 0), 0));
    EXPECT_OK(natsio_msg_ack(natsio_msg_list_get(first, 1)));
    natsio_msg_list *rest = fetch(js, "CNAK", "n", 3, 500);
    NT_CHECK(rest != NULL);
    NT_CHECK_INT_EQ(natsio_msg_list_count(rest), 3);
    bool seen[4] = {false, false, false, false};
    for (size_t i = 0; i < 3; i++) {
        const natsio_msg *m = natsio_msg_list_get(rest, i);
        natsio_js_msg_metadata md = metadata_of(m);
        NT_CHECK(!nt_failed());
        NT_CHECK_MSG(md.stream_seq >= 1 && md.stream_seq <= 4 && md.stream_seq != 2, "stream_seq %llu",
                     (unsigned long long)md.stream_seq);
        NT_CHECK(!seen[md.stream_seq - 1]);
        seen[md.stream_seq - 1] = true;
        char want[8];
        snprintf(want, sizeof want, "n%llu", (unsigned long long)(md.stream_seq - 1));
        NT_CHECK(payload_is(m, want));
        NT_CHECK_INT_EQ(md.num_delivered, md.stream_seq == 1 ? 2 : 1);
        if (md.stream_seq == 1) {
            /* The consumer sequence goes on for a redelivery. */
            NT_CHECK_MSG(md.consumer_seq > 2, "consumer_seq %llu", (unsigned long long)md.consumer_seq);
        }
    }
    NT_CHECK(seen[0] && seen[2] && seen[3]);

    /* nak with a delay: not redelivered before about half of it. */
    const natsio_msg *delayed = NULL;
    for (size_t i = 0; i < 3; i++) {
        const natsio_msg *m = natsio_msg_list_get(rest, i);
        if (payload_is(m, "n3"))
            delayed = m;
        else
            EXPECT_OK(natsio_msg_ack(m));
    }
    NT_CHECK(delayed != NULL);
    int64_t t0 = nt_now_ms();
    EXPECT_OK(natsio_msg_nak(delayed, 800));
    natsio_msg_list *back = fetch(js, "CNAK", "n", 1, 2500);
    int64_t took = nt_now_ms() - t0;
    NT_CHECK(back != NULL);
    NT_CHECK_INT_EQ(natsio_msg_list_count(back), 1);
    NT_CHECK_MSG(took >= 400, "an 800 ms nak delay redelivered after %lld ms", (long long)took);
    NT_CHECK_MSG(took < 2500, "an 800 ms nak delay redelivered after %lld ms", (long long)took);
    const natsio_msg *b = natsio_msg_list_get(back, 0);
    NT_CHECK(payload_is(b, "n3"));
    natsio_js_msg_metadata md = metadata_of(b);
    NT_CHECK(!nt_failed());
    NT_CHECK_INT_EQ(md.num_delivered, 2);
    EXPECT_OK(natsio_msg_ack_sync(b, 2000));
    NT_CHECK(wait_consumer_int(js, "CNAK", "n", "num_ack_pending", 0));
    EXPECT_OK(natsio_js_stream_delete(js, "CNAK"));
}

static void test_term_stops_redelivery_ack_wait_does_not(void) {
    natsio_js *js = connect_js();
    NT_CHECK(js != NULL);
    NT_CHECK(create_stream(js, "CTERM", "cterm.>"));
    NT_CHECK(publish_n(js, "cterm.a", "t", 2));
    NT_CHECK(create_consumer(js, "CTERM", "{\"durable_name\":\"t\",\"ack_policy\":\"explicit\",\"ack_wait\":\"1s\"}"));
    natsio_msg_list *list = fetch(js, "CTERM", "t", 2, 1000);
    NT_CHECK(list != NULL);
    NT_CHECK_INT_EQ(natsio_msg_list_count(list), 2);
    /* The first is terminated, the second left unanswered. */
    EXPECT_OK(natsio_msg_term(natsio_msg_list_get(list, 0), "cannot handle it"));

    /* Past the ack wait (both were due at the same time) only the
     * unanswered one comes again, and then nothing. */
    natsio_msg_list *again = fetch(js, "CTERM", "t", 1, 3000);
    NT_CHECK(again != NULL);
    NT_CHECK_INT_EQ(natsio_msg_list_count(again), 1);
    const natsio_msg *m = natsio_msg_list_get(again, 0);
    NT_CHECK_MSG(payload_is(m, "t1"), "redelivered: %.*s", (int)natsio_msg_data_len(m),
                 (const char *)natsio_msg_data(m));
    natsio_js_msg_metadata md = metadata_of(m);
    NT_CHECK(!nt_failed());
    NT_CHECK_INT_EQ(md.num_delivered, 2);
    natsio_msg_list *none = fetch(js, "CTERM", "t", 1, 400);
    NT_CHECK(none != NULL);
    NT_CHECK_INT_EQ(natsio_msg_list_count(none), 0);
    EXPECT_OK(natsio_msg_ack_sync(m, 2000));
    /* The old delivery of the same message is another handle: the server
     * has it acked already, and a late ack is harmless. */
    EXPECT_OK(natsio_msg_ack(natsio_msg_list_get(list, 1)));
    NT_CHECK(wait_consumer_int(js, "CTERM", "t", "num_ack_pending", 0));
    EXPECT_OK(natsio_js_stream_delete(js, "CTERM"));
}

static void test_ack_policy_none(void) {
    natsio_js *js = connect_js();
    NT_CHECK(js != NULL);
    NT_CHECK(create_stream(js, "CNONE", "cnone.>"));
    NT_CHECK(publish_n(js, "cnone.a", "x", 3));
    char *info = NULL;
    EXPECT_OK(natsio_js_consumer_create(js, "CNONE", "{\"durable_name\":\"z\",\"ack_policy\":\"none\"}", NATSIO_CREATE,
                                        &info));
    kept(info);
    NT_CHECK_MSG(strstr(info, "\"ack_policy\":\"none\"") != NULL, "%s", info);

    natsio_msg_list *list = fetch(js, "CNONE", "z", 2, 500);
    NT_CHECK(list != NULL);
    NT_CHECK_INT_EQ(natsio_msg_list_count(list), 2);
    /* Nothing waits for an ack: the messages still carry their metadata,
     * and are never delivered again. */
    natsio_js_msg_metadata md = metadata_of(natsio_msg_list_get(list, 1));
    NT_CHECK(!nt_failed());
    NT_CHECK_INT_EQ(md.stream_seq, 2);
    NT_CHECK_INT_EQ(md.num_delivered, 1);
    NT_CHECK_INT_EQ(md.num_pending, 1);
    NT_CHECK_INT_EQ(consumer_int(js, "CNONE", "z", "num_ack_pending"), 0);
    natsio_msg_list *rest = fetch(js, "CNONE", "z", 5, 300);
    NT_CHECK(rest != NULL);
    NT_CHECK_INT_EQ(natsio_msg_list_count(rest), 1);
    NT_CHECK(payload_is(natsio_msg_list_get(rest, 0), "x2"));
    /* An ack is not needed; sending one anyway is harmless, and still
     * counts once per handle. */
    EXPECT_OK(natsio_msg_ack(natsio_msg_list_get(rest, 0)));
    EXPECT_FAILS(NATSIO_ERR_MESSAGE_ALREADY_ACKED, natsio_msg_ack(natsio_msg_list_get(rest, 0)));
    natsio_msg_list *none = fetch(js, "CNONE", "z", 5, 300);
    NT_CHECK(none != NULL);
    NT_CHECK_INT_EQ(natsio_msg_list_count(none), 0);
    NT_CHECK_INT_EQ(consumer_int(js, "CNONE", "z", "num_pending"), 0);
    EXPECT_OK(natsio_js_stream_delete(js, "CNONE"));
}

static void test_acks_through_borrowed_and_cloned_messages(void) {
    natsio_js *js = connect_js();
    NT_CHECK(js != NULL);
    NT_CHECK(create_stream(js, "CCLONE", "cclone.>"));
    NT_CHECK(publish_n(js, "cclone.a", "c", 3));
    NT_CHECK(create_consumer(js, "CCLONE",
                             "{\"durable_name\":\"c\",\"ack_policy\":\"explicit\",\"ack_wait\":\"30s\"}"));

    natsio_msg_list *list = NULL;
    natsio_fetch_options o = fetch_options();
    o.max_messages = 3;
    o.expires_ms = 1000;
    EXPECT_OK(natsio_js_fetch(js, "CCLONE", "c", &o, &list));
    size_t n = natsio_msg_list_count(list);
    natsio_msg *before = NULL, *after = NULL, *spare = NULL;
    natsio_status st0 = n == 3 ? natsio_msg_clone(natsio_msg_list_get(list, 0), &before) : NATSIO_ERR_ILLEGAL_STATE;
    /* A clone of an acked message is acked too. */
    natsio_status st1 = n == 3 ? natsio_msg_ack(natsio_msg_list_get(list, 1)) : NATSIO_ERR_ILLEGAL_STATE;
    natsio_status st2 = n == 3 ? natsio_msg_clone(natsio_msg_list_get(list, 1), &after) : NATSIO_ERR_ILLEGAL_STATE;
    natsio_status st3 = n == 3 ? natsio_msg_clone(natsio_msg_list_get(list, 2), &spare) : NATSIO_ERR_ILLEGAL_STATE;
    /* The clones outlive the list. */
    natsio_msg_list_free(list);
    nt_cleanup(msg_free_cb, before);
    nt_cleanup(msg_free_cb, after);
    nt_cleanup(msg_free_cb, spare);
    NT_CHECK_INT_EQ(n, 3);
    EXPECT_OK(st0);
    EXPECT_OK(st1);
    EXPECT_OK(st2);
    EXPECT_OK(st3);

    EXPECT_FAILS(NATSIO_ERR_MESSAGE_ALREADY_ACKED, natsio_msg_ack(after));
    NT_CHECK(payload_is(before, "c0"));
    natsio_js_msg_metadata md = metadata_of(before);
    NT_CHECK(!nt_failed());
    NT_CHECK_INT_EQ(md.stream_seq, 1);
    NT_CHECK_MSG(span_eq(md.stream, md.stream_len, "CCLONE"), "stream %.*s", (int)md.stream_len, md.stream);
    EXPECT_OK(natsio_msg_ack_sync(before, 2000));
    EXPECT_FAILS(NATSIO_ERR_MESSAGE_ALREADY_ACKED, natsio_msg_ack(before));
    EXPECT_OK(natsio_msg_nak(spare, 0));
    EXPECT_FAILS(NATSIO_ERR_MESSAGE_ALREADY_ACKED, natsio_msg_term(spare, NULL));

    /* The server got the acks through the clones: only the nak'ed one
     * comes again. */
    natsio_msg_list *again = fetch(js, "CCLONE", "c", 3, 500);
    NT_CHECK(again != NULL);
    NT_CHECK_INT_EQ(natsio_msg_list_count(again), 1);
    NT_CHECK(payload_is(natsio_msg_list_get(again, 0), "c2"));
    /* A clone of an owned message from next, acked after the original is
     * freed. */
    natsio_msg *owned = NULL;
    EXPECT_OK(natsio_js_publish(js, "cclone.b", "d", 1, NULL, NULL));
    EXPECT_OK(natsio_js_next(js, "CCLONE", "c", NEXT_WAIT(1000), &owned));
    natsio_msg *copy = NULL;
    natsio_status st = natsio_msg_clone(owned, &copy);
    natsio_msg_free(owned);
    EXPECT_OK(st);
    nt_cleanup(msg_free_cb, copy);
    NT_CHECK(payload_is(copy, "d"));
    EXPECT_OK(natsio_msg_ack_sync(copy, 2000));
    EXPECT_OK(natsio_msg_ack_sync(natsio_msg_list_get(again, 0), 2000));
    NT_CHECK_INT_EQ(consumer_int(js, "CCLONE", "c", "num_ack_pending"), 0);
    EXPECT_OK(natsio_js_stream_delete(js, "CCLONE"));
}

static void test_messages_that_are_not_jetstream_messages(void) {
    char subj[128];
    natsio_client *c = connect_client();
    NT_CHECK(c != NULL);
    natsio_sub *sub = subscribe_and_flush(c, case_subject(subj, sizeof subj, "core"));
    NT_CHECK(sub != NULL);

    /* No reply subject at all. */
    EXPECT_OK(natsio_client_publish(c, subj, "plain", 5));
    natsio_msg *plain = NULL;
    EXPECT_OK(natsio_sub_next(sub, 2000, &plain));
    nt_cleanup(msg_free_cb, plain);
    natsio_js_msg_metadata md;
    memset(&md, 0xA5, sizeof md);
    natsio_js_msg_metadata untouched = md;
    EXPECT_FAILS(NATSIO_ERR_NOT_JS_MESSAGE, natsio_msg_ack(plain));
    EXPECT_FAILS(NATSIO_ERR_NOT_JS_MESSAGE, natsio_msg_ack_sync(plain, 100));
    EXPECT_FAILS(NATSIO_ERR_NOT_JS_MESSAGE, natsio_msg_nak(plain, 0));
    EXPECT_FAILS(NATSIO_ERR_NOT_JS_MESSAGE, natsio_msg_term(plain, "x"));
    EXPECT_FAILS(NATSIO_ERR_NOT_JS_MESSAGE, natsio_msg_in_progress(plain));
    EXPECT_FAILS(NATSIO_ERR_NOT_JS_MESSAGE, natsio_msg_js_metadata(plain, &md));
    NT_CHECK(memcmp(&md, &untouched, sizeof md) == 0);
    /* Refusals are not acks: still NOT_JS_MESSAGE, not ALREADY_ACKED. */
    EXPECT_FAILS(NATSIO_ERR_NOT_JS_MESSAGE, natsio_msg_ack(plain));

    /* Reply subjects that are not ack subjects. (The server itself drops
     * publishes of clients with a "$JS.ACK." reply, so malformed ack
     * subjects cannot be delivered here.) */
    const char *replies[] = {"_INBOX.abc", "$JS.API.S.C.1.2.3.4.5", "JS.ACK.S.C.1.2.3.4.5", "$JS.ACKS.S.C.1.2.3.4.5"};
    for (size_t i = 0; i < NT_COUNT(replies); i++) {
        EXPECT_OK(natsio_client_publish_with(c, subj, replies[i], NULL, "r", 1));
        natsio_msg *m = NULL;
        natsio_status got = natsio_sub_next(sub, 2000, &m);
        NT_CHECK_MSG(got == NATSIO_OK, "with reply %s: %s", replies[i], natsio_status_str(got));
        NT_CHECK_STR_EQ(natsio_msg_reply(m), replies[i]);
        natsio_status a = natsio_msg_ack(m);
        natsio_status t = natsio_msg_term(m, NULL);
        natsio_status d = natsio_msg_js_metadata(m, &md);
        natsio_msg_free(m);
        NT_CHECK_MSG(a == NATSIO_ERR_NOT_JS_MESSAGE, "ack with reply %s: %s", replies[i], natsio_status_str(a));
        NT_CHECK_MSG(t == NATSIO_ERR_NOT_JS_MESSAGE, "term with reply %s: %s", replies[i], natsio_status_str(t));
        NT_CHECK_MSG(d == NATSIO_ERR_NOT_JS_MESSAGE, "metadata with reply %s: %s", replies[i],
                     natsio_status_str(d));
    }
    NT_CHECK(memcmp(&md, &untouched, sizeof md) == 0);
}

static void test_push_consumer_messages_on_a_plain_subscription_ack(void) {
    /* Messages of a push consumer arrive on a plain subscription: owned
     * natsio_msg handles from natsio_sub_next_msg, which ack like fetched
     * ones. */
    char deliver[128];
    natsio_client *c = connect_client();
    NT_CHECK(c != NULL);
    natsio_js *js = new_jetstream(c, NULL);
    NT_CHECK(js != NULL);
    natsio_sub *sub = subscribe_and_flush(c, case_subject(deliver, sizeof deliver, "push"));
    NT_CHECK(sub != NULL);
    NT_CHECK(create_stream(js, "CPUSH", "cpush.>"));
    NT_CHECK(publish_n(js, "cpush.a", "p", 2));
    char cfg[256];
    snprintf(cfg, sizeof cfg,
             "{\"durable_name\":\"p\",\"deliver_subject\":\"%s\",\"ack_policy\":\"explicit\","
             "\"ack_wait\":\"30s\"}",
             deliver);
    NT_CHECK(create_consumer(js, "CPUSH", cfg));
    natsio_msg *m0 = NULL, *m1 = NULL;
    EXPECT_OK(natsio_sub_next(sub, 2000, &m0));
    nt_cleanup(msg_free_cb, m0);
    EXPECT_OK(natsio_sub_next(sub, 2000, &m1));
    nt_cleanup(msg_free_cb, m1);
    NT_CHECK(payload_is(m0, "p0") && payload_is(m1, "p1"));
    natsio_js_msg_metadata md = metadata_of(m1);
    NT_CHECK(!nt_failed());
    NT_CHECK(span_eq(md.stream, md.stream_len, "CPUSH"));
    NT_CHECK(span_eq(md.consumer, md.consumer_len, "p"));
    NT_CHECK_INT_EQ(md.stream_seq, 2);
    NT_CHECK_INT_EQ(md.num_delivered, 1);
    EXPECT_OK(natsio_msg_ack_sync(m0, 2000));
    EXPECT_FAILS(NATSIO_ERR_MESSAGE_ALREADY_ACKED, natsio_msg_ack(m0));
    EXPECT_OK(natsio_msg_in_progress(m1));
    EXPECT_OK(natsio_msg_term(m1, "done"));
    EXPECT_FAILS(NATSIO_ERR_MESSAGE_ALREADY_ACKED, natsio_msg_nak(m1, 0));
    NT_CHECK(wait_consumer_int(js, "CPUSH", "p", "num_ack_pending", 0));
    EXPECT_OK(natsio_js_stream_delete(js, "CPUSH"));
}

/* ---- inline status messages --------------------------------------------------- */

/* Sends a raw pull request `body` for CSTAT's consumer "s" with replies to
 * `inbox` and reads the one status message the server answers with. */
static natsio_msg *pull_status(natsio_client *c, natsio_sub *sub, const char *inbox, const char *body) {
    natsio_status st = natsio_client_publish_with(c, "$JS.API.CONSUMER.MSG.NEXT.CSTAT.s", inbox, NULL, body,
                                                  strlen(body));
    natsio_msg *m = NULL;
    if (st == NATSIO_OK) st = natsio_sub_next(sub, 5000, &m);
    if (st != NATSIO_OK) {
        nt_fail_at(__FILE__, __LINE__, "pull %s: %s (%s)", body, natsio_status_str(st), natsio_last_error());
        return NULL;
    }
    nt_cleanup(msg_free_cb, m);
    return m;
}

static void test_inline_status_code_and_description(void) {
    /* A pull request answered by the server itself: "NATS/1.0 404 No
     * Messages" and "NATS/1.0 408 Request Timeout" on a plain
     * subscription, both parts readable. */
    char inbox[128];
    natsio_client *c = connect_client();
    NT_CHECK(c != NULL);
    natsio_js *js = new_jetstream(c, NULL);
    NT_CHECK(js != NULL);
    natsio_sub *sub = subscribe_and_flush(c, case_subject(inbox, sizeof inbox, "inbox"));
    NT_CHECK(sub != NULL);
    NT_CHECK(create_stream(js, "CSTAT", "cstat.>"));
    NT_CHECK(create_consumer(js, "CSTAT", "{\"durable_name\":\"s\",\"ack_policy\":\"explicit\"}"));

    natsio_msg *none = pull_status(c, sub, inbox, "{\"batch\":1,\"no_wait\":true}");
    NT_CHECK(none != NULL);
    NT_CHECK_INT_EQ(natsio_msg_status(none), 404);
    NT_CHECK_STR_EQ(natsio_msg_status_description(none), "No Messages");
    NT_CHECK_STR_EQ(natsio_headers_status_description(natsio_msg_headers(none)), "No Messages");

    natsio_msg *expired = pull_status(c, sub, inbox, "{\"batch\":1,\"expires\":50000000}");
    NT_CHECK(expired != NULL);
    NT_CHECK_INT_EQ(natsio_msg_status(expired), 408);
    NT_CHECK_STR_EQ(natsio_msg_status_description(expired), "Request Timeout");

    /* An ordinary message has neither; NULL arguments read as none. */
    NT_CHECK(publish_n(js, "cstat.a", "m", 1));
    /* A pull that waits: right after the publish's ack the consumer may not
     * have seen the message yet, and a no-wait pull would answer 404. */
    natsio_msg *plain = pull_status(c, sub, inbox, "{\"batch\":1,\"expires\":5000000000}");
    NT_CHECK(plain != NULL);
    NT_CHECK_INT_EQ(natsio_msg_status(plain), 0);
    NT_CHECK(payload_is(plain, "m0"));
    NT_CHECK(natsio_msg_status_description(plain) == NULL);
    NT_CHECK(natsio_msg_status_description(NULL) == NULL);
    NT_CHECK(natsio_headers_status_description(NULL) == NULL);
    EXPECT_OK(natsio_js_stream_delete(js, "CSTAT"));
}

/* ---- a fetch whose consumer goes away ------------------------------------------- */

typedef struct {
    natsio_js *js;
    natsio_status status;
    bool detail_ok;
    natsio_msg_list *list;
    int64_t took_ms;
} blocked_fetch;

static void *fetch_thread(void *arg) {
    blocked_fetch *b = (blocked_fetch *)arg;
    natsio_fetch_options o = fetch_options();
    o.max_messages = 5;
    o.expires_ms = 5000;
    int64_t t0 = nt_now_ms();
    b->status = natsio_js_fetch(b->js, "CDEL", "d", &o, &b->list);
    b->took_ms = nt_now_ms() - t0;
    const char *detail = natsio_last_error();
    b->detail_ok = detail != NULL && detail[0] != '\0';
    return NULL;
}

static void test_fetch_ends_when_its_consumer_is_deleted(void) {
    natsio_js *js = connect_js();
    NT_CHECK(js != NULL);
    NT_CHECK(create_stream(js, "CDEL", "cdel.>"));
    NT_CHECK(create_consumer(js, "CDEL", "{\"durable_name\":\"d\",\"ack_policy\":\"explicit\"}"));
    blocked_fetch b = {js, NATSIO_OK, false, SENTINEL, 0};
    pthread_t t;
    NT_CHECK(pthread_create(&t, NULL, fetch_thread, &b) == 0);
    /* Wait until the pull request is at the server. */
    int64_t deadline = nt_now_ms() + 3000;
    while (consumer_int(js, "CDEL", "d", "num_waiting") < 1 && nt_now_ms() < deadline) nt_sleep_ms(20);
    natsio_status del = natsio_js_consumer_delete(js, "CDEL", "d");
    pthread_join(t, NULL);
    EXPECT_OK(del);
    NT_CHECK_MSG(b.status == NATSIO_ERR_CONSUMER_DELETED, "fetch: %s", natsio_status_str(b.status));
    NT_CHECK(b.detail_ok);
    NT_CHECK(b.list == SENTINEL);
    NT_CHECK_MSG(b.took_ms < 4000, "the fetch ended %lld ms after it started", (long long)b.took_ms);

    /* Fetching from a consumer that is gone: not found, not an empty list. */
    natsio_msg_list *list = SENTINEL;
    natsio_fetch_options o = fetch_options();
    o.expires_ms = 300;
    EXPECT_FAILS(NATSIO_ERR_CONSUMER_NOT_FOUND, natsio_js_fetch(js, "CDEL", "d", &o, &list));
    NT_CHECK(list == SENTINEL);
    natsio_msg *m = SENTINEL;
    EXPECT_FAILS(NATSIO_ERR_CONSUMER_NOT_FOUND, natsio_js_next(js, "CDEL", "d", NEXT_WAIT(300), &m));
    NT_CHECK(m == SENTINEL);
    EXPECT_OK(natsio_js_stream_delete(js, "CDEL"));
}

/* ---- use after close --------------------------------------------------------- */

/* Every consumer call on `js`, whose client is closed (or freed), fails
 * with NATSIO_ERR_CONNECTION_CLOSED and leaves its outputs alone; so do
 * acks of `m`, a message fetched before. */
static void check_consumer_calls_fail_closed(natsio_js *js, const natsio_msg *m) {
    char *s = SENTINEL_STR;
    natsio_msg_list *list = SENTINEL;
    natsio_msg *msg = SENTINEL;
    const char *cfg = "{\"durable_name\":\"x\",\"ack_policy\":\"explicit\"}";
    natsio_fetch_options o = fetch_options();
    o.expires_ms = 200;
    EXPECT_FAILS(NATSIO_ERR_CONNECTION_CLOSED, natsio_js_consumer_create(js, "CCLOSED", cfg, NATSIO_CREATE, &s));
    EXPECT_FAILS(NATSIO_ERR_CONNECTION_CLOSED, natsio_js_consumer_create(js, "CCLOSED", cfg, NATSIO_CREATE, NULL));
    EXPECT_FAILS(NATSIO_ERR_CONNECTION_CLOSED, natsio_js_consumer_create(js, "CCLOSED", cfg, NATSIO_UPDATE, &s));
    EXPECT_FAILS(NATSIO_ERR_CONNECTION_CLOSED, natsio_js_consumer_create(js, "CCLOSED", cfg, NATSIO_CREATE_OR_UPDATE,
                                                                         &s));
    EXPECT_FAILS(NATSIO_ERR_CONNECTION_CLOSED, natsio_js_consumer_info(js, "CCLOSED", "x", &s));
    natsio_string_list *names = SENTINEL;
    EXPECT_FAILS(NATSIO_ERR_CONNECTION_CLOSED, natsio_js_consumer_names(js, "CCLOSED", &names));
    NT_CHECK(names == SENTINEL);
    EXPECT_FAILS(NATSIO_ERR_CONNECTION_CLOSED, natsio_js_consumer_delete(js, "CCLOSED", "x"));
    EXPECT_FAILS(NATSIO_ERR_CONNECTION_CLOSED, natsio_js_fetch(js, "CCLOSED", "x", &o, &list));
    EXPECT_FAILS(NATSIO_ERR_CONNECTION_CLOSED, natsio_js_fetch(js, "CCLOSED", "x", NULL, &list));
    EXPECT_FAILS(NATSIO_ERR_CONNECTION_CLOSED, natsio_js_next(js, "CCLOSED", "x", NEXT_WAIT(200), &msg));
    EXPECT_FAILS(NATSIO_ERR_CONNECTION_CLOSED, natsio_msg_ack(m));
    EXPECT_FAILS(NATSIO_ERR_CONNECTION_CLOSED, natsio_msg_ack_sync(m, 200));
    EXPECT_FAILS(NATSIO_ERR_CONNECTION_CLOSED, natsio_msg_nak(m, 0));
    EXPECT_FAILS(NATSIO_ERR_CONNECTION_CLOSED, natsio_msg_nak(m, 100));
    EXPECT_FAILS(NATSIO_ERR_CONNECTION_CLOSED, natsio_msg_term(m, "closed"));
    EXPECT_FAILS(NATSIO_ERR_CONNECTION_CLOSED, natsio_msg_in_progress(m));
    /* A failed ack is not an ack. */
    EXPECT_FAILS(NATSIO_ERR_CONNECTION_CLOSED, natsio_msg_ack(m));
    NT_CHECK(s == SENTINEL_STR && list == SENTINEL && msg == SENTINEL);
    /* The message is still readable, metadata included. */
    NT_CHECK(payload_is(m, "c0"));
    natsio_js_msg_metadata md = metadata_of(m);
    NT_CHECK(!nt_failed());
    NT_CHECK_INT_EQ(md.stream_seq, 1);
    NT_CHECK(span_eq(md.consumer, md.consumer_len, "x"));
    /* Argument errors stay argument errors. */
    EXPECT_FAILS(NATSIO_ERR_INVALID_ARGUMENT, natsio_js_consumer_info(js, "CC.LOSED", "x", &s));
    o.max_messages = -1;
    EXPECT_FAILS(NATSIO_ERR_INVALID_ARGUMENT, natsio_js_fetch(js, "CCLOSED", "x", &o, &list));
    NT_CHECK(s == SENTINEL_STR && list == SENTINEL);
}

static void test_use_after_client_close_and_free(void) {
    natsio_client *c = NULL;
    EXPECT_OK(natsio_client_connect_url(nt_server_url(g_server), &c));
    natsio_js *js = NULL;
    natsio_msg_list *list = NULL;
    natsio_status st = natsio_client_jetstream(c, NULL, &js);
    if (st == NATSIO_OK)
        st = natsio_js_stream_create(
            js, "{\"name\":\"CCLOSED\",\"subjects\":[\"cclosed.>\"],\"storage\":\"memory\"}", NATSIO_CREATE, NULL);
    if (st == NATSIO_OK) st = natsio_js_publish(js, "cclosed.a", "c0", 2, NULL, NULL);
    if (st == NATSIO_OK)
        st = natsio_js_consumer_create(js, "CCLOSED", "{\"durable_name\":\"x\",\"ack_policy\":\"explicit\"}",
                                       NATSIO_CREATE, NULL);
    natsio_fetch_options o = fetch_options();
    o.max_messages = 1;
    o.expires_ms = 1000;
    if (st == NATSIO_OK) st = natsio_js_fetch(js, "CCLOSED", "x", &o, &list);
    if (st == NATSIO_OK && natsio_msg_list_count(list) != 1) st = NATSIO_ERR_NO_MESSAGES;
    if (st == NATSIO_OK) st = natsio_client_close(c);
    /* Freed at the end of the case, after the client: list first, then js. */
    nt_cleanup(js_free_cb, js);
    nt_cleanup(msg_list_free_cb, list);
    if (st != NATSIO_OK) natsio_client_free(c);
    NT_CHECK_MSG(st == NATSIO_OK, "setup: %s (%s)", natsio_status_str(st), natsio_last_error());
    const natsio_msg *m = natsio_msg_list_get(list, 0);

    check_consumer_calls_fail_closed(js, m);
    natsio_client_free(c);
    NT_CHECK(!nt_failed());
    /* The context and the message do not keep the freed client alive. */
    check_consumer_calls_fail_closed(js, m);
    NT_CHECK(!nt_failed());

    /* The consumer is still there for another client, its message unacked. */
    natsio_js *other = connect_js();
    NT_CHECK(other != NULL);
    NT_CHECK_INT_EQ(consumer_int(other, "CCLOSED", "x", "num_ack_pending"), 1);
    EXPECT_OK(natsio_js_stream_delete(other, "CCLOSED"));
}

/* ---- bad input ------------------------------------------------------------------ */

static void test_null_tolerant_list_functions(void) {
    NT_CHECK_INT_EQ(natsio_msg_list_count(NULL), 0);
    NT_CHECK(natsio_msg_list_get(NULL, 0) == NULL);
    NT_CHECK(natsio_msg_list_get(NULL, SIZE_MAX) == NULL);
    plant_error_marker();
    natsio_msg_list_free(NULL);
    NT_CHECK_MSG(strstr(natsio_last_error(), ERROR_MARKER) != NULL,
                 "natsio_msg_list_free(NULL) changed natsio_last_error() to \"%s\"", natsio_last_error());
}

static void test_bad_input_consumer_functions(void) {
    natsio_js *js = connect_js();
    NT_CHECK(js != NULL);
    NT_CHECK(create_stream(js, "CBAD", "cbad.>"));
    const char *cfg = "{\"durable_name\":\"ok\",\"ack_policy\":\"explicit\"}";
    NT_CHECK(create_consumer(js, "CBAD", cfg));
    char *s = SENTINEL_STR;

    EXPECT_NULL_ARG("js", natsio_js_consumer_create(NULL, "CBAD", cfg, NATSIO_CREATE, &s));
    EXPECT_NULL_ARG("stream", natsio_js_consumer_create(js, NULL, cfg, NATSIO_CREATE, &s));
    EXPECT_NULL_ARG("config_json", natsio_js_consumer_create(js, "CBAD", NULL, NATSIO_CREATE, &s));
    EXPECT_FAILS_NAMING(NATSIO_ERR_INVALID_UTF8, "stream", natsio_js_consumer_create(js, BAD_UTF8, cfg, NATSIO_CREATE,
                                                                                     &s));
    EXPECT_FAILS_NAMING(NATSIO_ERR_INVALID_UTF8, "config_json", natsio_js_consumer_create(js, "CBAD", BAD_UTF8,
                                                                                          NATSIO_CREATE, &s));
    EXPECT_NULL_ARG("js", natsio_js_consumer_create(NULL, "CBAD", cfg, NATSIO_UPDATE, &s));
    EXPECT_NULL_ARG("stream", natsio_js_consumer_create(js, NULL, cfg, NATSIO_UPDATE, &s));
    EXPECT_NULL_ARG("config_json", natsio_js_consumer_create(js, "CBAD", NULL, NATSIO_UPDATE, &s));
    EXPECT_FAILS_NAMING(NATSIO_ERR_INVALID_UTF8, "stream", natsio_js_consumer_create(js, BAD_UTF8, cfg, NATSIO_UPDATE,
                                                                                     &s));
    EXPECT_FAILS_NAMING(NATSIO_ERR_INVALID_UTF8, "config_json", natsio_js_consumer_create(js, "CBAD", BAD_UTF8,
                                                                                          NATSIO_UPDATE, &s));
    EXPECT_NULL_ARG("js", natsio_js_consumer_create(NULL, "CBAD", cfg, NATSIO_CREATE_OR_UPDATE, &s));
    EXPECT_NULL_ARG("stream", natsio_js_consumer_create(js, NULL, cfg, NATSIO_CREATE_OR_UPDATE, &s));
    EXPECT_NULL_ARG("config_json", natsio_js_consumer_create(js, "CBAD", NULL, NATSIO_CREATE_OR_UPDATE, &s));
    EXPECT_FAILS_NAMING(NATSIO_ERR_INVALID_UTF8, "stream",
                        natsio_js_consumer_create(js, BAD_UTF8, cfg, NATSIO_CREATE_OR_UPDATE, &s));
    EXPECT_FAILS_NAMING(NATSIO_ERR_INVALID_UTF8, "config_json",
                        natsio_js_consumer_create(js, "CBAD", BAD_UTF8, NATSIO_CREATE_OR_UPDATE, &s));

    EXPECT_NULL_ARG("js", natsio_js_consumer_info(NULL, "CBAD", "ok", &s));
    EXPECT_NULL_ARG("stream", natsio_js_consumer_info(js, NULL, "ok", &s));
    EXPECT_NULL_ARG("consumer", natsio_js_consumer_info(js, "CBAD", NULL, &s));
    EXPECT_NULL_ARG("info_json_out", natsio_js_consumer_info(js, "CBAD", "ok", NULL));
    EXPECT_FAILS_NAMING(NATSIO_ERR_INVALID_UTF8, "stream", natsio_js_consumer_info(js, BAD_UTF8, "ok", &s));
    EXPECT_FAILS_NAMING(NATSIO_ERR_INVALID_UTF8, "consumer", natsio_js_consumer_info(js, "CBAD", BAD_UTF8, &s));

    EXPECT_NULL_ARG("js", natsio_js_consumer_delete(NULL, "CBAD", "ok"));
    EXPECT_NULL_ARG("stream", natsio_js_consumer_delete(js, NULL, "ok"));
    EXPECT_NULL_ARG("consumer", natsio_js_consumer_delete(js, "CBAD", NULL));
    EXPECT_FAILS_NAMING(NATSIO_ERR_INVALID_UTF8, "stream", natsio_js_consumer_delete(js, BAD_UTF8, "ok"));
    EXPECT_FAILS_NAMING(NATSIO_ERR_INVALID_UTF8, "consumer", natsio_js_consumer_delete(js, "CBAD", BAD_UTF8));

    natsio_string_list *l = SENTINEL;
    EXPECT_NULL_ARG("js", natsio_js_consumer_names(NULL, "CBAD", &l));
    EXPECT_NULL_ARG("stream", natsio_js_consumer_names(js, NULL, &l));
    EXPECT_NULL_ARG("list_out", natsio_js_consumer_names(js, "CBAD", NULL));
    EXPECT_FAILS_NAMING(NATSIO_ERR_INVALID_UTF8, "stream", natsio_js_consumer_names(js, BAD_UTF8, &l));
    NT_CHECK(s == SENTINEL_STR && l == SENTINEL);

    /* An action that is not a natsio_create_action. */
    EXPECT_FAILS_NAMING(NATSIO_ERR_INVALID_ARGUMENT, "action", natsio_js_consumer_create(js, "CBAD", cfg, 3, &s));
    EXPECT_FAILS_NAMING(NATSIO_ERR_INVALID_ARGUMENT, "action", natsio_js_consumer_create(js, "CBAD", cfg, -2, &s));
    NT_CHECK(s == SENTINEL_STR);

    /* The consumer survived every rejected call, unchanged; no other came. */
    natsio_string_list *names = names_of(js, "CBAD");
    NT_CHECK(names != NULL);
    NT_CHECK_INT_EQ(natsio_string_list_count(names), 1);
    NT_CHECK_STR_EQ(natsio_string_list_get(names, 0), "ok");
    NT_CHECK_INT_EQ(consumer_int(js, "CBAD", "ok", "num_pending"), 0);
    EXPECT_OK(natsio_js_stream_delete(js, "CBAD"));
}

static void test_bad_input_fetch_and_next(void) {
    natsio_js *js = connect_js();
    NT_CHECK(js != NULL);
    NT_CHECK(create_stream(js, "CBADF", "cbadf.>"));
    NT_CHECK(publish_n(js, "cbadf.a", "b", 2));
    NT_CHECK(create_consumer(js, "CBADF", "{\"durable_name\":\"ok\",\"ack_policy\":\"explicit\"}"));
    natsio_msg_list *list = SENTINEL;
    natsio_msg *m = SENTINEL;
    natsio_fetch_options o = fetch_options();
    o.expires_ms = 200;

    EXPECT_NULL_ARG("js", natsio_js_fetch(NULL, "CBADF", "ok", &o, &list));
    EXPECT_NULL_ARG("stream", natsio_js_fetch(js, NULL, "ok", &o, &list));
    EXPECT_NULL_ARG("consumer", natsio_js_fetch(js, "CBADF", NULL, &o, &list));
    EXPECT_NULL_ARG("list_out", natsio_js_fetch(js, "CBADF", "ok", &o, NULL));
    EXPECT_NULL_ARG("list_out", natsio_js_fetch(js, "CBADF", "ok", NULL, NULL));
    EXPECT_FAILS_NAMING(NATSIO_ERR_INVALID_UTF8, "stream", natsio_js_fetch(js, BAD_UTF8, "ok", &o, &list));
    EXPECT_FAILS_NAMING(NATSIO_ERR_INVALID_UTF8, "consumer", natsio_js_fetch(js, "CBADF", BAD_UTF8, &o, &list));
    EXPECT_FAILS(NATSIO_ERR_INVALID_ARGUMENT, natsio_js_fetch(js, "CBA.DF", "ok", &o, &list));
    EXPECT_FAILS(NATSIO_ERR_INVALID_ARGUMENT, natsio_js_fetch(js, "CBADF", "o k", &o, &list));
    EXPECT_FAILS(NATSIO_ERR_INVALID_ARGUMENT, natsio_js_fetch(js, "CBADF", "", &o, &list));
    EXPECT_FAILS(NATSIO_ERR_INVALID_ARGUMENT, natsio_js_fetch(js, "CBADF", "ok*", &o, &list));

    /* Negative options, each named. */
    natsio_fetch_options neg = o;
    neg.max_messages = -1;
    EXPECT_FAILS_NAMING(NATSIO_ERR_INVALID_ARGUMENT, "max_messages", natsio_js_fetch(js, "CBADF", "ok", &neg, &list));
    neg = o;
    neg.max_bytes = -100;
    EXPECT_FAILS_NAMING(NATSIO_ERR_INVALID_ARGUMENT, "max_bytes", natsio_js_fetch(js, "CBADF", "ok", &neg, &list));
    neg = o;
    neg.expires_ms = -1;
    EXPECT_FAILS_NAMING(NATSIO_ERR_INVALID_ARGUMENT, "expires_ms", natsio_js_fetch(js, "CBADF", "ok", &neg, &list));
    neg = o;
    neg.idle_heartbeat_ms = INT64_MIN;
    EXPECT_FAILS_NAMING(NATSIO_ERR_INVALID_ARGUMENT, "idle_heartbeat_ms",
                        natsio_js_fetch(js, "CBADF", "ok", &neg, &list));
    neg = o;
    neg.no_wait = true;
    neg.expires_ms = INT64_MIN;
    EXPECT_FAILS_NAMING(NATSIO_ERR_INVALID_ARGUMENT, "expires_ms", natsio_js_fetch(js, "CBADF", "ok", &neg, &list));
    NT_CHECK(list == SENTINEL);

    EXPECT_NULL_ARG("js", natsio_js_next(NULL, "CBADF", "ok", NEXT_WAIT(200), &m));
    EXPECT_NULL_ARG("stream", natsio_js_next(js, NULL, "ok", NEXT_WAIT(200), &m));
    EXPECT_NULL_ARG("consumer", natsio_js_next(js, "CBADF", NULL, NEXT_WAIT(200), &m));
    EXPECT_NULL_ARG("msg_out", natsio_js_next(js, "CBADF", "ok", NEXT_WAIT(200), NULL));
    EXPECT_FAILS_NAMING(NATSIO_ERR_INVALID_UTF8, "stream", natsio_js_next(js, BAD_UTF8, "ok", NEXT_WAIT(200), &m));
    EXPECT_FAILS_NAMING(NATSIO_ERR_INVALID_UTF8, "consumer", natsio_js_next(js, "CBADF", BAD_UTF8, NEXT_WAIT(200), &m));
    EXPECT_FAILS(NATSIO_ERR_INVALID_ARGUMENT, natsio_js_next(js, "CBADF", "o.k", NEXT_WAIT(200), &m));
    EXPECT_FAILS(NATSIO_ERR_INVALID_ARGUMENT, natsio_js_next(js, "CB>", "ok", NEXT_WAIT(200), &m));
    /* A pull has to end: its wait is expires_ms, never negative, and next
     * takes one message. */
    EXPECT_FAILS_NAMING(NATSIO_ERR_INVALID_ARGUMENT, "expires_ms", natsio_js_next(js, "CBADF", "ok", &neg, &m));
    natsio_fetch_options two = fetch_options();
    two.max_messages = 2;
    EXPECT_FAILS_NAMING(NATSIO_ERR_INVALID_ARGUMENT, "max_messages", natsio_js_next(js, "CBADF", "ok", &two, &m));
    NT_CHECK(m == SENTINEL);

    /* A missing stream or consumer is an error, not an empty batch. */
    EXPECT_FAILS(NATSIO_ERR_CONSUMER_NOT_FOUND, natsio_js_fetch(js, "CBADF_NONE", "ok", &o, &list));
    EXPECT_FAILS(NATSIO_ERR_CONSUMER_NOT_FOUND, natsio_js_fetch(js, "CBADF", "none", &o, &list));
    EXPECT_FAILS(NATSIO_ERR_CONSUMER_NOT_FOUND, natsio_js_fetch(js, "CBADF", "none", NULL, &list));
    EXPECT_FAILS(NATSIO_ERR_CONSUMER_NOT_FOUND, natsio_js_next(js, "CBADF", "none", NEXT_WAIT(200), &m));
    /* A request the server refuses: heartbeats longer than half of expires. */
    natsio_fetch_options hb = o;
    hb.idle_heartbeat_ms = 1000;
    EXPECT_FAILS_NAMING(NATSIO_ERR_JS_API, "heartbeat", natsio_js_fetch(js, "CBADF", "ok", &hb, &list));
    NT_CHECK(list == SENTINEL && m == SENTINEL);

    /* Nothing was consumed by the rejected calls. */
    NT_CHECK_INT_EQ(consumer_int(js, "CBADF", "ok", "num_pending"), 2);
    NT_CHECK_INT_EQ(consumer_int(js, "CBADF", "ok", "num_ack_pending"), 0);

    /* Options fresh from their _init are the defaults; a huge batch is fine. */
    natsio_fetch_options big = fetch_options();
    big.max_messages = INT64_MAX;
    big.expires_ms = 300;
    natsio_msg_list *got = NULL;
    EXPECT_OK(natsio_js_fetch(js, "CBADF", "ok", &big, &got));
    nt_cleanup(msg_list_free_cb, got);
    NT_CHECK_INT_EQ(natsio_msg_list_count(got), 2);
    EXPECT_OK(natsio_js_stream_delete(js, "CBADF"));
}

static void test_bad_input_acks_and_metadata(void) {
    natsio_js_msg_metadata md;
    memset(&md, 0x5A, sizeof md);
    natsio_js_msg_metadata untouched = md;
    EXPECT_NULL_ARG("msg", natsio_msg_ack(NULL));
    EXPECT_NULL_ARG("msg", natsio_msg_ack_sync(NULL, 100));
    EXPECT_NULL_ARG("msg", natsio_msg_nak(NULL, 0));
    EXPECT_NULL_ARG("msg", natsio_msg_nak(NULL, 100));
    EXPECT_NULL_ARG("msg", natsio_msg_term(NULL, NULL));
    EXPECT_NULL_ARG("msg", natsio_msg_term(NULL, "why"));
    EXPECT_NULL_ARG("msg", natsio_msg_in_progress(NULL));
    EXPECT_NULL_ARG("msg", natsio_msg_js_metadata(NULL, &md));
    NT_CHECK(memcmp(&md, &untouched, sizeof md) == 0);

    /* A real consumed message: NULL out, and a bad reason. */
    natsio_js *js = connect_js();
    NT_CHECK(js != NULL);
    NT_CHECK(create_stream(js, "CBADA", "cbada.>"));
    NT_CHECK(publish_n(js, "cbada.a", "q", 1));
    NT_CHECK(create_consumer(js, "CBADA", "{\"durable_name\":\"ok\",\"ack_policy\":\"explicit\"}"));
    natsio_msg_list *list = fetch(js, "CBADA", "ok", 1, 1000);
    NT_CHECK(list != NULL);
    const natsio_msg *m = natsio_msg_list_get(list, 0);
    NT_CHECK(m != NULL);
    EXPECT_NULL_ARG("out", natsio_msg_js_metadata(m, NULL));
    EXPECT_FAILS_NAMING(NATSIO_ERR_INVALID_UTF8, "reason", natsio_msg_term(m, BAD_UTF8));
    /* Still unanswered after those. */
    NT_CHECK_INT_EQ(consumer_int(js, "CBADA", "ok", "num_ack_pending"), 1);
    EXPECT_OK(natsio_msg_js_metadata(m, &md));
    NT_CHECK_INT_EQ(md.stream_seq, 1);
    EXPECT_OK(natsio_msg_ack_sync(m, 2000));
    NT_CHECK_INT_EQ(consumer_int(js, "CBADA", "ok", "num_ack_pending"), 0);
    EXPECT_OK(natsio_js_stream_delete(js, "CBADA"));
}


/* ---- priority groups (ADR-42) and pull statuses (ADR-37) ---------------- */

static void messages_free_cb(void *p) { natsio_js_messages_free((natsio_js_messages *)p); }

/* Fetches with a priority group; the list is freed when the case ends. */
static natsio_status fetch_group(natsio_js *js, const char *stream, const char *consumer, const char *group,
                                 int64_t min_pending, int64_t max, int64_t expires_ms, size_t *count) {
    natsio_fetch_options o = fetch_options();
    o.max_messages = max;
    o.expires_ms = expires_ms;
    o.group = group;
    o.min_pending = min_pending;
    natsio_msg_list *list = NULL;
    natsio_status st = natsio_js_fetch(js, stream, consumer, &o, &list);
    if (st == NATSIO_OK) {
        *count = natsio_msg_list_count(list);
        for (size_t i = 0; i < *count; i++) natsio_msg_ack(natsio_msg_list_get(list, i));
        nt_cleanup(msg_list_free_cb, list);
    }
    return st;
}

static void test_priority_groups_overflow_and_validation(void) {
    natsio_js *js = connect_js();
    NT_CHECK(js != NULL);
    NT_CHECK(create_stream(js, "CPRIO", "cprio.>"));
    NT_CHECK(publish_n(js, "cprio.x", "m", 3));
    char *info = NULL;
    EXPECT_OK(natsio_js_consumer_create(js, "CPRIO",
                                        "{\"durable_name\":\"ov\",\"priority_groups\":[\"A\"],"
                                        "\"priority_policy\":\"overflow\"}",
                                        NATSIO_CREATE, &info));
    nt_cleanup(string_free_cb, info);
    NT_CHECK_MSG(strstr(info, "\"priority_policy\":\"overflow\"") && json_array_has(info, "A"), "%s", info);
    EXPECT_OK(natsio_js_consumer_create(js, "CPRIO", "{\"durable_name\":\"plain\"}", NATSIO_CREATE, NULL));

    /* Validation against the consumer's groups, as nats.go does. */
    size_t n = 99;
    EXPECT_FAILS_NAMING(NATSIO_ERR_INVALID_ARGUMENT, "priority group is required",
                        fetch_group(js, "CPRIO", "ov", NULL, 0, 1, 300, &n));
    EXPECT_FAILS_NAMING(NATSIO_ERR_INVALID_ARGUMENT, "invalid priority group",
                        fetch_group(js, "CPRIO", "ov", "B", 0, 1, 300, &n));
    EXPECT_FAILS_NAMING(NATSIO_ERR_INVALID_ARGUMENT, "invalid priority group",
                        fetch_group(js, "CPRIO", "plain", "A", 0, 1, 300, &n));
    EXPECT_FAILS_NAMING(NATSIO_ERR_INVALID_ARGUMENT, "min_pending",
                        fetch_group(js, "CPRIO", "plain", NULL, 2, 1, 300, &n));
    EXPECT_FAILS(NATSIO_ERR_INVALID_ARGUMENT, fetch_group(js, "CPRIO", "ov", "A.B", 0, 1, 300, &n));
    NT_CHECK(n == 99);
    natsio_consume_options co;
    natsio_consume_options_init(&co);
    natsio_js_messages *it = SENTINEL;
    EXPECT_FAILS_NAMING(NATSIO_ERR_INVALID_ARGUMENT, "priority group is required",
                        natsio_js_consume(js, "CPRIO", "ov", &co, &it));
    co.group = "B";
    EXPECT_FAILS_NAMING(NATSIO_ERR_INVALID_ARGUMENT, "invalid priority group",
                        natsio_js_consume(js, "CPRIO", "ov", &co, &it));
    NT_CHECK(it == SENTINEL);

    /* Overflow: min_pending above the 3 pending gets nothing, at it gets one. */
    EXPECT_OK(fetch_group(js, "CPRIO", "ov", "A", 4, 1, 300, &n));
    NT_CHECK_INT_EQ(n, 0);
    EXPECT_OK(fetch_group(js, "CPRIO", "ov", "A", 3, 1, 2000, &n));
    NT_CHECK_INT_EQ(n, 1);
    /* next with options: 2 pending now. */
    natsio_fetch_options o = fetch_options();
    o.group = "A";
    o.min_pending = 3;
    o.expires_ms = 300;
    natsio_msg *m = SENTINEL;
    EXPECT_FAILS(NATSIO_ERR_NO_MESSAGES, natsio_js_next(js, "CPRIO", "ov", &o, &m));
    o.min_pending = 2;
    o.expires_ms = 2000;
    EXPECT_OK(natsio_js_next(js, "CPRIO", "ov", &o, &m));
    nt_cleanup(msg_free_cb, m);
    NT_CHECK(span_eq(natsio_msg_data(m), natsio_msg_data_len(m), "m1"));
    EXPECT_OK(natsio_msg_ack(m));
    o.max_messages = 2;
    EXPECT_FAILS_NAMING(NATSIO_ERR_INVALID_ARGUMENT, "max_messages", natsio_js_next(js, "CPRIO", "ov", &o, &m));

    /* consume with the group gets the last one. */
    co.group = "A";
    co.expires_ms = 2000;
    EXPECT_OK(natsio_js_consume(js, "CPRIO", "ov", &co, &it));
    nt_cleanup(messages_free_cb, it);
    natsio_msg *cm = NULL;
    EXPECT_OK(natsio_js_messages_next(it, 3000, &cm));
    nt_cleanup(msg_free_cb, cm);
    NT_CHECK(cm != NULL && span_eq(natsio_msg_data(cm), natsio_msg_data_len(cm), "m2"));
    EXPECT_OK(natsio_js_stream_delete(js, "CPRIO"));
}

static void test_pinned_client_and_unpin(void) {
    natsio_js *js1 = connect_js();
    natsio_js *js2 = connect_js();
    NT_CHECK(js1 != NULL && js2 != NULL);
    NT_CHECK(create_stream(js1, "CPIN", "cpin.>"));
    NT_CHECK(publish_n(js1, "cpin.x", "m", 6));
    char *info = NULL;
    EXPECT_OK(natsio_js_consumer_create(js1, "CPIN",
                                        "{\"durable_name\":\"pin\",\"priority_groups\":[\"G\"],"
                                        "\"priority_policy\":\"pinned_client\",\"priority_timeout\":\"30s\"}",
                                        NATSIO_CREATE, &info));
    nt_cleanup(string_free_cb, info);
    int64_t timeout_ns = 0;
    NT_CHECK_MSG(strstr(info, "\"priority_policy\":\"pinned_client\"") && json_int(info, "priority_timeout", &timeout_ns) &&
                     timeout_ns == 30000000000LL,
                 "%s", info);

    /* The first puller gets pinned; the other gets nothing meanwhile. */
    size_t n = 0;
    EXPECT_OK(fetch_group(js1, "CPIN", "pin", "G", 0, 1, 2000, &n));
    NT_CHECK_INT_EQ(n, 1);
    EXPECT_OK(fetch_group(js2, "CPIN", "pin", "G", 0, 1, 300, &n));
    NT_CHECK_INT_EQ(n, 0);
    EXPECT_OK(fetch_group(js1, "CPIN", "pin", "G", 0, 1, 2000, &n));
    NT_CHECK_INT_EQ(n, 1);

    /* Unpinned: the other one gets pinned, the first one nothing. */
    EXPECT_OK(natsio_js_consumer_unpin(js1, "CPIN", "pin", "G"));
    EXPECT_OK(fetch_group(js2, "CPIN", "pin", "G", 0, 1, 2000, &n));
    NT_CHECK_INT_EQ(n, 1);
    EXPECT_OK(fetch_group(js1, "CPIN", "pin", "G", 0, 1, 300, &n));
    NT_CHECK_INT_EQ(n, 0);

    /* A consume in the group: pinned after another unpin (token form). */
    natsio_token *tok = NULL;
    EXPECT_OK(natsio_js_consumer_unpin_async(js2, "CPIN", "pin", "G", &tok));
    EXPECT_OK(natsio_token_wait(tok, 5000));
    NT_CHECK_INT_EQ(natsio_token_status(tok), NATSIO_OK);
    natsio_token_free(tok);
    natsio_consume_options co;
    natsio_consume_options_init(&co);
    co.group = "G";
    co.expires_ms = 2000;
    natsio_js_messages *it = NULL;
    EXPECT_OK(natsio_js_consume(js1, "CPIN", "pin", &co, &it));
    nt_cleanup(messages_free_cb, it);
    for (int i = 0; i < 3; i++) {
        natsio_msg *m = NULL;
        EXPECT_OK(natsio_js_messages_next(it, 3000, &m));
        if (m) {
            EXPECT_OK(natsio_msg_ack(m));
            natsio_msg_free(m);
        }
    }
    EXPECT_OK(fetch_group(js2, "CPIN", "pin", "G", 0, 1, 300, &n));
    NT_CHECK_INT_EQ(n, 0);

    /* Errors. */
    EXPECT_FAILS_NAMING(NATSIO_ERR_INVALID_ARGUMENT, "priority group", natsio_js_consumer_unpin(js1, "CPIN", "pin", "Z"));
    EXPECT_FAILS(NATSIO_ERR_CONSUMER_NOT_FOUND, natsio_js_consumer_unpin(js1, "CPIN", "nope", "G"));
    EXPECT_FAILS(NATSIO_ERR_INVALID_ARGUMENT, natsio_js_consumer_unpin(js1, "CPIN", "pin", ""));
    EXPECT_FAILS(NATSIO_ERR_INVALID_ARGUMENT, natsio_js_consumer_unpin(js1, "CPIN", "p.n", "G"));
    EXPECT_NULL_ARG("js", natsio_js_consumer_unpin(NULL, "CPIN", "pin", "G"));
    EXPECT_NULL_ARG("stream", natsio_js_consumer_unpin(js1, NULL, "pin", "G"));
    EXPECT_NULL_ARG("consumer", natsio_js_consumer_unpin(js1, "CPIN", NULL, "G"));
    EXPECT_NULL_ARG("group", natsio_js_consumer_unpin(js1, "CPIN", "pin", NULL));
    EXPECT_NULL_ARG("token_out", natsio_js_consumer_unpin_async(js1, "CPIN", "pin", "G", NULL));
    EXPECT_OK(natsio_js_stream_delete(js1, "CPIN"));
}

static void test_prioritized_policy_serves_lower_numbers_first(void) {
    natsio_js *js = connect_js();
    NT_CHECK(js != NULL);
    NT_CHECK(create_stream(js, "CPRZ", "cprz.>"));
    char *info = NULL;
    EXPECT_OK(natsio_js_consumer_create(js, "CPRZ",
                                        "{\"durable_name\":\"pz\",\"priority_groups\":[\"P\"],"
                                        "\"priority_policy\":\"prioritized\"}",
                                        NATSIO_CREATE, &info));
    nt_cleanup(string_free_cb, info);
    NT_CHECK_MSG(strstr(info, "\"priority_policy\":\"prioritized\""), "%s", info);

    /* Priority 5 waits first, priority 1 after it: the message goes to 1
     * (with no priority sent both would be 0, and the first would win). */
    natsio_js_messages *low = fetch_one_prioritized(js, "CPRZ", "pz", "P", 5);
    NT_CHECK(wait_consumer_int(js, "CPRZ", "pz", "num_waiting", 1));
    natsio_js_messages *high = fetch_one_prioritized(js, "CPRZ", "pz", "P", 1);
    NT_CHECK(wait_consumer_int(js, "CPRZ", "pz", "num_waiting", 2));
    NT_CHECK(publish_n(js, "cprz.x", "a", 1));
    NT_CHECK(next_acked_payload_is(high, "a0"));
    NT_CHECK(publish_n(js, "cprz.x", "b", 1));
    NT_CHECK(next_acked_payload_is(low, "b0"));

    /* A consume's requests carry its priority: a fetch at 1 that waits
     * after a consume at 5 gets the next message, the consume the one
     * after. */
    natsio_consume_options co;
    natsio_consume_options_init(&co);
    co.group = "P";
    co.priority = 5;
    co.max_messages = 1;
    co.expires_ms = 10000;
    natsio_js_messages *consume = NULL;
    EXPECT_OK(natsio_js_consume(js, "CPRZ", "pz", &co, &consume));
    nt_cleanup(messages_free_cb, consume);
    NT_CHECK(wait_consumer_int(js, "CPRZ", "pz", "num_waiting", 1));
    natsio_js_messages *fetch = fetch_one_prioritized(js, "CPRZ", "pz", "P", 1);
    NT_CHECK(wait_consumer_int(js, "CPRZ", "pz", "num_waiting", 2));
    NT_CHECK(publish_n(js, "cprz.x", "c", 1));
    NT_CHECK(next_acked_payload_is(fetch, "c0"));
    NT_CHECK(publish_n(js, "cprz.x", "d", 1));
    NT_CHECK(next_acked_payload_is(consume, "d0"));

    /* Checked before anything is sent. */
    natsio_fetch_options o = fetch_options();
    o.group = "P";
    o.no_wait = true;
    natsio_msg_list *list = SENTINEL;
    o.priority = 10;
    EXPECT_FAILS_NAMING(NATSIO_ERR_INVALID_ARGUMENT, "between 0 and 9", natsio_js_fetch(js, "CPRZ", "pz", &o, &list));
    o.priority = -1;
    EXPECT_FAILS_NAMING(NATSIO_ERR_INVALID_ARGUMENT, "between 0 and 9", natsio_js_fetch(js, "CPRZ", "pz", &o, &list));
    o.priority = 1;
    o.group = NULL;
    EXPECT_FAILS_NAMING(NATSIO_ERR_INVALID_ARGUMENT, "priority needs a priority group",
                        natsio_js_fetch(js, "CPRZ", "pz", &o, &list));
    NT_CHECK(list == SENTINEL);
    natsio_js_messages *bad = SENTINEL;
    co.priority = 10;
    EXPECT_FAILS_NAMING(NATSIO_ERR_INVALID_ARGUMENT, "between 0 and 9", natsio_js_consume(js, "CPRZ", "pz", &co, &bad));
    NT_CHECK(bad == SENTINEL);
    /* A version 2 struct has no priority: what lies beyond it is not read. */
    o = fetch_options();
    o.version = 2;
    o.group = "P";
    o.no_wait = true;
    o.priority = 99;
    EXPECT_OK(natsio_js_fetch(js, "CPRZ", "pz", &o, &list));
    natsio_msg_list_free(list);
    EXPECT_OK(natsio_js_stream_delete(js, "CPRZ"));
}

/* For nt_wait_until: stream `stream` holds `want` messages, and
 * `consumer` of stream `origin` has acknowledged through stream sequence
 * `want` (its "ack_floor"). */
typedef struct {
    natsio_js *js;
    const char *stream, *origin, *consumer;
    int64_t want;
} sourced_and_acked;

static bool sourced_through_and_acked(void *arg) {
    sourced_and_acked *w = arg;
    char *info = NULL;
    int64_t n = -1;
    if (natsio_js_stream_info(w->js, w->stream, NULL, &info) != NATSIO_OK) return false;
    bool sourced = json_int(info, "messages", &n) && n == w->want;
    natsio_string_free(info);
    if (!sourced || natsio_js_consumer_info(w->js, w->origin, w->consumer, &info) != NATSIO_OK) return false;
    const char *floor = strstr(info, "\"ack_floor\":");
    bool acked = floor && json_int(floor, "stream_seq", &n) && n == w->want;
    natsio_string_free(info);
    return acked;
}

/* The flow_control ack policy (nats-server 2.14): a durable push consumer
 * a stream sources through, acknowledged by its flow-control replies. */
static void test_flow_control_ack_policy_for_durable_sourcing(void) {
    natsio_js *js = connect_js();
    NT_CHECK(js != NULL);
    NT_CHECK(create_stream(js, "CFCO", "cfco.>"));
    NT_CHECK(publish_n(js, "cfco.x", "m", 3));
    char *info = NULL;
    EXPECT_OK(natsio_js_consumer_create(js, "CFCO",
                                        "{\"durable_name\":\"fcsrc\",\"deliver_subject\":\"cfco_deliver.sink\","
                                        "\"ack_policy\":\"flow_control\",\"flow_control\":true,"
                                        "\"idle_heartbeat\":\"1s\",\"max_ack_pending\":100}",
                                        NATSIO_CREATE, &info));
    nt_cleanup(string_free_cb, info);
    NT_CHECK_MSG(strstr(info, "\"ack_policy\":\"flow_control\""), "%s", info);
    NT_CHECK(create_stream_config(js, "{\"name\":\"CFCS\",\"sources\":[{\"name\":\"CFCO\",\"consumer\":"
                                      "{\"name\":\"fcsrc\",\"deliver_subject\":\"cfco_deliver.sink\"}}]}"));
    sourced_and_acked w = {js, "CFCS", "CFCO", "fcsrc", 3};
    NT_CHECK(nt_wait_until(sourced_through_and_acked, &w, 20000));
    NT_CHECK(publish_n(js, "cfco.x", "n", 2));
    w.want = 5;
    NT_CHECK(nt_wait_until(sourced_through_and_acked, &w, 20000));
    /* The policy is refused where the server refuses it: a pull consumer. */
    EXPECT_FAILS(NATSIO_ERR_JS_API, natsio_js_consumer_create(js, "CFCO",
                                                              "{\"durable_name\":\"fcpull\",\"ack_policy\":\"flow_control\"}",
                                                              NATSIO_CREATE, NULL));
    EXPECT_FAILS_NAMING(NATSIO_ERR_CONFIG, "ack_policy",
                        natsio_js_consumer_create(js, "CFCO", "{\"durable_name\":\"x\",\"ack_policy\":\"flowcontrol\"}",
                                                  NATSIO_CREATE, NULL));
    EXPECT_OK(natsio_js_stream_delete(js, "CFCS"));
    EXPECT_OK(natsio_js_stream_delete(js, "CFCO"));
}

static void test_consume_statuses_and_bytes(void) {
    natsio_js *js = connect_js();
    NT_CHECK(js != NULL);
    NT_CHECK(create_stream(js, "CSTAT", "cstat.>"));
    char big[300];
    memset(big, 'x', sizeof big);
    EXPECT_OK(natsio_js_publish(js, "cstat.x", big, sizeof big, NULL, NULL));
    NT_CHECK(publish_n(js, "cstat.x", "m", 4));

    /* A push consumer: pulling it ends the consume with a JetStream error. */
    EXPECT_OK(natsio_js_consumer_create(js, "CSTAT", "{\"durable_name\":\"push\",\"deliver_subject\":\"cstat_dlv\"}",
                                        NATSIO_CREATE, NULL));
    natsio_js_messages *it = NULL;
    EXPECT_OK(natsio_js_consume(js, "CSTAT", "push", NULL, &it));
    nt_cleanup(messages_free_cb, it);
    natsio_msg *m = NULL;
    EXPECT_FAILS_NAMING(NATSIO_ERR_JETSTREAM, "push based", natsio_js_messages_next(it, 3000, &m));
    NT_CHECK(m == NULL);
    /* A fetch too. */
    natsio_fetch_options fo = fetch_options();
    fo.expires_ms = 500;
    natsio_msg_list *list = SENTINEL;
    EXPECT_FAILS_NAMING(NATSIO_ERR_JETSTREAM, "push based", natsio_js_fetch(js, "CSTAT", "push", &fo, &list));

    /* max_bytes below the first message's size: ends with a JetStream error. */
    EXPECT_OK(natsio_js_consumer_create(js, "CSTAT", "{\"durable_name\":\"mb\"}", NATSIO_CREATE, NULL));
    natsio_consume_options co;
    natsio_consume_options_init(&co);
    co.max_bytes = 100;
    co.expires_ms = 2000;
    natsio_js_messages *small = NULL;
    EXPECT_OK(natsio_js_consume(js, "CSTAT", "mb", &co, &small));
    nt_cleanup(messages_free_cb, small);
    EXPECT_FAILS_NAMING(NATSIO_ERR_JETSTREAM, "max_bytes", natsio_js_messages_next(small, 3000, &m));
    fo.max_bytes = 100;
    EXPECT_FAILS_NAMING(NATSIO_ERR_JETSTREAM, "MaxBytes", natsio_js_fetch(js, "CSTAT", "mb", &fo, &list));
    NT_CHECK(list == SENTINEL);

    /* Enough bytes for all of them, a few bytes a request at a time: the
     * consume keeps pulling by bytes and gets all five in order. */
    co.max_bytes = 1000;
    co.threshold_bytes = 600;
    natsio_js_messages *bytes = NULL;
    EXPECT_OK(natsio_js_consume(js, "CSTAT", "mb", &co, &bytes));
    nt_cleanup(messages_free_cb, bytes);
    for (int i = 0; i < 5; i++) {
        natsio_msg *got = NULL;
        EXPECT_OK(natsio_js_messages_next(bytes, 3000, &got));
        if (!got) break;
        if (i == 0) NT_CHECK_INT_EQ(natsio_msg_data_len(got), sizeof big);
        else {
            char want[8];
            snprintf(want, sizeof want, "m%d", i - 1);
            NT_CHECK(span_eq(natsio_msg_data(got), natsio_msg_data_len(got), want));
        }
        EXPECT_OK(natsio_msg_ack(got));
        natsio_msg_free(got);
    }

    /* Option errors. */
    natsio_js_messages *bad = SENTINEL;
    natsio_consume_options_init(&co);
    co.max_bytes = 1000;
    co.max_messages = 10;
    EXPECT_FAILS_NAMING(NATSIO_ERR_INVALID_ARGUMENT, "exclude", natsio_js_consume(js, "CSTAT", "mb", &co, &bad));
    natsio_consume_options_init(&co);
    co.threshold = 1.5;
    EXPECT_FAILS_NAMING(NATSIO_ERR_INVALID_ARGUMENT, "threshold", natsio_js_consume(js, "CSTAT", "mb", &co, &bad));
    natsio_consume_options_init(&co);
    co.max_messages = 10;
    co.threshold_messages = 10;
    EXPECT_FAILS_NAMING(NATSIO_ERR_INVALID_ARGUMENT, "threshold_messages", natsio_js_consume(js, "CSTAT", "mb", &co, &bad));
    natsio_consume_options_init(&co);
    co.min_ack_pending = 1;
    EXPECT_FAILS_NAMING(NATSIO_ERR_INVALID_ARGUMENT, "min_pending", natsio_js_consume(js, "CSTAT", "mb", &co, &bad));
    /* A version 1 struct is still read (its prefix). */
    natsio_consume_options_init(&co);
    co.version = 1;
    co.max_bytes = 5; /* not part of version 1: ignored */
    natsio_js_messages *v1 = NULL;
    EXPECT_OK(natsio_js_consume(js, "CSTAT", "mb", &co, &v1));
    natsio_js_messages_free(v1);
    NT_CHECK(bad == SENTINEL);
    EXPECT_OK(natsio_js_stream_delete(js, "CSTAT"));
}


/* ---- a consume holds at most its budget ----------------------------------------- */

/* A callback that blocks on its first message until released. */
typedef struct {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int seen;
    bool released;
} blocking_reader;

static void block_on_first(void *user_data, const natsio_msg *msg, natsio_status status) {
    (void)status;
    blocking_reader *r = user_data;
    if (!msg) return;
    pthread_mutex_lock(&r->mu);
    r->seen++;
    pthread_cond_broadcast(&r->cv);
    while (!r->released) pthread_cond_wait(&r->cv, &r->mu);
    pthread_mutex_unlock(&r->mu);
}

static bool reader_saw_one(void *arg) {
    blocking_reader *r = arg;
    pthread_mutex_lock(&r->mu);
    bool seen = r->seen > 0;
    pthread_mutex_unlock(&r->mu);
    return seen;
}

static void release_reader(void *arg) {
    blocking_reader *r = arg;
    pthread_mutex_lock(&r->mu);
    r->released = true;
    pthread_cond_broadcast(&r->cv);
    pthread_mutex_unlock(&r->mu);
}

/* The most messages the server had delivered and not seen acked, polled
 * over about two seconds while the reader stalls. */
static int64_t most_ack_pending(natsio_js *js, const char *stream, const char *consumer) {
    int64_t most = INT64_MIN;
    for (int64_t until = nt_now_ms() + 2000; nt_now_ms() < until;) {
        int64_t n = consumer_int(js, stream, consumer, "num_ack_pending");
        if (n > most) most = n;
        nt_sleep_ms(50);
    }
    return most;
}

/* A consume whose reader takes one message and stalls holds at most
 * max_messages (or max_bytes) requested, buffered and in its callback
 * together: the server's num_ack_pending stays within it, in pull mode
 * (the message taken is acked) and in callback mode (the callback blocks
 * on its first message, unacked), where the callback's message and those
 * the dispatcher took off the buffer used to come on top (10 -> 19). */
static void test_consume_holds_at_most_its_budget(void) {
    natsio_js *js = connect_js();
    NT_CHECK(js != NULL);
    NT_CHECK(create_stream(js, "CBUDGET", "cbudget.>"));
    char payload[1000];
    memset(payload, 'p', sizeof payload);
    for (int i = 0; i < 400; i++) EXPECT_OK(natsio_js_publish(js, "cbudget.x", payload, sizeof payload, NULL, NULL));

    struct {
        int64_t max_messages, max_bytes, bound;
    } budgets[] = {{10, 0, 10}, {100, 0, 100}, {0, 10 * 1000, 10}};
    /* Released when the case ends, pass or fail (before the consume is
     * freed: its stop waits for the callback). */
    static blocking_reader readers[2 * NT_COUNT(budgets)];
    int consumer_no = 0;
    for (size_t b = 0; b < NT_COUNT(budgets); b++) {
        for (int callback = 0; callback < 2; callback++) {
            char name[32];
            snprintf(name, sizeof name, "c%d", consumer_no++);
            char cfg[128];
            snprintf(cfg, sizeof cfg, "{\"durable_name\":\"%s\",\"ack_policy\":\"explicit\",\"ack_wait\":\"60s\"}", name);
            NT_CHECK(create_consumer(js, "CBUDGET", cfg));
            natsio_consume_options co;
            natsio_consume_options_init(&co);
            co.max_messages = budgets[b].max_messages;
            co.max_bytes = budgets[b].max_bytes;
            blocking_reader *r = &readers[consumer_no - 1];
            *r = (blocking_reader){PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, false};
            natsio_js_messages *it = NULL;
            EXPECT_OK(natsio_js_consume(js, "CBUDGET", name, &co, &it));
            if (!it) continue;
            nt_cleanup(messages_free_cb, it);
            nt_cleanup(release_reader, r);
            if (callback) {
                EXPECT_OK(natsio_js_messages_set_callback(it, block_on_first, r, NULL));
                NT_CHECK(nt_wait_until(reader_saw_one, r, 10000));
            } else {
                natsio_msg *m = NULL;
                EXPECT_OK(natsio_js_messages_next(it, 10000, &m));
                if (m) EXPECT_OK(natsio_msg_ack_sync(m, NATSIO_TIMEOUT_DEFAULT));
                natsio_msg_free(m);
            }
            int64_t most = most_ack_pending(js, "CBUDGET", name);
            NT_CHECK_MSG(most <= budgets[b].bound && most >= budgets[b].bound / 2,
                         "max_messages %lld max_bytes %lld, %s: num_ack_pending reached %lld (budget %lld)",
                         (long long)budgets[b].max_messages, (long long)budgets[b].max_bytes,
                         callback ? "callback" : "next", (long long)most, (long long)budgets[b].bound);
            release_reader(r);
            EXPECT_OK(natsio_js_messages_stop(it));
        }
    }
    EXPECT_OK(natsio_js_stream_delete(js, "CBUDGET"));
}

int main(int argc, char **argv) {
    static const nt_case cases[] = {
        NT_CASE(test_consumer_create_update_info_names_delete),
        NT_CASE(test_consumer_infos_pause_and_resume),
        NT_CASE(test_unnamed_consumer_gets_a_generated_name),
        NT_CASE(test_consumer_config_and_name_errors),
        NT_CASE(test_fetch_batch_order_payloads_and_metadata),
        NT_CASE(test_fetch_max_bytes),
        NT_CASE(test_no_wait_expires_and_next_on_an_empty_consumer),
        NT_CASE(test_fetch_refused_by_consumer_limits_and_held_no_wait),
        NT_CASE(test_fetch_messages_hands_out_each_message_as_it_arrives),
        NT_CASE(test_fetch_messages_ends_callback_token_and_stop),
        NT_CASE(test_acks_and_double_acks),
        NT_CASE(test_deferred_acks_are_sent),
        NT_CASE(test_in_progress_holds_a_message_past_ack_wait),
        NT_CASE(test_nak_redelivers_and_nak_delay_waits),
        NT_CASE(test_term_stops_redelivery_ack_wait_does_not),
        NT_CASE(test_ack_policy_none),
        NT_CASE(test_acks_through_borrowed_and_cloned_messages),
        NT_CASE(test_messages_that_are_not_jetstream_messages),
        NT_CASE(test_push_consumer_messages_on_a_plain_subscription_ack),
        NT_CASE(test_inline_status_code_and_description),
        NT_CASE(test_fetch_ends_when_its_consumer_is_deleted),
        NT_CASE(test_use_after_client_close_and_free),
        NT_CASE(test_null_tolerant_list_functions),
        NT_CASE(test_bad_input_consumer_functions),
        NT_CASE(test_bad_input_fetch_and_next),
        NT_CASE(test_bad_input_acks_and_metadata),
        NT_CASE(test_priority_groups_overflow_and_validation),
        NT_CASE(test_pinned_client_and_unpin),
        NT_CASE(test_prioritized_policy_serves_lower_numbers_first),
        NT_CASE(test_flow_control_ack_policy_for_durable_sourcing),
        NT_CASE(test_consume_statuses_and_bytes),
        NT_CASE(test_consume_holds_at_most_its_budget),
    };
    return run_cases_with_shared_server(argc, argv, "constest", cases, NT_COUNT(cases));
}
