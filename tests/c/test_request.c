/*
 * Request/reply through the C ABI against a real nats-server: responders,
 * no-responders vs timeout, completion tokens (wait, poll, callback, cancel,
 * free), request_many's end conditions, concurrency and re-entrancy.
 */
#define _POSIX_C_SOURCE 200809L

#include "harness.h"
#include "util.h"

#include <natsio_sys.h> /* spinning on an event loop */

#include <pthread.h>
#include <stdint.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- helpers ------------------------------------------------------------ */

/* Echoes the request payload back; copies an "X-Echo" request header into
 * the reply as "X-Echoed", and always adds "X-Handled-By: svc-1" when the
 * request carried headers (exercising natsio_msg_respond_with). */
static void echo_responder(void *user_data, const natsio_msg *msg, natsio_status status) {
    (void)user_data;
    (void)status;
    if (msg == NULL) return; /* the final call */
    const natsio_headers *in = natsio_msg_headers(msg);
    if (in == NULL) {
        natsio_msg_respond(msg, natsio_msg_data(msg), natsio_msg_data_len(msg));
        return;
    }
    natsio_headers *out = NULL;
    natsio_headers_new(&out);
    const char *v = NULL;
    if (natsio_headers_get(in, "X-Echo", &v) == NATSIO_OK) natsio_headers_add(out, "X-Echoed", v);
    natsio_headers_add(out, "X-Handled-By", "svc-1");
    natsio_msg_respond_with(msg, out, natsio_msg_data(msg), natsio_msg_data_len(msg));
    natsio_headers_free(out);
}

/* Registers echo_responder on `subject` (flushed, so requests find it). */
static natsio_sub *start_echo(natsio_client *c, const char *subject) {
    return start_responder(c, subject, echo_responder);
}

/* An iterator subscription that never answers: interest without replies. */
static natsio_sub *start_silent(natsio_client *c, const char *subject) { return subscribe_and_flush(c, subject); }

/* ---- request/reply -------------------------------------------------------- */

static void test_request_reply(void) {
    char subj[128];
    natsio_client *svc = connect_client();
    natsio_client *c = connect_client();
    NT_CHECK(svc && c);
    NT_CHECK(start_echo(svc, case_subject(subj, sizeof subj, "echo")) != NULL);

    natsio_msg *reply = NULL;
    NT_CHECK_INT_EQ(natsio_client_request(c, subj, NULL, "ping\0x", 6, 2000, &reply), NATSIO_OK);
    NT_CHECK_MEM_EQ(natsio_msg_data(reply), natsio_msg_data_len(reply), "ping\0x", 6);
    NT_CHECK(natsio_msg_headers(reply) == NULL);
    NT_CHECK_INT_EQ(natsio_msg_status(reply), 0);
    natsio_msg_free(reply);

    /* NATSIO_TIMEOUT_DEFAULT: the client's default request timeout; and
     * no limit at all. */
    reply = NULL;
    NT_CHECK_INT_EQ(natsio_client_request(c, subj, NULL, NULL, 0, NATSIO_TIMEOUT_DEFAULT, &reply), NATSIO_OK);
    NT_CHECK_INT_EQ(natsio_msg_data_len(reply), 0);
    natsio_msg_free(reply);
    reply = NULL;
    NT_CHECK_INT_EQ(natsio_client_request(c, subj, NULL, "f", 1, NATSIO_WAIT_FOREVER, &reply), NATSIO_OK);
    NT_CHECK_MEM_EQ(natsio_msg_data(reply), natsio_msg_data_len(reply), "f", 1);
    natsio_msg_free(reply);
    /* A request always waits: NATSIO_NO_WAIT is no timeout for it. */
    reply = NULL;
    NT_CHECK_INT_EQ(natsio_client_request(c, subj, NULL, "n", 1, NATSIO_NO_WAIT, &reply),
                    NATSIO_ERR_INVALID_ARGUMENT);
    NT_CHECK(reply == NULL);

    /* The same client can be both requester and responder. */
    reply = NULL;
    NT_CHECK_INT_EQ(natsio_client_request(svc, subj, NULL, "self", 4, 2000, &reply), NATSIO_OK);
    NT_CHECK_MEM_EQ(natsio_msg_data(reply), natsio_msg_data_len(reply), "self", 4);
    natsio_msg_free(reply);
}

static void test_request_and_respond_with_headers(void) {
    char subj[128];
    natsio_client *c = connect_client();
    NT_CHECK(c != NULL);
    NT_CHECK(start_echo(c, case_subject(subj, sizeof subj, "echo")) != NULL);
    natsio_headers *h = NULL;
    NT_CHECK_INT_EQ(natsio_headers_new(&h), NATSIO_OK);
    nt_cleanup(headers_free_cb, h);
    NT_CHECK_INT_EQ(natsio_headers_add(h, "X-Echo", "hello header"), NATSIO_OK);

    natsio_msg *reply = NULL;
    NT_CHECK_INT_EQ(natsio_client_request(c, subj, h, "body", 4, 2000, &reply), NATSIO_OK);
    const natsio_headers *rh = natsio_msg_headers(reply);
    const char *v = NULL;
    natsio_status echoed = natsio_headers_get(rh, "X-Echoed", &v);
    char echoed_value[64] = "";
    if (echoed == NATSIO_OK) snprintf(echoed_value, sizeof echoed_value, "%s", v);
    natsio_status handled = natsio_headers_get(rh, "X-Handled-By", &v);
    char handled_value[64] = "";
    if (handled == NATSIO_OK) snprintf(handled_value, sizeof handled_value, "%s", v);
    bool body_ok = natsio_msg_data_len(reply) == 4 && memcmp(natsio_msg_data(reply), "body", 4) == 0;
    natsio_msg_free(reply);
    NT_CHECK(rh != NULL);
    NT_CHECK_INT_EQ(echoed, NATSIO_OK);
    NT_CHECK_STR_EQ(echoed_value, "hello header");
    NT_CHECK_INT_EQ(handled, NATSIO_OK);
    NT_CHECK_STR_EQ(handled_value, "svc-1");
    NT_CHECK(body_ok);
}

