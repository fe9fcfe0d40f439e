/*
 * JetStream: the js_handles (contexts, KV and object handles, ordered
 * consumers, batches of consumed messages), acks and how a JetStream
 * message looks in JS. The verbs' glue is generated (gen/verbs.c), but for
 * publish, next and stream info, whose C calls are being reshaped (see
 * abi/gen_node.py's SKIP).
 *
 * Handles: a JetStream context, a bound KV bucket or a consumed message
 * (JsMsg, an owned natsio_msg) is a js_handle behind a type-tagged
 * external. Its C handle is freed once the JS side closed it (close() or
 * the finalizer) and no operation started on it is in flight, the struct
 * once the external is finalized too. So close() is deterministic, a second
 * close() does nothing, a call after close() fails with ILLEGAL_STATE, and a
 * late ack never touches a freed message.
 *
 * Every call that waits on the server is its `_async` form and a promise
 * (op.c); argument errors throw here, which the async JS wrappers turn
 * into rejections.
 */
#include "internal.h"

#include <stdlib.h>
#include <string.h>

static const napi_type_tag JS_HANDLE_TAG = {0x6e617473696f4a53ULL, 0x68616e646c653032ULL};

/* The liveHandles() kind of an Object Store handle. */
static int obj_live_kind(int kind) {
    switch (kind) {
    case JSH_OBJ: return LIVE_OBJ;
    case JSH_OBJ_INFO: return LIVE_OBJ_INFO;
    case JSH_OBJ_READER: return LIVE_OBJ_READER;
    default: return LIVE_OBJ_WRITER;
    }
}

static void jsh_maybe_free(js_handle *h) {
    if (h->inflight > 0) return;
    if (h->closed || h->finalized) {
        if (h->js) live_count(LIVE_JS, -1);
        if (h->kv) live_count(LIVE_KV, -1);
        for (uint32_t i = 0; i < h->msg_count; i++) {
            if (h->msgs[i]) live_count(LIVE_JS_MSG, -1);
            natsio_msg_free(h->msgs[i]);
        }
        free(h->msgs);
        h->msgs = NULL;
        h->msg_count = 0;
        if (h->obj) live_count(obj_live_kind(h->kind), -1);
        natsio_js_free(h->js);
        natsio_kv_free(h->kv);
        if (h->obj) obj_handle_free(h->kind, h->obj);
        natsio_ordered_consumer_free(h->oc);
        h->oc = NULL;
        h->js = NULL;
        h->kv = NULL;
        h->obj = NULL;
        if (h->cw) client_release(h->cw);
        h->cw = NULL;
    }
    if (h->finalized) free(h);
}

void jsh_release_op(js_handle *h) {
    h->inflight--;
    jsh_maybe_free(h);
}

static void jsh_finalize(napi_env env, void *data, void *hint) {
    (void)env;
    (void)hint;
    js_handle *h = data;
    h->finalized = true;
    jsh_maybe_free(h);
}

/* The external of a filled-in handle (freed, with what it owns, on failure). */
static napi_value jsh_external(napi_env env, js_handle *h) {
    napi_value ext;
    if (napi_create_external(env, h, jsh_finalize, NULL, &ext) != napi_ok) {
        h->finalized = true;
        jsh_maybe_free(h);
        napi_throw_error(env, NULL, "natsio addon: napi_create_external failed");
        return NULL;
    }
    napi_type_tag_object(env, ext, &JS_HANDLE_TAG);
    return ext;
}

napi_value jsh_wrap(napi_env env, int kind, natsio_js *js, natsio_kv *kv, client_wrap *cw) {
    js_handle *h = calloc(1, sizeof *h);
    if (!h) {
        natsio_js_free(js);
        natsio_kv_free(kv);
        throw_status(env, NATSIO_ERR_INTERNAL, "out of memory");
        return NULL;
    }
    h->kind = kind;
    h->js = js;
    h->kv = kv;
    if (js) live_count(LIVE_JS, 1);
    if (kv) live_count(LIVE_KV, 1);
    h->cw = cw;
    if (cw) client_retain(cw);
    return jsh_external(env, h);
}

/* Wraps an Object Store handle (see obj_handle_free for how it is freed). */
napi_value jsh_wrap_obj(napi_env env, int kind, void *obj, client_wrap *cw) {
    js_handle *h = calloc(1, sizeof *h);
    if (!h) {
        obj_handle_free(kind, obj);
        throw_status(env, NATSIO_ERR_INTERNAL, "out of memory");
        return NULL;
    }
    h->kind = kind;
    h->obj = obj;
    live_count(obj_live_kind(kind), 1);
    h->cw = cw;
    if (cw) client_retain(cw);
    return jsh_external(env, h);
}

