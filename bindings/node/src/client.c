/*
 * Clients: connect (options), publish and the non-blocking getters. The
 * calls that wait on the server (request, flush, drain, close) are
 * generated (gen/verbs.c); publish only buffers, so it runs here and
 * throws (a hot path, kept hand-written: one call, no token).
 */
#include "internal.h"

#include <stdlib.h>
#include <string.h>

void client_retain(client_wrap *cw) { cw->refs++; }

void client_release(client_wrap *cw) {
    if (--cw->refs > 0) return;
    natsio_client_free(cw->client); /* closed already by the finalizer */
    live_count(LIVE_CLIENT, -1);
    hub_release(cw->hub);
    free(cw);
}

static void client_finalize(napi_env env, void *data, void *hint) {
    (void)env;
    (void)hint;
    client_wrap *cw = data;
    hub *h = cw->hub;
    if (cw->prev)
        cw->prev->next = cw->next;
    else if (h->clients == cw)
        h->clients = cw->next;
    if (cw->next) cw->next->prev = cw->prev;
    cw->prev = cw->next = NULL;
    cw->finalized = true;
    /* Closing waits for the client's callbacks: no dispatcher of it may
     * wait for this thread meanwhile. */
    feeds_release_client(h, cw);
    natsio_client_close(cw->client);
    client_release(cw);
}

napi_value client_wrap_new(napi_env env, natsio_client *c) {
    hub *h = get_hub(env);
    client_wrap *cw = calloc(1, sizeof *cw);
    if (!cw) {
        natsio_client_free(c);
        throw_status(env, NATSIO_ERR_INTERNAL, "out of memory");
        return NULL;
    }
    cw->client = c;
    live_count(LIVE_CLIENT, 1);
    cw->hub = h;
    cw->refs = 1;
    hub_retain(h);
    cw->next = h->clients;
    if (cw->next) cw->next->prev = cw;
    h->clients = cw;
    napi_value ext;
    if (napi_create_external(env, cw, client_finalize, NULL, &ext) != napi_ok) {
        client_finalize(env, cw, NULL);
        napi_throw_error(env, NULL, "natsio addon: napi_create_external failed");
        return NULL;
    }
    return ext;
}

napi_value wrap_client(napi_env env, natsio_client *c, client_wrap *cw) {
    (void)cw; /* a client is its own owner */
    return client_wrap_new(env, c);
}

client_wrap *get_client(napi_env env, napi_value v) {
    void *p = NULL;
    if (napi_get_value_external(env, v, &p) != napi_ok || !p) {
        napi_throw_type_error(env, NULL, "not a natsio connection handle");
        return NULL;
    }
    return p;
}

/* ------------------------------------------------------------------ */
/* asynchronous errors and lifecycle events                             */

typedef struct event_cb_data {
    hub *hub;
    uint32_t conn_id;
} event_cb_data;

static void on_client_error(void *user_data, natsio_status status, const char *text, uint64_t sid,
                            const char *subject) {
    event_cb_data *d = user_data;
    hub_event *e = calloc(1, sizeof *e);
    if (!e) return;
    e->kind = HEV_ERROR;
    e->target = d->conn_id;
    e->status = status;
    e->text = dup_str(text);
    e->sid = sid;
    e->subject = dup_str(subject);
    hub_post(d->hub, e);
}

/* Lifecycle events take the same path: posted, then emitted in order. */
static void on_client_event(void *user_data, natsio_event_kind kind, natsio_status status, const char *text) {
    event_cb_data *d = user_data;
    hub_event *e = calloc(1, sizeof *e);
    if (!e) return;
    e->kind = HEV_CONN;
    e->target = d->conn_id;
    e->status = status;
    e->conn_kind = (int32_t)kind;
    e->text = dup_str(text);
    hub_post(d->hub, e);
}

/* Log lines too: posted, then handed to the connection's logger in order. */
static void on_client_log(void *user_data, natsio_log_level level, const char *message) {
    event_cb_data *d = user_data;
    hub_event *e = calloc(1, sizeof *e);
    if (!e) return;
    e->kind = HEV_LOG;
    e->target = d->conn_id;
    e->status = (int32_t)level;
    e->text = dup_str(message);
    hub_post(d->hub, e);
}

