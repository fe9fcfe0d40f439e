/*
 * Bad input through the C ABI: every status that C input can trigger has a
 * case here that triggers it and checks
 *   - the exact status,
 *   - that natsio_last_error() explains it (non-empty, and set by *this* call:
 *     each check first plants a marker error and verifies it was replaced),
 *   - that outputs are left untouched (out pointers pre-set to a sentinel),
 *   - that nothing was lost or sent (subscribers receive only the valid
 *     messages; rejected header edits leave the map unchanged).
 */
#include "harness.h"
#include "util.h"
#include "natsio.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ */
/* Helpers                                                             */
/* ------------------------------------------------------------------ */

/* A client of a nats-server started for the running case alone (config
 * may be NULL); both end with the case. */
static natsio_client *connect_to_own_server(const char *config) {
    nt_server *s = start_server(config);
    return s ? connect_url(nt_server_url(s)) : NULL;
}

/* Publishes "end" on `end_subject`, then reads `sub` until that message and
 * stores the subjects (and payload sizes) received before it. Proves that
 * nothing else got through: rejected calls must not reach the wire. */
typedef struct {
    char subjects[16][128];
    size_t sizes[16];
    int count;
} received_log;

static void collect_until_end(natsio_client *publisher, natsio_sub *sub, const char *end_subject,
                              received_log *log) {
    memset(log, 0, sizeof *log);
    EXPECT_OK(natsio_client_publish(publisher, end_subject, "end", 3));
    EXPECT_OK(natsio_client_flush(publisher, 5000));
    for (;;) {
        natsio_msg *m = NULL;
        natsio_status st = natsio_sub_next_msg(sub, 5000, &m);
        NT_CHECK_MSG(st == NATSIO_OK, "waiting for %s: %s: %s", end_subject,
                     natsio_status_str(st), natsio_last_error());
        const char *subject = natsio_msg_subject(m);
        bool is_end = strcmp(subject, end_subject) == 0;
        if (!is_end && log->count < 16) {
            snprintf(log->subjects[log->count], sizeof log->subjects[0], "%s", subject);
            log->sizes[log->count] = natsio_msg_data_len(m);
        }
        if (!is_end) log->count++;
        natsio_msg_free(m);
        if (is_end) return;
    }
}

/* Message callback: counts calls in *(int *)user_data. */
static void on_msg_count(void *user_data, natsio_sub *sub, const natsio_msg *msg) {
    (void)sub;
    (void)msg;
    __atomic_add_fetch((int *)user_data, 1, __ATOMIC_SEQ_CST);
}

/* An asynchronous verb on a closed client fails either at once or through
 * its token; both must report NATSIO_ERR_CONNECTION_CLOSED. */
static void check_async_fails_closed(natsio_status immediate, natsio_token *token,
                                     const char *what) {
    if (immediate != NATSIO_OK) {
        NT_CHECK_MSG(immediate == NATSIO_ERR_CONNECTION_CLOSED, "%s: got %s: %s", what,
                     natsio_status_str(immediate), natsio_last_error());
        NT_CHECK_MSG(natsio_last_error()[0] != '\0', "%s: empty last error", what);
        return;
    }
    natsio_status waited = natsio_token_wait(token, 5000);
    natsio_status outcome = natsio_token_status(token);
    const char *detail = natsio_last_error();
    natsio_token_free(token);
    NT_CHECK_MSG(waited == NATSIO_OK, "%s: token wait: %s (%s)", what, natsio_status_str(waited),
                 detail);
    NT_CHECK_MSG(outcome == NATSIO_ERR_CONNECTION_CLOSED, "%s: token completed with %s", what,
                 natsio_status_str(outcome));
    NT_CHECK_MSG(detail[0] != '\0', "%s: empty last error", what);
}

/* ------------------------------------------------------------------ */
/* Cases without a server                                              */
/* ------------------------------------------------------------------ */

/* Thread body: reports whether natsio_last_error() is "" on a new thread. */
static void *last_error_is_empty_on_new_thread(void *out) {
    const char *e = natsio_last_error();
    *(bool *)out = e != NULL && e[0] == '\0';
    return NULL;
}

static void test_status_str_and_last_error_fallbacks(void) {
    /* Every code has its own text; unknown codes get the documented one. */
    const int codes[] = {NATSIO_OK, NATSIO_ERR_NULL_ARGUMENT, NATSIO_ERR_INVALID_UTF8,
                         NATSIO_ERR_BAD_SUBJECT, NATSIO_ERR_MAX_PAYLOAD,
                         NATSIO_ERR_SUBSCRIPTION_CLOSED};
    for (size_t i = 0; i < NT_COUNT(codes); i++) {
        const char *s = natsio_status_str(codes[i]);
        NT_CHECK(s != NULL && s[0] != '\0');
        NT_CHECK(strcmp(s, "unknown status code") != 0);
    }
    NT_CHECK_STR_EQ(natsio_status_str(7), "unknown status code");
    NT_CHECK_STR_EQ(natsio_status_str(-1), "unknown status code");
    NT_CHECK_STR_EQ(natsio_status_str(99999), "unknown status code");

    /* last_error is per thread and "" before any failure on that thread. */
    bool empty = false;
    pthread_t t;
    NT_CHECK(pthread_create(&t, NULL, last_error_is_empty_on_new_thread, &empty) == 0);
    NT_CHECK(pthread_join(t, NULL) == 0);
    NT_CHECK_MSG(empty, "natsio_last_error() on a fresh thread is not \"\"");
}

static void test_getters_on_null_return_documented_fallbacks(void) {
    NT_CHECK(natsio_client_status(NULL) == NATSIO_CONN_CLOSED);
    NT_CHECK_INT_EQ(natsio_client_max_payload(NULL), -1);
    NT_CHECK(natsio_msg_subject(NULL) == NULL);
    NT_CHECK(natsio_msg_reply(NULL) == NULL);
    NT_CHECK(natsio_msg_data(NULL) == NULL);
    NT_CHECK_INT_EQ(natsio_msg_data_len(NULL), 0);
    NT_CHECK(natsio_msg_headers(NULL) == NULL);
    NT_CHECK_INT_EQ(natsio_msg_status(NULL), 0);
    NT_CHECK_INT_EQ(natsio_msg_sid(NULL), 0);
    NT_CHECK(natsio_sub_subject(NULL) == NULL);
    NT_CHECK(natsio_sub_queue(NULL) == NULL);
    NT_CHECK_INT_EQ(natsio_sub_sid(NULL), 0);
    NT_CHECK(natsio_sub_is_closed(NULL));
    NT_CHECK(!natsio_token_is_done(NULL));
    NT_CHECK_INT_EQ(natsio_headers_len(NULL), 0);
    NT_CHECK_INT_EQ(natsio_headers_count(NULL, "X"), 0);
    natsio_headers *h = NULL;
    EXPECT_OK(natsio_headers_new(&h));
    nt_cleanup(headers_free_cb, h);
    EXPECT_OK(natsio_headers_add(h, "X", "1"));
    NT_CHECK_INT_EQ(natsio_headers_count(h, NULL), 0);
    NT_CHECK_INT_EQ(natsio_headers_count(h, BAD_UTF8), 0);
    NT_CHECK_INT_EQ(natsio_headers_count(h, "X"), 1);
    /* A status-returning getter reports NULL as an error, not a fallback. */
    EXPECT_NULL_ARG("token", natsio_token_status(NULL));
}

static void test_free_functions_accept_null(void) {
    plant_error_marker();
    natsio_string_free(NULL);
    natsio_options_free(NULL);
    natsio_client_free(NULL);
    natsio_headers_free(NULL);
    natsio_msg_free(NULL);
    natsio_sub_free(NULL);
    natsio_token_free(NULL);
    natsio_replies_free(NULL);
    /* Freeing NULL is not a failure: the last error is left alone. */
    NT_CHECK_MSG(strstr(natsio_last_error(), ERROR_MARKER) != NULL,
                 "a _free(NULL) changed natsio_last_error() to \"%s\"", natsio_last_error());
}

