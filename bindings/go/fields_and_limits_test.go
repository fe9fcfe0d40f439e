package natsio_test

// What the conformance table does not cover of messages, limits and configs:
// Msg.Status and Msg.Sid, Msg.HeadersMalformed, MaxControlLine, the JetStream config fields and
// DeleteMsg's NoErase.

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	natsio "github.com/libnatsio/natsio/bindings/go"
)

func TestMsgStatusAndSid(t *testing.T) {
	nc := connect(t)
	sub, err := nc.SubscribeSync(subject(t, "data"))
	noErr(t, err)
	if _, err := nc.SubscribeSync(subject(t, "other")); err != nil {
		t.Fatal(err)
	}
	noErr(t, nc.Publish(subject(t, "data"), []byte("x")))
	m := mustNext(t, sub)
	if m.Sid != sub.SID() || m.Sid == 0 || m.Status != 0 {
		t.Fatalf("plain message: Sid %d (want %d), Status %d", m.Sid, sub.SID(), m.Status)
	}

	// A publish with a reply subject nobody answers: the server sends the
	// reply subject a no-responders status message (503), which a
	// callback subscription receives as a message (a synchronous one
	// reports it as ErrNoResponders).
	got := make(chan *natsio.Msg, 2)
	inbox := subject(t, "inbox")
	cb, err := nc.Subscribe(inbox, func(m *natsio.Msg) { got <- m })
	noErr(t, err)
	noErr(t, nc.Publish(inbox, []byte("plain")))
	noErr(t, nc.PublishMsg(&natsio.Msg{Subject: subject(t, "nobody"), Reply: inbox}))
	for _, want := range []int{0, 503} {
		select {
		case m := <-got:
			if m.Status != want || m.Sid != cb.SID() {
				t.Fatalf("callback message %q: Status %d, Sid %d (want %d, %d)", m.Data, m.Status, m.Sid, want, cb.SID())
			}
		case <-time.After(5 * time.Second):
			t.Fatal("no callback message")
		}
	}
}

// A message whose header block has a corrupt line, published by a raw
// client, is delivered with HeadersMalformed and its good headers; a clean
// block is not flagged.
func TestCorruptHeaderBlockIsFlagged(t *testing.T) {
	nc := connect(t)
	subj := subject(t, "hdr")
	sub, err := nc.SubscribeSync(subj + ".>")
	noErr(t, err)
	flush(t, nc)
	raw, err := net.Dial("tcp", strings.TrimPrefix(shared.url, "nats://"))
	noErr(t, err)
	defer raw.Close()
	frames := "CONNECT {\"verbose\":false,\"headers\":true}\r\n"
	for _, hp := range []struct{ tail, block string }{
		{"bad", "NATS/1.0\r\nGood: yes\r\nno colon here\r\n\r\n"},
		{"good", "NATS/1.0\r\nGood: yes\r\n\r\n"},
	} {
		frames += fmt.Sprintf("HPUB %s.%s %d %d\r\n%sdata\r\n", subj, hp.tail, len(hp.block), len(hp.block)+4, hp.block)
	}
	_, err = raw.Write([]byte(frames + "PING\r\n"))
	noErr(t, err)
	for r := bufio.NewReader(raw); ; {
		line, err := r.ReadString('\n')
		noErr(t, err)
		if strings.HasPrefix(line, "PONG") {
			break
		}
	}
	bad, good := mustNext(t, sub), mustNext(t, sub)
	if bad.Subject != subj+".bad" || !bad.HeadersMalformed || bad.Header.Get("Good") != "yes" || len(bad.Header) != 1 || string(bad.Data) != "data" {
		t.Errorf("corrupt block: %s malformed=%v %v %q", bad.Subject, bad.HeadersMalformed, bad.Header, bad.Data)
	}
	if good.Subject != subj+".good" || good.HeadersMalformed {
		t.Errorf("clean block: %s malformed=%v", good.Subject, good.HeadersMalformed)
	}
}

func TestMaxControlLine(t *testing.T) {
	// Below the least the library accepts.
	_, err := natsio.Connect(shared.url, natsio.MaxControlLine(63))
	wantErr(t, err, natsio.ErrConfig, "max_control_line")

	// A MSG line longer than the limit (the subject makes it 150+ bytes)
	// breaks the connection whose limit is 128, not one with the default.
	errs := make(chan error, 10)
	small := connect(t, natsio.MaxControlLine(128), natsio.DisconnectErrHandler(func(_ *natsio.Conn, err error) { errs <- err }))
	large := connect(t)
	long := subject(t, strings.Repeat("x", 128))
	subSmall, err := small.SubscribeSync(long)
	noErr(t, err)
	subLarge, err := large.SubscribeSync(long)
	noErr(t, err)
	flush(t, small)
	flush(t, large)
	noErr(t, large.Publish(long, []byte("x")))
	mustNext(t, subLarge)
	select {
	case err := <-errs:
		wantIs(t, err, natsio.ErrMaxControlLine)
	case <-time.After(5 * time.Second):
		t.Fatal("no ErrMaxControlLine reported")
	}
	if m, err := subSmall.NextMsg(ctxTimeout(t, 100*time.Millisecond)); err == nil {
		t.Fatalf("a line over the limit was delivered: %q", m.Subject)
	}
}

