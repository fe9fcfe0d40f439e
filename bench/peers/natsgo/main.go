// Command natsgo-bench is the peer benchmark harness over nats.go (the
// official Go client, with its jetstream package for JetStream, Key-Value
// and Object Store): the CLI, scenarios, clock boundaries and output lines
// of the shared bench spec, with client=nats.go. Its rows are the reference
// for the Go binding's (client=libnatsio-go).
//
//	pub         Conn.Publish N times, then Conn.FlushTimeout (PING/PONG:
//	            flush=pingpong)
//	pubsub      callback subscription (Conn.Subscribe) counting messages,
//	            publisher on a second connection
//	req         responder: callback subscription answering with Msg.Respond
//	            on its own connection; requester: Conn.Request, one at a time
//	svc         req through a micro service (service bench, endpoint echo on
//	            bench.svc.echo, Request.Respond), then the service's STATS
//	            read with a $SRV.STATS.bench request: stats_ok=1 when
//	            num_requests is warmup + K
//	jspub       JetStream.PublishAsync with at most --window futures unacked
//	            (a ring; PublishAsyncMaxPending = window, stall wait and async
//	            ack timeout = idle timeout), waiting on the oldest when full
//	jspub-sync  JetStream.Publish, one at a time
//	kv          KeyValue.Put of k0..k(K-1), then KeyValue.Get of them
//	kv-par      K KeyValue.Get calls from --par goroutines (P in flight)
//	js-consume  Consumer.Consume (continuous pull) on a durable pull
//	            consumer, Msg.Ack per message
//	obj-put     ObjectStore.PutBytes; obj-get: ObjectStore.GetBytes (the
//	            library checks the SHA-256 digest at the end of the read);
//	            --obj-mode stream: ObjectStore.Put from an io.Reader that
//	            repeats a 1 MiB pattern, ObjectStore.Get read into one
//	            128 KiB buffer (no buffer of the object's size)
//
// Every line with a message/operation count (pub, pubsub, req, jspub,
// jspub-sync, kv-put, kv-get, kv-par, js-consume) has cpu_ns_per_msg: user+sys
// CPU of the whole process (syscall.Getrusage, every goroutine and thread)
// over exactly the timed region, divided by the line's messages/operations.
//
// The JetStream context's default timeout is the idle timeout (the
// library's own default is 5 s, the spec's default idle timeout). obj-put
// and obj-get run each measured part in a fresh process (this program
// re-executed with --obj-child), so rss_peak_mb (VmHWM) is that of the one
// run alone.
//
// Build: go build -o ../../../build/bench-natsgo/natsgo-bench . (bench/run.sh
// does it).
package main

import (
	"bufio"
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

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nats.go/micro"
)

const client = "nats.go"

type options struct {
	url         string
	scenarios   string
	sizes       string
	n           int
	jsN         int
	k           int
	kvK         int
	window      int
	par         int
	objMB       int
	objSmall    int
	warmup      int
	idleTimeout time.Duration
	maxSecs     time.Duration
	objMode     string // obj-put/obj-get data path: memory (the spec's) or stream
	objChild    string // internal: one obj-put/obj-get run in this process
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
	par:         256,
	objMB:       64,
	objSmall:    1000,
	objMode:     "memory",
	warmup:      100,
	idleTimeout: 5 * time.Second,
	maxSecs:     120 * time.Second,
}

func usage() string {
	return `usage: natsgo-bench [--url URL]
        [--scenarios pub,pubsub,req,jspub,jspub-sync,kv,kv-par,js-consume,obj-put,obj-get,svc]
        [--sizes 16,1024] [--n N] [--js-n N] [--k K] [--kv-k K] [--window W]
        [--par P] [--obj-mb MiB] [--obj-small N] [--warmup W]
        [--idle-timeout S] [--max-secs S] [--obj-mode memory|stream]`
}

func fail(format string, a ...any) {
	fmt.Fprintf(os.Stderr, "natsgo-bench: "+format+"\n", a...)
	os.Exit(2)
}

// ---------------------------------------------------------------------------
// output helpers

func sanitize(s string) string {
	return strings.Map(func(r rune) rune {
		if r == ' ' || r == '\t' || r == '\n' || r == '\r' {
			return '_'
		}
		return r
	}, s)
}

func status(scenario string, size int, st string, err error) {
	if err != nil {
		fmt.Printf("scenario=%s client=%s size=%d n=- status=%s error=%s\n",
			scenario, client, size, st, sanitize(err.Error()))
	} else {
		fmt.Printf("scenario=%s client=%s size=%d n=- status=%s\n", scenario, client, size, st)
	}
}

func failed(scenario string, size int, what string, err error) {
	st := "failed"
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, nats.ErrTimeout) {
		st = "timeout"
	}
	status(scenario, size, st, fmt.Errorf("%s: %v", what, err))
}

