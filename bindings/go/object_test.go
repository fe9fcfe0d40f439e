package natsio_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	natsio "github.com/libnatsio/natsio/bindings/go"
)

// objDigest is ADR-20's digest of data.
func objDigest(data []byte) string {
	sum := sha256.Sum256(data)
	return "SHA-256=" + base64.URLEncoding.EncodeToString(sum[:])
}

func randomBytes(t *testing.T, n int) []byte {
	t.Helper()
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return b
}

// onlyReader hides every method but Read (so io.Copy goes through the
// writer's ReadFrom, or the result's Read).
type onlyReader struct{ r io.Reader }

func (o onlyReader) Read(p []byte) (int, error) { return o.r.Read(p) }

// onlyWriter hides every method but Write.
type onlyWriter struct{ w io.Writer }

func (o onlyWriter) Write(p []byte) (int, error) { return o.w.Write(p) }

func objectStore(t *testing.T, cfg natsio.ObjectStoreConfig) (*natsio.JetStream, *natsio.ObjectStore) {
	t.Helper()
	_, js := jetStream(t)
	obs, err := js.CreateObjectStore(ctxTimeout(t, 10*time.Second), cfg)
	if err != nil {
		t.Fatalf("CreateObjectStore: %v", err)
	}
	return js, obs
}

// wantObject reads name back in full and checks its bytes and info.
func wantObject(t *testing.T, obs *natsio.ObjectStore, name string, want []byte) {
	t.Helper()
	ctx := ctxTimeout(t, 20*time.Second)
	data, err := obs.GetBytes(ctx, name)
	if err != nil {
		t.Fatalf("GetBytes(%s): %v", name, err)
	}
	if !bytes.Equal(data, want) {
		t.Fatalf("GetBytes(%s): %d bytes, want %d (equal prefix: %v)", name, len(data), len(want),
			bytes.HasPrefix(want, data) || bytes.HasPrefix(data, want))
	}
	info := got(obs.GetInfo(ctx, name)).must(t)
	if info.Size != uint64(len(want)) || info.Digest != objDigest(want) || info.Deleted {
		t.Fatalf("info of %s: size %d digest %s deleted %v; want size %d digest %s", name, info.Size, info.Digest,
			info.Deleted, len(want), objDigest(want))
	}
}

func TestObjectStoreBuckets(t *testing.T) {
	_, js := jetStream(t)
	ctx := ctxTimeout(t, 20*time.Second)

	cfg := natsio.ObjectStoreConfig{
		Bucket: "PICS", Description: "pictures", TTL: time.Hour, Storage: natsio.MemoryStorage,
		MaxBytes: 64 << 20, Compression: true, Metadata: map[string]string{"team": "blue"},
	}
	obs := got(js.CreateObjectStore(ctx, cfg)).must(t)
	if obs.Bucket() != "PICS" {
		t.Fatalf("bucket %q", obs.Bucket())
	}
	st := got(obs.Status(ctx)).must(t)
	if st.Bucket != "PICS" || st.Description != "pictures" || st.TTL != time.Hour || st.Storage != natsio.MemoryStorage ||
		st.Replicas != 1 || st.Sealed || !st.Compressed || st.Metadata["team"] != "blue" || st.Size != 0 {
		t.Fatalf("status %+v", st)
	}
	if st.Info == nil || st.Info.Config.Name != "OBJ_PICS" || st.Info.Config.MaxBytes != 64<<20 ||
		!slices.Equal(st.Info.Config.Subjects, []string{"$O.PICS.C.>", "$O.PICS.M.>"}) {
		t.Fatalf("backing stream %+v", st.Info)
	}

	// The same config again binds; another one is refused.
	got(js.CreateObjectStore(ctx, cfg)).must(t)
	_, err := js.CreateObjectStore(ctx, natsio.ObjectStoreConfig{Bucket: "PICS", Description: "other", Storage: natsio.MemoryStorage})
	wantErr(t, err, natsio.ErrBucketExists)
	cfg.Description = "photos"
	got(js.UpdateObjectStore(ctx, cfg)).must(t)
	if d := got(obs.Status(ctx)).must(t).Description; d != "photos" {
		t.Fatalf("updated description %q", d)
	}
	_, err = js.UpdateObjectStore(ctx, natsio.ObjectStoreConfig{Bucket: "NOPE"})
	wantErr(t, err, natsio.ErrBucketNotFound)
	got(js.CreateOrUpdateObjectStore(ctx, natsio.ObjectStoreConfig{Bucket: "DOCS"})).must(t)

	// Bind, names, statuses; a stream that is no bucket is not listed.
	bound := got(js.ObjectStore(ctx, "DOCS")).must(t)
	got(bound.PutString(ctx, "a", "x")).must(t)
	got(js.CreateStream(ctx, natsio.StreamConfig{Name: "PLAIN", Subjects: []string{"plain.>"}})).must(t)
	names := got(js.ObjectStoreNames(ctx)).must(t)
	slices.Sort(names)
	if !slices.Equal(names, []string{"DOCS", "PICS"}) {
		t.Fatalf("names %v", names)
	}
	stats := got(js.ObjectStores(ctx)).must(t)
	sizes := map[string]uint64{}
	for _, s := range stats {
		sizes[s.Bucket] = s.Size
	}
	if len(stats) != 2 || sizes["PICS"] != 0 || sizes["DOCS"] == 0 {
		t.Fatalf("statuses %v", sizes)
	}

	// Errors.
	_, err = js.ObjectStore(ctx, "MISSING")
	wantErr(t, err, natsio.ErrBucketNotFound)
	_, err = js.ObjectStore(ctx, "bad.name")
	wantErr(t, err, natsio.ErrInvalidBucketName)
	_, err = js.CreateObjectStore(ctx, natsio.ObjectStoreConfig{Bucket: "has space"})
	wantErr(t, err, natsio.ErrInvalidBucketName)
	_, err = js.CreateObjectStore(ctx, natsio.ObjectStoreConfig{})
	if !errors.Is(err, natsio.ErrInvalidBucketName) && !errors.Is(err, natsio.ErrConfig) {
		t.Fatalf("no bucket name: %v", err)
	}
	_, err = js.CreateObjectStore(ctx, natsio.ObjectStoreConfig{Bucket: "X", Storage: "tape"})
	wantErr(t, err, natsio.ErrConfig, "storage")
	_, err = js.ObjectStore(ctx, "nul\x00")
	wantErr(t, err, natsio.ErrInvalidArgument)

	// Delete: gone from the names; the bound handle then fails.
	noErr(t, js.DeleteObjectStore(ctx, "DOCS"))
	wantErr(t, js.DeleteObjectStore(ctx, "DOCS"), natsio.ErrBucketNotFound)
	if names := got(js.ObjectStoreNames(ctx)).must(t); !slices.Equal(names, []string{"PICS"}) {
		t.Fatalf("names after delete %v", names)
	}
	_, err = bound.GetBytes(ctx, "a")
	wantErr(t, err, natsio.ErrBucketNotFound)
	_, err = bound.PutString(ctx, "b", "y")
	wantErr(t, err, natsio.ErrBucketNotFound)
}

