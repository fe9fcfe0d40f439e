/*
 * Every `_async` (token) form of the C ABI against a real nats-server.
 *
 * One table lists the operations: for each, how to prepare what it needs
 * (blocking calls), how to start it, which typed accessor reads its result
 * and how to check that result against the blocking form. Generic cases run
 * the whole table:
 *
 *   - success: the accessor gives the blocking form's result; every other
 *     accessor says NATSIO_ERR_ILLEGAL_STATE; cancel after completion says
 *     NATSIO_ERR_ILLEGAL_STATE; a callback registered after completion runs
 *     once, on a library thread; a second registration is refused;
 *   - pending (server SIGSTOPped): NATSIO_PENDING from the status and the
 *     accessor, wait times out, cancel -> NATSIO_ERR_CANCELLED (callback
 *     still runs), a second cancel -> NATSIO_ERR_ILLEGAL_STATE;
 *   - callback registered while pending: runs once, after completion, on a
 *     library thread, seeing the right status, then release;
 *   - free while pending: the callback never runs, its release does;
 *   - client closed while pending: NATSIO_ERR_CONNECTION_CLOSED.
 *
 * Then tables of error classes (per operation: the server's refusals,
 * timeouts against a stopped server), of argument errors (returned by the
 * call, token untouched), every operation of an already closed client,
 * ack_sync's local errors, the take-once accessors and untaken results, and
 * a completion callback that frees its own token.
 *
 * Each case starts its own server: cases stop it with SIGSTOP to hold
 * operations pending (and SIGCONT it before it is stopped for good).
 */
#define _POSIX_C_SOURCE 200809L

#include "call_options.h"
#include "harness.h"

#include <natsio_sys.h> /* the completion queue */

#include <poll.h>
#include <pthread.h>
#include <sys/eventfd.h>
#include <unistd.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- small helpers --------------------------------------------------------- */

static pthread_t g_main_thread;

/* Out pointers are preset to this; a call that fails must leave it. */
static char g_sentinel_storage[4];
#define SENTINEL ((void *)&g_sentinel_storage[1])
#define U64_SENTINEL UINT64_C(0xfeedfacecafebeef)

#define ST(call) natsio_status_str(call)

/* `call` must return NATSIO_OK (void functions). */
#define OK(call)                                                                         \
    do {                                                                                 \
        natsio_status ok_ = (call);                                                      \
        NT_CHECK_MSG(ok_ == NATSIO_OK, "%s: %s (%s)", #call, natsio_status_str(ok_),     \
                     natsio_last_error());                                               \
    } while (0)

/* `call` must return `want` (void functions). */
#define EXPECT(want, call)                                                               \
    do {                                                                                 \
        natsio_status got_ = (call);                                                     \
        NT_CHECK_MSG(got_ == (natsio_status)(want), "%s: got %s, want %s (%s)", #call,  \
                     natsio_status_str(got_), natsio_status_str(want),                   \
                     natsio_last_error());                                               \
    } while (0)

/* `call` must return NATSIO_OK (bool functions: record and return false). */
#define OKB(call)                                                                        \
    do {                                                                                 \
        natsio_status ok_ = (call);                                                      \
        if (ok_ != NATSIO_OK) {                                                          \
            nt_fail_at(__FILE__, __LINE__, "%s: %s (%s)", #call, natsio_status_str(ok_), \
                       natsio_last_error());                                             \
            return false;                                                                \
        }                                                                                \
    } while (0)

/* The integer after the first `"key":` in json. */
static bool json_i64(const char *json, const char *key, int64_t *out) {
    char pat[64];
    snprintf(pat, sizeof pat, "\"%s\":", key);
    const char *p = json ? strstr(json, pat) : NULL;
    if (!p) return false;
    *out = strtoll(p + strlen(pat), NULL, 10);
    return true;
}

static bool json_has(const char *json, const char *key, const char *value) {
    char pat[128];
    snprintf(pat, sizeof pat, "\"%s\":\"%s\"", key, value);
    return json && strstr(json, pat) != NULL;
}

static bool msg_is(const natsio_msg *m, const char *s) {
    return m && natsio_msg_data_len(m) == strlen(s) && memcmp(natsio_msg_data(m), s, strlen(s)) == 0;
}

static bool entry_is(const natsio_kv_entry *e, const char *s) {
    return e && natsio_kv_entry_value_len(e) == strlen(s) &&
           memcmp(natsio_kv_entry_value(e), s, strlen(s)) == 0;
}

static bool list_has(const natsio_string_list *l, const char *s) {
    for (size_t i = 0; i < natsio_string_list_count(l); i++)
        if (strcmp(natsio_string_list_get(l, i), s) == 0) return true;
    return false;
}

/* Same strings, in any order. */
static bool lists_same(const natsio_string_list *a, const natsio_string_list *b) {
    if (natsio_string_list_count(a) != natsio_string_list_count(b)) return false;
    for (size_t i = 0; i < natsio_string_list_count(a); i++)
        if (!list_has(b, natsio_string_list_get(a, i))) return false;
    return true;
}

/* Waits (10 s) for a token that must complete. */
static bool wait_done(natsio_token *t) {
    natsio_status st = natsio_token_wait(t, 10000);
    if (st != NATSIO_OK) {
        nt_fail_at(__FILE__, __LINE__, "token did not complete: %s", ST(st));
        return false;
    }
    return true;
}

/* ---- the fixture: a server, a client, JetStream, a stream, a bucket ------- */

typedef struct {
    nt_server *srv;
    natsio_client *c;
    natsio_js *js;
    natsio_js *js_short; /* 300 ms API timeout, for the timeout class */
    natsio_kv *kv;       /* bucket KV: a=va1 (rev 1), b=vb1 (2), a=va2 (3) */
    natsio_kv *kv_short; /* KV through js_short */
    natsio_sub *responder;
    natsio_sub *silent; /* receives svc.silent requests, never answers */
} fx_t;

static fx_t g_fx;

static void echo_cb(void *ud, const natsio_msg *m, natsio_status st) {
    (void)ud;
    if (st != NATSIO_OK || m == NULL) return;
    char buf[256];
    int n = snprintf(buf, sizeof buf, "re:%.*s", (int)natsio_msg_data_len(m), natsio_msg_data(m));
    natsio_msg_respond(m, buf, (size_t)n);
}

/* SIGSTOP the server: requests reach its socket but get no answer. */
static void fx_stop_server(void) {
    NT_CHECK_MSG(nt_server_pause(g_fx.srv) == 0, "the server did not stop");
}

static void fx_resume_server(void) { nt_server_resume(g_fx.srv); }

static void fx_cleanup(void *arg) {
    (void)arg;
    fx_resume_server();
    natsio_sub_free(g_fx.responder);
    natsio_sub_free(g_fx.silent);
    natsio_kv_free(g_fx.kv);
    natsio_kv_free(g_fx.kv_short);
    natsio_js_free(g_fx.js);
    natsio_js_free(g_fx.js_short);
    natsio_client_free(g_fx.c);
    memset(&g_fx, 0, sizeof g_fx);
}

static bool js_pub(natsio_js *js, const char *subject, const char *data) {
    OKB(natsio_js_publish(js, subject, data, strlen(data), NULL, NULL));
    return true;
}

static bool make_stream(natsio_js *js, const char *name, const char *subjects, int nmsgs) {
    char cfg[256], subj[96];
    snprintf(cfg, sizeof cfg, "{\"name\":\"%s\",\"subjects\":[\"%s\"],\"storage\":\"memory\"}", name, subjects);
    OKB(natsio_js_stream_create(js, cfg, NATSIO_CREATE, NULL));
    snprintf(subj, sizeof subj, "%s", subjects);
    char *gt = strchr(subj, '>');
    if (gt) *gt = 'x';
    for (int i = 1; i <= nmsgs; i++) {
        char data[16];
        snprintf(data, sizeof data, "m%d", i);
        if (!js_pub(js, subj, data)) return false;
    }
    return true;
}

static bool make_consumer(natsio_js *js, const char *stream, const char *name, const char *ack) {
    char cfg[256];
    snprintf(cfg, sizeof cfg, "{\"durable_name\":\"%s\",\"ack_policy\":\"%s\"}", name, ack);
    OKB(natsio_js_consumer_create(js, stream, cfg, NATSIO_CREATE, NULL));
    return true;
}

static bool fx_setup(void) {
    memset(&g_fx, 0, sizeof g_fx);
    g_fx.srv = nt_server_start(NULL);
    if (!g_fx.srv) {
        nt_fail_at(__FILE__, __LINE__, "nats-server did not start");
        return false;
    }
    nt_cleanup(nt_server_stop_cb, g_fx.srv);
    nt_cleanup(fx_cleanup, NULL);
    OKB(natsio_client_connect_url(nt_server_url(g_fx.srv), &g_fx.c));
    OKB(natsio_client_jetstream(g_fx.c, NULL, &g_fx.js));
    natsio_js_options jo;
    natsio_js_options_init(&jo);
    jo.timeout_ms = 300;
    jo.publish_async_timeout_ms = 300;
    OKB(natsio_client_jetstream(g_fx.c, &jo, &g_fx.js_short));
    /* ORD: ord.x holds m1, m2, m3 (seq 1-3). */
    if (!make_stream(g_fx.js, "ORD", "ord.>", 3)) return false;
    OKB(natsio_js_kv_create(g_fx.js, "{\"bucket\":\"KV\",\"history\":5,\"storage\":\"memory\"}", NATSIO_CREATE,
                            &g_fx.kv));
    OKB(natsio_js_kv_bind(g_fx.js_short, "KV", &g_fx.kv_short));
    OKB(natsio_kv_put(g_fx.kv, "a", "va1", 3, NULL, NULL));
    OKB(natsio_kv_put(g_fx.kv, "b", "vb1", 3, NULL, NULL));
    OKB(natsio_kv_put(g_fx.kv, "a", "va2", 3, NULL, NULL));
    OKB(natsio_client_subscribe(g_fx.c, "svc.echo", NULL, NULL, &g_fx.responder));
    OKB(natsio_sub_set_callback(g_fx.responder, echo_cb, NULL, NULL));
    OKB(natsio_client_subscribe(g_fx.c, "svc.silent", NULL, NULL, &g_fx.silent));
    OKB(natsio_client_flush(g_fx.c, NATSIO_TIMEOUT_DEFAULT));
    return true;
}

static natsio_client *connect_new(const char *url) {
    natsio_client *c = NULL;
    natsio_status st = natsio_client_connect_url(url, &c);
    if (st != NATSIO_OK) {
        nt_fail_at(__FILE__, __LINE__, "connect: %s (%s)", ST(st), natsio_last_error());
        return NULL;
    }
    return c;
}

/* ---- accessors by result kind ---------------------------------------------- */

typedef enum {
    K_NONE, /* completes with a status only */
    K_MSG,
    K_STRING,
    K_U64,
    K_PUB_ACK,
    K_KV,
    K_KV_ENTRY,
    K_STORED_MSG,
    K_MSG_LIST,
    K_KV_ENTRY_LIST,
    K_STRING_LIST,
    K_CLIENT,
    K_JS_MESSAGES,
    K_KV_WATCHER,
    K_COUNT
} kind_t;

static const char *kind_name(kind_t k) {
    static const char *names[] = {"none",   "msg",        "string",   "u64",           "pub_ack",
                                  "kv",     "kv_entry",   "stored",   "msg_list",      "kv_entry_list",
                                  "string_list", "client", "js_messages", "kv_watcher"};
    return names[k];
}

/* Calls the accessor of kind k; anything it returns is freed at once.
 * *untouched: the out argument was left as it was. */
static natsio_status access_kind(kind_t k, natsio_token *t, bool *untouched) {
    void *p = SENTINEL;
    uint64_t u = U64_SENTINEL;
    natsio_status st = NATSIO_ERR_INTERNAL;
    switch (k) {
    case K_NONE: *untouched = true; return natsio_token_status(t);
    case K_MSG: st = natsio_token_msg(t, (natsio_msg **)&p); break;
    case K_STRING: st = natsio_token_string(t, (char **)&p); break;
    case K_U64: st = natsio_token_u64(t, &u); break;
    case K_PUB_ACK: st = natsio_token_pub_ack(t, (natsio_pub_ack **)&p); break;
    case K_KV: st = natsio_token_kv(t, (natsio_kv **)&p); break;
    case K_KV_ENTRY: st = natsio_token_kv_entry(t, (natsio_kv_entry **)&p); break;
    case K_STORED_MSG: st = natsio_token_stored_msg(t, (natsio_stored_msg **)&p); break;
    case K_MSG_LIST: st = natsio_token_msg_list(t, (natsio_msg_list **)&p); break;
    case K_KV_ENTRY_LIST: st = natsio_token_kv_entry_list(t, (natsio_kv_entry_list **)&p); break;
    case K_STRING_LIST: st = natsio_token_string_list(t, (natsio_string_list **)&p); break;
    case K_CLIENT: st = natsio_token_client(t, (natsio_client **)&p); break;
    case K_JS_MESSAGES: st = natsio_token_js_messages(t, (natsio_js_messages **)&p); break;
    case K_KV_WATCHER: st = natsio_token_kv_watcher(t, (natsio_kv_watcher **)&p); break;
    case K_COUNT: break;
    }
    *untouched = (k == K_U64) ? (u == U64_SENTINEL) : (p == SENTINEL);
    if (st == NATSIO_OK && !*untouched && k != K_U64) {
        switch (k) {
        case K_MSG: natsio_msg_free((natsio_msg *)p); break;
        case K_STRING: natsio_string_free((char *)p); break;
        case K_PUB_ACK: natsio_pub_ack_free((natsio_pub_ack *)p); break;
        case K_KV: natsio_kv_free((natsio_kv *)p); break;
        case K_KV_ENTRY: natsio_kv_entry_free((natsio_kv_entry *)p); break;
        case K_STORED_MSG: natsio_stored_msg_free((natsio_stored_msg *)p); break;
        case K_MSG_LIST: natsio_msg_list_free((natsio_msg_list *)p); break;
        case K_KV_ENTRY_LIST: natsio_kv_entry_list_free((natsio_kv_entry_list *)p); break;
        case K_STRING_LIST: natsio_string_list_free((natsio_string_list *)p); break;
        case K_CLIENT: natsio_client_free((natsio_client *)p); break;
        case K_JS_MESSAGES: natsio_js_messages_free((natsio_js_messages *)p); break;
        case K_KV_WATCHER: natsio_kv_watcher_free((natsio_kv_watcher *)p); break;
        default: break;
        }
    }
    return st;
}

/* ---- completion callback recorder ------------------------------------------ */

typedef struct {
    atomic_int calls;
    atomic_int releases;
    atomic_int calls_at_release; /* calls seen when release ran */
    atomic_bool on_main;         /* a call ran on the test's main thread */
    atomic_bool wrong_token;
    _Atomic natsio_status status;
    natsio_token *expect_token;
} cb_rec;

static void rec_cb(void *ud, natsio_token *t) {
    cb_rec *r = (cb_rec *)ud;
    if (pthread_equal(pthread_self(), g_main_thread)) atomic_store(&r->on_main, true);
    if (t != r->expect_token) atomic_store(&r->wrong_token, true);
    atomic_store(&r->status, natsio_token_status(t));
    atomic_fetch_add(&r->calls, 1);
}

static void rec_release(void *ud) {
    cb_rec *r = (cb_rec *)ud;
    atomic_store(&r->calls_at_release, atomic_load(&r->calls));
    atomic_fetch_add(&r->releases, 1);
}

static void rec_init(cb_rec *r, natsio_token *t) {
    memset(r, 0, sizeof *r);
    atomic_store(&r->calls_at_release, -1);
    atomic_store(&r->status, NATSIO_ERR_INTERNAL);
    r->expect_token = t;
}

static bool rec_released(void *ud) { return atomic_load(&((cb_rec *)ud)->releases) > 0; }

/* nt_cleanup adapters. */
static void token_free_cb_async(void *p) { natsio_token_free((natsio_token *)p); }
static void msg_free_cb_async(void *p) { natsio_msg_free((natsio_msg *)p); }
static void sub_free_cb_async(void *p) { natsio_sub_free((natsio_sub *)p); }
static void client_free_cb_async(void *p) { natsio_client_free((natsio_client *)p); }
static void messages_free_cb_async(void *p) { natsio_js_messages_free((natsio_js_messages *)p); }
static void watcher_free_cb_async(void *p) { natsio_kv_watcher_free((natsio_kv_watcher *)p); }

/* ---- the operation table ---------------------------------------------------- */

typedef struct {
    int idx;
    char name[48];      /* a resource name private to the op */
    natsio_client *c2;  /* a private client */
    natsio_sub *sub;
    natsio_msg *msg;
    natsio_kv *kv;
    uint64_t u;
    atomic_int count;
} slot_t;

enum {
    F_PENDS = 1,  /* stays pending while the server is stopped */
    F_CLIENT = 2, /* runs on g_fx.c: fails when that client closes */
};

