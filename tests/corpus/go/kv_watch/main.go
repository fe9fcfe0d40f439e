// Watching a bucket: the current values, the end-of-initial marker, then
// updates.
package main

import (
	"context"
	"fmt"
	"log"
	"os"
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

	kv, err := js.CreateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: "lights"})
	if err != nil {
		log.Fatal(err)
	}
	kv.Put(ctx, "room.kitchen", []byte("on"))
	kv.Put(ctx, "room.hall", []byte("off"))

	w, err := kv.WatchAll(ctx)
	if err != nil {
		log.Fatal(err)
	}
	defer w.Stop()
	next := func() jetstream.KeyValueEntry {
		select {
		case e := <-w.Updates():
			return e
		case <-time.After(5 * time.Second):
			log.Fatal("no update")
		}
		return nil
	}
	for {
		e := next()
		if e == nil {
			fmt.Println("-- initial values done")
			break
		}
		fmt.Printf("initial %s=%s delta %d\n", e.Key(), e.Value(), e.Delta())
	}
	kv.Put(ctx, "room.hall", []byte("on"))
	kv.Delete(ctx, "room.kitchen")
	for i := 0; i < 2; i++ {
		e := next()
		fmt.Printf("update %s=%q %s rev %d\n", e.Key(), e.Value(), e.Operation(), e.Revision())
	}

	only, err := kv.Watch(ctx, "room.hall", jetstream.UpdatesOnly())
	if err != nil {
		log.Fatal(err)
	}
	kv.Put(ctx, "room.hall", []byte("dim"))
	select {
	case e := <-only.Updates():
		if e == nil {
			fmt.Println("updates only: nil marker")
		} else {
			fmt.Printf("updates only: %s=%s\n", e.Key(), e.Value())
		}
	case <-time.After(5 * time.Second):
		log.Fatal("no update")
	}
	only.Stop()
}
