// Object Store through the legacy JetStream context (nc.JetStream()):
// puts of bytes, strings, readers and files, gets, infos, metadata,
// links, listings, a watcher, deletes and sealing.
package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"log"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/nats-io/nats.go"
)

func next(w nats.ObjectWatcher) string {
	select {
	case i, ok := <-w.Updates():
		if !ok {
			return "<closed>"
		}
		if i == nil {
			return "<nil>"
		}
		return fmt.Sprintf("%s size %d deleted %v", i.Name, i.Size, i.Deleted)
	case <-time.After(5 * time.Second):
		log.Fatal("no update")
	}
	return ""
}

func main() {
	url := os.Getenv("NATS_URL")
	if url == "" {
		url = nats.DefaultURL
	}
	nc, err := nats.Connect(url)
	if err != nil {
		log.Fatal(err)
	}
	defer nc.Close()
	js, err := nc.JetStream()
	if err != nil {
		log.Fatal(err)
	}

	_, err = js.CreateObjectStore(nil)
	fmt.Println("nil config:", err)
	_, err = js.CreateObjectStore(&nats.ObjectStoreConfig{Bucket: "no good"})
	fmt.Println("bad name:", err, errors.Is(err, nats.ErrInvalidStoreName))
	_, err = js.ObjectStore("absent")
	fmt.Println("bind absent:", err, errors.Is(err, nats.ErrStreamNotFound))

	obs, err := js.CreateObjectStore(&nats.ObjectStoreConfig{Bucket: "assets", Description: "site assets",
		Metadata: map[string]string{"team": "web"}})
	if err != nil {
		log.Fatal(err)
	}
	_, err = obs.List()
	fmt.Println("empty list:", err, errors.Is(err, nats.ErrNoObjectsFound))
	w, err := obs.Watch()
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("watch empty:", next(w))

	info, err := obs.PutString("hello.txt", "hello world")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("put string:", info.Bucket, info.Name, info.Size, info.Chunks, info.Digest, info.Opts.ChunkSize)
	fmt.Println("watcher:", next(w))

	data := bytes.Repeat([]byte("abcdefghij"), 20000)
	meta := &nats.ObjectMeta{Name: "logo.bin", Description: "two hundred thousand bytes",
		Headers: nats.Header{"Content-Type": []string{"application/octet-stream"}},
		Metadata: map[string]string{"format": "raw"}, Opts: &nats.ObjectMetaOptions{ChunkSize: 64 * 1024}}
	info, err = obs.Put(meta, bytes.NewReader(data))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("put reader:", info.Name, info.Size, info.Chunks, info.Description, info.Metadata["format"],
		info.Headers.Get("Content-Type"), info.Opts.ChunkSize)
	fmt.Println("watcher:", next(w))
	info, err = obs.PutBytes("empty", nil)
	fmt.Println("put empty:", info.Size, info.Chunks, info.Digest, err)
	fmt.Println("watcher:", next(w))

	_, err = obs.Put(&nats.ObjectMeta{}, bytes.NewReader(nil))
	fmt.Println("put without name:", err, errors.Is(err, nats.ErrBadObjectMeta))
	_, err = obs.Put(&nats.ObjectMeta{Name: "x", Opts: &nats.ObjectMetaOptions{Link: &nats.ObjectLink{Bucket: "b"}}}, nil)
	fmt.Println("put with link:", err)

	dir, err := os.MkdirTemp("", "obj-legacy-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	src := filepath.Join(dir, "notes.txt")
	os.WriteFile(src, []byte("line one\nline two\n"), 0o600)
	info, err = obs.PutFile(src)
	fmt.Println("put file:", info.Name == src, info.Size, err)
	fmt.Println("watcher:", next(w) == fmt.Sprintf("%s size 18 deleted false", src))
	dst := filepath.Join(dir, "copy.txt")
	fmt.Println("get file:", obs.GetFile(src, dst))
	copied, _ := os.ReadFile(dst)
	fmt.Printf("copied: %q\n", copied)
	missing := filepath.Join(dir, "missing.txt")
	err = obs.GetFile("nothing", missing)
	_, statErr := os.Stat(missing)
	fmt.Println("get file of missing:", err, os.IsNotExist(statErr))

	s, err := obs.GetString("hello.txt")
	fmt.Println("get string:", s, err)
	b, err := obs.GetBytes("logo.bin")
	fmt.Println("get bytes:", len(b), bytes.Equal(b, data), err)
	r, err := obs.Get("logo.bin")
	if err != nil {
		log.Fatal(err)
	}
	ri, err := r.Info()
	fmt.Println("result info:", ri.Name, ri.Size, err)
	got, err := io.ReadAll(r)
	fmt.Println("read:", len(got), err, r.Error())
	r.Close()
	_, err = obs.Get("nothing")
	fmt.Println("get missing:", err, errors.Is(err, nats.ErrObjectNotFound))

	gi, err := obs.GetInfo("logo.bin")
	fmt.Println("info:", gi.Name, gi.Size, gi.Chunks, gi.Description, gi.Deleted, gi.ModTime.IsZero(), err)
	_, err = obs.GetInfo("")
	fmt.Println("info without name:", err)

	fmt.Println("update meta:", obs.UpdateMeta("hello.txt", &nats.ObjectMeta{Name: "greeting.txt", Description: "renamed"}))
	fmt.Println("watcher:", next(w))
	gi, err = obs.GetInfo("greeting.txt")
	fmt.Println("renamed info:", gi.Name, gi.Description, gi.Size, err)
	_, err = obs.GetInfo("hello.txt")
	fmt.Println("old name:", err)
	fmt.Println("update meta of missing:", obs.UpdateMeta("nothing", &nats.ObjectMeta{Name: "nothing"}))
	fmt.Println("update meta onto existing:", obs.UpdateMeta("greeting.txt", &nats.ObjectMeta{Name: "logo.bin"}))
	fmt.Println("update meta nil:", obs.UpdateMeta("greeting.txt", nil))

	target, _ := obs.GetInfo("greeting.txt")
	link, err := obs.AddLink("hi", target)
	fmt.Println("add link:", link.Name, link.Opts.Link.Bucket, link.Opts.Link.Name, err)
	fmt.Println("watcher:", next(w))
	s, err = obs.GetString("hi")
	fmt.Println("get through link:", s, err)
	_, err = obs.AddLink("hi2", link)
	fmt.Println("link to link:", err)
	_, err = obs.AddLink("", target)
	fmt.Println("link without name:", err)
	_, err = obs.AddLink("hi3", nil)
	fmt.Println("link to nil:", err)
	_, err = obs.AddLink("logo.bin", target)
	fmt.Println("link over object:", err)

	other, err := js.CreateObjectStore(&nats.ObjectStoreConfig{Bucket: "archive", Storage: nats.MemoryStorage})
	if err != nil {
		log.Fatal(err)
	}
	other.PutString("old.txt", "old")
	blink, err := obs.AddBucketLink("to-archive", other)
	fmt.Println("bucket link:", blink.Name, blink.Opts.Link.Bucket, blink.Opts.Link.Name == "", err)
	fmt.Println("watcher:", next(w))
	_, err = obs.Get("to-archive")
	fmt.Println("get bucket link:", err)
	_, err = obs.AddBucketLink("to-nil", nil)
	fmt.Println("bucket link to nil:", err)

	list, err := obs.List()
	fmt.Println("list:", len(list), err)
	var names []string
	for _, o := range list {
		if o.Name != src {
			names = append(names, fmt.Sprintf("%s:%d:%v", o.Name, o.Size, o.Opts != nil && o.Opts.Link != nil))
		}
	}
	sort.Strings(names)
	fmt.Println("listed:", names)

	fmt.Println("delete:", obs.Delete("logo.bin"))
	fmt.Println("watcher:", next(w))
	_, err = obs.GetBytes("logo.bin")
	fmt.Println("get deleted:", err)
	di, err := obs.GetInfo("logo.bin", nats.GetObjectInfoShowDeleted())
	fmt.Println("deleted info:", di.Name, di.Deleted, di.Size, err)
	dr, err := obs.Get("logo.bin", nats.GetObjectShowDeleted())
	if err == nil {
		dd, _ := io.ReadAll(dr)
		fmt.Println("get deleted shown:", len(dd))
	} else {
		fmt.Println("get deleted shown:", err)
	}
	fmt.Println("delete missing:", obs.Delete("nothing"))
	list, _ = obs.List()
	fmt.Println("list after delete:", len(list))
	list, _ = obs.List(nats.ListObjectsShowDeleted())
	fmt.Println("list with deleted:", len(list))

	iw, err := obs.Watch(nats.IgnoreDeletes())
	if err != nil {
		log.Fatal(err)
	}
	var seen []string
	for {
		s := next(iw)
		if s == "<nil>" {
			break
		}
		if s != fmt.Sprintf("%s size 18 deleted false", src) {
			seen = append(seen, s)
		}
	}
	sort.Strings(seen)
	fmt.Println("ignore-deletes watcher:", seen)
	iw.Stop()
	uw, err := obs.Watch(nats.UpdatesOnly())
	if err != nil {
		log.Fatal(err)
	}
	obs.PutString("late.txt", "late")
	fmt.Println("updates-only watcher:", next(uw))
	uw.Stop()
	fmt.Println("stopped watcher:", next(uw))
	w.Stop()

	st, err := obs.Status()
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("status:", st.Bucket(), st.Description(), st.TTL(), st.Storage(), st.Replicas(), st.Sealed(),
		st.Size() > 0, st.BackingStore(), st.Metadata()["team"], st.IsCompressed())
	if bs, ok := st.(*nats.ObjectBucketStatus); ok {
		fmt.Println("stream:", bs.StreamInfo().Config.Name)
	}
	fmt.Println("seal:", obs.Seal())
	st, _ = obs.Status()
	fmt.Println("sealed:", st.Sealed())
	_, err = obs.PutString("more.txt", "more")
	fmt.Println("put to sealed:", err != nil)

	var bucketNames []string
	for n := range js.ObjectStoreNames() {
		bucketNames = append(bucketNames, n)
	}
	sort.Strings(bucketNames)
	fmt.Println("names:", bucketNames)
	var stores []string
	for s := range js.ObjectStores() {
		stores = append(stores, fmt.Sprintf("%s:%v", s.Bucket(), s.Sealed()))
	}
	sort.Strings(stores)
	fmt.Println("stores:", stores)

	fmt.Println("delete bucket:", js.DeleteObjectStore("archive"))
	err = js.DeleteObjectStore("archive")
	fmt.Println("delete again:", err, errors.Is(err, nats.ErrStreamNotFound))
}
