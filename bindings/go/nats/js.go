package nats

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	natsio "github.com/libnatsio/natsio/bindings/go"
)

// JetStreamContext is nats.go's legacy JetStream API (nc.JetStream()):
// publishing, stream and consumer management, and push subscriptions
// (Subscribe, QueueSubscribe, SubscribeSync) over push consumers.
type JetStreamContext interface {
	Publish(subj string, data []byte, opts ...PubOpt) (*PubAck, error)
	PublishMsg(m *Msg, opts ...PubOpt) (*PubAck, error)

	AddStream(cfg *StreamConfig, opts ...JSOpt) (*StreamInfo, error)
	UpdateStream(cfg *StreamConfig, opts ...JSOpt) (*StreamInfo, error)
	DeleteStream(name string, opts ...JSOpt) error
	StreamInfo(stream string, opts ...JSOpt) (*StreamInfo, error)
	PurgeStream(name string, opts ...JSOpt) error

	AddConsumer(stream string, cfg *ConsumerConfig, opts ...JSOpt) (*ConsumerInfo, error)
	DeleteConsumer(stream, consumer string, opts ...JSOpt) error
	ConsumerInfo(stream, name string, opts ...JSOpt) (*ConsumerInfo, error)

	Subscribe(subj string, cb MsgHandler, opts ...SubOpt) (*Subscription, error)
	SubscribeSync(subj string, opts ...SubOpt) (*Subscription, error)
	QueueSubscribe(subj, queue string, cb MsgHandler, opts ...SubOpt) (*Subscription, error)
	QueueSubscribeSync(subj, queue string, opts ...SubOpt) (*Subscription, error)
	ChanSubscribe(subj string, ch chan *Msg, opts ...SubOpt) (*Subscription, error)
	ChanQueueSubscribe(subj, queue string, ch chan *Msg, opts ...SubOpt) (*Subscription, error)
}

// The errors of the legacy JetStream API, with nats.go's texts.
var (
	ErrStreamNotFound         = errors.New("nats: stream not found")
	ErrConsumerNotFound       = errors.New("nats: consumer not found")
	ErrNoMatchingStream       = errors.New("nats: no stream matches subject")
	ErrSubjectMismatch        = errors.New("nats: subject does not match consumer")
	ErrStreamNameRequired     = errors.New("nats: stream name is required")
	ErrMsgAlreadyAckd         = errors.New("nats: message was already acknowledged")
	ErrNotJSMessage           = errors.New("nats: not a jetstream message")
	ErrJetStreamNotEnabled    = errors.New("nats: jetstream not enabled")
	ErrStreamNameAlreadyInUse = errors.New("nats: stream name already in use")
	ErrConsumerNotActive      = errors.New("nats: consumer not active")
)

// jsTranslate maps the binding's JetStream errors to the legacy API's.
func jsTranslate(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, natsio.ErrStreamNotFound):
		return ErrStreamNotFound
	case errors.Is(err, natsio.ErrConsumerNotFound):
		return ErrConsumerNotFound
	case errors.Is(err, natsio.ErrMessageAlreadyAcked):
		return ErrMsgAlreadyAckd
	case errors.Is(err, natsio.ErrNotJSMessage):
		return ErrNotJSMessage
	case errors.Is(err, natsio.ErrJetStreamNotEnabled):
		return ErrJetStreamNotEnabled
	case errors.Is(err, natsio.ErrStreamNameInUse):
		return ErrStreamNameAlreadyInUse
	}
	return Translate(err)
}

// ---- options

type jsOpts struct {
	ctx     context.Context
	maxWait time.Duration
}

// JSOpt configures a JetStream context or one of its calls.
type JSOpt interface{ configureJSContext(*jsOpts) error }

// PubOpt configures a publish.
type PubOpt interface{ configurePublish(*pubOpts) error }

// SubOpt configures a JetStream subscription.
type SubOpt interface{ configureSubscribe(*subOpts) error }

type pubOpts struct {
	ctx context.Context
	bin []natsio.PubOpt
}

type jsOptFn func(*jsOpts) error

func (f jsOptFn) configureJSContext(o *jsOpts) error { return f(o) }

type pubOptFn func(*pubOpts) error

func (f pubOptFn) configurePublish(o *pubOpts) error { return f(o) }

