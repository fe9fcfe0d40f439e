package natsio_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	natsio "github.com/libnatsio/natsio/bindings/go"
)

// workQueue creates stream Q on q.> holding m0..m<n-1> (m<i> on q.<i%2>)
// and the durable pull consumer "work" on q.0.
func workQueue(t *testing.T, js *natsio.JetStream, n int, cfg natsio.ConsumerConfig) *natsio.ConsumerInfo {
	t.Helper()
	ctx := ctxTimeout(t, 10*time.Second)
	got(js.CreateStream(ctx, natsio.StreamConfig{Name: "Q", Subjects: []string{"q.>"}, Storage: natsio.MemoryStorage})).must(t)
	for i := range n {
		got(js.Publish(ctx, fmt.Sprintf("q.%d", i%2), []byte(fmt.Sprintf("m%d", i)))).must(t)
	}
	if cfg.Durable == "" {
		cfg.Durable = "work"
	}
	if cfg.FilterSubject == "" {
		cfg.FilterSubject = "q.0"
	}
	return got(js.CreateConsumer(ctx, "Q", cfg)).must(t)
}

func bodies(msgs []*natsio.Msg) []string {
	out := make([]string, len(msgs))
	for i, m := range msgs {
		out[i] = string(m.Data)
	}
	return out
}

func meta(t *testing.T, m *natsio.Msg) *natsio.MsgMetadata {
	t.Helper()
	md, err := m.Metadata()
	if err != nil {
		t.Fatalf("Metadata of %q: %v", m.Data, err)
	}
	return md
}

func TestConsumerLifecycle(t *testing.T) {
	_, js := jetStream(t)
	ctx := ctxTimeout(t, 10*time.Second)

	cfg := natsio.ConsumerConfig{
		Durable: "work", Description: "the work", AckPolicy: natsio.AckExplicitPolicy, AckWait: 2 * time.Second,
		MaxDeliver: 5, MaxAckPending: 50,
		Metadata: map[string]string{"owner": "ops"},
	}
	info := workQueue(t, js, 10, cfg)
	c := info.Config
	if info.Stream != "Q" || info.Name != "work" || info.NumPending != 5 || info.Created.IsZero() ||
		c.Durable != "work" || c.AckWait != 2*time.Second || c.AckPolicy != natsio.AckExplicitPolicy ||
		c.FilterSubject != "q.0" || c.MaxDeliver != 5 ||
		c.DeliverPolicy != natsio.DeliverAllPolicy || c.ReplayPolicy != natsio.ReplayInstantPolicy ||
		c.MaxAckPending != 50 || c.Metadata["owner"] != "ops" || c.Description != "the work" {
		t.Fatalf("created %+v", info)
	}
	if !strings.Contains(string(info.Raw), `"ack_wait":2000000000`) {
		t.Fatalf("raw info %s", info.Raw)
	}

	// The same config again is fine; another one is refused.
	cfg.FilterSubject = "q.0"
	got(js.CreateConsumer(ctx, "Q", cfg)).must(t)
	other := cfg
	other.AckWait = 3 * time.Second
	_, err := js.CreateConsumer(ctx, "Q", other)
	wantErr(t, err, natsio.ErrJetStreamAPI)

	// The config read back round-trips through UpdateConsumer.
	cur := got(js.ConsumerInfo(ctx, "Q", "work")).must(t).Config
	cur.Description = "updated"
	cur.MaxAckPending = 20
	upd := got(js.UpdateConsumer(ctx, "Q", cur)).must(t)
	if upd.Config.Description != "updated" || upd.Config.MaxAckPending != 20 || upd.Config.AckWait != 2*time.Second {
		t.Fatalf("updated %+v", upd.Config)
	}
	_, err = js.UpdateConsumer(ctx, "Q", natsio.ConsumerConfig{Name: "nope", AckPolicy: natsio.AckExplicitPolicy})
	wantErr(t, err, natsio.ErrConsumerNotFound)

	// Without a name: an ephemeral consumer with a generated one.
	eph := got(js.CreateOrUpdateConsumer(ctx, "Q", natsio.ConsumerConfig{InactiveThreshold: 30 * time.Second})).must(t)
	if eph.Name == "" || eph.Name == "work" || eph.Config.InactiveThreshold != 30*time.Second ||
		eph.Config.AckPolicy != natsio.AckExplicitPolicy {
		t.Fatalf("ephemeral %+v", eph)
	}
	names := got(js.ConsumerNames(ctx, "Q")).must(t)
	slices.Sort(names)
	want := []string{"work", eph.Name}
	slices.Sort(want)
	if !slices.Equal(names, want) {
		t.Fatalf("names %v, want %v", names, want)
	}
	named := got(js.CreateOrUpdateConsumer(ctx, "Q", natsio.ConsumerConfig{Name: "named", MemoryStorage: true,
		MaxDeliver: 4, BackOff: []time.Duration{time.Second, 2 * time.Second}, Extra: map[string]any{"ack_policy": "none"}})).must(t)
	if named.Name != "named" || !named.Config.MemoryStorage || fmt.Sprint(named.Config.BackOff) != "[1s 2s]" ||
		named.Config.AckPolicy != natsio.AckNonePolicy {
		t.Fatalf("named %+v", named.Config)
	}

	// Errors: config (the detail names the field), names, missing things.
	_, err = js.CreateConsumer(ctx, "Q", natsio.ConsumerConfig{Durable: "x", AckPolicy: "sometimes"})
	wantErr(t, err, natsio.ErrConfig, "ack_policy")
	_, err = js.CreateConsumer(ctx, "Q", natsio.ConsumerConfig{Durable: "x", Extra: map[string]any{"ack_wait": "soon"}})
	wantErr(t, err, natsio.ErrConfig, "ack_wait")
	_, err = js.CreateConsumer(ctx, "Q", natsio.ConsumerConfig{Durable: "x", Extra: map[string]any{"ack_wait": "90s"}})
	if err != nil {
		t.Fatalf("a duration string in Extra: %v", err)
	}
	if c := got(js.ConsumerInfo(ctx, "Q", "x")).must(t).Config; c.AckWait != 90*time.Second {
		t.Fatalf("ack_wait from Extra: %v", c.AckWait)
	}
	_, err = js.CreateConsumer(ctx, "NOPE", natsio.ConsumerConfig{Durable: "x"})
	wantErr(t, err, natsio.ErrStreamNotFound)
	_, err = js.CreateConsumer(ctx, "Q", natsio.ConsumerConfig{Durable: "a.b"})
	wantErr(t, err, natsio.ErrInvalidArgument)
	_, err = js.ConsumerInfo(ctx, "Q", "a\x00b")
	wantErr(t, err, natsio.ErrInvalidArgument, "NUL")
	_, err = js.ConsumerInfo(ctx, "Q", "missing")
	wantErr(t, err, natsio.ErrConsumerNotFound)
	_, err = js.ConsumerInfo(ctx, "NOPE", "work")
	wantErr(t, err, natsio.ErrStreamNotFound)
	_, err = js.ConsumerNames(ctx, "NOPE")
	wantErr(t, err, natsio.ErrStreamNotFound)

	noErr(t, js.DeleteConsumer(ctx, "Q", "work"))
	_, err = js.ConsumerInfo(ctx, "Q", "work")
	wantErr(t, err, natsio.ErrConsumerNotFound)
	wantErr(t, js.DeleteConsumer(ctx, "Q", "work"), natsio.ErrConsumerNotFound)
	if names := got(js.ConsumerNames(ctx, "Q")).must(t); slices.Contains(names, "work") || len(names) != 3 {
		t.Fatalf("names after delete %v", names)
	}
}

