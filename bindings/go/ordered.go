package natsio

// The ordered consumer (ADR-17) over natsio_js_ordered_consumer and the
// natsio_ordered_consumer_* functions; its runs are read as a Consumption
// (natsio_js_messages), as Consume's.

/*
#include <stdlib.h>
#include "natsio_go.h"
*/
import "C"

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"sync"
	"time"
	"unicode/utf8"
	"unsafe"
)

// OrderedConsumerConfig is what an ordered consumer reads (nats.go's
// jetstream.OrderedConsumerConfig); the zero value reads the whole stream
// from its first message.
type OrderedConsumerConfig struct {
	// FilterSubjects are the subjects (wildcards allowed) to read; none:
	// the whole stream.
	FilterSubjects []string
	// DeliverPolicy is where it starts ("": DeliverAllPolicy).
	DeliverPolicy DeliverPolicy
	// OptStartSeq is the first stream sequence, for
	// DeliverByStartSequencePolicy only.
	OptStartSeq uint64
	// OptStartTime is the start time, for DeliverByStartTimePolicy only.
	OptStartTime *time.Time
	// HeadersOnly delivers headers only (the payload's size in
	// Nats-Msg-Size).
	HeadersOnly bool
	// NamePrefix names its server-side consumers NamePrefix_<serial>, the
	// serial counting them from 1 ("": a fresh NUID, as nats.go).
	NamePrefix string
	// InactiveThreshold is how long the server keeps a consumer nobody
	// reads (0: 5 minutes).
	InactiveThreshold time.Duration
	// Metadata is set as the config.metadata of every server-side
	// consumer it creates (nil or empty: none). A key or value that is
	// not valid UTF-8 is refused with ErrInvalidUTF8.
	Metadata map[string]string
}

func deliverPolicyOf(p DeliverPolicy) (C.int32_t, error) {
	switch p {
	case "", DeliverAllPolicy:
		return C.NATSIO_DELIVER_ALL, nil
	case DeliverLastPolicy:
		return C.NATSIO_DELIVER_LAST, nil
	case DeliverNewPolicy:
		return C.NATSIO_DELIVER_NEW, nil
	case DeliverByStartSequencePolicy:
		return C.NATSIO_DELIVER_BY_START_SEQUENCE, nil
	case DeliverByStartTimePolicy:
		return C.NATSIO_DELIVER_BY_START_TIME, nil
	case DeliverLastPerSubjectPolicy:
		return C.NATSIO_DELIVER_LAST_PER_SUBJECT, nil
	}
	return 0, errorOf(ErrInvalidArgument, "unknown deliver policy "+string(p))
}

// OrderedConsumer is an ordered consumer (ADR-17) on one stream: an
// always-in-order, self-healing view of it, backed by an ephemeral
// server-side consumer (no acks, memory, one replica) that the library
// deletes and recreates after the last delivered stream sequence on a gap,
// missed heartbeats, a reconnect or its loss, so the reader sees no gap and
// no duplicate. Read it with Messages; one run at a time. A run ends when
// its Consumption is stopped, drained (PullUntilDrained) or idle
// (PullIdleTimeout: ErrNoMessages), and deletes its consumer; the next run
// continues after the last message taken. Stop ends it all. All methods
// are safe for concurrent use; Stop it when done (its handle is freed by a
// finalizer, which only asks the server to delete an unused consumer).
type OrderedConsumer struct {
	ptr *C.natsio_ordered_consumer
	nc  *Conn

	mu     sync.Mutex
	cached *ConsumerInfo
}