typedef struct {
    const char *name;
    kind_t kind;
    unsigned flags;
    bool (*prepare)(slot_t *s); /* may be NULL */
    natsio_status (*start)(slot_t *s, natsio_token **t);
    void (*verify)(slot_t *s, natsio_token *t); /* success: result == blocking form's */
} op_t;

#define NSLOTS 64
static slot_t g_slots[NSLOTS];

static void slots_cleanup(void *arg) {
    (void)arg;
    for (int i = 0; i < NSLOTS; i++) {
        slot_t *s = &g_slots[i];
        natsio_sub_free(s->sub);
        natsio_msg_free(s->msg);
        natsio_kv_free(s->kv);
        natsio_client_free(s->c2);
        memset(s, 0, sizeof *s);
    }
}

static slot_t *slot_for(int idx) {
    slot_t *s = &g_slots[idx];
    s->idx = idx;
    return s;
}

/* core ---------------------------------------------------------------------- */

static natsio_status start_request(slot_t *s, natsio_token **t) {
    (void)s;
    return natsio_client_request_async(g_fx.c, "svc.echo", NULL, "ping", 4, NATSIO_TIMEOUT_DEFAULT, t);
}
static void verify_request(slot_t *s, natsio_token *t) {
    (void)s;
    natsio_msg *a = NULL, *b = NULL;
    OK(natsio_token_msg(t, &a));
    bool same = msg_is(a, "re:ping");
    natsio_msg_free(a);
    NT_CHECK(same);
    OK(natsio_client_request(g_fx.c, "svc.echo", NULL, "ping", 4, NATSIO_TIMEOUT_DEFAULT, &b));
    same = msg_is(b, "re:ping");
    natsio_msg_free(b);
    NT_CHECK(same);
}

static natsio_status start_connect(slot_t *s, natsio_token **t) {
    (void)s;
    natsio_options *o = NULL;
    natsio_options_new(&o);
    natsio_options_set_url(o, nt_server_url(g_fx.srv));
    natsio_status st = natsio_client_connect_async(o, t);
    natsio_options_free(o); /* copied by the call */
    return st;
}
static void verify_connect(slot_t *s, natsio_token *t) {
    natsio_client *c = NULL, *again = SENTINEL, *b = NULL;
    OK(natsio_token_client(t, &c));
    NT_CHECK(c != NULL);
    s->c2 = c;
    /* take once */
    EXPECT(NATSIO_ERR_ILLEGAL_STATE, natsio_token_client(t, &again));
    NT_CHECK(again == SENTINEL);
    NT_CHECK_INT_EQ(natsio_client_status(c), NATSIO_CONN_CONNECTED);
    OK(natsio_client_flush(c, NATSIO_TIMEOUT_DEFAULT));
    OK(natsio_client_connect_url(nt_server_url(g_fx.srv), &b));
    char *u1 = NULL, *u2 = NULL;
    natsio_client_connected_url(c, &u1);
    natsio_client_connected_url(b, &u2);
    bool same = u1 && u2 && strcmp(u1, u2) == 0;
    natsio_string_free(u1);
    natsio_string_free(u2);
    natsio_client_free(b);
    NT_CHECK(same);
}

static bool prepare_private_client(slot_t *s) {
    s->c2 = connect_new(nt_server_url(g_fx.srv));
    return s->c2 != NULL;
}
static natsio_status start_close(slot_t *s, natsio_token **t) { return natsio_client_close_async(s->c2, t); }
static void verify_close(slot_t *s, natsio_token *t) {
    OK(natsio_token_status(t));
    NT_CHECK_INT_EQ(natsio_client_status(s->c2), NATSIO_CONN_CLOSED);
    OK(natsio_client_close(s->c2)); /* blocking form: idempotent */
    EXPECT(NATSIO_ERR_CONNECTION_CLOSED, natsio_client_flush(s->c2, NATSIO_TIMEOUT_DEFAULT));
}

static bool prepare_drain(slot_t *s) {
    if (!prepare_private_client(s)) return false;
    OKB(natsio_client_subscribe(s->c2, "drain.me", NULL, NULL, &s->sub));
    return true;
}
static natsio_status start_drain(slot_t *s, natsio_token **t) {
    return natsio_client_drain_async(s->c2, NATSIO_TIMEOUT_DEFAULT, t);
}
static void verify_drain(slot_t *s, natsio_token *t) {
    OK(natsio_token_status(t));
    NT_CHECK_INT_EQ(natsio_client_status(s->c2), NATSIO_CONN_CLOSED);
    natsio_client *b = connect_new(nt_server_url(g_fx.srv));
    NT_CHECK(b != NULL);
    natsio_status st = natsio_client_drain(b, NATSIO_TIMEOUT_DEFAULT);
    natsio_conn_status cs = natsio_client_status(b);
    natsio_client_free(b);
    NT_CHECK_INT_EQ(st, NATSIO_OK);
    NT_CHECK_INT_EQ(cs, NATSIO_CONN_CLOSED);
}

static natsio_status start_flush(slot_t *s, natsio_token **t) {
    (void)s;
    return natsio_client_flush_async(g_fx.c, NATSIO_TIMEOUT_DEFAULT, t);
}
static void verify_flush(slot_t *s, natsio_token *t) {
    (void)s;
    OK(natsio_token_status(t));
    OK(natsio_client_flush(g_fx.c, NATSIO_TIMEOUT_DEFAULT));
}

static void count_cb(void *ud, const natsio_msg *m, natsio_status st) {
    (void)st;
    if (m) atomic_fetch_add(&((slot_t *)ud)->count, 1);
}
/* A callback subscription with two messages sent to it (a drain in
 * iterator mode would need another thread to take the backlog). */
static bool prepare_sub_drain(slot_t *s) {
    char subj[64];
    snprintf(subj, sizeof subj, "sd.%d", s->idx);
    atomic_store(&s->count, 0);
    OKB(natsio_client_subscribe(g_fx.c, subj, NULL, NULL, &s->sub));
    OKB(natsio_sub_set_callback(s->sub, count_cb, s, NULL));
    OKB(natsio_client_publish(g_fx.c, subj, "1", 1));
    OKB(natsio_client_publish(g_fx.c, subj, "2", 1));
    OKB(natsio_client_flush(g_fx.c, NATSIO_TIMEOUT_DEFAULT));
    return true;
}
static natsio_status start_sub_drain(slot_t *s, natsio_token **t) { return natsio_sub_drain_async(s->sub, NATSIO_TIMEOUT_DEFAULT, t); }
static void verify_sub_drain(slot_t *s, natsio_token *t) {
    OK(natsio_token_status(t));
    NT_CHECK_INT_EQ(atomic_load(&s->count), 2);
    NT_CHECK(natsio_sub_is_closed(s->sub));
    /* The blocking form on a fresh subscription. */
    slot_t tmp;
    memset(&tmp, 0, sizeof tmp);
    tmp.idx = 1000 + s->idx;
    NT_CHECK(prepare_sub_drain(&tmp));
    natsio_status st = natsio_sub_drain(tmp.sub, NATSIO_TIMEOUT_DEFAULT);
    int n = atomic_load(&tmp.count);
    natsio_sub_free(tmp.sub);
    NT_CHECK_INT_EQ(st, NATSIO_OK);
    NT_CHECK_INT_EQ(n, 2);
}

/* JetStream: account, streams -------------------------------------------------- */

static natsio_status start_account_info(slot_t *s, natsio_token **t) {
    (void)s;
    return natsio_js_account_info_async(g_fx.js, t);
}
static void verify_account_info(slot_t *s, natsio_token *t) {
    (void)s;
    char *a = NULL, *b = NULL;
    OK(natsio_token_string(t, &a));
    natsio_status st = natsio_js_account_info(g_fx.js, &b);
    int64_t na = -1, nb = -2;
    bool ok = json_i64(a, "streams", &na) && json_i64(b, "streams", &nb);
    natsio_string_free(a);
    natsio_string_free(b);
    NT_CHECK_INT_EQ(st, NATSIO_OK);
    NT_CHECK(ok);
    NT_CHECK_INT_EQ(na, nb);
}

static void stream_cfg(char *buf, size_t cap, const char *name) {
    snprintf(buf, cap, "{\"name\":\"%s\",\"subjects\":[\"%s.>\"],\"storage\":\"memory\"}", name, name);
}
static bool prepare_name_sc(slot_t *s) {
    snprintf(s->name, sizeof s->name, "SC%d", s->idx);
    return true;
}
static natsio_status start_stream_create(slot_t *s, natsio_token **t) {
    char cfg[256];
    stream_cfg(cfg, sizeof cfg, s->name);
    return natsio_js_stream_create_async(g_fx.js, cfg, NATSIO_CREATE, t);
}
static void verify_stream_create(slot_t *s, natsio_token *t) {
    char cfg[256], *a = NULL, *b = NULL;
    OK(natsio_token_string(t, &a));
    stream_cfg(cfg, sizeof cfg, s->name);
    natsio_status st = natsio_js_stream_create(g_fx.js, cfg, NATSIO_CREATE, &b); /* identical: fine */
    bool ok = json_has(a, "name", s->name) && json_has(b, "name", s->name);
    natsio_string_free(a);
    natsio_string_free(b);
    NT_CHECK_INT_EQ(st, NATSIO_OK);
    NT_CHECK(ok);
}

static natsio_status start_stream_info(slot_t *s, natsio_token **t) {
    (void)s;
    return natsio_js_stream_info_async(g_fx.js, "ORD", NULL, t);
}
static void verify_stream_info(slot_t *s, natsio_token *t) {
    (void)s;
    char *a = NULL, *b = NULL;
    OK(natsio_token_string(t, &a));
    natsio_status st = natsio_js_stream_info(g_fx.js, "ORD", NULL, &b);
    int64_t na = -1, nb = -2;
    bool ok = json_i64(a, "messages", &na) && json_i64(b, "messages", &nb) && json_has(a, "name", "ORD");
    natsio_string_free(a);
    natsio_string_free(b);
    NT_CHECK_INT_EQ(st, NATSIO_OK);
    NT_CHECK(ok);
    NT_CHECK_INT_EQ(na, nb);
}

static bool prepare_stream(slot_t *s, const char *prefix, int nmsgs) {
    char subjects[64];
    snprintf(s->name, sizeof s->name, "%s%d", prefix, s->idx);
    snprintf(subjects, sizeof subjects, "%s.>", s->name);
    return make_stream(g_fx.js, s->name, subjects, nmsgs);
}
static bool prepare_stream_sd(slot_t *s) { return prepare_stream(s, "SD", 0); }
static natsio_status start_stream_delete(slot_t *s, natsio_token **t) {
    return natsio_js_stream_delete_async(g_fx.js, s->name, t);
}
static void verify_stream_delete(slot_t *s, natsio_token *t) {
    OK(natsio_token_status(t));
    char *info = SENTINEL;
    EXPECT(NATSIO_ERR_STREAM_NOT_FOUND, natsio_js_stream_info(g_fx.js, s->name, NULL, &info));
    EXPECT(NATSIO_ERR_STREAM_NOT_FOUND, natsio_js_stream_delete(g_fx.js, s->name));
}

static bool prepare_stream_sp(slot_t *s) { return prepare_stream(s, "SP", 4); }
static natsio_status start_stream_purge(slot_t *s, natsio_token **t) {
    return natsio_js_stream_purge_async(g_fx.js, s->name, NULL, t);
}
static void verify_stream_purge(slot_t *s, natsio_token *t) {
    uint64_t n = 0, m = 99;
    OK(natsio_token_u64(t, &n));
    NT_CHECK_INT_EQ(n, 4);
    OK(natsio_js_stream_purge(g_fx.js, s->name, NULL, &m));
    NT_CHECK_INT_EQ(m, 0);
}

static natsio_status start_stream_names(slot_t *s, natsio_token **t) {
    (void)s;
    return natsio_js_stream_names_async(g_fx.js, NULL, t);
}
static void verify_stream_names(slot_t *s, natsio_token *t) {
    (void)s;
    natsio_string_list *a = NULL, *b = NULL;
    OK(natsio_token_string_list(t, &a));
    natsio_status st = natsio_js_stream_names(g_fx.js, NULL, &b);
    bool ok = list_has(a, "ORD") && list_has(a, "KV_KV") && lists_same(a, b);
    natsio_string_list_free(a);
    natsio_string_list_free(b);
    NT_CHECK_INT_EQ(st, NATSIO_OK);
    NT_CHECK(ok);
}

static natsio_status start_get_msg(slot_t *s, natsio_token **t) {
    (void)s;
    return natsio_js_stream_get_msg_async(g_fx.js, "ORD", 2, NULL, t);
}
static void verify_get_msg(slot_t *s, natsio_token *t) {
    (void)s;
    natsio_stored_msg *a = NULL, *b = NULL;
    OK(natsio_token_stored_msg(t, &a));
    natsio_status st = natsio_js_stream_get_msg(g_fx.js, "ORD", 2, NULL, &b);
    bool ok = a && b && natsio_stored_msg_seq(a) == 2 && natsio_stored_msg_seq(b) == 2 &&
              strcmp(natsio_stored_msg_data(a), "m2") == 0 && strcmp(natsio_stored_msg_data(b), "m2") == 0 &&
              strcmp(natsio_stored_msg_subject(a), natsio_stored_msg_subject(b)) == 0 &&
              natsio_stored_msg_time_ns(a) == natsio_stored_msg_time_ns(b);
    natsio_stored_msg_free(a);
    natsio_stored_msg_free(b);
    NT_CHECK_INT_EQ(st, NATSIO_OK);
    NT_CHECK(ok);
}

static bool prepare_stream_sdm(slot_t *s) { return prepare_stream(s, "SDM", 3); }
static natsio_status start_delete_msg(slot_t *s, natsio_token **t) {
    return natsio_js_stream_delete_msg_async(g_fx.js, s->name, 2, false, t);
}
static void verify_delete_msg(slot_t *s, natsio_token *t) {
    OK(natsio_token_status(t));
    natsio_stored_msg *m = SENTINEL;
    EXPECT(NATSIO_ERR_MESSAGE_NOT_FOUND, natsio_js_stream_get_msg(g_fx.js, s->name, 2, NULL, &m));
    NT_CHECK(m == SENTINEL);
    OK(natsio_js_stream_delete_msg(g_fx.js, s->name, 3, false));
    EXPECT(NATSIO_ERR_MESSAGE_NOT_FOUND, natsio_js_stream_delete_msg(g_fx.js, s->name, 2, false));
}

/* JetStream: consumers, fetch, next ------------------------------------------- */

static void consumer_cfg(char *buf, size_t cap, const char *name) {
    snprintf(buf, cap, "{\"durable_name\":\"%s\",\"ack_policy\":\"none\"}", name);
}
static bool prepare_name_cc(slot_t *s) {
    snprintf(s->name, sizeof s->name, "CC%d", s->idx);
    return true;
}
static natsio_status start_consumer_create(slot_t *s, natsio_token **t) {
    char cfg[256];
    consumer_cfg(cfg, sizeof cfg, s->name);
    return natsio_js_consumer_create_async(g_fx.js, "ORD", cfg, NATSIO_CREATE, t);
}
static void verify_consumer_create(slot_t *s, natsio_token *t) {
    char cfg[256], *a = NULL, *b = NULL;
    OK(natsio_token_string(t, &a));
    consumer_cfg(cfg, sizeof cfg, s->name);
    natsio_status st = natsio_js_consumer_create(g_fx.js, "ORD", cfg, NATSIO_CREATE, &b);
    int64_t pa = -1, pb = -2;
    bool ok = json_has(a, "name", s->name) && json_has(b, "name", s->name) && json_i64(a, "num_pending", &pa) &&
              json_i64(b, "num_pending", &pb) && pa == pb;
    natsio_string_free(a);
    natsio_string_free(b);
    NT_CHECK_INT_EQ(st, NATSIO_OK);
    NT_CHECK(ok);
}

static bool prepare_consumer(slot_t *s, const char *prefix, const char *ack) {
    snprintf(s->name, sizeof s->name, "%s%d", prefix, s->idx);
    return make_consumer(g_fx.js, "ORD", s->name, ack);
}
static bool prepare_consumer_ci(slot_t *s) { return prepare_consumer(s, "CI", "none"); }
static natsio_status start_consumer_info(slot_t *s, natsio_token **t) {
    return natsio_js_consumer_info_async(g_fx.js, "ORD", s->name, t);
}
static void verify_consumer_info(slot_t *s, natsio_token *t) {
    char *a = NULL, *b = NULL;
    OK(natsio_token_string(t, &a));
    natsio_status st = natsio_js_consumer_info(g_fx.js, "ORD", s->name, &b);
    int64_t pa = -1, pb = -2;
    bool ok = json_has(a, "name", s->name) && json_i64(a, "num_pending", &pa) && json_i64(b, "num_pending", &pb) &&
              pa == pb && pa == 3;
    natsio_string_free(a);
    natsio_string_free(b);
    NT_CHECK_INT_EQ(st, NATSIO_OK);
    NT_CHECK(ok);
}

