/*
 * The one iterator contract of the C ABI, checked identically for every
 * iterator kind against a real nats-server: subscriptions (natsio_sub),
 * request-many replies (natsio_replies), consume (natsio_js_messages) and
 * Key-Value watches (natsio_kv_watcher).
 *
 * Each kind is an adapter (it_kind: create an iterator, make items arrive,
 * next, next_async, token result, set_callback, stop, get_stats, free);
 * each check is written once against the adapter and registered for every
 * kind ("check/kind"). Items are payloads "item-0", "item-1", ... in the
 * order they were produced (by a second client).
 *
 * Then the two scenarios of issue 12: a lagging KV watcher sees every change
 * made after the watch started, and consume and watch resume within 2 s of
 * a server killed with SIGKILL and restarted on the same port and store.
 *
 * The contract checks share one server; the scenarios start their own.
 */
#define _POSIX_C_SOURCE 200809L

#include "harness.h"

#include <natsio.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- helpers ------------------------------------------------------------------ */

static pthread_t g_main_thread;
static nt_server *g_srv; /* shared by the contract checks */
static int g_seq;        /* makes names unique within the program */

static char g_sentinel_storage[4];
#define SENTINEL ((void *)&g_sentinel_storage[1])
#define ST(s) natsio_status_str(s)

#define OK(call)                                                                         \
    do {                                                                                 \
        natsio_status ok_ = (call);                                                      \
        NT_CHECK_MSG(ok_ == NATSIO_OK, "%s: %s (%s)", #call, natsio_status_str(ok_),     \
                     natsio_last_error());                                               \
    } while (0)

#define EXPECT(want, call)                                                               \
    do {                                                                                 \
        natsio_status got_ = (call);                                                     \
        NT_CHECK_MSG(got_ == (natsio_status)(want), "%s: got %s, want %s (%s)", #call,  \
                     natsio_status_str(got_), natsio_status_str(want),                   \
                     natsio_last_error());                                               \
    } while (0)

#define OKB(call)                                                                        \
    do {                                                                                 \
        natsio_status ok_ = (call);                                                      \
        if (ok_ != NATSIO_OK) {                                                          \
            nt_fail_at(__FILE__, __LINE__, "%s: %s (%s)", #call, natsio_status_str(ok_), \
                       natsio_last_error());                                             \
            return false;                                                                \
        }                                                                                \
    } while (0)

/* ---- the fixture of one iterator ------------------------------------------------ */

typedef struct {
    int n;             /* unique number: names */
    int produced;      /* items made to arrive so far */
    natsio_client *c;  /* the iterator's client */
    natsio_client *c2; /* the producer's client */
    natsio_js *js, *js2;
    natsio_kv *kv2; /* the producer's bucket handle */
    natsio_kv *kv;
    natsio_sub *responder; /* replies: receives the request on c2 */
    char subject[64];
    char reply[192]; /* replies: where the producer answers */
    char stream[32], bucket[32];
    /* The iterator, one of: */
    natsio_sub *sub;
    natsio_replies *replies;
    natsio_js_messages *msgs;
    natsio_kv_watcher *w;
    bool freed; /* the iterator handle was freed by the check */
} it_fx;

/* An item read back: its payload, and what the call did to the out pointer. */
typedef struct {
    char payload[64];
    bool out_null;      /* set to NULL (NATSIO_DONE) */
    bool out_untouched; /* left as it was (errors) */
    uint64_t revision;  /* KV entries */
} item_t;

/* Records push-mode calls. */
#define MAXREC 256
typedef struct {
    pthread_mutex_t mu;
    char items[MAXREC][32];
    int nitems;
    int finals;
    natsio_status final_status;
    int bad_calls;         /* an item with a non-OK status, or NULL with OK */
    int calls_after_final; /* any call after the final one */
    int releases;
    int finals_at_release;
    atomic_int total_calls;
    atomic_int in_cb;
    atomic_bool overlap; /* two calls at once */
    atomic_bool on_main; /* a call on the test's main thread */
    int sleep_ms;        /* per item call */
} rec_t;

typedef struct {
    const char *name;
    bool (*create)(it_fx *f);
    bool (*produce_one)(it_fx *f, const char *payload);
    natsio_status (*next)(it_fx *f, int64_t timeout_ms, item_t *out);
    natsio_status (*next_async)(it_fx *f, natsio_token **t);
    natsio_status (*token_item)(natsio_token *t, item_t *out);
    natsio_status (*set_callback)(it_fx *f, rec_t *r);
    natsio_status (*stop)(it_fx *f);
    natsio_status (*get_stats)(it_fx *f, natsio_iter_stats *s);
    void (*free_it)(it_fx *f);
} it_kind;

/* ---- the recorder ------------------------------------------------------------------ */

static void rec_init(rec_t *r) {
    memset(r, 0, sizeof *r);
    pthread_mutex_init(&r->mu, NULL);
    r->final_status = NATSIO_ERR_INTERNAL;
    r->finals_at_release = -1;
}

/* Recorders outlive every iterator of a case (the final call and release
 * come when the iterator is freed, at the case's cleanup): a static pool,
 * reset when a case starts. */
static rec_t g_recs[8];
static int g_nrecs;

static rec_t *new_rec(void) {
    if (g_nrecs >= (int)NT_COUNT(g_recs)) abort();
    rec_t *r = &g_recs[g_nrecs++];
    rec_init(r);
    return r;
}

static void rec_call(rec_t *r, const char *payload, size_t len, bool has_item, natsio_status st) {
    if (atomic_fetch_add(&r->in_cb, 1) > 0) atomic_store(&r->overlap, true);
    if (pthread_equal(pthread_self(), g_main_thread)) atomic_store(&r->on_main, true);
    pthread_mutex_lock(&r->mu);
    if (r->finals > 0) r->calls_after_final++;
    if (has_item && st == NATSIO_OK) {
        if (r->nitems < MAXREC) {
            snprintf(r->items[r->nitems], sizeof r->items[0], "%.*s", (int)len, payload);
            r->nitems++;
        }
    } else if (!has_item && st != NATSIO_OK) {
        r->finals++;
        r->final_status = st;
    } else {
        r->bad_calls++;
    }
    pthread_mutex_unlock(&r->mu);
    atomic_fetch_add(&r->total_calls, 1);
    if (has_item && r->sleep_ms > 0) nt_sleep_ms(r->sleep_ms);
    atomic_fetch_sub(&r->in_cb, 1);
}

static void rec_release(void *ud) {
    rec_t *r = (rec_t *)ud;
    pthread_mutex_lock(&r->mu);
    r->releases++;
    r->finals_at_release = r->finals;
    pthread_mutex_unlock(&r->mu);
}

static void rec_msg_cb(void *ud, const natsio_msg *m, natsio_status st) {
    rec_call((rec_t *)ud, m ? natsio_msg_data(m) : NULL, m ? natsio_msg_data_len(m) : 0, m != NULL, st);
}

static void rec_entry_cb(void *ud, const natsio_kv_entry *e, natsio_status st) {
    rec_call((rec_t *)ud, e ? natsio_kv_entry_value(e) : NULL, e ? natsio_kv_entry_value_len(e) : 0, e != NULL,
             st);
}

static int rec_nitems(rec_t *r) {
    pthread_mutex_lock(&r->mu);
    int n = r->nitems;
    pthread_mutex_unlock(&r->mu);
    return n;
}

static int rec_finals(rec_t *r) {
    pthread_mutex_lock(&r->mu);
    int n = r->finals;
    pthread_mutex_unlock(&r->mu);
    return n;
}

static int rec_releases(rec_t *r) {
    pthread_mutex_lock(&r->mu);
    int n = r->releases;
    pthread_mutex_unlock(&r->mu);
    return n;
}

typedef struct {
    rec_t *r;
    int n;
} rec_wait;
static bool rec_has_items(void *a) { return rec_nitems(((rec_wait *)a)->r) >= ((rec_wait *)a)->n; }
static bool rec_has_final(void *a) { return rec_finals((rec_t *)a) >= 1; }
static bool rec_has_release(void *a) { return rec_releases((rec_t *)a) >= 1; }

