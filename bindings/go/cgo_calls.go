package natsio

// The per-message paths (publish, request, iterator reads, KV get) cross
// into C through the small wrappers of natsio_go.c, each doing in one cgo
// call what would otherwise take several:
//   - strings are passed as (pointer, length) into Go memory and made
//     NUL-terminated in C, on the C stack, so a publish allocates nothing in Go;
//   - the failure detail (natsio_last_error, thread-local) is copied in the
//     same call that failed, so no goroutine has to be pinned to its OS
//     thread (runtime.LockOSThread) around the call;
//   - handles come back in returned structs rather than through Go
//     pointers, which would force the out variables onto the heap;
//   - the readers that fill a view or a result through a pointer
//     (go_*_read, go_token_take) are marked noescape and nocallback (for
//     the package: cgo matches the names in every file; noescape takes
//     effect only with nocallback): they keep nothing and call no Go (they
//     read accessors, and go_token_take frees a token whose result it has
//     taken), so the view stays on the caller's stack instead of costing
//     an allocation per message.

/*
#cgo noescape go_token_take
#cgo nocallback go_token_take
#cgo noescape go_msg_read_js
#cgo nocallback go_msg_read_js
#cgo noescape go_entry_read
#cgo nocallback go_entry_read
#cgo noescape go_service_request_read
#cgo nocallback go_service_request_read
#cgo noescape go_kv_status_read
#cgo nocallback go_kv_status_read
#cgo noescape go_obj_info_read
#cgo nocallback go_obj_info_read
#cgo noescape go_obj_status_read
#cgo nocallback go_obj_status_read
#include <stdlib.h>
#include "natsio_go.h"
*/
import "C"

