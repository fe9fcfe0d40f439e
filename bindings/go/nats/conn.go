// Package nats is nats.go's core API over libnatsio: a program written for
// github.com/nats-io/nats.go builds with it by changing only its import
// line. It is a facade over the natsio binding (the parent package), which
// does the work; here are nats.go's names, signatures and errors.
package nats

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	natsio "github.com/libnatsio/natsio/bindings/go"
)

// Status is a connection's state, with nats.go's values and names.
type Status int

const (
	DISCONNECTED = Status(iota)
	CONNECTED
	CLOSED
	RECONNECTING
	CONNECTING
	DRAINING_SUBS
	DRAINING_PUBS
)

func (s Status) String() string {
	switch s {
	case DISCONNECTED:
		return "DISCONNECTED"
	case CONNECTED:
		return "CONNECTED"
	case CLOSED:
		return "CLOSED"
	case RECONNECTING:
		return "RECONNECTING"
	case CONNECTING:
		return "CONNECTING"
	case DRAINING_SUBS:
		return "DRAINING_SUBS"
	case DRAINING_PUBS:
		return "DRAINING_PUBS"
	}
	return "unknown status"
}

// Statistics are a connection's traffic counters.
type Statistics struct {
	InMsgs     uint64
	OutMsgs    uint64
	InBytes    uint64
	OutBytes   uint64
	Reconnects uint64
}

// Conn is a connection to a NATS server.
type Conn struct {
	Opts Options

	inner   atomic.Pointer[natsio.Conn]
	lastErr atomic.Pointer[error]
	subs    sync.Map // sid -> *Subscription, for the error handler
	// subscribes counts Subscribe calls: every subsSweep of them, the
	// ended subscriptions (AutoUnsubscribe, Drain) leave subs.
	subscribes atomic.Uint64
	// heartbeatRoutes maps a push consumer's deliver subject to what
	// handles its missed heartbeats (RouteMissedHeartbeats).
	heartbeatRoutes sync.Map
	listeners       statusListeners // StatusChanged's channels
	// pushSubs are the running callback subscriptions of the legacy
	// JetStream API (for Barrier).
	pushSubs sync.Map
	// connectedAtStart is the connection when Connect returned connected:
	// its first-connect event is not reported to the status listeners.
	connectedAtStart atomic.Pointer[natsio.Conn]
	// handlersMu guards the handler fields of Opts, which the Set*Handler
	// calls change after Connect (the events read them when they happen).
	handlersMu sync.RWMutex
	// closedByClient is set by Close, for NoCallbacksAfterClientClose.
	closedByClient atomic.Bool
	// linkUp is whether the last connection event was a connect or a
	// reconnect (not a loss): closing then also ends a live connection,
	// which nats.go reports to the disconnect handler.
	linkUp atomic.Bool
	// authErr is the error of the program's JWT or signature callback
	// that failed the connect, if any (options_auth.go).
	authErr atomic.Pointer[error]
}

const subsSweep = 1024

// Connect connects to url (several separated by commas) with opts.
func Connect(url string, options ...Option) (*Conn, error) {
	opts := GetDefaultOptions()
	opts.Url = url
	return opts.connect(options)
}

// Connect connects with o's settings.
func (o Options) Connect() (*Conn, error) { return o.connect(nil) }

func (o Options) connect(options []Option) (*Conn, error) {
	for _, opt := range options {
		if opt == nil {
			continue
		}
		if err := opt(&o); err != nil {
			return nil, err
		}
	}
	o.applyConnectDefaults()
	url := o.Url
	for _, s := range o.Servers {
		if url != "" {
			url += ","
		}
		url += s
	}
	if url == "" {
		url = DefaultURL
	}
	nc := &Conn{Opts: o}
	bopts, err := o.bindingOptions(nc)
	if err != nil {
		return nil, err
	}
	inner, err := natsio.Connect(url, bopts...)
	if err != nil {
		if authErr := nc.authErr.Load(); authErr != nil {
			return nil, *authErr
		}
		return nil, Translate(err)
	}
	nc.bind(inner)
	if inner.Status() == natsio.Connected {
		nc.connectedAtStart.Store(inner)
	}
	return nc, nil
}

// bind records the binding's connection (the handlers may run before
// Connect returns).
func (nc *Conn) bind(inner *natsio.Conn) { nc.inner.CompareAndSwap(nil, inner) }

func (nc *Conn) conn() *natsio.Conn { return nc.inner.Load() }

// Binding is the natsio connection under nc, for what this package does
// not offer (and for the jetstream package).
func (nc *Conn) Binding() *natsio.Conn { return nc.conn() }

func (nc *Conn) setLastError(err error) {
	err = Translate(err)
	nc.lastErr.Store(&err)
}

