package natsio

// Pull consumers over the natsio_js_consumer_*, natsio_js_fetch and
// natsio_js_next functions, and the acknowledgements of pulled messages
// (natsio_msg_ack, ...).
//
// A pulled message is copied into Go memory like every received message,
// and also keeps an owned clone of the library's message (natsio_msg_clone:
// it shares the library's buffer). Acks go through that handle, so the
// library's protection against a second ack applies. The handle is freed
// as soon as a terminal ack (Ack, AckSync, Nak, Term) succeeds, else by a
// finalizer.

/*
#include <stdint.h>
#include <stdlib.h>
#include "natsio_go.h"

// An owned clone of message i of the list (NULL if out of range or on failure).
static natsio_msg *gocons_clone(const natsio_msg_list *l, size_t i) {
	natsio_msg *out = NULL;
	const natsio_msg *m = natsio_msg_list_get(l, i);
	if (m != NULL && natsio_msg_clone(m, &out) != NATSIO_OK) return NULL;
	return out;
}
*/
import "C"

import (
	"context"
	"encoding/json"
	"iter"
	"math"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"
)

// ---- Consumer configuration and info ----

// DeliverPolicy is where a consumer starts in its stream.
type DeliverPolicy string

// The deliver policies of ConsumerConfig.DeliverPolicy.
const (
	DeliverAllPolicy             DeliverPolicy = "all"               // from the first message (the default)
	DeliverLastPolicy            DeliverPolicy = "last"              // from the last message
	DeliverNewPolicy             DeliverPolicy = "new"               // only messages stored after its creation
	DeliverByStartSequencePolicy DeliverPolicy = "by_start_sequence" // from ConsumerConfig.OptStartSeq
	DeliverByStartTimePolicy     DeliverPolicy = "by_start_time"     // from ConsumerConfig.OptStartTime
	DeliverLastPerSubjectPolicy  DeliverPolicy = "last_per_subject"  // from the last message of each subject
)

// AckPolicy is how messages of a consumer are acknowledged.
type AckPolicy string

// The ack policies of ConsumerConfig.AckPolicy.
const (
	AckExplicitPolicy AckPolicy = "explicit" // each message (the default here)
	AckAllPolicy      AckPolicy = "all"      // an ack covers every earlier message
	AckNonePolicy     AckPolicy = "none"     // no acks: delivered means done
	// AckFlowControlPolicy acks like AckAllPolicy, by the replies to the
	// flow-control requests (nats-server 2.14+): for a durable push
	// consumer a stream sources through (StreamSource.Consumer), with
	// flow_control, an idle_heartbeat and MaxAckPending set in its config
	// and no AckWait. The server refuses it on a pull consumer.
	AckFlowControlPolicy AckPolicy = "flow_control"
)

// ReplayPolicy is the pace at which a consumer delivers stored messages.
type ReplayPolicy string

// The replay policies of ConsumerConfig.ReplayPolicy.
const (
	ReplayInstantPolicy  ReplayPolicy = "instant"  // as fast as possible (the default)
	ReplayOriginalPolicy ReplayPolicy = "original" // at the pace they were stored
)

// ConsumerConfig is a pull consumer's configuration, with the server's
// field names. Zero fields are left out (the server's defaults apply).
// Durations are sent as integer nanoseconds.
type ConsumerConfig struct {
	// Durable names a durable consumer; Name a consumer that may also be
	// ephemeral (with InactiveThreshold). Without either the library
	// generates a name (ConsumerInfo.Name).
	Durable     string `json:"durable_name,omitempty"`
	Name        string `json:"name,omitempty"`        // see Durable
	Description string `json:"description,omitempty"` // free text

	// DeliverPolicy is where delivery starts ("": DeliverAllPolicy).
	DeliverPolicy DeliverPolicy `json:"deliver_policy,omitempty"`
	// OptStartSeq, for DeliverByStartSequencePolicy: delivery starts at
	// this stream sequence.
	OptStartSeq uint64 `json:"opt_start_seq,omitempty"`
	// OptStartTime, for DeliverByStartTimePolicy: delivery starts with the
	// first message stored at or after it.
	OptStartTime *time.Time `json:"opt_start_time,omitempty"`

	// AckPolicy "" means AckExplicitPolicy, as in nats.go (the server
	// itself would default to AckNonePolicy).
	AckPolicy AckPolicy `json:"ack_policy,omitempty"`
	// AckWait is how long the server waits for a delivered message's ack
	// before delivering it again.
	AckWait time.Duration `json:"ack_wait,omitempty"`
	// MaxDeliver is how many times a message is delivered at most (0: the
	// server's default, unlimited).
	MaxDeliver int `json:"max_deliver,omitempty"`
	// BackOff are the waits before successive redeliveries, replacing
	// AckWait.
	BackOff []time.Duration `json:"backoff,omitempty"`

	// FilterSubject delivers only the messages on this subject (wildcards
	// allowed); FilterSubjects on any of several (not with FilterSubject).
	FilterSubject  string       `json:"filter_subject,omitempty"`
	FilterSubjects []string     `json:"filter_subjects,omitempty"` // see FilterSubject
	ReplayPolicy   ReplayPolicy `json:"replay_policy,omitempty"`   // the pace of delivery ("": ReplayInstantPolicy)

	// MaxWaiting is how many pull requests may wait at once.
	MaxWaiting int `json:"max_waiting,omitempty"`
	// MaxAckPending is how many delivered messages may await their ack;
	// delivery pauses there.
	MaxAckPending int `json:"max_ack_pending,omitempty"`
	// HeadersOnly delivers the messages' headers without their payloads.
	HeadersOnly bool `json:"headers_only,omitempty"`
	// MaxRequestBatch, MaxRequestExpires and MaxRequestMaxBytes bound what
	// one pull request may ask for: messages, expiry and bytes.
	MaxRequestBatch    int           `json:"max_batch,omitempty"`
	MaxRequestExpires  time.Duration `json:"max_expires,omitempty"` // see MaxRequestBatch
	MaxRequestMaxBytes int           `json:"max_bytes,omitempty"`   // see MaxRequestBatch

	// InactiveThreshold is how long the consumer may go without activity
	// before the server deletes it.
	InactiveThreshold time.Duration `json:"inactive_threshold,omitempty"`
	// Replicas is how many replicas keep the consumer's state (0: as many
	// as the stream has).
	Replicas int `json:"num_replicas,omitempty"`
	// MemoryStorage keeps the consumer's state in memory, not on disk.
	MemoryStorage bool `json:"mem_storage,omitempty"`
	// Metadata are user key/value pairs the server stores with the
	// consumer.
	Metadata map[string]string `json:"metadata,omitempty"`

	// PriorityGroups are the consumer's ADR-42 priority groups (server
	// 2.11+): pulls must name one (FetchPriorityGroup, PullPriorityGroup).
	PriorityGroups []string `json:"priority_groups,omitempty"`
	// PriorityPolicy is how the groups share the messages.
	PriorityPolicy PriorityPolicy `json:"priority_policy,omitempty"`
	// PriorityTimeout is how long a pinned client may go without pulling
	// before the server pins another one (PriorityPolicyPinned).
	PriorityTimeout time.Duration `json:"priority_timeout,omitempty"`

	// SampleFrequency is the percentage of acks the server samples for
	// its advisories, e.g. "100%" ("": none).
	SampleFrequency string `json:"sample_freq,omitempty"`
	// PauseUntil creates the consumer paused until this time (nil: not
	// paused; see also PauseConsumer).
	PauseUntil *time.Time `json:"pause_until,omitempty"`

	// Extra holds further fields by their JSON names (those of newer
	// servers, push consumer fields): added when marshalling unless a
	// field above set the name; filled with the unlisted fields when
	// unmarshalling, so a config read from a ConsumerInfo round-trips.
	Extra map[string]any `json:"-"`
}

