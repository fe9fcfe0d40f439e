// Draining consumptions: a push consumer's and a pull consumer's
// ConsumeContext.Drain and the legacy API's Subscription.Drain hand what
// the server already sent to the handler before they end, so nothing is
// redelivered; what is published afterwards stays at the server.
package main

import (
	"context"
	"fmt"
	"log"
	"os"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

const total = 20

// waitUntil polls cond (acks and deliveries are asynchronous) for 10 s.
func waitUntil(what string, cond func() bool) {
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			log.Fatal("timed out waiting for ", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// slowHandler counts and acks each message; the first call waits for
// release, so the rest queue up behind it.
type slowHandler struct {
	started chan struct{}
	release chan struct{}
	handled atomic.Int64
}

func newSlowHandler() *slowHandler {
	return &slowHandler{started: make(chan struct{}), release: make(chan struct{})}
}

func (h *slowHandler) handle(ack func() error) {
	if h.handled.Load() == 0 {
		close(h.started)
		<-h.release
	}
	_ = ack()
	h.handled.Add(1)
}

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
	js, _ := jetstream.New(nc)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	s, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "JOBS", Subjects: []string{"jobs.>"}})
	if err != nil {
		log.Fatal(err)
	}
	publish := func(subject string, n int) {
		for i := 0; i < n; i++ {
			if _, err := js.Publish(ctx, subject, []byte(fmt.Sprint("job ", i))); err != nil {
				log.Fatal(err)
			}
		}
	}
	publish("jobs.push", total)
	publish("jobs.pull", total)
	publish("jobs.legacy", total)

	// A push consumer: everything it sent is handled after Drain.
	push, err := s.CreateOrUpdatePushConsumer(ctx, jetstream.ConsumerConfig{
		Durable: "push", DeliverSubject: nats.NewInbox(), FilterSubject: "jobs.push",
		AckPolicy: jetstream.AckExplicitPolicy, AckWait: 30 * time.Second,
	})
	if err != nil {
		log.Fatal(err)
	}
	h := newSlowHandler()
	cc, err := push.Consume(func(m jetstream.Msg) { h.handle(m.Ack) })
	if err != nil {
		log.Fatal(err)
	}
	<-h.started
	waitUntil("push deliveries", func() bool {
		info, err := push.Info(ctx)
		return err == nil && info.NumAckPending == total
	})
	cc.Drain()
	close(h.release)
	<-cc.Closed()
	fmt.Println("push: handled", h.handled.Load(), "of", total)
	waitUntil("push acks", func() bool {
		info, err := push.Info(ctx)
		return err == nil && info.NumAckPending == 0
	})
	info, _ := push.Info(ctx)
	fmt.Println("push: redelivered", info.NumRedelivered, "ack pending", info.NumAckPending)
	publish("jobs.push", 2)
	waitUntil("push pending", func() bool {
		info, err := push.Info(ctx)
		return err == nil && info.NumPending == 2
	})
	fmt.Println("push: after the drain, handled", h.handled.Load(), "and 2 wait at the server")

	// A pull consumer: Drain stops pulling; what was pulled is handled.
	pull, err := s.CreateOrUpdateConsumer(ctx, jetstream.ConsumerConfig{
		Durable: "pull", FilterSubject: "jobs.pull", AckPolicy: jetstream.AckExplicitPolicy,
		AckWait: 30 * time.Second,
	})
	if err != nil {
		log.Fatal(err)
	}
	h = newSlowHandler()
	cc, err = pull.Consume(func(m jetstream.Msg) { h.handle(m.Ack) }, jetstream.PullMaxMessages(10))
	if err != nil {
		log.Fatal(err)
	}
	<-h.started
	cc.Drain()
	close(h.release)
	<-cc.Closed()
	waitUntil("pull acks", func() bool {
		info, err := pull.Info(ctx)
		return err == nil && info.NumAckPending == 0
	})
	pinfo, _ := pull.Info(ctx)
	fmt.Println("pull: handled everything delivered:", uint64(h.handled.Load()) == pinfo.Delivered.Consumer,
		"some left at the server:", pinfo.NumPending > 0, "redelivered:", pinfo.NumRedelivered)

	// The legacy API, bound to an existing push consumer.
	if _, err := js.CreateOrUpdateConsumer(ctx, "JOBS", jetstream.ConsumerConfig{
		Durable: "legacy", DeliverSubject: nats.NewInbox(), FilterSubject: "jobs.legacy",
		AckPolicy: jetstream.AckExplicitPolicy, AckWait: 30 * time.Second,
	}); err != nil {
		log.Fatal(err)
	}
	ljs, err := nc.JetStream()
	if err != nil {
		log.Fatal(err)
	}
	h = newSlowHandler()
	sub, err := ljs.Subscribe("jobs.legacy", func(m *nats.Msg) { h.handle(func() error { return m.Ack() }) },
		nats.Bind("JOBS", "legacy"), nats.ManualAck())
	if err != nil {
		log.Fatal(err)
	}
	<-h.started
	lcons, err := js.PushConsumer(ctx, "JOBS", "legacy")
	if err != nil {
		log.Fatal(err)
	}
	waitUntil("legacy deliveries", func() bool {
		info, err := lcons.Info(ctx)
		return err == nil && info.NumAckPending == total
	})
	if err := sub.Drain(); err != nil {
		log.Fatal(err)
	}
	close(h.release)
	waitUntil("legacy handled", func() bool { return h.handled.Load() == total })
	waitUntil("legacy acks", func() bool {
		info, err := lcons.Info(ctx)
		return err == nil && info.NumAckPending == 0
	})
	linfo, _ := lcons.Info(ctx)
	fmt.Println("legacy: handled", h.handled.Load(), "redelivered", linfo.NumRedelivered)
	publish("jobs.legacy", 2)
	waitUntil("legacy pending", func() bool {
		info, err := lcons.Info(ctx)
		return err == nil && info.NumPending == 2
	})
	fmt.Println("legacy: after the drain, handled", h.handled.Load(), "and 2 wait at the server")
}
