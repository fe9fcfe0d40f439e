package natsio_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	natsio "github.com/libnatsio/natsio/bindings/go"
)

// orderedStream makes stream "O" on "o.>" with n messages "m<i>" on
// "o.<i%2>".
func orderedStream(t *testing.T, js *natsio.JetStream, n int) {
	t.Helper()
	ctx := ctxTimeout(t, 10*time.Second)
	got(js.CreateStream(ctx, natsio.StreamConfig{Name: "O", Subjects: []string{"o.>"}, Storage: natsio.MemoryStorage})).must(t)
	for i := range n {
		got(js.Publish(ctx, fmt.Sprintf("o.%d", i%2), []byte(fmt.Sprintf("m%d", i)))).must(t)
	}
}

// seqsOf reads a whole until-drained run of an ordered consumer on "O".
func seqsOf(t *testing.T, js *natsio.JetStream, cfg natsio.OrderedConsumerConfig) []uint64 {
	t.Helper()
	ctx := ctxTimeout(t, 10*time.Second)
	oc := got(js.OrderedConsumer(ctx, "O", cfg)).must(t)
	defer oc.Stop(ctx)
	msgs := got(oc.Messages(ctx, natsio.PullUntilDrained(), natsio.PullExpiry(2*time.Second), natsio.PullHeartbeat(500*time.Millisecond))).must(t)
	var seqs []uint64
	for m, err := range msgs.Msgs(ctx) {
		noErr(t, err)
		seqs = append(seqs, meta(t, m).Sequence.Stream)
	}
	return seqs
}

func TestOrderedConsumerReadsInOrderAndStops(t *testing.T) {
	_, js := jetStream(t)
	ctx := ctxTimeout(t, 20*time.Second)
	orderedStream(t, js, 10)

	oc := got(js.OrderedConsumer(ctx, "O", natsio.OrderedConsumerConfig{})).must(t)
	info := oc.CachedInfo()
	if info == nil || info.NumPending != 10 || info.Config.AckPolicy != natsio.AckNonePolicy || len(info.Name) != 24 || !strings.HasSuffix(info.Name, "_1") {
		t.Fatalf("cached info %+v", info)
	}
	msgs := got(oc.Messages(ctx, natsio.PullMaxMessages(4), natsio.PullExpiry(2*time.Second))).must(t)
	for i := range 10 {
		m := got(msgs.Next(ctx)).must(t)
		if string(m.Data) != fmt.Sprintf("m%d", i) {
			t.Fatalf("message %d is %q", i, m.Data)
		}
		md := meta(t, m)
		if md.Sequence.Stream != uint64(i+1) || md.Consumer != info.Name || md.NumPending != uint64(9-i) {
			t.Fatalf("message %d: %+v", i, md)
		}
	}
	// Info during the run: the consumer in use.
	now := got(oc.Info(ctx)).must(t)
	if now.Name != info.Name || now.Delivered.Stream != 10 {
		t.Fatalf("info during the run: %+v", now)
	}
	_, err := oc.Messages(ctx)
	wantErr(t, err, natsio.ErrIllegalState)

	noErr(t, oc.Stop(ctx))
	if names := got(js.ConsumerNames(ctx, "O")).must(t); slices.Contains(names, info.Name) {
		t.Fatalf("%s still there after Stop: %v", info.Name, names)
	}
	_, err = msgs.Next(ctx)
	wantErr(t, err, natsio.ErrDone)
	noErr(t, oc.Stop(ctx))
	_, err = oc.Info(ctx)
	wantErr(t, err, natsio.ErrIllegalState)
}

// The server-side consumer as a user reads it back: named NamePrefix_1,
// with the inactive threshold asked for, and nats.go's other fields.
func TestOrderedConsumerNamePrefixAndInactiveThreshold(t *testing.T) {
	_, js := jetStream(t)
	ctx := ctxTimeout(t, 20*time.Second)
	orderedStream(t, js, 2)

	oc := got(js.OrderedConsumer(ctx, "O", natsio.OrderedConsumerConfig{NamePrefix: "mine", InactiveThreshold: 20 * time.Second})).must(t)
	defer oc.Stop(ctx)
	if name := oc.CachedInfo().Name; name != "mine_1" {
		t.Fatalf("name %q", name)
	}
	info := got(js.ConsumerInfo(ctx, "O", "mine_1")).must(t)
	c := info.Config
	if c.InactiveThreshold != 20*time.Second || c.AckPolicy != natsio.AckNonePolicy || c.DeliverPolicy != natsio.DeliverAllPolicy || !c.MemoryStorage || c.Replicas != 1 {
		t.Fatalf("config %+v", c)
	}
	_, err := js.OrderedConsumer(ctx, "O", natsio.OrderedConsumerConfig{NamePrefix: "a.b"})
	wantErr(t, err, natsio.ErrInvalidArgument)
	_, err = js.OrderedConsumer(ctx, "O", natsio.OrderedConsumerConfig{InactiveThreshold: -time.Second})
	wantErr(t, err, natsio.ErrInvalidArgument)
}

