package jetstream

import (
	"context"
	"errors"
	"hash"
	"io"
	"time"

	natsio "github.com/libnatsio/natsio/bindings/go"
	"github.com/libnatsio/natsio/bindings/go/internal/kvshim"
	"github.com/libnatsio/natsio/bindings/go/nats"
)

// ObjectStoreManager creates, binds and deletes Object Store buckets.
type ObjectStoreManager interface {
	ObjectStore(ctx context.Context, bucket string) (ObjectStore, error)
	CreateObjectStore(ctx context.Context, cfg ObjectStoreConfig) (ObjectStore, error)
	UpdateObjectStore(ctx context.Context, cfg ObjectStoreConfig) (ObjectStore, error)
	CreateOrUpdateObjectStore(ctx context.Context, cfg ObjectStoreConfig) (ObjectStore, error)
	DeleteObjectStore(ctx context.Context, bucket string) error
	ObjectStoreNames(ctx context.Context) ObjectStoreNamesLister
	ObjectStores(ctx context.Context) ObjectStoresLister
}

// ObjectStoreNamesLister yields the buckets' names on Name, then Error.
type ObjectStoreNamesLister interface {
	Name() <-chan string
	Error() error
}

// ObjectStoresLister yields the buckets' status on Status, then Error.
type ObjectStoresLister interface {
	Status() <-chan ObjectStoreStatus
	Error() error
}

func (js *jetStream) ObjectStoreNames(ctx context.Context) ObjectStoreNamesLister {
	names, err := js.inner.ObjectStoreNames(ctx)
	return newLister(names, translate(err))
}

func (js *jetStream) ObjectStores(ctx context.Context) ObjectStoresLister {
	stores, err := js.inner.ObjectStores(ctx)
	out := make([]ObjectStoreStatus, len(stores))
	for i, st := range stores {
		out[i] = newObjStatus(st)
	}
	return newLister(out, translate(err))
}

// ObjectStoreConfig is a bucket's configuration, with nats.go's field names.
type ObjectStoreConfig struct {
	Bucket      string            `json:"bucket"`
	Description string            `json:"description,omitempty"`
	TTL         time.Duration     `json:"max_age,omitempty"`
	MaxBytes    int64             `json:"max_bytes,omitempty"`
	Storage     StorageType       `json:"storage,omitempty"`
	Replicas    int               `json:"num_replicas,omitempty"`
	Placement   *Placement        `json:"placement,omitempty"`
	Compression bool              `json:"compression,omitempty"`
	Metadata    map[string]string `json:"metadata,omitempty"`
}

func (c ObjectStoreConfig) binding() natsio.ObjectStoreConfig {
	cfg := kvshim.ObjConfig{
		Bucket: c.Bucket, Description: c.Description, TTL: c.TTL, MaxBytes: c.MaxBytes,
		Memory: c.Storage == MemoryStorage, Replicas: c.Replicas, Compression: c.Compression, Metadata: c.Metadata,
	}
	if c.Placement != nil {
		cfg.Placement = &natsio.Placement{Cluster: c.Placement.Cluster, Tags: c.Placement.Tags}
	}
	return cfg.Binding()
}

// The object types are the binding's: they have nats.go's fields (and
// ObjectInfo.Revision, which nats.go's lacks; not in the JSON).
type (
	ObjectMeta        = natsio.ObjectMeta
	ObjectMetaOptions = natsio.ObjectMetaOptions
	ObjectLink        = natsio.ObjectLink
	ObjectInfo        = natsio.ObjectInfo
)

