package natsio_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	natsio "github.com/libnatsio/natsio/bindings/go"
)

// ---- Continuous consumption ----

// consumeStream creates stream C on c.> holding 0..n-1 (published
// asynchronously) and the durable pull consumer "d".
func consumeStream(t *testing.T, js *natsio.JetStream, n int) {
	t.Helper()
	ctx := ctxTimeout(t, 10*time.Second)
	got(js.CreateStream(ctx, natsio.StreamConfig{Name: "C", Subjects: []string{"c.>"}, Storage: natsio.MemoryStorage})).must(t)
	got(js.CreateConsumer(ctx, "C", natsio.ConsumerConfig{Durable: "d", AckWait: 30 * time.Second})).must(t)
	for i := range n {
		got(js.PublishAsync("c.x", []byte(fmt.Sprint(i)))).must(t)
	}
	noErr(t, js.PublishAsyncComplete(ctx))
}

// fastConsume: a small window and short requests, so that the tests go
// through many requests and their expiry.
var fastConsume = []natsio.ConsumeOpt{
	natsio.ConsumeMaxMessages(16), natsio.ConsumeExpires(time.Second), natsio.ConsumeHeartbeat(300 * time.Millisecond),
}

type nextResult struct {
	m    *natsio.Msg
	err  error
	took time.Duration
}

func nextAsync(ctx context.Context, c *natsio.Consumption) <-chan nextResult {
	ch := make(chan nextResult, 1)
	go func() {
		start := time.Now()
		m, err := c.Next(ctx)
		ch <- nextResult{m, err, time.Since(start)}
	}()
	return ch
}

func await[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(5 * time.Second):
		t.Fatalf("%s: still waiting after 5 s", what)
		panic("unreachable")
	}
}

func mustConsume(t *testing.T, c *natsio.Consumption) *natsio.Msg {
	t.Helper()
	m, err := c.Next(ctxTimeout(t, 5*time.Second))
	if err != nil {
		t.Fatalf("Consumption.Next: %v", err)
	}
	return m
}

func TestConsumeInOrderAcrossRequests(t *testing.T) {
	nc, js := jetStream(t)
	const n = 500
	consumeStream(t, js, n)
	ctx := ctxTimeout(t, 20*time.Second)

	// The consumption does not need the JetStream that started it.
	js2 := got(nc.JetStream()).must(t)
	c := got(js2.Consume(ctx, "C", "d", fastConsume...)).must(t)
	defer c.Stop()
	js2.Close()

	for i := range n {
		m := mustConsume(t, c)
		md := meta(t, m)
		if string(m.Data) != fmt.Sprint(i) || m.Subject != "c.x" || md.Stream != "C" || md.Consumer != "d" ||
			md.Sequence.Stream != uint64(i+1) || md.NumDelivered != 1 {
			t.Fatalf("message %d: %q on %s, %+v", i, m.Data, m.Subject, md)
		}
		noErr(t, m.Ack())
		wantErr(t, m.Ack(), natsio.ErrMessageAlreadyAcked)
	}

	// Nothing more: a deadline ends Next (across request expiries) and the
	// consumption goes on.
	start := time.Now()
	_, err := c.Next(ctxTimeout(t, 1500*time.Millisecond))
	wantErr(t, err, natsio.ErrTimeout)
	if !errors.Is(err, context.DeadlineExceeded) || time.Since(start) < 1400*time.Millisecond {
		t.Fatalf("Next ended after %v with %v", time.Since(start), err)
	}
	got(js.Publish(ctx, "c.y", []byte("late"))).must(t)
	if m := mustConsume(t, c); string(m.Data) != "late" || m.Subject != "c.y" {
		t.Fatalf("late message %q on %s", m.Data, m.Subject)
	} else {
		noErr(t, m.AckSync(ctx))
	}
	eventually(t, "every message acknowledged", func() bool {
		ci, err := js.ConsumerInfo(ctx, "C", "d")
		return err == nil && ci.AckFloor.Stream == n+1 && ci.NumAckPending == 0 && ci.NumPending == 0
	})
}

