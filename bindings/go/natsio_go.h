/*
 * C helpers of the Go binding (natsio_go.c). Each does in one cgo call
 * what would otherwise take several: a failure's detail (natsio_last_error,
 * thread-local) is copied in the same call that failed, so no goroutine
 * has to stay on its OS thread; a message's or entry's fields are read at
 * once; an iterator is asked for a ready item and, only if there is none,
 * for a token.
 */
#ifndef NATSIO_GO_H
#define NATSIO_GO_H

#include <stddef.h>
#include <stdint.h>
#include "natsio_sys.h" // natsio.h and the binding-support calls
#include "gen_kinds.h"

/* A failure's detail and error data, read on the thread that failed (one
 * malloc'd block, the text inside it: Go frees it with one free). */
typedef struct go_error {
	const char *text;  /* natsio_last_error */
	int32_t api_code;  /* natsio_last_error_code */
	int32_t err_code;  /* natsio_last_error_err_code */
	uint64_t revision; /* natsio_last_error_revision */
} go_error;

/* The detail and data of this thread's last failure for an error status
 * st, NULL for NATSIO_OK, NATSIO_DONE and NATSIO_PENDING (or out of
 * memory). The one place the binding reads natsio_last_error and its data
 * in C (statusError does it in Go). */
go_error *go_detail(natsio_status st);

/* A status and, for an error, its detail (Go frees it). */
typedef struct go_result {
	natsio_status status;
	go_error *detail;
} go_result;

/* The calling thread, to recognize the library's callback threads. */
uintptr_t go_thread_id(void);

/* A message's fields. */
typedef struct go_msg_view {
	natsio_msg_fields f; /* natsio_msg_get_fields */
	/* JetStream metadata, read by go_msg_read_js only. */
	natsio_status md_status;
	go_error *md_detail; /* malloc'd on failure */
	natsio_js_msg_metadata md;
} go_msg_view;

void go_msg_read(const natsio_msg *msg, go_msg_view *v);

/* go_msg_read and the message's JetStream metadata. */
void go_msg_read_js(const natsio_msg *msg, go_msg_view *v);

/* A Key-Value entry's fields. */
typedef struct go_entry_view {
	const char *bucket;
	const char *key;
	const char *value;
	size_t value_len;
	uint64_t revision;
	int32_t operation;
	int64_t created_ns;
	uint64_t delta;
} go_entry_view;

void go_entry_read(const natsio_kv_entry *e, go_entry_view *v);
/* go_entry_read without bucket and key (left NULL): the library makes
 * those C strings on demand, and a get's caller knows both. */
void go_entry_read_values(const natsio_kv_entry *e, go_entry_view *v);

/* ---- tokens ---- */

/* Starts the binding's completion queue; returns the fd to read (by Go's
 * netpoller) for its wake-ups, or -1. */
int go_cq_start(void);
/* Takes up to max completed tags (natsio_completion_queue_poll). */
size_t go_cq_poll(uint64_t *tags, size_t max);
/* Registers tok's completion on the queue with tag; NATSIO_DONE when it has
 * completed already (nothing registered). */
go_result go_token_watch(natsio_token *tok, uint64_t tag);

/* What go_token_take reads: the generated kinds (gen_kinds.h: one per
 * token reader of the header and the overlay's presentations, e.g.
 * GO_TAKE_JS_MSG), then this one of the binding's own: an Object Store
 * piece is read by a reader with two outputs (natsio_token_obj_chunk)
 * and copied out of the token, which is freed at once. */
enum {
	GO_TAKE_OBJ_CHUNK = GO_TAKE_GEN_END /* a malloc'd copy of the piece in out, its length in u64 */
};

/* A publish ack's fields, borrowed from the ack (NULL: absent). */
typedef struct go_pub_ack_view {
	const char *stream, *domain, *val, *batch_id;
	uint64_t seq, batch_size;
	bool duplicate;
} go_pub_ack_view;

void go_pub_ack_read(const natsio_pub_ack *ack, go_pub_ack_view *v);

/* A completed token's typed result: out (an owned handle or string) or
 * u64, and for a message, an entry or a publish ack its fields. */
typedef struct go_take {
	natsio_status status;
	go_error *detail;
	void *out;
	uint64_t u64;
	go_msg_view msg;
	go_entry_view entry;
	go_pub_ack_view ack;
} go_take;

/* go_token_take's free_token: keep the token, free it, or free it unless
 * its operation is still pending (NATSIO_PENDING: nothing was read). */
