package natsio

/*
#include "natsio.h"
*/
import "C"

import (
	"context"
	"errors"
	"iter"
	"runtime"
	"time"
)

// Subscription is an interest in a subject: a callback subscription
// (Subscribe) or a synchronous one read with NextMsg or Msgs (SubscribeSync).
// All methods are safe for concurrent use.
type Subscription struct {
	ptr     *C.natsio_sub
	conn    *Conn
	subject string
	queue   string
	pump    *pump // nil for a synchronous subscription
}

// finalize frees the handle once nothing refers to the Subscription. A
// callback subscription keeps running without references (it belongs to
// its connection, as its handler does): its pump refers to it until it
// has ended.
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

// pollInterval bounds each blocking wait of NextMsg so that a cancelled
// context is noticed: the C ABI offers no way to interrupt a waiting
// natsio_sub_next_msg, and handing the wait to a goroutine would take a
// message off the queue that nobody might then read.
const pollInterval = 20 * time.Millisecond

// NextMsg waits for the next message of a synchronous subscription until
// ctx ends. Errors: ErrSubscriptionClosed once it has ended (or for a
// callback subscription), ErrSlowConsumer after PolicyError failed it,
// ErrNoResponders for a no-responders status message, and ctx's error
// (matching ErrTimeout too for a deadline).
func (s *Subscription) NextMsg(ctx context.Context) (*Msg, error) {
	if s.pump != nil {
		// Its messages belong to its handler.
		return nil, &Error{Status: Status(ErrSubscriptionClosed.(*sentinel).code), Detail: "NextMsg is not available on a callback subscription"}
	}
	defer runtime.KeepAlive(s)
	for {
		if ctx.Err() != nil {
			return nil, contextError(ctx)
		}
		wait := C.int64_t(-1) // context.Background and the like never end
		if ctx.Done() != nil {
			wait = millis(pollInterval)
			if deadline, ok := ctx.Deadline(); ok {
				if left := millis(time.Until(deadline)); left < wait {
					wait = max(left, 0)
				}
			}
		}
		var cm *C.natsio_msg
		lockThread()
		st := C.natsio_sub_next_msg(s.ptr, wait, &cm)
		err := statusError(st)
		unlockThread()
		if st == C.NATSIO_ERR_TIMEOUT {
			continue
		}
		if err != nil {
			return nil, err
		}
		m := copyMsg(cm, s.conn)
		C.natsio_msg_free(cm)
		return m, nil
	}
}

// Msgs iterates over the messages of a synchronous subscription until it
// ends (Unsubscribe, Drain, AutoUnsubscribe reached, connection closed),
// which ends the loop quietly. Any other error, ctx's end included, is
// yielded once, last.
func (s *Subscription) Msgs(ctx context.Context) iter.Seq2[*Msg, error] {
	return func(yield func(*Msg, error) bool) {
		for {
			m, err := s.NextMsg(ctx)
			if errors.Is(err, ErrSubscriptionClosed) {
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
// from the handler itself).
func (s *Subscription) Unsubscribe() error {
	lockThread()
	err := statusError(C.natsio_sub_unsubscribe(s.ptr))
	unlockThread()
	runtime.KeepAlive(s)
	if s.pump != nil {
		s.pump.halt()
	}
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
// ends the subscription; it waits until then or until ctx ends (the drain
// goes on). For a synchronous subscription another goroutine must read the
// backlog.
func (s *Subscription) Drain(ctx context.Context) error {
	if ctx.Err() != nil {
		return contextError(ctx)
	}
	defer runtime.KeepAlive(s)
	tok, err := startSubDrain(s.ptr)
	if err != nil {
		return err
	}
	defer C.natsio_token_free(tok)
	if err := tokenResult(ctx, tok); err != nil {
		return err
	}
	if s.pump != nil {
		// The library is done once the backlog is off its queue; the
		// pump may still be handling the last message.
		return s.pump.waitExited(ctx)
	}
	return nil
}

// SubStats are a subscription's live counters.
type SubStats struct {
	Delivered    uint64 // messages handed to the application
	Dropped      uint64 // messages dropped by the pending-limit policy
	PendingMsgs  uint64 // queued, not yet delivered
	PendingBytes uint64
}

// Stats reads the live counters.
func (s *Subscription) Stats() (SubStats, error) {
	var cs C.natsio_sub_stats
	lockThread()
	err := statusError(C.natsio_sub_get_stats(s.ptr, &cs))
	unlockThread()
	runtime.KeepAlive(s)
	return SubStats{
		Delivered:    uint64(cs.delivered),
		Dropped:      uint64(cs.dropped),
		PendingMsgs:  uint64(cs.pending_msgs),
		PendingBytes: uint64(cs.pending_bytes),
	}, err
}
