/*
 * Push consumers through the C ABI against a real nats-server
 * (natsio_js_push_consume): delivery in order with metadata and acks, the
 * callback form, flow control with a small client buffer (nothing lost,
 * the buffer never over its limit, the server's flow-control requests
 * answered), missed heartbeats reported to the error callback, a queue
 * group sharing the messages, stop withdrawing the subscription, a
 * consumer deleted under a consumption, and the errors of the call; the
 * drain of a consumption (push and pull), which hands out what the server
 * sent before it ends.
 *
 * The cases share one server; each uses its own stream names and subjects.
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

/* A push consumption of `consumer` on `stream`, freed when the case ends. */
static natsio_js_messages *push_consume(natsio_js *js, const char *stream, const char *consumer) {
    natsio_js_messages *it = NULL;
    natsio_status st = natsio_js_push_consume(js, stream, consumer, &it);
    if (st != NATSIO_OK) {
        nt_fail_at(__FILE__, __LINE__, "push consume %s/%s: %s (%s)", stream, consumer, natsio_status_str(st),
                   natsio_last_error());
        return NULL;
    }
    nt_cleanup(js_messages_free_cb, it);
    return it;
}

/* The next message of `it` within 5 s, freed when the case ends. */
static natsio_msg *next_msg(natsio_js_messages *it) {
    natsio_msg *m = NULL;
    natsio_status st = natsio_js_messages_next(it, 5000, &m);
    if (st != NATSIO_OK) {
        nt_fail_at(__FILE__, __LINE__, "next: %s (%s)", natsio_status_str(st), natsio_last_error());
        return NULL;
    }
    nt_cleanup(msg_free_cb, m);
    return m;
}

static void test_delivery_in_order_with_metadata_and_acks(void) {
    char deliver[128];
    natsio_js *js = connect_js();
    NT_CHECK(js != NULL);
    NT_CHECK(create_stream(js, "PDELIV", "pdeliv.>"));
    NT_CHECK(publish_n(js, "pdeliv.a", "m", 3));
    char cfg[256];
    snprintf(cfg, sizeof cfg,
             "{\"durable_name\":\"d\",\"deliver_subject\":\"%s\",\"ack_policy\":\"explicit\",\"ack_wait\":\"30s\"}",
             case_subject(deliver, sizeof deliver, "deliver"));
    NT_CHECK(create_consumer(js, "PDELIV", cfg));
    natsio_js_messages *it = push_consume(js, "PDELIV", "d");
    NT_CHECK(it != NULL);
    for (int i = 0; i < 3; i++) {
        natsio_msg *m = next_msg(it);
        NT_CHECK(m != NULL);
        char want[16];
        snprintf(want, sizeof want, "m%d", i);
        NT_CHECK_MSG(payload_is(m, want), "message %d is not %s", i, want);
        natsio_js_msg_metadata md = metadata_of(m);
        NT_CHECK(span_eq(md.stream, md.stream_len, "PDELIV"));
        NT_CHECK(span_eq(md.consumer, md.consumer_len, "d"));
        NT_CHECK_INT_EQ(md.stream_seq, (uint64_t)i + 1);
        NT_CHECK_INT_EQ(md.num_delivered, 1);
        EXPECT_OK(natsio_msg_ack_sync(m, 5000));
        EXPECT_FAILS(NATSIO_ERR_MESSAGE_ALREADY_ACKED, natsio_msg_ack(m));
    }
    /* Published after the consumption started: delivered too. */
    NT_CHECK(publish_n(js, "pdeliv.b", "late", 1));
    natsio_msg *late = next_msg(it);
    NT_CHECK(payload_is(late, "late0"));
    EXPECT_OK(natsio_msg_ack_sync(late, 5000));
    NT_CHECK(wait_consumer_int(js, "PDELIV", "d", "num_ack_pending", 0));
    /* Nothing else: a short wait times out and the consumption goes on. */
    natsio_msg *none = NULL;
    NT_CHECK_INT_EQ(natsio_js_messages_next(it, 100, &none), NATSIO_ERR_TIMEOUT);
    EXPECT_OK(natsio_js_messages_stop(it));
    NT_CHECK_INT_EQ(natsio_js_messages_next(it, 100, &none), NATSIO_DONE);
    EXPECT_OK(natsio_js_stream_delete(js, "PDELIV"));
}

typedef struct {
    atomic_long delivered;
    atomic_long ends;
    atomic_long acked;
} callback_counts;

