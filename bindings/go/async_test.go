package natsio_test

// The asynchronous model end to end: no OS thread per waiting call, a
// context's end cancelling the library's operation, consume and watch
// delivering what the library buffered while the reader was away, and no
// handler call once Unsubscribe has returned.

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	natsio "github.com/libnatsio/natsio/bindings/go"
)

// osThreads is the process's OS thread count (Threads: of /proc/self/status).
func osThreads(t *testing.T) int {
	t.Helper()
	f, err := os.Open("/proc/self/status")
	if err != nil {
		t.Skipf("no /proc/self/status: %v", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "Threads:"); ok {
			n, err := strconv.Atoi(strings.TrimSpace(v))
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Fatal("no Threads: line in /proc/self/status")
	return 0
}

// threadPeak samples osThreads every 2 ms until stop is called.
func threadPeak(t *testing.T) (stop func() int) {
	var peak atomic.Int64
	sample := func() {
		if n := int64(osThreads(t)); n > peak.Load() {
			peak.Store(n)
		}
	}
	sample()
	done, quit := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(2 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-quit:
				return
			case <-tick.C:
				sample()
			}
		}
	}()
	return func() int {
		close(quit)
		<-done
		sample()
		return int(peak.Load())
	}
}

// Thousands of KV gets waiting at once from goroutines hold no OS thread
// each: the thread count at the peak does not grow with the number in
// flight.
func TestThreadsStayBoundedUnderConcurrentKVGets(t *testing.T) {
	_, js := jetStream(t)
	ctx := ctxTimeout(t, 60*time.Second)
	kv := got(js.CreateKeyValue(ctx, natsio.KeyValueConfig{Bucket: "PAR", Storage: natsio.MemoryStorage})).must(t)
	const keys = 50
	for i := range keys {
		got(kv.Put(ctx, fmt.Sprint("k", i), []byte(fmt.Sprint("v", i)))).must(t)
	}

	// gets runs total gets from par goroutines, all started together, and
	// returns the thread peak and the most gets seen in flight at once.
	gets := func(total, par int) (peak int, inFlight int64) {
		var flying, most atomic.Int64
		var failures atomic.Int64
		start := make(chan struct{})
		var wg sync.WaitGroup
		for g := range par {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				for i := g; i < total; i += par {
					n := flying.Add(1)
					for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
					}
					e, err := kv.Get(ctx, fmt.Sprint("k", i%keys))
					flying.Add(-1)
					if err != nil || string(e.Value) != fmt.Sprint("v", i%keys) {
						failures.Add(1)
					}
				}
			}()
		}
		stop := threadPeak(t)
		close(start)
		wg.Wait()
		peak = stop()
		if f := failures.Load(); f != 0 {
			t.Fatalf("%d of %d gets failed", f, total)
		}
		return peak, most.Load()
	}

	gets(500, 50) // warm up: the Go runtime's and the library's threads exist
	runtime.GC()
	idle := osThreads(t)
	lowPeak, lowFlight := gets(2000, 8)
	// 10,000 gets, up to 5,000 at once (the race detector allows 8,128
	// live goroutines).
	highPeak, highFlight := gets(10000, 5000)
	t.Logf("threads: idle %d; peak %d with up to %d gets in flight; peak %d with up to %d in flight",
		idle, lowPeak, lowFlight, highPeak, highFlight)
	if highFlight < 500 {
		t.Fatalf("only %d gets were in flight at once: the test did not load the library", highFlight)
	}
	// Generous (a blocking wait per call would add thousands): at most
	// twice the idle count (the target) and a few more than with
	// 8 in flight.
	if highPeak > 2*idle || highPeak > lowPeak+8 {
		t.Fatalf("thread count grew with the gets in flight: idle %d, peak %d at %d in flight, %d at %d",
			idle, lowPeak, lowFlight, highPeak, highFlight)
	}
}

// A context's end cancels the library's pending operation (not only the
// wait), and what an iterator had not handed out stays in it.
func TestContextCancelsPendingOperations(t *testing.T) {
	nc, js := jetStream(t)
	ctx := ctxTimeout(t, 20*time.Second)
	baseline := natsio.LiveHandlesForTest()

	cancelSoon := func() context.Context {
		c, cancel := context.WithCancel(context.Background())
		time.AfterFunc(100*time.Millisecond, cancel)
		return c
	}
	quick := func(what string, start time.Time) {
		t.Helper()
		if d := time.Since(start); d > 2*time.Second {
			t.Fatalf("%s returned %v after its ctx was cancelled", what, d)
		}
	}

	// A publish waiting for an ack that never comes: cancelled, it leaves
	// the library's async window (it no longer counts as pending).
	silentResponder(t, nc, "stuck")
	start := time.Now()
	_, err := js.Publish(cancelSoon(), "stuck", []byte("x"))
	wantIs(t, err, context.Canceled)
	quick("Publish", start)
	if p := js.PublishAsyncPending(); p != 0 {
		t.Fatalf("a cancelled publish still pending in the library: %d", p)
	}

	// A pull waiting for a message.
	got(js.CreateStream(ctx, natsio.StreamConfig{Name: "S", Subjects: []string{"s.>"}, Storage: natsio.MemoryStorage})).must(t)
	got(js.CreateConsumer(ctx, "S", natsio.ConsumerConfig{Durable: "d"})).must(t)
	start = time.Now()
	_, err = js.Next(cancelSoon(), "S", "d")
	wantIs(t, err, context.Canceled)
	quick("Next", start)

	// A watcher's Next waiting for a change: the change made after the
	// cancel goes to the next Next.
	kv := got(js.CreateKeyValue(ctx, natsio.KeyValueConfig{Bucket: "C"})).must(t)
	w := got(kv.WatchAll(ctx)).must(t)
	defer w.Stop()
	if e := got(w.Next(ctx)).must(t); e != nil {
		t.Fatalf("empty bucket: %+v before the marker", e)
	}
	start = time.Now()
	_, err = w.Next(cancelSoon())
	wantIs(t, err, context.Canceled)
	quick("KeyWatcher.Next", start)
	got(kv.Put(ctx, "k", []byte("after the cancel"))).must(t)
	if e := got(w.Next(ctx)).must(t); e == nil || string(e.Value) != "after the cancel" {
		t.Fatalf("after a cancelled Next: %+v", e)
	}

	// A consumption's Next likewise.
	c := got(js.Consume(ctx, "S", "d")).must(t)
	defer c.Stop()
	start = time.Now()
	_, err = c.Next(cancelSoon())
	wantIs(t, err, context.Canceled)
	quick("Consumption.Next", start)
	got(js.Publish(ctx, "s.x", []byte("one"))).must(t)
	if m := got(c.Next(ctx)).must(t); string(m.Data) != "one" {
		t.Fatalf("after a cancelled Next: %q", m.Data)
	}

	// Every completion callback's handle came back.
	waitHandlesReleased(t, baseline)
}

