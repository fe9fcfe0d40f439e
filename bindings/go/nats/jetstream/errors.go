package jetstream

import (
	"errors"
	"fmt"
	"strings"

	natsio "github.com/libnatsio/natsio/bindings/go"
	"github.com/libnatsio/natsio/bindings/go/nats"
)

// JetStreamError is an error of this package: it may carry the server's
// API error.
type JetStreamError interface {
	APIError() *APIError
	error
}

// ErrorCode is a JetStream API error's err_code.
type ErrorCode uint16

// APIError is an error the JetStream API answered with.
type APIError struct {
	Code        int       `json:"code"`
	ErrorCode   ErrorCode `json:"err_code"`
	Description string    `json:"description,omitempty"`
}

func (e *APIError) Error() string {
	return fmt.Sprintf("nats: API error: code=%d err_code=%d description=%s", e.Code, e.ErrorCode, e.Description)
}

func (e *APIError) APIError() *APIError { return e }

// Is matches another APIError with the same ErrorCode.
func (e *APIError) Is(err error) bool {
	if e == nil {
		return false
	}
	var other *APIError
	return errors.As(err, &other) && e.ErrorCode == other.ErrorCode
}

type jsError struct {
	apiErr  *APIError
	message string
}

func (e *jsError) APIError() *APIError { return e.apiErr }

func (e *jsError) Error() string {
	if e.apiErr != nil && e.apiErr.Description != "" {
		return e.apiErr.Error()
	}
	return "nats: " + e.message
}

func (e *jsError) Unwrap() error {
	if e.apiErr == nil {
		return nil
	}
	return e.apiErr
}

// The err_codes the server answers with that nats.go names.
const (
	JSErrCodeBadRequest                      ErrorCode = 10003
	JSErrCodeConsumerCreate                  ErrorCode = 10012
	JSErrCodeConsumerNameExists              ErrorCode = 10013
	JSErrCodeConsumerNotFound                ErrorCode = 10014
	JSErrCodeMaximumConsumersLimit           ErrorCode = 10026
	JSErrCodeMessageNotFound                 ErrorCode = 10037
	JSErrCodeJetStreamNotEnabledForAccount   ErrorCode = 10039
	JSErrCodeStreamMessageExceedsMaximum     ErrorCode = 10054
	JSErrCodeStreamNameInUse                 ErrorCode = 10058
	JSErrCodeStreamNotFound                  ErrorCode = 10059
	JSErrCodeStreamWrongLastSequence         ErrorCode = 10071
	JSErrCodeJetStreamNotEnabled             ErrorCode = 10076
	JSErrCodeConsumerAlreadyExists           ErrorCode = 10105
	JSErrCodeDuplicateFilterSubjects         ErrorCode = 10136
	JSErrCodeOverlappingFilterSubjects       ErrorCode = 10138
	JSErrCodeConsumerEmptyFilter             ErrorCode = 10139
	JSErrCodeConsumerExists                  ErrorCode = 10148
	JSErrCodeConsumerDoesNotExist            ErrorCode = 10149
	JSErrCodeStreamWrongLastSequenceConstant ErrorCode = 10164
	JSErrCodeMirrorWithMsgSchedules          ErrorCode = 10186
	JSErrCodeSourceWithMsgSchedules          ErrorCode = 10187
	JSErrCodeMessageSchedulesDisabled        ErrorCode = 10188
	JSErrCodeSchedulePatternInvalid          ErrorCode = 10189
	JSErrCodeScheduleTargetInvalid           ErrorCode = 10190
	JSErrCodeScheduleTTLInvalid              ErrorCode = 10191
	JSErrCodeScheduleRollupInvalid           ErrorCode = 10192
	JSErrCodeScheduleSourceInvalid           ErrorCode = 10203
	JSErrCodeConsumerInvalidReset            ErrorCode = 10204
)

func apiSentinel(code int, errCode ErrorCode, description string) JetStreamError {
	return &jsError{apiErr: &APIError{Code: code, ErrorCode: errCode, Description: description}}
}

