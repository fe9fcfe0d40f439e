/*
 * Feeds: the core's iterators (subscriptions, request-many replies,
 * consume, KV watch, object watch, batch reads of stored messages) read in
 * the core's push mode and handed to JS in batches.
 *
 *   library dispatcher thread of the iterator (natsio_*_set_callback)
 *       -> keeps the item (a clone, or a copy of a watch entry or a
 *          stored message) in the feed's queue; if the queue was idle,
 *          posts the feed to the hub (one doorbell ring per batch, not per
 *          item)
 *   JS thread (the doorbell)
 *       -> takes what is queued in batches (one JS call per batch) and
 *          hands them to the subscription's callback or iterator.
 *
 * Backpressure: at most `window` items sit between the core and the
 * application (queued here, plus, for iterators, handed to JS but not yet
 * taken by the loop: JS gives that credit back as it consumes). When the
 * window is full the dispatcher thread waits, so the core's own buffer
 * fills up and its pending limits and policies (dropNew, dropOld, block,
 * error) apply exactly as in C; nothing the core handed over is dropped.
 * The wait never blocks a close: JS sets `stopping` before it stops, frees
 * or closes anything that waits for the dispatcher, and a dispatcher whose
 * client has closed without JS asking stops waiting by itself.
 *
 * Why push mode for iterators too (rather than one _next_async token per
 * item): the same batching path serves every kind, one wake-up of the
 * JS thread carries many items, and the window keeps the core's limits in
 * charge. See README.md ("How it works").
 *
 * Subscriptions and service endpoints are read in pull mode instead
 * (below, "Pull mode"): no dispatcher thread; the JS thread takes the
 * messages (requests) from the core's queue itself (an iterator's, within
 * its window).
 */
#include "internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* One JS call carries at most this many items or payload bytes (the
 * payloads of one message batch share one ArrayBuffer, so the byte cap
 * bounds what one retained msg.data keeps alive). */
enum { BATCH_MAX_ITEMS = 256 };
#define BATCH_MAX_BYTES ((size_t)256 * 1024)
/* A callback feed hands over at most this many items per doorbell turn,
 * then yields to the event loop (timers, I/O, other feeds). */
enum { TURN_BUDGET = 8192 };
/* The window also stops at this many payload bytes queued here (a large
 * item window of large messages would otherwise hold gigabytes). */
#define WINDOW_MAX_BYTES ((size_t)1024 * 1024)
/* How often a waiting dispatcher checks whether its client closed. */
enum { WAIT_CHECK_MS = 50 };

/* A watch entry, copied out of the callback (the ABI has no entry clone). */
typedef struct kv_item {
    uint64_t revision, delta;
    int64_t created_ns;
    int32_t op;
    size_t value_len;
    char *bucket, *key, *value; /* in the same allocation */
} kv_item;

/* A stored message of a batch read, copied out of the callback (the ABI
 * has no stored-message clone). */
typedef struct stored_item {
    uint64_t seq;
    int64_t time_ns;
    size_t data_len;
    natsio_headers *headers; /* a clone, or NULL */
    char *subject, *data;    /* in the same allocation */
} stored_item;

typedef struct feed {
    hub *hub;
    int kind;
    void *handle; /* natsio_sub / natsio_replies / natsio_js_messages / natsio_kv_watcher / natsio_obj_watcher /
                     natsio_stored_msgs / natsio_kv_key_lister */
    /* JS thread only */
    client_wrap *cw;
    uint32_t id;
    bool started;
    bool js_stopped;
    /* Pull mode (subscriptions and endpoints, once started), JS thread
     * only: the armed next token and, for an iterator of a kind that has
     * one, its end token, both registered on the hub's completion
     * queue (each holds a ref); whether feed_pulled is running (a credit
     * given back during its delivery leaves the next token to it). */
    natsio_token *armed, *end_watch;
    bool pulling;
    struct feed *prev, *next; /* in hub->feeds */
    /* shared with the dispatcher thread, under mu */
    pthread_mutex_t mu;
    pthread_cond_t cv;
    void **ring;
    size_t cap, head, count;
    size_t queued_bytes; /* item_bytes of the queued items */
    int64_t lent; /* handed to a JS iterator, not yet consumed */
    int64_t window;
    bool auto_credit; /* callback mode: taken = consumed */
    bool stopping;    /* JS wants nothing more: drop, never wait */
    bool ended, end_delivered, scheduled;
    int32_t end_status;
    char *end_text;
    err_data end_data; /* the error data of a failed end */
    int refs; /* JS external, core registration, each posted event */
} feed;

static void item_free(int kind, void *item) { FEED_KINDS[kind].items->free(item); }