js_handle *get_jsh(napi_env env, napi_value v, int kind) {
    static const char *const not_a[] = {"",
                                        "not a natsio JetStream handle",
                                        "not a natsio KV handle",
                                        "not a natsio JetStream message",
                                        "not a natsio object store handle",
                                        "not a natsio object info",
                                        "not a natsio object reader",
                                        "not a natsio object writer",
                                        "not a natsio ordered consumer"};
    static const char *const closed[] = {"",
                                         "the JetStream context is closed",
                                         "the KV bucket handle is closed",
                                         "the JetStream message is released",
                                         "the object store handle is closed",
                                         "the object info is released",
                                         "the object reader is closed",
                                         "the object writer is closed",
                                         "the ordered consumer is closed"};
    bool tagged = false;
    void *p = NULL;
    if (!v || napi_check_object_type_tag(env, v, &JS_HANDLE_TAG, &tagged) != napi_ok || !tagged ||
        napi_get_value_external(env, v, &p) != napi_ok || !p || ((js_handle *)p)->kind != kind) {
        napi_throw_type_error(env, NULL, not_a[kind]);
        return NULL;
    }
    js_handle *h = p;
    if (h->closed) {
        throw_status(env, NATSIO_ERR_ILLEGAL_STATE, closed[kind]);
        return NULL;
    }
    return h;
}

/* The names index of `md` in `names`, appending a triple when it differs
 * from the last one (a batch usually has one stream and consumer). */
static int32_t md_names_index(napi_env env, napi_value names, const natsio_js_msg_metadata *md,
                              const natsio_js_msg_metadata **last, int32_t *count) {
    const natsio_js_msg_metadata *l = *last;
    if (l && l->stream_len == md->stream_len && l->consumer_len == md->consumer_len &&
        l->domain_len == md->domain_len && (l->domain == NULL) == (md->domain == NULL) &&
        memcmp(l->stream, md->stream, md->stream_len) == 0 &&
        memcmp(l->consumer, md->consumer, md->consumer_len) == 0 &&
        (!md->domain || memcmp(l->domain, md->domain, md->domain_len) == 0))
        return *count - 1;
    napi_value v;
    uint32_t at = (uint32_t)*count * 3;
    napi_create_string_utf8(env, md->stream, md->stream_len, &v);
    napi_set_element(env, names, at, v);
    napi_create_string_utf8(env, md->consumer, md->consumer_len, &v);
    napi_set_element(env, names, at + 1, v);
    if (md->domain)
        napi_create_string_utf8(env, md->domain, md->domain_len, &v);
    else
        napi_get_null(env, &v);
    napi_set_element(env, names, at + 2, v);
    *last = md;
    return (*count)++;
}

napi_value js_msgs_to_js(napi_env env, natsio_msg **msgs, uint32_t n) {
    js_handle *h = calloc(1, sizeof *h);
    if (!h) {
        for (uint32_t i = 0; i < n; i++) natsio_msg_free(msgs[i]);
        free(msgs);
        throw_status(env, NATSIO_ERR_INTERNAL, "out of memory");
        return NULL;
    }
    h->kind = JSH_MSG;
    h->msgs = msgs;
    h->msg_count = n;
    live_count(LIVE_JS_MSG, n);
    napi_value out[7];
    if (!(out[0] = jsh_external(env, h))) return NULL;
    batch_to_js(env, (void *const *)msgs, n, &out[1]);
    /* Metadata read here, once per message, into numbers: a JsMsg's info
     * and redelivered need no call back into the addon. */
    void *md_mem = NULL;
    napi_value md_ab, v;
    napi_create_arraybuffer(env, (size_t)n * JS_MD_NUMS * sizeof(double), &md_mem, &md_ab);
    napi_create_typedarray(env, napi_float64_array, (size_t)n * JS_MD_NUMS, md_ab, 0, &out[5]);
    napi_create_array(env, &out[6]);
    double *d = md_mem;
    natsio_js_msg_metadata *mds = malloc((size_t)n * sizeof *mds);
    const natsio_js_msg_metadata *last = NULL;
    int32_t names = 0;
    for (uint32_t i = 0; i < n && mds; i++, d += JS_MD_NUMS) {
        natsio_js_msg_metadata *md = &mds[i];
        int32_t st = natsio_msg_js_metadata(msgs[i], md);
        d[0] = st;
        if (st != NATSIO_OK) continue; /* info asks jsMsgMetadata, which throws the error */
        d[1] = (double)md->num_delivered;
        d[2] = (double)md->stream_seq;
        d[3] = (double)md->consumer_seq;
        d[4] = (double)md->num_pending;
        d[5] = (double)(md->timestamp_ns / 1000000);
        d[6] = (double)(md->timestamp_ns % 1000000);
        d[7] = md_names_index(env, out[6], md, &last, &names);
    }
    if (!mds) /* every message's info asks jsMsgMetadata */
        for (uint32_t i = 0; i < n; i++) d[i * JS_MD_NUMS] = NATSIO_ERR_INTERNAL;
    free(mds);
    napi_create_array_with_length(env, 7, &v);
    for (uint32_t i = 0; i < 7; i++) napi_set_element(env, v, i, out[i]);
    return v;
}

