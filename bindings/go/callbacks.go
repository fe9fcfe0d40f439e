package natsio

// The functions exported here are the only way C reaches Go (with those of
// reconnect_auth_tls.go). Each receives its user_data as a runtime/cgo.Handle (never
// a Go pointer); the handle is deleted by natsioGoRelease, which the
// library calls once it will not call back with that user_data again (or,
// for token callbacks, see tokenWaiter).

/*
#include <stdint.h>
#include "natsio_go.h"
*/
import "C"

import (
	"fmt"
	"runtime/cgo"
	"sync/atomic"
	"time"
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

//export natsioGoError
func natsioGoError(userData unsafe.Pointer, status C.natsio_status, text *C.char, sid C.uint64_t, subject *C.char) {
	sink := valueOf(userData).(*errorSink)
	registerLibThread(sink.clientPtr())
	aerr := &AsyncError{
		Err: &Error{Status: Status(status), Detail: C.GoString(text)},
		SID: uint64(sid),
	}
	if subject != nil {
		aerr.Subject = C.GoString(subject)
	}
	sink.report(aerr)
}

// subState is the user data of a callback subscription (its push mode in
// the library: natsio_sub_set_callback).
type subState struct {
	// sub is held strongly on purpose: a callback subscription (and so
	// its connection) stays alive and serving until it ends, even if the
	// program keeps no reference to it. The handle holding this state is
	// deleted after the library's last call.
	sub     *Subscription
	handler MsgHandler
	// thread is the library thread delivering the messages (one per
	// subscription), set at the first call; 0 before.
	thread      atomic.Uintptr
	lastSubject string // only touched by the delivering thread
	ended       chan struct{}
	endStatus   atomic.Int32
}

// natsioGoMsgs receives the messages of a callback subscription in
// batches (their fields read by go_sub_msgs), in order, on the
// subscription's library thread, and hands them to the handler one at a
// time; then once with no views and the status that ended it. A batch is
// cut short once the library has cut the subscription
// (natsio_sub_is_stopped: Unsubscribe, Close, a drain timeout), as a
// per-message callback would have been.
//
// Asking the library between every two messages is a Go-to-C call inside
// the C-to-Go call, which costs more than the rest of a small message's
// delivery. So it is asked when a Go call that stops subscriptions
// (Unsubscribe, Close) has started since the batch began, which covers a
// handler that unsubscribes and every goroutine's stop. For what the
// library stops by itself (a drain timeout, a slow consumer's error, a
// connection given up) it is asked between every two messages when the
// batch's first message took the handler subStopSlow or more (a clock
// read per message would cost as much as the call), else every
// subStopCheckEvery messages.
//
//export natsioGoMsgs
func natsioGoMsgs(userData unsafe.Pointer, views *C.go_msg_view, count C.size_t, status C.natsio_status) {
	st := valueOf(userData).(*subState)
	conn := st.sub.conn
	if st.thread.Load() == 0 {
		st.thread.Store(registerLibThread(conn.ptr))
	}
	if views == nil {
		st.endStatus.Store(int32(status))
		unregisterLibThread(st.thread.Load())
		close(st.ended)
		return
	}
	stops := subStops.Load()
	var began time.Time
	slow := false
	for i, v := range unsafe.Slice(views, int(count)) {
		// Between messages: a stop, close or drain timeout during the
		// handler discards the rest, as per message it would have (the
		// first was taken while the subscription was delivering).
		switch {
		case i == 0:
			if count > 1 {
				began = time.Now()
			}
		case i == 1:
			slow = time.Since(began) >= subStopSlow
			fallthrough
		default:
			if (slow || i%subStopCheckEvery == 0 || subStops.Load() != stops) &&
				bool(C.natsio_sub_is_stopped(st.sub.ptr)) {
				return
			}
		}
		st.deliver(msgFromView(&v, conn, &st.lastSubject))
	}
}

// subStops counts the Go calls that may stop callback subscriptions
// (Unsubscribe, Close), bumped before the call: see natsioGoMsgs.
var subStops atomic.Uint64

// How often natsioGoMsgs asks the library whether the subscription was
// stopped when no Go call may have stopped it: between every two messages
// of a batch whose first took subStopSlow or more, else every
// subStopCheckEvery messages.
const (
	subStopSlow       = 20 * time.Microsecond
	subStopCheckEvery = 8
)

func (st *subState) deliver(m *Msg) {
	defer func() {
		if v := recover(); v != nil {
			st.sub.conn.errors.report(&AsyncError{
				Err:     fmt.Errorf("%w: %v", ErrHandlerPanic, v),
				SID:     st.sub.SID(),
				Subject: st.sub.subject,
			})
		}
	}()
	st.handler(m)
}

// calledFromHandler reports whether the caller runs in this
// subscription's handler.
func (st *subState) calledFromHandler() bool {
	t := st.thread.Load()
	return t != 0 && t == currentThread()
}

// errorSink is the user data of the error callback; panics of message
// handlers are reported to it too.
type errorSink struct {
	handler func(error)
	client  atomic.Value // *C.natsio_client, set once connected
}

func (s *errorSink) clientPtr() *C.natsio_client {
	c, _ := s.client.Load().(*C.natsio_client)
	return c
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