func TestOrderedConsumerPoliciesAndFilters(t *testing.T) {
	_, js := jetStream(t)
	ctx := ctxTimeout(t, 20*time.Second)
	orderedStream(t, js, 3) // seq 1..3
	time.Sleep(50 * time.Millisecond)
	between := time.Now()
	time.Sleep(50 * time.Millisecond)
	for i := 3; i < 6; i++ { // seq 4..6
		got(js.Publish(ctx, fmt.Sprintf("o.%d", i%2), []byte(fmt.Sprintf("m%d", i)))).must(t)
	}
	cases := []struct {
		cfg  natsio.OrderedConsumerConfig
		want []uint64
	}{
		{natsio.OrderedConsumerConfig{}, []uint64{1, 2, 3, 4, 5, 6}},
		{natsio.OrderedConsumerConfig{FilterSubjects: []string{"o.1"}}, []uint64{2, 4, 6}},
		{natsio.OrderedConsumerConfig{DeliverPolicy: natsio.DeliverLastPolicy}, []uint64{6}},
		{natsio.OrderedConsumerConfig{DeliverPolicy: natsio.DeliverLastPerSubjectPolicy}, []uint64{5, 6}},
		{natsio.OrderedConsumerConfig{DeliverPolicy: natsio.DeliverByStartSequencePolicy, OptStartSeq: 4}, []uint64{4, 5, 6}},
		{natsio.OrderedConsumerConfig{DeliverPolicy: natsio.DeliverByStartTimePolicy, OptStartTime: &between}, []uint64{4, 5, 6}},
	}
	for _, c := range cases {
		if got := seqsOf(t, js, c.cfg); !slices.Equal(got, c.want) {
			t.Fatalf("%+v: got %v, want %v", c.cfg, got, c.want)
		}
	}

	// Headers only.
	oc := got(js.OrderedConsumer(ctx, "O", natsio.OrderedConsumerConfig{HeadersOnly: true})).must(t)
	msgs := got(oc.Messages(ctx)).must(t)
	m := got(msgs.Next(ctx)).must(t)
	if len(m.Data) != 0 || m.Header.Get("Nats-Msg-Size") != "2" {
		t.Fatalf("headers only: %q %v", m.Data, m.Header)
	}
	noErr(t, oc.Stop(ctx))

	// Bad input.
	_, err := js.OrderedConsumer(ctx, "a.b", natsio.OrderedConsumerConfig{})
	wantErr(t, err, natsio.ErrInvalidArgument)
	_, err = js.OrderedConsumer(ctx, "O", natsio.OrderedConsumerConfig{FilterSubjects: []string{"bad..x"}})
	wantErr(t, err, natsio.ErrBadSubject)
	_, err = js.OrderedConsumer(ctx, "O", natsio.OrderedConsumerConfig{DeliverPolicy: natsio.DeliverByStartSequencePolicy})
	wantErr(t, err, natsio.ErrInvalidArgument, "opt_start_seq")
	_, err = js.OrderedConsumer(ctx, "O", natsio.OrderedConsumerConfig{DeliverPolicy: "sideways"})
	wantErr(t, err, natsio.ErrInvalidArgument)
	_, err = js.OrderedConsumer(ctx, "MISSING", natsio.OrderedConsumerConfig{})
	wantErr(t, err, natsio.ErrStreamNotFound)
}

func TestOrderedConsumerHealsDrainsAndIdles(t *testing.T) {
	_, js := jetStream(t)
	ctx := ctxTimeout(t, 20*time.Second)
	orderedStream(t, js, 3)
	oc := got(js.OrderedConsumer(ctx, "O", natsio.OrderedConsumerConfig{})).must(t)
	first := oc.CachedInfo().Name
	msgs := got(oc.Messages(ctx, natsio.PullExpiry(2*time.Second), natsio.PullIdleTimeout(400*time.Millisecond))).must(t)
	for want := uint64(1); want <= 3; want++ {
		if s := meta(t, got(msgs.Next(ctx)).must(t)).Sequence.Stream; s != want {
			t.Fatalf("got %d, want %d", s, want)
		}
	}
	// The consumer deleted under the run: it heals without gap or duplicate.
	noErr(t, js.DeleteConsumer(ctx, "O", first))
	for i := 3; i < 6; i++ {
		got(js.Publish(ctx, "o.0", []byte(fmt.Sprintf("m%d", i)))).must(t)
	}
	for want := uint64(4); want <= 6; want++ {
		md := meta(t, got(msgs.Next(ctx)).must(t))
		if md.Sequence.Stream != want || md.Consumer == first {
			t.Fatalf("after healing: %+v, want stream seq %d", md, want)
		}
	}
	// Then quiet: ErrNoMessages after the idle timeout.
	start := time.Now()
	_, err := msgs.Next(ctx)
	wantErr(t, err, natsio.ErrNoMessages)
	if d := time.Since(start); d > 3*time.Second {
		t.Fatalf("idle timeout took %v", d)
	}
	// The next run continues after the last message; drained, it ends.
	got(js.Publish(ctx, "o.1", []byte("m6"))).must(t)
	rest := got(oc.Messages(ctx, natsio.PullUntilDrained())).must(t)
	if s := meta(t, got(rest.Next(ctx)).must(t)).Sequence.Stream; s != 7 {
		t.Fatalf("next run starts at %d", s)
	}
	_, err = rest.Next(ctx)
	wantErr(t, err, natsio.ErrDone)
	noErr(t, oc.Stop(context.Background()))
}