static bool prepare_consumer_cd(slot_t *s) { return prepare_consumer(s, "CD", "none"); }
static natsio_status start_consumer_delete(slot_t *s, natsio_token **t) {
    return natsio_js_consumer_delete_async(g_fx.js, "ORD", s->name, t);
}
static void verify_consumer_delete(slot_t *s, natsio_token *t) {
    OK(natsio_token_status(t));
    char *info = SENTINEL;
    EXPECT(NATSIO_ERR_CONSUMER_NOT_FOUND, natsio_js_consumer_info(g_fx.js, "ORD", s->name, &info));
    EXPECT(NATSIO_ERR_CONSUMER_NOT_FOUND, natsio_js_consumer_delete(g_fx.js, "ORD", s->name));
}

static bool prepare_consumer_cn(slot_t *s) { return prepare_consumer(s, "CN", "none"); }
static natsio_status start_consumer_names(slot_t *s, natsio_token **t) {
    (void)s;
    return natsio_js_consumer_names_async(g_fx.js, "ORD", t);
}
static void verify_consumer_names(slot_t *s, natsio_token *t) {
    natsio_string_list *a = NULL, *b = NULL;
    OK(natsio_token_string_list(t, &a));
    natsio_status st = natsio_js_consumer_names(g_fx.js, "ORD", &b);
    bool ok = list_has(a, s->name) && lists_same(a, b);
    natsio_string_list_free(a);
    natsio_string_list_free(b);
    NT_CHECK_INT_EQ(st, NATSIO_OK);
    NT_CHECK(ok);
}

static bool prepare_consumer_f(slot_t *s) { return prepare_consumer(s, "F", "none"); }
static natsio_status start_fetch(slot_t *s, natsio_token **t) {
    natsio_fetch_options o;
    natsio_fetch_options_init(&o);
    o.max_messages = 2;
    o.expires_ms = 2000;
    return natsio_js_fetch_async(g_fx.js, "ORD", s->name, &o, t);
}
static void verify_fetch(slot_t *s, natsio_token *t) {
    natsio_msg_list *a = NULL, *b = NULL;
    OK(natsio_token_msg_list(t, &a));
    natsio_fetch_options o;
    natsio_fetch_options_init(&o);
    o.max_messages = 10;
    o.no_wait = true;
    natsio_status st = natsio_js_fetch(g_fx.js, "ORD", s->name, &o, &b);
    /* The token got m1, m2; the blocking fetch what is left: m3. */
    bool ok = natsio_msg_list_count(a) == 2 && msg_is(natsio_msg_list_get(a, 0), "m1") &&
              msg_is(natsio_msg_list_get(a, 1), "m2") && natsio_msg_list_count(b) == 1 &&
              msg_is(natsio_msg_list_get(b, 0), "m3");
    natsio_msg_list_free(a);
    natsio_msg_list_free(b);
    NT_CHECK_INT_EQ(st, NATSIO_OK);
    NT_CHECK(ok);
}

static bool prepare_consumer_n(slot_t *s) { return prepare_consumer(s, "N", "none"); }
static natsio_status start_next(slot_t *s, natsio_token **t) {
    return natsio_js_next_async(g_fx.js, "ORD", s->name, NEXT_WAIT(NATSIO_TIMEOUT_DEFAULT), t);
}
static void verify_next(slot_t *s, natsio_token *t) {
    natsio_msg *a = NULL, *b = NULL;
    OK(natsio_token_msg(t, &a));
    natsio_status st = natsio_js_next(g_fx.js, "ORD", s->name, NEXT_WAIT(NATSIO_TIMEOUT_DEFAULT), &b);
    bool ok = msg_is(a, "m1") && msg_is(b, "m2");
    natsio_msg_free(a);
    natsio_msg_free(b);
    NT_CHECK_INT_EQ(st, NATSIO_OK);
    NT_CHECK(ok);
}

/* JetStream: publish, consume, ack -------------------------------------------- */

static natsio_status start_publish(slot_t *s, natsio_token **t) {
    (void)s;
    return natsio_js_publish_async(g_fx.js, "ord.p", "pa", 2, NULL, t);
}
static void verify_publish(slot_t *s, natsio_token *t) {
    (void)s;
    natsio_pub_ack *a = NULL, *b = NULL;
    OK(natsio_token_pub_ack(t, &a));
    natsio_status st = natsio_js_publish(g_fx.js, "ord.p", "pb", 2, NULL, &b);
    bool ok = a && b && strcmp(natsio_pub_ack_stream(a), "ORD") == 0 &&
              strcmp(natsio_pub_ack_stream(b), "ORD") == 0 && natsio_pub_ack_seq(b) == natsio_pub_ack_seq(a) + 1 &&
              !natsio_pub_ack_duplicate(a);
    uint64_t seq = natsio_pub_ack_seq(a);
    natsio_pub_ack_free(a);
    natsio_pub_ack_free(b);
    NT_CHECK_INT_EQ(st, NATSIO_OK);
    NT_CHECK(ok);
    natsio_stored_msg *m = NULL;
    OK(natsio_js_stream_get_msg(g_fx.js, "ORD", seq, NULL, &m));
    ok = strcmp(natsio_stored_msg_data(m), "pa") == 0;
    natsio_stored_msg_free(m);
    NT_CHECK(ok);
}

/* One asynchronous publish, then a token for its completion. */
static natsio_status start_publish_complete(slot_t *s, natsio_token **t) {
    (void)s;
    natsio_token *p = NULL;
    natsio_status st = natsio_js_publish_async(g_fx.js, "ord.c", "pc", 2, NULL, &p);
    natsio_token_free(p); /* the publish still counts */
    if (st != NATSIO_OK) return st;
    return natsio_js_publish_async_complete_async(g_fx.js, NATSIO_TIMEOUT_DEFAULT, t);
}
static void verify_publish_complete(slot_t *s, natsio_token *t) {
    (void)s;
    OK(natsio_token_status(t));
    NT_CHECK_INT_EQ(natsio_js_publish_async_pending(g_fx.js), 0);
    OK(natsio_js_publish_async_complete(g_fx.js, NATSIO_TIMEOUT_DEFAULT));
}

static bool prepare_consumer_co(slot_t *s) {
    char other[48];
    snprintf(other, sizeof other, "COB%d", s->idx);
    return prepare_consumer(s, "CO", "none") && make_consumer(g_fx.js, "ORD", other, "none");
}
static natsio_status start_consume(slot_t *s, natsio_token **t) {
    return natsio_js_consume_async(g_fx.js, "ORD", s->name, NULL, t);
}
static void verify_consume(slot_t *s, natsio_token *t) {
    natsio_js_messages *a = NULL, *again = SENTINEL, *b = NULL;
    OK(natsio_token_js_messages(t, &a));
    NT_CHECK(a != NULL);
    natsio_status st2 = natsio_token_js_messages(t, &again); /* take once */
    natsio_msg *ma = NULL, *mb = NULL;
    natsio_status sa = natsio_js_messages_next(a, 5000, &ma);
    char other[48];
    snprintf(other, sizeof other, "COB%d", s->idx);
    natsio_status sb = natsio_js_consume(g_fx.js, "ORD", other, NULL, &b);
    natsio_status sbn = sb == NATSIO_OK ? natsio_js_messages_next(b, 5000, &mb) : sb;
    bool ok = msg_is(ma, "m1") && msg_is(mb, "m1");
    natsio_msg_free(ma);
    natsio_msg_free(mb);
    natsio_js_messages_free(a);
    natsio_js_messages_free(b);
    NT_CHECK_INT_EQ(st2, NATSIO_ERR_ILLEGAL_STATE);
    NT_CHECK(again == SENTINEL);
    NT_CHECK_INT_EQ(sa, NATSIO_OK);
    NT_CHECK_INT_EQ(sb, NATSIO_OK);
    NT_CHECK_INT_EQ(sbn, NATSIO_OK);
    NT_CHECK(ok);
}

/* A message of an explicit-ack consumer, kept in s->msg. */
static bool fetch_one(const char *consumer, natsio_msg **out) {
    natsio_fetch_options o;
    natsio_fetch_options_init(&o);
    o.max_messages = 1;
    o.expires_ms = 2000;
    natsio_msg_list *l = NULL;
    OKB(natsio_js_fetch(g_fx.js, "ORD", consumer, &o, &l));
    bool ok = natsio_msg_list_count(l) == 1 && natsio_msg_clone(natsio_msg_list_get(l, 0), out) == NATSIO_OK;
    natsio_msg_list_free(l);
    if (!ok) nt_fail_at(__FILE__, __LINE__, "fetch of one message from %s failed", consumer);
    return ok;
}
static bool prepare_ack(slot_t *s) {
    return prepare_consumer(s, "A", "explicit") && fetch_one(s->name, &s->msg);
}
static natsio_status start_ack_sync(slot_t *s, natsio_token **t) {
    return natsio_msg_ack_sync_async(s->msg, NATSIO_TIMEOUT_DEFAULT, t);
}
static void verify_ack_sync(slot_t *s, natsio_token *t) {
    OK(natsio_token_status(t));
    char *info = NULL;
    OK(natsio_js_consumer_info(g_fx.js, "ORD", s->name, &info));
    int64_t pending = -1;
    bool ok = json_i64(info, "num_ack_pending", &pending);
    natsio_string_free(info);
    NT_CHECK(ok);
    NT_CHECK_INT_EQ(pending, 0);
    natsio_msg *m = NULL;
    NT_CHECK(fetch_one(s->name, &m));
    natsio_status st = natsio_msg_ack_sync(m, NATSIO_TIMEOUT_DEFAULT);
    natsio_msg_free(m);
    NT_CHECK_INT_EQ(st, NATSIO_OK);
}

/* Key-Value: buckets ---------------------------------------------------------- */

static void bucket_cfg(char *buf, size_t cap, const char *name) {
    snprintf(buf, cap, "{\"bucket\":\"%s\",\"history\":3,\"storage\":\"memory\"}", name);
}
static bool prepare_name_kc(slot_t *s) {
    snprintf(s->name, sizeof s->name, "KC%d", s->idx);
    return true;
}
static natsio_status start_kv_create_bucket(slot_t *s, natsio_token **t) {
    char cfg[256];
    bucket_cfg(cfg, sizeof cfg, s->name);
    return natsio_js_kv_create_async(g_fx.js, cfg, NATSIO_CREATE, t);
}
static void verify_kv_create_bucket(slot_t *s, natsio_token *t) {
    natsio_kv *a = NULL, *b = NULL;
    OK(natsio_token_kv(t, &a));
    s->kv = a;
    NT_CHECK_STR_EQ(natsio_kv_bucket(a), s->name);
    char cfg[256];
    bucket_cfg(cfg, sizeof cfg, s->name);
    OK(natsio_js_kv_create(g_fx.js, cfg, NATSIO_CREATE, &b)); /* identical: binds */
    uint64_t rev = 0;
    natsio_status st = natsio_kv_put(a, "k", "v", 1, NULL, &rev);
    natsio_kv_entry *e = NULL;
    natsio_status sg = natsio_kv_get(b, "k", &e);
    bool ok = entry_is(e, "v") && natsio_kv_entry_revision(e) == rev;
    natsio_kv_entry_free(e);
    natsio_kv_free(b);
    NT_CHECK_INT_EQ(st, NATSIO_OK);
    NT_CHECK_INT_EQ(sg, NATSIO_OK);
    NT_CHECK(ok);
}

static natsio_status start_kv_bind(slot_t *s, natsio_token **t) {
    (void)s;
    return natsio_js_kv_bind_async(g_fx.js, "KV", t);
}
static void verify_kv_bind(slot_t *s, natsio_token *t) {
    natsio_kv *a = NULL, *b = NULL;
    OK(natsio_token_kv(t, &a));
    s->kv = a;
    NT_CHECK_STR_EQ(natsio_kv_bucket(a), "KV");
    OK(natsio_js_kv_bind(g_fx.js, "KV", &b));
    natsio_kv_entry *ea = NULL, *eb = NULL;
    natsio_status sa = natsio_kv_get(a, "a", &ea), sb = natsio_kv_get(b, "a", &eb);
    bool ok = entry_is(ea, "va2") && entry_is(eb, "va2") &&
              natsio_kv_entry_revision(ea) == natsio_kv_entry_revision(eb);
    natsio_kv_entry_free(ea);
    natsio_kv_entry_free(eb);
    natsio_kv_free(b);
    NT_CHECK_INT_EQ(sa, NATSIO_OK);
    NT_CHECK_INT_EQ(sb, NATSIO_OK);
    NT_CHECK(ok);
}

static bool prepare_bucket_kd(slot_t *s) {
    char cfg[256];
    snprintf(s->name, sizeof s->name, "KD%d", s->idx);
    bucket_cfg(cfg, sizeof cfg, s->name);
    OKB(natsio_js_kv_create(g_fx.js, cfg, NATSIO_CREATE, &s->kv));
    return true;
}
static natsio_status start_kv_delete_bucket(slot_t *s, natsio_token **t) {
    return natsio_js_kv_delete_async(g_fx.js, s->name, t);
}
static void verify_kv_delete_bucket(slot_t *s, natsio_token *t) {
    OK(natsio_token_status(t));
    natsio_kv *kv = SENTINEL;
    EXPECT(NATSIO_ERR_BUCKET_NOT_FOUND, natsio_js_kv_bind(g_fx.js, s->name, &kv));
    NT_CHECK(kv == SENTINEL);
    EXPECT(NATSIO_ERR_BUCKET_NOT_FOUND, natsio_js_kv_delete(g_fx.js, s->name));
}

/* Key-Value: keys ------------------------------------------------------------ */

static bool prepare_key(slot_t *s, const char *prefix, const char *value) {
    snprintf(s->name, sizeof s->name, "%s%d", prefix, s->idx);
    if (value) OKB(natsio_kv_put(g_fx.kv, s->name, value, strlen(value), NULL, &s->u));
    return true;
}

/* The entry of `key` now, by the blocking get. */
static natsio_status get_rev(const char *key, uint64_t *rev, const char *value) {
    natsio_kv_entry *e = NULL;
    natsio_status st = natsio_kv_get(g_fx.kv, key, &e);
    if (st == NATSIO_OK) {
        *rev = natsio_kv_entry_revision(e);
        if (value && !entry_is(e, value)) st = NATSIO_ERR_INTERNAL;
    }
    natsio_kv_entry_free(e);
    return st;
}

static bool prepare_key_p(slot_t *s) { return prepare_key(s, "p", NULL); }
static natsio_status start_kv_put(slot_t *s, natsio_token **t) {
    return natsio_kv_put_async(g_fx.kv, s->name, "v1", 2, NULL, t);
}
static void verify_kv_put(slot_t *s, natsio_token *t) {
    uint64_t rev = 0, got = 0, rev2 = 0;
    OK(natsio_token_u64(t, &rev));
    OK(get_rev(s->name, &got, "v1"));
    NT_CHECK_INT_EQ(got, rev);
    OK(natsio_kv_put(g_fx.kv, s->name, "v2", 2, NULL, &rev2));
    NT_CHECK(rev2 > rev);
}

static bool prepare_key_c(slot_t *s) { return prepare_key(s, "c", NULL); }
static natsio_status start_kv_create(slot_t *s, natsio_token **t) {
    return natsio_kv_create_async(g_fx.kv, s->name, "cv", 2, NULL, t);
}
static void verify_kv_create(slot_t *s, natsio_token *t) {
    uint64_t rev = 0, got = 0, r2 = U64_SENTINEL;
    OK(natsio_token_u64(t, &rev));
    OK(get_rev(s->name, &got, "cv"));
    NT_CHECK_INT_EQ(got, rev);
    EXPECT(NATSIO_ERR_KEY_EXISTS, natsio_kv_create(g_fx.kv, s->name, "x", 1, NULL, &r2));
    NT_CHECK(r2 == U64_SENTINEL);
}

static bool prepare_key_u(slot_t *s) { return prepare_key(s, "u", "u0"); }
static natsio_status start_kv_update(slot_t *s, natsio_token **t) {
    return natsio_kv_update_async(g_fx.kv, s->name, "u1", 2, s->u, t);
}
static void verify_kv_update(slot_t *s, natsio_token *t) {
    uint64_t rev = 0, got = 0, r3 = 0;
    OK(natsio_token_u64(t, &rev));
    NT_CHECK(rev > s->u);
    OK(get_rev(s->name, &got, "u1"));
    NT_CHECK_INT_EQ(got, rev);
    EXPECT(NATSIO_ERR_WRONG_LAST_SEQUENCE, natsio_kv_update(g_fx.kv, s->name, "u2", 2, s->u, NULL));
    OK(natsio_kv_update(g_fx.kv, s->name, "u2", 2, rev, &r3));
    NT_CHECK(r3 > rev);
}