static void count_and_ack(void *user_data, const natsio_msg *msg, natsio_status status) {
    callback_counts *c = user_data;
    (void)status;
    if (msg == NULL) {
        atomic_fetch_add(&c->ends, 1);
        return;
    }
    if (natsio_msg_ack(msg) == NATSIO_OK) {
        atomic_fetch_add(&c->acked, 1);
    }
    /* Counted last: a test that waits for `delivered` then reads `acked`
     * sees every ack of what was delivered (counted first, the 20th
     * message's ack could still be under way: 19 != 20 under ASan). */
    atomic_fetch_add(&c->delivered, 1);
}

static void test_callback_delivery_and_final_call(void) {
    char deliver[128];
    natsio_js *js = connect_js();
    NT_CHECK(js != NULL);
    NT_CHECK(create_stream(js, "PCB", "pcb.>"));
    char cfg[256];
    snprintf(cfg, sizeof cfg, "{\"durable_name\":\"cb\",\"deliver_subject\":\"%s\",\"ack_policy\":\"explicit\"}",
             case_subject(deliver, sizeof deliver, "deliver"));
    NT_CHECK(create_consumer(js, "PCB", cfg));
    natsio_js_messages *it = push_consume(js, "PCB", "cb");
    NT_CHECK(it != NULL);
    static callback_counts counts;
    atomic_store(&counts.delivered, 0);
    atomic_store(&counts.ends, 0);
    atomic_store(&counts.acked, 0);
    EXPECT_OK(natsio_js_messages_set_callback(it, count_and_ack, &counts, NULL));
    NT_CHECK(publish_n(js, "pcb.x", "c", 20));
    NT_CHECK(wait_at_least(&counts.delivered, 20, 10000));
    NT_CHECK_INT_EQ(atomic_load(&counts.acked), 20);
    NT_CHECK(wait_consumer_int(js, "PCB", "cb", "num_ack_pending", 0));
    EXPECT_OK(natsio_js_messages_stop(it));
    /* The final call comes before stop returns. */
    NT_CHECK_INT_EQ(atomic_load(&counts.ends), 1);
    EXPECT_OK(natsio_js_stream_delete(js, "PCB"));
}

static void test_flow_control_with_a_small_buffer_loses_nothing(void) {
    char deliver[128];
    natsio_js *js = connect_js();
    NT_CHECK(js != NULL);
    /* A second client sees the flow-control answers on $JS.FC. */
    natsio_client *watcher = connect_client();
    NT_CHECK(watcher != NULL);
    natsio_sub *answers = subscribe_and_flush(watcher, "$JS.FC.PFC.>");
    NT_CHECK(answers != NULL);
    /* The consuming client buffers 16 messages at most. */
    natsio_options *o = new_options();
    NT_CHECK(o != NULL);
    EXPECT_OK(natsio_options_set_url(o, g_server_url));
    EXPECT_OK(natsio_options_set_pending_limits(o, 16, 0));
    natsio_client *c = connect_with(o);
    NT_CHECK(c != NULL);
    natsio_js *cjs = new_jetstream(c, NULL);
    NT_CHECK(cjs != NULL);
    NT_CHECK(create_stream(js, "PFC", "pfc.>"));
    /* 3000 messages of 1 KB: past the server's first flow-control window
     * (it asks once half of 2 MB is pending). */
    enum { COUNT = 3000, SIZE = 1024 };
    static char payload[SIZE];
    for (int i = 0; i < COUNT; i++) {
        memset(payload, 'x', SIZE);
        int n = snprintf(payload, SIZE, "%d", i);
        payload[n] = ' ';
        EXPECT_OK(natsio_js_publish(js, "pfc.a", payload, SIZE, NULL, NULL));
    }
    char cfg[256];
    snprintf(cfg, sizeof cfg,
             "{\"durable_name\":\"fc\",\"deliver_subject\":\"%s\",\"ack_policy\":\"none\",\"flow_control\":true,"
             "\"idle_heartbeat\":\"1s\"}",
             case_subject(deliver, sizeof deliver, "deliver"));
    NT_CHECK(create_consumer(js, "PFC", cfg));
    natsio_js_messages *it = push_consume(cjs, "PFC", "fc");
    NT_CHECK(it != NULL);
    for (int i = 0; i < COUNT; i++) {
        natsio_msg *m = NULL;
        natsio_status st = natsio_js_messages_next(it, 10000, &m);
        NT_CHECK_MSG(st == NATSIO_OK, "message %d: %s (%s)", i, natsio_status_str(st), natsio_last_error());
        const char *data = natsio_msg_data(m);
        NT_CHECK_MSG(natsio_msg_data_len(m) == SIZE && atoi(data) == i, "message %d is out of order (%.12s)", i,
                     data);
        natsio_msg_free(m);
        natsio_iter_stats stats;
        EXPECT_OK(natsio_js_messages_get_stats(it, &stats));
        NT_CHECK_MSG(stats.pending_items <= 16, "%llu buffered", (unsigned long long)stats.pending_items);
        NT_CHECK_INT_EQ(stats.dropped, 0);
    }
    /* The server asked for flow control and was answered. */
    natsio_msg *answer = NULL;
    EXPECT_OK(natsio_sub_next(answers, 5000, &answer));
    natsio_msg_free(answer);
    EXPECT_OK(natsio_js_stream_delete(js, "PFC"));
}