type subOptFn func(*subOpts) error

func (f subOptFn) configureSubscribe(o *subOpts) error { return f(o) }

// MaxWait bounds each API request (default 5 s).
func MaxWait(d time.Duration) JSOpt {
	return jsOptFn(func(o *jsOpts) error { o.maxWait = d; return nil })
}

// ContextOpt bounds a call with a context.
type ContextOpt struct{ context.Context }

func (c ContextOpt) configureJSContext(o *jsOpts) error  { o.ctx = c.Context; return nil }
func (c ContextOpt) configurePublish(o *pubOpts) error   { o.ctx = c.Context; return nil }
func (c ContextOpt) configureSubscribe(o *subOpts) error { o.ctx = c.Context; return nil }
func Context(ctx context.Context) ContextOpt             { return ContextOpt{ctx} }
func MsgId(id string) PubOpt                             { return binPubOpt(natsio.MsgID(id)) }
func ExpectStream(stream string) PubOpt                  { return binPubOpt(natsio.ExpectStream(stream)) }
func ExpectLastSequence(seq uint64) PubOpt               { return binPubOpt(natsio.ExpectLastSequence(seq)) }
func ExpectLastMsgId(id string) PubOpt                   { return binPubOpt(natsio.ExpectLastMsgID(id)) }
func binPubOpt(b natsio.PubOpt) PubOpt {
	return pubOptFn(func(o *pubOpts) error { o.bin = append(o.bin, b); return nil })
}
func subOpt(f func(*subOpts)) SubOpt       { return subOptFn(func(o *subOpts) error { f(o); return nil }) }
func Durable(name string) SubOpt           { return subOpt(func(o *subOpts) { o.cfg.Durable = name }) }
func ConsumerName(name string) SubOpt      { return subOpt(func(o *subOpts) { o.cfg.Name = name }) }
func DeliverAll() SubOpt                   { return deliver(DeliverAllPolicy) }
func DeliverNew() SubOpt                   { return deliver(DeliverNewPolicy) }
func DeliverLast() SubOpt                  { return deliver(DeliverLastPolicy) }
func DeliverLastPerSubject() SubOpt        { return deliver(DeliverLastPerSubjectPolicy) }
func deliver(p DeliverPolicy) SubOpt       { return subOpt(func(o *subOpts) { o.cfg.DeliverPolicy = p }) }
func ManualAck() SubOpt                    { return subOpt(func(o *subOpts) { o.manualAck = true }) }
func AckExplicit() SubOpt                  { return ackPolicy(AckExplicitPolicy) }
func AckAll() SubOpt                       { return ackPolicy(AckAllPolicy) }
func AckNone() SubOpt                      { return ackPolicy(AckNonePolicy) }
func ackPolicy(p AckPolicy) SubOpt         { return subOpt(func(o *subOpts) { o.cfg.AckPolicy = p }) }
func AckWait(d time.Duration) SubOpt       { return subOpt(func(o *subOpts) { o.cfg.AckWait = d }) }
func MaxDeliver(n int) SubOpt              { return subOpt(func(o *subOpts) { o.cfg.MaxDeliver = n }) }
func MaxAckPending(n int) SubOpt           { return subOpt(func(o *subOpts) { o.cfg.MaxAckPending = n }) }
func IdleHeartbeat(d time.Duration) SubOpt { return subOpt(func(o *subOpts) { o.cfg.Heartbeat = d }) }
func EnableFlowControl() SubOpt            { return subOpt(func(o *subOpts) { o.cfg.FlowControl = true }) }
func DeliverSubject(subject string) SubOpt {
	return subOpt(func(o *subOpts) { o.cfg.DeliverSubject = subject })
}
func BindStream(stream string) SubOpt { return subOpt(func(o *subOpts) { o.stream = stream }) }
func Description(d string) SubOpt     { return subOpt(func(o *subOpts) { o.cfg.Description = d }) }
func InactiveThreshold(d time.Duration) SubOpt {
	return subOpt(func(o *subOpts) { o.cfg.InactiveThreshold = d })
}
func StartSequence(seq uint64) SubOpt {
	return subOpt(func(o *subOpts) { o.cfg.DeliverPolicy, o.cfg.OptStartSeq = DeliverByStartSequencePolicy, seq })
}

