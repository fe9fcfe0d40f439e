package natsio

/*
#include "natsio.h"
*/
import "C"

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Status is a libnatsio status code (the natsio_status values of natsio.h).
type Status int32

// String is the library's short description of the code.
func (s Status) String() string { return statusText(int32(s)) }

// Error is every failure reported by libnatsio: the status code, the
// detail text the library gave for this failure (natsio_last_error) and
// its error data (natsio_last_error_code, _err_code, _revision). errors.Is
// matches it against the sentinel of its code and those of the code's
// ancestors in the error tree (ErrNoMessages is also ErrTimeout and
// ErrJetStream, ...).
type Error struct {
	// Status is the failure's code; errors.Is matches the Error with the
	// code's sentinel and its ancestors.
	Status Status
	// Detail is what the library said about this particular failure (e.g.
	// the field or name it refused); it may be empty.
	Detail string
	// APICode is, for a JetStream API rejection, the API error's code
	// (e.g. 404 for a missing stream, 400 for a name in use); 0 otherwise.
	APICode int
	// ErrCode is, for a JetStream API rejection, the API error's err_code
	// (e.g. 10059 for stream not found, 10058 for a name in use); 0
	// otherwise.
	ErrCode int
	// Revision is, for ErrKeyDeleted, the revision of the delete or purge
	// marker and, for ErrKeyExists, the revision of the live value; 0
	// otherwise.
	Revision uint64
	// cause is an extra error it also matches, e.g. context.DeadlineExceeded
	// for a timeout that came from a context's deadline.
	cause error
}

// Error is "natsio: <the code's description>: <Detail>", without the
// detail when it is empty. When the detail already starts with the
// description (e.g. "wrong last sequence: 2 (code 400, err_code 10071)")
// it is "natsio: <Detail>", so the description is not said twice.
func (e *Error) Error() string {
	status := e.Status.String()
	switch {
	case e.Detail == "":
		return "natsio: " + status
	case status != "" && strings.HasPrefix(e.Detail, status):
		return "natsio: " + e.Detail
	}
	return "natsio: " + status + ": " + e.Detail
}

// Unwrap yields the sentinel of the code (and the context error, if any).
func (e *Error) Unwrap() []error {
	errs := make([]error, 0, 2)
	if s := sentinelFor(int32(e.Status)); s != nil {
		errs = append(errs, s)
	}
	if e.cause != nil {
		errs = append(errs, e.cause)
	}
	return errs
}

// sentinel is the type of the Err* values: one per status code.
type sentinel struct {
	code    int32
	name    string
	parents []error
}

func (s *sentinel) Error() string { return "natsio: " + s.name }

// Unwrap yields the sentinels of the code's parents in the error tree
// (ErrKeyDeleted's is ErrKeyNotFound, ErrNoMessages's are ErrJetStream and
// ErrTimeout), so errors.Is matches every ancestor.
func (s *sentinel) Unwrap() []error { return s.parents }

// Code is the status code the sentinel stands for.
func (s *sentinel) Code() Status { return Status(s.code) }

func newSentinel(code int32, name string) error {
	s := &sentinel{code: code, name: name}
	sentinels[code] = s
	return s
}

var sentinels = map[int32]*sentinel{}

// The error tree is the core's (natsio_status_parent): each sentinel's
// parents are read once, when the package is initialised.
func init() {
	for code, s := range sentinels {
		for i := 0; i < 2; i++ {
			p := int32(C.natsio_status_parent(C.int32_t(code), C.size_t(i)))
			if p == 0 {
				break
			}
			if ps, ok := sentinels[p]; ok {
				s.parents = append(s.parents, ps)
			}
		}
	}
}

func sentinelFor(code int32) error {
	if s, ok := sentinels[code]; ok {
		return s
	}
	return nil
}

const (
	statusDone            Status = 1
	statusInvalidArgument Status = 102
	statusTimeout         Status = 200
	statusCancelled       Status = 205
)

// ErrDone is matched by what a Next returns once its iteration has ended
// without error (NATSIO_DONE): a subscription unsubscribed, drained or past
// its AutoUnsubscribe count, a consumption or watch stopped. It is not a
// failure; the range iterators (Msgs) end quietly on it. An iteration that
// ended with an error returns that error instead, every time: for example
// ErrConnectionClosed once the connection is closed, ErrSlowConsumer for
// PolicyError.
var ErrDone = newSentinel(int32(statusDone), "iteration ended")

func errDone() error { return &Error{Status: statusDone} }

