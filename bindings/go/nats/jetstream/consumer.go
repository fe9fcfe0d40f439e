package jetstream

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
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
type NextOpt func(*time.Duration) error

// NextMaxWait bounds how long MessagesContext.Next waits.
func NextMaxWait(d time.Duration) NextOpt {
	return func(t *time.Duration) error { *t = d; return nil }
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
	return pauseResponse(js.inner.PauseConsumer(ctx, stream, consumer, pauseUntil))
}

func (js *jetStream) ResumeConsumer(ctx context.Context, stream, consumer string) (*ConsumerPauseResponse, error) {
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

// FetchOpt configures Fetch, FetchBytes and Next.
type FetchOpt func(*fetchConfig) error

type fetchConfig struct {
	maxWait   time.Duration
	heartbeat time.Duration
}

// FetchMaxWait is how long a Fetch waits for its batch (default 30 s).
func FetchMaxWait(d time.Duration) FetchOpt {
	return func(c *fetchConfig) error { c.maxWait = d; return nil }
}

// FetchHeartbeat asks the server for idle heartbeats while a Fetch waits.
func FetchHeartbeat(d time.Duration) FetchOpt {
	return func(c *fetchConfig) error { c.heartbeat = d; return nil }
}

func fetchOptions(opts []FetchOpt, extra ...natsio.FetchOpt) ([]natsio.FetchOpt, time.Duration, error) {
	cfg := fetchConfig{maxWait: 30 * time.Second}
	for _, o := range opts {
		if err := o(&cfg); err != nil {
			return nil, 0, err
		}
	}
	out := append([]natsio.FetchOpt{natsio.FetchExpires(cfg.maxWait)}, extra...)
	if cfg.heartbeat > 0 {
		out = append(out, natsio.FetchHeartbeat(cfg.heartbeat))
	}
	return out, cfg.maxWait, nil
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
func (c *pullConsumer) fetch(opts []natsio.FetchOpt, batch int) (MessageBatch, error) {
	inner, err := c.js.inner.FetchMessages(context.Background(), c.stream, c.name, opts...)
	if err != nil {
		return nil, translate(err)
	}
	b := &fetchResult{msgs: make(chan Msg, min(max(batch, 1), fetchBuffer))}
	go func() {
		defer close(b.msgs)
		for {
			m, err := inner.Next(context.Background())
			switch {
			case err == nil:
				b.msgs <- &jsMsg{m}
				continue
			case errors.Is(err, natsio.ErrTimeout):
				// Only missed heartbeats end a fetch with a timeout; an
				// expiry is the batch's end, as in nats.go.
				b.err = ErrNoHeartbeat
			case !errors.Is(err, natsio.ErrDone):
				b.err = translate(err)
			}
			return
		}
	}()
	return b, nil
}

func (c *pullConsumer) Fetch(batch int, opts ...FetchOpt) (MessageBatch, error) {
	o, _, err := fetchOptions(opts, natsio.FetchMaxMessages(batch))
	if err != nil {
		return nil, err
	}
	return c.fetch(o, batch)
}

func (c *pullConsumer) FetchBytes(maxBytes int, opts ...FetchOpt) (MessageBatch, error) {
	const batch = 1000000
	o, _, err := fetchOptions(opts, natsio.FetchMaxBytes(maxBytes), natsio.FetchMaxMessages(batch))
	if err != nil {
		return nil, err
	}
	return c.fetch(o, batch)
}

func (c *pullConsumer) FetchNoWait(batch int) (MessageBatch, error) {
	o, _, _ := fetchOptions(nil, natsio.FetchMaxMessages(batch), natsio.FetchNoWait())
	return c.fetch(o, batch)
}

// Next waits for one message (FetchMaxWait, default 30 s): nats.ErrTimeout
// when none came.
func (c *pullConsumer) Next(opts ...FetchOpt) (Msg, error) {
	o, wait, err := fetchOptions(opts)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), wait+5*time.Second)
	defer cancel()
	m, err := c.js.inner.Next(ctx, c.stream, c.name, o...)
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
}

// ConsumeErrHandler receives the errors of a Consume.
type ConsumeErrHandler func(consumeCtx ConsumeContext, err error)

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
)

func (o PullMaxMessages) configureConsume(c *pullConfig) error {
	c.opts = append(c.opts, natsio.PullMaxMessages(int(o)))
	return nil
}
func (o PullMaxMessages) configureMessages(c *pullConfig) error { return o.configureConsume(c) }
func (o PullMaxBytes) configureConsume(c *pullConfig) error {
	c.opts = append(c.opts, natsio.PullMaxBytes(int(o)))
	return nil
}
func (o PullMaxBytes) configureMessages(c *pullConfig) error { return o.configureConsume(c) }
func (o PullExpiry) configureConsume(c *pullConfig) error {
	c.opts = append(c.opts, natsio.PullExpiry(time.Duration(o)))
	return nil
}
func (o PullExpiry) configureMessages(c *pullConfig) error { return o.configureConsume(c) }
func (o PullHeartbeat) configureConsume(c *pullConfig) error {
	c.opts = append(c.opts, natsio.PullHeartbeat(time.Duration(o)))
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
// Consumption.
type consumption struct {
	inner  *natsio.Consumption
	once   sync.Once
	closed chan struct{}
}

func (c *consumption) Stop() { c.inner.Stop() }

// Drain stops pulling (or withdraws a push consumer's subscription) and
// returns at once; what the server already sent is still handed to the
// handler (or returned by Next), then the consumption ends and Closed is
// closed, as in nats.go.
func (c *consumption) Drain() { _ = c.inner.StartDrain() }

func (c *consumption) Closed() <-chan struct{} { return c.closed }

func (c *consumption) Next(opts ...NextOpt) (Msg, error) {
	var wait time.Duration
	for _, o := range opts {
		if err := o(&wait); err != nil {
			return nil, err
		}
	}
	ctx := context.Background()
	if wait > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, wait)
		defer cancel()
	}
	m, err := c.inner.Next(ctx)
	switch {
	case err == nil:
		return &jsMsg{m}, nil
	case errors.Is(err, natsio.ErrDone):
		return nil, ErrMsgIteratorClosed
	case ctx.Err() != nil:
		return nil, nats.ErrTimeout
	}
	return nil, translate(err)
}

