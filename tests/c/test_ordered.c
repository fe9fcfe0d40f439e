/*
 * The ordered consumer (ADR-17) through the C ABI against a real
 * nats-server: in-order delivery of a whole stream with metadata, filter
 * subjects, every deliver policy, headers only, until_drained (DONE after
 * the last message, at once on an empty stream), idle_timeout
 * (NATSIO_ERR_NO_MESSAGES), stop (the server-side consumer is deleted,
 * later calls fail), one run at a time with the next run continuing after
 * the last message, healing after the consumer is deleted under a run
 * (no gap, no duplicate), the token forms, and bad input.
 *
 * The cases share one server; each uses its own stream names and subjects.
 */
#define _POSIX_C_SOURCE 200809L

#include "harness.h"
#include "util.h"

#include <natsio.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- helpers ------------------------------------------------------------ */

static void oc_free_cb(void *oc) { natsio_ordered_consumer_free(oc); }

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

static natsio_ordered_consumer_options oc_options(int32_t policy) {
    natsio_ordered_consumer_options o;
    natsio_ordered_consumer_options_init(&o);
    o.deliver_policy = policy;
    return o;
}

/* Messages options: short pulls (expires 2 s, heartbeat 500 ms). */
static natsio_ordered_messages_options msg_options(bool until_drained, int64_t idle_timeout_ms) {
    natsio_ordered_messages_options o;
    natsio_ordered_messages_options_init(&o);
    o.expires_ms = 2000;
    o.idle_heartbeat_ms = 500;
    o.until_drained = until_drained;
    o.idle_timeout_ms = idle_timeout_ms;
    return o;
}

/* An ordered consumer freed when the case ends (NULL on failure). */
static natsio_ordered_consumer *new_oc(natsio_js *js, const char *stream,
                                       const natsio_ordered_consumer_options *o) {
    natsio_ordered_consumer *oc = NULL;
    natsio_status st = natsio_js_ordered_consumer(js, stream, o, &oc);
    if (st != NATSIO_OK) {
        nt_fail_at(__FILE__, __LINE__, "ordered consumer on %s: %s (%s)", stream, natsio_status_str(st),
                   natsio_last_error());
        return NULL;
    }
    nt_cleanup(oc_free_cb, oc);
    return oc;
}

/* A run freed when the case ends (NULL on failure). */
static natsio_js_messages *run(natsio_ordered_consumer *oc, const natsio_ordered_messages_options *o) {
    natsio_js_messages *it = NULL;
    natsio_status st = natsio_ordered_consumer_messages(oc, o, &it);
    if (st != NATSIO_OK) {
        nt_fail_at(__FILE__, __LINE__, "messages: %s (%s)", natsio_status_str(st), natsio_last_error());
        return NULL;
    }
    nt_cleanup(js_messages_free_cb, it);
    return it;
}

/* Reads `n` messages; their stream sequences go to `seqs`. False (and a
 * recorded failure) when one does not come within 5 s. */
static bool read_seqs(natsio_js_messages *it, uint64_t *seqs, int n) {
    for (int i = 0; i < n; i++) {
        natsio_msg *m = NULL;
        natsio_status st = natsio_js_messages_next(it, 5000, &m);
        if (st != NATSIO_OK) {
            nt_fail_at(__FILE__, __LINE__, "message %d of %d: %s (%s)", i, n, natsio_status_str(st),
                       natsio_last_error());
            return false;
        }
        seqs[i] = metadata_of(m).stream_seq;
        natsio_msg_free(m);
    }
    return true;
}

/* The run ends with `want` (NATSIO_DONE or an error) and no more messages. */
static void expect_end(natsio_js_messages *it, natsio_status want, int64_t timeout_ms) {
    natsio_msg *m = NULL;
    natsio_status st = natsio_js_messages_next(it, timeout_ms, &m);
    if (st == NATSIO_OK) {
        NT_FAIL("expected the end (%s), got a message at stream sequence %llu", natsio_status_str(want),
                (unsigned long long)metadata_of(m).stream_seq);
        natsio_msg_free(m);
        return;
    }
    NT_CHECK_MSG(st == want, "got %s, want %s (%s)", natsio_status_str(st), natsio_status_str(want),
                 natsio_last_error());
    NT_CHECK(m == NULL);
}

/* Reads a whole until_drained run of `opts` and checks its sequences. */
static void expect_drained_seqs(natsio_js *js, const char *stream, const natsio_ordered_consumer_options *opts,
                                const uint64_t *want, int n) {
    natsio_ordered_consumer *oc = new_oc(js, stream, opts);
    NT_CHECK(oc != NULL);
    natsio_ordered_messages_options mo = msg_options(true, 0);
    natsio_js_messages *it = run(oc, &mo);
    NT_CHECK(it != NULL);
    uint64_t got[16] = {0};
    NT_CHECK(n <= 16);
    NT_CHECK(read_seqs(it, got, n));
    for (int i = 0; i < n; i++) {
        NT_CHECK_MSG(got[i] == want[i], "policy %d: message %d at sequence %llu, want %llu",
                     (int)opts->deliver_policy, i, (unsigned long long)got[i], (unsigned long long)want[i]);
    }
    expect_end(it, NATSIO_DONE, 3000);
    EXPECT_OK(natsio_ordered_consumer_stop(oc));
}

static bool has_consumer(natsio_js *js, const char *stream, const char *name) {
    natsio_string_list *names = NULL;
    natsio_status st = natsio_js_consumer_names(js, stream, &names);
    if (st != NATSIO_OK) {
        nt_fail_at(__FILE__, __LINE__, "consumer names: %s (%s)", natsio_status_str(st), natsio_last_error());
        return false;
    }
    bool has = string_list_has(names, name);
    natsio_string_list_free(names);
    return has;
}

