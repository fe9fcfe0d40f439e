/*
 * natsio Node addon: shared declarations of its source files.
 *
 *   hub.c     the per-environment hub: one thread-safe function that wakes
 *             the JS thread for everything library threads complete, the
 *             event list, the event loop's ref count, module teardown
 *   util.c    node-api helpers: arguments, errors, headers, conversions of
 *             messages, entries and batches to JS values
 *   op.c      operations: a promise settled from a completion token
 *   client.c  clients: connect (options), publish (the hot path), stats
 *   auth.c    authentication callbacks: the user JWT and the nonce
 *             signature asked of JS from the library thread that connects
 *   feed.c    push-mode iterators (subscriptions, request-many replies,
 *             consume, KV and object watch, batch reads of stored
 *             messages): delivery to JS in batches with backpressure
 *   js.c      JetStream: its handles (contexts, batches of consumed
 *             messages with their acks), publish, next and stream info
 *   kv.c      Key-Value: buckets and statuses as JS values
 *   gen/      generated from the C ABI's description (abi/generate.py):
 *             the verbs' glue (verbs.c), the result kinds (results.c) and
 *             the iterator kinds' calls (feeds.c)
 *   object.c  Object Store: buckets, objects, chunked reads and writes,
 *             watches
 *   service.c services: service, group and request handles, the error
 *             and stats callbacks (an endpoint is a feed)
 *   addon.c   module registration
 *
 * Threads: only the hub's event list, an operation's completion, a
 * feed's queue and an authentication request are touched by library
 * threads (each under its own mutex);
 * everything else belongs to the JS thread. The addon starts no thread and
 * queues no libuv threadpool work: every wait happens on library threads.
 */
#ifndef NATSIO_NODE_INTERNAL_H
#define NATSIO_NODE_INTERNAL_H

#define NAPI_VERSION 8
#include <node_api.h>

#include <natsio_sys.h> /* natsio.h and the binding-support calls */