static bool wait_rec_items(rec_t *r, int n, int64_t ms) {
    rec_wait w = {r, n};
    return nt_wait_until(rec_has_items, &w, ms);
}

/* ---- fixture lifecycle --------------------------------------------------------------- */

static void fx_cleanup(void *arg) {
    it_fx *f = (it_fx *)arg;
    if (!f->freed) {
        natsio_sub_free(f->sub);
        natsio_replies_free(f->replies);
        natsio_js_messages_free(f->msgs);
        natsio_kv_watcher_free(f->w);
    }
    natsio_sub_free(f->responder);
    natsio_kv_free(f->kv);
    natsio_kv_free(f->kv2);
    natsio_js_free(f->js);
    natsio_js_free(f->js2);
    natsio_client_free(f->c);
    natsio_client_free(f->c2);
    free(f);
}

/* A fixture with two clients of the shared server, freed when the case
 * ends; NULL (failure recorded) if it cannot connect. */
static it_fx *new_fx(void) {
    it_fx *f = calloc(1, sizeof *f);
    f->n = ++g_seq;
    nt_cleanup(fx_cleanup, f);
    snprintf(f->subject, sizeof f->subject, "it.%d", f->n);
    snprintf(f->stream, sizeof f->stream, "IT%d", f->n);
    snprintf(f->bucket, sizeof f->bucket, "B%d", f->n);
    natsio_status s1 = natsio_client_connect_url(nt_server_url(g_srv), &f->c);
    natsio_status s2 = natsio_client_connect_url(nt_server_url(g_srv), &f->c2);
    if (s1 != NATSIO_OK || s2 != NATSIO_OK) {
        nt_fail_at(__FILE__, __LINE__, "connect: %s / %s", ST(s1), ST(s2));
        return NULL;
    }
    return f;
}

/* Reads an owned message into an item and frees it. */
static void msg_to_item(natsio_status st, natsio_msg *m, item_t *out) {
    memset(out, 0, sizeof *out);
    out->out_null = m == NULL;
    out->out_untouched = m == SENTINEL;
    if (st == NATSIO_OK && m != NULL && m != SENTINEL) {
        snprintf(out->payload, sizeof out->payload, "%.*s", (int)natsio_msg_data_len(m), natsio_msg_data(m));
        natsio_msg_free(m);
    }
}

static void entry_to_item(natsio_status st, natsio_kv_entry *e, item_t *out) {
    memset(out, 0, sizeof *out);
    out->out_null = e == NULL;
    out->out_untouched = e == SENTINEL;
    if (st == NATSIO_OK && e != NULL && e != SENTINEL) {
        snprintf(out->payload, sizeof out->payload, "%.*s", (int)natsio_kv_entry_value_len(e),
                 natsio_kv_entry_value(e));
        out->revision = natsio_kv_entry_revision(e);
        natsio_kv_entry_free(e);
    }
}

static natsio_status token_msg_item(natsio_token *t, item_t *out) {
    natsio_msg *m = SENTINEL;
    natsio_status st = natsio_token_msg(t, &m);
    msg_to_item(st, m, out);
    return st;
}

static natsio_status token_entry_item(natsio_token *t, item_t *out) {
    natsio_kv_entry *e = SENTINEL;
    natsio_status st = natsio_token_kv_entry(t, &e);
    entry_to_item(st, e, out);
    return st;
}

/* ---- kind: subscription ---------------------------------------------------------------- */

static bool sub_create(it_fx *f) {
    OKB(natsio_client_subscribe(f->c, f->subject, NULL, NULL, &f->sub));
    OKB(natsio_client_flush(f->c, NATSIO_TIMEOUT_DEFAULT));
    return true;
}
static bool core_produce(natsio_client *c, const char *subject, const char *payload) {
    OKB(natsio_client_publish(c, subject, payload, strlen(payload)));
    OKB(natsio_client_flush(c, NATSIO_TIMEOUT_DEFAULT));
    return true;
}
static bool sub_produce(it_fx *f, const char *p) { return core_produce(f->c2, f->subject, p); }
static natsio_status sub_next(it_fx *f, int64_t ms, item_t *out) {
    natsio_msg *m = SENTINEL;
    natsio_status st = natsio_sub_next(f->sub, ms, &m);
    msg_to_item(st, m, out);
    return st;
}
static natsio_status sub_next_async(it_fx *f, natsio_token **t) { return natsio_sub_next_async(f->sub, t); }
static natsio_status sub_set_cb(it_fx *f, rec_t *r) {
    return natsio_sub_set_callback(f->sub, rec_msg_cb, r, rec_release);
}
static natsio_status sub_stop(it_fx *f) { return natsio_sub_stop(f->sub); }
static natsio_status sub_stats(it_fx *f, natsio_iter_stats *s) { return natsio_sub_get_stats(f->sub, s); }
static void sub_free_it(it_fx *f) {
    natsio_sub_free(f->sub);
    f->freed = true;
}

/* ---- kind: request-many replies ---------------------------------------------------------- */

/* The request goes to a subscription of c2, which keeps its reply subject:
 * every item is then a reply published there. The replies end only after
 * 60 s (no count, no stall). */
static bool replies_create(it_fx *f) {
    OKB(natsio_client_subscribe(f->c2, f->subject, NULL, NULL, &f->responder));
    OKB(natsio_client_flush(f->c2, NATSIO_TIMEOUT_DEFAULT));
    natsio_request_many_options o;
    natsio_request_many_options_init(&o);
    o.timeout_ms = 60000;
    OKB(natsio_client_request_many(f->c, f->subject, NULL, "req", 3, &o, &f->replies));
    natsio_msg *req = NULL;
    OKB(natsio_sub_next(f->responder, 5000, &req));
    snprintf(f->reply, sizeof f->reply, "%s", natsio_msg_reply(req) ? natsio_msg_reply(req) : "");
    natsio_msg_free(req);
    if (f->reply[0] == '\0') {
        nt_fail_at(__FILE__, __LINE__, "the request has no reply subject");
        return false;
    }
    return true;
}
static bool replies_produce(it_fx *f, const char *p) { return core_produce(f->c2, f->reply, p); }
static natsio_status replies_next(it_fx *f, int64_t ms, item_t *out) {
    natsio_msg *m = SENTINEL;
    natsio_status st = natsio_replies_next(f->replies, ms, &m);
    msg_to_item(st, m, out);
    return st;
}
static natsio_status replies_next_async(it_fx *f, natsio_token **t) {
    return natsio_replies_next_async(f->replies, t);
}
static natsio_status replies_set_cb(it_fx *f, rec_t *r) {
    return natsio_replies_set_callback(f->replies, rec_msg_cb, r, rec_release);
}
static natsio_status replies_stop(it_fx *f) { return natsio_replies_stop(f->replies); }
static natsio_status replies_stats(it_fx *f, natsio_iter_stats *s) {
    return natsio_replies_get_stats(f->replies, s);
}
static void replies_free_it(it_fx *f) {
    natsio_replies_free(f->replies);
    f->freed = true;
}

/* ---- kind: consume ------------------------------------------------------------------------- */

/* A stream and a consumer of its own (ack none: no redeliveries). */
static bool consume_create(it_fx *f) {
    char cfg[256];
    OKB(natsio_client_jetstream(f->c, NULL, &f->js));
    OKB(natsio_client_jetstream(f->c2, NULL, &f->js2));
    snprintf(cfg, sizeof cfg, "{\"name\":\"%s\",\"subjects\":[\"%s.>\"],\"storage\":\"memory\"}", f->stream,
             f->subject);
    OKB(natsio_js_stream_create(f->js2, cfg, NATSIO_CREATE, NULL));
    OKB(natsio_js_consumer_create(f->js2, f->stream, "{\"durable_name\":\"C\",\"ack_policy\":\"none\"}",
                                  NATSIO_CREATE, NULL));
    OKB(natsio_js_consume(f->js, f->stream, "C", NULL, &f->msgs));
    return true;
}
static bool consume_produce(it_fx *f, const char *p) {
    char subject[96];
    snprintf(subject, sizeof subject, "%s.x", f->subject);
    OKB(natsio_js_publish(f->js2, subject, p, strlen(p), NULL, NULL));
    return true;
}
static natsio_status consume_next(it_fx *f, int64_t ms, item_t *out) {
    natsio_msg *m = SENTINEL;
    natsio_status st = natsio_js_messages_next(f->msgs, ms, &m);
    msg_to_item(st, m, out);
    return st;
}
static natsio_status consume_next_async(it_fx *f, natsio_token **t) {
    return natsio_js_messages_next_async(f->msgs, t);
}
static natsio_status consume_set_cb(it_fx *f, rec_t *r) {
    return natsio_js_messages_set_callback(f->msgs, rec_msg_cb, r, rec_release);
}
static natsio_status consume_stop(it_fx *f) { return natsio_js_messages_stop(f->msgs); }
static natsio_status consume_stats(it_fx *f, natsio_iter_stats *s) {
    return natsio_js_messages_get_stats(f->msgs, s);
}
static void consume_free_it(it_fx *f) {
    natsio_js_messages_free(f->msgs);
    f->freed = true;
}

