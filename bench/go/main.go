// Command natsio-go-bench is the benchmark harness of the natsio Go binding
// (bindings/go): the CLI, scenarios, clock boundaries and output lines of
// the shared bench spec, with client=libnatsio-go. Next to the C-ABI
// harness (client=libnatsio) its rows measure what the Go binding adds:
// cgo calls, copying messages into Go memory, goroutine hand-offs.
//
//	pub     Publish N times, then Flush (PING/PONG: flush=pingpong)
//	pubsub  callback subscription (Conn.Subscribe) counting messages
//	req     responder: callback subscription answering with Msg.Respond on
//	        its own connection; requester: Conn.Request, one at a time
//	svc     req through a service endpoint (package micro: service bench,
//	        endpoint echo on bench.svc.echo, Request.Respond), then the
//	        service's STATS read with a $SRV.STATS.bench request: stats_ok=1
//	        when num_requests is warmup + K
//
//	jspub       JetStream.PublishAsync with at most --window futures
//	            unacked (a ring of PubAckFutures; PublishAsyncMaxPending is
//	            the window too), waiting on the oldest when full; the clock
//	            stops at the last ack
//	jspub-sync  JetStream.Publish, one at a time
//	kv          KeyValue.Put of k0..k(K-1), then KeyValue.Get of them
//	            (value length checked): lines kv-put and kv-get
//	kv-par      K KeyValue.Get calls from --par goroutines (P in flight;
//	            each waits on the library's token, holding no OS thread);
//	            threads_peak is the highest Threads: of /proc/self/status,
//	            sampled every 2 ms
//	js-consume  JetStream.Consume (the library pulls in the background)
//	            read with Consumption.Next, Msg.Ack per message; then an
//	            untimed wait until the consumer's num_ack_pending is 0
//	obj-put     ObjectStore.PutBytes; obj-get: ObjectStore.GetBytes (the
//	            library verifies size and SHA-256 digest at the end of the
//	            read); --obj-mode stream: ObjectStore.Put from an io.Reader
//	            that repeats a 1 MiB pattern, ObjectStore.Get read into one
//	            128 KiB buffer (no buffer of the object's size). Bucket
//	            BENCHOBJ (file storage) deleted and created per run; each
//	            measured run in a fresh process (this program re-executed
//	            with --obj-child), so rss_peak_mb (VmHWM) is that run's alone
//
// The JetStream scenarios use one connection with a JetStream context whose
// request timeout, async ack timeout and stall wait are the idle timeout,
// as in the C harness; stream BENCH and bucket BENCHKV are deleted and
// created before the clock. Extra fields as in the C harness: on every line
// with a message/operation count (pub, pubsub, req, jspub, jspub-sync,
// kv-put, kv-get, kv-par, js-consume) cpu_ns_per_msg (user+sys of the whole
// process, from getrusage, over exactly the timed region, divided by the
// line's messages/operations), on every result line rss_peak_kb (VmHWM) and,
// on pubsub, rss_start_kb and rss_end_kb.
//
// --pubsub-limits unlimited subscribes without pending limits (the default
// limits drop messages when the Go handler cannot keep up) and reports as
// client=libnatsio-go:unlimited.
//
// Build: bench/run.sh (go build in bench/go, after cargo build --release).
package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	natsio "github.com/libnatsio/natsio/bindings/go"
	"github.com/libnatsio/natsio/bindings/go/micro"
)

// client is the client= value; "libnatsio-go:unlimited" with
// --pubsub-limits unlimited, so such rows never mix with default ones.
var client = "libnatsio-go"

type options struct {
	url         string
	scenarios   string
	sizes       string
	n           int
	jsN         int
	k           int
	kvK         int
	window      int
	warmup      int
	par         int    // kv-par operations in flight
	objMB       int    // obj-put/obj-get object size (MiB)
	objSmall    int    // obj-put/obj-get: number of 1 KiB objects
	objMode     string // obj-put/obj-get data path: memory (the spec's) or stream
	objChild    string // internal: one obj-put/obj-get run in this process
	idleTimeout time.Duration
	maxSecs     time.Duration
	// pubsub subscription without pending limits (not the default): no
	// drops, so the rate is that of the delivery path however slow
	unlimited bool
}

var opt = options{
	url:         "nats://127.0.0.1:4222",
	scenarios:   "pub,pubsub,req,jspub,jspub-sync,kv,kv-par,js-consume,obj-put,obj-get,svc",
	sizes:       "16,1024",
	n:           1000000,
	jsN:         200000,
	k:           10000,
	kvK:         10000,
	window:      4096,
	warmup:      100,
	par:         256,
	objMB:       64,
	objSmall:    1000,
	objMode:     "memory",
	idleTimeout: 5 * time.Second,
	maxSecs:     120 * time.Second,
}

// ---------------------------------------------------------------------------
// measurement helpers

// cpuNanos is the user+sys CPU time of the whole process (every thread,
// the library's included).
func cpuNanos() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return float64(ru.Utime.Nano() + ru.Stime.Nano())
}

// cpuPerMsg is cpu_ns_per_msg: the CPU between c0 and c1 (read where the
// clock starts and stops) divided by the line's count (0 divides by 1).
func cpuPerMsg(c0, c1 float64, count int64) float64 {
	return (c1 - c0) / float64(max(count, 1))
}

// percentile by nearest rank: sorted[ceil(p/100*K)-1].
func percentile(sorted []float64, p float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	i := int(math.Ceil(p/100*float64(len(sorted)))) - 1
	i = max(0, min(i, len(sorted)-1))
	return sorted[i]
}

// noSpaces keeps an error text inside one key=value field.
func noSpaces(s string) string {
	return strings.Map(func(r rune) rune {
		switch r {
		case ' ', '\t', '\n', '\r':
			return '_'
		}
		return r
	}, s)
}

func emitStatus(scenario string, size int, status string, err error) {
	line := fmt.Sprintf("scenario=%s client=%s size=%d n=- status=%s", scenario, client, size, status)
	if err != nil {
		line += " error=" + noSpaces(err.Error())
	}
	fmt.Println(line)
}

