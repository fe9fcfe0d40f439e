// Missed heartbeats of push consumers: the jetstream package hands them to
// the ConsumeErrHandler, the legacy API to the connection's async error
// handler; here the consumers are deleted under their readers.
package main

import (
	"context"
	"fmt"
	"log"
	"os"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

func main() {
	url := os.Getenv("NATS_URL")
	if url == "" {
		url = nats.DefaultURL
	}
	legacyErr := make(chan error, 1)
	var once sync.Once
	nc, err := nats.Connect(url, nats.ErrorHandler(func(_ *nats.Conn, sub *nats.Subscription, err error) {
		once.Do(func() { legacyErr <- fmt.Errorf("%w (subject set: %v)", err, sub != nil && sub.Subject != "") })
	}))
	if err != nil {
		log.Fatal(err)
	}
	defer nc.Close()
	js, _ := jetstream.New(nc)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "BEATS", Subjects: []string{"beats.>"}}); err != nil {
		log.Fatal(err)
	}
	js.Publish(ctx, "beats.one", []byte("first"))

	cons, err := js.CreatePushConsumer(ctx, "BEATS", jetstream.ConsumerConfig{
		Durable: "monitor", DeliverSubject: nats.NewInbox(), IdleHeartbeat: 300 * time.Millisecond,
		AckPolicy: jetstream.AckExplicitPolicy,
	})
	if err != nil {
		log.Fatal(err)
	}
	got := make(chan string, 1)
	errs := make(chan error, 1)
	var errOnce sync.Once
	cc, err := cons.Consume(func(m jetstream.Msg) {
		m.Ack()
		got <- string(m.Data())
	}, jetstream.ConsumeErrHandler(func(_ jetstream.ConsumeContext, err error) {
		errOnce.Do(func() { errs <- err })
	}))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("received:", <-got)
	if err := js.DeleteConsumer(ctx, "BEATS", "monitor"); err != nil {
		log.Fatal(err)
	}
	select {
	case err := <-errs:
		fmt.Println("consume error:", err)
	case <-time.After(5 * time.Second):
		fmt.Println("no consume error")
	}
	cc.Stop()

	// The legacy API: a durable subscription with heartbeats.
	ljs, err := nc.JetStream()
	if err != nil {
		log.Fatal(err)
	}
	sub, err := ljs.SubscribeSync("beats.>", nats.Durable("legacy"), nats.IdleHeartbeat(300*time.Millisecond))
	if err != nil {
		log.Fatal(err)
	}
	m, err := sub.NextMsg(5 * time.Second)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("legacy received:", string(m.Data))
	m.Ack()
	if err := ljs.DeleteConsumer("BEATS", "legacy"); err != nil {
		log.Fatal(err)
	}
	select {
	case err := <-legacyErr:
		fmt.Println("async error:", err)
	case <-time.After(5 * time.Second):
		fmt.Println("no async error")
	}
}