// run hands every message to handler until the consumption ends.
func (c *consumption) run(handler MessageHandler, errHandler ConsumeErrHandler) {
	defer close(c.closed)
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

type consumeStarter func(ctx context.Context, opts ...natsio.ConsumeOpt) (*natsio.Consumption, error)

func consume(start consumeStarter, handler MessageHandler, opts []PullConsumeOpt) (ConsumeContext, error) {
	if handler == nil {
		return nil, ErrHandlerRequired
	}
	var cfg pullConfig
	for _, o := range opts {
		if err := o.configureConsume(&cfg); err != nil {
			return nil, err
		}
	}
	inner, err := start(context.Background(), cfg.opts...)
	if err != nil {
		return nil, translate(err)
	}
	c := &consumption{inner: inner, closed: make(chan struct{})}
	go c.run(handler, cfg.errHandler)
	return c, nil
}

func messages(start consumeStarter, opts []PullMessagesOpt) (MessagesContext, error) {
	var cfg pullConfig
	for _, o := range opts {
		if err := o.configureMessages(&cfg); err != nil {
			return nil, err
		}
	}
	inner, err := start(context.Background(), cfg.opts...)
	if err != nil {
		return nil, translate(err)
	}
	return &consumption{inner: inner, closed: make(chan struct{})}, nil
}

func (c *pullConsumer) start(ctx context.Context, opts ...natsio.ConsumeOpt) (*natsio.Consumption, error) {
	return c.js.inner.Consume(ctx, c.stream, c.name, opts...)
}

func (c *pullConsumer) Consume(handler MessageHandler, opts ...PullConsumeOpt) (ConsumeContext, error) {
	return consume(c.start, handler, opts)
}

func (c *pullConsumer) Messages(opts ...PullMessagesOpt) (MessagesContext, error) {
	return messages(c.start, opts)
}

// ---- ordered consumer

type orderedConsumer struct {
	inner *natsio.OrderedConsumer

	mu   sync.Mutex
	next *consumption // the reading Next and Fetch share
}

func (js *jetStream) OrderedConsumer(ctx context.Context, stream string, cfg OrderedConsumerConfig) (Consumer, error) {
	inner, err := js.inner.OrderedConsumer(ctx, stream, natsio.OrderedConsumerConfig{
		FilterSubjects:    cfg.FilterSubjects,
		DeliverPolicy:     natsio.DeliverPolicy(deliverEnum.wire[cfg.DeliverPolicy]),
		OptStartSeq:       cfg.OptStartSeq,
		OptStartTime:      cfg.OptStartTime,
		HeadersOnly:       cfg.HeadersOnly,
		NamePrefix:        cfg.NamePrefix,
		InactiveThreshold: cfg.InactiveThreshold,
	})
	if err != nil {
		return nil, translate(err)
	}
	return &orderedConsumer{inner: inner}, nil
}

func (c *orderedConsumer) Consume(handler MessageHandler, opts ...PullConsumeOpt) (ConsumeContext, error) {
	return consume(c.inner.Messages, handler, opts)
}

func (c *orderedConsumer) Messages(opts ...PullMessagesOpt) (MessagesContext, error) {
	return messages(c.inner.Messages, opts)
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

func (c *orderedConsumer) Next(opts ...FetchOpt) (Msg, error) {
	_, wait, err := fetchOptions(opts)
	if err != nil {
		return nil, err
	}
	r, err := c.reader()
	if err != nil {
		return nil, err
	}
	return r.Next(NextMaxWait(wait))
}

// Fetch reads up to batch messages, waiting up to FetchMaxWait for each.
func (c *orderedConsumer) Fetch(batch int, opts ...FetchOpt) (MessageBatch, error) {
	_, wait, err := fetchOptions(opts)
	if err != nil {
		return nil, err
	}
	return c.fetch(batch, wait)
}

func (c *orderedConsumer) fetch(batch int, wait time.Duration) (MessageBatch, error) {
	r, err := c.reader()
	if err != nil {
		return nil, err
	}
	b := &fetchResult{msgs: make(chan Msg)}
	go func() {
		defer close(b.msgs)
		deadline := time.Now().Add(wait)
		for i := 0; i < batch; i++ {
			m, err := r.Next(NextMaxWait(time.Until(deadline)))
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
	return c.fetch(batch, time.Millisecond)
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

// SequencePair is a message's sequence in its consumer and its stream.
type SequencePair struct {
	Consumer uint64 `json:"consumer_seq"`
	Stream   uint64 `json:"stream_seq"`
}

// MsgMetadata is where a pulled message stands.
type MsgMetadata struct {
	Sequence     SequencePair
	NumDelivered uint64
	NumPending   uint64
	Timestamp    time.Time
	Stream       string
	Consumer     string
	Domain       string
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