func TestObjectRoundTrips(t *testing.T) {
	_, obs := objectStore(t, natsio.ObjectStoreConfig{Bucket: "RT"})
	ctx := ctxTimeout(t, 60*time.Second)
	const chunk = 1024

	for _, n := range []int{0, 1, chunk - 1, chunk, chunk + 1, 3*chunk + 7} {
		data := randomBytes(t, n)
		name := "obj-" + strings.Repeat("x", n%5) + "/" + time.Duration(n).String()
		meta := natsio.ObjectMeta{Name: name, Opts: &natsio.ObjectMetaOptions{ChunkSize: chunk}}
		info := got(obs.Put(ctx, meta, onlyReader{bytes.NewReader(data)})).must(t)
		wantChunks := uint32((n + chunk - 1) / chunk)
		if info.Name != name || info.Bucket != "RT" || info.Size != uint64(n) || info.Chunks != wantChunks ||
			info.Digest != objDigest(data) || info.NUID == "" || info.Deleted || info.IsLink() ||
			info.Opts == nil || info.Opts.ChunkSize != chunk || time.Since(info.ModTime) > time.Minute {
			t.Fatalf("size %d: info %+v (opts %+v)", n, info, info.Opts)
		}
		wantObject(t, obs, name, data)

		// Read through Read with a small buffer, and through WriteTo.
		res := got(obs.Get(ctx, name)).must(t)
		if ri, _ := res.Info(); ri.NUID != info.NUID || ri.Size != uint64(n) {
			t.Fatalf("reader info %+v", ri)
		}
		var small bytes.Buffer
		buf := make([]byte, 100)
		for {
			k, err := res.Read(buf)
			small.Write(buf[:k])
			if err == io.EOF {
				break
			}
			noErr(t, err)
		}
		if !bytes.Equal(small.Bytes(), data) {
			t.Fatalf("size %d: read in 100-byte pieces differs", n)
		}
		if k, err := res.Read(buf); k != 0 || err != io.EOF {
			t.Fatalf("read after the end: %d, %v", k, err)
		}
		noErr(t, res.Close())
		var out bytes.Buffer
		res = got(obs.Get(ctx, name)).must(t)
		if k, err := io.Copy(onlyWriter{&out}, res); err != nil || k != int64(n) || !bytes.Equal(out.Bytes(), data) {
			t.Fatalf("size %d: io.Copy from the result: %d, %v", n, k, err)
		}
		res.Close()
	}

	// ~2 MiB at the default chunk size, both ways through io.Copy: into a
	// Writer (its ReadFrom), out of a Get (its WriteTo).
	big := randomBytes(t, 2<<20+12345)
	w := got(obs.Writer(ctx, natsio.ObjectMeta{Name: "big", Description: "two MiB"})).must(t)
	if k, err := io.Copy(w, onlyReader{bytes.NewReader(big)}); err != nil || k != int64(len(big)) {
		t.Fatalf("io.Copy into the writer: %d, %v", k, err)
	}
	if w.Info() != nil {
		t.Fatal("info before Close")
	}
	noErr(t, w.Close())
	noErr(t, w.Close()) // again: the same outcome
	info := w.Info()
	if info == nil || info.Size != uint64(len(big)) || info.Chunks != uint32((len(big)+128*1024-1)/(128*1024)) ||
		info.Digest != objDigest(big) || info.Description != "two MiB" {
		t.Fatalf("big info %+v", info)
	}
	_, err := w.Write([]byte("more"))
	wantErr(t, err, natsio.ErrIllegalState)
	res := got(obs.Get(ctx, "big")).must(t)
	defer res.Close()
	h := sha256.New()
	if k, err := io.Copy(h, res); err != nil || k != int64(len(big)) {
		t.Fatalf("io.Copy out of the result: %d, %v", k, err)
	}
	if "SHA-256="+base64.URLEncoding.EncodeToString(h.Sum(nil)) != objDigest(big) {
		t.Fatal("big object read back differs")
	}
	// Written through plain Write calls of odd sizes, and with PutBytes.
	w = got(obs.Writer(ctx, natsio.ObjectMeta{Name: "pieces"})).must(t)
	for rest := big[:300000]; len(rest) > 0; {
		k := min(len(rest), 7777)
		got(w.Write(rest[:k])).must(t)
		rest = rest[k:]
	}
	noErr(t, w.Close())
	wantObject(t, obs, "pieces", big[:300000])
	got(obs.PutBytes(ctx, "bytes", big[:5000])).must(t)
	wantObject(t, obs, "bytes", big[:5000])
	got(obs.PutString(ctx, "string", "hello")).must(t)
	if s := got(obs.GetString(ctx, "string")).must(t); s != "hello" {
		t.Fatalf("GetString %q", s)
	}
}

