/*
 * Pending-limit policies under real overload, through the C ABI: a publisher
 * client floods a subscription of another client whose consumer is not
 * reading (an iterator not read yet, or a callback held at a gate) until the
 * flood has been fully received. Then each policy's outcome is exact:
 * DROP_NEW keeps the first messages, DROP_OLD the newest, BLOCK loses
 * nothing, ERROR fails the subscription; drops are counted and reported to
 * the error callback with the subscription's sid and subject.
 *
 * "Fully received" without sleeping: the publisher flushes (the server has
 * routed every message to the subscriber's connection), then the subscriber
 * flushes (its PONG is queued behind those messages, so its reader has
 * processed them all). Not usable with BLOCK, whose reader is paused.
 */
#define _POSIX_C_SOURCE 200809L

#include "harness.h"
#include "util.h"

#include <natsio.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { FLOOD = 2000, LIMIT = 50 };

/* ---- helpers ------------------------------------------------------------ */

/* Everything the error callback saw, for the running case. */
static struct {
    pthread_mutex_t lock;
    long slow_consumer_reports;
    long other_reports;
    uint64_t last_sid;
    char last_subject[256];
} g_errors = {PTHREAD_MUTEX_INITIALIZER, 0, 0, 0, {0}};

static void record_error(void *user_data, natsio_status status, const char *text, uint64_t sid,
                         const char *subject) {
    (void)user_data;
    (void)text;
    pthread_mutex_lock(&g_errors.lock);
    if (status == NATSIO_ERR_SLOW_CONSUMER) {
        g_errors.slow_consumer_reports++;
        g_errors.last_sid = sid;
        snprintf(g_errors.last_subject, sizeof g_errors.last_subject, "%s", subject ? subject : "(null)");
    } else {
        g_errors.other_reports++;
    }
    pthread_mutex_unlock(&g_errors.lock);
}

static void reset_errors(void) {
    pthread_mutex_lock(&g_errors.lock);
    g_errors.slow_consumer_reports = 0;
    g_errors.other_reports = 0;
    g_errors.last_sid = 0;
    g_errors.last_subject[0] = '\0';
    pthread_mutex_unlock(&g_errors.lock);
}

static bool slow_consumer_reported(void *arg) {
    (void)arg;
    pthread_mutex_lock(&g_errors.lock);
    bool seen = g_errors.slow_consumer_reports > 0;
    pthread_mutex_unlock(&g_errors.lock);
    return seen;
}

/* Asserts the error callback reported a slow consumer for `sub`. */
static void check_slow_consumer_reported(natsio_sub *sub) {
    NT_CHECK_MSG(nt_wait_until(slow_consumer_reported, NULL, 3000),
                 "error callback never got NATSIO_ERR_SLOW_CONSUMER");
    pthread_mutex_lock(&g_errors.lock);
    uint64_t sid = g_errors.last_sid;
    char subject[256];
    snprintf(subject, sizeof subject, "%s", g_errors.last_subject);
    pthread_mutex_unlock(&g_errors.lock);
    NT_CHECK_INT_EQ(sid, natsio_sub_sid(sub));
    NT_CHECK_STR_EQ(subject, natsio_sub_subject(sub));
}

/* A subscriber client with the error callback and optional default pending
 * limits (msgs_limit 0: keep the library defaults). The record of what the
 * error callback saw starts empty. */
static natsio_client *connect_subscriber(int64_t default_msgs, int64_t default_bytes) {
    reset_errors();
    natsio_options *o = NULL;
    natsio_client *c = NULL;
    natsio_status st = natsio_options_new(&o);
    if (st == NATSIO_OK) st = natsio_options_set_url(o, nt_server_url(g_server));
    if (st == NATSIO_OK) st = natsio_options_set_error_callback(o, record_error, NULL, NULL);
    if (st == NATSIO_OK && (default_msgs != 0 || default_bytes != 0))
        st = natsio_options_set_pending_limits(o, default_msgs, default_bytes);
    if (st == NATSIO_OK) st = natsio_client_connect(o, &c);
    if (o) nt_cleanup(options_free_cb, o);
    if (st != NATSIO_OK) {
        nt_fail_at(__FILE__, __LINE__, "subscriber connect: %s (%s)", natsio_status_str(st),
                   natsio_last_error());
        return NULL;
    }
    nt_cleanup(client_free_cb, c);
    return c;
}

static natsio_sub *subscribe_limited(natsio_client *c, const char *subject, int64_t msgs,
                                     int64_t bytes, int32_t policy) {
    natsio_sub_options so;
    natsio_sub *s = NULL;
    natsio_status st = natsio_sub_options_init(&so);
    so.pending_msgs_limit = msgs;
    so.pending_bytes_limit = bytes;
    so.policy = policy;
    if (st == NATSIO_OK) st = natsio_client_subscribe(c, subject, NULL, &so, &s);
    if (st == NATSIO_OK) st = natsio_client_flush(c, 2000);
    if (st != NATSIO_OK) {
        nt_fail_at(__FILE__, __LINE__, "subscribe: %s (%s)", natsio_status_str(st), natsio_last_error());
        return NULL;
    }
    nt_cleanup(sub_free_cb, s);
    return s;
}