/* The payload bytes of an item, for the batch byte cap. */
static size_t item_bytes(int kind, void *item) { return FEED_KINDS[kind].items->bytes(item); }

void feed_release(feed *f) {
    pthread_mutex_lock(&f->mu);
    int left = --f->refs;
    pthread_mutex_unlock(&f->mu);
    if (left) return;
    for (size_t i = 0; i < f->count; i++) item_free(f->kind, f->ring[(f->head + i) % f->cap]);
    free(f->ring);
    free(f->end_text);
    hub_release(f->hub);
    pthread_cond_destroy(&f->cv);
    pthread_mutex_destroy(&f->mu);
    free(f);
}

/* Posts the feed to the hub (caller saw scheduled false and set it). */
static void feed_post(feed *f) {
    hub_event *e = calloc(1, sizeof *e);
    if (!e) return;
    e->kind = HEV_FEED;
    e->feed = f; /* the reference taken by the caller */
    hub_post(f->hub, e);
}

/* The kinds read in pull mode: those whose pushed items are the library's
 * own (a clone), so that a pulled item is delivered the same way. */
static bool pulled(int kind) { return kind == FEED_SUB || kind == FEED_ENDPOINT; }

static bool owner_closed(feed *f) {
    /* Pulled kinds never get here: no dispatcher thread waits. */
    return f->cw && natsio_client_status(f->cw->client) == NATSIO_CONN_CLOSED;
}

static bool ring_push(feed *f, void *item) {
    if (f->count == f->cap) {
        size_t cap = f->cap ? f->cap * 2 : 64;
        void **r = malloc(cap * sizeof *r);
        if (!r) return false;
        for (size_t i = 0; i < f->count; i++) r[i] = f->ring[(f->head + i) % f->cap];
        free(f->ring);
        f->ring = r;
        f->cap = cap;
        f->head = 0;
    }
    f->ring[(f->head + f->count) % f->cap] = item;
    f->count++;
    return true;
}

/* Dispatcher thread: keeps one item, then waits while the window is full.
 * Waiting after the item is queued, not before, keeps the library's
 * dispatcher in its callback while the window holds the item: the library
 * counts an item in a callback against a pull flow's budget (consume's
 * max_messages), so the item is counted by one side or the other (for a
 * while by both), never by neither, and what the window holds is within
 * what index.js splits off the budget for it. */
static void feed_push(feed *f, void *item) {
    pthread_mutex_lock(&f->mu);
    if (f->stopping || !ring_push(f, item)) {
        pthread_mutex_unlock(&f->mu);
        item_free(f->kind, item);
        return;
    }
    f->queued_bytes += item_bytes(f->kind, item);
    bool post = !f->scheduled;
    if (post) {
        f->scheduled = true;
        f->refs++;
    }
    pthread_mutex_unlock(&f->mu);
    if (post) feed_post(f);
    pthread_mutex_lock(&f->mu);
    while (!f->stopping &&
           ((int64_t)f->count + f->lent >= f->window || f->queued_bytes >= WINDOW_MAX_BYTES)) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += (long)WAIT_CHECK_MS * 1000000L;
        if (ts.tv_nsec >= 1000000000L) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000L;
        }
        if (pthread_cond_timedwait(&f->cv, &f->mu, &ts) == ETIMEDOUT && owner_closed(f)) {
            /* Closed under us (drain timeout, lost connection without
             * reconnect): the close waits for this thread, so leave the
             * item beyond the window rather than wait. */
            break;
        }
    }
    pthread_mutex_unlock(&f->mu);
}

/* How an iteration ended: its status (NATSIO_DONE for a clean end), and
 * the error detail of the call that saw it, read at once (on the JS
 * thread a callback may fail a call of its own before the end is
 * delivered). */
typedef struct end_outcome {
    int32_t status;
    char *text;
    err_data data;
} end_outcome;

static end_outcome end_outcome_of(int32_t status) {
    end_outcome o = {status == NATSIO_OK ? NATSIO_DONE : status, NULL, {0, 0, 0}};
    if (o.status != NATSIO_DONE) {
        o.text = dup_str(natsio_last_error());
        o.data = last_err_data();
    }
    return o;
}

/* Dispatcher thread: the final call. */
static void feed_end(feed *f, natsio_status status) {
    end_outcome o = end_outcome_of(status);
    pthread_mutex_lock(&f->mu);
    f->ended = true;
    f->end_data = o.data;
    f->end_status = o.status;
    f->end_text = o.text;
    bool post = !f->scheduled;
    if (post) {
        f->scheduled = true;
        f->refs++;
    }
    pthread_mutex_unlock(&f->mu);
    if (post) feed_post(f);
}

