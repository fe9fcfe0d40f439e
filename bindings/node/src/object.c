/* Object Store: buckets, objects, chunked reads and writes, watches.
 *
 * Every call that talks to the server is its `_async` form and a promise
 * (op.c). Buckets, infos, readers and writers are js_handles (js.c): a C
 * handle is freed once JS closed it (or it was collected) and no operation
 * started on it is in flight. A read is one token per chunk
 * (natsio_obj_reader_next_async), a write one token per piece handed over
 * (natsio_obj_writer_write_async, which completes once the writer accepted
 * it): the event loop never waits, and a writer that has 8 MiB of chunks
 * awaiting acks holds its promise back, which is the backpressure of the
 * JS Writable. Watches are feeds (feed.c, FEED_OBJ_WATCHER). */
#include "internal.h"

#include <stdlib.h>

void obj_handle_free(int kind, void *obj) {
    switch (kind) {
    case JSH_OBJ: natsio_obj_free(obj); break;
    case JSH_OBJ_INFO: natsio_obj_info_free(obj); break;
    case JSH_OBJ_READER: natsio_obj_reader_free(obj); break;
    case JSH_OBJ_WRITER: natsio_obj_writer_free(obj); break; /* unfinished: aborted in the background */
    default: break;
    }
}

/* [handle, name, description|null, bucket, nuid, size, chunks, digest,
 * deleted, mtimeNs (bigint), flatHeaders|null, metadataJson, isLink,
 * linkBucket|null, linkName|null, maxChunkSize, revision], or true for a
 * watcher's initial-values marker. Takes `info` over. */
napi_value obj_info_take_js(napi_env env, natsio_obj_info *info) {
    napi_value arr, v;
    if (natsio_obj_info_is_initial_done(info)) {
        natsio_obj_info_free(info);
        return boolean(env, true);
    }
    napi_create_array_with_length(env, 17, &arr);
    set_elem(env, arr, 1, str_or_null(env, natsio_obj_info_name(info)));
    set_elem(env, arr, 2, str_or_null(env, natsio_obj_info_description(info)));
    set_elem(env, arr, 3, str_or_null(env, natsio_obj_info_bucket(info)));
    set_elem(env, arr, 4, str_or_null(env, natsio_obj_info_nuid(info)));
    set_elem(env, arr, 5, num(env, (double)natsio_obj_info_size(info)));
    set_elem(env, arr, 6, num(env, (double)natsio_obj_info_chunks(info)));
    set_elem(env, arr, 7, str_or_null(env, natsio_obj_info_digest(info)));
    set_elem(env, arr, 8, boolean(env, natsio_obj_info_deleted(info)));
    napi_create_bigint_int64(env, natsio_obj_info_mtime_ns(info), &v);
    set_elem(env, arr, 9, v);
    set_elem(env, arr, 10, headers_to_js(env, natsio_obj_info_headers(info)));
    set_elem(env, arr, 11, str_or_null(env, natsio_obj_info_metadata_json(info)));
    set_elem(env, arr, 12, boolean(env, natsio_obj_info_is_link(info)));
    set_elem(env, arr, 13, str_or_null(env, natsio_obj_info_link_bucket(info)));
    set_elem(env, arr, 14, str_or_null(env, natsio_obj_info_link_name(info)));
    set_elem(env, arr, 15, num(env, (double)natsio_obj_info_max_chunk_size(info)));
    set_elem(env, arr, 16, num(env, (double)natsio_obj_info_revision(info)));
    /* Last: the handle owns the info the strings above were read from. */
    napi_value ext = jsh_wrap_obj(env, JSH_OBJ_INFO, info, NULL);
    if (!ext) return NULL;
    set_elem(env, arr, 0, ext);
    return arr;
}

/* A borrowed info, cloned for JS (a failed clone throws). */
napi_value obj_info_to_js(napi_env env, const natsio_obj_info *info) {
    natsio_obj_info *copy = NULL;
    if (throw_if_failed(env, natsio_obj_info_clone(info, &copy))) return NULL;
    return obj_info_take_js(env, copy);
}

/* [bucket, description|null, ttlNs, storage, replicas, size, sealed,
 * compression, metadataJson, streamInfoJson] */
