package nats

import (
	"context"
	"errors"
	"strings"

	natsio "github.com/libnatsio/natsio/bindings/go"
)

// The errors nats.go returns, with its texts: programs compare them with
// errors.Is and print them.
var (
	ErrConnectionClosed         = errors.New("nats: connection closed")
	ErrConnectionDraining       = errors.New("nats: connection draining")
	ErrDrainTimeout             = errors.New("nats: draining connection timed out")
	ErrConnectionReconnecting   = errors.New("nats: connection reconnecting")
	ErrSecureConnRequired       = errors.New("nats: secure connection required")
	ErrSecureConnWanted         = errors.New("nats: secure connection not available")
	ErrBadSubscription          = errors.New("nats: invalid subscription")
	ErrTypeSubscription         = errors.New("nats: invalid subscription type")
	ErrBadSubject               = errors.New("nats: invalid subject")
	ErrBadQueueName             = errors.New("nats: invalid queue name")
	ErrSlowConsumer             = errors.New("nats: slow consumer, messages dropped")
	ErrTimeout                  = errors.New("nats: timeout")
	ErrBadTimeout               = errors.New("nats: timeout invalid")
	ErrAuthorization            = errors.New("nats: authorization violation")
	ErrAuthExpired              = errors.New("nats: authentication expired")
	ErrAuthRevoked              = errors.New("nats: authentication revoked")
	ErrPermissionViolation      = errors.New("nats: permissions violation")
	ErrNoServers                = errors.New("nats: no servers available for connection")
	ErrMaxPayload               = errors.New("nats: maximum payload exceeded")
	ErrMaxMessages              = errors.New("nats: maximum messages delivered")
	ErrSyncSubRequired          = errors.New("nats: illegal call on an async subscription")
	ErrReconnectBufExceeded     = errors.New("nats: outbound buffer limit exceeded")
	ErrInvalidConnection        = errors.New("nats: invalid connection")
	ErrInvalidMsg               = errors.New("nats: invalid message or message nil")
	ErrInvalidArg               = errors.New("nats: invalid argument")
	ErrInvalidContext           = errors.New("nats: invalid context")
	ErrStaleConnection          = errors.New("nats: stale connection")
	ErrMsgNotBound              = errors.New("nats: message is not bound to subscription/connection")
	ErrMsgNoReply               = errors.New("nats: message does not have a reply")
	ErrDisconnected             = errors.New("nats: server is disconnected")
	ErrBadHeaderMsg             = errors.New("nats: message could not decode headers")
	ErrNoResponders             = errors.New("nats: no responders available for request")
	ErrMaxSubscriptionsExceeded = errors.New("nats: server maximum subscriptions exceeded")
	ErrTLS                      = errors.New("nats: tls error")
	ErrTokenAlreadySet          = errors.New("nats: token and token handler both set")
	ErrMultipleTLSConfigs       = errors.New("nats: multiple tls.Configs not allowed")

	// ErrChanArg is EncodedConn's error for a channel argument that is not
	// a chan.
	ErrChanArg = errors.New("nats: argument needs to be a channel type")

	// ErrMixingWebsocketSchemes is SetServerPool's error for a ws:// or
	// wss:// server on a connection made to other servers, or the other
	// way round. (Connect takes such a list: each server is reached with
	// its own scheme.)
	ErrMixingWebsocketSchemes = errors.New("nats: mixing of websocket and non websocket URLs is not allowed")

	// The server's refusals recognised by their text (serverTextErrors).
	ErrAccountAuthExpired            = errors.New("nats: account authentication expired")
	ErrMaxConnectionsExceeded        = errors.New("nats: server maximum connections exceeded")
	ErrMaxAccountConnectionsExceeded = errors.New("nats: maximum account active connections exceeded")
)

// serverTextErrors are the server's -ERR texts nats.go turns into its
// sentinels. Those marked always it returns from Connect too; the others
// only when they come later, to the error handler (Connect returns the
// server's text then: see serverError).
var serverTextErrors = []struct {
	prefix string
	err    error
	always bool
}{
	{AUTHENTICATION_REVOKED_ERR, ErrAuthRevoked, true},
	{ACCOUNT_AUTHENTICATION_EXPIRED_ERR, ErrAccountAuthExpired, true},
	{MAX_CONNECTIONS_ERR, ErrMaxConnectionsExceeded, false},
	{MAX_ACCOUNT_CONNECTIONS_ERR, ErrMaxAccountConnectionsExceeded, false},
}

