package nats

import (
	"errors"
	"fmt"
	"reflect"
	"testing"

	natsio "github.com/libnatsio/natsio/bindings/go"
)

// serverErr is the library's error for a server -ERR with text.
func serverErr(text string) error {
	return &natsio.Error{Status: serverErrorCode, Detail: "server error: " + text}
}

// The server's refusals nats.go names: reported to the error handler they
// are its sentinels; returned by Connect, revoked and account-expired
// credentials are too, the others the server's text, as nats.go gives it.
func TestTranslateServerTexts(t *testing.T) {
	for _, c := range []struct {
		text       string
		reported   error
		returned   string
		returnedIs error
	}{
		{"maximum connections exceeded", ErrMaxConnectionsExceeded, "nats: maximum connections exceeded", nil},
		{"maximum account active connections exceeded", ErrMaxAccountConnectionsExceeded,
			"nats: maximum account active connections exceeded", ErrMaxAccountConnectionsExceeded},
		{"User Authentication Revoked", ErrAuthRevoked, "nats: authentication revoked", ErrAuthRevoked},
		{"Account Authentication Expired", ErrAccountAuthExpired, "nats: account authentication expired", ErrAccountAuthExpired},
	} {
		async := &natsio.AsyncError{Err: serverErr(c.text)}
		if got := Translate(fmt.Errorf("wrapped: %w", async)); got != c.reported {
			t.Errorf("%q reported: %v, want %v", c.text, got, c.reported)
		}
		got := Translate(serverErr(c.text))
		if got.Error() != c.returned {
			t.Errorf("%q returned: %q (%v)", c.text, got, got)
		}
		if c.returnedIs != nil && !errors.Is(got, c.returnedIs) {
			t.Errorf("%q returned does not match %v", c.text, c.returnedIs)
		}
	}
	// nats.go's own quirk, kept: its sentinel's text differs from the
	// server's, so Connect's error does not match it.
	if errors.Is(Translate(serverErr("maximum connections exceeded")), ErrMaxConnectionsExceeded) {
		t.Error("Connect's max connections error matches the sentinel nats.go's does not")
	}
	other := Translate(serverErr("Unknown Protocol Operation"))
	if other.Error() != "nats: Unknown Protocol Operation" || !errors.Is(other, natsio.ErrServer) {
		t.Errorf("another server error reads %q", other)
	}
}

// DecodeHeadersMsg reads a header block as nats.go does.
func TestDecodeHeadersMsg(t *testing.T) {
	for _, c := range []struct {
		block string
		want  Header
	}{
		{"NATS/1.0\r\n\r\n", Header{}},
		{"NATS/1.0\r\nA: 1\r\nb:2\r\nA:  \t3 \r\n\r\n", Header{"A": {"1", "3 "}, "b": {"2"}}},
		{"NATS/1.0\r\n: skipped\r\nK: v: w\r\n\r\ntrailing data", Header{"K": {"v: w"}}},
		{"NATS/1.0 503\r\n\r\n", Header{"Status": {"503"}}},
		{"NATS/1.0 100 Idle Heartbeat\r\nNats-Last-Consumer: 2\r\n\r\n",
			Header{"Status": {"100"}, "Description": {"Idle Heartbeat"}, "Nats-Last-Consumer": {"2"}}},
		{"NATS/1.0 404No Messages\n\n", Header{"Status": {"404"}, "Description": {"No Messages"}}},
	} {
		got, err := DecodeHeadersMsg([]byte(c.block))
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("%q: %v, %v; want %v", c.block, got, err, c.want)
		}
	}
	for _, bad := range []string{"", "NATS/1.0", "NATS/1.0\r\nA: 1\r\n", "HTTP/1.1\r\n\r\n",
		"NATS/1.0 50\r\n\r\n", "NATS/1.0\r\nno colon\r\n\r\n"} {
		if h, err := DecodeHeadersMsg([]byte(bad)); err != ErrBadHeaderMsg {
			t.Errorf("%q: %v, %v; want ErrBadHeaderMsg", bad, h, err)
		}
	}
}
