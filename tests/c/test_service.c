/*
 * Services (ADR-32) through the C ABI against a real nats-server: endpoints
 * in push and iterator mode, groups and queue groups, the monitoring
 * subjects read through natsio_client_service_discover, error replies,
 * failing handlers, stop, and bad input.
 */
#define _POSIX_C_SOURCE 200809L

#include "harness.h"
#include "util.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void service_free_cb(void *s) { natsio_service_free(s); }
static void endpoint_free_cb(void *e) { natsio_endpoint_free(e); }
static void group_free_cb(void *g) { natsio_service_group_free(g); }

/* A service on `c` from `config` (freed when the case ends). */
static natsio_service *add_service(natsio_client *c, const char *config) {
    natsio_service *s = NULL;
    natsio_status st = natsio_client_add_service(c, config, &s);
    if (st != NATSIO_OK) {
        nt_fail_at(__FILE__, __LINE__, "add_service: %s (%s)", natsio_status_str(st), natsio_last_error());
        return NULL;
    }
    nt_cleanup(service_free_cb, s);
    return s;
}

static natsio_endpoint *add_endpoint(natsio_service *s, natsio_service_group *g, const char *config) {
    natsio_endpoint *e = NULL;
    natsio_status st = natsio_service_add_endpoint(s, g, config, &e);
    if (st != NATSIO_OK) {
        nt_fail_at(__FILE__, __LINE__, "add_endpoint: %s (%s)", natsio_status_str(st), natsio_last_error());
        return NULL;
    }
    nt_cleanup(endpoint_free_cb, e);
    return e;
}

/* Echoes the request's payload; "fail" makes the handler fail. */
static natsio_status echo_handler(void *ud, const natsio_service_request *req, natsio_status status) {
    atomic_long *calls = ud;
    if (req == NULL) return status; /* the final call */
    if (calls) atomic_fetch_add(calls, 1);
    const natsio_msg *m = natsio_service_request_msg(req);
    if (span_eq(natsio_msg_data(m), natsio_msg_data_len(m), "fail")) return NATSIO_ERR_INVALID_ARGUMENT;
    /* A C enum holds any int: a status the library does not know. */
    if (span_eq(natsio_msg_data(m), natsio_msg_data_len(m), "weird")) return (natsio_status)12345;
    return natsio_service_request_respond(req, NULL, natsio_msg_data(m), natsio_msg_data_len(m));
}

/* The replies of one discover call, each JSON document appended to buf
 * separated by newlines; the number of replies. */
static int discover(natsio_client *c, natsio_service_verb verb, const char *name, const char *id, char *buf,
                    size_t cap) {
    natsio_request_many_options o;
    natsio_request_many_options_init(&o);
    o.stall_ms = 300;
    o.timeout_ms = 5000;
    natsio_replies *r = NULL;
    if (natsio_client_service_discover(c, (int32_t)verb, name, id, &o, &r) != NATSIO_OK) return -1;
    int n = 0;
    buf[0] = '\0';
    natsio_msg *m = NULL;
    while (natsio_replies_next(r, NATSIO_WAIT_FOREVER, &m) == NATSIO_OK) {
        size_t used = strlen(buf), len = natsio_msg_data_len(m);
        if (used + len + 2 < cap) {
            memcpy(buf + used, natsio_msg_data(m), len);
            buf[used + len] = '\n';
            buf[used + len + 1] = '\0';
        }
        natsio_msg_free(m);
        n++;
    }
    natsio_replies_free(r);
    return n;
}

