package jetstream

import (
	"context"
	"errors"
	"fmt"
	"time"

	natsio "github.com/libnatsio/natsio/bindings/go"
	"github.com/libnatsio/natsio/bindings/go/internal/kvshim"
)

// KeyValueManager creates, binds and deletes Key-Value buckets.
type KeyValueManager interface {
	KeyValue(ctx context.Context, bucket string) (KeyValue, error)
	CreateKeyValue(ctx context.Context, cfg KeyValueConfig) (KeyValue, error)
	UpdateKeyValue(ctx context.Context, cfg KeyValueConfig) (KeyValue, error)
	CreateOrUpdateKeyValue(ctx context.Context, cfg KeyValueConfig) (KeyValue, error)
	DeleteKeyValue(ctx context.Context, bucket string) error
	KeyValueStoreNames(ctx context.Context) KeyValueNamesLister
	KeyValueStores(ctx context.Context) KeyValueLister
}

// KeyValueNamesLister yields the buckets' names on Name, then Error.
type KeyValueNamesLister interface {
	Name() <-chan string
	Error() error
}

// KeyValueLister yields the buckets' status on Status, then Error.
type KeyValueLister interface {
	Status() <-chan KeyValueStatus
	Error() error
}

func (js *jetStream) KeyValueStoreNames(ctx context.Context) KeyValueNamesLister {
	names, err := js.inner.KeyValueStoreNames(ctx)
	return newLister(names, translate(err))
}

func (js *jetStream) KeyValueStores(ctx context.Context) KeyValueLister {
	stores, err := js.inner.KeyValueStores(ctx)
	out := make([]KeyValueStatus, len(stores))
	for i, st := range stores {
		out[i] = newKVStatus(st)
	}
	return newLister(out, translate(err))
}

// KeyValueConfig is a bucket's configuration, with nats.go's field names.
type KeyValueConfig struct {
	Bucket         string            `json:"bucket"`
	Description    string            `json:"description,omitempty"`
	MaxValueSize   int32             `json:"max_value_size,omitempty"`
	History        uint8             `json:"history,omitempty"`
	TTL            time.Duration     `json:"ttl,omitempty"`
	MaxBytes       int64             `json:"max_bytes,omitempty"`
	Storage        StorageType       `json:"storage,omitempty"`
	Replicas       int               `json:"num_replicas,omitempty"`
	Placement      *Placement        `json:"placement,omitempty"`
	RePublish      *RePublish        `json:"republish,omitempty"`
	Compression    bool              `json:"compression,omitempty"`
	LimitMarkerTTL time.Duration     `json:"limit_marker_ttl,omitempty"`
	Metadata       map[string]string `json:"metadata,omitempty"`
	// Mirror makes the bucket a read-only copy of another bucket (Name
	// with or without KV_; Domain for one in another JetStream domain).
	// A handle of it reads the keys it holds and writes to the mirrored
	// bucket. It wins over Sources.
	Mirror *StreamSource `json:"mirror,omitempty"`
	// Sources are buckets whose keys are copied into this one as they
	// are written there.
	Sources []*StreamSource `json:"sources,omitempty"`
}

func (c KeyValueConfig) binding() (natsio.KeyValueConfig, error) {
	domain := func(ss *StreamSource) string { return ss.Domain }
	mirror, err := kvshim.Source(c.Mirror, domain)
	if err != nil {
		return natsio.KeyValueConfig{}, err
	}
	sources, err := kvshim.Sources(c.Sources, domain)
	if err != nil {
		return natsio.KeyValueConfig{}, err
	}
	return kvshim.KVConfig{
		Bucket: c.Bucket, Description: c.Description, MaxValueSize: c.MaxValueSize, History: c.History,
		TTL: c.TTL, MaxBytes: c.MaxBytes, Memory: c.Storage == MemoryStorage, Replicas: c.Replicas,
		Compression: c.Compression, LimitMarkerTTL: c.LimitMarkerTTL, Metadata: c.Metadata,
		Mirror: mirror, Sources: sources,
		Extra: map[string]any{"placement": c.Placement, "republish": c.RePublish},
	}.Binding(), nil
}

