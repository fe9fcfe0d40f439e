// A channel subscription: messages arrive on a Go channel.
package main

import (
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

	ch := make(chan *nats.Msg, 64)
	sub, err := nc.ChanSubscribe("ticks", ch)
	if err != nil {
		log.Fatal(err)
	}
	defer sub.Unsubscribe()
	for i := 0; i < 5; i++ {
		nc.Publish("ticks", []byte(fmt.Sprintf("tick-%d", i)))
	}
	for i := 0; i < 5; i++ {
		m := <-ch
		fmt.Println(m.Subject, string(m.Data))
	}
}