static void test_null_arguments_of_options(void) {
    EXPECT_NULL_ARG("out", natsio_options_new(NULL));
    natsio_options *o = NULL;
    EXPECT_OK(natsio_options_new(&o));
    nt_cleanup(options_free_cb, o);

    EXPECT_NULL_ARG("opts", natsio_options_set_url(NULL, "nats://127.0.0.1:4222"));
    EXPECT_NULL_ARG("url", natsio_options_set_url(o, NULL));
    const char *urls[] = {"nats://127.0.0.1:4222", NULL};
    EXPECT_NULL_ARG("opts", natsio_options_set_servers(NULL, urls, 1));
    EXPECT_NULL_ARG("urls", natsio_options_set_servers(o, NULL, 1));
    EXPECT_NULL_ARG("url", natsio_options_set_servers(o, urls, 2));
    EXPECT_NULL_ARG("opts", natsio_options_set_name(NULL, "n"));
    EXPECT_NULL_ARG("opts", natsio_options_set_connect_timeout_ms(NULL, 100));
    EXPECT_NULL_ARG("opts", natsio_options_set_echo(NULL, true));
    EXPECT_NULL_ARG("opts", natsio_options_set_user_password(NULL, "u", "p"));
    EXPECT_NULL_ARG("user", natsio_options_set_user_password(o, NULL, "p"));
    EXPECT_NULL_ARG("opts", natsio_options_set_token(NULL, "t"));
    EXPECT_NULL_ARG("token", natsio_options_set_token(o, NULL));
    EXPECT_NULL_ARG("opts", natsio_options_set_ping(NULL, 1000, 2));
    EXPECT_NULL_ARG("opts", natsio_options_set_max_pending_size(NULL, 1024));
    EXPECT_NULL_ARG("opts", natsio_options_set_flush_timeout_ms(NULL, 100));
    EXPECT_NULL_ARG("opts", natsio_options_set_drain_timeout_ms(NULL, 100));
    EXPECT_NULL_ARG("opts", natsio_options_set_request_timeout_ms(NULL, 100));
    EXPECT_NULL_ARG("opts", natsio_options_set_inbox_prefix(NULL, "_X"));
    EXPECT_NULL_ARG("prefix", natsio_options_set_inbox_prefix(o, NULL));
    EXPECT_NULL_ARG("opts", natsio_options_set_pending_limits(NULL, 1, 1));
    EXPECT_NULL_ARG("opts", natsio_options_set_max_control_line(NULL, 4096));
    EXPECT_NULL_ARG("opts", natsio_options_set_error_callback(NULL, NULL, NULL, NULL));

    /* NULL where NULL means "none" is accepted. */
    EXPECT_OK(natsio_options_set_name(o, NULL));
    EXPECT_OK(natsio_options_set_user_password(o, "user", NULL));

    /* Connecting: NULL options mean defaults, but the out pointer is required
     * (checked before any connection attempt). */
    EXPECT_NULL_ARG("client_out", natsio_client_connect(NULL, NULL));
    EXPECT_NULL_ARG("client_out", natsio_client_connect(o, NULL));
    natsio_client *c = SENTINEL;
    EXPECT_NULL_ARG("url", natsio_client_connect_url(NULL, &c));
    NT_CHECK(c == SENTINEL);
    EXPECT_NULL_ARG("client_out", natsio_client_connect_url("nats://127.0.0.1:1", NULL));
}

static void test_null_arguments_of_headers(void) {
    EXPECT_NULL_ARG("out", natsio_headers_new(NULL));
    natsio_headers *h = NULL;
    EXPECT_OK(natsio_headers_new(&h));
    nt_cleanup(headers_free_cb, h);
    EXPECT_OK(natsio_headers_add(h, "Kept", "yes"));

    natsio_headers *copy = SENTINEL;
    EXPECT_NULL_ARG("headers", natsio_headers_clone(NULL, &copy));
    NT_CHECK(copy == SENTINEL);
    EXPECT_NULL_ARG("out", natsio_headers_clone(h, NULL));

    EXPECT_NULL_ARG("headers", natsio_headers_add(NULL, "A", "1"));
    EXPECT_NULL_ARG("name", natsio_headers_add(h, NULL, "1"));
    EXPECT_NULL_ARG("value", natsio_headers_add(h, "A", NULL));
    EXPECT_NULL_ARG("headers", natsio_headers_set(NULL, "A", "1"));
    EXPECT_NULL_ARG("name", natsio_headers_set(h, NULL, "1"));
    EXPECT_NULL_ARG("value", natsio_headers_set(h, "Kept", NULL));
    EXPECT_NULL_ARG("headers", natsio_headers_delete(NULL, "Kept"));
    EXPECT_NULL_ARG("name", natsio_headers_delete(h, NULL));

    const char *value = SENTINEL_CSTR;
    const char *name = SENTINEL_CSTR;
    EXPECT_NULL_ARG("headers", natsio_headers_get(NULL, "Kept", &value));
    EXPECT_NULL_ARG("name", natsio_headers_get(h, NULL, &value));
    EXPECT_NULL_ARG("value_out", natsio_headers_get(h, "Kept", NULL));
    EXPECT_NULL_ARG("headers", natsio_headers_get_nth(NULL, "Kept", 0, &value));
    EXPECT_NULL_ARG("name", natsio_headers_get_nth(h, NULL, 0, &value));
    EXPECT_NULL_ARG("value_out", natsio_headers_get_nth(h, "Kept", 0, NULL));
    EXPECT_NULL_ARG("headers", natsio_headers_entry(NULL, 0, &name, &value));
    EXPECT_NULL_ARG("name_out", natsio_headers_entry(h, 0, NULL, &value));
    EXPECT_NULL_ARG("value_out", natsio_headers_entry(h, 0, &name, NULL));
    NT_CHECK(value == SENTINEL_CSTR);
    NT_CHECK(name == SENTINEL_CSTR);

    /* The map is exactly as before. */
    NT_CHECK_INT_EQ(natsio_headers_len(h), 1);
    EXPECT_OK(natsio_headers_get(h, "Kept", &value));
    NT_CHECK_STR_EQ(value, "yes");
}

static void test_null_handles_of_msg_sub_token_replies(void) {
    natsio_msg *m = SENTINEL;
    natsio_token *t = SENTINEL;
    struct natsio_sub_stats sub_stats;
    memset(&sub_stats, 0xab, sizeof sub_stats);

    EXPECT_NULL_ARG("msg", natsio_msg_respond(NULL, "x", 1));
    EXPECT_NULL_ARG("msg", natsio_msg_respond_with(NULL, NULL, "x", 1));
    EXPECT_NULL_ARG("msg", natsio_msg_clone(NULL, &m));
    NT_CHECK(m == SENTINEL);

    EXPECT_NULL_ARG("opts", natsio_sub_options_init(NULL));
    EXPECT_NULL_ARG("sub", natsio_sub_next_msg(NULL, 0, &m));
    NT_CHECK(m == SENTINEL);
    EXPECT_NULL_ARG("sub", natsio_sub_unsubscribe(NULL));
    EXPECT_NULL_ARG("sub", natsio_sub_unsubscribe_after(NULL, 1));
    EXPECT_NULL_ARG("sub", natsio_sub_drain(NULL, 0));
    EXPECT_NULL_ARG("sub", natsio_sub_drain_async(NULL, &t));
    NT_CHECK(t == SENTINEL);
    EXPECT_NULL_ARG("sub", natsio_sub_get_stats(NULL, &sub_stats));
    struct natsio_sub_stats expected;
    memset(&expected, 0xab, sizeof expected);
    NT_CHECK(memcmp(&sub_stats, &expected, sizeof expected) == 0);

    EXPECT_NULL_ARG("token", natsio_token_wait(NULL, 0));
    EXPECT_NULL_ARG("token", natsio_token_msg(NULL, &m));
    NT_CHECK(m == SENTINEL);
    EXPECT_NULL_ARG("token", natsio_token_on_complete(NULL, NULL, NULL, NULL));
    EXPECT_NULL_ARG("token", natsio_token_cancel(NULL));

    EXPECT_NULL_ARG("replies", natsio_replies_next(NULL, &m));
    NT_CHECK(m == SENTINEL);
}

