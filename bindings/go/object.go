package natsio

// Object Store buckets over the natsio_js_obj_* and natsio_obj_* functions.
// Objects are written and read in pieces: Put and ObjectWriter feed the
// library's writer (which publishes each full chunk), Get returns a reader
// over the library's chunk consumer. No call holds a whole object in memory
// except PutBytes and GetBytes, which are given or return one.

/*
#include <stdint.h>
#include <stdlib.h>
#include "natsio_go.h"
*/
import "C"

import (
	"context"
	"encoding/json"
	"io"
	"runtime"
	"slices"
	"sync"
	"time"
	"unsafe"
)

// defaultChunkSize is the library's chunk size when ObjectMetaOptions
// gives none (ADR-20's 128 KiB).
const defaultChunkSize = 128 * 1024

// ObjectStoreConfig is a bucket's configuration. Zero fields are left out
// (the defaults apply: no TTL, no size limit, file storage, one replica).
// The library refuses fields it does not know, so there is no Extra here.
type ObjectStoreConfig struct {
	Bucket      string            `json:"bucket"`                // [A-Za-z0-9_-]+
	Description string            `json:"description,omitempty"` // free text
	TTL         time.Duration     `json:"ttl,omitempty"`         // objects not updated for this long are removed
	MaxBytes    int64             `json:"max_bytes,omitempty"`   // 0: unlimited (-1)
	Storage     StorageType       `json:"storage,omitempty"`     // "": FileStorage
	Replicas    int               `json:"replicas,omitempty"`    // servers of a cluster keeping a copy (0: one)
	Placement   *Placement        `json:"placement,omitempty"`   // where the bucket's stream goes (nil: anywhere)
	Compression bool              `json:"compression,omitempty"` // s2 compression of the stream
	Metadata    map[string]string `json:"metadata,omitempty"`    // user key/value pairs stored with the bucket's stream
}

// Placement places a stream (or a bucket's stream) on a cluster and/or
// servers with tags.
type Placement struct {
	Cluster string   `json:"cluster,omitempty"` // the cluster's name
	Tags    []string `json:"tags,omitempty"`    // tags the servers must have
}

// ObjectLink is where a link points: object Name of Bucket, or the whole
// Bucket when Name is "". Links are made with AddLink and AddBucketLink.
type ObjectLink struct {
	Bucket string `json:"bucket"`         // the target's bucket
	Name   string `json:"name,omitempty"` // the target object, "" for a link to the whole bucket
}

// ObjectMetaOptions are further properties of an object.
type ObjectMetaOptions struct {
	// Link is set on links (read only: Put refuses it).
	Link *ObjectLink `json:"link,omitempty"`
	// ChunkSize is the size of each chunk in bytes (Put; 0: 128 KiB). In
	// an ObjectInfo: the chunk size the writer recorded (0 if none).
	ChunkSize uint32 `json:"max_chunk_size,omitempty"`
}

// ObjectMeta is what the writer of an object says about it.
//
// Its fields, and ObjectInfo's, encode to JSON under nats.go's names
// (ADR-20's), so a program that stores or logs them as JSON reads the
// same documents with either client.
type ObjectMeta struct {
	Name        string             `json:"name"`                  // the object's name: any non-empty text
	Description string             `json:"description,omitempty"` // free text
	Headers     Header             `json:"headers,omitempty"`     // headers stored with the object's info
	Metadata    map[string]string  `json:"metadata,omitempty"`    // user key/value pairs
	Opts        *ObjectMetaOptions `json:"options,omitempty"`     // nil when none
}

// ObjectInfo describes a stored object (ADR-20's ObjectInfo, as nats.go
// reads it). An ObjectInfo returned by this package also holds the
// library's copy of it, which AddLink uses: changing the Go fields does
// not change what a link made from it points at.
type ObjectInfo struct {
	ObjectMeta           // what its writer said about it
	Bucket     string    `json:"bucket"`            // the bucket holding it
	NUID       string    `json:"nuid"`              // the unique id of this version (its chunks' subject ends with it)
	Size       uint64    `json:"size"`              // the content's size in bytes
	ModTime    time.Time `json:"mtime"`             // when this info was stored
	Chunks     uint32    `json:"chunks"`            // how many chunks hold the content
	Digest     string    `json:"digest,omitempty"`  // "SHA-256=<base64url>", "" when none
	Deleted    bool      `json:"deleted,omitempty"` // the object was deleted: this is its tombstone
	// Revision is the stream sequence this info (the object's description)
	// is stored at: as read back (GetInfo, Get, List, Watch) or as stored
	// by the call that returned it (Put and its variants, AddLink,
	// AddBucketLink). It grows with every change of the object (a put,
	// UpdateMeta, Delete's tombstone), so the newer of two infos of one
	// object has the greater one; 0 in an ObjectInfo not returned by this
	// package. nats.go's ObjectInfo has no such field (nats.js's has
	// revision), so it is left out of the JSON, which stays nats.go's; the
	// facades' ObjectInfo (this type) has it beside nats.go's fields.
	Revision uint64 `json:"-"`

	h *objInfoHandle
}

// IsLink reports whether the object is a link (to an object or a bucket).
func (i *ObjectInfo) IsLink() bool { return i != nil && i.Opts != nil && i.Opts.Link != nil }

// objInfoHandle owns a natsio_obj_info (freed by its finalizer).
type objInfoHandle struct{ ptr *C.natsio_obj_info }

func ownObjInfo(p *C.natsio_obj_info) *objInfoHandle {
	h := &objInfoHandle{p}
	runtime.SetFinalizer(h, func(h *objInfoHandle) { C.natsio_obj_info_free(h.ptr) })
	return h
}

