// Package jetstream is nats.go's jetstream package over libnatsio: a
// program written for github.com/nats-io/nats.go/jetstream builds with it
// by changing only its import lines. It is a facade over the natsio
// binding, which does the work.
package jetstream

import (
	"context"
	"encoding/json"
	"time"

	natsio "github.com/libnatsio/natsio/bindings/go"
	"github.com/libnatsio/natsio/bindings/go/nats"
)

// JetStream is nats.go's JetStream interface (the methods this package
// offers).
type JetStream interface {
	AccountInfo(ctx context.Context) (*AccountInfo, error)
	Conn() *nats.Conn

	CreateStream(ctx context.Context, cfg StreamConfig) (Stream, error)
	UpdateStream(ctx context.Context, cfg StreamConfig) (Stream, error)
	CreateOrUpdateStream(ctx context.Context, cfg StreamConfig) (Stream, error)
	Stream(ctx context.Context, stream string) (Stream, error)
	DeleteStream(ctx context.Context, stream string) error
	ListStreams(ctx context.Context, opts ...StreamListOpt) StreamInfoLister
	StreamNames(ctx context.Context, opts ...StreamListOpt) StreamNameLister

	StreamNameBySubject(ctx context.Context, subject string) (string, error)

	CreateOrUpdateConsumer(ctx context.Context, stream string, cfg ConsumerConfig) (Consumer, error)
	CreateConsumer(ctx context.Context, stream string, cfg ConsumerConfig) (Consumer, error)
	UpdateConsumer(ctx context.Context, stream string, cfg ConsumerConfig) (Consumer, error)
	OrderedConsumer(ctx context.Context, stream string, cfg OrderedConsumerConfig) (Consumer, error)
	Consumer(ctx context.Context, stream string, consumer string) (Consumer, error)
	DeleteConsumer(ctx context.Context, stream string, consumer string) error
	CreateOrUpdatePushConsumer(ctx context.Context, stream string, cfg ConsumerConfig) (PushConsumer, error)
	CreatePushConsumer(ctx context.Context, stream string, cfg ConsumerConfig) (PushConsumer, error)
	UpdatePushConsumer(ctx context.Context, stream string, cfg ConsumerConfig) (PushConsumer, error)
	PushConsumer(ctx context.Context, stream string, consumer string) (PushConsumer, error)
	PauseConsumer(ctx context.Context, stream string, consumer string, pauseUntil time.Time) (*ConsumerPauseResponse, error)
	ResumeConsumer(ctx context.Context, stream string, consumer string) (*ConsumerPauseResponse, error)

	Publish(ctx context.Context, subject string, payload []byte, opts ...PublishOpt) (*PubAck, error)
	PublishMsg(ctx context.Context, msg *nats.Msg, opts ...PublishOpt) (*PubAck, error)
	PublishAsync(subject string, payload []byte, opts ...PublishOpt) (PubAckFuture, error)
	PublishMsgAsync(msg *nats.Msg, opts ...PublishOpt) (PubAckFuture, error)
	PublishAsyncPending() int
	PublishAsyncComplete() <-chan struct{}

	KeyValueManager
	ObjectStoreManager
}

// JetStreamOpt configures New.
type JetStreamOpt func(*[]natsio.JSOpt) error

// WithPublishAsyncMaxPending bounds the asynchronous publishes awaiting
// their ack.
func WithPublishAsyncMaxPending(max int) JetStreamOpt {
	return func(o *[]natsio.JSOpt) error { *o = append(*o, natsio.PublishAsyncMaxPending(max)); return nil }
}

// WithDefaultTimeout bounds each API request without a context deadline.
func WithDefaultTimeout(d time.Duration) JetStreamOpt {
	return func(o *[]natsio.JSOpt) error { *o = append(*o, natsio.JSTimeout(d)); return nil }
}

type jetStream struct {
	nc    *nats.Conn
	inner *natsio.JetStream
}

// New is a JetStream context on nc.
func New(nc *nats.Conn, opts ...JetStreamOpt) (JetStream, error) {
	return newJetStream(nc, opts)
}