func TestObjectMetaReplaceDelete(t *testing.T) {
	_, obs := objectStore(t, natsio.ObjectStoreConfig{Bucket: "META"})
	ctx := ctxTimeout(t, 30*time.Second)

	meta := natsio.ObjectMeta{
		Name: "report.pdf", Description: "Q1",
		Headers:  natsio.Header{"Content-Type": {"application/pdf"}, "X-Tag": {"a", "b"}},
		Metadata: map[string]string{"owner": "ann"},
	}
	v1 := randomBytes(t, 3000)
	first := got(obs.Put(ctx, meta, bytes.NewReader(v1))).must(t)
	info := got(obs.GetInfo(ctx, "report.pdf")).must(t)
	if info.Description != "Q1" || info.Headers.Get("Content-Type") != "application/pdf" ||
		!slices.Equal(info.Headers.Values("X-Tag"), []string{"a", "b"}) || info.Metadata["owner"] != "ann" ||
		info.NUID != first.NUID {
		t.Fatalf("info %+v", info)
	}

	// Replace: the new version and its info; the old chunks are purged.
	v2 := randomBytes(t, 1000)
	second := got(obs.Put(ctx, natsio.ObjectMeta{Name: "report.pdf"}, bytes.NewReader(v2))).must(t)
	if second.NUID == first.NUID || second.Description != "" || second.Headers != nil {
		t.Fatalf("replaced info %+v", second)
	}
	wantObject(t, obs, "report.pdf", v2)
	eventually(t, "the old chunks purged", func() bool {
		st, err := obs.Status(ctx)
		return err == nil && st.Info.State.Msgs == 2 // one chunk, one description
	})

	// UpdateMeta replaces description, headers and metadata.
	noErr(t, obs.UpdateMeta(ctx, "report.pdf", natsio.ObjectMeta{Description: "Q2", Metadata: map[string]string{"owner": "bob"}}))
	info = got(obs.GetInfo(ctx, "report.pdf")).must(t)
	if info.Description != "Q2" || info.Metadata["owner"] != "bob" || info.Headers != nil || info.NUID != second.NUID {
		t.Fatalf("updated info %+v", info)
	}
	// Rename; the content moves with it.
	noErr(t, obs.UpdateMeta(ctx, "report.pdf", natsio.ObjectMeta{Name: "final.pdf", Description: "Q2"}))
	_, err := obs.GetInfo(ctx, "report.pdf")
	wantErr(t, err, natsio.ErrObjectNotFound)
	wantObject(t, obs, "final.pdf", v2)
	// Rename onto a live object is refused; both stay as they were.
	got(obs.PutString(ctx, "other", "o")).must(t)
	wantErr(t, obs.UpdateMeta(ctx, "final.pdf", natsio.ObjectMeta{Name: "other"}), natsio.ErrObjectExists)
	wantObject(t, obs, "final.pdf", v2)
	wantObject(t, obs, "other", []byte("o"))
	wantErr(t, obs.UpdateMeta(ctx, "missing", natsio.ObjectMeta{Description: "d"}), natsio.ErrObjectNotFound)

	// Delete: not found (as a deleted object) for every read, unless asked.
	noErr(t, obs.Delete(ctx, "final.pdf"))
	_, err = obs.GetBytes(ctx, "final.pdf")
	wantErr(t, err, natsio.ErrObjectDeleted)
	wantErr(t, err, natsio.ErrObjectNotFound)
	_, err = obs.GetInfo(ctx, "final.pdf")
	wantErr(t, err, natsio.ErrObjectNotFound)
	_, err = obs.Get(ctx, "final.pdf")
	wantErr(t, err, natsio.ErrObjectDeleted)
	del := got(obs.GetInfo(ctx, "final.pdf", natsio.GetObjectInfoShowDeleted())).must(t)
	if !del.Deleted || del.Size != 0 || del.Chunks != 0 {
		t.Fatalf("deleted info %+v", del)
	}
	if data := got(obs.GetBytes(ctx, "final.pdf", natsio.GetObjectShowDeleted())).must(t); len(data) != 0 {
		t.Fatalf("a deleted object read %d bytes", len(data))
	}
	noErr(t, obs.Delete(ctx, "final.pdf")) // again: harmless, as in nats.go
	wantErr(t, obs.UpdateMeta(ctx, "final.pdf", natsio.ObjectMeta{Description: "x"}), natsio.ErrObjectDeleted)
	// Never stored: not found, and not "deleted".
	_, err = obs.GetBytes(ctx, "never")
	wantErr(t, err, natsio.ErrObjectNotFound)
	if errors.Is(err, natsio.ErrObjectDeleted) {
		t.Fatalf("a missing object reported as deleted: %v", err)
	}
	wantErr(t, obs.Delete(ctx, "never"), natsio.ErrObjectNotFound)
	// A deleted name can be stored again.
	got(obs.PutString(ctx, "final.pdf", "again")).must(t)
	wantObject(t, obs, "final.pdf", []byte("again"))
}

