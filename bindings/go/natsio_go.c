// C helpers of the Go binding: see natsio_go.h.

#include <fcntl.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <pthread.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/eventfd.h>
#endif
#include <stdlib.h>
#include <string.h>
#include "natsio_go.h"

// The Go exports (callbacks.go, reconnect_auth_tls.go). Their cgo-generated
// prototypes drop const, hence the casts where they are registered.
extern void natsioGoRelease(void *user_data);
extern void natsioGoMsgs(void *user_data, go_msg_view *views, size_t count, natsio_status status);
extern void natsioGoError(void *user_data, natsio_status status, char *text, uint64_t sid, char *subject);
extern void natsioGoEvent(void *user_data, natsio_event_kind kind, natsio_status status, char *text);
extern void natsioGoLog(void *user_data, natsio_log_level level, char *message);
extern char *natsioGoJWT(void *user_data);
extern natsio_status natsioGoSign(void *user_data, uint8_t *nonce, size_t nonce_len, uint8_t *signature_out);
extern natsio_status natsioGoUserPassword(void *user_data, const char **user_out, const char **password_out);
extern natsio_status natsioGoAuthFields(void *user_data, uint8_t *nonce, size_t nonce_len, natsio_auth_fields *fields_out);
extern char *natsioGoToken(void *user_data);
extern int64_t natsioGoReconnectDelay(void *user_data, int64_t attempts);
extern natsio_status natsioGoServiceRequest(void *user_data, natsio_service_request *req, natsio_status status);
extern void natsioGoServiceError(void *user_data, char *endpoint, char *subject, int32_t code, char *description);
extern char *natsioGoServiceStats(void *user_data, char *endpoint, char *subject);
extern natsio_status natsioGoKvCodec(void *user_data, int step, char *input, size_t input_len,
                                     natsio_kv_codec_output *output);

#ifdef __GLIBC__
// glibc gives each thread that allocates an arena of its own, up to 8 per
// CPU. Go's allocator does not use malloc, so the arenas are the library's:
// its threads and every Go thread (M) that called into it, and a block
// allocated on one (a publish on a goroutine's thread) and freed on another
// (its ack on the library's reader) leaves each arena's free space
// unreturned. With one arena a JetStream publish run peaked at 26 MB
// instead of 39 MB (nats.go: 21 MB) at the same rate (issue 45). A process
// that sets MALLOC_ARENA_MAX itself keeps its own choice.
__attribute__((constructor)) static void natsio_go_limit_malloc_arenas(void) {
	if (getenv("MALLOC_ARENA_MAX") == NULL) mallopt(M_ARENA_MAX, 1);
}
#endif

// A go_error holding text and no error data (NULL when out of memory).
static go_error *go_error_text(const char *text) {
	size_t n = strlen(text);
	go_error *e = malloc(sizeof *e + n + 1);
	if (e == NULL) return NULL;
	char *t = (char *)(e + 1);
	memcpy(t, text, n + 1);
	e->text = t;
	e->api_code = 0;
	e->err_code = 0;
	e->revision = 0;
	return e;
}

go_error *go_detail(natsio_status st) {
	if (st == NATSIO_OK || st == NATSIO_DONE || st == NATSIO_PENDING) return NULL;
	const char *d = natsio_last_error();
	go_error *e = go_error_text(d ? d : "");
	if (e != NULL) {
		e->api_code = natsio_last_error_code();
		e->err_code = natsio_last_error_err_code();
		e->revision = natsio_last_error_revision();
	}
	return e;
}

static go_result go_result_of(natsio_status st) {
	go_result r = {st, go_detail(st)};
	return r;
}

uintptr_t go_thread_id(void) { return (uintptr_t)pthread_self(); }

void go_msg_read(const natsio_msg *msg, go_msg_view *v) {
	// One library call per message, on every delivery path.
	if (natsio_msg_get_fields(msg, &v->f) != NATSIO_OK) memset(&v->f, 0, sizeof v->f);
}

void go_msg_read_js(const natsio_msg *msg, go_msg_view *v) {
	go_msg_read(msg, v);
	v->md_status = natsio_msg_js_metadata(msg, &v->md);
	v->md_detail = go_detail(v->md_status);
}

