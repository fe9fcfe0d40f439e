// Go JetStream fragments (README.md, bindings/go/README.md). They use nc (a
// connected *natsio.Conn), js (its JetStream context, for fragments that do
// not make their own), ctx (bounding the whole program), data (a payload)
// and process (an order's handler, failing the first order it is given
// once, so a fragment that naks it sees it redelivered). When the runner
// made report.pdf (files=report.pdf) the fragment must have copied it
// through the Object Store into copy.pdf, which must then equal it.
package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"os"
	"sync/atomic"
	"time"

	natsio "github.com/libnatsio/natsio/bindings/go"
)

// Every import is used even when a fragment does not need it.
var _, _, _, _, _, _ = errors.New, fmt.Sprint, io.Copy, log.Print, os.Open, time.Now

//@TOP@

var data = []byte(`{"dish": "pizza"}`)

var failedOnce atomic.Bool

func process(order []byte) error {
	if failedOnce.CompareAndSwap(false, true) {
		fmt.Printf("process: %s failed (once)\n", order)
		return errors.New("kitchen busy")
	}
	fmt.Printf("process: %s done\n", order)
	return nil
}

func main() {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	nc, err := natsio.Connect("nats://127.0.0.1:4222")
	if err != nil {
		log.Fatal(err)
	}
	defer nc.Close()
	js, err := nc.JetStream()
	if err != nil {
		log.Fatal(err)
	}
	_, _ = ctx, js
	func() {
		//@BODY@
	}()
	want, err := os.ReadFile("report.pdf")
	if errors.Is(err, os.ErrNotExist) {
		return
	} else if err != nil {
		log.Fatal(err)
	}
	got, err := os.ReadFile("copy.pdf")
	if err != nil {
		log.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		log.Fatalf("copy.pdf (%d bytes) differs from report.pdf (%d bytes)", len(got), len(want))
	}
}
