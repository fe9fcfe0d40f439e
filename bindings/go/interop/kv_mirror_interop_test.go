package interop

// Key-Value mirrors and sources between the binding and nats.go: each
// reads the buckets the other makes, the binding makes a bucket's stream
// as nats.go's CreateKeyValue makes it, and mirrors of a bucket in another
// domain (a hub/leaf pair) read and write through the hub's domain with
// either client.

import (
	"context"
	"encoding/json"
	"testing"

	natsio "github.com/libnatsio/natsio/bindings/go"
	"github.com/nats-io/nats.go/jetstream"
)

// waitNatsioValue polls the binding's Get until key holds want (mirrors and
// sources copy asynchronously).
func waitNatsioValue(t *testing.T, ctx context.Context, kv *natsio.KeyValue, key, want string) {
	t.Helper()
	waitFor(t, func() bool {
		e, err := kv.Get(ctx, key)
		return err == nil && string(e.Value) == want
	})
}

// waitNatsGoValue is waitNatsioValue through nats.go.
func waitNatsGoValue(t *testing.T, ctx context.Context, kv jetstream.KeyValue, key, want string) {
	t.Helper()
	waitFor(t, func() bool {
		e, err := kv.Get(ctx, key)
		return err == nil && string(e.Value()) == want
	})
}

// kvStreamShape is what CreateKeyValue decides of a bucket's stream for a
// mirror or sources, as JSON (nats.go's types, as the server returns them).
func kvStreamShape(t *testing.T, ctx context.Context, js jetstream.JetStream, bucket string) string {
	t.Helper()
	info := got(got(js.Stream(ctx, "KV_"+bucket)).must(t).Info(ctx)).must(t)
	c := info.Config
	b, err := json.Marshal(map[string]any{"mirror": c.Mirror, "sources": c.Sources,
		"mirror_direct": c.MirrorDirect, "subjects": c.Subjects})
	noErr(t, err)
	return string(b)
}

// A bucket nats.go makes with Sources: the binding binds it, reads the
// sourced keys and sees its sources.
func TestKeyValueSourcesByNatsGoInterop(t *testing.T) {
	js, njs := clients(t)
	ctx := ctxFor(t)
	a := got(js.CreateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: "A"})).must(t)
	got(a.PutString(ctx, "x", "from a")).must(t)
	got(js.CreateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: "S",
		Sources: []*jetstream.StreamSource{{Name: "A"}}})).must(t)

	s := got(njs.KeyValue(ctx, "S")).must(t)
	waitNatsioValue(t, ctx, s, "x", "from a")
	src := got(s.Status(ctx)).must(t).Info.Config.Sources
	if len(src) != 1 || src[0].Name != "KV_A" || len(src[0].SubjectTransforms) != 1 ||
		src[0].SubjectTransforms[0] != (natsio.SubjectTransformConfig{Source: "$KV.A.>", Destination: "$KV.S.>"}) {
		b, _ := json.Marshal(src)
		t.Errorf("natsio sees sources %s", b)
	}
	// Its own writes stay in it, and nats.go reads them.
	got(s.Put(ctx, "own", []byte("mine"))).must(t)
	if e := got(got(js.KeyValue(ctx, "S")).must(t).Get(ctx, "own")).must(t); string(e.Value()) != "mine" {
		t.Errorf("nats.go reads own=%q", e.Value())
	}
}

