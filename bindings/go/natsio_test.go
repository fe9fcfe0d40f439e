package natsio_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	natsio "github.com/libnatsio/natsio/bindings/go"
)

// connect opens a connection to the shared server, closed at the test's end.
func connect(t *testing.T, opts ...natsio.Option) *natsio.Conn {
	t.Helper()
	return connectTo(t, shared.url, opts...)
}

func connectTo(t *testing.T, url string, opts ...natsio.Option) *natsio.Conn {
	t.Helper()
	nc, err := natsio.Connect(url, opts...)
	if err != nil {
		t.Fatalf("Connect(%s): %v", url, err)
	}
	t.Cleanup(func() { nc.Close() })
	return nc
}

// subject is a subject unique to the test, so tests sharing a server
// never see each other's messages.
func subject(t *testing.T, suffix string) string {
	name := strings.NewReplacer("/", ".", " ", "_", "#", "_").Replace(t.Name())
	return "test." + name + "." + suffix
}

func ctxTimeout(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

func flush(t *testing.T, nc *natsio.Conn) {
	t.Helper()
	if err := nc.Flush(ctxTimeout(t, 5*time.Second)); err != nil {
		t.Fatalf("Flush: %v", err)
	}
}

func mustNext(t *testing.T, sub *natsio.Subscription) *natsio.Msg {
	t.Helper()
	m, err := sub.NextMsg(ctxTimeout(t, 5*time.Second))
	if err != nil {
		t.Fatalf("NextMsg on %s: %v", sub.Subject(), err)
	}
	return m
}

// eventually polls cond until it holds or 20 s pass (generous for a loaded
// machine: only a failure waits that long).
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatalf("timed out waiting for %s", what)
}

func wantIs(t *testing.T, err, target error) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Fatalf("got error %v, want one matching %v", err, target)
	}
}

func TestEveryStatusCodeHasASentinel(t *testing.T) {
	seen := map[error]int32{}
	for code := int32(100); code < 1000; code++ {
		if natsio.StatusTextForTest(code) == "unknown status code" {
			continue
		}
		s := natsio.SentinelForTest(code)
		if s == nil {
			t.Errorf("status %d (%s) has no Go error value", code, natsio.StatusTextForTest(code))
			continue
		}
		if other, dup := seen[s]; dup {
			t.Errorf("statuses %d and %d share an error value", other, code)
		}
		seen[s] = code
		err := &natsio.Error{Status: natsio.Status(code), Detail: "detail text"}
		if !errors.Is(err, s) {
			t.Errorf("errors.Is(Error{%d}, its sentinel) is false", code)
		}
		if !strings.Contains(err.Error(), "detail text") {
			t.Errorf("Error() %q drops the detail", err.Error())
		}
	}
	if len(seen) < 30 {
		t.Fatalf("only %d status codes found", len(seen))
	}
	if errors.Is(&natsio.Error{Status: 200}, natsio.ErrNoResponders) {
		t.Fatal("a timeout matches ErrNoResponders")
	}
}

func TestPublishAndSubscribeSync(t *testing.T) {
	nc := connect(t)
	subj := subject(t, "x")
	sub, err := nc.SubscribeSync(subj)
	if err != nil {
		t.Fatal(err)
	}
	if err := nc.Publish(subj, []byte("hello")); err != nil {
		t.Fatal(err)
	}
	if err := nc.Publish(subj, nil); err != nil {
		t.Fatal(err)
	}
	m := mustNext(t, sub)
	if m.Subject != subj || string(m.Data) != "hello" || m.Reply != "" || m.Header != nil {
		t.Fatalf("got %+v", m)
	}
	if m := mustNext(t, sub); len(m.Data) != 0 {
		t.Fatalf("empty payload arrived as %q", m.Data)
	}
	st, err := sub.Stats()
	if err != nil || st.Delivered != 2 {
		t.Fatalf("stats %+v, %v", st, err)
	}
}

func TestWildcardAndBinaryPayload(t *testing.T) {
	nc := connect(t)
	sub, err := nc.SubscribeSync(subject(t, ">"))
	if err != nil {
		t.Fatal(err)
	}
	payload := []byte{0, 1, 2, 0, 255}
	if err := nc.Publish(subject(t, "a.b"), payload); err != nil {
		t.Fatal(err)
	}
	m := mustNext(t, sub)
	if m.Subject != subject(t, "a.b") || !bytes.Equal(m.Data, payload) {
		t.Fatalf("got %q %v", m.Subject, m.Data)
	}
}