func emitFailure(scenario string, size int, what string, err error) {
	status := "failed"
	if errors.Is(err, natsio.ErrTimeout) || errors.Is(err, context.DeadlineExceeded) {
		status = "timeout"
	}
	emitStatus(scenario, size, status, fmt.Errorf("%s: %w", what, err))
}

// errorCounter counts the asynchronous errors of one scenario run (slow
// consumer, server -ERR, lost connection), except while we close.
type errorCounter struct {
	count   atomic.Int64
	closing atomic.Bool
}

func (c *errorCounter) handler(error) {
	if !c.closing.Load() {
		c.count.Add(1)
	}
}

func connect(errs *errorCounter, name string, extra ...natsio.Option) (*natsio.Conn, error) {
	opts := append([]natsio.Option{natsio.Name(name), natsio.ErrorHandler(errs.handler)}, extra...)
	return natsio.Connect(opt.url, opts...)
}

func closeAll(errs *errorCounter, conns ...*natsio.Conn) {
	errs.closing.Store(true)
	for _, nc := range conns {
		if nc != nil {
			nc.Close()
		}
	}
}

// flush waits for a PING/PONG round trip, bounded by the idle timeout.
func flush(nc *natsio.Conn) error {
	ctx, cancel := context.WithTimeout(context.Background(), opt.idleTimeout)
	defer cancel()
	return nc.Flush(ctx)
}

// ---------------------------------------------------------------------------
// pub

func runPub(size int) {
	errs := &errorCounter{}
	nc, err := connect(errs, "natsio-go-bench-pub")
	if err != nil {
		emitFailure("pub", size, "connect", err)
		return
	}
	defer closeAll(errs, nc)
	data := bytes.Repeat([]byte{'x'}, size)

	var failed int64
	c0 := cpuNanos()
	t0 := time.Now()
	for i := 0; i < opt.n; i++ {
		if nc.Publish("bench.pub", data) != nil {
			failed++
		}
		if i&4095 == 4095 && time.Since(t0) > opt.maxSecs {
			emitStatus("pub", size, "timeout", errors.New("max-secs"))
			return
		}
	}
	err = flush(nc)
	secs := time.Since(t0).Seconds()
	c1 := cpuNanos()
	if err != nil {
		emitFailure("pub", size, "flush", err)
		return
	}
	n := float64(opt.n)
	printResult("scenario=pub client=%s size=%d n=%d secs=%.6f msgs_per_s=%.1f mb_per_s=%.3f errors=%d flush=pingpong cpu_ns_per_msg=%.1f",
		client, size, opt.n, secs, n/secs, n*float64(size)/1e6/secs, failed+errs.count.Load(), cpuPerMsg(c0, c1, int64(opt.n)))
}

// ---------------------------------------------------------------------------
// pubsub

func runPubSub(size int) {
	errs := &errorCounter{}
	snc, err := connect(errs, "natsio-go-bench-sub")
	if err != nil {
		emitFailure("pubsub", size, "connect", err)
		return
	}
	pnc, err := connect(errs, "natsio-go-bench-pub")
	if err != nil {
		closeAll(errs, snc)
		emitFailure("pubsub", size, "connect", err)
		return
	}
	defer closeAll(errs, pnc, snc)
	data := bytes.Repeat([]byte{'x'}, size)

	target := int64(opt.n)
	var received, badSize atomic.Int64
	var doneAt atomic.Int64   // monotonic ns since t0 of the last message
	var cpuDone atomic.Uint64 // process CPU (math.Float64bits) at doneAt
	done := make(chan struct{})
	var t0 time.Time
	var subOpts []natsio.SubOption
	if opt.unlimited {
		subOpts = append(subOpts, natsio.SubPendingLimits(-1, -1))
	}
	sub, err := snc.Subscribe("bench.ps", func(m *natsio.Msg) {
		if len(m.Data) != size {
			badSize.Add(1)
		}
		if received.Add(1) == target {
			doneAt.Store(int64(time.Since(t0)))
			cpuDone.Store(math.Float64bits(cpuNanos()))
			close(done)
		}
	}, subOpts...)
	if err == nil {
		err = flush(snc) // barrier: the SUB is registered once the PONG is back
	}
	if err != nil {
		emitFailure("pubsub", size, "subscribe", err)
		return
	}
	defer sub.Unsubscribe()

	var failed int64
	rssStart := procStatus("VmRSS")
	c0 := cpuNanos()
	t0 = time.Now()
	for i := 0; i < opt.n; i++ {
		if pnc.Publish("bench.ps", data) != nil {
			failed++
		}
		if i&4095 == 4095 && time.Since(t0) > opt.maxSecs {
			break
		}
	}
	// make sure everything buffered goes out; the clock stops on receipt
	if flush(pnc) != nil {
		failed++
	}

	lastSeen := int64(-1)
	lastProgress := time.Since(t0)
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	complete := false
wait:
	for {
		select {
		case <-done:
			complete = true
			break wait
		case <-tick.C:
			r, now := received.Load(), time.Since(t0)
			if r != lastSeen {
				lastSeen, lastProgress = r, now
			}
			if now-lastProgress > opt.idleTimeout || now > opt.maxSecs {
				break wait
			}
		}
	}
	c1 := cpuNanos()
	rssEnd := procStatus("VmRSS")

	got := min(received.Load(), target)
	elapsed := lastProgress
	if complete {
		elapsed = time.Duration(doneAt.Load())
		c1 = math.Float64frombits(cpuDone.Load())
	}
	secs := max(elapsed.Seconds(), 1e-9)
	var dropped uint64
	if st, err := sub.Stats(); err == nil {
		dropped = st.Dropped
	}
	printResult("scenario=pubsub client=%s size=%d n=%d received=%d lost=%d secs=%.6f msgs_per_s=%.1f mb_per_s=%.3f errors=%d mode=callback dropped=%d cpu_ns_per_msg=%.1f rss_start_kb=%d rss_end_kb=%d",
		client, size, opt.n, got, target-got, secs, float64(got)/secs, float64(got)*float64(size)/1e6/secs,
		failed+errs.count.Load()+badSize.Load(), dropped, cpuPerMsg(c0, c1, got),
		rssStart, rssEnd)
}

