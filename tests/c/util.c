/* See util.h. */
#define _POSIX_C_SOURCE 200809L
#include "util.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

nt_server *g_server;
const char *g_server_url;

static const char *g_suite = "test";

int run_cases_with_shared_server(int argc, char **argv, const char *suite, const nt_case *cases,
                                 size_t count) {
    g_suite = suite;
    const char *transport = getenv("NT_TRANSPORT");
    bool ws = transport && strcmp(transport, "ws") == 0;
    bool wss = transport && strcmp(transport, "wss") == 0;
    if (transport && *transport && !ws && !wss) {
        fprintf(stderr, "NT_TRANSPORT=%s: expected ws or wss\n", transport);
        return 1;
    }
    static char config[4096];
    static char url[128];
    int ws_port = 0;
    if (ws || wss) {
        ws_port = nt_free_port();
        char cert[512], key[512], ca[512];
        nt_fixture_path(cert, sizeof cert, "tls/server-cert.pem");
        nt_fixture_path(key, sizeof key, "tls/server-key.pem");
        nt_fixture_path(ca, sizeof ca, "tls/ca.pem");
        if (wss) {
            /* Every client of the program trusts the test CA. */
            setenv("SSL_CERT_FILE", ca, 1);
            snprintf(config, sizeof config,
                     "websocket {\n listen: \"127.0.0.1:%d\"\n tls {\n  cert_file: \"%s\"\n"
                     "  key_file: \"%s\"\n }\n}\n",
                     ws_port, cert, key);
        } else {
            snprintf(config, sizeof config, "websocket {\n listen: \"127.0.0.1:%d\"\n no_tls: true\n}\n",
                     ws_port);
        }
    }
    g_server = nt_server_start(ws_port ? config : NULL);
    if (g_server == NULL) {
        fprintf(stderr, "cannot start nats-server\n");
        return 1;
    }
    nt_cleanup(nt_server_stop_cb, g_server);
    if (ws_port) {
        snprintf(url, sizeof url, "%s://127.0.0.1:%d", wss ? "wss" : "ws", ws_port);
        g_server_url = url;
        fprintf(stderr, "clients connect to %s\n", url);
    } else {
        g_server_url = nt_server_url(g_server);
    }
    return nt_main(argc, argv, cases, count);
}

const char *case_subject(char *buf, size_t cap, const char *suffix) {
    snprintf(buf, cap, "%s.%s.%s", g_suite, nt_current_case(), suffix);
    return buf;
}

nt_server *start_server(const char *config) {
    nt_server *s = nt_server_start(config);
    if (!s) {
        nt_fail_at(__FILE__, __LINE__, "nats-server did not start with config:\n%s",
                   config ? config : "(none)");
        return NULL;
    }
    nt_cleanup(nt_server_stop_cb, s);
    return s;
}

void client_free_cb(void *client) { natsio_client_free((natsio_client *)client); }
void sub_free_cb(void *sub) { natsio_sub_free((natsio_sub *)sub); }
void options_free_cb(void *options) { natsio_options_free((natsio_options *)options); }
void token_free_cb(void *token) { natsio_token_free((natsio_token *)token); }
void headers_free_cb(void *headers) { natsio_headers_free((natsio_headers *)headers); }
void msg_free_cb(void *msg) { natsio_msg_free((natsio_msg *)msg); }

natsio_options *new_options(void) {
    natsio_options *o = NULL;
    if (natsio_options_new(&o) != NATSIO_OK) {
        nt_fail_at(__FILE__, __LINE__, "natsio_options_new failed");
        return NULL;
    }
    nt_cleanup(options_free_cb, o);
    return o;
}

natsio_options *options_for_url(const char *url, int64_t connect_timeout_ms) {
    natsio_options *o = new_options();
    if (!o) return NULL;
    if (natsio_options_set_url(o, url) != NATSIO_OK ||
        (connect_timeout_ms > 0 && natsio_options_set_connect_timeout_ms(o, connect_timeout_ms) != NATSIO_OK)) {
        nt_fail_at(__FILE__, __LINE__, "setting options: %s", natsio_last_error());
        return NULL;
    }
    return o;
}

