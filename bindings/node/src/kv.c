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


/* A chain argument: an array of codec specs (numbers); one spec makes the
 * codec itself, several a chain. False with a pending exception. Value
 * specs: NATSIO_KV_VALUE_CODEC_* kinds, or ZLIB_SPEC + level + 1 for zlib
 * (index.js's valueCodecSpec). */
#define ZLIB_SPEC 16

static int32_t key_codec_of(uint32_t spec, natsio_kv_key_codec **out) {
    return natsio_kv_key_codec_new((int32_t)spec, out);
}

static int32_t value_codec_of(uint32_t spec, natsio_kv_value_codec **out) {
    if (spec >= ZLIB_SPEC) return natsio_kv_value_codec_zlib((int32_t)spec - ZLIB_SPEC - 1, out);
    return natsio_kv_value_codec_new((int32_t)spec, out);
}

#define CODEC_CHAIN(name, type, one, chain, free_fn)                                             \
    static bool name(napi_env env, napi_value specs, type **out) {                               \
        *out = NULL;                                                                             \
        napi_valuetype t;                                                                        \
        napi_typeof(env, specs, &t);                                                             \
        if (t == napi_null || t == napi_undefined) return true;                                  \
        uint32_t n = 0;                                                                          \
        if (napi_get_array_length(env, specs, &n) != napi_ok || n == 0 || n > 16) {              \
            throw_status(env, NATSIO_ERR_INVALID_ARGUMENT, "codec specs: 1 to 16 numbers");      \
            return false;                                                                        \
        }                                                                                        \
        type *parts[16] = {0};                                                                   \
        int32_t st = NATSIO_OK;                                                                  \
        for (uint32_t i = 0; i < n && st == NATSIO_OK; i++) {                                    \
            napi_value v;                                                                        \
            uint32_t spec = 0;                                                                   \
            napi_get_element(env, specs, i, &v);                                                 \
            if (napi_get_value_uint32(env, v, &spec) != napi_ok) {                               \
                for (uint32_t j = 0; j < i; j++) free_fn(parts[j]);                              \
                throw_status(env, NATSIO_ERR_INVALID_ARGUMENT, "codec specs: numbers");          \
                return false;                                                                    \
            }                                                                                    \
            st = one(spec, &parts[i]);                                                           \
        }                                                                                        \
        if (st == NATSIO_OK) {                                                                   \
            if (n == 1) {                                                                        \
                *out = parts[0];                                                                 \
                parts[0] = NULL;                                                                 \
            } else {                                                                             \
                st = chain((const type *const *)parts, n, out);                                  \
            }                                                                                    \
        }                                                                                        \
        for (uint32_t i = 0; i < n; i++) free_fn(parts[i]);                                      \
        return !throw_if_failed(env, st);                                                        \
    }

CODEC_CHAIN(key_codec_arg, natsio_kv_key_codec, key_codec_of, natsio_kv_key_codec_chain, natsio_kv_key_codec_free)
CODEC_CHAIN(value_codec_arg, natsio_kv_value_codec, value_codec_of, natsio_kv_value_codec_chain,
            natsio_kv_value_codec_free)

/* kvWithCodecs(kv, keySpecs|null, valueSpecs|null): a new KV handle on the
 * same bucket whose verbs go through the library's built-in codecs. */
EXPORT(js_kv_with_codecs) {
    ARGS(3);
    js_handle *h = get_jsh(env, argv[0], JSH_KV);
    if (!h) return NULL;
    natsio_kv_key_codec *kc = NULL;
    natsio_kv_value_codec *vc = NULL;
    if (!key_codec_arg(env, argv[1], &kc)) return NULL;
    if (!value_codec_arg(env, argv[2], &vc)) {
        natsio_kv_key_codec_free(kc);
        return NULL;
    }
    natsio_kv *kv = NULL;
    int32_t st = natsio_kv_with_codecs(h->kv, kc, vc, &kv);
    natsio_kv_key_codec_free(kc);
    natsio_kv_value_codec_free(vc);
    if (throw_if_failed(env, st)) return NULL;
    return wrap_kv(env, kv, h->cw);
}