static void test_echo_service_in_a_group_is_discovered(void) {
    natsio_client *c = connect_client();
    natsio_client *requester = connect_client();
    NT_CHECK(c && requester);
    natsio_service *s = add_service(c, "{\"name\":\"cecho\",\"version\":\"1.0.0\",\"description\":\"echo in C\","
                                       "\"metadata\":{\"lang\":\"c\"}}");
    NT_CHECK(s != NULL);
    NT_CHECK_STR_EQ(natsio_service_name(s), "cecho");
    NT_CHECK_STR_EQ(natsio_service_version(s), "1.0.0");
    NT_CHECK(strlen(natsio_service_id(s)) == 22);
    natsio_service_group *g = NULL;
    NT_CHECK_INT_EQ(natsio_service_add_group(s, NULL, "{\"name\":\"cecho.v1\",\"queue_group\":\"workers\"}", &g),
                    NATSIO_OK);
    nt_cleanup(group_free_cb, g);
    natsio_endpoint *echo = add_endpoint(s, g, "{\"name\":\"echo\",\"metadata\":{\"kind\":\"copy\"}}");
    natsio_endpoint *upper = add_endpoint(s, g, "{\"name\":\"shout\",\"subject\":\"loud\",\"queue_group\":\"own\"}");
    NT_CHECK(echo && upper);
    NT_CHECK_STR_EQ(natsio_endpoint_subject(echo), "cecho.v1.echo");
    NT_CHECK_STR_EQ(natsio_endpoint_queue_group(echo), "workers");
    NT_CHECK_STR_EQ(natsio_endpoint_subject(upper), "cecho.v1.loud");
    NT_CHECK_STR_EQ(natsio_endpoint_queue_group(upper), "own");
    static atomic_long calls;
    atomic_store(&calls, 0);
    NT_CHECK_INT_EQ(natsio_endpoint_set_callback(echo, echo_handler, &calls, NULL), NATSIO_OK);
    NT_CHECK_INT_EQ(natsio_endpoint_set_callback(upper, echo_handler, NULL, NULL), NATSIO_OK);
    NT_CHECK_INT_EQ(natsio_client_flush(c, NATSIO_TIMEOUT_DEFAULT), NATSIO_OK);

    for (int i = 0; i < 5; i++) {
        natsio_msg *r = NULL;
        NT_CHECK_INT_EQ(natsio_client_request(requester, "cecho.v1.echo", NULL, "ping", 4, 5000, &r), NATSIO_OK);
        NT_CHECK(span_eq(natsio_msg_data(r), natsio_msg_data_len(r), "ping"));
        natsio_msg_free(r);
    }
    NT_CHECK_INT_EQ(atomic_load(&calls), 5);

    char buf[8192], want[64];
    NT_CHECK_INT_EQ(discover(requester, NATSIO_SERVICE_PING, "cecho", NULL, buf, sizeof buf), 1);
    NT_CHECK(strstr(buf, "\"type\":\"io.nats.micro.v1.ping_response\"") != NULL);
    snprintf(want, sizeof want, "\"id\":\"%s\"", natsio_service_id(s));
    NT_CHECK(strstr(buf, want) != NULL);
    NT_CHECK(strstr(buf, "\"metadata\":{\"lang\":\"c\"}") != NULL);
    NT_CHECK_INT_EQ(discover(requester, NATSIO_SERVICE_INFO, "cecho", natsio_service_id(s), buf, sizeof buf), 1);
    NT_CHECK(strstr(buf, "\"description\":\"echo in C\"") != NULL);
    NT_CHECK(strstr(buf, "{\"name\":\"echo\",\"subject\":\"cecho.v1.echo\",\"queue_group\":\"workers\","
                         "\"metadata\":{\"kind\":\"copy\"}}") != NULL);
    NT_CHECK(strstr(buf, "{\"name\":\"shout\",\"subject\":\"cecho.v1.loud\",\"queue_group\":\"own\","
                         "\"metadata\":null}") != NULL);
    NT_CHECK_INT_EQ(discover(requester, NATSIO_SERVICE_STATS, "cecho", NULL, buf, sizeof buf), 1);
    NT_CHECK(strstr(buf, "\"type\":\"io.nats.micro.v1.stats_response\"") != NULL);
    int64_t n = 0;
    NT_CHECK(json_int(buf, "num_requests", &n));
    NT_CHECK_INT_EQ(n, 5); /* the first endpoint's: echo */

    /* The service's own view, then reset. */
    char *json = NULL;
    NT_CHECK_INT_EQ(natsio_service_stats_json(s, &json), NATSIO_OK);
    NT_CHECK(json_int(json, "num_requests", &n) && n == 5);
    natsio_string_free(json);
    NT_CHECK_INT_EQ(natsio_service_reset(s), NATSIO_OK);
    NT_CHECK_INT_EQ(natsio_endpoint_stats_json(echo, &json), NATSIO_OK);
    NT_CHECK(json_int(json, "num_requests", &n) && n == 0);
    natsio_string_free(json);
}

/* ---- errors --------------------------------------------------------------- */

static struct {
    atomic_long calls;
    atomic_int code;
    char endpoint[64];
    char description[128];
} g_errors;