// OrderedConsumer makes an ordered consumer on stream and creates its
// server-side consumer (as nats.go does; CachedInfo holds its info).
// Errors: ErrInvalidArgument (bad stream name, deliver policy, a start
// sequence or time missing or given with another policy), ErrInvalidUTF8
// (Metadata not valid UTF-8; nothing is sent), ErrBadSubject,
// ErrStreamNotFound, ErrTimeout, ErrConnectionClosed.
func (js *JetStream) OrderedConsumer(ctx context.Context, stream string, cfg OrderedConsumerConfig) (*OrderedConsumer, error) {
	policy, err := deliverPolicyOf(cfg.DeliverPolicy)
	if err != nil {
		return nil, err
	}
	var startNs int64
	if cfg.OptStartTime != nil {
		startNs = cfg.OptStartTime.UnixNano()
		if startNs == 0 {
			return nil, errorOf(ErrInvalidArgument, "OptStartTime must not be the epoch itself")
		}
	}
	cstream, err := cString(stream)
	if err != nil {
		return nil, err
	}
	filters, err := newCStrings(cfg.FilterSubjects)
	if err != nil {
		return nil, err
	}
	defer filters.free()
	if ctx.Err() != nil {
		return nil, contextError(ctx)
	}
	var o C.natsio_ordered_consumer_options
	C.natsio_ordered_consumer_options_init(&o)
	o.filter_subjects = filters.ptr()
	o.filter_subjects_count = filters.count()
	o.deliver_policy = policy
	o.opt_start_seq = C.uint64_t(cfg.OptStartSeq)
	o.opt_start_time_ns = C.int64_t(startNs)
	o.headers_only = C.bool(cfg.HeadersOnly)
	if cfg.NamePrefix != "" {
		if err := checkNUL(cfg.NamePrefix); err != nil {
			return nil, err
		}
		prefix := C.CString(cfg.NamePrefix)
		defer C.free(unsafe.Pointer(prefix))
		o.name_prefix = prefix
	}
	if cfg.InactiveThreshold < 0 {
		return nil, errorOf(ErrInvalidArgument, "InactiveThreshold must not be negative")
	}
	o.inactive_threshold_ms = C.int64_t(cfg.InactiveThreshold.Milliseconds())
	if len(cfg.Metadata) > 0 {
		// json.Marshal would turn invalid UTF-8 into U+FFFD unseen.
		for k, v := range cfg.Metadata {
			if !utf8.ValidString(k) || !utf8.ValidString(v) {
				return nil, errorOf(ErrInvalidUTF8, fmt.Sprintf("OrderedConsumerConfig.Metadata %q: %q: not valid UTF-8", k, v))
			}
		}
		b, _ := json.Marshal(cfg.Metadata) // a map of strings always marshals
		metadata := C.CString(string(b))
		defer C.free(unsafe.Pointer(metadata))
		o.metadata_json = metadata
	}
	p, err := js.acquire()
	if err != nil {
		return nil, err
	}
	var ptr *C.natsio_ordered_consumer
	err = cCall(func() C.natsio_status { return C.natsio_js_ordered_consumer(p, cPtr(cstream), &o, &ptr) })
	js.release()
	if err != nil {
		return nil, err
	}
	oc := &OrderedConsumer{ptr: ptr, nc: js.nc}
	runtime.SetFinalizer(oc, func(oc *OrderedConsumer) { C.natsio_ordered_consumer_free(oc.ptr) })
	if _, err := oc.Info(ctx); err != nil {
		oc.Stop(context.Background())
		return nil, err
	}
	return oc, nil
}

// Info reads the info of the server-side consumer in use (creating one if
// none exists, e.g. after a run ended) and caches it. Errors:
// ErrStreamNotFound, ErrConsumerNotFound (a run is healing its consumer),
// ErrIllegalState (after Stop), ErrTimeout, ErrConnectionClosed.
func (oc *OrderedConsumer) Info(ctx context.Context) (*ConsumerInfo, error) {
	if oc == nil {
		return nil, errorOf(ErrNullArgument, "nil *OrderedConsumer")
	}
	defer runtime.KeepAlive(oc)
	raw, err := rawOrderedConsumerStart(ctx, oc.ptr)
	if err != nil {
		return nil, err
	}
	info, err := parseConsumerInfo(raw)
	if err != nil {
		return nil, err
	}
	oc.mu.Lock()
	oc.cached = info
	oc.mu.Unlock()
	return info, nil
}

// CachedInfo is the info the last Info (or OrderedConsumer) read.
func (oc *OrderedConsumer) CachedInfo() *ConsumerInfo {
	if oc == nil {
		return nil
	}
	oc.mu.Lock()
	defer oc.mu.Unlock()
	return oc.cached
}

// Messages starts a run: the ordered messages, pulled on the library's
// threads into a Consumption (read it with Next or Msgs; the messages
// carry Metadata and need no acknowledgement). ctx bounds the start only.
// Errors: ErrIllegalState (a run is going, or after Stop), ErrInvalidArgument
// (options), ErrStreamNotFound, ErrTimeout, ErrConnectionClosed.
func (oc *OrderedConsumer) Messages(ctx context.Context, opts ...ConsumeOpt) (*Consumption, error) {
	if oc == nil {
		return nil, errorOf(ErrNullArgument, "nil *OrderedConsumer")
	}
	defer runtime.KeepAlive(oc)
	var cfg consumeConfig
	C.natsio_consume_options_init(&cfg.c)
	for _, opt := range opts {
		opt(&cfg)
	}
	if name := cfg.consumeOnly(); name != "" {
		return nil, errorOf(ErrInvalidArgument, name+" is an option of Consume, not of an ordered consumer")
	}
	var copts C.natsio_ordered_messages_options
	C.natsio_ordered_messages_options_init(&copts)
	var take int
	copts.max_messages, _, take = pullBudget(cfg.c.max_messages, 0, 0)
	copts.expires_ms = cfg.c.expires_ms
	copts.idle_heartbeat_ms = cfg.c.idle_heartbeat_ms
	copts.idle_timeout_ms = millis(cfg.idleTimeout)
	copts.until_drained = C.bool(cfg.untilDrained)
	r, err := rawOrderedConsumerMessages(ctx, oc.ptr, &copts)
	if err != nil {
		return nil, err
	}
	return newConsumption((*C.natsio_js_messages)(r.out), oc.nc, take)
}

// Stop ends a run (its Next returns ErrDone), deletes the server-side
// consumer and ends the ordered consumer (Info and Messages then fail with
// ErrIllegalState). Safe to call more than once. Errors: ErrTimeout,
// ErrConnectionClosed.
func (oc *OrderedConsumer) Stop(ctx context.Context) error {
	if oc == nil {
		return errorOf(ErrNullArgument, "nil *OrderedConsumer")
	}
	defer runtime.KeepAlive(oc)
	return rawOrderedConsumerStop(ctx, oc.ptr)
}
