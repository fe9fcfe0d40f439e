package nats

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	natsio "github.com/libnatsio/natsio/bindings/go"
	"github.com/libnatsio/natsio/bindings/go/internal/kvshim"
)

// KeyValueManager is the Key-Value half of the legacy context's bucket
// management: nats.go's methods, without contexts.
type KeyValueManager interface {
	KeyValue(bucket string) (KeyValue, error)
	CreateKeyValue(cfg *KeyValueConfig) (KeyValue, error)
	DeleteKeyValue(bucket string) error
	KeyValueStoreNames() <-chan string
	KeyValueStores() <-chan KeyValueStatus
}

// KeyValue is a bound bucket of the legacy API.
type KeyValue interface {
	Get(key string) (entry KeyValueEntry, err error)
	GetRevision(key string, revision uint64) (entry KeyValueEntry, err error)
	Put(key string, value []byte) (revision uint64, err error)
	PutString(key string, value string) (revision uint64, err error)
	Create(key string, value []byte) (revision uint64, err error)
	Update(key string, value []byte, last uint64) (revision uint64, err error)
	Delete(key string, opts ...DeleteOpt) error
	Purge(key string, opts ...DeleteOpt) error
	Watch(keys string, opts ...WatchOpt) (KeyWatcher, error)
	WatchAll(opts ...WatchOpt) (KeyWatcher, error)
	WatchFiltered(keys []string, opts ...WatchOpt) (KeyWatcher, error)
	Keys(opts ...WatchOpt) ([]string, error)
	ListKeys(opts ...WatchOpt) (KeyLister, error)
	History(key string, opts ...WatchOpt) ([]KeyValueEntry, error)
	Bucket() string
	PurgeDeletes(opts ...PurgeOpt) error
	Status() (KeyValueStatus, error)
}

// KeyValueStatus is a bucket's state.
type KeyValueStatus interface {
	Bucket() string
	Values() uint64
	History() int64
	TTL() time.Duration
	BackingStore() string
	Bytes() uint64
	IsCompressed() bool
	Config() KeyValueConfig
}

// KeyWatcher is a running watch: entries on Updates, a nil entry after
// the initial values (none for UpdatesOnly), until Stop closes it.
type KeyWatcher interface {
	Context() context.Context
	Updates() <-chan KeyValueEntry
	Stop() error
	Error() <-chan error
}

// KeyLister is a running listing of the keys.
type KeyLister interface {
	Keys() <-chan string
	Stop() error
	Error() <-chan error
}

// KeyValueEntry is one revision of a key.
type KeyValueEntry interface {
	Bucket() string
	Key() string
	Value() []byte
	Revision() uint64
	Created() time.Time
	Delta() uint64
	Operation() KeyValueOp
}

type KeyValueOp uint8

const (
	KeyValuePut KeyValueOp = iota
	KeyValueDelete
	KeyValuePurge
)

func (op KeyValueOp) String() string { return kvshim.OpString(uint8(op)) }

// Limits and the pattern of every key.
const (
	KeyValueMaxHistory = 64
	AllKeys            = ">"
)

// KeyValueConfig is a bucket's configuration, with nats.go's legacy
// field names.
type KeyValueConfig struct {
	Bucket       string          `json:"bucket"`
	Description  string          `json:"description,omitempty"`
	MaxValueSize int32           `json:"max_value_size,omitempty"`
	History      uint8           `json:"history,omitempty"`
	TTL          time.Duration   `json:"ttl,omitempty"`
	MaxBytes     int64           `json:"max_bytes,omitempty"`
	Storage      StorageType     `json:"storage,omitempty"`
	Replicas     int             `json:"num_replicas,omitempty"`
	Placement    *Placement      `json:"placement,omitempty"`
	RePublish    *RePublish      `json:"republish,omitempty"`
	Mirror       *StreamSource   `json:"mirror,omitempty"`
	Sources      []*StreamSource `json:"sources,omitempty"`
	Compression  bool            `json:"compression,omitempty"`
}