/* ---- kind: KV watch ----------------------------------------------------------------------- */

/* An empty bucket of its own, watched; the initial-values marker (at once:
 * there are none) is read here, so items are the puts that follow. */
static bool watch_create(it_fx *f) {
    char cfg[256];
    OKB(natsio_client_jetstream(f->c, NULL, &f->js));
    OKB(natsio_client_jetstream(f->c2, NULL, &f->js2));
    snprintf(cfg, sizeof cfg, "{\"bucket\":\"%s\",\"storage\":\"memory\"}", f->bucket);
    OKB(natsio_js_kv_create(f->js2, cfg, NATSIO_CREATE, &f->kv2));
    OKB(natsio_js_kv_bind(f->js, f->bucket, &f->kv));
    OKB(natsio_kv_watch(f->kv, NULL, 0, NULL, &f->w));
    natsio_kv_entry *marker = NULL;
    OKB(natsio_kv_watcher_next(f->w, 5000, &marker));
    bool ok = natsio_kv_entry_operation(marker) == NATSIO_KV_INITIAL_DONE;
    natsio_kv_entry_free(marker);
    if (!ok) nt_fail_at(__FILE__, __LINE__, "first entry of a watch of an empty bucket is not the marker");
    return ok;
}
static bool watch_produce(it_fx *f, const char *p) {
    char key[32];
    snprintf(key, sizeof key, "k.%d", f->produced);
    OKB(natsio_kv_put(f->kv2, key, p, strlen(p), NULL, NULL));
    return true;
}
static natsio_status watch_next(it_fx *f, int64_t ms, item_t *out) {
    natsio_kv_entry *e = SENTINEL;
    natsio_status st = natsio_kv_watcher_next(f->w, ms, &e);
    entry_to_item(st, e, out);
    return st;
}
static natsio_status watch_next_async(it_fx *f, natsio_token **t) { return natsio_kv_watcher_next_async(f->w, t); }
static natsio_status watch_set_cb(it_fx *f, rec_t *r) {
    return natsio_kv_watcher_set_callback(f->w, rec_entry_cb, r, rec_release);
}
static natsio_status watch_stop(it_fx *f) { return natsio_kv_watcher_stop(f->w); }
static natsio_status watch_stats(it_fx *f, natsio_iter_stats *s) { return natsio_kv_watcher_get_stats(f->w, s); }
static void watch_free_it(it_fx *f) {
    natsio_kv_watcher_free(f->w);
    f->freed = true;
}

static const it_kind KIND_SUB = {"sub",        sub_create,   sub_produce, sub_next,     sub_next_async,
                                 token_msg_item, sub_set_cb, sub_stop,    sub_stats,    sub_free_it};
static const it_kind KIND_REPLIES = {"replies",      replies_create, replies_produce, replies_next,
                                     replies_next_async, token_msg_item, replies_set_cb, replies_stop,
                                     replies_stats,      replies_free_it};
static const it_kind KIND_CONSUME = {"js_messages",      consume_create, consume_produce, consume_next,
                                     consume_next_async, token_msg_item, consume_set_cb,  consume_stop,
                                     consume_stats,      consume_free_it};
static const it_kind KIND_WATCH = {"kv_watcher",     watch_create,  watch_produce, watch_next, watch_next_async,
                                   token_entry_item, watch_set_cb, watch_stop,    watch_stats, watch_free_it};

/* ---- generic helpers over a kind ------------------------------------------------------------- */

/* A fixture with a fresh iterator of kind k; NULL (failure recorded) if not. */
static it_fx *make_it(const it_kind *k) {
    it_fx *f = new_fx();
    if (!f) return NULL;
    if (!k->create(f)) {
        nt_fail_at(__FILE__, __LINE__, "%s: create failed", k->name);
        return NULL;
    }
    return f;
}

/* Makes n more items arrive: "item-<produced>". */
static bool produce(const it_kind *k, it_fx *f, int n) {
    for (int i = 0; i < n; i++) {
        char p[32];
        snprintf(p, sizeof p, "item-%d", f->produced);
        if (!k->produce_one(f, p)) return false;
        f->produced++;
    }
    return true;
}

typedef struct {
    const it_kind *k;
    it_fx *f;
    uint64_t n;
} pending_wait;
static bool has_pending(void *a) {
    pending_wait *w = (pending_wait *)a;
    natsio_iter_stats s;
    return w->k->get_stats(w->f, &s) == NATSIO_OK && s.pending_items >= w->n;
}
/* Waits (5 s) until n items are buffered in the iterator. */
static bool wait_pending(const it_kind *k, it_fx *f, uint64_t n) {
    pending_wait w = {k, f, n};
    if (nt_wait_until(has_pending, &w, 5000)) return true;
    nt_fail_at(__FILE__, __LINE__, "%s: %llu items never buffered", k->name, (unsigned long long)n);
    return false;
}

static bool payload_is(const item_t *it, int i) {
    char want[32];
    snprintf(want, sizeof want, "item-%d", i);
    return strcmp(it->payload, want) == 0;
}

/* The next item must be item-<i>. */
#define NEXT_IS(k, f, i)                                                                       \
    do {                                                                                       \
        item_t it_;                                                                            \
        natsio_status st_ = (k)->next((f), 5000, &it_);                                        \
        NT_CHECK_MSG(st_ == NATSIO_OK && payload_is(&it_, (i)), "%s: next: %s, \"%s\", want item-%d", \
                     (k)->name, ST(st_), it_.payload, (i));                                    \
    } while (0)

/* The token must complete with item-<i>. */
#define TOKEN_IS(k, t, i)                                                                      \
    do {                                                                                       \
        item_t it_;                                                                            \
        natsio_status w_ = natsio_token_wait((t), 5000);                                       \
        natsio_status st_ = (k)->token_item((t), &it_);                                        \
        NT_CHECK_MSG(w_ == NATSIO_OK && st_ == NATSIO_OK && payload_is(&it_, (i)),             \
                     "%s: token: wait %s, %s, \"%s\", want item-%d", (k)->name, ST(w_), ST(st_), \
                     it_.payload, (i));                                                        \
    } while (0)

static void token_cleanup(void *t) { natsio_token_free((natsio_token *)t); }

/* ---- the checks ------------------------------------------------------------------------------ */

/* Items come out of _next in the order they arrived; delivered counts them. */
static void check_next_in_order(const it_kind *k) {
    it_fx *f = make_it(k);
    NT_CHECK(f);
    natsio_iter_stats s0, s1;
    OK(k->get_stats(f, &s0));
    NT_CHECK(produce(k, f, 5));
    for (int i = 0; i < 5; i++) NEXT_IS(k, f, i);
    OK(k->get_stats(f, &s1));
    NT_CHECK_INT_EQ(s1.delivered - s0.delivered, 5);
    NT_CHECK_INT_EQ(s1.pending_items, 0);
}

