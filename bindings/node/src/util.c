/* node-api helpers: arguments, errors, and conversions to JS values. */
#include "internal.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static _Atomic int64_t live_handles[LIVE_KINDS];
static _Atomic int64_t live_feeds[FEED_KIND_END];

void live_count(int kind, int delta) {
    atomic_fetch_add_explicit(&live_handles[kind], delta, memory_order_relaxed);
}

void live_count_feed(int feed_kind, int delta) {
    atomic_fetch_add_explicit(&live_feeds[feed_kind], delta, memory_order_relaxed);
}

/* liveHandles(): {clients, jetstream, kv, jsMsgs, objectStores,
 * objectInfos, objectReaders, objectWriters, feeds: {<iterator type>:
 * n}}, the C handles not freed yet (index.js names the feeds). */
EXPORT(js_live_handles) {
    (void)info;
    static const char *const names[LIVE_KINDS] = {"clients",      "jetstream",   "kv",            "jsMsgs",
                                                  "objectStores", "objectInfos", "objectReaders", "objectWriters"};
    napi_value r, feeds, v;
    CHECK_NAPI(env, napi_create_object(env, &r));
    for (int k = 0; k < LIVE_KINDS; k++) {
        napi_create_int64(env, atomic_load_explicit(&live_handles[k], memory_order_relaxed), &v);
        napi_set_named_property(env, r, names[k], v);
    }
    CHECK_NAPI(env, napi_create_object(env, &feeds));
    for (int k = 1; k < FEED_KIND_END; k++) {
        napi_create_int64(env, atomic_load_explicit(&live_feeds[k], memory_order_relaxed), &v);
        napi_set_named_property(env, feeds, FEED_KINDS[k].name, v);
    }
    napi_set_named_property(env, r, "feeds", feeds);
    return r;
}

char *dup_str(const char *s) {
    if (!s) return NULL;
    size_t n = strlen(s);
    char *d = malloc(n + 1);
    if (d) memcpy(d, s, n + 1);
    return d;
}

napi_value undefined_value(napi_env env) {
    napi_value v;
    napi_get_undefined(env, &v);
    return v;
}

err_data last_err_data(void) {
    err_data d;
    d.code = natsio_last_error_code();
    d.err_code = natsio_last_error_err_code();
    d.revision = natsio_last_error_revision();
    return d;
}

/* The error value of `status` (the JS layer's class for it), with the
 * error data `d` (NULL: none): makeError(status, detail, apiCode, errCode,
 * revision), zeros meaning none. */
napi_value make_error_data(napi_env env, int32_t status, const char *detail, const err_data *d) {
    hub *h = get_hub(env);
    napi_value fn, args[5], err = NULL;
    if (h && h->make_error_fn && napi_get_reference_value(env, h->make_error_fn, &fn) == napi_ok && fn) {
        napi_create_int32(env, status, &args[0]);
        napi_create_string_utf8(env, detail ? detail : "", NAPI_AUTO_LENGTH, &args[1]);
        napi_create_int32(env, d ? d->code : 0, &args[2]);
        napi_create_int32(env, d ? d->err_code : 0, &args[3]);
        napi_create_double(env, d ? (double)d->revision : 0, &args[4]);
        if (napi_call_function(env, undefined_value(env), fn, 5, args, &err) == napi_ok) return err;
    }
    napi_value msg;
    napi_create_string_utf8(env, natsio_status_str(status), NAPI_AUTO_LENGTH, &msg);
    napi_create_error(env, NULL, msg, &err);
    return err;
}

napi_value make_error(napi_env env, int32_t status, const char *detail) {
    return make_error_data(env, status, detail, NULL);
}

/* The one place a failure of the library becomes a JS error: this
 * thread's last error text and data (natsio_last_error and its
 * accessors), read right after the failing call. */
napi_value make_last_error(napi_env env, int32_t status) {
    err_data d = last_err_data();
    return make_error_data(env, status, natsio_last_error(), &d);
}

void throw_status(napi_env env, int32_t status, const char *detail) {
    napi_throw(env, make_error(env, status, detail));
}

