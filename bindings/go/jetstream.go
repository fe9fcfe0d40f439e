package natsio

// JetStream over the natsio_js_* functions of the C ABI. Configurations and
// infos cross the ABI as JSON with the server's field names; here they are
// structs whose json tags are those names, with an Extra map for fields the
// structs do not list.

/*
#include <stdlib.h>
#include "natsio_go.h"
// The library copies what a publish keeps and calls no Go code from it:
// its arguments may stay on the Go stack.
#cgo noescape go_js_publish_start
#cgo nocallback go_js_publish_start
*/
import "C"

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"
)

// JetStream is a JetStream context of a connection: publishing with
// acknowledgements, streams and Key-Value buckets. All methods are safe for
// concurrent use. It keeps its Conn alive but not open: once the Conn is
// closed every call fails with ErrConnectionClosed. Close frees it (a
// finalizer does otherwise).
//
// Every call is the library's asynchronous operation (its `_async` form),
// waited for in the calling goroutine without holding an OS thread.
// Contexts: a call returns as soon as its ctx ends (with ctx's error; for a
// deadline one that also matches ErrTimeout) and the operation is
// cancelled, but a request already sent is not withdrawn: it may still
// take effect. The library bounds each request by the context's timeout
// (JSTimeout, default 5 s); for Publish a ctx deadline is also passed to
// the library as the ack timeout.
type JetStream struct {
	nc *Conn

	mu     sync.Mutex
	ptr    *C.natsio_js // nil once freed
	users  int          // calls starting an operation on ptr right now
	closed bool
	// timeout is the context's request timeout (JSTimeout, default 5 s).
	timeout time.Duration

	futuresMu sync.Mutex
	futures   *futureTokens // the block new futures take slots of
	nextSlot  int
}

// JSOpt configures a JetStream context.
type JSOpt func(*jsConfig)

type jsConfig struct {
	domain, prefix                 string
	timeout, stallWait, ackTimeout time.Duration
	maxPending                     int64
}

// JSDomain selects a JetStream domain (API prefix $JS.<domain>.API).
func JSDomain(domain string) JSOpt { return func(c *jsConfig) { c.domain = domain } }

// JSAPIPrefix sets a custom API prefix (instead of $JS.API); it overrides
// JSDomain.
func JSAPIPrefix(prefix string) JSOpt { return func(c *jsConfig) { c.prefix = prefix } }

// JSTimeout bounds each API request and synchronous publish (default 5 s).
func JSTimeout(d time.Duration) JSOpt { return func(c *jsConfig) { c.timeout = d } }

// PublishAsyncMaxPending is how many asynchronous publishes may await their
// acks before PublishAsync stalls (default 4000).
func PublishAsyncMaxPending(n int) JSOpt { return func(c *jsConfig) { c.maxPending = int64(n) } }

// PublishAsyncStallWait is how long a stalled PublishAsync waits for room
// before failing with ErrTooManyStalledMsgs (default 200 ms).
func PublishAsyncStallWait(d time.Duration) JSOpt { return func(c *jsConfig) { c.stallWait = d } }

// PublishAsyncTimeout is how long an asynchronous publish waits for its ack
// before failing with ErrAsyncPublishTimeout (default: the JSTimeout).
func PublishAsyncTimeout(d time.Duration) JSOpt { return func(c *jsConfig) { c.ackTimeout = d } }

// JetStream creates a JetStream context. It sends nothing to the server.
// A negative option is ErrInvalidArgument; a bad domain or prefix ErrConfig.
func (nc *Conn) JetStream(opts ...JSOpt) (*JetStream, error) {
	var cfg jsConfig
	for _, opt := range opts {
		opt(&cfg)
	}
	var domain, prefix []byte
	var err error
	if cfg.domain != "" {
		if domain, err = cString(cfg.domain); err != nil {
			return nil, err
		}
	}
	if cfg.prefix != "" {
		if prefix, err = cString(cfg.prefix); err != nil {
			return nil, err
		}
	}
	if cfg.maxPending < 0 {
		return nil, errorOf(ErrInvalidArgument, "PublishAsyncMaxPending must not be negative")
	}
	var p *C.natsio_js
	r := C.go_js_new(nc.ptr, cPtr(domain), cPtr(prefix), millis(cfg.timeout), C.int64_t(cfg.maxPending),
		millis(cfg.stallWait), millis(cfg.ackTimeout), &p)
	runtime.KeepAlive(nc)
	if err := resultError(r.status, r.detail); err != nil {
		return nil, err
	}
	js := &JetStream{nc: nc, ptr: p, timeout: cfg.timeout}
	if js.timeout <= 0 {
		js.timeout = 5 * time.Second
	}
	runtime.SetFinalizer(js, (*JetStream).finalize)
	return js, nil
}

func (js *JetStream) finalize() { C.natsio_js_free(js.ptr) }

// Close frees the context; later calls fail with ErrIllegalState. Calls
// already started go on (their operations do not need the handle), and
// pending asynchronous publishes and their futures too. Closing twice
// is harmless. It does not close the Conn.
func (js *JetStream) Close() {
	if js == nil {
		return
	}
	js.mu.Lock()
	var p *C.natsio_js
	if !js.closed {
		js.closed = true
		if js.users == 0 {
			p, js.ptr = js.ptr, nil
		}
	}
	js.mu.Unlock()
	C.natsio_js_free(p)
}

// Conn is the connection the context publishes on.
func (js *JetStream) Conn() *Conn { return js.nc }

func (js *JetStream) acquire() (*C.natsio_js, error) {
	if js == nil {
		return nil, errorOf(ErrNullArgument, "nil *JetStream")
	}
	js.mu.Lock()
	defer js.mu.Unlock()
	if js.closed {
		return nil, errorOf(ErrIllegalState, "the JetStream context is closed")
	}
	js.users++
	return js.ptr, nil
}

func (js *JetStream) release() {
	js.mu.Lock()
	js.users--
	var p *C.natsio_js
	if js.closed && js.users == 0 {
		p, js.ptr = js.ptr, nil
	}
	js.mu.Unlock()
	C.natsio_js_free(p)
}

// errorOf is an *Error with sentinel s's code and detail.
func errorOf(s error, detail string) *Error {
	return &Error{Status: s.(*sentinel).Code(), Detail: detail}
}

// cCall makes one C call and reads its failure detail on the same thread.
func cCall(call func() C.natsio_status) error {
	lockThread()
	err := statusError(call())
	unlockThread()
	return err
}

// onJS makes one call on the context's C handle, which a Close in the
// meantime frees only after it returns.
func onJS[T any](js *JetStream, call func(p *C.natsio_js) (T, error)) (T, error) {
	p, err := js.acquire()
	if err != nil {
		var zero T
		return zero, err
	}
	defer js.release()
	return call(p)
}

// jsDo is onJS for a call without a result.
func jsDo(js *JetStream, call func(p *C.natsio_js) error) error {
	_, err := onJS(js, func(p *C.natsio_js) (struct{}, error) { return struct{}{}, call(p) })
	return err
}

