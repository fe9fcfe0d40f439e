/*
 * Misuse through the C ABI that a library linked into someone else's
 * process must survive: blocking calls made from inside callbacks (message
 * callbacks and token completion callbacks), handles freed or closed from
 * their own callbacks, tokens freed while pending or while their callback
 * runs, concurrent close, free with requests in flight, next racing a
 * stop. Each call returns its documented status; nothing crashes or
 * deadlocks (the harness's per-case timeout turns a deadlock into a failure).
 *
 * What stays the caller's error (documented in natsio.h, not tested here):
 * using a handle after its _free returned, or freeing a handle while
 * another thread is inside a call on it (close it first: natsio_client_close
 * and natsio_sub_stop are the thread-safe ways to stop other users).
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

/* ---- helpers ------------------------------------------------------------ */

/* A client the case frees itself (from a callback, concurrently, ...). */
static natsio_client *connect_unmanaged(void) {
    natsio_client *c = NULL;
    natsio_status st = natsio_client_connect_url(nt_server_url(g_server), &c);
    if (st != NATSIO_OK) {
        nt_fail_at(__FILE__, __LINE__, "connect: %s (%s)", natsio_status_str(st), natsio_last_error());
        return NULL;
    }
    return c;
}

static bool flag_set(void *arg) { return atomic_load((atomic_int *)arg) != 0; }

/* ---- blocking calls from inside callbacks ------------------------------- */

/* What a callback did with the blocking calls it made. */
typedef struct {
    natsio_client *client;
    natsio_sub *other_sub; /* iterator sub read from the callback */
    char echo_subject[128];
    atomic_int done;
    natsio_status request_status;
    char reply[32];
    natsio_status flush_status;
    natsio_status next_msg_status;
    char next_payload[32];
} blocking_calls;

static void copy_payload(char *dst, size_t cap, const natsio_msg *m) {
    size_t n = natsio_msg_data_len(m);
    if (n >= cap) n = cap - 1;
    memcpy(dst, natsio_msg_data(m), n);
    dst[n] = '\0';
}

/* Request, flush and next_msg of another subscription, one after another,
 * on a library callback thread. */
static void make_blocking_calls(blocking_calls *b) {
    natsio_msg *reply = NULL;
    b->request_status = natsio_client_request(b->client, b->echo_subject, NULL, "ping", 4, 5000, &reply);
    if (reply) {
        copy_payload(b->reply, sizeof b->reply, reply);
        natsio_msg_free(reply);
    }
    b->flush_status = natsio_client_flush(b->client, 5000);
    natsio_msg *m = NULL;
    b->next_msg_status = natsio_sub_next(b->other_sub, 5000, &m);
    if (m) {
        copy_payload(b->next_payload, sizeof b->next_payload, m);
        natsio_msg_free(m);
    }
    atomic_store(&b->done, 1);
}

static void blocking_msg_cb(void *user_data, const natsio_msg *msg, natsio_status status) {
    (void)status;
    if (msg == NULL) return; /* the final call */
    make_blocking_calls((blocking_calls *)user_data);
}

static void blocking_token_cb(void *user_data, natsio_token *token) {
    (void)token;
    make_blocking_calls((blocking_calls *)user_data);
}

/* Prepares the echo service and an iterator subscription holding one
 * message ("queued") for the callback to read. */
static void setup_blocking_calls(blocking_calls *b, natsio_client *c) {
    char subj[128];
    memset(b, 0, sizeof *b);
    b->client = c;
    b->request_status = b->flush_status = b->next_msg_status = -1;
    case_subject(b->echo_subject, sizeof b->echo_subject, "echo");
    NT_CHECK(start_responder(c, b->echo_subject, echo_cb) != NULL);
    NT_CHECK_INT_EQ(natsio_client_subscribe(c, case_subject(subj, sizeof subj, "other"), NULL, NULL, &b->other_sub),
                    NATSIO_OK);
    nt_cleanup(sub_free_cb, b->other_sub);
    NT_CHECK_INT_EQ(natsio_client_publish(c, subj, "queued", 6), NATSIO_OK);
    NT_CHECK_INT_EQ(natsio_client_flush(c, 5000), NATSIO_OK);
}

