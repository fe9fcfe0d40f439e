package natsio

/*
#include "natsio_go.h"
*/
import "C"

import (
	"runtime"
	"slices"
)

// Header holds a message's headers: several values per name, names kept
// exactly as written. Unlike net/http, lookup is exact and case-sensitive
// ("X-Id" and "x-id" are different headers), as on the wire.
type Header map[string][]string

// Get is the first value of name, or "".
func (h Header) Get(name string) string {
	if v := h[name]; len(v) > 0 {
		return v[0]
	}
	return ""
}

// Values are all values of name, in order.
func (h Header) Values(name string) []string { return h[name] }

// Add appends a value to name.
func (h Header) Add(name, value string) { h[name] = append(h[name], value) }

// Set replaces every value of name with value.
func (h Header) Set(name, value string) { h[name] = []string{value} }

// Del removes every value of name.
func (h Header) Del(name string) { delete(h, name) }

// Msg is a message: one received (every field is a copy in Go memory, yours
// to keep and modify) or one to publish with PublishMsg. A message pulled
// from a JetStream consumer (Fetch, Next) can also be acknowledged: see
// Msg.Ack and Msg.Metadata.
type Msg struct {
	Subject string // the subject it was published to
	Reply   string // the reply subject, "" when none
	Header  Header // nil when the message carried no header block
	Data    []byte // the payload
	// Status is the status code of a status message (the code on the
	// header block's first line, e.g. 503 for no responders, 404 or 408
	// for a pull request's end), 0 for an ordinary message. Ignored by
	// PublishMsg.
	Status int
	// StatusDescription is the text beside Status on the header block's
	// first line (e.g. "Request Timeout" for 408), "" when there is none.
	// Ignored by PublishMsg.
	StatusDescription string
	// HeadersMalformed is true when the received header block had corrupt
	// lines (skipped: Header holds the good ones); the message is still
	// delivered. Ignored by PublishMsg.
	HeadersMalformed bool
	// Sid is the id of the subscription the message was delivered on
	// (Subscription.SID), 0 for a message not received from the server.
	// Ignored by PublishMsg.
	Sid uint64

	conn *Conn  // the connection that received it, for Respond
	js   *jsAck // the library's handle of a pulled JetStream message, for acks
}

// Respond publishes data to the message's reply subject through the
// connection that received it. ErrNoReplySubject when it has none.
func (m *Msg) Respond(data []byte) error {
	return m.RespondMsg(&Msg{Data: data})
}

// RespondMsg is Respond with headers: reply's Header and Data are sent to
// the message's reply subject (reply.Subject is ignored).
func (m *Msg) RespondMsg(reply *Msg) error {
	if m.Reply == "" {
		return &Error{Status: Status(ErrNoReplySubject.(*sentinel).code), Detail: "message on " + m.Subject + " has no reply subject"}
	}
	if m.conn == nil {
		return &Error{Status: Status(ErrConnectionClosed.(*sentinel).code), Detail: "message was not received by a connection"}
	}
	hdrs, err := cHeaders(reply.Header)
	if err != nil {
		return err
	}
	if hdrs != nil {
		defer C.natsio_headers_free(hdrs)
	}
	// Sent at once, not batched: the requester is waiting for it.
	return m.conn.publish(m.Reply, "", C.GO_PUB_RESPONSE, hdrs, reply.Data)
}

// cHeaders builds an owned C header map from h (nil for no headers); the
// caller frees it with natsio_headers_free. Names are sent in sorted order
// so the wire form is deterministic; values of a name keep their order.
func cHeaders(h Header) (*C.natsio_headers, error) {
	if h == nil {
		return nil, nil
	}
	lockThread()
	defer unlockThread()
	var out *C.natsio_headers
	if err := statusError(C.natsio_headers_new(&out)); err != nil {
		return nil, err
	}
	names := make([]string, 0, len(h))
	for name := range h {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		cname, err := cString(name)
		if err != nil {
			C.natsio_headers_free(out)
			return nil, &Error{Status: Status(105), Detail: "header name contains a NUL byte"}
		}
		for _, value := range h[name] {
			cvalue, err := cString(value)
			if err != nil {
				C.natsio_headers_free(out)
				return nil, &Error{Status: Status(105), Detail: "header value contains a NUL byte"}
			}
			if err := statusError(C.natsio_headers_add(out, cPtr(cname), cPtr(cvalue))); err != nil {
				C.natsio_headers_free(out)
				return nil, err
			}
		}
	}
	runtime.KeepAlive(h)
	return out, nil
}