func TestObjectList(t *testing.T) {
	_, obs := objectStore(t, natsio.ObjectStoreConfig{Bucket: "LIST"})
	ctx := ctxTimeout(t, 20*time.Second)
	if list := got(obs.List(ctx)).must(t); list == nil || len(list) != 0 {
		t.Fatalf("empty bucket listed %v", list)
	}
	for _, name := range []string{"a", "b", "c"} {
		got(obs.PutString(ctx, name, "data of "+name)).must(t)
	}
	got(obs.PutString(ctx, "a", "new a")).must(t)
	noErr(t, obs.Delete(ctx, "b"))
	names := func(list []*natsio.ObjectInfo) []string {
		var out []string
		for _, i := range list {
			out = append(out, i.Name)
		}
		slices.Sort(out)
		return out
	}
	list := got(obs.List(ctx)).must(t)
	if !slices.Equal(names(list), []string{"a", "c"}) {
		t.Fatalf("list %v", names(list))
	}
	for _, i := range list {
		if i.Bucket != "LIST" || i.Deleted || (i.Name == "a" && i.Size != uint64(len("new a"))) {
			t.Fatalf("listed %+v", i)
		}
	}
	all := got(obs.List(ctx, natsio.ListObjectsShowDeleted())).must(t)
	if !slices.Equal(names(all), []string{"a", "b", "c"}) {
		t.Fatalf("list with deleted %v", names(all))
	}
	for _, i := range all {
		if i.Deleted != (i.Name == "b") {
			t.Fatalf("listed %+v", i)
		}
	}
}

func TestObjectLinks(t *testing.T) {
	_, js := jetStream(t)
	ctx := ctxTimeout(t, 30*time.Second)
	obs := got(js.CreateObjectStore(ctx, natsio.ObjectStoreConfig{Bucket: "L1"})).must(t)
	other := got(js.CreateObjectStore(ctx, natsio.ObjectStoreConfig{Bucket: "L2"})).must(t)
	data := randomBytes(t, 5000)
	target := got(obs.PutBytes(ctx, "target", data)).must(t)

	// A link to an object reads the target; its own info says link.
	link := got(obs.AddLink(ctx, "shortcut", target)).must(t)
	if !link.IsLink() || link.Opts.Link.Bucket != "L1" || link.Opts.Link.Name != "target" || link.Name != "shortcut" {
		t.Fatalf("link info %+v (opts %+v)", link, link.Opts)
	}
	if got := got(obs.GetBytes(ctx, "shortcut")).must(t); !bytes.Equal(got, data) {
		t.Fatal("read through the link differs")
	}
	res := got(obs.Get(ctx, "shortcut")).must(t)
	if ri, _ := res.Info(); ri.Name != "target" || ri.IsLink() {
		t.Fatalf("reader info through a link %+v", ri)
	}
	res.Close()
	if li := got(obs.GetInfo(ctx, "shortcut")).must(t); !li.IsLink() || li.Opts.Link.Name != "target" {
		t.Fatalf("GetInfo of the link %+v", li)
	}
	// From another bucket, with an info read there (List) or made by hand.
	listed := got(obs.List(ctx)).must(t)
	var fromList *natsio.ObjectInfo
	for _, i := range listed {
		if i.Name == "target" {
			fromList = i
		}
	}
	got(other.AddLink(ctx, "remote", fromList)).must(t)
	if got := got(other.GetBytes(ctx, "remote")).must(t); !bytes.Equal(got, data) {
		t.Fatal("read through a link to another bucket differs")
	}
	got(obs.AddLink(ctx, "by-hand", &natsio.ObjectInfo{ObjectMeta: natsio.ObjectMeta{Name: "target"}, Bucket: "L1"})).must(t)
	if got := got(obs.GetBytes(ctx, "by-hand")).must(t); !bytes.Equal(got, data) {
		t.Fatal("read through a link made from a hand-made info differs")
	}

	// A link to a bucket: listed, but not readable as an object.
	bl := got(obs.AddBucketLink(ctx, "dir", other)).must(t)
	if !bl.IsLink() || bl.Opts.Link.Bucket != "L2" || bl.Opts.Link.Name != "" {
		t.Fatalf("bucket link %+v", bl.Opts.Link)
	}
	_, err := obs.GetBytes(ctx, "dir")
	wantErr(t, err, natsio.ErrObjectLink)

	// Refused: a link to a link, over a live object, to a deleted object.
	_, err = obs.AddLink(ctx, "chain", link)
	wantErr(t, err, natsio.ErrObjectLink)
	got(obs.PutString(ctx, "taken", "t")).must(t)
	_, err = obs.AddLink(ctx, "taken", target)
	wantErr(t, err, natsio.ErrObjectExists)
	wantObject(t, obs, "taken", []byte("t"))
	gone := got(obs.PutString(ctx, "gone", "g")).must(t)
	noErr(t, obs.Delete(ctx, "gone"))
	deleted := got(obs.GetInfo(ctx, "gone", natsio.GetObjectInfoShowDeleted())).must(t)
	_, err = obs.AddLink(ctx, "to-gone", deleted)
	wantErr(t, err, natsio.ErrObjectLink)
	_, err = obs.AddLink(ctx, "to-gone", &natsio.ObjectInfo{ObjectMeta: natsio.ObjectMeta{Name: "gone"}})
	wantErr(t, err, natsio.ErrObjectLink)
	_ = gone
	_, err = obs.AddLink(ctx, "x", nil)
	wantErr(t, err, natsio.ErrNullArgument)
	_, err = obs.AddBucketLink(ctx, "x", nil)
	wantErr(t, err, natsio.ErrNullArgument)
	// A link whose target is deleted afterwards no longer reads.
	noErr(t, obs.Delete(ctx, "target"))
	_, err = obs.GetBytes(ctx, "shortcut")
	wantErr(t, err, natsio.ErrObjectNotFound)
}

