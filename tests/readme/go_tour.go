// The Go tours (README.md, bindings/go/README.md): fragments that connect
// themselves, with ctx bounding the whole program. They use handle (a
// queue-group member's handler, counting the jobs it gets) and svc.scatter,
// served here by three responders on a connection of the harness's own.
package main

import (
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

var jobs atomic.Int64

func handle(m *natsio.Msg) {
	jobs.Add(1)
	fmt.Printf("job: %s\n", m.Data)
}

func main() {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	svc, err := natsio.Connect("nats://127.0.0.1:4222")
	if err != nil {
		log.Fatal(err)
	}
	defer svc.Close()
	for i := range 3 {
		if _, err := svc.Subscribe("svc.scatter", func(m *natsio.Msg) { m.Respond(fmt.Appendf(nil, "part %d", i)) }); err != nil {
			log.Fatal(err)
		}
	}
	if err := svc.Flush(ctx); err != nil {
		log.Fatal(err)
	}
	_ = ctx
	func() {
		//@BODY@
	}()
	if jobs.Load() != 1 {
		log.Fatalf("handle got %d jobs, want 1", jobs.Load())
	}
}
