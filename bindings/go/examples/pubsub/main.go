// Command pubsub is a tour of the natsio Go binding: a callback
// subscription, a synchronous one read with range, request/reply, and a
// graceful drain.
//
//	go run ./examples/pubsub [nats://127.0.0.1:4222]
package main

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"time"

	natsio "github.com/libnatsio/natsio/bindings/go"
)

func main() {
	url := "nats://127.0.0.1:4222"
	if len(os.Args) > 1 {
		url = os.Args[1]
	}
	nc, err := natsio.Connect(url,
		natsio.Name("pubsub-example"),
		natsio.ErrorHandler(func(err error) { log.Printf("async error: %v", err) }))
	if err != nil {
		log.Fatalf("connect: %v", err)
	}
	defer nc.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	// A service answering requests from a callback subscription.
	_, err = nc.Subscribe("greet.*", func(m *natsio.Msg) {
		m.Respond([]byte("hello, " + m.Subject[len("greet."):]))
	})
	if err != nil {
		log.Fatal(err)
	}

	// A synchronous subscription that ends itself after three messages.
	events, err := nc.SubscribeSync("events.>")
	if err != nil {
		log.Fatal(err)
	}
	events.AutoUnsubscribe(3)
	for i := range 3 {
		hdr := natsio.Header{"Event-Id": {fmt.Sprint(i)}}
		nc.PublishMsg(&natsio.Msg{Subject: "events.user.created", Header: hdr, Data: []byte(`{"id": 42}`)})
	}
	for msg, err := range events.Msgs(ctx) {
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("event %s on %s: %s\n", msg.Header.Get("Event-Id"), msg.Subject, msg.Data)
	}

	// Request/reply; no responders is reported at once.
	if err := nc.Flush(ctx); err != nil {
		log.Fatal(err)
	}
	reply, err := nc.Request(ctx, "greet.gopher", nil)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("reply:", string(reply.Data))
	if _, err := nc.Request(ctx, "nobody.home", nil); errors.Is(err, natsio.ErrNoResponders) {
		fmt.Println("nobody.home: no responders")
	}

	// Hand the backlog to the handlers, then close.
	if err := nc.Drain(ctx); err != nil {
		log.Fatal(err)
	}
	fmt.Println("drained; status:", nc.Status())
}
