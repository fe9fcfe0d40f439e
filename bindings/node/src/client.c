/*
 * Clients: connect (its options and callbacks), publish and stats. The
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

/* The connection's options: an external owning a natsio_options (in a
 * box, freed with it or by the connect that used it), which index.js fills
 * with the generated setters (options_set_*, gen/verbs.c) and hands to
 * connect. */
static const napi_type_tag OPTIONS_TAG = {0x6e617473696f4f70ULL, 0x74696f6e73303031ULL};

static void options_finalize(napi_env env, void *data, void *hint) {
    (void)env;
    (void)hint;
    natsio_options **box = data;
    natsio_options_free(*box);
    free(box);
}

natsio_options *get_options(napi_env env, napi_value v) {
    bool tagged = false;
    void *p = NULL;
    if (!v || napi_check_object_type_tag(env, v, &OPTIONS_TAG, &tagged) != napi_ok || !tagged ||
        napi_get_value_external(env, v, &p) != napi_ok || !p) {
        napi_throw_type_error(env, NULL, "not natsio connection options");
        return NULL;
    }
    natsio_options *o = *(natsio_options **)p;
    if (!o) throw_status(env, NATSIO_ERR_ILLEGAL_STATE, "the options were used by a connect");
    return o;
}

/* optionsNew() -> external: the library's defaults. */
EXPORT(js_options_new) {
    natsio_options **box = calloc(1, sizeof *box);
    if (!box) {
        throw_status(env, NATSIO_ERR_INTERNAL, "out of memory");
        return NULL;
    }
    if (throw_if_failed(env, natsio_options_new(box))) {
        free(box);
        return NULL;
    }
    napi_value ext;
    if (napi_create_external(env, box, options_finalize, NULL, &ext) != napi_ok) {
        options_finalize(env, box, NULL);
        napi_throw_error(env, NULL, "natsio addon: napi_create_external failed");
        return NULL;
    }
    napi_type_tag_object(env, ext, &OPTIONS_TAG);
    return ext;
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

/* connect(options, connId, logLevel, authHandler|null, authTimeoutMs, authKind) ->
 * Promise<external>: the callbacks (this connection's events, errors, log
 * lines and authentication, each towards JS through the hub) are set here,
 * then the connect runs on a library thread. */
EXPORT(js_connect) {
    ARGS(6);
    natsio_options *o = get_options(env, argv[0]);
    if (!o) return NULL;
    uint32_t conn_id = 0;
    napi_get_value_uint32(env, argv[1], &conn_id);
    napi_valuetype auth_t = napi_undefined;
    napi_typeof(env, argv[3], &auth_t);
    if (auth_t == napi_function &&
        !set_auth_callbacks(env, o, argv[3], get_i64(env, argv[4], 0), (int32_t)get_i64(env, argv[5], 0)))
        return NULL;
    if (!set_callbacks(env, o, conn_id, get_i64(env, argv[2], 0))) return NULL;
    natsio_token *tok = NULL;
    int32_t st = natsio_client_connect_async(o, &tok); /* copies the options */
    /* Used up: their callbacks' references go with them now, not at GC. */
    void *box = NULL;
    napi_get_value_external(env, argv[0], &box);
    natsio_options_free(o);
    *(natsio_options **)box = NULL;
    return op_track(env, st, tok, R_CLIENT, NULL, NULL);
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
    set_u64(env, r, "serverPings", s.server_pings);
    return r;
}

/* serverPool(client) -> [{url, reconnects, didConnect, discovered}]: the
 * pool in the order its servers are tried (natsio_client_server_pool), a
 * snapshot; readable after close too. */
EXPORT(js_server_pool) {
    ARGS(1);
    client_wrap *cw = get_client(env, argv[0]);
    if (!cw) return NULL;
    natsio_server_list *list = NULL;
    if (throw_if_failed(env, natsio_client_server_pool(cw->client, &list))) return NULL;
    size_t n = natsio_server_list_count(list);
    napi_value arr;
    napi_create_array_with_length(env, n, &arr);
    for (size_t i = 0; i < n; i++) {
        const natsio_server *s = natsio_server_list_get(list, i);
        napi_value r;
        napi_create_object(env, &r);
        napi_set_named_property(env, r, "url", str_or_null(env, natsio_server_url(s)));
        set_u64(env, r, "reconnects", natsio_server_reconnects(s));
        napi_set_named_property(env, r, "didConnect", boolean(env, natsio_server_did_connect(s)));
        napi_set_named_property(env, r, "discovered", boolean(env, natsio_server_is_discovered(s)));
        set_elem(env, arr, (uint32_t)i, r);
    }
    natsio_server_list_free(list);
    return arr;
}