func TestPublishMsgHeadersAreMultiValueAndExact(t *testing.T) {
	nc := connect(t)
	subj := subject(t, "h")
	sub, err := nc.SubscribeSync(subj)
	if err != nil {
		t.Fatal(err)
	}
	hdr := natsio.Header{}
	hdr.Add("X-Tag", "red")
	hdr.Add("X-Tag", "blue")
	hdr.Set("x-tag", "lower")
	hdr.Set("Content-Type", "application/json")
	out := &natsio.Msg{Subject: subj, Reply: "reply.here", Header: hdr, Data: []byte("{}")}
	if err := nc.PublishMsg(out); err != nil {
		t.Fatal(err)
	}
	m := mustNext(t, sub)
	if m.Reply != "reply.here" || string(m.Data) != "{}" {
		t.Fatalf("got %+v", m)
	}
	if got := m.Header.Values("X-Tag"); !slices.Equal(got, []string{"red", "blue"}) {
		t.Fatalf("X-Tag = %v", got)
	}
	if m.Header.Get("x-tag") != "lower" || m.Header.Get("X-TAG") != "" {
		t.Fatalf("lookup is not exact: %v", m.Header)
	}
	if m.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("headers %v", m.Header)
	}
}

func TestSubscribeCallbackGetsCopiesInOrder(t *testing.T) {
	nc := connect(t)
	subj := subject(t, "cb")
	var mu sync.Mutex
	var got []*natsio.Msg
	done := make(chan struct{})
	const n = 200
	_, err := nc.Subscribe(subj, func(m *natsio.Msg) {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, m)
		if len(got) == n {
			close(done)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		hdr := natsio.Header{"I": {fmt.Sprint(i)}}
		if err := nc.PublishMsg(&natsio.Msg{Subject: subj, Header: hdr, Data: []byte(fmt.Sprintf("msg-%d", i))}); err != nil {
			t.Fatal(err)
		}
	}
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("messages did not arrive")
	}
	// The messages are read long after their handler returned: they must
	// be copies, not views of library buffers.
	mu.Lock()
	defer mu.Unlock()
	for i, m := range got {
		if string(m.Data) != fmt.Sprintf("msg-%d", i) || m.Header.Get("I") != fmt.Sprint(i) || m.Subject != subj {
			t.Fatalf("message %d: %q %v", i, m.Data, m.Header)
		}
	}
}

func TestQueueGroupsDeliverEachMessageOnce(t *testing.T) {
	nc := connect(t)
	subj := subject(t, "jobs")
	var a, b atomic.Int64
	for _, counter := range []*atomic.Int64{&a, &b} {
		if _, err := nc.QueueSubscribe(subj, "pool", func(*natsio.Msg) { counter.Add(1) }); err != nil {
			t.Fatal(err)
		}
	}
	syncMember, err := nc.QueueSubscribeSync(subj, "pool")
	if err != nil {
		t.Fatal(err)
	}
	if syncMember.Queue() != "pool" {
		t.Fatalf("Queue() = %q", syncMember.Queue())
	}
	const n = 300
	for range n {
		if err := nc.Publish(subj, []byte("job")); err != nil {
			t.Fatal(err)
		}
	}
	flush(t, nc)
	var c int64
	eventually(t, "all jobs", func() bool {
		st, _ := syncMember.Stats()
		c = int64(st.PendingMsgs)
		return a.Load()+b.Load()+c == n
	})
	time.Sleep(50 * time.Millisecond) // a duplicate would show up by now
	if total := a.Load() + b.Load() + c; total != n {
		t.Fatalf("%d deliveries for %d jobs", total, n)
	}
}

func TestRequestReply(t *testing.T) {
	nc := connect(t)
	subj := subject(t, "echo")
	_, err := nc.Subscribe(subj, func(m *natsio.Msg) {
		reply := &natsio.Msg{Header: natsio.Header{"Handled-By": {"svc-1"}}, Data: append([]byte("echo: "), m.Data...)}
		if m.Header.Get("Mode") == "plain" {
			m.Respond(reply.Data)
			return
		}
		m.RespondMsg(reply)
	})
	if err != nil {
		t.Fatal(err)
	}
	flush(t, nc)
	reply, err := nc.Request(ctxTimeout(t, 5*time.Second), subj, []byte("hi"))
	if err != nil {
		t.Fatal(err)
	}
	if string(reply.Data) != "echo: hi" || reply.Header.Get("Handled-By") != "svc-1" {
		t.Fatalf("reply %+v", reply)
	}
	reply, err = nc.RequestMsg(context.Background(), &natsio.Msg{Subject: subj, Header: natsio.Header{"Mode": {"plain"}}, Data: []byte("yo")})
	if err != nil {
		t.Fatal(err)
	}
	if string(reply.Data) != "echo: yo" || reply.Header != nil {
		t.Fatalf("reply %+v", reply)
	}
}