type KeyValueOp uint8

const (
	KeyValuePut KeyValueOp = iota
	KeyValueDelete
	KeyValuePurge
)

func (op KeyValueOp) String() string { return kvshim.OpString(uint8(op)) }

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

type kvEntry = kvshim.Entry[KeyValueOp]

// KeyValueStatus is a bucket's state.
type KeyValueStatus interface {
	Bucket() string
	Values() uint64
	History() int64
	TTL() time.Duration
	BackingStore() string
	Bytes() uint64
	IsCompressed() bool
	LimitMarkerTTL() time.Duration
	Metadata() map[string]string
	Config() KeyValueConfig
}

// KeyWatcher is a running watch: entries on Updates (a nil entry marks the
// end of the initial values), until Stop.
type KeyWatcher interface {
	Updates() <-chan KeyValueEntry
	Stop() error
}

// KeyLister is a running listing of keys.
type KeyLister interface {
	Keys() <-chan string
	Stop() error
}

// KVCreateOpt configures Create.
type KVCreateOpt func(*[]natsio.KVCreateOpt) error

// KeyTTL makes the created revision expire after ttl.
func KeyTTL(ttl time.Duration) KVCreateOpt {
	return func(o *[]natsio.KVCreateOpt) error { *o = append(*o, natsio.KeyTTL(ttl)); return nil }
}

// KVDeleteOpt configures Delete and Purge.
type KVDeleteOpt func(*kvDeleteConfig) error

type kvDeleteConfig struct {
	opts []natsio.KVDeleteOpt
	// ttl: PurgeTTL was given a positive TTL, which Delete refuses.
	ttl bool
}

func LastRevision(revision uint64) KVDeleteOpt {
	return func(c *kvDeleteConfig) error { c.opts = append(c.opts, natsio.LastRevision(revision)); return nil }
}

// PurgeTTL has the purge marker expire after ttl (the bucket needs a
// LimitMarkerTTL). Purge only: Delete refuses it with
// ErrTTLOnDeleteNotSupported.
func PurgeTTL(ttl time.Duration) KVDeleteOpt {
	return func(c *kvDeleteConfig) error {
		c.opts, c.ttl = append(c.opts, natsio.PurgeTTL(ttl)), ttl > 0
		return nil
	}
}

// KVPurgeOpt configures PurgeDeletes.
type KVPurgeOpt interface {
	configurePurge(*[]natsio.KVPurgeOpt) error
}

// DeleteMarkersOlderThan has PurgeDeletes remove only the delete and
// purge markers older than it (default 30 minutes; a negative value: all
// of them).
type DeleteMarkersOlderThan time.Duration

func (d DeleteMarkersOlderThan) configurePurge(o *[]natsio.KVPurgeOpt) error {
	*o = append(*o, natsio.DeleteMarkersOlderThan(time.Duration(d)))
	return nil
}

// KeyValueMaxHistory is the most revisions a bucket keeps per key; a
// larger History is ErrHistoryTooLarge.
const KeyValueMaxHistory = 64

// AllKeys is the filter of every key (Watch).
const AllKeys = ">"

// WatchOpt configures a watch (Key-Value and Object Store) and Keys.
type WatchOpt func(*watchConfig) error

type watchConfig struct {
	opts        []natsio.WatchOpt
	updatesOnly bool
}

func watchOpt(o natsio.WatchOpt) WatchOpt {
	return func(c *watchConfig) error { c.opts = append(c.opts, o); return nil }
}

func IncludeHistory() WatchOpt { return watchOpt(natsio.IncludeHistory()) }
func IgnoreDeletes() WatchOpt  { return watchOpt(natsio.IgnoreDeletes()) }
func MetaOnly() WatchOpt       { return watchOpt(natsio.MetaOnly()) }
func ResumeFromRevision(revision uint64) WatchOpt {
	return watchOpt(natsio.ResumeFromRevision(revision))
}

