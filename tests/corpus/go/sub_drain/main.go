// Draining one subscription: it handles what it has, then ends; the
// connection stays open.
package main

import (
	"fmt"
	"log"
	"os"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
)

func main() {
	url := os.Getenv("NATS_URL")
	if url == "" {
		url = nats.DefaultURL
	}
	nc, err := nats.Connect(url)
	if err != nil {
		log.Fatal(err)
	}
	defer nc.Close()

	var handled atomic.Int32
	sub, _ := nc.Subscribe("events", func(m *nats.Msg) { handled.Add(1) })
	for i := 0; i < 50; i++ {
		nc.Publish("events", []byte("e"))
	}
	nc.Flush()
	if err := sub.Drain(); err != nil {
		log.Fatal(err)
	}
	for sub.IsValid() {
		time.Sleep(10 * time.Millisecond)
	}
	fmt.Println("handled:", handled.Load())
	fmt.Println("connected:", nc.IsConnected())
	reply, err := nc.Request("events", nil, 200*time.Millisecond)
	fmt.Println("request after drain:", reply == nil, err)
}