static void check_blocking_calls(blocking_calls *b) {
    NT_CHECK_MSG(nt_wait_until(flag_set, &b->done, 20000), "the callback's blocking calls never finished");
    NT_CHECK_INT_EQ(b->request_status, NATSIO_OK);
    NT_CHECK_STR_EQ(b->reply, "ping");
    NT_CHECK_INT_EQ(b->flush_status, NATSIO_OK);
    NT_CHECK_INT_EQ(b->next_msg_status, NATSIO_OK);
    NT_CHECK_STR_EQ(b->next_payload, "queued");
}

static void test_blocking_calls_from_message_callback(void) {
    static blocking_calls b;
    char subj[128];
    natsio_client *c = connect_client();
    NT_CHECK(c != NULL);
    setup_blocking_calls(&b, c);
    NT_CHECK(!nt_failed());
    natsio_sub *s = NULL;
    NT_CHECK_INT_EQ(subscribe_callback(c, case_subject(subj, sizeof subj, "trigger"), NULL, NULL, blocking_msg_cb, &b,
                                       NULL, &s),
                    NATSIO_OK);
    nt_cleanup(sub_free_cb, s);
    NT_CHECK_INT_EQ(natsio_client_publish(c, subj, "go", 2), NATSIO_OK);
    check_blocking_calls(&b);
}

static void test_blocking_calls_from_token_completion_callback(void) {
    static blocking_calls b;
    natsio_client *c = connect_client();
    NT_CHECK(c != NULL);
    setup_blocking_calls(&b, c);
    NT_CHECK(!nt_failed());
    /* The completion of a request runs the callback. */
    natsio_token *t = NULL;
    NT_CHECK_INT_EQ(natsio_client_request_async(c, b.echo_subject, NULL, "first", 5, 5000, &t), NATSIO_OK);
    nt_cleanup(token_free_cb, t);
    NT_CHECK_INT_EQ(natsio_token_on_complete(t, blocking_token_cb, &b, NULL), NATSIO_OK);
    check_blocking_calls(&b);
    NT_CHECK_INT_EQ(natsio_token_status(t), NATSIO_OK);

    /* A callback registered on an already completed flush runs at once. */
    atomic_store(&b.done, 0);
    b.request_status = b.flush_status = b.next_msg_status = -1;
    b.reply[0] = b.next_payload[0] = '\0';
    NT_CHECK_INT_EQ(natsio_client_publish(c, natsio_sub_subject(b.other_sub), "queued", 6), NATSIO_OK);
    natsio_token *flushed = NULL;
    NT_CHECK_INT_EQ(natsio_client_flush_async(c, NATSIO_TIMEOUT_DEFAULT, &flushed), NATSIO_OK);
    nt_cleanup(token_free_cb, flushed);
    NT_CHECK_INT_EQ(natsio_token_wait(flushed, 5000), NATSIO_OK);
    NT_CHECK_INT_EQ(natsio_token_on_complete(flushed, blocking_token_cb, &b, NULL), NATSIO_OK);
    check_blocking_calls(&b);
}

/* ---- handles freed or closed from their own callbacks ------------------- */

static struct {
    atomic_int calls;
    atomic_int released;
    atomic_int finished;
    natsio_client *client;
    natsio_status close_status;
    atomic_int final_calls;
    atomic_int final_status;
} g_own;

/* Records the final call (msg NULL) of a callback; true if it was. */
static bool own_final(const natsio_msg *msg, natsio_status status) {
    if (msg != NULL) return false;
    atomic_store(&g_own.final_status, status);
    atomic_fetch_add(&g_own.final_calls, 1);
    return true;
}

static void count_release(void *user_data) {
    (void)user_data;
    atomic_fetch_add(&g_own.released, 1);
}

/* user_data is the subscription itself. */
static void free_own_sub_cb(void *user_data, const natsio_msg *msg, natsio_status status) {
    if (own_final(msg, status)) return;
    atomic_fetch_add(&g_own.calls, 1);
    natsio_sub_free((natsio_sub *)user_data);
    /* The callback's own frame is still running after the free. */
    atomic_store(&g_own.finished, 1);
}

