// Key-Value basics: put, get, create, update, delete, purge.
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

	kv, err := js.CreateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: "profiles"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("bucket:", kv.Bucket())
	rev, err := kv.Put(ctx, "sue.color", []byte("blue"))
	fmt.Println("put:", rev, err)
	entry, _ := kv.Get(ctx, "sue.color")
	fmt.Printf("%s @ %d -> %q (%s)\n", entry.Key(), entry.Revision(), entry.Value(), entry.Operation())

	rev, _ = kv.PutString(ctx, "sue.color", "green")
	fmt.Println("put string:", rev)
	rev, err = kv.Update(ctx, "sue.color", []byte("red"), 2)
	fmt.Println("update:", rev, err)
	_, err = kv.Update(ctx, "sue.color", []byte("pink"), 2)
	fmt.Println("stale update:", err, errors.Is(err, jetstream.ErrKeyExists))

	rev, err = kv.Create(ctx, "bob.color", []byte("black"))
	fmt.Println("create:", rev, err)
	_, err = kv.Create(ctx, "bob.color", []byte("white"))
	fmt.Println("create again:", err, errors.Is(err, jetstream.ErrKeyExists))

	fmt.Println("delete:", kv.Delete(ctx, "bob.color"))
	_, err = kv.Get(ctx, "bob.color")
	fmt.Println("get deleted:", err, errors.Is(err, jetstream.ErrKeyNotFound))
	rev, err = kv.Create(ctx, "bob.color", []byte("grey"))
	fmt.Println("create after delete:", rev, err)

	fmt.Println("purge:", kv.Purge(ctx, "sue.color"))
	_, err = kv.Get(ctx, "sue.color")
	fmt.Println("get purged:", err)
	_, err = kv.Get(ctx, "nobody")
	fmt.Println("get missing:", err)

	e, err := kv.GetRevision(ctx, "bob.color", 6)
	fmt.Println("revision 6:", string(e.Value()), e.Revision(), err)
	_, err = kv.GetRevision(ctx, "bob.color", 5)
	fmt.Println("revision 5 (the delete):", err)

	_, err = js.KeyValue(ctx, "nope")
	fmt.Println("bind missing:", err, errors.Is(err, jetstream.ErrBucketNotFound))
	fmt.Println("delete bucket:", js.DeleteKeyValue(ctx, "profiles"))
}
