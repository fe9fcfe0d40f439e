// A durable pull consumer read in batches with Fetch.
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

	s, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "TASKS", Subjects: []string{"tasks.>"}})
	if err != nil {
		log.Fatal(err)
	}
	for i := 1; i <= 7; i++ {
		js.Publish(ctx, fmt.Sprintf("tasks.%d", i), []byte(fmt.Sprintf("task %d", i)))
	}
	cons, err := s.CreateOrUpdateConsumer(ctx, jetstream.ConsumerConfig{
		Durable:   "worker",
		AckPolicy: jetstream.AckExplicitPolicy,
	})
	if err != nil {
		log.Fatal(err)
	}
	for round := 1; round <= 3; round++ {
		batch, err := cons.Fetch(3, jetstream.FetchMaxWait(time.Second))
		if err != nil {
			log.Fatal(err)
		}
		n := 0
		for msg := range batch.Messages() {
			fmt.Printf("round %d: %s %s\n", round, msg.Subject(), msg.Data())
			if err := msg.DoubleAck(ctx); err != nil {
				log.Fatal(err)
			}
			n++
		}
		fmt.Printf("round %d: %d messages, err %v\n", round, n, batch.Error())
	}
	batch, _ := cons.FetchNoWait(10)
	n := 0
	for range batch.Messages() {
		n++
	}
	fmt.Println("no wait:", n, batch.Error())

	info, _ := cons.Info(ctx)
	fmt.Println("durable:", info.Config.Durable, "ack policy:", info.Config.AckPolicy, "deliver:", info.Config.DeliverPolicy)
	fmt.Println("delivered:", info.Delivered.Stream, "ack floor:", info.AckFloor.Stream, "pending:", info.NumPending)
}