// ---------------------------------------------------------------------------
// req and svc

// connectPair connects req's and svc's responder and requester.
func connectPair(scenario string, size int, errs *errorCounter) (rnc, qnc *natsio.Conn, ok bool) {
	rnc, err := connect(errs, "natsio-go-bench-responder")
	if err != nil {
		emitFailure(scenario, size, "connect", err)
		return nil, nil, false
	}
	qnc, err = connect(errs, "natsio-go-bench-requester")
	if err != nil {
		closeAll(errs, rnc)
		emitFailure(scenario, size, "connect", err)
		return nil, nil, false
	}
	return rnc, qnc, true
}

// requestRun is what requestLoop measured.
type requestRun struct {
	lat    []float64 // microseconds, of the successful requests
	failed int64     // failed requests and wrong-size replies
	secs   float64
	c0, c1 float64 // process CPU (ns) at the clock's start and stop
}

// requestLoop is req's and svc's timed part: --warmup untimed requests,
// afterWarmup, then K sequential requests to subject, each timed and
// bounded by the idle timeout (as in the C harness). false when
// --max-secs ran out (the timeout line is printed).
func requestLoop(scenario string, qnc *natsio.Conn, subject string, data []byte, afterWarmup func()) (requestRun, bool) {
	request := func() (*natsio.Msg, error) {
		ctx, cancel := context.WithTimeout(context.Background(), opt.idleTimeout)
		defer cancel()
		return qnc.Request(ctx, subject, data)
	}
	for i := 0; i < opt.warmup; i++ {
		_, _ = request()
	}
	afterWarmup()

	r := requestRun{lat: make([]float64, 0, opt.k)}
	r.c0 = cpuNanos()
	t0 := time.Now()
	for i := 0; i < opt.k; i++ {
		a := time.Now()
		m, err := request()
		us := float64(time.Since(a).Nanoseconds()) / 1e3
		switch {
		case err != nil:
			r.failed++
		case len(m.Data) != len(data):
			r.failed++
		default:
			r.lat = append(r.lat, us)
		}
		if time.Since(t0) > opt.maxSecs {
			emitStatus(scenario, len(data), "timeout", errors.New("max-secs"))
			return r, false
		}
	}
	r.secs = time.Since(t0).Seconds()
	r.c1 = cpuNanos()
	return r, true
}

func runReq(size int) {
	errs := &errorCounter{}
	rnc, qnc, ok := connectPair("req", size, errs)
	if !ok {
		return
	}
	defer closeAll(errs, qnc, rnc)
	data := bytes.Repeat([]byte{'x'}, size)

	var respondFailed atomic.Int64
	sub, err := rnc.Subscribe("bench.req", func(m *natsio.Msg) {
		if m.Respond(m.Data) != nil {
			respondFailed.Add(1)
		}
	})
	if err == nil {
		err = flush(rnc)
	}
	if err != nil {
		emitFailure("req", size, "subscribe", err)
		return
	}
	defer sub.Unsubscribe()

	r, ok := requestLoop("req", qnc, "bench.req", data, func() {
		errs.count.Store(0)
		respondFailed.Store(0)
	})
	if !ok {
		return
	}
	mean, p50, p99 := latencyStats(r.lat)
	printResult("scenario=req client=%s size=%d n=%d secs=%.6f msgs_per_s=%.1f mean_us=%.1f p50_us=%.1f p99_us=%.1f errors=%d cpu_ns_per_msg=%.1f",
		client, size, opt.k, r.secs, float64(opt.k)/r.secs, mean, p50, p99,
		r.failed+errs.count.Load()+respondFailed.Load(), cpuPerMsg(r.c0, r.c1, int64(opt.k)))
}

// runSvc is req through a service endpoint (package micro): service
// bench, endpoint echo on bench.svc.echo (default queue group), then the
// service's num_requests read with a $SRV.STATS.bench request and
// checked to be warmup + K (stats_ok=1).
func runSvc(size int) {
	errs := &errorCounter{}
	rnc, qnc, ok := connectPair("svc", size, errs)
	if !ok {
		return
	}
	defer closeAll(errs, qnc, rnc)
	data := bytes.Repeat([]byte{'x'}, size)

	var respondFailed atomic.Int64
	svc, err := micro.AddService(rnc, micro.Config{Name: "bench", Version: "1.0.0"})
	if err == nil {
		defer svc.Stop()
		err = svc.AddEndpoint("echo", micro.HandlerFunc(func(r micro.Request) {
			if r.Respond(r.Data()) != nil {
				respondFailed.Add(1)
			}
		}), micro.WithEndpointSubject("bench.svc.echo"))
	}
	if err == nil {
		err = flush(rnc)
	}
	if err != nil {
		emitFailure("svc", size, "service", err)
		return
	}

	r, ok := requestLoop("svc", qnc, "bench.svc.echo", data, func() {
		errs.count.Store(0)
		respondFailed.Store(0)
	})
	if !ok {
		return
	}
	statsOK := 0
	if n, err := svcStatsRequests(qnc); err == nil && n == opt.warmup+opt.k {
		statsOK = 1
	}
	mean, p50, p99 := latencyStats(r.lat)
	printResult("scenario=svc client=%s size=%d n=%d secs=%.6f msgs_per_s=%.1f mean_us=%.1f p50_us=%.1f p99_us=%.1f errors=%d stats_ok=%d cpu_ns_per_msg=%.1f",
		client, size, opt.k, r.secs, float64(opt.k)/r.secs, mean, p50, p99,
		r.failed+errs.count.Load()+respondFailed.Load(), statsOK, cpuPerMsg(r.c0, r.c1, int64(opt.k)))
}

// svcStatsRequests is the bench service's num_requests (its one
// endpoint's) as a $SRV.STATS.bench request reads it.
func svcStatsRequests(qnc *natsio.Conn) (int, error) {
	ctx, cancel := context.WithTimeout(context.Background(), opt.idleTimeout)
	defer cancel()
	m, err := qnc.Request(ctx, "$SRV.STATS.bench", nil)
	if err != nil {
		return 0, err
	}
	var stats micro.Stats
	if err := json.Unmarshal(m.Data, &stats); err != nil {
		return 0, err
	}
	if len(stats.Endpoints) != 1 {
		return 0, fmt.Errorf("%d endpoints in STATS", len(stats.Endpoints))
	}
	return stats.Endpoints[0].NumRequests, nil
}

