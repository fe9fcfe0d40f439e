/*
 * natsio Node addon: a thin node-api (ABI-stable) layer over libnatsio.
 *
 * Threading design
 * ----------------
 * Everything that happens on a library or helper thread reaches JavaScript
 * through one "hub" per Node environment (main thread or worker):
 *
 *   library dispatcher / pump thread
 *       -> append an event to the hub's own list (short mutex)
 *       -> ring the hub's doorbell: napi_call_threadsafe_function with
 *          napi_tsfn_nonblocking on a tsfn whose queue holds ONE call.
 *   JS thread
 *       -> the doorbell's call_js takes the whole list and dispatches each
 *          event to the JS layer.
 *
 * The doorbell never blocks and never loses an event: the events travel on
 * the hub's list, the tsfn only wakes the JS thread, and a wake-up that finds
 * the doorbell already rung (queue full) is redundant by construction.
 *
 * Subscriptions (callback or iterator mode in JS) are ITERATOR-mode
 * subscriptions in the core, read by one pump thread per subscription that
 * the addon owns. The pump reads a message only when the JS layer has granted
 * it credit (a small prefetch window), so at most `window` messages sit
 * between the core and JS; everything else stays in the core's bounded
 * pending queue, where the subscription's pending limits and policy
 * (DROP_NEW, DROP_OLD, BLOCK, ERROR) apply exactly as in C, C++ and Go. The
 * alternative, a core callback subscription feeding a bounded tsfn, would
 * have to either block a library dispatcher (and deadlock close() on the JS
 * thread) or drop messages with a policy of the binding's own when the tsfn
 * queue is full. The pump blocks only itself, in natsio_sub_next_msg or on
 * its credit condition.
 *
 * Messages travel in batches (one event, one JS call, one payload Buffer per
 * batch; see batch_to_js): per-message node-api work and wake-ups cost more
 * than everything else, and would make a Node subscriber lose messages at
 * rates a publisher easily reaches. Callback subscriptions run in pull mode:
 * after posting a batch the pump parks, and JS takes what the core has
 * queued meanwhile itself (pumpTake, never waiting) before crediting the pump
 * again, so delivery never waits on a thread hand-off while messages are
 * queued. One reader at a time keeps the order.
 *
 * Completion tokens (request, flush, drain) resolve through
 * natsio_token_on_complete, whose callback only posts an event to the hub.
 *
 * The doorbell tsfn is unref'ed unless the JS layer has open connections, so
 * an idle process exits once its connections are closed. An environment
 * cleanup hook closes clients, stops pumps and releases the tsfn; the hub is
 * reference counted so late library callbacks after teardown are harmless
 * (their payloads are freed, nothing reaches JS).
 */
#define NAPI_VERSION 8
#include <node_api.h>

#include <natsio.h>

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ */
/* small helpers                                                        */

