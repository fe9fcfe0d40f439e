package natsio

/*
#include <stdlib.h>
#include "natsio_go.h"
*/
import "C"

import (
	"context"
	"encoding/json"
	"iter"
	"runtime"
	"sync"
	"time"
	"unsafe"
)

// Conn is a connection to a NATS server. All methods are safe for
// concurrent use. Close it when done; a Conn that becomes unreachable
// without Close is closed by a finalizer (a backstop, not a substitute):
// except that a Conn serving callback subscriptions stays alive until they
// end or it is closed.
type Conn struct {
	ptr    *C.natsio_client
	errors *errorSink
	ring   *pubRing // nil if the library gave none
	// sender: see deferredSender; made by the first PublishAsync.
	senderOnce sync.Once
	sender     *deferredSender
}

// MsgHandler receives the messages of a callback subscription, one at a
// time and in order, on the subscription's own library thread. A panic is
// recovered and reported to the ErrorHandler; the subscription goes on.
type MsgHandler func(msg *Msg)

// DefaultURL, "nats://127.0.0.1:4222", is the server Connect("") connects
// to (nats.go's name; the value is the core's NATSIO_DEFAULT_URL).
const DefaultURL = C.NATSIO_DEFAULT_URL

// Connect connects to url (several may be given, separated by commas) and
// returns once the server has accepted the connection. An empty url is
// DefaultURL, as in nats.go. The connection is
// made by the library (natsio_client_connect_async); this goroutine waits
// for it without holding an OS thread.
func Connect(url string, opts ...Option) (*Conn, error) {
	var cfg connectConfig
	for _, opt := range opts {
		opt(&cfg)
	}
	copts, sink, events, err := buildOptions(url, &cfg)
	if copts != nil {
		defer C.natsio_options_free(copts) // the library copied them
	}
	if err != nil {
		return nil, err
	}
	r, err := rawClientConnect(context.Background(), copts)
	if err != nil {
		return nil, err
	}
	nc := &Conn{ptr: (*C.natsio_client)(r.out), errors: sink}
	nc.ring = newPubRing(nc.ptr)
	sink.client.Store(nc.ptr)
	runtime.SetFinalizer(nc, (*Conn).finalize)
	if events != nil {
		events.setConn(nc)
	}
	return nc, nil
}

// clientLang is CONNECT's lang for this binding (NUL-terminated).
var clientLang = []byte("natsio-go\x00")

// buildOptions makes the C options of a Connect.
func buildOptions(url string, cfg *connectConfig) (*C.natsio_options, *errorSink, *eventSink, error) {
	lockThread()
	defer unlockThread()

	var copts *C.natsio_options
	if err := statusError(C.natsio_options_new(&copts)); err != nil {
		return nil, nil, nil, err
	}
	// The server's monitoring shows this binding as itself.
	if err := statusError(C.natsio_options_set_client_lang(copts, cPtr(clientLang), C.natsio_version())); err != nil {
		return copts, nil, nil, err
	}
	curl, err := cString(url)
	if err != nil {
		return copts, nil, nil, err
	}
	if err := statusError(C.natsio_options_set_url(copts, cPtr(curl))); err != nil {
		return copts, nil, nil, err
	}
	if err := statusError(C.natsio_options_set_max_pending_size(copts, defaultMaxPendingSize)); err != nil {
		return copts, nil, nil, err
	}
	for _, set := range cfg.settings {
		if err := statusError(set(copts)); err != nil {
			return copts, nil, nil, err
		}
	}
	sink := &errorSink{handler: cfg.errorHandler}
	if cfg.errorHandler != nil {
		// The handle is deleted by the release callback, once neither the
		// options nor a client use it.
		h, box := newHandle(sink)
		if err := statusError(C.go_options_set_error_callback(copts, C.uintptr_t(h))); err != nil {
			discardHandle(h, box)
			return copts, nil, nil, err
		}
	}
	var events *eventSink
	if cfg.eventHandlers != nil {
		if events, err = registerEvents(copts, cfg.eventHandlers, sink); err != nil {
			return copts, nil, nil, err
		}
	}
	return copts, sink, events, nil
}

