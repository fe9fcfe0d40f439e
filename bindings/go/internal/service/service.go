// Package service joins package micro (nats.go's micro shapes) to package
// natsio, which runs services on the library: micro imports natsio for
// its Conn, so natsio cannot import micro, and what micro needs of
// natsio's internals (the C handles, the callback and token mechanism)
// is not natsio's public API. natsio sets Add and Discover when it is
// initialised; micro, which imports natsio, calls them.
package service

import (
	"context"
	"iter"
)

// Header is a message's header map (natsio.Header and micro.Headers
// convert to it for free).
type Header = map[string][]string

// Request is a request to an endpoint, read from the library's request.
type Request interface {
	Subject() string
	Reply() string
	Data() []byte
	Header() Header
	// Respond answers with data and headers (may be nil).
	Respond(h Header, data []byte) error
	// RespondError answers with the service error headers (code,
	// description) beside h.
	RespondError(code int32, description string, h Header, data []byte) error
}

// Handler serves an endpoint's requests, one at a time on the endpoint's
// library thread. A panic is recovered: the request fails (a 500 reply
// unless it was answered, an error counted, the error handler told).
type Handler func(Request)

// Group is a group of endpoints (a subject prefix, a queue group).
type Group interface{ isGroup() }

// GroupMark makes a type a Group.
type GroupMark struct{}

func (GroupMark) isGroup() {}

// SlowConsumerErrors are the errors a micro NATSError for requests
// dropped over an endpoint's pending limits wraps besides
// natsio.ErrSlowConsumer: the nats facade's ErrSlowConsumer, added by the
// facade's micro package when it is initialised (read only after).
var SlowConsumerErrors []error

// Handlers are the service-wide callbacks, each optional.
type Handlers struct {
	// Stats gives an endpoint's STATS data (JSON; nil leaves it out).
	Stats func(endpoint, subject string) []byte
	// Error is told of a handler failure and (code 0, on the client's
	// events thread) of requests dropped over an endpoint's pending
	// limits.
	Error func(endpoint, subject string, code int32, description string)
	// Done is called once, on its own goroutine, after the service has
	// stopped (Stop, or the connection's close).
	Done func()
}

// Service is a running service.
type Service interface {
	ID() string
	// AddGroup adds a group under parent (nil: the service).
	AddGroup(parent Group, configJSON []byte) (Group, error)
	// AddEndpoint adds an endpoint to group (nil: the service) whose
	// requests go to h, and returns its full subject and queue group
	// ("" when it has none).
	AddEndpoint(group Group, configJSON []byte, h Handler) (subject, queueGroup string, err error)
	InfoJSON() ([]byte, error)
	StatsJSON() ([]byte, error)
	Reset() error
	// Stop drains the endpoints and the monitoring subscriptions.
	Stop(ctx context.Context) error
	Stopped() bool
}

var (
	// Add starts a service on conn (a *natsio.Conn) from configJSON
	// (natsio_client_add_service's JSON).
	Add func(conn any, configJSON []byte, h Handlers) (Service, error)
	// Discover asks services for their PING (verb 0), INFO (1) or STATS
	// (2) response and yields each reply's JSON; opts is a
	// []natsio.RequestManyOption.
	Discover func(ctx context.Context, conn any, verb int32, name, id string, opts any) iter.Seq2[[]byte, error]
)