#define CHECK_NAPI(env, call)                                              \
    do {                                                                   \
        if ((call) != napi_ok) {                                           \
            napi_throw_error((env), NULL, "natsio addon: " #call " failed"); \
            return NULL;                                                   \
        }                                                                  \
    } while (0)

enum event_kind {
    EV_MSG = 1,   /* a batch of messages for a subscription / requestMany */
    EV_END = 2,   /* a pump ended: status (SUBSCRIPTION_CLOSED, DONE, error) */
    EV_TOKEN = 3, /* a completion token finished */
    EV_ERROR = 4, /* the client's asynchronous error callback */
    EV_CONN = 5,  /* a connection lifecycle event (natsio_event_kind in conn_kind) */
};

/* event.token_has_msg: 1 for a request's reply; TOKEN_PUB_ACK for the ack
 * of a JetStream asynchronous publish (see the JetStream section). */
enum { TOKEN_PUB_ACK = 2 };
static napi_value pub_ack_to_js(napi_env env, const natsio_pub_ack *ack);

typedef struct event {
    struct event *next;
    int kind;
    uint32_t target; /* JS-side id of the subscription, operation or client */
    int32_t status;
    natsio_msg *msg;
    natsio_msg **msgs; /* EV_MSG: the batch, in delivery order */
    uint32_t nmsgs;
    natsio_token *token;
    int token_has_msg;
    char *text;
    char *subject;
    uint64_t sid;
    int32_t conn_kind;
} event;

struct pump;
struct client_wrap;

typedef struct hub {
    pthread_mutex_t mu;
    int refs; /* the env holds one; every pump, token and error callback one */
    bool alive; /* false once the environment is torn down */
    napi_threadsafe_function doorbell;
    bool rung;
    event *head, *tail;
    napi_ref dispatch_fn;
    napi_ref make_error_fn;
    struct pump *pumps;          /* live pumps, for teardown */
    struct client_wrap *clients; /* live clients, for teardown */
    bool refed;
} hub;

static void hub_retain(hub *h) {
    pthread_mutex_lock(&h->mu);
    h->refs++;
    pthread_mutex_unlock(&h->mu);
}

static void event_free(event *e) {
    natsio_msg_free(e->msg);
    for (uint32_t i = 0; i < e->nmsgs; i++) natsio_msg_free(e->msgs[i]);
    free(e->msgs);
    natsio_token_free(e->token);
    free(e->text);
    free(e->subject);
    free(e);
}

static void hub_release(hub *h) {
    pthread_mutex_lock(&h->mu);
    int left = --h->refs;
    pthread_mutex_unlock(&h->mu);
    if (left == 0) {
        event *e = h->head;
        while (e) {
            event *n = e->next;
            event_free(e);
            e = n;
        }
        pthread_mutex_destroy(&h->mu);
        free(h);
    }
}

/* Appends an event and rings the doorbell. Callable from any thread; never
 * blocks beyond the hub mutex. After teardown the event is freed. */
static void hub_post(hub *h, event *e) {
    e->next = NULL;
    pthread_mutex_lock(&h->mu);
    if (!h->alive) {
        pthread_mutex_unlock(&h->mu);
        event_free(e);
        return;
    }
    if (h->tail)
        h->tail->next = e;
    else
        h->head = e;
    h->tail = e;
    if (!h->rung) {
        /* Called under the mutex so teardown cannot release the tsfn
         * between the alive check and the call. Nonblocking: a full queue
         * means a wake-up is already on its way. */
        napi_status s = napi_call_threadsafe_function(h->doorbell, NULL, napi_tsfn_nonblocking);
        if (s == napi_ok) h->rung = true;
    }
    pthread_mutex_unlock(&h->mu);
}

static char *dup_str(const char *s) {
    if (!s) return NULL;
    size_t n = strlen(s);
    char *d = malloc(n + 1);
    if (d) memcpy(d, s, n + 1);
    return d;
}

static hub *get_hub(napi_env env) {
    void *data = NULL;
    napi_get_instance_data(env, &data);
    return data;
}

/* Throws the JS error class that matches `status` (built by the JS layer). */
static void throw_status(napi_env env, int32_t status, const char *detail) {
    hub *h = get_hub(env);
    napi_value fn, args[2], err, undef;
    if (h && h->make_error_fn && napi_get_reference_value(env, h->make_error_fn, &fn) == napi_ok && fn) {
        napi_create_int32(env, status, &args[0]);
        napi_create_string_utf8(env, detail ? detail : "", NAPI_AUTO_LENGTH, &args[1]);
        napi_get_undefined(env, &undef);
        if (napi_call_function(env, undef, fn, 2, args, &err) == napi_ok) {
            napi_throw(env, err);
            return;
        }
    }
    napi_throw_error(env, natsio_status_str(status), detail ? detail : natsio_status_str(status));
}

/* Builds the error value (not thrown) for promise rejections. */
static napi_value make_error(napi_env env, int32_t status, const char *detail) {
    hub *h = get_hub(env);
    napi_value fn, args[2], err = NULL, undef;
    if (h && h->make_error_fn && napi_get_reference_value(env, h->make_error_fn, &fn) == napi_ok && fn) {
        napi_create_int32(env, status, &args[0]);
        napi_create_string_utf8(env, detail ? detail : "", NAPI_AUTO_LENGTH, &args[1]);
        napi_get_undefined(env, &undef);
        if (napi_call_function(env, undef, fn, 2, args, &err) == napi_ok) return err;
    }
    napi_value msg;
    napi_create_string_utf8(env, natsio_status_str(status), NAPI_AUTO_LENGTH, &msg);
    napi_create_error(env, NULL, msg, &err);
    return err;
}

static bool throw_if_failed(napi_env env, int32_t status) {
    if (status == NATSIO_OK) return false;
    throw_status(env, status, natsio_last_error());
    return true;
}

/* Reads a JS string into a new malloc'ed buffer; NULL for null/undefined. */
static bool get_opt_string(napi_env env, napi_value v, char **out) {
    napi_valuetype t;
    *out = NULL;
    if (!v || napi_typeof(env, v, &t) != napi_ok) return false;
    if (t == napi_null || t == napi_undefined) return true;
    if (t != napi_string) {
        napi_throw_type_error(env, NULL, "expected a string");
        return false;
    }
    size_t len;
    napi_get_value_string_utf8(env, v, NULL, 0, &len);
    char *s = malloc(len + 1);
    if (!s) return false;
    napi_get_value_string_utf8(env, v, s, len + 1, &len);
    *out = s;
    return true;
}

static int64_t get_i64(napi_env env, napi_value v, int64_t dflt) {
    napi_valuetype t;
    if (!v || napi_typeof(env, v, &t) != napi_ok || t != napi_number) return dflt;
    int64_t r;
    napi_get_value_int64(env, v, &r);
    return r;
}

static napi_value prop(napi_env env, napi_value obj, const char *name) {
    napi_value v = NULL;
    napi_get_named_property(env, obj, name, &v);
    return v;
}

/* Borrowed bytes of a Buffer / Uint8Array (JS normalizes strings first). */
static bool get_bytes(napi_env env, napi_value v, const void **data, size_t *len) {
    bool is_ta = false;
    *data = NULL;
    *len = 0;
    napi_valuetype t;
    napi_typeof(env, v, &t);
    if (t == napi_undefined || t == napi_null) return true;
    napi_is_typedarray(env, v, &is_ta);
    if (!is_ta) {
        napi_throw_type_error(env, NULL, "data must be a Uint8Array, Buffer or string");
        return false;
    }
    napi_typedarray_type tt;
    size_t count, offset;
    void *p;
    napi_value ab;
    napi_get_typedarray_info(env, v, &tt, &count, &p, &ab, &offset);
    if (tt != napi_uint8_array && tt != napi_uint8_clamped_array && tt != napi_int8_array) {
        napi_throw_type_error(env, NULL, "data must be a byte array");
        return false;
    }
    *data = p;
    *len = count;
    return true;
}

/* Builds natsio headers from a flat JS array [name, value, name, value...]
 * (null/undefined: none). Returns false with a pending exception. */
static bool get_headers(napi_env env, napi_value v, natsio_headers **out) {
    *out = NULL;
    napi_valuetype t;
    napi_typeof(env, v, &t);
    if (t == napi_undefined || t == napi_null) return true;
    uint32_t n;
    if (napi_get_array_length(env, v, &n) != napi_ok) {
        napi_throw_type_error(env, NULL, "headers must be a flat array");
        return false;
    }
    natsio_headers *hd;
    if (throw_if_failed(env, natsio_headers_new(&hd))) return false;
    for (uint32_t i = 0; i + 1 < n; i += 2) {
        napi_value kv, vv;
        char *k = NULL, *val = NULL;
        napi_get_element(env, v, i, &kv);
        napi_get_element(env, v, i + 1, &vv);
        if (!get_opt_string(env, kv, &k) || !get_opt_string(env, vv, &val) || !k || !val) {
            free(k);
            free(val);
            natsio_headers_free(hd);
            bool pending = false;
            napi_is_exception_pending(env, &pending);
            if (!pending) napi_throw_type_error(env, NULL, "header names and values must be strings");
            return false;
        }
        int32_t st = natsio_headers_add(hd, k, val);
        free(k);
        free(val);
        if (st != NATSIO_OK) {
            natsio_headers_free(hd);
            throw_if_failed(env, st);
            return false;
        }
    }
    *out = hd;
    return true;
}

/* A header block as [name, value, name, value, ...], or null. */
static napi_value headers_to_js(napi_env env, const natsio_headers *hd) {
    napi_value v;
    if (!hd) {
        napi_get_null(env, &v);
        return v;
    }
    size_t n = natsio_headers_len(hd);
    napi_create_array_with_length(env, n * 2, &v);
    for (size_t i = 0; i < n; i++) {
        const char *k, *val;
        if (natsio_headers_entry(hd, i, &k, &val) != NATSIO_OK) break;
        napi_value kv, vv;
        napi_create_string_utf8(env, k, NAPI_AUTO_LENGTH, &kv);
        napi_create_string_utf8(env, val, NAPI_AUTO_LENGTH, &vv);
        napi_set_element(env, v, (uint32_t)(i * 2), kv);
        napi_set_element(env, v, (uint32_t)(i * 2 + 1), vv);
    }
    return v;
}

/* Converts a message to [subject, reply, data, flatHeaders|null, status]. */
static napi_value msg_to_js(napi_env env, const natsio_msg *m) {
    napi_value arr, v;
    napi_create_array_with_length(env, 5, &arr);
    napi_create_string_utf8(env, natsio_msg_subject(m), NAPI_AUTO_LENGTH, &v);
    napi_set_element(env, arr, 0, v);
    const char *reply = natsio_msg_reply(m);
    if (reply)
        napi_create_string_utf8(env, reply, NAPI_AUTO_LENGTH, &v);
    else
        napi_get_null(env, &v);
    napi_set_element(env, arr, 1, v);
    void *copy;
    napi_create_buffer_copy(env, natsio_msg_data_len(m), natsio_msg_data(m), &copy, &v);
    napi_set_element(env, arr, 2, v);
    napi_set_element(env, arr, 3, headers_to_js(env, natsio_msg_headers(m)));
    napi_create_int32(env, natsio_msg_status(m), &v);
    napi_set_element(env, arr, 4, v);
    return arr;
}

/* Converts a batch of messages for ONE JS call, with as few node-api calls
 * per message as possible (per message, node-api costs more than the rest of
 * the delivery path together):
 *   meta      Int32Array, 4 per message: subject index, end offset of its
 *             data in `data`, inline status, extras index (-1: none)
 *   data      one Buffer with every payload, copied once
 *   subjects  the distinct subjects of runs of equal subjects (a
 *             subscription without wildcards makes one string per batch)
 *   extras    [reply|null, flatHeaders|null] pairs, only for the messages
 *             that have a reply subject or headers (undefined if none)
 * The JS layer slices `data` per message. */
enum { META_INTS = 4 };

static void batch_to_js(napi_env env, natsio_msg **msgs, uint32_t n, napi_value out[4]) {
    size_t total = 0;
    for (uint32_t i = 0; i < n; i++) total += natsio_msg_data_len(msgs[i]);
    void *meta_mem = NULL;
    napi_value meta_ab;
    napi_create_arraybuffer(env, (size_t)n * META_INTS * sizeof(int32_t), &meta_mem, &meta_ab);
    napi_create_typedarray(env, napi_int32_array, (size_t)n * META_INTS, meta_ab, 0, &out[0]);
    uint8_t *data_mem = NULL;
    napi_create_buffer(env, total, (void **)&data_mem, &out[1]);
    napi_create_array(env, &out[2]);
    napi_get_undefined(env, &out[3]);
    int32_t *meta = meta_mem;
    const char *last_subject = NULL;
    int32_t subject_index = -1;
    int32_t extras_count = 0;
    size_t offset = 0;
    for (uint32_t i = 0; i < n; i++) {
        const natsio_msg *m = msgs[i];
        const char *subject = natsio_msg_subject(m);
        if (!last_subject || strcmp(subject, last_subject) != 0) {
            napi_value sv;
            napi_create_string_utf8(env, subject, NAPI_AUTO_LENGTH, &sv);
            napi_set_element(env, out[2], (uint32_t)++subject_index, sv);
            last_subject = subject;
        }
        size_t len = natsio_msg_data_len(m);
        if (len) memcpy(data_mem + offset, natsio_msg_data(m), len);
        offset += len;
        const char *reply = natsio_msg_reply(m);
        const natsio_headers *hd = natsio_msg_headers(m);
        int32_t extras_index = -1;
        if (reply || hd) {
            if (extras_count == 0) napi_create_array(env, &out[3]);
            napi_value rv;
            if (reply)
                napi_create_string_utf8(env, reply, NAPI_AUTO_LENGTH, &rv);
            else
                napi_get_null(env, &rv);
            napi_set_element(env, out[3], (uint32_t)(extras_count * 2), rv);
            napi_set_element(env, out[3], (uint32_t)(extras_count * 2 + 1), headers_to_js(env, hd));
            extras_index = extras_count++;
        }
        meta[i * META_INTS + 0] = subject_index;
        meta[i * META_INTS + 1] = (int32_t)offset;
        meta[i * META_INTS + 2] = natsio_msg_status(m);
        meta[i * META_INTS + 3] = extras_index;
    }
}

/* ------------------------------------------------------------------ */
/* the doorbell: runs on the JS thread                                  */

static void doorbell_call_js(napi_env env, napi_value js_cb, void *context, void *data) {
    (void)js_cb;
    (void)data;
    hub *h = context;
    pthread_mutex_lock(&h->mu);
    event *e = h->head;
    h->head = h->tail = NULL;
    h->rung = false;
    pthread_mutex_unlock(&h->mu);
    if (env == NULL || !h->dispatch_fn) { /* environment going away */
        while (e) {
            event *n = e->next;
            event_free(e);
            e = n;
        }
        return;
    }
    napi_value dispatch, undef;
    napi_get_reference_value(env, h->dispatch_fn, &dispatch);
    napi_get_undefined(env, &undef);
    while (e) {
        event *n = e->next;
        napi_handle_scope scope;
        napi_open_handle_scope(env, &scope);
        /* dispatch(id, kind, status, value, extra[, subjects, extras]) */
        napi_value args[7];
        size_t nargs = 5;
        napi_create_uint32(env, e->target, &args[0]);
        napi_create_int32(env, e->kind, &args[1]);
        napi_create_int32(env, e->status, &args[2]);
        napi_get_undefined(env, &args[3]);
        napi_get_undefined(env, &args[4]);
        switch (e->kind) {
        case EV_MSG: {
            /* status = count, value = meta, extra = data */
            napi_value batch[4];
            batch_to_js(env, e->msgs, e->nmsgs, batch);
            napi_create_uint32(env, e->nmsgs, &args[2]);
            args[3] = batch[0];
            args[4] = batch[1];
            args[5] = batch[2];
            args[6] = batch[3];
            nargs = 7;
            break;
        }
        case EV_END:
            if (e->text) napi_create_string_utf8(env, e->text, NAPI_AUTO_LENGTH, &args[4]);
            break;
        case EV_TOKEN: {
            int32_t st = natsio_token_status(e->token);
            const char *detail = st == NATSIO_OK ? "" : natsio_last_error();
            if (st == NATSIO_OK && e->token_has_msg == 1) {
                natsio_msg *m = NULL;
                st = natsio_token_msg(e->token, &m);
                if (st == NATSIO_OK) {
                    args[3] = msg_to_js(env, m);
                    natsio_msg_free(m);
                } else {
                    detail = natsio_last_error();
                }
            }
            if (st == NATSIO_OK && e->token_has_msg == TOKEN_PUB_ACK) { /* JetStream async publish */
                natsio_pub_ack *ack = NULL;
                st = natsio_token_pub_ack(e->token, &ack);
                if (st == NATSIO_OK) {
                    args[3] = pub_ack_to_js(env, ack);
                    natsio_pub_ack_free(ack);
                } else {
                    detail = natsio_last_error();
                }
            }
            napi_create_int32(env, st, &args[2]);
            if (st != NATSIO_OK) args[4] = make_error(env, st, detail);
            break;
        }
        case EV_ERROR: {
            napi_value info, v;
            napi_create_object(env, &info);
            napi_create_string_utf8(env, e->text ? e->text : "", NAPI_AUTO_LENGTH, &v);
            napi_set_named_property(env, info, "text", v);
            napi_create_double(env, (double)e->sid, &v);
            napi_set_named_property(env, info, "sid", v);
            if (e->subject)
                napi_create_string_utf8(env, e->subject, NAPI_AUTO_LENGTH, &v);
            else
                napi_get_null(env, &v);
            napi_set_named_property(env, info, "subject", v);
            args[3] = info;
            args[4] = make_error(env, e->status, e->text);
            break;
        }
        case EV_CONN: {
            napi_value info, v;
            napi_create_object(env, &info);
            napi_create_int32(env, e->conn_kind, &v);
            napi_set_named_property(env, info, "kind", v);
            napi_create_string_utf8(env, e->text ? e->text : "", NAPI_AUTO_LENGTH, &v);
            napi_set_named_property(env, info, "text", v);
            args[3] = info;
            if (e->status != NATSIO_OK) args[4] = make_error(env, e->status, e->text);
            break;
        }
        }
        napi_value result;
        if (napi_call_function(env, undef, dispatch, nargs, args, &result) == napi_pending_exception) {
            /* A user callback threw: report it as Node does for any
             * uncaught exception from an event callback. */
            napi_value exc;
            napi_get_and_clear_last_exception(env, &exc);
            napi_fatal_exception(env, exc);
        }
        napi_close_handle_scope(env, scope);
        event_free(e);
        e = n;
    }
}

/* ------------------------------------------------------------------ */
/* clients                                                              */

typedef struct client_wrap {
    natsio_client *client;
    hub *hub;
    struct client_wrap *prev, *next; /* in hub->clients */
} client_wrap;

static void client_unlink(client_wrap *w) {
    hub *h = w->hub;
    pthread_mutex_lock(&h->mu);
    if (w->prev) w->prev->next = w->next;
    else if (h->clients == w) h->clients = w->next;
    if (w->next) w->next->prev = w->prev;
    w->prev = w->next = NULL;
    pthread_mutex_unlock(&h->mu);
}

static void client_finalize(napi_env env, void *data, void *hint) {
    (void)env;
    (void)hint;
    client_wrap *w = data;
    client_unlink(w);
    natsio_client_free(w->client); /* closes if still open */
    hub_release(w->hub);
    free(w);
}

static client_wrap *get_client(napi_env env, napi_value v) {
    void *p = NULL;
    if (napi_get_value_external(env, v, &p) != napi_ok || !p) {
        napi_throw_type_error(env, NULL, "not a natsio connection handle");
        return NULL;
    }
    return p;
}

typedef struct error_cb_data {
    hub *hub;
    uint32_t conn_id;
} error_cb_data;

static void on_client_error(void *user_data, natsio_status status, const char *text, uint64_t sid,
                            const char *subject) {
    error_cb_data *d = user_data;
    event *e = calloc(1, sizeof *e);
    if (!e) return;
    e->kind = EV_ERROR;
    e->target = d->conn_id;
    e->status = status;
    e->text = dup_str(text);
    e->sid = sid;
    e->subject = dup_str(subject);
    hub_post(d->hub, e);
}

/* Lifecycle events take the same path as errors: posted to the hub, then
 * dispatched on the JS thread in order. user_data is an error_cb_data. */
static void on_client_event(void *user_data, natsio_event_kind kind, natsio_status status, const char *text) {
    error_cb_data *d = user_data;
    event *e = calloc(1, sizeof *e);
    if (!e) return;
    e->kind = EV_CONN;
    e->target = d->conn_id;
    e->status = status;
    e->conn_kind = (int32_t)kind;
    e->text = dup_str(text);
    hub_post(d->hub, e);
}

static void release_error_cb(void *user_data) {
    error_cb_data *d = user_data;
    hub_release(d->hub);
    free(d);
}

typedef struct connect_work {
    napi_async_work work;
    napi_deferred deferred;
    natsio_options *opts;
    natsio_client *client;
    int32_t status;
    char *detail;
    hub *hub;
} connect_work;

static void connect_execute(napi_env env, void *data) {
    (void)env;
    connect_work *w = data;
    w->status = natsio_client_connect(w->opts, &w->client);
    if (w->status != NATSIO_OK) w->detail = dup_str(natsio_last_error());
}

static void connect_complete(napi_env env, napi_status s, void *data) {
    (void)s;
    connect_work *w = data;
    natsio_options_free(w->opts);
    if (w->status == NATSIO_OK) {
        client_wrap *cw = calloc(1, sizeof *cw);
        napi_value ext;
        cw->client = w->client;
        cw->hub = w->hub;
        hub_retain(w->hub);
        pthread_mutex_lock(&w->hub->mu);
        cw->next = w->hub->clients;
        if (cw->next) cw->next->prev = cw;
        w->hub->clients = cw;
        pthread_mutex_unlock(&w->hub->mu);
        napi_create_external(env, cw, client_finalize, NULL, &ext);
        napi_resolve_deferred(env, w->deferred, ext);
    } else {
        napi_reject_deferred(env, w->deferred, make_error(env, w->status, w->detail));
    }
    napi_delete_async_work(env, w->work);
    free(w->detail);
    free(w);
}

/* Applies one string option; returns false with a pending exception. */
static bool apply_str(napi_env env, natsio_options *o, napi_value js, const char *name,
                      natsio_status (*set)(natsio_options *, const char *)) {
    char *s;
    if (!get_opt_string(env, prop(env, js, name), &s)) return false;
    if (!s) return true;
    int32_t st = set(o, s);
    free(s);
    return !throw_if_failed(env, st);
}

/* A boolean option: true when present (value in *out); false when absent. */
static bool get_opt_bool(napi_env env, napi_value v, bool *out) {
    napi_valuetype t;
    if (!v || napi_typeof(env, v, &t) != napi_ok || t != napi_boolean) return false;
    napi_get_value_bool(env, v, out);
    return true;
}

/* Reconnect, auth and TLS options, already normalized by index.js:
 * allowReconnect, maxReconnectAttempts, reconnectWaitMs/-MaxMs,
 * reconnectJitterMs/-TlsMs, reconnectBufSize, noRandomize,
 * ignoreDiscoveredServers, retryOnFailedConnect, ignoreAuthErrorAbort,
 * nkeySeed, nkeyFile, credsFile, tls (bool), tlsCaFile, tlsCertFile,
 * tlsKeyFile, tlsHostname, tlsHandshakeFirst. Returns false with a pending
 * exception. */
static bool apply_survival_options(napi_env env, natsio_options *o, napi_value js) {
    bool b;
    int64_t v, w;
    if (get_opt_bool(env, prop(env, js, "allowReconnect"), &b) &&
        throw_if_failed(env, natsio_options_set_allow_reconnect(o, b)))
        return false;
    if ((v = get_i64(env, prop(env, js, "maxReconnectAttempts"), INT64_MIN)) != INT64_MIN &&
        throw_if_failed(env, natsio_options_set_max_reconnect_attempts(o, v)))
        return false;
    v = get_i64(env, prop(env, js, "reconnectWaitMs"), INT64_MIN);
    w = get_i64(env, prop(env, js, "reconnectWaitMaxMs"), INT64_MIN);
    if (v != INT64_MIN && w != INT64_MIN && throw_if_failed(env, natsio_options_set_reconnect_wait(o, v, w)))
        return false;
    v = get_i64(env, prop(env, js, "reconnectJitterMs"), INT64_MIN);
    w = get_i64(env, prop(env, js, "reconnectJitterTlsMs"), INT64_MIN);
    if (v != INT64_MIN && w != INT64_MIN && throw_if_failed(env, natsio_options_set_reconnect_jitter(o, v, w)))
        return false;
    if ((v = get_i64(env, prop(env, js, "reconnectBufSize"), INT64_MIN)) != INT64_MIN &&
        throw_if_failed(env, natsio_options_set_reconnect_buf_size(o, v)))
        return false;
    if (get_opt_bool(env, prop(env, js, "noRandomize"), &b) &&
        throw_if_failed(env, natsio_options_set_no_randomize(o, b)))
        return false;
    if (get_opt_bool(env, prop(env, js, "ignoreDiscoveredServers"), &b) &&
        throw_if_failed(env, natsio_options_set_ignore_discovered_servers(o, b)))
        return false;
    if (get_opt_bool(env, prop(env, js, "retryOnFailedConnect"), &b) &&
        throw_if_failed(env, natsio_options_set_retry_on_failed_connect(o, b)))
        return false;
    if (get_opt_bool(env, prop(env, js, "ignoreAuthErrorAbort"), &b) &&
        throw_if_failed(env, natsio_options_set_ignore_auth_error_abort(o, b)))
        return false;
    if (!apply_str(env, o, js, "nkeySeed", natsio_options_set_nkey_seed)) return false;
    if (!apply_str(env, o, js, "nkeyFile", natsio_options_set_nkey_file)) return false;
    if (!apply_str(env, o, js, "credsFile", natsio_options_set_credentials_file)) return false;
    if (get_opt_bool(env, prop(env, js, "tls"), &b) && b) {
        char *ca = NULL, *cert = NULL, *key = NULL;
        bool ok = get_opt_string(env, prop(env, js, "tlsCaFile"), &ca) &&
                  get_opt_string(env, prop(env, js, "tlsCertFile"), &cert) &&
                  get_opt_string(env, prop(env, js, "tlsKeyFile"), &key);
        int32_t st = ok ? natsio_options_set_tls(o, ca, cert, key) : NATSIO_OK;
        free(ca);
        free(cert);
        free(key);
        if (!ok || throw_if_failed(env, st)) return false;
        if (!apply_str(env, o, js, "tlsHostname", natsio_options_set_tls_hostname)) return false;
        if (get_opt_bool(env, prop(env, js, "tlsHandshakeFirst"), &b) &&
            throw_if_failed(env, natsio_options_set_tls_handshake_first(o, b)))
            return false;
    }
    return true;
}

/* connect(optionsObject, connId) -> Promise<external> */
static napi_value js_connect(napi_env env, napi_callback_info info) {
    size_t argc = 2;
    napi_value argv[2];
    CHECK_NAPI(env, napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
    hub *h = get_hub(env);
    napi_value js = argv[0];
    uint32_t conn_id = 0;
    napi_get_value_uint32(env, argv[1], &conn_id);

    natsio_options *o;
    if (throw_if_failed(env, natsio_options_new(&o))) return NULL;

    /* servers: array of strings */
    napi_value servers = prop(env, js, "servers");
    bool is_arr = false;
    napi_is_array(env, servers, &is_arr);
    if (is_arr) {
        uint32_t n;
        napi_get_array_length(env, servers, &n);
        char **urls = calloc(n ? n : 1, sizeof(char *));
        bool ok = true;
        for (uint32_t i = 0; i < n && ok; i++) {
            napi_value v;
            napi_get_element(env, servers, i, &v);
            ok = get_opt_string(env, v, &urls[i]) && urls[i];
        }
        int32_t st = ok ? natsio_options_set_servers(o, (const char *const *)urls, n) : NATSIO_OK;
        for (uint32_t i = 0; i < n; i++) free(urls[i]);
        free(urls);
        bool pending = false;
        napi_is_exception_pending(env, &pending);
        if (!ok && !pending) napi_throw_type_error(env, NULL, "servers must be strings");
        if (!ok || throw_if_failed(env, st)) goto fail;
    }
    if (!apply_str(env, o, js, "name", natsio_options_set_name)) goto fail;
    if (!apply_str(env, o, js, "inboxPrefix", natsio_options_set_inbox_prefix)) goto fail;
    if (!apply_str(env, o, js, "token", natsio_options_set_token)) goto fail;
    {
        char *user = NULL, *pass = NULL;
        if (!get_opt_string(env, prop(env, js, "user"), &user)) goto fail;
        if (!get_opt_string(env, prop(env, js, "pass"), &pass)) { free(user); goto fail; }
        int32_t st = user ? natsio_options_set_user_password(o, user, pass) : NATSIO_OK;
        free(user);
        free(pass);
        if (throw_if_failed(env, st)) goto fail;
    }
    int64_t v;
    if ((v = get_i64(env, prop(env, js, "timeout"), INT64_MIN)) != INT64_MIN &&
        throw_if_failed(env, natsio_options_set_connect_timeout_ms(o, v)))
        goto fail;
    {
        napi_value ne = prop(env, js, "noEcho");
        bool b = false;
        if (napi_get_value_bool(env, ne, &b) == napi_ok && throw_if_failed(env, natsio_options_set_echo(o, !b)))
            goto fail;
    }
    if ((v = get_i64(env, prop(env, js, "drainTimeout"), INT64_MIN)) != INT64_MIN &&
        throw_if_failed(env, natsio_options_set_drain_timeout_ms(o, v)))
        goto fail;
    if ((v = get_i64(env, prop(env, js, "flushTimeout"), INT64_MIN)) != INT64_MIN &&
        throw_if_failed(env, natsio_options_set_flush_timeout_ms(o, v)))
        goto fail;
    if ((v = get_i64(env, prop(env, js, "requestTimeout"), INT64_MIN)) != INT64_MIN &&
        throw_if_failed(env, natsio_options_set_request_timeout_ms(o, v)))
        goto fail;
    if ((v = get_i64(env, prop(env, js, "maxPendingSize"), INT64_MIN)) != INT64_MIN &&
        throw_if_failed(env, natsio_options_set_max_pending_size(o, v)))
        goto fail;
    if ((v = get_i64(env, prop(env, js, "maxControlLine"), INT64_MIN)) != INT64_MIN &&
        throw_if_failed(env, natsio_options_set_max_control_line(o, v)))
        goto fail;
    {
        int64_t iv = get_i64(env, prop(env, js, "pingInterval"), INT64_MIN);
        int64_t mo = get_i64(env, prop(env, js, "maxPingsOut"), INT64_MIN);
        if (iv != INT64_MIN || mo != INT64_MIN) {
            if (throw_if_failed(env, natsio_options_set_ping(o, iv == INT64_MIN ? 120000 : iv,
                                                             mo == INT64_MIN ? 2 : (int32_t)mo)))
                goto fail;
        }
        int64_t pm = get_i64(env, prop(env, js, "pendingMsgsLimit"), INT64_MIN);
        int64_t pb = get_i64(env, prop(env, js, "pendingBytesLimit"), INT64_MIN);
        if (pm != INT64_MIN || pb != INT64_MIN) {
            if (throw_if_failed(env, natsio_options_set_pending_limits(o, pm == INT64_MIN ? 65536 : pm,
                                                                       pb == INT64_MIN ? 64 * 1024 * 1024 : pb)))
                goto fail;
        }
    }
    {
        error_cb_data *d = calloc(1, sizeof *d);
        d->hub = h;
        d->conn_id = conn_id;
        hub_retain(h);
        int32_t st = natsio_options_set_error_callback(o, on_client_error, d, release_error_cb);
        if (st != NATSIO_OK) {
            release_error_cb(d);
            throw_if_failed(env, st);
            goto fail;
        }
    }
    if (!apply_survival_options(env, o, js)) goto fail;
    {
        error_cb_data *d = calloc(1, sizeof *d);
        d->hub = h;
        d->conn_id = conn_id;
        hub_retain(h);
        int32_t st = natsio_options_set_event_callback(o, on_client_event, d, release_error_cb);
        if (st != NATSIO_OK) {
            release_error_cb(d);
            throw_if_failed(env, st);
            goto fail;
        }
    }

    connect_work *w = calloc(1, sizeof *w);
    w->opts = o;
    w->hub = h;
    napi_value promise, name;
    napi_create_promise(env, &w->deferred, &promise);
    napi_create_string_utf8(env, "natsio.connect", NAPI_AUTO_LENGTH, &name);
    napi_create_async_work(env, NULL, name, connect_execute, connect_complete, w, &w->work);
    napi_queue_async_work(env, w->work);
    return promise;
fail:
    natsio_options_free(o);
    return NULL;
}

/* close(client) -> Promise<void>, off the JS thread (best-effort flush). */
typedef struct close_work {
    napi_async_work work;
    napi_deferred deferred;
    natsio_client *client;
    int32_t status;
    napi_ref keep; /* keeps the external (and so the client) alive */
} close_work;

static void close_execute(napi_env env, void *data) {
    (void)env;
    close_work *w = data;
    w->status = natsio_client_close(w->client);
}

static void close_complete(napi_env env, napi_status s, void *data) {
    (void)s;
    close_work *w = data;
    napi_value undef;
    napi_get_undefined(env, &undef);
    if (w->status == NATSIO_OK || w->status == NATSIO_ERR_CONNECTION_CLOSED)
        napi_resolve_deferred(env, w->deferred, undef);
    else
        napi_reject_deferred(env, w->deferred, make_error(env, w->status, natsio_status_str(w->status)));
    napi_delete_reference(env, w->keep);
    napi_delete_async_work(env, w->work);
    free(w);
}

static napi_value js_close(napi_env env, napi_callback_info info) {
    size_t argc = 1;
    napi_value argv[1];
    CHECK_NAPI(env, napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
    client_wrap *cw = get_client(env, argv[0]);
    if (!cw) return NULL;
    close_work *w = calloc(1, sizeof *w);
    w->client = cw->client;
    napi_create_reference(env, argv[0], 1, &w->keep);
    napi_value promise, name;
    napi_create_promise(env, &w->deferred, &promise);
    napi_create_string_utf8(env, "natsio.close", NAPI_AUTO_LENGTH, &name);
    napi_create_async_work(env, NULL, name, close_execute, close_complete, w, &w->work);
    napi_queue_async_work(env, w->work);
    return promise;
}

/* publish(client, subject, data, reply|null, headers|null) */
static napi_value js_publish(napi_env env, napi_callback_info info) {
    size_t argc = 5;
    napi_value argv[5];
    CHECK_NAPI(env, napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
    client_wrap *cw = get_client(env, argv[0]);
    if (!cw) return NULL;
    char *subject = NULL, *reply = NULL;
    const void *data;
    size_t len;
    natsio_headers *hd = NULL;
    if (!get_opt_string(env, argv[1], &subject) || !get_bytes(env, argv[2], &data, &len) ||
        !get_opt_string(env, argv[3], &reply) || !get_headers(env, argv[4], &hd))
        goto out;
    if (!subject) {
        throw_status(env, NATSIO_ERR_NULL_ARGUMENT, "subject is required");
        goto out;
    }
    int32_t st = (reply || hd) ? natsio_client_publish_with(cw->client, subject, reply, hd, data, len)
                               : natsio_client_publish(cw->client, subject, data, len);
    throw_if_failed(env, st);
out:
    free(subject);
    free(reply);
    natsio_headers_free(hd);
    return NULL;
}

/* ------------------------------------------------------------------ */
/* completion tokens                                                    */

typedef struct token_data {
    hub *hub;
    uint32_t op_id;
    int has_msg;
} token_data;

static void on_token_complete(void *user_data, natsio_token *token) {
    token_data *d = user_data;
    event *e = calloc(1, sizeof *e);
    if (!e) return;
    e->kind = EV_TOKEN;
    e->target = d->op_id;
    e->token = token; /* ownership moves to the event */
    e->token_has_msg = d->has_msg;
    hub_post(d->hub, e);
}

static void release_token_data(void *user_data) {
    token_data *d = user_data;
    hub_release(d->hub);
    free(d);
}

/* Hands a fresh token to the hub: completion posts an EV_TOKEN event that
 * owns the token. */
static bool track_token(napi_env env, natsio_token *tok, uint32_t op_id, int has_msg) {
    hub *h = get_hub(env);
    token_data *d = calloc(1, sizeof *d);
    d->hub = h;
    d->op_id = op_id;
    d->has_msg = has_msg;
    hub_retain(h);
    int32_t st = natsio_token_on_complete(tok, on_token_complete, d, release_token_data);
    if (st != NATSIO_OK) {
        natsio_token_free(tok); /* also releases d if registered; not registered here */
        release_token_data(d);
        throw_if_failed(env, st);
        return false;
    }
    return true;
}

/* request(client, subject, data, headers|null, timeoutMs, opId) */
static napi_value js_request(napi_env env, napi_callback_info info) {
    size_t argc = 6;
    napi_value argv[6];
    CHECK_NAPI(env, napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
    client_wrap *cw = get_client(env, argv[0]);
    if (!cw) return NULL;
    char *subject = NULL;
    const void *data;
    size_t len;
    natsio_headers *hd = NULL;
    uint32_t op_id = 0;
    napi_get_value_uint32(env, argv[5], &op_id);
    if (!get_opt_string(env, argv[1], &subject) || !get_bytes(env, argv[2], &data, &len) ||
        !get_headers(env, argv[3], &hd))
        goto out;
    if (!subject) {
        throw_status(env, NATSIO_ERR_NULL_ARGUMENT, "subject is required");
        goto out;
    }
    natsio_token *tok;
    int32_t st = natsio_client_request_async(cw->client, subject, hd, data, len, get_i64(env, argv[4], 0), &tok);
    if (!throw_if_failed(env, st)) track_token(env, tok, op_id, 1);
out:
    free(subject);
    natsio_headers_free(hd);
    return NULL;
}

/* flush(client, opId) */
static napi_value js_flush(napi_env env, napi_callback_info info) {
    size_t argc = 2;
    napi_value argv[2];
    CHECK_NAPI(env, napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
    client_wrap *cw = get_client(env, argv[0]);
    if (!cw) return NULL;
    uint32_t op_id = 0;
    napi_get_value_uint32(env, argv[1], &op_id);
    natsio_token *tok;
    if (!throw_if_failed(env, natsio_client_flush_async(cw->client, &tok))) track_token(env, tok, op_id, 0);
    return NULL;
}

/* drain(client, timeoutMs, opId) */
static napi_value js_drain(napi_env env, napi_callback_info info) {
    size_t argc = 3;
    napi_value argv[3];
    CHECK_NAPI(env, napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
    client_wrap *cw = get_client(env, argv[0]);
    if (!cw) return NULL;
    uint32_t op_id = 0;
    napi_get_value_uint32(env, argv[2], &op_id);
    natsio_token *tok;
    if (!throw_if_failed(env, natsio_client_drain_async(cw->client, get_i64(env, argv[1], -1), &tok)))
        track_token(env, tok, op_id, 0);
    return NULL;
}

static napi_value js_status(napi_env env, napi_callback_info info) {
    size_t argc = 1;
    napi_value argv[1], r;
    CHECK_NAPI(env, napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
    client_wrap *cw = get_client(env, argv[0]);
    if (!cw) return NULL;
    napi_create_int32(env, natsio_client_status(cw->client), &r);
    return r;
}

static napi_value js_max_payload(napi_env env, napi_callback_info info) {
    size_t argc = 1;
    napi_value argv[1], r;
    CHECK_NAPI(env, napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
    client_wrap *cw = get_client(env, argv[0]);
    if (!cw) return NULL;
    napi_create_int64(env, natsio_client_max_payload(cw->client), &r);
    return r;
}

static napi_value string_result(napi_env env, int32_t st, char *s) {
    if (throw_if_failed(env, st)) return NULL;
    napi_value r;
    napi_create_string_utf8(env, s, NAPI_AUTO_LENGTH, &r);
    natsio_string_free(s);
    return r;
}

/* The client getters that return a library-owned string: (client) -> string. */
static napi_value client_string(napi_env env, napi_callback_info info,
                                natsio_status (*get)(const natsio_client *, char **)) {
    size_t argc = 1;
    napi_value argv[1];
    CHECK_NAPI(env, napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
    client_wrap *cw = get_client(env, argv[0]);
    if (!cw) return NULL;
    char *s = NULL;
    int32_t st = get(cw->client, &s);
    return string_result(env, st, s);
}

static napi_value js_server_info(napi_env env, napi_callback_info info) { return client_string(env, info, natsio_client_server_info); }

static napi_value js_connected_url(napi_env env, napi_callback_info info) { return client_string(env, info, natsio_client_connected_url); }

static napi_value js_new_inbox(napi_env env, napi_callback_info info) { return client_string(env, info, natsio_client_new_inbox); }

static napi_value js_servers(napi_env env, napi_callback_info info) { return client_string(env, info, natsio_client_servers); }

static napi_value js_force_reconnect(napi_env env, napi_callback_info info) {
    size_t argc = 1;
    napi_value argv[1];
    CHECK_NAPI(env, napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
    client_wrap *cw = get_client(env, argv[0]);
    if (!cw) return NULL;
    throw_if_failed(env, natsio_client_force_reconnect(cw->client));
    return NULL;
}

/* rtt(client) -> Promise<number> (microseconds); natsio_client_rtt blocks,
 * so it runs on a worker thread. */
typedef struct rtt_work {
    napi_async_work work;
    napi_deferred deferred;
    natsio_client *client;
    int32_t status;
    int64_t rtt_us;
    char *detail;
    napi_ref keep; /* keeps the external (and so the client) alive */
} rtt_work;

static void rtt_execute(napi_env env, void *data) {
    (void)env;
    rtt_work *w = data;
    w->status = natsio_client_rtt(w->client, -1, &w->rtt_us);
    if (w->status != NATSIO_OK) w->detail = dup_str(natsio_last_error());
}

static void rtt_complete(napi_env env, napi_status s, void *data) {
    (void)s;
    rtt_work *w = data;
    if (w->status == NATSIO_OK) {
        napi_value r;
        napi_create_double(env, (double)w->rtt_us, &r);
        napi_resolve_deferred(env, w->deferred, r);
    } else {
        napi_reject_deferred(env, w->deferred, make_error(env, w->status, w->detail));
    }
    napi_delete_reference(env, w->keep);
    napi_delete_async_work(env, w->work);
    free(w->detail);
    free(w);
}

static napi_value js_rtt(napi_env env, napi_callback_info info) {
    size_t argc = 1;
    napi_value argv[1];
    CHECK_NAPI(env, napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
    client_wrap *cw = get_client(env, argv[0]);
    if (!cw) return NULL;
    rtt_work *w = calloc(1, sizeof *w);
    w->client = cw->client;
    napi_create_reference(env, argv[0], 1, &w->keep);
    napi_value promise, name;
    napi_create_promise(env, &w->deferred, &promise);
    napi_create_string_utf8(env, "natsio.rtt", NAPI_AUTO_LENGTH, &name);
    napi_create_async_work(env, NULL, name, rtt_execute, rtt_complete, w, &w->work);
    napi_queue_async_work(env, w->work);
    return promise;
}

static void set_u64(napi_env env, napi_value obj, const char *name, uint64_t v) {
    napi_value x;
    napi_create_double(env, (double)v, &x);
    napi_set_named_property(env, obj, name, x);
}

static napi_value js_stats(napi_env env, napi_callback_info info) {
    size_t argc = 1;
    napi_value argv[1], r;
    CHECK_NAPI(env, napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
    client_wrap *cw = get_client(env, argv[0]);
    if (!cw) return NULL;
    natsio_client_stats s;
    if (throw_if_failed(env, natsio_client_get_stats(cw->client, &s))) return NULL;
    napi_create_object(env, &r);
    set_u64(env, r, "inMsgs", s.in_msgs);
    set_u64(env, r, "outMsgs", s.out_msgs);
    set_u64(env, r, "inBytes", s.in_bytes);
    set_u64(env, r, "outBytes", s.out_bytes);
    set_u64(env, r, "reconnects", s.reconnects);
    set_u64(env, r, "errors", s.errors);
    return r;
}

/* ------------------------------------------------------------------ */
/* pumps: subscriptions and requestMany                                 */

typedef struct pump {
    hub *hub;
    uint32_t id;
    natsio_sub *sub;         /* subscription pump, or */
    natsio_replies *replies; /* requestMany pump */
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int64_t credits;
    bool stopping;
    /* Pull mode (callback subscriptions): after each batch the pump parks
     * until JS grants credit again, and meanwhile JS takes queued messages
     * itself (pumpTake), on the JS thread, so delivery does not wait for a
     * thread hand-off per batch. Only one of the two reads at any time. */
    bool pull_mode;
    int32_t taken_end_status; /* an end pumpTake met, for the pump to post */
    char *taken_end_text;
    int refs; /* JS external + pump thread */
    struct pump *prev, *next; /* in hub->pumps while the thread runs */
} pump;

static void pump_release(pump *p) {
    pthread_mutex_lock(&p->mu);
    int left = --p->refs;
    pthread_mutex_unlock(&p->mu);
    if (left) return;
    natsio_sub_free(p->sub);
    natsio_replies_free(p->replies);
    free(p->taken_end_text);
    hub_release(p->hub);
    pthread_cond_destroy(&p->cv);
    pthread_mutex_destroy(&p->mu);
    free(p);
}

static void pump_stop(pump *p) {
    pthread_mutex_lock(&p->mu);
    p->stopping = true;
    pthread_cond_signal(&p->cv);
    pthread_mutex_unlock(&p->mu);
    /* Wake a pump blocked in natsio_replies_next (a `break` out of
     * requestMany) instead of leaving it until the request's deadline. */
    if (p->replies) natsio_replies_close(p->replies);
}

/* A batch ends at this many messages or once its payloads reach this many
 * bytes: one JS call per batch amortizes the wake-up and the node-api work,
 * and the byte cap bounds what one retained msg.data keeps alive (the
 * payloads of a batch share one ArrayBuffer). */
enum { PUMP_BATCH_MAX_MSGS = 256 };
#define PUMP_BATCH_MAX_BYTES ((size_t)256 * 1024)

static void *pump_main(void *arg) {
    pump *p = arg;
    int32_t end_status = NATSIO_OK;
    char *end_text = NULL;
    bool ended = false;
    while (!ended) {
        pthread_mutex_lock(&p->mu);
        while (p->credits <= 0 && !p->stopping) pthread_cond_wait(&p->cv, &p->mu);
        bool stop = p->stopping;
        int64_t allowed = p->credits;
        if (p->taken_end_status != NATSIO_OK) {
            end_status = p->taken_end_status;
            end_text = p->taken_end_text;
            p->taken_end_text = NULL;
            stop = true;
        }
        pthread_mutex_unlock(&p->mu);
        if (stop) break;
        if (allowed > PUMP_BATCH_MAX_MSGS) allowed = PUMP_BATCH_MAX_MSGS;
        /* Waits for the first message, then takes what is already queued
         * (never waiting again) up to the credit: the batch grows by itself
         * when JS falls behind and stays one message when it keeps up. */
        natsio_msg *m = NULL;
        int32_t st = p->sub ? natsio_sub_next_msg(p->sub, -1, &m) : natsio_replies_next(p->replies, &m);
        if (st != NATSIO_OK) {
            end_status = st;
            if (st != NATSIO_DONE && st != NATSIO_ERR_SUBSCRIPTION_CLOSED) end_text = dup_str(natsio_last_error());
            break;
        }
        natsio_msg **msgs = malloc((size_t)allowed * sizeof *msgs);
        event *e = calloc(1, sizeof *e);
        if (!msgs || !e) {
            free(msgs);
            free(e);
            natsio_msg_free(m);
            continue;
        }
        uint32_t n = 0;
        msgs[n++] = m;
        size_t bytes = natsio_msg_data_len(m);
        while (p->sub && n < allowed && bytes < PUMP_BATCH_MAX_BYTES) {
            st = natsio_sub_next_msg(p->sub, 0, &m);
            if (st == NATSIO_ERR_TIMEOUT) break; /* nothing queued right now */
            if (st != NATSIO_OK) {
                /* The end comes after the messages already taken. */
                end_status = st;
                if (st != NATSIO_ERR_SUBSCRIPTION_CLOSED) end_text = dup_str(natsio_last_error());
                ended = true;
                break;
            }
            msgs[n++] = m;
            bytes += natsio_msg_data_len(m);
        }
        pthread_mutex_lock(&p->mu);
        p->credits = p->pull_mode ? 0 : p->credits - n;
        pthread_mutex_unlock(&p->mu);
        /* Posted even when a stop was requested meanwhile: JS decides
         * whether it still wants them (a drain does, an unsubscribe not). */
        e->kind = EV_MSG;
        e->target = p->id;
        e->msgs = msgs;
        e->nmsgs = n;
        hub_post(p->hub, e);
    }
    /* Always the pump's last event, after every message it posted: JS waits
     * for it to know that delivery is complete (stopped: NATSIO_DONE). */
    if (end_status == NATSIO_OK) end_status = NATSIO_DONE;
    {
        event *e = calloc(1, sizeof *e);
        if (e) {
            e->kind = EV_END;
            e->target = p->id;
            e->status = end_status;
            e->text = end_text;
            end_text = NULL;
            hub_post(p->hub, e);
        }
    }
    free(end_text);
    hub *h = p->hub;
    pthread_mutex_lock(&h->mu);
    if (p->prev) p->prev->next = p->next;
    else if (h->pumps == p) h->pumps = p->next;
    if (p->next) p->next->prev = p->prev;
    p->prev = p->next = NULL;
    pthread_mutex_unlock(&h->mu);
    pump_release(p);
    return NULL;
}

static void pump_finalize(napi_env env, void *data, void *hint) {
    (void)env;
    (void)hint;
    pump *p = data;
    /* Backstop when JS dropped the handle without closing it. */
    if (p->sub) natsio_sub_unsubscribe(p->sub);
    pump_stop(p);
    pump_release(p);
}

static napi_value pump_start(napi_env env, pump *p) {
    hub *h = get_hub(env);
    p->hub = h;
    hub_retain(h);
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->cv, NULL);
    p->refs = 2;
    pthread_mutex_lock(&h->mu);
    p->next = h->pumps;
    if (p->next) p->next->prev = p;
    h->pumps = p;
    pthread_mutex_unlock(&h->mu);
    pthread_t t;
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    pthread_attr_setstacksize(&attr, 256 * 1024);
    int rc = pthread_create(&t, &attr, pump_main, p);
    pthread_attr_destroy(&attr);
    if (rc != 0) {
        pthread_mutex_lock(&h->mu);
        if (p->prev) p->prev->next = p->next;
        else if (h->pumps == p) h->pumps = p->next;
        if (p->next) p->next->prev = p->prev;
        pthread_mutex_unlock(&h->mu);
        p->refs = 1;
        pump_release(p);
        throw_status(env, NATSIO_ERR_INTERNAL, "could not start a delivery thread");
        return NULL;
    }
    napi_value ext;
    napi_create_external(env, p, pump_finalize, NULL, &ext);
    return ext;
}

static pump *get_pump(napi_env env, napi_value v) {
    void *p = NULL;
    if (napi_get_value_external(env, v, &p) != napi_ok || !p) {
        napi_throw_type_error(env, NULL, "not a natsio subscription handle");
        return NULL;
    }
    return p;
}

/* subscribe(client, subject, queue|null, pendingMsgs, pendingBytes, policy, subId, pullMode) */
static napi_value js_subscribe(napi_env env, napi_callback_info info) {
    size_t argc = 8;
    napi_value argv[8];
    CHECK_NAPI(env, napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
    client_wrap *cw = get_client(env, argv[0]);
    if (!cw) return NULL;
    char *subject = NULL, *queue = NULL;
    napi_value result = NULL;
    if (!get_opt_string(env, argv[1], &subject) || !get_opt_string(env, argv[2], &queue)) goto out;
    if (!subject) {
        throw_status(env, NATSIO_ERR_NULL_ARGUMENT, "subject is required");
        goto out;
    }
    natsio_sub_options so;
    natsio_sub_options_init(&so);
    so.pending_msgs_limit = get_i64(env, argv[3], so.pending_msgs_limit);
    so.pending_bytes_limit = get_i64(env, argv[4], so.pending_bytes_limit);
    so.policy = (int32_t)get_i64(env, argv[5], so.policy);
    uint32_t id = 0;
    napi_get_value_uint32(env, argv[6], &id);
    natsio_sub *sub;
    if (throw_if_failed(env, natsio_client_subscribe(cw->client, subject, queue, &so, &sub))) goto out;
    pump *p = calloc(1, sizeof *p);
    p->sub = sub;
    p->id = id;
    napi_get_value_bool(env, argv[7], &p->pull_mode);
    result = pump_start(env, p);
out:
    free(subject);
    free(queue);
    return result;
}

/* requestMany(client, subject, data, headers|null, maxMsgs, stallMs, timeoutMs, id) */
static napi_value js_request_many(napi_env env, napi_callback_info info) {
    size_t argc = 8;
    napi_value argv[8];
    CHECK_NAPI(env, napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
    client_wrap *cw = get_client(env, argv[0]);
    if (!cw) return NULL;
    char *subject = NULL;
    const void *data;
    size_t len;
    natsio_headers *hd = NULL;
    napi_value result = NULL;
    if (!get_opt_string(env, argv[1], &subject) || !get_bytes(env, argv[2], &data, &len) ||
        !get_headers(env, argv[3], &hd))
        goto out;
    if (!subject) {
        throw_status(env, NATSIO_ERR_NULL_ARGUMENT, "subject is required");
        goto out;
    }
    natsio_request_many_options ro = {
        .max_msgs = get_i64(env, argv[4], 0),
        .stall_ms = get_i64(env, argv[5], 0),
        .timeout_ms = get_i64(env, argv[6], 0),
    };
    uint32_t id = 0;
    napi_get_value_uint32(env, argv[7], &id);
    natsio_replies *rep;
    if (throw_if_failed(env, natsio_client_request_many(cw->client, subject, hd, data, len, &ro, &rep))) goto out;
    pump *p = calloc(1, sizeof *p);
    p->replies = rep;
    p->id = id;
    result = pump_start(env, p);
out:
    free(subject);
    natsio_headers_free(hd);
    return result;
}

/* pumpCredit(pump, n): lets the pump hand over n more messages. */
static napi_value js_pump_credit(napi_env env, napi_callback_info info) {
    size_t argc = 2;
    napi_value argv[2];
    CHECK_NAPI(env, napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
    pump *p = get_pump(env, argv[0]);
    if (!p) return NULL;
    int64_t n = get_i64(env, argv[1], 0);
    pthread_mutex_lock(&p->mu);
    p->credits += n;
    pthread_cond_signal(&p->cv);
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

/* pumpTake(pump, max): in pull mode, while the pump is parked (JS holds
 * its batch), takes up to `max` messages already queued in the core without
 * waiting. Returns [count, meta, data, subjects, extras], or undefined when
 * nothing is queued. An end met here (closed, slow consumer error) is left
 * for the pump to post as its EV_END once JS grants credit again. */
static napi_value js_pump_take(napi_env env, napi_callback_info info) {
    size_t argc = 2;
    napi_value argv[2];
    CHECK_NAPI(env, napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
    pump *p = get_pump(env, argv[0]);
    if (!p) return NULL;
    int64_t max = get_i64(env, argv[1], 0);
    if (max > PUMP_BATCH_MAX_MSGS) max = PUMP_BATCH_MAX_MSGS;
    pthread_mutex_lock(&p->mu);
    bool usable = p->pull_mode && p->sub && !p->stopping && p->credits <= 0 && p->taken_end_status == NATSIO_OK;
    pthread_mutex_unlock(&p->mu);
    if (!usable) return NULL;
    natsio_msg *msgs[PUMP_BATCH_MAX_MSGS];
    uint32_t n = 0;
    size_t bytes = 0;
    while (n < max && bytes < PUMP_BATCH_MAX_BYTES) {
        natsio_msg *m = NULL;
        int32_t st = natsio_sub_next_msg(p->sub, 0, &m);
        if (st == NATSIO_ERR_TIMEOUT) break;
        if (st != NATSIO_OK) {
            pthread_mutex_lock(&p->mu);
            p->taken_end_status = st;
            if (st != NATSIO_ERR_SUBSCRIPTION_CLOSED) p->taken_end_text = dup_str(natsio_last_error());
            pthread_mutex_unlock(&p->mu);
            break;
        }
        msgs[n++] = m;
        bytes += natsio_msg_data_len(m);
    }
    if (n == 0) return NULL;
    napi_value result, batch[4], count;
    batch_to_js(env, msgs, n, batch);
    for (uint32_t i = 0; i < n; i++) natsio_msg_free(msgs[i]);
    napi_create_array_with_length(env, 5, &result);
    napi_create_uint32(env, n, &count);
    napi_set_element(env, result, 0, count);
    for (uint32_t i = 0; i < 4; i++) napi_set_element(env, result, i + 1, batch[i]);
    return result;
}

/* pumpStop(pump): the JS side is done with it (unsubscribes a subscription). */
static napi_value js_pump_stop(napi_env env, napi_callback_info info) {
    size_t argc = 1;
    napi_value argv[1];
    CHECK_NAPI(env, napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
    pump *p = get_pump(env, argv[0]);
    if (!p) return NULL;
    pump_stop(p);
    return NULL;
}

static napi_value js_sub_unsubscribe(napi_env env, napi_callback_info info) {
    size_t argc = 1;
    napi_value argv[1];
    CHECK_NAPI(env, napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
    pump *p = get_pump(env, argv[0]);
    if (!p || !p->sub) return NULL;
    int32_t st = natsio_sub_unsubscribe(p->sub);
    pump_stop(p);
    throw_if_failed(env, st);
    return NULL;
}

static napi_value js_sub_unsubscribe_after(napi_env env, napi_callback_info info) {
    size_t argc = 2;
    napi_value argv[2];
    CHECK_NAPI(env, napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
    pump *p = get_pump(env, argv[0]);
    if (!p || !p->sub) return NULL;
    int64_t n = get_i64(env, argv[1], 0);
    throw_if_failed(env, natsio_sub_unsubscribe_after(p->sub, n < 0 ? 0 : (uint64_t)n));
    return NULL;
}

/* subDrain(pump, opId) */
static napi_value js_sub_drain(napi_env env, napi_callback_info info) {
    size_t argc = 2;
    napi_value argv[2];
    CHECK_NAPI(env, napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
    pump *p = get_pump(env, argv[0]);
    if (!p || !p->sub) return NULL;
    uint32_t op_id = 0;
    napi_get_value_uint32(env, argv[1], &op_id);
    natsio_token *tok;
    if (!throw_if_failed(env, natsio_sub_drain_async(p->sub, &tok))) track_token(env, tok, op_id, 0);
    return NULL;
}

static napi_value js_sub_stats(napi_env env, napi_callback_info info) {
    size_t argc = 1;
    napi_value argv[1], r;
    CHECK_NAPI(env, napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
    pump *p = get_pump(env, argv[0]);
    if (!p || !p->sub) return NULL;
    natsio_sub_stats s;
    if (throw_if_failed(env, natsio_sub_get_stats(p->sub, &s))) return NULL;
    napi_create_object(env, &r);
    set_u64(env, r, "delivered", s.delivered);
    set_u64(env, r, "dropped", s.dropped);
    set_u64(env, r, "pendingMsgs", s.pending_msgs);
    set_u64(env, r, "pendingBytes", s.pending_bytes);
    return r;
}

static napi_value js_sub_info(napi_env env, napi_callback_info info) {
    size_t argc = 1;
    napi_value argv[1], r, v;
    CHECK_NAPI(env, napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
    pump *p = get_pump(env, argv[0]);
    if (!p || !p->sub) return NULL;
    napi_create_object(env, &r);
    set_u64(env, r, "sid", natsio_sub_sid(p->sub));
    napi_get_boolean(env, natsio_sub_is_closed(p->sub), &v);
    napi_set_named_property(env, r, "closed", v);
    return r;
}

/* ------------------------------------------------------------------ */
/* JetStream and Key-Value                                              */
/*
 * Handles: a JetStream context, a bound KV bucket or a consumed message
 * (JsMsg, an owned natsio_msg) is a js_handle behind a type-tagged external. Everything about a handle happens on the JS thread
 * except the blocking C call of a job, which runs on the libuv threadpool
 * (napi_async_work) with the handle counted in `jobs`; the C handle is freed
 * once the JS side closed it (close() or the finalizer) and no job uses it
 * any more, the struct once the external is finalized too. So close() is
 * deterministic, a second close() does nothing, and a call after close()
 * fails with ILLEGAL_STATE instead of touching freed memory. A message
 * handle has no close(): its natsio_msg lives until the finalizer (and any
 * ackAck job) is done, so an ack can never reach a freed message.
 *
 * Jobs: one struct for every blocking call (inputs copied on the JS thread,
 * outputs converted back on it); `exec` runs on the threadpool, `result`
 * builds the resolution value. Asynchronous publishes complete through the
 * token path of request() (EV_TOKEN with token_has_msg = TOKEN_PUB_ACK).
 */

enum { JSH_JS = 1, JSH_KV = 2, JSH_MSG = 3, JSH_CONSUME = 4, JSH_WATCH = 5 };

static const napi_type_tag JS_HANDLE_TAG = {0x6e617473696f4a53ULL, 0x68616e646c653031ULL};

typedef struct js_handle {
    int kind;
    natsio_js *js;
    natsio_kv *kv;
    natsio_msg *msg;
    natsio_js_messages *it; /* JSH_CONSUME */
    natsio_kv_watcher *w;   /* JSH_WATCH */
    int jobs;       /* jobs in flight (JS thread only) */
    bool closed;    /* close() ran: no new calls */
    bool finalized; /* the external is gone */
} js_handle;

static void jsh_maybe_free(js_handle *h) {
    if (h->jobs > 0) return;
    if (h->closed || h->finalized) {
        natsio_js_free(h->js);
        natsio_kv_free(h->kv);
        natsio_msg_free(h->msg);
        natsio_js_messages_free(h->it);
        natsio_kv_watcher_free(h->w);
        h->js = NULL;
        h->kv = NULL;
        h->msg = NULL;
        h->it = NULL;
        h->w = NULL;
    }
    if (h->finalized) free(h);
}

/* A consumption or watch: wakes its pending next (if any). Thread-safe in
 * the core; the free waits for the job to come back. */
static void jsh_stop(js_handle *h) {
    natsio_js_messages_stop(h->it);
    natsio_kv_watcher_stop(h->w);
}

static void jsh_finalize(napi_env env, void *data, void *hint) {
    (void)env;
    (void)hint;
    js_handle *h = data;
    h->finalized = true;
    jsh_stop(h);
    jsh_maybe_free(h);
}

static napi_value jsh_wrap(napi_env env, int kind, natsio_js *js, natsio_kv *kv, natsio_msg *msg) {
    js_handle *h = calloc(1, sizeof *h);
    if (!h) {
        natsio_js_free(js);
        natsio_kv_free(kv);
        natsio_msg_free(msg);
        throw_status(env, NATSIO_ERR_INTERNAL, "out of memory");
        return NULL;
    }
    h->kind = kind;
    h->js = js;
    h->kv = kv;
    h->msg = msg;
    napi_value ext;
    if (napi_create_external(env, h, jsh_finalize, NULL, &ext) != napi_ok) {
        h->finalized = true;
        jsh_maybe_free(h);
        napi_throw_error(env, NULL, "natsio addon: napi_create_external failed");
        return NULL;
    }
    napi_type_tag_object(env, ext, &JS_HANDLE_TAG);
    return ext;
}

/* The open handle of `kind` behind `v`; NULL with a pending exception. */
static js_handle *get_jsh(napi_env env, napi_value v, int kind) {
    static const char *const not_a[] = {"", "not a natsio JetStream handle", "not a natsio KV handle",
                                        "not a natsio JetStream message", "not a natsio consumption",
                                        "not a natsio KV watch"};
    static const char *const closed[] = {"", "the JetStream context is closed", "the KV bucket handle is closed",
                                         "the JetStream message is released", "the consumption is stopped",
                                         "the KV watch is stopped"};
    bool tagged = false;
    void *p = NULL;
    if (napi_check_object_type_tag(env, v, &JS_HANDLE_TAG, &tagged) != napi_ok || !tagged ||
        napi_get_value_external(env, v, &p) != napi_ok || !p || ((js_handle *)p)->kind != kind) {
        napi_throw_type_error(env, NULL, not_a[kind]);
        return NULL;
    }
    js_handle *h = p;
    if (h->closed) {
        throw_status(env, NATSIO_ERR_ILLEGAL_STATE, closed[kind]);
        return NULL;
    }
    return h;
}

/* A required string argument: TypeError naming it when not a string. */
static bool get_req_string(napi_env env, napi_value v, const char *what, char **out) {
    napi_valuetype t = napi_undefined;
    *out = NULL;
    if (v) napi_typeof(env, v, &t);
    if (t != napi_string) {
        char msg[128];
        snprintf(msg, sizeof msg, "%s must be a string", what);
        napi_throw_type_error(env, NULL, msg);
        return false;
    }
    return get_opt_string(env, v, out);
}

/* An unsigned 64-bit integer from a number or bigint. *present is false for
 * null/undefined. Returns false with a pending TypeError otherwise. */
static bool get_u64(napi_env env, napi_value v, const char *what, uint64_t *out, bool *present) {
    napi_valuetype t = napi_undefined;
    *present = false;
    if (v) napi_typeof(env, v, &t);
    if (t == napi_undefined || t == napi_null) return true;
    if (t == napi_bigint) {
        bool lossless = false;
        napi_get_value_bigint_uint64(env, v, out, &lossless);
        if (lossless) {
            *present = true;
            return true;
        }
    } else if (t == napi_number) {
        double d;
        napi_get_value_double(env, v, &d);
        if (d >= 0 && d < 18446744073709551616.0 && d == (double)(uint64_t)d) {
            *out = (uint64_t)d;
            *present = true;
            return true;
        }
    }
    char msg[128];
    snprintf(msg, sizeof msg, "%s must be a non-negative integer", what);
    napi_throw_type_error(env, NULL, msg);
    return false;
}

/* Options of one publish, owned (a job outlives the JS call). */
typedef struct pub_opts {
    natsio_headers *hd;
    char *msg_id, *exp_stream, *exp_subj_subject, *exp_last_msg_id;
    uint64_t last_seq, last_subj_seq;
    bool has_last_seq, has_last_subj_seq;
    int64_t ttl_s, timeout_ms;
} pub_opts;

static void pub_opts_free(pub_opts *o) {
    natsio_headers_free(o->hd);
    free(o->msg_id);
    free(o->exp_stream);
    free(o->exp_subj_subject);
    free(o->exp_last_msg_id);
    memset(o, 0, sizeof *o);
}

static void pub_opts_to_c(const pub_opts *o, natsio_js_publish_options *c) {
    memset(c, 0, sizeof *c);
    c->headers = o->hd;
    c->msg_id = o->msg_id;
    c->expected_stream = o->exp_stream;
    c->expected_last_seq = o->has_last_seq ? &o->last_seq : NULL;
    c->expected_last_subject_seq = o->has_last_subj_seq ? &o->last_subj_seq : NULL;
    c->expected_last_subject_seq_subject = o->exp_subj_subject;
    c->expected_last_msg_id = o->exp_last_msg_id;
    c->ttl_s = o->ttl_s;
    c->timeout_ms = o->timeout_ms;
}

/* Reads the flat publish options index.js builds: headers (flat array),
 * msgId, expectStream, expectLastSequence, expectLastSubjectSequence,
 * expectLastSubjectSequenceSubject, expectLastMsgId, ttl (s), timeout (ms). */
static bool read_pub_opts(napi_env env, napi_value v, pub_opts *o) {
    memset(o, 0, sizeof *o);
    napi_valuetype t = napi_undefined;
    if (v) napi_typeof(env, v, &t);
    if (t == napi_undefined || t == napi_null) return true;
    if (!get_headers(env, prop(env, v, "headers"), &o->hd) ||
        !get_opt_string(env, prop(env, v, "msgId"), &o->msg_id) ||
        !get_opt_string(env, prop(env, v, "expectStream"), &o->exp_stream) ||
        !get_opt_string(env, prop(env, v, "expectLastSubjectSequenceSubject"), &o->exp_subj_subject) ||
        !get_opt_string(env, prop(env, v, "expectLastMsgId"), &o->exp_last_msg_id) ||
        !get_u64(env, prop(env, v, "expectLastSequence"), "expect.lastSequence", &o->last_seq, &o->has_last_seq) ||
        !get_u64(env, prop(env, v, "expectLastSubjectSequence"), "expect.lastSubjectSequence", &o->last_subj_seq,
                 &o->has_last_subj_seq)) {
        pub_opts_free(o);
        return false;
    }
    o->ttl_s = get_i64(env, prop(env, v, "ttl"), 0);
    o->timeout_ms = get_i64(env, prop(env, v, "timeout"), 0);
    return true;
}

/* {stream, seq, duplicate, domain?} */
static napi_value pub_ack_to_js(napi_env env, const natsio_pub_ack *ack) {
    napi_value r, v;
    napi_create_object(env, &r);
    napi_create_string_utf8(env, natsio_pub_ack_stream(ack), NAPI_AUTO_LENGTH, &v);
    napi_set_named_property(env, r, "stream", v);
    set_u64(env, r, "seq", natsio_pub_ack_seq(ack));
    napi_get_boolean(env, natsio_pub_ack_duplicate(ack), &v);
    napi_set_named_property(env, r, "duplicate", v);
    const char *domain = natsio_pub_ack_domain(ack);
    if (domain) {
        napi_create_string_utf8(env, domain, NAPI_AUTO_LENGTH, &v);
        napi_set_named_property(env, r, "domain", v);
    }
    return r;
}

typedef struct job job;
struct job {
    napi_async_work work;
    napi_deferred deferred;
    js_handle *h;
    int32_t (*exec)(job *);
    napi_value (*result)(napi_env, job *);
    int32_t status;
    char *detail;
    /* inputs */
    char *a, *b;
    uint8_t *data;
    size_t len;
    uint64_t n;
    bool has_n;
    bool flag;
    int mode;
    int64_t ms;
    uint32_t op_id;
    pub_opts po;
    natsio_fetch_options fo;
    /* outputs */
    char *json;
    uint64_t u;
    natsio_pub_ack *ack;
    natsio_token *tok;
    natsio_stored_msg *smsg;
    natsio_kv *kv;
    natsio_kv_entry *entry;
    natsio_msg *msg;
    natsio_msg_list *mlist;
    natsio_kv_entry_list *elist;
    /* consume / watch */
    natsio_consume_options co;
    natsio_kv_watch_options wo;
    natsio_js_messages *it;
    natsio_kv_watcher *w;
    natsio_msg **msgs;       /* a batch of next(): `count` of `cap` */
    natsio_kv_entry **ents;  /* NULL entries are the initial-values marker */
    size_t count, cap;
    int32_t end_status;      /* the status that ended the batch (not TIMEOUT) */
    char *end_detail;
};

static void job_free(job *j) {
    free(j->detail);
    free(j->a);
    free(j->b);
    free(j->data);
    pub_opts_free(&j->po);
    natsio_string_free(j->json);
    natsio_pub_ack_free(j->ack);
    natsio_token_free(j->tok);
    natsio_stored_msg_free(j->smsg);
    natsio_kv_free(j->kv);
    natsio_kv_entry_free(j->entry);
    natsio_msg_free(j->msg);
    natsio_msg_list_free(j->mlist);
    natsio_kv_entry_list_free(j->elist);
    natsio_js_messages_free(j->it);
    natsio_kv_watcher_free(j->w);
    for (size_t i = 0; i < j->count; i++) {
        if (j->msgs) natsio_msg_free(j->msgs[i]);
        if (j->ents) natsio_kv_entry_free(j->ents[i]);
    }
    free(j->msgs);
    free(j->ents);
    free(j->end_detail);
    free(j);
}

static void job_execute(napi_env env, void *data) {
    (void)env;
    job *j = data;
    j->status = j->exec(j);
    if (j->status != NATSIO_OK) j->detail = dup_str(natsio_last_error());
}

static void job_complete(napi_env env, napi_status s, void *data) {
    job *j = data;
    napi_value v = NULL;
    if (s != napi_ok && j->status == NATSIO_OK) {
        j->status = NATSIO_ERR_CANCELLED;
    } else if (j->status == NATSIO_OK) {
        if (j->result)
            v = j->result(env, j);
        else
            napi_get_undefined(env, &v);
    }
    bool pending = false;
    napi_is_exception_pending(env, &pending);
    if (pending) {
        napi_value exc;
        napi_get_and_clear_last_exception(env, &exc);
        napi_reject_deferred(env, j->deferred, exc);
    } else if (j->status == NATSIO_OK) {
        napi_resolve_deferred(env, j->deferred, v);
    } else {
        napi_reject_deferred(env, j->deferred, make_error(env, j->status, j->detail));
    }
    napi_delete_async_work(env, j->work);
    j->h->jobs--;
    jsh_maybe_free(j->h);
    job_free(j);
}

static job *job_new(napi_env env, js_handle *h) {
    job *j = calloc(1, sizeof *j);
    if (!j) throw_status(env, NATSIO_ERR_INTERNAL, "out of memory");
    else j->h = h;
    return j;
}

/* The start of a job call: reads up to *argc arguments into argv (the
 * missing ones undefined; *argc becomes the number passed), checks that the
 * first is an open handle of `kind` and makes a job on it. NULL with a
 * pending exception. */
static job *job_begin(napi_env env, napi_callback_info info, int kind, size_t *argc, napi_value *argv) {
    CHECK_NAPI(env, napi_get_cb_info(env, info, argc, argv, NULL, NULL));
    js_handle *h = get_jsh(env, argv[0], kind);
    if (!h) return NULL;
    return job_new(env, h);
}

/* job_begin for (js, stream, consumer, ...) calls: the names go to a and b. */
static job *job_begin_consumer(napi_env env, napi_callback_info info, size_t *argc, napi_value *argv) {
    job *j = job_begin(env, info, JSH_JS, argc, argv);
    if (!j) return NULL;
    if (!get_req_string(env, argv[1], "stream name", &j->a) || !get_req_string(env, argv[2], "consumer name", &j->b)) {
        job_free(j);
        return NULL;
    }
    return j;
}

/* Queues the job on the threadpool; returns its promise. On failure the job
 * is freed and an exception is pending. */
static napi_value job_queue(napi_env env, job *j, const char *name, int32_t (*exec)(job *),
                            napi_value (*result)(napi_env, job *)) {
    napi_value promise, nm;
    j->exec = exec;
    j->result = result;
    napi_create_string_utf8(env, name, NAPI_AUTO_LENGTH, &nm);
    if (napi_create_promise(env, &j->deferred, &promise) != napi_ok ||
        napi_create_async_work(env, NULL, nm, job_execute, job_complete, j, &j->work) != napi_ok) {
        job_free(j);
        napi_throw_error(env, NULL, "natsio addon: could not create async work");
        return NULL;
    }
    if (napi_queue_async_work(env, j->work) != napi_ok) {
        napi_delete_async_work(env, j->work);
        job_free(j);
        napi_throw_error(env, NULL, "natsio addon: could not queue async work");
        return NULL;
    }
    j->h->jobs++;
    return promise;
}

/* A job whose only argument is the handle of `kind`. */
static napi_value handle_job(napi_env env, napi_callback_info info, int kind, const char *name, int32_t (*exec)(job *),
                             napi_value (*result)(napi_env, job *)) {
    size_t argc = 1;
    napi_value argv[1];
    job *j = job_begin(env, info, kind, &argc, argv);
    if (!j) return NULL;
    return job_queue(env, j, name, exec, result);
}

/* Copies bytes for a job (the JS buffer may change before it runs). */
static bool copy_bytes(napi_env env, napi_value v, job *j) {
    const void *p;
    size_t len;
    if (!get_bytes(env, v, &p, &len)) return false;
    j->data = malloc(len ? len : 1);
    if (!j->data) {
        throw_status(env, NATSIO_ERR_INTERNAL, "out of memory");
        return false;
    }
    if (len) memcpy(j->data, p, len);
    j->len = len;
    return true;
}

static napi_value result_string(napi_env env, job *j) {
    napi_value r;
    napi_create_string_utf8(env, j->json ? j->json : "", NAPI_AUTO_LENGTH, &r);
    return r;
}

static napi_value result_u64(napi_env env, job *j) {
    napi_value r;
    napi_create_double(env, (double)j->u, &r);
    return r;
}

/* jetstream(client, {domain, apiPrefix, timeout, publishAsyncMaxPending,
 * publishAsyncStallWait, publishAsyncTimeout}) -> external. Sends nothing. */
static napi_value js_jetstream(napi_env env, napi_callback_info info) {
    size_t argc = 2;
    napi_value argv[2];
    CHECK_NAPI(env, napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
    client_wrap *cw = get_client(env, argv[0]);
    if (!cw) return NULL;
    char *domain = NULL, *prefix = NULL;
    napi_value result = NULL;
    if (!get_opt_string(env, prop(env, argv[1], "domain"), &domain) ||
        !get_opt_string(env, prop(env, argv[1], "apiPrefix"), &prefix))
        goto out;
    natsio_js_options o = {0};
    o.domain = domain;
    o.api_prefix = prefix;
    o.timeout_ms = get_i64(env, prop(env, argv[1], "timeout"), 0);
    o.publish_async_max_pending = get_i64(env, prop(env, argv[1], "publishAsyncMaxPending"), 0);
    o.publish_async_stall_wait_ms = get_i64(env, prop(env, argv[1], "publishAsyncStallWait"), 0);
    o.publish_async_timeout_ms = get_i64(env, prop(env, argv[1], "publishAsyncTimeout"), 0);
    natsio_js *js;
    if (throw_if_failed(env, natsio_client_jetstream(cw->client, &o, &js))) goto out;
    result = jsh_wrap(env, JSH_JS, js, NULL, NULL);
out:
    free(domain);
    free(prefix);
    return result;
}

/* jsClose(js) / kvClose(kv) / jsMessagesStop(it) / kvWatcherStop(w): frees
 * the C handle once no job uses it; a consumption or watch is stopped first,
 * so its pending next returns (and its job frees it). Closing twice is fine. */
static napi_value jsh_close(napi_env env, napi_callback_info info) {
    size_t argc = 1;
    napi_value argv[1];
    CHECK_NAPI(env, napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
    bool tagged = false;
    void *p = NULL;
    if (napi_check_object_type_tag(env, argv[0], &JS_HANDLE_TAG, &tagged) != napi_ok || !tagged ||
        napi_get_value_external(env, argv[0], &p) != napi_ok || !p) {
        napi_throw_type_error(env, NULL, "not a natsio JetStream or KV handle");
        return NULL;
    }
    js_handle *h = p;
    h->closed = true;
    jsh_stop(h);
    jsh_maybe_free(h);
    return NULL;
}

static int32_t exec_publish(job *j) {
    natsio_js_publish_options o;
    pub_opts_to_c(&j->po, &o);
    return natsio_js_publish(j->h->js, j->a, j->data, j->len, &o, &j->ack);
}

static napi_value result_pub_ack(napi_env env, job *j) { return pub_ack_to_js(env, j->ack); }

/* jsPublish(js, subject, data, opts) -> Promise<PubAck> */
static napi_value js_js_publish(napi_env env, napi_callback_info info) {
    size_t argc = 4;
    napi_value argv[4];
    job *j = job_begin(env, info, JSH_JS, &argc, argv);
    if (!j) return NULL;
    if (!get_req_string(env, argv[1], "subject", &j->a) || !copy_bytes(env, argv[2], j) ||
        !read_pub_opts(env, argv[3], &j->po)) {
        job_free(j);
        return NULL;
    }
    return job_queue(env, j, "natsio.jsPublish", exec_publish, result_pub_ack);
}

/* Hands an async-publish token to the hub (as track_token) without
 * throwing: returns the status. */

static int32_t track_pub_ack_token(napi_env env, natsio_token *tok, uint32_t op_id) {
    hub *h = get_hub(env);
    token_data *d = calloc(1, sizeof *d);
    if (!d) {
        natsio_token_free(tok);
        return NATSIO_ERR_INTERNAL;
    }
    d->hub = h;
    d->op_id = op_id;
    d->has_msg = TOKEN_PUB_ACK;
    hub_retain(h);
    int32_t st = natsio_token_on_complete(tok, on_token_complete, d, release_token_data);
    if (st != NATSIO_OK) {
        natsio_token_free(tok);
        release_token_data(d);
    }
    return st;
}

/* jsPublishAsync(js, subject, data, opts, opId): the caller (index.js) has
 * checked that the window has room, so this never stalls: it only queues
 * the message. The ack resolves op `opId` through the token path. */
static napi_value js_js_publish_async(napi_env env, napi_callback_info info) {
    size_t argc = 5;
    napi_value argv[5];
    CHECK_NAPI(env, napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
    js_handle *h = get_jsh(env, argv[0], JSH_JS);
    if (!h) return NULL;
    char *subject = NULL;
    const void *data;
    size_t len;
    pub_opts po;
    memset(&po, 0, sizeof po);
    uint32_t op_id = 0;
    napi_get_value_uint32(env, argv[4], &op_id);
    if (get_req_string(env, argv[1], "subject", &subject) && get_bytes(env, argv[2], &data, &len) &&
        read_pub_opts(env, argv[3], &po)) {
        natsio_js_publish_options o;
        pub_opts_to_c(&po, &o);
        natsio_token *tok;
        int32_t st = natsio_js_publish_async(h->js, subject, data, len, &o, &tok);
        if (st == NATSIO_OK) st = track_pub_ack_token(env, tok, op_id);
        throw_if_failed(env, st);
    }
    free(subject);
    pub_opts_free(&po);
    return NULL;
}

static int32_t exec_publish_async(job *j) {
    natsio_js_publish_options o;
    pub_opts_to_c(&j->po, &o);
    return natsio_js_publish_async(j->h->js, j->a, j->data, j->len, &o, &j->tok);
}

static napi_value result_tracked(napi_env env, job *j) {
    natsio_token *tok = j->tok;
    j->tok = NULL;
    int32_t st = track_pub_ack_token(env, tok, j->op_id);
    if (st != NATSIO_OK) {
        napi_throw(env, make_error(env, st, natsio_last_error()));
        return NULL;
    }
    napi_value r;
    napi_get_undefined(env, &r);
    return r;
}

/* jsPublishAsyncQueued(js, subject, data, opts, opId) -> Promise<void>: an
 * asynchronous publish that may stall (the window is full), so it runs on
 * the threadpool. Resolves once the message is sent (its ack then resolves
 * op `opId`); rejects with TOO_MANY_STALLED when no room came in time. */
static napi_value js_js_publish_async_queued(napi_env env, napi_callback_info info) {
    size_t argc = 5;
    napi_value argv[5];
    job *j = job_begin(env, info, JSH_JS, &argc, argv);
    if (!j) return NULL;
    napi_get_value_uint32(env, argv[4], &j->op_id);
    if (!get_req_string(env, argv[1], "subject", &j->a) || !copy_bytes(env, argv[2], j) ||
        !read_pub_opts(env, argv[3], &j->po)) {
        job_free(j);
        return NULL;
    }
    return job_queue(env, j, "natsio.jsPublishAsync", exec_publish_async, result_tracked);
}

static int32_t exec_publish_async_complete(job *j) { return natsio_js_publish_async_complete(j->h->js, j->ms); }

/* jsPublishAsyncComplete(js, timeoutMs) -> Promise<void> */
static napi_value js_js_publish_async_complete(napi_env env, napi_callback_info info) {
    size_t argc = 2;
    napi_value argv[2];
    job *j = job_begin(env, info, JSH_JS, &argc, argv);
    if (!j) return NULL;
    j->ms = get_i64(env, argv[1], -1);
    return job_queue(env, j, "natsio.jsPublishAsyncComplete", exec_publish_async_complete, NULL);
}

/* jsPublishAsyncPending(js) -> number (never blocks) */
static napi_value js_js_publish_async_pending(napi_env env, napi_callback_info info) {
    size_t argc = 1;
    napi_value argv[1], r;
    CHECK_NAPI(env, napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
    js_handle *h = get_jsh(env, argv[0], JSH_JS);
    if (!h) return NULL;
    napi_create_double(env, (double)natsio_js_publish_async_pending(h->js), &r);
    return r;
}

static int32_t exec_account_info(job *j) { return natsio_js_account_info(j->h->js, &j->json); }

/* jsAccountInfo(js) -> Promise<string JSON> */
static napi_value js_js_account_info(napi_env env, napi_callback_info info) {
    return handle_job(env, info, JSH_JS, "natsio.jsAccountInfo", exec_account_info, result_string);
}

static int32_t exec_stream_put(job *j) {
    switch (j->mode) {
    case 0: return natsio_js_stream_create(j->h->js, j->a, &j->json);
    case 1: return natsio_js_stream_update(j->h->js, j->a, &j->json);
    default: return natsio_js_stream_create_or_update(j->h->js, j->a, &j->json);
    }
}

/* jsStreamPut(js, mode 0 create | 1 update | 2 createOrUpdate, configJson) -> Promise<string> */
static napi_value js_js_stream_put(napi_env env, napi_callback_info info) {
    size_t argc = 3;
    napi_value argv[3];
    job *j = job_begin(env, info, JSH_JS, &argc, argv);
    if (!j) return NULL;
    j->mode = (int)get_i64(env, argv[1], 0);
    if (!get_req_string(env, argv[2], "stream config", &j->a)) {
        job_free(j);
        return NULL;
    }
    return job_queue(env, j, "natsio.jsStreamPut", exec_stream_put, result_string);
}

static int32_t exec_stream_info(job *j) { return natsio_js_stream_info(j->h->js, j->a, &j->json); }
static int32_t exec_stream_delete(job *j) { return natsio_js_stream_delete(j->h->js, j->a); }
static int32_t exec_stream_purge(job *j) { return natsio_js_stream_purge(j->h->js, j->a, j->b, &j->u); }
static int32_t exec_stream_names(job *j) { return natsio_js_stream_names(j->h->js, j->a, &j->json); }

/* (js, name) jobs: jsStreamInfo -> string, jsStreamDelete -> void */
static napi_value js_name_job(napi_env env, napi_callback_info info, const char *what, const char *name,
                              int32_t (*exec)(job *), napi_value (*result)(napi_env, job *)) {
    size_t argc = 2;
    napi_value argv[2];
    job *j = job_begin(env, info, JSH_JS, &argc, argv);
    if (!j) return NULL;
    if (!get_req_string(env, argv[1], what, &j->a)) {
        job_free(j);
        return NULL;
    }
    return job_queue(env, j, name, exec, result);
}

static napi_value js_js_stream_info(napi_env env, napi_callback_info info) {
    return js_name_job(env, info, "stream name", "natsio.jsStreamInfo", exec_stream_info, result_string);
}

static napi_value js_js_stream_delete(napi_env env, napi_callback_info info) {
    return js_name_job(env, info, "stream name", "natsio.jsStreamDelete", exec_stream_delete, NULL);
}

/* jsStreamPurge(js, name, optionsJson|null) -> Promise<number purged> */
static napi_value js_js_stream_purge(napi_env env, napi_callback_info info) {
    size_t argc = 3;
    napi_value argv[3];
    job *j = job_begin(env, info, JSH_JS, &argc, argv);
    if (!j) return NULL;
    if (!get_req_string(env, argv[1], "stream name", &j->a) || !get_opt_string(env, argv[2], &j->b)) {
        job_free(j);
        return NULL;
    }
    return job_queue(env, j, "natsio.jsStreamPurge", exec_stream_purge, result_u64);
}

/* jsStreamNames(js, subject|null) -> Promise<string JSON array> */
static napi_value js_js_stream_names(napi_env env, napi_callback_info info) {
    size_t argc = 2;
    napi_value argv[2];
    job *j = job_begin(env, info, JSH_JS, &argc, argv);
    if (!j) return NULL;
    if (!get_opt_string(env, argv[1], &j->a)) {
        job_free(j);
        return NULL;
    }
    return job_queue(env, j, "natsio.jsStreamNames", exec_stream_names, result_string);
}

static int32_t exec_stream_get_msg(job *j) { return natsio_js_stream_get_msg(j->h->js, j->a, j->n, j->b, &j->smsg); }

/* [subject, seq, timeMs, data, flatHeaders|null] */
static napi_value result_stored_msg(napi_env env, job *j) {
    const natsio_stored_msg *m = j->smsg;
    napi_value arr, v;
    napi_create_array_with_length(env, 5, &arr);
    napi_create_string_utf8(env, natsio_stored_msg_subject(m), NAPI_AUTO_LENGTH, &v);
    napi_set_element(env, arr, 0, v);
    napi_create_double(env, (double)natsio_stored_msg_seq(m), &v);
    napi_set_element(env, arr, 1, v);
    napi_create_double(env, (double)(natsio_stored_msg_time_ns(m) / 1000000), &v);
    napi_set_element(env, arr, 2, v);
    void *copy;
    napi_create_buffer_copy(env, natsio_stored_msg_data_len(m), natsio_stored_msg_data(m), &copy, &v);
    napi_set_element(env, arr, 3, v);
    napi_set_element(env, arr, 4, headers_to_js(env, natsio_stored_msg_headers(m)));
    return arr;
}

/* jsStreamGetMsg(js, stream, seq, lastBySubject|null) -> Promise<array> */
static napi_value js_js_stream_get_msg(napi_env env, napi_callback_info info) {
    size_t argc = 4;
    napi_value argv[4];
    job *j = job_begin(env, info, JSH_JS, &argc, argv);
    if (!j) return NULL;
    if (!get_req_string(env, argv[1], "stream name", &j->a) || !get_u64(env, argv[2], "seq", &j->n, &j->has_n) ||
        !get_opt_string(env, argv[3], &j->b)) {
        job_free(j);
        return NULL;
    }
    return job_queue(env, j, "natsio.jsStreamGetMsg", exec_stream_get_msg, result_stored_msg);
}

static int32_t exec_stream_delete_msg(job *j) { return natsio_js_stream_delete_msg(j->h->js, j->a, j->n, j->flag); }

/* jsStreamDeleteMsg(js, stream, seq, erase) -> Promise<void> */
static napi_value js_js_stream_delete_msg(napi_env env, napi_callback_info info) {
    size_t argc = 4;
    napi_value argv[4];
    job *j = job_begin(env, info, JSH_JS, &argc, argv);
    if (!j) return NULL;
    if (!get_req_string(env, argv[1], "stream name", &j->a) || !get_u64(env, argv[2], "seq", &j->n, &j->has_n)) {
        job_free(j);
        return NULL;
    }
    if (!j->has_n) {
        job_free(j);
        napi_throw_type_error(env, NULL, "seq must be a non-negative integer");
        return NULL;
    }
    napi_get_value_bool(env, argv[3], &j->flag);
    return job_queue(env, j, "natsio.jsStreamDeleteMsg", exec_stream_delete_msg, NULL);
}

static int32_t exec_kv_open(job *j) {
    switch (j->mode) {
    case 0: return natsio_js_kv_create(j->h->js, j->a, &j->kv);
    case 1: return natsio_js_kv_update(j->h->js, j->a, &j->kv);
    case 2: return natsio_js_kv_create_or_update(j->h->js, j->a, &j->kv);
    default: return natsio_js_kv_bind(j->h->js, j->a, &j->kv);
    }
}

static napi_value result_kv(napi_env env, job *j) {
    natsio_kv *kv = j->kv;
    j->kv = NULL;
    return jsh_wrap(env, JSH_KV, NULL, kv, NULL);
}

/* kvOpen(js, mode 0 create | 1 update | 2 createOrUpdate | 3 bind,
 * configJson | bucket) -> Promise<external> */
static napi_value js_kv_open(napi_env env, napi_callback_info info) {
    size_t argc = 3;
    napi_value argv[3];
    job *j = job_begin(env, info, JSH_JS, &argc, argv);
    if (!j) return NULL;
    j->mode = (int)get_i64(env, argv[1], 0);
    if (!get_req_string(env, argv[2], j->mode == 3 ? "bucket" : "KV config", &j->a)) {
        job_free(j);
        return NULL;
    }
    return job_queue(env, j, "natsio.kvOpen", exec_kv_open, result_kv);
}

static int32_t exec_kv_delete_bucket(job *j) { return natsio_js_kv_delete(j->h->js, j->a); }

static napi_value js_kv_delete_bucket(napi_env env, napi_callback_info info) {
    return js_name_job(env, info, "bucket", "natsio.kvDeleteBucket", exec_kv_delete_bucket, NULL);
}

/* kvBucket(kv) -> string */
static napi_value js_kv_bucket(napi_env env, napi_callback_info info) {
    size_t argc = 1;
    napi_value argv[1], r;
    CHECK_NAPI(env, napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
    js_handle *h = get_jsh(env, argv[0], JSH_KV);
    if (!h) return NULL;
    napi_create_string_utf8(env, natsio_kv_bucket(h->kv), NAPI_AUTO_LENGTH, &r);
    return r;
}

static int32_t exec_kv_put(job *j) {
    switch (j->mode) {
    case 0: return natsio_kv_put(j->h->kv, j->a, j->data, j->len, &j->u);
    case 1: return natsio_kv_create(j->h->kv, j->a, j->data, j->len, &j->u);
    default: return natsio_kv_update(j->h->kv, j->a, j->data, j->len, j->n, &j->u);
    }
}

/* kvPut(kv, mode 0 put | 1 create | 2 update, key, value, last) -> Promise<revision> */
static napi_value js_kv_put(napi_env env, napi_callback_info info) {
    size_t argc = 5;
    napi_value argv[5];
    job *j = job_begin(env, info, JSH_KV, &argc, argv);
    if (!j) return NULL;
    j->mode = (int)get_i64(env, argv[1], 0);
    if (!get_req_string(env, argv[2], "key", &j->a) || !copy_bytes(env, argv[3], j) ||
        !get_u64(env, argv[4], "last revision", &j->n, &j->has_n)) {
        job_free(j);
        return NULL;
    }
    if (j->mode == 2 && !j->has_n) {
        job_free(j);
        napi_throw_type_error(env, NULL, "last revision must be a non-negative integer");
        return NULL;
    }
    return job_queue(env, j, "natsio.kvPut", exec_kv_put, result_u64);
}

static int32_t exec_kv_get(job *j) {
    return j->has_n ? natsio_kv_get_revision(j->h->kv, j->a, j->n, &j->entry) : natsio_kv_get(j->h->kv, j->a, &j->entry);
}

/* [bucket, key, value, revision, operation, createdMs, delta] */
static napi_value kv_entry_to_js(napi_env env, const natsio_kv_entry *e) {
    napi_value arr, v;
    napi_create_array_with_length(env, 7, &arr);
    napi_create_string_utf8(env, natsio_kv_entry_bucket(e), NAPI_AUTO_LENGTH, &v);
    napi_set_element(env, arr, 0, v);
    napi_create_string_utf8(env, natsio_kv_entry_key(e), NAPI_AUTO_LENGTH, &v);
    napi_set_element(env, arr, 1, v);
    void *copy;
    napi_create_buffer_copy(env, natsio_kv_entry_value_len(e), natsio_kv_entry_value(e), &copy, &v);
    napi_set_element(env, arr, 2, v);
    napi_create_double(env, (double)natsio_kv_entry_revision(e), &v);
    napi_set_element(env, arr, 3, v);
    napi_create_int32(env, (int32_t)natsio_kv_entry_operation(e), &v);
    napi_set_element(env, arr, 4, v);
    napi_create_double(env, (double)(natsio_kv_entry_created_ns(e) / 1000000), &v);
    napi_set_element(env, arr, 5, v);
    napi_create_double(env, (double)natsio_kv_entry_delta(e), &v);
    napi_set_element(env, arr, 6, v);
    return arr;
}

static napi_value result_kv_entry(napi_env env, job *j) { return kv_entry_to_js(env, j->entry); }

/* kvGet(kv, key, revision|undefined) -> Promise<array> */
static napi_value js_kv_get(napi_env env, napi_callback_info info) {
    size_t argc = 3;
    napi_value argv[3];
    job *j = job_begin(env, info, JSH_KV, &argc, argv);
    if (!j) return NULL;
    if (!get_req_string(env, argv[1], "key", &j->a) || !get_u64(env, argv[2], "revision", &j->n, &j->has_n)) {
        job_free(j);
        return NULL;
    }
    return job_queue(env, j, "natsio.kvGet", exec_kv_get, result_kv_entry);
}

static int32_t exec_kv_delete(job *j) {
    const uint64_t *last = j->has_n ? &j->n : NULL;
    return j->flag ? natsio_kv_purge(j->h->kv, j->a, last) : natsio_kv_delete(j->h->kv, j->a, last);
}

/* kvDelete(kv, purge, key, last|undefined) -> Promise<void> */
static napi_value js_kv_delete(napi_env env, napi_callback_info info) {
    size_t argc = 4;
    napi_value argv[4];
    job *j = job_begin(env, info, JSH_KV, &argc, argv);
    if (!j) return NULL;
    napi_get_value_bool(env, argv[1], &j->flag);
    if (!get_req_string(env, argv[2], "key", &j->a) || !get_u64(env, argv[3], "last revision", &j->n, &j->has_n)) {
        job_free(j);
        return NULL;
    }
    return job_queue(env, j, "natsio.kvDelete", exec_kv_delete, NULL);
}

static int32_t exec_kv_status(job *j) { return natsio_kv_status(j->h->kv, &j->json); }

/* kvStatus(kv) -> Promise<string JSON> */
static napi_value js_kv_status(napi_env env, napi_callback_info info) {
    return handle_job(env, info, JSH_KV, "natsio.kvStatus", exec_kv_status, result_string);
}

/* ------------------------------------------------------------------ */
/* Pull consumers, consumed messages (JsMsg) and acks                   */
/*
 * fetch/next run on the threadpool (they block up to `expires`). Each
 * message becomes its own JSH_MSG handle: fetch clones every message of
 * the list (cheap: a shared frame) and the job frees the list, next hands
 * its owned message over. Acks go through the C layer, which refuses a
 * second terminal ack of the same handle (MESSAGE_ALREADY_ACKED). The
 * non-blocking acks (ack, nak, term, in progress) only buffer, like a core
 * publish, so they run on the JS thread; ackAck waits for the server and
 * runs on the threadpool, counted in the handle's jobs.
 */

static int32_t exec_consumer_put(job *j) {
    switch (j->mode) {
    case 0: return natsio_js_consumer_create(j->h->js, j->a, j->b, &j->json);
    case 1: return natsio_js_consumer_update(j->h->js, j->a, j->b, &j->json);
    default: return natsio_js_consumer_create_or_update(j->h->js, j->a, j->b, &j->json);
    }
}

/* jsConsumerPut(js, mode 0 create | 1 update | 2 createOrUpdate, stream, configJson) -> Promise<string> */
static napi_value js_js_consumer_put(napi_env env, napi_callback_info info) {
    size_t argc = 4;
    napi_value argv[4];
    job *j = job_begin(env, info, JSH_JS, &argc, argv);
    if (!j) return NULL;
    j->mode = (int)get_i64(env, argv[1], 0);
    if (!get_req_string(env, argv[2], "stream name", &j->a) || !get_req_string(env, argv[3], "consumer config", &j->b)) {
        job_free(j);
        return NULL;
    }
    return job_queue(env, j, "natsio.jsConsumerPut", exec_consumer_put, result_string);
}

static int32_t exec_consumer_info(job *j) { return natsio_js_consumer_info(j->h->js, j->a, j->b, &j->json); }
static int32_t exec_consumer_delete(job *j) { return natsio_js_consumer_delete(j->h->js, j->a, j->b); }
static int32_t exec_consumer_names(job *j) { return natsio_js_consumer_names(j->h->js, j->a, &j->json); }

/* (js, stream, consumer) jobs */
static napi_value js_consumer_job(napi_env env, napi_callback_info info, const char *name, int32_t (*exec)(job *),
                                  napi_value (*result)(napi_env, job *)) {
    size_t argc = 3;
    napi_value argv[3];
    job *j = job_begin_consumer(env, info, &argc, argv);
    if (!j) return NULL;
    return job_queue(env, j, name, exec, result);
}

/* jsConsumerInfo(js, stream, consumer) -> Promise<string JSON> */
static napi_value js_js_consumer_info(napi_env env, napi_callback_info info) {
    return js_consumer_job(env, info, "natsio.jsConsumerInfo", exec_consumer_info, result_string);
}

/* jsConsumerDelete(js, stream, consumer) -> Promise<void> */
static napi_value js_js_consumer_delete(napi_env env, napi_callback_info info) {
    return js_consumer_job(env, info, "natsio.jsConsumerDelete", exec_consumer_delete, NULL);
}

/* jsConsumerNames(js, stream) -> Promise<string JSON array> */
static napi_value js_js_consumer_names(napi_env env, napi_callback_info info) {
    return js_name_job(env, info, "stream name", "natsio.jsConsumerNames", exec_consumer_names, result_string);
}

/* [handle, subject, reply|null, data, flatHeaders|null] for an owned
 * message; the handle takes `m` over (also on failure). */
static napi_value js_msg_to_js(napi_env env, natsio_msg *m) {
    napi_value arr, v;
    napi_value ext = jsh_wrap(env, JSH_MSG, NULL, NULL, m);
    if (!ext) return NULL;
    napi_create_array_with_length(env, 5, &arr);
    napi_set_element(env, arr, 0, ext);
    napi_create_string_utf8(env, natsio_msg_subject(m), NAPI_AUTO_LENGTH, &v);
    napi_set_element(env, arr, 1, v);
    const char *reply = natsio_msg_reply(m);
    if (reply)
        napi_create_string_utf8(env, reply, NAPI_AUTO_LENGTH, &v);
    else
        napi_get_null(env, &v);
    napi_set_element(env, arr, 2, v);
    void *copy;
    napi_create_buffer_copy(env, natsio_msg_data_len(m), natsio_msg_data(m), &copy, &v);
    napi_set_element(env, arr, 3, v);
    napi_set_element(env, arr, 4, headers_to_js(env, natsio_msg_headers(m)));
    return arr;
}

/* Whether argument i was passed and is an options object. */
static bool opts_arg(napi_env env, size_t argc, napi_value *argv, size_t i) {
    napi_valuetype t = napi_undefined;
    if (argc > i) napi_typeof(env, argv[i], &t);
    return t == napi_object;
}

/* A boolean option (false unless obj.name is a boolean true). */
static bool opt_flag(napi_env env, napi_value obj, const char *name) {
    bool b = false;
    napi_valuetype t = napi_undefined;
    napi_value v = prop(env, obj, name);
    if (v) napi_typeof(env, v, &t);
    if (t == napi_boolean) napi_get_value_bool(env, v, &b);
    return b;
}

static int32_t exec_fetch(job *j) { return natsio_js_fetch(j->h->js, j->a, j->b, &j->fo, &j->mlist); }

/* The fetched messages, each cloned into its own handle (the list is freed
 * with the job). */
static napi_value result_fetch(napi_env env, job *j) {
    size_t n = natsio_msg_list_count(j->mlist);
    napi_value arr;
    napi_create_array_with_length(env, n, &arr);
    for (size_t i = 0; i < n; i++) {
        natsio_msg *m;
        int32_t st = natsio_msg_clone(natsio_msg_list_get(j->mlist, i), &m);
        if (st != NATSIO_OK) {
            napi_throw(env, make_error(env, st, natsio_last_error()));
            return NULL;
        }
        napi_value v = js_msg_to_js(env, m);
        if (!v) return NULL;
        napi_set_element(env, arr, (uint32_t)i, v);
    }
    return arr;
}

/* jsFetch(js, stream, consumer, {maxMessages, maxBytes, expires, noWait,
 * heartbeat}) -> Promise<array of messages> */
static napi_value js_js_fetch(napi_env env, napi_callback_info info) {
    size_t argc = 4;
    napi_value argv[4];
    job *j = job_begin_consumer(env, info, &argc, argv);
    if (!j) return NULL;
    if (opts_arg(env, argc, argv, 3)) {
        j->fo.max_messages = get_i64(env, prop(env, argv[3], "maxMessages"), 0);
        j->fo.max_bytes = get_i64(env, prop(env, argv[3], "maxBytes"), 0);
        j->fo.expires_ms = get_i64(env, prop(env, argv[3], "expires"), 0);
        j->fo.idle_heartbeat_ms = get_i64(env, prop(env, argv[3], "heartbeat"), 0);
        j->fo.no_wait = opt_flag(env, argv[3], "noWait");
    }
    return job_queue(env, j, "natsio.jsFetch", exec_fetch, result_fetch);
}

static int32_t exec_next(job *j) { return natsio_js_next(j->h->js, j->a, j->b, j->ms, &j->msg); }

static napi_value result_next(napi_env env, job *j) {
    natsio_msg *m = j->msg;
    j->msg = NULL;
    return js_msg_to_js(env, m);
}

/* jsNext(js, stream, consumer, timeoutMs) -> Promise<message> (NO_MESSAGES if none) */
static napi_value js_js_next(napi_env env, napi_callback_info info) {
    size_t argc = 4;
    napi_value argv[4];
    job *j = job_begin_consumer(env, info, &argc, argv);
    if (!j) return NULL;
    j->ms = get_i64(env, argv[3], 0);
    return job_queue(env, j, "natsio.jsNext", exec_next, result_next);
}

enum { ACK_ACK = 0, ACK_NAK = 1, ACK_TERM = 2, ACK_WPI = 3 };

/* jsMsgAck(msg, kind, arg): ack (0), nak (1, arg = delay ms), term (2,
 * arg = reason|null), in progress (3). Only buffers: runs here, throws. */
static napi_value js_msg_ack(napi_env env, napi_callback_info info) {
    size_t argc = 3;
    napi_value argv[3];
    CHECK_NAPI(env, napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
    js_handle *h = get_jsh(env, argv[0], JSH_MSG);
    if (!h) return NULL;
    int32_t kind = 0;
    napi_get_value_int32(env, argv[1], &kind);
    int32_t st;
    switch (kind) {
    case ACK_ACK: st = natsio_msg_ack(h->msg); break;
    case ACK_NAK: st = natsio_msg_nak(h->msg, get_i64(env, argv[2], 0)); break;
    case ACK_TERM: {
        char *reason = NULL;
        if (!get_opt_string(env, argv[2], &reason)) return NULL;
        st = natsio_msg_term(h->msg, reason);
        free(reason);
        break;
    }
    default: st = natsio_msg_in_progress(h->msg); break;
    }
    throw_if_failed(env, st);
    return NULL;
}

static int32_t exec_ack_sync(job *j) { return natsio_msg_ack_sync(j->h->msg, j->ms); }

/* jsMsgAckSync(msg, timeoutMs) -> Promise<void>: acks and waits for the
 * server's confirmation, off the JS thread. */
static napi_value js_msg_ack_sync(napi_env env, napi_callback_info info) {
    size_t argc = 2;
    napi_value argv[2];
    job *j = job_begin(env, info, JSH_MSG, &argc, argv);
    if (!j) return NULL;
    j->ms = get_i64(env, argv[1], 0);
    return job_queue(env, j, "natsio.jsMsgAckSync", exec_ack_sync, NULL);
}

/* jsMsgMetadata(msg) -> [stream, consumer, domain|null, delivered,
 * streamSeq, consumerSeq, timestampNs (bigint), pending] */
static napi_value js_msg_metadata(napi_env env, napi_callback_info info) {
    size_t argc = 1;
    napi_value argv[1];
    CHECK_NAPI(env, napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
    js_handle *h = get_jsh(env, argv[0], JSH_MSG);
    if (!h) return NULL;
    natsio_js_msg_metadata md;
    if (throw_if_failed(env, natsio_msg_js_metadata(h->msg, &md))) return NULL;
    napi_value arr, v;
    napi_create_array_with_length(env, 8, &arr);
    napi_create_string_utf8(env, md.stream, md.stream_len, &v);
    napi_set_element(env, arr, 0, v);
    napi_create_string_utf8(env, md.consumer, md.consumer_len, &v);
    napi_set_element(env, arr, 1, v);
    if (md.domain)
        napi_create_string_utf8(env, md.domain, md.domain_len, &v);
    else
        napi_get_null(env, &v);
    napi_set_element(env, arr, 2, v);
    napi_create_double(env, (double)md.num_delivered, &v);
    napi_set_element(env, arr, 3, v);
    napi_create_double(env, (double)md.stream_seq, &v);
    napi_set_element(env, arr, 4, v);
    napi_create_double(env, (double)md.consumer_seq, &v);
    napi_set_element(env, arr, 5, v);
    napi_create_bigint_int64(env, md.timestamp_ns, &v);
    napi_set_element(env, arr, 6, v);
    napi_create_double(env, (double)md.num_pending, &v);
    napi_set_element(env, arr, 7, v);
    return arr;
}

static int32_t exec_kv_keys(job *j) { return natsio_kv_keys(j->h->kv, &j->json); }

/* kvKeys(kv) -> Promise<string JSON array> */
static napi_value js_kv_keys(napi_env env, napi_callback_info info) {
    return handle_job(env, info, JSH_KV, "natsio.kvKeys", exec_kv_keys, result_string);
}

static int32_t exec_kv_history(job *j) { return natsio_kv_history(j->h->kv, j->a, &j->elist); }

static napi_value result_kv_history(napi_env env, job *j) {
    size_t n = natsio_kv_entry_list_count(j->elist);
    napi_value arr;
    napi_create_array_with_length(env, n, &arr);
    for (size_t i = 0; i < n; i++)
        napi_set_element(env, arr, (uint32_t)i, kv_entry_to_js(env, natsio_kv_entry_list_get(j->elist, i)));
    return arr;
}

/* kvHistory(kv, key) -> Promise<array of entries>, oldest first */
static napi_value js_kv_history(napi_env env, napi_callback_info info) {
    size_t argc = 2;
    napi_value argv[2];
    job *j = job_begin(env, info, JSH_KV, &argc, argv);
    if (!j) return NULL;
    if (!get_req_string(env, argv[1], "key", &j->a)) {
        job_free(j);
        return NULL;
    }
    return job_queue(env, j, "natsio.kvHistory", exec_kv_history, result_kv_history);
}

/* ------------------------------------------------------------------ */
/* Continuous consumption (js.consume) and KV watches (kv.watch)        */
/*
 * natsio_js_consume / natsio_kv_watch return a handle of their own
 * (JSH_CONSUME / JSH_WATCH) whose next blocks. The JS layer reads it with
 * one next job at a time on the threadpool, each bounded by a slice
 * (timeout_ms from JS): a TIMEOUT just means "ask again", so no threadpool
 * thread is held for longer than a slice and the JS side loops while the
 * iteration wants values. After the first value a job takes what is
 * already buffered (timeout 0) up to a batch size, so a busy consumption
 * costs one threadpool round trip per batch, not per message.
 *
 * stop() is jsh_close: natsio_*_stop (any thread: it wakes the pending
 * next, which returns SUBSCRIPTION_CLOSED), then the C handle is freed
 * once no job uses it, i.e. never while a next runs (the C contract).
 *
 * A next job resolves with an array of items in order: a message
 * ([handle, subject, reply, data, headers]) or an entry (kv_entry_to_js),
 * `true` for the watch's initial-values marker, and last, if the batch
 * ended with a status other than TIMEOUT, `null` (SUBSCRIPTION_CLOSED:
 * stopped) or the error object (consumer deleted, connection closed...).
 * An empty array: the slice passed without anything.
 */

static napi_value jsh_wrap_stream(napi_env env, int kind, natsio_js_messages *it, natsio_kv_watcher *w) {
    napi_value ext = jsh_wrap(env, kind, NULL, NULL, NULL);
    js_handle *h = NULL;
    if (!ext || napi_get_value_external(env, ext, (void **)&h) != napi_ok || !h) {
        natsio_js_messages_free(it);
        natsio_kv_watcher_free(w);
        return NULL;
    }
    h->it = it;
    h->w = w;
    return ext;
}

static int32_t exec_consume(job *j) { return natsio_js_consume(j->h->js, j->a, j->b, &j->co, &j->it); }

static napi_value result_consume(napi_env env, job *j) {
    natsio_js_messages *it = j->it;
    j->it = NULL;
    return jsh_wrap_stream(env, JSH_CONSUME, it, NULL);
}

/* jsConsume(js, stream, consumer, {maxMessages, expires, heartbeat}) -> Promise<external> */
static napi_value js_js_consume(napi_env env, napi_callback_info info) {
    size_t argc = 4;
    napi_value argv[4];
    job *j = job_begin_consumer(env, info, &argc, argv);
    if (!j) return NULL;
    if (opts_arg(env, argc, argv, 3)) {
        j->co.max_messages = get_i64(env, prop(env, argv[3], "maxMessages"), 0);
        j->co.expires_ms = get_i64(env, prop(env, argv[3], "expires"), 0);
        j->co.idle_heartbeat_ms = get_i64(env, prop(env, argv[3], "heartbeat"), 0);
    }
    return job_queue(env, j, "natsio.jsConsume", exec_consume, result_consume);
}

/* Records how a batch ended (TIMEOUT: it did not end, just paused). */
static void batch_end(job *j, int32_t st) {
    if (st == NATSIO_ERR_TIMEOUT) return;
    j->end_status = st;
    if (st != NATSIO_ERR_SUBSCRIPTION_CLOSED) j->end_detail = dup_str(natsio_last_error());
}

/* One next of a consumption into the batch's free slot; OK when it took one. */
static int32_t next_message(job *j, int64_t ms) {
    natsio_msg *m = NULL;
    int32_t st = natsio_js_messages_next(j->h->it, ms, &m);
    if (st == NATSIO_OK) j->msgs[j->count] = m;
    return st;
}

/* One next of a watch: an entry, or the initial-values marker (NULL). */
static int32_t next_entry(job *j, int64_t ms) {
    natsio_kv_entry *e = NULL;
    int32_t st = natsio_kv_watcher_next(j->h->w, ms, &e);
    if (st != NATSIO_OK && st != NATSIO_DONE) return st;
    j->ents[j->count] = st == NATSIO_OK ? e : NULL;
    return NATSIO_OK;
}

/* A batch: waits up to the slice for the first item, then takes what is
 * already buffered, up to the batch size. */
static int32_t exec_batch(job *j, int32_t (*next)(job *, int64_t)) {
    int32_t st = next(j, j->ms);
    while (st == NATSIO_OK) {
        if (++j->count == j->cap) return NATSIO_OK;
        st = next(j, 0);
    }
    batch_end(j, st);
    return NATSIO_OK;
}

static int32_t exec_messages_next(job *j) { return exec_batch(j, next_message); }
static int32_t exec_watcher_next(job *j) { return exec_batch(j, next_entry); }

/* The batch as JS items (see above); the handles take the messages over. */
static napi_value result_batch(napi_env env, job *j) {
    napi_value arr, v;
    napi_create_array_with_length(env, j->count + (j->end_status ? 1 : 0), &arr);
    for (size_t i = 0; i < j->count; i++) {
        if (j->msgs) {
            natsio_msg *m = j->msgs[i];
            j->msgs[i] = NULL;
            v = js_msg_to_js(env, m);
            if (!v) return NULL;
        } else if (j->ents[i]) {
            v = kv_entry_to_js(env, j->ents[i]);
        } else {
            napi_get_boolean(env, true, &v);
        }
        napi_set_element(env, arr, (uint32_t)i, v);
    }
    if (j->end_status) {
        if (j->end_status == NATSIO_ERR_SUBSCRIPTION_CLOSED)
            napi_get_null(env, &v);
        else
            v = make_error(env, j->end_status, j->end_detail);
        napi_set_element(env, arr, (uint32_t)j->count, v);
    }
    return arr;
}

/* jsMessagesNext(it, sliceMs, batchMax) / kvWatcherNext(w, sliceMs,
 * batchMax) -> Promise<array of items>. One at a time per handle. */
static napi_value stream_next(napi_env env, napi_callback_info info, int kind) {
    size_t argc = 3;
    napi_value argv[3];
    CHECK_NAPI(env, napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
    js_handle *h = get_jsh(env, argv[0], kind);
    if (!h) return NULL;
    if (h->jobs > 0) {
        throw_status(env, NATSIO_ERR_ILLEGAL_STATE, "a next call is already pending");
        return NULL;
    }
    job *j = job_new(env, h);
    if (!j) return NULL;
    j->ms = get_i64(env, argv[1], 1000);
    int64_t cap = get_i64(env, argv[2], 1);
    j->cap = cap < 1 ? 1 : cap > 1024 ? 1024 : (size_t)cap;
    if (kind == JSH_CONSUME)
        j->msgs = calloc(j->cap, sizeof *j->msgs);
    else
        j->ents = calloc(j->cap, sizeof *j->ents);
    if (!j->msgs && !j->ents) {
        job_free(j);
        throw_status(env, NATSIO_ERR_INTERNAL, "out of memory");
        return NULL;
    }
    return job_queue(env, j, kind == JSH_CONSUME ? "natsio.jsMessagesNext" : "natsio.kvWatcherNext",
                     kind == JSH_CONSUME ? exec_messages_next : exec_watcher_next, result_batch);
}

static napi_value js_messages_next(napi_env env, napi_callback_info info) {
    return stream_next(env, info, JSH_CONSUME);
}

static napi_value js_watcher_next(napi_env env, napi_callback_info info) {
    return stream_next(env, info, JSH_WATCH);
}

static int32_t exec_kv_watch(job *j) { return natsio_kv_watch(j->h->kv, j->a, &j->wo, &j->w); }

static napi_value result_kv_watch(napi_env env, job *j) {
    natsio_kv_watcher *w = j->w;
    j->w = NULL;
    return jsh_wrap_stream(env, JSH_WATCH, NULL, w);
}

/* kvWatch(kv, keys|null ("a.*,b.>"), {includeHistory, ignoreDeletes,
 * metaOnly, updatesOnly}) -> Promise<external> */
static napi_value js_kv_watch(napi_env env, napi_callback_info info) {
    size_t argc = 3;
    napi_value argv[3];
    job *j = job_begin(env, info, JSH_KV, &argc, argv);
    if (!j) return NULL;
    if (!get_opt_string(env, argv[1], &j->a)) {
        job_free(j);
        return NULL;
    }
    if (opts_arg(env, argc, argv, 2)) {
        j->wo.include_history = opt_flag(env, argv[2], "includeHistory");
        j->wo.ignore_deletes = opt_flag(env, argv[2], "ignoreDeletes");
        j->wo.meta_only = opt_flag(env, argv[2], "metaOnly");
        j->wo.updates_only = opt_flag(env, argv[2], "updatesOnly");
    }
    return job_queue(env, j, "natsio.kvWatch", exec_kv_watch, result_kv_watch);
}

/* ------------------------------------------------------------------ */
/* module setup and teardown                                            */

static napi_value js_status_str(napi_env env, napi_callback_info info) {
    size_t argc = 1;
    napi_value argv[1], r;
    CHECK_NAPI(env, napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
    int32_t code = 0;
    napi_get_value_int32(env, argv[0], &code);
    napi_create_string_utf8(env, natsio_status_str(code), NAPI_AUTO_LENGTH, &r);
    return r;
}

static napi_value js_version(napi_env env, napi_callback_info info) {
    (void)info;
    napi_value r;
    napi_create_string_utf8(env, natsio_version(), NAPI_AUTO_LENGTH, &r);
    return r;
}

/* reportUncaught(error): a user callback of a message batch threw. Reported
 * as Node reports any uncaught exception of an event callback (the
 * 'uncaughtException' handlers, else exit), as when each message had its
 * own call from the doorbell; the JS layer then goes on with the batch. */
static napi_value js_report_uncaught(napi_env env, napi_callback_info info) {
    size_t argc = 1;
    napi_value argv[1];
    CHECK_NAPI(env, napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
    napi_fatal_exception(env, argv[0]);
    return NULL;
}

/* init(dispatch, makeError): registers the JS entry points. */
static napi_value js_init(napi_env env, napi_callback_info info) {
    size_t argc = 2;
    napi_value argv[2];
    CHECK_NAPI(env, napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
    hub *h = get_hub(env);
    if (h->dispatch_fn) napi_delete_reference(env, h->dispatch_fn);
    if (h->make_error_fn) napi_delete_reference(env, h->make_error_fn);
    napi_create_reference(env, argv[0], 1, &h->dispatch_fn);
    napi_create_reference(env, argv[1], 1, &h->make_error_fn);
    return NULL;
}

/* setActive(bool): keeps the event loop alive while connections are open. */
static napi_value js_set_active(napi_env env, napi_callback_info info) {
    size_t argc = 1;
    napi_value argv[1];
    CHECK_NAPI(env, napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
    hub *h = get_hub(env);
    bool on = false;
    napi_get_value_bool(env, argv[0], &on);
    if (on != h->refed && h->alive) {
        if (on)
            napi_ref_threadsafe_function(env, h->doorbell);
        else
            napi_unref_threadsafe_function(env, h->doorbell);
        h->refed = on;
    }
    return NULL;
}

static void env_cleanup(void *arg) {
    hub *h = arg;
    /* From here on hub_post drops events, and the tsfn is never called again. */
    pthread_mutex_lock(&h->mu);
    h->alive = false;
    napi_threadsafe_function tsfn = h->doorbell;
    h->doorbell = NULL;
    size_t n = 0;
    for (pump *p = h->pumps; p; p = p->next) n++;
    pump **pumps = calloc(n ? n : 1, sizeof *pumps);
    n = 0;
    for (pump *p = h->pumps; p; p = p->next) {
        pthread_mutex_lock(&p->mu);
        p->refs++; /* keep it while we stop it outside the hub lock */
        pthread_mutex_unlock(&p->mu);
        pumps[n++] = p;
    }
    pthread_mutex_unlock(&h->mu);
    /* Close every client and stop every pump, so no library thread keeps
     * working for an environment that is gone. Done without the hub lock:
     * closing waits for running library callbacks, which may be waiting for
     * that lock in hub_post. The client list is only changed on this (the
     * JS) thread. */
    for (client_wrap *c = h->clients; c; c = c->next) natsio_client_close(c->client);
    for (size_t i = 0; i < n; i++) {
        if (pumps[i]->sub) natsio_sub_unsubscribe(pumps[i]->sub);
        pump_stop(pumps[i]);
        pump_release(pumps[i]);
    }
    free(pumps);
    if (tsfn) napi_release_threadsafe_function(tsfn, napi_tsfn_abort);
    hub_release(h);
}

static void doorbell_finalize(napi_env env, void *data, void *hint) {
    (void)env;
    (void)hint;
    hub_release(data);
}

static void hub_instance_finalize(napi_env env, void *data, void *hint) {
    (void)hint;
    hub *h = data;
    /* JS references die with the environment; drop ours so the hub never
     * touches them again. */
    if (h->dispatch_fn) napi_delete_reference(env, h->dispatch_fn);
    if (h->make_error_fn) napi_delete_reference(env, h->make_error_fn);
    h->dispatch_fn = h->make_error_fn = NULL;
    hub_release(h);
}

NAPI_MODULE_INIT(/* napi_env env, napi_value exports */) {
    hub *h = calloc(1, sizeof *h);
    pthread_mutex_init(&h->mu, NULL);
    h->refs = 3; /* the cleanup hook, the doorbell tsfn, the instance data */
    h->alive = true;
    napi_value name;
    napi_create_string_utf8(env, "natsio.doorbell", NAPI_AUTO_LENGTH, &name);
    if (napi_create_threadsafe_function(env, NULL, NULL, name, 1, 1, h, doorbell_finalize, h, doorbell_call_js,
                                        &h->doorbell) != napi_ok) {
        napi_throw_error(env, NULL, "natsio: could not create the thread-safe function");
        return NULL;
    }
    napi_unref_threadsafe_function(env, h->doorbell);
    napi_set_instance_data(env, h, hub_instance_finalize, NULL);
    napi_add_env_cleanup_hook(env, env_cleanup, h);

    napi_property_descriptor props[] = {
#define FN(js, c) {js, NULL, c, NULL, NULL, NULL, napi_default, NULL}
        FN("init", js_init),
        FN("setActive", js_set_active),
        FN("reportUncaught", js_report_uncaught),
        FN("statusStr", js_status_str),
        FN("version", js_version),
        FN("connect", js_connect),
        FN("close", js_close),
        FN("publish", js_publish),
        FN("request", js_request),
        FN("requestMany", js_request_many),
        FN("flush", js_flush),
        FN("drain", js_drain),
        FN("status", js_status),
        FN("maxPayload", js_max_payload),
        FN("serverInfo", js_server_info),
        FN("connectedUrl", js_connected_url),
        FN("newInbox", js_new_inbox),
        FN("stats", js_stats),
        FN("servers", js_servers),
        FN("forceReconnect", js_force_reconnect),
        FN("rtt", js_rtt),
        FN("subscribe", js_subscribe),
        FN("pumpCredit", js_pump_credit),
        FN("pumpStop", js_pump_stop),
        FN("pumpTake", js_pump_take),
        FN("subUnsubscribe", js_sub_unsubscribe),
        FN("subUnsubscribeAfter", js_sub_unsubscribe_after),
        FN("subDrain", js_sub_drain),
        FN("subStats", js_sub_stats),
        FN("subInfo", js_sub_info),
        /* JetStream and Key-Value */
        FN("jetstream", js_jetstream),
        FN("jsClose", jsh_close),
        FN("jsPublish", js_js_publish),
        FN("jsPublishAsync", js_js_publish_async),
        FN("jsPublishAsyncQueued", js_js_publish_async_queued),
        FN("jsPublishAsyncComplete", js_js_publish_async_complete),
        FN("jsPublishAsyncPending", js_js_publish_async_pending),
        FN("jsAccountInfo", js_js_account_info),
        FN("jsStreamPut", js_js_stream_put),
        FN("jsStreamInfo", js_js_stream_info),
        FN("jsStreamDelete", js_js_stream_delete),
        FN("jsStreamPurge", js_js_stream_purge),
        FN("jsStreamNames", js_js_stream_names),
        FN("jsStreamGetMsg", js_js_stream_get_msg),
        FN("jsStreamDeleteMsg", js_js_stream_delete_msg),
        FN("kvOpen", js_kv_open),
        FN("kvDeleteBucket", js_kv_delete_bucket),
        FN("kvBucket", js_kv_bucket),
        FN("kvPut", js_kv_put),
        FN("kvGet", js_kv_get),
        FN("kvDelete", js_kv_delete),
        FN("kvStatus", js_kv_status),
        FN("kvClose", jsh_close),
        FN("kvKeys", js_kv_keys),
        FN("kvHistory", js_kv_history),
        FN("jsConsumerPut", js_js_consumer_put),
        FN("jsConsumerInfo", js_js_consumer_info),
        FN("jsConsumerDelete", js_js_consumer_delete),
        FN("jsConsumerNames", js_js_consumer_names),
        FN("jsFetch", js_js_fetch),
        FN("jsNext", js_js_next),
        FN("jsMsgAck", js_msg_ack),
        FN("jsMsgAckSync", js_msg_ack_sync),
        FN("jsMsgMetadata", js_msg_metadata),
        FN("jsConsume", js_js_consume),
        FN("jsMessagesNext", js_messages_next),
        FN("jsMessagesStop", jsh_close),
        FN("kvWatch", js_kv_watch),
        FN("kvWatcherNext", js_watcher_next),
        FN("kvWatcherStop", jsh_close),
#undef FN
    };
    napi_define_properties(env, exports, sizeof props / sizeof props[0], props);
    return exports;
}