static void test_missed_heartbeats_are_reported(void) {
    char deliver[128];
    callback_log *log = new_callback_log();
    natsio_options *o = new_options();
    NT_CHECK(o != NULL && log != NULL);
    EXPECT_OK(natsio_options_set_url(o, g_server_url));
    NT_CHECK(log_callbacks(o, log));
    natsio_client *c = connect_with(o);
    NT_CHECK(c != NULL);
    natsio_js *js = new_jetstream(c, NULL);
    NT_CHECK(js != NULL);
    NT_CHECK(create_stream(js, "PHB", "phb.>"));
    char cfg[256];
    snprintf(cfg, sizeof cfg, "{\"durable_name\":\"hb\",\"deliver_subject\":\"%s\",\"idle_heartbeat\":\"200ms\"}",
             case_subject(deliver, sizeof deliver, "deliver"));
    NT_CHECK(create_consumer(js, "PHB", cfg));
    natsio_js_messages *it = push_consume(js, "PHB", "hb");
    NT_CHECK(it != NULL);
    /* Heartbeats come: nothing reported for a few intervals. */
    natsio_msg *none = NULL;
    NT_CHECK_INT_EQ(natsio_js_messages_next(it, 1000, &none), NATSIO_ERR_TIMEOUT);
    NT_CHECK_INT_EQ(log_errors(log, NATSIO_ERR_TIMEOUT), 0);
    /* The consumer is gone (the server tells a push consumer's subscriber
     * nothing): its heartbeats stop coming. */
    EXPECT_OK(natsio_js_consumer_delete(js, "PHB", "hb"));
    NT_CHECK(wait_log_errors(log, NATSIO_ERR_TIMEOUT, 1, 5000));
    bool named = false;
    for (size_t i = 0; i < CALLBACK_LOG_CAP; i++) {
        callback_record r = log_record(log, i);
        named = named || (r.kind == -1 && r.status == NATSIO_ERR_TIMEOUT && contains_ci(r.text, "no heartbeat"));
    }
    char dump[2048];
    NT_CHECK_MSG(named, "no \"no heartbeat\" error: %s", log_dump(log, dump, sizeof dump));
    EXPECT_OK(natsio_js_messages_stop(it));
    EXPECT_OK(natsio_js_stream_delete(js, "PHB"));
}

static void test_queue_group_shares_the_messages(void) {
    char deliver[128];
    natsio_js *js = connect_js();
    NT_CHECK(js != NULL);
    natsio_js *other = connect_js();
    NT_CHECK(other != NULL);
    NT_CHECK(create_stream(js, "PQ", "pq.>"));
    char cfg[256];
    snprintf(cfg, sizeof cfg,
             "{\"durable_name\":\"q\",\"deliver_subject\":\"%s\",\"deliver_group\":\"workers\","
             "\"ack_policy\":\"explicit\"}",
             case_subject(deliver, sizeof deliver, "deliver"));
    NT_CHECK(create_consumer(js, "PQ", cfg));
    natsio_js_messages *a = push_consume(js, "PQ", "q");
    natsio_js_messages *b = push_consume(other, "PQ", "q");
    NT_CHECK(a != NULL && b != NULL);
    enum { COUNT = 100 };
    NT_CHECK(publish_n(js, "pq.x", "", COUNT));
    bool seen[COUNT] = {false};
    long got_a = 0, got_b = 0;
    /* Each member is read in turn, briefly, until all are in: a message
     * may be in either one's buffer. */
    int idle_rounds = 0;
    while (got_a + got_b < COUNT) {
        bool any = false;
        natsio_js_messages *members[2] = {a, b};
        for (int k = 0; k < 2; k++) {
            natsio_msg *m = NULL;
            natsio_status st = natsio_js_messages_next(members[k], 20, &m);
            if (st == NATSIO_ERR_TIMEOUT) {
                continue;
            }
            NT_CHECK_MSG(st == NATSIO_OK, "after %ld messages: %s", got_a + got_b, natsio_status_str(st));
            int n = atoi(natsio_msg_data(m));
            NT_CHECK_MSG(n >= 0 && n < COUNT && !seen[n], "message %d twice", n);
            seen[n] = true;
            EXPECT_OK(natsio_msg_ack(m));
            natsio_msg_free(m);
            *(k == 0 ? &got_a : &got_b) += 1;
            any = true;
        }
        idle_rounds = any ? 0 : idle_rounds + 1;
        /* 250 rounds of 2 x 20 ms without a message: 10 s. */
        NT_CHECK_MSG(idle_rounds < 250, "only %ld of %d messages came", got_a + got_b, (int)COUNT);
    }
    NT_CHECK_MSG(got_a > 0 && got_b > 0, "one member got everything (%ld, %ld)", got_a, got_b);
    NT_CHECK(wait_consumer_int(js, "PQ", "q", "num_ack_pending", 0));
    EXPECT_OK(natsio_js_stream_delete(js, "PQ"));
}

