package nats

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"time"

	natsio "github.com/libnatsio/natsio/bindings/go"
	"github.com/libnatsio/natsio/bindings/go/internal/kvshim"
)

// ObjectStoreManager is the Object Store half of the legacy context's
// bucket management: nats.go's methods, without contexts.
type ObjectStoreManager interface {
	ObjectStore(bucket string) (ObjectStore, error)
	CreateObjectStore(cfg *ObjectStoreConfig) (ObjectStore, error)
	DeleteObjectStore(bucket string) error
	ObjectStoreNames(opts ...ObjectOpt) <-chan string
	ObjectStores(opts ...ObjectOpt) <-chan ObjectStoreStatus
}

// ObjectStore is a bound bucket of the legacy API.
type ObjectStore interface {
	Put(obj *ObjectMeta, reader io.Reader, opts ...ObjectOpt) (*ObjectInfo, error)
	Get(name string, opts ...GetObjectOpt) (ObjectResult, error)
	PutBytes(name string, data []byte, opts ...ObjectOpt) (*ObjectInfo, error)
	GetBytes(name string, opts ...GetObjectOpt) ([]byte, error)
	PutString(name string, data string, opts ...ObjectOpt) (*ObjectInfo, error)
	GetString(name string, opts ...GetObjectOpt) (string, error)
	PutFile(file string, opts ...ObjectOpt) (*ObjectInfo, error)
	GetFile(name, file string, opts ...GetObjectOpt) error
	GetInfo(name string, opts ...GetObjectInfoOpt) (*ObjectInfo, error)
	UpdateMeta(name string, meta *ObjectMeta) error
	Delete(name string) error
	AddLink(name string, obj *ObjectInfo) (*ObjectInfo, error)
	AddBucketLink(name string, bucket ObjectStore) (*ObjectInfo, error)
	Seal() error
	Watch(opts ...WatchOpt) (ObjectWatcher, error)
	List(opts ...ListObjectsOpt) ([]*ObjectInfo, error)
	Status() (ObjectStoreStatus, error)
}

// ObjectWatcher is a running watch: infos on Updates, a nil info after the
// current objects (none for UpdatesOnly), until Stop closes it.
type ObjectWatcher interface {
	Updates() <-chan *ObjectInfo
	Stop() error
}