void feed_on_msg(void *user_data, const natsio_msg *msg, natsio_status status) {
    feed *f = user_data;
    if (!msg) {
        feed_end(f, status);
        return;
    }
    natsio_msg *m = NULL;
    if (natsio_msg_clone(msg, &m) == NATSIO_OK) feed_push(f, m);
}

void feed_on_kv_entry(void *user_data, const natsio_kv_entry *e, natsio_status status) {
    feed *f = user_data;
    if (!e) {
        feed_end(f, status);
        return;
    }
    const char *bucket = natsio_kv_entry_bucket(e), *key = natsio_kv_entry_key(e);
    size_t bl = bucket ? strlen(bucket) : 0, kl = key ? strlen(key) : 0, vl = natsio_kv_entry_value_len(e);
    kv_item *it = malloc(sizeof *it + bl + 1 + kl + 1 + vl + 1);
    if (!it) return;
    it->bucket = (char *)(it + 1);
    it->key = it->bucket + bl + 1;
    it->value = it->key + kl + 1;
    memcpy(it->bucket, bucket ? bucket : "", bl + 1);
    memcpy(it->key, key ? key : "", kl + 1);
    if (vl) memcpy(it->value, natsio_kv_entry_value(e), vl);
    it->value[vl] = 0;
    it->value_len = vl;
    it->revision = natsio_kv_entry_revision(e);
    it->delta = natsio_kv_entry_delta(e);
    it->created_ns = natsio_kv_entry_created_ns(e);
    it->op = (int32_t)natsio_kv_entry_operation(e);
    feed_push(f, it);
}

void feed_on_obj_info(void *user_data, const natsio_obj_info *info, natsio_status status) {
    feed *f = user_data;
    if (!info) {
        feed_end(f, status);
        return;
    }
    natsio_obj_info *copy = NULL;
    if (natsio_obj_info_clone(info, &copy) == NATSIO_OK) feed_push(f, copy);
}

void feed_on_stored_msg(void *user_data, const natsio_stored_msg *m, natsio_status status) {
    feed *f = user_data;
    if (!m) {
        feed_end(f, status);
        return;
    }
    const char *subject = natsio_stored_msg_subject(m);
    size_t sl = subject ? strlen(subject) : 0, dl = natsio_stored_msg_data_len(m);
    stored_item *it = malloc(sizeof *it + sl + 1 + dl + 1);
    if (!it) return;
    it->headers = NULL;
    const natsio_headers *hd = natsio_stored_msg_headers(m);
    if (hd && natsio_headers_clone(hd, &it->headers) != NATSIO_OK) {
        free(it);
        return;
    }
    it->subject = (char *)(it + 1);
    it->data = it->subject + sl + 1;
    memcpy(it->subject, subject ? subject : "", sl + 1);
    if (dl) memcpy(it->data, natsio_stored_msg_data(m), dl);
    it->data[dl] = 0;
    it->data_len = dl;
    it->seq = natsio_stored_msg_seq(m);
    it->time_ns = natsio_stored_msg_time_ns(m);
    feed_push(f, it);
}

void feed_on_string(void *user_data, const char *key, natsio_status status) {
    feed *f = user_data;
    if (!key) {
        feed_end(f, status);
        return;
    }
    char *copy = strdup(key);
    if (copy) feed_push(f, copy);
}

/* An endpoint's request: its handler runs later on the JS thread, which
 * reports a failure itself (service_request_fail), so this one succeeds. */
natsio_status feed_on_service_request(void *user_data, const natsio_service_request *req, natsio_status status) {
    feed *f = user_data;
    if (!req) {
        feed_end(f, status);
        return NATSIO_OK;
    }
    natsio_service_request *own = NULL;
    if (natsio_service_request_clone(req, &own) == NATSIO_OK) feed_push(f, own);
    return NATSIO_OK;
}

static void on_release(void *user_data) { feed_release(user_data); }

/* ------------------------------------------------------------------ */
/* JS thread                                                            */

/* [bucket, key, value, revision, operation, createdMs, delta], or true for
 * the initial-values marker. */
static napi_value kv_item_to_js(napi_env env, const kv_item *e) {
    napi_value arr, v;
    if (e->op == NATSIO_KV_INITIAL_DONE) {
        napi_get_boolean(env, true, &v);
        return v;
    }
    napi_create_array_with_length(env, 7, &arr);
    napi_create_string_utf8(env, e->bucket, NAPI_AUTO_LENGTH, &v);
    napi_set_element(env, arr, 0, v);
    napi_create_string_utf8(env, e->key, NAPI_AUTO_LENGTH, &v);
    napi_set_element(env, arr, 1, v);
    void *copy;
    napi_create_buffer_copy(env, e->value_len, e->value, &copy, &v);
    napi_set_element(env, arr, 2, v);
    napi_create_double(env, (double)e->revision, &v);
    napi_set_element(env, arr, 3, v);
    napi_create_int32(env, e->op, &v);
    napi_set_element(env, arr, 4, v);
    napi_create_double(env, (double)(e->created_ns / 1000000), &v);
    napi_set_element(env, arr, 5, v);
    napi_create_double(env, (double)e->delta, &v);
    napi_set_element(env, arr, 6, v);
    return arr;
}

