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

/* kvPut(kv, mode 0 put | 1 create | 2 update, key, value, last, ttlS) ->
 * Promise<revision>; a create with ttlS (whole seconds or NATSIO_TTL_NEVER;
 * 0: none) stores a revision that expires */
EXPORT(js_kv_put) {
    ARGS(6);
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
            int64_t ttl = get_i64(env, argv[5], 0);
            int32_t st = mode == 0   ? natsio_kv_put_async(h->kv, key, data, len, &tok)
                         : mode == 2 ? natsio_kv_update_async(h->kv, key, data, len, last, &tok)
                         : ttl != 0  ? natsio_kv_create_with_ttl_async(h->kv, key, data, len, ttl, &tok)
                                     : natsio_kv_create_async(h->kv, key, data, len, &tok);
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

/* kvDelete(kv, purge, key, last|undefined, ttlS) -> Promise<revision of the
 * marker>; a purge with ttlS (as kvPut's) writes a marker that expires */
EXPORT(js_kv_delete) {
    ARGS(5);
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
        int64_t ttl = get_i64(env, argv[4], 0);
        int32_t st = !purge     ? natsio_kv_delete_async(h->kv, key, lp, &tok)
                     : ttl != 0 ? natsio_kv_purge_with_ttl_async(h->kv, key, lp, ttl, &tok)
                                : natsio_kv_purge_async(h->kv, key, lp, &tok);
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

/* [bucket, values, history, ttlNs, bytes, storage, replicas, compression,
 * description|null, metadataJson, limitMarkerTtlNs, streamInfoJson] */
napi_value kv_status_to_js(napi_env env, const natsio_kv_bucket_status *s) {
    napi_value arr;
    napi_create_array_with_length(env, 12, &arr);
    set_elem(env, arr, 0, str_or_null(env, natsio_kv_bucket_status_bucket(s)));
    set_elem(env, arr, 1, num(env, (double)natsio_kv_bucket_status_values(s)));
    set_elem(env, arr, 2, num(env, (double)natsio_kv_bucket_status_history(s)));
    set_elem(env, arr, 3, num(env, (double)natsio_kv_bucket_status_ttl_ns(s)));
    set_elem(env, arr, 4, num(env, (double)natsio_kv_bucket_status_bytes(s)));
    set_elem(env, arr, 5, str_or_null(env, natsio_kv_bucket_status_storage(s)));
    set_elem(env, arr, 6, num(env, (double)natsio_kv_bucket_status_replicas(s)));
    set_elem(env, arr, 7, boolean(env, natsio_kv_bucket_status_is_compressed(s)));
    set_elem(env, arr, 8, str_or_null(env, natsio_kv_bucket_status_description(s)));
    set_elem(env, arr, 9, str_or_null(env, natsio_kv_bucket_status_metadata_json(s)));
    set_elem(env, arr, 10, num(env, (double)natsio_kv_bucket_status_limit_marker_ttl_ns(s)));
    set_elem(env, arr, 11, str_or_null(env, natsio_kv_bucket_status_stream_info_json(s)));
    return arr;
}

/* kvNames(js) -> Promise<string[]> */
EXPORT(js_kv_names) { return js_ctx_call(env, info, natsio_js_kv_names_async, R_STRING_LIST); }

/* kvStatuses(js) -> Promise<array of kv_status_to_js> */
EXPORT(js_kv_statuses) { return js_ctx_call(env, info, natsio_js_kv_statuses_async, R_KV_STATUS_LIST); }

/* kvStatus(kv) -> Promise<kv_status_to_js> */
EXPORT(js_kv_status) { return kv_call(env, info, natsio_kv_get_status_async, R_KV_STATUS); }

/* kvPurgeDeletes(kv, olderThanMs: 0 default 30 min | < 0 every marker) ->
 * Promise<messages removed> */
EXPORT(js_kv_purge_deletes) {
    ARGS(2);
    js_handle *h = get_jsh(env, argv[0], JSH_KV);
    if (!h) return NULL;
    natsio_token *tok = NULL;
    int32_t st = natsio_kv_purge_deletes_async(h->kv, get_i64(env, argv[1], 0), &tok);
    return op_track(env, st, tok, R_U64, h, NULL);
}

/* kvKeys(kv) -> Promise<string[]> */
EXPORT(js_kv_keys) { return kv_call(env, info, natsio_kv_keys_async, R_STRING_LIST); }

/* kvKeysFiltered(kv, filters: string[]|null) -> Promise<string[]> (bad
 * filters throw at once) */
EXPORT(js_kv_keys_filtered) {
    ARGS(2);
    js_handle *h = get_jsh(env, argv[0], JSH_KV);
    if (!h) return NULL;
    char **filters = NULL;
    size_t n = 0;
    if (!get_string_array(env, argv[1], "key filter", &filters, &n)) return NULL;
    natsio_token *tok = NULL;
    int32_t st = natsio_kv_keys_filtered_async(h->kv, (const char *const *)filters, n, &tok);
    free_strings(filters, n);
    return op_track(env, st, tok, R_STRING_LIST, h, NULL);
}

/* kvListKeys(kv, filters: string[]|null) -> feed (started by the JS layer) */
EXPORT(js_kv_list_keys) {
    ARGS(2);
    js_handle *h = get_jsh(env, argv[0], JSH_KV);
    if (!h) return NULL;
    char **filters = NULL;
    size_t n = 0;
    if (!get_string_array(env, argv[1], "key filter", &filters, &n)) return NULL;
    natsio_kv_key_lister *lister = NULL;
    napi_value result = NULL;
    if (!throw_if_failed(env, natsio_kv_list_keys(h->kv, (const char *const *)filters, n, &lister)))
        result = feed_wrap(env, FEED_KV_KEYS, lister, h->cw);
    free_strings(filters, n);
    return result;
}

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
 * metaOnly, updatesOnly, resumeFromRevision}) -> Promise<feed> (started by
 * the JS layer) */
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
        bool has_resume = false;
        if (!get_u64(env, prop(env, argv[2], "resumeFromRevision"), "resumeFromRevision", &wo.resume_from_revision,
                     &has_resume)) {
            free_strings(keys, n);
            return NULL;
        }
    }
    natsio_token *tok = NULL;
    int32_t st = natsio_kv_watch_async(h->kv, (const char *const *)keys, n, &wo, &tok);
    free_strings(keys, n);
    return op_track(env, st, tok, R_KV_WATCHER, h, h->cw);
}
