/*
 * Services (ADR-32): the handles index.js's Service, ServiceGroup and
 * ServiceMsg hold, and the service's callbacks.
 *
 *   an endpoint is a feed (feed.c, FEED_ENDPOINT) read in pull mode as a
 *   subscription is: the JS thread takes the requests from the library's
 *   queue in batches; each is [request handle, msg_to_js fields]. The
 *   handler runs on the JS thread, and index.js reports a failed one with
 *   service_request_fail.
 *   the error callback is posted to the hub (HEV_SVC_ERROR), so it reaches
 *   JS in order on the JS thread, also when service_request_fail called it
 *   there.
 *   the stats callback asks JS (auth.c's bounded wait on the library
 *   thread, see set_stats_callback).
 *
 * The verbs on these handles (info, stats, reset, stop, respond, ...) are
 * generated (gen/verbs.c) through service_of and service_request_of.
 */
#include "internal.h"

#include <stdlib.h>
#include <string.h>

static const napi_type_tag SERVICE_TAG = {0x6e617473696f5376ULL, 0x6353657276696365ULL};
static const napi_type_tag GROUP_TAG = {0x6e617473696f5376ULL, 0x6347726f75703031ULL};
static const napi_type_tag REQUEST_TAG = {0x6e617473696f5376ULL, 0x6352657175657374ULL};

typedef struct service_wrap {
    natsio_service *svc;
    client_wrap *cw; /* what its endpoints' feeds belong to */
} service_wrap;

/* An answered request's handle is freed at once (index.js asks): its
 * processing time ended, and its message need not wait for the GC. */
typedef struct request_box {
    natsio_service_request *req;
} request_box;

static void *tagged(napi_env env, napi_value v, const napi_type_tag *tag, const char *what) {
    bool ok = false;
    void *p = NULL;
    napi_valuetype t = napi_undefined;
    napi_typeof(env, v, &t);
    if (t == napi_external && napi_check_object_type_tag(env, v, tag, &ok) == napi_ok && ok)
        napi_get_value_external(env, v, &p);
    if (!p) napi_throw_type_error(env, NULL, what);
    return p;
}

static napi_value external(napi_env env, void *p, napi_finalize fin, const napi_type_tag *tag) {
    napi_value ext;
    if (napi_create_external(env, p, fin, NULL, &ext) != napi_ok) {
        fin(env, p, NULL);
        napi_throw_error(env, NULL, "natsio addon: napi_create_external failed");
        return NULL;
    }
    napi_type_tag_object(env, ext, tag);
    return ext;
}

/* ---- services ---- */

static void service_finalize(napi_env env, void *data, void *hint) {
    (void)env;
    (void)hint;
    service_wrap *w = data;
    natsio_service_free(w->svc); /* index.js keeps a running service reachable */
    if (w->cw) client_release(w->cw);
    free(w);
}

napi_value wrap_service(napi_env env, natsio_service *x, struct client_wrap *cw) {
    service_wrap *w = calloc(1, sizeof *w);
    if (!w) {
        natsio_service_free(x);
        throw_status(env, NATSIO_ERR_INTERNAL, "out of memory");
        return NULL;
    }
    w->svc = x;
    w->cw = cw;
    if (cw) client_retain(cw);
    return external(env, w, service_finalize, &SERVICE_TAG);
}

natsio_service *service_of(napi_env env, napi_value v) {
    service_wrap *w = tagged(env, v, &SERVICE_TAG, "not a natsio service handle");
    return w ? w->svc : NULL;
}

/* ---- groups ---- */

static void group_finalize(napi_env env, void *data, void *hint) {
    (void)env;
    (void)hint;
    natsio_service_group_free(data); /* its endpoints keep running */
}

/* The group of an argument: NULL for null/undefined (the service itself). */
static bool group_arg(napi_env env, napi_value v, natsio_service_group **out) {
    napi_valuetype t = napi_undefined;
    napi_typeof(env, v, &t);
    *out = NULL;
    if (t == napi_undefined || t == napi_null) return true;
    *out = tagged(env, v, &GROUP_TAG, "not a natsio service group handle");
    return *out != NULL;
}

/* serviceAddGroup(service, parent|null, configJson) -> group */
EXPORT(js_service_add_group) {
    ARGS(3);
    natsio_service *s = service_of(env, argv[0]);
    natsio_service_group *parent = NULL;
    char *json = NULL;
    napi_value ret = NULL;
    if (s && group_arg(env, argv[1], &parent) && get_req_string(env, argv[2], "config", &json)) {
        natsio_service_group *g = NULL;
        if (!throw_if_failed(env, natsio_service_add_group(s, parent, json, &g)))
            ret = external(env, g, group_finalize, &GROUP_TAG);
    }
    free(json);
    return ret;
}