/* ---- how the items of each presentation reach JS (gen/gen.h's feed_items) ---- */

static void msg_free(void *item) { natsio_msg_free(item); }
static size_t msg_bytes(const void *item) { return natsio_msg_data_len(item); }

/* Messages of a subscription or request-many: one batch_to_js call. */
static void deliver_msgs(napi_env env, feed *f, void **items, uint32_t n) {
    napi_value args[5];
    napi_create_uint32(env, n, &args[0]);
    batch_to_js(env, items, n, &args[1]);
    for (uint32_t i = 0; i < n; i++) natsio_msg_free(items[i]);
    hub_dispatch(env, f->hub, f->id, EV_MSG, args, 5);
}
const feed_items feed_items_msg = {msg_free, msg_bytes, deliver_msgs};

/* JetStream messages: one handle for the batch, which takes them over. */
static void deliver_js_msgs(napi_env env, feed *f, void **items, uint32_t n) {
    napi_value args[2];
    napi_create_uint32(env, n, &args[0]);
    natsio_msg **msgs = malloc((size_t)n * sizeof *msgs);
    if (msgs) memcpy(msgs, items, (size_t)n * sizeof *msgs);
    args[1] = msgs ? js_msgs_to_js(env, msgs, n) : NULL;
    if (!msgs) {
        for (uint32_t i = 0; i < n; i++) natsio_msg_free(items[i]);
        throw_status(env, NATSIO_ERR_INTERNAL, "out of memory");
    }
    if (!args[1]) {
        napi_value exc;
        napi_get_and_clear_last_exception(env, &exc);
        return;
    }
    hub_dispatch(env, f->hub, f->id, EV_ITEMS, args, 2);
}
const feed_items feed_items_js_msg = {msg_free, msg_bytes, deliver_js_msgs};

/* Items that become one JS value each, in an array: `to_js` takes the item. */
static void deliver_values(napi_env env, feed *f, void **items, uint32_t n, napi_value (*to_js)(napi_env, void *)) {
    napi_value args[2];
    napi_create_uint32(env, n, &args[0]);
    napi_create_array_with_length(env, n, &args[1]);
    for (uint32_t i = 0; i < n; i++) {
        napi_value v = to_js(env, items[i]);
        if (v) napi_set_element(env, args[1], i, v);
    }
    if (exception_pending(env)) {
        napi_value exc;
        napi_get_and_clear_last_exception(env, &exc);
    }
    hub_dispatch(env, f->hub, f->id, EV_ITEMS, args, 2);
}

static size_t kv_item_bytes(const void *item) { return ((const kv_item *)item)->value_len; }
static napi_value kv_item_take_js(napi_env env, void *item) {
    napi_value v = kv_item_to_js(env, item);
    free(item);
    return v;
}
static void deliver_kv_items(napi_env env, feed *f, void **items, uint32_t n) {
    deliver_values(env, f, items, n, kv_item_take_js);
}
const feed_items feed_items_kv_entry = {free, kv_item_bytes, deliver_kv_items};

static void obj_info_free(void *item) { natsio_obj_info_free(item); }
static size_t no_bytes(const void *item) {
    (void)item;
    return 0;
}
static napi_value obj_info_item_js(napi_env env, void *item) { return obj_info_take_js(env, item); }
static void deliver_obj_infos(napi_env env, feed *f, void **items, uint32_t n) {
    deliver_values(env, f, items, n, obj_info_item_js);
}
const feed_items feed_items_obj_info = {obj_info_free, no_bytes, deliver_obj_infos};

static void stored_item_free(void *item) {
    natsio_headers_free(((stored_item *)item)->headers);
    free(item);
}
static size_t stored_item_bytes(const void *item) { return ((const stored_item *)item)->data_len; }
static napi_value stored_item_take_js(napi_env env, void *item) {
    const stored_item *it = item;
    napi_value v = stored_fields_to_js(env, it->subject, it->seq, it->time_ns, it->data, it->data_len, it->headers);
    stored_item_free(item);
    return v;
}
static void deliver_stored_items(napi_env env, feed *f, void **items, uint32_t n) {
    deliver_values(env, f, items, n, stored_item_take_js);
}
const feed_items feed_items_stored_msg = {stored_item_free, stored_item_bytes, deliver_stored_items};

