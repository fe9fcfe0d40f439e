// Key-Value through the legacy JetStream context (nc.JetStream()): a
// bucket, writes with and without an expected revision, deletes and
// purges, keys, history, watchers and the bucket's status.
package main

import (
	"errors"
	"fmt"
	"log"
	"os"
	"sort"
	"time"

	"github.com/nats-io/nats.go"
)

func show(e nats.KeyValueEntry, err error) string {
	if err != nil {
		return "error: " + err.Error()
	}
	return fmt.Sprintf("%s/%s=%q rev %d %s", e.Bucket(), e.Key(), e.Value(), e.Revision(), e.Operation())
}

// next is the watcher's next entry ("<nil>" for the marker), or fails.
func next(w nats.KeyWatcher) string {
	select {
	case e, ok := <-w.Updates():
		if !ok {
			return "<closed>"
		}
		if e == nil {
			return "<nil>"
		}
		return fmt.Sprintf("%s=%q %s rev %d delta %d", e.Key(), e.Value(), e.Operation(), e.Revision(), e.Delta())
	case <-time.After(5 * time.Second):
		log.Fatal("no update")
	}
	return ""
}

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
	js, err := nc.JetStream()
	if err != nil {
		log.Fatal(err)
	}

	_, err = js.CreateKeyValue(nil)
	fmt.Println("nil config:", err, errors.Is(err, nats.ErrKeyValueConfigRequired))
	_, err = js.CreateKeyValue(&nats.KeyValueConfig{Bucket: "bad name"})
	fmt.Println("bad name:", err, errors.Is(err, nats.ErrInvalidBucketName))
	_, err = js.CreateKeyValue(&nats.KeyValueConfig{Bucket: "deep", History: 65})
	fmt.Println("history 65:", err, errors.Is(err, nats.ErrHistoryToLarge))
	_, err = js.KeyValue("absent")
	fmt.Println("bind absent:", err, errors.Is(err, nats.ErrBucketNotFound))

	kv, err := js.CreateKeyValue(&nats.KeyValueConfig{Bucket: "settings", History: 5,
		Description: "app settings", TTL: time.Hour, Storage: nats.MemoryStorage})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("bucket:", kv.Bucket())
	_, err = kv.Keys()
	fmt.Println("keys of empty:", err, errors.Is(err, nats.ErrNoKeysFound))

	// A watcher started on the empty bucket: the marker comes first.
	all, err := kv.WatchAll()
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("watch empty:", next(all))

	rev, err := kv.Put("ui.theme", []byte("dark"))
	fmt.Println("put:", rev, err)
	fmt.Println("get:", show(kv.Get("ui.theme")))
	rev, err = kv.PutString("ui.theme", "light")
	fmt.Println("put string:", rev, err)
	rev, err = kv.Update("ui.theme", []byte("blue"), 2)
	fmt.Println("update:", rev, err)
	_, err = kv.Update("ui.theme", []byte("red"), 2)
	fmt.Println("stale update:", err, errors.Is(err, nats.ErrKeyRevisionMismatch), errors.Is(err, nats.ErrKeyExists))

	rev, err = kv.Create("ui.lang", []byte("en"))
	fmt.Println("create:", rev, err)
	_, err = kv.Create("ui.lang", []byte("fr"))
	fmt.Println("create again:", err, errors.Is(err, nats.ErrKeyExists))
	var apiErr *nats.APIError
	if errors.As(err, &apiErr) {
		fmt.Println("create again api error:", apiErr.Code, apiErr.ErrorCode, apiErr.Description)
	}

	err = kv.Delete("ui.lang", nats.LastRevision(1))
	fmt.Println("delete at wrong revision:", err, errors.Is(err, nats.ErrKeyRevisionMismatch))
	fmt.Println("delete:", kv.Delete("ui.lang"))
	_, err = kv.Get("ui.lang")
	fmt.Println("get deleted:", err, errors.Is(err, nats.ErrKeyNotFound), errors.Is(err, nats.ErrKeyDeleted))
	rev, err = kv.Create("ui.lang", []byte("de"))
	fmt.Println("create after delete:", rev, err)
	fmt.Println("revision 3:", show(kv.GetRevision("ui.theme", 3)))
	fmt.Println("revision 5 (another key's):", show(kv.GetRevision("ui.theme", 5)))
	fmt.Println("get missing:", show(kv.Get("nobody")))
	_, err = kv.Get("bad..key")
	fmt.Println("bad key:", err, errors.Is(err, nats.ErrInvalidKey))

	for i := 0; i < 6; i++ {
		fmt.Println("all watcher:", next(all))
	}

	kv.Put("db.host", []byte("localhost"))
	kv.Put("db.port", []byte("5432"))
	kv.Put("db.port", []byte("5433"))
	keys, err := kv.Keys()
	fmt.Println("keys:", keys, err)
	lister, err := kv.ListKeys()
	if err != nil {
		log.Fatal(err)
	}
	var listed []string
	for k := range lister.Keys() {
		listed = append(listed, k)
	}
	sort.Strings(listed)
	fmt.Println("listed keys:", listed)

	history, err := kv.History("ui.theme")
	fmt.Println("history of ui.theme:", len(history), err)
	for _, e := range history {
		fmt.Printf("  %q rev %d %s delta %d\n", e.Value(), e.Revision(), e.Operation(), e.Delta())
	}
	_, err = kv.History("nobody")
	fmt.Println("history of nobody:", err, errors.Is(err, nats.ErrKeyNotFound))

	// A watch of some keys: current values, the marker, then changes.
	w, err := kv.Watch("db.*")
	if err != nil {
		log.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		fmt.Println("db watcher:", next(w))
	}
	hw, err := kv.Watch("db.port", nats.IncludeHistory())
	if err != nil {
		log.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		fmt.Println("history watcher:", next(hw))
	}
	hw.Stop()
	uw, err := kv.Watch("db.>", nats.UpdatesOnly())
	if err != nil {
		log.Fatal(err)
	}
	_, err = kv.Watch("db.>", nats.UpdatesOnly(), nats.IncludeHistory())
	fmt.Println("updates only with history:", err)
	_, err = kv.Watch("db.>", nats.IncludeHistory(), nats.UpdatesOnly())
	fmt.Println("history with updates only:", err)
	_, err = kv.Watch("")
	fmt.Println("watch empty pattern:", err, errors.Is(err, nats.ErrInvalidKey))
	// Each watcher sees the purge before the next put is sent: an entry's
	// delta is what the stream held beyond it when it was delivered, so a
	// put racing the delivery would make the delta depend on timing.
	fmt.Println("purge db.host:", kv.Purge("db.host"))
	fmt.Println("db watcher:", next(w))
	fmt.Println("updates-only watcher:", next(uw))
	kv.Put("db.port", []byte("6000"))
	fmt.Println("db watcher:", next(w))
	fmt.Println("updates-only watcher:", next(uw))
	iw, err := kv.WatchAll(nats.IgnoreDeletes())
	if err != nil {
		log.Fatal(err)
	}
	for i := 0; i < 4; i++ {
		fmt.Println("ignore-deletes watcher:", next(iw))
	}
	iw.Stop()
	fmt.Println("stopped watcher:", next(iw))
	w.Stop()
	uw.Stop()
	all.Stop()

	fmt.Println("purge deletes:", kv.PurgeDeletes(nats.DeleteMarkersOlderThan(-1)))
	history, err = kv.History("db.host")
	fmt.Println("db.host after purge deletes:", len(history), err)

	st, err := kv.Status()
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("status:", st.Bucket(), st.Values(), st.History(), st.TTL(), st.BackingStore(), st.IsCompressed(), st.Bytes() > 0)
	cfg := st.Config()
	fmt.Printf("config: %s %q history %d ttl %v storage %s replicas %d max value %d max bytes %d\n",
		cfg.Bucket, cfg.Description, cfg.History, cfg.TTL, cfg.Storage, cfg.Replicas, cfg.MaxValueSize, cfg.MaxBytes)
	if bs, ok := st.(*nats.KeyValueBucketStatus); ok {
		fmt.Println("stream:", bs.StreamInfo().Config.Name, bs.StreamInfo().State.Msgs)
	}

	again, err := js.CreateKeyValue(&nats.KeyValueConfig{Bucket: "settings", History: 5,
		Description: "app settings", TTL: time.Hour, Storage: nats.MemoryStorage})
	fmt.Println("create identical:", again != nil, err)
	_, err = js.CreateKeyValue(&nats.KeyValueConfig{Bucket: "settings", History: 2})
	fmt.Println("create different:", err, errors.Is(err, nats.ErrStreamNameAlreadyInUse))
	bound, err := js.KeyValue("settings")
	fmt.Println("bind:", bound.Bucket(), err)
	js.CreateKeyValue(&nats.KeyValueConfig{Bucket: "flags"})
	var names []string
	for n := range js.KeyValueStoreNames() {
		names = append(names, n)
	}
	sort.Strings(names)
	fmt.Println("names:", names)
	var stores []string
	for s := range js.KeyValueStores() {
		stores = append(stores, fmt.Sprintf("%s:%d", s.Bucket(), s.Values()))
	}
	sort.Strings(stores)
	fmt.Println("stores:", stores)

	fmt.Println("delete bucket:", js.DeleteKeyValue("flags"))
	err = js.DeleteKeyValue("flags")
	fmt.Println("delete again:", err, errors.Is(err, nats.ErrStreamNotFound))
	fmt.Println("delete bad name:", js.DeleteKeyValue("a.b"))
	fmt.Println("op strings:", nats.KeyValuePut, nats.KeyValueDelete, nats.KeyValuePurge, nats.KeyValueOp(9))
}
