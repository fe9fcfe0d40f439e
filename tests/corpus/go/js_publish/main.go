// JetStream publishes: acks, deduplication by message id, expectations.
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
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "EVENTS", Subjects: []string{"events.>"}}); err != nil {
		log.Fatal(err)
	}
	ack, err := js.Publish(ctx, "events.a", []byte("one"))
	fmt.Println("ack:", ack.Stream, ack.Sequence, ack.Duplicate, err)

	ack, _ = js.Publish(ctx, "events.b", []byte("two"), jetstream.WithMsgID("id-2"))
	fmt.Println("with id:", ack.Sequence, ack.Duplicate)
	ack, _ = js.Publish(ctx, "events.b", []byte("two again"), jetstream.WithMsgID("id-2"))
	fmt.Println("same id:", ack.Sequence, ack.Duplicate)

	msg := nats.NewMsg("events.c")
	msg.Header.Set("Origin", "corpus")
	msg.Data = []byte("three")
	ack, err = js.PublishMsg(ctx, msg, jetstream.WithExpectStream("EVENTS"), jetstream.WithExpectLastSequence(2))
	fmt.Println("expected:", ack.Sequence, err)

	_, err = js.Publish(ctx, "events.d", []byte("four"), jetstream.WithExpectLastSequence(1))
	fmt.Println("wrong last sequence:", err)
	var apiErr *jetstream.APIError
	if errors.As(err, &apiErr) {
		fmt.Println("api error:", apiErr.Code, apiErr.ErrorCode)
	}

	_, err = js.Publish(ctx, "nowhere", []byte("x"))
	fmt.Println("no stream:", err, errors.Is(err, jetstream.ErrNoStreamResponse))
}
