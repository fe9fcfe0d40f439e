package natsio_test

// The jetstream facade's pull, publish and stream-info options and its
// error sentinels, against nats-server.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/libnatsio/natsio/bindings/go/nats"
	"github.com/libnatsio/natsio/bindings/go/nats/jetstream"
)

// The facade's JetStream is nats.go's managers and publisher, and its
// streams nats.go's ConsumerManager.
var (
	_ jetstream.StreamManager         = jetstream.JetStream(nil)
	_ jetstream.StreamConsumerManager = jetstream.JetStream(nil)
	_ jetstream.Publisher             = jetstream.JetStream(nil)
	_ jetstream.ConsumerManager       = jetstream.Stream(nil)
)

// publishN publishes n messages of size bytes to subject.
func publishSized(t *testing.T, ctx context.Context, js jetstream.JetStream, subject string, n, size int) {
	t.Helper()
	for i := 0; i < n; i++ {
		if _, err := js.Publish(ctx, subject, []byte(strings.Repeat("x", size))); err != nil {
			t.Fatal(err)
		}
	}
}

// drainBatch reads a batch to its end: the messages' count and its error.
func drainBatch(t *testing.T, b jetstream.MessageBatch, ack bool) (int, error) {
	t.Helper()
	n := 0
	for m := range b.Messages() {
		n++
		if ack {
			if err := m.Ack(); err != nil {
				t.Fatal(err)
			}
		}
	}
	return n, b.Error()
}

