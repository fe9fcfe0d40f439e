package natsio_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	natsio "github.com/libnatsio/natsio/bindings/go"
)

// PushConsume reads a push consumer (created with a deliver subject and a
// deliver group in Extra) in order with its metadata, acks go through,
// Stop ends Next with ErrDone, and a pull consumer or a missing one is
// refused.
func TestPushConsume(t *testing.T) {
	nc, js := jetStream(t)
	ctx := ctxTimeout(t, 20*time.Second)
	got(js.CreateStream(ctx, natsio.StreamConfig{Name: "PS", Subjects: []string{"ps.>"}})).must(t)
	for i := 0; i < 3; i++ {
		got(js.Publish(ctx, "ps.a", []byte(fmt.Sprint("p", i)))).must(t)
	}
	inbox := got(nc.NewInbox()).must(t)
	got(js.CreateConsumer(ctx, "PS", natsio.ConsumerConfig{Durable: "push",
		Extra: map[string]any{"deliver_subject": inbox, "deliver_group": "g", "idle_heartbeat": "1s"}})).must(t)
	c := got(js.PushConsume(ctx, "PS", "push")).must(t)
	for i := 0; i < 3; i++ {
		m := got(c.Next(ctx)).must(t)
		md := got(m.Metadata()).must(t)
		if string(m.Data) != fmt.Sprint("p", i) || md.Sequence.Stream != uint64(i+1) || md.Consumer != "push" {
			t.Fatalf("message %d: %q %+v", i, m.Data, md)
		}
		if err := m.AckSync(ctx); err != nil {
			t.Fatal(err)
		}
	}
	info := got(js.ConsumerInfo(ctx, "PS", "push")).must(t)
	if info.AckFloor.Stream != 3 || info.NumAckPending != 0 {
		t.Fatalf("after acks: %+v", info)
	}
	c.Stop()
	_, err := c.Next(ctx)
	wantErr(t, err, natsio.ErrDone)

	got(js.CreateConsumer(ctx, "PS", natsio.ConsumerConfig{Durable: "pull"})).must(t)
	_, err = js.PushConsume(ctx, "PS", "pull")
	wantErr(t, err, natsio.ErrInvalidArgument, "not a push consumer")
	_, err = js.PushConsume(ctx, "PS", "missing")
	wantErr(t, err, natsio.ErrConsumerNotFound)
}

// drainReading drains c while this goroutine reads it with Next, acking
// each message, until ErrDone; it returns how many were read.
func drainReading(t *testing.T, ctx context.Context, c *natsio.Consumption) int {
	t.Helper()
	drained := make(chan error, 1)
	go func() { drained <- c.Drain(ctx) }()
	read := 0
	for {
		m, err := c.Next(ctx)
		if errors.Is(err, natsio.ErrDone) {
			break
		}
		if err != nil {
			t.Fatalf("Next while draining, after %d: %v", read, err)
		}
		if err := m.Ack(); err != nil {
			t.Fatal(err)
		}
		read++
	}
	if err := <-drained; err != nil {
		t.Fatalf("Drain: %v", err)
	}
	return read
}

// Drain, unlike Stop, hands out what the server already sent: a push
// consumption's whole backlog and a pull consumption's pulled messages
// are read before ErrDone, acked, none redelivered; what is published
// afterwards (push) or was never pulled stays at the server.
func TestConsumptionDrain(t *testing.T) {
	nc, js := jetStream(t)
	ctx := ctxTimeout(t, 30*time.Second)
	got(js.CreateStream(ctx, natsio.StreamConfig{Name: "PD", Subjects: []string{"pd.>"}})).must(t)
	const n = 30
	for i := 0; i < n; i++ {
		got(js.Publish(ctx, "pd.push", []byte(fmt.Sprint("m", i)))).must(t)
	}
	info := func(name string) *natsio.ConsumerInfo {
		return got(js.ConsumerInfo(ctx, "PD", name)).must(t)
	}

	inbox := got(nc.NewInbox()).must(t)
	got(js.CreateConsumer(ctx, "PD", natsio.ConsumerConfig{Durable: "push", FilterSubject: "pd.push",
		AckWait: 30 * time.Second, Extra: map[string]any{"deliver_subject": inbox}})).must(t)
	push := got(js.PushConsume(ctx, "PD", "push")).must(t)
	// All of it sent before the drain (none acked yet).
	eventually(t, "the push deliveries", func() bool { return info("push").NumAckPending == n })
	if read := drainReading(t, ctx, push); read != n {
		t.Fatalf("push drain read %d of %d", read, n)
	}
	eventually(t, "the push acks", func() bool { return info("push").NumAckPending == 0 })
	if ci := info("push"); ci.NumRedelivered != 0 {
		t.Fatalf("push after the drain: %+v", ci)
	}
	got(js.Publish(ctx, "pd.push", []byte("late"))).must(t)
	eventually(t, "the late message held", func() bool { return info("push").NumPending == 1 })
	_, err := push.Next(ctx)
	wantErr(t, err, natsio.ErrDone)

	// Large messages: the drain comes while the server still sends the
	// first pull's batch, so that request is open then. How much was read
	// is not bounded by the window: the consumption may have pulled again
	// before the drain began (a run on a busy machine read 101), and the
	// drain ends that request too.
	const pulls, window = 300, 100
	pad := bytes.Repeat([]byte("x"), 16*1024)
	for i := 0; i < pulls; i++ {
		got(js.Publish(ctx, "pd.pull", pad)).must(t)
	}
	got(js.CreateConsumer(ctx, "PD", natsio.ConsumerConfig{Durable: "pull", FilterSubject: "pd.pull",
		AckWait: 30 * time.Second})).must(t)
	pull := got(js.Consume(ctx, "PD", "pull", natsio.ConsumeMaxMessages(window))).must(t)
	first := got(pull.Next(ctx)).must(t)
	noErr(t, first.Ack())
	noErr(t, pull.StartDrain())
	read := 1 + drainReading(t, ctx, pull)
	// Everything the server delivered was read and acked, none redelivered:
	// the drain ended its open pull requests before withdrawing their inbox,
	// so nothing was sent to it after (that would stay pending until AckWait).
	eventually(t, "the pull acks", func() bool { return info("pull").NumAckPending == 0 })
	ci := info("pull")
	if ci.Delivered.Consumer != uint64(read) || ci.NumRedelivered != 0 || ci.NumPending != uint64(pulls-read) {
		t.Fatalf("pull drain read %d: %+v", read, ci)
	}

	// Stopped first: nothing to drain.
	stopped := got(js.Consume(ctx, "PD", "pull")).must(t)
	stopped.Stop()
	wantErr(t, stopped.Drain(ctx), natsio.ErrSubscriptionClosed)
}