// objectInfoOwned copies an owned info into Go and keeps the handle.
func objectInfoOwned(p *C.natsio_obj_info) *ObjectInfo {
	info := objectInfoView(p)
	info.h = ownObjInfo(p)
	return info
}

// objectInfoBorrowed copies a borrowed info into Go and keeps a clone of
// it (none if cloning fails: AddLink then looks the object up).
func objectInfoBorrowed(p *C.natsio_obj_info) *ObjectInfo {
	info := objectInfoView(p)
	var c *C.natsio_obj_info
	if C.natsio_obj_info_clone(p, &c) == C.NATSIO_OK {
		info.h = ownObjInfo(c)
	}
	return info
}

func goStringOrEmpty(s *C.char) string {
	if s == nil {
		return ""
	}
	return C.GoString(s)
}

// metadataMap parses a metadata JSON object (nil for "{}").
func metadataMap(s *C.char) map[string]string {
	if s == nil {
		return nil
	}
	raw := C.GoString(s)
	if raw == "" || raw == "{}" {
		return nil
	}
	var m map[string]string
	if json.Unmarshal([]byte(raw), &m) != nil || len(m) == 0 {
		return nil
	}
	return m
}

func objectInfoView(p *C.natsio_obj_info) *ObjectInfo {
	var v C.go_obj_info_view
	C.go_obj_info_read(p, &v)
	info := &ObjectInfo{
		ObjectMeta: ObjectMeta{
			Name:        goStringOrEmpty(v.name),
			Description: goStringOrEmpty(v.description),
			Headers:     copyHeaders(v.headers),
			Metadata:    metadataMap(v.metadata_json),
		},
		Bucket:   goStringOrEmpty(v.bucket),
		NUID:     goStringOrEmpty(v.nuid),
		Size:     uint64(v.size),
		ModTime:  time.Unix(0, int64(v.mtime_ns)),
		Chunks:   uint32(v.chunks),
		Digest:   goStringOrEmpty(v.digest),
		Deleted:  v.deleted != 0,
		Revision: uint64(v.revision),
	}
	if v.max_chunk_size != 0 || v.is_link != 0 {
		info.Opts = &ObjectMetaOptions{ChunkSize: uint32(v.max_chunk_size)}
		if v.is_link != 0 {
			info.Opts.Link = &ObjectLink{Bucket: goStringOrEmpty(v.link_bucket), Name: goStringOrEmpty(v.link_name)}
		}
	}
	return info
}

// objMetaJSON is the library's meta_json.
type objMetaJSON struct {
	Name        string              `json:"name,omitempty"`
	Description string              `json:"description,omitempty"`
	Headers     map[string][]string `json:"headers,omitempty"`
	Metadata    map[string]string   `json:"metadata,omitempty"`
	ChunkSize   uint32              `json:"chunk_size,omitempty"`
}

// metaCString is meta's JSON as a C string; withName adds the name
// (UpdateMeta's new name), withChunk the chunk size (Put).
func metaCString(meta ObjectMeta, withName, withChunk bool) ([]byte, error) {
	j, err := metaJSON(meta, withName, withChunk)
	if err != nil {
		return nil, err
	}
	return cString(j)
}

// metaJSON is metaCString's JSON as a Go string.
func metaJSON(meta ObjectMeta, withName, withChunk bool) (string, error) {
	j := objMetaJSON{Description: meta.Description, Headers: meta.Headers, Metadata: meta.Metadata}
	if withName {
		j.Name = meta.Name
	}
	if withChunk && meta.Opts != nil {
		j.ChunkSize = meta.Opts.ChunkSize
	}
	return configJSON(j)
}

// ---- Buckets ----

// ObjectStore is a bound Object Store bucket. All methods are safe for
// concurrent use. It keeps its Conn alive but not open (calls then fail
// with ErrConnectionClosed) and does not depend on the JetStream that bound
// it staying open. Its handle is freed by a finalizer. Calls are the
// library's asynchronous operations and honour ctx as JetStream's do; each
// request is bounded by the JetStream's timeout.
type ObjectStore struct {
	ptr    *C.natsio_obj
	nc     *Conn
	bucket string
}

func newObjectStore(p *C.natsio_obj, nc *Conn) *ObjectStore {
	obs := &ObjectStore{ptr: p, nc: nc, bucket: C.GoString(C.natsio_obj_bucket(p))}
	runtime.SetFinalizer(obs, (*ObjectStore).finalize)
	return obs
}

func (obs *ObjectStore) finalize() { C.natsio_obj_free(obs.ptr) }

// Bucket is the bucket's name.
func (obs *ObjectStore) Bucket() string { return obs.bucket }

// objBuckets: the shared bucket calls (bucket.go) for Object Store.
var objBuckets = bucketKind[*ObjectStore, *ObjectStoreStatus]{
	create:   rawJsObjCreate,
	bind:     rawJsObjBind,
	delete:   rawJsObjDelete,
	names:    rawJsObjNames,
	statuses: rawJsObjStatuses,
	wrap:     func(p unsafe.Pointer, nc *Conn) *ObjectStore { return newObjectStore((*C.natsio_obj)(p), nc) },
	readStatuses: func(p unsafe.Pointer) ([]*ObjectStoreStatus, error) {
		list := (*C.natsio_obj_status_list)(p)
		defer C.natsio_obj_status_list_free(list)
		return readList(int(C.natsio_obj_status_list_count(list)), func(i int) (*ObjectStoreStatus, bool, error) {
			st := C.natsio_obj_status_list_get(list, C.size_t(i))
			if st == nil {
				return nil, false, nil
			}
			s, err := objectStoreStatus(st)
			return s, true, err
		})
	},
}

