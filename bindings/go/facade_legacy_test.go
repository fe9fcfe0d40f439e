package natsio_test

// nats.go's legacy JetStream API (nc.JetStream()) and the Conn calls its
// package examples use, through the facade (bindings/go/nats).

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/libnatsio/natsio/bindings/go/nats"
)

// legacyJS connects to a fresh JetStream server and makes a legacy
// JetStream context with opts, and stream name holding subjects.
func legacyJS(t *testing.T, name string, subjects []string, opts ...nats.JSOpt) (*natsServer, *nats.Conn, nats.JetStreamContext) {
	t.Helper()
	s := startTestServer(t, "-js", "-sd", t.TempDir())
	nc, err := nats.Connect(s.url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js, err := nc.JetStream(opts...)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := js.AddStream(&nats.StreamConfig{Name: name, Subjects: subjects, Storage: nats.MemoryStorage}); err != nil {
		t.Fatal(err)
	}
	return s, nc, js
}

func publishN(t *testing.T, js nats.JetStream, subject string, from, to int) {
	t.Helper()
	for i := from; i <= to; i++ {
		if _, err := js.Publish(subject, []byte(fmt.Sprint(i))); err != nil {
			t.Fatal(err)
		}
	}
}

func data(msgs []*nats.Msg) []string {
	var out []string
	for _, m := range msgs {
		out = append(out, string(m.Data))
	}
	return out
}

// PullSubscribe creates the durable pull consumer (filtered by the
// subject, MaxAckPending nats.go's channel length), Fetch returns what is
// ready without waiting for a full batch, waits when nothing is, and ends
// with nats.go's errors; Unsubscribe deletes the consumer it created.
func TestFacadeLegacyPullSubscribeFetch(t *testing.T) {
	_, _, js := legacyJS(t, "LP", []string{"lp.>"})
	publishN(t, js, "lp.a", 1, 5)
	sub, err := js.PullSubscribe("lp.>", "worker")
	if err != nil {
		t.Fatal(err)
	}
	info, err := sub.ConsumerInfo()
	if err != nil {
		t.Fatal(err)
	}
	if info.Name != "worker" || info.Config.FilterSubject != "lp.>" || info.Config.MaxAckPending != nats.DefaultMaxChanLen ||
		info.Config.DeliverSubject != "" || info.Config.AckPolicy != nats.AckExplicitPolicy {
		t.Fatalf("consumer: %+v", info.Config)
	}

	msgs, err := sub.Fetch(3)
	if err != nil || fmt.Sprint(data(msgs)) != "[1 2 3]" {
		t.Fatalf("Fetch(3): %v %v", data(msgs), err)
	}
	// Two are ready: a batch of 10 returns them without waiting its
	// 30 s for the other eight.
	start := time.Now()
	more, err := sub.Fetch(10, nats.MaxWait(30*time.Second))
	if err != nil || fmt.Sprint(data(more)) != "[4 5]" {
		t.Fatalf("Fetch(10): %v %v", data(more), err)
	}
	if waited := time.Since(start); waited > 20*time.Second {
		t.Fatalf("Fetch(10) waited %v for a full batch", waited)
	}
	for _, m := range append(msgs, more...) {
		meta, err := m.Metadata()
		if err != nil || meta.Consumer != "worker" || meta.Stream != "LP" {
			t.Fatalf("metadata %+v %v", meta, err)
		}
		if err := m.AckSync(); err != nil {
			t.Fatal(err)
		}
	}

	// Nothing ready: Fetch waits for the first message published
	// meanwhile and returns with it, not waiting 20 s for a second (as
	// nats.go's, whose request the server ends once nothing more is ready).
	got := make(chan []*nats.Msg, 1)
	var waited time.Duration
	go func() {
		start := time.Now()
		m, err := sub.Fetch(2, nats.MaxWait(20*time.Second))
		if err != nil {
			t.Error(err)
		}
		waited = time.Since(start)
		got <- m
	}()
	eventually(t, "the waiting pull request", func() bool {
		i, err := sub.ConsumerInfo()
		return err == nil && i.NumWaiting > 0
	})
	publishN(t, js, "lp.b", 6, 6)
	late := <-got
	if fmt.Sprint(data(late)) != "[6]" || waited > 15*time.Second {
		t.Fatalf("waited Fetch: %v after %v", data(late), waited)
	}
	for _, m := range late {
		m.Ack()
	}

	if _, err := sub.Fetch(1, nats.MaxWait(300*time.Millisecond)); err != nats.ErrTimeout {
		t.Errorf("empty Fetch: %v, want nats.ErrTimeout", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	if _, err := sub.Fetch(5, nats.Context(ctx)); err != context.DeadlineExceeded {
		t.Errorf("empty Fetch with a context: %v, want context.DeadlineExceeded", err)
	}
	if _, err := sub.Fetch(1, nats.Context(ctx), nats.MaxWait(time.Second)); err != nats.ErrContextAndTimeout {
		t.Errorf("Context and MaxWait: %v", err)
	}
	if _, err := sub.Fetch(1, nats.Context(context.Background())); err != nats.ErrNoDeadlineContext {
		t.Errorf("context.Background: %v", err)
	}
	if _, err := sub.Fetch(0); err != nats.ErrInvalidArg {
		t.Errorf("Fetch(0): %v", err)
	}
	if _, err := sub.NextMsg(time.Millisecond); err != nats.ErrTypeSubscription {
		t.Errorf("NextMsg on a pull subscription: %v", err)
	}

	if err := sub.Unsubscribe(); err != nil {
		t.Fatal(err)
	}
	if _, err := js.ConsumerInfo("LP", "worker"); err != nats.ErrConsumerNotFound {
		t.Errorf("the consumer PullSubscribe created outlived Unsubscribe: %v", err)
	}
	if _, err := sub.Fetch(1); !errors.Is(err, nats.ErrBadSubscription) {
		t.Errorf("Fetch after Unsubscribe: %v", err)
	}
}

// A pull subscription refuses a push consumer and a push one a pull
// consumer, with nats.go's errors; Fetch refuses a push subscription; a
// consumer PullSubscribe found (not created) survives Unsubscribe.
func TestFacadeLegacyPullAndPushConsumersDoNotMix(t *testing.T) {
	_, nc, js := legacyJS(t, "MIX", []string{"mix.>"})
	if _, err := js.AddConsumer("MIX", &nats.ConsumerConfig{Durable: "pusher", DeliverSubject: nc.NewRespInbox(), AckPolicy: nats.AckExplicitPolicy}); err != nil {
		t.Fatal(err)
	}
	if _, err := js.AddConsumer("MIX", &nats.ConsumerConfig{Durable: "puller", AckPolicy: nats.AckExplicitPolicy}); err != nil {
		t.Fatal(err)
	}
	if _, err := js.PullSubscribe("", "pusher", nats.BindStream("MIX")); err != nats.ErrPullSubscribeToPushConsumer {
		t.Errorf("PullSubscribe on a push consumer: %v", err)
	}
	if _, err := js.SubscribeSync("", nats.Bind("MIX", "puller")); err != nats.ErrPullSubscribeRequired {
		t.Errorf("SubscribeSync on a pull consumer: %v", err)
	}
	push, err := js.SubscribeSync("", nats.Bind("MIX", "pusher"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := push.Fetch(1); err != nats.ErrTypeSubscription {
		t.Errorf("Fetch on a push subscription: %v", err)
	}
	pull, err := js.PullSubscribe("", "puller", nats.BindStream("MIX"))
	if err != nil {
		t.Fatal(err)
	}
	publishN(t, js, "mix.x", 1, 1)
	msgs, err := pull.Fetch(1)
	if err != nil || len(msgs) != 1 {
		t.Fatalf("Fetch: %v %v", msgs, err)
	}
	pull.Unsubscribe()
	if _, err := js.ConsumerInfo("MIX", "puller"); err != nil {
		t.Errorf("a consumer PullSubscribe bound to was deleted: %v", err)
	}
}

// FetchBatch hands the messages out on a channel that closes when the
// request expires with fewer than the batch; its Error is then nil and
// Done receives.
func TestFacadeLegacyFetchBatch(t *testing.T) {
	_, _, js := legacyJS(t, "FB", []string{"fb"})
	publishN(t, js, "fb", 1, 3)
	sub, err := js.PullSubscribe("fb", "")
	if err != nil {
		t.Fatal(err)
	}
	// An ephemeral consumer, named with 8 characters as nats.go names it.
	if info, err := sub.ConsumerInfo(); err != nil || len(info.Name) != 8 || info.Config.Durable != "" {
		t.Fatalf("ephemeral consumer: %+v %v", info, err)
	}
	batch, err := sub.FetchBatch(5, nats.MaxWait(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for m := range batch.Messages() {
		got = append(got, string(m.Data))
		m.Ack()
	}
	if fmt.Sprint(got) != "[1 2 3]" || batch.Error() != nil {
		t.Fatalf("FetchBatch: %v %v", got, batch.Error())
	}
	select {
	case <-batch.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("Done did not receive")
	}
}

// PublishAsync's futures give the acks in publish order; PublishAsyncComplete
// closes once none is pending; a refused publish reaches its future's Err
// and the PublishAsyncErrHandler with its message; an AckWait is refused.
func TestFacadeLegacyPublishAsync(t *testing.T) {
	var failedMu sync.Mutex
	var failed []string
	_, _, js := legacyJS(t, "PA", []string{"pa"}, nats.PublishAsyncMaxPending(8),
		nats.PublishAsyncErrHandler(func(_ nats.JetStream, m *nats.Msg, err error) {
			failedMu.Lock()
			failed = append(failed, string(m.Data)+": "+err.Error())
			failedMu.Unlock()
		}))
	var futures []nats.PubAckFuture
	for i := 1; i <= 20; i++ {
		f, err := js.PublishAsync("pa", []byte(fmt.Sprint(i)))
		if err != nil {
			t.Fatal(err)
		}
		futures = append(futures, f)
	}
	select {
	case <-js.PublishAsyncComplete():
	case <-time.After(10 * time.Second):
		t.Fatal("PublishAsyncComplete did not close")
	}
	if n := js.PublishAsyncPending(); n != 0 {
		t.Errorf("pending after complete: %d", n)
	}
	for i, f := range futures {
		select {
		case ack := <-f.Ok():
			if ack.Stream != "PA" || ack.Sequence != uint64(i+1) || string(f.Msg().Data) != fmt.Sprint(i+1) {
				t.Errorf("future %d: %+v %q", i, ack, f.Msg().Data)
			}
		case err := <-f.Err():
			t.Errorf("future %d: %v", i, err)
		}
	}
	bad, err := js.PublishAsync("pa", []byte("late"), nats.ExpectLastSequence(5))
	if err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-bad.Err():
		if err == nil {
			t.Error("nil error")
		}
	case ack := <-bad.Ok():
		t.Fatalf("a wrong expected sequence was acked: %+v", ack)
	}
	eventually(t, "the error handler", func() bool {
		failedMu.Lock()
		defer failedMu.Unlock()
		return len(failed) == 1
	})
	nobody, err := js.PublishAsync("nobody.listens", []byte("x"))
	if err != nil {
		t.Fatal(err)
	}
	if err := <-nobody.Err(); err != nats.ErrNoResponders {
		t.Errorf("no stream: %v, want nats.ErrNoResponders as nats.go's", err)
	}
	if _, err := js.PublishAsync("pa", nil, nats.AckWait(time.Second)); err != nats.ErrContextAndTimeout {
		t.Errorf("AckWait on PublishAsync: %v", err)
	}
}

// StreamsInfo, StreamNames, ConsumersInfo and ConsumerNames list as
// channels; StreamListFilter filters; UpdateConsumer changes a consumer.
func TestFacadeLegacyListings(t *testing.T) {
	_, _, js := legacyJS(t, "L1", []string{"l1.>"})
	if _, err := js.AddStream(&nats.StreamConfig{Name: "L2", Subjects: []string{"l2.>"}}); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"b", "a"} {
		if _, err := js.AddConsumer("L1", &nats.ConsumerConfig{Durable: d, AckPolicy: nats.AckExplicitPolicy}); err != nil {
			t.Fatal(err)
		}
	}
	collect := func(ch <-chan string) []string {
		var out []string
		for s := range ch {
			out = append(out, s)
		}
		sort.Strings(out)
		return out
	}
	var names []string
	for info := range js.StreamsInfo() {
		names = append(names, info.Config.Name)
	}
	sort.Strings(names)
	if fmt.Sprint(names) != "[L1 L2]" {
		t.Errorf("StreamsInfo: %v", names)
	}
	if got := collect(js.StreamNames(nats.StreamListFilter("l2.x"))); fmt.Sprint(got) != "[L2]" {
		t.Errorf("StreamNames filtered: %v", got)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var cons []string
	for info := range js.ConsumersInfo("L1", nats.Context(ctx)) {
		cons = append(cons, info.Name+"@"+info.Stream)
	}
	sort.Strings(cons)
	if fmt.Sprint(cons) != "[a@L1 b@L1]" {
		t.Errorf("ConsumersInfo: %v", cons)
	}
	if got := collect(js.ConsumerNames("L1", nats.MaxWait(5*time.Second))); fmt.Sprint(got) != "[a b]" {
		t.Errorf("ConsumerNames: %v", got)
	}
	if name, err := js.StreamNameBySubject("l2.y"); err != nil || name != "L2" {
		t.Errorf("StreamNameBySubject: %q %v", name, err)
	}
	info, err := js.UpdateConsumer("L1", &nats.ConsumerConfig{Durable: "a", AckPolicy: nats.AckExplicitPolicy, Description: "updated"})
	if err != nil || info.Config.Description != "updated" {
		t.Errorf("UpdateConsumer: %+v %v", info, err)
	}
}

// APIPrefix sends the API requests under the prefix given.
func TestFacadeLegacyAPIPrefix(t *testing.T) {
	s, nc, _ := legacyJS(t, "AP", []string{"ap"})
	spy, err := nats.Connect(s.url)
	if err != nil {
		t.Fatal(err)
	}
	defer spy.Close()
	seen, err := spy.SubscribeSync("imported.>")
	if err != nil {
		t.Fatal(err)
	}
	spy.Flush()
	js, err := nc.JetStream(nats.APIPrefix("imported.API."), nats.MaxWait(300*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	js.StreamInfo("AP") // no one answers under that prefix
	m, err := seen.NextMsg(5 * time.Second)
	if err != nil || m.Subject != "imported.API.STREAM.INFO.AP" {
		t.Fatalf("request: %v %v", m, err)
	}
}

// The subscription options of nats.go's examples reach the consumer they
// create; SkipConsumerLookup creates without reading the consumer first;
// AckWait serves as a subscription, publish and ack option.
func TestFacadeLegacySubscriptionOptions(t *testing.T) {
	s, nc, js := legacyJS(t, "SO", []string{"so.>"})
	start := time.Now().Add(-time.Hour).UTC().Truncate(time.Second)
	sub, err := js.SubscribeSync("so.a", nats.Durable("opts"), nats.AckWait(7*time.Second),
		nats.ConsumerMemoryStorage(), nats.ConsumerReplicas(1), nats.RateLimit(1<<20),
		nats.ReplayOriginal(), nats.StartTime(start))
	if err != nil {
		t.Fatal(err)
	}
	info, err := sub.ConsumerInfo()
	if err != nil {
		t.Fatal(err)
	}
	c := info.Config
	if c.AckWait != 7*time.Second || !c.MemoryStorage || c.Replicas != 1 ||
		c.RateLimit != 1<<20 || c.ReplayPolicy != nats.ReplayOriginalPolicy || c.DeliverPolicy != nats.DeliverByStartTimePolicy ||
		c.OptStartTime == nil || !c.OptStartTime.Equal(start) || c.MaxAckPending != nats.DefaultMaxChanLen {
		t.Errorf("consumer config: %+v", c)
	}
	sub.Unsubscribe()
	if _, err := js.SubscribeSync("so.a", nats.ConsumerReplicas(0)); err == nil {
		t.Error("ConsumerReplicas(0) accepted")
	}

	pull, err := js.PullSubscribe("", "multi", nats.BindStream("SO"), nats.ConsumerFilterSubjects("so.a", "so.b"), nats.PullMaxWaiting(7),
		nats.BackOff([]time.Duration{time.Second, 2 * time.Second}), nats.MaxDeliver(3))
	if err != nil {
		t.Fatal(err)
	}
	if info, err := pull.ConsumerInfo(); err != nil || fmt.Sprint(info.Config.FilterSubjects) != "[so.a so.b]" || info.Config.MaxWaiting != 7 ||
		fmt.Sprint(info.Config.BackOff) != "[1s 2s]" {
		t.Errorf("filter subjects: %+v %v", info, err)
	}

	// SkipConsumerLookup: no CONSUMER.INFO request.
	spy, err := nats.Connect(s.url)
	if err != nil {
		t.Fatal(err)
	}
	defer spy.Close()
	lookups, err := spy.SubscribeSync("$JS.API.CONSUMER.INFO.>")
	if err != nil {
		t.Fatal(err)
	}
	spy.Flush()
	skip, err := js.PullSubscribe("so.b", "skipper", nats.SkipConsumerLookup())
	if err != nil {
		t.Fatal(err)
	}
	spy.Flush()
	nc.Flush()
	if m, err := lookups.NextMsg(200 * time.Millisecond); err == nil {
		t.Errorf("SkipConsumerLookup read the consumer: %s", m.Subject)
	}
	if info, err := skip.ConsumerInfo(); err != nil || info.Name != "skipper" {
		t.Errorf("skipper: %v", err)
	}

	ack, err := js.Publish("so.a", []byte("x"), nats.AckWait(2*time.Second))
	if err != nil || ack.Stream != "SO" {
		t.Fatalf("publish with AckWait: %+v %v", ack, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := js.Publish("so.a", nil, nats.AckWait(time.Second), nats.Context(ctx)); err != nats.ErrContextAndTimeout {
		t.Errorf("AckWait with a context: %v", err)
	}
	reader, err := js.SubscribeSync("so.a", nats.DeliverLast())
	if err != nil {
		t.Fatal(err)
	}
	m, err := reader.NextMsg(5 * time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.InProgress(nats.AckWait(time.Second)); err != nil {
		t.Error(err)
	}
	if err := m.AckSync(nats.AckWait(time.Second), nats.Context(ctx)); err != nats.ErrContextAndTimeout {
		t.Errorf("AckSync with AckWait and a context: %v", err)
	}
	if err := m.AckSync(nats.AckWait(2 * time.Second)); err != nil {
		t.Errorf("AckSync with AckWait: %v", err)
	}
}

// StatusChanged reports a lost connection, the reconnect and the close;
// RemoveStatusListener closes the channel.
func TestFacadeStatusChanged(t *testing.T) {
	s := startTestServer(t)
	nc, err := nats.Connect(s.url, nats.ReconnectWait(50*time.Millisecond), nats.MaxReconnects(-1))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	all := nc.StatusChanged()
	closedOnly := nc.StatusChanged(nats.CLOSED)
	next := func(ch chan nats.Status) nats.Status {
		t.Helper()
		select {
		case st := <-ch:
			return st
		case <-time.After(20 * time.Second):
			t.Fatal("no status change")
		}
		return 0
	}
	s.stop()
	if st := next(all); st != nats.RECONNECTING {
		t.Errorf("after the server stopped: %v", st)
	}
	s.restart(t)
	if st := next(all); st != nats.CONNECTED {
		t.Errorf("after the server came back: %v", st)
	}
	nc.Close()
	if st := next(all); st != nats.CLOSED {
		t.Errorf("after Close: %v", st)
	}
	if st := next(closedOnly); st != nats.CLOSED {
		t.Errorf("the CLOSED listener got %v", st)
	}
	nc.RemoveStatusListener(all)
	if _, open := <-all; open {
		t.Error("RemoveStatusListener left the channel open")
	}
}

// Barrier runs f once the callback subscriptions have handled what they
// had received; at once when there is none (a channel subscription does
// not count, as in nats.go); ErrConnectionClosed after Close.
func TestFacadeBarrier(t *testing.T) {
	nc, err := nats.Connect(shared.url)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	ran := false
	ch := make(chan *nats.Msg, 8)
	if _, err := nc.ChanSubscribe("barrier.chan", ch); err != nil {
		t.Fatal(err)
	}
	nc.Publish("barrier.chan", nil)
	nc.Flush()
	if err := nc.Barrier(func() { ran = true }); err != nil || !ran {
		t.Fatalf("no callback subscription: ran %v, %v", ran, err)
	}

	gate := make(chan struct{})
	var openGate sync.Once
	defer openGate.Do(func() { close(gate) }) // on a failure too: Close waits for the handler
	entered := make(chan struct{}, 1)
	var handled atomic.Int32
	cbSub, err := nc.Subscribe("barrier.cb", func(*nats.Msg) {
		select {
		case entered <- struct{}{}:
		default:
		}
		<-gate
		handled.Add(1)
	})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		nc.Publish("barrier.cb", nil)
	}
	nc.Flush()
	<-entered
	eventually(t, "the other two messages", func() bool {
		// Received: handed to the handler's batch or still queued.
		pending, _, _ := cbSub.Pending()
		delivered, _ := cbSub.Delivered()
		return int64(pending)+delivered == 3
	})
	atBarrier := make(chan int32, 1)
	if err := nc.Barrier(func() { atBarrier <- handled.Load() }); err != nil {
		t.Fatal(err)
	}
	openGate.Do(func() { close(gate) })
	select {
	case n := <-atBarrier:
		if n != 3 {
			t.Errorf("f ran after %d of the 3 messages received before it", n)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("f never ran")
	}
	nc.Close()
	if err := nc.Barrier(func() {}); err != nats.ErrConnectionClosed {
		t.Errorf("after Close: %v", err)
	}
}

// SetCustomDialer is refused at Connect: the library dials itself.
func TestFacadeCustomDialerIsRefused(t *testing.T) {
	nc, err := nats.Connect(shared.url, nats.SetCustomDialer(nil))
	if err != nil {
		t.Fatalf("a nil dialer: %v", err)
	}
	nc.Close()
	_, err = nats.Connect(shared.url, nats.SetCustomDialer(refusingDialer{}))
	if !errors.Is(err, nats.ErrInvalidArg) {
		t.Errorf("a custom dialer: %v, want nats.ErrInvalidArg", err)
	}
}

type refusingDialer struct{}

func (refusingDialer) Dial(network, address string) (net.Conn, error) {
	return nil, errors.New("not used")
}

// Barrier waits for the legacy JetStream callback subscriptions too, as
// nats.go's (they are callback subscriptions there).
func TestFacadeBarrierCountsLegacyJetStreamSubscriptions(t *testing.T) {
	_, nc, js := legacyJS(t, "BAR", []string{"bar"})
	gate := make(chan struct{})
	var openGate sync.Once
	defer openGate.Do(func() { close(gate) })
	var handled atomic.Int32
	sub, err := js.Subscribe("bar", func(*nats.Msg) {
		<-gate
		handled.Add(1)
	})
	if err != nil {
		t.Fatal(err)
	}
	publishN(t, js, "bar", 1, 3)
	eventually(t, "the three messages received", func() bool {
		pending, _, _ := sub.Pending()
		delivered, _ := sub.Delivered()
		return int64(pending)+delivered == 3
	})
	atBarrier := make(chan int32, 1)
	if err := nc.Barrier(func() { atBarrier <- handled.Load() }); err != nil {
		t.Fatal(err)
	}
	openGate.Do(func() { close(gate) })
	select {
	case n := <-atBarrier:
		if n != 3 {
			t.Errorf("f ran after %d of the 3 messages received before it", n)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("f never ran")
	}
}

// RetryAttempts and RetryWait are nats.go's: a publish to no stream is
// sent 1 + RetryAttempts times (0: once; by default Publish retries
// DefaultPubRetryAttempts times, PublishAsync none), counted with the
// connection's OutMsgs. A negative count retries Publish until its
// AckWait ends and is refused by PublishAsync; a wait <= 0 is taken
// (nats.go: at once).
func TestFacadeLegacyPublishRetryOptions(t *testing.T) {
	_, nc, js := legacyJS(t, "R", []string{"r"})
	short := nats.RetryWait(time.Millisecond)
	for _, c := range []struct {
		opts              []nats.PubOpt
		sends, asyncSends uint64
	}{
		{[]nats.PubOpt{nats.RetryAttempts(0), short}, 1, 1},
		{[]nats.PubOpt{nats.RetryAttempts(1), short}, 2, 2},
		{[]nats.PubOpt{nats.RetryAttempts(4), short}, 5, 5},
		{[]nats.PubOpt{nats.RetryAttempts(3), nats.RetryWait(0)}, 4, 4},
		{[]nats.PubOpt{nats.RetryAttempts(2), nats.RetryWait(-time.Second)}, 3, 3},
		{[]nats.PubOpt{nats.RetryAttempts(3)}, 4, 4}, // async: at once
		{nil, 1 + nats.DefaultPubRetryAttempts, 1},
	} {
		if n := sentBy(nc.Binding(), func() {
			if _, err := js.Publish("nostream", nil, c.opts...); !errors.Is(err, nats.ErrNoStreamResponse) {
				t.Errorf("Publish: %v", err)
			}
		}); n != c.sends {
			t.Errorf("Publish sent %d messages, want %d", n, c.sends)
		}
		if n := sentBy(nc.Binding(), func() {
			f, err := js.PublishAsync("nostream", nil, c.opts...)
			if err != nil {
				t.Fatal(err)
			}
			select {
			case err := <-f.Err():
				if !errors.Is(err, nats.ErrNoResponders) { // nats.go's async error
					t.Errorf("PublishAsync: %v", err)
				}
			case ack := <-f.Ok():
				t.Errorf("acked without a stream: %+v", ack)
			}
		}); n != c.asyncSends {
			t.Errorf("PublishAsync sent %d messages, want %d", n, c.asyncSends)
		}
	}
	// Forever, until the AckWait: more than the default's sends.
	if n := sentBy(nc.Binding(), func() {
		_, err := js.Publish("nostream", nil, nats.RetryAttempts(-1), short, nats.AckWait(300*time.Millisecond))
		if err == nil {
			t.Error("acked without a stream")
		}
	}); n <= 1+nats.DefaultPubRetryAttempts {
		t.Errorf("RetryAttempts(-1) sent %d messages", n)
	}
	if n := sentBy(nc.Binding(), func() {
		if _, err := js.PublishAsync("nostream", nil, nats.RetryAttempts(-1)); !errors.Is(err, nats.ErrInvalidArg) {
			t.Errorf("PublishAsync with a negative count: %v", err)
		}
	}); n != 0 {
		t.Errorf("a refused PublishAsync sent %d messages", n)
	}
}