// FetchMaxBytes ends a batch at its byte budget; it is Fetch's only.
// FetchMinPending and FetchMinAckPending (overflow groups) hold the pull
// until the consumer has that many messages pending or awaiting acks.
func TestFacadeFetchByteAndPriorityOptions(t *testing.T) {
	ctx, js := facadeJetStream(t)
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "FO", Subjects: []string{"fo"}}); err != nil {
		t.Fatal(err)
	}
	publishSized(t, ctx, js, "fo", 5, 100)

	plain, err := js.CreateConsumer(ctx, "FO", jetstream.ConsumerConfig{Durable: "plain", AckPolicy: jetstream.AckNonePolicy})
	if err != nil {
		t.Fatal(err)
	}
	b, err := plain.Fetch(5, jetstream.FetchMaxBytes(250), jetstream.FetchMaxWait(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if n, err := drainBatch(t, b, false); n == 0 || n >= 5 || err != nil {
		t.Errorf("FetchMaxBytes(250) of five 100-byte messages: %d messages, %v", n, err)
	}
	if _, err := plain.FetchBytes(1000, jetstream.FetchMaxBytes(10)); !errors.Is(err, jetstream.ErrInvalidOption) {
		t.Errorf("FetchBytes with FetchMaxBytes: %v", err)
	}
	if _, err := plain.Fetch(1, jetstream.FetchMaxBytes(0)); !errors.Is(err, jetstream.ErrInvalidOption) {
		t.Errorf("FetchMaxBytes(0): %v", err)
	}

	over, err := js.CreateConsumer(ctx, "FO", jetstream.ConsumerConfig{
		Durable: "over", AckPolicy: jetstream.AckExplicitPolicy,
		PriorityPolicy: jetstream.PriorityPolicyOverflow, PriorityGroups: []string{"A"},
	})
	if err != nil {
		t.Fatal(err)
	}
	// Five pending: a pull asking for ten pending is not served.
	b, err = over.Fetch(5, jetstream.FetchPriorityGroup("A"), jetstream.FetchMinPending(10), jetstream.FetchMaxWait(500*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	if n, err := drainBatch(t, b, false); n != 0 || err != nil {
		t.Errorf("FetchMinPending(10) with 5 pending: %d messages, %v", n, err)
	}
	// The server serves while at least 4 are pending: two of the five.
	b, err = over.Fetch(5, jetstream.FetchPriorityGroup("A"), jetstream.FetchMinPending(4), jetstream.FetchMaxWait(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if n, err := drainBatch(t, b, false); n != 2 || err != nil {
		t.Errorf("FetchMinPending(4) with 5 pending: %d messages, %v", n, err)
	}
	// Two await their ack now: a pull asking for three is not served, one
	// asking for two is.
	b, err = over.Fetch(1, jetstream.FetchPriorityGroup("A"), jetstream.FetchMinAckPending(3), jetstream.FetchMaxWait(500*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	if n, err := drainBatch(t, b, true); n != 0 || err != nil {
		t.Errorf("FetchMinAckPending(3) with 2 awaiting: %d messages, %v", n, err)
	}
	b, err = over.Fetch(1, jetstream.FetchPriorityGroup("A"), jetstream.FetchMinAckPending(2), jetstream.FetchMaxWait(5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if n, err := drainBatch(t, b, true); n != 1 || err != nil {
		t.Errorf("FetchMinAckPending(2) with 2 awaiting: %d messages, %v", n, err)
	}
	if _, err := over.Fetch(1, jetstream.FetchMinPending(0)); !errors.Is(err, jetstream.ErrInvalidOption) {
		t.Errorf("FetchMinPending(0): %v", err)
	}
}

// A message larger than the byte budget ends a Fetch without an error
// (as nats.go's) and a Consume with ErrMaxBytesExceeded.
func TestFacadeMaxBytesExceeded(t *testing.T) {
	ctx, js := facadeJetStream(t)
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "MB", Subjects: []string{"mb"}}); err != nil {
		t.Fatal(err)
	}
	publishSized(t, ctx, js, "mb", 2, 100)
	c, err := js.CreateConsumer(ctx, "MB", jetstream.ConsumerConfig{Durable: "d"})
	if err != nil {
		t.Fatal(err)
	}
	b, err := c.Fetch(5, jetstream.FetchMaxBytes(50), jetstream.FetchMaxWait(5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if n, err := drainBatch(t, b, false); n != 0 || err != nil {
		t.Errorf("Fetch with FetchMaxBytes below the message: %d messages, %v", n, err)
	}
	if b, err = c.FetchBytes(50, jetstream.FetchMaxWait(5*time.Second)); err != nil {
		t.Fatal(err)
	}
	if n, err := drainBatch(t, b, false); n != 0 || err != nil {
		t.Errorf("FetchBytes below the message: %d messages, %v", n, err)
	}
	errs := make(chan error, 1)
	cc, err := c.Consume(func(jetstream.Msg) {}, jetstream.PullMaxBytes(50),
		jetstream.ConsumeErrHandler(func(_ jetstream.ConsumeContext, err error) { errs <- err }))
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Stop()
	select {
	case err := <-errs:
		if !errors.Is(err, jetstream.ErrMaxBytesExceeded) || err.Error() != "nats: message size exceeds max bytes" {
			t.Errorf("Consume's error: %v", err)
		}
	case <-ctx.Done():
		t.Fatal("Consume reported no error")
	}
}

// FetchContext ends a Fetch with its context's error when cancelled, and
// its deadline bounds the pull request (the batch ends at the expiry,
// well before FetchMaxWait's 30 s default). NextContext does the same for
// MessagesContext.Next.
func TestFacadeFetchAndNextContext(t *testing.T) {
	ctx, js := facadeJetStream(t)
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "FC", Subjects: []string{"fc"}}); err != nil {
		t.Fatal(err)
	}
	c, err := js.CreateConsumer(ctx, "FC", jetstream.ConsumerConfig{Durable: "d"})
	if err != nil {
		t.Fatal(err)
	}
	cancelled, cancel := context.WithCancel(ctx)
	b, err := c.Fetch(10, jetstream.FetchContext(cancelled))
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	if n, err := drainBatch(t, b, false); n != 0 || !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled FetchContext: %d messages, %v", n, err)
	}

	short, cancelShort := context.WithTimeout(ctx, 600*time.Millisecond)
	defer cancelShort()
	start := time.Now()
	b, err = c.Fetch(10, jetstream.FetchContext(short))
	if err != nil {
		t.Fatal(err)
	}
	// The request expires a little before the deadline (nil error); a
	// slow machine may reach the deadline first.
	if n, err := drainBatch(t, b, false); n != 0 || (err != nil && !errors.Is(err, context.DeadlineExceeded)) ||
		time.Since(start) > 5*time.Second {
		t.Errorf("FetchContext with a deadline: %d messages, %v after %v", n, err, time.Since(start))
	}
	if _, err := c.Fetch(1, jetstream.FetchContext(ctx), jetstream.FetchMaxWait(time.Second)); !errors.Is(err, jetstream.ErrInvalidOption) {
		t.Errorf("FetchContext with FetchMaxWait: %v", err)
	}
	if _, err := c.Next(jetstream.FetchContext(cancelled)); !errors.Is(err, context.Canceled) {
		t.Errorf("Next with a cancelled FetchContext: %v", err)
	}

	it, err := c.Messages()
	if err != nil {
		t.Fatal(err)
	}
	defer it.Stop()
	nextCtx, cancelNext := context.WithCancel(ctx)
	// Next waits (nothing is published) until the context ends; whether
	// it is cancelled before or during the wait, Next returns its error.
	time.AfterFunc(100*time.Millisecond, cancelNext)
	if _, err := it.Next(jetstream.NextContext(nextCtx)); !errors.Is(err, context.Canceled) {
		t.Errorf("Next with NextContext: %v", err)
	}
	if _, err := it.Next(jetstream.NextContext(ctx), jetstream.NextMaxWait(time.Second)); !errors.Is(err, jetstream.ErrInvalidOption) {
		t.Errorf("NextContext with NextMaxWait: %v", err)
	}
	if _, err := js.Publish(ctx, "fc", []byte("m")); err != nil {
		t.Fatal(err)
	}
	if m, err := it.Next(jetstream.NextContext(ctx)); err != nil || string(m.Data()) != "m" {
		t.Errorf("Next with NextContext: %v", err)
	}
}

// The priority-group and byte options of Consume and Messages reach the
// pull requests: a consume for group A of an overflow consumer gets every
// message; one whose minimum pending is never reached gets none.
func TestFacadeConsumePriorityGroupOptions(t *testing.T) {
	ctx, js := facadeJetStream(t)
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "CP", Subjects: []string{"cp"}}); err != nil {
		t.Fatal(err)
	}
	c, err := js.CreateConsumer(ctx, "CP", jetstream.ConsumerConfig{
		Durable: "over", PriorityPolicy: jetstream.PriorityPolicyOverflow, PriorityGroups: []string{"A"},
	})
	if err != nil {
		t.Fatal(err)
	}
	publishSized(t, ctx, js, "cp", 3, 10)

	starved, err := c.Messages(jetstream.PullPriorityGroup("A"), jetstream.PullMinPending(100), jetstream.PullMinAckPending(100))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := starved.Next(jetstream.NextMaxWait(500 * time.Millisecond)); !errors.Is(err, nats.ErrTimeout) {
		t.Errorf("PullMinPending(100) with 3 pending: %v", err)
	}
	starved.Stop()

	got := make(chan string, 3)
	cc, err := c.Consume(func(m jetstream.Msg) { _ = m.Ack(); got <- string(m.Data()) },
		jetstream.PullPriorityGroup("A"), jetstream.PullMaxBytes(1024), jetstream.PullThresholdBytes(100))
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Stop()
	for i := 0; i < 3; i++ {
		select {
		case <-got:
		case <-ctx.Done():
			t.Fatalf("Consume for group A: %d of 3 messages", i)
		}
	}
	if _, err := c.Messages(jetstream.PullMinPending(0)); !errors.Is(err, jetstream.ErrInvalidOption) {
		t.Errorf("PullMinPending(0): %v", err)
	}
	if _, err := c.Messages(jetstream.WithMessagesErrOnMissingHeartbeat(true)); !errors.Is(err, jetstream.ErrInvalidOption) {
		t.Errorf("WithMessagesErrOnMissingHeartbeat(true): %v", err)
	}
	it, err := c.Messages(jetstream.PullPriorityGroup("A"), jetstream.WithMessagesErrOnMissingHeartbeat(false))
	if err != nil {
		t.Errorf("WithMessagesErrOnMissingHeartbeat(false): %v", err)
	} else {
		it.Stop()
	}
}

// UnpinConsumer releases a pinned_client group's pin, which
// ConsumerInfo.PriorityGroups shows.
func TestFacadeUnpinConsumerAndPriorityGroupState(t *testing.T) {
	ctx, js := facadeJetStream(t)
	stream, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "UP", Subjects: []string{"up"}})
	if err != nil {
		t.Fatal(err)
	}
	c, err := stream.CreateConsumer(ctx, jetstream.ConsumerConfig{
		Durable: "pinned", PriorityPolicy: jetstream.PriorityPolicyPinned, PriorityGroups: []string{"A"},
		PinnedTTL: time.Minute,
	})
	if err != nil {
		t.Fatal(err)
	}
	publishSized(t, ctx, js, "up", 1, 10)
	b, err := c.Fetch(1, jetstream.FetchPriorityGroup("A"), jetstream.FetchMaxWait(5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if n, err := drainBatch(t, b, true); n != 1 || err != nil {
		t.Fatalf("pinned fetch: %d, %v", n, err)
	}
	info, err := c.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(info.PriorityGroups) != 1 || info.PriorityGroups[0].Group != "A" || info.PriorityGroups[0].PinnedClientID == "" ||
		info.PriorityGroups[0].PinnedTS.IsZero() {
		t.Fatalf("PriorityGroups after a pinned fetch: %+v", info.PriorityGroups)
	}
	if err := stream.UnpinConsumer(ctx, "pinned", "A"); err != nil {
		t.Fatal(err)
	}
	if info, err = c.Info(ctx); err != nil || len(info.PriorityGroups) != 1 || info.PriorityGroups[0].PinnedClientID != "" {
		t.Errorf("PriorityGroups after UnpinConsumer: %+v, %v", info.PriorityGroups, err)
	}
}

// ResetConsumerToSequence moves a consumer back to a stream sequence,
// ResetConsumer to its ack floor; a sequence its DeliverPolicy excludes
// is ErrConsumerInvalidReset.
func TestFacadeResetConsumer(t *testing.T) {
	ctx, js := facadeJetStream(t)
	stream, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "RC", Subjects: []string{"rc"}})
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 4; i++ {
		if _, err := js.Publish(ctx, "rc", []byte(fmt.Sprint(i))); err != nil {
			t.Fatal(err)
		}
	}
	c, err := stream.CreateConsumer(ctx, jetstream.ConsumerConfig{Durable: "d", AckPolicy: jetstream.AckExplicitPolicy})
	if err != nil {
		t.Fatal(err)
	}
	b, err := c.Fetch(3, jetstream.FetchMaxWait(5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if n, err := drainBatch(t, b, true); n != 3 || err != nil {
		t.Fatalf("fetch: %d, %v", n, err)
	}
	resp, err := js.ResetConsumerToSequence(ctx, "RC", "d", 2)
	if err != nil {
		t.Fatal(err)
	}
	if resp.ResetSeq != 2 || resp.ConsumerInfo == nil || resp.Name != "d" {
		t.Errorf("ResetConsumerToSequence(2): %+v", resp)
	}
	m, err := c.Next(jetstream.FetchMaxWait(5 * time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if md, _ := m.Metadata(); md.Sequence.Stream != 2 {
		t.Errorf("after the reset to 2, next is stream sequence %d", md.Sequence.Stream)
	}
	if resp, err = stream.ResetConsumer(ctx, "d"); err != nil || resp.ConsumerInfo == nil {
		t.Errorf("ResetConsumer: %+v, %v", resp, err)
	}

	late, err := stream.CreateConsumer(ctx, jetstream.ConsumerConfig{Durable: "late",
		DeliverPolicy: jetstream.DeliverByStartSequencePolicy, OptStartSeq: 3})
	if err != nil {
		t.Fatal(err)
	}
	if late.CachedInfo().Config.OptStartSeq != 3 {
		t.Fatalf("late consumer: %+v", late.CachedInfo().Config)
	}
	if _, err := js.ResetConsumerToSequence(ctx, "RC", "late", 1); !errors.Is(err, jetstream.ErrConsumerInvalidReset) {
		t.Errorf("reset before OptStartSeq: %v", err)
	}
	if _, err := js.ResetConsumer(ctx, "RC", "bad.name"); !errors.Is(err, jetstream.ErrInvalidConsumerName) {
		t.Errorf("reset of a bad name: %v", err)
	}
	if _, err := js.ResetConsumer(ctx, "", "d"); !errors.Is(err, jetstream.ErrStreamNameRequired) {
		t.Errorf("reset without a stream: %v", err)
	}
}

// WithDeletedDetails lists the deleted sequences in StreamState.Deleted,
// alone and with a subject filter.
func TestFacadeStreamInfoWithDeletedDetails(t *testing.T) {
	ctx, js := facadeJetStream(t)
	stream, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "DD", Subjects: []string{"dd.>"}})
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 5; i++ {
		if _, err := js.Publish(ctx, fmt.Sprintf("dd.%d", i%2), nil); err != nil {
			t.Fatal(err)
		}
	}
	for _, seq := range []uint64{2, 4} {
		if err := stream.DeleteMsg(ctx, seq); err != nil {
			t.Fatal(err)
		}
	}
	info, err := stream.Info(ctx, jetstream.WithDeletedDetails(true))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(info.State.Deleted, []uint64{2, 4}) || info.State.NumDeleted != 2 || info.Config.Name != "DD" {
		t.Errorf("WithDeletedDetails: deleted %v (%d)", info.State.Deleted, info.State.NumDeleted)
	}
	if info, err = stream.Info(ctx); err != nil || info.State.Deleted != nil {
		t.Errorf("without WithDeletedDetails: deleted %v, %v", info.State.Deleted, err)
	}
	info, err = stream.Info(ctx, jetstream.WithDeletedDetails(true), jetstream.WithSubjectFilter("dd.>"))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(info.State.Deleted, []uint64{2, 4}) || info.State.Subjects["dd.1"] != 3 || len(info.State.Subjects) != 1 {
		t.Errorf("WithDeletedDetails and WithSubjectFilter: deleted %v, subjects %v", info.State.Deleted, info.State.Subjects)
	}
	if err := js.DeleteStream(ctx, "DD"); err != nil {
		t.Fatal(err)
	}
	if _, err := stream.Info(ctx, jetstream.WithDeletedDetails(true)); !errors.Is(err, jetstream.ErrStreamNotFound) {
		t.Errorf("deleted stream: %v", err)
	}
}

// The purge options build nats.go's StreamPurgeRequest and refuse
// sequence and keep together.
func TestFacadePurgeRequest(t *testing.T) {
	ctx, js := facadeJetStream(t)
	stream, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "PR", Subjects: []string{"pr"}})
	if err != nil {
		t.Fatal(err)
	}
	publishSized(t, ctx, js, "pr", 5, 1)
	if err := stream.Purge(ctx, jetstream.WithPurgeKeep(2), jetstream.WithPurgeSequence(3)); !errors.Is(err, jetstream.ErrInvalidOption) {
		t.Errorf("keep and sequence: %v", err)
	}
	var req jetstream.StreamPurgeRequest
	for _, o := range []jetstream.StreamPurgeOpt{jetstream.WithPurgeSubject("pr"), jetstream.WithPurgeKeep(2)} {
		if err := o(&req); err != nil {
			t.Fatal(err)
		}
	}
	if req != (jetstream.StreamPurgeRequest{Subject: "pr", Keep: 2}) {
		t.Errorf("request: %+v", req)
	}
	if err := stream.Purge(ctx, jetstream.WithPurgeSubject("pr"), jetstream.WithPurgeKeep(2)); err != nil {
		t.Fatal(err)
	}
	if info, err := stream.Info(ctx); err != nil || info.State.Msgs != 2 {
		t.Errorf("after keeping 2: %d messages, %v", info.State.Msgs, err)
	}
}

// StopAfter ends a Consume or a Messages after its count; a pull
// consumer pulls nothing beyond it (the rest stays pending), an ordered
// consumer stops reading there.
func TestFacadeStopAfter(t *testing.T) {
	_, js := facadeJetStream(t)
	// A bound on the events, not the usual 20 s: a consume tells a deleted
	// consumer from one electing a leader by asking for its info, and on a
	// machine too busy to answer within 500 ms it asks again after a
	// backoff (the sanitizer run, every package at once, took longer).
	ctx := ctxTimeout(t, 90*time.Second)
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "SA", Subjects: []string{"sa"}}); err != nil {
		t.Fatal(err)
	}
	publishSized(t, ctx, js, "sa", 10, 1)
	c, err := js.CreateConsumer(ctx, "SA", jetstream.ConsumerConfig{Durable: "consume"})
	if err != nil {
		t.Fatal(err)
	}
	var got []uint64
	cc, err := c.Consume(func(m jetstream.Msg) {
		md, _ := m.Metadata()
		got = append(got, md.Sequence.Stream)
	}, jetstream.StopAfter(3), jetstream.PullMaxMessages(2))
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-cc.Closed():
	case <-ctx.Done():
		t.Fatal("Consume with StopAfter(3) did not end")
	}
	if !slices.Equal(got, []uint64{1, 2, 3}) {
		t.Errorf("delivered: %v", got)
	}
	// Unacked, the three await their ack; the seven others were never
	// pulled.
	if info, err := c.Info(ctx); err != nil || info.NumAckPending != 3 || info.NumPending != 7 {
		t.Errorf("after StopAfter(3): %d awaiting ack, %d pending, %v", info.NumAckPending, info.NumPending, err)
	}

	m, err := js.CreateConsumer(ctx, "SA", jetstream.ConsumerConfig{Durable: "messages"})
	if err != nil {
		t.Fatal(err)
	}
	it, err := m.Messages(jetstream.StopAfter(2))
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ {
		msg, err := it.Next(jetstream.NextMaxWait(5 * time.Second))
		if err != nil {
			t.Fatal(err)
		}
		if err := msg.DoubleAck(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := it.Next(jetstream.NextMaxWait(5 * time.Second)); !errors.Is(err, jetstream.ErrMsgIteratorClosed) {
		t.Errorf("Next after StopAfter(2): %v", err)
	}
	if info, err := m.Info(ctx); err != nil || info.NumPending != 8 || info.NumAckPending != 0 {
		t.Errorf("after StopAfter(2): %d pending, %d awaiting ack, %v", info.NumPending, info.NumAckPending, err)
	}

	// A Stop before the count ends it too.
	many, err := c.Consume(func(jetstream.Msg) {}, jetstream.StopAfter(100))
	if err != nil {
		t.Fatal(err)
	}
	many.Stop()
	select {
	case <-many.Closed():
	case <-ctx.Done():
		t.Fatal("Stop did not end a Consume with StopAfter")
	}

	// Deleting the consumer ends it with ErrConsumerDeleted.
	doomed, err := js.CreateConsumer(ctx, "SA", jetstream.ConsumerConfig{Durable: "doomed", DeliverPolicy: jetstream.DeliverNewPolicy})
	if err != nil {
		t.Fatal(err)
	}
	errs := make(chan error, 4)
	dc, err := doomed.Consume(func(jetstream.Msg) {}, jetstream.StopAfter(5),
		jetstream.ConsumeErrHandler(func(_ jetstream.ConsumeContext, err error) { errs <- err }))
	if err != nil {
		t.Fatal(err)
	}
	if err := js.DeleteConsumer(ctx, "SA", "doomed"); err != nil {
		t.Fatal(err)
	}
	select {
	case <-dc.Closed():
		// (Deleted under a waiting pull, or gone when the next is sent.)
		if err := <-errs; !errors.Is(err, jetstream.ErrConsumerDeleted) && !errors.Is(err, jetstream.ErrConsumerNotFound) {
			t.Errorf("the deleted consumer's error: %v", err)
		}
	case <-ctx.Done():
		t.Fatal("a Consume with StopAfter of a deleted consumer did not end")
	}

	oc, err := js.OrderedConsumer(ctx, "SA", jetstream.OrderedConsumerConfig{})
	if err != nil {
		t.Fatal(err)
	}
	oit, err := oc.Messages(jetstream.StopAfter(4))
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 4; i++ {
		msg, err := oit.Next(jetstream.NextMaxWait(5 * time.Second))
		if err != nil {
			t.Fatal(err)
		}
		if md, _ := msg.Metadata(); md.Sequence.Stream != uint64(i) {
			t.Errorf("ordered message %d: stream sequence %d", i, md.Sequence.Stream)
		}
	}
	if _, err := oit.Next(jetstream.NextMaxWait(5 * time.Second)); !errors.Is(err, jetstream.ErrMsgIteratorClosed) {
		t.Errorf("ordered Next after StopAfter(4): %v", err)
	}
	if _, err := c.Messages(jetstream.StopAfter(0)); !errors.Is(err, jetstream.ErrInvalidOption) {
		t.Errorf("StopAfter(0): %v", err)
	}
}

// PullMaxMessagesWithBytesLimit bounds each pull request by both: a
// request for five 100-byte messages within 350 bytes delivers fewer.
func TestFacadePullMaxMessagesWithBytesLimit(t *testing.T) {
	ctx, js := facadeJetStream(t)
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "BL", Subjects: []string{"bl"}}); err != nil {
		t.Fatal(err)
	}
	publishSized(t, ctx, js, "bl", 10, 100)
	c, err := js.CreateConsumer(ctx, "BL", jetstream.ConsumerConfig{Durable: "d"})
	if err != nil {
		t.Fatal(err)
	}
	it, err := c.Messages(jetstream.PullMaxMessagesWithBytesLimit(5, 350))
	if err != nil {
		t.Fatal(err)
	}
	defer it.Stop()
	if _, err := it.Next(jetstream.NextMaxWait(5 * time.Second)); err != nil {
		t.Fatal(err)
	}
	// The server counts subject and reply too: fewer than the five asked
	// for fit, and no further request was sent.
	if info, err := c.Info(ctx); err != nil || info.NumAckPending == 0 || info.NumAckPending >= 5 ||
		uint64(info.NumAckPending)+info.NumPending != 10 {
		t.Errorf("after one request: %d delivered, %d pending, %v", info.NumAckPending, info.NumPending, err)
	}
	got := make(chan struct{}, 10)
	c2, err := js.CreateConsumer(ctx, "BL", jetstream.ConsumerConfig{Durable: "all"})
	if err != nil {
		t.Fatal(err)
	}
	cc, err := c2.Consume(func(m jetstream.Msg) { _ = m.Ack(); got <- struct{}{} }, jetstream.PullMaxMessagesWithBytesLimit(4, 1000))
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Stop()
	for i := 0; i < 10; i++ {
		select {
		case <-got:
		case <-ctx.Done():
			t.Fatalf("Consume: %d of 10 messages", i)
		}
	}
	for _, opts := range [][]jetstream.PullMessagesOpt{
		{jetstream.PullMaxMessagesWithBytesLimit(0, 10)},
		{jetstream.PullMaxMessagesWithBytesLimit(10, 0)},
		{jetstream.PullMaxMessages(5), jetstream.PullMaxMessagesWithBytesLimit(10, 10)},
	} {
		if _, err := c.Messages(opts...); !errors.Is(err, jetstream.ErrInvalidOption) {
			t.Errorf("options %v: %v", opts, err)
		}
	}
	oc, err := js.OrderedConsumer(ctx, "BL", jetstream.OrderedConsumerConfig{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := oc.Messages(jetstream.PullMaxMessagesWithBytesLimit(5, 350)); !errors.Is(err, jetstream.ErrInvalidOption) {
		t.Errorf("ordered consumer with a byte limit: %v", err)
	}
}

// An ordered consumer is fetched from or consumed, not both, and runs
// one Consume or Messages (one Fetch or Next) at a time.
func TestFacadeOrderedConsumerOneAtATime(t *testing.T) {
	ctx, js := facadeJetStream(t)
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "OO", Subjects: []string{"oo"}}); err != nil {
		t.Fatal(err)
	}
	publishSized(t, ctx, js, "oo", 2, 1)

	consumed, err := js.OrderedConsumer(ctx, "OO", jetstream.OrderedConsumerConfig{})
	if err != nil {
		t.Fatal(err)
	}
	it, err := consumed.Messages()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := consumed.Messages(); !errors.Is(err, jetstream.ErrOrderedConsumerConcurrentRequests) {
		t.Errorf("second Messages: %v", err)
	}
	if _, err := consumed.Consume(func(jetstream.Msg) {}); !errors.Is(err, jetstream.ErrOrderedConsumerConcurrentRequests) {
		t.Errorf("Consume beside Messages: %v", err)
	}
	if _, err := consumed.Fetch(1); !errors.Is(err, jetstream.ErrOrderConsumerUsedAsConsume) {
		t.Errorf("Fetch after Messages: %v", err)
	}
	it.Stop()
	again, err := consumed.Messages()
	if err != nil {
		t.Fatalf("Messages after Stop: %v", err)
	}
	again.Stop()

	fetched, err := js.OrderedConsumer(ctx, "OO", jetstream.OrderedConsumerConfig{})
	if err != nil {
		t.Fatal(err)
	}
	// Five asked, two there: the batch waits out its 500 ms.
	b, err := fetched.Fetch(5, jetstream.FetchMaxWait(500*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fetched.Fetch(1); !errors.Is(err, jetstream.ErrOrderedConsumerConcurrentRequests) {
		t.Errorf("Fetch beside Fetch: %v", err)
	}
	if _, err := fetched.Next(); !errors.Is(err, jetstream.ErrOrderedConsumerConcurrentRequests) {
		t.Errorf("Next beside Fetch: %v", err)
	}
	if _, err := fetched.Consume(func(jetstream.Msg) {}); !errors.Is(err, jetstream.ErrOrderConsumerUsedAsFetch) {
		t.Errorf("Consume after Fetch: %v", err)
	}
	if n, err := drainBatch(t, b, false); n != 2 || err != nil {
		t.Fatalf("first batch: %d, %v", n, err)
	}
	if _, err := js.Publish(ctx, "oo", []byte("3")); err != nil {
		t.Fatal(err)
	}
	if m, err := fetched.Next(jetstream.FetchMaxWait(5 * time.Second)); err != nil || string(m.Data()) != "3" {
		t.Errorf("Next after the batch: %v", err)
	}
}

// PullPrioritized is an option of both Consume and Messages, as in nats.go.
var (
	_ jetstream.PullConsumeOpt  = jetstream.PullPrioritized(0)
	_ jetstream.PullMessagesOpt = jetstream.PullPrioritized(0)
)

// facadeWaiting waits until c has want pull requests waiting.
func facadeWaiting(t *testing.T, ctx context.Context, c jetstream.Consumer, want int) {
	t.Helper()
	eventually(t, fmt.Sprintf("%d waiting requests", want), func() bool {
		info, err := c.Info(ctx)
		return err == nil && info.NumWaiting == want
	})
}

// firstOf reads the one message of a batch of one and acks it.
func firstOf(t *testing.T, b jetstream.MessageBatch, what string) string {
	t.Helper()
	m, ok := <-b.Messages()
	if !ok {
		t.Fatalf("%s: no message (%v)", what, b.Error())
	}
	if err := m.Ack(); err != nil {
		t.Fatal(err)
	}
	return string(m.Data())
}

// On a prioritized consumer FetchPrioritized and PullPrioritized set the
// pull requests' priority: of two waiting requests the one of the lower
// number gets the message, whichever came first. Out of range, or
// without a priority group, the priority is refused before it is sent.
func TestFacadeFetchAndPullPrioritized(t *testing.T) {
	ctx, js := facadeJetStream(t)
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "PR", Subjects: []string{"pr"}}); err != nil {
		t.Fatal(err)
	}
	c, err := js.CreateConsumer(ctx, "PR", jetstream.ConsumerConfig{
		Durable: "prio", PriorityPolicy: jetstream.PriorityPolicyPrioritized, PriorityGroups: []string{"P"},
	})
	if err != nil {
		t.Fatal(err)
	}
	fetchAt := func(priority uint8) jetstream.MessageBatch {
		b, err := c.Fetch(1, jetstream.FetchPriorityGroup("P"), jetstream.FetchPrioritized(priority), jetstream.FetchMaxWait(20*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	low := fetchAt(5)
	facadeWaiting(t, ctx, c, 1)
	high := fetchAt(1)
	facadeWaiting(t, ctx, c, 2)
	publishSized(t, ctx, js, "pr", 1, 1)
	if got := firstOf(t, high, "the fetch at 1"); got != "x" {
		t.Fatalf("the fetch at 1 got %q", got)
	}
	publishSized(t, ctx, js, "pr", 1, 2)
	if got := firstOf(t, low, "the fetch at 5"); got != "xx" {
		t.Fatalf("the fetch at 5 got %q", got)
	}

	// Messages at 5 waits first, a fetch at 1 after it: the fetch wins.
	it, err := c.Messages(jetstream.PullPriorityGroup("P"), jetstream.PullPrioritized(5), jetstream.PullMaxMessages(1))
	if err != nil {
		t.Fatal(err)
	}
	defer it.Stop()
	facadeWaiting(t, ctx, c, 1)
	fetch := fetchAt(1)
	facadeWaiting(t, ctx, c, 2)
	publishSized(t, ctx, js, "pr", 1, 3)
	if got := firstOf(t, fetch, "the fetch at 1 after Messages at 5"); got != "xxx" {
		t.Fatalf("the fetch at 1 got %q", got)
	}
	publishSized(t, ctx, js, "pr", 1, 4)
	m, err := it.Next(jetstream.NextMaxWait(10 * time.Second))
	if err != nil || string(m.Data()) != "xxxx" {
		t.Fatalf("Messages at 5: %v", err)
	}

	// Refused before anything is sent, as nats.go's option mistakes.
	if _, err := c.Fetch(1, jetstream.FetchPriorityGroup("P"), jetstream.FetchPrioritized(10)); !errors.Is(err, jetstream.ErrInvalidOption) {
		t.Errorf("FetchPrioritized(10): %v", err)
	}
	if _, err := c.Next(jetstream.FetchPrioritized(1)); !errors.Is(err, jetstream.ErrInvalidOption) {
		t.Errorf("FetchPrioritized(1) without a group: %v", err)
	}
	if _, err := c.Consume(func(jetstream.Msg) {}, jetstream.PullPriorityGroup("P"), jetstream.PullPrioritized(10)); !errors.Is(err, jetstream.ErrInvalidOption) {
		t.Errorf("PullPrioritized(10): %v", err)
	}
	if _, err := c.Messages(jetstream.PullPrioritized(1)); !errors.Is(err, jetstream.ErrInvalidOption) {
		t.Errorf("PullPrioritized(1) without a group: %v", err)
	}
	// An ordered consumer pulls for no group.
	oc, err := js.OrderedConsumer(ctx, "PR", jetstream.OrderedConsumerConfig{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := oc.Fetch(1, jetstream.FetchPrioritized(1)); !errors.Is(err, jetstream.ErrInvalidOption) {
		t.Errorf("an ordered consumer's Fetch with FetchPrioritized: %v", err)
	}
}

// OrderedConsumerConfig.Metadata reaches the server-side consumer, as its
// info reads it back.
func TestFacadeOrderedConsumerMetadata(t *testing.T) {
	ctx, js := facadeJetStream(t)
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "OM", Subjects: []string{"om"}}); err != nil {
		t.Fatal(err)
	}
	oc, err := js.OrderedConsumer(ctx, "OM", jetstream.OrderedConsumerConfig{Metadata: map[string]string{"owner": "facade"}})
	if err != nil {
		t.Fatal(err)
	}
	info, err := oc.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if info.Config.Metadata["owner"] != "facade" {
		t.Fatalf("metadata read back: %v", info.Config.Metadata)
	}
	if cached := oc.CachedInfo(); cached == nil || cached.Config.Metadata["owner"] != "facade" {
		t.Fatalf("cached info: %+v", cached)
	}
	byName, err := js.Consumer(ctx, "OM", info.Name)
	if err != nil || byName.CachedInfo().Config.Metadata["owner"] != "facade" {
		t.Fatalf("the consumer by name: %v", err)
	}
}