// One option type serves Consume and an ordered consumer's Messages, as in
// nats.go: the shared pull options work with both, and an option of one
// given to the other is refused before anything is sent.
func TestPullOptionsSharedByConsumeAndOrdered(t *testing.T) {
	_, js := jetStream(t)
	ctx := ctxTimeout(t, 20*time.Second)
	orderedStream(t, js, 4)
	got(js.CreateConsumer(ctx, "O", natsio.ConsumerConfig{Durable: "shared"})).must(t)

	_, err := js.Consume(ctx, "O", "shared", natsio.PullUntilDrained())
	wantErr(t, err, natsio.ErrInvalidArgument, "PullUntilDrained")
	_, err = js.Consume(ctx, "O", "shared", natsio.PullIdleTimeout(time.Second))
	wantErr(t, err, natsio.ErrInvalidArgument, "PullIdleTimeout")
	cons := got(js.Consume(ctx, "O", "shared", natsio.PullMaxMessages(2), natsio.PullExpiry(2*time.Second), natsio.PullHeartbeat(500*time.Millisecond))).must(t)
	for i := range 4 {
		m := got(cons.Next(ctx)).must(t)
		if string(m.Data) != fmt.Sprintf("m%d", i) {
			t.Fatalf("consumed %q as message %d", m.Data, i)
		}
		noErr(t, m.Ack())
	}
	cons.Stop()

	oc := got(js.OrderedConsumer(ctx, "O", natsio.OrderedConsumerConfig{})).must(t)
	defer oc.Stop(ctx)
	for _, opt := range []struct {
		name string
		opt  natsio.PullMessagesOpt
	}{
		{"PullMaxBytes", natsio.PullMaxBytes(1024)},
		{"PullPriorityGroup", natsio.PullPriorityGroup("g")},
		{"PullThresholdMessages", natsio.PullThresholdMessages(1)},
	} {
		_, err := oc.Messages(ctx, opt.opt)
		wantErr(t, err, natsio.ErrInvalidArgument, opt.name)
	}
	// Refused options left nothing running: a run can start now.
	msgs := got(oc.Messages(ctx, natsio.ConsumeMaxMessages(3), natsio.PullUntilDrained())).must(t)
	n := 0
	for _, err := range msgs.Msgs(ctx) {
		noErr(t, err)
		n++
	}
	if n != 4 {
		t.Fatalf("ordered run read %d messages, want 4", n)
	}
}

// Metadata is set on every server-side consumer the ordered consumer
// creates: the first one, and the one it makes after a run ended and
// deleted it, as a user reads them back with ConsumerInfo.
func TestOrderedConsumerMetadata(t *testing.T) {
	_, js := jetStream(t)
	ctx := ctxTimeout(t, 20*time.Second)
	orderedStream(t, js, 2)
	want := map[string]string{"team": "billing", "tier": "2"}
	oc := got(js.OrderedConsumer(ctx, "O", natsio.OrderedConsumerConfig{NamePrefix: "md", Metadata: want})).must(t)
	defer oc.Stop(ctx)
	hasMetadata := func(name string) {
		t.Helper()
		md := got(js.ConsumerInfo(ctx, "O", name)).must(t).Config.Metadata
		for k, v := range want {
			if md[k] != v {
				t.Fatalf("%s's metadata %v, want %v in it", name, md, want)
			}
		}
	}
	hasMetadata("md_1")
	msgs := got(oc.Messages(ctx, natsio.PullUntilDrained())).must(t)
	for _, err := range msgs.Msgs(ctx) {
		noErr(t, err)
	}
	if name := got(oc.Info(ctx)).must(t).Name; name != "md_2" {
		t.Fatalf("the consumer after the run is %q", name)
	}
	hasMetadata("md_2")

	// Without Metadata, none of the user's.
	plain := got(js.OrderedConsumer(ctx, "O", natsio.OrderedConsumerConfig{NamePrefix: "plain"})).must(t)
	defer plain.Stop(ctx)
	if md := got(js.ConsumerInfo(ctx, "O", "plain_1")).must(t).Config.Metadata; md["team"] != "" {
		t.Fatalf("metadata without any asked: %v", md)
	}

	// A key or value not valid UTF-8 is refused, not turned into U+FFFD,
	// and no consumer is created.
	for _, bad := range []map[string]string{{"team": "bill\xffing"}, {"te\xffam": "billing"}} {
		_, err := js.OrderedConsumer(ctx, "O", natsio.OrderedConsumerConfig{NamePrefix: "bad", Metadata: bad})
		wantIs(t, err, natsio.ErrInvalidUTF8)
	}
	_, err := js.ConsumerInfo(ctx, "O", "bad_1")
	wantIs(t, err, natsio.ErrConsumerNotFound)
}