// Placement places a stream on a cluster and/or tagged servers.
type Placement struct {
	Cluster string   `json:"cluster"`
	Tags    []string `json:"tags,omitempty"`
}

// RePublish republishes a stream's messages once stored.
type RePublish struct {
	Source      string `json:"src,omitempty"`
	Destination string `json:"dest"`
	HeadersOnly bool   `json:"headers_only,omitempty"`
}

// StreamSource is a stream a stream mirrors or sources.
type StreamSource struct {
	Name              string                   `json:"name"`
	OptStartSeq       uint64                   `json:"opt_start_seq,omitempty"`
	OptStartTime      *time.Time               `json:"opt_start_time,omitempty"`
	FilterSubject     string                   `json:"filter_subject,omitempty"`
	SubjectTransforms []SubjectTransformConfig `json:"subject_transforms,omitempty"`
	External          *ExternalStream          `json:"external,omitempty"`
	Domain            string                   `json:"-"`
}

// ExternalStream qualifies a source in another account or domain.
type ExternalStream struct {
	APIPrefix     string `json:"api"`
	DeliverPrefix string `json:"deliver,omitempty"`
}

// SubjectTransformConfig maps a source's subjects.
type SubjectTransformConfig struct {
	Source      string `json:"src,omitempty"`
	Destination string `json:"dest"`
}

// JetStreamError is an error that may carry the server's API error.
type JetStreamError interface {
	APIError() *APIError
	error
}

type jsError struct {
	apiErr  *APIError
	message string
}

func (e *jsError) APIError() *APIError { return e.apiErr }

func (e *jsError) Error() string {
	if e.apiErr != nil && e.apiErr.Description != "" {
		return e.apiErr.Error()
	}
	return "nats: " + e.message
}

func (e *jsError) Unwrap() error {
	if e.apiErr == nil {
		return nil
	}
	return e.apiErr
}

// JSErrCodeStreamWrongLastSequence is the err_code of a refused expected
// sequence (a Key-Value revision that is not the key's latest).
const JSErrCodeStreamWrongLastSequence ErrorCode = 10071

// The Key-Value errors, with nats.go's texts.
var (
	ErrKeyValueConfigRequired = errors.New("nats: config required")
	ErrInvalidBucketName      = errors.New("nats: invalid bucket name")
	ErrInvalidKey             = errors.New("nats: invalid key")
	ErrBucketNotFound         = errors.New("nats: bucket not found")
	ErrBadBucket              = errors.New("nats: bucket not valid key-value store")
	ErrKeyNotFound            = errors.New("nats: key not found")
	ErrKeyDeleted             = errors.New("nats: key was deleted")
	ErrHistoryToLarge         = errors.New("nats: history limited to a max of 64")
	ErrNoKeysFound            = errors.New("nats: no keys found")
	ErrKeyWatcherTimeout      = errors.New("nats: key watcher timed out waiting for initial keys")

	// ErrKeyExists matches Create's refusal (by its err_code).
	ErrKeyExists JetStreamError = &jsError{apiErr: &APIError{ErrorCode: JSErrCodeStreamWrongLastSequence, Code: 400}, message: "key exists"}
	// ErrKeyRevisionMismatch is added to a refused Update, and Delete or
	// Purge with LastRevision.
	ErrKeyRevisionMismatch JetStreamError = &jsError{message: "key revision mismatch"}
)

