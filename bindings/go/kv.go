package natsio

// Key-Value buckets over the natsio_js_kv_* and natsio_kv_* functions.

/*
#include <stdint.h>
#include "natsio.h"
*/
import "C"

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"time"
	"unsafe"
)

// KeyValueConfig is a bucket's configuration, with the server's field
// names. Zero fields are left out (the defaults apply: History 1, no TTL,
// file storage).
type KeyValueConfig struct {
	Bucket         string            `json:"bucket"`
	Description    string            `json:"description,omitempty"`
	History        uint8             `json:"history,omitempty"` // revisions kept per key, 1..64
	TTL            time.Duration     `json:"ttl,omitempty"`     // 0, or at least 100 ms
	MaxValueSize   int32             `json:"max_value_size,omitempty"`
	MaxBytes       int64             `json:"max_bytes,omitempty"`
	Storage        StorageType       `json:"storage,omitempty"`
	Replicas       int               `json:"replicas,omitempty"`
	Compression    bool              `json:"compression,omitempty"`
	AllowMsgTTL    bool              `json:"allow_msg_ttl,omitempty"`
	LimitMarkerTTL time.Duration     `json:"limit_marker_ttl,omitempty"`
	Metadata       map[string]string `json:"metadata,omitempty"`

	// Extra holds further fields by their JSON names (placement,
	// republish, ...), added unless a field above set the name.
	Extra map[string]any `json:"-"`
}

// MarshalJSON is the JSON the library expects, Extra merged in.
func (c KeyValueConfig) MarshalJSON() ([]byte, error) {
	type plain KeyValueConfig
	return marshalWithExtra(plain(c), c.Extra)
}

// UnmarshalJSON reads the listed fields and keeps the others in Extra.
func (c *KeyValueConfig) UnmarshalJSON(b []byte) error {
	type plain KeyValueConfig
	return unmarshalWithExtra(b, (*plain)(c), func(p *plain) *map[string]any { return &p.Extra })
}

// KeyValue is a bound bucket. All methods are safe for concurrent use. It
// keeps its Conn alive but not open (calls then fail with
// ErrConnectionClosed) and does not depend on the JetStream that bound it
// staying open. Its handle is freed by a finalizer. Calls honour ctx as
// JetStream's do; each is bounded by the JetStream's timeout.
type KeyValue struct {
	ptr    *C.natsio_kv
	nc     *Conn
	bucket string
}

func newKeyValue(p *C.natsio_kv, nc *Conn) *KeyValue {
	kv := &KeyValue{ptr: p, nc: nc, bucket: C.GoString(C.natsio_kv_bucket(p))}
	runtime.SetFinalizer(kv, (*KeyValue).finalize)
	return kv
}

func (kv *KeyValue) finalize() { C.natsio_kv_free(kv.ptr) }

// Bucket is the bucket's name.
func (kv *KeyValue) Bucket() string { return kv.bucket }

type kvConfigCall func(*C.natsio_js, *C.char, **C.natsio_kv) C.natsio_status

func (js *JetStream) kvConfigCall(ctx context.Context, cfg KeyValueConfig, call kvConfigCall) (*KeyValue, error) {
	ccfg, err := configCString(cfg)
	if err != nil {
		return nil, err
	}
	return jsCall(ctx, js, func(p *C.natsio_js) (*KeyValue, error) {
		var kv *C.natsio_kv
		if err := cCall(func() C.natsio_status { return call(p, cPtr(ccfg), &kv) }); err != nil {
			return nil, err
		}
		return newKeyValue(kv, js.nc), nil
	})
}

// CreateKeyValue creates a bucket and binds it (an identical existing
// bucket is simply bound). Errors: ErrConfig (the detail names the field),
// ErrInvalidBucketName, ErrBucketExists (exists with another
// configuration), ErrJetStreamNotEnabled.
func (js *JetStream) CreateKeyValue(ctx context.Context, cfg KeyValueConfig) (*KeyValue, error) {
	return js.kvConfigCall(ctx, cfg, func(p *C.natsio_js, c *C.char, out **C.natsio_kv) C.natsio_status {
		return C.natsio_js_kv_create(p, c, out)
	})
}

