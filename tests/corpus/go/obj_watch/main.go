// Watching an Object Store bucket.
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

	obs, err := js.CreateObjectStore(ctx, jetstream.ObjectStoreConfig{Bucket: "assets"})
	if err != nil {
		log.Fatal(err)
	}
	obs.PutString(ctx, "a.css", "body{}")
	w, err := obs.Watch(ctx)
	if err != nil {
		log.Fatal(err)
	}
	next := func() *jetstream.ObjectInfo {
		select {
		case i := <-w.Updates():
			return i
		case <-time.After(5 * time.Second):
			log.Fatal("no update")
		}
		return nil
	}
	for i := next(); i != nil; i = next() {
		fmt.Println("existing:", i.Name, i.Size)
	}
	fmt.Println("-- initial done")
	obs.PutString(ctx, "b.js", "let x")
	i := next()
	fmt.Println("new:", i.Name, i.Size, i.Deleted)
	obs.Delete(ctx, "a.css")
	i = next()
	fmt.Println("deleted:", i.Name, i.Deleted)
	w.Stop()

	only, _ := obs.Watch(ctx, jetstream.UpdatesOnly())
	obs.PutString(ctx, "c.html", "<p>")
	select {
	case i := <-only.Updates():
		if i == nil {
			fmt.Println("updates only: nil marker")
		} else {
			fmt.Println("updates only:", i.Name)
		}
	case <-time.After(5 * time.Second):
		log.Fatal("no update")
	}
	only.Stop()
}
