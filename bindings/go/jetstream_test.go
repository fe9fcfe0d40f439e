package natsio_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	natsio "github.com/libnatsio/natsio/bindings/go"
)

// jetStream starts a server with JetStream (its store in the test's temp
// dir) and returns a connection to it and a JetStream context.
func jetStream(t *testing.T, opts ...natsio.JSOpt) (*natsio.Conn, *natsio.JetStream) {
	t.Helper()
	s := startTestServer(t, "-js", "-sd", t.TempDir())
	nc := connectTo(t, s.url)
	js, err := nc.JetStream(opts...)
	if err != nil {
		t.Fatalf("JetStream: %v", err)
	}
	t.Cleanup(js.Close)
	return nc, js
}

// wantErr checks that err matches target and its text contains each of
// contains (the library's detail).
func wantErr(t *testing.T, err, target error, contains ...string) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Fatalf("got %v, want %v", err, target)
	}
	var e *natsio.Error
	if !errors.As(err, &e) {
		t.Fatalf("%v is not a *natsio.Error", err)
	}
	for _, c := range contains {
		if !strings.Contains(err.Error(), c) {
			t.Fatalf("error %q does not mention %q", err, c)
		}
	}
}

// result holds a call's two results, for got(call()).must(t).
type result[T any] struct {
	v   T
	err error
}

func got[T any](v T, err error) result[T] { return result[T]{v, err} }

func (r result[T]) must(t *testing.T) T {
	t.Helper()
	if r.err != nil {
		t.Fatal(r.err)
	}
	return r.v
}

