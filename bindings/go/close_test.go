package natsio_test

import (
	"context"
	"errors"
	"testing"
	"time"

	natsio "github.com/libnatsio/natsio/bindings/go"
)

// Closing a connection with operations in flight ends each of them with
// ErrConnectionClosed, promptly and once: a request nobody answers, a fetch
// waiting on an empty consumer, a KV watcher waiting for a change, a flush
// the (stopped) server cannot answer. None keeps its goroutine, and none
// waits out its own (long) deadline.
func TestCloseEndsEveryPendingOperation(t *testing.T) {
	s := startTestServer(t, "-js", "-sd", t.TempDir())
	nc := connectTo(t, s.url)
	js := got(nc.JetStream()).must(t)
	ctx := ctxTimeout(t, 10*time.Second)
	got(js.CreateStream(ctx, natsio.StreamConfig{Name: "P", Subjects: []string{"p.>"}, Storage: natsio.MemoryStorage})).must(t)
	got(js.CreateConsumer(ctx, "P", natsio.ConsumerConfig{Durable: "idle"})).must(t)
	kv := got(js.CreateKeyValue(ctx, natsio.KeyValueConfig{Bucket: "PEND"})).must(t)
	watcher := got(kv.WatchAll(ctx, natsio.UpdatesOnly())).must(t)
	if e, err := watcher.Next(ctx); e != nil || err != nil {
		t.Fatalf("the initial marker: %v, %v", e, err)
	}

	// A responder that takes the request and never answers: it tells when
	// the request has reached the server.
	silent := connectTo(t, s.url)
	taken := got(silent.SubscribeSync("svc.silent")).must(t)
	if err := silent.Flush(ctx); err != nil {
		t.Fatal(err)
	}

	long, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	results := make(chan string, 4)
	ended := func(what string, err error) {
		if err == nil {
			t.Errorf("%s: succeeded after close", what)
		} else if !isClosed(err) {
			t.Errorf("%s: %v, want ErrConnectionClosed", what, err)
		}
		results <- what
	}
	go func() { _, err := nc.Request(long, "svc.silent", []byte("?")); ended("request", err) }()
	go func() {
		_, err := js.Fetch(long, "P", "idle", natsio.FetchMaxMessages(1), natsio.FetchExpires(50*time.Second))
		ended("fetch", err)
	}()
	go func() { _, err := watcher.Next(long); ended("watch", err) }()

	// In flight: the request reached the responder, the fetch's pull
	// request is waiting on the server.
	if _, err := taken.NextMsg(ctxTimeout(t, 10*time.Second)); err != nil {
		t.Fatalf("the request never reached the server: %v", err)
	}
	eventually(t, "the fetch's pull request waiting", func() bool {
		info, err := js.ConsumerInfo(ctx, "P", "idle")
		return err == nil && info.NumWaiting >= 1
	})

	// A flush the server cannot answer: stopped (SIGSTOP) with everything
	// above in flight.
	resume := s.pause(t)
	defer resume()
	go func() { ended("flush", nc.Flush(long)) }()

	start := time.Now()
	if err := nc.Close(); err != nil {
		t.Fatalf("close: %v", err)
	}
	for range 4 {
		select {
		case <-results:
		case <-time.After(10 * time.Second):
			t.Fatalf("an operation still pending 10 s after close")
		}
	}
	t.Logf("all four ended %v after close", time.Since(start))
}

func isClosed(err error) bool { return errors.Is(err, natsio.ErrConnectionClosed) }