/* Keeps a connected client until the case ends, or records why it is not. */
static natsio_client *keep_connected(natsio_status st, natsio_client *c) {
    if (st != NATSIO_OK) {
        nt_fail_at(__FILE__, __LINE__, "connect: %s (%s)", natsio_status_str(st), natsio_last_error());
        return NULL;
    }
    nt_cleanup(client_free_cb, c);
    return c;
}

natsio_client *connect_url(const char *url) {
    natsio_client *c = NULL;
    natsio_status st = natsio_client_connect_url(url, &c);
    return keep_connected(st, c);
}

natsio_client *connect_with(const natsio_options *options) {
    natsio_client *c = NULL;
    natsio_status st = natsio_client_connect(options, &c);
    return keep_connected(st, c);
}

natsio_client *connect_client(void) { return connect_url(g_server_url); }

static bool server_pinged(void *client) {
    natsio_client_stats s;
    return natsio_client_get_stats(client, &s) == NATSIO_OK && s.server_pings > 0;
}

natsio_client *connect_client_past_first_ping(void) {
    natsio_client *c = connect_client();
    if (c == NULL) return NULL;
    /* The PING comes about 2 s after the connect (plus up to a fifth of
     * jitter); the flush's own PING follows the PONG on the wire. */
    if (!nt_wait_until(server_pinged, c, 10000)) {
        nt_fail_at(__FILE__, __LINE__, "nats-server sent no PING within 10 s");
        return NULL;
    }
    natsio_status st = natsio_client_flush(c, 5000);
    if (st != NATSIO_OK) {
        nt_fail_at(__FILE__, __LINE__, "flush after the first PING: %s", natsio_status_str(st));
        return NULL;
    }
    return c;
}

natsio_sub *subscribe(natsio_client *c, const char *subject, const char *queue) {
    natsio_sub *s = NULL;
    natsio_status st = natsio_client_subscribe(c, subject, queue, NULL, &s);
    if (st != NATSIO_OK) {
        nt_fail_at(__FILE__, __LINE__, "subscribe %s: %s (%s)", subject, natsio_status_str(st),
                   natsio_last_error());
        return NULL;
    }
    nt_cleanup(sub_free_cb, s);
    return s;
}

natsio_sub *subscribe_and_flush(natsio_client *c, const char *subject) {
    natsio_sub *s = subscribe(c, subject, NULL);
    if (!s) return NULL;
    natsio_status st = natsio_client_flush(c, 5000);
    if (st != NATSIO_OK) {
        nt_fail_at(__FILE__, __LINE__, "flush after subscribing %s: %s", subject, natsio_status_str(st));
        return NULL;
    }
    return s;
}

natsio_status subscribe_callback(const natsio_client *c, const char *subject, const char *queue,
                                 const natsio_sub_options *opts, natsio_msg_cb cb, void *user_data,
                                 natsio_release_cb release, natsio_sub **sub_out) {
    natsio_sub *s = NULL;
    natsio_status st = natsio_client_subscribe(c, subject, queue, opts, &s);
    if (st != NATSIO_OK) return st;
    st = natsio_sub_set_callback(s, cb, user_data, release);
    if (st != NATSIO_OK) {
        natsio_sub_free(s); /* a _free sets no error: the detail stays */
        return st;
    }
    *sub_out = s;
    return NATSIO_OK;
}

natsio_sub *start_responder(natsio_client *c, const char *subject, natsio_msg_cb cb) {
    natsio_sub *s = NULL;
    natsio_status st = subscribe_callback(c, subject, NULL, NULL, cb, NULL, NULL, &s);
    if (st != NATSIO_OK) {
        nt_fail_at(__FILE__, __LINE__, "responder on %s: %s (%s)", subject, natsio_status_str(st),
                   natsio_last_error());
        return NULL;
    }
    nt_cleanup(sub_free_cb, s);
    st = natsio_client_flush(c, 5000);
    if (st != NATSIO_OK) {
        nt_fail_at(__FILE__, __LINE__, "flush after subscribing a responder: %s", natsio_status_str(st));
        return NULL;
    }
    return s;
}