static void test_no_responders_fails_fast(void) {
    char subj[128];
    natsio_client *c = connect_client();
    NT_CHECK(c != NULL);
    natsio_msg *reply = NULL;
    int64_t start = nt_now_ms();
    natsio_status st = natsio_client_request(c, case_subject(subj, sizeof subj, "nobody"), NULL, "?", 1,
                                             10000, &reply);
    int64_t elapsed = nt_now_ms() - start;
    NT_CHECK_INT_EQ(st, NATSIO_ERR_NO_RESPONDERS);
    NT_CHECK(reply == NULL);
    /* Not a timeout in disguise: it returned long before the 10 s deadline. */
    NT_CHECK_MSG(elapsed < 5000, "took %lld ms", (long long)elapsed);
    NT_CHECK(natsio_last_error()[0] != '\0');

    natsio_token *t = NULL;
    NT_CHECK_INT_EQ(natsio_client_request_async(c, subj, NULL, "?", 1, 10000, &t), NATSIO_OK);
    nt_cleanup(token_free_cb, t);
    NT_CHECK_INT_EQ(natsio_token_wait(t, 5000), NATSIO_OK);
    NT_CHECK_INT_EQ(natsio_token_status(t), NATSIO_ERR_NO_RESPONDERS);
    natsio_msg *m = NULL;
    NT_CHECK_INT_EQ(natsio_token_msg(t, &m), NATSIO_ERR_NO_RESPONDERS);
    NT_CHECK(m == NULL);
}

static void test_timeout_when_nobody_answers(void) {
    char subj[128];
    natsio_client *c = connect_client();
    NT_CHECK(c != NULL);
    natsio_sub *silent = start_silent(c, case_subject(subj, sizeof subj, "silent"));
    NT_CHECK(silent != NULL);
    natsio_msg *reply = NULL;
    int64_t start = nt_now_ms();
    NT_CHECK_INT_EQ(natsio_client_request(c, subj, NULL, "?", 1, 300, &reply), NATSIO_ERR_TIMEOUT);
    NT_CHECK(nt_now_ms() - start >= 250);
    NT_CHECK(reply == NULL);
    /* The request did reach the subscriber, with a reply subject. */
    natsio_msg *req = NULL;
    NT_CHECK_INT_EQ(natsio_sub_next(silent, 1000, &req), NATSIO_OK);
    bool has_reply = natsio_msg_reply(req) != NULL;
    natsio_msg_free(req);
    NT_CHECK(has_reply);
}

static void test_request_timeout_option(void) {
    char subj[128];
    natsio_options *o = NULL;
    NT_CHECK_INT_EQ(natsio_options_new(&o), NATSIO_OK);
    natsio_options_set_url(o, nt_server_url(g_server));
    NT_CHECK_INT_EQ(natsio_options_set_request_timeout_ms(o, 200), NATSIO_OK);
    natsio_client *c = NULL;
    natsio_status st = natsio_client_connect(o, &c);
    natsio_options_free(o);
    NT_CHECK_INT_EQ(st, NATSIO_OK);
    nt_cleanup(client_free_cb, c);
    NT_CHECK(start_silent(c, case_subject(subj, sizeof subj, "silent")) != NULL);
    natsio_msg *reply = NULL;
    int64_t start = nt_now_ms();
    NT_CHECK_INT_EQ(natsio_client_request(c, subj, NULL, "?", 1, NATSIO_TIMEOUT_DEFAULT, &reply),
                    NATSIO_ERR_TIMEOUT);
    int64_t elapsed = nt_now_ms() - start;
    /* The 200 ms option applied, not the 5 s built-in default. */
    NT_CHECK_MSG(elapsed >= 150 && elapsed < 4000, "took %lld ms", (long long)elapsed);
}

static void test_respond_without_reply_subject(void) {
    char subj[128];
    natsio_client *c = connect_client();
    NT_CHECK(c != NULL);
    natsio_sub *s = start_silent(c, case_subject(subj, sizeof subj, "plain"));
    NT_CHECK(s != NULL);
    NT_CHECK_INT_EQ(natsio_client_publish(c, subj, "x", 1), NATSIO_OK);
    natsio_msg *m = NULL;
    NT_CHECK_INT_EQ(natsio_sub_next(s, 2000, &m), NATSIO_OK);
    natsio_status st = natsio_msg_respond(m, "y", 1);
    natsio_status st_with = natsio_msg_respond_with(m, NULL, "y", 1);
    natsio_msg_free(m);
    NT_CHECK_INT_EQ(st, NATSIO_ERR_NO_REPLY_SUBJECT);
    NT_CHECK_INT_EQ(st_with, NATSIO_ERR_NO_REPLY_SUBJECT);
}

/* ---- tokens ---------------------------------------------------------------- */

/* A responder that copied the reply subject out and freed the message
 * answers through the client: natsio_client_respond. */