// jsStrings runs a raw verb whose result is a list of strings.
func jsStrings(js *JetStream, call func(p *C.natsio_js) (C.go_take, error)) ([]string, error) {
	r, err := onJS(js, call)
	if err != nil {
		return nil, err
	}
	return takeStringList(r), nil
}

// configJSON is cfg's JSON (ErrConfig when cfg does not marshal).
func configJSON(cfg any) (string, error) {
	b, err := json.Marshal(cfg)
	if err != nil {
		return "", errorOf(ErrConfig, err.Error())
	}
	return string(b), nil
}

// configCString is cfg's JSON as a C string (ErrConfig when cfg does not
// marshal).
func configCString(cfg any) ([]byte, error) {
	j, err := configJSON(cfg)
	if err != nil {
		return nil, err
	}
	return cString(j)
}

// AccountInfo is the account's JetStream usage and limits.
type AccountInfo struct {
	Memory    uint64        `json:"memory"`           // bytes of memory storage in use
	Store     uint64        `json:"storage"`          // bytes of file storage in use
	Streams   int           `json:"streams"`          // how many streams the account has
	Consumers int           `json:"consumers"`        // how many consumers the account has
	Domain    string        `json:"domain,omitempty"` // the JetStream domain, "" when none
	Limits    AccountLimits `json:"limits"`           // what the account may use
	API       APIStats      `json:"api"`              // the account's JetStream API use
	// Raw is the whole JSON, for fields not listed above.
	Raw json.RawMessage `json:"-"`
}

// APIStats are the account's JetStream API requests.
type APIStats struct {
	Level  int    `json:"level"`  // the server's JetStream API level
	Total  uint64 `json:"total"`  // requests made
	Errors uint64 `json:"errors"` // requests that failed
}

// AccountLimits are the account's JetStream limits (-1: unlimited).
type AccountLimits struct {
	MaxMemory    int64 `json:"max_memory"`    // bytes of memory storage
	MaxStore     int64 `json:"max_storage"`   // bytes of file storage
	MaxStreams   int   `json:"max_streams"`   // streams
	MaxConsumers int   `json:"max_consumers"` // consumers
}

// AccountInfo reads the account's JetStream usage and limits.
// ErrJetStreamNotEnabled when the account or the server has no JetStream
// (other calls report a server without JetStream as ErrNoResponders).
func (js *JetStream) AccountInfo(ctx context.Context) (*AccountInfo, error) {
	raw, err := onJS(js, func(p *C.natsio_js) (string, error) { return rawJsAccountInfo(ctx, p) })
	if err != nil {
		return nil, err
	}
	info := &AccountInfo{Raw: json.RawMessage(raw)}
	return info, json.Unmarshal(info.Raw, info)
}

// ---- Publishing ----

// PubAck is a stream's acknowledgement of a publish.
type PubAck struct {
	Stream    string // the stream that stored the message
	Sequence  uint64 // the message's sequence in that stream
	Duplicate bool   // a message with this MsgID was already stored (Sequence is its)
	Domain    string // "" when none
	// Value is, on a stream with allow_msg_counter (server 2.12+), the
	// counter's value after this message as decimal text (it may exceed 64
	// bits); "" on other streams.
	Value string
	// BatchID is, for the commit of an atomic batch publish (server
	// 2.12+), the batch's id; "" for other publishes.
	BatchID string
	// BatchSize is, for the commit of an atomic batch publish, how many
	// messages the batch stored; 0 for other publishes.
	BatchSize uint64
}

// pubAckFrom copies a publish ack read by go_pub_ack_read (r.ack) into Go
// and frees the library's ack (r.out): one C call for its fields, one to
// free it.
func pubAckFrom(r *C.go_take) *PubAck {
	v := &r.ack
	ack := &PubAck{
		Stream:    C.GoString(v.stream),
		Sequence:  uint64(v.seq),
		Duplicate: bool(v.duplicate),
		BatchSize: uint64(v.batch_size),
	}
	if v.domain != nil {
		ack.Domain = C.GoString(v.domain)
	}
	if v.val != nil {
		ack.Value = C.GoString(v.val)
	}
	if v.batch_id != nil {
		ack.BatchID = C.GoString(v.batch_id)
	}
	C.natsio_pub_ack_free((*C.natsio_pub_ack)(r.out))
	return ack
}

// PubOpt is an option of one JetStream publish.
type PubOpt func(*pubConfig)

type pubConfig struct {
	header                                Header
	msgID, stream, lastSubject, lastMsgID string
	lastSeq, lastSubjectSeq               uint64
	hasLastSeq, hasLastSubjectSeq         bool
	ttl                                   time.Duration
	ttlNever                              bool
	retryAttempts                         int
	hasRetryAttempts                      bool
	retryWait                             time.Duration
	hasRetryWait                          bool
}

// MsgID sets Nats-Msg-Id: the stream stores a second message with the same
// id (within its duplicate window) only once; its ack says Duplicate.
func MsgID(id string) PubOpt { return func(c *pubConfig) { c.msgID = id } }

// ExpectStream makes the publish fail unless the message lands in stream.
func ExpectStream(stream string) PubOpt { return func(c *pubConfig) { c.stream = stream } }

// ExpectLastSequence makes the publish fail with ErrWrongLastSequence
// unless the stream's last sequence is seq (0: the stream is empty).
func ExpectLastSequence(seq uint64) PubOpt {
	return func(c *pubConfig) { c.lastSeq, c.hasLastSeq = seq, true }
}

// ExpectLastSequencePerSubject makes the publish fail with
// ErrWrongLastSequence unless the last sequence of the message's subject
// is seq (0: no message on it yet).
func ExpectLastSequencePerSubject(seq uint64) PubOpt {
	return func(c *pubConfig) { c.lastSubjectSeq, c.hasLastSubjectSeq = seq, true }
}

// ExpectLastSequenceForSubject is ExpectLastSequencePerSubject checking the
// last sequence of subject (wildcards allowed) instead of the message's.
func ExpectLastSequenceForSubject(seq uint64, subject string) PubOpt {
	return func(c *pubConfig) {
		c.lastSubjectSeq, c.hasLastSubjectSeq, c.lastSubject = seq, true, subject
	}
}

// ExpectLastMsgID makes the publish fail unless the stream's last message
// has this MsgID.
func ExpectLastMsgID(id string) PubOpt { return func(c *pubConfig) { c.lastMsgID = id } }

// MsgTTL gives the message a time to live: a whole, positive number of
// seconds (the stream needs AllowMsgTTL). Anything else fails the publish
// with ErrInvalidArgument.
func MsgTTL(d time.Duration) PubOpt { return func(c *pubConfig) { c.ttl, c.ttlNever = d, false } }

// MsgTTLNever makes the message never expire, even if the stream has a
// MaxAge.
func MsgTTLNever() PubOpt { return func(c *pubConfig) { c.ttl, c.ttlNever = 0, true } }

