package natsio

// What Key-Value and Object Store buckets share on the JetStream context:
// create, bind, delete, the names and the statuses listings. Each kind
// names its generated raw calls and how its handles are read (kvBuckets in
// kv.go, objBuckets in object.go); the calls are written here once.

/*
#include "natsio_go.h"
*/
import "C"

import (
	"context"
	"unsafe"
)

// bucketKind is one kind of bucket: B its bound bucket, S its status.
type bucketKind[B, S any] struct {
	create   func(ctx context.Context, p *C.natsio_js, configJSON string, action int32) (C.go_take, error)
	bind     func(ctx context.Context, p *C.natsio_js, bucket string) (C.go_take, error)
	delete   func(ctx context.Context, p *C.natsio_js, bucket string) error
	names    func(ctx context.Context, p *C.natsio_js) (C.go_take, error)
	statuses func(ctx context.Context, p *C.natsio_js) (C.go_take, error)
	// wrap owns a bound bucket's C handle.
	wrap func(p unsafe.Pointer, nc *Conn) B
	// readStatuses reads a C status list and frees it.
	readStatuses func(list unsafe.Pointer) ([]S, error)
}

// createBucket is the kind's create with action (a natsio_create_action)
// from cfg as JSON.
func (k *bucketKind[B, S]) createBucket(ctx context.Context, js *JetStream, cfg any, action C.int32_t) (B, error) {
	var zero B
	config, err := configJSON(cfg)
	if err != nil {
		return zero, err
	}
	r, err := onJS(js, func(p *C.natsio_js) (C.go_take, error) { return k.create(ctx, p, config, int32(action)) })
	if err != nil {
		return zero, err
	}
	return k.wrap(r.out, js.nc), nil
}

func (k *bucketKind[B, S]) bindBucket(ctx context.Context, js *JetStream, bucket string) (B, error) {
	r, err := onJS(js, func(p *C.natsio_js) (C.go_take, error) { return k.bind(ctx, p, bucket) })
	if err != nil {
		var zero B
		return zero, err
	}
	return k.wrap(r.out, js.nc), nil
}

func (k *bucketKind[B, S]) deleteBucket(ctx context.Context, js *JetStream, bucket string) error {
	_, err := onJS(js, func(p *C.natsio_js) (struct{}, error) { return struct{}{}, k.delete(ctx, p, bucket) })
	return err
}

func (k *bucketKind[B, S]) bucketNames(ctx context.Context, js *JetStream) ([]string, error) {
	r, err := onJS(js, func(p *C.natsio_js) (C.go_take, error) { return k.names(ctx, p) })
	if err != nil {
		return nil, err
	}
	return takeStringList(r), nil
}

func (k *bucketKind[B, S]) bucketStatuses(ctx context.Context, js *JetStream) ([]S, error) {
	r, err := onJS(js, func(p *C.natsio_js) (C.go_take, error) { return k.statuses(ctx, p) })
	if err != nil {
		return nil, err
	}
	return k.readStatuses(r.out)
}

// readList reads the n items of a C list: read gives item i, or ok false
// for none (it is left out); the first error ends it.
func readList[S any](n int, read func(i int) (item S, ok bool, err error)) ([]S, error) {
	out := make([]S, 0, n)
	for i := range n {
		s, ok, err := read(i)
		if err != nil {
			return nil, err
		}
		if ok {
			out = append(out, s)
		}
	}
	return out, nil
}