#include "gen/gen.h"

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CHECK_NAPI(env, call)                                                  \
    do {                                                                       \
        if ((call) != napi_ok) {                                               \
            napi_throw_error((env), NULL, "natsio addon: " #call " failed");   \
            return NULL;                                                       \
        }                                                                      \
    } while (0)

/* Reads up to N arguments into argv (missing ones undefined). */
#define ARGS(N)                                                                \
    size_t argc = (N);                                                         \
    napi_value argv[(N) > 0 ? (N) : 1];                                        \
    CHECK_NAPI(env, napi_get_cb_info(env, info, &argc, argv, NULL, NULL))

/* ------------------------------------------------------------------ */
/* hub                                                                  */

/* What the JS side's dispatch(id, kind, ...) receives. */
enum {
    EV_MSG = 1,   /* a batch of messages of a subscription or request-many */
    EV_END = 2,   /* a feed ended: status, detail */
    EV_ERROR = 4, /* the client's asynchronous error callback */
    EV_CONN = 5,  /* a connection lifecycle event */
    EV_ITEMS = 6, /* an array of consumed messages or watch entries */
    EV_LOG = 7,   /* a log line of the client: level, text */
    EV_SVC_ERROR = 8, /* a service's error callback: code, endpoint, subject, description */
};

/* Kinds of events on the hub's list (internal). */
enum { HEV_FEED = 2, HEV_ERROR = 3, HEV_CONN = 4, HEV_LOG = 5, HEV_SVC_ERROR = 6 };

struct op;
struct feed;
struct client_wrap;

typedef struct hub_event {
    struct hub_event *next;
    int kind;
    struct feed *feed; /* HEV_FEED: a feed with items or its end to deliver */
    uint32_t target;   /* HEV_ERROR / HEV_CONN / HEV_LOG: the connection's JS id */
    int32_t status;
    int32_t conn_kind;
    char *text;
    char *subject;
    char *detail; /* HEV_SVC_ERROR: the description */
    uint64_t sid;
} hub_event;

typedef struct hub {
    pthread_mutex_t mu;
    int refs;   /* env cleanup hook, doorbell tsfn, instance data, and one per
                   callback registration that may still post */
    bool alive; /* false once the environment is torn down */
    napi_threadsafe_function doorbell;
    bool rung; /* written under mu (atomically); read without it while spinning */
    hub_event *head, *tail;
    /* Completed operations: each op's token is registered here with the op
     * as its tag, so a completion rings the doorbell from the completing
     * library thread (no dispatcher hop); the doorbell drains it. */
    natsio_completion_queue *completions;
    /* JS thread only from here on */
    napi_ref dispatch_fn;
    napi_ref make_error_fn;
    bool js_active;  /* the JS layer has open connections */
    int64_t pending; /* operations in flight (each keeps the loop alive) */
    /* The event-loop spin (hub.c, "Spinning for one awaited answer"). */
    napi_ref spin_fn;      /* index.js's: schedules a spin step */
    int64_t spin_until_ns; /* the current wait's spin ends by then */
    bool spin_scheduled;   /* a step is scheduled */
    /* Deferred sends (hub.c, "Acks and publishes sent once per turn"). */
    napi_ref send_fn;    /* index.js's: schedules sendDeferred */
    bool send_scheduled; /* sendDeferred is scheduled */
    bool refed;
    struct client_wrap *clients; /* live clients, for teardown */
    struct feed *feeds;          /* live feeds, for teardown and close */
} hub;

hub *get_hub(napi_env env);
void hub_retain(hub *h);
void hub_release(hub *h);
/* Appends an event and rings the doorbell; from any thread, never blocks
 * beyond the hub mutex. After teardown the event is freed instead. */
void hub_post(hub *h, hub_event *e);
void hub_event_free(hub_event *e);
/* An operation has started: it may start the event-loop spin. */
void hub_op_started(napi_env env, hub *h);
/* An ack or publish was queued with the library's deferred send: have it
 * sent once this turn of the event loop is over. */
void hub_send_after_turn(napi_env env, hub *h);
/* Settles the operations whose tokens completed (JS thread). */
void hub_settle_completed(napi_env env, hub *h);
/* Keeps the event loop alive while connections are open or operations are
 * in flight (JS thread). */
void hub_update_ref(napi_env env, hub *h);
/* Calls the JS dispatch(id, kind, a, b, c, d, e); reports a thrown
 * exception as uncaught. JS thread. */
void hub_dispatch(napi_env env, hub *h, uint32_t id, int kind, napi_value *args, size_t nargs);

/* ------------------------------------------------------------------ */
/* util                                                                 */

char *dup_str(const char *s);
/* The error data of a failure (natsio_last_error_code, _err_code,
 * _revision of the same thread); zeros: none. */
typedef struct err_data {
    int32_t code;     /* the JetStream API error's code (404, ...) */
    int32_t err_code; /* its err_code (10059, ...) */
    uint64_t revision; /* KEY_DELETED / KEY_EXISTS: the key's revision */
} err_data;
err_data last_err_data(void);
napi_value make_error(napi_env env, int32_t status, const char *detail);
napi_value make_error_data(napi_env env, int32_t status, const char *detail, const err_data *d);
/* The error of a failed library call: `status` with this thread's last
 * error text and data. */
napi_value make_last_error(napi_env env, int32_t status);
void throw_status(napi_env env, int32_t status, const char *detail);
bool throw_if_failed(napi_env env, int32_t status);
bool exception_pending(napi_env env);
bool get_opt_string(napi_env env, napi_value v, char **out);
bool get_req_string(napi_env env, napi_value v, const char *what, char **out);
/* A number or bigint (out of range: INVALID_ARGUMENT pending); anything
 * else: dflt. */
int64_t get_i64(napi_env env, napi_value v, int64_t dflt);
double get_f64(napi_env env, napi_value v, double dflt);
bool get_u64(napi_env env, napi_value v, const char *what, uint64_t *out, bool *present);
/* get_u64 where undefined and null are a TypeError too. */
bool get_required_u64(napi_env env, napi_value v, const char *what, uint64_t *out);
/* get_required_u64 at most `max` (beyond: INVALID_ARGUMENT). */
bool get_required_uint(napi_env env, napi_value v, const char *what, uint64_t max, uint64_t *out);
bool get_opt_bool(napi_env env, napi_value v, bool *out);
bool opt_flag(napi_env env, napi_value obj, const char *name);
bool is_object(napi_env env, napi_value v);
napi_value prop(napi_env env, napi_value obj, const char *name);
bool get_bytes(napi_env env, napi_value v, const void **data, size_t *len);
bool get_headers(napi_env env, napi_value v, natsio_headers **out);
/* A JS array of strings into a malloc'ed char* array (free with
 * free_strings); null/undefined: none. */
bool get_string_array(napi_env env, napi_value v, const char *what, char ***out, size_t *n);
void free_strings(char **s, size_t n);
napi_value headers_to_js(napi_env env, const natsio_headers *hd);
napi_value msg_to_js(napi_env env, const natsio_msg *m);
/* Small value makers of the array-shaped results (statuses, infos). */
napi_value str_or_null(napi_env env, const char *s);
void set_elem(napi_env env, napi_value arr, uint32_t i, napi_value v);
napi_value num(napi_env env, double d);
napi_value boolean(napi_env env, bool b);
void set_u64(napi_env env, napi_value obj, const char *name, uint64_t v);
napi_value iter_stats_to_js(napi_env env, const natsio_iter_stats *s);
napi_value pub_ack_to_js(napi_env env, const natsio_pub_ack *ack);
napi_value kv_entry_to_js(napi_env env, const natsio_kv_entry *e);
/* [subject, seq, timeMs, data, flatHeaders|null] */
napi_value stored_msg_to_js(napi_env env, const natsio_stored_msg *m);
napi_value stored_fields_to_js(napi_env env, const char *subject, uint64_t seq, int64_t time_ns, const char *data,
                               size_t len, const natsio_headers *hd);
napi_value undefined_value(napi_env env);

/* Live native handles by kind, process-wide, for the tests' leak checks
 * (liveHandles()): one relaxed atomic add per handle made or freed. */
enum {
    LIVE_CLIENT,
    LIVE_JS,
    LIVE_KV,
    LIVE_JS_MSG,
    LIVE_OBJ,
    LIVE_OBJ_INFO,
    LIVE_OBJ_READER,
    LIVE_OBJ_WRITER,
    LIVE_KINDS
};
void live_count(int kind, int delta);
/* The same for the iterators, by feed kind (FEED_<ITERATOR>). */
void live_count_feed(int feed_kind, int delta);

/* A batch of messages for ONE JS call (see batch_to_js in util.c). */
enum { META_INTS = 5 }; /* subject index, data end, status, extras index, sid */
void batch_to_js(napi_env env, void *const *msgs, uint32_t n, napi_value out[4]);

/* ------------------------------------------------------------------ */
/* clients                                                              */

typedef struct client_wrap {
    natsio_client *client;
    hub *hub;
    int refs; /* the JS external, and every JetStream/KV handle and feed made
                 from it (JS thread only) */
    bool finalized;
    struct client_wrap *prev, *next; /* in hub->clients while the external lives */
} client_wrap;

client_wrap *get_client(napi_env env, napi_value v);
void client_retain(client_wrap *cw);
void client_release(client_wrap *cw);
/* Wraps a connected client (takes it over): the JS external. */
napi_value client_wrap_new(napi_env env, natsio_client *c);

/* auth.c: registers index.js's handler(kind, nonce, request) as the
 * options' JWT and signature callbacks; an answer is awaited at most
 * timeout_ms (0: 5000) on the library thread. False with a pending
 * exception. */
/* kind: 0 the JWT and signature callbacks, 3 user/password, 4 token. */
bool set_auth_callbacks(napi_env env, natsio_options *o, napi_value handler, int64_t timeout_ms, int32_t kind);

/* The same bounded wait for a service's STATS data: handler(2, "<endpoint
 * name> <subject>", request) answers with authReply(request, json|undefined).
 * Never waits on the JS thread (natsio_service_stats_json called there gets
 * no data). False with a pending exception. */
bool set_stats_callback(napi_env env, natsio_service *s, napi_value handler, int64_t timeout_ms);

/* service.c: the C handles of index.js's service and request values (NULL
 * with a pending exception), and a request delivered to JS (taken over). */
natsio_service *service_of(napi_env env, napi_value v);
natsio_service_request *service_request_of(napi_env env, napi_value v);
napi_value service_request_take_js(napi_env env, natsio_service_request *req);

/* ------------------------------------------------------------------ */
/* JetStream handles (contexts, buckets, consumed messages, and the
 * Object Store's buckets, infos, readers and writers)                  */

enum {
    JSH_JS = 1,
    JSH_KV = 2,
    JSH_MSG = 3,
    JSH_OBJ = 4,        /* natsio_obj */
    JSH_OBJ_INFO = 5,   /* natsio_obj_info (owned) */
    JSH_OBJ_READER = 6, /* natsio_obj_reader */
    JSH_OBJ_WRITER = 7, /* natsio_obj_writer */
    JSH_ORDERED = 8,    /* natsio_ordered_consumer */
};

typedef struct js_handle {
    int kind;
    natsio_js *js;
    natsio_kv *kv;
    /* JSH_MSG: a batch of consumed messages (owned; an entry is freed and
     * cleared once its final ack is sent) */
    natsio_msg **msgs;
    uint32_t msg_count;
    void *obj;       /* JSH_OBJ*: the Object Store handle of the kind */
    natsio_ordered_consumer *oc; /* JSH_ORDERED */
    client_wrap *cw; /* JSH_JS / JSH_KV / JSH_OBJ: what feeds made from it belong to */
    int inflight;    /* operations in flight (JS thread only) */
    bool closed;     /* close() ran: no new calls */
    bool finalized;  /* the external is gone */
} js_handle;

js_handle *get_jsh(napi_env env, napi_value v, int kind);
napi_value jsh_wrap(napi_env env, int kind, natsio_js *js, natsio_kv *kv, client_wrap *cw);
/* Wraps an Object Store handle of kind JSH_OBJ* (taken over, also on failure). */
napi_value jsh_wrap_obj(napi_env env, int kind, void *obj, client_wrap *cw);
void jsh_release_op(js_handle *h);
/* A batch of consumed messages for JsMsg (index.js): [handle, meta, data,
 * subjects, extras] as batch_to_js lays them out, then md (a Float64Array
 * of JS_MD_NUMS per message: metadata status, delivered, stream seq,
 * consumer seq, pending, timestamp ms, its ns remainder, names index) and
 * names ([stream, consumer, domain|null] triples, one per change). One
 * handle owns the batch: `msgs` (malloc'ed, n >= 1) is taken over, also on
 * failure. */
enum { JS_MD_NUMS = 8 };
napi_value js_msgs_to_js(napi_env env, natsio_msg **msgs, uint32_t n);

/* ------------------------------------------------------------------ */
/* operations: a promise settled from a token                           */

/* How a completed token's result becomes a JS value: one of the generated
 * kinds (gen/gen.h: R_<KIND>, one per token reader of the header), or a
 * presentation of the addon's own, a present_fn: it reads the token itself
 * (its status too: a presentation also gets a token that ended with
 * NATSIO_DONE, and may make that a value) and returns NULL with *st set on
 * failure. The addon's own are binding choices: a JetStream message is
 * one of a batch with an ack handle (js_msg_value, js_msg_list_value in
 * js.c), an object read's chunk is a Buffer and its end null
 * (obj_chunk_value in object.c, a token with two outputs). */
typedef napi_value (*present_fn)(napi_env env, natsio_token *t, int32_t *st);
napi_value js_msg_value(napi_env env, natsio_token *t, int32_t *st);
napi_value js_msg_list_value(napi_env env, natsio_token *t, int32_t *st);
napi_value obj_chunk_value(napi_env env, natsio_token *t, int32_t *st);

typedef struct op {
    hub *hub;
    natsio_token *token;
    napi_deferred deferred;
    int result;         /* a generated kind, when present is NULL */
    present_fn present; /* the addon's own presentation, or NULL */
    js_handle *h;       /* counted in h->inflight until settled (may be NULL) */
    client_wrap *cw;    /* retained until settled (may be NULL) */
} op;

/* Starts tracking `tok` (from an _async call that returned `st`): returns
 * the promise, settled on the JS thread when the token completes. On a
 * failed `st` the promise is rejected at once with its error (detail from
 * natsio_last_error). `h` and `cw` are kept until settled. */
napi_value op_track(napi_env env, int32_t st, natsio_token *tok, int result, js_handle *h, client_wrap *cw);
/* op_track with one of the addon's own presentations. */
napi_value op_track_with(napi_env env, int32_t st, natsio_token *tok, present_fn present, js_handle *h,
                         client_wrap *cw);
/* Settles a completed operation (JS thread) and frees it. */
void op_settle(napi_env env, op *o);
void op_free(op *o);
int64_t now_ns(void);

/* ------------------------------------------------------------------ */
/* feeds                                                                */


napi_value feed_wrap(napi_env env, int kind, void *handle, client_wrap *cw);
/* Sets stopping on every feed of `cw` (or of all clients when NULL) so no
 * dispatcher waits for JS any more: called before a close. JS thread. */
void feeds_release_client(hub *h, client_wrap *cw);
void feed_process(napi_env env, struct feed *f);
/* A completion-queue tag with one of these in its low bits is a feed's
 * token (see feed.c, pull mode): its next message, or its end; any other
 * tag is an op (both are calloc'ed, so the low bits of their addresses
 * are free). */
#define HUB_TAG_FEED ((uint64_t)1)
#define HUB_TAG_FEED_END ((uint64_t)2)
#define HUB_TAG_KINDS ((uint64_t)3)
void feed_pulled(napi_env env, struct feed *f);
void feed_end_watched(napi_env env, struct feed *f);
void feed_release(struct feed *f);
/* The C handle of a feed of `kind` (a JS argument), or NULL with a pending
 * TypeError: the receiver of the generated verbs of an iterator (sub_drain). */
void *feed_handle(napi_env env, napi_value v, int kind);

/* ------------------------------------------------------------------ */
/* exported functions (registered in addon.c)                           */

#define EXPORT(name) napi_value name(napi_env env, napi_callback_info info)

/* client.c */
EXPORT(js_connect);
EXPORT(js_publish);
EXPORT(js_stats);
EXPORT(js_server_pool);

EXPORT(js_release_feeds);
EXPORT(js_options_new);
/* The natsio_options of an optionsNew() external (the receiver of the
 * generated options_set_* verbs), or NULL with a pending TypeError. */
natsio_options *get_options(napi_env env, napi_value v);

/* auth.c */
EXPORT(js_auth_reply);
EXPORT(js_nkey_sign);
EXPORT(js_options_set_reconnect_delay);

/* feed.c */
EXPORT(js_feed_start);
EXPORT(js_feed_credit);
EXPORT(js_feed_stop);
EXPORT(js_feed_stats);

/* js.c */
EXPORT(js_jsh_close);
EXPORT(js_js_publish);
EXPORT(js_js_publish_async);
EXPORT(js_msg_ack);
EXPORT(js_msg_ack_sync);
EXPORT(js_msg_metadata);


/* object.c */
EXPORT(js_obj_reader_next);
EXPORT(js_obj_add_link);
/* kv.c */
EXPORT(js_kv_with_codecs);
/* [handle, name, ...] of an info (taken over), or true for a watcher's
 * initial-values marker (freed then). NULL with a pending exception. */
napi_value obj_info_take_js(napi_env env, natsio_obj_info *info);
/* Frees the Object Store handle of a js_handle of kind JSH_OBJ*. */
void obj_handle_free(int kind, void *obj);

/* service.c */
EXPORT(js_service_add_group);
EXPORT(js_service_add_endpoint);
EXPORT(js_service_request_release);
EXPORT(js_service_set_handlers);

/* hub.c */
EXPORT(js_init);
EXPORT(js_spin_step);
EXPORT(js_send_deferred);
EXPORT(js_set_wait_spin);
EXPORT(js_set_active);
EXPORT(js_report_uncaught);
EXPORT(js_status_str);
EXPORT(js_status_parent);
EXPORT(js_status_is);
EXPORT(js_version);
/* util.c */
EXPORT(js_live_handles);
void hub_module_init(napi_env env);

#endif
