package interop

// Services between the binding and nats.go's micro package, and the nats
// CLI: a libnatsio service read by nats.go's monitoring requests into
// nats.go's own structs and by `nats micro`, a nats.go service read by
// the binding's discovery, error replies seen by a nats.go requester.

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	natsio "github.com/libnatsio/natsio/bindings/go"
	mymicro "github.com/libnatsio/natsio/bindings/go/micro"
	facadenats "github.com/libnatsio/natsio/bindings/go/nats"
	facademicro "github.com/libnatsio/natsio/bindings/go/nats/micro"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/micro"
)

// bothConns connects nats.go and the binding to one new server.
func bothConns(t *testing.T) (string, *nats.Conn, *natsio.Conn) {
	t.Helper()
	url := startServer(t)
	nc := got(nats.Connect(url)).must(t)
	t.Cleanup(nc.Close)
	conn := got(natsio.Connect(url)).must(t)
	t.Cleanup(func() { conn.Close() })
	return url, nc, conn
}

// libnatsioService starts a service on conn with two endpoints (one in a
// group with its own queue group and metadata) and serves n requests on
// each through nc, one of them answered with an error.
func libnatsioService(t *testing.T, nc *nats.Conn, conn *natsio.Conn) mymicro.Service {
	t.Helper()
	svc := got(mymicro.AddService(conn, mymicro.Config{
		Name: "orders", Version: "1.2.3-beta.1", Description: "order service",
		Metadata: map[string]string{"region": "eu", "tier": "gold"},
	})).must(t)
	t.Cleanup(func() { _ = svc.Stop() })
	noErr(t, svc.AddEndpoint("create", mymicro.HandlerFunc(func(r mymicro.Request) {
		if string(r.Data()) == "fail" {
			_ = r.Error("409", "conflict", nil)
			return
		}
		_ = r.Respond([]byte("created"))
	}), mymicro.WithEndpointSubject("orders.create"), mymicro.WithEndpointMetadata(map[string]string{"verb": "post"})))
	g := svc.AddGroup("orders.admin", mymicro.WithGroupQueueGroup("admins"))
	noErr(t, g.AddEndpoint("purge", mymicro.HandlerFunc(func(r mymicro.Request) { _ = r.Respond(nil) })))
	noErr(t, conn.Flush(ctxFor(t)))
	for _, req := range []struct{ subject, data string }{
		{"orders.create", "a"}, {"orders.create", "fail"}, {"orders.create", "b"}, {"orders.admin.purge", ""},
	} {
		got(nc.Request(req.subject, []byte(req.data), 5*time.Second)).must(t)
	}
	return svc
}

// monitor asks subject through nats.go and decodes the one reply into v.
func monitor[T any](t *testing.T, nc *nats.Conn, verb micro.Verb, name, id string) T {
	t.Helper()
	subj := got(micro.ControlSubject(verb, name, id)).must(t)
	m := got(nc.Request(subj, nil, 5*time.Second)).must(t)
	var v T
	noErr(t, json.Unmarshal(m.Data, &v))
	return v
}

