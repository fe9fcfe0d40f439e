// Wildcard subscriptions: "*" matches one token, ">" the rest. Which
// subscription prints first is not defined, so those lines are marked
// unordered.
package main

import (
	"fmt"
	"log"
	"os"
	"sync"

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

	var mu sync.Mutex
	var lines []string
	var wg sync.WaitGroup
	wg.Add(4)
	for _, pattern := range []string{"sensor.*", "sensor.>", "sensor.*.temp"} {
		pattern := pattern
		nc.Subscribe(pattern, func(m *nats.Msg) {
			mu.Lock()
			lines = append(lines, fmt.Sprintf("[%s] %s: %s", pattern, m.Subject, m.Data))
			mu.Unlock()
			wg.Done()
		})
	}
	nc.Publish("sensor.kitchen", []byte("on"))
	nc.Publish("sensor.kitchen.temp", []byte("21"))
	nc.Publish("other.kitchen", []byte("ignored"))
	wg.Wait()
	fmt.Println("--- unordered")
	for _, l := range lines {
		fmt.Println(l)
	}
	fmt.Println("--- end unordered")
}