static size_t string_bytes(const void *item) { return strlen(item); }
static napi_value string_take_js(napi_env env, void *item) {
    napi_value v;
    napi_create_string_utf8(env, item, NAPI_AUTO_LENGTH, &v);
    free(item);
    return v;
}
static void deliver_strings(napi_env env, feed *f, void **items, uint32_t n) {
    deliver_values(env, f, items, n, string_take_js);
}
const feed_items feed_items_string = {free, string_bytes, deliver_strings};

static void service_request_free(void *item) { natsio_service_request_free(item); }
static size_t service_request_bytes(const void *item) {
    return natsio_msg_data_len(natsio_service_request_msg(item));
}
static napi_value service_request_item_js(napi_env env, void *item) { return service_request_take_js(env, item); }
static void deliver_service_requests(napi_env env, feed *f, void **items, uint32_t n) {
    deliver_values(env, f, items, n, service_request_item_js);
}
const feed_items feed_items_service_request = {service_request_free, service_request_bytes, deliver_service_requests};

/* Hands a batch to JS (and frees or hands over the items). */
static void deliver(napi_env env, feed *f, void **items, uint32_t n) { FEED_KINDS[f->kind].items->deliver(env, f, items, n); }

/* Hands the end to JS (takes `text`). */
static void deliver_end(napi_env env, feed *f, int32_t status, char *text, err_data data) {
    /* status, detail, apiCode, errCode, revision */
    napi_value args[5];
    napi_create_int32(env, status, &args[0]);
    if (text)
        napi_create_string_utf8(env, text, NAPI_AUTO_LENGTH, &args[1]);
    else
        napi_get_undefined(env, &args[1]);
    free(text);
    napi_create_int32(env, data.code, &args[2]);
    napi_create_int32(env, data.err_code, &args[3]);
    napi_create_double(env, (double)data.revision, &args[4]);
    if (f->id) hub_dispatch(env, f->hub, f->id, EV_END, args, 5);
}

void feed_process(napi_env env, feed *f) {
    void *items[BATCH_MAX_ITEMS];
    int64_t budget = TURN_BUDGET;
    for (;;) {
        uint32_t n = 0;
        size_t bytes = 0;
        pthread_mutex_lock(&f->mu);
        while (f->count > 0 && n < BATCH_MAX_ITEMS && bytes < BATCH_MAX_BYTES) {
            void *it = f->ring[f->head];
            f->head = (f->head + 1) % f->cap;
            f->count--;
            items[n++] = it;
            bytes += item_bytes(f->kind, it);
        }
        bool end_now = f->ended && f->count == 0 && !f->end_delivered;
        if (end_now) f->end_delivered = true;
        if (n == 0 && !end_now) {
            f->scheduled = false;
            pthread_mutex_unlock(&f->mu);
            return;
        }
        f->queued_bytes -= bytes;
        if (!f->auto_credit) f->lent += n;
        if (n) pthread_cond_broadcast(&f->cv);
        bool drop = f->stopping || f->js_stopped;
        int32_t end_status = f->end_status;
        err_data end_data = f->end_data;
        char *end_text = end_now ? f->end_text : NULL;
        if (end_now) f->end_text = NULL;
        pthread_mutex_unlock(&f->mu);

        if (n) {
            if (drop || !f->id) {
                for (uint32_t i = 0; i < n; i++) item_free(f->kind, items[i]);
            } else {
                napi_handle_scope scope; /* one per batch: a turn may carry many */
                napi_open_handle_scope(env, &scope);
                deliver(env, f, items, n);
                napi_close_handle_scope(env, scope);
            }
        }
        if (end_now) {
            deliver_end(env, f, end_status, end_text, end_data);
            return; /* nothing follows the end: scheduled stays set */
        }
        budget -= n;
        if (budget <= 0) {
            /* Yield: a fresh event continues after the event loop ran. */
            pthread_mutex_lock(&f->mu);
            bool more = f->count > 0 || (f->ended && !f->end_delivered);
            if (more)
                f->refs++;
            else
                f->scheduled = false;
            pthread_mutex_unlock(&f->mu);
            if (more) feed_post(f);
            return;
        }
    }
}