type latency struct{ mean, p50, p99 float64 }

// nearest rank: sorted[ceil(p/100*K)-1]
func latStats(us []float64) latency {
	if len(us) == 0 {
		return latency{}
	}
	sort.Float64s(us)
	sum := 0.0
	for _, x := range us {
		sum += x
	}
	rank := func(p float64) float64 {
		i := int(math.Ceil(p/100*float64(len(us)))) - 1
		if i < 0 {
			i = 0
		}
		if i >= len(us) {
			i = len(us) - 1
		}
		return us[i]
	}
	return latency{sum / float64(len(us)), rank(50), rank(99)}
}

func us(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e3 }

// cpuNanos is the user+sys CPU time of the whole process (every thread).
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

func mbps(count, size int, secs float64) float64 {
	return float64(count) * float64(size) / 1e6 / secs
}

// printResult prints a result line (format without its newline) and ends it
// with rss_peak_kb: VmHWM, the process's peak resident set so far (run.sh
// runs one process per scenario and size, so it is that run's peak).
func printResult(format string, args ...any) {
	fmt.Printf(format, args...)
	fmt.Printf(" rss_peak_kb=%d\n", procStatus("VmHWM"))
}

// procStatus returns the value of a numeric field of /proc/self/status
// ("Threads", "VmHWM" in kB), or -1.
func procStatus(field string) int64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return -1
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, field+":") {
			fs := strings.Fields(line[len(field)+1:])
			if len(fs) > 0 {
				if v, err := strconv.ParseInt(fs[0], 10, 64); err == nil {
					return v
				}
			}
		}
	}
	return -1
}

// ---------------------------------------------------------------------------
// connections and asynchronous errors

// counters holds the asynchronous client errors (slow consumer, server
// -ERR, unexpected disconnect) of one scenario run.
type counters struct {
	errs    atomic.Int64
	closing atomic.Bool
}

func (c *counters) count() {
	if !c.closing.Load() {
		c.errs.Add(1)
	}
}

func connect(c *counters) (*nats.Conn, error) {
	return nats.Connect(opt.url,
		nats.ErrorHandler(func(*nats.Conn, *nats.Subscription, error) { c.count() }),
		nats.DisconnectErrHandler(func(*nats.Conn, error) { c.count() }),
	)
}

func closeConns(c *counters, ncs ...*nats.Conn) {
	c.closing.Store(true)
	for _, nc := range ncs {
		if nc != nil {
			nc.Close()
		}
	}
}

func payload(size int) []byte { return bytes.Repeat([]byte{'x'}, size) }

func newJS(nc *nats.Conn, extra ...jetstream.JetStreamOpt) (jetstream.JetStream, error) {
	return jetstream.New(nc, append([]jetstream.JetStreamOpt{jetstream.WithDefaultTimeout(opt.idleTimeout)}, extra...)...)
}

func idleCtx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), opt.idleTimeout)
}

// ---------------------------------------------------------------------------
// pub

func runPub(size int) {
	c := &counters{}
	nc, err := connect(c)
	if err != nil {
		failed("pub", size, "connect", err)
		return
	}
	defer closeConns(c, nc)
	data := payload(size)
	errs := 0
	c0 := cpuNanos()
	t0 := time.Now()
	for i := 0; i < opt.n; i++ {
		if nc.Publish("bench.pub", data) != nil {
			errs++
		}
		if i&4095 == 4095 && time.Since(t0) > opt.maxSecs {
			status("pub", size, "timeout", errors.New("max-secs"))
			return
		}
	}
	if err := nc.FlushTimeout(opt.idleTimeout); err != nil {
		failed("pub", size, "flush", err)
		return
	}
	secs := time.Since(t0).Seconds()
	c1 := cpuNanos()
	errs += int(c.errs.Load())
	printResult("scenario=pub client=%s size=%d n=%d secs=%.6f msgs_per_s=%.1f mb_per_s=%.3f errors=%d flush=pingpong cpu_ns_per_msg=%.1f",
		client, size, opt.n, secs, float64(opt.n)/secs, mbps(opt.n, size, secs), errs, cpuPerMsg(c0, c1, int64(opt.n)))
}

// ---------------------------------------------------------------------------
// waiting for a count with the spec's idle/max bounds

// waitCount waits until done is closed (then returns true) or until cur()
// has not moved for the idle timeout or the run is past max-secs (returns
// false and the time of the last observed progress).
func waitCount(t0 time.Time, done <-chan struct{}, cur func() int64) (bool, time.Time) {
	last := int64(-1)
	lastProgress := time.Now()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-done:
			return true, time.Time{}
		case <-tick.C:
		}
		now := time.Now()
		if r := cur(); r != last {
			last, lastProgress = r, now
		}
		if now.Sub(lastProgress) > opt.idleTimeout || now.Sub(t0) > opt.maxSecs {
			return false, lastProgress
		}
	}
}

