// Package jetstream is nats.go's jetstream package over libnatsio: a
// program written for github.com/nats-io/nats.go/jetstream builds with it
// by changing only its import lines. It is a facade over the natsio
// binding, which does the work.
package jetstream

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	natsio "github.com/libnatsio/natsio/bindings/go"
	"github.com/libnatsio/natsio/bindings/go/nats"
)

// JetStream is nats.go's JetStream interface (the methods this package
// offers).
type JetStream interface {
	AccountInfo(ctx context.Context) (*AccountInfo, error)
	Conn() *nats.Conn
	Options() JetStreamOptions

	StreamConsumerManager
	StreamManager
	Publisher
	KeyValueManager
	ObjectStoreManager
}

// DefaultAPIPrefix is the JetStream API's prefix without a domain.
const DefaultAPIPrefix = "$JS.API."

// defaultAPITimeout bounds each API request without a deadline, as nats.go's.
const defaultAPITimeout = 5 * time.Second

// JetStreamOptions are the settings of a JetStream context, read with
// JetStream.Options. nats.go's ClientTrace is not offered: the core makes
// the API requests and has no hook to observe them.
type JetStreamOptions struct {
	// APIPrefix is NewWithAPIPrefix's prefix ("" otherwise).
	APIPrefix string
	// Domain is NewWithDomain's domain ("" otherwise).
	Domain string
	// DefaultTimeout bounds each API request without a context deadline.
	DefaultTimeout time.Duration

	binding    []natsio.JSOpt
	ackHandler MsgAckHandler
	errHandler MsgErrHandler
}

// JetStreamOpt configures New.
type JetStreamOpt func(*JetStreamOptions) error

// WithPublishAsyncMaxPending bounds the asynchronous publishes awaiting
// their ack.
func WithPublishAsyncMaxPending(max int) JetStreamOpt {
	return func(o *JetStreamOptions) error {
		if max < 1 {
			return fmt.Errorf("%w: max ack pending should be >= 1", ErrInvalidOption)
		}
		o.binding = append(o.binding, natsio.PublishAsyncMaxPending(max))
		return nil
	}
}

// WithDefaultTimeout bounds each API request without a context deadline.
func WithDefaultTimeout(d time.Duration) JetStreamOpt {
	return func(o *JetStreamOptions) error {
		if d <= 0 {
			return fmt.Errorf("%w: timeout value must be greater than 0", ErrInvalidOption)
		}
		o.DefaultTimeout = d
		return nil
	}
}

// WithPublishAsyncTimeout fails an asynchronous publish with
// ErrAsyncPublishTimeout when its ack has not come within d.
func WithPublishAsyncTimeout(d time.Duration) JetStreamOpt {
	return func(o *JetStreamOptions) error {
		o.binding = append(o.binding, natsio.PublishAsyncTimeout(d))
		return nil
	}
}

// WithPublishAsyncAckHandler has cb called with each asynchronous
// publish's ack.
func WithPublishAsyncAckHandler(cb MsgAckHandler) JetStreamOpt {
	return func(o *JetStreamOptions) error { o.ackHandler = cb; return nil }
}

// WithPublishAsyncErrHandler has cb called with each asynchronous
// publish that failed, and its error.
func WithPublishAsyncErrHandler(cb MsgErrHandler) JetStreamOpt {
	return func(o *JetStreamOptions) error { o.errHandler = cb; return nil }
}

type jetStream struct {
	nc    *nats.Conn
	inner *natsio.JetStream
	opts  JetStreamOptions
	// pub is the context's publishing side, replaced by CleanupPublisher.
	pubMu sync.Mutex
	pub   *publisher
}

// New is a JetStream context on nc.
func New(nc *nats.Conn, opts ...JetStreamOpt) (JetStream, error) {
	return newJetStream(nc, JetStreamOptions{}, opts)
}

// NewWithDomain is a JetStream context on nc for a JetStream domain.
func NewWithDomain(nc *nats.Conn, domain string, opts ...JetStreamOpt) (JetStream, error) {
	if domain == "" {
		return nil, errors.New("domain cannot be empty")
	}
	return newJetStream(nc, JetStreamOptions{Domain: domain}, opts)
}