/* ------------------------------------------------------------------ */
/* Pull mode: a subscription's messages, taken by the JS thread          */
/*                                                                        */
/* No dispatcher thread: a natsio_sub_next_async token on the hub's       */
/* completion queue rings the doorbell when a message is queued in the    */
/* core; the JS thread then takes what is queued itself (up to            */
/* TURN_BUDGET per turn; an iterator, up to its window's room) and arms a */
/* new token (an iterator with a full window, once its loop gives credit  */
/* back; its natsio_sub_end_async token brings an end meanwhile). Why:    */
/* the core's queue is then the only one, so its pending limits mean what */
/* they say, and a JS thread that also publishes takes everything that    */
/* arrived at each turn. Through a dispatcher thread, which a busy 2-core */
/* machine gave too little CPU, the messages waited in the core while     */
/* that thread fell behind a publisher sharing the JS thread, until the   */
/* core's pending limit dropped some (a callback's pubsub run in three to */
/* eight, an iterator's in five).                                         */

static void pull_arm(napi_env env, feed *f);
static void pull_arm_if_room(napi_env env, feed *f);

/* Delivers the end, unless JS is gone or has it already; takes o.text. */
static void pull_end(napi_env env, feed *f, end_outcome o) {
    if (env == NULL || f->handle == NULL || f->end_delivered) {
        free(o.text);
        return;
    }
    pthread_mutex_lock(&f->mu);
    f->ended = f->end_delivered = true;
    pthread_mutex_unlock(&f->mu);
    deliver_end(env, f, o.status, o.text, o.data);
}

static bool pull_stopped(const feed *f) { return f->handle == NULL || f->js_stopped || f->stopping; }

/* The armed token completed (its tag was polled): deliver what is queued,
 * then arm a new token or deliver the end. env NULL: teardown, nobody to
 * deliver to. Releases the completed token's ref. */
void feed_pulled(napi_env env, feed *f) {
    const feed_kind *k = &FEED_KINDS[f->kind];
    natsio_token *tok = f->armed;
    f->armed = NULL;
    void *first = NULL;
    int32_t st = tok ? k->take(tok, &first) : NATSIO_DONE;
    end_outcome end = end_outcome_of(st);
    natsio_token_free(tok);
    if (env == NULL || st != NATSIO_OK || pull_stopped(f)) {
        if (first) item_free(f->kind, first);
        pull_end(env, f, end); /* a stop or a close completes the token too */
        feed_release(f);
        return;
    }
    void *items[BATCH_MAX_ITEMS];
    uint32_t n = 0;
    size_t bytes = 0;
    /* A callback takes what is queued (up to the turn's budget); an
     * iterator only what its window has room for (its token is armed only
     * while there is room, so the first message fits). */
    int64_t budget = TURN_BUDGET;
    if (!f->auto_credit) {
        pthread_mutex_lock(&f->mu);
        int64_t room = f->window - f->lent;
        pthread_mutex_unlock(&f->mu);
        if (room < budget) budget = room < 1 ? 1 : room;
    }
    f->pulling = true;
    items[n++] = first;
    bytes += item_bytes(f->kind, first);
    for (;;) {
        bool full = n == BATCH_MAX_ITEMS || bytes >= BATCH_MAX_BYTES;
        if (!full && budget > (int64_t)n) {
            void *m = NULL;
            st = k->next_now(f->handle, &m);
            if (st == NATSIO_OK) {
                items[n++] = m;
                bytes += item_bytes(f->kind, m);
                continue;
            }
            if (st != NATSIO_ERR_TIMEOUT) end = end_outcome_of(st);
        }
        if (n) {
            if (!f->auto_credit) {
                pthread_mutex_lock(&f->mu);
                f->lent += n; /* before JS can give any of it back */
                pthread_mutex_unlock(&f->mu);
            }
            napi_handle_scope scope;
            napi_open_handle_scope(env, &scope);
            deliver(env, f, items, n);
            napi_close_handle_scope(env, scope);
            budget -= n;
            n = 0;
            bytes = 0;
        }
        if (pull_stopped(f)) {
            /* A callback stopped the subscription (no token is armed to
             * bring its end) or closed its client. */
            f->pulling = false;
            free(end.text);
            pull_end(env, f, end_outcome_of(NATSIO_DONE));
            feed_release(f);
            return;
        }
        if (!full || budget <= 0) break;
    }
    f->pulling = false;
    if (st != NATSIO_OK && st != NATSIO_ERR_TIMEOUT) {
        pull_end(env, f, end);
    } else {
        /* Queue empty (NATSIO_ERR_TIMEOUT) or budget spent: a message
         * queued already completes the new token at once, whose tag rings
         * the doorbell again: the event loop runs before the next batch.
         * An iterator with a full window waits for its credit instead. */
        pull_arm_if_room(env, f);
    }
    feed_release(f);
}

/* Arms the next token, unless an iterator's window is full: its credit
 * arms it then (js_feed_credit), and meanwhile its end-watch token brings
 * an end that comes while it takes nothing. */