static void release_event_cb(void *user_data) {
    event_cb_data *d = user_data;
    hub_release(d->hub);
    free(d);
}

/* ------------------------------------------------------------------ */
/* options                                                              */

/* One string option; false with a pending exception. */
static bool apply_str(napi_env env, natsio_options *o, napi_value js, const char *name,
                      natsio_status (*set)(natsio_options *, const char *)) {
    char *s;
    if (!get_opt_string(env, prop(env, js, name), &s)) return false;
    if (!s) return true;
    int32_t st = set(o, s);
    free(s);
    return !throw_if_failed(env, st);
}

static bool apply_i64(napi_env env, natsio_options *o, napi_value js, const char *name,
                      natsio_status (*set)(natsio_options *, int64_t)) {
    int64_t v = get_i64(env, prop(env, js, name), INT64_MIN);
    return v == INT64_MIN || !throw_if_failed(env, set(o, v));
}

static bool apply_bool(napi_env env, natsio_options *o, napi_value js, const char *name,
                       natsio_status (*set)(natsio_options *, bool)) {
    bool b;
    return !get_opt_bool(env, prop(env, js, name), &b) || !throw_if_failed(env, set(o, b));
}

/* Reconnect, auth and TLS options, already normalized by index.js. */
static bool apply_survival_options(napi_env env, natsio_options *o, napi_value js) {
    bool b;
    int64_t v, w;
    if (!apply_bool(env, o, js, "allowReconnect", natsio_options_set_allow_reconnect) ||
        !apply_i64(env, o, js, "maxReconnectAttempts", natsio_options_set_max_reconnect_attempts))
        return false;
    v = get_i64(env, prop(env, js, "reconnectWaitMs"), INT64_MIN);
    w = get_i64(env, prop(env, js, "reconnectWaitMaxMs"), INT64_MIN);
    if (v != INT64_MIN && w != INT64_MIN && throw_if_failed(env, natsio_options_set_reconnect_wait(o, v, w)))
        return false;
    v = get_i64(env, prop(env, js, "reconnectJitterMs"), INT64_MIN);
    w = get_i64(env, prop(env, js, "reconnectJitterTlsMs"), INT64_MIN);
    if (v != INT64_MIN && w != INT64_MIN && throw_if_failed(env, natsio_options_set_reconnect_jitter(o, v, w)))
        return false;
    if (!apply_i64(env, o, js, "reconnectBufSize", natsio_options_set_reconnect_buf_size) ||
        !apply_bool(env, o, js, "noRandomize", natsio_options_set_no_randomize) ||
        !apply_bool(env, o, js, "ignoreDiscoveredServers", natsio_options_set_ignore_discovered_servers) ||
        !apply_bool(env, o, js, "retryOnFailedConnect", natsio_options_set_retry_on_failed_connect) ||
        !apply_bool(env, o, js, "ignoreAuthErrorAbort", natsio_options_set_ignore_auth_error_abort) ||
        !apply_str(env, o, js, "nkeySeed", natsio_options_set_nkey_seed) ||
        !apply_str(env, o, js, "nkeyFile", natsio_options_set_nkey_file) ||
        !apply_str(env, o, js, "credsFile", natsio_options_set_credentials_file))
        return false;
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
        if (!apply_str(env, o, js, "tlsHostname", natsio_options_set_tls_hostname) ||
            !apply_bool(env, o, js, "tlsHandshakeFirst", natsio_options_set_tls_handshake_first))
            return false;
    }
    return true;
}

/* Error and event callbacks always; the log callback when index.js asked
 * for a level (logLevel, 1..5). */
