package natsio_test

// The jetstream facade's publish options and handlers, its context
// options, the stream config and info fields of newer servers, and the
// API error sentinels, against nats-server.

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/libnatsio/natsio/bindings/go/nats"
	"github.com/libnatsio/natsio/bindings/go/nats/jetstream"
)

// WithExpectLastSequenceForSubject checks the last sequence of the subject
// it names (wildcards allowed), not of the one published to.
func TestFacadePublishExpectLastSequenceForSubject(t *testing.T) {
	ctx, js := facadeJetStream(t)
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "EL", Subjects: []string{"el.>"}}); err != nil {
		t.Fatal(err)
	}
	for _, subj := range []string{"el.a", "el.b"} {
		if _, err := js.Publish(ctx, subj, nil); err != nil {
			t.Fatal(err)
		}
	}
	ack, err := js.Publish(ctx, "el.c", nil, jetstream.WithExpectLastSequenceForSubject(1, "el.a"))
	if err != nil || ack.Sequence != 3 {
		t.Fatalf("last of el.a is 1: %+v, %v", ack, err)
	}
	_, err = js.Publish(ctx, "el.c", nil, jetstream.WithExpectLastSequenceForSubject(1, "el.*"))
	var apiErr *jetstream.APIError
	if !errors.As(err, &apiErr) || apiErr.ErrorCode != jetstream.JSErrCodeStreamWrongLastSequence {
		t.Errorf("last of el.* is 3, not 1: %v", err)
	}
	if _, err := js.Publish(ctx, "el.c", nil, jetstream.WithExpectLastSequenceForSubject(1, "")); !errors.Is(err, jetstream.ErrInvalidOption) {
		t.Errorf("empty subject: %v", err)
	}
}

// A counter stream adds each Nats-Incr to its subject's value, which the
// ack carries in PubAck.Value.
func TestFacadeCounterStreamPubAckValue(t *testing.T) {
	ctx, js := facadeJetStream(t)
	stream, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "CNT", Subjects: []string{"cnt.>"}, AllowMsgCounter: true, AllowDirect: true})
	if err != nil {
		t.Fatal(err)
	}
	if !stream.CachedInfo().Config.AllowMsgCounter {
		t.Fatal("AllowMsgCounter not set")
	}
	var values []string
	for _, incr := range []string{"5", "+3", "-10"} {
		ack, err := js.PublishMsg(ctx, &nats.Msg{Subject: "cnt.hits", Header: nats.Header{"Nats-Incr": []string{incr}}})
		if err != nil {
			t.Fatal(err)
		}
		values = append(values, ack.Value)
	}
	if strings.Join(values, " ") != "5 8 -2" {
		t.Errorf("values: %v", values)
	}
	if ack, err := js.Publish(ctx, "cnt.hits", []byte("x")); err == nil {
		t.Errorf("a publish without Nats-Incr to a counter stream: %+v", ack)
	}
}