// The retries of a publish that finds no stream listening on its subject
// ("no responders": a stream leader may be moving) unless RetryAttempts
// and RetryWait say otherwise, as nats.go's defaults.
const (
	DefaultPubRetryAttempts = 2
	DefaultPubRetryWait     = 250 * time.Millisecond
)

// RetryAttempts is how many times a publish that finds no stream
// listening on its subject ("no responders") is sent again before it
// fails with ErrNoStreamResponse (default DefaultPubRetryAttempts): 0
// retries none, as in nats.go. A negative n fails the publish with
// ErrInvalidArgument. It applies to Publish and PublishAsync, whose
// retries end at its ack deadline at the latest (Publish's: ctx's).
func RetryAttempts(n int) PubOpt {
	return func(c *pubConfig) { c.retryAttempts, c.hasRetryAttempts = n, true }
}

// RetryWait is how long a publish that found no stream waits before each
// retry (default DefaultPubRetryWait), in whole milliseconds (a fraction
// counts as one). A wait <= 0 fails the publish with ErrInvalidArgument.
func RetryWait(d time.Duration) PubOpt {
	return func(c *pubConfig) { c.retryWait, c.hasRetryWait = d, true }
}

// PubHeader sends h with the message.
func PubHeader(h Header) PubOpt { return func(c *pubConfig) { c.header = h } }

// preparedPub is a publish ready for C: NUL-terminated strings in Go
// memory, C headers (freed by free) and the scalars. It lives on its
// caller's stack: the C call is marked noescape (the library copies what
// it keeps), and a short subject is written into subjectBuf, so that a
// publish without options allocates nothing here.
type preparedPub struct {
	subject, msgID, stream, lastSubject, lastMsgID []byte
	headers                                        *C.natsio_headers
	scalars                                        C.go_pub_scalars
	subjectBuf                                     [96]byte
}

func (p *preparedPub) free() {
	if p.headers != nil {
		C.natsio_headers_free(p.headers)
	}
}

// prepare fills p for a publish to subject with opts.
func (p *preparedPub) prepare(subject string, opts []PubOpt) error {
	if err := checkNUL(subject); err != nil {
		return err
	}
	if len(subject) < len(p.subjectBuf) {
		p.subject = p.subjectBuf[:len(subject)+1]
		p.subject[copy(p.subject, subject)] = 0
	} else {
		p.subject = append([]byte(subject), 0)
	}
	if len(opts) == 0 {
		return nil
	}
	return p.applyOpts(opts)
}

// applyOpts fills p's options (kept apart from prepare: the options'
// config escapes to the heap, and a publish without options needs none).
func (p *preparedPub) applyOpts(opts []PubOpt) error {
	var cfg pubConfig
	for _, opt := range opts {
		opt(&cfg)
	}
	var err error
	for _, s := range []struct {
		dst *[]byte
		src string
	}{{&p.msgID, cfg.msgID}, {&p.stream, cfg.stream}, {&p.lastSubject, cfg.lastSubject}, {&p.lastMsgID, cfg.lastMsgID}} {
		if s.src != "" {
			if *s.dst, err = cString(s.src); err != nil {
				return err
			}
		}
	}
	switch {
	case cfg.ttlNever:
		p.scalars.ttl_s = C.NATSIO_TTL_NEVER
	case cfg.ttl != 0:
		if cfg.ttl < time.Second || cfg.ttl%time.Second != 0 {
			return errorOf(ErrInvalidArgument, "MsgTTL must be a positive whole number of seconds, not "+cfg.ttl.String())
		}
		p.scalars.ttl_s = C.int64_t(cfg.ttl / time.Second)
	}
	if cfg.hasRetryAttempts {
		switch n := cfg.retryAttempts; {
		case n < 0:
			return errorOf(ErrInvalidArgument, "RetryAttempts must not be negative, not "+strconv.Itoa(n))
		case n == 0:
			p.scalars.retry_attempts = C.NATSIO_PUBLISH_NO_RETRY
		default:
			p.scalars.retry_attempts = cInt32(n)
		}
	}
	if cfg.hasRetryWait {
		if cfg.retryWait <= 0 {
			return errorOf(ErrInvalidArgument, "RetryWait must be positive, not "+cfg.retryWait.String())
		}
		p.scalars.retry_wait_ms = C.int64_t((cfg.retryWait + time.Millisecond - 1) / time.Millisecond)
	}
	if cfg.hasLastSeq {
		p.scalars.expected_last_seq, p.scalars.has_expected_last_seq = C.uint64_t(cfg.lastSeq), 1
	}
	if cfg.hasLastSubjectSeq {
		p.scalars.expected_last_subject_seq, p.scalars.has_expected_last_subject_seq = C.uint64_t(cfg.lastSubjectSeq), 1
	}
	p.headers, err = cHeaders(cfg.header)
	return err
}

// start starts the publish and returns its token: the synchronous
// request's token form when request is set (Publish), else the windowed
// asynchronous publish (PublishAsync).
func (p *preparedPub) start(js *C.natsio_js, data []byte, request bool) (*C.natsio_token, error) {
	ptr, n := dataPtr(data)
	var req C.int
	if request {
		req = 1
	}
	r := C.go_js_publish_start(js, req, cPtr(p.subject), ptr, n, p.headers, cPtr(p.msgID), cPtr(p.stream),
		cPtr(p.lastSubject), cPtr(p.lastMsgID), &p.scalars)
	runtime.KeepAlive(data)
	return r.token, resultError(r.status, r.detail)
}

// Publish sends data to subject and waits for the stream's ack. Errors:
// ErrNoStreamResponse when no stream holds the subject, ErrWrongLastSequence
// for a failed expectation, ErrJetStreamAPI for other rejections (e.g. a
// wrong ExpectStream), ErrBadSubject, ErrMaxPayload, ErrTimeout (the
// library's ErrAsyncPublishTimeout, which it also matches),
// ErrConnectionClosed.
//
// It is the synchronous publish of every binding (the token form of
// natsio_js_publish) waited for in this goroutine: it does not count among
// PublishAsyncPending, never stalls behind PublishAsyncMaxPending and never
// fails with ErrAsyncPublishTimeout; "no responders" is retried
// DefaultPubRetryAttempts times, DefaultPubRetryWait apart, as in C,
// unless RetryAttempts and RetryWait say otherwise.
func (js *JetStream) Publish(ctx context.Context, subject string, data []byte, opts ...PubOpt) (*PubAck, error) {
	if js == nil {
		return nil, errorOf(ErrNullArgument, "nil *JetStream")
	}
	if ctx.Err() != nil {
		return nil, contextError(ctx)
	}
	var p preparedPub
	defer p.free()
	if err := p.prepare(subject, opts); err != nil {
		return nil, err
	}
	// The ack timeout is ctx's deadline, else the context's timeout.
	_, hasDeadline := ctx.Deadline()
	p.scalars.timeout_ms = millis(js.timeout)
	if hasDeadline {
		p.scalars.timeout_ms = timeoutArg(ctx)
	}
	ptr, err := js.acquire()
	if err != nil {
		return nil, err
	}
	tok, err := p.start(ptr, data, true)
	js.release()
	if err != nil {
		return nil, err
	}
	var r C.go_take
	err = awaitStarted(ctx, tok, C.GO_TAKE_PUB_ACK, &r)
	if e, ok := err.(*Error); ok && hasDeadline && e.Status == Status(ErrTimeout.(*sentinel).code) && e.cause == nil {
		// No ack by ctx's deadline: that deadline too.
		e.cause = errors.Join(ErrTimeout, context.DeadlineExceeded)
	}
	if err != nil {
		return nil, err
	}
	return pubAckFrom(&r), nil
}