// ---------------------------------------------------------------------------
// pubsub

func runPubSub(size int) {
	c := &counters{}
	snc, err := connect(c)
	if err != nil {
		failed("pubsub", size, "connect", err)
		return
	}
	pnc, err := connect(c)
	if err != nil {
		closeConns(c, snc)
		failed("pubsub", size, "connect", err)
		return
	}
	defer closeConns(c, pnc, snc)

	n := int64(opt.n)
	var received, badsize atomic.Int64
	var tDone time.Time
	var cDone float64 // process CPU at tDone
	done := make(chan struct{})
	_, err = snc.Subscribe("bench.ps", func(m *nats.Msg) {
		if len(m.Data) != size {
			badsize.Add(1)
		}
		if received.Add(1) == n {
			tDone = time.Now()
			cDone = cpuNanos()
			close(done)
		}
	})
	if err == nil { // barrier: the SUB is registered once the PONG is back
		err = snc.FlushTimeout(opt.idleTimeout)
	}
	if err != nil {
		failed("pubsub", size, "subscribe", err)
		return
	}

	data := payload(size)
	errs := 0
	c0 := cpuNanos()
	t0 := time.Now()
	for i := 0; i < opt.n; i++ {
		if pnc.Publish("bench.ps", data) != nil {
			errs++
		}
		if i&4095 == 4095 && time.Since(t0) > opt.maxSecs {
			break
		}
	}
	if pnc.FlushTimeout(opt.idleTimeout) != nil {
		errs++
	}
	var tEnd time.Time
	c1 := c0
	complete := n == 0
	if complete {
		tEnd = t0
	} else {
		var last time.Time
		if complete, last = waitCount(t0, done, received.Load); complete {
			tEnd, c1 = tDone, cDone
		} else {
			tEnd, c1 = last, cpuNanos()
		}
	}
	got := received.Load()
	if complete || got > n {
		got = n
	}
	secs := math.Max(tEnd.Sub(t0).Seconds(), 1e-9)
	errs += int(c.errs.Load() + badsize.Load())
	printResult("scenario=pubsub client=%s size=%d n=%d received=%d lost=%d secs=%.6f msgs_per_s=%.1f mb_per_s=%.3f errors=%d cpu_ns_per_msg=%.1f",
		client, size, n, got, n-got, secs, float64(got)/secs, mbps(int(got), size, secs), errs, cpuPerMsg(c0, c1, got))
}

// ---------------------------------------------------------------------------
// req

// connectPair connects req's and svc's responder and requester.
func connectPair(scenario string, size int, c *counters) (rnc, qnc *nats.Conn, ok bool) {
	rnc, err := connect(c)
	if err != nil {
		failed(scenario, size, "connect", err)
		return nil, nil, false
	}
	qnc, err = connect(c)
	if err != nil {
		closeConns(c, rnc)
		failed(scenario, size, "connect", err)
		return nil, nil, false
	}
	return rnc, qnc, true
}

// requestRun is what requestLoop measured.
type requestRun struct {
	lat    []float64 // microseconds
	errs   int       // failed requests and wrong-size replies
	secs   float64
	c0, c1 float64 // process CPU (ns) at the clock's start and stop
}

// requestLoop is req's and svc's timed part: --warmup untimed requests
// (then the asynchronous error count is reset), then K sequential
// requests to subject, each timed. false when --max-secs ran out (the
// timeout line is printed).
func requestLoop(scenario string, c *counters, qnc *nats.Conn, subject string, data []byte) (requestRun, bool) {
	for i := 0; i < opt.warmup; i++ {
		_, _ = qnc.Request(subject, data, opt.idleTimeout)
	}
	c.errs.Store(0)

	r := requestRun{lat: make([]float64, 0, opt.k)}
	r.c0 = cpuNanos()
	t0 := time.Now()
	for i := 0; i < opt.k; i++ {
		a := time.Now()
		m, err := qnc.Request(subject, data, opt.idleTimeout)
		b := time.Now()
		if err != nil {
			r.errs++
		} else {
			if len(m.Data) != len(data) {
				r.errs++
			}
			r.lat = append(r.lat, us(b.Sub(a)))
		}
		if b.Sub(t0) > opt.maxSecs {
			status(scenario, len(data), "timeout", errors.New("max-secs"))
			return r, false
		}
	}
	r.secs = time.Since(t0).Seconds()
	r.c1 = cpuNanos()
	r.errs += int(c.errs.Load())
	return r, true
}