void echo_cb(void *user_data, const natsio_msg *msg, natsio_status status) {
    (void)user_data;
    (void)status;
    if (msg == NULL) return; /* the final call: the subscription ended */
    natsio_msg_respond(msg, natsio_msg_data(msg), natsio_msg_data_len(msg));
}

bool message_round_trip(natsio_client *c, const char *subject, const char *payload) {
    size_t len = strlen(payload);
    natsio_sub *sub = NULL;
    natsio_msg *m = NULL;
    bool ok = natsio_client_subscribe(c, subject, NULL, NULL, &sub) == NATSIO_OK &&
              natsio_client_publish(c, subject, payload, len) == NATSIO_OK &&
              natsio_sub_next(sub, 5000, &m) == NATSIO_OK && natsio_msg_data_len(m) == len;
    natsio_msg_free(m);
    natsio_sub_free(sub);
    return ok;
}

bool contains_ci(const char *haystack, const char *needle) {
    size_t n = strlen(needle);
    for (const char *p = haystack; *p; p++) {
        size_t i = 0;
        while (i < n && p[i] && (p[i] | 0x20) == (needle[i] | 0x20)) i++;
        if (i == n) return true;
    }
    return false;
}

typedef struct {
    atomic_long *value;
    long target;
} at_least;

static bool reached(void *arg) {
    at_least *a = (at_least *)arg;
    return atomic_load(a->value) >= a->target;
}

bool wait_at_least(atomic_long *value, long target, int64_t timeout_ms) {
    at_least a = {value, target};
    return nt_wait_until(reached, &a, timeout_ms);
}

typedef struct {
    natsio_client *client;
    natsio_conn_status status;
} status_wait;

static bool status_is(void *arg) {
    status_wait *w = (status_wait *)arg;
    return natsio_client_status(w->client) == w->status;
}

bool wait_status(natsio_client *c, natsio_conn_status status, int64_t timeout_ms) {
    status_wait w = {c, status};
    return nt_wait_until(status_is, &w, timeout_ms);
}

void js_free_cb(void *js) { natsio_js_free((natsio_js *)js); }
void kv_free_cb(void *kv) { natsio_kv_free((natsio_kv *)kv); }
void string_free_cb(void *string) { natsio_string_free((char *)string); }

natsio_js *new_jetstream(natsio_client *c, const natsio_js_options *opts) {
    natsio_js *js = NULL;
    natsio_status st = natsio_client_jetstream(c, opts, &js);
    if (st != NATSIO_OK) {
        nt_fail_at(__FILE__, __LINE__, "natsio_client_jetstream: %s (%s)", natsio_status_str(st),
                   natsio_last_error());
        return NULL;
    }
    nt_cleanup(js_free_cb, js);
    return js;
}

bool json_int(const char *json, const char *key, int64_t *out) {
    char pattern[128];
    snprintf(pattern, sizeof pattern, "\"%s\":", key);
    const char *p = json ? strstr(json, pattern) : NULL;
    if (!p) return false;
    p += strlen(pattern);
    while (*p == ' ') p++;
    char *end = NULL;
    long long v = strtoll(p, &end, 10);
    if (end == p) return false;
    *out = (int64_t)v;
    return true;
}

void msg_list_free_cb(void *list) { natsio_msg_list_free((natsio_msg_list *)list); }
void kv_entry_list_free_cb(void *list) { natsio_kv_entry_list_free((natsio_kv_entry_list *)list); }

bool json_str(const char *json, const char *key, char *buf, size_t cap) {
    char pattern[128];
    snprintf(pattern, sizeof pattern, "\"%s\":\"", key);
    const char *p = json ? strstr(json, pattern) : NULL;
    if (!p) return false;
    p += strlen(pattern);
    const char *end = strchr(p, '"');
    if (!end || (size_t)(end - p) >= cap) return false;
    memcpy(buf, p, (size_t)(end - p));
    buf[end - p] = '\0';
    return true;
}

