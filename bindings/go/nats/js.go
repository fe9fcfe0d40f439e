package nats

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	natsio "github.com/libnatsio/natsio/bindings/go"
)

// JetStream is the messaging half of nats.go's legacy JetStream API
// (nc.JetStream()): publishing and subscriptions, push (Subscribe,
// QueueSubscribe, SubscribeSync, ChanSubscribe) and pull (PullSubscribe).
type JetStream interface {
	Publish(subj string, data []byte, opts ...PubOpt) (*PubAck, error)
	PublishMsg(m *Msg, opts ...PubOpt) (*PubAck, error)
	PublishAsync(subj string, data []byte, opts ...PubOpt) (PubAckFuture, error)
	PublishMsgAsync(m *Msg, opts ...PubOpt) (PubAckFuture, error)
	PublishAsyncPending() int
	PublishAsyncComplete() <-chan struct{}
	CleanupPublisher()

	Subscribe(subj string, cb MsgHandler, opts ...SubOpt) (*Subscription, error)
	SubscribeSync(subj string, opts ...SubOpt) (*Subscription, error)
	ChanSubscribe(subj string, ch chan *Msg, opts ...SubOpt) (*Subscription, error)
	ChanQueueSubscribe(subj, queue string, ch chan *Msg, opts ...SubOpt) (*Subscription, error)
	QueueSubscribe(subj, queue string, cb MsgHandler, opts ...SubOpt) (*Subscription, error)
	QueueSubscribeSync(subj, queue string, opts ...SubOpt) (*Subscription, error)
	PullSubscribe(subj, durable string, opts ...SubOpt) (*Subscription, error)
}

// JetStreamManager is the management half of the legacy JetStream API:
// streams and consumers.
type JetStreamManager interface {
	AddStream(cfg *StreamConfig, opts ...JSOpt) (*StreamInfo, error)
	UpdateStream(cfg *StreamConfig, opts ...JSOpt) (*StreamInfo, error)
	DeleteStream(name string, opts ...JSOpt) error
	StreamInfo(stream string, opts ...JSOpt) (*StreamInfo, error)
	PurgeStream(name string, opts ...JSOpt) error
	StreamsInfo(opts ...JSOpt) <-chan *StreamInfo
	Streams(opts ...JSOpt) <-chan *StreamInfo
	StreamNames(opts ...JSOpt) <-chan string
	StreamNameBySubject(subj string, opts ...JSOpt) (string, error)

	AddConsumer(stream string, cfg *ConsumerConfig, opts ...JSOpt) (*ConsumerInfo, error)
	UpdateConsumer(stream string, cfg *ConsumerConfig, opts ...JSOpt) (*ConsumerInfo, error)
	DeleteConsumer(stream, consumer string, opts ...JSOpt) error
	ConsumerInfo(stream, name string, opts ...JSOpt) (*ConsumerInfo, error)
	ConsumersInfo(stream string, opts ...JSOpt) <-chan *ConsumerInfo
	Consumers(stream string, opts ...JSOpt) <-chan *ConsumerInfo
	ConsumerNames(stream string, opts ...JSOpt) <-chan string

	AccountInfo(opts ...JSOpt) (*AccountInfo, error)
	GetMsg(name string, seq uint64, opts ...JSOpt) (*RawStreamMsg, error)
	GetLastMsg(name, subject string, opts ...JSOpt) (*RawStreamMsg, error)
	DeleteMsg(name string, seq uint64, opts ...JSOpt) error
	SecureDeleteMsg(name string, seq uint64, opts ...JSOpt) error
}

// JetStreamContext is nats.go's legacy JetStream API (nc.JetStream()):
// both halves, and the Key-Value and Object Store managers.
type JetStreamContext interface {
	JetStream
	JetStreamManager
	KeyValueManager
	ObjectStoreManager
}

// jsTranslate maps the binding's JetStream errors to the legacy API's.
func jsTranslate(err error) error {
	switch {
	case err == nil:
		return nil
	case apiErrorCode(err) == JSErrCodeJetStreamNotEnabledForAccount:
		return ErrJetStreamNotEnabledForAccount
	case errors.Is(err, natsio.ErrStreamNotFound):
		return ErrStreamNotFound
	case errors.Is(err, natsio.ErrConsumerNotFound):
		return ErrConsumerNotFound
	case errors.Is(err, natsio.ErrMsgNotFound):
		return ErrMsgNotFound
	case errors.Is(err, natsio.ErrMessageAlreadyAcked):
		return ErrMsgAlreadyAckd
	case errors.Is(err, natsio.ErrNotJSMessage):
		return ErrNotJSMessage
	case errors.Is(err, natsio.ErrJetStreamNotEnabled):
		return ErrJetStreamNotEnabled
	case errors.Is(err, natsio.ErrStreamNameInUse):
		return ErrStreamNameAlreadyInUse
	case errors.Is(err, natsio.ErrNoStreamResponse):
		return ErrNoStreamResponse
	case errors.Is(err, natsio.ErrTooManyStalledMsgs):
		return ErrTooManyStalledMsgs
	case errors.Is(err, natsio.ErrAsyncPublishTimeout):
		return ErrAsyncPublishTimeout
	case errors.Is(err, natsio.ErrConsumerDeleted):
		return ErrConsumerDeleted
	}
	if apiErr := APIErrorOf(err); apiErr != nil {
		return apiErr
	}
	return Translate(err)
}

