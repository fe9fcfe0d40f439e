package natsio_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
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