/* ---- cases -------------------------------------------------------------- */

static void test_ordered_delivers_the_stream_in_order_with_metadata(void) {
    natsio_js *js = connect_js();
    NT_CHECK(js != NULL);
    NT_CHECK(create_stream(js, "OC1", "oc1.>"));
    NT_CHECK(publish_n(js, "oc1.a", "a", 10));
    NT_CHECK(publish_n(js, "oc1.b", "b", 10));

    natsio_ordered_consumer *oc = new_oc(js, "OC1", NULL);
    NT_CHECK(oc != NULL);
    char *info = NULL;
    EXPECT_OK(natsio_ordered_consumer_start(oc, &info));
    kept(info);
    char name[64];
    NT_CHECK_MSG(json_str(info, "name", name, sizeof name), "%s", info);
    /* Named as nats.go names its: a NUID, "_", the serial (1: the first). */
    NT_CHECK_MSG(strlen(name) == 24 && strcmp(name + 22, "_1") == 0, "name %s", name);
    int64_t pending = -1;
    NT_CHECK(json_int(info, "num_pending", &pending));
    NT_CHECK_INT_EQ(pending, 20);
    NT_CHECK_MSG(strstr(info, "\"ack_policy\":\"none\"") != NULL, "%s", info);
    NT_CHECK_MSG(strstr(info, "\"mem_storage\":true") != NULL, "%s", info);
    NT_CHECK_MSG(strstr(info, "\"num_replicas\":1") != NULL, "%s", info);
    NT_CHECK_MSG(strstr(info, "\"inactive_threshold\":300000000000") != NULL, "%s", info);
    NT_CHECK(has_consumer(js, "OC1", name));

    natsio_ordered_messages_options mo = msg_options(true, 0);
    natsio_js_messages *it = run(oc, &mo);
    NT_CHECK(it != NULL);
    for (int i = 0; i < 20; i++) {
        natsio_msg *m = NULL;
        EXPECT_OK(natsio_js_messages_next(it, 5000, &m));
        NT_CHECK(m != NULL);
        char want[16];
        snprintf(want, sizeof want, "%c%d", i < 10 ? 'a' : 'b', i % 10);
        NT_CHECK_MSG(payload_is(m, want), "message %d", i);
        natsio_js_msg_metadata md = metadata_of(m);
        NT_CHECK_INT_EQ(md.stream_seq, i + 1);
        NT_CHECK_INT_EQ(md.consumer_seq, i + 1);
        NT_CHECK_INT_EQ(md.num_pending, 19 - i);
        NT_CHECK(span_eq(md.stream, md.stream_len, "OC1"));
        NT_CHECK(span_eq(md.consumer, md.consumer_len, name)); /* the started consumer */
        /* Nothing to acknowledge (ack none): an ack is harmless. */
        EXPECT_OK(natsio_msg_ack(m));
        natsio_msg_free(m);
    }
    /* until_drained: the end comes right after the last message. */
    expect_end(it, NATSIO_DONE, 3000);
    natsio_iter_stats stats;
    EXPECT_OK(natsio_js_messages_get_stats(it, &stats));
    NT_CHECK_INT_EQ(stats.delivered, 20);
    EXPECT_OK(natsio_ordered_consumer_stop(oc));
    EXPECT_OK(natsio_js_stream_delete(js, "OC1"));
}

static void test_ordered_filter_subjects(void) {
    natsio_js *js = connect_js();
    NT_CHECK(js != NULL);
    NT_CHECK(create_stream(js, "OC2", "oc2.>"));
    for (int i = 0; i < 3; i++) {
        NT_CHECK(publish_n(js, "oc2.a", "a", 1)); /* seq 1, 4, 7 */
        NT_CHECK(publish_n(js, "oc2.b", "b", 1)); /* seq 2, 5, 8 */
        NT_CHECK(publish_n(js, "oc2.c", "c", 1)); /* seq 3, 6, 9 */
    }
    const char *two[] = {"oc2.a", "oc2.c"};
    natsio_ordered_consumer_options o = oc_options(NATSIO_DELIVER_ALL);
    o.filter_subjects = two;
    o.filter_subjects_count = 2;
    const uint64_t want_two[] = {1, 3, 4, 6, 7, 9};
    expect_drained_seqs(js, "OC2", &o, want_two, 6);

    const char *one[] = {"oc2.b"};
    o.filter_subjects = one;
    o.filter_subjects_count = 1;
    const uint64_t want_one[] = {2, 5, 8};
    expect_drained_seqs(js, "OC2", &o, want_one, 3);

    const char *wild[] = {"oc2.*"};
    o.filter_subjects = wild;
    const uint64_t want_all[] = {1, 2, 3, 4, 5, 6, 7, 8, 9};
    expect_drained_seqs(js, "OC2", &o, want_all, 9);
    EXPECT_OK(natsio_js_stream_delete(js, "OC2"));
}