func TestConsumeCancelStopAndTurns(t *testing.T) {
	_, js := jetStream(t)
	consumeStream(t, js, 0)
	ctx := ctxTimeout(t, 20*time.Second)
	c := got(js.Consume(ctx, "C", "d", fastConsume...)).must(t)

	// A cancelled Next returns ctx's error at once and loses nothing.
	cctx, cancel := context.WithCancel(context.Background())
	r := nextAsync(cctx, c)
	time.Sleep(100 * time.Millisecond)
	cancel()
	if o := await(t, r, "cancelled Next"); !errors.Is(o.err, context.Canceled) || o.took > time.Second {
		t.Fatalf("cancelled Next: %v after %v", o.err, o.took)
	}
	_, err := c.Next(cctx)
	wantIs(t, err, context.Canceled)
	got(js.Publish(ctx, "c.x", []byte("one"))).must(t)
	if m := mustConsume(t, c); string(m.Data) != "one" {
		t.Fatalf("after a cancelled Next got %q", m.Data)
	}

	// A Next waiting without a deadline does not keep another one from
	// honouring its ctx; the message goes to the one still waiting.
	forever := nextAsync(context.Background(), c)
	time.Sleep(100 * time.Millisecond)
	start := time.Now()
	_, err = c.Next(ctxTimeout(t, 300*time.Millisecond))
	wantErr(t, err, natsio.ErrTimeout)
	if took := time.Since(start); took > 2*time.Second {
		t.Fatalf("a Next with a 300 ms deadline took %v behind another one", took)
	}
	got(js.Publish(ctx, "c.x", []byte("two"))).must(t)
	if o := await(t, forever, "Next without deadline"); o.err != nil || string(o.m.Data) != "two" {
		t.Fatalf("Next without deadline: %v %v", o.m, o.err)
	}

	// Stop from another goroutine ends a blocked Next and the iterator.
	blocked := nextAsync(context.Background(), c)
	iterDone := make(chan []string, 1)
	go func() {
		var seen []string
		for m, err := range c.Msgs(context.Background()) {
			if err != nil {
				seen = append(seen, "error: "+err.Error())
				break
			}
			seen = append(seen, string(m.Data))
		}
		iterDone <- seen
	}()
	time.Sleep(200 * time.Millisecond)
	stopped := make(chan struct{})
	go func() { c.Stop(); close(stopped) }()
	o := await(t, blocked, "Next blocked during Stop")
	wantErr(t, o.err, natsio.ErrDone)
	if seen := await(t, iterDone, "Msgs during Stop"); len(seen) != 0 {
		t.Fatalf("Msgs yielded %v", seen)
	}
	await(t, stopped, "Stop")
	c.Stop() // twice is harmless
	_, err = c.Next(ctx)
	wantErr(t, err, natsio.ErrDone)
	_, err = c.Next(context.Background())
	wantErr(t, err, natsio.ErrDone)

	// Buffered messages not taken go back to the server.
	got(js.Publish(ctx, "c.x", []byte("three"))).must(t)
	c2 := got(js.Consume(ctx, "C", "d", fastConsume...)).must(t)
	defer c2.Stop()
	if m := mustConsume(t, c2); string(m.Data) != "three" {
		t.Fatalf("next consumption got %q", m.Data)
	}

	var nilC *natsio.Consumption
	_, err = nilC.Next(ctx)
	wantErr(t, err, natsio.ErrNullArgument)
	nilC.Stop()
}