void go_pub_ack_read(const natsio_pub_ack *ack, go_pub_ack_view *v) {
	v->stream = natsio_pub_ack_stream(ack);
	v->domain = natsio_pub_ack_domain(ack);
	v->val = natsio_pub_ack_val(ack);
	v->batch_id = natsio_pub_ack_batch_id(ack);
	v->seq = natsio_pub_ack_seq(ack);
	v->batch_size = natsio_pub_ack_batch_size(ack);
	v->duplicate = natsio_pub_ack_duplicate(ack);
}

void go_entry_read(const natsio_kv_entry *e, go_entry_view *v) {
	go_entry_read_values(e, v);
	v->bucket = natsio_kv_entry_bucket(e);
	v->key = natsio_kv_entry_key(e);
}

void go_entry_read_values(const natsio_kv_entry *e, go_entry_view *v) {
	v->bucket = NULL;
	v->key = NULL;
	v->value = natsio_kv_entry_value(e);
	v->value_len = natsio_kv_entry_value_len(e);
	v->revision = natsio_kv_entry_revision(e);
	v->operation = natsio_kv_entry_operation(e);
	v->created_ns = natsio_kv_entry_created_ns(e);
	v->delta = natsio_kv_entry_delta(e);
}

// ---- tokens ----

// The binding's completion queue: a completed token's tag is appended on
// the completing library thread, and an eventfd (a pipe elsewhere) read by
// one goroutine through Go's netpoller wakes Go. No C-to-Go callback and
// no dispatcher hop per completion; one wake-up drains many.
static natsio_completion_queue *go_cq;
static int go_cq_wake_fd = -1; // written by notify

static void go_cq_notify(void *user_data) {
	(void)user_data;
#ifdef __linux__
	uint64_t one = 1;
	(void)!write(go_cq_wake_fd, &one, sizeof one);
#else
	char one = 1;
	(void)!write(go_cq_wake_fd, &one, 1); // a full pipe is a pending wake-up
#endif
}

int go_cq_start(void) {
	int read_fd;
#ifdef __linux__
	read_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (read_fd < 0) return -1;
	go_cq_wake_fd = read_fd;
#else
	int fds[2];
	if (pipe(fds) != 0) return -1;
	for (int i = 0; i < 2; i++) {
		fcntl(fds[i], F_SETFL, fcntl(fds[i], F_GETFL) | O_NONBLOCK);
		fcntl(fds[i], F_SETFD, FD_CLOEXEC);
	}
	read_fd = fds[0];
	go_cq_wake_fd = fds[1];
#endif
	if (natsio_completion_queue_new(go_cq_notify, NULL, NULL, &go_cq) != NATSIO_OK) return -1;
	return read_fd;
}

size_t go_cq_poll(uint64_t *tags, size_t max) { return natsio_completion_queue_poll(go_cq, tags, max); }

go_result go_token_watch(natsio_token *tok, uint64_t tag) {
	if (natsio_token_is_done(tok)) {
		go_result r = {NATSIO_DONE, NULL};
		return r;
	}
	return go_result_of(natsio_token_complete_to(tok, go_cq, tag));
}

static void go_token_release(natsio_token *tok, int free_token, natsio_status st) {
	if (free_token == GO_FREE_TOKEN || (free_token == GO_FREE_TOKEN_IF_DONE && st != NATSIO_PENDING))
		natsio_token_free(tok);
}

void go_token_take(natsio_token *tok, int kind, int free_token, go_take *r) {
	memset(r, 0, sizeof *r);
	if (kind < GO_TAKE_GEN_END) {
		go_gen_take(r, tok, kind);
	} else if (kind == GO_TAKE_OBJ_CHUNK) {
		// The piece is the token's: copied, as the token is freed at once.
		const void *data = NULL;
		size_t len = 0;
		r->status = natsio_token_obj_chunk(tok, &data, &len);
		if (r->status == NATSIO_OK && len > 0) {
			r->out = malloc(len);
			if (r->out == NULL) {
				r->status = NATSIO_ERR_INTERNAL;
				r->detail = go_error_text("out of memory");
				go_token_release(tok, free_token, r->status);
				return;
			}
			memcpy(r->out, data, len);
			r->u64 = len;
		}
	} else {
		r->status = NATSIO_ERR_INTERNAL;
		r->detail = go_error_text("unknown token result kind");
		return;
	}
	r->detail = go_detail(r->status);
	go_token_release(tok, free_token, r->status);
}