static void test_ordered_deliver_policies(void) {
    natsio_js *js = connect_js();
    NT_CHECK(js != NULL);
    NT_CHECK(create_stream(js, "OC3", "oc3.>"));
    /* x0 y0 x1 | y1 x2 at sequences 1..5; the start time between 3 and 4. */
    NT_CHECK(publish_n(js, "oc3.x", "x", 1));
    NT_CHECK(publish_n(js, "oc3.y", "y", 1));
    NT_CHECK(publish_n(js, "oc3.x", "x", 1));
    nt_sleep_ms(50);
    int64_t between = now_realtime_ns();
    nt_sleep_ms(50);
    NT_CHECK(publish_n(js, "oc3.y", "y", 1));
    NT_CHECK(publish_n(js, "oc3.x", "x", 1));

    natsio_ordered_consumer_options o = oc_options(NATSIO_DELIVER_ALL);
    const uint64_t all[] = {1, 2, 3, 4, 5};
    expect_drained_seqs(js, "OC3", &o, all, 5);

    o = oc_options(NATSIO_DELIVER_LAST);
    const uint64_t last[] = {5};
    expect_drained_seqs(js, "OC3", &o, last, 1);

    o = oc_options(NATSIO_DELIVER_LAST_PER_SUBJECT);
    const uint64_t per_subject[] = {4, 5};
    expect_drained_seqs(js, "OC3", &o, per_subject, 2);

    o = oc_options(NATSIO_DELIVER_BY_START_SEQUENCE);
    o.opt_start_seq = 3;
    const uint64_t from3[] = {3, 4, 5};
    expect_drained_seqs(js, "OC3", &o, from3, 3);

    o = oc_options(NATSIO_DELIVER_BY_START_TIME);
    o.opt_start_time_ns = between;
    const uint64_t after_time[] = {4, 5};
    expect_drained_seqs(js, "OC3", &o, after_time, 2);

    /* NEW: nothing of the 5; what is published after the start comes. */
    o = oc_options(NATSIO_DELIVER_NEW);
    natsio_ordered_consumer *oc = new_oc(js, "OC3", &o);
    NT_CHECK(oc != NULL);
    char *info = NULL;
    EXPECT_OK(natsio_ordered_consumer_start(oc, &info));
    kept(info);
    int64_t pending = -1;
    NT_CHECK(json_int(info, "num_pending", &pending));
    NT_CHECK_INT_EQ(pending, 0);
    NT_CHECK(publish_n(js, "oc3.y", "new", 2)); /* seq 6, 7 */
    natsio_ordered_messages_options mo = msg_options(false, 0);
    natsio_js_messages *it = run(oc, &mo);
    NT_CHECK(it != NULL);
    uint64_t got[2] = {0};
    NT_CHECK(read_seqs(it, got, 2));
    NT_CHECK_INT_EQ(got[0], 6);
    NT_CHECK_INT_EQ(got[1], 7);
    natsio_msg *m = NULL;
    EXPECT_FAILS(NATSIO_ERR_TIMEOUT, natsio_js_messages_next(it, 300, &m));
    EXPECT_OK(natsio_ordered_consumer_stop(oc));
    expect_end(it, NATSIO_DONE, 1000);
    EXPECT_OK(natsio_js_stream_delete(js, "OC3"));
}

static void test_ordered_headers_only(void) {
    natsio_js *js = connect_js();
    NT_CHECK(js != NULL);
    NT_CHECK(create_stream(js, "OC4", "oc4.>"));
    EXPECT_OK(natsio_js_publish(js, "oc4.a", "hello world", 11, NULL, NULL));
    natsio_ordered_consumer_options o = oc_options(NATSIO_DELIVER_ALL);
    o.headers_only = true;
    natsio_ordered_consumer *oc = new_oc(js, "OC4", &o);
    NT_CHECK(oc != NULL);
    natsio_ordered_messages_options mo = msg_options(true, 0);
    natsio_js_messages *it = run(oc, &mo);
    NT_CHECK(it != NULL);
    natsio_msg *m = NULL;
    EXPECT_OK(natsio_js_messages_next(it, 5000, &m));
    NT_CHECK(m != NULL);
    nt_cleanup(msg_free_cb, m);
    NT_CHECK_INT_EQ(natsio_msg_data_len(m), 0);
    const char *size = NULL;
    EXPECT_OK(natsio_headers_get(natsio_msg_headers(m), "Nats-Msg-Size", &size));
    NT_CHECK_STR_EQ(size, "11");
    expect_end(it, NATSIO_DONE, 3000);

    /* Without headers_only the payload is there. */
    natsio_ordered_consumer *full = new_oc(js, "OC4", NULL);
    NT_CHECK(full != NULL);
    natsio_js_messages *it2 = run(full, &mo);
    NT_CHECK(it2 != NULL);
    natsio_msg *m2 = NULL;
    EXPECT_OK(natsio_js_messages_next(it2, 5000, &m2));
    NT_CHECK(m2 != NULL);
    nt_cleanup(msg_free_cb, m2);
    NT_CHECK(payload_is(m2, "hello world"));
    EXPECT_OK(natsio_js_stream_delete(js, "OC4"));
}

static void test_ordered_until_drained_on_an_empty_stream_ends_at_once(void) {
    natsio_js *js = connect_js();
    NT_CHECK(js != NULL);
    NT_CHECK(create_stream(js, "OC5", "oc5.>"));
    natsio_ordered_consumer *oc = new_oc(js, "OC5", NULL);
    NT_CHECK(oc != NULL);
    natsio_ordered_messages_options mo = msg_options(true, 0);
    int64_t t0 = nt_now_ms();
    natsio_js_messages *it = run(oc, &mo);
    NT_CHECK(it != NULL);
    expect_end(it, NATSIO_DONE, 3000);
    NT_CHECK_MSG(nt_now_ms() - t0 < 1500, "took %lld ms", (long long)(nt_now_ms() - t0));

    /* A later run on the same consumer sees what came meanwhile. */
    NT_CHECK(publish_n(js, "oc5.a", "m", 3));
    natsio_js_messages *it2 = run(oc, &mo);
    NT_CHECK(it2 != NULL);
    uint64_t got[3] = {0};
    NT_CHECK(read_seqs(it2, got, 3));
    NT_CHECK_INT_EQ(got[0], 1);
    NT_CHECK_INT_EQ(got[2], 3);
    expect_end(it2, NATSIO_DONE, 3000);
    EXPECT_OK(natsio_js_stream_delete(js, "OC5"));
}

