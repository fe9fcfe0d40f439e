package jetstream

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	natsio "github.com/libnatsio/natsio/bindings/go"
	"github.com/libnatsio/natsio/bindings/go/nats"
)

// The publish retry defaults: a publish that finds no stream ("no
// responders") is sent again this many times, this long apart.
const (
	DefaultPubRetryWait     = 250 * time.Millisecond
	DefaultPubRetryAttempts = 2
)

// The schedules WithScheduleCron takes besides cron expressions.
const (
	ScheduleYearly  = "@yearly"
	ScheduleMonthly = "@monthly"
	ScheduleWeekly  = "@weekly"
	ScheduleDaily   = "@daily"
	ScheduleHourly  = "@hourly"
)

// PublishOpt configures a JetStream publish.
type PublishOpt func(*pubOpts) error

type pubOpts struct {
	binding []natsio.PubOpt
	// headers are set on the message's headers (message schedules).
	headers   map[string]string
	stallWait time.Duration
}

func pubOpt(o natsio.PubOpt) PublishOpt {
	return func(opts *pubOpts) error { opts.binding = append(opts.binding, o); return nil }
}

func headerOpt(name, value string) PublishOpt {
	return func(opts *pubOpts) error {
		if opts.headers == nil {
			opts.headers = map[string]string{}
		}
		opts.headers[name] = value
		return nil
	}
}

func WithMsgID(id string) PublishOpt            { return pubOpt(natsio.MsgID(id)) }
func WithExpectStream(stream string) PublishOpt { return pubOpt(natsio.ExpectStream(stream)) }
func WithExpectLastSequence(seq uint64) PublishOpt {
	return pubOpt(natsio.ExpectLastSequence(seq))
}
func WithExpectLastSequencePerSubject(seq uint64) PublishOpt {
	return pubOpt(natsio.ExpectLastSequencePerSubject(seq))
}

// WithExpectLastSequenceForSubject has the stream store the message only
// if the last message on subject (which may hold wildcards) has sequence
// seq.
func WithExpectLastSequenceForSubject(seq uint64, subject string) PublishOpt {
	return func(opts *pubOpts) error {
		if subject == "" {
			return fmt.Errorf("%w: subject cannot be empty", ErrInvalidOption)
		}
		opts.binding = append(opts.binding, natsio.ExpectLastSequenceForSubject(seq, subject))
		return nil
	}
}
func WithExpectLastMsgID(id string) PublishOpt { return pubOpt(natsio.ExpectLastMsgID(id)) }
func WithMsgTTL(d time.Duration) PublishOpt    { return pubOpt(natsio.MsgTTL(d)) }

// WithRetryWait is how long a publish that found no stream ("no
// responders") waits before each retry (default DefaultPubRetryWait;
// whole milliseconds, a fraction counting as one). A wait <= 0 is
// refused (ErrInvalidOption).
func WithRetryWait(d time.Duration) PublishOpt {
	return func(opts *pubOpts) error {
		if d <= 0 {
			return fmt.Errorf("%w: retry wait should be more than 0", ErrInvalidOption)
		}
		opts.binding = append(opts.binding, natsio.RetryWait(d))
		return nil
	}
}

// WithRetryAttempts is how many times a publish that found no stream
// ("no responders") is sent again before it fails with
// ErrNoStreamResponse (default DefaultPubRetryAttempts; 0: none), as in
// nats.go; a negative num is refused (ErrInvalidOption). The core retries,
// for Publish until ctx ends (its error then) and for PublishAsync until
// its ack deadline at the latest; the future has the outcome after the
// last retry.
func WithRetryAttempts(num int) PublishOpt {
	return func(opts *pubOpts) error {
		if num < 0 {
			return fmt.Errorf("%w: retry attempts cannot be negative", ErrInvalidOption)
		}
		opts.binding = append(opts.binding, natsio.RetryAttempts(num))
		return nil
	}
}

// defaultStallWait is how long a PublishAsync waits for room under
// WithPublishAsyncMaxPending, as nats.go's, unless WithStallWait says.
const defaultStallWait = 200 * time.Millisecond

// stallPoll is the binding context's own stall wait: a stalled
// PublishAsync waits for room this long at a time, again and again until
// its stall wait has passed, so that each publish can have its own.
const stallPoll = 10 * time.Millisecond

// WithStallWait is how long PublishAsync waits for room when
// WithPublishAsyncMaxPending publishes already await their ack, before
// it fails with ErrTooManyStalledMsgs (default 200 ms). Publish and
// PublishMsg refuse it (ErrInvalidOption).
func WithStallWait(ttl time.Duration) PublishOpt {
	return func(opts *pubOpts) error {
		if ttl <= 0 {
			return fmt.Errorf("%w: stall wait should be more than 0", ErrInvalidOption)
		}
		opts.stallWait = ttl
		return nil
	}
}

// WithScheduleAt schedules the message (sent to a stream with
// AllowMsgSchedules) to be published once, at t, to WithScheduleTarget.
func WithScheduleAt(t time.Time) PublishOpt {
	return headerOpt(ScheduleHeader, "@at "+t.UTC().Format(time.RFC3339))
}

