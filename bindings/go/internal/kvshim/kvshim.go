// Package kvshim holds what nats.go's two Key-Value and Object Store
// shapes have in common over the natsio binding: the legacy context's
// (package nats, nc.JetStream()) and the jetstream package's. jetstream
// imports nats, so neither can hold it for the other. Each facade keeps
// its own error sentinels and option types; the conversions, the watch
// plumbing and the file helpers live here once.
package kvshim

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"reflect"
	"time"

	natsio "github.com/libnatsio/natsio/bindings/go"
)

// ---- Key-Value

// KVConfig is the part of a bucket's configuration both facades spell
// alike; Memory is StorageType MemoryStorage (both facades' 1).
type KVConfig struct {
	Bucket, Description string
	MaxValueSize        int32
	History             uint8
	TTL                 time.Duration
	MaxBytes            int64
	Memory              bool
	Replicas            int
	Compression         bool
	LimitMarkerTTL      time.Duration
	Metadata            map[string]string
	// Mirror and Sources are the binding's (see Source): the core makes
	// them what nats.go's CreateKeyValue makes of them.
	Mirror  *natsio.StreamSource
	Sources []*natsio.StreamSource
	// Extra are further stream fields by their JSON names (placement,
	// republish), left out when nil.
	Extra map[string]any
}

// ErrDomainAndExternal is nats.go's error (both facades') for a
// StreamSource with both a Domain and an External.
var ErrDomainAndExternal = errors.New("nats: domain and external are both set")

// Source is a facade's StreamSource as the binding's (a copy: the caller's
// is left as it is). The JSON fields are spelt alike; the Domain, which
// the facades keep out of their JSON, is passed on through domain for the
// core to turn into External (refused here with nats.go's error when
// External is set too). nil stays nil.
func Source[S any](ss *S, domain func(*S) string) (*natsio.StreamSource, error) {
	if ss == nil {
		return nil, nil
	}
	b, err := json.Marshal(ss)
	if err != nil {
		return nil, err
	}
	out := &natsio.StreamSource{}
	if err := json.Unmarshal(b, out); err != nil {
		return nil, err
	}
	if out.Domain = domain(ss); out.Domain != "" && out.External != nil {
		return nil, ErrDomainAndExternal
	}
	return out, nil
}

