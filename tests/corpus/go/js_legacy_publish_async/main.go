// The legacy JetStream API's asynchronous publishes: futures, a bounded
// window, PublishAsyncComplete, and a failed publish reaching the error
// handler.
package main

import (
	"fmt"
	"log"
	"os"
	"sync"
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
	var mu sync.Mutex
	var failures []string
	js, err := nc.JetStream(nats.PublishAsyncMaxPending(16), nats.PublishAsyncErrHandler(func(_ nats.JetStream, m *nats.Msg, err error) {
		mu.Lock()
		failures = append(failures, fmt.Sprintf("%s: %v", m.Data, err))
		mu.Unlock()
	}))
	if err != nil {
		log.Fatal(err)
	}
	if _, err := js.AddStream(&nats.StreamConfig{Name: "EVENTS", Subjects: []string{"events.>"}}); err != nil {
		log.Fatal(err)
	}
	if _, err := nc.JetStream(nats.PublishAsyncMaxPending(0)); err != nil {
		fmt.Println("max pending 0:", err)
	}

	var futures []nats.PubAckFuture
	for i := 1; i <= 50; i++ {
		f, err := js.PublishAsync("events.click", []byte(fmt.Sprintf("click %d", i)), nats.MsgId(fmt.Sprint("id-", i%40)))
		if err != nil {
			log.Fatal(err)
		}
		futures = append(futures, f)
	}
	select {
	case <-js.PublishAsyncComplete():
	case <-time.After(10 * time.Second):
		log.Fatal("publishes did not complete")
	}
	fmt.Println("pending:", js.PublishAsyncPending())
	duplicates := 0
	for _, f := range futures {
		select {
		case ack := <-f.Ok():
			if ack.Duplicate {
				duplicates++
			} else if ack.Sequence%10 == 0 {
				fmt.Println(string(f.Msg().Data), "->", ack.Stream, ack.Sequence)
			}
		case err := <-f.Err():
			fmt.Println(string(f.Msg().Data), "failed:", err)
		}
	}
	fmt.Println("duplicates:", duplicates)

	m := nats.NewMsg("events.view")
	m.Header.Set("Page", "/home")
	f, err := js.PublishMsgAsync(m, nats.ExpectLastSequence(40))
	if err != nil {
		log.Fatal(err)
	}
	select {
	case ack := <-f.Ok():
		fmt.Println("expected sequence kept:", ack.Sequence)
	case err := <-f.Err():
		fmt.Println("expected sequence:", err)
	}
	bad, err := js.PublishAsync("events.view", []byte("stale"), nats.ExpectLastSequence(3))
	if err != nil {
		log.Fatal(err)
	}
	select {
	case ack := <-bad.Ok():
		fmt.Println("unexpected ack", ack.Sequence)
	case err := <-bad.Err():
		fmt.Println("stale:", err)
	}
	nobody, err := js.PublishAsync("nowhere", []byte("lost"))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("no stream:", <-nobody.Err())
	<-js.PublishAsyncComplete()
	for start := time.Now(); time.Since(start) < 5*time.Second; time.Sleep(10 * time.Millisecond) {
		mu.Lock()
		n := len(failures)
		mu.Unlock()
		if n == 2 {
			break
		}
	}
	mu.Lock()
	fmt.Println("--- unordered")
	for _, f := range failures {
		fmt.Println("handler:", f)
	}
	fmt.Println("--- end unordered")
	mu.Unlock()
	_, err = js.PublishAsync("events.view", nil, nats.AckWait(time.Second))
	fmt.Println("with AckWait:", err)
	info, err := js.StreamInfo("EVENTS")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("stored:", info.State.Msgs)
}
