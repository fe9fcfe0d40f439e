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
	"sync"
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

// watchFeed is what a Key-Value and an Object Store watcher share: Next
// refused once Updates feeds a channel, the goroutine that feeds it, and
// Stop's bookkeeping. T is the item (an entry or an object's info).
type watchFeed[T any] struct {
	mu      sync.Mutex
	updates chan T        // nil until Updates
	stopped chan struct{} // closed by Stop
	fed     chan struct{} // closed when the Updates goroutine has ended
}

// feeding reports whether Updates took the watch over.
func (f *watchFeed[T]) feeding() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.updates != nil
}

// channel starts the feeding goroutine on the first call and returns its
// channel (the same one every time).
func (f *watchFeed[T]) channel(next func(context.Context) (T, error)) <-chan T {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.updates == nil {
		f.updates = make(chan T, 64)
		f.fed = make(chan struct{})
		go f.feed(next, f.updates, f.fed)
	}
	return f.updates
}

func (f *watchFeed[T]) feed(next func(context.Context) (T, error), ch chan<- T, fed chan<- struct{}) {
	defer close(fed)
	defer close(ch)
	for {
		select {
		case <-f.stopped:
			return
		default:
		}
		item, err := next(context.Background())
		if err != nil {
			return // stopped (ErrDone), or the watch failed
		}
		select {
		case ch <- item:
		case <-f.stopped:
			return
		}
	}
}

// stop marks the watch stopped (once) and returns what to wait on for the
// feeding goroutine to end, nil when Updates was never called. The caller
// stops the library's watch in between, which wakes a waiting next.
func (f *watchFeed[T]) stop() <-chan struct{} {
	f.mu.Lock()
	defer f.mu.Unlock()
	select {
	case <-f.stopped:
	default:
		close(f.stopped)
	}
	return f.fed
}

// closedChannel is what Updates returns on a nil watcher.
func closedChannel[T any]() <-chan T {
	ch := make(chan T)
	close(ch)
	return ch
}
