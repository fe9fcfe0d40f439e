package nats

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	natsio "github.com/libnatsio/natsio/bindings/go"
)

// syncQueueCapacity is how many messages a synchronous subscription keeps:
// the connection's SubChanLen (SyncQueueLen), as nats.go sizes its channel,
// which also bounds it whatever its limits (a callback subscription starts
// with DefaultSubPendingMsgsLimit and DefaultSubPendingBytesLimit).
func (s *Subscription) syncQueueCapacity() int {
	if n := s.nc.Opts.SubChanLen; n > 0 {
		return n
	}
	return DefaultMaxChanLen
}

// initialMsgsLimit is the message limit s starts with.
func (s *Subscription) initialMsgsLimit() int {
	if s.sync {
		return s.syncQueueCapacity()
	}
	return DefaultSubPendingMsgsLimit
}

// pendingQueue is the facade's own queue of a subscription's messages,
// which nats.go's pending accounting needs and the library's queue does
// not offer: limits changed after subscribing (SetPendingLimits) and the
// maxima reached (MaxPending). Once a subscription has one, the library
// hands each message over to it at once (its handler pushes for a
// callback subscription, a pump goroutine for a synchronous one), so the
// messages wait here, counted and limited as nats.go counts and limits
// them.
type pendingQueue struct {
	mu    sync.Mutex
	wake  chan struct{} // signalled when an item arrives or the queue ends
	items []pendingItem
	// msgs and bytes are nats.go's pending counts: the items, plus the
	// message a callback is handling.
	msgs, bytes           int
	queued                int // messages among the items: not handed out yet
	maxMsgs, maxBytes     int
	msgsLimit, bytesLimit int // <= 0: no limit
	capacity              int // > 0: a message limit beyond the limits
	dropped               int
	slow                  bool  // dropping: nothing queued since the last drop
	finished              bool  // no more items will come
	finishErr             error // why, for a synchronous subscription
	stopped               bool  // discarded: nothing more is handed out
	done                  chan struct{}
}

type pendingItem struct {
	msg  *natsio.Msg
	err  error // a synchronous subscription's error to return in turn
	size int
}

func newPendingQueue(msgsLimit, bytesLimit, capacity int) *pendingQueue {
	return &pendingQueue{wake: make(chan struct{}, 1), msgsLimit: msgsLimit, bytesLimit: bytesLimit,
		capacity: capacity, done: make(chan struct{})}
}

// pendingSize is what a message counts for in the byte limit: its data
// and encoded headers, as nats.go counts it.
func pendingSize(m *natsio.Msg) int {
	return headerBlockSize(m.Header) + len(m.Data)
}

func (q *pendingQueue) signal() {
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// push queues m, or drops it when it would exceed a limit; the first drop
// after a queued message starts a slow-consumer episode (reported true).
func (q *pendingQueue) push(m *natsio.Msg) (startsSlow, endsSlow, dropped bool) {
	size := pendingSize(m)
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.stopped {
		return false, false, true
	}
	msgs, bytes := q.msgs+1, q.bytes+size
	q.maxMsgs, q.maxBytes = max(q.maxMsgs, msgs), max(q.maxBytes, bytes)
	if (q.msgsLimit > 0 && msgs > q.msgsLimit) || (q.bytesLimit > 0 && bytes > q.bytesLimit) ||
		(q.capacity > 0 && msgs > q.capacity) {
		q.dropped++
		startsSlow = !q.slow
		q.slow = true
		return startsSlow, false, true
	}
	q.msgs, q.bytes = msgs, bytes
	q.items = append(q.items, pendingItem{msg: m, size: size})
	q.queued++
	endsSlow, q.slow = q.slow, false
	q.signal()
	return false, endsSlow, false
}

// pushErr queues an error for a synchronous subscription's reader.
func (q *pendingQueue) pushErr(err error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.items = append(q.items, pendingItem{err: err})
	q.signal()
}

// finish says no more items will come; err is what a reader gets once it
// has taken those queued.
func (q *pendingQueue) finish(err error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if !q.finished {
		q.finished, q.finishErr = true, err
	}
	q.signal()
	q.closeIfDone()
}

// stop discards the queue: nothing more is handed out.
func (q *pendingQueue) stop() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.stopped, q.finished = true, true
	q.items, q.msgs, q.bytes, q.queued = nil, 0, 0, 0
	q.signal()
	q.closeIfDone()
}

