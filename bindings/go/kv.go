package natsio

// Key-Value buckets over the natsio_js_kv_* and natsio_kv_* functions.

/*
#include <stdint.h>
#include <stdlib.h>
#include "natsio_go.h"
*/
import "C"

import (
	"context"
	"runtime"
	"strings"
	"time"
	"unsafe"
)

// KeyValueConfig is a bucket's configuration, with the server's field
// names. Zero fields are left out (the defaults apply: History 1, no TTL,
// file storage).
type KeyValueConfig struct {
	// Bucket is the bucket's name (required): [A-Za-z0-9_-]+. Its stream
	// is KV_<Bucket>.
	Bucket string `json:"bucket"`
	// Description is free text.
	Description string `json:"description,omitempty"`
	// History is how many revisions are kept per key, 1..64 (0: 1).
	History uint8 `json:"history,omitempty"`
	// TTL is how long a revision is kept: 0 (forever), or at least 100 ms.
	TTL time.Duration `json:"ttl,omitempty"`
	// MaxValueSize is the largest value accepted, in bytes (0: no limit).
	MaxValueSize int32 `json:"max_value_size,omitempty"`
	// MaxBytes is how many bytes the bucket keeps (0: no limit).
	MaxBytes int64 `json:"max_bytes,omitempty"`
	// Storage is where the values are kept ("": FileStorage).
	Storage StorageType `json:"storage,omitempty"`
	// Replicas is how many servers of a cluster keep a copy (0: one).
	Replicas int `json:"replicas,omitempty"`
	// Compression compresses the bucket's stream (S2).
	Compression bool `json:"compression,omitempty"`
	// AllowMsgTTL sets the stream's AllowMsgTTL (a time to live per
	// message).
	AllowMsgTTL bool `json:"allow_msg_ttl,omitempty"`
	// LimitMarkerTTL, when not 0, makes the server leave a purge marker,
	// kept this long, when a key's value expires (the stream's
	// SubjectDeleteMarkerTTL; AllowMsgTTL is then set too).
	LimitMarkerTTL time.Duration `json:"limit_marker_ttl,omitempty"`
	// Metadata are user key/value pairs stored with the bucket's stream.
	Metadata map[string]string `json:"metadata,omitempty"`
	// Mirror makes the bucket a read-only copy of another bucket (its Name
	// with or without the KV_ prefix; Domain for one in another JetStream
	// domain). Its stream then has no subjects and answers Direct Gets; a
	// handle of it reads the keys it holds and writes to the mirrored
	// bucket, through the mirror's domain. It wins over Sources.
	Mirror *StreamSource `json:"mirror,omitempty"`
	// Sources are buckets whose keys are copied into this one as they are
	// written there (each Name with or without KV_; a source with its own
	// SubjectTransforms is taken as given, so any stream can be one).
	Sources []*StreamSource `json:"sources,omitempty"`

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
// staying open. Its handle is freed by a finalizer. Calls are the
// library's asynchronous operations and honour ctx as JetStream's do; each
// is bounded by the JetStream's timeout.
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

// kvBuckets: the shared bucket calls (bucket.go) for Key-Value.
var kvBuckets = bucketKind[*KeyValue, *KeyValueStatus]{
	create:   rawJsKvCreate,
	bind:     rawJsKvBind,
	delete:   rawJsKvDelete,
	names:    rawJsKvNames,
	statuses: rawJsKvStatuses,
	wrap:     func(p unsafe.Pointer, nc *Conn) *KeyValue { return newKeyValue((*C.natsio_kv)(p), nc) },
	readStatuses: func(p unsafe.Pointer) ([]*KeyValueStatus, error) {
		list := (*C.natsio_kv_bucket_status_list)(p)
		defer C.natsio_kv_bucket_status_list_free(list)
		return readList(int(C.natsio_kv_bucket_status_list_count(list)), func(i int) (*KeyValueStatus, bool, error) {
			st := C.natsio_kv_bucket_status_list_get(list, C.size_t(i))
			if st == nil {
				return nil, false, nil
			}
			s, err := keyValueStatus(st)
			return s, true, err
		})
	},
}

// CreateKeyValue creates a bucket and binds it (an identical existing
// bucket is simply bound). Errors: ErrConfig (the detail names the field),
// ErrInvalidBucketName, ErrBucketExists (exists with another
// configuration), ErrJetStreamNotEnabled (the account has no JetStream),
// ErrNoResponders (nobody answered: no leader during an election, retry;
// or the server has no JetStream).
func (js *JetStream) CreateKeyValue(ctx context.Context, cfg KeyValueConfig) (*KeyValue, error) {
	return kvBuckets.createBucket(ctx, js, cfg, C.NATSIO_CREATE)
}

// UpdateKeyValue changes an existing bucket's configuration
// (ErrBucketNotFound if there is none). Otherwise as CreateKeyValue.
func (js *JetStream) UpdateKeyValue(ctx context.Context, cfg KeyValueConfig) (*KeyValue, error) {
	return kvBuckets.createBucket(ctx, js, cfg, C.NATSIO_UPDATE)
}

// CreateOrUpdateKeyValue updates the bucket, or creates it when it does not
// exist. Otherwise as CreateKeyValue.
func (js *JetStream) CreateOrUpdateKeyValue(ctx context.Context, cfg KeyValueConfig) (*KeyValue, error) {
	return kvBuckets.createBucket(ctx, js, cfg, C.NATSIO_CREATE_OR_UPDATE)
}

// KeyValue binds an existing bucket. ErrBucketNotFound, ErrInvalidBucketName.
func (js *JetStream) KeyValue(ctx context.Context, bucket string) (*KeyValue, error) {
	return kvBuckets.bindBucket(ctx, js, bucket)
}

// DeleteKeyValue deletes a bucket with all its keys and history.
// ErrBucketNotFound, ErrInvalidBucketName.
func (js *JetStream) DeleteKeyValue(ctx context.Context, bucket string) error {
	return kvBuckets.deleteBucket(ctx, js, bucket)
}

// onKV makes one call on the bucket's C handle, keeping kv (whose
// finalizer frees the handle) alive until it returns; ErrNullArgument for
// a nil *KeyValue.
func onKV[T any](kv *KeyValue, call func(p *C.natsio_kv) (T, error)) (T, error) {
	if kv == nil {
		var zero T
		return zero, errorOf(ErrNullArgument, "nil *KeyValue")
	}
	defer runtime.KeepAlive(kv)
	return call(kv.ptr)
}

// Put stores value under key and returns the new revision. With KeyTTL
// the new revision expires, as Create's (nats.go's Put takes no options;
// a call without them is the same). Errors: ErrInvalidKey, ErrMaxPayload,
// ErrInvalidArgument (a TTL that is not a whole number of seconds),
// ErrJetStreamAPI (e.g. larger than MaxValueSize, or a TTL on a bucket
// without LimitMarkerTTL), ErrTimeout, ErrConnectionClosed.
func (kv *KeyValue) Put(ctx context.Context, key string, value []byte, opts ...KVCreateOpt) (uint64, error) {
	wo, err := createWriteOptions(opts)
	if err != nil {
		return 0, err
	}
	return onKV(kv, func(p *C.natsio_kv) (uint64, error) { return rawKvPut(ctx, p, key, value, wo) })
}

// KVCreateOpt is an option of Create (and of Put).
type KVCreateOpt func(*kvCreateConfig)

type kvCreateConfig struct {
	ttl      time.Duration
	ttlNever bool
}

// KeyTTL makes the created revision expire d after it is stored (ADR-48
// per-key TTL, a Nats-TTL header), as nats.go's jetstream.KeyTTL. d must
// be a whole, positive number of seconds (the server counts whole
// seconds): anything else fails Create with ErrInvalidArgument, nothing
// is rounded; 0 means no TTL. The bucket needs LimitMarkerTTL (the server
// refuses the write otherwise: ErrJetStreamAPI); when the revision
// expires the server removes it and leaves a purge marker, kept for
// LimitMarkerTTL, that watchers see.
func KeyTTL(d time.Duration) KVCreateOpt {
	return func(c *kvCreateConfig) { c.ttl, c.ttlNever = d, false }
}

// KeyTTLNever makes the created revision never expire, even if the bucket
// has a TTL (the bucket needs LimitMarkerTTL, as for KeyTTL).
func KeyTTLNever() KVCreateOpt {
	return func(c *kvCreateConfig) { c.ttl, c.ttlNever = 0, true }
}

// writeOptions is the C options of a write with ttl_s ttl (nil: no TTL).
// The struct holds no Go pointer, so it may be passed to C as it is.
func writeOptions(ttl C.int64_t, set bool) *C.natsio_kv_write_options {
	if !set {
		return nil
	}
	var o C.natsio_kv_write_options
	C.natsio_kv_write_options_init(&o)
	o.ttl_s = ttl
	return &o
}

// createWriteOptions is the C options of Create's and Put's options.
func createWriteOptions(opts []KVCreateOpt) (*C.natsio_kv_write_options, error) {
	var cfg kvCreateConfig
	for _, opt := range opts {
		if opt != nil {
			opt(&cfg)
		}
	}
	ttl, hasTTL, err := ttlSeconds("KeyTTL", cfg.ttl, cfg.ttlNever)
	return writeOptions(ttl, hasTTL), err
}

// ttlSeconds is a KeyTTL or PurgeTTL duration as the library's ttl_s:
// set is false when no TTL was asked for.
func ttlSeconds(opt string, d time.Duration, never bool) (ttl C.int64_t, set bool, err error) {
	switch {
	case never:
		return C.NATSIO_TTL_NEVER, true, nil
	case d == 0:
		return 0, false, nil
	case d < time.Second || d%time.Second != 0:
		return 0, false, errorOf(ErrInvalidArgument, opt+" must be a positive whole number of seconds, not "+d.String())
	}
	return C.int64_t(d / time.Second), true, nil
}

// Create stores value only if key has no live value (ErrKeyExists
// otherwise, the *Error's Revision being the live value's); a deleted or purged key can be created again. With KeyTTL
// the new revision expires (ErrInvalidArgument for a TTL that is not a
// whole number of seconds).
func (kv *KeyValue) Create(ctx context.Context, key string, value []byte, opts ...KVCreateOpt) (uint64, error) {
	wo, err := createWriteOptions(opts)
	if err != nil {
		return 0, err
	}
	return onKV(kv, func(p *C.natsio_kv) (uint64, error) { return rawKvCreate(ctx, p, key, value, wo) })
}

// Update stores value only if key's latest revision is last (compare and
// set): ErrWrongLastSequence otherwise.
func (kv *KeyValue) Update(ctx context.Context, key string, value []byte, last uint64) (uint64, error) {
	return onKV(kv, func(p *C.natsio_kv) (uint64, error) { return rawKvUpdate(ctx, p, key, value, last) })
}

// KeyValueOp is what a revision of a key records.
type KeyValueOp int32

// The operations of KeyValueEntry.Operation.
const (
	KeyValuePut    KeyValueOp = C.NATSIO_KV_PUT   // a value (Put, Create, Update)
	KeyValueDelete KeyValueOp = C.NATSIO_KV_DEL   // a delete marker (Delete)
	KeyValuePurge  KeyValueOp = C.NATSIO_KV_PURGE // a purge marker (Purge, or the server's when a value expires)
)

// kvInitialDone is the watch marker's operation: not a revision (the
// Go API gives it as a nil entry, as nats.go does).
const kvInitialDone = C.NATSIO_KV_INITIAL_DONE

// String is the operation's name as nats.go gives it ("KeyValuePutOp",
// "KeyValueDeleteOp", "KeyValuePurgeOp"), or "unknown".
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
	Bucket    string     // the bucket's name
	Key       string     // the key
	Value     []byte     // the value; empty for delete and purge markers and with MetaOnly
	Revision  uint64     // the revision: its sequence in the bucket's stream
	Operation KeyValueOp // what the revision records: a value or a marker
	Created   time.Time  // when the revision was stored
	Delta     uint64     // how many newer revisions of the key exist (0 for Get)
}