static void on_error(void *ud, const char *endpoint, const char *subject, int32_t code, const char *description) {
    (void)ud;
    (void)subject;
    snprintf(g_errors.endpoint, sizeof g_errors.endpoint, "%s", endpoint);
    snprintf(g_errors.description, sizeof g_errors.description, "%s", description);
    atomic_store(&g_errors.code, code);
    atomic_fetch_add(&g_errors.calls, 1);
}

static natsio_status answer_bad_request(void *ud, const natsio_service_request *req, natsio_status status) {
    (void)ud;
    if (req == NULL) return status;
    return natsio_service_request_respond_error(req, 422, "unprocessable", NULL, "details", 7);
}

static void test_error_replies_and_failing_handlers(void) {
    natsio_client *c = connect_client();
    NT_CHECK(c != NULL);
    natsio_service *s = add_service(c, "{\"name\":\"cfail\",\"version\":\"0.1.0-rc.1+build.5\"}");
    NT_CHECK(s != NULL);
    atomic_store(&g_errors.calls, 0);
    NT_CHECK_INT_EQ(natsio_service_set_error_callback(s, on_error, NULL, NULL), NATSIO_OK);
    natsio_endpoint *bad = add_endpoint(s, NULL, "{\"name\":\"bad\",\"subject\":\"cfail.bad\"}");
    natsio_endpoint *flaky = add_endpoint(s, NULL, "{\"name\":\"flaky\",\"subject\":\"cfail.flaky\"}");
    NT_CHECK(bad && flaky);
    NT_CHECK_INT_EQ(natsio_endpoint_set_callback(bad, answer_bad_request, NULL, NULL), NATSIO_OK);
    NT_CHECK_INT_EQ(natsio_endpoint_set_callback(flaky, echo_handler, NULL, NULL), NATSIO_OK);
    NT_CHECK_INT_EQ(natsio_client_flush(c, NATSIO_TIMEOUT_DEFAULT), NATSIO_OK);

    natsio_msg *r = NULL;
    const char *v = NULL;
    NT_CHECK_INT_EQ(natsio_client_request(c, "cfail.bad", NULL, "x", 1, 5000, &r), NATSIO_OK);
    NT_CHECK_INT_EQ(natsio_headers_get(natsio_msg_headers(r), "Nats-Service-Error", &v), NATSIO_OK);
    NT_CHECK_STR_EQ(v, "unprocessable");
    NT_CHECK_INT_EQ(natsio_headers_get(natsio_msg_headers(r), "Nats-Service-Error-Code", &v), NATSIO_OK);
    NT_CHECK_STR_EQ(v, "422");
    NT_CHECK(span_eq(natsio_msg_data(r), natsio_msg_data_len(r), "details"));
    natsio_msg_free(r);

    /* A handler returning an error status: a 500 reply, the error callback. */
    NT_CHECK_INT_EQ(natsio_client_request(c, "cfail.flaky", NULL, "fail", 4, 5000, &r), NATSIO_OK);
    NT_CHECK_INT_EQ(natsio_headers_get(natsio_msg_headers(r), "Nats-Service-Error-Code", &v), NATSIO_OK);
    NT_CHECK_STR_EQ(v, "500");
    natsio_msg_free(r);
    NT_CHECK(wait_at_least(&g_errors.calls, 1, 5000));
    NT_CHECK_STR_EQ(g_errors.endpoint, "flaky");
    NT_CHECK_INT_EQ(atomic_load(&g_errors.code), 500);
    NT_CHECK(strstr(g_errors.description, "invalid argument") != NULL);
    /* ... and the next request is served. */
    NT_CHECK_INT_EQ(natsio_client_request(c, "cfail.flaky", NULL, "ok", 2, 5000, &r), NATSIO_OK);
    NT_CHECK(natsio_msg_headers(r) == NULL);
    natsio_msg_free(r);

    char *json = NULL;
    int64_t n = 0;
    NT_CHECK_INT_EQ(natsio_endpoint_stats_json(flaky, &json), NATSIO_OK);
    NT_CHECK(json_int(json, "num_requests", &n) && n == 2);
    NT_CHECK(json_int(json, "num_errors", &n) && n == 1);
    NT_CHECK(strstr(json, "\"last_error\":\"500:handler failed: invalid argument\"") != NULL);
    natsio_string_free(json);
    /* A status outside natsio_status is a failure like any other. */
    NT_CHECK_INT_EQ(natsio_client_request(c, "cfail.flaky", NULL, "weird", 5, 5000, &r), NATSIO_OK);
    NT_CHECK_INT_EQ(natsio_headers_get(natsio_msg_headers(r), "Nats-Service-Error-Code", &v), NATSIO_OK);
    NT_CHECK_STR_EQ(v, "500");
    natsio_msg_free(r);
    NT_CHECK_INT_EQ(natsio_endpoint_stats_json(flaky, &json), NATSIO_OK);
    NT_CHECK(strstr(json, "\"last_error\":\"500:handler failed: unknown status code\"") != NULL);
    natsio_string_free(json);
    NT_CHECK_INT_EQ(natsio_endpoint_stats_json(bad, &json), NATSIO_OK);
    NT_CHECK(strstr(json, "\"last_error\":\"422:unprocessable\"") != NULL);
    natsio_string_free(json);
}