// A message scheduled with WithScheduleAt and WithScheduleTarget is
// published to its target when its time comes; a stream without
// AllowMsgSchedules refuses it with ErrMessageSchedulesDisabled.
func TestFacadeMessageSchedules(t *testing.T) {
	ctx, js := facadeJetStream(t)
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "SCH", Subjects: []string{"sch.>"}, AllowMsgSchedules: true}); err != nil {
		t.Fatal(err)
	}
	target, err := js.CreateConsumer(ctx, "SCH", jetstream.ConsumerConfig{Durable: "t", FilterSubject: "sch.target"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = js.Publish(ctx, "sch.later", []byte("due"),
		jetstream.WithScheduleAt(time.Now().Add(time.Second)), jetstream.WithScheduleTarget("sch.target"))
	if err != nil {
		t.Fatal(err)
	}
	m, err := target.Next(jetstream.FetchMaxWait(10 * time.Second))
	if err != nil {
		t.Fatalf("the scheduled message: %v", err)
	}
	if string(m.Data()) != "due" || m.Headers().Get(jetstream.SchedulerHeader) == "" {
		t.Errorf("scheduled message: %q, headers %v", m.Data(), m.Headers())
	}

	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "NOSCH", Subjects: []string{"nosch"}}); err != nil {
		t.Fatal(err)
	}
	_, err = js.Publish(ctx, "nosch", nil, jetstream.WithScheduleEvery(time.Minute), jetstream.WithScheduleTarget("nosch"))
	if !errors.Is(err, jetstream.ErrMessageSchedulesDisabled) {
		t.Errorf("schedule on a stream without AllowMsgSchedules: %v", err)
	}
	if _, err := js.Publish(ctx, "sch.x", nil, jetstream.WithScheduleEvery(time.Millisecond)); !errors.Is(err, jetstream.ErrInvalidOption) {
		t.Errorf("WithScheduleEvery(1ms): %v", err)
	}
	// The headers the options set are nats.go's.
	for _, c := range []struct {
		opt          jetstream.PublishOpt
		header, want string
	}{
		{jetstream.WithScheduleCron(jetstream.ScheduleHourly), jetstream.ScheduleHeader, "@hourly"},
		{jetstream.WithScheduleEvery(90 * time.Second), jetstream.ScheduleHeader, "@every 1m30s"},
		{jetstream.WithScheduleSource("sch.src"), jetstream.ScheduleSourceHeader, "sch.src"},
		{jetstream.WithScheduleTTL(time.Minute), jetstream.ScheduleTTLHeader, "1m0s"},
		{jetstream.WithScheduleTTLNever(), jetstream.ScheduleTTLHeader, "never"},
		{jetstream.WithScheduleTimeZone("Europe/Paris"), jetstream.ScheduleTimeZoneHeader, "Europe/Paris"},
		{jetstream.WithScheduleRollup(), jetstream.ScheduleRollupHeader, jetstream.MsgRollupSubject},
	} {
		if got := scheduleHeader(t, ctx, js, c.opt, c.header); got != c.want {
			t.Errorf("%s: %q, want %q", c.header, got, c.want)
		}
	}
}

