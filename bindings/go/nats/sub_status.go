package nats

import (
	"slices"
	"sync"
)

// SubStatus is a subscription's state, as StatusChanged reports it.
type SubStatus int

const (
	SubscriptionActive = SubStatus(iota)
	SubscriptionDraining
	SubscriptionClosed
	SubscriptionSlowConsumer
)

func (s SubStatus) String() string {
	switch s {
	case SubscriptionActive:
		return "Active"
	case SubscriptionDraining:
		return "Draining"
	case SubscriptionClosed:
		return "Closed"
	case SubscriptionSlowConsumer:
		return "SlowConsumer"
	}
	return "unknown status"
}

// SubscriptionType is how a subscription hands its messages over.
type SubscriptionType int

const (
	AsyncSubscription = SubscriptionType(iota)
	SyncSubscription
	ChanSubscription
	NilSubscription
	PullSubscription
)

// Type is how the subscription hands its messages over. A legacy
// JetStream ChanSubscribe reports AsyncSubscription: the facade delivers
// it through a handler that sends on the channel.
func (s *Subscription) Type() SubscriptionType {
	switch {
	case s == nil:
		return NilSubscription
	case s.pull != nil:
		return PullSubscription
	case s.sync:
		return SyncSubscription
	case s.toChannel:
		return ChanSubscription
	}
	return AsyncSubscription
}

// subLife is what a subscription tells about its life: its status, the
// channels StatusChanged handed out, the closed handler and the drain.
type subLife struct {
	mu            sync.Mutex
	status        SubStatus
	draining      bool
	ended         bool
	listeners     map[chan SubStatus][]SubStatus
	closedHandler func(subject string)
}

// IsDraining reports whether Drain (the subscription's or the
// connection's) is under way; false once the subscription has ended.
func (s *Subscription) IsDraining() bool {
	if s == nil {
		return false
	}
	s.life.mu.Lock()
	defer s.life.mu.Unlock()
	return s.life.draining
}

// StatusChanged returns a channel that receives the subscription's changes
// to statuses (default all four), as nats.go's: the current status first if
// it is among them, at most 10 buffered (further ones are dropped while it
// is full), and the channel is closed once the subscription has ended.
// SubscriptionSlowConsumer is reported for the messages the facade's own
// pending limits drop (SetPendingLimits, ClearMaxPending, MaxPending).
func (s *Subscription) StatusChanged(statuses ...SubStatus) <-chan SubStatus {
	if len(statuses) == 0 {
		statuses = []SubStatus{SubscriptionActive, SubscriptionDraining, SubscriptionClosed, SubscriptionSlowConsumer}
	}
	ch := make(chan SubStatus, 10)
	if s == nil {
		close(ch)
		return ch
	}
	s.watchConnection()
	l := &s.life
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.ended {
		if slices.Contains(statuses, SubscriptionClosed) {
			ch <- SubscriptionClosed
		}
		close(ch)
		return ch
	}
	if l.listeners == nil {
		l.listeners = map[chan SubStatus][]SubStatus{}
	}
	l.listeners[ch] = append(l.listeners[ch], statuses...)
	if slices.Contains(statuses, l.status) {
		ch <- l.status
	}
	return ch
}

// SetClosedHandler has handler called with the subject once the
// subscription has ended: unsubscribed, drained, its AutoUnsubscribe count
// reached, or its connection closed.
func (s *Subscription) SetClosedHandler(handler func(subject string)) {
	s.watchConnection()
	s.life.mu.Lock()
	s.life.closedHandler = handler
	s.life.mu.Unlock()
}

// setStatus records status and tells the listeners waiting for it (never
// blocking: a full channel misses the event, as in nats.go).
func (s *Subscription) setStatus(status SubStatus) {
	l := &s.life
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.ended || l.status == status {
		return
	}
	l.status = status
	if status == SubscriptionDraining {
		l.draining = true
	}
	l.notify(status)
}

func (l *subLife) notify(status SubStatus) {
	for ch, wanted := range l.listeners {
		if slices.Contains(wanted, status) {
			select {
			case ch <- status:
			default:
			}
		}
	}
}

// ended marks the subscription closed, once: the listeners hear it and
// their channels close, then the closed handler runs.
func (s *Subscription) ended() {
	l := &s.life
	l.mu.Lock()
	if l.ended {
		l.mu.Unlock()
		return
	}
	l.ended, l.draining, l.status = true, false, SubscriptionClosed
	l.notify(SubscriptionClosed)
	for ch := range l.listeners {
		close(ch)
	}
	l.listeners = nil
	handler := l.closedHandler
	l.mu.Unlock()
	if q := s.queue.Load(); q != nil {
		q.stop()
	}
	if w, ok := connWatches.Load(s.nc); ok {
		w.(*connWatch).forget(s)
	}
	if handler != nil {
		handler(s.Subject)
	}
}

// connWatches are the connections whose drain and close the facade's
// subscriptions must hear of, by *Conn.
var connWatches sync.Map

// connWatch tells the subscriptions that asked (watchConnection) of their
// connection's drain and close, which the library does not report per
// subscription.
type connWatch struct {
	mu     sync.Mutex
	subs   map[*Subscription]struct{}
	closed bool
}

// watchConnection has s hear of its connection's drain and close.
func (s *Subscription) watchConnection() {
	if s == nil || s.nc == nil {
		return
	}
	nc := s.nc
	w := &connWatch{subs: map[*Subscription]struct{}{}}
	if existing, loaded := connWatches.LoadOrStore(nc, w); loaded {
		w = existing.(*connWatch)
	} else {
		events := nc.StatusChanged(DRAINING_SUBS, CLOSED)
		go w.run(nc, events)
		// Closed before the listener was in place, so its event may never
		// come: ending the listener has run end the subscriptions instead.
		if nc.IsClosed() {
			nc.RemoveStatusListener(events)
		}
	}
	w.mu.Lock()
	closed := w.closed
	if !closed {
		w.subs[s] = struct{}{}
	}
	w.mu.Unlock()
	if closed {
		s.ended()
	}
}

// run passes the drain on to the subscriptions, and ends them once the
// connection is closed (or the listener removed, when it was closed
// already).
func (w *connWatch) run(nc *Conn, events chan Status) {
	for status := range events {
		if status == CLOSED {
			break
		}
		for _, s := range w.watched(false) {
			s.setStatus(SubscriptionDraining)
		}
	}
	connWatches.CompareAndDelete(nc, w)
	nc.RemoveStatusListener(events)
	for _, s := range w.watched(true) {
		s.ended()
	}
}

// watched is the subscriptions to tell; closing, the last time.
func (w *connWatch) watched(closing bool) []*Subscription {
	w.mu.Lock()
	defer w.mu.Unlock()
	subs := make([]*Subscription, 0, len(w.subs))
	for s := range w.subs {
		subs = append(subs, s)
	}
	if closing {
		w.closed, w.subs = true, nil
	}
	return subs
}

func (w *connWatch) forget(s *Subscription) {
	w.mu.Lock()
	delete(w.subs, s)
	w.mu.Unlock()
}