// errorPairs maps the binding's sentinels to nats.go's, most specific
// first: the first the binding's error matches is the one returned.
var errorPairs = []struct{ from, to error }{
	{natsio.ErrNoResponders, ErrNoResponders},
	{natsio.ErrDrainTimeout, ErrDrainTimeout},
	{natsio.ErrTimeout, ErrTimeout},
	{natsio.ErrNoServers, ErrNoServers},
	{natsio.ErrConnectionClosed, ErrConnectionClosed},
	{natsio.ErrBadSubject, ErrBadSubject},
	{natsio.ErrBadQueueName, ErrBadQueueName},
	{natsio.ErrMaxPayload, ErrMaxPayload},
	{natsio.ErrSlowConsumer, ErrSlowConsumer},
	{natsio.ErrAuthExpired, ErrAuthExpired},
	{natsio.ErrAuthorization, ErrAuthorization},
	{natsio.ErrPermissions, ErrPermissionViolation},
	{natsio.ErrStaleConnection, ErrStaleConnection},
	{natsio.ErrMaxSubscriptions, ErrMaxSubscriptionsExceeded},
	{natsio.ErrReconnectBufExceeded, ErrReconnectBufExceeded},
	{natsio.ErrNoReplySubject, ErrMsgNoReply},
	{natsio.ErrSubscriptionClosed, ErrBadSubscription},
	{natsio.ErrBadHeaders, ErrBadHeaderMsg},
	{natsio.ErrInvalidArgument, ErrInvalidArg},
}

// Translate turns an error of the binding into the error nats.go returns
// in its place (its sentinel, with its text), so a program comparing or
// printing errors sees what it saw with nats.go. A context's own error is
// returned as it is, as nats.go's *WithContext calls do; an error with no
// nats.go counterpart keeps its cause (errors.Is still matches the
// binding's sentinels) and reads "nats: ..." instead of "natsio: ...".
// The jetstream package uses it for the errors it does not map itself.
func Translate(err error) error {
	if err == nil {
		return nil
	}
	if translated := translateServerText(err); translated != nil {
		return translated
	}
	for _, p := range errorPairs {
		if errors.Is(err, p.from) {
			return p.to
		}
	}
	if errors.Is(err, context.Canceled) {
		return context.Canceled
	}
	return &renamedError{err}
}

// contextError is what a *WithContext call returns: the context's error
// once ctx has ended (nats.go returns ctx.Err() then), else Translate(err).
func contextError(ctx context.Context, err error) error {
	if err == nil {
		return nil
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	// The binding bounds the call by the context's deadline and may time it
	// out a moment before the context's own timer fires: that timeout is
	// the deadline passing, which nats.go reports as the context's error.
	if _, bounded := ctx.Deadline(); bounded && errors.Is(err, natsio.ErrTimeout) {
		return context.DeadlineExceeded
	}
	return Translate(err)
}

type renamedError struct{ err error }

func (e *renamedError) Error() string {
	return "nats: " + strings.TrimPrefix(e.err.Error(), "natsio: ")
}
func (e *renamedError) Unwrap() error { return e.err }

// translateServerText is nats.go's error for a server -ERR the library
// reports as a plain server error (or whose text nats.go tells apart from
// the library's kind), nil for any other error.
func translateServerText(err error) error {
	var e *natsio.Error
	if !errors.As(err, &e) || !errors.Is(err, natsio.ErrServer) {
		return nil
	}
	text := strings.TrimPrefix(e.Detail, e.Status.String()+": ")
	lower := strings.ToLower(text)
	var async *natsio.AsyncError
	reported := errors.As(err, &async)
	for _, t := range serverTextErrors {
		if strings.HasPrefix(lower, t.prefix) && (t.always || reported) {
			return t.err
		}
	}
	if e.Status == serverErrorCode && !reported && text != "" {
		return &serverError{text: text, cause: err}
	}
	return nil
}

// serverErrorCode is the library's code of a server error of no more
// specific kind.
var serverErrorCode = natsio.ErrServer.(interface{ Code() natsio.Status }).Code()

// serverError is a server -ERR that Connect returns, as nats.go's: "nats: "
// and the server's text, matching (errors.Is) the sentinel whose text is
// the same in lower case (ErrMaxAccountConnectionsExceeded, say), and the
// library's error.
type serverError struct {
	text  string
	cause error
}

func (e *serverError) Error() string { return "nats: " + e.text }
func (e *serverError) Unwrap() error { return e.cause }
func (e *serverError) Is(target error) bool {
	return target != nil && strings.ToLower(e.Error()) == target.Error()
}
