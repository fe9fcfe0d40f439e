package jetstream

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/libnatsio/natsio/bindings/go/nats"
)

// StreamManager creates, reads, lists and deletes streams (part of
// JetStream).
type StreamManager interface {
	CreateStream(ctx context.Context, cfg StreamConfig) (Stream, error)
	UpdateStream(ctx context.Context, cfg StreamConfig) (Stream, error)
	CreateOrUpdateStream(ctx context.Context, cfg StreamConfig) (Stream, error)
	Stream(ctx context.Context, stream string) (Stream, error)
	StreamNameBySubject(ctx context.Context, subject string) (string, error)
	DeleteStream(ctx context.Context, stream string) error
	ListStreams(context.Context, ...StreamListOpt) StreamInfoLister
	StreamNames(context.Context, ...StreamListOpt) StreamNameLister
}

// StreamConsumerManager manages the consumers of any stream, named by
// each call (part of JetStream).
type StreamConsumerManager interface {
	CreateOrUpdateConsumer(ctx context.Context, stream string, cfg ConsumerConfig) (Consumer, error)
	CreateConsumer(ctx context.Context, stream string, cfg ConsumerConfig) (Consumer, error)
	UpdateConsumer(ctx context.Context, stream string, cfg ConsumerConfig) (Consumer, error)
	OrderedConsumer(ctx context.Context, stream string, cfg OrderedConsumerConfig) (Consumer, error)
	Consumer(ctx context.Context, stream string, consumer string) (Consumer, error)
	DeleteConsumer(ctx context.Context, stream string, consumer string) error
	PauseConsumer(ctx context.Context, stream string, consumer string, pauseUntil time.Time) (*ConsumerPauseResponse, error)
	ResumeConsumer(ctx context.Context, stream string, consumer string) (*ConsumerPauseResponse, error)
	ResetConsumer(ctx context.Context, stream, consumer string) (*ConsumerResetResponse, error)
	ResetConsumerToSequence(ctx context.Context, stream, consumer string, seq uint64) (*ConsumerResetResponse, error)
	CreateOrUpdatePushConsumer(ctx context.Context, stream string, cfg ConsumerConfig) (PushConsumer, error)
	CreatePushConsumer(ctx context.Context, stream string, cfg ConsumerConfig) (PushConsumer, error)
	UpdatePushConsumer(ctx context.Context, stream string, cfg ConsumerConfig) (PushConsumer, error)
	PushConsumer(ctx context.Context, stream string, consumer string) (PushConsumer, error)
}

// ConsumerManager manages the consumers of one stream (part of Stream).
type ConsumerManager interface {
	CreateOrUpdateConsumer(ctx context.Context, cfg ConsumerConfig) (Consumer, error)
	CreateConsumer(ctx context.Context, cfg ConsumerConfig) (Consumer, error)
	UpdateConsumer(ctx context.Context, cfg ConsumerConfig) (Consumer, error)
	OrderedConsumer(ctx context.Context, cfg OrderedConsumerConfig) (Consumer, error)
	Consumer(ctx context.Context, consumer string) (Consumer, error)
	DeleteConsumer(ctx context.Context, consumer string) error
	PauseConsumer(ctx context.Context, consumer string, pauseUntil time.Time) (*ConsumerPauseResponse, error)
	ResumeConsumer(ctx context.Context, consumer string) (*ConsumerPauseResponse, error)
	ListConsumers(context.Context) ConsumerInfoLister
	ConsumerNames(context.Context) ConsumerNameLister
	UnpinConsumer(ctx context.Context, consumer string, group string) error
	ResetConsumer(ctx context.Context, consumer string) (*ConsumerResetResponse, error)
	ResetConsumerToSequence(ctx context.Context, consumer string, seq uint64) (*ConsumerResetResponse, error)
	CreateOrUpdatePushConsumer(ctx context.Context, cfg ConsumerConfig) (PushConsumer, error)
	CreatePushConsumer(ctx context.Context, cfg ConsumerConfig) (PushConsumer, error)
	UpdatePushConsumer(ctx context.Context, cfg ConsumerConfig) (PushConsumer, error)
	PushConsumer(ctx context.Context, consumer string) (PushConsumer, error)
}

// Publisher publishes to streams (part of JetStream).
type Publisher interface {
	Publish(ctx context.Context, subject string, payload []byte, opts ...PublishOpt) (*PubAck, error)
	PublishMsg(ctx context.Context, msg *nats.Msg, opts ...PublishOpt) (*PubAck, error)
	PublishAsync(subject string, payload []byte, opts ...PublishOpt) (PubAckFuture, error)
	PublishMsgAsync(msg *nats.Msg, opts ...PublishOpt) (PubAckFuture, error)
	PublishAsyncPending() int
	PublishAsyncComplete() <-chan struct{}
	CleanupPublisher()
}

// The facade's types implement nats.go's interfaces.
var (
	_ JetStream       = (*jetStream)(nil)
	_ Stream          = (*stream)(nil)
	_ ConsumerManager = (*stream)(nil)
)