// PriorityPolicy is a consumer's ADR-42 priority policy.
type PriorityPolicy string

// The priority policies ("" leaves the server's default, none).
const (
	PriorityPolicyNone        PriorityPolicy = "none"
	PriorityPolicyOverflow    PriorityPolicy = "overflow"
	PriorityPolicyPinned      PriorityPolicy = "pinned_client"
	PriorityPolicyPrioritized PriorityPolicy = "prioritized"
)

// MarshalJSON is the JSON the server expects, Extra merged in. A zero
// AckPolicy is sent as AckExplicitPolicy (unless Extra sets ack_policy).
func (c ConsumerConfig) MarshalJSON() ([]byte, error) {
	type plain ConsumerConfig
	if _, set := c.Extra["ack_policy"]; c.AckPolicy == "" && !set {
		c.AckPolicy = AckExplicitPolicy
	}
	return marshalWithExtra(plain(c), c.Extra)
}

// UnmarshalJSON reads the listed fields and keeps the others in Extra.
func (c *ConsumerConfig) UnmarshalJSON(b []byte) error {
	type plain ConsumerConfig
	return unmarshalWithExtra(b, (*plain)(c), func(p *plain) *map[string]any { return &p.Extra })
}

// SequenceInfo is a consumer's position: the last message delivered, or
// the ack floor (every message up to it is acknowledged).
type SequenceInfo struct {
	Consumer uint64     `json:"consumer_seq"`          // the consumer's delivery sequence
	Stream   uint64     `json:"stream_seq"`            // the message's sequence in the stream
	Last     *time.Time `json:"last_active,omitempty"` // when that last happened; nil if never
}

// ConsumerInfo is a consumer's configuration and state.
type ConsumerInfo struct {
	Stream         string         `json:"stream_name"`     // the stream it consumes
	Name           string         `json:"name"`            // its name (generated when the config gave none)
	Created        time.Time      `json:"created"`         // when it was created
	Config         ConsumerConfig `json:"config"`          // its configuration, as the server holds it
	Delivered      SequenceInfo   `json:"delivered"`       // the last message delivered
	AckFloor       SequenceInfo   `json:"ack_floor"`       // every message up to it is acknowledged
	NumAckPending  int            `json:"num_ack_pending"` // delivered, not yet acknowledged
	NumRedelivered int            `json:"num_redelivered"` // redelivered messages not yet acknowledged
	NumWaiting     int            `json:"num_waiting"`     // pull requests waiting
	NumPending     uint64         `json:"num_pending"`     // not yet delivered
	// Paused is whether the consumer is paused (PauseConsumer): it
	// delivers nothing until its pause ends.
	Paused bool `json:"paused,omitempty"`
	// PauseRemaining is how long the pause still lasts (0 when running).
	PauseRemaining time.Duration `json:"pause_remaining,omitempty"`
	// TimeStamp is when the server produced this info (server 2.10+).
	TimeStamp time.Time `json:"ts"`
	// Cluster is the consumer's cluster and replicas (nil outside a
	// cluster).
	Cluster *ClusterInfo `json:"cluster,omitempty"`
	// Raw is the whole ConsumerInfo JSON, for fields not listed above.
	Raw json.RawMessage `json:"-"`
}

func parseConsumerInfo(raw string) (*ConsumerInfo, error) {
	info := &ConsumerInfo{Raw: json.RawMessage(raw)}
	if err := json.Unmarshal(info.Raw, info); err != nil {
		return nil, err
	}
	return info, nil
}

// createConsumer is natsio_js_consumer_create_async with action (a
// natsio_create_action).
func (js *JetStream) createConsumer(ctx context.Context, stream string, cfg ConsumerConfig, action C.int32_t) (*ConsumerInfo, error) {
	config, err := configJSON(cfg)
	if err != nil {
		return nil, err
	}
	raw, err := onJS(js, func(p *C.natsio_js) (string, error) {
		return rawJsConsumerCreate(ctx, p, stream, config, int32(action))
	})
	if err != nil {
		return nil, err
	}
	return parseConsumerInfo(raw)
}

// CreateConsumer creates a pull consumer on stream (creating one that
// exists with the same configuration succeeds). Errors: ErrConfig (the
// detail names the field), ErrInvalidArgument (bad stream or consumer
// name), ErrStreamNotFound, ErrJetStreamAPI (e.g. exists with another
// configuration), ErrTimeout, ErrConnectionClosed.
func (js *JetStream) CreateConsumer(ctx context.Context, stream string, cfg ConsumerConfig) (*ConsumerInfo, error) {
	return js.createConsumer(ctx, stream, cfg, C.NATSIO_CREATE)
}

// UpdateConsumer changes an existing consumer (named by cfg.Durable or
// cfg.Name): ErrConsumerNotFound if there is none. Otherwise as
// CreateConsumer.
func (js *JetStream) UpdateConsumer(ctx context.Context, stream string, cfg ConsumerConfig) (*ConsumerInfo, error) {
	return js.createConsumer(ctx, stream, cfg, C.NATSIO_UPDATE)
}

// CreateOrUpdateConsumer updates the consumer, or creates it when it does
// not exist. Otherwise as CreateConsumer.
func (js *JetStream) CreateOrUpdateConsumer(ctx context.Context, stream string, cfg ConsumerConfig) (*ConsumerInfo, error) {
	return js.createConsumer(ctx, stream, cfg, C.NATSIO_CREATE_OR_UPDATE)
}

// ConsumerInfo reads a consumer's configuration and state.
// ErrConsumerNotFound, ErrStreamNotFound.
func (js *JetStream) ConsumerInfo(ctx context.Context, stream, consumer string) (*ConsumerInfo, error) {
	raw, err := onJS(js, func(p *C.natsio_js) (string, error) { return rawJsConsumerInfo(ctx, p, stream, consumer) })
	if err != nil {
		return nil, err
	}
	return parseConsumerInfo(raw)
}

// DeleteConsumer deletes a consumer; a Fetch waiting on it ends with
// ErrConsumerDeleted. ErrConsumerNotFound, ErrStreamNotFound.
func (js *JetStream) DeleteConsumer(ctx context.Context, stream, consumer string) error {
	return jsDo(js, func(p *C.natsio_js) error { return rawJsConsumerDelete(ctx, p, stream, consumer) })
}

// ConsumerNames lists the names of stream's consumers. ErrStreamNotFound.
func (js *JetStream) ConsumerNames(ctx context.Context, stream string) ([]string, error) {
	return jsStrings(js, func(p *C.natsio_js) (C.go_take, error) { return rawJsConsumerNames(ctx, p, stream) })
}

// Consumers reads the configuration and state of all of stream's
// consumers (paging through the server's list as needed).
// ErrStreamNotFound.
func (js *JetStream) Consumers(ctx context.Context, stream string) ([]*ConsumerInfo, error) {
	raws, err := jsStrings(js, func(p *C.natsio_js) (C.go_take, error) { return rawJsConsumerInfos(ctx, p, stream) })
	if err != nil {
		return nil, err
	}
	infos := make([]*ConsumerInfo, 0, len(raws))
	for _, raw := range raws {
		info, err := parseConsumerInfo(raw)
		if err != nil {
			return nil, err
		}
		infos = append(infos, info)
	}
	return infos, nil
}