static void test_client_respond_to_a_copied_reply_subject(void) {
    char subj[128];
    natsio_client *c = connect_client();
    natsio_client *svc_client = connect_client();
    NT_CHECK(c && svc_client);
    natsio_sub *svc = start_silent(svc_client, case_subject(subj, sizeof subj, "copied"));
    NT_CHECK(svc != NULL);
    natsio_token *t = NULL;
    NT_CHECK_INT_EQ(natsio_client_request_async(c, subj, NULL, "q", 1, 5000, &t), NATSIO_OK);
    nt_cleanup(token_free_cb, t);
    natsio_msg *req = NULL;
    NT_CHECK_INT_EQ(natsio_sub_next(svc, 2000, &req), NATSIO_OK);
    char reply[256];
    snprintf(reply, sizeof reply, "%s", natsio_msg_reply(req));
    natsio_msg_free(req);

    natsio_headers *h = NULL;
    NT_CHECK_INT_EQ(natsio_headers_new(&h), NATSIO_OK);
    nt_cleanup(headers_free_cb, h);
    NT_CHECK_INT_EQ(natsio_headers_add(h, "X-Answer", "yes"), NATSIO_OK);
    /* Bad input is refused and sends nothing. */
    NT_CHECK_INT_EQ(natsio_client_respond(NULL, reply, NULL, "x", 1), NATSIO_ERR_NULL_ARGUMENT);
    NT_CHECK_INT_EQ(natsio_client_respond(svc_client, NULL, NULL, "x", 1), NATSIO_ERR_NULL_ARGUMENT);
    NT_CHECK_INT_EQ(natsio_client_respond(svc_client, "a b", NULL, "x", 1), NATSIO_ERR_BAD_SUBJECT);
    NT_CHECK_INT_EQ(natsio_client_respond(svc_client, "_INBOX.*", NULL, "x", 1), NATSIO_ERR_BAD_SUBJECT);
    NT_CHECK_INT_EQ(natsio_client_respond(svc_client, reply, NULL, NULL, 1), NATSIO_ERR_NULL_ARGUMENT);
    NT_CHECK(!natsio_token_is_done(t));

    NT_CHECK_INT_EQ(natsio_client_respond(svc_client, reply, h, "answer", 6), NATSIO_OK);
    NT_CHECK_INT_EQ(natsio_token_wait(t, 2000), NATSIO_OK);
    natsio_msg *m = NULL;
    NT_CHECK_INT_EQ(natsio_token_msg(t, &m), NATSIO_OK);
    NT_CHECK_MEM_EQ(natsio_msg_data(m), natsio_msg_data_len(m), "answer", 6);
    const char *v = NULL;
    NT_CHECK_INT_EQ(natsio_headers_get(natsio_msg_headers(m), "X-Answer", &v), NATSIO_OK);
    NT_CHECK_STR_EQ(v, "yes");
    natsio_msg_free(m);

    NT_CHECK_INT_EQ(natsio_client_close(svc_client), NATSIO_OK);
    NT_CHECK_INT_EQ(natsio_client_respond(svc_client, reply, NULL, "late", 4), NATSIO_ERR_CONNECTION_CLOSED);
}

static void test_request_async_wait_poll_msg(void) {
    char subj[128];
    natsio_client *c = connect_client();
    NT_CHECK(c != NULL);
    /* Answered by hand, so the pending state is observable. */
    natsio_sub *svc = start_silent(c, case_subject(subj, sizeof subj, "manual"));
    NT_CHECK(svc != NULL);
    natsio_token *t = NULL;
    NT_CHECK_INT_EQ(natsio_client_request_async(c, subj, NULL, "q", 1, 5000, &t), NATSIO_OK);
    nt_cleanup(token_free_cb, t);
    NT_CHECK(!natsio_token_is_done(t));
    NT_CHECK_INT_EQ(natsio_token_status(t), NATSIO_PENDING);
    natsio_msg *m = NULL;
    NT_CHECK_INT_EQ(natsio_token_msg(t, &m), NATSIO_PENDING);
    NT_CHECK(m == NULL);
    NT_CHECK_INT_EQ(natsio_token_wait(t, 50), NATSIO_ERR_TIMEOUT);

    natsio_msg *req = NULL;
    NT_CHECK_INT_EQ(natsio_sub_next(svc, 2000, &req), NATSIO_OK);
    natsio_status responded = natsio_msg_respond(req, "answer", 6);
    natsio_msg_free(req);
    NT_CHECK_INT_EQ(responded, NATSIO_OK);

    NT_CHECK_INT_EQ(natsio_token_wait(t, 2000), NATSIO_OK);
    NT_CHECK(natsio_token_is_done(t));
    NT_CHECK_INT_EQ(natsio_token_status(t), NATSIO_OK);
    NT_CHECK_INT_EQ(natsio_token_msg(t, &m), NATSIO_OK);
    NT_CHECK_MEM_EQ(natsio_msg_data(m), natsio_msg_data_len(m), "answer", 6);
    /* Each call hands out a new owned message. */
    natsio_msg *again = NULL;
    NT_CHECK_INT_EQ(natsio_token_msg(t, &again), NATSIO_OK);
    NT_CHECK(again != m);
    NT_CHECK_MEM_EQ(natsio_msg_data(again), natsio_msg_data_len(again), "answer", 6);
    natsio_msg_free(m);
    natsio_msg_free(again);
    /* Waiting on a completed token returns at once. */
    NT_CHECK_INT_EQ(natsio_token_wait(t, 0), NATSIO_OK);
    NT_CHECK_INT_EQ(natsio_token_cancel(t), NATSIO_ERR_ILLEGAL_STATE);
}

static struct {
    atomic_long calls;
    atomic_long released;
    atomic_long status;
    atomic_bool on_main_thread;
    pthread_t main_thread;
} g_done;

static void reset_done(void) {
    atomic_store(&g_done.calls, 0);
    atomic_store(&g_done.released, 0);
    atomic_store(&g_done.status, -1);
    atomic_store(&g_done.on_main_thread, false);
    g_done.main_thread = pthread_self();
}

static void on_done(void *user_data, natsio_token *token) {
    (void)user_data;
    atomic_store(&g_done.status, natsio_token_status(token));
    if (pthread_equal(pthread_self(), g_done.main_thread)) atomic_store(&g_done.on_main_thread, true);
    atomic_fetch_add(&g_done.calls, 1);
}

static void on_done_release(void *user_data) {
    (void)user_data;
    atomic_fetch_add(&g_done.released, 1);
}

static bool done_released(void *arg) {
    (void)arg;
    return atomic_load(&g_done.released) > 0;
}

