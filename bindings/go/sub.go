package natsio

/*
#include "natsio_go.h"
*/
import "C"

import (
	"context"
	"iter"
	"runtime"
	"unsafe"
)

// Subscription is an interest in a subject: a callback subscription
// (Subscribe) or a synchronous one read with NextMsg or Msgs (SubscribeSync).
// All methods are safe for concurrent use.
type Subscription struct {
	ptr     *C.natsio_sub
	conn    *Conn
	subject string
	queue   string
	cb      *subState // nil for a synchronous subscription
}

// finalize frees the handle once nothing refers to the Subscription. A
// callback subscription keeps running without references (it belongs to
// its connection, as its handler does): the library's handle of its state
// refers to it until it has ended.
func (s *Subscription) finalize() {
	C.natsio_sub_free(s.ptr)
}

// Subject is the subject subscribed to.
func (s *Subscription) Subject() string { return s.subject }

// Queue is the queue group, or "".
func (s *Subscription) Queue() string { return s.queue }

// SID is the subscription id.
func (s *Subscription) SID() uint64 {
	id := uint64(C.natsio_sub_sid(s.ptr))
	runtime.KeepAlive(s)
	return id
}

// IsClosed reports whether the subscription has ended.
func (s *Subscription) IsClosed() bool {
	closed := bool(C.natsio_sub_is_closed(s.ptr))
	runtime.KeepAlive(s)
	return closed
}

// NextMsg waits for the next message of a synchronous subscription until
// ctx ends. A message already queued is returned at once; otherwise the
// wait is a library token that ctx's end withdraws, so no message is lost
// and no OS thread is held.
// Errors: ErrDone once the subscription has ended without error
// (Unsubscribe, Drain, AutoUnsubscribe reached), ErrConnectionClosed once
// the connection is closed, ErrSlowConsumer after PolicyError failed it,
// ErrNoResponders for a no-responders status message, ErrIllegalState for
// a callback subscription (its messages belong to its handler), and ctx's
// error (matching ErrTimeout too for a deadline).
func (s *Subscription) NextMsg(ctx context.Context) (*Msg, error) {
	defer runtime.KeepAlive(s)
	return iterNext(ctx, unsafe.Pointer(s.ptr), C.GO_ITER_SUB, keepMsg(s.conn))
}

// Msgs iterates over the messages of a synchronous subscription until it
// ends without error (Unsubscribe, Drain, AutoUnsubscribe reached), which
// ends the loop quietly. Any error, ctx's end and a closed connection
// included, is yielded once, last.
func (s *Subscription) Msgs(ctx context.Context) iter.Seq2[*Msg, error] {
	return func(yield func(*Msg, error) bool) {
		for {
			m, err := s.NextMsg(ctx)
			if isDone(err) {
				return
			}
			if !yield(m, err) || err != nil {
				return
			}
		}
	}
}

// Unsubscribe stops delivery at once and discards queued messages. Once it
// returns the handler is not called again (unless Unsubscribe is called
// from the handler itself, whose call then finishes): the library's
// guarantee. Unsubscribing an ended subscription does nothing.
func (s *Subscription) Unsubscribe() error {
	subStops.Add(1) // see natsioGoMsgs
	lockThread()
	err := statusError(C.natsio_sub_stop(s.ptr))
	unlockThread()
	runtime.KeepAlive(s)
	return err
}

// AutoUnsubscribe asks the server to stop after max messages in total
// (counting those already received); the subscription ends by itself once
// they are handled.
func (s *Subscription) AutoUnsubscribe(max int) error {
	count := C.uint64_t(0) // the library rejects 0 (and so a negative max)
	if max > 0 {
		count = C.uint64_t(max)
	}
	lockThread()
	err := statusError(C.natsio_sub_unsubscribe_after(s.ptr, count))
	unlockThread()
	runtime.KeepAlive(s)
	return err
}

// Drain stops new deliveries, lets the queued backlog be handled, then
// ends the subscription; it waits until then. The drain is bounded by
// ctx's deadline or, without one, by the connection's DrainTimeout option
// (default 30s): past it Drain fails with ErrTimeout and the drain goes
// on. If ctx is cancelled, Drain returns ctx.Err() and the
// drain goes on. For a synchronous subscription another goroutine must
// read the backlog. Called from the subscription's own handler it starts
// the drain and returns at once (the drain ends after that handler
// returns).
func (s *Subscription) Drain(ctx context.Context) error {
	if ctx.Err() != nil {
		return contextError(ctx)
	}
	defer runtime.KeepAlive(s)
	timeout := timeoutArg(ctx) // NATSIO_TIMEOUT_DEFAULT: the drain timeout
	if s.cb != nil && s.cb.calledFromHandler() {
		// The drain ends after this handler: start it and return.
		return rawSubDrain(waitingBy(ctx, startOnly), s.ptr, int64(timeout))
	}
	return rawSubDrain(waitingBy(ctx, leaveOnEnd), s.ptr, int64(timeout))
}

// SubStats are a subscription's live counters.
type SubStats struct {
	Delivered    uint64 // messages handed to the application
	Dropped      uint64 // messages dropped by the pending-limit policy
	PendingMsgs  uint64 // queued, not yet delivered
	PendingBytes uint64 // their size: header and payload bytes
}

// Stats reads the live counters.
func (s *Subscription) Stats() (SubStats, error) {
	var cs C.natsio_iter_stats
	lockThread()
	err := statusError(C.natsio_sub_get_stats(s.ptr, &cs))
	unlockThread()
	runtime.KeepAlive(s)
	return SubStats{
		Delivered:    uint64(cs.delivered),
		Dropped:      uint64(cs.dropped),
		PendingMsgs:  uint64(cs.pending_items),
		PendingBytes: uint64(cs.pending_bytes),
	}, err
}