func TestLibnatsioServiceReadByNatsGo(t *testing.T) {
	_, nc, conn := bothConns(t)
	svc := libnatsioService(t, nc, conn)
	id := svc.Info().ID
	if id == "" {
		t.Fatal("no id")
	}
	identity := micro.ServiceIdentity{Name: "orders", ID: id, Version: "1.2.3-beta.1",
		Metadata: map[string]string{"region": "eu", "tier": "gold"}}
	sameIdentity := func(what string, got micro.ServiceIdentity) {
		t.Helper()
		if got.Name != identity.Name || got.ID != identity.ID || got.Version != identity.Version || !maps.Equal(got.Metadata, identity.Metadata) {
			t.Fatalf("%s: identity %+v, want %+v", what, got, identity)
		}
	}
	// Every form of the subject: bare, by name, by name and id.
	for _, who := range [][2]string{{"", ""}, {"orders", ""}, {"orders", id}} {
		ping := monitor[micro.Ping](t, nc, micro.PingVerb, who[0], who[1])
		sameIdentity("PING "+who[0]+" "+who[1], ping.ServiceIdentity)
		if ping.Type != micro.PingResponseType {
			t.Fatalf("ping type %q", ping.Type)
		}

		info := monitor[micro.Info](t, nc, micro.InfoVerb, who[0], who[1])
		sameIdentity("INFO", info.ServiceIdentity)
		want := []micro.EndpointInfo{
			{Name: "create", Subject: "orders.create", QueueGroup: "q", Metadata: map[string]string{"verb": "post"}},
			{Name: "purge", Subject: "orders.admin.purge", QueueGroup: "admins"},
		}
		if info.Type != micro.InfoResponseType || info.Description != "order service" || len(info.Endpoints) != len(want) {
			t.Fatalf("info %+v", info)
		}
		for i, w := range want {
			e := info.Endpoints[i]
			if e.Name != w.Name || e.Subject != w.Subject || e.QueueGroup != w.QueueGroup || !maps.Equal(e.Metadata, w.Metadata) ||
				(w.Metadata == nil) != (e.Metadata == nil) {
				t.Fatalf("info endpoint %d: %+v, want %+v", i, e, w)
			}
		}

		stats := monitor[micro.Stats](t, nc, micro.StatsVerb, who[0], who[1])
		sameIdentity("STATS", stats.ServiceIdentity)
		if stats.Type != micro.StatsResponseType || len(stats.Endpoints) != 2 ||
			stats.Started.IsZero() || time.Since(stats.Started) > time.Minute || stats.Started.Location() != time.UTC {
			t.Fatalf("stats %+v", stats)
		}
		create, purge := stats.Endpoints[0], stats.Endpoints[1]
		if create.Name != "create" || create.Subject != "orders.create" || create.QueueGroup != "q" ||
			create.NumRequests != 3 || create.NumErrors != 1 || create.LastError != "409:conflict" ||
			create.ProcessingTime <= 0 || create.AverageProcessingTime != create.ProcessingTime/3 || create.Data != nil {
			t.Fatalf("stats of create %+v", create)
		}
		if purge.Name != "purge" || purge.Subject != "orders.admin.purge" || purge.QueueGroup != "admins" ||
			purge.NumRequests != 1 || purge.NumErrors != 0 || purge.LastError != "" {
			t.Fatalf("stats of purge %+v", purge)
		}
	}
}

func TestNatsGoServiceDiscoveredByLibnatsio(t *testing.T) {
	_, nc, conn := bothConns(t)
	svc := got(micro.AddService(nc, micro.Config{
		Name: "inventory", Version: "0.9.0", Description: "nats.go's",
		Metadata:     map[string]string{"lang": "go"},
		StatsHandler: func(e *micro.Endpoint) any { return map[string]string{"ep": e.Name} },
	})).must(t)
	t.Cleanup(func() { _ = svc.Stop() })
	noErr(t, svc.AddEndpoint("count", micro.HandlerFunc(func(r micro.Request) { _ = r.Respond([]byte("7")) }),
		micro.WithEndpointSubject("inventory.count"), micro.WithEndpointQueueGroup("counters")))
	noErr(t, nc.Flush())
	for range 5 {
		got(conn.Request(ctxFor(t), "inventory.count", nil)).must(t)
	}
	ctx := ctxFor(t)
	id := svc.Info().ID

	pings := got(mymicro.DiscoverPing(ctx, conn, "inventory", "", natsio.MaxReplies(1))).must(t)
	if len(pings) != 1 || pings[0].Name != "inventory" || pings[0].ID != id || pings[0].Version != "0.9.0" ||
		pings[0].Type != mymicro.PingResponseType || !maps.Equal(pings[0].Metadata, map[string]string{"lang": "go"}) {
		t.Fatalf("pings %+v", pings)
	}
	infos := got(mymicro.DiscoverInfo(ctx, conn, "inventory", id, natsio.MaxReplies(1))).must(t)
	if len(infos) != 1 {
		t.Fatalf("infos %+v", infos)
	}
	want := svc.Info()
	info := infos[0]
	if info.Description != want.Description || info.Type != want.Type || len(info.Endpoints) != 1 ||
		info.Endpoints[0].Name != "count" || info.Endpoints[0].Subject != "inventory.count" ||
		info.Endpoints[0].QueueGroup != "counters" {
		t.Fatalf("info %+v, nats.go says %+v", info, want)
	}
	stats := got(mymicro.DiscoverStats(ctx, conn, "inventory", "", natsio.MaxReplies(1))).must(t)
	if len(stats) != 1 || len(stats[0].Endpoints) != 1 {
		t.Fatalf("stats %+v", stats)
	}
	st, wst := stats[0].Endpoints[0], svc.Stats().Endpoints[0]
	if st.NumRequests != 5 || st.NumRequests != wst.NumRequests || st.ProcessingTime != wst.ProcessingTime ||
		!stats[0].Started.Equal(svc.Stats().Started) || string(st.Data) != `{"ep":"count"}` {
		t.Fatalf("stats %+v, nats.go says %+v", st, wst)
	}
	// The bare subject finds it too, with the raw form.
	raw := got(mymicro.Discover(ctx, conn, mymicro.InfoVerb, "", "", natsio.MaxReplies(1))).must(t)
	if len(raw) != 1 || !strings.Contains(string(raw[0]), `"inventory"`) {
		t.Fatalf("bare INFO %s", raw)
	}
}