func TestFetchBatchAndMetadata(t *testing.T) {
	nc, js := jetStream(t)
	ctx := ctxTimeout(t, 10*time.Second)
	workQueue(t, js, 10, natsio.ConsumerConfig{AckWait: 30 * time.Second})
	before := time.Now()
	got(js.Publish(ctx, "q.0", []byte("with header"), natsio.PubHeader(natsio.Header{"X-Id": {"7"}}))).must(t)

	batch := got(js.Fetch(ctx, "Q", "work", natsio.FetchMaxMessages(3), natsio.FetchExpires(2*time.Second))).must(t)
	if fmt.Sprint(bodies(batch)) != "[m0 m2 m4]" {
		t.Fatalf("batch %v", bodies(batch))
	}
	m := batch[0]
	if m.Subject != "q.0" || !strings.HasPrefix(m.Reply, "$JS.ACK.") || m.Header != nil {
		t.Fatalf("message %+v", m)
	}
	md := meta(t, m)
	if md.Stream != "Q" || md.Consumer != "work" || md.Domain != "" || md.Sequence != (natsio.SequencePair{Stream: 1, Consumer: 1}) ||
		md.NumDelivered != 1 || md.NumPending != 5 {
		t.Fatalf("metadata %+v", md)
	}
	if d := time.Since(md.Timestamp); d < 0 || d > time.Minute {
		t.Fatalf("timestamp %v", md.Timestamp)
	}
	if md3 := meta(t, batch[2]); md3.Sequence != (natsio.SequencePair{Stream: 5, Consumer: 3}) || md3.NumPending != 3 {
		t.Fatalf("third metadata %+v", md3)
	}
	// The metadata is a copy.
	md.Stream = "changed"
	if meta(t, m).Stream != "Q" {
		t.Fatal("Metadata shares its result")
	}
	// Messages are copies in Go memory.
	m.Data[0] = 'X'
	if string(batch[0].Data) != "X0" {
		t.Fatal("data not writable")
	}

	noErr(t, m.AckSync(ctx))
	ci := got(js.ConsumerInfo(ctx, "Q", "work")).must(t)
	if ci.AckFloor.Consumer != 1 || ci.Delivered.Stream != 5 || ci.Delivered.Consumer != 3 || ci.NumAckPending != 2 || ci.NumPending != 3 {
		t.Fatalf("consumer after one ack %+v", ci)
	}

	// FetchMaxBytes ends the batch once the payloads reach the limit.
	small := got(js.Fetch(ctx, "Q", "work", natsio.FetchMaxBytes(60), natsio.FetchExpires(time.Second))).must(t)
	if fmt.Sprint(bodies(small)) != "[m6]" {
		t.Fatalf("max bytes batch %v", bodies(small))
	}
	// The rest, fewer than asked: returned when the request expires, with
	// idle heartbeats on the way ignored.
	start := time.Now()
	rest := got(js.Fetch(ctx, "Q", "work", natsio.FetchMaxMessages(10), natsio.FetchExpires(600*time.Millisecond),
		natsio.FetchHeartbeat(100*time.Millisecond))).must(t)
	if fmt.Sprint(bodies(rest)) != "[m8 with header]" {
		t.Fatalf("rest %v", bodies(rest))
	}
	if d := time.Since(start); d < 400*time.Millisecond || d > 3*time.Second {
		t.Fatalf("partial batch returned after %v", d)
	}
	last := rest[1]
	if last.Header.Get("X-Id") != "7" || meta(t, last).Timestamp.Before(before.Add(-time.Second)) {
		t.Fatalf("last %+v %+v", last, meta(t, last))
	}
	for _, m := range append(append(batch[1:], small...), rest...) {
		noErr(t, m.Ack())
	}
	flush(t, nc)
	eventually(t, "every ack recorded", func() bool {
		ci, err := js.ConsumerInfo(ctx, "Q", "work")
		return err == nil && ci.NumAckPending == 0 && ci.AckFloor.Consumer == 6 && ci.AckFloor.Stream == 11
	})

	// Argument errors.
	_, err := js.Fetch(ctx, "Q", "work", natsio.FetchMaxMessages(-1))
	wantErr(t, err, natsio.ErrInvalidArgument)
	_, err = js.Fetch(ctx, "Q", "work", natsio.FetchExpires(-time.Second))
	wantErr(t, err, natsio.ErrInvalidArgument)
	_, err = js.Fetch(ctx, "Q", "a b")
	wantErr(t, err, natsio.ErrInvalidArgument)
	_, err = js.Fetch(ctx, "Q", "missing", natsio.FetchExpires(time.Second))
	wantErr(t, err, natsio.ErrConsumerNotFound, "missing")
	_, err = js.Next(ctx, "Q", "missing")
	wantErr(t, err, natsio.ErrConsumerNotFound, "missing")
}

// FetchMessages hands each message out as it arrives: one message on a
// consumer asked for ten within 2 s comes while the request is open (a
// short Next after it times out rather than ending), one published after
// comes through the same request, and the end (ErrDone) is the expiry; an
// error ends it after the messages before it.
func TestFetchMessagesHandsOutEachMessageAsItArrives(t *testing.T) {
	nc, js := jetStream(t)
	ctx := ctxTimeout(t, 10*time.Second)
	workQueue(t, js, 1, natsio.ConsumerConfig{AckWait: 30 * time.Second})

	it := got(js.FetchMessages(ctx, "Q", "work", natsio.FetchMaxMessages(10), natsio.FetchExpires(2*time.Second))).must(t)
	defer it.Stop()
	first := got(it.Next(ctx)).must(t)
	if string(first.Data) != "m0" || meta(t, first).Stream != "Q" {
		t.Fatalf("first %q", first.Data)
	}
	noErr(t, first.Ack())
	short, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	_, err := it.Next(short)
	cancel()
	if !errors.Is(err, natsio.ErrTimeout) || errors.Is(err, natsio.ErrDone) {
		t.Fatalf("a short Next right after the first message: %v, want a timeout (the fetch still open)", err)
	}
	got(js.Publish(ctx, "q.0", []byte("late"))).must(t)
	late := got(it.Next(ctx)).must(t)
	if string(late.Data) != "late" {
		t.Fatalf("second %q", late.Data)
	}
	noErr(t, late.Ack())
	if _, err = it.Next(ctx); !errors.Is(err, natsio.ErrDone) {
		t.Fatalf("after the expiry: %v, want ErrDone", err)
	}
	if st := got(it.Stats()).must(t); st.Delivered != 2 || st.PendingItems != 0 {
		t.Fatalf("stats %+v", st)
	}

	// An error after a message: the message, then the error.
	got(js.Publish(ctx, "q.0", []byte("last"))).must(t)
	doomed := got(js.FetchMessages(ctx, "Q", "work", natsio.FetchMaxMessages(5), natsio.FetchExpires(30*time.Second))).must(t)
	defer doomed.Stop()
	eventually(t, "the message delivered to the fetch", func() bool {
		ci, err := js.ConsumerInfo(ctx, "Q", "work")
		return err == nil && ci.NumAckPending == 1
	})
	noErr(t, js.DeleteConsumer(ctx, "Q", "work"))
	var seen []string
	for m, err := range doomed.Msgs(ctx) {
		if err != nil {
			wantErr(t, err, natsio.ErrConsumerDeleted)
			break
		}
		seen = append(seen, string(m.Data))
	}
	if fmt.Sprint(seen) != "[last]" {
		t.Fatalf("before the error: %v", seen)
	}
	flush(t, nc)

	_, err = js.FetchMessages(ctx, "Q", "a b")
	wantErr(t, err, natsio.ErrInvalidArgument)
	_, err = js.FetchMessages(ctx, "Q", "work", natsio.FetchMaxMessages(-1))
	wantErr(t, err, natsio.ErrInvalidArgument)
}