// An info's Revision is the stream sequence its description is stored at:
// the stream's last sequence right after the call that stored it, the same
// when read back by GetInfo, Get, List and Watch, and greater after every
// change of the object.
func TestObjectRevision(t *testing.T) {
	js, obs := objectStore(t, natsio.ObjectStoreConfig{Bucket: "REV"})
	ctx := ctxTimeout(t, 30*time.Second)
	lastSeq := func() uint64 {
		t.Helper()
		return got(js.StreamInfo(ctx, "OBJ_REV")).must(t).State.LastSeq
	}
	wantRev := func(what string, info *natsio.ObjectInfo, want uint64) {
		t.Helper()
		if info.Revision != want {
			t.Fatalf("%s: Revision %d, want %d", what, info.Revision, want)
		}
	}
	put1 := got(obs.PutString(ctx, "a", "one")).must(t)
	wantRev("first put", put1, 2) // its chunk at 1, its description at 2
	wantRev("GetInfo after the first put", got(obs.GetInfo(ctx, "a")).must(t), put1.Revision)
	put2 := got(obs.PutString(ctx, "a", "two")).must(t)
	wantRev("second put", put2, lastSeq())
	if put2.Revision <= put1.Revision {
		t.Fatalf("second put's Revision %d not after the first's %d", put2.Revision, put1.Revision)
	}
	res := got(obs.Get(ctx, "a")).must(t)
	wantRev("Get's info", got(res.Info()).must(t), put2.Revision)
	noErr(t, res.Close())

	noErr(t, obs.UpdateMeta(ctx, "a", natsio.ObjectMeta{Description: "changed"}))
	updated := got(obs.GetInfo(ctx, "a")).must(t)
	wantRev("GetInfo after UpdateMeta", updated, lastSeq())
	if updated.Revision <= put2.Revision {
		t.Fatalf("UpdateMeta's Revision %d not after the put's %d", updated.Revision, put2.Revision)
	}
	link := got(obs.AddLink(ctx, "to-a", updated)).must(t)
	wantRev("AddLink", link, lastSeq())
	wantRev("GetInfo of the link", got(obs.GetInfo(ctx, "to-a")).must(t), link.Revision)

	// The list and a watch read the same revisions.
	list := got(obs.List(ctx)).must(t)
	if len(list) != 2 {
		t.Fatalf("List: %d infos, want 2", len(list))
	}
	for _, info := range list {
		wantRev("List's "+info.Name, info, got(obs.GetInfo(ctx, info.Name)).must(t).Revision)
	}
	w := got(obs.Watch(ctx)).must(t)
	defer w.Stop()
	for _, want := range []*natsio.ObjectInfo{updated, link, nil} {
		info, err := w.Next(ctxTimeout(t, 5*time.Second))
		noErr(t, err)
		if want == nil {
			if info != nil {
				t.Fatalf("watch: %s, want the initial-done marker", info.Name)
			}
			break
		}
		if info == nil || info.Name != want.Name {
			t.Fatalf("watch: %v, want %s", objEventOf(info), want.Name)
		}
		wantRev("watch's "+want.Name, info, want.Revision)
	}

	// A delete's tombstone is the newest description.
	noErr(t, obs.Delete(ctx, "a"))
	gone, err := w.Next(ctxTimeout(t, 5*time.Second))
	noErr(t, err)
	if gone == nil || gone.Name != "a" || !gone.Deleted {
		t.Fatalf("watch after Delete: %v", objEventOf(gone))
	}
	wantRev("watch's tombstone", gone, lastSeq())
	wantRev("GetInfo of the deleted", got(obs.GetInfo(ctx, "a", natsio.GetObjectInfoShowDeleted())).must(t), gone.Revision)

	// Not in the JSON (nats.go's ObjectInfo has no such field).
	if j := string(got(json.Marshal(gone)).must(t)); strings.Contains(strings.ToLower(j), "revision") {
		t.Fatalf("ObjectInfo as JSON: %s", j)
	}
}

func TestObjectSeal(t *testing.T) {
	_, obs := objectStore(t, natsio.ObjectStoreConfig{Bucket: "SEAL"})
	ctx := ctxTimeout(t, 20*time.Second)
	got(obs.PutString(ctx, "kept", "before the seal")).must(t)
	noErr(t, obs.Seal(ctx))
	if st := got(obs.Status(ctx)).must(t); !st.Sealed {
		t.Fatalf("status after Seal %+v", st)
	}
	_, err := obs.PutString(ctx, "new", "x")
	wantErr(t, err, natsio.ErrBucketSealed)
	_, err = obs.Put(ctx, natsio.ObjectMeta{Name: "streamed", Opts: &natsio.ObjectMetaOptions{ChunkSize: 1024}},
		bytes.NewReader(randomBytes(t, 5000)))
	wantErr(t, err, natsio.ErrBucketSealed)
	wantErr(t, obs.Delete(ctx, "kept"), natsio.ErrBucketSealed)
	wantErr(t, obs.UpdateMeta(ctx, "kept", natsio.ObjectMeta{Description: "d"}), natsio.ErrBucketSealed)
	// Still readable.
	wantObject(t, obs, "kept", []byte("before the seal"))
}

