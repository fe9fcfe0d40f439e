/*
 * Continuous consumption (natsio_js_consume, natsio_js_messages_*) and
 * Key-Value watches (natsio_kv_watch, natsio_kv_watcher_*) through the C
 * ABI against a real nats-server.
 *
 * Consume: many messages in order with a small max_messages (which bounds
 * what the server hands out and the library buffers), bounded waits that time out while the
 * consumption goes on (also past several pull request expiries, and an
 * unbounded wait fed from another thread), stop from another thread,
 * consumption ended by deleting the consumer, missing consumers, options
 * checks, acks/naks/terms of consumed messages with their metadata and
 * redelivery after ack_wait, free without stop, use after the client is
 * closed.
 *
 * Watch: initial values (latest per key) then the initial-values marker
 * (an entry of operation NATSIO_KV_INITIAL_DONE), then puts, deletes and
 * purges with their revisions; empty buckets, updates_only,
 * include_history, ignore_deletes, meta_only, key patterns (lists and
 * wildcards) and bad ones, idle timeouts, stop from another thread
 * (NATSIO_DONE from then on), recovery after the watch's consumer is
 * deleted, stop and free (which remove the consumer), use after the client
 * is closed.
 *
 * And bad input for every one of these functions.
 *
 * The cases share one server; each uses its own streams and buckets.
 * Pull requests expire after 1-2 s and ack waits are 1 s, so that the
 * program runs in seconds. The program also runs under valgrind: checks
 * that nothing (more) arrives use a later message as a barrier rather than
 * a short wait, and time bounds are generous, well apart from the
 * behaviour they tell from the right one.
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

static bool publish(natsio_js *js, const char *subject, const char *payload) {
    natsio_status st = natsio_js_publish(js, subject, payload, strlen(payload), NULL, NULL);
    if (st != NATSIO_OK) {
        nt_fail_at(__FILE__, __LINE__, "publish %s to %s: %s (%s)", payload, subject, natsio_status_str(st),
                   natsio_last_error());
        return false;
    }
    return true;
}

/* Publishes "<prefix><i>" for i in [0, count) to `subject` asynchronously
 * and waits for every ack. */
static bool publish_async_n(natsio_js *js, const char *subject, const char *prefix, int count) {
    for (int i = 0; i < count; i++) {
        char payload[64];
        int len = snprintf(payload, sizeof payload, "%s%d", prefix, i);
        natsio_token *t = NULL;
        natsio_status st = natsio_js_publish_async(js, subject, payload, (size_t)len, NULL, &t);
        natsio_token_free(t);
        if (st != NATSIO_OK) {
            nt_fail_at(__FILE__, __LINE__, "publish_async %d: %s (%s)", i, natsio_status_str(st),
                       natsio_last_error());
            return false;
        }
    }
    natsio_status st = natsio_js_publish_async_complete(js, 10000);
    if (st != NATSIO_OK) {
        nt_fail_at(__FILE__, __LINE__, "publish_async_complete: %s (%s)", natsio_status_str(st),
                   natsio_last_error());
        return false;
    }
    return true;
}

/* Options structs as their _init functions make them (the defaults). */
static natsio_consume_options consume_options(void) {
    natsio_consume_options o;
    natsio_consume_options_init(&o);
    return o;
}

static natsio_kv_watch_options watch_options(void) {
    natsio_kv_watch_options o;
    natsio_kv_watch_options_init(&o);
    return o;
}

/* A list of key patterns as natsio_kv_watch takes it: the array and its
 * length, e.g. watch(kv, KEYS("a.*", "c"), NULL). */
#define KEYS(...) (const char *const[]){__VA_ARGS__}, NT_COUNT(((const char *const[]){__VA_ARGS__}))
#define ALL_KEYS NULL, 0

/* Starts consuming (freed when the case ends); NULL and a recorded failure
 * if it cannot. */
static natsio_js_messages *consume(natsio_js *js, const char *stream, const char *consumer, int64_t max,
                                   int64_t expires_ms) {
    natsio_consume_options o = consume_options();
    o.max_messages = max;
    o.expires_ms = expires_ms;
    natsio_js_messages *it = NULL;
    natsio_status st = natsio_js_consume(js, stream, consumer, &o, &it);
    if (st != NATSIO_OK) {
        nt_fail_at(__FILE__, __LINE__, "consume %s/%s: %s (%s)", stream, consumer, natsio_status_str(st),
                   natsio_last_error());
        return NULL;
    }
    nt_cleanup(js_messages_free_cb, it);
    return it;
}

/* The next consumed message within timeout_ms (freed when the case ends);
 * NULL and a recorded failure if none came. */
static natsio_msg *take_at(int line, const natsio_js_messages *it, int64_t timeout_ms) {
    natsio_msg *m = NULL;
    natsio_status st = natsio_js_messages_next(it, timeout_ms, &m);
    if (st != NATSIO_OK || m == NULL) {
        nt_fail_at(__FILE__, line, "natsio_js_messages_next(%lld ms): %s (%s)", (long long)timeout_ms,
                   natsio_status_str(st), natsio_last_error());
        return NULL;
    }
    nt_cleanup(msg_free_cb, m);
    return m;
}
#define TAKE(it, timeout_ms) take_at(__LINE__, (it), (timeout_ms))

typedef struct {
    const natsio_js_messages *it;
    uint64_t want;
} buffered_wait;

static bool buffered_at_least(void *arg) {
    buffered_wait *w = (buffered_wait *)arg;
    natsio_iter_stats st;
    return natsio_js_messages_get_stats(w->it, &st) == NATSIO_OK && st.pending_items >= w->want;
}

/* ---- threads ------------------------------------------------------------- */

/* Stops a consumption or a watch after delay_ms; stopped_at: when the
 * stop was called (nt_now_ms), read after the join. */
typedef struct {
    const natsio_js_messages *it;
    const natsio_kv_watcher *w;
    int64_t delay_ms;
    natsio_status status;
    int64_t stopped_at;
} delayed_stop;

static void *stop_thread(void *arg) {
    delayed_stop *d = (delayed_stop *)arg;
    nt_sleep_ms(d->delay_ms);
    d->stopped_at = nt_now_ms();
    if (d->it) d->status = natsio_js_messages_stop(d->it);
    if (d->w) d->status = natsio_kv_watcher_stop(d->w);
    return NULL;
}

/* Publishes `payload` after delay_ms. */
typedef struct {
    natsio_js *js;
    const char *subject;
    const char *payload;
    int64_t delay_ms;
    natsio_status status;
} delayed_publish;

static void *publish_thread(void *arg) {
    delayed_publish *d = (delayed_publish *)arg;
    nt_sleep_ms(d->delay_ms);
    d->status = natsio_js_publish(d->js, d->subject, d->payload, strlen(d->payload), NULL, NULL);
    return NULL;
}

/* Deletes a consumer after delay_ms. */
typedef struct {
    natsio_js *js;
    const char *stream;
    const char *consumer;
    int64_t delay_ms;
    natsio_status status;
} delayed_delete;

static void *delete_thread(void *arg) {
    delayed_delete *d = (delayed_delete *)arg;
    nt_sleep_ms(d->delay_ms);
    d->status = natsio_js_consumer_delete(d->js, d->stream, d->consumer);
    return NULL;
}

/* ---- consume: order, flow, acks --------------------------------------------- */

static void test_consume_many_in_order_with_a_small_window(void) {
    natsio_js *js = connect_js();
    NT_CHECK(js != NULL);
    NT_CHECK(create_stream(js, "WMANY", "wmany.>"));
    NT_CHECK(create_consumer(js, "WMANY", "{\"durable_name\":\"d\",\"ack_policy\":\"explicit\"}"));
    enum { N = 1200, WINDOW = 64 };
    NT_CHECK(publish_async_n(js, "wmany.x", "m", N));
    /* All N stored, none handed out yet. The server counts a consumer's
     * pending messages after acknowledging the publishes (off the stream's
     * signal queue), so num_pending may lag the acks: wait for it. */
    NT_CHECK(wait_consumer_int(js, "WMANY", "d", "num_pending", N));
    NT_CHECK_INT_EQ(consumer_int(js, "WMANY", "d", "num_ack_pending"), 0);

    natsio_js_messages *it = consume(js, "WMANY", "d", WINDOW, 2000);
    NT_CHECK(it != NULL);
    /* One taken, not acked: the server handed out no more than the window. */
    natsio_msg *first = TAKE(it, 5000);
    NT_CHECK(first != NULL);
    NT_CHECK(payload_is(first, "m0"));
    /* Once the library has buffered the rest of a window, the server has
     * handed out all it will until messages are acked. */
    buffered_wait bw = {it, WINDOW - 1};
    NT_CHECK_MSG(nt_wait_until(buffered_at_least, &bw, 10000), "the library never buffered %d messages", WINDOW - 1);
    int64_t handed_out = consumer_int(js, "WMANY", "d", "num_ack_pending");
    NT_CHECK_MSG(handed_out >= 1 && handed_out <= WINDOW, "num_ack_pending %lld with max_messages %d",
                 (long long)handed_out, WINDOW);
    EXPECT_OK(natsio_msg_ack(first));

    for (int i = 1; i < N; i++) {
        natsio_msg *m = TAKE(it, 5000);
        NT_CHECK_MSG(m != NULL, "message %d of %d", i, N);
        char want[32];
        snprintf(want, sizeof want, "m%d", i);
        NT_CHECK_MSG(payload_is(m, want), "message %d: \"%.*s\", want \"%s\"", i, (int)natsio_msg_data_len(m),
                     (const char *)natsio_msg_data(m), want);
        natsio_js_msg_metadata md = metadata_of(m);
        NT_CHECK(!nt_failed());
        NT_CHECK_INT_EQ(md.stream_seq, i + 1);
        NT_CHECK_INT_EQ(md.consumer_seq, i + 1);
        NT_CHECK_INT_EQ(md.num_delivered, 1);
        NT_CHECK_INT_EQ(md.num_pending, N - 1 - i);
        EXPECT_OK(natsio_msg_ack(m));
    }
    /* All acknowledged, nothing left, nothing redelivered. */
    NT_CHECK(wait_consumer_int(js, "WMANY", "d", "num_ack_pending", 0));
    NT_CHECK_INT_EQ(consumer_int(js, "WMANY", "d", "num_pending"), 0);
    NT_CHECK_INT_EQ(consumer_int(js, "WMANY", "d", "num_redelivered"), 0);
    natsio_msg *m = SENTINEL;
    EXPECT_FAILS(NATSIO_ERR_TIMEOUT, natsio_js_messages_next(it, 200, &m));
    NT_CHECK(m == SENTINEL);
    EXPECT_OK(natsio_js_stream_delete(js, "WMANY"));
}