func (nc *Conn) finalize() {
	nc.stopDeferredSender()
	C.natsio_client_free(nc.ptr) // closes first
	unregisterClientThreads(nc.ptr)
}

// stopDeferredSender stops the connection's deferredSender, if it has one.
func (nc *Conn) stopDeferredSender() {
	nc.senderOnce.Do(func() {}) // none is started after this
	if nc.sender != nil {
		nc.sender.close()
	}
}

// Close closes the connection: buffered publishes are sent (best effort),
// pending requests fail with ErrConnectionClosed and subscriptions end
// (their iterators return ErrConnectionClosed). Once it returns no handler
// of this connection runs again (unless Close is called from a handler:
// that one finishes after it). Closing twice is harmless.
func (nc *Conn) Close() error {
	defer runtime.KeepAlive(nc)
	subStops.Add(1) // see natsioGoMsgs
	if nc.ring != nil {
		nc.ring.close()
	}
	nc.stopDeferredSender()
	var err error
	if onLibraryThread() {
		// From a callback: the library's own close knows not to wait for
		// the callback it is called from.
		lockThread()
		err = statusError(C.natsio_client_close(nc.ptr))
		unlockThread()
	} else {
		// The close (joining the library's callback threads) runs on a
		// library thread; this goroutine waits for it.
		err = rawClientClose(context.Background(), nc.ptr)
	}
	unregisterClientThreads(nc.ptr)
	return err
}

// Publish sends data to subject. It returns once the message is buffered,
// without waiting for the server (use Flush for that).
func (nc *Conn) Publish(subject string, data []byte) error {
	if nc.ring != nil && nc.ring.tryPublish(nc.ptr, subject, data) {
		runtime.KeepAlive(nc)
		return nil
	}
	return nc.publish(subject, "", C.GO_PUB_PLAIN, nil, data)
}

// PublishMsg sends m's Data and Header to m.Subject, with m.Reply as the
// reply subject when set.
func (nc *Conn) PublishMsg(m *Msg) error {
	hdrs, err := cHeaders(m.Header)
	if err != nil {
		return err
	}
	if hdrs != nil {
		defer C.natsio_headers_free(hdrs)
	}
	mode := C.int(C.GO_PUB_PLAIN)
	if m.Reply != "" {
		mode = C.GO_PUB_WITH_REPLY
	}
	return nc.publish(m.Subject, m.Reply, mode, hdrs, m.Data)
}

// Subscribe calls handler with every message on subject (wildcards
// allowed). Messages are delivered one at a time, in order.
func (nc *Conn) Subscribe(subject string, handler MsgHandler, opts ...SubOption) (*Subscription, error) {
	return nc.subscribe(subject, "", handler, opts)
}

// QueueSubscribe is Subscribe as a member of a queue group: each message
// goes to one member of the group.
func (nc *Conn) QueueSubscribe(subject, queue string, handler MsgHandler, opts ...SubOption) (*Subscription, error) {
	return nc.subscribe(subject, queue, handler, opts)
}

// SubscribeSync subscribes for reading with NextMsg or Msgs. No message
// published after it returns is missed.
func (nc *Conn) SubscribeSync(subject string, opts ...SubOption) (*Subscription, error) {
	return nc.subscribe(subject, "", nil, opts)
}

// QueueSubscribeSync is SubscribeSync as a member of a queue group.
func (nc *Conn) QueueSubscribeSync(subject, queue string, opts ...SubOption) (*Subscription, error) {
	return nc.subscribe(subject, queue, nil, opts)
}