/* NATSIO_NO_WAIT: TIMEOUT at once when nothing is buffered, the item when one is. */
static void check_no_wait(const it_kind *k) {
    it_fx *f = make_it(k);
    NT_CHECK(f);
    item_t it;
    int64_t t0 = nt_now_ms();
    natsio_status st = k->next(f, NATSIO_NO_WAIT, &it);
    int64_t ms = nt_now_ms() - t0;
    NT_CHECK_MSG(st == NATSIO_ERR_TIMEOUT, "%s: NO_WAIT on nothing: %s", k->name, ST(st));
    NT_CHECK(it.out_untouched);
    NT_CHECK_MSG(ms < 500, "NO_WAIT took %lld ms", (long long)ms);
    NT_CHECK(produce(k, f, 1));
    NT_CHECK(wait_pending(k, f, 1));
    st = k->next(f, NATSIO_NO_WAIT, &it);
    NT_CHECK_MSG(st == NATSIO_OK && payload_is(&it, 0), "%s: NO_WAIT on a buffered item: %s", k->name, ST(st));
}

/* A bounded wait times out with NATSIO_ERR_TIMEOUT; the iteration goes on. */
static void check_timeout(const it_kind *k) {
    it_fx *f = make_it(k);
    NT_CHECK(f);
    item_t it;
    int64_t t0 = nt_now_ms();
    natsio_status st = k->next(f, 200, &it);
    int64_t ms = nt_now_ms() - t0;
    NT_CHECK_MSG(st == NATSIO_ERR_TIMEOUT, "%s: %s", k->name, ST(st));
    NT_CHECK(it.out_untouched);
    NT_CHECK_MSG(ms >= 150 && ms < 3000, "a 200 ms wait took %lld ms", (long long)ms);
    NT_CHECK(produce(k, f, 1));
    NEXT_IS(k, f, 0);
}

/* Several _next_async tokens pending at once are served in call order; one
 * taken when an item is buffered completes with it. */
static void check_next_async_order(const it_kind *k) {
    it_fx *f = make_it(k);
    NT_CHECK(f);
    natsio_token *t[3];
    for (int i = 0; i < 3; i++) {
        t[i] = NULL;
        OK(k->next_async(f, &t[i]));
        nt_cleanup(token_cleanup, t[i]);
    }
    for (int i = 0; i < 3; i++) {
        item_t it;
        natsio_status st = k->token_item(t[i], &it);
        NT_CHECK_MSG(st == NATSIO_PENDING && it.out_untouched, "%s: token %d before any item: %s", k->name, i,
                     ST(st));
        NT_CHECK(!natsio_token_is_done(t[i]));
    }
    NT_CHECK(produce(k, f, 3));
    for (int i = 0; i < 3; i++) TOKEN_IS(k, t[i], i);
    NT_CHECK(produce(k, f, 1));
    NT_CHECK(wait_pending(k, f, 1));
    natsio_token *t4 = NULL;
    OK(k->next_async(f, &t4));
    nt_cleanup(token_cleanup, t4);
    TOKEN_IS(k, t4, 3);
}

/* After _stop: _next says NATSIO_DONE (item set to NULL), buffered items
 * are no longer handed out, pending and new _next_async tokens complete
 * with NATSIO_DONE; stop is idempotent. */
static void check_stop_done(const it_kind *k) {
    /* Buffered items, then stop. */
    it_fx *f = make_it(k);
    NT_CHECK(f);
    NT_CHECK(produce(k, f, 2));
    NT_CHECK(wait_pending(k, f, 2));
    OK(k->stop(f));
    item_t it;
    natsio_status st = k->next(f, 1000, &it);
    NT_CHECK_MSG(st == NATSIO_DONE && it.out_null, "%s: next after stop: %s (out %s)", k->name, ST(st),
                 it.out_null ? "NULL" : "not NULL");
    OK(k->stop(f));
    st = k->next(f, NATSIO_NO_WAIT, &it);
    NT_CHECK_MSG(st == NATSIO_DONE && it.out_null, "%s: next after a second stop: %s", k->name, ST(st));
    natsio_iter_stats s;
    OK(k->get_stats(f, &s));

    /* Pending tokens, then stop. */
    it_fx *g = make_it(k);
    NT_CHECK(g);
    natsio_token *t1 = NULL, *t2 = NULL, *t3 = NULL;
    OK(k->next_async(g, &t1));
    nt_cleanup(token_cleanup, t1);
    OK(k->next_async(g, &t2));
    nt_cleanup(token_cleanup, t2);
    OK(k->stop(g));
    OK(natsio_token_wait(t1, 2000));
    OK(natsio_token_wait(t2, 2000));
    EXPECT(NATSIO_DONE, natsio_token_status(t1));
    st = k->token_item(t2, &it);
    NT_CHECK_MSG(st == NATSIO_DONE && it.out_untouched, "%s: pending token after stop: %s", k->name, ST(st));
    OK(k->next_async(g, &t3));
    nt_cleanup(token_cleanup, t3);
    OK(natsio_token_wait(t3, 2000));
    EXPECT(NATSIO_DONE, k->token_item(t3, &it));
    OK(k->stop(g));
}

/* Push mode: every item, then the final call (NULL, NATSIO_DONE) made
 * before _stop returns; nothing after; release once, after the final call;
 * a second stop makes no second final call. */
static void check_callback_final_before_stop_returns(const it_kind *k) {
    it_fx *f = make_it(k);
    NT_CHECK(f);
    rec_t *r = new_rec();
    OK(k->set_callback(f, r));
    NT_CHECK(produce(k, f, 3));
    NT_CHECK_MSG(wait_rec_items(r, 3, 5000), "%s: %d items", k->name, rec_nitems(r));
    OK(k->stop(f));
    pthread_mutex_lock(&r->mu);
    int finals = r->finals, nitems = r->nitems;
    natsio_status fs = r->final_status;
    pthread_mutex_unlock(&r->mu);
    NT_CHECK_MSG(finals == 1, "%s: %d final calls when stop returned", k->name, finals);
    NT_CHECK_MSG(fs == NATSIO_DONE, "%s: final status %s", k->name, ST(fs));
    NT_CHECK_INT_EQ(nitems, 3);
    for (int i = 0; i < 3; i++) {
        char want[32];
        snprintf(want, sizeof want, "item-%d", i);
        NT_CHECK_STR_EQ(r->items[i], want);
    }
    int calls = atomic_load(&r->total_calls);
    OK(k->stop(f));
    NT_CHECK(produce(k, f, 2));
    NT_CHECK_MSG(nt_wait_until(rec_has_release, r, 2000), "%s: release never ran", k->name);
    nt_sleep_ms(300); /* an absence: no call within 300 ms */
    NT_CHECK_INT_EQ(atomic_load(&r->total_calls), calls);
    k->free_it(f);
    NT_CHECK_INT_EQ(rec_releases(r), 1);
    NT_CHECK_INT_EQ(r->finals_at_release, 1);
    NT_CHECK_INT_EQ(r->calls_after_final, 0);
    NT_CHECK_INT_EQ(r->bad_calls, 0);
    NT_CHECK(!atomic_load(&r->overlap));
    NT_CHECK(!atomic_load(&r->on_main));
}

/* Produces items on another thread while the check stops or frees. */
typedef struct {
    const it_kind *k;
    it_fx *f;
    atomic_bool stop;
    int made;
} producer_t;
static void *producer_main(void *arg) {
    producer_t *p = (producer_t *)arg;
    for (int i = 0; i < 40 && !atomic_load(&p->stop); i++) {
        char payload[32];
        snprintf(payload, sizeof payload, "item-%d", 1000 + i);
        p->f->produced = 1000 + i; /* keys of the watch adapter */
        if (!p->k->produce_one(p->f, payload)) break;
        p->made++;
        nt_sleep_ms(5);
    }
    return NULL;
}

/* With a slow callback and items still arriving, no call is made after
 * _stop (or _free) returns; the final call was made before; release once,
 * after it. */