size_t json_string_count(const char *json) {
    size_t n = json ? strlen(json) : 0;
    if (n < 2 || json[0] != '[' || json[n - 1] != ']') return SIZE_MAX;
    size_t quotes = 0;
    for (size_t i = 1; i + 1 < n; i++) {
        if (json[i] == '\\') return SIZE_MAX;
        if (json[i] == '"') quotes++;
    }
    return quotes % 2 == 0 ? quotes / 2 : SIZE_MAX;
}

bool json_array_has(const char *json, const char *value) {
    size_t vlen = strlen(value);
    for (const char *p = json ? strchr(json, '"') : NULL; p; p = strchr(p + 1, '"')) {
        bool starts = p > json && (p[-1] == '[' || p[-1] == ',');
        if (starts && strncmp(p + 1, value, vlen) == 0 && p[1 + vlen] == '"' &&
            (p[2 + vlen] == ',' || p[2 + vlen] == ']'))
            return true;
    }
    return false;
}

void string_list_free_cb(void *list) { natsio_string_list_free((natsio_string_list *)list); }

natsio_string_list *kept_list(natsio_string_list *list) {
    if (list) nt_cleanup(string_list_free_cb, list);
    return list;
}

bool string_list_has(const natsio_string_list *list, const char *value) {
    for (size_t i = 0; i < natsio_string_list_count(list); i++) {
        const char *s = natsio_string_list_get(list, i);
        if (s != NULL && strcmp(s, value) == 0) return true;
    }
    return false;
}

const char *string_list_join(const natsio_string_list *list, char *buf, size_t cap) {
    buf[0] = '\0';
    for (size_t i = 0; i < natsio_string_list_count(list); i++) {
        size_t used = strlen(buf);
        const char *s = natsio_string_list_get(list, i);
        snprintf(buf + used, cap - used, "%s%s", i ? "," : "", s ? s : "(null)");
    }
    return buf;
}

void replies_free_cb(void *replies) { natsio_replies_free((natsio_replies *)replies); }

natsio_status token_outcome(natsio_token *t, int64_t timeout_ms) {
    natsio_status st = natsio_token_wait(t, timeout_ms);
    return st == NATSIO_OK ? natsio_token_status(t) : st;
}

bool span_eq(const char *p, size_t len, const char *s) {
    return p != NULL && strlen(s) == len && memcmp(p, s, len) == 0;
}

void plant_error_marker(void) {
    static natsio_headers *empty_map;
    if (!empty_map && natsio_headers_new(&empty_map) != NATSIO_OK) {
        nt_fail_at(__FILE__, __LINE__, "natsio_headers_new failed");
        return;
    }
    const char *unused = NULL;
    if (natsio_headers_get(empty_map, ERROR_MARKER, &unused) != NATSIO_ERR_NOT_FOUND ||
        strstr(natsio_last_error(), ERROR_MARKER) == NULL) {
        nt_fail_at(__FILE__, __LINE__, "could not plant the marker error (got \"%s\")",
                   natsio_last_error());
    }
}

void js_messages_free_cb(void *messages) { natsio_js_messages_free((natsio_js_messages *)messages); }
void kv_watcher_free_cb(void *watcher) { natsio_kv_watcher_free((natsio_kv_watcher *)watcher); }
void kv_entry_free_cb(void *entry) { natsio_kv_entry_free((natsio_kv_entry *)entry); }

char sentinel_storage[8];

natsio_js *connect_js_with(const natsio_js_options *opts) {
    natsio_client *c = connect_client();
    return c ? new_jetstream(c, opts) : NULL;
}

natsio_js *connect_js(void) { return connect_js_with(NULL); }

bool client_connected(void *arg) { return natsio_client_status((natsio_client *)arg) == NATSIO_CONN_CONNECTED; }