static void pull_arm_if_room(napi_env env, feed *f) {
    if (f->armed || f->pulling || f->end_delivered || pull_stopped(f)) return;
    pthread_mutex_lock(&f->mu);
    bool room = f->auto_credit || f->lent < f->window;
    pthread_mutex_unlock(&f->mu);
    if (room) pull_arm(env, f);
}

/* The end-watch token completed: the subscription ended. With a next
 * token armed (or a delivery running), that path delivers the end after
 * the messages before it; otherwise (a full window) it is delivered now:
 * the iterator yields it after what it holds. */
void feed_end_watched(napi_env env, feed *f) {
    natsio_token *tok = f->end_watch;
    f->end_watch = NULL;
    int32_t st = tok ? natsio_token_status(tok) : NATSIO_OK;
    /* A stop is a clean end here, as in the message path. */
    end_outcome end = end_outcome_of(st == NATSIO_ERR_SUBSCRIPTION_CLOSED ? NATSIO_DONE : st);
    natsio_token_free(tok);
    if (env != NULL && !f->armed && !f->pulling && !pull_stopped(f))
        pull_end(env, f, end);
    else
        free(end.text);
    feed_release(f);
}

/* Registers `tok` on the hub's completion queue with `tag` (the feed and a
 * HUB_TAG_ kind); the token holds a ref of the feed. False (the token
 * freed, the end delivered) when the queue refuses it. */
static bool pull_register(napi_env env, feed *f, natsio_token *tok, uint64_t kind) {
    pthread_mutex_lock(&f->mu);
    f->refs++; /* the token's, released when its tag is handled */
    pthread_mutex_unlock(&f->mu);
    int32_t st = natsio_token_complete_to(tok, f->hub->completions, (uint64_t)(uintptr_t)f | kind);
    if (st == NATSIO_OK) return true;
    end_outcome end = end_outcome_of(st);
    natsio_token_free(tok);
    pull_end(env, f, end);
    feed_release(f);
    return false;
}

static void pull_arm(napi_env env, feed *f) {
    natsio_token *tok = NULL;
    int32_t st = FEED_KINDS[f->kind].next_async(f->handle, &tok);
    if (st != NATSIO_OK) {
        pull_end(env, f, end_outcome_of(st));
        return;
    }
    f->armed = tok;
    if (!pull_register(env, f, tok, HUB_TAG_FEED)) f->armed = NULL;
}

/* Starts pull mode: the first next token and, for an iterator (whose
 * next token waits for credit while its window is full), the end watch. */
static void pull_start(napi_env env, feed *f) {
    /* Without an end token (an endpoint), an end that comes while the
     * window is full is seen once the loop gives credit back. */
    if (!f->auto_credit && FEED_KINDS[f->kind].end_async) {
        natsio_token *tok = NULL;
        int32_t st = FEED_KINDS[f->kind].end_async(f->handle, &tok);
        if (st != NATSIO_OK) {
            pull_end(env, f, end_outcome_of(st));
            return;
        }
        f->end_watch = tok;
        if (!pull_register(env, f, tok, HUB_TAG_FEED_END)) {
            f->end_watch = NULL;
            return;
        }
    }
    pull_arm(env, f);
}

static void set_stopping(feed *f) {
    pthread_mutex_lock(&f->mu);
    f->stopping = true;
    pthread_cond_broadcast(&f->cv);
    pthread_mutex_unlock(&f->mu);
}

void feeds_release_client(hub *h, client_wrap *cw) {
    for (feed *f = h->feeds; f; f = f->next)
        if (!cw || f->cw == cw) set_stopping(f);
}

static void handle_free(feed *f) {
    FEED_KINDS[f->kind].free(f->handle);
    f->handle = NULL;
}

static void feed_finalize(napi_env env, void *data, void *hint) {
    (void)env;
    (void)hint;
    feed *f = data;
    hub *h = f->hub;
    f->js_stopped = true;
    set_stopping(f);
    if (f->prev)
        f->prev->next = f->next;
    else if (h->feeds == f)
        h->feeds = f->next;
    if (f->next) f->next->prev = f->prev;
    f->prev = f->next = NULL;
    if (f->handle) live_count_feed(f->kind, -1);
    handle_free(f); /* stops; waits for the dispatcher's final call */
    if (f->cw) client_release(f->cw);
    f->cw = NULL;
    feed_release(f);
}

