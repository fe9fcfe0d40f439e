package jetstream

import (
	"context"
	"sync/atomic"

	natsio "github.com/libnatsio/natsio/bindings/go"
)

// PushConsumer is a handle on a push consumer (one with a DeliverSubject):
// the server sends its messages there, and Consume subscribes to it (in
// the DeliverGroup queue group when the consumer has one).
type PushConsumer interface {
	Consume(handler MessageHandler, opts ...PushConsumeOpt) (ConsumeContext, error)
	Info(context.Context) (*ConsumerInfo, error)
	CachedInfo() *ConsumerInfo
}

// PushConsumeOpt configures PushConsumer.Consume.
type PushConsumeOpt interface {
	configurePushConsume(*pushConsumeOpts) error
}

type pushConsumeOpts struct {
	errHandler ConsumeErrHandler
}

func (h ConsumeErrHandler) configurePushConsume(o *pushConsumeOpts) error {
	o.errHandler = h
	return nil
}

type pushConsumer struct {
	js      *jetStream
	stream  string
	name    string
	info    atomic.Pointer[ConsumerInfo]
	started atomic.Bool
}

func newPushConsumer(js *jetStream, stream string, info *ConsumerInfo) (PushConsumer, error) {
	if info.Config.DeliverSubject == "" {
		return nil, ErrNotPushConsumer
	}
	c := &pushConsumer{js: js, stream: stream, name: info.Name}
	c.info.Store(info)
	return c, nil
}

func (js *jetStream) pushConsumerOp(ctx context.Context, stream string, cfg ConsumerConfig,
	op func(context.Context, string, natsio.ConsumerConfig) (*natsio.ConsumerInfo, error)) (PushConsumer, error) {
	if err := checkConsumerConfig(stream, cfg); err != nil {
		return nil, err
	}
	if cfg.DeliverSubject == "" {
		return nil, ErrNotPushConsumer
	}
	var bcfg natsio.ConsumerConfig
	if err := convert(cfg, &bcfg); err != nil {
		return nil, err
	}
	info, err := consumerInfo(op(ctx, stream, bcfg))
	if err != nil {
		return nil, err
	}
	return newPushConsumer(js, stream, info)
}

func (js *jetStream) CreateOrUpdatePushConsumer(ctx context.Context, stream string, cfg ConsumerConfig) (PushConsumer, error) {
	return js.pushConsumerOp(ctx, stream, cfg, js.inner.CreateOrUpdateConsumer)
}

func (js *jetStream) CreatePushConsumer(ctx context.Context, stream string, cfg ConsumerConfig) (PushConsumer, error) {
	return js.pushConsumerOp(ctx, stream, cfg, js.inner.CreateConsumer)
}

func (js *jetStream) UpdatePushConsumer(ctx context.Context, stream string, cfg ConsumerConfig) (PushConsumer, error) {
	return js.pushConsumerOp(ctx, stream, cfg, js.inner.UpdateConsumer)
}

// PushConsumer is the push consumer name of stream; ErrNotPushConsumer if
// it has no deliver subject.
func (js *jetStream) PushConsumer(ctx context.Context, stream, name string) (PushConsumer, error) {
	if err := validateStreamName(stream); err != nil {
		return nil, err
	}
	info, err := consumerInfo(js.inner.ConsumerInfo(ctx, stream, name))
	if err != nil {
		return nil, err
	}
	return newPushConsumer(js, stream, info)
}

func (s *stream) CreateOrUpdatePushConsumer(ctx context.Context, cfg ConsumerConfig) (PushConsumer, error) {
	return s.js.CreateOrUpdatePushConsumer(ctx, s.name, cfg)
}

func (s *stream) CreatePushConsumer(ctx context.Context, cfg ConsumerConfig) (PushConsumer, error) {
	return s.js.CreatePushConsumer(ctx, s.name, cfg)
}

func (s *stream) UpdatePushConsumer(ctx context.Context, cfg ConsumerConfig) (PushConsumer, error) {
	return s.js.UpdatePushConsumer(ctx, s.name, cfg)
}

func (s *stream) PushConsumer(ctx context.Context, name string) (PushConsumer, error) {
	return s.js.PushConsumer(ctx, s.name, name)
}

func (c *pushConsumer) Info(ctx context.Context) (*ConsumerInfo, error) {
	info, err := consumerInfo(c.js.inner.ConsumerInfo(ctx, c.stream, c.name))
	if err != nil {
		return nil, err
	}
	c.info.Store(info)
	return info, nil
}

func (c *pushConsumer) CachedInfo() *ConsumerInfo { return c.info.Load() }

// Consume hands every message to handler, one at a time on a goroutine of
// its own, until the returned context is stopped. One Consume at a time:
// ErrConsumerAlreadyConsuming while one runs. The handler of opts'
// ConsumeErrHandler gets missed heartbeats (ErrNoHeartbeat) and what ends
// the consumption (ErrConsumerDeleted).
func (c *pushConsumer) Consume(handler MessageHandler, opts ...PushConsumeOpt) (ConsumeContext, error) {
	if handler == nil {
		return nil, ErrHandlerRequired
	}
	var o pushConsumeOpts
	for _, opt := range opts {
		if err := opt.configurePushConsume(&o); err != nil {
			return nil, err
		}
	}
	if !c.started.CompareAndSwap(false, true) {
		return nil, ErrConsumerAlreadyConsuming
	}
	inner, err := c.js.inner.PushConsume(context.Background(), c.stream, c.name)
	if err != nil {
		c.started.Store(false)
		return nil, translate(err)
	}
	cc := &consumption{inner: inner, closed: make(chan struct{})}
	// Missed heartbeats reach the ConsumeErrHandler, as in nats.go.
	unroute := c.js.nc.RouteMissedHeartbeats(c.CachedInfo().Config.DeliverSubject, func() {
		if o.errHandler != nil {
			o.errHandler(cc, ErrNoHeartbeat)
		}
	})
	go func() {
		cc.run(handler, o.errHandler)
		unroute()
		c.started.Store(false)
	}()
	return cc, nil
}