static natsio_status start_kv_get(slot_t *s, natsio_token **t) {
    (void)s;
    return natsio_kv_get_async(g_fx.kv, "a", t);
}
static void verify_kv_get(slot_t *s, natsio_token *t) {
    (void)s;
    natsio_kv_entry *a = NULL, *b = NULL;
    OK(natsio_token_kv_entry(t, &a));
    natsio_status st = natsio_kv_get(g_fx.kv, "a", &b);
    bool ok = entry_is(a, "va2") && natsio_kv_entry_revision(a) == 3 && entry_is(b, "va2") &&
              natsio_kv_entry_revision(b) == 3 && strcmp(natsio_kv_entry_key(a), "a") == 0 &&
              strcmp(natsio_kv_entry_bucket(a), "KV") == 0 && natsio_kv_entry_operation(a) == NATSIO_KV_PUT &&
              natsio_kv_entry_created_ns(a) == natsio_kv_entry_created_ns(b);
    natsio_kv_entry_free(a);
    natsio_kv_entry_free(b);
    NT_CHECK_INT_EQ(st, NATSIO_OK);
    NT_CHECK(ok);
}

static natsio_status start_kv_get_revision(slot_t *s, natsio_token **t) {
    (void)s;
    return natsio_kv_get_revision_async(g_fx.kv, "a", 1, t);
}
static void verify_kv_get_revision(slot_t *s, natsio_token *t) {
    (void)s;
    natsio_kv_entry *a = NULL, *b = NULL;
    OK(natsio_token_kv_entry(t, &a));
    natsio_status st = natsio_kv_get_revision(g_fx.kv, "a", 1, &b);
    bool ok = entry_is(a, "va1") && natsio_kv_entry_revision(a) == 1 && entry_is(b, "va1") &&
              natsio_kv_entry_revision(b) == 1;
    natsio_kv_entry_free(a);
    natsio_kv_entry_free(b);
    NT_CHECK_INT_EQ(st, NATSIO_OK);
    NT_CHECK(ok);
}

/* The last revision of `key` in its history: its number and operation. */
static natsio_status last_history(const char *key, uint64_t *rev, natsio_kv_operation *op, size_t *count) {
    natsio_kv_entry_list *l = NULL;
    natsio_status st = natsio_kv_history(g_fx.kv, key, &l);
    if (st == NATSIO_OK) {
        size_t n = natsio_kv_entry_list_count(l);
        const natsio_kv_entry *e = natsio_kv_entry_list_get(l, n - 1);
        *rev = natsio_kv_entry_revision(e);
        *op = natsio_kv_entry_operation(e);
        *count = n;
    }
    natsio_kv_entry_list_free(l);
    return st;
}

static bool prepare_key_d(slot_t *s) { return prepare_key(s, "d", "x"); }
static natsio_status start_kv_delete(slot_t *s, natsio_token **t) {
    return natsio_kv_delete_async(g_fx.kv, s->name, NULL, t);
}
static void verify_kv_delete(slot_t *s, natsio_token *t) {
    uint64_t rev = 0, hrev = 0, rev2 = 0;
    natsio_kv_operation op = NATSIO_KV_PUT;
    size_t n = 0;
    OK(natsio_token_u64(t, &rev));
    NT_CHECK(rev > s->u);
    natsio_kv_entry *e = SENTINEL;
    EXPECT(NATSIO_ERR_KEY_DELETED, natsio_kv_get(g_fx.kv, s->name, &e));
    OK(last_history(s->name, &hrev, &op, &n));
    NT_CHECK_INT_EQ(hrev, rev);
    NT_CHECK_INT_EQ(op, NATSIO_KV_DEL);
    NT_CHECK_INT_EQ(n, 2);
    OK(natsio_kv_delete(g_fx.kv, s->name, NULL, &rev2));
    NT_CHECK(rev2 > rev);
}

static bool prepare_key_pg(slot_t *s) { return prepare_key(s, "pg", "x"); }
static natsio_status start_kv_purge(slot_t *s, natsio_token **t) {
    return natsio_kv_purge_async(g_fx.kv, s->name, NULL, NULL, t);
}
static void verify_kv_purge(slot_t *s, natsio_token *t) {
    uint64_t rev = 0, hrev = 0, rev2 = 0;
    natsio_kv_operation op = NATSIO_KV_PUT;
    size_t n = 0;
    OK(natsio_token_u64(t, &rev));
    NT_CHECK(rev > s->u);
    OK(last_history(s->name, &hrev, &op, &n));
    NT_CHECK_INT_EQ(hrev, rev);
    NT_CHECK_INT_EQ(op, NATSIO_KV_PURGE);
    NT_CHECK_INT_EQ(n, 1); /* the marker replaced the earlier revisions */
    OK(natsio_kv_purge(g_fx.kv, s->name, NULL, NULL, &rev2));
    NT_CHECK(rev2 > rev);
}

static natsio_status start_kv_status(slot_t *s, natsio_token **t) {
    (void)s;
    return natsio_kv_status_async(g_fx.kv, t);
}
static void verify_kv_status(slot_t *s, natsio_token *t) {
    (void)s;
    char *a = NULL, *b = NULL;
    OK(natsio_token_string(t, &a));
    natsio_status st = natsio_kv_status(g_fx.kv, &b);
    int64_t ma = -1, mb = -2, ha = -1;
    bool ok = json_has(a, "name", "KV_KV") && json_i64(a, "messages", &ma) && json_i64(b, "messages", &mb) &&
              ma == mb && json_i64(a, "max_msgs_per_subject", &ha) && ha == 5;
    natsio_string_free(a);
    natsio_string_free(b);
    NT_CHECK_INT_EQ(st, NATSIO_OK);
    NT_CHECK(ok);
}

static natsio_status start_kv_keys(slot_t *s, natsio_token **t) {
    (void)s;
    return natsio_kv_keys_async(g_fx.kv, t);
}
static void verify_kv_keys(slot_t *s, natsio_token *t) {
    (void)s;
    natsio_string_list *a = NULL, *b = NULL;
    OK(natsio_token_string_list(t, &a));
    natsio_status st = natsio_kv_keys(g_fx.kv, &b);
    bool ok = list_has(a, "a") && list_has(a, "b") && lists_same(a, b);
    natsio_string_list_free(a);
    natsio_string_list_free(b);
    NT_CHECK_INT_EQ(st, NATSIO_OK);
    NT_CHECK(ok);
}

static natsio_status start_kv_history(slot_t *s, natsio_token **t) {
    (void)s;
    return natsio_kv_history_async(g_fx.kv, "a", t);
}
static void verify_kv_history(slot_t *s, natsio_token *t) {
    (void)s;
    natsio_kv_entry_list *a = NULL, *b = NULL;
    OK(natsio_token_kv_entry_list(t, &a));
    natsio_status st = natsio_kv_history(g_fx.kv, "a", &b);
    bool ok = natsio_kv_entry_list_count(a) == 2 && natsio_kv_entry_list_count(b) == 2 &&
              natsio_kv_entry_revision(natsio_kv_entry_list_get(a, 0)) == 1 &&
              natsio_kv_entry_revision(natsio_kv_entry_list_get(a, 1)) == 3 &&
              entry_is(natsio_kv_entry_list_get(a, 0), "va1") &&
              natsio_kv_entry_revision(natsio_kv_entry_list_get(b, 0)) == 1 &&
              natsio_kv_entry_revision(natsio_kv_entry_list_get(b, 1)) == 3;
    natsio_kv_entry_list_free(a);
    natsio_kv_entry_list_free(b);
    NT_CHECK_INT_EQ(st, NATSIO_OK);
    NT_CHECK(ok);
}

static const char *const g_watch_keys[] = {"a", "b"};
static natsio_status start_kv_watch(slot_t *s, natsio_token **t) {
    (void)s;
    return natsio_kv_watch_async(g_fx.kv, g_watch_keys, 2, NULL, t);
}
/* "key@rev,...,marker" of a watcher's initial values (5 s). */
static void watch_initial(natsio_kv_watcher *w, char *out, size_t cap) {
    out[0] = '\0';
    for (int i = 0; i < 10; i++) {
        natsio_kv_entry *e = NULL;
        natsio_status st = natsio_kv_watcher_next(w, 5000, &e);
        char item[64];
        if (st != NATSIO_OK) {
            snprintf(item, sizeof item, "%s", natsio_status_str(st));
        } else if (natsio_kv_entry_operation(e) == NATSIO_KV_INITIAL_DONE) {
            snprintf(item, sizeof item, "marker");
        } else {
            snprintf(item, sizeof item, "%s@%llu,", natsio_kv_entry_key(e),
                     (unsigned long long)natsio_kv_entry_revision(e));
        }
        natsio_kv_entry_free(e);
        strncat(out, item, cap - strlen(out) - 1);
        if (st != NATSIO_OK || strcmp(item, "marker") == 0) break;
    }
}
static void verify_kv_watch(slot_t *s, natsio_token *t) {
    (void)s;
    natsio_kv_watcher *a = NULL, *again = SENTINEL, *b = NULL;
    OK(natsio_token_kv_watcher(t, &a));
    NT_CHECK(a != NULL);
    natsio_status st2 = natsio_token_kv_watcher(t, &again); /* take once */
    char la[256], lb[256] = "";
    watch_initial(a, la, sizeof la);
    natsio_status sb = natsio_kv_watch(g_fx.kv, g_watch_keys, 2, NULL, &b);
    if (sb == NATSIO_OK) watch_initial(b, lb, sizeof lb);
    natsio_kv_watcher_free(a);
    natsio_kv_watcher_free(b);
    NT_CHECK_INT_EQ(st2, NATSIO_ERR_ILLEGAL_STATE);
    NT_CHECK(again == SENTINEL);
    NT_CHECK_INT_EQ(sb, NATSIO_OK);
    NT_CHECK_STR_EQ(la, "b@2,a@3,marker");
    NT_CHECK_STR_EQ(la, lb);
}

static const op_t g_ops[] = {
    {"client_request", K_MSG, F_PENDS | F_CLIENT, NULL, start_request, verify_request},
    {"client_connect", K_CLIENT, F_PENDS, NULL, start_connect, verify_connect},
    {"client_close", K_NONE, 0, prepare_private_client, start_close, verify_close},
    {"client_drain", K_NONE, F_PENDS, prepare_drain, start_drain, verify_drain},
    {"client_flush", K_NONE, F_PENDS | F_CLIENT, NULL, start_flush, verify_flush},
    {"sub_drain", K_NONE, F_PENDS | F_CLIENT, prepare_sub_drain, start_sub_drain, verify_sub_drain},
    {"js_account_info", K_STRING, F_PENDS | F_CLIENT, NULL, start_account_info, verify_account_info},
    {"js_stream_create", K_STRING, F_PENDS | F_CLIENT, prepare_name_sc, start_stream_create, verify_stream_create},
    {"js_stream_info", K_STRING, F_PENDS | F_CLIENT, NULL, start_stream_info, verify_stream_info},
    {"js_stream_delete", K_NONE, F_PENDS | F_CLIENT, prepare_stream_sd, start_stream_delete, verify_stream_delete},
    {"js_stream_purge", K_U64, F_PENDS | F_CLIENT, prepare_stream_sp, start_stream_purge, verify_stream_purge},
    {"js_stream_names", K_STRING_LIST, F_PENDS | F_CLIENT, NULL, start_stream_names, verify_stream_names},
    {"js_stream_get_msg", K_STORED_MSG, F_PENDS | F_CLIENT, NULL, start_get_msg, verify_get_msg},
    {"js_stream_delete_msg", K_NONE, F_PENDS | F_CLIENT, prepare_stream_sdm, start_delete_msg, verify_delete_msg},
    {"js_consumer_create", K_STRING, F_PENDS | F_CLIENT, prepare_name_cc, start_consumer_create,
     verify_consumer_create},
    {"js_consumer_info", K_STRING, F_PENDS | F_CLIENT, prepare_consumer_ci, start_consumer_info,
     verify_consumer_info},
    {"js_consumer_delete", K_NONE, F_PENDS | F_CLIENT, prepare_consumer_cd, start_consumer_delete,
     verify_consumer_delete},
    {"js_consumer_names", K_STRING_LIST, F_PENDS | F_CLIENT, prepare_consumer_cn, start_consumer_names,
     verify_consumer_names},
    {"js_fetch", K_MSG_LIST, F_PENDS | F_CLIENT, prepare_consumer_f, start_fetch, verify_fetch},
    {"js_next", K_MSG, F_PENDS | F_CLIENT, prepare_consumer_n, start_next, verify_next},
    {"js_publish", K_PUB_ACK, F_PENDS | F_CLIENT, NULL, start_publish, verify_publish},
    {"js_publish_async_complete", K_NONE, F_PENDS | F_CLIENT, NULL, start_publish_complete,
     verify_publish_complete},
    {"js_consume", K_JS_MESSAGES, F_PENDS | F_CLIENT, prepare_consumer_co, start_consume, verify_consume},
    {"msg_ack_sync", K_NONE, F_PENDS | F_CLIENT, prepare_ack, start_ack_sync, verify_ack_sync},
    {"js_kv_create", K_KV, F_PENDS | F_CLIENT, prepare_name_kc, start_kv_create_bucket, verify_kv_create_bucket},
    {"js_kv_bind", K_KV, F_PENDS | F_CLIENT, NULL, start_kv_bind, verify_kv_bind},
    {"js_kv_delete", K_NONE, F_PENDS | F_CLIENT, prepare_bucket_kd, start_kv_delete_bucket,
     verify_kv_delete_bucket},
    {"kv_put", K_U64, F_PENDS | F_CLIENT, prepare_key_p, start_kv_put, verify_kv_put},
    {"kv_create", K_U64, F_PENDS | F_CLIENT, prepare_key_c, start_kv_create, verify_kv_create},
    {"kv_update", K_U64, F_PENDS | F_CLIENT, prepare_key_u, start_kv_update, verify_kv_update},
    {"kv_get", K_KV_ENTRY, F_PENDS | F_CLIENT, NULL, start_kv_get, verify_kv_get},
    {"kv_get_revision", K_KV_ENTRY, F_PENDS | F_CLIENT, NULL, start_kv_get_revision, verify_kv_get_revision},
    {"kv_delete", K_U64, F_PENDS | F_CLIENT, prepare_key_d, start_kv_delete, verify_kv_delete},
    {"kv_purge", K_U64, F_PENDS | F_CLIENT, prepare_key_pg, start_kv_purge, verify_kv_purge},
    {"kv_status", K_STRING, F_PENDS | F_CLIENT, NULL, start_kv_status, verify_kv_status},
    {"kv_keys", K_STRING_LIST, F_PENDS | F_CLIENT, NULL, start_kv_keys, verify_kv_keys},
    {"kv_history", K_KV_ENTRY_LIST, F_PENDS | F_CLIENT, NULL, start_kv_history, verify_kv_history},
    {"kv_watch", K_KV_WATCHER, F_PENDS | F_CLIENT, NULL, start_kv_watch, verify_kv_watch},
};
#define NOPS ((int)NT_COUNT(g_ops))

/* Prepares and starts op i; the token is freed when the case ends unless
 * the caller frees it first (then it must clear *t). */
static natsio_token *op_start(int i) {
    const op_t *op = &g_ops[i];
    slot_t *s = slot_for(i);
    if (op->prepare && !op->prepare(s)) {
        nt_fail_at(__FILE__, __LINE__, "%s: prepare failed", op->name);
        return NULL;
    }
    natsio_token *t = SENTINEL;
    natsio_status st = op->start(s, &t);
    if (st != NATSIO_OK || t == SENTINEL || t == NULL) {
        nt_fail_at(__FILE__, __LINE__, "%s: start: %s (%s)", op->name, ST(st), natsio_last_error());
        return NULL;
    }
    return t;
}

static void setup_case(void) {
    g_main_thread = pthread_self();
    nt_set_case_timeout(180);
    if (!fx_setup()) return;
    nt_cleanup(slots_cleanup, NULL);
}

/* ---- generic cases over the table ------------------------------------------- */

/* Result as the blocking form's; other accessors refuse; cancel after
 * completion refuses; a late callback runs at once on a library thread. */