// The binding makes a mirror's and a sourcing bucket's stream as nats.go
// does: nats.go binds them and its Status().Config() shows the mirror and
// sources it would have made; the streams are the same in mirror, sources,
// mirror_direct and subjects as the ones nats.go makes.
func TestKeyValueMirrorAndSourcesMadeAsNatsGoMakesThem(t *testing.T) {
	js, njs := clients(t)
	ctx := ctxFor(t)
	o1 := got(njs.CreateKeyValue(ctx, natsio.KeyValueConfig{Bucket: "O1"})).must(t)
	got(njs.CreateKeyValue(ctx, natsio.KeyValueConfig{Bucket: "O2"})).must(t)
	got(o1.Put(ctx, "k", []byte("v1"))).must(t)

	for _, c := range []struct {
		bucket  string
		mirror  string
		sources []string
	}{
		{bucket: "MM", mirror: "O1"},
		{bucket: "MK", mirror: "KV_O1"},
		{bucket: "MS", sources: []string{"O1", "KV_O2"}},
	} {
		var mine natsio.KeyValueConfig
		var theirs jetstream.KeyValueConfig
		mine.Bucket, theirs.Bucket = c.bucket, c.bucket
		if c.mirror != "" {
			mine.Mirror, theirs.Mirror = &natsio.StreamSource{Name: c.mirror}, &jetstream.StreamSource{Name: c.mirror}
		}
		for _, name := range c.sources {
			mine.Sources = append(mine.Sources, &natsio.StreamSource{Name: name})
			theirs.Sources = append(theirs.Sources, &jetstream.StreamSource{Name: name})
		}

		got(njs.CreateKeyValue(ctx, mine)).must(t)
		bound := got(js.KeyValue(ctx, c.bucket)).must(t)
		status := got(bound.Status(ctx)).must(t).Config()
		gotConfig, err := json.Marshal(map[string]any{"mirror": status.Mirror, "sources": status.Sources})
		noErr(t, err)
		made := kvStreamShape(t, ctx, js, c.bucket)
		if c.mirror != "" {
			// nats.go reads a mirror's keys on the mirror's own name (a
			// same-domain mirror answers not found there), so only the
			// stream is compared; the binding reads the mirrored keys.
			waitNatsioValue(t, ctx, got(njs.KeyValue(ctx, c.bucket)).must(t), "k", "v1")
		} else {
			waitNatsGoValue(t, ctx, bound, "k", "v1")
		}

		noErr(t, js.DeleteKeyValue(ctx, c.bucket))
		byNatsGo := got(js.CreateKeyValue(ctx, theirs)).must(t)
		want := got(byNatsGo.Status(ctx)).must(t).Config()
		wantConfig, err := json.Marshal(map[string]any{"mirror": want.Mirror, "sources": want.Sources})
		noErr(t, err)
		if string(gotConfig) != string(wantConfig) {
			t.Errorf("%s: nats.go's Config() of the binding's bucket\n %s\nof its own\n %s", c.bucket, gotConfig, wantConfig)
		}
		if wantStream := kvStreamShape(t, ctx, js, c.bucket); made != wantStream {
			t.Errorf("%s: the binding's stream\n %s\nnats.go's\n %s", c.bucket, made, wantStream)
		}
	}
}

// A mirror in the leaf of a bucket in the hub, one made by each client:
// both clients' handles of either mirror read the hub's keys and write to
// the hub's bucket through its domain.
func TestKeyValueMirrorAcrossDomainsInterop(t *testing.T) {
	hubURL, leafURL := startHubAndLeaf(t)
	hubJS, _ := clientsAt(t, hubURL, "")
	leafJS, leafNJS := clientsAt(t, leafURL, "")
	ctx := ctxFor(t)
	origin := got(hubJS.CreateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: "TEST"})).must(t)
	got(origin.PutString(ctx, "name", "derek")).must(t)

	got(leafNJS.CreateKeyValue(ctx, natsio.KeyValueConfig{Bucket: "MINE",
		Mirror: &natsio.StreamSource{Name: "TEST", Domain: "HUB"}})).must(t)
	got(leafJS.CreateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: "THEIRS",
		Mirror: &jetstream.StreamSource{Name: "TEST", Domain: "HUB"}})).must(t)
	if mine, theirs := kvStreamShape(t, ctx, leafJS, "MINE"), kvStreamShape(t, ctx, leafJS, "THEIRS"); mine != theirs {
		t.Errorf("the binding's mirror stream\n %s\nnats.go's\n %s", mine, theirs)
	}

	for _, bucket := range []string{"MINE", "THEIRS"} {
		ours := got(leafNJS.KeyValue(ctx, bucket)).must(t)
		theirs := got(leafJS.KeyValue(ctx, bucket)).must(t)
		// The mirror syncs once the leaf connection is up.
		waitNatsioValue(t, ctx, ours, "name", "derek")
		waitNatsGoValue(t, ctx, theirs, "name", "derek")
		writers := []struct {
			client string
			put    func(v string) error
		}{
			{"natsio", func(v string) error { _, err := ours.Put(ctx, "name", []byte(v)); return err }},
			{"nats.go", func(v string) error { _, err := theirs.PutString(ctx, "name", v); return err }},
		}
		for _, w := range writers {
			v := w.client + " via " + bucket
			noErr(t, w.put(v))
			if e := got(origin.Get(ctx, "name")).must(t); string(e.Value()) != v {
				t.Errorf("the hub's name=%q, want %q", e.Value(), v)
			}
			waitNatsioValue(t, ctx, ours, "name", v)
			waitNatsGoValue(t, ctx, theirs, "name", v)
		}
		// Back to the first value, for the next mirror.
		got(origin.PutString(ctx, "name", "derek")).must(t)
	}
}