// PubAckFuture is the outcome of an asynchronous publish.
type PubAckFuture struct {
	tokens *futureTokens // its token is tokens.toks[slot] until the outcome is read
	slot   int

	mu   sync.Mutex
	w    *tokenWaiter // made by Done on first use
	read bool         // the outcome is read (and the token freed)
	ack  *PubAck
	err  error
}

// futureTokens holds the tokens of up to futureBlock futures under one
// finalizer: a finalizer per future cost about 5% of PublishAsync's CPU
// (the runtime keeps a span's finalizers in a sorted list). A future frees
// its token as it reads the outcome; the block's finalizer frees those
// never read, once no future of the block is reachable.
type futureTokens struct {
	toks [futureBlock]*C.natsio_token
	tags [futureBlock]uint64 // a Done's completion-queue tag, 0 if none
}

const futureBlock = 64

// futureBlocksFreed counts finalized blocks (for the tests).
var futureBlocksFreed atomic.Int64

func (b *futureTokens) finalize() {
	futureBlocksFreed.Add(1)
	for i, t := range b.toks {
		if t != nil {
			C.natsio_token_free(t)
		}
		if b.tags[i] != 0 {
			// A tag queued but not polled yet is skipped once its waiter is gone.
			waiters.take(b.tags[i])
		}
	}
}

// newFuture makes the future of an asynchronous publish's token.
func (js *JetStream) newFuture(tok *C.natsio_token) *PubAckFuture {
	js.futuresMu.Lock()
	if js.futures == nil || js.nextSlot == futureBlock {
		js.futures, js.nextSlot = &futureTokens{}, 0
		runtime.SetFinalizer(js.futures, (*futureTokens).finalize)
	}
	f := &PubAckFuture{tokens: js.futures, slot: js.nextSlot}
	js.futures.toks[js.nextSlot] = tok
	js.nextSlot++
	js.futuresMu.Unlock()
	return f
}

// PublishAsync sends data to subject without waiting for the ack; the
// future gives the ack or the publish's error (ErrNoStreamResponse,
// ErrAsyncPublishTimeout, ErrWrongLastSequence, ErrJetStreamAPI, ...).
// When PublishAsyncMaxPending publishes await acks it waits up to the
// stall wait for room, then fails with ErrTooManyStalledMsgs (sending
// nothing). data may be reused once it returns. While others await acks
// the publish is written together with the ones that follow it, once this
// goroutine blocks or yields (like nats.go's buffered writes). "No
// responders" is retried as by Publish (RetryAttempts, RetryWait), until
// the ack deadline at the latest; the future has the outcome after the
// last retry.
func (js *JetStream) PublishAsync(subject string, data []byte, opts ...PubOpt) (*PubAckFuture, error) {
	var p preparedPub
	defer p.free()
	if err := p.prepare(subject, opts); err != nil {
		return nil, err
	}
	ptr, err := js.acquire()
	if err != nil {
		return nil, err
	}
	// Queued without waking the library's writer; the sender wakes it
	// once this goroutine lets it run (see deferredSender).
	sender := js.nc.deferred()
	if sender != nil {
		p.scalars.defer_send = 1
	}
	tok, err := p.start(ptr, data, false)
	js.release()
	if sender != nil {
		sender.kick()
	}
	if err != nil {
		return nil, err
	}
	return js.newFuture(tok), nil
}

// Done is closed once the publish has its outcome.
func (f *PubAckFuture) Done() <-chan struct{} {
	defer runtime.KeepAlive(f) // its block's finalizer frees the token
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.w == nil {
		// Its completion (run by runCompletions) only closes the channel;
		// the token stays the future's.
		f.w = &tokenWaiter{tok: f.tokens.toks[f.slot]}
		if f.read {
			f.w.done = make(chan struct{})
			close(f.w.done)
		} else if tag, registered, err := f.w.watchTag(); !registered || err != nil {
			// Completed already (or, for a live token impossible, failed):
			// never leave Done hanging.
			close(f.w.done)
		} else {
			f.tokens.tags[f.slot] = tag
		}
	}
	return f.w.done
}

// Wait waits for the outcome until ctx ends. When ctx ends first it
// returns ctx's error and the publish goes on (Wait again later).
func (f *PubAckFuture) Wait(ctx context.Context) (*PubAck, error) {
	defer runtime.KeepAlive(f)
	if done, ack, err := f.outcome(); done {
		return ack, err
	}
	select {
	case <-f.Done():
	case <-ctx.Done():
		if done, ack, err := f.outcome(); done {
			return ack, err
		}
		return nil, contextError(ctx)
	}
	done, ack, err := f.outcome()
	if !done {
		// Done closed without an outcome: its watch could not be
		// registered (the completion runner failed to start). The wait
		// holds f.mu: another Wait must not free the token meanwhile.
		f.mu.Lock()
		if !f.read {
			err = waitTokenBlocking(ctx, f.tokens.toks[f.slot], leaveOnEnd)
		}
		f.mu.Unlock()
		if err != nil {
			return nil, err
		}
		_, ack, err = f.outcome()
	}
	return ack, err
}

// outcome reads the outcome once there is one (done false while the
// publish awaits its ack) and frees the token in the same call into C; a
// pending token's read costs no more than a check, so a Wait on an acked
// publish is a single call into C.
func (f *PubAckFuture) outcome() (done bool, ack *PubAck, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.read {
		var r C.go_take
		C.go_token_take(f.tokens.toks[f.slot], C.GO_TAKE_PUB_ACK, C.GO_FREE_TOKEN_IF_DONE, &r)
		if r.status == C.NATSIO_PENDING {
			return false, nil, nil
		}
		f.tokens.toks[f.slot] = nil
		if f.err = resultError(r.status, r.detail); f.err == nil {
			f.ack = pubAckFrom(&r)
		}
		f.read = true
	}
	return true, f.ack, f.err
}

// PublishAsyncPending is how many asynchronous publishes await their ack.
func (js *JetStream) PublishAsyncPending() int {
	p, err := js.acquire()
	if err != nil {
		return 0
	}
	defer js.release()
	return int(C.natsio_js_publish_async_pending(p))
}

// PublishAsyncComplete waits until every asynchronous publish of this
// context has its outcome (acked or failed), until ctx ends.
func (js *JetStream) PublishAsyncComplete(ctx context.Context) error {
	// Without a deadline: as long as it takes (each publish has its own
	// ack timeout), as before; the library's default would be JSTimeout.
	timeout := int64(C.NATSIO_WAIT_FOREVER)
	if _, ok := ctx.Deadline(); ok {
		timeout = int64(timeoutArg(ctx))
	}
	return jsDo(js, func(p *C.natsio_js) error { return rawJsPublishAsyncComplete(ctx, p, timeout) })
}