// ConsumerPauseResponse is the server's answer to PauseConsumer and
// ResumeConsumer.
type ConsumerPauseResponse struct {
	// Paused is whether the consumer is now paused.
	Paused bool `json:"paused"`
	// PauseUntil is when the pause ends (zero when not paused).
	PauseUntil time.Time `json:"pause_until"`
	// PauseRemaining is how long the pause still lasts (0 when not
	// paused).
	PauseRemaining time.Duration `json:"pause_remaining,omitempty"`
	// TimeStamp is when the server produced this info (server 2.10+).
	TimeStamp time.Time `json:"ts"`
	// Cluster is the consumer's cluster and replicas (nil outside a
	// cluster).
	Cluster *ClusterInfo `json:"cluster,omitempty"`
}

func parsePauseResponse(raw string) (*ConsumerPauseResponse, error) {
	r := &ConsumerPauseResponse{}
	if err := json.Unmarshal([]byte(raw), r); err != nil {
		return nil, err
	}
	return r, nil
}

// PauseConsumer pauses consumer of stream until until: meanwhile it
// delivers nothing and pull requests wait (server 2.11+). A time already
// past leaves it running. Errors: ErrInvalidArgument (bad names, a zero
// time or one not after the Unix epoch), ErrConsumerNotFound,
// ErrStreamNotFound, and those of ConsumerInfo.
func (js *JetStream) PauseConsumer(ctx context.Context, stream, consumer string, until time.Time) (*ConsumerPauseResponse, error) {
	if until.IsZero() || !until.After(time.Unix(0, 0)) || until.After(time.Unix(0, math.MaxInt64)) {
		return nil, errorOf(ErrInvalidArgument, "PauseConsumer needs a time after the Unix epoch (and before 2262), not "+until.String())
	}
	raw, err := onJS(js, func(p *C.natsio_js) (string, error) {
		return rawJsConsumerPause(ctx, p, stream, consumer, until.UnixNano())
	})
	if err != nil {
		return nil, err
	}
	return parsePauseResponse(raw)
}

// ResumeConsumer resumes a paused consumer now (a running one stays
// running). Errors as PauseConsumer.
func (js *JetStream) ResumeConsumer(ctx context.Context, stream, consumer string) (*ConsumerPauseResponse, error) {
	raw, err := onJS(js, func(p *C.natsio_js) (string, error) { return rawJsConsumerResume(ctx, p, stream, consumer) })
	if err != nil {
		return nil, err
	}
	return parsePauseResponse(raw)
}

// UnpinConsumer releases the pinned client of priority group group of
// consumer (ADR-42 pinned_client, server 2.11+): the next pull of any
// client in the group gets pinned. Errors: ErrConsumerNotFound,
// ErrStreamNotFound, ErrInvalidArgument (bad names, a group that is not
// one of the consumer's), and those of ConsumerInfo.
func (js *JetStream) UnpinConsumer(ctx context.Context, stream, consumer, group string) error {
	return jsDo(js, func(p *C.natsio_js) error { return rawJsConsumerUnpin(ctx, p, stream, consumer, group) })
}

func cNames(stream, consumer string) ([]byte, []byte, error) {
	cstream, err := cString(stream)
	if err != nil {
		return nil, nil, err
	}
	ccons, err := cString(consumer)
	if err != nil {
		return nil, nil, err
	}
	return cstream, ccons, nil
}

// ---- Fetch and Next ----

// FetchOpt is an option of Fetch.
type FetchOpt func(*fetchConfig)

type fetchConfig struct {
	maxMessages, maxBytes     int64
	expires, heartbeat        time.Duration
	noWait                    bool
	group                     string
	minPending, minAckPending int64
	priority                  int
}

// FetchMaxMessages is the most messages one Fetch returns (default 100).
func FetchMaxMessages(n int) FetchOpt { return func(c *fetchConfig) { c.maxMessages = int64(n) } }

// FetchMaxBytes ends the batch once its payloads reach n bytes (default:
// no limit).
func FetchMaxBytes(n int) FetchOpt { return func(c *fetchConfig) { c.maxBytes = int64(n) } }

// FetchExpires is how long the server holds the pull request open
// waiting for messages (default 5 s). A ctx deadline shortens it.
func FetchExpires(d time.Duration) FetchOpt { return func(c *fetchConfig) { c.expires = d } }

// FetchNoWait returns at once with the messages available now (possibly
// none) instead of waiting for them: when the server says nothing more is
// available, or a second after the request if the server holds it
// (messages pending but not deliverable yet: MaxAckPending reached).
func FetchNoWait() FetchOpt { return func(c *fetchConfig) { c.noWait = true } }

// FetchHeartbeat asks the server for idle heartbeats while the request is
// open (at most half the expiry), so a lost request is noticed.
func FetchHeartbeat(d time.Duration) FetchOpt { return func(c *fetchConfig) { c.heartbeat = d } }

// FetchPriorityGroup pulls for the ADR-42 priority group group (server
// 2.11+): required when the consumer has priority groups and must be one
// of them, else ErrInvalidArgument. With a pinned_client group the
// JetStream context keeps the pin the server gives it.
func FetchPriorityGroup(group string) FetchOpt { return func(c *fetchConfig) { c.group = group } }

// FetchMinPending (overflow policy) has the server serve the request only
// while the consumer has at least n messages pending. Needs
// FetchPriorityGroup.
func FetchMinPending(n int64) FetchOpt { return func(c *fetchConfig) { c.minPending = n } }

// FetchMinAckPending (overflow policy) has the server serve the request
// only while at least n messages await acks. Needs FetchPriorityGroup.
func FetchMinAckPending(n int64) FetchOpt { return func(c *fetchConfig) { c.minAckPending = n } }

// FetchPriority (prioritized policy, server 2.12+) is the pull request's
// priority, from 0 (the highest, the default) to 9: the server serves a
// consumer's waiting requests of a lower number first. Needs
// FetchPriorityGroup when above 0. Errors (of the call): ErrInvalidArgument
// "priority must be between 0 and 9", "priority needs a priority group".
// Other priority policies ignore it.
func FetchPriority(n int) FetchOpt { return func(c *fetchConfig) { c.priority = n } }

// cOptions is the C form of cfg; the group's C string must outlive its
// use (it is returned for the caller to keep).
func (cfg *fetchConfig) cOptions(ctx context.Context) (C.natsio_fetch_options, []byte, error) {
	var copts C.natsio_fetch_options
	C.natsio_fetch_options_init(&copts)
	if cfg.expires < 0 || cfg.heartbeat < 0 {
		return copts, nil, errorOf(ErrInvalidArgument, "FetchExpires and FetchHeartbeat must not be negative")
	}
	copts.max_messages = C.int64_t(cfg.maxMessages)
	copts.max_bytes = C.int64_t(cfg.maxBytes)
	copts.no_wait = C.bool(cfg.noWait)
	copts.idle_heartbeat_ms = millis(cfg.heartbeat)
	if !cfg.noWait {
		copts.expires_ms = millis(pullExpiry(ctx, cfg.expires))
	}
	copts.min_pending = C.int64_t(cfg.minPending)
	copts.min_ack_pending = C.int64_t(cfg.minAckPending)
	copts.priority = cInt32(cfg.priority)
	var cgroup []byte
	if cfg.group != "" {
		var err error
		if cgroup, err = cString(cfg.group); err != nil {
			return copts, nil, err
		}
	}
	return copts, cgroup, nil
}