func entryFrom(e *C.natsio_kv_entry) *KeyValueEntry {
	var v C.go_entry_view
	C.go_entry_read(e, &v)
	return entryFromView(&v)
}

// entryFromView copies an entry's fields into Go memory.
func entryFromView(v *C.go_entry_view) *KeyValueEntry {
	return entryOf(v, C.GoString(v.bucket), C.GoString(v.key))
}

// entryOf copies an entry's fields but bucket and key, given, into Go
// memory.
func entryOf(v *C.go_entry_view, bucket, key string) *KeyValueEntry {
	n := int(v.value_len)
	value := make([]byte, n)
	if n > 0 {
		copy(value, unsafe.Slice((*byte)(unsafe.Pointer(v.value)), n))
	}
	return &KeyValueEntry{
		Bucket:    bucket,
		Key:       key,
		Value:     value,
		Revision:  uint64(v.revision),
		Operation: KeyValueOp(v.operation),
		Created:   time.Unix(0, int64(v.created_ns)),
		Delta:     uint64(v.delta),
	}
}

func (kv *KeyValue) get(ctx context.Context, key string, revision uint64, byRevision bool) (*KeyValueEntry, error) {
	if kv == nil {
		return nil, errorOf(ErrNullArgument, "nil *KeyValue")
	}
	if ctx.Err() != nil {
		return nil, contextError(ctx)
	}
	var tok *C.natsio_token
	if byRevision {
		ckey, err := cString(key)
		if err != nil {
			return nil, err
		}
		if tok, err = start(func(tok **C.natsio_token) C.natsio_status {
			return C.natsio_kv_get_revision_async(kv.ptr, cPtr(ckey), C.uint64_t(revision), tok)
		}); err != nil {
			return nil, err
		}
	} else {
		// The hot path: the key is made NUL-terminated on the C stack.
		if err := checkNUL(key); err != nil {
			return nil, err
		}
		enterLib()
		st := C.go_kv_get_start(kv.ptr, strPtr(key), C.size_t(len(key)))
		leaveLib()
		if err := resultError(st.status, st.detail); err != nil {
			return nil, err
		}
		tok = st.token
	}
	runtime.KeepAlive(kv)
	// The entry read is key's in this bucket (the library checks the
	// stored subject): its names are taken from here, not copied from C.
	var r C.go_take
	if err := awaitStarted(ctx, tok, C.GO_TAKE_KV_GOT_ENTRY, &r); err != nil {
		return nil, err
	}
	e := entryOf(&r.entry, kv.bucket, key)
	enterLib()
	C.natsio_kv_entry_free((*C.natsio_kv_entry)(r.out))
	leaveLib()
	return e, nil
}

