package jetstream

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"time"

	natsio "github.com/libnatsio/natsio/bindings/go"
	"github.com/libnatsio/natsio/bindings/go/nats"
)

// StopAfter ends a Consume (Closed is closed) or a Messages (Next returns
// ErrMsgIteratorClosed) once it has delivered that many messages. A pull
// consumer then pulls with one request at a time, each for no more than
// what is left to deliver, so that no message is pulled beyond the count
// (the thresholds do not apply); an ordered consumer, whose messages are
// nobody else's, stops reading at the count.
type StopAfter int

func (n StopAfter) configureConsume(c *pullConfig) error {
	if n <= 0 {
		return fmt.Errorf("%w: auto stop after value cannot be less than 1", ErrInvalidOption)
	}
	c.stopAfter = int(n)
	return nil
}

func (n StopAfter) configureMessages(c *pullConfig) error { return n.configureConsume(c) }

// pullMaxMessagesWithBytesLimit is PullMaxMessagesWithBytesLimit's option.
type pullMaxMessagesWithBytesLimit struct{ maxMessages, maxBytes int }

// PullMaxMessagesWithBytesLimit has each pull request ask for up to
// maxMessages messages and up to byteLimit bytes. The core keeps pull
// requests topped up by messages or by bytes, not both: with this
// option the consumer pulls with one request at a time (as StopAfter),
// each with both limits.
func PullMaxMessagesWithBytesLimit(maxMessages, byteLimit int) pullMaxMessagesWithBytesLimit {
	return pullMaxMessagesWithBytesLimit{maxMessages, byteLimit}
}

func (o pullMaxMessagesWithBytesLimit) configureConsume(c *pullConfig) error {
	switch {
	case o.maxMessages <= 0:
		return fmt.Errorf("%w: maxMessages size must be at least 1", ErrInvalidOption)
	case o.maxBytes <= 0:
		return fmt.Errorf("%w: maxBytes size must be at least 1", ErrInvalidOption)
	case c.maxMessages > 0:
		return fmt.Errorf("%w: maxMessages already set", ErrInvalidOption)
	}
	c.maxMessages, c.maxBytes, c.limitSize = o.maxMessages, o.maxBytes, true
	return nil
}

func (o pullMaxMessagesWithBytesLimit) configureMessages(c *pullConfig) error {
	return o.configureConsume(c)
}

// boundedPulls: the options only one pull request at a time can honour.
func (c *pullConfig) boundedPulls() bool { return c.stopAfter > 0 || c.limitSize }

// pullSource is what a consumption reads: the binding's Consumption, or
// one of the sources below.
type pullSource interface {
	Next(ctx context.Context) (*natsio.Msg, error)
	Stop()
	StartDrain() error
}

// countingSource ends its source after left messages.
type countingSource struct {
	pullSource
	mu   sync.Mutex
	left int
}

func (s *countingSource) Next(ctx context.Context) (*natsio.Msg, error) {
	s.mu.Lock()
	done := s.left <= 0
	s.mu.Unlock()
	if done {
		s.pullSource.Stop()
		return nil, natsio.ErrDone
	}
	m, err := s.pullSource.Next(ctx)
	if err == nil {
		s.mu.Lock()
		s.left--
		s.mu.Unlock()
	}
	return m, err
}

// boundedPull delivers left messages (StopAfter's; else no end) of a pull consumer through one pull
// request at a time (the binding's FetchMessages), each asking for at
// most what is left. Errors that a new request may get past (missed
// heartbeats, a leader change) go to report, if set, and the next request
// follows; the others end it.
type boundedPull struct {
	js           *natsio.JetStream
	stream, name string
	batch        int
	opts         []natsio.FetchOpt
	report       func(error)
	ctx          context.Context
	cancel       context.CancelFunc
	mu           sync.Mutex
	left         int
	cur          *natsio.Consumption
	draining     bool
}

// boundedRetryWait is how long a bounded pull waits before it pulls again
// after a pull failed.
const boundedRetryWait = time.Second