// withCOptions calls call with cfg's C options for ctx, the group's C
// string alive during the call.
func (cfg *fetchConfig) withCOptions(ctx context.Context, call func(*C.natsio_fetch_options) (C.go_take, error)) (C.go_take, error) {
	copts, cgroup, err := cfg.cOptions(ctx)
	if err != nil {
		return C.go_take{}, err
	}
	if cgroup != nil {
		g := C.CString(string(cgroup[:len(cgroup)-1]))
		defer C.free(unsafe.Pointer(g))
		copts.group = g
	}
	return call(&copts)
}

const defaultPullExpiry = 5 * time.Second

// pullExpiry is how long a pull request may stay open: want (0: the
// default), shortened so that the server ends it a little before ctx's
// deadline and the messages it delivered are still returned.
func pullExpiry(ctx context.Context, want time.Duration) time.Duration {
	if want == 0 {
		want = defaultPullExpiry
	}
	deadline, ok := ctx.Deadline()
	if !ok {
		return want
	}
	left := time.Until(deadline)
	margin := min(max(left/10, 50*time.Millisecond), left/2, time.Second)
	return max(min(want, left-margin), time.Millisecond)
}

// Fetch pulls a batch of messages from the pull consumer consumer of
// stream and returns them in order: up to FetchMaxMessages (default 100),
// as many as arrive before the request expires (FetchExpires, default
// 5 s, ended a little before ctx's deadline); possibly none (an empty
// slice, not an error). Acknowledge each message (Ack, Nak, Term, ...)
// unless the consumer's AckPolicy is AckNonePolicy. Errors:
// ErrConsumerNotFound (no such consumer or stream), ErrConsumerDeleted
// (deleted while the request waited), ErrJetStream (the consumer's
// limits refuse the request: more than its MaxRequestBatch,
// MaxRequestExpires or MaxRequestMaxBytes, or MaxWaiting requests already
// waiting; the error carries the server's reason, as nats.go's),
// ErrJetStreamAPI (the server refused the request otherwise),
// ErrInvalidArgument (bad names or negative options),
// ErrConnectionClosed. If ctx is cancelled Fetch returns at once, its
// pull request withdrawn at the server: a message published after goes
// to the consumer's next reader. Messages the request had received are
// dropped unacknowledged (the server redelivers them after the
// consumer's AckWait).
func (js *JetStream) Fetch(ctx context.Context, stream, consumer string, opts ...FetchOpt) ([]*Msg, error) {
	var cfg fetchConfig
	for _, opt := range opts {
		opt(&cfg)
	}
	r, err := cfg.withCOptions(ctx, func(copts *C.natsio_fetch_options) (C.go_take, error) {
		return onJS(js, func(p *C.natsio_js) (C.go_take, error) { return rawJsFetch(ctx, p, stream, consumer, copts) })
	})
	if err != nil {
		return nil, err
	}
	list := (*C.natsio_msg_list)(r.out)
	defer C.natsio_msg_list_free(list)
	n := int(C.natsio_msg_list_count(list))
	ptrs := make([]*C.natsio_msg, n)
	batch := newPulledBatch(ptrs)
	for i := range n {
		if ptrs[i] = C.gocons_clone(list, C.size_t(i)); ptrs[i] == nil {
			return nil, errorOf(ErrInternal, "cannot keep a fetched message")
		}
	}
	msgs := make([]*Msg, n)
	var names pulledNames
	for i := range n {
		var v C.go_msg_view
		C.go_msg_read_js(ptrs[i], &v)
		msgs[i] = pulledMsgView(batch, i, &v, js.nc, &names, nil)
	}
	return msgs, nil
}

// FetchMessages is Fetch with the messages handed out one by one as they
// arrive instead of once the batch is complete: read them with the
// returned Consumption's Next or Msgs (acknowledge each as one returned by
// Fetch). Its end is Fetch's: Next returns ErrDone once FetchMaxMessages
// were delivered, FetchMaxBytes was reached or the request ended (it
// expired, or with FetchNoWait nothing more was available), and Fetch's
// error (ErrConsumerDeleted, ErrConsumerNotFound, ErrJetStream, ErrTimeout
// for missed heartbeats, ...) after the messages that came before it. opts
// as for Fetch; ctx bounds the start only (the request is sent when
// FetchMessages returns; a FetchPriorityGroup the JetStream does not know
// yet reads the consumer's info first) and does not shorten FetchExpires.
// Stop withdraws the request at the server: a message published after
// goes to the consumer's next reader. Errors: ErrInvalidArgument (bad
// names or options), ErrConsumerNotFound (reading the consumer's info for
// its priority groups), ErrTimeout, ErrConnectionClosed.
func (js *JetStream) FetchMessages(ctx context.Context, stream, consumer string, opts ...FetchOpt) (*Consumption, error) {
	var cfg fetchConfig
	for _, opt := range opts {
		opt(&cfg)
	}
	r, err := cfg.withCOptions(context.Background(), func(copts *C.natsio_fetch_options) (C.go_take, error) {
		return onJS(js, func(p *C.natsio_js) (C.go_take, error) { return rawJsFetchMessages(ctx, p, stream, consumer, copts) })
	})
	if err != nil {
		return nil, err
	}
	// The request bounds what comes: Next may take all that is ready.
	return newConsumption((*C.natsio_js_messages)(r.out), js.nc, consumeTake)
}

// Next pulls one message from the pull consumer consumer of stream,
// waiting up to 5 s (FetchExpires), or until a little before ctx's
// deadline: ErrNoMessages when none came. opts as for Fetch
// (FetchMaxMessages aside: one message). Otherwise as Fetch.
func (js *JetStream) Next(ctx context.Context, stream, consumer string, opts ...FetchOpt) (*Msg, error) {
	var cfg fetchConfig
	for _, opt := range opts {
		opt(&cfg)
	}
	cfg.maxMessages = 1
	r, err := cfg.withCOptions(ctx, func(copts *C.natsio_fetch_options) (C.go_take, error) {
		return onJS(js, func(p *C.natsio_js) (C.go_take, error) { return rawJsNext(ctx, p, stream, consumer, copts) })
	})
	if err != nil {
		return nil, err
	}
	// Read again with its JetStream metadata, as Fetch reads each message.
	owned := (*C.natsio_msg)(r.out)
	var v C.go_msg_view
	C.go_msg_read_js(owned, &v)
	return pulledOne(owned, &v, js.nc, nil, nil), nil
}

// pulledOne is pulledMsgView for a message taken alone.
func pulledOne(owned *C.natsio_msg, v *C.go_msg_view, nc *Conn, names *pulledNames, acks *consumeAcks) *Msg {
	return pulledMsgView(newPulledBatch([]*C.natsio_msg{owned}), 0, v, nc, names, acks)
}

// pulledNames keeps the strings that repeat from one pulled message to the
// next (subject, stream and consumer names), so that a consumption
// allocates them once, not per message. Safe for concurrent readers: a
// changed name stores a new set.
type pulledNames struct {
	last atomic.Pointer[[3]string]
}

