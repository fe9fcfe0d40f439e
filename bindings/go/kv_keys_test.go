package natsio_test

// Key-Value key listings: ListKeysFiltered with "*" and ">" and several
// filters, ListKeys as a KeyLister read through Keys() and Next, stopped
// midway, an empty bucket, bad filters and a missing bucket.

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	natsio "github.com/libnatsio/natsio/bindings/go"
)

// listed drains a lister through Keys(), sorted.
func listed(t *testing.T, r result[*natsio.KeyLister]) []string {
	t.Helper()
	l := r.must(t)
	var keys []string
	timeout := time.After(20 * time.Second)
	for {
		select {
		case k, ok := <-l.Keys():
			if !ok {
				if err := l.Err(); err != nil {
					t.Fatalf("listing ended with %v after %d keys", err, len(keys))
				}
				slices.Sort(keys)
				return keys
			}
			keys = append(keys, k)
		case <-timeout:
			t.Fatalf("listing did not end: %d keys so far", len(keys))
		}
	}
}

func TestKeyValueListKeysFiltered(t *testing.T) {
	_, js := jetStream(t)
	ctx := ctxTimeout(t, 30*time.Second)
	kv := got(js.CreateKeyValue(ctx, natsio.KeyValueConfig{Bucket: "LKF", History: 3, Storage: natsio.MemoryStorage})).must(t)
	if keys := listed(t, got(kv.ListKeysFiltered(ctx, "app.*"))); len(keys) != 0 {
		t.Fatalf("empty bucket listed %v", keys)
	}
	for _, k := range []string{"app.a", "app.b", "app.b.deep", "app.gone", "users.x.name", "users.y.mail", "other"} {
		got(kv.Put(ctx, k, []byte("v"))).must(t)
	}
	got(kv.Put(ctx, "app.a", []byte("again"))).must(t)
	noErr(t, kv.Delete(ctx, "app.gone"))

	for _, c := range []struct {
		filters []string
		want    []string
	}{
		{[]string{"app.*"}, []string{"app.a", "app.b"}},
		{[]string{"users.>"}, []string{"users.x.name", "users.y.mail"}},
		{[]string{"app.*.deep", "users.*.mail", "other", "other"}, []string{"app.b.deep", "other", "users.y.mail"}},
		{nil, []string{"app.a", "app.b", "app.b.deep", "other", "users.x.name", "users.y.mail"}},
	} {
		if keys := listed(t, got(kv.ListKeysFiltered(ctx, c.filters...))); !slices.Equal(keys, c.want) {
			t.Errorf("ListKeysFiltered(%q) = %v, want %v", c.filters, keys, c.want)
		}
	}
	for _, bad := range []string{"", "a.>.b", "a..b", "a b"} {
		_, err := kv.ListKeysFiltered(ctx, "app.*", bad)
		wantErr(t, err, natsio.ErrInvalidKey)
	}
	_, err := kv.ListKeysFiltered(ctx, "a\x00b")
	wantErr(t, err, natsio.ErrInvalidArgument)
	// Overlapping filters: the server refuses the consumer.
	l := got(kv.ListKeysFiltered(ctx, "app.*", "app.>")).must(t)
	_, err = l.Next(ctx)
	wantErr(t, err, natsio.ErrJetStreamAPI)
}

func TestKeyValueListKeys(t *testing.T) {
	_, js := jetStream(t)
	ctx := ctxTimeout(t, 60*time.Second)
	kv := got(js.CreateKeyValue(ctx, natsio.KeyValueConfig{Bucket: "LK", Storage: natsio.MemoryStorage})).must(t)
	// An empty bucket ends at once.
	empty := got(kv.ListKeys(ctx)).must(t)
	_, err := empty.Next(ctx)
	wantErr(t, err, natsio.ErrDone)

	const many = 1000
	for i := range many {
		got(kv.Put(ctx, fmt.Sprintf("k.%d", i), []byte("v"))).must(t)
	}
	noErr(t, kv.Purge(ctx, "k.3"))
	keys := listed(t, got(kv.ListKeys(ctx)))
	if len(keys) != many-1 || slices.Contains(keys, "k.3") || !slices.Contains(keys, "k.999") {
		t.Fatalf("%d keys listed (k.3 listed: %v)", len(keys), slices.Contains(keys, "k.3"))
	}
	if len(slices.Compact(keys)) != many-1 {
		t.Fatal("a key was listed twice")
	}

	// Next, then Stop midway: ErrDone, and Keys() is closed.
	l := got(kv.ListKeysFiltered(ctx, "k.*")).must(t)
	for range 10 {
		got(l.Next(ctx)).must(t)
	}
	noErr(t, l.Stop())
	noErr(t, l.Stop())
	_, err = l.Next(ctx)
	wantErr(t, err, natsio.ErrDone)
	st := got(l.Stats()).must(t)
	if st.Delivered != 10 {
		t.Fatalf("delivered %d", st.Delivered)
	}
	k := got(kv.ListKeys(ctx)).must(t)
	<-k.Keys()
	noErr(t, k.Stop())
	rest := 0
	for range k.Keys() { // what was already in the channel, then closed
		rest++
	}
	if rest >= many-2 {
		t.Fatalf("%d more keys after Stop", rest)
	}

	// A deleted bucket: ErrBucketNotFound from Next, and from Err once
	// Keys() is closed.
	noErr(t, js.DeleteKeyValue(ctx, "LK"))
	gone := got(kv.ListKeys(ctx)).must(t)
	_, err = gone.Next(ctx)
	wantErr(t, err, natsio.ErrBucketNotFound)
	gone2 := got(kv.ListKeys(ctx)).must(t)
	for range gone2.Keys() {
		t.Fatal("a key of a deleted bucket")
	}
	if !errors.Is(gone2.Err(), natsio.ErrBucketNotFound) {
		t.Fatalf("Err() = %v", gone2.Err())
	}
}