static void test_consume_times_out_and_goes_on(void) {
    natsio_js *js = connect_js();
    NT_CHECK(js != NULL);
    NT_CHECK(create_stream(js, "WIDLE", "widle.>"));
    NT_CHECK(create_consumer(js, "WIDLE", "{\"durable_name\":\"d\",\"ack_policy\":\"explicit\"}"));
    /* Pull requests of 1 s (heartbeats every 500 ms by default). */
    natsio_js_messages *it = consume(js, "WIDLE", "d", 16, 1000);
    NT_CHECK(it != NULL);

    natsio_msg *m = SENTINEL;
    int64_t t0 = nt_now_ms();
    EXPECT_FAILS(NATSIO_ERR_TIMEOUT, natsio_js_messages_next(it, 300, &m));
    int64_t took = nt_now_ms() - t0;
    NT_CHECK(m == SENTINEL);
    NT_CHECK_MSG(took >= 280 && took < 5000, "a 300 ms next returned after %lld ms", (long long)took);
    t0 = nt_now_ms();
    EXPECT_FAILS(NATSIO_ERR_TIMEOUT, natsio_js_messages_next(it, NATSIO_NO_WAIT, &m));
    took = nt_now_ms() - t0;
    NT_CHECK(m == SENTINEL);
    NT_CHECK_MSG(took < 2000, "a no-wait next returned after %lld ms", (long long)took);

    /* Published after the timeouts: it still arrives. */
    NT_CHECK(publish(js, "widle.a", "p0"));
    natsio_msg *p0 = TAKE(it, 3000);
    NT_CHECK(p0 != NULL);
    NT_CHECK(payload_is(p0, "p0"));
    EXPECT_OK(natsio_msg_ack(p0));

    /* A wait across two pull request lifetimes, then a new message comes
     * at once: the consumption re-requested on its own. */
    t0 = nt_now_ms();
    EXPECT_FAILS(NATSIO_ERR_TIMEOUT, natsio_js_messages_next(it, 2500, &m));
    took = nt_now_ms() - t0;
    NT_CHECK(m == SENTINEL);
    NT_CHECK_MSG(took >= 2450 && took < 4500, "a 2500 ms next returned after %lld ms", (long long)took);
    NT_CHECK(publish(js, "widle.a", "p1"));
    t0 = nt_now_ms();
    natsio_msg *p1 = TAKE(it, 3000);
    NT_CHECK(p1 != NULL);
    took = nt_now_ms() - t0;
    NT_CHECK(payload_is(p1, "p1"));
    NT_CHECK_MSG(took < 1000, "p1 came %lld ms after it was published", (long long)took);
    EXPECT_OK(natsio_msg_ack(p1));

    /* Waiting without a limit: a message published from another thread
     * after a request expired ends the wait. */
    delayed_publish d = {js, "widle.b", "p2", 1300, NATSIO_ERR_INTERNAL};
    pthread_t t;
    NT_CHECK(pthread_create(&t, NULL, publish_thread, &d) == 0);
    natsio_msg *p2 = NULL;
    natsio_status st = natsio_js_messages_next(it, NATSIO_WAIT_FOREVER, &p2);
    pthread_join(t, NULL);
    nt_cleanup(msg_free_cb, p2);
    NT_CHECK_MSG(st == NATSIO_OK, "next(forever): %s (%s)", natsio_status_str(st), natsio_last_error());
    NT_CHECK_MSG(d.status == NATSIO_OK, "publish: %s", natsio_status_str(d.status));
    NT_CHECK(payload_is(p2, "p2"));
    NT_CHECK_STR_EQ(natsio_msg_subject(p2), "widle.b");
    EXPECT_OK(natsio_msg_ack_sync(p2, 2000));

    /* Nothing delivered twice: the next message is one published now. */
    NT_CHECK(publish(js, "widle.a", "p3"));
    natsio_msg *p3 = TAKE(it, 5000);
    NT_CHECK(p3 != NULL);
    NT_CHECK_MSG(payload_is(p3, "p3"), "\"%.*s\" before p3", (int)natsio_msg_data_len(p3),
                 (const char *)natsio_msg_data(p3));
    EXPECT_OK(natsio_msg_ack_sync(p3, 2000));
    NT_CHECK(wait_consumer_int(js, "WIDLE", "d", "num_ack_pending", 0));
    NT_CHECK_INT_EQ(consumer_int(js, "WIDLE", "d", "num_redelivered"), 0);
    EXPECT_OK(natsio_js_stream_delete(js, "WIDLE"));
}

static void test_consume_stop_from_another_thread(void) {
    natsio_js *js = connect_js();
    NT_CHECK(js != NULL);
    NT_CHECK(create_stream(js, "WSTOP", "wstop.>"));
    NT_CHECK(create_consumer(js, "WSTOP",
                             "{\"durable_name\":\"d\",\"ack_policy\":\"explicit\",\"ack_wait\":\"1s\"}"));
    natsio_js_messages *it = consume(js, "WSTOP", "d", 16, 1000);
    NT_CHECK(it != NULL);

    delayed_stop d = {it, NULL, 200, NATSIO_ERR_INTERNAL, 0};
    pthread_t t;
    NT_CHECK(pthread_create(&t, NULL, stop_thread, &d) == 0);
    natsio_msg *m = SENTINEL;
    /* Stopped: the iteration ended without error, NATSIO_DONE with the out
     * set to NULL; not before the stop (whenever the thread got to it),
     * and soon after. */
    natsio_status st = natsio_js_messages_next(it, NATSIO_WAIT_FOREVER, &m);
    int64_t returned_at = nt_now_ms();
    pthread_join(t, NULL);
    NT_CHECK_INT_EQ(d.status, NATSIO_OK);
    NT_CHECK_INT_EQ(st, NATSIO_DONE);
    NT_CHECK(m == NULL);
    NT_CHECK_MSG(returned_at >= d.stopped_at && returned_at - d.stopped_at < 3000,
                 "the blocked next returned %lld ms after the stop", (long long)(returned_at - d.stopped_at));

    /* Stopped for good: later calls return NATSIO_DONE at once (long
     * before their 5 s), even with a message waiting; a second stop is
     * harmless. */
    NT_CHECK(publish(js, "wstop.a", "after"));
    int64_t t0 = nt_now_ms();
    m = SENTINEL;
    NT_CHECK_INT_EQ(natsio_js_messages_next(it, 5000, &m), NATSIO_DONE);
    NT_CHECK(m == NULL);
    m = SENTINEL;
    NT_CHECK_INT_EQ(natsio_js_messages_next(it, NATSIO_NO_WAIT, &m), NATSIO_DONE);
    NT_CHECK(m == NULL);
    EXPECT_OK(natsio_js_messages_stop(it));
    m = SENTINEL;
    NT_CHECK_INT_EQ(natsio_js_messages_next(it, NATSIO_TIMEOUT_DEFAULT, &m), NATSIO_DONE);
    NT_CHECK(m == NULL);
    int64_t took = nt_now_ms() - t0;
    NT_CHECK_MSG(took < 2500, "next after stop took %lld ms", (long long)took);

    /* The message is not lost: a new consumption gets it (at the latest
     * after the ack wait, should the stopped request have taken it). */
    natsio_js_messages *again = consume(js, "WSTOP", "d", 16, 1000);
    NT_CHECK(again != NULL);
    natsio_msg *after = TAKE(again, 4000);
    NT_CHECK(after != NULL);
    NT_CHECK(payload_is(after, "after"));
    EXPECT_OK(natsio_msg_ack_sync(after, 2000));
    EXPECT_OK(natsio_js_stream_delete(js, "WSTOP"));
}

static void test_consume_ends_when_the_consumer_is_deleted(void) {
    natsio_js *js = connect_js();
    NT_CHECK(js != NULL);
    NT_CHECK(create_stream(js, "WDEL", "wdel.>"));
    NT_CHECK(create_consumer(js, "WDEL", "{\"durable_name\":\"d\",\"ack_policy\":\"explicit\"}"));
    natsio_js_messages *it = consume(js, "WDEL", "d", 16, 2000);
    NT_CHECK(it != NULL);
    NT_CHECK(publish(js, "wdel.a", "p0"));
    natsio_msg *p0 = TAKE(it, 3000);
    NT_CHECK(p0 != NULL);
    EXPECT_OK(natsio_msg_ack(p0));

    /* Deleted while a next waits on it. */
    delayed_delete d = {js, "WDEL", "d", 300, NATSIO_ERR_INTERNAL};
    pthread_t t;
    NT_CHECK(pthread_create(&t, NULL, delete_thread, &d) == 0);
    natsio_msg *m = SENTINEL;
    int64_t t0 = nt_now_ms();
    plant_error_marker();
    natsio_status st = natsio_js_messages_next(it, 5000, &m);
    int64_t took = nt_now_ms() - t0;
    pthread_join(t, NULL);
    NT_CHECK_MSG(d.status == NATSIO_OK, "delete: %s", natsio_status_str(d.status));
    NT_CHECK_MSG(st == NATSIO_ERR_CONSUMER_DELETED, "next on a deleted consumer: %s (%s)", natsio_status_str(st),
                 natsio_last_error());
    NT_CHECK(strstr(natsio_last_error(), ERROR_MARKER) == NULL && natsio_last_error()[0] != '\0');
    NT_CHECK(m == SENTINEL);
    NT_CHECK_MSG(took < 4000, "next ended %lld ms after it started", (long long)took);
    /* Consumption has ended with that error: every later call returns it,
     * at once (long before its 5 s). */
    t0 = nt_now_ms();
    EXPECT_FAILS(NATSIO_ERR_CONSUMER_DELETED, natsio_js_messages_next(it, 5000, &m));
    EXPECT_FAILS(NATSIO_ERR_CONSUMER_DELETED, natsio_js_messages_next(it, NATSIO_WAIT_FOREVER, &m));
    took = nt_now_ms() - t0;
    NT_CHECK(m == SENTINEL);
    NT_CHECK_MSG(took < 2500, "next after the end took %lld ms", (long long)took);
    /* A stop after the end changes nothing. */
    EXPECT_OK(natsio_js_messages_stop(it));
    EXPECT_FAILS(NATSIO_ERR_CONSUMER_DELETED, natsio_js_messages_next(it, NATSIO_NO_WAIT, &m));

    /* Deleted while nobody waits: the next call finds out. */
    NT_CHECK(create_consumer(js, "WDEL", "{\"durable_name\":\"e\",\"ack_policy\":\"explicit\"}"));
    NT_CHECK(wait_consumer_int(js, "WDEL", "e", "num_pending", 1));
    natsio_js_messages *it2 = consume(js, "WDEL", "e", 16, 2000);
    NT_CHECK(it2 != NULL);
    natsio_msg *e0 = TAKE(it2, 3000);
    NT_CHECK(e0 != NULL);
    NT_CHECK(payload_is(e0, "p0"));
    EXPECT_FAILS(NATSIO_ERR_TIMEOUT, natsio_js_messages_next(it2, 200, &m));
    EXPECT_OK(natsio_js_consumer_delete(js, "WDEL", "e"));
    /* The library pulls whether or not anyone waits in next: the deletion
     * ends the consumption as above. */
    st = natsio_js_messages_next(it2, 3000, &m);
    NT_CHECK_MSG(st == NATSIO_ERR_CONSUMER_DELETED, "next after the consumer was deleted: %s (%s)",
                 natsio_status_str(st), natsio_last_error());
    NT_CHECK(m == SENTINEL);

    /* A consumer (or stream) that is not there cannot be consumed. */
    natsio_js_messages *out = SENTINEL;
    EXPECT_FAILS(NATSIO_ERR_CONSUMER_NOT_FOUND, natsio_js_consume(js, "WDEL", "d", NULL, &out));
    EXPECT_FAILS(NATSIO_ERR_CONSUMER_NOT_FOUND, natsio_js_consume(js, "WDEL", "never", NULL, &out));
    EXPECT_FAILS(NATSIO_ERR_STREAM_NOT_FOUND, natsio_js_consume(js, "WDEL_NONE", "d", NULL, &out));
    NT_CHECK(out == SENTINEL);
    EXPECT_OK(natsio_js_stream_delete(js, "WDEL"));
}

