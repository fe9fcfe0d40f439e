// A bucket's configuration and status, updated in place.
package main

import (
	"context"
	"errors"
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

	kv, err := js.CreateKeyValue(ctx, jetstream.KeyValueConfig{
		Bucket:       "sessions",
		Description:  "login sessions",
		History:      3,
		TTL:          time.Hour,
		MaxValueSize: 1024,
		Storage:      jetstream.MemoryStorage,
	})
	if err != nil {
		log.Fatal(err)
	}
	kv.Put(ctx, "s1", []byte("alice"))
	st, _ := kv.Status(ctx)
	fmt.Println(st.Bucket(), st.Values(), st.History(), st.TTL(), st.IsCompressed())

	_, err = kv.Put(ctx, "big", make([]byte, 2048))
	fmt.Println("too big refused:", err != nil)

	_, err = js.CreateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: "sessions", History: 5})
	fmt.Println("create with another config:", errors.Is(err, jetstream.ErrBucketExists))

	kv, err = js.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{
		Bucket:  "sessions",
		History: 10,
		TTL:     2 * time.Hour,
		Storage: jetstream.MemoryStorage,
	})
	if err != nil {
		log.Fatal(err)
	}
	st, _ = kv.Status(ctx)
	fmt.Println("updated:", st.History(), st.TTL(), st.Values())

	_, err = js.CreateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: "bad name"})
	fmt.Println("bad name:", err, errors.Is(err, jetstream.ErrInvalidBucketName))
	_, err = kv.Put(ctx, "bad key!", []byte("x"))
	fmt.Println("bad key:", err, errors.Is(err, jetstream.ErrInvalidKey))
}
