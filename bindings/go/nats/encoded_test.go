package nats_test

// The EncodedConn of nats.go over the facade, against a real nats-server.

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/libnatsio/natsio/bindings/go/nats"
)

type encodedPerson struct {
	Name string
	Age  int
}

func encodedConn(t *testing.T, encType string) (*nats.EncodedConn, chan subAsyncErr) {
	t.Helper()
	nc, errs := subConnect(t)
	ec, err := nats.NewEncodedConn(nc, encType)
	if err != nil {
		t.Fatal(err)
	}
	return ec, errs
}

// JSON values go out and come back, by every handler shape, and as the
// reply of a request.
func TestEncodedConnJSON(t *testing.T) {
	ec, errs := encodedConn(t, nats.JSON_ENCODER)
	got := make(chan string, 10)
	ec.Subscribe("people", func(p *encodedPerson) { got <- "ptr " + p.Name })
	ec.Subscribe("people", func(subject string, p encodedPerson) { got <- subject + " " + p.Name })
	ec.Subscribe("people", func(subject, reply string, p encodedPerson) { got <- "reply=" + reply })
	ec.Subscribe("people", func(m *nats.Msg) { got <- "raw " + string(m.Data) })
	if err := ec.PublishRequest("people", "answers", encodedPerson{Name: "Ann", Age: 3}); err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{"ptr Ann": true, "people Ann": true, "reply=answers": true,
		`raw {"Name":"Ann","Age":3}`: true}
	for range 4 {
		if s := connWaitFor(t, got, "a decoded value"); !want[s] {
			t.Errorf("unexpected %q", s)
		}
	}

	ec.Subscribe("ask", func(subject, reply string, question string) {
		ec.Publish(reply, encodedPerson{Name: "re:" + question})
	})
	var answer encodedPerson
	if err := ec.Request("ask", "who", &answer, 5*time.Second); err != nil || answer.Name != "re:who" {
		t.Errorf("Request: %+v, %v", answer, err)
	}
	var raw nats.Msg
	if err := ec.RequestWithContext(context.Background(), "ask", "raw", &raw); err != nil ||
		string(raw.Data) != `{"Name":"re:raw","Age":0}` {
		t.Errorf("RequestWithContext into a Msg: %q, %v", raw.Data, err)
	}
	if err := ec.RequestWithContext(nil, "ask", "x", &answer); err != nats.ErrInvalidContext { //nolint:staticcheck // nats.go's nil check
		t.Errorf("nil context: %v", err)
	}

	// What does not decode is reported, not delivered.
	if err := ec.Conn.Publish("people", []byte("not json")); err != nil {
		t.Fatal(err)
	}
	e := connWaitFor(t, errs, "the decoding error")
	if !strings.HasPrefix(e.err.Error(), "nats: Got an error trying to unmarshal: ") || e.sub == nil {
		t.Errorf("decoding error %v for %v", e.err, e.sub)
	}
	// Then a value that decodes: every handler gets it, and nothing else.
	ec.Publish("people", encodedPerson{Name: "Zed"})
	want = map[string]bool{"raw not json": true, "ptr Zed": true, "people Zed": true, "reply=": true,
		`raw {"Name":"Zed","Age":0}`: true}
	for range 5 {
		s := connWaitFor(t, got, "a handler's call")
		if !want[s] {
			t.Errorf("unexpected %q", s)
		}
		delete(want, s)
	}
}

