/* Key-Value: the presentation of buckets and statuses in JS. The verbs'
 * glue is generated (gen/verbs.c); entries are util.c's kv_entry_to_js,
 * watches and key listings are feeds (feed.c). */
#include "internal.h"

napi_value wrap_kv(napi_env env, natsio_kv *kv, client_wrap *cw) {
    return jsh_wrap(env, JSH_KV, NULL, kv, cw);
}

/* [bucket, values, history, ttlNs, bytes, storage, replicas, compression,
 * description|null, metadataJson, limitMarkerTtlNs, streamInfoJson] */
napi_value kv_bucket_status_to_js(napi_env env, const natsio_kv_bucket_status *s) {
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

