package natsio

// Reconnect, auth and TLS options, lifecycle
// handlers (all fed from the one C event callback), ForceReconnect, RTT,
// Servers and the server pool (ServerPool, SetServerPool). Every semantic
// is the core's; this file only translates.

/*
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "natsio_go.h"
*/
import "C"

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"time"
	"unsafe"
	"weak"
)

// ---------------------------------------------------------------------------
// Reconnect options
// ---------------------------------------------------------------------------

// NoReconnect closes the connection when it is lost instead of reconnecting.
func NoReconnect() Option {
	return func(cfg *connectConfig) {
		cfg.add(func(o *C.natsio_options) C.natsio_status { return C.natsio_options_set_allow_reconnect(o, false) })
	}
}

// MaxReconnects is how many consecutive failed attempts a server may have
// before it leaves the pool (default 60; -1: unlimited).
func MaxReconnects(n int) Option {
	return func(cfg *connectConfig) {
		cfg.add(func(o *C.natsio_options) C.natsio_status {
			return C.natsio_options_set_max_reconnect_attempts(o, C.int64_t(n))
		})
	}
}

// ReconnectWait is the wait between attempts to the same server, doubling
// per failed attempt up to max (defaults 2s and 8s).
func ReconnectWait(wait, max time.Duration) Option {
	return func(cfg *connectConfig) {
		cfg.add(func(o *C.natsio_options) C.natsio_status {
			return C.natsio_options_set_reconnect_wait(o, millis(wait), millis(max))
		})
	}
}

// ReconnectJitter is the random extra wait added to each reconnect delay,
// for plain and TLS connections (defaults 100ms and 1s).
func ReconnectJitter(jitter, jitterTLS time.Duration) Option {
	return func(cfg *connectConfig) {
		cfg.add(func(o *C.natsio_options) C.natsio_status {
			return C.natsio_options_set_reconnect_jitter(o, millis(jitter), millis(jitterTLS))
		})
	}
}

// ReconnectDelayHandler gives the wait before the next reconnect attempt,
// given the number of the turn through the server pool (1, 2, ...,
// counted afresh on every reconnect).
type ReconnectDelayHandler func(attempts int) time.Duration

// CustomReconnectDelay paces reconnects as nats.go's CustomReconnectDelay
// does: after a lost connection (or a failed first connect with
// RetryOnFailedConnect) the servers of the pool are tried in turn, and
// before the last server of each turn handler is called with the turn's
// number and its answer is waited (with one server: before every
// attempt; not for the first attempt of a ForceReconnect). It replaces
// ReconnectWait's backoff and ReconnectJitter.
// A zero or negative duration tries at once; durations are rounded up to
// whole milliseconds. handler runs on a library thread (a slow handler
// delays only that attempt; Close does not wait for a running call). A panic in
// it fails that attempt (ReconnectErrHandler gets it, ErrConfig) after
// the default wait, and the client keeps trying. nil removes it.
func CustomReconnectDelay(handler ReconnectDelayHandler) Option {
	return func(cfg *connectConfig) {
		cfg.add(func(o *C.natsio_options) C.natsio_status {
			if handler == nil {
				return C.natsio_options_set_reconnect_delay_callback(o, nil, nil, nil)
			}
			h, box := newHandle(handler)
			st := C.go_options_set_reconnect_delay_callback(o, C.uintptr_t(h))
			if st != C.NATSIO_OK {
				discardHandle(h, box)
			}
			return st
		})
	}
}

//export natsioGoReconnectDelay
func natsioGoReconnectDelay(userData unsafe.Pointer, attempts C.int64_t) (ms C.int64_t) {
	handler := valueOf(userData).(ReconnectDelayHandler)
	defer func() {
		if recover() != nil {
			ms = -2 // a failure (any negative but NATSIO_RECONNECT_DELAY_DEFAULT)
		}
	}()
	d := handler(int(attempts))
	if d <= 0 {
		return 0
	}
	return C.int64_t((d + time.Millisecond - 1) / time.Millisecond)
}