// ---- iterators ----

go_next go_iter_next(const void *it, int kind) {
	go_next r;
	memset(&r, 0, sizeof r);
	// A ready item first (no token, no callback); otherwise a token for it.
	go_gen_iter_next(&r, it, kind);
	if (r.status != NATSIO_OK && r.status != NATSIO_PENDING) r.detail = go_detail(r.status);
	return r;
}

go_result go_msg_ack(natsio_msg *msg, int kind, int64_t delay_ms, const char *reason) {
	natsio_status st;
	switch (kind) {
	case GO_ACK_ACK: st = natsio_msg_ack(msg); break;
	case GO_ACK_ACK_DEFERRED: st = natsio_msg_ack_deferred(msg); break;
	case GO_ACK_NAK: st = natsio_msg_nak(msg, delay_ms); break;
	case GO_ACK_TERM: st = natsio_msg_term(msg, reason); break;
	default: st = natsio_msg_in_progress(msg); break;
	}
	go_result r = go_result_of(st);
	if (st == NATSIO_OK && kind != GO_ACK_PROGRESS) natsio_msg_free(msg);
	return r;
}

go_take_many go_js_messages_take(const natsio_js_messages *it, natsio_msg **msgs, go_msg_view *views, size_t max) {
	go_take_many r = {NATSIO_OK, NULL, 0};
	while (r.count < max) {
		natsio_msg *m = NULL;
		natsio_status st = natsio_js_messages_next(it, NATSIO_NO_WAIT, &m);
		if (st != NATSIO_OK) {
			if (r.count == 0 && st != NATSIO_ERR_TIMEOUT) {
				r.status = st;
				r.detail = go_detail(st);
			}
			break;
		}
		go_msg_read_js(m, &views[r.count]);
		msgs[r.count++] = m;
	}
	return r;
}

// ---- hot paths ----

// Strings up to this size are made NUL-terminated on the C stack.
#define GO_STACK_STR 256

// A NUL-terminated copy of (p, n): in buf when it fits, else malloc'd.
static char *go_cstr(const char *p, size_t n, char *buf) {
	char *s = n < GO_STACK_STR ? buf : malloc(n + 1);
	if (s == NULL) return NULL;
	if (n > 0) memcpy(s, p, n);
	s[n] = 0;
	return s;
}

static void go_cstr_free(char *s, char *buf) {
	if (s != NULL && s != buf) free(s);
}

static go_result go_out_of_memory(void) {
	go_result r = {NATSIO_ERR_INTERNAL, go_error_text("out of memory")};
	return r;
}

go_result go_publish(const natsio_client *c, const char *subj, size_t subj_len,
		const char *reply, size_t reply_len, int mode, const natsio_headers *hdrs,
		const char *data, size_t len) {
	if (mode == GO_PUB_PLAIN && hdrs == NULL) {
		// The hot path: the subject as Go holds it (pointer and length).
		return go_result_of(natsio_client_publish_n(c, subj, subj_len, data, len));
	}
	char sbuf[GO_STACK_STR], rbuf[GO_STACK_STR];
	int has_reply = mode == GO_PUB_WITH_REPLY;
	char *s = go_cstr(subj, subj_len, sbuf);
	char *rp = has_reply ? go_cstr(reply, reply_len, rbuf) : NULL;
	go_result r;
	if (s == NULL || (has_reply && rp == NULL)) {
		r = go_out_of_memory();
	} else if (mode == GO_PUB_RESPONSE) {
		r = go_result_of(natsio_client_respond(c, s, hdrs, data, len));
	} else {
		r = go_result_of((has_reply || hdrs != NULL)
			? natsio_client_publish_with(c, s, rp, hdrs, data, len)
			: natsio_client_publish(c, s, data, len));
	}
	go_cstr_free(s, sbuf);
	go_cstr_free(rp, rbuf);
	return r;
}

