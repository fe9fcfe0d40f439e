// Queue groups: each message goes to one member of the group; every member
// of a second group sees its share too, so the totals add up.
package main

import (
	"fmt"
	"log"
	"os"
	"sync"
	"sync/atomic"

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

	const n = 20
	var wg sync.WaitGroup
	wg.Add(n)
	var total atomic.Int32
	for i := 0; i < 3; i++ {
		_, err := nc.QueueSubscribe("jobs", "workers", func(m *nats.Msg) {
			total.Add(1)
			wg.Done()
		})
		if err != nil {
			log.Fatal(err)
		}
	}
	qs, err := nc.QueueSubscribeSync("jobs", "auditors")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("queue:", qs.Queue)
	nc.Flush()
	for i := 0; i < n; i++ {
		nc.Publish("jobs", []byte(fmt.Sprint(i)))
	}
	wg.Wait()
	fmt.Println("workers handled", total.Load())
	for i := 0; i < n; i++ {
		m, err := qs.NextMsg(5e9)
		if err != nil {
			log.Fatal(err)
		}
		if i == n-1 {
			fmt.Println("auditor saw the last job:", string(m.Data))
		}
	}
}