bool create_stream_config(natsio_js *js, const char *config) {
    natsio_status st = natsio_js_stream_create(js, config, NATSIO_CREATE, NULL);
    if (st != NATSIO_OK) {
        nt_fail_at(__FILE__, __LINE__, "create %s: %s (%s)", config, natsio_status_str(st),
                   natsio_last_error());
        return false;
    }
    return true;
}

bool create_stream(natsio_js *js, const char *name, const char *subjects) {
    char cfg[256];
    snprintf(cfg, sizeof cfg, "{\"name\":\"%s\",\"subjects\":[\"%s\"],\"storage\":\"memory\"}", name, subjects);
    return create_stream_config(js, cfg);
}

bool create_consumer(natsio_js *js, const char *stream, const char *config) {
    natsio_status st = natsio_js_consumer_create(js, stream, config, NATSIO_CREATE, NULL);
    if (st != NATSIO_OK) {
        nt_fail_at(__FILE__, __LINE__, "create consumer %s on %s: %s (%s)", config, stream,
                   natsio_status_str(st), natsio_last_error());
        return false;
    }
    return true;
}

int64_t consumer_int(natsio_js *js, const char *stream, const char *consumer, const char *key) {
    char *info = NULL;
    if (natsio_js_consumer_info(js, stream, consumer, &info) != NATSIO_OK) return INT64_MIN;
    int64_t v = INT64_MIN;
    if (!json_int(info, key, &v)) v = INT64_MIN;
    natsio_string_free(info);
    return v;
}

typedef struct {
    natsio_js *js;
    const char *stream;
    const char *consumer;
    const char *key;
    int64_t want;
    int64_t last;
} consumer_int_wait;

static bool consumer_int_is(void *arg) {
    consumer_int_wait *w = (consumer_int_wait *)arg;
    w->last = consumer_int(w->js, w->stream, w->consumer, w->key);
    return w->last == w->want;
}

bool wait_consumer_int(natsio_js *js, const char *stream, const char *consumer, const char *key,
                       int64_t want) {
    consumer_int_wait w = {js, stream, consumer, key, want, INT64_MIN};
    /* Generous: the server updates these counts off its own queues, and
     * the suite also runs under valgrind; only a failure waits this long. */
    if (nt_wait_until(consumer_int_is, &w, 30000)) return true;
    fprintf(stderr, "consumer %s/%s: %s is %lld, expected %lld\n", stream, consumer, key,
            (long long)w.last, (long long)want);
    return false;
}

bool endpoint_counts_are(void *arg) {
    endpoint_counts *want = arg;
    natsio_iter_stats st;
    return natsio_endpoint_get_stats(want->ep, &st) == NATSIO_OK && st.dropped == want->dropped &&
           st.pending_items == want->pending_items;
}

bool publish_requests(natsio_client *c, const char *subject, const char *reply, int first, int count) {
    for (int i = first; i < first + count; i++) {
        char body[16];
        int len = snprintf(body, sizeof body, "r%d", i);
        natsio_status st = natsio_client_publish_with(c, subject, reply, NULL, body, (size_t)len);
        if (st != NATSIO_OK) {
            nt_fail_at(__FILE__, __LINE__, "publish %s to %s: %s (%s)", body, subject, natsio_status_str(st),
                       natsio_last_error());
            return false;
        }
    }
    return true;
}

bool next_requests_in_order(natsio_endpoint *ep, int count) {
    for (int i = 0; i < count; i++) {
        char want[16];
        snprintf(want, sizeof want, "r%d", i);
        natsio_service_request *req = NULL;
        natsio_status st = natsio_endpoint_next(ep, 5000, &req);
        bool ok = st == NATSIO_OK && req != NULL && payload_is(natsio_service_request_msg(req), want);
        if (!ok) {
            nt_fail_at(__FILE__, __LINE__, "request %d: %s, wanted %s", i, natsio_status_str(st), want);
            natsio_service_request_free(req);
            return false;
        }
        natsio_service_request_free(req);
    }
    return true;
}