static void test_stop_withdraws_and_a_new_consumption_resumes(void) {
    char deliver[128];
    natsio_js *js = connect_js();
    NT_CHECK(js != NULL);
    NT_CHECK(create_stream(js, "PSTOP", "pstop.>"));
    char cfg[256];
    snprintf(cfg, sizeof cfg, "{\"durable_name\":\"s\",\"deliver_subject\":\"%s\",\"ack_policy\":\"explicit\"}",
             case_subject(deliver, sizeof deliver, "deliver"));
    NT_CHECK(create_consumer(js, "PSTOP", cfg));
    natsio_js_messages *first = push_consume(js, "PSTOP", "s");
    NT_CHECK(first != NULL);
    NT_CHECK(publish_n(js, "pstop.a", "a", 1));
    natsio_msg *m = next_msg(first);
    NT_CHECK(payload_is(m, "a0"));
    EXPECT_OK(natsio_msg_ack_sync(m, 5000));
    EXPECT_OK(natsio_js_messages_stop(first));
    /* Published after stop returned: not taken by the stopped one (the
     * consumer has no interest, so the server holds it). */
    NT_CHECK(publish_n(js, "pstop.a", "b", 1));
    NT_CHECK(wait_consumer_int(js, "PSTOP", "s", "num_pending", 1));
    NT_CHECK_INT_EQ(consumer_int(js, "PSTOP", "s", "num_ack_pending"), 0);
    natsio_js_messages *second = push_consume(js, "PSTOP", "s");
    NT_CHECK(second != NULL);
    natsio_msg *next = next_msg(second);
    NT_CHECK(payload_is(next, "b0"));
    EXPECT_OK(natsio_msg_ack_sync(next, 5000));
    EXPECT_OK(natsio_js_stream_delete(js, "PSTOP"));
}

static void test_ephemeral_consumer_and_consumer_deleted(void) {
    char deliver[128];
    natsio_js *js = connect_js();
    NT_CHECK(js != NULL);
    NT_CHECK(create_stream(js, "PEPH", "peph.>"));
    NT_CHECK(publish_n(js, "peph.a", "e", 2));
    char cfg[256], *info = NULL, name[64];
    snprintf(cfg, sizeof cfg, "{\"deliver_subject\":\"%s\",\"inactive_threshold\":\"30s\"}",
             case_subject(deliver, sizeof deliver, "deliver"));
    EXPECT_OK(natsio_js_consumer_create(js, "PEPH", cfg, NATSIO_CREATE, &info));
    kept(info);
    NT_CHECK(json_str(info, "name", name, sizeof name));
    natsio_js_messages *it = push_consume(js, "PEPH", name);
    NT_CHECK(it != NULL);
    NT_CHECK(payload_is(next_msg(it), "e0"));
    NT_CHECK(payload_is(next_msg(it), "e1"));
    EXPECT_OK(natsio_js_consumer_delete(js, "PEPH", name));
    /* The server may or may not tell the deliver subject; either way the
     * consumption stays usable and stops. */
    natsio_msg *none = NULL;
    natsio_status st = natsio_js_messages_next(it, 500, &none);
    NT_CHECK_MSG(st == NATSIO_ERR_TIMEOUT || st == NATSIO_ERR_CONSUMER_DELETED, "after delete: %s",
                 natsio_status_str(st));
    EXPECT_OK(natsio_js_messages_stop(it));
    EXPECT_OK(natsio_js_stream_delete(js, "PEPH"));
}