// silentResponder subscribes to subj and never answers.
func silentResponder(t *testing.T, nc *natsio.Conn, subj string) {
	t.Helper()
	sub, err := nc.SubscribeSync(subj)
	if err != nil {
		t.Fatal(err)
	}
	// Kept reachable to the test's end: an unreachable Subscription is
	// stopped by its finalizer, and a collection mid-test would turn the
	// silence into "no responders" (seen under -asan beside a CPU hog).
	t.Cleanup(func() { runtime.KeepAlive(sub) })
	flush(t, nc)
}

func TestRequestErrors(t *testing.T) {
	nc := connect(t, natsio.RequestTimeout(150*time.Millisecond))
	t.Run("no responders", func(t *testing.T) {
		_, err := nc.Request(context.Background(), subject(t, "nobody"), nil)
		wantIs(t, err, natsio.ErrNoResponders)
		var e *natsio.Error
		if !errors.As(err, &e) || e.Status != 400 {
			t.Fatalf("error %#v", err)
		}
	})
	t.Run("library timeout", func(t *testing.T) {
		subj := subject(t, "silent")
		silentResponder(t, nc, subj)
		_, err := nc.Request(context.Background(), subj, nil)
		wantIs(t, err, natsio.ErrTimeout)
	})
	t.Run("context deadline", func(t *testing.T) {
		nc := connect(t, natsio.RequestTimeout(time.Minute))
		subj := subject(t, "silent")
		silentResponder(t, nc, subj)
		_, err := nc.Request(ctxTimeout(t, 100*time.Millisecond), subj, nil)
		wantIs(t, err, natsio.ErrTimeout)
		wantIs(t, err, context.DeadlineExceeded)
	})
}

func TestRequestCancelledWhilePending(t *testing.T) {
	baseline := natsio.LiveHandlesForTest()
	nc := connect(t, natsio.RequestTimeout(time.Minute))
	subj := subject(t, "silent")
	silentResponder(t, nc, subj)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	start := time.Now()
	_, err := nc.Request(ctx, subj, []byte("?"))
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v, want context.Canceled", err)
	}
	// Nowhere near the one-minute request timeout: the cancellation ended it.
	if elapsed := time.Since(start); elapsed > 20*time.Second {
		t.Fatalf("cancelled request returned after %v", elapsed)
	}
	// The connection goes on working.
	if err := nc.Flush(ctxTimeout(t, 5*time.Second)); err != nil {
		t.Fatal(err)
	}
	_, err = nc.Request(ctx, subj, nil)
	wantIs(t, err, context.Canceled)
	// The cancelled request's completion handle came back.
	waitHandlesReleased(t, baseline)
}

func TestNextMsgHonoursContext(t *testing.T) {
	nc := connect(t)
	sub, err := nc.SubscribeSync(subject(t, "quiet"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	_, err = sub.NextMsg(ctx)
	wantIs(t, err, context.Canceled)

	_, err = sub.NextMsg(ctxTimeout(t, 60*time.Millisecond))
	wantIs(t, err, natsio.ErrTimeout)
	wantIs(t, err, context.DeadlineExceeded)

	// A message already queued is returned even to a short deadline.
	nc.Publish(sub.Subject(), []byte("late"))
	flush(t, nc)
	if m := mustNext(t, sub); string(m.Data) != "late" {
		t.Fatalf("got %q", m.Data)
	}
}

func TestMsgsIteratorEndsWithAutoUnsubscribe(t *testing.T) {
	nc := connect(t)
	subj := subject(t, "limited")
	sub, err := nc.SubscribeSync(subj)
	if err != nil {
		t.Fatal(err)
	}
	if err := sub.AutoUnsubscribe(3); err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		nc.Publish(subj, []byte(fmt.Sprint(i)))
	}
	var got []string
	for m, err := range sub.Msgs(ctxTimeout(t, 5*time.Second)) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, string(m.Data))
	}
	if !slices.Equal(got, []string{"0", "1", "2"}) {
		t.Fatalf("got %v", got)
	}
	if !sub.IsClosed() {
		t.Fatal("subscription still open after its limit")
	}
	_, err = sub.NextMsg(context.Background())
	wantIs(t, err, natsio.ErrDone)
}

