package nats

import "errors"

// Errors of nats.go that libnatsio never returns, declared so that a
// program comparing against them builds: the comparison is false here
// because the case they name does not arise.
var (
	// Of the legacy JetStream API: nats.go declares these two and returns
	// neither.
	ErrInvalidDurableName                                      = errors.New("nats: invalid durable name")
	ErrStreamSourceSubjectTransformNotSupported JetStreamError = &jsError{message: "stream subject transformation not supported by nats-server"}

	// A pull request ended by the consumer's leader changing: the
	// library's Fetch returns what arrived (maybe fewer messages) without
	// an error, where nats.go's fails with it.
	ErrConsumerLeadershipChanged JetStreamError = &jsError{message: "Leadership Changed"}
	// A Fetch cut off by a disconnect: the library's pulls ride through
	// reconnects (the Fetch waits for its messages or its own timeout).
	ErrFetchDisconnected JetStreamError = &jsError{message: "disconnected during fetch"}
)