// closeIfDone closes done once nothing is left to hand out or handle.
func (q *pendingQueue) closeIfDone() {
	if q.finished && q.msgs == 0 && len(q.items) == 0 {
		select {
		case <-q.done:
		default:
			close(q.done)
		}
	}
}

// next takes the oldest item, waiting until ctx ends or, with poll > 0,
// for poll at most (errPoll). ok is false once the queue has ended (err:
// why) or the wait has (err: ctx's error or errPoll). handing keeps the
// message counted as pending until handled is called, as nats.go counts a
// callback's message until it returns.
func (q *pendingQueue) next(ctx context.Context, handing bool, poll time.Duration) (item pendingItem, ok bool, err error) {
	var tick <-chan time.Time
	for {
		q.mu.Lock()
		if q.stopped {
			q.mu.Unlock()
			return item, false, ErrBadSubscription
		}
		if len(q.items) > 0 {
			item = q.items[0]
			q.items[0] = pendingItem{}
			q.items = q.items[1:]
			if item.msg != nil {
				q.queued--
				if !handing {
					q.msgs--
					q.bytes -= item.size
				}
			}
			q.closeIfDone()
			q.mu.Unlock()
			return item, true, nil
		}
		if q.finished {
			err := q.finishErr
			q.mu.Unlock()
			return item, false, err
		}
		q.mu.Unlock()
		if poll > 0 && tick == nil {
			timer := time.NewTimer(poll)
			defer timer.Stop()
			tick = timer.C
		}
		select {
		case <-q.wake:
		case <-tick:
			return item, false, errPoll
		case <-ctx.Done():
			return item, false, ctx.Err()
		}
	}
}

// errPoll ends a wait of next that found nothing in its poll time.
var errPoll = errors.New("nats: nothing queued yet")

// takeSlow ends a slow-consumer episode for a synchronous reader, which
// learns of it once (nats.go's NextMsg returns ErrSlowConsumer then).
func (q *pendingQueue) takeSlow() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	slow := q.slow
	q.slow = false
	return slow
}

// stats are nats.go's counts of the queue: its pending messages and bytes,
// those still to hand out, the maxima, the limits and the drops.
func (q *pendingQueue) stats() (msgs, bytes, queued, maxMsgs, maxBytes, dropped int) {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.msgs, q.bytes, q.queued, q.maxMsgs, q.maxBytes, q.dropped
}

// handled ends the counting of a message taken with handing.
func (q *pendingQueue) handled(item pendingItem) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if !q.stopped {
		q.msgs--
		q.bytes -= item.size
	}
	q.closeIfDone()
}

// ---- the subscription's side

// managePending gives s a facade queue (once) with the subscription's
// current limits, so that they can change and their maxima be read.
func (s *Subscription) managePending() (*pendingQueue, error) {
	if err := s.checkPendingAPI(); err != nil {
		return nil, err
	}
	s.queueMu.Lock()
	defer s.queueMu.Unlock()
	if q := s.queue.Load(); q != nil {
		return q, nil
	}
	capacity := 0
	if s.sync {
		capacity = s.syncQueueCapacity()
	}
	q := newPendingQueue(s.initialMsgsLimit(), DefaultSubPendingBytesLimit, capacity)
	s.queue.Store(q)
	s.watchConnection()
	if s.sync {
		go s.pumpSync(q)
	} else {
		go s.deliverQueued(q)
	}
	return q, nil
}

// checkPendingAPI is nats.go's check for the calls on pending limits.
func (s *Subscription) checkPendingAPI() error {
	switch {
	case s == nil || !s.IsValid():
		return ErrBadSubscription
	case s.toChannel:
		return ErrTypeSubscription
	case s.push != nil || s.pull != nil:
		// The library queues a JetStream consumer's messages itself: no
		// limits of nats.go's kind to set or read there.
		return ErrTypeSubscription
	}
	return nil
}

// queueReceived is the library's handler of a subscription with a facade
// queue: the message waits there, within the limits.
func (s *Subscription) queueReceived(q *pendingQueue, m *natsio.Msg) {
	startsSlow, endsSlow, dropped := q.push(m)
	if dropped {
		s.barriers.handledOne() // it will never reach the handler
	}
	switch {
	case startsSlow:
		s.setStatus(SubscriptionSlowConsumer)
		s.nc.asyncError(&natsio.AsyncError{Err: natsio.ErrSlowConsumer, SID: s.inner.SID(), Subject: s.Subject})
	case endsSlow:
		s.setStatus(SubscriptionActive)
	}
}