static void test_consume_options_and_names(void) {
    natsio_js *js = connect_js();
    NT_CHECK(js != NULL);
    NT_CHECK(create_stream(js, "WOPT", "wopt.>"));
    NT_CHECK(create_consumer(js, "WOPT",
                             "{\"durable_name\":\"d\",\"ack_policy\":\"explicit\",\"ack_wait\":\"1s\"}"));
    natsio_js_messages *out = SENTINEL;
    natsio_consume_options o = consume_options();

    o.max_messages = -1;
    EXPECT_FAILS_NAMING(NATSIO_ERR_INVALID_ARGUMENT, "max_messages", natsio_js_consume(js, "WOPT", "d", &o, &out));
    o = consume_options();
    o.expires_ms = -1000;
    EXPECT_FAILS_NAMING(NATSIO_ERR_INVALID_ARGUMENT, "expires", natsio_js_consume(js, "WOPT", "d", &o, &out));
    o = consume_options();
    o.idle_heartbeat_ms = INT64_MIN;
    EXPECT_FAILS_NAMING(NATSIO_ERR_INVALID_ARGUMENT, "idle_heartbeat",
                        natsio_js_consume(js, "WOPT", "d", &o, &out));
    /* Requests shorter than a second. */
    o = consume_options();
    o.expires_ms = 999;
    EXPECT_FAILS_NAMING(NATSIO_ERR_INVALID_ARGUMENT, "expires", natsio_js_consume(js, "WOPT", "d", &o, &out));
    /* Heartbeats longer than half a request. */
    o = consume_options();
    o.expires_ms = 2000;
    o.idle_heartbeat_ms = 1001;
    EXPECT_FAILS_NAMING(NATSIO_ERR_INVALID_ARGUMENT, "idle_heartbeat", natsio_js_consume(js, "WOPT", "d", &o, &out));
    o.expires_ms = 0; /* the default 30 s: at most 15 s */
    o.idle_heartbeat_ms = 15001;
    EXPECT_FAILS_NAMING(NATSIO_ERR_INVALID_ARGUMENT, "idle_heartbeat", natsio_js_consume(js, "WOPT", "d", &o, &out));
    /* Bad names. */
    EXPECT_FAILS(NATSIO_ERR_INVALID_ARGUMENT, natsio_js_consume(js, "WO.PT", "d", NULL, &out));
    EXPECT_FAILS(NATSIO_ERR_INVALID_ARGUMENT, natsio_js_consume(js, "WOPT", "d*", NULL, &out));
    EXPECT_FAILS(NATSIO_ERR_INVALID_ARGUMENT, natsio_js_consume(js, "WOPT", "", NULL, &out));
    EXPECT_FAILS(NATSIO_ERR_INVALID_ARGUMENT, natsio_js_consume(js, "", "d", NULL, &out));
    NT_CHECK(out == SENTINEL);
    /* The refused calls asked the server for nothing. */
    NT_CHECK_INT_EQ(consumer_int(js, "WOPT", "d", "num_waiting"), 0);

    /* Limits that are fine: exactly half, the smallest request, zeros,
     * NULL options, a huge window. Each really consumes. */
    natsio_consume_options good[5];
    for (int i = 0; i < 5; i++) good[i] = consume_options();
    good[0].expires_ms = 2000;
    good[0].idle_heartbeat_ms = 1000;
    good[1].expires_ms = 1000;
    good[2].idle_heartbeat_ms = 15000;
    good[3].max_messages = INT64_MAX;
    good[3].expires_ms = 1000;
    for (int i = 0; i <= 5; i++) {
        char payload[16];
        snprintf(payload, sizeof payload, "g%d", i);
        NT_CHECK(publish(js, "wopt.a", payload));
        natsio_js_messages *it = NULL;
        EXPECT_OK(natsio_js_consume(js, "WOPT", "d", i < 5 ? &good[i] : NULL, &it));
        nt_cleanup(js_messages_free_cb, it);
        natsio_msg *m = TAKE(it, 3000);
        NT_CHECK_MSG(m != NULL, "options %d", i);
        NT_CHECK_MSG(payload_is(m, payload), "options %d", i);
        EXPECT_OK(natsio_msg_ack_sync(m, 2000));
        EXPECT_OK(natsio_js_messages_stop(it));
    }
    EXPECT_OK(natsio_js_stream_delete(js, "WOPT"));
}

static void test_consumed_messages_ack_nak_term_and_redelivery(void) {
    natsio_js *js = connect_js();
    NT_CHECK(js != NULL);
    NT_CHECK(create_stream(js, "WACK", "wack.>"));
    NT_CHECK(create_consumer(js, "WACK",
                             "{\"durable_name\":\"d\",\"ack_policy\":\"explicit\",\"ack_wait\":\"1s\"}"));
    const char *payloads[] = {"r0", "r1", "r2", "r3"};
    for (int i = 0; i < 4; i++) NT_CHECK(publish(js, "wack.a", payloads[i]));
    /* The server delivers r3 after this, so its ack wait ends no earlier
     * than 1 s from now (however late the test takes it). */
    int64_t consume_started = nt_now_ms();
    natsio_js_messages *it = consume(js, "WACK", "d", 8, 2000);
    NT_CHECK(it != NULL);

    natsio_msg *m[4];
    for (int i = 0; i < 4; i++) {
        m[i] = TAKE(it, 3000);
        NT_CHECK(m[i] != NULL);
        NT_CHECK(payload_is(m[i], payloads[i]));
        natsio_js_msg_metadata md = metadata_of(m[i]);
        NT_CHECK(!nt_failed());
        NT_CHECK(span_eq(md.stream, md.stream_len, "WACK"));
        NT_CHECK(span_eq(md.consumer, md.consumer_len, "d"));
        NT_CHECK_INT_EQ(md.stream_seq, i + 1);
        NT_CHECK_INT_EQ(md.consumer_seq, i + 1);
        NT_CHECK_INT_EQ(md.num_delivered, 1);
        /* The server counts what it has not sent yet when it sends: the
         * rest of the stream, or fewer when it has already queued more of
         * the same pull (a clean-clone CI run saw 0 for the first of four). */
        NT_CHECK_MSG(md.num_pending <= (uint64_t)(3 - i), "num_pending %llu at message %d",
                     (unsigned long long)md.num_pending, i);
        if (i == 3) NT_CHECK_INT_EQ(md.num_pending, 0);
        NT_CHECK(md.timestamp_ns > 0);
    }
    EXPECT_OK(natsio_msg_ack_sync(m[0], 2000));
    EXPECT_OK(natsio_msg_ack(m[1]));
    EXPECT_FAILS(NATSIO_ERR_MESSAGE_ALREADY_ACKED, natsio_msg_ack(m[0]));
    EXPECT_FAILS(NATSIO_ERR_MESSAGE_ALREADY_ACKED, natsio_msg_nak(m[1], 0));
    EXPECT_OK(natsio_msg_nak(m[2], 0)); /* at once */
    /* m[3] is left alone: it comes back after the 1 s ack wait. */

    bool seen2 = false, seen3 = false;
    for (int k = 0; k < 2; k++) {
        natsio_msg *r = TAKE(it, 3000);
        NT_CHECK(r != NULL);
        natsio_js_msg_metadata md = metadata_of(r);
        NT_CHECK(!nt_failed());
        NT_CHECK_INT_EQ(md.num_delivered, 2);
        NT_CHECK_MSG(md.consumer_seq > 4, "a redelivery with consumer_seq %llu", (unsigned long long)md.consumer_seq);
        if (payload_is(r, "r2")) {
            NT_CHECK(!seen2);
            seen2 = true;
            NT_CHECK_INT_EQ(md.stream_seq, 3);
            EXPECT_OK(natsio_msg_ack_sync(r, 2000));
        } else if (payload_is(r, "r3")) {
            NT_CHECK(!seen3);
            seen3 = true;
            int64_t after = nt_now_ms() - consume_started;
            NT_CHECK_INT_EQ(md.stream_seq, 4);
            NT_CHECK_MSG(after >= 900, "r3 came back %lld ms after consume started (ack wait 1 s)", (long long)after);
            EXPECT_OK(natsio_msg_term(r, "enough"));
            EXPECT_FAILS(NATSIO_ERR_MESSAGE_ALREADY_ACKED, natsio_msg_ack(r));
        } else {
            NT_FAIL("unexpected redelivery \"%.*s\"", (int)natsio_msg_data_len(r), (const char *)natsio_msg_data(r));
        }
    }
    /* Acked and termed messages stay away, also after another ack wait. */
    natsio_msg *none = SENTINEL;
    EXPECT_FAILS(NATSIO_ERR_TIMEOUT, natsio_js_messages_next(it, 1500, &none));
    NT_CHECK(none == SENTINEL);
    NT_CHECK(wait_consumer_int(js, "WACK", "d", "num_ack_pending", 0));
    EXPECT_OK(natsio_js_stream_delete(js, "WACK"));
}

static void test_consume_free_without_stop_and_null_handles(void) {
    /* stop reports a NULL handle; free accepts it without an error. */
    EXPECT_NULL_ARG("messages", natsio_js_messages_stop(NULL));
    EXPECT_NULL_ARG("watcher", natsio_kv_watcher_stop(NULL));
    plant_error_marker();
    natsio_js_messages_free(NULL);
    natsio_kv_watcher_free(NULL);
    NT_CHECK_MSG(strstr(natsio_last_error(), ERROR_MARKER) != NULL,
                 "free of NULL changed natsio_last_error() to \"%s\"", natsio_last_error());

    natsio_js *js = connect_js();
    NT_CHECK(js != NULL);
    NT_CHECK(create_stream(js, "WFREE", "wfree.>"));
    NT_CHECK(create_consumer(js, "WFREE", "{\"durable_name\":\"d\",\"ack_policy\":\"explicit\"}"));
    NT_CHECK(publish(js, "wfree.a", "f0"));
    NT_CHECK(publish(js, "wfree.a", "f1"));

    /* Freed while running (a pull request open): no stop needed, and a
     * message taken before stays usable. */
    natsio_js_messages *it = NULL;
    EXPECT_OK(natsio_js_consume(js, "WFREE", "d", NULL, &it));
    natsio_msg *f0 = NULL;
    natsio_status st = natsio_js_messages_next(it, 3000, &f0);
    nt_cleanup(msg_free_cb, f0);
    natsio_js_messages_free(it);
    NT_CHECK_MSG(st == NATSIO_OK, "next: %s", natsio_status_str(st));
    NT_CHECK(payload_is(f0, "f0"));
    EXPECT_OK(natsio_msg_ack_sync(f0, 2000));

    /* Stopped, then freed; and one that is freed untouched. */
    natsio_js_messages *it2 = NULL;
    EXPECT_OK(natsio_js_consume(js, "WFREE", "d", NULL, &it2));
    EXPECT_OK(natsio_js_messages_stop(it2));
    natsio_js_messages_free(it2);
    natsio_js_messages *it3 = NULL;
    EXPECT_OK(natsio_js_consume(js, "WFREE", "d", NULL, &it3));
    natsio_js_messages_free(it3);
    EXPECT_OK(natsio_js_stream_delete(js, "WFREE"));
}

/* ---- KV watch ---------------------------------------------------------------- */