// ReconnectBufSize is how many bytes of publishes are kept while
// disconnected and sent after the reconnect (default 8 MiB; -1 disables
// buffering). It counts wire bytes, as nats.go does: each publish takes its
// whole PUB/HPUB frame (subject, reply, size line, headers, payload, CRLFs).
// A publish that does not fit fails with ErrReconnectBufExceeded.
func ReconnectBufSize(bytes int) Option {
	return func(cfg *connectConfig) {
		cfg.add(func(o *C.natsio_options) C.natsio_status {
			return C.natsio_options_set_reconnect_buf_size(o, C.int64_t(bytes))
		})
	}
}

// DontRandomize tries the servers in the order given instead of randomly.
func DontRandomize() Option {
	return func(cfg *connectConfig) {
		cfg.add(func(o *C.natsio_options) C.natsio_status { return C.natsio_options_set_no_randomize(o, true) })
	}
}

// IgnoreDiscoveredServers keeps the pool to the servers given, ignoring
// those the servers announce.
func IgnoreDiscoveredServers() Option {
	return func(cfg *connectConfig) {
		cfg.add(func(o *C.natsio_options) C.natsio_status {
			return C.natsio_options_set_ignore_discovered_servers(o, true)
		})
	}
}

// RetryOnFailedConnect makes Connect return a reconnecting Conn when no
// server is reachable yet, instead of failing; publishes are buffered.
func RetryOnFailedConnect(retry bool) Option {
	return func(cfg *connectConfig) {
		cfg.add(func(o *C.natsio_options) C.natsio_status {
			return C.natsio_options_set_retry_on_failed_connect(o, C.bool(retry))
		})
	}
}

// IgnoreAuthErrorAbort keeps retrying a server that rejects the
// credentials twice in a row with the same error, instead of closing.
func IgnoreAuthErrorAbort() Option {
	return func(cfg *connectConfig) {
		cfg.add(func(o *C.natsio_options) C.natsio_status {
			return C.natsio_options_set_ignore_auth_error_abort(o, true)
		})
	}
}

// ---------------------------------------------------------------------------
// Authentication (one kind per connection; two are ErrConfig)
// ---------------------------------------------------------------------------

// Nkey authenticates with an NKey seed ("SU..."), signing the server's
// nonce on every connect.
func Nkey(seed string) Option {
	return func(cfg *connectConfig) {
		cfg.add(withString(seed, func(o *C.natsio_options, s *C.char) C.natsio_status {
			return C.natsio_options_set_nkey_seed(o, s)
		}))
	}
}

// NkeyFromFile authenticates with the NKey seed in a file, read on every
// connect.
func NkeyFromFile(path string) Option {
	return func(cfg *connectConfig) {
		cfg.add(withString(path, func(o *C.natsio_options, s *C.char) C.natsio_status {
			return C.natsio_options_set_nkey_file(o, s)
		}))
	}
}

// UserCredentials authenticates with a .creds file (user JWT and NKey
// seed), read on every connect.
func UserCredentials(path string) Option {
	return func(cfg *connectConfig) {
		cfg.add(withString(path, func(o *C.natsio_options, s *C.char) C.natsio_status {
			return C.natsio_options_set_credentials_file(o, s)
		}))
	}
}

// UserJWTHandler gives the user JWT to present.
type UserJWTHandler func() (string, error)

// SignatureHandler signs the server's nonce with the user's Ed25519 key,
// returning the 64-byte signature.
type SignatureHandler func(nonce []byte) ([]byte, error)

// UserJWT authenticates through callbacks (keys kept elsewhere, e.g. in an
// HSM). Both run on every connect, on a library thread; an error or a panic
// fails that connection attempt.
func UserJWT(jwt UserJWTHandler, sign SignatureHandler) Option {
	return func(cfg *connectConfig) {
		cfg.add(func(o *C.natsio_options) C.natsio_status {
			if jwt == nil || sign == nil {
				return C.NATSIO_ERR_NULL_ARGUMENT
			}
			h, box := newHandle(&authState{jwt: jwt, sign: sign})
			st := C.go_options_set_auth_callbacks(o, C.uintptr_t(h))
			if st != C.NATSIO_OK {
				discardHandle(h, box)
			}
			return st
		})
	}
}