// ---- Streams ----

// RetentionPolicy is when a stream may drop messages.
type RetentionPolicy string

// The retention policies of StreamConfig.Retention.
const (
	LimitsPolicy    RetentionPolicy = "limits"    // at its limits (the default)
	InterestPolicy  RetentionPolicy = "interest"  // once every consumer acked them
	WorkQueuePolicy RetentionPolicy = "workqueue" // once one consumer acked them
)

// DiscardPolicy is what a full stream discards.
type DiscardPolicy string

// The discard policies of StreamConfig.Discard.
const (
	DiscardOld DiscardPolicy = "old" // the oldest messages (the default)
	DiscardNew DiscardPolicy = "new" // new messages are refused
)

// StorageType is where a stream keeps its messages.
type StorageType string

// The storage types of StreamConfig.Storage (and of Key-Value and Object
// Store buckets).
const (
	FileStorage   StorageType = "file"   // on disk (the default)
	MemoryStorage StorageType = "memory" // in memory
)

// StoreCompression is how a file stream compresses its blocks.
type StoreCompression string

// The compressions of StreamConfig.Compression.
const (
	NoCompression StoreCompression = "none" // none (the default)
	S2Compression StoreCompression = "s2"   // S2
)

// StreamConfig is a stream's configuration, with the server's field names.
// Zero fields are left out (the server's defaults apply). Durations are
// sent as integer nanoseconds.
type StreamConfig struct {
	// Name is the stream's name (required): no spaces, dots, "*", ">" or
	// path separators.
	Name string `json:"name"`
	// Description is free text.
	Description string `json:"description,omitempty"`
	// Subjects are the subjects whose messages the stream stores
	// (wildcards allowed).
	Subjects []string `json:"subjects,omitempty"`
	// Retention is when messages may be removed ("": LimitsPolicy).
	Retention RetentionPolicy `json:"retention,omitempty"`
	// MaxConsumers is how many consumers the stream may have (0: no
	// limit).
	MaxConsumers int `json:"max_consumers,omitempty"`
	// MaxMsgs is how many messages the stream keeps (0: no limit).
	MaxMsgs int64 `json:"max_msgs,omitempty"`
	// MaxBytes is how many bytes the stream keeps (0: no limit).
	MaxBytes int64 `json:"max_bytes,omitempty"`
	// Discard is what goes when a limit is reached ("": DiscardOld).
	Discard DiscardPolicy `json:"discard,omitempty"`
	// DiscardNewPerSubject applies DiscardNew to each subject reaching
	// MaxMsgsPerSubject.
	DiscardNewPerSubject bool `json:"discard_new_per_subject,omitempty"`
	// MaxAge is how long messages are kept (0: no limit).
	MaxAge time.Duration `json:"max_age,omitempty"`
	// MaxMsgsPerSubject is how many messages are kept per subject (0: no
	// limit).
	MaxMsgsPerSubject int64 `json:"max_msgs_per_subject,omitempty"`
	// MaxMsgSize is the largest message the stream accepts, in bytes (0:
	// the server's limit).
	MaxMsgSize int32 `json:"max_msg_size,omitempty"`
	// Storage is where messages are kept ("": FileStorage).
	Storage StorageType `json:"storage,omitempty"`
	// Replicas is how many servers of a cluster keep a copy (0: one).
	Replicas int `json:"num_replicas,omitempty"`
	// NoAck stores published messages without acknowledging them.
	NoAck bool `json:"no_ack,omitempty"`
	// Duplicates is the window in which a second message with the same
	// MsgID is dropped (0: the server's default, 2 minutes).
	Duplicates time.Duration `json:"duplicate_window,omitempty"`
	// Sealed makes the stream read only: no messages are added, deleted or
	// purged. Only an update can set it, and nothing unsets it.
	Sealed bool `json:"sealed,omitempty"`
	// DenyDelete refuses the deletion of single messages (DeleteMsg).
	DenyDelete bool `json:"deny_delete,omitempty"`
	// DenyPurge refuses purges (PurgeStream).
	DenyPurge bool `json:"deny_purge,omitempty"`
	// AllowRollup lets a publish with a Nats-Rollup header replace the
	// messages of its subject or of the whole stream.
	AllowRollup bool `json:"allow_rollup_hdrs,omitempty"`
	// AllowDirect lets every replica answer direct reads of messages.
	AllowDirect bool `json:"allow_direct,omitempty"`
	// Compression is how a file stream compresses its stored blocks ("":
	// NoCompression).
	Compression StoreCompression `json:"compression,omitempty"`
	// FirstSeq is the sequence of a new stream's first message (0: 1).
	FirstSeq uint64 `json:"first_seq,omitempty"`
	// AllowMsgTTL lets publishes set a time to live per message (MsgTTL,
	// MsgTTLNever).
	AllowMsgTTL bool `json:"allow_msg_ttl,omitempty"`
	// SubjectDeleteMarkerTTL, when not 0, makes the server leave a delete
	// marker, kept this long, when it removes a subject's last message
	// (e.g. at MaxAge). It needs AllowMsgTTL.
	SubjectDeleteMarkerTTL time.Duration `json:"subject_delete_marker_ttl,omitempty"`
	// AllowAtomicPublish lets a batch of publishes (Nats-Batch-Id headers)
	// be stored atomically, all or none (ADR-50, server 2.12+).
	AllowAtomicPublish bool `json:"allow_atomic,omitempty"`
	// AllowMsgCounter makes the stream a counter stream (ADR-49, server
	// 2.12+): publishes with a Nats-Incr header add to their subject's
	// value (PubAck.Value).
	AllowMsgCounter bool `json:"allow_msg_counter,omitempty"`
	// AllowMsgSchedules lets publishes schedule messages (Nats-Schedule
	// headers, ADR-51, server 2.12+).
	AllowMsgSchedules bool `json:"allow_msg_schedules,omitempty"`
	// MirrorDirect lets a mirror of this stream answer direct reads of its
	// messages too.
	MirrorDirect bool `json:"mirror_direct,omitempty"`
	// Placement puts the stream on a cluster and/or servers with tags
	// (nil: anywhere).
	Placement *Placement `json:"placement,omitempty"`
	// Mirror makes the stream a copy of another stream (nil: none); a
	// mirror has no Subjects of its own.
	Mirror *StreamSource `json:"mirror,omitempty"`
	// Sources are streams whose messages the stream also stores.
	Sources []*StreamSource `json:"sources,omitempty"`
	// SubjectTransform rewrites the subjects of the messages stored (nil:
	// none).
	SubjectTransform *SubjectTransformConfig `json:"subject_transform,omitempty"`
	// RePublish republishes each stored message to another subject (nil:
	// none).
	RePublish *RePublish `json:"republish,omitempty"`
	// ConsumerLimits are defaults and limits for the stream's consumers
	// (the zero value: none, left out).
	ConsumerLimits StreamConsumerLimits `json:"consumer_limits,omitzero"`
	// Metadata are user key/value pairs the server stores with the stream.
	Metadata map[string]string `json:"metadata,omitempty"`

	// Extra holds further fields by their JSON names (allow_batched, and
	// those of newer servers): added when marshalling unless a field above
	// set the name; filled with the unlisted fields when unmarshalling, so
	// a config read from a StreamInfo round-trips. Durations may be
	// integer nanoseconds or strings like "90s".
	Extra map[string]any `json:"-"`
}