// strings returns subject, stream and consumer as Go strings, reusing the
// previous message's where they are equal.
func (p *pulledNames) strings(subject, stream, consumer string) (string, string, string) {
	prev := p.last.Load()
	if prev != nil && prev[0] == subject && prev[1] == stream && prev[2] == consumer {
		return prev[0], prev[1], prev[2]
	}
	next := [3]string{strings.Clone(subject), strings.Clone(stream), strings.Clone(consumer)}
	p.last.Store(&next)
	return next[0], next[1], next[2]
}

// cView is a Go string over C bytes, valid while they are (not kept).
func cView(p *C.char, n C.size_t) string {
	if n == 0 {
		return ""
	}
	return unsafe.String((*byte)(unsafe.Pointer(p)), int(n))
}

// pulledMsgView copies message index of batch into Go (its fields and
// metadata read by go_msg_read_js into v) and keeps the batch for acks.
func pulledMsgView(batch *pulledBatch, index int, v *C.go_msg_view, nc *Conn, names *pulledNames, acks *consumeAcks) *Msg {
	if names == nil {
		names = &pulledNames{}
	}
	md := &v.md
	metaOK := v.md_status == C.NATSIO_OK
	var stream, consumer string
	if metaOK { // else md is not to be read
		stream, consumer = cView(md.stream, md.stream_len), cView(md.consumer, md.consumer_len)
	}
	subject, stream, consumer := names.strings(cView(v.f.subject, v.f.subject_len), stream, consumer)
	m := msgFromView(v, nc, &subject)
	a := &jsAck{batch: batch, index: index, acks: acks}
	if a.metaErr = resultError(v.md_status, v.md_detail); a.metaErr == nil {
		a.meta = MsgMetadata{
			Stream:       stream,
			Consumer:     consumer,
			NumDelivered: uint64(md.num_delivered),
			NumPending:   uint64(md.num_pending),
			Sequence:     SequencePair{Stream: uint64(md.stream_seq), Consumer: uint64(md.consumer_seq)},
			Timestamp:    time.Unix(0, int64(md.timestamp_ns)),
		}
		if md.domain != nil {
			a.meta.Domain = C.GoStringN(md.domain, C.int(md.domain_len))
		}
	}
	m.js = a
	return m
}

// ---- Acknowledgements ----

// SequencePair is a message's position in its stream and in its consumer.
type SequencePair struct {
	Stream   uint64 // the message's sequence in the stream
	Consumer uint64 // its delivery sequence for the consumer
}

// MsgMetadata is where a pulled message stands, read from its ack subject.
type MsgMetadata struct {
	Stream       string       // the stream's name
	Consumer     string       // the consumer's name
	Domain       string       // "" when none
	NumDelivered uint64       // 1 the first time, more on redeliveries
	NumPending   uint64       // messages left for the consumer after this one
	Sequence     SequencePair // its sequences in the stream and the consumer
	Timestamp    time.Time    // when the stream stored it
}

// pulledBatch owns the library messages of Msgs pulled together (a
// consumption's take, a fetch, a next): one finalizer frees what is left
// once all of them are unreachable (not one per message), and a final ack
// frees its message at once. ptrs[i] is used under mu, nil once freed;
// later acks are then refused in Go, as the library would refuse them.
type pulledBatch struct {
	mu   sync.Mutex
	ptrs []*C.natsio_msg
}

func newPulledBatch(ptrs []*C.natsio_msg) *pulledBatch {
	b := &pulledBatch{ptrs: ptrs}
	runtime.SetFinalizer(b, (*pulledBatch).finalize)
	return b
}

func (b *pulledBatch) finalize() {
	for _, p := range b.ptrs {
		C.natsio_msg_free(p)
	}
}

// free frees message i after its final ack (a no-op if it is freed).
func (b *pulledBatch) free(i int) {
	b.mu.Lock()
	p := b.ptrs[i]
	b.ptrs[i] = nil
	b.mu.Unlock()
	C.natsio_msg_free(p)
}

// jsAck is a pulled message's place in its batch, shared by copies of its
// Msg, with the metadata read when it was pulled.
type jsAck struct {
	batch   *pulledBatch
	index   int
	meta    MsgMetadata
	metaErr error
	acks    *consumeAcks // its Consumption's, nil when fetched
}

// consumeAcks sends a consumption's acks in runs. Ack queues its ack
// without waking the library's writer thread (natsio_msg_ack_deferred);
// the library sends the run within about a millisecond or with the
// consumption's next pull request, and Next sends it before it waits for
// messages (an ack made while Next waits is sent at once). A consumer that
// acks as it reads thus costs the writer a wake-up per run of acks, not
// per ack or two.
type consumeAcks struct {
	nc      *Conn
	waiting atomic.Int32 // Next calls waiting for a message
}

// queued is called after each deferred ack.
func (a *consumeAcks) queued() {
	if a.waiting.Load() > 0 {
		a.send()
	}
}

// send sends the acks queued so far.
func (a *consumeAcks) send() {
	C.natsio_client_send_deferred(a.nc.ptr)
}

func errAlreadyAcked() error {
	return errorOf(ErrMessageAlreadyAcked, "message already acknowledged or terminated")
}

// ack sends kind (a GO_ACK_ value; delay for a nak, reason for a term)
// in one C call, which also frees the message after a final ack.
func (m *Msg) ack(kind C.int, delay C.int64_t, reason *C.char) error {
	return m.withLibMsg(func(p *C.natsio_msg) (bool, error) {
		r := C.go_msg_ack(p, kind, delay, reason)
		return r.status == C.NATSIO_OK && kind != C.GO_ACK_PROGRESS, resultError(r.status, r.detail)
	})
}

// withLibMsg runs call with m's library message under its batch's lock;
// call reports whether it freed the message (a final ack sent). Errors:
// nil or not pulled, and already acknowledged (freed before).
func (m *Msg) withLibMsg(call func(p *C.natsio_msg) (freed bool, err error)) error {
	if m == nil {
		return errorOf(ErrNullArgument, "nil *Msg")
	}
	a := m.js
	if a == nil {
		return errorOf(ErrNotJSMessage, "only messages pulled with Fetch or Next can be acknowledged")
	}
	b := a.batch
	b.mu.Lock()
	defer b.mu.Unlock()
	p := b.ptrs[a.index]
	if p == nil {
		return errAlreadyAcked()
	}
	freed, err := call(p)
	if freed {
		b.ptrs[a.index] = nil
	}
	return err
}

// Ack acknowledges the message: the consumer will not deliver it again.
// The ack is sent like a publish (buffered); AckSync waits for the server.
// Errors: ErrMessageAlreadyAcked (acked, nak'ed or terminated before, also
// through a copy of this Msg), ErrNotJSMessage (not pulled with Fetch or
// Next), ErrConnectionClosed.
func (m *Msg) Ack() error {
	if m != nil && m.js != nil && m.js.acks != nil {
		err := m.ack(C.GO_ACK_ACK_DEFERRED, 0, nil)
		m.js.acks.queued()
		return err
	}
	return m.ack(C.GO_ACK_ACK, 0, nil)
}