napi_value obj_status_to_js(napi_env env, const natsio_obj_status *s) {
    napi_value arr;
    napi_create_array_with_length(env, 10, &arr);
    set_elem(env, arr, 0, str_or_null(env, natsio_obj_status_bucket(s)));
    set_elem(env, arr, 1, str_or_null(env, natsio_obj_status_description(s)));
    set_elem(env, arr, 2, num(env, (double)natsio_obj_status_ttl_ns(s)));
    set_elem(env, arr, 3, str_or_null(env, natsio_obj_status_storage(s)));
    set_elem(env, arr, 4, num(env, (double)natsio_obj_status_replicas(s)));
    set_elem(env, arr, 5, num(env, (double)natsio_obj_status_size(s)));
    set_elem(env, arr, 6, boolean(env, natsio_obj_status_sealed(s)));
    set_elem(env, arr, 7, boolean(env, natsio_obj_status_compression(s)));
    set_elem(env, arr, 8, str_or_null(env, natsio_obj_status_metadata_json(s)));
    set_elem(env, arr, 9, str_or_null(env, natsio_obj_status_stream_info_json(s)));
    return arr;
}

napi_value wrap_obj(napi_env env, natsio_obj *obj, client_wrap *cw) {
    return jsh_wrap_obj(env, JSH_OBJ, obj, cw);
}

napi_value wrap_obj_writer(napi_env env, natsio_obj_writer *w, client_wrap *cw) {
    return jsh_wrap_obj(env, JSH_OBJ_WRITER, w, cw);
}

/* [reader handle, info] */
napi_value wrap_obj_reader(napi_env env, natsio_obj_reader *r, client_wrap *cw) {
    napi_value info = obj_info_to_js(env, natsio_obj_reader_info(r));
    if (!info) {
        natsio_obj_reader_free(r);
        return NULL;
    }
    napi_value ext = jsh_wrap_obj(env, JSH_OBJ_READER, r, cw);
    if (!ext) return NULL;
    napi_value v;
    napi_create_array_with_length(env, 2, &v);
    set_elem(env, v, 0, ext);
    set_elem(env, v, 1, info);
    return v;
}

/* An object read's next chunk as a Buffer; its (verified) end is null. */
napi_value obj_chunk_value(napi_env env, natsio_token *t, int32_t *st) {
    const void *data = NULL;
    size_t len = 0;
    napi_value v;
    int32_t cs = natsio_token_obj_chunk(t, &data, &len);
    if (cs == NATSIO_DONE) {
        napi_get_null(env, &v);
        return v;
    }
    if ((*st = cs) != NATSIO_OK) return NULL;
    void *copy;
    napi_create_buffer_copy(env, len, data, &copy, &v);
    return v;
}

/* ------------------------------------------------------------------ */
/* buckets                                                              */

/* ------------------------------------------------------------------ */
/* writing                                                              */

/* ------------------------------------------------------------------ */
/* reading and objects                                                  */

/* objReaderNext(reader) -> Promise<Buffer|null>: the next piece, null at
 * the end once size, chunk count and digest were verified. */
EXPORT(js_obj_reader_next) {
    ARGS(1);
    js_handle *h = get_jsh(env, argv[0], JSH_OBJ_READER);
    if (!h) return NULL;
    natsio_token *tok = NULL;
    int32_t st = natsio_obj_reader_next_async(h->obj, &tok);
    return op_track_with(env, st, tok, obj_chunk_value, h, NULL);
}

/* objAddLink(obj, name, targetInfo) -> Promise<info> */
EXPORT(js_obj_add_link) {
    ARGS(3);
    js_handle *h = get_jsh(env, argv[0], JSH_OBJ);
    if (!h) return NULL;
    char *name = NULL;
    if (!get_req_string(env, argv[1], "object name", &name)) return NULL;
    js_handle *target = get_jsh(env, argv[2], JSH_OBJ_INFO);
    if (!target) {
        free(name);
        return NULL;
    }
    natsio_token *tok = NULL;
    int32_t st = natsio_obj_add_link_async(h->obj, name, target->obj, &tok);
    free(name);
    return op_track(env, st, tok, R_OBJ_INFO, h, NULL);
}