/* Publishes "0".."n-1" padded with '.' to `size` bytes (size 0: no padding). */
static natsio_status flood(natsio_client *c, const char *subject, int n, size_t size) {
    char buf[512];
    for (int i = 0; i < n; i++) {
        int len = snprintf(buf, sizeof buf, "%d", i);
        size_t total = (size_t)len;
        if (size > total) {
            memset(buf + len + 1, '.', size - total - 1);
            buf[len] = ' ';
            total = size;
        }
        natsio_status st = natsio_client_publish(c, subject, buf, total);
        if (st != NATSIO_OK) return st;
    }
    return natsio_client_flush(c, 5000);
}

/* Floods `subject` from `publisher` and returns once `subscriber` has
 * received all of it (see the top of the file: not usable with BLOCK). */
static natsio_status flood_fully_received(natsio_client *publisher, natsio_client *subscriber,
                                          const char *subject, int n, size_t size) {
    natsio_status st = flood(publisher, subject, n, size);
    return st == NATSIO_OK ? natsio_client_flush(subscriber, 5000) : st;
}

static int msg_number(const natsio_msg *m) { return atoi(natsio_msg_data(m)); }

/* Reads `n` messages from `s`, each within 5 s, and checks they are
 * "0".."n-1" in order (flood's numbering). */
static void read_in_order(natsio_sub *s, int n, const char *what) {
    for (int i = 0; i < n; i++) {
        natsio_msg *m = NULL;
        natsio_status st = natsio_sub_next(s, 5000, &m);
        NT_CHECK_MSG(st == NATSIO_OK, "message %d of %d on %s: %s", i, n, what, natsio_status_str(st));
        if (st != NATSIO_OK) return;
        NT_CHECK_INT_EQ(msg_number(m), i);
        natsio_msg_free(m);
    }
}

/* Reads until a 200 ms gap; stores the payload numbers in `out` (cap n). */
static int read_all(natsio_sub *s, int *out, int cap, natsio_status *last) {
    int got = 0;
    natsio_msg *m = NULL;
    natsio_status st;
    while ((st = natsio_sub_next(s, 200, &m)) == NATSIO_OK) {
        if (got < cap) out[got] = msg_number(m);
        got++;
        natsio_msg_free(m);
    }
    if (last) *last = st;
    return got;
}

/* ---- iterator subscriptions ---------------------------------------------- */

static void test_drop_new_keeps_first(void) {
    char subj[128];
    natsio_client *sc = connect_subscriber(0, 0);
    natsio_client *pc = connect_client();
    NT_CHECK(sc && pc);
    natsio_sub *s = subscribe_limited(sc, case_subject(subj, sizeof subj, "f"), LIMIT, -1,
                                      NATSIO_POLICY_DROP_NEW);
    NT_CHECK(s != NULL);
    NT_CHECK_INT_EQ(flood_fully_received(pc, sc, subj, FLOOD, 0), NATSIO_OK);

    natsio_iter_stats st;
    NT_CHECK_INT_EQ(natsio_sub_get_stats(s, &st), NATSIO_OK);
    NT_CHECK_INT_EQ(st.pending_items, LIMIT);
    NT_CHECK_INT_EQ(st.dropped, FLOOD - LIMIT);

    static int got[FLOOD];
    natsio_status last;
    int n = read_all(s, got, FLOOD, &last);
    NT_CHECK_INT_EQ(last, NATSIO_ERR_TIMEOUT);
    NT_CHECK_INT_EQ(n, LIMIT);
    for (int i = 0; i < n; i++) NT_CHECK_INT_EQ(got[i], i);
    NT_CHECK_INT_EQ(natsio_sub_get_stats(s, &st), NATSIO_OK);
    NT_CHECK_INT_EQ(st.delivered, LIMIT);
    NT_CHECK_INT_EQ(st.dropped, FLOOD - n);
    check_slow_consumer_reported(s);
    if (nt_failed()) return;

    /* The client's error counter counts the reports. */
    struct natsio_client_stats cs;
    NT_CHECK_INT_EQ(natsio_client_get_stats(sc, &cs), NATSIO_OK);
    NT_CHECK(cs.errors >= 1);
    NT_CHECK_INT_EQ(cs.in_msgs, FLOOD);
}

static void test_drop_old_keeps_newest(void) {
    char subj[128];
    natsio_client *sc = connect_subscriber(0, 0);
    natsio_client *pc = connect_client();
    NT_CHECK(sc && pc);
    natsio_sub *s = subscribe_limited(sc, case_subject(subj, sizeof subj, "f"), LIMIT, -1,
                                      NATSIO_POLICY_DROP_OLD);
    NT_CHECK(s != NULL);
    NT_CHECK_INT_EQ(flood_fully_received(pc, sc, subj, FLOOD, 0), NATSIO_OK);

    static int got[FLOOD];
    natsio_status last;
    int n = read_all(s, got, FLOOD, &last);
    NT_CHECK_INT_EQ(last, NATSIO_ERR_TIMEOUT);
    NT_CHECK_INT_EQ(n, LIMIT);
    for (int i = 0; i < n; i++) NT_CHECK_INT_EQ(got[i], FLOOD - LIMIT + i);
    natsio_iter_stats st;
    NT_CHECK_INT_EQ(natsio_sub_get_stats(s, &st), NATSIO_OK);
    NT_CHECK_INT_EQ(st.dropped, FLOOD - n);
    NT_CHECK_INT_EQ(st.delivered, n);
    check_slow_consumer_reported(s);
}

