/*
 * Bad input through the C ABI: every status that C input can trigger has a
 * case here that triggers it and checks
 *   - the exact status,
 *   - that natsio_last_error() explains it (non-empty, and set by *this* call:
 *     each check first plants a marker error and verifies it was replaced),
 *   - that outputs are left untouched (out pointers pre-set to a sentinel),
 *   - that nothing was lost or sent (subscribers receive only the valid
 *     messages; rejected header edits leave the map unchanged).
 * The asynchronous model adds its own: option structs without their _init
 * (or of another version), timeouts outside the header's one rule, create
 * actions outside natsio_create_action, _async calls without token_out or
 * with bad arguments (refused by the call itself, before anything is sent),
 * token accessors of another kind of result, and the new functions on a
 * closed client.
 * Statuses that need a server in some state are triggered too:
 * NATSIO_ERR_RECONNECT_BUF_EXCEEDED (publishing while disconnected), and
 * NATSIO_ERR_PERMISSIONS and NATSIO_ERR_MAX_SUBSCRIPTIONS (server -ERR that
 * reach the error callback and keep the connection). The authentication
 * statuses are in test_auth.c (NATSIO_ERR_AUTH_EXPIRED: a user JWT that
 * expires while connected), the TLS refusals in test_tls.c.
 */
#include "harness.h"
#include "util.h"
#include "natsio.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

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
        natsio_status st = natsio_sub_next(sub, 5000, &m);
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

/* Message callback: counts messages in *(int *)user_data (not the final
 * call, whose msg is NULL). */
static void on_msg_count(void *user_data, const natsio_msg *msg, natsio_status status) {
    (void)status;
    if (msg == NULL) return;
    __atomic_add_fetch((int *)user_data, 1, __ATOMIC_SEQ_CST);
}

/* An asynchronous operation that got past its argument checks (`started`
 * is NATSIO_OK, `token` is its token) completes with `expected`, and the
 * token is freed. The detail is set by the failing token accessor. */
#define EXPECT_TOKEN_FAILS(expected, started, token)                                  \
    do {                                                                             \
        natsio_status started_ = (started);                                          \
        NT_CHECK_MSG(started_ == NATSIO_OK, "%s: got %s (%s)", #started,              \
                     natsio_status_str(started_), natsio_last_error());               \
        natsio_status waited_ = natsio_token_wait((token), 5000);                     \
        EXPECT_FAILS(expected, natsio_token_status(token));                          \
        natsio_token_free(token);                                                    \
        (token) = NULL;                                                              \
        NT_CHECK_MSG(waited_ == NATSIO_OK, "%s: token not done", #started);          \
    } while (0)

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
    NT_CHECK_INT_EQ(natsio_string_list_count(NULL), 0);
    NT_CHECK(natsio_string_list_get(NULL, 0) == NULL);
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
    natsio_string_list_free(NULL);
    natsio_msg_list_free(NULL);
    natsio_kv_entry_list_free(NULL);
    natsio_js_messages_free(NULL);
    natsio_kv_watcher_free(NULL);
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
    EXPECT_NULL_ARG("opts", natsio_options_set_wait_for_write_room(NULL, false));
    EXPECT_NULL_ARG("opts", natsio_options_set_write_room_pause_ms(NULL, 0));
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
    natsio_iter_stats sub_stats;
    memset(&sub_stats, 0xab, sizeof sub_stats);
    int calls = 0;

    EXPECT_NULL_ARG("msg", natsio_msg_respond(NULL, "x", 1));
    EXPECT_NULL_ARG("msg", natsio_msg_respond_with(NULL, NULL, "x", 1));
    EXPECT_NULL_ARG("msg", natsio_msg_clone(NULL, &m));
    NT_CHECK(m == SENTINEL);

    EXPECT_NULL_ARG("opts", natsio_sub_options_init(NULL));
    EXPECT_NULL_ARG("sub", natsio_sub_next(NULL, NATSIO_NO_WAIT, &m));
    EXPECT_NULL_ARG("sub", natsio_sub_next(NULL, NATSIO_WAIT_FOREVER, &m));
    NT_CHECK(m == SENTINEL);
    EXPECT_NULL_ARG("sub", natsio_sub_next_async(NULL, &t));
    EXPECT_NULL_ARG("sub", natsio_sub_set_callback(NULL, on_msg_count, &calls, NULL));
    EXPECT_NULL_ARG("sub", natsio_sub_stop(NULL));
    EXPECT_NULL_ARG("sub", natsio_sub_unsubscribe_after(NULL, 1));
    EXPECT_NULL_ARG("sub", natsio_sub_drain(NULL, NATSIO_TIMEOUT_DEFAULT));
    EXPECT_NULL_ARG("sub", natsio_sub_drain_async(NULL, NATSIO_TIMEOUT_DEFAULT, &t));
    NT_CHECK(t == SENTINEL);
    EXPECT_NULL_ARG("sub", natsio_sub_get_stats(NULL, &sub_stats));
    natsio_iter_stats expected;
    memset(&expected, 0xab, sizeof expected);
    NT_CHECK(memcmp(&sub_stats, &expected, sizeof expected) == 0);

    EXPECT_NULL_ARG("token", natsio_token_wait(NULL, 0));
    EXPECT_NULL_ARG("token", natsio_token_msg(NULL, &m));
    NT_CHECK(m == SENTINEL);
    EXPECT_NULL_ARG("token", natsio_token_on_complete(NULL, NULL, NULL, NULL));
    EXPECT_NULL_ARG("token", natsio_token_cancel(NULL));
    EXPECT_NULL_ARG("token", natsio_token_status(NULL));

    EXPECT_NULL_ARG("replies", natsio_replies_next(NULL, NATSIO_TIMEOUT_DEFAULT, &m));
    NT_CHECK(m == SENTINEL);
    EXPECT_NULL_ARG("replies", natsio_replies_next_async(NULL, &t));
    EXPECT_NULL_ARG("replies", natsio_replies_set_callback(NULL, on_msg_count, &calls, NULL));
    EXPECT_NULL_ARG("replies", natsio_replies_stop(NULL));
    EXPECT_NULL_ARG("replies", natsio_replies_get_stats(NULL, &sub_stats));
    NT_CHECK(t == SENTINEL);
    NT_CHECK(memcmp(&sub_stats, &expected, sizeof expected) == 0);
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
    EXPECT_NULL_ARG("client", natsio_client_request(NULL, "a", NULL, "x", 1, 100, &m));
    EXPECT_NULL_ARG("client", natsio_client_request_async(NULL, "a", NULL, "x", 1, 100, &t));
    EXPECT_NULL_ARG("client", natsio_client_request_many(NULL, "a", NULL, "x", 1, NULL, &r));
    EXPECT_NULL_ARG("client", natsio_client_flush(NULL, 100));
    EXPECT_NULL_ARG("client", natsio_client_flush_async(NULL, NATSIO_TIMEOUT_DEFAULT, &t));
    EXPECT_NULL_ARG("client", natsio_client_drain(NULL, 100));
    EXPECT_NULL_ARG("client", natsio_client_drain_async(NULL, 100, &t));
    EXPECT_NULL_ARG("client", natsio_client_close(NULL));
    EXPECT_NULL_ARG("client", natsio_client_close_async(NULL, &t));
    EXPECT_NULL_ARG("client", natsio_client_server_info(NULL, &s));
    EXPECT_NULL_ARG("client", natsio_client_connected_url(NULL, &s));
    EXPECT_NULL_ARG("client", natsio_client_new_inbox(NULL, &s));
    EXPECT_NULL_ARG("client", natsio_client_get_stats(NULL, &stats));
    natsio_string_list *servers = SENTINEL;
    EXPECT_NULL_ARG("client", natsio_client_servers(NULL, &servers));
    int64_t rtt = -7;
    EXPECT_NULL_ARG("client", natsio_client_rtt(NULL, 100, &rtt));
    EXPECT_NULL_ARG("client", natsio_client_force_reconnect(NULL));
    NT_CHECK(servers == SENTINEL && rtt == -7);

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
    EXPECT_FAILS(NATSIO_ERR_CONFIG, natsio_options_set_write_room_pause_ms(o, -1));
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
    EXPECT_FAILS(NATSIO_ERR_CONFIG, natsio_options_set_url(o, "http://127.0.0.1:4222"));
    EXPECT_FAILS(NATSIO_ERR_CONFIG, natsio_options_set_url(o, "nats://127.0.0.1:notaport"));
    const char *urls[] = {"nats://127.0.0.1:4222", "gopher://x"};
    EXPECT_FAILS(NATSIO_ERR_CONFIG, natsio_options_set_servers(o, urls, 0));
    EXPECT_FAILS(NATSIO_ERR_CONFIG, natsio_options_set_servers(o, urls, 2));
    /* A list argument has at most NATSIO_LIST_MAX_ITEMS items: a larger
     * count is refused before any item is read. */
    EXPECT_FAILS_NAMING(NATSIO_ERR_INVALID_ARGUMENT, "urls",
                        natsio_options_set_servers(o, urls, (size_t)NATSIO_LIST_MAX_ITEMS + 1));

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
    EXPECT_OK(natsio_sub_next(sub, 5000, &m));
    nt_cleanup(msg_free_cb, m);
    const natsio_headers *got = natsio_msg_headers(m);
    NT_CHECK(got != NULL);
    NT_CHECK_INT_EQ(natsio_headers_len(got), 1);
    EXPECT_OK(natsio_headers_get(got, "Kept", &value));
    NT_CHECK_STR_EQ(value, "original");
    NT_CHECK_MEM_EQ(natsio_msg_data(m), natsio_msg_data_len(m), "body", 4);
    natsio_msg *extra = SENTINEL;
    EXPECT_FAILS(NATSIO_ERR_TIMEOUT, natsio_sub_next(sub, 50, &extra));
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
    /* Push mode needs a callback; the subscription stays an iterator. */
    natsio_sub *no_cb = subscribe_and_flush(c, "nocb.x");
    NT_CHECK(no_cb != NULL);
    EXPECT_NULL_ARG("cb", natsio_sub_set_callback(no_cb, NULL, NULL, NULL));
    EXPECT_OK(natsio_client_publish(c, "nocb.x", "it", 2));
    natsio_msg *still = NULL;
    EXPECT_OK(natsio_sub_next(no_cb, 5000, &still));
    natsio_msg_free(still);
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
    EXPECT_NULL_ARG("token_out", natsio_client_flush_async(c, NATSIO_TIMEOUT_DEFAULT, NULL));
    EXPECT_NULL_ARG("token_out", natsio_client_close_async(c, NULL));
    EXPECT_NULL_ARG("list_out", natsio_client_servers(c, NULL));
    EXPECT_NULL_ARG("rtt_us_out", natsio_client_rtt(c, 1000, NULL));
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
    EXPECT_NULL_ITEM_OUT("msg_out", natsio_sub_next(watch, 5000, NULL));
    /* The message was not consumed by the failed call. */
    natsio_msg *kept = NULL;
    EXPECT_OK(natsio_sub_next(watch, 5000, &kept));
    nt_cleanup(msg_free_cb, kept);
    NT_CHECK_STR_EQ(natsio_msg_subject(kept), "bad.keep");
    EXPECT_NULL_ARG("out", natsio_msg_clone(kept, NULL));
    EXPECT_NULL_ARG("data", natsio_msg_respond(kept, NULL, 2));
    EXPECT_NULL_ARG("data", natsio_msg_respond_with(kept, NULL, NULL, 2));

    natsio_iter_stats stats;
    EXPECT_NULL_ARG("stats_out", natsio_sub_get_stats(watch, NULL));
    EXPECT_NULL_ARG("token_out", natsio_sub_drain_async(watch, NATSIO_TIMEOUT_DEFAULT, NULL));
    EXPECT_NULL_ARG("token_out", natsio_sub_next_async(watch, NULL));
    EXPECT_OK(natsio_sub_get_stats(watch, &stats));
    NT_CHECK(!natsio_sub_is_closed(watch));

    natsio_token *flush = NULL;
    EXPECT_OK(natsio_client_flush_async(c, NATSIO_TIMEOUT_DEFAULT, &flush));
    nt_cleanup(token_free_cb, flush);
    EXPECT_NULL_ARG("msg_out", natsio_token_msg(flush, NULL));
    EXPECT_NULL_ARG("cb", natsio_token_on_complete(flush, NULL, NULL, NULL));

    natsio_replies *replies = NULL;
    natsio_request_many_options rm;
    EXPECT_OK(natsio_request_many_options_init(&rm));
    rm.max_msgs = 1;
    rm.timeout_ms = 500;
    EXPECT_OK(natsio_client_request_many(c, "bad.nobody", NULL, "x", 1, &rm, &replies));
    nt_cleanup(replies_free_cb, replies);
    EXPECT_NULL_ITEM_OUT("msg_out", natsio_replies_next(replies, NATSIO_TIMEOUT_DEFAULT, NULL));
    EXPECT_NULL_ARG("token_out", natsio_replies_next_async(replies, NULL));
    EXPECT_NULL_ARG("cb", natsio_replies_set_callback(replies, NULL, NULL, NULL));
    EXPECT_NULL_ARG("stats_out", natsio_replies_get_stats(replies, NULL));
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

/* Push mode is natsio_client_subscribe then natsio_sub_set_callback (util's
 * subscribe_callback): a bad subject or queue stops it at the subscribe,
 * and no callback ever runs. */
static void test_bad_subjects_and_queues_in_callback_mode(void) {
    natsio_client *c = connect_to_own_server(NULL);
    NT_CHECK(c != NULL);
    int calls = 0;
    natsio_sub *sub = SENTINEL;
    EXPECT_FAILS(NATSIO_ERR_BAD_SUBJECT,
                 subscribe_callback(c, "a..b", NULL, NULL, on_msg_count, &calls, NULL, &sub));
    EXPECT_FAILS(NATSIO_ERR_BAD_SUBJECT,
                 subscribe_callback(c, "a.>.b", NULL, NULL, on_msg_count, &calls, NULL, &sub));
    EXPECT_FAILS(NATSIO_ERR_INVALID_UTF8,
                 subscribe_callback(c, BAD_UTF8, NULL, NULL, on_msg_count, &calls, NULL, &sub));
    EXPECT_FAILS(NATSIO_ERR_BAD_QUEUE_NAME,
                 subscribe_callback(c, "q.subj", "a b", NULL, on_msg_count, &calls, NULL, &sub));
    EXPECT_FAILS(NATSIO_ERR_INVALID_UTF8,
                 subscribe_callback(c, "q.subj", BAD_UTF8, NULL, on_msg_count, &calls, NULL, &sub));
    NT_CHECK(sub == SENTINEL);
    EXPECT_OK(natsio_client_publish(c, "q.subj", "x", 1));
    EXPECT_OK(natsio_client_flush(c, 5000));
    nt_sleep_ms(50); /* an absence: no call within 50 ms */
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
    EXPECT_FAILS(NATSIO_ERR_TIMEOUT, natsio_sub_next(responder, 50, &req));
    NT_CHECK(req == SENTINEL);
    natsio_token *pending = NULL;
    EXPECT_OK(natsio_client_request_async(c, "svc.big", NULL, "q", 1, 2000, &pending));
    nt_cleanup(token_free_cb, pending);
    EXPECT_OK(natsio_sub_next(responder, 5000, &req));
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
                     subscribe_callback(c, "arg.subj", NULL, &so, on_msg_count, &calls, NULL, &sub));
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
    EXPECT_OK(natsio_sub_next(live, 5000, &m));
    natsio_msg_free(m);
    EXPECT_OK(natsio_sub_next(live, 5000, &m));
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
    EXPECT_OK(natsio_sub_next(sub, 5000, &req));
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
                 subscribe_callback(c, "closed.x", NULL, NULL, on_msg_count, &calls, NULL, &sub2));
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

    /* The token forms of the core verbs are refused at once too; closing
     * again through a token is fine. */
    EXPECT_FAILS(NATSIO_ERR_CONNECTION_CLOSED, natsio_client_flush_async(c, NATSIO_TIMEOUT_DEFAULT, &t));
    EXPECT_FAILS(NATSIO_ERR_CONNECTION_CLOSED, natsio_client_drain_async(c, 500, &t));
    NT_CHECK(t == SENTINEL);
    natsio_token *closing = NULL;
    EXPECT_OK(natsio_client_close_async(c, &closing));
    nt_cleanup(token_free_cb, closing);
    NT_CHECK_INT_EQ(token_outcome(closing, 5000), NATSIO_OK);
    int64_t rtt = -7;
    EXPECT_FAILS(NATSIO_ERR_CONNECTION_CLOSED, natsio_client_rtt(c, 500, &rtt));
    NT_CHECK(rtt == -7);

    /* Its subscriptions ended with it: the error that ended them, on every
     * call and through a token. */
    NT_CHECK(natsio_sub_is_closed(sub));
    EXPECT_FAILS(NATSIO_ERR_CONNECTION_CLOSED, natsio_sub_next(sub, 100, &m));
    EXPECT_FAILS(NATSIO_ERR_CONNECTION_CLOSED, natsio_sub_next(sub, NATSIO_NO_WAIT, &m));
    NT_CHECK(m == SENTINEL);
    EXPECT_TOKEN_FAILS(NATSIO_ERR_CONNECTION_CLOSED, natsio_sub_next_async(sub, &t), t);
    /* Draining what has ended cannot succeed. */
    EXPECT_FAILS(NATSIO_ERR_CONNECTION_CLOSED, natsio_sub_drain(sub, 500));
}

