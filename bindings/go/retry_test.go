package natsio_test

// RetryAttempts and RetryWait: a publish to a subject no stream holds is
// sent 1 + retries times, counted with the connection's OutMsgs (never
// timed).

import (
	"testing"
	"time"

	natsio "github.com/libnatsio/natsio/bindings/go"
)

// sentBy is how many messages publish made nc send.
func sentBy(nc *natsio.Conn, publish func()) uint64 {
	before := nc.Stats().OutMsgs
	publish()
	return nc.Stats().OutMsgs - before
}

func TestPublishRetryAttemptsCount(t *testing.T) {
	nc, js := jetStream(t)
	ctx := ctxTimeout(t, 30*time.Second)
	short := natsio.RetryWait(time.Millisecond) // ceil: 1 ms
	for _, c := range []struct {
		name  string
		opts  []natsio.PubOpt
		sends uint64
	}{
		{"none", []natsio.PubOpt{natsio.RetryAttempts(0), short}, 1},
		{"one", []natsio.PubOpt{natsio.RetryAttempts(1), short}, 2},
		{"four", []natsio.PubOpt{natsio.RetryAttempts(4), short}, 5},
		{"default", nil, 1 + natsio.DefaultPubRetryAttempts},
		{"sub-ms wait", []natsio.PubOpt{natsio.RetryAttempts(3), natsio.RetryWait(time.Microsecond)}, 4},
	} {
		t.Run(c.name, func(t *testing.T) {
			sync := sentBy(nc, func() {
				_, err := js.Publish(ctx, "nostream", nil, c.opts...)
				wantErr(t, err, natsio.ErrNoStreamResponse)
			})
			if sync != c.sends {
				t.Errorf("Publish sent %d messages, want %d", sync, c.sends)
			}
			async := sentBy(nc, func() {
				f, err := js.PublishAsync("nostream", nil, c.opts...)
				noErr(t, err)
				_, err = f.Wait(ctx)
				wantErr(t, err, natsio.ErrNoStreamResponse)
			})
			if async != c.sends {
				t.Errorf("PublishAsync sent %d messages, want %d", async, c.sends)
			}
		})
	}
}

// A stream that appears while a publish retries takes the message: the
// publish waits (counting its sends) until it has retried, then the
// stream is created.
func TestPublishRetryUntilTheStreamComes(t *testing.T) {
	nc, js := jetStream(t)
	ctx := ctxTimeout(t, 30*time.Second)
	before := nc.Stats().OutMsgs
	f, err := js.PublishAsync("late", []byte("x"), natsio.RetryAttempts(1_000_000), natsio.RetryWait(5*time.Millisecond))
	noErr(t, err)
	for nc.Stats().OutMsgs < before+3 { // sent, and retried twice
		time.Sleep(time.Millisecond)
	}
	got(js.CreateStream(ctx, natsio.StreamConfig{Name: "LATE", Subjects: []string{"late"}})).must(t)
	ack, err := f.Wait(ctx)
	noErr(t, err)
	if ack.Stream != "LATE" {
		t.Errorf("ack %+v", ack)
	}
}

func TestPublishRetryArgumentErrors(t *testing.T) {
	nc, js := jetStream(t)
	ctx := ctxTimeout(t, 10*time.Second)
	for _, c := range []struct {
		opt  natsio.PubOpt
		name string
	}{
		{natsio.RetryAttempts(-1), "RetryAttempts"},
		{natsio.RetryWait(0), "RetryWait"},
		{natsio.RetryWait(-time.Second), "RetryWait"},
	} {
		sent := sentBy(nc, func() {
			_, err := js.Publish(ctx, "nostream", nil, c.opt)
			wantErr(t, err, natsio.ErrInvalidArgument, c.name)
			_, err = js.PublishAsync("nostream", nil, c.opt)
			wantErr(t, err, natsio.ErrInvalidArgument, c.name)
		})
		if sent != 0 {
			t.Errorf("%s: a refused publish sent %d messages", c.name, sent)
		}
	}
}
