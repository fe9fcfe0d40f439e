package interop

// nats.go's EncodedConn and the facade's read each other's JSON, gob and
// default encodings, and answer each other's requests.

import (
	"fmt"
	"reflect"
	"testing"
	"time"

	facade "github.com/libnatsio/natsio/bindings/go/nats"
	"github.com/nats-io/nats.go"
)

type encodedOrder struct {
	ID    int
	Items []string
	Paid  bool
}

//nolint:staticcheck // EncodedConn is deprecated in nats.go, and tested here for its users
func TestEncodedConnInterop(t *testing.T) {
	url := startServer(t)
	onc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	defer onc.Close()
	fnc, err := facade.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	defer fnc.Close()

	order := encodedOrder{ID: 7, Items: []string{"tea", "cake"}, Paid: true}
	for _, c := range []struct {
		enc  string
		sent any
	}{
		{nats.JSON_ENCODER, order},
		{nats.GOB_ENCODER, order},
		{nats.DEFAULT_ENCODER, 1234},
		{nats.DEFAULT_ENCODER, "text"},
		{nats.DEFAULT_ENCODER, true},
	} {
		t.Run(fmt.Sprintf("%s %T", c.enc, c.sent), func(t *testing.T) {
			oec, err := nats.NewEncodedConn(onc, c.enc)
			if err != nil {
				t.Fatal(err)
			}
			fec, err := facade.NewEncodedConn(fnc, c.enc)
			if err != nil {
				t.Fatal(err)
			}
			typ := reflect.TypeOf(c.sent)
			subject := "enc." + c.enc + "." + typ.Name()

			// Each side decodes the other's publish into the value sent.
			toOfficial := make(chan any, 1)
			toFacade := make(chan any, 1)
			handler := func(into chan any) any {
				return reflect.MakeFunc(reflect.FuncOf([]reflect.Type{typ}, nil, false),
					func(args []reflect.Value) []reflect.Value {
						into <- args[0].Interface()
						return nil
					}).Interface()
			}
			osub, err := oec.Subscribe(subject+".official", handler(toOfficial))
			if err != nil {
				t.Fatal(err)
			}
			defer osub.Unsubscribe()
			fsub, err := fec.Subscribe(subject+".facade", handler(toFacade))
			if err != nil {
				t.Fatal(err)
			}
			defer fsub.Unsubscribe()
			oec.Flush()
			fec.Flush()
			if err := fec.Publish(subject+".official", c.sent); err != nil {
				t.Fatal(err)
			}
			if err := oec.Publish(subject+".facade", c.sent); err != nil {
				t.Fatal(err)
			}
			for name, ch := range map[string]chan any{"nats.go": toOfficial, "the facade": toFacade} {
				select {
				case got := <-ch:
					if !reflect.DeepEqual(got, c.sent) {
						t.Errorf("%s decoded %#v, want %#v", name, got, c.sent)
					}
				case <-time.After(10 * time.Second):
					t.Fatalf("%s received nothing", name)
				}
			}

			// A request of one answered by the other, both ways.
			ostop, _ := oec.Subscribe(subject+".ask.official", func(m *nats.Msg) {
				oec.Publish(m.Reply, c.sent)
			})
			defer ostop.Unsubscribe()
			fstop, _ := fec.Subscribe(subject+".ask.facade", func(m *facade.Msg) {
				fec.Publish(m.Reply, c.sent)
			})
			defer fstop.Unsubscribe()
			oec.Flush()
			fec.Flush()
			fromOfficial := reflect.New(typ)
			if err := fec.Request(subject+".ask.official", c.sent, fromOfficial.Interface(), 5*time.Second); err != nil {
				t.Fatal(err)
			}
			fromFacade := reflect.New(typ)
			if err := oec.Request(subject+".ask.facade", c.sent, fromFacade.Interface(), 5*time.Second); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(fromOfficial.Elem().Interface(), c.sent) || !reflect.DeepEqual(fromFacade.Elem().Interface(), c.sent) {
				t.Errorf("replies: from nats.go %#v, from the facade %#v", fromOfficial.Elem(), fromFacade.Elem())
			}
		})
	}
}