func (nc *Conn) asyncError(err error) {
	if ae, ok := err.(*natsio.AsyncError); ok && ae.Subject != "" && errors.Is(ae.Err, natsio.ErrTimeout) {
		if route, ok := nc.heartbeatRoutes.Load(ae.Subject); ok {
			route.(*heartbeatRoute).handle()
			return
		}
	}
	nc.setLastError(err)
	cb := nc.ErrorHandler()
	if cb == nil {
		return
	}
	var sub *Subscription
	if ae, ok := err.(*natsio.AsyncError); ok && ae.SID != 0 {
		if s, ok := nc.subs.Load(ae.SID); ok {
			sub = s.(*Subscription)
		}
	}
	cb(nc, sub, Translate(err))
}

// RouteMissedHeartbeats hands the missed heartbeats the library reports
// for the push consumer delivering to subject to route instead of the
// AsyncErrorCB, until the returned function is called. A libnatsio extra
// (nats.go has no such call): the jetstream package's push consumers give
// them to their ConsumeErrHandler as ErrNoHeartbeat, as nats.go's do.
func (nc *Conn) RouteMissedHeartbeats(subject string, route func()) (remove func()) {
	r := &heartbeatRoute{route}
	nc.heartbeatRoutes.Store(subject, r)
	return func() { nc.heartbeatRoutes.CompareAndDelete(subject, r) }
}

type heartbeatRoute struct{ handle func() }

// LastError is the last asynchronous error or disconnection cause.
func (nc *Conn) LastError() error {
	if p := nc.lastErr.Load(); p != nil {
		return *p
	}
	return nil
}

func (nc *Conn) Publish(subj string, data []byte) error {
	return Translate(nc.conn().Publish(subj, data))
}

func (nc *Conn) PublishMsg(m *Msg) error {
	if m == nil {
		return ErrInvalidMsg
	}
	return Translate(nc.conn().PublishMsg(m.binding()))
}

func (nc *Conn) PublishRequest(subj, reply string, data []byte) error {
	return Translate(nc.conn().PublishMsg(&natsio.Msg{Subject: subj, Reply: reply, Data: data}))
}

// Request sends data to subj and waits up to timeout for one reply.
func (nc *Conn) Request(subj string, data []byte, timeout time.Duration) (*Msg, error) {
	return nc.RequestMsg(&Msg{Subject: subj, Data: data}, timeout)
}

