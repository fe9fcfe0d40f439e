// Object Store basics: put, get, info, list, delete.
package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
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

	obs, err := js.CreateObjectStore(ctx, jetstream.ObjectStoreConfig{Bucket: "files", Description: "test files"})
	if err != nil {
		log.Fatal(err)
	}
	_, err = obs.List(ctx)
	fmt.Println("empty list:", err, errors.Is(err, jetstream.ErrNoObjectsFound))

	info, err := obs.PutString(ctx, "hello.txt", "hello world")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("put:", info.Name, info.Size, info.Chunks, info.Digest, info.Bucket)

	data := bytes.Repeat([]byte("0123456789"), 30000)
	info, err = obs.Put(ctx, jetstream.ObjectMeta{
		Name:        "big.bin",
		Description: "three hundred thousand bytes",
		Metadata:    map[string]string{"kind": "test"},
	}, bytes.NewReader(data))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("put big:", info.Size, info.Chunks, info.Description, info.Metadata["kind"])

	s, err := obs.GetString(ctx, "hello.txt")
	fmt.Println("get:", s, err)
	r, err := obs.Get(ctx, "big.bin")
	if err != nil {
		log.Fatal(err)
	}
	got, _ := io.ReadAll(r)
	r.Close()
	fmt.Println("get big:", len(got), bytes.Equal(got, data))

	gi, _ := obs.GetInfo(ctx, "big.bin")
	fmt.Println("info:", gi.Name, gi.Size, gi.Deleted)

	list, err := obs.List(ctx)
	fmt.Println("list:", len(list), err)
	for _, o := range list {
		fmt.Println(" ", o.Name, o.Size)
	}

	fmt.Println("delete:", obs.Delete(ctx, "hello.txt"))
	_, err = obs.GetString(ctx, "hello.txt")
	fmt.Println("get deleted:", err, errors.Is(err, jetstream.ErrObjectNotFound))
	list, _ = obs.List(ctx)
	fmt.Println("list after delete:", len(list))

	st, _ := obs.Status(ctx)
	fmt.Println("status:", st.Bucket(), st.Description(), st.Sealed(), st.Storage(), st.BackingStore())
	fmt.Println("delete bucket:", js.DeleteObjectStore(ctx, "files"))
	_, err = js.ObjectStore(ctx, "files")
	fmt.Println("bind deleted:", err)
}
