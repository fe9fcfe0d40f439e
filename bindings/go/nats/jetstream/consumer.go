package jetstream

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	natsio "github.com/libnatsio/natsio/bindings/go"
	"github.com/libnatsio/natsio/bindings/go/nats"
)

// Consumer is a handle on a consumer.
type Consumer interface {
	Fetch(batch int, opts ...FetchOpt) (MessageBatch, error)
	FetchBytes(maxBytes int, opts ...FetchOpt) (MessageBatch, error)
	FetchNoWait(batch int) (MessageBatch, error)
	Consume(handler MessageHandler, opts ...PullConsumeOpt) (ConsumeContext, error)
	Messages(opts ...PullMessagesOpt) (MessagesContext, error)
	Next(opts ...FetchOpt) (Msg, error)
	Info(context.Context) (*ConsumerInfo, error)
	CachedInfo() *ConsumerInfo
}

// MessageHandler handles the messages of Consume.
type MessageHandler func(msg Msg)

// MessageBatch is the outcome of a Fetch: its messages arrive on Messages,
// which is closed at the end; Error says then why it ended early.
type MessageBatch interface {
	Messages() <-chan Msg
	Error() error
}

// ConsumeContext controls a Consume.
type ConsumeContext interface {
	Stop()
	Drain()
	Closed() <-chan struct{}
}

// MessagesContext is a continuous pull read with Next.
type MessagesContext interface {
	Next(opts ...NextOpt) (Msg, error)
	Stop()
	Drain()
}

// NextOpt configures MessagesContext.Next.
type NextOpt func(*nextConfig) error

type nextConfig struct {
	wait time.Duration
	ctx  context.Context
}

// NextMaxWait bounds how long MessagesContext.Next waits (nats.ErrTimeout
// then). Excludes NextContext.
func NextMaxWait(d time.Duration) NextOpt {
	return func(c *nextConfig) error { c.wait = d; return nil }
}

// NextContext ends MessagesContext.Next when ctx ends, with ctx's error.
// Excludes NextMaxWait.
func NextContext(ctx context.Context) NextOpt {
	return func(c *nextConfig) error { c.ctx = ctx; return nil }
}