// apiErrorCode is the err_code of the API error err carries, 0 for none.
func apiErrorCode(err error) ErrorCode {
	var translated *APIError
	if errors.As(err, &translated) {
		return translated.ErrorCode
	}
	if apiErr := APIErrorOf(err); apiErr != nil {
		return apiErr.ErrorCode
	}
	return 0
}

// ErrorCode is a JetStream API error's err_code.
type ErrorCode uint16

// APIError is an error the JetStream API answered with, printed as
// nats.go's legacy API prints it.
type APIError struct {
	Code        int       `json:"code"`
	ErrorCode   ErrorCode `json:"err_code"`
	Description string    `json:"description,omitempty"`
}

func (e *APIError) Error() string       { return fmt.Sprintf("nats: %s", e.Description) }
func (e *APIError) APIError() *APIError { return e }

// Is matches another APIError with the same ErrorCode.
func (e *APIError) Is(err error) bool {
	if e == nil {
		return false
	}
	var other *APIError
	return errors.As(err, &other) && e.ErrorCode == other.ErrorCode
}

// APIErrorOf is the JetStream API's rejection err carries, nil when it
// carries none. A libnatsio extra (the jetstream package builds its own
// APIError from it).
func APIErrorOf(err error) *APIError {
	var e *natsio.Error
	if !errors.As(err, &e) || e.ErrCode == 0 {
		return nil
	}
	description := e.Detail
	if i := strings.Index(description, " (code "); i >= 0 {
		description = description[:i]
	}
	return &APIError{Code: e.APICode, ErrorCode: ErrorCode(e.ErrCode), Description: description}
}

// ---- options

type jsOpts struct {
	ctx     context.Context
	maxWait time.Duration
	// prefix is APIPrefix's, domain Domain's (the context's only).
	prefix, domain string
	// The asynchronous publishes' settings (the context's only).
	asyncMaxPending int
	asyncErrHandler MsgErrHandler
	asyncTimeout    time.Duration
	// streamListSubject filters StreamsInfo and StreamNames.
	streamListSubject string
	// A call's requests: StreamInfo's, PurgeStream's, GetMsg's Direct Get.
	streamInfo    *StreamInfoRequest
	purge         *StreamPurgeRequest
	directGet     bool
	directNextFor string
}

// JSOpt configures a JetStream context or one of its calls.
type JSOpt interface{ configureJSContext(*jsOpts) error }

// PubOpt configures a publish.
type PubOpt interface{ configurePublish(*pubOpts) error }

// SubOpt configures a JetStream subscription.
type SubOpt interface{ configureSubscribe(*subOpts) error }

// PullOpt configures a Fetch of a pull subscription.
type PullOpt interface{ configurePull(*pullOpts) error }

type pubOpts struct {
	ctx context.Context
	ttl time.Duration // AckWait: how long to wait for the ack
	bin []natsio.PubOpt
	// RetryAttempts and RetryWait, when given.
	retryAttempts                  int
	retryWait                      time.Duration
	hasRetryAttempts, hasRetryWait bool
}

type jsOptFn func(*jsOpts) error

func (f jsOptFn) configureJSContext(o *jsOpts) error { return f(o) }

type pubOptFn func(*pubOpts) error

func (f pubOptFn) configurePublish(o *pubOpts) error { return f(o) }

type subOptFn func(*subOpts) error

func (f subOptFn) configureSubscribe(o *subOpts) error { return f(o) }

// MaxWait bounds each API request of a context or a call (default 5 s),
// and how long a Fetch waits for its messages.
type MaxWait time.Duration

func (d MaxWait) configureJSContext(o *jsOpts) error { o.maxWait = time.Duration(d); return nil }
func (d MaxWait) configurePull(o *pullOpts) error    { o.ttl = time.Duration(d); return nil }

// AckWait is, on a publish, how long it waits for the stream's ack; on a
// subscription, the consumer's ack wait; on AckSync and the like, how long
// it waits for the server's confirmation.
type AckWait time.Duration

func (d AckWait) configurePublish(o *pubOpts) error   { o.ttl = time.Duration(d); return nil }
func (d AckWait) configureSubscribe(o *subOpts) error { o.cfg.AckWait = time.Duration(d); return nil }
func (d AckWait) configureAck(o *ackOpts) error       { o.ttl = time.Duration(d); return nil }

// APIPrefix is the JetStream API's prefix in place of "$JS.API" (an API
// imported from another account); "" keeps the default.
func APIPrefix(pre string) JSOpt {
	return jsOptFn(func(o *jsOpts) error {
		if pre != "" {
			o.prefix = strings.TrimSuffix(pre, ".")
		}
		return nil
	})
}

// Domain is the JetStream domain whose API is used ("$JS.<domain>.API").
func Domain(domain string) JSOpt {
	return jsOptFn(func(o *jsOpts) error { o.domain = domain; return nil })
}

// PublishAsyncMaxPending bounds the asynchronous publishes awaiting their
// ack (default 4000): PublishAsync waits for room beyond it.
func PublishAsyncMaxPending(max int) JSOpt {
	return jsOptFn(func(o *jsOpts) error {
		if max < 1 {
			return errors.New("nats: max ack pending should be >= 1")
		}
		o.asyncMaxPending = max
		return nil
	})
}

