package nats

import (
	"context"
	"errors"
	"sync"

	natsio "github.com/libnatsio/natsio/bindings/go"
)

// ---- asynchronous publishes (PublishAsync)

// PubAckFuture is the outcome of an asynchronous publish: its ack on Ok
// or its error on Err (one of them receives, once).
type PubAckFuture interface {
	Ok() <-chan *PubAck
	Err() <-chan error
	Msg() *Msg
}

type pubAckFuture struct {
	js    *jsContext
	pub   *publisher
	msg   *Msg
	inner *natsio.PubAckFuture
	ok    chan *PubAck
	err   chan error
	watch sync.Once
	// settled is done once the outcome is on ok or err (the ack's, or
	// CleanupPublisher's ErrJetStreamPublisherClosed).
	settled sync.Once
}

// await hands the outcome to Ok or Err once there is one; started by the
// first Ok or Err (or at once for an error handler), so a future nobody
// reads costs no goroutine.
func (f *pubAckFuture) await() {
	f.watch.Do(func() {
		go func() {
			ack, err := f.inner.Wait(f.pub.ctx)
			if f.pub.ctx.Err() != nil && errors.Is(err, context.Canceled) {
				return // CleanupPublisher settled it
			}
			f.settle(ack, asyncPublishError(err))
		}()
	})
}

// settle hands out the outcome, the first time only: an error (as the
// program sees it) to Err and the PublishAsyncErrHandler, an ack to Ok.
func (f *pubAckFuture) settle(ack *natsio.PubAck, err error) {
	f.settled.Do(func() {
		f.pub.forget(f)
		if err != nil {
			f.err <- err
			if cb := f.js.opts.asyncErrHandler; cb != nil {
				cb(f.js, f.msg, err)
			}
			return
		}
		f.ok <- pubAckOf(ack)
	})
}

func (f *pubAckFuture) Ok() <-chan *PubAck { f.await(); return f.ok }
func (f *pubAckFuture) Err() <-chan error  { f.await(); return f.err }
func (f *pubAckFuture) Msg() *Msg          { return f.msg }

// publisher is what the asynchronous publishes go through until
// CleanupPublisher: a binding context and the futures it has given out.
type publisher struct {
	inner *natsio.JetStream
	own   bool // inner is the publisher's own (not the jsContext's)
	// ctx ends at CleanupPublisher: waits on the publisher's acks end.
	ctx    context.Context
	cancel context.CancelFunc

	mu      sync.Mutex
	futures map[*pubAckFuture]struct{} // given out, not settled
	sweepAt int                        // len(futures) at which to sweep
}

// minSweep is how many futures a publisher holds before it first looks
// for those acked that nobody read.
const minSweep = 1024

func newPublisher(inner *natsio.JetStream, own bool) *publisher {
	ctx, cancel := context.WithCancel(context.Background())
	return &publisher{inner: inner, own: own, ctx: ctx, cancel: cancel,
		futures: map[*pubAckFuture]struct{}{}, sweepAt: minSweep}
}

// publisher is the current publisher, made on first use (again after
// CleanupPublisher, with the context's options).
func (js *jsContext) publisher() (*publisher, error) {
	js.pubMu.Lock()
	defer js.pubMu.Unlock()
	if js.pub == nil {
		if !js.pubUsed {
			js.pub = newPublisher(js.inner, false)
		} else {
			inner, err := js.nc.conn().JetStream(js.bopts...)
			if err != nil {
				return nil, jsTranslate(err)
			}
			js.pub = newPublisher(inner, true)
		}
		js.pubUsed = true
	}
	return js.pub, nil
}

// track records f until it is settled. Past sweepAt futures it drops
// those already acked that nobody reads (their outcome stays with them).
func (p *publisher) track(f *pubAckFuture) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.futures[f] = struct{}{}
	if len(p.futures) < p.sweepAt {
		return
	}
	for g := range p.futures {
		if isDone(g.inner) {
			delete(p.futures, g)
		}
	}
	p.sweepAt = max(minSweep, 2*len(p.futures))
}

func (p *publisher) forget(f *pubAckFuture) {
	p.mu.Lock()
	delete(p.futures, f)
	p.mu.Unlock()
}

