package nats

import (
	natsio "github.com/libnatsio/natsio/bindings/go"
)

// Header is a message's headers (nats.go's Header: several values per
// name, names case-sensitive).
type Header = natsio.Header

// Msg is a message received or to publish.
type Msg struct {
	Subject string
	Reply   string
	Header  Header
	Data    []byte
	Sub     *Subscription

	inner *natsio.Msg // the binding's message it was received as
}

// MsgHandler is a callback subscription's handler.
type MsgHandler func(msg *Msg)

// NewMsg is a message to publish on subject, with an empty Header.
func NewMsg(subject string) *Msg { return &Msg{Subject: subject, Header: make(Header)} }

func newMsg(m *natsio.Msg, sub *Subscription) *Msg {
	return &Msg{Subject: m.Subject, Reply: m.Reply, Header: m.Header, Data: m.Data, Sub: sub, inner: m}
}

// binding is m as the binding publishes it.
func (m *Msg) binding() *natsio.Msg {
	return &natsio.Msg{Subject: m.Subject, Reply: m.Reply, Header: m.Header, Data: m.Data}
}

// Respond sends data to the message's reply subject.
func (m *Msg) Respond(data []byte) error {
	return m.RespondMsg(&Msg{Data: data})
}

// RespondMsg sends msg to the message's reply subject.
func (m *Msg) RespondMsg(msg *Msg) error {
	if m == nil || msg == nil {
		return ErrInvalidMsg
	}
	if m.inner == nil {
		return ErrMsgNotBound
	}
	if m.Reply == "" {
		return ErrMsgNoReply
	}
	msg.Subject = m.Reply
	return Translate(m.inner.RespondMsg(msg.binding()))
}

// Size is the size of the message's subject, reply, headers and data as
// nats.go counts them (the header block as sent).
func (m *Msg) Size() int {
	return len(m.Subject) + len(m.Reply) + headerBlockSize(m.Header) + len(m.Data)
}

// headerBlockSize is the size of h's header block as sent, 0 for none.
func headerBlockSize(h Header) int {
	if len(h) == 0 {
		return 0
	}
	size := len("NATS/1.0\r\n\r\n")
	for k, vs := range h {
		for _, v := range vs {
			size += len(k) + len(": ") + len(v) + len("\r\n")
		}
	}
	return size
}
