package natsio_test

// Key-Value: resumed watches, PurgeDeletes, per-key TTLs (KeyTTL,
// PurgeTTL), bucket listing and the typed status.

import (
	"errors"
	"slices"
	"testing"
	"time"

	natsio "github.com/libnatsio/natsio/bindings/go"
)

// waitValue polls Get until key holds want (a mirror or source copies
// asynchronously; and a bucket with a mirror has its Direct Gets answered
// by the mirror too, which may not have a write yet), failing after 10 s;
// the entry read.
func waitValue(t *testing.T, kv *natsio.KeyValue, key, want string) *natsio.KeyValueEntry {
	t.Helper()
	var last string
	var err error
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		var e *natsio.KeyValueEntry
		if e, err = kv.Get(ctxTimeout(t, 5*time.Second), key); err == nil {
			if last = string(e.Value); last == want {
				return e
			}
		}
	}
	t.Fatalf("%s in %s: %q (%v), want %q", key, kv.Bucket(), last, err, want)
	return nil
}

// waitKeyNotFound polls Get until the key has left no trace
// (ErrKeyNotFound), failing after within.
func waitKeyNotFound(t *testing.T, kv *natsio.KeyValue, key string, within time.Duration) time.Duration {
	t.Helper()
	start := time.Now()
	for {
		_, err := kv.Get(ctxTimeout(t, 5*time.Second), key)
		// ErrKeyDeleted is also ErrKeyNotFound: gone is not-found only.
		if errors.Is(err, natsio.ErrKeyNotFound) && !errors.Is(err, natsio.ErrKeyDeleted) {
			return time.Since(start)
		}
		if err != nil && !errors.Is(err, natsio.ErrKeyDeleted) {
			t.Fatalf("Get %s: %v", key, err)
		}
		if time.Since(start) > within {
			t.Fatalf("%s still there after %v (last: %v)", key, within, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func TestKeyValueWatchResumeFromRevision(t *testing.T) {
	_, js := jetStream(t)
	ctx := ctxTimeout(t, 20*time.Second)
	kv := got(js.CreateKeyValue(ctx, natsio.KeyValueConfig{Bucket: "R", History: 5})).must(t)
	got(kv.Put(ctx, "a", []byte("a1"))).must(t)         // 1
	got(kv.Put(ctx, "b", []byte("b1"))).must(t)         // 2
	from := got(kv.Put(ctx, "a", []byte("a2"))).must(t) // 3
	noErr(t, kv.Delete(ctx, "b"))                       // 4
	last := got(kv.Put(ctx, "c", []byte("c1"))).must(t) // 5
	if from != 3 || last != 5 {
		t.Fatalf("revisions %d, %d", from, last)
	}

	// Exactly the revisions from 3 on (a1 and b1 are left out although a's
	// and b's latest revisions come), then the marker, then changes.
	w := got(kv.WatchAll(ctx, natsio.ResumeFromRevision(from))).must(t)
	defer w.Stop()
	var revs []uint64
	for range 3 {
		e := got(w.Next(ctx)).must(t)
		if e == nil {
			t.Fatalf("marker after %v", revs)
		}
		revs = append(revs, e.Revision)
		wantEvents(t, []event{eventOf(e)}, []event{put("a", "a2"), del("b"), put("c", "c1")}[len(revs)-1])
	}
	if !slices.Equal(revs, []uint64{3, 4, 5}) {
		t.Fatalf("revisions %v", revs)
	}
	wantEvents(t, nextEvents(t, w, 1), initialDone)
	got(kv.Put(ctx, "d", []byte("live"))).must(t)
	wantEvents(t, nextEvents(t, w, 1), put("d", "live"))
	quiet(t, w)

	// With a pattern and IgnoreDeletes: b's marker is left out.
	f := got(kv.Watch(ctx, "a,b", natsio.ResumeFromRevision(2), natsio.IgnoreDeletes())).must(t)
	defer f.Stop()
	wantEvents(t, nextEvents(t, f, 3), put("b", "b1"), put("a", "a2"), initialDone)

	// From the next revision to be written: the marker at once, then
	// changes.
	n := got(kv.WatchAll(ctx, natsio.ResumeFromRevision(7))).must(t)
	defer n.Stop()
	wantEvents(t, nextEvents(t, n, 1), initialDone)
	got(kv.Put(ctx, "e", []byte("next"))).must(t)
	wantEvents(t, nextEvents(t, n, 1), put("e", "next"))

	_, err := kv.WatchAll(ctx, natsio.ResumeFromRevision(1), natsio.UpdatesOnly())
	wantErr(t, err, natsio.ErrInvalidArgument)
}

// DeleteMarkersOlderThan(0) is the default threshold (30 minutes), not
// "every marker" (conformance: the same in every binding): a young marker
// stays, only the revisions before it go.
func TestKeyValuePurgeDeletesZeroIsTheDefault(t *testing.T) {
	_, js := jetStream(t)
	ctx := ctxTimeout(t, 20*time.Second)
	kv := got(js.CreateKeyValue(ctx, natsio.KeyValueConfig{Bucket: "PZ", History: 5, Storage: natsio.MemoryStorage})).must(t)
	got(kv.Put(ctx, "a", []byte("a1"))).must(t)
	noErr(t, kv.Delete(ctx, "a"))
	if n := got(kv.PurgeDeletes(ctx, natsio.DeleteMarkersOlderThan(0))).must(t); n != 1 {
		t.Fatalf("PurgeDeletes(0) removed %d, want a1 only", n)
	}
	if h := got(kv.History(ctx, "a")).must(t); len(h) != 1 || h[0].Operation != natsio.KeyValueDelete {
		t.Fatalf("a's history after PurgeDeletes(0) %+v, want its marker", h)
	}
}

func TestKeyValuePurgeDeletes(t *testing.T) {
	_, js := jetStream(t)
	ctx := ctxTimeout(t, 20*time.Second)
	kv := got(js.CreateKeyValue(ctx, natsio.KeyValueConfig{Bucket: "P", History: 5, Storage: natsio.MemoryStorage})).must(t)
	got(kv.Put(ctx, "a", []byte("a1"))).must(t)
	got(kv.Put(ctx, "a", []byte("a2"))).must(t)
	noErr(t, kv.Delete(ctx, "a"))
	got(kv.Put(ctx, "b", []byte("b1"))).must(t)
	noErr(t, kv.Purge(ctx, "b"))
	got(kv.Put(ctx, "c", []byte("c1"))).must(t)
	got(kv.Put(ctx, "c", []byte("c2"))).must(t)

	// Default threshold (30 min): the young markers stay, the revisions
	// before them go; keys holding values are not touched.
	n := got(kv.PurgeDeletes(ctx)).must(t)
	if n != 2 {
		t.Fatalf("default PurgeDeletes removed %d, want a1 and a2", n)
	}
	if h := got(kv.History(ctx, "a")).must(t); len(h) != 1 || h[0].Operation != natsio.KeyValueDelete {
		t.Fatalf("a's history after the default purge %+v", h)
	}
	if h := got(kv.History(ctx, "b")).must(t); len(h) != 1 || h[0].Operation != natsio.KeyValuePurge {
		t.Fatalf("b's history after the default purge %+v", h)
	}
	if h := got(kv.History(ctx, "c")).must(t); len(h) != 2 {
		t.Fatalf("c's history %+v", h)
	}
	_, err := kv.Get(ctx, "a")
	wantErr(t, err, natsio.ErrKeyDeleted)

	// A threshold longer than their age keeps them too.
	if n := got(kv.PurgeDeletes(ctx, natsio.DeleteMarkersOlderThan(time.Hour))).must(t); n != 0 {
		t.Fatalf("PurgeDeletes(1h) removed %d", n)
	}
	if h := got(kv.History(ctx, "a")).must(t); len(h) != 1 {
		t.Fatalf("a's history after PurgeDeletes(1h) %+v", h)
	}

	// A negative threshold removes every marker: the keys leave no trace.
	if n := got(kv.PurgeDeletes(ctx, natsio.DeleteMarkersOlderThan(-1))).must(t); n != 2 {
		t.Fatalf("PurgeDeletes(-1) removed %d, want the two markers", n)
	}
	for _, k := range []string{"a", "b"} {
		_, err := kv.History(ctx, k)
		wantErr(t, err, natsio.ErrKeyNotFound)
		_, err = kv.Get(ctx, k)
		wantErr(t, err, natsio.ErrKeyNotFound)
	}
	if keys := got(kv.Keys(ctx)).must(t); !slices.Equal(keys, []string{"c"}) {
		t.Fatalf("keys %v", keys)
	}
	if h := got(kv.History(ctx, "c")).must(t); len(h) != 2 {
		t.Fatalf("c's history after PurgeDeletes(-1) %+v", h)
	}

	// A marker older than a short positive threshold goes entirely.
	noErr(t, kv.Delete(ctx, "c"))
	time.Sleep(100 * time.Millisecond)
	if n := got(kv.PurgeDeletes(ctx, natsio.DeleteMarkersOlderThan(20*time.Millisecond))).must(t); n != 3 {
		t.Fatalf("PurgeDeletes(20ms) removed %d, want c's two values and marker", n)
	}
	_, err = kv.History(ctx, "c")
	wantErr(t, err, natsio.ErrKeyNotFound)
	if n := got(kv.PurgeDeletes(ctx)).must(t); n != 0 {
		t.Fatalf("PurgeDeletes on a bucket without markers removed %d", n)
	}

	noErr(t, js.DeleteKeyValue(ctx, "P"))
	_, err = kv.PurgeDeletes(ctx)
	wantErr(t, err, natsio.ErrBucketNotFound)
}

func TestKeyValueCreateWithTTL(t *testing.T) {
	_, js := jetStream(t)
	ctx := ctxTimeout(t, 30*time.Second)
	kv := got(js.CreateKeyValue(ctx, natsio.KeyValueConfig{Bucket: "T", History: 3, LimitMarkerTTL: time.Second})).must(t)

	for _, bad := range []time.Duration{-time.Second, time.Millisecond, 500 * time.Millisecond, 1500 * time.Millisecond} {
		_, err := kv.Create(ctx, "k", []byte("v"), natsio.KeyTTL(bad))
		wantErr(t, err, natsio.ErrInvalidArgument, "KeyTTL")
	}
	_, err := kv.Get(ctx, "k")
	wantErr(t, err, natsio.ErrKeyNotFound)

	w := got(kv.Watch(ctx, "k", natsio.UpdatesOnly())).must(t)
	defer w.Stop()
	wantEvents(t, nextEvents(t, w, 1), initialDone)

	rev := got(kv.Create(ctx, "k", []byte("short"), natsio.KeyTTL(time.Second))).must(t)
	_, err = kv.Create(ctx, "k", []byte("again"), natsio.KeyTTL(time.Second))
	wantErr(t, err, natsio.ErrKeyExists)
	if e := got(kv.Get(ctx, "k")).must(t); string(e.Value) != "short" || e.Revision != rev {
		t.Fatalf("entry %+v", e)
	}
	took := waitKeyNotFound(t, kv, "k", 5*time.Second)
	t.Logf("k gone after %v", took)
	if took < 500*time.Millisecond {
		t.Fatalf("k gone after %v, before its TTL", took)
	}
	// The watch saw the value, then the server's purge marker.
	wantEvents(t, nextEvents(t, w, 2), put("k", "short"), purge("k"))

	// Created again (no TTL: the plain create), and with KeyTTLNever.
	got(kv.Create(ctx, "k", []byte("plain"))).must(t)
	got(kv.Create(ctx, "forever", []byte("v"), natsio.KeyTTLNever())).must(t)
	got(kv.Create(ctx, "zero", []byte("v"), natsio.KeyTTL(0))).must(t)

	// A bucket without LimitMarkerTTL refuses per-key TTLs.
	plain := got(js.CreateKeyValue(ctx, natsio.KeyValueConfig{Bucket: "NOTTL"})).must(t)
	_, err = plain.Create(ctx, "k", []byte("v"), natsio.KeyTTL(time.Second))
	wantErr(t, err, natsio.ErrJetStreamAPI)
}

func TestKeyValuePutWithTTL(t *testing.T) {
	_, js := jetStream(t)
	ctx := ctxTimeout(t, 30*time.Second)
	kv := got(js.CreateKeyValue(ctx, natsio.KeyValueConfig{Bucket: "PUTT", History: 3, LimitMarkerTTL: time.Second})).must(t)
	_, err := kv.Put(ctx, "k", []byte("v"), natsio.KeyTTL(1500*time.Millisecond))
	wantErr(t, err, natsio.ErrInvalidArgument, "KeyTTL")

	w := got(kv.Watch(ctx, "k", natsio.UpdatesOnly())).must(t)
	defer w.Stop()
	wantEvents(t, nextEvents(t, w, 1), initialDone)
	rev := got(kv.Put(ctx, "k", []byte("short"), natsio.KeyTTL(time.Second))).must(t)
	if e := got(kv.Get(ctx, "k")).must(t); string(e.Value) != "short" || e.Revision != rev {
		t.Fatalf("entry %+v", e)
	}
	took := waitKeyNotFound(t, kv, "k", 5*time.Second)
	t.Logf("k gone after %v", took)
	if took < 500*time.Millisecond {
		t.Fatalf("k gone after %v, before its TTL", took)
	}
	wantEvents(t, nextEvents(t, w, 2), put("k", "short"), purge("k"))
	// Without options, as nats.go's Put; KeyTTLNever keeps the value.
	got(kv.Put(ctx, "plain", []byte("v"))).must(t)
	got(kv.Put(ctx, "forever", []byte("v"), natsio.KeyTTLNever())).must(t)

	plain := got(js.CreateKeyValue(ctx, natsio.KeyValueConfig{Bucket: "NOPUTT"})).must(t)
	_, err = plain.Put(ctx, "k", []byte("v"), natsio.KeyTTL(time.Second))
	wantErr(t, err, natsio.ErrJetStreamAPI)
}

func TestKeyValuePurgeWithTTL(t *testing.T) {
	_, js := jetStream(t)
	ctx := ctxTimeout(t, 30*time.Second)
	kv := got(js.CreateKeyValue(ctx, natsio.KeyValueConfig{Bucket: "PT", History: 5, LimitMarkerTTL: time.Second})).must(t)
	r1 := got(kv.Put(ctx, "k", []byte("v1"))).must(t)
	got(kv.Put(ctx, "k", []byte("v2"))).must(t)

	noErr(t, kv.Delete(ctx, "other"))
	err := kv.Delete(ctx, "k", natsio.PurgeTTL(time.Second))
	wantErr(t, err, natsio.ErrInvalidArgument, "PurgeTTL")
	err = kv.Purge(ctx, "k", natsio.PurgeTTL(1200*time.Millisecond))
	wantErr(t, err, natsio.ErrInvalidArgument, "PurgeTTL")
	err = kv.Purge(ctx, "k", natsio.PurgeTTL(time.Second), natsio.LastRevision(r1))
	wantErr(t, err, natsio.ErrWrongLastSequence)

	noErr(t, kv.Purge(ctx, "k", natsio.PurgeTTL(time.Second)))
	_, err = kv.Get(ctx, "k")
	wantErr(t, err, natsio.ErrKeyDeleted)
	if h := got(kv.History(ctx, "k")).must(t); len(h) != 1 || h[0].Operation != natsio.KeyValuePurge {
		t.Fatalf("history after the purge %+v", h)
	}
	took := waitKeyNotFound(t, kv, "k", 5*time.Second)
	t.Logf("purge marker gone after %v", took)
	_, err = kv.History(ctx, "k")
	wantErr(t, err, natsio.ErrKeyNotFound)
	// The plain delete marker of "other" has no TTL: it stays.
	_, err = kv.Get(ctx, "other")
	wantErr(t, err, natsio.ErrKeyDeleted)

	got(kv.Put(ctx, "n", []byte("v"))).must(t)
	noErr(t, kv.Purge(ctx, "n", natsio.PurgeTTLNever()))
	_, err = kv.Get(ctx, "n")
	wantErr(t, err, natsio.ErrKeyDeleted)
}

func TestKeyValueStoreNamesAndStatuses(t *testing.T) {
	_, js := jetStream(t)
	ctx := ctxTimeout(t, 20*time.Second)

	if names := got(js.KeyValueStoreNames(ctx)).must(t); names == nil || len(names) != 0 {
		t.Fatalf("names with no buckets %#v", names)
	}
	if sts := got(js.KeyValueStores(ctx)).must(t); sts == nil || len(sts) != 0 {
		t.Fatalf("statuses with no buckets %#v", sts)
	}

	got(js.CreateKeyValue(ctx, natsio.KeyValueConfig{Bucket: "ONE", History: 2})).must(t)
	two := got(js.CreateKeyValue(ctx, natsio.KeyValueConfig{Bucket: "TWO", TTL: time.Hour, Storage: natsio.MemoryStorage})).must(t)
	got(two.Put(ctx, "k", []byte("v"))).must(t)
	// Streams that are not buckets: a plain one, one named like a bucket
	// on other subjects, and an Object Store bucket.
	got(js.CreateStream(ctx, natsio.StreamConfig{Name: "ORDERS", Subjects: []string{"orders.>"}})).must(t)
	got(js.CreateStream(ctx, natsio.StreamConfig{Name: "KV_FAKE", Subjects: []string{"fake.>"}})).must(t)
	got(js.CreateObjectStore(ctx, natsio.ObjectStoreConfig{Bucket: "FILES"})).must(t)

	names := got(js.KeyValueStoreNames(ctx)).must(t)
	slices.Sort(names)
	if !slices.Equal(names, []string{"ONE", "TWO"}) {
		t.Fatalf("names %v", names)
	}
	sts := got(js.KeyValueStores(ctx)).must(t)
	slices.SortFunc(sts, func(a, b *natsio.KeyValueStatus) int {
		if a.Bucket < b.Bucket {
			return -1
		}
		if a.Bucket > b.Bucket {
			return 1
		}
		return 0
	})
	if len(sts) != 2 {
		t.Fatalf("%d statuses", len(sts))
	}
	one, st2 := sts[0], sts[1]
	if one.Bucket != "ONE" || one.History != 2 || one.TTL != 0 || one.Storage != natsio.FileStorage || one.Values != 0 ||
		one.Info == nil || one.Info.Config.Name != "KV_ONE" {
		t.Fatalf("ONE %+v", one)
	}
	if st2.Bucket != "TWO" || st2.History != 1 || st2.TTL != time.Hour || st2.Storage != natsio.MemoryStorage || st2.Values != 1 ||
		st2.Bytes == 0 || st2.Info == nil || st2.Info.Config.Name != "KV_TWO" {
		t.Fatalf("TWO %+v", st2)
	}

	noErr(t, js.DeleteKeyValue(ctx, "ONE"))
	if names := got(js.KeyValueStoreNames(ctx)).must(t); !slices.Equal(names, []string{"TWO"}) {
		t.Fatalf("names after a delete %v", names)
	}
}

func TestKeyValueTypedStatus(t *testing.T) {
	_, js := jetStream(t)
	ctx := ctxTimeout(t, 20*time.Second)
	cfg := natsio.KeyValueConfig{
		Bucket: "ST", Description: "typed status", History: 5, TTL: time.Hour, Storage: natsio.MemoryStorage,
		Compression: true, LimitMarkerTTL: 2 * time.Second, Metadata: map[string]string{"team": "kv"},
	}
	kv := got(js.CreateKeyValue(ctx, cfg)).must(t)
	got(kv.Put(ctx, "a", []byte("1"))).must(t)
	got(kv.Put(ctx, "a", []byte("2"))).must(t)
	noErr(t, kv.Delete(ctx, "b"))

	st := got(kv.Status(ctx)).must(t)
	if st.Bucket != "ST" || st.Description != "typed status" || st.History != 5 || st.TTL != time.Hour ||
		st.Storage != natsio.MemoryStorage || st.Replicas != 1 || !st.IsCompressed ||
		st.LimitMarkerTTL != 2*time.Second || st.Metadata["team"] != "kv" || st.Values != 3 || st.Bytes == 0 {
		t.Fatalf("status %+v", st)
	}
	if st.Info == nil || st.Info.Config.Name != "KV_ST" || st.Info.State.Msgs != 3 || len(st.Info.Raw) == 0 ||
		st.Info.Config.SubjectDeleteMarkerTTL != 2*time.Second {
		t.Fatalf("stream info %+v", st.Info)
	}

	// A plain bucket: the defaults.
	plain := got(js.CreateKeyValue(ctx, natsio.KeyValueConfig{Bucket: "PLAIN"})).must(t)
	ps := got(plain.Status(ctx)).must(t)
	if ps.Bucket != "PLAIN" || ps.History != 1 || ps.TTL != 0 || ps.Storage != natsio.FileStorage || ps.IsCompressed ||
		ps.LimitMarkerTTL != 0 || ps.Description != "" || ps.Values != 0 {
		t.Fatalf("plain status %+v", ps)
	}

	noErr(t, js.DeleteKeyValue(ctx, "ST"))
	_, err := kv.Status(ctx)
	wantErr(t, err, natsio.ErrBucketNotFound)
}