/* For nt_wait_until: whether subscription `arg` has LIMIT messages queued. */
static bool queue_at_limit(void *arg) {
    natsio_iter_stats st;
    return natsio_sub_get_stats((natsio_sub *)arg, &st) == NATSIO_OK && st.pending_items >= LIMIT;
}

static void test_block_loses_nothing(void) {
    char subj[128];
    natsio_client *sc = connect_subscriber(0, 0);
    natsio_client *pc = connect_client();
    NT_CHECK(sc && pc);
    natsio_sub *s = subscribe_limited(sc, case_subject(subj, sizeof subj, "f"), LIMIT, -1,
                                      NATSIO_POLICY_BLOCK);
    NT_CHECK(s != NULL);
    NT_CHECK_INT_EQ(flood(pc, subj, FLOOD, 0), NATSIO_OK);

    /* The reader stops at the limit instead of dropping. The message that
     * found the queue full is already off the socket, so it is queued and
     * the reader pauses after it: at most LIMIT + 1 are pending. */
    natsio_iter_stats st;
    NT_CHECK_MSG(nt_wait_until(queue_at_limit, s, 10000), "the queue never reached its limit");
    /* An absence: no more than one over the limit is queued within 100 ms. */
    nt_sleep_ms(100);
    NT_CHECK_INT_EQ(natsio_sub_get_stats(s, &st), NATSIO_OK);
    NT_CHECK_MSG(st.pending_items <= LIMIT + 1, "pending %llu", (unsigned long long)st.pending_items);
    NT_CHECK_INT_EQ(st.dropped, 0);

    /* Every message arrives, in order, as the consumer catches up. */
    for (int i = 0; i < FLOOD; i++) {
        natsio_msg *m = NULL;
        NT_CHECK_INT_EQ(natsio_sub_next(s, 5000, &m), NATSIO_OK);
        int k = msg_number(m);
        natsio_msg_free(m);
        NT_CHECK_INT_EQ(k, i);
        if (i % 100 == 0) {
            NT_CHECK_INT_EQ(natsio_sub_get_stats(s, &st), NATSIO_OK);
            NT_CHECK(st.pending_items <= LIMIT + 1);
        }
    }
    natsio_msg *m = NULL;
    NT_CHECK_INT_EQ(natsio_sub_next(s, 100, &m), NATSIO_ERR_TIMEOUT);
    NT_CHECK_INT_EQ(natsio_sub_get_stats(s, &st), NATSIO_OK);
    NT_CHECK_INT_EQ(st.dropped, 0);
    NT_CHECK_INT_EQ(st.delivered, FLOOD);
    /* Once caught up the connection works normally again. */
    NT_CHECK_INT_EQ(natsio_client_flush(sc, 5000), NATSIO_OK);
}

static void test_error_fails_subscription(void) {
    char subj[128];
    natsio_client *sc = connect_subscriber(0, 0);
    natsio_client *pc = connect_client();
    NT_CHECK(sc && pc);
    natsio_sub *s = subscribe_limited(sc, case_subject(subj, sizeof subj, "f"), LIMIT, -1,
                                      NATSIO_POLICY_ERROR);
    NT_CHECK(s != NULL);
    NT_CHECK_INT_EQ(flood_fully_received(pc, sc, subj, FLOOD, 0), NATSIO_OK);

    static int got[FLOOD];
    natsio_status last;
    int n = read_all(s, got, FLOOD, &last);
    NT_CHECK_INT_EQ(last, NATSIO_ERR_SLOW_CONSUMER);
    NT_CHECK(n <= LIMIT);
    for (int i = 0; i < n; i++) NT_CHECK_INT_EQ(got[i], i);
    /* The failure sticks: the error that ended it, on every later call
     * (waiting or not, and through a token). */
    natsio_msg *m = NULL;
    NT_CHECK_INT_EQ(natsio_sub_next(s, 100, &m), NATSIO_ERR_SLOW_CONSUMER);
    NT_CHECK_INT_EQ(natsio_sub_next(s, NATSIO_NO_WAIT, &m), NATSIO_ERR_SLOW_CONSUMER);
    NT_CHECK(m == NULL);
    natsio_token *t = NULL;
    NT_CHECK_INT_EQ(natsio_sub_next_async(s, &t), NATSIO_OK);
    nt_cleanup(token_free_cb, t);
    NT_CHECK_INT_EQ(token_outcome(t, 2000), NATSIO_ERR_SLOW_CONSUMER);
    NT_CHECK_INT_EQ(natsio_token_msg(t, &m), NATSIO_ERR_SLOW_CONSUMER);
    NT_CHECK(m == NULL);
    NT_CHECK(natsio_sub_is_closed(s));
    check_slow_consumer_reported(s);
    if (nt_failed()) return;
    /* Other subscriptions and the client are unaffected. */
    NT_CHECK_INT_EQ(natsio_client_status(sc), NATSIO_CONN_CONNECTED);
    NT_CHECK_INT_EQ(natsio_client_flush(sc, 2000), NATSIO_OK);
}