// A consumption likewise fills its buffer while nobody reads: the
// messages published meanwhile are all there, in order, at once.
func TestConsumeBuffersWhileTheReaderIsAway(t *testing.T) {
	_, js := jetStream(t)
	consumeStream(t, js, 0)
	ctx := ctxTimeout(t, 30*time.Second)
	c := got(js.Consume(ctx, "C", "d", natsio.ConsumeMaxMessages(500))).must(t)
	defer c.Stop()
	const n = 300
	for i := range n {
		got(js.PublishAsync("c.x", []byte(fmt.Sprint(i)))).must(t)
	}
	noErr(t, js.PublishAsyncComplete(ctx))
	eventually(t, "the messages buffered by the library", func() bool {
		st, err := c.Stats()
		return err == nil && st.PendingItems == n
	})
	// Buffered: each Next returns at once.
	start := time.Now()
	for i := range n {
		m := got(c.Next(ctx)).must(t)
		if string(m.Data) != fmt.Sprint(i) || meta(t, m).Sequence.Stream != uint64(i+1) {
			t.Fatalf("message %d: %q %+v", i, m.Data, meta(t, m))
		}
		noErr(t, m.Ack())
		if i == 9 {
			// Next takes messages from the library in batches; the
			// counters still say what Next returned and what is left.
			if st := got(c.Stats()).must(t); st.Delivered != 10 || st.PendingItems != n-10 {
				t.Fatalf("stats after 10 of %d: %+v", n, st)
			}
		}
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Fatalf("reading %d buffered messages took %v", n, d)
	}
	if st := got(c.Stats()).must(t); st.Delivered != n || st.PendingItems != 0 {
		t.Fatalf("consume stats %+v", st)
	}

	// Stopped with messages taken ahead of Next: Next says ErrDone, and
	// those messages are left unacknowledged for redelivery.
	for i := range 100 {
		got(js.PublishAsync("c.x", []byte(fmt.Sprint(n+i)))).must(t)
	}
	noErr(t, js.PublishAsyncComplete(ctx))
	eventually(t, "100 more buffered", func() bool {
		st, err := c.Stats()
		return err == nil && st.PendingItems == 100
	})
	m := got(c.Next(ctx)).must(t)
	noErr(t, m.Ack())
	c.Stop()
	_, err := c.Next(ctx)
	wantErr(t, err, natsio.ErrDone)
	// The server applies acks apart from its API requests: wait for it.
	eventually(t, "99 acks pending (the messages not returned)", func() bool {
		info, err := js.ConsumerInfo(ctx, "C", "d")
		return err == nil && info.NumAckPending == 99
	})
}

// Many rounds of a busy handler and Unsubscribe from another goroutine:
// once Unsubscribe has returned no handler call runs, not even one that
// would have started at that moment.
func TestNoHandlerCallAfterUnsubscribeReturnsUnderLoad(t *testing.T) {
	nc := connect(t)
	pub := connect(t)
	for round := range 30 {
		subj := subject(t, fmt.Sprint("r", round))
		var unsubscribed atomic.Bool
		var inside, late, calls atomic.Int64
		sub, err := nc.Subscribe(subj, func(*natsio.Msg) {
			inside.Add(1)
			if unsubscribed.Load() {
				late.Add(1)
			}
			calls.Add(1)
			if round%2 == 0 {
				time.Sleep(50 * time.Microsecond)
			}
			inside.Add(-1)
		}, natsio.SubPendingLimits(-1, -1))
		if err != nil {
			t.Fatal(err)
		}
		flush(t, nc)
		stopPub := make(chan struct{})
		published := make(chan struct{})
		go func() {
			defer close(published)
			for {
				select {
				case <-stopPub:
					return
				default:
				}
				if pub.Publish(subj, nil) != nil {
					return
				}
			}
		}()
		eventually(t, "deliveries", func() bool { return calls.Load() > 50 })
		noErr(t, sub.Unsubscribe())
		unsubscribed.Store(true)
		if n := inside.Load(); n != 0 {
			t.Fatalf("round %d: %d handler calls running after Unsubscribe returned", round, n)
		}
		close(stopPub)
		<-published
		flush(t, pub)
		time.Sleep(5 * time.Millisecond) // an absence: no late call within 5 ms
		if n := late.Load(); n != 0 {
			t.Fatalf("round %d: %d handler calls after Unsubscribe returned", round, n)
		}
		if !sub.IsClosed() {
			t.Fatalf("round %d: subscription open after Unsubscribe", round)
		}
	}
}