// StreamSource is a stream a mirror copies, or one of the sources a
// stream stores the messages of.
type StreamSource struct {
	Name          string     `json:"name"`                     // the source stream
	OptStartSeq   uint64     `json:"opt_start_seq,omitempty"`  // start at this sequence (0: the first)
	OptStartTime  *time.Time `json:"opt_start_time,omitempty"` // start at the first message stored at or after it
	FilterSubject string     `json:"filter_subject,omitempty"` // only messages on this subject (wildcards allowed)
	// SubjectTransforms filter and rewrite the subjects taken (instead of
	// FilterSubject).
	SubjectTransforms []SubjectTransformConfig `json:"subject_transforms,omitempty"`
	// External is where the source stream lives in another account or
	// domain (nil: this one).
	External *ExternalStream `json:"external,omitempty"`
	// Domain is the JetStream domain the source stream lives in: the
	// library makes it External{APIPrefix: "$JS.<Domain>.API"}, as nats.go
	// does. Set Domain or External, not both (ErrConfig).
	Domain string `json:"domain,omitempty"`
	// Consumer is the durable push consumer of the source stream the
	// messages are read through (server 2.14+; nil: one the server makes).
	Consumer *StreamConsumerSource `json:"consumer,omitempty"`
}

// StreamConsumerSource names the consumer a stream source reads through.
type StreamConsumerSource struct {
	Name           string `json:"name,omitempty"`            // the consumer's name
	DeliverSubject string `json:"deliver_subject,omitempty"` // its deliver subject
}

// ExternalStream is the API prefix (and deliver prefix) through which a
// stream of another account or domain is reached.
type ExternalStream struct {
	APIPrefix     string `json:"api"`               // e.g. "$JS.hub.API"
	DeliverPrefix string `json:"deliver,omitempty"` // the prefix of delivery subjects
}

// SubjectTransformConfig rewrites subjects matching Source into
// Destination (with {{wildcard(n)}}-style mappings).
type SubjectTransformConfig struct {
	Source      string `json:"src"`  // the subjects to rewrite (wildcards allowed)
	Destination string `json:"dest"` // what they become
}

// RePublish republishes each message the stream stores whose subject
// matches Source to Destination.
type RePublish struct {
	Source      string `json:"src,omitempty"`          // the subjects republished ("": all)
	Destination string `json:"dest"`                   // where they go
	HeadersOnly bool   `json:"headers_only,omitempty"` // republish the headers without the payload
}

// StreamConsumerLimits are defaults and limits the stream sets for its
// consumers.
type StreamConsumerLimits struct {
	// InactiveThreshold is the longest a consumer may stay inactive
	// before it is deleted (0: no limit).
	InactiveThreshold time.Duration `json:"inactive_threshold,omitempty"`
	// MaxAckPending is the most a consumer may have awaiting acks (0: no
	// limit).
	MaxAckPending int `json:"max_ack_pending,omitempty"`
}

// MarshalJSON is the JSON the server expects, Extra merged in.
func (c StreamConfig) MarshalJSON() ([]byte, error) {
	type plain StreamConfig
	return marshalWithExtra(plain(c), c.Extra)
}

// UnmarshalJSON reads the listed fields and keeps the others in Extra.
func (c *StreamConfig) UnmarshalJSON(b []byte) error {
	type plain StreamConfig
	return unmarshalWithExtra(b, (*plain)(c), func(p *plain) *map[string]any { return &p.Extra })
}

// marshalWithExtra marshals v (a struct without a MarshalJSON) and adds
// the keys of extra it does not set.
func marshalWithExtra(v any, extra map[string]any) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil || len(extra) == 0 {
		return b, err
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	for k, x := range extra {
		if _, set := m[k]; set {
			continue
		}
		raw, err := json.Marshal(x)
		if err != nil {
			return nil, err
		}
		m[k] = raw
	}
	return json.Marshal(m)
}

// unmarshalWithExtra decodes b into a fresh T (a struct without an
// UnmarshalJSON of its own), sets its Extra (reached through extra) to the
// members no field names, and only then stores it in *dst.
func unmarshalWithExtra[T any](b []byte, dst *T, extra func(*T) *map[string]any) error {
	var p T
	if err := json.Unmarshal(b, &p); err != nil {
		return err
	}
	m, err := unlistedFields(b, reflect.TypeOf(p))
	if err != nil {
		return err
	}
	*extra(&p) = m
	*dst = p
	return nil
}

var jsonNames sync.Map // reflect.Type -> map[string]bool

// unlistedFields are the members of the JSON object b that no field of
// struct type t names, or nil when there are none.
func unlistedFields(b []byte, t reflect.Type) (map[string]any, error) {
	var m map[string]any
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber() // keeps large integers exact
	if err := dec.Decode(&m); err != nil {
		return nil, err
	}
	known, ok := jsonNames.Load(t)
	if !ok {
		names := map[string]bool{}
		for i := range t.NumField() {
			name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
			if name != "" && name != "-" {
				names[name] = true
			}
		}
		known, _ = jsonNames.LoadOrStore(t, names)
	}
	for k := range m {
		if known.(map[string]bool)[k] {
			delete(m, k)
		}
	}
	if len(m) == 0 {
		return nil, nil
	}
	return m, nil
}

// StreamState is what a stream holds.
type StreamState struct {
	Msgs        uint64    `json:"messages"`       // messages stored
	Bytes       uint64    `json:"bytes"`          // their size in bytes
	FirstSeq    uint64    `json:"first_seq"`      // the sequence of the first message
	FirstTime   time.Time `json:"first_ts"`       // when the first message was stored
	LastSeq     uint64    `json:"last_seq"`       // the sequence of the last message
	LastTime    time.Time `json:"last_ts"`        // when the last message was stored
	NumDeleted  int       `json:"num_deleted"`    // deleted messages between the first and the last
	NumSubjects uint64    `json:"num_subjects"`   // distinct subjects of the messages stored
	Consumers   int       `json:"consumer_count"` // how many consumers the stream has
	// Deleted are the sequences of the deleted messages between the first
	// and the last; the server lists them only when asked (nil otherwise).
	Deleted []uint64 `json:"deleted,omitempty"`
	// Subjects maps each stored subject to its message count; only
	// StreamInfoWithSubjects fills it (with the subjects its filter
	// matches), nil otherwise.
	Subjects map[string]uint64 `json:"subjects,omitempty"`
}