func runReq(size int) {
	c := &counters{}
	rnc, qnc, ok := connectPair("req", size, c)
	if !ok {
		return
	}
	defer closeConns(c, qnc, rnc)
	_, err := rnc.Subscribe("bench.req", func(m *nats.Msg) { _ = m.Respond(m.Data) })
	if err == nil {
		err = rnc.FlushTimeout(opt.idleTimeout)
	}
	if err != nil {
		failed("req", size, "subscribe", err)
		return
	}
	r, ok := requestLoop("req", c, qnc, "bench.req", payload(size))
	if !ok {
		return
	}
	l := latStats(r.lat)
	printResult("scenario=req client=%s size=%d n=%d secs=%.6f msgs_per_s=%.1f mean_us=%.1f p50_us=%.1f p99_us=%.1f errors=%d cpu_ns_per_msg=%.1f",
		client, size, opt.k, r.secs, float64(opt.k)/r.secs, l.mean, l.p50, l.p99, r.errs, cpuPerMsg(r.c0, r.c1, int64(opt.k)))
}

// runSvc is req through a nats.go micro service: service bench, endpoint
// echo on bench.svc.echo (default queue group), then the service's
// num_requests read with a $SRV.STATS.bench request and checked to be
// warmup + K (stats_ok=1).
func runSvc(size int) {
	c := &counters{}
	rnc, qnc, ok := connectPair("svc", size, c)
	if !ok {
		return
	}
	defer closeConns(c, qnc, rnc)
	svc, err := micro.AddService(rnc, micro.Config{Name: "bench", Version: "1.0.0"})
	if err == nil {
		defer svc.Stop()
		err = svc.AddEndpoint("echo", micro.HandlerFunc(func(r micro.Request) {
			if r.Respond(r.Data()) != nil {
				c.errs.Add(1)
			}
		}), micro.WithEndpointSubject("bench.svc.echo"))
	}
	if err == nil {
		err = rnc.FlushTimeout(opt.idleTimeout)
	}
	if err != nil {
		failed("svc", size, "service", err)
		return
	}
	r, ok := requestLoop("svc", c, qnc, "bench.svc.echo", payload(size))
	if !ok {
		return
	}
	statsOK := 0
	if m, err := qnc.Request("$SRV.STATS.bench", nil, opt.idleTimeout); err == nil {
		var stats micro.Stats
		if json.Unmarshal(m.Data, &stats) == nil && len(stats.Endpoints) == 1 &&
			stats.Endpoints[0].NumRequests == opt.warmup+opt.k {
			statsOK = 1
		}
	}
	l := latStats(r.lat)
	printResult("scenario=svc client=%s size=%d n=%d secs=%.6f msgs_per_s=%.1f mean_us=%.1f p50_us=%.1f p99_us=%.1f errors=%d stats_ok=%d cpu_ns_per_msg=%.1f",
		client, size, opt.k, r.secs, float64(opt.k)/r.secs, l.mean, l.p50, l.p99, r.errs, statsOK, cpuPerMsg(r.c0, r.c1, int64(opt.k)))
}

// ---------------------------------------------------------------------------
// JetStream

func freshBenchStream(js jetstream.JetStream) error {
	ctx, cancel := idleCtx()
	defer cancel()
	if err := js.DeleteStream(ctx, "BENCH"); err != nil && !errors.Is(err, jetstream.ErrStreamNotFound) {
		return fmt.Errorf("delete stream: %w", err)
	}
	_, err := js.CreateStream(ctx, jetstream.StreamConfig{
		Name:      "BENCH",
		Subjects:  []string{"bench.js.>"},
		Storage:   jetstream.FileStorage,
		Replicas:  1,
		Retention: jetstream.LimitsPolicy,
	})
	if err != nil {
		return fmt.Errorf("create stream: %w", err)
	}
	return nil
}

// asyncWindowJS is a JetStream context for windowed asynchronous publishing.
func asyncWindowJS(nc *nats.Conn) (jetstream.JetStream, error) {
	return newJS(nc,
		jetstream.WithPublishAsyncMaxPending(opt.window),
		jetstream.WithPublishAsyncTimeout(opt.idleTimeout))
}

// publishWindowed publishes n messages with at most --window unacked (a ring
// of futures, the oldest waited on when full). It returns the acks, the
// failed publishes and the time of the last ack; stop() ends it early.
func publishWindowed(js jetstream.JetStream, n int, data []byte, t0 time.Time, stop func() bool) (acked, errs int, tLast time.Time) {
	ring := make([]jetstream.PubAckFuture, opt.window)
	head, pending := 0, 0
	tLast = t0
	wait := func() {
		f := ring[head]
		ring[head] = nil
		head = (head + 1) % len(ring)
		pending--
		select {
		case <-f.Ok():
			acked++
			tLast = time.Now()
		case <-f.Err():
			errs++
		}
	}
	stalled := false
	for i := 0; i < n; i++ {
		if pending == len(ring) {
			wait()
		}
		f, err := js.PublishAsync("bench.js.a", data, jetstream.WithStallWait(opt.idleTimeout))
		if err != nil {
			errs++
		} else {
			ring[(head+pending)%len(ring)] = f
			pending++
		}
		if i&1023 == 1023 && stop() {
			stalled = true
			break
		}
	}
	for pending > 0 && !stalled && !stop() {
		wait()
	}
	return acked, errs, tLast
}