static void test_null_client_handle(void) {
    natsio_sub *sub = SENTINEL;
    natsio_msg *m = SENTINEL;
    natsio_token *t = SENTINEL;
    natsio_replies *r = SENTINEL;
    char *s = SENTINEL_STR;
    struct natsio_client_stats stats, expected;
    memset(&stats, 0xcd, sizeof stats);
    memset(&expected, 0xcd, sizeof expected);

    EXPECT_NULL_ARG("client", natsio_client_publish(NULL, "a", "x", 1));
    EXPECT_NULL_ARG("client", natsio_client_publish_with(NULL, "a", NULL, NULL, "x", 1));
    EXPECT_NULL_ARG("client", natsio_client_subscribe(NULL, "a", NULL, NULL, &sub));
    EXPECT_NULL_ARG("client", natsio_client_subscribe_callback(NULL, "a", NULL, NULL, NULL, NULL,
                                                              NULL, &sub));
    EXPECT_NULL_ARG("client", natsio_client_request(NULL, "a", NULL, "x", 1, 100, &m));
    EXPECT_NULL_ARG("client", natsio_client_request_async(NULL, "a", NULL, "x", 1, 100, &t));
    EXPECT_NULL_ARG("client", natsio_client_request_many(NULL, "a", NULL, "x", 1, NULL, &r));
    EXPECT_NULL_ARG("client", natsio_client_flush(NULL, 100));
    EXPECT_NULL_ARG("client", natsio_client_flush_async(NULL, &t));
    EXPECT_NULL_ARG("client", natsio_client_drain(NULL, 100));
    EXPECT_NULL_ARG("client", natsio_client_drain_async(NULL, 100, &t));
    EXPECT_NULL_ARG("client", natsio_client_close(NULL));
    EXPECT_NULL_ARG("client", natsio_client_server_info(NULL, &s));
    EXPECT_NULL_ARG("client", natsio_client_connected_url(NULL, &s));
    EXPECT_NULL_ARG("client", natsio_client_new_inbox(NULL, &s));
    EXPECT_NULL_ARG("client", natsio_client_get_stats(NULL, &stats));

    NT_CHECK(sub == SENTINEL && m == SENTINEL && t == SENTINEL && r == SENTINEL);
    NT_CHECK(s == SENTINEL_STR);
    NT_CHECK(memcmp(&stats, &expected, sizeof stats) == 0);
}

static void test_runtime_worker_threads(void) {
    /* Out of range is rejected whatever the runtime's state... */
    EXPECT_FAILS(NATSIO_ERR_INVALID_ARGUMENT, natsio_runtime_set_worker_threads(0));
    EXPECT_FAILS(NATSIO_ERR_INVALID_ARGUMENT, natsio_runtime_set_worker_threads(257));
    /* ...and a valid count is refused once the runtime runs (a connection
     * starts it). */
    natsio_client *c = connect_to_own_server(NULL);
    NT_CHECK(c != NULL);
    EXPECT_FAILS(NATSIO_ERR_ILLEGAL_STATE, natsio_runtime_set_worker_threads(2));
    EXPECT_FAILS(NATSIO_ERR_INVALID_ARGUMENT, natsio_runtime_set_worker_threads(0));
}

static void test_options_out_of_range_are_config_errors(void) {
    nt_server *s = start_server(NULL);
    NT_CHECK(s != NULL);
    natsio_options *o = NULL;
    EXPECT_OK(natsio_options_new(&o));
    nt_cleanup(options_free_cb, o);
    EXPECT_OK(natsio_options_set_url(o, nt_server_url(s)));
    EXPECT_OK(natsio_options_set_inbox_prefix(o, "_GOOD"));

    EXPECT_FAILS(NATSIO_ERR_CONFIG, natsio_options_set_connect_timeout_ms(o, 0));
    EXPECT_FAILS(NATSIO_ERR_CONFIG, natsio_options_set_connect_timeout_ms(o, -1));
    EXPECT_FAILS(NATSIO_ERR_CONFIG, natsio_options_set_ping(o, 0, 2));
    EXPECT_FAILS(NATSIO_ERR_CONFIG, natsio_options_set_ping(o, 1000, 0));
    EXPECT_FAILS(NATSIO_ERR_CONFIG, natsio_options_set_ping(o, -1000, 2));
    EXPECT_FAILS(NATSIO_ERR_CONFIG, natsio_options_set_max_pending_size(o, 0));
    EXPECT_FAILS(NATSIO_ERR_CONFIG, natsio_options_set_max_pending_size(o, -1));
    EXPECT_FAILS(NATSIO_ERR_CONFIG, natsio_options_set_flush_timeout_ms(o, 0));
    EXPECT_FAILS(NATSIO_ERR_CONFIG, natsio_options_set_drain_timeout_ms(o, -5));
    EXPECT_FAILS(NATSIO_ERR_CONFIG, natsio_options_set_request_timeout_ms(o, 0));
    EXPECT_FAILS(NATSIO_ERR_CONFIG, natsio_options_set_max_control_line(o, 63));
    EXPECT_FAILS(NATSIO_ERR_CONFIG, natsio_options_set_max_control_line(o, -1));
    EXPECT_FAILS(NATSIO_ERR_CONFIG, natsio_options_set_inbox_prefix(o, ""));
    EXPECT_FAILS(NATSIO_ERR_CONFIG, natsio_options_set_inbox_prefix(o, "_X.*"));
    EXPECT_FAILS(NATSIO_ERR_CONFIG, natsio_options_set_inbox_prefix(o, "_X.>"));
    EXPECT_FAILS(NATSIO_ERR_CONFIG, natsio_options_set_inbox_prefix(o, "a b"));
    EXPECT_FAILS(NATSIO_ERR_CONFIG, natsio_options_set_inbox_prefix(o, "a..b"));
    EXPECT_FAILS(NATSIO_ERR_CONFIG, natsio_options_set_url(o, ""));
    EXPECT_FAILS(NATSIO_ERR_CONFIG, natsio_options_set_url(o, " , "));
    EXPECT_FAILS(NATSIO_ERR_CONFIG, natsio_options_set_url(o, "http://127.0.0.1:4222"));
    EXPECT_FAILS(NATSIO_ERR_CONFIG, natsio_options_set_url(o, "nats://127.0.0.1:notaport"));
    const char *urls[] = {"nats://127.0.0.1:4222", "gopher://x"};
    EXPECT_FAILS(NATSIO_ERR_CONFIG, natsio_options_set_servers(o, urls, 0));
    EXPECT_FAILS(NATSIO_ERR_CONFIG, natsio_options_set_servers(o, urls, 2));

    /* One auth kind only, in either order. */
    natsio_options *auth = NULL;
    EXPECT_OK(natsio_options_new(&auth));
    nt_cleanup(options_free_cb, auth);
    EXPECT_OK(natsio_options_set_token(auth, "secret"));
    EXPECT_FAILS(NATSIO_ERR_CONFIG, natsio_options_set_user_password(auth, "u", "p"));
    natsio_options *auth2 = NULL;
    EXPECT_OK(natsio_options_new(&auth2));
    nt_cleanup(options_free_cb, auth2);
    EXPECT_OK(natsio_options_set_user_password(auth2, "u", "p"));
    EXPECT_FAILS(NATSIO_ERR_CONFIG, natsio_options_set_token(auth2, "secret"));

    /* The rejected values changed nothing: the options still connect to the
     * server set before, and inboxes keep the earlier prefix. */
    natsio_client *c = NULL;
    EXPECT_OK(natsio_client_connect(o, &c));
    nt_cleanup(client_free_cb, c);
    char *url = NULL;
    EXPECT_OK(natsio_client_connected_url(c, &url));
    bool same_port = strstr(url, strrchr(nt_server_url(s), ':')) != NULL;
    natsio_string_free(url);
    NT_CHECK_MSG(same_port, "connected to a different server than %s", nt_server_url(s));
    char *inbox = NULL;
    EXPECT_OK(natsio_client_new_inbox(c, &inbox));
    bool good_prefix = strncmp(inbox, "_GOOD.", 6) == 0;
    char inbox_copy[256];
    snprintf(inbox_copy, sizeof inbox_copy, "%s", inbox);
    natsio_string_free(inbox);
    NT_CHECK_MSG(good_prefix, "inbox %s does not keep the prefix _GOOD", inbox_copy);
}

