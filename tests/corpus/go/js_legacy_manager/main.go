// The legacy JetStream API's management listings: StreamsInfo,
// StreamNames, ConsumersInfo, ConsumerNames, through the JetStreamManager
// interface, with Context and MaxWait options.
package main

import (
	"context"
	"fmt"
	"log"
	"os"
	"sort"
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
	var jsm nats.JetStreamManager
	jsm, err = nc.JetStream()
	if err != nil {
		log.Fatal(err)
	}
	for _, cfg := range []*nats.StreamConfig{
		{Name: "ALPHA", Subjects: []string{"alpha.>"}, MaxBytes: 1024},
		{Name: "BETA", Subjects: []string{"beta.>"}, Storage: nats.MemoryStorage},
	} {
		if _, err := jsm.AddStream(cfg); err != nil {
			log.Fatal(err)
		}
	}
	if _, err := jsm.UpdateStream(&nats.StreamConfig{Name: "ALPHA", Subjects: []string{"alpha.>"}, MaxBytes: 2048}); err != nil {
		log.Fatal(err)
	}
	for _, name := range []string{"second", "first"} {
		if _, err := jsm.AddConsumer("ALPHA", &nats.ConsumerConfig{Durable: name, AckPolicy: nats.AckExplicitPolicy}); err != nil {
			log.Fatal(err)
		}
	}

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	fmt.Println("--- unordered")
	for info := range jsm.StreamsInfo(nats.Context(ctx)) {
		fmt.Println("stream:", info.Config.Name, info.Config.Storage, info.Config.MaxBytes)
	}
	fmt.Println("--- end unordered")
	var names []string
	for name := range jsm.StreamNames(nats.StreamListFilter("beta.x")) {
		names = append(names, name)
	}
	fmt.Println("holding beta.x:", names)
	fmt.Println("--- unordered")
	for info := range jsm.ConsumersInfo("ALPHA", nats.MaxWait(10*time.Second)) {
		fmt.Println("consumer:", info.Name, info.Stream, info.Config.AckPolicy)
	}
	fmt.Println("--- end unordered")
	var consumers []string
	for name := range jsm.ConsumerNames("ALPHA") {
		consumers = append(consumers, name)
	}
	sort.Strings(consumers)
	fmt.Println("consumer names:", consumers)
	stream, err := jsm.StreamNameBySubject("alpha.one")
	fmt.Println("alpha.one is in", stream, err)
	_, err = jsm.StreamNameBySubject("gamma.one")
	fmt.Println("gamma.one:", err)
	info, err := jsm.UpdateConsumer("ALPHA", &nats.ConsumerConfig{Durable: "first", AckPolicy: nats.AckExplicitPolicy, Description: "updated"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("updated:", info.Config.Description)
	if err := jsm.DeleteConsumer("ALPHA", "second"); err != nil {
		log.Fatal(err)
	}
	for name := range jsm.ConsumerNames("ALPHA") {
		fmt.Println("left:", name)
	}
	for _, s := range []string{"ALPHA", "BETA"} {
		if err := jsm.DeleteStream(s); err != nil {
			log.Fatal(err)
		}
	}
	n := 0
	for range jsm.StreamsInfo() {
		n++
	}
	fmt.Println("streams left:", n)
}
