/*
 * util.h - helpers the C test programs (tests/c/test_*.c) share on top of
 * harness.h: the nats-server a whole program shares, per-case subjects,
 * libnatsio handles released when the case ends, and waits on counters.
 *
 * Helpers that create something record a failure against the running case
 * (nt_fail_at) and return NULL when they cannot, so a case writes
 *
 *     natsio_client *c = connect_client();
 *     NT_CHECK(c != NULL);
 *
 * Compiled into every test program (util.c, see CMakeLists.txt). C11 only.
 */
#ifndef NATSIO_TEST_UTIL_H
#define NATSIO_TEST_UTIL_H

#include "harness.h"

#include <natsio.h>

#include "call_options.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* ---- a nats-server for the whole program --------------------------------- */

/* The server started by run_cases_with_shared_server (NULL in programs that
 * start their own servers per case). */
extern nt_server *g_server;
/* The URL clients of g_server connect to: nt_server_url(g_server), or its
 * ws:// / wss:// listener under NT_TRANSPORT. */
extern const char *g_server_url;

/* Starts g_server (stopped at exit), then runs `cases` with nt_main.
 * `suite` starts every case_subject(), so that the programs' traffic never
 * mixes. Returns nt_main's status, or 1 if the server did not start.
 * NT_TRANSPORT=ws or wss in the environment gives the server a websocket
 * listener (wss: TLS with tests/fixtures/tls, whose CA the clients then
 * trust through SSL_CERT_FILE) and makes connect_client() and
 * g_server_url use it: ctest runs some programs that way too. */
int run_cases_with_shared_server(int argc, char **argv, const char *suite, const nt_case *cases,
                                 size_t count);

/* "<suite>.<running case>.<suffix>" into buf: a subject no other case uses. */
const char *case_subject(char *buf, size_t cap, const char *suffix);

/* Starts a nats-server for the running case (config may be NULL), stopped
 * when the case ends. */
nt_server *start_server(const char *config);

/* ---- nt_cleanup adapters ------------------------------------------------- */

void client_free_cb(void *client);
void sub_free_cb(void *sub);
void options_free_cb(void *options);
void token_free_cb(void *token);
void headers_free_cb(void *headers);
void msg_free_cb(void *msg);

/* ---- options, clients, subscriptions (released when the case ends) -------- */

natsio_options *new_options(void);
/* Options with `url`, and the connect timeout if connect_timeout_ms > 0
 * (else the library's default). */
natsio_options *options_for_url(const char *url, int64_t connect_timeout_ms);

natsio_client *connect_url(const char *url);
natsio_client *connect_with(const natsio_options *options);
/* A client of g_server. */
natsio_client *connect_client(void);
/* For nt_wait_until: whether client `arg` is connected (not reconnecting). */
bool client_connected(void *arg);
/* connect_client(), then waits until nats-server's first PING to it (2 to
 * 2.4 s after the connect) has come (natsio_client_stats.server_pings) and
 * been answered (a flush after it): the PONG sends whatever the client
 * queued, so cases that check what stays queued (deferred publishes and
 * acks) wait it out. The next comes 2 min later. */
natsio_client *connect_client_past_first_ping(void);

/* An iterator subscription (queue may be NULL). */
natsio_sub *subscribe(natsio_client *c, const char *subject, const char *queue);
/* As subscribe (no queue), flushed so that the server routes to it before
 * the caller publishes or requests. */
natsio_sub *subscribe_and_flush(natsio_client *c, const char *subject);
/* A callback subscription running `cb`, flushed so that the server knows
 * it before the caller sends requests to it. */
natsio_sub *start_responder(natsio_client *c, const char *subject, natsio_msg_cb cb);

/* A subscription in push mode in one call, as natsio_client_subscribe and
 * then natsio_sub_set_callback (the old natsio_client_subscribe_callback):
 * the status of the first that fails (the subscription is freed again if
 * set_callback fails, and `release` is not called). */
natsio_status subscribe_callback(const natsio_client *c, const char *subject, const char *queue,
                                 const natsio_sub_options *opts, natsio_msg_cb cb, void *user_data,
                                 natsio_release_cb release, natsio_sub **sub_out);

/* Responds with the request's payload (a natsio_msg_cb; ignores the final
 * call, whose msg is NULL). */
void echo_cb(void *user_data, const natsio_msg *msg, natsio_status status);

/* Subscribes to `subject` on `c`, publishes `payload` there and reads it
 * back: proof that a connection really works. Leaves no subscription. */
