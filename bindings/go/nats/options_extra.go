package nats

// nats.go's constants, and the connect options beyond options.go's: each
// maps onto the binding's option, or says why it has nothing to do here.

import (
	"fmt"
	"net/http"
	"strings"
	"time"

	natsio "github.com/libnatsio/natsio/bindings/go"
)

const (
	// Version is the nats.go release whose API this package offers (the
	// library's own version is natsio.Version()).
	Version = "1.55.0"
	// LangString is the client language this package announces in CONNECT
	// (the server's monitoring shows it): the Go binding's, not nats.go's
	// "go".
	LangString = "natsio-go"
	// DefaultReconnectJitter and DefaultReconnectJitterTLS bound the random
	// wait added to ReconnectWait, without and with TLS.
	DefaultReconnectJitter    = 100 * time.Millisecond
	DefaultReconnectJitterTLS = time.Second
	// DefaultWriteBufSize is the write buffer bound a connection has
	// unless WriteBufferSize sets one: libnatsio's Go default, 256 KiB
	// (nats.go's is 32 KiB).
	DefaultWriteBufSize = 256 * 1024
	// DefaultSubPendingMsgsLimit and DefaultSubPendingBytesLimit are the
	// pending limits a subscription starts with.
	DefaultSubPendingMsgsLimit  = 500_000
	DefaultSubPendingBytesLimit = 64 * 1024 * 1024
	// RequestChanLen is the channel capacity of nats.go's old-style
	// requests; libnatsio has no such channel (see UseOldRequestStyle).
	RequestChanLen = 8
	// InboxPrefix starts the subjects NewInbox makes.
	InboxPrefix = "_INBOX."
)

// DefaultOptions are the default settings, as GetDefaultOptions returns
// them. Deprecated (as in nats.go): use GetDefaultOptions, as a shared
// variable is not safe to change.
var DefaultOptions = GetDefaultOptions()

// PermissionErrOnSubscribe makes a synchronous subscription the server
// refuses for lack of permission end: NextMsg returns
// ErrPermissionViolation (the ErrorHandler is told too).
func PermissionErrOnSubscribe(enabled bool) Option {
	return func(o *Options) error { o.PermissionErrOnSubscribe = enabled; return nil }
}

// IgnoreDiscoveredServers keeps the server pool to the servers given:
// those the servers announce are not added.
func IgnoreDiscoveredServers() Option {
	return func(o *Options) error { o.IgnoreDiscoveredServers = true; return nil }
}

// SyncQueueLen sets how many messages a synchronous subscription keeps
// waiting for NextMsg (Options.SubChanLen, default DefaultMaxChanLen):
// beyond it, messages are dropped and the subscription is a slow consumer.
func SyncQueueLen(max int) Option {
	return func(o *Options) error { o.SubChanLen = max; return nil }
}

// WriteBufferSize bounds the buffer of outgoing data, in bytes: a publish
// that finds it full waits for the connection to write (up to the flush
// timeout), as nats.go's waits on its socket once its buffer is full. 0
// or less keeps DefaultWriteBufSize.
func WriteBufferSize(size int) Option {
	return func(o *Options) error { o.WriteBufferSize = size; return nil }
}

// Compression asks WebSocket servers for compressed frames. libnatsio's
// WebSocket transport does not compress: with a ws:// or wss:// server,
// Connect fails with ErrInvalidArg rather than silently not compressing.
// Without one it has no effect, as in nats.go (TCP is never compressed).
func Compression(enabled bool) Option {
	return func(o *Options) error { o.Compression = enabled; return nil }
}

// UseOldRequestStyle has each nats.go request make its own inbox
// subscription. libnatsio always answers requests through one shared
// inbox subscription, per connection; the replies and errors a program
// sees are the same either way (only the reply subjects on the wire
// differ), so this option has no effect here.
func UseOldRequestStyle() Option {
	return func(o *Options) error { o.UseOldRequestStyle = true; return nil }
}

// SkipHostLookup has nats.go hand host names to its dialer instead of
// resolving them first. libnatsio's connector resolves and dials in one
// step either way, so this option has no effect here.
func SkipHostLookup() Option {
	return func(o *Options) error { o.SkipHostLookup = true; return nil }
}

// SkipSubjectValidation has nats.go not check published subjects. The
// library's check stays on (it is part of its publish path and cheap): a
// valid subject is published the same, an invalid one still fails with
// ErrBadSubject instead of reaching the server.
func SkipSubjectValidation() Option {
	return func(o *Options) error { o.SkipSubjectValidation = true; return nil }
}

// ReconnectOnFlusherError has nats.go reconnect when writing to the server
// fails. libnatsio always does: a failed write ends the connection at once
// (DisconnectErrHandler gets why) and it reconnects as for any lost
// connection, so this option has no effect here.
func ReconnectOnFlusherError() Option {
	return func(o *Options) error { o.ReconnectOnFlusherError = true; return nil }
}

// WebSocketConnectionHeaders adds headers to the upgrade request sent to
// ws:// and wss:// servers (Options.WebSocketConnectionHeaders). Connect
// fails with a configuration error for a name or value HTTP does not allow
// and for the request's own headers (Host, Upgrade, Connection,
// Sec-WebSocket-*). nats.go's per-connect WebSocketConnectionHeadersHandler
// has no counterpart: the library takes the headers once, at Connect.
func WebSocketConnectionHeaders(headers http.Header) Option {
	return func(o *Options) error { o.WebSocketConnectionHeaders = headers; return nil }
}

// extraBindingOptions are the binding's options for the fields above and
// Verbose and Pedantic; an error for what cannot be done.
func (o *Options) extraBindingOptions() ([]natsio.Option, error) {
	var opts []natsio.Option
	if o.Compression && o.hasWebSocketServer() {
		return nil, fmt.Errorf("%w: WebSocket compression is not supported by libnatsio", ErrInvalidArg)
	}
	if o.Verbose {
		opts = append(opts, natsio.Verbose())
	}
	if o.Pedantic {
		opts = append(opts, natsio.Pedantic())
	}
	if o.PermissionErrOnSubscribe {
		opts = append(opts, natsio.PermissionErrOnSubscribe(true))
	}
	if o.IgnoreDiscoveredServers {
		opts = append(opts, natsio.IgnoreDiscoveredServers())
	}
	if o.WriteBufferSize > 0 {
		opts = append(opts, natsio.MaxPendingSize(int64(o.WriteBufferSize)))
	}
	for name, values := range o.WebSocketConnectionHeaders {
		for _, v := range values {
			opts = append(opts, natsio.WebSocketHeader(name, v))
		}
	}
	return opts, nil
}

// hasWebSocketServer reports whether a server given is a WebSocket one.
func (o *Options) hasWebSocketServer() bool {
	for _, u := range append(splitURLs(o.Url), o.Servers...) {
		u = strings.ToLower(strings.TrimSpace(u))
		if strings.HasPrefix(u, "ws://") || strings.HasPrefix(u, "wss://") {
			return true
		}
	}
	return false
}