// NewWithAPIPrefix is a JetStream context on nc whose API requests go to
// apiPrefix (e.g. "$JS.hub.API", an account's import of another
// account's API) instead of DefaultAPIPrefix.
func NewWithAPIPrefix(nc *nats.Conn, apiPrefix string, opts ...JetStreamOpt) (JetStream, error) {
	if apiPrefix == "" {
		return nil, errors.New("API prefix cannot be empty")
	}
	return newJetStream(nc, JetStreamOptions{APIPrefix: apiPrefix}, opts)
}

func newJetStream(nc *nats.Conn, o JetStreamOptions, opts []JetStreamOpt) (JetStream, error) {
	o.DefaultTimeout = defaultAPITimeout
	for _, opt := range opts {
		if err := opt(&o); err != nil {
			return nil, err
		}
	}
	o.binding = append(o.binding, natsio.JSTimeout(o.DefaultTimeout), natsio.PublishAsyncStallWait(stallPoll))
	if o.Domain != "" {
		o.binding = append(o.binding, natsio.JSDomain(o.Domain))
	}
	if o.APIPrefix != "" {
		// The core takes the prefix without its final dot.
		o.binding = append(o.binding, natsio.JSAPIPrefix(strings.TrimSuffix(o.APIPrefix, ".")))
	}
	inner, err := nc.Binding().JetStream(o.binding...)
	if err != nil {
		return nil, translate(err)
	}
	js := &jetStream{nc: nc, inner: inner, opts: o}
	js.pub = newPublisher(inner)
	return js, nil
}

// Options are the context's settings.
func (js *jetStream) Options() JetStreamOptions { return js.opts }

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

	ConsumerManager
}

type stream struct {
	js   *jetStream
	name string
	info *StreamInfo
}

// StreamInfoOpt configures Stream.Info.
type StreamInfoOpt func(*streamInfoRequest) error

type streamInfoRequest struct {
	DeletedDetails bool   `json:"deleted_details,omitempty"`
	SubjectFilter  string `json:"subjects_filter,omitempty"`
	Offset         int    `json:"offset,omitempty"`
}

// WithSubjectFilter has Info list the message count of the subjects
// matching subject (StreamState.Subjects).
func WithSubjectFilter(subject string) StreamInfoOpt {
	return func(r *streamInfoRequest) error { r.SubjectFilter = subject; return nil }
}

// WithDeletedDetails(true) has Info list the sequences of the deleted
// messages (StreamState.Deleted).
func WithDeletedDetails(deletedDetails bool) StreamInfoOpt {
	return func(r *streamInfoRequest) error { r.DeletedDetails = deletedDetails; return nil }
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
	if err := validateStreamName(cfg.Name); err != nil {
		return nil, err
	}
	cfg, err := convertStreamConfigDomains(cfg)
	if err != nil {
		return nil, err
	}
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
	if err := validateStreamName(name); err != nil {
		return nil, err
	}
	info, err := streamInfo(js.inner.StreamInfo(ctx, name))
	if err != nil {
		return nil, err
	}
	return &stream{js: js, name: name, info: info}, nil
}

func (js *jetStream) DeleteStream(ctx context.Context, name string) error {
	if err := validateStreamName(name); err != nil {
		return err
	}
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
	if err := validateSubject(subject); err != nil {
		return "", err
	}
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
	var req streamInfoRequest
	for _, o := range opts {
		if err := o(&req); err != nil {
			return nil, err
		}
	}
	var info *StreamInfo
	var err error
	switch {
	case req.DeletedDetails:
		info, err = s.infoWithDeletedDetails(ctx, req)
	case req.SubjectFilter != "":
		info, err = streamInfo(s.js.inner.StreamInfoWithSubjects(ctx, s.name, req.SubjectFilter))
	default:
		info, err = streamInfo(s.js.inner.StreamInfo(ctx, s.name))
	}
	if err == nil {
		s.info = info
	}
	return info, err
}

// infoWithDeletedDetails asks the API itself, as the binding's stream
// info does not ask for deleted details: page after page while the
// subjects of a subject filter do not fit in one answer.
func (s *stream) infoWithDeletedDetails(ctx context.Context, req streamInfoRequest) (*StreamInfo, error) {
	var subjects map[string]uint64
	for {
		var resp struct {
			*StreamInfo
			Total int `json:"total"`
		}
		err := s.js.apiRequest(ctx, "STREAM.INFO."+s.name, req, &resp)
		var apiErr *APIError
		if errors.As(err, &apiErr) && apiErr.ErrorCode == JSErrCodeStreamNotFound {
			return nil, ErrStreamNotFound
		}
		if err != nil {
			return nil, err
		}
		if resp.StreamInfo == nil {
			return nil, ErrInvalidJetStreamResponse
		}
		if req.SubjectFilter == "" {
			return resp.StreamInfo, nil
		}
		if subjects == nil {
			subjects = map[string]uint64{}
		}
		for subj, n := range resp.State.Subjects {
			subjects[subj] = n
		}
		req.Offset = len(subjects)
		if resp.Total <= req.Offset || len(resp.State.Subjects) == 0 {
			resp.State.Subjects = subjects
			return resp.StreamInfo, nil
		}
	}
}