napi_value wrap_js(napi_env env, natsio_js *js, client_wrap *cw) { return jsh_wrap(env, JSH_JS, js, NULL, cw); }

napi_value wrap_ordered_consumer(napi_env env, natsio_ordered_consumer *oc, client_wrap *cw) {
    js_handle *h = calloc(1, sizeof *h);
    if (!h) {
        natsio_ordered_consumer_free(oc);
        throw_status(env, NATSIO_ERR_INTERNAL, "out of memory");
        return NULL;
    }
    h->kind = JSH_ORDERED;
    h->oc = oc;
    h->cw = cw;
    if (cw) client_retain(cw);
    return jsh_external(env, h);
}

/* A pull consumer's next message: a batch of one (js_msgs_to_js). */
napi_value js_msg_value(napi_env env, natsio_token *t, int32_t *st) {
    natsio_msg *m = NULL;
    if ((*st = natsio_token_msg(t, &m)) != NATSIO_OK) return NULL;
    natsio_msg **one = malloc(sizeof *one);
    if (!one) {
        natsio_msg_free(m);
        *st = NATSIO_ERR_INTERNAL;
        return NULL;
    }
    one[0] = m;
    return js_msgs_to_js(env, one, 1);
}

/* A fetch's messages: one batch (js_msgs_to_js), [] when empty. */
napi_value js_msg_list_value(napi_env env, natsio_token *t, int32_t *st) {
    natsio_msg_list *l = NULL;
    if ((*st = natsio_token_msg_list(t, &l)) != NATSIO_OK) return NULL;
    size_t n = natsio_msg_list_count(l);
    natsio_msg **msgs = n ? calloc(n, sizeof *msgs) : NULL;
    if (n && !msgs) *st = NATSIO_ERR_INTERNAL;
    for (size_t i = 0; i < n && *st == NATSIO_OK; i++) *st = natsio_msg_clone(natsio_msg_list_get(l, i), &msgs[i]);
    natsio_msg_list_free(l);
    if (*st != NATSIO_OK) {
        for (size_t i = 0; msgs && i < n; i++) natsio_msg_free(msgs[i]);
        free(msgs);
        return NULL;
    }
    if (n == 0) {
        napi_value v;
        napi_create_array(env, &v);
        return v;
    }
    return js_msgs_to_js(env, msgs, (uint32_t)n);
}

/* jsClose(js) / kvClose(kv) / objClose(handle): frees the C handle once no
 * operation uses it. Closing twice is fine. */
EXPORT(js_jsh_close) {
    ARGS(1);
    bool tagged = false;
    void *p = NULL;
    if (napi_check_object_type_tag(env, argv[0], &JS_HANDLE_TAG, &tagged) != napi_ok || !tagged ||
        napi_get_value_external(env, argv[0], &p) != napi_ok || !p) {
        napi_throw_type_error(env, NULL, "not a natsio JetStream, KV or object store handle");
        return NULL;
    }
    js_handle *h = p;
    h->closed = true;
    jsh_maybe_free(h);
    return NULL;
}

/* Options of one publish, read from the flat object index.js builds. */
typedef struct pub_opts {
    natsio_headers *hd;
    char *msg_id, *exp_stream, *exp_subj_subject, *exp_last_msg_id;
    uint64_t last_seq, last_subj_seq;
    bool has_last_seq, has_last_subj_seq;
    natsio_js_publish_options c;
} pub_opts;

static void pub_opts_free(pub_opts *o) {
    natsio_headers_free(o->hd);
    free(o->msg_id);
    free(o->exp_stream);
    free(o->exp_subj_subject);
    free(o->exp_last_msg_id);
}

