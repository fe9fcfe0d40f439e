package nats

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	natsio "github.com/libnatsio/natsio/bindings/go"
)

// ---- pull subscriptions (PullSubscribe, Fetch, FetchBatch)

type pullOpts struct {
	ctx      context.Context
	ttl      time.Duration // MaxWait
	maxBytes int
	hb       time.Duration
}

// PullMaxBytes ends a Fetch's batch once its messages reach n bytes.
type PullMaxBytes int

func (n PullMaxBytes) configurePull(o *pullOpts) error { o.maxBytes = int(n); return nil }

// PullHeartbeat asks the server for idle heartbeats while a Fetch waits:
// when two are missed the Fetch fails with ErrNoHeartbeat.
type PullHeartbeat time.Duration

func (h PullHeartbeat) configurePull(o *pullOpts) error {
	if h <= 0 {
		return fmt.Errorf("%w: idle heartbeat has to be greater than 0", ErrInvalidArg)
	}
	o.hb = time.Duration(h)
	return nil
}

// pullSub is what a Subscription of PullSubscribe reads with Fetch.
type pullSub struct {
	js       *jsContext
	stream   string
	consumer string
	created  bool // by PullSubscribe: deleted by Unsubscribe
	ackNone  bool // the consumer takes no acks
	// initialPending is InitialConsumerPending's answer (0 unless created).
	initialPending uint64
	stopped        atomic.Bool
}

// InitialConsumerPending is how many messages the consumer the
// subscription created had to deliver when it was made (those it had
// delivered and those pending), as nats.go counts them; 0 for a consumer
// it bound to. ErrTypeSubscription for a subscription of core NATS.
func (s *Subscription) InitialConsumerPending() (uint64, error) {
	switch {
	case s != nil && s.push != nil:
		return s.push.initialPending, nil
	case s != nil && s.pull != nil:
		return s.pull.initialPending, nil
	}
	return 0, fmt.Errorf("%w: not a JetStream subscription", ErrTypeSubscription)
}

// PullSubscribe is a subscription read with Fetch and FetchBatch, on the
// pull consumer durable (created when missing; "" for an ephemeral one),
// or the one Bind names, filtered by subj. A consumer it created is
// deleted by Unsubscribe and Drain, as in nats.go.
func (js *jsContext) PullSubscribe(subj, durable string, opts ...SubOpt) (*Subscription, error) {
	if durable != "" {
		opts = append(opts, Durable(durable))
	}
	o, err := subscribeOptions(subj, DefaultMaxChanLen, opts)
	if err != nil {
		return nil, err
	}
	if o.cfg.DeliverSubject != "" {
		return nil, ErrPullSubscribeToPushConsumer
	}
	if o.ordered {
		return nil, errors.New("nats: can not use pull mode for an ordered consumer")
	}
	ctx, cancel := js.context(o.ctx)
	defer cancel()
	stream, err := js.streamOf(ctx, subj, &o)
	if err != nil {
		return nil, err
	}
	name, created, pending, err := js.consumerFor(ctx, stream, subj, "", &o, true)
	if err != nil {
		return nil, err
	}
	s := &Subscription{Subject: subj, nc: js.nc, ready: make(chan struct{}), sync: true,
		pull: &pullSub{js: js, stream: stream, consumer: name, created: created, initialPending: pending,
			ackNone: o.cfg.AckPolicy == AckNonePolicy}}
	close(s.ready)
	return s, nil
}

// stop ends the subscription and deletes a consumer PullSubscribe created.
func (p *pullSub) stop() error {
	if p.stopped.Swap(true) {
		return ErrBadSubscription
	}
	if !p.created {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), p.js.maxWait)
	defer cancel()
	err := p.js.inner.DeleteConsumer(ctx, p.stream, p.consumer)
	if errors.Is(err, natsio.ErrConsumerNotFound) {
		return nil
	}
	return jsTranslate(err)
}

