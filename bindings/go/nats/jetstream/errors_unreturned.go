package jetstream

// Errors of nats.go's jetstream package that libnatsio never returns,
// declared so that a program comparing against them builds: the comparison
// is false here because the case they name does not arise.
var (
	// nats.go declares these and returns none of them either.
	ErrConsumerHasActiveSubscription                  = sentinel("consumer has active subscription")
	ErrConsumerNameAlreadyInUse                       = sentinel("consumer name already in use")
	ErrOrderedConsumerReset                           = sentinel("recreating ordered consumer")
	ErrStreamSourceMultipleFilterSubjectsNotSupported = sentinel("stream sourcing with multiple subject filters not supported by nats-server")
	ErrStreamSourceSubjectTransformNotSupported       = sentinel("stream subject transformation not supported by nats-server")
	ErrKeyValueConfigRequired                         = sentinel("config required")
	ErrObjectConfigRequired                           = sentinel("object-store config required")
	// nats.go's listers end on it inside; their Err() is nil at the end.
	ErrEndOfData = sentinel("end of data reached")

	// A jetstream.Msg here comes from a consumer only: it is bound to its
	// connection and has its reply subject.
	ErrMsgNotBound = sentinel("message is not bound to subscription/connection")
	ErrMsgNoReply  = sentinel("message does not have a reply")
	// An ordered consumer's server-side consumer is created with it, so
	// Info always finds one.
	ErrOrderedConsumerNotCreated = sentinel("consumer instance not yet created")

	// Pull statuses the library handles itself: a Consume or Messages
	// pulls again (from the new leader, after the server's restart, without
	// the stale pin); a Fetch's batch ends with what arrived and no error,
	// where nats.go's batch reports the first three as its Error().
	ErrConsumerLeadershipChanged = sentinel("leadership change")
	ErrServerShutdown            = sentinel("server shutdown")
	ErrPinIDMismatch             = sentinel("pin ID mismatch")
	ErrBatchCompleted            = sentinel("batch completed")
)