// kvErrorPairs map the binding's Key-Value and Object Store sentinels to
// the legacy API's, most specific first. A bucket that is not there is a
// stream that is not there (nats.go's legacy calls read the stream's info);
// KeyValue, the one call saying ErrBucketNotFound, maps it itself.
var kvErrorPairs = []struct{ from, to error }{
	{natsio.ErrBucketNotFound, ErrStreamNotFound},
	{natsio.ErrBucketExists, ErrStreamNameAlreadyInUse},
	// nats.go's Get reports a deleted key as not found.
	{natsio.ErrKeyDeleted, ErrKeyNotFound},
	{natsio.ErrKeyNotFound, ErrKeyNotFound},
	{natsio.ErrInvalidBucketName, ErrInvalidBucketName},
	{natsio.ErrInvalidKey, ErrInvalidKey},
	{natsio.ErrObjectNotFound, ErrObjectNotFound},
	{natsio.ErrObjectExists, ErrObjectAlreadyExists},
	{natsio.ErrDigestMismatch, ErrDigestMismatch},
	{natsio.ErrInvalidObjectName, ErrBadObjectMeta},
}

// kvTranslate is a Key-Value or Object Store call's error as nats.go's
// legacy API returns it.
func kvTranslate(err error) error {
	if err == nil {
		return nil
	}
	for _, p := range kvErrorPairs {
		if errors.Is(err, p.from) {
			return p.to
		}
	}
	return jsTranslate(err)
}

// revisionMismatch is a refused expected-revision write: the publish's
// API error, ErrKeyRevisionMismatch added, as nats.go's.
func revisionMismatch(err error) error {
	err = kvTranslate(err)
	var apiErr *APIError
	if errors.As(err, &apiErr) && kvshim.IsWrongLastSequence(int(apiErr.ErrorCode)) {
		return fmt.Errorf("%w: %w", err, ErrKeyRevisionMismatch)
	}
	return err
}

// ---- options

// WatchOpt configures a watch (Key-Value and Object Store), Keys,
// ListKeys and History.
type WatchOpt interface{ configureWatcher(*watchOpts) error }

type watchOpts struct {
	ctx                                                  context.Context
	ignoreDeletes, includeHistory, updatesOnly, metaOnly bool
}

func (o watchOpts) binding() []natsio.WatchOpt {
	var out []natsio.WatchOpt
	if o.ignoreDeletes {
		out = append(out, natsio.IgnoreDeletes())
	}
	if o.includeHistory {
		out = append(out, natsio.IncludeHistory())
	}
	if o.updatesOnly {
		out = append(out, natsio.UpdatesOnly())
	}
	if o.metaOnly {
		out = append(out, natsio.MetaOnly())
	}
	return out
}

func watchOptions(opts []WatchOpt) (watchOpts, error) {
	var o watchOpts
	for _, opt := range opts {
		if opt != nil {
			if err := opt.configureWatcher(&o); err != nil {
				return o, err
			}
		}
	}
	return o, nil
}

type watchOptFn func(*watchOpts) error

func (f watchOptFn) configureWatcher(o *watchOpts) error { return f(o) }

func (c ContextOpt) configureWatcher(o *watchOpts) error { o.ctx = c.Context; return nil }

// IncludeHistory delivers every kept revision, not only the latest.
func IncludeHistory() WatchOpt {
	return watchOptFn(func(o *watchOpts) error {
		if o.updatesOnly {
			return errors.New("nats: include history can not be used with updates only")
		}
		o.includeHistory = true
		return nil
	})
}

// UpdatesOnly delivers only the changes made after the watch started.
func UpdatesOnly() WatchOpt {
	return watchOptFn(func(o *watchOpts) error {
		if o.includeHistory {
			return errors.New("nats: updates only can not be used with include history")
		}
		o.updatesOnly = true
		return nil
	})
}

// IgnoreDeletes leaves delete and purge markers out.
func IgnoreDeletes() WatchOpt {
	return watchOptFn(func(o *watchOpts) error { o.ignoreDeletes = true; return nil })
}

// MetaOnly delivers entries without their values.
func MetaOnly() WatchOpt {
	return watchOptFn(func(o *watchOpts) error { o.metaOnly = true; return nil })
}

// PurgeOpt configures PurgeDeletes.
type PurgeOpt interface{ configurePurge(*purgeOpts) error }

type purgeOpts struct {
	olderThan time.Duration
	ctx       context.Context
}