// ---------------------------------------------------------------------------
// JetStream: jspub, jspub-sync, kv

// openJS connects and makes the JetStream context of a run: requests,
// synchronous publishes and async acks bounded by the idle timeout, at
// most --window async publishes awaiting acks, and a publish that finds
// no room waits up to the idle timeout (as the C harness).
func openJS(errs *errorCounter) (*natsio.Conn, *natsio.JetStream, error) {
	nc, err := connect(errs, "natsio-go-bench-js")
	if err != nil {
		return nil, nil, err
	}
	js, err := nc.JetStream(natsio.JSTimeout(opt.idleTimeout), natsio.PublishAsyncMaxPending(opt.window),
		natsio.PublishAsyncStallWait(opt.idleTimeout), natsio.PublishAsyncTimeout(opt.idleTimeout))
	if err != nil {
		closeAll(errs, nc)
		return nil, nil, err
	}
	return nc, js, nil
}

// freshBenchStream deletes stream BENCH if it exists and creates it
// (bench.js.>, file storage, R1, limits retention).
func freshBenchStream(js *natsio.JetStream) error {
	ctx := context.Background() // each request is bounded by JSTimeout
	if err := js.DeleteStream(ctx, "BENCH"); err != nil && !errors.Is(err, natsio.ErrStreamNotFound) {
		return err
	}
	_, err := js.CreateStream(ctx, natsio.StreamConfig{
		Name:      "BENCH",
		Subjects:  []string{"bench.js.>"},
		Storage:   natsio.FileStorage,
		Replicas:  1,
		Retention: natsio.LimitsPolicy,
	})
	return err
}

// publishWindowed publishes n messages of data to bench.js.a with
// JetStream.PublishAsync, never more than --window unacked (a ring of
// futures, waiting on the oldest when full; each wait is bounded by the
// library's async ack timeout, the idle timeout). It returns the acks, the
// failed publishes and the time of the last ack.
func publishWindowed(js *natsio.JetStream, n int, data []byte, t0 time.Time) (acked int, failed int64, tLast time.Time) {
	window := max(opt.window, 1)
	ring := make([]*natsio.PubAckFuture, window)
	var head, inflight int
	tLast = t0
	retire := func() {
		f := ring[head]
		ring[head] = nil
		head = (head + 1) % window
		inflight--
		if _, err := f.Wait(context.Background()); err != nil {
			failed++
			return
		}
		acked++
		tLast = time.Now()
	}
	for i := 0; i < n; i++ {
		if inflight == window {
			retire()
		}
		f, err := js.PublishAsync("bench.js.a", data)
		if err != nil {
			failed++
			if errors.Is(err, natsio.ErrTooManyStalledMsgs) {
				break
			}
			continue
		}
		ring[(head+inflight)%window] = f
		inflight++
		if i&1023 == 1023 && time.Since(t0) > opt.maxSecs {
			break
		}
	}
	for inflight > 0 {
		retire()
	}
	return acked, failed, tLast
}

func runJSPub(size int) {
	errs := &errorCounter{}
	nc, js, err := openJS(errs)
	if err == nil {
		defer closeAll(errs, nc)
		defer js.Close()
		err = freshBenchStream(js)
	}
	if err != nil {
		emitFailure("jspub", size, "stream", err)
		return
	}
	data := bytes.Repeat([]byte{'x'}, size)
	errs.count.Store(0)

	c0 := cpuNanos()
	t0 := time.Now()
	acked, failed, tLast := publishWindowed(js, opt.jsN, data, t0)
	t1 := time.Now()
	c1 := cpuNanos()
	if acked < opt.jsN {
		t1 = tLast // time of the last observed progress
	}
	secs := max(t1.Sub(t0).Seconds(), 1e-9)
	printResult("scenario=jspub client=%s size=%d n=%d acked=%d unacked=%d secs=%.6f msgs_per_s=%.1f mb_per_s=%.3f window=%d errors=%d cpu_ns_per_msg=%.1f",
		client, size, opt.jsN, acked, opt.jsN-acked, secs, float64(acked)/secs,
		float64(acked)*float64(size)/1e6/secs, max(opt.window, 1), failed+errs.count.Load(),
		cpuPerMsg(c0, c1, int64(acked)))
}

// latencyStats sorts lat (microseconds) and returns its mean and its p50
// and p99 by nearest rank (0 for an empty slice).
func latencyStats(lat []float64) (mean, p50, p99 float64) {
	if len(lat) == 0 {
		return 0, 0, 0
	}
	var sum float64
	for _, x := range lat {
		sum += x
	}
	sort.Float64s(lat)
	return sum / float64(len(lat)), percentile(lat, 50), percentile(lat, 99)
}

// emitLatency prints one latency line (jspub-sync, kv-put, kv-get): the
// rate counts all n operations, the latencies only the successful ones;
// cpu is the process CPU (ns) over the timed region.
func emitLatency(scenario, rateKey string, size, n int, secs float64, lat []float64, errCount int64, cpu float64) {
	secs = max(secs, 1e-9)
	mean, p50, p99 := latencyStats(lat)
	printResult("scenario=%s client=%s size=%d n=%d secs=%.6f %s=%.1f mean_us=%.1f p50_us=%.1f p99_us=%.1f errors=%d cpu_ns_per_msg=%.1f",
		scenario, client, size, n, secs, rateKey, float64(n)/secs, mean, p50, p99, errCount,
		cpuPerMsg(0, cpu, int64(n)))
}