static void test_ordered_idle_timeout_ends_with_no_messages(void) {
    natsio_js *js = connect_js();
    NT_CHECK(js != NULL);
    NT_CHECK(create_stream(js, "OC6", "oc6.>"));
    NT_CHECK(publish_n(js, "oc6.a", "m", 2));
    natsio_ordered_consumer *oc = new_oc(js, "OC6", NULL);
    NT_CHECK(oc != NULL);
    natsio_ordered_messages_options mo = msg_options(false, 300);
    natsio_js_messages *it = run(oc, &mo);
    NT_CHECK(it != NULL);
    uint64_t got[2] = {0};
    NT_CHECK(read_seqs(it, got, 2));
    int64_t t0 = nt_now_ms();
    expect_end(it, NATSIO_ERR_NO_MESSAGES, 5000);
    int64_t took = nt_now_ms() - t0;
    NT_CHECK_MSG(took < 2000, "the idle timeout took %lld ms", (long long)took);
    /* The error stays. */
    expect_end(it, NATSIO_ERR_NO_MESSAGES, 100);
    /* Without an idle timeout a quiet stream is only a timeout of _next. */
    natsio_ordered_messages_options quiet = msg_options(false, 0);
    natsio_js_messages *it2 = run(oc, &quiet);
    NT_CHECK(it2 != NULL);
    natsio_msg *m = NULL;
    EXPECT_FAILS(NATSIO_ERR_TIMEOUT, natsio_js_messages_next(it2, 600, &m));
    NT_CHECK(publish_n(js, "oc6.a", "late", 1));
    NT_CHECK(read_seqs(it2, got, 1));
    NT_CHECK_INT_EQ(got[0], 3);
    EXPECT_OK(natsio_ordered_consumer_stop(oc));
    EXPECT_OK(natsio_js_stream_delete(js, "OC6"));
}

static void test_ordered_stop_deletes_the_consumer(void) {
    natsio_js *js = connect_js();
    NT_CHECK(js != NULL);
    NT_CHECK(create_stream(js, "OC7", "oc7.>"));
    NT_CHECK(publish_n(js, "oc7.a", "m", 3));
    natsio_ordered_consumer *oc = new_oc(js, "OC7", NULL);
    NT_CHECK(oc != NULL);
    char *info = NULL;
    EXPECT_OK(natsio_ordered_consumer_start(oc, &info));
    kept(info);
    char name[64];
    NT_CHECK(json_str(info, "name", name, sizeof name));
    /* start again: the same consumer. */
    char *again = NULL;
    EXPECT_OK(natsio_ordered_consumer_start(oc, &again));
    kept(again);
    char name2[64];
    NT_CHECK(json_str(again, "name", name2, sizeof name2));
    NT_CHECK_STR_EQ(name2, name);

    natsio_ordered_messages_options mo = msg_options(false, 0);
    natsio_js_messages *it = run(oc, &mo);
    NT_CHECK(it != NULL);
    uint64_t got[1];
    NT_CHECK(read_seqs(it, got, 1));
    NT_CHECK(has_consumer(js, "OC7", name));
    EXPECT_OK(natsio_ordered_consumer_stop(oc));
    NT_CHECK_MSG(!has_consumer(js, "OC7", name), "%s is still there", name);
    expect_end(it, NATSIO_DONE, 1000);
    /* Idempotent; nothing works after it. */
    EXPECT_OK(natsio_ordered_consumer_stop(oc));
    natsio_js_messages *none = NULL;
    EXPECT_FAILS(NATSIO_ERR_ILLEGAL_STATE, natsio_ordered_consumer_messages(oc, &mo, &none));
    NT_CHECK(none == NULL);
    EXPECT_FAILS(NATSIO_ERR_ILLEGAL_STATE, natsio_ordered_consumer_start(oc, NULL));

    /* Started and never read: stop deletes it too. */
    natsio_ordered_consumer *oc2 = new_oc(js, "OC7", NULL);
    NT_CHECK(oc2 != NULL);
    char *info2 = NULL;
    EXPECT_OK(natsio_ordered_consumer_start(oc2, &info2));
    kept(info2);
    NT_CHECK(json_str(info2, "name", name, sizeof name));
    NT_CHECK(has_consumer(js, "OC7", name));
    EXPECT_OK(natsio_ordered_consumer_stop(oc2));
    NT_CHECK(!has_consumer(js, "OC7", name));
    EXPECT_OK(natsio_js_stream_delete(js, "OC7"));
}