static void no_callback_after(const it_kind *k, bool use_free) {
    it_fx *f = make_it(k);
    NT_CHECK(f);
    rec_t *r = new_rec();
    r->sleep_ms = 20;
    OK(k->set_callback(f, r));
    producer_t p = {k, f, false, 0};
    pthread_t th;
    NT_CHECK(pthread_create(&th, NULL, producer_main, &p) == 0);
    bool got = wait_rec_items(r, 2, 5000);
    if (use_free)
        k->free_it(f);
    else
        k->stop(f);
    int finals = rec_finals(r);
    int calls = atomic_load(&r->total_calls);
    nt_sleep_ms(300); /* an absence: no call within 300 ms */
    int calls_later = atomic_load(&r->total_calls);
    bool released = nt_wait_until(rec_has_release, r, 2000);
    atomic_store(&p.stop, true);
    pthread_join(th, NULL);
    if (!use_free) k->free_it(f);
    NT_CHECK_MSG(got, "%s: no items reached the callback", k->name);
    NT_CHECK_MSG(finals == 1, "%s: %d final calls when %s returned", k->name, finals, use_free ? "free" : "stop");
    NT_CHECK_MSG(calls_later == calls, "%s: %d calls after %s returned", k->name, calls_later - calls,
                 use_free ? "free" : "stop");
    NT_CHECK_MSG(r->final_status == NATSIO_DONE, "%s: final status %s", k->name, ST(r->final_status));
    NT_CHECK(released);
    NT_CHECK_INT_EQ(rec_releases(r), 1);
    NT_CHECK_INT_EQ(r->finals_at_release, 1);
    NT_CHECK_INT_EQ(r->calls_after_final, 0);
    NT_CHECK_INT_EQ(r->bad_calls, 0);
    NT_CHECK(!atomic_load(&r->overlap));
    /* The items that reached the callback are in order. */
    for (int i = 1; i < r->nitems; i++)
        NT_CHECK_MSG(atoi(r->items[i] + 5) > atoi(r->items[i - 1] + 5), "%s: %s after %s", k->name, r->items[i],
                     r->items[i - 1]);
}
static void check_no_callback_after_stop(const it_kind *k) { no_callback_after(k, false); }
static void check_no_callback_after_free(const it_kind *k) { no_callback_after(k, true); }

/* In push mode _next and _next_async say NATSIO_ERR_ILLEGAL_STATE, and a
 * second set_callback too (its release is not called). */
static void check_next_in_callback_mode(const it_kind *k) {
    it_fx *f = make_it(k);
    NT_CHECK(f);
    rec_t *r = new_rec(), *r2 = new_rec();
    OK(k->set_callback(f, r));
    item_t it;
    natsio_status st = k->next(f, NATSIO_NO_WAIT, &it);
    NT_CHECK_MSG(st == NATSIO_ERR_ILLEGAL_STATE && it.out_untouched, "%s: next: %s", k->name, ST(st));
    st = k->next(f, 100, &it);
    NT_CHECK_MSG(st == NATSIO_ERR_ILLEGAL_STATE, "%s: next(100): %s", k->name, ST(st));
    natsio_token *t = SENTINEL;
    st = k->next_async(f, &t);
    NT_CHECK_MSG(st == NATSIO_ERR_ILLEGAL_STATE && t == SENTINEL, "%s: next_async: %s", k->name, ST(st));
    st = k->set_callback(f, r2);
    NT_CHECK_MSG(st == NATSIO_ERR_ILLEGAL_STATE, "%s: second set_callback: %s", k->name, ST(st));
    NT_CHECK(produce(k, f, 1));
    NT_CHECK(wait_rec_items(r, 1, 5000));
    k->free_it(f);
    NT_CHECK_INT_EQ(rec_releases(r2), 0);
    NT_CHECK_INT_EQ(atomic_load(&r2->total_calls), 0);
    NT_CHECK_INT_EQ(rec_releases(r), 1);
}

/* set_callback with a _next_async token pending: NATSIO_ERR_ILLEGAL_STATE,
 * release not called; once the token is gone it works and gets the items. */
static void check_set_callback_with_pending_token(const it_kind *k) {
    it_fx *f = make_it(k);
    NT_CHECK(f);
    natsio_token *t = NULL;
    OK(k->next_async(f, &t));
    rec_t *r = new_rec();
    natsio_status st = k->set_callback(f, r);
    natsio_token_free(t);
    NT_CHECK_MSG(st == NATSIO_ERR_ILLEGAL_STATE, "%s: %s", k->name, ST(st));
    NT_CHECK_INT_EQ(rec_releases(r), 0);
    rec_t *r2 = new_rec();
    OK(k->set_callback(f, r2));
    NT_CHECK(produce(k, f, 2));
    NT_CHECK(wait_rec_items(r2, 2, 5000));
    NT_CHECK_STR_EQ(r2->items[0], "item-0");
    NT_CHECK_STR_EQ(r2->items[1], "item-1");
    NT_CHECK_INT_EQ(atomic_load(&r->total_calls), 0);
}

/* Items buffered before set_callback reach the callback first, in order. */
static void check_buffered_before_callback(const it_kind *k) {
    it_fx *f = make_it(k);
    NT_CHECK(f);
    NT_CHECK(produce(k, f, 3));
    NT_CHECK(wait_pending(k, f, 3));
    rec_t *r = new_rec();
    OK(k->set_callback(f, r));
    NT_CHECK(produce(k, f, 2));
    NT_CHECK_MSG(wait_rec_items(r, 5, 5000), "%s: %d items", k->name, rec_nitems(r));
    for (int i = 0; i < 5; i++) {
        char want[32];
        snprintf(want, sizeof want, "item-%d", i);
        NT_CHECK_STR_EQ(r->items[i], want);
    }
}

/* A pending _next_async token cancelled or freed before an item reached it
 * leaves the item to the next reader: nothing is lost. */
static void check_cancelled_token_loses_nothing(const it_kind *k) {
    it_fx *f = make_it(k);
    NT_CHECK(f);
    natsio_token *t1 = NULL, *t2 = NULL, *t3 = NULL, *t4 = NULL;
    OK(k->next_async(f, &t1));
    nt_cleanup(token_cleanup, t1);
    OK(natsio_token_cancel(t1));
    OK(natsio_token_wait(t1, 1000));
    EXPECT(NATSIO_ERR_CANCELLED, natsio_token_status(t1));
    item_t it;
    EXPECT(NATSIO_ERR_CANCELLED, k->token_item(t1, &it));
    NT_CHECK(it.out_untouched);
    EXPECT(NATSIO_ERR_ILLEGAL_STATE, natsio_token_cancel(t1));
    OK(k->next_async(f, &t2));
    natsio_token_free(t2); /* withdrawn */
    NT_CHECK(produce(k, f, 1));
    NEXT_IS(k, f, 0);
    /* Cancel the first of two pending tokens: the second gets the item. */
    OK(k->next_async(f, &t3));
    nt_cleanup(token_cleanup, t3);
    OK(k->next_async(f, &t4));
    nt_cleanup(token_cleanup, t4);
    OK(natsio_token_cancel(t3));
    NT_CHECK(produce(k, f, 2));
    TOKEN_IS(k, t4, 1);
    EXPECT(NATSIO_ERR_CANCELLED, natsio_token_status(t3));
    NEXT_IS(k, f, 2);
    natsio_iter_stats s;
    OK(k->get_stats(f, &s));
    NT_CHECK_INT_EQ(s.pending_items, 0);
}

/* Cancel racing the item's arrival: either the cancel wins (OK, the item
 * stays for the next reader) or the item does (ILLEGAL_STATE, the token
 * holds it). Over 20 rounds every item is received exactly once, in order. */