// DeleteMarkersOlderThan is PurgeDeletes' age threshold: older markers go
// with their keys, younger ones stay (0: 30 minutes; negative: all go).
type DeleteMarkersOlderThan time.Duration

func (d DeleteMarkersOlderThan) configurePurge(o *purgeOpts) error {
	o.olderThan = time.Duration(d)
	return nil
}

func (c ContextOpt) configurePurge(o *purgeOpts) error { o.ctx = c.Context; return nil }

// DeleteOpt configures Delete and Purge.
type DeleteOpt interface {
	configureDelete(*[]natsio.KVDeleteOpt) error
}

type deleteOptFn func(*[]natsio.KVDeleteOpt) error

func (f deleteOptFn) configureDelete(o *[]natsio.KVDeleteOpt) error { return f(o) }

// LastRevision deletes only if revision is the key's latest.
func LastRevision(revision uint64) DeleteOpt {
	return deleteOptFn(func(o *[]natsio.KVDeleteOpt) error {
		*o = append(*o, natsio.LastRevision(revision))
		return nil
	})
}

// ---- the manager

type kvBucket struct {
	js    *jsContext
	inner *natsio.KeyValue
}

func (js *jsContext) KeyValue(bucket string) (KeyValue, error) {
	ctx, cancel := js.context(nil)
	defer cancel()
	inner, err := js.inner.KeyValue(ctx, bucket)
	if errors.Is(err, natsio.ErrBucketNotFound) {
		return nil, ErrBucketNotFound
	}
	if err != nil {
		return nil, kvTranslate(err)
	}
	// nats.go refuses a KV_ stream keeping no revision per key.
	st, err := inner.Status(ctx)
	if err != nil {
		return nil, kvTranslate(err)
	}
	if st.History < 1 {
		return nil, ErrBadBucket
	}
	return &kvBucket{js, inner}, nil
}

// CreateKeyValue creates the bucket (an identical one is bound; one with
// another configuration is ErrStreamNameAlreadyInUse, as nats.go's).
func (js *jsContext) CreateKeyValue(cfg *KeyValueConfig) (KeyValue, error) {
	if cfg == nil {
		return nil, ErrKeyValueConfigRequired
	}
	if !validBucket(cfg.Bucket) {
		return nil, ErrInvalidBucketName
	}
	if cfg.History > KeyValueMaxHistory {
		return nil, ErrHistoryToLarge
	}
	// The core makes the mirror and sources what nats.go makes of them
	// (KV_ names, key transforms, Domain as External).
	domain := func(ss *StreamSource) string { return ss.Domain }
	mirror, err := kvshim.Source(cfg.Mirror, domain)
	if err != nil {
		return nil, err
	}
	sources, err := kvshim.Sources(cfg.Sources, domain)
	if err != nil {
		return nil, err
	}
	ctx, cancel := js.context(nil)
	defer cancel()
	inner, err := js.inner.CreateKeyValue(ctx, kvshim.KVConfig{
		Bucket: cfg.Bucket, Description: cfg.Description, MaxValueSize: cfg.MaxValueSize, History: cfg.History,
		TTL: cfg.TTL, MaxBytes: cfg.MaxBytes, Memory: cfg.Storage == MemoryStorage, Replicas: cfg.Replicas,
		Compression: cfg.Compression, Mirror: mirror, Sources: sources,
		Extra: map[string]any{"placement": cfg.Placement, "republish": cfg.RePublish},
	}.Binding())
	if err != nil {
		return nil, kvTranslate(err)
	}
	return &kvBucket{js, inner}, nil
}