static void test_ordered_one_run_at_a_time_and_the_next_continues(void) {
    natsio_js *js = connect_js();
    NT_CHECK(js != NULL);
    NT_CHECK(create_stream(js, "OC8", "oc8.>"));
    NT_CHECK(publish_n(js, "oc8.a", "m", 10));
    natsio_ordered_consumer *oc = new_oc(js, "OC8", NULL);
    NT_CHECK(oc != NULL);
    natsio_ordered_messages_options mo = msg_options(false, 0);
    natsio_js_messages *it = run(oc, &mo);
    NT_CHECK(it != NULL);
    uint64_t got[10] = {0};
    NT_CHECK(read_seqs(it, got, 4));
    NT_CHECK_INT_EQ(got[3], 4);
    natsio_js_messages *second = NULL;
    EXPECT_FAILS(NATSIO_ERR_ILLEGAL_STATE, natsio_ordered_consumer_messages(oc, &mo, &second));
    NT_CHECK(second == NULL);
    /* start during a run: the info of the consumer it reads. */
    char *during = NULL;
    EXPECT_OK(natsio_ordered_consumer_start(oc, &during));
    kept(during);
    char name[64];
    NT_CHECK(json_str(during, "name", name, sizeof name));
    NT_CHECK(has_consumer(js, "OC8", name));
    /* Ending the run (what it buffered is dropped) lets the next one
     * start right after the last message taken: 4 of the 10 were. */
    EXPECT_OK(natsio_js_messages_stop(it));
    natsio_ordered_messages_options drained = msg_options(true, 0);
    natsio_js_messages *it2 = run(oc, &drained);
    NT_CHECK(it2 != NULL);
    natsio_msg *m = NULL;
    EXPECT_OK(natsio_js_messages_next(it2, 5000, &m));
    uint64_t first = metadata_of(m).stream_seq;
    natsio_msg_free(m);
    NT_CHECK_MSG(first == 5, "the next run starts at %llu", (unsigned long long)first);
    for (uint64_t want = first + 1; want <= 10; want++) {
        NT_CHECK(read_seqs(it2, got, 1));
        NT_CHECK_INT_EQ(got[0], want);
    }
    expect_end(it2, NATSIO_DONE, 3000);
    EXPECT_OK(natsio_js_stream_delete(js, "OC8"));
}

static void test_ordered_heals_when_its_consumer_is_deleted(void) {
    natsio_js *js = connect_js();
    NT_CHECK(js != NULL);
    NT_CHECK(create_stream(js, "OC9", "oc9.>"));
    NT_CHECK(publish_n(js, "oc9.a", "m", 5));
    natsio_ordered_consumer *oc = new_oc(js, "OC9", NULL);
    NT_CHECK(oc != NULL);
    char *info = NULL;
    EXPECT_OK(natsio_ordered_consumer_start(oc, &info));
    kept(info);
    char name[64];
    NT_CHECK(json_str(info, "name", name, sizeof name));
    natsio_ordered_messages_options mo = msg_options(false, 0);
    natsio_js_messages *it = run(oc, &mo);
    NT_CHECK(it != NULL);
    uint64_t got[5] = {0};
    NT_CHECK(read_seqs(it, got, 5));
    NT_CHECK_INT_EQ(got[4], 5);

    EXPECT_OK(natsio_js_consumer_delete(js, "OC9", name));
    NT_CHECK(publish_n(js, "oc9.a", "n", 5));
    for (uint64_t want = 6; want <= 10; want++) {
        natsio_msg *m = NULL;
        EXPECT_OK(natsio_js_messages_next(it, 5000, &m));
        NT_CHECK(m != NULL);
        natsio_js_msg_metadata md = metadata_of(m);
        NT_CHECK_INT_EQ(md.stream_seq, want);
        NT_CHECK_MSG(!span_eq(md.consumer, md.consumer_len, name), "still the deleted consumer");
        natsio_msg_free(m);
    }
    natsio_msg *m = NULL;
    EXPECT_FAILS(NATSIO_ERR_TIMEOUT, natsio_js_messages_next(it, 300, &m));
    EXPECT_OK(natsio_ordered_consumer_stop(oc));
    EXPECT_OK(natsio_js_stream_delete(js, "OC9"));
}

static void test_ordered_token_forms(void) {
    natsio_js *js = connect_js();
    NT_CHECK(js != NULL);
    NT_CHECK(create_stream(js, "OC10", "oc10.>"));
    NT_CHECK(publish_n(js, "oc10.a", "m", 3));
    natsio_ordered_consumer *oc = new_oc(js, "OC10", NULL);
    NT_CHECK(oc != NULL);

    natsio_token *t = NULL;
    EXPECT_OK(natsio_ordered_consumer_start_async(oc, &t));
    nt_cleanup(token_free_cb, t);
    NT_CHECK_INT_EQ(token_outcome(t, 5000), NATSIO_OK);
    char *info = NULL;
    EXPECT_OK(natsio_token_string(t, &info));
    kept(info);
    char name[64];
    NT_CHECK(json_str(info, "name", name, sizeof name));

    natsio_ordered_messages_options mo = msg_options(true, 0);
    natsio_token *tm = NULL;
    EXPECT_OK(natsio_ordered_consumer_messages_async(oc, &mo, &tm));
    nt_cleanup(token_free_cb, tm);
    NT_CHECK_INT_EQ(token_outcome(tm, 5000), NATSIO_OK);
    natsio_js_messages *it = NULL;
    EXPECT_OK(natsio_token_js_messages(tm, &it));
    nt_cleanup(js_messages_free_cb, it);
    uint64_t got[3] = {0};
    NT_CHECK(read_seqs(it, got, 3));
    NT_CHECK_INT_EQ(got[2], 3);
    expect_end(it, NATSIO_DONE, 3000);

    natsio_token *ts = NULL;
    EXPECT_OK(natsio_ordered_consumer_stop_async(oc, &ts));
    nt_cleanup(token_free_cb, ts);
    NT_CHECK_INT_EQ(token_outcome(ts, 5000), NATSIO_OK);
    natsio_token *bad = NULL;
    EXPECT_OK(natsio_ordered_consumer_start_async(oc, &bad));
    nt_cleanup(token_free_cb, bad);
    NT_CHECK_INT_EQ(token_outcome(bad, 5000), NATSIO_ERR_ILLEGAL_STATE);
    EXPECT_OK(natsio_js_stream_delete(js, "OC10"));
}