// isDone tells, without waiting, whether an asynchronous publish has its
// outcome.
func isDone(f *natsio.PubAckFuture) bool {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := f.Wait(ctx)
	return !errors.Is(err, context.Canceled)
}

func (js *jsContext) PublishAsync(subj string, data []byte, opts ...PubOpt) (PubAckFuture, error) {
	return js.PublishMsgAsync(&Msg{Subject: subj, Data: data}, opts...)
}

// PublishMsgAsync publishes m without waiting for its ack. Beyond
// PublishAsyncMaxPending publishes awaiting acks it waits for room (up to
// 200 ms, then ErrTooManyStalledMsgs). AckWait and Context do not apply
// (ErrContextAndTimeout), as in nats.go. "No responders" is retried only
// with RetryAttempts, as in nats.go (then it fails with ErrNoResponders).
func (js *jsContext) PublishMsgAsync(m *Msg, opts ...PubOpt) (PubAckFuture, error) {
	o, err := publishOptions(m, opts)
	if err != nil {
		return nil, err
	}
	retry, err := o.retryOpts(true)
	if err != nil {
		return nil, err
	}
	if o.ttl != 0 || o.ctx != nil {
		return nil, ErrContextAndTimeout
	}
	if m.Reply != "" {
		return nil, errors.New("nats: reply subject should be empty")
	}
	pub, err := js.publisher()
	if err != nil {
		return nil, err
	}
	inner, err := pub.inner.PublishAsync(m.Subject, m.Data, append(o.bin, retry...)...)
	if err != nil {
		return nil, jsTranslate(err)
	}
	f := &pubAckFuture{js: js, pub: pub, msg: m, inner: inner, ok: make(chan *PubAck, 1), err: make(chan error, 1)}
	pub.track(f)
	if js.opts.asyncErrHandler != nil {
		f.await()
	}
	return f, nil
}

// PublishAsyncPending is how many asynchronous publishes await their ack
// (none of those before a CleanupPublisher).
func (js *jsContext) PublishAsyncPending() int {
	js.pubMu.Lock()
	pub := js.pub
	js.pubMu.Unlock()
	if pub == nil {
		return 0
	}
	return pub.inner.PublishAsyncPending()
}

// PublishAsyncComplete is closed once every asynchronous publish so far
// has its outcome, or at CleanupPublisher.
func (js *jsContext) PublishAsyncComplete() <-chan struct{} {
	done := make(chan struct{})
	js.pubMu.Lock()
	pub := js.pub
	js.pubMu.Unlock()
	if pub == nil || pub.inner.PublishAsyncPending() == 0 {
		close(done)
		return done
	}
	go func() {
		_ = pub.inner.PublishAsyncComplete(pub.ctx)
		close(done)
	}()
	return done
}

// CleanupPublisher ends the asynchronous publishing so far: each publish
// still awaiting its ack fails with ErrJetStreamPublisherClosed (on its
// Err, and through the PublishAsyncErrHandler), PublishAsyncComplete
// closes, and the acks that come later are dropped. The context stays
// usable: the next PublishAsync starts afresh.
func (js *jsContext) CleanupPublisher() {
	js.pubMu.Lock()
	pub := js.pub
	js.pub = nil
	js.pubMu.Unlock()
	if pub == nil {
		return
	}
	pub.mu.Lock()
	var pending []*pubAckFuture
	for f := range pub.futures {
		if !isDone(f.inner) {
			pending = append(pending, f)
		}
	}
	pub.mu.Unlock()
	for _, f := range pending {
		f.settle(nil, ErrJetStreamPublisherClosed)
	}
	pub.cancel()
	if pub.own {
		pub.inner.Close() // its publishes go on, unheard
	}
}

// asyncPublishError is an asynchronous publish's error as nats.go's:
// ErrNoResponders where no stream answered (its synchronous Publish says
// ErrNoStreamResponse).
func asyncPublishError(err error) error {
	if errors.Is(err, natsio.ErrNoStreamResponse) {
		return ErrNoResponders
	}
	return jsTranslate(err)
}