static void test_free_subscription_inside_its_own_callback(void) {
    char subj[128];
    memset(&g_own, 0, sizeof g_own);
    natsio_client *c = connect_client();
    NT_CHECK(c != NULL);
    natsio_sub *s = NULL;
    NT_CHECK_INT_EQ(natsio_client_subscribe(c, case_subject(subj, sizeof subj, "self"), NULL, NULL, &s), NATSIO_OK);
    NT_CHECK_INT_EQ(natsio_sub_set_callback(s, free_own_sub_cb, s, count_release), NATSIO_OK);
    for (int i = 0; i < 5; i++) NT_CHECK_INT_EQ(natsio_client_publish(c, subj, "x", 1), NATSIO_OK);
    NT_CHECK_INT_EQ(natsio_client_flush(c, 5000), NATSIO_OK);
    NT_CHECK(nt_wait_until(flag_set, &g_own.finished, 5000));
    NT_CHECK(nt_wait_until(flag_set, &g_own.released, 5000));
    nt_sleep_ms(100); /* an absence: no more calls within 100 ms */
    NT_CHECK_INT_EQ(atomic_load(&g_own.calls), 1);
    NT_CHECK_INT_EQ(atomic_load(&g_own.released), 1);
    /* The final call came once, after the freeing callback returned. */
    NT_CHECK_INT_EQ(atomic_load(&g_own.final_calls), 1);
    NT_CHECK_INT_EQ(atomic_load(&g_own.final_status), NATSIO_DONE);
    /* The client is unaffected. */
    NT_CHECK_INT_EQ(natsio_client_status(c), NATSIO_CONN_CONNECTED);
    NT_CHECK_INT_EQ(natsio_client_flush(c, 5000), NATSIO_OK);
}

static void close_and_free_client_cb(void *user_data, const natsio_msg *msg, natsio_status status) {
    (void)user_data;
    if (own_final(msg, status)) return;
    if (atomic_fetch_add(&g_own.calls, 1) == 0) {
        g_own.close_status = natsio_client_close(g_own.client);
        natsio_client_free(g_own.client);
        atomic_store(&g_own.finished, 1);
    }
}

static void test_close_and_free_client_from_message_callback(void) {
    char subj[128];
    memset(&g_own, 0, sizeof g_own);
    g_own.close_status = -1;
    natsio_client *c = connect_unmanaged();
    NT_CHECK(c != NULL);
    g_own.client = c;
    natsio_sub *s = NULL;
    NT_CHECK_INT_EQ(subscribe_callback(c, case_subject(subj, sizeof subj, "close"), NULL, NULL,
                                       close_and_free_client_cb, NULL, count_release, &s),
                    NATSIO_OK);
    /* The subscription outlives the client and is freed by the case. */
    nt_cleanup(sub_free_cb, s);
    NT_CHECK_INT_EQ(natsio_client_flush(c, 5000), NATSIO_OK);
    natsio_client *pub = connect_client();
    NT_CHECK(pub != NULL);
    for (int i = 0; i < 3; i++) NT_CHECK_INT_EQ(natsio_client_publish(pub, subj, "x", 1), NATSIO_OK);
    NT_CHECK_INT_EQ(natsio_client_flush(pub, 5000), NATSIO_OK);
    NT_CHECK(nt_wait_until(flag_set, &g_own.finished, 5000));
    NT_CHECK_INT_EQ(g_own.close_status, NATSIO_OK);
    nt_sleep_ms(100); /* an absence: no more calls within 100 ms */
    NT_CHECK_INT_EQ(atomic_load(&g_own.calls), 1);
    NT_CHECK(natsio_sub_is_closed(s));
    /* It ended with its client: one final call saying so. */
    NT_CHECK_INT_EQ(atomic_load(&g_own.final_calls), 1);
    NT_CHECK_INT_EQ(atomic_load(&g_own.final_status), NATSIO_ERR_CONNECTION_CLOSED);
    NT_CHECK_INT_EQ(natsio_sub_next(s, NATSIO_NO_WAIT, &(natsio_msg *){NULL}), NATSIO_ERR_ILLEGAL_STATE);
}

static void close_and_free_client_token_cb(void *user_data, natsio_token *token) {
    (void)user_data;
    (void)token;
    atomic_fetch_add(&g_own.calls, 1);
    g_own.close_status = natsio_client_close(g_own.client);
    natsio_client_free(g_own.client);
    atomic_store(&g_own.finished, 1);
}