enum { GO_KEEP_TOKEN = 0, GO_FREE_TOKEN = 1, GO_FREE_TOKEN_IF_DONE = 2 };

/* Reads the result of kind into *r; frees the token afterwards as
 * free_token says. An out-parameter, not a returned struct: go_take is
 * 336 bytes, and a Go frame holding one per layer of a wait made every
 * waiting goroutine's stack twice as large (see awaitToken). */
void go_token_take(natsio_token *tok, int kind, int free_token, go_take *r);
/* The generated kinds' part of go_token_take (gen_take.c): status, out or
 * u64, and the view of a message, entry or ack. */
void go_gen_take(go_take *r, natsio_token *tok, int kind);

/* ---- iterators ---- */


/* The next item if one is ready (status NATSIO_OK, item and its view), the
 * end (NATSIO_DONE) or the error that ended the iteration; otherwise a
 * _next_async token for it (status NATSIO_PENDING). */
typedef struct go_next {
	natsio_status status;
	go_error *detail;
	void *item;
	natsio_token *token;
	go_msg_view msg;
	go_entry_view entry;
} go_next;

go_next go_iter_next(const void *it, int kind);
/* gen_take.c: go_iter_next but for the failure detail; and the result kind
 * (GO_TAKE_) of an iterator's _next_async token. */
void go_gen_iter_next(go_next *r, const void *it, int kind);
int go_iter_take_kind(int kind);

/* Acknowledges msg: GO_ACK_NAK waits delay_ms before redelivery (0: at
 * once), GO_ACK_TERM records reason (may be NULL), GO_ACK_ACK_DEFERRED is
 * natsio_msg_ack_deferred. A final ack (all but GO_ACK_PROGRESS) that was
 * sent frees msg: one call instead of two. */
enum { GO_ACK_ACK = 0, GO_ACK_NAK = 1, GO_ACK_TERM = 2, GO_ACK_PROGRESS = 3, GO_ACK_ACK_DEFERRED = 4 };

go_result go_msg_ack(natsio_msg *msg, int kind, int64_t delay_ms, const char *reason);

/* What a consumption has ready, without waiting, up to max messages: each
 * owned message in msgs[i], its fields and metadata in views[i]. count 0
 * with NATSIO_OK: nothing ready. An end or error after some messages is
 * left for the next call. */
typedef struct go_take_many {
	natsio_status status;
	go_error *detail;
	size_t count;
} go_take_many;

go_take_many go_js_messages_take(const natsio_js_messages *it, natsio_msg **msgs, go_msg_view *views, size_t max);

/* ---- hot paths ---- */

/* How go_publish sends: a publish, one with a reply subject, or a response
 * (natsio_client_respond: written at once, not batched). */
enum { GO_PUB_PLAIN = 0, GO_PUB_WITH_REPLY = 1, GO_PUB_RESPONSE = 2 };

go_result go_publish(const natsio_client *c, const char *subj, size_t subj_len,
		const char *reply, size_t reply_len, int mode, const natsio_headers *hdrs,
		const char *data, size_t len);

typedef struct go_start {
	natsio_status status;
	go_error *detail;
	natsio_token *token;
} go_start;

go_start go_request_start(const natsio_client *c, const char *subj, size_t subj_len,
		const natsio_headers *hdrs, const char *data, size_t len, int64_t timeout_ms);

go_start go_kv_get_start(const natsio_kv *kv, const char *key, size_t key_len);

/* ---- callbacks (Go exports, with a cgo.Handle as user data) ---- */

natsio_status go_sub_set_callback(const natsio_sub *sub, uintptr_t h);
natsio_status go_options_set_error_callback(natsio_options *opts, uintptr_t h);
natsio_status go_options_set_event_callback(natsio_options *opts, uintptr_t h);
natsio_status go_options_set_log(natsio_options *opts, int32_t level, uintptr_t h);
natsio_status go_options_set_auth_callbacks(natsio_options *opts, uintptr_t h);
natsio_status go_options_set_user_password_callback(natsio_options *opts, uintptr_t h);
natsio_status go_options_set_token_callback(natsio_options *opts, uintptr_t h);
natsio_status go_options_set_reconnect_delay_callback(natsio_options *opts, uintptr_t h);
natsio_status go_options_set_authenticator(natsio_options *opts, uintptr_t h);
/* Services: an endpoint's push mode, the service's error and stats
 * callbacks. */