bool throw_if_failed(napi_env env, int32_t status) {
    if (status == NATSIO_OK) return false;
    napi_throw(env, make_last_error(env, status));
    return true;
}

bool exception_pending(napi_env env) {
    bool pending = false;
    napi_is_exception_pending(env, &pending);
    return pending;
}

/* A JS string into a new malloc'ed buffer; NULL for null/undefined. */
bool get_opt_string(napi_env env, napi_value v, char **out) {
    napi_valuetype t;
    *out = NULL;
    if (!v || napi_typeof(env, v, &t) != napi_ok) return false;
    if (t == napi_null || t == napi_undefined) return true;
    if (t != napi_string) {
        napi_throw_type_error(env, NULL, "expected a string");
        return false;
    }
    size_t len;
    napi_get_value_string_utf8(env, v, NULL, 0, &len);
    char *s = malloc(len + 1);
    if (!s) return false;
    napi_get_value_string_utf8(env, v, s, len + 1, &len);
    *out = s;
    return true;
}

/* A required string argument: TypeError naming it when not a string. */
bool get_req_string(napi_env env, napi_value v, const char *what, char **out) {
    napi_valuetype t = napi_undefined;
    *out = NULL;
    if (v) napi_typeof(env, v, &t);
    if (t != napi_string) {
        char msg[128];
        snprintf(msg, sizeof msg, "%s must be a string", what);
        napi_throw_type_error(env, NULL, msg);
        return false;
    }
    return get_opt_string(env, v, out);
}

int64_t get_i64(napi_env env, napi_value v, int64_t dflt) {
    napi_valuetype t;
    if (!v || napi_typeof(env, v, &t) != napi_ok) return dflt;
    int64_t r = dflt;
    if (t == napi_number) {
        napi_get_value_int64(env, v, &r);
    } else if (t == napi_bigint) { /* ns times come as bigints */
        bool lossless = false;
        napi_get_value_bigint_int64(env, v, &r, &lossless);
        if (!lossless) throw_status(env, NATSIO_ERR_INVALID_ARGUMENT, "a bigint argument is out of range");
    }
    return r;
}

double get_f64(napi_env env, napi_value v, double dflt) {
    napi_valuetype t;
    double r = dflt;
    if (v && napi_typeof(env, v, &t) == napi_ok && t == napi_number) napi_get_value_double(env, v, &r);
    return r;
}

/* An unsigned 64-bit integer from a number or bigint. *present is false for
 * null/undefined. Returns false with a pending TypeError otherwise. */
bool get_u64(napi_env env, napi_value v, const char *what, uint64_t *out, bool *present) {
    napi_valuetype t = napi_undefined;
    *present = false;
    if (v) napi_typeof(env, v, &t);
    if (t == napi_undefined || t == napi_null) return true;
    if (t == napi_bigint) {
        bool lossless = false;
        napi_get_value_bigint_uint64(env, v, out, &lossless);
        if (lossless) {
            *present = true;
            return true;
        }
    } else if (t == napi_number) {
        double d;
        napi_get_value_double(env, v, &d);
        if (d >= 0 && d < 18446744073709551616.0 && d == (double)(uint64_t)d) {
            *out = (uint64_t)d;
            *present = true;
            return true;
        }
    }
    char msg[128];
    snprintf(msg, sizeof msg, "%s must be a non-negative integer", what);
    napi_throw_type_error(env, NULL, msg);
    return false;
}

bool get_required_u64(napi_env env, napi_value v, const char *what, uint64_t *out) {
    bool present = false;
    if (!get_u64(env, v, what, out, &present)) return false;
    if (present) return true;
    char msg[128];
    snprintf(msg, sizeof msg, "%s must be a non-negative integer", what);
    napi_throw_type_error(env, NULL, msg);
    return false;
}

bool get_required_uint(napi_env env, napi_value v, const char *what, uint64_t max, uint64_t *out) {
    if (!get_required_u64(env, v, what, out)) return false;
    if (*out <= max) return true;
    char msg[128];
    snprintf(msg, sizeof msg, "%s must be at most %llu", what, (unsigned long long)max);
    throw_status(env, NATSIO_ERR_INVALID_ARGUMENT, msg);
    return false;
}