static void test_errors(void) {
    natsio_js *js = connect_js();
    NT_CHECK(js != NULL);
    NT_CHECK(create_stream(js, "PERR", "perr.>"));
    NT_CHECK(create_consumer(js, "PERR", "{\"durable_name\":\"pull\"}"));
    natsio_js_messages *it = SENTINEL;
    EXPECT_FAILS_NAMING(NATSIO_ERR_INVALID_ARGUMENT, "not a push consumer",
                        natsio_js_push_consume(js, "PERR", "pull", &it));
    EXPECT_FAILS(NATSIO_ERR_CONSUMER_NOT_FOUND, natsio_js_push_consume(js, "PERR", "missing", &it));
    EXPECT_FAILS(NATSIO_ERR_STREAM_NOT_FOUND, natsio_js_push_consume(js, "PNONE", "x", &it));
    EXPECT_FAILS(NATSIO_ERR_INVALID_ARGUMENT, natsio_js_push_consume(js, "bad.name", "x", &it));
    EXPECT_NULL_ARG("js", natsio_js_push_consume(NULL, "PERR", "pull", &it));
    EXPECT_NULL_ARG("stream", natsio_js_push_consume(js, NULL, "pull", &it));
    EXPECT_NULL_ARG("consumer", natsio_js_push_consume(js, "PERR", NULL, &it));
    EXPECT_FAILS(NATSIO_ERR_INVALID_UTF8, natsio_js_push_consume(js, "PERR", BAD_UTF8, &it));
    EXPECT_NULL_ARG("messages_out", natsio_js_push_consume(js, "PERR", "pull", NULL));
    EXPECT_NULL_ARG("token_out", natsio_js_push_consume_async(js, "PERR", "pull", NULL));
    NT_CHECK(it == SENTINEL);
    /* The token form reports the same through its token. */
    natsio_token *t = NULL;
    EXPECT_OK(natsio_js_push_consume_async(js, "PERR", "pull", &t));
    nt_cleanup(token_free_cb, t);
    NT_CHECK_INT_EQ(token_outcome(t, 5000), NATSIO_ERR_INVALID_ARGUMENT);
    EXPECT_OK(natsio_js_stream_delete(js, "PERR"));
}

static void test_token_form_starts_a_consumption(void) {
    char deliver[128];
    natsio_js *js = connect_js();
    NT_CHECK(js != NULL);
    NT_CHECK(create_stream(js, "PTOK", "ptok.>"));
    char cfg[256];
    snprintf(cfg, sizeof cfg, "{\"durable_name\":\"t\",\"deliver_subject\":\"%s\",\"ack_policy\":\"none\"}",
             case_subject(deliver, sizeof deliver, "deliver"));
    NT_CHECK(create_consumer(js, "PTOK", cfg));
    natsio_token *t = NULL;
    EXPECT_OK(natsio_js_push_consume_async(js, "PTOK", "t", &t));
    nt_cleanup(token_free_cb, t);
    NT_CHECK_INT_EQ(token_outcome(t, 5000), NATSIO_OK);
    natsio_js_messages *it = NULL;
    EXPECT_OK(natsio_token_js_messages(t, &it));
    nt_cleanup(js_messages_free_cb, it);
    NT_CHECK(publish_n(js, "ptok.a", "t", 1));
    NT_CHECK(payload_is(next_msg(it), "t0"));
    EXPECT_OK(natsio_js_stream_delete(js, "PTOK"));
}

/* A handler that blocks in its first call until released, then acks. */
typedef struct {
    atomic_long delivered;
    atomic_long acked;
    atomic_long ends;
    atomic_long end_status;
    atomic_long release;
} drain_counts;

static void ack_after_release(void *user_data, const natsio_msg *msg, natsio_status status) {
    drain_counts *c = user_data;
    if (msg == NULL) {
        atomic_store(&c->end_status, (long)status);
        atomic_fetch_add(&c->ends, 1);
        return;
    }
    atomic_fetch_add(&c->delivered, 1);
    (void)wait_at_least(&c->release, 1, 30000);
    if (natsio_msg_ack(msg) == NATSIO_OK) {
        atomic_fetch_add(&c->acked, 1);
    }
}

/* Drain (unlike stop) hands what the server already sent to the handler
 * before the consumption ends: nothing is left to redeliver, and nothing
 * published after the drain reaches the handler. */