static void test_subscription_closed(void) {
    natsio_client *c = connect_to_own_server(NULL);
    NT_CHECK(c != NULL);

    /* In push mode next, next_async and a second callback are refused; the
     * callback still gets every message. */
    int calls = 0, other_calls = 0;
    natsio_sub *cb_sub = NULL;
    EXPECT_OK(subscribe_callback(c, "sc.cb", NULL, NULL, on_msg_count, &calls, NULL, &cb_sub));
    nt_cleanup(sub_free_cb, cb_sub);
    EXPECT_OK(natsio_client_flush(c, 5000));
    natsio_msg *m = SENTINEL;
    natsio_token *t = SENTINEL;
    EXPECT_FAILS(NATSIO_ERR_ILLEGAL_STATE, natsio_sub_next(cb_sub, 50, &m));
    EXPECT_FAILS(NATSIO_ERR_ILLEGAL_STATE, natsio_sub_next_async(cb_sub, &t));
    EXPECT_FAILS(NATSIO_ERR_ILLEGAL_STATE, natsio_sub_set_callback(cb_sub, on_msg_count, &other_calls, NULL));
    NT_CHECK(m == SENTINEL && t == SENTINEL);
    EXPECT_OK(natsio_client_publish(c, "sc.cb", "1", 1));
    EXPECT_OK(natsio_client_publish(c, "sc.cb", "2", 1));
    EXPECT_OK(natsio_client_flush(c, 5000));
    for (int i = 0; i < 500 && __atomic_load_n(&calls, __ATOMIC_SEQ_CST) < 2; i++) nt_sleep_ms(10);
    NT_CHECK_INT_EQ(__atomic_load_n(&calls, __ATOMIC_SEQ_CST), 2);
    NT_CHECK_INT_EQ(__atomic_load_n(&other_calls, __ATOMIC_SEQ_CST), 0);
    NT_CHECK(!natsio_sub_is_closed(cb_sub));

    /* Push mode is refused while next_async tokens wait for messages; the
     * pending token still gets the next one. */
    natsio_sub *waiting = subscribe_and_flush(c, "sc.waiting");
    NT_CHECK(waiting != NULL);
    natsio_token *pending = NULL;
    EXPECT_OK(natsio_sub_next_async(waiting, &pending));
    nt_cleanup(token_free_cb, pending);
    EXPECT_FAILS(NATSIO_ERR_ILLEGAL_STATE, natsio_sub_set_callback(waiting, on_msg_count, &other_calls, NULL));
    EXPECT_OK(natsio_client_publish(c, "sc.waiting", "w", 1));
    NT_CHECK_INT_EQ(token_outcome(pending, 5000), NATSIO_OK);

    /* On a stopped subscription: stop again is fine, next says it ended
     * (NATSIO_DONE, not an error), what needs a live one fails. */
    natsio_sub *sub = subscribe_and_flush(c, "sc.iter");
    NT_CHECK(sub != NULL);
    EXPECT_OK(natsio_sub_stop(sub));
    NT_CHECK(natsio_sub_is_closed(sub));
    EXPECT_OK(natsio_sub_stop(sub));
    EXPECT_FAILS(NATSIO_ERR_SUBSCRIPTION_CLOSED, natsio_sub_unsubscribe_after(sub, 5));
    EXPECT_FAILS(NATSIO_ERR_SUBSCRIPTION_CLOSED, natsio_sub_drain(sub, 500));
    NT_CHECK_INT_EQ(natsio_sub_next(sub, 50, &m), NATSIO_DONE);
    NT_CHECK(m == NULL);
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
    EXPECT_OK(natsio_client_flush_async(c, NATSIO_TIMEOUT_DEFAULT, &t));
    nt_cleanup(token_free_cb, t);
    EXPECT_OK(natsio_token_on_complete(t, on_token_done, &first, NULL));
    EXPECT_FAILS(NATSIO_ERR_ILLEGAL_STATE, natsio_token_on_complete(t, on_token_done, &second, NULL));
    EXPECT_OK(natsio_token_wait(t, 5000));
    for (int i = 0; i < 500 && __atomic_load_n(&first, __ATOMIC_SEQ_CST) < 1; i++) nt_sleep_ms(10);
    nt_sleep_ms(20); /* an absence: no second call within 20 ms */
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
    EXPECT_OK(natsio_sub_next(sub, 5000, &plain));
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

/* ------------------------------------------------------------------ */
/* The asynchronous model: option structs, timeouts, create actions,  */
/* token forms and token accessors                                     */
/* ------------------------------------------------------------------ */

/* A server for the running case with JetStream, and on it: stream BI
 * (subjects bi.>) holding one message, a durable pull consumer "c" whose
 * one message was fetched and left unacked, and a bucket BIKV with key "k". */
typedef struct {
    nt_server *server;
    natsio_client *c;
    natsio_js *js;
    natsio_kv *kv;
    const natsio_msg *msg; /* the consumed message, borrowed from `list` */
    natsio_msg_list *list;
} js_fixture;

static bool js_fixture_start(js_fixture *f) {
    memset(f, 0, sizeof *f);
    f->server = start_server(NULL);
    if (f->server == NULL) return false;
    f->c = connect_url(nt_server_url(f->server));
    if (f->c == NULL) return false;
    f->js = new_jetstream(f->c, NULL);
    if (f->js == NULL || !create_stream(f->js, "BI", "bi.>") ||
        !create_consumer(f->js, "BI", "{\"durable_name\":\"c\",\"ack_policy\":\"explicit\"}"))
        return false;
    natsio_status st = natsio_js_publish(f->js, "bi.a", "m", 1, NULL, NULL);
    natsio_fetch_options fo;
    if (st == NATSIO_OK) st = natsio_fetch_options_init(&fo);
    fo.max_messages = 1;
    fo.expires_ms = 2000;
    if (st == NATSIO_OK) st = natsio_js_fetch(f->js, "BI", "c", &fo, &f->list);
    if (st == NATSIO_OK) nt_cleanup(msg_list_free_cb, f->list);
    if (st == NATSIO_OK && natsio_msg_list_count(f->list) != 1) st = NATSIO_ERR_NO_MESSAGES;
    if (st != NATSIO_OK) {
        nt_fail_at(__FILE__, __LINE__, "fixture: %s (%s)", natsio_status_str(st), natsio_last_error());
        return false;
    }
    f->msg = natsio_msg_list_get(f->list, 0);
    f->kv = create_bucket(f->js, "{\"bucket\":\"BIKV\",\"history\":5,\"storage\":\"memory\"}");
    if (f->kv == NULL) return false;
    st = natsio_kv_put(f->kv, "k", "v", 1, NULL, NULL);
    if (st != NATSIO_OK) {
        nt_fail_at(__FILE__, __LINE__, "fixture put: %s (%s)", natsio_status_str(st), natsio_last_error());
        return false;
    }
    return true;
}

/* The fixture is as it was made: one message in BI, unacked by "c"; one
 * revision of "k" in BIKV. Proves that refused calls did nothing. */
static void check_fixture_untouched(js_fixture *f) {
    NT_CHECK_INT_EQ(consumer_int(f->js, "BI", "c", "num_ack_pending"), 1);
    NT_CHECK_INT_EQ(consumer_int(f->js, "BI", "c", "num_pending"), 0);
    char *info = NULL;
    EXPECT_OK(natsio_js_stream_info(f->js, "BI", NULL, &info));
    int64_t msgs = -1;
    const char *state = strstr(info, "\"state\"");
    bool found = state != NULL && json_int(state, "messages", &msgs);
    natsio_string_free(info);
    NT_CHECK(found);
    NT_CHECK_INT_EQ(msgs, 1);
    natsio_kv_entry_list *h = NULL;
    EXPECT_OK(natsio_kv_history(f->kv, "k", &h));
    size_t revisions = natsio_kv_entry_list_count(h);
    natsio_kv_entry_list_free(h);
    NT_CHECK_INT_EQ(revisions, 1);
    natsio_string_list *streams = NULL;
    EXPECT_OK(natsio_js_stream_names(f->js, NULL, &streams));
    size_t nstreams = natsio_string_list_count(streams);
    natsio_string_list_free(streams);
    NT_CHECK_INT_EQ(nstreams, 2); /* BI and KV_BIKV */
}

#define NOT_INIT_NAMING(what, call) EXPECT_FAILS_NAMING(NATSIO_ERR_INVALID_ARGUMENT, what, call)

static void test_option_structs_need_their_init(void) {
    /* Each _init sets the version of this header and the defaults (zero,
     * but for the sub options' NATSIO_PENDING_LIMIT_DEFAULT limits), and
     * refuses NULL. */
    natsio_sub_options so;
    natsio_request_many_options rm;
    natsio_js_options jo;
    natsio_js_publish_options po;
    natsio_fetch_options fo;
    natsio_consume_options co;
    natsio_kv_watch_options wo;
    memset(&so, 0xa5, sizeof so);
    memset(&rm, 0xa5, sizeof rm);
    memset(&jo, 0xa5, sizeof jo);
    memset(&po, 0xa5, sizeof po);
    memset(&fo, 0xa5, sizeof fo);
    memset(&co, 0xa5, sizeof co);
    memset(&wo, 0xa5, sizeof wo);
    EXPECT_OK(natsio_sub_options_init(&so));
    EXPECT_OK(natsio_request_many_options_init(&rm));
    EXPECT_OK(natsio_js_options_init(&jo));
    EXPECT_OK(natsio_js_publish_options_init(&po));
    EXPECT_OK(natsio_fetch_options_init(&fo));
    EXPECT_OK(natsio_consume_options_init(&co));
    EXPECT_OK(natsio_kv_watch_options_init(&wo));
    NT_CHECK_INT_EQ(so.version, NATSIO_SUB_OPTIONS_VERSION);
    NT_CHECK(so.pending_msgs_limit == NATSIO_PENDING_LIMIT_DEFAULT && so.pending_bytes_limit == NATSIO_PENDING_LIMIT_DEFAULT &&
             so.policy == NATSIO_POLICY_DROP_NEW);
    NT_CHECK_INT_EQ(rm.version, NATSIO_REQUEST_MANY_OPTIONS_VERSION);
    NT_CHECK(rm.max_msgs == 0 && rm.stall_ms == 0 && rm.timeout_ms == 0);
    NT_CHECK_INT_EQ(jo.version, NATSIO_JS_OPTIONS_VERSION);
    NT_CHECK(jo.domain == NULL && jo.api_prefix == NULL && jo.timeout_ms == 0 && jo.publish_async_max_pending == 0 &&
             jo.publish_async_stall_wait_ms == 0 && jo.publish_async_timeout_ms == 0);
    NT_CHECK_INT_EQ(po.version, NATSIO_JS_PUBLISH_OPTIONS_VERSION);
    NT_CHECK(po.headers == NULL && po.msg_id == NULL && po.expected_stream == NULL && po.expected_last_seq == NULL &&
             po.expected_last_subject_seq == NULL && po.expected_last_subject_seq_subject == NULL &&
             po.expected_last_msg_id == NULL && po.ttl_s == 0 && po.timeout_ms == 0);
    NT_CHECK_INT_EQ(fo.version, NATSIO_FETCH_OPTIONS_VERSION);
    NT_CHECK(fo.max_messages == 0 && fo.max_bytes == 0 && fo.expires_ms == 0 && !fo.no_wait &&
             fo.idle_heartbeat_ms == 0);
    NT_CHECK_INT_EQ(co.version, NATSIO_CONSUME_OPTIONS_VERSION);
    NT_CHECK(co.max_messages == 0 && co.expires_ms == 0 && co.idle_heartbeat_ms == 0);
    NT_CHECK_INT_EQ(wo.version, NATSIO_KV_WATCH_OPTIONS_VERSION);
    NT_CHECK(!wo.include_history && !wo.ignore_deletes && !wo.meta_only && !wo.updates_only &&
             wo.resume_from_revision == 0);
    EXPECT_NULL_ARG("opts", natsio_sub_options_init(NULL));
    EXPECT_NULL_ARG("opts", natsio_request_many_options_init(NULL));
    EXPECT_NULL_ARG("opts", natsio_js_options_init(NULL));
    EXPECT_NULL_ARG("opts", natsio_js_publish_options_init(NULL));
    EXPECT_NULL_ARG("opts", natsio_fetch_options_init(NULL));
    EXPECT_NULL_ARG("opts", natsio_consume_options_init(NULL));
    EXPECT_NULL_ARG("opts", natsio_kv_watch_options_init(NULL));

    js_fixture f;
    NT_CHECK(js_fixture_start(&f));
    natsio_sub *sub = SENTINEL;
    natsio_replies *r = SENTINEL;
    natsio_js *js = SENTINEL;
    natsio_pub_ack *ack = SENTINEL;
    natsio_msg_list *list = SENTINEL;
    natsio_js_messages *it = SENTINEL;
    natsio_kv_watcher *w = SENTINEL;
    natsio_token *t = SENTINEL;
    natsio_sub *responder = subscribe_and_flush(f.c, "opt.svc");
    NT_CHECK(responder != NULL);

    /* A struct that never saw its _init (version 0, as `= {0}` makes it),
     * and one of a newer header (a version this library does not know,
     * each struct's current one + 1, or the largest): refused, naming the
     * struct, before anything is sent. (Older versions of a struct that
     * grew are accepted: see test_watch's resume_from_revision case.) */
    for (int i = 0; i < 3; i++) {
#define BAD_VERSION(current) (i == 0 ? 0u : i == 1 ? (uint32_t)(current) + 1u : UINT32_MAX)
        so.version = BAD_VERSION(NATSIO_SUB_OPTIONS_VERSION);
        rm.version = BAD_VERSION(NATSIO_REQUEST_MANY_OPTIONS_VERSION);
        jo.version = BAD_VERSION(NATSIO_JS_OPTIONS_VERSION);
        po.version = BAD_VERSION(NATSIO_JS_PUBLISH_OPTIONS_VERSION);
        fo.version = BAD_VERSION(NATSIO_FETCH_OPTIONS_VERSION);
        co.version = BAD_VERSION(NATSIO_CONSUME_OPTIONS_VERSION);
        wo.version = BAD_VERSION(NATSIO_KV_WATCH_OPTIONS_VERSION);
#undef BAD_VERSION
        NOT_INIT_NAMING("natsio_sub_options", natsio_client_subscribe(f.c, "opt.x", NULL, &so, &sub));
        NOT_INIT_NAMING("natsio_request_many_options",
                        natsio_client_request_many(f.c, "opt.svc", NULL, "q", 1, &rm, &r));
        NOT_INIT_NAMING("natsio_js_options", natsio_client_jetstream(f.c, &jo, &js));
        NOT_INIT_NAMING("natsio_js_publish_options", natsio_js_publish(f.js, "bi.a", "x", 1, &po, &ack));
        NOT_INIT_NAMING("natsio_js_publish_options", natsio_js_publish_async(f.js, "bi.a", "x", 1, &po, &t));
        NOT_INIT_NAMING("natsio_fetch_options", natsio_js_fetch(f.js, "BI", "c", &fo, &list));
        NOT_INIT_NAMING("natsio_fetch_options", natsio_js_fetch_async(f.js, "BI", "c", &fo, &t));
        NOT_INIT_NAMING("natsio_consume_options", natsio_js_consume(f.js, "BI", "c", &co, &it));
        NOT_INIT_NAMING("natsio_consume_options", natsio_js_consume_async(f.js, "BI", "c", &co, &t));
        NOT_INIT_NAMING("natsio_kv_watch_options", natsio_kv_watch(f.kv, NULL, 0, &wo, &w));
        NOT_INIT_NAMING("natsio_kv_watch_options", natsio_kv_watch_async(f.kv, NULL, 0, &wo, &t));
    }
    NT_CHECK(sub == SENTINEL && r == SENTINEL && js == SENTINEL && ack == SENTINEL && list == SENTINEL &&
             it == SENTINEL && w == SENTINEL && t == SENTINEL);
    /* The request never went out; nothing was published, pulled or watched. */
    natsio_msg *req = SENTINEL;
    EXPECT_FAILS(NATSIO_ERR_TIMEOUT, natsio_sub_next(responder, 100, &req));
    NT_CHECK(req == SENTINEL);
    check_fixture_untouched(&f);
    char names[256];
    natsio_string_list *consumers = NULL;
    EXPECT_OK(natsio_js_consumer_names(f.js, "KV_BIKV", &consumers));
    kept_list(consumers);
    NT_CHECK_MSG(natsio_string_list_count(consumers) == 0, "watch consumers: %s",
                 string_list_join(consumers, names, sizeof names));
}

/* `call` (with timeout_ms `ms`) is refused as an invalid timeout. */
#define EXPECT_BAD_TIMEOUT(call) EXPECT_FAILS_NAMING(NATSIO_ERR_INVALID_ARGUMENT, "timeout_ms", call)

static void test_timeouts_outside_the_rule(void) {
    js_fixture f;
    NT_CHECK(js_fixture_start(&f));
    natsio_sub *sub = subscribe_and_flush(f.c, "to.svc");
    NT_CHECK(sub != NULL);
    natsio_replies *replies = NULL;
    natsio_request_many_options rm;
    EXPECT_OK(natsio_request_many_options_init(&rm));
    rm.timeout_ms = 30000;
    EXPECT_OK(natsio_client_request_many(f.c, "to.svc", NULL, "q", 1, &rm, &replies));
    nt_cleanup(replies_free_cb, replies);
    natsio_msg *request = NULL;
    EXPECT_OK(natsio_sub_next(sub, 5000, &request));
    natsio_msg_free(request);
    natsio_js_messages *it = NULL;
    EXPECT_OK(natsio_js_consume(f.js, "BI", "c", NULL, &it));
    nt_cleanup(js_messages_free_cb, it);
    natsio_kv_watcher *w = NULL;
    EXPECT_OK(natsio_kv_watch(f.kv, NULL, 0, NULL, &w));
    nt_cleanup(kv_watcher_free_cb, w);
    natsio_token *flush = NULL;
    EXPECT_OK(natsio_client_flush_async(f.c, NATSIO_TIMEOUT_DEFAULT, &flush));
    nt_cleanup(token_free_cb, flush);

    natsio_msg *m = SENTINEL;
    natsio_kv_entry *e = SENTINEL;
    natsio_token *t = SENTINEL;
    int64_t rtt = -7;

    /* Negative values other than the two named ones, everywhere. */
    const int64_t bad[] = {-3, -1000, INT64_MIN};
    for (size_t i = 0; i < NT_COUNT(bad); i++) {
        int64_t ms = bad[i];
        EXPECT_BAD_TIMEOUT(natsio_client_request(f.c, "to.svc", NULL, "q", 1, ms, &m));
        EXPECT_BAD_TIMEOUT(natsio_client_request_async(f.c, "to.svc", NULL, "q", 1, ms, &t));
        EXPECT_BAD_TIMEOUT(natsio_client_flush(f.c, ms));
        EXPECT_BAD_TIMEOUT(natsio_client_drain(f.c, ms));
        EXPECT_BAD_TIMEOUT(natsio_client_drain_async(f.c, ms, &t));
        EXPECT_BAD_TIMEOUT(natsio_client_rtt(f.c, ms, &rtt));
        EXPECT_BAD_TIMEOUT(natsio_sub_next(sub, ms, &m));
        EXPECT_BAD_TIMEOUT(natsio_sub_drain(sub, ms));
        EXPECT_BAD_TIMEOUT(natsio_replies_next(replies, ms, &m));
        EXPECT_BAD_TIMEOUT(natsio_token_wait(flush, ms));
        EXPECT_BAD_TIMEOUT(natsio_msg_ack_sync(f.msg, ms));
        EXPECT_BAD_TIMEOUT(natsio_msg_ack_sync_async(f.msg, ms, &t));
        EXPECT_BAD_TIMEOUT(natsio_js_publish_async_complete(f.js, ms));
        EXPECT_BAD_TIMEOUT(natsio_js_publish_async_complete_async(f.js, ms, &t));
        EXPECT_BAD_TIMEOUT(natsio_js_messages_next(it, ms, &m));
        EXPECT_BAD_TIMEOUT(natsio_kv_watcher_next(w, ms, &e));
    }
    /* NATSIO_NO_WAIT where not waiting makes no sense: a request, a flush,
     * a drain, a round trip, an ack confirmation. */
    EXPECT_BAD_TIMEOUT(natsio_client_request(f.c, "to.svc", NULL, "q", 1, NATSIO_NO_WAIT, &m));
    EXPECT_BAD_TIMEOUT(natsio_client_request_async(f.c, "to.svc", NULL, "q", 1, NATSIO_NO_WAIT, &t));
    EXPECT_BAD_TIMEOUT(natsio_client_flush(f.c, NATSIO_NO_WAIT));
    EXPECT_BAD_TIMEOUT(natsio_client_drain(f.c, NATSIO_NO_WAIT));
    EXPECT_BAD_TIMEOUT(natsio_client_drain_async(f.c, NATSIO_NO_WAIT, &t));
    EXPECT_BAD_TIMEOUT(natsio_client_rtt(f.c, NATSIO_NO_WAIT, &rtt));
    EXPECT_BAD_TIMEOUT(natsio_sub_drain(sub, NATSIO_NO_WAIT));
    EXPECT_BAD_TIMEOUT(natsio_msg_ack_sync(f.msg, NATSIO_NO_WAIT));
    EXPECT_BAD_TIMEOUT(natsio_msg_ack_sync_async(f.msg, NATSIO_NO_WAIT, &t));
    EXPECT_BAD_TIMEOUT(natsio_js_publish_async_complete(f.js, NATSIO_NO_WAIT));
    EXPECT_BAD_TIMEOUT(natsio_js_publish_async_complete_async(f.js, NATSIO_NO_WAIT, &t));
    /* natsio_js_next takes its wait in its options (expires_ms, a pull
     * request has to end): a negative one is refused, naming the field. */
    natsio_fetch_options negative_wait;
    natsio_fetch_options_init(&negative_wait);
    negative_wait.expires_ms = -3;
    EXPECT_FAILS_NAMING(NATSIO_ERR_INVALID_ARGUMENT, "expires_ms", natsio_js_next(f.js, "BI", "c", &negative_wait, &m));
    EXPECT_FAILS_NAMING(NATSIO_ERR_INVALID_ARGUMENT, "expires_ms",
                        natsio_js_next_async(f.js, "BI", "c", &negative_wait, &t));
    NT_CHECK(m == SENTINEL && e == SENTINEL && t == SENTINEL && rtt == -7);

    /* Nothing happened: the client is connected, the subscriptions and
     * iterators go on, the message is unacked, nothing was requested. */
    NT_CHECK(natsio_client_status(f.c) == NATSIO_CONN_CONNECTED);
    NT_CHECK(!natsio_sub_is_closed(sub));
    EXPECT_FAILS(NATSIO_ERR_TIMEOUT, natsio_sub_next(sub, NATSIO_NO_WAIT, &m));
    natsio_kv_entry *first = NULL;
    EXPECT_OK(natsio_kv_watcher_next(w, 5000, &first));
    nt_cleanup(kv_entry_free_cb, first);
    NT_CHECK_STR_EQ(natsio_kv_entry_key(first), "k");
    check_fixture_untouched(&f);
    /* The values the rule names are all fine. */
    EXPECT_OK(natsio_client_flush(f.c, NATSIO_TIMEOUT_DEFAULT));
    EXPECT_OK(natsio_client_flush(f.c, NATSIO_WAIT_FOREVER));
    EXPECT_OK(natsio_client_rtt(f.c, NATSIO_TIMEOUT_DEFAULT, &rtt));
    EXPECT_OK(natsio_token_wait(flush, NATSIO_NO_WAIT));
    EXPECT_OK(natsio_token_wait(flush, NATSIO_TIMEOUT_DEFAULT));
    EXPECT_OK(natsio_token_wait(flush, NATSIO_WAIT_FOREVER));
    EXPECT_OK(natsio_js_publish_async_complete(f.js, NATSIO_TIMEOUT_DEFAULT));
    EXPECT_FAILS(NATSIO_ERR_NO_MESSAGES, natsio_js_next(f.js, "BI", "c", NEXT_WAIT(NATSIO_NO_WAIT), &m));
    NT_CHECK(m == SENTINEL);
}

static void test_create_actions_outside_the_enum(void) {
    js_fixture f;
    NT_CHECK(js_fixture_start(&f));
    const char *stream_cfg = "{\"name\":\"BIA\",\"subjects\":[\"bia.>\"],\"storage\":\"memory\"}";
    const char *consumer_cfg = "{\"durable_name\":\"a\",\"ack_policy\":\"explicit\"}";
    const char *bucket_cfg = "{\"bucket\":\"BIAKV\",\"storage\":\"memory\"}";
    char *info = SENTINEL_STR;
    natsio_kv *kv = SENTINEL;
    natsio_token *t = SENTINEL;
    const int32_t bad[] = {3, -1, 100, INT32_MAX, INT32_MIN};
    for (size_t i = 0; i < NT_COUNT(bad); i++) {
        int32_t a = bad[i];
        EXPECT_FAILS_NAMING(NATSIO_ERR_INVALID_ARGUMENT, "action", natsio_js_stream_create(f.js, stream_cfg, a, &info));
        EXPECT_FAILS_NAMING(NATSIO_ERR_INVALID_ARGUMENT, "action",
                            natsio_js_stream_create_async(f.js, stream_cfg, a, &t));
        EXPECT_FAILS_NAMING(NATSIO_ERR_INVALID_ARGUMENT, "action",
                            natsio_js_consumer_create(f.js, "BI", consumer_cfg, a, &info));
        EXPECT_FAILS_NAMING(NATSIO_ERR_INVALID_ARGUMENT, "action",
                            natsio_js_consumer_create_async(f.js, "BI", consumer_cfg, a, &t));
        EXPECT_FAILS_NAMING(NATSIO_ERR_INVALID_ARGUMENT, "action", natsio_js_kv_create(f.js, bucket_cfg, a, &kv));
        EXPECT_FAILS_NAMING(NATSIO_ERR_INVALID_ARGUMENT, "action", natsio_js_kv_create_async(f.js, bucket_cfg, a, &t));
    }
    NT_CHECK(info == SENTINEL_STR && kv == SENTINEL && t == SENTINEL);
    /* Nothing was created. */
    check_fixture_untouched(&f);
    natsio_string_list *consumers = NULL;
    EXPECT_OK(natsio_js_consumer_names(f.js, "BI", &consumers));
    kept_list(consumers);
    NT_CHECK_INT_EQ(natsio_string_list_count(consumers), 1);
}

static void test_async_functions_need_token_out(void) {
    js_fixture f;
    NT_CHECK(js_fixture_start(&f));
    natsio_options *o = options_for_url("nats://127.0.0.1:1", 100);
    NT_CHECK(o != NULL);
    natsio_sub *sub = subscribe_and_flush(f.c, "tok.svc");
    NT_CHECK(sub != NULL);
    natsio_replies *replies = NULL;
    EXPECT_OK(natsio_client_request_many(f.c, "tok.svc", NULL, "q", 1, NULL, &replies));
    nt_cleanup(replies_free_cb, replies);
    natsio_js_messages *it = NULL;
    EXPECT_OK(natsio_js_consume(f.js, "BI", "c", NULL, &it));
    nt_cleanup(js_messages_free_cb, it);
    natsio_kv_watcher *w = NULL;
    EXPECT_OK(natsio_kv_watch(f.kv, NULL, 0, NULL, &w));
    nt_cleanup(kv_watcher_free_cb, w);
    const char *sc = "{\"name\":\"BIT\",\"subjects\":[\"bit.>\"],\"storage\":\"memory\"}";
    const char *cc = "{\"durable_name\":\"t\",\"ack_policy\":\"explicit\"}";
    const char *kc = "{\"bucket\":\"BITKV\",\"storage\":\"memory\"}";
    uint64_t last = 1;

#define NO_TOKEN_OUT(call) EXPECT_NULL_ARG("token_out", call)
    NO_TOKEN_OUT(natsio_client_connect_async(o, NULL));
    NO_TOKEN_OUT(natsio_client_connect_async(NULL, NULL));
    NO_TOKEN_OUT(natsio_client_request_async(f.c, "tok.svc", NULL, "q", 1, 1000, NULL));
    NO_TOKEN_OUT(natsio_client_flush_async(f.c, NATSIO_TIMEOUT_DEFAULT, NULL));
    NO_TOKEN_OUT(natsio_client_drain_async(f.c, 1000, NULL));
    NO_TOKEN_OUT(natsio_client_close_async(f.c, NULL));
    NO_TOKEN_OUT(natsio_sub_next_async(sub, NULL));
    NO_TOKEN_OUT(natsio_sub_drain_async(sub, NATSIO_TIMEOUT_DEFAULT, NULL));
    NO_TOKEN_OUT(natsio_replies_next_async(replies, NULL));
    NO_TOKEN_OUT(natsio_js_account_info_async(f.js, NULL));
    NO_TOKEN_OUT(natsio_js_publish_async(f.js, "bi.a", "x", 1, NULL, NULL));
    NO_TOKEN_OUT(natsio_js_publish_async_complete_async(f.js, 1000, NULL));
    NO_TOKEN_OUT(natsio_js_stream_create_async(f.js, sc, NATSIO_CREATE, NULL));
    NO_TOKEN_OUT(natsio_js_stream_info_async(f.js, "BI", NULL, NULL));
    NO_TOKEN_OUT(natsio_js_stream_delete_async(f.js, "BI", NULL));
    NO_TOKEN_OUT(natsio_js_stream_purge_async(f.js, "BI", NULL, NULL));
    NO_TOKEN_OUT(natsio_js_stream_names_async(f.js, NULL, NULL));
    NO_TOKEN_OUT(natsio_js_stream_get_msg_async(f.js, "BI", 1, NULL, NULL));
    NO_TOKEN_OUT(natsio_js_stream_delete_msg_async(f.js, "BI", 1, false, NULL));
    NO_TOKEN_OUT(natsio_js_consumer_create_async(f.js, "BI", cc, NATSIO_CREATE, NULL));
    NO_TOKEN_OUT(natsio_js_consumer_info_async(f.js, "BI", "c", NULL));
    NO_TOKEN_OUT(natsio_js_consumer_delete_async(f.js, "BI", "c", NULL));
    NO_TOKEN_OUT(natsio_js_consumer_names_async(f.js, "BI", NULL));
    NO_TOKEN_OUT(natsio_js_fetch_async(f.js, "BI", "c", NULL, NULL));
    NO_TOKEN_OUT(natsio_js_next_async(f.js, "BI", "c", NEXT_WAIT(1000), NULL));
    NO_TOKEN_OUT(natsio_msg_ack_sync_async(f.msg, 1000, NULL));
    NO_TOKEN_OUT(natsio_js_consume_async(f.js, "BI", "c", NULL, NULL));
    NO_TOKEN_OUT(natsio_js_messages_next_async(it, NULL));
    NO_TOKEN_OUT(natsio_js_kv_create_async(f.js, kc, NATSIO_CREATE, NULL));
    NO_TOKEN_OUT(natsio_js_kv_bind_async(f.js, "BIKV", NULL));
    NO_TOKEN_OUT(natsio_js_kv_delete_async(f.js, "BIKV", NULL));
    NO_TOKEN_OUT(natsio_kv_put_async(f.kv, "k", "x", 1, NULL, NULL));
    NO_TOKEN_OUT(natsio_kv_create_async(f.kv, "k2", "x", 1, NULL, NULL));
    NO_TOKEN_OUT(natsio_kv_update_async(f.kv, "k", "x", 1, last, NULL));
    NO_TOKEN_OUT(natsio_kv_get_async(f.kv, "k", NULL));
    NO_TOKEN_OUT(natsio_kv_get_revision_async(f.kv, "k", 1, NULL));
    NO_TOKEN_OUT(natsio_kv_delete_async(f.kv, "k", NULL, NULL));
    NO_TOKEN_OUT(natsio_kv_purge_async(f.kv, "k", &last, NULL, NULL));
    NO_TOKEN_OUT(natsio_kv_status_async(f.kv, NULL));
    NO_TOKEN_OUT(natsio_kv_keys_async(f.kv, NULL));
    NO_TOKEN_OUT(natsio_kv_history_async(f.kv, "k", NULL));
    NO_TOKEN_OUT(natsio_kv_watch_async(f.kv, NULL, 0, NULL, NULL));
    NO_TOKEN_OUT(natsio_kv_watcher_next_async(w, NULL));
#undef NO_TOKEN_OUT

    /* Nothing was started: the client, the sub and the iterators go on,
     * nothing was stored, deleted, acked or created. */
    NT_CHECK(natsio_client_status(f.c) == NATSIO_CONN_CONNECTED);
    NT_CHECK(!natsio_sub_is_closed(sub));
    EXPECT_OK(natsio_client_flush(f.c, 5000));
    check_fixture_untouched(&f);
    natsio_kv_entry *first = NULL;
    EXPECT_OK(natsio_kv_watcher_next(w, 5000, &first));
    nt_cleanup(kv_entry_free_cb, first);
    NT_CHECK_STR_EQ(natsio_kv_entry_key(first), "k");
}

static void test_async_functions_check_their_arguments(void) {
    js_fixture f;
    NT_CHECK(js_fixture_start(&f));
    natsio_token *t = SENTINEL;
    const char *sc = "{\"name\":\"BIT\",\"subjects\":[\"bit.>\"],\"storage\":\"memory\"}";
    const char *cc = "{\"durable_name\":\"t\",\"ack_policy\":\"explicit\"}";
    const char *kc = "{\"bucket\":\"BITKV\",\"storage\":\"memory\"}";
    uint64_t last = 1;

    /* NULL handles. */
    EXPECT_NULL_ARG("js", natsio_js_account_info_async(NULL, &t));
    EXPECT_NULL_ARG("js", natsio_js_publish_async_complete_async(NULL, 1000, &t));
    EXPECT_NULL_ARG("js", natsio_js_stream_create_async(NULL, sc, NATSIO_CREATE, &t));
    EXPECT_NULL_ARG("js", natsio_js_stream_info_async(NULL, "BI", NULL, &t));
    EXPECT_NULL_ARG("js", natsio_js_stream_delete_async(NULL, "BI", &t));
    EXPECT_NULL_ARG("js", natsio_js_stream_purge_async(NULL, "BI", NULL, &t));
    EXPECT_NULL_ARG("js", natsio_js_stream_names_async(NULL, NULL, &t));
    EXPECT_NULL_ARG("js", natsio_js_stream_get_msg_async(NULL, "BI", 1, NULL, &t));
    EXPECT_NULL_ARG("js", natsio_js_stream_delete_msg_async(NULL, "BI", 1, false, &t));
    EXPECT_NULL_ARG("js", natsio_js_consumer_create_async(NULL, "BI", cc, NATSIO_CREATE, &t));
    EXPECT_NULL_ARG("js", natsio_js_consumer_info_async(NULL, "BI", "c", &t));
    EXPECT_NULL_ARG("js", natsio_js_consumer_delete_async(NULL, "BI", "c", &t));
    EXPECT_NULL_ARG("js", natsio_js_consumer_names_async(NULL, "BI", &t));
    EXPECT_NULL_ARG("js", natsio_js_fetch_async(NULL, "BI", "c", NULL, &t));
    EXPECT_NULL_ARG("js", natsio_js_next_async(NULL, "BI", "c", NEXT_WAIT(1000), &t));
    EXPECT_NULL_ARG("js", natsio_js_consume_async(NULL, "BI", "c", NULL, &t));
    EXPECT_NULL_ARG("js", natsio_js_kv_create_async(NULL, kc, NATSIO_CREATE, &t));
    EXPECT_NULL_ARG("js", natsio_js_kv_bind_async(NULL, "BIKV", &t));
    EXPECT_NULL_ARG("js", natsio_js_kv_delete_async(NULL, "BIKV", &t));
    EXPECT_NULL_ARG("msg", natsio_msg_ack_sync_async(NULL, 1000, &t));
    EXPECT_NULL_ARG("messages", natsio_js_messages_next_async(NULL, &t));
    EXPECT_NULL_ARG("kv", natsio_kv_put_async(NULL, "k", "x", 1, NULL, &t));
    EXPECT_NULL_ARG("kv", natsio_kv_create_async(NULL, "k", "x", 1, NULL, &t));
    EXPECT_NULL_ARG("kv", natsio_kv_update_async(NULL, "k", "x", 1, last, &t));
    EXPECT_NULL_ARG("kv", natsio_kv_get_async(NULL, "k", &t));
    EXPECT_NULL_ARG("kv", natsio_kv_get_revision_async(NULL, "k", 1, &t));
    EXPECT_NULL_ARG("kv", natsio_kv_delete_async(NULL, "k", NULL, &t));
    EXPECT_NULL_ARG("kv", natsio_kv_purge_async(NULL, "k", NULL, NULL, &t));
    EXPECT_NULL_ARG("kv", natsio_kv_status_async(NULL, &t));
    EXPECT_NULL_ARG("kv", natsio_kv_keys_async(NULL, &t));
    EXPECT_NULL_ARG("kv", natsio_kv_history_async(NULL, "k", &t));
    EXPECT_NULL_ARG("kv", natsio_kv_watch_async(NULL, NULL, 0, NULL, &t));
    EXPECT_NULL_ARG("watcher", natsio_kv_watcher_next_async(NULL, &t));

    /* NULL strings, payloads and lists. */
    EXPECT_NULL_ARG("config_json", natsio_js_stream_create_async(f.js, NULL, NATSIO_CREATE, &t));
    EXPECT_NULL_ARG("name", natsio_js_stream_info_async(f.js, NULL, NULL, &t));
    EXPECT_NULL_ARG("name", natsio_js_stream_delete_async(f.js, NULL, &t));
    EXPECT_NULL_ARG("name", natsio_js_stream_purge_async(f.js, NULL, NULL, &t));
    EXPECT_NULL_ARG("stream", natsio_js_stream_get_msg_async(f.js, NULL, 1, NULL, &t));
    EXPECT_NULL_ARG("stream", natsio_js_stream_delete_msg_async(f.js, NULL, 1, false, &t));
    EXPECT_NULL_ARG("stream", natsio_js_consumer_create_async(f.js, NULL, cc, NATSIO_CREATE, &t));
    EXPECT_NULL_ARG("config_json", natsio_js_consumer_create_async(f.js, "BI", NULL, NATSIO_CREATE, &t));
    EXPECT_NULL_ARG("stream", natsio_js_consumer_info_async(f.js, NULL, "c", &t));
    EXPECT_NULL_ARG("consumer", natsio_js_consumer_info_async(f.js, "BI", NULL, &t));
    EXPECT_NULL_ARG("stream", natsio_js_consumer_delete_async(f.js, NULL, "c", &t));
    EXPECT_NULL_ARG("consumer", natsio_js_consumer_delete_async(f.js, "BI", NULL, &t));
    EXPECT_NULL_ARG("stream", natsio_js_consumer_names_async(f.js, NULL, &t));
    EXPECT_NULL_ARG("stream", natsio_js_fetch_async(f.js, NULL, "c", NULL, &t));
    EXPECT_NULL_ARG("consumer", natsio_js_fetch_async(f.js, "BI", NULL, NULL, &t));
    EXPECT_NULL_ARG("stream", natsio_js_next_async(f.js, NULL, "c", NEXT_WAIT(1000), &t));
    EXPECT_NULL_ARG("consumer", natsio_js_next_async(f.js, "BI", NULL, NEXT_WAIT(1000), &t));
    EXPECT_NULL_ARG("stream", natsio_js_consume_async(f.js, NULL, "c", NULL, &t));
    EXPECT_NULL_ARG("consumer", natsio_js_consume_async(f.js, "BI", NULL, NULL, &t));
    EXPECT_NULL_ARG("config_json", natsio_js_kv_create_async(f.js, NULL, NATSIO_CREATE, &t));
    EXPECT_NULL_ARG("bucket", natsio_js_kv_bind_async(f.js, NULL, &t));
    EXPECT_NULL_ARG("bucket", natsio_js_kv_delete_async(f.js, NULL, &t));
    EXPECT_NULL_ARG("subject", natsio_js_publish_async(f.js, NULL, "x", 1, NULL, &t));
    EXPECT_NULL_ARG("data", natsio_js_publish_async(f.js, "bi.a", NULL, 1, NULL, &t));
    EXPECT_NULL_ARG("key", natsio_kv_put_async(f.kv, NULL, "x", 1, NULL, &t));
    EXPECT_NULL_ARG("value", natsio_kv_put_async(f.kv, "k", NULL, 1, NULL, &t));
    EXPECT_NULL_ARG("key", natsio_kv_create_async(f.kv, NULL, "x", 1, NULL, &t));
    EXPECT_NULL_ARG("value", natsio_kv_create_async(f.kv, "k2", NULL, 1, NULL, &t));
    EXPECT_NULL_ARG("key", natsio_kv_update_async(f.kv, NULL, "x", 1, last, &t));
    EXPECT_NULL_ARG("value", natsio_kv_update_async(f.kv, "k", NULL, 1, last, &t));
    EXPECT_NULL_ARG("key", natsio_kv_get_async(f.kv, NULL, &t));
    EXPECT_NULL_ARG("key", natsio_kv_get_revision_async(f.kv, NULL, 1, &t));
    EXPECT_NULL_ARG("key", natsio_kv_delete_async(f.kv, NULL, NULL, &t));
    EXPECT_NULL_ARG("key", natsio_kv_purge_async(f.kv, NULL, NULL, NULL, &t));
    EXPECT_NULL_ARG("key", natsio_kv_history_async(f.kv, NULL, &t));
    EXPECT_NULL_ARG("keys", natsio_kv_watch_async(f.kv, NULL, 2, NULL, &t));
    const char *null_key[] = {"k", NULL};
    EXPECT_NULL_ARG("key pattern", natsio_kv_watch_async(f.kv, null_key, 2, NULL, &t));

    /* Invalid UTF-8. */
    EXPECT_FAILS_NAMING(NATSIO_ERR_INVALID_UTF8, "config_json",
                        natsio_js_stream_create_async(f.js, BAD_UTF8, NATSIO_CREATE, &t));
    EXPECT_FAILS_NAMING(NATSIO_ERR_INVALID_UTF8, "name", natsio_js_stream_info_async(f.js, BAD_UTF8, NULL, &t));
    EXPECT_FAILS_NAMING(NATSIO_ERR_INVALID_UTF8, "name", natsio_js_stream_delete_async(f.js, BAD_UTF8, &t));
    EXPECT_FAILS_NAMING(NATSIO_ERR_INVALID_UTF8, "name", natsio_js_stream_purge_async(f.js, BAD_UTF8, NULL, &t));
    EXPECT_FAILS_NAMING(NATSIO_ERR_INVALID_UTF8, "options_json",
                        natsio_js_stream_purge_async(f.js, "BI", BAD_UTF8, &t));
    EXPECT_FAILS_NAMING(NATSIO_ERR_INVALID_UTF8, "subject", natsio_js_stream_names_async(f.js, BAD_UTF8, &t));
    EXPECT_FAILS_NAMING(NATSIO_ERR_INVALID_UTF8, "stream",
                        natsio_js_stream_get_msg_async(f.js, BAD_UTF8, 1, NULL, &t));
    EXPECT_FAILS_NAMING(NATSIO_ERR_INVALID_UTF8, "last_by_subject",
                        natsio_js_stream_get_msg_async(f.js, "BI", 1, BAD_UTF8, &t));
    EXPECT_FAILS_NAMING(NATSIO_ERR_INVALID_UTF8, "stream",
                        natsio_js_stream_delete_msg_async(f.js, BAD_UTF8, 1, false, &t));
    EXPECT_FAILS_NAMING(NATSIO_ERR_INVALID_UTF8, "stream",
                        natsio_js_consumer_create_async(f.js, BAD_UTF8, cc, NATSIO_CREATE, &t));
    EXPECT_FAILS_NAMING(NATSIO_ERR_INVALID_UTF8, "config_json",
                        natsio_js_consumer_create_async(f.js, "BI", BAD_UTF8, NATSIO_CREATE, &t));
    EXPECT_FAILS_NAMING(NATSIO_ERR_INVALID_UTF8, "consumer", natsio_js_consumer_info_async(f.js, "BI", BAD_UTF8, &t));
    EXPECT_FAILS_NAMING(NATSIO_ERR_INVALID_UTF8, "consumer",
                        natsio_js_consumer_delete_async(f.js, "BI", BAD_UTF8, &t));
    EXPECT_FAILS_NAMING(NATSIO_ERR_INVALID_UTF8, "stream", natsio_js_consumer_names_async(f.js, BAD_UTF8, &t));
    EXPECT_FAILS_NAMING(NATSIO_ERR_INVALID_UTF8, "consumer", natsio_js_fetch_async(f.js, "BI", BAD_UTF8, NULL, &t));
    EXPECT_FAILS_NAMING(NATSIO_ERR_INVALID_UTF8, "stream", natsio_js_next_async(f.js, BAD_UTF8, "c", NEXT_WAIT(1000), &t));
    EXPECT_FAILS_NAMING(NATSIO_ERR_INVALID_UTF8, "consumer", natsio_js_consume_async(f.js, "BI", BAD_UTF8, NULL, &t));
    EXPECT_FAILS_NAMING(NATSIO_ERR_INVALID_UTF8, "config_json",
                        natsio_js_kv_create_async(f.js, BAD_UTF8, NATSIO_CREATE, &t));
    EXPECT_FAILS_NAMING(NATSIO_ERR_INVALID_UTF8, "bucket", natsio_js_kv_bind_async(f.js, BAD_UTF8, &t));
    EXPECT_FAILS_NAMING(NATSIO_ERR_INVALID_UTF8, "bucket", natsio_js_kv_delete_async(f.js, BAD_UTF8, &t));
    EXPECT_FAILS_NAMING(NATSIO_ERR_INVALID_UTF8, "key", natsio_kv_put_async(f.kv, BAD_UTF8, "x", 1, NULL, &t));
    EXPECT_FAILS_NAMING(NATSIO_ERR_INVALID_UTF8, "key", natsio_kv_create_async(f.kv, BAD_UTF8, "x", 1, NULL, &t));
    EXPECT_FAILS_NAMING(NATSIO_ERR_INVALID_UTF8, "key", natsio_kv_update_async(f.kv, BAD_UTF8, "x", 1, last, &t));
    EXPECT_FAILS_NAMING(NATSIO_ERR_INVALID_UTF8, "key", natsio_kv_get_async(f.kv, BAD_UTF8, &t));
    EXPECT_FAILS_NAMING(NATSIO_ERR_INVALID_UTF8, "key", natsio_kv_get_revision_async(f.kv, BAD_UTF8, 1, &t));
    EXPECT_FAILS_NAMING(NATSIO_ERR_INVALID_UTF8, "key", natsio_kv_delete_async(f.kv, BAD_UTF8, NULL, &t));
    EXPECT_FAILS_NAMING(NATSIO_ERR_INVALID_UTF8, "key", natsio_kv_purge_async(f.kv, BAD_UTF8, NULL, NULL, &t));
    EXPECT_FAILS_NAMING(NATSIO_ERR_INVALID_UTF8, "key", natsio_kv_history_async(f.kv, BAD_UTF8, &t));
    const char *bad_utf8_key[] = {BAD_UTF8};
    EXPECT_FAILS_NAMING(NATSIO_ERR_INVALID_UTF8, "key pattern",
                        natsio_kv_watch_async(f.kv, bad_utf8_key, 1, NULL, &t));

    /* Bad names, subjects, keys and configs. */
    EXPECT_FAILS(NATSIO_ERR_INVALID_ARGUMENT, natsio_js_stream_info_async(f.js, "B.I", NULL, &t));
    EXPECT_FAILS(NATSIO_ERR_INVALID_ARGUMENT, natsio_js_stream_delete_async(f.js, "B I", &t));
    EXPECT_FAILS(NATSIO_ERR_INVALID_ARGUMENT, natsio_js_stream_purge_async(f.js, "", NULL, &t));
    EXPECT_FAILS(NATSIO_ERR_INVALID_ARGUMENT, natsio_js_stream_get_msg_async(f.js, "B*", 1, NULL, &t));
    EXPECT_FAILS(NATSIO_ERR_INVALID_ARGUMENT, natsio_js_stream_delete_msg_async(f.js, "B>", 1, false, &t));
    EXPECT_FAILS(NATSIO_ERR_INVALID_ARGUMENT,
                 natsio_js_stream_create_async(f.js, "{\"name\":\"a.b\"}", NATSIO_CREATE, &t));
    EXPECT_FAILS(NATSIO_ERR_INVALID_ARGUMENT, natsio_js_consumer_info_async(f.js, "BI", "c.d", &t));
    EXPECT_FAILS(NATSIO_ERR_INVALID_ARGUMENT, natsio_js_consumer_delete_async(f.js, "B.I", "c", &t));
    EXPECT_FAILS(NATSIO_ERR_INVALID_ARGUMENT, natsio_js_consumer_names_async(f.js, "", &t));
    EXPECT_FAILS(NATSIO_ERR_INVALID_ARGUMENT,
                 natsio_js_consumer_create_async(f.js, "BI", "{\"durable_name\":\"a b\"}", NATSIO_CREATE, &t));
    EXPECT_FAILS(NATSIO_ERR_INVALID_ARGUMENT, natsio_js_fetch_async(f.js, "BI", "c*", NULL, &t));
    EXPECT_FAILS(NATSIO_ERR_INVALID_ARGUMENT, natsio_js_next_async(f.js, "B I", "c", NEXT_WAIT(1000), &t));
    EXPECT_FAILS(NATSIO_ERR_INVALID_ARGUMENT, natsio_js_consume_async(f.js, "BI", "", NULL, &t));
    EXPECT_FAILS(NATSIO_ERR_BAD_SUBJECT, natsio_js_stream_get_msg_async(f.js, "BI", 0, "bi..a", &t));
    EXPECT_FAILS(NATSIO_ERR_BAD_SUBJECT, natsio_js_publish_async(f.js, "bi.*", "x", 1, NULL, &t));
    EXPECT_FAILS(NATSIO_ERR_INVALID_BUCKET_NAME, natsio_js_kv_bind_async(f.js, "bad.name", &t));
    EXPECT_FAILS(NATSIO_ERR_INVALID_BUCKET_NAME, natsio_js_kv_delete_async(f.js, "b c", &t));
    EXPECT_FAILS(NATSIO_ERR_INVALID_BUCKET_NAME,
                 natsio_js_kv_create_async(f.js, "{\"bucket\":\"a*\"}", NATSIO_CREATE, &t));
    EXPECT_FAILS(NATSIO_ERR_INVALID_KEY, natsio_kv_put_async(f.kv, "a..b", "x", 1, NULL, &t));
    EXPECT_FAILS(NATSIO_ERR_INVALID_KEY, natsio_kv_create_async(f.kv, "a b", "x", 1, NULL, &t));
    EXPECT_FAILS(NATSIO_ERR_INVALID_KEY, natsio_kv_update_async(f.kv, ".a", "x", 1, last, &t));
    EXPECT_FAILS(NATSIO_ERR_INVALID_KEY, natsio_kv_get_async(f.kv, "a*", &t));
    EXPECT_FAILS(NATSIO_ERR_INVALID_KEY, natsio_kv_get_revision_async(f.kv, "a>", 1, &t));
    EXPECT_FAILS(NATSIO_ERR_INVALID_KEY, natsio_kv_delete_async(f.kv, "", NULL, &t));
    EXPECT_FAILS(NATSIO_ERR_INVALID_KEY, natsio_kv_purge_async(f.kv, "a.", &last, NULL, &t));
    EXPECT_FAILS(NATSIO_ERR_INVALID_KEY, natsio_kv_history_async(f.kv, "a.*", &t));
    const char *bad_pattern[] = {"a..b"};
    EXPECT_FAILS(NATSIO_ERR_INVALID_KEY, natsio_kv_watch_async(f.kv, bad_pattern, 1, NULL, &t));
    EXPECT_FAILS_NAMING(NATSIO_ERR_CONFIG, "StreamConfig.max_age",
                        natsio_js_stream_create_async(f.js, "{\"name\":\"BIT\",\"max_age\":\"soon\"}", NATSIO_CREATE,
                                                      &t));
    EXPECT_FAILS(NATSIO_ERR_CONFIG, natsio_js_stream_purge_async(f.js, "BI", "{\"keep\":1,\"seq\":2}", &t));
    EXPECT_FAILS_NAMING(NATSIO_ERR_CONFIG, "ConsumerConfig.ack_policy",
                        natsio_js_consumer_create_async(f.js, "BI", "{\"name\":\"x\",\"ack_policy\":\"maybe\"}",
                                                        NATSIO_CREATE, &t));
    EXPECT_FAILS_NAMING(NATSIO_ERR_CONFIG, "KeyValueConfig.history",
                        natsio_js_kv_create_async(f.js, "{\"bucket\":\"BITKV\",\"history\":65}", NATSIO_CREATE, &t));
    natsio_fetch_options fo;
    EXPECT_OK(natsio_fetch_options_init(&fo));
    fo.max_messages = -1;
    EXPECT_FAILS_NAMING(NATSIO_ERR_INVALID_ARGUMENT, "max_messages", natsio_js_fetch_async(f.js, "BI", "c", &fo, &t));
    natsio_consume_options co;
    EXPECT_OK(natsio_consume_options_init(&co));
    co.expires_ms = 999;
    EXPECT_FAILS_NAMING(NATSIO_ERR_INVALID_ARGUMENT, "expires", natsio_js_consume_async(f.js, "BI", "c", &co, &t));
    natsio_js_publish_options po;
    EXPECT_OK(natsio_js_publish_options_init(&po));
    po.ttl_s = -2;
    EXPECT_FAILS_NAMING(NATSIO_ERR_INVALID_ARGUMENT, "ttl_s", natsio_js_publish_async(f.js, "bi.a", "x", 1, &po, &t));
    /* Acks are checked at once too: a message that is not a JetStream
     * one, and one acked already. */
    natsio_sub *plain_sub = subscribe_and_flush(f.c, "plain.x");
    NT_CHECK(plain_sub != NULL);
    EXPECT_OK(natsio_client_publish(f.c, "plain.x", "p", 1));
    natsio_msg *plain = NULL;
    EXPECT_OK(natsio_sub_next(plain_sub, 5000, &plain));
    nt_cleanup(msg_free_cb, plain);
    EXPECT_FAILS(NATSIO_ERR_NOT_JS_MESSAGE, natsio_msg_ack_sync_async(plain, 1000, &t));
    NT_CHECK(t == SENTINEL);

    /* None of it reached the server. */
    check_fixture_untouched(&f);
    natsio_msg *acked = NULL;
    EXPECT_OK(natsio_msg_clone(f.msg, &acked));
    nt_cleanup(msg_free_cb, acked);
    EXPECT_OK(natsio_msg_ack(acked));
    EXPECT_FAILS(NATSIO_ERR_MESSAGE_ALREADY_ACKED, natsio_msg_ack_sync_async(acked, 1000, &t));
    NT_CHECK(t == SENTINEL);
}

/* Message callback that must never run. */
static void never_msg_cb(void *user_data, const natsio_msg *msg, natsio_status status) {
    (void)msg;
    (void)status;
    __atomic_add_fetch((int *)user_data, 1, __ATOMIC_SEQ_CST);
}

static void never_entry_cb(void *user_data, const natsio_kv_entry *entry, natsio_status status) {
    (void)entry;
    (void)status;
    __atomic_add_fetch((int *)user_data, 1, __ATOMIC_SEQ_CST);
}

/* The iterator verbs of consume and watch: NULL handles, callbacks and
 * outs are refused, and leave the iterators as they were. */
static void test_iterator_verbs_check_their_arguments(void) {
    js_fixture f;
    NT_CHECK(js_fixture_start(&f));
    natsio_js_messages *it = NULL;
    EXPECT_OK(natsio_js_consume(f.js, "BI", "c", NULL, &it));
    nt_cleanup(js_messages_free_cb, it);
    natsio_kv_watcher *w = NULL;
    EXPECT_OK(natsio_kv_watch(f.kv, NULL, 0, NULL, &w));
    nt_cleanup(kv_watcher_free_cb, w);
    int calls = 0;
    natsio_iter_stats stats, untouched;
    memset(&stats, 0xab, sizeof stats);
    untouched = stats;
    natsio_msg *m = SENTINEL;
    natsio_kv_entry *e = SENTINEL;

    EXPECT_NULL_ARG("messages", natsio_js_messages_next(NULL, NATSIO_NO_WAIT, &m));
    EXPECT_NULL_ARG("messages", natsio_js_messages_set_callback(NULL, never_msg_cb, &calls, NULL));
    EXPECT_NULL_ARG("messages", natsio_js_messages_get_stats(NULL, &stats));
    EXPECT_NULL_ARG("messages", natsio_js_messages_stop(NULL));
    EXPECT_NULL_ARG("cb", natsio_js_messages_set_callback(it, NULL, &calls, NULL));
    EXPECT_NULL_ARG("stats_out", natsio_js_messages_get_stats(it, NULL));
    EXPECT_NULL_ARG("watcher", natsio_kv_watcher_next(NULL, NATSIO_NO_WAIT, &e));
    EXPECT_NULL_ARG("watcher", natsio_kv_watcher_set_callback(NULL, never_entry_cb, &calls, NULL));
    EXPECT_NULL_ARG("watcher", natsio_kv_watcher_get_stats(NULL, &stats));
    EXPECT_NULL_ARG("watcher", natsio_kv_watcher_stop(NULL));
    EXPECT_NULL_ARG("cb", natsio_kv_watcher_set_callback(w, NULL, &calls, NULL));
    EXPECT_NULL_ARG("stats_out", natsio_kv_watcher_get_stats(w, NULL));
    NT_CHECK(m == SENTINEL && e == SENTINEL);
    NT_CHECK(memcmp(&stats, &untouched, sizeof stats) == 0);

    /* Both still iterate: the watch gives its value and marker, nothing
     * went to a callback. */
    natsio_kv_entry *first = NULL;
    EXPECT_OK(natsio_kv_watcher_next(w, 5000, &first));
    nt_cleanup(kv_entry_free_cb, first);
    NT_CHECK_STR_EQ(natsio_kv_entry_key(first), "k");
    natsio_kv_entry *marker = NULL;
    EXPECT_OK(natsio_kv_watcher_next(w, 5000, &marker));
    nt_cleanup(kv_entry_free_cb, marker);
    NT_CHECK_INT_EQ(natsio_kv_entry_operation(marker), NATSIO_KV_INITIAL_DONE);
    EXPECT_FAILS(NATSIO_ERR_TIMEOUT, natsio_js_messages_next(it, NATSIO_NO_WAIT, &m));
    NT_CHECK(m == SENTINEL);
    EXPECT_OK(natsio_js_messages_get_stats(it, &stats));
    NT_CHECK_INT_EQ(stats.delivered, 0);
    NT_CHECK_INT_EQ(__atomic_load_n(&calls, __ATOMIC_SEQ_CST), 0);
}

/* The typed accessors of a token, by kind of result. */
enum {
    ACC_MSG,
    ACC_STRING,
    ACC_U64,
    ACC_PUB_ACK,
    ACC_KV,
    ACC_KV_ENTRY,
    ACC_STORED_MSG,
    ACC_MSG_LIST,
    ACC_KV_ENTRY_LIST,
    ACC_STRING_LIST,
    ACC_CLIENT,
    ACC_JS_MESSAGES,
    ACC_KV_WATCHER,
    ACC_COUNT,
    ACC_NONE = ACC_COUNT /* an operation without a value (a flush) */
};

static const char *const accessor_names[ACC_COUNT] = {
    "natsio_token_msg",         "natsio_token_string",     "natsio_token_u64",
    "natsio_token_pub_ack",     "natsio_token_kv",         "natsio_token_kv_entry",
    "natsio_token_stored_msg",  "natsio_token_msg_list",   "natsio_token_kv_entry_list",
    "natsio_token_string_list", "natsio_token_client",     "natsio_token_js_messages",
    "natsio_token_kv_watcher"};

/* One accessor's output, whatever its type. */
typedef union {
    natsio_msg *msg;
    char *string;
    uint64_t u64;
    natsio_pub_ack *ack;
    natsio_kv *kv;
    natsio_kv_entry *entry;
    natsio_stored_msg *stored;
    natsio_msg_list *msgs;
    natsio_kv_entry_list *entries;
    natsio_string_list *strings;
    natsio_client *client;
    natsio_js_messages *messages;
    natsio_kv_watcher *watcher;
} token_result;

/* Calls accessor `which` of `t`; with_out false passes a NULL out. */
static natsio_status call_accessor(const natsio_token *t, int which, token_result *r, bool with_out) {
    switch (which) {
    case ACC_MSG: return natsio_token_msg(t, with_out ? &r->msg : NULL);
    case ACC_STRING: return natsio_token_string(t, with_out ? &r->string : NULL);
    case ACC_U64: return natsio_token_u64(t, with_out ? &r->u64 : NULL);
    case ACC_PUB_ACK: return natsio_token_pub_ack(t, with_out ? &r->ack : NULL);
    case ACC_KV: return natsio_token_kv(t, with_out ? &r->kv : NULL);
    case ACC_KV_ENTRY: return natsio_token_kv_entry(t, with_out ? &r->entry : NULL);
    case ACC_STORED_MSG: return natsio_token_stored_msg(t, with_out ? &r->stored : NULL);
    case ACC_MSG_LIST: return natsio_token_msg_list(t, with_out ? &r->msgs : NULL);
    case ACC_KV_ENTRY_LIST: return natsio_token_kv_entry_list(t, with_out ? &r->entries : NULL);
    case ACC_STRING_LIST: return natsio_token_string_list(t, with_out ? &r->strings : NULL);
    case ACC_CLIENT: return natsio_token_client(t, with_out ? &r->client : NULL);
    case ACC_JS_MESSAGES: return natsio_token_js_messages(t, with_out ? &r->messages : NULL);
    case ACC_KV_WATCHER: return natsio_token_kv_watcher(t, with_out ? &r->watcher : NULL);
    }
    return NATSIO_ERR_INTERNAL;
}

static void free_result(int which, token_result *r) {
    switch (which) {
    case ACC_MSG: natsio_msg_free(r->msg); break;
    case ACC_STRING: natsio_string_free(r->string); break;
    case ACC_PUB_ACK: natsio_pub_ack_free(r->ack); break;
    case ACC_KV: natsio_kv_free(r->kv); break;
    case ACC_KV_ENTRY: natsio_kv_entry_free(r->entry); break;
    case ACC_STORED_MSG: natsio_stored_msg_free(r->stored); break;
    case ACC_MSG_LIST: natsio_msg_list_free(r->msgs); break;
    case ACC_KV_ENTRY_LIST: natsio_kv_entry_list_free(r->entries); break;
    case ACC_STRING_LIST: natsio_string_list_free(r->strings); break;
    case ACC_CLIENT: natsio_client_free(r->client); break;
    case ACC_JS_MESSAGES: natsio_js_messages_free(r->messages); break;
    case ACC_KV_WATCHER: natsio_kv_watcher_free(r->watcher); break;
    default: break;
    }
}

/* `t` (started by `what`) completes with NATSIO_OK; its own accessor
 * `own` gives a result (the handles that can be taken once: only once);
 * every other accessor is NATSIO_ERR_ILLEGAL_STATE, leaving its out
 * untouched; a NULL out is NATSIO_ERR_NULL_ARGUMENT. Frees `t`. */
static void check_accessors_at(int line, const char *what, natsio_token *t, int own) {
    natsio_status outcome = token_outcome(t, 10000);
    if (outcome != NATSIO_OK) {
        nt_fail_at(__FILE__, line, "%s: completed with %s (%s)", what, natsio_status_str(outcome),
                   natsio_last_error());
        natsio_token_free(t);
        return;
    }
    for (int which = 0; which < ACC_COUNT; which++) {
        token_result r;
        memset(&r, 0x5a, sizeof r);
        token_result untouched = r;
        plant_error_marker();
        natsio_status st = call_accessor(t, which, &r, true);
        const char *detail = natsio_last_error();
        if (which == own) {
            if (st != NATSIO_OK)
                nt_fail_at(__FILE__, line, "%s: %s: %s (%s)", what, accessor_names[which], natsio_status_str(st),
                           detail);
            else
                free_result(which, &r);
            bool take_once = which == ACC_CLIENT || which == ACC_JS_MESSAGES || which == ACC_KV_WATCHER;
            memset(&r, 0x5a, sizeof r);
            st = call_accessor(t, which, &r, true);
            if (take_once && (st != NATSIO_ERR_ILLEGAL_STATE || memcmp(&r, &untouched, sizeof r) != 0))
                nt_fail_at(__FILE__, line, "%s: %s a second time: %s, want illegal state", what,
                           accessor_names[which], natsio_status_str(st));
            if (!take_once) {
                if (st != NATSIO_OK)
                    nt_fail_at(__FILE__, line, "%s: %s a second time: %s", what, accessor_names[which],
                               natsio_status_str(st));
                else
                    free_result(which, &r);
            }
        } else if (st != NATSIO_ERR_ILLEGAL_STATE || memcmp(&r, &untouched, sizeof r) != 0 ||
                   strstr(detail, ERROR_MARKER) != NULL || detail[0] == '\0') {
            nt_fail_at(__FILE__, line, "%s: %s: %s (%s), want illegal state and the out untouched", what,
                       accessor_names[which], natsio_status_str(st), detail);
        }
        plant_error_marker();
        st = call_accessor(t, which, &r, false);
        if (st != NATSIO_ERR_NULL_ARGUMENT || strstr(natsio_last_error(), "_out") == NULL)
            nt_fail_at(__FILE__, line, "%s: %s with a NULL out: %s (%s)", what, accessor_names[which],
                       natsio_status_str(st), natsio_last_error());
    }
    natsio_token_free(t);
}
#define CHECK_ACCESSORS(what, t, own) check_accessors_at(__LINE__, (what), (t), (own))

/* Starts an operation into `t`, recording a failure if it is refused. */
#define START(t, call)                                                               \
    do {                                                                             \
        (t) = NULL;                                                                  \
        natsio_status start_ = (call);                                               \
        NT_CHECK_MSG(start_ == NATSIO_OK, "%s: %s (%s)", #call,                       \
                     natsio_status_str(start_), natsio_last_error());                 \
    } while (0)

static void test_token_accessors_of_another_kind(void) {
    js_fixture f;
    NT_CHECK(js_fixture_start(&f));
    NT_CHECK(start_responder(f.c, "acc.echo", echo_cb) != NULL);
    natsio_options *o = options_for_url(nt_server_url(f.server), 0);
    NT_CHECK(o != NULL);
    natsio_token *t = NULL;

    START(t, natsio_client_flush_async(f.c, NATSIO_TIMEOUT_DEFAULT, &t));
    CHECK_ACCESSORS("flush", t, ACC_NONE);
    START(t, natsio_client_request_async(f.c, "acc.echo", NULL, "q", 1, 5000, &t));
    CHECK_ACCESSORS("request", t, ACC_MSG);
    START(t, natsio_client_connect_async(o, &t));
    CHECK_ACCESSORS("connect", t, ACC_CLIENT);
    START(t, natsio_js_account_info_async(f.js, &t));
    CHECK_ACCESSORS("account info", t, ACC_STRING);
    START(t, natsio_js_publish_async(f.js, "bi.b", "x", 1, NULL, &t));
    CHECK_ACCESSORS("publish", t, ACC_PUB_ACK);
    START(t, natsio_js_publish_async_complete_async(f.js, 5000, &t));
    CHECK_ACCESSORS("publish_async_complete", t, ACC_NONE);
    START(t, natsio_js_stream_info_async(f.js, "BI", NULL, &t));
    CHECK_ACCESSORS("stream info", t, ACC_STRING);
    START(t, natsio_js_stream_names_async(f.js, NULL, &t));
    CHECK_ACCESSORS("stream names", t, ACC_STRING_LIST);
    START(t, natsio_js_stream_get_msg_async(f.js, "BI", 1, NULL, &t));
    CHECK_ACCESSORS("get_msg", t, ACC_STORED_MSG);
    START(t, natsio_js_stream_purge_async(f.js, "BI", "{\"filter\":\"bi.b\"}", &t));
    CHECK_ACCESSORS("purge", t, ACC_U64);
    START(t, natsio_js_consumer_info_async(f.js, "BI", "c", &t));
    CHECK_ACCESSORS("consumer info", t, ACC_STRING);
    START(t, natsio_js_consumer_names_async(f.js, "BI", &t));
    CHECK_ACCESSORS("consumer names", t, ACC_STRING_LIST);
    natsio_fetch_options fo;
    EXPECT_OK(natsio_fetch_options_init(&fo));
    fo.no_wait = true;
    START(t, natsio_js_fetch_async(f.js, "BI", "c", &fo, &t));
    CHECK_ACCESSORS("fetch", t, ACC_MSG_LIST);
    START(t, natsio_js_consume_async(f.js, "BI", "c", NULL, &t));
    CHECK_ACCESSORS("consume", t, ACC_JS_MESSAGES);
    START(t, natsio_js_kv_bind_async(f.js, "BIKV", &t));
    CHECK_ACCESSORS("kv bind", t, ACC_KV);
    START(t, natsio_kv_put_async(f.kv, "k2", "v", 1, NULL, &t));
    CHECK_ACCESSORS("kv put", t, ACC_U64);
    START(t, natsio_kv_get_async(f.kv, "k", &t));
    CHECK_ACCESSORS("kv get", t, ACC_KV_ENTRY);
    START(t, natsio_kv_history_async(f.kv, "k", &t));
    CHECK_ACCESSORS("kv history", t, ACC_KV_ENTRY_LIST);
    START(t, natsio_kv_keys_async(f.kv, &t));
    CHECK_ACCESSORS("kv keys", t, ACC_STRING_LIST);
    START(t, natsio_kv_status_async(f.kv, &t));
    CHECK_ACCESSORS("kv status", t, ACC_STRING);
    START(t, natsio_kv_watch_async(f.kv, NULL, 0, NULL, &t));
    CHECK_ACCESSORS("kv watch", t, ACC_KV_WATCHER);
    START(t, natsio_msg_ack_sync_async(f.msg, 5000, &t));
    CHECK_ACCESSORS("ack_sync", t, ACC_NONE);

    /* A pending token: every accessor says so, and leaves its out alone. */
    natsio_sub *silent = subscribe_and_flush(f.c, "acc.silent");
    NT_CHECK(silent != NULL);
    natsio_token *pending = NULL;
    EXPECT_OK(natsio_client_request_async(f.c, "acc.silent", NULL, "q", 1, 30000, &pending));
    nt_cleanup(token_free_cb, pending);
    for (int which = 0; which < ACC_COUNT; which++) {
        token_result r;
        memset(&r, 0x5a, sizeof r);
        token_result untouched = r;
        natsio_status st = call_accessor(pending, which, &r, true);
        NT_CHECK_MSG(st == NATSIO_PENDING, "%s of a pending request: %s", accessor_names[which],
                     natsio_status_str(st));
        NT_CHECK(memcmp(&r, &untouched, sizeof r) == 0);
        /* ...and a NULL token is a NULL argument. */
        EXPECT_NULL_ARG("token", call_accessor(NULL, which, &r, true));
    }
    NT_CHECK_INT_EQ(natsio_token_status(pending), NATSIO_PENDING);
    EXPECT_OK(natsio_token_cancel(pending));
    NT_CHECK_INT_EQ(token_outcome(pending, 5000), NATSIO_ERR_CANCELLED);
}

/* Every new function on a context, bucket or iterator whose client is
 * closed: the token forms get past their argument checks and complete with
 * NATSIO_ERR_CONNECTION_CLOSED; the iterators ended with that error. */
static void test_new_functions_after_close(void) {
    js_fixture f;
    NT_CHECK(js_fixture_start(&f));
    natsio_replies *replies = NULL;
    natsio_sub *svc = subscribe_and_flush(f.c, "closed.svc");
    NT_CHECK(svc != NULL);
    EXPECT_OK(natsio_client_request_many(f.c, "closed.svc", NULL, "q", 1, NULL, &replies));
    nt_cleanup(replies_free_cb, replies);
    natsio_js_messages *it = NULL;
    EXPECT_OK(natsio_js_consume(f.js, "BI", "c", NULL, &it));
    nt_cleanup(js_messages_free_cb, it);
    natsio_kv_watcher *w = NULL;
    EXPECT_OK(natsio_kv_watch(f.kv, NULL, 0, NULL, &w));
    nt_cleanup(kv_watcher_free_cb, w);
    EXPECT_OK(natsio_client_close(f.c));

    const char *sc = "{\"name\":\"BIT\",\"subjects\":[\"bit.>\"],\"storage\":\"memory\"}";
    const char *cc = "{\"durable_name\":\"t\",\"ack_policy\":\"explicit\"}";
    const char *kc = "{\"bucket\":\"BITKV\",\"storage\":\"memory\"}";
    uint64_t last = 1;
    natsio_token *t = NULL;
#define CLOSED(call) EXPECT_TOKEN_FAILS(NATSIO_ERR_CONNECTION_CLOSED, call, t)
    CLOSED(natsio_js_account_info_async(f.js, &t));
    CLOSED(natsio_js_stream_create_async(f.js, sc, NATSIO_CREATE, &t));
    CLOSED(natsio_js_stream_create_async(f.js, sc, NATSIO_UPDATE, &t));
    CLOSED(natsio_js_stream_create_async(f.js, sc, NATSIO_CREATE_OR_UPDATE, &t));
    CLOSED(natsio_js_stream_info_async(f.js, "BI", NULL, &t));
    CLOSED(natsio_js_stream_delete_async(f.js, "BI", &t));
    CLOSED(natsio_js_stream_purge_async(f.js, "BI", NULL, &t));
    CLOSED(natsio_js_stream_names_async(f.js, NULL, &t));
    CLOSED(natsio_js_stream_get_msg_async(f.js, "BI", 1, NULL, &t));
    CLOSED(natsio_js_stream_delete_msg_async(f.js, "BI", 1, false, &t));
    CLOSED(natsio_js_consumer_create_async(f.js, "BI", cc, NATSIO_CREATE, &t));
    CLOSED(natsio_js_consumer_info_async(f.js, "BI", "c", &t));
    CLOSED(natsio_js_consumer_delete_async(f.js, "BI", "c", &t));
    CLOSED(natsio_js_consumer_names_async(f.js, "BI", &t));
    CLOSED(natsio_js_fetch_async(f.js, "BI", "c", NULL, &t));
    CLOSED(natsio_js_next_async(f.js, "BI", "c", NEXT_WAIT(1000), &t));
    CLOSED(natsio_js_consume_async(f.js, "BI", "c", NULL, &t));
    CLOSED(natsio_js_kv_create_async(f.js, kc, NATSIO_CREATE, &t));
    CLOSED(natsio_js_kv_bind_async(f.js, "BIKV", &t));
    CLOSED(natsio_js_kv_delete_async(f.js, "BIKV", &t));
    CLOSED(natsio_kv_put_async(f.kv, "k", "x", 1, NULL, &t));
    CLOSED(natsio_kv_create_async(f.kv, "k2", "x", 1, NULL, &t));
    CLOSED(natsio_kv_update_async(f.kv, "k", "x", 1, last, &t));
    CLOSED(natsio_kv_get_async(f.kv, "k", &t));
    CLOSED(natsio_kv_get_revision_async(f.kv, "k", 1, &t));
    CLOSED(natsio_kv_delete_async(f.kv, "k", NULL, &t));
    CLOSED(natsio_kv_purge_async(f.kv, "k", &last, NULL, &t));
    CLOSED(natsio_kv_status_async(f.kv, &t));
    CLOSED(natsio_kv_keys_async(f.kv, &t));
    CLOSED(natsio_kv_history_async(f.kv, "k", &t));
    CLOSED(natsio_kv_watch_async(f.kv, NULL, 0, NULL, &t));
    CLOSED(natsio_js_messages_next_async(it, &t));
    CLOSED(natsio_kv_watcher_next_async(w, &t));
    CLOSED(natsio_replies_next_async(replies, &t));
    CLOSED(natsio_msg_ack_sync_async(f.msg, 1000, &t));
#undef CLOSED
    /* The blocking forms of the new calls fail the same way, at once. */
    natsio_string_list *names = SENTINEL;
    uint64_t rev = 77;
    EXPECT_FAILS(NATSIO_ERR_CONNECTION_CLOSED, natsio_js_stream_names(f.js, NULL, &names));
    EXPECT_FAILS(NATSIO_ERR_CONNECTION_CLOSED, natsio_js_consumer_names(f.js, "BI", &names));
    EXPECT_FAILS(NATSIO_ERR_CONNECTION_CLOSED, natsio_kv_keys(f.kv, &names));
    EXPECT_FAILS(NATSIO_ERR_CONNECTION_CLOSED, natsio_kv_delete(f.kv, "k", NULL, &rev));
    EXPECT_FAILS(NATSIO_ERR_CONNECTION_CLOSED, natsio_kv_purge(f.kv, "k", NULL, NULL, &rev));
    NT_CHECK(names == SENTINEL && rev == 77);
    /* The iterators' stop is fine; they stay ended with the error. */
    EXPECT_OK(natsio_replies_stop(replies));
    EXPECT_OK(natsio_js_messages_stop(it));
    EXPECT_OK(natsio_kv_watcher_stop(w));
    natsio_msg *m = SENTINEL;
    natsio_kv_entry *e = SENTINEL;
    EXPECT_FAILS(NATSIO_ERR_CONNECTION_CLOSED, natsio_replies_next(replies, NATSIO_NO_WAIT, &m));
    EXPECT_FAILS(NATSIO_ERR_CONNECTION_CLOSED, natsio_js_messages_next(it, NATSIO_NO_WAIT, &m));
    EXPECT_FAILS(NATSIO_ERR_CONNECTION_CLOSED, natsio_kv_watcher_next(w, NATSIO_NO_WAIT, &e));
    NT_CHECK(m == SENTINEL && e == SENTINEL);
    /* Connecting through a token to a server that is not there. */
    char url[64];
    snprintf(url, sizeof url, "nats://127.0.0.1:%d", nt_free_port());
    natsio_options *o = options_for_url(url, 500);
    NT_CHECK(o != NULL);
    EXPECT_TOKEN_FAILS(NATSIO_ERR_NO_SERVERS, natsio_client_connect_async(o, &t), t);
}

/* ------------------------------------------------------------------ */
/* Refusals that need a server state: disconnected, or configured to    */
/* deny                                                                 */
/* ------------------------------------------------------------------ */

/* Options for `url` that reconnect quickly and forever, reporting to `log`
 * (which may be NULL). */
static natsio_options *reconnecting_options(const char *url, callback_log *log) {
    natsio_options *o = options_for_url(url, 2000);
    if (!o) return NULL;
    if (natsio_options_set_reconnect_wait(o, 50, 200) != NATSIO_OK ||
        natsio_options_set_reconnect_jitter(o, 0, 0) != NATSIO_OK ||
        natsio_options_set_max_reconnect_attempts(o, -1) != NATSIO_OK) {
        nt_fail_at(__FILE__, __LINE__, "setting options: %s", natsio_last_error());
        return NULL;
    }
    if (log && !log_callbacks(o, log)) return NULL;
    return o;
}

/* While disconnected, publishes are kept up to reconnect_buf_size bytes of
 * frames; the publish that does not fit fails with
 * NATSIO_ERR_RECONNECT_BUF_EXCEEDED, and after the reconnect exactly the
 * kept ones are delivered. With buffering disabled (-1) every publish while
 * disconnected fails. */
static void test_reconnect_buffer_exceeded(void) {
    nt_server *s = start_server(NULL);
    NT_CHECK(s != NULL);
    natsio_options *o = reconnecting_options(nt_server_url(s), NULL);
    NT_CHECK(o != NULL);
    /* Two frames of "PUB rb.N 400\r\n<400 bytes>\r\n" (416 bytes) fit, a
     * third does not. */
    EXPECT_OK(natsio_options_set_reconnect_buf_size(o, 1000));
    natsio_client *c = connect_with(o);
    NT_CHECK(c != NULL);
    natsio_options *unbuffered = reconnecting_options(nt_server_url(s), NULL);
    NT_CHECK(unbuffered != NULL);
    EXPECT_OK(natsio_options_set_reconnect_buf_size(unbuffered, -1));
    natsio_client *u = connect_with(unbuffered);
    NT_CHECK(u != NULL);
    natsio_sub *watch = subscribe_and_flush(c, "rb.>");
    NT_CHECK(watch != NULL);

    nt_server_kill(s);
    NT_CHECK_MSG(wait_status(c, NATSIO_CONN_RECONNECTING, 10000), "status %d",
                 (int)natsio_client_status(c));
    NT_CHECK_MSG(wait_status(u, NATSIO_CONN_RECONNECTING, 10000), "status %d",
                 (int)natsio_client_status(u));

    char payload[400];
    memset(payload, 'b', sizeof payload);
    EXPECT_OK(natsio_client_publish(c, "rb.1", payload, sizeof payload));
    EXPECT_OK(natsio_client_publish(c, "rb.2", payload, sizeof payload));
    EXPECT_FAILS_NAMING(NATSIO_ERR_RECONNECT_BUF_EXCEEDED, "reconnect buffer",
                        natsio_client_publish(c, "rb.3", payload, sizeof payload));
    EXPECT_FAILS(NATSIO_ERR_RECONNECT_BUF_EXCEEDED,
                 natsio_client_publish_with(c, "rb.4", "rb.reply", NULL, payload, sizeof payload));
    /* A small one still fits beside the two. */
    EXPECT_OK(natsio_client_publish(c, "rb.5", "x", 1));
    EXPECT_FAILS_NAMING(NATSIO_ERR_RECONNECT_BUF_EXCEEDED, "disabled",
                        natsio_client_publish(u, "rb.6", "x", 1));
    /* Refused publishes leave the client reconnecting, not closed. */
    NT_CHECK_INT_EQ(natsio_client_status(c), NATSIO_CONN_RECONNECTING);
    NT_CHECK_INT_EQ(natsio_client_status(u), NATSIO_CONN_RECONNECTING);

    NT_CHECK_INT_EQ(nt_server_restart(s), 0);
    NT_CHECK_MSG(wait_status(c, NATSIO_CONN_CONNECTED, 20000), "did not reconnect (status %d)",
                 (int)natsio_client_status(c));
    NT_CHECK_MSG(wait_status(u, NATSIO_CONN_CONNECTED, 20000), "did not reconnect (status %d)",
                 (int)natsio_client_status(u));
    /* The kept publishes went out after the subscription was restored,
     * before the end marker; the refused ones never did. */
    received_log log;
    collect_until_end(c, watch, "rb.end", &log);
    NT_CHECK(!nt_failed());
    NT_CHECK_INT_EQ(log.count, 3);
    NT_CHECK_STR_EQ(log.subjects[0], "rb.1");
    NT_CHECK_STR_EQ(log.subjects[1], "rb.2");
    NT_CHECK_STR_EQ(log.subjects[2], "rb.5");
    NT_CHECK_INT_EQ(log.sizes[0], sizeof payload);
    /* Connected again, the same publish is accepted. */
    EXPECT_OK(natsio_client_publish(u, "rb.6", "x", 1));
    EXPECT_OK(natsio_client_flush(u, 5000));
}

static const char *PERMISSIONS_CONFIG =
    "authorization {\n"
    "  users = [\n"
    "    { user: limited, password: pw,\n"
    "      permissions: { publish: { deny: [\"deny.>\"] }, subscribe: { deny: [\"deny.>\"] } } }\n"
    "    { user: admin, password: pw }\n"
    "  ]\n"
    "}\n";

/* A denied publish or subscribe is accepted by the call (the server checks
 * it later) and reported to the error callback as NATSIO_ERR_PERMISSIONS
 * with the server's text; a permissions violation is not fatal in NATS: the
 * connection stays up and works, and no event is emitted. */
static void test_permissions_violation_keeps_the_connection(void) {
    nt_server *s = start_server(PERMISSIONS_CONFIG);
    NT_CHECK(s != NULL);
    /* An unrestricted client sees what the limited one gets through. */
    natsio_options *ao = options_for_url(nt_server_url(s), 2000);
    NT_CHECK(ao != NULL);
    EXPECT_OK(natsio_options_set_user_password(ao, "admin", "pw"));
    natsio_client *admin = connect_with(ao);
    NT_CHECK(admin != NULL);
    natsio_sub *watch = subscribe_and_flush(admin, "deny.>");
    NT_CHECK(watch != NULL);

    callback_log *cb = new_callback_log();
    NT_CHECK(cb != NULL);
    natsio_options *o = reconnecting_options(nt_server_url(s), cb);
    NT_CHECK(o != NULL);
    EXPECT_OK(natsio_options_set_user_password(o, "limited", "pw"));
    natsio_client *c = connect_with(o);
    NT_CHECK(c != NULL);
    char dump[4096];

    EXPECT_OK(natsio_client_publish(c, "deny.pub", "secret", 6));
    EXPECT_OK(natsio_client_flush(c, 5000));
    NT_CHECK_MSG(wait_log_errors(cb, NATSIO_ERR_PERMISSIONS, 1, 10000), "no permissions error:\n%s",
                 log_dump(cb, dump, sizeof dump));
    natsio_sub *denied = NULL;
    EXPECT_OK(natsio_client_subscribe(c, "deny.sub", NULL, NULL, &denied));
    nt_cleanup(sub_free_cb, denied);
    natsio_sub *denied_queue = NULL;
    EXPECT_OK(natsio_client_subscribe(c, "deny.sub", "workers", NULL, &denied_queue));
    nt_cleanup(sub_free_cb, denied_queue);
    EXPECT_OK(natsio_client_flush(c, 5000));
    NT_CHECK_MSG(wait_log_errors(cb, NATSIO_ERR_PERMISSIONS, 3, 10000), "not 3 permissions errors:\n%s",
                 log_dump(cb, dump, sizeof dump));

    /* In order: CONNECTED, then the three errors, each naming what was
     * denied, and nothing else. */
    NT_CHECK_MSG(log_total(cb) == 4, "callbacks:\n%s", log_dump(cb, dump, sizeof dump));
    callback_record connected = log_record(cb, 0);
    NT_CHECK_INT_EQ(connected.kind, NATSIO_EVENT_CONNECTED);
    static const char *const named[] = {
        "Publish to \"deny.pub\"",
        "Subscription to \"deny.sub\"",
        "Subscription to \"deny.sub\" using queue \"workers\"",
    };
    for (size_t i = 0; i < NT_COUNT(named); i++) {
        callback_record r = log_record(cb, i + 1);
        NT_CHECK_INT_EQ(r.kind, -1);
        NT_CHECK_INT_EQ(r.status, NATSIO_ERR_PERMISSIONS);
        NT_CHECK_MSG(contains_ci(r.text, "permissions violation") && strstr(r.text, named[i]) != NULL,
                     "error %zu: \"%s\" does not name %s", i, r.text, named[i]);
    }

    /* Still connected: allowed traffic flows, the denied publish never
     * reached the server's subscribers. */
    NT_CHECK_INT_EQ(natsio_client_status(c), NATSIO_CONN_CONNECTED);
    NT_CHECK(message_round_trip(c, "ok.check", "fine"));
    received_log seen;
    EXPECT_OK(natsio_client_publish(admin, "deny.after", "a", 1));
    collect_until_end(admin, watch, "deny.end", &seen);
    NT_CHECK(!nt_failed());
    NT_CHECK_INT_EQ(seen.count, 1);
    NT_CHECK_STR_EQ(seen.subjects[0], "deny.after");
    NT_CHECK_INT_EQ(log_events_any(cb, NATSIO_EVENT_DISCONNECTED), 0);
}

/* With permission_err_on_subscribe a refused subscription ends with
 * NATSIO_ERR_PERMISSIONS (its queue twin too, each by its own error); the
 * error callback still hears of it and the connection keeps working. */
static void test_permission_err_on_subscribe_ends_the_subscription(void) {
    nt_server *s = start_server(PERMISSIONS_CONFIG);
    NT_CHECK(s != NULL);
    callback_log *cb = new_callback_log();
    NT_CHECK(cb != NULL);
    natsio_options *o = reconnecting_options(nt_server_url(s), cb);
    NT_CHECK(o != NULL);
    EXPECT_OK(natsio_options_set_user_password(o, "limited", "pw"));
    NT_CHECK_INT_EQ(natsio_options_set_permission_err_on_subscribe(NULL, true), NATSIO_ERR_NULL_ARGUMENT);
    EXPECT_OK(natsio_options_set_permission_err_on_subscribe(o, true));
    natsio_client *c = connect_with(o);
    NT_CHECK(c != NULL);
    natsio_sub *allowed = subscribe_and_flush(c, "ok.sub");
    NT_CHECK(allowed != NULL);
    natsio_sub *denied = NULL;
    EXPECT_OK(natsio_client_subscribe(c, "deny.sub", NULL, NULL, &denied));
    nt_cleanup(sub_free_cb, denied);
    natsio_sub *denied_queue = NULL;
    EXPECT_OK(natsio_client_subscribe(c, "deny.sub", "workers", NULL, &denied_queue));
    nt_cleanup(sub_free_cb, denied_queue);
    natsio_msg *m = NULL;
    NT_CHECK_INT_EQ(natsio_sub_next(denied, 5000, &m), NATSIO_ERR_PERMISSIONS);
    NT_CHECK_INT_EQ(natsio_sub_next(denied_queue, 5000, &m), NATSIO_ERR_PERMISSIONS);
    NT_CHECK(m == NULL);
    char dump[4096];
    NT_CHECK_MSG(wait_log_errors(cb, NATSIO_ERR_PERMISSIONS, 2, 10000), "not 2 permissions errors:\n%s",
                 log_dump(cb, dump, sizeof dump));
    /* The allowed subscription and the connection go on. */
    NT_CHECK_INT_EQ(natsio_client_status(c), NATSIO_CONN_CONNECTED);
    EXPECT_OK(natsio_client_publish(c, "ok.sub", "hi", 2));
    EXPECT_OK(natsio_sub_next(allowed, 5000, &m));
    NT_CHECK(payload_is(m, "hi"));
    natsio_msg_free(m);
}

/* The server's max_subscriptions refuses a subscription beyond the limit
 * with -ERR 'maximum subscriptions exceeded': reported to the error
 * callback as NATSIO_ERR_MAX_SUBSCRIPTIONS, not fatal; once a subscription
 * is released another one is accepted. */
static void test_max_subscriptions_keeps_the_connection(void) {
    nt_server *s = start_server("max_subscriptions: 2\n");
    NT_CHECK(s != NULL);
    callback_log *cb = new_callback_log();
    NT_CHECK(cb != NULL);
    natsio_options *o = reconnecting_options(nt_server_url(s), cb);
    NT_CHECK(o != NULL);
    natsio_client *c = connect_with(o);
    NT_CHECK(c != NULL);
    char dump[4096];

    natsio_sub *first = NULL, *second = NULL, *third = NULL;
    EXPECT_OK(natsio_client_subscribe(c, "ms.1", NULL, NULL, &first));
    EXPECT_OK(natsio_client_subscribe(c, "ms.2", NULL, NULL, &second));
    nt_cleanup(sub_free_cb, second);
    /* The call succeeds: the server refuses it afterwards. */
    EXPECT_OK(natsio_client_subscribe(c, "ms.3", NULL, NULL, &third));
    nt_cleanup(sub_free_cb, third);
    EXPECT_OK(natsio_client_flush(c, 5000));
    NT_CHECK_MSG(wait_log_errors(cb, NATSIO_ERR_MAX_SUBSCRIPTIONS, 1, 10000), "not reported:\n%s",
                 log_dump(cb, dump, sizeof dump));
    /* Callbacks keep the wire's order: nothing came before it but
     * CONNECTED, so the two within the limit were accepted. */
    NT_CHECK_MSG(log_total(cb) == 2, "callbacks:\n%s", log_dump(cb, dump, sizeof dump));
    NT_CHECK_INT_EQ(log_record(cb, 0).kind, NATSIO_EVENT_CONNECTED);
    callback_record r = log_record(cb, 1);
    NT_CHECK_INT_EQ(r.kind, -1);
    NT_CHECK_MSG(contains_ci(r.text, "maximum subscriptions exceeded"), "text: %s", r.text);
    NT_CHECK_INT_EQ(natsio_client_status(c), NATSIO_CONN_CONNECTED);
    NT_CHECK_INT_EQ(log_events_any(cb, NATSIO_EVENT_DISCONNECTED), 0);

    /* The connection works, and a released slot takes a new subscription
     * (no further error). */
    EXPECT_OK(natsio_client_publish(c, "ms.2", "two", 3));
    natsio_msg *m = NULL;
    EXPECT_OK(natsio_sub_next(second, 5000, &m));
    natsio_msg_free(m);
    natsio_sub_free(first);
    natsio_sub *again = subscribe_and_flush(c, "ms.again");
    NT_CHECK(again != NULL);
    EXPECT_OK(natsio_client_publish(c, "ms.again", "in", 2));
    EXPECT_OK(natsio_sub_next(again, 5000, &m));
    NT_CHECK(payload_is(m, "in"));
    natsio_msg_free(m);
    /* At the limit again: the next one is refused, and is the only error
     * since the first (the released slot's subscription was not). */
    natsio_sub *over = NULL;
    EXPECT_OK(natsio_client_subscribe(c, "ms.over", NULL, NULL, &over));
    nt_cleanup(sub_free_cb, over);
    NT_CHECK_MSG(wait_log_errors(cb, NATSIO_ERR_MAX_SUBSCRIPTIONS, 2, 10000), "not reported:\n%s",
                 log_dump(cb, dump, sizeof dump));
    NT_CHECK_MSG(log_total(cb) == 3, "callbacks:\n%s", log_dump(cb, dump, sizeof dump));
    NT_CHECK_INT_EQ(natsio_client_status(c), NATSIO_CONN_CONNECTED);
}

/* Sends `frames` to the server on `port` as a raw client (CONNECT with
 * headers first) and waits for the PONG of a PING sent after them: the
 * server has handled them then. */
static bool raw_client_send(int port, const char *frames) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) return false;
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    char out[1024];
    int n = snprintf(out, sizeof out, "CONNECT {\"verbose\":false,\"headers\":true}\r\n%sPING\r\n", frames);
    bool ok = connect(fd, (struct sockaddr *)&a, sizeof a) == 0 && n > 0 && (size_t)n < sizeof out &&
              send(fd, out, (size_t)n, MSG_NOSIGNAL) == n;
    char in[4096];
    size_t got = 0;
    while (ok) {
        ssize_t r = recv(fd, in + got, sizeof in - 1 - got, 0);
        if (r <= 0) {
            ok = false;
            break;
        }
        got += (size_t)r;
        in[got] = 0;
        if (strstr(in, "PONG\r\n")) break;
        if (strstr(in, "-ERR") || got == sizeof in - 1) ok = false;
    }
    close(fd);
    return ok;
}