// UpdateKeyValue changes an existing bucket's configuration
// (ErrBucketNotFound if there is none). Otherwise as CreateKeyValue.
func (js *JetStream) UpdateKeyValue(ctx context.Context, cfg KeyValueConfig) (*KeyValue, error) {
	return js.kvConfigCall(ctx, cfg, func(p *C.natsio_js, c *C.char, out **C.natsio_kv) C.natsio_status {
		return C.natsio_js_kv_update(p, c, out)
	})
}

// CreateOrUpdateKeyValue updates the bucket, or creates it when it does not
// exist. Otherwise as CreateKeyValue.
func (js *JetStream) CreateOrUpdateKeyValue(ctx context.Context, cfg KeyValueConfig) (*KeyValue, error) {
	return js.kvConfigCall(ctx, cfg, func(p *C.natsio_js, c *C.char, out **C.natsio_kv) C.natsio_status {
		return C.natsio_js_kv_create_or_update(p, c, out)
	})
}

// KeyValue binds an existing bucket. ErrBucketNotFound, ErrInvalidBucketName.
func (js *JetStream) KeyValue(ctx context.Context, bucket string) (*KeyValue, error) {
	cname, err := cString(bucket)
	if err != nil {
		return nil, err
	}
	return jsCall(ctx, js, func(p *C.natsio_js) (*KeyValue, error) {
		var kv *C.natsio_kv
		if err := cCall(func() C.natsio_status { return C.natsio_js_kv_bind(p, cPtr(cname), &kv) }); err != nil {
			return nil, err
		}
		return newKeyValue(kv, js.nc), nil
	})
}

// DeleteKeyValue deletes a bucket with all its keys and history.
// ErrBucketNotFound, ErrInvalidBucketName.
func (js *JetStream) DeleteKeyValue(ctx context.Context, bucket string) error {
	cname, err := cString(bucket)
	if err != nil {
		return err
	}
	_, err = jsCall(ctx, js, func(p *C.natsio_js) (struct{}, error) {
		return struct{}{}, cCall(func() C.natsio_status { return C.natsio_js_kv_delete(p, cPtr(cname)) })
	})
	return err
}

// kvCall runs f with the bucket's handle, honouring ctx (see blocking).
func kvCall[T any](ctx context.Context, kv *KeyValue, f func(*C.natsio_kv) (T, error)) (T, error) {
	var zero T
	if kv == nil {
		return zero, errorOf(ErrNullArgument, "nil *KeyValue")
	}
	if ctx.Err() != nil {
		return zero, contextError(ctx)
	}
	return blocking(ctx, func() (T, error) {
		defer runtime.KeepAlive(kv)
		return f(kv.ptr)
	})
}

type kvWrite func(p *C.natsio_kv, key *C.char, value unsafe.Pointer, n C.size_t, rev *C.uint64_t) C.natsio_status

func (kv *KeyValue) write(ctx context.Context, key string, value []byte, call kvWrite) (uint64, error) {
	ckey, err := cString(key)
	if err != nil {
		return 0, err
	}
	value = detach(ctx, value)
	return kvCall(ctx, kv, func(p *C.natsio_kv) (uint64, error) {
		var rev C.uint64_t
		ptr, n := dataPtr(value)
		err := cCall(func() C.natsio_status { return call(p, cPtr(ckey), ptr, n, &rev) })
		runtime.KeepAlive(value)
		return uint64(rev), err
	})
}

// Put stores value under key and returns the new revision. Errors:
// ErrInvalidKey, ErrMaxPayload, ErrJetStreamAPI (e.g. larger than
// MaxValueSize), ErrTimeout, ErrConnectionClosed.
func (kv *KeyValue) Put(ctx context.Context, key string, value []byte) (uint64, error) {
	return kv.write(ctx, key, value, func(p *C.natsio_kv, k *C.char, v unsafe.Pointer, n C.size_t, rev *C.uint64_t) C.natsio_status {
		return C.natsio_kv_put(p, k, v, n, rev)
	})
}