/* A boolean option: true when present (value in *out). */
bool get_opt_bool(napi_env env, napi_value v, bool *out) {
    napi_valuetype t;
    if (!v || napi_typeof(env, v, &t) != napi_ok || t != napi_boolean) return false;
    napi_get_value_bool(env, v, out);
    return true;
}

/* obj.name === true */
bool opt_flag(napi_env env, napi_value obj, const char *name) {
    bool b = false;
    return get_opt_bool(env, prop(env, obj, name), &b) && b;
}

bool is_object(napi_env env, napi_value v) {
    napi_valuetype t = napi_undefined;
    if (v) napi_typeof(env, v, &t);
    return t == napi_object;
}

napi_value prop(napi_env env, napi_value obj, const char *name) {
    napi_value v = NULL;
    if (!is_object(env, obj)) {
        napi_get_undefined(env, &v);
        return v;
    }
    napi_get_named_property(env, obj, name, &v);
    return v;
}

/* Borrowed bytes of a Buffer / Uint8Array (JS normalizes strings first). */
bool get_bytes(napi_env env, napi_value v, const void **data, size_t *len) {
    bool is_ta = false;
    *data = NULL;
    *len = 0;
    napi_valuetype t = napi_undefined;
    if (v) napi_typeof(env, v, &t);
    if (t == napi_undefined || t == napi_null) return true;
    napi_is_typedarray(env, v, &is_ta);
    if (!is_ta) {
        napi_throw_type_error(env, NULL, "data must be a Uint8Array, Buffer or string");
        return false;
    }
    napi_typedarray_type tt;
    size_t count, offset;
    void *p;
    napi_value ab;
    napi_get_typedarray_info(env, v, &tt, &count, &p, &ab, &offset);
    if (tt != napi_uint8_array && tt != napi_uint8_clamped_array && tt != napi_int8_array) {
        napi_throw_type_error(env, NULL, "data must be a byte array");
        return false;
    }
    *data = p;
    *len = count;
    return true;
}

/* natsio headers from a flat JS array [name, value, ...] (null: none). */
bool get_headers(napi_env env, napi_value v, natsio_headers **out) {
    *out = NULL;
    napi_valuetype t = napi_undefined;
    if (v) napi_typeof(env, v, &t);
    if (t == napi_undefined || t == napi_null) return true;
    uint32_t n;
    if (napi_get_array_length(env, v, &n) != napi_ok) {
        napi_throw_type_error(env, NULL, "headers must be a flat array");
        return false;
    }
    natsio_headers *hd;
    if (throw_if_failed(env, natsio_headers_new(&hd))) return false;
    for (uint32_t i = 0; i + 1 < n; i += 2) {
        napi_value kv, vv;
        char *k = NULL, *val = NULL;
        napi_get_element(env, v, i, &kv);
        napi_get_element(env, v, i + 1, &vv);
        if (!get_opt_string(env, kv, &k) || !get_opt_string(env, vv, &val) || !k || !val) {
            free(k);
            free(val);
            natsio_headers_free(hd);
            if (!exception_pending(env)) napi_throw_type_error(env, NULL, "header names and values must be strings");
            return false;
        }
        int32_t st = natsio_headers_add(hd, k, val);
        free(k);
        free(val);
        if (st != NATSIO_OK) {
            natsio_headers_free(hd);
            throw_if_failed(env, st);
            return false;
        }
    }
    *out = hd;
    return true;
}

bool get_string_array(napi_env env, napi_value v, const char *what, char ***out, size_t *n) {
    *out = NULL;
    *n = 0;
    napi_valuetype t = napi_undefined;
    if (v) napi_typeof(env, v, &t);
    if (t == napi_undefined || t == napi_null) return true;
    bool is_arr = false;
    napi_is_array(env, v, &is_arr);
    char msg[128];
    snprintf(msg, sizeof msg, "%s must be an array of strings", what);
    if (!is_arr) {
        napi_throw_type_error(env, NULL, msg);
        return false;
    }
    uint32_t len;
    napi_get_array_length(env, v, &len);
    char **s = calloc(len ? len : 1, sizeof *s);
    if (!s) return false;
    for (uint32_t i = 0; i < len; i++) {
        napi_value e;
        napi_get_element(env, v, i, &e);
        napi_valuetype et = napi_undefined;
        napi_typeof(env, e, &et);
        if (et != napi_string || !get_opt_string(env, e, &s[i])) {
            free_strings(s, i);
            if (!exception_pending(env)) napi_throw_type_error(env, NULL, msg);
            return false;
        }
    }
    *out = s;
    *n = len;
    return true;
}

