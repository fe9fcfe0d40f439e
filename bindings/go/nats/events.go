package nats

import (
	"sync"
	"sync/atomic"
)

// ---- status listeners (StatusChanged)

// statusListeners are the channels StatusChanged handed out, by status.
type statusListeners struct {
	mu   sync.Mutex
	byOf map[Status]map[chan Status]struct{}
}

// StatusChanged returns a channel that receives the connection's changes to
// statuses (default CONNECTED, RECONNECTING, DISCONNECTED and CLOSED), as
// nats.go's: it buffers 10 events, drops further ones while full, and
// stays registered (not closed) until RemoveStatusListener. The facade
// reports CONNECTED (a reconnect, or the first connect of
// RetryOnFailedConnect), RECONNECTING or DISCONNECTED (a lost connection,
// as the library goes on reconnecting or not), DRAINING_SUBS (Drain) and
// CLOSED; not CONNECTING nor DRAINING_PUBS (the library's drain has no
// separate publish phase to report).
func (nc *Conn) StatusChanged(statuses ...Status) chan Status {
	if len(statuses) == 0 {
		statuses = []Status{CONNECTED, RECONNECTING, DISCONNECTED, CLOSED}
	}
	ch := make(chan Status, 10)
	l := &nc.listeners
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.byOf == nil {
		l.byOf = map[Status]map[chan Status]struct{}{}
	}
	for _, s := range statuses {
		if l.byOf[s] == nil {
			l.byOf[s] = map[chan Status]struct{}{}
		}
		l.byOf[s][ch] = struct{}{}
	}
	return ch
}

// RemoveStatusListener unregisters ch and closes it (events it buffered
// can still be read).
func (nc *Conn) RemoveStatusListener(ch chan Status) {
	l := &nc.listeners
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, chans := range l.byOf {
		delete(chans, ch)
	}
	closeStatusChannel(ch)
}

// statusChanged tells the listeners of s.
func (nc *Conn) statusChanged(s Status) {
	l := &nc.listeners
	l.mu.Lock()
	defer l.mu.Unlock()
	for ch := range l.byOf[s] {
		if !offerStatus(ch, s) {
			delete(l.byOf[s], ch) // closed by the program
		}
	}
}

// offerStatus sends s on ch unless its buffer is full; false when the
// program closed ch.
func offerStatus(ch chan Status, s Status) (open bool) {
	defer func() {
		if recover() != nil {
			open = false
		}
	}()
	select {
	case ch <- s:
	default:
	}
	return true
}

func closeStatusChannel(ch chan Status) {
	defer func() { _ = recover() }()
	close(ch)
}

// ---- barriers (Barrier)

// Barrier has f called once every callback subscription (the legacy
// JetStream ones too; not the channel or synchronous ones, as in nats.go)
// has handled the messages it had
// received when Barrier was called; at once, in this goroutine, when there
// is none. A subscription that ends counts as having handled them.
// ErrConnectionClosed on a closed connection.
func (nc *Conn) Barrier(f func()) error {
	if nc.IsClosed() {
		return ErrConnectionClosed
	}
	var subs []*Subscription
	nc.subs.Range(func(_, v any) bool {
		if s := v.(*Subscription); s.barriers != nil && !s.inner.IsClosed() {
			subs = append(subs, s)
		}
		return true
	})
	nc.pushSubs.Range(func(k, _ any) bool {
		if s := k.(*Subscription); !s.push.stopped() {
			subs = append(subs, s)
		}
		return true
	})
	if len(subs) == 0 {
		f()
		return nil
	}
	b := &barrier{f: f}
	b.refs.Store(int64(len(subs)))
	for _, s := range subs {
		s.barriers.add(b, s)
	}
	return nil
}

// barrier is f, run by the last subscription to pass it.
type barrier struct {
	refs atomic.Int64
	f    func()
}

func (b *barrier) pass() {
	if b.refs.Add(-1) == 0 {
		b.f()
	}
}

// received is how many messages the subscription has received: handed to
// its handler or still queued.
func (s *Subscription) received() (uint64, error) {
	if s.push != nil {
		st, err := s.push.inner.Stats()
		return st.Delivered + st.PendingItems, err
	}
	st, err := s.inner.Stats()
	return st.Delivered + st.PendingMsgs, err
}

// barrierTracker counts the messages a subscription's handler has
// returned from, and the barriers waiting for a count.
type barrierTracker struct {
	handled atomic.Uint64
	waiting atomic.Bool // waits is not empty: spares the lock per message
	mu      sync.Mutex
	waits   []barrierWait
}

type barrierWait struct {
	received uint64 // what the subscription had received at the barrier
	b        *barrier
}

// add has b wait until the handler has returned from every message s has
// received so far (delivered to the handler or still queued).
func (t *barrierTracker) add(b *barrier, s *Subscription) {
	received, err := s.received()
	t.mu.Lock()
	if err != nil || t.handled.Load() >= received {
		t.mu.Unlock()
		// On a goroutine of its own, as nats.go runs it on the
		// subscription's: f may wait for what Barrier's caller does next.
		go b.pass()
		return
	}
	t.waits = append(t.waits, barrierWait{received, b})
	t.waiting.Store(true)
	t.mu.Unlock()
}

// handledOne counts a message the handler returned from and passes the
// barriers it completes. A nil tracker (not a callback subscription) does
// nothing.
func (t *barrierTracker) handledOne() {
	if t == nil {
		return
	}
	n := t.handled.Add(1)
	if !t.waiting.Load() {
		return
	}
	t.mu.Lock()
	var due []*barrier
	kept := t.waits[:0]
	for _, w := range t.waits {
		if n >= w.received {
			due = append(due, w.b)
		} else {
			kept = append(kept, w)
		}
	}
	t.waits = kept
	t.waiting.Store(len(kept) > 0)
	t.mu.Unlock()
	for _, b := range due {
		b.pass()
	}
}

// release passes every waiting barrier: the subscription has ended.
func (t *barrierTracker) release() {
	if t == nil {
		return
	}
	t.mu.Lock()
	waits := t.waits
	t.waits = nil
	t.waiting.Store(false)
	t.mu.Unlock()
	for _, w := range waits {
		w.b.pass()
	}
}

// releaseBarriers passes every barrier waiting on one of nc's
// subscriptions (the connection closed).
func (nc *Conn) releaseBarriers() {
	nc.subs.Range(func(_, v any) bool {
		v.(*Subscription).barriers.release()
		return true
	})
	nc.pushSubs.Range(func(k, _ any) bool {
		k.(*Subscription).barriers.release()
		return true
	})
}
