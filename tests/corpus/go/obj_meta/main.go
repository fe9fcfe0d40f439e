// Object metadata, links and sealing a bucket.
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

	obs, err := js.CreateObjectStore(ctx, jetstream.ObjectStoreConfig{Bucket: "docs", Storage: jetstream.MemoryStorage})
	if err != nil {
		log.Fatal(err)
	}
	info, err := obs.PutBytes(ctx, "guide.md", []byte("# Guide"))
	if err != nil {
		log.Fatal(err)
	}
	err = obs.UpdateMeta(ctx, "guide.md", jetstream.ObjectMeta{
		Name:        "guide.md",
		Description: "the user guide",
		Metadata:    map[string]string{"lang": "en"},
	})
	fmt.Println("update meta:", err)
	info, _ = obs.GetInfo(ctx, "guide.md")
	fmt.Println(info.Name, info.Description, info.Metadata["lang"], info.Size)

	link, err := obs.AddLink(ctx, "latest.md", info)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("link:", link.Name, link.Opts.Link.Bucket, link.Opts.Link.Name)
	text, err := obs.GetString(ctx, "latest.md")
	fmt.Println("through the link:", text, err)

	fmt.Println("seal:", obs.Seal(ctx))
	st, _ := obs.Status(ctx)
	fmt.Println("sealed:", st.Sealed(), "storage:", st.Storage())
	_, err = obs.PutString(ctx, "new.md", "x")
	fmt.Println("put after seal refused:", err != nil)
}