natsio_status go_endpoint_set_callback(const natsio_endpoint *ep, uintptr_t h);
natsio_status go_service_set_error_callback(const natsio_service *s, uintptr_t h);
natsio_status go_service_set_stats_callback(const natsio_service *s, uintptr_t h);
/* A service request's message fields (natsio_service_request_msg, then
 * go_msg_read): one call. */
void go_service_request_read(const natsio_service_request *req, go_msg_view *v);

/* ---- calls whose arguments Go cannot pass as they are ---- */

/* JetStream context options (strings given one by one). */
go_result go_js_new(const natsio_client *c, const char *domain, const char *prefix,
		int64_t timeout_ms, int64_t max_pending, int64_t stall_ms, int64_t async_timeout_ms,
		natsio_js **js_out);

/* The scalar publish options (no pointers, so Go may pass its address). */
typedef struct go_pub_scalars {
	uint64_t expected_last_seq;
	uint64_t expected_last_subject_seq;
	int64_t ttl_s;
	int64_t timeout_ms;
	int has_expected_last_seq;
	int has_expected_last_subject_seq;
	int defer_send;
	int32_t retry_attempts; /* 0: the default; else natsio_js_publish_options.retry_attempts */
	int64_t retry_wait_ms;  /* 0: the default */
} go_pub_scalars;

/* Starts a JetStream publish: the synchronous request's token form
 * (natsio_js_publish_request_async) when `request` is set, else the
 * windowed asynchronous publish (natsio_js_publish_async). */
go_start go_js_publish_start(const natsio_js *js, int request, const char *subject, const void *data, size_t len,
		const natsio_headers *headers, const char *msg_id, const char *expected_stream,
		const char *expected_subject, const char *expected_last_msg_id, const go_pub_scalars *s);

/* A Key-Value bucket status's fields (borrowed from the status). */
typedef struct go_kv_status_view {
	const char *bucket;
	const char *description; /* NULL if none */
	const char *storage;
	const char *metadata_json;
	const char *stream_info_json;
	uint64_t values;
	uint64_t bytes;
	int64_t history;
	int64_t ttl_ns;
	int64_t replicas;
	int64_t limit_marker_ttl_ns;
	int compressed;
} go_kv_status_view;

void go_kv_status_read(const natsio_kv_bucket_status *st, go_kv_status_view *v);

/* ---- Object Store ---- */

/* An object info's fields (borrowed from the info). */
typedef struct go_obj_info_view {
	const char *name;
	const char *description; /* NULL if none */
	const char *bucket;
	const char *nuid;
	uint64_t size;
	uint64_t chunks;
	const char *digest;
	int64_t mtime_ns;
	uint64_t revision;
	const natsio_headers *headers; /* NULL if none */
	const char *metadata_json;
	const char *link_bucket; /* NULL if not a link */
	const char *link_name;   /* NULL for a bucket link */
	uint32_t max_chunk_size;
	int deleted;
	int is_link;
	int initial_done;
} go_obj_info_view;

void go_obj_info_read(const natsio_obj_info *info, go_obj_info_view *v);

/* A bucket status's fields (borrowed from the status). */
typedef struct go_obj_status_view {
	const char *bucket;
	const char *description; /* NULL if none */
	int64_t ttl_ns;
	const char *storage;
	int64_t replicas;
	uint64_t size;
	const char *metadata_json;
	const char *stream_info_json;
	int sealed;
	int compression;
} go_obj_status_view;

void go_obj_status_read(const natsio_obj_status *st, go_obj_status_view *v);

/* Reads what is ready of the object into buf (status NATSIO_OK, n bytes),
 * the verified end (NATSIO_DONE) or the reader's error; when nothing is
 * ready, a natsio_obj_reader_next_async token for the next piece (status
 * NATSIO_PENDING). */
typedef struct go_obj_read {
	natsio_status status;
	go_error *detail;
	size_t n;
	natsio_token *token;
} go_obj_read;

go_obj_read go_obj_reader_read(natsio_obj_reader *r, void *buf, size_t cap);

/* Key-Value codecs written in Go: custom codecs whose steps call
 * natsioGoKvCodec with the handle h (released by natsioGoRelease). */
enum { GO_KV_KEY_ENCODE, GO_KV_KEY_DECODE, GO_KV_FILTER_ENCODE, GO_KV_VALUE_ENCODE, GO_KV_VALUE_DECODE };
natsio_status go_kv_key_codec_custom(uintptr_t h, int filterable, natsio_kv_key_codec **out);
natsio_status go_kv_value_codec_custom(uintptr_t h, natsio_kv_value_codec **out);

#endif
