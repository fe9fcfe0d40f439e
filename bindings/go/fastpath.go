package natsio

// The per-message paths (publish, request, callback delivery) cross into C
// through the small wrappers below, each doing in one cgo call what would
// otherwise take several:
//   - strings are passed as (pointer, length) into Go memory and made
//     NUL-terminated in C, on the C stack, so a publish allocates nothing in Go;
//   - the failure detail (natsio_last_error, thread-local) is copied in the
//     same call that failed, so no goroutine has to be pinned to its OS
//     thread (runtime.LockOSThread) around the call;
//   - handles come back in returned structs rather than through Go
//     pointers, which would force the out variables onto the heap.

/*
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "natsio.h"

// A status, and on failure a malloc'd copy of this thread's detail text
// (the Go side frees it).
typedef struct go_result {
	natsio_status status;
	char *detail;
} go_result;

static char *go_detail(natsio_status st) {
	if (st == NATSIO_OK || st == NATSIO_DONE || st == NATSIO_PENDING) return NULL;
	const char *d = natsio_last_error();
	return strdup(d ? d : "");
}

// A message's fields, read in one call.
typedef struct go_msg_view {
	const char *subject;
	size_t subject_len;
	const char *reply;
	size_t reply_len;
	const char *data;
	size_t data_len;
	const natsio_headers *headers;
	size_t header_count;
} go_msg_view;

static void go_msg_read(const natsio_msg *msg, go_msg_view *v) {
	v->subject = natsio_msg_subject(msg);
	v->subject_len = v->subject ? strlen(v->subject) : 0;
	v->reply = natsio_msg_reply(msg);
	v->reply_len = v->reply ? strlen(v->reply) : 0;
	v->data = natsio_msg_data(msg);
	v->data_len = natsio_msg_data_len(msg);
	v->headers = natsio_msg_headers(msg);
	v->header_count = v->headers ? natsio_headers_len(v->headers) : 0;
}

// Subjects up to this size are made NUL-terminated on the C stack.
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
	go_result r = {NATSIO_ERR_INVALID_ARGUMENT, strdup("out of memory")};
	return r;
}

static go_result go_publish(const natsio_client *c, const char *subj, size_t subj_len,
		const char *reply, size_t reply_len, int has_reply, const natsio_headers *hdrs,
		const char *data, size_t len) {
	char sbuf[GO_STACK_STR], rbuf[GO_STACK_STR];
	char *s = go_cstr(subj, subj_len, sbuf);
	char *rp = has_reply ? go_cstr(reply, reply_len, rbuf) : NULL;
	go_result r;
	if (s == NULL || (has_reply && rp == NULL)) {
		r = go_out_of_memory();
	} else {
		r.status = (has_reply || hdrs != NULL)
			? natsio_client_publish_with(c, s, rp, hdrs, data, len)
			: natsio_client_publish(c, s, data, len);
		r.detail = go_detail(r.status);
	}
	go_cstr_free(s, sbuf);
	go_cstr_free(rp, rbuf);
	return r;
}

typedef struct go_token_result {
	natsio_status status;
	char *detail;
	natsio_token *token;
} go_token_result;

static go_token_result go_request_start(const natsio_client *c, const char *subj, size_t subj_len,
		const natsio_headers *hdrs, const char *data, size_t len, int64_t timeout_ms) {
	char sbuf[GO_STACK_STR];
	go_token_result r = {NATSIO_OK, NULL, NULL};
	char *s = go_cstr(subj, subj_len, sbuf);
	if (s == NULL) {
		go_result oom = go_out_of_memory();
		r.status = oom.status;
		r.detail = oom.detail;
		return r;
	}
	r.status = natsio_client_request_async(c, s, hdrs, data, len, timeout_ms, &r.token);
	r.detail = go_detail(r.status);
	go_cstr_free(s, sbuf);
	return r;
}

static go_token_result go_token_result_of(natsio_status st, natsio_token *tok) {
	go_token_result r = {st, go_detail(st), tok};
	return r;
}

static go_token_result go_flush_start(const natsio_client *c) {
	natsio_token *tok = NULL;
	natsio_status st = natsio_client_flush_async(c, &tok);
	return go_token_result_of(st, tok);
}

static go_token_result go_drain_start(const natsio_client *c, int64_t timeout_ms) {
	natsio_token *tok = NULL;
	natsio_status st = natsio_client_drain_async(c, timeout_ms, &tok);
	return go_token_result_of(st, tok);
}

static go_token_result go_sub_drain_start(natsio_sub *sub) {
	natsio_token *tok = NULL;
	natsio_status st = natsio_sub_drain_async(sub, &tok);
	return go_token_result_of(st, tok);
}

// An outcome: status, detail, and the message if one was asked for.
typedef struct go_msg_result {
	natsio_status status;
	char *detail;
	natsio_msg *msg;
	go_msg_view view;
} go_msg_result;

// Waits up to timeout_ms (negative: until it completes; natsio_token_cancel
// wakes it) and reads the outcome: the reply when want_msg, else the status.
static go_msg_result go_token_outcome(const natsio_token *tok, int64_t timeout_ms, int want_msg) {
	go_msg_result r;
	memset(&r, 0, sizeof r);
	r.status = natsio_token_wait(tok, timeout_ms);
	if (r.status == NATSIO_OK) {
		if (want_msg) {
			r.status = natsio_token_msg(tok, &r.msg);
			if (r.status == NATSIO_OK) go_msg_read(r.msg, &r.view);
		} else {
			r.status = natsio_token_status(tok);
		}
	}
	r.detail = go_detail(r.status);
	return r;
}

// Frees the previous message of a callback subscription's pump and waits
// for the next one.
static go_msg_result go_sub_next(const natsio_sub *sub, natsio_msg *done) {
	go_msg_result r;
	memset(&r, 0, sizeof r);
	natsio_msg_free(done);
	// The raw variant hands a no-responders status over as the message it
	// is, as callback mode does.
	r.status = natsio_sub_next_raw_msg(sub, -1, &r.msg);
	if (r.status == NATSIO_OK) go_msg_read(r.msg, &r.view);
	return r;
}

static void go_msg_token_free(natsio_msg *msg, natsio_token *tok) {
	natsio_msg_free(msg);
	natsio_token_free(tok);
}
*/
import "C"