// ObjectStore is a bound bucket.
type ObjectStore interface {
	Put(ctx context.Context, obj ObjectMeta, reader io.Reader) (*ObjectInfo, error)
	PutBytes(ctx context.Context, name string, data []byte) (*ObjectInfo, error)
	PutString(ctx context.Context, name string, data string) (*ObjectInfo, error)
	PutFile(ctx context.Context, file string) (*ObjectInfo, error)
	Get(ctx context.Context, name string, opts ...GetObjectOpt) (ObjectResult, error)
	GetBytes(ctx context.Context, name string, opts ...GetObjectOpt) ([]byte, error)
	GetString(ctx context.Context, name string, opts ...GetObjectOpt) (string, error)
	GetFile(ctx context.Context, name, file string, opts ...GetObjectOpt) error
	GetInfo(ctx context.Context, name string, opts ...GetObjectInfoOpt) (*ObjectInfo, error)
	UpdateMeta(ctx context.Context, name string, meta ObjectMeta) error
	Delete(ctx context.Context, name string) error
	AddLink(ctx context.Context, name string, obj *ObjectInfo) (*ObjectInfo, error)
	AddBucketLink(ctx context.Context, name string, bucket ObjectStore) (*ObjectInfo, error)
	Seal(ctx context.Context) error
	Watch(ctx context.Context, opts ...WatchOpt) (ObjectWatcher, error)
	List(ctx context.Context, opts ...ListObjectsOpt) ([]*ObjectInfo, error)
	Status(ctx context.Context) (ObjectStoreStatus, error)
}

// ObjectResult reads an object's content.
type ObjectResult interface {
	io.ReadCloser
	Info() (*ObjectInfo, error)
	Error() error
}

// ObjectWatcher is a running watch: infos on Updates (a nil info marks the
// end of the current objects), until Stop.
type ObjectWatcher interface {
	Updates() <-chan *ObjectInfo
	Stop() error
}

// ObjectStoreStatus is a bucket's state.
type ObjectStoreStatus interface {
	Bucket() string
	Description() string
	TTL() time.Duration
	Storage() StorageType
	Replicas() int
	Sealed() bool
	Size() uint64
	BackingStore() string
	Metadata() map[string]string
	IsCompressed() bool
}

type GetObjectOpt func(*[]natsio.GetObjectOpt) error
type GetObjectInfoOpt func(*[]natsio.GetObjectInfoOpt) error
type ListObjectsOpt func(*[]natsio.ListObjectsOpt) error

func GetObjectShowDeleted() GetObjectOpt {
	return func(o *[]natsio.GetObjectOpt) error { *o = append(*o, natsio.GetObjectShowDeleted()); return nil }
}

func GetObjectInfoShowDeleted() GetObjectInfoOpt {
	return func(o *[]natsio.GetObjectInfoOpt) error {
		*o = append(*o, natsio.GetObjectInfoShowDeleted())
		return nil
	}
}

func ListObjectsShowDeleted() ListObjectsOpt {
	return func(o *[]natsio.ListObjectsOpt) error { *o = append(*o, natsio.ListObjectsShowDeleted()); return nil }
}

func collect[T any](opts []func(*[]T) error) ([]T, error) {
	var out []T
	for _, o := range opts {
		if err := o(&out); err != nil {
			return nil, err
		}
	}
	return out, nil
}

type objStore struct{ inner *natsio.ObjectStore }

func bindObjectStore(inner *natsio.ObjectStore, err error) (ObjectStore, error) {
	if err != nil {
		return nil, translate(err)
	}
	return &objStore{inner}, nil
}

func (js *jetStream) ObjectStore(ctx context.Context, bucket string) (ObjectStore, error) {
	return bindObjectStore(js.inner.ObjectStore(ctx, bucket))
}

func (js *jetStream) CreateObjectStore(ctx context.Context, cfg ObjectStoreConfig) (ObjectStore, error) {
	return bindObjectStore(js.inner.CreateObjectStore(ctx, cfg.binding()))
}

func (js *jetStream) UpdateObjectStore(ctx context.Context, cfg ObjectStoreConfig) (ObjectStore, error) {
	return bindObjectStore(js.inner.UpdateObjectStore(ctx, cfg.binding()))
}