// Get reads key's latest value. ErrKeyNotFound when it has none,
// ErrKeyDeleted (which is also ErrKeyNotFound: test it first to tell
// them apart) when its latest revision is a delete or purge marker, the
// *Error's Revision being the marker's; ErrInvalidKey.
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
	last     uint64
	hasLast  bool
	ttl      time.Duration
	ttlNever bool
}

// LastRevision makes Delete or Purge fail with ErrWrongLastSequence unless
// the key's latest revision is revision.
func LastRevision(revision uint64) KVDeleteOpt {
	return func(c *kvDeleteConfig) { c.last, c.hasLast = revision, true }
}

// PurgeTTL makes Purge's marker itself expire d after it is stored
// (ADR-48, a Nats-TTL header), as nats.go's jetstream.PurgeTTL: then the
// key leaves no trace in the bucket (Get gives ErrKeyDeleted until the
// marker expires, ErrKeyNotFound after). d must be a whole, positive
// number of seconds: anything else fails Purge with ErrInvalidArgument,
// nothing is rounded; 0 means no TTL. The bucket needs LimitMarkerTTL
// (ErrJetStreamAPI otherwise). Given to Delete, it fails with
// ErrInvalidArgument.
func PurgeTTL(d time.Duration) KVDeleteOpt {
	return func(c *kvDeleteConfig) { c.ttl, c.ttlNever = d, false }
}

