package natsio

/*
#include "natsio.h"
*/
import "C"

import (
	"context"
	"runtime"
	"sync"
)

// A pump delivers the messages of a callback subscription: a goroutine
// that takes them off the subscription's queue in the library (an
// iterator-mode subscription, so pending limits and policies are the
// library's) and calls the handler with each, in order, one at a time.
//
// halt is the handshake that makes "no handler runs after Unsubscribe or
// Close returns" hold: the pump checks stopped, under mu, before every
// handler call, and halt sets it and waits for the running call to end,
// unless halt is called from that very handler (same goroutine), which
// would wait for itself.
type pump struct {
	// sub keeps the Subscription, and so its C handle, alive (unfreed by
	// its finalizer) while the pump may still use the handle.
	sub   *Subscription
	state *subState

	mu      sync.Mutex
	idle    sync.Cond // signalled when a handler call ends
	stopped bool      // no further handler call may start
	running bool      // a handler call is in progress
	goid    uint64    // the pump's goroutine, to recognize calls from its handler

	exited chan struct{} // closed when the pump goroutine has ended
}

func startPump(sub *Subscription, st *subState) *pump {
	p := &pump{sub: sub, state: st, exited: make(chan struct{})}
	p.idle.L = &p.mu
	st.conn.pumps.add(p)
	go p.run()
	return p
}

func (p *pump) run() {
	p.mu.Lock()
	p.goid = goroutineID()
	p.mu.Unlock()
	var held *C.natsio_msg
	defer func() {
		if held != nil {
			C.natsio_msg_free(held)
		}
		p.mu.Lock()
		p.stopped, p.running = true, false
		p.idle.Broadcast()
		p.mu.Unlock()
		p.state.conn.pumps.remove(p)
		close(p.exited)
	}()
	var lastSubject string
	for {
		var m *Msg
		var st C.natsio_status
		m, held, st = nextPumpMsg(p.sub.ptr, held, p.state.conn, &lastSubject)
		switch st {
		case C.NATSIO_OK:
		default:
			// Closed (unsubscribed, drained, auto-unsubscribe reached,
			// connection closed) or failed by the ERROR policy.
			return
		}
		p.mu.Lock()
		if p.stopped {
			p.mu.Unlock()
			return
		}
		p.running = true
		p.mu.Unlock()

		p.state.deliver(m)

		p.mu.Lock()
		p.running = false
		p.idle.Broadcast()
		p.mu.Unlock()
	}
}

// halt stops the pump from starting another handler call and waits for
// the running one, unless called from it. The subscription must already
// be closed in the library (so the pump's wait for a message ends).
func (p *pump) halt() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.stopped = true
	if p.running && p.goid == goroutineID() {
		return
	}
	for p.running {
		p.idle.Wait()
	}
}

// calledFromHandler reports whether the caller is this pump's handler.
func (p *pump) calledFromHandler() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.running && p.goid == goroutineID()
}

// waitExited waits until the pump has ended (it has handled its backlog
// and seen the subscription closed), or ctx ends. From the pump's own
// handler it returns at once: the pump cannot end while it runs.
func (p *pump) waitExited(ctx context.Context) error {
	if p.calledFromHandler() {
		return nil
	}
	select {
	case <-p.exited:
		return nil
	case <-ctx.Done():
		return contextError(ctx)
	}
}

// pumpSet is a connection's running pumps.
type pumpSet struct {
	mu  sync.Mutex
	set map[*pump]struct{}
}

func (s *pumpSet) add(p *pump) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.set == nil {
		s.set = make(map[*pump]struct{})
	}
	s.set[p] = struct{}{}
}

func (s *pumpSet) remove(p *pump) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.set, p)
}

func (s *pumpSet) snapshot() []*pump {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]*pump, 0, len(s.set))
	for p := range s.set {
		out = append(out, p)
	}
	return out
}

func (s *pumpSet) haltAll() {
	for _, p := range s.snapshot() {
		p.halt()
	}
}

func (s *pumpSet) waitExited(ctx context.Context) error {
	for _, p := range s.snapshot() {
		if err := p.waitExited(ctx); err != nil {
			return err
		}
	}
	return nil
}

// goroutineID is the calling goroutine's id, read from the first line of
// its stack trace ("goroutine 42 [running]:"). Go offers no cheaper way;
// it is only read when a pump starts and by halt and the drains.
func goroutineID() uint64 {
	var buf [40]byte
	n := runtime.Stack(buf[:], false)
	const prefix = "goroutine "
	var id uint64
	for _, c := range buf[len(prefix):n] {
		if c < '0' || c > '9' {
			break
		}
		id = id*10 + uint64(c-'0')
	}
	return id
}