func TestServiceErrorsSeenByNatsGo(t *testing.T) {
	_, nc, conn := bothConns(t)
	errs := make(chan *mymicro.NATSError, 2)
	svc := got(mymicro.AddService(conn, mymicro.Config{
		Name: "faulty", Version: "1.0.0",
		ErrorHandler: func(_ mymicro.Service, e *mymicro.NATSError) { errs <- e },
	})).must(t)
	t.Cleanup(func() { _ = svc.Stop() })
	noErr(t, svc.AddEndpoint("op", mymicro.HandlerFunc(func(r mymicro.Request) {
		switch string(r.Data()) {
		case "invalid":
			_ = r.Error("422", "unprocessable", []byte(`{"field":"x"}`))
		case "panic":
			var m map[string]int
			m["x"] = 1 // a runtime panic
		default:
			_ = r.Respond([]byte("fine"))
		}
	})))
	noErr(t, conn.Flush(ctxFor(t)))

	m := got(nc.Request("op", []byte("invalid"), 5*time.Second)).must(t)
	if m.Header.Get(micro.ErrorHeader) != "unprocessable" || m.Header.Get(micro.ErrorCodeHeader) != "422" || string(m.Data) != `{"field":"x"}` {
		t.Fatalf("error reply: %v %q", m.Header, m.Data)
	}
	m = got(nc.Request("op", []byte("panic"), 5*time.Second)).must(t)
	if m.Header.Get(micro.ErrorCodeHeader) != "500" || !strings.Contains(m.Header.Get(micro.ErrorHeader), "nil map") {
		t.Fatalf("panic reply: %v", m.Header)
	}
	select {
	case e := <-errs:
		if e.Subject != "op" || !strings.Contains(e.Description, "nil map") {
			t.Fatalf("ErrorHandler %+v", e)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("ErrorHandler not called")
	}
	if m := got(nc.Request("op", nil, 5*time.Second)).must(t); string(m.Data) != "fine" {
		t.Fatalf("after the panic: %q", m.Data)
	}
	stats := monitor[micro.Stats](t, nc, micro.StatsVerb, "faulty", "")
	if e := stats.Endpoints[0]; e.NumRequests != 3 || e.NumErrors != 2 || !strings.HasPrefix(e.LastError, "500:") {
		t.Fatalf("stats %+v", e)
	}
	// Stopped: nats.go's requests find no responders.
	noErr(t, svc.Stop())
	if _, err := nc.Request("op", nil, 5*time.Second); !errors.Is(err, nats.ErrNoResponders) {
		t.Fatalf("after Stop: %v", err)
	}
}

// natsCLI is the nats CLI scripts/test.sh installs (NATS_CLI_BIN, else
// .tools/natscli-0.5.0/nats of the repository).
func natsCLI(t *testing.T) string {
	t.Helper()
	bin := os.Getenv("NATS_CLI_BIN")
	if bin == "" {
		bin = got(filepath.Abs("../../../.tools/natscli-0.5.0/nats")).must(t)
	}
	if _, err := os.Stat(bin); err != nil {
		t.Skipf("nats CLI not installed (scripts/test.sh installs it; or set NATS_CLI_BIN): %v", err)
	}
	return bin
}

// natsJSON runs the CLI with --json and decodes its output into v.
func natsJSON(t *testing.T, bin, url string, v any, args ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, append([]string{"--server", url, "--no-context"}, append(args, "--json")...)...)
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir()) // no user's contexts
	out, err := cmd.Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			t.Fatalf("nats %v: %v: %s", args, err, ee.Stderr)
		}
		t.Fatalf("nats %v: %v", args, err)
	}
	if err := json.Unmarshal(out, v); err != nil {
		t.Fatalf("nats %v: %v in %s", args, err, out)
	}
}