// scheduleHeader is the header name a publish with opt carries, as a plain
// subscriber of the subject receives it (the stream, without schedules,
// may refuse it: only what was sent matters here).
func scheduleHeader(t *testing.T, ctx context.Context, js jetstream.JetStream, opt jetstream.PublishOpt, name string) string {
	t.Helper()
	if _, err := js.CreateOrUpdateStream(ctx, jetstream.StreamConfig{Name: "HDR", Subjects: []string{"hdr"}}); err != nil {
		t.Fatal(err)
	}
	sub, err := js.Conn().SubscribeSync("hdr")
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Unsubscribe()
	msg := &nats.Msg{Subject: "hdr", Header: nats.Header{"Keep": []string{"me"}}}
	_, _ = js.PublishMsg(ctx, msg, opt)
	got, err := sub.NextMsgWithContext(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got.Header.Get("Keep") != "me" {
		t.Errorf("the message's own header is lost: %v", got.Header)
	}
	return got.Header.Get(name)
}

// The async handlers get each outcome; CleanupPublisher fails the
// publishes still awaiting their ack with ErrJetStreamPublisherClosed,
// closes PublishAsyncComplete and leaves the context usable.
func TestFacadePublishAsyncHandlersAndCleanup(t *testing.T) {
	var mu sync.Mutex
	var acked []uint64
	var failed []error
	ctx, js := facadeJetStream(t,
		jetstream.WithPublishAsyncAckHandler(func(_ jetstream.JetStream, _ *nats.Msg, ack *jetstream.PubAck) {
			mu.Lock()
			acked = append(acked, ack.Sequence)
			mu.Unlock()
		}),
		jetstream.WithPublishAsyncErrHandler(func(_ jetstream.JetStream, _ *nats.Msg, err error) {
			mu.Lock()
			failed = append(failed, err)
			mu.Unlock()
		}),
		jetstream.WithPublishAsyncTimeout(time.Minute))
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "AH", Subjects: []string{"ah"}}); err != nil {
		t.Fatal(err)
	}
	ok, err := js.PublishAsync("ah", []byte("1"))
	if err != nil {
		t.Fatal(err)
	}
	bad, err := js.PublishAsync("ah", []byte("2"), jetstream.WithExpectLastSequence(7))
	if err != nil {
		t.Fatal(err)
	}
	<-ok.Ok()
	var apiErr *jetstream.APIError
	if err := <-bad.Err(); !errors.As(err, &apiErr) || apiErr.ErrorCode != jetstream.JSErrCodeStreamWrongLastSequence {
		t.Fatalf("the failed publish: %v", err)
	}
	select {
	case <-js.PublishAsyncComplete():
	case <-ctx.Done():
		t.Fatal("PublishAsyncComplete")
	}
	mu.Lock()
	if len(acked) != 1 || acked[0] != 1 || len(failed) != 1 {
		t.Errorf("handlers: acked %v, failed %v", acked, failed)
	}
	mu.Unlock()

	// A plain subscriber that never answers holds the acks back.
	nc := js.Conn()
	if _, err := nc.Subscribe("silent", func(*nats.Msg) {}); err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	futures := make([]jetstream.PubAckFuture, 3)
	for i := range futures {
		if futures[i], err = js.PublishAsync("silent", []byte("x")); err != nil {
			t.Fatal(err)
		}
	}
	if n := js.PublishAsyncPending(); n != 3 {
		t.Errorf("pending before the cleanup: %d", n)
	}
	complete := js.PublishAsyncComplete()
	js.CleanupPublisher()
	for _, f := range futures {
		select {
		case err := <-f.Err():
			if !errors.Is(err, jetstream.ErrJetStreamPublisherClosed) || err.Error() != "nats: jetstream context closed" {
				t.Errorf("dropped publish: %v", err)
			}
		case <-ctx.Done():
			t.Fatal("a dropped publish has no outcome")
		}
	}
	select {
	case <-complete:
	case <-ctx.Done():
		t.Fatal("PublishAsyncComplete not closed by the cleanup")
	}
	if n := js.PublishAsyncPending(); n != 0 {
		t.Errorf("pending after the cleanup: %d", n)
	}
	mu.Lock()
	if len(failed) != 4 || !errors.Is(failed[3], jetstream.ErrJetStreamPublisherClosed) {
		t.Errorf("error handler after the cleanup: %v", failed)
	}
	mu.Unlock()
	after, err := js.PublishAsync("ah", []byte("3"))
	if err != nil {
		t.Fatal(err)
	}
	select {
	case ack := <-after.Ok():
		if ack.Sequence != 2 {
			t.Errorf("publish after the cleanup: %+v", ack)
		}
	case err := <-after.Err():
		t.Errorf("publish after the cleanup: %v", err)
	}
	if _, err := js.PublishMsgAsync(&nats.Msg{Subject: "ah", Reply: "r"}); !errors.Is(err, jetstream.ErrAsyncPublishReplySubjectSet) {
		t.Errorf("reply subject: %v", err)
	}
}