static void test_close_and_free_client_from_token_callback(void) {
    char subj[128];
    memset(&g_own, 0, sizeof g_own);
    g_own.close_status = -1;
    natsio_client *c = connect_unmanaged();
    NT_CHECK(c != NULL);
    g_own.client = c;
    natsio_client *responder = connect_client();
    NT_CHECK(responder != NULL);
    NT_CHECK(start_responder(responder, case_subject(subj, sizeof subj, "echo"), echo_cb) != NULL);
    natsio_token *t = NULL;
    NT_CHECK_INT_EQ(natsio_client_request_async(c, subj, NULL, "x", 1, 5000, &t), NATSIO_OK);
    nt_cleanup(token_free_cb, t);
    NT_CHECK_INT_EQ(natsio_token_on_complete(t, close_and_free_client_token_cb, NULL, count_release), NATSIO_OK);
    NT_CHECK(nt_wait_until(flag_set, &g_own.finished, 5000));
    NT_CHECK(nt_wait_until(flag_set, &g_own.released, 5000));
    NT_CHECK_INT_EQ(g_own.close_status, NATSIO_OK);
    NT_CHECK_INT_EQ(atomic_load(&g_own.calls), 1);
    /* The token keeps its outcome after the client is gone. */
    NT_CHECK_INT_EQ(natsio_token_status(t), NATSIO_OK);
    natsio_msg *reply = NULL;
    NT_CHECK_INT_EQ(natsio_token_msg(t, &reply), NATSIO_OK);
    NT_CHECK_MEM_EQ(natsio_msg_data(reply), natsio_msg_data_len(reply), "x", 1);
    natsio_msg_free(reply);
}

/* ---- tokens freed early -------------------------------------------------- */

static struct {
    atomic_int calls;
    atomic_int released;
    atomic_int running;
    atomic_int returned;
} g_tok;

static void token_release(void *user_data) {
    (void)user_data;
    atomic_fetch_add(&g_tok.released, 1);
}

static void token_count_cb(void *user_data, natsio_token *token) {
    (void)user_data;
    (void)token;
    atomic_fetch_add(&g_tok.calls, 1);
}

/* A subscription that receives requests and never answers them, so a
 * request stays pending without a no-responders status. */
static natsio_sub *start_silent_responder(natsio_client *c, const char *subject) {
    natsio_sub *s = NULL;
    if (natsio_client_subscribe(c, subject, NULL, NULL, &s) != NATSIO_OK) {
        nt_fail_at(__FILE__, __LINE__, "silent subscribe failed");
        return NULL;
    }
    nt_cleanup(sub_free_cb, s);
    if (natsio_client_flush(c, 5000) != NATSIO_OK) {
        nt_fail_at(__FILE__, __LINE__, "flush failed");
        return NULL;
    }
    return s;
}

static void test_free_token_while_operation_pending(void) {
    char subj[128];
    memset(&g_tok, 0, sizeof g_tok);
    natsio_client *c = connect_client();
    NT_CHECK(c != NULL);
    NT_CHECK(start_silent_responder(c, case_subject(subj, sizeof subj, "silent")) != NULL);
    for (int i = 0; i < 20; i++) {
        natsio_token *t = NULL;
        NT_CHECK_INT_EQ(natsio_client_request_async(c, subj, NULL, "x", 1, 300, &t), NATSIO_OK);
        NT_CHECK_INT_EQ(natsio_token_on_complete(t, token_count_cb, NULL, token_release), NATSIO_OK);
        NT_CHECK(!natsio_token_is_done(t));
        natsio_token_free(t);
    }
    /* Every user data released at the free; no callback ever runs, even
     * after the requests' timeouts passed. */
    NT_CHECK_INT_EQ(atomic_load(&g_tok.released), 20);
    nt_sleep_ms(600); /* an absence, past the 300 ms timeouts */
    NT_CHECK_INT_EQ(atomic_load(&g_tok.calls), 0);
    NT_CHECK_INT_EQ(atomic_load(&g_tok.released), 20);
    NT_CHECK_INT_EQ(natsio_client_flush(c, 5000), NATSIO_OK);
}

static void slow_token_cb(void *user_data, natsio_token *token) {
    (void)user_data;
    (void)token;
    atomic_fetch_add(&g_tok.calls, 1);
    atomic_store(&g_tok.running, 1);
    nt_sleep_ms(300);
    atomic_store(&g_tok.returned, 1);
}

