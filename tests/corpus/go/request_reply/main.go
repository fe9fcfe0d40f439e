// Request and reply: a responder answers, a request without responders
// fails at once, a request to a silent subscriber times out.
package main

import (
	"errors"
	"fmt"
	"log"
	"os"
	"strings"
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

	nc.Subscribe("svc.upper", func(m *nats.Msg) {
		m.Respond([]byte(strings.ToUpper(string(m.Data))))
	})
	reply, err := nc.Request("svc.upper", []byte("hello"), time.Second)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("reply:", string(reply.Data))

	_, err = nc.Request("svc.nobody", []byte("hi"), time.Second)
	fmt.Println("no responders:", err, errors.Is(err, nats.ErrNoResponders))

	nc.Subscribe("svc.silent", func(m *nats.Msg) {})
	_, err = nc.Request("svc.silent", []byte("hi"), 200*time.Millisecond)
	fmt.Println("silent:", err, errors.Is(err, nats.ErrTimeout))

	msg := nats.NewMsg("svc.upper")
	msg.Data = []byte("with msg")
	reply, err = nc.RequestMsg(msg, time.Second)
	fmt.Println("request msg:", string(reply.Data), err)
}
