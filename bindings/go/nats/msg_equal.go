package nats

import (
	"bytes"
	"slices"
)

// Equal reports whether m and msg have the same subject, reply, data and
// headers (names, and values in order); the subscription is not compared.
func (m *Msg) Equal(msg *Msg) bool {
	if m == msg {
		return true
	}
	if m == nil || msg == nil || m.Subject != msg.Subject || m.Reply != msg.Reply ||
		!bytes.Equal(m.Data, msg.Data) || len(m.Header) != len(msg.Header) {
		return false
	}
	for name, values := range m.Header {
		other, ok := msg.Header[name]
		if !ok || !slices.Equal(values, other) {
			return false
		}
	}
	return true
}