static void test_success_all_ops(void) {
    setup_case();
    NT_CHECK(!nt_failed());
    for (int i = 0; i < NOPS; i++) {
        const op_t *op = &g_ops[i];
        natsio_token *t = op_start(i);
        NT_CHECK_MSG(t != NULL, "%s did not start", op->name);
        bool done = wait_done(t);
        natsio_status st = natsio_token_status(t);
        if (!done || st != NATSIO_OK) {
            natsio_token_free(t);
            NT_FAIL("%s: completed with %s (%s)", op->name, ST(st), natsio_last_error());
        }
        op->verify(slot_for(i), t);
        if (nt_failed()) {
            natsio_token_free(t);
            NT_FAIL("%s: result differs (see above)", op->name);
        }
        NT_CHECK_MSG(natsio_token_is_done(t), "%s", op->name);
        for (int k = K_MSG; k < K_COUNT; k++) {
            if (k == (int)op->kind) continue;
            bool untouched = false;
            natsio_status got = access_kind((kind_t)k, t, &untouched);
            if (got != NATSIO_ERR_ILLEGAL_STATE || !untouched) {
                natsio_token_free(t);
                NT_FAIL("%s: accessor %s: %s (want NATSIO_ERR_ILLEGAL_STATE), out %s", op->name,
                        kind_name((kind_t)k), ST(got), untouched ? "untouched" : "WRITTEN");
            }
        }
        natsio_status cs = natsio_token_cancel(t);
        natsio_status after = natsio_token_status(t);
        /* A callback registered on a completed token runs at once, on a
         * library thread, and then its release runs. */
        cb_rec rec;
        rec_init(&rec, t);
        natsio_status reg = natsio_token_on_complete(t, rec_cb, &rec, rec_release);
        bool released = nt_wait_until(rec_released, &rec, 5000);
        natsio_status reg2 = natsio_token_on_complete(t, rec_cb, &rec, rec_release);
        natsio_token_free(t);
        NT_CHECK_MSG(cs == NATSIO_ERR_ILLEGAL_STATE, "%s: cancel after completion: %s", op->name, ST(cs));
        NT_CHECK_MSG(after == NATSIO_OK, "%s: status after a refused cancel: %s", op->name, ST(after));
        NT_CHECK_MSG(reg == NATSIO_OK, "%s: on_complete: %s", op->name, ST(reg));
        NT_CHECK_MSG(released, "%s: late callback never released", op->name);
        NT_CHECK_MSG(atomic_load(&rec.calls) == 1, "%s: callback ran %d times", op->name, atomic_load(&rec.calls));
        NT_CHECK_MSG(atomic_load(&rec.calls_at_release) == 1, "%s: release before the callback", op->name);
        NT_CHECK_MSG(!atomic_load(&rec.on_main), "%s: callback ran on the caller's thread", op->name);
        NT_CHECK_MSG(!atomic_load(&rec.wrong_token), "%s: callback got another token", op->name);
        NT_CHECK_MSG(atomic_load(&rec.status) == NATSIO_OK, "%s: status in callback %s", op->name,
                     ST(atomic_load(&rec.status)));
        NT_CHECK_MSG(reg2 == NATSIO_ERR_ILLEGAL_STATE, "%s: second on_complete: %s", op->name, ST(reg2));
        NT_CHECK_INT_EQ(atomic_load(&rec.releases), 1);
    }
}

/* Before completion: NATSIO_PENDING everywhere, wait times out; cancel ->
 * NATSIO_ERR_CANCELLED (the registered callback runs with it); a second
 * cancel -> NATSIO_ERR_ILLEGAL_STATE. */
static void test_pending_then_cancel_all_ops(void) {
    setup_case();
    NT_CHECK(!nt_failed());
    for (int i = 0; i < NOPS; i++) {
        const op_t *op = &g_ops[i];
        if (!(op->flags & F_PENDS)) continue;
        slot_t *s = slot_for(i);
        if (op->prepare && !op->prepare(s)) NT_FAIL("%s: prepare failed", op->name);
        fx_stop_server();
        natsio_token *t = NULL;
        natsio_status st = op->start(s, &t);
        NT_CHECK_MSG(st == NATSIO_OK, "%s: start: %s (%s)", op->name, ST(st), natsio_last_error());
        bool untouched = false;
        natsio_status sa = access_kind(op->kind, t, &untouched);
        natsio_status ss = natsio_token_status(t);
        bool is_done = natsio_token_is_done(t);
        natsio_status w0 = natsio_token_wait(t, NATSIO_NO_WAIT);
        natsio_status w1 = natsio_token_wait(t, 50);
        cb_rec rec;
        rec_init(&rec, t);
        natsio_status reg = natsio_token_on_complete(t, rec_cb, &rec, rec_release);
        nt_sleep_ms(20); /* an absence: no call while pending */
        int calls_before = atomic_load(&rec.calls);
        natsio_status c1 = natsio_token_cancel(t);
        natsio_status wc = natsio_token_wait(t, 5000);
        natsio_status sc = natsio_token_status(t);
        bool untouched2 = false;
        natsio_status sa2 = access_kind(op->kind, t, &untouched2);
        natsio_status c2 = natsio_token_cancel(t);
        bool released = nt_wait_until(rec_released, &rec, 5000);
        natsio_token_free(t);
        fx_resume_server();
        NT_CHECK_MSG(sa == NATSIO_PENDING && untouched, "%s: accessor before completion: %s, out %s", op->name,
                     ST(sa), untouched ? "untouched" : "WRITTEN");
        NT_CHECK_MSG(ss == NATSIO_PENDING, "%s: status %s", op->name, ST(ss));
        NT_CHECK_MSG(!is_done, "%s: is_done while pending", op->name);
        NT_CHECK_MSG(w0 == NATSIO_ERR_TIMEOUT && w1 == NATSIO_ERR_TIMEOUT, "%s: wait: %s, %s", op->name, ST(w0),
                     ST(w1));
        NT_CHECK_MSG(reg == NATSIO_OK, "%s: on_complete %s", op->name, ST(reg));
        NT_CHECK_MSG(calls_before == 0, "%s: callback ran before completion", op->name);
        NT_CHECK_MSG(c1 == NATSIO_OK, "%s: cancel: %s (%s)", op->name, ST(c1), natsio_last_error());
        NT_CHECK_MSG(wc == NATSIO_OK, "%s: wait after cancel: %s", op->name, ST(wc));
        NT_CHECK_MSG(sc == NATSIO_ERR_CANCELLED, "%s: status after cancel: %s", op->name, ST(sc));
        NT_CHECK_MSG(op->kind == K_NONE || (sa2 == NATSIO_ERR_CANCELLED && untouched2),
                     "%s: accessor after cancel: %s", op->name, ST(sa2));
        NT_CHECK_MSG(c2 == NATSIO_ERR_ILLEGAL_STATE, "%s: second cancel: %s", op->name, ST(c2));
        NT_CHECK_MSG(released && atomic_load(&rec.calls) == 1, "%s: callback calls %d, released %d", op->name,
                     atomic_load(&rec.calls), (int)released);
        NT_CHECK_MSG(atomic_load(&rec.status) == NATSIO_ERR_CANCELLED, "%s: status in callback: %s", op->name,
                     ST(atomic_load(&rec.status)));
        NT_CHECK_MSG(!atomic_load(&rec.on_main), "%s: callback on the caller's thread", op->name);
    }
}

/* A callback registered while pending runs once, after completion, on a
 * library thread, sees the result; then release; the result is the right
 * one (verify). */
static void test_callback_on_completion_all_ops(void) {
    setup_case();
    NT_CHECK(!nt_failed());
    for (int i = 0; i < NOPS; i++) {
        const op_t *op = &g_ops[i];
        slot_t *s = slot_for(i);
        if (op->prepare && !op->prepare(s)) NT_FAIL("%s: prepare failed", op->name);
        bool stop = op->flags & F_PENDS;
        if (stop) fx_stop_server();
        natsio_token *t = NULL;
        natsio_status st = op->start(s, &t);
        NT_CHECK_MSG(st == NATSIO_OK, "%s: start: %s (%s)", op->name, ST(st), natsio_last_error());
        cb_rec rec;
        rec_init(&rec, t);
        natsio_status reg = natsio_token_on_complete(t, rec_cb, &rec, rec_release);
        if (stop) {
            nt_sleep_ms(30);
            if (atomic_load(&rec.calls) != 0) {
                fx_resume_server();
                natsio_token_free(t);
                NT_FAIL("%s: callback ran while pending", op->name);
            }
            fx_resume_server();
        }
        bool released = nt_wait_until(rec_released, &rec, 10000);
        if (!released || reg != NATSIO_OK) {
            natsio_token_free(t);
            NT_FAIL("%s: on_complete %s, released %d", op->name, ST(reg), (int)released);
        }
        NT_CHECK_MSG(atomic_load(&rec.calls) == 1 && atomic_load(&rec.calls_at_release) == 1,
                     "%s: calls %d (at release %d)", op->name, atomic_load(&rec.calls),
                     atomic_load(&rec.calls_at_release));
        NT_CHECK_MSG(!atomic_load(&rec.on_main), "%s: callback on the caller's thread", op->name);
        NT_CHECK_MSG(!atomic_load(&rec.wrong_token), "%s: callback got another token", op->name);
        NT_CHECK_MSG(atomic_load(&rec.status) == NATSIO_OK, "%s: status in callback %s (%s)", op->name,
                     ST(atomic_load(&rec.status)), natsio_last_error());
        op->verify(s, t);
        natsio_token_free(t);
        NT_CHECK_MSG(!nt_failed(), "%s: result differs (see above)", op->name);
    }
}

/* How long a new connection plus a request round trip take now (-1: they
 * failed): the library must stay responsive whatever was freed before. */
static int64_t probe_ms(void) {
    int64_t t0 = nt_now_ms();
    natsio_client *c = NULL;
    natsio_msg *m = NULL;
    natsio_status st = natsio_client_connect_url(nt_server_url(g_fx.srv), &c);
    if (st == NATSIO_OK) st = natsio_client_flush(c, 5000);
    natsio_client_free(c);
    if (st == NATSIO_OK) st = natsio_client_request(g_fx.c, "svc.echo", NULL, "p", 1, 5000, &m);
    natsio_msg_free(m);
    return st == NATSIO_OK ? nt_now_ms() - t0 : -1;
}

/* Freed while pending: the callback never runs, its release does (once);
 * nothing leaks (ASan/valgrind), the operation may go on, and the library
 * stays responsive (a connect + request probe within 2 s after each). */
static void test_free_while_pending_all_ops(void) {
    setup_case();
    NT_CHECK(!nt_failed());
    static cb_rec recs[NT_COUNT(g_ops)];
    for (int i = 0; i < NOPS; i++) {
        const op_t *op = &g_ops[i];
        if (!(op->flags & F_PENDS)) continue;
        slot_t *s = slot_for(i);
        if (op->prepare && !op->prepare(s)) {
            nt_fail_at(__FILE__, __LINE__, "%s: prepare failed", op->name);
            continue;
        }
        fx_stop_server();
        natsio_token *t = NULL;
        natsio_status st = op->start(s, &t);
        NT_CHECK_MSG(st == NATSIO_OK, "%s: start: %s (%s)", op->name, ST(st), natsio_last_error());
        rec_init(&recs[i], t);
        OK(natsio_token_on_complete(t, rec_cb, &recs[i], rec_release));
        natsio_token_free(t);
        if (atomic_load(&recs[i].releases) != 1 || atomic_load(&recs[i].calls) != 0)
            nt_fail_at(__FILE__, __LINE__, "%s: at free: release ran %d times, callback %d times", op->name,
                       atomic_load(&recs[i].releases), atomic_load(&recs[i].calls));
        fx_resume_server();
        /* Let the freed operation finish, then check the library answers.
         * LIBRARY BUG (see the report): an untaken connect result is closed
         * on a runtime thread, which blocks it for up to 5 s. */
        nt_sleep_ms(100);
        int64_t ms = probe_ms();
        if (ms < 0 || ms > 2000)
            nt_fail_at(__FILE__, __LINE__, "%s: after freeing its pending token, a connect + request took %lld ms%s",
                       op->name, (long long)ms, ms < 0 ? " (failed)" : "");
    }
    /* The operations complete meanwhile: still no callback, no second release. */
    nt_sleep_ms(1000);
    for (int i = 0; i < NOPS; i++) {
        if (!(g_ops[i].flags & F_PENDS)) continue;
        NT_CHECK_MSG(atomic_load(&recs[i].calls) == 0, "%s: callback ran after free", g_ops[i].name);
        NT_CHECK_MSG(atomic_load(&recs[i].releases) == 1, "%s: released %d times", g_ops[i].name,
                     atomic_load(&recs[i].releases));
    }
}

/* Every operation of the client pending while it closes completes with
 * NATSIO_ERR_CONNECTION_CLOSED. */
static void test_client_closed_while_pending_all_ops(void) {
    setup_case();
    NT_CHECK(!nt_failed());
    static natsio_token *toks[NT_COUNT(g_ops)];
    memset(toks, 0, sizeof toks);
    for (int i = 0; i < NOPS; i++) {
        const op_t *op = &g_ops[i];
        if (!(op->flags & F_CLIENT) || !(op->flags & F_PENDS)) continue;
        slot_t *s = slot_for(i);
        if (op->prepare && !op->prepare(s)) NT_FAIL("%s: prepare failed", op->name);
    }
    fx_stop_server();
    for (int i = 0; i < NOPS; i++) {
        const op_t *op = &g_ops[i];
        if (!(op->flags & F_CLIENT) || !(op->flags & F_PENDS)) continue;
        natsio_status st = op->start(slot_for(i), &toks[i]);
        if (st != NATSIO_OK) {
            for (int j = 0; j < i; j++) natsio_token_free(toks[j]);
            NT_FAIL("%s: start: %s (%s)", op->name, ST(st), natsio_last_error());
        }
    }
    nt_sleep_ms(50);
    int started = 0;
    for (int i = 0; i < NOPS; i++) started += toks[i] != NULL;
    int64_t t0 = nt_now_ms();
    natsio_status cs = natsio_client_close(g_fx.c);
    int64_t close_ms = nt_now_ms() - t0;
    char failures[2048] = "";
    for (int i = 0; i < NOPS; i++) {
        if (!toks[i]) continue;
        natsio_status w = natsio_token_wait(toks[i], 5000);
        natsio_status st = natsio_token_status(toks[i]);
        bool untouched = false;
        natsio_status sa = access_kind(g_ops[i].kind, toks[i], &untouched);
        /* publish_async_complete waits for the publishes to complete, and
         * they did: they failed. OK is what the header promises there.
         * sub_drain: LIBRARY BUG (see the report): its drain completes with
         * NATSIO_OK when the client closes before the server confirmed it. */
        bool want_ok = strcmp(g_ops[i].name, "js_publish_async_complete") == 0;
        if (w != NATSIO_OK || !(st == NATSIO_ERR_CONNECTION_CLOSED || (want_ok && st == NATSIO_OK)) ||
            (g_ops[i].kind != K_NONE && (sa != st || !untouched))) {
            char line[160];
            snprintf(line, sizeof line, " %s: wait %s, status %s, accessor %s;", g_ops[i].name, ST(w), ST(st),
                     ST(sa));
            strncat(failures, line, sizeof failures - strlen(failures) - 1);
        }
        natsio_token_free(toks[i]);
        toks[i] = NULL;
    }
    fx_resume_server();
    printf("  client close with %d operations pending took %lld ms\n", started, (long long)close_ms);
    NT_CHECK_INT_EQ(cs, NATSIO_OK);
    NT_CHECK_MSG(failures[0] == '\0', "not failed with NATSIO_ERR_CONNECTION_CLOSED:%s", failures);
}

/* ---- error classes ----------------------------------------------------------- */

typedef natsio_status (*err_start_fn)(natsio_token **t);

typedef struct {
    const char *name;
    natsio_status want;
    err_start_fn start;
} err_case;