static void test_headers_not_found(void) {
    natsio_headers *h = NULL;
    EXPECT_OK(natsio_headers_new(&h));
    nt_cleanup(headers_free_cb, h);
    EXPECT_OK(natsio_headers_add(h, "Present", "1"));

    const char *value = SENTINEL_CSTR;
    const char *name = SENTINEL_CSTR;
    EXPECT_FAILS(NATSIO_ERR_NOT_FOUND, natsio_headers_get(h, "Missing", &value));
    EXPECT_FAILS(NATSIO_ERR_NOT_FOUND, natsio_headers_get(h, "present", &value)); /* exact case */
    EXPECT_FAILS(NATSIO_ERR_NOT_FOUND, natsio_headers_get_nth(h, "Present", 1, &value));
    EXPECT_FAILS(NATSIO_ERR_NOT_FOUND, natsio_headers_entry(h, 1, &name, &value));
    EXPECT_FAILS(NATSIO_ERR_NOT_FOUND, natsio_headers_entry(h, SIZE_MAX, &name, &value));
    EXPECT_FAILS(NATSIO_ERR_NOT_FOUND, natsio_headers_delete(h, "Missing"));
    NT_CHECK(value == SENTINEL_CSTR && name == SENTINEL_CSTR);
    NT_CHECK_INT_EQ(natsio_headers_len(h), 1);
}

static void test_header_injection_is_rejected(void) {
    natsio_headers *h = NULL;
    EXPECT_OK(natsio_headers_new(&h));
    nt_cleanup(headers_free_cb, h);
    EXPECT_OK(natsio_headers_add(h, "Kept", "original"));

    const char *bad_names[] = {"",          "Bad:Name", "Bad Name", "Bad\tName", "Bad\x01",
                               "Bad\x7f",   "Caf\xc3\xa9", "X\r\nInjected", "Kept:"};
    for (size_t i = 0; i < NT_COUNT(bad_names); i++) {
        EXPECT_FAILS(NATSIO_ERR_BAD_HEADERS, natsio_headers_add(h, bad_names[i], "v"));
        EXPECT_FAILS(NATSIO_ERR_BAD_HEADERS, natsio_headers_set(h, bad_names[i], "v"));
    }
    const char *bad_values[] = {"v\r", "v\n", "v\r\nX-Injected: 1", "\r\n\r\nbody"};
    for (size_t i = 0; i < NT_COUNT(bad_values); i++) {
        EXPECT_FAILS(NATSIO_ERR_BAD_HEADERS, natsio_headers_add(h, "Other", bad_values[i]));
        /* set on an existing name must not remove its values when it fails */
        EXPECT_FAILS(NATSIO_ERR_BAD_HEADERS, natsio_headers_set(h, "Kept", bad_values[i]));
    }
    EXPECT_FAILS(NATSIO_ERR_INVALID_UTF8, natsio_headers_add(h, BAD_UTF8, "v"));
    EXPECT_FAILS(NATSIO_ERR_INVALID_UTF8, natsio_headers_add(h, "Other", BAD_UTF8));
    EXPECT_FAILS(NATSIO_ERR_INVALID_UTF8, natsio_headers_set(h, "Kept", BAD_UTF8));
    EXPECT_FAILS(NATSIO_ERR_INVALID_UTF8, natsio_headers_set(h, BAD_UTF8, "v"));
    EXPECT_FAILS(NATSIO_ERR_INVALID_UTF8, natsio_headers_delete(h, BAD_UTF8));
    const char *value = SENTINEL_CSTR;
    EXPECT_FAILS(NATSIO_ERR_INVALID_UTF8, natsio_headers_get(h, BAD_UTF8, &value));
    NT_CHECK(value == SENTINEL_CSTR);

    /* The map is unchanged... */
    NT_CHECK_INT_EQ(natsio_headers_len(h), 1);
    EXPECT_OK(natsio_headers_get(h, "Kept", &value));
    NT_CHECK_STR_EQ(value, "original");

    /* ...and what goes on the wire is exactly that one header. */
    natsio_client *c = connect_to_own_server(NULL);
    NT_CHECK(c != NULL);
    natsio_sub *sub = subscribe_and_flush(c, "hdr.>");
    NT_CHECK(sub != NULL);
    EXPECT_OK(natsio_client_publish_with(c, "hdr.msg", NULL, h, "body", 4));
    EXPECT_OK(natsio_client_flush(c, 5000));
    natsio_msg *m = NULL;
    EXPECT_OK(natsio_sub_next_msg(sub, 5000, &m));
    nt_cleanup(msg_free_cb, m);
    const natsio_headers *got = natsio_msg_headers(m);
    NT_CHECK(got != NULL);
    NT_CHECK_INT_EQ(natsio_headers_len(got), 1);
    EXPECT_OK(natsio_headers_get(got, "Kept", &value));
    NT_CHECK_STR_EQ(value, "original");
    NT_CHECK_MEM_EQ(natsio_msg_data(m), natsio_msg_data_len(m), "body", 4);
    natsio_msg *extra = SENTINEL;
    EXPECT_FAILS(NATSIO_ERR_TIMEOUT, natsio_sub_next_msg(sub, 50, &extra));
    NT_CHECK(extra == SENTINEL);
}

/* ------------------------------------------------------------------ */
/* Cases against a server                                              */
/* ------------------------------------------------------------------ */

