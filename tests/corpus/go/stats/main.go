// The connection's counters after a known exchange.
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

	sub, _ := nc.SubscribeSync("metrics")
	for i := 0; i < 4; i++ {
		nc.Publish("metrics", []byte("12345"))
	}
	for i := 0; i < 4; i++ {
		if _, err := sub.NextMsg(time.Second); err != nil {
			log.Fatal(err)
		}
	}
	st := nc.Stats()
	fmt.Printf("out: %d msgs %d bytes\n", st.OutMsgs, st.OutBytes)
	fmt.Printf("in: %d msgs %d bytes\n", st.InMsgs, st.InBytes)
	fmt.Println("reconnects:", st.Reconnects)
}