// CreateObjectStore creates a bucket (stream OBJ_<bucket>) and binds it; an
// identical existing bucket is simply bound. Errors: ErrConfig (the detail
// names the field), ErrInvalidBucketName, ErrBucketExists (exists with
// another configuration), ErrJetStreamNotEnabled (the account has no
// JetStream), ErrNoResponders (nobody answered: no leader during an
// election, retry; or the server has no JetStream).
func (js *JetStream) CreateObjectStore(ctx context.Context, cfg ObjectStoreConfig) (*ObjectStore, error) {
	return objBuckets.createBucket(ctx, js, cfg, C.NATSIO_CREATE)
}

// UpdateObjectStore changes an existing bucket's configuration
// (ErrBucketNotFound if there is none). Otherwise as CreateObjectStore.
func (js *JetStream) UpdateObjectStore(ctx context.Context, cfg ObjectStoreConfig) (*ObjectStore, error) {
	return objBuckets.createBucket(ctx, js, cfg, C.NATSIO_UPDATE)
}

// CreateOrUpdateObjectStore updates the bucket, or creates it when it does
// not exist. Otherwise as CreateObjectStore.
func (js *JetStream) CreateOrUpdateObjectStore(ctx context.Context, cfg ObjectStoreConfig) (*ObjectStore, error) {
	return objBuckets.createBucket(ctx, js, cfg, C.NATSIO_CREATE_OR_UPDATE)
}

// ObjectStore binds an existing bucket. ErrBucketNotFound,
// ErrInvalidBucketName.
func (js *JetStream) ObjectStore(ctx context.Context, bucket string) (*ObjectStore, error) {
	return objBuckets.bindBucket(ctx, js, bucket)
}

// DeleteObjectStore deletes a bucket with all its objects.
// ErrBucketNotFound, ErrInvalidBucketName.
func (js *JetStream) DeleteObjectStore(ctx context.Context, bucket string) error {
	return objBuckets.deleteBucket(ctx, js, bucket)
}

// ObjectStoreNames lists the names of the account's Object Store buckets
// (an empty slice when there are none).
func (js *JetStream) ObjectStoreNames(ctx context.Context) ([]string, error) {
	return objBuckets.bucketNames(ctx, js)
}

// ObjectStores reads the status of every Object Store bucket of the
// account (an empty slice when there are none).
func (js *JetStream) ObjectStores(ctx context.Context) ([]*ObjectStoreStatus, error) {
	return objBuckets.bucketStatuses(ctx, js)
}

// ObjectStoreStatus is a bucket's state.
type ObjectStoreStatus struct {
	Bucket      string            // the bucket's name
	Description string            // its configured description
	TTL         time.Duration     // 0: none
	Storage     StorageType       // where its stream keeps the objects
	Replicas    int               // servers of a cluster keeping a copy
	Size        uint64            // bytes stored: chunks and descriptions
	Sealed      bool              // read only (Seal)
	Compressed  bool              // its stream is compressed
	Metadata    map[string]string // the user key/value pairs of its stream
	// Info is the backing stream's StreamInfo.
	Info *StreamInfo
}

func objectStoreStatus(st *C.natsio_obj_status) (*ObjectStoreStatus, error) {
	var v C.go_obj_status_view
	C.go_obj_status_read(st, &v)
	s := &ObjectStoreStatus{
		Bucket:      goStringOrEmpty(v.bucket),
		Description: goStringOrEmpty(v.description),
		TTL:         time.Duration(v.ttl_ns),
		Storage:     StorageType(goStringOrEmpty(v.storage)),
		Replicas:    int(v.replicas),
		Size:        uint64(v.size),
		Sealed:      v.sealed != 0,
		Compressed:  v.compression != 0,
		Metadata:    metadataMap(v.metadata_json),
	}
	if v.stream_info_json != nil {
		info, err := parseStreamInfo(C.GoString(v.stream_info_json))
		if err != nil {
			return nil, err
		}
		s.Info = info
	}
	return s, nil
}

// onObj makes one call on the bucket's C handle, keeping obs (whose
// finalizer frees the handle) alive until it returns; ErrNullArgument for
// a nil *ObjectStore.
func onObj[T any](obs *ObjectStore, call func(p *C.natsio_obj) (T, error)) (T, error) {
	if obs == nil {
		var zero T
		return zero, errorOf(ErrNullArgument, "nil *ObjectStore")
	}
	defer runtime.KeepAlive(obs)
	return call(obs.ptr)
}

// Status reads the bucket's state.
func (obs *ObjectStore) Status(ctx context.Context) (*ObjectStoreStatus, error) {
	r, err := onObj(obs, func(p *C.natsio_obj) (C.go_take, error) { return rawObjGetStatus(ctx, p) })
	if err != nil {
		return nil, err
	}
	st := (*C.natsio_obj_status)(r.out)
	defer C.natsio_obj_status_free(st)
	return objectStoreStatus(st)
}

// Seal makes the bucket read only: later puts, deletes and meta updates
// fail with ErrBucketSealed. It cannot be undone.
func (obs *ObjectStore) Seal(ctx context.Context) error {
	_, err := onObj(obs, func(p *C.natsio_obj) (struct{}, error) { return struct{}{}, rawObjSeal(ctx, p) })
	return err
}

// ---- Put ----

// PutBytes stores data as object name (replacing any object of that name
// once it is complete) and returns its info. Errors: ErrInvalidObjectName,
// ErrBucketSealed, ErrBucketNotFound, ErrTimeout, ErrConnectionClosed.
func (obs *ObjectStore) PutBytes(ctx context.Context, name string, data []byte) (*ObjectInfo, error) {
	return obs.putFrom(ctx, ObjectMeta{Name: name}, func(w *ObjectWriter) error {
		// A piece at a time: the library copies what each write is given, so
		// data is never copied whole (a 64 MiB put would otherwise hold it twice).
		for len(data) > 0 {
			n := min(len(data), putBytesPiece)
			if _, err := w.Write(data[:n]); err != nil {
				return err
			}
			data = data[n:]
		}
		return nil
	})
}

