// An ordered consumer's server-side consumer, as a program reads it back:
// its name and configuration.
package main

import (
	"context"
	"fmt"
	"log"
	"os"
	"regexp"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// The generated part of a name changes from run to run.
var generated = regexp.MustCompile(`^[0-9A-Za-z]{22}_`)

func show(label string, info *jetstream.ConsumerInfo) {
	c := info.Config
	fmt.Println(label, generated.ReplaceAllString(info.Name, "<prefix>_"), "pending", info.NumPending)
	fmt.Println("  deliver", c.DeliverPolicy, "start", c.OptStartSeq, "ack", c.AckPolicy, "max deliver", c.MaxDeliver)
	fmt.Println("  memory", c.MemoryStorage, "replicas", c.Replicas, "inactive", c.InactiveThreshold, "durable", c.Durable == "")
	fmt.Printf("  filter %q %q headers only %v\n", c.FilterSubject, c.FilterSubjects, c.HeadersOnly)
}

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

	s, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "EVENTS", Subjects: []string{"events.>"}})
	if err != nil {
		log.Fatal(err)
	}
	for i := 1; i <= 4; i++ {
		js.Publish(ctx, fmt.Sprintf("events.%d", i%2), []byte(fmt.Sprintf("event %d", i)))
	}
	all, err := s.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{})
	if err != nil {
		log.Fatal(err)
	}
	show("all", all.CachedInfo())
	batch, err := all.Fetch(4)
	if err != nil {
		log.Fatal(err)
	}
	for msg := range batch.Messages() {
		fmt.Println("  read", string(msg.Data()))
	}

	odd, err := js.OrderedConsumer(ctx, "EVENTS", jetstream.OrderedConsumerConfig{
		NamePrefix:        "odd",
		FilterSubjects:    []string{"events.1"},
		DeliverPolicy:     jetstream.DeliverLastPolicy,
		InactiveThreshold: 30 * time.Second,
		HeadersOnly:       true,
	})
	if err != nil {
		log.Fatal(err)
	}
	show("odd", odd.CachedInfo())
	info, err := odd.Info(ctx)
	if err != nil {
		log.Fatal(err)
	}
	show("odd now", info)

	from, err := s.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{
		DeliverPolicy:  jetstream.DeliverByStartSequencePolicy,
		OptStartSeq:    3,
		FilterSubjects: []string{"events.0", "events.1"},
	})
	if err != nil {
		log.Fatal(err)
	}
	show("from 3", from.CachedInfo())
}
