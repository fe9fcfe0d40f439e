package interop

// Key-Value between the binding and nats.go: bucket listing and status
// either way, and per-key TTLs (the Nats-TTL header one writes, the
// expiry and the server's purge marker the other sees).

import (
	"bytes"
	"compress/zlib"
	"context"
	"encoding/base64"
	"errors"
	"io"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	natsio "github.com/libnatsio/natsio/bindings/go"
	"github.com/nats-io/nats.go/jetstream"
)

// ttlHeader reads a Nats-TTL header value ("5s", or whole seconds "5").
func ttlHeader(t *testing.T, v string) time.Duration {
	t.Helper()
	if n, err := strconv.ParseInt(v, 10, 64); err == nil {
		return time.Duration(n) * time.Second
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		t.Fatalf("Nats-TTL %q: %v", v, err)
	}
	return d
}

func TestKeyValueStatusInterop(t *testing.T) {
	js, njs := clients(t)
	ctx := ctxFor(t)

	mine := got(njs.CreateKeyValue(ctx, natsio.KeyValueConfig{
		Bucket: "NB", Description: "made by natsio", History: 4, TTL: time.Hour,
		Storage: natsio.MemoryStorage, LimitMarkerTTL: time.Second,
	})).must(t)
	got(mine.Put(ctx, "k", []byte("v"))).must(t)
	theirs := got(js.CreateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: "NG", History: 3, TTL: 30 * time.Minute})).must(t)
	got(theirs.Put(ctx, "a", []byte("1"))).must(t)
	got(theirs.Put(ctx, "b", []byte("2"))).must(t)
	got(js.CreateStream(ctx, jetstream.StreamConfig{Name: "ORDERS", Subjects: []string{"orders.>"}})).must(t)

	// nats.go lists and reads the binding's bucket.
	lister := js.KeyValueStoreNames(ctx)
	var names []string
	for n := range lister.Name() {
		names = append(names, n)
	}
	noErr(t, lister.Error())
	slices.Sort(names)
	if !slices.Equal(names, []string{"NB", "NG"}) {
		t.Fatalf("nats.go KeyValueStoreNames %v", names)
	}
	statuses := js.KeyValueStores(ctx)
	seen := map[string]jetstream.KeyValueStatus{}
	for st := range statuses.Status() {
		seen[st.Bucket()] = st
	}
	noErr(t, statuses.Error())
	if len(seen) != 2 || seen["NB"] == nil || seen["NB"].History() != 4 || seen["NB"].TTL() != time.Hour {
		t.Fatalf("nats.go KeyValueStores %v", seen)
	}
	nkv := got(js.KeyValue(ctx, "NB")).must(t)
	nst := got(nkv.Status(ctx)).must(t)
	if nst.Bucket() != "NB" || nst.History() != 4 || nst.TTL() != time.Hour || nst.Values() != 1 ||
		nst.LimitMarkerTTL() != time.Second || nst.BackingStore() != "JetStream" {
		t.Fatalf("nats.go status of NB: bucket %s history %d ttl %v values %d marker ttl %v",
			nst.Bucket(), nst.History(), nst.TTL(), nst.Values(), nst.LimitMarkerTTL())
	}
	if ks, ok := nst.(*jetstream.KeyValueBucketStatus); !ok || ks.StreamInfo().Config.Description != "made by natsio" ||
		ks.StreamInfo().Config.Storage != jetstream.MemoryStorage {
		t.Fatalf("nats.go stream info of NB %+v", nst)
	}

	// The binding lists and reads nats.go's bucket, as nats.go does.
	mnames := got(njs.KeyValueStoreNames(ctx)).must(t)
	slices.Sort(mnames)
	if !slices.Equal(mnames, names) {
		t.Fatalf("natsio KeyValueStoreNames %v", mnames)
	}
	var ng *natsio.KeyValueStatus
	for _, st := range got(njs.KeyValueStores(ctx)).must(t) {
		if st.Bucket == "NG" {
			ng = st
		}
	}
	gst := got(theirs.Status(ctx)).must(t)
	if ng == nil || ng.History != gst.History() || ng.TTL != gst.TTL() || ng.Values != gst.Values() ||
		ng.Bytes != gst.Bytes() || ng.History != 3 || ng.Values != 2 || ng.IsCompressed != gst.IsCompressed() {
		t.Fatalf("natsio status of NG %+v, nats.go's history %d ttl %v values %d bytes %d",
			ng, gst.History(), gst.TTL(), gst.Values(), gst.Bytes())
	}
	bound := got(njs.KeyValue(ctx, "NG")).must(t)
	if st := got(bound.Status(ctx)).must(t); st.History != 3 || st.TTL != 30*time.Minute || st.Storage != natsio.FileStorage {
		t.Fatalf("natsio Status of NG %+v", st)
	}
}

