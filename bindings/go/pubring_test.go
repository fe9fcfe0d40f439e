package natsio_test

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	natsio "github.com/libnatsio/natsio/bindings/go"
)

// Publish queues plain messages in the library's publish ring (no cgo call
// per message); everything else goes through calls. Whatever way each
// message takes, one connection's messages reach a subscriber in the order
// they were published.
func TestPublishKeepsOrderAcrossEveryWayOut(t *testing.T) {
	nc, snc := connect(t), connect(t)
	subj := subject(t, "o")
	sub, err := snc.SubscribeSync(subj+".>", natsio.SubPendingLimits(-1, -1))
	if err != nil {
		t.Fatal(err)
	}
	flush(t, snc)
	const n = 20000
	for i := range n {
		data := []byte(strconv.Itoa(i))
		switch {
		case i%997 == 0: // headers: always the call
			err = nc.PublishMsg(&natsio.Msg{Subject: subj + ".a", Data: data, Header: natsio.Header{"K": {"v"}}})
		case i%1009 == 0: // a subject only the library can vouch for: the call
			err = nc.Publish(subj+".\u00fc", data)
		case i%101 == 0: // another plain subject: the ring
			err = nc.Publish(subj+".b", data)
		case i%1013 == 0: // a big message: the call
			err = nc.Publish(subj+".a", append(data, make([]byte, 20000)...))
		default:
			err = nc.Publish(subj+".a", data)
		}
		if err != nil {
			t.Fatalf("publish %d: %v", i, err)
		}
	}
	before := nc.Stats().OutMsgs
	if before != n {
		t.Fatalf("OutMsgs %d right after %d publishes", before, n)
	}
	flush(t, nc)
	for i := range n {
		m := mustNext(t, sub)
		got := string(m.Data)
		if len(got) > 10 {
			got = got[:len(strconv.Itoa(i))]
		}
		if got != strconv.Itoa(i) {
			t.Fatalf("message %d: got %q on %s", i, got, m.Subject)
		}
	}
}

// A request (and a flush) sent after publishes reaches the server after
// them: the responder, on the publishes' subscriber connection, has seen
// them all when it answers.
func TestPublishesReachTheServerBeforeALaterRequest(t *testing.T) {
	nc, snc := connect(t), connect(t)
	subj := subject(t, "r")
	var mu sync.Mutex
	seen := 0
	_, err := snc.Subscribe(subj+".>", func(m *natsio.Msg) {
		mu.Lock()
		defer mu.Unlock()
		if m.Subject == subj+".count" {
			m.Respond([]byte(strconv.Itoa(seen)))
			return
		}
		seen++
	}, natsio.SubPendingLimits(-1, -1))
	if err != nil {
		t.Fatal(err)
	}
	flush(t, snc)
	for round := 1; round <= 5; round++ {
		for range 1000 {
			if err := nc.Publish(subj+".p", []byte("x")); err != nil {
				t.Fatal(err)
			}
		}
		r, err := nc.Request(ctxTimeout(t, 5*time.Second), subj+".count", nil)
		if err != nil {
			t.Fatal(err)
		}
		if string(r.Data) != strconv.Itoa(round*1000) {
			t.Fatalf("round %d: the responder had seen %s publishes", round, r.Data)
		}
	}
}

// The errors of Publish stay synchronous once a subject goes through the
// ring: a bad subject, a payload over the server's max_payload (below the
// ring's record size here), a closed connection.
func TestPublishErrorsStaySynchronous(t *testing.T) {
	conf := filepath.Join(t.TempDir(), "small.conf")
	if err := os.WriteFile(conf, []byte("max_payload: 512\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	srv := startTestServer(t, "-c", conf)
	nc := connectTo(t, srv.url)
	sub, err := nc.SubscribeSync("ok")
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		wantIs(t, nc.Publish("ok", []byte("fine")), nil)
	}
	wantIs(t, nc.Publish("ok", make([]byte, 513)), natsio.ErrMaxPayload)
	wantIs(t, nc.Publish("bad..subject", nil), natsio.ErrBadSubject)
	wantIs(t, nc.Publish("ok", make([]byte, 512)), nil)
	flush(t, nc)
	for _, want := range []int{4, 4, 4, 512} {
		if m := mustNext(t, sub); len(m.Data) != want {
			t.Fatalf("got %d bytes, want %d", len(m.Data), want)
		}
	}
	// Published before Close: sent. After: ErrConnectionClosed.
	snc := connectTo(t, srv.url)
	late, err := snc.SubscribeSync("ok")
	if err != nil {
		t.Fatal(err)
	}
	flush(t, snc)
	for range 100 {
		wantIs(t, nc.Publish("ok", []byte("last")), nil)
	}
	noErr(t, nc.Close())
	wantIs(t, nc.Publish("ok", []byte("x")), natsio.ErrConnectionClosed)
	for range 100 {
		if m, err := late.NextMsg(ctxTimeout(t, 5*time.Second)); err != nil || string(m.Data) != "last" {
			t.Fatalf("a message published before Close: %v %v", m, err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if m, err := late.NextMsg(ctx); err == nil {
		t.Fatalf("a message published after Close arrived: %q", m.Data)
	}
}

// The ring takes only subjects the library certainly accepts (so a bad
// subject is still ErrBadSubject at once): every subject plainSubject
// passes is one the library's own check (the call) accepts.
func TestRingTakesOnlySubjectsTheLibraryAccepts(t *testing.T) {
	nc := connect(t)
	// "" first: the ring has taken no subject yet.
	for _, s := range []string{
		"", "a", "a.b", "$JS.API.X", "_INBOX.x.y", "a-b_c~d", "foo*", "a>b", ".a", "a.", "a..b",
		" a", "a b", "a\tb", "a\x00b", "a\x7fb", "*", "a.>", "a.*.b", "\u00fc.x", "bad\xffutf8",
	} {
		callErr := nc.PublishMsg(&natsio.Msg{Subject: s}) // the call: the library's check
		if natsio.PlainSubjectForTest(s) && callErr != nil {
			t.Errorf("%q: taken by the ring, refused by the library: %v", s, callErr)
		}
		// Publish reports what the call reports, at once; twice, as the
		// ring remembers the last subject it took.
		for range 2 {
			if err := nc.Publish(s, nil); (err == nil) != (callErr == nil) || (err != nil && err.Error() != callErr.Error()) {
				t.Errorf("%q: Publish said %v, the call %v", s, err, callErr)
			}
		}
	}
	for _, s := range []string{"a", "a.b.c", "$JS.API.X", "foo-bar.baz_1"} {
		if !natsio.PlainSubjectForTest(s) {
			t.Errorf("%q: a plain subject left to the call", s)
		}
	}
}
