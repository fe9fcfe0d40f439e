package natsio

// The last message of each of many subjects in one batch Direct Get
// (natsio_js_stream_get_last_msgs_for), read through the iterator
// natsio_stored_msgs as the other iterators are: a ready message at once,
// else a _next_async token waited on in the goroutine (see iterNext).

/*
#include "natsio_go.h"
*/
import "C"

import (
	"context"
	"iter"
	"math"
	"runtime"
	"time"
	"unsafe"
)

// LastMsgsOpt configures GetLastMsgsFor.
type LastMsgsOpt func(*lastMsgsConfig)

type lastMsgsConfig struct {
	batch    int
	upToSeq  uint64
	upToTime time.Time
}

// GetLastMsgsBatchSize caps how many messages GetLastMsgsFor returns (the
// server's own limit applies too); 0, the default, leaves only the
// server's. A negative or too large n is ErrInvalidArgument.
func GetLastMsgsBatchSize(n int) LastMsgsOpt {
	return func(c *lastMsgsConfig) { c.batch = n }
}

// GetLastMsgsUpToSeq reads the last messages as of stream sequence seq
// (inclusive) instead of now; 0 means now. It excludes
// GetLastMsgsUpToTime: giving both is ErrInvalidArgument.
func GetLastMsgsUpToSeq(seq uint64) LastMsgsOpt {
	return func(c *lastMsgsConfig) { c.upToSeq = seq }
}

// GetLastMsgsUpToTime reads the last messages stored up to t instead of
// now; the zero Time means now. It excludes GetLastMsgsUpToSeq: giving
// both is ErrInvalidArgument.
func GetLastMsgsUpToTime(t time.Time) LastMsgsOpt {
	return func(c *lastMsgsConfig) { c.upToTime = t }
}

// StoredMsgs are the messages of one GetLastMsgsFor, gathered by the
// library on its own threads from the moment GetLastMsgsFor returns. Read
// them with Next or Msgs; the iteration ends (ErrDone) once every message
// has been read, when none matched, or after Stop. All methods are safe
// for concurrent use. It keeps its Conn alive but not open, and does not
// depend on the JetStream that started it staying open. Its handle is
// freed by a finalizer.
type StoredMsgs struct {
	ptr *C.natsio_stored_msgs
	nc  *Conn
}

// GetLastMsgsFor reads the last message of every subject of stream that
// matches one of subjects (wildcards allowed), in stream order, with one
// batch Direct Get (ADR-31: the stream needs AllowDirect, the server
// 2.11+), as nats.go's jetstreamext.GetLastMsgsFor. Options:
// GetLastMsgsBatchSize, GetLastMsgsUpToSeq, GetLastMsgsUpToTime. It sends
// the request and returns at once: ctx bounds only the start, and each
// Next takes its own. A missing stream, or one without AllowDirect, shows
// as ErrNoResponders from Next. Errors: ErrInvalidArgument (a bad stream
// name, no subjects, both GetLastMsgsUpToSeq and GetLastMsgsUpToTime, a
// bad batch size), ErrBadSubject, ErrConnectionClosed, ErrIllegalState
// (JetStream closed), ctx's error.
func (js *JetStream) GetLastMsgsFor(ctx context.Context, stream string, subjects []string, opts ...LastMsgsOpt) (*StoredMsgs, error) {
	var cfg lastMsgsConfig
	for _, opt := range opts {
		opt(&cfg)
	}
	if cfg.batch < 0 || int64(cfg.batch) > math.MaxUint32 {
		return nil, errorOf(ErrInvalidArgument, "GetLastMsgsBatchSize must be between 0 and 4294967295")
	}
	var upToTime int64
	if !cfg.upToTime.IsZero() {
		upToTime = cfg.upToTime.UnixNano()
	}
	cstream, err := cString(stream)
	if err != nil {
		return nil, err
	}
	cSubjects, err := newCStrings(subjects)
	if err != nil {
		return nil, err
	}
	defer cSubjects.free()
	if ctx.Err() != nil {
		return nil, contextError(ctx)
	}
	p, err := js.acquire()
	if err != nil {
		return nil, err
	}
	var ptr *C.natsio_stored_msgs
	err = cCall(func() C.natsio_status {
		return C.natsio_js_stream_get_last_msgs_for(p, cPtr(cstream), cSubjects.ptr(), cSubjects.count(),
			C.uint32_t(cfg.batch), C.uint64_t(cfg.upToSeq), C.int64_t(upToTime), &ptr)
	})
	js.release()
	if err != nil {
		return nil, err
	}
	m := &StoredMsgs{ptr: ptr, nc: js.nc}
	runtime.SetFinalizer(m, func(m *StoredMsgs) { C.natsio_stored_msgs_free(m.ptr) })
	return m, nil
}

// Next returns the next message: at once if the library has one, else
// when one arrives or ctx ends (with ctx's error; for a deadline one that
// also matches ErrTimeout): the read goes on, and a later Next gets the
// message. The wait is a library token (ctx's end withdraws it), so no OS
// thread is held. Its Header holds the headers Direct Get adds
// (Nats-Stream, Nats-Sequence, ...). Errors: ErrDone once every message
// was read, when none matched, or after Stop (also for a Next waiting
// while Stop is called); ErrNoResponders (no such stream, or it does not
// allow Direct Get), ErrJetStreamAPI (another status from the server),
// ErrTimeout when the server stalled for the JSTimeout before the end,
// ErrConnectionClosed. An error ends the read: later calls return it too.
func (m *StoredMsgs) Next(ctx context.Context) (*RawStreamMsg, error) {
	if m == nil {
		return nil, errorOf(ErrNullArgument, "nil *StoredMsgs")
	}
	defer runtime.KeepAlive(m)
	return iterNext(ctx, unsafe.Pointer(m.ptr), C.GO_ITER_STORED_MSGS,
		func(item unsafe.Pointer, _ C.go_msg_view, _ C.go_entry_view) *RawStreamMsg {
			sm := (*C.natsio_stored_msg)(item)
			defer C.natsio_stored_msg_free(sm)
			return storedMsg(sm)
		})
}

// Msgs iterates over the messages until the read ends without error
// (every message read, none matched, Stop), which ends the loop quietly.
// Any error (ErrNoResponders, ctx's end, ...) is yielded once, last.
// Breaking out of the loop leaves the rest to a later Next or Msgs.
func (m *StoredMsgs) Msgs(ctx context.Context) iter.Seq2[*RawStreamMsg, error] {
	return func(yield func(*RawStreamMsg, error) bool) {
		for {
			msg, err := m.Next(ctx)
			if isDone(err) {
				return
			}
			if !yield(msg, err) || err != nil {
				return
			}
		}
	}
}

// Stop ends the read early: a Next waiting on another goroutine returns
// ErrDone, and so do later ones; messages not read yet are dropped. Safe
// to call more than once, from any goroutine.
func (m *StoredMsgs) Stop() {
	if m != nil {
		C.natsio_stored_msgs_stop(m.ptr)
		runtime.KeepAlive(m)
	}
}

// Stats reads the read's live counters (Delivered: messages returned;
// PendingItems: received, not read yet).
func (m *StoredMsgs) Stats() (IterStats, error) {
	if m == nil {
		return IterStats{}, errorOf(ErrNullArgument, "nil *StoredMsgs")
	}
	var cs C.natsio_iter_stats
	err := cCall(func() C.natsio_status { return C.natsio_stored_msgs_get_stats(m.ptr, &cs) })
	runtime.KeepAlive(m)
	return iterStats(&cs), err
}