// WithScheduleEvery schedules the message to be published every d (at
// least a second).
func WithScheduleEvery(d time.Duration) PublishOpt {
	if d < time.Second {
		return invalidOption("schedule interval must be at least 1s")
	}
	return headerOpt(ScheduleHeader, "@every "+d.String())
}

// WithScheduleCron schedules the message by a cron expression or one of
// the Schedule* shorthands.
func WithScheduleCron(expr string) PublishOpt {
	if expr == "" {
		return invalidOption("cron expression cannot be empty")
	}
	return headerOpt(ScheduleHeader, expr)
}

// WithScheduleTarget is the subject a scheduled message is published to.
func WithScheduleTarget(subject string) PublishOpt {
	if subject == "" {
		return invalidOption("schedule target subject cannot be empty")
	}
	return headerOpt(ScheduleTargetHeader, subject)
}

// WithScheduleSource has each run publish the last message of subject
// instead of the schedule's own payload.
func WithScheduleSource(subject string) PublishOpt {
	if subject == "" {
		return invalidOption("schedule source subject cannot be empty")
	}
	return headerOpt(ScheduleSourceHeader, subject)
}

// WithScheduleTTL is the time to live of the messages a schedule
// publishes.
func WithScheduleTTL(d time.Duration) PublishOpt {
	if d <= 0 {
		return invalidOption("schedule TTL must be greater than 0")
	}
	return headerOpt(ScheduleTTLHeader, d.String())
}

// WithScheduleTTLNever has the messages a schedule publishes never expire.
func WithScheduleTTLNever() PublishOpt { return headerOpt(ScheduleTTLHeader, "never") }

// WithScheduleTimeZone is the time zone of a cron schedule.
func WithScheduleTimeZone(zone string) PublishOpt {
	if zone == "" {
		return invalidOption("schedule time zone cannot be empty")
	}
	return headerOpt(ScheduleTimeZoneHeader, zone)
}

// WithScheduleRollup has each message a schedule publishes replace the
// earlier ones of its subject.
func WithScheduleRollup() PublishOpt { return headerOpt(ScheduleRollupHeader, MsgRollupSubject) }

func invalidOption(reason string) PublishOpt {
	return func(*pubOpts) error { return fmt.Errorf("%w: %s", ErrInvalidOption, reason) }
}

func publishOptions(msg *nats.Msg, opts []PublishOpt) (*pubOpts, error) {
	o := &pubOpts{}
	for _, opt := range opts {
		if err := opt(o); err != nil {
			return nil, err
		}
	}
	header := msg.Header
	if len(o.headers) > 0 {
		header = make(nats.Header, len(msg.Header)+len(o.headers))
		for k, v := range msg.Header {
			header[k] = v
		}
		for k, v := range o.headers {
			header.Set(k, v)
		}
	}
	if len(header) > 0 {
		o.binding = append([]natsio.PubOpt{natsio.PubHeader(header)}, o.binding...)
	}
	return o, nil
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
	return &PubAck{Stream: a.Stream, Sequence: a.Sequence, Duplicate: a.Duplicate, Domain: a.Domain, Value: a.Value}
}

func (js *jetStream) Publish(ctx context.Context, subject string, data []byte, opts ...PublishOpt) (*PubAck, error) {
	return js.PublishMsg(ctx, &nats.Msg{Subject: subject, Data: data}, opts...)
}

func (js *jetStream) PublishMsg(ctx context.Context, msg *nats.Msg, opts ...PublishOpt) (*PubAck, error) {
	o, err := publishOptions(msg, opts)
	if err != nil {
		return nil, err
	}
	if o.stallWait > 0 {
		return nil, fmt.Errorf("%w: stall wait cannot be set to sync publish", ErrInvalidOption)
	}
	// The core retries "no responders" (WithRetryAttempts, WithRetryWait).
	ack, err := js.publisher().inner.Publish(ctx, msg.Subject, msg.Data, o.binding...)
	if err != nil {
		// ctx ended during the publish or its retries: its error, as
		// nats.go's (the core may time out at ctx's deadline a moment
		// before ctx's own timer fires).
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if _, bounded := ctx.Deadline(); bounded && errors.Is(err, natsio.ErrTimeout) {
			return nil, context.DeadlineExceeded
		}
		return nil, publishError(err)
	}
	return pubAck(ack), nil
}

// MsgAckHandler is called with each asynchronous publish's ack
// (WithPublishAsyncAckHandler).
type MsgAckHandler func(JetStream, *nats.Msg, *PubAck)

// MsgErrHandler is called with each asynchronous publish that failed
// (WithPublishAsyncErrHandler).
type MsgErrHandler func(JetStream, *nats.Msg, error)

// PubAckFuture is the outcome of PublishAsync: its ack on Ok or its error
// on Err.
type PubAckFuture interface {
	Ok() <-chan *PubAck
	Err() <-chan error
	Msg() *nats.Msg
}

type pubAckFuture struct {
	msg  *nats.Msg
	ok   chan *PubAck
	err  chan error
	once sync.Once
}