// MsgErrHandler receives the message of a failed asynchronous publish
// with its error.
type MsgErrHandler func(JetStream, *Msg, error)

// PublishAsyncErrHandler has cb called for each asynchronous publish that
// fails.
func PublishAsyncErrHandler(cb MsgErrHandler) JSOpt {
	return jsOptFn(func(o *jsOpts) error { o.asyncErrHandler = cb; return nil })
}

// PublishAsyncTimeout fails an asynchronous publish with no ack after d
// (ErrAsyncPublishTimeout).
func PublishAsyncTimeout(d time.Duration) JSOpt {
	return jsOptFn(func(o *jsOpts) error { o.asyncTimeout = d; return nil })
}

// StreamListFilter lists only the streams with a subject matching subject
// (StreamsInfo, StreamNames).
func StreamListFilter(subject string) JSOpt {
	return jsOptFn(func(o *jsOpts) error { o.streamListSubject = subject; return nil })
}

// ContextOpt bounds a call with a context.
type ContextOpt struct{ context.Context }

func (c ContextOpt) configureJSContext(o *jsOpts) error  { o.ctx = c.Context; return nil }
func (c ContextOpt) configurePublish(o *pubOpts) error   { o.ctx = c.Context; return nil }
func (c ContextOpt) configureSubscribe(o *subOpts) error { o.ctx = c.Context; return nil }
func (c ContextOpt) configurePull(o *pullOpts) error     { o.ctx = c.Context; return nil }
func Context(ctx context.Context) ContextOpt             { return ContextOpt{ctx} }
func MsgId(id string) PubOpt                             { return binPubOpt(natsio.MsgID(id)) }
func ExpectStream(stream string) PubOpt                  { return binPubOpt(natsio.ExpectStream(stream)) }
func ExpectLastSequence(seq uint64) PubOpt               { return binPubOpt(natsio.ExpectLastSequence(seq)) }
func ExpectLastMsgId(id string) PubOpt                   { return binPubOpt(natsio.ExpectLastMsgID(id)) }
func ExpectLastSequencePerSubject(seq uint64) PubOpt {
	return binPubOpt(natsio.ExpectLastSequencePerSubject(seq))
}
func MsgTTL(d time.Duration) PubOpt { return binPubOpt(natsio.MsgTTL(d)) }
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
func StartTime(startTime time.Time) SubOpt {
	return subOpt(func(o *subOpts) { o.cfg.DeliverPolicy, o.cfg.OptStartTime = DeliverByStartTimePolicy, &startTime })
}
func ReplayOriginal() SubOpt {
	return subOpt(func(o *subOpts) { o.cfg.ReplayPolicy = ReplayOriginalPolicy })
}
func ReplayInstant() SubOpt {
	return subOpt(func(o *subOpts) { o.cfg.ReplayPolicy = ReplayInstantPolicy })
}
func RateLimit(bps uint64) SubOpt   { return subOpt(func(o *subOpts) { o.cfg.RateLimit = bps }) }
func PullMaxWaiting(n int) SubOpt   { return subOpt(func(o *subOpts) { o.cfg.MaxWaiting = n }) }
func HeadersOnly() SubOpt           { return subOpt(func(o *subOpts) { o.cfg.HeadersOnly = true }) }
func ConsumerMemoryStorage() SubOpt { return subOpt(func(o *subOpts) { o.cfg.MemoryStorage = true }) }

// BackOff is the consumer's redelivery delays, by delivery count.
func BackOff(backOff []time.Duration) SubOpt {
	return subOpt(func(o *subOpts) { o.cfg.BackOff = backOff })
}

// ConsumerFilterSubjects filters the consumer by several subjects (with
// BindStream and an empty subject).
func ConsumerFilterSubjects(subjects ...string) SubOpt {
	return subOpt(func(o *subOpts) { o.cfg.FilterSubjects = subjects })
}

// ConsumerReplicas is the consumer's replica count (at least 1).
func ConsumerReplicas(replicas int) SubOpt {
	return subOptFn(func(o *subOpts) error {
		if replicas < 1 {
			return fmt.Errorf("invalid ConsumerReplicas value (%v), needs to be greater than 0", replicas)
		}
		o.cfg.Replicas = replicas
		return nil
	})
}

// SkipConsumerLookup creates the consumer Durable, ConsumerName or Bind
// names without reading its info first (an existing one is updated).
func SkipConsumerLookup() SubOpt { return subOpt(func(o *subOpts) { o.skipLookup = true }) }

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
	opts    jsOpts         // the context's options
	bopts   []natsio.JSOpt // inner's options

	// pub is the asynchronous publishes' publisher (nil before the first
	// and after CleanupPublisher); the first one publishes through inner,
	// the others through a binding context of their own (pubUsed).
	pubMu   sync.Mutex
	pub     *publisher
	pubUsed bool
}