void free_strings(char **s, size_t n) {
    if (!s) return;
    for (size_t i = 0; i < n; i++) free(s[i]);
    free(s);
}

/* A header block as [name, value, name, value, ...], or null; the array's
 * `statusDescription` property holds the text beside an inline status, and
 * `malformed` (true) says corrupt lines were skipped. */
napi_value headers_to_js(napi_env env, const natsio_headers *hd) {
    napi_value v;
    if (!hd) {
        napi_get_null(env, &v);
        return v;
    }
    size_t n = natsio_headers_len(hd);
    napi_create_array_with_length(env, n * 2, &v);
    for (size_t i = 0; i < n; i++) {
        const char *k, *val;
        if (natsio_headers_entry(hd, i, &k, &val) != NATSIO_OK) break;
        napi_value kv, vv;
        napi_create_string_utf8(env, k, NAPI_AUTO_LENGTH, &kv);
        napi_create_string_utf8(env, val, NAPI_AUTO_LENGTH, &vv);
        napi_set_element(env, v, (uint32_t)(i * 2), kv);
        napi_set_element(env, v, (uint32_t)(i * 2 + 1), vv);
    }
    const char *description = natsio_headers_status_description(hd);
    if (description) {
        napi_value dv;
        napi_create_string_utf8(env, description, NAPI_AUTO_LENGTH, &dv);
        napi_set_named_property(env, v, "statusDescription", dv);
    }
    if (natsio_headers_malformed(hd)) {
        napi_value t;
        napi_get_boolean(env, true, &t);
        napi_set_named_property(env, v, "malformed", t);
    }
    return v;
}

/* Every field of m in one library call; all empty if m is NULL. */
static natsio_msg_fields msg_fields(const natsio_msg *m) {
    natsio_msg_fields f;
    if (natsio_msg_get_fields(m, &f) != NATSIO_OK) memset(&f, 0, sizeof f);
    return f;
}

/* [subject, reply, data, flatHeaders|null, status, sid] */
napi_value msg_to_js(napi_env env, const natsio_msg *m) {
    natsio_msg_fields f = msg_fields(m);
    napi_value arr, v;
    napi_create_array_with_length(env, 6, &arr);
    napi_create_string_utf8(env, f.subject ? f.subject : "", f.subject_len, &v);
    napi_set_element(env, arr, 0, v);
    if (f.reply)
        napi_create_string_utf8(env, f.reply, f.reply_len, &v);
    else
        napi_get_null(env, &v);
    napi_set_element(env, arr, 1, v);
    void *copy;
    napi_create_buffer_copy(env, f.data_len, f.data, &copy, &v);
    napi_set_element(env, arr, 2, v);
    napi_set_element(env, arr, 3, headers_to_js(env, f.headers));
    napi_create_int32(env, f.status, &v);
    napi_set_element(env, arr, 4, v);
    napi_create_double(env, (double)f.sid, &v);
    napi_set_element(env, arr, 5, v);
    return arr;
}

/* A batch of messages for ONE JS call, with as few node-api calls per
 * message as possible (per message, node-api costs more than the rest of
 * the delivery path together):
 *   meta      Int32Array, 4 per message: subject index, end offset of its
 *             data in `data`, inline status, extras index (-1: none)
 *   data      one Buffer with every payload, copied once
 *   subjects  the distinct subjects of runs of equal subjects
 *   extras    [reply|null, flatHeaders|null] pairs, only for the messages
 *             that have a reply subject or headers (undefined if none)
 * The JS layer slices `data` per message. */
