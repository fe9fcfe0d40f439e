package jetstream

import (
	"context"
	"fmt"
	"time"

	natsio "github.com/libnatsio/natsio/bindings/go"
	"github.com/libnatsio/natsio/bindings/go/nats"
)

// PublishOpt configures a JetStream publish.
type PublishOpt func(*[]natsio.PubOpt) error

func pubOpt(o natsio.PubOpt) PublishOpt {
	return func(opts *[]natsio.PubOpt) error { *opts = append(*opts, o); return nil }
}

func WithMsgID(id string) PublishOpt            { return pubOpt(natsio.MsgID(id)) }
func WithExpectStream(stream string) PublishOpt { return pubOpt(natsio.ExpectStream(stream)) }
func WithExpectLastSequence(seq uint64) PublishOpt {
	return pubOpt(natsio.ExpectLastSequence(seq))
}
func WithExpectLastSequencePerSubject(seq uint64) PublishOpt {
	return pubOpt(natsio.ExpectLastSequencePerSubject(seq))
}
func WithExpectLastMsgID(id string) PublishOpt { return pubOpt(natsio.ExpectLastMsgID(id)) }
func WithMsgTTL(d time.Duration) PublishOpt    { return pubOpt(natsio.MsgTTL(d)) }

func publishOptions(msg *nats.Msg, opts []PublishOpt) ([]natsio.PubOpt, error) {
	var out []natsio.PubOpt
	if len(msg.Header) > 0 {
		out = append(out, natsio.PubHeader(msg.Header))
	}
	for _, o := range opts {
		if err := o(&out); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// publishError is a failed publish's error: a stream's refusal reads
// "nats: nats: API error: ..." in nats.go (its ack's error wrapped once
// more), other errors as translate gives them.
func publishError(err error) error {
	err = translate(err)
	if apiErr, ok := err.(*APIError); ok {
		return fmt.Errorf("nats: %w", apiErr)
	}
	return err
}

func pubAck(a *natsio.PubAck) *PubAck {
	return &PubAck{Stream: a.Stream, Sequence: a.Sequence, Duplicate: a.Duplicate, Domain: a.Domain}
}

func (js *jetStream) Publish(ctx context.Context, subject string, data []byte, opts ...PublishOpt) (*PubAck, error) {
	return js.PublishMsg(ctx, &nats.Msg{Subject: subject, Data: data}, opts...)
}

func (js *jetStream) PublishMsg(ctx context.Context, msg *nats.Msg, opts ...PublishOpt) (*PubAck, error) {
	pubOpts, err := publishOptions(msg, opts)
	if err != nil {
		return nil, err
	}
	ack, err := js.inner.Publish(ctx, msg.Subject, msg.Data, pubOpts...)
	if err != nil {
		return nil, publishError(err)
	}
	return pubAck(ack), nil
}

// PubAckFuture is the outcome of PublishAsync: its ack on Ok or its error
// on Err.
type PubAckFuture interface {
	Ok() <-chan *PubAck
	Err() <-chan error
	Msg() *nats.Msg
}

type pubAckFuture struct {
	msg *nats.Msg
	ok  chan *PubAck
	err chan error
}

func (f *pubAckFuture) Ok() <-chan *PubAck { return f.ok }
func (f *pubAckFuture) Err() <-chan error  { return f.err }
func (f *pubAckFuture) Msg() *nats.Msg     { return f.msg }

func (js *jetStream) PublishAsync(subject string, data []byte, opts ...PublishOpt) (PubAckFuture, error) {
	return js.PublishMsgAsync(&nats.Msg{Subject: subject, Data: data}, opts...)
}

func (js *jetStream) PublishMsgAsync(msg *nats.Msg, opts ...PublishOpt) (PubAckFuture, error) {
	pubOpts, err := publishOptions(msg, opts)
	if err != nil {
		return nil, err
	}
	inner, err := js.inner.PublishAsync(msg.Subject, msg.Data, pubOpts...)
	if err != nil {
		return nil, translate(err)
	}
	f := &pubAckFuture{msg: msg, ok: make(chan *PubAck, 1), err: make(chan error, 1)}
	go func() {
		ack, err := inner.Wait(context.Background())
		if err != nil {
			f.err <- publishError(err)
			return
		}
		f.ok <- pubAck(ack)
	}()
	return f, nil
}

func (js *jetStream) PublishAsyncPending() int { return js.inner.PublishAsyncPending() }

// PublishAsyncComplete is closed once every asynchronous publish has its
// outcome.
func (js *jetStream) PublishAsyncComplete() <-chan struct{} {
	done := make(chan struct{})
	go func() {
		_ = js.inner.PublishAsyncComplete(context.Background())
		close(done)
	}()
	return done
}