// JetStream is nats.go's legacy JetStream context on nc.
func (nc *Conn) JetStream(opts ...JSOpt) (JetStreamContext, error) {
	o := jsOpts{maxWait: 5 * time.Second}
	for _, opt := range opts {
		if err := opt.configureJSContext(&o); err != nil {
			return nil, err
		}
	}
	bopts := []natsio.JSOpt{natsio.JSTimeout(o.maxWait)}
	if o.prefix != "" {
		bopts = append(bopts, natsio.JSAPIPrefix(o.prefix))
	}
	if o.domain != "" {
		bopts = append(bopts, natsio.JSDomain(o.domain))
	}
	if o.asyncMaxPending > 0 {
		bopts = append(bopts, natsio.PublishAsyncMaxPending(o.asyncMaxPending))
	}
	if o.asyncTimeout > 0 {
		bopts = append(bopts, natsio.PublishAsyncTimeout(o.asyncTimeout))
	}
	inner, err := nc.conn().JetStream(bopts...)
	if err != nil {
		return nil, jsTranslate(err)
	}
	return &jsContext{nc: nc, inner: inner, maxWait: o.maxWait, opts: o, bopts: bopts}, nil
}

// context is the call's context: the one an option gave, else one bounded
// by the context's MaxWait.
func (js *jsContext) context(given context.Context) (context.Context, context.CancelFunc) {
	if given != nil {
		return given, func() {}
	}
	return context.WithTimeout(context.Background(), js.maxWait)
}

// callOptions are a call's options over the context's, and the call's
// context: a Context option's, else one bounded by MaxWait (the call's,
// else the context's).
func (js *jsContext) callOptions(opts []JSOpt) (jsOpts, context.Context, context.CancelFunc, error) {
	o := js.opts
	o.ctx = nil
	for _, opt := range opts {
		if err := opt.configureJSContext(&o); err != nil {
			return o, nil, nil, err
		}
	}
	if o.ctx != nil {
		return o, o.ctx, func() {}, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), o.maxWait)
	return o, ctx, cancel, nil
}

func (js *jsContext) callContext(opts []JSOpt) (context.Context, context.CancelFunc, error) {
	_, ctx, cancel, err := js.callOptions(opts)
	return ctx, cancel, err
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
	o, err := publishOptions(m, opts)
	if err != nil {
		return nil, err
	}
	if o.ctx != nil && o.ttl != 0 {
		return nil, ErrContextAndTimeout
	}
	wait := o.ttl
	if wait == 0 {
		wait = js.maxWait
	}
	ctx, cancel := o.ctx, context.CancelFunc(func() {})
	if ctx == nil {
		ctx, cancel = context.WithTimeout(context.Background(), wait)
	}
	defer cancel()
	retry, err := o.retryOpts(false)
	if err != nil {
		return nil, err
	}
	ack, err := js.inner.Publish(ctx, m.Subject, m.Data, append(o.bin, retry...)...)
	if err != nil {
		return nil, jsTranslate(err)
	}
	return pubAckOf(ack), nil
}

// publishOptions are a publish's options, m's headers among them.
func publishOptions(m *Msg, opts []PubOpt) (pubOpts, error) {
	var o pubOpts
	if m == nil {
		return o, ErrInvalidMsg
	}
	for _, opt := range opts {
		if err := opt.configurePublish(&o); err != nil {
			return o, err
		}
	}
	if len(m.Header) > 0 {
		o.bin = append(o.bin, natsio.PubHeader(m.Header))
	}
	return o, nil
}