bool message_round_trip(natsio_client *c, const char *subject, const char *payload);

/* ---- small utilities ------------------------------------------------------ */

/* True when `needle` occurs in `haystack`, ignoring ASCII case. */
bool contains_ci(const char *haystack, const char *needle);

/* Polls until natsio_client_status(c) == status (true) or timeout_ms passes. */
bool wait_status(natsio_client *c, natsio_conn_status status, int64_t timeout_ms);

/* Polls until *value >= target (true) or timeout_ms passes (false). */
bool wait_at_least(atomic_long *value, long target, int64_t timeout_ms);

/* ---- JetStream and Key-Value handles (released when the case ends) ------- */

void js_free_cb(void *js);
void kv_free_cb(void *kv);
void string_free_cb(void *string);

/* A JetStream context over `c` (opts may be NULL), freed when the case ends. */
natsio_js *new_jetstream(natsio_client *c, const natsio_js_options *opts);

/* The integer after the first `"key":` in `json` into *out; false if there
 * is none. Enough for flat lookups in StreamInfo-like JSON in tests. */
bool json_int(const char *json, const char *key, int64_t *out);

/* ---- pull consumers and lists --------------------------------------------- */

void msg_list_free_cb(void *list);
void kv_entry_list_free_cb(void *list);


/* The string after the first `"key":"` in `json` into buf (NUL-terminated;
 * no escapes are undone); false if there is none or it does not fit. Enough
 * for names in ConsumerInfo-like JSON in tests. */
bool json_str(const char *json, const char *key, char *buf, size_t cap);

/* How many strings a flat JSON array of strings without escapes holds
 * (e.g. consumer names, KV keys); SIZE_MAX if `json` is not such an array. */
size_t json_string_count(const char *json);

/* True when the flat JSON array of strings `json` has the element `value`. */
bool json_array_has(const char *json, const char *value);

/* ---- string lists (names, keys, servers) ----------------------------------- */

void string_list_free_cb(void *list);
/* Frees `list` when the case ends; returns it. */
natsio_string_list *kept_list(natsio_string_list *list);
/* True when `list` holds the string `value`. */
bool string_list_has(const natsio_string_list *list, const char *value);
/* The strings of `list` joined with ',' into buf (truncated to fit); buf. */
const char *string_list_join(const natsio_string_list *list, char *buf, size_t cap);

/* ---- tokens and iterators --------------------------------------------------- */

void replies_free_cb(void *replies);

/* Waits up to timeout_ms for `t` and returns its outcome
 * (natsio_token_status), or NATSIO_ERR_TIMEOUT if it is still pending. */
natsio_status token_outcome(natsio_token *t, int64_t timeout_ms);

/* True when the `len` bytes at `p` (not NUL-terminated) equal the string `s`. */
bool span_eq(const char *p, size_t len, const char *s);

/* ---- continuous consumption and KV watches -------------------------------- */

void js_messages_free_cb(void *messages);
void kv_watcher_free_cb(void *watcher);
void kv_entry_free_cb(void *entry);

/* ---- service endpoints ------------------------------------------------------ */

/* For nt_wait_until: endpoint `ep`'s iterator stats show `dropped` requests
 * dropped and `pending_items` queued. */
typedef struct {
    natsio_endpoint *ep;
    uint64_t dropped, pending_items;
} endpoint_counts;
bool endpoint_counts_are(void *endpoint_counts_arg);
/* Publishes request i ("r<i>", reply subject `reply`) to `subject` for i
 * in [first, first + count), recording a failure if one fails. */
bool publish_requests(natsio_client *c, const char *subject, const char *reply, int first, int count);
/* Reads `count` requests of iterator endpoint `ep` (5 s each) and checks
 * they are "r0", "r1", ... in order, recording a failure if not. */
bool next_requests_in_order(natsio_endpoint *ep, int count);

/* ---- JetStream setup shared by the JetStream, KV, consumer and watch tests */

/* A JetStream context of a new client of the shared server (opts may be
 * NULL); NULL and a recorded failure if there is none. */
natsio_js *connect_js_with(const natsio_js_options *opts);
natsio_js *connect_js(void);

/* Creates (NATSIO_CREATE) a stream from its JSON config (no info wanted),
 * recording a failure if it cannot. */
bool create_stream_config(natsio_js *js, const char *config);
/* Creates a memory stream `name` on `subjects`, recording a failure if it
 * cannot. */
