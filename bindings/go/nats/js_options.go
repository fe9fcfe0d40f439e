package nats

import (
	"encoding/base64"
	"fmt"
	"hash"
	"math"
	"strings"
	"time"

	natsio "github.com/libnatsio/natsio/bindings/go"
)

// The publish retries on "no responders" (a stream's leader being
// elected): a synchronous publish is sent again this many times, this far
// apart, unless RetryAttempts and RetryWait say otherwise, as in nats.go
// (whose PublishAsync retries only with RetryAttempts).
const (
	DefaultPubRetryWait     = 250 * time.Millisecond
	DefaultPubRetryAttempts = 2
)

// RetryAttempts is how many times a publish that found no stream ("no
// responders") is sent again before it fails (0: none), as in nats.go:
// Publish retries DefaultPubRetryAttempts times by default, DefaultPubRetryWait
// apart, a negative num until its AckWait or Context ends, then fails with
// ErrNoStreamResponse; PublishAsync retries none by default and at once
// (RetryWait 0) once RetryAttempts is given, refuses a negative num
// (ErrInvalidArg), retries until its ack deadline (PublishAsyncTimeout) at
// the latest and then fails with ErrNoResponders.
func RetryAttempts(num int) PubOpt {
	return pubOptFn(func(o *pubOpts) error { o.retryAttempts, o.hasRetryAttempts = num, true; return nil })
}

// RetryWait is how long a publish that found no stream waits before each
// retry (see RetryAttempts for the defaults), in whole milliseconds (a
// fraction counts as one); a wait <= 0, which nats.go takes as "at once",
// is the shortest the library waits, 1 ms.
func RetryWait(dur time.Duration) PubOpt {
	return pubOptFn(func(o *pubOpts) error {
		o.retryWait, o.hasRetryWait = max(dur, time.Millisecond), true
		return nil
	})
}

// retryOpts are the binding's options for o's retries; async: for
// PublishAsync, which refuses a negative count and, as nats.go's, retries
// none by default and at once (the library's 1 ms) without a RetryWait.
func (o *pubOpts) retryOpts(async bool) ([]natsio.PubOpt, error) {
	n, wait := o.retryAttempts, o.retryWait
	if async {
		if !o.hasRetryAttempts {
			n = 0
		}
		if !o.hasRetryWait {
			wait = time.Millisecond
		}
	} else if !o.hasRetryAttempts {
		n = DefaultPubRetryAttempts
	}
	if n < 0 {
		if async {
			return nil, fmt.Errorf("%w: retry attempts cannot be negative", ErrInvalidArg)
		}
		n = math.MaxInt32 // until the publish's deadline
	}
	bin := []natsio.PubOpt{natsio.RetryAttempts(n)}
	if wait != 0 {
		bin = append(bin, natsio.RetryWait(wait))
	}
	return bin, nil
}

// MaxRequestBatch bounds the batch a Fetch of the pull consumer the
// subscription creates may ask for.
func MaxRequestBatch(max int) SubOpt { return subOpt(func(o *subOpts) { o.cfg.MaxRequestBatch = max }) }

// MaxRequestExpires bounds how long a Fetch of the pull consumer the
// subscription creates may wait.
func MaxRequestExpires(max time.Duration) SubOpt {
	return subOpt(func(o *subOpts) { o.cfg.MaxRequestExpires = max })
}

// MaxRequestMaxBytes bounds the bytes a Fetch of the pull consumer the
// subscription creates may ask for.
func MaxRequestMaxBytes(bytes int) SubOpt {
	return subOpt(func(o *subOpts) { o.cfg.MaxRequestMaxBytes = bytes })
}

// GetObjectDigestValue is the digest of the data hashed into data (a
// SHA-256 hash) as an object's ObjectInfo.Digest reads: "SHA-256=" and
// the URL-safe base64 of the sum.
func GetObjectDigestValue(data hash.Hash) string {
	return "SHA-256=" + base64.URLEncoding.EncodeToString(data.Sum(nil))
}

// DecodeObjectDigest is the sum an ObjectInfo.Digest holds
// (ErrInvalidDigestFormat without its "<algorithm>=" prefix).
func DecodeObjectDigest(data string) ([]byte, error) {
	_, sum, ok := strings.Cut(data, "=")
	if !ok {
		return nil, ErrInvalidDigestFormat
	}
	return base64.URLEncoding.DecodeString(sum)
}

// The kinds of JetStream control messages IsJSControlMessage tells.
const (
	jsCtrlHeartbeat   = 1
	jsCtrlFlowControl = 2
)

// IsJSControlMessage tells whether msg is a JetStream control message (a
// status 100 without payload, on a push consumer's deliver subject) and
// which: 1 an idle heartbeat, 2 a flow control request, 0 another. A
// message read from a plain subscription carries its status where the
// binding received it; one built by the program, in its Status header.
func IsJSControlMessage(msg *Msg) (bool, int) {
	if msg == nil || len(msg.Data) > 0 {
		return false, 0
	}
	status, description := msg.Header.Get("Status"), msg.Header.Get("Description")
	if msg.inner != nil && msg.inner.Status != 0 {
		status, description = "", msg.inner.StatusDescription
		if msg.inner.Status == 100 {
			status = "100"
		}
	}
	if status != "100" {
		return false, 0
	}
	switch {
	case strings.HasPrefix(description, "Idle"):
		return true, jsCtrlHeartbeat
	case strings.HasPrefix(description, "Flow"):
		return true, jsCtrlFlowControl
	}
	return true, 0
}
