package natsio_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/libnatsio/natsio/bindings/go/nats"
	"github.com/libnatsio/natsio/bindings/go/nats/jetstream"
)

// facadeJetStream connects to a fresh JetStream server with the jetstream
// facade.
func facadeJetStream(t *testing.T, opts ...jetstream.JetStreamOpt) (context.Context, jetstream.JetStream) {
	t.Helper()
	s := startTestServer(t, "-js", "-sd", t.TempDir())
	nc, err := nats.Connect(s.url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc, opts...)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx, js
}

// Consumer (of the JetStream and of a Stream) refuses a push consumer with
// nats.go's ErrNotPullConsumer; PushConsumer binds it.
func TestFacadeConsumerRefusesAPushConsumer(t *testing.T) {
	ctx, js := facadeJetStream(t)
	stream, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "RP", Subjects: []string{"rp"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := js.CreatePushConsumer(ctx, "RP", jetstream.ConsumerConfig{Durable: "pushed", DeliverSubject: "rp.deliver"}); err != nil {
		t.Fatal(err)
	}
	_, err = js.Consumer(ctx, "RP", "pushed")
	if !errors.Is(err, jetstream.ErrNotPullConsumer) || err.Error() != "nats: consumer is not a pull consumer" {
		t.Errorf("js.Consumer: %v", err)
	}
	if _, err := stream.Consumer(ctx, "pushed"); !errors.Is(err, jetstream.ErrNotPullConsumer) {
		t.Errorf("stream.Consumer: %v", err)
	}
	if _, err := js.PushConsumer(ctx, "RP", "pushed"); err != nil {
		t.Errorf("PushConsumer: %v", err)
	}
	if _, err := stream.CreateConsumer(ctx, jetstream.ConsumerConfig{Durable: "pulled"}); err != nil {
		t.Fatal(err)
	}
	if _, err := js.Consumer(ctx, "RP", "pulled"); err != nil {
		t.Errorf("a pull consumer: %v", err)
	}
}

// PutFile stores a file under its path; GetFile writes an object into a
// file (replacing what it held) and removes the file again when there is
// no such object.
func TestFacadeObjectStoreFiles(t *testing.T) {
	ctx, js := facadeJetStream(t)
	obs, err := js.CreateObjectStore(ctx, jetstream.ObjectStoreConfig{Bucket: "files"})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	src := filepath.Join(dir, "in.txt")
	content := []byte("the file's content\n")
	if err := os.WriteFile(src, content, 0o600); err != nil {
		t.Fatal(err)
	}
	info, err := obs.PutFile(ctx, src)
	if err != nil {
		t.Fatal(err)
	}
	if info.Name != src || info.Size != uint64(len(content)) {
		t.Errorf("PutFile: name %q size %d", info.Name, info.Size)
	}
	if _, err := obs.PutFile(ctx, filepath.Join(dir, "missing")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("PutFile of a missing file: %v", err)
	}
	dst := filepath.Join(dir, "out.txt")
	if err := os.WriteFile(dst, []byte("older and longer content, replaced"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := obs.GetFile(ctx, src, dst); err != nil {
		t.Fatal(err)
	}
	if got, err := os.ReadFile(dst); err != nil || string(got) != string(content) {
		t.Errorf("GetFile wrote %q (%v)", got, err)
	}
	gone := filepath.Join(dir, "gone.txt")
	if err := obs.GetFile(ctx, "no such object", gone); !errors.Is(err, jetstream.ErrObjectNotFound) {
		t.Errorf("GetFile of a missing object: %v", err)
	}
	if _, err := os.Stat(gone); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("GetFile left %s behind: %v", gone, err)
	}
}

// CreateKeyValue with a Mirror or Sources: the core makes them as nats.go
// does (the caller's config is left as it is) and Status().Config() reads
// them back from the stream.
func TestFacadeKeyValueMirrorAndSources(t *testing.T) {
	ctx, js := facadeJetStream(t)
	origin, err := js.CreateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: "origin"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := origin.PutString(ctx, "k", "v1"); err != nil {
		t.Fatal(err)
	}
	cfg := jetstream.KeyValueConfig{Bucket: "copy", Mirror: &jetstream.StreamSource{Name: "origin"}}
	mirror, err := js.CreateKeyValue(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Mirror.Name != "origin" {
		t.Errorf("the caller's mirror changed: %+v", cfg.Mirror)
	}
	st, err := mirror.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := st.Config(); got.Mirror == nil || got.Mirror.Name != "KV_origin" || got.Sources != nil {
		t.Errorf("mirror Config(): mirror %+v, sources %+v", got.Mirror, got.Sources)
	}
	if sc := st.(*jetstream.KeyValueBucketStatus).StreamInfo().Config; !sc.MirrorDirect || len(sc.Subjects) != 0 {
		t.Errorf("mirror stream: mirror_direct %v, subjects %v", sc.MirrorDirect, sc.Subjects)
	}
	facadeWaitEntry(t, ctx, mirror, "k", "v1")
	rev, err := mirror.PutString(ctx, "w", "v2")
	if err != nil {
		t.Fatal(err)
	}
	// Polled: the mirror answers the origin's Direct Gets too.
	if e := facadeWaitEntry(t, ctx, origin, "w", "v2"); e.Revision() != rev {
		t.Errorf("w in the origin at %d, put returned %d", e.Revision(), rev)
	}

	sources := []*jetstream.StreamSource{{Name: "origin"}}
	sourced, err := js.CreateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: "sourced", Sources: sources})
	if err != nil {
		t.Fatal(err)
	}
	if sources[0].Name != "origin" || sources[0].SubjectTransforms != nil {
		t.Errorf("the caller's source changed: %+v", sources[0])
	}
	facadeWaitEntry(t, ctx, sourced, "w", "v2")
	sst, err := sourced.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := []*jetstream.StreamSource{{Name: "KV_origin", SubjectTransforms: []jetstream.SubjectTransformConfig{
		{Source: "$KV.origin.>", Destination: "$KV.sourced.>"}}}}
	if got := sst.Config().Sources; !reflect.DeepEqual(got, want) {
		t.Errorf("sourced Config().Sources %s, want %s", jsonText(got), jsonText(want))
	}

	// Domain (outside the JSON) reaches the core as External.
	_, err = js.CreateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: "far", Mirror: &jetstream.StreamSource{Name: "origin",
		Domain: "HUB", External: &jetstream.ExternalStream{APIPrefix: "$JS.X.API"}}})
	if err == nil || err.Error() != "nats: domain and external are both set" {
		t.Errorf("Domain and External: %v", err)
	}
	far, err := js.CreateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: "far", Mirror: &jetstream.StreamSource{Name: "origin", Domain: "HUB"}})
	if err != nil {
		t.Fatal(err)
	}
	fst, err := far.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if m := fst.Config().Mirror; m == nil || m.External == nil || m.External.APIPrefix != "$JS.HUB.API" {
		t.Errorf("far Config().Mirror %+v", m)
	}
}

// facadeWaitEntry polls Get until key holds want (mirrors and sources copy
// asynchronously, and a mirror answers its origin's Direct Gets too),
// failing after 10 s; the entry read.
func facadeWaitEntry(t *testing.T, ctx context.Context, kv jetstream.KeyValue, key, want string) jetstream.KeyValueEntry {
	t.Helper()
	var e jetstream.KeyValueEntry
	var err error
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if e, err = kv.Get(ctx, key); err == nil && string(e.Value()) == want {
			return e
		}
	}
	t.Fatalf("%s in %s: %v (%v), want %q", key, kv.Bucket(), e, err, want)
	return nil
}

// jsonText is v as JSON, for messages.
func jsonText(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