func (f *pubAckFuture) Ok() <-chan *PubAck { return f.ok }
func (f *pubAckFuture) Err() <-chan error  { return f.err }
func (f *pubAckFuture) Msg() *nats.Msg     { return f.msg }

// publisher is the publishing side of a context: the binding context its
// asynchronous publishes go through and the futures awaiting their
// outcome. CleanupPublisher replaces it with a fresh one.
type publisher struct {
	inner *natsio.JetStream
	// cleaned is closed by CleanupPublisher.
	cleaned chan struct{}
	mu      sync.Mutex
	pending map[*pubAckFuture]struct{}
}

func newPublisher(inner *natsio.JetStream) *publisher {
	return &publisher{inner: inner, cleaned: make(chan struct{}), pending: map[*pubAckFuture]struct{}{}}
}

func (js *jetStream) publisher() *publisher {
	js.pubMu.Lock()
	defer js.pubMu.Unlock()
	return js.pub
}

// resolve hands f its outcome once (a cleanup may have given it one
// already) and calls the context's handler.
func (js *jetStream) resolve(p *publisher, f *pubAckFuture, ack *PubAck, err error) {
	f.once.Do(func() {
		p.mu.Lock()
		delete(p.pending, f)
		p.mu.Unlock()
		if err != nil {
			if js.opts.errHandler != nil {
				js.opts.errHandler(js, f.msg, err)
			}
			f.err <- err
			return
		}
		if js.opts.ackHandler != nil {
			js.opts.ackHandler(js, f.msg, ack)
		}
		f.ok <- ack
	})
}

func (js *jetStream) PublishAsync(subject string, data []byte, opts ...PublishOpt) (PubAckFuture, error) {
	return js.PublishMsgAsync(&nats.Msg{Subject: subject, Data: data}, opts...)
}

func (js *jetStream) PublishMsgAsync(msg *nats.Msg, opts ...PublishOpt) (PubAckFuture, error) {
	o, err := publishOptions(msg, opts)
	if err != nil {
		return nil, err
	}
	if msg.Reply != "" {
		return nil, ErrAsyncPublishReplySubjectSet
	}
	p := js.publisher()
	inner, err := p.publishAsync(msg, o)
	if err != nil {
		return nil, translate(err)
	}
	f := &pubAckFuture{msg: msg, ok: make(chan *PubAck, 1), err: make(chan error, 1)}
	p.mu.Lock()
	p.pending[f] = struct{}{}
	p.mu.Unlock()
	go js.await(p, f, inner)
	return f, nil
}

// publishAsync starts an asynchronous publish, waiting for room up to
// its stall wait.
func (p *publisher) publishAsync(msg *nats.Msg, o *pubOpts) (*natsio.PubAckFuture, error) {
	stallWait := o.stallWait
	if stallWait == 0 {
		stallWait = defaultStallWait
	}
	for deadline := time.Now().Add(stallWait); ; {
		// Each try waits up to stallPoll for room.
		inner, err := p.inner.PublishAsync(msg.Subject, msg.Data, o.binding...)
		if !errors.Is(err, natsio.ErrTooManyStalledMsgs) || !time.Now().Before(deadline) {
			return inner, err
		}
	}
}

// await gives f the outcome of its publish (the core has retried "no
// responders", WithRetryAttempts).
func (js *jetStream) await(p *publisher, f *pubAckFuture, inner *natsio.PubAckFuture) {
	ack, err := inner.Wait(context.Background())
	if err != nil {
		js.resolve(p, f, nil, publishError(err))
		return
	}
	js.resolve(p, f, pubAck(ack), nil)
}

func (js *jetStream) PublishAsyncPending() int { return js.publisher().inner.PublishAsyncPending() }

// PublishAsyncComplete is closed once every asynchronous publish has its
// outcome, or CleanupPublisher dropped them.
func (js *jetStream) PublishAsyncComplete() <-chan struct{} {
	p := js.publisher()
	done := make(chan struct{})
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		select {
		case <-p.cleaned:
			cancel()
		case <-ctx.Done():
		}
	}()
	go func() {
		defer cancel()
		_ = p.inner.PublishAsyncComplete(ctx)
		close(done)
	}()
	return done
}

// CleanupPublisher drops the pending asynchronous publishes: each fails
// with ErrJetStreamPublisherClosed (and goes to the error handler), and
// their acks, should they come, are ignored. Later publishes go through
// a fresh binding context, so the JetStream stays usable.
func (js *jetStream) CleanupPublisher() {
	fresh, err := js.nc.Binding().JetStream(js.opts.binding...)
	js.pubMu.Lock()
	old := js.pub
	if err == nil {
		js.pub = newPublisher(fresh)
	}
	js.pubMu.Unlock()
	if err == nil {
		close(old.cleaned)
		if old.inner != js.inner {
			old.inner.Close()
		}
	}
	old.mu.Lock()
	var dropped []*pubAckFuture
	for f := range old.pending {
		dropped = append(dropped, f)
	}
	old.mu.Unlock()
	for _, f := range dropped {
		js.resolve(old, f, nil, ErrJetStreamPublisherClosed)
	}
}