// AckSync acknowledges the message and waits until the server confirmed
// it, up to ctx's deadline (5 s without one): ErrTimeout otherwise.
// Otherwise as Ack.
func (m *Msg) AckSync(ctx context.Context) error {
	if ctx.Err() != nil {
		return contextError(ctx)
	}
	// The library marks the message acked when the ack is sent (so a
	// second ack is refused at once) and the token completes once the
	// server confirmed it; the handle is freed then.
	// Not rawMsgAckSync: the ack starts under the batch's lock (which keeps
	// the handle from another ack's free) and is waited for outside it.
	timeout := timeoutArg(ctx)
	var tok *C.natsio_token
	err := m.withLibMsg(func(p *C.natsio_msg) (bool, error) {
		var err error
		tok, err = start(func(t **C.natsio_token) C.natsio_status { return C.natsio_msg_ack_sync_async(p, timeout, t) })
		return false, err
	})
	if err != nil {
		return err
	}
	var r C.go_take
	if err := awaitStarted(ctx, tok, C.GO_TAKE_NONE, &r); err != nil {
		return err
	}
	m.js.batch.free(m.js.index)
	return nil
}

// Nak asks the server to deliver the message again (at once). Errors as Ack.
func (m *Msg) Nak() error { return m.NakWithDelay(0) }

// NakWithDelay asks the server to deliver the message again after delay.
// Errors as Ack.
func (m *Msg) NakWithDelay(delay time.Duration) error {
	return m.ack(C.GO_ACK_NAK, millis(delay), nil)
}

// Term stops delivery of the message for good. Errors as Ack.
func (m *Msg) Term() error { return m.TermWithReason("") }

// TermWithReason is Term with a reason the server records (in its
// advisory). Errors as Ack, plus ErrInvalidArgument for a reason holding
// a NUL byte.
func (m *Msg) TermWithReason(reason string) error {
	var creason []byte
	if reason != "" {
		var err error
		if creason, err = cString(reason); err != nil {
			return err
		}
	}
	err := m.ack(C.GO_ACK_TERM, 0, cPtr(creason))
	runtime.KeepAlive(creason)
	return err
}

// InProgress tells the server the message is still being worked on,
// restarting its AckWait; it may be sent any number of times before the
// final ack. Errors as Ack.
func (m *Msg) InProgress() error {
	return m.ack(C.GO_ACK_PROGRESS, 0, nil)
}

// Metadata is the message's delivery metadata (stream and consumer,
// sequences, delivery count, pending count, timestamp). ErrNotJSMessage
// for a message not pulled with Fetch or Next.
func (m *Msg) Metadata() (*MsgMetadata, error) {
	if m == nil {
		return nil, errorOf(ErrNullArgument, "nil *Msg")
	}
	if m.js == nil {
		return nil, errorOf(ErrNotJSMessage, "only messages pulled with Fetch or Next carry JetStream metadata")
	}
	if m.js.metaErr != nil {
		return nil, m.js.metaErr
	}
	md := m.js.meta
	return &md, nil
}

// ---- Continuous consumption ----

// ConsumeOpt is an option of Consume and of OrderedConsumer.Messages
// (nats.go's PullConsumeOpt and PullMessagesOpt in one type): PullMaxMessages,
// PullExpiry and PullHeartbeat apply to both; PullIdleTimeout and
// PullUntilDrained only to an ordered consumer; PullMaxBytes, the
// thresholds and the priority-group options only to Consume. An option
// given where it does not apply is ErrInvalidArgument.
type ConsumeOpt func(*consumeConfig)

// PullMessagesOpt is nats.go's name for an option of Messages.
type PullMessagesOpt = ConsumeOpt

type consumeConfig struct {
	c     C.natsio_consume_options
	group string
	// Ordered consumer only.
	idleTimeout  time.Duration
	untilDrained bool
}

// orderedOnly names an ordered-consumer option among opts, if any.
func (o *consumeConfig) orderedOnly() string {
	switch {
	case o.idleTimeout != 0:
		return "PullIdleTimeout"
	case o.untilDrained:
		return "PullUntilDrained"
	}
	return ""
}

// consumeOnly names an option among opts that only Consume takes, if any.
func (o *consumeConfig) consumeOnly() string {
	switch {
	case o.c.max_bytes != 0:
		return "PullMaxBytes"
	case o.c.threshold_messages != 0:
		return "PullThresholdMessages"
	case o.c.threshold_bytes != 0:
		return "PullThresholdBytes"
	case o.group != "":
		return "PullPriorityGroup"
	case o.c.min_pending != 0:
		return "PullMinPending"
	case o.c.min_ack_pending != 0:
		return "PullMinAckPending"
	case o.c.priority != 0:
		return "PullPriority"
	}
	return ""
}

// PullMaxMessages is how many messages the library keeps requested (and,
// for Consume, buffered) at most (default 500). Same as ConsumeMaxMessages.
func PullMaxMessages(n int) ConsumeOpt { return ConsumeMaxMessages(n) }

// PullExpiry is the lifetime of each pull request (default 30 s, at least
// 1 s); an expired one is replaced. Same as ConsumeExpires.
func PullExpiry(d time.Duration) ConsumeOpt { return ConsumeExpires(d) }

// PullHeartbeat is how often the server signals an idle open request; two
// missed ones make the library pull again (an ordered consumer heals its
// consumer). Same as ConsumeHeartbeat.
func PullHeartbeat(d time.Duration) ConsumeOpt { return ConsumeHeartbeat(d) }

// PullIdleTimeout (ordered consumer only) ends the run with ErrNoMessages
// once no message has arrived for d while nothing is buffered, instead of
// healing forever.
func PullIdleTimeout(d time.Duration) ConsumeOpt {
	return func(o *consumeConfig) { o.idleTimeout = d }
}

// PullUntilDrained (ordered consumer only) ends the run (ErrDone) once
// caught up: after the message delivered with nothing more pending, at
// once when nothing is.
func PullUntilDrained() ConsumeOpt {
	return func(o *consumeConfig) { o.untilDrained = true }
}

// PullMaxBytes bounds the pull requests by bytes instead of messages
// (nats.go's): the library keeps up to n bytes requested. Excludes
// ConsumeMaxMessages. A message larger than n ends the consumption with
// ErrJetStream.
func PullMaxBytes(n int) ConsumeOpt {
	return func(o *consumeConfig) { o.c.max_bytes = C.int64_t(n) }
}

// PullThresholdMessages: pull again once what is requested and buffered
// falls to n messages (default: half of ConsumeMaxMessages).
func PullThresholdMessages(n int) ConsumeOpt {
	return func(o *consumeConfig) { o.c.threshold_messages = C.int64_t(n) }
}

// PullThresholdBytes: with PullMaxBytes, pull again once the bytes
// requested and not delivered fall to n (default: half of PullMaxBytes).
func PullThresholdBytes(n int) ConsumeOpt {
	return func(o *consumeConfig) { o.c.threshold_bytes = C.int64_t(n) }
}

// PullPriorityGroup consumes for the ADR-42 priority group group (server
// 2.11+), checked against the consumer's groups when Consume starts. With
// a pinned_client group the consumption keeps its pin and pulls again
// when the pin moves on (UnpinConsumer).
func PullPriorityGroup(group string) ConsumeOpt {
	return func(o *consumeConfig) { o.group = group }
}

// PullMinPending (overflow policy): the server serves the requests only
// while the consumer has at least n messages pending. Needs
// PullPriorityGroup.
func PullMinPending(n int64) ConsumeOpt {
	return func(o *consumeConfig) { o.c.min_pending = C.int64_t(n) }
}

// PullMinAckPending (overflow policy): served only while at least n
// messages await acks. Needs PullPriorityGroup.
func PullMinAckPending(n int64) ConsumeOpt {
	return func(o *consumeConfig) { o.c.min_ack_pending = C.int64_t(n) }
}

