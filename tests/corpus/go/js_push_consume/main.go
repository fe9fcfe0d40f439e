// A push consumer (jetstream package): the server delivers to a subject,
// Consume handles each message; heartbeats and flow control on.
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

	s, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "ORDERS", Subjects: []string{"orders.*"}})
	if err != nil {
		log.Fatal(err)
	}
	for i := 1; i <= 5; i++ {
		if _, err := js.Publish(ctx, "orders.new", []byte(fmt.Sprintf("order %d", i))); err != nil {
			log.Fatal(err)
		}
	}

	// Not a push consumer: refused.
	if _, err := s.CreateOrUpdatePushConsumer(ctx, jetstream.ConsumerConfig{Durable: "pull"}); err != nil {
		fmt.Println("without a deliver subject:", err)
	}

	cons, err := s.CreateOrUpdatePushConsumer(ctx, jetstream.ConsumerConfig{
		Durable:        "shipping",
		DeliverSubject: nats.NewInbox(),
		AckPolicy:      jetstream.AckExplicitPolicy,
		IdleHeartbeat:  time.Second,
		FlowControl:    true,
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("consumer:", cons.CachedInfo().Name, "ack policy:", cons.CachedInfo().Config.AckPolicy)

	// The handler runs on another goroutine: it collects its lines, printed
	// once all came, so the output's order does not depend on scheduling.
	done := make(chan struct{})
	var got []string
	cc, err := cons.Consume(func(msg jetstream.Msg) {
		md, _ := msg.Metadata()
		got = append(got, fmt.Sprintf("got %s on %s (stream seq %d, delivered %d)", msg.Data(), msg.Subject(), md.Sequence.Stream, md.NumDelivered))
		msg.Ack()
		if len(got) == 5 {
			close(done)
		}
	})
	if err != nil {
		log.Fatal(err)
	}
	if _, err := cons.Consume(func(jetstream.Msg) {}); err != nil {
		fmt.Println("second consume:", err)
	}
	<-done
	for _, line := range got {
		fmt.Println(line)
	}
	cc.Stop()
	<-cc.Closed()

	// The same consumer, looked up by name.
	again, err := js.PushConsumer(ctx, "ORDERS", "shipping")
	if err != nil {
		log.Fatal(err)
	}
	info, _ := again.Info(ctx)
	fmt.Println("delivered:", info.Delivered.Stream, "flow control:", info.Config.FlowControl)
	if _, err := js.PushConsumer(ctx, "ORDERS", "pull"); err != nil {
		fmt.Println("pull consumer as push:", err)
	}
}
