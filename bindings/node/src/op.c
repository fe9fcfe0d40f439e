/*
 * Operations: every call that waits on the server is its C `_async` form,
 * called on the JS thread, plus a promise. The token is registered on the
 * hub's completion queue with the op as its tag; the JS thread, woken by
 * the hub's doorbell, reads the typed result off the token and settles the
 * promise.
 * Nothing waits anywhere but in the library, so any number of operations
 * can be in flight without a thread each.
 */
#include "internal.h"

#include <stdlib.h>
#include <time.h>

int64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

void op_free(op *o) {
    /* A pending operation only reaches here at teardown (its event was
     * dropped); the token is complete by then, so freeing it is final. */
    natsio_token_free(o->token);
    free(o);
}

static void reject_now(napi_env env, napi_deferred d, int32_t st, const char *detail) {
    napi_reject_deferred(env, d, make_error(env, st, detail));
}

/* Rejects with the failure the library just reported on this thread. */
static void reject_last(napi_env env, napi_deferred d, int32_t st) {
    napi_reject_deferred(env, d, make_last_error(env, st));
}

static napi_value op_start(napi_env env, int32_t st, natsio_token *tok, int result, present_fn present, js_handle *h,
                           client_wrap *cw) {
    hub *hb = get_hub(env);
    napi_value promise;
    napi_deferred d;
    if (napi_create_promise(env, &d, &promise) != napi_ok) {
        natsio_token_free(tok);
        napi_throw_error(env, NULL, "natsio addon: could not create a promise");
        return NULL;
    }
    if (st != NATSIO_OK) {
        reject_last(env, d, st);
        return promise;
    }
    op *o = calloc(1, sizeof *o);
    if (!o) {
        natsio_token_free(tok);
        reject_now(env, d, NATSIO_ERR_INTERNAL, "out of memory");
        return promise;
    }
    o->hub = hb;
    o->token = tok;
    o->deferred = d;
    o->result = result;
    o->present = present;
    o->h = h;
    o->cw = cw;
    if (h) h->inflight++;
    if (cw) client_retain(cw);
    hb->pending++;
    hub_update_ref(env, hb);
    int32_t rs = natsio_token_complete_to(tok, hb->completions, (uint64_t)(uintptr_t)o);
    if (rs == NATSIO_OK) {
        hub_op_started(env, hb);
    } else {
        napi_value err = make_last_error(env, rs);
        napi_reject_deferred(env, d, err);
        o->deferred = NULL;
        if (h) jsh_release_op(h);
        if (cw) client_release(cw);
        hb->pending--;
        hub_update_ref(env, hb);
        op_free(o);
    }
    return promise;
}

napi_value op_track(napi_env env, int32_t st, natsio_token *tok, int result, js_handle *h, client_wrap *cw) {
    return op_start(env, st, tok, result, NULL, h, cw);
}

napi_value op_track_with(napi_env env, int32_t st, natsio_token *tok, present_fn present, js_handle *h,
                         client_wrap *cw) {
    return op_start(env, st, tok, 0, present, h, cw);
}

void op_settle(napi_env env, op *o) {
    hub *hb = o->hub;
    int32_t st = natsio_token_status(o->token);
    const char *detail = NULL;
    err_data data = {0, 0, 0};
    napi_value v = NULL;
    if (st == NATSIO_OK || (st == NATSIO_DONE && o->present)) {
        /* A presentation may make an end (DONE) a value. */
        st = NATSIO_OK;
        v = o->present ? o->present(env, o->token, &st) : gen_result_value(env, o, &st);
        if (st != NATSIO_OK) {
            detail = natsio_last_error();
            data = last_err_data();
        }
    } else {
        detail = natsio_last_error();
        data = last_err_data();
    }
    if (exception_pending(env)) {
        napi_value exc;
        napi_get_and_clear_last_exception(env, &exc);
        napi_reject_deferred(env, o->deferred, exc);
    } else if (st == NATSIO_OK && v) {
        napi_resolve_deferred(env, o->deferred, v);
    } else {
        napi_reject_deferred(env, o->deferred,
                             make_error_data(env, st == NATSIO_OK ? NATSIO_ERR_INTERNAL : st, detail, &data));
    }
    if (o->h) jsh_release_op(o->h);
    if (o->cw) client_release(o->cw);
    hb->pending--;
    op_free(o);
}