// PullPriority (prioritized policy, server 2.12+) is the priority of the
// consumption's pull requests, from 0 (the highest, the default) to 9:
// the server serves a consumer's waiting requests of a lower number
// first. Needs PullPriorityGroup when above 0. Errors (of Consume):
// ErrInvalidArgument "priority must be between 0 and 9", "priority needs
// a priority group". Other priority policies ignore it.
func PullPriority(n int) ConsumeOpt {
	return func(o *consumeConfig) { o.c.priority = cInt32(n) }
}

// ConsumeMaxMessages is how many messages the consumption keeps requested
// from the server and buffered (in the library, or taken ahead of Next),
// together, at most (default 500): a reader that stalls holds no more, as
// with nats.go. It asks for more once half of them have arrived.
func ConsumeMaxMessages(n int) ConsumeOpt {
	return func(o *consumeConfig) { o.c.max_messages = C.int64_t(n) }
}

// ConsumeExpires is the lifetime of each pull request the library keeps
// open (default 30 s, at least 1 s). It does not end the consumption:
// an expired request is replaced.
func ConsumeExpires(d time.Duration) ConsumeOpt {
	return func(o *consumeConfig) { o.c.expires_ms = millis(d) }
}

// ConsumeHeartbeat is how often the server signals an idle open request
// (default: half of ConsumeExpires, at most 30 s; at most half of
// ConsumeExpires); two missed heartbeats make the library re-send it.
func ConsumeHeartbeat(d time.Duration) ConsumeOpt {
	return func(o *consumeConfig) { o.c.idle_heartbeat_ms = millis(d) }
}

// Consumption is a continuous pull from a consumer (Consume): from the
// moment Consume returns, the library keeps pull requests open and its
// buffer topped up (up to ConsumeMaxMessages) on its own threads, whether
// or not anyone reads, and pulls again at once after a reconnect. Read it
// with Next or Msgs; acknowledge each message as one returned by Fetch.
// All methods are safe for concurrent use. It keeps its Conn alive but not
// open, and does not depend on the JetStream that started it staying
// open. Stop it when done (its handle is freed by a finalizer).
type Consumption struct {
	ptr   *C.natsio_js_messages
	nc    *Conn
	names pulledNames
	acks  *consumeAcks
	// Messages taken from the library ahead of Next, in one C call for up
	// to consumeTake (one batch, one finalizer), under mu.
	mu    sync.Mutex
	ready []*Msg
	// What that call fills: consumeTake messages and their views, in C
	// memory (freed with the consumption), so that cgo's pointer check
	// has no Go array of views, each full of pointers, to walk per take.
	taken **C.natsio_msg
	views *C.go_msg_view
	// How many a Next takes ahead at most: within the message budget
	// (pullBudget), as the library does not count what it handed over.
	take int
}

// consumeTake bounds the messages a Next takes from the library at once.
const consumeTake = 64

// defaultPullMessages is the library's default max_messages of a pull flow.
const defaultPullMessages = 500

// pullBudget splits a pull flow's message budget (0: the default) between
// what Next takes from the library ahead of the caller (take, at most
// consumeTake) and the library's own share (requested and buffered), so
// that together they hold at most the budget, as nats.go does: the
// library stops counting a message once the binding took it. The + 1:
// the one message Next returns is the caller's, not held ahead. A budget
// in bytes is not split (sizes are not known ahead): Next then takes one
// at a time. Values the library refuses pass through unchanged.
func pullBudget(maxMessages, maxBytes, threshold C.int64_t) (library, libThreshold C.int64_t, take int) {
	if maxBytes != 0 || maxMessages < 0 {
		return maxMessages, threshold, 1
	}
	total := int64(maxMessages)
	if total == 0 {
		total = defaultPullMessages
	}
	take = int(min(consumeTake, max(1, total/2)))
	lib := total - int64(take) + 1
	libThreshold = threshold
	if t := int64(threshold); t > 0 && t < total {
		// The same point of the whole budget, in the library's share.
		libThreshold = C.int64_t(min(lib-1, max(1, t*lib/total)))
	}
	return C.int64_t(lib), libThreshold, take
}

// Consume starts consuming the pull consumer consumer of stream
// continuously. ctx bounds the start only (which looks the consumer up).
// Errors: ErrConsumerNotFound, ErrStreamNotFound, ErrInvalidArgument (bad
// names or options, e.g. a ConsumeHeartbeat above half of ConsumeExpires),
// ErrTimeout, ErrConnectionClosed, ErrIllegalState (JetStream closed).
func (js *JetStream) Consume(ctx context.Context, stream, consumer string, opts ...ConsumeOpt) (*Consumption, error) {
	var cfg consumeConfig
	C.natsio_consume_options_init(&cfg.c)
	for _, opt := range opts {
		opt(&cfg)
	}
	if name := cfg.orderedOnly(); name != "" {
		return nil, errorOf(ErrInvalidArgument, name+" is an option of an ordered consumer's Messages, not of Consume")
	}
	copts := cfg.c
	if cfg.group != "" {
		if err := checkNUL(cfg.group); err != nil {
			return nil, err
		}
		g := C.CString(cfg.group)
		defer C.free(unsafe.Pointer(g))
		copts.group = g
	}
	var take int
	copts.max_messages, copts.threshold_messages, take = pullBudget(copts.max_messages, copts.max_bytes, copts.threshold_messages)
	r, err := onJS(js, func(p *C.natsio_js) (C.go_take, error) { return rawJsConsume(ctx, p, stream, consumer, &copts) })
	if err != nil {
		return nil, err
	}
	return newConsumption((*C.natsio_js_messages)(r.out), js.nc, take)
}

// PushConsume starts consuming the push consumer consumer of stream (one
// created with a DeliverSubject in its config, in ConsumerConfig.Extra as
// "deliver_subject"): the library subscribes to its deliver subject (in
// its deliver group's queue group when it has one) and buffers what the
// server sends, bounded by the connection's pending limits. With the
// consumer's flow control, each flow-control request is answered once
// the reader has finished with what came before it; missed idle
// heartbeats are reported to the connection's error handler. Read and
// stop it as a Consume. ctx bounds the start only (which looks the
// consumer up). Errors: ErrInvalidArgument (bad names; not a push
// consumer), ErrConsumerNotFound, ErrStreamNotFound, ErrTimeout,
// ErrConnectionClosed, ErrIllegalState (JetStream closed).
func (js *JetStream) PushConsume(ctx context.Context, stream, consumer string) (*Consumption, error) {
	r, err := onJS(js, func(p *C.natsio_js) (C.go_take, error) { return rawJsPushConsume(ctx, p, stream, consumer) })
	if err != nil {
		return nil, err
	}
	// One message at a time from the library: what the binding held ahead
	// would not count for flow control, which answers once the library's
	// buffer is empty.
	return newConsumption((*C.natsio_js_messages)(r.out), js.nc, 1)
}

