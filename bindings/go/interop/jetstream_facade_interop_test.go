package interop

// The jetstream facade (bindings/go/nats/jetstream) against nats.go's
// jetstream package: its types read nats.go's JSON of every field and
// write it back the same, and its publish options put the same headers on
// the wire.

import (
	"context"
	"reflect"
	"testing"
	"time"

	facadenats "github.com/libnatsio/natsio/bindings/go/nats"
	facade "github.com/libnatsio/natsio/bindings/go/nats/jetstream"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

func TestJetStreamFacadeTypesJSONMatchNatsGo(t *testing.T) {
	sameJSON[jetstream.StreamInfo, facade.StreamInfo](t, "StreamInfo")
	sameJSON[jetstream.ConsumerInfo, facade.ConsumerInfo](t, "ConsumerInfo")
	sameJSON[jetstream.AccountInfo, facade.AccountInfo](t, "AccountInfo")
	sameJSON[jetstream.PubAck, facade.PubAck](t, "PubAck")
	sameJSON[jetstream.StreamPurgeRequest, facade.StreamPurgeRequest](t, "StreamPurgeRequest")
	sameJSON[jetstream.ConsumerResetResponse, facade.ConsumerResetResponse](t, "ConsumerResetResponse")
}

// The schedule options and WithExpectLastSequenceForSubject set the
// headers nats.go's set, as a plain subscriber of the subject receives
// them.
func TestJetStreamFacadePublishHeadersMatchNatsGo(t *testing.T) {
	url := startServer(t)
	nc, err := nats.Connect(url)
	noErr(t, err)
	t.Cleanup(nc.Close)
	theirs := got(jetstream.New(nc)).must(t)
	fc, err := facadenats.Connect(url)
	noErr(t, err)
	t.Cleanup(fc.Close)
	ours := got(facade.New(fc)).must(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	// A stream without schedules: it may refuse the schedules, but the
	// messages reach the subscriber as sent.
	got(theirs.CreateStream(ctx, jetstream.StreamConfig{Name: "H", Subjects: []string{"h"}})).must(t)
	sub := got(nc.SubscribeSync("h")).must(t)
	noErr(t, nc.Flush())

	at := time.Date(2030, 1, 2, 3, 4, 5, 0, time.FixedZone("X", 3600))
	cases := []struct {
		name string
		n    jetstream.PublishOpt
		f    facade.PublishOpt
	}{
		{"at", jetstream.WithScheduleAt(at), facade.WithScheduleAt(at)},
		{"every", jetstream.WithScheduleEvery(90 * time.Second), facade.WithScheduleEvery(90 * time.Second)},
		{"cron", jetstream.WithScheduleCron("0 0 * * * *"), facade.WithScheduleCron("0 0 * * * *")},
		{"daily", jetstream.WithScheduleCron(jetstream.ScheduleDaily), facade.WithScheduleCron(facade.ScheduleDaily)},
		{"target", jetstream.WithScheduleTarget("t.x"), facade.WithScheduleTarget("t.x")},
		{"source", jetstream.WithScheduleSource("s.x"), facade.WithScheduleSource("s.x")},
		{"ttl", jetstream.WithScheduleTTL(90 * time.Second), facade.WithScheduleTTL(90 * time.Second)},
		{"ttl never", jetstream.WithScheduleTTLNever(), facade.WithScheduleTTLNever()},
		{"zone", jetstream.WithScheduleTimeZone("Europe/Paris"), facade.WithScheduleTimeZone("Europe/Paris")},
		{"rollup", jetstream.WithScheduleRollup(), facade.WithScheduleRollup()},
		{"last for subject", jetstream.WithExpectLastSequenceForSubject(3, "h.*"), facade.WithExpectLastSequenceForSubject(3, "h.*")},
	}
	for _, c := range cases {
		_, _ = theirs.Publish(ctx, "h", []byte(c.name), c.n)
		want := got(sub.NextMsgWithContext(ctx)).must(t).Header
		_, _ = ours.Publish(ctx, "h", []byte(c.name), c.f)
		have := got(sub.NextMsgWithContext(ctx)).must(t).Header
		if !reflect.DeepEqual(map[string][]string(want), map[string][]string(have)) {
			t.Errorf("%s: nats.go %v, facade %v", c.name, want, have)
		}
	}
}