/* The server-side consumer, as a user reads it back: named and configured
 * as nats.go's (name prefix, inactive threshold and max_deliver as asked). */
static void test_ordered_consumer_config_as_read_back(void) {
    natsio_js *js = connect_js();
    NT_CHECK(js != NULL);
    NT_CHECK(create_stream(js, "OC12", "oc12.>"));
    NT_CHECK(publish_n(js, "oc12.a", "a", 3));

    natsio_ordered_consumer_options o = oc_options(NATSIO_DELIVER_LAST);
    o.name_prefix = "mine";
    o.inactive_threshold_ms = 20000;
    o.max_deliver = 1;
    o.metadata_json = "{\"team\":\"billing\",\"tier\":\"2\"}";
    natsio_ordered_consumer *oc = new_oc(js, "OC12", &o);
    NT_CHECK(oc != NULL);
    char *started = NULL;
    EXPECT_OK(natsio_ordered_consumer_start(oc, &started));
    kept(started);
    char name[64];
    NT_CHECK_MSG(json_str(started, "name", name, sizeof name), "%s", started);
    NT_CHECK_STR_EQ(name, "mine_1");
    char *info = NULL;
    EXPECT_OK(natsio_js_consumer_info(js, "OC12", "mine_1", &info));
    kept(info);
    NT_CHECK_MSG(strstr(info, "\"deliver_policy\":\"last\"") != NULL, "%s", info);
    NT_CHECK_MSG(strstr(info, "\"ack_policy\":\"none\"") != NULL, "%s", info);
    NT_CHECK_MSG(strstr(info, "\"max_deliver\":1,") != NULL, "%s", info);
    NT_CHECK_MSG(strstr(info, "\"inactive_threshold\":20000000000") != NULL, "%s", info);
    NT_CHECK_MSG(strstr(info, "\"mem_storage\":true") != NULL, "%s", info);
    NT_CHECK_MSG(strstr(info, "\"num_replicas\":1") != NULL, "%s", info);
    char value[32];
    NT_CHECK_MSG(json_str(info, "team", value, sizeof value) && strcmp(value, "billing") == 0, "%s", info);
    NT_CHECK_MSG(json_str(info, "tier", value, sizeof value) && strcmp(value, "2") == 0, "%s", info);
    EXPECT_OK(natsio_ordered_consumer_stop(oc));

    /* A version-2 struct ends before metadata_json: not read. */
    natsio_ordered_consumer_options v2 = oc_options(NATSIO_DELIVER_ALL);
    v2.version = 2;
    v2.metadata_json = "not json";
    oc = new_oc(js, "OC12", &v2);
    NT_CHECK(oc != NULL);
    char *v2_info = NULL;
    EXPECT_OK(natsio_ordered_consumer_start(oc, &v2_info));
    kept(v2_info);
    NT_CHECK_MSG(strstr(v2_info, "\"team\"") == NULL, "%s", v2_info);
    EXPECT_OK(natsio_ordered_consumer_stop(oc));

    /* A version-1 struct ends before name_prefix: what follows is not read. */
    natsio_ordered_consumer_options v1 = oc_options(NATSIO_DELIVER_ALL);
    v1.version = 1;
    v1.name_prefix = "not.read";
    v1.inactive_threshold_ms = -5;
    oc = new_oc(js, "OC12", &v1);
    NT_CHECK(oc != NULL);
    char *v1_info = NULL;
    EXPECT_OK(natsio_ordered_consumer_start(oc, &v1_info));
    kept(v1_info);
    NT_CHECK_MSG(strstr(v1_info, "\"inactive_threshold\":300000000000") != NULL, "%s", v1_info);
    NT_CHECK_MSG(strstr(v1_info, "\"max_deliver\":-1") != NULL, "%s", v1_info);
    NT_CHECK_MSG(json_str(v1_info, "name", name, sizeof name) && strcmp(name + strlen(name) - 2, "_1") == 0, "%s",
                 v1_info);
    EXPECT_OK(natsio_ordered_consumer_stop(oc));

    natsio_ordered_consumer *bad = SENTINEL;
    o = oc_options(NATSIO_DELIVER_ALL);
    o.name_prefix = "a.b";
    EXPECT_FAILS(NATSIO_ERR_INVALID_ARGUMENT, natsio_js_ordered_consumer(js, "OC12", &o, &bad));
    o.name_prefix = BAD_UTF8;
    EXPECT_FAILS(NATSIO_ERR_INVALID_UTF8, natsio_js_ordered_consumer(js, "OC12", &o, &bad));
    o.name_prefix = NULL;
    o.inactive_threshold_ms = -1;
    EXPECT_FAILS_NAMING(NATSIO_ERR_INVALID_ARGUMENT, "inactive_threshold_ms",
                        natsio_js_ordered_consumer(js, "OC12", &o, &bad));
    o.inactive_threshold_ms = 0;
    static const char *not_metadata[] = {"[]", "{\"n\":1}", "{\"a\":", "\"x\""};
    for (size_t i = 0; i < NT_COUNT(not_metadata); i++) {
        o.metadata_json = not_metadata[i];
        EXPECT_FAILS_NAMING(NATSIO_ERR_INVALID_ARGUMENT, "metadata_json",
                            natsio_js_ordered_consumer(js, "OC12", &o, &bad));
    }
    o.metadata_json = BAD_UTF8;
    EXPECT_FAILS(NATSIO_ERR_INVALID_UTF8, natsio_js_ordered_consumer(js, "OC12", &o, &bad));
    NT_CHECK(bad == SENTINEL);
    EXPECT_OK(natsio_js_stream_delete(js, "OC12"));
}