// putBytesPiece is how much of PutBytes's data one write hands the library.
const putBytesPiece = 1 << 20

// PutString is PutBytes of a string.
func (obs *ObjectStore) PutString(ctx context.Context, name string, data string) (*ObjectInfo, error) {
	return obs.PutBytes(ctx, name, []byte(data))
}

// Put stores what r yields until io.EOF as object meta.Name, with meta's
// description, headers, metadata and chunk size, and returns its info. It
// reads r in pieces of one chunk and hands each to the library, which
// publishes the full chunks as they come (at most 8 MiB await their acks),
// so the object is never held in memory. The new version replaces the old
// one only once complete: when r fails, ctx ends or a publish fails, the
// put is abandoned (its chunks are purged in the background) and the
// previous version stays readable. Errors: r's error, ErrInvalidObjectName,
// ErrConfig (bad meta), ErrBucketSealed, ErrBucketNotFound, ErrTimeout,
// ErrConnectionClosed.
func (obs *ObjectStore) Put(ctx context.Context, meta ObjectMeta, r io.Reader) (*ObjectInfo, error) {
	if r == nil {
		return nil, errorOf(ErrNullArgument, "nil io.Reader")
	}
	return obs.putFrom(ctx, meta, func(w *ObjectWriter) error {
		_, err := w.ReadFrom(r)
		return err
	})
}

// putFrom writes object meta.Name with fill and completes it; a failed
// fill abandons the put (the previous version stays).
func (obs *ObjectStore) putFrom(ctx context.Context, meta ObjectMeta, fill func(*ObjectWriter) error) (*ObjectInfo, error) {
	w, err := obs.Writer(ctx, meta)
	if err != nil {
		return nil, err
	}
	if err := fill(w); err != nil {
		w.discard()
		return nil, err
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	return w.Info(), nil
}

// ObjectWriter writes one object in pieces (ObjectStore.Writer): Write or
// ReadFrom the content, then Close to complete the object, or Abort. It is
// safe for concurrent use (writes are applied in call order). An unclosed
// writer that becomes unreachable is aborted by its finalizer.
type ObjectWriter struct {
	ctx   context.Context
	chunk int

	mu     sync.Mutex
	ptr    *C.natsio_obj_writer // nil once freed
	err    error                // what failed the put (returned again after)
	closed bool
	info   *ObjectInfo
}

// Writer starts writing object meta.Name (nothing is sent until the first
// full chunk). ctx bounds every call of the writer: once it ends the put
// is abandoned. Errors: ErrInvalidObjectName, ErrConfig (bad meta, a link
// in meta.Opts).
func (obs *ObjectStore) Writer(ctx context.Context, meta ObjectMeta) (*ObjectWriter, error) {
	if obs == nil {
		return nil, errorOf(ErrNullArgument, "nil *ObjectStore")
	}
	if meta.Opts != nil && meta.Opts.Link != nil {
		return nil, errorOf(ErrConfig, "ObjectMeta.Opts.Link: links are made with AddLink or AddBucketLink")
	}
	cname, err := cString(meta.Name)
	if err != nil {
		return nil, err
	}
	cmeta, err := metaCString(meta, false, true)
	if err != nil {
		return nil, err
	}
	var p *C.natsio_obj_writer
	// No I/O: the call returns at once.
	err = cCall(func() C.natsio_status { return C.natsio_obj_writer_open(obs.ptr, cPtr(cname), cPtr(cmeta), &p) })
	runtime.KeepAlive(obs)
	if err != nil {
		return nil, err
	}
	w := &ObjectWriter{ctx: ctx, ptr: p, chunk: defaultChunkSize}
	if meta.Opts != nil && meta.Opts.ChunkSize > 0 {
		w.chunk = int(meta.Opts.ChunkSize)
	}
	runtime.SetFinalizer(w, func(w *ObjectWriter) { C.natsio_obj_writer_free(w.ptr) })
	return w, nil
}

// release frees the library's writer (an unfinished one is aborted in the
// background). Called with mu held.
func (w *ObjectWriter) release() {
	C.natsio_obj_writer_free(w.ptr)
	w.ptr = nil
}

// discard abandons the put without waiting (Put's failure path).
func (w *ObjectWriter) discard() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.ptr != nil && !w.closed {
		w.release()
	}
	w.closed = true
}

// usable is the error a call on a writer that cannot take data returns.
// Called with mu held.
func (w *ObjectWriter) usable() error {
	if w.err != nil {
		return w.err
	}
	if w.closed || w.ptr == nil {
		return errorOf(ErrIllegalState, "the object writer is closed")
	}
	return nil
}

// fail records err as the put's outcome; a put abandoned because ctx ended
// is aborted in the background. Called with mu held.
func (w *ObjectWriter) fail(err error) {
	w.err = err
	if w.ctx.Err() != nil && w.ptr != nil {
		w.release()
	}
}

// write hands p to the library. Called with mu held.
func (w *ObjectWriter) write(p []byte) error {
	if len(p) == 0 {
		return nil
	}
	// The library copies p before the call returns; the token completes
	// once it has accepted the bytes (at once unless 8 MiB of chunks
	// await acks).
	err := rawObjWriterWrite(w.ctx, w.ptr, p)
	if err != nil {
		w.fail(err)
	}
	return err
}