// ObjectResult reads an object's content.
type ObjectResult interface {
	io.ReadCloser
	Info() (*ObjectInfo, error)
	Error() error
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

// The object types are the binding's: they have nats.go's fields
// (Headers is this package's Header), and ObjectInfo.Revision, which
// nats.go's lacks (not in the JSON).
type (
	ObjectMeta        = natsio.ObjectMeta
	ObjectMetaOptions = natsio.ObjectMetaOptions
	ObjectLink        = natsio.ObjectLink
	ObjectInfo        = natsio.ObjectInfo
)

// ObjectStoreConfig is a bucket's configuration, with nats.go's legacy
// field names.
type ObjectStoreConfig struct {
	Bucket      string            `json:"bucket"`
	Description string            `json:"description,omitempty"`
	TTL         time.Duration     `json:"max_age,omitempty"`
	MaxBytes    int64             `json:"max_bytes,omitempty"`
	Storage     StorageType       `json:"storage,omitempty"`
	Replicas    int               `json:"num_replicas,omitempty"`
	Placement   *Placement        `json:"placement,omitempty"`
	Metadata    map[string]string `json:"metadata,omitempty"`
	Compression bool              `json:"compression,omitempty"`
}

// The Object Store errors, with nats.go's texts.
var (
	ErrObjectConfigRequired = errors.New("nats: object-store config required")
	ErrBadObjectMeta        = errors.New("nats: object-store meta information invalid")
	ErrObjectNotFound       = errors.New("nats: object not found")
	ErrInvalidStoreName     = errors.New("nats: invalid object-store name")
	ErrDigestMismatch       = errors.New("nats: received a corrupt object, digests do not match")
	ErrInvalidDigestFormat  = errors.New("nats: object digest hash has invalid format")
	ErrNoObjectsFound       = errors.New("nats: no objects found")
	ErrObjectAlreadyExists  = errors.New("nats: an object already exists with that name")
	ErrNameRequired         = errors.New("nats: name is required")
	ErrNeeds262             = errors.New("nats: object-store requires at least server version 2.6.2")
	ErrLinkNotAllowed       = errors.New("nats: link cannot be set when putting the object in bucket")
	ErrObjectRequired       = errors.New("nats: object required")
	ErrNoLinkToDeleted      = errors.New("nats: not allowed to link to a deleted object")
	ErrNoLinkToLink         = errors.New("nats: not allowed to link to another link")
	ErrCantGetBucket        = errors.New("nats: invalid Get, object is a link to a bucket")
	ErrBucketRequired       = errors.New("nats: bucket required")
	ErrBucketMalformed      = errors.New("nats: bucket malformed")
	ErrUpdateMetaDeleted    = errors.New("nats: cannot update meta for a deleted object")
)

// ---- options

// ObjectOpt configures a put and the bucket listings (nats.Context).
type ObjectOpt interface{ configureObject(*objOpts) error }

type objOpts struct{ ctx context.Context }

func (c ContextOpt) configureObject(o *objOpts) error { o.ctx = c.Context; return nil }

func objectOptions(opts []ObjectOpt) (objOpts, error) {
	var o objOpts
	for _, opt := range opts {
		if opt != nil {
			if err := opt.configureObject(&o); err != nil {
				return o, err
			}
		}
	}
	return o, nil
}

// shownOpts are the options of Get, GetInfo and List: a context and
// whether deleted objects are shown.
type shownOpts struct {
	ctx         context.Context
	showDeleted bool
}

// GetObjectOpt configures Get, GetBytes, GetString and GetFile.
type GetObjectOpt interface{ configureGetObject(*shownOpts) error }

// GetObjectInfoOpt configures GetInfo.
type GetObjectInfoOpt interface{ configureGetInfo(*shownOpts) error }

// ListObjectsOpt configures List.
type ListObjectsOpt interface{ configureListObjects(*shownOpts) error }

type showDeleted struct{}

func (showDeleted) configureGetObject(o *shownOpts) error   { o.showDeleted = true; return nil }
func (showDeleted) configureGetInfo(o *shownOpts) error     { o.showDeleted = true; return nil }
func (showDeleted) configureListObjects(o *shownOpts) error { o.showDeleted = true; return nil }

func (c ContextOpt) configureGetObject(o *shownOpts) error   { o.ctx = c.Context; return nil }
func (c ContextOpt) configureGetInfo(o *shownOpts) error     { o.ctx = c.Context; return nil }
func (c ContextOpt) configureListObjects(o *shownOpts) error { o.ctx = c.Context; return nil }

// GetObjectShowDeleted makes Get return a deleted object (empty).
func GetObjectShowDeleted() GetObjectOpt { return showDeleted{} }

// GetObjectInfoShowDeleted makes GetInfo return a deleted object's info.
func GetObjectInfoShowDeleted() GetObjectInfoOpt { return showDeleted{} }

// ListObjectsShowDeleted makes List return deleted objects too.
func ListObjectsShowDeleted() ListObjectsOpt { return showDeleted{} }

func shown[O any](opts []O, configure func(O, *shownOpts) error) (shownOpts, error) {
	var o shownOpts
	for _, opt := range opts {
		if any(opt) == nil {
			continue
		}
		if err := configure(opt, &o); err != nil {
			return o, err
		}
	}
	return o, nil
}

// ---- the manager

type objBucket struct {
	js    *jsContext
	inner *natsio.ObjectStore
}

func (js *jsContext) CreateObjectStore(cfg *ObjectStoreConfig) (ObjectStore, error) {
	if cfg == nil {
		return nil, ErrObjectConfigRequired
	}
	if !validBucket(cfg.Bucket) {
		return nil, ErrInvalidStoreName
	}
	c := kvshim.ObjConfig{
		Bucket: cfg.Bucket, Description: cfg.Description, TTL: cfg.TTL, MaxBytes: cfg.MaxBytes,
		Memory: cfg.Storage == MemoryStorage, Replicas: cfg.Replicas, Compression: cfg.Compression,
		Metadata: cfg.Metadata,
	}
	if cfg.Placement != nil {
		c.Placement = &natsio.Placement{Cluster: cfg.Placement.Cluster, Tags: cfg.Placement.Tags}
	}
	ctx, cancel := js.context(nil)
	defer cancel()
	inner, err := js.inner.CreateObjectStore(ctx, c.Binding())
	if err != nil {
		return nil, kvTranslate(err)
	}
	return &objBucket{js, inner}, nil
}

// ObjectStore binds the bucket (ErrStreamNotFound when there is none, as
// nats.go's).
func (js *jsContext) ObjectStore(bucket string) (ObjectStore, error) {
	if !validBucket(bucket) {
		return nil, ErrInvalidStoreName
	}
	ctx, cancel := js.context(nil)
	defer cancel()
	inner, err := js.inner.ObjectStore(ctx, bucket)
	if err != nil {
		return nil, kvTranslate(err)
	}
	return &objBucket{js, inner}, nil
}

// ErrInvalidStreamName is DeleteObjectStore's error for a bucket name
// with a dot or a space (nats.go checks the stream's name).
var ErrInvalidStreamName JetStreamError = &jsError{message: "invalid stream name"}

func (js *jsContext) DeleteObjectStore(bucket string) error {
	if strings.ContainsAny(bucket, ". ") {
		return ErrInvalidStreamName
	}
	ctx, cancel := js.context(nil)
	defer cancel()
	return kvTranslate(js.inner.DeleteObjectStore(ctx, bucket))
}

// ObjectStoreNames lists the buckets by their streams' names ("OBJ_"
// and the bucket's), as nats.go's legacy call does.
func (js *jsContext) ObjectStoreNames(opts ...ObjectOpt) <-chan string {
	o, err := objectOptions(opts)
	if err != nil {
		return nil
	}
	ctx, cancel := js.context(o.ctx)
	names, _ := js.inner.ObjectStoreNames(ctx)
	for i, n := range names {
		names[i] = "OBJ_" + n
	}
	return listed(ctx, cancel, names)
}

func (js *jsContext) ObjectStores(opts ...ObjectOpt) <-chan ObjectStoreStatus {
	o, err := objectOptions(opts)
	if err != nil {
		return nil
	}
	ctx, cancel := js.context(o.ctx)
	stores, _ := js.inner.ObjectStores(ctx)
	out := make([]ObjectStoreStatus, 0, len(stores))
	for _, st := range stores {
		out = append(out, &ObjectBucketStatus{kvshim.ObjStatus[StorageType]{S: st}})
	}
	return listed(ctx, cancel, out)
}

// ObjectBucketStatus is the ObjectStoreStatus the legacy API returns.
type ObjectBucketStatus struct {
	kvshim.ObjStatus[StorageType]
}

// StreamInfo is the bucket's stream's info.
func (s *ObjectBucketStatus) StreamInfo() *StreamInfo {
	var out StreamInfo
	if s.S.Info != nil {
		json.Unmarshal(s.S.Info.Raw, &out)
	}
	return &out
}

// ---- the bucket

func (obs *objBucket) Status() (ObjectStoreStatus, error) {
	ctx, cancel := obs.js.context(nil)
	defer cancel()
	st, err := obs.inner.Status(ctx)
	if err != nil {
		return nil, kvTranslate(err)
	}
	return &ObjectBucketStatus{kvshim.ObjStatus[StorageType]{S: st}}, nil
}

func (obs *objBucket) Seal() error {
	ctx, cancel := obs.js.context(nil)
	defer cancel()
	return kvTranslate(obs.inner.Seal(ctx))
}

// Put stores the reader's content as meta.Name (meta.Opts gets the
// default chunk size when it has none, as nats.go's).
func (obs *objBucket) Put(meta *ObjectMeta, r io.Reader, opts ...ObjectOpt) (*ObjectInfo, error) {
	if meta == nil || meta.Name == "" {
		return nil, ErrBadObjectMeta
	}
	if meta.Opts == nil {
		meta.Opts = &ObjectMetaOptions{ChunkSize: 128 * 1024}
	} else if meta.Opts.Link != nil {
		return nil, ErrLinkNotAllowed
	} else if meta.Opts.ChunkSize == 0 {
		meta.Opts.ChunkSize = 128 * 1024
	}
	o, err := objectOptions(opts)
	if err != nil {
		return nil, err
	}
	ctx := o.ctx
	if ctx == nil {
		// The whole put, however long: nats.go bounds each publish only.
		ctx = context.Background()
	}
	if r == nil {
		r = bytes.NewReader(nil)
	}
	info, err := obs.inner.Put(ctx, *meta, r)
	return info, kvTranslate(err)
}

func (obs *objBucket) PutBytes(name string, data []byte, opts ...ObjectOpt) (*ObjectInfo, error) {
	return obs.Put(&ObjectMeta{Name: name}, bytes.NewReader(data), opts...)
}

func (obs *objBucket) PutString(name string, data string, opts ...ObjectOpt) (*ObjectInfo, error) {
	return obs.Put(&ObjectMeta{Name: name}, strings.NewReader(data), opts...)
}

func (obs *objBucket) PutFile(file string, opts ...ObjectOpt) (*ObjectInfo, error) {
	return kvshim.PutFile(file, func(name string, r io.Reader) (*ObjectInfo, error) {
		return obs.Put(&ObjectMeta{Name: name}, r, opts...)
	})
}

// Get opens the object for reading; through a link to an object, its
// target (ErrCantGetBucket for a link to a bucket).
func (obs *objBucket) Get(name string, opts ...GetObjectOpt) (ObjectResult, error) {
	o, err := shown(opts, GetObjectOpt.configureGetObject)
	if err != nil {
		return nil, err
	}
	ctx := o.ctx
	if ctx == nil {
		ctx = context.Background()
	}
	var getOpts []natsio.GetObjectOpt
	if o.showDeleted {
		getOpts = append(getOpts, natsio.GetObjectShowDeleted())
	}
	r, err := obs.inner.Get(ctx, name, getOpts...)
	if err != nil {
		if errors.Is(err, natsio.ErrObjectLink) {
			return nil, obs.linkError(name)
		}
		return nil, kvTranslate(err)
	}
	return kvshim.Result{R: r, Translate: kvTranslate}, nil
}

// linkError is why Get refused the link name: nats.go's error for a link
// to a bucket.
func (obs *objBucket) linkError(name string) error {
	info, err := obs.GetInfo(name)
	if err != nil {
		return err
	}
	if info.IsLink() && info.Opts.Link.Name == "" {
		return ErrCantGetBucket
	}
	return ErrBadObjectMeta
}

func (obs *objBucket) GetBytes(name string, opts ...GetObjectOpt) ([]byte, error) {
	r, err := obs.Get(name, opts...)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	var b bytes.Buffer
	if _, err := b.ReadFrom(r); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

func (obs *objBucket) GetString(name string, opts ...GetObjectOpt) (string, error) {
	b, err := obs.GetBytes(name, opts...)
	return string(b), err
}

func (obs *objBucket) GetFile(name, file string, opts ...GetObjectOpt) error {
	return kvshim.GetFile(file, func() (io.ReadCloser, error) { return obs.Get(name, opts...) })
}

func (obs *objBucket) GetInfo(name string, opts ...GetObjectInfoOpt) (*ObjectInfo, error) {
	if name == "" {
		return nil, ErrNameRequired
	}
	o, err := shown(opts, GetObjectInfoOpt.configureGetInfo)
	if err != nil {
		return nil, err
	}
	ctx, cancel := obs.js.context(o.ctx)
	defer cancel()
	var infoOpts []natsio.GetObjectInfoOpt
	if o.showDeleted {
		infoOpts = append(infoOpts, natsio.GetObjectInfoShowDeleted())
	}
	info, err := obs.inner.GetInfo(ctx, name, infoOpts...)
	if err != nil {
		return nil, kvTranslate(err)
	}
	return info, nil
}

// UpdateMeta changes the object's name, description, headers and
// metadata (ErrUpdateMetaDeleted when it is not there, as nats.go's).
func (obs *objBucket) UpdateMeta(name string, meta *ObjectMeta) error {
	if meta == nil {
		return ErrBadObjectMeta
	}
	ctx, cancel := obs.js.context(nil)
	defer cancel()
	err := obs.inner.UpdateMeta(ctx, name, *meta)
	if errors.Is(err, natsio.ErrObjectNotFound) {
		return ErrUpdateMetaDeleted
	}
	return kvTranslate(err)
}

func (obs *objBucket) Delete(name string) error {
	ctx, cancel := obs.js.context(nil)
	defer cancel()
	return kvTranslate(obs.inner.Delete(ctx, name))
}

// AddLink links name to obj, an object (not a link, not deleted).
func (obs *objBucket) AddLink(name string, obj *ObjectInfo) (*ObjectInfo, error) {
	switch {
	case name == "":
		return nil, ErrNameRequired
	case obj == nil || obj.Name == "":
		return nil, ErrObjectRequired
	case obj.Deleted:
		return nil, ErrNoLinkToDeleted
	case obj.IsLink():
		return nil, ErrNoLinkToLink
	}
	ctx, cancel := obs.js.context(nil)
	defer cancel()
	info, err := obs.inner.AddLink(ctx, name, obj)
	return info, kvTranslate(err)
}

// AddBucketLink links name to the whole bucket.
func (obs *objBucket) AddBucketLink(name string, bucket ObjectStore) (*ObjectInfo, error) {
	if name == "" {
		return nil, ErrNameRequired
	}
	if bucket == nil {
		return nil, ErrBucketRequired
	}
	target, ok := bucket.(*objBucket)
	if !ok {
		return nil, ErrBucketMalformed
	}
	ctx, cancel := obs.js.context(nil)
	defer cancel()
	info, err := obs.inner.AddBucketLink(ctx, name, target.inner)
	return info, kvTranslate(err)
}

// List lists the objects (ErrNoObjectsFound when there are none).
func (obs *objBucket) List(opts ...ListObjectsOpt) ([]*ObjectInfo, error) {
	o, err := shown(opts, ListObjectsOpt.configureListObjects)
	if err != nil {
		return nil, err
	}
	ctx, cancel := obs.js.context(o.ctx)
	defer cancel()
	var listOpts []natsio.ListObjectsOpt
	if o.showDeleted {
		listOpts = append(listOpts, natsio.ListObjectsShowDeleted())
	}
	infos, err := obs.inner.List(ctx, listOpts...)
	if err != nil {
		if o.ctx != nil && o.ctx.Err() != nil {
			return nil, o.ctx.Err()
		}
		return nil, kvTranslate(err)
	}
	if len(infos) == 0 {
		return nil, ErrNoObjectsFound
	}
	return infos, nil
}

type objWatcher struct {
	inner   *natsio.ObjectWatcher
	updates <-chan *ObjectInfo
}

func (w *objWatcher) Updates() <-chan *ObjectInfo { return w.updates }
func (w *objWatcher) Stop() error                 { w.inner.Stop(); return nil }

// Watch watches the bucket's objects (IncludeHistory, IgnoreDeletes,
// UpdatesOnly).
func (obs *objBucket) Watch(opts ...WatchOpt) (ObjectWatcher, error) {
	o, err := watchOptions(opts)
	if err != nil {
		return nil, err
	}
	ctx, cancel := obs.js.context(o.ctx)
	defer cancel()
	inner, err := obs.inner.Watch(ctx, o.binding()...)
	if err != nil {
		return nil, kvTranslate(err)
	}
	kvshim.StopWithContext(o.ctx, inner.Stop)
	same := func(i *ObjectInfo) *ObjectInfo { return i }
	return &objWatcher{inner, kvshim.Relay(inner.Updates(), 32, o.updatesOnly, same, nil)}, nil
}