func (nc *Conn) subscribe(subject, queue string, handler MsgHandler, opts []SubOption) (*Subscription, error) {
	csubj, err := cString(subject)
	if err != nil {
		return nil, err
	}
	var cqueue []byte
	if queue != "" {
		if cqueue, err = cString(queue); err != nil {
			return nil, err
		}
	}
	var copts C.natsio_sub_options
	C.natsio_sub_options_init(&copts)
	for _, opt := range opts {
		opt(&copts)
	}
	defer runtime.KeepAlive(nc)
	var csub *C.natsio_sub
	lockThread()
	err = statusError(C.natsio_client_subscribe(nc.ptr, cPtr(csubj), cPtr(cqueue), &copts, &csub))
	unlockThread()
	if err != nil {
		return nil, err
	}
	sub := &Subscription{ptr: csub, conn: nc, subject: subject, queue: queue}
	runtime.SetFinalizer(sub, (*Subscription).finalize)
	if handler != nil {
		// The library's push mode: its thread for this subscription calls
		// natsioGoMsg with each message (those that arrived meanwhile
		// first). The handle keeps the state, and so the Subscription,
		// alive until the library's release after its last call.
		st := &subState{sub: sub, handler: handler, ended: make(chan struct{})}
		sub.cb = st
		h, box := newHandle(st)
		lockThread()
		err := statusError(C.go_sub_set_callback(csub, C.uintptr_t(h)))
		unlockThread()
		if err != nil {
			discardHandle(h, box)
			C.natsio_sub_stop(csub)
			return nil, err
		}
	}
	return sub, nil
}

// Request sends data to subject and waits for one reply, until ctx ends
// (or, without a deadline, the connection's request timeout).
// ErrNoResponders comes at once when nobody is subscribed; when ctx is
// cancelled the request is abandoned and ctx.Err() returned.
func (nc *Conn) Request(ctx context.Context, subject string, data []byte) (*Msg, error) {
	return nc.RequestMsg(ctx, &Msg{Subject: subject, Data: data})
}

// RequestMsg is Request with headers (m.Reply is ignored).
func (nc *Conn) RequestMsg(ctx context.Context, m *Msg) (*Msg, error) {
	if err := ctx.Err(); err != nil {
		return nil, contextError(ctx)
	}
	hdrs, err := cHeaders(m.Header)
	if err != nil {
		return nil, err
	}
	if hdrs != nil {
		defer C.natsio_headers_free(hdrs)
	}
	defer runtime.KeepAlive(nc)
	return nc.request(ctx, m.Subject, hdrs, m.Data)
}

// RequestMany sends one request and iterates over its replies until
// MaxReplies replies, a Stall gap, the context's deadline (or the
// connection's request timeout), or no responders (which ends it without
// replies). An error (a closed connection, the context cancelled) is
// yielded once, last. Breaking out of the loop abandons the request.
func (nc *Conn) RequestMany(ctx context.Context, subject string, data []byte, opts ...RequestManyOption) iter.Seq2[*Msg, error] {
	return func(yield func(*Msg, error) bool) {
		replies, err := nc.startRequestMany(ctx, subject, data, opts)
		if err != nil {
			yield(nil, err)
			return
		}
		nc.yieldReplies(ctx, replies, yield)
	}
}

// yieldReplies yields the replies a request-many iterator (owned, freed
// here) gathers until it ends; an error is yielded once, last.
func (nc *Conn) yieldReplies(ctx context.Context, replies *C.natsio_replies, yield func(*Msg, error) bool) {
	// The replies are gathered by the library; each is read here, and
	// a wait for one is a token that ctx's end withdraws.
	defer C.natsio_replies_free(replies)
	defer runtime.KeepAlive(nc)
	for {
		m, err := iterNext(ctx, unsafe.Pointer(replies), C.GO_ITER_REPLIES, keepMsg(nc))
		if isDone(err) {
			return
		}
		if !yield(m, err) || err != nil {
			return
		}
	}
}

func (nc *Conn) startRequestMany(ctx context.Context, subject string, data []byte, opts []RequestManyOption) (*C.natsio_replies, error) {
	if ctx.Err() != nil {
		return nil, contextError(ctx)
	}
	csubj, err := cString(subject)
	if err != nil {
		return nil, err
	}
	copts := requestManyOptions(ctx, opts)
	p, n := dataPtr(data)
	var replies *C.natsio_replies
	lockThread()
	err = statusError(C.natsio_client_request_many(nc.ptr, cPtr(csubj), nil, p, n, &copts, &replies))
	unlockThread()
	runtime.KeepAlive(nc)
	runtime.KeepAlive(data)
	return replies, err
}

// requestManyOptions are opts over the defaults, the timeout ctx's deadline.
func requestManyOptions(ctx context.Context, opts []RequestManyOption) C.natsio_request_many_options {
	var copts C.natsio_request_many_options
	C.natsio_request_many_options_init(&copts)
	copts.timeout_ms = timeoutField(ctx)
	for _, opt := range opts {
		opt(&copts)
	}
	return copts
}