/* A message whose header block has a corrupt line is delivered, its good
 * lines readable, and flagged (the reference client's headers_error); a
 * clean block is not flagged. */
static void test_corrupt_header_block_is_flagged(void) {
    nt_server *s = start_server(NULL);
    NT_CHECK(s != NULL);
    natsio_client *c = connect_url(nt_server_url(s));
    NT_CHECK(c != NULL);
    natsio_sub *sub = subscribe_and_flush(c, "hdr.>");
    NT_CHECK(sub != NULL);
    const char *bad = "NATS/1.0\r\nGood: yes\r\nno colon here\r\n\r\n";
    const char *good = "NATS/1.0\r\nGood: yes\r\n\r\n";
    char frames[512];
    snprintf(frames, sizeof frames, "HPUB hdr.bad %zu %zu\r\n%sdata\r\nHPUB hdr.good %zu %zu\r\n%sdata\r\n",
             strlen(bad), strlen(bad) + 4, bad, strlen(good), strlen(good) + 4, good);
    NT_CHECK(raw_client_send(nt_server_port(s), frames));

    natsio_msg *m = NULL;
    EXPECT_OK(natsio_sub_next(sub, 5000, &m));
    NT_CHECK(m != NULL);
    NT_CHECK_STR_EQ(natsio_msg_subject(m), "hdr.bad");
    NT_CHECK(span_eq(natsio_msg_data(m), natsio_msg_data_len(m), "data"));
    NT_CHECK(natsio_msg_headers_malformed(m));
    NT_CHECK(natsio_headers_malformed(natsio_msg_headers(m)));
    const char *v = NULL;
    EXPECT_OK(natsio_headers_get(natsio_msg_headers(m), "Good", &v));
    NT_CHECK_STR_EQ(v, "yes");
    NT_CHECK_INT_EQ(natsio_headers_len(natsio_msg_headers(m)), 1);
    natsio_msg_free(m);

    m = NULL;
    EXPECT_OK(natsio_sub_next(sub, 5000, &m));
    NT_CHECK(m != NULL);
    NT_CHECK_STR_EQ(natsio_msg_subject(m), "hdr.good");
    NT_CHECK(!natsio_msg_headers_malformed(m));
    natsio_msg_free(m);
    NT_CHECK(!natsio_msg_headers_malformed(NULL));
    NT_CHECK(!natsio_headers_malformed(NULL));
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
        NT_CASE(test_option_structs_need_their_init),
        NT_CASE(test_timeouts_outside_the_rule),
        NT_CASE(test_create_actions_outside_the_enum),
        NT_CASE(test_async_functions_need_token_out),
        NT_CASE(test_async_functions_check_their_arguments),
        NT_CASE(test_iterator_verbs_check_their_arguments),
        NT_CASE(test_token_accessors_of_another_kind),
        NT_CASE(test_new_functions_after_close),
        NT_CASE(test_reconnect_buffer_exceeded),
        NT_CASE(test_permissions_violation_keeps_the_connection),
        NT_CASE(test_permission_err_on_subscribe_ends_the_subscription),
        NT_CASE(test_max_subscriptions_keeps_the_connection),
        NT_CASE(test_corrupt_header_block_is_flagged),
    };
    return nt_main(argc, argv, cases, NT_COUNT(cases));
}