func TestKeyValueTTLInterop(t *testing.T) {
	js, njs := clients(t)
	ctx := ctxFor(t)
	mine := got(njs.CreateKeyValue(ctx, natsio.KeyValueConfig{Bucket: "TT", History: 3, LimitMarkerTTL: time.Second})).must(t)
	theirs := got(js.KeyValue(ctx, "TT")).must(t)

	// The binding's KeyTTL is the Nats-TTL header nats.go reads.
	got(mine.Create(ctx, "long", []byte("v"), natsio.KeyTTL(30*time.Second))).must(t)
	stream := got(js.Stream(ctx, "KV_TT")).must(t)
	raw := got(stream.GetLastMsgForSubject(ctx, "$KV.TT.long")).must(t)
	if d := ttlHeader(t, raw.Header.Get(jetstream.MsgTTLHeader)); d != 30*time.Second {
		t.Fatalf("Nats-TTL of long %v", d)
	}
	if e := got(theirs.Get(ctx, "long")).must(t); string(e.Value()) != "v" {
		t.Fatalf("nats.go Get %q", e.Value())
	}

	// nats.go sees a key the binding created with a 1 s TTL expire: the
	// server's purge marker, then nothing.
	// (nats.go's UpdatesOnly watch sends no nil marker.)
	nw := got(theirs.Watch(ctx, "short", jetstream.UpdatesOnly())).must(t)
	defer nw.Stop()
	got(mine.Create(ctx, "short", []byte("brief"), natsio.KeyTTL(time.Second))).must(t)
	var ops []jetstream.KeyValueOp
	for len(ops) < 2 {
		select {
		case e := <-nw.Updates():
			if e == nil || e.Key() != "short" {
				t.Fatalf("nats.go watch: %v after %v", e, ops)
			}
			ops = append(ops, e.Operation())
		case <-time.After(5 * time.Second):
			t.Fatalf("nats.go watch: %v after 5 s", ops)
		}
	}
	if !slices.Equal(ops, []jetstream.KeyValueOp{jetstream.KeyValuePut, jetstream.KeyValuePurge}) {
		t.Fatalf("nats.go watch ops %v", ops)
	}

	// The binding sees a key nats.go created with KeyTTL expire.
	mw := got(mine.Watch(ctx, "theirs", natsio.UpdatesOnly())).must(t)
	defer mw.Stop()
	if e := got(mw.Next(ctx)).must(t); e != nil {
		t.Fatalf("natsio watch: %+v before the marker", e)
	}
	got(theirs.Create(ctx, "theirs", []byte("x"), jetstream.KeyTTL(time.Second))).must(t)
	for _, want := range []natsio.KeyValueOp{natsio.KeyValuePut, natsio.KeyValuePurge} {
		wctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		e, err := mw.Next(wctx)
		cancel()
		if err != nil {
			h, herr := theirs.History(ctx, "theirs")
			for _, x := range h {
				t.Logf("nats.go history: rev %d op %v", x.Revision(), x.Operation())
			}
			t.Fatalf("natsio watch, waiting for %v: %v (history err %v)", want, err, herr)
		}
		if e == nil || e.Key != "theirs" || e.Operation != want {
			t.Fatalf("natsio watch %+v, want %v", e, want)
		}
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		_, err := mine.Get(ctx, "theirs")
		if errors.Is(err, natsio.ErrKeyNotFound) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("theirs still there: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}

	// The binding's PurgeTTL marker carries the header and the purge
	// operation nats.go reads.
	got(mine.Put(ctx, "p", []byte("v"))).must(t)
	noErr(t, mine.Purge(ctx, "p", natsio.PurgeTTL(20*time.Second)))
	raw = got(stream.GetLastMsgForSubject(ctx, "$KV.TT.p")).must(t)
	if d := ttlHeader(t, raw.Header.Get(jetstream.MsgTTLHeader)); d != 20*time.Second ||
		!strings.EqualFold(raw.Header.Get("KV-Operation"), "PURGE") {
		t.Fatalf("purge marker headers %v", raw.Header)
	}
	_, err := theirs.Get(ctx, "p")
	if !errors.Is(err, jetstream.ErrKeyNotFound) {
		t.Fatalf("nats.go Get of a purged key: %v", err)
	}
	hist := got(theirs.History(ctx, "p")).must(t)
	if len(hist) != 1 || hist[0].Operation() != jetstream.KeyValuePurge {
		t.Fatalf("nats.go history of p %v", hist)
	}
}

func TestKeyValueListKeysInterop(t *testing.T) {
	js, njs := clients(t)
	ctx := ctxFor(t)
	theirs := got(js.CreateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: "LKI", History: 3})).must(t)
	for _, k := range []string{"app.a", "app.b", "app.b.deep", "app.gone", "users.x"} {
		got(theirs.Put(ctx, k, []byte("v"))).must(t)
	}
	noErr(t, theirs.Delete(ctx, "app.gone"))
	mine := got(njs.KeyValue(ctx, "LKI")).must(t)

	// The binding lists, with filters, the keys nats.go put.
	collect := func(l *natsio.KeyLister) []string {
		var keys []string
		for k := range l.Keys() {
			keys = append(keys, k)
		}
		noErr(t, l.Err())
		slices.Sort(keys)
		return keys
	}
	if keys := collect(got(mine.ListKeysFiltered(ctx, "app.*")).must(t)); !slices.Equal(keys, []string{"app.a", "app.b"}) {
		t.Fatalf("ListKeysFiltered(app.*) %v", keys)
	}
	if keys := collect(got(mine.ListKeysFiltered(ctx, "app.>", "users.*")).must(t)); !slices.Equal(keys, []string{"app.a", "app.b", "app.b.deep", "users.x"}) {
		t.Fatalf("ListKeysFiltered(app.>, users.*) %v", keys)
	}

	// nats.go lists, with a filter, the keys the binding put and deleted.
	got(mine.Put(ctx, "users.y", []byte("v"))).must(t)
	noErr(t, mine.Delete(ctx, "users.x"))
	nl := got(theirs.ListKeysFiltered(ctx, "users.*")).must(t)
	var theirKeys []string
	for k := range nl.Keys() {
		theirKeys = append(theirKeys, k)
	}
	if !slices.Equal(theirKeys, []string{"users.y"}) {
		t.Fatalf("nats.go ListKeysFiltered(users.*) %v", theirKeys)
	}
}