// Flush waits until the server has processed everything sent before it
// (a PING answered by its PONG). It is bounded by ctx's deadline or,
// without one, by the FlushTimeout option (default 10s): past it Flush
// fails with ErrTimeout, also when the server has stopped answering. A
// cancelled ctx ends it at once with ctx.Err().
func (nc *Conn) Flush(ctx context.Context) error {
	defer runtime.KeepAlive(nc)
	timeout := timeoutArg(ctx) // NATSIO_TIMEOUT_DEFAULT: the flush timeout
	return rawClientFlush(ctx, nc.ptr, int64(timeout))
}

// Drain stops every subscription from receiving, lets the handlers finish
// their backlog, flushes pending publishes and closes the connection. It
// is bounded by ctx's deadline, or without one by the DrainTimeout option;
// past it the connection is closed anyway and ErrDrainTimeout returned. If
// ctx is cancelled, Drain returns ctx.Err() and the drain goes on. Called
// from a handler of this connection, it starts the drain and returns at
// once (the drain waits for that handler to return).
func (nc *Conn) Drain(ctx context.Context) error {
	if ctx.Err() != nil {
		return contextError(ctx)
	}
	defer runtime.KeepAlive(nc)
	timeout := C.int64_t(C.NATSIO_TIMEOUT_DEFAULT)
	if _, ok := ctx.Deadline(); ok {
		timeout = timeoutArg(ctx)
	}
	if inCallbackOf(nc.ptr) {
		// The drain waits for this handler: start it and return.
		return rawClientDrain(waitingBy(ctx, startOnly), nc.ptr, int64(timeout))
	}
	err := rawClientDrain(waitingBy(ctx, leaveOnEnd), nc.ptr, int64(timeout))
	if ctx.Err() != nil && err != nil {
		return err
	}
	if nc.Status() == Closed {
		unregisterClientThreads(nc.ptr)
	}
	return ctxOutcome(ctx, err)
}

// ConnStatus is the state of a connection.
type ConnStatus int32

// The states of a connection, as Conn.Status reports them.
const (
	// Disconnected is not connected. The library reports a lost connection
	// as Reconnecting (or Closed when it does not reconnect), so a Conn is
	// not normally seen in this state.
	Disconnected ConnStatus = C.NATSIO_CONN_DISCONNECTED
	// Connecting is the first connection being made, before Connect
	// returns.
	Connecting ConnStatus = C.NATSIO_CONN_CONNECTING
	// Connected is connected to a server.
	Connected ConnStatus = C.NATSIO_CONN_CONNECTED
	// Reconnecting is trying to connect again after a lost connection (or,
	// with RetryOnFailedConnect, before the first one); publishes are
	// buffered meanwhile (see ReconnectBufSize).
	Reconnecting ConnStatus = C.NATSIO_CONN_RECONNECTING
	// Draining is a Drain in progress; the connection closes after it.
	Draining ConnStatus = C.NATSIO_CONN_DRAINING
	// Closed is closed for good (Close, Drain, or a lost connection that
	// could not be reconnected): calls that need the connection fail with
	// ErrConnectionClosed.
	Closed ConnStatus = C.NATSIO_CONN_CLOSED
)

// String is the state's name in lower case ("connected"), or "unknown".
func (s ConnStatus) String() string {
	switch s {
	case Disconnected:
		return "disconnected"
	case Connecting:
		return "connecting"
	case Connected:
		return "connected"
	case Reconnecting:
		return "reconnecting"
	case Draining:
		return "draining"
	case Closed:
		return "closed"
	}
	return "unknown"
}

// Status is the connection's state.
func (nc *Conn) Status() ConnStatus {
	s := ConnStatus(C.natsio_client_status(nc.ptr))
	runtime.KeepAlive(nc)
	return s
}

// IsClosed reports whether the connection is closed.
func (nc *Conn) IsClosed() bool { return nc.Status() == Closed }

// Stats are a connection's traffic counters.
type Stats struct {
	InMsgs, OutMsgs   uint64 // messages received (by subscriptions and requests) and published
	InBytes, OutBytes uint64 // payload bytes
	Reconnects        uint64 // successful reconnects since Connect
	Errors            uint64 // asynchronous errors reported
	ServerPings       uint64 // PINGs the server sent (each answered)
}

