// The configuration enums as a consumer's and a stream's info print them.
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
		Name:      "WQ",
		Subjects:  []string{"wq.>"},
		Retention: jetstream.InterestPolicy,
		Discard:   jetstream.DiscardNew,
		Storage:   jetstream.MemoryStorage,
		MaxMsgs:   10,
	})
	if err != nil {
		log.Fatal(err)
	}
	cfg := s.CachedInfo().Config
	fmt.Println(cfg.Retention, cfg.Discard, cfg.Storage, cfg.Compression)
	fmt.Printf("%d %d %d\n", cfg.Retention, cfg.Discard, cfg.Storage)

	c, err := s.CreateOrUpdateConsumer(ctx, jetstream.ConsumerConfig{
		Durable:       "w",
		AckPolicy:     jetstream.AckAllPolicy,
		DeliverPolicy: jetstream.DeliverNewPolicy,
		ReplayPolicy:  jetstream.ReplayInstantPolicy,
		AckWait:       10 * time.Second,
		MaxDeliver:    3,
	})
	if err != nil {
		log.Fatal(err)
	}
	cc := c.CachedInfo().Config
	fmt.Println(cc.AckPolicy, cc.DeliverPolicy, cc.ReplayPolicy, cc.AckWait, cc.MaxDeliver)
	fmt.Println(jetstream.AckNonePolicy, jetstream.AckExplicitPolicy, jetstream.DeliverAllPolicy,
		jetstream.DeliverLastPerSubjectPolicy, jetstream.ReplayOriginalPolicy, jetstream.LimitsPolicy,
		jetstream.InterestPolicy, jetstream.DiscardOld, jetstream.FileStorage, jetstream.S2Compression)
}