// PurgeTTLNever makes Purge's marker never expire, even if the bucket has
// a TTL. Otherwise as PurgeTTL.
func PurgeTTLNever() KVDeleteOpt {
	return func(c *kvDeleteConfig) { c.ttl, c.ttlNever = 0, true }
}

func (kv *KeyValue) remove(ctx context.Context, key string, opts []KVDeleteOpt, purge bool) error {
	var cfg kvDeleteConfig
	for _, opt := range opts {
		if opt != nil {
			opt(&cfg)
		}
	}
	ttl, hasTTL, err := ttlSeconds("PurgeTTL", cfg.ttl, cfg.ttlNever)
	if err != nil {
		return err
	}
	if hasTTL && !purge {
		return errorOf(ErrInvalidArgument, "PurgeTTL is an option of Purge, not Delete")
	}
	var last *uint64
	if cfg.hasLast {
		last = &cfg.last
	}
	wo := writeOptions(ttl, hasTTL)
	_, err = onKV(kv, func(p *C.natsio_kv) (uint64, error) {
		if purge {
			return rawKvPurge(ctx, p, key, last, wo)
		}
		return rawKvDelete(ctx, p, key, last)
	})
	return err
}

// Delete deletes key by writing a delete marker (its history is kept).
// PurgeTTL is refused (ErrInvalidArgument).
func (kv *KeyValue) Delete(ctx context.Context, key string, opts ...KVDeleteOpt) error {
	return kv.remove(ctx, key, opts, false)
}