// OrderedConsumer reads the subject's messages in order with an ordered
// consumer (the library's: it recreates its consumer after a gap, missed
// heartbeats or a reconnect); no acks. Not with Durable, Bind or a queue.
func OrderedConsumer() SubOpt { return subOpt(func(o *subOpts) { o.ordered = true }) }

// Bind binds to the existing consumer consumer of stream.
func Bind(stream, consumer string) SubOpt {
	return subOpt(func(o *subOpts) { o.stream, o.consumer = stream, consumer })
}

// ---- the context

type jsContext struct {
	nc      *Conn
	inner   *natsio.JetStream
	maxWait time.Duration
}

// JetStream is nats.go's legacy JetStream context on nc.
func (nc *Conn) JetStream(opts ...JSOpt) (JetStreamContext, error) {
	o := jsOpts{maxWait: 5 * time.Second}
	for _, opt := range opts {
		if err := opt.configureJSContext(&o); err != nil {
			return nil, err
		}
	}
	inner, err := nc.conn().JetStream(natsio.JSTimeout(o.maxWait))
	if err != nil {
		return nil, jsTranslate(err)
	}
	return &jsContext{nc: nc, inner: inner, maxWait: o.maxWait}, nil
}

// context is the call's context: the one an option gave, else one bounded
// by the context's MaxWait.
func (js *jsContext) context(given context.Context) (context.Context, context.CancelFunc) {
	if given != nil {
		return given, func() {}
	}
	return context.WithTimeout(context.Background(), js.maxWait)
}

func (js *jsContext) callContext(opts []JSOpt) (context.Context, context.CancelFunc, error) {
	var o jsOpts
	for _, opt := range opts {
		if err := opt.configureJSContext(&o); err != nil {
			return nil, nil, err
		}
	}
	ctx, cancel := js.context(o.ctx)
	return ctx, cancel, nil
}

// PubAck is the server's acknowledgement of a JetStream publish.
type PubAck struct {
	Stream    string `json:"stream"`
	Sequence  uint64 `json:"seq"`
	Duplicate bool   `json:"duplicate,omitempty"`
	Domain    string `json:"domain,omitempty"`
}

func (js *jsContext) Publish(subj string, data []byte, opts ...PubOpt) (*PubAck, error) {
	return js.PublishMsg(&Msg{Subject: subj, Data: data}, opts...)
}

func (js *jsContext) PublishMsg(m *Msg, opts ...PubOpt) (*PubAck, error) {
	var o pubOpts
	for _, opt := range opts {
		if err := opt.configurePublish(&o); err != nil {
			return nil, err
		}
	}
	ctx, cancel := js.context(o.ctx)
	defer cancel()
	if len(m.Header) > 0 {
		o.bin = append(o.bin, natsio.PubHeader(m.Header))
	}
	ack, err := js.inner.Publish(ctx, m.Subject, m.Data, o.bin...)
	if err != nil {
		return nil, jsTranslate(err)
	}
	return &PubAck{Stream: ack.Stream, Sequence: ack.Sequence, Duplicate: ack.Duplicate, Domain: ack.Domain}, nil
}

// viaJSON fills to (a binding or facade type) from from's JSON.
func viaJSON(from, to any) error {
	b, err := json.Marshal(from)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, to)
}

func (js *jsContext) streamOp(cfg *StreamConfig, opts []JSOpt,
	op func(context.Context, natsio.StreamConfig) (*natsio.StreamInfo, error)) (*StreamInfo, error) {
	if cfg == nil || cfg.Name == "" {
		return nil, ErrStreamNameRequired
	}
	ctx, cancel, err := js.callContext(opts)
	if err != nil {
		return nil, err
	}
	defer cancel()
	var bcfg natsio.StreamConfig
	if err := viaJSON(cfg, &bcfg); err != nil {
		return nil, err
	}
	return streamInfo(op(ctx, bcfg))
}