// base64Key is a key in the stored form of a per-token base64 key codec:
// nats.js's Base64KeyCodec (std) or orbit.go kvcodec's (RawURL).
func base64Key(key string, enc *base64.Encoding) string {
	tokens := strings.Split(key, ".")
	for i, tok := range tokens {
		tokens[i] = enc.EncodeToString([]byte(tok))
	}
	return strings.Join(tokens, ".")
}

// KV codecs: nats.go has none, so it writes and reads the stored form
// itself (what nats.js's Base64KeyCodec and orbit.go's kvcodec store); the
// binding's codec handle reads what nats.go stored and the reverse.
func TestKeyValueCodecsInterop(t *testing.T) {
	js, njs := clients(t)
	ctx := ctxFor(t)
	theirs := got(js.CreateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: "CODECI"})).must(t)
	plain := got(njs.KeyValue(ctx, "CODECI")).must(t)
	z := got(natsio.ZlibValueCodec(-1)).must(t)
	mine := got(plain.WithCodecs(natsio.Base64KeyCodec(), z)).must(t)

	// nats.go stores nats.js's and orbit.go's forms with zlib data.
	deflate := func(s string) []byte {
		var b bytes.Buffer
		w := zlib.NewWriter(&b)
		_, _ = w.Write([]byte(s))
		noErr(t, w.Close())
		return b.Bytes()
	}
	got(theirs.Put(ctx, base64Key("from.nats js", base64.StdEncoding), deflate("std"))).must(t)
	got(theirs.Put(ctx, base64Key("from.orbit~~~", base64.RawURLEncoding), deflate("url"))).must(t)
	if e := got(mine.Get(ctx, "from.nats js")).must(t); string(e.Value) != "std" {
		t.Fatalf("nats.js form read as %q", e.Value)
	}
	// A get encodes its key: orbit.go's form through the URL-safe codec
	// (the standard one would look for "b3JiaXR+fn4=", not a valid key).
	url := got(plain.WithCodecs(natsio.Base64URLKeyCodec(), z)).must(t)
	if e := got(url.Get(ctx, "from.orbit~~~")).must(t); string(e.Value) != "url" {
		t.Fatalf("orbit.go form read as %q", e.Value)
	}

	// The binding stores nats.js's form; nats.go reads and inflates it.
	got(mine.Put(ctx, "from.natsio", []byte("mine"))).must(t)
	e := got(theirs.Get(ctx, base64Key("from.natsio", base64.StdEncoding))).must(t)
	r := got(zlib.NewReader(bytes.NewReader(e.Value()))).must(t)
	if v := got(io.ReadAll(r)).must(t); string(v) != "mine" {
		t.Fatalf("nats.go inflated %q", v)
	}
	// Decoding takes either form: the listing decodes every key.
	keys := got(mine.Keys(ctx)).must(t)
	slices.Sort(keys)
	if !slices.Equal(keys, []string{"from.nats js", "from.natsio", "from.orbit~~~"}) {
		t.Fatalf("keys %v", keys)
	}
}