// Purge writes a purge marker for key that replaces all its earlier
// revisions; with PurgeTTL the marker itself expires.
func (kv *KeyValue) Purge(ctx context.Context, key string, opts ...KVDeleteOpt) error {
	return kv.remove(ctx, key, opts, true)
}

// KVPurgeOpt is an option of PurgeDeletes.
type KVPurgeOpt func(*kvPurgeConfig)

type kvPurgeConfig struct {
	olderThan time.Duration
}

// DeleteMarkersOlderThan sets PurgeDeletes' threshold, as nats.go's
// jetstream.DeleteMarkersOlderThan: markers older than d are removed
// entirely, younger ones are kept (only the revisions before them go).
// 0 is the default, 30 minutes; a negative d removes every marker
// whatever its age. The library counts milliseconds: a positive d is
// rounded up to a whole millisecond.
func DeleteMarkersOlderThan(d time.Duration) KVPurgeOpt {
	return func(c *kvPurgeConfig) { c.olderThan = d }
}

// PurgeDeletes removes delete and purge markers, as nats.go's
// PurgeDeletes: every key whose latest revision is a marker is purged on
// the server; a marker older than the threshold (DeleteMarkersOlderThan,
// default 30 minutes) goes with all the key's revisions, a younger one
// stays (only the revisions before it go), so that watchers and readers
// still learn of the delete. Keys holding a value are not touched. It
// returns how many messages the server removed in all (markers and
// earlier revisions). A failure stops at that key (the markers before it
// are purged already). Errors: ErrBucketNotFound, ErrTimeout,
// ErrConnectionClosed.
func (kv *KeyValue) PurgeDeletes(ctx context.Context, opts ...KVPurgeOpt) (uint64, error) {
	var cfg kvPurgeConfig
	for _, opt := range opts {
		if opt != nil {
			opt(&cfg)
		}
	}
	var ms int64
	switch d := cfg.olderThan; {
	case d < 0:
		ms = -1
	case d > 0:
		ms = int64((d + time.Millisecond - 1) / time.Millisecond)
	}
	return onKV(kv, func(p *C.natsio_kv) (uint64, error) { return rawKvPurgeDeletes(ctx, p, ms) })
}

