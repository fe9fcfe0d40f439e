package natsio

/*
#include "natsio_go.h"
*/
import "C"

import "sync"

// deferredSender sends what PublishAsync queues without waking the
// library's writer thread (natsio_js_publish_options.defer_send): after
// each such publish a non-blocking channel send readies this goroutine,
// and Go's scheduler runs it once the publishing goroutine blocks (waiting
// on a future, a channel, the network) or another P takes it over. So a
// run of asynchronous publishes goes out in one write, as nats.go's
// flusher goroutine batches its buffered writes, and sooner than the
// library's own bound (about a millisecond; also a stall in the publish
// window, 64 KiB queued or any other frame send them).
type deferredSender struct {
	c        *C.natsio_client
	wake     chan struct{}
	stop     chan struct{}
	done     chan struct{}
	stopOnce sync.Once
}

func newDeferredSender(c *C.natsio_client) *deferredSender {
	s := &deferredSender{
		c:    c,
		wake: make(chan struct{}, 1),
		stop: make(chan struct{}),
		done: make(chan struct{}),
	}
	// It holds the sender, not the Conn: an unreachable Conn is still
	// finalized, and the finalizer stops it before freeing the client.
	go s.run()
	return s
}

func (s *deferredSender) run() {
	defer close(s.done)
	for {
		select {
		case <-s.wake:
			C.natsio_client_send_deferred(s.c)
		case <-s.stop:
			return
		}
	}
}

// kick asks for a send; never blocks (one pending ask covers any number).
func (s *deferredSender) kick() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// close sends what is still deferred and stops the goroutine; once it
// returns the client is not touched again. Idempotent.
func (s *deferredSender) close() {
	s.stopOnce.Do(func() {
		close(s.stop)
		<-s.done
		C.natsio_client_send_deferred(s.c)
	})
}

// deferred is the connection's sender, started on first use; nil once
// Close has run (Close spends senderOnce, so none starts after it), and
// PublishAsync then queues without deferral.
func (nc *Conn) deferred() *deferredSender {
	nc.senderOnce.Do(func() { nc.sender = newDeferredSender(nc.ptr) })
	return nc.sender
}