/* serviceAddEndpoint(service, group|null, configJson) -> endpoint feed */
EXPORT(js_service_add_endpoint) {
    ARGS(3);
    service_wrap *w = tagged(env, argv[0], &SERVICE_TAG, "not a natsio service handle");
    natsio_service_group *group = NULL;
    char *json = NULL;
    napi_value ret = NULL;
    if (w && group_arg(env, argv[1], &group) && get_req_string(env, argv[2], "config", &json)) {
        natsio_endpoint *ep = NULL;
        if (!throw_if_failed(env, natsio_service_add_endpoint(w->svc, group, json, &ep)))
            ret = feed_wrap(env, FEED_ENDPOINT, ep, w->cw);
    }
    free(json);
    return ret;
}

/* ---- requests ---- */

static void request_finalize(napi_env env, void *data, void *hint) {
    (void)env;
    (void)hint;
    request_box *b = data;
    natsio_service_request_free(b->req);
    free(b);
}

napi_value service_request_take_js(napi_env env, natsio_service_request *req) {
    request_box *b = malloc(sizeof *b);
    if (!b) {
        natsio_service_request_free(req);
        throw_status(env, NATSIO_ERR_INTERNAL, "out of memory");
        return NULL;
    }
    b->req = req;
    napi_value arr, ext = external(env, b, request_finalize, &REQUEST_TAG);
    if (!ext) return NULL;
    napi_create_array_with_length(env, 2, &arr);
    napi_set_element(env, arr, 0, ext);
    napi_set_element(env, arr, 1, msg_to_js(env, natsio_service_request_msg(req)));
    return arr;
}

napi_value service_request_to_js(napi_env env, const natsio_service_request *x) {
    natsio_service_request *own = NULL;
    if (throw_if_failed(env, natsio_service_request_clone(x, &own))) return NULL;
    return service_request_take_js(env, own);
}

natsio_service_request *service_request_of(napi_env env, napi_value v) {
    request_box *b = tagged(env, v, &REQUEST_TAG, "not a natsio service request handle");
    if (b && !b->req) {
        throw_status(env, NATSIO_ERR_ILLEGAL_STATE, "the request's handle is released");
        return NULL;
    }
    return b ? b->req : NULL;
}

/* serviceRequestRelease(request): frees the handle now (answered). */
EXPORT(js_service_request_release) {
    ARGS(1);
    request_box *b = tagged(env, argv[0], &REQUEST_TAG, "not a natsio service request handle");
    if (b) {
        natsio_service_request_free(b->req);
        b->req = NULL;
    }
    return NULL;
}

/* ---- callbacks ---- */

typedef struct error_target {
    hub *hub;
    uint32_t id;
} error_target;

static void on_service_error(void *user_data, const char *endpoint, const char *subject, int32_t code,
                             const char *description) {
    error_target *t = user_data;
    hub_event *e = calloc(1, sizeof *e);
    if (!e) return;
    e->kind = HEV_SVC_ERROR;
    e->target = t->id;
    e->status = code;
    e->text = dup_str(endpoint);
    e->subject = dup_str(subject);
    e->detail = dup_str(description);
    hub_post(t->hub, e);
}

static void release_error_target(void *user_data) {
    error_target *t = user_data;
    hub_release(t->hub);
    free(t);
}

/* serviceSetHandlers(service, targetId, statsHandler|null, statsTimeoutMs):
 * errors go to dispatch(targetId, EV_SVC_ERROR, code, endpoint, subject,
 * description); statsHandler(kind, "name subject", request) is asked for
 * each endpoint's STATS data (auth.c). */
EXPORT(js_service_set_handlers) {
    ARGS(4);
    natsio_service *s = service_of(env, argv[0]);
    if (!s) return NULL;
    uint32_t id = 0;
    napi_get_value_uint32(env, argv[1], &id);
    error_target *t = calloc(1, sizeof *t);
    if (!t) {
        throw_status(env, NATSIO_ERR_INTERNAL, "out of memory");
        return NULL;
    }
    t->hub = get_hub(env);
    hub_retain(t->hub);
    t->id = id;
    int32_t st = natsio_service_set_error_callback(s, on_service_error, t, release_error_target);
    if (st != NATSIO_OK) {
        release_error_target(t);
        throw_if_failed(env, st);
        return NULL;
    }
    napi_valuetype ty = napi_undefined;
    napi_typeof(env, argv[2], &ty);
    if (ty == napi_function) set_stats_callback(env, s, argv[2], get_i64(env, argv[3], 0));
    return NULL;
}