// Sources is Source over a list (nil for an empty one).
func Sources[S any](list []*S, domain func(*S) string) ([]*natsio.StreamSource, error) {
	if len(list) == 0 {
		return nil, nil
	}
	out := make([]*natsio.StreamSource, len(list))
	for i, ss := range list {
		var err error
		if out[i], err = Source(ss, domain); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// Binding is the binding's configuration.
func (c KVConfig) Binding() natsio.KeyValueConfig {
	out := natsio.KeyValueConfig{
		Bucket: c.Bucket, Description: c.Description, History: c.History, TTL: c.TTL,
		MaxValueSize: c.MaxValueSize, MaxBytes: c.MaxBytes, Storage: storage(c.Memory),
		Replicas: c.Replicas, Compression: c.Compression, LimitMarkerTTL: c.LimitMarkerTTL, Metadata: c.Metadata,
		Mirror: c.Mirror, Sources: c.Sources,
	}
	for name, v := range c.Extra {
		if isNil(v) {
			continue
		}
		if out.Extra == nil {
			out.Extra = map[string]any{}
		}
		out.Extra[name] = v
	}
	return out
}

func isNil(v any) bool {
	if v == nil {
		return true
	}
	switch r := reflect.ValueOf(v); r.Kind() {
	case reflect.Pointer, reflect.Slice, reflect.Map:
		return r.IsNil()
	}
	return false
}

func storage(memory bool) natsio.StorageType {
	if memory {
		return natsio.MemoryStorage
	}
	return natsio.FileStorage
}

// OpString is nats.go's KeyValueOp.String, by the op's value.
func OpString(op uint8) string {
	switch op {
	case 0:
		return "KeyValuePutOp"
	case 1:
		return "KeyValueDeleteOp"
	case 2:
		return "KeyValuePurgeOp"
	}
	return "Unknown Operation"
}

// Entry is a binding entry as nats.go's KeyValueEntry, Op the facade's
// KeyValueOp (put 0, delete 1, purge 2 in both).
type Entry[Op ~uint8] struct{ E *natsio.KeyValueEntry }

func (e Entry[Op]) Bucket() string     { return e.E.Bucket }
func (e Entry[Op]) Key() string        { return e.E.Key }
func (e Entry[Op]) Value() []byte      { return e.E.Value }
func (e Entry[Op]) Revision() uint64   { return e.E.Revision }
func (e Entry[Op]) Created() time.Time { return e.E.Created }
func (e Entry[Op]) Delta() uint64      { return e.E.Delta }
func (e Entry[Op]) Operation() Op {
	switch e.E.Operation {
	case natsio.KeyValueDelete:
		return 1
	case natsio.KeyValuePurge:
		return 2
	}
	return 0
}

// Status is the part of nats.go's KeyValueStatus both facades share.
type Status struct{ S *natsio.KeyValueStatus }

func (s Status) Bucket() string       { return s.S.Bucket }
func (s Status) Values() uint64       { return s.S.Values }
func (s Status) History() int64       { return s.S.History }
func (s Status) TTL() time.Duration   { return s.S.TTL }
func (s Status) BackingStore() string { return "JetStream" }
func (s Status) Bytes() uint64        { return s.S.Bytes }
func (s Status) IsCompressed() bool   { return s.S.IsCompressed }

// ExistingRevision is the live revision of the key a Create found: ok
// when err is the binding's ErrKeyExists.
func ExistingRevision(err error) (revision uint64, ok bool) {
	var e *natsio.Error
	if errors.As(err, &e) && errors.Is(err, natsio.ErrKeyExists) {
		return e.Revision, true
	}
	return 0, false
}

// IsWrongLastSequence says whether a JetStream API error code is a
// refused expected-revision publish (10071; 10164 on replicated streams).
func IsWrongLastSequence(errCode int) bool { return errCode == 10071 || errCode == 10164 }

// ---- watches

// Relay feeds a facade's Updates channel (capacity size) from a binding
// watch's: each item converted, the nil initial-values marker passed on
// as out's zero value except to an UpdatesOnly watch (nats.go sends none
// there). The channel is closed when in is, then ended is called (if not
// nil).
func Relay[T, U any](in <-chan *T, size int, updatesOnly bool, convert func(*T) U, ended func()) <-chan U {
	out := make(chan U, size)
	go func() {
		defer func() {
			close(out)
			if ended != nil {
				ended()
			}
		}()
		var zero U
		for item := range in {
			switch {
			case item != nil:
				out <- convert(item)
			case !updatesOnly:
				out <- zero
			}
		}
	}()
	return out
}

// StopWithContext stops a watch when ctx ends, as nats.go's watches do.
func StopWithContext(ctx context.Context, stop func()) {
	if ctx == nil || ctx.Done() == nil {
		return
	}
	context.AfterFunc(ctx, stop)
}

// ---- Object Store

// ObjConfig is an Object Store bucket's configuration as both facades
// spell it; Memory is StorageType MemoryStorage.
type ObjConfig struct {
	Bucket, Description string
	TTL                 time.Duration
	MaxBytes            int64
	Memory              bool
	Replicas            int
	Placement           *natsio.Placement
	Compression         bool
	Metadata            map[string]string
}

// Binding is the binding's configuration.
func (c ObjConfig) Binding() natsio.ObjectStoreConfig {
	return natsio.ObjectStoreConfig{
		Bucket: c.Bucket, Description: c.Description, TTL: c.TTL, MaxBytes: c.MaxBytes,
		Storage: storage(c.Memory), Replicas: c.Replicas, Placement: c.Placement,
		Compression: c.Compression, Metadata: c.Metadata,
	}
}

// ObjStatus is nats.go's ObjectStoreStatus, ST the facade's StorageType
// (file 0, memory 1 in both).
type ObjStatus[ST ~int] struct{ S *natsio.ObjectStoreStatus }

func (s ObjStatus[ST]) Bucket() string              { return s.S.Bucket }
func (s ObjStatus[ST]) Description() string         { return s.S.Description }
func (s ObjStatus[ST]) TTL() time.Duration          { return s.S.TTL }
func (s ObjStatus[ST]) Replicas() int               { return s.S.Replicas }
func (s ObjStatus[ST]) Sealed() bool                { return s.S.Sealed }
func (s ObjStatus[ST]) Size() uint64                { return s.S.Size }
func (s ObjStatus[ST]) BackingStore() string        { return "JetStream" }
func (s ObjStatus[ST]) Metadata() map[string]string { return s.S.Metadata }
func (s ObjStatus[ST]) IsCompressed() bool          { return s.S.Compressed }
func (s ObjStatus[ST]) Storage() ST {
	if s.S.Storage == natsio.MemoryStorage {
		return 1
	}
	return 0
}

// Result is nats.go's ObjectResult over the binding's reader, errors
// given in the facade's terms by translate.
type Result struct {
	R         *natsio.ObjectResult
	Translate func(error) error
}

func (r Result) Read(p []byte) (int, error) {
	n, err := r.R.Read(p)
	if err == io.EOF {
		return n, err
	}
	return n, r.Translate(err)
}
func (r Result) Close() error { return r.Translate(r.R.Close()) }
func (r Result) Info() (*natsio.ObjectInfo, error) {
	i, err := r.R.Info()
	return i, r.Translate(err)
}
func (r Result) Error() error { return nil }

// PutFile puts the content of file under the name file (its path as
// given), as nats.go's.
func PutFile(file string, put func(name string, r io.Reader) (*natsio.ObjectInfo, error)) (*natsio.ObjectInfo, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return put(file, f)
}

// GetFile writes an object into file (created or truncated; removed again
// when the object cannot be opened), as nats.go's.
func GetFile(file string, get func() (io.ReadCloser, error)) error {
	f, err := os.OpenFile(file, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	defer f.Close()
	result, err := get()
	if err != nil {
		os.Remove(f.Name())
		return err
	}
	defer result.Close()
	_, err = io.Copy(f, result)
	return err
}
