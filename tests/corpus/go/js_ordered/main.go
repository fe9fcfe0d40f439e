// An ordered consumer reads a whole stream in order.
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

	s, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "HISTORY", Subjects: []string{"history.>"}})
	if err != nil {
		log.Fatal(err)
	}
	for i := 1; i <= 6; i++ {
		js.Publish(ctx, fmt.Sprintf("history.%d", i%2), []byte(fmt.Sprintf("event %d", i)))
	}
	cons, err := s.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{})
	if err != nil {
		log.Fatal(err)
	}
	done := make(chan struct{})
	n := 0
	cc, err := cons.Consume(func(msg jetstream.Msg) {
		md, _ := msg.Metadata()
		fmt.Println(md.Sequence.Stream, msg.Subject(), string(msg.Data()))
		n++
		if n == 6 {
			close(done)
		}
	})
	if err != nil {
		log.Fatal(err)
	}
	<-done
	cc.Stop()

	odd, err := js.OrderedConsumer(ctx, "HISTORY", jetstream.OrderedConsumerConfig{
		FilterSubjects: []string{"history.1"},
		DeliverPolicy:  jetstream.DeliverLastPolicy,
	})
	if err != nil {
		log.Fatal(err)
	}
	it, _ := odd.Messages()
	msg, err := it.Next()
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("last odd:", string(msg.Data()))
	it.Stop()
}