func runJSPub(size int) {
	c := &counters{}
	nc, err := connect(c)
	if err != nil {
		failed("jspub", size, "connect", err)
		return
	}
	defer closeConns(c, nc)
	js, err := asyncWindowJS(nc)
	if err == nil {
		err = freshBenchStream(js)
	}
	if err != nil {
		failed("jspub", size, "stream", err)
		return
	}
	c.errs.Store(0)
	data := payload(size)
	n := opt.jsN
	c0 := cpuNanos()
	t0 := time.Now()
	acked, errs, tLast := publishWindowed(js, n, data, t0, func() bool { return time.Since(t0) > opt.maxSecs })
	c1 := cpuNanos() // the clock stops at the last ack (tLast), when the windowed publish returns
	secs := math.Max(tLast.Sub(t0).Seconds(), 1e-9)
	errs += int(c.errs.Load())
	printResult("scenario=jspub client=%s size=%d n=%d acked=%d unacked=%d secs=%.6f msgs_per_s=%.1f mb_per_s=%.3f window=%d errors=%d cpu_ns_per_msg=%.1f",
		client, size, n, acked, n-acked, secs, float64(acked)/secs, mbps(acked, size, secs), opt.window, errs,
		cpuPerMsg(c0, c1, int64(acked)))
}

func runJSPubSync(size int) {
	c := &counters{}
	nc, err := connect(c)
	if err != nil {
		failed("jspub-sync", size, "connect", err)
		return
	}
	defer closeConns(c, nc)
	js, err := newJS(nc)
	if err == nil {
		err = freshBenchStream(js)
	}
	if err != nil {
		failed("jspub-sync", size, "stream", err)
		return
	}
	data := payload(size)
	ctx := context.Background() // the context's default timeout applies
	for i := 0; i < opt.warmup; i++ {
		_, _ = js.Publish(ctx, "bench.js.a", data)
	}
	c.errs.Store(0)
	lat := make([]float64, 0, opt.k)
	errs := 0
	c0 := cpuNanos()
	t0 := time.Now()
	for i := 0; i < opt.k; i++ {
		a := time.Now()
		_, err := js.Publish(ctx, "bench.js.a", data)
		b := time.Now()
		if err != nil {
			errs++
		} else {
			lat = append(lat, us(b.Sub(a)))
		}
		if b.Sub(t0) > opt.maxSecs {
			status("jspub-sync", size, "timeout", errors.New("max-secs"))
			return
		}
	}
	secs := time.Since(t0).Seconds()
	c1 := cpuNanos()
	errs += int(c.errs.Load())
	l := latStats(lat)
	printResult("scenario=jspub-sync client=%s size=%d n=%d secs=%.6f msgs_per_s=%.1f mean_us=%.1f p50_us=%.1f p99_us=%.1f errors=%d cpu_ns_per_msg=%.1f",
		client, size, opt.k, secs, float64(opt.k)/secs, l.mean, l.p50, l.p99, errs, cpuPerMsg(c0, c1, int64(opt.k)))
}

// ---------------------------------------------------------------------------
// kv

var kvNotePrinted bool

// freshKV deletes and creates bucket BENCHKV (history 1, file storage;
// nats.go creates KV streams with allow_direct=true).
func freshKV(js jetstream.JetStream) (jetstream.KeyValue, error) {
	ctx, cancel := idleCtx()
	defer cancel()
	if err := js.DeleteKeyValue(ctx, "BENCHKV"); err != nil && !errors.Is(err, jetstream.ErrBucketNotFound) {
		return nil, fmt.Errorf("delete bucket: %w", err)
	}
	kv, err := js.CreateKeyValue(ctx, jetstream.KeyValueConfig{
		Bucket:  "BENCHKV",
		History: 1,
		Storage: jetstream.FileStorage,
	})
	if err != nil {
		return nil, fmt.Errorf("create bucket: %w", err)
	}
	if !kvNotePrinted {
		kvNotePrinted = true
		direct := "unknown"
		if s, err := js.Stream(ctx, "KV_BENCHKV"); err == nil {
			direct = strconv.FormatBool(s.CachedInfo().Config.AllowDirect)
		}
		fmt.Printf("# note client=%s kv: KV_BENCHKV allow_direct=%s\n", client, direct)
	}
	return kv, nil
}