static void test_ordered_bad_input(void) {
    natsio_js *js = connect_js();
    NT_CHECK(js != NULL);
    natsio_ordered_consumer *oc = SENTINEL;
    EXPECT_NULL_ARG("js", natsio_js_ordered_consumer(NULL, "S", NULL, &oc));
    EXPECT_NULL_ARG("stream", natsio_js_ordered_consumer(js, NULL, NULL, &oc));
    EXPECT_NULL_ARG("oc_out", natsio_js_ordered_consumer(js, "S", NULL, NULL));
    EXPECT_FAILS(NATSIO_ERR_INVALID_UTF8, natsio_js_ordered_consumer(js, BAD_UTF8, NULL, &oc));
    EXPECT_FAILS(NATSIO_ERR_INVALID_ARGUMENT, natsio_js_ordered_consumer(js, "a.b", NULL, &oc));
    EXPECT_FAILS(NATSIO_ERR_INVALID_ARGUMENT, natsio_js_ordered_consumer(js, "", NULL, &oc));

    natsio_ordered_consumer_options o = oc_options(NATSIO_DELIVER_ALL);
    const char *bad_subjects[] = {"ok.a", "bad..subject"};
    o.filter_subjects = bad_subjects;
    o.filter_subjects_count = 2;
    EXPECT_FAILS(NATSIO_ERR_BAD_SUBJECT, natsio_js_ordered_consumer(js, "S", &o, &oc));
    const char *utf8_subjects[] = {BAD_UTF8};
    o.filter_subjects = utf8_subjects;
    o.filter_subjects_count = 1;
    EXPECT_FAILS(NATSIO_ERR_INVALID_UTF8, natsio_js_ordered_consumer(js, "S", &o, &oc));
    o.filter_subjects = NULL;
    EXPECT_NULL_ARG("filter_subjects", natsio_js_ordered_consumer(js, "S", &o, &oc));
    const char *null_subject[] = {NULL};
    o.filter_subjects = null_subject;
    EXPECT_NULL_ARG("filter subject", natsio_js_ordered_consumer(js, "S", &o, &oc));

    o = oc_options(99);
    EXPECT_FAILS_NAMING(NATSIO_ERR_INVALID_ARGUMENT, "deliver policy", natsio_js_ordered_consumer(js, "S", &o, &oc));
    o = oc_options(NATSIO_DELIVER_BY_START_SEQUENCE);
    EXPECT_FAILS_NAMING(NATSIO_ERR_INVALID_ARGUMENT, "opt_start_seq", natsio_js_ordered_consumer(js, "S", &o, &oc));
    o = oc_options(NATSIO_DELIVER_ALL);
    o.opt_start_seq = 4;
    EXPECT_FAILS_NAMING(NATSIO_ERR_INVALID_ARGUMENT, "opt_start_seq", natsio_js_ordered_consumer(js, "S", &o, &oc));
    o = oc_options(NATSIO_DELIVER_BY_START_TIME);
    EXPECT_FAILS_NAMING(NATSIO_ERR_INVALID_ARGUMENT, "opt_start_time_ns", natsio_js_ordered_consumer(js, "S", &o, &oc));
    o = oc_options(NATSIO_DELIVER_LAST);
    o.opt_start_time_ns = 1;
    EXPECT_FAILS_NAMING(NATSIO_ERR_INVALID_ARGUMENT, "opt_start_time_ns", natsio_js_ordered_consumer(js, "S", &o, &oc));
    natsio_ordered_consumer_options uninit;
    memset(&uninit, 0, sizeof uninit);
    EXPECT_FAILS(NATSIO_ERR_INVALID_ARGUMENT, natsio_js_ordered_consumer(js, "S", &uninit, &oc));
    NT_CHECK(oc == SENTINEL);
    EXPECT_NULL_ARG("opts", natsio_ordered_consumer_options_init(NULL));
    EXPECT_NULL_ARG("opts", natsio_ordered_messages_options_init(NULL));

    /* A missing stream shows at start and at messages. */
    natsio_ordered_consumer *missing = new_oc(js, "OC_MISSING", NULL);
    NT_CHECK(missing != NULL);
    char *info = SENTINEL_STR;
    EXPECT_FAILS(NATSIO_ERR_STREAM_NOT_FOUND, natsio_ordered_consumer_start(missing, &info));
    NT_CHECK(info == SENTINEL_STR);
    natsio_js_messages *it = SENTINEL;
    EXPECT_FAILS(NATSIO_ERR_STREAM_NOT_FOUND, natsio_ordered_consumer_messages(missing, NULL, &it));
    NT_CHECK(it == SENTINEL);
    EXPECT_OK(natsio_ordered_consumer_stop(missing));

    /* Bad messages options are refused before anything is sent. */
    NT_CHECK(create_stream(js, "OC11", "oc11.>"));
    natsio_ordered_consumer *ok = new_oc(js, "OC11", NULL);
    NT_CHECK(ok != NULL);
    natsio_ordered_messages_options mo = msg_options(false, 0);
    mo.expires_ms = 500;
    EXPECT_FAILS_NAMING(NATSIO_ERR_INVALID_ARGUMENT, "expires", natsio_ordered_consumer_messages(ok, &mo, &it));
    mo = msg_options(false, 0);
    mo.idle_heartbeat_ms = 1500; /* over half of 2000 */
    EXPECT_FAILS_NAMING(NATSIO_ERR_INVALID_ARGUMENT, "idle_heartbeat", natsio_ordered_consumer_messages(ok, &mo, &it));
    mo = msg_options(false, -5);
    EXPECT_FAILS_NAMING(NATSIO_ERR_INVALID_ARGUMENT, "idle_timeout_ms", natsio_ordered_consumer_messages(ok, &mo, &it));
    mo = msg_options(false, 0);
    mo.max_messages = -1;
    EXPECT_FAILS_NAMING(NATSIO_ERR_INVALID_ARGUMENT, "max_messages", natsio_ordered_consumer_messages(ok, &mo, &it));
    natsio_ordered_messages_options uninit_mo;
    memset(&uninit_mo, 0, sizeof uninit_mo);
    EXPECT_FAILS(NATSIO_ERR_INVALID_ARGUMENT, natsio_ordered_consumer_messages(ok, &uninit_mo, &it));
    NT_CHECK(it == SENTINEL);
    EXPECT_NULL_ARG("messages_out", natsio_ordered_consumer_messages(ok, NULL, NULL));
    natsio_token *t = SENTINEL;
    EXPECT_NULL_ARG("token_out", natsio_ordered_consumer_start_async(ok, NULL));
    EXPECT_NULL_ARG("token_out", natsio_ordered_consumer_messages_async(ok, NULL, NULL));
    EXPECT_NULL_ARG("token_out", natsio_ordered_consumer_stop_async(ok, NULL));

    /* NULL handles. */
    EXPECT_NULL_ARG("oc", natsio_ordered_consumer_start(NULL, &info));
    EXPECT_NULL_ARG("oc", natsio_ordered_consumer_start_async(NULL, &t));
    EXPECT_NULL_ARG("oc", natsio_ordered_consumer_messages(NULL, NULL, &it));
    EXPECT_NULL_ARG("oc", natsio_ordered_consumer_messages_async(NULL, NULL, &t));
    EXPECT_NULL_ARG("oc", natsio_ordered_consumer_stop(NULL));
    EXPECT_NULL_ARG("oc", natsio_ordered_consumer_stop_async(NULL, &t));
    NT_CHECK(t == SENTINEL);
    natsio_ordered_consumer_free(NULL);
    EXPECT_OK(natsio_js_stream_delete(js, "OC11"));
}