func pubAckOf(ack *natsio.PubAck) *PubAck {
	return &PubAck{Stream: ack.Stream, Sequence: ack.Sequence, Duplicate: ack.Duplicate, Domain: ack.Domain}
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
	if cfg == nil {
		return nil, ErrStreamConfigRequired
	}
	if err := checkStreamName(cfg.Name); err != nil {
		return nil, err
	}
	ctx, cancel, err := js.callContext(opts)
	if err != nil {
		return nil, err
	}
	defer cancel()
	req, err := streamRequest(cfg)
	if err != nil {
		return nil, err
	}
	var bcfg natsio.StreamConfig
	if err := viaJSON(req, &bcfg); err != nil {
		return nil, err
	}
	info, err := streamInfo(op(ctx, bcfg))
	if err != nil {
		return nil, err
	}
	if err := checkStreamKept(cfg, info); err != nil {
		return nil, err
	}
	return info, nil
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

// PurgeStream removes the stream's messages: all of them, or those a
// *StreamPurgeRequest option selects.
func (js *jsContext) PurgeStream(name string, opts ...JSOpt) error {
	if err := checkStreamName(name); err != nil {
		return err
	}
	o, ctx, cancel, err := js.callOptions(opts)
	if err != nil {
		return err
	}
	defer cancel()
	if o.purge != nil {
		return js.purgeWith(ctx, &o, name)
	}
	_, err = js.inner.PurgeStream(ctx, name)
	return jsTranslate(err)
}

// StreamInfo reads the stream's configuration and state; a
// *StreamInfoRequest option asks for its deleted messages and its
// subjects' counts too.
func (js *jsContext) StreamInfo(stream string, opts ...JSOpt) (*StreamInfo, error) {
	if err := checkStreamName(stream); err != nil {
		return nil, err
	}
	o, ctx, cancel, err := js.callOptions(opts)
	if err != nil {
		return nil, err
	}
	defer cancel()
	if o.streamInfo != nil {
		return js.streamInfoPaged(ctx, &o, stream)
	}
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

// AddConsumer creates a consumer, or returns the one of the same name
// and configuration; one of the same name and another configuration is
// ErrConsumerNameAlreadyInUse.
func (js *jsContext) AddConsumer(stream string, cfg *ConsumerConfig, opts ...JSOpt) (*ConsumerInfo, error) {
	if cfg == nil {
		cfg = &ConsumerConfig{}
	}
	if err := checkConsumerRequest(stream, cfg); err != nil {
		return nil, err
	}
	ctx, cancel, err := js.callContext(opts)
	if err != nil {
		return nil, err
	}
	defer cancel()
	info, err := js.addConsumer(ctx, stream, cfg)
	if code := apiErrorCode(err); code == JSErrCodeConsumerNameExists || code == jsErrCodeConsumerExists {
		return nil, consumerNameInUse(stream, consumerNameOf(cfg))
	}
	return info, err
}

// jsErrCodeConsumerExists is the server's answer to a create of a
// consumer that exists with another configuration.
const jsErrCodeConsumerExists ErrorCode = 10148

func consumerNameOf(cfg *ConsumerConfig) string {
	if cfg.Name != "" {
		return cfg.Name
	}
	return cfg.Durable
}

// checkConsumerRequest is nats.go's check of a consumer's create or
// update: the stream's and consumer's names, a filter subject that does
// not start or end with a dot.
func checkConsumerRequest(stream string, cfg *ConsumerConfig) error {
	if err := checkStreamName(stream); err != nil {
		return err
	}
	if err := checkFilters(cfg); err != nil {
		return err
	}
	name := consumerNameOf(cfg)
	if name == "" {
		return nil
	}
	if err := checkConsumerName(name); err != nil {
		return err
	}
	if f := cfg.FilterSubject; f != "" && f != ">" && (f[0] == '.' || f[len(f)-1] == '.') {
		return fmt.Errorf("%w: %q", ErrInvalidFilterSubject, f)
	}
	return nil
}

// checkFilters refuses FilterSubject with FilterSubjects with the
// server's answer (nats.go leaves it to the server; the library checks it
// before sending).
func checkFilters(cfg *ConsumerConfig) error {
	if cfg.FilterSubject != "" && len(cfg.FilterSubjects) > 0 {
		return ErrDuplicateFilterSubjects
	}
	return nil
}

// checkFiltersKept is nats.go's check that the server kept the filter
// subjects asked for (an older server drops them).
func checkFiltersKept(cfg *ConsumerConfig, info *ConsumerInfo) (*ConsumerInfo, error) {
	if len(cfg.FilterSubjects) != 0 && len(info.Config.FilterSubjects) == 0 {
		return nil, ErrConsumerMultipleFilterSubjectsNotSupported
	}
	return info, nil
}

func (js *jsContext) addConsumer(ctx context.Context, stream string, cfg *ConsumerConfig) (*ConsumerInfo, error) {
	var bcfg natsio.ConsumerConfig
	if err := viaJSON(cfg, &bcfg); err != nil {
		return nil, err
	}
	info, err := consumerInfo(js.inner.CreateConsumer(ctx, stream, bcfg))
	if err != nil {
		return nil, err
	}
	return checkFiltersKept(cfg, info)
}

func (js *jsContext) DeleteConsumer(stream, consumer string, opts ...JSOpt) error {
	if err := checkConsumerArgs(stream, consumer); err != nil {
		return err
	}
	ctx, cancel, err := js.callContext(opts)
	if err != nil {
		return err
	}
	defer cancel()
	return jsTranslate(js.inner.DeleteConsumer(ctx, stream, consumer))
}

// checkConsumerArgs checks the names a call on one consumer is given.
func checkConsumerArgs(stream, consumer string) error {
	if err := checkStreamName(stream); err != nil {
		return err
	}
	return checkConsumerName(consumer)
}

func (js *jsContext) ConsumerInfo(stream, name string, opts ...JSOpt) (*ConsumerInfo, error) {
	if err := checkConsumerArgs(stream, name); err != nil {
		return nil, err
	}
	ctx, cancel, err := js.callContext(opts)
	if err != nil {
		return nil, err
	}
	defer cancel()
	return consumerInfo(js.inner.ConsumerInfo(ctx, stream, name))
}

// ---- push subscriptions

type subOpts struct {
	ctx        context.Context
	cfg        ConsumerConfig
	stream     string
	consumer   string
	manualAck  bool
	ordered    bool
	skipLookup bool
	// queueLen is what a consumer the subscription creates gets as
	// MaxAckPending when the program set none (nats.go: the sync, channel
	// and pull subscriptions' channel capacity).
	queueLen int
}

// DefaultMaxChanLen is the capacity of nats.go's subscription channels
// (and so the MaxAckPending its sync and pull subscriptions create their
// consumers with).
const DefaultMaxChanLen = 64 * 1024

func (js *jsContext) Subscribe(subj string, cb MsgHandler, opts ...SubOpt) (*Subscription, error) {
	if cb == nil {
		return nil, ErrBadSubscription
	}
	return js.subscribe(subj, "", cb, 0, opts)
}

func (js *jsContext) SubscribeSync(subj string, opts ...SubOpt) (*Subscription, error) {
	return js.subscribe(subj, "", nil, DefaultMaxChanLen, opts)
}

func (js *jsContext) QueueSubscribe(subj, queue string, cb MsgHandler, opts ...SubOpt) (*Subscription, error) {
	if cb == nil {
		return nil, ErrBadSubscription
	}
	return js.subscribe(subj, queue, cb, 0, opts)
}

func (js *jsContext) QueueSubscribeSync(subj, queue string, opts ...SubOpt) (*Subscription, error) {
	return js.subscribe(subj, queue, nil, DefaultMaxChanLen, opts)
}

// ChanSubscribe delivers to ch; the messages are acknowledged by the
// program, as in nats.go.
func (js *jsContext) ChanSubscribe(subj string, ch chan *Msg, opts ...SubOpt) (*Subscription, error) {
	return js.ChanQueueSubscribe(subj, "", ch, opts...)
}

func (js *jsContext) ChanQueueSubscribe(subj, queue string, ch chan *Msg, opts ...SubOpt) (*Subscription, error) {
	return js.subscribe(subj, queue, func(m *Msg) { ch <- m }, cap(ch), append(opts, ManualAck()))
}

// subscribeOptions reads a subscription's options (queueLen as
// subOpts.queueLen) and checks what every kind of subscription checks.
func subscribeOptions(subj string, queueLen int, opts []SubOpt) (subOpts, error) {
	o := subOpts{cfg: ConsumerConfig{AckPolicy: AckExplicitPolicy}, queueLen: queueLen}
	for _, opt := range opts {
		if opt == nil {
			continue
		}
		if err := opt.configureSubscribe(&o); err != nil {
			return o, err
		}
	}
	if subj == "" && o.stream == "" {
		return o, errors.New("nats: subject required")
	}
	return o, nil
}

// streamOf is the stream the subscription reads: BindStream's, else the
// one stream holding subj (ErrNoMatchingStream when none or several do).
func (js *jsContext) streamOf(ctx context.Context, subj string, o *subOpts) (string, error) {
	if o.stream != "" {
		return o.stream, nil
	}
	names, err := js.inner.StreamNames(ctx, subj)
	if err != nil {
		return "", jsTranslate(err)
	}
	if len(names) != 1 {
		return "", ErrNoMatchingStream
	}
	return names[0], nil
}

// consumerFor is the consumer a subscription reads, as nats.go finds it:
// the one Bind, Durable (or, for a queue, the queue's name) names when it
// exists (a push consumer for push, a pull one for pull), else one
// created with the options (then created is true: Unsubscribe deletes it).
// SkipConsumerLookup creates (or updates) without looking first. pending
// is what a consumer it created had to deliver (InitialConsumerPending).
func (js *jsContext) consumerFor(ctx context.Context, stream, subj, queue string, o *subOpts, pull bool) (name string, created bool, pending uint64, err error) {
	name = o.consumer
	if name == "" {
		name = o.cfg.Durable
	}
	if name == "" && queue != "" {
		name = queue // nats.go names a queue's consumer after the queue
	}
	if name != "" && !o.skipLookup {
		info, err := consumerInfo(js.inner.ConsumerInfo(ctx, stream, name))
		switch {
		case err == nil:
			if subj != "" && info.Config.FilterSubject != "" && info.Config.FilterSubject != subj {
				return "", false, 0, ErrSubjectMismatch
			}
			if pull && info.Config.DeliverSubject != "" {
				return "", false, 0, ErrPullSubscribeToPushConsumer
			}
			if !pull && info.Config.DeliverSubject == "" {
				return "", false, 0, ErrPullSubscribeRequired
			}
			o.cfg.AckPolicy = info.Config.AckPolicy // what the subscription then acks by
			return name, false, 0, nil
		case !errors.Is(err, ErrConsumerNotFound) || o.consumer != "":
			return "", false, 0, err
		}
	}
	if o.skipLookup && o.consumer != "" {
		return o.consumer, false, 0, nil // bound: nothing to create
	}
	info, err := js.createConsumer(ctx, stream, subj, queue, name, o, pull)
	if err != nil {
		return "", false, 0, err
	}
	return info.Name, true, initialPending(info), nil
}

// initialPending is what a consumer had to deliver when it was made: the
// messages it has delivered and those still pending, as nats.go counts.
func initialPending(info *ConsumerInfo) uint64 { return info.NumPending + info.Delivered.Consumer }

// createConsumer creates the consumer of a subscription with nats.go's
// defaults: filtered by subj, a new inbox as deliver subject for push,
// MaxAckPending the subscription's queue length when unset.
func (js *jsContext) createConsumer(ctx context.Context, stream, subj, queue, durable string, o *subOpts, pull bool) (*ConsumerInfo, error) {
	cfg := o.cfg
	cfg.Durable = durable
	if durable == "" && cfg.Name == "" {
		cfg.Name = randomToken(8) // an ephemeral's name, 8 characters as nats.go's
	}
	if !pull && cfg.DeliverSubject == "" {
		cfg.DeliverSubject = js.nc.NewRespInbox()
	}
	cfg.DeliverGroup = queue
	if cfg.FilterSubject == "" && subj != "" {
		cfg.FilterSubject = subj
	}
	if cfg.MaxAckPending == 0 && o.queueLen > 0 && cfg.AckPolicy != AckNonePolicy {
		cfg.MaxAckPending = o.queueLen
	}
	var bcfg natsio.ConsumerConfig
	if err := viaJSON(&cfg, &bcfg); err != nil {
		return nil, err
	}
	create := js.inner.CreateConsumer
	if o.skipLookup {
		create = js.inner.CreateOrUpdateConsumer
	}
	return consumerInfo(create(ctx, stream, bcfg))
}

// subscribe binds to the consumer the options name, or creates one (as
// nats.go: durable when Durable or a queue names it, ephemeral else)
// delivering to a new inbox, and consumes it. A consumer it created is
// deleted again by Unsubscribe.
func (js *jsContext) subscribe(subj, queue string, cb MsgHandler, queueLen int, opts []SubOpt) (*Subscription, error) {
	o, err := subscribeOptions(subj, queueLen, opts)
	if err != nil {
		return nil, err
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
	stream, err := js.streamOf(ctx, subj, &o)
	if err != nil {
		return nil, err
	}
	if o.ordered {
		return js.subscribeOrdered(ctx, stream, subj, cb, &o)
	}
	name, created, pending, err := js.consumerFor(ctx, stream, subj, queue, &o, false)
	if err != nil {
		return nil, err
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
		push: &pushSub{js: js, inner: inner, stream: stream, consumer: name, created: created, initialPending: pending,
			ackNone: info.Config.AckPolicy == AckNonePolicy, done: make(chan struct{})}}
	// Missed heartbeats reach the AsyncErrorCB as ErrConsumerNotActive,
	// with this subscription, as in nats.go.
	s.push.unroute = js.nc.RouteMissedHeartbeats(info.Config.DeliverSubject, func() {
		if cb := js.nc.ErrorHandler(); cb != nil {
			cb(js.nc, s, ErrConsumerNotActive)
		}
	})
	close(s.ready)
	if cb != nil {
		s.push.start(s, cb, !o.manualAck && o.cfg.AckPolicy != AckNonePolicy)
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
	var pending uint64
	if info := oc.CachedInfo(); info != nil {
		pending = info.NumPending + info.Delivered.Consumer
	}
	inner, err := oc.Messages(ctx)
	if err != nil {
		_ = oc.Stop(ctx)
		return nil, jsTranslate(err)
	}
	s := &Subscription{Subject: subj, nc: js.nc, ready: make(chan struct{}), sync: cb == nil,
		push: &pushSub{js: js, inner: inner, stream: stream, ordered: oc, ackNone: true, done: make(chan struct{}),
			initialPending: pending, unroute: func() {}}}
	close(s.ready)
	if cb != nil {
		s.push.start(s, cb, false)
	} else {
		close(s.push.done)
	}
	return s, nil
}

// pushSub is what a Subscription of the legacy JetStream API consumes.
type pushSub struct {
	js       *jsContext
	inner    *natsio.Consumption
	stream   string
	consumer string
	created  bool // by Subscribe: deleted by Unsubscribe
	ackNone  bool // the consumer takes no acks
	// initialPending is InitialConsumerPending's answer (0 unless created).
	initialPending uint64
	done           chan struct{}
	// isStopped is set by the first Unsubscribe or Drain.
	isStopped atomic.Bool
	unroute   func()                  // ends RouteMissedHeartbeats
	ordered   *natsio.OrderedConsumer // OrderedConsumer(): stopped by stop
}

// start runs cb for each message on a goroutine of its own. Barrier counts
// the subscription, as nats.go counts its callback subscriptions, from
// before start returns: a Barrier called once messages have arrived waits
// for them even if the goroutine has not run yet.
func (p *pushSub) start(s *Subscription, cb MsgHandler, autoAck bool) {
	s.barriers = &barrierTracker{}
	p.js.nc.pushSubs.Store(s, struct{}{})
	go p.run(s, cb, autoAck)
}

func (p *pushSub) run(s *Subscription, cb MsgHandler, autoAck bool) {
	defer close(p.done)
	defer p.unroute()
	defer func() {
		p.js.nc.pushSubs.Delete(s)
		s.barriers.release()
	}()
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
		s.barriers.handledOne()
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

type ackOpts struct {
	ctx context.Context
	ttl time.Duration // AckWait: how long AckSync waits
}

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

// ackTarget is the message an acknowledgement is for:
// ErrCantAckIfConsumerAckNone when its subscription's consumer takes no
// acks (AckNone, and ordered consumers), as in nats.go.
func (m *Msg) ackTarget() (*natsio.Msg, error) {
	inner, err := m.jsMsg()
	if err != nil {
		return nil, err
	}
	if s := m.Sub; s != nil && ((s.push != nil && s.push.ackNone) || (s.pull != nil && s.pull.ackNone)) {
		return nil, ErrCantAckIfConsumerAckNone
	}
	return inner, nil
}

// Ack acknowledges a JetStream message.
func (m *Msg) Ack(opts ...AckOpt) error {
	inner, err := m.ackTarget()
	if err != nil {
		return err
	}
	return jsTranslate(inner.Ack())
}

// AckSync acknowledges and waits for the server's confirmation.
func (m *Msg) AckSync(opts ...AckOpt) error {
	inner, err := m.ackTarget()
	if err != nil {
		return err
	}
	var o ackOpts
	for _, opt := range opts {
		if err := opt.configureAck(&o); err != nil {
			return err
		}
	}
	if o.ctx != nil && o.ttl != 0 {
		return ErrContextAndTimeout
	}
	ctx := o.ctx
	if ctx == nil {
		wait := o.ttl
		if wait == 0 {
			wait = 5 * time.Second
		}
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(context.Background(), wait)
		defer cancel()
	}
	return jsTranslate(inner.AckSync(ctx))
}

// Nak asks for redelivery.
func (m *Msg) Nak(opts ...AckOpt) error {
	inner, err := m.ackTarget()
	if err != nil {
		return err
	}
	return jsTranslate(inner.Nak())
}

// NakWithDelay asks for redelivery after delay.
func (m *Msg) NakWithDelay(delay time.Duration, opts ...AckOpt) error {
	inner, err := m.ackTarget()
	if err != nil {
		return err
	}
	return jsTranslate(inner.NakWithDelay(delay))
}

// Term stops redelivery.
func (m *Msg) Term(opts ...AckOpt) error {
	inner, err := m.ackTarget()
	if err != nil {
		return err
	}
	return jsTranslate(inner.Term())
}

// InProgress resets the message's ack wait.
func (m *Msg) InProgress(opts ...AckOpt) error {
	inner, err := m.ackTarget()
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

// ---- listing

// listed hands items out on an unbuffered channel, closed after the last
// one or once ctx ends (the program stopped reading), as nats.go's
// listings; cancel ends with it.
func listed[T any](ctx context.Context, cancel context.CancelFunc, items []T) <-chan T {
	ch := make(chan T)
	go func() {
		defer cancel()
		defer close(ch)
		for _, item := range items {
			select {
			case ch <- item:
			case <-ctx.Done():
				return
			}
		}
	}()
	return ch
}

// Streams lists the streams' infos (StreamListFilter filters them by
// subject). An error ends the listing early; a bad option gives nil.
func (js *jsContext) Streams(opts ...JSOpt) <-chan *StreamInfo {
	o, ctx, cancel, err := js.callOptions(opts)
	if err != nil {
		return nil
	}
	infos, err := js.inner.Streams(ctx, o.streamListSubject)
	var out []*StreamInfo
	if err == nil {
		for _, info := range infos {
			if si, err := streamInfo(info, nil); err == nil {
				out = append(out, si)
			}
		}
	}
	return listed(ctx, cancel, out)
}

// StreamsInfo is Streams (nats.go's older name).
func (js *jsContext) StreamsInfo(opts ...JSOpt) <-chan *StreamInfo { return js.Streams(opts...) }

// StreamNames lists the streams' names.
func (js *jsContext) StreamNames(opts ...JSOpt) <-chan string {
	o, ctx, cancel, err := js.callOptions(opts)
	if err != nil {
		return nil
	}
	names, _ := js.inner.StreamNames(ctx, o.streamListSubject)
	return listed(ctx, cancel, names)
}

// StreamNameBySubject is the one stream holding subj
// (ErrNoMatchingStream when none or several do).
func (js *jsContext) StreamNameBySubject(subj string, opts ...JSOpt) (string, error) {
	ctx, cancel, err := js.callContext(opts)
	if err != nil {
		return "", err
	}
	defer cancel()
	return js.streamOf(ctx, subj, &subOpts{})
}

// Consumers lists the infos of stream's consumers.
func (js *jsContext) Consumers(stream string, opts ...JSOpt) <-chan *ConsumerInfo {
	_, ctx, cancel, err := js.callOptions(opts)
	if err != nil {
		return nil
	}
	infos, err := js.inner.Consumers(ctx, stream)
	var out []*ConsumerInfo
	if err == nil {
		for _, info := range infos {
			if ci, err := consumerInfo(info, nil); err == nil {
				out = append(out, ci)
			}
		}
	}
	return listed(ctx, cancel, out)
}

// ConsumersInfo is Consumers (nats.go's older name).
func (js *jsContext) ConsumersInfo(stream string, opts ...JSOpt) <-chan *ConsumerInfo {
	return js.Consumers(stream, opts...)
}

// ConsumerNames lists the names of stream's consumers.
func (js *jsContext) ConsumerNames(stream string, opts ...JSOpt) <-chan string {
	_, ctx, cancel, err := js.callOptions(opts)
	if err != nil {
		return nil
	}
	names, _ := js.inner.ConsumerNames(ctx, stream)
	return listed(ctx, cancel, names)
}

// UpdateConsumer changes an existing consumer's configuration.
func (js *jsContext) UpdateConsumer(stream string, cfg *ConsumerConfig, opts ...JSOpt) (*ConsumerInfo, error) {
	if cfg == nil {
		return nil, ErrConsumerConfigRequired
	}
	if consumerNameOf(cfg) == "" {
		return nil, ErrConsumerNameRequired
	}
	if err := checkConsumerRequest(stream, cfg); err != nil {
		return nil, err
	}
	ctx, cancel, err := js.callContext(opts)
	if err != nil {
		return nil, err
	}
	defer cancel()
	var bcfg natsio.ConsumerConfig
	if err := viaJSON(cfg, &bcfg); err != nil {
		return nil, err
	}
	info, err := consumerInfo(js.inner.UpdateConsumer(ctx, stream, bcfg))
	if err != nil {
		return nil, err
	}
	return checkFiltersKept(cfg, info)
}