import (
	"context"
	"runtime"
	"slices"
	"strings"
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

// resultError turns a wrapper's status and detail (go_detail: the text
// and the error data) into an error, freeing the detail.
func resultError(st C.natsio_status, detail *C.go_error) error {
	if detail != nil {
		defer C.free(unsafe.Pointer(detail))
	}
	if st == C.NATSIO_OK {
		return nil
	}
	e := &Error{Status: Status(st)}
	if detail != nil {
		e.Detail = C.GoString(detail.text)
		e.APICode = int(detail.api_code)
		e.ErrCode = int(detail.err_code)
		e.Revision = uint64(detail.revision)
	}
	return e
}

// publish sends data (and hdrs, and reply with GO_PUB_WITH_REPLY) to
// subject; mode is a GO_PUB_ value.
func (nc *Conn) publish(subject, reply string, mode C.int, hdrs *C.natsio_headers, data []byte) error {
	// A plain publish passes the subject with its length (the library
	// refuses a NUL byte); the others pass C strings.
	if mode != C.GO_PUB_PLAIN || hdrs != nil {
		if err := checkNUL(subject); err != nil {
			return err
		}
	}
	if mode == C.GO_PUB_WITH_REPLY {
		if err := checkNUL(reply); err != nil {
			return err
		}
	}
	r := C.go_publish(nc.ptr, strPtr(subject), C.size_t(len(subject)), strPtr(reply), C.size_t(len(reply)),
		mode, hdrs, bytesPtr(data), C.size_t(len(data)))
	runtime.KeepAlive(nc)
	runtime.KeepAlive(data)
	if r.status == C.NATSIO_OK {
		return nil
	}
	return resultError(r.status, r.detail)
}

// msgFromView copies a borrowed C message into Go memory: the subject (or
// the cached string when it repeats), and data and reply together in one
// allocation. Data is capped at its length, so appending to it never
// reaches the reply's bytes.
func msgFromView(v *C.go_msg_view, conn *Conn, lastSubject *string) *Msg {
	m := &Msg{conn: conn, Status: int(v.f.status), Sid: uint64(v.f.sid)}
	subj := unsafe.String((*byte)(unsafe.Pointer(v.f.subject)), int(v.f.subject_len))
	if lastSubject != nil && *lastSubject == subj && subj != "" {
		m.Subject = *lastSubject
	} else {
		m.Subject = strings.Clone(subj)
		if lastSubject != nil {
			*lastSubject = m.Subject
		}
	}
	n, rn := int(v.f.data_len), int(v.f.reply_len)
	data := unsafe.Slice((*byte)(unsafe.Pointer(v.f.data)), n)
	if rn == 0 && n > 0 {
		// append allocates without zeroing what it copies over (make
		// zeroes first): the common case, a payload without reply.
		m.Data = slices.Clip(append([]byte(nil), data...))
	} else {
		buf := make([]byte, n+rn)
		copy(buf, data)
		m.Data = buf[:n:n]
		if rn > 0 {
			copy(buf[n:], unsafe.Slice((*byte)(unsafe.Pointer(v.f.reply)), rn))
			m.Reply = unsafe.String(&buf[n], rn)
		}
	}
	if v.f.status != 0 {
		if d := C.natsio_headers_status_description(v.f.headers); d != nil {
			m.StatusDescription = C.GoString(d)
		}
	}
	if v.f.headers != nil {
		m.HeadersMalformed = bool(C.natsio_headers_malformed(v.f.headers))
		m.Header = make(Header, int(v.f.header_count))
		for i := C.size_t(0); i < v.f.header_count; i++ {
			var name, value *C.char
			if C.natsio_headers_entry(v.f.headers, i, &name, &value) == C.NATSIO_OK {
				m.Header.Add(C.GoString(name), C.GoString(value))
			}
		}
	}
	return m
}

// request sends a request and waits for its reply in this goroutine; ctx's
// end cancels it.
func (nc *Conn) request(ctx context.Context, subject string, hdrs *C.natsio_headers, data []byte) (*Msg, error) {
	if err := checkNUL(subject); err != nil {
		return nil, err
	}
	st := C.go_request_start(nc.ptr, strPtr(subject), C.size_t(len(subject)), hdrs,
		bytesPtr(data), C.size_t(len(data)), timeoutArg(ctx))
	runtime.KeepAlive(data)
	if err := resultError(st.status, st.detail); err != nil {
		return nil, err
	}
	var r C.go_take
	if err := awaitStarted(ctx, st.token, C.GO_TAKE_MSG, &r); err != nil {
		return nil, err
	}
	defer C.natsio_msg_free((*C.natsio_msg)(r.out))
	return msgFromView(&r.msg, nc, nil), nil
}

// iterNext reads one item of a library iterator (a GO_ITER_ kind): one
// ready now is taken at once; otherwise a _next_async token is waited on
// in this goroutine, and ctx's end withdraws it (an item already on its
// way to it is still returned). keep(r) copies the item into Go; the C
// item is freed after it. NATSIO_DONE (the iteration ended without error)
// is returned as errDone.
func iterNext[T any](ctx context.Context, it unsafe.Pointer, kind C.int, keep func(item unsafe.Pointer, msg C.go_msg_view, entry C.go_entry_view) T) (T, error) {
	var zero T
	if ctx.Err() != nil {
		return zero, contextError(ctx)
	}
	enterLib()
	n := C.go_iter_next(it, kind)
	leaveLib()
	switch n.status {
	case C.NATSIO_OK:
		return keep(n.item, n.msg, n.entry), nil
	case C.NATSIO_DONE:
		return zero, errDone()
	case C.NATSIO_PENDING:
	default:
		return zero, resultError(n.status, n.detail)
	}
	takeKind := C.go_iter_take_kind(kind)
	// A cancelled wait leaves the item in the iterator (the token is
	// withdrawn); one already on its way is returned.
	var r C.go_take
	err := awaitToken(ctx, n.token, takeKind, cancelOnEnd, &r)
	if r.status == C.NATSIO_DONE {
		return zero, errDone()
	}
	if err != nil {
		return zero, ctxOutcome(ctx, err)
	}
	return keep(r.out, r.msg, r.entry), nil
}

// keepMsg copies a library message into Go and frees it.
func keepMsg(conn *Conn) func(unsafe.Pointer, C.go_msg_view, C.go_entry_view) *Msg {
	return func(item unsafe.Pointer, v C.go_msg_view, _ C.go_entry_view) *Msg {
		m := msgFromView(&v, conn, nil)
		C.natsio_msg_free((*C.natsio_msg)(item))
		return m
	}
}
