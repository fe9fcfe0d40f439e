// A responder answers with headers (RespondMsg); the requester reads them.
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

	nc.Subscribe("calc.double", func(m *nats.Msg) {
		reply := nats.NewMsg("")
		reply.Header.Set("Status", "ok")
		reply.Data = append(m.Data, m.Data...)
		if err := m.RespondMsg(reply); err != nil {
			log.Fatal(err)
		}
	})
	req := nats.NewMsg("calc.double")
	req.Header.Set("Trace", "abc")
	req.Data = []byte("ab")
	resp, err := nc.RequestMsg(req, time.Second)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(string(resp.Data), resp.Header.Get("Status"))

	plain := &nats.Msg{Subject: "x", Data: []byte("no reply")}
	fmt.Println("respond without reply:", plain.Respond(nil))
}
