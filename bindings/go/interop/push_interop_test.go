package interop

// Push consumers across the two clients: a push consumer nats.go creates
// (deliver subject, flow control, heartbeats) the binding's PushConsume
// reads and acknowledges, and nats.go's ConsumerInfo sees the acks; one
// the binding creates nats.go's PushConsumer reads, and the binding sees
// its acks.

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	natsio "github.com/libnatsio/natsio/bindings/go"
)

func TestPushConsumerInterop(t *testing.T) {
	js, njs := clients(t)
	ctx := ctxFor(t)
	got(js.CreateStream(ctx, jetstream.StreamConfig{Name: "PUSH", Subjects: []string{"push.>"}})).must(t)
	for i := 0; i < 5; i++ {
		got(js.Publish(ctx, "push.a", []byte(fmt.Sprint("m", i)))).must(t)
	}

	// Created by nats.go, consumed by the binding.
	got(js.CreatePushConsumer(ctx, "PUSH", jetstream.ConsumerConfig{
		Durable: "by_natsgo", DeliverSubject: nats.NewInbox(), AckPolicy: jetstream.AckExplicitPolicy,
		FlowControl: true, IdleHeartbeat: time.Second,
	})).must(t)
	c := got(njs.PushConsume(ctx, "PUSH", "by_natsgo")).must(t)
	for i := 0; i < 5; i++ {
		m := got(c.Next(ctx)).must(t)
		if want := fmt.Sprint("m", i); string(m.Data) != want {
			t.Fatalf("natsio read %q, want %q", m.Data, want)
		}
		noErr(t, m.AckSync(ctx))
	}
	c.Stop()
	byNatsGo := got(js.PushConsumer(ctx, "PUSH", "by_natsgo")).must(t)
	waitFor(t, func() bool {
		ci, err := byNatsGo.Info(ctx)
		return err == nil && ci.AckFloor.Stream == 5 && ci.NumAckPending == 0
	})

	// Created by the binding, consumed by nats.go.
	got(njs.CreateConsumer(ctx, "PUSH", natsio.ConsumerConfig{Durable: "by_natsio",
		Extra: map[string]any{"deliver_subject": nats.NewInbox()}})).must(t)
	pc := got(js.PushConsumer(ctx, "PUSH", "by_natsio")).must(t)
	seen := make(chan string, 5)
	cc := got(pc.Consume(func(m jetstream.Msg) {
		_ = m.Ack()
		seen <- string(m.Data())
	})).must(t)
	for i := 0; i < 5; i++ {
		select {
		case s := <-seen:
			if want := fmt.Sprint("m", i); s != want {
				t.Fatalf("nats.go read %q, want %q", s, want)
			}
		case <-ctx.Done():
			t.Fatal("nats.go read nothing")
		}
	}
	cc.Stop()
	waitFor(t, func() bool {
		ci, err := njs.ConsumerInfo(ctx, "PUSH", "by_natsio")
		return err == nil && ci.AckFloor.Stream == 5 && ci.NumAckPending == 0
	})
}

// waitFor polls cond (acks are asynchronous) for up to 10 s.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for !cond() {
		select {
		case <-ctx.Done():
			t.Fatal("condition not met within 10 s")
		case <-time.After(50 * time.Millisecond):
		}
	}
}
