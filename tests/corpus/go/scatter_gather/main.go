// Scatter-gather: one request on a shared inbox, every responder answers.
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

	for _, name := range []string{"east", "west", "north"} {
		name := name
		nc.Subscribe("price.quote", func(m *nats.Msg) {
			m.Respond([]byte(name + " quotes " + string(m.Data)))
		})
	}
	inbox := nc.NewRespInbox()
	replies, err := nc.SubscribeSync(inbox)
	if err != nil {
		log.Fatal(err)
	}
	nc.Flush()
	if err := nc.PublishRequest("price.quote", inbox, []byte("widget")); err != nil {
		log.Fatal(err)
	}
	fmt.Println("--- unordered")
	for i := 0; i < 3; i++ {
		m, err := replies.NextMsg(2 * time.Second)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(string(m.Data))
	}
	fmt.Println("--- end unordered")
	_, err = replies.NextMsg(200 * time.Millisecond)
	fmt.Println("no more:", err)
}
