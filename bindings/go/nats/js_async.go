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
	msg   *Msg
	inner *natsio.PubAckFuture
	ok    chan *PubAck
	err   chan error
	watch sync.Once
}

// await hands the outcome to Ok or Err once there is one; started by the
// first Ok or Err (or at once for an error handler), so a future nobody
// reads costs no goroutine.
func (f *pubAckFuture) await() {
	f.watch.Do(func() {
		go func() {
			ack, err := f.inner.Wait(context.Background())
			if err != nil {
				err = asyncPublishError(err)
				f.err <- err
				if cb := f.js.opts.asyncErrHandler; cb != nil {
					cb(f.js, f.msg, err)
				}
				return
			}
			f.ok <- pubAckOf(ack)
		}()
	})
}

func (f *pubAckFuture) Ok() <-chan *PubAck { f.await(); return f.ok }
func (f *pubAckFuture) Err() <-chan error  { f.await(); return f.err }
func (f *pubAckFuture) Msg() *Msg          { return f.msg }

func (js *jsContext) PublishAsync(subj string, data []byte, opts ...PubOpt) (PubAckFuture, error) {
	return js.PublishMsgAsync(&Msg{Subject: subj, Data: data}, opts...)
}

// PublishMsgAsync publishes m without waiting for its ack. Beyond
// PublishAsyncMaxPending publishes awaiting acks it waits for room (up to
// 200 ms, then ErrTooManyStalledMsgs). AckWait and Context do not apply
// (ErrContextAndTimeout), as in nats.go.
func (js *jsContext) PublishMsgAsync(m *Msg, opts ...PubOpt) (PubAckFuture, error) {
	o, err := publishOptions(m, opts)
	if err != nil {
		return nil, err
	}
	if o.ttl != 0 || o.ctx != nil {
		return nil, ErrContextAndTimeout
	}
	if m.Reply != "" {
		return nil, errors.New("nats: reply subject should be empty")
	}
	inner, err := js.inner.PublishAsync(m.Subject, m.Data, o.bin...)
	if err != nil {
		return nil, jsTranslate(err)
	}
	f := &pubAckFuture{js: js, msg: m, inner: inner, ok: make(chan *PubAck, 1), err: make(chan error, 1)}
	if js.opts.asyncErrHandler != nil {
		f.await()
	}
	return f, nil
}

// PublishAsyncPending is how many asynchronous publishes await their ack.
func (js *jsContext) PublishAsyncPending() int { return js.inner.PublishAsyncPending() }

// PublishAsyncComplete is closed once every asynchronous publish so far
// has its outcome.
func (js *jsContext) PublishAsyncComplete() <-chan struct{} {
	done := make(chan struct{})
	if js.inner.PublishAsyncPending() == 0 {
		close(done)
		return done
	}
	go func() {
		_ = js.inner.PublishAsyncComplete(context.Background())
		close(done)
	}()
	return done
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