void batch_to_js(napi_env env, void *const *msgs, uint32_t n, napi_value out[4]) {
    size_t total = 0;
    for (uint32_t i = 0; i < n; i++) total += natsio_msg_data_len(msgs[i]);
    void *meta_mem = NULL;
    napi_value meta_ab;
    napi_create_arraybuffer(env, (size_t)n * META_INTS * sizeof(int32_t), &meta_mem, &meta_ab);
    napi_create_typedarray(env, napi_int32_array, (size_t)n * META_INTS, meta_ab, 0, &out[0]);
    uint8_t *data_mem = NULL;
    napi_create_buffer(env, total, (void **)&data_mem, &out[1]);
    napi_create_array(env, &out[2]);
    napi_get_undefined(env, &out[3]);
    int32_t *meta = meta_mem;
    const char *last_subject = NULL;
    int32_t subject_index = -1;
    int32_t extras_count = 0;
    size_t offset = 0;
    size_t last_subject_len = 0;
    for (uint32_t i = 0; i < n; i++) {
        natsio_msg_fields f = msg_fields(msgs[i]);
        const char *subject = f.subject ? f.subject : "";
        if (!last_subject || f.subject_len != last_subject_len || memcmp(subject, last_subject, f.subject_len) != 0) {
            napi_value sv;
            napi_create_string_utf8(env, subject, f.subject_len, &sv);
            napi_set_element(env, out[2], (uint32_t)++subject_index, sv);
            last_subject = subject;
            last_subject_len = f.subject_len;
        }
        size_t len = f.data_len;
        if (len) memcpy(data_mem + offset, f.data, len);
        offset += len;
        const char *reply = f.reply;
        const natsio_headers *hd = f.headers;
        int32_t extras_index = -1;
        if (reply || hd) {
            if (extras_count == 0) napi_create_array(env, &out[3]);
            napi_value rv;
            if (reply)
                napi_create_string_utf8(env, reply, f.reply_len, &rv);
            else
                napi_get_null(env, &rv);
            napi_set_element(env, out[3], (uint32_t)(extras_count * 2), rv);
            napi_set_element(env, out[3], (uint32_t)(extras_count * 2 + 1), headers_to_js(env, hd));
            extras_index = extras_count++;
        }
        meta[i * META_INTS + 0] = subject_index;
        meta[i * META_INTS + 1] = (int32_t)offset;
        meta[i * META_INTS + 2] = f.status;
        meta[i * META_INTS + 3] = extras_index;
        /* Subscription ids count the connection's subscriptions from 1. */
        meta[i * META_INTS + 4] = (int32_t)f.sid;
    }
}

napi_value str_or_null(napi_env env, const char *s) {
    napi_value v;
    if (s)
        napi_create_string_utf8(env, s, NAPI_AUTO_LENGTH, &v);
    else
        napi_get_null(env, &v);
    return v;
}

void set_elem(napi_env env, napi_value arr, uint32_t i, napi_value v) { napi_set_element(env, arr, i, v); }

napi_value num(napi_env env, double d) {
    napi_value v;
    napi_create_double(env, d, &v);
    return v;
}

napi_value boolean(napi_env env, bool b) {
    napi_value v;
    napi_get_boolean(env, b, &v);
    return v;
}

void set_u64(napi_env env, napi_value obj, const char *name, uint64_t v) {
    napi_value x;
    napi_create_double(env, (double)v, &x);
    napi_set_named_property(env, obj, name, x);
}

napi_value iter_stats_to_js(napi_env env, const natsio_iter_stats *s) {
    napi_value r;
    napi_create_object(env, &r);
    set_u64(env, r, "delivered", s->delivered);
    set_u64(env, r, "dropped", s->dropped);
    set_u64(env, r, "pendingMsgs", s->pending_items);
    set_u64(env, r, "pendingBytes", s->pending_bytes);
    set_u64(env, r, "stalls", s->stalls);
    return r;
}

/* {stream, seq, duplicate, domain?, val?, batch?, count?}: the optional
 * fields only when the ack carries them (val: a counter stream's value as
 * decimal text; batch and count: the commit of an atomic batch). */