func runJSPubSync(size int) {
	errs := &errorCounter{}
	nc, js, err := openJS(errs)
	if err == nil {
		defer closeAll(errs, nc)
		defer js.Close()
		err = freshBenchStream(js)
	}
	if err != nil {
		emitFailure("jspub-sync", size, "stream", err)
		return
	}
	data := bytes.Repeat([]byte{'x'}, size)
	ctx := context.Background() // each publish is bounded by JSTimeout
	for i := 0; i < opt.warmup; i++ {
		_, _ = js.Publish(ctx, "bench.js.a", data)
	}
	errs.count.Store(0)

	lat := make([]float64, 0, opt.k)
	var failed int64
	c0 := cpuNanos()
	t0 := time.Now()
	for i := 0; i < opt.k; i++ {
		a := time.Now()
		_, err := js.Publish(ctx, "bench.js.a", data)
		b := time.Now()
		if err != nil {
			failed++
		} else {
			lat = append(lat, float64(b.Sub(a).Nanoseconds())/1e3)
		}
		if b.Sub(t0) > opt.maxSecs {
			emitStatus("jspub-sync", size, "timeout", errors.New("max-secs"))
			return
		}
	}
	secs := time.Since(t0).Seconds()
	c1 := cpuNanos()
	emitLatency("jspub-sync", "msgs_per_s", size, opt.k, secs, lat, failed+errs.count.Load(), c1-c0)
}

// freshKV deletes bucket BENCHKV if it exists and creates it (history 1,
// file storage; the library always sets allow_direct).
func freshKV(js *natsio.JetStream) (*natsio.KeyValue, error) {
	ctx := context.Background() // each call is bounded by JSTimeout
	if err := js.DeleteKeyValue(ctx, "BENCHKV"); err != nil && !errors.Is(err, natsio.ErrBucketNotFound) {
		return nil, err
	}
	return js.CreateKeyValue(ctx, natsio.KeyValueConfig{Bucket: "BENCHKV", History: 1, Storage: natsio.FileStorage})
}

func runKV(size int) {
	errs := &errorCounter{}
	nc, js, err := openJS(errs)
	var kv *natsio.KeyValue
	ctx := context.Background() // each call is bounded by JSTimeout
	if err == nil {
		defer closeAll(errs, nc)
		defer js.Close()
		kv, err = freshKV(js)
	}
	if err != nil {
		emitFailure("kv-put", size, "bucket", err)
		emitFailure("kv-get", size, "bucket", err)
		return
	}
	data := bytes.Repeat([]byte{'x'}, size)
	for i := 0; i < opt.warmup; i++ {
		key := "warm" + strconv.Itoa(i)
		_, _ = kv.Put(ctx, key, data)
		_, _ = kv.Get(ctx, key)
	}

	K := opt.kvK
	keys := make([]string, K)
	for i := range keys {
		keys[i] = "k" + strconv.Itoa(i)
	}
	for phase, scenario := range []string{"kv-put", "kv-get"} {
		lat := make([]float64, 0, K)
		var failed int64
		timedOut := false
		errs.count.Store(0)
		c0 := cpuNanos()
		t0 := time.Now()
		for i := 0; i < K; i++ {
			var ok bool
			a := time.Now()
			if phase == 0 {
				_, err := kv.Put(ctx, keys[i], data)
				ok = err == nil
			} else {
				e, err := kv.Get(ctx, keys[i])
				ok = err == nil && len(e.Value) == size
			}
			b := time.Now()
			if ok {
				lat = append(lat, float64(b.Sub(a).Nanoseconds())/1e3)
			} else {
				failed++
			}
			if b.Sub(t0) > opt.maxSecs {
				timedOut = true
				break
			}
		}
		secs := time.Since(t0).Seconds()
		c1 := cpuNanos()
		if timedOut {
			emitStatus(scenario, size, "timeout", errors.New("max-secs"))
		} else {
			emitLatency(scenario, "ops_per_s", size, K, secs, lat, failed+errs.count.Load(), c1-c0)
		}
	}
}

// ---------------------------------------------------------------------------
// kv-par

// procStatus is a numeric field of /proc/self/status (-1 if unreadable).
func procStatus(field string) int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return -1
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			if fs := strings.Fields(v); len(fs) > 0 {
				if x, err := strconv.ParseInt(fs[0], 10, 64); err == nil {
					return x
				}
			}
		}
	}
	return -1
}

// printResult prints a result line (format without its newline) and ends it
// with rss_peak_kb: VmHWM, the process's peak resident set so far (run.sh
// runs one process per scenario and size, so it is that run's peak).
func printResult(format string, args ...any) {
	fmt.Printf(format, args...)
	fmt.Printf(" rss_peak_kb=%d\n", procStatus("VmHWM"))
}

// threadSampler records the highest Threads: of /proc/self/status, read
// every 2 ms until finish.
type threadSampler struct {
	peak atomic.Int64
	stop chan struct{}
	done chan struct{}
}

func startThreadSampler() *threadSampler {
	s := &threadSampler{stop: make(chan struct{}), done: make(chan struct{})}
	s.sample()
	go func() {
		defer close(s.done)
		t := time.NewTicker(2 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-s.stop:
				return
			case <-t.C:
				s.sample()
			}
		}
	}()
	return s
}

func (s *threadSampler) sample() {
	if v := procStatus("Threads"); v > s.peak.Load() {
		s.peak.Store(v)
	}
}

func (s *threadSampler) finish() int64 {
	close(s.stop)
	<-s.done
	s.sample()
	return s.peak.Load()
}

