// Requests bounded by a context: answered, then a deadline that passes.
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

	nc.Subscribe("time.now", func(m *nats.Msg) { m.Respond([]byte("noon")) })
	nc.Subscribe("time.never", func(m *nats.Msg) {})

	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	reply, err := nc.RequestWithContext(ctx, "time.now", nil)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("reply:", string(reply.Data))

	short, cancel2 := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel2()
	_, err = nc.RequestWithContext(short, "time.never", nil)
	fmt.Println("deadline:", err, errors.Is(err, context.DeadlineExceeded))

	fmt.Println("flush:", nc.FlushWithContext(ctx))
}