// WithStallWait is how long a PublishAsync waits for room under
// WithPublishAsyncMaxPending before ErrTooManyStalledMsgs (default
// 200 ms); a synchronous publish refuses it.
func TestFacadePublishAsyncStallWait(t *testing.T) {
	_, js := facadeJetStream(t, jetstream.WithPublishAsyncMaxPending(1))
	nc := js.Conn()
	// A plain subscriber that never answers holds the one ack back.
	if _, err := nc.Subscribe("silent", func(*nats.Msg) {}); err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	if _, err := js.PublishAsync("silent", nil); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		opts     []jetstream.PublishOpt
		min, max time.Duration
	}{
		{nil, 200 * time.Millisecond, 2 * time.Second},
		{[]jetstream.PublishOpt{jetstream.WithStallWait(600 * time.Millisecond)}, 600 * time.Millisecond, 3 * time.Second},
		{[]jetstream.PublishOpt{jetstream.WithStallWait(20 * time.Millisecond)}, 20 * time.Millisecond, 190 * time.Millisecond},
	} {
		start := time.Now()
		_, err := js.PublishAsync("silent", nil, c.opts...)
		took := time.Since(start)
		if !errors.Is(err, jetstream.ErrTooManyStalledMsgs) || took < c.min || took > c.max {
			t.Errorf("stalled publish %d: %v after %v, want ErrTooManyStalledMsgs within [%v, %v]", len(c.opts), err, took, c.min, c.max)
		}
	}
	if _, err := js.Publish(context.Background(), "silent", nil, jetstream.WithStallWait(time.Second)); !errors.Is(err, jetstream.ErrInvalidOption) {
		t.Errorf("sync publish with a stall wait: %v", err)
	}
	js.CleanupPublisher()
}

// WithRetryAttempts and WithRetryWait are nats.go's: a publish (sync or
// async) to no stream is sent 1 + WithRetryAttempts times (the default
// DefaultPubRetryAttempts; 0: once), counted with the connection's
// OutMsgs; a stream that appears meanwhile takes the message.
func TestFacadePublishRetryOptions(t *testing.T) {
	ctx, js := facadeJetStream(t)
	nc := js.Conn()
	short := jetstream.WithRetryWait(time.Millisecond)
	for _, c := range []struct {
		opts  []jetstream.PublishOpt
		sends uint64
	}{
		{[]jetstream.PublishOpt{jetstream.WithRetryAttempts(0), short}, 1},
		{[]jetstream.PublishOpt{jetstream.WithRetryAttempts(1), short}, 2},
		{[]jetstream.PublishOpt{jetstream.WithRetryAttempts(4), short}, 5},
		{[]jetstream.PublishOpt{jetstream.WithRetryAttempts(7), short}, 8},
		{nil, 1 + jetstream.DefaultPubRetryAttempts},
	} {
		if n := sentBy(nc.Binding(), func() {
			if _, err := js.Publish(ctx, "nostream", nil, c.opts...); !errors.Is(err, jetstream.ErrNoStreamResponse) {
				t.Errorf("sync: %v", err)
			}
		}); n != c.sends {
			t.Errorf("sync publish sent %d messages, want %d", n, c.sends)
		}
		if n := sentBy(nc.Binding(), func() {
			f, err := js.PublishAsync("nostream", nil, c.opts...)
			if err != nil {
				t.Fatal(err)
			}
			select {
			case err := <-f.Err():
				if !errors.Is(err, jetstream.ErrNoStreamResponse) {
					t.Errorf("async: %v", err)
				}
			case ack := <-f.Ok():
				t.Errorf("acked without a stream: %+v", ack)
			}
		}); n != c.sends {
			t.Errorf("async publish sent %d messages, want %d", n, c.sends)
		}
	}

	// A stream created once both publishes have retried takes them.
	patient := []jetstream.PublishOpt{jetstream.WithRetryAttempts(1_000_000), jetstream.WithRetryWait(5 * time.Millisecond)}
	before := nc.Stats().OutMsgs
	late, err := js.PublishAsync("late", []byte("a"), patient...)
	if err != nil {
		t.Fatal(err)
	}
	lateSync := make(chan error, 1)
	go func() {
		ack, err := js.Publish(ctx, "late", []byte("s"), patient...)
		if err == nil && ack.Stream != "LATE" {
			err = fmt.Errorf("ack %+v", ack)
		}
		lateSync <- err
	}()
	for nc.Stats().OutMsgs < before+6 { // each sent and retried twice
		time.Sleep(time.Millisecond)
	}
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "LATE", Subjects: []string{"late"}}); err != nil {
		t.Fatal(err)
	}
	if err := <-lateSync; err != nil {
		t.Errorf("sync publish retried until the stream came: %v", err)
	}
	select {
	case ack := <-late.Ok():
		if ack.Stream != "LATE" {
			t.Errorf("async ack: %+v", ack)
		}
	case err := <-late.Err():
		t.Errorf("async publish retried until the stream came: %v", err)
	}

	// A context that ends while the publish retries ends it, with the
	// context's error, as in nats.go.
	short2, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	if _, err := js.Publish(short2, "nostream", nil, patient...); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("a deadline while retrying: %v", err)
	}
	if n := sentBy(nc.Binding(), func() {
		if _, err := js.Publish(ctx, "x", nil, jetstream.WithRetryAttempts(-1)); !errors.Is(err, jetstream.ErrInvalidOption) {
			t.Errorf("negative attempts: %v", err)
		}
		if _, err := js.Publish(ctx, "x", nil, jetstream.WithRetryWait(0)); !errors.Is(err, jetstream.ErrInvalidOption) {
			t.Errorf("zero wait: %v", err)
		}
		if _, err := js.PublishAsync("x", nil, jetstream.WithRetryAttempts(-1)); !errors.Is(err, jetstream.ErrInvalidOption) {
			t.Errorf("async negative attempts: %v", err)
		}
	}); n != 0 {
		t.Errorf("refused publishes sent %d messages", n)
	}
}