static void test_null_arguments_with_a_live_connection(void) {
    natsio_client *c = connect_to_own_server(NULL);
    NT_CHECK(c != NULL);
    natsio_sub *watch = subscribe_and_flush(c, "bad.>");
    NT_CHECK(watch != NULL);

    natsio_sub *sub = SENTINEL;
    natsio_msg *m = SENTINEL;
    natsio_token *t = SENTINEL;
    natsio_replies *r = SENTINEL;
    char *str = SENTINEL_STR;

    EXPECT_NULL_ARG("subject", natsio_client_publish(c, NULL, "x", 1));
    EXPECT_NULL_ARG("data", natsio_client_publish(c, "bad.nodata", NULL, 3));
    EXPECT_NULL_ARG("subject", natsio_client_publish_with(c, NULL, NULL, NULL, "x", 1));
    EXPECT_NULL_ARG("data", natsio_client_publish_with(c, "bad.nodata", "r", NULL, NULL, 3));
    EXPECT_NULL_ARG("subject", natsio_client_subscribe(c, NULL, NULL, NULL, &sub));
    EXPECT_NULL_ARG("sub_out", natsio_client_subscribe(c, "bad.x", NULL, NULL, NULL));
    int calls = 0;
    EXPECT_NULL_ARG("subject", natsio_client_subscribe_callback(c, NULL, NULL, NULL, on_msg_count,
                                                               &calls, NULL, &sub));
    EXPECT_NULL_ARG("cb", natsio_client_subscribe_callback(c, "bad.x", NULL, NULL, NULL, NULL,
                                                          NULL, &sub));
    EXPECT_NULL_ARG("sub_out", natsio_client_subscribe_callback(c, "bad.x", NULL, NULL,
                                                               on_msg_count, &calls, NULL, NULL));
    EXPECT_NULL_ARG("subject", natsio_client_request(c, NULL, NULL, "x", 1, 100, &m));
    EXPECT_NULL_ARG("data", natsio_client_request(c, "bad.req", NULL, NULL, 3, 100, &m));
    EXPECT_NULL_ARG("reply_out", natsio_client_request(c, "bad.req", NULL, "x", 1, 100, NULL));
    EXPECT_NULL_ARG("subject", natsio_client_request_async(c, NULL, NULL, "x", 1, 100, &t));
    EXPECT_NULL_ARG("data", natsio_client_request_async(c, "bad.req", NULL, NULL, 3, 100, &t));
    EXPECT_NULL_ARG("token_out",
                    natsio_client_request_async(c, "bad.req", NULL, "x", 1, 100, NULL));
    EXPECT_NULL_ARG("subject", natsio_client_request_many(c, NULL, NULL, "x", 1, NULL, &r));
    EXPECT_NULL_ARG("data", natsio_client_request_many(c, "bad.req", NULL, NULL, 3, NULL, &r));
    EXPECT_NULL_ARG("replies_out",
                    natsio_client_request_many(c, "bad.req", NULL, "x", 1, NULL, NULL));
    EXPECT_NULL_ARG("token_out", natsio_client_flush_async(c, NULL));
    /* A drain that started anyway would close the client and fail what follows. */
    EXPECT_NULL_ARG("token_out", natsio_client_drain_async(c, 1000, NULL));
    EXPECT_NULL_ARG("json_out", natsio_client_server_info(c, NULL));
    EXPECT_NULL_ARG("url_out", natsio_client_connected_url(c, NULL));
    EXPECT_NULL_ARG("inbox_out", natsio_client_new_inbox(c, NULL));
    EXPECT_NULL_ARG("stats_out", natsio_client_get_stats(c, NULL));
    NT_CHECK(sub == SENTINEL && m == SENTINEL && t == SENTINEL && r == SENTINEL);
    NT_CHECK(str == SENTINEL_STR);

    /* data == NULL with len == 0 is a valid empty payload. */
    EXPECT_OK(natsio_client_publish(c, "bad.empty", NULL, 0));
    EXPECT_OK(natsio_client_publish_with(c, "bad.empty", NULL, NULL, NULL, 0));

    /* Only the two valid publishes reached the server. */
    received_log log;
    collect_until_end(c, watch, "bad.end", &log);
    NT_CHECK(!nt_failed());
    NT_CHECK_INT_EQ(log.count, 2);
    NT_CHECK_STR_EQ(log.subjects[0], "bad.empty");
    NT_CHECK_INT_EQ(log.sizes[0], 0);
    NT_CHECK_STR_EQ(log.subjects[1], "bad.empty");

    /* Handles that need a live message, subscription, token or iterator. */
    EXPECT_OK(natsio_client_publish(c, "bad.keep", "kept", 4));
    EXPECT_OK(natsio_client_flush(c, 5000));
    EXPECT_NULL_ARG("msg_out", natsio_sub_next_msg(watch, 5000, NULL));
    /* The message was not consumed by the failed call. */
    natsio_msg *kept = NULL;
    EXPECT_OK(natsio_sub_next_msg(watch, 5000, &kept));
    nt_cleanup(msg_free_cb, kept);
    NT_CHECK_STR_EQ(natsio_msg_subject(kept), "bad.keep");
    EXPECT_NULL_ARG("out", natsio_msg_clone(kept, NULL));
    EXPECT_NULL_ARG("data", natsio_msg_respond(kept, NULL, 2));
    EXPECT_NULL_ARG("data", natsio_msg_respond_with(kept, NULL, NULL, 2));

    struct natsio_sub_stats stats;
    EXPECT_NULL_ARG("stats_out", natsio_sub_get_stats(watch, NULL));
    EXPECT_NULL_ARG("token_out", natsio_sub_drain_async(watch, NULL));
    EXPECT_OK(natsio_sub_get_stats(watch, &stats));
    NT_CHECK(!natsio_sub_is_closed(watch));

    natsio_token *flush = NULL;
    EXPECT_OK(natsio_client_flush_async(c, &flush));
    nt_cleanup(token_free_cb, flush);
    EXPECT_NULL_ARG("msg_out", natsio_token_msg(flush, NULL));
    EXPECT_NULL_ARG("cb", natsio_token_on_complete(flush, NULL, NULL, NULL));

    natsio_replies *replies = NULL;
    natsio_request_many_options rm = {1, 0, 500};
    EXPECT_OK(natsio_client_request_many(c, "bad.nobody", NULL, "x", 1, &rm, &replies));
    EXPECT_NULL_ARG("msg_out", natsio_replies_next(replies, NULL));
    natsio_replies_free(replies);
}

static void test_invalid_utf8_everywhere(void) {
    nt_server *s = start_server(NULL);
    NT_CHECK(s != NULL);
    natsio_client *c = connect_url(nt_server_url(s));
    NT_CHECK(c != NULL);
    natsio_sub *watch = subscribe_and_flush(c, ">");
    NT_CHECK(watch != NULL);

    natsio_sub *sub = SENTINEL;
    natsio_msg *m = SENTINEL;
    natsio_token *t = SENTINEL;
    natsio_replies *r = SENTINEL;
    natsio_client *c2 = SENTINEL;

    EXPECT_FAILS(NATSIO_ERR_INVALID_UTF8, natsio_client_publish(c, BAD_UTF8, "x", 1));
    EXPECT_FAILS(NATSIO_ERR_INVALID_UTF8,
                 natsio_client_publish_with(c, BAD_UTF8, NULL, NULL, "x", 1));
    EXPECT_FAILS(NATSIO_ERR_INVALID_UTF8,
                 natsio_client_publish_with(c, "utf8.ok", BAD_UTF8, NULL, "x", 1));
    EXPECT_FAILS(NATSIO_ERR_INVALID_UTF8, natsio_client_subscribe(c, BAD_UTF8, NULL, NULL, &sub));
    EXPECT_FAILS(NATSIO_ERR_INVALID_UTF8,
                 natsio_client_subscribe(c, "utf8.ok", BAD_UTF8, NULL, &sub));
    EXPECT_FAILS(NATSIO_ERR_INVALID_UTF8, natsio_client_request(c, BAD_UTF8, NULL, "x", 1, 100, &m));
    EXPECT_FAILS(NATSIO_ERR_INVALID_UTF8,
                 natsio_client_request_async(c, BAD_UTF8, NULL, "x", 1, 100, &t));
    EXPECT_FAILS(NATSIO_ERR_INVALID_UTF8,
                 natsio_client_request_many(c, BAD_UTF8, NULL, "x", 1, NULL, &r));
    EXPECT_FAILS(NATSIO_ERR_INVALID_UTF8, natsio_client_connect_url(BAD_UTF8, &c2));
    NT_CHECK(sub == SENTINEL && m == SENTINEL && t == SENTINEL && r == SENTINEL);
    NT_CHECK(c2 == SENTINEL);

    natsio_options *o = NULL;
    EXPECT_OK(natsio_options_new(&o));
    nt_cleanup(options_free_cb, o);
    const char *bad_urls[] = {BAD_UTF8};
    EXPECT_FAILS(NATSIO_ERR_INVALID_UTF8, natsio_options_set_url(o, BAD_UTF8));
    EXPECT_FAILS(NATSIO_ERR_INVALID_UTF8, natsio_options_set_servers(o, bad_urls, 1));
    EXPECT_FAILS(NATSIO_ERR_INVALID_UTF8, natsio_options_set_name(o, BAD_UTF8));
    EXPECT_FAILS(NATSIO_ERR_INVALID_UTF8, natsio_options_set_inbox_prefix(o, BAD_UTF8));
    EXPECT_FAILS(NATSIO_ERR_INVALID_UTF8, natsio_options_set_user_password(o, BAD_UTF8, "p"));
    EXPECT_FAILS(NATSIO_ERR_INVALID_UTF8, natsio_options_set_user_password(o, "u", BAD_UTF8));

    natsio_options *o2 = NULL;
    EXPECT_OK(natsio_options_new(&o2));
    nt_cleanup(options_free_cb, o2);
    EXPECT_FAILS(NATSIO_ERR_INVALID_UTF8, natsio_options_set_token(o2, BAD_UTF8));

    /* Nothing was published. */
    received_log log;
    collect_until_end(c, watch, "utf8.end", &log);
    NT_CHECK(!nt_failed());
    NT_CHECK_MSG(log.count == 0, "%d message(s) got through, first on %s", log.count,
                 log.subjects[0]);
}