func TestConfigFieldsRoundTrip(t *testing.T) {
	ctx := ctxTimeout(t, 10*time.Second)
	nc, js := jetStream(t)
	cfg := natsio.StreamConfig{
		Name: "CFG", Subjects: []string{"cfg.>"}, Storage: natsio.MemoryStorage,
		AllowMsgTTL: true, SubjectDeleteMarkerTTL: 5 * time.Minute,
		AllowAtomicPublish: true, AllowMsgCounter: false, AllowMsgSchedules: true,
		AllowDirect: true, MirrorDirect: false,
		SubjectTransform: &natsio.SubjectTransformConfig{Source: "cfg.>", Destination: "stored.cfg.>"},
		RePublish:        &natsio.RePublish{Source: "stored.cfg.>", Destination: "repub.>", HeadersOnly: true},
		ConsumerLimits:   natsio.StreamConsumerLimits{InactiveThreshold: time.Hour, MaxAckPending: 50},
		Extra:            map[string]any{"allow_batched": true},
	}
	info := got(js.CreateStream(ctx, cfg)).must(t)
	c := info.Config
	if !c.AllowMsgTTL || c.SubjectDeleteMarkerTTL != 5*time.Minute || !c.AllowAtomicPublish || !c.AllowMsgSchedules ||
		c.SubjectTransform == nil || *c.SubjectTransform != *cfg.SubjectTransform ||
		c.RePublish == nil || *c.RePublish != *cfg.RePublish || c.ConsumerLimits != cfg.ConsumerLimits {
		t.Fatalf("read back %+v\nraw %s", c, info.Raw)
	}
	if info.TimeStamp.IsZero() {
		t.Fatalf("no ts: %s", info.Raw)
	}
	// A key without a Go field round-trips through Extra.
	if c.Extra["allow_batched"] != true {
		t.Fatalf("Extra %v, raw %s", c.Extra, info.Raw)
	}
	back := got(js.UpdateStream(ctx, c)).must(t).Config
	if back.Extra["allow_batched"] != true || back.ConsumerLimits != cfg.ConsumerLimits {
		t.Fatalf("updated %+v", back)
	}
	var decoded natsio.StreamConfig
	noErr(t, json.Unmarshal([]byte(`{"name":"X","x_future":{"a":1},"mirror_direct":true}`), &decoded))
	out, err := json.Marshal(decoded)
	noErr(t, err)
	if !decoded.MirrorDirect || !strings.Contains(string(out), `"x_future":{"a":1}`) {
		t.Fatalf("unknown key: %+v -> %s", decoded, out)
	}

	// A mirror and a source, each in its own field.
	got(js.CreateStream(ctx, natsio.StreamConfig{Name: "SRC", Subjects: []string{"src.>"}, Storage: natsio.MemoryStorage})).must(t)
	mirror := got(js.CreateStream(ctx, natsio.StreamConfig{Name: "MIR", Storage: natsio.MemoryStorage,
		Mirror: &natsio.StreamSource{Name: "SRC", FilterSubject: "src.a"}})).must(t).Config
	if mirror.Mirror == nil || mirror.Mirror.Name != "SRC" || mirror.Mirror.FilterSubject != "src.a" {
		t.Fatalf("mirror %+v", mirror)
	}
	agg := got(js.CreateStream(ctx, natsio.StreamConfig{Name: "AGG", Storage: natsio.MemoryStorage,
		Sources: []*natsio.StreamSource{{Name: "SRC", OptStartSeq: 2,
			SubjectTransforms: []natsio.SubjectTransformConfig{{Source: "src.>", Destination: "agg.>"}}}}})).must(t).Config
	if len(agg.Sources) != 1 || agg.Sources[0].OptStartSeq != 2 || len(agg.Sources[0].SubjectTransforms) != 1 ||
		agg.Sources[0].SubjectTransforms[0].Destination != "agg.>" || len(agg.Extra) != 0 {
		t.Fatalf("sources %+v", agg)
	}

	// Consumer fields.
	until := time.Now().Add(time.Hour).UTC().Truncate(time.Second)
	ci := got(js.CreateConsumer(ctx, "CFG", natsio.ConsumerConfig{Durable: "D", SampleFrequency: "50%", PauseUntil: &until})).must(t)
	if ci.Config.SampleFrequency != "50%" || ci.Config.PauseUntil == nil || !ci.Config.PauseUntil.Equal(until) ||
		!ci.Paused || ci.TimeStamp.IsZero() || len(ci.Config.Extra) != 0 {
		t.Fatalf("consumer %+v\nraw %s", ci.Config, ci.Raw)
	}

	acct := got(js.AccountInfo(ctx)).must(t)
	if acct.API.Level < 1 || acct.API.Total == 0 {
		t.Fatalf("account api %+v", acct.API)
	}
	_ = nc
}