// Options reports the context's settings; NewWithAPIPrefix sends the API
// requests under its prefix (with or without the final dot).
func TestFacadeJetStreamOptionsAndAPIPrefix(t *testing.T) {
	ctx, js := facadeJetStream(t)
	nc := js.Conn()
	if o := js.Options(); o.APIPrefix != "" || o.Domain != "" || o.DefaultTimeout != 5*time.Second {
		t.Errorf("New's options: %+v", o)
	}
	for _, prefix := range []string{jetstream.DefaultAPIPrefix, "$JS.API"} {
		pjs, err := jetstream.NewWithAPIPrefix(nc, prefix, jetstream.WithDefaultTimeout(2*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		if o := pjs.Options(); o.APIPrefix != prefix || o.DefaultTimeout != 2*time.Second {
			t.Errorf("NewWithAPIPrefix's options: %+v", o)
		}
		if _, err := pjs.CreateOrUpdateStream(ctx, jetstream.StreamConfig{Name: "AP", Subjects: []string{"ap"}}); err != nil {
			t.Errorf("create through %q: %v", prefix, err)
		}
	}
	elsewhere, err := jetstream.NewWithAPIPrefix(nc, "$JS.elsewhere.API", jetstream.WithDefaultTimeout(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := elsewhere.AccountInfo(ctx); err == nil {
		t.Error("an API prefix nobody serves answered")
	}
	if _, err := jetstream.NewWithAPIPrefix(nc, ""); err == nil {
		t.Error("empty API prefix accepted")
	}
	djs, err := jetstream.NewWithDomain(nc, "hub")
	if err != nil {
		t.Fatal(err)
	}
	if o := djs.Options(); o.Domain != "hub" {
		t.Errorf("NewWithDomain's options: %+v", o)
	}
	if _, err := jetstream.New(nc, jetstream.WithPublishAsyncMaxPending(0)); !errors.Is(err, jetstream.ErrInvalidOption) {
		t.Errorf("WithPublishAsyncMaxPending(0): %v", err)
	}
}

// The stream config fields of newer servers travel to the server and
// back; a source's Domain becomes its External API prefix.
func TestFacadeStreamConfigNewFields(t *testing.T) {
	ctx, js := facadeJetStream(t)
	stream, err := js.CreateStream(ctx, jetstream.StreamConfig{
		Name: "NF", Subjects: []string{"nf"},
		ConsumerLimits: jetstream.StreamConsumerLimits{InactiveThreshold: time.Hour, MaxAckPending: 50},
		PersistMode:    jetstream.AsyncPersistMode,
	})
	if err != nil {
		t.Fatal(err)
	}
	info, err := stream.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	c := info.Config
	if c.ConsumerLimits.InactiveThreshold != time.Hour || c.ConsumerLimits.MaxAckPending != 50 ||
		c.PersistMode != jetstream.AsyncPersistMode {
		t.Errorf("read back: %+v", c)
	}
	// (Async persistence excludes atomic batches.)
	batched, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "NF2", Subjects: []string{"nf2"},
		AllowAtomicPublish: true, AllowBatchPublish: true, AllowMsgSchedules: true})
	if err != nil {
		t.Fatal(err)
	}
	if c := batched.CachedInfo().Config; !c.AllowAtomicPublish || !c.AllowBatchPublish || !c.AllowMsgSchedules ||
		c.PersistMode != jetstream.DefaultPersistMode {
		t.Errorf("read back: %+v", c)
	}
	if c.PersistMode.String() != "Async" || jetstream.DefaultPersistMode.String() != "Default" {
		t.Errorf("persist mode texts: %q", c.PersistMode)
	}
	// A consumer without limits of its own gets the stream's.
	cons, err := stream.CreateConsumer(ctx, jetstream.ConsumerConfig{Durable: "limited"})
	if err != nil {
		t.Fatal(err)
	}
	if cfg := cons.CachedInfo().Config; cfg.MaxAckPending != 50 {
		t.Errorf("consumer under the stream's limits: max ack pending %d", cfg.MaxAckPending)
	}

	agg, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "AGG",
		Sources: []*jetstream.StreamSource{{Name: "NF", Domain: "hub"}}})
	if err != nil {
		t.Fatal(err)
	}
	src := agg.CachedInfo().Config.Sources
	if len(src) != 1 || src[0].External == nil || src[0].External.APIPrefix != "$JS.hub.API" {
		t.Errorf("source with a domain: %+v", src)
	}
	through, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "THROUGH", Sources: []*jetstream.StreamSource{
		{Name: "NF", Consumer: &jetstream.StreamConsumerSource{Name: "c1", DeliverSubject: "through.c1"}}}})
	if err != nil {
		t.Fatal(err)
	}
	if src := through.CachedInfo().Config.Sources; len(src) != 1 || src[0].Consumer == nil ||
		*src[0].Consumer != (jetstream.StreamConsumerSource{Name: "c1", DeliverSubject: "through.c1"}) {
		t.Errorf("source through a consumer: %+v", src)
	}
	_, err = js.CreateStream(ctx, jetstream.StreamConfig{Name: "BAD",
		Sources: []*jetstream.StreamSource{{Name: "NF", Domain: "hub", External: &jetstream.ExternalStream{APIPrefix: "x"}}}})
	if err == nil {
		t.Error("a source with a domain and an external accepted")
	}

	acct, err := js.AccountInfo(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if acct.Limits.MaxAckPending != -1 || acct.Limits.MemoryMaxStreamBytes != -1 || acct.Limits.StoreMaxStreamBytes != -1 {
		t.Errorf("account limits: %+v", acct.Limits)
	}
}

