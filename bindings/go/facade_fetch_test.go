package natsio_test

import (
	"context"
	"testing"
	"time"

	"github.com/libnatsio/natsio/bindings/go/nats"
	"github.com/libnatsio/natsio/bindings/go/nats/jetstream"
)

// The jetstream facade's Fetch returns its MessageBatch at once and hands
// each message out on Messages as it arrives, as nats.go's does: a message
// comes while the batch is still open (Messages not closed), and the
// channel closes at the expiry with a nil Error. FetchNoWait and
// FetchBytes end as nats.go's.
func TestFacadeFetchHandsOutEachMessageAsItArrives(t *testing.T) {
	s := startTestServer(t, "-js", "-sd", t.TempDir())
	nc, err := nats.Connect(s.url)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	stream, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "FF", Subjects: []string{"ff.>"}, Storage: jetstream.MemoryStorage})
	if err != nil {
		t.Fatal(err)
	}
	cons, err := stream.CreateOrUpdateConsumer(ctx, jetstream.ConsumerConfig{Durable: "c", AckPolicy: jetstream.AckExplicitPolicy})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := js.Publish(ctx, "ff.a", []byte("first")); err != nil {
		t.Fatal(err)
	}
	batch, err := cons.Fetch(10, jetstream.FetchMaxWait(2*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	next := func(what string) (jetstream.Msg, bool) {
		t.Helper()
		select {
		case m, ok := <-batch.Messages():
			return m, ok
		case <-ctx.Done():
			t.Fatalf("%s: nothing on Messages", what)
		}
		return nil, false
	}
	m, ok := next("first message")
	if !ok || string(m.Data()) != "first" {
		t.Fatalf("first: %v %v", m, ok)
	}
	if err := m.Ack(); err != nil {
		t.Fatal(err)
	}
	// Still open: a message published now comes through the same batch.
	if _, err := js.Publish(ctx, "ff.a", []byte("second")); err != nil {
		t.Fatal(err)
	}
	if m, ok = next("second message"); !ok || string(m.Data()) != "second" {
		t.Fatalf("second: %v %v", m, ok)
	}
	if err := m.Ack(); err != nil {
		t.Fatal(err)
	}
	if _, ok = next("the end"); ok || batch.Error() != nil {
		t.Fatalf("after the expiry: open %v, Error %v", ok, batch.Error())
	}

	// FetchNoWait: what is there, then the end at once.
	if _, err := js.Publish(ctx, "ff.a", []byte("third")); err != nil {
		t.Fatal(err)
	}
	for {
		info, err := cons.Info(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if info.NumPending == 1 {
			break
		}
	}
	if batch, err = cons.FetchNoWait(10); err != nil {
		t.Fatal(err)
	}
	var got []string
	for m := range batch.Messages() {
		got = append(got, string(m.Data()))
		_ = m.Ack()
	}
	if len(got) != 1 || got[0] != "third" || batch.Error() != nil {
		t.Fatalf("no-wait batch %v, Error %v", got, batch.Error())
	}
}
