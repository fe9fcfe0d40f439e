// What the client refuses: bad subjects, a payload over the limit, a bad
// timeout.
package main

import (
	"errors"
	"fmt"
	"log"
	"os"

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

	err = nc.Publish("", []byte("x"))
	fmt.Println("empty subject:", err, errors.Is(err, nats.ErrBadSubject))
	_, err = nc.SubscribeSync("")
	fmt.Println("subscribe empty:", err)
	big := make([]byte, nc.MaxPayload()+1)
	err = nc.Publish("big", big)
	fmt.Println("too big:", err, errors.Is(err, nats.ErrMaxPayload))
	fmt.Println("flush zero:", nc.FlushTimeout(0))
	fmt.Println("nil msg:", nc.PublishMsg(nil))
	fmt.Println("sentinels:", nats.ErrTimeout, "|", nats.ErrNoResponders, "|", nats.ErrConnectionClosed)
}