func sentinel(message string) JetStreamError { return &jsError{message: message} }

// The errors of nats.go's jetstream package, with its texts.
var (
	ErrJetStreamNotEnabled    = apiSentinel(503, JSErrCodeJetStreamNotEnabled, "jetstream not enabled")
	ErrStreamNotFound         = apiSentinel(404, JSErrCodeStreamNotFound, "stream not found")
	ErrStreamNameAlreadyInUse = apiSentinel(400, JSErrCodeStreamNameInUse, "stream name already in use")
	ErrConsumerNotFound       = apiSentinel(404, JSErrCodeConsumerNotFound, "consumer not found")
	ErrConsumerExists         = apiSentinel(400, JSErrCodeConsumerExists, "consumer already exists")
	ErrConsumerDoesNotExist   = apiSentinel(400, JSErrCodeConsumerDoesNotExist, "consumer does not exist")
	ErrMsgNotFound            = apiSentinel(404, JSErrCodeMessageNotFound, "message not found")

	// The API errors below match an *APIError with their err_code
	// (errors.Is through APIError.Is), as the server answers them.
	ErrJetStreamNotEnabledForAccount = apiSentinel(503, JSErrCodeJetStreamNotEnabledForAccount, "jetstream not enabled for account")
	ErrStreamMessageExceedsMaximum   = apiSentinel(400, JSErrCodeStreamMessageExceedsMaximum, "message size exceeds maximum allowed")
	ErrConsumerInvalidReset          = apiSentinel(400, JSErrCodeConsumerInvalidReset, "invalid reset")
	ErrBadRequest                    = apiSentinel(400, JSErrCodeBadRequest, "bad request")
	ErrConsumerCreate                = apiSentinel(500, JSErrCodeConsumerCreate, "could not create consumer")
	ErrMaximumConsumersLimit         = apiSentinel(400, JSErrCodeMaximumConsumersLimit, "maximum consumers limit reached")
	ErrDuplicateFilterSubjects       = apiSentinel(500, JSErrCodeDuplicateFilterSubjects, "consumer cannot have both FilterSubject and FilterSubjects specified")
	ErrOverlappingFilterSubjects     = apiSentinel(500, JSErrCodeOverlappingFilterSubjects, "consumer subject filters cannot overlap")
	ErrEmptyFilter                   = apiSentinel(500, JSErrCodeConsumerEmptyFilter, "consumer filter in FilterSubjects cannot be empty")
	ErrScheduleTargetInvalid         = apiSentinel(400, JSErrCodeScheduleTargetInvalid, "message schedules target is invalid")
	ErrSchedulePatternInvalid        = apiSentinel(400, JSErrCodeSchedulePatternInvalid, "message schedules pattern is invalid")
	ErrMessageSchedulesDisabled      = apiSentinel(400, JSErrCodeMessageSchedulesDisabled, "message schedules is disabled")
	ErrScheduleSourceInvalid         = apiSentinel(400, JSErrCodeScheduleSourceInvalid, "message schedules source is invalid")
	ErrScheduleTTLInvalid            = apiSentinel(400, JSErrCodeScheduleTTLInvalid, "message schedules invalid per-message TTL")
	ErrScheduleRollupInvalid         = apiSentinel(400, JSErrCodeScheduleRollupInvalid, "message schedules invalid rollup")
	ErrMirrorWithMsgSchedules        = apiSentinel(400, JSErrCodeMirrorWithMsgSchedules, "stream mirrors can not also schedule messages")
	ErrSourceWithMsgSchedules        = apiSentinel(400, JSErrCodeSourceWithMsgSchedules, "stream source can not also schedule messages")

	// ErrInvalidOption is wrapped by the errors of options given values
	// they do not take.
	ErrInvalidOption = sentinel("invalid jetstream option")
	// ErrAsyncPublishReplySubjectSet: PublishMsgAsync with a reply subject.
	ErrAsyncPublishReplySubjectSet = sentinel("reply subject should be empty")
	// ErrJetStreamPublisherClosed fails the asynchronous publishes that
	// CleanupPublisher dropped.
	ErrJetStreamPublisherClosed = sentinel("jetstream context closed")
	// ErrStreamNameRequired: a stream operation given no stream name.
	ErrStreamNameRequired = sentinel("stream name is required")
	// ErrInvalidSubject: StreamNameBySubject given an invalid subject.
	ErrInvalidSubject = sentinel("invalid subject name")

	// ErrConsumerResetResponseEmpty: a consumer reset answered without
	// the consumer's info.
	ErrConsumerResetResponseEmpty = sentinel("consumer reset response is empty")

	// ErrInvalidJetStreamResponse: an API answer without what it should
	// hold.
	ErrInvalidJetStreamResponse = sentinel("invalid jetstream api response")

	ErrMsgAlreadyAckd           = sentinel("message was already acknowledged")
	ErrNoStreamResponse         = sentinel("no response from stream")
	ErrNotJSMessage             = sentinel("not a jetstream message")
	ErrInvalidStreamName        = sentinel("invalid stream name")
	ErrInvalidConsumerName      = sentinel("invalid consumer name")
	ErrNoMessages               = sentinel("no messages")
	ErrConsumerDeleted          = sentinel("consumer deleted")
	ErrHandlerRequired          = sentinel("handler cannot be empty")
	ErrNotPushConsumer          = sentinel("consumer is not a push consumer")
	ErrNotPullConsumer          = sentinel("consumer is not a pull consumer")
	ErrConsumerAlreadyConsuming = sentinel("consumer is already consuming")
	ErrNoHeartbeat              = sentinel("no heartbeat received")
	ErrMsgIteratorClosed        = sentinel("messages iterator closed")
	ErrConnectionClosed         = sentinel("connection closed")
	// ErrMaxBytesExceeded ends a Consume whose next message is larger
	// than PullMaxBytes (a Fetch just ends, as nats.go's).
	ErrMaxBytesExceeded    = sentinel("message size exceeds max bytes")
	ErrTooManyStalledMsgs  = sentinel("stalled with too many outstanding async published messages")
	ErrAsyncPublishTimeout = sentinel("timeout waiting for ack")
	// ErrOrderedConsumerConcurrentRequests: a second Consume or Messages
	// of an ordered consumer while one runs, or a second Fetch or Next
	// while one runs.
	ErrOrderedConsumerConcurrentRequests = sentinel("cannot run concurrent processing using ordered consumer")
	ErrOrderConsumerUsedAsFetch          = sentinel("ordered consumer initialized as fetch")
	ErrOrderConsumerUsedAsConsume        = sentinel("ordered consumer initialized as consume")

	ErrKeyExists           JetStreamError = &jsError{apiErr: &APIError{ErrorCode: JSErrCodeStreamWrongLastSequence, Code: 400}, message: "key exists"}
	ErrInvalidBucketName                  = sentinel("invalid bucket name")
	ErrInvalidKey                         = sentinel("invalid key")
	ErrBucketExists                       = sentinel("bucket name already in use")
	ErrBucketNotFound                     = sentinel("bucket not found")
	ErrKeyNotFound                        = sentinel("key not found")
	ErrKeyDeleted                         = sentinel("key was deleted")
	ErrKeyRevisionMismatch                = sentinel("key revision mismatch")
	ErrNoKeysFound                        = sentinel("no keys found")
	// ErrBadBucket: KeyValue of a KV_ stream that is not a bucket.
	ErrBadBucket = sentinel("bucket not valid key-value store")
	// ErrTTLOnDeleteNotSupported: Delete given PurgeTTL.
	ErrTTLOnDeleteNotSupported = sentinel("TTL is not supported on delete")
	// ErrHistoryTooLarge: a bucket configured with a History above
	// KeyValueMaxHistory.
	ErrHistoryTooLarge = sentinel("history limited to a max of 64")

	ErrObjectNotFound      = sentinel("object not found")
	ErrInvalidStoreName    = sentinel("invalid object-store name")
	ErrDigestMismatch      = sentinel("received a corrupt object, digests do not match")
	ErrNoObjectsFound      = sentinel("no objects found")
	ErrObjectAlreadyExists = sentinel("an object already exists with that name")
	ErrBadObjectMeta       = sentinel("object-store meta information invalid")
	ErrNameRequired        = sentinel("name is required")
	ErrLinkNotAllowed      = sentinel("link cannot be set when putting the object in bucket")
	ErrObjectRequired      = sentinel("object required")
	ErrNoLinkToDeleted     = sentinel("not allowed to link to a deleted object")
	ErrNoLinkToLink        = sentinel("not allowed to link to another link")
	ErrCantGetBucket       = sentinel("invalid Get, object is a link to a bucket")
	ErrBucketRequired      = sentinel("bucket required")
	ErrBucketMalformed     = sentinel("bucket malformed")
	ErrUpdateMetaDeleted   = sentinel("cannot update meta for a deleted object")
	// ErrInvalidDigestFormat: DecodeObjectDigest given no digest.
	ErrInvalidDigestFormat = sentinel("object digest hash has invalid format")
)

