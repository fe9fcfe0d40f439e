package jetstream

import (
	"encoding/json"
	"time"

	natsio "github.com/libnatsio/natsio/bindings/go"
	"github.com/libnatsio/natsio/bindings/go/internal/kvshim"
)

// The statuses implement nats.go's interfaces.
var (
	_ KeyValueStatus    = (*KeyValueBucketStatus)(nil)
	_ ObjectStoreStatus = (*ObjectBucketStatus)(nil)
)

// bucketStreamInfo is the facade's form of a bucket's backing stream info
// (nil when the binding has none).
func bucketStreamInfo(info *natsio.StreamInfo) *StreamInfo {
	if info == nil || len(info.Raw) == 0 {
		return nil
	}
	var out StreamInfo
	if err := json.Unmarshal(info.Raw, &out); err != nil {
		return nil
	}
	return &out
}

// KeyValueBucketStatus is a Key-Value bucket's status (KeyValue.Status,
// KeyValueStores), implementing KeyValueStatus.
type KeyValueBucketStatus struct {
	shim kvshim.Status
	info *StreamInfo
}

func newKVStatus(st *natsio.KeyValueStatus) *KeyValueBucketStatus {
	return &KeyValueBucketStatus{shim: kvshim.Status{S: st}, info: bucketStreamInfo(st.Info)}
}

// The KeyValueStatus methods: the bucket's name, values (revisions
// stored, markers included), history per key, TTL, backing store
// ("JetStream"), size, compression, limit marker TTL and metadata.

func (s *KeyValueBucketStatus) Bucket() string                { return s.shim.Bucket() }
func (s *KeyValueBucketStatus) Values() uint64                { return s.shim.Values() }
func (s *KeyValueBucketStatus) History() int64                { return s.shim.History() }
func (s *KeyValueBucketStatus) TTL() time.Duration            { return s.shim.TTL() }
func (s *KeyValueBucketStatus) BackingStore() string          { return s.shim.BackingStore() }
func (s *KeyValueBucketStatus) Bytes() uint64                 { return s.shim.Bytes() }
func (s *KeyValueBucketStatus) IsCompressed() bool            { return s.shim.IsCompressed() }
func (s *KeyValueBucketStatus) LimitMarkerTTL() time.Duration { return s.shim.S.LimitMarkerTTL }
func (s *KeyValueBucketStatus) Metadata() map[string]string   { return s.shim.S.Metadata }

// StreamInfo is the backing stream's info the status was read from.
func (s *KeyValueBucketStatus) StreamInfo() *StreamInfo { return s.info }

// Config is the bucket's configuration, as its backing stream holds it.
func (s *KeyValueBucketStatus) Config() KeyValueConfig {
	st := s.shim.S
	cfg := KeyValueConfig{
		Bucket: st.Bucket, Description: st.Description, History: uint8(st.History), TTL: st.TTL,
		Replicas: st.Replicas, Compression: st.IsCompressed, LimitMarkerTTL: st.LimitMarkerTTL, Metadata: st.Metadata,
	}
	if st.Storage == natsio.MemoryStorage {
		cfg.Storage = MemoryStorage
	}
	if s.info != nil {
		c := s.info.Config
		cfg.MaxValueSize, cfg.MaxBytes = c.MaxMsgSize, c.MaxBytes
		cfg.Placement, cfg.RePublish = c.Placement, c.RePublish
		cfg.Mirror, cfg.Sources = c.Mirror, c.Sources
	}
	return cfg
}

// ObjectBucketStatus is an Object Store bucket's status
// (ObjectStore.Status, ObjectStores), implementing ObjectStoreStatus.
type ObjectBucketStatus struct {
	shim kvshim.ObjStatus[StorageType]
	info *StreamInfo
}

func newObjStatus(st *natsio.ObjectStoreStatus) *ObjectBucketStatus {
	return &ObjectBucketStatus{shim: kvshim.ObjStatus[StorageType]{S: st}, info: bucketStreamInfo(st.Info)}
}

// The ObjectStoreStatus methods: the bucket's name, description, TTL,
// storage, replicas, sealed state, size, backing store ("JetStream"),
// metadata and compression.

func (s *ObjectBucketStatus) Bucket() string              { return s.shim.Bucket() }
func (s *ObjectBucketStatus) Description() string         { return s.shim.Description() }
func (s *ObjectBucketStatus) TTL() time.Duration          { return s.shim.TTL() }
func (s *ObjectBucketStatus) Storage() StorageType        { return s.shim.Storage() }
func (s *ObjectBucketStatus) Replicas() int               { return s.shim.Replicas() }
func (s *ObjectBucketStatus) Sealed() bool                { return s.shim.Sealed() }
func (s *ObjectBucketStatus) Size() uint64                { return s.shim.Size() }
func (s *ObjectBucketStatus) BackingStore() string        { return s.shim.BackingStore() }
func (s *ObjectBucketStatus) Metadata() map[string]string { return s.shim.Metadata() }
func (s *ObjectBucketStatus) IsCompressed() bool          { return s.shim.IsCompressed() }

// StreamInfo is the backing stream's info the status was read from.
func (s *ObjectBucketStatus) StreamInfo() *StreamInfo { return s.info }