// kvLine prints a kv-put / kv-get line; cpu is the process CPU (ns) over
// the timed region.
func kvLine(scenario string, size, k int, secs float64, lat []float64, errs int, cpu float64) {
	l := latStats(lat)
	printResult("scenario=%s client=%s size=%d n=%d secs=%.6f ops_per_s=%.1f mean_us=%.1f p50_us=%.1f p99_us=%.1f errors=%d cpu_ns_per_msg=%.1f",
		scenario, client, size, k, secs, float64(k)/secs, l.mean, l.p50, l.p99, errs, cpuPerMsg(0, cpu, int64(k)))
}

func runKV(size int) {
	bad := func(what string, err error) {
		failed("kv-put", size, what, err)
		failed("kv-get", size, what, err)
	}
	c := &counters{}
	nc, err := connect(c)
	if err != nil {
		bad("connect", err)
		return
	}
	defer closeConns(c, nc)
	js, err := newJS(nc)
	if err != nil {
		bad("jetstream", err)
		return
	}
	kv, err := freshKV(js)
	if err != nil {
		bad("bucket", err)
		return
	}
	data := payload(size)
	ctx := context.Background()
	for i := 0; i < opt.warmup; i++ {
		key := fmt.Sprintf("warm%d", i)
		_, _ = kv.Put(ctx, key, data)
		_, _ = kv.Get(ctx, key)
	}

	k := opt.kvK
	for phase := 0; phase < 2; phase++ {
		scenario := [2]string{"kv-put", "kv-get"}[phase]
		c.errs.Store(0)
		lat := make([]float64, 0, k)
		errs := 0
		timedOut := false
		c0 := cpuNanos()
		t0 := time.Now()
		for i := 0; i < k; i++ {
			key := "k" + strconv.Itoa(i)
			a := time.Now()
			var err error
			var e jetstream.KeyValueEntry
			if phase == 0 {
				_, err = kv.Put(ctx, key, data)
			} else {
				e, err = kv.Get(ctx, key)
			}
			b := time.Now()
			if err != nil {
				errs++
			} else {
				if phase == 1 && len(e.Value()) != size {
					errs++
				}
				lat = append(lat, us(b.Sub(a)))
			}
			if b.Sub(t0) > opt.maxSecs {
				timedOut = true
				break
			}
		}
		secs := time.Since(t0).Seconds()
		c1 := cpuNanos()
		if timedOut {
			status(scenario, size, "timeout", errors.New("max-secs"))
		} else {
			kvLine(scenario, size, k, secs, lat, errs+int(c.errs.Load()), c1-c0)
		}
	}
}

// ---------------------------------------------------------------------------
// kv-par

// threadSampler records the highest Threads: of /proc/self/status, read
// every 2 ms until stopped.
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
	c := &counters{}
	nc, err := connect(c)
	if err != nil {
		failed("kv-par", size, "connect", err)
		return
	}
	defer closeConns(c, nc)
	js, err := newJS(nc)
	if err != nil {
		failed("kv-par", size, "jetstream", err)
		return
	}
	kv, err := freshKV(js)
	if err != nil {
		failed("kv-par", size, "bucket", err)
		return
	}
	data := payload(size)
	ctx := context.Background()
	k := opt.kvK
	keys := make([]string, k)
	for i := range keys {
		keys[i] = "k" + strconv.Itoa(i)
		if _, err := kv.Put(ctx, keys[i], data); err != nil {
			failed("kv-par", size, "put", err)
			return
		}
	}
	c.errs.Store(0)

	workers := opt.par
	if workers > k {
		workers = k
	}
	var next, errs atomic.Int64
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
				if i >= int64(k) {
					return
				}
				if time.Since(t0) > opt.maxSecs {
					timedOut.Store(true)
					return
				}
				e, err := kv.Get(ctx, keys[i])
				if err != nil || len(e.Value()) != size {
					errs.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	secs := time.Since(t0).Seconds()
	c1 := cpuNanos()
	peak := sampler.finish()
	if timedOut.Load() {
		status("kv-par", size, "timeout", errors.New("max-secs"))
		return
	}
	printResult("scenario=kv-par client=%s size=%d n=%d par=%d secs=%.6f ops_per_s=%.1f threads_peak=%d errors=%d cpu_ns_per_msg=%.1f",
		client, size, k, opt.par, secs, float64(k)/secs, peak, errs.Load()+c.errs.Load(), cpuPerMsg(c0, c1, int64(k)))
}

// ---------------------------------------------------------------------------
// js-consume