static natsio_status e_request_no_responders(natsio_token **t) {
    return natsio_client_request_async(g_fx.c, "nobody.here", NULL, "x", 1, NATSIO_TIMEOUT_DEFAULT, t);
}
static natsio_status e_request_timeout(natsio_token **t) {
    return natsio_client_request_async(g_fx.c, "svc.silent", NULL, "x", 1, 200, t);
}
static natsio_status e_connect_refused(natsio_token **t) {
    char url[64];
    snprintf(url, sizeof url, "nats://127.0.0.1:%d", nt_free_port());
    natsio_options *o = NULL;
    natsio_options_new(&o);
    natsio_options_set_url(o, url);
    natsio_options_set_connect_timeout_ms(o, 500);
    natsio_status st = natsio_client_connect_async(o, t);
    natsio_options_free(o);
    return st;
}
static natsio_status e_stream_create_in_use(natsio_token **t) {
    return natsio_js_stream_create_async(g_fx.js, "{\"name\":\"ORD\",\"subjects\":[\"other.>\"]}", NATSIO_CREATE, t);
}
static natsio_status e_stream_update_missing(natsio_token **t) {
    return natsio_js_stream_create_async(g_fx.js, "{\"name\":\"NOPE\",\"subjects\":[\"nope.>\"]}", NATSIO_UPDATE, t);
}
static natsio_status e_stream_info_missing(natsio_token **t) {
    return natsio_js_stream_info_async(g_fx.js, "NOPE", NULL, t);
}
static natsio_status e_stream_delete_missing(natsio_token **t) {
    return natsio_js_stream_delete_async(g_fx.js, "NOPE", t);
}
static natsio_status e_stream_purge_missing(natsio_token **t) {
    return natsio_js_stream_purge_async(g_fx.js, "NOPE", NULL, t);
}
static natsio_status e_get_msg_missing_stream(natsio_token **t) {
    return natsio_js_stream_get_msg_async(g_fx.js, "NOPE", 1, NULL, t);
}
static natsio_status e_get_msg_missing_seq(natsio_token **t) {
    return natsio_js_stream_get_msg_async(g_fx.js, "ORD", 999, NULL, t);
}
static natsio_status e_get_msg_missing_subject(natsio_token **t) {
    return natsio_js_stream_get_msg_async(g_fx.js, "ORD", 0, "ord.never", t);
}
static natsio_status e_delete_msg_missing_stream(natsio_token **t) {
    return natsio_js_stream_delete_msg_async(g_fx.js, "NOPE", 1, false, t);
}
static natsio_status e_delete_msg_missing_seq(natsio_token **t) {
    return natsio_js_stream_delete_msg_async(g_fx.js, "ORD", 999, false, t);
}
static natsio_status e_consumer_create_missing_stream(natsio_token **t) {
    return natsio_js_consumer_create_async(g_fx.js, "NOPE", "{\"durable_name\":\"X\"}", NATSIO_CREATE, t);
}
static natsio_status e_consumer_update_missing(natsio_token **t) {
    return natsio_js_consumer_create_async(g_fx.js, "ORD", "{\"durable_name\":\"NOPE\"}", NATSIO_UPDATE, t);
}
static natsio_status e_consumer_info_missing(natsio_token **t) {
    return natsio_js_consumer_info_async(g_fx.js, "ORD", "NOPE", t);
}
static natsio_status e_consumer_info_missing_stream(natsio_token **t) {
    return natsio_js_consumer_info_async(g_fx.js, "NOPE", "NOPE", t);
}
static natsio_status e_consumer_delete_missing(natsio_token **t) {
    return natsio_js_consumer_delete_async(g_fx.js, "ORD", "NOPE", t);
}
static natsio_status e_consumer_names_missing_stream(natsio_token **t) {
    return natsio_js_consumer_names_async(g_fx.js, "NOPE", t);
}
static natsio_status e_fetch_missing_consumer(natsio_token **t) {
    return natsio_js_fetch_async(g_fx.js, "ORD", "NOPE", NULL, t);
}
static natsio_status e_next_missing_consumer(natsio_token **t) {
    return natsio_js_next_async(g_fx.js, "ORD", "NOPE", NEXT_WAIT(500), t);
}
static natsio_status e_next_no_messages(natsio_token **t) {
    /* EMPTYC: a consumer of ORD filtered on a subject nobody publishes to. */
    return natsio_js_next_async(g_fx.js, "ORD", "EMPTYC", NEXT_WAIT(300), t);
}
static natsio_status e_publish_no_stream(natsio_token **t) {
    return natsio_js_publish_async(g_fx.js, "nostream.here", "x", 1, NULL, t);
}
static natsio_status e_publish_wrong_last_seq(natsio_token **t) {
    natsio_js_publish_options o;
    natsio_js_publish_options_init(&o);
    uint64_t last = 1; /* ORD holds more */
    o.expected_last_seq = &last;
    return natsio_js_publish_async(g_fx.js, "ord.x", "x", 1, &o, t);
}
static natsio_status e_consume_missing_consumer(natsio_token **t) {
    return natsio_js_consume_async(g_fx.js, "ORD", "NOPE", NULL, t);
}
static natsio_status e_consume_missing_stream(natsio_token **t) {
    return natsio_js_consume_async(g_fx.js, "NOPE", "NOPE", NULL, t);
}
static natsio_status e_kv_create_exists(natsio_token **t) {
    return natsio_js_kv_create_async(g_fx.js, "{\"bucket\":\"KV\",\"history\":7,\"storage\":\"memory\"}",
                                     NATSIO_CREATE, t);
}
static natsio_status e_kv_update_missing(natsio_token **t) {
    return natsio_js_kv_create_async(g_fx.js, "{\"bucket\":\"NOPE\"}", NATSIO_UPDATE, t);
}
static natsio_status e_kv_bind_missing(natsio_token **t) { return natsio_js_kv_bind_async(g_fx.js, "NOPE", t); }
static natsio_status e_kv_delete_bucket_missing(natsio_token **t) {
    return natsio_js_kv_delete_async(g_fx.js, "NOPE", t);
}
static natsio_status e_kv_create_key_exists(natsio_token **t) {
    return natsio_kv_create_async(g_fx.kv, "a", "x", 1, NULL, t);
}
static natsio_status e_kv_update_wrong_last(natsio_token **t) {
    return natsio_kv_update_async(g_fx.kv, "a", "x", 1, 1, t);
}
static natsio_status e_kv_get_missing(natsio_token **t) { return natsio_kv_get_async(g_fx.kv, "nokey", t); }
static natsio_status e_kv_get_deleted(natsio_token **t) { return natsio_kv_get_async(g_fx.kv, "gone", t); }
static natsio_status e_kv_get_revision_other_key(natsio_token **t) {
    return natsio_kv_get_revision_async(g_fx.kv, "a", 2, t); /* revision 2 is b's */
}
static natsio_status e_kv_delete_wrong_last(natsio_token **t) {
    static const uint64_t last = 1;
    return natsio_kv_delete_async(g_fx.kv, "b", &last, t);
}
static natsio_status e_kv_purge_wrong_last(natsio_token **t) {
    static const uint64_t last = 1;
    return natsio_kv_purge_async(g_fx.kv, "b", &last, NULL, t);
}
static natsio_status e_kv_history_missing(natsio_token **t) { return natsio_kv_history_async(g_fx.kv, "nokey", t); }

/* Handles to a bucket that was deleted after binding. */
static natsio_kv *g_dead_kv;
static natsio_status e_kv_status_deleted_bucket(natsio_token **t) { return natsio_kv_status_async(g_dead_kv, t); }
static natsio_status e_kv_watch_deleted_bucket(natsio_token **t) {
    return natsio_kv_watch_async(g_dead_kv, NULL, 0, NULL, t);
}

/* Drain of a subscription whose backlog nobody takes, stopped meanwhile. */
static natsio_sub *g_drain_sub;
static natsio_status e_sub_drain_stopped(natsio_token **t) {
    natsio_status st = natsio_sub_drain_async(g_drain_sub, NATSIO_TIMEOUT_DEFAULT, t);
    if (st == NATSIO_OK) natsio_sub_stop(g_drain_sub);
    return st;
}

static void dead_kv_cleanup(void *arg) {
    (void)arg;
    natsio_kv_free(g_dead_kv);
    g_dead_kv = NULL;
    natsio_sub_free(g_drain_sub);
    g_drain_sub = NULL;
}

static const err_case g_err_cases[] = {
    {"client_request: no responders", NATSIO_ERR_NO_RESPONDERS, e_request_no_responders},
    {"client_request: timeout", NATSIO_ERR_TIMEOUT, e_request_timeout},
    {"client_connect: nothing listening", NATSIO_ERR_NO_SERVERS, e_connect_refused},
    {"sub_drain: stopped before the backlog was handled", NATSIO_ERR_SUBSCRIPTION_CLOSED, e_sub_drain_stopped},
    {"js_stream_create: name in use", NATSIO_ERR_STREAM_NAME_IN_USE, e_stream_create_in_use},
    {"js_stream_create: update of a missing stream", NATSIO_ERR_STREAM_NOT_FOUND, e_stream_update_missing},
    {"js_stream_info: stream not found", NATSIO_ERR_STREAM_NOT_FOUND, e_stream_info_missing},
    {"js_stream_delete: stream not found", NATSIO_ERR_STREAM_NOT_FOUND, e_stream_delete_missing},
    {"js_stream_purge: stream not found", NATSIO_ERR_STREAM_NOT_FOUND, e_stream_purge_missing},
    {"js_stream_get_msg: stream not found", NATSIO_ERR_STREAM_NOT_FOUND, e_get_msg_missing_stream},
    {"js_stream_get_msg: message not found", NATSIO_ERR_MESSAGE_NOT_FOUND, e_get_msg_missing_seq},
    {"js_stream_get_msg: last by subject not found", NATSIO_ERR_MESSAGE_NOT_FOUND, e_get_msg_missing_subject},
    {"js_stream_delete_msg: stream not found", NATSIO_ERR_STREAM_NOT_FOUND, e_delete_msg_missing_stream},
    {"js_stream_delete_msg: message not found", NATSIO_ERR_MESSAGE_NOT_FOUND, e_delete_msg_missing_seq},
    {"js_consumer_create: stream not found", NATSIO_ERR_STREAM_NOT_FOUND, e_consumer_create_missing_stream},
    {"js_consumer_create: update of a missing consumer", NATSIO_ERR_CONSUMER_NOT_FOUND, e_consumer_update_missing},
    {"js_consumer_info: consumer not found", NATSIO_ERR_CONSUMER_NOT_FOUND, e_consumer_info_missing},
    {"js_consumer_info: stream not found", NATSIO_ERR_STREAM_NOT_FOUND, e_consumer_info_missing_stream},
    {"js_consumer_delete: consumer not found", NATSIO_ERR_CONSUMER_NOT_FOUND, e_consumer_delete_missing},
    {"js_consumer_names: stream not found", NATSIO_ERR_STREAM_NOT_FOUND, e_consumer_names_missing_stream},
    {"js_fetch: consumer not found", NATSIO_ERR_CONSUMER_NOT_FOUND, e_fetch_missing_consumer},
    {"js_next: consumer not found", NATSIO_ERR_CONSUMER_NOT_FOUND, e_next_missing_consumer},
    {"js_next: no messages", NATSIO_ERR_NO_MESSAGES, e_next_no_messages},
    {"js_publish: no stream", NATSIO_ERR_NO_STREAM_RESPONSE, e_publish_no_stream},
    {"js_publish: wrong last sequence", NATSIO_ERR_WRONG_LAST_SEQUENCE, e_publish_wrong_last_seq},
    {"js_consume: consumer not found", NATSIO_ERR_CONSUMER_NOT_FOUND, e_consume_missing_consumer},
    {"js_consume: stream not found", NATSIO_ERR_STREAM_NOT_FOUND, e_consume_missing_stream},
    {"js_kv_create: bucket exists", NATSIO_ERR_BUCKET_EXISTS, e_kv_create_exists},
    {"js_kv_create: update of a missing bucket", NATSIO_ERR_BUCKET_NOT_FOUND, e_kv_update_missing},
    {"js_kv_bind: bucket not found", NATSIO_ERR_BUCKET_NOT_FOUND, e_kv_bind_missing},
    {"js_kv_delete: bucket not found", NATSIO_ERR_BUCKET_NOT_FOUND, e_kv_delete_bucket_missing},
    {"kv_create: key exists", NATSIO_ERR_KEY_EXISTS, e_kv_create_key_exists},
    {"kv_update: wrong last sequence", NATSIO_ERR_WRONG_LAST_SEQUENCE, e_kv_update_wrong_last},
    {"kv_get: key not found", NATSIO_ERR_KEY_NOT_FOUND, e_kv_get_missing},
    {"kv_get: key deleted", NATSIO_ERR_KEY_DELETED, e_kv_get_deleted},
    {"kv_get_revision: revision of another key", NATSIO_ERR_KEY_NOT_FOUND, e_kv_get_revision_other_key},
    {"kv_delete: wrong last sequence", NATSIO_ERR_WRONG_LAST_SEQUENCE, e_kv_delete_wrong_last},
    {"kv_purge: wrong last sequence", NATSIO_ERR_WRONG_LAST_SEQUENCE, e_kv_purge_wrong_last},
    {"kv_status: bucket not found", NATSIO_ERR_BUCKET_NOT_FOUND, e_kv_status_deleted_bucket},
    {"kv_history: key not found", NATSIO_ERR_KEY_NOT_FOUND, e_kv_history_missing},
    {"kv_watch: bucket not found", NATSIO_ERR_BUCKET_NOT_FOUND, e_kv_watch_deleted_bucket},
};

/* Runs a table of error cases: each _async call returns NATSIO_OK and a
 * token, which completes with the expected status, read the same from
 * natsio_token_status and any accessor (with a detail text). */
static void run_err_cases(const err_case *cases, size_t n) {
    char failures[4096] = "";
    for (size_t i = 0; i < n; i++) {
        natsio_token *t = SENTINEL;
        natsio_status st = cases[i].start(&t);
        char line[256];
        if (st != NATSIO_OK) {
            snprintf(line, sizeof line, "\n    %s: the call returned %s (%s)", cases[i].name, ST(st),
                     natsio_last_error());
            strncat(failures, line, sizeof failures - strlen(failures) - 1);
            continue;
        }
        natsio_status w = natsio_token_wait(t, 10000);
        natsio_status got = natsio_token_status(t);
        char detail[128];
        snprintf(detail, sizeof detail, "%s", natsio_last_error());
        natsio_msg *m = SENTINEL;
        natsio_status via_msg = natsio_token_msg(t, &m);
        if (w != NATSIO_OK || got != cases[i].want || detail[0] == '\0' ||
            (via_msg != got && via_msg != NATSIO_ERR_ILLEGAL_STATE) || m != SENTINEL) {
            snprintf(line, sizeof line, "\n    %s: wait %s, got %s (%s), want %s", cases[i].name, ST(w), ST(got),
                     detail, ST(cases[i].want));
            strncat(failures, line, sizeof failures - strlen(failures) - 1);
        }
        natsio_token_free(t);
    }
    NT_CHECK_MSG(failures[0] == '\0', "error classes:%s", failures);
}

static void test_error_classes(void) {
    setup_case();
    NT_CHECK(!nt_failed());
    nt_cleanup(dead_kv_cleanup, NULL);
    OK(natsio_js_consumer_create(g_fx.js, "ORD",
                                 "{\"durable_name\":\"EMPTYC\",\"ack_policy\":\"none\",\"filter_subject\":\"ord.never\"}",
                                 NATSIO_CREATE, NULL));
    OK(natsio_kv_put(g_fx.kv, "gone", "x", 1, NULL, NULL));
    OK(natsio_kv_delete(g_fx.kv, "gone", NULL, NULL));
    OK(natsio_js_kv_create(g_fx.js, "{\"bucket\":\"DEAD\",\"storage\":\"memory\"}", NATSIO_CREATE, &g_dead_kv));
    OK(natsio_js_kv_delete(g_fx.js, "DEAD"));
    OK(natsio_client_subscribe(g_fx.c, "drain.backlog", NULL, NULL, &g_drain_sub));
    OK(natsio_client_publish(g_fx.c, "drain.backlog", "1", 1));
    OK(natsio_client_flush(g_fx.c, NATSIO_TIMEOUT_DEFAULT));
    run_err_cases(g_err_cases, NT_COUNT(g_err_cases));
}

/* The timeout class: the server is stopped, so nothing answers; each
 * operation gives up after its (short) timeout. */
static natsio_client *g_short_client;   /* request/drain timeouts 300 ms */
static natsio_client *g_draining;       /* drain timeout 300 ms */
static natsio_msg *g_unacked;
static natsio_status t_request_default(natsio_token **t) {
    return natsio_client_request_async(g_short_client, "svc.echo", NULL, "x", 1, NATSIO_TIMEOUT_DEFAULT, t);
}
static natsio_status t_drain(natsio_token **t) { return natsio_client_drain_async(g_draining, 300, t); }
static natsio_status t_connect(natsio_token **t) {
    natsio_options *o = NULL;
    natsio_options_new(&o);
    natsio_options_set_url(o, nt_server_url(g_fx.srv));
    natsio_options_set_connect_timeout_ms(o, 300);
    natsio_status st = natsio_client_connect_async(o, t);
    natsio_options_free(o);
    return st;
}
static natsio_status t_account_info(natsio_token **t) { return natsio_js_account_info_async(g_fx.js_short, t); }
static natsio_status t_stream_info(natsio_token **t) { return natsio_js_stream_info_async(g_fx.js_short, "ORD", NULL, t); }
static natsio_status t_stream_names(natsio_token **t) {
    return natsio_js_stream_names_async(g_fx.js_short, NULL, t);
}
static natsio_status t_consumer_names(natsio_token **t) {
    return natsio_js_consumer_names_async(g_fx.js_short, "ORD", t);
}
static natsio_status t_publish(natsio_token **t) {
    return natsio_js_publish_async(g_fx.js_short, "ord.x", "x", 1, NULL, t);
}
/* A publish that waits 5 s for its ack, then a completion bounded by 200 ms. */
static natsio_status t_publish_complete(natsio_token **t) {
    natsio_js_publish_options o;
    natsio_js_publish_options_init(&o);
    o.timeout_ms = 5000;
    natsio_token *p = NULL;
    natsio_status st = natsio_js_publish_async(g_fx.js_short, "ord.x", "x", 1, &o, &p);
    natsio_token_free(p);
    if (st != NATSIO_OK) return st;
    return natsio_js_publish_async_complete_async(g_fx.js_short, 200, t);
}
static natsio_status t_ack_sync(natsio_token **t) { return natsio_msg_ack_sync_async(g_unacked, 300, t); }
static natsio_status t_kv_bind(natsio_token **t) { return natsio_js_kv_bind_async(g_fx.js_short, "KV", t); }
static natsio_status t_kv_put(natsio_token **t) { return natsio_kv_put_async(g_fx.kv_short, "a", "x", 1, NULL, t); }
static natsio_status t_kv_get(natsio_token **t) { return natsio_kv_get_async(g_fx.kv_short, "a", t); }
static natsio_status t_kv_keys(natsio_token **t) { return natsio_kv_keys_async(g_fx.kv_short, t); }
static natsio_status t_kv_status(natsio_token **t) { return natsio_kv_status_async(g_fx.kv_short, t); }
static natsio_status t_kv_history(natsio_token **t) { return natsio_kv_history_async(g_fx.kv_short, "a", t); }
static natsio_status t_kv_watch(natsio_token **t) { return natsio_kv_watch_async(g_fx.kv_short, NULL, 0, NULL, t); }
static natsio_status t_consume(natsio_token **t) {
    return natsio_js_consume_async(g_fx.js_short, "ORD", "EMPTYC", NULL, t);
}