bool create_stream(natsio_js *js, const char *name, const char *subjects);

/* Creates (NATSIO_CREATE) a consumer (no info wanted), recording a failure
 * if it cannot. */
bool create_consumer(natsio_js *js, const char *stream, const char *config);

/* An integer of the consumer's info (e.g. "num_pending",
 * "num_ack_pending"); INT64_MIN if there is none. */
int64_t consumer_int(natsio_js *js, const char *stream, const char *consumer, const char *key);
/* Polls the consumer's info until `key` == want (acks are asynchronous;
 * the server counts pending messages after acknowledging the publishes),
 * up to 30 s; prints the last value seen when it never gets there. */
bool wait_consumer_int(natsio_js *js, const char *stream, const char *consumer, const char *key,
                       int64_t want);

/* A streamed fetch of one message in priority group `group` at `priority`
 * (the "prioritized" policy), held open 10 s; freed when the case ends,
 * NULL and a recorded failure if it cannot start. */
natsio_js_messages *fetch_one_prioritized(natsio_js *js, const char *stream, const char *consumer, const char *group,
                                          int32_t priority);
/* Reads the next message of `it` (5 s at most), acks it and checks its
 * payload is `want`, recording a failure if not. */
bool next_acked_payload_is(natsio_js_messages *it, const char *want);

/* Creates (NATSIO_CREATE: binds it when identical) a bucket, freed when the
 * case ends. */
natsio_kv *create_bucket(natsio_js *js, const char *config);
/* Polls until `key` of `kv` reads as `want`, up to timeout_ms, and stores
 * that entry's revision in *revision_out (may be NULL); records a failure
 * naming the last value or error seen when it never does. A mirror or a
 * source copies asynchronously, and a mirror (mirror_direct) answers its
 * origin's Direct Gets too, so even the origin's read right after a write
 * through its mirror can come from the mirror before it has the write. */
bool wait_kv_value(natsio_kv *kv, const char *key, const char *want, int64_t timeout_ms, uint64_t *revision_out);

/* The client's server pool, freed when the case ends (NULL and a recorded
 * failure when it cannot be read). */
natsio_server_list *kept_server_pool(natsio_client *c);
/* The server of `pool` whose URL ends in `suffix` (":PORT" or a whole
 * URL), or NULL. */
const natsio_server *pool_server(const natsio_server_list *pool, const char *suffix);

/* For nt_wait_until: `client` is connected to the server whose URL ends
 * in `url_suffix` (":PORT" or a whole URL). */
typedef struct {
    natsio_client *client;
    const char *url_suffix;
} connected_to_wait;
bool client_connected_to(void *connected_to_wait_arg);

/* True when the payload of `m` (which may be NULL) is the string `s`. */
bool payload_is(const natsio_msg *m, const char *s);

/* The message's delivery metadata (zeroed, and a failure recorded, if it
 * has none). */
natsio_js_msg_metadata metadata_of(const natsio_msg *m);

/* Frees `s` (a natsio string) when the case ends; returns it. */
char *kept(char *s);

/* Wall-clock time in ns since the Unix epoch (to compare with timestamps). */
int64_t now_realtime_ns(void);
int64_t abs64(int64_t v);

/* ---- failing calls: status, detail text, and nothing else ---------------- */

/* Invalid UTF-8: a lone continuation byte and a truncated sequence. */
#define BAD_UTF8 "bad.\xff\xfe"

/* Out pointers are pre-set to these addresses; a failing call must leave
 * them as they are. They are never dereferenced or freed. */
extern char sentinel_storage[8];
#define SENTINEL ((void *)&sentinel_storage[0])
#define SENTINEL_STR ((char *)&sentinel_storage[1])
#define SENTINEL_CSTR ((const char *)&sentinel_storage[2])


/* Makes natsio_last_error() hold ERROR_MARKER, so that a check can tell the
 * call under test set the detail (records a failure if it cannot). */
#define ERROR_MARKER "natsio-test-error-marker"
void plant_error_marker(void);

