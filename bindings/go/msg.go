package natsio

/*
#include <stdint.h>
#include "natsio.h"

// One call instead of six to read a message's fields.
typedef struct go_msg_view {
	const char *subject;
	const char *reply;
	const char *data;
	size_t data_len;
	const natsio_headers *headers;
	size_t header_count;
} go_msg_view;

static void go_msg_read(const natsio_msg *msg, go_msg_view *v) {
	v->subject = natsio_msg_subject(msg);
	v->reply = natsio_msg_reply(msg);
	v->data = natsio_msg_data(msg);
	v->data_len = natsio_msg_data_len(msg);
	v->headers = natsio_msg_headers(msg);
	v->header_count = natsio_headers_len(v->headers);
}
*/
import "C"

import (
	"runtime"
	"slices"
	"unsafe"
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
// to keep and modify) or one to publish with PublishMsg.
type Msg struct {
	Subject string
	Reply   string
	Header  Header // nil when the message carried no header block
	Data    []byte

	conn *Conn // the connection that received it, for Respond
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
	return m.conn.PublishMsg(&Msg{Subject: m.Reply, Header: reply.Header, Data: reply.Data})
}

// copyMsg copies a borrowed C message into Go memory.
func copyMsg(cm *C.natsio_msg, conn *Conn) *Msg {
	var v C.go_msg_view
	C.go_msg_read(cm, &v)
	m := &Msg{
		Subject: C.GoString(v.subject),
		Data:    C.GoBytes(unsafe.Pointer(v.data), C.int(v.data_len)),
		conn:    conn,
	}
	if v.reply != nil {
		m.Reply = C.GoString(v.reply)
	}
	if v.headers != nil {
		m.Header = make(Header, int(v.header_count))
		for i := C.size_t(0); i < v.header_count; i++ {
			var name, value *C.char
			if C.natsio_headers_entry(v.headers, i, &name, &value) == C.NATSIO_OK {
				m.Header.Add(C.GoString(name), C.GoString(value))
			}
		}
	}
	return m
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