func newBoundedPull(c *pullConsumer, cfg *pullConfig) *boundedPull {
	expiry := cfg.expiry
	if expiry == 0 {
		expiry = DefaultExpires
	}
	heartbeat := cfg.heartbeat
	if heartbeat == 0 {
		heartbeat = min(expiry/2, 30*time.Second)
	}
	opts := append([]natsio.FetchOpt{natsio.FetchExpires(expiry), natsio.FetchHeartbeat(heartbeat)}, cfg.fetch...)
	if cfg.maxBytes > 0 {
		opts = append(opts, natsio.FetchMaxBytes(cfg.maxBytes))
	}
	batch := cfg.maxMessages
	if batch <= 0 {
		batch = DefaultMaxMessages
	}
	left := cfg.stopAfter
	if left == 0 {
		left = math.MaxInt
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &boundedPull{js: c.js.inner, stream: c.stream, name: c.name, batch: batch, opts: opts,
		ctx: ctx, cancel: cancel, left: left}
}

// request is the pull request to read from, sent if there is none (nil
// once nothing more is to be pulled).
func (b *boundedPull) request() (*natsio.Consumption, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.cur != nil || b.left <= 0 || b.draining || b.ctx.Err() != nil {
		return b.cur, nil
	}
	opts := append([]natsio.FetchOpt{natsio.FetchMaxMessages(min(b.batch, b.left))}, b.opts...)
	cur, err := b.js.FetchMessages(b.ctx, b.stream, b.name, opts...)
	if err != nil {
		return nil, err
	}
	b.cur = cur
	return cur, nil
}

// ended drops cur, the request that ended.
func (b *boundedPull) ended(cur *natsio.Consumption) {
	b.mu.Lock()
	if b.cur == cur {
		b.cur = nil
	}
	b.mu.Unlock()
	cur.Stop()
}

// passing: a new request may succeed where this one failed (missed
// heartbeats, no leader for a moment, a leader change); not when the
// consumer or stream is gone, the server refused the request, or the next
// message can never fit.
func passing(err error) bool {
	switch {
	case errors.Is(err, natsio.ErrConsumerDeleted), errors.Is(err, natsio.ErrConsumerNotFound),
		errors.Is(err, natsio.ErrStreamNotFound), maxBytesExceeded(err), nats.APIErrorOf(err) != nil:
		return false
	}
	return errors.Is(err, natsio.ErrTimeout) || errors.Is(err, natsio.ErrNoResponders) || errors.Is(err, natsio.ErrJetStream)
}

func (b *boundedPull) Next(ctx context.Context) (*natsio.Msg, error) {
	for {
		cur, err := b.request()
		switch {
		case err != nil && passing(err):
			if err := b.failed(err); err != nil {
				return nil, err
			}
			continue
		case err != nil:
			return nil, err
		case cur == nil:
			return nil, natsio.ErrDone
		}
		m, err := cur.Next(ctx)
		switch {
		case err == nil:
			b.mu.Lock()
			b.left--
			b.mu.Unlock()
			return m, nil
		case ctx.Err() != nil:
			// The caller gave up waiting: the request goes on.
			return nil, err
		case errors.Is(err, natsio.ErrDone):
			b.ended(cur)
		case passing(err):
			b.ended(cur)
			if err := b.failed(err); err != nil {
				return nil, err
			}
		default:
			b.ended(cur)
			return nil, err
		}
	}
}

// failed reports a passing error and waits a moment before the next
// request (ErrDone if stopped meanwhile).
func (b *boundedPull) failed(err error) error {
	if b.report != nil {
		if errors.Is(err, natsio.ErrTimeout) {
			b.report(ErrNoHeartbeat)
		} else {
			b.report(translate(err))
		}
	}
	select {
	case <-time.After(boundedRetryWait):
		return nil
	case <-b.ctx.Done():
		return natsio.ErrDone
	}
}

func (b *boundedPull) Stop() {
	b.cancel()
	b.mu.Lock()
	cur := b.cur
	b.mu.Unlock()
	if cur != nil {
		cur.Stop()
	}
}

func (b *boundedPull) StartDrain() error {
	b.mu.Lock()
	b.draining = true
	cur := b.cur
	b.mu.Unlock()
	if cur != nil {
		return cur.StartDrain()
	}
	return nil
}