func (js *jetStream) CreateOrUpdateObjectStore(ctx context.Context, cfg ObjectStoreConfig) (ObjectStore, error) {
	return bindObjectStore(js.inner.CreateOrUpdateObjectStore(ctx, cfg.binding()))
}

func (js *jetStream) DeleteObjectStore(ctx context.Context, bucket string) error {
	return translate(js.inner.DeleteObjectStore(ctx, bucket))
}

func info(i *ObjectInfo, err error) (*ObjectInfo, error) { return i, translate(err) }

// Put stores an object; ErrLinkNotAllowed when meta names a link (AddLink
// makes links).
func (o *objStore) Put(ctx context.Context, meta ObjectMeta, r io.Reader) (*ObjectInfo, error) {
	if meta.Opts != nil && meta.Opts.Link != nil {
		return nil, ErrLinkNotAllowed
	}
	return info(o.inner.Put(ctx, meta, r))
}

func (o *objStore) PutBytes(ctx context.Context, name string, data []byte) (*ObjectInfo, error) {
	return info(o.inner.PutBytes(ctx, name, data))
}

func (o *objStore) PutString(ctx context.Context, name string, data string) (*ObjectInfo, error) {
	return info(o.inner.PutString(ctx, name, data))
}

func (o *objStore) Get(ctx context.Context, name string, opts ...GetObjectOpt) (ObjectResult, error) {
	getOpts, err := collect(convertOpts(opts))
	if err != nil {
		return nil, err
	}
	r, err := o.inner.Get(ctx, name, getOpts...)
	if errors.Is(err, natsio.ErrObjectLink) {
		// Links to links cannot be made: this one leads to a bucket.
		return nil, ErrCantGetBucket
	}
	if err != nil {
		return nil, translate(err)
	}
	return kvshim.Result{R: r, Translate: translate}, nil
}

func convertOpts[T any, O ~func(*[]T) error](opts []O) []func(*[]T) error {
	out := make([]func(*[]T) error, len(opts))
	for i, o := range opts {
		out[i] = o
	}
	return out
}

// PutFile puts the content of file under the name file, as nats.go's.
func (o *objStore) PutFile(ctx context.Context, file string) (*ObjectInfo, error) {
	return kvshim.PutFile(file, func(name string, r io.Reader) (*ObjectInfo, error) {
		return o.Put(ctx, ObjectMeta{Name: name}, r)
	})
}

// GetFile writes the object name into file, as nats.go's.
func (o *objStore) GetFile(ctx context.Context, name, file string, opts ...GetObjectOpt) error {
	return kvshim.GetFile(file, func() (io.ReadCloser, error) { return o.Get(ctx, name, opts...) })
}

func (o *objStore) GetBytes(ctx context.Context, name string, opts ...GetObjectOpt) ([]byte, error) {
	getOpts, err := collect(convertOpts(opts))
	if err != nil {
		return nil, err
	}
	b, err := o.inner.GetBytes(ctx, name, getOpts...)
	return b, translate(err)
}

func (o *objStore) GetString(ctx context.Context, name string, opts ...GetObjectOpt) (string, error) {
	b, err := o.GetBytes(ctx, name, opts...)
	return string(b), err
}

func (o *objStore) GetInfo(ctx context.Context, name string, opts ...GetObjectInfoOpt) (*ObjectInfo, error) {
	if name == "" {
		return nil, ErrNameRequired
	}
	infoOpts, err := collect(convertOpts(opts))
	if err != nil {
		return nil, err
	}
	return info(o.inner.GetInfo(ctx, name, infoOpts...))
}

// UpdateMeta changes an object's name and description;
// ErrUpdateMetaDeleted when there is no such live object.
func (o *objStore) UpdateMeta(ctx context.Context, name string, meta ObjectMeta) error {
	err := o.inner.UpdateMeta(ctx, name, meta)
	if errors.Is(err, natsio.ErrObjectNotFound) && !errors.Is(err, natsio.ErrBucketNotFound) {
		return ErrUpdateMetaDeleted
	}
	return translate(err)
}