static void test_bad_subjects(void) {
    nt_server *s = start_server(NULL);
    NT_CHECK(s != NULL);
    natsio_client *c = connect_url(nt_server_url(s));
    NT_CHECK(c != NULL);
    natsio_sub *watch = subscribe_and_flush(c, ">");
    NT_CHECK(watch != NULL);

    /* Invalid wherever a subject is published to (or used as a reply). */
    const char *bad_publish[] = {"",    "a..b", " a",   "a b",     "a.*",
                                 "a.>", ">",    "*",    ".a",      "a.",
                                 "a\tb", "a\r\nPUB a 1\r\nx", "a\nb", "a\r"};
    natsio_msg *m = SENTINEL;
    natsio_token *t = SENTINEL;
    natsio_replies *r = SENTINEL;
    for (size_t i = 0; i < NT_COUNT(bad_publish); i++) {
        const char *subj = bad_publish[i];
        EXPECT_FAILS(NATSIO_ERR_BAD_SUBJECT, natsio_client_publish(c, subj, "x", 1));
        EXPECT_FAILS(NATSIO_ERR_BAD_SUBJECT,
                     natsio_client_publish_with(c, subj, NULL, NULL, "x", 1));
        EXPECT_FAILS(NATSIO_ERR_BAD_SUBJECT,
                     natsio_client_publish_with(c, "subj.ok", subj, NULL, "x", 1));
        EXPECT_FAILS(NATSIO_ERR_BAD_SUBJECT, natsio_client_request(c, subj, NULL, "x", 1, 100, &m));
        EXPECT_FAILS(NATSIO_ERR_BAD_SUBJECT,
                     natsio_client_request_async(c, subj, NULL, "x", 1, 100, &t));
        EXPECT_FAILS(NATSIO_ERR_BAD_SUBJECT,
                     natsio_client_request_many(c, subj, NULL, "x", 1, NULL, &r));
    }
    NT_CHECK(m == SENTINEL && t == SENTINEL && r == SENTINEL);

    /* Invalid to subscribe to. Wildcards are fine here when whole tokens. */
    const char *bad_subscribe[] = {"",   "a..b", " a",   "a b",  "a.>.b", ">.a",
                                   "a.", ".a",   "a\r\n", "a.b\n", "a\tb",  "a\r\nSUB x 9\r\n"};
    natsio_sub *sub = SENTINEL;
    for (size_t i = 0; i < NT_COUNT(bad_subscribe); i++) {
        EXPECT_FAILS(NATSIO_ERR_BAD_SUBJECT,
                     natsio_client_subscribe(c, bad_subscribe[i], NULL, NULL, &sub));
        EXPECT_FAILS(NATSIO_ERR_BAD_SUBJECT,
                     natsio_client_subscribe(c, bad_subscribe[i], "q", NULL, &sub));
    }
    NT_CHECK(sub == SENTINEL);

    /* Nothing was published: the catch-all subscriber sees only the end. */
    received_log log;
    collect_until_end(c, watch, "subj.end", &log);
    NT_CHECK(!nt_failed());
    NT_CHECK_MSG(log.count == 0, "%d message(s) got through, first on %s", log.count,
                 log.subjects[0]);

    /* The wildcard forms rejected for publish are valid subscriptions. */
    natsio_sub *ok = NULL;
    EXPECT_OK(natsio_client_subscribe(c, "a.*", NULL, NULL, &ok));
    natsio_sub_free(ok);
}

static void test_bad_subjects_and_queues_in_callback_mode(void) {
    natsio_client *c = connect_to_own_server(NULL);
    NT_CHECK(c != NULL);
    int calls = 0;
    natsio_sub *sub = SENTINEL;
    EXPECT_FAILS(NATSIO_ERR_BAD_SUBJECT, natsio_client_subscribe_callback(
                                            c, "a..b", NULL, NULL, on_msg_count, &calls, NULL, &sub));
    EXPECT_FAILS(NATSIO_ERR_BAD_SUBJECT, natsio_client_subscribe_callback(
                                            c, "a.>.b", NULL, NULL, on_msg_count, &calls, NULL, &sub));
    EXPECT_FAILS(NATSIO_ERR_INVALID_UTF8,
                 natsio_client_subscribe_callback(c, BAD_UTF8, NULL, NULL, on_msg_count, &calls,
                                                 NULL, &sub));
    EXPECT_FAILS(NATSIO_ERR_BAD_QUEUE_NAME,
                 natsio_client_subscribe_callback(c, "q.subj", "a b", NULL, on_msg_count, &calls,
                                                 NULL, &sub));
    EXPECT_FAILS(NATSIO_ERR_INVALID_UTF8,
                 natsio_client_subscribe_callback(c, "q.subj", BAD_UTF8, NULL, on_msg_count,
                                                 &calls, NULL, &sub));
    NT_CHECK(sub == SENTINEL);
    EXPECT_OK(natsio_client_publish(c, "q.subj", "x", 1));
    EXPECT_OK(natsio_client_flush(c, 5000));
    nt_sleep_ms(50);
    NT_CHECK_INT_EQ(__atomic_load_n(&calls, __ATOMIC_SEQ_CST), 0);
}

static void test_bad_queue_names(void) {
    natsio_client *c = connect_to_own_server(NULL);
    NT_CHECK(c != NULL);
    const char *bad_queues[] = {"", "a b", " q", "q ", "q\t", "q\r\n", "q\nUNSUB 1"};
    natsio_sub *sub = SENTINEL;
    for (size_t i = 0; i < NT_COUNT(bad_queues); i++) {
        EXPECT_FAILS(NATSIO_ERR_BAD_QUEUE_NAME,
                     natsio_client_subscribe(c, "queue.subj", bad_queues[i], NULL, &sub));
    }
    NT_CHECK(sub == SENTINEL);
    natsio_sub *ok = NULL;
    EXPECT_OK(natsio_client_subscribe(c, "queue.subj", "workers", NULL, &ok));
    NT_CHECK_STR_EQ(natsio_sub_queue(ok), "workers");
    natsio_sub_free(ok);
}

