// AutoUnsubscribe ends a subscription after a count; Unsubscribe ends it
// at once.
package main

import (
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

	sub, err := nc.SubscribeSync("counter")
	if err != nil {
		log.Fatal(err)
	}
	if err := sub.AutoUnsubscribe(2); err != nil {
		log.Fatal(err)
	}
	for i := 1; i <= 4; i++ {
		nc.Publish("counter", []byte(fmt.Sprint(i)))
	}
	nc.Flush()
	for i := 0; i < 2; i++ {
		m, err := sub.NextMsg(time.Second)
		fmt.Println("got", string(m.Data), err)
	}
	_, err = sub.NextMsg(200 * time.Millisecond)
	fmt.Println("after max:", err)

	other, _ := nc.SubscribeSync("other")
	other.Unsubscribe()
	_, err = other.NextMsg(100 * time.Millisecond)
	fmt.Println("after unsubscribe:", err)
	fmt.Println("unsubscribe twice:", other.Unsubscribe())

	async, _ := nc.Subscribe("async", func(*nats.Msg) {})
	_, err = async.NextMsg(time.Millisecond)
	fmt.Println("next on async:", err)
}
