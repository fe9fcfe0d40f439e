// One message at a time with Next, its metadata, and Next timing out.
package main

import (
	"context"
	"errors"
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

	js.CreateStream(ctx, jetstream.StreamConfig{Name: "Q", Subjects: []string{"q"}})
	js.Publish(ctx, "q", []byte("first"))
	js.Publish(ctx, "q", []byte("second"))
	cons, err := js.CreateOrUpdateConsumer(ctx, "Q", jetstream.ConsumerConfig{Durable: "one"})
	if err != nil {
		log.Fatal(err)
	}
	msg, err := cons.Next()
	if err != nil {
		log.Fatal(err)
	}
	md, _ := msg.Metadata()
	fmt.Println(string(msg.Data()), md.Stream, md.Consumer, md.NumDelivered, md.NumPending, md.Sequence.Stream)
	fmt.Println("double ack:", msg.DoubleAck(ctx))
	fmt.Println("ack again:", msg.Ack())

	msg, _ = cons.Next()
	msg.Nak()
	msg, _ = cons.Next(jetstream.FetchMaxWait(5 * time.Second))
	md, _ = msg.Metadata()
	fmt.Println("redelivered:", string(msg.Data()), md.NumDelivered)
	msg.Term()

	_, err = cons.Next(jetstream.FetchMaxWait(300 * time.Millisecond))
	fmt.Println("empty:", err, errors.Is(err, nats.ErrTimeout))

	c2, err := js.Consumer(ctx, "Q", "one")
	fmt.Println("bound:", c2.CachedInfo().Name, err)
	_, err = js.Consumer(ctx, "Q", "missing")
	fmt.Println("missing:", err, errors.Is(err, jetstream.ErrConsumerNotFound))
	fmt.Println("delete:", js.DeleteConsumer(ctx, "Q", "one"))
}