// The sentinels of the library's error codes, one per code of natsio.h in
// the header's order. Errors are *Error values that match the sentinel of
// their Status: test them with errors.Is (errors.Is(err, natsio.ErrTimeout)),
// not with ==.
//
// The sentinels form the reference client's error tree (the core's table,
// natsio_status_parent): errors.Is also matches every ancestor of the
// code. ErrNullArgument and ErrInvalidUTF8 are ErrInvalidArgument;
// ErrNoServers is ErrConnectionClosed; ErrDrainTimeout is ErrTimeout;
// ErrMaxControlLine is ErrParser, which is ErrProtocol; ErrMaxPayload and
// ErrWebsocket are ErrProtocol; ErrStaleConnection, ErrAuthorization, ErrAuthExpired,
// ErrPermissions and ErrMaxSubscriptions are ErrServer; every 5xx, 6xx and
// 7xx error except the name checks is ErrJetStream, and the API rejections
// (ErrJetStreamNotEnabled, ErrStreamNotFound, ErrStreamNameInUse,
// ErrConsumerNotFound, ErrMsgNotFound, ErrWrongLastSequence) are also
// ErrJetStreamAPI; ErrAsyncPublishTimeout and ErrNoMessages are also
// ErrTimeout; ErrKeyDeleted is ErrKeyNotFound; ErrObjectDeleted is
// ErrObjectNotFound; ErrInvalidBucketName, ErrInvalidKey and
// ErrInvalidObjectName are ErrConfig.
var (
	// 1xx: arguments and usage.
	ErrNullArgument    = newSentinel(100, "null argument")
	ErrInvalidUTF8     = newSentinel(101, "invalid UTF-8")
	ErrInvalidArgument = newSentinel(102, "invalid argument")
	ErrBadSubject      = newSentinel(103, "bad subject")
	ErrBadQueueName    = newSentinel(104, "bad queue name")
	ErrBadHeaders      = newSentinel(105, "bad headers")
	ErrConfig          = newSentinel(106, "invalid configuration")
	ErrIllegalState    = newSentinel(107, "illegal state")
	ErrNotFound        = newSentinel(108, "not found")
	ErrInternal        = newSentinel(109, "internal error")

	// 2xx: connection.
	ErrTimeout              = newSentinel(200, "timeout")
	ErrConnectionClosed     = newSentinel(201, "connection closed")
	ErrNoServers            = newSentinel(202, "no servers available")
	ErrIO                   = newSentinel(203, "i/o error")
	ErrDrainTimeout         = newSentinel(204, "drain timeout")
	ErrCancelled            = newSentinel(205, "cancelled")
	ErrReconnectBufExceeded = newSentinel(206, "reconnect buffer exceeded")

	// 3xx: protocol and server.
	ErrProtocol         = newSentinel(300, "protocol error")
	ErrParser           = newSentinel(301, "parser error")
	ErrMaxControlLine   = newSentinel(302, "max control line exceeded")
	ErrMaxPayload       = newSentinel(303, "max payload exceeded")
	ErrServer           = newSentinel(304, "server error")
	ErrStaleConnection  = newSentinel(305, "stale connection")
	ErrAuthorization    = newSentinel(306, "authorization violation")
	ErrAuthExpired      = newSentinel(307, "authentication expired")
	ErrPermissions      = newSentinel(308, "permissions violation")
	ErrMaxSubscriptions = newSentinel(309, "max subscriptions exceeded")
	ErrWebsocket        = newSentinel(310, "websocket error")

	// 4xx: messaging.
	ErrNoResponders       = newSentinel(400, "no responders")
	ErrNoReplySubject     = newSentinel(401, "no reply subject")
	ErrSubscriptionClosed = newSentinel(402, "subscription closed")
	ErrSlowConsumer       = newSentinel(403, "slow consumer")

	// 5xx: JetStream.
	ErrJetStream           = newSentinel(500, "jetstream error")
	ErrJetStreamAPI        = newSentinel(501, "jetstream api error")
	ErrJetStreamNotEnabled = newSentinel(502, "jetstream not enabled")
	ErrNoStreamResponse    = newSentinel(503, "no response from stream")
	ErrStreamNotFound      = newSentinel(504, "stream not found")
	ErrStreamNameInUse     = newSentinel(505, "stream name already in use")
	ErrConsumerNotFound    = newSentinel(506, "consumer not found")
	ErrMsgNotFound         = newSentinel(507, "message not found")
	ErrWrongLastSequence   = newSentinel(508, "wrong last sequence")
	ErrTooManyStalledMsgs  = newSentinel(509, "too many stalled async publishes")
	ErrAsyncPublishTimeout = newSentinel(510, "async publish timeout")
	ErrNoMessages          = newSentinel(511, "no messages")
	ErrConsumerDeleted     = newSentinel(512, "consumer deleted")
	ErrMessageAlreadyAcked = newSentinel(513, "message already acknowledged")
	ErrNotJSMessage        = newSentinel(514, "not a JetStream message")

	// 6xx: Key-Value.
	ErrBucketNotFound    = newSentinel(600, "bucket not found")
	ErrBucketExists      = newSentinel(601, "bucket exists")
	ErrKeyNotFound       = newSentinel(602, "key not found")
	ErrKeyDeleted        = newSentinel(603, "key deleted")
	ErrKeyExists         = newSentinel(604, "key exists")
	ErrInvalidBucketName = newSentinel(605, "invalid bucket name")
	ErrInvalidKey        = newSentinel(606, "invalid key")

	// The Key-Value codecs' errors (the reference's kvcodec): a chain of
	// no codecs (an ErrInvalidArgument), a wildcard filter for a key codec
	// without a filter form (an ErrInvalidKey), and a codec's failing step.
	ErrKVNoCodecs             = newSentinel(607, "no codecs in a codec chain")
	ErrKVWildcardNotSupported = newSentinel(608, "key codec does not support wildcard filters")
	ErrKVKeyEncodeFailed      = newSentinel(609, "key codec failed to encode a key")
	ErrKVKeyDecodeFailed      = newSentinel(610, "key codec failed to decode a key")
	ErrKVValueEncodeFailed    = newSentinel(611, "value codec failed to encode a value")
	ErrKVValueDecodeFailed    = newSentinel(612, "value codec failed to decode a value")
	ErrKVFilterEncodeFailed   = newSentinel(613, "key codec failed to encode a filter")
)

