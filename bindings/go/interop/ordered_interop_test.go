package interop

// The ordered consumer across the two clients: what nats.go publishes
// (payloads and headers, on several subjects) the binding's
// OrderedConsumer reads in stream order, whole or filtered, and what the
// binding publishes nats.go's OrderedConsumer reads the same.

import (
	"fmt"
	"slices"
	"testing"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	natsio "github.com/libnatsio/natsio/bindings/go"
)

func TestOrderedConsumerInterop(t *testing.T) {
	js, njs := clients(t)
	ctx := ctxFor(t)
	got(js.CreateStream(ctx, jetstream.StreamConfig{Name: "OI", Subjects: []string{"oi.>"}})).must(t)
	for i := range 6 {
		m := nats.NewMsg(fmt.Sprintf("oi.%d", i%3))
		m.Data = []byte(fmt.Sprintf("n%d", i))
		m.Header.Set("Idx", fmt.Sprint(i))
		got(js.PublishMsg(ctx, m)).must(t)
	}

	oc := got(njs.OrderedConsumer(ctx, "OI", natsio.OrderedConsumerConfig{})).must(t)
	msgs := got(oc.Messages(ctx, natsio.PullUntilDrained())).must(t)
	i := 0
	for m, err := range msgs.Msgs(ctx) {
		noErr(t, err)
		md := got(m.Metadata()).must(t)
		if string(m.Data) != fmt.Sprintf("n%d", i) || m.Header.Get("Idx") != fmt.Sprint(i) ||
			m.Subject != fmt.Sprintf("oi.%d", i%3) || md.Sequence.Stream != uint64(i+1) {
			t.Fatalf("message %d: %s %q %v seq %d", i, m.Subject, m.Data, m.Header, md.Sequence.Stream)
		}
		i++
	}
	if i != 6 {
		t.Fatalf("read %d of 6", i)
	}
	noErr(t, oc.Stop(ctx))

	filtered := got(njs.OrderedConsumer(ctx, "OI", natsio.OrderedConsumerConfig{FilterSubjects: []string{"oi.1"}})).must(t)
	fm := got(filtered.Messages(ctx, natsio.PullUntilDrained())).must(t)
	var seqs []uint64
	for m, err := range fm.Msgs(ctx) {
		noErr(t, err)
		seqs = append(seqs, got(m.Metadata()).must(t).Sequence.Stream)
	}
	if !slices.Equal(seqs, []uint64{2, 5}) {
		t.Fatalf("filtered: %v", seqs)
	}
	noErr(t, filtered.Stop(ctx))

	// The binding publishes; nats.go's ordered consumer reads it after.
	for i := 6; i < 9; i++ {
		got(njs.Publish(ctx, "oi.2", []byte(fmt.Sprintf("n%d", i)))).must(t)
	}
	noc := got(js.OrderedConsumer(ctx, "OI", jetstream.OrderedConsumerConfig{
		DeliverPolicy: jetstream.DeliverByStartSequencePolicy, OptStartSeq: 7,
	})).must(t)
	batch := got(noc.Fetch(3)).must(t)
	var bodies []string
	for m := range batch.Messages() {
		bodies = append(bodies, string(m.Data()))
	}
	noErr(t, batch.Error())
	if !slices.Equal(bodies, []string{"n6", "n7", "n8"}) {
		t.Fatalf("nats.go read %v", bodies)
	}
}