// The API error sentinels match the server's refusals by err_code, and
// the facade's own checks return nats.go's errors.
func TestFacadeErrorSentinels(t *testing.T) {
	ctx, js := facadeJetStream(t)
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "ES", Subjects: []string{"es.>"}, MaxConsumers: 1, MaxMsgSize: 10}); err != nil {
		t.Fatal(err)
	}
	if _, err := js.CreateConsumer(ctx, "ES", jetstream.ConsumerConfig{Durable: "one"}); err != nil {
		t.Fatal(err)
	}
	if _, err := js.CreateConsumer(ctx, "ES", jetstream.ConsumerConfig{Durable: "two"}); !errors.Is(err, jetstream.ErrMaximumConsumersLimit) {
		t.Errorf("second consumer over MaxConsumers 1: %v", err)
	}
	if err := js.DeleteConsumer(ctx, "ES", "one"); err != nil {
		t.Fatal(err)
	}
	_, err := js.CreateConsumer(ctx, "ES", jetstream.ConsumerConfig{Durable: "ov", FilterSubjects: []string{"es.>", "es.a"}})
	if !errors.Is(err, jetstream.ErrOverlappingFilterSubjects) {
		t.Errorf("overlapping filters: %v", err)
	}
	_, err = js.CreateConsumer(ctx, "ES", jetstream.ConsumerConfig{Durable: "dup", FilterSubject: "es.a", FilterSubjects: []string{"es.b"}})
	if !errors.Is(err, jetstream.ErrDuplicateFilterSubjects) {
		t.Errorf("FilterSubject with FilterSubjects: %v", err)
	}
	_, err = js.CreateConsumer(ctx, "ES", jetstream.ConsumerConfig{Durable: "empty", FilterSubjects: []string{"es.a", ""}})
	if !errors.Is(err, jetstream.ErrEmptyFilter) {
		t.Errorf("an empty filter: %v", err)
	}
	_, err = js.Publish(ctx, "es.big", []byte(strings.Repeat("x", 100)))
	if !errors.Is(err, jetstream.ErrStreamMessageExceedsMaximum) {
		t.Errorf("message over MaxMsgSize: %v", err)
	}
	if _, err := js.Stream(ctx, ""); !errors.Is(err, jetstream.ErrStreamNameRequired) || err.Error() != "nats: stream name is required" {
		t.Errorf("no stream name: %v", err)
	}
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "a.b"}); !errors.Is(err, jetstream.ErrInvalidStreamName) {
		t.Errorf("bad stream name: %v", err)
	}
	if _, err := js.StreamNameBySubject(ctx, "a b"); !errors.Is(err, jetstream.ErrInvalidSubject) {
		t.Errorf("bad subject: %v", err)
	}
	if name, err := js.StreamNameBySubject(ctx, "es.x"); err != nil || name != "ES" {
		t.Errorf("StreamNameBySubject: %q, %v", name, err)
	}
	if !errors.Is(&jetstream.APIError{ErrorCode: jetstream.JSErrCodeBadRequest}, jetstream.ErrBadRequest) ||
		errors.Is(&jetstream.APIError{ErrorCode: jetstream.JSErrCodeBadRequest}, jetstream.ErrConsumerCreate) {
		t.Error("API sentinels match by code")
	}
}