func consumerInfo(info *natsio.ConsumerInfo, err error) (*ConsumerInfo, error) {
	if err != nil {
		return nil, translate(err)
	}
	var out ConsumerInfo
	if err := json.Unmarshal(info.Raw, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

type pullConsumer struct {
	js     *jetStream
	stream string
	name   string
	info   *ConsumerInfo
}

func (js *jetStream) consumerOp(ctx context.Context, stream string, cfg ConsumerConfig,
	op func(context.Context, string, natsio.ConsumerConfig) (*natsio.ConsumerInfo, error)) (Consumer, error) {
	if err := checkConsumerConfig(stream, cfg); err != nil {
		return nil, err
	}
	var bcfg natsio.ConsumerConfig
	if err := convert(cfg, &bcfg); err != nil {
		return nil, err
	}
	info, err := consumerInfo(op(ctx, stream, bcfg))
	if err != nil {
		return nil, err
	}
	return &pullConsumer{js: js, stream: stream, name: info.Name, info: info}, nil
}

// checkConsumerConfig refuses what the binding refuses before asking the
// server, with the errors nats.go gets from the server for it.
func checkConsumerConfig(stream string, cfg ConsumerConfig) error {
	if err := validateStreamName(stream); err != nil {
		return err
	}
	if cfg.FilterSubject != "" && len(cfg.FilterSubjects) > 0 {
		return ErrDuplicateFilterSubjects
	}
	for _, f := range cfg.FilterSubjects {
		if f == "" {
			return ErrEmptyFilter
		}
	}
	return nil
}

func (js *jetStream) CreateOrUpdateConsumer(ctx context.Context, stream string, cfg ConsumerConfig) (Consumer, error) {
	return js.consumerOp(ctx, stream, cfg, js.inner.CreateOrUpdateConsumer)
}

func (js *jetStream) CreateConsumer(ctx context.Context, stream string, cfg ConsumerConfig) (Consumer, error) {
	return js.consumerOp(ctx, stream, cfg, js.inner.CreateConsumer)
}

func (js *jetStream) UpdateConsumer(ctx context.Context, stream string, cfg ConsumerConfig) (Consumer, error) {
	return js.consumerOp(ctx, stream, cfg, js.inner.UpdateConsumer)
}

// Consumer is the pull consumer name of stream; ErrNotPullConsumer if it
// has a deliver subject (a push consumer: PushConsumer binds it), as in
// nats.go.
func (js *jetStream) Consumer(ctx context.Context, stream, name string) (Consumer, error) {
	if err := validateStreamName(stream); err != nil {
		return nil, err
	}
	info, err := consumerInfo(js.inner.ConsumerInfo(ctx, stream, name))
	if err != nil {
		return nil, err
	}
	if info.Config.DeliverSubject != "" {
		return nil, ErrNotPullConsumer
	}
	return &pullConsumer{js: js, stream: stream, name: name, info: info}, nil
}

func (js *jetStream) DeleteConsumer(ctx context.Context, stream, name string) error {
	if err := validateStreamName(stream); err != nil {
		return err
	}
	return translate(js.inner.DeleteConsumer(ctx, stream, name))
}

// ConsumerPauseResponse is the server's answer to PauseConsumer and
// ResumeConsumer.
type ConsumerPauseResponse struct {
	Paused         bool          `json:"paused"`
	PauseUntil     time.Time     `json:"pause_until"`
	PauseRemaining time.Duration `json:"pause_remaining,omitempty"`
}

func pauseResponse(r *natsio.ConsumerPauseResponse, err error) (*ConsumerPauseResponse, error) {
	if err != nil {
		return nil, translate(err)
	}
	return &ConsumerPauseResponse{Paused: r.Paused, PauseUntil: r.PauseUntil, PauseRemaining: r.PauseRemaining}, nil
}

func (js *jetStream) PauseConsumer(ctx context.Context, stream, consumer string, pauseUntil time.Time) (*ConsumerPauseResponse, error) {
	if err := validateStreamName(stream); err != nil {
		return nil, err
	}
	return pauseResponse(js.inner.PauseConsumer(ctx, stream, consumer, pauseUntil))
}

func (js *jetStream) ResumeConsumer(ctx context.Context, stream, consumer string) (*ConsumerPauseResponse, error) {
	if err := validateStreamName(stream); err != nil {
		return nil, err
	}
	return pauseResponse(js.inner.ResumeConsumer(ctx, stream, consumer))
}

func (c *pullConsumer) Info(ctx context.Context) (*ConsumerInfo, error) {
	info, err := consumerInfo(c.js.inner.ConsumerInfo(ctx, c.stream, c.name))
	if err == nil {
		c.info = info
	}
	return info, err
}

func (c *pullConsumer) CachedInfo() *ConsumerInfo { return c.info }

// ---- fetch

// The pull defaults: how long a pull request waits (a Fetch's FetchMaxWait,
// a Consume's PullExpiry) and how many messages a Consume keeps requested.
const (
	DefaultExpires     = 30 * time.Second
	DefaultMaxMessages = 500
)

// FetchOpt configures Fetch, FetchBytes and Next.
type FetchOpt func(*fetchConfig) error

type fetchConfig struct {
	maxWait    time.Duration
	maxWaitSet bool
	heartbeat  time.Duration
	// ctx is FetchContext's (nil: none).
	ctx context.Context
	// binding are the options passed on as they are (priority groups,
	// max bytes).
	binding []natsio.FetchOpt
	// allowMaxBytes: FetchMaxBytes is Fetch's only, as in nats.go.
	allowMaxBytes bool
	priorityOpts
}

// priorityOpts are the priority group and priority of a Fetch's or a
// Consume's pull requests, checked once all options are applied.
type priorityOpts struct {
	group    string
	priority uint8
}

// check refuses a priority out of range, or one above 0 without a
// priority group, wrapping ErrInvalidOption as nats.go's option errors.
func (p priorityOpts) check() error {
	if p.priority > 9 {
		return fmt.Errorf("%w: priority should be between 0 and 9", ErrInvalidOption)
	}
	if p.priority > 0 && p.group == "" {
		return fmt.Errorf("%w: priority group is required for a priority above 0", ErrInvalidOption)
	}
	return nil
}

// FetchMaxWait is how long a Fetch waits for its batch (default 30 s).
func FetchMaxWait(d time.Duration) FetchOpt {
	return func(c *fetchConfig) error {
		if d <= 0 {
			return fmt.Errorf("%w: timeout value must be greater than 0", ErrInvalidOption)
		}
		c.maxWait, c.maxWaitSet = d, true
		return nil
	}
}

// FetchHeartbeat asks the server for idle heartbeats while a Fetch waits.
func FetchHeartbeat(d time.Duration) FetchOpt {
	return func(c *fetchConfig) error { c.heartbeat = d; return nil }
}

// FetchContext ends the Fetch (or Next) when ctx ends, with ctx's error;
// ctx's deadline sets the pull request's expiry (what remains, less a
// tenth of it, at most a second). Excludes FetchMaxWait.
func FetchContext(ctx context.Context) FetchOpt {
	return func(c *fetchConfig) error {
		if deadline, ok := ctx.Deadline(); ok {
			remaining := time.Until(deadline)
			if remaining <= 0 {
				return fmt.Errorf("%w: context deadline already exceeded", ErrInvalidOption)
			}
			c.maxWait = remaining - min(remaining/10, time.Second)
		}
		c.ctx = ctx
		return nil
	}
}

// FetchMaxBytes (Fetch only) also ends the batch once its messages reach
// maxBytes bytes, as the server counts them.
func FetchMaxBytes(maxBytes int) FetchOpt {
	return func(c *fetchConfig) error {
		if maxBytes <= 0 {
			return fmt.Errorf("%w: max bytes must be greater than 0", ErrInvalidOption)
		}
		if !c.allowMaxBytes {
			return fmt.Errorf("%w: FetchMaxBytes is only supported by Fetch", ErrInvalidOption)
		}
		c.binding = append(c.binding, natsio.FetchMaxBytes(maxBytes))
		return nil
	}
}

// FetchPriorityGroup pulls for priority group group of a consumer with
// priority groups (server 2.11+).
func FetchPriorityGroup(group string) FetchOpt {
	return func(c *fetchConfig) error {
		c.group = group
		c.binding = append(c.binding, natsio.FetchPriorityGroup(group))
		return nil
	}
}

// FetchMinPending (overflow priority policy): the server serves the pull
// only while the consumer has at least min messages pending. Needs
// FetchPriorityGroup.
func FetchMinPending(min int64) FetchOpt {
	return func(c *fetchConfig) error {
		if min < 1 {
			return fmt.Errorf("%w: min pending should be more than 0", ErrInvalidOption)
		}
		c.binding = append(c.binding, natsio.FetchMinPending(min))
		return nil
	}
}

// FetchMinAckPending (overflow priority policy): the server serves the
// pull only while at least min messages await their ack. Needs
// FetchPriorityGroup.
func FetchMinAckPending(min int64) FetchOpt {
	return func(c *fetchConfig) error {
		if min < 1 {
			return fmt.Errorf("%w: min ack pending should be more than 0", ErrInvalidOption)
		}
		c.binding = append(c.binding, natsio.FetchMinAckPending(min))
		return nil
	}
}

// FetchPrioritized (prioritized priority policy, server 2.12+) is the
// pull request's priority, from 0 (the highest, the default) to 9: the
// server serves the consumer's waiting requests of a lower number first.
// Needs FetchPriorityGroup when above 0; above 9, or above 0 without a
// group, the Fetch (or Next) fails with an error wrapping ErrInvalidOption
// before anything is sent.
func FetchPrioritized(priority uint8) FetchOpt {
	return func(c *fetchConfig) error {
		c.priority = priority
		c.binding = append(c.binding, natsio.FetchPriority(int(priority)))
		return nil
	}
}

// fetchOptions applies opts over the defaults; extra are the caller's
// own binding options (batch size, no wait).
func fetchOptions(opts []FetchOpt, allowMaxBytes bool, extra ...natsio.FetchOpt) ([]natsio.FetchOpt, *fetchConfig, error) {
	cfg := &fetchConfig{maxWait: DefaultExpires, allowMaxBytes: allowMaxBytes}
	for _, o := range opts {
		if err := o(cfg); err != nil {
			return nil, nil, err
		}
	}
	if cfg.ctx != nil && cfg.maxWaitSet {
		return nil, nil, fmt.Errorf("%w: cannot specify both FetchContext and FetchMaxWait", ErrInvalidOption)
	}
	if err := cfg.check(); err != nil {
		return nil, nil, err
	}
	out := append([]natsio.FetchOpt{natsio.FetchExpires(cfg.maxWait)}, extra...)
	if cfg.heartbeat > 0 {
		out = append(out, natsio.FetchHeartbeat(cfg.heartbeat))
	}
	return append(out, cfg.binding...), cfg, nil
}

// context is FetchContext's context, else the background.
func (c *fetchConfig) context() context.Context {
	if c.ctx != nil {
		return c.ctx
	}
	return context.Background()
}

type fetchResult struct {
	msgs chan Msg
	err  error
}

func (b *fetchResult) Messages() <-chan Msg { return b.msgs }
func (b *fetchResult) Error() error         { return b.err }

// fetchBuffer bounds the channel of a batch, which holds up to its count:
// the reading goroutine never waits on a program that stops reading, as
// nats.go's never does, without FetchBytes's million messages allocating
// 16 MB ahead.
const fetchBuffer = 4096

// fetch starts the binding's streamed fetch and hands each message out on
// the batch's channel as it arrives, as nats.go's Fetch returns at once.
func (c *pullConsumer) fetch(ctx context.Context, opts []natsio.FetchOpt, batch int) (MessageBatch, error) {
	inner, err := c.js.inner.FetchMessages(ctx, c.stream, c.name, opts...)
	if err != nil {
		return nil, translate(err)
	}
	b := &fetchResult{msgs: make(chan Msg, min(max(batch, 1), fetchBuffer))}
	go func() {
		defer close(b.msgs)
		defer inner.Stop()
		for {
			m, err := inner.Next(ctx)
			switch {
			case err == nil:
				b.msgs <- &jsMsg{m}
				continue
			case ctx.Err() != nil:
				b.err = ctx.Err()
			case errors.Is(err, natsio.ErrTimeout):
				// Only missed heartbeats end a fetch with a timeout; an
				// expiry is the batch's end, as in nats.go.
				b.err = ErrNoHeartbeat
			case maxBytesExceeded(err):
				// The next message does not fit the byte budget: the
				// batch ends there, without an error, as in nats.go.
			case !errors.Is(err, natsio.ErrDone):
				b.err = translate(err)
			}
			return
		}
	}()
	return b, nil
}

func (c *pullConsumer) Fetch(batch int, opts ...FetchOpt) (MessageBatch, error) {
	o, cfg, err := fetchOptions(opts, true, natsio.FetchMaxMessages(batch))
	if err != nil {
		return nil, err
	}
	return c.fetch(cfg.context(), o, batch)
}

func (c *pullConsumer) FetchBytes(maxBytes int, opts ...FetchOpt) (MessageBatch, error) {
	const batch = 1000000
	o, cfg, err := fetchOptions(opts, false, natsio.FetchMaxBytes(maxBytes), natsio.FetchMaxMessages(batch))
	if err != nil {
		return nil, err
	}
	return c.fetch(cfg.context(), o, batch)
}

func (c *pullConsumer) FetchNoWait(batch int) (MessageBatch, error) {
	o, _, _ := fetchOptions(nil, false, natsio.FetchMaxMessages(batch), natsio.FetchNoWait())
	return c.fetch(context.Background(), o, batch)
}

// Next waits for one message (FetchMaxWait, default 30 s): nats.ErrTimeout
// when none came; FetchContext's error when its context ended first.
func (c *pullConsumer) Next(opts ...FetchOpt) (Msg, error) {
	o, cfg, err := fetchOptions(opts, false)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(cfg.context(), cfg.maxWait+5*time.Second)
	defer cancel()
	m, err := c.js.inner.Next(ctx, c.stream, c.name, o...)
	if cfg.ctx != nil && cfg.ctx.Err() != nil {
		return nil, cfg.ctx.Err()
	}
	if errors.Is(err, natsio.ErrNoMessages) || errors.Is(err, natsio.ErrTimeout) {
		return nil, nats.ErrTimeout
	}
	if err != nil {
		return nil, translate(err)
	}
	return &jsMsg{m}, nil
}

// ---- consume

// PullConsumeOpt configures Consume.
type PullConsumeOpt interface{ configureConsume(*pullConfig) error }

// PullMessagesOpt configures Messages.
type PullMessagesOpt interface{ configureMessages(*pullConfig) error }

type pullConfig struct {
	opts       []natsio.ConsumeOpt
	errHandler ConsumeErrHandler
	// StopAfter's count, and what its pull requests ask for (opts as
	// fetch options).
	stopAfter             int
	limitSize             bool // PullMaxMessagesWithBytesLimit
	maxMessages, maxBytes int
	expiry, heartbeat     time.Duration
	fetch                 []natsio.FetchOpt
	priorityOpts
}

// ConsumeErrHandlerFunc receives the errors of a Consume.
type ConsumeErrHandlerFunc func(consumeCtx ConsumeContext, err error)

// ConsumeErrHandler is the Consume option that sets its error handler.
type ConsumeErrHandler ConsumeErrHandlerFunc

type (
	// PullMaxMessages is how many messages are kept requested.
	PullMaxMessages int
	// PullMaxBytes bounds the requests by bytes instead.
	PullMaxBytes int
	// PullExpiry is each pull request's lifetime.
	PullExpiry time.Duration
	// PullHeartbeat is the idle heartbeat of each pull request.
	PullHeartbeat time.Duration
	// PullThresholdMessages is when more messages are requested.
	PullThresholdMessages int
	// PullThresholdBytes, with PullMaxBytes, is when more bytes are
	// requested: once those requested and not delivered fall to it.
	PullThresholdBytes int
	// PullPriorityGroup consumes for a priority group of a consumer with
	// priority groups (server 2.11+).
	PullPriorityGroup string
	// PullMinPending (overflow priority policy): the server serves the
	// pulls only while the consumer has at least this many messages
	// pending. Needs PullPriorityGroup.
	PullMinPending int
	// PullMinAckPending (overflow priority policy): served only while at
	// least this many messages await their ack. Needs PullPriorityGroup.
	PullMinAckPending int
	// PullPrioritized (prioritized priority policy, server 2.12+) is the
	// priority of the pull requests, from 0 (the highest, the default) to
	// 9: the server serves the consumer's waiting requests of a lower
	// number first. Needs PullPriorityGroup when above 0; above 9, or
	// above 0 without a group, Consume or Messages fails with an error
	// wrapping ErrInvalidOption before anything is sent.
	// An option of both Consume and Messages.
	PullPrioritized uint8
)

func (o PullThresholdBytes) configureConsume(c *pullConfig) error {
	c.opts = append(c.opts, natsio.PullThresholdBytes(int(o)))
	return nil
}
func (o PullThresholdBytes) configureMessages(c *pullConfig) error { return o.configureConsume(c) }
func (o PullPriorityGroup) configureConsume(c *pullConfig) error {
	c.group = string(o)
	c.opts = append(c.opts, natsio.PullPriorityGroup(string(o)))
	c.fetch = append(c.fetch, natsio.FetchPriorityGroup(string(o)))
	return nil
}
func (o PullPriorityGroup) configureMessages(c *pullConfig) error { return o.configureConsume(c) }
func (o PullMinPending) configureConsume(c *pullConfig) error {
	if o < 1 {
		return fmt.Errorf("%w: min pending should be more than 0", ErrInvalidOption)
	}
	c.opts = append(c.opts, natsio.PullMinPending(int64(o)))
	c.fetch = append(c.fetch, natsio.FetchMinPending(int64(o)))
	return nil
}
func (o PullMinPending) configureMessages(c *pullConfig) error { return o.configureConsume(c) }
func (o PullMinAckPending) configureConsume(c *pullConfig) error {
	if o < 1 {
		return fmt.Errorf("%w: min pending should be more than 0", ErrInvalidOption)
	}
	c.opts = append(c.opts, natsio.PullMinAckPending(int64(o)))
	c.fetch = append(c.fetch, natsio.FetchMinAckPending(int64(o)))
	return nil
}
func (o PullMinAckPending) configureMessages(c *pullConfig) error { return o.configureConsume(c) }
func (o PullPrioritized) configureConsume(c *pullConfig) error {
	c.priority = uint8(o)
	c.opts = append(c.opts, natsio.PullPriority(int(o)))
	c.fetch = append(c.fetch, natsio.FetchPriority(int(o)))
	return nil
}
func (o PullPrioritized) configureMessages(c *pullConfig) error { return o.configureConsume(c) }

// messagesOpt is an option of Messages only.
type messagesOpt func(*pullConfig) error

func (o messagesOpt) configureMessages(c *pullConfig) error { return o(c) }

// WithMessagesErrOnMissingHeartbeat(false) is how Messages always works
// here: on missed heartbeats the library pulls again and Next keeps
// waiting. true (nats.go's default: Next returns ErrNoHeartbeat) is not
// offered, and refused with ErrInvalidOption rather than ignored.
func WithMessagesErrOnMissingHeartbeat(hbErr bool) PullMessagesOpt {
	return messagesOpt(func(*pullConfig) error {
		if hbErr {
			return fmt.Errorf("%w: missed heartbeats are not reported here: the library pulls again", ErrInvalidOption)
		}
		return nil
	})
}

func (o PullMaxMessages) configureConsume(c *pullConfig) error {
	if o <= 0 {
		return fmt.Errorf("%w: maxMessages size must be at least 1", ErrInvalidOption)
	}
	c.opts, c.maxMessages = append(c.opts, natsio.PullMaxMessages(int(o))), int(o)
	return nil
}
func (o PullMaxMessages) configureMessages(c *pullConfig) error { return o.configureConsume(c) }
func (o PullMaxBytes) configureConsume(c *pullConfig) error {
	if o <= 0 {
		return fmt.Errorf("%w: max bytes must be greater than 0", ErrInvalidOption)
	}
	c.opts, c.maxBytes = append(c.opts, natsio.PullMaxBytes(int(o))), int(o)
	return nil
}
func (o PullMaxBytes) configureMessages(c *pullConfig) error { return o.configureConsume(c) }
func (o PullExpiry) configureConsume(c *pullConfig) error {
	if time.Duration(o) < time.Second {
		return fmt.Errorf("%w: expires value must be at least 1s", ErrInvalidOption)
	}
	c.opts, c.expiry = append(c.opts, natsio.PullExpiry(time.Duration(o))), time.Duration(o)
	return nil
}
func (o PullExpiry) configureMessages(c *pullConfig) error { return o.configureConsume(c) }
func (o PullHeartbeat) configureConsume(c *pullConfig) error {
	if d := time.Duration(o); d < 500*time.Millisecond || d > 30*time.Second {
		return fmt.Errorf("%w: idle_heartbeat value must be within 500ms-30s range", ErrInvalidOption)
	}
	c.opts, c.heartbeat = append(c.opts, natsio.PullHeartbeat(time.Duration(o))), time.Duration(o)
	return nil
}
func (o PullHeartbeat) configureMessages(c *pullConfig) error { return o.configureConsume(c) }
func (o PullThresholdMessages) configureConsume(c *pullConfig) error {
	c.opts = append(c.opts, natsio.PullThresholdMessages(int(o)))
	return nil
}
func (o PullThresholdMessages) configureMessages(c *pullConfig) error { return o.configureConsume(c) }
func (h ConsumeErrHandler) configureConsume(c *pullConfig) error      { c.errHandler = h; return nil }

// consumption is a running Consume or Messages over the binding's
// Consumption (or a pullSource built on it).
type consumption struct {
	inner  pullSource
	once   sync.Once
	closed chan struct{}
	// over: stopped, drained or ended (ended reads it).
	over atomic.Bool
}

// ended: Stop or Drain was called, or the consumption ran out.
func (c *consumption) ended() bool { return c.over.Load() }

func (c *consumption) Stop() { c.over.Store(true); c.inner.Stop() }

// Drain stops pulling (or withdraws a push consumer's subscription) and
// returns at once; what the server already sent is still handed to the
// handler (or returned by Next), then the consumption ends and Closed is
// closed, as in nats.go.
func (c *consumption) Drain() { c.over.Store(true); _ = c.inner.StartDrain() }

func (c *consumption) Closed() <-chan struct{} { return c.closed }

func (c *consumption) Next(opts ...NextOpt) (Msg, error) {
	var cfg nextConfig
	for _, o := range opts {
		if err := o(&cfg); err != nil {
			return nil, err
		}
	}
	if cfg.wait > 0 && cfg.ctx != nil {
		return nil, fmt.Errorf("%w: cannot specify both NextMaxWait and NextContext", ErrInvalidOption)
	}
	return c.next(cfg)
}

func (c *consumption) next(cfg nextConfig) (Msg, error) {
	ctx := cfg.ctx
	if ctx == nil {
		ctx = context.Background()
	}
	if cfg.wait > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, cfg.wait)
		defer cancel()
	}
	m, err := c.inner.Next(ctx)
	switch {
	case err == nil:
		return &jsMsg{m}, nil
	case errors.Is(err, natsio.ErrDone):
		c.over.Store(true)
		return nil, ErrMsgIteratorClosed
	case cfg.ctx != nil && cfg.ctx.Err() != nil:
		return nil, cfg.ctx.Err()
	case ctx.Err() != nil:
		return nil, nats.ErrTimeout
	}
	return nil, translate(err)
}