func (o *objStore) Delete(ctx context.Context, name string) error {
	return translate(o.inner.Delete(ctx, name))
}

// AddLink stores name as a link to obj: ErrNameRequired, ErrObjectRequired
// (no obj or no name), ErrNoLinkToDeleted, ErrNoLinkToLink.
func (o *objStore) AddLink(ctx context.Context, name string, obj *ObjectInfo) (*ObjectInfo, error) {
	switch {
	case name == "":
		return nil, ErrNameRequired
	case obj == nil || obj.Name == "":
		return nil, ErrObjectRequired
	case obj.Deleted:
		return nil, ErrNoLinkToDeleted
	case obj.Opts != nil && obj.Opts.Link != nil:
		return nil, ErrNoLinkToLink
	}
	return info(o.inner.AddLink(ctx, name, obj))
}

// AddBucketLink stores name as a link to bucket: ErrNameRequired,
// ErrBucketRequired (nil), ErrBucketMalformed (not this package's).
func (o *objStore) AddBucketLink(ctx context.Context, name string, bucket ObjectStore) (*ObjectInfo, error) {
	if name == "" {
		return nil, ErrNameRequired
	}
	if bucket == nil {
		return nil, ErrBucketRequired
	}
	target, ok := bucket.(*objStore)
	if !ok {
		return nil, ErrBucketMalformed
	}
	return info(o.inner.AddBucketLink(ctx, name, target.inner))
}

func (o *objStore) Seal(ctx context.Context) error { return translate(o.inner.Seal(ctx)) }

// List lists the bucket's objects: ErrNoObjectsFound when there are none,
// as nats.go.
func (o *objStore) List(ctx context.Context, opts ...ListObjectsOpt) ([]*ObjectInfo, error) {
	listOpts, err := collect(convertOpts(opts))
	if err != nil {
		return nil, err
	}
	infos, err := o.inner.List(ctx, listOpts...)
	if err != nil {
		return nil, translate(err)
	}
	if len(infos) == 0 {
		return nil, ErrNoObjectsFound
	}
	return infos, nil
}

func (o *objStore) Status(ctx context.Context) (ObjectStoreStatus, error) {
	st, err := o.inner.Status(ctx)
	if err != nil {
		return nil, translate(err)
	}
	return newObjStatus(st), nil
}

type objWatcher struct {
	inner   *natsio.ObjectWatcher
	updates <-chan *ObjectInfo
}

func (w *objWatcher) Updates() <-chan *ObjectInfo { return w.updates }
func (w *objWatcher) Stop() error                 { w.inner.Stop(); return nil }

func (o *objStore) Watch(ctx context.Context, opts ...WatchOpt) (ObjectWatcher, error) {
	cfg, err := watchOptions(opts)
	if err != nil {
		return nil, err
	}
	inner, err := o.inner.Watch(ctx, cfg.opts...)
	if err != nil {
		return nil, translate(err)
	}
	kvshim.StopWithContext(ctx, inner.Stop)
	same := func(i *ObjectInfo) *ObjectInfo { return i }
	return &objWatcher{inner, kvshim.Relay(inner.Updates(), 256, cfg.updatesOnly, same, nil)}, nil
}

// GetObjectDigestValue is the digest text of an object whose bytes went
// through data (a SHA-256 hash): ObjectInfo.Digest's form.
func GetObjectDigestValue(data hash.Hash) string { return nats.GetObjectDigestValue(data) }

// DecodeObjectDigest is the hash an ObjectInfo.Digest text holds;
// ErrInvalidDigestFormat when it is not "<algorithm>=<base64>".
func DecodeObjectDigest(data string) ([]byte, error) {
	sum, err := nats.DecodeObjectDigest(data)
	if errors.Is(err, nats.ErrInvalidDigestFormat) {
		return nil, ErrInvalidDigestFormat
	}
	return sum, err
}
