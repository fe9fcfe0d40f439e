package nats

import (
	"context"
	"errors"
	"sync/atomic"
	"time"

	natsio "github.com/libnatsio/natsio/bindings/go"
)

// Subscription is an interest in a subject.
type Subscription struct {
	Subject string
	Queue   string

	nc    *Conn
	inner *natsio.Subscription
	ready chan struct{} // closed once inner is set: handlers wait for it
	sync  bool
	max   atomic.Int64 // AutoUnsubscribe's count, 0 when none
	// push is set instead of inner for a subscription of the legacy
	// JetStream API (JetStreamContext.Subscribe and the like), pull for
	// one of PullSubscribe.
	push *pushSub
	pull *pullSub
	// barriers tracks the messages a callback subscription has handled,
	// for Conn.Barrier (nil for the others, as in nats.go).
	barriers *barrierTracker
}

func (nc *Conn) Subscribe(subj string, cb MsgHandler) (*Subscription, error) {
	return nc.subscribe(subj, "", cb, false)
}

func (nc *Conn) QueueSubscribe(subj, queue string, cb MsgHandler) (*Subscription, error) {
	return nc.subscribe(subj, queue, cb, false)
}

func (nc *Conn) SubscribeSync(subj string) (*Subscription, error) {
	return nc.subscribe(subj, "", nil, false)
}

func (nc *Conn) QueueSubscribeSync(subj, queue string) (*Subscription, error) {
	return nc.subscribe(subj, queue, nil, false)
}

// ChanSubscribe delivers the messages on subj to ch.
func (nc *Conn) ChanSubscribe(subj string, ch chan *Msg) (*Subscription, error) {
	return nc.subscribe(subj, "", func(m *Msg) { ch <- m }, true)
}

func (nc *Conn) ChanQueueSubscribe(subj, queue string, ch chan *Msg) (*Subscription, error) {
	return nc.subscribe(subj, queue, func(m *Msg) { ch <- m }, true)
}

func (nc *Conn) subscribe(subj, queue string, cb MsgHandler, toChannel bool) (*Subscription, error) {
	s := &Subscription{Subject: subj, Queue: queue, nc: nc, ready: make(chan struct{}), sync: cb == nil}
	if cb != nil && !toChannel {
		s.barriers = &barrierTracker{}
	}
	var inner *natsio.Subscription
	var err error
	c := nc.conn()
	switch {
	case cb == nil && queue == "":
		inner, err = c.SubscribeSync(subj)
	case cb == nil:
		inner, err = c.QueueSubscribeSync(subj, queue)
	default:
		handler := func(m *natsio.Msg) {
			<-s.ready
			cb(newMsg(m, s))
			s.barriers.handledOne()
		}
		if queue == "" {
			inner, err = c.Subscribe(subj, handler)
		} else {
			inner, err = c.QueueSubscribe(subj, queue, handler)
		}
	}
	if err != nil {
		return nil, Translate(err)
	}
	s.inner = inner
	close(s.ready)
	nc.subs.Store(inner.SID(), s)
	if nc.subscribes.Add(1)%subsSweep == 0 {
		nc.subs.Range(func(sid, sub any) bool {
			if sub.(*Subscription).inner.IsClosed() {
				nc.subs.Delete(sid)
			}
			return true
		})
	}
	return s, nil
}

func (s *Subscription) Unsubscribe() error {
	if s == nil {
		return ErrBadSubscription
	}
	if s.nc.IsClosed() {
		return ErrConnectionClosed
	}
	if s.push != nil {
		return s.push.stop()
	}
	if s.pull != nil {
		return s.pull.stop()
	}
	if s.inner.IsClosed() {
		return ErrBadSubscription
	}
	s.nc.subs.Delete(s.inner.SID())
	err := Translate(s.inner.Unsubscribe())
	s.barriers.release()
	return err
}

// AutoUnsubscribe ends the subscription after max messages in all.
func (s *Subscription) AutoUnsubscribe(max int) error {
	if s == nil || s.push != nil || s.pull != nil || s.inner.IsClosed() {
		return ErrBadSubscription
	}
	s.max.Store(int64(max))
	return Translate(s.inner.AutoUnsubscribe(max))
}

// Drain stops the subscription's interest and lets its handler finish what
// arrived; it returns at once, as nats.go's does.
func (s *Subscription) Drain() error {
	if s == nil || !s.IsValid() {
		return ErrBadSubscription
	}
	if s.nc.IsClosed() {
		return ErrConnectionClosed
	}
	if s.push != nil {
		return s.push.drain()
	}
	if s.pull != nil {
		return s.pull.stop()
	}
	go func() {
		_ = s.inner.Drain(context.Background())
		s.barriers.release()
	}()
	return nil
}

// NextMsg waits up to timeout for the next message of a synchronous
// subscription.
func (s *Subscription) NextMsg(timeout time.Duration) (*Msg, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	msg, err := s.nextMsg(ctx)
	if errors.Is(err, context.DeadlineExceeded) {
		return nil, ErrTimeout
	}
	return msg, err
}

func (s *Subscription) NextMsgWithContext(ctx context.Context) (*Msg, error) {
	if ctx == nil {
		return nil, ErrInvalidContext
	}
	return s.nextMsg(ctx)
}

func (s *Subscription) nextMsg(ctx context.Context) (*Msg, error) {
	if s == nil {
		return nil, ErrBadSubscription
	}
	if !s.sync {
		return nil, ErrSyncSubRequired
	}
	if s.push != nil {
		return s.push.next(ctx, s)
	}
	if s.pull != nil {
		return nil, ErrTypeSubscription // read with Fetch, as in nats.go
	}
	m, err := s.inner.NextMsg(ctx)
	switch {
	case err == nil:
		return newMsg(m, s), nil
	case errors.Is(err, natsio.ErrDone):
		if max := s.max.Load(); max > 0 {
			if d, _ := s.Delivered(); d >= max {
				return nil, ErrMaxMessages
			}
		}
		if s.nc.IsClosed() {
			return nil, ErrConnectionClosed
		}
		return nil, ErrBadSubscription
	case ctx.Err() != nil:
		return nil, ctx.Err()
	}
	return nil, Translate(err)
}

// IsValid reports whether the subscription is still active.
func (s *Subscription) IsValid() bool {
	if s != nil && s.push != nil {
		return !s.push.stopped()
	}
	if s != nil && s.pull != nil {
		return !s.pull.stopped.Load()
	}
	return s != nil && !s.inner.IsClosed()
}

// Pending is how many messages and bytes are queued, not yet delivered.
func (s *Subscription) Pending() (int, int, error) {
	st, err := s.stats()
	return int(st.PendingMsgs), int(st.PendingBytes), err
}

// Delivered is how many messages were handed to the application.
func (s *Subscription) Delivered() (int64, error) {
	st, err := s.stats()
	return int64(st.Delivered), err
}

// Dropped is how many messages the pending limits dropped.
func (s *Subscription) Dropped() (int, error) {
	st, err := s.stats()
	return int(st.Dropped), err
}

func (s *Subscription) stats() (natsio.SubStats, error) {
	if s == nil {
		return natsio.SubStats{}, ErrBadSubscription
	}
	if s.push != nil {
		return s.push.stats()
	}
	if s.pull != nil {
		// Fetch hands its messages over at once: nothing waits here.
		return natsio.SubStats{}, nil
	}
	st, err := s.inner.Stats()
	if err != nil {
		return st, ErrBadSubscription
	}
	return st, nil
}