static void test_drain_hands_out_what_was_delivered(void) {
    enum { N = 40 };
    char deliver[128];
    natsio_js *js = connect_js();
    NT_CHECK(js != NULL);
    NT_CHECK(create_stream(js, "PDRAIN", "pdrain.>"));
    NT_CHECK(publish_n(js, "pdrain.a", "d", N));
    char cfg[256];
    snprintf(cfg, sizeof cfg,
             "{\"durable_name\":\"dr\",\"deliver_subject\":\"%s\",\"ack_policy\":\"explicit\",\"ack_wait\":\"30s\"}",
             case_subject(deliver, sizeof deliver, "deliver"));
    NT_CHECK(create_consumer(js, "PDRAIN", cfg));
    natsio_js_messages *it = push_consume(js, "PDRAIN", "dr");
    NT_CHECK(it != NULL);
    static drain_counts counts;
    atomic_store(&counts.delivered, 0);
    atomic_store(&counts.acked, 0);
    atomic_store(&counts.ends, 0);
    atomic_store(&counts.end_status, -1);
    atomic_store(&counts.release, 0);
    EXPECT_OK(natsio_js_messages_set_callback(it, ack_after_release, &counts, NULL));
    /* The handler holds the first message; the server has sent all N. */
    NT_CHECK(wait_at_least(&counts.delivered, 1, 10000));
    NT_CHECK(wait_consumer_int(js, "PDRAIN", "dr", "num_ack_pending", N));
    natsio_token *t = NULL;
    EXPECT_OK(natsio_js_messages_drain_async(it, 30000, &t));
    nt_cleanup(token_free_cb, t);
    NT_CHECK_INT_EQ(atomic_load(&counts.ends), 0);
    atomic_store(&counts.release, 1);
    NT_CHECK_INT_EQ(token_outcome(t, 30000), NATSIO_OK);
    NT_CHECK_INT_EQ(atomic_load(&counts.delivered), N);
    NT_CHECK_INT_EQ(atomic_load(&counts.acked), N);
    NT_CHECK_INT_EQ(atomic_load(&counts.ends), 1);
    NT_CHECK_INT_EQ(atomic_load(&counts.end_status), NATSIO_DONE);
    NT_CHECK(wait_consumer_int(js, "PDRAIN", "dr", "num_ack_pending", 0));
    NT_CHECK_INT_EQ(consumer_int(js, "PDRAIN", "dr", "num_redelivered"), 0);
    /* The interest is gone: what comes next waits at the server. */
    NT_CHECK(publish_n(js, "pdrain.a", "late", 3));
    NT_CHECK(wait_consumer_int(js, "PDRAIN", "dr", "num_pending", 3));
    NT_CHECK_INT_EQ(atomic_load(&counts.delivered), N);
    /* Draining again reports the same end; stop after it does nothing. */
    EXPECT_OK(natsio_js_messages_drain(it, 1000));
    EXPECT_OK(natsio_js_messages_stop(it));
    EXPECT_OK(natsio_js_stream_delete(js, "PDRAIN"));
}

/* A pull consume drained while an iterator reads it: no more pulls, what
 * was pulled is still read, then NATSIO_DONE; the rest stays at the
 * server. The drain comes while the server is still sending the first
 * pull's batch (large messages), so its requests are open then. */
static void test_drain_of_a_pull_consume_reads_what_was_pulled(void) {
    enum { N = 300, WINDOW = 100, SIZE = 16 * 1024 };
    natsio_js *js = connect_js();
    NT_CHECK(js != NULL);
    NT_CHECK(create_stream(js, "PLDRAIN", "pldrain.>"));
    char *big = malloc(SIZE);
    NT_CHECK(big != NULL);
    nt_cleanup(free, big);
    memset(big, 'x', SIZE);
    for (int i = 0; i < N; i++) {
        EXPECT_OK(natsio_js_publish(js, "pldrain.a", big, SIZE, NULL, NULL));
    }
    NT_CHECK(create_consumer(js, "PLDRAIN",
                             "{\"durable_name\":\"pl\",\"ack_policy\":\"explicit\",\"ack_wait\":\"30s\"}"));
    natsio_consume_options co;
    natsio_consume_options_init(&co);
    co.max_messages = WINDOW;
    natsio_js_messages *it = NULL;
    EXPECT_OK(natsio_js_consume(js, "PLDRAIN", "pl", &co, &it));
    nt_cleanup(js_messages_free_cb, it);
    natsio_msg *first = next_msg(it);
    NT_CHECK_INT_EQ(metadata_of(first).stream_seq, 1);
    EXPECT_OK(natsio_msg_ack(first));
    natsio_token *t = NULL;
    EXPECT_OK(natsio_js_messages_drain_async(it, 60000, &t));
    nt_cleanup(token_free_cb, t);
    int64_t read = 1;
    for (;;) {
        natsio_msg *m = NULL;
        natsio_status st = natsio_js_messages_next(it, 10000, &m);
        if (st == NATSIO_DONE) break;
        NT_CHECK_MSG(st == NATSIO_OK, "next while draining: %s (%s)", natsio_status_str(st), natsio_last_error());
        NT_CHECK_INT_EQ(metadata_of(m).stream_seq, read + 1);
        EXPECT_OK(natsio_msg_ack(m));
        natsio_msg_free(m);
        read++;
    }
    NT_CHECK_INT_EQ(token_outcome(t, 60000), NATSIO_OK);
    /* Nothing is pulled after the drain began: at most the first window. */
    NT_CHECK_MSG(read <= WINDOW, "the drain read %lld", (long long)read);
    /* Everything the server delivered was read and acked, none
     * redelivered: the drain ended its open pull requests before
     * withdrawing their inbox, so nothing was sent to it after (such a
     * message would reach no one and stay pending until its ack wait).
     * (delivered.consumer_seq is the first "consumer_seq" of the info.) */
    NT_CHECK(wait_consumer_int(js, "PLDRAIN", "pl", "num_ack_pending", 0));
    NT_CHECK_INT_EQ(consumer_int(js, "PLDRAIN", "pl", "consumer_seq"), read);
    NT_CHECK_INT_EQ(consumer_int(js, "PLDRAIN", "pl", "num_redelivered"), 0);
    NT_CHECK_INT_EQ(consumer_int(js, "PLDRAIN", "pl", "num_pending"), N - read);
    natsio_msg *none = NULL;
    NT_CHECK_INT_EQ(natsio_js_messages_next(it, 100, &none), NATSIO_DONE);
    EXPECT_OK(natsio_js_stream_delete(js, "PLDRAIN"));
}