import (
	"context"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"unsafe"
)

// strPtr points at s's bytes for the duration of a call (not
// NUL-terminated: the wrappers take the length). Go memory without Go
// pointers may be passed to C that does not keep it.
func strPtr(s string) *C.char { return (*C.char)(unsafe.Pointer(unsafe.StringData(s))) }

func bytesPtr(b []byte) *C.char {
	if len(b) == 0 {
		return nil
	}
	return (*C.char)(unsafe.Pointer(&b[0]))
}

// checkNUL refuses a string the C ABI would silently truncate.
func checkNUL(s string) error {
	if strings.IndexByte(s, 0) >= 0 {
		return &Error{Status: statusInvalidArgument, Detail: "string contains a NUL byte: " + strings.ReplaceAll(s, "\x00", `\0`)}
	}
	return nil
}

// resultError turns a wrapper's status and detail into an error, freeing
// the detail.
func resultError(st C.natsio_status, detail *C.char) error {
	if detail != nil {
		defer C.free(unsafe.Pointer(detail))
	}
	if st == C.NATSIO_OK {
		return nil
	}
	e := &Error{Status: Status(st)}
	if detail != nil {
		e.Detail = C.GoString(detail)
	}
	return e
}

// publish sends data (and hdrs, and reply when hasReply) to subject.
func (nc *Conn) publish(subject, reply string, hasReply bool, hdrs *C.natsio_headers, data []byte) error {
	if err := checkNUL(subject); err != nil {
		return err
	}
	var has C.int
	if hasReply {
		if err := checkNUL(reply); err != nil {
			return err
		}
		has = 1
	}
	r := C.go_publish(nc.ptr, strPtr(subject), C.size_t(len(subject)), strPtr(reply), C.size_t(len(reply)),
		has, hdrs, bytesPtr(data), C.size_t(len(data)))
	runtime.KeepAlive(nc)
	runtime.KeepAlive(data)
	return resultError(r.status, r.detail)
}

func startFlush(c *C.natsio_client) (*C.natsio_token, error) {
	r := C.go_flush_start(c)
	return r.token, resultError(r.status, r.detail)
}

func startDrain(c *C.natsio_client, timeout C.int64_t) (*C.natsio_token, error) {
	r := C.go_drain_start(c, timeout)
	return r.token, resultError(r.status, r.detail)
}

func startSubDrain(sub *C.natsio_sub) (*C.natsio_token, error) {
	r := C.go_sub_drain_start(sub)
	return r.token, resultError(r.status, r.detail)
}

// msgFromView copies a borrowed C message into Go memory: the subject (or
// the cached string when it repeats), and data and reply together in one
// allocation. Data is capped at its length, so appending to it never
// reaches the reply's bytes.
func msgFromView(v *C.go_msg_view, conn *Conn, lastSubject *string) *Msg {
	m := &Msg{conn: conn}
	subj := unsafe.String((*byte)(unsafe.Pointer(v.subject)), int(v.subject_len))
	if lastSubject != nil && *lastSubject == subj && subj != "" {
		m.Subject = *lastSubject
	} else {
		m.Subject = strings.Clone(subj)
		if lastSubject != nil {
			*lastSubject = m.Subject
		}
	}
	n, rn := int(v.data_len), int(v.reply_len)
	buf := make([]byte, n+rn)
	copy(buf, unsafe.Slice((*byte)(unsafe.Pointer(v.data)), n))
	m.Data = buf[:n:n]
	if rn > 0 {
		copy(buf[n:], unsafe.Slice((*byte)(unsafe.Pointer(v.reply)), rn))
		m.Reply = unsafe.String(&buf[n], rn)
	}
	if v.headers != nil {
		m.Header = make(Header, int(v.header_count))
		for i := C.size_t(0); i < v.header_count; i++ {
			var name, value *C.char
			if C.natsio_headers_entry(v.headers, i, &name, &value) == C.NATSIO_OK {
				m.Header.Add(C.GoString(name), C.GoString(value))
			}
		}
	}
	return m
}