func runKVPar(size int) {
	errs := &errorCounter{}
	nc, js, err := openJS(errs)
	var kv *natsio.KeyValue
	ctx := context.Background() // each get is bounded by JSTimeout
	if err == nil {
		defer closeAll(errs, nc)
		defer js.Close()
		kv, err = freshKV(js)
	}
	if err != nil {
		emitFailure("kv-par", size, "bucket", err)
		return
	}
	data := bytes.Repeat([]byte{'x'}, size)
	K := opt.kvK
	keys := make([]string, K)
	for i := range keys {
		keys[i] = "k" + strconv.Itoa(i)
		if _, err := kv.Put(ctx, keys[i], data); err != nil {
			emitFailure("kv-par", size, "put", err)
			return
		}
	}
	errs.count.Store(0)

	// --par goroutines, each taking the next key: P gets in flight at once.
	workers := max(min(opt.par, K), 1)
	var next, failed atomic.Int64
	var timedOut atomic.Bool
	var wg sync.WaitGroup
	sampler := startThreadSampler()
	c0 := cpuNanos()
	t0 := time.Now()
	wg.Add(workers)
	for w := 0; w < workers; w++ {
		go func() {
			defer wg.Done()
			for {
				i := next.Add(1) - 1
				if i >= int64(K) {
					return
				}
				if time.Since(t0) > opt.maxSecs {
					timedOut.Store(true)
					return
				}
				e, err := kv.Get(ctx, keys[i])
				if err != nil || len(e.Value) != size {
					failed.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	secs := max(time.Since(t0).Seconds(), 1e-9)
	c1 := cpuNanos()
	peak := sampler.finish()
	if timedOut.Load() {
		emitStatus("kv-par", size, "timeout", errors.New("max-secs"))
		return
	}
	printResult("scenario=kv-par client=%s size=%d n=%d par=%d secs=%.6f ops_per_s=%.1f threads_peak=%d errors=%d cpu_ns_per_msg=%.1f",
		client, size, K, opt.par, secs, float64(K)/secs, peak, failed.Load()+errs.count.Load(),
		cpuPerMsg(c0, c1, int64(K)))
}

// ---------------------------------------------------------------------------
// js-consume

func runJSConsume(size int) {
	errs := &errorCounter{}
	nc, js, err := openJS(errs)
	if err == nil {
		defer closeAll(errs, nc)
		defer js.Close()
		err = freshBenchStream(js)
	}
	if err != nil {
		emitFailure("js-consume", size, "stream", err)
		return
	}
	n := opt.jsN
	data := bytes.Repeat([]byte{'x'}, size)
	// fill (untimed)
	if acked, _, _ := publishWindowed(js, n, data, time.Now()); acked != n {
		emitFailure("js-consume", size, "fill", fmt.Errorf("%d of %d acked", acked, n))
		return
	}
	ctx := context.Background() // each request is bounded by JSTimeout
	if _, err := js.CreateOrUpdateConsumer(ctx, "BENCH", natsio.ConsumerConfig{
		Durable:   "BENCHC",
		AckPolicy: natsio.AckExplicitPolicy,
	}); err != nil {
		emitFailure("js-consume", size, "consumer", err)
		return
	}
	errs.count.Store(0)

	var received, redelivered, failed int64
	c0 := cpuNanos()
	t0 := time.Now()
	tLast := t0
	cLast := c0
	cons, err := js.Consume(ctx, "BENCH", "BENCHC")
	if err != nil {
		emitFailure("js-consume", size, "consume", err)
		return
	}
	defer cons.Stop()
	// One context for the loop, as a user ranging over Msgs would have;
	// a watchdog ends it when no message came for the idle timeout (a
	// context per Next would add a timer per message, which nats.go's
	// callback does not have).
	loop, stopLoop := context.WithCancel(ctx)
	defer stopLoop()
	var progress atomic.Int64
	progress.Store(time.Now().UnixNano())
	idleStop := make(chan struct{})
	defer close(idleStop)
	go func() {
		tick := time.NewTicker(opt.idleTimeout / 10)
		defer tick.Stop()
		for {
			select {
			case <-idleStop:
				return
			case now := <-tick.C:
				if now.Sub(time.Unix(0, progress.Load())) > opt.idleTimeout {
					stopLoop()
					return
				}
			}
		}
	}()
	for received < int64(n) {
		m, err := cons.Next(loop)
		if err != nil {
			if loop.Err() == nil && !errors.Is(err, natsio.ErrTimeout) {
				failed++
			}
			break
		}
		received++
		tLast = time.Now()
		progress.Store(tLast.UnixNano())
		if received == int64(n) {
			cLast = cpuNanos() // the clock stops at the N-th message
		}
		if len(m.Data) != size {
			failed++
		}
		if md, err := m.Metadata(); err == nil && md.NumDelivered > 1 {
			redelivered++
		}
		if m.Ack() != nil {
			failed++
		}
		if tLast.Sub(t0) > opt.maxSecs {
			break
		}
	}
	secs := max(tLast.Sub(t0).Seconds(), 1e-9)
	if received < int64(n) {
		cLast = cpuNanos() // gave up: the CPU up to now
	}

	// untimed: wait until the server has every ack
	ackPending := -1
	deadline := time.Now().Add(opt.idleTimeout)
	for {
		if info, err := js.ConsumerInfo(ctx, "BENCH", "BENCHC"); err == nil {
			ackPending = info.NumAckPending
		}
		if ackPending == 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	printResult("scenario=js-consume client=%s size=%d n=%d received=%d secs=%.6f msgs_per_s=%.1f mb_per_s=%.3f redelivered=%d ack_pending=%d errors=%d cpu_ns_per_msg=%.1f",
		client, size, n, received, secs, float64(received)/secs, float64(received)*float64(size)/1e6/secs,
		redelivered, ackPending, failed+errs.count.Load(), cpuPerMsg(c0, cLast, received))
}

// ---------------------------------------------------------------------------
// obj-put / obj-get

// objData returns the spec's object bytes: xorshift32 (x ^= x<<13;
// x ^= x>>17; x ^= x<<5) from seed 0x2545F491, each state written as 4
// little-endian bytes, truncated to n. Every harness generates the same
// bytes this way.
func objData(n int) []byte {
	b := make([]byte, (n+3)&^3)
	x := uint32(0x2545F491)
	for i := 0; i < len(b); i += 4 {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		binary.LittleEndian.PutUint32(b[i:], x)
	}
	return b[:n]
}

const objNote = "data: xorshift32 seed 0x2545F491"

// objPattern: --obj-mode stream puts the first MiB of objData repeated
// (object i of a run starts at offset i*size of that endless stream), so no
// buffer of the object's size is ever held; every harness does the same.
const objPattern = 1 << 20

// objRun is one of the two runs of obj-put/obj-get: one large object or
// --obj-small objects of 1 KiB.
type objRun struct {
	name  string // "big" or "small"
	size  int    // bytes per object
	count int
}

func objRuns() []objRun {
	return []objRun{
		{"big", opt.objMB << 20, 1},
		{"small", 1024, opt.objSmall},
	}
}

func objName(r objRun, i int) string {
	if r.name == "big" {
		return "big"
	}
	return "small-" + strconv.Itoa(i)
}

// objSource is what a run's puts read: all the objects' bytes (memory
// mode) or the pattern the stream mode repeats.
func objSource(r objRun) []byte {
	total := r.size * r.count
	if opt.objMode == "stream" {
		return objData(min(max(total, 4), objPattern))
	}
	return objData(total)
}

// patternReader is the stream mode's source: left bytes of the repeated
// pattern from off.
type patternReader struct {
	pat       []byte
	off, left int
}

func (p *patternReader) Read(b []byte) (int, error) {
	if p.left == 0 {
		return 0, io.EOF
	}
	at := p.off % len(p.pat)
	n := copy(b[:min(len(b), p.left)], p.pat[at:])
	p.off += n
	p.left -= n
	return n, nil
}

// putObjects stores the run's objects (memory mode: PutBytes of a slice of
// data; stream mode: Put from a patternReader over data) and returns the
// digest of the last one and the failed puts.
func putObjects(ctx context.Context, obs *natsio.ObjectStore, r objRun, data []byte) (string, int, error) {
	errs := 0
	digest := ""
	for i := 0; i < r.count; i++ {
		var info *natsio.ObjectInfo
		var err error
		if opt.objMode == "stream" {
			info, err = obs.Put(ctx, natsio.ObjectMeta{Name: objName(r, i)}, &patternReader{pat: data, off: i * r.size, left: r.size})
		} else {
			info, err = obs.PutBytes(ctx, objName(r, i), data[i*r.size:(i+1)*r.size])
		}
		if err != nil {
			if ctx.Err() != nil {
				return "", errs, err
			}
			errs++
			continue
		}
		digest = info.Digest
	}
	return digest, errs, nil
}

// getObjects reads the run's objects back (memory mode: GetBytes; stream
// mode: Get read into one 128 KiB buffer, bytes counted); the library
// verifies each object at the end of its read.
func getObjects(ctx context.Context, obs *natsio.ObjectStore, r objRun) (int, error) {
	errs := 0
	var buf []byte
	if opt.objMode == "stream" {
		buf = make([]byte, 128*1024)
	}
	for i := 0; i < r.count; i++ {
		got := 0
		var err error
		if buf == nil {
			var b []byte
			b, err = obs.GetBytes(ctx, objName(r, i))
			got = len(b)
		} else {
			var res *natsio.ObjectResult
			res, err = obs.Get(ctx, objName(r, i))
			for err == nil {
				var n int
				n, err = res.Read(buf)
				got += n
			}
			if err == io.EOF {
				err = nil
			}
			if res != nil {
				res.Close()
			}
		}
		if err != nil {
			if ctx.Err() != nil {
				return errs, err
			}
			errs++
		} else if got != r.size {
			errs++
		}
	}
	return errs, nil
}

// runObj prepares bucket BENCHOBJ for each run (for obj-get it also stores
// the objects, untimed) and measures the run in a child process.
func runObj(scenario string) {
	for _, r := range objRuns() {
		if err := prepareObj(scenario, r); err != nil {
			emitFailure(scenario, r.size, "prepare", err)
			continue
		}
		exe, err := os.Executable()
		if err != nil {
			emitFailure(scenario, r.size, "executable", err)
			continue
		}
		args := []string{
			"--url", opt.url,
			"--obj-mb", strconv.Itoa(opt.objMB), "--obj-small", strconv.Itoa(opt.objSmall),
			"--obj-mode", opt.objMode,
			"--idle-timeout", strconv.FormatFloat(opt.idleTimeout.Seconds(), 'f', -1, 64),
			"--max-secs", strconv.FormatFloat(opt.maxSecs.Seconds(), 'f', -1, 64),
			"--obj-child", scenario + ":" + r.name,
		}
		var out, stderr bytes.Buffer
		cmd := exec.Command(exe, args...)
		cmd.Stdout, cmd.Stderr = &out, &stderr
		err = cmd.Run()
		os.Stdout.Write(out.Bytes())
		if !strings.Contains(out.String(), "scenario="+scenario+" ") {
			if err == nil {
				err = errors.New("no result line")
			}
			emitFailure(scenario, r.size, "child", fmt.Errorf("%v: %s", err, strings.TrimSpace(stderr.String())))
		}
	}
}

func prepareObj(scenario string, r objRun) error {
	errs := &errorCounter{}
	nc, js, err := openJS(errs)
	if err != nil {
		return err
	}
	defer closeAll(errs, nc)
	ctx, cancel := context.WithTimeout(context.Background(), opt.maxSecs)
	defer cancel()
	if err := js.DeleteObjectStore(ctx, "BENCHOBJ"); err != nil && !errors.Is(err, natsio.ErrBucketNotFound) {
		return fmt.Errorf("delete bucket: %w", err)
	}
	obs, err := js.CreateObjectStore(ctx, natsio.ObjectStoreConfig{Bucket: "BENCHOBJ", Storage: natsio.FileStorage})
	if err != nil {
		return fmt.Errorf("create bucket: %w", err)
	}
	if scenario != "obj-get" {
		return nil
	}
	digest, failed, err := putObjects(ctx, obs, r, objSource(r))
	if err == nil && failed > 0 {
		err = fmt.Errorf("%d puts failed", failed)
	}
	if err == nil && r.name == "big" {
		fmt.Printf("# note client=%s obj: object %s digest=%s mode=%s (%s)\n", client, objName(r, 0), digest, opt.objMode, objNote)
	}
	return err
}

// objChild is one measured run in a fresh process: "obj-put:big" etc.
func objChild(spec string) int {
	scenario, which, _ := strings.Cut(spec, ":")
	var r objRun
	for _, x := range objRuns() {
		if x.name == which {
			r = x
		}
	}
	if r.name == "" || (scenario != "obj-put" && scenario != "obj-get") {
		fail("bad --obj-child: %s", spec)
	}
	var data []byte
	if scenario == "obj-put" {
		data = objSource(r)
	}
	errs := &errorCounter{}
	nc, js, err := openJS(errs)
	if err != nil {
		emitFailure(scenario, r.size, "connect", err)
		return 0
	}
	defer closeAll(errs, nc)
	ctx, cancel := context.WithTimeout(context.Background(), opt.maxSecs)
	defer cancel()
	obs, err := js.ObjectStore(ctx, "BENCHOBJ")
	if err != nil {
		emitFailure(scenario, r.size, "bucket", err)
		return 0
	}
	failed := 0
	digest := ""
	rssStart := procStatus("VmRSS")
	cpu0 := cpuNanos()
	t0 := time.Now()
	if scenario == "obj-put" {
		digest, failed, err = putObjects(ctx, obs, r, data)
	} else {
		failed, err = getObjects(ctx, obs, r)
	}
	secs := time.Since(t0).Seconds()
	cpu := cpuNanos() - cpu0
	if err != nil {
		emitFailure(scenario, r.size, "run", err)
		return 0
	}
	hwm := procStatus("VmHWM")
	if scenario == "obj-put" && r.name == "big" {
		fmt.Printf("# note client=%s obj: object %s digest=%s mode=%s (%s)\n", client, objName(r, 0), digest, opt.objMode, objNote)
	}
	total := float64(r.size) * float64(r.count)
	printResult("scenario=%s client=%s size=%d n=%d secs=%.6f mb_per_s=%.3f rss_peak_mb=%.1f rss_start_mb=%.1f mode=%s cpu_s=%.3f errors=%d",
		scenario, client, r.size, r.count, secs, total/1e6/secs, float64(hwm)*1024/1e6,
		float64(rssStart)*1024/1e6, opt.objMode, cpu/1e9, int64(failed)+errs.count.Load())
	return 0
}

// ---------------------------------------------------------------------------
// main

func usage() string {
	return `usage: natsio-go-bench [--url URL]
                       [--scenarios pub,pubsub,req,jspub,jspub-sync,kv,kv-par,js-consume,obj-put,obj-get,svc]
                       [--sizes 16,1024] [--n N] [--js-n N] [--k K] [--kv-k K]
                       [--window W] [--par P] [--obj-mb MiB] [--obj-small N] [--warmup W]
                       [--idle-timeout S] [--max-secs S] [--pubsub-limits default|unlimited]
                       [--obj-mode memory|stream]`
}

func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "natsio-go-bench: "+format+"\n", args...)
	os.Exit(2)
}

func parseArgs(args []string) {
	count := func(name, v string) int {
		x, err := strconv.Atoi(v)
		if err != nil || x < 0 {
			fail("bad value for %s: %s", name, v)
		}
		return x
	}
	seconds := func(name, v string) time.Duration {
		x, err := strconv.ParseFloat(v, 64)
		if err != nil || x <= 0 {
			fail("bad value for %s: %s", name, v)
		}
		return time.Duration(x * float64(time.Second))
	}
	for i := 0; i < len(args); i++ {
		name := args[i]
		if name == "-h" || name == "--help" {
			fmt.Println(usage())
			os.Exit(0)
		}
		if !strings.HasPrefix(name, "--") {
			fail("unexpected argument: %s\n%s", name, usage())
		}
		var v string
		if eq := strings.IndexByte(name, '='); eq >= 0 {
			name, v = name[:eq], name[eq+1:]
		} else {
			if i+1 >= len(args) {
				fail("missing value for %s", name)
			}
			i++
			v = args[i]
		}
		switch name {
		case "--url":
			opt.url = v
		case "--scenarios":
			opt.scenarios = v
		case "--sizes":
			opt.sizes = v
		case "--n":
			opt.n = count(name, v)
		case "--js-n":
			opt.jsN = count(name, v)
		case "--k":
			opt.k = count(name, v)
		case "--kv-k":
			opt.kvK = count(name, v)
		case "--window":
			opt.window = count(name, v)
		case "--warmup":
			opt.warmup = count(name, v)
		case "--par":
			opt.par = count(name, v)
		case "--obj-mb":
			opt.objMB = count(name, v)
		case "--obj-small":
			opt.objSmall = count(name, v)
		case "--idle-timeout":
			opt.idleTimeout = seconds(name, v)
		case "--max-secs":
			opt.maxSecs = seconds(name, v)
		case "--obj-mode":
			if v != "memory" && v != "stream" {
				fail("bad value for %s: %s", name, v)
			}
			opt.objMode = v
		case "--obj-child":
			opt.objChild = v
		case "--pubsub-limits":
			switch v {
			case "default":
				opt.unlimited = false
			case "unlimited":
				opt.unlimited = true
			default:
				fail("bad value for %s: %s", name, v)
			}
		default:
			fail("unknown option: %s\n%s", name, usage())
		}
	}
}

func main() {
	parseArgs(os.Args[1:])
	if opt.objChild != "" {
		os.Exit(objChild(opt.objChild))
	}
	if opt.unlimited {
		client += ":unlimited"
	}
	var sizes []int
	for _, s := range strings.Split(opt.sizes, ",") {
		x, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || x < 0 {
			fail("bad value for --sizes: %s", s)
		}
		sizes = append(sizes, x)
	}
	fmt.Printf("# client=%s version=%s url=%s\n", client, natsio.Version(), opt.url)
	for _, scenario := range strings.Split(opt.scenarios, ",") {
		if scenario == "obj-put" || scenario == "obj-get" {
			runObj(scenario) // sizes fixed by the spec, not --sizes
			continue
		}
		for _, size := range sizes {
			switch scenario {
			case "pub":
				runPub(size)
			case "pubsub":
				runPubSub(size)
			case "req":
				runReq(size)
			case "svc":
				runSvc(size)
			case "jspub":
				runJSPub(size)
			case "jspub-sync":
				runJSPubSync(size)
			case "kv":
				runKV(size)
			case "kv-par":
				runKVPar(size)
			case "js-consume":
				runJSConsume(size)
			default:
				emitStatus(scenario, size, "unsupported", nil)
			}
		}
	}
}
