package natsio_test

// Callback subscriptions are the library's push mode (its thread per
// subscription calls Go), and every wait is a token whose completion
// callback runs on the client's event thread; these tests pin down the
// guarantees that this must keep: no handler call after Unsubscribe or
// Close returns, handlers that call back into the connection, waits from
// the library's own threads, and no OS thread held per waiting call.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	natsio "github.com/libnatsio/natsio/bindings/go"
)

// Messages queued while the handler is busy reach it together (one C-to-Go
// call); an Unsubscribe by the handler must still drop the rest of them.
func TestUnsubscribeInTheHandlerDropsTheRestOfItsBatch(t *testing.T) {
	nc := connect(t)
	subj := subject(t, "batch")
	gate, stopped := make(chan struct{}), make(chan struct{})
	var mu sync.Mutex
	var seen []string
	var sub *natsio.Subscription
	subscribed := make(chan struct{})
	var err error
	sub, err = nc.Subscribe(subj, func(m *natsio.Msg) {
		<-subscribed
		mu.Lock()
		seen = append(seen, string(m.Data))
		mu.Unlock()
		switch string(m.Data) {
		case "hold":
			<-gate // the rest queue up meanwhile
		case "stop":
			sub.Unsubscribe()
			close(stopped)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	close(subscribed)
	nc.Publish(subj, []byte("hold"))
	flush(t, nc)
	eventually(t, "the first message in the handler", func() bool {
		st, _ := sub.Stats()
		return st.Delivered == 1
	})
	for _, d := range []string{"stop", "a", "b", "c", "d", "e", "f", "g", "h", "i"} {
		nc.Publish(subj, []byte(d))
	}
	flush(t, nc)
	eventually(t, "the rest queued", func() bool {
		st, _ := sub.Stats()
		return st.PendingMsgs == 10
	})
	close(gate)
	select {
	case <-stopped:
	case <-time.After(5 * time.Second):
		t.Fatal("the handler did not unsubscribe")
	}
	time.Sleep(20 * time.Millisecond) // an absence: no further call within 20 ms
	mu.Lock()
	defer mu.Unlock()
	if got := strings.Join(seen, ","); got != "hold,stop" {
		t.Fatalf("handled %s, want hold,stop", got)
	}
}

func TestUnsubscribeAndCloseFromInsideTheHandler(t *testing.T) {
	t.Run("unsubscribe", func(t *testing.T) {
		nc := connect(t)
		subj := subject(t, "self")
		var calls atomic.Int64
		returned := make(chan error, 1)
		var sub *natsio.Subscription
		subscribed := make(chan struct{})
		var err error
		sub, err = nc.Subscribe(subj, func(*natsio.Msg) {
			<-subscribed
			if calls.Add(1) == 1 {
				returned <- sub.Unsubscribe() // must not wait for itself
			}
		})
		if err != nil {
			t.Fatal(err)
		}
		close(subscribed)
		for range 5 {
			nc.Publish(subj, nil)
		}
		select {
		case err := <-returned:
			if err != nil {
				t.Fatal(err)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("Unsubscribe from the handler deadlocked")
		}
		flush(t, nc)
		time.Sleep(30 * time.Millisecond) // an absence: no further call within 30 ms
		if n := calls.Load(); n != 1 {
			t.Fatalf("handler ran %d times, want 1", n)
		}
	})
	t.Run("close", func(t *testing.T) {
		nc := connect(t)
		subj := subject(t, "self")
		var other atomic.Int64
		if _, err := nc.Subscribe(subj, func(*natsio.Msg) { other.Add(1) }); err != nil {
			t.Fatal(err)
		}
		returned := make(chan error, 1)
		if _, err := nc.Subscribe(subj, func(*natsio.Msg) { returned <- nc.Close() }); err != nil {
			t.Fatal(err)
		}
		nc.Publish(subj, nil)
		select {
		case err := <-returned:
			if err != nil {
				t.Fatal(err)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("Close from a handler deadlocked")
		}
		if !nc.IsClosed() {
			t.Fatal("not closed")
		}
	})
}

func TestCallbackSubscriptionKeepsPendingLimits(t *testing.T) {
	reports := make(chan error, 100)
	nc := connect(t, natsio.ErrorHandler(func(err error) { reports <- err }))
	subj := subject(t, "slow")
	release := make(chan struct{})
	releaseOnce := sync.OnceFunc(func() { close(release) })
	t.Cleanup(releaseOnce) // before Close (cleanups run last first): Close waits for the handler
	entered := make(chan struct{}, 1)
	var handled atomic.Int64
	sub, err := nc.Subscribe(subj, func(*natsio.Msg) {
		select {
		case entered <- struct{}{}:
		default:
		}
		<-release
		handled.Add(1)
	}, natsio.SubPendingLimits(10, -1), natsio.SubPolicy(natsio.PolicyDropNew))
	if err != nil {
		t.Fatal(err)
	}
	nc.Publish(subj, nil)
	<-entered
	for range 49 {
		nc.Publish(subj, nil)
	}
	flush(t, nc)
	// One message is in the (blocked) handler, ten are queued, the rest dropped.
	eventually(t, "drops", func() bool { st, _ := sub.Stats(); return st.Dropped == 39 })
	if st, _ := sub.Stats(); st.PendingMsgs != 10 {
		t.Fatalf("stats %+v", st)
	}
	releaseOnce()
	eventually(t, "backlog handled", func() bool { return handled.Load() == 11 })
	select {
	case err := <-reports:
		wantIs(t, err, natsio.ErrSlowConsumer)
	case <-time.After(5 * time.Second):
		t.Fatal("drops were not reported")
	}
	// Its messages belong to the handler.
	_, err = sub.NextMsg(ctxTimeout(t, time.Second))
	wantIs(t, err, natsio.ErrIllegalState)
}

func TestConnDrainWaitsForTheLastHandler(t *testing.T) {
	nc := connect(t)
	subj := subject(t, "d")
	var handled atomic.Int64
	if _, err := nc.Subscribe(subj, func(*natsio.Msg) {
		time.Sleep(10 * time.Millisecond)
		handled.Add(1)
	}); err != nil {
		t.Fatal(err)
	}
	for range 10 {
		nc.Publish(subj, nil)
	}
	flush(t, nc)
	if err := nc.Drain(ctxTimeout(t, 10*time.Second)); err != nil {
		t.Fatal(err)
	}
	if n := handled.Load(); n != 10 {
		t.Fatalf("Drain returned with %d of 10 messages handled", n)
	}
}

func TestNoRespondersStatusReachesACallbackSubscription(t *testing.T) {
	nc := connect(t)
	inbox := subject(t, "inbox")
	got := make(chan *natsio.Msg, 1)
	// A wildcard subscription: the status message keeps its own subject.
	if _, err := nc.Subscribe(inbox+".*", func(m *natsio.Msg) { got <- m }); err != nil {
		t.Fatal(err)
	}
	flush(t, nc)
	// Nobody listens on the subject: the server answers the reply subject
	// with a no-responders status message.
	if err := nc.PublishMsg(&natsio.Msg{Subject: subject(t, "nobody"), Reply: inbox + ".r1"}); err != nil {
		t.Fatal(err)
	}
	select {
	case m := <-got:
		if m.Subject != inbox+".r1" || len(m.Data) != 0 || m.Header == nil {
			t.Fatalf("status message %+v", m)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no-responders status message not delivered")
	}
}

func TestReceivedMsgFieldsAreIndependent(t *testing.T) {
	nc := connect(t)
	subj := subject(t, "echo")
	got, gotLong := make(chan *natsio.Msg, 1), make(chan *natsio.Msg, 1)
	if _, err := nc.Subscribe(subj, func(m *natsio.Msg) { got <- m }); err != nil {
		t.Fatal(err)
	}
	flush(t, nc)
	long := subj + "." + strings.Repeat("x", 300) // past the 256-byte stack copy
	if _, err := nc.Subscribe(long, func(m *natsio.Msg) { gotLong <- m }); err != nil {
		t.Fatal(err)
	}
	flush(t, nc)
	nc.PublishMsg(&natsio.Msg{Subject: subj, Reply: "reply.to.me", Data: []byte("abc")})
	nc.PublishMsg(&natsio.Msg{Subject: long, Reply: long + ".r", Data: []byte("def")})
	m := <-got
	m.Data = append(m.Data, "-appended"...)
	m.Data[0] = 'X'
	if m.Reply != "reply.to.me" || string(m.Data) != "Xbc-appended" {
		t.Fatalf("reply %q data %q", m.Reply, m.Data)
	}
	select {
	case m := <-gotLong:
		if m.Subject != long || m.Reply != long+".r" || string(m.Data) != "def" {
			t.Fatalf("long subject message %q %q %q", m.Subject, m.Reply, m.Data)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("long subject message not delivered")
	}
	wantIs(t, nc.Publish("a\x00b", nil), natsio.ErrInvalidArgument)
	wantIs(t, nc.PublishMsg(&natsio.Msg{Subject: subj, Reply: "r\x00"}), natsio.ErrInvalidArgument)
	_, err := nc.Request(context.Background(), "a\x00b", nil)
	wantIs(t, err, natsio.ErrInvalidArgument)
	// A failure's detail comes with it (read in the failing C call).
	err = nc.Publish("bad..subject", nil)
	var e *natsio.Error
	if !errors.As(err, &e) || e.Detail == "" {
		t.Fatalf("error without detail: %#v", err)
	}
}

// Token completion callbacks run on the client's event thread, where the
// lifecycle handlers run too: a handler that waits for an operation (a
// flush, a request, one cancelled by its ctx) must not wait for its own
// thread. Message handlers (on their subscription's thread) wait like any
// goroutine.
func TestWaitsFromLibraryThreads(t *testing.T) {
	baseline := natsio.LiveHandlesForTest()
	subj, silent := subject(t, "echo"), subject(t, "silent")
	fromEvent := make(chan error, 1)
	nc := connect(t, natsio.RequestTimeout(time.Minute), natsio.ReconnectWait(20*time.Millisecond, 100*time.Millisecond),
		natsio.ReconnectHandler(func(c *natsio.Conn) {
			fromEvent <- func() error {
				if err := c.Flush(ctxTimeout(t, 5*time.Second)); err != nil {
					return err
				}
				reply, err := c.Request(ctxTimeout(t, 5*time.Second), subj, []byte("from event"))
				if err != nil {
					return err
				}
				if string(reply.Data) != "FROM EVENT" {
					return errors.New("wrong reply " + string(reply.Data))
				}
				ctx, cancel := context.WithCancel(context.Background())
				time.AfterFunc(50*time.Millisecond, cancel)
				if _, err := c.Request(ctx, silent, nil); !errors.Is(err, context.Canceled) {
					return fmt.Errorf("cancelled request from the event thread: %v", err)
				}
				return nil
			}()
		}))
	if _, err := nc.Subscribe(subj, func(m *natsio.Msg) { m.Respond(bytes.ToUpper(m.Data)) }); err != nil {
		t.Fatal(err)
	}
	silentResponder(t, nc, silent)
	// A handler that requests (from its subscription's thread).
	relay := subject(t, "relay")
	if _, err := nc.Subscribe(relay, func(m *natsio.Msg) {
		reply, err := nc.Request(ctxTimeout(t, 5*time.Second), subj, m.Data)
		if err != nil {
			m.Respond([]byte(err.Error()))
			return
		}
		m.Respond(reply.Data)
	}); err != nil {
		t.Fatal(err)
	}
	flush(t, nc)
	reply, err := nc.Request(ctxTimeout(t, 5*time.Second), relay, []byte("relayed"))
	if err != nil || string(reply.Data) != "RELAYED" {
		t.Fatalf("relayed request: %v, %v", reply, err)
	}
	if err := nc.ForceReconnect(); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-fromEvent:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("waits from the event thread deadlocked")
	}
	nc.Close()
	waitHandlesReleased(t, baseline)
}

// Many goroutines requesting at once: each gets its own reply.
func TestConcurrentRequests(t *testing.T) {
	nc := connect(t)
	subj := subject(t, "echo")
	if _, err := nc.Subscribe(subj, func(m *natsio.Msg) { m.Respond(m.Data) }); err != nil {
		t.Fatal(err)
	}
	flush(t, nc)
	const requesters = 100
	errs := make(chan error, requesters)
	for i := range requesters {
		go func() {
			want := []byte(strings.Repeat("r", i))
			for range 5 {
				reply, err := nc.Request(ctxTimeout(t, 10*time.Second), subj, want)
				if err == nil && !bytes.Equal(reply.Data, want) {
					err = errors.New("wrong reply " + string(reply.Data))
				}
				if err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}()
	}
	for range requesters {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
}