// copyMsg copies a borrowed C message into Go memory.
func copyMsg(cm *C.natsio_msg, conn *Conn) *Msg {
	var v C.go_msg_view
	C.go_msg_read(cm, &v)
	return msgFromView(&v, conn, nil)
}

// maxBlockingWaits bounds the goroutines waiting for a token inside a
// blocking C call. Such a wait is the fastest (the library's reader wakes
// the waiting thread directly) but holds an OS thread; past the bound,
// waits park the goroutine instead and are woken by a completion callback,
// so thousands of concurrent requests do not become thousands of threads.
var maxBlockingWaits atomic.Int32

var blockingWaits atomic.Int32

func init() { maxBlockingWaits.Store(64) }

// tokenCanceller cancels a token when the context ends, unless the wait
// is over (the token may be freed right after).
type tokenCanceller struct {
	mu   sync.Mutex
	tok  *C.natsio_token
	over bool
}

func (c *tokenCanceller) cancel() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.over {
		// Fails harmlessly (ILLEGAL_STATE) if the operation just completed.
		C.natsio_token_cancel(c.tok)
	}
}

// awaitToken waits until tok completes or ctx ends, and reads the outcome
// (with wantMsg, the reply, which the caller frees). When ctx ends first
// the operation is cancelled: the outcome then is NATSIO_ERR_CANCELLED,
// or with the callback wait, ctxEnded is true and nothing is read.
func awaitToken(ctx context.Context, tok *C.natsio_token, wantMsg bool) (r C.go_msg_result, ctxEnded bool, err error) {
	want := C.int(0)
	if wantMsg {
		want = 1
	}
	if blockingWaits.Add(1) <= maxBlockingWaits.Load() {
		defer blockingWaits.Add(-1)
		var stop func() bool
		var canceller *tokenCanceller
		if ctx.Done() != nil {
			canceller = &tokenCanceller{tok: tok}
			stop = context.AfterFunc(ctx, canceller.cancel)
		}
		r = C.go_token_outcome(tok, -1, want)
		if stop != nil && !stop() {
			// The canceller has started: let it finish before tok can be freed.
			canceller.mu.Lock()
			canceller.over = true
			canceller.mu.Unlock()
		}
	} else {
		blockingWaits.Add(-1)
		if err := waitToken(ctx, tok); err != nil {
			return r, ctx.Err() != nil, err
		}
		r = C.go_token_outcome(tok, 0, want)
	}
	return r, false, resultError(r.status, r.detail)
}

// tokenResult waits for tok and returns its outcome; a timeout or
// cancellation caused by ctx is reported as ctx's error.
func tokenResult(ctx context.Context, tok *C.natsio_token) error {
	r, ended, err := awaitToken(ctx, tok, false)
	if ended {
		return err
	}
	if (r.status == C.NATSIO_ERR_TIMEOUT || r.status == C.NATSIO_ERR_CANCELLED) && ctx.Err() != nil {
		// The library's timeout was the context's deadline, or ctx was cancelled.
		return contextError(ctx)
	}
	return err
}

// request sends a request and waits for its reply.
func (nc *Conn) request(ctx context.Context, subject string, hdrs *C.natsio_headers, data []byte) (*Msg, error) {
	if err := checkNUL(subject); err != nil {
		return nil, err
	}
	start := C.go_request_start(nc.ptr, strPtr(subject), C.size_t(len(subject)), hdrs,
		bytesPtr(data), C.size_t(len(data)), timeoutFrom(ctx))
	runtime.KeepAlive(data)
	if err := resultError(start.status, start.detail); err != nil {
		return nil, err
	}
	r, ended, err := awaitToken(ctx, start.token, true)
	defer C.go_msg_token_free(r.msg, start.token)
	if err != nil {
		if !ended && ctx.Err() != nil {
			// The library's timeout was the context's deadline, or ctx was cancelled.
			return nil, contextError(ctx)
		}
		if deadlineReached(ctx, err) {
			// The library timed out at the context's deadline a moment
			// before the context's own timer fired.
			return nil, &Error{Status: 200, Detail: "context deadline exceeded", cause: context.DeadlineExceeded}
		}
		return nil, err
	}
	return msgFromView(&r.view, nc, nil), nil
}

// nextPumpMsg frees the pump's previous message (done, may be nil) and
// waits for the next one, copied into Go. held is the C message to free
// on the next call; st is NATSIO_OK or why there is no message.
func nextPumpMsg(sub *C.natsio_sub, done *C.natsio_msg, conn *Conn, lastSubject *string) (m *Msg, held *C.natsio_msg, st C.natsio_status) {
	r := C.go_sub_next(sub, done)
	if r.status != C.NATSIO_OK {
		return nil, nil, r.status
	}
	return msgFromView(&r.view, conn, lastSubject), r.msg, r.status
}
