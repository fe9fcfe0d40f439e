package nats_test

// nats.go's per-subscription pending accounting (SetPendingLimits,
// PendingLimits, MaxPending, ClearMaxPending) and the subscription's
// life (Type, StatusChanged, SetClosedHandler, IsDraining), against a
// real nats-server.

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/libnatsio/natsio/bindings/go/nats"
)

// subConnect connects to a fresh server; errs receives the asynchronous
// errors with their subscription.
func subConnect(t *testing.T, opts ...nats.Option) (nc *nats.Conn, errs chan subAsyncErr) {
	t.Helper()
	srv := startServer(t, "")
	errs = make(chan subAsyncErr, 100)
	nc, err := nats.Connect(srv.url, append(opts, nats.ErrorHandler(func(_ *nats.Conn, s *nats.Subscription, err error) {
		errs <- subAsyncErr{s, err}
	}))...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	return nc, errs
}

type subAsyncErr struct {
	sub *nats.Subscription
	err error
}

// publishAll publishes n messages of 10 bytes on subject and flushes.
func publishAll(t *testing.T, nc *nats.Conn, subject string, n int) {
	t.Helper()
	for i := range n {
		if err := nc.Publish(subject, fmt.Appendf(nil, "message%03d", i)); err != nil {
			t.Fatal(err)
		}
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
}

// holds is nil when cond is true, else an error saying what was found.
func holds(cond bool, found ...any) error {
	if cond {
		return nil
	}
	return fmt.Errorf("found %v", found)
}

// A callback subscription keeps at most its limits, the message its
// handler is on included; the rest are dropped, reported once as a slow
// consumer, and the status goes back to active with the next message kept.
func TestSubscriptionPendingLimitsDropBeyondThem(t *testing.T) {
	nc, errs := subConnect(t)
	gate := make(chan struct{})
	handled := make(chan string, 100)
	sub, err := nc.Subscribe("limits", func(m *nats.Msg) {
		<-gate
		handled <- string(m.Data)
	})
	if err != nil {
		t.Fatal(err)
	}
	if sub.Type() != nats.AsyncSubscription {
		t.Errorf("Type = %v", sub.Type())
	}
	if msgs, bytes, err := sub.PendingLimits(); err != nil || msgs != 500_000 || bytes != 64*1024*1024 {
		t.Errorf("default PendingLimits = %d, %d, %v", msgs, bytes, err)
	}
	if err := sub.SetPendingLimits(0, 100); !errors.Is(err, nats.ErrInvalidArg) {
		t.Errorf("SetPendingLimits(0, 100) = %v", err)
	}
	if err := sub.SetPendingLimits(5, -1); err != nil {
		t.Fatal(err)
	}
	if msgs, bytes, _ := sub.PendingLimits(); msgs != 5 || bytes != -1 {
		t.Errorf("PendingLimits = %d, %d", msgs, bytes)
	}
	status := sub.StatusChanged(nats.SubscriptionSlowConsumer, nats.SubscriptionActive)
	if s := connWaitFor(t, status, "the initial status"); s != nats.SubscriptionActive {
		t.Errorf("initial status %v", s)
	}

	publishAll(t, nc, "limits", 20)
	slow := connWaitFor(t, errs, "the slow consumer error")
	if slow.err != nats.ErrSlowConsumer || slow.sub != sub {
		t.Errorf("async error %v for %v", slow.err, slow.sub)
	}
	if s := connWaitFor(t, status, "the slow consumer status"); s != nats.SubscriptionSlowConsumer {
		t.Errorf("status %v", s)
	}
	eventually(t, "15 drops", func() error { d, _ := sub.Dropped(); return holds(d == 15, d) })
	if msgs, bytes, err := sub.Pending(); msgs != 5 || bytes != 50 || err != nil {
		t.Errorf("Pending = %d, %d, %v", msgs, bytes, err)
	}
	if n, _ := sub.QueuedMsgs(); n != 5 {
		t.Errorf("QueuedMsgs = %d", n)
	}
	// As nats.go counts: the message found over the limit counts in the
	// maximum before it is dropped.
	if msgs, bytes, _ := sub.MaxPending(); msgs != 6 || bytes != 60 {
		t.Errorf("MaxPending = %d, %d", msgs, bytes)
	}
	select {
	case err := <-errs:
		t.Errorf("a second async error in the same episode: %v", err.err)
	default:
	}

	close(gate)
	for i := range 5 {
		if got := connWaitFor(t, handled, "a kept message"); got != fmt.Sprintf("message%03d", i) {
			t.Errorf("handled %q, want message%03d", got, i)
		}
	}
	eventually(t, "nothing pending", func() error { m, _, _ := sub.Pending(); return holds(m == 0, m) })
	if d, _ := sub.Delivered(); d != 5 {
		t.Errorf("Delivered = %d", d)
	}
	if err := sub.ClearMaxPending(); err != nil {
		t.Fatal(err)
	}
	if msgs, bytes, _ := sub.MaxPending(); msgs != 0 || bytes != 0 {
		t.Errorf("MaxPending after ClearMaxPending = %d, %d", msgs, bytes)
	}
	publishAll(t, nc, "limits", 1)
	if s := connWaitFor(t, status, "the active status"); s != nats.SubscriptionActive {
		t.Errorf("status %v after a kept message", s)
	}
	connWaitFor(t, handled, "the last message")
	if d, _ := sub.Delivered(); d != 6 {
		t.Errorf("Delivered = %d", d)
	}
	// Raising the limits keeps everything.
	if err := sub.SetPendingLimits(-1, 1000); err != nil {
		t.Fatal(err)
	}
	publishAll(t, nc, "limits", 50)
	for range 50 {
		connWaitFor(t, handled, "a message under raised limits")
	}
	if d, _ := sub.Dropped(); d != 15 {
		t.Errorf("Dropped = %d after raising the limits", d)
	}
}

// A synchronous subscription's reader learns of the drops once, from
// NextMsg, then reads what was kept.
// SyncQueueLen is the message limit of the connection's synchronous
// subscriptions: what is beyond it is dropped, as nats.go's full channel
// drops it.
func TestSubscriptionSyncQueueLen(t *testing.T) {
	nc, errs := subConnect(t, nats.SyncQueueLen(4))
	sub, err := nc.SubscribeSync("limits.chanlen")
	if err != nil {
		t.Fatal(err)
	}
	if msgs, _, err := sub.PendingLimits(); err != nil || msgs != 4 {
		t.Errorf("PendingLimits = %d, %v; want 4", msgs, err)
	}
	publishAll(t, nc, "limits.chanlen", 10)
	if e := connWaitFor(t, errs, "the slow consumer error"); e.err != nats.ErrSlowConsumer || e.sub != sub {
		t.Errorf("async error %v for %v", e.err, e.sub)
	}
	eventually(t, "6 drops", func() error { d, _ := sub.Dropped(); return holds(d == 6, d) })
	var got []string
	for {
		m, err := sub.NextMsg(50 * time.Millisecond)
		if err == nats.ErrSlowConsumer {
			continue
		}
		if err != nil {
			break
		}
		got = append(got, string(m.Data))
	}
	if len(got) != 4 || got[0] != "message000" || got[3] != "message003" {
		t.Errorf("kept %q, want the first 4", got)
	}
}

func TestSubscriptionPendingLimitsSync(t *testing.T) {
	nc, errs := subConnect(t)
	sub, err := nc.SubscribeSync("limits.sync")
	if err != nil {
		t.Fatal(err)
	}
	if sub.Type() != nats.SyncSubscription {
		t.Errorf("Type = %v", sub.Type())
	}
	// nats.go's: its channel's capacity.
	if msgs, bytes, err := sub.PendingLimits(); err != nil || msgs != 65536 || bytes != 64*1024*1024 {
		t.Errorf("default PendingLimits = %d, %d, %v", msgs, bytes, err)
	}
	if err := sub.SetPendingLimits(3, 1000); err != nil {
		t.Fatal(err)
	}
	publishAll(t, nc, "limits.sync", 10)
	if e := connWaitFor(t, errs, "the slow consumer error"); e.err != nats.ErrSlowConsumer || e.sub != sub {
		t.Errorf("async error %v for %v", e.err, e.sub)
	}
	eventually(t, "7 drops", func() error { d, _ := sub.Dropped(); return holds(d == 7, d) })
	if _, err := sub.NextMsg(time.Second); err != nats.ErrSlowConsumer {
		t.Errorf("first NextMsg: %v, want the slow consumer error", err)
	}
	for i := range 3 {
		m, err := sub.NextMsg(time.Second)
		if err != nil || string(m.Data) != fmt.Sprintf("message%03d", i) {
			t.Fatalf("NextMsg %d: %v, %v", i, m, err)
		}
	}
	if _, err := sub.NextMsg(20 * time.Millisecond); err != nats.ErrTimeout {
		t.Errorf("NextMsg on an empty queue: %v", err)
	}
	if d, _ := sub.Delivered(); d != 3 {
		t.Errorf("Delivered = %d", d)
	}
	if err := sub.Unsubscribe(); err != nil {
		t.Fatal(err)
	}
	if _, err := sub.NextMsg(time.Second); err != nats.ErrBadSubscription {
		t.Errorf("NextMsg after Unsubscribe: %v", err)
	}
	if sub.IsValid() {
		t.Error("valid after Unsubscribe")
	}
}

// The pending calls are refused where nats.go refuses them.
func TestSubscriptionPendingLimitsRefused(t *testing.T) {
	nc, _ := subConnect(t)
	sub, err := nc.ChanSubscribe("limits.chan", make(chan *nats.Msg, 1))
	if err != nil {
		t.Fatal(err)
	}
	if sub.Type() != nats.ChanSubscription {
		t.Errorf("Type = %v", sub.Type())
	}
	if err := sub.SetPendingLimits(10, 10); err != nats.ErrTypeSubscription {
		t.Errorf("SetPendingLimits on a channel subscription: %v", err)
	}
	if _, _, err := sub.MaxPending(); err != nats.ErrTypeSubscription {
		t.Errorf("MaxPending on a channel subscription: %v", err)
	}
	var none *nats.Subscription
	if none.Type() != nats.NilSubscription {
		t.Errorf("nil Type = %v", none.Type())
	}
	if err := none.ClearMaxPending(); err != nats.ErrBadSubscription {
		t.Errorf("ClearMaxPending on nil: %v", err)
	}
	sync, _ := nc.SubscribeSync("limits.closed")
	sync.Unsubscribe()
	if _, _, err := sync.PendingLimits(); err != nats.ErrBadSubscription {
		t.Errorf("PendingLimits after Unsubscribe: %v", err)
	}
}

// Drain: the subscription reports draining while its handler finishes the
// backlog, then closed; the closed handler gets the subject.
func TestSubscriptionStatusThroughDrain(t *testing.T) {
	for _, limited := range []bool{false, true} {
		t.Run(fmt.Sprintf("facadeQueue=%v", limited), func(t *testing.T) {
			nc, _ := subConnect(t)
			gate := make(chan struct{})
			var handled []string
			sub, err := nc.Subscribe("drain", func(m *nats.Msg) {
				<-gate
				handled = append(handled, string(m.Data))
			})
			if err != nil {
				t.Fatal(err)
			}
			if limited {
				if err := sub.SetPendingLimits(100, -1); err != nil {
					t.Fatal(err)
				}
			}
			closed := make(chan string, 2)
			sub.SetClosedHandler(func(subject string) { closed <- subject })
			status := sub.StatusChanged()
			if s := connWaitFor(t, status, "the initial status"); s != nats.SubscriptionActive {
				t.Errorf("initial status %v", s)
			}
			publishAll(t, nc, "drain", 3)
			eventually(t, "3 received", func() error {
				m, _, _ := sub.Pending()
				d, _ := sub.Delivered()
				return holds(int(d)+m >= 3, m, d)
			})
			if err := sub.Drain(); err != nil {
				t.Fatal(err)
			}
			if s := connWaitFor(t, status, "the draining status"); s != nats.SubscriptionDraining {
				t.Errorf("status %v after Drain", s)
			}
			if !sub.IsDraining() || !sub.IsValid() {
				t.Errorf("draining %v, valid %v while the backlog waits", sub.IsDraining(), sub.IsValid())
			}
			close(gate)
			if s := connWaitFor(t, status, "the closed status"); s != nats.SubscriptionClosed {
				t.Errorf("status %v after the drain", s)
			}
			if _, open := <-status; open {
				t.Error("the status channel is still open")
			}
			if subject := connWaitFor(t, closed, "the closed handler"); subject != "drain" {
				t.Errorf("closed handler got %q", subject)
			}
			if len(handled) != 3 || sub.IsDraining() || sub.IsValid() {
				t.Errorf("handled %v, draining %v, valid %v", handled, sub.IsDraining(), sub.IsValid())
			}
			// A late listener hears that it is closed, on a closed channel.
			late := sub.StatusChanged(nats.SubscriptionClosed)
			if s, ok := <-late; !ok || s != nats.SubscriptionClosed {
				t.Errorf("late listener got %v, %v", s, ok)
			}
			if _, open := <-late; open {
				t.Error("the late channel is open")
			}
			select {
			case <-closed:
				t.Error("the closed handler ran twice")
			default:
			}
		})
	}
}

// The closed handler runs whatever ends the subscription: Unsubscribe, the
// AutoUnsubscribe count reached, the connection closed.
func TestSubscriptionClosedHandler(t *testing.T) {
	nc, _ := subConnect(t)
	closed := make(chan string, 10)
	onClose := func(subject string) { closed <- subject }

	unsub, _ := nc.SubscribeSync("closed.unsub")
	unsub.SetClosedHandler(onClose)
	unsub.Unsubscribe()
	if s := connWaitFor(t, closed, "Unsubscribe's end"); s != "closed.unsub" {
		t.Errorf("got %q", s)
	}

	auto, _ := nc.Subscribe("closed.auto", func(*nats.Msg) {})
	auto.SetClosedHandler(onClose)
	auto.AutoUnsubscribe(2)
	publishAll(t, nc, "closed.auto", 2)
	if s := connWaitFor(t, closed, "AutoUnsubscribe's end"); s != "closed.auto" {
		t.Errorf("got %q", s)
	}

	autoSync, _ := nc.SubscribeSync("closed.autosync")
	autoSync.SetClosedHandler(onClose)
	autoSync.AutoUnsubscribe(1)
	publishAll(t, nc, "closed.autosync", 1)
	if _, err := autoSync.NextMsg(time.Second); err != nil {
		t.Fatal(err)
	}
	if s := connWaitFor(t, closed, "a synchronous AutoUnsubscribe's end"); s != "closed.autosync" {
		t.Errorf("got %q", s)
	}

	open, _ := nc.Subscribe("closed.conn", func(*nats.Msg) {})
	open.SetClosedHandler(onClose)
	status := open.StatusChanged(nats.SubscriptionClosed)
	nc.Close()
	if s := connWaitFor(t, closed, "the connection's close"); s != "closed.conn" {
		t.Errorf("got %q", s)
	}
	if s := connWaitFor(t, status, "the closed status"); s != nats.SubscriptionClosed {
		t.Errorf("status %v", s)
	}
	select {
	case s := <-closed:
		t.Errorf("a second closed call, for %q", s)
	default:
	}
}

// The connection's Drain drains its subscriptions: they report it.
func TestSubscriptionStatusThroughConnectionDrain(t *testing.T) {
	nc, _ := subConnect(t)
	gate := make(chan struct{})
	sub, _ := nc.Subscribe("conn.drain", func(*nats.Msg) { <-gate })
	status := sub.StatusChanged(nats.SubscriptionDraining, nats.SubscriptionClosed)
	publishAll(t, nc, "conn.drain", 1)
	if err := nc.Drain(); err != nil {
		t.Fatal(err)
	}
	if s := connWaitFor(t, status, "the draining status"); s != nats.SubscriptionDraining {
		t.Errorf("status %v", s)
	}
	if !sub.IsDraining() {
		t.Error("not draining")
	}
	close(gate)
	if s := connWaitFor(t, status, "the closed status"); s != nats.SubscriptionClosed {
		t.Errorf("status %v", s)
	}
}

// Msgs yields until an error, which ends it; MsgsTimeout goes on after a
// timeout.
func TestSubscriptionMsgsIterators(t *testing.T) {
	nc, _ := subConnect(t)
	sub, _ := nc.SubscribeSync("iter")
	publishAll(t, nc, "iter", 3)
	var got []string
	for m, err := range sub.Msgs() {
		if err != nil {
			t.Fatal(err)
		}
		if got = append(got, string(m.Data)); len(got) == 3 {
			break
		}
	}
	if len(got) != 3 || got[2] != "message002" {
		t.Errorf("Msgs gave %v", got)
	}

	timeouts := 0
	var last error
	for m, err := range sub.MsgsTimeout(10 * time.Millisecond) {
		switch {
		case err == nats.ErrTimeout:
			if timeouts++; timeouts == 2 {
				publishAll(t, nc, "iter", 1)
			}
			continue
		case err != nil:
			last = err
			continue
		}
		if string(m.Data) != "message000" {
			t.Errorf("MsgsTimeout gave %q", m.Data)
		}
		sub.Unsubscribe()
	}
	if timeouts < 2 || last != nats.ErrBadSubscription {
		t.Errorf("%d timeouts, ended with %v", timeouts, last)
	}

	async, _ := nc.Subscribe("iter.async", func(*nats.Msg) {})
	for _, err := range async.Msgs() {
		if err != nats.ErrSyncSubRequired {
			t.Errorf("Msgs on a callback subscription: %v", err)
		}
	}
}

func TestMsgEqual(t *testing.T) {
	a := &nats.Msg{Subject: "s", Reply: "r", Data: []byte("d"), Header: nats.Header{"A": {"1", "2"}}}
	b := &nats.Msg{Subject: "s", Reply: "r", Data: []byte("d"), Header: nats.Header{"A": {"1", "2"}},
		Sub: &nats.Subscription{}}
	if !a.Equal(b) || !b.Equal(a) {
		t.Error("equal messages (the subscription aside) differ")
	}
	for name, c := range map[string]*nats.Msg{
		"subject":      {Subject: "x", Reply: "r", Data: []byte("d"), Header: nats.Header{"A": {"1", "2"}}},
		"reply":        {Subject: "s", Data: []byte("d"), Header: nats.Header{"A": {"1", "2"}}},
		"data":         {Subject: "s", Reply: "r", Header: nats.Header{"A": {"1", "2"}}},
		"value order":  {Subject: "s", Reply: "r", Data: []byte("d"), Header: nats.Header{"A": {"2", "1"}}},
		"header name":  {Subject: "s", Reply: "r", Data: []byte("d"), Header: nats.Header{"a": {"1", "2"}}},
		"more headers": {Subject: "s", Reply: "r", Data: []byte("d"), Header: nats.Header{"A": {"1", "2"}, "B": {}}},
		"nil":          nil,
	} {
		if a.Equal(c) {
			t.Errorf("messages differing in %s are equal", name)
		}
	}
	var none *nats.Msg
	if !none.Equal(nil) {
		t.Error("nil differs from nil")
	}
}