static void short_cleanup(void *arg) {
    (void)arg;
    fx_resume_server();
    natsio_msg_free(g_unacked);
    natsio_client_free(g_short_client);
    natsio_client_free(g_draining);
    g_unacked = NULL;
    g_short_client = g_draining = NULL;
}

static const err_case g_timeout_cases[] = {
    {"client_request: timeout", NATSIO_ERR_TIMEOUT, e_request_timeout},
    {"client_request: the client's default timeout", NATSIO_ERR_TIMEOUT, t_request_default},
    {"client_drain: drain timeout", NATSIO_ERR_DRAIN_TIMEOUT, t_drain},
    {"client_connect: handshake timeout", NATSIO_ERR_TIMEOUT, t_connect},
    {"js_account_info: timeout", NATSIO_ERR_TIMEOUT, t_account_info},
    {"js_stream_info: timeout", NATSIO_ERR_TIMEOUT, t_stream_info},
    {"js_stream_names: timeout", NATSIO_ERR_TIMEOUT, t_stream_names},
    {"js_consumer_names: timeout", NATSIO_ERR_TIMEOUT, t_consumer_names},
    {"js_consume: timeout", NATSIO_ERR_TIMEOUT, t_consume},
    {"js_publish: no ack in time", NATSIO_ERR_ASYNC_PUBLISH_TIMEOUT, t_publish},
    {"js_publish_async_complete: timeout", NATSIO_ERR_TIMEOUT, t_publish_complete},
    {"msg_ack_sync: timeout", NATSIO_ERR_TIMEOUT, t_ack_sync},
    {"js_kv_bind: timeout", NATSIO_ERR_TIMEOUT, t_kv_bind},
    {"kv_put: timeout", NATSIO_ERR_TIMEOUT, t_kv_put},
    {"kv_get: timeout", NATSIO_ERR_TIMEOUT, t_kv_get},
    {"kv_keys: timeout", NATSIO_ERR_TIMEOUT, t_kv_keys},
    {"kv_status: timeout", NATSIO_ERR_TIMEOUT, t_kv_status},
    {"kv_history: timeout", NATSIO_ERR_TIMEOUT, t_kv_history},
    {"kv_watch: timeout", NATSIO_ERR_TIMEOUT, t_kv_watch},
};

static void test_timeout_class(void) {
    setup_case();
    NT_CHECK(!nt_failed());
    nt_cleanup(short_cleanup, NULL);
    OK(natsio_js_consumer_create(g_fx.js, "ORD",
                                 "{\"durable_name\":\"EMPTYC\",\"ack_policy\":\"none\",\"filter_subject\":\"ord.never\"}",
                                 NATSIO_CREATE, NULL));
    NT_CHECK(make_consumer(g_fx.js, "ORD", "ACK", "explicit"));
    NT_CHECK(fetch_one("ACK", &g_unacked));
    natsio_options *o = NULL;
    OK(natsio_options_new(&o));
    natsio_options_set_url(o, nt_server_url(g_fx.srv));
    natsio_options_set_flush_timeout_ms(o, 300);
    natsio_options_set_request_timeout_ms(o, 300);
    natsio_options_set_drain_timeout_ms(o, 300);
    natsio_status s1 = natsio_client_connect(o, &g_short_client);
    natsio_status s2 = natsio_client_connect(o, &g_draining);
    natsio_options_free(o);
    OK(s1);
    OK(s2);
    fx_stop_server();
    int64_t t0 = nt_now_ms();
    run_err_cases(g_timeout_cases, NT_COUNT(g_timeout_cases));
    printf("  %zu timeouts took %lld ms\n", NT_COUNT(g_timeout_cases), (long long)(nt_now_ms() - t0));
}

/* ---- argument errors: returned by the call, no token written --------------- */

static void test_argument_errors(void) {
    setup_case();
    NT_CHECK(!nt_failed());
    natsio_msg *m = NULL;
    NT_CHECK(make_consumer(g_fx.js, "ORD", "ACK", "explicit"));
    NT_CHECK(fetch_one("ACK", &m));
    nt_cleanup(msg_free_cb_async, m);
    natsio_sub *sub = NULL;
    OK(natsio_client_subscribe(g_fx.c, "arg.sub", NULL, NULL, &sub));
    nt_cleanup(sub_free_cb_async, sub);
    natsio_fetch_options bad_fetch;
    memset(&bad_fetch, 0, sizeof bad_fetch); /* version 0 */
    natsio_consume_options bad_consume;
    memset(&bad_consume, 0, sizeof bad_consume);
    natsio_kv_watch_options bad_watch;
    memset(&bad_watch, 0, sizeof bad_watch);
    natsio_js_publish_options bad_pub;
    memset(&bad_pub, 0, sizeof bad_pub);
    const char *bad_key[] = {"a..b"};
    const char *null_key[] = {NULL};
    natsio_js *js = g_fx.js;
    natsio_kv *kv = g_fx.kv;
    natsio_client *c = g_fx.c;
    char failures[4096] = "";
    natsio_token *t;

    /* Each call gets t = SENTINEL and must return `want` leaving it. */
#define ARG(want, call)                                                                          \
    do {                                                                                         \
        t = SENTINEL;                                                                            \
        natsio_status got_ = (call);                                                             \
        if (got_ != (want) || t != SENTINEL) {                                                   \
            char line_[320];                                                                     \
            snprintf(line_, sizeof line_, "\n    %s: got %s, want %s, token %s", #call, ST(got_),  \
                     ST(want), t == SENTINEL ? "untouched" : "WRITTEN");                         \
            strncat(failures, line_, sizeof failures - strlen(failures) - 1);                    \
            if (got_ == NATSIO_OK && t != SENTINEL) natsio_token_free(t);                        \
        }                                                                                        \
    } while (0)

    ARG(NATSIO_ERR_NULL_ARGUMENT, natsio_client_request_async(NULL, "s", NULL, "x", 1, -1, &t));
    ARG(NATSIO_ERR_NULL_ARGUMENT, natsio_client_request_async(c, NULL, NULL, "x", 1, -1, &t));
    ARG(NATSIO_ERR_NULL_ARGUMENT, natsio_client_request_async(c, "s", NULL, "x", 1, -1, NULL));
    ARG(NATSIO_ERR_BAD_SUBJECT, natsio_client_request_async(c, "a..b", NULL, "x", 1, -1, &t));
    ARG(NATSIO_ERR_INVALID_UTF8, natsio_client_request_async(c, "bad.\xff", NULL, "x", 1, -1, &t));
    ARG(NATSIO_ERR_INVALID_ARGUMENT, natsio_client_request_async(c, "s", NULL, "x", 1, -7, &t));
    ARG(NATSIO_ERR_NULL_ARGUMENT, natsio_client_connect_async(NULL, NULL));
    ARG(NATSIO_ERR_NULL_ARGUMENT, natsio_client_close_async(NULL, &t));
    ARG(NATSIO_ERR_NULL_ARGUMENT, natsio_client_close_async(c, NULL));
    ARG(NATSIO_ERR_NULL_ARGUMENT, natsio_client_drain_async(NULL, -1, &t));
    ARG(NATSIO_ERR_INVALID_ARGUMENT, natsio_client_drain_async(c, -9, &t));
    ARG(NATSIO_ERR_NULL_ARGUMENT, natsio_client_flush_async(NULL, NATSIO_TIMEOUT_DEFAULT, &t));
    ARG(NATSIO_ERR_NULL_ARGUMENT, natsio_client_flush_async(c, NATSIO_TIMEOUT_DEFAULT, NULL));
    ARG(NATSIO_ERR_NULL_ARGUMENT, natsio_sub_drain_async(NULL, NATSIO_TIMEOUT_DEFAULT, &t));
    ARG(NATSIO_ERR_NULL_ARGUMENT, natsio_sub_drain_async(sub, NATSIO_TIMEOUT_DEFAULT, NULL));
    ARG(NATSIO_ERR_NULL_ARGUMENT, natsio_js_account_info_async(NULL, &t));
    ARG(NATSIO_ERR_NULL_ARGUMENT, natsio_js_account_info_async(js, NULL));
    ARG(NATSIO_ERR_NULL_ARGUMENT, natsio_js_stream_create_async(js, NULL, NATSIO_CREATE, &t));
    ARG(NATSIO_ERR_CONFIG, natsio_js_stream_create_async(js, "{not json", NATSIO_CREATE, &t));
    ARG(NATSIO_ERR_INVALID_ARGUMENT, natsio_js_stream_create_async(js, "{\"name\":\"X\"}", 7, &t));
    ARG(NATSIO_ERR_INVALID_ARGUMENT, natsio_js_stream_create_async(js, "{\"name\":\"a.b\"}", NATSIO_CREATE, &t));
    ARG(NATSIO_ERR_NULL_ARGUMENT, natsio_js_stream_info_async(js, NULL, NULL, &t));
    ARG(NATSIO_ERR_INVALID_ARGUMENT, natsio_js_stream_info_async(js, "a b", NULL, &t));
    ARG(NATSIO_ERR_NULL_ARGUMENT, natsio_js_stream_delete_async(js, NULL, &t));
    ARG(NATSIO_ERR_NULL_ARGUMENT, natsio_js_stream_purge_async(js, NULL, NULL, &t));
    ARG(NATSIO_ERR_CONFIG, natsio_js_stream_purge_async(js, "ORD", "{\"seq\":1,\"keep\":1}", &t));
    ARG(NATSIO_ERR_NULL_ARGUMENT, natsio_js_stream_names_async(js, NULL, NULL));
    ARG(NATSIO_ERR_NULL_ARGUMENT, natsio_js_stream_get_msg_async(js, NULL, 1, NULL, &t));
    ARG(NATSIO_ERR_BAD_SUBJECT, natsio_js_stream_get_msg_async(js, "ORD", 0, "a..b", &t));
    ARG(NATSIO_ERR_NULL_ARGUMENT, natsio_js_stream_delete_msg_async(js, NULL, 1, false, &t));
    ARG(NATSIO_ERR_NULL_ARGUMENT, natsio_js_consumer_create_async(js, "ORD", NULL, NATSIO_CREATE, &t));
    ARG(NATSIO_ERR_CONFIG, natsio_js_consumer_create_async(js, "ORD", "[1]", NATSIO_CREATE, &t));
    ARG(NATSIO_ERR_INVALID_ARGUMENT, natsio_js_consumer_create_async(js, "ORD", "{}", 9, &t));
    ARG(NATSIO_ERR_NULL_ARGUMENT, natsio_js_consumer_info_async(js, "ORD", NULL, &t));
    ARG(NATSIO_ERR_INVALID_ARGUMENT, natsio_js_consumer_info_async(js, "ORD", "a.b", &t));
    ARG(NATSIO_ERR_NULL_ARGUMENT, natsio_js_consumer_delete_async(js, NULL, "C", &t));
    ARG(NATSIO_ERR_NULL_ARGUMENT, natsio_js_consumer_names_async(js, NULL, &t));
    ARG(NATSIO_ERR_NULL_ARGUMENT, natsio_js_fetch_async(js, "ORD", NULL, NULL, &t));
    ARG(NATSIO_ERR_INVALID_ARGUMENT, natsio_js_fetch_async(js, "ORD", "ACK", &bad_fetch, &t));
    ARG(NATSIO_ERR_NULL_ARGUMENT, natsio_js_next_async(js, NULL, "ACK", NULL, &t));
    ARG(NATSIO_ERR_INVALID_ARGUMENT, natsio_js_next_async(js, "ORD", "ACK", &bad_fetch, &t));
    ARG(NATSIO_ERR_NULL_ARGUMENT, natsio_js_publish_async(js, NULL, "x", 1, NULL, &t));
    ARG(NATSIO_ERR_BAD_SUBJECT, natsio_js_publish_async(js, "ord.>", "x", 1, NULL, &t));
    ARG(NATSIO_ERR_INVALID_ARGUMENT, natsio_js_publish_async(js, "ord.x", "x", 1, &bad_pub, &t));
    ARG(NATSIO_ERR_NULL_ARGUMENT, natsio_js_publish_async_complete_async(NULL, -1, &t));
    ARG(NATSIO_ERR_INVALID_ARGUMENT, natsio_js_publish_async_complete_async(js, -5, &t));
    ARG(NATSIO_ERR_NULL_ARGUMENT, natsio_js_consume_async(js, "ORD", NULL, NULL, &t));
    ARG(NATSIO_ERR_INVALID_ARGUMENT, natsio_js_consume_async(js, "ORD", "ACK", &bad_consume, &t));
    ARG(NATSIO_ERR_NULL_ARGUMENT, natsio_msg_ack_sync_async(NULL, -1, &t));
    ARG(NATSIO_ERR_NULL_ARGUMENT, natsio_msg_ack_sync_async(m, -1, NULL));
    ARG(NATSIO_ERR_INVALID_ARGUMENT, natsio_msg_ack_sync_async(m, -3, &t));
    ARG(NATSIO_ERR_NULL_ARGUMENT, natsio_js_kv_create_async(js, NULL, NATSIO_CREATE, &t));
    ARG(NATSIO_ERR_INVALID_BUCKET_NAME, natsio_js_kv_create_async(js, "{\"bucket\":\"a.b\"}", NATSIO_CREATE, &t));
    ARG(NATSIO_ERR_CONFIG, natsio_js_kv_create_async(js, "{\"bucket\":\"B\",\"history\":\"x\"}", NATSIO_CREATE, &t));
    ARG(NATSIO_ERR_INVALID_ARGUMENT, natsio_js_kv_create_async(js, "{\"bucket\":\"B\"}", 5, &t));
    ARG(NATSIO_ERR_NULL_ARGUMENT, natsio_js_kv_bind_async(js, NULL, &t));
    ARG(NATSIO_ERR_INVALID_BUCKET_NAME, natsio_js_kv_bind_async(js, "a b", &t));
    ARG(NATSIO_ERR_NULL_ARGUMENT, natsio_js_kv_delete_async(NULL, "KV", &t));
    ARG(NATSIO_ERR_INVALID_BUCKET_NAME, natsio_js_kv_delete_async(js, "a*", &t));
    ARG(NATSIO_ERR_NULL_ARGUMENT, natsio_kv_put_async(NULL, "k", "v", 1, NULL, &t));
    ARG(NATSIO_ERR_INVALID_KEY, natsio_kv_put_async(kv, "a..b", "v", 1, NULL, &t));
    ARG(NATSIO_ERR_INVALID_UTF8, natsio_kv_put_async(kv, "bad\xff", "v", 1, NULL, &t));
    ARG(NATSIO_ERR_NULL_ARGUMENT, natsio_kv_put_async(kv, "k", "v", 1, NULL, NULL));
    ARG(NATSIO_ERR_INVALID_KEY, natsio_kv_create_async(kv, "*", "v", 1, NULL, &t));
    ARG(NATSIO_ERR_INVALID_KEY, natsio_kv_update_async(kv, ".a", "v", 1, 1, &t));
    ARG(NATSIO_ERR_NULL_ARGUMENT, natsio_kv_get_async(kv, NULL, &t));
    ARG(NATSIO_ERR_INVALID_KEY, natsio_kv_get_async(kv, "a b", &t));
    ARG(NATSIO_ERR_INVALID_KEY, natsio_kv_get_revision_async(kv, "a>", 1, &t));
    ARG(NATSIO_ERR_INVALID_KEY, natsio_kv_delete_async(kv, "", NULL, &t));
    ARG(NATSIO_ERR_INVALID_KEY, natsio_kv_purge_async(kv, "a.", NULL, NULL, &t));
    ARG(NATSIO_ERR_NULL_ARGUMENT, natsio_kv_status_async(NULL, &t));
    ARG(NATSIO_ERR_NULL_ARGUMENT, natsio_kv_keys_async(kv, NULL));
    ARG(NATSIO_ERR_INVALID_KEY, natsio_kv_history_async(kv, "a..b", &t));
    ARG(NATSIO_ERR_INVALID_KEY, natsio_kv_watch_async(kv, bad_key, 1, NULL, &t));
    ARG(NATSIO_ERR_NULL_ARGUMENT, natsio_kv_watch_async(kv, null_key, 1, NULL, &t));
    ARG(NATSIO_ERR_NULL_ARGUMENT, natsio_kv_watch_async(kv, NULL, 1, NULL, &t));
    ARG(NATSIO_ERR_INVALID_ARGUMENT, natsio_kv_watch_async(kv, NULL, 0, &bad_watch, &t));
#undef ARG

    /* Token functions themselves. */
    natsio_msg *mo = SENTINEL;
    uint64_t u = U64_SENTINEL;
    EXPECT(NATSIO_ERR_NULL_ARGUMENT, natsio_token_wait(NULL, 0));
    EXPECT(NATSIO_ERR_NULL_ARGUMENT, natsio_token_msg(NULL, &mo));
    EXPECT(NATSIO_ERR_NULL_ARGUMENT, natsio_token_u64(NULL, &u));
    EXPECT(NATSIO_ERR_NULL_ARGUMENT, natsio_token_cancel(NULL));
    EXPECT(NATSIO_ERR_NULL_ARGUMENT, natsio_token_on_complete(NULL, rec_cb, NULL, NULL));
    NT_CHECK(mo == SENTINEL && u == U64_SENTINEL);
    NT_CHECK(!natsio_token_is_done(NULL));
    natsio_token_free(NULL);
    natsio_token *ft = NULL;
    OK(natsio_client_flush_async(c, NATSIO_TIMEOUT_DEFAULT, &ft));
    nt_cleanup(token_free_cb_async, ft);
    EXPECT(NATSIO_ERR_NULL_ARGUMENT, natsio_token_msg(ft, NULL));
    EXPECT(NATSIO_ERR_NULL_ARGUMENT, natsio_token_on_complete(ft, NULL, NULL, NULL));
    EXPECT(NATSIO_ERR_INVALID_ARGUMENT, natsio_token_wait(ft, -4));
    NT_CHECK_MSG(failures[0] == '\0', "argument errors:%s", failures);
}