// newConsumption wraps a running consumption (Consume, an ordered
// consumer's Messages) whose Next takes up to take messages ahead; on
// failure it is stopped and freed.
func newConsumption(ptr *C.natsio_js_messages, nc *Conn, take int) (*Consumption, error) {
	c := &Consumption{ptr: ptr, nc: nc, acks: &consumeAcks{nc: nc}, take: take,
		taken: (**C.natsio_msg)(C.calloc(consumeTake, C.size_t(unsafe.Sizeof((*C.natsio_msg)(nil))))),
		views: (*C.go_msg_view)(C.calloc(consumeTake, C.size_t(unsafe.Sizeof(C.go_msg_view{}))))}
	runtime.SetFinalizer(c, func(c *Consumption) {
		C.natsio_js_messages_free(c.ptr)
		C.free(unsafe.Pointer(c.taken))
		C.free(unsafe.Pointer(c.views))
	})
	if c.taken == nil || c.views == nil {
		C.natsio_js_messages_stop(c.ptr) // the finalizer frees the rest
		return nil, errorOf(ErrInternal, "out of memory for a consumption's take buffers")
	}
	return c, nil
}

// Next returns the next message: at once if the library has one buffered,
// else when one arrives or ctx ends (with ctx's error; for a deadline one
// that also matches ErrTimeout): the consumption goes on, and a later Next
// gets the messages that arrive meanwhile. The wait is a library token
// (ctx's end withdraws it), so no OS thread is held. Errors: ErrDone after
// Stop (also for a Next waiting while Stop is called), ErrConnectionClosed
// once the connection is closed, ErrConsumerDeleted or ErrConsumerNotFound
// once the consumer is gone (the consumption has ended).
func (c *Consumption) Next(ctx context.Context) (*Msg, error) {
	if c == nil {
		return nil, errorOf(ErrNullArgument, "nil *Consumption")
	}
	defer runtime.KeepAlive(c)
	if ctx.Err() != nil {
		return nil, contextError(ctx)
	}
	if m := c.nextReady(); m != nil {
		return m, nil
	}
	// Nothing ready: wait for one (or read the end), the acks queued so
	// far sent first (and those made during the wait at once).
	c.acks.waiting.Add(1)
	defer c.acks.waiting.Add(-1)
	c.acks.send()
	return iterNext(ctx, unsafe.Pointer(c.ptr), C.GO_ITER_JS_MESSAGES,
		func(item unsafe.Pointer, v C.go_msg_view, _ C.go_entry_view) *Msg {
			return pulledOne((*C.natsio_msg)(item), &v, c.nc, &c.names, c.acks)
		})
}

// nextReady returns a message taken ahead, taking what the library has
// ready when there is none; nil when nothing is ready.
func (c *Consumption) nextReady() *Msg {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.ready) == 0 {
		r := C.go_js_messages_take(c.ptr, c.taken, c.views, C.size_t(c.take))
		n := int(r.count)
		if r.status != C.NATSIO_OK {
			// The end or an error: Next reads it from the library.
			C.free(unsafe.Pointer(r.detail))
			return nil
		}
		if n == 0 {
			return nil
		}
		batch := newPulledBatch(slices.Clone(unsafe.Slice(c.taken, n)))
		views := unsafe.Slice(c.views, n)
		if cap(c.ready) < n {
			c.ready = make([]*Msg, 0, consumeTake)
		}
		c.ready = c.ready[:n]
		for i := range n {
			c.ready[i] = pulledMsgView(batch, i, &views[i], c.nc, &c.names, c.acks)
		}
	}
	m := c.ready[0]
	c.ready[0] = nil
	c.ready = c.ready[1:]
	return m
}

// Msgs iterates over the consumed messages until Stop, which ends the loop
// quietly (as in Subscription.Msgs). Any error (ctx's end, the consumer
// deleted, the connection closed) is yielded once, last.
func (c *Consumption) Msgs(ctx context.Context) iter.Seq2[*Msg, error] {
	return func(yield func(*Msg, error) bool) {
		for {
			m, err := c.Next(ctx)
			if isDone(err) {
				return
			}
			if !yield(m, err) || err != nil {
				return
			}
		}
	}
}

// Stop ends the consumption: a Next waiting on another goroutine returns
// ErrDone, and so do later ones. Messages buffered but not taken are not
// acknowledged (the server redelivers them after the consumer's AckWait).
// Safe to call more than once, from any goroutine.
func (c *Consumption) Stop() {
	if c != nil {
		C.natsio_js_messages_stop(c.ptr)
		// Taken ahead but not returned: dropped unacknowledged, like
		// what the library still buffers.
		c.mu.Lock()
		clear(c.ready)
		c.ready = c.ready[:0]
		c.mu.Unlock()
		runtime.KeepAlive(c)
	}
}

// Drain ends the consumption gracefully, as a subscription's Drain: a
// Consume sends no more pull requests and withdraws their inbox, a
// PushConsume withdraws its subscription to the deliver subject; Next
// still returns what the server sent before that, then ErrDone, so
// nothing already delivered is left for the server to redeliver (as long
// as it is acknowledged). An ordered consumer's Messages just stops taking
// messages in. Drain waits until the library has handed everything out:
// another goroutine must read it with Next meanwhile. The wait is bounded
// by ctx's deadline or, without one, by the connection's DrainTimeout
// option: past it Drain fails with ErrTimeout and the drain goes on; if
// ctx is cancelled, Drain returns ctx.Err() and the drain goes on.
// Errors: ErrSubscriptionClosed (stopped before the drain finished),
// ErrConnectionClosed, or the error that ended the consumption first
// (e.g. ErrConsumerDeleted).
func (c *Consumption) Drain(ctx context.Context) error {
	if c == nil {
		return errorOf(ErrNullArgument, "nil *Consumption")
	}
	if ctx.Err() != nil {
		return contextError(ctx)
	}
	defer runtime.KeepAlive(c)
	return rawJsMessagesDrain(waitingBy(ctx, leaveOnEnd), c.ptr, int64(timeoutArg(ctx)))
}

// StartDrain is Drain without the wait: the drain has begun when it
// returns (no pull request is sent after it), and Next returns ErrDone
// once the buffer is read. Errors: ErrConnectionClosed.
func (c *Consumption) StartDrain() error {
	if c == nil {
		return errorOf(ErrNullArgument, "nil *Consumption")
	}
	defer runtime.KeepAlive(c)
	return rawJsMessagesDrain(waitingBy(context.Background(), startOnly), c.ptr, C.NATSIO_WAIT_FOREVER)
}

// IterStats are the live counters of a consumption, a watch or a batch
// read (StoredMsgs).
type IterStats struct {
	Delivered    uint64 // items handed to the application
	PendingItems uint64 // buffered by the library, not yet taken
	PendingBytes uint64 // their size in bytes, as the library counts it
	// Stalls counts the times the buffer was full and the library paused
	// pulling until the application caught up (nothing is skipped).
	Stalls uint64
}

func iterStats(cs *C.natsio_iter_stats) IterStats {
	return IterStats{
		Delivered:    uint64(cs.delivered),
		PendingItems: uint64(cs.pending_items),
		PendingBytes: uint64(cs.pending_bytes),
		Stalls:       uint64(cs.stalls),
	}
}

// Stats reads the consumption's live counters.
func (c *Consumption) Stats() (IterStats, error) {
	if c == nil {
		return IterStats{}, errorOf(ErrNullArgument, "nil *Consumption")
	}
	var cs C.natsio_iter_stats
	c.mu.Lock()
	err := cCall(func() C.natsio_status { return C.natsio_js_messages_get_stats(c.ptr, &cs) })
	// Messages taken ahead of Next count as buffered, not delivered
	// (PendingBytes stays the library's own count).
	ahead := C.uint64_t(len(c.ready))
	c.mu.Unlock()
	cs.delivered -= ahead
	cs.pending_items += ahead
	runtime.KeepAlive(c)
	return iterStats(&cs), err
}
