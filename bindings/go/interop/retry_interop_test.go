package interop

// The publish retries on "no responders" against nats.go's: the same
// publish to a subject no stream holds, with nats.go's retry options and
// the facades', sends as many messages (each connection's
// Stats().OutMsgs), synchronous or not.

import (
	"context"
	"testing"
	"time"

	facadenats "github.com/libnatsio/natsio/bindings/go/nats"
	facade "github.com/libnatsio/natsio/bindings/go/nats/jetstream"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// sends is how many messages publish made a connection with these stats
// send.
func sends(stats func() uint64, publish func()) uint64 {
	before := stats()
	publish()
	return stats() - before
}

// waitFuture waits for an asynchronous publish's outcome.
func waitFuture(t *testing.T, ok any, errs <-chan error) {
	t.Helper()
	select {
	case err := <-errs:
		if err == nil {
			t.Error("a nil error")
		}
	case <-time.After(20 * time.Second):
		t.Fatalf("no outcome (%T)", ok)
	}
}

func TestPublishRetryAttemptsMatchNatsGo(t *testing.T) {
	url := startServer(t)
	nc := got(nats.Connect(url)).must(t)
	t.Cleanup(nc.Close)
	fc := got(facadenats.Connect(url)).must(t)
	t.Cleanup(fc.Close)
	theirStats := func() uint64 { return nc.Stats().OutMsgs }
	ourStats := func() uint64 { return fc.Stats().OutMsgs }
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	theirs := got(jetstream.New(nc)).must(t)
	ours := got(facade.New(fc)).must(t)
	theirLegacy := got(nc.JetStream()).must(t)
	ourLegacy := got(fc.JetStream()).must(t)
	for _, n := range []int{-1, 0, 1, 3, 6} { // -1: the options left out
		var their []jetstream.PublishOpt
		var our []facade.PublishOpt
		var theirL []nats.PubOpt
		var ourL []facadenats.PubOpt
		if n >= 0 {
			their = []jetstream.PublishOpt{jetstream.WithRetryAttempts(n), jetstream.WithRetryWait(time.Millisecond)}
			our = []facade.PublishOpt{facade.WithRetryAttempts(n), facade.WithRetryWait(time.Millisecond)}
			theirL = []nats.PubOpt{nats.RetryAttempts(n), nats.RetryWait(time.Millisecond)}
			ourL = []facadenats.PubOpt{facadenats.RetryAttempts(n), facadenats.RetryWait(time.Millisecond)}
		}
		for _, c := range []struct {
			what        string
			theirs, our func()
		}{
			{"jetstream Publish",
				func() { _, _ = theirs.Publish(ctx, "nostream", nil, their...) },
				func() { _, _ = ours.Publish(ctx, "nostream", nil, our...) }},
			{"jetstream PublishAsync",
				func() {
					f := got(theirs.PublishAsync("nostream", nil, their...)).must(t)
					waitFuture(t, f.Ok(), f.Err())
				},
				func() {
					f := got(ours.PublishAsync("nostream", nil, our...)).must(t)
					waitFuture(t, f.Ok(), f.Err())
				}},
			{"legacy Publish",
				func() { _, _ = theirLegacy.Publish("nostream", nil, theirL...) },
				func() { _, _ = ourLegacy.Publish("nostream", nil, ourL...) }},
			{"legacy PublishAsync",
				func() {
					f := got(theirLegacy.PublishAsync("nostream", nil, theirL...)).must(t)
					waitFuture(t, f.Ok(), f.Err())
				},
				func() {
					f := got(ourLegacy.PublishAsync("nostream", nil, ourL...)).must(t)
					waitFuture(t, f.Ok(), f.Err())
				}},
			{"legacy PublishAsync without RetryWait",
				func() {
					f := got(theirLegacy.PublishAsync("nostream", nil, theirL[:min(len(theirL), 1)]...)).must(t)
					waitFuture(t, f.Ok(), f.Err())
				},
				func() {
					f := got(ourLegacy.PublishAsync("nostream", nil, ourL[:min(len(ourL), 1)]...)).must(t)
					waitFuture(t, f.Ok(), f.Err())
				}},
		} {
			want, have := sends(theirStats, c.theirs), sends(ourStats, c.our)
			if want != have {
				t.Errorf("%s, %d retries: nats.go sent %d messages, the facade %d", c.what, n, want, have)
			}
			if n >= 0 && want != uint64(1+n) || n < 0 && want == 0 {
				t.Errorf("%s, %d retries: nats.go sent %d messages", c.what, n, want)
			}
		}
	}
}