static go_start go_start_of(natsio_status st, natsio_token *tok) {
	go_start r = {st, go_detail(st), st == NATSIO_OK ? tok : NULL};
	return r;
}

go_start go_request_start(const natsio_client *c, const char *subj, size_t subj_len,
		const natsio_headers *hdrs, const char *data, size_t len, int64_t timeout_ms) {
	char sbuf[GO_STACK_STR];
	char *s = go_cstr(subj, subj_len, sbuf);
	if (s == NULL) {
		go_result oom = go_out_of_memory();
		go_start r = {oom.status, oom.detail, NULL};
		return r;
	}
	natsio_token *tok = NULL;
	natsio_status st = natsio_client_request_async(c, s, hdrs, data, len, timeout_ms, &tok);
	go_start r = go_start_of(st, tok);
	go_cstr_free(s, sbuf);
	return r;
}

go_start go_kv_get_start(const natsio_kv *kv, const char *key, size_t key_len) {
	char kbuf[GO_STACK_STR];
	char *k = go_cstr(key, key_len, kbuf);
	if (k == NULL) {
		go_result oom = go_out_of_memory();
		go_start r = {oom.status, oom.detail, NULL};
		return r;
	}
	natsio_token *tok = NULL;
	natsio_status st = natsio_kv_get_async(kv, k, &tok);
	go_start r = go_start_of(st, tok);
	go_cstr_free(k, kbuf);
	return r;
}

// ---- callbacks ----

// A callback subscription's messages reach Go in batches (what is queued
// at once, up to GO_SUB_BATCH) with their fields already read, on the
// library thread, in C: one C-to-Go call per batch, no Go-to-C call inside
// it, and views in C memory, which cgo does not need to check.
enum { GO_SUB_BATCH = 64 };

static void go_sub_msgs(void *user_data, const natsio_msg *const *msgs, size_t count, natsio_status status) {
	if (msgs == NULL || count == 0) {
		natsioGoMsgs(user_data, NULL, 0, status);
		return;
	}
	go_msg_view views[GO_SUB_BATCH];
	if (count > GO_SUB_BATCH) count = GO_SUB_BATCH; // never: the library's max
	for (size_t i = 0; i < count; i++) go_msg_read(msgs[i], &views[i]);
	natsioGoMsgs(user_data, views, count, status);
}

natsio_status go_sub_set_callback(const natsio_sub *sub, uintptr_t h) {
	return natsio_sub_set_batch_callback(sub, go_sub_msgs, (void *)h, natsioGoRelease, GO_SUB_BATCH);
}

natsio_status go_options_set_error_callback(natsio_options *opts, uintptr_t h) {
	return natsio_options_set_error_callback(opts, (natsio_error_cb)natsioGoError, (void *)h, natsioGoRelease);
}

natsio_status go_options_set_log(natsio_options *opts, int32_t level, uintptr_t h) {
	return natsio_options_set_log(opts, level, (natsio_log_cb)natsioGoLog, (void *)h, natsioGoRelease);
}

natsio_status go_options_set_event_callback(natsio_options *opts, uintptr_t h) {
	return natsio_options_set_event_callback(opts, (natsio_event_cb)natsioGoEvent, (void *)h, natsioGoRelease);
}

natsio_status go_options_set_auth_callbacks(natsio_options *opts, uintptr_t h) {
	return natsio_options_set_auth_callbacks(opts, (natsio_jwt_cb)natsioGoJWT, (natsio_sign_cb)natsioGoSign,
		(void *)h, natsioGoRelease);
}

natsio_status go_options_set_user_password_callback(natsio_options *opts, uintptr_t h) {
	return natsio_options_set_user_password_callback(opts, (natsio_user_password_cb)natsioGoUserPassword, (void *)h,
		natsioGoRelease);
}

natsio_status go_options_set_authenticator(natsio_options *opts, uintptr_t h) {
	return natsio_options_set_authenticator(opts, (natsio_authenticator_cb)natsioGoAuthFields, (void *)h, natsioGoRelease);
}