// The default encoder sends values as text and reads them back as the
// handler's type.
func TestEncodedConnDefault(t *testing.T) {
	ec, _ := encodedConn(t, nats.DEFAULT_ENCODER)
	texts := make(chan string, 10)
	ec.Subscribe("text", func(m *nats.Msg) { texts <- string(m.Data) })
	numbers := make(chan float64, 10)
	ec.Subscribe("number", func(f float64) { numbers <- f })
	for _, v := range []any{"plain", []byte("bytes"), true, nil, 42, encodedPerson{Name: "Bo", Age: 7}} {
		ec.Publish("text", v)
	}
	for _, want := range []string{"plain", "bytes", "true", "", "42", "{Name:Bo Age:7}"} {
		if s := connWaitFor(t, texts, "a text"); s != want {
			t.Errorf("got %q, want %q", s, want)
		}
	}
	ec.Publish("number", 2.5)
	if f := connWaitFor(t, numbers, "a number"); f != 2.5 {
		t.Errorf("got %v", f)
	}
	var n int = 7
	if err := ec.Enc.Decode("s", []byte("x"), &n); err == nil || n != 7 {
		t.Errorf("decoding x into an int: %v, left %d", err, n)
	}
	var p encodedPerson
	if err := ec.Enc.Decode("s", []byte("x"), &p); err == nil ||
		err.Error() != "nats: Default Encoder can't decode to type nats_test.encodedPerson" {
		t.Errorf("decoding into a struct: %v", err)
	}
}

// Bound channels: what is sent on one is published, gob-encoded, and
// received on the other; a closed receiving channel ends its subscription.
func TestEncodedConnBoundChannels(t *testing.T) {
	ec, _ := encodedConn(t, nats.GOB_ENCODER)
	recv := make(chan *encodedPerson, 10)
	sub, err := ec.BindRecvChan("bound", recv)
	if err != nil {
		t.Fatal(err)
	}
	send := make(chan encodedPerson)
	if err := ec.BindSendChan("bound", send); err != nil {
		t.Fatal(err)
	}
	send <- encodedPerson{Name: "Cy", Age: 9}
	if p := connWaitFor(t, recv, "a bound value"); p.Name != "Cy" || p.Age != 9 {
		t.Errorf("got %+v", p)
	}
	close(send)

	if err := ec.BindSendChan("bound", "not a chan"); err != nats.ErrChanArg {
		t.Errorf("BindSendChan of a string: %v", err)
	}
	if _, err := ec.BindRecvQueueChan("bound", "q", 3); err != nats.ErrChanArg {
		t.Errorf("BindRecvQueueChan of an int: %v", err)
	}

	closed := make(chan string, 1)
	sub.SetClosedHandler(func(subject string) { closed <- subject })
	close(recv)
	ec.Publish("bound", encodedPerson{Name: "late"})
	connWaitFor(t, closed, "the end of the subscription of a closed channel")
}

func TestNewEncodedConn(t *testing.T) {
	if _, err := nats.NewEncodedConn(nil, nats.JSON_ENCODER); err == nil || err.Error() != "nats: Nil Connection" {
		t.Errorf("nil connection: %v", err)
	}
	nc, _ := subConnect(t)
	if _, err := nats.NewEncodedConn(nc, "yaml"); err == nil || err.Error() != "no encoder registered for 'yaml'" {
		t.Errorf("unknown encoder: %v", err)
	}
	upper := upperEncoder{}
	nats.RegisterEncoder("upper", upper)
	if nats.EncoderForType("upper") != upper {
		t.Error("the registered encoder is not found")
	}
	ec, err := nats.NewEncodedConn(nc, "upper")
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan string, 1)
	ec.Subscribe("up", func(s string) { got <- s })
	ec.Publish("up", "shout")
	if s := connWaitFor(t, got, "a custom-encoded value"); s != "SHOUT" {
		t.Errorf("got %q", s)
	}
	if _, err := ec.Subscribe("up", func() {}); err == nil {
		t.Error("a handler without argument was taken")
	}
	func() {
		defer func() {
			if recover() == nil {
				t.Error("a handler that is not a func did not panic")
			}
		}()
		ec.Subscribe("up", "not a func")
	}()
	ec.Close()
	if _, err := nats.NewEncodedConn(nc, nats.JSON_ENCODER); !errors.Is(err, nats.ErrConnectionClosed) {
		t.Errorf("closed connection: %v", err)
	}
}

type upperEncoder struct{}

func (upperEncoder) Encode(_ string, v any) ([]byte, error) {
	return []byte(strings.ToUpper(v.(string))), nil
}
func (upperEncoder) Decode(_ string, data []byte, vPtr any) error {
	*vPtr.(*string) = string(data)
	return nil
}