static bool buffered_at_least_half(void *arg) {
    natsio_iter_stats st = {0};
    return natsio_js_messages_get_stats(arg, &st) == NATSIO_OK && st.pending_items >= 50;
}

/* A run with max_messages 100 whose reader pauses after the first message
 * buffers at most that many (requested and buffered together), not the
 * whole stream; then the reader gets all 5,000 in order. */
static void test_ordered_paused_reader_holds_at_most_max_messages(void) {
    natsio_js *js = connect_js();
    NT_CHECK(js != NULL);
    NT_CHECK(create_stream(js, "OBOUND", "obound.>"));
    for (int i = 0; i < 5000; i++) EXPECT_OK(natsio_js_publish(js, "obound.x", "m", 1, NULL, NULL));
    natsio_ordered_consumer_options oo = oc_options(NATSIO_DELIVER_ALL);
    natsio_ordered_consumer *oc = new_oc(js, "OBOUND", &oo);
    NT_CHECK(oc != NULL);
    natsio_ordered_messages_options mo = msg_options(false, 0);
    mo.max_messages = 100;
    natsio_js_messages *it = run(oc, &mo);
    NT_CHECK(it != NULL);
    uint64_t first = 0;
    NT_CHECK(read_seqs(it, &first, 1));
    NT_CHECK_INT_EQ(first, 1);

    /* Paused: the buffer fills to its budget and stays there. */
    NT_CHECK(nt_wait_until(buffered_at_least_half, it, 10000));
    uint64_t most = 0;
    for (int64_t until = nt_now_ms() + 1500; nt_now_ms() < until;) {
        natsio_iter_stats st = {0};
        EXPECT_OK(natsio_js_messages_get_stats(it, &st));
        if (st.pending_items > most) most = st.pending_items;
        nt_sleep_ms(50);
    }
    NT_CHECK_MSG(most <= 100, "a paused reader's run buffered %llu messages (max_messages 100)",
                 (unsigned long long)most);

    /* Resumed: every message, in order. */
    for (uint64_t want = 2; want <= 5000; want++) {
        uint64_t seq = 0;
        NT_CHECK(read_seqs(it, &seq, 1));
        NT_CHECK_MSG(seq == want, "message at sequence %llu, want %llu", (unsigned long long)seq,
                     (unsigned long long)want);
    }
    EXPECT_OK(natsio_ordered_consumer_stop(oc));
    EXPECT_OK(natsio_js_stream_delete(js, "OBOUND"));
}

int main(int argc, char **argv) {
    static const nt_case cases[] = {
        NT_CASE(test_ordered_delivers_the_stream_in_order_with_metadata),
        NT_CASE(test_ordered_filter_subjects),
        NT_CASE(test_ordered_deliver_policies),
        NT_CASE(test_ordered_headers_only),
        NT_CASE(test_ordered_until_drained_on_an_empty_stream_ends_at_once),
        NT_CASE(test_ordered_idle_timeout_ends_with_no_messages),
        NT_CASE(test_ordered_stop_deletes_the_consumer),
        NT_CASE(test_ordered_one_run_at_a_time_and_the_next_continues),
        NT_CASE(test_ordered_paused_reader_holds_at_most_max_messages),
        NT_CASE(test_ordered_heals_when_its_consumer_is_deleted),
        NT_CASE(test_ordered_token_forms),
        NT_CASE(test_ordered_consumer_config_as_read_back),
        NT_CASE(test_ordered_bad_input),
    };
    return run_cases_with_shared_server(argc, argv, "ordtest", cases, NT_COUNT(cases));
}
