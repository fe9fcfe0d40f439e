package nats

import (
	"context"
	"errors"
	"sync"
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
	// toChannel: ChanSubscribe's, whose handler sends on the channel.
	toChannel bool
	max       atomic.Int64 // AutoUnsubscribe's count, 0 when none
	// handled counts the messages handed to a callback subscription's
	// handler or taken with NextMsg, for AutoUnsubscribe's end.
	handled atomic.Int64
	// deliver hands a message to a callback subscription's handler.
	deliver func(*natsio.Msg)
	// queue is the facade's own pending queue, once the program has used
	// the pending-limit calls (see pendingQueue); queueMu orders its start.
	queue   atomic.Pointer[pendingQueue]
	queueMu sync.Mutex
	life    subLife
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
	s := &Subscription{Subject: subj, Queue: queue, nc: nc, ready: make(chan struct{}), sync: cb == nil,
		toChannel: toChannel}
	if cb != nil && !toChannel {
		s.barriers = &barrierTracker{}
	}
	// nats.go's limits, which PendingLimits reports.
	limits := natsio.SubPendingLimits(int64(s.initialMsgsLimit()), DefaultSubPendingBytesLimit)
	var inner *natsio.Subscription
	var err error
	c := nc.conn()
	switch {
	case cb == nil && queue == "":
		inner, err = c.SubscribeSync(subj, limits)
	case cb == nil:
		inner, err = c.QueueSubscribeSync(subj, queue, limits)
	default:
		s.deliver = func(m *natsio.Msg) {
			cb(newMsg(m, s))
			s.barriers.handledOne()
			if s.countHandled() {
				s.ended()
			}
		}
		handler := func(m *natsio.Msg) {
			<-s.ready
			if q := s.queue.Load(); q != nil {
				s.queueReceived(q, m)
				return
			}
			s.deliver(m)
		}
		if queue == "" {
			inner, err = c.Subscribe(subj, handler, limits)
		} else {
			inner, err = c.QueueSubscribe(subj, queue, handler, limits)
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

// countHandled counts a message handed out; true when it was the last
// AutoUnsubscribe allowed.
func (s *Subscription) countHandled() (last bool) {
	n := s.handled.Add(1)
	max := s.max.Load()
	return max > 0 && n >= max
}

func (s *Subscription) Unsubscribe() error {
	if s == nil {
		return ErrBadSubscription
	}
	if s.nc.IsClosed() {
		return ErrConnectionClosed
	}
	if s.push != nil || s.pull != nil {
		return s.stopJetStream()
	}
	if s.inner.IsClosed() {
		return ErrBadSubscription
	}
	s.nc.subs.Delete(s.inner.SID())
	if q := s.queue.Load(); q != nil {
		q.stop()
	}
	err := Translate(s.inner.Unsubscribe())
	s.barriers.release()
	if err == nil {
		s.ended()
	}
	return err
}

// stopJetStream ends a legacy JetStream subscription at once; it has
// ended even when deleting its consumer failed.
func (s *Subscription) stopJetStream() error {
	var err error
	if s.push != nil {
		err = s.push.stop()
	} else {
		err = s.pull.stop()
	}
	if err != ErrBadSubscription {
		s.ended()
	}
	return err
}

// AutoUnsubscribe ends the subscription after max messages in all.
func (s *Subscription) AutoUnsubscribe(max int) error {
	if s == nil || s.push != nil || s.pull != nil || s.inner.IsClosed() {
		return ErrBadSubscription
	}
	s.max.Store(int64(max))
	if err := Translate(s.inner.AutoUnsubscribe(max)); err != nil {
		return err
	}
	if !s.sync && max > 0 && s.handled.Load() >= int64(max) {
		s.ended() // nothing more comes
	}
	return nil
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
		return s.stopJetStream() // nothing waits in a pull subscription
	}
	s.setStatus(SubscriptionDraining)
	go func() {
		_ = s.inner.Drain(context.Background())
		if q := s.queue.Load(); q != nil {
			if !s.sync {
				q.finish(nil) // the library handed everything over
			}
			<-q.done
		}
		s.barriers.release()
		s.ended()
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
	var m *natsio.Msg
	var err error
	if q := s.queue.Load(); q != nil {
		if q.takeSlow() {
			s.setStatus(SubscriptionActive)
			return nil, ErrSlowConsumer
		}
		var item pendingItem
		var ok bool
		item, ok, err = q.next(ctx, false, 0)
		switch {
		case ok:
			m, err = item.msg, item.err
		case err == ErrBadSubscription:
			return nil, err
		case err == nil:
			err = natsio.ErrDone
		}
	} else {
		m, err = s.inner.NextMsg(ctx)
	}
	switch {
	case err == nil:
		if s.countHandled() {
			s.ended()
		}
		return newMsg(m, s), nil
	case errors.Is(err, natsio.ErrDone):
		if max := s.max.Load(); max > 0 && s.handled.Load() >= max {
			return nil, ErrMaxMessages
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

// IsValid reports whether the subscription is still active (also while
// it drains).
func (s *Subscription) IsValid() bool {
	if s != nil && s.push != nil {
		return !s.push.stopped()
	}
	if s != nil && s.pull != nil {
		return !s.pull.stopped.Load()
	}
	if s == nil {
		return false
	}
	if q := s.queue.Load(); q != nil && s.inner.IsClosed() {
		select {
		case <-q.done:
			return false
		default:
			return !s.nc.IsClosed()
		}
	}
	return !s.inner.IsClosed()
}

// Pending is how many messages and bytes are queued, not yet delivered
// (for a callback subscription, the message its handler is on counts
// until it returns, as in nats.go). Once the subscription has ended: -1,
// -1 and ErrBadSubscription, as Delivered's and Dropped's -1.
func (s *Subscription) Pending() (int, int, error) {
	st, err := s.stats()
	if err != nil {
		return -1, -1, err
	}
	return int(st.PendingMsgs), int(st.PendingBytes), nil
}

// QueuedMsgs is how many messages are queued, not yet delivered.
//
// Deprecated: Use Pending(), as in nats.go.
func (s *Subscription) QueuedMsgs() (int, error) {
	msgs, _, err := s.Pending()
	return msgs, err
}

// Delivered is how many messages were handed to the application.
func (s *Subscription) Delivered() (int64, error) {
	st, err := s.stats()
	if err != nil {
		return -1, err
	}
	return int64(st.Delivered), nil
}

// Dropped is how many messages the pending limits dropped.
func (s *Subscription) Dropped() (int, error) {
	st, err := s.stats()
	if err != nil {
		return -1, err
	}
	return int(st.Dropped), nil
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
	if !s.IsValid() {
		return natsio.SubStats{}, ErrBadSubscription
	}
	st, err := s.inner.Stats()
	if err != nil {
		return st, ErrBadSubscription
	}
	if q := s.queue.Load(); q != nil {
		// The library counts what it handed to the facade's queue as
		// delivered: those still waiting there are pending, those the
		// limits dropped were not delivered.
		msgs, bytes, queued, _, _, dropped := q.stats()
		st.Delivered -= uint64(queued + dropped)
		st.PendingMsgs += uint64(msgs)
		st.PendingBytes += uint64(bytes)
		st.Dropped += uint64(dropped)
	}
	return st, nil
}
