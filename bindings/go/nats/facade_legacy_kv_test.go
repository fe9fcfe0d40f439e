package nats_test

// The legacy context's Key-Value and Object Store API (issue 44), against
// a real nats-server: values, errors and their texts as nats.go gives them.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"testing"
	"time"

	"github.com/libnatsio/natsio/bindings/go/nats"
)

func legacyBucket(t *testing.T, cfg *nats.KeyValueConfig) (nats.JetStreamContext, nats.KeyValue) {
	t.Helper()
	_, js := jsServer(t)
	kv, err := js.CreateKeyValue(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return js, kv
}

// wantErr checks err's text and that it matches each sentinel.
func wantErr(t *testing.T, what string, err error, text string, sentinels ...error) {
	t.Helper()
	if err == nil || err.Error() != text {
		t.Errorf("%s: error %v, want %q", what, err, text)
		return
	}
	for _, s := range sentinels {
		if !errors.Is(err, s) {
			t.Errorf("%s: %v does not match %v", what, err, s)
		}
	}
}

// entryText is what a test compares of an entry.
func entryText(e nats.KeyValueEntry) string {
	if e == nil {
		return "<nil>"
	}
	return fmt.Sprintf("%s=%s@%d %s d%d", e.Key(), e.Value(), e.Revision(), e.Operation(), e.Delta())
}

// nextEntry is the watcher's next entry, "<closed>" when the channel is
// closed; it fails the test after 10 s without one.
func nextEntry(t *testing.T, w nats.KeyWatcher) string {
	t.Helper()
	select {
	case e, ok := <-w.Updates():
		if !ok {
			return "<closed>"
		}
		return entryText(e)
	case <-time.After(10 * time.Second):
		t.Fatal("no update within 10 s")
	}
	return ""
}

func nextEntries(t *testing.T, w nats.KeyWatcher, n int) []string {
	t.Helper()
	var out []string
	for range n {
		out = append(out, nextEntry(t, w))
	}
	return out
}

// noEntry checks the watcher delivers nothing more for a moment.
func noEntry(t *testing.T, w nats.KeyWatcher) {
	t.Helper()
	select {
	case e := <-w.Updates():
		t.Errorf("unexpected update %s", entryText(e))
	case <-time.After(200 * time.Millisecond):
	}
}

// Put, Get, Update, Create, Delete and Purge give nats.go's revisions and
// errors: a refused Update or LastRevision names the live revision and
// matches ErrKeyRevisionMismatch, a refused Create matches ErrKeyExists, a
// deleted key reads as ErrKeyNotFound.
func TestLegacyKVWrites(t *testing.T) {
	_, kv := legacyBucket(t, &nats.KeyValueConfig{Bucket: "writes", History: 10})
	if kv.Bucket() != "writes" {
		t.Errorf("Bucket() = %q", kv.Bucket())
	}
	for i, v := range []string{"a", "b"} {
		if rev, err := kv.PutString("k", v); err != nil || rev != uint64(i+1) {
			t.Fatalf("put %s: %d %v", v, rev, err)
		}
	}
	e, err := kv.Get("k")
	if err != nil || entryText(e) != "k=b@2 KeyValuePutOp d0" || e.Bucket() != "writes" || e.Created().IsZero() {
		t.Fatalf("get: %s %v", entryText(e), err)
	}
	if rev, err := kv.Update("k", []byte("c"), 2); err != nil || rev != 3 {
		t.Fatalf("update: %d %v", rev, err)
	}
	_, err = kv.Update("k", []byte("d"), 2)
	wantErr(t, "stale update", err, "nats: wrong last sequence: 3: nats: key revision mismatch",
		nats.ErrKeyRevisionMismatch, nats.ErrKeyExists)
	var apiErr *nats.APIError
	if !errors.As(err, &apiErr) || apiErr.ErrorCode != nats.JSErrCodeStreamWrongLastSequence || apiErr.Code != 400 {
		t.Errorf("stale update's API error: %+v", apiErr)
	}

	if rev, err := kv.Create("new", []byte("1")); err != nil || rev != 4 {
		t.Fatalf("create: %d %v", rev, err)
	}
	_, err = kv.Create("new", []byte("2"))
	wantErr(t, "create existing", err, "nats: wrong last sequence: 4: key exists", nats.ErrKeyExists)
	if errors.Is(err, nats.ErrKeyRevisionMismatch) {
		t.Error("a refused Create matches ErrKeyRevisionMismatch")
	}

	wantErr(t, "delete at a stale revision", kv.Delete("new", nats.LastRevision(1)),
		"nats: wrong last sequence: 4: nats: key revision mismatch", nats.ErrKeyRevisionMismatch)
	if err := kv.Delete("new", nats.LastRevision(4)); err != nil {
		t.Fatal(err)
	}
	_, err = kv.Get("new")
	wantErr(t, "get deleted", err, "nats: key not found", nats.ErrKeyNotFound)
	_, err = kv.GetRevision("new", 5)
	wantErr(t, "the delete's revision", err, "nats: key not found", nats.ErrKeyNotFound)
	if rev, err := kv.Create("new", []byte("3")); err != nil || rev != 6 {
		t.Fatalf("create after delete: %d %v", rev, err)
	}
	e, err = kv.GetRevision("k", 1)
	if err != nil || entryText(e) != "k=a@1 KeyValuePutOp d0" {
		t.Errorf("revision 1: %s %v", entryText(e), err)
	}
	_, err = kv.GetRevision("k", 4)
	wantErr(t, "another key's revision", err, "nats: key not found", nats.ErrKeyNotFound)

	if err := kv.Purge("k"); err != nil {
		t.Fatal(err)
	}
	_, err = kv.Get("k")
	wantErr(t, "get purged", err, "nats: key not found", nats.ErrKeyNotFound)
	_, err = kv.GetRevision("k", 1)
	wantErr(t, "a purged revision", err, "nats: key not found", nats.ErrKeyNotFound)
	_, err = kv.Put("bad key", []byte("x"))
	wantErr(t, "bad key", err, "nats: invalid key", nats.ErrInvalidKey)
	_, err = kv.Get("")
	wantErr(t, "empty key", err, "nats: invalid key", nats.ErrInvalidKey)
}

// Keys is sorted, without duplicates, and ErrNoKeysFound on an empty
// bucket; ListKeys lists the same; History is oldest first with deltas,
// ErrKeyNotFound for a key without revisions.
func TestLegacyKVKeysAndHistory(t *testing.T) {
	_, kv := legacyBucket(t, &nats.KeyValueConfig{Bucket: "keys", History: 5})
	_, err := kv.Keys()
	wantErr(t, "keys of an empty bucket", err, "nats: no keys found", nats.ErrNoKeysFound)
	_, err = kv.History("none")
	wantErr(t, "history of nothing", err, "nats: key not found", nats.ErrKeyNotFound)

	for _, kvp := range [][2]string{{"b", "1"}, {"a", "1"}, {"c", "1"}, {"a", "2"}, {"a", "3"}} {
		if _, err := kv.PutString(kvp[0], kvp[1]); err != nil {
			t.Fatal(err)
		}
	}
	if err := kv.Delete("c"); err != nil {
		t.Fatal(err)
	}
	keys, err := kv.Keys()
	if err != nil || !reflect.DeepEqual(keys, []string{"a", "b"}) {
		t.Errorf("keys: %v %v", keys, err)
	}
	l, err := kv.ListKeys()
	if err != nil {
		t.Fatal(err)
	}
	var listed []string
	for k := range l.Keys() {
		listed = append(listed, k)
	}
	sort.Strings(listed)
	if !reflect.DeepEqual(listed, []string{"a", "b"}) {
		t.Errorf("listed: %v", listed)
	}

	history, err := kv.History("a")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range history {
		got = append(got, entryText(e))
	}
	want := []string{"a=1@2 KeyValuePutOp d2", "a=2@4 KeyValuePutOp d1", "a=3@5 KeyValuePutOp d0"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("history: %v, want %v", got, want)
	}
	history, err = kv.History("c")
	if err != nil || len(history) != 2 || history[1].Operation() != nats.KeyValueDelete {
		t.Errorf("history of a deleted key: %d %v", len(history), err)
	}
	history, err = kv.History("c", nats.IgnoreDeletes())
	if err != nil || len(history) != 1 || string(history[0].Value()) != "1" {
		t.Errorf("history without deletes: %d %v", len(history), err)
	}

	// PurgeDeletes removes the delete marker and what it hides.
	if err := kv.PurgeDeletes(nats.DeleteMarkersOlderThan(-1)); err != nil {
		t.Fatal(err)
	}
	_, err = kv.History("c")
	wantErr(t, "history after PurgeDeletes", err, "nats: key not found", nats.ErrKeyNotFound)
}

// Watch sends the current values, then the nil marker, then changes; an
// UpdatesOnly watch sends no marker; IncludeHistory every kept revision;
// IgnoreDeletes no markers; Stop and the Context option's end close the
// channel.
func TestLegacyKVWatch(t *testing.T) {
	_, kv := legacyBucket(t, &nats.KeyValueConfig{Bucket: "watch", History: 5})

	t.Run("EmptyBucket", func(t *testing.T) {
		w, err := kv.WatchAll()
		if err != nil {
			t.Fatal(err)
		}
		defer w.Stop()
		if got := nextEntry(t, w); got != "<nil>" {
			t.Errorf("first update %s, want the nil marker", got)
		}
		if w.Context() != nil {
			t.Error("a watch without Context has a context")
		}
	})

	for _, kvp := range [][2]string{{"x.a", "1"}, {"x.b", "1"}, {"x.a", "2"}, {"y", "1"}} {
		if _, err := kv.PutString(kvp[0], kvp[1]); err != nil {
			t.Fatal(err)
		}
	}

	t.Run("InitialThenUpdates", func(t *testing.T) {
		w, err := kv.Watch("x.*")
		if err != nil {
			t.Fatal(err)
		}
		defer w.Stop()
		want := []string{"x.b=1@2 KeyValuePutOp d1", "x.a=2@3 KeyValuePutOp d0", "<nil>"}
		if got := nextEntries(t, w, 3); !reflect.DeepEqual(got, want) {
			t.Errorf("initial: %v, want %v", got, want)
		}
		kv.PutString("y", "2")
		kv.Delete("x.b")
		if got := nextEntry(t, w); got != "x.b=@6 KeyValueDeleteOp d0" {
			t.Errorf("update: %s", got)
		}
		noEntry(t, w)
		if err := w.Stop(); err != nil {
			t.Fatal(err)
		}
		if got := nextEntry(t, w); got != "<closed>" {
			t.Errorf("after Stop: %s", got)
		}
		if _, open := <-w.Error(); open {
			t.Error("Error() is not closed after Stop")
		}
	})

	t.Run("UpdatesOnly", func(t *testing.T) {
		w, err := kv.WatchAll(nats.UpdatesOnly())
		if err != nil {
			t.Fatal(err)
		}
		defer w.Stop()
		kv.PutString("x.a", "3")
		if got := nextEntry(t, w); got != "x.a=3@7 KeyValuePutOp d0" {
			t.Errorf("first update %s, want the put (no marker)", got)
		}
		noEntry(t, w)
	})

	t.Run("IncludeHistory", func(t *testing.T) {
		w, err := kv.WatchFiltered([]string{"x.a"}, nats.IncludeHistory())
		if err != nil {
			t.Fatal(err)
		}
		defer w.Stop()
		want := []string{"x.a=1@1 KeyValuePutOp d2", "x.a=2@3 KeyValuePutOp d1", "x.a=3@7 KeyValuePutOp d0", "<nil>"}
		if got := nextEntries(t, w, 4); !reflect.DeepEqual(got, want) {
			t.Errorf("history: %v, want %v", got, want)
		}
	})

	t.Run("IgnoreDeletesAndMetaOnly", func(t *testing.T) {
		w, err := kv.Watch("x.>", nats.IgnoreDeletes(), nats.MetaOnly())
		if err != nil {
			t.Fatal(err)
		}
		defer w.Stop()
		if got := nextEntries(t, w, 2); !reflect.DeepEqual(got, []string{"x.a=@7 KeyValuePutOp d0", "<nil>"}) {
			t.Errorf("watch: %v", got)
		}
	})

	t.Run("Context", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		w, err := kv.WatchAll(nats.Context(ctx))
		if err != nil {
			t.Fatal(err)
		}
		if w.Context() != ctx {
			t.Error("Context() is not the option's")
		}
		nextEntries(t, w, 4) // y, x.b's delete, x.a, the marker
		cancel()
		for {
			if got := nextEntry(t, w); got == "<closed>" {
				break
			}
		}
	})

	t.Run("BadOptions", func(t *testing.T) {
		_, err := kv.WatchAll(nats.UpdatesOnly(), nats.IncludeHistory())
		wantErr(t, "updates only, then history", err, "nats: include history can not be used with updates only")
		_, err = kv.WatchAll(nats.IncludeHistory(), nats.UpdatesOnly())
		wantErr(t, "history, then updates only", err, "nats: updates only can not be used with include history")
		_, err = kv.Watch("a..b")
		wantErr(t, "bad pattern", err, "nats: invalid key: key cannot be empty and must be a valid NATS subject", nats.ErrInvalidKey)
	})
}