func TestConsumeMissingAndDeletedConsumer(t *testing.T) {
	_, js := jetStream(t)
	consumeStream(t, js, 3)
	ctx := ctxTimeout(t, 20*time.Second)

	_, err := js.Consume(ctx, "C", "nope")
	wantErr(t, err, natsio.ErrConsumerNotFound)
	_, err = js.Consume(ctx, "NOPE", "d")
	wantErr(t, err, natsio.ErrStreamNotFound)
	_, err = js.Consume(ctx, "C", "d", natsio.ConsumeExpires(time.Second), natsio.ConsumeHeartbeat(time.Second))
	wantErr(t, err, natsio.ErrInvalidArgument)
	_, err = js.Consume(ctx, "C", "d", natsio.ConsumeExpires(500*time.Millisecond))
	wantErr(t, err, natsio.ErrInvalidArgument, "expires")
	_, err = js.Consume(ctx, "C", "d", natsio.ConsumeMaxMessages(-1))
	wantErr(t, err, natsio.ErrInvalidArgument)
	_, err = js.Consume(ctx, "C", "a\x00b")
	wantErr(t, err, natsio.ErrInvalidArgument)
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	_, err = js.Consume(cancelled, "C", "d")
	wantIs(t, err, context.Canceled)

	// A consumer deleted under an open pull request ends the consumption
	// with ErrConsumerDeleted (the server's 409 on that request). Requests
	// of 30 s with 5 s heartbeats: the deletion meets the open one (with
	// short ones a request could expire just before it and the next pull
	// find no consumer: ErrConsumerNotFound).
	c := got(js.Consume(ctx, "C", "d", natsio.ConsumeMaxMessages(16),
		natsio.ConsumeExpires(30*time.Second), natsio.ConsumeHeartbeat(5*time.Second))).must(t)
	defer c.Stop()
	var seen []string
	var end error
	for m, err := range c.Msgs(ctx) {
		if err != nil {
			end = err
			break
		}
		seen = append(seen, string(m.Data))
		noErr(t, m.AckSync(ctx))
		if len(seen) == 3 {
			// Delete once the consume's next request waits on the server.
			eventually(t, "the consume's request waiting", func() bool {
				info, err := js.ConsumerInfo(ctx, "C", "d")
				return err == nil && info.NumWaiting >= 1
			})
			noErr(t, js.DeleteConsumer(ctx, "C", "d"))
		}
	}
	if !slices.Equal(seen, []string{"0", "1", "2"}) {
		t.Fatalf("consumed %v", seen)
	}
	wantErr(t, end, natsio.ErrConsumerDeleted, `consumer "d" was deleted`)
	_, err = js.Consume(ctx, "C", "d")
	wantErr(t, err, natsio.ErrConsumerNotFound)
}

// closedByConn checks the error of a consumption or watch whose connection
// was closed.
func closedByConn(t *testing.T, err error) {
	t.Helper()
	wantErr(t, err, natsio.ErrConnectionClosed)
}

func TestConsumeAfterConnClose(t *testing.T) {
	nc, js := jetStream(t)
	consumeStream(t, js, 2)
	ctx := ctxTimeout(t, 10*time.Second)
	c := got(js.Consume(ctx, "C", "d", fastConsume...)).must(t)
	defer c.Stop()
	m := mustConsume(t, c)
	mustConsume(t, c)
	blocked := nextAsync(context.Background(), c)
	time.Sleep(100 * time.Millisecond)
	noErr(t, nc.Close())
	closedByConn(t, await(t, blocked, "Next during Close").err)
	_, err := c.Next(ctx)
	closedByConn(t, err)
	// Ended by an error (not stopped): Msgs yields it once, last.
	var yielded []error
	for m, err := range c.Msgs(ctx) {
		if m != nil {
			t.Fatalf("Msgs after Conn.Close yielded a message %q", m.Data)
		}
		yielded = append(yielded, err)
	}
	if len(yielded) != 1 {
		t.Fatalf("Msgs after Conn.Close yielded %d times", len(yielded))
	}
	closedByConn(t, yielded[0])
	wantErr(t, m.Ack(), natsio.ErrConnectionClosed)
	_, err = js.Consume(ctx, "C", "d")
	wantErr(t, err, natsio.ErrConnectionClosed)
	// A later Stop changes nothing: the error that ended it stays.
	c.Stop()
	_, err = c.Next(ctx)
	closedByConn(t, err)
}

