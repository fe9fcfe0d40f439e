// Draining a connection: the handler finishes the messages already
// received, then the connection closes and the closed handler runs.
package main

import (
	"fmt"
	"log"
	"os"
	"sync/atomic"

	"github.com/nats-io/nats.go"
)

func main() {
	url := os.Getenv("NATS_URL")
	if url == "" {
		url = nats.DefaultURL
	}
	closed := make(chan struct{})
	nc, err := nats.Connect(url, nats.ClosedHandler(func(*nats.Conn) { close(closed) }))
	if err != nil {
		log.Fatal(err)
	}
	var handled atomic.Int32
	nc.Subscribe("work", func(m *nats.Msg) { handled.Add(1) })
	for i := 0; i < 100; i++ {
		nc.Publish("work", []byte("job"))
	}
	nc.Flush()
	if err := nc.Drain(); err != nil {
		log.Fatal(err)
	}
	<-closed
	fmt.Println("handled:", handled.Load())
	fmt.Println("closed:", nc.IsClosed())
}
