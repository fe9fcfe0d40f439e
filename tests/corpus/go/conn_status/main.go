// A connection's state before and after Close, and what calls return on a
// closed connection.
package main

import (
	"errors"
	"fmt"
	"log"
	"os"
	"strings"

	"github.com/nats-io/nats.go"
)

func main() {
	url := os.Getenv("NATS_URL")
	if url == "" {
		url = nats.DefaultURL
	}
	closed := make(chan struct{})
	nc, err := nats.Connect(url,
		nats.Name("status-demo"),
		nats.ClosedHandler(func(*nats.Conn) { close(closed) }))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("status:", nc.Status(), nc.IsConnected(), nc.IsClosed())
	fmt.Println("server id set:", nc.ConnectedServerId() != "")
	fmt.Println("url is ours:", nc.ConnectedUrl() != "")
	fmt.Println("max payload:", nc.MaxPayload())
	fmt.Println("inbox:", strings.HasPrefix(nc.NewRespInbox(), "_INBOX."), strings.HasPrefix(nats.NewInbox(), "_INBOX."))
	fmt.Println("last error:", nc.LastError())
	fmt.Println("auth required:", nc.AuthRequired(), "tls required:", nc.TLSRequired())
	nc.Close()
	<-closed
	fmt.Println("status:", nc.Status(), nc.IsConnected(), nc.IsClosed())
	fmt.Println("url after close:", nc.ConnectedUrl() == "")
	err = nc.Publish("x", nil)
	fmt.Println("publish:", err, errors.Is(err, nats.ErrConnectionClosed))
	_, err = nc.Subscribe("x", func(*nats.Msg) {})
	fmt.Println("subscribe:", err)
	fmt.Println("flush:", nc.Flush())
	fmt.Println("drain:", nc.Drain())
	fmt.Println(nats.CONNECTED, nats.CLOSED, nats.RECONNECTING, nats.DISCONNECTED, nats.DRAINING_SUBS)
}