// ClusterInfo is the cluster a stream or consumer lives on: its group's
// leader and the other replicas.
type ClusterInfo struct {
	Name      string      `json:"name,omitempty"`       // the cluster's name
	RaftGroup string      `json:"raft_group,omitempty"` // the replicas' Raft group
	Leader    string      `json:"leader,omitempty"`     // the server leading the group
	Replicas  []*PeerInfo `json:"replicas,omitempty"`   // the other servers of the group
}

// PeerInfo is one replica of a stream or consumer.
type PeerInfo struct {
	Name    string        `json:"name"`              // the server's name
	Current bool          `json:"current"`           // it is up to date
	Offline bool          `json:"offline,omitempty"` // it is not reachable
	Active  time.Duration `json:"active"`            // since it was last heard from
	Lag     uint64        `json:"lag,omitempty"`     // operations it is behind
}

// StreamInfo is a stream's configuration and state.
type StreamInfo struct {
	Config  StreamConfig `json:"config"`  // its configuration, as the server holds it
	Created time.Time    `json:"created"` // when it was created
	State   StreamState  `json:"state"`   // what it holds
	// TimeStamp is when the server produced this info (server 2.10+).
	TimeStamp time.Time `json:"ts"`
	// Cluster is the stream's cluster and replicas (nil outside a cluster).
	Cluster *ClusterInfo `json:"cluster,omitempty"`
	// Raw is the whole StreamInfo JSON, for fields not listed above.
	Raw json.RawMessage `json:"-"`
}

func parseStreamInfo(raw string) (*StreamInfo, error) {
	info := &StreamInfo{Raw: json.RawMessage(raw)}
	if err := json.Unmarshal(info.Raw, info); err != nil {
		return nil, err
	}
	return info, nil
}

// createStream is natsio_js_stream_create_async with action (a
// natsio_create_action).
func (js *JetStream) createStream(ctx context.Context, cfg StreamConfig, action C.int32_t) (*StreamInfo, error) {
	config, err := configJSON(cfg)
	if err != nil {
		return nil, err
	}
	raw, err := onJS(js, func(p *C.natsio_js) (string, error) {
		return rawJsStreamCreate(ctx, p, config, int32(action))
	})
	if err != nil {
		return nil, err
	}
	return parseStreamInfo(raw)
}

// CreateStream creates a stream (creating one that exists with the same
// configuration succeeds). Errors: ErrConfig (the detail names the field),
// ErrInvalidArgument (bad name), ErrStreamNameInUse (exists with another
// configuration), ErrJetStreamAPI (other rejections, e.g. overlapping
// subjects), ErrJetStreamNotEnabled (the account has no JetStream),
// ErrNoResponders (nobody answered: no leader during an election, retry;
// or the server has no JetStream).
func (js *JetStream) CreateStream(ctx context.Context, cfg StreamConfig) (*StreamInfo, error) {
	return js.createStream(ctx, cfg, C.NATSIO_CREATE)
}

// UpdateStream changes an existing stream's configuration
// (ErrStreamNotFound if there is none). Otherwise as CreateStream.
func (js *JetStream) UpdateStream(ctx context.Context, cfg StreamConfig) (*StreamInfo, error) {
	return js.createStream(ctx, cfg, C.NATSIO_UPDATE)
}

// CreateOrUpdateStream updates the stream, or creates it when it does not
// exist. Otherwise as CreateStream.
func (js *JetStream) CreateOrUpdateStream(ctx context.Context, cfg StreamConfig) (*StreamInfo, error) {
	return js.createStream(ctx, cfg, C.NATSIO_CREATE_OR_UPDATE)
}

// StreamInfo reads a stream's configuration and state. ErrStreamNotFound
// when there is none.
func (js *JetStream) StreamInfo(ctx context.Context, stream string) (*StreamInfo, error) {
	raw, err := onJS(js, func(p *C.natsio_js) (string, error) { return rawJsStreamInfo(ctx, p, stream, nil) })
	if err != nil {
		return nil, err
	}
	return parseStreamInfo(raw)
}

// StreamInfoWithSubjects is StreamInfo with State.Subjects: the message
// count of each stored subject that matches subjectsFilter (wildcards
// allowed, e.g. "orders.>"; all pages of a large map merged). An empty
// map when no subject matches. ErrBadSubject for a bad filter,
// ErrStreamNotFound.
func (js *JetStream) StreamInfoWithSubjects(ctx context.Context, stream, subjectsFilter string) (*StreamInfo, error) {
	cfilter, err := cString(subjectsFilter)
	if err != nil {
		return nil, err
	}
	// C memory: a struct handed to C may not point into Go memory.
	filter := C.CString(string(cfilter[:len(cfilter)-1]))
	defer C.free(unsafe.Pointer(filter))
	var opts C.natsio_stream_info_options
	C.natsio_stream_info_options_init(&opts)
	opts.subjects_filter = filter
	raw, err := onJS(js, func(p *C.natsio_js) (string, error) { return rawJsStreamInfo(ctx, p, stream, &opts) })
	if err != nil {
		return nil, err
	}
	info, err := parseStreamInfo(raw)
	if err == nil && info.State.Subjects == nil {
		info.State.Subjects = map[string]uint64{}
	}
	return info, err
}

// DeleteStream deletes a stream and its messages. ErrStreamNotFound when
// there is none.
func (js *JetStream) DeleteStream(ctx context.Context, stream string) error {
	return jsDo(js, func(p *C.natsio_js) error { return rawJsStreamDelete(ctx, p, stream) })
}

// PurgeOpt narrows a PurgeStream.
type PurgeOpt func(*purgeRequest)

type purgeRequest struct {
	Filter string `json:"filter,omitempty"`
	Seq    uint64 `json:"seq,omitempty"`
	Keep   uint64 `json:"keep,omitempty"`
}

// PurgeSubject purges only the messages on subject (wildcards allowed).
func PurgeSubject(subject string) PurgeOpt { return func(r *purgeRequest) { r.Filter = subject } }

// PurgeSequence purges only the messages below sequence seq.
func PurgeSequence(seq uint64) PurgeOpt { return func(r *purgeRequest) { r.Seq = seq } }

// PurgeKeep keeps the n newest messages (not with PurgeSequence: ErrConfig).
func PurgeKeep(n uint64) PurgeOpt { return func(r *purgeRequest) { r.Keep = n } }

// PurgeStream removes a stream's messages (all of them without options) and
// returns how many it removed.
func (js *JetStream) PurgeStream(ctx context.Context, stream string, opts ...PurgeOpt) (uint64, error) {
	var optionsJSON *string // nil: purge everything
	if len(opts) > 0 {
		var req purgeRequest
		for _, opt := range opts {
			opt(&req)
		}
		b, err := json.Marshal(req)
		if err != nil {
			return 0, err
		}
		s := string(b)
		optionsJSON = &s
	}
	return onJS(js, func(p *C.natsio_js) (uint64, error) { return rawJsStreamPurge(ctx, p, stream, optionsJSON) })
}

