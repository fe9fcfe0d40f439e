package natsio_test

// The conformance table's "facade go" lines: where the nats.go-shaped
// facade (bindings/go/nats, nats/jetstream) follows nats.go rather than the
// core's semantics.

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/libnatsio/natsio/bindings/go/nats"
	"github.com/libnatsio/natsio/bindings/go/nats/jetstream"
)

func checkFacadeCase(t *testing.T, c conformanceCase, url string) {
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	bucket := fmt.Sprintf("FACADE_%s", c.fields[1])
	newKV := func() jetstream.KeyValue {
		kv, err := js.CreateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: bucket, Storage: jetstream.MemoryStorage})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = js.DeleteKeyValue(context.Background(), bucket) })
		return kv
	}
	switch c.fields[1] {
	case "kv_keys_empty":
		keys, err := newKV().Keys(ctx)
		if !errors.Is(err, jetstream.ErrNoKeysFound) || len(keys) != 0 {
			t.Errorf("Keys of an empty bucket: %v, %v; want ErrNoKeysFound", keys, err)
		}
	case "object_list_empty":
		os, err := js.CreateObjectStore(ctx, jetstream.ObjectStoreConfig{Bucket: bucket, Storage: jetstream.MemoryStorage})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = js.DeleteObjectStore(context.Background(), bucket) })
		infos, err := os.List(ctx)
		if !errors.Is(err, jetstream.ErrNoObjectsFound) || len(infos) != 0 {
			t.Errorf("List of an empty bucket: %v, %v; want ErrNoObjectsFound", infos, err)
		}
	case "deleted_key_get":
		kv := newKV()
		if _, err := kv.Put(ctx, "k", []byte("v")); err != nil {
			t.Fatal(err)
		}
		if err := kv.Delete(ctx, "k"); err != nil {
			t.Fatal(err)
		}
		if _, err := kv.Get(ctx, "k"); !errors.Is(err, jetstream.ErrKeyNotFound) {
			t.Errorf("Get of a deleted key: %v, want ErrKeyNotFound", err)
		}
	case "updates_only_no_marker":
		kv := newKV()
		if _, err := kv.Put(ctx, "before", []byte("old")); err != nil {
			t.Fatal(err)
		}
		w, err := kv.Watch(ctx, ">", jetstream.UpdatesOnly())
		if err != nil {
			t.Fatal(err)
		}
		defer w.Stop()
		if _, err := kv.Put(ctx, "after", []byte("new")); err != nil {
			t.Fatal(err)
		}
		select {
		case e := <-w.Updates():
			if e == nil || e.Key() != "after" {
				t.Errorf("first entry of an UpdatesOnly watch: %v, want the put of \"after\"", e)
			}
		case <-ctx.Done():
			t.Fatal("no entry")
		}
	default:
		t.Fatalf("no Go check for facade %q", c.fields[1])
	}
}
