package natsio_test

// The conformance table's "facade go" lines: where the nats.go-shaped
// facade (bindings/go/nats, nats/jetstream) follows nats.go rather than the
// core's semantics.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/libnatsio/natsio/bindings/go/nats"
	"github.com/libnatsio/natsio/bindings/go/nats/jetstream"
)

// wireRequest returns the JSON body of the first request on subject that
// act makes, seen by a second connection.
func wireRequest(t *testing.T, ctx context.Context, url, subject string, act func()) map[string]any {
	t.Helper()
	spy, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	defer spy.Close()
	sub, err := spy.SubscribeSync(subject)
	if err != nil {
		t.Fatal(err)
	}
	if err := spy.Flush(); err != nil {
		t.Fatal(err)
	}
	act()
	m, err := sub.NextMsgWithContext(ctx)
	if err != nil {
		t.Fatalf("no request on %s: %v", subject, err)
	}
	var body map[string]any
	if err := json.Unmarshal(m.Data, &body); err != nil {
		t.Fatalf("request body %q: %v", m.Data, err)
	}
	return body
}

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
	case "drain_async":
		closed := make(chan struct{})
		dc, err := nats.Connect(url, nats.ClosedHandler(func(*nats.Conn) { close(closed) }))
		if err != nil {
			t.Fatal(err)
		}
		defer dc.Close()
		inHandler, release := make(chan struct{}, 1), make(chan struct{})
		if _, err := dc.Subscribe("conf.facade.drain", func(*nats.Msg) {
			inHandler <- struct{}{}
			<-release
		}); err != nil {
			t.Fatal(err)
		}
		if err := dc.Publish("conf.facade.drain", []byte("held")); err != nil {
			t.Fatal(err)
		}
		select {
		case <-inHandler:
		case <-ctx.Done():
			t.Fatal("the message never reached its handler")
		}
		// The handler holds a message: the drain cannot finish, yet Drain
		// returns (nats.go's is asynchronous) before the closed handler.
		if err := dc.Drain(); err != nil {
			t.Fatal(err)
		}
		select {
		case <-closed:
			t.Error("Drain returned after the connection closed: nats.go's Drain returns at once")
		default:
		}
		close(release)
		select {
		case <-closed:
		case <-ctx.Done():
			t.Fatal("the drained connection never closed")
		}
	case "delete_msg_no_erase":
		s, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "FACADE_DEL", Subjects: []string{"conf.facade.del"}, Storage: jetstream.MemoryStorage})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = js.DeleteStream(context.Background(), "FACADE_DEL") })
		body := wireRequest(t, ctx, url, "$JS.API.STREAM.MSG.DELETE.FACADE_DEL", func() {
			if _, err := js.Publish(ctx, "conf.facade.del", []byte("m")); err != nil {
				t.Fatal(err)
			}
			if err := s.DeleteMsg(ctx, 1); err != nil {
				t.Fatal(err)
			}
		})
		if body["no_erase"] != true {
			t.Errorf("DeleteMsg sent %v, want no_erase true (nats.go's DeleteMsg never erases)", body)
		}
	case "fetch_default_expires":
		s, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "FACADE_FE", Subjects: []string{"conf.facade.fe"}, Storage: jetstream.MemoryStorage})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = js.DeleteStream(context.Background(), "FACADE_FE") })
		cons, err := s.CreateOrUpdateConsumer(ctx, jetstream.ConsumerConfig{Durable: "c", AckPolicy: jetstream.AckExplicitPolicy})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := js.Publish(ctx, "conf.facade.fe", []byte("m")); err != nil {
			t.Fatal(err)
		}
		body := wireRequest(t, ctx, url, "$JS.API.CONSUMER.MSG.NEXT.FACADE_FE.c", func() {
			batch, err := cons.Fetch(1)
			if err != nil {
				t.Fatal(err)
			}
			for m := range batch.Messages() {
				_ = m.Ack()
			}
		})
		if body["expires"] != float64(30*time.Second) {
			t.Errorf("Fetch without FetchMaxWait asked for %v, want expires 30 s (nats.go's default)", body)
		}
	default:
		t.Fatalf("no Go check for facade %q", c.fields[1])
	}
}