// UpdatesOnly watches only the changes made from now on.
func UpdatesOnly() WatchOpt {
	return func(c *watchConfig) error {
		c.opts, c.updatesOnly = append(c.opts, natsio.UpdatesOnly()), true
		return nil
	}
}

func watchOptions(opts []WatchOpt) (watchConfig, error) {
	var cfg watchConfig
	for _, o := range opts {
		if err := o(&cfg); err != nil {
			return cfg, err
		}
	}
	return cfg, nil
}

type kv struct{ inner *natsio.KeyValue }

// KeyValue binds bucket: ErrBucketNotFound when there is no stream
// KV_<bucket>, ErrBadBucket when there is one that is not a bucket.
func (js *jetStream) KeyValue(ctx context.Context, bucket string) (KeyValue, error) {
	inner, err := js.inner.KeyValue(ctx, bucket)
	if errors.Is(err, natsio.ErrBucketNotFound) {
		if _, infoErr := js.inner.StreamInfo(ctx, "KV_"+bucket); infoErr == nil {
			return nil, ErrBadBucket
		}
	}
	return bindKV(inner, err)
}

// checkKVConfig refuses what nats.go refuses before asking the server.
func checkKVConfig(cfg KeyValueConfig) error {
	if cfg.History > KeyValueMaxHistory {
		return ErrHistoryTooLarge
	}
	return nil
}

func (js *jetStream) CreateKeyValue(ctx context.Context, cfg KeyValueConfig) (KeyValue, error) {
	return kvOp(ctx, cfg, js.inner.CreateKeyValue)
}

func (js *jetStream) UpdateKeyValue(ctx context.Context, cfg KeyValueConfig) (KeyValue, error) {
	return kvOp(ctx, cfg, js.inner.UpdateKeyValue)
}

func (js *jetStream) CreateOrUpdateKeyValue(ctx context.Context, cfg KeyValueConfig) (KeyValue, error) {
	return kvOp(ctx, cfg, js.inner.CreateOrUpdateKeyValue)
}

// kvOp checks cfg as nats.go does, and creates and/or updates its bucket
// through op.
func kvOp(ctx context.Context, cfg KeyValueConfig,
	op func(context.Context, natsio.KeyValueConfig) (*natsio.KeyValue, error)) (KeyValue, error) {
	if err := checkKVConfig(cfg); err != nil {
		return nil, err
	}
	bcfg, err := cfg.binding()
	if err != nil {
		return nil, err
	}
	return bindKV(op(ctx, bcfg))
}

func (js *jetStream) DeleteKeyValue(ctx context.Context, bucket string) error {
	return translate(js.inner.DeleteKeyValue(ctx, bucket))
}

func bindKV(inner *natsio.KeyValue, err error) (KeyValue, error) {
	if err != nil {
		return nil, translate(err)
	}
	return &kv{inner}, nil
}

// KeyValue is a bound bucket.
type KeyValue interface {
	Get(ctx context.Context, key string) (KeyValueEntry, error)
	GetRevision(ctx context.Context, key string, revision uint64) (KeyValueEntry, error)
	Put(ctx context.Context, key string, value []byte) (uint64, error)
	PutString(ctx context.Context, key string, value string) (uint64, error)
	Create(ctx context.Context, key string, value []byte, opts ...KVCreateOpt) (uint64, error)
	Update(ctx context.Context, key string, value []byte, revision uint64) (uint64, error)
	Delete(ctx context.Context, key string, opts ...KVDeleteOpt) error
	Purge(ctx context.Context, key string, opts ...KVDeleteOpt) error
	Watch(ctx context.Context, keys string, opts ...WatchOpt) (KeyWatcher, error)
	WatchAll(ctx context.Context, opts ...WatchOpt) (KeyWatcher, error)
	WatchFiltered(ctx context.Context, keys []string, opts ...WatchOpt) (KeyWatcher, error)
	Keys(ctx context.Context, opts ...WatchOpt) ([]string, error)
	ListKeys(ctx context.Context, opts ...WatchOpt) (KeyLister, error)
	ListKeysFiltered(ctx context.Context, filters ...string) (KeyLister, error)
	History(ctx context.Context, key string, opts ...WatchOpt) ([]KeyValueEntry, error)
	Bucket() string
	PurgeDeletes(ctx context.Context, opts ...KVPurgeOpt) error
	Status(ctx context.Context) (KeyValueStatus, error)
}