/* A memory bucket `name` keeping `history` revisions per key. */
static natsio_kv *new_bucket(natsio_js *js, const char *name, int history) {
    char cfg[160];
    snprintf(cfg, sizeof cfg, "{\"bucket\":\"%s\",\"history\":%d,\"storage\":\"memory\"}", name, history);
    return create_bucket(js, cfg);
}

/* Puts a text value and returns its revision (0, and a recorded failure,
 * if it cannot). */
static uint64_t put(natsio_kv *kv, const char *key, const char *value) {
    uint64_t rev = 0;
    natsio_status st = natsio_kv_put(kv, key, value, strlen(value), NULL, &rev);
    if (st != NATSIO_OK) {
        nt_fail_at(__FILE__, __LINE__, "put %s: %s (%s)", key, natsio_status_str(st), natsio_last_error());
        return 0;
    }
    return rev;
}

/* A watch of the `nkeys` patterns in `keys` (see KEYS and ALL_KEYS), freed
 * when the case ends; NULL and a recorded failure if it cannot start. */
static natsio_kv_watcher *watch(natsio_kv *kv, const char *const *keys, size_t nkeys,
                                const natsio_kv_watch_options *o) {
    natsio_kv_watcher *w = NULL;
    natsio_status st = natsio_kv_watch(kv, keys, nkeys, o, &w);
    if (st != NATSIO_OK) {
        nt_fail_at(__FILE__, __LINE__, "watch %s%s: %s (%s)", nkeys ? keys[0] : "(all)", nkeys > 1 ? ",..." : "",
                   natsio_status_str(st), natsio_last_error());
        return NULL;
    }
    nt_cleanup(kv_watcher_free_cb, w);
    return w;
}

static const char *op_name(natsio_kv_operation op) {
    switch (op) {
    case NATSIO_KV_PUT: return "PUT";
    case NATSIO_KV_DEL: return "DEL";
    case NATSIO_KV_PURGE: return "PURGE";
    case NATSIO_KV_INITIAL_DONE: return "INITIAL_DONE";
    }
    return "?";
}

/* The next event of `w` must be an entry of `key` with operation `op`,
 * revision `rev` (0: any) and value `value` (NULL: any; deletes and purges
 * have an empty one). The entry (freed when the case ends) goes to *out if
 * out is not NULL. False, with a failure recorded at `line`, otherwise. */
static bool expect_entry_at(int line, const natsio_kv_watcher *w, const char *key, natsio_kv_operation op,
                            uint64_t rev, const char *value, const natsio_kv_entry **out) {
    natsio_kv_entry *e = NULL;
    natsio_status st = natsio_kv_watcher_next(w, 5000, &e);
    if (st != NATSIO_OK || e == NULL) {
        nt_fail_at(__FILE__, line, "watcher_next: %s (%s), want %s %s rev %llu", natsio_status_str(st),
                   natsio_last_error(), op_name(op), key, (unsigned long long)rev);
        return false;
    }
    nt_cleanup(kv_entry_free_cb, e);
    const char *got_key = natsio_kv_entry_key(e);
    natsio_kv_operation got_op = natsio_kv_entry_operation(e);
    uint64_t got_rev = natsio_kv_entry_revision(e);
    size_t len = natsio_kv_entry_value_len(e);
    const char *val = natsio_kv_entry_value(e);
    bool ok = got_key != NULL && strcmp(got_key, key) == 0 && got_op == op && (rev == 0 || got_rev == rev);
    if (value != NULL) ok = ok && len == strlen(value) && val != NULL && memcmp(val, value, len) == 0;
    if (op != NATSIO_KV_PUT) ok = ok && len == 0;
    if (!ok) {
        nt_fail_at(__FILE__, line, "got %s %s rev %llu \"%.*s\", want %s %s rev %llu \"%s\"", op_name(got_op),
                   got_key ? got_key : "(null)", (unsigned long long)got_rev, (int)len, val ? val : "",
                   op_name(op), key, (unsigned long long)rev, value ? value : "*");
        return false;
    }
    if (out) *out = e;
    return true;
}
#define EXPECT_ENTRY(w, key, op, rev, value) \
    NT_CHECK(expect_entry_at(__LINE__, (w), (key), (op), (rev), (value), NULL))

/* The next event of `w` must be the end of the initial values: the marker
 * entry (NATSIO_OK, operation NATSIO_KV_INITIAL_DONE, empty key and value,
 * revision 0, the bucket's name). */
static bool expect_marker_at(int line, const natsio_kv_watcher *w, const char *bucket) {
    natsio_kv_entry *e = NULL;
    natsio_status st = natsio_kv_watcher_next(w, 5000, &e);
    if (st != NATSIO_OK || e == NULL) {
        nt_fail_at(__FILE__, line, "watcher_next: %s (%s); want the initial-values marker", natsio_status_str(st),
                   natsio_last_error());
        return false;
    }
    natsio_kv_operation op = natsio_kv_entry_operation(e);
    const char *key = natsio_kv_entry_key(e);
    const char *got_bucket = natsio_kv_entry_bucket(e);
    bool ok = op == NATSIO_KV_INITIAL_DONE && key != NULL && key[0] == '\0' && natsio_kv_entry_value_len(e) == 0 &&
              natsio_kv_entry_value(e) != NULL && natsio_kv_entry_value(e)[0] == '\0' &&
              natsio_kv_entry_revision(e) == 0 && got_bucket != NULL && strcmp(got_bucket, bucket) == 0;
    if (!ok)
        nt_fail_at(__FILE__, line, "got %s \"%s\" rev %llu (%zu value bytes) of bucket %s, want the marker of %s",
                   op_name(op), key ? key : "(null)", (unsigned long long)natsio_kv_entry_revision(e),
                   natsio_kv_entry_value_len(e), got_bucket ? got_bucket : "(null)", bucket);
    natsio_kv_entry_free(e);
    return ok;
}
#define EXPECT_MARKER(w, bucket) NT_CHECK(expect_marker_at(__LINE__, (w), (bucket)))

/* Nothing comes within ms: NATSIO_ERR_TIMEOUT, the entry untouched. */
static bool expect_idle_at(int line, const natsio_kv_watcher *w, int64_t ms) {
    natsio_kv_entry *e = SENTINEL;
    natsio_status st = natsio_kv_watcher_next(w, ms, &e);
    if (st == NATSIO_OK) {
        nt_fail_at(__FILE__, line, "got an entry %s rev %llu, want a timeout", natsio_kv_entry_key(e),
                   (unsigned long long)natsio_kv_entry_revision(e));
        natsio_kv_entry_free(e);
        return false;
    }
    if (st != NATSIO_ERR_TIMEOUT || e != SENTINEL) {
        nt_fail_at(__FILE__, line, "watcher_next: %s (%s); want NATSIO_ERR_TIMEOUT, entry untouched",
                   natsio_status_str(st), natsio_last_error());
        return false;
    }
    return true;
}
#define EXPECT_IDLE(w, ms) NT_CHECK(expect_idle_at(__LINE__, (w), (ms)))

/* Nothing else is pending in `w`: a put of `key` (a key `w` watches)
 * made now is its next event. A barrier, where a short idle wait would
 * miss a late extra event. */
static bool expect_quiet_until_put_at(int line, natsio_kv *kv, const natsio_kv_watcher *w, const char *key) {
    uint64_t rev = put(kv, key, "barrier");
    return rev != 0 && expect_entry_at(line, w, key, NATSIO_KV_PUT, rev, "barrier", NULL);
}
#define EXPECT_QUIET_UNTIL_PUT(kv, w, key) NT_CHECK(expect_quiet_until_put_at(__LINE__, (kv), (w), (key)))

/* The names of `stream`'s consumers into names[] (each up to 63 chars);
 * how many, or SIZE_MAX on error. */
static size_t consumer_names(natsio_js *js, const char *stream, char names[][64], size_t cap) {
    natsio_string_list *list = NULL;
    if (natsio_js_consumer_names(js, stream, &list) != NATSIO_OK) return SIZE_MAX;
    size_t n = natsio_string_list_count(list);
    for (size_t i = 0; i < n && i < cap; i++) snprintf(names[i], 64, "%s", natsio_string_list_get(list, i));
    natsio_string_list_free(list);
    return n;
}

typedef struct {
    natsio_js *js;
    const char *stream;
    size_t want;
} consumer_count_wait;

static bool consumer_count_is(void *arg) {
    consumer_count_wait *w = (consumer_count_wait *)arg;
    char names[8][64];
    return consumer_names(w->js, w->stream, names, 8) == w->want;
}

static bool wait_consumer_count(natsio_js *js, const char *stream, size_t want) {
    consumer_count_wait w = {js, stream, want};
    return nt_wait_until(consumer_count_is, &w, 3000);
}

static void test_watch_initial_values_then_done_then_changes(void) {
    natsio_js *js = connect_js();
    NT_CHECK(js != NULL);
    natsio_kv *kv = new_bucket(js, "WINIT", 5);
    NT_CHECK(kv != NULL);
    NT_CHECK_INT_EQ(put(kv, "a.1", "x1"), 1);
    NT_CHECK_INT_EQ(put(kv, "a.1", "x2"), 2);
    NT_CHECK_INT_EQ(put(kv, "b.1", "y"), 3);
    NT_CHECK_INT_EQ(put(kv, "gone", "soon"), 4);
    EXPECT_OK(natsio_kv_delete(kv, "gone", NULL, NULL)); /* rev 5 */

    int64_t started = nt_now_ms();
    natsio_kv_watcher *w = watch(kv, ALL_KEYS, NULL);
    NT_CHECK(w != NULL);
    /* The latest revision of each key, oldest first, delete markers too. */
    const natsio_kv_entry *e = NULL;
    NT_CHECK(expect_entry_at(__LINE__, w, "a.1", NATSIO_KV_PUT, 2, "x2", &e));
    NT_CHECK_STR_EQ(natsio_kv_entry_bucket(e), "WINIT");
    NT_CHECK(natsio_kv_entry_delta(e) > 0);
    struct timespec ts;
    timespec_get(&ts, TIME_UTC);
    int64_t now_ns = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
    int64_t age_ns = now_ns - natsio_kv_entry_created_ns(e);
    NT_CHECK_MSG(age_ns > -2000000000LL && age_ns < 60000000000LL, "created %lld ns ago", (long long)age_ns);
    NT_CHECK(expect_entry_at(__LINE__, w, "b.1", NATSIO_KV_PUT, 3, "y", &e));
    NT_CHECK(natsio_kv_entry_delta(e) > 0);
    NT_CHECK(expect_entry_at(__LINE__, w, "gone", NATSIO_KV_DEL, 5, NULL, &e));
    NT_CHECK_INT_EQ(natsio_kv_entry_delta(e), 0);
    EXPECT_MARKER(w, "WINIT");
    /* Well below the watch's 5 s heartbeat. */
    NT_CHECK_MSG(nt_now_ms() - started < 4000, "initial values took %lld ms", (long long)(nt_now_ms() - started));

    /* Changes as they happen, with their revisions (the first one right
     * after the marker: nothing came in between). */
    NT_CHECK_INT_EQ(put(kv, "b.1", "y2"), 6);
    EXPECT_ENTRY(w, "b.1", NATSIO_KV_PUT, 6, "y2");
    EXPECT_OK(natsio_kv_delete(kv, "a.1", NULL, NULL));
    EXPECT_ENTRY(w, "a.1", NATSIO_KV_DEL, 7, NULL);
    EXPECT_OK(natsio_kv_purge(kv, "b.1", NULL, NULL, NULL));
    EXPECT_ENTRY(w, "b.1", NATSIO_KV_PURGE, 8, NULL);
    NT_CHECK_INT_EQ(put(kv, "new.key", "fresh"), 9);
    NT_CHECK_INT_EQ(put(kv, "gone", "back"), 10);
    EXPECT_ENTRY(w, "new.key", NATSIO_KV_PUT, 9, "fresh");
    EXPECT_ENTRY(w, "gone", NATSIO_KV_PUT, 10, "back");
    /* Binary values come through whole. */
    uint64_t rev = 0;
    EXPECT_OK(natsio_kv_put(kv, "bin", "a\0b", 3, NULL, &rev));
    NT_CHECK(expect_entry_at(__LINE__, w, "bin", NATSIO_KV_PUT, rev, NULL, &e));
    NT_CHECK_MEM_EQ(natsio_kv_entry_value(e), natsio_kv_entry_value_len(e), "a\0b", 3);
    NT_CHECK_INT_EQ(natsio_kv_entry_delta(e), 0);
    EXPECT_QUIET_UNTIL_PUT(kv, w, "last");
    EXPECT_OK(natsio_js_kv_delete(js, "WINIT"));
}