// run hands every message to handler until the consumption ends.
func (c *consumption) run(handler MessageHandler, errHandler ConsumeErrHandler) {
	defer close(c.closed)
	defer c.over.Store(true)
	for {
		m, err := c.inner.Next(context.Background())
		if err != nil {
			if !errors.Is(err, natsio.ErrDone) && errHandler != nil {
				errHandler(c, translate(err))
			}
			return
		}
		handler(&jsMsg{m})
	}
}

// sourceStarter starts what a Consume or Messages reads, per its options.
type sourceStarter func(cfg *pullConfig) (pullSource, error)

func consume(start sourceStarter, handler MessageHandler, opts []PullConsumeOpt) (ConsumeContext, error) {
	if handler == nil {
		return nil, ErrHandlerRequired
	}
	var cfg pullConfig
	for _, o := range opts {
		if err := o.configureConsume(&cfg); err != nil {
			return nil, err
		}
	}
	if err := cfg.check(); err != nil {
		return nil, err
	}
	inner, err := start(&cfg)
	if err != nil {
		return nil, translate(err)
	}
	c := &consumption{inner: inner, closed: make(chan struct{})}
	if b, ok := inner.(*boundedPull); ok && cfg.errHandler != nil {
		b.report = func(err error) { cfg.errHandler(c, err) }
	}
	go c.run(handler, cfg.errHandler)
	return c, nil
}