// 7xx: Object Store (buckets share the 6xx codes: ErrBucketNotFound,
// ErrBucketExists, ErrInvalidBucketName). A deleted object is also "not
// found" and a bad object name is also a configuration error: errors.Is
// matches ErrObjectDeleted with ErrObjectNotFound, ErrInvalidObjectName
// with ErrConfig (see the tree above).
var (
	ErrObjectNotFound    = newSentinel(700, "object not found")
	ErrObjectDeleted     = newSentinel(701, "object deleted")
	ErrObjectExists      = newSentinel(702, "object exists")
	ErrDigestMismatch    = newSentinel(703, "digest mismatch")
	ErrObjectLink        = newSentinel(704, "invalid object link")
	ErrInvalidObjectName = newSentinel(705, "invalid object name")
	ErrBucketSealed      = newSentinel(706, "bucket is sealed")
)

// ErrServiceConfig (8xx: services) is a refused service, group or
// endpoint configuration (bad name, version, subject or queue group); it
// is also a configuration error: errors.Is matches it with ErrConfig.
var ErrServiceConfig = newSentinel(800, "invalid service configuration")

// ErrHandlerPanic is matched by the error reported to the ErrorHandler when
// a message handler or a lifecycle handler (ConnectedHandler, ...) panics;
// the AsyncError's Err wraps it, its message giving the panic value.
var ErrHandlerPanic = errors.New("natsio: message handler panicked")

// AsyncError is what the ErrorHandler receives: an error that happened
// outside any call (slow consumer, server -ERR, lost connection, a panic in
// a handler), with the subscription it concerns when there is one.
type AsyncError struct {
	Err     error  // what happened: an *Error, or one wrapping ErrHandlerPanic
	SID     uint64 // subscription id, 0 when none
	Subject string // subscription subject, "" when none
}

// Error is Err's message, followed by the subscription's id and subject
// when there is one.
func (e *AsyncError) Error() string {
	if e.Subject != "" {
		return fmt.Sprintf("%v (subscription %d on %q)", e.Err, e.SID, e.Subject)
	}
	return e.Err.Error()
}

// Unwrap yields Err, so errors.Is and errors.As see through the
// AsyncError to its cause.
func (e *AsyncError) Unwrap() error { return e.Err }

// deadlineReached: err is a library timeout that came from ctx's deadline
// (the timeout passed to the library was the time left until it).
func deadlineReached(ctx context.Context, err error) bool {
	d, ok := ctx.Deadline()
	return ok && errors.Is(err, ErrTimeout) && !time.Now().Before(d.Add(-5*time.Millisecond))
}

// contextError is what a call returns when its context ends first: the
// context's own error, and for a passed deadline one that also matches
// ErrTimeout, as a library timeout would.
func contextError(ctx context.Context) error {
	err := ctx.Err()
	if errors.Is(err, context.DeadlineExceeded) {
		return &Error{Status: 200, Detail: "context deadline exceeded", cause: err}
	}
	return err
}

// isDone reports whether err is the clean end of an iteration.
func isDone(err error) bool {
	e, ok := err.(*Error)
	return ok && e.Status == statusDone
}
