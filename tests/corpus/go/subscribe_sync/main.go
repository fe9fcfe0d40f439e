// A synchronous subscription read with NextMsg, then a NextMsg that times
// out.
package main

import (
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

	sub, err := nc.SubscribeSync("updates")
	if err != nil {
		log.Fatal(err)
	}
	for i := 1; i <= 3; i++ {
		nc.Publish("updates", []byte(fmt.Sprintf("update %d", i)))
	}
	for i := 0; i < 3; i++ {
		msg, err := sub.NextMsg(time.Second)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(string(msg.Data))
	}
	_, err = sub.NextMsg(100 * time.Millisecond)
	fmt.Println("next:", err, errors.Is(err, nats.ErrTimeout))
	msgs, bytes, err := sub.Pending()
	fmt.Println("pending:", msgs, bytes, err)
	delivered, _ := sub.Delivered()
	fmt.Println("delivered:", delivered)
}
