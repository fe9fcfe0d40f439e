/* Key-Value: buckets (handles from js.c), entries and watches. Every call
 * is its `_async` form and a promise (op.c). */
#include "internal.h"

#include <stdlib.h>

/* kvOpen(js, mode 0 create | 1 update | 2 createOrUpdate | 3 bind,
 * configJson | bucket) -> Promise<external> */
EXPORT(js_kv_open) {
    ARGS(3);
    js_handle *h = get_jsh(env, argv[0], JSH_JS);
    if (!h) return NULL;
    int32_t mode = (int32_t)get_i64(env, argv[1], 0);
    char *s = NULL;
    if (!get_req_string(env, argv[2], mode == 3 ? "bucket" : "KV config", &s)) return NULL;
    natsio_token *tok = NULL;
    int32_t st = mode == 3 ? natsio_js_kv_bind_async(h->js, s, &tok) : natsio_js_kv_create_async(h->js, s, mode, &tok);
    free(s);
    return op_track(env, st, tok, R_KV, h, h->cw);
}

/* kvBucket(kv) -> string */
EXPORT(js_kv_bucket) {
    ARGS(1);
    js_handle *h = get_jsh(env, argv[0], JSH_KV);
    if (!h) return NULL;
    napi_value r;
    napi_create_string_utf8(env, natsio_kv_bucket(h->kv), NAPI_AUTO_LENGTH, &r);
    return r;
}

/* kvPut(kv, mode 0 put | 1 create | 2 update, key, value, last) -> Promise<revision> */
EXPORT(js_kv_put) {
    ARGS(5);
    js_handle *h = get_jsh(env, argv[0], JSH_KV);
    if (!h) return NULL;
    int mode = (int)get_i64(env, argv[1], 0);
    char *key = NULL;
    const void *data;
    size_t len;
    uint64_t last = 0;
    bool has_last = false;
    napi_value promise = NULL;
    if (get_req_string(env, argv[2], "key", &key) && get_bytes(env, argv[3], &data, &len) &&
        get_u64(env, argv[4], "last revision", &last, &has_last)) {
        if (mode == 2 && !has_last) {
            napi_throw_type_error(env, NULL, "last revision must be a non-negative integer");
        } else {
            natsio_token *tok = NULL;
            int32_t st = mode == 0   ? natsio_kv_put_async(h->kv, key, data, len, &tok)
                         : mode == 1 ? natsio_kv_create_async(h->kv, key, data, len, &tok)
                                     : natsio_kv_update_async(h->kv, key, data, len, last, &tok);
            promise = op_track(env, st, tok, R_U64, h, NULL);
        }
    }
    free(key);
    return promise;
}

/* kvGet(kv, key, revision|undefined) -> Promise<entry array> */
EXPORT(js_kv_get) {
    ARGS(3);
    js_handle *h = get_jsh(env, argv[0], JSH_KV);
    if (!h) return NULL;
    char *key = NULL;
    uint64_t rev = 0;
    bool has_rev = false;
    if (!get_req_string(env, argv[1], "key", &key)) return NULL;
    napi_value promise = NULL;
    if (get_u64(env, argv[2], "revision", &rev, &has_rev)) {
        natsio_token *tok = NULL;
        int32_t st = has_rev ? natsio_kv_get_revision_async(h->kv, key, rev, &tok) : natsio_kv_get_async(h->kv, key, &tok);
        promise = op_track(env, st, tok, R_KV_ENTRY, h, NULL);
    }
    free(key);
    return promise;
}

/* kvDelete(kv, purge, key, last|undefined) -> Promise<revision of the marker> */
EXPORT(js_kv_delete) {
    ARGS(4);
    js_handle *h = get_jsh(env, argv[0], JSH_KV);
    if (!h) return NULL;
    bool purge = false;
    napi_get_value_bool(env, argv[1], &purge);
    char *key = NULL;
    uint64_t last = 0;
    bool has_last = false;
    if (!get_req_string(env, argv[2], "key", &key)) return NULL;
    napi_value promise = NULL;
    if (get_u64(env, argv[3], "last revision", &last, &has_last)) {
        natsio_token *tok = NULL;
        const uint64_t *lp = has_last ? &last : NULL;
        int32_t st = purge ? natsio_kv_purge_async(h->kv, key, lp, &tok) : natsio_kv_delete_async(h->kv, key, lp, &tok);
        promise = op_track(env, st, tok, R_U64, h, NULL);
    }
    free(key);
    return promise;
}

static napi_value kv_call(napi_env env, napi_callback_info info,
                          natsio_status (*call)(const natsio_kv *, natsio_token **), int result) {
    ARGS(1);
    js_handle *h = get_jsh(env, argv[0], JSH_KV);
    if (!h) return NULL;
    natsio_token *tok = NULL;
    int32_t st = call(h->kv, &tok);
    return op_track(env, st, tok, result, h, NULL);
}

/* kvStatus(kv) -> Promise<string JSON> */
EXPORT(js_kv_status) { return kv_call(env, info, natsio_kv_status_async, R_STRING); }

/* kvKeys(kv) -> Promise<string[]> */
EXPORT(js_kv_keys) { return kv_call(env, info, natsio_kv_keys_async, R_STRING_LIST); }

/* kvHistory(kv, key) -> Promise<array of entries>, oldest first */
EXPORT(js_kv_history) {
    ARGS(2);
    js_handle *h = get_jsh(env, argv[0], JSH_KV);
    if (!h) return NULL;
    char *key = NULL;
    if (!get_req_string(env, argv[1], "key", &key)) return NULL;
    natsio_token *tok = NULL;
    int32_t st = natsio_kv_history_async(h->kv, key, &tok);
    free(key);
    return op_track(env, st, tok, R_KV_ENTRY_LIST, h, NULL);
}

/* kvWatch(kv, keys: string[]|null, {includeHistory, ignoreDeletes,
 * metaOnly, updatesOnly}) -> Promise<feed> (started by the JS layer) */
EXPORT(js_kv_watch) {
    ARGS(3);
    js_handle *h = get_jsh(env, argv[0], JSH_KV);
    if (!h) return NULL;
    char **keys = NULL;
    size_t n = 0;
    if (!get_string_array(env, argv[1], "key", &keys, &n)) return NULL;
    natsio_kv_watch_options wo;
    natsio_kv_watch_options_init(&wo);
    if (argc > 2 && is_object(env, argv[2])) {
        wo.include_history = opt_flag(env, argv[2], "includeHistory");
        wo.ignore_deletes = opt_flag(env, argv[2], "ignoreDeletes");
        wo.meta_only = opt_flag(env, argv[2], "metaOnly");
        wo.updates_only = opt_flag(env, argv[2], "updatesOnly");
    }
    natsio_token *tok = NULL;
    int32_t st = natsio_kv_watch_async(h->kv, (const char *const *)keys, n, &wo, &tok);
    free_strings(keys, n);
    return op_track(env, st, tok, R_KV_WATCHER, h, h->cw);
}