// ---- Key-Value watch ----

type event struct {
	key, value string
	op         natsio.KeyValueOp
}

func (e event) String() string { return fmt.Sprintf("%v %s=%q", e.op, e.key, e.value) }

// initialDone stands for the nil entry.
var initialDone = event{key: "<initial values done>"}

func eventOf(e *natsio.KeyValueEntry) event {
	if e == nil {
		return initialDone
	}
	return event{e.Key, string(e.Value), e.Operation}
}

func nextEvent(t *testing.T, w *natsio.KeyWatcher) event {
	t.Helper()
	e, err := w.Next(ctxTimeout(t, 5*time.Second))
	if err != nil {
		t.Fatalf("KeyWatcher.Next: %v", err)
	}
	return eventOf(e)
}

func nextEvents(t *testing.T, w *natsio.KeyWatcher, n int) []event {
	t.Helper()
	out := make([]event, n)
	for i := range out {
		out[i] = nextEvent(t, w)
	}
	return out
}

func wantEvents(t *testing.T, got []event, want ...event) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Fatalf("events\n got %v\nwant %v", got, want)
	}
}

func put(k, v string) event { return event{k, v, natsio.KeyValuePut} }
func del(k string) event    { return event{k, "", natsio.KeyValueDelete} }
func purge(k string) event  { return event{k, "", natsio.KeyValuePurge} }

// quiet checks that the watch delivers nothing more for a while.
func quiet(t *testing.T, w *natsio.KeyWatcher) {
	t.Helper()
	e, err := w.Next(ctxTimeout(t, 200*time.Millisecond))
	if !errors.Is(err, natsio.ErrTimeout) {
		t.Fatalf("expected nothing, got %v, %v", eventOf(e), err)
	}
}

func TestKeyValueWatch(t *testing.T) {
	_, js := jetStream(t)
	ctx := ctxTimeout(t, 20*time.Second)
	kv := got(js.CreateKeyValue(ctx, natsio.KeyValueConfig{Bucket: "W", History: 5})).must(t)
	got(kv.Put(ctx, "a.1", []byte("x1"))).must(t)
	got(kv.Put(ctx, "a.1", []byte("x2"))).must(t)
	rev := got(kv.Put(ctx, "b.1", []byte("y"))).must(t)

	w := got(kv.WatchAll(ctx)).must(t)
	defer w.Stop()
	first, err := w.Next(ctx)
	noErr(t, err)
	if first.Bucket != "W" || first.Key != "a.1" || first.Revision != 2 || time.Since(first.Created) > time.Minute {
		t.Fatalf("first entry %+v", first)
	}
	last, err := w.Next(ctx)
	noErr(t, err)
	if last.Key != "b.1" || last.Revision != rev || last.Delta != 0 {
		t.Fatalf("last initial entry %+v", last)
	}
	wantEvents(t, []event{eventOf(first), eventOf(last), nextEvent(t, w)}, put("a.1", "x2"), put("b.1", "y"), initialDone)

	// Changes as they happen; the marker does not come again.
	got(kv.Put(ctx, "c", []byte("z"))).must(t)
	noErr(t, kv.Delete(ctx, "a.1"))
	noErr(t, kv.Purge(ctx, "b.1"))
	wantEvents(t, nextEvents(t, w, 3), put("c", "z"), del("a.1"), purge("b.1"))
	quiet(t, w)

	// The watch's consumer vanishes: the watch recreates it after the last
	// revision seen, repeating nothing.
	names := got(js.ConsumerNames(ctx, "KV_W")).must(t)
	if len(names) != 1 {
		t.Fatalf("consumers of the watch %v", names)
	}
	for _, name := range names {
		noErr(t, js.DeleteConsumer(ctx, "KV_W", name))
	}
	got(kv.Put(ctx, "d", []byte("after"))).must(t)
	wantEvents(t, nextEvents(t, w, 1), put("d", "after"))
	quiet(t, w)

	// Stop from another goroutine ends a blocked Next; the consumer goes.
	blocked := make(chan error, 1)
	go func() {
		_, err := w.Next(context.Background())
		blocked <- err
	}()
	time.Sleep(100 * time.Millisecond)
	go w.Stop()
	wantErr(t, await(t, blocked, "Next during Stop"), natsio.ErrDone)
	w.Stop()
	_, err = w.Next(ctx)
	wantErr(t, err, natsio.ErrDone)
	eventually(t, "the watch's consumer deleted", func() bool {
		names, err := js.ConsumerNames(ctx, "KV_W")
		return err == nil && len(names) == 0
	})
}

