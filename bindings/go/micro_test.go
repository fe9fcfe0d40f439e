package natsio_test

// Services (package micro) against the shared server: requests over a
// queue group, groups and queue groups, error replies and panicking
// handlers, stop, reset, refused configurations, stats data, the
// library's discovery. Each test names its services after itself, so
// that the bare $SRV subjects of other tests' services do not mix in.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	natsio "github.com/libnatsio/natsio/bindings/go"
	"github.com/libnatsio/natsio/bindings/go/micro"
)

// serviceName is a service name unique to the test ([A-Za-z0-9_-]).
func serviceName(t *testing.T) string {
	return strings.NewReplacer("/", "_", " ", "_", "#", "_", ".", "_").Replace(t.Name())
}

func addService(t *testing.T, nc *natsio.Conn, cfg micro.Config) micro.Service {
	t.Helper()
	svc, err := micro.AddService(nc, cfg)
	if err != nil {
		t.Fatalf("AddService(%s): %v", cfg.Name, err)
	}
	t.Cleanup(func() { _ = svc.Stop() })
	return svc
}

var echo = micro.HandlerFunc(func(r micro.Request) { _ = r.Respond(r.Data()) })

func mustRequest(t *testing.T, nc *natsio.Conn, subject string, data []byte) *natsio.Msg {
	t.Helper()
	m, err := nc.Request(ctxTimeout(t, 5*time.Second), subject, data)
	if err != nil {
		t.Fatalf("Request(%s): %v", subject, err)
	}
	return m
}

func endpointStats(t *testing.T, s micro.Stats, name string) *micro.EndpointStats {
	t.Helper()
	for _, e := range s.Endpoints {
		if e.Name == name {
			return e
		}
	}
	t.Fatalf("no endpoint %s in stats %+v", name, s)
	return nil
}

func TestMicroQueueGroupOfTwoInstances(t *testing.T) {
	name := serviceName(t)
	subj := subject(t, "work")
	var served [2]atomic.Int64
	var svcs [2]micro.Service
	for i := range svcs {
		nc := connect(t)
		svcs[i] = addService(t, nc, micro.Config{Name: name, Version: "1.0.0"})
		if err := svcs[i].AddEndpoint("work", micro.HandlerFunc(func(r micro.Request) {
			served[i].Add(1)
			_ = r.Respond(append([]byte(fmt.Sprint(i, ":")), r.Data()...))
		}), micro.WithEndpointSubject(subj)); err != nil {
			t.Fatal(err)
		}
		flush(t, nc) // both subscribed before the first request
	}
	if svcs[0].Info().ID == svcs[1].Info().ID {
		t.Fatal("two instances share an id")
	}
	client := connect(t)
	const n = 1000
	for i := range n {
		want := fmt.Sprint(i)
		m := mustRequest(t, client, subj, []byte(want))
		if _, got, _ := strings.Cut(string(m.Data), ":"); got != want {
			t.Fatalf("request %d answered %q", i, m.Data)
		}
	}
	// Every request was answered by one instance, once, and the queue
	// group spread them (all 1,000 to one of two has odds of 2^-999).
	if total := served[0].Load() + served[1].Load(); total != n || served[0].Load() == 0 || served[1].Load() == 0 {
		t.Fatalf("handlers ran %d and %d times for %d requests", served[0].Load(), served[1].Load(), n)
	}
	// The stats add up across instances, as read by each instance and by
	// the library's discovery.
	sum := 0
	for i, s := range svcs {
		st := endpointStats(t, s.Stats(), "work")
		if int64(st.NumRequests) != served[i].Load() || st.QueueGroup != micro.DefaultQueueGroup || st.NumErrors != 0 {
			t.Fatalf("instance %d stats %+v, served %d", i, st, served[i].Load())
		}
		sum += st.NumRequests
	}
	if sum != n {
		t.Fatalf("num_requests sum to %d", sum)
	}
	stats, err := micro.DiscoverStats(ctxTimeout(t, 5*time.Second), client, name, "", natsio.MaxReplies(2))
	if err != nil || len(stats) != 2 {
		t.Fatalf("DiscoverStats: %d replies, %v", len(stats), err)
	}
	if got := endpointStats(t, stats[0], "work").NumRequests + endpointStats(t, stats[1], "work").NumRequests; got != n {
		t.Fatalf("discovered num_requests sum to %d", got)
	}
}

