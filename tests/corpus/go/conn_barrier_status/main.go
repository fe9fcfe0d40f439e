// Barrier after a flush sees every message received so far handled;
// StatusChanged reports the close and the drain's end.
package main

import (
	"fmt"
	"log"
	"os"
	"sync/atomic"
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

	ran := false
	nc.Barrier(func() { ran = true })
	fmt.Println("barrier without subscriptions ran at once:", ran)

	var first, second atomic.Int64
	nc.Subscribe("work.a", func(*nats.Msg) { first.Add(1) })
	nc.Subscribe("work.b", func(*nats.Msg) { second.Add(1) })
	ch := make(chan *nats.Msg, 10)
	nc.ChanSubscribe("work.c", ch) // not counted by Barrier
	for i := 0; i < 200; i++ {
		nc.Publish("work.a", []byte("x"))
		nc.Publish("work.b", []byte("y"))
	}
	nc.Publish("work.c", []byte("z"))
	if err := nc.Flush(); err != nil {
		log.Fatal(err)
	}
	done := make(chan string)
	nc.Barrier(func() { done <- fmt.Sprintf("at the barrier: %d and %d handled", first.Load(), second.Load()) })
	select {
	case s := <-done:
		fmt.Println(s)
	case <-time.After(10 * time.Second):
		log.Fatal("the barrier never ran")
	}

	statuses := nc.StatusChanged(nats.CLOSED)
	nc.Close()
	select {
	case st := <-statuses:
		fmt.Println("status:", st)
	case <-time.After(10 * time.Second):
		log.Fatal("no CLOSED")
	}
	nc.RemoveStatusListener(statuses)
	_, open := <-statuses
	fmt.Println("listener open after removal:", open)
	fmt.Println("barrier after close:", nc.Barrier(func() {}))

	drained, err := nats.Connect(url)
	if err != nil {
		log.Fatal(err)
	}
	end := drained.StatusChanged(nats.CLOSED)
	drained.Subscribe("work.a", func(*nats.Msg) {})
	drained.Drain()
	select {
	case st := <-end:
		fmt.Println("after drain:", st, drained.IsClosed())
	case <-time.After(10 * time.Second):
		log.Fatal("the drain never ended")
	}
}