func TestKeyValueWatchOptionsAndPatterns(t *testing.T) {
	_, js := jetStream(t)
	ctx := ctxTimeout(t, 20*time.Second)
	kv := got(js.CreateKeyValue(ctx, natsio.KeyValueConfig{Bucket: "W", History: 5})).must(t)
	got(kv.Put(ctx, "a.1", []byte("x1"))).must(t)
	got(kv.Put(ctx, "a.1", []byte("x2"))).must(t)
	got(kv.Put(ctx, "b.1", []byte("y"))).must(t)
	got(kv.Put(ctx, "a.2.deep", []byte("deep"))).must(t)
	got(kv.Put(ctx, "gone", []byte("g"))).must(t)
	noErr(t, kv.Delete(ctx, "gone"))

	// One pattern, with history: every kept revision, oldest first.
	h := got(kv.Watch(ctx, "a.*", natsio.IncludeHistory())).must(t)
	defer h.Stop()
	wantEvents(t, nextEvents(t, h, 3), put("a.1", "x1"), put("a.1", "x2"), initialDone)

	// Several patterns; ">" for the rest of the key.
	p := got(kv.Watch(ctx, "a.>,gone")).must(t)
	defer p.Stop()
	wantEvents(t, nextEvents(t, p, 4), put("a.1", "x2"), put("a.2.deep", "deep"), del("gone"), initialDone)

	// Ignoring deletes: the deleted key is left out, now and later.
	i := got(kv.WatchFiltered(ctx, []string{"gone", "b.*"}, natsio.IgnoreDeletes())).must(t)
	defer i.Stop()
	wantEvents(t, nextEvents(t, i, 2), put("b.1", "y"), initialDone)

	// Updates only: the marker at once, then changes to matching keys.
	u := got(kv.WatchFiltered(ctx, []string{"b.>", "c"}, natsio.UpdatesOnly(), natsio.IgnoreDeletes())).must(t)
	defer u.Stop()
	wantEvents(t, nextEvents(t, u, 1), initialDone)

	// Metadata only: keys, revisions and operations without values.
	m := got(kv.Watch(ctx, "b.1", natsio.MetaOnly())).must(t)
	defer m.Stop()
	e := got(m.Next(ctx)).must(t)
	if e.Key != "b.1" || e.Revision != 3 || len(e.Value) != 0 || e.Operation != natsio.KeyValuePut {
		t.Fatalf("meta-only entry %+v", e)
	}
	wantEvents(t, nextEvents(t, m, 1), initialDone)

	got(kv.Put(ctx, "c", []byte("z"))).must(t)
	noErr(t, kv.Delete(ctx, "c"))
	got(kv.Put(ctx, "a.3", []byte("not watched by u"))).must(t)
	got(kv.Put(ctx, "b.1", []byte("y2"))).must(t)
	noErr(t, kv.Delete(ctx, "b.1"))
	got(kv.Put(ctx, "gone", []byte("back"))).must(t)

	wantEvents(t, nextEvents(t, u, 2), put("c", "z"), put("b.1", "y2"))
	quiet(t, u)
	wantEvents(t, nextEvents(t, h, 1), put("a.3", "not watched by u"))
	quiet(t, h)
	wantEvents(t, nextEvents(t, p, 2), put("a.3", "not watched by u"), put("gone", "back"))
	quiet(t, p)
	wantEvents(t, nextEvents(t, i, 2), put("b.1", "y2"), put("gone", "back"))
	quiet(t, i)
	wantEvents(t, nextEvents(t, m, 2), put("b.1", ""), del("b.1"))

	// An empty bucket: the marker at once.
	empty := got(js.CreateKeyValue(ctx, natsio.KeyValueConfig{Bucket: "E"})).must(t)
	ew := got(empty.WatchAll(ctx)).must(t)
	defer ew.Stop()
	wantEvents(t, nextEvents(t, ew, 1), initialDone)
	quiet(t, ew)

	for _, bad := range []string{"", "a..b", "a.>.b", "a*", "*x", "a b", "a,,b"} {
		_, err := kv.Watch(ctx, bad)
		wantErr(t, err, natsio.ErrInvalidKey)
	}
	for _, bad := range [][]string{{""}, {"a", "b,c"}, {"a."}} {
		_, err := kv.WatchFiltered(ctx, bad)
		wantErr(t, err, natsio.ErrInvalidKey)
	}
	_, err := kv.Watch(ctx, "a\x00")
	wantErr(t, err, natsio.ErrInvalidArgument)
	var nilKV *natsio.KeyValue
	_, err = nilKV.WatchAll(ctx)
	wantErr(t, err, natsio.ErrNullArgument)
	var nilW *natsio.KeyWatcher
	_, err = nilW.Next(ctx)
	wantErr(t, err, natsio.ErrNullArgument)
	nilW.Stop()
}

