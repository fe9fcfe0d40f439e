package nats

import natsio "github.com/libnatsio/natsio/bindings/go"

// The headers of JetStream publishes, under nats.go's legacy names (the
// jetstream package has them under its own).
const (
	MsgIdHdr               = natsio.JSHeaderMsgID
	ExpectedStreamHdr      = natsio.JSHeaderExpectedStream
	ExpectedLastSeqHdr     = natsio.JSHeaderExpectedLastSequence
	ExpectedLastSubjSeqHdr = natsio.JSHeaderExpectedLastSubjectSequence
	ExpectedLastMsgIdHdr   = natsio.JSHeaderExpectedLastMsgID
	MsgRollup              = natsio.JSHeaderRollup
	MsgTTLHdr              = natsio.JSHeaderTTL
)

// The headers of republished messages and direct gets.
const (
	JSStream       = natsio.JSHeaderStream
	JSSequence     = natsio.JSHeaderSequence
	JSTimeStamp    = natsio.JSHeaderTimeStamp
	JSSubject      = natsio.JSHeaderSubject
	JSLastSequence = natsio.JSHeaderLastSequence
)

// MsgSize is on a message delivered by a consumer with HeadersOnly.
const MsgSize = natsio.JSHeaderMsgSize

// Nats-Rollup's values.
const (
	MsgRollupSubject = natsio.JSHeaderRollupSubject
	MsgRollupAll     = natsio.JSHeaderRollupAll
)
