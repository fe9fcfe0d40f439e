// Listing a bucket's keys.
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

	kv, err := js.CreateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: "inventory", Storage: jetstream.MemoryStorage})
	if err != nil {
		log.Fatal(err)
	}
	_, err = kv.Keys(ctx)
	fmt.Println("empty:", err, errors.Is(err, jetstream.ErrNoKeysFound))

	for _, k := range []string{"apples", "pears", "plums", "figs"} {
		kv.Put(ctx, k, []byte("10"))
	}
	kv.Delete(ctx, "pears")
	keys, err := kv.Keys(ctx)
	sort.Strings(keys)
	fmt.Println("keys:", keys, err)

	lister, err := kv.ListKeys(ctx)
	if err != nil {
		log.Fatal(err)
	}
	var listed []string
	for k := range lister.Keys() {
		listed = append(listed, k)
	}
	sort.Strings(listed)
	fmt.Println("listed:", listed)

	filtered, err := kv.ListKeysFiltered(ctx, "plums", "figs", "pears")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("--- unordered")
	for k := range filtered.Keys() {
		fmt.Println("filtered key:", k)
	}
	fmt.Println("--- end unordered")
}