/* ---- iterator mode, answering later from another thread ------------------- */

static void *answer_later(void *arg) {
    natsio_service_request *req = arg;
    const natsio_msg *m = natsio_service_request_msg(req);
    natsio_service_request_respond(req, NULL, natsio_msg_data(m), natsio_msg_data_len(m));
    natsio_service_request_free(req);
    return NULL;
}

static char *stats_data(void *ud, const char *endpoint, const char *subject) {
    (void)ud;
    (void)subject;
    char buf[128];
    snprintf(buf, sizeof buf, "{\"endpoint\":\"%s\",\"cache\":7}", endpoint);
    return strdup(buf);
}

static void test_iterator_endpoint_answered_from_another_thread(void) {
    natsio_client *c = connect_client();
    natsio_client *requester = connect_client();
    NT_CHECK(c && requester);
    natsio_service *s = add_service(c, "{\"name\":\"citer\",\"version\":\"2.0.0\",\"queue_group_disabled\":true}");
    NT_CHECK(s != NULL);
    natsio_endpoint *e = add_endpoint(s, NULL, "{\"name\":\"work\",\"subject\":\"citer.*\"}");
    NT_CHECK(e != NULL);
    NT_CHECK(natsio_endpoint_queue_group(e) == NULL);
    NT_CHECK_INT_EQ(natsio_client_flush(c, NATSIO_TIMEOUT_DEFAULT), NATSIO_OK);

    natsio_token *pending = NULL;
    NT_CHECK_INT_EQ(natsio_client_request_async(requester, "citer.a", NULL, "one", 3, 5000, &pending), NATSIO_OK);
    nt_cleanup(token_free_cb, pending);
    natsio_service_request *req = NULL;
    NT_CHECK_INT_EQ(natsio_endpoint_next(e, 5000, &req), NATSIO_OK);
    NT_CHECK_STR_EQ(natsio_msg_subject(natsio_service_request_msg(req)), "citer.a");
    pthread_t t;
    NT_CHECK(pthread_create(&t, NULL, answer_later, req) == 0);
    pthread_join(t, NULL);
    NT_CHECK_INT_EQ(token_outcome(pending, 5000), NATSIO_OK);

    /* The token form. */
    natsio_token *next = NULL;
    NT_CHECK_INT_EQ(natsio_endpoint_next_async(e, &next), NATSIO_OK);
    nt_cleanup(token_free_cb, next);
    natsio_msg *r = NULL;
    natsio_token *second = NULL;
    NT_CHECK_INT_EQ(natsio_client_request_async(requester, "citer.b", NULL, "two", 3, 5000, &second), NATSIO_OK);
    nt_cleanup(token_free_cb, second);
    NT_CHECK_INT_EQ(token_outcome(next, 5000), NATSIO_OK);
    NT_CHECK_INT_EQ(natsio_token_service_request(next, &req), NATSIO_OK);
    natsio_service_request *copy = NULL;
    NT_CHECK_INT_EQ(natsio_service_request_clone(req, &copy), NATSIO_OK);
    natsio_service_request_free(req);
    NT_CHECK_INT_EQ(natsio_service_request_respond(copy, NULL, "2", 1), NATSIO_OK);
    natsio_service_request_free(copy);
    NT_CHECK_INT_EQ(token_outcome(second, 5000), NATSIO_OK);
    NT_CHECK_INT_EQ(natsio_token_msg(second, &r), NATSIO_OK);
    NT_CHECK(span_eq(natsio_msg_data(r), natsio_msg_data_len(r), "2"));
    natsio_msg_free(r);

    /* Stats data from the callback, in STATS. */
    NT_CHECK_INT_EQ(natsio_service_set_stats_callback(s, stats_data, NULL, NULL), NATSIO_OK);
    char buf[4096];
    NT_CHECK_INT_EQ(discover(requester, NATSIO_SERVICE_STATS, "citer", NULL, buf, sizeof buf), 1);
    /* The handler's JSON as it gave it, keys in its order. */
    NT_CHECK_MSG(strstr(buf, "\"data\":{\"endpoint\":\"work\",\"cache\":7}") != NULL, "%s", buf);
    NT_CHECK(strstr(buf, "\"queue_group\":\"\"") != NULL);
    int64_t n = 0;
    NT_CHECK(json_int(buf, "num_requests", &n) && n == 2);
}

