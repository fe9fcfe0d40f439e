// Creating, reading, updating and deleting a stream.
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
	defer nc.Drain()

	js, err := jetstream.New(nc)
	if err != nil {
		log.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	s, err := js.CreateStream(ctx, jetstream.StreamConfig{
		Name:     "ORDERS",
		Subjects: []string{"orders.>"},
		MaxAge:   time.Hour,
		Storage:  jetstream.MemoryStorage,
	})
	if err != nil {
		log.Fatal(err)
	}
	info := s.CachedInfo()
	fmt.Println("name:", info.Config.Name, "subjects:", info.Config.Subjects)
	fmt.Println("retention:", info.Config.Retention, "storage:", info.Config.Storage, "discard:", info.Config.Discard)
	fmt.Println("max age:", info.Config.MaxAge, "replicas:", info.Config.Replicas, "compression:", info.Config.Compression)
	fmt.Println("max msgs:", info.Config.MaxMsgs, "max bytes:", info.Config.MaxBytes)

	for i := 0; i < 3; i++ {
		if _, err := js.Publish(ctx, "orders.new", []byte("order")); err != nil {
			log.Fatal(err)
		}
	}
	info, err = s.Info(ctx)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("messages:", info.State.Msgs, "first:", info.State.FirstSeq, "last:", info.State.LastSeq, "consumers:", info.State.Consumers)

	s, err = js.UpdateStream(ctx, jetstream.StreamConfig{
		Name:     "ORDERS",
		Subjects: []string{"orders.>", "returns.>"},
		Storage:  jetstream.MemoryStorage,
		MaxMsgs:  100,
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("updated subjects:", s.CachedInfo().Config.Subjects, "max msgs:", s.CachedInfo().Config.MaxMsgs)

	_, err = js.CreateStream(ctx, jetstream.StreamConfig{Name: "ORDERS", Subjects: []string{"other"}})
	fmt.Println("create again:", err, errors.Is(err, jetstream.ErrStreamNameAlreadyInUse))

	s, err = js.CreateOrUpdateStream(ctx, jetstream.StreamConfig{Name: "EVENTS", Subjects: []string{"events.>"}})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("created or updated:", s.CachedInfo().Config.Name, s.CachedInfo().Config.Storage)

	if err := js.DeleteStream(ctx, "ORDERS"); err != nil {
		log.Fatal(err)
	}
	_, err = js.Stream(ctx, "ORDERS")
	fmt.Println("after delete:", err, errors.Is(err, jetstream.ErrStreamNotFound))
	err = js.DeleteStream(ctx, "ORDERS")
	fmt.Println("delete again:", err)
}