/* ---- errors found without the server: from the call or from the token ---- */

/* A usage error the library finds by itself (the client is closed, the
 * message was acked already) may come back from the _async call (token
 * untouched) or complete the token at once; either way with `want`.
 * Returns a description of what went wrong, or NULL. */
static const char *either_way(natsio_status st, natsio_token *t, natsio_status want, char *buf, size_t cap) {
    if (st != NATSIO_OK) {
        if (st == want && t == SENTINEL) return NULL;
        snprintf(buf, cap, "call: %s, token %s", ST(st), t == SENTINEL ? "untouched" : "WRITTEN");
        return buf;
    }
    natsio_status w = natsio_token_wait(t, 5000);
    natsio_status got = natsio_token_status(t);
    natsio_token_free(t);
    if (w == NATSIO_OK && got == want) return NULL;
    snprintf(buf, cap, "token: wait %s, status %s", ST(w), ST(got));
    return buf;
}

/* Every operation of a closed client fails with NATSIO_ERR_CONNECTION_CLOSED. */
static void test_calls_after_client_closed(void) {
    setup_case();
    NT_CHECK(!nt_failed());
    for (int i = 0; i < NOPS; i++) {
        const op_t *op = &g_ops[i];
        if (!(op->flags & F_CLIENT)) continue;
        if (op->prepare && !op->prepare(slot_for(i))) NT_FAIL("%s: prepare failed", op->name);
    }
    OK(natsio_client_close(g_fx.c));
    char failures[2048] = "";
    for (int i = 0; i < NOPS; i++) {
        const op_t *op = &g_ops[i];
        if (!(op->flags & F_CLIENT)) continue;
        natsio_token *t = SENTINEL;
        natsio_status st = op->start(slot_for(i), &t);
        char buf[160];
        const char *bad = either_way(st, t, NATSIO_ERR_CONNECTION_CLOSED, buf, sizeof buf);
        /* publish_async_complete has nothing pending: it may well be OK. */
        if (bad && strcmp(op->name, "js_publish_async_complete") != 0) {
            char line[256];
            snprintf(line, sizeof line, "\n    %s: %s", op->name, bad);
            strncat(failures, line, sizeof failures - strlen(failures) - 1);
        }
    }
    NT_CHECK_MSG(failures[0] == '\0', "after close:%s", failures);
}

/* Acking twice, or acking a message that is not from JetStream. */
static void test_ack_sync_local_errors(void) {
    setup_case();
    NT_CHECK(!nt_failed());
    NT_CHECK(make_consumer(g_fx.js, "ORD", "ACK", "explicit"));
    natsio_msg *m = NULL, *core = NULL;
    NT_CHECK(fetch_one("ACK", &m));
    nt_cleanup(msg_free_cb_async, m);
    OK(natsio_msg_ack_sync(m, NATSIO_TIMEOUT_DEFAULT));
    char buf[160];
    natsio_token *t = SENTINEL;
    natsio_status st = natsio_msg_ack_sync_async(m, NATSIO_TIMEOUT_DEFAULT, &t);
    const char *bad = either_way(st, t, NATSIO_ERR_MESSAGE_ALREADY_ACKED, buf, sizeof buf);
    NT_CHECK_MSG(bad == NULL, "ack_sync_async of an acked message: %s", bad);
    OK(natsio_client_request(g_fx.c, "svc.echo", NULL, "x", 1, NATSIO_TIMEOUT_DEFAULT, &core));
    nt_cleanup(msg_free_cb_async, core);
    t = SENTINEL;
    st = natsio_msg_ack_sync_async(core, NATSIO_TIMEOUT_DEFAULT, &t);
    bad = either_way(st, t, NATSIO_ERR_NOT_JS_MESSAGE, buf, sizeof buf);
    NT_CHECK_MSG(bad == NULL, "ack_sync_async of a core message: %s", bad);
}

/* ---- take-once accessors, and tokens freed without taking ------------------- */

static void test_take_once_and_untaken(void) {
    setup_case();
    NT_CHECK(!nt_failed());
    NT_CHECK(make_consumer(g_fx.js, "ORD", "T1", "none"));
    /* connect, consume and watch tokens, each taken twice. */
    natsio_token *tc = NULL, *tm = NULL, *tw = NULL;
    slot_t s;
    memset(&s, 0, sizeof s);
    OK(start_connect(&s, &tc));
    OK(natsio_js_consume_async(g_fx.js, "ORD", "T1", NULL, &tm));
    OK(natsio_kv_watch_async(g_fx.kv, NULL, 0, NULL, &tw));
    nt_cleanup(token_free_cb_async, tc);
    nt_cleanup(token_free_cb_async, tm);
    nt_cleanup(token_free_cb_async, tw);
    NT_CHECK(wait_done(tc) && wait_done(tm) && wait_done(tw));
    natsio_client *c1 = NULL, *c2 = SENTINEL;
    natsio_js_messages *m1 = NULL, *m2 = SENTINEL;
    natsio_kv_watcher *w1 = NULL, *w2 = SENTINEL;
    OK(natsio_token_client(tc, &c1));
    nt_cleanup(client_free_cb_async, c1);
    EXPECT(NATSIO_ERR_ILLEGAL_STATE, natsio_token_client(tc, &c2));
    OK(natsio_token_js_messages(tm, &m1));
    nt_cleanup(messages_free_cb_async, m1);
    EXPECT(NATSIO_ERR_ILLEGAL_STATE, natsio_token_js_messages(tm, &m2));
    OK(natsio_token_kv_watcher(tw, &w1));
    nt_cleanup(watcher_free_cb_async, w1);
    EXPECT(NATSIO_ERR_ILLEGAL_STATE, natsio_token_kv_watcher(tw, &w2));
    NT_CHECK(c2 == SENTINEL && m2 == SENTINEL && w2 == SENTINEL);
    /* The status stays OK after the take. */
    OK(natsio_token_status(tc));
    OK(natsio_token_status(tm));
    OK(natsio_token_status(tw));
    /* What was taken works. */
    OK(natsio_client_flush(c1, NATSIO_TIMEOUT_DEFAULT));
    natsio_msg *msg = NULL;
    OK(natsio_js_messages_next(m1, 5000, &msg));
    bool first = msg_is(msg, "m1");
    natsio_msg_free(msg);
    NT_CHECK(first);
    natsio_kv_entry *e = NULL;
    OK(natsio_kv_watcher_next(w1, 5000, &e));
    bool b2 = e && natsio_kv_entry_revision(e) == 2;
    natsio_kv_entry_free(e);
    NT_CHECK(b2);

    /* Tokens freed without taking: the consume and the watch stop (their
     * server-side consumer of the watch goes away), the client is closed;
     * ASan/valgrind see the rest. */
    NT_CHECK(make_consumer(g_fx.js, "ORD", "T2", "none"));
    natsio_token *uc = NULL, *um = NULL, *uw = NULL;
    OK(start_connect(&s, &uc));
    OK(natsio_js_consume_async(g_fx.js, "ORD", "T2", NULL, &um));
    OK(natsio_kv_watch_async(g_fx.kv, NULL, 0, NULL, &uw));
    NT_CHECK(wait_done(uc) && wait_done(um) && wait_done(uw));
    natsio_token_free(uc);
    natsio_token_free(um);
    natsio_token_free(uw);
    /* Watches of KV: only w1's ordered consumer should remain. */
    int64_t deadline = nt_now_ms() + 5000;
    size_t n = 99;
    while (nt_now_ms() < deadline) {
        natsio_string_list *l = NULL;
        OK(natsio_js_consumer_names(g_fx.js, "KV_KV", &l));
        n = natsio_string_list_count(l);
        natsio_string_list_free(l);
        if (n == 1) break;
        nt_sleep_ms(50);
    }
    NT_CHECK_MSG(n == 1, "consumers of KV_KV after an untaken watch token was freed: %zu (want 1)", n);
}

/* ---- callback may free its own token ------------------------------------------ */

static void free_self_cb(void *ud, natsio_token *t) {
    atomic_fetch_add((atomic_int *)ud, 1);
    natsio_token_free(t); /* allowed by the header */
}
static void count_release(void *ud) { atomic_fetch_add((atomic_int *)ud, 100); }
static bool reached_101(void *ud) { return atomic_load((atomic_int *)ud) >= 101; }

static void test_callback_frees_its_token(void) {
    setup_case();
    NT_CHECK(!nt_failed());
    static atomic_int hits[8];
    for (int i = 0; i < 8; i++) {
        atomic_store(&hits[i], 0);
        natsio_token *t = NULL;
        OK(natsio_client_request_async(g_fx.c, "svc.echo", NULL, "x", 1, NATSIO_TIMEOUT_DEFAULT, &t));
        OK(natsio_token_on_complete(t, free_self_cb, &hits[i], count_release));
    }
    for (int i = 0; i < 8; i++) {
        NT_CHECK_MSG(nt_wait_until(reached_101, &hits[i], 5000), "token %d: %d", i, atomic_load(&hits[i]));
    }
    nt_sleep_ms(100); /* an absence: no more calls within 100 ms */
    for (int i = 0; i < 8; i++) NT_CHECK_INT_EQ(atomic_load(&hits[i]), 101);
}

/* The completion queue, as an event loop would use it: an eventfd as the
 * wake-up. Each operation in turn is registered with its index as tag:
 * its tag comes out exactly once, after it completed, and its result reads
 * as from a plain wait. Then 16 requests at once: every tag exactly once,
 * with no more wake-ups than completions. The notify runs off the caller's
 * thread for operations that complete later; a queue freed first delivers
 * nothing more. */
static _Atomic int g_notify_calls;
static _Atomic int g_notify_on_main;
static int g_wake_fd = -1;

static void queue_notify(void *ud) {
    (void)ud;
    atomic_fetch_add(&g_notify_calls, 1);
    if (pthread_equal(pthread_self(), g_main_thread)) atomic_fetch_add(&g_notify_on_main, 1);
    uint64_t one = 1;
    (void)!write(g_wake_fd, &one, sizeof one);
}

/* Waits for wake-ups and drains the queue (in small batches, so that what
 * is left must stay queued) until `want` tags came or 10 s passed. */
static int drain_queue(natsio_completion_queue *q, int *seen, int nseen, int want) {
    int got = 0;
    int64_t deadline = nt_now_ms() + 10000;
    while (got < want && nt_now_ms() < deadline) {
        struct pollfd pfd = {g_wake_fd, POLLIN, 0};
        if (poll(&pfd, 1, 100) <= 0) continue;
        uint64_t v;
        (void)!read(g_wake_fd, &v, sizeof v);
        uint64_t tags[4];
        size_t n;
        do {
            n = natsio_completion_queue_poll(q, tags, 4);
            for (size_t k = 0; k < n; k++, got++) {
                if (tags[k] < (uint64_t)nseen) seen[tags[k]]++;
                else nt_fail_at(__FILE__, __LINE__, "unknown tag %llu", (unsigned long long)tags[k]);
            }
        } while (n == 4);
    }
    return got;
}

static void test_completion_queue_all_ops(void) {
    setup_case();
    NT_CHECK(!nt_failed());
    g_wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    NT_CHECK(g_wake_fd >= 0);
    atomic_store(&g_notify_calls, 0);
    atomic_store(&g_notify_on_main, 0);
    natsio_completion_queue *q = NULL;
    OK(natsio_completion_queue_new(queue_notify, NULL, NULL, &q));
    for (int i = 0; i < NOPS; i++) {
        const op_t *op = &g_ops[i];
        natsio_token *t = op_start(i);
        NT_CHECK_MSG(t != NULL, "%s did not start", op->name);
        int seen[NOPS] = {0};
        natsio_status reg = natsio_token_complete_to(t, q, (uint64_t)i);
        natsio_status reg2 = natsio_token_complete_to(t, q, 99);
        int got = drain_queue(q, seen, NOPS, 1);
        natsio_status st = natsio_token_status(t);
        if (reg != NATSIO_OK || got != 1 || seen[i] != 1 || st != NATSIO_OK) {
            natsio_token_free(t);
            NT_FAIL("%s: register %s, %d tags (own seen %d), status %s (%s)", op->name, ST(reg), got, seen[i],
                    ST(st), natsio_last_error());
        }
        NT_CHECK_MSG(reg2 == NATSIO_ERR_ILLEGAL_STATE, "%s: second registration: %s", op->name, ST(reg2));
        op->verify(slot_for(i), t);
        natsio_token_free(t);
        NT_CHECK_MSG(!nt_failed(), "%s: result differs (see above)", op->name);
    }
    enum { PAR = 16 };
    natsio_token *toks[PAR];
    int seen[PAR] = {0};
    int notifies_before = atomic_load(&g_notify_calls);
    for (int i = 0; i < PAR; i++) {
        OK(natsio_client_request_async(g_fx.c, "svc.echo", NULL, "x", 1, NATSIO_TIMEOUT_DEFAULT, &toks[i]));
        OK(natsio_token_complete_to(toks[i], q, (uint64_t)i));
    }
    int got = drain_queue(q, seen, PAR, PAR);
    NT_CHECK_INT_EQ(got, PAR);
    for (int i = 0; i < PAR; i++) {
        NT_CHECK_MSG(seen[i] == 1, "request %d: tag seen %d times", i, seen[i]);
        natsio_msg *m = NULL;
        NT_CHECK_INT_EQ(natsio_token_msg(toks[i], &m), NATSIO_OK);
        NT_CHECK(m != NULL);
        natsio_msg_free(m);
        natsio_token_free(toks[i]);
    }
    int notifies = atomic_load(&g_notify_calls) - notifies_before;
    NT_CHECK_MSG(notifies >= 1 && notifies <= PAR, "%d notifies for %d completions", notifies, PAR);
    NT_CHECK_MSG(atomic_load(&g_notify_on_main) < atomic_load(&g_notify_calls),
                 "every notify ran on the caller's thread");
    uint64_t tag;
    NT_CHECK_INT_EQ(natsio_completion_queue_poll(q, &tag, 1), 0);

    /* Freed first: a request completing later notifies nobody; the token
     * still completes. */
    natsio_token *late = NULL;
    OK(natsio_client_request_async(g_fx.c, "svc.echo", NULL, "x", 1, NATSIO_TIMEOUT_DEFAULT, &late));
    OK(natsio_token_complete_to(late, q, 1));
    int before = atomic_load(&g_notify_calls);
    natsio_completion_queue_free(q);
    NT_CHECK_INT_EQ(natsio_token_wait(late, 5000), NATSIO_OK);
    NT_CHECK_INT_EQ(natsio_token_status(late), NATSIO_OK);
    natsio_token_free(late);
    NT_CHECK_INT_EQ(atomic_load(&g_notify_calls), before);
    close(g_wake_fd);
    g_wake_fd = -1;
}

int main(int argc, char **argv) {
    static const nt_case cases[] = {
        NT_CASE(test_success_all_ops),
        NT_CASE(test_pending_then_cancel_all_ops),
        NT_CASE(test_callback_on_completion_all_ops),
        NT_CASE(test_free_while_pending_all_ops),
        NT_CASE(test_client_closed_while_pending_all_ops),
        NT_CASE(test_error_classes),
        NT_CASE(test_timeout_class),
        NT_CASE(test_argument_errors),
        NT_CASE(test_calls_after_client_closed),
        NT_CASE(test_ack_sync_local_errors),
        NT_CASE(test_take_once_and_untaken),
        NT_CASE(test_callback_frees_its_token),
        NT_CASE(test_completion_queue_all_ops),
    };
    return nt_main(argc, argv, cases, NT_COUNT(cases));
}