static void test_drain_errors(void) {
    natsio_js *js = connect_js();
    NT_CHECK(js != NULL);
    NT_CHECK(create_stream(js, "PDERR", "pderr.>"));
    NT_CHECK(create_consumer(js, "PDERR", "{\"durable_name\":\"e\"}"));
    natsio_js_messages *it = NULL;
    EXPECT_OK(natsio_js_consume(js, "PDERR", "e", NULL, &it));
    nt_cleanup(js_messages_free_cb, it);
    natsio_token *t = SENTINEL;
    EXPECT_NULL_ARG("messages", natsio_js_messages_drain(NULL, 1000));
    EXPECT_NULL_ARG("messages", natsio_js_messages_drain_async(NULL, 1000, &t));
    EXPECT_NULL_ARG("token_out", natsio_js_messages_drain_async(it, 1000, NULL));
    EXPECT_FAILS(NATSIO_ERR_INVALID_ARGUMENT, natsio_js_messages_drain(it, -7));
    NT_CHECK(t == SENTINEL);
    /* Stopped first: nothing to drain. */
    EXPECT_OK(natsio_js_messages_stop(it));
    EXPECT_FAILS(NATSIO_ERR_SUBSCRIPTION_CLOSED, natsio_js_messages_drain(it, 1000));
    EXPECT_OK(natsio_js_stream_delete(js, "PDERR"));
}

/* The next status event of `it` containing `want`, skipping others, each
 * within `timeout_ms`; false (with the last status) if none came. */
static bool status_event_with(natsio_js_messages *it, const char *want, int64_t timeout_ms, char *got, size_t cap) {
    for (int i = 0; i < 50; i++) {
        char *ev = NULL;
        natsio_status st = natsio_js_messages_next_status(it, timeout_ms, &ev);
        if (st != NATSIO_OK) {
            snprintf(got, cap, "%s", natsio_status_str(st));
            return false;
        }
        snprintf(got, cap, "%s", ev);
        bool match = strstr(ev, want) != NULL;
        natsio_string_free(ev);
        if (match) return true;
    }
    return false;
}

/* Status events (nats.js's consumer status notifications): flow-control
 * requests answered, idle heartbeats with the last sequences, missed
 * heartbeat intervals counted from the second; a pull consume's requests. */
