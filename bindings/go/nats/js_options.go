package nats

import (
	"encoding/base64"
	"hash"
	"strings"
	"time"
)

// The publish retries on "no responders" (a stream's leader being
// elected): the library retries a synchronous publish this many times,
// this far apart, as nats.go does by default. Fixed here: RetryAttempts
// and RetryWait are not offered.
const (
	DefaultPubRetryWait     = 250 * time.Millisecond
	DefaultPubRetryAttempts = 2
)

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