func messages(start sourceStarter, opts []PullMessagesOpt) (MessagesContext, error) {
	var cfg pullConfig
	for _, o := range opts {
		if err := o.configureMessages(&cfg); err != nil {
			return nil, err
		}
	}
	if err := cfg.check(); err != nil {
		return nil, err
	}
	inner, err := start(&cfg)
	if err != nil {
		return nil, translate(err)
	}
	return &consumption{inner: inner, closed: make(chan struct{})}, nil
}

// source is the binding's Consume of the consumer, or with StopAfter
// its bounded pull.
func (c *pullConsumer) source(cfg *pullConfig) (pullSource, error) {
	if cfg.boundedPulls() {
		return newBoundedPull(c, cfg), nil
	}
	inner, err := c.js.inner.Consume(context.Background(), c.stream, c.name, cfg.opts...)
	if err != nil {
		return nil, err
	}
	return inner, nil
}

func (c *pullConsumer) Consume(handler MessageHandler, opts ...PullConsumeOpt) (ConsumeContext, error) {
	return consume(c.source, handler, opts)
}

func (c *pullConsumer) Messages(opts ...PullMessagesOpt) (MessagesContext, error) {
	return messages(c.source, opts)
}

// ---- ordered consumer

type orderedConsumer struct {
	inner *natsio.OrderedConsumer

	mu   sync.Mutex
	next *consumption // the reading Next and Fetch share
	// use is how it was first used: nats.go's ordered consumer is either
	// fetched from or consumed, not both.
	use orderedUse
	// running is its Consume or Messages (one at a time), fetching says a
	// Fetch or Next is under way (one at a time).
	running  *consumption
	fetching bool
}