type objEvent struct {
	name    string
	size    uint64
	deleted bool
}

func objEventOf(i *natsio.ObjectInfo) objEvent {
	if i == nil {
		return objEvent{name: "<initial done>"}
	}
	return objEvent{i.Name, i.Size, i.Deleted}
}

var objInitialDone = objEventOf(nil)

func nextObjEvents(t *testing.T, w *natsio.ObjectWatcher, n int) []objEvent {
	t.Helper()
	out := make([]objEvent, n)
	for i := range out {
		info, err := w.Next(ctxTimeout(t, 5*time.Second))
		if err != nil {
			t.Fatalf("ObjectWatcher.Next (%d of %d): %v", i+1, n, err)
		}
		out[i] = objEventOf(info)
	}
	return out
}

func wantObjEvents(t *testing.T, got []objEvent, want ...objEvent) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Fatalf("events\n got %v\nwant %v", got, want)
	}
}

func objQuiet(t *testing.T, w *natsio.ObjectWatcher) {
	t.Helper()
	info, err := w.Next(ctxTimeout(t, 200*time.Millisecond))
	if !errors.Is(err, natsio.ErrTimeout) {
		t.Fatalf("expected nothing, got %v, %v", objEventOf(info), err)
	}
}

func TestObjectWatch(t *testing.T) {
	js, obs := objectStore(t, natsio.ObjectStoreConfig{Bucket: "WATCH"})
	ctx := ctxTimeout(t, 30*time.Second)
	got(obs.PutString(ctx, "a", "1")).must(t)
	got(obs.PutString(ctx, "a", "22")).must(t)
	got(obs.PutString(ctx, "b", "333")).must(t)
	got(obs.PutString(ctx, "gone", "x")).must(t)
	noErr(t, obs.Delete(ctx, "gone"))

	// Latest of each object, then the marker, then changes.
	w := got(obs.Watch(ctx)).must(t)
	defer w.Stop()
	wantObjEvents(t, nextObjEvents(t, w, 4), objEvent{"a", 2, false}, objEvent{"b", 3, false},
		objEvent{"gone", 0, true}, objInitialDone)
	got(obs.PutString(ctx, "c", "4444")).must(t)
	noErr(t, obs.Delete(ctx, "a"))
	noErr(t, obs.UpdateMeta(ctx, "b", natsio.ObjectMeta{Description: "described"}))
	ev := nextObjEvents(t, w, 3)
	wantObjEvents(t, ev, objEvent{"c", 4, false}, objEvent{"a", 0, true}, objEvent{"b", 3, false})
	objQuiet(t, w)

	// IgnoreDeletes (with IncludeHistory: a description replaces the
	// previous one of its object, so the history is the latest of each).
	h := got(obs.Watch(ctx, natsio.IncludeHistory(), natsio.IgnoreDeletes())).must(t)
	defer h.Stop()
	wantObjEvents(t, nextObjEvents(t, h, 3), objEvent{"c", 4, false}, objEvent{"b", 3, false}, objInitialDone)
	noErr(t, obs.Delete(ctx, "c"))
	got(obs.PutString(ctx, "d", "55555")).must(t)
	wantObjEvents(t, nextObjEvents(t, h, 1), objEvent{"d", 5, false})
	objQuiet(t, h)
	wantObjEvents(t, nextObjEvents(t, w, 2), objEvent{"c", 0, true}, objEvent{"d", 5, false})

	// UpdatesOnly: the marker at once, then only new changes, through the
	// Updates channel.
	u := got(obs.Watch(ctx, natsio.UpdatesOnly())).must(t)
	ch := u.Updates()
	if u.Updates() != ch {
		t.Fatal("Updates returned another channel")
	}
	if info := await(t, ch, "the marker"); info != nil {
		t.Fatalf("first update %+v, want the marker", info)
	}
	_, err := u.Next(ctx)
	wantErr(t, err, natsio.ErrIllegalState)
	got(obs.PutString(ctx, "e", "666666")).must(t)
	if info := await(t, ch, "an update"); objEventOf(info) != (objEvent{"e", 6, false}) || info.Bucket != "WATCH" {
		t.Fatalf("update %+v", info)
	}
	u.Stop()
	for range ch {
	}
	u.Stop()
	wantObjEvents(t, nextObjEvents(t, w, 1), objEvent{"e", 6, false})

	// Stop from another goroutine ends a blocked Next; later ones end too.
	blocked := make(chan error, 1)
	go func() {
		_, err := w.Next(context.Background())
		blocked <- err
	}()
	time.Sleep(100 * time.Millisecond)
	go w.Stop()
	wantErr(t, await(t, blocked, "Next during Stop"), natsio.ErrDone)
	_, err = w.Next(ctx)
	wantErr(t, err, natsio.ErrDone)
	h.Stop()
	eventually(t, "the watches' consumers deleted", func() bool {
		names, err := js.ConsumerNames(ctx, "OBJ_WATCH")
		return err == nil && len(names) == 0
	})

	// Closing the connection ends a watch with ErrConnectionClosed.
	d := got(obs.Watch(ctx, natsio.UpdatesOnly())).must(t)
	defer d.Stop()
	wantObjEvents(t, nextObjEvents(t, d, 1), objInitialDone)
	js.Conn().Close()
	_, err = d.Next(ctx)
	wantErr(t, err, natsio.ErrConnectionClosed)
	_, err = obs.PutString(ctx, "late", "x")
	wantErr(t, err, natsio.ErrConnectionClosed)
}