/* `call` must return `expected` and set a non-empty natsio_last_error(). */
#define EXPECT_FAILS(expected, call)                                                 \
    do {                                                                             \
        plant_error_marker();                                                        \
        natsio_status got_ = (call);                                                 \
        const char *detail_ = natsio_last_error();                                   \
        NT_CHECK_MSG(got_ == (natsio_status)(expected),                              \
                     "%s: got %d (%s), want %d (%s); last error: %s", #call,         \
                     (int)got_, natsio_status_str(got_), (int)(expected),            \
                     natsio_status_str(expected), detail_);                          \
        NT_CHECK_MSG(detail_ != NULL && detail_[0] != '\0',                          \
                     "%s: natsio_last_error() is empty", #call);                     \
        NT_CHECK_MSG(strstr(detail_, ERROR_MARKER) == NULL,                          \
                     "%s: natsio_last_error() was not set by this call", #call);     \
    } while (0)

/* As EXPECT_FAILS, and the detail must contain `what`. */
#define EXPECT_FAILS_NAMING(expected, what, call)                                    \
    do {                                                                             \
        EXPECT_FAILS(expected, call);                                                \
        NT_CHECK_MSG(strstr(natsio_last_error(), (what)) != NULL,                    \
                     "%s: detail \"%s\" does not mention \"%s\"", #call,             \
                     natsio_last_error(), (what));                                   \
    } while (0)

#define EXPECT_NULL_ARG(what, call) EXPECT_FAILS_NAMING(NATSIO_ERR_NULL_ARGUMENT, what, call)

/* The item out argument of an iterator's _next (msg_out, entry_out in the
 * header) is NULL. The library's detail names it "item_out" whatever the
 * iterator (src/ffi/iter.rs): either name is accepted until it says the
 * header's. */
#define EXPECT_NULL_ITEM_OUT(what, call)                                             \
    do {                                                                             \
        EXPECT_FAILS(NATSIO_ERR_NULL_ARGUMENT, call);                                \
        NT_CHECK_MSG(strstr(natsio_last_error(), (what)) != NULL ||                  \
                         strstr(natsio_last_error(), "item_out") != NULL,            \
                     "%s: detail \"%s\" does not mention \"%s\"", #call,            \
                     natsio_last_error(), (what));                                   \
    } while (0)

#define EXPECT_OK(call)                                                              \
    do {                                                                             \
        natsio_status ok_ = (call);                                                  \
        NT_CHECK_MSG(ok_ == NATSIO_OK, "%s: got %d (%s): %s", #call, (int)ok_,       \
                     natsio_status_str(ok_), natsio_last_error());                   \
    } while (0)


/* ---- what a client's error and event callbacks saw ------------------------ */

/* One call of the error callback (kind -1) or of the event callback (kind
 * a natsio_event_kind), with its status and text (truncated). */
typedef struct {
    int32_t kind;
    natsio_status status;
    char text[256];
} callback_record;

#define CALLBACK_LOG_CAP 64

/* Every call, in order (the first CALLBACK_LOG_CAP kept). Thread-safe:
 * the callbacks run on the client's dispatcher thread. RECONNECT_FAILED
 * events (one per failed attempt: as many as timing makes) are kept apart:
 * log_total and log_record leave them out, log_events and log_events_any
 * count them, log_reconnect_failure reads them. */
typedef struct callback_log callback_log;

/* An empty log, freed when the case ends: make it before the clients
 * that report to it (those are freed first). */
callback_log *new_callback_log(void);
/* Registers the log as `o`'s error and event callback (no release). */
bool log_callbacks(natsio_options *o, callback_log *log);
/* Calls of the error callback with `status`. */
long log_errors(callback_log *log, natsio_status status);
/* Calls of the event callback of `kind` with `status`. */
long log_events(callback_log *log, natsio_event_kind kind, natsio_status status);
/* Calls of the event callback of `kind`, whatever their status. */
long log_events_any(callback_log *log, natsio_event_kind kind);
/* Calls of either callback. */
long log_total(callback_log *log);
/* Waits until log_errors(log, status) >= n. */
bool wait_log_errors(callback_log *log, natsio_status status, long n, int64_t timeout_ms);
/* Waits until log_events_any(log, kind) >= n. */
bool wait_log_events(callback_log *log, natsio_event_kind kind, long n, int64_t timeout_ms);
/* A copy of record `i` (zeroed, kind -2, if there is none). */
callback_record log_record(callback_log *log, size_t i);
/* A copy of RECONNECT_FAILED event `i` (zeroed, kind -2, if none). */
callback_record log_reconnect_failure(callback_log *log, size_t i);
/* The records, one "kind:status:text" per line, for failure messages. */
const char *log_dump(callback_log *log, char *buf, size_t cap);

#endif /* NATSIO_TEST_UTIL_H */