type orderedUse int

const (
	orderedUnused orderedUse = iota
	orderedFetched
	orderedConsumed
)

// startConsume claims the consumer for a Consume or Messages:
// ErrOrderConsumerUsedAsFetch after a Fetch or Next,
// ErrOrderedConsumerConcurrentRequests while another one runs.
func (c *orderedConsumer) startConsume(start func() (*consumption, error)) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case c.use == orderedFetched:
		return ErrOrderConsumerUsedAsFetch
	case c.running != nil && !c.running.ended():
		return ErrOrderedConsumerConcurrentRequests
	}
	cc, err := start()
	if err != nil {
		return err
	}
	c.use, c.running = orderedConsumed, cc
	return nil
}

// startFetch claims the consumer for a Fetch or Next (released by the
// returned func): ErrOrderConsumerUsedAsConsume after a Consume or
// Messages, ErrOrderedConsumerConcurrentRequests while another Fetch or
// Next runs.
func (c *orderedConsumer) startFetch() (func(), error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case c.use == orderedConsumed:
		return nil, ErrOrderConsumerUsedAsConsume
	case c.fetching:
		return nil, ErrOrderedConsumerConcurrentRequests
	}
	c.use, c.fetching = orderedFetched, true
	return func() {
		c.mu.Lock()
		c.fetching = false
		c.mu.Unlock()
	}, nil
}