// Create stores value only if key has no live value (ErrKeyExists
// otherwise); a deleted or purged key can be created again.
func (kv *KeyValue) Create(ctx context.Context, key string, value []byte) (uint64, error) {
	return kv.write(ctx, key, value, func(p *C.natsio_kv, k *C.char, v unsafe.Pointer, n C.size_t, rev *C.uint64_t) C.natsio_status {
		return C.natsio_kv_create(p, k, v, n, rev)
	})
}

// Update stores value only if key's latest revision is last (compare and
// set): ErrWrongLastSequence otherwise.
func (kv *KeyValue) Update(ctx context.Context, key string, value []byte, last uint64) (uint64, error) {
	return kv.write(ctx, key, value, func(p *C.natsio_kv, k *C.char, v unsafe.Pointer, n C.size_t, rev *C.uint64_t) C.natsio_status {
		return C.natsio_kv_update(p, k, v, n, C.uint64_t(last), rev)
	})
}

// KeyValueOp is what a revision of a key records.
type KeyValueOp int32

const (
	KeyValuePut    KeyValueOp = C.NATSIO_KV_PUT
	KeyValueDelete KeyValueOp = C.NATSIO_KV_DEL   // a delete marker
	KeyValuePurge  KeyValueOp = C.NATSIO_KV_PURGE // a purge marker
)

func (op KeyValueOp) String() string {
	switch op {
	case KeyValuePut:
		return "KeyValuePutOp"
	case KeyValueDelete:
		return "KeyValueDeleteOp"
	case KeyValuePurge:
		return "KeyValuePurgeOp"
	}
	return "unknown"
}

// KeyValueEntry is one revision of a key; every field is a copy in Go
// memory.
type KeyValueEntry struct {
	Bucket    string
	Key       string
	Value     []byte
	Revision  uint64
	Operation KeyValueOp
	Created   time.Time
	Delta     uint64 // how many newer revisions of the key exist (0 for Get)
}

func entryFrom(e *C.natsio_kv_entry) *KeyValueEntry {
	n := int(C.natsio_kv_entry_value_len(e))
	value := make([]byte, n)
	if n > 0 {
		copy(value, unsafe.Slice((*byte)(unsafe.Pointer(C.natsio_kv_entry_value(e))), n))
	}
	return &KeyValueEntry{
		Bucket:    C.GoString(C.natsio_kv_entry_bucket(e)),
		Key:       C.GoString(C.natsio_kv_entry_key(e)),
		Value:     value,
		Revision:  uint64(C.natsio_kv_entry_revision(e)),
		Operation: KeyValueOp(C.natsio_kv_entry_operation(e)),
		Created:   time.Unix(0, int64(C.natsio_kv_entry_created_ns(e))),
		Delta:     uint64(C.natsio_kv_entry_delta(e)),
	}
}

func (kv *KeyValue) get(ctx context.Context, key string, revision uint64, byRevision bool) (*KeyValueEntry, error) {
	ckey, err := cString(key)
	if err != nil {
		return nil, err
	}
	return kvCall(ctx, kv, func(p *C.natsio_kv) (*KeyValueEntry, error) {
		var e *C.natsio_kv_entry
		err := cCall(func() C.natsio_status {
			if byRevision {
				return C.natsio_kv_get_revision(p, cPtr(ckey), C.uint64_t(revision), &e)
			}
			return C.natsio_kv_get(p, cPtr(ckey), &e)
		})
		if err != nil {
			return nil, err
		}
		defer C.natsio_kv_entry_free(e)
		return entryFrom(e), nil
	})
}

// Get reads key's latest value. ErrKeyNotFound when it has none,
// ErrKeyDeleted when its latest revision is a delete or purge marker,
// ErrInvalidKey.
func (kv *KeyValue) Get(ctx context.Context, key string) (*KeyValueEntry, error) {
	return kv.get(ctx, key, 0, false)
}

// GetRevision reads revision revision of key (ErrKeyNotFound if that
// revision belongs to another key or is gone). Otherwise as Get.
func (kv *KeyValue) GetRevision(ctx context.Context, key string, revision uint64) (*KeyValueEntry, error) {
	return kv.get(ctx, key, revision, true)
}

