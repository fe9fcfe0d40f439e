package natsio

/*
#include "natsio_go.h"
*/
import "C"

import (
	"encoding/binary"
	"math"
	"sync"
	"sync/atomic"
	"unsafe"
)

// pubRing is the producer side of the client's natsio_pub_ring: Publish
// writes a plain message into the library's memory instead of crossing
// into C (a cgo call costs about what nats.go spends on a whole publish).
// The library moves the ring's records into its write buffer, in order,
// before anything else is written, so a message published here keeps its
// place before every later call (a Subscribe, a Request, a Flush, a
// JetStream publish). What the ring cannot take synchronously goes through
// the call, which reports its errors: a subject plainSubject cannot vouch
// for, a payload over the gate (0 when the connection is closed, draining
// or reconnecting), a full ring.
type pubRing struct {
	mu       sync.Mutex
	gate     *uint64
	head     *uint64
	tail     *uint64
	data     []byte
	capacity uint64
	// closing: Close has begun; every publish goes through the call, so
	// none lands in the ring after the library's last look at it.
	closing bool
	// plain: the last subject plainSubject accepted (a run of publishes
	// to one subject is checked once); "" before the first.
	plain string
}

// pubRingMaxRecord keeps large messages on the call (a copy into the ring
// buys nothing there) and a full ring rare.
const pubRingMaxRecord = 8 << 10

func newPubRing(c *C.natsio_client) *pubRing {
	var r C.natsio_pub_ring
	if C.natsio_client_pub_ring(c, &r) != C.NATSIO_OK {
		return nil
	}
	return &pubRing{
		gate:     (*uint64)(unsafe.Pointer(r.gate)),
		head:     (*uint64)(unsafe.Pointer(r.head)),
		tail:     (*uint64)(unsafe.Pointer(r.tail)),
		data:     unsafe.Slice((*byte)(unsafe.Pointer(r.data)), int(r.capacity)),
		capacity: uint64(r.capacity),
	}
}

// tryPublish queues a plain publish; false: publish through the call. The
// caller keeps the client alive across it (the ring is the client's).
func (r *pubRing) tryPublish(c *C.natsio_client, subject string, data []byte) bool {
	size := 8 + len(subject) + len(data)
	if size > pubRingMaxRecord {
		return false
	}
	padded := uint64(size+7) &^ 7
	r.mu.Lock()
	if subject != r.plain || subject == "" { // "": none accepted yet
		if !plainSubject(subject) {
			r.mu.Unlock()
			return false
		}
		r.plain = subject
	}
	gate := atomic.LoadUint64(r.gate)
	if r.closing || gate == 0 || uint64(len(data)) > gate {
		r.mu.Unlock()
		return false
	}
	tail := atomic.LoadUint64(r.tail)
	at := tail % r.capacity
	pos := tail
	if r.capacity-at < padded {
		pos += r.capacity - at // the record starts the next lap
	}
	if pos+padded-atomic.LoadUint64(r.head) > r.capacity {
		r.mu.Unlock()
		return false
	}
	if pos != tail {
		binary.NativeEndian.PutUint32(r.data[at:], math.MaxUint32)
	}
	rec := r.data[pos%r.capacity : pos%r.capacity+padded]
	binary.NativeEndian.PutUint32(rec, uint32(len(subject)))
	binary.NativeEndian.PutUint32(rec[4:], uint32(len(data)))
	copy(rec[8+copy(rec[8:], subject):], data)
	atomic.StoreUint64(r.tail, pos+padded)
	// The library found the ring empty up to here and may be idle: wake
	// its writer (once per run of publishes, not per message).
	kick := atomic.LoadUint64(r.head) == tail
	r.mu.Unlock()
	if kick {
		C.natsio_client_pub_ring_kick(c)
	}
	return true
}

// plainSubject reports whether the library certainly takes subject as a
// publish subject: printable ASCII, no wildcard, no empty token (the
// library's own quick test, narrowed to ASCII). Any other subject goes
// through the call, whose check is the rule and gives the exact error; the
// library checks ring records again all the same.
func plainSubject(s string) bool {
	if len(s) == 0 || s[len(s)-1] == '.' {
		return false
	}
	afterDot := true
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c <= ' ' || c >= 0x7f || c == '*' || c == '>' || (c == '.' && afterDot) {
			return false
		}
		afterDot = c == '.'
	}
	return true
}

// close sends every later publish through the call.
func (r *pubRing) close() {
	r.mu.Lock()
	r.closing = true
	r.mu.Unlock()
}