static void test_free_token_while_its_callback_runs(void) {
    char subj[128];
    memset(&g_tok, 0, sizeof g_tok);
    natsio_client *c = connect_client();
    NT_CHECK(c != NULL);
    NT_CHECK(start_responder(c, case_subject(subj, sizeof subj, "echo"), echo_cb) != NULL);
    natsio_token *t = NULL;
    NT_CHECK_INT_EQ(natsio_client_request_async(c, subj, NULL, "x", 1, 5000, &t), NATSIO_OK);
    NT_CHECK_INT_EQ(natsio_token_on_complete(t, slow_token_cb, NULL, token_release), NATSIO_OK);
    NT_CHECK(nt_wait_until(flag_set, &g_tok.running, 5000));
    natsio_token_free(t);
    /* The free waited for the callback on the other thread to return. */
    NT_CHECK_INT_EQ(atomic_load(&g_tok.returned), 1);
    NT_CHECK(nt_wait_until(flag_set, &g_tok.released, 2000));
    NT_CHECK_INT_EQ(atomic_load(&g_tok.calls), 1);
    NT_CHECK_INT_EQ(atomic_load(&g_tok.released), 1);
}

/* ---- close and free ------------------------------------------------------- */

static void test_double_close(void) {
    natsio_client *c = connect_client();
    NT_CHECK(c != NULL);
    NT_CHECK_INT_EQ(natsio_client_close(c), NATSIO_OK);
    NT_CHECK_INT_EQ(natsio_client_close(c), NATSIO_OK);
    NT_CHECK_INT_EQ(natsio_client_status(c), NATSIO_CONN_CLOSED);
    NT_CHECK_INT_EQ(natsio_client_publish(c, "misuse.after.close", "x", 1), NATSIO_ERR_CONNECTION_CLOSED);
    NT_CHECK_INT_EQ(natsio_client_flush(c, 1000), NATSIO_ERR_CONNECTION_CLOSED);
}

enum { CLOSERS = 4 };

typedef struct {
    natsio_client *client;
    pthread_barrier_t *start;
    natsio_status status;
} closer;

static void *close_concurrently(void *arg) {
    closer *k = (closer *)arg;
    pthread_barrier_wait(k->start);
    k->status = natsio_client_close(k->client);
    return NULL;
}

static void test_close_concurrently_from_four_threads(void) {
    char subj[128];
    for (int round = 0; round < 10; round++) {
        natsio_client *c = connect_client();
        NT_CHECK(c != NULL);
        natsio_sub *s = NULL;
        NT_CHECK_INT_EQ(natsio_client_subscribe(c, case_subject(subj, sizeof subj, "sub"), NULL, NULL, &s),
                        NATSIO_OK);
        nt_cleanup(sub_free_cb, s);
        for (int i = 0; i < 100; i++) NT_CHECK_INT_EQ(natsio_client_publish(c, subj, "x", 1), NATSIO_OK);

        pthread_barrier_t start;
        pthread_barrier_init(&start, NULL, CLOSERS);
        closer closers[CLOSERS];
        pthread_t threads[CLOSERS];
        for (int i = 0; i < CLOSERS; i++) {
            closers[i] = (closer){c, &start, -1};
            NT_CHECK(pthread_create(&threads[i], NULL, close_concurrently, &closers[i]) == 0);
        }
        for (int i = 0; i < CLOSERS; i++) pthread_join(threads[i], NULL);
        pthread_barrier_destroy(&start);
        for (int i = 0; i < CLOSERS; i++) NT_CHECK_INT_EQ(closers[i].status, NATSIO_OK);
        NT_CHECK_INT_EQ(natsio_client_status(c), NATSIO_CONN_CLOSED);
        NT_CHECK(natsio_sub_is_closed(s));
    }
}

enum { IN_FLIGHT = 8 };

static bool half_the_callbacks_ran(void *arg) {
    (void)arg;
    return atomic_load(&g_tok.calls) >= IN_FLIGHT / 2 && atomic_load(&g_tok.released) >= IN_FLIGHT / 2;
}