static void test_token_on_complete_callback(void) {
    char subj[128];
    reset_done();
    natsio_client *c = connect_client();
    NT_CHECK(c != NULL);
    NT_CHECK(start_echo(c, case_subject(subj, sizeof subj, "echo")) != NULL);
    natsio_token *t = NULL;
    NT_CHECK_INT_EQ(natsio_client_request_async(c, subj, NULL, "q", 1, 5000, &t), NATSIO_OK);
    nt_cleanup(token_free_cb, t);
    NT_CHECK_INT_EQ(natsio_token_on_complete(t, on_done, NULL, on_done_release), NATSIO_OK);
    /* One callback per token. */
    NT_CHECK_INT_EQ(natsio_token_on_complete(t, on_done, NULL, NULL), NATSIO_ERR_ILLEGAL_STATE);
    NT_CHECK(nt_wait_until(done_released, NULL, 5000));
    nt_sleep_ms(50); /* an absence: no second call within 50 ms */
    NT_CHECK_INT_EQ(atomic_load(&g_done.calls), 1);
    NT_CHECK_INT_EQ(atomic_load(&g_done.released), 1);
    NT_CHECK_INT_EQ(atomic_load(&g_done.status), NATSIO_OK);
    NT_CHECK(!atomic_load(&g_done.on_main_thread));
    natsio_msg *m = NULL;
    NT_CHECK_INT_EQ(natsio_token_msg(t, &m), NATSIO_OK);
    NT_CHECK_MEM_EQ(natsio_msg_data(m), natsio_msg_data_len(m), "q", 1);
    natsio_msg_free(m);
}

static void test_token_on_complete_after_completion(void) {
    char subj[128];
    reset_done();
    natsio_client *c = connect_client();
    NT_CHECK(c != NULL);
    natsio_token *t = NULL;
    NT_CHECK_INT_EQ(natsio_client_request_async(c, case_subject(subj, sizeof subj, "nobody"), NULL, "q", 1,
                                                5000, &t),
                    NATSIO_OK);
    nt_cleanup(token_free_cb, t);
    NT_CHECK_INT_EQ(natsio_token_wait(t, 5000), NATSIO_OK);
    /* Registered late: runs at once, still on a library thread. */
    NT_CHECK_INT_EQ(natsio_token_on_complete(t, on_done, NULL, on_done_release), NATSIO_OK);
    NT_CHECK(nt_wait_until(done_released, NULL, 5000));
    NT_CHECK_INT_EQ(atomic_load(&g_done.calls), 1);
    NT_CHECK_INT_EQ(atomic_load(&g_done.status), NATSIO_ERR_NO_RESPONDERS);
    NT_CHECK(!atomic_load(&g_done.on_main_thread));
}

static void test_token_cancel(void) {
    char subj[128];
    reset_done();
    natsio_client *c = connect_client();
    NT_CHECK(c != NULL);
    NT_CHECK(start_silent(c, case_subject(subj, sizeof subj, "silent")) != NULL);
    natsio_token *t = NULL;
    NT_CHECK_INT_EQ(natsio_client_request_async(c, subj, NULL, "q", 1, 30000, &t), NATSIO_OK);
    nt_cleanup(token_free_cb, t);
    NT_CHECK_INT_EQ(natsio_token_on_complete(t, on_done, NULL, on_done_release), NATSIO_OK);
    NT_CHECK_INT_EQ(natsio_token_cancel(t), NATSIO_OK);
    NT_CHECK_INT_EQ(natsio_token_wait(t, 2000), NATSIO_OK);
    NT_CHECK(natsio_token_is_done(t));
    NT_CHECK_INT_EQ(natsio_token_status(t), NATSIO_ERR_CANCELLED);
    natsio_msg *m = NULL;
    NT_CHECK_INT_EQ(natsio_token_msg(t, &m), NATSIO_ERR_CANCELLED);
    /* The registered callback still runs, once, and sees the cancellation. */
    NT_CHECK(nt_wait_until(done_released, NULL, 5000));
    NT_CHECK_INT_EQ(atomic_load(&g_done.calls), 1);
    NT_CHECK_INT_EQ(atomic_load(&g_done.status), NATSIO_ERR_CANCELLED);
    /* Completed: cancelling again is illegal. */
    NT_CHECK_INT_EQ(natsio_token_cancel(t), NATSIO_ERR_ILLEGAL_STATE);
    /* The client is fine afterwards. */
    NT_CHECK_INT_EQ(natsio_client_flush(c, 2000), NATSIO_OK);
}

static void test_token_free_with_pending_callback(void) {
    char subj[128];
    reset_done();
    natsio_client *c = connect_client();
    NT_CHECK(c != NULL);
    NT_CHECK(start_silent(c, case_subject(subj, sizeof subj, "silent")) != NULL);
    natsio_token *t = NULL;
    NT_CHECK_INT_EQ(natsio_client_request_async(c, subj, NULL, "q", 1, 200, &t), NATSIO_OK);
    NT_CHECK_INT_EQ(natsio_token_on_complete(t, on_done, NULL, on_done_release), NATSIO_OK);
    natsio_token_free(t);
    /* Freed before completion: user data released, callback never runs. */
    NT_CHECK(nt_wait_until(done_released, NULL, 2000));
    nt_sleep_ms(500); /* an absence, past the request's 200 ms timeout */
    NT_CHECK_INT_EQ(atomic_load(&g_done.calls), 0);
    NT_CHECK_INT_EQ(atomic_load(&g_done.released), 1);
}

static void test_token_null_arguments(void) {
    NT_CHECK_INT_EQ(natsio_token_wait(NULL, 0), NATSIO_ERR_NULL_ARGUMENT);
    NT_CHECK(!natsio_token_is_done(NULL));
    natsio_token_free(NULL);
}

/* ---- request_many ----------------------------------------------------------- */

/* Starts `n` echo responders on the subject, each on its own client. */
static bool start_responders(int n, const char *subject) {
    for (int i = 0; i < n; i++) {
        natsio_client *c = connect_client();
        if (c == NULL || start_echo(c, subject) == NULL) return false;
    }
    return true;
}

/* request_many options: at most max_msgs replies, a stall and an overall
 * timeout in ms (0: none / the client's request timeout). */
