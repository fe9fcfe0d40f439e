// Listing streams and consumers, and the account's usage.
package main

import (
	"context"
	"fmt"
	"log"
	"os"
	"sort"
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

	for _, name := range []string{"ALPHA", "BRAVO", "CHARLIE"} {
		if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: name, Subjects: []string{name + ".>"}}); err != nil {
			log.Fatal(err)
		}
	}
	js.Publish(ctx, "BRAVO.x", []byte("b"))
	s, _ := js.Stream(ctx, "BRAVO")
	s.CreateOrUpdateConsumer(ctx, jetstream.ConsumerConfig{Durable: "c1"})
	s.CreateOrUpdateConsumer(ctx, jetstream.ConsumerConfig{Durable: "c2"})

	names := js.StreamNames(ctx)
	var all []string
	for n := range names.Name() {
		all = append(all, n)
	}
	sort.Strings(all)
	fmt.Println("streams:", all, names.Err())

	lister := js.ListStreams(ctx, jetstream.WithStreamListSubject("BRAVO.x"))
	for info := range lister.Info() {
		fmt.Println("holds BRAVO.x:", info.Config.Name, info.State.Msgs)
	}
	fmt.Println("list err:", lister.Err())

	var consumers []string
	cl := s.ConsumerNames(ctx)
	for n := range cl.Name() {
		consumers = append(consumers, n)
	}
	sort.Strings(consumers)
	fmt.Println("consumers:", consumers, cl.Err())

	acct, err := js.AccountInfo(ctx)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("account streams:", acct.Streams, "consumers:", acct.Consumers)
}
