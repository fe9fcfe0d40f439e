package natsio_test

// The conformance table (tests/conformance/cases.txt, shared by the C, C++,
// Go and Node suites): every line runs as a subtest named after it
// (TestConformance/error_511_NO_MESSAGES, .../behaviour_flush_bound); a
// line this file has no check for fails.

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	natsio "github.com/libnatsio/natsio/bindings/go"
	"github.com/libnatsio/natsio/bindings/go/micro"
)

const casesFile = "../../tests/conformance/cases.txt"

type conformanceCase struct {
	kind   string
	fields []string // after the kind
}

// name is the subtest's: the kind and the case's name (error_511_NO_MESSAGES,
// default_default_url).
func (c conformanceCase) name() string {
	n := 1
	if c.kind == "error" || c.kind == "facade" {
		n = 2
	}
	return c.kind + "_" + strings.Join(c.fields[:min(n, len(c.fields))], "_")
}

func readCases(t *testing.T) []conformanceCase {
	t.Helper()
	f, err := os.Open(casesFile)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var cases []conformanceCase
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line, _, _ := strings.Cut(sc.Text(), "#")
		fields := strings.Fields(line)
		if len(fields) == 0 {
			continue
		}
		cases = append(cases, conformanceCase{kind: fields[0], fields: fields[1:]})
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(cases) == 0 {
		t.Fatal("no cases read")
	}
	return cases
}