static natsio_request_many_options many_options(int64_t max_msgs, int64_t stall_ms, int64_t timeout_ms) {
    natsio_request_many_options o;
    natsio_request_many_options_init(&o);
    o.max_msgs = max_msgs;
    o.stall_ms = stall_ms;
    o.timeout_ms = timeout_ms;
    return o;
}

/* Reads replies (each next waiting as long as the request's own stall and
 * timeout allow) until a non-OK status; returns the count. */
static int collect_replies(natsio_replies *r, natsio_status *end) {
    int n = 0;
    natsio_msg *m = NULL;
    natsio_status st;
    while ((st = natsio_replies_next(r, NATSIO_TIMEOUT_DEFAULT, &m)) == NATSIO_OK) {
        natsio_msg_free(m);
        n++;
    }
    *end = st;
    return n;
}

static void test_request_many_max_msgs(void) {
    char subj[128];
    natsio_client *c = connect_client();
    NT_CHECK(c != NULL);
    NT_CHECK(start_responders(3, case_subject(subj, sizeof subj, "scatter")));
    natsio_request_many_options o = many_options(2, 0, 5000);
    natsio_replies *r = NULL;
    int64_t start = nt_now_ms();
    NT_CHECK_INT_EQ(natsio_client_request_many(c, subj, NULL, "who", 3, &o, &r), NATSIO_OK);
    nt_cleanup(replies_free_cb, r);
    natsio_status end;
    NT_CHECK_INT_EQ(collect_replies(r, &end), 2);
    NT_CHECK_INT_EQ(end, NATSIO_DONE);
    NT_CHECK_MSG(nt_now_ms() - start < 4000, "ended by the deadline, not max_msgs");
    natsio_msg *m = (natsio_msg *)r;
    NT_CHECK_INT_EQ(natsio_replies_next(r, NATSIO_WAIT_FOREVER, &m), NATSIO_DONE);
    NT_CHECK(m == NULL);
    m = (natsio_msg *)r;
    NT_CHECK_INT_EQ(natsio_replies_next(r, NATSIO_NO_WAIT, &m), NATSIO_DONE);
    NT_CHECK(m == NULL);
}

static void *next_reply_thread(void *arg) {
    natsio_msg *m = NULL;
    natsio_status st = natsio_replies_next((natsio_replies *)arg, NATSIO_WAIT_FOREVER, &m);
    natsio_msg_free(m);
    return (void *)(intptr_t)st;
}

static void test_request_many_closed_from_another_thread(void) {
    char subj[128];
    natsio_client *c = connect_client();
    NT_CHECK(c != NULL);
    /* A subscriber that never answers: next would wait for the 30 s deadline. */
    natsio_sub *silent = subscribe_and_flush(c, case_subject(subj, sizeof subj, "silent"));
    NT_CHECK(silent != NULL);
    natsio_request_many_options o = many_options(0, 0, 30000);
    natsio_replies *r = NULL;
    NT_CHECK_INT_EQ(natsio_client_request_many(c, subj, NULL, "?", 1, &o, &r), NATSIO_OK);
    nt_cleanup(replies_free_cb, r);
    pthread_t t;
    int64_t start = nt_now_ms();
    NT_CHECK(pthread_create(&t, NULL, next_reply_thread, r) == 0);
    nt_sleep_ms(100);
    NT_CHECK_INT_EQ(natsio_replies_stop(r), NATSIO_OK);
    void *ret = NULL;
    pthread_join(t, &ret);
    NT_CHECK_INT_EQ((intptr_t)ret, NATSIO_DONE);
    NT_CHECK_MSG(nt_now_ms() - start < 5000, "next waited out its deadline instead of ending");
    natsio_msg *m = NULL;
    NT_CHECK_INT_EQ(natsio_replies_next(r, 1000, &m), NATSIO_DONE);
    NT_CHECK(m == NULL);
    /* stop is idempotent. */
    NT_CHECK_INT_EQ(natsio_replies_stop(r), NATSIO_OK);
    NT_CHECK_INT_EQ(natsio_replies_stop(NULL), NATSIO_ERR_NULL_ARGUMENT);
}

/* Keeps a clone of the first message a push-mode subscription gets. */
static struct {
    atomic_long calls;
    natsio_msg *first;
} g_raw;

static void keep_first_cb(void *user_data, const natsio_msg *msg, natsio_status status) {
    (void)user_data;
    (void)status;
    if (msg == NULL) return; /* the final call */
    if (atomic_load(&g_raw.calls) == 0) natsio_msg_clone(msg, &g_raw.first);
    atomic_fetch_add(&g_raw.calls, 1);
}

static void test_no_responders_status_as_message_or_error(void) {
    char subj[128], inbox[160];
    atomic_store(&g_raw.calls, 0);
    g_raw.first = NULL;
    natsio_client *c = connect_client();
    NT_CHECK(c != NULL);
    case_subject(subj, sizeof subj, "nobody");
    snprintf(inbox, sizeof inbox, "%s.inbox", subj);
    natsio_sub *sub = subscribe_and_flush(c, inbox);
    NT_CHECK(sub != NULL);
    /* Two requests to nobody: the server answers each with a 503 status. */
    for (int i = 0; i < 2; i++) NT_CHECK_INT_EQ(natsio_client_publish_with(c, subj, inbox, NULL, NULL, 0), NATSIO_OK);
    /* Iterated: the status message is the error it stands for. */
    natsio_msg *m = NULL;
    NT_CHECK_INT_EQ(natsio_sub_next(sub, 5000, &m), NATSIO_ERR_NO_RESPONDERS);
    NT_CHECK(m == NULL);
    /* Push mode delivers status messages raw: the second one, queued. */
    NT_CHECK_INT_EQ(natsio_sub_set_callback(sub, keep_first_cb, NULL, NULL), NATSIO_OK);
    NT_CHECK(wait_at_least(&g_raw.calls, 1, 5000));
    m = g_raw.first;
    NT_CHECK(m != NULL);
    nt_cleanup(msg_free_cb, m);
    NT_CHECK_INT_EQ(natsio_msg_status(m), 503);
    NT_CHECK_STR_EQ(natsio_msg_subject(m), inbox);
    NT_CHECK_INT_EQ(natsio_msg_data_len(m), 0);
}

