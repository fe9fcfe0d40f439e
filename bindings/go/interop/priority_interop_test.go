package interop

// The prioritized priority policy, the flow_control ack policy and ordered
// consumer metadata across the facades and nats.go: a nats.go fetch with
// FetchPrioritized and a facade one compete on one prioritized consumer
// (the lower number gets the message, whichever waits first); a facade
// ordered consumer's metadata is what nats.go reads back, and the other
// way round; AckFlowControlPolicy is the same value on both sides.

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	facadenats "github.com/libnatsio/natsio/bindings/go/nats"
	facade "github.com/libnatsio/natsio/bindings/go/nats/jetstream"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// bothJetStreams connects nats.go's jetstream and the facade's to one
// server.
func bothJetStreams(t *testing.T) (jetstream.JetStream, facade.JetStream) {
	t.Helper()
	url := startServer(t)
	nc, err := nats.Connect(url)
	noErr(t, err)
	t.Cleanup(nc.Close)
	fc, err := facadenats.Connect(url)
	noErr(t, err)
	t.Cleanup(fc.Close)
	return got(jetstream.New(nc)).must(t), got(facade.New(fc)).must(t)
}

// oneMessage reads the one message of a batch (nats.go's or the
// facade's: both have Messages and Error) within 10 s and acks it.
func oneMessage[M interface {
	Data() []byte
	Ack() error
}](t *testing.T, what string, msgs <-chan M, batchErr func() error) string {
	t.Helper()
	select {
	case m, ok := <-msgs:
		if !ok {
			t.Fatalf("%s: no message (%v)", what, batchErr())
		}
		noErr(t, m.Ack())
		return string(m.Data())
	case <-time.After(10 * time.Second):
		t.Fatalf("%s: no message within 10 s", what)
	}
	return ""
}

func TestPrioritizedFetchInterop(t *testing.T) {
	js, fjs := bothJetStreams(t)
	ctx := ctxFor(t)
	got(js.CreateStream(ctx, jetstream.StreamConfig{Name: "PRI", Subjects: []string{"pri"}})).must(t)
	theirs := got(js.CreateConsumer(ctx, "PRI", jetstream.ConsumerConfig{Durable: "prio",
		PriorityPolicy: jetstream.PriorityPolicyPrioritized, PriorityGroups: []string{"P"}})).must(t)
	ours := got(fjs.Consumer(ctx, "PRI", "prio")).must(t)
	waiting := func(want int) {
		t.Helper()
		waitFor(t, func() bool {
			info, err := theirs.Info(ctx)
			return err == nil && info.NumWaiting == want
		})
	}
	natsgoAt := func(p uint8) jetstream.MessageBatch {
		return got(theirs.Fetch(1, jetstream.FetchPriorityGroup("P"), jetstream.FetchPrioritized(p),
			jetstream.FetchMaxWait(20*time.Second))).must(t)
	}
	facadeAt := func(p uint8) facade.MessageBatch {
		return got(ours.Fetch(1, facade.FetchPriorityGroup("P"), facade.FetchPrioritized(p),
			facade.FetchMaxWait(20*time.Second))).must(t)
	}
	publish := func(data string) { got(js.Publish(ctx, "pri", []byte(data))).must(t) }

	// nats.go waits first at 5, the facade after it at 1: the facade wins.
	n := natsgoAt(5)
	waiting(1)
	f := facadeAt(1)
	waiting(2)
	publish("a")
	if s := oneMessage(t, "facade at 1", f.Messages(), f.Error); s != "a" {
		t.Fatalf("facade at 1 got %q", s)
	}
	publish("b")
	if s := oneMessage(t, "nats.go at 5", n.Messages(), n.Error); s != "b" {
		t.Fatalf("nats.go at 5 got %q", s)
	}

	// The facade waits first at 5, nats.go after it at 1: nats.go wins.
	f = facadeAt(5)
	waiting(1)
	n = natsgoAt(1)
	waiting(2)
	publish("c")
	if s := oneMessage(t, "nats.go at 1", n.Messages(), n.Error); s != "c" {
		t.Fatalf("nats.go at 1 got %q", s)
	}
	publish("d")
	if s := oneMessage(t, "facade at 5", f.Messages(), f.Error); s != "d" {
		t.Fatalf("facade at 5 got %q", s)
	}
}