func streamInfo(info *natsio.StreamInfo, err error) (*StreamInfo, error) {
	if err != nil {
		return nil, jsTranslate(err)
	}
	var out StreamInfo
	if err := json.Unmarshal(info.Raw, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

func (js *jsContext) AddStream(cfg *StreamConfig, opts ...JSOpt) (*StreamInfo, error) {
	return js.streamOp(cfg, opts, js.inner.CreateStream)
}

func (js *jsContext) UpdateStream(cfg *StreamConfig, opts ...JSOpt) (*StreamInfo, error) {
	return js.streamOp(cfg, opts, js.inner.UpdateStream)
}

func (js *jsContext) DeleteStream(name string, opts ...JSOpt) error {
	ctx, cancel, err := js.callContext(opts)
	if err != nil {
		return err
	}
	defer cancel()
	return jsTranslate(js.inner.DeleteStream(ctx, name))
}

func (js *jsContext) PurgeStream(name string, opts ...JSOpt) error {
	ctx, cancel, err := js.callContext(opts)
	if err != nil {
		return err
	}
	defer cancel()
	_, err = js.inner.PurgeStream(ctx, name)
	return jsTranslate(err)
}

func (js *jsContext) StreamInfo(stream string, opts ...JSOpt) (*StreamInfo, error) {
	ctx, cancel, err := js.callContext(opts)
	if err != nil {
		return nil, err
	}
	defer cancel()
	return streamInfo(js.inner.StreamInfo(ctx, stream))
}

func consumerInfo(info *natsio.ConsumerInfo, err error) (*ConsumerInfo, error) {
	if err != nil {
		return nil, jsTranslate(err)
	}
	var out ConsumerInfo
	if err := json.Unmarshal(info.Raw, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

func (js *jsContext) AddConsumer(stream string, cfg *ConsumerConfig, opts ...JSOpt) (*ConsumerInfo, error) {
	ctx, cancel, err := js.callContext(opts)
	if err != nil {
		return nil, err
	}
	defer cancel()
	return js.addConsumer(ctx, stream, cfg)
}

func (js *jsContext) addConsumer(ctx context.Context, stream string, cfg *ConsumerConfig) (*ConsumerInfo, error) {
	var bcfg natsio.ConsumerConfig
	if err := viaJSON(cfg, &bcfg); err != nil {
		return nil, err
	}
	return consumerInfo(js.inner.CreateConsumer(ctx, stream, bcfg))
}

func (js *jsContext) DeleteConsumer(stream, consumer string, opts ...JSOpt) error {
	ctx, cancel, err := js.callContext(opts)
	if err != nil {
		return err
	}
	defer cancel()
	return jsTranslate(js.inner.DeleteConsumer(ctx, stream, consumer))
}

func (js *jsContext) ConsumerInfo(stream, name string, opts ...JSOpt) (*ConsumerInfo, error) {
	ctx, cancel, err := js.callContext(opts)
	if err != nil {
		return nil, err
	}
	defer cancel()
	return consumerInfo(js.inner.ConsumerInfo(ctx, stream, name))
}

// ---- push subscriptions

type subOpts struct {
	ctx       context.Context
	cfg       ConsumerConfig
	stream    string
	consumer  string
	manualAck bool
	ordered   bool
}

func (js *jsContext) Subscribe(subj string, cb MsgHandler, opts ...SubOpt) (*Subscription, error) {
	if cb == nil {
		return nil, ErrBadSubscription
	}
	return js.subscribe(subj, "", cb, opts)
}

func (js *jsContext) SubscribeSync(subj string, opts ...SubOpt) (*Subscription, error) {
	return js.subscribe(subj, "", nil, opts)
}

func (js *jsContext) QueueSubscribe(subj, queue string, cb MsgHandler, opts ...SubOpt) (*Subscription, error) {
	if cb == nil {
		return nil, ErrBadSubscription
	}
	return js.subscribe(subj, queue, cb, opts)
}

func (js *jsContext) QueueSubscribeSync(subj, queue string, opts ...SubOpt) (*Subscription, error) {
	return js.subscribe(subj, queue, nil, opts)
}

// ChanSubscribe delivers to ch; the messages are acknowledged by the
// program, as in nats.go.
func (js *jsContext) ChanSubscribe(subj string, ch chan *Msg, opts ...SubOpt) (*Subscription, error) {
	return js.ChanQueueSubscribe(subj, "", ch, opts...)
}

func (js *jsContext) ChanQueueSubscribe(subj, queue string, ch chan *Msg, opts ...SubOpt) (*Subscription, error) {
	return js.subscribe(subj, queue, func(m *Msg) { ch <- m }, append(opts, ManualAck()))
}

// subscribe binds to the consumer the options name, or creates one (as
// nats.go: durable when Durable or a queue names it, ephemeral else)
// delivering to a new inbox, and consumes it. A consumer it created is
// deleted again by Unsubscribe.
func (js *jsContext) subscribe(subj, queue string, cb MsgHandler, opts []SubOpt) (*Subscription, error) {
	o := subOpts{cfg: ConsumerConfig{AckPolicy: AckExplicitPolicy}}
	for _, opt := range opts {
		if err := opt.configureSubscribe(&o); err != nil {
			return nil, err
		}
	}
	if subj == "" && o.stream == "" {
		return nil, errors.New("nats: subject required")
	}
	if queue != "" && (o.cfg.Heartbeat > 0 || o.cfg.FlowControl) {
		// nats.go's text: the members of a group would share the heartbeats.
		return nil, errors.New("nats: queue subscription doesn't support idle heartbeat nor flow control")
	}
	if o.ordered && (o.cfg.Durable != "" || o.consumer != "" || queue != "") {
		return nil, errors.New("nats: an ordered consumer can not be durable, bound or in a queue group")
	}
	ctx, cancel := js.context(o.ctx)
	defer cancel()
	stream := o.stream
	if stream == "" {
		names, err := js.inner.StreamNames(ctx, subj)
		if err != nil {
			return nil, jsTranslate(err)
		}
		if len(names) != 1 {
			return nil, ErrNoMatchingStream
		}
		stream = names[0]
	}
	if o.ordered {
		return js.subscribeOrdered(ctx, stream, subj, cb, &o)
	}
	name := o.consumer
	if name == "" {
		name = o.cfg.Durable
	}
	if name == "" && queue != "" {
		name = queue // nats.go names a queue's consumer after the queue
	}
	created := false
	if name != "" {
		info, err := consumerInfo(js.inner.ConsumerInfo(ctx, stream, name))
		switch {
		case err == nil:
			if info.Config.DeliverSubject == "" {
				return nil, fmt.Errorf("nats: consumer %q is not a push consumer", name)
			}
			if subj != "" && info.Config.FilterSubject != "" && info.Config.FilterSubject != subj {
				return nil, ErrSubjectMismatch
			}
		case errors.Is(err, ErrConsumerNotFound) && o.consumer == "":
			name, err = js.createPushConsumer(ctx, stream, subj, queue, name, &o)
			if err != nil {
				return nil, err
			}
			created = true
		default:
			return nil, err
		}
	} else {
		var err error
		if name, err = js.createPushConsumer(ctx, stream, subj, queue, "", &o); err != nil {
			return nil, err
		}
		created = true
	}
	info, err := consumerInfo(js.inner.ConsumerInfo(ctx, stream, name))
	if err != nil {
		return nil, err
	}
	inner, err := js.inner.PushConsume(ctx, stream, name)
	if err != nil {
		return nil, jsTranslate(err)
	}
	s := &Subscription{Subject: subj, Queue: queue, nc: js.nc, ready: make(chan struct{}), sync: cb == nil,
		push: &pushSub{js: js, inner: inner, stream: stream, consumer: name, created: created,
			done: make(chan struct{})}}
	// Missed heartbeats reach the AsyncErrorCB as ErrConsumerNotActive,
	// with this subscription, as in nats.go.
	s.push.unroute = js.nc.RouteMissedHeartbeats(info.Config.DeliverSubject, func() {
		if cb := js.nc.Opts.AsyncErrorCB; cb != nil {
			cb(js.nc, s, ErrConsumerNotActive)
		}
	})
	close(s.ready)
	if cb != nil {
		autoAck := !o.manualAck && o.cfg.AckPolicy != AckNonePolicy
		go s.push.run(s, cb, autoAck)
	} else {
		close(s.push.done)
	}
	return s, nil
}

// subscribeOrdered reads subj of stream through the library's ordered
// consumer, which Unsubscribe stops (deleting its server-side consumer).
func (js *jsContext) subscribeOrdered(ctx context.Context, stream, subj string, cb MsgHandler, o *subOpts) (*Subscription, error) {
	cfg := natsio.OrderedConsumerConfig{
		DeliverPolicy: natsio.DeliverPolicy(deliverNames.json[o.cfg.DeliverPolicy]),
		OptStartSeq:   o.cfg.OptStartSeq,
		OptStartTime:  o.cfg.OptStartTime,
		HeadersOnly:   o.cfg.HeadersOnly,
	}
	if subj != "" {
		cfg.FilterSubjects = []string{subj}
	}
	oc, err := js.inner.OrderedConsumer(ctx, stream, cfg)
	if err != nil {
		return nil, jsTranslate(err)
	}
	inner, err := oc.Messages(ctx)
	if err != nil {
		_ = oc.Stop(ctx)
		return nil, jsTranslate(err)
	}
	s := &Subscription{Subject: subj, nc: js.nc, ready: make(chan struct{}), sync: cb == nil,
		push: &pushSub{js: js, inner: inner, stream: stream, ordered: oc, done: make(chan struct{}),
			unroute: func() {}}}
	close(s.ready)
	if cb != nil {
		go s.push.run(s, cb, false)
	} else {
		close(s.push.done)
	}
	return s, nil
}

func (js *jsContext) createPushConsumer(ctx context.Context, stream, subj, queue, durable string, o *subOpts) (string, error) {
	cfg := o.cfg
	cfg.Durable = durable
	if cfg.DeliverSubject == "" {
		cfg.DeliverSubject = js.nc.NewRespInbox()
	}
	cfg.DeliverGroup = queue
	if cfg.FilterSubject == "" && subj != "" {
		cfg.FilterSubject = subj
	}
	info, err := js.addConsumer(ctx, stream, &cfg)
	if err != nil {
		return "", err
	}
	return info.Name, nil
}

// pushSub is what a Subscription of the legacy JetStream API consumes.
type pushSub struct {
	js       *jsContext
	inner    *natsio.Consumption
	stream   string
	consumer string
	created  bool // by Subscribe: deleted by Unsubscribe
	done     chan struct{}
	// isStopped is set by the first Unsubscribe or Drain.
	isStopped atomic.Bool
	unroute   func()                  // ends RouteMissedHeartbeats
	ordered   *natsio.OrderedConsumer // OrderedConsumer(): stopped by stop
}

func (p *pushSub) run(s *Subscription, cb MsgHandler, autoAck bool) {
	defer close(p.done)
	defer p.unroute()
	for {
		m, err := p.inner.Next(context.Background())
		if err != nil {
			if !errors.Is(err, natsio.ErrDone) {
				p.js.nc.asyncError(err)
			}
			return
		}
		msg := newMsg(m, s)
		cb(msg)
		if autoAck {
			_ = msg.Ack()
		}
	}
}

func (p *pushSub) next(ctx context.Context, s *Subscription) (*Msg, error) {
	m, err := p.inner.Next(ctx)
	switch {
	case err == nil:
		return newMsg(m, s), nil
	case errors.Is(err, natsio.ErrDone):
		return nil, ErrBadSubscription
	case ctx.Err() != nil:
		return nil, ctx.Err()
	}
	return nil, jsTranslate(err)
}

func (p *pushSub) stopped() bool {
	_, err := p.inner.Stats()
	return err != nil || p.isStopped.Load()
}

func (p *pushSub) stats() (natsio.SubStats, error) {
	st, err := p.inner.Stats()
	if err != nil {
		return natsio.SubStats{}, ErrBadSubscription
	}
	return natsio.SubStats{Delivered: st.Delivered, PendingMsgs: st.PendingItems, PendingBytes: st.PendingBytes}, nil
}

// stop ends the consumption and deletes a consumer Subscribe created.
func (p *pushSub) stop() error {
	if p.isStopped.Swap(true) {
		return ErrBadSubscription
	}
	p.inner.Stop()
	return p.release()
}

// drain ends the consumption once what the server already sent has been
// handled (by the handler, or read with NextMsg), then deletes a consumer
// Subscribe created, as nats.go's Drain does; it returns at once.
func (p *pushSub) drain() error {
	if p.isStopped.Swap(true) {
		return ErrBadSubscription
	}
	if err := p.inner.StartDrain(); err != nil {
		return jsTranslate(err)
	}
	go func() {
		// The consumption ends (Next returns ErrDone) once drained.
		_ = p.inner.Drain(context.Background())
		<-p.done // the handler's last call has returned
		_ = p.release()
	}()
	return nil
}

// release is what follows the consumption's end: heartbeat reports
// unrouted, the consumer Subscribe created (or the ordered one) deleted.
func (p *pushSub) release() error {
	p.unroute()
	ctx, cancel := context.WithTimeout(context.Background(), p.js.maxWait)
	defer cancel()
	if p.ordered != nil {
		return jsTranslate(p.ordered.Stop(ctx))
	}
	if !p.created {
		return nil
	}
	err := p.js.inner.DeleteConsumer(ctx, p.stream, p.consumer)
	if errors.Is(err, natsio.ErrConsumerNotFound) {
		return nil
	}
	return jsTranslate(err)
}

// ---- acknowledgements

// AckOpt configures an acknowledgement.
type AckOpt interface{ configureAck(*ackOpts) error }

type ackOpts struct{ ctx context.Context }

func (c ContextOpt) configureAck(o *ackOpts) error { o.ctx = c.Context; return nil }

func (m *Msg) jsMsg() (*natsio.Msg, error) {
	if m == nil || m.inner == nil {
		return nil, ErrMsgNotBound
	}
	if !strings.HasPrefix(m.Reply, "$JS.ACK.") {
		return nil, ErrNotJSMessage
	}
	return m.inner, nil
}

// Ack acknowledges a JetStream message.
func (m *Msg) Ack(opts ...AckOpt) error {
	inner, err := m.jsMsg()
	if err != nil {
		return err
	}
	return jsTranslate(inner.Ack())
}

// AckSync acknowledges and waits for the server's confirmation.
func (m *Msg) AckSync(opts ...AckOpt) error {
	inner, err := m.jsMsg()
	if err != nil {
		return err
	}
	var o ackOpts
	for _, opt := range opts {
		if err := opt.configureAck(&o); err != nil {
			return err
		}
	}
	ctx := o.ctx
	if ctx == nil {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
	}
	return jsTranslate(inner.AckSync(ctx))
}

// Nak asks for redelivery.
func (m *Msg) Nak(opts ...AckOpt) error {
	inner, err := m.jsMsg()
	if err != nil {
		return err
	}
	return jsTranslate(inner.Nak())
}

// NakWithDelay asks for redelivery after delay.
func (m *Msg) NakWithDelay(delay time.Duration, opts ...AckOpt) error {
	inner, err := m.jsMsg()
	if err != nil {
		return err
	}
	return jsTranslate(inner.NakWithDelay(delay))
}

// Term stops redelivery.
func (m *Msg) Term(opts ...AckOpt) error {
	inner, err := m.jsMsg()
	if err != nil {
		return err
	}
	return jsTranslate(inner.Term())
}

// InProgress resets the message's ack wait.
func (m *Msg) InProgress(opts ...AckOpt) error {
	inner, err := m.jsMsg()
	if err != nil {
		return err
	}
	return jsTranslate(inner.InProgress())
}

// SequencePair is a message's sequences in its consumer and stream.
type SequencePair struct {
	Consumer uint64 `json:"consumer_seq"`
	Stream   uint64 `json:"stream_seq"`
}

// MsgMetadata is a JetStream message's delivery metadata.
type MsgMetadata struct {
	Sequence     SequencePair
	NumDelivered uint64
	NumPending   uint64
	Timestamp    time.Time
	Stream       string
	Consumer     string
	Domain       string
}

// Metadata is the message's delivery metadata (from its reply subject).
func (m *Msg) Metadata() (*MsgMetadata, error) {
	inner, err := m.jsMsg()
	if err != nil {
		return nil, err
	}
	md, err := inner.Metadata()
	if err != nil {
		return nil, jsTranslate(err)
	}
	return &MsgMetadata{
		Sequence:     SequencePair{Consumer: md.Sequence.Consumer, Stream: md.Sequence.Stream},
		NumDelivered: md.NumDelivered, NumPending: md.NumPending, Timestamp: md.Timestamp,
		Stream: md.Stream, Consumer: md.Consumer, Domain: md.Domain,
	}, nil
}