func entry(e *natsio.KeyValueEntry, err error) (KeyValueEntry, error) {
	if err != nil {
		return nil, translate(err)
	}
	return kvEntry{E: e}, nil
}

func (k *kv) Bucket() string { return k.inner.Bucket() }

func (k *kv) Get(ctx context.Context, key string) (KeyValueEntry, error) {
	return entry(k.inner.Get(ctx, key))
}

func (k *kv) GetRevision(ctx context.Context, key string, revision uint64) (KeyValueEntry, error) {
	return entry(k.inner.GetRevision(ctx, key, revision))
}

func (k *kv) Put(ctx context.Context, key string, value []byte) (uint64, error) {
	rev, err := k.inner.Put(ctx, key, value)
	return rev, translate(err)
}

func (k *kv) PutString(ctx context.Context, key string, value string) (uint64, error) {
	return k.Put(ctx, key, []byte(value))
}

func (k *kv) Create(ctx context.Context, key string, value []byte, opts ...KVCreateOpt) (uint64, error) {
	var createOpts []natsio.KVCreateOpt
	for _, o := range opts {
		if err := o(&createOpts); err != nil {
			return 0, err
		}
	}
	rev, err := k.inner.Create(ctx, key, value, createOpts...)
	if live, exists := kvshim.ExistingRevision(err); exists {
		// nats.go's Create reports the refused publish, naming the key's
		// live revision, and adds "key exists".
		refusal := &APIError{Code: 400, ErrorCode: JSErrCodeStreamWrongLastSequence,
			Description: fmt.Sprintf("wrong last sequence: %d", live)}
		return 0, fmt.Errorf("nats: %w: key exists", refusal)
	}
	return rev, translate(err)
}

func (k *kv) Update(ctx context.Context, key string, value []byte, revision uint64) (uint64, error) {
	rev, err := k.inner.Update(ctx, key, value, revision)
	return rev, revisionMismatch(err)
}

// revisionMismatch is the error of a write that expected another
// revision: nats.go adds ErrKeyRevisionMismatch to the refused publish.
func revisionMismatch(err error) error {
	err = publishError(err)
	var apiErr *APIError
	if errors.As(err, &apiErr) && kvshim.IsWrongLastSequence(int(apiErr.ErrorCode)) {
		return fmt.Errorf("%w: %w", err, ErrKeyRevisionMismatch)
	}
	return err
}

func deleteOptions(opts []KVDeleteOpt) (*kvDeleteConfig, error) {
	var c kvDeleteConfig
	for _, o := range opts {
		if err := o(&c); err != nil {
			return nil, err
		}
	}
	return &c, nil
}

func (k *kv) Delete(ctx context.Context, key string, opts ...KVDeleteOpt) error {
	c, err := deleteOptions(opts)
	if err != nil {
		return err
	}
	if c.ttl {
		return ErrTTLOnDeleteNotSupported
	}
	return revisionMismatch(k.inner.Delete(ctx, key, c.opts...))
}

func (k *kv) Purge(ctx context.Context, key string, opts ...KVDeleteOpt) error {
	c, err := deleteOptions(opts)
	if err != nil {
		return err
	}
	return revisionMismatch(k.inner.Purge(ctx, key, c.opts...))
}