func (nc *Conn) RequestMsg(msg *Msg, timeout time.Duration) (*Msg, error) {
	if msg == nil {
		return nil, ErrInvalidMsg
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	reply, err := nc.conn().RequestMsg(ctx, msg.binding())
	if err != nil {
		return nil, Translate(err)
	}
	return newMsg(reply, nil), nil
}

func (nc *Conn) RequestWithContext(ctx context.Context, subj string, data []byte) (*Msg, error) {
	return nc.RequestMsgWithContext(ctx, &Msg{Subject: subj, Data: data})
}

func (nc *Conn) RequestMsgWithContext(ctx context.Context, msg *Msg) (*Msg, error) {
	if ctx == nil {
		return nil, ErrInvalidContext
	}
	if msg == nil {
		return nil, ErrInvalidMsg
	}
	reply, err := nc.conn().RequestMsg(ctx, msg.binding())
	if err != nil {
		return nil, contextError(ctx, err)
	}
	return newMsg(reply, nil), nil
}

// Flush waits until the server has processed everything sent so far (10 s
// at most, as nats.go).
func (nc *Conn) Flush() error { return nc.FlushTimeout(10 * time.Second) }

func (nc *Conn) FlushTimeout(timeout time.Duration) error {
	if timeout <= 0 {
		return ErrBadTimeout
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	return Translate(nc.conn().Flush(ctx))
}

func (nc *Conn) FlushWithContext(ctx context.Context) error {
	if ctx == nil {
		return ErrInvalidContext
	}
	return contextError(ctx, nc.conn().Flush(ctx))
}

// Drain starts draining the subscriptions, then the publishes, and closes
// the connection; it returns at once, as nats.go's does (the ClosedHandler
// says when it ended).
func (nc *Conn) Drain() error {
	c := nc.conn()
	if c.IsClosed() {
		return ErrConnectionClosed
	}
	if c.Status() == natsio.Draining {
		return nil
	}
	nc.statusChanged(DRAINING_SUBS)
	go func() {
		if err := c.Drain(context.Background()); err != nil {
			nc.setLastError(err)
		}
	}()
	return nil
}

// Close closes the connection. A nil *Conn is a no-op, as in nats.go (its
// ExampleConnect closes what a failed Connect returned).
func (nc *Conn) Close() {
	if nc != nil {
		nc.closedByClient.Store(true)
		nc.conn().Close()
	}
}

func (nc *Conn) IsClosed() bool       { return nc.conn().IsClosed() }
func (nc *Conn) IsConnected() bool    { return nc.Status() == CONNECTED }
func (nc *Conn) IsReconnecting() bool { return nc.Status() == RECONNECTING }
func (nc *Conn) IsDraining() bool     { return nc.Status() == DRAINING_SUBS }

func (nc *Conn) Status() Status {
	switch nc.conn().Status() {
	case natsio.Connected:
		return CONNECTED
	case natsio.Connecting:
		return CONNECTING
	case natsio.Reconnecting:
		return RECONNECTING
	case natsio.Draining:
		return DRAINING_SUBS
	case natsio.Closed:
		return CLOSED
	}
	return DISCONNECTED
}

// ConnectedUrl is the URL of the server connected to, "" when not connected.
func (nc *Conn) ConnectedUrl() string {
	if nc.Status() != CONNECTED {
		return ""
	}
	url, err := nc.conn().ConnectedURL()
	if err != nil {
		return ""
	}
	return url
}

func (nc *Conn) serverInfo() (natsio.ServerInfo, bool) {
	if nc.Status() != CONNECTED {
		return natsio.ServerInfo{}, false
	}
	info, err := nc.conn().ServerInfo()
	return info, err == nil
}

func (nc *Conn) ConnectedServerId() string {
	info, _ := nc.serverInfo()
	return info.ServerID
}

func (nc *Conn) ConnectedServerName() string {
	info, _ := nc.serverInfo()
	return info.ServerName
}

func (nc *Conn) ConnectedServerVersion() string {
	info, _ := nc.serverInfo()
	return info.Version
}

func (nc *Conn) ConnectedClusterName() string {
	info, ok := nc.serverInfo()
	if !ok {
		return ""
	}
	var cluster struct {
		Cluster string `json:"cluster"`
	}
	_ = json.Unmarshal(info.Raw, &cluster)
	return cluster.Cluster
}

// GetClientID is the id the server gave this connection.
func (nc *Conn) GetClientID() (uint64, error) {
	if nc.IsClosed() {
		return 0, ErrConnectionClosed
	}
	info, ok := nc.serverInfo()
	if !ok {
		return 0, ErrDisconnected
	}
	if info.ClientID == 0 {
		return 0, ErrClientIDNotSupported
	}
	return info.ClientID, nil
}

func (nc *Conn) HeadersSupported() bool {
	info, _ := nc.serverInfo()
	return info.Headers
}

func (nc *Conn) MaxPayload() int64 { return nc.conn().MaxPayload() }

// ForceReconnect drops the connection and reconnects.
func (nc *Conn) ForceReconnect() error { return Translate(nc.conn().ForceReconnect()) }

// AuthRequired and TLSRequired are what the server's INFO says.
func (nc *Conn) AuthRequired() bool { return nc.infoFlag("auth_required") }
func (nc *Conn) TLSRequired() bool  { return nc.infoFlag("tls_required") }

func (nc *Conn) infoFlag(name string) bool {
	info, ok := nc.serverInfo()
	if !ok {
		return false
	}
	var fields map[string]any
	_ = json.Unmarshal(info.Raw, &fields)
	flag, _ := fields[name].(bool)
	return flag
}

func (nc *Conn) RTT() (time.Duration, error) {
	d, err := nc.conn().RTT()
	return d, Translate(err)
}

// Servers lists the server pool.
func (nc *Conn) Servers() []string { return nc.conn().Servers() }

// DiscoveredServers lists the servers of the pool learnt from the server
// (those not given to Connect).
func (nc *Conn) DiscoveredServers() []string {
	given := map[string]bool{}
	for _, u := range splitURLs(nc.Opts.Url) {
		given[u] = true
	}
	for _, u := range nc.Opts.Servers {
		given[u] = true
	}
	var found []string
	for _, s := range nc.Servers() {
		if !given[s] {
			found = append(found, s)
		}
	}
	return found
}

func splitURLs(s string) []string {
	var urls []string
	start := 0
	for i := 0; i <= len(s); i++ {
		if i == len(s) || s[i] == ',' {
			if i > start {
				urls = append(urls, s[start:i])
			}
			start = i + 1
		}
	}
	return urls
}

func (nc *Conn) Stats() Statistics {
	st := nc.conn().Stats()
	return Statistics{InMsgs: st.InMsgs, OutMsgs: st.OutMsgs, InBytes: st.InBytes, OutBytes: st.OutBytes, Reconnects: st.Reconnects}
}

// NewRespInbox is a new unique inbox subject under the connection's prefix.
func (nc *Conn) NewRespInbox() string {
	inbox, _ := nc.conn().NewInbox()
	return inbox
}

// NewInbox is a new unique inbox subject ("_INBOX." and 22 random
// characters).
func NewInbox() string { return "_INBOX." + randomToken(22) }

// randomToken is n random characters of [0-9A-Za-z].
func randomToken(n int) string {
	const digits = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	b := make([]byte, n)
	_, _ = rand.Read(b)
	for i := range b {
		b[i] = digits[int(b[i])%len(digits)]
	}
	return string(b)
}