func TestMsgsIteratorBreakAndContext(t *testing.T) {
	nc := connect(t)
	subj := subject(t, "it")
	sub, _ := nc.SubscribeSync(subj)
	for i := range 3 {
		nc.Publish(subj, []byte(fmt.Sprint(i)))
	}
	for m, err := range sub.Msgs(ctxTimeout(t, 5*time.Second)) {
		if err != nil || string(m.Data) != "0" {
			t.Fatalf("%v %v", m, err)
		}
		break
	}
	// Breaking left the rest queued.
	if m := mustNext(t, sub); string(m.Data) != "1" {
		t.Fatalf("got %q", m.Data)
	}
	mustNext(t, sub)
	var lastErr error
	count := 0
	for _, err := range sub.Msgs(ctxTimeout(t, 80*time.Millisecond)) {
		count++
		lastErr = err
	}
	if count != 1 || !errors.Is(lastErr, context.DeadlineExceeded) {
		t.Fatalf("iteration yielded %d items, last error %v", count, lastErr)
	}
}

// waitHandlesReleased checks that every cgo.Handle given to the library
// came back through its release callback.
func waitHandlesReleased(t *testing.T, baseline int64) {
	t.Helper()
	eventually(t, "handles released", func() bool { return natsio.LiveHandlesForTest() <= baseline })
}

func TestNoHandlerRunsAfterUnsubscribeReturns(t *testing.T) {
	baseline := natsio.LiveHandlesForTest()
	nc := connect(t)
	subj := subject(t, "busy")
	var calls, inside atomic.Int64
	started := make(chan struct{}, 1)
	sub, err := nc.Subscribe(subj, func(*natsio.Msg) {
		inside.Add(1)
		defer inside.Add(-1)
		calls.Add(1)
		select {
		case started <- struct{}{}:
		default:
		}
		time.Sleep(20 * time.Millisecond)
	})
	if err != nil {
		t.Fatal(err)
	}
	for range 20 {
		nc.Publish(subj, nil)
	}
	<-started
	if err := sub.Unsubscribe(); err != nil {
		t.Fatal(err)
	}
	if inside.Load() != 0 {
		t.Fatal("handler still running after Unsubscribe returned")
	}
	after := calls.Load()
	for range 5 {
		nc.Publish(subj, nil)
	}
	flush(t, nc)
	time.Sleep(50 * time.Millisecond) // an absence: no call within 50 ms
	if calls.Load() != after {
		t.Fatalf("handler ran %d times after Unsubscribe", calls.Load()-after)
	}
	if after >= 20 {
		t.Fatal("Unsubscribe did not discard the queued messages")
	}
	wantIs(t, sub.Unsubscribe(), nil) // idempotent
	waitHandlesReleased(t, baseline)
}

func TestCloseStopsHandlersAndIsIdempotent(t *testing.T) {
	baseline := natsio.LiveHandlesForTest()
	var errorsSeen atomic.Int64
	nc, err := natsio.Connect(shared.url, natsio.ErrorHandler(func(error) { errorsSeen.Add(1) }))
	if err != nil {
		t.Fatal(err)
	}
	subj := subject(t, "x")
	var calls, inside atomic.Int64
	started := make(chan struct{}, 1)
	sub, err := nc.Subscribe(subj, func(*natsio.Msg) {
		inside.Add(1)
		defer inside.Add(-1)
		calls.Add(1)
		select {
		case started <- struct{}{}:
		default:
		}
		time.Sleep(20 * time.Millisecond)
	})
	if err != nil {
		t.Fatal(err)
	}
	for range 10 {
		nc.Publish(subj, nil)
	}
	<-started
	if err := nc.Close(); err != nil {
		t.Fatal(err)
	}
	if inside.Load() != 0 {
		t.Fatal("handler still running after Close returned")
	}
	after := calls.Load()
	time.Sleep(50 * time.Millisecond) // an absence: no call within 50 ms
	if calls.Load() != after {
		t.Fatal("handler ran after Close")
	}
	if err := nc.Close(); err != nil && !errors.Is(err, natsio.ErrConnectionClosed) {
		t.Fatalf("second Close: %v", err)
	}
	if nc.Status() != natsio.Closed || !nc.IsClosed() {
		t.Fatalf("status %v", nc.Status())
	}
	wantIs(t, nc.Publish(subj, nil), natsio.ErrConnectionClosed)
	wantIs(t, nc.Flush(context.Background()), natsio.ErrConnectionClosed)
	_, err = nc.SubscribeSync(subj)
	wantIs(t, err, natsio.ErrConnectionClosed)
	if !sub.IsClosed() {
		t.Fatal("subscription open after Close")
	}
	// The subscription's handle comes back at Close. The error handler's
	// comes back only when the client is freed, i.e. by the finalizer once
	// the Conn is unreachable (see TestErrorHandlerReleasedAtClose).
	waitHandlesReleased(t, baseline+1)
	nc, sub = nil, nil
	eventually(t, "finalizers", func() bool {
		runtime.GC()
		return natsio.LiveHandlesForTest() <= baseline
	})
}