/* ---- stop ------------------------------------------------------------------ */

static void test_stop_drains_then_refuses(void) {
    natsio_client *c = connect_client();
    natsio_client *requester = connect_client();
    NT_CHECK(c && requester);
    natsio_service *s = add_service(c, "{\"name\":\"cstop\",\"version\":\"1.0.0\"}");
    natsio_endpoint *e = add_endpoint(s, NULL, "{\"name\":\"cstop\"}");
    NT_CHECK(s && e);
    NT_CHECK_INT_EQ(natsio_client_flush(c, NATSIO_TIMEOUT_DEFAULT), NATSIO_OK);
    natsio_token *pending = NULL;
    NT_CHECK_INT_EQ(natsio_client_request_async(requester, "cstop", NULL, "in flight", 9, 5000, &pending), NATSIO_OK);
    nt_cleanup(token_free_cb, pending);
    endpoint_counts one_queued = {e, 0, 1};
    NT_CHECK(nt_wait_until(endpoint_counts_are, &one_queued, 5000));
    natsio_token *stopped = NULL;
    NT_CHECK_INT_EQ(natsio_service_stop_async(s, &stopped), NATSIO_OK);
    nt_cleanup(token_free_cb, stopped);
    natsio_service_request *req = NULL;
    NT_CHECK_INT_EQ(natsio_endpoint_next(e, 5000, &req), NATSIO_OK);
    NT_CHECK_INT_EQ(natsio_service_request_respond(req, NULL, "done", 4), NATSIO_OK);
    natsio_service_request_free(req);
    NT_CHECK_INT_EQ(natsio_endpoint_next(e, 5000, &req), NATSIO_DONE);
    NT_CHECK(req == NULL);
    NT_CHECK_INT_EQ(token_outcome(stopped, 5000), NATSIO_OK);
    NT_CHECK(natsio_service_is_stopped(s));
    NT_CHECK_INT_EQ(token_outcome(pending, 5000), NATSIO_OK);
    natsio_msg *r = NULL;
    NT_CHECK_INT_EQ(natsio_client_request(requester, "cstop", NULL, "x", 1, 5000, &r), NATSIO_ERR_NO_RESPONDERS);
    natsio_endpoint *late = NULL;
    NT_CHECK_INT_EQ(natsio_service_add_endpoint(s, NULL, "{\"name\":\"late\"}", &late), NATSIO_ERR_ILLEGAL_STATE);
    NT_CHECK_INT_EQ(natsio_service_stop(s, 1000), NATSIO_OK); /* again: at once */
}

/* ---- pending limits --------------------------------------------------------- */

/* A push-mode endpoint handler that holds its first request until
 * released, and records the payloads it answers. */
typedef struct {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int calls;
    bool released;
    char seen[64];
} held_handler;

static natsio_status hold_first_then_record(void *ud, const natsio_service_request *req, natsio_status status) {
    held_handler *h = ud;
    if (req == NULL) return status;
    const natsio_msg *m = natsio_service_request_msg(req);
    pthread_mutex_lock(&h->mu);
    h->calls++;
    pthread_cond_broadcast(&h->cv);
    while (!h->released) pthread_cond_wait(&h->cv, &h->mu);
    size_t used = strlen(h->seen);
    snprintf(h->seen + used, sizeof h->seen - used, "%.*s,", (int)natsio_msg_data_len(m),
             (const char *)natsio_msg_data(m));
    pthread_mutex_unlock(&h->mu);
    return natsio_service_request_respond(req, NULL, "ok", 2);
}

