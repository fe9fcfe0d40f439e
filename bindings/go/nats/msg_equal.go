package nats

import (
	"bytes"
	"maps"
	"slices"
)

// Equal reports whether m and msg have the same subject, reply, data and
// headers (names, and values in order); the subscription is not compared.
func (m *Msg) Equal(msg *Msg) bool {
	if m == msg {
		return true
	}
	if m == nil || msg == nil || m.Subject != msg.Subject || m.Reply != msg.Reply ||
		!bytes.Equal(m.Data, msg.Data) {
		return false
	}
	return maps.EqualFunc(m.Header, msg.Header, slices.Equal[[]string])
}
