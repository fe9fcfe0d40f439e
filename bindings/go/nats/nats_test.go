package nats

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"testing"
	"time"

	natsio "github.com/libnatsio/natsio/bindings/go"
)

// Every binding error the facade maps becomes nats.go's sentinel, with
// nats.go's text, also when wrapped.
func TestTranslateToSentinels(t *testing.T) {
	for _, p := range errorPairs {
		got := Translate(fmt.Errorf("wrapped: %w", p.from))
		if got != p.to {
			t.Errorf("Translate(%v) = %v, want %v", p.from, got, p.to)
		}
	}
	if got := Translate(natsio.ErrTimeout); got.Error() != "nats: timeout" || !errors.Is(got, ErrTimeout) {
		t.Errorf("timeout: %v", got)
	}
	if got := Translate(natsio.ErrNoResponders); got.Error() != "nats: no responders available for request" {
		t.Errorf("no responders: %v", got)
	}
	if Translate(nil) != nil {
		t.Error("Translate(nil) is not nil")
	}
}

// An error nats.go has no sentinel for keeps the binding's sentinel in its
// chain and reads "nats: ...".
func TestTranslateUnmapped(t *testing.T) {
	got := Translate(natsio.ErrIllegalState)
	if !errors.Is(got, natsio.ErrIllegalState) {
		t.Errorf("lost the binding's sentinel: %v", got)
	}
	if got.Error() != "nats: illegal state" {
		t.Errorf("text: %q", got.Error())
	}
	if got := Translate(context.Canceled); got != context.Canceled {
		t.Errorf("context.Canceled became %v", got)
	}
}

// Header is nats.go's: names are case-sensitive, values kept in order.
func TestHeader(t *testing.T) {
	h := Header{}
	h.Set("Content-Type", "text/plain")
	h.Add("X-Tag", "a")
	h.Add("X-Tag", "b")
	h["lower"] = []string{"kept"}
	if h.Get("Content-Type") != "text/plain" || h.Get("content-type") != "" {
		t.Errorf("Get is not case-sensitive: %v", h)
	}
	if v := h.Values("X-Tag"); len(v) != 2 || v[0] != "a" || v[1] != "b" {
		t.Errorf("Values: %v", v)
	}
	if h.Get("lower") != "kept" {
		t.Errorf("a lower-case name was changed: %v", h)
	}
	h.Set("X-Tag", "c")
	if v := h.Values("X-Tag"); len(v) != 1 || v[0] != "c" {
		t.Errorf("Set did not replace: %v", v)
	}
	h.Del("X-Tag")
	if _, ok := h["X-Tag"]; ok {
		t.Errorf("Del left the name: %v", h)
	}
	var none Header
	if none.Get("X") != "" || none.Values("X") != nil {
		t.Error("a nil Header is not empty")
	}
	if m := NewMsg("s"); m.Header == nil || m.Subject != "s" {
		t.Errorf("NewMsg: %+v", m)
	}
}

func TestStatusString(t *testing.T) {
	want := map[Status]string{
		DISCONNECTED: "DISCONNECTED", CONNECTED: "CONNECTED", CLOSED: "CLOSED", RECONNECTING: "RECONNECTING",
		CONNECTING: "CONNECTING", DRAINING_SUBS: "DRAINING_SUBS", DRAINING_PUBS: "DRAINING_PUBS", Status(99): "unknown status",
	}
	for s, text := range want {
		if s.String() != text {
			t.Errorf("%d: %q, want %q", int(s), s.String(), text)
		}
	}
}

// The legacy JetStream header constants carry nats.go's names and values.
func TestJetStreamHeaderNames(t *testing.T) {
	for got, want := range map[string]string{
		MsgIdHdr:               "Nats-Msg-Id",
		ExpectedStreamHdr:      "Nats-Expected-Stream",
		ExpectedLastSeqHdr:     "Nats-Expected-Last-Sequence",
		ExpectedLastSubjSeqHdr: "Nats-Expected-Last-Subject-Sequence",
		ExpectedLastMsgIdHdr:   "Nats-Expected-Last-Msg-Id",
		MsgRollup:              "Nats-Rollup",
		MsgTTLHdr:              "Nats-TTL",
		JSStream:               "Nats-Stream",
		JSSequence:             "Nats-Sequence",
		JSTimeStamp:            "Nats-Time-Stamp",
		JSSubject:              "Nats-Subject",
		JSLastSequence:         "Nats-Last-Sequence",
		MsgSize:                "Nats-Msg-Size",
		MsgRollupSubject:       "sub",
		MsgRollupAll:           "all",
	} {
		if got != want {
			t.Errorf("%q, want %q", got, want)
		}
	}
}

// The legacy JetStream API's enums print as nats.go prints them and
// travel as the server's names, both ways.
func TestLegacyJetStreamEnums(t *testing.T) {
	for _, c := range []struct{ got, want string }{
		{FileStorage.String(), "File"}, {MemoryStorage.String(), "Memory"}, {StorageType(9).String(), "Unknown Storage Type"},
		{WorkQueuePolicy.String(), "WorkQueue"}, {DiscardNew.String(), "DiscardNew"},
		{AckExplicitPolicy.String(), "AckExplicit"}, {AckPolicy(7).String(), "Unknown AckPolicy"},
		{fmt.Sprint(DeliverLastPolicy), "1"},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
	cfg := ConsumerConfig{DeliverPolicy: DeliverNewPolicy, AckPolicy: AckAllPolicy, Heartbeat: 5_000_000_000, DeliverSubject: "in"}
	b, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"deliver_policy":"new","ack_policy":"all","replay_policy":"instant","idle_heartbeat":5000000000,"deliver_subject":"in","num_replicas":0}`
	if string(b) != want {
		t.Errorf("marshalled %s\nwant        %s", b, want)
	}
	var back ConsumerConfig
	if err := json.Unmarshal(b, &back); err != nil || !reflect.DeepEqual(back, cfg) {
		t.Errorf("round trip %+v (%v)", back, err)
	}
	if err := json.Unmarshal([]byte(`{"ack_policy":"sometimes"}`), &back); err == nil {
		t.Error("an unknown ack policy is accepted")
	}
}

// Closing the nil *Conn a failed Connect returned does nothing, as in
// nats.go (a deferred Close after an error is a common shape).
func TestCloseOfNilConnIsANoOp(t *testing.T) {
	nc, err := Connect("nats://127.0.0.1:1", Timeout(200*time.Millisecond), MaxReconnects(0))
	if err == nil || nc != nil {
		t.Fatalf("Connect to a closed port: %v, %v", nc, err)
	}
	nc.Close()
}