// KVDeleteOpt is an option of Delete and Purge.
type KVDeleteOpt func(*kvDeleteConfig)

type kvDeleteConfig struct {
	last    uint64
	hasLast bool
}

// LastRevision makes Delete or Purge fail with ErrWrongLastSequence unless
// the key's latest revision is revision.
func LastRevision(revision uint64) KVDeleteOpt {
	return func(c *kvDeleteConfig) { c.last, c.hasLast = revision, true }
}

type kvDelete func(p *C.natsio_kv, key *C.char, last *C.uint64_t) C.natsio_status

func (kv *KeyValue) remove(ctx context.Context, key string, opts []KVDeleteOpt, call kvDelete) error {
	var cfg kvDeleteConfig
	for _, opt := range opts {
		opt(&cfg)
	}
	ckey, err := cString(key)
	if err != nil {
		return err
	}
	_, err = kvCall(ctx, kv, func(p *C.natsio_kv) (struct{}, error) {
		last := C.uint64_t(cfg.last)
		var lastp *C.uint64_t
		if cfg.hasLast {
			lastp = &last
		}
		return struct{}{}, cCall(func() C.natsio_status { return call(p, cPtr(ckey), lastp) })
	})
	return err
}

// Delete deletes key by writing a delete marker (its history is kept).
func (kv *KeyValue) Delete(ctx context.Context, key string, opts ...KVDeleteOpt) error {
	return kv.remove(ctx, key, opts, func(p *C.natsio_kv, k *C.char, last *C.uint64_t) C.natsio_status {
		return C.natsio_kv_delete(p, k, last)
	})
}

// Purge writes a purge marker for key that replaces all its earlier
// revisions.
func (kv *KeyValue) Purge(ctx context.Context, key string, opts ...KVDeleteOpt) error {
	return kv.remove(ctx, key, opts, func(p *C.natsio_kv, k *C.char, last *C.uint64_t) C.natsio_status {
		return C.natsio_kv_purge(p, k, last)
	})
}

// KeyValueStatus is a bucket's state, from its backing stream.
type KeyValueStatus struct {
	Bucket  string
	Values  uint64        // stored revisions (markers included)
	Bytes   uint64        // their size
	History int64         // revisions kept per key
	TTL     time.Duration // 0: none
	// Info is the backing stream's StreamInfo.
	Info *StreamInfo
}

// Status reads the bucket's state.
func (kv *KeyValue) Status(ctx context.Context) (*KeyValueStatus, error) {
	raw, err := kvCall(ctx, kv, func(p *C.natsio_kv) (string, error) {
		return takeString(func(out **C.char) C.natsio_status { return C.natsio_kv_status(p, out) })
	})
	if err != nil {
		return nil, err
	}
	info, err := parseStreamInfo(raw)
	if err != nil {
		return nil, err
	}
	return &KeyValueStatus{
		Bucket:  kv.bucket,
		Values:  info.State.Msgs,
		Bytes:   info.State.Bytes,
		History: info.Config.MaxMsgsPerSubject,
		TTL:     info.Config.MaxAge,
		Info:    info,
	}, nil
}

// Keys lists the keys that currently hold a value (deleted and purged keys
// are left out), in no particular order; an empty slice for an empty
// bucket. The library reads the bucket through a short-lived consumer.
func (kv *KeyValue) Keys(ctx context.Context) ([]string, error) {
	return stringList(kvCall(ctx, kv, func(p *C.natsio_kv) (string, error) {
		return takeString(func(out **C.char) C.natsio_status { return C.natsio_kv_keys(p, out) })
	}))
}