static bool handler_holds_one(void *arg) {
    held_handler *h = arg;
    pthread_mutex_lock(&h->mu);
    bool one = h->calls == 1;
    pthread_mutex_unlock(&h->mu);
    return one;
}

static bool handler_saw_two(void *arg) {
    held_handler *h = arg;
    pthread_mutex_lock(&h->mu);
    bool two = h->calls == 2 && strlen(h->seen) == strlen("r0,r1,");
    pthread_mutex_unlock(&h->mu);
    return two;
}

static void release_handler(held_handler *h) {
    pthread_mutex_lock(&h->mu);
    h->released = true;
    pthread_cond_broadcast(&h->cv);
    pthread_mutex_unlock(&h->mu);
}

/* An endpoint's pending limits (nats.go's WithEndpointPendingLimits): the
 * requests over them are dropped, counted as the endpoint's errors and told
 * to the error callback; another endpoint keeps the defaults. */
static void test_endpoint_pending_limits_drop_and_report(void) {
    natsio_client *c = connect_client();
    natsio_client *requester = connect_client();
    NT_CHECK(c && requester);
    natsio_service *s = add_service(c, "{\"name\":\"climits\",\"version\":\"1.0.0\"}");
    NT_CHECK(s != NULL);
    atomic_store(&g_errors.calls, 0);
    NT_CHECK_INT_EQ(natsio_service_set_error_callback(s, on_error, NULL, NULL), NATSIO_OK);
    natsio_endpoint *held = add_endpoint(s, NULL,
                                         "{\"name\":\"held\",\"subject\":\"climits.held\","
                                         "\"pending_msgs_limit\":2,\"pending_bytes_limit\":-1}");
    natsio_endpoint *open = add_endpoint(s, NULL, "{\"name\":\"open\",\"subject\":\"climits.open\"}");
    NT_CHECK(held && open);
    NT_CHECK_INT_EQ(natsio_client_flush(c, NATSIO_TIMEOUT_DEFAULT), NATSIO_OK);

    /* Nobody reads: of 5 requests 2 queue and 3 are dropped. */
    NT_CHECK(publish_requests(requester, "climits.held", "climits.reply", 0, 5));
    NT_CHECK(publish_requests(requester, "climits.open", "climits.reply", 0, 5));
    NT_CHECK_INT_EQ(natsio_client_flush(requester, NATSIO_TIMEOUT_DEFAULT), NATSIO_OK);
    endpoint_counts held_counts = {held, 3, 2}, open_counts = {open, 0, 5};
    NT_CHECK(nt_wait_until(endpoint_counts_are, &held_counts, 5000));
    NT_CHECK(nt_wait_until(endpoint_counts_are, &open_counts, 5000));
    NT_CHECK(wait_at_least(&g_errors.calls, 1, 5000));
    NT_CHECK_STR_EQ(g_errors.endpoint, "held");
    NT_CHECK_INT_EQ(atomic_load(&g_errors.code), 0);
    NT_CHECK_MSG(contains_ci(g_errors.description, "slow consumer"), "%s", g_errors.description);
    char *json = NULL;
    int64_t n = 0;
    NT_CHECK_INT_EQ(natsio_endpoint_stats_json(held, &json), NATSIO_OK);
    NT_CHECK_MSG(json_int(json, "num_errors", &n) && n >= 1, "%s", json);
    NT_CHECK_MSG(strstr(json, "\"last_error\":\"slow consumer") != NULL, "%s", json);
    natsio_string_free(json);
    NT_CHECK_INT_EQ(natsio_endpoint_stats_json(open, &json), NATSIO_OK);
    NT_CHECK_MSG(json_int(json, "num_errors", &n) && n == 0, "%s", json);
    natsio_string_free(json);

    /* The two that fit are there, the first two, in order. */
    NT_CHECK(next_requests_in_order(held, 2));
    natsio_iter_stats st;
    NT_CHECK_INT_EQ(natsio_endpoint_get_stats(held, &st), NATSIO_OK);
    NT_CHECK_INT_EQ(st.pending_items, 0);

        /* In push mode the request a handler is busy with counts too (as
     * nats.go counts it): with the handler held on r0, r1 waits and r2..r4
     * are dropped; released, it answers r0 and r1 only. */
    held_handler h = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, false, {0}};
    natsio_endpoint *busy = add_endpoint(s, NULL,
                                         "{\"name\":\"busy\",\"subject\":\"climits.busy\","
                                         "\"pending_msgs_limit\":2,\"pending_bytes_limit\":-1}");
    NT_CHECK(busy != NULL);
    NT_CHECK_INT_EQ(natsio_endpoint_set_callback(busy, hold_first_then_record, &h, NULL), NATSIO_OK);
    NT_CHECK_INT_EQ(natsio_client_flush(c, NATSIO_TIMEOUT_DEFAULT), NATSIO_OK);
    NT_CHECK(publish_requests(requester, "climits.busy", "climits.reply", 0, 1));
    NT_CHECK(nt_wait_until(handler_holds_one, &h, 5000));
    NT_CHECK(publish_requests(requester, "climits.busy", "climits.reply", 1, 4));
    NT_CHECK_INT_EQ(natsio_client_flush(requester, NATSIO_TIMEOUT_DEFAULT), NATSIO_OK);
    endpoint_counts busy_counts = {busy, 3, 1};
    NT_CHECK(nt_wait_until(endpoint_counts_are, &busy_counts, 5000));
    release_handler(&h);
    NT_CHECK(nt_wait_until(handler_saw_two, &h, 5000));
    pthread_mutex_lock(&h.mu);
    NT_CHECK_STR_EQ(h.seen, "r0,r1,");
    pthread_mutex_unlock(&h.mu);

    /* 0 is not a limit; the limits belong to endpoints only. */
    natsio_endpoint *e = SENTINEL;
    const char *bad[] = {
        "{\"name\":\"z\",\"pending_msgs_limit\":0}",
        "{\"name\":\"z\",\"pending_bytes_limit\":0}",
        "{\"name\":\"z\",\"pending_msgs_limit\":\"10\"}",
        "{\"name\":\"z\",\"pending_msgs_limit\":1.5}",
    };
    for (size_t i = 0; i < NT_COUNT(bad); i++) {
        NT_CHECK_MSG(natsio_service_add_endpoint(s, NULL, bad[i], &e) == NATSIO_ERR_SERVICE_CONFIG, "%s", bad[i]);
    }
    NT_CHECK(e == SENTINEL);
    natsio_service_group *g = NULL;
    NT_CHECK_INT_EQ(natsio_service_add_group(s, NULL, "{\"name\":\"g\",\"pending_msgs_limit\":5}", &g),
                    NATSIO_ERR_SERVICE_CONFIG);
    natsio_service *s2 = NULL;
    NT_CHECK_INT_EQ(
        natsio_client_add_service(c, "{\"name\":\"x\",\"version\":\"1.0.0\",\"pending_bytes_limit\":5}", &s2),
        NATSIO_ERR_SERVICE_CONFIG);
}

