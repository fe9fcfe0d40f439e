package natsio_test

// Key-Value mirrors and sources (KeyValueConfig.Mirror / Sources, made as
// nats.go's CreateKeyValue makes them), in one domain and across a
// hub/leaf pair, and StreamSource.Domain.

import (
	"context"
	"errors"
	"reflect"
	"slices"
	"testing"
	"time"

	natsio "github.com/libnatsio/natsio/bindings/go"
)

// bucketStream is the stream config behind kv, from its status.
func bucketStream(t *testing.T, ctx context.Context, kv *natsio.KeyValue) natsio.StreamConfig {
	t.Helper()
	st := got(kv.Status(ctx)).must(t)
	if st.Info == nil {
		t.Fatalf("%s: status without stream info", kv.Bucket())
	}
	return st.Info.Config
}

func TestKeyValueMirrorReadsTheOriginAndWritesToIt(t *testing.T) {
	_, js := jetStream(t)
	ctx := ctxTimeout(t, 30*time.Second)
	origin := got(js.CreateKeyValue(ctx, natsio.KeyValueConfig{Bucket: "ORIGIN"})).must(t)
	got(origin.Put(ctx, "k", []byte("v1"))).must(t)
	cfg := natsio.KeyValueConfig{Bucket: "COPY", Mirror: &natsio.StreamSource{Name: "ORIGIN"}}
	mirror := got(js.CreateKeyValue(ctx, cfg)).must(t)
	if cfg.Mirror.Name != "ORIGIN" {
		t.Errorf("the caller's mirror became %q", cfg.Mirror.Name)
	}
	sc := bucketStream(t, ctx, mirror)
	if sc.Mirror == nil || sc.Mirror.Name != "KV_ORIGIN" || !sc.MirrorDirect || len(sc.Subjects) != 0 {
		t.Errorf("mirror stream: mirror %+v, mirror_direct %v, subjects %v", sc.Mirror, sc.MirrorDirect, sc.Subjects)
	}
	waitValue(t, mirror, "k", "v1")

	// Writes through the mirror's handle land in the origin (read polled:
	// the mirror answers the origin's Direct Gets too).
	rev := got(mirror.Put(ctx, "w", []byte("v2"))).must(t)
	if e := waitValue(t, origin, "w", "v2"); e.Revision != rev {
		t.Errorf("w in the origin at %d, put returned %d", e.Revision, rev)
	}
	noErr(t, mirror.Delete(ctx, "w"))
	eventually(t, "w deleted in the origin", func() bool {
		_, err := origin.Get(ctx, "w")
		return errors.Is(err, natsio.ErrKeyDeleted)
	})
	// The mirror lists the keys it copied.
	eventually(t, "the mirror's keys", func() bool {
		keys, err := mirror.Keys(ctx)
		return err == nil && reflect.DeepEqual(keys, []string{"k"})
	})

	// Named with its KV_ prefix, the same mirror: an identical bucket binds.
	got(js.CreateKeyValue(ctx, natsio.KeyValueConfig{Bucket: "COPY", Mirror: &natsio.StreamSource{Name: "KV_ORIGIN"}})).must(t)
}

func TestKeyValueSourcesCopyKeysIntoTheBucket(t *testing.T) {
	_, js := jetStream(t)
	ctx := ctxTimeout(t, 30*time.Second)
	a := got(js.CreateKeyValue(ctx, natsio.KeyValueConfig{Bucket: "A"})).must(t)
	b := got(js.CreateKeyValue(ctx, natsio.KeyValueConfig{Bucket: "B"})).must(t)
	got(a.Put(ctx, "x", []byte("from a"))).must(t)
	got(js.CreateStream(ctx, natsio.StreamConfig{Name: "ORDERS", Subjects: []string{"orders.>"}})).must(t)
	both := got(js.CreateKeyValue(ctx, natsio.KeyValueConfig{Bucket: "AB", Sources: []*natsio.StreamSource{
		{Name: "A"}, {Name: "KV_B"},
		// Given transforms are taken as they are: any stream can feed keys.
		{Name: "ORDERS", SubjectTransforms: []natsio.SubjectTransformConfig{{Source: "orders.>", Destination: "$KV.AB.order.>"}}},
	}})).must(t)
	sc := bucketStream(t, ctx, both)
	var sources []string
	for _, s := range sc.Sources {
		for _, tr := range s.SubjectTransforms {
			sources = append(sources, s.Name+" "+tr.Source+" "+tr.Destination)
		}
	}
	if want := []string{"KV_A $KV.A.> $KV.AB.>", "KV_B $KV.B.> $KV.AB.>", "ORDERS orders.> $KV.AB.order.>"}; !reflect.DeepEqual(sources, want) {
		t.Errorf("sources %q, want %q", sources, want)
	}
	if !slices.Equal(sc.Subjects, []string{"$KV.AB.>"}) || sc.Mirror != nil {
		t.Errorf("sourcing stream: subjects %v, mirror %+v", sc.Subjects, sc.Mirror)
	}
	got(b.Put(ctx, "y", []byte("from b"))).must(t)
	got(js.Publish(ctx, "orders.1", []byte("order"))).must(t)
	waitValue(t, both, "x", "from a")
	waitValue(t, both, "y", "from b")
	waitValue(t, both, "order.1", "order")
	// Its own keys stay its own.
	got(both.Put(ctx, "z", []byte("own"))).must(t)
	if e := got(both.Get(ctx, "z")).must(t); string(e.Value) != "own" {
		t.Errorf("z=%q", e.Value)
	}
	_, err := a.Get(ctx, "z")
	wantIs(t, err, natsio.ErrKeyNotFound)
}

