// Asynchronous JetStream publishes: futures, then waiting for all of them.
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
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "METRICS", Subjects: []string{"metrics.*"}}); err != nil {
		log.Fatal(err)
	}

	var futures []jetstream.PubAckFuture
	for i := 0; i < 10; i++ {
		f, err := js.PublishAsync("metrics.cpu", []byte(fmt.Sprint(i)))
		if err != nil {
			log.Fatal(err)
		}
		futures = append(futures, f)
	}
	select {
	case <-js.PublishAsyncComplete():
	case <-time.After(5 * time.Second):
		log.Fatal("publishes did not complete")
	}
	fmt.Println("pending:", js.PublishAsyncPending())
	for _, f := range futures {
		select {
		case ack := <-f.Ok():
			fmt.Println(string(f.Msg().Data), "->", ack.Stream, ack.Sequence)
		case err := <-f.Err():
			fmt.Println(string(f.Msg().Data), "failed:", err)
		}
	}
	s, _ := js.Stream(ctx, "METRICS")
	info, _ := s.Info(ctx)
	fmt.Println("stored:", info.State.Msgs)
}