static void test_request_many_stall(void) {
    char subj[128];
    natsio_client *c = connect_client();
    NT_CHECK(c != NULL);
    NT_CHECK(start_responders(3, case_subject(subj, sizeof subj, "scatter")));
    natsio_request_many_options o = many_options(0, 200, 10000);
    natsio_replies *r = NULL;
    int64_t start = nt_now_ms();
    NT_CHECK_INT_EQ(natsio_client_request_many(c, subj, NULL, "who", 3, &o, &r), NATSIO_OK);
    nt_cleanup(replies_free_cb, r);
    natsio_status end;
    NT_CHECK_INT_EQ(collect_replies(r, &end), 3);
    NT_CHECK_INT_EQ(end, NATSIO_DONE);
    NT_CHECK_MSG(nt_now_ms() - start < 8000, "ended by the deadline, not the stall");
}

static atomic_long g_burst_stop;

/* Responds 20 times, 50 ms apart (1 s in all) unless told to stop. */
static void burst_responder(void *user_data, const natsio_msg *msg, natsio_status status) {
    (void)user_data;
    (void)status;
    if (msg == NULL) return; /* the final call */
    for (int i = 0; i < 20 && !atomic_load(&g_burst_stop); i++) {
        natsio_msg_respond(msg, "tick", 4);
        nt_sleep_ms(50);
    }
}

static void stop_burst(void *unused) {
    (void)unused;
    atomic_store(&g_burst_stop, 1);
}

static void test_request_many_overall_timeout(void) {
    char subj[128];
    atomic_store(&g_burst_stop, 0);
    natsio_client *svc = connect_client();
    natsio_client *c = connect_client();
    NT_CHECK(svc && c);
    natsio_sub *s = NULL;
    NT_CHECK_INT_EQ(subscribe_callback(svc, case_subject(subj, sizeof subj, "burst"), NULL, NULL, burst_responder,
                                       NULL, NULL, &s),
                    NATSIO_OK);
    nt_cleanup(sub_free_cb, s);
    nt_cleanup(stop_burst, NULL);
    NT_CHECK_INT_EQ(natsio_client_flush(svc, 2000), NATSIO_OK);
    natsio_request_many_options o = many_options(0, 0, 300);
    natsio_replies *r = NULL;
    NT_CHECK_INT_EQ(natsio_client_request_many(c, subj, NULL, NULL, 0, &o, &r), NATSIO_OK);
    nt_cleanup(replies_free_cb, r);
    natsio_status end;
    int n = collect_replies(r, &end);
    NT_CHECK_INT_EQ(end, NATSIO_DONE);
    /* Some ticks arrived; the deadline cut the 20-tick burst short. */
    NT_CHECK(n >= 1);
    NT_CHECK_MSG(n < 20, "got %d replies", n);
}

static void test_request_many_no_responders(void) {
    char subj[128];
    natsio_client *c = connect_client();
    NT_CHECK(c != NULL);
    natsio_request_many_options o = many_options(5, 1000, 10000);
    natsio_replies *r = NULL;
    int64_t start = nt_now_ms();
    NT_CHECK_INT_EQ(natsio_client_request_many(c, case_subject(subj, sizeof subj, "nobody"), NULL, "?", 1, &o, &r),
                    NATSIO_OK);
    nt_cleanup(replies_free_cb, r);
    natsio_msg *m = NULL;
    NT_CHECK_INT_EQ(natsio_replies_next(r, NATSIO_TIMEOUT_DEFAULT, &m), NATSIO_DONE);
    NT_CHECK(m == NULL);
    NT_CHECK_MSG(nt_now_ms() - start < 5000, "no-responders should end it at once");
}

static void test_request_many_default_options(void) {
    char subj[128];
    natsio_options *opts = NULL;
    NT_CHECK_INT_EQ(natsio_options_new(&opts), NATSIO_OK);
    natsio_options_set_url(opts, nt_server_url(g_server));
    natsio_options_set_request_timeout_ms(opts, 300);
    natsio_client *c = NULL;
    natsio_status st = natsio_client_connect(opts, &c);
    natsio_options_free(opts);
    NT_CHECK_INT_EQ(st, NATSIO_OK);
    nt_cleanup(client_free_cb, c);
    NT_CHECK(start_responders(2, case_subject(subj, sizeof subj, "scatter")));
    natsio_replies *r = NULL;
    /* NULL options: no count limit, no stall, the client's request timeout. */
    NT_CHECK_INT_EQ(natsio_client_request_many(c, subj, NULL, "?", 1, NULL, &r), NATSIO_OK);
    nt_cleanup(replies_free_cb, r);
    natsio_status end;
    NT_CHECK_INT_EQ(collect_replies(r, &end), 2);
    NT_CHECK_INT_EQ(end, NATSIO_DONE);
}

/* ---- concurrency and re-entrancy -------------------------------------------- */

enum { THREADS = 4, PER_THREAD = 50 };

typedef struct {
    natsio_client *client;
    const char *subject;
    int id;
    int ok;
    int wrong;
    natsio_status first_error;
} requester;

static void *request_loop(void *arg) {
    requester *r = (requester *)arg;
    for (int i = 0; i < PER_THREAD; i++) {
        char body[32];
        int len = snprintf(body, sizeof body, "t%d-%d", r->id, i);
        natsio_msg *reply = NULL;
        natsio_status st = natsio_client_request(r->client, r->subject, NULL, body, (size_t)len, 5000, &reply);
        if (st != NATSIO_OK) {
            if (r->first_error == NATSIO_OK) r->first_error = st;
            continue;
        }
        if (natsio_msg_data_len(reply) == (size_t)len && memcmp(natsio_msg_data(reply), body, (size_t)len) == 0)
            r->ok++;
        else
            r->wrong++;
        natsio_msg_free(reply);
    }
    return NULL;
}