func noErr(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func TestStreamLifecycle(t *testing.T) {
	_, js := jetStream(t)
	ctx := ctxTimeout(t, 10*time.Second)

	cfg := natsio.StreamConfig{Name: "ORDERS", Subjects: []string{"orders.>"}, MaxAge: time.Hour, Storage: natsio.MemoryStorage}
	info := got(js.CreateStream(ctx, cfg)).must(t)
	if info.Config.Name != "ORDERS" || info.Config.MaxAge != time.Hour || info.Config.Storage != natsio.MemoryStorage ||
		info.Config.Retention != natsio.LimitsPolicy || info.Created.IsZero() {
		t.Fatalf("created %+v", info.Config)
	}
	if !strings.Contains(string(info.Raw), `"max_age":3600000000000`) {
		t.Fatalf("raw info %s", info.Raw)
	}
	// Same config again: fine; another one: the name is in use.
	got(js.CreateStream(ctx, cfg)).must(t)
	_, err := js.CreateStream(ctx, natsio.StreamConfig{Name: "ORDERS", Subjects: []string{"other.>"}, Storage: natsio.MemoryStorage})
	wantErr(t, err, natsio.ErrStreamNameInUse)

	// The config read back round-trips through UpdateStream. Every field
	// the pinned server sends has its own Go field: none is left in Extra.
	cur := got(js.StreamInfo(ctx, "ORDERS")).must(t).Config
	if len(cur.Extra) != 0 {
		t.Fatalf("fields without a Go field: %v", cur.Extra)
	}
	cur.MaxAge = 2 * time.Hour
	upd := got(js.UpdateStream(ctx, cur)).must(t)
	if upd.Config.MaxAge != 2*time.Hour || upd.Config.Subjects[0] != "orders.>" {
		t.Fatalf("updated %+v", upd.Config)
	}
	_, err = js.UpdateStream(ctx, natsio.StreamConfig{Name: "NOPE", Subjects: []string{"nope"}})
	wantErr(t, err, natsio.ErrStreamNotFound)
	got(js.CreateOrUpdateStream(ctx, natsio.StreamConfig{Name: "NEW", Subjects: []string{"new.>"}})).must(t)

	// Config errors name the field; unknown fields reach the server.
	_, err = js.CreateStream(ctx, natsio.StreamConfig{Name: "X", Extra: map[string]any{"max_age": "soon"}})
	wantErr(t, err, natsio.ErrConfig, "max_age")
	_, err = js.CreateStream(ctx, natsio.StreamConfig{Name: "X", Extra: map[string]any{"x_unknown": 1}})
	wantErr(t, err, natsio.ErrJetStreamAPI, "x_unknown")
	_, err = js.CreateStream(ctx, natsio.StreamConfig{Name: "X", Extra: map[string]any{"max_age": "90s"}})
	if err != nil {
		t.Fatalf("a duration string in Extra: %v", err)
	}
	noErr(t, js.DeleteStream(ctx, "X"))
	_, err = js.CreateStream(ctx, natsio.StreamConfig{Name: "a.b"})
	wantErr(t, err, natsio.ErrInvalidArgument)
	_, err = js.CreateStream(ctx, natsio.StreamConfig{})
	if !errors.Is(err, natsio.ErrConfig) && !errors.Is(err, natsio.ErrInvalidArgument) {
		t.Fatalf("no name: %v", err)
	}
	_, err = js.CreateStream(ctx, natsio.StreamConfig{Name: "OVERLAP", Subjects: []string{"orders.new"}})
	wantErr(t, err, natsio.ErrJetStreamAPI)

	names := got(js.StreamNames(ctx, "")).must(t)
	if fmt.Sprint(names) != "[NEW ORDERS]" && fmt.Sprint(names) != "[ORDERS NEW]" {
		t.Fatalf("names %v", names)
	}
	if names := got(js.StreamNames(ctx, "orders.x")).must(t); fmt.Sprint(names) != "[ORDERS]" {
		t.Fatalf("names holding orders.x: %v", names)
	}
	if names := got(js.StreamNames(ctx, "nowhere")).must(t); names == nil || len(names) != 0 {
		t.Fatalf("names holding nowhere: %#v", names)
	}

	for i := range 5 {
		got(js.Publish(ctx, fmt.Sprintf("orders.%d", i%2), []byte("x"))).must(t)
	}
	if st := got(js.StreamInfo(ctx, "ORDERS")).must(t).State; st.Msgs != 5 || st.FirstSeq != 1 || st.LastSeq != 5 || st.Bytes == 0 {
		t.Fatalf("state %+v", st)
	}
	if n := got(js.PurgeStream(ctx, "ORDERS", natsio.PurgeSubject("orders.0"))).must(t); n != 3 {
		t.Fatalf("purged %d on orders.0", n)
	}
	if n := got(js.PurgeStream(ctx, "ORDERS", natsio.PurgeKeep(1))).must(t); n != 1 {
		t.Fatalf("purged %d keeping 1", n)
	}
	_, err = js.PurgeStream(ctx, "ORDERS", natsio.PurgeKeep(1), natsio.PurgeSequence(2))
	wantErr(t, err, natsio.ErrConfig)
	if n := got(js.PurgeStream(ctx, "ORDERS")).must(t); n != 1 {
		t.Fatalf("purged %d", n)
	}
	if st := got(js.StreamInfo(ctx, "ORDERS")).must(t).State; st.Msgs != 0 {
		t.Fatalf("state after purge %+v", st)
	}

	noErr(t, js.DeleteStream(ctx, "ORDERS"))
	_, err = js.StreamInfo(ctx, "ORDERS")
	wantErr(t, err, natsio.ErrStreamNotFound)
	wantErr(t, js.DeleteStream(ctx, "ORDERS"), natsio.ErrStreamNotFound)
	acc := got(js.AccountInfo(ctx)).must(t)
	if acc.Streams != 1 || len(acc.Raw) == 0 {
		t.Fatalf("account info %+v", acc)
	}
}

func TestPublishAcksDedupesAndExpectations(t *testing.T) {
	_, js := jetStream(t)
	ctx := ctxTimeout(t, 10*time.Second)
	got(js.CreateStream(ctx, natsio.StreamConfig{Name: "S", Subjects: []string{"s.>"}, AllowMsgTTL: true})).must(t)

	ack := got(js.Publish(ctx, "s.a", []byte("one"))).must(t)
	if *ack != (natsio.PubAck{Stream: "S", Sequence: 1}) {
		t.Fatalf("ack %+v", ack)
	}
	a2 := got(js.Publish(ctx, "s.a", []byte("two"), natsio.MsgID("id-1"))).must(t)
	a3 := got(js.Publish(ctx, "s.a", []byte("two again"), natsio.MsgID("id-1"))).must(t)
	if a2.Sequence != 2 || a2.Duplicate || a3.Sequence != 2 || !a3.Duplicate {
		t.Fatalf("dedupe acks %+v %+v", a2, a3)
	}

	_, err := js.Publish(ctx, "s.a", []byte("x"), natsio.ExpectLastSequence(1))
	wantErr(t, err, natsio.ErrWrongLastSequence)
	if a := got(js.Publish(ctx, "s.a", []byte("x"), natsio.ExpectLastSequence(2))).must(t); a.Sequence != 3 {
		t.Fatalf("ack %+v", a)
	}
	if a := got(js.Publish(ctx, "s.b", []byte("first on s.b"), natsio.ExpectLastSequencePerSubject(0))).must(t); a.Sequence != 4 {
		t.Fatalf("ack %+v", a)
	}
	_, err = js.Publish(ctx, "s.b", []byte("x"), natsio.ExpectLastSequencePerSubject(0))
	wantErr(t, err, natsio.ErrWrongLastSequence)
	_, err = js.Publish(ctx, "s.c", []byte("x"), natsio.ExpectLastSequenceForSubject(0, "s.b"))
	wantErr(t, err, natsio.ErrWrongLastSequence)
	got(js.Publish(ctx, "s.c", []byte("x"), natsio.ExpectLastSequenceForSubject(4, "s.b"))).must(t)
	_, err = js.Publish(ctx, "s.a", []byte("x"), natsio.ExpectStream("OTHER"))
	wantErr(t, err, natsio.ErrJetStreamAPI)
	got(js.Publish(ctx, "s.a", []byte("x"), natsio.ExpectStream("S"), natsio.MsgID("id-2"))).must(t)
	_, err = js.Publish(ctx, "s.a", []byte("x"), natsio.ExpectLastMsgID("id-1"))
	if err == nil {
		t.Fatal("ExpectLastMsgID with a stale id succeeded")
	}
	got(js.Publish(ctx, "s.a", []byte("x"), natsio.ExpectLastMsgID("id-2"))).must(t)

	// Headers and TTL travel with the message; the stored copy reads back.
	seq := got(js.Publish(ctx, "s.h", []byte("with\x00headers"),
		natsio.PubHeader(natsio.Header{"X-Trace": {"t1"}}), natsio.MsgTTL(time.Minute))).must(t).Sequence
	m := got(js.GetMsg(ctx, "S", seq)).must(t)
	if m.Subject != "s.h" || m.Sequence != seq || string(m.Data) != "with\x00headers" ||
		m.Header.Get("X-Trace") != "t1" || m.Header.Get("Nats-TTL") != "60s" {
		t.Fatalf("stored %+v", m)
	}
	if d := time.Since(m.Time); d < 0 || d > time.Minute {
		t.Fatalf("stored at %v", m.Time)
	}
	never := got(js.Publish(ctx, "s.h", nil, natsio.MsgTTLNever())).must(t).Sequence
	if h := got(js.GetMsg(ctx, "S", never)).must(t).Header.Get("Nats-TTL"); h != "never" {
		t.Fatalf("Nats-TTL %q", h)
	}
	_, err = js.Publish(ctx, "s.h", nil, natsio.MsgTTL(1500*time.Millisecond))
	wantErr(t, err, natsio.ErrInvalidArgument, "MsgTTL")

	last := got(js.GetLastMsg(ctx, "S", "s.b")).must(t)
	if last.Sequence != 4 || string(last.Data) != "first on s.b" || last.Header.Get("X-Trace") != "" {
		t.Fatalf("last on s.b %+v", last)
	}
	noErr(t, js.DeleteMsg(ctx, "S", 4))
	_, err = js.GetMsg(ctx, "S", 4)
	wantErr(t, err, natsio.ErrMsgNotFound)
	_, err = js.GetLastMsg(ctx, "S", "s.b")
	wantErr(t, err, natsio.ErrMsgNotFound)
	// The server answers a delete of a missing message with err_code 10043.
	wantErr(t, js.DeleteMsg(ctx, "S", 4), natsio.ErrMsgNotFound)
	noErr(t, js.SecureDeleteMsg(ctx, "S", 1))
	_, err = js.GetMsg(ctx, "NOPE", 1)
	wantErr(t, err, natsio.ErrStreamNotFound)

	// No stream holds the subject.
	_, err = js.Publish(ctx, "nostream", []byte("x"))
	wantErr(t, err, natsio.ErrNoStreamResponse)
}

// A publish writes a short subject into a buffer on its stack and a long
// one into an allocated copy: every length around the boundary arrives
// exact, sync and async, and a NUL byte is refused before anything is sent.
func TestPublishSubjectsOfEveryLength(t *testing.T) {
	_, js := jetStream(t)
	ctx := ctxTimeout(t, 10*time.Second)
	got(js.CreateStream(ctx, natsio.StreamConfig{Name: "LEN", Subjects: []string{"len.>"}, Storage: natsio.MemoryStorage})).must(t)
	for _, n := range []int{5, 94, 95, 96, 97, 300} {
		subject := "len." + strings.Repeat("s", n-len("len."))
		for _, async := range []bool{false, true} {
			data := fmt.Sprintf("%d %v", n, async)
			if async {
				f := got(js.PublishAsync(subject, []byte(data))).must(t)
				got(f.Wait(ctx)).must(t)
			} else {
				got(js.Publish(ctx, subject, []byte(data))).must(t)
			}
			m := got(js.GetLastMsg(ctx, "LEN", subject)).must(t)
			if m.Subject != subject || string(m.Data) != data {
				t.Fatalf("%d-byte subject (async %v): stored %q on %q", n, async, m.Data, m.Subject)
			}
		}
	}
	_, err := js.PublishAsync("len.a\x00b", []byte("x"))
	wantErr(t, err, natsio.ErrInvalidArgument, "NUL")
	if info := got(js.StreamInfo(ctx, "LEN")).must(t); info.State.Msgs != 12 {
		t.Fatalf("the stream holds %d messages, want 12", info.State.Msgs)
	}
}

func TestPublishArgumentErrors(t *testing.T) {
	_, js := jetStream(t)
	ctx := ctxTimeout(t, 10*time.Second)
	_, err := js.Publish(ctx, "", []byte("x"))
	wantErr(t, err, natsio.ErrBadSubject)
	_, err = js.Publish(ctx, "a b", []byte("x"))
	wantErr(t, err, natsio.ErrBadSubject)
	_, err = js.Publish(ctx, "a\x00b", []byte("x"))
	wantErr(t, err, natsio.ErrInvalidArgument, "NUL")
	_, err = js.PublishAsync("", nil)
	wantErr(t, err, natsio.ErrBadSubject)
	_, err = js.Publish(ctx, "s", nil, natsio.PubHeader(natsio.Header{"Bad Name": {"v"}}))
	wantErr(t, err, natsio.ErrBadHeaders)
	_, err = js.StreamInfo(ctx, "")
	wantErr(t, err, natsio.ErrInvalidArgument)
	_, err = js.GetLastMsg(ctx, "S", "")
	if !errors.Is(err, natsio.ErrBadSubject) && !errors.Is(err, natsio.ErrStreamNotFound) {
		t.Fatalf("empty last-by subject: %v", err)
	}
	_, err = js.KeyValue(ctx, "")
	wantErr(t, err, natsio.ErrInvalidBucketName)

	var nilJS *natsio.JetStream
	_, err = nilJS.Publish(ctx, "s", nil)
	wantErr(t, err, natsio.ErrNullArgument)
	var nilKV *natsio.KeyValue
	_, err = nilKV.Get(ctx, "k")
	wantErr(t, err, natsio.ErrNullArgument)

	// Options the library refuses.
	nc := connect(t)
	_, err = nc.JetStream(natsio.JSTimeout(-time.Second))
	wantErr(t, err, natsio.ErrInvalidArgument)
	_, err = nc.JetStream(natsio.JSDomain("bad domain"))
	wantErr(t, err, natsio.ErrConfig)
}

func TestPublishHonoursContext(t *testing.T) {
	nc, js := jetStream(t)
	// A plain subscriber that never acks stands in for a stuck stream.
	silentResponder(t, nc, "stuck")

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := js.Publish(ctx, "stuck", []byte("x"))
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled ctx: %v", err)
	}

	start := time.Now()
	_, err = js.Publish(ctxTimeout(t, 150*time.Millisecond), "stuck", []byte("x"))
	if !errors.Is(err, natsio.ErrTimeout) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("deadline: %v", err)
	}
	if d := time.Since(start); d < 100*time.Millisecond || d > 2*time.Second {
		t.Fatalf("returned after %v", d)
	}

	// Cancelled while waiting for the ack: returns at once.
	ctx, cancel = context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	start = time.Now()
	_, err = js.Publish(ctx, "stuck", []byte("x"))
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled while waiting: %v", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("returned after %v", d)
	}
}