func TestMicroGroupsQueueGroupsMetadata(t *testing.T) {
	name := serviceName(t)
	prefix := subject(t, "g")
	svc := addService(t, connect(t), micro.Config{
		Name: name, Version: "2.1.0-rc.1+build.5", Description: "groups",
		Metadata: map[string]string{"team": "core"}, QueueGroup: "workers",
	})
	if err := svc.AddEndpoint("plain", echo, micro.WithEndpointSubject(prefix+".plain"),
		micro.WithEndpointMetadata(map[string]string{"kind": "echo"})); err != nil {
		t.Fatal(err)
	}
	if err := svc.AddEndpoint("own", echo, micro.WithEndpointSubject(prefix+".own"),
		micro.WithEndpointQueueGroup("mine"), micro.WithEndpointMetadataKey("a", "1")); err != nil {
		t.Fatal(err)
	}
	if err := svc.AddEndpoint("none", echo, micro.WithEndpointSubject(prefix+".none"),
		micro.WithEndpointQueueGroupDisabled()); err != nil {
		t.Fatal(err)
	}
	g := svc.AddGroup(prefix, micro.WithGroupQueueGroup("grouped"))
	if err := g.AddEndpoint("inherits", echo); err != nil {
		t.Fatal(err)
	}
	if err := g.AddEndpoint("overrides", echo, micro.WithEndpointSubject("ov"), micro.WithEndpointQueueGroup("ovq")); err != nil {
		t.Fatal(err)
	}
	nested := g.AddGroup("inner", micro.WithGroupQueueGroupDisabled())
	if err := nested.AddEndpoint("deep", echo); err != nil {
		t.Fatal(err)
	}
	if err := nested.AddEndpoint("deepq", echo, micro.WithEndpointQueueGroup("back")); err != nil {
		t.Fatal(err)
	}

	info := svc.Info()
	if info.Name != name || info.Version != "2.1.0-rc.1+build.5" || info.Description != "groups" ||
		info.Type != micro.InfoResponseType || !maps.Equal(info.Metadata, map[string]string{"team": "core"}) || info.ID == "" {
		t.Fatalf("info %+v", info)
	}
	want := []micro.EndpointInfo{
		{Name: "plain", Subject: prefix + ".plain", QueueGroup: "workers", Metadata: map[string]string{"kind": "echo"}},
		{Name: "own", Subject: prefix + ".own", QueueGroup: "mine", Metadata: map[string]string{"a": "1"}},
		{Name: "none", Subject: prefix + ".none", QueueGroup: ""},
		{Name: "inherits", Subject: prefix + ".inherits", QueueGroup: "grouped"},
		{Name: "overrides", Subject: prefix + ".ov", QueueGroup: "ovq"},
		{Name: "deep", Subject: prefix + ".inner.deep", QueueGroup: ""},
		{Name: "deepq", Subject: prefix + ".inner.deepq", QueueGroup: "back"},
	}
	if len(info.Endpoints) != len(want) {
		t.Fatalf("endpoints %+v", info.Endpoints)
	}
	for i, w := range want {
		e := info.Endpoints[i]
		if e.Name != w.Name || e.Subject != w.Subject || e.QueueGroup != w.QueueGroup || !maps.Equal(e.Metadata, w.Metadata) {
			t.Errorf("endpoint %d: %+v, want %+v", i, e, w)
		}
	}

	// Each endpoint answers on its subject; one without a queue group is
	// served by every instance: a second instance of the service shows it.
	client := connect(t)
	for _, w := range want {
		if m := mustRequest(t, client, w.Subject, []byte(w.Name)); string(m.Data) != w.Name {
			t.Fatalf("%s answered %q", w.Subject, m.Data)
		}
	}
	secondConn := connect(t)
	second := addService(t, secondConn, micro.Config{Name: name, Version: "1.0.0", QueueGroupDisabled: true})
	if err := second.AddEndpoint("none", echo, micro.WithEndpointSubject(prefix+".none")); err != nil {
		t.Fatal(err)
	}
	if err := second.AddEndpoint("grouped", echo, micro.WithEndpointSubject(prefix+".grouped"),
		micro.WithEndpointQueueGroup("set")); err != nil {
		t.Fatal(err)
	}
	flush(t, secondConn) // its subscriptions are registered
	if qg := second.Info().Endpoints; qg[0].QueueGroup != "" || qg[1].QueueGroup != "set" {
		t.Fatalf("QueueGroupDisabled service: endpoints %+v", qg)
	}
	replies := 0
	for m, err := range client.RequestMany(ctxTimeout(t, 5*time.Second), prefix+".none", []byte("x"), natsio.MaxReplies(2)) {
		if err != nil {
			t.Fatal(err)
		}
		if string(m.Data) == "x" {
			replies++
		}
	}
	if replies != 2 {
		t.Fatalf("endpoint without queue group: %d replies from 2 instances", replies)
	}
}