static void test_watch_empty_bucket_and_updates_only(void) {
    natsio_js *js = connect_js();
    NT_CHECK(js != NULL);
    natsio_kv *empty = new_bucket(js, "WEMPTY", 1);
    NT_CHECK(empty != NULL);
    natsio_kv_watcher *w = watch(empty, ALL_KEYS, NULL);
    NT_CHECK(w != NULL);
    EXPECT_MARKER(w, "WEMPTY");
    /* The marker comes once: the next event is this put. */
    uint64_t r = put(empty, "k", "v");
    NT_CHECK(r != 0);
    EXPECT_ENTRY(w, "k", NATSIO_KV_PUT, r, "v");

    natsio_kv *kv = new_bucket(js, "WUPD", 3);
    NT_CHECK(kv != NULL);
    NT_CHECK(put(kv, "a", "old") != 0);
    NT_CHECK(put(kv, "b", "old") != 0);
    natsio_kv_watch_options o = watch_options();
    o.updates_only = true;
    natsio_kv_watcher *u = watch(kv, ALL_KEYS, &o);
    NT_CHECK(u != NULL);
    EXPECT_MARKER(u, "WUPD");
    /* No old values: the next event is this put. */
    uint64_t ra = put(kv, "a", "new");
    NT_CHECK(ra != 0);
    EXPECT_ENTRY(u, "a", NATSIO_KV_PUT, ra, "new");
    EXPECT_OK(natsio_kv_delete(kv, "b", NULL, NULL));
    EXPECT_ENTRY(u, "b", NATSIO_KV_DEL, ra + 1, NULL);
    EXPECT_QUIET_UNTIL_PUT(kv, u, "c");
    EXPECT_OK(natsio_js_kv_delete(js, "WEMPTY"));
    EXPECT_OK(natsio_js_kv_delete(js, "WUPD"));
}

static void test_watch_resume_from_revision(void) {
    natsio_js *js = connect_js();
    NT_CHECK(js != NULL);
    natsio_kv *kv = new_bucket(js, "WRES", 10);
    NT_CHECK(kv != NULL);
    NT_CHECK(put(kv, "a", "a1") == 1);
    NT_CHECK(put(kv, "b", "b1") == 2);
    NT_CHECK(put(kv, "a", "a2") == 3);
    EXPECT_OK(natsio_kv_delete(kv, "b", NULL, NULL)); /* 4 */
    NT_CHECK(put(kv, "c", "c1") == 5);

    /* Resumed at 3: exactly the revisions from 3 on, markers included,
     * then the end of the initial values, then changes. */
    natsio_kv_watch_options o = watch_options();
    o.resume_from_revision = 3;
    natsio_kv_watcher *w = watch(kv, ALL_KEYS, &o);
    NT_CHECK(w != NULL);
    EXPECT_ENTRY(w, "a", NATSIO_KV_PUT, 3, "a2");
    EXPECT_ENTRY(w, "b", NATSIO_KV_DEL, 4, NULL);
    EXPECT_ENTRY(w, "c", NATSIO_KV_PUT, 5, "c1");
    EXPECT_MARKER(w, "WRES");
    NT_CHECK(put(kv, "a", "a3") == 6);
    EXPECT_ENTRY(w, "a", NATSIO_KV_PUT, 6, "a3");
    EXPECT_QUIET_UNTIL_PUT(kv, w, "d");

    /* With a key filter and ignore_deletes; include_history changes nothing
     * (a resumed watch delivers every revision from its start anyway). */
    natsio_kv_watch_options f = watch_options();
    f.resume_from_revision = 2;
    f.ignore_deletes = true;
    f.include_history = true;
    natsio_kv_watcher *fw = watch(kv, KEYS("a", "b"), &f);
    NT_CHECK(fw != NULL);
    EXPECT_ENTRY(fw, "b", NATSIO_KV_PUT, 2, "b1");
    EXPECT_ENTRY(fw, "a", NATSIO_KV_PUT, 3, "a2");
    EXPECT_ENTRY(fw, "a", NATSIO_KV_PUT, 6, "a3");
    EXPECT_MARKER(fw, "WRES");
    EXPECT_QUIET_UNTIL_PUT(kv, fw, "b");

    /* Resumed at the next revision: the marker at once, then changes. */
    uint64_t latest = put(kv, "c", "c2");
    NT_CHECK(latest != 0);
    natsio_kv_watch_options next = watch_options();
    next.resume_from_revision = latest + 1;
    natsio_kv_watcher *nw = watch(kv, ALL_KEYS, &next);
    NT_CHECK(nw != NULL);
    EXPECT_MARKER(nw, "WRES");
    EXPECT_QUIET_UNTIL_PUT(kv, nw, "e");
    /* Resumed further on: the marker at once, and nothing before that
     * revision comes. */
    natsio_kv_watch_options far = watch_options();
    far.resume_from_revision = latest + 4;
    natsio_kv_watcher *fw2 = watch(kv, ALL_KEYS, &far);
    NT_CHECK(fw2 != NULL);
    EXPECT_MARKER(fw2, "WRES");
    NT_CHECK(put(kv, "x", "skipped") == latest + 2);
    NT_CHECK(put(kv, "x", "skipped") == latest + 3);
    NT_CHECK(put(kv, "x", "seen") == latest + 4);
    EXPECT_ENTRY(fw2, "x", NATSIO_KV_PUT, latest + 4, "seen");

    /* The token form takes the option too. */
    natsio_kv_watch_options last = watch_options();
    uint64_t r_e = 0;
    EXPECT_OK(natsio_kv_put(kv, "e", "e2", 2, NULL, &r_e));
    last.resume_from_revision = r_e;
    natsio_token *t = NULL;
    EXPECT_OK(natsio_kv_watch_async(kv, ALL_KEYS, &last, &t));
    nt_cleanup(token_free_cb, t);
    NT_CHECK_INT_EQ(token_outcome(t, 10000), NATSIO_OK);
    natsio_kv_watcher *tw = NULL;
    EXPECT_OK(natsio_token_kv_watcher(t, &tw));
    nt_cleanup(kv_watcher_free_cb, tw);
    EXPECT_ENTRY(tw, "e", NATSIO_KV_PUT, r_e, "e2");
    EXPECT_MARKER(tw, "WRES");

    /* A version 1 struct (a program built before resume_from_revision)
     * is still accepted: whatever follows it is not read, so the watch
     * is not resumed (latest values: a, b, c, d, e). */
    natsio_kv_watch_options v1 = watch_options();
    v1.version = 1;
    v1.resume_from_revision = 5;
    natsio_kv_watcher *w1 = watch(kv, KEYS("a"), &v1);
    NT_CHECK(w1 != NULL);
    EXPECT_ENTRY(w1, "a", NATSIO_KV_PUT, 6, "a3");
    EXPECT_MARKER(w1, "WRES");
    EXPECT_OK(natsio_js_kv_delete(js, "WRES"));
}

static void test_watch_history_ignore_deletes_and_meta_only(void) {
    natsio_js *js = connect_js();
    NT_CHECK(js != NULL);
    natsio_kv *kv = new_bucket(js, "WHIST", 10);
    NT_CHECK(kv != NULL);
    NT_CHECK(put(kv, "a.1", "v1") == 1);
    NT_CHECK(put(kv, "a.1", "v2") == 2);
    NT_CHECK(put(kv, "b", "hello") == 3);
    NT_CHECK(put(kv, "a.1", "v3") == 4);
    EXPECT_OK(natsio_kv_delete(kv, "a.1", NULL, NULL)); /* 5 */
    NT_CHECK(put(kv, "c", "world") == 6);
    NT_CHECK(put(kv, "d", "doomed") == 7);
    EXPECT_OK(natsio_kv_purge(kv, "d", NULL, NULL, NULL)); /* 8 */

    /* Every kept revision, in order. */
    natsio_kv_watch_options o = watch_options();
    o.include_history = true;
    natsio_kv_watcher *h = watch(kv, ALL_KEYS, &o);
    NT_CHECK(h != NULL);
    EXPECT_ENTRY(h, "a.1", NATSIO_KV_PUT, 1, "v1");
    EXPECT_ENTRY(h, "a.1", NATSIO_KV_PUT, 2, "v2");
    EXPECT_ENTRY(h, "b", NATSIO_KV_PUT, 3, "hello");
    EXPECT_ENTRY(h, "a.1", NATSIO_KV_PUT, 4, "v3");
    EXPECT_ENTRY(h, "a.1", NATSIO_KV_DEL, 5, NULL);
    EXPECT_ENTRY(h, "c", NATSIO_KV_PUT, 6, "world");
    EXPECT_ENTRY(h, "d", NATSIO_KV_PURGE, 8, NULL); /* the purge replaced rev 7 */
    EXPECT_MARKER(h, "WHIST");
    /* History of one pattern only. */
    natsio_kv_watcher *ha = watch(kv, KEYS("a.*"), &o);
    NT_CHECK(ha != NULL);
    EXPECT_ENTRY(ha, "a.1", NATSIO_KV_PUT, 1, "v1");
    EXPECT_ENTRY(ha, "a.1", NATSIO_KV_PUT, 2, "v2");
    EXPECT_ENTRY(ha, "a.1", NATSIO_KV_PUT, 4, "v3");
    EXPECT_ENTRY(ha, "a.1", NATSIO_KV_DEL, 5, NULL);
    EXPECT_MARKER(ha, "WHIST");

    /* Without delete and purge markers: the last initial revision is a
     * purge, and the initial values still end. */
    o = watch_options();
    o.ignore_deletes = true;
    natsio_kv_watcher *nd = watch(kv, ALL_KEYS, &o);
    NT_CHECK(nd != NULL);
    EXPECT_ENTRY(nd, "b", NATSIO_KV_PUT, 3, "hello");
    EXPECT_ENTRY(nd, "c", NATSIO_KV_PUT, 6, "world");
    EXPECT_MARKER(nd, "WHIST");
    EXPECT_OK(natsio_kv_delete(kv, "b", NULL, NULL));   /* 9 */
    EXPECT_OK(natsio_kv_purge(kv, "c", NULL, NULL, NULL));    /* 10 */
    NT_CHECK(put(kv, "e", "kept") == 11);
    EXPECT_ENTRY(nd, "e", NATSIO_KV_PUT, 11, "kept");
    /* The history watch saw all three. */
    EXPECT_ENTRY(h, "b", NATSIO_KV_DEL, 9, NULL);
    EXPECT_ENTRY(h, "c", NATSIO_KV_PURGE, 10, NULL);
    EXPECT_ENTRY(h, "e", NATSIO_KV_PUT, 11, "kept");

    /* Keys, revisions and operations, without values. */
    o = watch_options();
    o.meta_only = true;
    natsio_kv_watcher *meta = watch(kv, ALL_KEYS, &o);
    NT_CHECK(meta != NULL);
    EXPECT_ENTRY(meta, "a.1", NATSIO_KV_DEL, 5, NULL);
    EXPECT_ENTRY(meta, "d", NATSIO_KV_PURGE, 8, NULL);
    EXPECT_ENTRY(meta, "b", NATSIO_KV_DEL, 9, NULL);
    EXPECT_ENTRY(meta, "c", NATSIO_KV_PURGE, 10, NULL);
    EXPECT_ENTRY(meta, "e", NATSIO_KV_PUT, 11, ""); /* "kept" left out */
    EXPECT_MARKER(meta, "WHIST");
    NT_CHECK(put(kv, "f", "a longer value") == 12);
    const natsio_kv_entry *fe = NULL;
    NT_CHECK(expect_entry_at(__LINE__, meta, "f", NATSIO_KV_PUT, 12, "", &fe));
    NT_CHECK_INT_EQ(natsio_kv_entry_value_len(fe), 0);
    NT_CHECK_STR_EQ(natsio_kv_entry_bucket(fe), "WHIST");
    /* Nothing came to the watch without deletes after "e" but "f". */
    EXPECT_ENTRY(nd, "f", NATSIO_KV_PUT, 12, "a longer value");
    EXPECT_OK(natsio_js_kv_delete(js, "WHIST"));
}

