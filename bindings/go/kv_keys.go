package natsio

// Listing a bucket's keys as they are read (natsio_kv_list_keys), with
// nats.go's names: KeyValue.ListKeys and ListKeysFiltered returning a
// KeyLister. The iterator natsio_kv_key_lister is read as the others are:
// a ready key at once, else a _next_async token waited on in the goroutine
// (see iterNext).

/*
#include "natsio_go.h"
*/
import "C"

import (
	"context"
	"runtime"
	"sync"
	"unsafe"
)

// KeyLister is a running listing of a bucket's keys (ListKeys,
// ListKeysFiltered), as nats.go's jetstream.KeyLister: each key that holds
// a value now comes once (deleted and purged keys are left out), as the
// library reads it on its own threads into a buffer bounded by the
// connection's pending limits (the whole key set is never held); the
// listing ends once every key stored when it started has been delivered
// (at once for an empty bucket). Read it with Keys (a channel, as in
// nats.go) or Next (not both). All methods are safe for concurrent use.
// Stop ends it early and deletes its consumer on the server; a lister read
// to its end needs no Stop. Its handle is freed by a finalizer.
type KeyLister struct {
	ptr *C.natsio_kv_key_lister

	mu      sync.Mutex
	keys    chan string   // nil until Keys
	stopped chan struct{} // closed by Stop
	fed     chan struct{} // closed when the Keys goroutine has ended
	err     error         // what ended the Keys goroutine, if not the end
}

// ListKeys lists every key of the bucket that holds a value, as nats.go's
// KeyValue.ListKeys. opts are accepted for nats.go source compatibility
// and change nothing: a listing is always of the latest revision of each
// key, without values, deleted and purged keys left out. It returns at
// once (ctx is only checked); a missing bucket shows as ErrBucketNotFound
// from Next (Keys is closed). Errors: ErrConnectionClosed, ctx's error.
func (kv *KeyValue) ListKeys(ctx context.Context, opts ...WatchOpt) (*KeyLister, error) {
	_ = opts
	return kv.listKeys(ctx, nil)
}

// ListKeysFiltered lists the keys matching any of filters (every key when
// there are none) that hold a value, as nats.go's
// KeyValue.ListKeysFiltered: tokens are separated by dots, "*" matches one
// whole token and a final ">" the rest. All filters are served by one
// consumer (a filter given twice counts once; filters that overlap
// otherwise, such as "a.*" and "a.>", are refused by the server:
// ErrJetStreamAPI from Next). Errors: ErrInvalidKey (a bad filter, ""
// included), ErrInvalidArgument (a NUL byte), ErrConnectionClosed, ctx's
// error. Otherwise as ListKeys.
func (kv *KeyValue) ListKeysFiltered(ctx context.Context, filters ...string) (*KeyLister, error) {
	return kv.listKeys(ctx, filters)
}

func (kv *KeyValue) listKeys(ctx context.Context, filters []string) (*KeyLister, error) {
	cFilters, err := newCStrings(filters)
	if err != nil {
		return nil, err
	}
	defer cFilters.free()
	if kv == nil {
		return nil, errorOf(ErrNullArgument, "nil *KeyValue")
	}
	if ctx.Err() != nil {
		return nil, contextError(ctx)
	}
	var ptr *C.natsio_kv_key_lister
	err = cCall(func() C.natsio_status {
		return C.natsio_kv_list_keys(kv.ptr, cFilters.ptr(), cFilters.count(), &ptr)
	})
	runtime.KeepAlive(kv)
	if err != nil {
		return nil, err
	}
	l := &KeyLister{ptr: ptr, stopped: make(chan struct{})}
	runtime.SetFinalizer(l, func(l *KeyLister) { C.natsio_kv_key_lister_free(l.ptr) })
	return l, nil
}

func (l *KeyLister) next(ctx context.Context) (string, error) {
	defer runtime.KeepAlive(l)
	return iterNext(ctx, unsafe.Pointer(l.ptr), C.GO_ITER_KV_KEY_LISTER,
		func(item unsafe.Pointer, _ C.go_msg_view, _ C.go_entry_view) string {
			defer C.natsio_string_free((*C.char)(item))
			return C.GoString((*C.char)(item))
		})
}

// Next returns the next key: at once if the library has one, else when one
// is read or ctx ends (with ctx's error; for a deadline one that also
// matches ErrTimeout; the listing goes on). Errors: ErrDone once every key
// was delivered, for an empty bucket, or after Stop (also for a Next
// waiting while Stop is called); ErrBucketNotFound, ErrJetStreamAPI,
// ErrConnectionClosed, which end the listing (later calls return them
// too); ErrIllegalState once Keys was called.
func (l *KeyLister) Next(ctx context.Context) (string, error) {
	if l == nil {
		return "", errorOf(ErrNullArgument, "nil *KeyLister")
	}
	l.mu.Lock()
	feeding := l.keys != nil
	l.mu.Unlock()
	if feeding {
		return "", errorOf(ErrIllegalState, "the listing is read through Keys")
	}
	return l.next(ctx)
}

// Keys is a channel of the keys, as nats.go's KeyLister.Keys: a goroutine
// feeds it from the library's buffer (waiting on tokens, not in C) and
// closes it when the listing ends: after the last key, after Stop (Stop
// waits for it), or on an error (see Err). Every call returns the same
// channel.
func (l *KeyLister) Keys() <-chan string {
	if l == nil {
		ch := make(chan string)
		close(ch)
		return ch
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.keys == nil {
		l.keys = make(chan string, 64)
		l.fed = make(chan struct{})
		go l.feed(l.keys, l.fed)
	}
	return l.keys
}

func (l *KeyLister) feed(ch chan<- string, fed chan<- struct{}) {
	defer close(fed)
	defer close(ch)
	for {
		select {
		case <-l.stopped:
			return
		default:
		}
		k, err := l.next(context.Background())
		if err != nil {
			if !isDone(err) {
				l.mu.Lock()
				l.err = err
				l.mu.Unlock()
			}
			return
		}
		select {
		case ch <- k:
		case <-l.stopped:
			return
		}
	}
}

// Err is the error that ended the Keys channel early (ErrBucketNotFound,
// ErrConnectionClosed, ...), or nil when it ended after the last key or
// Stop. Read it once the channel is closed.
func (l *KeyLister) Err() error {
	if l == nil {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.err
}

// Stop ends the listing: a Next waiting on another goroutine returns
// ErrDone, and so do later ones; the Keys channel is closed (Stop waits
// for its goroutine to end); keys not read yet are dropped. The library
// deletes the listing's consumer on the server. Safe to call more than
// once, from any goroutine; it returns nil (the error is nats.go's
// signature).
func (l *KeyLister) Stop() error {
	if l == nil {
		return nil
	}
	l.mu.Lock()
	select {
	case <-l.stopped:
	default:
		close(l.stopped)
	}
	fed := l.fed
	l.mu.Unlock()
	C.natsio_kv_key_lister_stop(l.ptr)
	runtime.KeepAlive(l)
	if fed != nil {
		<-fed
	}
	return nil
}

// Stats reads the listing's live counters (Delivered: keys handed out;
// Stalls: times its buffer was full and the library paused reading).
func (l *KeyLister) Stats() (IterStats, error) {
	if l == nil {
		return IterStats{}, errorOf(ErrNullArgument, "nil *KeyLister")
	}
	var cs C.natsio_iter_stats
	err := cCall(func() C.natsio_status { return C.natsio_kv_key_lister_get_stats(l.ptr, &cs) })
	runtime.KeepAlive(l)
	return iterStats(&cs), err
}