/* ---- bad input --------------------------------------------------------------- */

static void test_bad_configurations_and_null_arguments(void) {
    natsio_client *c = connect_client();
    NT_CHECK(c != NULL);
    natsio_service *s = NULL;
    const char *bad[] = {
        "{\"name\":\"a b\",\"version\":\"1.0.0\"}", "{\"name\":\"a.b\",\"version\":\"1.0.0\"}",
        "{\"name\":\"\",\"version\":\"1.0.0\"}",    "{\"name\":\"ok\",\"version\":\"1.0\"}",
        "{\"name\":\"ok\",\"version\":\"01.0.0\"}", "{\"name\":\"ok\",\"version\":\"1.0.0\",\"queue\":\"x\"}",
        "{\"name\":\"ok\"",                         "{\"name\":\"ok\",\"version\":\"1.0.0\",\"subject\":\"x\"}",
    };
    for (size_t i = 0; i < NT_COUNT(bad); i++) {
        NT_CHECK_MSG(natsio_client_add_service(c, bad[i], &s) == NATSIO_ERR_SERVICE_CONFIG, "%s", bad[i]);
        NT_CHECK(natsio_status_is(NATSIO_ERR_SERVICE_CONFIG, NATSIO_ERR_CONFIG));
    }
    NT_CHECK_INT_EQ(natsio_client_add_service(NULL, "{}", &s), NATSIO_ERR_NULL_ARGUMENT);
    NT_CHECK_INT_EQ(natsio_client_add_service(c, NULL, &s), NATSIO_ERR_NULL_ARGUMENT);
    NT_CHECK_INT_EQ(natsio_client_add_service(c, "{\"name\":\"ok\",\"version\":\"1.0.0\"}", NULL),
                    NATSIO_ERR_NULL_ARGUMENT);
    s = add_service(c, "{\"name\":\"cbad\",\"version\":\"1.0.0\"}");
    NT_CHECK(s != NULL);
    natsio_endpoint *e = NULL;
    NT_CHECK_INT_EQ(natsio_service_add_endpoint(s, NULL, "{\"name\":\"a.b\"}", &e), NATSIO_ERR_SERVICE_CONFIG);
    NT_CHECK_INT_EQ(natsio_service_add_endpoint(s, NULL, "{\"name\":\"x\",\"subject\":\"a.>.b\"}", &e),
                    NATSIO_ERR_SERVICE_CONFIG);
    NT_CHECK_INT_EQ(natsio_service_add_endpoint(s, NULL, "{\"name\":\"x\",\"queue_group\":\"a b\"}", &e),
                    NATSIO_ERR_SERVICE_CONFIG);
    natsio_service_group *g = NULL;
    NT_CHECK_INT_EQ(natsio_service_add_group(s, NULL, "{\"name\":\"a.>\"}", &g), NATSIO_ERR_SERVICE_CONFIG);
    NT_CHECK_INT_EQ(natsio_service_add_endpoint(NULL, NULL, "{\"name\":\"x\"}", &e), NATSIO_ERR_NULL_ARGUMENT);
    NT_CHECK_INT_EQ(natsio_endpoint_next(NULL, 0, NULL), NATSIO_ERR_NULL_ARGUMENT);
    NT_CHECK_INT_EQ(natsio_service_request_respond(NULL, NULL, NULL, 0), NATSIO_ERR_NULL_ARGUMENT);
    NT_CHECK_INT_EQ(natsio_service_request_fail(NULL, NULL), NATSIO_ERR_NULL_ARGUMENT);
    NT_CHECK(natsio_service_request_msg(NULL) == NULL);
    NT_CHECK(natsio_service_id(NULL) == NULL);
    NT_CHECK(!natsio_service_is_stopped(NULL));
    NT_CHECK_INT_EQ(natsio_client_service_discover(c, 7, NULL, NULL, NULL, NULL), NATSIO_ERR_NULL_ARGUMENT);
    natsio_replies *r = NULL;
    NT_CHECK_INT_EQ(natsio_client_service_discover(c, 7, NULL, NULL, NULL, &r), NATSIO_ERR_INVALID_ARGUMENT);
    NT_CHECK_INT_EQ(natsio_client_service_discover(c, NATSIO_SERVICE_PING, NULL, "id", NULL, &r),
                    NATSIO_ERR_SERVICE_CONFIG);
    NT_CHECK_INT_EQ(natsio_endpoint_set_stats_data(NULL, NULL), NATSIO_ERR_NULL_ARGUMENT);
    natsio_service_free(NULL);
    natsio_endpoint_free(NULL);
    natsio_service_request_free(NULL);
}