/* The keys of the initial values of a watch of the `n` patterns, comma-
 * separated in delivery order, into buf (up to the marker); false (and a
 * recorded failure) on error. */
static bool initial_keys(natsio_kv *kv, const char *const *patterns, size_t n, char *buf, size_t cap) {
    natsio_kv_watcher *w = NULL;
    const char *first = n ? patterns[0] : "(all)";
    natsio_status st = natsio_kv_watch(kv, patterns, n, NULL, &w);
    if (st != NATSIO_OK) {
        nt_fail_at(__FILE__, __LINE__, "watch \"%s\"...: %s (%s)", first, natsio_status_str(st), natsio_last_error());
        return false;
    }
    buf[0] = '\0';
    bool ok = false;
    for (int i = 0; i < 50; i++) {
        natsio_kv_entry *e = NULL;
        st = natsio_kv_watcher_next(w, 5000, &e);
        if (st != NATSIO_OK) {
            nt_fail_at(__FILE__, __LINE__, "watch \"%s\"...: next: %s (%s)", first, natsio_status_str(st),
                       natsio_last_error());
            break;
        }
        if (natsio_kv_entry_operation(e) == NATSIO_KV_INITIAL_DONE) {
            natsio_kv_entry_free(e);
            ok = true;
            break;
        }
        if (buf[0] != '\0') strncat(buf, ",", cap - strlen(buf) - 1);
        strncat(buf, natsio_kv_entry_key(e), cap - strlen(buf) - 1);
        natsio_kv_entry_free(e);
    }
    natsio_kv_watcher_free(w);
    return ok;
}

static void test_watch_key_patterns(void) {
    natsio_js *js = connect_js();
    NT_CHECK(js != NULL);
    natsio_kv *kv = new_bucket(js, "WPAT", 1);
    NT_CHECK(kv != NULL);
    const char *keys[] = {"a.1", "a.2", "a.b.c", "b.1", "b.2.3", "c", "cc"};
    for (size_t i = 0; i < NT_COUNT(keys); i++) NT_CHECK(put(kv, keys[i], "v") != 0);

    static const struct {
        const char *patterns[3];
        size_t n;
        const char *want;
    } cases[] = {
        {{NULL}, 0, "a.1,a.2,a.b.c,b.1,b.2.3,c,cc"},
        {{">"}, 1, "a.1,a.2,a.b.c,b.1,b.2.3,c,cc"},
        {{"a.*"}, 1, "a.1,a.2"},
        {{"a.>"}, 1, "a.1,a.2,a.b.c"},
        {{"*.1"}, 1, "a.1,b.1"},
        {{"*"}, 1, "c,cc"},
        {{"*.*.*"}, 1, "a.b.c,b.2.3"},
        {{"c"}, 1, "c"},
        {{"b.>", "c"}, 2, "b.1,b.2.3,c"},
        {{"cc", "a.2", "b.2.3"}, 3, "a.2,b.2.3,cc"},
        {{"none"}, 1, ""},
        {{"none.>", "x.*"}, 2, ""},
    };
    for (size_t i = 0; i < NT_COUNT(cases); i++) {
        char got[256];
        NT_CHECK(initial_keys(kv, cases[i].n ? cases[i].patterns : NULL, cases[i].n, got, sizeof got));
        NT_CHECK_MSG(strcmp(got, cases[i].want) == 0, "watch \"%s\" (%zu patterns): keys \"%s\", want \"%s\"",
                     cases[i].n ? cases[i].patterns[0] : "(all)", cases[i].n, got, cases[i].want);
    }

    /* Changes are filtered the same way. */
    natsio_kv_watcher *w = watch(kv, KEYS("a.*", "c"), NULL);
    NT_CHECK(w != NULL);
    EXPECT_ENTRY(w, "a.1", NATSIO_KV_PUT, 1, "v");
    EXPECT_ENTRY(w, "a.2", NATSIO_KV_PUT, 2, "v");
    EXPECT_ENTRY(w, "c", NATSIO_KV_PUT, 6, "v");
    EXPECT_MARKER(w, "WPAT");
    NT_CHECK(put(kv, "a.b.c", "no") != 0);
    NT_CHECK(put(kv, "b.1", "no") != 0);
    NT_CHECK(put(kv, "cc", "no") != 0);
    NT_CHECK(put(kv, "a", "no") != 0);
    uint64_t r = put(kv, "a.3", "yes");
    NT_CHECK(r != 0);
    EXPECT_ENTRY(w, "a.3", NATSIO_KV_PUT, r, "yes");
    EXPECT_OK(natsio_kv_delete(kv, "c", NULL, NULL));
    EXPECT_ENTRY(w, "c", NATSIO_KV_DEL, r + 1, NULL);
    EXPECT_QUIET_UNTIL_PUT(kv, w, "a.4");

    /* Bad patterns, alone or among good ones: refused before anything is
     * created. (A comma is no separator: it is not allowed in a key.) */
    const char *bad[] = {"", "a..b", "a.>.b", "*x", "a*", "x>", ".a", "a.", "a b", "a,", ",a", "a,,b", ">,a.>.b"};
    for (size_t i = 0; i < NT_COUNT(bad); i++) {
        for (int among = 0; among < 2; among++) {
            const char *list[3] = {"a.*", bad[i], ">"};
            natsio_kv_watcher *out = SENTINEL;
            plant_error_marker();
            natsio_status st = among ? natsio_kv_watch(kv, list, 3, NULL, &out) : natsio_kv_watch(kv, &bad[i], 1, NULL,
                                                                                                  &out);
            NT_CHECK_MSG(st == NATSIO_ERR_INVALID_KEY, "watch \"%s\"%s: %s (%s)", bad[i], among ? " among others" : "",
                         natsio_status_str(st), natsio_last_error());
            NT_CHECK_MSG(strstr(natsio_last_error(), ERROR_MARKER) == NULL && natsio_last_error()[0] != '\0',
                         "watch \"%s\": no detail", bad[i]);
            NT_CHECK(out == SENTINEL);
        }
    }
    natsio_kv_watch_options o = watch_options();
    o.updates_only = true;
    natsio_kv_watcher *out = SENTINEL;
    EXPECT_FAILS(NATSIO_ERR_INVALID_KEY, natsio_kv_watch(kv, KEYS("a..b"), &o, &out));
    NT_CHECK(out == SENTINEL);
    /* Only the running watch's consumer is left (the others were freed). */
    char names[8][64];
    NT_CHECK_MSG(wait_consumer_count(js, "KV_WPAT", 1), "consumers: %zu", consumer_names(js, "KV_WPAT", names, 8));
    EXPECT_OK(natsio_js_kv_delete(js, "WPAT"));
}

static void test_watch_timeout_stop_and_free(void) {
    natsio_js *js = connect_js();
    NT_CHECK(js != NULL);
    natsio_kv *kv = new_bucket(js, "WSTOP", 1);
    NT_CHECK(kv != NULL);
    NT_CHECK(put(kv, "k", "v") == 1);
    natsio_kv_watcher *w = watch(kv, ALL_KEYS, NULL);
    NT_CHECK(w != NULL);
    EXPECT_ENTRY(w, "k", NATSIO_KV_PUT, 1, "v");
    EXPECT_MARKER(w, "WSTOP");

    int64_t t0 = nt_now_ms();
    EXPECT_IDLE(w, 300);
    int64_t took = nt_now_ms() - t0;
    NT_CHECK_MSG(took >= 280 && took < 5000, "a 300 ms next returned after %lld ms", (long long)took);
    t0 = nt_now_ms();
    EXPECT_IDLE(w, NATSIO_NO_WAIT);
    NT_CHECK_MSG(nt_now_ms() - t0 < 2000, "a no-wait next took %lld ms", (long long)(nt_now_ms() - t0));
    /* Still watching after the timeouts. */
    NT_CHECK(put(kv, "k", "v2") == 2);
    EXPECT_ENTRY(w, "k", NATSIO_KV_PUT, 2, "v2");

    /* Stopped from another thread while next waits without a limit: the
     * watch ended without error, NATSIO_DONE with the entry set to NULL. */
    delayed_stop d = {NULL, w, 200, NATSIO_ERR_INTERNAL, 0};
    pthread_t t;
    NT_CHECK(pthread_create(&t, NULL, stop_thread, &d) == 0);
    natsio_kv_entry *e = SENTINEL;
    natsio_status st = natsio_kv_watcher_next(w, NATSIO_WAIT_FOREVER, &e);
    int64_t returned_at = nt_now_ms();
    pthread_join(t, NULL);
    NT_CHECK_INT_EQ(d.status, NATSIO_OK);
    NT_CHECK_INT_EQ(st, NATSIO_DONE);
    NT_CHECK(e == NULL);
    /* Not before the stop (whenever the thread got to it), and soon after. */
    NT_CHECK_MSG(returned_at >= d.stopped_at && returned_at - d.stopped_at < 3000,
                 "the blocked next returned %lld ms after the stop", (long long)(returned_at - d.stopped_at));
    /* For good, even with changes to report; stop again is harmless. */
    NT_CHECK(put(kv, "k", "v3") == 3);
    e = SENTINEL;
    NT_CHECK_INT_EQ(natsio_kv_watcher_next(w, 500, &e), NATSIO_DONE);
    NT_CHECK(e == NULL);
    EXPECT_OK(natsio_kv_watcher_stop(w));
    e = SENTINEL;
    NT_CHECK_INT_EQ(natsio_kv_watcher_next(w, NATSIO_TIMEOUT_DEFAULT, &e), NATSIO_DONE);
    NT_CHECK(e == NULL);
    /* The stop removed the watch's consumer from the server. */
    char names[8][64];
    NT_CHECK_MSG(wait_consumer_count(js, "KV_WSTOP", 0), "consumers left after the stop: %zu",
                 consumer_names(js, "KV_WSTOP", names, 8));

    /* Free without stop, with and without reading; stop then free. Each
     * removes the watch's consumer from the server. */
    natsio_kv_watcher *a = NULL, *b = NULL, *c = NULL;
    EXPECT_OK(natsio_kv_watch(kv, ALL_KEYS, NULL, &a));
    EXPECT_OK(natsio_kv_watch(kv, KEYS("k"), NULL, &b));
    EXPECT_OK(natsio_kv_watch(kv, ALL_KEYS, NULL, &c));
    natsio_kv_entry *ae = NULL;
    st = natsio_kv_watcher_next(a, 5000, &ae);
    natsio_kv_entry_free(ae);
    NT_CHECK_MSG(st == NATSIO_OK, "next: %s", natsio_status_str(st));
    NT_CHECK_INT_EQ(consumer_names(js, "KV_WSTOP", names, 8), 3);
    natsio_kv_watcher_free(a);
    natsio_kv_watcher_free(b);
    EXPECT_OK(natsio_kv_watcher_stop(c));
    natsio_kv_watcher_free(c);
    NT_CHECK_MSG(wait_consumer_count(js, "KV_WSTOP", 0), "consumers left: %zu",
                 consumer_names(js, "KV_WSTOP", names, 8));
    EXPECT_OK(natsio_js_kv_delete(js, "WSTOP"));
}