func runJSConsume(size int) {
	c := &counters{}
	nc, err := connect(c)
	if err != nil {
		failed("js-consume", size, "connect", err)
		return
	}
	defer closeConns(c, nc)
	js, err := asyncWindowJS(nc)
	if err == nil {
		err = freshBenchStream(js)
	}
	if err != nil {
		failed("js-consume", size, "stream", err)
		return
	}
	n := opt.jsN
	data := payload(size)
	// fill (untimed)
	t0 := time.Now()
	acked, _, _ := publishWindowed(js, n, data, t0, func() bool { return time.Since(t0) > opt.maxSecs })
	if acked != n {
		failed("js-consume", size, "fill", fmt.Errorf("%d of %d acked", acked, n))
		return
	}
	ctx, cancel := idleCtx()
	cons, err := js.CreateOrUpdateConsumer(ctx, "BENCH", jetstream.ConsumerConfig{
		Durable:   "BENCHC",
		AckPolicy: jetstream.AckExplicitPolicy,
	})
	cancel()
	if err != nil {
		failed("js-consume", size, "consumer", err)
		return
	}
	c.errs.Store(0)

	var received, redelivered, badsize, ackErrs, consumeErrs atomic.Int64
	var measuring atomic.Bool
	measuring.Store(true)
	var tDone time.Time
	var cDone float64 // process CPU at tDone
	done := make(chan struct{})
	target := int64(n)
	c0 := cpuNanos()
	t0 = time.Now()
	cc, err := cons.Consume(func(m jetstream.Msg) {
		if len(m.Data()) != size {
			badsize.Add(1)
		}
		if md, err := m.Metadata(); err == nil && md.NumDelivered > 1 {
			redelivered.Add(1)
		}
		if m.Ack() != nil {
			ackErrs.Add(1)
		}
		if received.Add(1) == target {
			tDone = time.Now()
			cDone = cpuNanos()
			close(done)
		}
	}, jetstream.ConsumeErrHandler(func(jetstream.ConsumeContext, error) {
		if measuring.Load() {
			consumeErrs.Add(1)
		}
	}))
	if err != nil {
		failed("js-consume", size, "consume", err)
		return
	}
	var tEnd time.Time
	c1 := c0
	complete := target == 0
	if complete {
		tEnd = t0
	} else {
		var last time.Time
		if complete, last = waitCount(t0, done, received.Load); complete {
			tEnd, c1 = tDone, cDone
		} else {
			tEnd, c1 = last, cpuNanos()
		}
	}
	got := received.Load()
	if complete || got > target {
		got = target
	}
	secs := math.Max(tEnd.Sub(t0).Seconds(), 1e-9)

	// untimed: wait until the server has every ack
	ackPending := -1
	deadline := time.Now().Add(opt.idleTimeout)
	for {
		ctx, cancel := idleCtx()
		info, err := cons.Info(ctx)
		cancel()
		if err == nil {
			ackPending = info.NumAckPending
		}
		if ackPending == 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	measuring.Store(false)
	cc.Stop()
	errs := badsize.Load() + ackErrs.Load() + consumeErrs.Load() + c.errs.Load()
	printResult("scenario=js-consume client=%s size=%d n=%d received=%d secs=%.6f msgs_per_s=%.1f mb_per_s=%.3f redelivered=%d ack_pending=%d errors=%d cpu_ns_per_msg=%.1f",
		client, size, n, got, secs, float64(got)/secs, mbps(int(got), size, secs), redelivered.Load(), ackPending, errs,
		cpuPerMsg(c0, c1, got))
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
// digest of the last one.
func putObjects(ctx context.Context, obs jetstream.ObjectStore, r objRun, data []byte) (string, int, error) {
	errs := 0
	digest := ""
	for i := 0; i < r.count; i++ {
		var info *jetstream.ObjectInfo
		var err error
		if opt.objMode == "stream" {
			info, err = obs.Put(ctx, jetstream.ObjectMeta{Name: objName(r, i)}, &patternReader{pat: data, off: i * r.size, left: r.size})
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
// checks the digest at the end of each read.
func getObjects(ctx context.Context, obs jetstream.ObjectStore, r objRun) (int, error) {
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
			var res jetstream.ObjectResult
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

func freshObjectStore(js jetstream.JetStream) (jetstream.ObjectStore, error) {
	ctx, cancel := idleCtx()
	defer cancel()
	if err := js.DeleteObjectStore(ctx, "BENCHOBJ"); err != nil && !errors.Is(err, jetstream.ErrStreamNotFound) &&
		!errors.Is(err, jetstream.ErrBucketNotFound) {
		return nil, fmt.Errorf("delete bucket: %w", err)
	}
	obs, err := js.CreateObjectStore(ctx, jetstream.ObjectStoreConfig{Bucket: "BENCHOBJ", Storage: jetstream.FileStorage})
	if err != nil {
		return nil, fmt.Errorf("create bucket: %w", err)
	}
	return obs, nil
}

// runObj prepares bucket BENCHOBJ for each run (for obj-get it also stores
// the objects, untimed) and measures the run in a child process.
func runObj(scenario string) {
	for _, r := range objRuns() {
		if err := prepareObj(scenario, r); err != nil {
			failed(scenario, r.size, "prepare", err)
			continue
		}
		exe, err := os.Executable()
		if err != nil {
			failed(scenario, r.size, "executable", err)
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
			failed(scenario, r.size, "child", fmt.Errorf("%v: %s", err, strings.TrimSpace(stderr.String())))
		}
	}
}

func prepareObj(scenario string, r objRun) error {
	c := &counters{}
	nc, err := connect(c)
	if err != nil {
		return err
	}
	defer closeConns(c, nc)
	js, err := newJS(nc)
	if err != nil {
		return err
	}
	obs, err := freshObjectStore(js)
	if err != nil {
		return err
	}
	if scenario != "obj-get" {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), opt.maxSecs)
	defer cancel()
	digest, errs, err := putObjects(ctx, obs, r, objSource(r))
	if err == nil && errs > 0 {
		err = fmt.Errorf("%d puts failed", errs)
	}
	if err == nil && r.name == "big" {
		fmt.Printf("# note client=%s obj: object %s digest=%s mode=%s (data: xorshift32 seed 0x2545F491)\n", client, objName(r, 0), digest, opt.objMode)
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
	c := &counters{}
	nc, err := connect(c)
	if err != nil {
		failed(scenario, r.size, "connect", err)
		return 0
	}
	defer closeConns(c, nc)
	js, err := newJS(nc)
	if err != nil {
		failed(scenario, r.size, "jetstream", err)
		return 0
	}
	ctx, cancel := context.WithTimeout(context.Background(), opt.maxSecs)
	defer cancel()
	obs, err := js.ObjectStore(ctx, "BENCHOBJ")
	if err != nil {
		failed(scenario, r.size, "bucket", err)
		return 0
	}
	errs := 0
	digest := ""
	rssStart := procStatus("VmRSS")
	t0 := time.Now()
	if scenario == "obj-put" {
		digest, errs, err = putObjects(ctx, obs, r, data)
	} else {
		errs, err = getObjects(ctx, obs, r)
	}
	secs := time.Since(t0).Seconds()
	if err != nil {
		failed(scenario, r.size, "run", err)
		return 0
	}
	hwm := procStatus("VmHWM")
	if scenario == "obj-put" && r.name == "big" {
		fmt.Printf("# note client=%s obj: object %s digest=%s mode=%s (data: xorshift32 seed 0x2545F491)\n", client, objName(r, 0), digest, opt.objMode)
	}
	total := r.size * r.count
	printResult("scenario=%s client=%s size=%d n=%d secs=%.6f mb_per_s=%.3f rss_peak_mb=%.1f rss_start_mb=%.1f mode=%s errors=%d",
		scenario, client, r.size, r.count, secs, mbps(total, 1, secs), float64(hwm)*1024/1e6,
		float64(rssStart)*1024/1e6, opt.objMode, errs+int(c.errs.Load()))
	return 0
}

// ---------------------------------------------------------------------------
// main

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
		if err != nil || !(x > 0) {
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
			opt.window = max(count(name, v), 1)
		case "--par":
			opt.par = max(count(name, v), 1)
		case "--obj-mb":
			opt.objMB = count(name, v)
		case "--obj-small":
			opt.objSmall = count(name, v)
		case "--warmup":
			opt.warmup = count(name, v)
		case "--idle-timeout":
			opt.idleTimeout = seconds(name, v)
		case "--max-secs":
			opt.maxSecs = seconds(name, v)
		case "--obj-child":
			opt.objChild = v
		case "--obj-mode":
			if v != "memory" && v != "stream" {
				fail("bad value for %s: %s", name, v)
			}
			opt.objMode = v
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
	var sizes []int
	for _, s := range strings.Split(opt.sizes, ",") {
		if s = strings.TrimSpace(s); s == "" {
			continue
		}
		x, err := strconv.Atoi(s)
		if err != nil || x < 0 {
			fail("bad value for --sizes: %s", s)
		}
		sizes = append(sizes, x)
	}
	fmt.Printf("# client=%s version=%s url=%s\n", client, nats.Version, opt.url)
	for _, scenario := range strings.Split(opt.scenarios, ",") {
		if scenario == "" {
			continue
		}
		if scenario == "obj-put" || scenario == "obj-get" {
			// sizes fixed by the spec: --obj-mb MiB, then --obj-small x 1 KiB
			runObj(scenario)
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
				status(scenario, size, "unsupported", nil)
			}
		}
	}
}
