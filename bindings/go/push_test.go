package natsio_test

import (
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