static void test_max_payload(void) {
    /* A small server limit keeps the buffers small and proves the client
     * uses the server's INFO rather than a constant. */
    natsio_client *c = connect_to_own_server("max_payload: 4096\n");
    NT_CHECK(c != NULL);
    NT_CHECK_INT_EQ(natsio_client_max_payload(c), 4096);
    natsio_sub *watch = subscribe_and_flush(c, "big.>");
    NT_CHECK(watch != NULL);
    natsio_sub *responder = subscribe_and_flush(c, "svc.big");
    NT_CHECK(responder != NULL);

    size_t max = 4096;
    char *buf = calloc(1, max + 1);
    NT_CHECK(buf != NULL);
    nt_cleanup(free, buf);
    memset(buf, 'p', max + 1);

    natsio_headers *h = NULL;
    EXPECT_OK(natsio_headers_new(&h));
    nt_cleanup(headers_free_cb, h);
    EXPECT_OK(natsio_headers_add(h, "X-Size", "big"));

    natsio_msg *m = SENTINEL;
    natsio_token *t = SENTINEL;
    natsio_replies *r = SENTINEL;
    EXPECT_FAILS(NATSIO_ERR_MAX_PAYLOAD, natsio_client_publish(c, "big.over", buf, max + 1));
    EXPECT_FAILS(NATSIO_ERR_MAX_PAYLOAD,
                 natsio_client_publish_with(c, "big.over", "big.reply", NULL, buf, max + 1));
    /* Headers count: data that fits alone no longer fits with them. */
    EXPECT_FAILS(NATSIO_ERR_MAX_PAYLOAD,
                 natsio_client_publish_with(c, "big.hdrs", NULL, h, buf, max - 4));
    EXPECT_FAILS(NATSIO_ERR_MAX_PAYLOAD,
                 natsio_client_request(c, "svc.big", NULL, buf, max + 1, 1000, &m));
    EXPECT_FAILS(NATSIO_ERR_MAX_PAYLOAD,
                 natsio_client_request(c, "svc.big", h, buf, max, 1000, &m));
    EXPECT_FAILS(NATSIO_ERR_MAX_PAYLOAD,
                 natsio_client_request_async(c, "svc.big", NULL, buf, max + 1, 1000, &t));
    EXPECT_FAILS(NATSIO_ERR_MAX_PAYLOAD,
                 natsio_client_request_many(c, "svc.big", NULL, buf, max + 1, NULL, &r));
    NT_CHECK(m == SENTINEL && t == SENTINEL && r == SENTINEL);

    /* The responder got no request; a reply that is too big is refused too. */
    natsio_msg *req = SENTINEL;
    EXPECT_FAILS(NATSIO_ERR_TIMEOUT, natsio_sub_next_msg(responder, 50, &req));
    NT_CHECK(req == SENTINEL);
    natsio_token *pending = NULL;
    EXPECT_OK(natsio_client_request_async(c, "svc.big", NULL, "q", 1, 2000, &pending));
    nt_cleanup(token_free_cb, pending);
    EXPECT_OK(natsio_sub_next_msg(responder, 5000, &req));
    nt_cleanup(msg_free_cb, req);
    EXPECT_FAILS(NATSIO_ERR_MAX_PAYLOAD, natsio_msg_respond(req, buf, max + 1));
    EXPECT_FAILS(NATSIO_ERR_MAX_PAYLOAD, natsio_msg_respond_with(req, h, buf, max));
    EXPECT_OK(natsio_msg_respond(req, "small", 5));
    EXPECT_OK(natsio_token_wait(pending, 5000));
    natsio_msg *reply = NULL;
    EXPECT_OK(natsio_token_msg(pending, &reply));
    nt_cleanup(msg_free_cb, reply);
    NT_CHECK_MEM_EQ(natsio_msg_data(reply), natsio_msg_data_len(reply), "small", 5);

    /* Exactly at the limit is accepted, with and without headers. */
    EXPECT_OK(natsio_client_publish(c, "big.exact", buf, max));
    EXPECT_OK(natsio_client_publish_with(c, "big.fits", NULL, h, buf, max - 64));

    received_log log;
    collect_until_end(c, watch, "big.end", &log);
    NT_CHECK(!nt_failed());
    NT_CHECK_INT_EQ(log.count, 2);
    NT_CHECK_STR_EQ(log.subjects[0], "big.exact");
    NT_CHECK_INT_EQ(log.sizes[0], max);
    NT_CHECK_STR_EQ(log.subjects[1], "big.fits");
    NT_CHECK_INT_EQ(log.sizes[1], max - 64);
    /* The connection survived all of it. */
    NT_CHECK(natsio_client_status(c) == NATSIO_CONN_CONNECTED);
}

static void test_invalid_arguments(void) {
    natsio_client *c = connect_to_own_server(NULL);
    NT_CHECK(c != NULL);

    natsio_sub_options so;
    EXPECT_OK(natsio_sub_options_init(&so));
    natsio_sub *sub = SENTINEL;
    int calls = 0;
    const int32_t bad_policies[] = {7, -1, 4, INT32_MAX};
    for (size_t i = 0; i < NT_COUNT(bad_policies); i++) {
        so.policy = bad_policies[i];
        EXPECT_FAILS(NATSIO_ERR_INVALID_ARGUMENT,
                     natsio_client_subscribe(c, "arg.subj", NULL, &so, &sub));
        EXPECT_FAILS(NATSIO_ERR_INVALID_ARGUMENT,
                     natsio_client_subscribe_callback(c, "arg.subj", NULL, &so, on_msg_count,
                                                     &calls, NULL, &sub));
    }
    NT_CHECK(sub == SENTINEL);

    /* unsubscribe_after(0) is refused and leaves the subscription working. */
    natsio_sub *live = subscribe_and_flush(c, "arg.live");
    NT_CHECK(live != NULL);
    EXPECT_FAILS(NATSIO_ERR_INVALID_ARGUMENT, natsio_sub_unsubscribe_after(live, 0));
    NT_CHECK(!natsio_sub_is_closed(live));
    EXPECT_OK(natsio_client_publish(c, "arg.live", "1", 1));
    EXPECT_OK(natsio_client_publish(c, "arg.live", "2", 1));
    natsio_msg *m = NULL;
    EXPECT_OK(natsio_sub_next_msg(live, 5000, &m));
    natsio_msg_free(m);
    EXPECT_OK(natsio_sub_next_msg(live, 5000, &m));
    NT_CHECK_MEM_EQ(natsio_msg_data(m), natsio_msg_data_len(m), "2", 1);
    natsio_msg_free(m);
}

static void test_use_after_close(void) {
    natsio_client *c = connect_to_own_server(NULL);
    NT_CHECK(c != NULL);
    natsio_sub *sub = subscribe_and_flush(c, "closed.>");
    NT_CHECK(sub != NULL);
    EXPECT_OK(natsio_client_publish_with(c, "closed.req", "closed.reply", NULL, "x", 1));
    EXPECT_OK(natsio_client_flush(c, 5000));
    natsio_msg *req = NULL;
    EXPECT_OK(natsio_sub_next_msg(sub, 5000, &req));
    nt_cleanup(msg_free_cb, req);

    EXPECT_OK(natsio_client_close(c));
    NT_CHECK(natsio_client_status(c) == NATSIO_CONN_CLOSED);
    EXPECT_OK(natsio_client_close(c)); /* idempotent */

    natsio_sub *sub2 = SENTINEL;
    natsio_msg *m = SENTINEL;
    natsio_token *t = SENTINEL;
    natsio_replies *r = SENTINEL;
    char *url = SENTINEL_STR;
    int calls = 0;
    EXPECT_FAILS(NATSIO_ERR_CONNECTION_CLOSED, natsio_client_publish(c, "closed.x", "x", 1));
    EXPECT_FAILS(NATSIO_ERR_CONNECTION_CLOSED,
                 natsio_client_publish_with(c, "closed.x", "closed.r", NULL, "x", 1));
    EXPECT_FAILS(NATSIO_ERR_CONNECTION_CLOSED,
                 natsio_client_subscribe(c, "closed.x", NULL, NULL, &sub2));
    EXPECT_FAILS(NATSIO_ERR_CONNECTION_CLOSED,
                 natsio_client_subscribe_callback(c, "closed.x", NULL, NULL, on_msg_count, &calls,
                                                 NULL, &sub2));
    EXPECT_FAILS(NATSIO_ERR_CONNECTION_CLOSED,
                 natsio_client_request(c, "closed.x", NULL, "x", 1, 500, &m));
    EXPECT_FAILS(NATSIO_ERR_CONNECTION_CLOSED,
                 natsio_client_request_async(c, "closed.x", NULL, "x", 1, 500, &t));
    EXPECT_FAILS(NATSIO_ERR_CONNECTION_CLOSED,
                 natsio_client_request_many(c, "closed.x", NULL, "x", 1, NULL, &r));
    EXPECT_FAILS(NATSIO_ERR_CONNECTION_CLOSED, natsio_client_flush(c, 500));
    EXPECT_FAILS(NATSIO_ERR_CONNECTION_CLOSED, natsio_client_drain(c, 500));
    EXPECT_FAILS(NATSIO_ERR_CONNECTION_CLOSED, natsio_client_connected_url(c, &url));
    EXPECT_FAILS(NATSIO_ERR_CONNECTION_CLOSED, natsio_msg_respond(req, "late", 4));
    NT_CHECK(sub2 == SENTINEL && m == SENTINEL && t == SENTINEL && r == SENTINEL);
    NT_CHECK(url == SENTINEL_STR);

    natsio_token *flush = NULL;
    natsio_status flush_st = natsio_client_flush_async(c, &flush);
    check_async_fails_closed(flush_st, flush, "flush_async");
    NT_CHECK(!nt_failed());
    natsio_token *drain = NULL;
    natsio_status drain_st = natsio_client_drain_async(c, 500, &drain);
    check_async_fails_closed(drain_st, drain, "drain_async");
    NT_CHECK(!nt_failed());

    /* Its subscriptions closed with it. */
    NT_CHECK(natsio_sub_is_closed(sub));
    EXPECT_FAILS(NATSIO_ERR_SUBSCRIPTION_CLOSED, natsio_sub_next_msg(sub, 100, &m));
    NT_CHECK(m == SENTINEL);
}