/* Deletes every consumer of `stream`; how many, or SIZE_MAX on error. */
static size_t delete_consumers(natsio_js *js, const char *stream, char names[][64], size_t cap) {
    size_t n = consumer_names(js, stream, names, cap);
    if (n == SIZE_MAX || n > cap) return SIZE_MAX;
    for (size_t i = 0; i < n; i++)
        if (natsio_js_consumer_delete(js, stream, names[i]) != NATSIO_OK) return SIZE_MAX;
    return n;
}

static void test_watch_recovers_when_its_consumer_is_deleted(void) {
    natsio_js *js = connect_js();
    NT_CHECK(js != NULL);
    natsio_kv *kv = new_bucket(js, "WREC", 5);
    NT_CHECK(kv != NULL);
    NT_CHECK(put(kv, "a", "1") == 1);
    NT_CHECK(put(kv, "b", "2") == 2);
    natsio_kv_watcher *w = watch(kv, ALL_KEYS, NULL);
    NT_CHECK(w != NULL);
    EXPECT_ENTRY(w, "a", NATSIO_KV_PUT, 1, "1");
    EXPECT_ENTRY(w, "b", NATSIO_KV_PUT, 2, "2");
    EXPECT_MARKER(w, "WREC");
    NT_CHECK(put(kv, "c", "3") == 3);
    EXPECT_ENTRY(w, "c", NATSIO_KV_PUT, 3, "3");

    /* Its consumer vanishes (as after a server restart). */
    char before[8][64], after[8][64];
    NT_CHECK_INT_EQ(delete_consumers(js, "KV_WREC", before, 8), 1);
    NT_CHECK(put(kv, "d", "4") == 4);
    EXPECT_ENTRY(w, "d", NATSIO_KV_PUT, 4, "4");
    EXPECT_QUIET_UNTIL_PUT(kv, w, "z"); /* nothing repeated: rev 5 */
    NT_CHECK_INT_EQ(consumer_names(js, "KV_WREC", after, 8), 1);
    NT_CHECK_MSG(strcmp(before[0], after[0]) != 0, "the consumer %s was not recreated", after[0]);

    /* Again, with several changes while it is gone, and none before next. */
    NT_CHECK_INT_EQ(delete_consumers(js, "KV_WREC", before, 8), 1);
    NT_CHECK(put(kv, "a", "6") == 6);
    EXPECT_OK(natsio_kv_delete(kv, "b", NULL, NULL)); /* 7 */
    NT_CHECK(put(kv, "e", "8") == 8);
    EXPECT_ENTRY(w, "a", NATSIO_KV_PUT, 6, "6");
    EXPECT_ENTRY(w, "b", NATSIO_KV_DEL, 7, NULL);
    EXPECT_ENTRY(w, "e", NATSIO_KV_PUT, 8, "8");
    EXPECT_QUIET_UNTIL_PUT(kv, w, "z");

    EXPECT_OK(natsio_js_kv_delete(js, "WREC"));
}

static void test_watch_of_updates_only_recovers_without_losing_a_change(void) {
    natsio_js *js = connect_js();
    NT_CHECK(js != NULL);
    natsio_kv *kv = new_bucket(js, "WRECU", 5);
    NT_CHECK(kv != NULL);
    NT_CHECK(put(kv, "a", "1") == 1);
    natsio_kv_watch_options o = watch_options();
    o.updates_only = true;
    natsio_kv_watcher *all = watch(kv, ALL_KEYS, &o);
    NT_CHECK(all != NULL);
    EXPECT_MARKER(all, "WRECU");
    natsio_kv_watcher *f_only = watch(kv, KEYS("f"), &o);
    NT_CHECK(f_only != NULL);
    EXPECT_MARKER(f_only, "WRECU");
    NT_CHECK(put(kv, "x", "2") == 2);
    EXPECT_ENTRY(all, "x", NATSIO_KV_PUT, 2, "2");

    /* Both consumers vanish; a change comes while they are gone. */
    char names[8][64];
    NT_CHECK_INT_EQ(delete_consumers(js, "KV_WRECU", names, 8), 2);
    NT_CHECK(put(kv, "f", "3") == 3);
    /* The watch that had seen a change goes on after it. */
    EXPECT_ENTRY(all, "f", NATSIO_KV_PUT, 3, "3");
    /* So must the one that had seen none: the change came after it
     * started, so it is an update it has to report. */
    EXPECT_ENTRY(f_only, "f", NATSIO_KV_PUT, 3, "3");
    /* And nothing else: the next event of both is a later put. */
    NT_CHECK(put(kv, "f", "4") == 4);
    EXPECT_ENTRY(all, "f", NATSIO_KV_PUT, 4, "4");
    EXPECT_ENTRY(f_only, "f", NATSIO_KV_PUT, 4, "4");
    EXPECT_OK(natsio_js_kv_delete(js, "WRECU"));
}

static void test_watch_and_consume_after_client_close(void) {
    natsio_client *c = NULL;
    EXPECT_OK(natsio_client_connect_url(nt_server_url(g_server), &c));
    bool freed = false;
    natsio_js *js = NULL;
    natsio_kv *kv = NULL;
    natsio_kv_watcher *w = NULL;
    natsio_js_messages *it = NULL;
    natsio_msg *m = NULL;
    natsio_status st = natsio_client_jetstream(c, NULL, &js);
    if (st == NATSIO_OK)
        st = natsio_js_kv_create(js, "{\"bucket\":\"WCLOSED\",\"storage\":\"memory\"}", NATSIO_CREATE, &kv);
    if (st == NATSIO_OK) st = natsio_kv_put(kv, "k", "v", 1, NULL, NULL);
    if (st == NATSIO_OK) st = natsio_kv_watch(kv, ALL_KEYS, NULL, &w);
    if (st == NATSIO_OK)
        st = natsio_js_stream_create(js, "{\"name\":\"WCLOSED\",\"subjects\":[\"wclosed.>\"],\"storage\":\"memory\"}",
                                     NATSIO_CREATE,
                                     NULL);
    if (st == NATSIO_OK)
        st = natsio_js_consumer_create(js, "WCLOSED", "{\"durable_name\":\"d\",\"ack_policy\":\"explicit\"}",
                                       NATSIO_CREATE, NULL);
    if (st == NATSIO_OK) st = natsio_js_publish(js, "wclosed.a", "c0", 2, NULL, NULL);
    if (st == NATSIO_OK) st = natsio_js_consume(js, "WCLOSED", "d", NULL, &it);
    if (st == NATSIO_OK) st = natsio_js_messages_next(it, 3000, &m);
    /* Freed at the end of the case, after the client (reverse order). */
    nt_cleanup(js_free_cb, js);
    nt_cleanup(kv_free_cb, kv);
    nt_cleanup(kv_watcher_free_cb, w);
    nt_cleanup(js_messages_free_cb, it);
    nt_cleanup(msg_free_cb, m);
    if (st != NATSIO_OK) natsio_client_free(c);
    NT_CHECK_MSG(st == NATSIO_OK, "setup: %s (%s)", natsio_status_str(st), natsio_last_error());
    natsio_kv_entry *e = NULL;
    EXPECT_OK(natsio_kv_watcher_next(w, 3000, &e));
    natsio_kv_entry_free(e);
    EXPECT_MARKER(w, "WCLOSED");

    EXPECT_OK(natsio_client_close(c));
    /* Every call fails at once (no crash, no hang), outputs untouched. */
    natsio_status next_status[2][4];
    for (int round = 0; round < 2; round++) {
        natsio_kv_entry *ue = SENTINEL;
        natsio_msg *um = SENTINEL;
        natsio_kv_watcher *uw = SENTINEL;
        natsio_js_messages *uit = SENTINEL;
        int64_t t0 = nt_now_ms();
        EXPECT_FAILS(NATSIO_ERR_CONNECTION_CLOSED, natsio_kv_watch(kv, ALL_KEYS, NULL, &uw));
        EXPECT_FAILS(NATSIO_ERR_CONNECTION_CLOSED, natsio_js_consume(js, "WCLOSED", "d", NULL, &uit));
        EXPECT_FAILS(NATSIO_ERR_CONNECTION_CLOSED, natsio_msg_ack(m));
        next_status[round][0] = natsio_kv_watcher_next(w, 5000, &ue);
        next_status[round][1] = natsio_kv_watcher_next(w, NATSIO_WAIT_FOREVER, &ue);
        next_status[round][2] = natsio_js_messages_next(it, 5000, &um);
        next_status[round][3] = natsio_js_messages_next(it, NATSIO_WAIT_FOREVER, &um);
        for (int i = 0; i < 4; i++) {
            natsio_status s = next_status[round][i];
            NT_CHECK_MSG(s != NATSIO_OK && s != NATSIO_DONE && s != NATSIO_ERR_TIMEOUT, "round %d, next %d: %s",
                         round, i, natsio_status_str(s));
        }
        NT_CHECK(ue == SENTINEL && um == SENTINEL && uw == SENTINEL && uit == SENTINEL);
        /* At once: long before the 5 s the bounded nexts allow. */
        NT_CHECK_MSG(nt_now_ms() - t0 < 2500, "calls on a closed client took %lld ms", (long long)(nt_now_ms() - t0));
        if (!freed) {
            /* The handles do not keep the freed client alive either. */
            natsio_client_free(c);
            freed = true;
        }
    }
    /* A stop after the end is fine and changes nothing. */
    EXPECT_OK(natsio_kv_watcher_stop(w));
    EXPECT_OK(natsio_js_messages_stop(it));
    natsio_kv_entry *late_e = SENTINEL;
    natsio_msg *late_m = SENTINEL;
    EXPECT_FAILS(NATSIO_ERR_CONNECTION_CLOSED, natsio_kv_watcher_next(w, NATSIO_NO_WAIT, &late_e));
    EXPECT_FAILS(NATSIO_ERR_CONNECTION_CLOSED, natsio_js_messages_next(it, NATSIO_NO_WAIT, &late_m));
    NT_CHECK(late_e == SENTINEL && late_m == SENTINEL);

    /* The bucket and the consumer are still there for another client. */
    natsio_js *other = connect_js();
    NT_CHECK(other != NULL);
    NT_CHECK_INT_EQ(consumer_int(other, "WCLOSED", "d", "num_ack_pending"), 1);
    EXPECT_OK(natsio_js_stream_delete(other, "WCLOSED"));
    EXPECT_OK(natsio_js_kv_delete(other, "WCLOSED"));

    /* As documented, the nexts say the connection is closed (the error
     * that ended them; a stop would have made it NATSIO_DONE). */
    for (int round = 0; round < 2; round++)
        for (int i = 0; i < 4; i++)
            NT_CHECK_MSG(next_status[round][i] == NATSIO_ERR_CONNECTION_CLOSED,
                         "%s next (%s) after the client was %s: %s, want connection closed",
                         i < 2 ? "natsio_kv_watcher" : "natsio_js_messages", i % 2 ? "forever" : "5000 ms",
                         round ? "freed" : "closed", natsio_status_str(next_status[round][i]));
}