/* natsio_sub_end_async's token for `s` (NULL on failure, checked by the
 * caller), freed when the case ends. */
static natsio_token *end_token(natsio_sub *s) {
    natsio_token *t = NULL;
    if (natsio_sub_end_async(s, &t) != NATSIO_OK) return NULL;
    nt_cleanup(token_free_cb, t);
    return t;
}

/* natsio_sub_end_async: the end reaches a reader that takes nothing (a
 * binding whose consumer's buffer is full), as the failure here. */
static void test_end_token_learns_the_failure_without_a_read(void) {
    char subj[128];
    natsio_client *sc = connect_subscriber(0, 0);
    natsio_client *pc = connect_client();
    NT_CHECK(sc && pc);
    natsio_sub *s = subscribe_limited(sc, case_subject(subj, sizeof subj, "f"), LIMIT, -1,
                                      NATSIO_POLICY_ERROR);
    NT_CHECK(s != NULL);
    natsio_token *end = end_token(s);
    NT_CHECK(end != NULL);
    NT_CHECK_INT_EQ(flood_fully_received(pc, sc, subj, LIMIT, 0), NATSIO_OK);
    NT_CHECK(!natsio_token_is_done(end)); /* at the limit, not over it */
    NT_CHECK_INT_EQ(flood_fully_received(pc, sc, subj, 1, 0), NATSIO_OK);
    NT_CHECK_INT_EQ(token_outcome(end, 2000), NATSIO_ERR_SLOW_CONSUMER);
    NT_CHECK(natsio_sub_is_closed(s));
}

/* natsio_sub_end_async after a clean end, a stop and a close, and for an
 * ended subscription; it takes no message. */
static void test_end_token_outcomes(void) {
    char subj[128];
    natsio_client *sc = connect_subscriber(0, 0);
    natsio_client *pc = connect_client();
    NT_CHECK(sc && pc);
    natsio_sub *s = subscribe_limited(sc, case_subject(subj, sizeof subj, "f"), LIMIT, -1,
                                      NATSIO_POLICY_DROP_NEW);
    NT_CHECK(s != NULL);
    natsio_token *end = end_token(s);
    NT_CHECK(end != NULL);
    NT_CHECK_INT_EQ(natsio_sub_unsubscribe_after(s, 2), NATSIO_OK);
    NT_CHECK_INT_EQ(flood_fully_received(pc, sc, subj, 2, 0), NATSIO_OK);
    /* Both messages are still there for the reader: the end waits. */
    natsio_msg *m = NULL;
    NT_CHECK_INT_EQ(natsio_sub_next(s, 2000, &m), NATSIO_OK);
    natsio_msg_free(m);
    NT_CHECK(!natsio_token_is_done(end));
    NT_CHECK_INT_EQ(natsio_sub_next(s, 2000, &m), NATSIO_OK);
    natsio_msg_free(m);
    NT_CHECK_INT_EQ(token_outcome(end, 2000), NATSIO_OK);
    natsio_token *again = end_token(s);
    NT_CHECK(again != NULL);
    NT_CHECK(natsio_token_is_done(again));
    NT_CHECK_INT_EQ(natsio_token_status(again), NATSIO_OK);

    natsio_sub *stopped = subscribe_limited(sc, case_subject(subj, sizeof subj, "s"), LIMIT, -1,
                                            NATSIO_POLICY_DROP_NEW);
    NT_CHECK(stopped != NULL);
    natsio_token *stop_end = end_token(stopped);
    NT_CHECK(stop_end != NULL);
    NT_CHECK(!natsio_token_is_done(stop_end));
    NT_CHECK_INT_EQ(natsio_sub_stop(stopped), NATSIO_OK);
    NT_CHECK_INT_EQ(token_outcome(stop_end, 2000), NATSIO_ERR_SUBSCRIPTION_CLOSED);

    natsio_sub *open = subscribe_limited(sc, case_subject(subj, sizeof subj, "c"), LIMIT, -1,
                                         NATSIO_POLICY_DROP_NEW);
    NT_CHECK(open != NULL);
    natsio_token *close_end = end_token(open);
    NT_CHECK(close_end != NULL);
    natsio_client_close(sc);
    NT_CHECK_INT_EQ(token_outcome(close_end, 2000), NATSIO_ERR_CONNECTION_CLOSED);

    natsio_token *t = NULL;
    EXPECT_NULL_ARG("sub", natsio_sub_end_async(NULL, &t));
    EXPECT_NULL_ARG("token_out", natsio_sub_end_async(s, NULL));
}

