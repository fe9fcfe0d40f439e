// The legacy JetStream API's pull subscriptions: PullSubscribe on a
// durable, Fetch of what is ready, a Fetch that waits, FetchBatch, and the
// errors of an empty Fetch.
package main

import (
	"context"
	"errors"
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
	js, err := nc.JetStream(nats.MaxWait(5 * time.Second))
	if err != nil {
		log.Fatal(err)
	}
	if _, err := js.AddStream(&nats.StreamConfig{Name: "ORDERS", Subjects: []string{"orders.*"}}); err != nil {
		log.Fatal(err)
	}
	for i := 1; i <= 5; i++ {
		if _, err := js.Publish("orders.new", []byte(fmt.Sprintf("order %d", i))); err != nil {
			log.Fatal(err)
		}
	}

	sub, err := js.PullSubscribe("orders.*", "processor", nats.PullMaxWaiting(16))
	if err != nil {
		log.Fatal(err)
	}
	info, err := sub.ConsumerInfo()
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("consumer:", info.Name, "filter:", info.Config.FilterSubject, "ack:", info.Config.AckPolicy,
		"max waiting:", info.Config.MaxWaiting, "max ack pending:", info.Config.MaxAckPending)

	msgs, err := sub.Fetch(3)
	if err != nil {
		log.Fatal(err)
	}
	for _, m := range msgs {
		meta, _ := m.Metadata()
		fmt.Printf("fetched %s (stream seq %d, delivered %d)\n", m.Data, meta.Sequence.Stream, meta.NumDelivered)
		m.Ack()
	}
	// Two left: a batch of ten returns them.
	msgs, err = sub.Fetch(10, nats.MaxWait(10*time.Second))
	fmt.Println("second fetch:", len(msgs), err)
	for _, m := range msgs {
		fmt.Println("fetched", string(m.Data))
		m.AckSync()
	}

	// Nothing left: the errors of an empty Fetch.
	_, err = sub.Fetch(1, nats.MaxWait(300*time.Millisecond))
	fmt.Println("empty fetch:", err, errors.Is(err, nats.ErrTimeout))
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	_, err = sub.Fetch(2, nats.Context(ctx))
	fmt.Println("empty fetch with a context:", err)
	_, err = sub.Fetch(1, nats.Context(ctx), nats.MaxWait(time.Second))
	fmt.Println("both:", err)
	_, err = sub.NextMsg(time.Second)
	fmt.Println("NextMsg:", err)

	// A fetch waiting while the messages are published.
	done := make(chan []*nats.Msg)
	go func() {
		msgs, err := sub.Fetch(2, nats.MaxWait(10*time.Second))
		if err != nil {
			log.Fatal(err)
		}
		done <- msgs
	}()
	for {
		ci, err := sub.ConsumerInfo()
		if err != nil {
			log.Fatal(err)
		}
		if ci.NumWaiting > 0 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	js.Publish("orders.late", []byte("order 6"))
	// Returned with the first message: the batch of two is not awaited.
	for _, m := range <-done {
		fmt.Println("waited for", string(m.Data), "on", m.Subject)
		m.Ack()
	}

	js.Publish("orders.new", []byte("order 7"))
	js.Publish("orders.new", []byte("order 8"))
	batch, err := sub.FetchBatch(5, nats.MaxWait(time.Second))
	if err != nil {
		log.Fatal(err)
	}
	for m := range batch.Messages() {
		fmt.Println("batch:", string(m.Data))
		m.Ack()
	}
	<-batch.Done()
	fmt.Println("batch error:", batch.Error())

	ci, err := sub.ConsumerInfo()
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("delivered:", ci.Delivered.Consumer, "ack floor:", ci.AckFloor.Stream, "pending:", ci.NumPending)
	if err := sub.Unsubscribe(); err != nil {
		log.Fatal(err)
	}
	_, err = js.ConsumerInfo("ORDERS", "processor")
	fmt.Println("after unsubscribe:", err)
	_, err = sub.Fetch(1)
	fmt.Println("fetch after unsubscribe:", errors.Is(err, nats.ErrBadSubscription))

	push, err := js.AddConsumer("ORDERS", &nats.ConsumerConfig{Durable: "pusher", DeliverSubject: "deliver.orders", AckPolicy: nats.AckExplicitPolicy})
	if err != nil {
		log.Fatal(err)
	}
	_, err = js.PullSubscribe("orders.*", push.Name)
	fmt.Println("pull on a push consumer:", err)
}