/* headers (flat array), msgId, expectStream, expectLastSequence,
 * expectLastSubjectSequence, expectLastSubjectSequenceSubject,
 * expectLastMsgId, ttl (s), timeout (ms), retryAttempts, retryWait (ms).
 * False with a pending exception. */
static bool read_pub_opts(napi_env env, napi_value v, pub_opts *o) {
    memset(o, 0, sizeof *o);
    natsio_js_publish_options_init(&o->c);
    if (!is_object(env, v)) return true;
    if (!get_headers(env, prop(env, v, "headers"), &o->hd) ||
        !get_opt_string(env, prop(env, v, "msgId"), &o->msg_id) ||
        !get_opt_string(env, prop(env, v, "expectStream"), &o->exp_stream) ||
        !get_opt_string(env, prop(env, v, "expectLastSubjectSequenceSubject"), &o->exp_subj_subject) ||
        !get_opt_string(env, prop(env, v, "expectLastMsgId"), &o->exp_last_msg_id) ||
        !get_u64(env, prop(env, v, "expectLastSequence"), "expect.lastSequence", &o->last_seq, &o->has_last_seq) ||
        !get_u64(env, prop(env, v, "expectLastSubjectSequence"), "expect.lastSubjectSequence", &o->last_subj_seq,
                 &o->has_last_subj_seq)) {
        pub_opts_free(o);
        return false;
    }
    o->c.headers = o->hd;
    o->c.msg_id = o->msg_id;
    o->c.expected_stream = o->exp_stream;
    o->c.expected_last_seq = o->has_last_seq ? &o->last_seq : NULL;
    o->c.expected_last_subject_seq = o->has_last_subj_seq ? &o->last_subj_seq : NULL;
    o->c.expected_last_subject_seq_subject = o->exp_subj_subject;
    o->c.expected_last_msg_id = o->exp_last_msg_id;
    o->c.ttl_s = get_i64(env, prop(env, v, "ttl"), 0);
    o->c.timeout_ms = get_i64(env, prop(env, v, "timeout"), 0);
    /* index.js checked both (an int32 count, NATSIO_PUBLISH_NO_RETRY for
     * none; a positive whole wait in ms); absent: 0, the library's
     * defaults (2 retries, 250 ms). */
    o->c.retry_attempts = (int32_t)get_i64(env, prop(env, v, "retryAttempts"), 0);
    o->c.retry_wait_ms = get_i64(env, prop(env, v, "retryWait"), 0);
    return true;
}

/* jsPublish(js, subject, data, opts) -> Promise<PubAck>: the synchronous
 * publish's token form (natsio_js_publish_request_async: no window, no
 * stall, "no responders" retried as in C); jsPublishAsync: the windowed
 * asynchronous publish. */
static napi_value publish(napi_env env, napi_callback_info info, bool sync) {
    ARGS(4);
    js_handle *h = get_jsh(env, argv[0], JSH_JS);
    if (!h) return NULL;
    char *subject = NULL;
    const void *data;
    size_t len;
    pub_opts po;
    napi_value promise = NULL;
    if (!get_req_string(env, argv[1], "subject", &subject)) return NULL;
    if (get_bytes(env, argv[2], &data, &len) && read_pub_opts(env, argv[3], &po)) {
        /* An asynchronous publish is written with the turn's others (an
         * awaited one alone is written at once by the library anyway). */
        po.c.defer_send = !sync;
        natsio_token *tok = NULL;
        int32_t st = sync ? natsio_js_publish_request_async(h->js, subject, data, len, &po.c, &tok)
                          : natsio_js_publish_async(h->js, subject, data, len, &po.c, &tok);
        if (st == NATSIO_OK && !sync) hub_send_after_turn(env, get_hub(env));
        promise = op_track(env, st, tok, R_PUB_ACK, h, NULL);
        pub_opts_free(&po);
    }
    free(subject);
    return promise;
}

EXPORT(js_js_publish) { return publish(env, info, true); }

/* jsPublishAsync(js, subject, data, opts) -> Promise<PubAck>. index.js
 * calls it only when the window has room, so it never stalls here. */
EXPORT(js_js_publish_async) { return publish(env, info, false); }

enum { ACK_ACK = 0, ACK_NAK = 1, ACK_TERM = 2, ACK_WPI = 3 };

/* Message `index_v` of the batch handle `handle_v` (its handle in *hp and
 * index in *index_out when given), or NULL with an exception: a bad handle
 * or index, or a message whose final ack was sent (freed then). */