// deleteRequests subscribes a second connection to stream's delete
// requests and returns a function that gives the next one's JSON body
// (failing the test when none comes within 5 s).
func deleteRequests(t *testing.T, url, stream string) func() map[string]any {
	spy := connectTo(t, url)
	bodies := make(chan string, 10)
	_, err := spy.Subscribe("$JS.API.STREAM.MSG.DELETE."+stream, func(m *natsio.Msg) { bodies <- string(m.Data) })
	noErr(t, err)
	flush(t, spy)
	return func() map[string]any {
		t.Helper()
		select {
		case b := <-bodies:
			var m map[string]any
			noErr(t, json.Unmarshal([]byte(b), &m))
			return m
		case <-time.After(5 * time.Second):
			t.Fatal("the spy saw no delete request")
		}
		return nil
	}
}

func TestDeleteMsgNoErase(t *testing.T) {
	ctx := ctxTimeout(t, 10*time.Second)
	nc, js := jetStream(t)
	url, err := nc.ConnectedURL()
	noErr(t, err)
	got(js.CreateStream(ctx, natsio.StreamConfig{Name: "D", Subjects: []string{"d"}, Storage: natsio.MemoryStorage})).must(t)
	for range 3 {
		got(js.Publish(ctx, "d", []byte("x"))).must(t)
	}
	next := deleteRequests(t, url, "D")
	noErr(t, js.DeleteMsg(ctx, "D", 1, natsio.NoErase()))
	if req := next(); req["no_erase"] != true {
		t.Fatalf("NoErase sent %v", req)
	}
	for _, del := range []func() error{
		func() error { return js.DeleteMsg(ctx, "D", 2) },
		func() error { return js.SecureDeleteMsg(ctx, "D", 3) },
	} {
		noErr(t, del())
		if req := next(); req["no_erase"] == true {
			t.Fatalf("an erasing delete sent %v", req)
		}
	}
	for seq := uint64(1); seq <= 3; seq++ {
		_, err := js.GetMsg(ctx, "D", seq)
		wantErr(t, err, natsio.ErrMsgNotFound)
	}
}

func TestSubscriptionDrainBound(t *testing.T) {
	nc := connect(t, natsio.DrainTimeout(300*time.Millisecond))
	subj := subject(t, "backlog")
	sub, err := nc.SubscribeSync(subj)
	noErr(t, err)
	for range 3 {
		noErr(t, nc.Publish(subj, []byte("x")))
	}
	flush(t, nc)
	// Nobody reads the backlog: the drain cannot finish. Without a
	// deadline the connection's DrainTimeout bounds the wait.
	start := time.Now()
	err = sub.Drain(context.Background())
	if took := time.Since(start); !errors.Is(err, natsio.ErrTimeout) || took < 250*time.Millisecond || took > 2*time.Second {
		t.Fatalf("Drain without a deadline: %v after %v, want ErrTimeout after about 300ms", err, took)
	}
	// The drain went on: reading the backlog ends the subscription.
	for range 3 {
		mustNext(t, sub)
	}
	if _, err := sub.NextMsg(ctxTimeout(t, 5*time.Second)); !errors.Is(err, natsio.ErrDone) {
		t.Fatalf("after the backlog: %v, want ErrDone", err)
	}
}

func TestFlushHonoursDeadlineWhileServerStopped(t *testing.T) {
	s := startTestServer(t)
	nc := connectTo(t, s.url, natsio.FlushTimeout(5*time.Second))
	flush(t, nc)
	defer s.pause(t)()
	start := time.Now()
	err := nc.Flush(ctxTimeout(t, 200*time.Millisecond))
	if took := time.Since(start); !errors.Is(err, natsio.ErrTimeout) || !errors.Is(err, context.DeadlineExceeded) || took > 2*time.Second {
		t.Fatalf("Flush with a 200ms deadline: %v after %v", err, took)
	}
}
