package nats

import (
	"errors"
	"fmt"
)

// The errors of the legacy JetStream API, with nats.go's texts. Those
// carrying an APIError match, through errors.Is, any answer of the
// server with the same err_code.
var (
	ErrJetStreamNotEnabled           JetStreamError = apiSentinel(JSErrCodeJetStreamNotEnabled, 503, "jetstream not enabled")
	ErrJetStreamNotEnabledForAccount JetStreamError = apiSentinel(JSErrCodeJetStreamNotEnabledForAccount, 503, "jetstream not enabled for account")
	ErrStreamNotFound                JetStreamError = apiSentinel(JSErrCodeStreamNotFound, 404, "stream not found")
	ErrStreamNameAlreadyInUse        JetStreamError = apiSentinel(JSErrCodeStreamNameInUse, 400, "stream name already in use")
	ErrConsumerNotFound              JetStreamError = apiSentinel(JSErrCodeConsumerNotFound, 404, "consumer not found")
	ErrMsgNotFound                   JetStreamError = apiSentinel(JSErrCodeMessageNotFound, 404, "message not found")
	ErrBadRequest                    JetStreamError = apiSentinel(JSErrCodeBadRequest, 400, "bad request")
	ErrDuplicateFilterSubjects       JetStreamError = apiSentinel(JSErrCodeDuplicateFilterSubjects, 500, "consumer cannot have both FilterSubject and FilterSubjects specified")
	ErrOverlappingFilterSubjects     JetStreamError = apiSentinel(JSErrCodeOverlappingFilterSubjects, 500, "consumer subject filters cannot overlap")
	ErrEmptyFilter                   JetStreamError = apiSentinel(JSErrCodeConsumerEmptyFilter, 500, "consumer filter in FilterSubjects cannot be empty")

	// AddStream and UpdateStream check the server kept what they asked
	// for: an older server drops the fields it does not know.
	ErrStreamSubjectTransformNotSupported                JetStreamError = &jsError{message: "stream subject transformation not supported by nats-server"}
	ErrStreamSourceNotSupported                          JetStreamError = &jsError{message: "stream sourcing is not supported by nats-server"}
	ErrStreamSourceMultipleSubjectTransformsNotSupported JetStreamError = &jsError{message: "stream sourcing with multiple subject transforms not supported by nats-server"}
	ErrConsumerMultipleFilterSubjectsNotSupported        JetStreamError = &jsError{message: "multiple consumer filter subjects not supported by nats-server"}

	ErrConsumerNameAlreadyInUse    JetStreamError = &jsError{message: "consumer name already in use"}
	ErrStreamConfigRequired        JetStreamError = &jsError{message: "stream configuration is required"}
	ErrConsumerConfigRequired      JetStreamError = &jsError{message: "consumer configuration is required"}
	ErrConsumerNameRequired        JetStreamError = &jsError{message: "consumer name is required"}
	ErrInvalidConsumerName         JetStreamError = &jsError{message: "invalid consumer name"}
	ErrInvalidFilterSubject        JetStreamError = &jsError{message: "invalid filter subject"}
	ErrCantAckIfConsumerAckNone    JetStreamError = &jsError{message: "cannot acknowledge a message for a consumer with AckNone policy"}
	ErrJetStreamPublisherClosed    JetStreamError = &jsError{message: "jetstream context closed"}
	ErrStreamNameRequired          JetStreamError = &jsError{message: "stream name is required"}
	ErrMsgAlreadyAckd              JetStreamError = &jsError{message: "message was already acknowledged"}
	ErrNotJSMessage                JetStreamError = &jsError{message: "not a jetstream message"}
	ErrNoMatchingStream            JetStreamError = &jsError{message: "no stream matches subject"}
	ErrSubjectMismatch             JetStreamError = &jsError{message: "subject does not match consumer"}
	ErrConsumerNotActive           JetStreamError = &jsError{message: "consumer not active"}
	ErrContextAndTimeout           JetStreamError = &jsError{message: "context and timeout can not both be set"}
	ErrPullSubscribeToPushConsumer JetStreamError = &jsError{message: "cannot pull subscribe to push based consumer"}
	ErrPullSubscribeRequired       JetStreamError = &jsError{message: "must use pull subscribe to bind to pull based consumer"}
	ErrNoStreamResponse            JetStreamError = &jsError{message: "no response from stream"}
	ErrTooManyStalledMsgs          JetStreamError = &jsError{message: "stalled with too many outstanding async published messages"}
	ErrAsyncPublishTimeout         JetStreamError = &jsError{message: "timeout waiting for ack"}
	ErrConsumerDeleted             JetStreamError = &jsError{message: "consumer deleted"}
	ErrNoHeartbeat                 JetStreamError = &jsError{message: "no heartbeat received"}
	ErrSubscriptionClosed          JetStreamError = &jsError{message: "subscription closed"}
	ErrInvalidJSAck                JetStreamError = &jsError{message: "invalid jetstream publish response"}

	ErrNoDeadlineContext = errors.New("nats: context requires a deadline")
)

// The err_codes of the JetStream API's errors that programs test for.
const (
	JSErrCodeJetStreamNotEnabledForAccount ErrorCode = 10039
	JSErrCodeJetStreamNotEnabled           ErrorCode = 10076
	JSErrCodeInsufficientResourcesErr      ErrorCode = 10023
	JSErrCodeJetStreamNotAvailable         ErrorCode = 10008

	JSErrCodeStreamNotFound  ErrorCode = 10059
	JSErrCodeStreamNameInUse ErrorCode = 10058

	JSErrCodeConsumerNotFound          ErrorCode = 10014
	JSErrCodeConsumerNameExists        ErrorCode = 10013
	JSErrCodeConsumerAlreadyExists     ErrorCode = 10105
	JSErrCodeDuplicateFilterSubjects   ErrorCode = 10136
	JSErrCodeOverlappingFilterSubjects ErrorCode = 10138
	JSErrCodeConsumerEmptyFilter       ErrorCode = 10139

	JSErrCodeMessageNotFound ErrorCode = 10037

	JSErrCodeBadRequest   ErrorCode = 10003
	JSStreamInvalidConfig ErrorCode = 10052

	// JSErrCodeStreamWrongLastSequenceConstant is a refused expected last
	// sequence that is a constant of the server's (ADR-50's batches).
	JSErrCodeStreamWrongLastSequenceConstant ErrorCode = 10164
)

// apiSentinel is a sentinel carrying the API error it stands for.
func apiSentinel(code ErrorCode, status int, description string) *jsError {
	return &jsError{apiErr: &APIError{ErrorCode: code, Code: status, Description: description}}
}

// consumerNameInUse is AddConsumer's error for a name taken by a
// consumer with another configuration, worded as nats.go's.
func consumerNameInUse(stream, name string) error {
	return fmt.Errorf("%w: creating consumer %q on stream %q", ErrConsumerNameAlreadyInUse, name, stream)
}