func (s *stream) CachedInfo() *StreamInfo { return s.info }

// StreamPurgeOpt narrows Purge.
type StreamPurgeOpt func(*StreamPurgeRequest) error

// WithPurgeSubject purges the messages of subject only.
func WithPurgeSubject(subject string) StreamPurgeOpt {
	return func(r *StreamPurgeRequest) error { r.Subject = subject; return nil }
}

// WithPurgeSequence purges the messages below sequence. Excludes
// WithPurgeKeep.
func WithPurgeSequence(sequence uint64) StreamPurgeOpt {
	return func(r *StreamPurgeRequest) error {
		if r.Keep != 0 {
			return fmt.Errorf("%w: both 'keep' and 'sequence' cannot be provided in purge request", ErrInvalidOption)
		}
		r.Sequence = sequence
		return nil
	}
}

// WithPurgeKeep purges all but the last keep messages. Excludes
// WithPurgeSequence.
func WithPurgeKeep(keep uint64) StreamPurgeOpt {
	return func(r *StreamPurgeRequest) error {
		if r.Sequence != 0 {
			return fmt.Errorf("%w: both 'keep' and 'sequence' cannot be provided in purge request", ErrInvalidOption)
		}
		r.Keep = keep
		return nil
	}
}

func (s *stream) Purge(ctx context.Context, opts ...StreamPurgeOpt) error {
	var req StreamPurgeRequest
	for _, o := range opts {
		if err := o(&req); err != nil {
			return err
		}
	}
	var purgeOpts []natsio.PurgeOpt
	if req.Subject != "" {
		purgeOpts = append(purgeOpts, natsio.PurgeSubject(req.Subject))
	}
	if req.Sequence != 0 {
		purgeOpts = append(purgeOpts, natsio.PurgeSequence(req.Sequence))
	}
	if req.Keep != 0 {
		purgeOpts = append(purgeOpts, natsio.PurgeKeep(req.Keep))
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

// validateStreamName refuses the names nats.go refuses before asking the
// server.
func validateStreamName(stream string) error {
	if stream == "" {
		return ErrStreamNameRequired
	}
	if strings.ContainsAny(stream, ">*. /\\\t\r\n") {
		return fmt.Errorf("%w: %q", ErrInvalidStreamName, stream)
	}
	return nil
}

// validateSubject refuses what cannot be a subject (filter): empty, dots
// at either end, spaces, or a ">" before the end.
func validateSubject(subject string) error {
	if subject == "" {
		return fmt.Errorf("%w: %s", ErrInvalidSubject, "subject cannot be empty")
	}
	if subject[0] == '.' || subject[len(subject)-1] == '.' || strings.Contains(subject, " ") ||
		strings.Contains(subject[:len(subject)-1], ">") {
		return fmt.Errorf("%w: %s", ErrInvalidSubject, subject)
	}
	return nil
}

// convertStreamConfigDomains turns the Domain of cfg's mirror and sources
// into the External that reaches it, on a copy (the caller's config is
// left as it is).
func convertStreamConfigDomains(cfg StreamConfig) (StreamConfig, error) {
	convert := func(ss *StreamSource) (*StreamSource, error) {
		if ss == nil || ss.Domain == "" {
			return ss, nil
		}
		if ss.External != nil {
			return nil, errors.New("nats: domain and external are both set")
		}
		c := *ss
		c.External = &ExternalStream{APIPrefix: "$JS." + ss.Domain + ".API"}
		return &c, nil
	}
	var err error
	if cfg.Mirror, err = convert(cfg.Mirror); err != nil {
		return cfg, err
	}
	if len(cfg.Sources) > 0 {
		sources := make([]*StreamSource, len(cfg.Sources))
		for i, ss := range cfg.Sources {
			if sources[i], err = convert(ss); err != nil {
				return cfg, err
			}
		}
		cfg.Sources = sources
	}
	return cfg, nil
}
