// Publish and subscribe: an asynchronous subscription receives three
// messages in order.
package main

import (
	"fmt"
	"log"
	"os"
	"sync"

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

	var wg sync.WaitGroup
	wg.Add(3)
	sub, err := nc.Subscribe("greet.*", func(m *nats.Msg) {
		fmt.Printf("received %q on %s\n", m.Data, m.Subject)
		wg.Done()
	})
	if err != nil {
		log.Fatal(err)
	}
	nc.Publish("greet.joe", []byte("hello joe"))
	nc.Publish("greet.pam", []byte("hello pam"))
	nc.Publish("greet.bob", []byte("hello bob"))
	wg.Wait()
	fmt.Println("subject:", sub.Subject, "valid:", sub.IsValid())
	sub.Unsubscribe()
	fmt.Println("valid after unsubscribe:", sub.IsValid())
}