natsio_js_messages *fetch_one_prioritized(natsio_js *js, const char *stream, const char *consumer, const char *group,
                                          int32_t priority) {
    natsio_fetch_options o;
    natsio_fetch_options_init(&o);
    o.max_messages = 1;
    o.expires_ms = 10000;
    o.group = group;
    o.priority = priority;
    natsio_js_messages *it = NULL;
    natsio_status st = natsio_js_fetch_messages(js, stream, consumer, &o, &it);
    if (st != NATSIO_OK) {
        nt_fail_at(__FILE__, __LINE__, "fetch at priority %d: %s (%s)", (int)priority, natsio_status_str(st),
                   natsio_last_error());
        return NULL;
    }
    nt_cleanup(js_messages_free_cb, it);
    return it;
}

bool next_acked_payload_is(natsio_js_messages *it, const char *want) {
    natsio_msg *m = NULL;
    natsio_status st = natsio_js_messages_next(it, 5000, &m);
    if (st != NATSIO_OK || m == NULL) {
        nt_fail_at(__FILE__, __LINE__, "next, wanted %s: %s (%s)", want, natsio_status_str(st), natsio_last_error());
        return false;
    }
    bool ok = payload_is(m, want);
    if (!ok)
        nt_fail_at(__FILE__, __LINE__, "got %.*s, wanted %s", (int)natsio_msg_data_len(m),
                   (const char *)natsio_msg_data(m), want);
    natsio_msg_ack(m);
    natsio_msg_free(m);
    return ok;
}

static bool ends_with(const char *s, const char *suffix) {
    size_t len = strlen(s), slen = strlen(suffix);
    return len >= slen && strcmp(s + len - slen, suffix) == 0;
}

static void server_list_free_cb(void *list) { natsio_server_list_free((natsio_server_list *)list); }

natsio_server_list *kept_server_pool(natsio_client *c) {
    natsio_server_list *pool = NULL;
    natsio_status st = natsio_client_server_pool(c, &pool);
    if (st != NATSIO_OK) {
        nt_fail_at(__FILE__, __LINE__, "natsio_client_server_pool: %s", natsio_status_str(st));
        return NULL;
    }
    nt_cleanup(server_list_free_cb, pool);
    return pool;
}

const natsio_server *pool_server(const natsio_server_list *pool, const char *suffix) {
    for (size_t i = 0; i < natsio_server_list_count(pool); i++) {
        const natsio_server *s = natsio_server_list_get(pool, i);
        if (ends_with(natsio_server_url(s), suffix)) return s;
    }
    return NULL;
}

bool client_connected_to(void *connected_to_wait_arg) {
    const connected_to_wait *w = connected_to_wait_arg;
    char *url = NULL;
    if (natsio_client_status(w->client) != NATSIO_CONN_CONNECTED) return false;
    if (natsio_client_connected_url(w->client, &url) != NATSIO_OK) return false;
    bool at = ends_with(url, w->url_suffix);
    natsio_string_free(url);
    return at;
}

natsio_kv *create_bucket(natsio_js *js, const char *config) {
    natsio_kv *kv = NULL;
    natsio_status st = natsio_js_kv_create(js, config, NATSIO_CREATE, &kv);
    if (st != NATSIO_OK) {
        nt_fail_at(__FILE__, __LINE__, "create bucket %s: %s (%s)", config, natsio_status_str(st),
                   natsio_last_error());
        return NULL;
    }
    nt_cleanup(kv_free_cb, kv);
    return kv;
}

typedef struct {
    natsio_kv *kv;
    const char *key;
    const char *want;
    uint64_t revision; /* of the entry that read as `want` */
    char last[128];    /* the last value or error read, for the failure */
} kv_read_wait;

static bool kv_reads_as(void *arg) {
    kv_read_wait *w = arg;
    natsio_kv_entry *e = NULL;
    natsio_status st = natsio_kv_get(w->kv, w->key, &e);
    if (st != NATSIO_OK) {
        snprintf(w->last, sizeof w->last, "%s", natsio_status_str(st));
        return false;
    }
    const char *value = natsio_kv_entry_value(e);
    size_t len = natsio_kv_entry_value_len(e);
    snprintf(w->last, sizeof w->last, "value %.*s", (int)(len < 100 ? len : 100), value);
    bool same = span_eq(value, len, w->want);
    w->revision = natsio_kv_entry_revision(e);
    natsio_kv_entry_free(e);
    return same;
}

