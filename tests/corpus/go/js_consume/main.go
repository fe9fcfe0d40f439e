// Continuous consumption with a callback (Consume).
package main

import (
	"context"
	"fmt"
	"log"
	"os"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
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
	js, _ := jetstream.New(nc)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()

	s, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "EVENTS", Subjects: []string{"events.>"}})
	if err != nil {
		log.Fatal(err)
	}
	cons, err := s.CreateOrUpdateConsumer(ctx, jetstream.ConsumerConfig{Durable: "processor"})
	if err != nil {
		log.Fatal(err)
	}
	for i := 0; i < 5; i++ {
		js.Publish(ctx, "events.page_loaded", []byte(fmt.Sprint(i)))
	}
	done := make(chan struct{})
	count := 0
	cc, err := cons.Consume(func(msg jetstream.Msg) {
		count++
		fmt.Printf("received %s: %s\n", msg.Subject(), msg.Data())
		msg.Ack()
		if count == 5 {
			close(done)
		}
	}, jetstream.PullMaxMessages(2))
	if err != nil {
		log.Fatal(err)
	}
	<-done
	cc.Stop()
	<-cc.Closed()
	fmt.Println("stopped after", count)

	info, _ := cons.Info(ctx)
	fmt.Println("pending:", info.NumPending, "delivered:", info.Delivered.Stream)
}