// Buckets: creation checks, binding, status and its Config, listings,
// deletion, with nats.go's errors.
func TestLegacyKVBuckets(t *testing.T) {
	_, js := jsServer(t)
	_, err := js.CreateKeyValue(nil)
	wantErr(t, "nil config", err, "nats: config required", nats.ErrKeyValueConfigRequired)
	_, err = js.CreateKeyValue(&nats.KeyValueConfig{Bucket: "a.b"})
	wantErr(t, "bad name", err, "nats: invalid bucket name", nats.ErrInvalidBucketName)
	_, err = js.CreateKeyValue(&nats.KeyValueConfig{Bucket: "deep", History: 65})
	wantErr(t, "history 65", err, "nats: history limited to a max of 64", nats.ErrHistoryToLarge)
	_, err = js.KeyValue("absent")
	wantErr(t, "bind absent", err, "nats: bucket not found", nats.ErrBucketNotFound)
	if _, err := js.AddStream(&nats.StreamConfig{Name: "KV_odd", Subjects: []string{"$KV.odd.>"},
		MaxMsgsPerSubject: -1, MaxMsgs: -1, MaxBytes: -1, MaxConsumers: -1}); err != nil {
		t.Fatal(err)
	}
	_, err = js.KeyValue("odd")
	wantErr(t, "bind a stream keeping no history", err, "nats: bucket not valid key-value store", nats.ErrBadBucket)
	if err := js.DeleteStream("KV_odd"); err != nil {
		t.Fatal(err)
	}

	cfg := &nats.KeyValueConfig{Bucket: "cfg", Description: "d", History: 3, TTL: time.Minute,
		MaxValueSize: 1024, MaxBytes: 1 << 20, Storage: nats.MemoryStorage}
	kv, err := js.CreateKeyValue(cfg)
	if err != nil {
		t.Fatal(err)
	}
	kv.PutString("a", "12345")
	again, err := js.CreateKeyValue(cfg)
	if err != nil || again.Bucket() != "cfg" {
		t.Errorf("creating an identical bucket: %v", err)
	}
	_, err = js.CreateKeyValue(&nats.KeyValueConfig{Bucket: "cfg", History: 4})
	wantErr(t, "creating a different bucket", err, "nats: stream name already in use", nats.ErrStreamNameAlreadyInUse)

	st, err := kv.Status()
	if err != nil {
		t.Fatal(err)
	}
	if st.Bucket() != "cfg" || st.Values() != 1 || st.History() != 3 || st.TTL() != time.Minute ||
		st.BackingStore() != "JetStream" || st.Bytes() == 0 || st.IsCompressed() {
		t.Errorf("status: %s %d %d %v %s %d %v", st.Bucket(), st.Values(), st.History(), st.TTL(),
			st.BackingStore(), st.Bytes(), st.IsCompressed())
	}
	want := nats.KeyValueConfig{Bucket: "cfg", Description: "d", History: 3, TTL: time.Minute,
		MaxValueSize: 1024, MaxBytes: 1 << 20, Storage: nats.MemoryStorage, Replicas: 1}
	if got := st.Config(); !reflect.DeepEqual(got, want) {
		t.Errorf("Config() = %+v, want %+v", got, want)
	}
	bs, ok := st.(*nats.KeyValueBucketStatus)
	if !ok || bs.StreamInfo().Config.Name != "KV_cfg" || bs.StreamInfo().State.Msgs != 1 {
		t.Errorf("the status is not a *KeyValueBucketStatus of stream KV_cfg: %T", st)
	}

	if _, err := js.CreateKeyValue(&nats.KeyValueConfig{Bucket: "other"}); err != nil {
		t.Fatal(err)
	}
	var names, stores []string
	for n := range js.KeyValueStoreNames() {
		names = append(names, n)
	}
	for s := range js.KeyValueStores() {
		stores = append(stores, fmt.Sprintf("%s:%d", s.Bucket(), s.Values()))
	}
	sort.Strings(names)
	sort.Strings(stores)
	if !reflect.DeepEqual(names, []string{"cfg", "other"}) || !reflect.DeepEqual(stores, []string{"cfg:1", "other:0"}) {
		t.Errorf("names %v, stores %v", names, stores)
	}
	// A bucket sourcing another gets its keys.
	sourced, err := js.CreateKeyValue(&nats.KeyValueConfig{Bucket: "sourced",
		Sources: []*nats.StreamSource{{Name: "cfg"}}})
	if err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		e, err := sourced.Get("a")
		if err == nil {
			if string(e.Value()) != "12345" {
				t.Errorf("sourced a=%q", e.Value())
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the sourced bucket did not get key a: %v", err)
		}
	}
	sst, _ := sourced.Status()
	if src := sst.Config().Sources; len(src) != 1 || src[0].Name != "KV_cfg" {
		t.Errorf("sourced Config().Sources: %+v", src)
	}
	if err := js.DeleteKeyValue("sourced"); err != nil {
		t.Fatal(err)
	}

	if err := js.DeleteKeyValue("other"); err != nil {
		t.Fatal(err)
	}
	wantErr(t, "deleting a deleted bucket", js.DeleteKeyValue("other"), "nats: stream not found", nats.ErrStreamNotFound)
	wantErr(t, "deleting a bad name", js.DeleteKeyValue("a b"), "nats: invalid bucket name", nats.ErrInvalidBucketName)
	if got := fmt.Sprint(nats.KeyValuePut, nats.KeyValueDelete, nats.KeyValuePurge, nats.KeyValueOp(7)); got !=
		"KeyValuePutOp KeyValueDeleteOp KeyValuePurgeOp Unknown Operation" {
		t.Errorf("KeyValueOp strings: %s", got)
	}
}