// Write appends p to the object. After an error (what failed the put:
// ErrBucketSealed, ErrBucketNotFound, ErrTimeout, ctx's error, ...) every
// call returns it.
func (w *ObjectWriter) Write(p []byte) (int, error) {
	if w == nil {
		return 0, errorOf(ErrNullArgument, "nil *ObjectWriter")
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.usable(); err != nil {
		return 0, err
	}
	if err := w.write(p); err != nil {
		return 0, err
	}
	return len(p), nil
}

// ReadFrom appends what r yields until io.EOF, reading it one chunk at a
// time (io.Copy uses it). An error of r is returned and leaves the writer
// usable (Abort it, or Close to store what was written).
func (w *ObjectWriter) ReadFrom(r io.Reader) (int64, error) {
	if w == nil {
		return 0, errorOf(ErrNullArgument, "nil *ObjectWriter")
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.usable(); err != nil {
		return 0, err
	}
	buf := make([]byte, w.chunk)
	var total int64
	for {
		n, rerr := r.Read(buf)
		if n > 0 {
			if err := w.write(buf[:n]); err != nil {
				return total, err
			}
			total += int64(n)
		}
		if rerr == io.EOF {
			return total, nil
		}
		if rerr != nil {
			return total, rerr
		}
		if w.ctx.Err() != nil {
			err := contextError(w.ctx)
			w.fail(err)
			return total, err
		}
	}
}

// Close completes the object: the last chunk and the description are
// published, and the new version replaces the old one (whose chunks are
// purged). Info then gives the stored info. After a failed write it
// abandons the put and returns that failure. Closing again returns the
// same outcome.
func (w *ObjectWriter) Close() error {
	if w == nil {
		return errorOf(ErrNullArgument, "nil *ObjectWriter")
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		if w.err == nil && w.info == nil {
			return errorOf(ErrIllegalState, "the object writer was aborted")
		}
		return w.err
	}
	w.closed = true
	if w.err != nil {
		if w.ptr != nil {
			w.release()
		}
		return w.err
	}
	r, err := rawObjWriterFinish(w.ctx, w.ptr)
	w.release()
	if err != nil {
		w.err = err
		return err
	}
	w.info = objectInfoOwned((*C.natsio_obj_info)(r.out))
	return nil
}

// Info is the stored object's info once Close succeeded, else nil.
func (w *ObjectWriter) Info() *ObjectInfo {
	if w == nil {
		return nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.info
}

// Abort abandons the put and purges the chunks it published; the previous
// version of the object stays readable. It waits for the purge (in C).
// ErrIllegalState after a successful Close; aborting again is harmless.
func (w *ObjectWriter) Abort() error {
	if w == nil {
		return errorOf(ErrNullArgument, "nil *ObjectWriter")
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.info != nil {
		return errorOf(ErrIllegalState, "the object was stored already")
	}
	w.closed = true
	if w.ptr == nil {
		return nil
	}
	wp := w.ptr
	err := cCall(func() C.natsio_status { return C.natsio_obj_writer_abort(wp) })
	w.release()
	return err
}

// ---- Get ----

// GetObjectOpt is an option of Get, GetBytes and GetString.
type GetObjectOpt func(*getObjectConfig)

type getObjectConfig struct{ showDeleted bool }

// GetObjectShowDeleted reads a deleted object too (as empty, its info
// saying Deleted) instead of failing with ErrObjectDeleted.
func GetObjectShowDeleted() GetObjectOpt { return func(c *getObjectConfig) { c.showDeleted = true } }

// ObjectResult reads an object (Get): an io.ReadCloser whose Read returns
// io.EOF only once every byte was read and the size, chunk count and
// SHA-256 digest were verified (ErrDigestMismatch instead when they do not
// match). The chunks are pulled by the library ahead of the reads, a
// bounded window at a time. Get's ctx bounds the whole read. Close it when
// done (a finalizer does otherwise); Close also ends a Read waiting on
// another goroutine.
type ObjectResult struct {
	info   *ObjectInfo
	parent context.Context // Get's ctx
	ctx    context.Context // parent, also ended by Close
	cancel context.CancelFunc
	chunk  int

	mu   sync.Mutex
	ptr  *C.natsio_obj_reader // nil once closed
	pend unsafe.Pointer       // a piece taken from a token (malloc'd), partly read
	plen int
	poff int
	err  error // io.EOF or what ended the read
}

// Get opens object name for reading; through a link to an object it reads
// the target (whose info Info gives). Errors: ErrObjectNotFound,
// ErrObjectDeleted (also matching ErrObjectNotFound), ErrObjectLink (a
// link to a bucket, or to a link), ErrInvalidObjectName,
// ErrBucketNotFound, ErrTimeout.
func (obs *ObjectStore) Get(ctx context.Context, name string, opts ...GetObjectOpt) (*ObjectResult, error) {
	var cfg getObjectConfig
	for _, opt := range opts {
		opt(&cfg)
	}
	r, err := onObj(obs, func(p *C.natsio_obj) (C.go_take, error) { return rawObjGet(ctx, p, name, cfg.showDeleted) })
	if err != nil {
		return nil, err
	}
	res := &ObjectResult{ptr: (*C.natsio_obj_reader)(r.out), chunk: defaultChunkSize}
	res.info = objectInfoBorrowed(C.natsio_obj_reader_info(res.ptr))
	if res.info.Opts != nil && res.info.Opts.ChunkSize > 0 {
		res.chunk = int(min(res.info.Opts.ChunkSize, 1<<20))
	}
	res.parent = ctx
	res.ctx, res.cancel = context.WithCancel(ctx)
	runtime.SetFinalizer(res, (*ObjectResult).finalize)
	return res, nil
}

func errReaderClosed() error { return errorOf(ErrIllegalState, "the object reader is closed") }

func (r *ObjectResult) finalize() {
	r.cancel()
	C.natsio_obj_reader_free(r.ptr)
	C.free(r.pend)
}

// Info is the info of the object read (for a link, its target's). The
// error is always nil (it is there for nats.go's signature).
func (r *ObjectResult) Info() (*ObjectInfo, error) { return r.info, nil }

// Read reads the next bytes of the object: those the library holds at once,
// else it waits for the next chunk (in this goroutine, holding no OS
// thread). io.EOF at the verified end. Errors: ErrDigestMismatch,
// ErrTimeout (no chunk within 30 s: reading may go on), Get's ctx's error,
// ErrConnectionClosed, ErrBucketNotFound, ErrIllegalState after Close.
func (r *ObjectResult) Read(p []byte) (int, error) {
	if r == nil {
		return 0, errorOf(ErrNullArgument, "nil *ObjectResult")
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.err != nil {
		return 0, r.err
	}
	if r.ptr == nil {
		return 0, errReaderClosed()
	}
	if len(p) == 0 {
		return 0, nil
	}
	if r.pend != nil {
		return r.fromPending(p), nil
	}
	if r.ctx.Err() != nil {
		return 0, r.end(contextError(r.ctx))
	}
	enterLib()
	st := C.go_obj_reader_read(r.ptr, unsafe.Pointer(&p[0]), C.size_t(len(p)))
	leaveLib()
	switch st.status {
	case C.NATSIO_OK:
		return int(st.n), nil
	case C.NATSIO_DONE:
		return 0, r.end(io.EOF)
	case C.NATSIO_PENDING:
	default:
		return 0, r.end(resultError(st.status, st.detail))
	}
	var t C.go_take
	err := awaitToken(r.ctx, st.token, C.GO_TAKE_OBJ_CHUNK, cancelOnEnd, &t)
	if t.status == C.NATSIO_DONE {
		return 0, r.end(io.EOF)
	}
	if err != nil {
		return 0, r.end(ctxOutcome(r.ctx, err))
	}
	if t.out == nil {
		return 0, nil // an empty piece
	}
	r.pend, r.plen, r.poff = t.out, int(t.u64), 0
	return r.fromPending(p), nil
}

// fromPending copies from the piece a token gave. Called with mu held.
func (r *ObjectResult) fromPending(p []byte) int {
	n := copy(p, unsafe.Slice((*byte)(unsafe.Add(r.pend, r.poff)), r.plen-r.poff))
	r.poff += n
	if r.poff == r.plen {
		C.free(r.pend)
		r.pend = nil
	}
	return n
}

// end records what ended the read, unless it may go on (a library
// timeout). Called with mu held.
func (r *ObjectResult) end(err error) error {
	if e, ok := err.(*Error); ok && e.Status == statusTimeout && r.ctx.Err() == nil {
		return err
	}
	if r.ctx.Err() != nil && r.parent.Err() == nil && err != io.EOF {
		err = errReaderClosed() // Close ended the wait
	}
	r.err = err
	if err == io.EOF {
		r.cancel()
	}
	return err
}

// WriteTo writes the whole object to w (io.Copy uses it) and returns
// nil once it was verified.
func (r *ObjectResult) WriteTo(w io.Writer) (int64, error) {
	buf := make([]byte, r.chunk)
	var total int64
	for {
		n, err := r.Read(buf)
		if n > 0 {
			m, werr := w.Write(buf[:n])
			total += int64(m)
			if werr != nil {
				return total, werr
			}
			if m < n {
				return total, io.ErrShortWrite
			}
		}
		if err == io.EOF {
			return total, nil
		}
		if err != nil {
			return total, err
		}
	}
}

// Close stops reading (a Read waiting on another goroutine returns) and
// frees the reader. Closing again is harmless.
func (r *ObjectResult) Close() error {
	if r == nil {
		return nil
	}
	r.cancel()
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.ptr != nil {
		C.natsio_obj_reader_free(r.ptr)
		r.ptr = nil
		C.free(r.pend)
		r.pend = nil
		if r.err != io.EOF {
			r.err = errReaderClosed()
		}
	}
	return nil
}

// GetBytes reads the whole object name (verified). Errors as Get and Read.
func (obs *ObjectStore) GetBytes(ctx context.Context, name string, opts ...GetObjectOpt) ([]byte, error) {
	res, err := obs.Get(ctx, name, opts...)
	if err != nil {
		return nil, err
	}
	defer res.Close()
	// One byte more than the size, for the read that meets the end (an
	// implausible size recorded by another writer only sets a first guess).
	data := make([]byte, 0, int(min(res.info.Size, 1<<30))+1)
	for {
		if len(data) == cap(data) {
			data = slices.Grow(data, res.chunk)
		}
		n, err := res.Read(data[len(data):cap(data)])
		data = data[:len(data)+n]
		if err == io.EOF {
			return data, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

// GetString is GetBytes as a string.
func (obs *ObjectStore) GetString(ctx context.Context, name string, opts ...GetObjectOpt) (string, error) {
	b, err := obs.GetBytes(ctx, name, opts...)
	return string(b), err
}

// ---- Objects ----

// GetObjectInfoOpt is an option of GetInfo.
type GetObjectInfoOpt func(*getObjectConfig)

// GetObjectInfoShowDeleted returns a deleted object's info (Deleted set)
// instead of failing with ErrObjectDeleted.
func GetObjectInfoShowDeleted() GetObjectInfoOpt {
	return func(c *getObjectConfig) { c.showDeleted = true }
}

// GetInfo reads object name's info (a link's own info, not its target's).
// ErrObjectNotFound, ErrObjectDeleted, ErrInvalidObjectName.
func (obs *ObjectStore) GetInfo(ctx context.Context, name string, opts ...GetObjectInfoOpt) (*ObjectInfo, error) {
	var cfg getObjectConfig
	for _, opt := range opts {
		opt(&cfg)
	}
	return obs.getInfo(ctx, name, cfg.showDeleted)
}

func (obs *ObjectStore) getInfo(ctx context.Context, name string, showDeleted bool) (*ObjectInfo, error) {
	r, err := onObj(obs, func(p *C.natsio_obj) (C.go_take, error) { return rawObjGetInfo(ctx, p, name, showDeleted) })
	if err != nil {
		return nil, err
	}
	return objectInfoOwned((*C.natsio_obj_info)(r.out)), nil
}

// UpdateMeta replaces the description, headers and metadata of object
// name with meta's, and renames it when meta.Name is another name ("" keeps
// the name). Errors: ErrObjectExists (a live object has the new name),
// ErrObjectNotFound, ErrObjectDeleted, ErrInvalidObjectName,
// ErrBucketSealed.
func (obs *ObjectStore) UpdateMeta(ctx context.Context, name string, meta ObjectMeta) error {
	j, err := metaJSON(meta, true, false)
	if err != nil {
		return err
	}
	_, err = onObj(obs, func(p *C.natsio_obj) (struct{}, error) { return struct{}{}, rawObjUpdateMeta(ctx, p, name, j) })
	return err
}

// Delete deletes object name: a tombstone replaces its info and its chunks
// are purged. ErrObjectNotFound, ErrObjectDeleted, ErrBucketSealed.
func (obs *ObjectStore) Delete(ctx context.Context, name string) error {
	_, err := onObj(obs, func(p *C.natsio_obj) (struct{}, error) { return struct{}{}, rawObjDelete(ctx, p, name) })
	return err
}

// ListObjectsOpt is an option of List.
type ListObjectsOpt func(*getObjectConfig)

// ListObjectsShowDeleted lists deleted objects too.
func ListObjectsShowDeleted() ListObjectsOpt {
	return func(c *getObjectConfig) { c.showDeleted = true }
}

// List reads the info of every object of the bucket (an empty slice when
// there are none; nats.go returns an error then).
func (obs *ObjectStore) List(ctx context.Context, opts ...ListObjectsOpt) ([]*ObjectInfo, error) {
	var cfg getObjectConfig
	for _, opt := range opts {
		opt(&cfg)
	}
	r, err := onObj(obs, func(p *C.natsio_obj) (C.go_take, error) { return rawObjList(ctx, p, cfg.showDeleted) })
	if err != nil {
		return nil, err
	}
	list := (*C.natsio_obj_info_list)(r.out)
	defer C.natsio_obj_info_list_free(list)
	n := int(C.natsio_obj_info_list_count(list))
	out := make([]*ObjectInfo, 0, n)
	for i := range n {
		if p := C.natsio_obj_info_list_get(list, C.size_t(i)); p != nil {
			out = append(out, objectInfoBorrowed(p))
		}
	}
	return out, nil
}

// targetHandle is the library's info of obj: the one it was read with, or
// (for an ObjectInfo made by hand, of this bucket) looked up by name.
func (obs *ObjectStore) targetHandle(ctx context.Context, obj *ObjectInfo) (*objInfoHandle, error) {
	if obj == nil {
		return nil, errorOf(ErrNullArgument, "nil *ObjectInfo")
	}
	if obj.h != nil {
		return obj.h, nil
	}
	if obj.Bucket != "" && obj.Bucket != obs.bucket {
		return nil, errorOf(ErrInvalidArgument, "the ObjectInfo of an object of another bucket must come from this package (GetInfo, List, Put, ...)")
	}
	info, err := obs.getInfo(ctx, obj.Name, true)
	if err != nil {
		return nil, err
	}
	return info.h, nil
}

// AddLink stores object name as a link to obj (an ObjectInfo read from
// this or another bucket) and returns the link's info. Errors:
// ErrObjectLink (obj is deleted or itself a link), ErrObjectExists (a
// live object that is not a link has that name), ErrInvalidObjectName,
// ErrBucketSealed.
func (obs *ObjectStore) AddLink(ctx context.Context, name string, obj *ObjectInfo) (*ObjectInfo, error) {
	if obs == nil {
		return nil, errorOf(ErrNullArgument, "nil *ObjectStore")
	}
	if err := checkNUL(name); err != nil {
		return nil, err
	}
	h, err := obs.targetHandle(ctx, obj)
	if err != nil {
		return nil, err
	}
	r, err := onObj(obs, func(p *C.natsio_obj) (C.go_take, error) { return rawObjAddLink(ctx, p, name, h.ptr) })
	runtime.KeepAlive(h)
	if err != nil {
		return nil, err
	}
	return objectInfoOwned((*C.natsio_obj_info)(r.out)), nil
}

// AddBucketLink stores object name as a link to the whole bucket of
// target and returns the link's info. Errors as AddLink.
func (obs *ObjectStore) AddBucketLink(ctx context.Context, name string, target *ObjectStore) (*ObjectInfo, error) {
	if target == nil {
		return nil, errorOf(ErrNullArgument, "nil target *ObjectStore")
	}
	r, err := onObj(obs, func(p *C.natsio_obj) (C.go_take, error) {
		return rawObjAddBucketLink(ctx, p, name, target.bucket)
	})
	if err != nil {
		return nil, err
	}
	return objectInfoOwned((*C.natsio_obj_info)(r.out)), nil
}

// ---- Watch ----

// ObjectWatcher is a running watch of a bucket (Watch): first the latest
// info of each object (or all kept infos with IncludeHistory, or nothing
// with UpdatesOnly), then a nil info marking the end of those, then every
// change as it happens (puts, meta updates, deletes unless IgnoreDeletes).
// From the moment Watch returns the library pulls the changes into its
// buffer on its own threads, and its ordered consumer recovers by itself
// from gaps, lost consumers and reconnects.
//
// Read it with Next, or with Updates (not both). All methods are safe for
// concurrent use. Stop it when done (a watch left unreachable unstopped is
// stopped by its finalizer; one whose Updates channel was taken stays
// alive until Stop or the connection's close).
type ObjectWatcher struct {
	ptr *C.natsio_obj_watcher

	watchFeed[*ObjectInfo]
}

// Watch watches the bucket's objects. It takes the Key-Value watch
// options IncludeHistory, IgnoreDeletes and UpdatesOnly (MetaOnly has no
// effect: a watch delivers infos only). ctx bounds the start only.
// Errors: ErrBucketNotFound, ErrTimeout, ErrConnectionClosed.
func (obs *ObjectStore) Watch(ctx context.Context, opts ...WatchOpt) (*ObjectWatcher, error) {
	if obs == nil {
		return nil, errorOf(ErrNullArgument, "nil *ObjectStore")
	}
	var kvOpts C.natsio_kv_watch_options
	C.natsio_kv_watch_options_init(&kvOpts)
	for _, opt := range opts {
		opt(&kvOpts)
	}
	var copts C.natsio_obj_watch_options
	C.natsio_obj_watch_options_init(&copts)
	copts.include_history = kvOpts.include_history
	copts.ignore_deletes = kvOpts.ignore_deletes
	copts.updates_only = kvOpts.updates_only
	r, err := onObj(obs, func(p *C.natsio_obj) (C.go_take, error) { return rawObjWatch(ctx, p, &copts) })
	if err != nil {
		return nil, err
	}
	w := &ObjectWatcher{ptr: (*C.natsio_obj_watcher)(r.out), watchFeed: watchFeed[*ObjectInfo]{stopped: make(chan struct{})}}
	runtime.SetFinalizer(w, func(w *ObjectWatcher) { C.natsio_obj_watcher_free(w.ptr) })
	return w, nil
}

// next reads one event: an info, or (nil, nil) for the initial marker.
func (w *ObjectWatcher) next(ctx context.Context) (*ObjectInfo, error) {
	defer runtime.KeepAlive(w)
	if ctx.Err() != nil {
		return nil, contextError(ctx)
	}
	enterLib()
	n := C.go_iter_next(unsafe.Pointer(w.ptr), C.GO_ITER_OBJ_WATCHER)
	leaveLib()
	var item *C.natsio_obj_info
	switch n.status {
	case C.NATSIO_OK:
		item = (*C.natsio_obj_info)(n.item)
	case C.NATSIO_DONE:
		return nil, errDone()
	case C.NATSIO_PENDING:
		// A cancelled wait leaves the item in the watch; one already on
		// its way is returned.
		var r C.go_take
		err := awaitToken(ctx, n.token, C.GO_TAKE_OBJ_INFO, cancelOnEnd, &r)
		if r.status == C.NATSIO_DONE {
			return nil, errDone()
		}
		if err != nil {
			return nil, ctxOutcome(ctx, err)
		}
		item = (*C.natsio_obj_info)(r.out)
	default:
		return nil, resultError(n.status, n.detail)
	}
	if C.natsio_obj_info_is_initial_done(item) {
		C.natsio_obj_info_free(item)
		return nil, nil
	}
	return objectInfoOwned(item), nil
}

// Next returns the next info: at once if the library has one buffered,
// else when one comes or ctx ends (with ctx's error; for a deadline one
// that also matches ErrTimeout; the watch goes on). It returns (nil, nil)
// exactly once, after the initial infos. A deleted object's info says
// Deleted. Errors: ErrDone after Stop, ErrConnectionClosed once the
// connection is closed, ErrBucketNotFound once the bucket is deleted,
// ErrIllegalState once Updates was called.
func (w *ObjectWatcher) Next(ctx context.Context) (*ObjectInfo, error) {
	if w == nil {
		return nil, errorOf(ErrNullArgument, "nil *ObjectWatcher")
	}
	if w.feeding() {
		return nil, errorOf(ErrIllegalState, "the watch is read through Updates")
	}
	return w.next(ctx)
}

// Updates is a channel of the watch's infos, as in nats.go: the initial
// ones, one nil info when they have all been delivered, then the changes.
// A goroutine feeds it from the library's buffer (waiting on tokens, not
// in C) until the watch ends; the channel is then closed. Every call
// returns the same channel; after Stop a closed one.
func (w *ObjectWatcher) Updates() <-chan *ObjectInfo {
	if w == nil {
		return closedChannel[*ObjectInfo]()
	}
	return w.channel(w.next)
}

// Stop ends the watch: a Next waiting on another goroutine returns
// ErrDone, and so do later ones; the Updates channel is closed (Stop waits
// for its goroutine). The library deletes the watch's consumer. Safe to
// call more than once, from any goroutine.
func (w *ObjectWatcher) Stop() {
	if w == nil {
		return
	}
	fed := w.stop()
	C.natsio_obj_watcher_stop(w.ptr)
	runtime.KeepAlive(w)
	if fed != nil {
		<-fed
	}
}

// Stats reads the watch's live counters.
func (w *ObjectWatcher) Stats() (IterStats, error) {
	if w == nil {
		return IterStats{}, errorOf(ErrNullArgument, "nil *ObjectWatcher")
	}
	var cs C.natsio_iter_stats
	err := cCall(func() C.natsio_status { return C.natsio_obj_watcher_get_stats(w.ptr, &cs) })
	runtime.KeepAlive(w)
	return iterStats(&cs), err
}