func TestNatsCLIMicro(t *testing.T) {
	bin := natsCLI(t)
	url, nc, conn := bothConns(t)
	svc := libnatsioService(t, nc, conn)
	id := svc.Info().ID

	var ls []micro.Info
	natsJSON(t, bin, url, &ls, "micro", "ls")
	if len(ls) != 1 || ls[0].Name != "orders" || ls[0].ID != id || ls[0].Version != "1.2.3-beta.1" || ls[0].Description != "order service" {
		t.Fatalf("micro ls: %+v", ls)
	}
	var shown struct {
		Info  micro.Info  `json:"info"`
		Stats micro.Stats `json:"stats"`
	}
	natsJSON(t, bin, url, &shown, "micro", "info", "orders")
	info := shown.Info
	if shown.Stats.ID != id || len(shown.Stats.Endpoints) != 2 || shown.Stats.Endpoints[0].NumRequests != 3 {
		t.Fatalf("micro info's stats: %+v", shown.Stats)
	}
	if info.Name != "orders" || info.ID != id || len(info.Endpoints) != 2 ||
		info.Endpoints[0].Subject != "orders.create" || info.Endpoints[1].Subject != "orders.admin.purge" ||
		info.Endpoints[1].QueueGroup != "admins" || info.Metadata["region"] != "eu" {
		t.Fatalf("micro info: %+v", info)
	}
	var stats []micro.Stats
	natsJSON(t, bin, url, &stats, "micro", "stats", "orders")
	if len(stats) != 1 || stats[0].ID != id || len(stats[0].Endpoints) != 2 {
		t.Fatalf("micro stats: %+v", stats)
	}
	if c, p := stats[0].Endpoints[0], stats[0].Endpoints[1]; c.Name != "create" || c.NumRequests != 3 || c.NumErrors != 1 ||
		p.Name != "purge" || p.NumRequests != 1 {
		t.Fatalf("micro stats endpoints: %+v %+v", c, p)
	}
}

// limitedEndpoint is one client's service with one endpoint limited by
// WithEndpointPendingLimits(2, -1), as a user sees it: its stats, what its
// ErrorHandler was told.
type limitedEndpoint struct {
	stats func() (numRequests, numErrors int, lastError string)
	errs  chan toldError
}

// toldError is what an ErrorHandler was told: the NATSError's subject and
// description, and whether it matches the client's ErrSlowConsumer.
type toldError struct {
	subject, description string
	slowConsumer         bool
}

func tell(errs chan toldError, e toldError) {
	select {
	case errs <- e:
	default:
	}
}