// The bucket statuses are nats.go's types, with the backing stream's info
// and the bucket's config; the Key-Value and Object Store checks return
// nats.go's errors.
func TestFacadeBucketStatusesAndChecks(t *testing.T) {
	ctx, js := facadeJetStream(t)
	if _, err := js.CreateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: "big", History: jetstream.KeyValueMaxHistory + 1}); !errors.Is(err, jetstream.ErrHistoryTooLarge) {
		t.Errorf("history 65: %v", err)
	}
	kv, err := js.CreateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: "cfg", History: 5, MaxValueSize: 128,
		Description: "d", Storage: jetstream.MemoryStorage})
	if err != nil {
		t.Fatal(err)
	}
	st, err := kv.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	kst, ok := st.(*jetstream.KeyValueBucketStatus)
	if !ok {
		t.Fatalf("status type %T", st)
	}
	if cfg := st.Config(); cfg.Bucket != "cfg" || cfg.History != 5 || cfg.MaxValueSize != 128 || cfg.Description != "d" ||
		cfg.Storage != jetstream.MemoryStorage {
		t.Errorf("Config: %+v", cfg)
	}
	if si := kst.StreamInfo(); si == nil || si.Config.Name != "KV_cfg" {
		t.Errorf("StreamInfo: %+v", si)
	}
	if _, err := kv.Put(ctx, "k", []byte("v")); err != nil {
		t.Fatal(err)
	}
	if err := kv.Delete(ctx, "k", jetstream.PurgeTTL(time.Minute)); !errors.Is(err, jetstream.ErrTTLOnDeleteNotSupported) {
		t.Errorf("Delete with PurgeTTL: %v", err)
	}
	if err := kv.Delete(ctx, "k"); err != nil {
		t.Fatal(err)
	}
	if err := kv.PurgeDeletes(ctx, jetstream.DeleteMarkersOlderThan(-1)); err != nil {
		t.Fatal(err)
	}
	if st, err = kv.Status(ctx); err != nil || st.Values() != 0 {
		t.Errorf("after purging every marker: %d values, %v", st.Values(), err)
	}

	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "KV_fake", Subjects: []string{"fake.>"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := js.KeyValue(ctx, "fake"); !errors.Is(err, jetstream.ErrBadBucket) {
		t.Errorf("a KV_ stream that is no bucket: %v", err)
	}
	if _, err := js.KeyValue(ctx, "none"); !errors.Is(err, jetstream.ErrBucketNotFound) {
		t.Errorf("no bucket: %v", err)
	}

	obs, err := js.CreateObjectStore(ctx, jetstream.ObjectStoreConfig{Bucket: "files"})
	if err != nil {
		t.Fatal(err)
	}
	ost, err := obs.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if bs, ok := ost.(*jetstream.ObjectBucketStatus); !ok || bs.StreamInfo() == nil || bs.StreamInfo().Config.Name != "OBJ_files" {
		t.Errorf("object status: %T", ost)
	}
	data := []byte("hello")
	info, err := obs.PutBytes(ctx, "a", data)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(data)
	h := sha256.New()
	h.Write(data)
	if jetstream.GetObjectDigestValue(h) != info.Digest {
		t.Errorf("digest %q, stored %q", jetstream.GetObjectDigestValue(h), info.Digest)
	}
	if d, err := jetstream.DecodeObjectDigest(info.Digest); err != nil || string(d) != string(sum[:]) {
		t.Errorf("DecodeObjectDigest: %x, %v", d, err)
	}
	if _, err := jetstream.DecodeObjectDigest("nodigest"); !errors.Is(err, jetstream.ErrInvalidDigestFormat) {
		t.Errorf("DecodeObjectDigest without '=': %v", err)
	}
	link, err := obs.AddLink(ctx, "b", info)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		err, want error
	}{
		{second(obs.AddLink(ctx, "", info)), jetstream.ErrNameRequired},
		{second(obs.AddLink(ctx, "c", nil)), jetstream.ErrObjectRequired},
		{second(obs.AddLink(ctx, "c", link)), jetstream.ErrNoLinkToLink},
		{second(obs.AddBucketLink(ctx, "c", nil)), jetstream.ErrBucketRequired},
		{second(obs.GetInfo(ctx, "")), jetstream.ErrNameRequired},
		{second(obs.Put(ctx, jetstream.ObjectMeta{Name: "l", Opts: &jetstream.ObjectMetaOptions{Link: &jetstream.ObjectLink{Bucket: "files"}}}, strings.NewReader(""))),
			jetstream.ErrLinkNotAllowed},
		{obs.UpdateMeta(ctx, "missing", jetstream.ObjectMeta{Name: "other"}), jetstream.ErrUpdateMetaDeleted},
	} {
		if !errors.Is(c.err, c.want) {
			t.Errorf("got %v, want %v", c.err, c.want)
		}
	}
	if err := obs.Delete(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	deleted, err := obs.GetInfo(ctx, "a", jetstream.GetObjectInfoShowDeleted())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := obs.AddLink(ctx, "c", deleted); !errors.Is(err, jetstream.ErrNoLinkToDeleted) {
		t.Errorf("link to a deleted object: %v", err)
	}
	if _, err := obs.AddBucketLink(ctx, "bucket", obs); err != nil {
		t.Fatal(err)
	}
	if _, err := obs.Get(ctx, "bucket"); !errors.Is(err, jetstream.ErrCantGetBucket) {
		t.Errorf("Get of a bucket link: %v", err)
	}
}

func second[T any](_ T, err error) error { return err }