// fetchStart checks a Fetch's call and options and returns its context:
// the Context option's (given the JetStream context's MaxWait when it has
// no deadline; ErrNoDeadlineContext for context.Background itself), else
// one of MaxWait (the option's, else the JetStream context's).
func (s *Subscription) fetchStart(batch int, opts []PullOpt) (*pullSub, pullOpts, context.Context, context.CancelFunc, error) {
	var o pullOpts
	if s == nil {
		return nil, o, nil, nil, ErrBadSubscription
	}
	if batch < 1 {
		return nil, o, nil, nil, ErrInvalidArg
	}
	for _, opt := range opts {
		if err := opt.configurePull(&o); err != nil {
			return nil, o, nil, nil, err
		}
	}
	if o.ctx != nil && o.ttl != 0 {
		return nil, o, nil, nil, ErrContextAndTimeout
	}
	p := s.pull
	if p == nil {
		return nil, o, nil, nil, ErrTypeSubscription
	}
	if p.stopped.Load() {
		return nil, o, nil, nil, errors.Join(ErrBadSubscription, ErrSubscriptionClosed)
	}
	ttl := o.ttl
	if ttl == 0 {
		ttl = p.js.maxWait
	}
	var ctx context.Context
	var cancel context.CancelFunc
	hasDeadline := false
	if o.ctx != nil {
		_, hasDeadline = o.ctx.Deadline()
	}
	switch {
	case o.ctx == nil:
		ctx, cancel = context.WithTimeout(context.Background(), ttl)
	case hasDeadline:
		ctx, cancel = context.WithCancel(o.ctx)
	case o.ctx == context.Background():
		return nil, o, nil, nil, ErrNoDeadlineContext
	default:
		ctx, cancel = context.WithTimeout(o.ctx, ttl)
	}
	if o.hb > 0 {
		if deadline, _ := ctx.Deadline(); 2*o.hb >= time.Until(deadline) {
			cancel()
			return nil, o, nil, nil, fmt.Errorf("%w: idle heartbeat value too large", ErrInvalidArg)
		}
	}
	if ctx.Err() != nil {
		cancel()
		return nil, o, nil, nil, o.endError(ctx)
	}
	return p, o, ctx, cancel, nil
}

// endError is a Fetch's error when ctx ended without a message: the
// context's own error when the program gave it, else ErrTimeout.
func (o *pullOpts) endError(ctx context.Context) error {
	if o.ctx != nil {
		return ctx.Err()
	}
	return ErrTimeout
}

// fetchOptions are the binding's options of a pull request for up to
// batch messages that stays open until a little before ctx's deadline (as
// nats.go's: 10% of the time left, 5 s at most).
func (o *pullOpts) fetchOptions(ctx context.Context, batch int) []natsio.FetchOpt {
	deadline, _ := ctx.Deadline()
	ttl := time.Until(deadline)
	expires := ttl - min(ttl/10, 5*time.Second)
	fopts := []natsio.FetchOpt{natsio.FetchMaxMessages(batch), natsio.FetchExpires(expires)}
	if o.maxBytes > 0 {
		fopts = append(fopts, natsio.FetchMaxBytes(o.maxBytes))
	}
	if o.hb > 0 && 2*o.hb < expires {
		fopts = append(fopts, natsio.FetchHeartbeat(o.hb))
	}
	return fopts
}

// fetchError is nats.go's error for a failed pull request.
func (o *pullOpts) fetchError(ctx context.Context, err error) error {
	switch {
	case ctx.Err() != nil:
		return o.endError(ctx)
	case o.hb > 0 && errors.Is(err, natsio.ErrTimeout):
		return ErrNoHeartbeat
	}
	return jsTranslate(err)
}

// Fetch pulls up to batch messages, as nats.go's: what the consumer has
// ready now when that is at least one message; else it waits (MaxWait or
// the Context option; default the JetStream context's MaxWait) for the
// first message and returns it with what is ready then. (nats.go sends
// one no-wait request with an expiry, which the server holds that way;
// the library's requests are no-wait or expiring, so the facade sends
// up to three.) A batch of 1 waits for its message. No message:
// ErrTimeout, or the context's error with a Context option.
// ErrTypeSubscription for a subscription not made by PullSubscribe.
func (s *Subscription) Fetch(batch int, opts ...PullOpt) ([]*Msg, error) {
	p, o, ctx, cancel, err := s.fetchStart(batch, opts)
	if err != nil {
		return nil, err
	}
	defer cancel()
	var got []*natsio.Msg
	if batch > 1 {
		if got, err = p.fetch(ctx, &o, batch, true); err != nil || len(got) > 0 {
			return s.fetched(ctx, &o, got, err)
		}
	}
	if got, err = p.fetch(ctx, &o, 1, false); err != nil || len(got) == 0 || batch == 1 {
		return s.fetched(ctx, &o, got, err)
	}
	more, err := p.fetch(ctx, &o, batch-1, true)
	return s.fetched(ctx, &o, append(got, more...), err)
}

