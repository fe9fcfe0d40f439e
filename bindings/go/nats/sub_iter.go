package nats

import (
	"context"
	"errors"
	"iter"
	"time"
)

// Msgs iterates over a synchronous subscription's messages, waiting as long
// as it takes for each. The first error (ErrSyncSubRequired for a callback
// subscription, ErrBadSubscription once it has ended, ...) is yielded and
// ends the loop. Ending the loop does not end the subscription.
func (s *Subscription) Msgs() iter.Seq2[*Msg, error] {
	return func(yield func(*Msg, error) bool) {
		for {
			msg, err := s.nextMsg(context.Background())
			if err != nil {
				yield(nil, err)
				return
			}
			if !yield(msg, nil) {
				return
			}
		}
	}
}

// MsgsTimeout is Msgs waiting up to timeout for each message: a wait that
// times out yields ErrTimeout and the loop goes on; any other error is
// yielded and ends it.
func (s *Subscription) MsgsTimeout(timeout time.Duration) iter.Seq2[*Msg, error] {
	return func(yield func(*Msg, error) bool) {
		for {
			msg, err := s.NextMsg(timeout)
			if !yield(msg, err) {
				return
			}
			if err != nil && !errors.Is(err, ErrTimeout) {
				return
			}
		}
	}
}