// failingReader yields n bytes of data, then fails with err.
type failingReader struct {
	data []byte
	err  error
}

func (f *failingReader) Read(p []byte) (int, error) {
	if len(f.data) == 0 {
		return 0, f.err
	}
	n := copy(p, f.data)
	f.data = f.data[n:]
	return n, nil
}

func TestObjectAbortKeepsPrevious(t *testing.T) {
	_, obs := objectStore(t, natsio.ObjectStoreConfig{Bucket: "ABORT"})
	ctx := ctxTimeout(t, 30*time.Second)
	v1 := randomBytes(t, 4000)
	first := got(obs.PutBytes(ctx, "doc", v1)).must(t)
	msgs := func() uint64 { return got(obs.Status(ctx)).must(t).Info.State.Msgs }
	before := msgs()

	// A writer that published chunks, then aborted: the old version stays,
	// the new chunks go.
	w := got(obs.Writer(ctx, natsio.ObjectMeta{Name: "doc", Opts: &natsio.ObjectMetaOptions{ChunkSize: 1024}})).must(t)
	got(w.Write(randomBytes(t, 10*1024+5))).must(t)
	eventually(t, "chunks of the writer published", func() bool { return msgs() > before })
	noErr(t, w.Abort())
	noErr(t, w.Abort()) // again: harmless
	wantErr(t, w.Close(), natsio.ErrIllegalState)
	_, err := w.Write([]byte("x"))
	wantErr(t, err, natsio.ErrIllegalState)
	wantObject(t, obs, "doc", v1)
	if info := got(obs.GetInfo(ctx, "doc")).must(t); info.NUID != first.NUID {
		t.Fatalf("info changed by an aborted put: %+v", info)
	}
	eventually(t, "the aborted chunks purged", func() bool { return msgs() == before })

	// Put from a reader that fails halfway: its error, the old version kept.
	boom := errors.New("disk on fire")
	_, err = obs.Put(ctx, natsio.ObjectMeta{Name: "doc", Opts: &natsio.ObjectMetaOptions{ChunkSize: 1024}},
		&failingReader{data: randomBytes(t, 5000), err: boom})
	if !errors.Is(err, boom) {
		t.Fatalf("Put from a failing reader: %v", err)
	}
	wantObject(t, obs, "doc", v1)
	eventually(t, "the failed put's chunks purged", func() bool { return msgs() == before })

	// Abort after a successful Close is refused.
	w = got(obs.Writer(ctx, natsio.ObjectMeta{Name: "small"})).must(t)
	got(w.Write([]byte("abc"))).must(t)
	noErr(t, w.Close())
	wantErr(t, w.Abort(), natsio.ErrIllegalState)
	wantObject(t, obs, "small", []byte("abc"))
}

// cancellingReader yields data and cancels its context after `after`
// bytes, then keeps yielding until the put notices.
type cancellingReader struct {
	cancel context.CancelFunc
	after  int
	read   int
}

func (c *cancellingReader) Read(p []byte) (int, error) {
	if c.read >= c.after {
		c.cancel()
	}
	n := min(len(p), 1000)
	for i := range p[:n] {
		p[i] = byte(c.read + i)
	}
	c.read += n
	if c.read > 100*c.after {
		return n, io.EOF
	}
	return n, nil
}

func TestObjectContextCancel(t *testing.T) {
	_, obs := objectStore(t, natsio.ObjectStoreConfig{Bucket: "CTX"})
	ctx := ctxTimeout(t, 30*time.Second)
	v1 := randomBytes(t, 3000)
	got(obs.PutBytes(ctx, "doc", v1)).must(t)

	// An ended context fails every call at once.
	done, cancel := context.WithCancel(ctx)
	cancel()
	_, err := obs.GetBytes(done, "doc")
	wantIs(t, err, context.Canceled)
	_, err = obs.PutString(done, "doc", "x")
	wantIs(t, err, context.Canceled)
	_, err = obs.List(done)
	wantIs(t, err, context.Canceled)
	_, err = obs.Put(done, natsio.ObjectMeta{Name: "doc"}, strings.NewReader("y"))
	wantIs(t, err, context.Canceled)

	// A put whose context ends halfway is abandoned: the old version stays.
	putCtx, cancelPut := context.WithCancel(ctx)
	r := &cancellingReader{cancel: cancelPut, after: 5000}
	_, err = obs.Put(putCtx, natsio.ObjectMeta{Name: "doc", Opts: &natsio.ObjectMetaOptions{ChunkSize: 1024}}, r)
	wantIs(t, err, context.Canceled)
	if r.read > 100*r.after {
		t.Fatal("the put read everything despite its context")
	}
	wantObject(t, obs, "doc", v1)

	// A reader whose Get context ends mid-way stops with that error.
	big := randomBytes(t, 64*1024)
	got(obs.Put(ctx, natsio.ObjectMeta{Name: "big", Opts: &natsio.ObjectMetaOptions{ChunkSize: 1024}}, bytes.NewReader(big))).must(t)
	getCtx, cancelGet := context.WithCancel(ctx)
	res := got(obs.Get(getCtx, "big")).must(t)
	buf := make([]byte, 1000)
	got(res.Read(buf)).must(t)
	cancelGet()
	var rerr error
	for range 100 {
		if _, rerr = res.Read(buf); rerr != nil {
			break
		}
	}
	wantIs(t, rerr, context.Canceled)
	_, err = res.Read(buf)
	wantIs(t, err, context.Canceled)
	noErr(t, res.Close())

	// A deadline is reported as a timeout too.
	short, cancelShort := context.WithTimeout(ctx, time.Nanosecond)
	defer cancelShort()
	<-short.Done()
	_, err = obs.GetInfo(short, "doc")
	wantIs(t, err, context.DeadlineExceeded)
	wantIs(t, err, natsio.ErrTimeout)

	// Close ends the reading: later reads fail, Close again is harmless.
	res = got(obs.Get(ctx, "big")).must(t)
	noErr(t, res.Close())
	_, err = res.Read(buf)
	wantErr(t, err, natsio.ErrIllegalState)
	noErr(t, res.Close())
}