func TestFetchNoWaitNextAndDeadlines(t *testing.T) {
	_, js := jetStream(t)
	ctx := ctxTimeout(t, 10*time.Second)
	workQueue(t, js, 0, natsio.ConsumerConfig{})

	start := time.Now()
	none := got(js.Fetch(ctx, "Q", "work", natsio.FetchNoWait())).must(t)
	if none == nil || len(none) != 0 {
		t.Fatalf("no-wait fetch on an empty consumer: %#v", none)
	}
	// Not a wait for the request's expiry; 3 s leaves room for a loaded
	// machine, as the other bounds here.
	if d := time.Since(start); d > 3*time.Second {
		t.Fatalf("no-wait fetch took %v", d)
	}

	// A 2 s deadline, as the fetch below: the pull request expires a tenth
	// of it (200 ms) before the deadline, room for the server's answer to
	// come back on a loaded machine (with 300 ms it had 50 ms, and a run
	// under load got the deadline's timeout instead of ErrNoMessages).
	start = time.Now()
	_, err := js.Next(ctxTimeout(t, 2*time.Second), "Q", "work")
	wantErr(t, err, natsio.ErrNoMessages)
	// Not early (the deadline is the wait), and not never: the upper bound
	// leaves room for a loaded machine.
	if d := time.Since(start); d < 1500*time.Millisecond || d > 5*time.Second {
		t.Fatalf("Next returned after %v", d)
	}

	// A long expiry is cut short by the ctx deadline: no error, no messages.
	// (The pull request expires a tenth of the time left before the
	// deadline: 200 ms of the 2 s, room for the server's answer to come
	// back on a loaded machine; 400 ms left it 50 ms, which was not.)
	start = time.Now()
	empty := got(js.Fetch(ctxTimeout(t, 2*time.Second), "Q", "work", natsio.FetchExpires(time.Minute))).must(t)
	if len(empty) != 0 {
		t.Fatalf("fetched %v", bodies(empty))
	}
	if d := time.Since(start); d < 1500*time.Millisecond || d > 5*time.Second {
		t.Fatalf("fetch bounded by a 2 s deadline returned after %v", d)
	}

	// Next waits for a message published meanwhile.
	time.AfterFunc(100*time.Millisecond, func() { js.Publish(context.Background(), "q.0", []byte("late")) })
	m := got(js.Next(ctx, "Q", "work")).must(t)
	if string(m.Data) != "late" || meta(t, m).NumDelivered != 1 {
		t.Fatalf("next %+v", m)
	}
	noErr(t, m.Ack())

	// A cancelled ctx ends a waiting fetch at once.
	cctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	start = time.Now()
	_, err = js.Fetch(cctx, "Q", "work", natsio.FetchExpires(5*time.Second))
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled fetch: %v", err)
	}
	if d := time.Since(start); d > 3*time.Second { // not its 5 s expiry
		t.Fatalf("cancelled fetch returned after %v", d)
	}
	_, err = js.Next(cctx, "Q", "work")
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Next with a cancelled ctx: %v", err)
	}
}

// A consumption's acks are queued without waking the library's writer
// and sent in runs: with the next pull, when Next waits, or within a
// millisecond by themselves. Here nothing else is sent after the acks
// (the pull of the start covers every message and Next is not called
// again), so they must go out on their own.
func TestConsumeAcksGoOutOnTheirOwn(t *testing.T) {
	s := startTestServer(t, "-js", "-sd", t.TempDir())
	nc := connectPastFirstPing(t, s.url)
	js := got(nc.JetStream()).must(t)
	ctx := ctxTimeout(t, 20*time.Second)
	const n = 20
	workQueue(t, js, 2*n, natsio.ConsumerConfig{AckWait: time.Minute})
	c := got(js.Consume(ctx, "Q", "work")).must(t)
	defer c.Stop()
	for i := range n {
		m := got(c.Next(ctx)).must(t)
		if err := m.Ack(); err != nil {
			t.Fatalf("ack %d: %v", i, err)
		}
		if err := m.Ack(); !errors.Is(err, natsio.ErrMessageAlreadyAcked) {
			t.Fatalf("second ack of %d: %v", i, err)
		}
	}
	other := got(connectTo(t, s.url).JetStream()).must(t)
	var info *natsio.ConsumerInfo
	eventually(t, "every ack counted", func() bool {
		info = got(other.ConsumerInfo(ctx, "Q", "work")).must(t)
		return info.NumAckPending == 0
	})
	if info.AckFloor.Stream != 2*n-1 || info.NumRedelivered != 0 {
		t.Fatalf("ack floor %d, %d redelivered", info.AckFloor.Stream, info.NumRedelivered)
	}
}

func TestAckTwiceAndOnCopies(t *testing.T) {
	nc, js := jetStream(t)
	ctx := ctxTimeout(t, 10*time.Second)
	workQueue(t, js, 12, natsio.ConsumerConfig{})
	batch := got(js.Fetch(ctx, "Q", "work", natsio.FetchMaxMessages(6), natsio.FetchExpires(2*time.Second))).must(t)
	if len(batch) != 6 {
		t.Fatalf("fetched %v", bodies(batch))
	}

	// After any terminal ack every further ack is refused, on copies too.
	terminal := []func(*natsio.Msg) error{
		(*natsio.Msg).Ack, (*natsio.Msg).Nak, (*natsio.Msg).Term,
		func(m *natsio.Msg) error { return m.AckSync(ctx) },
	}
	for i, first := range terminal {
		m := batch[i]
		noErr(t, first(m))
		cp := *m
		for _, again := range append(terminal, (*natsio.Msg).InProgress,
			func(m *natsio.Msg) error { return m.NakWithDelay(time.Second) },
			func(m *natsio.Msg) error { return m.TermWithReason("r") }) {
			wantErr(t, again(m), natsio.ErrMessageAlreadyAcked)
			wantErr(t, again(&cp), natsio.ErrMessageAlreadyAcked)
		}
		// The metadata stays readable.
		if meta(t, m).Sequence.Consumer != uint64(i+1) {
			t.Fatalf("metadata after ack %+v", meta(t, m))
		}
	}

	// Concurrent acks of one message: exactly one wins.
	m := batch[4]
	var wins, refused atomic.Int32
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var err error
			if g%2 == 0 {
				err = m.Ack()
			} else {
				err = m.AckSync(ctx)
			}
			switch {
			case err == nil:
				wins.Add(1)
			case errors.Is(err, natsio.ErrMessageAlreadyAcked):
				refused.Add(1)
			default:
				t.Errorf("concurrent ack: %v", err)
			}
		}()
	}
	wg.Wait()
	if wins.Load() != 1 || refused.Load() != 7 {
		t.Fatalf("%d acks succeeded, %d refused", wins.Load(), refused.Load())
	}

	// InProgress is not terminal: it may be sent again, then the ack.
	wantErr(t, batch[5].TermWithReason("a\x00b"), natsio.ErrInvalidArgument, "NUL")
	noErr(t, batch[5].InProgress())
	noErr(t, batch[5].InProgress())
	noErr(t, batch[5].Ack())
	wantErr(t, batch[5].InProgress(), natsio.ErrMessageAlreadyAcked)

	// A message not pulled from a consumer cannot be acknowledged.
	sub := got(nc.SubscribeSync("core")).must(t)
	noErr(t, nc.PublishMsg(&natsio.Msg{Subject: "core", Reply: "_INBOX.x", Data: []byte("x")}))
	core := mustNext(t, sub)
	// (The server drops core messages whose reply looks like an ack subject.)
	forged := &natsio.Msg{Subject: "q.0", Reply: batch[0].Reply}
	for _, ack := range append(terminal, (*natsio.Msg).InProgress) {
		wantErr(t, ack(core), natsio.ErrNotJSMessage)
		wantErr(t, ack(forged), natsio.ErrNotJSMessage)
	}
	_, err := core.Metadata()
	wantErr(t, err, natsio.ErrNotJSMessage)
	var nilMsg *natsio.Msg
	wantErr(t, nilMsg.Ack(), natsio.ErrNullArgument)
	_, err = nilMsg.Metadata()
	wantErr(t, err, natsio.ErrNullArgument)
}