func TestKeyValueWatchUpdatesChannel(t *testing.T) {
	_, js := jetStream(t)
	ctx := ctxTimeout(t, 20*time.Second)
	kv := got(js.CreateKeyValue(ctx, natsio.KeyValueConfig{Bucket: "U"})).must(t)
	got(kv.Put(ctx, "k1", []byte("v1"))).must(t)

	w := got(kv.WatchAll(ctx)).must(t)
	updates := w.Updates()
	if w.Updates() != updates {
		t.Fatal("Updates returned another channel")
	}
	_, err := w.Next(ctx)
	wantErr(t, err, natsio.ErrIllegalState)
	recv := func() event {
		t.Helper()
		select {
		case e, ok := <-updates:
			if !ok {
				t.Fatal("Updates closed")
			}
			return eventOf(e)
		case <-time.After(5 * time.Second):
			t.Fatal("no update in 5 s")
		}
		panic("unreachable")
	}
	wantEvents(t, []event{recv(), recv()}, put("k1", "v1"), initialDone)
	got(kv.Put(ctx, "k2", []byte("v2"))).must(t)
	noErr(t, kv.Delete(ctx, "k1"))
	wantEvents(t, []event{recv(), recv()}, put("k2", "v2"), del("k1"))

	// Stop while the channel is full and nobody reads: the feeding
	// goroutine ends and the channel is closed once Stop returns.
	for i := range 100 {
		got(kv.Put(ctx, fmt.Sprintf("n.%d", i), []byte(fmt.Sprint(i)))).must(t)
	}
	eventually(t, "the channel filled", func() bool { return len(updates) == cap(updates) })
	stopped := make(chan struct{})
	go func() { w.Stop(); close(stopped) }()
	await(t, stopped, "Stop with a full channel")
	n := 0
	for e := range updates {
		if want := put(fmt.Sprintf("n.%d", n), fmt.Sprint(n)); eventOf(e) != want {
			t.Fatalf("buffered update %d: %v, want %v", n, eventOf(e), want)
		}
		n++
	}
	if n != cap(updates) {
		t.Fatalf("%d buffered updates, want %d", n, cap(updates))
	}
	w.Stop()

	// Stop while a range loop waits ends the loop.
	w2 := got(kv.Watch(ctx, "k2")).must(t)
	ranged := make(chan []event, 1)
	go func() {
		var seen []event
		for e := range w2.Updates() {
			seen = append(seen, eventOf(e))
		}
		ranged <- seen
	}()
	time.Sleep(200 * time.Millisecond)
	w2.Stop()
	wantEvents(t, await(t, ranged, "range over Updates after Stop"), put("k2", "v2"), initialDone)
	// After Stop: a closed channel.
	w3 := got(kv.Watch(ctx, "k2")).must(t)
	w3.Stop()
	if _, ok := <-w3.Updates(); ok {
		t.Fatal("Updates after Stop delivered an entry")
	}
}

