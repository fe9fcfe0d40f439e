// A work-queue stream: a message acknowledged by its consumer leaves the
// stream; a second consumer on the same subjects is refused.
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

	s, err := js.CreateStream(ctx, jetstream.StreamConfig{
		Name:      "JOBS",
		Subjects:  []string{"jobs.>"},
		Retention: jetstream.WorkQueuePolicy,
	})
	if err != nil {
		log.Fatal(err)
	}
	for i := 1; i <= 3; i++ {
		js.Publish(ctx, "jobs.resize", []byte(fmt.Sprintf("img-%d", i)))
	}
	cons, err := s.CreateOrUpdateConsumer(ctx, jetstream.ConsumerConfig{Durable: "workers"})
	if err != nil {
		log.Fatal(err)
	}
	batch, _ := cons.Fetch(2)
	for msg := range batch.Messages() {
		fmt.Println("working on", string(msg.Data()))
		if err := msg.DoubleAck(ctx); err != nil {
			log.Fatal(err)
		}
	}
	info, _ := s.Info(ctx)
	fmt.Println("left:", info.State.Msgs, "first:", info.State.FirstSeq)

	_, err = s.CreateOrUpdateConsumer(ctx, jetstream.ConsumerConfig{Durable: "others"})
	fmt.Println("second consumer:", err)
}