func (k *kv) PurgeDeletes(ctx context.Context, opts ...KVPurgeOpt) error {
	var purgeOpts []natsio.KVPurgeOpt
	for _, o := range opts {
		if err := o.configurePurge(&purgeOpts); err != nil {
			return err
		}
	}
	_, err := k.inner.PurgeDeletes(ctx, purgeOpts...)
	return translate(err)
}

func (k *kv) Status(ctx context.Context) (KeyValueStatus, error) {
	st, err := k.inner.Status(ctx)
	if err != nil {
		return nil, translate(err)
	}
	return newKVStatus(st), nil
}

// Keys lists the keys holding a value: ErrNoKeysFound when there are none,
// as nats.go.
func (k *kv) Keys(ctx context.Context, opts ...WatchOpt) ([]string, error) {
	keys, err := k.inner.Keys(ctx)
	if err != nil {
		return nil, translate(err)
	}
	if len(keys) == 0 {
		return nil, ErrNoKeysFound
	}
	return keys, nil
}

type keyLister struct{ inner *natsio.KeyLister }

func (l keyLister) Keys() <-chan string { return l.inner.Keys() }
func (l keyLister) Stop() error         { return translate(l.inner.Stop()) }

func (k *kv) ListKeys(ctx context.Context, opts ...WatchOpt) (KeyLister, error) {
	cfg, err := watchOptions(opts)
	if err != nil {
		return nil, err
	}
	l, err := k.inner.ListKeys(ctx, cfg.opts...)
	if err != nil {
		return nil, translate(err)
	}
	return keyLister{l}, nil
}

func (k *kv) ListKeysFiltered(ctx context.Context, filters ...string) (KeyLister, error) {
	l, err := k.inner.ListKeysFiltered(ctx, filters...)
	if err != nil {
		return nil, translate(err)
	}
	return keyLister{l}, nil
}

func (k *kv) History(ctx context.Context, key string, opts ...WatchOpt) ([]KeyValueEntry, error) {
	history, err := k.inner.History(ctx, key)
	if err != nil {
		return nil, translate(err)
	}
	out := make([]KeyValueEntry, len(history))
	for i := range history {
		out[i] = kvEntry{E: &history[i]}
	}
	return out, nil
}

type keyWatcher struct {
	inner   *natsio.KeyWatcher
	updates <-chan KeyValueEntry
}

func (w *keyWatcher) Updates() <-chan KeyValueEntry { return w.updates }
func (w *keyWatcher) Stop() error                   { w.inner.Stop(); return nil }

func watchKV(ctx context.Context, opts []WatchOpt, start func(context.Context, ...natsio.WatchOpt) (*natsio.KeyWatcher, error)) (KeyWatcher, error) {
	cfg, err := watchOptions(opts)
	if err != nil {
		return nil, err
	}
	inner, err := start(ctx, cfg.opts...)
	if err != nil {
		return nil, translate(err)
	}
	kvshim.StopWithContext(ctx, inner.Stop)
	toEntry := func(e *natsio.KeyValueEntry) KeyValueEntry { return kvEntry{E: e} }
	return &keyWatcher{inner, kvshim.Relay(inner.Updates(), 256, cfg.updatesOnly, toEntry, nil)}, nil
}

func (k *kv) Watch(ctx context.Context, keys string, opts ...WatchOpt) (KeyWatcher, error) {
	return watchKV(ctx, opts, func(ctx context.Context, o ...natsio.WatchOpt) (*natsio.KeyWatcher, error) {
		return k.inner.Watch(ctx, keys, o...)
	})
}

func (k *kv) WatchAll(ctx context.Context, opts ...WatchOpt) (KeyWatcher, error) {
	return watchKV(ctx, opts, k.inner.WatchAll)
}

func (k *kv) WatchFiltered(ctx context.Context, keys []string, opts ...WatchOpt) (KeyWatcher, error) {
	return watchKV(ctx, opts, func(ctx context.Context, o ...natsio.WatchOpt) (*natsio.KeyWatcher, error) {
		return k.inner.WatchFiltered(ctx, keys, o...)
	})
}