/* A watch whose bucket is deleted cannot recover: it ends with
 * NATSIO_ERR_BUCKET_NOT_FOUND, not a timeout, and later calls return that
 * error at once. Usually the server's "409 Consumer Deleted" ends it at
 * once; the server may lose that notice (it queues it on the stream's send
 * loop, then stops the loop), and then two missed 5 s heartbeats end it,
 * 5 to 10 s after the deletion: the first wait covers both. */
static void test_watch_of_a_deleted_bucket_ends_in_time(void) {
    natsio_js *js = connect_js();
    NT_CHECK(js != NULL);
    natsio_kv *kv = new_bucket(js, "WGONE", 1);
    NT_CHECK(kv != NULL);
    NT_CHECK(put(kv, "k", "v") == 1);
    natsio_kv_watcher *w = watch(kv, ALL_KEYS, NULL);
    NT_CHECK(w != NULL);
    EXPECT_ENTRY(w, "k", NATSIO_KV_PUT, 1, "v");
    EXPECT_MARKER(w, "WGONE");
    EXPECT_OK(natsio_js_kv_delete(js, "WGONE"));

    natsio_kv_entry *e = SENTINEL;
    plant_error_marker();
    natsio_status st = natsio_kv_watcher_next(w, 15000, &e);
    NT_CHECK_MSG(st == NATSIO_ERR_BUCKET_NOT_FOUND, "next on a deleted bucket: %s (%s)", natsio_status_str(st),
                 natsio_last_error());
    NT_CHECK(strstr(natsio_last_error(), ERROR_MARKER) == NULL);
    NT_CHECK(e == SENTINEL);
    int64_t t0 = nt_now_ms();
    EXPECT_FAILS(NATSIO_ERR_BUCKET_NOT_FOUND, natsio_kv_watcher_next(w, 5000, &e));
    EXPECT_FAILS(NATSIO_ERR_BUCKET_NOT_FOUND, natsio_kv_watcher_next(w, NATSIO_WAIT_FOREVER, &e));
    NT_CHECK(e == SENTINEL);
    NT_CHECK_MSG(nt_now_ms() - t0 < 2500, "the next after the end took %lld ms", (long long)(nt_now_ms() - t0));
    natsio_kv_watcher *out = SENTINEL;
    EXPECT_FAILS(NATSIO_ERR_BUCKET_NOT_FOUND, natsio_kv_watch(kv, ALL_KEYS, NULL, &out));
    NT_CHECK(out == SENTINEL);
}

/* ---- bad input ------------------------------------------------------------------ */

static void test_bad_input_consume(void) {
    natsio_js *js = connect_js();
    NT_CHECK(js != NULL);
    NT_CHECK(create_stream(js, "WBAD", "wbad.>"));
    NT_CHECK(create_consumer(js, "WBAD", "{\"durable_name\":\"ok\",\"ack_policy\":\"explicit\"}"));
    NT_CHECK(publish(js, "wbad.a", "b0"));
    natsio_consume_options o = consume_options();
    o.expires_ms = 1000;
    natsio_js_messages *out = SENTINEL;

    EXPECT_NULL_ARG("js", natsio_js_consume(NULL, "WBAD", "ok", &o, &out));
    EXPECT_NULL_ARG("stream", natsio_js_consume(js, NULL, "ok", &o, &out));
    EXPECT_NULL_ARG("consumer", natsio_js_consume(js, "WBAD", NULL, &o, &out));
    EXPECT_NULL_ARG("messages_out", natsio_js_consume(js, "WBAD", "ok", &o, NULL));
    EXPECT_NULL_ARG("messages_out", natsio_js_consume(js, "WBAD", "ok", NULL, NULL));
    EXPECT_FAILS_NAMING(NATSIO_ERR_INVALID_UTF8, "stream", natsio_js_consume(js, BAD_UTF8, "ok", &o, &out));
    EXPECT_FAILS_NAMING(NATSIO_ERR_INVALID_UTF8, "consumer", natsio_js_consume(js, "WBAD", BAD_UTF8, &o, &out));
    NT_CHECK(out == SENTINEL);

    natsio_js_messages *it = consume(js, "WBAD", "ok", 4, 1000);
    NT_CHECK(it != NULL);
    natsio_msg *m = SENTINEL;
    EXPECT_NULL_ARG("messages", natsio_js_messages_next(NULL, 100, &m));
    EXPECT_NULL_ARG("messages", natsio_js_messages_next(NULL, NATSIO_WAIT_FOREVER, &m));
    EXPECT_NULL_ITEM_OUT("msg_out", natsio_js_messages_next(it, 100, NULL));
    NT_CHECK(m == SENTINEL);
    /* The rejected calls took nothing: the message is still there. */
    natsio_msg *b0 = TAKE(it, 3000);
    NT_CHECK(b0 != NULL);
    NT_CHECK(payload_is(b0, "b0"));
    EXPECT_OK(natsio_msg_ack_sync(b0, 2000));
    EXPECT_OK(natsio_js_stream_delete(js, "WBAD"));
}

static void test_bad_input_watch(void) {
    natsio_js *js = connect_js();
    NT_CHECK(js != NULL);
    natsio_kv *kv = new_bucket(js, "WBADW", 1);
    NT_CHECK(kv != NULL);
    NT_CHECK(put(kv, "k", "v") == 1);
    natsio_kv_watch_options o = watch_options();
    natsio_kv_watcher *out = SENTINEL;

    EXPECT_NULL_ARG("kv", natsio_kv_watch(NULL, ALL_KEYS, NULL, &out));
    EXPECT_NULL_ARG("kv", natsio_kv_watch(NULL, KEYS("k"), &o, &out));
    EXPECT_NULL_ARG("watcher_out", natsio_kv_watch(kv, ALL_KEYS, NULL, NULL));
    EXPECT_NULL_ARG("watcher_out", natsio_kv_watch(kv, KEYS("k"), &o, NULL));
    /* A list: NULL with a count, or a NULL element. */
    EXPECT_NULL_ARG("keys", natsio_kv_watch(kv, NULL, 1, &o, &out));
    EXPECT_NULL_ARG("key pattern", natsio_kv_watch(kv, KEYS("k", NULL), &o, &out));
    EXPECT_FAILS_NAMING(NATSIO_ERR_INVALID_UTF8, "key pattern", natsio_kv_watch(kv, KEYS(BAD_UTF8), NULL, &out));
    EXPECT_FAILS_NAMING(NATSIO_ERR_INVALID_UTF8, "key pattern", natsio_kv_watch(kv, KEYS("a", "\xc3"), &o, &out));
    /* An options struct not made by natsio_kv_watch_options_init. */
    natsio_kv_watch_options zero = {0};
    EXPECT_FAILS_NAMING(NATSIO_ERR_INVALID_ARGUMENT, "natsio_kv_watch_options",
                        natsio_kv_watch(kv, KEYS("k"), &zero, &out));
    /* A version newer than this library knows. */
    natsio_kv_watch_options newer = watch_options();
    newer.version = NATSIO_KV_WATCH_OPTIONS_VERSION + 1;
    EXPECT_FAILS_NAMING(NATSIO_ERR_INVALID_ARGUMENT, "natsio_kv_watch_options",
                        natsio_kv_watch(kv, KEYS("k"), &newer, &out));
    /* Resuming at a revision and watching only later updates contradict. */
    natsio_kv_watch_options both = watch_options();
    both.resume_from_revision = 1;
    both.updates_only = true;
    EXPECT_FAILS_NAMING(NATSIO_ERR_INVALID_ARGUMENT, "resume_from_revision",
                        natsio_kv_watch(kv, KEYS("k"), &both, &out));
    natsio_token *bt = SENTINEL;
    EXPECT_FAILS_NAMING(NATSIO_ERR_INVALID_ARGUMENT, "updates_only", natsio_kv_watch_async(kv, ALL_KEYS, &both, &bt));
    NT_CHECK(bt == SENTINEL);
    NT_CHECK(out == SENTINEL);
    /* Nothing was created on the server by the refused calls. */
    char names[8][64];
    NT_CHECK_INT_EQ(consumer_names(js, "KV_WBADW", names, 8), 0);

    natsio_kv_watcher *w = watch(kv, KEYS("k"), &o);
    NT_CHECK(w != NULL);
    natsio_kv_entry *e = SENTINEL;
    EXPECT_NULL_ARG("watcher", natsio_kv_watcher_next(NULL, 100, &e));
    EXPECT_NULL_ARG("watcher", natsio_kv_watcher_next(NULL, NATSIO_WAIT_FOREVER, &e));
    EXPECT_NULL_ITEM_OUT("entry_out", natsio_kv_watcher_next(w, 100, NULL));
    NT_CHECK(e == SENTINEL);
    /* The rejected calls consumed no event. */
    EXPECT_ENTRY(w, "k", NATSIO_KV_PUT, 1, "v");
    EXPECT_MARKER(w, "WBADW");

    EXPECT_OK(natsio_js_kv_delete(js, "WBADW"));
}

int main(int argc, char **argv) {
    static const nt_case cases[] = {
        NT_CASE(test_consume_many_in_order_with_a_small_window),
        NT_CASE(test_consume_times_out_and_goes_on),
        NT_CASE(test_consume_stop_from_another_thread),
        NT_CASE(test_consume_ends_when_the_consumer_is_deleted),
        NT_CASE(test_consume_options_and_names),
        NT_CASE(test_consumed_messages_ack_nak_term_and_redelivery),
        NT_CASE(test_consume_free_without_stop_and_null_handles),
        NT_CASE(test_watch_initial_values_then_done_then_changes),
        NT_CASE(test_watch_empty_bucket_and_updates_only),
        NT_CASE(test_watch_resume_from_revision),
        NT_CASE(test_watch_history_ignore_deletes_and_meta_only),
        NT_CASE(test_watch_key_patterns),
        NT_CASE(test_watch_timeout_stop_and_free),
        NT_CASE(test_watch_recovers_when_its_consumer_is_deleted),
        NT_CASE(test_watch_of_updates_only_recovers_without_losing_a_change),
        NT_CASE(test_watch_of_a_deleted_bucket_ends_in_time),
        NT_CASE(test_watch_and_consume_after_client_close),
        NT_CASE(test_bad_input_consume),
        NT_CASE(test_bad_input_watch),
    };
    return run_cases_with_shared_server(argc, argv, "watchtest", cases, NT_COUNT(cases));
}
