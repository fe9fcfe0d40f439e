// A key's history, with its operations.
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

	kv, err := js.CreateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: "config", History: 5})
	if err != nil {
		log.Fatal(err)
	}
	kv.Put(ctx, "level", []byte("debug"))
	kv.Put(ctx, "level", []byte("info"))
	kv.Put(ctx, "other", []byte("x"))
	kv.Delete(ctx, "level")
	kv.Put(ctx, "level", []byte("warn"))

	history, err := kv.History(ctx, "level")
	if err != nil {
		log.Fatal(err)
	}
	for _, e := range history {
		fmt.Printf("%s rev %d %s %q\n", e.Key(), e.Revision(), e.Operation(), e.Value())
	}
	_, err = kv.History(ctx, "missing")
	fmt.Println("missing:", err)

	st, err := kv.Status(ctx)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("status:", st.Bucket(), st.Values(), st.History(), st.TTL(), st.BackingStore())
	fmt.Println(jetstream.KeyValuePut, jetstream.KeyValueDelete, jetstream.KeyValuePurge)
}
