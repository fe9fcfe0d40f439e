// Package interop checks that the Go binding and nats.go (the official Go
// client) read each other's Object Store buckets: what one writes (objects
// of one and of several chunks, their meta, links, deletes, renames), the
// other reads back with the same bytes and the same info.
package interop

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	natsio "github.com/libnatsio/natsio/bindings/go"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// startServer runs nats-server with JetStream on a free loopback port,
// stopped at the test's end.
func startServer(t *testing.T) string {
	t.Helper()
	return startServerWith(t, "-js", "-sd", t.TempDir())
}

// startConfiguredServer runs nats-server with config text (written to a
// file of the test's temp dir) on a free loopback port.
func startConfiguredServer(t *testing.T, config string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "server.conf")
	noErr(t, os.WriteFile(path, []byte(config), 0o600))
	return startServerWith(t, "-c", path)
}

// startHubAndLeaf runs a JetStream server in domain HUB and one in domain
// LEAF joined to it as a leaf node, and returns their URLs. The leaf
// connection comes up in its own time: poll what needs it.
func startHubAndLeaf(t *testing.T) (hub, leaf string) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	hub = startConfiguredServer(t, fmt.Sprintf("server_name: hub\njetstream { domain: HUB, store_dir: %q }\n"+
		"leafnodes { listen: \"127.0.0.1:%d\" }\n", t.TempDir(), port))
	leaf = startConfiguredServer(t, fmt.Sprintf("server_name: leaf\njetstream { domain: LEAF, store_dir: %q }\n"+
		"leafnodes { remotes: [ { url: \"nats-leaf://127.0.0.1:%d\" } ] }\n", t.TempDir(), port))
	return hub, leaf
}