func TestMicroErrorReplyAndPanic(t *testing.T) {
	name := serviceName(t)
	subj := subject(t, "op")
	errs := make(chan *micro.NATSError, 4)
	nc := connect(t)
	svc := addService(t, nc, micro.Config{
		Name: name, Version: "0.1.0",
		ErrorHandler: func(s micro.Service, e *micro.NATSError) { errs <- e },
	})
	if err := svc.AddEndpoint("op", micro.HandlerFunc(func(r micro.Request) {
		switch string(r.Data()) {
		case "bad":
			if err := r.Error("4x", "not a number", nil); !errors.Is(err, micro.ErrInvalidCode) {
				t.Errorf("Error with code 4x: %v", err)
			}
			if err := r.Error("", "no code", nil); !errors.Is(err, micro.ErrArgRequired) {
				t.Errorf("Error without code: %v", err)
			}
			_ = r.Error("400", "bad request", []byte("details"), micro.WithHeaders(micro.Headers{"X-Trace": {"t1"}}))
		case "panic":
			panic("boom")
		default:
			_ = r.Respond([]byte("ok"), micro.WithHeaders(micro.Headers{"X-Echo": {r.Headers().Get("X-In")}}))
		}
	}), micro.WithEndpointSubject(subj)); err != nil {
		t.Fatal(err)
	}
	flush(t, nc) // subscribed before another connection's request
	client := connect(t)

	m := mustRequest(t, client, subj, []byte("bad"))
	if m.Header.Get(micro.ErrorHeader) != "bad request" || m.Header.Get(micro.ErrorCodeHeader) != "400" ||
		m.Header.Get("X-Trace") != "t1" || string(m.Data) != "details" {
		t.Fatalf("error reply: headers %v data %q", m.Header, m.Data)
	}
	m = mustRequest(t, client, subj, []byte("panic"))
	if m.Header.Get(micro.ErrorCodeHeader) != "500" || !strings.Contains(m.Header.Get(micro.ErrorHeader), "boom") {
		t.Fatalf("panic reply: headers %v", m.Header)
	}
	select {
	case e := <-errs:
		if e.Subject != subj || !strings.Contains(e.Description, "boom") {
			t.Fatalf("ErrorHandler got %+v", e)
		}
		// As nats.go's: equal subject and text match, anything else does
		// not, and there is no Go error behind a reported one.
		if !errors.Is(e, &micro.NATSError{Subject: e.Subject, Description: e.Description}) ||
			errors.Is(e, &micro.NATSError{Subject: e.Subject, Description: "other"}) || errors.Unwrap(e) != nil {
			t.Errorf("NATSError Is/Unwrap: %+v", e)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("ErrorHandler not called for the panic")
	}
	// The endpoint goes on serving, headers both ways.
	m = mustRequest(t, client, subj, nil)
	if string(m.Data) != "ok" {
		t.Fatalf("after the panic: %q", m.Data)
	}
	m, err := client.RequestMsg(ctxTimeout(t, 5*time.Second), &natsio.Msg{Subject: subj, Header: natsio.Header{"X-In": {"v"}}})
	if err != nil || m.Header.Get("X-Echo") != "v" {
		t.Fatalf("request headers: %v %v", m, err)
	}
	st := endpointStats(t, svc.Stats(), "op")
	if st.NumRequests != 4 || st.NumErrors != 2 || !strings.HasPrefix(st.LastError, "500:") {
		t.Fatalf("stats %+v", st)
	}
}

func TestMicroStopFinishesInFlight(t *testing.T) {
	name := serviceName(t)
	subj := subject(t, "slow")
	entered := make(chan struct{}, 1)
	release := make(chan struct{})
	done := make(chan micro.Service, 1)
	svc, err := micro.AddService(connect(t), micro.Config{
		Name: name, Version: "1.0.0",
		DoneHandler: func(s micro.Service) { done <- s },
		Endpoint: &micro.EndpointConfig{Subject: subj, Handler: micro.HandlerFunc(func(r micro.Request) {
			entered <- struct{}{}
			<-release
			_ = r.Respond([]byte("finished"))
		})},
	})
	if err != nil {
		t.Fatal(err)
	}
	if eps := svc.Info().Endpoints; len(eps) != 1 || eps[0].Name != "default" || eps[0].Subject != subj {
		t.Fatalf("Config.Endpoint: %+v", eps)
	}
	client := connect(t)
	reply := make(chan *natsio.Msg, 1)
	go func() {
		m, err := client.Request(ctxTimeout(t, 10*time.Second), subj, nil)
		if err != nil {
			t.Errorf("in-flight request: %v", err)
		}
		reply <- m
	}()
	<-entered
	stopped := make(chan error, 1)
	go func() { stopped <- svc.Stop() }()
	// The stop waits for the in-flight request: the monitoring
	// subscriptions are drained already once no PING is answered.
	for {
		_, err := client.Request(ctxTimeout(t, 5*time.Second), "$SRV.PING."+name, nil)
		if errors.Is(err, natsio.ErrNoResponders) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	select {
	case err := <-stopped:
		t.Fatalf("Stop returned (%v) before the in-flight request finished", err)
	default:
	}
	if _, err := client.Request(ctxTimeout(t, 5*time.Second), subj, nil); !errors.Is(err, natsio.ErrNoResponders) {
		t.Fatalf("request during the stop: %v", err)
	}
	close(release)
	if m := <-reply; m == nil || string(m.Data) != "finished" {
		t.Fatalf("in-flight reply %v", m)
	}
	if err := <-stopped; err != nil {
		t.Fatal(err)
	}
	if !svc.Stopped() {
		t.Fatal("Stopped() is false after Stop")
	}
	select {
	case s := <-done:
		if s != svc {
			t.Fatal("DoneHandler got another service")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("DoneHandler not called")
	}
	if err := svc.Stop(); err != nil {
		t.Fatalf("second Stop: %v", err)
	}
	if err := svc.AddEndpoint("late", echo); err == nil {
		t.Fatal("AddEndpoint on a stopped service succeeded")
	}
}

func TestMicroReset(t *testing.T) {
	name := serviceName(t)
	subj := subject(t, "r")
	svc := addService(t, connect(t), micro.Config{Name: name, Version: "1.0.0"})
	if err := svc.AddEndpoint("r", micro.HandlerFunc(func(r micro.Request) { _ = r.Error("503", "down", nil) }),
		micro.WithEndpointSubject(subj)); err != nil {
		t.Fatal(err)
	}
	client := connect(t)
	for range 3 {
		mustRequest(t, client, subj, nil)
	}
	before := svc.Stats()
	if st := endpointStats(t, before, "r"); st.NumRequests != 3 || st.NumErrors != 3 || st.LastError != "503:down" ||
		st.ProcessingTime <= 0 || st.AverageProcessingTime != st.ProcessingTime/3 {
		t.Fatalf("stats before reset %+v", st)
	}
	svc.Reset()
	after := svc.Stats()
	st := endpointStats(t, after, "r")
	if st.NumRequests != 0 || st.NumErrors != 0 || st.LastError != "" || st.ProcessingTime != 0 || st.AverageProcessingTime != 0 {
		t.Fatalf("stats after reset %+v", st)
	}
	if !after.Started.After(before.Started) && !after.Started.Equal(before.Started) {
		t.Fatalf("started went back: %v -> %v", before.Started, after.Started)
	}
	if st.Name != "r" || st.Subject != subj || st.QueueGroup != "q" {
		t.Fatalf("reset lost the endpoint's identity: %+v", st)
	}
}

func TestMicroConfigValidation(t *testing.T) {
	nc := connect(t)
	for _, cfg := range []micro.Config{
		{Name: "", Version: "1.0.0"},
		{Name: "has space", Version: "1.0.0"},
		{Name: "dot.ted", Version: "1.0.0"},
		{Name: "ok", Version: ""},
		{Name: "ok", Version: "1.0"},
		{Name: "ok", Version: "v1.0.0"},
		{Name: "ok", Version: "01.0.0"},
		{Name: "ok", Version: "1.0.0", QueueGroup: "bad queue"},
		{Name: "ok", Version: "1.0.0", Endpoint: &micro.EndpointConfig{Subject: "a b", Handler: echo}},
	} {
		// The library's error stays inside: its status and detail.
		if _, err := micro.AddService(nc, cfg); !errors.Is(err, micro.ErrConfigValidation) ||
			!errors.Is(err, natsio.ErrServiceConfig) || !errors.Is(err, natsio.ErrConfig) {
			t.Errorf("AddService(%+v): %v, want ErrConfigValidation", cfg, err)
		}
	}
	svc := addService(t, nc, micro.Config{Name: serviceName(t), Version: "1.0.0"})
	for name, opts := range map[string][]micro.EndpointOpt{
		"bad name":  nil,
		"dot.name":  nil,
		"":          nil,
		"badsubj":   {micro.WithEndpointSubject("a.>.b")},
		"badqueue":  {micro.WithEndpointQueueGroup("q q")},
		"nohandler": nil,
	} {
		h := micro.Handler(echo)
		if name == "nohandler" {
			h = nil
		}
		if err := svc.AddEndpoint(name, h, opts...); !errors.Is(err, micro.ErrConfigValidation) {
			t.Errorf("AddEndpoint(%q): %v, want ErrConfigValidation", name, err)
		}
	}
	if err := svc.AddGroup("a.>").AddEndpoint("e", echo); !errors.Is(err, micro.ErrConfigValidation) {
		t.Errorf("group a.>: %v, want ErrConfigValidation", err)
	}
	if err := svc.AddGroup("g", micro.WithGroupQueueGroup("q q")).AddGroup("h").AddEndpoint("e", echo); !errors.Is(err, micro.ErrConfigValidation) {
		t.Errorf("group with a bad queue group: %v, want ErrConfigValidation", err)
	}
	if len(svc.Info().Endpoints) != 0 {
		t.Fatalf("refused endpoints were added: %+v", svc.Info().Endpoints)
	}
	if _, err := micro.ControlSubject(micro.PingVerb, "", "id"); !errors.Is(err, micro.ErrServiceNameRequired) {
		t.Errorf("ControlSubject without a name: %v", err)
	}
	if _, err := micro.ControlSubject(micro.Verb(9), "", ""); !errors.Is(err, micro.ErrVerbNotSupported) {
		t.Errorf("ControlSubject of verb 9: %v", err)
	}
}

func TestMicroStatsHandlerAndLaterAnswer(t *testing.T) {
	name := serviceName(t)
	subj := subject(t, "later")
	var kept sync.WaitGroup
	svc := addService(t, connect(t), micro.Config{
		Name: name, Version: "1.0.0",
		StatsHandler: func(e *micro.Endpoint) any {
			return map[string]string{"endpoint": e.Name, "subject": e.Subject}
		},
	})
	// The handler answers from another goroutine after it returns.
	if err := svc.AddEndpoint("later", micro.HandlerFunc(func(r micro.Request) {
		kept.Add(1)
		go func() {
			defer kept.Done()
			time.Sleep(time.Millisecond)
			if err := r.Respond([]byte("later:" + string(r.Data()))); err != nil {
				t.Errorf("later Respond: %v", err)
			}
		}()
	}), micro.WithEndpointSubject(subj)); err != nil {
		t.Fatal(err)
	}
	// The same name in a group: the StatsHandler tells them apart.
	if err := svc.AddGroup(subj).AddEndpoint("later", echo); err != nil {
		t.Fatal(err)
	}
	client := connect(t)
	if m := mustRequest(t, client, subj, []byte("x")); string(m.Data) != "later:x" {
		t.Fatalf("reply %q", m.Data)
	}
	kept.Wait()
	stats := svc.Stats()
	if len(stats.Endpoints) != 2 {
		t.Fatalf("endpoints %+v", stats.Endpoints)
	}
	for i, want := range []string{subj, subj + ".later"} {
		st := stats.Endpoints[i]
		var data map[string]string
		if err := json.Unmarshal(st.Data, &data); err != nil || data["endpoint"] != "later" || data["subject"] != want || st.Subject != want {
			t.Fatalf("endpoint %d: stats data %s (%v)", i, st.Data, err)
		}
	}
	if n := stats.Endpoints[0].NumRequests; n != 1 {
		t.Fatalf("num_requests %d", n)
	}
}

func TestMicroDiscover(t *testing.T) {
	name := serviceName(t)
	nc := connect(t)
	svc := addService(t, nc, micro.Config{Name: name, Version: "3.0.0", Description: "found",
		Metadata: map[string]string{"k": "v"}})
	if err := svc.AddEndpoint("e", echo, micro.WithEndpointSubject(subject(t, "e"))); err != nil {
		t.Fatal(err)
	}
	other := addService(t, connect(t), micro.Config{Name: name + "-other", Version: "1.0.0"})
	id := svc.Info().ID
	ctx := ctxTimeout(t, 5*time.Second)

	pings, err := micro.DiscoverPing(ctx, nc, name, "", natsio.MaxReplies(1))
	if err != nil || len(pings) != 1 {
		t.Fatalf("DiscoverPing: %v %v", pings, err)
	}
	if p := pings[0]; p.Name != name || p.ID != id || p.Version != "3.0.0" || p.Type != micro.PingResponseType ||
		!maps.Equal(p.Metadata, map[string]string{"k": "v"}) {
		t.Fatalf("ping %+v", p)
	}
	infos, err := micro.DiscoverInfo(ctx, nc, name, id, natsio.MaxReplies(1))
	if err != nil || len(infos) != 1 {
		t.Fatalf("DiscoverInfo: %v %v", infos, err)
	}
	if i := infos[0]; i.Description != "found" || len(i.Endpoints) != 1 || i.Endpoints[0].Subject != subject(t, "e") {
		t.Fatalf("info %+v", i)
	}
	stats, err := micro.DiscoverStats(ctx, nc, name, id, natsio.MaxReplies(1))
	if err != nil || len(stats) != 1 || stats[0].Type != micro.StatsResponseType || stats[0].Started.IsZero() {
		t.Fatalf("DiscoverStats: %+v %v", stats, err)
	}
	// Without a name: both services answer (among any others running).
	raw, err := micro.Discover(ctx, nc, micro.PingVerb, "", "", natsio.Stall(500*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, r := range raw {
		var p micro.Ping
		if err := json.Unmarshal(r, &p); err != nil {
			t.Fatal(err)
		}
		names = append(names, p.Name)
	}
	if !slices.Contains(names, name) || !slices.Contains(names, other.Info().Name) {
		t.Fatalf("bare PING found %v", names)
	}
	if _, err := micro.DiscoverPing(ctx, nc, "bad name", "", natsio.MaxReplies(1)); !errors.Is(err, micro.ErrConfigValidation) {
		t.Fatalf("DiscoverPing of a bad name: %v", err)
	}
	// Nobody of that name: no replies, no error.
	none, err := micro.DiscoverPing(context.Background(), nc, name+"-absent", "", natsio.Stall(200*time.Millisecond))
	if err != nil || len(none) != 0 {
		t.Fatalf("absent service: %v %v", none, err)
	}
}

func TestMicroStopFromHandlerAndClose(t *testing.T) {
	name := serviceName(t)
	subj := subject(t, "quit")
	done := make(chan struct{}, 2)
	nc := connect(t)
	var svc micro.Service
	stopErr := make(chan error, 1)
	svc = addService(t, nc, micro.Config{
		Name: name, Version: "1.0.0",
		DoneHandler: func(micro.Service) { done <- struct{}{} },
		Endpoint: &micro.EndpointConfig{Subject: subj, Handler: micro.HandlerFunc(func(r micro.Request) {
			_ = r.Respond([]byte("bye"))
			// From its own handler Stop starts the stop and returns (the
			// stop waits for this handler).
			stopErr <- svc.Stop()
		})},
	})
	client := connect(t)
	if m := mustRequest(t, client, subj, nil); string(m.Data) != "bye" {
		t.Fatalf("reply %q", m.Data)
	}
	select {
	case err := <-stopErr:
		if err != nil {
			t.Fatalf("Stop from the handler: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Stop from the handler did not return")
	}
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("DoneHandler not called after a stop from the handler")
	}
	if !svc.Stopped() {
		t.Fatal("Stopped() is false")
	}

	// A service stops when its connection closes.
	nc2 := connect(t)
	svc2 := addService(t, nc2, micro.Config{Name: name, Version: "1.0.0",
		DoneHandler: func(micro.Service) { done <- struct{}{} }})
	if svc2.Stopped() {
		t.Fatal("a new service is stopped")
	}
	if err := nc2.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("DoneHandler not called after the connection's close")
	}
	if !svc2.Stopped() {
		t.Fatal("Stopped() is false after the connection's close")
	}
}

// An endpoint's pending limits (WithEndpointPendingLimits(2, -1)) bound the
// requests held while its handler runs: the first request, in the
// handler, counts against them (as in nats.go), so of the next 4 only 1 is
// kept and 3 are dropped; the drop is counted in
// the endpoint's stats (NumErrors, LastError naming the slow consumer) and
// told to the ErrorHandler with the endpoint's subject; once the handler
// returns the kept requests are answered in order, the dropped ones never
// (the next request is answered right after the kept ones). Both limits 0
// and one limit 0 are refused before anything is subscribed. The
// ErrorHandler, told on the connection's events thread, may call Stop.
func TestMicroEndpointPendingLimits(t *testing.T) {
	nc := connect(t)
	requester := connect(t)
	errs := make(chan *micro.NATSError, 16)
	svc := addService(t, nc, micro.Config{
		Name: serviceName(t), Version: "1.0.0",
		ErrorHandler: func(_ micro.Service, e *micro.NATSError) {
			select {
			case errs <- e:
			default:
			}
		},
	})
	prefix := subject(t, "grp")
	entered, release := make(chan struct{}), make(chan struct{})
	var releaseOnce sync.Once
	releaseHandler := func() { releaseOnce.Do(func() { close(release) }) }
	t.Cleanup(releaseHandler) // before the service's Stop, which waits for the handler
	held := micro.HandlerFunc(func(r micro.Request) {
		if string(r.Data()) == "r0" {
			close(entered)
			<-release
		}
		_ = r.Respond(r.Data())
	})
	// In a group: the subject told is the endpoint's whole subject.
	noErr(t, svc.AddGroup(prefix).AddEndpoint("held", held, micro.WithEndpointSubject("held"), micro.WithEndpointPendingLimits(2, -1)))
	noErr(t, svc.AddEndpoint("open", echo, micro.WithEndpointSubject(subject(t, "open"))))
	flush(t, nc)
	subj := prefix + ".held"
	replies := got(requester.SubscribeSync(subject(t, "replies"))).must(t)
	send := func(data string) {
		t.Helper()
		noErr(t, requester.PublishMsg(&natsio.Msg{Subject: subj, Reply: replies.Subject(), Data: []byte(data)}))
	}
	send("r0")
	select {
	case <-entered:
	case <-time.After(5 * time.Second):
		t.Fatal("the first request did not reach the handler")
	}
	for i := 1; i <= 4; i++ {
		send(fmt.Sprint("r", i))
	}
	flush(t, requester)
	var st *micro.EndpointStats
	eventually(t, "the endpoint's stats to count the drop", func() bool {
		st = endpointStats(t, svc.Stats(), "held")
		return st.NumErrors >= 1
	})
	if !strings.HasPrefix(st.LastError, "slow consumer") || st.Subject != subj {
		t.Errorf("stats %+v, want last_error \"slow consumer...\" on %s", st, subj)
	}
	if open := endpointStats(t, svc.Stats(), "open"); open.NumErrors != 0 {
		t.Errorf("the endpoint without limits counts %d errors", open.NumErrors)
	}
	select {
	case e := <-errs:
		if e.Subject != subj || !strings.Contains(strings.ToLower(e.Description), "slow consumer") ||
			!errors.Is(e, natsio.ErrSlowConsumer) {
			t.Errorf("ErrorHandler got %+v (%v), want the subject %s and a slow consumer", e, e, subj)
		}
	case <-time.After(5 * time.Second):
		t.Error("ErrorHandler not told of the drop")
	}
	// The request in the handler counts against the limits (as nats.go
	// counts it): r0 and r1 were kept, r2, r3 and r4 dropped.
	releaseHandler()
	for i, want := range []string{"r0", "r1", "r5"} {
		if want == "r5" { // the queue is empty now: r5 is kept
			send(want)
		}
		m, err := replies.NextMsg(ctxTimeout(t, 5*time.Second))
		if err != nil || string(m.Data) != want {
			t.Fatalf("reply %d: %v, want %q (r2, r3 and r4 dropped)", i, err, want)
		}
	}
	eventually(t, "3 requests counted", func() bool { return endpointStats(t, svc.Stats(), "held").NumRequests == 3 })

	// Refused limits: nothing is added.
	err := svc.AddEndpoint("zero", echo, micro.WithEndpointPendingLimits(0, 0))
	if !errors.Is(err, micro.ErrConfigValidation) || !strings.Contains(err.Error(), "at least one pending limit must be non-zero") {
		t.Errorf("limits 0, 0: %v", err)
	}
	for _, limits := range [][2]int{{0, 1024}, {5, 0}} {
		err := svc.AddEndpoint("zero", echo, micro.WithEndpointPendingLimits(limits[0], limits[1]))
		if !errors.Is(err, micro.ErrConfigValidation) || !errors.Is(err, natsio.ErrServiceConfig) {
			t.Errorf("limits %v: %v, want ErrConfigValidation", limits, err)
		}
	}
	if n := len(svc.Info().Endpoints); n != 2 {
		t.Errorf("%d endpoints after the refused ones, want 2", n)
	}

	// Stop from the ErrorHandler (nats.go's advice) stops the service.
	stopping := make(chan error, 1)
	stopper := addService(t, nc, micro.Config{
		Name: serviceName(t) + "_stop", Version: "1.0.0",
		ErrorHandler: func(s micro.Service, _ *micro.NATSError) {
			select {
			case stopping <- s.Stop():
			default:
			}
		},
	})
	gate, open := make(chan struct{}), make(chan struct{})
	var openOnce sync.Once
	openHandler := func() { openOnce.Do(func() { close(open) }) }
	t.Cleanup(openHandler)
	stopSubj := subject(t, "stop")
	noErr(t, stopper.AddEndpoint("held", micro.HandlerFunc(func(r micro.Request) {
		if string(r.Data()) == "first" {
			close(gate)
			<-open
		}
		_ = r.Respond(r.Data())
	}), micro.WithEndpointSubject(stopSubj), micro.WithEndpointPendingLimits(1, -1)))
	flush(t, nc)
	noErr(t, requester.PublishMsg(&natsio.Msg{Subject: stopSubj, Reply: replies.Subject(), Data: []byte("first")}))
	select {
	case <-gate:
	case <-time.After(5 * time.Second):
		t.Fatal("the first request did not reach the handler")
	}
	for range 3 {
		noErr(t, requester.PublishMsg(&natsio.Msg{Subject: stopSubj, Reply: replies.Subject(), Data: []byte("more")}))
	}
	flush(t, requester)
	select {
	case err := <-stopping:
		noErr(t, err)
	case <-time.After(5 * time.Second):
		t.Fatal("Stop from the ErrorHandler did not return")
	}
	openHandler()
	eventually(t, "the service to stop", stopper.Stopped)
}