// KeyValueStatus is a bucket's state, from its backing stream (the
// library's typed natsio_kv_bucket_status).
type KeyValueStatus struct {
	Bucket       string            // the bucket's name
	Values       uint64            // stored revisions (markers included)
	Bytes        uint64            // their size
	History      int64             // revisions kept per key
	TTL          time.Duration     // how long a revision is kept; 0: forever
	Storage      StorageType       // where its stream keeps the values
	Replicas     int               // servers of a cluster keeping a copy
	IsCompressed bool              // its stream is compressed (S2)
	Description  string            // its configured description
	Metadata     map[string]string // the user key/value pairs of its stream (nil if none)
	// LimitMarkerTTL is how long the server keeps the markers it writes
	// when a key's TTL or a limit removes it (0: no markers, and no
	// per-key TTL).
	LimitMarkerTTL time.Duration
	// Info is the backing stream's StreamInfo; Info.Raw is its whole JSON.
	Info *StreamInfo
}

func keyValueStatus(st *C.natsio_kv_bucket_status) (*KeyValueStatus, error) {
	var v C.go_kv_status_view
	C.go_kv_status_read(st, &v)
	s := &KeyValueStatus{
		Bucket:         goStringOrEmpty(v.bucket),
		Values:         uint64(v.values),
		Bytes:          uint64(v.bytes),
		History:        int64(v.history),
		TTL:            time.Duration(v.ttl_ns),
		Storage:        StorageType(goStringOrEmpty(v.storage)),
		Replicas:       int(v.replicas),
		IsCompressed:   v.compressed != 0,
		Description:    goStringOrEmpty(v.description),
		Metadata:       metadataMap(v.metadata_json),
		LimitMarkerTTL: time.Duration(v.limit_marker_ttl_ns),
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

// Status reads the bucket's state in one request (the backing stream's
// info). ErrBucketNotFound once the bucket is deleted.
func (kv *KeyValue) Status(ctx context.Context) (*KeyValueStatus, error) {
	r, err := onKV(kv, func(p *C.natsio_kv) (C.go_take, error) { return rawKvGetStatus(ctx, p) })
	if err != nil {
		return nil, err
	}
	st := (*C.natsio_kv_bucket_status)(r.out)
	defer C.natsio_kv_bucket_status_free(st)
	return keyValueStatus(st)
}

// KeyValueStoreNames lists the names of the account's Key-Value buckets
// (streams named KV_<name> holding the $KV.<name>.> subjects; other
// streams are left out), in no particular order; an empty slice when
// there are none.
func (js *JetStream) KeyValueStoreNames(ctx context.Context) ([]string, error) {
	return kvBuckets.bucketNames(ctx, js)
}

// KeyValueStores reads the status of every Key-Value bucket of the account
// (as KeyValueStoreNames lists them), from the paged stream list without a
// request per bucket; an empty slice when there are none.
func (js *JetStream) KeyValueStores(ctx context.Context) ([]*KeyValueStatus, error) {
	return kvBuckets.bucketStatuses(ctx, js)
}

// Keys lists the keys that currently hold a value (deleted and purged keys
// are left out), in no particular order; an empty slice for an empty
// bucket. The library reads the bucket through a short-lived consumer.
func (kv *KeyValue) Keys(ctx context.Context) ([]string, error) {
	r, err := onKV(kv, func(p *C.natsio_kv) (C.go_take, error) { return rawKvKeys(ctx, p) })
	if err != nil {
		return nil, err
	}
	return takeStringList(r), nil
}

// History is every kept revision of key, oldest first, delete and purge
// markers included (each entry's Delta counts the newer revisions).
// ErrKeyNotFound when the key has none, ErrInvalidKey.
func (kv *KeyValue) History(ctx context.Context, key string) ([]KeyValueEntry, error) {
	r, err := onKV(kv, func(p *C.natsio_kv) (C.go_take, error) { return rawKvHistory(ctx, p, key) })
	if err != nil {
		return nil, err
	}
	list := (*C.natsio_kv_entry_list)(r.out)
	defer C.natsio_kv_entry_list_free(list)
	n := int(C.natsio_kv_entry_list_count(list))
	entries := make([]KeyValueEntry, 0, n)
	for i := range n {
		if e := C.natsio_kv_entry_list_get(list, C.size_t(i)); e != nil {
			entries = append(entries, *entryFrom(e))
		}
	}
	return entries, nil
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

// ResumeFromRevision resumes the watch at revision rev, as nats.go's
// jetstream.ResumeFromRevision: every stored revision from rev on of the
// matching keys (markers included unless IgnoreDeletes; IncludeHistory
// changes nothing), then the nil initial-values marker once the revisions
// stored when the watch started are delivered (at once if there are none
// from rev on), then changes. A revision past the next one to be written
// skips the changes before it. 0 means not set. With UpdatesOnly, Watch
// fails with ErrInvalidArgument.
func ResumeFromRevision(rev uint64) WatchOpt {
	return func(o *C.natsio_kv_watch_options) { o.resume_from_revision = C.uint64_t(rev) }
}

// KeyWatcher is a running watch of a bucket (Watch): first the current
// value of each matching key (or its history with IncludeHistory, or
// nothing with UpdatesOnly), then a nil entry marking the end of the
// initial values, then every change as it happens. From the moment Watch
// returns the library pulls the changes into its buffer on its own
// threads, whether or not anyone reads (so a reader that pauses misses
// nothing), and its ordered consumer recovers by itself from gaps, lost
// consumers and reconnects, resuming after the last revision delivered.
//
// Read it with Next, or with Updates (not both). All methods are safe for
// concurrent use. Stop it when done: Stop ends the watch and deletes its
// consumer on the server (a watch left unreachable unstopped is stopped by
// its finalizer; one whose Updates channel was taken stays alive until
// Stop or the connection's close).
type KeyWatcher struct {
	ptr *C.natsio_kv_watcher

	watchFeed[*KeyValueEntry]
}

// Watch watches the keys matching keys: one pattern, or several separated
// by commas ("app.*,users.>"); tokens are separated by dots, "*" matches
// one whole token and a final ">" the rest, so ">" is every key. ctx
// bounds the start only (which creates the watch's consumer). Errors:
// ErrInvalidKey (a bad pattern, "" included), ErrInvalidArgument (a NUL
// byte), ErrTimeout, ErrConnectionClosed.
func (kv *KeyValue) Watch(ctx context.Context, keys string, opts ...WatchOpt) (*KeyWatcher, error) {
	return kv.watch(ctx, strings.Split(keys, ","), opts)
}

// WatchAll watches every key of the bucket. Otherwise as Watch.
func (kv *KeyValue) WatchAll(ctx context.Context, opts ...WatchOpt) (*KeyWatcher, error) {
	return kv.watch(ctx, nil, opts)
}

// WatchFiltered watches the keys matching any of keys (every key when
// keys is empty). Otherwise as Watch.
func (kv *KeyValue) WatchFiltered(ctx context.Context, keys []string, opts ...WatchOpt) (*KeyWatcher, error) {
	return kv.watch(ctx, keys, opts)
}

func (kv *KeyValue) watch(ctx context.Context, keys []string, opts []WatchOpt) (*KeyWatcher, error) {
	var copts C.natsio_kv_watch_options
	C.natsio_kv_watch_options_init(&copts)
	for _, opt := range opts {
		opt(&copts)
	}
	if kv == nil {
		return nil, errorOf(ErrNullArgument, "nil *KeyValue")
	}
	r, err := rawKvWatch(ctx, kv.ptr, keys, &copts)
	runtime.KeepAlive(kv)
	if err != nil {
		return nil, err
	}
	w := &KeyWatcher{ptr: (*C.natsio_kv_watcher)(r.out), watchFeed: watchFeed[*KeyValueEntry]{stopped: make(chan struct{})}}
	runtime.SetFinalizer(w, func(w *KeyWatcher) { C.natsio_kv_watcher_free(w.ptr) })
	return w, nil
}

// next reads one event: an entry, or (nil, nil) for the initial-values
// marker.
func (w *KeyWatcher) next(ctx context.Context) (*KeyValueEntry, error) {
	defer runtime.KeepAlive(w)
	return iterNext(ctx, unsafe.Pointer(w.ptr), C.GO_ITER_KV_WATCHER,
		func(item unsafe.Pointer, _ C.go_msg_view, v C.go_entry_view) *KeyValueEntry {
			defer C.natsio_kv_entry_free((*C.natsio_kv_entry)(item))
			if v.operation == kvInitialDone {
				return nil
			}
			return entryFromView(&v)
		})
}

// Next returns the next entry: at once if the library has one buffered,
// else when one comes or ctx ends (with ctx's error; for a deadline one
// that also matches ErrTimeout; the watch goes on). It returns (nil, nil)
// exactly once, after the initial values (at once for UpdatesOnly or when
// nothing matches). An entry's Operation says put, delete or purge; for
// initial values Delta counts the key's newer revisions. Errors: ErrDone
// after Stop (also for a Next waiting while Stop is called),
// ErrConnectionClosed once the connection is closed, ErrBucketNotFound
// once the bucket is deleted, ErrIllegalState once Updates was called.
func (w *KeyWatcher) Next(ctx context.Context) (*KeyValueEntry, error) {
	if w == nil {
		return nil, errorOf(ErrNullArgument, "nil *KeyWatcher")
	}
	if w.feeding() {
		return nil, errorOf(ErrIllegalState, "the watch is read through Updates")
	}
	return w.next(ctx)
}

// Updates is a channel of the watch's entries, as in nats.go: the initial
// values, one nil entry when they have all been delivered, then the
// changes. A goroutine feeds it from the library's buffer (waiting on
// tokens, not in C) until the watch ends; the channel is then closed:
// after Stop (Stop waits for it), when the connection closed or the
// bucket was deleted. Every call returns the same channel; after Stop a
// closed one.
func (w *KeyWatcher) Updates() <-chan *KeyValueEntry {
	if w == nil {
		return closedChannel[*KeyValueEntry]()
	}
	return w.channel(w.next)
}

// Stop ends the watch: a Next waiting on another goroutine returns
// ErrDone, and so do later ones; the Updates channel is closed (Stop waits
// for its goroutine to end). The library deletes the watch's consumer on
// the server. Safe to call more than once, from any goroutine.
func (w *KeyWatcher) Stop() {
	if w == nil {
		return
	}
	fed := w.stop()
	C.natsio_kv_watcher_stop(w.ptr)
	runtime.KeepAlive(w)
	if fed != nil {
		<-fed
	}
}

// Stats reads the watch's live counters (Stalls: times its buffer was
// full and the library paused pulling).
func (w *KeyWatcher) Stats() (IterStats, error) {
	if w == nil {
		return IterStats{}, errorOf(ErrNullArgument, "nil *KeyWatcher")
	}
	var cs C.natsio_iter_stats
	err := cCall(func() C.natsio_status { return C.natsio_kv_watcher_get_stats(w.ptr, &cs) })
	runtime.KeepAlive(w)
	return iterStats(&cs), err
}