// History is every kept revision of key, oldest first, delete and purge
// markers included (each entry's Delta counts the newer revisions).
// ErrKeyNotFound when the key has none, ErrInvalidKey.
func (kv *KeyValue) History(ctx context.Context, key string) ([]KeyValueEntry, error) {
	ckey, err := cString(key)
	if err != nil {
		return nil, err
	}
	return kvCall(ctx, kv, func(p *C.natsio_kv) ([]KeyValueEntry, error) {
		var list *C.natsio_kv_entry_list
		if err := cCall(func() C.natsio_status { return C.natsio_kv_history(p, cPtr(ckey), &list) }); err != nil {
			return nil, err
		}
		defer C.natsio_kv_entry_list_free(list)
		n := int(C.natsio_kv_entry_list_count(list))
		entries := make([]KeyValueEntry, 0, n)
		for i := range n {
			if e := C.natsio_kv_entry_list_get(list, C.size_t(i)); e != nil {
				entries = append(entries, *entryFrom(e))
			}
		}
		return entries, nil
	})
}

// ---- Watch ----

// WatchOpt is an option of Watch, WatchAll and WatchFiltered.
type WatchOpt func(*C.natsio_kv_watch_options)

// IncludeHistory delivers every kept revision of the matching keys first
// (oldest first), not only the latest of each.
func IncludeHistory() WatchOpt {
	return func(o *C.natsio_kv_watch_options) { o.include_history = true }
}

// IgnoreDeletes leaves delete and purge markers out.
func IgnoreDeletes() WatchOpt {
	return func(o *C.natsio_kv_watch_options) { o.ignore_deletes = true }
}

// MetaOnly delivers entries without their values.
func MetaOnly() WatchOpt {
	return func(o *C.natsio_kv_watch_options) { o.meta_only = true }
}

// UpdatesOnly skips the current values: only changes made after the watch
// started are delivered (the initial-values marker comes at once).
func UpdatesOnly() WatchOpt {
	return func(o *C.natsio_kv_watch_options) { o.updates_only = true }
}

// KeyWatcher is a running watch of a bucket (Watch): first the current
// value of each matching key (or its history with IncludeHistory, or
// nothing with UpdatesOnly), then a nil entry marking the end of the
// initial values, then every change as it happens. The library's ordered
// consumer recovers by itself from gaps and from losing its consumer (a
// server restart), resuming after the last revision delivered.
//
// Read it with Next, or with Updates (not both). All methods are safe for
// concurrent use. Stop it when done: Stop frees its handle and asks the
// server to delete its consumer (else a finalizer does, once the watcher
// is unreachable; a watcher whose Updates channel was taken stays alive
// until Stop).
type KeyWatcher struct {
	ptr *C.natsio_kv_watcher // used while holding g's turn and g.live
	g   *nextGate

	mu      sync.Mutex
	updates chan *KeyValueEntry // nil until Updates
	fed     chan struct{}       // closed when the Updates goroutine has ended
}

// Watch watches the keys matching keys: one pattern, or several separated
// by commas ("app.*,users.>"); tokens are separated by dots, "*" matches
// one whole token and a final ">" the rest, so ">" is every key. ctx
// bounds the start only (which creates the watch's consumer). Errors:
// ErrInvalidKey (a bad pattern, "" included), ErrInvalidArgument (a NUL
// byte), ErrTimeout, ErrConnectionClosed.
func (kv *KeyValue) Watch(ctx context.Context, keys string, opts ...WatchOpt) (*KeyWatcher, error) {
	ckeys, err := cString(keys)
	if err != nil {
		return nil, err
	}
	return kv.watch(ctx, ckeys, opts)
}

// WatchAll watches every key of the bucket. Otherwise as Watch.
func (kv *KeyValue) WatchAll(ctx context.Context, opts ...WatchOpt) (*KeyWatcher, error) {
	return kv.watch(ctx, nil, opts)
}

// WatchFiltered watches the keys matching any of keys (every key when
// keys is empty). Otherwise as Watch.
func (kv *KeyValue) WatchFiltered(ctx context.Context, keys []string, opts ...WatchOpt) (*KeyWatcher, error) {
	if len(keys) == 0 {
		return kv.watch(ctx, nil, opts)
	}
	for _, k := range keys {
		if k == "" || strings.Contains(k, ",") {
			return nil, errorOf(ErrInvalidKey, fmt.Sprintf("invalid key pattern %q", k))
		}
	}
	ckeys, err := cString(strings.Join(keys, ","))
	if err != nil {
		return nil, err
	}
	return kv.watch(ctx, ckeys, opts)
}