// errorPairs maps the binding's sentinels to this package's, most
// specific first.
var errorPairs = []struct{ from, to error }{
	{natsio.ErrStreamNotFound, ErrStreamNotFound},
	{natsio.ErrConsumerNotFound, ErrConsumerNotFound},
	{natsio.ErrMsgNotFound, ErrMsgNotFound},
	{natsio.ErrStreamNameInUse, ErrStreamNameAlreadyInUse},
	{natsio.ErrJetStreamNotEnabled, ErrJetStreamNotEnabled},
	{natsio.ErrNoStreamResponse, ErrNoStreamResponse},
	{natsio.ErrMessageAlreadyAcked, ErrMsgAlreadyAckd},
	{natsio.ErrNotJSMessage, ErrNotJSMessage},
	{natsio.ErrConsumerDeleted, ErrConsumerDeleted},
	{natsio.ErrTooManyStalledMsgs, ErrTooManyStalledMsgs},
	{natsio.ErrAsyncPublishTimeout, ErrAsyncPublishTimeout},
	{natsio.ErrNoMessages, ErrNoMessages},
	{natsio.ErrBucketNotFound, ErrBucketNotFound},
	{natsio.ErrBucketExists, ErrBucketExists},
	// nats.go's Get reports a deleted key as not found.
	{natsio.ErrKeyDeleted, ErrKeyNotFound},
	{natsio.ErrKeyNotFound, ErrKeyNotFound},
	{natsio.ErrKeyExists, ErrKeyExists},
	{natsio.ErrInvalidBucketName, ErrInvalidBucketName},
	{natsio.ErrInvalidKey, ErrInvalidKey},
	{natsio.ErrObjectNotFound, ErrObjectNotFound},
	{natsio.ErrObjectExists, ErrObjectAlreadyExists},
	{natsio.ErrDigestMismatch, ErrDigestMismatch},
	{natsio.ErrInvalidObjectName, ErrBadObjectMeta},
}

// maxBytesExceeded: a pull ended by the server's 409 "Message Size
// Exceeds MaxBytes" (the next message is larger than the pull's byte
// budget), which the binding reports as ErrJetStream with the server's
// description, and nats.go recognises by that description too.
func maxBytesExceeded(err error) bool {
	return errors.Is(err, natsio.ErrJetStream) && strings.Contains(strings.ToLower(err.Error()), "message size exceeds maxbytes")
}

// translate turns a binding error into the one nats.go's jetstream package
// returns: its sentinel, an *APIError for other API rejections, else the
// core package's translation.
func translate(err error) error {
	if err == nil {
		return nil
	}
	for _, p := range errorPairs {
		if errors.Is(err, p.from) {
			return p.to
		}
	}
	if maxBytesExceeded(err) {
		return ErrMaxBytesExceeded
	}
	if a := nats.APIErrorOf(err); a != nil {
		return &APIError{Code: a.Code, ErrorCode: ErrorCode(a.ErrorCode), Description: a.Description}
	}
	return nats.Translate(err)
}
