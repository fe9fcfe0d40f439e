// Connecting with the common options, and failing to connect.
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
	nc, err := nats.Connect(url,
		nats.Name("options-demo"),
		nats.Timeout(2*time.Second),
		nats.MaxReconnects(5),
		nats.ReconnectWait(time.Second),
		nats.DrainTimeout(5*time.Second),
		nats.PingInterval(20*time.Second),
		nats.MaxPingsOutstanding(3),
		nats.NoEcho(),
		nats.DisconnectErrHandler(func(_ *nats.Conn, err error) {}),
		nats.ReconnectHandler(func(*nats.Conn) {}),
		nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) {}),
	)
	if err != nil {
		log.Fatal(err)
	}
	// NoEcho: our own publish does not come back.
	sub, _ := nc.SubscribeSync("echo")
	nc.Publish("echo", []byte("me"))
	_, err = sub.NextMsg(200 * time.Millisecond)
	fmt.Println("own message:", err)
	fmt.Println("servers:", len(nc.Servers()) > 0)
	nc.Close()

	_, err = nats.Connect("nats://127.0.0.1:1", nats.Timeout(500*time.Millisecond), nats.NoReconnect())
	fmt.Println("refused:", err, errors.Is(err, nats.ErrNoServers))
}