// fetch sends one pull request for up to batch messages: no-wait, or one
// that stays open until a little before ctx's deadline.
func (p *pullSub) fetch(ctx context.Context, o *pullOpts, batch int, noWait bool) ([]*natsio.Msg, error) {
	fopts := o.fetchOptions(ctx, batch)
	if noWait {
		fopts = append(fopts, natsio.FetchNoWait())
	}
	return p.js.inner.Fetch(ctx, p.stream, p.consumer, fopts...)
}

// fetched is Fetch's outcome: the messages when there are any (an error
// after them is dropped, as nats.go does), else the error.
func (s *Subscription) fetched(ctx context.Context, o *pullOpts, got []*natsio.Msg, err error) ([]*Msg, error) {
	if len(got) == 0 {
		if err != nil {
			return nil, o.fetchError(ctx, err)
		}
		// The request expired a little before the wait's end, which
		// nats.go reports (its error is the wait's).
		<-ctx.Done()
		return nil, o.endError(ctx)
	}
	msgs := make([]*Msg, len(got))
	for i, m := range got {
		msgs[i] = newMsg(m, s)
	}
	return msgs, nil
}

// MessageBatch is what FetchBatch returns: the messages on Messages (closed
// at the end), then Error says why it ended early (nil for the batch full
// or the request expired); Done receives once at the end.
type MessageBatch interface {
	Messages() <-chan *Msg
	Error() error
	Done() <-chan struct{}
}

type messageBatch struct {
	msgs chan *Msg
	done chan struct{}
	mu   sync.Mutex
	err  error
}

func (b *messageBatch) Messages() <-chan *Msg { return b.msgs }
func (b *messageBatch) Done() <-chan struct{} { return b.done }
func (b *messageBatch) Error() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.err
}

// FetchBatch is Fetch without waiting: the batch's messages are handed out
// on the MessageBatch as they arrive, from one pull request that stays
// open until the wait is nearly over; its expiry is no error.
func (s *Subscription) FetchBatch(batch int, opts ...PullOpt) (MessageBatch, error) {
	p, o, ctx, cancel, err := s.fetchStart(batch, opts)
	if err != nil {
		return nil, err
	}
	inner, err := p.js.inner.FetchMessages(ctx, p.stream, p.consumer, o.fetchOptions(ctx, batch)...)
	if err != nil {
		cancel()
		return nil, o.fetchError(ctx, err)
	}
	b := &messageBatch{msgs: make(chan *Msg, batch), done: make(chan struct{}, 1)}
	go func() {
		defer cancel()
		defer func() { b.done <- struct{}{} }()
		defer close(b.msgs)
		for {
			m, err := inner.Next(ctx)
			if err == nil {
				b.msgs <- newMsg(m, s)
				continue
			}
			inner.Stop()
			if !errors.Is(err, natsio.ErrDone) {
				b.mu.Lock()
				b.err = o.fetchError(ctx, err)
				b.mu.Unlock()
			}
			return
		}
	}()
	return b, nil
}

// ConsumerInfo is the info of the consumer the subscription reads.
func (s *Subscription) ConsumerInfo() (*ConsumerInfo, error) {
	var js *jsContext
	var stream, consumer string
	switch {
	case s == nil:
		return nil, ErrBadSubscription
	case s.pull != nil:
		js, stream, consumer = s.pull.js, s.pull.stream, s.pull.consumer
	case s.push != nil && s.push.ordered == nil:
		js, stream, consumer = s.push.js, s.push.stream, s.push.consumer
	default:
		return nil, ErrTypeSubscription
	}
	ctx, cancel := context.WithTimeout(context.Background(), js.maxWait)
	defer cancel()
	return consumerInfo(js.inner.ConsumerInfo(ctx, stream, consumer))
}