static void test_status_events(void) {
    char deliver[128], got[256];
    natsio_js *js = connect_js();
    NT_CHECK(js != NULL);
    NT_CHECK(create_stream(js, "PSE", "pse.>"));
    /* Past the server's first flow-control window (half of 2 MB). */
    enum { COUNT = 1200, SIZE = 1024 };
    static char payload[SIZE];
    memset(payload, 'x', SIZE);
    for (int i = 0; i < COUNT; i++) {
        EXPECT_OK(natsio_js_publish(js, "pse.a", payload, SIZE, NULL, NULL));
    }
    char cfg[256];
    snprintf(cfg, sizeof cfg,
             "{\"durable_name\":\"se\",\"deliver_subject\":\"%s\",\"ack_policy\":\"none\",\"flow_control\":true,"
             "\"idle_heartbeat\":\"200ms\"}",
             case_subject(deliver, sizeof deliver, "deliver"));
    NT_CHECK(create_consumer(js, "PSE", cfg));
    natsio_js_messages *it = push_consume(js, "PSE", "se");
    NT_CHECK(it != NULL);
    for (int i = 0; i < COUNT; i++) {
        natsio_msg *m = NULL;
        natsio_status st = natsio_js_messages_next(it, 10000, &m);
        NT_CHECK_MSG(st == NATSIO_OK, "message %d: %s (%s)", i, natsio_status_str(st), natsio_last_error());
        natsio_msg_free(m);
    }
    NT_CHECK_MSG(status_event_with(it, "{\"type\":\"flow_control\"}", 5000, got, sizeof got), "no flow control: %s",
                 got);
    /* Idle now: heartbeats name the last message delivered. */
    char want[64];
    snprintf(want, sizeof want, "\"last_stream_seq\":%d", COUNT);
    NT_CHECK_MSG(status_event_with(it, want, 5000, got, sizeof got), "no heartbeat after the last message: %s", got);
    NT_CHECK(strstr(got, "\"type\":\"heartbeat\"") != NULL);
    /* The consumer gone, its heartbeats stop: intervals 2, 3, ... counted. */
    EXPECT_OK(natsio_js_consumer_delete(js, "PSE", "se"));
    NT_CHECK_MSG(status_event_with(it, "{\"count\":2,\"type\":\"heartbeats_missed\"}", 5000, got, sizeof got),
                 "no second interval missed: %s", got);
    char *ev = NULL;
    EXPECT_OK(natsio_js_messages_next_status(it, 5000, &ev));
    NT_CHECK_MSG(strcmp(ev, "{\"count\":3,\"type\":\"heartbeats_missed\"}") == 0, "then: %s", ev);
    natsio_string_free(ev);
    /* Stopped: the events end. */
    EXPECT_OK(natsio_js_messages_stop(it));
    NT_CHECK_MSG(!status_event_with(it, "never", 5000, got, sizeof got) && strcmp(got, natsio_status_str(NATSIO_DONE)) == 0,
                 "after stop: %s", got);
    /* A pull consume tells each request ("next", with the request), also
     * through a token; stopped, its events end. */
    NT_CHECK(create_consumer(js, "PSE", "{\"durable_name\":\"pull\"}"));
    natsio_js_messages *pull = NULL;
    EXPECT_OK(natsio_js_consume(js, "PSE", "pull", NULL, &pull));
    nt_cleanup(js_messages_free_cb, pull);
    natsio_token *t = NULL;
    EXPECT_OK(natsio_js_messages_next_status_async(pull, &t));
    nt_cleanup(token_free_cb, t);
    NT_CHECK_INT_EQ(token_outcome(t, 5000), NATSIO_OK);
    ev = NULL;
    EXPECT_OK(natsio_token_string(t, &ev));
    NT_CHECK_MSG(ev != NULL && strstr(ev, "\"type\":\"next\"") != NULL && strstr(ev, "\"batch\":") != NULL,
                 "first event: %s", ev ? ev : "(null)");
    natsio_string_free(ev);
    EXPECT_OK(natsio_js_messages_stop(pull));
    NT_CHECK_MSG(!status_event_with(pull, "never", 5000, got, sizeof got) && strcmp(got, natsio_status_str(NATSIO_DONE)) == 0,
                 "after stop: %s", got);
    EXPECT_NULL_ARG("messages", natsio_js_messages_next_status(NULL, 0, &ev));
    EXPECT_NULL_ARG("status_json_out", natsio_js_messages_next_status(pull, 0, NULL));
    EXPECT_OK(natsio_js_stream_delete(js, "PSE"));
}

int main(int argc, char **argv) {
    static const nt_case cases[] = {
        NT_CASE(test_delivery_in_order_with_metadata_and_acks),
        NT_CASE(test_callback_delivery_and_final_call),
        NT_CASE(test_flow_control_with_a_small_buffer_loses_nothing),
        NT_CASE(test_missed_heartbeats_are_reported),
        NT_CASE(test_queue_group_shares_the_messages),
        NT_CASE(test_stop_withdraws_and_a_new_consumption_resumes),
        NT_CASE(test_ephemeral_consumer_and_consumer_deleted),
        NT_CASE(test_errors),
        NT_CASE(test_token_form_starts_a_consumption),
        NT_CASE(test_drain_hands_out_what_was_delivered),
        NT_CASE(test_drain_of_a_pull_consume_reads_what_was_pulled),
        NT_CASE(test_drain_errors),
        NT_CASE(test_status_events),
    };
    return run_cases_with_shared_server(argc, argv, "pushtest", cases, NT_COUNT(cases));
}