static void test_byte_limit_drop_new(void) {
    enum { N = 50, SIZE = 100, BYTES = 1000 };
    char subj[128];
    natsio_client *sc = connect_subscriber(0, 0);
    natsio_client *pc = connect_client();
    NT_CHECK(sc && pc);
    natsio_sub *s = subscribe_limited(sc, case_subject(subj, sizeof subj, "f"), -1, BYTES,
                                      NATSIO_POLICY_DROP_NEW);
    NT_CHECK(s != NULL);
    NT_CHECK_INT_EQ(flood_fully_received(pc, sc, subj, N, SIZE), NATSIO_OK);

    natsio_iter_stats st;
    NT_CHECK_INT_EQ(natsio_sub_get_stats(s, &st), NATSIO_OK);
    NT_CHECK_INT_EQ(st.pending_bytes, BYTES);
    NT_CHECK_INT_EQ(st.pending_items, BYTES / SIZE);
    NT_CHECK_INT_EQ(st.dropped, N - BYTES / SIZE);
    int got[N];
    int n = read_all(s, got, N, NULL);
    NT_CHECK_INT_EQ(n, BYTES / SIZE);
    for (int i = 0; i < n; i++) NT_CHECK_INT_EQ(got[i], i);
    check_slow_consumer_reported(s);
}

static void test_byte_limit_drop_old(void) {
    enum { N = 50, SIZE = 100, BYTES = 1000 };
    char subj[128];
    natsio_client *sc = connect_subscriber(0, 0);
    natsio_client *pc = connect_client();
    NT_CHECK(sc && pc);
    natsio_sub *s = subscribe_limited(sc, case_subject(subj, sizeof subj, "f"), -1, BYTES,
                                      NATSIO_POLICY_DROP_OLD);
    NT_CHECK(s != NULL);
    NT_CHECK_INT_EQ(flood_fully_received(pc, sc, subj, N, SIZE), NATSIO_OK);
    int got[N];
    int n = read_all(s, got, N, NULL);
    NT_CHECK_INT_EQ(n, BYTES / SIZE);
    for (int i = 0; i < n; i++) NT_CHECK_INT_EQ(got[i], N - BYTES / SIZE + i);
    natsio_iter_stats st;
    NT_CHECK_INT_EQ(natsio_sub_get_stats(s, &st), NATSIO_OK);
    NT_CHECK_INT_EQ(st.dropped, N - n);
}

static void test_option_level_default_limits(void) {
    enum { DEFAULT_LIMIT = 20 };
    char subj[128];
    /* Client-wide default: 20 messages, no byte limit. */
    natsio_client *sc = connect_subscriber(DEFAULT_LIMIT, 0);
    natsio_client *pc = connect_client();
    NT_CHECK(sc && pc);
    /* opts NULL and NATSIO_PENDING_LIMIT_DEFAULT (what _init sets) mean
     * "the client's default"; so does 0 in a version-1 struct (its old
     * meaning). */
    natsio_sub *by_null = NULL;
    NT_CHECK_INT_EQ(natsio_client_subscribe(sc, case_subject(subj, sizeof subj, "f"), NULL, NULL, &by_null),
                    NATSIO_OK);
    nt_cleanup(sub_free_cb, by_null);
    natsio_sub *by_default = subscribe_limited(sc, subj, NATSIO_PENDING_LIMIT_DEFAULT,
                                               NATSIO_PENDING_LIMIT_DEFAULT, NATSIO_POLICY_DROP_NEW);
    natsio_sub_options v1;
    NT_CHECK_INT_EQ(natsio_sub_options_init(&v1), NATSIO_OK);
    v1.version = 1;
    v1.pending_msgs_limit = 0;
    v1.pending_bytes_limit = 0;
    natsio_sub *by_v1_zero = NULL;
    NT_CHECK_INT_EQ(natsio_client_subscribe(sc, subj, NULL, &v1, &by_v1_zero), NATSIO_OK);
    nt_cleanup(sub_free_cb, by_v1_zero);
    /* 0 disables a limit (the reference's pending_msgs_limit), as does a
     * negative limit: both override the client's default. */
    natsio_sub *by_zero = subscribe_limited(sc, subj, 0, 0, NATSIO_POLICY_DROP_NEW);
    natsio_sub *unlimited = subscribe_limited(sc, subj, -1, -1, NATSIO_POLICY_DROP_NEW);
    NT_CHECK(by_default && by_v1_zero && by_zero && unlimited);
    NT_CHECK_INT_EQ(flood_fully_received(pc, sc, subj, 100, 0), NATSIO_OK);

    natsio_sub *limited[] = {by_null, by_default, by_v1_zero};
    for (size_t i = 0; i < sizeof limited / sizeof limited[0]; i++) {
        natsio_iter_stats st;
        NT_CHECK_INT_EQ(natsio_sub_get_stats(limited[i], &st), NATSIO_OK);
        NT_CHECK_INT_EQ(st.pending_items, DEFAULT_LIMIT);
        NT_CHECK_INT_EQ(st.dropped, 100 - DEFAULT_LIMIT);
    }
    natsio_sub *not_limited[] = {by_zero, unlimited};
    for (size_t i = 0; i < sizeof not_limited / sizeof not_limited[0]; i++) {
        natsio_iter_stats st;
        NT_CHECK_INT_EQ(natsio_sub_get_stats(not_limited[i], &st), NATSIO_OK);
        NT_CHECK_INT_EQ(st.pending_items, 100);
        NT_CHECK_INT_EQ(st.dropped, 0);
    }
}