func TestOrderedConsumerMetadataInterop(t *testing.T) {
	js, fjs := bothJetStreams(t)
	ctx := ctxFor(t)
	got(js.CreateStream(ctx, jetstream.StreamConfig{Name: "OMD", Subjects: []string{"omd"}})).must(t)
	metadataOf := func(what string, md map[string]string, want string) {
		t.Helper()
		if md["by"] != want {
			t.Fatalf("%s: metadata %v, want by=%s", what, md, want)
		}
	}

	// The facade's ordered consumer; nats.go reads its consumer.
	foc := got(fjs.OrderedConsumer(ctx, "OMD", facade.OrderedConsumerConfig{Metadata: map[string]string{"by": "facade"}})).must(t)
	name := got(foc.Info(ctx)).must(t).Name
	theirs := got(js.Consumer(ctx, "OMD", name)).must(t)
	metadataOf("nats.go reading the facade's", theirs.CachedInfo().Config.Metadata, "facade")

	// nats.go's ordered consumer; the facade reads its consumer.
	noc := got(js.OrderedConsumer(ctx, "OMD", jetstream.OrderedConsumerConfig{Metadata: map[string]string{"by": "nats.go"}})).must(t)
	b := got(noc.Fetch(1, jetstream.FetchMaxWait(time.Second))).must(t) // nats.go creates its consumer on first use
	for range b.Messages() {
	}
	name = noc.CachedInfo().Name
	ours := got(fjs.Consumer(ctx, "OMD", name)).must(t)
	metadataOf("the facade reading nats.go's", ours.CachedInfo().Config.Metadata, "nats.go")
}

// AckFlowControlPolicy is the same value, JSON and text on both sides, in
// the legacy and jetstream packages; a consumer the facade creates with
// it is one nats.go reads back with it.
func TestAckFlowControlPolicyInterop(t *testing.T) {
	same := func(what string, a, b interface {
		json.Marshaler
		fmt.Stringer
	}) {
		t.Helper()
		ja, errA := a.MarshalJSON()
		jb, errB := b.MarshalJSON()
		if errA != nil || errB != nil || string(ja) != string(jb) || a.String() != b.String() || fmt.Sprint(a) != fmt.Sprint(b) {
			t.Errorf("%s: nats.go %s %q (%v), facade %s %q (%v)", what, ja, a, errA, jb, b, errB)
		}
	}
	same("nats", nats.AckFlowControlPolicy, facadenats.AckFlowControlPolicy)
	same("jetstream", jetstream.AckFlowControlPolicy, facade.AckFlowControlPolicy)
	if int(nats.AckFlowControlPolicy) != int(facadenats.AckFlowControlPolicy) {
		t.Errorf("nats values: %d, %d", nats.AckFlowControlPolicy, facadenats.AckFlowControlPolicy)
	}

	js, fjs := bothJetStreams(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	got(fjs.CreateStream(ctx, facade.StreamConfig{Name: "AFC", Subjects: []string{"afc"}})).must(t)
	got(fjs.CreatePushConsumer(ctx, "AFC", facade.ConsumerConfig{Durable: "fc", AckPolicy: facade.AckFlowControlPolicy,
		DeliverSubject: "afc_deliver", FlowControl: true, IdleHeartbeat: time.Second, MaxAckPending: 100})).must(t)
	info := got(got(js.PushConsumer(ctx, "AFC", "fc")).must(t).Info(ctx)).must(t)
	if info.Config.AckPolicy != jetstream.AckFlowControlPolicy {
		t.Errorf("nats.go reads back %v", info.Config.AckPolicy)
	}
}
