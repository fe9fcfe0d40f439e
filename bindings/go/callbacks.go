package natsio

// The functions exported here are the only way C reaches Go. Each receives
// its user_data as a runtime/cgo.Handle (never a Go pointer); the handle is
// deleted only by natsioGoRelease, which the library calls once it will
// not call back with that user_data again.

/*
#include <stdint.h>
#include "natsio.h"
*/
import "C"

import (
	"fmt"
	"runtime/cgo"
	"sync/atomic"
	"unsafe"
)

// releaser is implemented by handle values that need to know when the
// library has let go of them.
type releaser interface{ released() }

func handleOf(userData unsafe.Pointer) cgo.Handle { return cgo.Handle(uintptr(userData)) }

func valueOf(userData unsafe.Pointer) any { return handleOf(userData).Value().(*handleBox).value }

// handleBox is what every handle holds: the value, and whether the library
// has released it. A registration that fails may or may not have released
// its user data already (the library drops it on some failure paths), so
// the caller deletes the handle only if it has not been.
type handleBox struct {
	value    any
	released atomic.Bool
}

//export natsioGoRelease
func natsioGoRelease(userData unsafe.Pointer) {
	h := handleOf(userData)
	box := h.Value().(*handleBox)
	// Tell a failed registration (discardHandle) that the handle is gone.
	box.released.Store(true)
	if r, ok := box.value.(releaser); ok {
		r.released()
	}
	deleteHandle(h)
}

//export natsioGoTokenDone
func natsioGoTokenDone(userData unsafe.Pointer, _ *C.natsio_token) {
	close(valueOf(userData).(tokenDone))
}

//export natsioGoError
func natsioGoError(userData unsafe.Pointer, status C.natsio_status, text *C.char, sid C.uint64_t, subject *C.char) {
	sink := valueOf(userData).(*errorSink)
	aerr := &AsyncError{
		Err: &Error{Status: Status(status), Detail: C.GoString(text)},
		SID: uint64(sid),
	}
	if subject != nil {
		aerr.Subject = C.GoString(subject)
	}
	sink.report(aerr)
}

// subState is what the pump of a callback subscription delivers with.
type subState struct {
	// conn is held strongly on purpose: a connection serving a callback
	// subscription stays alive (and serving) until it is closed or the
	// subscription ends, even if the program keeps no reference to it.
	conn    *Conn
	handler MsgHandler
	subject string
	sid     atomic.Uint64 // set right after subscribing, when a callback may already run
}

func (st *subState) deliver(m *Msg) {
	defer func() {
		if v := recover(); v != nil {
			st.conn.errors.report(&AsyncError{
				Err:     fmt.Errorf("%w: %v", ErrHandlerPanic, v),
				SID:     st.sid.Load(),
				Subject: st.subject,
			})
		}
	}()
	st.handler(m)
}

// tokenDone is closed when a completion token completes.
type tokenDone chan struct{}

// errorSink is the user data of the error callback; panics of message
// handlers are reported to it too.
type errorSink struct {
	handler func(error)
}

func (s *errorSink) report(err error) {
	if s == nil || s.handler == nil {
		return
	}
	defer func() {
		// A panicking error handler must not unwind into C.
		_ = recover()
	}()
	s.handler(err)
}

// liveHandles counts the handles C still holds, so tests can check that
// every one is released.
var liveHandles atomic.Int64

func newHandle(v any) (cgo.Handle, *handleBox) {
	liveHandles.Add(1)
	box := &handleBox{value: v}
	return cgo.NewHandle(box), box
}

// discardHandle deletes the handle of a failed registration unless the
// library released it already.
func discardHandle(h cgo.Handle, box *handleBox) {
	if !box.released.Load() {
		deleteHandle(h)
	}
}

func deleteHandle(h cgo.Handle) {
	h.Delete()
	liveHandles.Add(-1)
}