static void test_subscription_closed(void) {
    natsio_client *c = connect_to_own_server(NULL);
    NT_CHECK(c != NULL);

    /* next_msg on a callback subscription is refused; the callback still
     * gets every message. */
    int calls = 0;
    natsio_sub *cb_sub = NULL;
    EXPECT_OK(natsio_client_subscribe_callback(c, "sc.cb", NULL, NULL, on_msg_count, &calls, NULL,
                                              &cb_sub));
    nt_cleanup(sub_free_cb, cb_sub);
    EXPECT_OK(natsio_client_flush(c, 5000));
    natsio_msg *m = SENTINEL;
    EXPECT_FAILS(NATSIO_ERR_SUBSCRIPTION_CLOSED, natsio_sub_next_msg(cb_sub, 50, &m));
    NT_CHECK(m == SENTINEL);
    EXPECT_OK(natsio_client_publish(c, "sc.cb", "1", 1));
    EXPECT_OK(natsio_client_publish(c, "sc.cb", "2", 1));
    EXPECT_OK(natsio_client_flush(c, 5000));
    for (int i = 0; i < 500 && __atomic_load_n(&calls, __ATOMIC_SEQ_CST) < 2; i++) nt_sleep_ms(10);
    NT_CHECK_INT_EQ(__atomic_load_n(&calls, __ATOMIC_SEQ_CST), 2);
    NT_CHECK(!natsio_sub_is_closed(cb_sub));

    /* Everything but free fails on an unsubscribed subscription. */
    natsio_sub *sub = subscribe_and_flush(c, "sc.iter");
    NT_CHECK(sub != NULL);
    EXPECT_OK(natsio_sub_unsubscribe(sub));
    NT_CHECK(natsio_sub_is_closed(sub));
    EXPECT_FAILS(NATSIO_ERR_SUBSCRIPTION_CLOSED, natsio_sub_unsubscribe(sub));
    EXPECT_FAILS(NATSIO_ERR_SUBSCRIPTION_CLOSED, natsio_sub_unsubscribe_after(sub, 5));
    EXPECT_FAILS(NATSIO_ERR_SUBSCRIPTION_CLOSED, natsio_sub_next_msg(sub, 50, &m));
    NT_CHECK(m == SENTINEL);
    NT_CHECK_STR_EQ(natsio_sub_subject(sub), "sc.iter"); /* the handle stays valid */
}

static void on_token_done(void *user_data, natsio_token *token) {
    (void)token;
    __atomic_add_fetch((int *)user_data, 1, __ATOMIC_SEQ_CST);
}

static void test_token_illegal_states(void) {
    natsio_client *c = connect_to_own_server(NULL);
    NT_CHECK(c != NULL);

    int first = 0, second = 0;
    natsio_token *t = NULL;
    EXPECT_OK(natsio_client_flush_async(c, &t));
    nt_cleanup(token_free_cb, t);
    EXPECT_OK(natsio_token_on_complete(t, on_token_done, &first, NULL));
    EXPECT_FAILS(NATSIO_ERR_ILLEGAL_STATE, natsio_token_on_complete(t, on_token_done, &second, NULL));
    EXPECT_OK(natsio_token_wait(t, 5000));
    for (int i = 0; i < 500 && __atomic_load_n(&first, __ATOMIC_SEQ_CST) < 1; i++) nt_sleep_ms(10);
    nt_sleep_ms(20);
    NT_CHECK_INT_EQ(__atomic_load_n(&first, __ATOMIC_SEQ_CST), 1);
    NT_CHECK_INT_EQ(__atomic_load_n(&second, __ATOMIC_SEQ_CST), 0);
    EXPECT_FAILS(NATSIO_ERR_ILLEGAL_STATE, natsio_token_on_complete(t, on_token_done, &second, NULL));

    /* A completed operation cannot be cancelled; a flush has no message. */
    EXPECT_OK(natsio_token_status(t));
    EXPECT_FAILS(NATSIO_ERR_ILLEGAL_STATE, natsio_token_cancel(t));
    EXPECT_OK(natsio_token_status(t));
    natsio_msg *m = SENTINEL;
    EXPECT_FAILS(NATSIO_ERR_ILLEGAL_STATE, natsio_token_msg(t, &m));
    NT_CHECK(m == SENTINEL);
}

static void test_usage_errors_reported_by_status(void) {
    /* Statuses of ordinary misuse that C input triggers directly. */
    natsio_client *c = connect_to_own_server(NULL);
    NT_CHECK(c != NULL);

    /* Responding to a message without a reply subject. */
    natsio_sub *sub = subscribe_and_flush(c, "use.plain");
    NT_CHECK(sub != NULL);
    EXPECT_OK(natsio_client_publish(c, "use.plain", "x", 1));
    natsio_msg *plain = NULL;
    EXPECT_OK(natsio_sub_next_msg(sub, 5000, &plain));
    nt_cleanup(msg_free_cb, plain);
    NT_CHECK(natsio_msg_reply(plain) == NULL);
    EXPECT_FAILS(NATSIO_ERR_NO_REPLY_SUBJECT, natsio_msg_respond(plain, "r", 1));

    /* A request nobody listens to. */
    natsio_msg *m = SENTINEL;
    EXPECT_FAILS(NATSIO_ERR_NO_RESPONDERS,
                 natsio_client_request(c, "use.nobody", NULL, "x", 1, 2000, &m));
    NT_CHECK(m == SENTINEL);

    /* A cancelled request: its subscriber stays silent. */
    natsio_sub *silent = subscribe_and_flush(c, "use.silent");
    NT_CHECK(silent != NULL);
    natsio_token *t = NULL;
    EXPECT_OK(natsio_client_request_async(c, "use.silent", NULL, "x", 1, 10000, &t));
    nt_cleanup(token_free_cb, t);
    EXPECT_OK(natsio_token_cancel(t));
    EXPECT_OK(natsio_token_wait(t, 5000));
    EXPECT_FAILS(NATSIO_ERR_CANCELLED, natsio_token_status(t));
    EXPECT_FAILS(NATSIO_ERR_CANCELLED, natsio_token_msg(t, &m));
    NT_CHECK(m == SENTINEL);

    /* A server that is not there. */
    char url[64];
    snprintf(url, sizeof url, "nats://127.0.0.1:%d", nt_free_port());
    natsio_client *none = SENTINEL;
    EXPECT_FAILS(NATSIO_ERR_NO_SERVERS, natsio_client_connect_url(url, &none));
    NT_CHECK(none == SENTINEL);
}

int main(int argc, char **argv) {
    static const nt_case cases[] = {
        NT_CASE(test_status_str_and_last_error_fallbacks),
        NT_CASE(test_getters_on_null_return_documented_fallbacks),
        NT_CASE(test_free_functions_accept_null),
        NT_CASE(test_null_arguments_of_options),
        NT_CASE(test_null_arguments_of_headers),
        NT_CASE(test_null_handles_of_msg_sub_token_replies),
        NT_CASE(test_null_client_handle),
        NT_CASE(test_runtime_worker_threads),
        NT_CASE(test_options_out_of_range_are_config_errors),
        NT_CASE(test_headers_not_found),
        NT_CASE(test_header_injection_is_rejected),
        NT_CASE(test_null_arguments_with_a_live_connection),
        NT_CASE(test_invalid_utf8_everywhere),
        NT_CASE(test_bad_subjects),
        NT_CASE(test_bad_subjects_and_queues_in_callback_mode),
        NT_CASE(test_bad_queue_names),
        NT_CASE(test_max_payload),
        NT_CASE(test_invalid_arguments),
        NT_CASE(test_use_after_close),
        NT_CASE(test_subscription_closed),
        NT_CASE(test_token_illegal_states),
        NT_CASE(test_usage_errors_reported_by_status),
    };
    return nt_main(argc, argv, cases, NT_COUNT(cases));
}