/* THREADS threads each make PER_THREAD requests on c; each gets its own replies. */
static void requests_from_threads(natsio_client *c, const char *subj) {
    pthread_t threads[THREADS];
    requester work[THREADS];
    for (int i = 0; i < THREADS; i++) {
        work[i] = (requester){c, subj, i, 0, 0, NATSIO_OK};
        NT_CHECK(pthread_create(&threads[i], NULL, request_loop, &work[i]) == 0);
    }
    for (int i = 0; i < THREADS; i++) pthread_join(threads[i], NULL);
    for (int i = 0; i < THREADS; i++) {
        NT_CHECK_INT_EQ(work[i].first_error, NATSIO_OK);
        NT_CHECK_INT_EQ(work[i].wrong, 0);
        NT_CHECK_INT_EQ(work[i].ok, PER_THREAD);
    }
}

static void test_concurrent_requests_get_own_replies(void) {
    char subj[128];
    natsio_client *svc = connect_client();
    natsio_client *c = connect_client();
    NT_CHECK(svc && c);
    NT_CHECK(start_echo(svc, case_subject(subj, sizeof subj, "echo")) != NULL);
    requests_from_threads(c, subj);
}

/* The wait spin (natsio_runtime_set_wait_spin_us) changes how a blocked
 * thread waits, never what it gets: with spinning off, at the default and
 * far longer than any timeout here, requests from several threads get
 * their own replies, and a timeout shorter than the spin is still kept
 * (by a request, a token wait and a subscription's next). The setting reads
 * back through natsio_runtime_wait_spin_us. */
static void test_wait_spin_keeps_replies_and_timeouts(void) {
    char subj[128], silent_subj[128];
    natsio_client *svc = connect_client();
    natsio_client *c = connect_client();
    NT_CHECK(svc && c);
    NT_CHECK(start_echo(svc, case_subject(subj, sizeof subj, "echo")) != NULL);
    natsio_sub *silent = start_silent(c, case_subject(silent_subj, sizeof silent_subj, "silent"));
    NT_CHECK(silent != NULL);
    static const uint32_t spins_us[] = {0, 200, 5000000};
    for (size_t k = 0; k < sizeof spins_us / sizeof spins_us[0]; k++) {
        natsio_runtime_set_wait_spin_us(spins_us[k]);
        /* Read back as set (what a binding spinning on its own loop uses),
         * or 0 where nothing spins (a single CPU). */
        uint32_t spin_read = natsio_runtime_wait_spin_us();
        NT_CHECK(spin_read == spins_us[k] || (spin_read == 0 && spins_us[k] != 0));
        requests_from_threads(c, subj);

        natsio_msg *reply = NULL;
        int64_t start = nt_now_ms();
        NT_CHECK_INT_EQ(natsio_client_request(c, silent_subj, NULL, "?", 1, 100, &reply), NATSIO_ERR_TIMEOUT);
        natsio_token *tok = NULL;
        NT_CHECK_INT_EQ(natsio_client_request_async(c, silent_subj, NULL, "?", 1, 2000, &tok), NATSIO_OK);
        NT_CHECK_INT_EQ(natsio_token_wait(tok, 0), NATSIO_ERR_TIMEOUT);
        NT_CHECK_INT_EQ(natsio_token_wait(tok, 100), NATSIO_ERR_TIMEOUT);
        natsio_token_free(tok);
        /* The silent subscriber holds the requests above: drain them. */
        natsio_msg *m = NULL;
        while (natsio_sub_next(silent, 0, &m) == NATSIO_OK) natsio_msg_free(m);
        NT_CHECK_INT_EQ(natsio_sub_next(silent, 100, &m), NATSIO_ERR_TIMEOUT);
        /* Three 100 ms timeouts, each kept: far from a 5 s spin. */
        NT_CHECK(nt_now_ms() - start < 2500);
    }
    natsio_runtime_set_wait_spin_us(200);
}

static void *set_flag_later(void *arg) {
    nt_sleep_ms(20);
    __atomic_store_n((bool *)arg, true, __ATOMIC_RELEASE);
    return NULL;
}

/* natsio_runtime_spin_until_set, the spin a binding runs in steps on its
 * own event loop: it sees a flag another thread sets, ends at its own
 * bound when the wait spin is longer, and declines (so the caller sleeps)
 * with spinning off or a NULL flag. A spin the application set is never
 * skipped for the load (natsio_runtime_wait_spin_skipped; the Go suite
 * shows it skipped beside busy loops). */
static void test_spin_until_set(void) {
    bool flag = false;
    NT_CHECK_INT_EQ(natsio_runtime_spin_until_set(NULL, 100), NATSIO_SPIN_DECLINED);
    natsio_runtime_set_wait_spin_us(0);
    NT_CHECK(!natsio_runtime_wait_spin_skipped());
    NT_CHECK_INT_EQ(natsio_runtime_spin_until_set(&flag, 100), NATSIO_SPIN_DECLINED);
    __atomic_store_n(&flag, true, __ATOMIC_RELEASE);
    NT_CHECK_INT_EQ(natsio_runtime_spin_until_set(&flag, 100), NATSIO_SPIN_SET);
    __atomic_store_n(&flag, false, __ATOMIC_RELEASE);

    natsio_runtime_set_wait_spin_us(5000000);
    NT_CHECK(!natsio_runtime_wait_spin_skipped());
    if (natsio_runtime_wait_spin_us() > 0) { /* more than one CPU */
        int64_t start = nt_now_ms();
        NT_CHECK_INT_EQ(natsio_runtime_spin_until_set(&flag, 50), NATSIO_SPIN_TIMED_OUT);
        NT_CHECK(nt_now_ms() - start < 2500); /* 50 us, not the 5 s spin */

        pthread_t setter;
        NT_CHECK(pthread_create(&setter, NULL, set_flag_later, &flag) == 0);
        start = nt_now_ms();
        NT_CHECK_INT_EQ(natsio_runtime_spin_until_set(&flag, 5000000), NATSIO_SPIN_SET);
        NT_CHECK(nt_now_ms() - start < 2500);
        pthread_join(setter, NULL);
    }
    natsio_runtime_set_wait_spin_us(200);
}