// ConsumerResetResponse is the server's answer to a consumer reset: the
// consumer's info and the stream sequence it delivers from next.
type ConsumerResetResponse struct {
	*ConsumerInfo
	ResetSeq uint64 `json:"reset_seq"`
}

// apiPrefix is where the context's API requests go, with its final dot.
func (js *jetStream) apiPrefix() string {
	switch {
	case js.opts.APIPrefix != "":
		return strings.TrimSuffix(js.opts.APIPrefix, ".") + "."
	case js.opts.Domain != "":
		return "$JS." + js.opts.Domain + ".API."
	}
	return DefaultAPIPrefix
}

// apiRequest sends a request the binding has no call for to the
// JetStream API (bounded by DefaultTimeout when ctx has no deadline) and
// decodes the answer into resp; the answer's error, if any, is returned
// as an *APIError.
func (js *jetStream) apiRequest(ctx context.Context, subject string, req, resp any) error {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, js.opts.DefaultTimeout)
		defer cancel()
	}
	body, err := json.Marshal(req)
	if err != nil {
		return err
	}
	msg, err := js.nc.RequestWithContext(ctx, js.apiPrefix()+subject, body)
	if errors.Is(err, nats.ErrNoResponders) {
		return ErrJetStreamNotEnabled
	}
	if err != nil {
		return err
	}
	var apiErr struct {
		Error *APIError `json:"error"`
	}
	if err := json.Unmarshal(msg.Data, &apiErr); err != nil {
		return err
	}
	if apiErr.Error != nil {
		return apiErr.Error
	}
	return json.Unmarshal(msg.Data, resp)
}

// validateConsumerName refuses names the API subjects cannot carry.
func validateConsumerName(name string) error {
	if name == "" {
		return fmt.Errorf("%w: name is required", ErrInvalidConsumerName)
	}
	if strings.ContainsAny(name, ">*. /\\\t\r\n") {
		return fmt.Errorf("%w: %q", ErrInvalidConsumerName, name)
	}
	return nil
}

func (js *jetStream) resetConsumer(ctx context.Context, stream, consumer string, seq uint64) (*ConsumerResetResponse, error) {
	if err := validateStreamName(stream); err != nil {
		return nil, err
	}
	if err := validateConsumerName(consumer); err != nil {
		return nil, err
	}
	req := struct {
		Seq uint64 `json:"seq,omitempty"`
	}{seq}
	var resp ConsumerResetResponse
	err := js.apiRequest(ctx, fmt.Sprintf("CONSUMER.RESET.%s.%s", stream, consumer), req, &resp)
	var apiErr *APIError
	switch {
	case errors.As(err, &apiErr) && apiErr.ErrorCode == JSErrCodeConsumerInvalidReset:
		return nil, ErrConsumerInvalidReset
	case err != nil:
		return nil, err
	case resp.ConsumerInfo == nil:
		return nil, ErrConsumerResetResponseEmpty
	}
	return &resp, nil
}

// ResetConsumer has the consumer deliver again from its ack floor + 1
// (server 2.14+).
func (js *jetStream) ResetConsumer(ctx context.Context, stream, consumer string) (*ConsumerResetResponse, error) {
	return js.resetConsumer(ctx, stream, consumer, 0)
}

// ResetConsumerToSequence has the consumer deliver from stream sequence
// seq (server 2.14+); ErrConsumerInvalidReset when seq does not fit its
// DeliverPolicy.
func (js *jetStream) ResetConsumerToSequence(ctx context.Context, stream, consumer string, seq uint64) (*ConsumerResetResponse, error) {
	return js.resetConsumer(ctx, stream, consumer, seq)
}

// UnpinConsumer releases the pinned client of priority group group: the
// next pull request of the group gets the pin.
func (js *jetStream) UnpinConsumer(ctx context.Context, stream, consumer, group string) error {
	return translate(js.inner.UnpinConsumer(ctx, stream, consumer, group))
}

func (s *stream) PauseConsumer(ctx context.Context, consumer string, pauseUntil time.Time) (*ConsumerPauseResponse, error) {
	return s.js.PauseConsumer(ctx, s.name, consumer, pauseUntil)
}

func (s *stream) ResumeConsumer(ctx context.Context, consumer string) (*ConsumerPauseResponse, error) {
	return s.js.ResumeConsumer(ctx, s.name, consumer)
}

func (s *stream) UnpinConsumer(ctx context.Context, consumer, group string) error {
	return s.js.UnpinConsumer(ctx, s.name, consumer, group)
}

func (s *stream) ResetConsumer(ctx context.Context, consumer string) (*ConsumerResetResponse, error) {
	return s.js.ResetConsumer(ctx, s.name, consumer)
}

func (s *stream) ResetConsumerToSequence(ctx context.Context, consumer string, seq uint64) (*ConsumerResetResponse, error) {
	return s.js.ResetConsumerToSequence(ctx, s.name, consumer, seq)
}