static void test_option_level_default_byte_limit(void) {
    char subj[128];
    natsio_client *sc = connect_subscriber(-1, 500); /* no msg limit, 500 bytes */
    natsio_client *pc = connect_client();
    NT_CHECK(sc && pc);
    natsio_sub *s = NULL;
    NT_CHECK_INT_EQ(natsio_client_subscribe(sc, case_subject(subj, sizeof subj, "f"), NULL, NULL, &s),
                    NATSIO_OK);
    nt_cleanup(sub_free_cb, s);
    NT_CHECK_INT_EQ(natsio_client_flush(sc, 2000), NATSIO_OK);
    NT_CHECK_INT_EQ(flood_fully_received(pc, sc, subj, 20, 100), NATSIO_OK);
    natsio_iter_stats st;
    NT_CHECK_INT_EQ(natsio_sub_get_stats(s, &st), NATSIO_OK);
    NT_CHECK_INT_EQ(st.pending_bytes, 500);
    NT_CHECK_INT_EQ(st.pending_items, 5);
    NT_CHECK_INT_EQ(st.dropped, 15);
}

static void test_sub_options_init_defaults(void) {
    natsio_sub_options so;
    memset(&so, 0x5a, sizeof so);
    NT_CHECK_INT_EQ(natsio_sub_options_init(&so), NATSIO_OK);
    NT_CHECK_INT_EQ(so.version, NATSIO_SUB_OPTIONS_VERSION);
    NT_CHECK_INT_EQ(so.policy, NATSIO_POLICY_DROP_NEW);
    NT_CHECK(so.pending_msgs_limit == NATSIO_PENDING_LIMIT_DEFAULT);
    NT_CHECK(so.pending_bytes_limit == NATSIO_PENDING_LIMIT_DEFAULT);
    NT_CHECK_INT_EQ(natsio_sub_options_init(NULL), NATSIO_ERR_NULL_ARGUMENT);
}

/* ---- callback subscriptions held at a gate --------------------------------- */

static struct {
    atomic_bool open;
    atomic_long count;
    atomic_long out_of_order;
    atomic_long first;
    atomic_long last;
    int seen[FLOOD]; /* numbers in delivery order (written by the callback) */
} g_gate;

static void reset_gate(void) {
    atomic_store(&g_gate.open, false);
    atomic_store(&g_gate.count, 0);
    atomic_store(&g_gate.out_of_order, 0);
    atomic_store(&g_gate.first, -1);
    atomic_store(&g_gate.last, -1);
}

/* Waits at the gate, then records the numbers it sees (strictly increasing). */
static void gated_cb(void *user_data, const natsio_msg *msg, natsio_status status) {
    (void)user_data;
    (void)status;
    if (msg == NULL) return; /* the final call, when the case frees the sub */
    while (!atomic_load(&g_gate.open)) nt_sleep_ms(1);
    long k = msg_number(msg);
    if (atomic_load(&g_gate.first) < 0) atomic_store(&g_gate.first, k);
    if (k <= atomic_load(&g_gate.last)) atomic_fetch_add(&g_gate.out_of_order, 1);
    atomic_store(&g_gate.last, k);
    long index = atomic_load(&g_gate.count);
    if (index < FLOOD) g_gate.seen[index] = (int)k;
    atomic_fetch_add(&g_gate.count, 1);
}

static void open_gate(void *unused) {
    (void)unused;
    atomic_store(&g_gate.open, true);
}

static natsio_sub *subscribe_gated(natsio_client *c, const char *subject, int32_t policy) {
    natsio_sub_options so;
    natsio_sub_options_init(&so);
    so.pending_msgs_limit = LIMIT;
    so.pending_bytes_limit = -1;
    so.policy = policy;
    natsio_sub *s = NULL;
    natsio_status st = subscribe_callback(c, subject, NULL, &so, gated_cb, NULL, NULL, &s);
    if (st == NATSIO_OK) st = natsio_client_flush(c, 2000);
    if (st != NATSIO_OK) {
        nt_fail_at(__FILE__, __LINE__, "subscribe: %s", natsio_status_str(st));
        return NULL;
    }
    nt_cleanup(sub_free_cb, s);
    nt_cleanup(open_gate, NULL); /* runs first: never leave a callback stuck */
    return s;
}

static bool all_accounted(void *arg) {
    natsio_sub *s = (natsio_sub *)arg;
    natsio_iter_stats st;
    if (natsio_sub_get_stats(s, &st) != NATSIO_OK) return false;
    return (long)(st.delivered + st.dropped) >= FLOOD && st.pending_items == 0 &&
           atomic_load(&g_gate.count) == (long)st.delivered;
}

/* all_accounted for a subscription that gets `n` messages. */
typedef struct accounted {
    natsio_sub *sub;
    long n;
} accounted;

static bool all_accounted_of(void *arg) {
    const accounted *a = (const accounted *)arg;
    natsio_iter_stats st;
    if (natsio_sub_get_stats(a->sub, &st) != NATSIO_OK) return false;
    return (long)(st.delivered + st.dropped) >= a->n && st.pending_items == 0 &&
           atomic_load(&g_gate.count) == (long)st.delivered;
}