func TestStreamSourceDomainBecomesExternal(t *testing.T) {
	s := startConfiguredServer(t, "jetstream { domain: HUB, store_dir: \""+t.TempDir()+"\" }\n")
	nc := connectTo(t, s.url)
	js := got(nc.JetStream()).must(t)
	t.Cleanup(js.Close)
	ctx := ctxTimeout(t, 30*time.Second)
	got(js.CreateKeyValue(ctx, natsio.KeyValueConfig{Bucket: "ORIGIN"})).must(t)

	// A context in the server's own domain writes through $JS.HUB.API.
	hub := got(nc.JetStream(natsio.JSDomain("HUB"))).must(t)
	t.Cleanup(hub.Close)
	kv := got(hub.KeyValue(ctx, "ORIGIN")).must(t)
	rev := got(kv.Put(ctx, "k", []byte("v"))).must(t)
	if e := got(kv.Get(ctx, "k")).must(t); string(e.Value) != "v" || e.Revision != rev {
		t.Errorf("k=%q at %d, put returned %d", e.Value, e.Revision, rev)
	}

	// Domain is sent as the External API prefix, for buckets and streams.
	mirror := got(js.CreateKeyValue(ctx, natsio.KeyValueConfig{Bucket: "FAR",
		Mirror: &natsio.StreamSource{Name: "ORIGIN", Domain: "HUB"}})).must(t)
	if m := bucketStream(t, ctx, mirror).Mirror; m == nil || m.External == nil || m.External.APIPrefix != "$JS.HUB.API" || m.Domain != "" {
		t.Errorf("bucket mirror %+v", m)
	}
	info := got(js.CreateStream(ctx, natsio.StreamConfig{Name: "SOURCED",
		Sources: []*natsio.StreamSource{{Name: "KV_ORIGIN", Domain: "HUB"}}})).must(t)
	if src := info.Config.Sources; len(src) != 1 || src[0].External == nil || src[0].External.APIPrefix != "$JS.HUB.API" {
		t.Errorf("stream sources %+v", src)
	}

	both := &natsio.StreamSource{Name: "ORIGIN", Domain: "HUB", External: &natsio.ExternalStream{APIPrefix: "$JS.X.API"}}
	_, err := js.CreateKeyValue(ctx, natsio.KeyValueConfig{Bucket: "BAD", Mirror: both})
	wantErr(t, err, natsio.ErrConfig, "mirror", "domain and external are both set")
	_, err = js.CreateKeyValue(ctx, natsio.KeyValueConfig{Bucket: "BAD", Sources: []*natsio.StreamSource{both}})
	wantErr(t, err, natsio.ErrConfig, "sources", "domain and external are both set")
	_, err = js.CreateStream(ctx, natsio.StreamConfig{Name: "BAD", Mirror: both})
	wantErr(t, err, natsio.ErrConfig, "domain and external are both set")
	_, err = js.CreateKeyValue(ctx, natsio.KeyValueConfig{Bucket: "BAD", Mirror: &natsio.StreamSource{}})
	wantErr(t, err, natsio.ErrConfig, "mirror", "name")
	if _, err := js.StreamInfo(ctx, "KV_BAD"); !errors.Is(err, natsio.ErrStreamNotFound) {
		t.Errorf("a refused config made a stream: %v", err)
	}
}

func TestKeyValueMirrorOfABucketInAnotherDomain(t *testing.T) {
	hubSrv, leafSrv := startHubAndLeaf(t)
	ctx := ctxTimeout(t, 60*time.Second)
	hubConn, leafConn := connectTo(t, hubSrv.url), connectTo(t, leafSrv.url)
	hub, leaf := got(hubConn.JetStream()).must(t), got(leafConn.JetStream()).must(t)
	t.Cleanup(hub.Close)
	t.Cleanup(leaf.Close)
	origin := got(hub.CreateKeyValue(ctx, natsio.KeyValueConfig{Bucket: "TEST"})).must(t)
	got(origin.Put(ctx, "name", []byte("derek"))).must(t)

	far := got(leaf.CreateKeyValue(ctx, natsio.KeyValueConfig{Bucket: "MIRROR",
		Mirror: &natsio.StreamSource{Name: "TEST", Domain: "HUB"}})).must(t)
	if m := bucketStream(t, ctx, far).Mirror; m == nil || m.Name != "KV_TEST" || m.External == nil || m.External.APIPrefix != "$JS.HUB.API" {
		t.Errorf("mirror %+v", m)
	}
	// The mirror syncs once the leaf connection is up.
	waitValue(t, far, "name", "derek")
	// Its writes go to the hub's bucket, through the hub's domain.
	got(far.Put(ctx, "name", []byte("rip"))).must(t)
	if e := got(origin.Get(ctx, "name")).must(t); string(e.Value) != "rip" {
		t.Errorf("origin name=%q", e.Value)
	}
	waitValue(t, far, "name", "rip")
	noErr(t, far.Delete(ctx, "name"))
	_, err := origin.Get(ctx, "name")
	wantIs(t, err, natsio.ErrKeyDeleted)

	// The hub's bucket through the leaf connection, in the hub's domain.
	remote := got(leafConn.JetStream(natsio.JSDomain("HUB"))).must(t)
	t.Cleanup(remote.Close)
	rkv := got(remote.KeyValue(ctx, "TEST")).must(t)
	got(rkv.Put(ctx, "name", []byte("ivan"))).must(t)
	waitValue(t, far, "name", "ivan")
	if e := got(origin.Get(ctx, "name")).must(t); string(e.Value) != "ivan" {
		t.Errorf("origin name=%q", e.Value)
	}
}
