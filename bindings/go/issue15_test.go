package natsio_test

// Tests of issue 15's additions that the conformance table does not cover:
// Msg.Status and Msg.Sid, MaxControlLine, the JetStream config fields and
// DeleteMsg's NoErase.

import (
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