func TestConformance(t *testing.T) {
	cases := readCases(t)

	// The error tree: status -> its ancestors, as the table lists them.
	tree := map[int32][]int32{}
	for _, c := range cases {
		if c.kind != "error" {
			continue
		}
		codes := make([]int32, 0, len(c.fields))
		for i, f := range c.fields {
			if i == 1 {
				continue // the name
			}
			n, err := strconv.ParseInt(f, 10, 32)
			if err != nil {
				t.Fatalf("bad line %v: %v", c, err)
			}
			codes = append(codes, int32(n))
		}
		tree[codes[0]] = codes[1:]
	}
	// Every status of the table has a sentinel, and every sentinel (but
	// ErrDone's, which is no error) a line.
	for _, code := range natsio.SentinelCodesForTest() {
		if _, ok := tree[code]; !ok && code != 1 {
			t.Errorf("sentinel %v (status %d) has no line in %s", natsio.SentinelForTest(code), code, casesFile)
		}
	}

	// One JetStream server for the lines that need one, started by the
	// first of them and stopped when TestConformance ends.
	var jsOnce sync.Once
	var js *natsio.JetStream
	var jsURL string
	parent := t
	jetStreamServer := func(t *testing.T) (*natsio.JetStream, string) {
		jsOnce.Do(func() {
			s, err := startServer("-js", "-sd", parent.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			parent.Cleanup(s.stop)
			nc, err := natsio.Connect(s.url)
			if err != nil {
				t.Fatal(err)
			}
			parent.Cleanup(func() { nc.Close() })
			if js, err = nc.JetStream(); err != nil {
				t.Fatal(err)
			}
			parent.Cleanup(js.Close)
			jsURL = s.url
		})
		if js == nil {
			t.Fatal("no JetStream server")
		}
		return js, jsURL
	}

	for _, c := range cases {
		if c.kind == "facade" && (len(c.fields) == 0 || c.fields[0] != "go") {
			continue // another language's facade
		}
		t.Run(c.name(), func(t *testing.T) {
			switch c.kind {
			case "error":
				checkErrorCase(t, c, tree)
			case "data":
				js, url := jetStreamServer(t)
				checkDataCase(t, c, js, url)
			case "default":
				checkDefaultCase(t, c, jetStreamServer)
			case "behaviour":
				checkBehaviourCase(t, c, jetStreamServer)
			case "facade":
				_, url := jetStreamServer(t)
				checkFacadeCase(t, c, url)
			default:
				t.Fatalf("no Go check for %q lines", c.kind)
			}
		})
	}
}

// checkErrorCase: the *Error of the line's status matches its own and its
// ancestors' sentinels and no other status's.
func checkErrorCase(t *testing.T, c conformanceCase, tree map[int32][]int32) {
	code64, _ := strconv.ParseInt(c.fields[0], 10, 32)
	code := int32(code64)
	if got := natsio.StatusNameForTest(code); got != c.fields[1] {
		t.Fatalf("status %d is NATSIO_ERR_%s in the core, %s in the table", code, got, c.fields[1])
	}
	own := natsio.SentinelForTest(code)
	if own == nil {
		t.Fatalf("status %d (%s) has no sentinel", code, c.fields[1])
	}
	err := error(&natsio.Error{Status: natsio.Status(code), Detail: "conformance"})
	for other := range tree {
		s := natsio.SentinelForTest(other)
		if s == nil {
			continue // reported by its own line
		}
		want := other == code || slices.Contains(tree[code], other)
		if got := errors.Is(err, s); got != want {
			t.Errorf("errors.Is(Error{%d %s}, %v) = %v, want %v", code, c.fields[1], s, got, want)
		}
	}
	// The sentinel itself is its ancestors too (errors.Is(ErrNoMessages,
	// ErrTimeout)).
	for _, anc := range tree[code] {
		if !errors.Is(own, natsio.SentinelForTest(anc)) {
			t.Errorf("errors.Is(%v, %v) is false", own, natsio.SentinelForTest(anc))
		}
	}
}

// asError is err's *natsio.Error.
func asError(t *testing.T, err error, target error) *natsio.Error {
	t.Helper()
	var e *natsio.Error
	if !errors.As(err, &e) || !errors.Is(err, target) {
		t.Fatalf("got %v, want an *Error matching %v", err, target)
	}
	return e
}

func checkDataCase(t *testing.T, c conformanceCase, js *natsio.JetStream, _ string) {
	ctx := ctxTimeout(t, 10*time.Second)
	switch c.fields[0] {
	case "api_error":
		got(js.CreateStream(ctx, natsio.StreamConfig{Name: "CONF_API", Subjects: []string{"conf.api.a"}, Storage: natsio.MemoryStorage})).must(t)
		_, err := js.CreateStream(ctx, natsio.StreamConfig{Name: "CONF_API", Subjects: []string{"conf.api.b"}, Storage: natsio.MemoryStorage})
		if e := asError(t, err, natsio.ErrStreamNameInUse); e.APICode != 400 || e.ErrCode != 10058 {
			t.Errorf("name in use: APICode %d, ErrCode %d (want 400, 10058)", e.APICode, e.ErrCode)
		}
		_, err = js.StreamInfo(ctx, "CONF_MISSING")
		if e := asError(t, err, natsio.ErrStreamNotFound); e.APICode != 404 || e.ErrCode != 10059 {
			t.Errorf("stream not found: APICode %d, ErrCode %d (want 404, 10059)", e.APICode, e.ErrCode)
		}
	case "key_revision":
		kv := got(js.CreateKeyValue(ctx, natsio.KeyValueConfig{Bucket: "CONF_REV", History: 5, Storage: natsio.MemoryStorage})).must(t)
		got(kv.Put(ctx, "k", []byte("v"))).must(t)
		noErr(t, kv.Delete(ctx, "k"))
		_, err := kv.Get(ctx, "k")
		if e := asError(t, err, natsio.ErrKeyDeleted); e.Revision != 2 {
			t.Errorf("deleted key: Revision %d, want 2", e.Revision)
		}
		kv2 := got(js.CreateKeyValue(ctx, natsio.KeyValueConfig{Bucket: "CONF_REV2", Storage: natsio.MemoryStorage})).must(t)
		got(kv2.Put(ctx, "c", []byte("v"))).must(t)
		_, err = kv2.Create(ctx, "c", []byte("again"))
		if e := asError(t, err, natsio.ErrKeyExists); e.Revision != 1 {
			t.Errorf("existing key: Revision %d, want 1", e.Revision)
		}
	default:
		t.Fatalf("no Go check for data %q", c.fields[0])
	}
}

func checkDefaultCase(t *testing.T, c conformanceCase, jetStreamServer func(*testing.T) (*natsio.JetStream, string)) {
	if len(c.fields) != 2 {
		t.Fatalf("bad line %v", c)
	}
	value := c.fields[1]
	switch c.fields[0] {
	case "default_url":
		if natsio.DefaultURL != value {
			t.Fatalf("DefaultURL %q, table %q", natsio.DefaultURL, value)
		}
		outcome := func(url string) string {
			nc, err := natsio.Connect(url, natsio.ConnectTimeout(500*time.Millisecond))
			switch {
			case err == nil:
				u, _ := nc.ConnectedURL()
				nc.Close()
				return "connected to " + u
			case errors.Is(err, natsio.ErrNoServers):
				return "no servers: " + err.Error()
			}
			return "error " + err.Error()
		}
		empty, def := outcome(""), outcome(value)
		if empty != def || strings.HasPrefix(empty, "error") {
			t.Fatalf("Connect(\"\"): %s; Connect(%q): %s", empty, value, def)
		}
		// Proof that "" went to the default address: the connected URL, or
		// the error naming host:port when nothing listens there.
		if hostPort := strings.TrimPrefix(value, "nats://"); !strings.Contains(empty, hostPort) {
			t.Fatalf("Connect(\"\"): %s, which does not name %s", empty, hostPort)
		}
	case "delete_msg_erase":
		if value != "true" {
			t.Fatalf("no Go check for delete_msg_erase %s", value)
		}
		js, url := jetStreamServer(t)
		ctx := ctxTimeout(t, 10*time.Second)
		got(js.CreateStream(ctx, natsio.StreamConfig{Name: "CONF_DEL", Subjects: []string{"conf.del"}, Storage: natsio.MemoryStorage})).must(t)
		for range 2 {
			got(js.Publish(ctx, "conf.del", []byte("x"))).must(t)
		}
		request := deleteRequests(t, url, "CONF_DEL")
		noErr(t, js.DeleteMsg(ctx, "CONF_DEL", 1))
		if req := request(); req["no_erase"] == true || req["seq"] != float64(1) {
			t.Errorf("DeleteMsg without options sent %v", req)
		}
		_, err := js.GetMsg(ctx, "CONF_DEL", 1)
		wantErr(t, err, natsio.ErrMsgNotFound)
		noErr(t, js.DeleteMsg(ctx, "CONF_DEL", 2, natsio.NoErase()))
		if req := request(); req["no_erase"] != true {
			t.Errorf("DeleteMsg with NoErase sent %v", req)
		}
	case "sub_pending_limit_zero":
		if value != "disabled" {
			t.Fatalf("no Go check for sub_pending_limit_zero %s", value)
		}
		nc := connect(t, natsio.PendingLimits(10, 1<<20))
		subj := subject(t, "pending")
		zero, err := nc.SubscribeSync(subj, natsio.SubPendingLimits(0, 1<<20))
		noErr(t, err)
		// The control: without the option, the client's limit of 10.
		dflt, err := nc.SubscribeSync(subj)
		noErr(t, err)
		for range 50 {
			noErr(t, nc.Publish(subj, []byte("x")))
		}
		flush(t, nc) // the messages come before the flush's PONG
		if st, err := zero.Stats(); err != nil || st.PendingMsgs != 50 || st.Dropped != 0 {
			t.Errorf("limit 0: %+v (%v), want 50 pending, none dropped", st, err)
		}
		if st, err := dflt.Stats(); err != nil || st.PendingMsgs != 10 || st.Dropped != 40 {
			t.Errorf("no option: %+v (%v), want the client's limit: 10 pending, 40 dropped", st, err)
		}
	default:
		t.Fatalf("no Go check for default %q", c.fields[0])
	}
}

func checkBehaviourCase(t *testing.T, c conformanceCase, jetStreamServer func(*testing.T) (*natsio.JetStream, string)) {
	switch c.fields[0] {
	case "flush_bound":
		s := startTestServer(t)
		nc := connectTo(t, s.url, natsio.FlushTimeout(300*time.Millisecond))
		flush(t, nc)
		resume := s.pause(t)
		defer resume()
		cancellable, cancel := context.WithCancel(context.Background())
		defer cancel()
		for _, form := range []struct {
			name string
			ctx  context.Context
		}{{"Flush(context.Background())", context.Background()}, {"Flush(a ctx without deadline)", cancellable}} {
			start := time.Now()
			err := nc.Flush(form.ctx)
			took := time.Since(start)
			if !errors.Is(err, natsio.ErrTimeout) || took < 250*time.Millisecond || took > 2*time.Second {
				t.Errorf("%s with the server stopped: %v after %v, want ErrTimeout after about 300ms", form.name, err, took)
			}
		}
		resume()
		flush(t, nc)
	case "last_by_wildcard":
		js, _ := jetStreamServer(t)
		ctx := ctxTimeout(t, 10*time.Second)
		for _, direct := range []bool{false, true} {
			name, prefix := fmt.Sprintf("CONF_WILD_%v", direct), fmt.Sprintf("conf.wild.%v", direct)
			got(js.CreateStream(ctx, natsio.StreamConfig{Name: name, Subjects: []string{prefix + ".>"}, Storage: natsio.MemoryStorage, AllowDirect: direct})).must(t)
			for _, tail := range []string{"a", "b.c", "b", "a.x"} {
				got(js.Publish(ctx, prefix+"."+tail, []byte("m"))).must(t)
			}
			for filter, want := range map[string]uint64{prefix + ".*": 3, prefix + ".>": 4} {
				if m := got(js.GetLastMsg(ctx, name, filter)).must(t); m.Sequence != want {
					t.Errorf("last by %s (allow_direct %v): %d, want %d", filter, direct, m.Sequence, want)
				}
			}
		}
	case "fetch_refused":
		js, _ := jetStreamServer(t)
		ctx := ctxTimeout(t, 10*time.Second)
		got(js.CreateStream(ctx, natsio.StreamConfig{Name: "CONF_REFUSED", Subjects: []string{"conf.refused"}, Storage: natsio.MemoryStorage})).must(t)
		got(js.CreateConsumer(ctx, "CONF_REFUSED", natsio.ConsumerConfig{Durable: "c", MaxRequestBatch: 10})).must(t)
		_, err := js.Fetch(ctx, "CONF_REFUSED", "c", natsio.FetchMaxMessages(20), natsio.FetchExpires(500*time.Millisecond))
		wantErr(t, err, natsio.ErrJetStream, "Exceeded MaxRequestBatch")
	case "consume_budget":
		js, _ := jetStreamServer(t)
		ctx := ctxTimeout(t, 10*time.Second)
		got(js.CreateStream(ctx, natsio.StreamConfig{Name: "CONF_BUDGET", Subjects: []string{"conf.budget"}, Storage: natsio.MemoryStorage})).must(t)
		for range 100 {
			got(js.Publish(ctx, "conf.budget", []byte("m"))).must(t)
		}
		got(js.CreateConsumer(ctx, "CONF_BUDGET", natsio.ConsumerConfig{Durable: "c", AckPolicy: natsio.AckExplicitPolicy})).must(t)
		cons := got(js.Consume(ctx, "CONF_BUDGET", "c", natsio.ConsumeMaxMessages(10))).must(t)
		defer cons.Stop()
		noErr(t, got(cons.Next(ctx)).must(t).AckSync(ctx))
		most := 0
		for until := time.Now().Add(1500 * time.Millisecond); time.Now().Before(until); time.Sleep(50 * time.Millisecond) {
			most = max(most, got(js.ConsumerInfo(ctx, "CONF_BUDGET", "c")).must(t).NumAckPending)
		}
		if most < 5 || most > 10 {
			t.Errorf("num_ack_pending reached %d (ConsumeMaxMessages 10)", most)
		}
	case "callback_error":
		errs := make(chan error, 10)
		nc := connect(t, natsio.ErrorHandler(func(err error) { errs <- err }))
		subj := subject(t, "panics")
		got := make(chan string, 10)
		sub, err := nc.Subscribe(subj, func(m *natsio.Msg) {
			if string(m.Data) == "panic" {
				panic("handler failed")
			}
			got <- string(m.Data)
		})
		noErr(t, err)
		noErr(t, nc.Publish(subj, []byte("panic")))
		noErr(t, nc.Publish(subj, []byte("next")))
		select {
		case err := <-errs:
			var ae *natsio.AsyncError
			if !errors.As(err, &ae) || !errors.Is(err, natsio.ErrHandlerPanic) || ae.Subject != subj || ae.SID != sub.SID() {
				t.Errorf("error callback got %v (%#v), want an AsyncError wrapping ErrHandlerPanic on %s, sid %d", err, ae, subj, sub.SID())
			}
		case <-time.After(5 * time.Second):
			t.Fatal("the panic did not reach the error handler")
		}
		select {
		case m := <-got:
			if m != "next" {
				t.Fatalf("handler got %q", m)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("the message after the panic was not delivered")
		}
	case "iterator_closed":
		nc := connect(t)
		sub := got(nc.SubscribeSync(subject(t, "closed"))).must(t)
		flush(t, nc)
		noErr(t, nc.Close())
		_, err := sub.NextMsg(ctxTimeout(t, time.Second))
		if !errors.Is(err, natsio.ErrConnectionClosed) {
			t.Errorf("NextMsg after Close: %v, want ErrConnectionClosed", err)
		}
	case "purge_deletes_zero":
		js, _ := jetStreamServer(t)
		ctx := ctxTimeout(t, 10*time.Second)
		kv := got(js.CreateKeyValue(ctx, natsio.KeyValueConfig{Bucket: "CONF_PURGE", History: 5, Storage: natsio.MemoryStorage})).must(t)
		got(kv.Put(ctx, "k", []byte("v1"))).must(t)
		got(kv.Put(ctx, "k", []byte("v2"))).must(t)
		noErr(t, kv.Delete(ctx, "k"))
		// 0: the default age (30 minutes): the young marker stays, the values go.
		if n := got(kv.PurgeDeletes(ctx, natsio.DeleteMarkersOlderThan(0))).must(t); n != 2 {
			t.Errorf("PurgeDeletes(0) removed %d, want 2", n)
		}
		_, err := kv.Get(ctx, "k")
		wantIs(t, err, natsio.ErrKeyDeleted)
		// Below 0: every marker, whatever its age.
		if n := got(kv.PurgeDeletes(ctx, natsio.DeleteMarkersOlderThan(-1))).must(t); n != 1 {
			t.Errorf("PurgeDeletes(-1) removed %d, want 1", n)
		}
		_, err = kv.Get(ctx, "k")
		if !errors.Is(err, natsio.ErrKeyNotFound) || errors.Is(err, natsio.ErrKeyDeleted) {
			t.Errorf("Get after removing the marker: %v, want ErrKeyNotFound only", err)
		}
	case "sync_publish":
		js, url := jetStreamServer(t)
		ctx := ctxTimeout(t, 10*time.Second)
		// A plain subscriber takes the asynchronous publish and never acks.
		holder := connectTo(t, url)
		held := subject(t, "held")
		silentResponder(t, holder, held)
		nc := connectTo(t, url)
		window := got(nc.JetStream(natsio.PublishAsyncMaxPending(1), natsio.PublishAsyncStallWait(100*time.Millisecond))).must(t)
		stored := subject(t, "stored")
		got(js.CreateStream(ctx, natsio.StreamConfig{Name: "CONF_SYNC", Subjects: []string{stored}, Storage: natsio.MemoryStorage})).must(t)
		got(window.PublishAsync(held, []byte("a"))).must(t)
		if n := window.PublishAsyncPending(); n != 1 {
			t.Fatalf("pending %d, want 1", n)
		}
		_, err := window.PublishAsync(stored, []byte("x"))
		wantIs(t, err, natsio.ErrTooManyStalledMsgs)
		ack := got(window.Publish(ctx, stored, []byte("s"))).must(t)
		if ack.Stream != "CONF_SYNC" || ack.Sequence != 1 {
			t.Errorf("ack %+v, want CONF_SYNC sequence 1", ack)
		}
		if n := window.PublishAsyncPending(); n != 1 {
			t.Errorf("pending %d after the synchronous publish, want 1", n)
		}
	case "ack_bodies":
		js, url := jetStreamServer(t)
		ctx := ctxTimeout(t, 10*time.Second)
		got(js.CreateStream(ctx, natsio.StreamConfig{Name: "CONF_ACKS", Subjects: []string{"conf.acks"}, Storage: natsio.MemoryStorage})).must(t)
		for range 4 {
			got(js.Publish(ctx, "conf.acks", []byte("m"))).must(t)
		}
		got(js.CreateConsumer(ctx, "CONF_ACKS", natsio.ConsumerConfig{Durable: "c", AckWait: 30 * time.Second})).must(t)
		spyConn := connectTo(t, url)
		spy := got(spyConn.SubscribeSync("$JS.ACK.CONF_ACKS.>")).must(t)
		flush(t, spyConn)
		batch := got(js.Fetch(ctx, "CONF_ACKS", "c", natsio.FetchMaxMessages(4), natsio.FetchExpires(5*time.Second))).must(t)
		if len(batch) != 4 {
			t.Fatalf("fetched %d, want 4", len(batch))
		}
		noErr(t, batch[0].InProgress())
		noErr(t, batch[1].NakWithDelay(2*time.Second))
		noErr(t, batch[2].TermWithReason("bad"))
		noErr(t, batch[3].Ack())
		for i, want := range []string{"+WPI", `-NAK {"delay":2000000000}`, "+TERM bad", "+ACK"} {
			if got := string(mustNext(t, spy).Data); got != want {
				t.Errorf("ack %d: %q, want %q", i, got, want)
			}
		}
	case "service_handler_failure":
		nc := connect(t)
		subj := subject(t, "svc")
		errs := make(chan *micro.NATSError, 4)
		svc := addService(t, nc, micro.Config{
			Name: "conf", Version: "1.0.0",
			ErrorHandler: func(_ micro.Service, e *micro.NATSError) { errs <- e },
		})
		if err := svc.AddEndpoint("op", micro.HandlerFunc(func(r micro.Request) {
			if string(r.Data()) == "fail" {
				panic("failing handler")
			}
			_ = r.Respond(r.Data())
		}), micro.WithEndpointSubject(subj)); err != nil {
			t.Fatal(err)
		}
		flush(t, nc)
		if m := mustRequest(t, nc, subj, []byte("fail")); m.Header.Get(micro.ErrorCodeHeader) != "500" {
			t.Fatalf("failing handler's reply: headers %v", m.Header)
		}
		if m := mustRequest(t, nc, subj, []byte("next")); string(m.Data) != "next" {
			t.Fatalf("next request: %q", m.Data)
		}
		select {
		case e := <-errs:
			if e.Subject != subj {
				t.Errorf("ErrorHandler got %+v", e)
			}
		case <-time.After(5 * time.Second):
			t.Error("ErrorHandler not called")
		}
		if len(errs) != 0 {
			t.Errorf("ErrorHandler called %d more times", len(errs))
		}
		st := endpointStats(t, svc.Stats(), "op")
		if st.NumRequests != 2 || st.NumErrors != 1 {
			t.Errorf("stats: %d requests, %d errors; want 2 and 1", st.NumRequests, st.NumErrors)
		}
	case "kv_bind_subjects":
		js, _ := jetStreamServer(t)
		ctx := ctxTimeout(t, 10*time.Second)
		got(js.CreateStream(ctx, natsio.StreamConfig{Name: "KV_CONF_PLAIN", Subjects: []string{"conf.plain.>"}, Storage: natsio.MemoryStorage})).must(t)
		_, err := js.KeyValue(ctx, "CONF_PLAIN")
		wantIs(t, err, natsio.ErrBucketNotFound)
		got(js.CreateStream(ctx, natsio.StreamConfig{Name: "KV_CONF_WIDE", Subjects: []string{"$KV.CONF_WIDE.>"}, Storage: natsio.MemoryStorage})).must(t)
		if kv := got(js.KeyValue(ctx, "CONF_WIDE")).must(t); kv.Bucket() != "CONF_WIDE" {
			t.Errorf("bound bucket %q", kv.Bucket())
		}
	case "kv_mirror":
		js, _ := jetStreamServer(t)
		ctx := ctxTimeout(t, 30*time.Second)
		origin := got(js.CreateKeyValue(ctx, natsio.KeyValueConfig{Bucket: "CONF_MIRROR_O", Storage: natsio.MemoryStorage})).must(t)
		mirror := got(js.CreateKeyValue(ctx, natsio.KeyValueConfig{Bucket: "CONF_MIRROR_M", Storage: natsio.MemoryStorage,
			Mirror: &natsio.StreamSource{Name: "CONF_MIRROR_O"}})).must(t)
		cfg := got(js.StreamInfo(ctx, "KV_CONF_MIRROR_M")).must(t).Config
		if cfg.Mirror == nil || cfg.Mirror.Name != "KV_CONF_MIRROR_O" || !cfg.MirrorDirect || len(cfg.Subjects) != 0 {
			t.Errorf("mirror stream: mirror %+v, mirror_direct %v, subjects %v", cfg.Mirror, cfg.MirrorDirect, cfg.Subjects)
		}
		got(origin.Put(ctx, "k", []byte("v1"))).must(t)
		waitValue(t, mirror, "k", "v1")
		rev := got(mirror.Put(ctx, "w", []byte("v2"))).must(t)
		// Polled: the mirror answers the origin's Direct Gets too.
		if e := waitValue(t, origin, "w", "v2"); e.Revision != rev {
			t.Errorf("w in the origin at %d, put returned %d", e.Revision, rev)
		}
		sourced := got(js.CreateKeyValue(ctx, natsio.KeyValueConfig{Bucket: "CONF_MIRROR_S", Storage: natsio.MemoryStorage,
			Sources: []*natsio.StreamSource{{Name: "CONF_MIRROR_O"}}})).must(t)
		waitValue(t, sourced, "k", "v1")
		got(sourced.Put(ctx, "s", []byte("v3"))).must(t)
		_, err := origin.Get(ctx, "s")
		wantIs(t, err, natsio.ErrKeyNotFound)
	case "kv_codec":
		js, _ := jetStreamServer(t)
		ctx := ctxTimeout(t, 10*time.Second)
		plain := got(js.CreateKeyValue(ctx, natsio.KeyValueConfig{Bucket: "CONF_CODEC", Storage: natsio.MemoryStorage})).must(t)
		z := got(natsio.ZlibValueCodec(-1)).must(t)
		kv := got(plain.WithCodecs(natsio.Base64KeyCodec(), z)).must(t)
		got(kv.Put(ctx, "a.b c", []byte("v"))).must(t)
		if e := got(plain.Get(ctx, "YQ==.YiBj")).must(t); len(e.Value) == 0 || e.Value[0] != 0x78 {
			t.Errorf("stored value % x", e.Value)
		}
		if e := got(kv.Get(ctx, "a.b c")).must(t); e.Key != "a.b c" || string(e.Value) != "v" {
			t.Errorf("get %s=%s", e.Key, e.Value)
		}
		if keys := got(kv.Keys(ctx)).must(t); len(keys) != 1 || keys[0] != "a.b c" {
			t.Errorf("keys %v", keys)
		}
	case "prioritized_pull":
		js, _ := jetStreamServer(t)
		ctx := ctxTimeout(t, 30*time.Second)
		got(js.CreateStream(ctx, natsio.StreamConfig{Name: "CONF_PRIO", Subjects: []string{"conf.prio"}, Storage: natsio.MemoryStorage})).must(t)
		got(js.CreateConsumer(ctx, "CONF_PRIO", natsio.ConsumerConfig{Durable: "c",
			PriorityGroups: []string{"P"}, PriorityPolicy: natsio.PriorityPolicyPrioritized})).must(t)
		at5 := fetchOneAt(t, ctx, js, "CONF_PRIO", "c", "P", 5)
		waitingRequests(t, js, "CONF_PRIO", "c", 1)
		at1 := fetchOneAt(t, ctx, js, "CONF_PRIO", "c", "P", 1)
		waitingRequests(t, js, "CONF_PRIO", "c", 2)
		got(js.Publish(ctx, "conf.prio", []byte("first"))).must(t)
		nextIs(t, at1, "the fetch at priority 1", "first")
		got(js.Publish(ctx, "conf.prio", []byte("second"))).must(t)
		nextIs(t, at5, "the fetch at priority 5", "second")
		_, err := js.Fetch(ctx, "CONF_PRIO", "c", natsio.FetchPriorityGroup("P"), natsio.FetchPriority(10), natsio.FetchNoWait())
		wantIs(t, err, natsio.ErrInvalidArgument)
	case "endpoint_pending_limits":
		// The endpoint's handler reads (push mode): it holds the first of
		// the 5 requests, the 4 after are unread. The held one counts
		// against the limits until the handler returns (as in nats.go).
		nc := connect(t)
		subj := subject(t, "limits")
		errs := make(chan *micro.NATSError, 8)
		svc := addService(t, nc, micro.Config{
			Name: "conflimits", Version: "1.0.0",
			ErrorHandler: func(_ micro.Service, e *micro.NATSError) {
				select {
				case errs <- e:
				default:
				}
			},
		})
		entered, release := make(chan struct{}), make(chan struct{})
		var once sync.Once
		releaseHandler := func() { once.Do(func() { close(release) }) }
		t.Cleanup(releaseHandler) // before the service's Stop, which waits for the handler
		noErr(t, svc.AddEndpoint("held", micro.HandlerFunc(func(r micro.Request) {
			if string(r.Data()) == "r0" {
				close(entered)
				<-release
			}
			_ = r.Respond(r.Data())
		}), micro.WithEndpointSubject(subj), micro.WithEndpointPendingLimits(2, -1)))
		flush(t, nc)
		replies := got(nc.SubscribeSync(subj + ".reply")).must(t)
		send := func(data string) {
			noErr(t, nc.PublishMsg(&natsio.Msg{Subject: subj, Reply: replies.Subject(), Data: []byte(data)}))
		}
		send("r0")
		select {
		case <-entered:
		case <-time.After(5 * time.Second):
			t.Fatal("the first request did not reach the handler")
		}
		for i := 1; i < 5; i++ {
			send(fmt.Sprint("r", i))
		}
		flush(t, nc)
		var st *micro.EndpointStats
		eventually(t, "the endpoint's stats to count an error", func() bool {
			st = endpointStats(t, svc.Stats(), "held")
			return st.NumErrors >= 1
		})
		if !strings.HasPrefix(st.LastError, "slow consumer") {
			t.Errorf("last_error %q", st.LastError)
		}
		select {
		case e := <-errs:
			if e.Subject != subj || !strings.Contains(e.Description, "slow consumer") {
				t.Errorf("ErrorHandler got %+v", e)
			}
		case <-time.After(5 * time.Second):
			t.Error("ErrorHandler not told")
		}
		// The first 2 (the held one and the next) were kept, in order; the
		// 3 others dropped: the next request is answered right after them,
		// and 3 requests are counted.
		releaseHandler()
		for _, want := range []string{"r0", "r1", "next"} {
			if want == "next" {
				send(want)
			}
			if m := mustNext(t, replies); string(m.Data) != want {
				t.Fatalf("reply %q, want %q", m.Data, want)
			}
		}
		eventually(t, "3 requests counted", func() bool { return endpointStats(t, svc.Stats(), "held").NumRequests == 3 })
	case "server_pool":
		// The steps and checks are TestServerPoolReplacedAndMoved's first
		// part (reconnect_auth_tls_test.go).
		moveServerPool(t)
	case "reconnect_delay_callback":
		paceReconnect(t, &delayLog{}) // reconnect_delay_test.go
	case "authenticator_callback":
		checkAuthenticatorCallback(t) // authenticator_test.go
	default:
		t.Fatalf("no Go check for behaviour %q", c.fields[0])
	}
}