static void test_callback_drop_new_slow_consumer(void) {
    char subj[128];
    reset_gate();
    natsio_client *sc = connect_subscriber(0, 0);
    natsio_client *pc = connect_client();
    NT_CHECK(sc && pc);
    natsio_sub *s = subscribe_gated(sc, case_subject(subj, sizeof subj, "f"), NATSIO_POLICY_DROP_NEW);
    NT_CHECK(s != NULL);
    NT_CHECK_INT_EQ(flood_fully_received(pc, sc, subj, FLOOD, 0), NATSIO_OK);
    atomic_store(&g_gate.open, true);
    NT_CHECK(nt_wait_until(all_accounted, s, 5000));

    natsio_iter_stats st;
    NT_CHECK_INT_EQ(natsio_sub_get_stats(s, &st), NATSIO_OK);
    long received = atomic_load(&g_gate.count);
    /* LIMIT queued, plus at most the one the callback held at the gate. */
    NT_CHECK(received == LIMIT || received == LIMIT + 1);
    NT_CHECK_INT_EQ(st.dropped, FLOOD - received);
    /* The queue filled with the first LIMIT messages; the callback taking
     * one out may have let one later arrival in. */
    for (int i = 0; i < LIMIT; i++) NT_CHECK_INT_EQ(g_gate.seen[i], i);
    NT_CHECK_INT_EQ(atomic_load(&g_gate.out_of_order), 0);
    check_slow_consumer_reported(s);
}

static void test_callback_drop_old_slow_consumer(void) {
    char subj[128];
    reset_gate();
    natsio_client *sc = connect_subscriber(0, 0);
    natsio_client *pc = connect_client();
    NT_CHECK(sc && pc);
    natsio_sub *s = subscribe_gated(sc, case_subject(subj, sizeof subj, "f"), NATSIO_POLICY_DROP_OLD);
    NT_CHECK(s != NULL);
    NT_CHECK_INT_EQ(flood_fully_received(pc, sc, subj, FLOOD, 0), NATSIO_OK);
    atomic_store(&g_gate.open, true);
    NT_CHECK(nt_wait_until(all_accounted, s, 5000));

    natsio_iter_stats st;
    NT_CHECK_INT_EQ(natsio_sub_get_stats(s, &st), NATSIO_OK);
    long received = atomic_load(&g_gate.count);
    NT_CHECK(received == LIMIT || received == LIMIT + 1);
    NT_CHECK_INT_EQ(st.dropped, FLOOD - received);
    /* The newest survive: the last one delivered is the last one sent. */
    NT_CHECK_INT_EQ(atomic_load(&g_gate.last), FLOOD - 1);
    NT_CHECK_INT_EQ(atomic_load(&g_gate.out_of_order), 0);
    check_slow_consumer_reported(s);
}

static void test_callback_block_loses_nothing(void) {
    char subj[128];
    reset_gate();
    natsio_client *sc = connect_subscriber(0, 0);
    natsio_client *pc = connect_client();
    NT_CHECK(sc && pc);
    natsio_sub *s = subscribe_gated(sc, case_subject(subj, sizeof subj, "f"), NATSIO_POLICY_BLOCK);
    NT_CHECK(s != NULL);
    NT_CHECK_INT_EQ(flood(pc, subj, FLOOD, 0), NATSIO_OK);
    /* The callback holds the first message at the shut gate; the reader
     * queues up to the limit. Then an absence: no more than one over the
     * limit within 100 ms. */
    NT_CHECK_MSG(nt_wait_until(queue_at_limit, s, 10000), "the queue never reached its limit");
    nt_sleep_ms(100);
    natsio_iter_stats st;
    NT_CHECK_INT_EQ(natsio_sub_get_stats(s, &st), NATSIO_OK);
    NT_CHECK(st.pending_items <= LIMIT + 1); /* see test_block_loses_nothing */
    NT_CHECK_INT_EQ(st.dropped, 0);
    atomic_store(&g_gate.open, true);
    NT_CHECK(nt_wait_until(all_accounted, s, 10000));
    NT_CHECK_INT_EQ(atomic_load(&g_gate.count), FLOOD);
    NT_CHECK_INT_EQ(atomic_load(&g_gate.first), 0);
    NT_CHECK_INT_EQ(atomic_load(&g_gate.last), FLOOD - 1);
    NT_CHECK_INT_EQ(atomic_load(&g_gate.out_of_order), 0);
    NT_CHECK_INT_EQ(natsio_sub_get_stats(s, &st), NATSIO_OK);
    NT_CHECK_INT_EQ(st.dropped, 0);
}

/* A callback subscription whose handler lags makes the connection's reader
 * wait for it (past a backlog of 1 MiB), but at most once (20 ms) while the
 * handler does not catch up: a stalled handler does not pace the other
 * subscriptions of its connection, and under its limits it loses nothing. */