func (kv *KeyValue) watch(ctx context.Context, ckeys []byte, opts []WatchOpt) (*KeyWatcher, error) {
	var copts C.natsio_kv_watch_options
	for _, opt := range opts {
		opt(&copts)
	}
	return kvCall(ctx, kv, func(p *C.natsio_kv) (*KeyWatcher, error) {
		var w *C.natsio_kv_watcher
		if err := cCall(func() C.natsio_status { return C.natsio_kv_watch(p, cPtr(ckeys), &copts, &w) }); err != nil {
			return nil, err
		}
		kw := &KeyWatcher{ptr: w, g: newNextGate("watch",
			func() { C.natsio_kv_watcher_stop(w) },
			func() { C.natsio_kv_watcher_free(w) })}
		runtime.SetFinalizer(kw, func(kw *KeyWatcher) { kw.g.finalize() })
		return kw, nil
	})
}

// next reads one event: an entry, or (nil, nil) for the initial-values
// marker.
func (w *KeyWatcher) next(ctx context.Context) (*KeyValueEntry, error) {
	defer runtime.KeepAlive(w)
	var e *C.natsio_kv_entry
	st, err := w.g.next(ctx, func(wait C.int64_t) C.natsio_status {
		return C.natsio_kv_watcher_next(w.ptr, wait, &e)
	})
	if err != nil || st == C.NATSIO_DONE {
		return nil, err
	}
	defer C.natsio_kv_entry_free(e)
	return entryFrom(e), nil
}

// Next returns the next entry, waiting until ctx ends (with ctx's error;
// for a deadline one that also matches ErrTimeout; the watch goes on).
// It returns (nil, nil) exactly once, after the initial values (at once
// for UpdatesOnly or when nothing matches). An entry's Operation says put,
// delete or purge; for initial values Delta counts the key's newer
// revisions. Errors: ErrSubscriptionClosed after Stop (also for a Next
// blocked while Stop is called) and once the connection is closed (the
// detail then says "connection closed"), ErrIllegalState once Updates
// was called. A ctx that can end is checked at least every
// 20 ms, as in Consumption.Next.
func (w *KeyWatcher) Next(ctx context.Context) (*KeyValueEntry, error) {
	if w == nil {
		return nil, errorOf(ErrNullArgument, "nil *KeyWatcher")
	}
	w.mu.Lock()
	feeding := w.updates != nil
	w.mu.Unlock()
	if feeding {
		return nil, errorOf(ErrIllegalState, "the watch is read through Updates")
	}
	return w.next(ctx)
}

// Updates is a channel of the watch's entries, as in nats.go: the initial
// values, one nil entry when they have all been delivered, then the
// changes. A goroutine feeds it until the watch ends; the channel is then
// closed: after Stop (Stop waits for it), or when the connection closed.
// Every call returns the same channel; after Stop a closed one.
func (w *KeyWatcher) Updates() <-chan *KeyValueEntry {
	if w == nil {
		ch := make(chan *KeyValueEntry)
		close(ch)
		return ch
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.updates == nil {
		w.updates = make(chan *KeyValueEntry, 64)
		w.fed = make(chan struct{})
		go w.feed(w.updates, w.fed)
	}
	return w.updates
}

func (w *KeyWatcher) feed(ch chan<- *KeyValueEntry, fed chan<- struct{}) {
	defer close(fed)
	defer close(ch)
	for {
		e, err := w.next(context.Background())
		if err != nil {
			return
		}
		select {
		case ch <- e:
		case <-w.g.done:
			return
		}
	}
}

// Stop ends the watch: a Next blocked on another goroutine returns
// ErrSubscriptionClosed, and so do later ones; the Updates channel is
// closed. Stop waits for a running Next (and the Updates goroutine) to
// end, then frees the handle, which asks the server to delete the watch's
// consumer. Safe to call more than once, from any goroutine.
func (w *KeyWatcher) Stop() {
	if w == nil {
		return
	}
	w.g.stop()
	w.mu.Lock()
	fed := w.fed
	w.mu.Unlock()
	if fed != nil {
		<-fed
	}
}