// NewWithDomain is a JetStream context on nc for a JetStream domain.
func NewWithDomain(nc *nats.Conn, domain string, opts ...JetStreamOpt) (JetStream, error) {
	return newJetStream(nc, append([]JetStreamOpt{func(o *[]natsio.JSOpt) error {
		*o = append(*o, natsio.JSDomain(domain))
		return nil
	}}, opts...))
}

func newJetStream(nc *nats.Conn, opts []JetStreamOpt) (JetStream, error) {
	var jsOpts []natsio.JSOpt
	for _, o := range opts {
		if err := o(&jsOpts); err != nil {
			return nil, err
		}
	}
	inner, err := nc.Binding().JetStream(jsOpts...)
	if err != nil {
		return nil, translate(err)
	}
	return &jetStream{nc: nc, inner: inner}, nil
}

func (js *jetStream) Conn() *nats.Conn { return js.nc }

func (js *jetStream) AccountInfo(ctx context.Context) (*AccountInfo, error) {
	info, err := js.inner.AccountInfo(ctx)
	if err != nil {
		return nil, translate(err)
	}
	var out AccountInfo
	if err := json.Unmarshal(info.Raw, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// ---- streams

// Stream is a handle on a stream.
type Stream interface {
	Info(ctx context.Context, opts ...StreamInfoOpt) (*StreamInfo, error)
	CachedInfo() *StreamInfo
	Purge(ctx context.Context, opts ...StreamPurgeOpt) error
	GetMsg(ctx context.Context, seq uint64, opts ...GetMsgOpt) (*RawStreamMsg, error)
	GetLastMsgForSubject(ctx context.Context, subject string) (*RawStreamMsg, error)
	DeleteMsg(ctx context.Context, seq uint64) error
	SecureDeleteMsg(ctx context.Context, seq uint64) error

	CreateOrUpdateConsumer(ctx context.Context, cfg ConsumerConfig) (Consumer, error)
	CreateConsumer(ctx context.Context, cfg ConsumerConfig) (Consumer, error)
	UpdateConsumer(ctx context.Context, cfg ConsumerConfig) (Consumer, error)
	OrderedConsumer(ctx context.Context, cfg OrderedConsumerConfig) (Consumer, error)
	Consumer(ctx context.Context, consumer string) (Consumer, error)
	DeleteConsumer(ctx context.Context, consumer string) error
	CreateOrUpdatePushConsumer(ctx context.Context, cfg ConsumerConfig) (PushConsumer, error)
	CreatePushConsumer(ctx context.Context, cfg ConsumerConfig) (PushConsumer, error)
	UpdatePushConsumer(ctx context.Context, cfg ConsumerConfig) (PushConsumer, error)
	PushConsumer(ctx context.Context, consumer string) (PushConsumer, error)
	ListConsumers(ctx context.Context) ConsumerInfoLister
	ConsumerNames(ctx context.Context) ConsumerNameLister
}

type stream struct {
	js   *jetStream
	name string
	info *StreamInfo
}

// StreamInfoOpt configures Stream.Info.
type StreamInfoOpt func(*string) error

// WithSubjectFilter has Info list the message count of the subjects
// matching subject (StreamState.Subjects).
func WithSubjectFilter(subject string) StreamInfoOpt {
	return func(s *string) error { *s = subject; return nil }
}

func streamInfo(info *natsio.StreamInfo, err error) (*StreamInfo, error) {
	if err != nil {
		return nil, translate(err)
	}
	var out StreamInfo
	if err := json.Unmarshal(info.Raw, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

func (js *jetStream) streamOp(ctx context.Context, cfg StreamConfig,
	op func(context.Context, natsio.StreamConfig) (*natsio.StreamInfo, error)) (Stream, error) {
	var bcfg natsio.StreamConfig
	if err := convert(cfg, &bcfg); err != nil {
		return nil, err
	}
	info, err := streamInfo(op(ctx, bcfg))
	if err != nil {
		return nil, err
	}
	return &stream{js: js, name: info.Config.Name, info: info}, nil
}

func (js *jetStream) CreateStream(ctx context.Context, cfg StreamConfig) (Stream, error) {
	return js.streamOp(ctx, cfg, js.inner.CreateStream)
}

func (js *jetStream) UpdateStream(ctx context.Context, cfg StreamConfig) (Stream, error) {
	return js.streamOp(ctx, cfg, js.inner.UpdateStream)
}

func (js *jetStream) CreateOrUpdateStream(ctx context.Context, cfg StreamConfig) (Stream, error) {
	return js.streamOp(ctx, cfg, js.inner.CreateOrUpdateStream)
}

func (js *jetStream) Stream(ctx context.Context, name string) (Stream, error) {
	info, err := streamInfo(js.inner.StreamInfo(ctx, name))
	if err != nil {
		return nil, err
	}
	return &stream{js: js, name: name, info: info}, nil
}

func (js *jetStream) DeleteStream(ctx context.Context, name string) error {
	return translate(js.inner.DeleteStream(ctx, name))
}

// StreamListOpt filters ListStreams and StreamNames.
type StreamListOpt func(*string) error

// WithStreamListSubject lists only the streams holding subject.
func WithStreamListSubject(subject string) StreamListOpt {
	return func(s *string) error { *s = subject; return nil }
}

// StreamInfoLister yields the streams' infos on Info, then Err.
type StreamInfoLister interface {
	Info() <-chan *StreamInfo
	Err() error
}

// StreamNameLister yields the streams' names on Name, then Err.
type StreamNameLister interface {
	Name() <-chan string
	Err() error
}

// lister is a finished listing served through a closed channel.
type lister[T any] struct {
	ch  chan T
	err error
}

func newLister[T any](items []T, err error) *lister[T] {
	l := &lister[T]{ch: make(chan T, len(items)), err: err}
	for _, it := range items {
		l.ch <- it
	}
	close(l.ch)
	return l
}

func (l *lister[T]) Info() <-chan T { return l.ch }
func (l *lister[T]) Name() <-chan T { return l.ch }
func (l *lister[T]) Err() error     { return l.err }

// Status and Error are the Key-Value and Object Store listers' names.
func (l *lister[T]) Status() <-chan T { return l.ch }
func (l *lister[T]) Error() error     { return l.err }

func listSubject(opts []StreamListOpt) string {
	var subject string
	for _, o := range opts {
		_ = o(&subject)
	}
	return subject
}

func (js *jetStream) ListStreams(ctx context.Context, opts ...StreamListOpt) StreamInfoLister {
	infos, err := js.inner.Streams(ctx, listSubject(opts))
	var out []*StreamInfo
	for _, info := range infos {
		si, err2 := streamInfo(info, nil)
		if err2 != nil {
			err = err2
			break
		}
		out = append(out, si)
	}
	return newLister(out, translate(err))
}

func (js *jetStream) StreamNames(ctx context.Context, opts ...StreamListOpt) StreamNameLister {
	names, err := js.inner.StreamNames(ctx, listSubject(opts))
	return newLister(names, translate(err))
}

// StreamNameBySubject is the stream holding subject (ErrStreamNotFound when
// none does).
func (js *jetStream) StreamNameBySubject(ctx context.Context, subject string) (string, error) {
	names, err := js.inner.StreamNames(ctx, subject)
	if err != nil {
		return "", translate(err)
	}
	if len(names) == 0 {
		return "", ErrStreamNotFound
	}
	return names[0], nil
}

func (s *stream) Info(ctx context.Context, opts ...StreamInfoOpt) (*StreamInfo, error) {
	var filter string
	for _, o := range opts {
		if err := o(&filter); err != nil {
			return nil, err
		}
	}
	var info *StreamInfo
	var err error
	if filter != "" {
		info, err = streamInfo(s.js.inner.StreamInfoWithSubjects(ctx, s.name, filter))
	} else {
		info, err = streamInfo(s.js.inner.StreamInfo(ctx, s.name))
	}
	if err == nil {
		s.info = info
	}
	return info, err
}

func (s *stream) CachedInfo() *StreamInfo { return s.info }

// StreamPurgeOpt narrows Purge.
type StreamPurgeOpt func(*[]natsio.PurgeOpt) error

func WithPurgeSubject(subject string) StreamPurgeOpt {
	return func(o *[]natsio.PurgeOpt) error { *o = append(*o, natsio.PurgeSubject(subject)); return nil }
}

func WithPurgeSequence(sequence uint64) StreamPurgeOpt {
	return func(o *[]natsio.PurgeOpt) error { *o = append(*o, natsio.PurgeSequence(sequence)); return nil }
}

func WithPurgeKeep(keep uint64) StreamPurgeOpt {
	return func(o *[]natsio.PurgeOpt) error { *o = append(*o, natsio.PurgeKeep(keep)); return nil }
}

func (s *stream) Purge(ctx context.Context, opts ...StreamPurgeOpt) error {
	var purgeOpts []natsio.PurgeOpt
	for _, o := range opts {
		if err := o(&purgeOpts); err != nil {
			return err
		}
	}
	_, err := s.js.inner.PurgeStream(ctx, s.name, purgeOpts...)
	return translate(err)
}

// GetMsgOpt configures GetMsg.
type GetMsgOpt func(*string) error

// WithGetMsgSubject reads the first message on subject at or after the
// sequence.
func WithGetMsgSubject(subject string) GetMsgOpt {
	return func(s *string) error { *s = subject; return nil }
}

func rawMsg(m *natsio.RawStreamMsg, err error) (*RawStreamMsg, error) {
	if err != nil {
		return nil, translate(err)
	}
	return &RawStreamMsg{Subject: m.Subject, Sequence: m.Sequence, Header: m.Header, Data: m.Data, Time: m.Time}, nil
}

func (s *stream) GetMsg(ctx context.Context, seq uint64, opts ...GetMsgOpt) (*RawStreamMsg, error) {
	var subject string
	for _, o := range opts {
		if err := o(&subject); err != nil {
			return nil, err
		}
	}
	if subject != "" {
		return rawMsg(s.js.inner.GetNextMsg(ctx, s.name, seq, subject))
	}
	return rawMsg(s.js.inner.GetMsg(ctx, s.name, seq))
}

func (s *stream) GetLastMsgForSubject(ctx context.Context, subject string) (*RawStreamMsg, error) {
	return rawMsg(s.js.inner.GetLastMsg(ctx, s.name, subject))
}

// DeleteMsg deletes message seq without erasing its bytes, as nats.go's.
func (s *stream) DeleteMsg(ctx context.Context, seq uint64) error {
	return translate(s.js.inner.DeleteMsg(ctx, s.name, seq, natsio.NoErase()))
}

func (s *stream) SecureDeleteMsg(ctx context.Context, seq uint64) error {
	return translate(s.js.inner.SecureDeleteMsg(ctx, s.name, seq))
}

func (s *stream) CreateOrUpdateConsumer(ctx context.Context, cfg ConsumerConfig) (Consumer, error) {
	return s.js.CreateOrUpdateConsumer(ctx, s.name, cfg)
}

func (s *stream) CreateConsumer(ctx context.Context, cfg ConsumerConfig) (Consumer, error) {
	return s.js.CreateConsumer(ctx, s.name, cfg)
}

func (s *stream) UpdateConsumer(ctx context.Context, cfg ConsumerConfig) (Consumer, error) {
	return s.js.UpdateConsumer(ctx, s.name, cfg)
}

func (s *stream) OrderedConsumer(ctx context.Context, cfg OrderedConsumerConfig) (Consumer, error) {
	return s.js.OrderedConsumer(ctx, s.name, cfg)
}

func (s *stream) Consumer(ctx context.Context, name string) (Consumer, error) {
	return s.js.Consumer(ctx, s.name, name)
}

func (s *stream) DeleteConsumer(ctx context.Context, name string) error {
	return s.js.DeleteConsumer(ctx, s.name, name)
}

// ConsumerInfoLister yields the consumers' infos on Info, then Err.
type ConsumerInfoLister interface {
	Info() <-chan *ConsumerInfo
	Err() error
}

// ConsumerNameLister yields the consumers' names on Name, then Err.
type ConsumerNameLister interface {
	Name() <-chan string
	Err() error
}

func (s *stream) ListConsumers(ctx context.Context) ConsumerInfoLister {
	infos, err := s.js.inner.Consumers(ctx, s.name)
	var out []*ConsumerInfo
	for _, info := range infos {
		ci, err2 := consumerInfo(info, nil)
		if err2 != nil {
			err = err2
			break
		}
		out = append(out, ci)
	}
	return newLister(out, translate(err))
}

func (s *stream) ConsumerNames(ctx context.Context) ConsumerNameLister {
	names, err := s.js.inner.ConsumerNames(ctx, s.name)
	return newLister(names, translate(err))
}