static void test_stalled_handler_does_not_pace_other_subscriptions(void) {
    char subj[128], other[160];
    enum { STALLED = 4000, OTHERS = 200, SIZE = 500 }; /* 2 MB for the stalled one */
    reset_gate();
    natsio_client *sc = connect_subscriber(0, 0);
    natsio_client *pc = connect_client();
    NT_CHECK(sc && pc);
    case_subject(subj, sizeof subj, "stalled");
    snprintf(other, sizeof other, "%s.other", subj);
    natsio_sub_options so;
    natsio_sub_options_init(&so); /* the default limits: 65,536 messages, 64 MiB */
    natsio_sub *stalled = NULL;
    NT_CHECK_INT_EQ(subscribe_callback(sc, subj, NULL, &so, gated_cb, NULL, NULL, &stalled), NATSIO_OK);
    nt_cleanup(sub_free_cb, stalled);
    nt_cleanup(open_gate, NULL); /* runs first: never leave a callback stuck */
    natsio_sub *live = subscribe_limited(sc, other, 0, 0, NATSIO_POLICY_DROP_NEW);
    NT_CHECK(live != NULL);
    NT_CHECK_INT_EQ(flood(pc, subj, STALLED, SIZE), NATSIO_OK);
    NT_CHECK_INT_EQ(flood(pc, other, OTHERS, 0), NATSIO_OK);
    /* Waiting 20 ms per message of the stalled one (2,000 past the 1 MiB)
     * would hold these back for 40 s. */
    read_in_order(live, OTHERS, "the other subscription");
    NT_CHECK_INT_EQ(atomic_load(&g_gate.count), 0); /* the handler is still stalled */
    atomic_store(&g_gate.open, true);
    NT_CHECK(nt_wait_until(all_accounted_of, &(accounted){stalled, STALLED}, 10000));
    natsio_iter_stats st;
    NT_CHECK_INT_EQ(natsio_sub_get_stats(stalled, &st), NATSIO_OK);
    NT_CHECK_INT_EQ(st.dropped, 0);
    NT_CHECK_INT_EQ(atomic_load(&g_gate.count), STALLED);
    NT_CHECK_INT_EQ(atomic_load(&g_gate.first), 0);
    NT_CHECK_INT_EQ(atomic_load(&g_gate.last), STALLED - 1);
    NT_CHECK_INT_EQ(atomic_load(&g_gate.out_of_order), 0);
}

/* The same for a subscription read in pull mode (natsio_sub_next): the
 * reader waits for it past a backlog of 4 MiB, at most once while nothing
 * is taken, and reads on; what it queued is all there, in order. */
static void test_unread_subscription_does_not_pace_other_subscriptions(void) {
    char subj[128], other[160];
    enum { UNREAD = 12000, OTHERS = 200, SIZE = 500 }; /* 6 MB for the unread one */
    natsio_client *sc = connect_subscriber(0, 0);
    natsio_client *pc = connect_client();
    NT_CHECK(sc && pc);
    case_subject(subj, sizeof subj, "unread");
    snprintf(other, sizeof other, "%s.other", subj);
    /* The default limits: 65,536 messages, 64 MiB. */
    natsio_sub *unread = subscribe_limited(sc, subj, 0, 0, NATSIO_POLICY_DROP_NEW);
    natsio_sub *live = subscribe_limited(sc, other, 0, 0, NATSIO_POLICY_DROP_NEW);
    NT_CHECK(unread && live);
    NT_CHECK_INT_EQ(flood(pc, subj, UNREAD, SIZE), NATSIO_OK);
    NT_CHECK_INT_EQ(flood(pc, other, OTHERS, 0), NATSIO_OK);
    /* Waiting 20 ms per message of the unread one (~5,000 past the bound)
     * would hold these back for 100 s. */
    read_in_order(live, OTHERS, "the other subscription");
    read_in_order(unread, UNREAD, "the unread subscription");
    natsio_iter_stats st;
    NT_CHECK_INT_EQ(natsio_sub_get_stats(unread, &st), NATSIO_OK);
    NT_CHECK_INT_EQ(st.dropped, 0);
}

int main(int argc, char **argv) {
    static const nt_case cases[] = {
        NT_CASE(test_drop_new_keeps_first),
        NT_CASE(test_drop_old_keeps_newest),
        NT_CASE(test_block_loses_nothing),
        NT_CASE(test_error_fails_subscription),
        NT_CASE(test_end_token_learns_the_failure_without_a_read),
        NT_CASE(test_end_token_outcomes),
        NT_CASE(test_byte_limit_drop_new),
        NT_CASE(test_byte_limit_drop_old),
        NT_CASE(test_option_level_default_limits),
        NT_CASE(test_option_level_default_byte_limit),
        NT_CASE(test_sub_options_init_defaults),
        NT_CASE(test_callback_drop_new_slow_consumer),
        NT_CASE(test_callback_drop_old_slow_consumer),
        NT_CASE(test_callback_block_loses_nothing),
        NT_CASE(test_stalled_handler_does_not_pace_other_subscriptions),
        NT_CASE(test_unread_subscription_does_not_pace_other_subscriptions),
    };
    return run_cases_with_shared_server(argc, argv, "policies", cases, NT_COUNT(cases));
}