// authState is the user data of the auth callbacks. The C contract wants
// the returned JWT to stay valid until the next call or the release, so the
// last one is kept in C memory here.
type authState struct {
	jwt  UserJWTHandler
	sign SignatureHandler
	mu   sync.Mutex
	last *C.char
}

func (a *authState) released() {
	a.mu.Lock()
	defer a.mu.Unlock()
	C.free(unsafe.Pointer(a.last))
	a.last = nil
}

//export natsioGoJWT
func natsioGoJWT(userData unsafe.Pointer) (out *C.char) {
	a := valueOf(userData).(*authState)
	defer func() {
		if recover() != nil {
			out = nil
		}
	}()
	jwt, err := a.jwt()
	if err != nil || strings.IndexByte(jwt, 0) >= 0 {
		return nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	C.free(unsafe.Pointer(a.last))
	a.last = C.CString(jwt)
	return a.last
}

//export natsioGoSign
func natsioGoSign(userData unsafe.Pointer, nonce *C.uint8_t, nonceLen C.size_t, signatureOut *C.uint8_t) (status C.natsio_status) {
	a := valueOf(userData).(*authState)
	defer func() {
		if recover() != nil {
			status = C.NATSIO_ERR_INTERNAL
		}
	}()
	sig, err := a.sign(C.GoBytes(unsafe.Pointer(nonce), C.int(nonceLen)))
	if err != nil {
		var e *Error
		if errors.As(err, &e) {
			return C.natsio_status(e.Status)
		}
		return C.NATSIO_ERR_INTERNAL
	}
	if len(sig) != 64 {
		return C.NATSIO_ERR_INVALID_ARGUMENT
	}
	C.memcpy(unsafe.Pointer(signatureOut), unsafe.Pointer(&sig[0]), 64)
	return C.NATSIO_OK
}

// UserInfoHandler gives the user and password to present.
type UserInfoHandler func() (user, password string, err error)

// TokenHandler gives the token to present.
type TokenHandler func() (string, error)

// UserInfoCallback authenticates with the user and password handler gives,
// called on every connect and reconnect (on a library thread), so rotated
// credentials are picked up: the callable form of UserInfo. An error or a
// panic fails that connection attempt (ErrConfig, or the *Error's status).
func UserInfoCallback(handler UserInfoHandler) Option {
	return credentialsCallback(&credentialsState{userInfo: handler}, handler == nil)
}

// TokenCallback authenticates with the token handler gives, called on
// every connect and reconnect: the callable form of Token, otherwise as
// UserInfoCallback.
func TokenCallback(handler TokenHandler) Option {
	return credentialsCallback(&credentialsState{token: handler}, handler == nil)
}

func credentialsCallback(state *credentialsState, missing bool) Option {
	return func(cfg *connectConfig) {
		cfg.add(func(o *C.natsio_options) C.natsio_status {
			if missing {
				return C.NATSIO_ERR_NULL_ARGUMENT
			}
			h, box := newHandle(state)
			var st C.natsio_status
			if state.token != nil {
				st = C.go_options_set_token_callback(o, C.uintptr_t(h))
			} else {
				st = C.go_options_set_user_password_callback(o, C.uintptr_t(h))
			}
			if st != C.NATSIO_OK {
				discardHandle(h, box)
			}
			return st
		})
	}
}

// credentialsState is the user data of a credentials callback; the C
// contract wants the strings it returns valid until the next call or the
// release, so the last ones are kept in C memory here.
type credentialsState struct {
	userInfo UserInfoHandler
	token    TokenHandler
	mu       sync.Mutex
	last     [2]*C.char
}

// keep replaces the kept strings by s (C copies).
func (c *credentialsState) keep(s ...string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i := range c.last {
		C.free(unsafe.Pointer(c.last[i]))
		c.last[i] = nil
		if i < len(s) {
			c.last[i] = C.CString(s[i])
		}
	}
}

func (c *credentialsState) released() { c.keep() }

// statusOf is the status a failed credentials callback reports.
func statusOf(err error) C.natsio_status {
	var e *Error
	if errors.As(err, &e) {
		return C.natsio_status(e.Status)
	}
	return C.NATSIO_ERR_CONFIG
}

//export natsioGoUserPassword
func natsioGoUserPassword(userData unsafe.Pointer, userOut, passwordOut **C.char) (status C.natsio_status) {
	c := valueOf(userData).(*credentialsState)
	defer func() {
		if recover() != nil {
			status = C.NATSIO_ERR_INTERNAL
		}
	}()
	user, password, err := c.userInfo()
	if err != nil {
		return statusOf(err)
	}
	if strings.IndexByte(user, 0) >= 0 || strings.IndexByte(password, 0) >= 0 {
		return C.NATSIO_ERR_INVALID_ARGUMENT
	}
	c.keep(user, password)
	c.mu.Lock()
	defer c.mu.Unlock()
	*userOut, *passwordOut = c.last[0], c.last[1]
	return C.NATSIO_OK
}

//export natsioGoToken
func natsioGoToken(userData unsafe.Pointer) (out *C.char) {
	c := valueOf(userData).(*credentialsState)
	defer func() {
		if recover() != nil {
			out = nil
		}
	}()
	token, err := c.token()
	if err != nil || strings.IndexByte(token, 0) >= 0 {
		return nil
	}
	c.keep(token)
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.last[0]
}

// ---------------------------------------------------------------------------
// TLS
// ---------------------------------------------------------------------------

// TLSFiles names PEM files for Secure. An empty CA means the system's trust
// roots; Cert and Key (both or neither) are the client's, for mutual TLS.
type TLSFiles struct {
	CA   string // file of the CA certificates servers are verified with
	Cert string // file of the client's certificate (chain)
	Key  string // file of the client certificate's private key
}

// Secure requires TLS for every server, verifying certificates (there is
// no way to skip verification). The files are checked at Connect and
// re-read on every connect.
func Secure(files TLSFiles) Option {
	return func(cfg *connectConfig) {
		cfg.add(func(o *C.natsio_options) C.natsio_status {
			var cs [3][]byte
			for i, s := range []string{files.CA, files.Cert, files.Key} {
				if s == "" {
					continue
				}
				b, err := cString(s)
				if err != nil {
					return C.NATSIO_ERR_INVALID_ARGUMENT
				}
				cs[i] = b
			}
			return C.natsio_options_set_tls(o, cPtr(cs[0]), cPtr(cs[1]), cPtr(cs[2]))
		})
	}
}

// TLSPEM holds PEM text for SecurePEM, as TLSFiles names files: an empty CA
// means the system's trust roots; Cert and Key (both or neither) are the
// client's, for mutual TLS.
type TLSPEM struct {
	CA   []byte // the CA certificates servers are verified with
	Cert []byte // the client's certificate (chain)
	Key  []byte // the client certificate's private key
}

// SecurePEM is Secure with certificates and key from memory instead of
// files (they are copied at Connect). It replaces Secure's files, and the
// other way round.
func SecurePEM(pem TLSPEM) Option {
	return func(cfg *connectConfig) {
		cfg.add(func(o *C.natsio_options) C.natsio_status {
			ca, caLen := dataPtr(pem.CA)
			cert, certLen := dataPtr(pem.Cert)
			key, keyLen := dataPtr(pem.Key)
			return C.natsio_options_set_tls_pem(o, ca, caLen, cert, certLen, key, keyLen)
		})
	}
}

// TLSHostname verifies the server certificate against hostname instead of
// the URL's host. Requires Secure or a tls:// URL.
func TLSHostname(hostname string) Option {
	return func(cfg *connectConfig) {
		cfg.add(withString(hostname, func(o *C.natsio_options, s *C.char) C.natsio_status {
			return C.natsio_options_set_tls_hostname(o, s)
		}))
	}
}

// TLSHandshakeFirst starts TLS before the server's INFO, for servers
// configured with handshake_first.
func TLSHandshakeFirst() Option {
	return func(cfg *connectConfig) {
		cfg.add(func(o *C.natsio_options) C.natsio_status { return C.natsio_options_set_tls_handshake_first(o, true) })
	}
}

// WebSocketHeader adds a header to the upgrade request sent to ws:// and
// wss:// servers (a proxy's authorization, a routing key); a name given
// twice is sent twice. Connect fails with ErrConfig for an empty name, a
// name with other than letters, digits and !#$%&'*+-.^_|~, a value with a
// control character, or one of the request's own headers (Host, Upgrade,
// Connection, Sec-WebSocket-*), and with ErrInvalidArgument for a NUL
// byte. No effect on other servers.
func WebSocketHeader(name, value string) Option {
	return func(cfg *connectConfig) {
		cfg.add(func(o *C.natsio_options) C.natsio_status {
			n, errName := cString(name)
			v, errValue := cString(value)
			if errName != nil || errValue != nil {
				return C.NATSIO_ERR_INVALID_ARGUMENT
			}
			return C.natsio_options_add_ws_header(o, cPtr(n), cPtr(v))
		})
	}
}

// WebSocketNoMasking asks ws:// and wss:// servers to accept unmasked
// frames; the client stops masking only if the server agrees. Keep it off
// behind a proxy that inspects frames.
func WebSocketNoMasking() Option {
	return func(cfg *connectConfig) {
		cfg.add(func(o *C.natsio_options) C.natsio_status { return C.natsio_options_set_ws_no_masking(o, true) })
	}
}

// ---------------------------------------------------------------------------
// Lifecycle handlers
// ---------------------------------------------------------------------------

// ConnHandler receives a connection lifecycle event.
type ConnHandler func(nc *Conn)

// ConnErrHandler receives a lifecycle event with its cause (nil if none).
type ConnErrHandler func(nc *Conn, err error)

// The handlers below all run on the connection's event thread, one at a
// time and in the order the events happened (ClosedHandler last). A panic
// is recovered and reported to the ErrorHandler. nc is nil only for a Conn
// already garbage collected.

// ConnectedHandler is called once the first connection is established.
func ConnectedHandler(h ConnHandler) Option {
	return func(cfg *connectConfig) { cfg.events().connected = h }
}

// DisconnectErrHandler is called when the connection is lost, with why.
func DisconnectErrHandler(h ConnErrHandler) Option {
	return func(cfg *connectConfig) { cfg.events().disconnected = h }
}

// ReconnectErrHandler is called for each failed attempt to reconnect
// (nats.go's ReconnectErrHandler), while the client keeps trying: after
// the DisconnectErrHandler, before the ReconnectHandler or the
// ClosedHandler. err is an *Error with the attempt's status, its Detail
// naming the server and why ("reconnect to <url> failed: ...").
func ReconnectErrHandler(h ConnErrHandler) Option {
	return func(cfg *connectConfig) { cfg.events().reconnectFailed = h }
}

// ReconnectHandler is called when connected again, subscriptions restored.
func ReconnectHandler(h ConnHandler) Option {
	return func(cfg *connectConfig) { cfg.events().reconnected = h }
}

// ClosedHandler is called when the connection is closed for good. It is
// not called when Connect itself fails.
func ClosedHandler(h ConnHandler) Option {
	return func(cfg *connectConfig) { cfg.events().closed = h }
}

// DiscoveredServersHandler is called when servers announce new servers
// (see Conn.Servers).
func DiscoveredServersHandler(h ConnHandler) Option {
	return func(cfg *connectConfig) { cfg.events().discovered = h }
}

// LameDuckModeHandler is called when the server enters lame-duck mode; the
// client moves to another server by itself, without losing what it
// received or published on the old connection.
func LameDuckModeHandler(h ConnHandler) Option {
	return func(cfg *connectConfig) { cfg.events().lameDuck = h }
}

// eventHandlers are the lifecycle handlers of one Connect.
type eventHandlers struct {
	connected, reconnected, closed, discovered, lameDuck ConnHandler
	disconnected, reconnectFailed                        ConnErrHandler
}

func (cfg *connectConfig) events() *eventHandlers {
	if cfg.eventHandlers == nil {
		cfg.eventHandlers = &eventHandlers{}
	}
	return cfg.eventHandlers
}

// eventSink is the user data of the event callback.
//
// Handlers get the *Conn, which exists only once natsio_client_connect has
// returned, while CONNECTED may be delivered before that. So events wait
// for `ready`, closed by Connect after it set the Conn. CLOSED never waits:
// a failed connect delivers it (and joins the event thread) before
// returning, and then there is no Conn to report.
type eventSink struct {
	handlers eventHandlers
	errors   *errorSink
	ready    chan struct{}

	mu   sync.Mutex
	conn weak.Pointer[Conn] // weak: handlers must not keep a dropped Conn alive
	set  bool
}

func (s *eventSink) setConn(nc *Conn) {
	s.mu.Lock()
	s.conn = weak.Make(nc)
	s.set = true
	s.mu.Unlock()
	close(s.ready)
}

// current is the Conn to hand to handlers, and whether Connect succeeded.
func (s *eventSink) current() (*Conn, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.conn.Value(), s.set
}

//export natsioGoEvent
func natsioGoEvent(userData unsafe.Pointer, kind C.natsio_event_kind, status C.natsio_status, text *C.char) {
	s := valueOf(userData).(*eventSink)
	if kind != C.NATSIO_EVENT_CLOSED {
		<-s.ready
	}
	nc, ok := s.current()
	if !ok {
		return // Connect failed: nobody to tell
	}
	if nc != nil {
		// The event thread runs user code now (see libThreads); after
		// CLOSED, always the last event, it runs none.
		id := registerLibThread(nc.ptr)
		if kind == C.NATSIO_EVENT_CLOSED {
			defer unregisterLibThread(id)
		}
	}
	var cause error
	if status != C.NATSIO_OK {
		cause = &Error{Status: Status(status), Detail: C.GoString(text)}
	}
	s.dispatch(nc, kind, cause)
}

func (s *eventSink) dispatch(nc *Conn, kind C.natsio_event_kind, cause error) {
	defer func() {
		if v := recover(); v != nil {
			s.errors.report(&AsyncError{Err: fmt.Errorf("%w: lifecycle handler: %v", ErrHandlerPanic, v)})
		}
	}()
	call := func(h ConnHandler) {
		if h != nil {
			h(nc)
		}
	}
	switch kind {
	case C.NATSIO_EVENT_CONNECTED:
		call(s.handlers.connected)
	case C.NATSIO_EVENT_DISCONNECTED:
		if s.handlers.disconnected != nil {
			s.handlers.disconnected(nc, cause)
		}
	case C.NATSIO_EVENT_RECONNECT_FAILED:
		if s.handlers.reconnectFailed != nil {
			s.handlers.reconnectFailed(nc, cause)
		}
	case C.NATSIO_EVENT_RECONNECTED:
		call(s.handlers.reconnected)
	case C.NATSIO_EVENT_LAME_DUCK:
		call(s.handlers.lameDuck)
	case C.NATSIO_EVENT_SERVERS_DISCOVERED:
		call(s.handlers.discovered)
	case C.NATSIO_EVENT_CLOSED:
		call(s.handlers.closed)
	}
}

// registerEvents installs the event callback on copts; the returned sink
// must get setConn once the client exists.
func registerEvents(copts *C.natsio_options, handlers *eventHandlers, errs *errorSink) (*eventSink, error) {
	sink := &eventSink{handlers: *handlers, errors: errs, ready: make(chan struct{})}
	h, box := newHandle(sink)
	if err := statusError(C.go_options_set_event_callback(copts, C.uintptr_t(h))); err != nil {
		discardHandle(h, box)
		return nil, err
	}
	return sink, nil
}

// ---------------------------------------------------------------------------
// Conn methods
// ---------------------------------------------------------------------------

// ForceReconnect drops the current connection and reconnects (to another
// server of the pool when there is one); subscriptions are restored. It
// returns at once. Errors: ErrConnectionClosed, ErrIllegalState (not
// connected right now).
func (nc *Conn) ForceReconnect() error {
	lockThread()
	err := statusError(C.natsio_client_force_reconnect(nc.ptr))
	unlockThread()
	runtime.KeepAlive(nc)
	return err
}

// RTT measures a round trip to the server (PING/PONG), waiting up to the
// flush timeout. It is timed around the library's flush token
// (natsio_client_rtt has no token form, and would hold this thread).
func (nc *Conn) RTT() (time.Duration, error) {
	start := time.Now()
	if err := nc.Flush(context.Background()); err != nil {
		return 0, err
	}
	return time.Since(start), nil
}

// Servers lists the server pool: the configured servers and those
// discovered since.
func (nc *Conn) Servers() []string {
	var list *C.natsio_string_list
	if C.natsio_client_servers(nc.ptr, &list) != C.NATSIO_OK {
		return nil
	}
	runtime.KeepAlive(nc)
	defer C.natsio_string_list_free(list)
	return stringList(list)
}

// Server is one server of the pool (ServerPool), as it stood when read.
type Server struct {
	// URL is the server's URL as the pool holds it: as configured (Connect
	// or SetServerPool), or for a discovered server "nats://host:port"
	// (tls://, ws:// or wss:// when the connection is).
	URL string
	// Reconnects is how many attempts to connect to the server failed
	// since it was last connected to (nats.go's Server.Reconnects).
	Reconnects int
	// DidConnect is whether the client has been connected to the server.
	DidConnect bool
	// Discovered is whether the server was learned from the cluster (a
	// server's INFO) rather than configured.
	Discovered bool
}

// ServerPool lists the server pool in the order the servers are tried
// (configured and discovered), each with its reconnect bookkeeping: a
// snapshot (nats.go's ServerPool).
func (nc *Conn) ServerPool() []Server {
	var list *C.natsio_server_list
	if C.natsio_client_server_pool(nc.ptr, &list) != C.NATSIO_OK {
		return nil
	}
	runtime.KeepAlive(nc)
	defer C.natsio_server_list_free(list)
	n := int(C.natsio_server_list_count(list))
	servers := make([]Server, 0, n)
	for i := 0; i < n; i++ {
		s := C.natsio_server_list_get(list, C.size_t(i))
		servers = append(servers, Server{
			URL:        C.GoString(C.natsio_server_url(s)),
			Reconnects: int(C.natsio_server_reconnects(s)),
			DidConnect: bool(C.natsio_server_did_connect(s)),
			Discovered: bool(C.natsio_server_is_discovered(s)),
		})
	}
	return servers
}

// SetServerPool replaces the server pool with urls, in that order (not
// shuffled; nats.go's SetServerPool). The connection stays up, even when
// its server is not among them: the next reconnect picks from the new pool
// (ForceReconnect moves now). A server already in the pool (same host and
// port) keeps its reconnect count; servers the cluster tells of are added
// again unless IgnoreDiscoveredServers. Errors: ErrConfig (no URL, or an
// invalid one; the pool is unchanged), ErrInvalidArgument (a NUL byte),
// ErrConnectionClosed.
func (nc *Conn) SetServerPool(urls []string) error {
	cURLs, err := newCStrings(urls)
	if err != nil {
		return err
	}
	defer cURLs.free()
	lockThread()
	err = statusError(C.natsio_client_set_server_pool(nc.ptr, cURLs.ptr(), cURLs.count()))
	unlockThread()
	runtime.KeepAlive(nc)
	return err
}