// deliverQueued hands a callback subscription's queued messages to its
// handler, one at a time, until the subscription ends.
func (s *Subscription) deliverQueued(q *pendingQueue) {
	for {
		item, ok, err := q.next(context.Background(), true, endCheckEvery)
		if !ok {
			// A subscription the library ended unseen (AutoUnsubscribe
			// reached while the handler lagged, say) is noticed here.
			if err != errPoll || s.inner.IsClosed() {
				q.finish(nil)
				s.ended()
				return
			}
			continue
		}
		s.callHandler(item.msg)
		q.handled(item)
	}
}

// endCheckEvery is how often an idle facade queue checks that its
// subscription is still open.
const endCheckEvery = 250 * time.Millisecond

// callHandler runs the subscription's handler as the library would: a
// panic is reported to the error handler, not fatal.
func (s *Subscription) callHandler(m *natsio.Msg) {
	defer func() {
		if v := recover(); v != nil {
			s.nc.asyncError(&natsio.AsyncError{Err: fmt.Errorf("%w: %v", natsio.ErrHandlerPanic, v),
				SID: s.inner.SID(), Subject: s.Subject})
		}
	}()
	s.deliver(m)
}

// pumpSync moves a synchronous subscription's messages from the library
// into its facade queue, where NextMsg reads them.
func (s *Subscription) pumpSync(q *pendingQueue) {
	for {
		m, err := s.inner.NextMsg(context.Background())
		switch {
		case err == nil:
			s.queueReceived(q, m)
		case errors.Is(err, natsio.ErrNoResponders):
			q.pushErr(err)
		default:
			q.finish(err)
			return
		}
	}
}

// SetPendingLimits sets how many messages and bytes (data and encoded
// headers) may wait for the subscription; beyond them messages are dropped
// (Dropped counts them) and the error handler gets ErrSlowConsumer once
// per episode, as in nats.go. A negative limit means none; 0 is
// ErrInvalidArg. ErrTypeSubscription for a channel subscription and for a
// legacy JetStream one (the library queues those itself).
//
// The library's queue takes its limits at subscribe time, so from this
// call on (or ClearMaxPending's, MaxPending's) the subscription's messages
// wait in a queue of the facade instead, counted as nats.go counts them.
func (s *Subscription) SetPendingLimits(msgLimit, bytesLimit int) error {
	if err := s.checkPendingAPI(); err != nil {
		return err
	}
	if msgLimit == 0 || bytesLimit == 0 {
		return ErrInvalidArg
	}
	q, err := s.managePending()
	if err != nil {
		return err
	}
	q.mu.Lock()
	q.msgsLimit, q.bytesLimit = msgLimit, bytesLimit
	q.mu.Unlock()
	return nil
}

// PendingLimits is the subscription's pending limits (messages, bytes); a
// negative value means no limit. A new subscription has nats.go's: 500,000
// messages (65,536 for a synchronous one, which never holds more) and 64
// MiB.
func (s *Subscription) PendingLimits() (int, int, error) {
	if err := s.checkPendingAPI(); err != nil {
		return -1, -1, err
	}
	q := s.queue.Load()
	if q == nil {
		return s.initialMsgsLimit(), DefaultSubPendingBytesLimit, nil
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	return noLimitAsNegative(q.msgsLimit), noLimitAsNegative(q.bytesLimit), nil
}

func noLimitAsNegative(limit int) int {
	if limit <= 0 {
		return -1
	}
	return limit
}

// MaxPending is the most messages and bytes that waited at once. The
// library's queue keeps no such maxima: they count from the first of
// SetPendingLimits, ClearMaxPending or MaxPending on the subscription
// (which start the facade's queue, see SetPendingLimits), so the first
// MaxPending reports what is pending then.
func (s *Subscription) MaxPending() (int, int, error) {
	hadQueue := s.queue.Load() != nil
	q, err := s.managePending()
	if err != nil {
		return -1, -1, err
	}
	if !hadQueue {
		return s.Pending()
	}
	_, _, _, maxMsgs, maxBytes, _ := q.stats()
	return maxMsgs, maxBytes, nil
}

// ClearMaxPending resets the maxima MaxPending reports.
func (s *Subscription) ClearMaxPending() error {
	q, err := s.managePending()
	if err != nil {
		return err
	}
	q.mu.Lock()
	q.maxMsgs, q.maxBytes = 0, 0
	q.mu.Unlock()
	return nil
}