bool wait_kv_value(natsio_kv *kv, const char *key, const char *want, int64_t timeout_ms, uint64_t *revision_out) {
    kv_read_wait w = {kv, key, want, 0, "nothing"};
    if (nt_wait_until(kv_reads_as, &w, timeout_ms)) {
        if (revision_out != NULL) *revision_out = w.revision;
        return true;
    }
    nt_fail_at(__FILE__, __LINE__, "key %s never read %s (last: %s)", key, want, w.last);
    return false;
}

bool payload_is(const natsio_msg *m, const char *s) {
    return m != NULL && natsio_msg_data_len(m) == strlen(s) && memcmp(natsio_msg_data(m), s, strlen(s)) == 0;
}

natsio_js_msg_metadata metadata_of(const natsio_msg *m) {
    natsio_js_msg_metadata md;
    memset(&md, 0, sizeof md);
    natsio_status st = natsio_msg_js_metadata(m, &md);
    if (st != NATSIO_OK) {
        nt_fail_at(__FILE__, __LINE__, "metadata: %s (%s)", natsio_status_str(st), natsio_last_error());
        memset(&md, 0, sizeof md);
    }
    return md;
}

char *kept(char *s) {
    if (s) nt_cleanup(string_free_cb, s);
    return s;
}

int64_t now_realtime_ns(void) {
    struct timespec ts;
    timespec_get(&ts, TIME_UTC);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int64_t abs64(int64_t v) { return v < 0 ? -v : v; }

/* ---- callback log ---------------------------------------------------------- */

struct callback_log {
    pthread_mutex_t mu;
    size_t count; /* calls seen; records holds the first CALLBACK_LOG_CAP */
    callback_record records[CALLBACK_LOG_CAP];
    /* RECONNECT_FAILED events, apart (see util.h). */
    size_t failures;
    callback_record failure[CALLBACK_LOG_CAP];
};

static void callback_log_free(void *log) {
    callback_log *l = (callback_log *)log;
    pthread_mutex_destroy(&l->mu);
    free(l);
}

callback_log *new_callback_log(void) {
    callback_log *l = (callback_log *)calloc(1, sizeof *l);
    if (!l || pthread_mutex_init(&l->mu, NULL) != 0) {
        free(l);
        nt_fail_at(__FILE__, __LINE__, "cannot make a callback log");
        return NULL;
    }
    nt_cleanup(callback_log_free, l);
    return l;
}

static void log_record_call(callback_log *l, int32_t kind, natsio_status status, const char *text) {
    pthread_mutex_lock(&l->mu);
    bool failure = kind == (int32_t)NATSIO_EVENT_RECONNECT_FAILED;
    size_t *n = failure ? &l->failures : &l->count;
    if (*n < CALLBACK_LOG_CAP) {
        callback_record *r = failure ? &l->failure[*n] : &l->records[*n];
        r->kind = kind;
        r->status = status;
        snprintf(r->text, sizeof r->text, "%s", text ? text : "");
    }
    (*n)++;
    pthread_mutex_unlock(&l->mu);
}

static void log_on_error(void *user_data, natsio_status status, const char *text, uint64_t sid,
                         const char *subject) {
    (void)sid;
    (void)subject;
    log_record_call((callback_log *)user_data, -1, status, text);
}

static void log_on_event(void *user_data, natsio_event_kind kind, natsio_status status, const char *text) {
    log_record_call((callback_log *)user_data, (int32_t)kind, status, text);
}

bool log_callbacks(natsio_options *o, callback_log *log) {
    natsio_status st = natsio_options_set_error_callback(o, log_on_error, log, NULL);
    if (st == NATSIO_OK) st = natsio_options_set_event_callback(o, log_on_event, log, NULL);
    if (st != NATSIO_OK) {
        nt_fail_at(__FILE__, __LINE__, "setting callbacks: %s (%s)", natsio_status_str(st), natsio_last_error());
        return false;
    }
    return true;
}

/* Records matching kind (and status, unless any_status). */
static long log_count(callback_log *l, int32_t kind, natsio_status status, bool any_status) {
    long n = 0;
    pthread_mutex_lock(&l->mu);
    bool failure = kind == (int32_t)NATSIO_EVENT_RECONNECT_FAILED;
    const callback_record *records = failure ? l->failure : l->records;
    size_t seen = failure ? l->failures : l->count;
    size_t kept = seen < CALLBACK_LOG_CAP ? seen : CALLBACK_LOG_CAP;
    for (size_t i = 0; i < kept; i++)
        if (records[i].kind == kind && (any_status || records[i].status == status)) n++;
    pthread_mutex_unlock(&l->mu);
    return n;
}

long log_errors(callback_log *log, natsio_status status) { return log_count(log, -1, status, false); }

long log_events(callback_log *log, natsio_event_kind kind, natsio_status status) {
    return log_count(log, (int32_t)kind, status, false);
}

long log_events_any(callback_log *log, natsio_event_kind kind) {
    return log_count(log, (int32_t)kind, NATSIO_OK, true);
}

long log_total(callback_log *log) {
    pthread_mutex_lock(&log->mu);
    long n = (long)log->count;
    pthread_mutex_unlock(&log->mu);
    return n;
}

typedef struct {
    callback_log *log;
    int32_t kind;
    natsio_status status;
    bool any_status;
    long n;
} log_wait;

static bool log_reached(void *arg) {
    log_wait *w = (log_wait *)arg;
    return log_count(w->log, w->kind, w->status, w->any_status) >= w->n;
}

bool wait_log_errors(callback_log *log, natsio_status status, long n, int64_t timeout_ms) {
    log_wait w = {log, -1, status, false, n};
    return nt_wait_until(log_reached, &w, timeout_ms);
}

bool wait_log_events(callback_log *log, natsio_event_kind kind, long n, int64_t timeout_ms) {
    log_wait w = {log, (int32_t)kind, NATSIO_OK, true, n};
    return nt_wait_until(log_reached, &w, timeout_ms);
}

callback_record log_record(callback_log *log, size_t i) {
    callback_record r;
    memset(&r, 0, sizeof r);
    r.kind = -2;
    pthread_mutex_lock(&log->mu);
    if (i < log->count && i < CALLBACK_LOG_CAP) r = log->records[i];
    pthread_mutex_unlock(&log->mu);
    return r;
}

callback_record log_reconnect_failure(callback_log *log, size_t i) {
    callback_record r;
    memset(&r, 0, sizeof r);
    r.kind = -2;
    pthread_mutex_lock(&log->mu);
    if (i < log->failures && i < CALLBACK_LOG_CAP) r = log->failure[i];
    pthread_mutex_unlock(&log->mu);
    return r;
}

const char *log_dump(callback_log *log, char *buf, size_t cap) {
    size_t used = 0;
    buf[0] = '\0';
    pthread_mutex_lock(&log->mu);
    size_t kept = log->count < CALLBACK_LOG_CAP ? log->count : CALLBACK_LOG_CAP;
    for (size_t i = 0; i < kept && used < cap; i++) {
        const callback_record *r = &log->records[i];
        int w = r->kind < 0 ? snprintf(buf + used, cap - used, "%serror:%s:%s", i ? "\n" : "",
                                       natsio_status_str(r->status), r->text)
                            : snprintf(buf + used, cap - used, "%sevent %d:%s:%s", i ? "\n" : "",
                                       (int)r->kind, natsio_status_str(r->status), r->text);
        if (w < 0) break;
        used += (size_t)w;
    }
    if (log->failures && used < cap)
        snprintf(buf + used, cap - used, "\n(and %zu RECONNECT_FAILED events, the first: %s)", log->failures,
                 log->failure[0].text);
    pthread_mutex_unlock(&log->mu);
    return buf;
}