static natsio_msg *batch_msg(napi_env env, napi_value handle_v, napi_value index_v, js_handle **hp,
                             uint32_t *index_out) {
    js_handle *h = get_jsh(env, handle_v, JSH_MSG);
    if (!h) return NULL;
    uint32_t i = UINT32_MAX;
    if (napi_get_value_uint32(env, index_v, &i) != napi_ok || i >= h->msg_count) {
        napi_throw_range_error(env, NULL, "not a message of this batch");
        return NULL;
    }
    if (!h->msgs[i]) {
        throw_status(env, NATSIO_ERR_MESSAGE_ALREADY_ACKED, "message already acknowledged or terminated");
        return NULL;
    }
    if (hp) *hp = h;
    if (index_out) *index_out = i;
    return h->msgs[i];
}

/* jsMsgAck(batch, index, kind, arg): ack (0), nak (1, arg = delay ms), term
 * (2, arg = reason|null), in progress (3). Only buffers: runs here, throws;
 * an ack goes out with the turn's others (hub.c, "Acks and publishes sent
 * once per turn").
 * A sent ack, nak or term frees the library message (no later ack can
 * succeed), so acknowledged messages do not wait for their batch's GC. */
EXPORT(js_msg_ack) {
    ARGS(4);
    js_handle *h = NULL;
    uint32_t i = 0;
    natsio_msg *m = batch_msg(env, argv[0], argv[1], &h, &i);
    if (!m) return NULL;
    int32_t kind = 0;
    napi_get_value_int32(env, argv[2], &kind);
    int32_t st;
    switch (kind) {
    case ACK_ACK:
        st = natsio_msg_ack_deferred(m); /* sent with the turn's others */
        if (st == NATSIO_OK) hub_send_after_turn(env, get_hub(env));
        break;
    case ACK_NAK: st = natsio_msg_nak(m, get_i64(env, argv[3], 0)); break;
    case ACK_TERM: {
        char *reason = NULL;
        if (!get_opt_string(env, argv[3], &reason)) return NULL;
        st = natsio_msg_term(m, reason);
        free(reason);
        break;
    }
    default: st = natsio_msg_in_progress(m); break;
    }
    if (st == NATSIO_OK && kind != ACK_WPI) {
        natsio_msg_free(m);
        h->msgs[i] = NULL;
        live_count(LIVE_JS_MSG, -1);
    }
    throw_if_failed(env, st);
    return NULL;
}

/* jsMsgAckSync(batch, index, timeoutMs) -> Promise<void> */
EXPORT(js_msg_ack_sync) {
    ARGS(3);
    js_handle *h = NULL;
    natsio_msg *m = batch_msg(env, argv[0], argv[1], &h, NULL);
    if (!m) return NULL;
    natsio_token *tok = NULL;
    int32_t st = natsio_msg_ack_sync_async(m, get_i64(env, argv[2], NATSIO_TIMEOUT_DEFAULT), &tok);
    return op_track(env, st, tok, R_NONE, h, NULL);
}

/* jsMsgMetadata(batch, index) -> [stream, consumer, domain|null, delivered,
 * streamSeq, consumerSeq, timestampNs (bigint), pending]; for a message
 * whose metadata the batch could not carry (it throws the reason). */
EXPORT(js_msg_metadata) {
    ARGS(2);
    natsio_msg *m = batch_msg(env, argv[0], argv[1], NULL, NULL);
    if (!m) return NULL;
    natsio_js_msg_metadata md;
    if (throw_if_failed(env, natsio_msg_js_metadata(m, &md))) return NULL;
    napi_value arr, v;
    napi_create_array_with_length(env, 8, &arr);
    napi_create_string_utf8(env, md.stream, md.stream_len, &v);
    napi_set_element(env, arr, 0, v);
    napi_create_string_utf8(env, md.consumer, md.consumer_len, &v);
    napi_set_element(env, arr, 1, v);
    if (md.domain)
        napi_create_string_utf8(env, md.domain, md.domain_len, &v);
    else
        napi_get_null(env, &v);
    napi_set_element(env, arr, 2, v);
    napi_create_double(env, (double)md.num_delivered, &v);
    napi_set_element(env, arr, 3, v);
    napi_create_double(env, (double)md.stream_seq, &v);
    napi_set_element(env, arr, 4, v);
    napi_create_double(env, (double)md.consumer_seq, &v);
    napi_set_element(env, arr, 5, v);
    napi_create_bigint_int64(env, md.timestamp_ns, &v);
    napi_set_element(env, arr, 6, v);
    napi_create_double(env, (double)md.num_pending, &v);
    napi_set_element(env, arr, 7, v);
    return arr;
}

/* ---- the ordered consumer (ADR-17) ---- */
