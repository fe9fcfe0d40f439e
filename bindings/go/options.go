package natsio

/*
#include "natsio.h"
*/
import "C"

import "time"

// Option configures a connection; pass any number to Connect. Invalid
// values are reported by Connect as ErrConfig with the option named.
type Option func(*connectConfig)

type connectConfig struct {
	// settings are applied in order to the C options object.
	settings      []func(*C.natsio_options) C.natsio_status
	errorHandler  func(error)
	eventHandlers *eventHandlers // nil: no lifecycle handler given
}

func (cfg *connectConfig) add(set func(*C.natsio_options) C.natsio_status) {
	cfg.settings = append(cfg.settings, set)
}

// withString hands a C string to set, reporting a NUL in the Go string as
// an invalid argument.
func withString(s string, set func(*C.natsio_options, *C.char) C.natsio_status) func(*C.natsio_options) C.natsio_status {
	return func(o *C.natsio_options) C.natsio_status {
		b, err := cString(s)
		if err != nil {
			return C.NATSIO_ERR_INVALID_ARGUMENT
		}
		return set(o, cPtr(b))
	}
}

// Name sets the connection name shown in the server's monitoring.
func Name(name string) Option {
	return func(cfg *connectConfig) {
		cfg.add(withString(name, func(o *C.natsio_options, s *C.char) C.natsio_status {
			return C.natsio_options_set_name(o, s)
		}))
	}
}

// ConnectTimeout bounds each connection attempt (default 5s).
func ConnectTimeout(d time.Duration) Option {
	return func(cfg *connectConfig) {
		cfg.add(func(o *C.natsio_options) C.natsio_status {
			return C.natsio_options_set_connect_timeout_ms(o, millis(d))
		})
	}
}

// NoEcho stops the server from sending this connection its own publishes.
func NoEcho() Option {
	return func(cfg *connectConfig) {
		cfg.add(func(o *C.natsio_options) C.natsio_status { return C.natsio_options_set_echo(o, false) })
	}
}

// Verbose has the server acknowledge every protocol operation with +OK
// (nats.go's Options.Verbose); the connection reads past the acks.
func Verbose() Option {
	return func(cfg *connectConfig) {
		cfg.add(func(o *C.natsio_options) C.natsio_status { return C.natsio_options_set_verbose(o, true) })
	}
}

// Pedantic has the server check this connection's protocol strictly
// (nats.go's Options.Pedantic).
func Pedantic() Option {
	return func(cfg *connectConfig) {
		cfg.add(func(o *C.natsio_options) C.natsio_status { return C.natsio_options_set_pedantic(o, true) })
	}
}

// PermissionErrOnSubscribe makes a subscription the server refuses for
// lack of permission end with ErrPermissions (NextMsg returns it), besides
// the error handler's report (nats.go's PermissionErrOnSubscribe).
func PermissionErrOnSubscribe(enabled bool) Option {
	return func(cfg *connectConfig) {
		cfg.add(func(o *C.natsio_options) C.natsio_status {
			return C.natsio_options_set_permission_err_on_subscribe(o, C.bool(enabled))
		})
	}
}

// InboxPrefix sets the prefix of reply inboxes (default "_INBOX").
func InboxPrefix(prefix string) Option {
	return func(cfg *connectConfig) {
		cfg.add(withString(prefix, func(o *C.natsio_options, s *C.char) C.natsio_status {
			return C.natsio_options_set_inbox_prefix(o, s)
		}))
	}
}

// PendingLimits sets the default pending limits of new subscriptions
// (default 65536 messages, 64 MiB); 0 or less disables a limit.
func PendingLimits(msgs, bytes int64) Option {
	return func(cfg *connectConfig) {
		cfg.add(func(o *C.natsio_options) C.natsio_status {
			return C.natsio_options_set_pending_limits(o, C.int64_t(msgs), C.int64_t(bytes))
		})
	}
}

// DrainTimeout bounds Conn.Drain and Subscription.Drain when their
// context has no deadline (default 30s).
func DrainTimeout(d time.Duration) Option {
	return func(cfg *connectConfig) {
		cfg.add(func(o *C.natsio_options) C.natsio_status {
			return C.natsio_options_set_drain_timeout_ms(o, millis(d))
		})
	}
}

// FlushTimeout bounds Flush without a context deadline (it then fails with
// ErrTimeout), and how long a publish waits for room in a full write
// buffer (default 10s).
func FlushTimeout(d time.Duration) Option {
	return func(cfg *connectConfig) {
		cfg.add(func(o *C.natsio_options) C.natsio_status {
			return C.natsio_options_set_flush_timeout_ms(o, millis(d))
		})
	}
}

// RequestTimeout bounds requests whose context has no deadline (default 5s).
func RequestTimeout(d time.Duration) Option {
	return func(cfg *connectConfig) {
		cfg.add(func(o *C.natsio_options) C.natsio_status {
			return C.natsio_options_set_request_timeout_ms(o, millis(d))
		})
	}
}