// Mirrors and sources reach the core, which makes them as nats.go does:
// the caller's config is left as it is, Status().Config() reads them back.
func TestLegacyKVMirrorAndSources(t *testing.T) {
	_, js := jsServer(t)
	origin, err := js.CreateKeyValue(&nats.KeyValueConfig{Bucket: "origin"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := origin.PutString("k", "v1"); err != nil {
		t.Fatal(err)
	}
	cfg := &nats.KeyValueConfig{Bucket: "copy", Mirror: &nats.StreamSource{Name: "origin"},
		Sources: []*nats.StreamSource{{Name: "ignored"}}} // the mirror wins, as in nats.go
	mirror, err := js.CreateKeyValue(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Mirror.Name != "origin" || cfg.Sources[0].Name != "ignored" {
		t.Errorf("the caller's config changed: %+v %+v", cfg.Mirror, cfg.Sources[0])
	}
	st, err := mirror.Status()
	if err != nil {
		t.Fatal(err)
	}
	if got := st.Config(); got.Mirror == nil || got.Mirror.Name != "KV_origin" || got.Sources != nil {
		t.Errorf("mirror Config(): mirror %+v, sources %+v", got.Mirror, got.Sources)
	}
	if si := st.(*nats.KeyValueBucketStatus).StreamInfo(); !si.Config.MirrorDirect || len(si.Config.Subjects) != 0 {
		t.Errorf("mirror stream: mirror_direct %v, subjects %v", si.Config.MirrorDirect, si.Config.Subjects)
	}
	waitEntry(t, mirror, "k", "v1")
	// Writes through the mirror land in the origin.
	rev, err := mirror.PutString("w", "v2")
	if err != nil {
		t.Fatal(err)
	}
	// Polled: the mirror answers the origin's Direct Gets too.
	if e := waitEntry(t, origin, "w", "v2"); e.Revision() != rev {
		t.Errorf("w in the origin at %d, put returned %d", e.Revision(), rev)
	}

	second, err := js.CreateKeyValue(&nats.KeyValueConfig{Bucket: "second"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := second.PutString("s", "v3"); err != nil {
		t.Fatal(err)
	}
	sources := []*nats.StreamSource{{Name: "origin"}, {Name: "KV_second"}}
	sourced, err := js.CreateKeyValue(&nats.KeyValueConfig{Bucket: "sourced", Sources: sources})
	if err != nil {
		t.Fatal(err)
	}
	if sources[0].Name != "origin" || sources[0].SubjectTransforms != nil {
		t.Errorf("the caller's source changed: %+v", sources[0])
	}
	waitEntry(t, sourced, "w", "v2")
	waitEntry(t, sourced, "s", "v3")
	sst, err := sourced.Status()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range sst.Config().Sources {
		for _, tr := range s.SubjectTransforms {
			got = append(got, s.Name+" "+tr.Source+" "+tr.Destination)
		}
	}
	if want := []string{"KV_origin $KV.origin.> $KV.sourced.>", "KV_second $KV.second.> $KV.sourced.>"}; !reflect.DeepEqual(got, want) {
		t.Errorf("sourced Config().Sources %q, want %q", got, want)
	}

	// Domain (outside the JSON) reaches the core as External.
	_, err = js.CreateKeyValue(&nats.KeyValueConfig{Bucket: "far", Mirror: &nats.StreamSource{Name: "origin", Domain: "HUB",
		External: &nats.ExternalStream{APIPrefix: "$JS.X.API"}}})
	wantErr(t, "Domain and External", err, "nats: domain and external are both set")
	far, err := js.CreateKeyValue(&nats.KeyValueConfig{Bucket: "far", Mirror: &nats.StreamSource{Name: "origin", Domain: "HUB"}})
	if err != nil {
		t.Fatal(err)
	}
	fst, err := far.Status()
	if err != nil {
		t.Fatal(err)
	}
	if m := fst.Config().Mirror; m == nil || m.External == nil || m.External.APIPrefix != "$JS.HUB.API" {
		t.Errorf("far Config().Mirror %+v", m)
	}
}

// waitEntry polls Get until key holds want (mirrors and sources copy
// asynchronously, and a mirror answers its origin's Direct Gets too),
// failing after 10 s; the entry read.
func waitEntry(t *testing.T, kv nats.KeyValue, key, want string) nats.KeyValueEntry {
	t.Helper()
	var e nats.KeyValueEntry
	var err error
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if e, err = kv.Get(key); err == nil && string(e.Value()) == want {
			return e
		}
	}
	t.Fatalf("%s in %s: %v (%v), want %q", key, kv.Bucket(), e, err, want)
	return nil
}

func nextInfo(t *testing.T, w nats.ObjectWatcher) string {
	t.Helper()
	select {
	case i, ok := <-w.Updates():
		if !ok {
			return "<closed>"
		}
		if i == nil {
			return "<nil>"
		}
		return fmt.Sprintf("%s:%d:%v", i.Name, i.Size, i.Deleted)
	case <-time.After(10 * time.Second):
		t.Fatal("no update within 10 s")
	}
	return ""
}

// The Object Store: puts and gets of every kind, infos, metadata, links,
// listings, a watcher, deletes and sealing, with nats.go's errors.
func TestLegacyObjectStore(t *testing.T) {
	_, js := jsServer(t)
	_, err := js.CreateObjectStore(nil)
	wantErr(t, "nil config", err, "nats: object-store config required", nats.ErrObjectConfigRequired)
	_, err = js.CreateObjectStore(&nats.ObjectStoreConfig{Bucket: "a b"})
	wantErr(t, "bad name", err, "nats: invalid object-store name", nats.ErrInvalidStoreName)
	_, err = js.ObjectStore("absent")
	wantErr(t, "bind absent", err, "nats: stream not found", nats.ErrStreamNotFound)
	obs, err := js.CreateObjectStore(&nats.ObjectStoreConfig{Bucket: "files", Description: "desc",
		Metadata: map[string]string{"k": "v"}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = obs.List()
	wantErr(t, "list empty", err, "nats: no objects found", nats.ErrNoObjectsFound)
	w, err := obs.Watch()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	if got := nextInfo(t, w); got != "<nil>" {
		t.Errorf("watch of an empty bucket: %s", got)
	}

	t.Run("PutAndGet", func(t *testing.T) {
		info, err := obs.PutString("s", "hello")
		if err != nil || info.Bucket != "files" || info.Size != 5 || info.Chunks != 1 || info.NUID == "" ||
			info.Digest != "SHA-256=LPJNul-wow4m6DsqxbninhsWHlwfp0JecwQzYpOLmCQ=" || info.Opts.ChunkSize != 128*1024 {
			t.Fatalf("put string: %+v %v", info, err)
		}
		data := bytes.Repeat([]byte("0123456789"), 10000)
		meta := &nats.ObjectMeta{Name: "b", Description: "bytes", Metadata: map[string]string{"m": "1"},
			Headers: nats.Header{"H": []string{"v"}}, Opts: &nats.ObjectMetaOptions{ChunkSize: 30000}}
		info, err = obs.Put(meta, bytes.NewReader(data))
		if err != nil || info.Size != 100000 || info.Chunks != 4 || info.Description != "bytes" ||
			info.Headers.Get("H") != "v" || info.Metadata["m"] != "1" {
			t.Fatalf("put: %+v %v", info, err)
		}
		if got, err := obs.GetBytes("b"); err != nil || !bytes.Equal(got, data) {
			t.Errorf("get bytes: %d %v", len(got), err)
		}
		if s, err := obs.GetString("s"); err != nil || s != "hello" {
			t.Errorf("get string: %q %v", s, err)
		}
		r, err := obs.Get("b")
		if err != nil {
			t.Fatal(err)
		}
		ri, err := r.Info()
		got, rerr := io.ReadAll(r)
		if err != nil || ri.Name != "b" || rerr != nil || len(got) != 100000 || r.Error() != nil {
			t.Errorf("result: %v %v %d %v", ri, err, len(got), rerr)
		}
		r.Close()
		if info, err := obs.PutBytes("empty", nil); err != nil || info.Size != 0 || info.Chunks != 0 {
			t.Errorf("put empty: %+v %v", info, err)
		}
		if got, err := obs.GetBytes("empty"); err != nil || len(got) != 0 {
			t.Errorf("get empty: %q %v", got, err)
		}
		_, err = obs.Put(&nats.ObjectMeta{}, nil)
		wantErr(t, "put without name", err, "nats: object-store meta information invalid", nats.ErrBadObjectMeta)
		_, err = obs.Put(&nats.ObjectMeta{Name: "l", Opts: &nats.ObjectMetaOptions{Link: &nats.ObjectLink{Bucket: "x"}}}, nil)
		wantErr(t, "put a link", err, "nats: link cannot be set when putting the object in bucket", nats.ErrLinkNotAllowed)
		_, err = obs.Get("absent")
		wantErr(t, "get absent", err, "nats: object not found", nats.ErrObjectNotFound)
		_, err = obs.GetInfo("")
		wantErr(t, "info without name", err, "nats: name is required", nats.ErrNameRequired)
		want := []string{"s:5:false", "b:100000:false", "empty:0:false"}
		for _, w0 := range want {
			if got := nextInfo(t, w); got != w0 {
				t.Errorf("watcher: %s, want %s", got, w0)
			}
		}
	})

	t.Run("Files", func(t *testing.T) {
		dir := t.TempDir()
		src := filepath.Join(dir, "in.txt")
		os.WriteFile(src, []byte("file content"), 0o600)
		info, err := obs.PutFile(src)
		if err != nil || info.Name != src || info.Size != 12 {
			t.Fatalf("put file: %+v %v", info, err)
		}
		nextInfo(t, w)
		dst := filepath.Join(dir, "out.txt")
		if err := obs.GetFile(src, dst); err != nil {
			t.Fatal(err)
		}
		if got, _ := os.ReadFile(dst); string(got) != "file content" {
			t.Errorf("got file %q", got)
		}
		missing := filepath.Join(dir, "missing")
		wantErr(t, "get file of nothing", obs.GetFile("absent", missing), "nats: object not found", nats.ErrObjectNotFound)
		if _, err := os.Stat(missing); !os.IsNotExist(err) {
			t.Errorf("GetFile left %s: %v", missing, err)
		}
	})

	t.Run("Meta", func(t *testing.T) {
		if err := obs.UpdateMeta("s", &nats.ObjectMeta{Name: "s2", Description: "renamed"}); err != nil {
			t.Fatal(err)
		}
		if got := nextInfo(t, w); got != "s2:5:false" {
			t.Errorf("watcher: %s", got)
		}
		info, err := obs.GetInfo("s2")
		if err != nil || info.Description != "renamed" || info.Size != 5 || info.ModTime.IsZero() {
			t.Errorf("renamed: %+v %v", info, err)
		}
		_, err = obs.GetInfo("s")
		wantErr(t, "the old name", err, "nats: object not found", nats.ErrObjectNotFound)
		wantErr(t, "update absent", obs.UpdateMeta("absent", &nats.ObjectMeta{Name: "absent"}),
			"nats: cannot update meta for a deleted object", nats.ErrUpdateMetaDeleted)
		wantErr(t, "rename onto another", obs.UpdateMeta("s2", &nats.ObjectMeta{Name: "b"}),
			"nats: an object already exists with that name", nats.ErrObjectAlreadyExists)
		wantErr(t, "nil meta", obs.UpdateMeta("s2", nil), "nats: object-store meta information invalid", nats.ErrBadObjectMeta)
	})

	t.Run("Links", func(t *testing.T) {
		target, err := obs.GetInfo("s2")
		if err != nil {
			t.Fatal(err)
		}
		link, err := obs.AddLink("ln", target)
		if err != nil || link.Name != "ln" || !link.IsLink() || *link.Opts.Link != (nats.ObjectLink{Bucket: "files", Name: "s2"}) {
			t.Fatalf("add link: %+v %v", link, err)
		}
		nextInfo(t, w)
		if s, err := obs.GetString("ln"); err != nil || s != "hello" {
			t.Errorf("get through the link: %q %v", s, err)
		}
		_, err = obs.AddLink("ln2", link)
		wantErr(t, "link to a link", err, "nats: not allowed to link to another link", nats.ErrNoLinkToLink)
		_, err = obs.AddLink("", target)
		wantErr(t, "link without name", err, "nats: name is required", nats.ErrNameRequired)
		_, err = obs.AddLink("ln3", nil)
		wantErr(t, "link to nil", err, "nats: object required", nats.ErrObjectRequired)
		_, err = obs.AddLink("b", target)
		wantErr(t, "link over an object", err, "nats: an object already exists with that name", nats.ErrObjectAlreadyExists)
		deleted := *target
		deleted.Deleted = true
		_, err = obs.AddLink("ln4", &deleted)
		wantErr(t, "link to a deleted object", err, "nats: not allowed to link to a deleted object", nats.ErrNoLinkToDeleted)

		other, err := js.CreateObjectStore(&nats.ObjectStoreConfig{Bucket: "other"})
		if err != nil {
			t.Fatal(err)
		}
		bl, err := obs.AddBucketLink("to-other", other)
		if err != nil || *bl.Opts.Link != (nats.ObjectLink{Bucket: "other"}) {
			t.Fatalf("bucket link: %+v %v", bl, err)
		}
		nextInfo(t, w)
		_, err = obs.Get("to-other")
		wantErr(t, "get a bucket link", err, "nats: invalid Get, object is a link to a bucket", nats.ErrCantGetBucket)
		_, err = obs.AddBucketLink("x", nil)
		wantErr(t, "bucket link to nil", err, "nats: bucket required", nats.ErrBucketRequired)
	})

	t.Run("ListAndDelete", func(t *testing.T) {
		list, err := obs.List()
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, i := range list {
			if filepath.IsAbs(i.Name) {
				names = append(names, "<the file>") // PutFile's, named by its path
			} else {
				names = append(names, i.Name)
			}
		}
		sort.Strings(names)
		if want := []string{"<the file>", "b", "empty", "ln", "s2", "to-other"}; !reflect.DeepEqual(names, want) {
			t.Errorf("list: %v, want %v", names, want)
		}
		if err := obs.Delete("b"); err != nil {
			t.Fatal(err)
		}
		if got := nextInfo(t, w); got != "b:0:true" {
			t.Errorf("watcher after delete: %s", got)
		}
		_, err = obs.GetBytes("b")
		wantErr(t, "get deleted", err, "nats: object not found", nats.ErrObjectNotFound)
		info, err := obs.GetInfo("b", nats.GetObjectInfoShowDeleted())
		if err != nil || !info.Deleted || info.Size != 0 {
			t.Errorf("deleted info: %+v %v", info, err)
		}
		wantErr(t, "delete absent", obs.Delete("absent"), "nats: object not found", nats.ErrObjectNotFound)
		if list, err := obs.List(); err != nil || len(list) != 5 {
			t.Errorf("list after delete: %d %v", len(list), err)
		}
		if list, err := obs.List(nats.ListObjectsShowDeleted()); err != nil || len(list) != 6 {
			t.Errorf("list with deleted: %d %v", len(list), err)
		}
	})

	t.Run("WatchOptions", func(t *testing.T) {
		iw, err := obs.Watch(nats.IgnoreDeletes())
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for nextInfo(t, iw) != "<nil>" {
			n++
		}
		if n != 5 {
			t.Errorf("ignore-deletes watch: %d infos before the marker, want 5", n)
		}
		iw.Stop()
		if got := nextInfo(t, iw); got != "<closed>" {
			t.Errorf("after Stop: %s", got)
		}
		uw, err := obs.Watch(nats.UpdatesOnly())
		if err != nil {
			t.Fatal(err)
		}
		defer uw.Stop()
		obs.PutString("late", "x")
		if got := nextInfo(t, uw); got != "late:1:false" {
			t.Errorf("updates-only watch: %s (no marker wanted)", got)
		}
	})

	t.Run("StatusSealAndBuckets", func(t *testing.T) {
		st, err := obs.Status()
		if err != nil {
			t.Fatal(err)
		}
		if st.Bucket() != "files" || st.Description() != "desc" || st.Storage() != nats.FileStorage ||
			st.Replicas() != 1 || st.Sealed() || st.Size() == 0 || st.BackingStore() != "JetStream" ||
			st.Metadata()["k"] != "v" || st.IsCompressed() || st.TTL() != 0 {
			t.Errorf("status: %s %s %v %d %v %d", st.Bucket(), st.Description(), st.Storage(), st.Replicas(), st.Sealed(), st.Size())
		}
		if bs, ok := st.(*nats.ObjectBucketStatus); !ok || bs.StreamInfo().Config.Name != "OBJ_files" {
			t.Errorf("the status is not a *ObjectBucketStatus of stream OBJ_files: %T", st)
		}
		if err := obs.Seal(); err != nil {
			t.Fatal(err)
		}
		if st, _ := obs.Status(); !st.Sealed() {
			t.Error("not sealed")
		}
		if _, err := obs.PutString("more", "x"); err == nil {
			t.Error("a put to a sealed bucket succeeded")
		}
		var names, stores []string
		for n := range js.ObjectStoreNames() {
			names = append(names, n)
		}
		for s := range js.ObjectStores() {
			stores = append(stores, fmt.Sprintf("%s:%v", s.Bucket(), s.Sealed()))
		}
		sort.Strings(names)
		sort.Strings(stores)
		// nats.go's legacy ObjectStoreNames gives the streams' names.
		if !reflect.DeepEqual(names, []string{"OBJ_files", "OBJ_other"}) || !reflect.DeepEqual(stores, []string{"files:true", "other:false"}) {
			t.Errorf("names %v, stores %v", names, stores)
		}
		if err := js.DeleteObjectStore("other"); err != nil {
			t.Fatal(err)
		}
		wantErr(t, "delete a deleted bucket", js.DeleteObjectStore("other"), "nats: stream not found", nats.ErrStreamNotFound)
		wantErr(t, "delete a bad name", js.DeleteObjectStore("a.b"), "nats: invalid stream name", nats.ErrInvalidStreamName)
	})
}