func TestPublishAsyncAcksEveryMessage(t *testing.T) {
	_, js := jetStream(t)
	ctx := ctxTimeout(t, 20*time.Second)
	got(js.CreateStream(ctx, natsio.StreamConfig{Name: "A", Subjects: []string{"a.>"}, Storage: natsio.MemoryStorage})).must(t)

	baseline := natsio.LiveHandlesForTest()
	const n = 3000
	futures := make([]*natsio.PubAckFuture, 0, n)
	payload := []byte("payload")
	for i := range n {
		f, err := js.PublishAsync(fmt.Sprintf("a.%d", i%7), payload)
		if err != nil {
			t.Fatalf("publish %d: %v", i, err)
		}
		payload[0] = byte(i) // the library copied it
		futures = append(futures, f)
	}
	if err := js.PublishAsyncComplete(ctx); err != nil {
		t.Fatal(err)
	}
	if p := js.PublishAsyncPending(); p != 0 {
		t.Fatalf("%d pending after complete", p)
	}
	seen := make(map[uint64]bool, n)
	// Half read through Done (completion callbacks), half through Wait.
	for i, f := range futures {
		if i%2 == 0 {
			select {
			case <-f.Done():
			case <-ctx.Done():
				t.Fatal("Done not closed after PublishAsyncComplete")
			}
		}
		ack, err := f.Wait(ctx)
		if err != nil {
			t.Fatalf("future %d: %v", i, err)
		}
		if ack.Stream != "A" || ack.Sequence < 1 || ack.Sequence > n || seen[ack.Sequence] {
			t.Fatalf("future %d: ack %+v (duplicate: %v)", i, ack, seen[ack.Sequence])
		}
		seen[ack.Sequence] = true
		if again, _ := f.Wait(context.Background()); again != ack {
			t.Fatal("a second Wait gives another ack")
		}
		select {
		case <-f.Done(): // read already: closed at once
		default:
			t.Fatalf("future %d: Done not closed after its Wait", i)
		}
	}
	// The completion callbacks registered by Done have all been released.
	waitHandlesReleased(t, baseline)
	if st := got(js.StreamInfo(ctx, "A")).must(t).State; st.Msgs != n {
		t.Fatalf("stream holds %d", st.Msgs)
	}

	// Concurrent publishers and waiters.
	var wg sync.WaitGroup
	errs := make(chan error, 4*100)
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 100 {
				f, err := js.PublishAsync("a.g", []byte{byte(g), byte(i)})
				if err == nil {
					_, err = f.Wait(ctx)
				}
				if err != nil {
					errs <- err
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}

	// A failed publish: its future carries the error.
	f := got(js.PublishAsync("nostream", []byte("x"))).must(t)
	_, err := f.Wait(ctx)
	wantErr(t, err, natsio.ErrNoStreamResponse)
}

// Futures dropped without a Wait free their tokens: a block of them goes
// with its finalizer once none of its futures is reachable, read or not.
func TestDroppedPubAckFuturesAreFreed(t *testing.T) {
	_, js := jetStream(t)
	ctx := ctxTimeout(t, 20*time.Second)
	got(js.CreateStream(ctx, natsio.StreamConfig{Name: "D", Subjects: []string{"d.>"}, Storage: natsio.MemoryStorage})).must(t)
	before := natsio.FutureBlocksFreedForTest()
	const blocks = 5
	for i := range blocks * natsio.FutureBlockForTest {
		f := got(js.PublishAsync("d.x", []byte("x"))).must(t)
		if i%3 == 0 { // some read, the rest never
			got(f.Wait(ctx)).must(t)
		}
	}
	if err := js.PublishAsyncComplete(ctx); err != nil {
		t.Fatal(err)
	}
	// Every block but the one new futures still take slots of.
	eventually(t, "blocks of dropped futures freed", func() bool {
		runtime.GC()
		return natsio.FutureBlocksFreedForTest()-before >= blocks-1
	})
	if st := got(js.StreamInfo(ctx, "D")).must(t).State; st.Msgs != blocks*natsio.FutureBlockForTest {
		t.Fatalf("stream holds %d", st.Msgs)
	}
}

// connectPastFirstPing connects to url and waits until nats-server's first
// PING (2 to 2.4 s after the connect) has come (Stats().ServerPings) and
// been answered (a flush after it): the PONG sends whatever the client
// queued, so tests of what the library queues without waking its writer
// wait it out (the next comes 2 min later).
func connectPastFirstPing(t *testing.T, url string) *natsio.Conn {
	nc := connectTo(t, url)
	deadline := time.Now().Add(10 * time.Second)
	for nc.Stats().ServerPings == 0 {
		if time.Now().After(deadline) {
			t.Fatal("nats-server sent no PING within 10 s")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := nc.Flush(context.Background()); err != nil {
		t.Fatalf("flush after the first PING: %v", err)
	}
	return nc
}

// While other publishes await acks, PublishAsync queues without waking the
// library's writer, and the connection's sender goroutine sends the queue
// once the publishing goroutine lets it run: nothing here waits in the
// library. Close sends what is still queued.
func TestPublishAsyncIsSentWithoutALibraryWait(t *testing.T) {
	s := startTestServer(t, "-js", "-sd", t.TempDir())
	nc := connectPastFirstPing(t, s.url)
	js := got(nc.JetStream()).must(t)
	ctx := ctxTimeout(t, 20*time.Second)
	got(js.CreateStream(ctx, natsio.StreamConfig{Name: "DEF", Subjects: []string{"def.>"}, Storage: natsio.MemoryStorage})).must(t)
	// An unanswered request: no publish is the only one awaiting a reply
	// (that one is written at once).
	silent := got(nc.SubscribeSync("silent")).must(t)
	flush(t, nc)
	reqCtx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go nc.Request(reqCtx, "silent", nil)
	mustNext(t, silent)

	const n = 100
	for range n {
		got(js.PublishAsync("def.a", []byte("x"))).must(t)
	}
	eventually(t, "every publish acked", func() bool { return js.PublishAsyncPending() == 0 })

	for range n {
		got(js.PublishAsync("def.b", []byte("y"))).must(t)
	}
	if err := nc.Close(); err != nil {
		t.Fatal(err)
	}
	other := got(connectTo(t, s.url).JetStream()).must(t)
	if info := got(other.StreamInfo(ctx, "DEF")).must(t); info.State.Msgs != 2*n {
		t.Fatalf("the stream holds %d messages, want %d", info.State.Msgs, 2*n)
	}
}

func TestPublishAsyncStallsThenTimesOut(t *testing.T) {
	nc, js := jetStream(t, natsio.PublishAsyncMaxPending(2), natsio.PublishAsyncStallWait(50*time.Millisecond),
		natsio.PublishAsyncTimeout(300*time.Millisecond))
	silentResponder(t, nc, "stuck")

	f1 := got(js.PublishAsync("stuck", []byte("1"))).must(t)
	f2 := got(js.PublishAsync("stuck", []byte("2"))).must(t)
	start := time.Now()
	_, err := js.PublishAsync("stuck", []byte("3"))
	wantErr(t, err, natsio.ErrTooManyStalledMsgs)
	if d := time.Since(start); d < 40*time.Millisecond {
		t.Fatalf("stalled only %v", d)
	}
	if p := js.PublishAsyncPending(); p != 2 {
		t.Fatalf("%d pending", p)
	}
	err = js.PublishAsyncComplete(ctxTimeout(t, 20*time.Millisecond))
	if !errors.Is(err, natsio.ErrTimeout) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("complete with a short deadline: %v", err)
	}
	// Waiting with a context that ends leaves the publish going.
	_, err = f1.Wait(ctxTimeout(t, 10*time.Millisecond))
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Wait with a short deadline: %v", err)
	}
	for _, f := range []*natsio.PubAckFuture{f1, f2} {
		_, err := f.Wait(ctxTimeout(t, 5*time.Second))
		wantErr(t, err, natsio.ErrAsyncPublishTimeout)
	}
	if err := js.PublishAsyncComplete(context.Background()); err != nil {
		t.Fatal(err)
	}
	got(js.PublishAsync("stuck", []byte("room again"))).must(t)
}

func TestKeyValue(t *testing.T) {
	_, js := jetStream(t)
	ctx := ctxTimeout(t, 10*time.Second)

	kv := got(js.CreateKeyValue(ctx, natsio.KeyValueConfig{Bucket: "CFG", History: 5, TTL: time.Hour})).must(t)
	if kv.Bucket() != "CFG" {
		t.Fatalf("bucket %q", kv.Bucket())
	}
	r1 := got(kv.Put(ctx, "app.color", []byte("red"))).must(t)
	r2 := got(kv.Put(ctx, "app.color", []byte("blue"))).must(t)
	if r2 <= r1 {
		t.Fatalf("revisions %d then %d", r1, r2)
	}
	e := got(kv.Get(ctx, "app.color")).must(t)
	if e.Bucket != "CFG" || e.Key != "app.color" || string(e.Value) != "blue" || e.Revision != r2 ||
		e.Operation != natsio.KeyValuePut || e.Delta != 0 {
		t.Fatalf("entry %+v", e)
	}
	if d := time.Since(e.Created); d < -time.Minute || d > time.Minute {
		t.Fatalf("created %v", e.Created)
	}
	if old := got(kv.GetRevision(ctx, "app.color", r1)).must(t); string(old.Value) != "red" || old.Revision != r1 {
		t.Fatalf("revision %d: %+v", r1, old)
	}
	_, err := kv.GetRevision(ctx, "app.size", r1)
	wantErr(t, err, natsio.ErrKeyNotFound)
	_, err = kv.Get(ctx, "missing")
	wantErr(t, err, natsio.ErrKeyNotFound)

	// Compare and set, create.
	_, err = kv.Update(ctx, "app.color", []byte("green"), r1)
	wantErr(t, err, natsio.ErrWrongLastSequence)
	r3 := got(kv.Update(ctx, "app.color", []byte("green"), r2)).must(t)
	_, err = kv.Create(ctx, "app.color", []byte("x"))
	wantErr(t, err, natsio.ErrKeyExists)
	if rc := got(kv.Create(ctx, "app.new", []byte("fresh"))).must(t); rc <= r3 {
		t.Fatalf("create revision %d", rc)
	}

	// Delete and purge.
	noErr(t, kv.Delete(ctx, "app.color"))
	_, err = kv.Get(ctx, "app.color")
	wantErr(t, err, natsio.ErrKeyDeleted)
	r4 := got(kv.Create(ctx, "app.color", []byte("again"))).must(t)
	if v := got(kv.Get(ctx, "app.color")).must(t); string(v.Value) != "again" {
		t.Fatalf("after re-create %+v", v)
	}
	wantErr(t, kv.Delete(ctx, "app.color", natsio.LastRevision(r4-1)), natsio.ErrWrongLastSequence)
	// The revision before is the delete marker.
	_, err = kv.GetRevision(ctx, "app.color", r4-1)
	wantErr(t, err, natsio.ErrKeyDeleted)
	wantErr(t, kv.Purge(ctx, "app.color", natsio.LastRevision(r4-1)), natsio.ErrWrongLastSequence)
	noErr(t, kv.Purge(ctx, "app.color", natsio.LastRevision(r4)))
	_, err = kv.Get(ctx, "app.color")
	wantErr(t, err, natsio.ErrKeyDeleted)
	_, err = kv.GetRevision(ctx, "app.color", r1)
	wantErr(t, err, natsio.ErrKeyNotFound)

	for _, bad := range []string{"", ".a", "a.", "a..b", "a b", "a*", "a>", "ü"} {
		_, err := kv.Put(ctx, bad, []byte("x"))
		wantErr(t, err, natsio.ErrInvalidKey)
	}
	got(kv.Put(ctx, "a/b_c-d=e.F9", nil)).must(t)
	if v := got(kv.Get(ctx, "a/b_c-d=e.F9")).must(t); v.Value == nil || len(v.Value) != 0 {
		t.Fatalf("empty value %#v", v.Value)
	}
	// Values are copies: changing one changes nothing stored.
	v := got(kv.Get(ctx, "app.new")).must(t)
	v.Value[0] = 'X'
	if again := got(kv.Get(ctx, "app.new")).must(t); string(again.Value) != "fresh" {
		t.Fatalf("stored value changed: %q", again.Value)
	}

	st := got(kv.Status(ctx)).must(t)
	if st.Bucket != "CFG" || st.History != 5 || st.TTL != time.Hour || st.Values == 0 || st.Info.Config.Name != "KV_CFG" ||
		st.Storage != natsio.FileStorage || st.Replicas != 1 || st.IsCompressed || st.LimitMarkerTTL != 0 || len(st.Info.Raw) == 0 {
		t.Fatalf("status %+v", st)
	}
}

func TestKeyValueBuckets(t *testing.T) {
	_, js := jetStream(t)
	ctx := ctxTimeout(t, 10*time.Second)

	_, err := js.KeyValue(ctx, "NONE")
	wantErr(t, err, natsio.ErrBucketNotFound)
	_, err = js.KeyValue(ctx, "bad.name")
	wantErr(t, err, natsio.ErrInvalidBucketName)
	_, err = js.CreateKeyValue(ctx, natsio.KeyValueConfig{Bucket: "b c"})
	wantErr(t, err, natsio.ErrInvalidBucketName)
	_, err = js.CreateKeyValue(ctx, natsio.KeyValueConfig{Bucket: "B", History: 65})
	wantErr(t, err, natsio.ErrConfig, "history")
	_, err = js.CreateKeyValue(ctx, natsio.KeyValueConfig{Bucket: "B", TTL: 10 * time.Millisecond})
	wantErr(t, err, natsio.ErrConfig, "ttl")
	_, err = js.UpdateKeyValue(ctx, natsio.KeyValueConfig{Bucket: "B"})
	wantErr(t, err, natsio.ErrBucketNotFound)

	cfg := natsio.KeyValueConfig{Bucket: "B", Storage: natsio.MemoryStorage}
	kv := got(js.CreateKeyValue(ctx, cfg)).must(t)
	got(js.CreateKeyValue(ctx, cfg)).must(t)
	cfg.History = 3
	_, err = js.CreateKeyValue(ctx, cfg)
	wantErr(t, err, natsio.ErrBucketExists)
	got(js.UpdateKeyValue(ctx, cfg)).must(t)
	if st := got(kv.Status(ctx)).must(t); st.History != 3 {
		t.Fatalf("history after update %d", st.History)
	}
	got(js.CreateOrUpdateKeyValue(ctx, natsio.KeyValueConfig{Bucket: "C"})).must(t)
	got(kv.Put(ctx, "k", []byte("v1"))).must(t)

	bound := got(js.KeyValue(ctx, "B")).must(t)
	if e := got(bound.Get(ctx, "k")).must(t); string(e.Value) != "v1" {
		t.Fatalf("bound get %+v", e)
	}
	// A bucket outlives the JetStream that bound it.
	js2 := got(js.Conn().JetStream()).must(t)
	kv2 := got(js2.KeyValue(ctx, "B")).must(t)
	js2.Close()
	if e := got(kv2.Get(ctx, "k")).must(t); string(e.Value) != "v1" {
		t.Fatalf("get after its JetStream closed %+v", e)
	}

	noErr(t, js.DeleteKeyValue(ctx, "B"))
	_, err = js.KeyValue(ctx, "B")
	wantErr(t, err, natsio.ErrBucketNotFound)
	wantErr(t, js.DeleteKeyValue(ctx, "B"), natsio.ErrBucketNotFound)
}

func TestUseAfterClose(t *testing.T) {
	nc, js := jetStream(t)
	ctx := ctxTimeout(t, 10*time.Second)
	got(js.CreateStream(ctx, natsio.StreamConfig{Name: "S", Subjects: []string{"s"}})).must(t)
	kv := got(js.CreateKeyValue(ctx, natsio.KeyValueConfig{Bucket: "B"})).must(t)
	got(kv.Put(ctx, "k", []byte("v"))).must(t)

	if err := nc.Close(); err != nil {
		t.Fatal(err)
	}
	_, err := js.StreamInfo(ctx, "S")
	wantErr(t, err, natsio.ErrConnectionClosed)
	_, err = js.Publish(ctx, "s", []byte("x"))
	wantErr(t, err, natsio.ErrConnectionClosed)
	_, err = js.PublishAsync("s", []byte("x"))
	wantErr(t, err, natsio.ErrConnectionClosed)
	_, err = js.AccountInfo(ctx)
	wantErr(t, err, natsio.ErrConnectionClosed)
	_, err = kv.Get(ctx, "k")
	wantErr(t, err, natsio.ErrConnectionClosed)
	_, err = kv.Put(ctx, "k", []byte("v"))
	wantErr(t, err, natsio.ErrConnectionClosed)
	if p := js.PublishAsyncPending(); p != 0 {
		t.Fatalf("%d pending", p)
	}
	// A context made on a closed connection fails likewise.
	js2 := got(nc.JetStream()).must(t)
	_, err = js2.StreamNames(ctx, "")
	wantErr(t, err, natsio.ErrConnectionClosed)

	// A closed JetStream refuses calls; closing twice is harmless.
	js.Close()
	js.Close()
	_, err = js.StreamInfo(ctx, "S")
	wantErr(t, err, natsio.ErrIllegalState)
	_, err = js.PublishAsync("s", nil)
	wantErr(t, err, natsio.ErrIllegalState)
	if err := js.PublishAsyncComplete(ctx); !errors.Is(err, natsio.ErrIllegalState) {
		t.Fatalf("complete after Close: %v", err)
	}
}

func TestCloseWhileCallsRun(t *testing.T) {
	// Long enough for the publishes still to wait for their acks when Close
	// comes, however slowly the goroutines start.
	nc, js := jetStream(t, natsio.JSTimeout(time.Second))
	stuck := got(nc.SubscribeSync("stuck")).must(t)
	flush(t, nc)
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := js.Publish(context.Background(), "stuck", nil)
			if !errors.Is(err, natsio.ErrTimeout) {
				t.Errorf("publish: %v", err)
			}
		}()
	}
	// Every publish has been sent (and waits for its ack) once the
	// subscription has its message.
	eventually(t, "the four publishes", func() bool {
		st, err := stuck.Stats()
		return err == nil && st.PendingMsgs == 4
	})
	js.Close() // the running publishes keep the handle until they end
	wg.Wait()
	_, err := js.Publish(context.Background(), "stuck", nil)
	wantErr(t, err, natsio.ErrIllegalState)
}