func (js *jetStream) OrderedConsumer(ctx context.Context, stream string, cfg OrderedConsumerConfig) (Consumer, error) {
	if err := validateStreamName(stream); err != nil {
		return nil, err
	}
	inner, err := js.inner.OrderedConsumer(ctx, stream, natsio.OrderedConsumerConfig{
		FilterSubjects:    cfg.FilterSubjects,
		DeliverPolicy:     natsio.DeliverPolicy(deliverEnum.wire[cfg.DeliverPolicy]),
		OptStartSeq:       cfg.OptStartSeq,
		OptStartTime:      cfg.OptStartTime,
		HeadersOnly:       cfg.HeadersOnly,
		NamePrefix:        cfg.NamePrefix,
		InactiveThreshold: cfg.InactiveThreshold,
		Metadata:          cfg.Metadata,
	})
	if err != nil {
		return nil, translate(err)
	}
	return &orderedConsumer{inner: inner}, nil
}

// source is a run of the ordered consumer, ended after StopAfter's count.
func (c *orderedConsumer) source(cfg *pullConfig) (pullSource, error) {
	if cfg.limitSize {
		return nil, fmt.Errorf("%w: an ordered consumer takes no byte limit", ErrInvalidOption)
	}
	inner, err := c.inner.Messages(context.Background(), cfg.opts...)
	if err != nil {
		return nil, err
	}
	if cfg.stopAfter > 0 {
		return &countingSource{pullSource: inner, left: cfg.stopAfter}, nil
	}
	return inner, nil
}

