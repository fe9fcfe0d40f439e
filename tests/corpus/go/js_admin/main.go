// Account-wide views: which stream holds a subject, the Key-Value and
// Object Store buckets, and pausing a consumer.
package main

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"sort"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
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
	js, _ := jetstream.New(nc)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()

	js.CreateStream(ctx, jetstream.StreamConfig{Name: "AUDIT", Subjects: []string{"audit.>"}})
	name, err := js.StreamNameBySubject(ctx, "audit.login")
	fmt.Println("holds audit.login:", name, err)
	_, err = js.StreamNameBySubject(ctx, "nothing.here")
	fmt.Println("none:", err, errors.Is(err, jetstream.ErrStreamNotFound))

	for _, b := range []string{"users", "carts"} {
		if _, err := js.CreateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: b}); err != nil {
			log.Fatal(err)
		}
	}
	js.CreateObjectStore(ctx, jetstream.ObjectStoreConfig{Bucket: "images"})

	var kvNames []string
	kl := js.KeyValueStoreNames(ctx)
	for n := range kl.Name() {
		kvNames = append(kvNames, n)
	}
	sort.Strings(kvNames)
	fmt.Println("kv buckets:", kvNames, kl.Error())
	var kvStatus []string
	sl := js.KeyValueStores(ctx)
	for st := range sl.Status() {
		kvStatus = append(kvStatus, fmt.Sprintf("%s/%d", st.Bucket(), st.History()))
	}
	sort.Strings(kvStatus)
	fmt.Println("kv status:", kvStatus, sl.Error())
	ol := js.ObjectStoreNames(ctx)
	for n := range ol.Name() {
		fmt.Println("object store:", n)
	}

	js.CreateOrUpdateConsumer(ctx, "AUDIT", jetstream.ConsumerConfig{Durable: "reader"})
	resp, err := js.PauseConsumer(ctx, "AUDIT", "reader", time.Now().Add(time.Hour))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("paused:", resp.Paused, resp.PauseRemaining > 0)
	c, _ := js.Consumer(ctx, "AUDIT", "reader")
	fmt.Println("info paused:", c.CachedInfo().Paused)
	resp, err = js.ResumeConsumer(ctx, "AUDIT", "reader")
	fmt.Println("resumed:", resp.Paused, err)
}