natsio_status go_options_set_reconnect_delay_callback(natsio_options *opts, uintptr_t h) {
	return natsio_options_set_reconnect_delay_callback(opts, (natsio_reconnect_delay_cb)natsioGoReconnectDelay, (void *)h,
		natsioGoRelease);
}

natsio_status go_options_set_token_callback(natsio_options *opts, uintptr_t h) {
	return natsio_options_set_token_callback(opts, (natsio_auth_token_cb)natsioGoToken, (void *)h, natsioGoRelease);
}

natsio_status go_endpoint_set_callback(const natsio_endpoint *ep, uintptr_t h) {
	return natsio_endpoint_set_callback(ep, (natsio_service_request_cb)natsioGoServiceRequest, (void *)h, natsioGoRelease);
}

natsio_status go_service_set_error_callback(const natsio_service *s, uintptr_t h) {
	return natsio_service_set_error_callback(s, (natsio_service_error_cb)natsioGoServiceError, (void *)h, natsioGoRelease);
}

natsio_status go_service_set_stats_callback(const natsio_service *s, uintptr_t h) {
	return natsio_service_set_stats_callback(s, (natsio_service_stats_cb)natsioGoServiceStats, (void *)h, natsioGoRelease);
}

void go_service_request_read(const natsio_service_request *req, go_msg_view *v) {
	go_msg_read(natsio_service_request_msg(req), v);
}

// ---- calls whose arguments Go cannot pass as they are ----

go_result go_js_new(const natsio_client *c, const char *domain, const char *prefix,
		int64_t timeout_ms, int64_t max_pending, int64_t stall_ms, int64_t async_timeout_ms,
		natsio_js **js_out) {
	natsio_js_options o;
	natsio_js_options_init(&o);
	o.domain = domain;
	o.api_prefix = prefix;
	o.timeout_ms = timeout_ms;
	o.publish_async_max_pending = max_pending;
	o.publish_async_stall_wait_ms = stall_ms;
	o.publish_async_timeout_ms = async_timeout_ms;
	return go_result_of(natsio_client_jetstream(c, &o, js_out));
}

go_start go_js_publish_start(const natsio_js *js, int request, const char *subject, const void *data, size_t len,
		const natsio_headers *headers, const char *msg_id, const char *expected_stream,
		const char *expected_subject, const char *expected_last_msg_id, const go_pub_scalars *s) {
	natsio_js_publish_options o;
	natsio_js_publish_options_init(&o);
	o.headers = headers;
	o.msg_id = msg_id;
	o.expected_stream = expected_stream;
	o.expected_last_seq = s->has_expected_last_seq ? &s->expected_last_seq : NULL;
	o.expected_last_subject_seq = s->has_expected_last_subject_seq ? &s->expected_last_subject_seq : NULL;
	o.expected_last_subject_seq_subject = expected_subject;
	o.expected_last_msg_id = expected_last_msg_id;
	o.ttl_s = s->ttl_s;
	o.timeout_ms = s->timeout_ms;
	o.defer_send = s->defer_send != 0;
	o.retry_attempts = s->retry_attempts;
	o.retry_wait_ms = s->retry_wait_ms;
	natsio_token *tok = NULL;
	natsio_status st = request ? natsio_js_publish_request_async(js, subject, data, len, &o, &tok)
				   : natsio_js_publish_async(js, subject, data, len, &o, &tok);
	return go_start_of(st, tok);
}

// ---- Object Store ----

void go_obj_info_read(const natsio_obj_info *info, go_obj_info_view *v) {
	v->name = natsio_obj_info_name(info);
	v->description = natsio_obj_info_description(info);
	v->bucket = natsio_obj_info_bucket(info);
	v->nuid = natsio_obj_info_nuid(info);
	v->size = natsio_obj_info_size(info);
	v->chunks = natsio_obj_info_chunks(info);
	v->digest = natsio_obj_info_digest(info);
	v->mtime_ns = natsio_obj_info_mtime_ns(info);
	v->revision = natsio_obj_info_revision(info);
	v->headers = natsio_obj_info_headers(info);
	v->metadata_json = natsio_obj_info_metadata_json(info);
	v->link_bucket = natsio_obj_info_link_bucket(info);
	v->link_name = natsio_obj_info_link_name(info);
	v->max_chunk_size = natsio_obj_info_max_chunk_size(info);
	v->deleted = natsio_obj_info_deleted(info);
	v->is_link = natsio_obj_info_is_link(info);
	v->initial_done = natsio_obj_info_is_initial_done(info);
}