// Stats reads the traffic counters.
func (nc *Conn) Stats() Stats {
	var cs C.natsio_client_stats
	C.natsio_client_get_stats(nc.ptr, &cs)
	runtime.KeepAlive(nc)
	return Stats{
		InMsgs: uint64(cs.in_msgs), OutMsgs: uint64(cs.out_msgs),
		InBytes: uint64(cs.in_bytes), OutBytes: uint64(cs.out_bytes),
		Reconnects: uint64(cs.reconnects), Errors: uint64(cs.errors),
		ServerPings: uint64(cs.server_pings),
	}
}

// MaxPayload is the largest message (headers included) the server accepts.
func (nc *Conn) MaxPayload() int64 {
	n := int64(C.natsio_client_max_payload(nc.ptr))
	runtime.KeepAlive(nc)
	return n
}

// ServerInfo is the server's INFO, as last received.
type ServerInfo struct {
	ServerID   string `json:"server_id"`   // the server's unique id
	ServerName string `json:"server_name"` // the server's configured name
	Version    string `json:"version"`     // the server's version
	Host       string `json:"host"`        // the host it listens on for clients
	Port       int    `json:"port"`        // the port it listens on for clients
	Headers    bool   `json:"headers"`     // it supports message headers
	MaxPayload int64  `json:"max_payload"` // the largest message it accepts, in bytes
	Proto      int    `json:"proto"`       // its protocol version
	ClientID   uint64 `json:"client_id"`   // the id it gave this connection
	JetStream  bool   `json:"jetstream"`   // JetStream is enabled on it
	// Raw is the whole INFO JSON, for fields not listed above.
	Raw json.RawMessage `json:"-"`
}

// ServerInfo is the server's latest INFO.
func (nc *Conn) ServerInfo() (ServerInfo, error) {
	var info ServerInfo
	raw, err := nc.ownedString(func(out **C.char) C.natsio_status { return C.natsio_client_server_info(nc.ptr, out) })
	if err != nil {
		return info, err
	}
	if err := json.Unmarshal([]byte(raw), &info); err != nil {
		return info, err
	}
	info.Raw = json.RawMessage(raw)
	return info, nil
}

// ConnectedURL is the URL of the server currently connected to.
// ErrConnectionClosed once the connection is closed.
func (nc *Conn) ConnectedURL() (string, error) {
	return nc.ownedString(func(out **C.char) C.natsio_status { return C.natsio_client_connected_url(nc.ptr, out) })
}

// InboxPrefix is the prefix of this connection's reply inboxes (the
// InboxPrefix option, default "_INBOX"); readable after Close too.
func (nc *Conn) InboxPrefix() (string, error) {
	return nc.ownedString(func(out **C.char) C.natsio_status { return C.natsio_client_inbox_prefix(nc.ptr, out) })
}

// NewInbox is a new unique subject under the inbox prefix.
func (nc *Conn) NewInbox() (string, error) {
	return nc.ownedString(func(out **C.char) C.natsio_status { return C.natsio_client_new_inbox(nc.ptr, out) })
}

func (nc *Conn) ownedString(get func(**C.char) C.natsio_status) (string, error) {
	var s *C.char
	lockThread()
	err := statusError(get(&s))
	unlockThread()
	runtime.KeepAlive(nc)
	if err != nil {
		return "", err
	}
	defer C.natsio_string_free(s)
	return C.GoString(s), nil
}

// timeoutArg is ctx's remaining time in milliseconds for a timeout_ms
// argument, or NATSIO_TIMEOUT_DEFAULT (the handle's default) when ctx has
// no deadline.
func timeoutArg(ctx context.Context) C.int64_t {
	deadline, ok := ctx.Deadline()
	if !ok {
		return C.NATSIO_TIMEOUT_DEFAULT
	}
	return max(millis(time.Until(deadline)), 1)
}

// timeoutField is the same for a duration field of an options struct,
// where 0 means the default.
func timeoutField(ctx context.Context) C.int64_t {
	if _, ok := ctx.Deadline(); !ok {
		return 0
	}
	return timeoutArg(ctx)
}
