// Reading a consumer with the Messages iterator.
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

	s, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "LOGS", Subjects: []string{"logs.*"}})
	if err != nil {
		log.Fatal(err)
	}
	for _, level := range []string{"info", "warn", "error", "info"} {
		js.Publish(ctx, "logs."+level, []byte(level+" line"))
	}
	cons, err := js.CreateConsumer(ctx, "LOGS", jetstream.ConsumerConfig{
		Name:          "reader",
		FilterSubject: "logs.info",
	})
	if err != nil {
		log.Fatal(err)
	}
	_ = s
	it, err := cons.Messages()
	if err != nil {
		log.Fatal(err)
	}
	for i := 0; i < 2; i++ {
		msg, err := it.Next()
		if err != nil {
			log.Fatal(err)
		}
		md, _ := msg.Metadata()
		fmt.Println(msg.Subject(), string(msg.Data()), "stream seq", md.Sequence.Stream, "consumer seq", md.Sequence.Consumer, "pending", md.NumPending)
		msg.Ack()
	}
	it.Stop()
	_, err = it.Next()
	fmt.Println("after stop:", err, errors.Is(err, jetstream.ErrMsgIteratorClosed))
}