// StreamNames lists the names of all streams, or with subject not "" of
// those holding subject.
func (js *JetStream) StreamNames(ctx context.Context, subject string) ([]string, error) {
	return jsStrings(js, func(p *C.natsio_js) (C.go_take, error) { return rawJsStreamNames(ctx, p, nonEmpty(subject)) })
}

// Streams reads the configuration and state of all streams, or with
// subject not "" (wildcards allowed) of those holding subject.
// ErrBadSubject for a bad subject.
func (js *JetStream) Streams(ctx context.Context, subject string) ([]*StreamInfo, error) {
	raws, err := jsStrings(js, func(p *C.natsio_js) (C.go_take, error) { return rawJsStreamInfos(ctx, p, nonEmpty(subject)) })
	if err != nil {
		return nil, err
	}
	infos := make([]*StreamInfo, 0, len(raws))
	for _, raw := range raws {
		info, err := parseStreamInfo(raw)
		if err != nil {
			return nil, err
		}
		infos = append(infos, info)
	}
	return infos, nil
}

// APILevel is the JetStream API level the server implements (2.11
// reports 1, 2.12 reports 2, ...; 0 for servers too old to report one).
func (js *JetStream) APILevel(ctx context.Context) (uint64, error) {
	return onJS(js, func(p *C.natsio_js) (uint64, error) { return rawJsApiLevel(ctx, p) })
}

// RawStreamMsg is a message read back from a stream.
type RawStreamMsg struct {
	Subject  string // the subject it was published to
	Sequence uint64 // its sequence in the stream
	// Header is nil when it has none. Read with Direct Get (a stream
	// with AllowDirect) it also holds the headers the server adds to the
	// answer: Nats-Stream, Nats-Sequence, Nats-Subject, Nats-Time-Stamp
	// (as nats.go's RawStreamMsg does).
	Header Header
	Data   []byte    // the payload
	Time   time.Time // when the stream stored it
}

func storedMsg(m *C.natsio_stored_msg) *RawStreamMsg {
	r := &RawStreamMsg{
		Subject:  C.GoString(C.natsio_stored_msg_subject(m)),
		Sequence: uint64(C.natsio_stored_msg_seq(m)),
		Time:     time.Unix(0, int64(C.natsio_stored_msg_time_ns(m))),
		Header:   copyHeaders(C.natsio_stored_msg_headers(m)),
	}
	n := int(C.natsio_stored_msg_data_len(m))
	r.Data = make([]byte, n)
	if n > 0 {
		copy(r.Data, unsafe.Slice((*byte)(unsafe.Pointer(C.natsio_stored_msg_data(m))), n))
	}
	return r
}

// copyHeaders copies a borrowed C header map (nil for none).
func copyHeaders(h *C.natsio_headers) Header {
	if h == nil {
		return nil
	}
	n := C.natsio_headers_len(h)
	out := make(Header, int(n))
	for i := C.size_t(0); i < n; i++ {
		var name, value *C.char
		if C.natsio_headers_entry(h, i, &name, &value) == C.NATSIO_OK {
			out.Add(C.GoString(name), C.GoString(value))
		}
	}
	return out
}

func (js *JetStream) getMsg(ctx context.Context, stream string, seq uint64, last *string) (*RawStreamMsg, error) {
	return jsStoredMsg(js, func(p *C.natsio_js) (C.go_take, error) { return rawJsStreamGetMsg(ctx, p, stream, seq, last) })
}

// jsStoredMsg runs a raw verb whose result is a stored message.
func jsStoredMsg(js *JetStream, call func(p *C.natsio_js) (C.go_take, error)) (*RawStreamMsg, error) {
	r, err := onJS(js, call)
	if err != nil {
		return nil, err
	}
	m := (*C.natsio_stored_msg)(r.out)
	defer C.natsio_stored_msg_free(m)
	return storedMsg(m), nil
}

// GetMsg reads the message with sequence seq of stream. ErrMsgNotFound
// when there is none, ErrStreamNotFound. It reads with Direct Get when the
// stream has AllowDirect (the context reads each stream's configuration
// once to know), else through the stream's leader; a Direct Get nobody
// answers (the stream was deleted, not by this context) is ErrMsgNotFound.
func (js *JetStream) GetMsg(ctx context.Context, stream string, seq uint64) (*RawStreamMsg, error) {
	return js.getMsg(ctx, stream, seq, nil)
}

// GetLastMsg reads the last message on subject of stream, or on any
// subject it matches when it has wildcards ("s.*", "s.>"), as nats.go's
// GetLastMsgForSubject. ErrMsgNotFound
// when there is none, ErrBadSubject, ErrStreamNotFound.
func (js *JetStream) GetLastMsg(ctx context.Context, stream, subject string) (*RawStreamMsg, error) {
	return js.getMsg(ctx, stream, 0, &subject)
}

// GetNextMsg reads the first message of stream at or after sequence seq
// whose subject matches subject (wildcards allowed). To walk one
// subject's messages, pass the last one's Sequence + 1 until it fails
// with ErrMsgNotFound (none at or after seq). Like GetMsg it reads with
// Direct Get when the stream has AllowDirect. Errors: ErrMsgNotFound,
// ErrBadSubject, ErrStreamNotFound.
func (js *JetStream) GetNextMsg(ctx context.Context, stream string, seq uint64, subject string) (*RawStreamMsg, error) {
	return jsStoredMsg(js, func(p *C.natsio_js) (C.go_take, error) { return rawJsStreamGetNextMsg(ctx, p, stream, seq, subject) })
}

func (js *JetStream) deleteMsg(ctx context.Context, stream string, seq uint64, erase bool) error {
	return jsDo(js, func(p *C.natsio_js) error { return rawJsStreamDeleteMsg(ctx, p, stream, seq, erase) })
}

// DeleteMsgOpt configures DeleteMsg.
type DeleteMsgOpt func(*deleteMsgConfig)

type deleteMsgConfig struct{ noErase bool }

// NoErase asks the server to only mark the message deleted, without
// overwriting its bytes on disk ("no_erase": true in the delete request):
// faster, but the payload may stay readable in the stream's files.
func NoErase() DeleteMsgOpt { return func(c *deleteMsgConfig) { c.noErase = true } }

// DeleteMsg deletes message seq of stream. ErrMsgNotFound when there is
// none. By default the server also erases the message (overwrites its
// bytes on disk), as the reference client's delete_msg does; NoErase()
// asks it not to. This differs from nats.go, whose DeleteMsg never erases
// (its SecureDeleteMsg does): here DeleteMsg without options is
// SecureDeleteMsg.
func (js *JetStream) DeleteMsg(ctx context.Context, stream string, seq uint64, opts ...DeleteMsgOpt) error {
	var cfg deleteMsgConfig
	for _, opt := range opts {
		opt(&cfg)
	}
	return js.deleteMsg(ctx, stream, seq, !cfg.noErase)
}

// SecureDeleteMsg deletes message seq of stream and overwrites its bytes
// on disk (nats.go's name; the same as DeleteMsg without NoErase).
func (js *JetStream) SecureDeleteMsg(ctx context.Context, stream string, seq uint64) error {
	return js.deleteMsg(ctx, stream, seq, true)
}