static bool set_callbacks(napi_env env, natsio_options *o, uint32_t conn_id, int64_t log_level) {
    hub *h = get_hub(env);
    for (int i = 0; i < 3; i++) {
        if (i == 2 && log_level <= 0) break;
        event_cb_data *d = calloc(1, sizeof *d);
        if (!d) {
            throw_status(env, NATSIO_ERR_INTERNAL, "out of memory");
            return false;
        }
        d->hub = h;
        d->conn_id = conn_id;
        hub_retain(h);
        int32_t st = i == 0   ? natsio_options_set_error_callback(o, on_client_error, d, release_event_cb)
                     : i == 1 ? natsio_options_set_event_callback(o, on_client_event, d, release_event_cb)
                              : natsio_options_set_log(o, (int32_t)log_level, on_client_log, d, release_event_cb);
        if (st != NATSIO_OK) {
            release_event_cb(d);
            throw_if_failed(env, st);
            return false;
        }
    }
    return true;
}

static bool build_options(napi_env env, napi_value js, uint32_t conn_id, natsio_options *o) {
    napi_value servers = prop(env, js, "servers");
    bool is_arr = false;
    napi_is_array(env, servers, &is_arr);
    if (is_arr) {
        char **urls;
        size_t n;
        if (!get_string_array(env, servers, "servers", &urls, &n)) return false;
        int32_t st = natsio_options_set_servers(o, (const char *const *)urls, n);
        free_strings(urls, n);
        if (throw_if_failed(env, st)) return false;
    }
    if (!apply_str(env, o, js, "name", natsio_options_set_name) ||
        !apply_str(env, o, js, "inboxPrefix", natsio_options_set_inbox_prefix) ||
        !apply_str(env, o, js, "token", natsio_options_set_token))
        return false;
    {
        char *user = NULL, *pass = NULL;
        if (!get_opt_string(env, prop(env, js, "user"), &user)) return false;
        if (!get_opt_string(env, prop(env, js, "pass"), &pass)) {
            free(user);
            return false;
        }
        int32_t st = user ? natsio_options_set_user_password(o, user, pass) : NATSIO_OK;
        free(user);
        free(pass);
        if (throw_if_failed(env, st)) return false;
    }
    if (!apply_i64(env, o, js, "timeout", natsio_options_set_connect_timeout_ms)) return false;
    {
        bool b = false;
        if (get_opt_bool(env, prop(env, js, "noEcho"), &b) && throw_if_failed(env, natsio_options_set_echo(o, !b)))
            return false;
    }
    /* publish() runs on the JS thread, which also handles what the
     * subscriptions receive: a publish that waited for room in a full write
     * buffer would stop that too, and a subscription of the same thread
     * could overflow meanwhile. By default the buffer grows instead (as
     * nats.js's does); waitForWriteRoom: true bounds it and blocks. */
    if (throw_if_failed(env, natsio_options_set_wait_for_write_room(o, opt_flag(env, js, "waitForWriteRoom"))))
        return false;
    if (!apply_i64(env, o, js, "drainTimeout", natsio_options_set_drain_timeout_ms) ||
        !apply_i64(env, o, js, "flushTimeout", natsio_options_set_flush_timeout_ms) ||
        !apply_i64(env, o, js, "requestTimeout", natsio_options_set_request_timeout_ms) ||
        !apply_i64(env, o, js, "maxPendingSize", natsio_options_set_max_pending_size) ||
        !apply_i64(env, o, js, "maxControlLine", natsio_options_set_max_control_line))
        return false;
    int64_t iv = get_i64(env, prop(env, js, "pingInterval"), INT64_MIN);
    int64_t mo = get_i64(env, prop(env, js, "maxPingsOut"), INT64_MIN);
    if ((iv != INT64_MIN || mo != INT64_MIN) &&
        throw_if_failed(env, natsio_options_set_ping(o, iv == INT64_MIN ? 120000 : iv, mo == INT64_MIN ? 2 : (int32_t)mo)))
        return false;
    int64_t pm = get_i64(env, prop(env, js, "pendingMsgsLimit"), INT64_MIN);
    int64_t pb = get_i64(env, prop(env, js, "pendingBytesLimit"), INT64_MIN);
    if ((pm != INT64_MIN || pb != INT64_MIN) &&
        throw_if_failed(env, natsio_options_set_pending_limits(o, pm == INT64_MIN ? 65536 : pm,
                                                               pb == INT64_MIN ? 64 * 1024 * 1024 : pb)))
        return false;
    napi_value auth = prop(env, js, "authHandler");
    napi_valuetype auth_t = napi_undefined;
    napi_typeof(env, auth, &auth_t);
    if (auth_t == napi_function &&
        !set_auth_callbacks(env, o, auth, get_i64(env, prop(env, js, "authTimeoutMs"), 0)))
        return false;
    int64_t log_level = get_i64(env, prop(env, js, "logLevel"), 0);
    /* The server's monitoring shows this binding as itself. */
    if (throw_if_failed(env, natsio_options_set_client_lang(o, "natsio-node", natsio_version()))) return false;
    return set_callbacks(env, o, conn_id, log_level) && apply_survival_options(env, o, js);
}