static void check_cancel_race_loses_nothing(const it_kind *k) {
    it_fx *f = make_it(k);
    NT_CHECK(f);
    enum { ROUNDS = 20 };
    int got[ROUNDS * 2], ngot = 0, won = 0, lost = 0;
    for (int i = 0; i < ROUNDS; i++) {
        natsio_token *t = NULL;
        OK(k->next_async(f, &t));
        bool made = produce(k, f, 1);
        natsio_status c = natsio_token_cancel(t);
        natsio_status w = natsio_token_wait(t, 2000); /* a refused cancel: the item is on its way */
        item_t it;
        natsio_status st = k->token_item(t, &it);
        natsio_token_free(t);
        NT_CHECK(made);
        if (c == NATSIO_OK) {
            NT_CHECK_MSG(st == NATSIO_ERR_CANCELLED, "%s: cancelled token: %s", k->name, ST(st));
            won++;
        } else {
            NT_CHECK_MSG(c == NATSIO_ERR_ILLEGAL_STATE, "%s: cancel: %s", k->name, ST(c));
            NT_CHECK_MSG(w == NATSIO_OK && st == NATSIO_OK, "%s: token after a refused cancel: wait %s, %s",
                         k->name, ST(w), ST(st));
            got[ngot++] = atoi(it.payload + 5);
            lost++;
        }
    }
    for (;;) {
        item_t it;
        natsio_status st = k->next(f, 300, &it);
        if (st == NATSIO_ERR_TIMEOUT) break;
        NT_CHECK_MSG(st == NATSIO_OK, "%s: next: %s", k->name, ST(st));
        NT_CHECK(ngot < ROUNDS * 2);
        got[ngot++] = atoi(it.payload + 5);
    }
    printf("  %s: cancel won %d times, the item %d times\n", k->name, won, lost);
    NT_CHECK_MSG(ngot == ROUNDS, "%s: %d items received, %d produced", k->name, ngot, ROUNDS);
    for (int i = 0; i < ROUNDS; i++) NT_CHECK_MSG(got[i] == i, "%s: item %d is item-%d", k->name, i, got[i]);
}

/* The client closes: _next (again and again) and a pending token say
 * NATSIO_ERR_CONNECTION_CLOSED. */
static void check_client_closed_next(const it_kind *k) {
    it_fx *f = make_it(k);
    NT_CHECK(f);
    natsio_token *t = NULL;
    OK(k->next_async(f, &t));
    nt_cleanup(token_cleanup, t);
    OK(natsio_client_close(f->c));
    item_t it;
    natsio_status st = k->next(f, 2000, &it);
    NT_CHECK_MSG(st == NATSIO_ERR_CONNECTION_CLOSED && it.out_untouched, "%s: next: %s", k->name, ST(st));
    st = k->next(f, NATSIO_NO_WAIT, &it);
    NT_CHECK_MSG(st == NATSIO_ERR_CONNECTION_CLOSED, "%s: next again: %s", k->name, ST(st));
    OK(natsio_token_wait(t, 2000));
    st = k->token_item(t, &it);
    NT_CHECK_MSG(st == NATSIO_ERR_CONNECTION_CLOSED && it.out_untouched, "%s: token: %s", k->name, ST(st));
    OK(k->stop(f)); /* stopping an ended iterator is fine */
    /* The header says both "the error that ended it, again on every later
     * call" and "_stop: NATSIO_DONE from then on": either is accepted. */
    st = k->next(f, NATSIO_NO_WAIT, &it);
    NT_CHECK_MSG(st == NATSIO_ERR_CONNECTION_CLOSED || st == NATSIO_DONE, "%s: next after stop: %s", k->name,
                 ST(st));
}

/* The client closes in push mode: the final call says
 * NATSIO_ERR_CONNECTION_CLOSED, by the time close returns; release follows. */
static void check_client_closed_callback(const it_kind *k) {
    it_fx *f = make_it(k);
    NT_CHECK(f);
    rec_t *r = new_rec();
    OK(k->set_callback(f, r));
    NT_CHECK(produce(k, f, 1));
    NT_CHECK(wait_rec_items(r, 1, 5000));
    OK(natsio_client_close(f->c));
    int finals_at_return = rec_finals(r);
    NT_CHECK_MSG(nt_wait_until(rec_has_final, r, 5000), "%s: no final call", k->name);
    NT_CHECK_MSG(r->final_status == NATSIO_ERR_CONNECTION_CLOSED, "%s: final status %s", k->name,
                 ST(r->final_status));
    NT_CHECK_MSG(finals_at_return == 1, "%s: the final call came after natsio_client_close returned", k->name);
    NT_CHECK(nt_wait_until(rec_has_release, r, 2000));
    NT_CHECK_INT_EQ(r->finals_at_release, 1);
    NT_CHECK_INT_EQ(r->calls_after_final, 0);
    k->free_it(f);
    NT_CHECK_INT_EQ(rec_releases(r), 1);
}

/* Stats: pending_items/bytes while buffered, delivered as they are taken. */
static void check_stats(const it_kind *k) {
    it_fx *f = make_it(k);
    NT_CHECK(f);
    natsio_iter_stats s0, s1, s2;
    OK(k->get_stats(f, &s0));
    NT_CHECK_INT_EQ(s0.pending_items, 0);
    NT_CHECK(produce(k, f, 3));
    NT_CHECK(wait_pending(k, f, 3));
    OK(k->get_stats(f, &s1));
    NT_CHECK_INT_EQ(s1.pending_items, 3);
    NT_CHECK(s1.pending_bytes >= 3 * strlen("item-0"));
    NT_CHECK_INT_EQ(s1.delivered, s0.delivered);
    NEXT_IS(k, f, 0);
    OK(k->get_stats(f, &s2));
    NT_CHECK_INT_EQ(s2.pending_items, 2);
    NT_CHECK(s2.pending_bytes < s1.pending_bytes);
    NT_CHECK_INT_EQ(s2.delivered, s0.delivered + 1);
    NT_CHECK_INT_EQ(s2.dropped, 0);
    NT_CHECK_INT_EQ(s2.stalls, 0);
    natsio_iter_stats *null_stats = NULL;
    EXPECT(NATSIO_ERR_NULL_ARGUMENT, k->get_stats(f, null_stats));
}

/* ---- one case per (check, kind) ------------------------------------------------------------ */

static void contract_case_start(void) {
    g_main_thread = pthread_self();
    g_nrecs = 0;
    nt_set_case_timeout(60);
}

#define FOR_KIND(check, kind)                                                                  \
    static void check##__##kind(void) {                                                        \
        contract_case_start();                                                                 \
        check(&KIND_##kind);                                                                   \
    }
#define FOR_ALL_KINDS(check)                                                                   \
    FOR_KIND(check, SUB) FOR_KIND(check, REPLIES) FOR_KIND(check, CONSUME) FOR_KIND(check, WATCH)