/* A service whose client closes stops. */
static void test_service_stops_when_client_closes(void) {
    natsio_client *c = connect_client();
    NT_CHECK(c != NULL);
    natsio_service *s = add_service(c, "{\"name\":\"cclose\",\"version\":\"1.0.0\"}");
    NT_CHECK(s != NULL);
    natsio_token *end = NULL;
    NT_CHECK_INT_EQ(natsio_service_end_async(s, &end), NATSIO_OK);
    nt_cleanup(token_free_cb, end);
    NT_CHECK_INT_EQ(natsio_client_close(c), NATSIO_OK);
    NT_CHECK_INT_EQ(token_outcome(end, 5000), NATSIO_OK);
    NT_CHECK(natsio_service_is_stopped(s));
}

int main(int argc, char **argv) {
    static const nt_case cases[] = {
        NT_CASE(test_echo_service_in_a_group_is_discovered),
        NT_CASE(test_error_replies_and_failing_handlers),
        NT_CASE(test_iterator_endpoint_answered_from_another_thread),
        NT_CASE(test_stop_drains_then_refuses),
        NT_CASE(test_endpoint_pending_limits_drop_and_report),
        NT_CASE(test_bad_configurations_and_null_arguments),
        NT_CASE(test_service_stops_when_client_closes),
    };
    return run_cases_with_shared_server(argc, argv, "service", cases, NT_COUNT(cases));
}