// startServerWith runs nats-server with args on a free loopback port (-a
// and -p on the command line win over a config's), stopped at the test's
// end.
func startServerWith(t *testing.T, args ...string) string {
	t.Helper()
	bin := os.Getenv("NATS_SERVER_BIN")
	if bin == "" {
		var err error
		if bin, err = filepath.Abs("../../../.tools/nats-server-2.14.3/nats-server"); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("nats-server not found (set NATS_SERVER_BIN or run scripts/install-nats-server.sh): %v", err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	cmd := exec.Command(bin, append([]string{"-a", "127.0.0.1", "-p", fmt.Sprint(port)}, args...)...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			return "nats://" + addr
		}
	}
	t.Fatalf("nats-server on %s did not start", addr)
	return ""
}

// clients connects both libraries to one server.
func clients(t *testing.T) (jetstream.JetStream, *natsio.JetStream) {
	t.Helper()
	return clientsAt(t, startServer(t), "")
}

// clientsAt connects both libraries to the server at url, their JetStream
// contexts in domain ("": the server's own, no prefix).
func clientsAt(t *testing.T, url, domain string) (jetstream.JetStream, *natsio.JetStream) {
	t.Helper()
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if domain != "" {
		js, err = jetstream.NewWithDomain(nc, domain)
	}
	if err != nil {
		t.Fatal(err)
	}
	conn, err := natsio.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	njs, err := conn.JetStream(natsio.JSDomain(domain))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(njs.Close)
	return js, njs
}

// result holds a call's two results, for got(call()).must(t).
type result[T any] struct {
	v   T
	err error
}

func got[T any](v T, err error) result[T] { return result[T]{v, err} }

func (r result[T]) must(t *testing.T) T {
	t.Helper()
	if r.err != nil {
		t.Fatal(r.err)
	}
	return r.v
}

func noErr(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func ctxFor(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func randomBytes(t *testing.T, n int) []byte {
	t.Helper()
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return b
}

// digest is ADR-20's digest of data.
func digest(data []byte) string {
	sum := sha256.Sum256(data)
	return "SHA-256=" + base64.URLEncoding.EncodeToString(sum[:])
}

func headersOf(h map[string][]string) map[string][]string {
	if len(h) == 0 {
		return nil
	}
	return h
}

func metadataOf(m map[string]string) map[string]string {
	if len(m) == 0 {
		return nil
	}
	return m
}

// sameInfo checks that the two libraries' infos of one object agree. Both
// take ModTime from the server's timestamp of the stored description, but
// the info a put returns has the writer's clock: slack allows for that.
func sameInfo(t *testing.T, what string, a *jetstream.ObjectInfo, b *natsio.ObjectInfo, slack time.Duration) {
	t.Helper()
	diff := func(field string, x, y any) {
		t.Helper()
		t.Errorf("%s: %s differs: nats.go %v, natsio %v", what, field, x, y)
	}
	if a.Name != b.Name {
		diff("Name", a.Name, b.Name)
	}
	if a.Description != b.Description {
		diff("Description", a.Description, b.Description)
	}
	if !maps.EqualFunc(headersOf(a.Headers), headersOf(b.Headers), slices.Equal) {
		diff("Headers", a.Headers, b.Headers)
	}
	if !maps.Equal(metadataOf(a.Metadata), metadataOf(b.Metadata)) {
		diff("Metadata", a.Metadata, b.Metadata)
	}
	if a.Bucket != b.Bucket || a.NUID != b.NUID || a.Size != b.Size || a.Chunks != b.Chunks ||
		a.Digest != b.Digest || a.Deleted != b.Deleted {
		diff("Bucket/NUID/Size/Chunks/Digest/Deleted",
			[]any{a.Bucket, a.NUID, a.Size, a.Chunks, a.Digest, a.Deleted},
			[]any{b.Bucket, b.NUID, b.Size, b.Chunks, b.Digest, b.Deleted})
	}
	if d := a.ModTime.Sub(b.ModTime); d < -slack || d > slack {
		diff("ModTime", a.ModTime, b.ModTime)
	}
	var aChunk, bChunk uint32
	var aLink, bLink *jetstream.ObjectLink
	if a.Opts != nil {
		aChunk, aLink = a.Opts.ChunkSize, a.Opts.Link
	}
	if b.Opts != nil {
		bChunk = b.Opts.ChunkSize
		if b.Opts.Link != nil {
			bLink = &jetstream.ObjectLink{Bucket: b.Opts.Link.Bucket, Name: b.Opts.Link.Name}
		}
	}
	if aChunk != bChunk {
		diff("Opts.ChunkSize", aChunk, bChunk)
	}
	if (aLink == nil) != (bLink == nil) || (aLink != nil && *aLink != *bLink) {
		diff("Opts.Link", aLink, bLink)
	}
}

func TestNatsGoWritesNatsioReads(t *testing.T) {
	js, njs := clients(t)
	ctx := ctxFor(t)
	store := got(js.CreateObjectStore(ctx, jetstream.ObjectStoreConfig{Bucket: "FROM_NATSGO", Description: "written by nats.go"})).must(t)

	type object struct {
		meta jetstream.ObjectMeta
		data []byte
	}
	objects := []object{
		{jetstream.ObjectMeta{Name: "empty"}, nil},
		{jetstream.ObjectMeta{Name: "small.txt", Description: "a small one",
			Headers:  nats.Header{"Content-Type": {"text/plain"}, "X-Multi": {"1", "2"}},
			Metadata: map[string]string{"owner": "nats.go", "kind": "small"}}, []byte("hello from nats.go")},
		{jetstream.ObjectMeta{Name: "dir/multi chunk ü.bin", Description: "several default chunks",
			Metadata: map[string]string{"chunks": "3"}}, randomBytes(t, 300*1024)},
		{jetstream.ObjectMeta{Name: "tiny-chunks", Opts: &jetstream.ObjectMetaOptions{ChunkSize: 1000}},
			randomBytes(t, 10*1000+1)},
	}
	obs := got(njs.ObjectStore(ctx, "FROM_NATSGO")).must(t)
	watch := got(obs.Watch(ctx, natsio.UpdatesOnly())).must(t)
	defer watch.Stop()
	if info, err := watch.Next(ctx); info != nil || err != nil {
		t.Fatalf("first event of an updates-only watch: %+v, %v", info, err)
	}
	for _, o := range objects {
		put := got(store.Put(ctx, o.meta, bytes.NewReader(o.data))).must(t)
		if put.Digest != digest(o.data) {
			t.Fatalf("nats.go's digest of %q %s, want %s", o.meta.Name, put.Digest, digest(o.data))
		}
		data := got(obs.GetBytes(ctx, o.meta.Name)).must(t)
		if !bytes.Equal(data, o.data) {
			t.Fatalf("%q: natsio read %d bytes, nats.go wrote %d", o.meta.Name, len(data), len(o.data))
		}
		// The same info, read by each.
		sameInfo(t, o.meta.Name, got(store.GetInfo(ctx, o.meta.Name)).must(t), got(obs.GetInfo(ctx, o.meta.Name)).must(t), 0)
		res := got(obs.Get(ctx, o.meta.Name)).must(t)
		ri, _ := res.Info()
		sameInfo(t, o.meta.Name+" (reader)", put, ri, time.Second)
		res.Close()
		// natsio's watch sees nats.go's put.
		wi := got(watch.Next(ctx)).must(t)
		if wi == nil || wi.Name != o.meta.Name || wi.NUID != put.NUID || wi.Digest != put.Digest {
			t.Fatalf("natsio's watch after nats.go's put of %q: %+v", o.meta.Name, wi)
		}
	}

	// Every object listed; the bucket and its status seen alike.
	list := got(obs.List(ctx)).must(t)
	var names []string
	for _, i := range list {
		names = append(names, i.Name)
	}
	slices.Sort(names)
	if want := []string{"dir/multi chunk ü.bin", "empty", "small.txt", "tiny-chunks"}; !slices.Equal(names, want) {
		t.Fatalf("natsio lists %q, want %q", names, want)
	}
	if got := got(njs.ObjectStoreNames(ctx)).must(t); !slices.Equal(got, []string{"FROM_NATSGO"}) {
		t.Fatalf("natsio's bucket names %v", got)
	}
	st := got(obs.Status(ctx)).must(t)
	nst := got(store.Status(ctx)).must(t)
	if st.Description != nst.Description() || st.Size != nst.Size() || st.Sealed || st.Storage != natsio.FileStorage {
		t.Fatalf("natsio status %+v, nats.go: description %q size %d", st, nst.Description(), nst.Size())
	}

	// A link made by nats.go reads through natsio.
	target := got(store.GetInfo(ctx, "small.txt")).must(t)
	got(store.AddLink(ctx, "link-to-small", target)).must(t)
	if data := got(obs.GetBytes(ctx, "link-to-small")).must(t); string(data) != "hello from nats.go" {
		t.Fatalf("read through nats.go's link: %q", data)
	}
	li := got(obs.GetInfo(ctx, "link-to-small")).must(t)
	if !li.IsLink() || li.Opts.Link.Bucket != "FROM_NATSGO" || li.Opts.Link.Name != "small.txt" {
		t.Fatalf("nats.go's link read by natsio: %+v", li.Opts)
	}
	got(store.AddBucketLink(ctx, "link-to-bucket", store)).must(t)
	bl := got(obs.GetInfo(ctx, "link-to-bucket")).must(t)
	if !bl.IsLink() || bl.Opts.Link.Bucket != "FROM_NATSGO" || bl.Opts.Link.Name != "" {
		t.Fatalf("nats.go's bucket link read by natsio: %+v", bl.Opts)
	}

	// A rename and a delete by nats.go, seen by natsio.
	noErr(t, store.UpdateMeta(ctx, "tiny-chunks", jetstream.ObjectMeta{Name: "renamed", Description: "moved"}))
	if data := got(obs.GetBytes(ctx, "renamed")).must(t); !bytes.Equal(data, objects[3].data) {
		t.Fatal("natsio reads the renamed object differently")
	}
	if _, err := obs.GetInfo(ctx, "tiny-chunks"); !errors.Is(err, natsio.ErrObjectNotFound) {
		t.Fatalf("old name after nats.go's rename: %v", err)
	}
	noErr(t, store.Delete(ctx, "small.txt"))
	if _, err := obs.GetBytes(ctx, "small.txt"); !errors.Is(err, natsio.ErrObjectDeleted) {
		t.Fatalf("natsio reads an object nats.go deleted: %v", err)
	}
	if di := got(obs.GetInfo(ctx, "small.txt", natsio.GetObjectInfoShowDeleted())).must(t); !di.Deleted {
		t.Fatalf("deleted info %+v", di)
	}
}

func TestNatsioWritesNatsGoReads(t *testing.T) {
	js, njs := clients(t)
	ctx := ctxFor(t)
	obs := got(njs.CreateObjectStore(ctx, natsio.ObjectStoreConfig{Bucket: "FROM_NATSIO", Description: "written by natsio",
		Metadata: map[string]string{"origin": "natsio"}})).must(t)
	store := got(js.ObjectStore(ctx, "FROM_NATSIO")).must(t)
	if nst := got(store.Status(ctx)).must(t); nst.Description() != "written by natsio" || nst.Metadata()["origin"] != "natsio" {
		t.Fatalf("nats.go reads the bucket's status: %q %v", nst.Description(), nst.Metadata())
	}

	type object struct {
		meta natsio.ObjectMeta
		data []byte
	}
	objects := []object{
		{natsio.ObjectMeta{Name: "empty"}, nil},
		{natsio.ObjectMeta{Name: "small.txt", Description: "a small one",
			Headers:  natsio.Header{"Content-Type": {"text/plain"}, "X-Multi": {"1", "2"}},
			Metadata: map[string]string{"owner": "natsio"}}, []byte("hello from natsio")},
		{natsio.ObjectMeta{Name: "dir/multi chunk ü.bin", Description: "several default chunks"}, randomBytes(t, 300*1024)},
		{natsio.ObjectMeta{Name: "tiny-chunks", Opts: &natsio.ObjectMetaOptions{ChunkSize: 1000},
			Metadata: map[string]string{"chunk": "1000"}}, randomBytes(t, 10*1000+1)},
	}
	// nats.go's updates-only watch sends no end-of-initial-values nil
	// (natsio's does, at once).
	watch := got(store.Watch(ctx, jetstream.UpdatesOnly())).must(t)
	defer watch.Stop()
	for _, o := range objects {
		put := got(obs.Put(ctx, o.meta, bytes.NewReader(o.data))).must(t)
		// nats.go's watch sees natsio's put.
		select {
		case wi := <-watch.Updates():
			if wi == nil || wi.Name != o.meta.Name || wi.NUID != put.NUID || wi.Size != put.Size {
				t.Fatalf("nats.go's watch after natsio's put of %q: %+v", o.meta.Name, wi)
			}
		case <-ctx.Done():
			t.Fatal("nats.go's watch saw nothing of natsio's put")
		}
		data := got(store.GetBytes(ctx, o.meta.Name)).must(t)
		if !bytes.Equal(data, o.data) {
			t.Fatalf("%q: nats.go read %d bytes, natsio wrote %d", o.meta.Name, len(data), len(o.data))
		}
		sameInfo(t, o.meta.Name, got(store.GetInfo(ctx, o.meta.Name)).must(t), put, time.Second)
		sameInfo(t, o.meta.Name+" (natsio's GetInfo)", got(store.GetInfo(ctx, o.meta.Name)).must(t),
			got(obs.GetInfo(ctx, o.meta.Name)).must(t), 0)
	}
	// PutBytes too, and a replace: nats.go reads the new version.
	got(obs.PutBytes(ctx, "small.txt", []byte("second version"))).must(t)
	if s := got(store.GetString(ctx, "small.txt")).must(t); s != "second version" {
		t.Fatalf("nats.go reads the replaced object as %q", s)
	}

	// nats.go lists what natsio wrote.
	list := got(store.List(ctx)).must(t)
	var names []string
	for _, i := range list {
		names = append(names, i.Name)
	}
	slices.Sort(names)
	if want := []string{"dir/multi chunk ü.bin", "empty", "small.txt", "tiny-chunks"}; !slices.Equal(names, want) {
		t.Fatalf("nats.go lists %q, want %q", names, want)
	}
	var buckets []string
	for name := range js.ObjectStoreNames(ctx).Name() {
		buckets = append(buckets, name)
	}
	if !slices.Equal(buckets, []string{"FROM_NATSIO"}) {
		t.Fatalf("nats.go's bucket names %v", buckets)
	}

	// A link made by natsio reads through nats.go, to an object and to
	// a bucket.
	target := got(obs.GetInfo(ctx, "dir/multi chunk ü.bin")).must(t)
	got(obs.AddLink(ctx, "link-to-multi", target)).must(t)
	if data := got(store.GetBytes(ctx, "link-to-multi")).must(t); !bytes.Equal(data, objects[2].data) {
		t.Fatal("nats.go reads natsio's link differently")
	}
	li := got(store.GetInfo(ctx, "link-to-multi")).must(t)
	if li.Opts == nil || li.Opts.Link == nil || li.Opts.Link.Bucket != "FROM_NATSIO" || li.Opts.Link.Name != "dir/multi chunk ü.bin" {
		t.Fatalf("natsio's link read by nats.go: %+v", li.Opts)
	}
	got(obs.AddBucketLink(ctx, "link-to-bucket", obs)).must(t)
	bl := got(store.GetInfo(ctx, "link-to-bucket")).must(t)
	if bl.Opts == nil || bl.Opts.Link == nil || bl.Opts.Link.Bucket != "FROM_NATSIO" || bl.Opts.Link.Name != "" {
		t.Fatalf("natsio's bucket link read by nats.go: %+v", bl.Opts)
	}

	// A rename and a delete by natsio, seen by nats.go; then the seal.
	noErr(t, obs.UpdateMeta(ctx, "tiny-chunks", natsio.ObjectMeta{Name: "renamed", Description: "moved",
		Headers: natsio.Header{"X-New": {"yes"}}}))
	ri := got(store.GetInfo(ctx, "renamed")).must(t)
	if ri.Description != "moved" || ri.Headers.Get("X-New") != "yes" || ri.Size != uint64(len(objects[3].data)) {
		t.Fatalf("nats.go reads the renamed object's info %+v", ri)
	}
	if data := got(store.GetBytes(ctx, "renamed")).must(t); !bytes.Equal(data, objects[3].data) {
		t.Fatal("nats.go reads the renamed object differently")
	}
	if _, err := store.GetInfo(ctx, "tiny-chunks"); !errors.Is(err, jetstream.ErrObjectNotFound) {
		t.Fatalf("nats.go, old name after natsio's rename: %v", err)
	}
	noErr(t, obs.Delete(ctx, "small.txt"))
	if _, err := store.GetBytes(ctx, "small.txt"); !errors.Is(err, jetstream.ErrObjectNotFound) {
		t.Fatalf("nats.go reads an object natsio deleted: %v", err)
	}
	noErr(t, obs.Seal(ctx))
	if nst := got(store.Status(ctx)).must(t); !nst.Sealed() {
		t.Fatal("nats.go does not see natsio's seal")
	}
	if _, err := store.PutString(ctx, "after-seal", "x"); err == nil {
		t.Fatal("nats.go put into a bucket natsio sealed")
	}
}

// The object types encode to the same JSON as nats.go's (ADR-20's field
// names): the info of one stored object, read by each client, marshals to
// the same document, and either client's document unmarshals into the
// other's type with every field.
func TestObjectInfoJSONMatchesNatsGo(t *testing.T) {
	js, njs := clients(t)
	ctx := ctxFor(t)
	obs := got(njs.CreateObjectStore(ctx, natsio.ObjectStoreConfig{Bucket: "JSON_FIELDS"})).must(t)
	store := got(js.ObjectStore(ctx, "JSON_FIELDS")).must(t)
	meta := natsio.ObjectMeta{Name: "doc.bin", Description: "described",
		Headers:  natsio.Header{"Content-Type": {"application/octet-stream"}, "X-Multi": {"1", "2"}},
		Metadata: map[string]string{"owner": "natsio"}, Opts: &natsio.ObjectMetaOptions{ChunkSize: 1000}}
	target := got(obs.Put(ctx, meta, bytes.NewReader(randomBytes(t, 2500)))).must(t)
	got(obs.AddLink(ctx, "doc-link", target)).must(t)

	asMap := func(v any) map[string]any {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		return m
	}
	for _, name := range []string{"doc.bin", "doc-link"} {
		ours := got(obs.GetInfo(ctx, name)).must(t)
		theirs := got(store.GetInfo(ctx, name)).must(t)
		om, tm := asMap(ours), asMap(theirs)
		if fmt.Sprint(om) != fmt.Sprint(tm) {
			t.Fatalf("%s: natsio's ObjectInfo encodes as\n%v\nnats.go's as\n%v", name, om, tm)
		}
		// Decoded across: nats.go's document into natsio's type and back.
		var back natsio.ObjectInfo
		if err := json.Unmarshal(got(json.Marshal(theirs)).must(t), &back); err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(asMap(back)) != fmt.Sprint(tm) {
			t.Fatalf("%s: nats.go's document read into natsio's ObjectInfo encodes as %v", name, asMap(back))
		}
	}
	// The fields carry what was stored under ADR-20's names.
	m := asMap(got(obs.GetInfo(ctx, "doc.bin")).must(t))
	if m["name"] != "doc.bin" || m["bucket"] != "JSON_FIELDS" || m["size"] != float64(2500) || m["chunks"] != float64(3) ||
		m["options"].(map[string]any)["max_chunk_size"] != float64(1000) || m["metadata"].(map[string]any)["owner"] != "natsio" {
		t.Fatalf("natsio's ObjectInfo as JSON: %v", m)
	}
}
