package jetstream

import (
	"errors"
	"fmt"

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

const (
	JSErrCodeConsumerNotFound        ErrorCode = 10014
	JSErrCodeMessageNotFound         ErrorCode = 10037
	JSErrCodeStreamNameInUse         ErrorCode = 10058
	JSErrCodeStreamNotFound          ErrorCode = 10059
	JSErrCodeStreamWrongLastSequence ErrorCode = 10071
	JSErrCodeJetStreamNotEnabled     ErrorCode = 10076
	JSErrCodeConsumerExists          ErrorCode = 10148
	JSErrCodeConsumerDoesNotExist    ErrorCode = 10149
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

	ErrMsgAlreadyAckd             = sentinel("message was already acknowledged")
	ErrNoStreamResponse           = sentinel("no response from stream")
	ErrNotJSMessage               = sentinel("not a jetstream message")
	ErrInvalidStreamName          = sentinel("invalid stream name")
	ErrInvalidConsumerName        = sentinel("invalid consumer name")
	ErrNoMessages                 = sentinel("no messages")
	ErrConsumerDeleted            = sentinel("consumer deleted")
	ErrHandlerRequired            = sentinel("handler cannot be empty")
	ErrNotPushConsumer            = sentinel("consumer is not a push consumer")
	ErrNotPullConsumer            = sentinel("consumer is not a pull consumer")
	ErrConsumerAlreadyConsuming   = sentinel("consumer is already consuming")
	ErrNoHeartbeat                = sentinel("no heartbeat received")
	ErrMsgIteratorClosed          = sentinel("messages iterator closed")
	ErrConnectionClosed           = sentinel("connection closed")
	ErrTooManyStalledMsgs         = sentinel("stalled with too many outstanding async published messages")
	ErrAsyncPublishTimeout        = sentinel("timeout waiting for ack")
	ErrOrderConsumerUsedAsFetch   = sentinel("ordered consumer initialized as fetch")
	ErrOrderConsumerUsedAsConsume = sentinel("ordered consumer initialized as consume")

	ErrKeyExists           JetStreamError = &jsError{apiErr: &APIError{ErrorCode: JSErrCodeStreamWrongLastSequence, Code: 400}, message: "key exists"}
	ErrInvalidBucketName                  = sentinel("invalid bucket name")
	ErrInvalidKey                         = sentinel("invalid key")
	ErrBucketExists                       = sentinel("bucket name already in use")
	ErrBucketNotFound                     = sentinel("bucket not found")
	ErrKeyNotFound                        = sentinel("key not found")
	ErrKeyDeleted                         = sentinel("key was deleted")
	ErrKeyRevisionMismatch                = sentinel("key revision mismatch")
	ErrNoKeysFound                        = sentinel("no keys found")

	ErrObjectNotFound      = sentinel("object not found")
	ErrInvalidStoreName    = sentinel("invalid object-store name")
	ErrDigestMismatch      = sentinel("received a corrupt object, digests do not match")
	ErrNoObjectsFound      = sentinel("no objects found")
	ErrObjectAlreadyExists = sentinel("an object already exists with that name")
	ErrBadObjectMeta       = sentinel("object-store meta information invalid")
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
	if a := nats.APIErrorOf(err); a != nil {
		return &APIError{Code: a.Code, ErrorCode: ErrorCode(a.ErrorCode), Description: a.Description}
	}
	return nats.Translate(err)
}
