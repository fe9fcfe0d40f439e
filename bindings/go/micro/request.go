package micro

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	natsio "github.com/libnatsio/natsio/bindings/go"
	"github.com/libnatsio/natsio/bindings/go/internal/service"
)

type (
	// Handler serves an endpoint's requests.
	Handler interface {
		Handle(Request)
	}

	// HandlerFunc is a function as a Handler.
	HandlerFunc func(Request)

	// Request is a request to an endpoint. It may be answered after the
	// handler returns, from any goroutine (it is counted in the stats at
	// its answer; one never answered is counted once it is no longer
	// referenced and collected).
	Request interface {
		// Respond answers with data.
		Respond([]byte, ...RespondOpt) error
		// RespondJSON answers with the value marshalled to JSON.
		RespondJSON(any, ...RespondOpt) error
		// Error answers with the error headers (ErrorHeader: description,
		// ErrorCodeHeader: code) and data; it counts as an error in the
		// endpoint's stats. code must be a decimal number (ErrInvalidCode
		// otherwise, and nothing is sent).
		Error(code, description string, data []byte, opts ...RespondOpt) error
		Data() []byte
		Headers() Headers
		Subject() string
		Reply() string
	}

	// Headers are a request's headers.
	Headers natsio.Header

	// RespondOpt changes a response before it is sent.
	RespondOpt func(*natsio.Msg)

	request struct {
		lib service.Request
	}
)

var (
	// ErrRespond wraps a failure to send a response.
	ErrRespond = errors.New("NATS error when sending response")
	// ErrMarshalResponse: RespondJSON could not marshal the value.
	ErrMarshalResponse = errors.New("marshaling response")
	// ErrArgRequired: Error without a code or a description.
	ErrArgRequired = errors.New("argument required")
	// ErrInvalidCode: Error with a code that is not a decimal number that
	// fits in 32 bits (the library's error code is one; nats.go would send
	// any text). Nothing is sent: the handler can still answer.
	ErrInvalidCode = errors.New("error code is not a number")
)

// Handle calls fn(req).
func (fn HandlerFunc) Handle(req Request) { fn(req) }

// ContextHandler is a Handler calling handler with ctx.
func ContextHandler(ctx context.Context, handler func(context.Context, Request)) Handler {
	return HandlerFunc(func(req Request) { handler(ctx, req) })
}

func (r *request) Respond(response []byte, opts ...RespondOpt) error {
	m := &natsio.Msg{Data: response}
	for _, opt := range opts {
		opt(m)
	}
	if err := r.lib.Respond(service.Header(m.Header), m.Data); err != nil {
		return fmt.Errorf("%w: %w", ErrRespond, err)
	}
	return nil
}

func (r *request) RespondJSON(response any, opts ...RespondOpt) error {
	resp, err := json.Marshal(response)
	if err != nil {
		return ErrMarshalResponse
	}
	return r.Respond(resp, opts...)
}

func (r *request) Error(code, description string, data []byte, opts ...RespondOpt) error {
	if code == "" {
		return fmt.Errorf("%w: error code", ErrArgRequired)
	}
	if description == "" {
		return fmt.Errorf("%w: description", ErrArgRequired)
	}
	n, err := strconv.ParseInt(code, 10, 32)
	if err != nil {
		return fmt.Errorf("%w: %q", ErrInvalidCode, code)
	}
	m := &natsio.Msg{Data: data}
	for _, opt := range opts {
		opt(m)
	}
	if err := r.lib.RespondError(int32(n), description, service.Header(m.Header), m.Data); err != nil {
		return fmt.Errorf("%w: %w", ErrRespond, err)
	}
	return nil
}

// WithHeaders adds headers to a response.
func WithHeaders(headers Headers) RespondOpt {
	return func(m *natsio.Msg) {
		if m.Header == nil {
			m.Header = natsio.Header{}
		}
		for k, v := range headers {
			m.Header[k] = v
		}
	}
}

func (r *request) Data() []byte { return r.lib.Data() }

func (r *request) Headers() Headers { return Headers(r.lib.Header()) }

func (r *request) Subject() string { return r.lib.Subject() }

func (r *request) Reply() string { return r.lib.Reply() }

// Get is the first value of key, or "".
func (h Headers) Get(key string) string { return natsio.Header(h).Get(key) }

// Values are all values of key.
func (h Headers) Values(key string) []string { return natsio.Header(h).Values(key) }