func TestNakAndTerm(t *testing.T) {
	_, js := jetStream(t)
	ctx := ctxTimeout(t, 20*time.Second)
	// No redelivery by ack wait during the test: only naks redeliver.
	workQueue(t, js, 10, natsio.ConsumerConfig{AckWait: 30 * time.Second})
	batch := got(js.Fetch(ctx, "Q", "work", natsio.FetchMaxMessages(3), natsio.FetchExpires(2*time.Second))).must(t)
	if fmt.Sprint(bodies(batch)) != "[m0 m2 m4]" {
		t.Fatalf("batch %v", bodies(batch))
	}
	noErr(t, batch[0].Ack())
	noErr(t, batch[1].TermWithReason("bad input"))
	noErr(t, batch[2].Nak())

	// The nak'ed message comes again (delivered twice) with the others;
	// the server may deliver newer messages first.
	rest := got(js.Fetch(ctx, "Q", "work", natsio.FetchMaxMessages(10), natsio.FetchExpires(500*time.Millisecond))).must(t)
	delivered := map[string]uint64{}
	for _, m := range rest {
		delivered[string(m.Data)] = meta(t, m).NumDelivered
	}
	if fmt.Sprint(delivered) != "map[m4:2 m6:1 m8:1]" {
		t.Fatalf("after nak and term: %v", delivered)
	}

	// A nak with a delay: not redelivered before it.
	var m6 *natsio.Msg
	for _, m := range rest {
		switch string(m.Data) {
		case "m6":
			m6 = m
			noErr(t, m.NakWithDelay(700*time.Millisecond))
		default:
			noErr(t, m.Ack())
		}
	}
	start := time.Now()
	if early := got(js.Fetch(ctx, "Q", "work", natsio.FetchExpires(300*time.Millisecond))).must(t); len(early) != 0 {
		t.Fatalf("redelivered before the nak delay: %v", bodies(early))
	}
	again := got(js.Next(ctx, "Q", "work")).must(t)
	if string(again.Data) != "m6" || meta(t, again).NumDelivered != 2 || meta(t, again).Sequence.Stream != meta(t, m6).Sequence.Stream {
		t.Fatalf("after delayed nak %q %+v", again.Data, meta(t, again))
	}
	if d := time.Since(start); d < 500*time.Millisecond {
		t.Fatalf("redelivered %v after a 700ms nak delay", d)
	}

	// (InProgress holding a message past its ack wait is the C suite's
	// test_in_progress_holds_a_message_past_ack_wait: the Go call only
	// translates.)
	noErr(t, again.AckSync(ctx))
	ci := got(js.ConsumerInfo(ctx, "Q", "work")).must(t)
	if ci.NumAckPending != 0 || ci.NumPending != 0 || ci.NumRedelivered != 0 {
		t.Fatalf("consumer at the end %+v", ci)
	}
	// The terminated message never came back.
	if leftover := got(js.Fetch(ctx, "Q", "work", natsio.FetchNoWait())).must(t); len(leftover) != 0 {
		t.Fatalf("left over %v", bodies(leftover))
	}
}