// natsio.h: the error callback's release runs once no client uses it, so
// the Go handler is unpinned at Close, not only when the finalizer runs.
func TestErrorHandlerReleasedAtClose(t *testing.T) {
	baseline := natsio.LiveHandlesForTest()
	nc, err := natsio.Connect(shared.url, natsio.ErrorHandler(func(error) {}))
	if err != nil {
		t.Fatal(err)
	}
	defer runtime.KeepAlive(nc)
	nc.Close()
	waitHandlesReleased(t, baseline)
}

func TestHandlerPanicIsReportedAndDeliveryGoesOn(t *testing.T) {
	reports := make(chan error, 10)
	nc := connect(t, natsio.ErrorHandler(func(err error) { reports <- err }))
	subj := subject(t, "p")
	var calls atomic.Int64
	sub, err := nc.Subscribe(subj, func(m *natsio.Msg) {
		if calls.Add(1) == 1 {
			panic("boom")
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	nc.Publish(subj, nil)
	nc.Publish(subj, nil)
	select {
	case err := <-reports:
		wantIs(t, err, natsio.ErrHandlerPanic)
		var aerr *natsio.AsyncError
		if !errors.As(err, &aerr) || aerr.Subject != subj || aerr.SID != sub.SID() || !strings.Contains(err.Error(), "boom") {
			t.Fatalf("report %#v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("panic not reported")
	}
	eventually(t, "second message", func() bool { return calls.Load() == 2 })
}

func TestConcurrentPublishers(t *testing.T) {
	nc := connect(t)
	subj := subject(t, "many")
	const publishers, each = 16, 500
	sub, err := nc.SubscribeSync(subj, natsio.SubPendingLimits(-1, -1))
	if err != nil {
		t.Fatal(err)
	}
	var callbackCount atomic.Int64
	if _, err := nc.Subscribe(subj, func(*natsio.Msg) { callbackCount.Add(1) }, natsio.SubPendingLimits(-1, -1)); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for p := range publishers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				if err := nc.Publish(subj, []byte(fmt.Sprintf("%d:%d", p, i))); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	flush(t, nc)
	next := make([]int, publishers)
	for range publishers * each {
		m := mustNext(t, sub)
		var p, i int
		if _, err := fmt.Sscanf(string(m.Data), "%d:%d", &p, &i); err != nil {
			t.Fatal(err)
		}
		if i != next[p] {
			t.Fatalf("publisher %d: got message %d, want %d", p, i, next[p])
		}
		next[p]++
	}
	eventually(t, "callback count", func() bool { return callbackCount.Load() == publishers*each })
	st, _ := sub.Stats()
	if st.PendingMsgs != 0 || st.Dropped != 0 {
		t.Fatalf("stats %+v", st)
	}
	if cs := nc.Stats(); cs.OutMsgs < publishers*each || cs.InMsgs < 2*publishers*each {
		t.Fatalf("conn stats %+v", cs)
	}
}

func TestDroppedReferencesDoNotStopCallbackSubscriptions(t *testing.T) {
	nc := connect(t)
	subj := subject(t, "kept")
	got := make(chan struct{}, 10)
	if _, err := nc.Subscribe(subj, func(*natsio.Msg) { got <- struct{}{} }); err != nil {
		t.Fatal(err)
	}
	// The *Subscription is unreachable now; its finalizer must leave an
	// open callback subscription running.
	for range 3 {
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
	nc.Publish(subj, nil)
	select {
	case <-got:
	case <-time.After(5 * time.Second):
		t.Fatal("callback subscription stopped after its Subscription was collected")
	}
}

func TestUnreachableSyncSubscriptionIsFreed(t *testing.T) {
	nc := connect(t)
	subj := subject(t, "dropped")
	func() {
		if _, err := nc.SubscribeSync(subj); err != nil {
			t.Fatal(err)
		}
	}()
	// Once freed by its finalizer, the server loses the interest: a
	// request then fails with no responders instead of waiting.
	eventually(t, "subscription freed", func() bool {
		runtime.GC()
		_, err := nc.Request(ctxTimeout(t, time.Second), subj, nil)
		return errors.Is(err, natsio.ErrNoResponders)
	})
}
