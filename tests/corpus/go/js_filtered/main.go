// Consumers that read part of a stream: several filter subjects, the last
// message per subject, from a sequence.
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

	s, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "PRICES", Subjects: []string{"price.>"}})
	if err != nil {
		log.Fatal(err)
	}
	for i, p := range []string{"eur", "usd", "gbp", "eur", "usd", "jpy", "eur"} {
		m := nats.NewMsg("price." + p)
		m.Header.Set("Tick", fmt.Sprint(i+1))
		m.Data = []byte(fmt.Sprintf("%s %d", p, 100+i))
		js.PublishMsg(ctx, m)
	}
	read := func(name string, cfg jetstream.ConsumerConfig, n int) {
		cons, err := s.CreateOrUpdateConsumer(ctx, cfg)
		if err != nil {
			log.Fatal(err)
		}
		batch, _ := cons.Fetch(n, jetstream.FetchMaxWait(time.Second))
		for msg := range batch.Messages() {
			fmt.Printf("%s: %s %s tick %s\n", name, msg.Subject(), msg.Data(), msg.Headers().Get("Tick"))
			msg.Ack()
		}
	}
	// c1 is read back at the end, after the other reads' waits: kept a
	// minute when idle (an ephemeral's default is 5 s, which a loaded
	// machine can outlast).
	read("eur+gbp", jetstream.ConsumerConfig{Name: "c1", FilterSubjects: []string{"price.eur", "price.gbp"}, InactiveThreshold: time.Minute}, 10)
	read("last per subject", jetstream.ConsumerConfig{Name: "c2", FilterSubject: "price.>", DeliverPolicy: jetstream.DeliverLastPerSubjectPolicy}, 10)
	read("from 5", jetstream.ConsumerConfig{Name: "c3", DeliverPolicy: jetstream.DeliverByStartSequencePolicy, OptStartSeq: 5}, 10)
	read("new only", jetstream.ConsumerConfig{Name: "c4", DeliverPolicy: jetstream.DeliverNewPolicy}, 10)

	c, err := s.Consumer(ctx, "c1")
	if err != nil {
		log.Fatal(err)
	}
	info := c.CachedInfo()
	fmt.Println("c1 filters:", info.Config.FilterSubjects, "deliver:", info.Config.DeliverPolicy)
}