// PingInterval sets how often the client pings the server and how many
// pings may go unanswered before the connection is stale (default 2m, 2).
func PingInterval(d time.Duration, maxOutstanding int) Option {
	return func(cfg *connectConfig) {
		cfg.add(func(o *C.natsio_options) C.natsio_status {
			return C.natsio_options_set_ping(o, millis(d), C.int32_t(maxOutstanding))
		})
	}
}

// MaxPendingSize bounds the write buffer in bytes (default 256 KiB): a
// publish that finds it full waits for the connection to write, up to
// FlushTimeout, as nats.go's Publish waits for its socket.
func MaxPendingSize(bytes int64) Option {
	return func(cfg *connectConfig) {
		cfg.add(func(o *C.natsio_options) C.natsio_status {
			return C.natsio_options_set_max_pending_size(o, C.int64_t(bytes))
		})
	}
}

// defaultMaxPendingSize is the binding's write buffer bound, below the
// library's 2 MiB: the writer swaps two buffers, each growing to the bound
// under a fast publisher, and 2 x 2 MiB was most of what a Go publisher
// held over nats.go's (pub 16 B peaked at 13.7 MB, 10.3 MB with 256 KiB,
// nats.go 8.8 MB; rate within noise; issue 45).
const defaultMaxPendingSize = 256 * 1024

// MaxControlLine sets the longest protocol control line (a MSG, HMSG or
// -ERR line, without its payload) accepted from the server, in bytes
// (default 4096, at least 64: less is ErrConfig at Connect). The server's
// INFO is not bound by it (large clusters list many URLs). A longer line
// loses the connection: DisconnectErrHandler gets ErrMaxControlLine, and
// the client reconnects as for any lost connection.
func MaxControlLine(bytes int) Option {
	return func(cfg *connectConfig) {
		cfg.add(func(o *C.natsio_options) C.natsio_status {
			return C.natsio_options_set_max_control_line(o, C.int64_t(bytes))
		})
	}
}

// UserInfo authenticates with a user and password.
func UserInfo(user, password string) Option {
	return func(cfg *connectConfig) {
		cfg.add(func(o *C.natsio_options) C.natsio_status {
			u, err1 := cString(user)
			p, err2 := cString(password)
			if err1 != nil || err2 != nil {
				return C.NATSIO_ERR_INVALID_ARGUMENT
			}
			return C.natsio_options_set_user_password(o, cPtr(u), cPtr(p))
		})
	}
}

// Token authenticates with a token.
func Token(token string) Option {
	return func(cfg *connectConfig) {
		cfg.add(withString(token, func(o *C.natsio_options, s *C.char) C.natsio_status {
			return C.natsio_options_set_token(o, s)
		}))
	}
}

// ErrorHandler receives asynchronous errors: slow consumers, server errors
// that keep the connection, a lost connection, a drain timeout, and panics
// of message and lifecycle handlers. The error is an *AsyncError; match its cause with
// errors.Is (ErrSlowConsumer, ErrHandlerPanic, ...). It runs on a library
// thread, one call at a time.
func ErrorHandler(handler func(err error)) Option {
	return func(cfg *connectConfig) { cfg.errorHandler = handler }
}

// PendingPolicy is what a subscription does when its pending limits are
// exceeded.
type PendingPolicy int32

const (
	// PolicyDropNew discards the arriving message (the default).
	PolicyDropNew PendingPolicy = C.NATSIO_POLICY_DROP_NEW
	// PolicyDropOld evicts the oldest queued messages to make room.
	PolicyDropOld PendingPolicy = C.NATSIO_POLICY_DROP_OLD
	// PolicyBlock pauses reading from the socket (the whole connection)
	// until the consumer catches up; nothing is lost.
	PolicyBlock PendingPolicy = C.NATSIO_POLICY_BLOCK
	// PolicyError fails the subscription with ErrSlowConsumer.
	PolicyError PendingPolicy = C.NATSIO_POLICY_ERROR
)

// SubOption configures one subscription.
type SubOption func(*C.natsio_sub_options)

// SubPendingLimits sets this subscription's pending limits (messages and
// bytes queued, not yet delivered) instead of the connection's
// (PendingLimits). A limit of 0 or less disables it: no limit, as in the
// reference client. Without this option the subscription has the
// connection's limits.
func SubPendingLimits(msgs, bytes int64) SubOption {
	return func(o *C.natsio_sub_options) {
		o.pending_msgs_limit = C.int64_t(msgs)
		o.pending_bytes_limit = C.int64_t(bytes)
	}
}

// SubPolicy sets what happens when the pending limits are exceeded.
func SubPolicy(p PendingPolicy) SubOption {
	return func(o *C.natsio_sub_options) { o.policy = C.int32_t(p) }
}

// RequestManyOption configures RequestMany. The overall deadline is the
// context's (or the connection's request timeout).
type RequestManyOption func(*C.natsio_request_many_options)

// MaxReplies stops after n replies.
func MaxReplies(n int) RequestManyOption {
	return func(o *C.natsio_request_many_options) { o.max_msgs = C.int64_t(n) }
}

// Stall stops when no reply arrives for d after the first one.
func Stall(d time.Duration) RequestManyOption {
	return func(o *C.natsio_request_many_options) { o.stall_ms = millis(d) }
}