napi_value pub_ack_to_js(napi_env env, const natsio_pub_ack *ack) {
    napi_value r, v;
    napi_create_object(env, &r);
    napi_create_string_utf8(env, natsio_pub_ack_stream(ack), NAPI_AUTO_LENGTH, &v);
    napi_set_named_property(env, r, "stream", v);
    set_u64(env, r, "seq", natsio_pub_ack_seq(ack));
    napi_get_boolean(env, natsio_pub_ack_duplicate(ack), &v);
    napi_set_named_property(env, r, "duplicate", v);
    const char *domain = natsio_pub_ack_domain(ack);
    if (domain) {
        napi_create_string_utf8(env, domain, NAPI_AUTO_LENGTH, &v);
        napi_set_named_property(env, r, "domain", v);
    }
    const char *val = natsio_pub_ack_val(ack);
    if (val) {
        napi_create_string_utf8(env, val, NAPI_AUTO_LENGTH, &v);
        napi_set_named_property(env, r, "val", v);
    }
    const char *batch = natsio_pub_ack_batch_id(ack);
    if (batch) {
        napi_create_string_utf8(env, batch, NAPI_AUTO_LENGTH, &v);
        napi_set_named_property(env, r, "batch", v);
        set_u64(env, r, "count", natsio_pub_ack_batch_size(ack));
    }
    return r;
}

/* [bucket, key, value, revision, operation, createdMs, delta] */
napi_value kv_entry_to_js(napi_env env, const natsio_kv_entry *e) {
    napi_value arr, v;
    napi_create_array_with_length(env, 7, &arr);
    napi_create_string_utf8(env, natsio_kv_entry_bucket(e), NAPI_AUTO_LENGTH, &v);
    napi_set_element(env, arr, 0, v);
    napi_create_string_utf8(env, natsio_kv_entry_key(e), NAPI_AUTO_LENGTH, &v);
    napi_set_element(env, arr, 1, v);
    void *copy;
    napi_create_buffer_copy(env, natsio_kv_entry_value_len(e), natsio_kv_entry_value(e), &copy, &v);
    napi_set_element(env, arr, 2, v);
    napi_create_double(env, (double)natsio_kv_entry_revision(e), &v);
    napi_set_element(env, arr, 3, v);
    napi_create_int32(env, (int32_t)natsio_kv_entry_operation(e), &v);
    napi_set_element(env, arr, 4, v);
    napi_create_double(env, (double)(natsio_kv_entry_created_ns(e) / 1000000), &v);
    napi_set_element(env, arr, 5, v);
    napi_create_double(env, (double)natsio_kv_entry_delta(e), &v);
    napi_set_element(env, arr, 6, v);
    return arr;
}

/* [subject, seq, timeMs, data, flatHeaders|null]: a stored message, from
 * a natsio_stored_msg (stored_msg_to_js) or from the copy a batch read's
 * feed keeps (feed.c). */
napi_value stored_fields_to_js(napi_env env, const char *subject, uint64_t seq, int64_t time_ns, const char *data,
                               size_t len, const natsio_headers *hd) {
    napi_value arr, v;
    napi_create_array_with_length(env, 5, &arr);
    napi_create_string_utf8(env, subject, NAPI_AUTO_LENGTH, &v);
    napi_set_element(env, arr, 0, v);
    napi_create_double(env, (double)seq, &v);
    napi_set_element(env, arr, 1, v);
    napi_create_double(env, (double)(time_ns / 1000000), &v);
    napi_set_element(env, arr, 2, v);
    void *copy;
    napi_create_buffer_copy(env, len, data, &copy, &v);
    napi_set_element(env, arr, 3, v);
    napi_set_element(env, arr, 4, headers_to_js(env, hd));
    return arr;
}

napi_value stored_msg_to_js(napi_env env, const natsio_stored_msg *m) {
    return stored_fields_to_js(env, natsio_stored_msg_subject(m), natsio_stored_msg_seq(m), natsio_stored_msg_time_ns(m),
                               natsio_stored_msg_data(m), natsio_stored_msg_data_len(m), natsio_stored_msg_headers(m));
}