napi_value feed_wrap(napi_env env, int kind, void *handle, client_wrap *cw) {
    hub *h = get_hub(env);
    feed *f = calloc(1, sizeof *f);
    if (!f) {
        feed tmp = {.kind = kind, .handle = handle};
        handle_free(&tmp);
        throw_status(env, NATSIO_ERR_INTERNAL, "out of memory");
        return NULL;
    }
    f->hub = h;
    hub_retain(h);
    f->kind = kind;
    f->handle = handle;
    live_count_feed(kind, 1);
    f->cw = cw;
    if (cw) client_retain(cw);
    f->window = 256;
    f->refs = 1;
    pthread_mutex_init(&f->mu, NULL);
    pthread_cond_init(&f->cv, NULL);
    f->next = h->feeds;
    if (f->next) f->next->prev = f;
    h->feeds = f;
    napi_value ext;
    if (napi_create_external(env, f, feed_finalize, NULL, &ext) != napi_ok) {
        feed_finalize(env, f, NULL);
        napi_throw_error(env, NULL, "natsio addon: napi_create_external failed");
        return NULL;
    }
    return ext;
}

static feed *get_feed(napi_env env, napi_value v, int kind) {
    void *p = NULL;
    if (napi_get_value_external(env, v, &p) != napi_ok || !p || (kind && ((feed *)p)->kind != kind)) {
        napi_throw_type_error(env, NULL, "not a natsio subscription handle");
        return NULL;
    }
    return p;
}

void *feed_handle(napi_env env, napi_value v, int kind) {
    feed *f = get_feed(env, v, kind);
    if (f && !f->handle) {
        throw_status(env, NATSIO_ERR_ILLEGAL_STATE, "the iterator is freed");
        return NULL;
    }
    return f ? f->handle : NULL;
}

/* feedStart(feed, id, window, callbackMode): switches the core iterator to
 * push mode; items flow to dispatch(id, ...) from now on. */
EXPORT(js_feed_start) {
    ARGS(4);
    feed *f = get_feed(env, argv[0], 0);
    if (!f) return NULL;
    if (f->started) {
        throw_status(env, NATSIO_ERR_ILLEGAL_STATE, "already started");
        return NULL;
    }
    napi_get_value_uint32(env, argv[1], &f->id);
    int64_t w = get_i64(env, argv[2], 256);
    bool cb = false;
    napi_get_value_bool(env, argv[3], &cb);
    pthread_mutex_lock(&f->mu);
    f->window = w < 1 ? 1 : w;
    f->auto_credit = cb;
    f->refs++; /* the core's, released by on_release */
    pthread_mutex_unlock(&f->mu);
    if (pulled(f->kind)) {
        /* Pull mode (above): no core callback, the armed tokens hold the feed. */
        pthread_mutex_lock(&f->mu);
        f->refs--;
        pthread_mutex_unlock(&f->mu);
        f->started = true;
        pull_start(env, f);
        return NULL;
    }
    int32_t st = FEED_KINDS[f->kind].set_callback(f->handle, f, on_release);
    if (st != NATSIO_OK) {
        napi_value err = make_last_error(env, st);
        pthread_mutex_lock(&f->mu);
        f->refs--;
        pthread_mutex_unlock(&f->mu);
        napi_throw(env, err);
        return NULL;
    }
    f->started = true;
    return NULL;
}

/* feedCredit(feed, n): a JS iterator consumed n items. */
EXPORT(js_feed_credit) {
    ARGS(2);
    feed *f = get_feed(env, argv[0], 0);
    if (!f) return NULL;
    int64_t n = get_i64(env, argv[1], 0);
    pthread_mutex_lock(&f->mu);
    f->lent -= n;
    if (f->lent < 0) f->lent = 0;
    pthread_cond_broadcast(&f->cv);
    pthread_mutex_unlock(&f->mu);
    if (pulled(f->kind) && f->started) pull_arm_if_room(env, f); /* pull mode */
    return NULL;
}

/* feedStop(feed): ends the iteration now (unsubscribe, stop). When it
 * returns the dispatcher has made its final call. Idempotent. */
EXPORT(js_feed_stop) {
    ARGS(1);
    feed *f = get_feed(env, argv[0], 0);
    if (!f) return NULL;
    f->js_stopped = true;
    set_stopping(f);
    if (f->handle) throw_if_failed(env, FEED_KINDS[f->kind].stop(f->handle));
    return NULL;
}

/* feedStats(feed) -> {delivered, dropped, pendingMsgs, pendingBytes, stalls} */
EXPORT(js_feed_stats) {
    ARGS(1);
    feed *f = get_feed(env, argv[0], 0);
    if (!f) return NULL;
    natsio_iter_stats s;
    int32_t st = FEED_KINDS[f->kind].get_stats(f->handle, &s);
    if (throw_if_failed(env, st)) return NULL;
    return iter_stats_to_js(env, &s);
}