func TestObjectDigestMismatch(t *testing.T) {
	js, obs := objectStore(t, natsio.ObjectStoreConfig{Bucket: "CORRUPT"})
	ctx := ctxTimeout(t, 20*time.Second)
	data := randomBytes(t, 3000)
	info := got(obs.Put(ctx, natsio.ObjectMeta{Name: "doc", Opts: &natsio.ObjectMetaOptions{ChunkSize: 1024}},
		bytes.NewReader(data))).must(t)
	// One more chunk, published by hand on the object's chunk subject.
	got(js.Publish(ctx, "$O.CORRUPT.C."+info.NUID, []byte("intruder"))).must(t)
	_, err := obs.GetBytes(ctx, "doc")
	wantErr(t, err, natsio.ErrDigestMismatch)
	res := got(obs.Get(ctx, "doc")).must(t)
	defer res.Close()
	_, err = io.Copy(io.Discard, res)
	wantErr(t, err, natsio.ErrDigestMismatch)
}

func TestObjectBadInput(t *testing.T) {
	_, obs := objectStore(t, natsio.ObjectStoreConfig{Bucket: "BAD"})
	ctx := ctxTimeout(t, 20*time.Second)

	// Names.
	_, err := obs.PutString(ctx, "", "x")
	wantErr(t, err, natsio.ErrInvalidObjectName)
	wantIs(t, err, natsio.ErrConfig) // a kind of configuration error
	_, err = obs.Put(ctx, natsio.ObjectMeta{}, strings.NewReader("x"))
	wantErr(t, err, natsio.ErrInvalidObjectName)
	_, err = obs.GetBytes(ctx, "")
	wantErr(t, err, natsio.ErrInvalidObjectName)
	_, err = obs.PutString(ctx, "nul\x00", "x")
	wantErr(t, err, natsio.ErrInvalidArgument)
	_, err = obs.Get(ctx, "nul\x00")
	wantErr(t, err, natsio.ErrInvalidArgument)

	// Meta.
	_, err = obs.Put(ctx, natsio.ObjectMeta{Name: "l", Opts: &natsio.ObjectMetaOptions{Link: &natsio.ObjectLink{Bucket: "BAD"}}},
		strings.NewReader("x"))
	wantErr(t, err, natsio.ErrConfig)
	_, err = obs.Put(ctx, natsio.ObjectMeta{Name: "h", Headers: natsio.Header{"Bad Name": {"v"}}}, strings.NewReader("x"))
	if err == nil {
		t.Fatal("a header name with a space was accepted")
	}
	_, err = obs.Put(ctx, natsio.ObjectMeta{Name: "r"}, nil)
	wantErr(t, err, natsio.ErrNullArgument)

	// Nil handles.
	var none *natsio.ObjectStore
	_, err = none.GetBytes(ctx, "x")
	wantErr(t, err, natsio.ErrNullArgument)
	_, err = none.Writer(ctx, natsio.ObjectMeta{Name: "x"})
	wantErr(t, err, natsio.ErrNullArgument)
	var nw *natsio.ObjectWriter
	_, err = nw.Write([]byte("x"))
	wantErr(t, err, natsio.ErrNullArgument)
	var nr *natsio.ObjectResult
	_, err = nr.Read(make([]byte, 1))
	wantErr(t, err, natsio.ErrNullArgument)
	var nwatch *natsio.ObjectWatcher
	_, err = nwatch.Next(ctx)
	wantErr(t, err, natsio.ErrNullArgument)
	nwatch.Stop()
	for range nwatch.Updates() {
	}

	// Nothing of the failed calls was stored.
	if list := got(obs.List(ctx)).must(t); len(list) != 0 {
		t.Fatalf("stored by bad calls: %v", list)
	}
}

func TestObjectConnClosedDuringGet(t *testing.T) {
	js, obs := objectStore(t, natsio.ObjectStoreConfig{Bucket: "CLOSED"})
	ctx := ctxTimeout(t, 20*time.Second)
	data := randomBytes(t, 512*1024)
	got(obs.Put(ctx, natsio.ObjectMeta{Name: "doc", Opts: &natsio.ObjectMetaOptions{ChunkSize: 1024}}, bytes.NewReader(data))).must(t)
	res := got(obs.Get(ctx, "doc")).must(t)
	defer res.Close()
	buf := make([]byte, 1000)
	got(res.Read(buf)).must(t)
	w := got(obs.Writer(ctx, natsio.ObjectMeta{Name: "doc"})).must(t)
	js.Conn().Close()
	var err error
	for range len(data) {
		if _, err = res.Read(buf); err != nil {
			break
		}
	}
	wantErr(t, err, natsio.ErrConnectionClosed)
	// The write may be accepted (the failure comes with the publish);
	// completing the object cannot succeed.
	if _, err = w.Write(randomBytes(t, 200*1024)); err != nil {
		wantErr(t, err, natsio.ErrConnectionClosed)
	}
	wantErr(t, w.Close(), natsio.ErrConnectionClosed)
}
