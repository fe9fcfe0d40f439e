package natsio_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	natsio "github.com/libnatsio/natsio/bindings/go"
)

// fillQueue subscribes with a 10-message limit and the policy, publishes
// 0..49 and waits until the server has delivered them all to the client.
func fillQueue(t *testing.T, nc *natsio.Conn, policy natsio.PendingPolicy) *natsio.Subscription {
	t.Helper()
	subj := subject(t, "q")
	sub, err := nc.SubscribeSync(subj, natsio.SubPendingLimits(10, -1), natsio.SubPolicy(policy))
	if err != nil {
		t.Fatal(err)
	}
	for i := range 50 {
		if err := nc.Publish(subj, []byte(fmt.Sprint(i))); err != nil {
			t.Fatal(err)
		}
	}
	return sub
}

func readData(t *testing.T, sub *natsio.Subscription, n int) []string {
	t.Helper()
	var got []string
	for range n {
		got = append(got, string(mustNext(t, sub).Data))
	}
	return got
}

func seq(from, to int) []string {
	var out []string
	for i := from; i < to; i++ {
		out = append(out, fmt.Sprint(i))
	}
	return out
}

func TestPendingLimitPolicies(t *testing.T) {
	t.Run("drop new", func(t *testing.T) {
		reports := make(chan error, 100)
		nc := connect(t, natsio.ErrorHandler(func(err error) { reports <- err }))
		sub := fillQueue(t, nc, natsio.PolicyDropNew)
		flush(t, nc)
		eventually(t, "drops", func() bool { st, _ := sub.Stats(); return st.Dropped == 40 })
		if got := readData(t, sub, 10); !slices.Equal(got, seq(0, 10)) {
			t.Fatalf("kept %v", got)
		}
		select {
		case err := <-reports:
			wantIs(t, err, natsio.ErrSlowConsumer)
			var aerr *natsio.AsyncError
			if !errors.As(err, &aerr) || aerr.Subject != sub.Subject() || aerr.SID != sub.SID() {
				t.Fatalf("report %#v", err)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("drops were not reported")
		}
	})
	t.Run("drop old", func(t *testing.T) {
		nc := connect(t)
		sub := fillQueue(t, nc, natsio.PolicyDropOld)
		flush(t, nc)
		eventually(t, "drops", func() bool { st, _ := sub.Stats(); return st.Dropped == 40 })
		if got := readData(t, sub, 10); !slices.Equal(got, seq(40, 50)) {
			t.Fatalf("kept %v", got)
		}
	})
	t.Run("block", func(t *testing.T) {
		// A separate publisher, flushed: the server has routed the whole
		// flood to nc, so nc's PONG comes after it. BLOCK pauses nc's
		// reader at the limit, so nc cannot flush until the consumer reads;
		// an unlimited queue would take the flood and the PONG at once.
		const limit, total = 10, 500
		nc, pub := connect(t), connect(t)
		subj := subject(t, "q")
		sub, err := nc.SubscribeSync(subj, natsio.SubPendingLimits(limit, -1), natsio.SubPolicy(natsio.PolicyBlock))
		if err != nil {
			t.Fatal(err)
		}
		flush(t, nc)
		for i := range total {
			if err := pub.Publish(subj, []byte(fmt.Sprint(i))); err != nil {
				t.Fatal(err)
			}
		}
		flush(t, pub)
		eventually(t, "a full queue", func() bool { st, _ := sub.Stats(); return st.PendingMsgs >= limit })
		if err := nc.Flush(ctxTimeout(t, 500*time.Millisecond)); !errors.Is(err, natsio.ErrTimeout) {
			t.Fatalf("flush while blocked: %v, want a timeout", err)
		}
		// The message that found the queue full is kept: one over at most.
		if st, _ := sub.Stats(); st.PendingMsgs > limit+1 || st.Dropped != 0 {
			t.Fatalf("stats while blocked %+v", st)
		}
		// Everything arrives in order, the queue never over the limit.
		for i := range total {
			if got := string(mustNext(t, sub).Data); got != fmt.Sprint(i) {
				t.Fatalf("message %d: got %q", i, got)
			}
			if st, _ := sub.Stats(); st.PendingMsgs > limit+1 {
				t.Fatalf("after %d read: stats %+v", i+1, st)
			}
		}
		if st, _ := sub.Stats(); st.Dropped != 0 || st.Delivered != total {
			t.Fatalf("stats %+v", st)
		}
		flush(t, nc) // caught up: the connection reads again
	})
	t.Run("error", func(t *testing.T) {
		nc := connect(t)
		sub := fillQueue(t, nc, natsio.PolicyError)
		flush(t, nc)
		var err error
		for range 51 {
			if _, err = sub.NextMsg(ctxTimeout(t, 5*time.Second)); err != nil {
				break
			}
		}
		wantIs(t, err, natsio.ErrSlowConsumer)
	})
	t.Run("invalid policy", func(t *testing.T) {
		nc := connect(t)
		_, err := nc.SubscribeSync(subject(t, "x"), natsio.SubPolicy(natsio.PendingPolicy(42)))
		wantIs(t, err, natsio.ErrInvalidArgument)
	})
	t.Run("connection default limits", func(t *testing.T) {
		nc := connect(t, natsio.PendingLimits(10, -1))
		subj := subject(t, "q")
		sub, _ := nc.SubscribeSync(subj)
		for i := range 50 {
			nc.Publish(subj, []byte(fmt.Sprint(i)))
		}
		flush(t, nc)
		eventually(t, "drops", func() bool { st, _ := sub.Stats(); return st.Dropped == 40 })
	})
}

// responders subscribes n responders to subj, each answering its index.
func responders(t *testing.T, nc *natsio.Conn, subj string, n int) {
	t.Helper()
	for i := range n {
		if _, err := nc.Subscribe(subj, func(m *natsio.Msg) { m.Respond([]byte(fmt.Sprint(i))) }); err != nil {
			t.Fatal(err)
		}
	}
	flush(t, nc)
}

func collect(t *testing.T, seq func(func(*natsio.Msg, error) bool)) ([]string, error) {
	t.Helper()
	var got []string
	var lastErr error
	for m, err := range seq {
		if err != nil {
			lastErr = err
			continue
		}
		got = append(got, string(m.Data))
	}
	slices.Sort(got)
	return got, lastErr
}

// A connection's iterators fail with ErrConnectionClosed when it closes,
// rather than ending quietly (conformance: every binding, as the
// reference's request_many raises): RequestMany's replies, closed while
// the request waits for more, and a synchronous subscription.
func TestIteratorsFailWithConnectionClosed(t *testing.T) {
	nc := connect(t)
	subj := subject(t, "one-reply")
	responders(t, nc, subj, 1)
	quiet := got(nc.SubscribeSync(subject(t, "quiet"))).must(t)
	ctx := ctxTimeout(t, 10*time.Second)
	var replies int
	var last error
	for m, err := range nc.RequestMany(ctx, subj, nil) {
		if err != nil {
			last = err
			break
		}
		replies++
		if string(m.Data) != "0" {
			t.Fatalf("reply %q", m.Data)
		}
		noErr(t, nc.Close()) // the request still waits for more replies
	}
	if replies != 1 {
		t.Fatalf("%d replies before the close", replies)
	}
	wantIs(t, last, natsio.ErrConnectionClosed)
	_, err := quiet.NextMsg(ctx)
	wantIs(t, err, natsio.ErrConnectionClosed)
}

func TestRequestMany(t *testing.T) {
	nc := connect(t)
	subj := subject(t, "scatter")
	responders(t, nc, subj, 3)

	got, err := collect(t, nc.RequestMany(ctxTimeout(t, 5*time.Second), subj, []byte("who?"), natsio.Stall(300*time.Millisecond)))
	if err != nil || !slices.Equal(got, []string{"0", "1", "2"}) {
		t.Fatalf("stall: got %v, %v", got, err)
	}
	got, err = collect(t, nc.RequestMany(ctxTimeout(t, 5*time.Second), subj, nil, natsio.MaxReplies(2)))
	if err != nil || len(got) != 2 {
		t.Fatalf("max 2: got %v, %v", got, err)
	}
	got, err = collect(t, nc.RequestMany(ctxTimeout(t, 300*time.Millisecond), subj, nil))
	if len(got) != 3 {
		t.Fatalf("deadline: got %v, %v", got, err)
	}
	got, err = collect(t, nc.RequestMany(ctxTimeout(t, 5*time.Second), subject(t, "nobody"), nil))
	if err != nil || len(got) != 0 {
		t.Fatalf("no responders: got %v, %v", got, err)
	}
	// Breaking out early.
	for m, err := range nc.RequestMany(ctxTimeout(t, 5*time.Second), subj, nil, natsio.Stall(300*time.Millisecond)) {
		if err != nil || m == nil {
			t.Fatal(err)
		}
		break
	}
	// Cancelling a silent request.
	silent := subject(t, "silent")
	silentResponder(t, nc, silent)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	got, err = collect(t, nc.RequestMany(ctx, silent, nil))
	if len(got) != 0 || !errors.Is(err, context.Canceled) {
		t.Fatalf("cancel: got %v, %v", got, err)
	}
	_, err = collect(t, nc.RequestMany(context.Background(), "bad..subject", nil))
	wantIs(t, err, natsio.ErrBadSubject)
}

func TestSubscriptionDrainHandlesBacklog(t *testing.T) {
	nc := connect(t)
	subj := subject(t, "d")
	var handled atomic.Int64
	sub, err := nc.Subscribe(subj, func(*natsio.Msg) {
		time.Sleep(5 * time.Millisecond)
		handled.Add(1)
	})
	if err != nil {
		t.Fatal(err)
	}
	for range 20 {
		nc.Publish(subj, nil)
	}
	flush(t, nc)
	if err := sub.Drain(ctxTimeout(t, 10*time.Second)); err != nil {
		t.Fatal(err)
	}
	if handled.Load() != 20 || !sub.IsClosed() {
		t.Fatalf("handled %d, closed %v", handled.Load(), sub.IsClosed())
	}
	nc.Publish(subj, nil)
	flush(t, nc)
	if handled.Load() != 20 {
		t.Fatal("delivery after drain")
	}
}

func TestConnDrain(t *testing.T) {
	nc := connect(t)
	subj := subject(t, "d")
	var handled atomic.Int64
	if _, err := nc.Subscribe(subj, func(*natsio.Msg) { handled.Add(1) }); err != nil {
		t.Fatal(err)
	}
	for range 50 {
		nc.Publish(subj, nil)
	}
	flush(t, nc)
	if err := nc.Drain(ctxTimeout(t, 10*time.Second)); err != nil {
		t.Fatal(err)
	}
	if handled.Load() != 50 || nc.Status() != natsio.Closed {
		t.Fatalf("handled %d, status %v", handled.Load(), nc.Status())
	}
	wantIs(t, nc.Publish(subj, nil), natsio.ErrConnectionClosed)
}

func TestDrainTimeoutAndIllegalState(t *testing.T) {
	reports := make(chan error, 10)
	nc := connect(t, natsio.DrainTimeout(200*time.Millisecond), natsio.ErrorHandler(func(err error) { reports <- err }))
	subj := subject(t, "slow")
	var handled atomic.Int64
	entered := make(chan struct{}, 10)
	if _, err := nc.Subscribe(subj, func(*natsio.Msg) {
		entered <- struct{}{}
		time.Sleep(300 * time.Millisecond) // a backlog of 5 takes 1.5s
		handled.Add(1)
	}); err != nil {
		t.Fatal(err)
	}
	for range 5 {
		nc.Publish(subj, nil)
	}
	<-entered
	drained := make(chan error, 1)
	go func() { drained <- nc.Drain(context.Background()) }()
	eventually(t, "draining", func() bool { return nc.Status() == natsio.Draining })
	wantIs(t, nc.Drain(context.Background()), natsio.ErrIllegalState)
	wantIs(t, <-drained, natsio.ErrDrainTimeout)
	if nc.Status() != natsio.Closed {
		t.Fatalf("status %v after drain timeout", nc.Status())
	}
	if n := handled.Load(); n == 5 {
		t.Fatal("the whole backlog was handled despite the drain timeout")
	}
	select {
	case r := <-reports:
		wantIs(t, r, natsio.ErrDrainTimeout)
	case <-time.After(5 * time.Second):
		t.Fatal("drain timeout not reported")
	}
}

func TestArgumentErrors(t *testing.T) {
	nc := connect(t)
	wantIs(t, nc.Publish("bad..subject", nil), natsio.ErrBadSubject)
	wantIs(t, nc.Publish("", nil), natsio.ErrBadSubject)
	wantIs(t, nc.Publish("with space", nil), natsio.ErrBadSubject)
	wantIs(t, nc.Publish("bad\xffutf8", nil), natsio.ErrInvalidUTF8)
	wantIs(t, nc.Publish("nul\x00byte", nil), natsio.ErrInvalidArgument)
	_, err := nc.SubscribeSync("a.>.b")
	wantIs(t, err, natsio.ErrBadSubject)
	_, err = nc.Subscribe("", func(*natsio.Msg) {})
	wantIs(t, err, natsio.ErrBadSubject)
	_, err = nc.QueueSubscribeSync("ok", "bad queue")
	wantIs(t, err, natsio.ErrBadQueueName)
	wantIs(t, nc.PublishMsg(&natsio.Msg{Subject: "ok", Header: natsio.Header{"Bad:Name": {"v"}}}), natsio.ErrBadHeaders)
	wantIs(t, nc.PublishMsg(&natsio.Msg{Subject: "ok", Header: natsio.Header{"X": {"a\r\nPUB evil 0"}}}), natsio.ErrBadHeaders)
	_, err = nc.Request(context.Background(), "bad..subject", nil)
	wantIs(t, err, natsio.ErrBadSubject)

	big := make([]byte, nc.MaxPayload()+1)
	err = nc.Publish("ok", big)
	wantIs(t, err, natsio.ErrMaxPayload)
	var e *natsio.Error
	if !errors.As(err, &e) || e.Detail == "" {
		t.Fatalf("max payload error carries no detail: %#v", err)
	}
	wantIs(t, nc.Publish("ok", big[:nc.MaxPayload()]), nil)

	sub, _ := nc.SubscribeSync(subject(t, "x"))
	wantIs(t, sub.AutoUnsubscribe(0), natsio.ErrInvalidArgument)
	if err := sub.Unsubscribe(); err != nil {
		t.Fatal(err)
	}
	// Ended without error: ErrDone (the library's NATSIO_DONE), not a failure.
	_, err = sub.NextMsg(context.Background())
	wantIs(t, err, natsio.ErrDone)
	if errors.Is(err, natsio.ErrSubscriptionClosed) {
		t.Fatalf("a clean end matches ErrSubscriptionClosed: %v", err)
	}
	wantIs(t, sub.Unsubscribe(), nil) // again: nothing to do
	wantIs(t, sub.AutoUnsubscribe(1), natsio.ErrSubscriptionClosed)

	// A callback subscription's messages belong to its handler.
	cbSub, _ := nc.Subscribe(subject(t, "cb"), func(*natsio.Msg) {})
	_, err = cbSub.NextMsg(context.Background())
	wantIs(t, err, natsio.ErrIllegalState)

	wantIs(t, (&natsio.Msg{Subject: "no.reply"}).Respond(nil), natsio.ErrNoReplySubject)
}

func TestConnectErrorsAndOptions(t *testing.T) {
	_, err := natsio.Connect(shared.url, natsio.ConnectTimeout(0))
	wantIs(t, err, natsio.ErrConfig)
	_, err = natsio.Connect(shared.url, natsio.InboxPrefix("bad prefix"))
	wantIs(t, err, natsio.ErrConfig)
	_, err = natsio.Connect(shared.url, natsio.PingInterval(0, 2))
	wantIs(t, err, natsio.ErrConfig)
	_, err = natsio.Connect(shared.url, natsio.Token("t"), natsio.UserInfo("u", "p"))
	wantIs(t, err, natsio.ErrConfig)
	_, err = natsio.Connect("nats://bad url:::")
	wantIs(t, err, natsio.ErrConfig)

	port, _ := freePort()
	_, err = natsio.Connect(fmt.Sprintf("nats://127.0.0.1:%d", port), natsio.ConnectTimeout(time.Second))
	wantIs(t, err, natsio.ErrNoServers)

	nc := connect(t,
		natsio.Name("go-test"), natsio.NoEcho(), natsio.InboxPrefix("_GO_INBOX"),
		natsio.FlushTimeout(5*time.Second), natsio.RequestTimeout(time.Second),
		natsio.PingInterval(time.Minute, 3), natsio.MaxPendingSize(4<<20), natsio.DrainTimeout(time.Second))
	inbox, err := nc.NewInbox()
	if err != nil || !strings.HasPrefix(inbox, "_GO_INBOX.") {
		t.Fatalf("inbox %q, %v", inbox, err)
	}
	// NoEcho: our own publish does not come back.
	sub, _ := nc.SubscribeSync(subject(t, "echo"))
	nc.Publish(subject(t, "echo"), nil)
	flush(t, nc)
	_, err = sub.NextMsg(ctxTimeout(t, 100*time.Millisecond))
	wantIs(t, err, natsio.ErrTimeout)
	// A request through the custom inbox prefix still works.
	responders(t, connect(t), subject(t, "svc"), 1)
	if _, err := nc.Request(ctxTimeout(t, 5*time.Second), subject(t, "svc"), nil); err != nil {
		t.Fatal(err)
	}
}

func TestConnInfo(t *testing.T) {
	nc := connect(t)
	if nc.Status() != natsio.Connected || nc.Status().String() != "connected" {
		t.Fatalf("status %v", nc.Status())
	}
	info, err := nc.ServerInfo()
	if err != nil {
		t.Fatal(err)
	}
	if info.Version == "" || info.ServerID == "" || !info.Headers || info.MaxPayload != nc.MaxPayload() || len(info.Raw) == 0 {
		t.Fatalf("info %+v (max payload %d)", info, nc.MaxPayload())
	}
	url, err := nc.ConnectedURL()
	if err != nil || !strings.Contains(url, strings.TrimPrefix(shared.url, "nats://")) {
		t.Fatalf("connected url %q, %v", url, err)
	}
	before := nc.Stats()
	nc.Publish(subject(t, "s"), []byte("12345"))
	flush(t, nc)
	after := nc.Stats()
	if after.OutMsgs != before.OutMsgs+1 || after.OutBytes != before.OutBytes+5 {
		t.Fatalf("stats before %+v after %+v", before, after)
	}
	if natsio.Version() == "" {
		t.Fatal("no version")
	}
}

func TestAuthentication(t *testing.T) {
	t.Run("user and password", func(t *testing.T) {
		srv := startTestServer(t, "--user", "alice", "--pass", "s3cret")
		_, err := natsio.Connect(srv.url)
		wantIs(t, err, natsio.ErrAuthorization)
		_, err = natsio.Connect(srv.url, natsio.UserInfo("alice", "wrong"))
		wantIs(t, err, natsio.ErrAuthorization)
		nc := connectTo(t, srv.url, natsio.UserInfo("alice", "s3cret"))
		flush(t, nc)
	})
	t.Run("token", func(t *testing.T) {
		srv := startTestServer(t, "--auth", "tok3n")
		_, err := natsio.Connect(srv.url, natsio.Token("nope"))
		wantIs(t, err, natsio.ErrAuthorization)
		nc := connectTo(t, srv.url, natsio.Token("tok3n"))
		flush(t, nc)
	})
}

func TestPermissionViolationIsReported(t *testing.T) {
	conf := filepath.Join(t.TempDir(), "server.conf")
	err := os.WriteFile(conf, []byte(`authorization {
  users = [ { user: bob, password: pw, permissions: { publish: { deny: ["secret.>"] }, subscribe: { deny: ["hidden.>"] } } } ]
}
`), 0o600)
	if err != nil {
		t.Fatal(err)
	}
	srv := startTestServer(t, "-c", conf)
	reports := make(chan error, 10)
	nc := connectTo(t, srv.url, natsio.UserInfo("bob", "pw"), natsio.ErrorHandler(func(err error) { reports <- err }))
	if err := nc.Publish("secret.plans", []byte("x")); err != nil {
		t.Fatal(err) // the server answers asynchronously
	}
	select {
	case r := <-reports:
		wantIs(t, r, natsio.ErrPermissions)
		if !strings.Contains(r.Error(), "secret.plans") {
			t.Fatalf("report %v lacks the server's text", r)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("permissions violation not reported")
	}
	// The connection survives the violation.
	flush(t, nc)
	if nc.Status() != natsio.Connected {
		t.Fatalf("status %v", nc.Status())
	}
}

// PermissionErrOnSubscribe: a refused subscription ends with
// ErrPermissions; an allowed one keeps receiving.
func TestPermissionErrOnSubscribeEndsTheSubscription(t *testing.T) {
	conf := filepath.Join(t.TempDir(), "server.conf")
	err := os.WriteFile(conf, []byte(`authorization {
  users = [ { user: bob, password: pw, permissions: { subscribe: { deny: ["hidden.>"] } } } ]
}
`), 0o600)
	if err != nil {
		t.Fatal(err)
	}
	srv := startTestServer(t, "-c", conf)
	nc := connectTo(t, srv.url, natsio.UserInfo("bob", "pw"), natsio.PermissionErrOnSubscribe(true),
		natsio.ErrorHandler(func(error) {}))
	allowed, err := nc.SubscribeSync("open.x")
	if err != nil {
		t.Fatal(err)
	}
	denied, err := nc.SubscribeSync("hidden.x")
	if err != nil {
		t.Fatal(err)
	}
	_, err = denied.NextMsg(ctxTimeout(t, 5*time.Second))
	wantIs(t, err, natsio.ErrPermissions)
	if err := nc.Publish("open.x", []byte("hi")); err != nil {
		t.Fatal(err)
	}
	if m, err := allowed.NextMsg(ctxTimeout(t, 5*time.Second)); err != nil || string(m.Data) != "hi" {
		t.Fatalf("allowed subscription: %v, %v", m, err)
	}
}

// SetWaitSpin changes how a blocked request waits, not what it gets:
// replies with spinning off and with a spin far longer than the request's
// deadline, and that deadline kept.
func TestWaitSpinKeepsRepliesAndDeadlines(t *testing.T) {
	defer natsio.SetWaitSpin(200 * time.Microsecond)
	nc := connect(t)
	subj := subject(t, "svc")
	if _, err := nc.Subscribe(subj, func(m *natsio.Msg) { _ = m.Respond(m.Data) }); err != nil {
		t.Fatal(err)
	}
	silent, err := nc.SubscribeSync(subj + ".silent")
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Unsubscribe()
	flush(t, nc)
	for _, spin := range []time.Duration{0, 200 * time.Microsecond, 5 * time.Second} {
		natsio.SetWaitSpin(spin)
		for i := range 20 {
			want := fmt.Sprint(spin, i)
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			m, err := nc.Request(ctx, subj, []byte(want))
			cancel()
			if err != nil || string(m.Data) != want {
				t.Fatalf("spin %v: request %d: %v", spin, i, err)
			}
		}
		start := time.Now()
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		_, err := nc.Request(ctx, subj+".silent", nil)
		cancel()
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("spin %v: request to a silent subject: %v", spin, err)
		}
		if took := time.Since(start); took > 2*time.Second {
			t.Fatalf("spin %v: a 100 ms deadline took %v", spin, took)
		}
	}
}
