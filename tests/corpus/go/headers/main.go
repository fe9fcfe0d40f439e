// Headers: several values per name, names matched exactly.
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

	sub, err := nc.SubscribeSync("orders")
	if err != nil {
		log.Fatal(err)
	}
	msg := nats.NewMsg("orders")
	msg.Header.Set("Content-Type", "application/json")
	msg.Header.Add("X-Tag", "red")
	msg.Header.Add("X-Tag", "blue")
	msg.Header["lower-case"] = []string{"kept"}
	msg.Data = []byte(`{"id":1}`)
	if err := nc.PublishMsg(msg); err != nil {
		log.Fatal(err)
	}
	got, err := sub.NextMsg(time.Second)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("content type:", got.Header.Get("Content-Type"))
	fmt.Println("tags:", got.Header.Values("X-Tag"))
	fmt.Println("lower:", got.Header.Get("lower-case"), "canonical:", got.Header.Get("Lower-Case") == "")
	got.Header.Del("X-Tag")
	fmt.Println("after del:", len(got.Header.Values("X-Tag")))
	fmt.Println("data:", string(got.Data))

	nc.Publish("orders", []byte("plain"))
	plain, _ := sub.NextMsg(time.Second)
	fmt.Println("plain header nil:", plain.Header == nil, plain.Header.Get("X") == "")
}