// A nats.go micro service and a facade one, side by side, each endpoint
// limited to 2 pending requests, the first request held in the handler
// while 4 more come. Both count the request in the handler as pending
// until the handler returns, so both keep 1 of the 4 and drop the rest,
// and answer the same requests (r0, r1, then r5 sent once the queue has
// room). Both count an error in the endpoint's stats (LastError naming the
// slow consumer: the texts differ, nats.go's "nats: slow consumer,
// messages dropped", the library's "slow consumer ..."), tell the
// ErrorHandler the endpoint's subject and a NATSError matching their
// ErrSlowConsumer, and answer the kept requests in order (the next request
// is answered right after them).
func TestEndpointPendingLimitsSideBySide(t *testing.T) {
	url := startServer(t)
	requester := got(nats.Connect(url)).must(t)
	t.Cleanup(requester.Close)
	handler := func(entered, release chan struct{}) func(data []byte) {
		return func(data []byte) {
			if string(data) == "r0" {
				close(entered)
				<-release
			}
		}
	}
	starts := map[string]func(t *testing.T, subject string, hold func([]byte)) limitedEndpoint{
		"nats.go": func(t *testing.T, subject string, hold func([]byte)) limitedEndpoint {
			nc := got(nats.Connect(url)).must(t)
			t.Cleanup(nc.Close)
			ep := limitedEndpoint{errs: make(chan toldError, 16)}
			svc := got(micro.AddService(nc, micro.Config{Name: "limits_natsgo", Version: "1.0.0",
				ErrorHandler: func(_ micro.Service, e *micro.NATSError) {
					tell(ep.errs, toldError{e.Subject, e.Description, errors.Is(e, nats.ErrSlowConsumer)})
				}})).must(t)
			t.Cleanup(func() { _ = svc.Stop() })
			noErr(t, svc.AddEndpoint("held", micro.HandlerFunc(func(r micro.Request) {
				hold(r.Data())
				_ = r.Respond(r.Data())
			}), micro.WithEndpointSubject(subject), micro.WithEndpointPendingLimits(2, -1)))
			noErr(t, nc.Flush())
			ep.stats = func() (int, int, string) {
				e := svc.Stats().Endpoints[0]
				return e.NumRequests, e.NumErrors, e.LastError
			}
			return ep
		},
		"facade": func(t *testing.T, subject string, hold func([]byte)) limitedEndpoint {
			nc := got(facadenats.Connect(url)).must(t)
			t.Cleanup(nc.Close)
			ep := limitedEndpoint{errs: make(chan toldError, 16)}
			svc := got(facademicro.AddService(nc, facademicro.Config{Name: "limits_facade", Version: "1.0.0",
				ErrorHandler: func(_ facademicro.Service, e *facademicro.NATSError) {
					tell(ep.errs, toldError{e.Subject, e.Description, errors.Is(e, facadenats.ErrSlowConsumer)})
				}})).must(t)
			t.Cleanup(func() { _ = svc.Stop() })
			noErr(t, svc.AddEndpoint("held", facademicro.HandlerFunc(func(r facademicro.Request) {
				hold(r.Data())
				_ = r.Respond(r.Data())
			}), facademicro.WithEndpointSubject(subject), facademicro.WithEndpointPendingLimits(2, -1)))
			noErr(t, nc.Flush())
			ep.stats = func() (int, int, string) {
				e := svc.Stats().Endpoints[0]
				return e.NumRequests, e.NumErrors, e.LastError
			}
			return ep
		},
	}
	want := []string{"r0", "r1", "r5"}
	answeredBy := map[string][]string{}
	for _, side := range []string{"nats.go", "facade"} {
		t.Run(side, func(t *testing.T) {
			subject := "limits." + strings.ReplaceAll(side, ".", "_")
			entered, release := make(chan struct{}), make(chan struct{})
			var once sync.Once
			releaseHandler := func() { once.Do(func() { close(release) }) }
			ep := starts[side](t, subject, handler(entered, release))
			t.Cleanup(releaseHandler) // before the service's Stop, which waits for the handler
			replies := got(requester.SubscribeSync(nats.NewInbox())).must(t)
			send := func(data string) {
				noErr(t, requester.PublishRequest(subject, replies.Subject, []byte(data)))
			}
			send("r0")
			select {
			case <-entered:
			case <-time.After(5 * time.Second):
				t.Fatal("the first request did not reach the handler")
			}
			for _, data := range []string{"r1", "r2", "r3", "r4"} {
				send(data)
			}
			noErr(t, requester.Flush())
			var numErrors int
			var lastError string
			waitFor(t, func() bool {
				_, numErrors, lastError = ep.stats()
				return numErrors >= 1
			})
			if !strings.Contains(strings.ToLower(lastError), "slow consumer") {
				t.Errorf("last_error %q", lastError)
			}
			select {
			case e := <-ep.errs:
				if e.subject != subject || !strings.Contains(strings.ToLower(e.description), "slow consumer") || !e.slowConsumer {
					t.Errorf("ErrorHandler told %+v, want the subject %s and a slow consumer", e, subject)
				}
			case <-time.After(5 * time.Second):
				t.Fatal("ErrorHandler not told of the drop")
			}
			// Every reply up to r5's, in order: r5 is sent after the second
			// reply (the held request answered and the next in the handler
			// at most: there is room for it).
			releaseHandler()
			var answered []string
			for len(answered) < 10 {
				if len(answered) == 2 {
					send("r5")
				}
				m, err := replies.NextMsg(5 * time.Second)
				if err != nil {
					t.Errorf("after replies %v: %v", answered, err)
					break
				}
				answered = append(answered, string(m.Data))
				if string(m.Data) == "r5" {
					break
				}
			}
			answeredBy[side] = answered
			if !slices.Equal(answered, want) {
				t.Fatalf("answered %v, want %v (the others dropped)", answered, want)
			}
			waitFor(t, func() bool { n, _, _ := ep.stats(); return n == len(answered) })
		})
	}
	if !slices.Equal(answeredBy["nats.go"], answeredBy["facade"]) {
		t.Errorf("nats.go answered %v, the facade %v", answeredBy["nats.go"], answeredBy["facade"])
	}
}