func TestKeyValueWatchAfterConnClose(t *testing.T) {
	nc, js := jetStream(t)
	ctx := ctxTimeout(t, 10*time.Second)
	kv := got(js.CreateKeyValue(ctx, natsio.KeyValueConfig{Bucket: "X"})).must(t)
	got(kv.Put(ctx, "k", []byte("v"))).must(t)
	w := got(kv.WatchAll(ctx)).must(t)
	defer w.Stop()
	wantEvents(t, nextEvents(t, w, 2), put("k", "v"), initialDone)
	u := got(kv.WatchAll(ctx)).must(t)
	updates := u.Updates()

	blocked := make(chan error, 1)
	go func() {
		_, err := w.Next(context.Background())
		blocked <- err
	}()
	time.Sleep(100 * time.Millisecond)
	noErr(t, nc.Close())
	closedByConn(t, await(t, blocked, "Next during Close"))
	_, err := w.Next(ctx)
	closedByConn(t, err)
	// The Updates goroutine ends and closes its channel by itself.
	closed := make(chan struct{})
	go func() {
		for range updates {
		}
		close(closed)
	}()
	await(t, closed, "Updates closed after Conn.Close")
	u.Stop()
	_, err = kv.WatchAll(ctx)
	wantErr(t, err, natsio.ErrConnectionClosed)
}

// A Fetch whose ctx is cancelled withdraws its pull request before it
// returns: a message published right after goes to the next Fetch, not to
// the abandoned request (where it would wait out the 30 s AckWait).
func TestFetchCancelledLeavesNoRequestBehind(t *testing.T) {
	_, js := jetStream(t)
	consumeStream(t, js, 0)
	ctx := ctxTimeout(t, 20*time.Second)
	for round := range 5 {
		cctx, cancel := context.WithCancel(ctx)
		fetched := make(chan error, 1)
		go func() {
			_, err := js.Fetch(cctx, "C", "d", natsio.FetchMaxMessages(2), natsio.FetchExpires(30*time.Second))
			fetched <- err
		}()
		// The first message reaches the Fetch, which waits for a second.
		got(js.Publish(ctx, "c.first", []byte("first"))).must(t)
		eventually(t, "first message delivered", func() bool {
			ci, err := js.ConsumerInfo(ctx, "C", "d")
			return err == nil && ci.NumAckPending == round+1
		})
		cancel()
		wantIs(t, await(t, fetched, "cancelled Fetch"), context.Canceled)
		want := fmt.Sprint(round)
		got(js.Publish(ctx, "c.x", []byte(want))).must(t)
		msgs, err := js.Fetch(ctx, "C", "d", natsio.FetchMaxMessages(1), natsio.FetchExpires(5*time.Second))
		if err != nil || len(msgs) != 1 || string(msgs[0].Data) != want {
			t.Fatalf("round %d: Fetch after the cancel: %v, %v", round, msgs, err)
		}
		noErr(t, msgs[0].AckSync(ctx))
	}
}