// validBucket is nats.go's check of a bucket's name, made before any
// request: [A-Za-z0-9_-]+.
func validBucket(name string) bool {
	if name == "" {
		return false
	}
	for _, c := range name {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// DeleteKeyValue deletes the bucket's stream (ErrStreamNotFound when
// there is none, as nats.go's).
func (js *jsContext) DeleteKeyValue(bucket string) error {
	if !validBucket(bucket) {
		return ErrInvalidBucketName
	}
	ctx, cancel := js.context(nil)
	defer cancel()
	return kvTranslate(js.inner.DeleteKeyValue(ctx, bucket))
}

func (js *jsContext) KeyValueStoreNames() <-chan string {
	ctx, cancel := js.context(nil)
	names, _ := js.inner.KeyValueStoreNames(ctx)
	return listed(ctx, cancel, names)
}

func (js *jsContext) KeyValueStores() <-chan KeyValueStatus {
	ctx, cancel := js.context(nil)
	stores, _ := js.inner.KeyValueStores(ctx)
	out := make([]KeyValueStatus, 0, len(stores))
	for _, st := range stores {
		out = append(out, &KeyValueBucketStatus{kvshim.Status{S: st}})
	}
	return listed(ctx, cancel, out)
}

// ---- the bucket

func (kv *kvBucket) Bucket() string { return kv.inner.Bucket() }

func kvEntryOf(e *natsio.KeyValueEntry) KeyValueEntry { return kvshim.Entry[KeyValueOp]{E: e} }

func (kv *kvBucket) entry(get func(context.Context) (*natsio.KeyValueEntry, error)) (KeyValueEntry, error) {
	ctx, cancel := kv.js.context(nil)
	defer cancel()
	e, err := get(ctx)
	if err != nil {
		return nil, kvTranslate(err)
	}
	return kvEntryOf(e), nil
}

// Get is key's latest value (ErrKeyNotFound when deleted, as nats.go's).
func (kv *kvBucket) Get(key string) (KeyValueEntry, error) {
	return kv.entry(func(ctx context.Context) (*natsio.KeyValueEntry, error) { return kv.inner.Get(ctx, key) })
}

func (kv *kvBucket) GetRevision(key string, revision uint64) (KeyValueEntry, error) {
	return kv.entry(func(ctx context.Context) (*natsio.KeyValueEntry, error) {
		return kv.inner.GetRevision(ctx, key, revision)
	})
}

func (kv *kvBucket) Put(key string, value []byte) (uint64, error) {
	ctx, cancel := kv.js.context(nil)
	defer cancel()
	rev, err := kv.inner.Put(ctx, key, value)
	return rev, kvTranslate(err)
}

func (kv *kvBucket) PutString(key string, value string) (uint64, error) {
	return kv.Put(key, []byte(value))
}

// Create writes key only if it holds no value; else the refused publish
// naming the live revision, "key exists" added (errors.Is ErrKeyExists).
func (kv *kvBucket) Create(key string, value []byte) (uint64, error) {
	ctx, cancel := kv.js.context(nil)
	defer cancel()
	rev, err := kv.inner.Create(ctx, key, value)
	if live, exists := kvshim.ExistingRevision(err); exists {
		refusal := &APIError{Code: 400, ErrorCode: JSErrCodeStreamWrongLastSequence,
			Description: fmt.Sprintf("wrong last sequence: %d", live)}
		return 0, fmt.Errorf("%w: key exists", refusal)
	}
	return rev, kvTranslate(err)
}

func (kv *kvBucket) Update(key string, value []byte, last uint64) (uint64, error) {
	ctx, cancel := kv.js.context(nil)
	defer cancel()
	rev, err := kv.inner.Update(ctx, key, value, last)
	return rev, revisionMismatch(err)
}

func deleteOptions(opts []DeleteOpt) ([]natsio.KVDeleteOpt, error) {
	var out []natsio.KVDeleteOpt
	for _, o := range opts {
		if o != nil {
			if err := o.configureDelete(&out); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}

func (kv *kvBucket) remove(key string, opts []DeleteOpt,
	op func(context.Context, string, ...natsio.KVDeleteOpt) error) error {
	o, err := deleteOptions(opts)
	if err != nil {
		return err
	}
	ctx, cancel := kv.js.context(nil)
	defer cancel()
	return revisionMismatch(op(ctx, key, o...))
}

func (kv *kvBucket) Delete(key string, opts ...DeleteOpt) error {
	return kv.remove(key, opts, kv.inner.Delete)
}

func (kv *kvBucket) Purge(key string, opts ...DeleteOpt) error {
	return kv.remove(key, opts, kv.inner.Purge)
}

func (kv *kvBucket) PurgeDeletes(opts ...PurgeOpt) error {
	var o purgeOpts
	for _, opt := range opts {
		if opt != nil {
			if err := opt.configurePurge(&o); err != nil {
				return err
			}
		}
	}
	ctx, cancel := kv.js.context(o.ctx)
	defer cancel()
	_, err := kv.inner.PurgeDeletes(ctx, natsio.DeleteMarkersOlderThan(o.olderThan))
	return kvTranslate(err)
}

func (kv *kvBucket) Status() (KeyValueStatus, error) {
	ctx, cancel := kv.js.context(nil)
	defer cancel()
	st, err := kv.inner.Status(ctx)
	if err != nil {
		return nil, kvTranslate(err)
	}
	return &KeyValueBucketStatus{kvshim.Status{S: st}}, nil
}

// KeyValueBucketStatus is the KeyValueStatus the legacy API returns.
type KeyValueBucketStatus struct{ kvshim.Status }

// StreamInfo is the bucket's stream's info.
func (s *KeyValueBucketStatus) StreamInfo() *StreamInfo {
	var out StreamInfo
	if s.S.Info != nil {
		json.Unmarshal(s.S.Info.Raw, &out)
	}
	return &out
}

// Config is the bucket's configuration, read from its stream's.
func (s *KeyValueBucketStatus) Config() KeyValueConfig {
	var stream struct {
		Config struct {
			MaxMsgSize int32           `json:"max_msg_size"`
			MaxBytes   int64           `json:"max_bytes"`
			Placement  *Placement      `json:"placement"`
			RePublish  *RePublish      `json:"republish"`
			Mirror     *StreamSource   `json:"mirror"`
			Sources    []*StreamSource `json:"sources"`
		} `json:"config"`
	}
	if s.S.Info != nil {
		json.Unmarshal(s.S.Info.Raw, &stream)
	}
	c := stream.Config
	storage := FileStorage
	if s.S.Storage == natsio.MemoryStorage {
		storage = MemoryStorage
	}
	return KeyValueConfig{
		Bucket: s.S.Bucket, Description: s.S.Description, MaxValueSize: c.MaxMsgSize,
		History: uint8(s.S.History), TTL: s.S.TTL, MaxBytes: c.MaxBytes, Storage: storage,
		Replicas: s.S.Replicas, Placement: c.Placement, RePublish: c.RePublish, Mirror: c.Mirror,
		Sources: c.Sources, Compression: s.S.IsCompressed,
	}
}

// ---- watches and listings

type keyWatcher struct {
	ctx     context.Context
	inner   *natsio.KeyWatcher
	updates <-chan KeyValueEntry
	errs    chan error
}

func (w *keyWatcher) Context() context.Context      { return w.ctx }
func (w *keyWatcher) Updates() <-chan KeyValueEntry { return w.updates }
func (w *keyWatcher) Stop() error                   { w.inner.Stop(); return nil }

// Error is closed when the watch ends (the library reports no initial
// values timeout: it waits for them).
func (w *keyWatcher) Error() <-chan error { return w.errs }

func (kv *kvBucket) watch(keys []string, opts []WatchOpt) (*keyWatcher, error) {
	o, err := watchOptions(opts)
	if err != nil {
		return nil, err
	}
	ctx, cancel := kv.js.context(o.ctx)
	defer cancel()
	var inner *natsio.KeyWatcher
	if keys == nil {
		inner, err = kv.inner.WatchAll(ctx, o.binding()...)
	} else {
		inner, err = kv.inner.WatchFiltered(ctx, keys, o.binding()...)
	}
	if err != nil {
		return nil, kvTranslate(err)
	}
	kvshim.StopWithContext(o.ctx, inner.Stop)
	w := &keyWatcher{ctx: o.ctx, inner: inner, errs: make(chan error, 1)}
	w.updates = kvshim.Relay(inner.Updates(), 256, o.updatesOnly, kvEntryOf, func() { close(w.errs) })
	return w, nil
}

// Watch watches the keys matching keys.
func (kv *kvBucket) Watch(keys string, opts ...WatchOpt) (KeyWatcher, error) {
	return kv.WatchFiltered([]string{keys}, opts...)
}

func (kv *kvBucket) WatchAll(opts ...WatchOpt) (KeyWatcher, error) {
	return kv.watch(nil, opts)
}

func (kv *kvBucket) WatchFiltered(keys []string, opts ...WatchOpt) (KeyWatcher, error) {
	for _, key := range keys {
		if !validSearchKey(key) {
			return nil, fmt.Errorf("%w: %s", ErrInvalidKey, "key cannot be empty and must be a valid NATS subject")
		}
	}
	if len(keys) == 0 {
		keys = nil
	}
	return kv.watch(keys, opts)
}

// validSearchKey is nats.go's check of a watched pattern.
func validSearchKey(key string) bool {
	if key == "" || key[0] == '.' || key[len(key)-1] == '.' {
		return false
	}
	for i, c := range key {
		switch {
		case c == '.' && key[i-1] == '.':
			return false
		case c == '>' && i != len(key)-1:
			return false
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9',
			c == '-', c == '/', c == '_', c == '=', c == '.', c == '*', c == '>':
		default:
			return false
		}
	}
	return true
}

// initial reads a watch's initial values, up to the nil marker.
func initial(w *keyWatcher) []KeyValueEntry {
	var out []KeyValueEntry
	for e := range w.updates {
		if e == nil {
			break
		}
		out = append(out, e)
	}
	return out
}

// Keys lists the keys holding a value, sorted, once each; ErrNoKeysFound
// when there are none (nats.go's).
func (kv *kvBucket) Keys(opts ...WatchOpt) ([]string, error) {
	w, err := kv.watch(nil, append(opts, IgnoreDeletes(), MetaOnly()))
	if err != nil {
		return nil, err
	}
	defer w.Stop()
	var keys []string
	for _, e := range initial(w) {
		keys = append(keys, e.Key())
	}
	if len(keys) == 0 {
		return nil, ErrNoKeysFound
	}
	slices.Sort(keys)
	return slices.Compact(keys), nil
}

type keyLister struct {
	w    *keyWatcher
	keys chan string
}

func (l *keyLister) Keys() <-chan string { return l.keys }
func (l *keyLister) Stop() error         { return l.w.Stop() }
func (l *keyLister) Error() <-chan error { return l.w.Error() }

// ListKeys lists the keys holding a value on a channel, closed after the
// last.
func (kv *kvBucket) ListKeys(opts ...WatchOpt) (KeyLister, error) {
	w, err := kv.watch(nil, append(opts, IgnoreDeletes(), MetaOnly()))
	if err != nil {
		return nil, err
	}
	l := &keyLister{w: w, keys: make(chan string, 256)}
	go func() {
		defer close(l.keys)
		defer w.Stop()
		for e := range w.updates {
			if e == nil {
				return
			}
			l.keys <- e.Key()
		}
	}()
	return l, nil
}

// History is every kept revision of key, oldest first; ErrKeyNotFound
// when there is none.
func (kv *kvBucket) History(key string, opts ...WatchOpt) ([]KeyValueEntry, error) {
	w, err := kv.watch([]string{key}, append(opts, IncludeHistory()))
	if err != nil {
		return nil, err
	}
	defer w.Stop()
	entries := initial(w)
	if len(entries) == 0 {
		return nil, ErrKeyNotFound
	}
	return entries, nil
}