func (c *orderedConsumer) Consume(handler MessageHandler, opts ...PullConsumeOpt) (ConsumeContext, error) {
	var cc ConsumeContext
	err := c.startConsume(func() (*consumption, error) {
		var err error
		cc, err = consume(c.source, handler, opts)
		if err != nil {
			return nil, err
		}
		return cc.(*consumption), nil
	})
	return cc, err
}

func (c *orderedConsumer) Messages(opts ...PullMessagesOpt) (MessagesContext, error) {
	var it MessagesContext
	err := c.startConsume(func() (*consumption, error) {
		var err error
		it, err = messages(c.source, opts)
		if err != nil {
			return nil, err
		}
		return it.(*consumption), nil
	})
	return it, err
}

// reader is the consumption Next and Fetch read from, started on first use.
func (c *orderedConsumer) reader() (*consumption, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.next == nil {
		inner, err := c.inner.Messages(context.Background())
		if err != nil {
			return nil, translate(err)
		}
		c.next = &consumption{inner: inner, closed: make(chan struct{})}
	}
	return c.next, nil
}

// orderedFetchOptions are opts for an ordered consumer, which reads
// through its own consumers: the options naming a priority group or a
// byte limit have nothing to apply to there and are refused.
func orderedFetchOptions(opts []FetchOpt) (*fetchConfig, error) {
	_, cfg, err := fetchOptions(opts, false)
	if err != nil {
		return nil, err
	}
	if len(cfg.binding) > 0 {
		return nil, fmt.Errorf("%w: an ordered consumer takes no priority group options", ErrInvalidOption)
	}
	return cfg, nil
}