#define CASES(check)                                                                           \
    {#check "/sub", check##__SUB}, {#check "/replies", check##__REPLIES},                      \
        {#check "/js_messages", check##__CONSUME}, {#check "/kv_watcher", check##__WATCH}

FOR_ALL_KINDS(check_next_in_order)
FOR_ALL_KINDS(check_no_wait)
FOR_ALL_KINDS(check_timeout)
FOR_ALL_KINDS(check_next_async_order)
FOR_ALL_KINDS(check_stop_done)
FOR_ALL_KINDS(check_callback_final_before_stop_returns)
FOR_ALL_KINDS(check_no_callback_after_stop)
FOR_ALL_KINDS(check_no_callback_after_free)
FOR_ALL_KINDS(check_next_in_callback_mode)
FOR_ALL_KINDS(check_set_callback_with_pending_token)
FOR_ALL_KINDS(check_buffered_before_callback)
FOR_ALL_KINDS(check_cancelled_token_loses_nothing)
FOR_ALL_KINDS(check_cancel_race_loses_nothing)
FOR_ALL_KINDS(check_client_closed_next)
FOR_ALL_KINDS(check_client_closed_callback)
FOR_ALL_KINDS(check_stats)

/* ---- scenario: a lagging KV watcher ------------------------------------------------------ */

#define LAG_CHANGES 100
#define LAG_KEYS 7

typedef struct {
    natsio_kv *kv;
    char key[LAG_CHANGES][16];
    char value[LAG_CHANGES][16];
    natsio_kv_operation op[LAG_CHANGES];
    uint64_t rev[LAG_CHANGES];
    natsio_status status;
    int64_t took_ms;
} lag_writer;

/* 100 changes on 7 keys: puts, and every tenth a delete. */
static void *lag_writer_main(void *arg) {
    lag_writer *w = (lag_writer *)arg;
    int64_t t0 = nt_now_ms();
    for (int i = 0; i < LAG_CHANGES && w->status == NATSIO_OK; i++) {
        snprintf(w->key[i], sizeof w->key[i], "k%d", i % LAG_KEYS);
        if (i % 10 == 9) {
            w->op[i] = NATSIO_KV_DEL;
            w->value[i][0] = '\0';
            w->status = natsio_kv_delete(w->kv, w->key[i], NULL, &w->rev[i]);
        } else {
            w->op[i] = NATSIO_KV_PUT;
            snprintf(w->value[i], sizeof w->value[i], "v%d", i);
            w->status = natsio_kv_put(w->kv, w->key[i], w->value[i], strlen(w->value[i]), NULL, &w->rev[i]);
        }
    }
    w->took_ms = nt_now_ms() - t0;
    return NULL;
}

static void server_stop_cleanup(void *s) { nt_server_stop((nt_server *)s); }
static void client_cleanup(void *c) { natsio_client_free((natsio_client *)c); }
static void js_cleanup(void *j) { natsio_js_free((natsio_js *)j); }
static void kv_cleanup(void *k) { natsio_kv_free((natsio_kv *)k); }
static void watcher_cleanup(void *w) { natsio_kv_watcher_free((natsio_kv_watcher *)w); }
static void messages_cleanup(void *m) { natsio_js_messages_free((natsio_js_messages *)m); }

static natsio_client *connect_to(const char *url, bool fast_reconnect) {
    natsio_options *o = NULL;
    natsio_client *c = NULL;
    natsio_options_new(&o);
    natsio_options_set_url(o, url);
    if (fast_reconnect) {
        natsio_options_set_reconnect_wait(o, 50, 250);
        natsio_options_set_reconnect_jitter(o, 0, 0);
        natsio_options_set_max_reconnect_attempts(o, -1);
    }
    natsio_status st = natsio_client_connect(o, &c);
    natsio_options_free(o);
    if (st != NATSIO_OK) {
        nt_fail_at(__FILE__, __LINE__, "connect %s: %s (%s)", url, ST(st), natsio_last_error());
        return NULL;
    }
    nt_cleanup(client_cleanup, c);
    return c;
}

static void test_lagging_kv_watcher_sees_every_change(void) {
    g_main_thread = pthread_self();
    nt_set_case_timeout(90);
    nt_server *srv = nt_server_start(NULL);
    NT_CHECK(srv);
    nt_cleanup(server_stop_cleanup, srv);
    natsio_client *reader = connect_to(nt_server_url(srv), false);
    natsio_client *writer = connect_to(nt_server_url(srv), false);
    NT_CHECK(reader && writer);
    natsio_js *js = NULL, *js2 = NULL;
    natsio_kv *kv = NULL, *kv2 = NULL;
    OK(natsio_client_jetstream(reader, NULL, &js));
    nt_cleanup(js_cleanup, js);
    OK(natsio_client_jetstream(writer, NULL, &js2));
    nt_cleanup(js_cleanup, js2);
    OK(natsio_js_kv_create(js, "{\"bucket\":\"LAG\",\"history\":10}", NATSIO_CREATE, &kv));
    nt_cleanup(kv_cleanup, kv);
    OK(natsio_js_kv_bind(js2, "LAG", &kv2));
    nt_cleanup(kv_cleanup, kv2);
    for (int k = 0; k < LAG_KEYS; k++) {
        char key[16];
        snprintf(key, sizeof key, "k%d", k);
        OK(natsio_kv_put(kv2, key, "init", 4, NULL, NULL));
    }
    natsio_kv_watcher *w = NULL;
    OK(natsio_kv_watch(kv, NULL, 0, NULL, &w));
    nt_cleanup(watcher_cleanup, w);
    /* Initial values (latest per key), then the marker. */
    int initial = 0;
    for (;;) {
        natsio_kv_entry *e = NULL;
        OK(natsio_kv_watcher_next(w, 5000, &e));
        natsio_kv_operation op = natsio_kv_entry_operation(e);
        natsio_kv_entry_free(e);
        if (op == NATSIO_KV_INITIAL_DONE) break;
        initial++;
        NT_CHECK(initial <= LAG_KEYS);
    }
    NT_CHECK_INT_EQ(initial, LAG_KEYS);
    /* The reader reads nothing while the other client changes 100 times. */
    static lag_writer lw;
    memset(&lw, 0, sizeof lw);
    lw.kv = kv2;
    lw.status = NATSIO_OK;
    pthread_t th;
    NT_CHECK(pthread_create(&th, NULL, lag_writer_main, &lw) == 0);
    pthread_join(th, NULL);
    OK(lw.status);
    /* The watch pulls them in the background, while nobody reads: wait until
     * all are buffered. */
    natsio_iter_stats buffered;
    int64_t deadline = nt_now_ms() + 20000;
    do {
        OK(natsio_kv_watcher_get_stats(w, &buffered));
    } while (buffered.pending_items < LAG_CHANGES && nt_now_ms() < deadline && (nt_sleep_ms(10), true));
    NT_CHECK_MSG(buffered.pending_items == LAG_CHANGES, "%llu changes buffered while the reader read nothing",
                 (unsigned long long)buffered.pending_items);
    printf("  writer made %d changes in %lld ms while the reader read nothing\n", LAG_CHANGES,
           (long long)lw.took_ms);
    int got = 0;
    for (int i = 0; i < LAG_CHANGES; i++) {
        natsio_kv_entry *e = NULL;
        natsio_status st = natsio_kv_watcher_next(w, 5000, &e);
        NT_CHECK_MSG(st == NATSIO_OK, "change %d: %s (%s)", i, ST(st), natsio_last_error());
        bool same = strcmp(natsio_kv_entry_key(e), lw.key[i]) == 0 && natsio_kv_entry_revision(e) == lw.rev[i] &&
                    natsio_kv_entry_operation(e) == lw.op[i] &&
                    natsio_kv_entry_value_len(e) == strlen(lw.value[i]) &&
                    memcmp(natsio_kv_entry_value(e), lw.value[i], strlen(lw.value[i])) == 0;
        char desc[96];
        snprintf(desc, sizeof desc, "%s@%llu op %d \"%s\"", natsio_kv_entry_key(e),
                 (unsigned long long)natsio_kv_entry_revision(e), (int)natsio_kv_entry_operation(e),
                 natsio_kv_entry_value(e));
        natsio_kv_entry_free(e);
        NT_CHECK_MSG(same, "change %d: got %s, want %s@%llu op %d \"%s\"", i, desc, lw.key[i],
                     (unsigned long long)lw.rev[i], (int)lw.op[i], lw.value[i]);
        got++;
    }
    natsio_kv_entry *extra = SENTINEL;
    EXPECT(NATSIO_ERR_TIMEOUT, natsio_kv_watcher_next(w, 200, &extra));
    natsio_iter_stats s;
    OK(natsio_kv_watcher_get_stats(w, &s));
    printf("  the watcher delivered %d of %d changes, in order; stalls %llu, dropped %llu\n", got, LAG_CHANGES,
           (unsigned long long)s.stalls, (unsigned long long)s.dropped);
    NT_CHECK_INT_EQ(s.stalls, 0);
    NT_CHECK_INT_EQ(s.dropped, 0);
}

/* ---- scenario: resume after a server restart ---------------------------------------------- */

/* Push-mode arrival times of the payload "after" (ms, monotonic). */
typedef struct {
    atomic_llong after_ms;
    atomic_int before, after;
    atomic_int final_calls;
} arrivals;

static void note_arrival(arrivals *a, const char *data, size_t len) {
    if (len == 5 && memcmp(data, "after", 5) == 0) {
        long long zero = 0;
        atomic_compare_exchange_strong(&a->after_ms, &zero, (long long)nt_now_ms());
        atomic_fetch_add(&a->after, 1);
    } else if (len == 6 && memcmp(data, "before", 6) == 0) {
        atomic_fetch_add(&a->before, 1);
    }
}
static void arrival_msg_cb(void *ud, const natsio_msg *m, natsio_status st) {
    if (m) {
        note_arrival((arrivals *)ud, natsio_msg_data(m), natsio_msg_data_len(m));
        natsio_msg_ack(m);
    } else {
        (void)st;
        atomic_fetch_add(&((arrivals *)ud)->final_calls, 1);
    }
}
static void arrival_entry_cb(void *ud, const natsio_kv_entry *e, natsio_status st) {
    if (e) {
        note_arrival((arrivals *)ud, natsio_kv_entry_value(e), natsio_kv_entry_value_len(e));
    } else {
        (void)st;
        atomic_fetch_add(&((arrivals *)ud)->final_calls, 1);
    }
}

static bool both_before(void *a) {
    arrivals *x = (arrivals *)a;
    return atomic_load(&x[0].before) > 0 && atomic_load(&x[1].before) > 0;
}
static bool both_after(void *a) {
    arrivals *x = (arrivals *)a;
    return atomic_load(&x[0].after_ms) > 0 && atomic_load(&x[1].after_ms) > 0;
}

typedef struct {
    natsio_client *c;
    uint64_t from;
} reconnect_wait;
static bool reconnected(void *a) {
    reconnect_wait *r = (reconnect_wait *)a;
    natsio_client_stats s;
    return natsio_client_get_stats(r->c, &s) == NATSIO_OK && s.reconnects > r->from &&
           natsio_client_status(r->c) == NATSIO_CONN_CONNECTED;
}

static void test_consume_and_watch_resume_after_server_restart(void) {
    g_main_thread = pthread_self();
    nt_set_case_timeout(120);
    nt_server *srv = nt_server_start(NULL);
    NT_CHECK(srv);
    nt_cleanup(server_stop_cleanup, srv);
    natsio_client *c = connect_to(nt_server_url(srv), true);
    NT_CHECK(c);
    natsio_js *js = NULL;
    OK(natsio_client_jetstream(c, NULL, &js));
    nt_cleanup(js_cleanup, js);
    /* File storage: the stream, its durable consumer and the bucket survive. */
    OK(natsio_js_stream_create(js, "{\"name\":\"RS\",\"subjects\":[\"rs.>\"],\"storage\":\"file\"}", NATSIO_CREATE,
                               NULL));
    OK(natsio_js_consumer_create(js, "RS", "{\"durable_name\":\"RC\",\"ack_policy\":\"explicit\"}", NATSIO_CREATE,
                                 NULL));
    natsio_kv *kv = NULL;
    OK(natsio_js_kv_create(js, "{\"bucket\":\"RKV\",\"storage\":\"file\"}", NATSIO_CREATE, &kv));
    nt_cleanup(kv_cleanup, kv);
    static arrivals arr[2]; /* 0: consume, 1: watch */
    memset(arr, 0, sizeof arr);
    /* Pull requests live 30 s and heartbeats are 15 s apart: without a
     * re-pull on reconnect the first message would come back only after two
     * missed heartbeats (30 s). */
    natsio_consume_options co;
    natsio_consume_options_init(&co);
    co.expires_ms = 30000;
    natsio_js_messages *msgs = NULL;
    OK(natsio_js_consume(js, "RS", "RC", &co, &msgs));
    nt_cleanup(messages_cleanup, msgs);
    OK(natsio_js_messages_set_callback(msgs, arrival_msg_cb, &arr[0], NULL));
    natsio_kv_watcher *w = NULL;
    OK(natsio_kv_watch(kv, NULL, 0, NULL, &w));
    nt_cleanup(watcher_cleanup, w);
    OK(natsio_kv_watcher_set_callback(w, arrival_entry_cb, &arr[1], NULL));
    OK(natsio_js_publish(js, "rs.x", "before", 6, NULL, NULL));
    OK(natsio_kv_put(kv, "k", "before", 6, NULL, NULL));
    NT_CHECK_MSG(nt_wait_until(both_before, arr, 5000), "nothing arrived before the restart");

    natsio_client_stats st0;
    OK(natsio_client_get_stats(c, &st0));
    int64_t t_kill = nt_now_ms();
    nt_server_kill(srv);
    NT_CHECK(nt_server_restart(srv) == 0);
    int64_t t_up = nt_now_ms();
    reconnect_wait rw = {c, st0.reconnects};
    NT_CHECK_MSG(nt_wait_until(reconnected, &rw, 20000), "the client did not reconnect");
    int64_t t_reconnect = nt_now_ms();
    /* Publish as soon as JetStream answers again (it recovers the store). */
    int64_t t_pub = 0, t_put = 0;
    int tries = 0;
    while ((t_pub == 0 || t_put == 0) && nt_now_ms() - t_reconnect < 20000) {
        tries++;
        if (t_pub == 0 && natsio_js_publish(js, "rs.x", "after", 5, NULL, NULL) == NATSIO_OK) t_pub = nt_now_ms();
        if (t_put == 0 && natsio_kv_put(kv, "k", "after", 5, NULL, NULL) == NATSIO_OK) t_put = nt_now_ms();
        if (t_pub == 0 || t_put == 0) nt_sleep_ms(20);
    }
    NT_CHECK_MSG(t_pub && t_put, "publishing after the restart failed: %s", natsio_last_error());
    bool arrived = nt_wait_until(both_after, arr, 20000);
    /* Latencies count from each write's ack, as the Rust twin does: what lies
     * before it is JetStream recovering its file store, which a loaded
     * machine (or valgrind) stretches to seconds and which says nothing of
     * the library. */
    int64_t consume_ms = atomic_load(&arr[0].after_ms) ? atomic_load(&arr[0].after_ms) - t_pub : -1;
    int64_t watch_ms = atomic_load(&arr[1].after_ms) ? atomic_load(&arr[1].after_ms) - t_put : -1;
    printf("  restart: kill -> server up %lld ms, up -> client reconnected %lld ms\n",
           (long long)(t_up - t_kill), (long long)(t_reconnect - t_up));
    printf("  after the reconnect: publish accepted at +%lld ms, put at +%lld ms (%d tries)\n",
           (long long)(t_pub - t_reconnect), (long long)(t_put - t_reconnect), tries);
    printf("  first message through the running consume %lld ms after its ack, first entry through the watch "
           "%lld ms after its ack\n",
           (long long)consume_ms, (long long)watch_ms);
    NT_CHECK_MSG(arrived, "consume %lld ms, watch %lld ms: not both arrived in 20 s", (long long)consume_ms,
                 (long long)watch_ms);
    /* While JetStream recovers, the consume's and the watch's attempts fail
     * and are retried with a backoff that grows to 5 s (ADR-17): the first
     * attempt after the ack may come that late. 6 s, as the Rust twin. */
    NT_CHECK_MSG(consume_ms < 6000, "consume resumed %lld ms after the publish's ack", (long long)consume_ms);
    NT_CHECK_MSG(watch_ms < 6000, "watch resumed %lld ms after the put's ack", (long long)watch_ms);
    /* An absence: no second "after" through the watch (no replay) within
     * 200 ms. */
    nt_sleep_ms(200);
    NT_CHECK_INT_EQ(atomic_load(&arr[1].after), 1); /* the watch: once, no replay */
    NT_CHECK_INT_EQ(atomic_load(&arr[0].final_calls), 0);
    NT_CHECK_INT_EQ(atomic_load(&arr[1].final_calls), 0);
}

static void stop_shared_server(void *s) { nt_server_stop((nt_server *)s); }

int main(int argc, char **argv) {
    static const nt_case cases[] = {
        CASES(check_next_in_order),
        CASES(check_no_wait),
        CASES(check_timeout),
        CASES(check_next_async_order),
        CASES(check_stop_done),
        CASES(check_callback_final_before_stop_returns),
        CASES(check_no_callback_after_stop),
        CASES(check_no_callback_after_free),
        CASES(check_next_in_callback_mode),
        CASES(check_set_callback_with_pending_token),
        CASES(check_buffered_before_callback),
        CASES(check_cancelled_token_loses_nothing),
        CASES(check_cancel_race_loses_nothing),
        CASES(check_client_closed_next),
        CASES(check_client_closed_callback),
        CASES(check_stats),
        NT_CASE(test_lagging_kv_watcher_sees_every_change),
        NT_CASE(test_consume_and_watch_resume_after_server_restart),
    };
    /* --list needs no server. */
    bool list = argc > 1 && strcmp(argv[1], "--list") == 0;
    if (!list) {
        g_srv = nt_server_start(NULL);
        if (!g_srv) {
            fprintf(stderr, "cannot start nats-server\n");
            return 1;
        }
        nt_cleanup(stop_shared_server, g_srv);
    }
    return nt_main(argc, argv, cases, NT_COUNT(cases));
}