static void test_requests_after_close(void) {
    char subj[128];
    natsio_client *c = connect_client();
    NT_CHECK(c != NULL);
    NT_CHECK(start_echo(c, case_subject(subj, sizeof subj, "echo")) != NULL);
    NT_CHECK_INT_EQ(natsio_client_close(c), NATSIO_OK);
    natsio_msg *reply = NULL;
    NT_CHECK_INT_EQ(natsio_client_request(c, subj, NULL, "?", 1, 1000, &reply), NATSIO_ERR_CONNECTION_CLOSED);
    natsio_token *t = NULL;
    NT_CHECK_INT_EQ(natsio_client_request_async(c, subj, NULL, "?", 1, 1000, &t), NATSIO_ERR_CONNECTION_CLOSED);
    NT_CHECK(t == NULL);
    natsio_replies *r = NULL;
    NT_CHECK_INT_EQ(natsio_client_request_many(c, subj, NULL, "?", 1, NULL, &r), NATSIO_ERR_CONNECTION_CLOSED);
    NT_CHECK(r == NULL);
}

static void test_pending_request_fails_on_close(void) {
    char subj[128];
    natsio_client *c = connect_client();
    NT_CHECK(c != NULL);
    NT_CHECK(start_silent(c, case_subject(subj, sizeof subj, "silent")) != NULL);
    natsio_token *t = NULL;
    NT_CHECK_INT_EQ(natsio_client_request_async(c, subj, NULL, "?", 1, 30000, &t), NATSIO_OK);
    nt_cleanup(token_free_cb, t);
    NT_CHECK_INT_EQ(natsio_client_close(c), NATSIO_OK);
    NT_CHECK_INT_EQ(natsio_token_wait(t, 2000), NATSIO_OK);
    NT_CHECK_INT_EQ(natsio_token_status(t), NATSIO_ERR_CONNECTION_CLOSED);
}

static struct {
    natsio_client *client;
    char subject[128];
    atomic_long status;
    atomic_long ok_payload;
    atomic_long done;
} g_nested;

/* A message callback that makes a blocking request through the same client. */
static void nested_request_cb(void *user_data, const natsio_msg *msg, natsio_status status) {
    (void)user_data;
    (void)status;
    if (msg == NULL) return; /* the final call */
    natsio_msg *reply = NULL;
    natsio_status st = natsio_client_request(g_nested.client, g_nested.subject, NULL, "inner", 5, 5000, &reply);
    atomic_store(&g_nested.status, st);
    if (st == NATSIO_OK)
        atomic_store(&g_nested.ok_payload,
                     natsio_msg_data_len(reply) == 5 && memcmp(natsio_msg_data(reply), "inner", 5) == 0);
    natsio_msg_free(reply);
    atomic_fetch_add(&g_nested.done, 1);
}

static void test_blocking_request_inside_callback(void) {
    char trigger[128];
    atomic_store(&g_nested.status, -1);
    atomic_store(&g_nested.ok_payload, 0);
    atomic_store(&g_nested.done, 0);
    natsio_client *c = connect_client();
    NT_CHECK(c != NULL);
    g_nested.client = c;
    NT_CHECK(start_echo(c, case_subject(g_nested.subject, sizeof g_nested.subject, "echo")) != NULL);
    natsio_sub *s = NULL;
    NT_CHECK_INT_EQ(subscribe_callback(c, case_subject(trigger, sizeof trigger, "trigger"), NULL, NULL,
                                       nested_request_cb, NULL, NULL, &s),
                    NATSIO_OK);
    nt_cleanup(sub_free_cb, s);
    NT_CHECK_INT_EQ(natsio_client_publish(c, trigger, "go", 2), NATSIO_OK);
    NT_CHECK(wait_at_least(&g_nested.done, 1, 8000));
    NT_CHECK_INT_EQ(atomic_load(&g_nested.status), NATSIO_OK);
    NT_CHECK(atomic_load(&g_nested.ok_payload));
}

int main(int argc, char **argv) {
    static const nt_case cases[] = {
        NT_CASE(test_request_reply),
        NT_CASE(test_request_and_respond_with_headers),
        NT_CASE(test_no_responders_fails_fast),
        NT_CASE(test_timeout_when_nobody_answers),
        NT_CASE(test_request_timeout_option),
        NT_CASE(test_respond_without_reply_subject),
        NT_CASE(test_client_respond_to_a_copied_reply_subject),
        NT_CASE(test_request_async_wait_poll_msg),
        NT_CASE(test_token_on_complete_callback),
        NT_CASE(test_token_on_complete_after_completion),
        NT_CASE(test_token_cancel),
        NT_CASE(test_token_free_with_pending_callback),
        NT_CASE(test_token_null_arguments),
        NT_CASE(test_request_many_max_msgs),
        NT_CASE(test_request_many_stall),
        NT_CASE(test_request_many_overall_timeout),
        NT_CASE(test_request_many_no_responders),
        NT_CASE(test_request_many_default_options),
        NT_CASE(test_concurrent_requests_get_own_replies),
        NT_CASE(test_wait_spin_keeps_replies_and_timeouts),
        NT_CASE(test_spin_until_set),
        NT_CASE(test_requests_after_close),
        NT_CASE(test_pending_request_fails_on_close),
        NT_CASE(test_blocking_request_inside_callback),
        NT_CASE(test_request_many_closed_from_another_thread),
        NT_CASE(test_no_responders_status_as_message_or_error),
    };
    return run_cases_with_shared_server(argc, argv, "request", cases, NT_COUNT(cases));
}
