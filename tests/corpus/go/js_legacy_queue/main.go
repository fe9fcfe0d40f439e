// The legacy JetStream API's queue subscriptions: two members of a queue
// group share one durable push consumer's messages.
package main

import (
	"fmt"
	"log"
	"os"
	"sort"
	"sync"
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
	js, err := nc.JetStream()
	if err != nil {
		log.Fatal(err)
	}
	if _, err := js.AddStream(&nats.StreamConfig{Name: "TASKS", Subjects: []string{"tasks.>"}}); err != nil {
		log.Fatal(err)
	}

	if _, err := js.QueueSubscribe("tasks.>", "beating", func(*nats.Msg) {}, nats.IdleHeartbeat(time.Second)); err != nil {
		fmt.Println("queue with heartbeats:", err)
	}
	if _, err := js.SubscribeSync(""); err != nil {
		fmt.Println("no subject:", err)
	}

	var mu sync.Mutex
	var wg sync.WaitGroup
	seen := map[string]int{}
	received := []string{}
	wg.Add(20)
	handler := func(worker string) nats.MsgHandler {
		return func(m *nats.Msg) {
			mu.Lock()
			seen[worker]++
			received = append(received, string(m.Data))
			mu.Unlock()
			m.Ack()
			wg.Done()
		}
	}
	a, err := js.QueueSubscribe("tasks.>", "workers", handler("a"), nats.ManualAck())
	if err != nil {
		log.Fatal(err)
	}
	b, err := js.QueueSubscribe("tasks.>", "workers", handler("b"), nats.ManualAck())
	if err != nil {
		log.Fatal(err)
	}
	for i := 0; i < 20; i++ {
		js.Publish(fmt.Sprintf("tasks.%d", i%3), []byte(fmt.Sprintf("task-%02d", i)))
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		log.Fatal("timed out")
	}
	mu.Lock()
	sort.Strings(received)
	fmt.Println("received", len(received), "first", received[0], "last", received[len(received)-1])
	fmt.Println("both workers busy:", seen["a"] > 0 && seen["b"] > 0, "total:", seen["a"]+seen["b"])
	mu.Unlock()

	info, err := js.ConsumerInfo("TASKS", "workers")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("consumer:", info.Name, "group:", info.Config.DeliverGroup, "ack policy:", info.Config.AckPolicy)
	a.Unsubscribe()
	b.Unsubscribe()
}