func (c *orderedConsumer) Next(opts ...FetchOpt) (Msg, error) {
	cfg, err := orderedFetchOptions(opts)
	if err != nil {
		return nil, err
	}
	done, err := c.startFetch()
	if err != nil {
		return nil, err
	}
	defer done()
	r, err := c.reader()
	if err != nil {
		return nil, err
	}
	return r.next(nextConfig{wait: cfg.maxWait, ctx: cfg.ctx})
}

// Fetch reads up to batch messages, waiting up to FetchMaxWait for each.
func (c *orderedConsumer) Fetch(batch int, opts ...FetchOpt) (MessageBatch, error) {
	cfg, err := orderedFetchOptions(opts)
	if err != nil {
		return nil, err
	}
	return c.fetch(batch, cfg.maxWait, cfg.ctx)
}

func (c *orderedConsumer) fetch(batch int, wait time.Duration, ctx context.Context) (MessageBatch, error) {
	done, err := c.startFetch()
	if err != nil {
		return nil, err
	}
	r, err := c.reader()
	if err != nil {
		done()
		return nil, err
	}
	// The batch holds its messages (as nats.go's): the fetch is over once
	// they came, read or not.
	b := &fetchResult{msgs: make(chan Msg, min(max(batch, 1), fetchBuffer))}
	go func() {
		defer close(b.msgs)
		defer done()
		deadline := time.Now().Add(wait)
		for i := 0; i < batch; i++ {
			m, err := r.next(nextConfig{wait: time.Until(deadline), ctx: ctx})
			if err != nil {
				if !errors.Is(err, nats.ErrTimeout) {
					b.err = err
				}
				return
			}
			b.msgs <- m
		}
	}()
	return b, nil
}

func (c *orderedConsumer) FetchBytes(int, ...FetchOpt) (MessageBatch, error) {
	return nil, ErrOrderConsumerUsedAsConsume
}

func (c *orderedConsumer) FetchNoWait(batch int) (MessageBatch, error) {
	return c.fetch(batch, time.Millisecond, nil)
}

func (c *orderedConsumer) Info(ctx context.Context) (*ConsumerInfo, error) {
	return consumerInfo(c.inner.Info(ctx))
}

func (c *orderedConsumer) CachedInfo() *ConsumerInfo {
	info := c.inner.CachedInfo()
	if info == nil {
		return nil
	}
	out, _ := consumerInfo(info, nil)
	return out
}

// ---- messages

// Msg is a message pulled from a consumer.
type Msg interface {
	Metadata() (*MsgMetadata, error)
	Data() []byte
	Headers() nats.Header
	Subject() string
	Reply() string
	Ack() error
	DoubleAck(context.Context) error
	Nak() error
	NakWithDelay(delay time.Duration) error
	InProgress() error
	Term() error
	TermWithReason(reason string) error
}

type jsMsg struct{ m *natsio.Msg }

func (m *jsMsg) Data() []byte         { return m.m.Data }
func (m *jsMsg) Headers() nats.Header { return m.m.Header }
func (m *jsMsg) Subject() string      { return m.m.Subject }
func (m *jsMsg) Reply() string        { return m.m.Reply }

func (m *jsMsg) Metadata() (*MsgMetadata, error) {
	md, err := m.m.Metadata()
	if err != nil {
		return nil, translate(err)
	}
	return &MsgMetadata{
		Sequence:     SequencePair{Consumer: md.Sequence.Consumer, Stream: md.Sequence.Stream},
		NumDelivered: md.NumDelivered, NumPending: md.NumPending, Timestamp: md.Timestamp,
		Stream: md.Stream, Consumer: md.Consumer, Domain: md.Domain,
	}, nil
}

func (m *jsMsg) Ack() error                          { return translate(m.m.Ack()) }
func (m *jsMsg) DoubleAck(ctx context.Context) error { return translate(m.m.AckSync(ctx)) }
func (m *jsMsg) Nak() error                          { return translate(m.m.Nak()) }
func (m *jsMsg) NakWithDelay(d time.Duration) error  { return translate(m.m.NakWithDelay(d)) }
func (m *jsMsg) InProgress() error                   { return translate(m.m.InProgress()) }
func (m *jsMsg) Term() error                         { return translate(m.m.Term()) }
func (m *jsMsg) TermWithReason(r string) error       { return translate(m.m.TermWithReason(r)) }