/* connect(optionsObject, connId) -> Promise<external> */
EXPORT(js_connect) {
    ARGS(2);
    uint32_t conn_id = 0;
    napi_get_value_uint32(env, argv[1], &conn_id);
    natsio_options *o;
    if (throw_if_failed(env, natsio_options_new(&o))) return NULL;
    napi_value promise = NULL;
    if (build_options(env, argv[0], conn_id, o)) {
        natsio_token *tok = NULL;
        int32_t st = natsio_client_connect_async(o, &tok); /* copies the options */
        promise = op_track(env, st, tok, R_CLIENT, NULL, NULL);
    }
    natsio_options_free(o);
    return promise;
}

/* publish(client, subject, data, reply|null, headers|null, respond): only
 * buffers; with respond true, `subject` is a reply subject and the
 * response is written at once when the writer is idle
 * (natsio_client_respond), not batched. */
EXPORT(js_publish) {
    ARGS(6);
    client_wrap *cw = get_client(env, argv[0]);
    if (!cw) return NULL;
    char *subject = NULL, *reply = NULL;
    const void *data;
    size_t len;
    natsio_headers *hd = NULL;
    if (get_opt_string(env, argv[1], &subject) && get_bytes(env, argv[2], &data, &len) &&
        get_opt_string(env, argv[3], &reply) && get_headers(env, argv[4], &hd)) {
        if (!subject) {
            throw_status(env, NATSIO_ERR_NULL_ARGUMENT, "subject is required");
        } else {
            bool respond = false;
            napi_get_value_bool(env, argv[5], &respond); /* false when not a boolean */
            int32_t st = respond             ? natsio_client_respond(cw->client, subject, hd, data, len)
                         : (reply || hd) ? natsio_client_publish_with(cw->client, subject, reply, hd, data, len)
                                         : natsio_client_publish(cw->client, subject, data, len);
            throw_if_failed(env, st);
        }
    }
    free(subject);
    free(reply);
    natsio_headers_free(hd);
    return NULL;
}

/* releaseFeeds(client): from now on nothing of this client is wanted by
 * JS: its dispatchers must not wait for JS, or a close (which waits for
 * them) could not end. Called before client_close. */
EXPORT(js_release_feeds) {
    ARGS(1);
    client_wrap *cw = get_client(env, argv[0]);
    if (cw) feeds_release_client(cw->hub, cw);
    return NULL;
}

EXPORT(js_stats) {
    ARGS(1);
    client_wrap *cw = get_client(env, argv[0]);
    if (!cw) return NULL;
    natsio_client_stats s;
    if (throw_if_failed(env, natsio_client_get_stats(cw->client, &s))) return NULL;
    napi_value r;
    napi_create_object(env, &r);
    set_u64(env, r, "inMsgs", s.in_msgs);
    set_u64(env, r, "outMsgs", s.out_msgs);
    set_u64(env, r, "inBytes", s.in_bytes);
    set_u64(env, r, "outBytes", s.out_bytes);
    set_u64(env, r, "reconnects", s.reconnects);
    set_u64(env, r, "errors", s.errors);
    return r;
}
