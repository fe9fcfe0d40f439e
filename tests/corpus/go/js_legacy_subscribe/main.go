// The legacy JetStream API: AddStream, Publish, an asynchronous push
// subscription with auto-ack, and a synchronous durable one.
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

	js, err := nc.JetStream()
	if err != nil {
		log.Fatal(err)
	}
	info, err := js.AddStream(&nats.StreamConfig{
		Name:     "FOO",
		Subjects: []string{"foo"},
		Storage:  nats.MemoryStorage,
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("stream:", info.Config.Name, "storage:", info.Config.Storage, "retention:", info.Config.Retention)

	for i := 1; i <= 3; i++ {
		ack, err := js.Publish("foo", []byte(fmt.Sprintf("hello %d", i)))
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println("published seq", ack.Sequence, "to", ack.Stream)
	}

	// Asynchronous, ephemeral: acked when the handler returns.
	got := make(chan string, 10)
	sub, err := js.Subscribe("foo", func(m *nats.Msg) {
		meta, _ := m.Metadata()
		got <- fmt.Sprintf("async %s (seq %d)", m.Data, meta.Sequence.Stream)
	}, nats.DeliverAll())
	if err != nil {
		log.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		select {
		case s := <-got:
			fmt.Println(s)
		case <-time.After(5 * time.Second):
			log.Fatal("timed out")
		}
	}
	sub.Unsubscribe()

	// Synchronous and durable, acked by hand.
	sync, err := js.SubscribeSync("foo", nats.Durable("MONITOR"), nats.DeliverLast(), nats.ManualAck())
	if err != nil {
		log.Fatal(err)
	}
	m, err := sync.NextMsg(5 * time.Second)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("sync last:", string(m.Data))
	if err := m.AckSync(); err != nil {
		log.Fatal(err)
	}
	if err := m.Ack(); err != nil {
		fmt.Println("second ack:", err)
	}
	js.Publish("foo", []byte("hello 4"))
	m, err = sync.NextMsg(5 * time.Second)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("sync next:", string(m.Data))
	m.Ack()
	if _, err := sync.NextMsg(200 * time.Millisecond); err != nil {
		fmt.Println("then:", err)
	}
	ch := make(chan *nats.Msg, 8)
	csub, err := js.ChanSubscribe("foo", ch, nats.DeliverNew())
	if err != nil {
		log.Fatal(err)
	}
	js.Publish("foo", []byte("hello 5"))
	select {
	case cm := <-ch:
		fmt.Println("channel:", string(cm.Data))
		cm.Ack()
	case <-time.After(5 * time.Second):
		log.Fatal("timed out")
	}
	csub.Unsubscribe()
	ci, err := js.ConsumerInfo("FOO", "MONITOR")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("durable:", ci.Name, "push bound:", ci.PushBound, "deliver policy:", ci.Config.DeliverPolicy)
	sync.Unsubscribe()
	if _, err := js.ConsumerInfo("FOO", "MONITOR"); err != nil {
		fmt.Println("after unsubscribe:", err)
	}
	if err := js.DeleteStream("FOO"); err != nil {
		log.Fatal(err)
	}
	if _, err := js.StreamInfo("FOO"); err != nil {
		fmt.Println("deleted:", err)
	}
}