static void test_free_with_requests_in_flight(void) {
    char subj[128];
    natsio_client *responder = connect_client();
    NT_CHECK(responder != NULL);
    NT_CHECK(start_silent_responder(responder, case_subject(subj, sizeof subj, "silent")) != NULL);

    natsio_client *c = connect_unmanaged();
    NT_CHECK(c != NULL);
    natsio_token *tokens[IN_FLIGHT];
    memset(&g_tok, 0, sizeof g_tok);
    for (int i = 0; i < IN_FLIGHT; i++) {
        NT_CHECK_INT_EQ(natsio_client_request_async(c, subj, NULL, "x", 1, 10000, &tokens[i]), NATSIO_OK);
        nt_cleanup(token_free_cb, tokens[i]);
        if (i % 2 == 0)
            NT_CHECK_INT_EQ(natsio_token_on_complete(tokens[i], token_count_cb, NULL, token_release), NATSIO_OK);
    }
    NT_CHECK_INT_EQ(natsio_client_flush(c, 5000), NATSIO_OK);
    int64_t before = nt_now_ms();
    natsio_client_free(c);
    /* Every pending request completed with the closed connection, long
     * before its 10 s timeout; callbacks ran once each. */
    for (int i = 0; i < IN_FLIGHT; i++) {
        NT_CHECK_INT_EQ(natsio_token_wait(tokens[i], 5000), NATSIO_OK);
        NT_CHECK_INT_EQ(natsio_token_status(tokens[i]), NATSIO_ERR_CONNECTION_CLOSED);
        natsio_msg *m = NULL;
        NT_CHECK_INT_EQ(natsio_token_msg(tokens[i], &m), NATSIO_ERR_CONNECTION_CLOSED);
    }
    NT_CHECK(nt_now_ms() - before < 5000);
    /* Completion callbacks run on a dispatcher, maybe after the waits. */
    NT_CHECK(nt_wait_until(half_the_callbacks_ran, NULL, 5000));
    nt_sleep_ms(50); /* an absence: no more calls within 50 ms */
    NT_CHECK_INT_EQ(atomic_load(&g_tok.calls), IN_FLIGHT / 2);
    NT_CHECK_INT_EQ(atomic_load(&g_tok.released), IN_FLIGHT / 2);
}

/* ---- next racing stop ------------------------------------------------------ */

typedef struct {
    natsio_sub *sub;
    atomic_int waiting;
    natsio_status status;
    int64_t waited_ms;
} next_msg_waiter;

static void *wait_next_msg(void *arg) {
    next_msg_waiter *w = (next_msg_waiter *)arg;
    natsio_msg *m = NULL;
    atomic_store(&w->waiting, 1);
    int64_t start = nt_now_ms();
    w->status = natsio_sub_next(w->sub, 10000, &m);
    w->waited_ms = nt_now_ms() - start;
    natsio_msg_free(m);
    return NULL;
}

static void test_next_msg_racing_unsubscribe(void) {
    char subj[128];
    natsio_client *c = connect_client();
    NT_CHECK(c != NULL);
    case_subject(subj, sizeof subj, "race");
    for (int round = 0; round < 50; round++) {
        natsio_sub *s = NULL;
        NT_CHECK_INT_EQ(natsio_client_subscribe(c, subj, NULL, NULL, &s), NATSIO_OK);
        nt_cleanup(sub_free_cb, s);
        next_msg_waiter w = {.sub = s, .status = -1};
        pthread_t t;
        NT_CHECK(pthread_create(&t, NULL, wait_next_msg, &w) == 0);
        /* Stop before, during and after the waiter starts waiting. */
        if (round % 3 == 1) {
            while (!atomic_load(&w.waiting)) nt_sleep_ms(0);
        } else if (round % 3 == 2) {
            nt_sleep_ms(round % 7);
        }
        natsio_status unsub = natsio_sub_stop(s);
        pthread_join(t, NULL);
        NT_CHECK_INT_EQ(unsub, NATSIO_OK);
        /* Stopped: ended without error, whenever the waiter came. */
        NT_CHECK_INT_EQ(w.status, NATSIO_DONE);
        NT_CHECK_MSG(w.waited_ms < 5000, "next waited %lld ms after the stop", (long long)w.waited_ms);
    }
}

int main(int argc, char **argv) {
    static const nt_case cases[] = {
        NT_CASE(test_blocking_calls_from_message_callback),
        NT_CASE(test_blocking_calls_from_token_completion_callback),
        NT_CASE(test_free_subscription_inside_its_own_callback),
        NT_CASE(test_close_and_free_client_from_message_callback),
        NT_CASE(test_close_and_free_client_from_token_callback),
        NT_CASE(test_free_token_while_operation_pending),
        NT_CASE(test_free_token_while_its_callback_runs),
        NT_CASE(test_double_close),
        NT_CASE(test_close_concurrently_from_four_threads),
        NT_CASE(test_free_with_requests_in_flight),
        NT_CASE(test_next_msg_racing_unsubscribe),
    };
    return run_cases_with_shared_server(argc, argv, "misuse", cases, NT_COUNT(cases));
}
