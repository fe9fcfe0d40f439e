// The legacy JetStream API's ordered consumer: a subject's messages in
// order, with a callback and synchronously, no acks.
package main

import (
	"fmt"
	"log"
	"os"
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
	js, err := nc.JetStream()
	if err != nil {
		log.Fatal(err)
	}
	if _, err := js.AddStream(&nats.StreamConfig{Name: "READINGS", Subjects: []string{"readings.*"}}); err != nil {
		log.Fatal(err)
	}
	for i := 1; i <= 6; i++ {
		js.Publish(fmt.Sprintf("readings.%s", []string{"a", "b"}[i%2]), []byte(fmt.Sprint(i)))
	}

	done := make(chan struct{})
	n := 0
	sub, err := js.Subscribe("readings.a", func(m *nats.Msg) {
		meta, _ := m.Metadata()
		fmt.Printf("callback %s %s (seq %d, pending %d)\n", m.Subject, m.Data, meta.Sequence.Stream, meta.NumPending)
		if n++; n == 3 {
			close(done)
		}
	}, nats.OrderedConsumer())
	if err != nil {
		log.Fatal(err)
	}
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		log.Fatal("timed out")
	}
	sub.Unsubscribe()

	sync, err := js.SubscribeSync("readings.b", nats.OrderedConsumer(), nats.DeliverLast())
	if err != nil {
		log.Fatal(err)
	}
	m, err := sync.NextMsg(5 * time.Second)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("last b:", string(m.Data))
	if _, err := js.SubscribeSync("readings.b", nats.OrderedConsumer(), nats.Durable("x")); err != nil {
		fmt.Println("durable ordered refused")
	}
	sync.Unsubscribe()
}