func TestConcurrentFetchersShareTheWork(t *testing.T) {
	_, js := jetStream(t)
	ctx := ctxTimeout(t, 20*time.Second)
	const n = 400
	workQueue(t, js, 2*n, natsio.ConsumerConfig{})

	var mu sync.Mutex
	seen := map[uint64]int{}
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				batch, err := js.Fetch(ctx, "Q", "work", natsio.FetchMaxMessages(25), natsio.FetchExpires(300*time.Millisecond))
				if err != nil {
					t.Error(err)
					return
				}
				if len(batch) == 0 {
					return
				}
				for _, m := range batch {
					md, err := m.Metadata()
					if err == nil {
						err = m.Ack()
					}
					if err != nil {
						t.Error(err)
						return
					}
					mu.Lock()
					seen[md.Sequence.Stream]++
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	if len(seen) != n {
		t.Fatalf("%d distinct messages consumed, want %d", len(seen), n)
	}
	for seq, c := range seen {
		if c != 1 || seq%2 != 1 {
			t.Fatalf("stream sequence %d consumed %d times", seq, c)
		}
	}
}

func TestFetchEndsWhenConsumerDeleted(t *testing.T) {
	_, js := jetStream(t)
	ctx := ctxTimeout(t, 10*time.Second)
	workQueue(t, js, 0, natsio.ConsumerConfig{})

	type outcome struct {
		msgs []*natsio.Msg
		err  error
		took time.Duration
	}
	done := make(chan outcome, 1)
	go func() {
		start := time.Now()
		msgs, err := js.Fetch(ctx, "Q", "work", natsio.FetchMaxMessages(5), natsio.FetchExpires(5*time.Second))
		done <- outcome{msgs, err, time.Since(start)}
	}()
	eventually(t, "the pull request waiting", func() bool {
		ci, err := js.ConsumerInfo(ctx, "Q", "work")
		return err == nil && ci.NumWaiting == 1
	})
	noErr(t, js.DeleteConsumer(ctx, "Q", "work"))
	select {
	case o := <-done:
		wantErr(t, o.err, natsio.ErrConsumerDeleted)
		if o.msgs != nil || o.took > 3*time.Second {
			t.Fatalf("fetch returned %v after %v", o.msgs, o.took)
		}
	case <-time.After(4 * time.Second):
		t.Fatal("fetch still waiting after its consumer was deleted")
	}
}

func TestKeyValueKeysAndHistory(t *testing.T) {
	_, js := jetStream(t)
	ctx := ctxTimeout(t, 10*time.Second)
	kv := got(js.CreateKeyValue(ctx, natsio.KeyValueConfig{Bucket: "H", History: 10})).must(t)

	if keys := got(kv.Keys(ctx)).must(t); keys == nil || len(keys) != 0 {
		t.Fatalf("keys of an empty bucket %#v", keys)
	}
	_, err := kv.History(ctx, "a")
	wantErr(t, err, natsio.ErrKeyNotFound)

	var revs []uint64
	for i := range 3 {
		revs = append(revs, got(kv.Put(ctx, "a", []byte(fmt.Sprintf("a%d", i)))).must(t))
	}
	got(kv.Put(ctx, "b.c", []byte("x"))).must(t)
	got(kv.Put(ctx, "gone", []byte("x"))).must(t)
	noErr(t, kv.Delete(ctx, "gone"))
	got(kv.Put(ctx, "purged", []byte("x"))).must(t)
	noErr(t, kv.Purge(ctx, "purged"))
	for i := range 150 {
		got(kv.Put(ctx, fmt.Sprintf("many.%d", i), []byte("v"))).must(t)
	}

	keys := got(kv.Keys(ctx)).must(t)
	slices.Sort(keys)
	if len(keys) != 152 || keys[0] != "a" || keys[1] != "b.c" || slices.Contains(keys, "gone") || slices.Contains(keys, "purged") {
		t.Fatalf("%d keys: %v", len(keys), keys[:min(5, len(keys))])
	}

	h := got(kv.History(ctx, "a")).must(t)
	if len(h) != 3 {
		t.Fatalf("history %+v", h)
	}
	for i, e := range h {
		if e.Bucket != "H" || e.Key != "a" || string(e.Value) != fmt.Sprintf("a%d", i) || e.Revision != revs[i] ||
			e.Delta != uint64(2-i) || e.Operation != natsio.KeyValuePut || time.Since(e.Created) > time.Minute {
			t.Fatalf("history entry %d: %+v", i, e)
		}
	}
	g := got(kv.History(ctx, "gone")).must(t)
	if len(g) != 2 || g[0].Operation != natsio.KeyValuePut || g[1].Operation != natsio.KeyValueDelete || len(g[1].Value) != 0 {
		t.Fatalf("history of a deleted key %+v", g)
	}
	if p := got(kv.History(ctx, "purged")).must(t); len(p) != 1 || p[0].Operation != natsio.KeyValuePurge {
		t.Fatalf("history of a purged key %+v", p)
	}
	_, err = kv.History(ctx, "bad key")
	wantErr(t, err, natsio.ErrInvalidKey)
	_, err = kv.History(ctx, "a\x00")
	wantErr(t, err, natsio.ErrInvalidArgument)

	// The scans leave no consumers behind.
	if names := got(js.ConsumerNames(ctx, "KV_H")).must(t); len(names) != 0 {
		t.Fatalf("consumers left %v", names)
	}
	var nilKV *natsio.KeyValue
	_, err = nilKV.Keys(ctx)
	wantErr(t, err, natsio.ErrNullArgument)
}

func TestConsumersAfterClose(t *testing.T) {
	nc, js := jetStream(t)
	ctx := ctxTimeout(t, 10*time.Second)
	workQueue(t, js, 6, natsio.ConsumerConfig{})
	kv := got(js.CreateKeyValue(ctx, natsio.KeyValueConfig{Bucket: "B"})).must(t)
	got(kv.Put(ctx, "k", []byte("v"))).must(t)

	// Messages outlive the JetStream context that fetched them.
	js2 := got(nc.JetStream()).must(t)
	batch := got(js2.Fetch(ctx, "Q", "work", natsio.FetchMaxMessages(3), natsio.FetchExpires(2*time.Second))).must(t)
	js2.Close()
	_, err := js2.Fetch(ctx, "Q", "work")
	wantErr(t, err, natsio.ErrIllegalState)
	_, err = js2.ConsumerNames(ctx, "Q")
	wantErr(t, err, natsio.ErrIllegalState)
	noErr(t, batch[0].AckSync(ctx))

	noErr(t, nc.Close())
	wantErr(t, batch[1].Ack(), natsio.ErrConnectionClosed)
	wantErr(t, batch[1].AckSync(ctx), natsio.ErrConnectionClosed)
	wantErr(t, batch[1].InProgress(), natsio.ErrConnectionClosed)
	// A failed ack did not use up the message's one terminal ack.
	wantErr(t, batch[1].Nak(), natsio.ErrConnectionClosed)
	if md := meta(t, batch[2]); md.Stream != "Q" {
		t.Fatalf("metadata after close %+v", md)
	}
	_, err = js.Fetch(ctx, "Q", "work", natsio.FetchExpires(time.Second))
	wantErr(t, err, natsio.ErrConnectionClosed)
	_, err = js.Next(ctx, "Q", "work")
	wantErr(t, err, natsio.ErrConnectionClosed)
	_, err = js.CreateConsumer(ctx, "Q", natsio.ConsumerConfig{Durable: "other"})
	wantErr(t, err, natsio.ErrConnectionClosed)
	_, err = js.ConsumerInfo(ctx, "Q", "work")
	wantErr(t, err, natsio.ErrConnectionClosed)
	_, err = js.ConsumerNames(ctx, "Q")
	wantErr(t, err, natsio.ErrConnectionClosed)
	wantErr(t, js.DeleteConsumer(ctx, "Q", "work"), natsio.ErrConnectionClosed)
	_, err = kv.Keys(ctx)
	wantErr(t, err, natsio.ErrConnectionClosed)
	_, err = kv.History(ctx, "k")
	wantErr(t, err, natsio.ErrConnectionClosed)
}

func TestConsumersListPauseAndResume(t *testing.T) {
	_, js := jetStream(t)
	ctx := ctxTimeout(t, 20*time.Second)
	workQueue(t, js, 6, natsio.ConsumerConfig{})
	got(js.CreateConsumer(ctx, "Q", natsio.ConsumerConfig{Durable: "odd", FilterSubject: "q.1"})).must(t)
	got(js.Publish(ctx, "q.1", []byte("m6"))).must(t)

	// Consumers: both, with their names and pending counts. The server
	// acks a publish before its consumers have counted the message (they
	// do so on their own goroutines), so the counts are polled, briefly.
	var infos []*natsio.ConsumerInfo
	pending := map[string]uint64{}
	for try := 0; ; try++ {
		infos = got(js.Consumers(ctx, "Q")).must(t)
		for _, ci := range infos {
			if ci.Stream != "Q" || ci.Paused || ci.PauseRemaining != 0 || len(ci.Raw) == 0 {
				t.Fatalf("listed %+v", ci)
			}
			pending[ci.Name] = ci.NumPending
		}
		if len(infos) == 2 && pending["work"] == 3 && pending["odd"] == 4 {
			break
		}
		if try == 50 {
			t.Fatalf("consumers %v", pending)
		}
		time.Sleep(10 * time.Millisecond)
	}
	_, err := js.Consumers(ctx, "NOPE")
	wantErr(t, err, natsio.ErrStreamNotFound)

	// Paused for an hour: the answer and the info say so; a fetch gets nothing.
	until := time.Now().Add(time.Hour)
	r := got(js.PauseConsumer(ctx, "Q", "work", until)).must(t)
	if !r.Paused || r.PauseRemaining <= 59*time.Minute || r.PauseRemaining > time.Hour ||
		r.PauseUntil.Sub(until).Abs() > time.Second {
		t.Fatalf("pause response %+v (until %v)", r, until)
	}
	ci := got(js.ConsumerInfo(ctx, "Q", "work")).must(t)
	if !ci.Paused || ci.PauseRemaining <= 59*time.Minute {
		t.Fatalf("info of the paused consumer: paused %v remaining %v", ci.Paused, ci.PauseRemaining)
	}
	for _, c := range got(js.Consumers(ctx, "Q")).must(t) {
		if c.Paused != (c.Name == "work") {
			t.Fatalf("listed %s paused %v", c.Name, c.Paused)
		}
	}
	msgs := got(js.Fetch(ctx, "Q", "work", natsio.FetchMaxMessages(3), natsio.FetchExpires(500*time.Millisecond))).must(t)
	if len(msgs) != 0 {
		t.Fatalf("a paused consumer delivered %v", bodies(msgs))
	}

	// Resumed: the fetch gets them.
	r = got(js.ResumeConsumer(ctx, "Q", "work")).must(t)
	if r.Paused || r.PauseRemaining != 0 {
		t.Fatalf("resume response %+v", r)
	}
	if ci := got(js.ConsumerInfo(ctx, "Q", "work")).must(t); ci.Paused || ci.PauseRemaining != 0 {
		t.Fatalf("info after resume: paused %v remaining %v", ci.Paused, ci.PauseRemaining)
	}
	msgs = got(js.Fetch(ctx, "Q", "work", natsio.FetchMaxMessages(3), natsio.FetchExpires(2*time.Second))).must(t)
	if b := bodies(msgs); !slices.Equal(b, []string{"m0", "m2", "m4"}) {
		t.Fatalf("after resume fetched %v", b)
	}
	for _, m := range msgs {
		noErr(t, m.Ack())
	}
	// Resuming a running consumer is fine.
	if r := got(js.ResumeConsumer(ctx, "Q", "odd")).must(t); r.Paused {
		t.Fatalf("resume of a running consumer %+v", r)
	}

	// Errors.
	_, err = js.PauseConsumer(ctx, "Q", "missing", until)
	wantErr(t, err, natsio.ErrConsumerNotFound)
	_, err = js.ResumeConsumer(ctx, "Q", "missing")
	wantErr(t, err, natsio.ErrConsumerNotFound)
	_, err = js.PauseConsumer(ctx, "Q", "work", time.Time{})
	wantErr(t, err, natsio.ErrInvalidArgument)
	_, err = js.PauseConsumer(ctx, "Q", "work", time.Unix(0, 0))
	wantErr(t, err, natsio.ErrInvalidArgument)
	_, err = js.PauseConsumer(ctx, "Q", "a\x00b", until)
	wantErr(t, err, natsio.ErrInvalidArgument)
	if ci := got(js.ConsumerInfo(ctx, "Q", "work")).must(t); ci.Paused {
		t.Fatal("a refused pause paused the consumer")
	}
}

// ADR-42 priority groups: validation, overflow's minimum pending, a pinned
// client and UnpinConsumer; a consumption ended by a message over
// PullMaxBytes.
func TestPriorityGroupsPinnedClientAndPullStatuses(t *testing.T) {
	nc, js := jetStream(t)
	ctx := ctxTimeout(t, 30*time.Second)
	workQueue(t, js, 8, natsio.ConsumerConfig{Durable: "ov", FilterSubject: "q.>",
		PriorityGroups: []string{"A"}, PriorityPolicy: natsio.PriorityPolicyOverflow})
	ci := got(js.ConsumerInfo(ctx, "Q", "ov")).must(t)
	if ci.Config.PriorityPolicy != natsio.PriorityPolicyOverflow || len(ci.Config.PriorityGroups) != 1 {
		t.Fatalf("config %+v", ci.Config)
	}
	_, err := js.Fetch(ctx, "Q", "ov", natsio.FetchMaxMessages(1), natsio.FetchExpires(300*time.Millisecond))
	wantErr(t, err, natsio.ErrInvalidArgument, "priority group is required")
	_, err = js.Fetch(ctx, "Q", "ov", natsio.FetchPriorityGroup("B"))
	wantErr(t, err, natsio.ErrInvalidArgument, "invalid priority group")
	none := got(js.Fetch(ctx, "Q", "ov", natsio.FetchPriorityGroup("A"), natsio.FetchMinPending(9),
		natsio.FetchExpires(300*time.Millisecond))).must(t)
	msgs := got(js.Fetch(ctx, "Q", "ov", natsio.FetchPriorityGroup("A"), natsio.FetchMinPending(7),
		natsio.FetchMaxMessages(2), natsio.FetchExpires(2*time.Second))).must(t)
	if len(none) != 0 || len(msgs) != 2 || string(msgs[0].Data) != "m0" {
		t.Fatalf("overflow fetches got %d and %d", len(none), len(msgs))
	}
	m := got(js.Next(ctx, "Q", "ov", natsio.FetchPriorityGroup("A"), natsio.FetchMinPending(6))).must(t)
	if string(m.Data) != "m2" {
		t.Fatalf("next got %q", m.Data)
	}
	_, err = js.Consume(ctx, "Q", "ov")
	wantErr(t, err, natsio.ErrInvalidArgument, "priority group is required")

	// Pinned: only the pinned context gets messages until unpinned.
	got(js.CreateConsumer(ctx, "Q", natsio.ConsumerConfig{Durable: "pin", PriorityGroups: []string{"G"},
		PriorityPolicy: natsio.PriorityPolicyPinned, PriorityTimeout: 30 * time.Second})).must(t)
	other, err := nc.JetStream()
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	short := []natsio.FetchOpt{natsio.FetchPriorityGroup("G"), natsio.FetchMaxMessages(1), natsio.FetchExpires(300 * time.Millisecond)}
	long := []natsio.FetchOpt{natsio.FetchPriorityGroup("G"), natsio.FetchMaxMessages(1), natsio.FetchExpires(2 * time.Second)}
	if n := len(got(js.Fetch(ctx, "Q", "pin", long...)).must(t)); n != 1 {
		t.Fatalf("pinned fetch got %d", n)
	}
	if n := len(got(other.Fetch(ctx, "Q", "pin", short...)).must(t)); n != 0 {
		t.Fatalf("unpinned fetch got %d", n)
	}
	if err := js.UnpinConsumer(ctx, "Q", "pin", "G"); err != nil {
		t.Fatal(err)
	}
	if n := len(got(other.Fetch(ctx, "Q", "pin", long...)).must(t)); n != 1 {
		t.Fatalf("fetch after unpin got %d", n)
	}
	if n := len(got(js.Fetch(ctx, "Q", "pin", short...)).must(t)); n != 0 {
		t.Fatalf("formerly pinned fetch got %d", n)
	}
	wantErr(t, js.UnpinConsumer(ctx, "Q", "pin", "Z"), natsio.ErrInvalidArgument)
	wantErr(t, js.UnpinConsumer(ctx, "Q", "nope", "G"), natsio.ErrConsumerNotFound)

	// A consumption in the group (a puller of its own: pinned once the
	// fetches' pin is released) gets messages; one whose PullMaxBytes is
	// below a message's size ends with ErrJetStream.
	if err := other.UnpinConsumer(ctx, "Q", "pin", "G"); err != nil {
		t.Fatal(err)
	}
	c := got(other.Consume(ctx, "Q", "pin", natsio.PullPriorityGroup("G"), natsio.ConsumeExpires(2*time.Second))).must(t)
	if m := got(c.Next(ctx)).must(t); m == nil {
		t.Fatal("no message")
	}
	c.Stop()
	got(js.CreateConsumer(ctx, "Q", natsio.ConsumerConfig{Durable: "small"})).must(t)
	tiny := got(js.Consume(ctx, "Q", "small", natsio.PullMaxBytes(10), natsio.ConsumeExpires(2*time.Second))).must(t)
	defer tiny.Stop()
	_, err = tiny.Next(ctx)
	wantErr(t, err, natsio.ErrJetStream, "max_bytes")
}

// A pull request the consumer's limits refuse fails with the server's
// reason instead of reading as "no messages"; a no-wait fetch the server
// holds (messages pending, max_ack_pending reached) ends within about a
// second, not after the context's timeout.
func TestFetchRefusalsAndHeldNoWait(t *testing.T) {
	_, js := jetStream(t)
	ctx := ctxTimeout(t, 20*time.Second)
	workQueue(t, js, 6, natsio.ConsumerConfig{
		MaxRequestBatch: 10, MaxRequestExpires: time.Second, MaxRequestMaxBytes: 1000, MaxAckPending: 2,
	})
	_, err := js.Fetch(ctx, "Q", "work", natsio.FetchMaxMessages(20), natsio.FetchExpires(500*time.Millisecond))
	wantErr(t, err, natsio.ErrJetStream, "Exceeded MaxRequestBatch")
	_, err = js.Fetch(ctx, "Q", "work", natsio.FetchMaxMessages(5), natsio.FetchExpires(2*time.Second))
	wantErr(t, err, natsio.ErrJetStream, "Exceeded MaxRequestExpires")
	_, err = js.Fetch(ctx, "Q", "work", natsio.FetchMaxMessages(5), natsio.FetchMaxBytes(2000), natsio.FetchExpires(500*time.Millisecond))
	wantErr(t, err, natsio.ErrJetStream, "Exceeded MaxRequestMaxBytes")
	_, err = js.Next(ctx, "Q", "work", natsio.FetchExpires(2*time.Second))
	wantErr(t, err, natsio.ErrJetStream, "Exceeded MaxRequestExpires")

	// Within the limits: 2 of the 3 pending come (max_ack_pending 2);
	// then the server holds a no-wait request for the third.
	msgs := got(js.Fetch(ctx, "Q", "work", natsio.FetchMaxMessages(10), natsio.FetchExpires(500*time.Millisecond))).must(t)
	if len(msgs) != 2 {
		t.Fatalf("fetched %v", bodies(msgs))
	}
	start := time.Now()
	held := got(js.Fetch(ctx, "Q", "work", natsio.FetchMaxMessages(10), natsio.FetchNoWait())).must(t)
	if d := time.Since(start); len(held) != 0 || d > 3*time.Second {
		t.Fatalf("held no-wait fetch: %d messages after %v", len(held), d)
	}
}

// A consumption whose reader takes one message and stalls holds at most
// its budget: the server's unacked count, polled for two seconds, stays
// within ConsumeMaxMessages (or PullMaxBytes), counting what the binding
// takes ahead of Next and the library's own buffer together.
func TestConsumeHoldsAtMostItsBudget(t *testing.T) {
	_, js := jetStream(t)
	ctx := ctxTimeout(t, 60*time.Second)
	got(js.CreateStream(ctx, natsio.StreamConfig{Name: "B", Subjects: []string{"b.>"}, Storage: natsio.MemoryStorage})).must(t)
	payload := make([]byte, 1000)
	for range 400 {
		got(js.Publish(ctx, "b.x", payload)).must(t)
	}
	for i, c := range []struct {
		opt   natsio.ConsumeOpt
		bound int
	}{
		{natsio.ConsumeMaxMessages(10), 10},
		{natsio.ConsumeMaxMessages(100), 100},
		{natsio.PullMaxBytes(10 * 1000), 10},
	} {
		name := fmt.Sprintf("c%d", i)
		got(js.CreateConsumer(ctx, "B", natsio.ConsumerConfig{Durable: name, AckPolicy: natsio.AckExplicitPolicy, AckWait: time.Minute})).must(t)
		cons := got(js.Consume(ctx, "B", name, c.opt)).must(t)
		m := got(cons.Next(ctx)).must(t)
		noErr(t, m.AckSync(ctx))
		most := 0
		for until := time.Now().Add(2 * time.Second); time.Now().Before(until); time.Sleep(50 * time.Millisecond) {
			most = max(most, got(js.ConsumerInfo(ctx, "B", name)).must(t).NumAckPending)
		}
		cons.Stop()
		if most > c.bound || most < c.bound/2 {
			t.Fatalf("budget %d: num_ack_pending reached %d", c.bound, most)
		}
	}
}

// A pull request answered by the server itself ("NATS/1.0 404 No
// Messages", "NATS/1.0 408 Request Timeout") reaches a plain subscription
// with both the code and the description.
func TestInlineStatusCodeAndDescription(t *testing.T) {
	nc, js := jetStream(t)
	workQueue(t, js, 0, natsio.ConsumerConfig{})
	inbox, err := nc.NewInbox()
	if err != nil {
		t.Fatal(err)
	}
	sub, err := nc.SubscribeSync(inbox)
	if err != nil {
		t.Fatal(err)
	}
	flush(t, nc)
	pull := func(body string) *natsio.Msg {
		t.Helper()
		if err := nc.PublishMsg(&natsio.Msg{Subject: "$JS.API.CONSUMER.MSG.NEXT.Q.work", Reply: inbox, Data: []byte(body)}); err != nil {
			t.Fatal(err)
		}
		m, err := sub.NextMsg(ctxTimeout(t, 5*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	if m := pull(`{"batch":1,"no_wait":true}`); m.Status != 404 || m.StatusDescription != "No Messages" {
		t.Fatalf("no_wait: %d %q", m.Status, m.StatusDescription)
	}
	if m := pull(`{"batch":1,"expires":50000000}`); m.Status != 408 || m.StatusDescription != "Request Timeout" {
		t.Fatalf("expires: %d %q", m.Status, m.StatusDescription)
	}
	got(js.Publish(ctxTimeout(t, 5*time.Second), "q.0", []byte("m0"))).must(t)
	// A pull that waits: right after the publish's ack the consumer may not
	// have seen the message yet, and a no-wait pull would answer 404.
	if m := pull(`{"batch":1,"expires":5000000000}`); m.Status != 0 || m.StatusDescription != "" || string(m.Data) != "m0" {
		t.Fatalf("message: %d %q %q", m.Status, m.StatusDescription, m.Data)
	}
}

// waitingRequests waits until consumer of stream has want pull requests
// waiting (ConsumerInfo.NumWaiting), so that the next one is known to come
// after them.
func waitingRequests(t *testing.T, js *natsio.JetStream, stream, consumer string, want int) {
	t.Helper()
	ctx := ctxTimeout(t, 30*time.Second)
	eventually(t, fmt.Sprintf("%d waiting requests", want), func() bool {
		ci, err := js.ConsumerInfo(ctx, stream, consumer)
		return err == nil && ci.NumWaiting == want
	})
}

// fetchOneAt starts a streamed fetch of one message of consumer in
// priority group group at priority, held open 20 s, stopped when the test
// ends.
func fetchOneAt(t *testing.T, ctx context.Context, js *natsio.JetStream, stream, consumer, group string, priority int) *natsio.Consumption {
	t.Helper()
	c := got(js.FetchMessages(ctx, stream, consumer, natsio.FetchPriorityGroup(group), natsio.FetchPriority(priority),
		natsio.FetchMaxMessages(1), natsio.FetchExpires(20*time.Second))).must(t)
	t.Cleanup(c.Stop)
	return c
}

// nextIs reads the next message of c within 10 s and checks its payload.
func nextIs(t *testing.T, c *natsio.Consumption, what, want string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	m, err := c.Next(ctx)
	if err != nil || string(m.Data) != want {
		t.Fatalf("%s: %v, want %q", what, err, want)
	}
	noErr(t, m.Ack())
}

// A prioritized consumer serves the waiting request of the lower number
// first: a fetch at 5 waits first, one at 1 after it, and the one message
// published goes to the one at 1 (were the priority not sent, both would
// be 0 and the first would get it). A consumption's requests carry its
// PullPriority the same way. Out of range or without a group, the
// priority is refused before anything is sent.
func TestPrioritizedPolicyServesLowerNumbersFirst(t *testing.T) {
	_, js := jetStream(t)
	ctx := ctxTimeout(t, 60*time.Second)
	got(js.CreateStream(ctx, natsio.StreamConfig{Name: "PZ", Subjects: []string{"pz.>"}, Storage: natsio.MemoryStorage})).must(t)
	ci := got(js.CreateConsumer(ctx, "PZ", natsio.ConsumerConfig{Durable: "pz",
		PriorityGroups: []string{"P"}, PriorityPolicy: natsio.PriorityPolicyPrioritized})).must(t)
	if ci.Config.PriorityPolicy != natsio.PriorityPolicyPrioritized {
		t.Fatalf("config %+v", ci.Config)
	}
	fetchAt := func(priority int) *natsio.Consumption { return fetchOneAt(t, ctx, js, "PZ", "pz", "P", priority) }
	low := fetchAt(5)
	waitingRequests(t, js, "PZ", "pz", 1)
	high := fetchAt(1)
	waitingRequests(t, js, "PZ", "pz", 2)
	got(js.Publish(ctx, "pz.x", []byte("a"))).must(t)
	nextIs(t, high, "the fetch at 1", "a")
	got(js.Publish(ctx, "pz.x", []byte("b"))).must(t)
	nextIs(t, low, "the fetch at 5", "b")

	// A consumption at 5, then a fetch at 1: the fetch gets the next
	// message, the consumption the one after.
	consume := got(js.Consume(ctx, "PZ", "pz", natsio.PullPriorityGroup("P"), natsio.PullPriority(5),
		natsio.ConsumeMaxMessages(1), natsio.ConsumeExpires(20*time.Second))).must(t)
	defer consume.Stop()
	waitingRequests(t, js, "PZ", "pz", 1)
	fetch := fetchAt(1)
	waitingRequests(t, js, "PZ", "pz", 2)
	got(js.Publish(ctx, "pz.x", []byte("c"))).must(t)
	nextIs(t, fetch, "the fetch at 1 after a consumption at 5", "c")
	got(js.Publish(ctx, "pz.x", []byte("d"))).must(t)
	nextIs(t, consume, "the consumption at 5", "d")

	// Refused before a request is sent.
	for _, p := range []int{10, -1, 1 << 33} {
		_, err := js.Fetch(ctx, "PZ", "pz", natsio.FetchPriorityGroup("P"), natsio.FetchPriority(p), natsio.FetchNoWait())
		wantErr(t, err, natsio.ErrInvalidArgument, "priority must be between 0 and 9")
	}
	_, err := js.Next(ctx, "PZ", "pz", natsio.FetchPriority(1))
	wantErr(t, err, natsio.ErrInvalidArgument, "priority needs a priority group")
	_, err = js.Consume(ctx, "PZ", "pz", natsio.PullPriorityGroup("P"), natsio.PullPriority(10))
	wantErr(t, err, natsio.ErrInvalidArgument, "priority must be between 0 and 9")
	_, err = js.Consume(ctx, "PZ", "pz", natsio.PullPriority(1))
	wantErr(t, err, natsio.ErrInvalidArgument, "priority")
	// An ordered consumer pulls for no group: PullPriority is Consume's.
	oc := got(js.OrderedConsumer(ctx, "PZ", natsio.OrderedConsumerConfig{})).must(t)
	defer oc.Stop(ctx)
	_, err = oc.Messages(ctx, natsio.PullPriority(1))
	wantErr(t, err, natsio.ErrInvalidArgument, "PullPriority")
}

// The flow_control ack policy (nats-server 2.14): a durable push consumer
// a stream sources through is acknowledged by its flow-control replies:
// the sourcing stream receives the messages and the consumer's ack floor
// reaches them, also for messages published after.
func TestFlowControlAckPolicyForDurableSourcing(t *testing.T) {
	_, js := jetStream(t)
	ctx := ctxTimeout(t, 60*time.Second)
	got(js.CreateStream(ctx, natsio.StreamConfig{Name: "FCO", Subjects: []string{"fco.>"}, Storage: natsio.MemoryStorage})).must(t)
	for i := range 3 {
		got(js.Publish(ctx, "fco.x", []byte(fmt.Sprintf("m%d", i)))).must(t)
	}
	ci := got(js.CreateConsumer(ctx, "FCO", natsio.ConsumerConfig{Durable: "fcsrc", AckPolicy: natsio.AckFlowControlPolicy,
		MaxAckPending: 100, Extra: map[string]any{"deliver_subject": "fco_deliver.sink", "flow_control": true,
			"idle_heartbeat": time.Second.Nanoseconds()}})).must(t)
	if ci.Config.AckPolicy != natsio.AckFlowControlPolicy {
		t.Fatalf("ack policy read back: %q", ci.Config.AckPolicy)
	}
	got(js.CreateStream(ctx, natsio.StreamConfig{Name: "FCS", Storage: natsio.MemoryStorage, Sources: []*natsio.StreamSource{{
		Name: "FCO", Consumer: &natsio.StreamConsumerSource{Name: "fcsrc", DeliverSubject: "fco_deliver.sink"}}}})).must(t)
	sourcedAndAcked := func(want uint64) {
		t.Helper()
		eventually(t, fmt.Sprintf("%d messages sourced and acked", want), func() bool {
			si, err := js.StreamInfo(ctx, "FCS")
			if err != nil || si.State.Msgs != want {
				return false
			}
			ci, err := js.ConsumerInfo(ctx, "FCO", "fcsrc")
			return err == nil && ci.AckFloor.Stream == want
		})
	}
	sourcedAndAcked(3)
	for i := 3; i < 5; i++ {
		got(js.Publish(ctx, "fco.x", []byte(fmt.Sprintf("m%d", i)))).must(t)
	}
	sourcedAndAcked(5)
	// The server refuses the policy on a pull consumer.
	_, err := js.CreateConsumer(ctx, "FCO", natsio.ConsumerConfig{Durable: "fcpull", AckPolicy: natsio.AckFlowControlPolicy})
	if err == nil {
		t.Fatal("a pull consumer with the flow_control ack policy was created")
	}
}