func TestJetStreamNotEnabled(t *testing.T) {
	nc := connect(t) // the shared server runs without JetStream
	js := got(nc.JetStream(natsio.JSTimeout(2 * time.Second))).must(t)
	defer js.Close()
	ctx := ctxTimeout(t, 5*time.Second)
	_, err := js.AccountInfo(ctx)
	wantErr(t, err, natsio.ErrJetStreamNotEnabled, "no responders")
}

// The header name constants are natsio.h's, and the server acts on them.
func TestJSHeaderConstants(t *testing.T) {
	for name, want := range map[string]string{
		natsio.JSHeaderMsgID:                       "Nats-Msg-Id",
		natsio.JSHeaderExpectedStream:              "Nats-Expected-Stream",
		natsio.JSHeaderExpectedLastSubjectSequence: "Nats-Expected-Last-Subject-Sequence",
		natsio.JSHeaderRollup:                      "Nats-Rollup",
		natsio.JSHeaderRollupSubject:               "sub",
		natsio.JSHeaderRollupAll:                   "all",
		natsio.JSHeaderPinID:                       "Nats-Pin-Id",
		natsio.JSHeaderRequiredAPILevel:            "Nats-Required-Api-Level",
	} {
		if name != want {
			t.Errorf("%q, want %q", name, want)
		}
	}
	_, js := jetStream(t)
	ctx := ctxTimeout(t, 10*time.Second)
	got(js.CreateStream(ctx, natsio.StreamConfig{Name: "HDRS", Subjects: []string{"hdrs.>"}, Storage: natsio.MemoryStorage, AllowRollup: true})).must(t)
	once := natsio.PubHeader(natsio.Header{natsio.JSHeaderMsgID: {"once"}})
	if ack := got(js.Publish(ctx, "hdrs.a", []byte("1"), once)).must(t); ack.Duplicate {
		t.Fatal("first publish is a duplicate")
	}
	if ack := got(js.Publish(ctx, "hdrs.a", []byte("1"), once)).must(t); !ack.Duplicate {
		t.Fatal("second publish with the same Nats-Msg-Id is not a duplicate")
	}
	got(js.Publish(ctx, "hdrs.b", []byte("b1"))).must(t)
	rollup := natsio.PubHeader(natsio.Header{natsio.JSHeaderRollup: {natsio.JSHeaderRollupSubject}})
	got(js.Publish(ctx, "hdrs.b", []byte("b2"), rollup)).must(t)
	if info := got(js.StreamInfo(ctx, "HDRS")).must(t); info.State.Msgs != 2 {
		t.Fatalf("%d messages after the rollup, want 2", info.State.Msgs)
	}
}