void go_kv_status_read(const natsio_kv_bucket_status *st, go_kv_status_view *v) {
	v->bucket = natsio_kv_bucket_status_bucket(st);
	v->description = natsio_kv_bucket_status_description(st);
	v->storage = natsio_kv_bucket_status_storage(st);
	v->metadata_json = natsio_kv_bucket_status_metadata_json(st);
	v->stream_info_json = natsio_kv_bucket_status_stream_info_json(st);
	v->values = natsio_kv_bucket_status_values(st);
	v->bytes = natsio_kv_bucket_status_bytes(st);
	v->history = natsio_kv_bucket_status_history(st);
	v->ttl_ns = natsio_kv_bucket_status_ttl_ns(st);
	v->replicas = natsio_kv_bucket_status_replicas(st);
	v->limit_marker_ttl_ns = natsio_kv_bucket_status_limit_marker_ttl_ns(st);
	v->compressed = natsio_kv_bucket_status_is_compressed(st);
}

void go_obj_status_read(const natsio_obj_status *st, go_obj_status_view *v) {
	v->bucket = natsio_obj_status_bucket(st);
	v->description = natsio_obj_status_description(st);
	v->ttl_ns = natsio_obj_status_ttl_ns(st);
	v->storage = natsio_obj_status_storage(st);
	v->replicas = natsio_obj_status_replicas(st);
	v->size = natsio_obj_status_size(st);
	v->metadata_json = natsio_obj_status_metadata_json(st);
	v->stream_info_json = natsio_obj_status_stream_info_json(st);
	v->sealed = natsio_obj_status_sealed(st);
	v->compression = natsio_obj_status_compression(st);
}

go_obj_read go_obj_reader_read(natsio_obj_reader *r, void *buf, size_t cap) {
	go_obj_read out;
	memset(&out, 0, sizeof out);
	out.status = natsio_obj_reader_read(r, buf, cap, &out.n, NATSIO_NO_WAIT);
	if (out.status != NATSIO_ERR_TIMEOUT) {
		out.detail = go_detail(out.status);
		return out;
	}
	// Nothing ready: a token for the next piece.
	out.n = 0;
	out.status = natsio_obj_reader_next_async(r, &out.token);
	if (out.status == NATSIO_OK) {
		out.status = NATSIO_PENDING;
	} else {
		out.token = NULL;
		out.detail = go_detail(out.status);
	}
	return out;
}

// Key-Value codecs written in Go (kv_codec.go): one export, told the step.
#define GO_KV_STEP(name, step)                                                                   \
	static natsio_status name(void *ud, const char *in, size_t n, natsio_kv_codec_output *out) { \
		return natsioGoKvCodec(ud, step, (char *)in, n, out);                                    \
	}
GO_KV_STEP(go_kv_key_encode, GO_KV_KEY_ENCODE)
GO_KV_STEP(go_kv_key_decode, GO_KV_KEY_DECODE)
GO_KV_STEP(go_kv_filter_encode, GO_KV_FILTER_ENCODE)
GO_KV_STEP(go_kv_value_encode, GO_KV_VALUE_ENCODE)
GO_KV_STEP(go_kv_value_decode, GO_KV_VALUE_DECODE)

natsio_status go_kv_key_codec_custom(uintptr_t h, int filterable, natsio_kv_key_codec **out) {
	return natsio_kv_key_codec_custom(go_kv_key_encode, go_kv_key_decode, filterable ? go_kv_filter_encode : NULL,
		(void *)h, natsioGoRelease, out);
}

natsio_status go_kv_value_codec_custom(uintptr_t h, natsio_kv_value_codec **out) {
	return natsio_kv_value_codec_custom(go_kv_value_encode, go_kv_value_decode, (void *)h, natsioGoRelease, out);
}
