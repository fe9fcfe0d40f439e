package jetstream

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	natsio "github.com/libnatsio/natsio/bindings/go"
	"github.com/libnatsio/natsio/bindings/go/nats"
)

// The sentinels match by API error code through wrapping, as nats.go's do,
// and print nats.go's texts.
func TestErrorsIs(t *testing.T) {
	refused := fmt.Errorf("nats: %w", &APIError{Code: 404, ErrorCode: JSErrCodeStreamNotFound, Description: "stream not found"})
	if !errors.Is(refused, ErrStreamNotFound) || errors.Is(refused, ErrConsumerNotFound) {
		t.Errorf("code matching: %v", refused)
	}
	if ErrStreamNotFound.Error() != "nats: API error: code=404 err_code=10059 description=stream not found" {
		t.Errorf("text: %q", ErrStreamNotFound.Error())
	}
	if ErrKeyNotFound.Error() != "nats: key not found" || ErrNoObjectsFound.Error() != "nats: no objects found" {
		t.Errorf("texts: %q %q", ErrKeyNotFound, ErrNoObjectsFound)
	}
	if ErrKeyExists.Error() != "nats: key exists" || ErrKeyExists.APIError().ErrorCode != JSErrCodeStreamWrongLastSequence {
		t.Errorf("ErrKeyExists: %q", ErrKeyExists)
	}
	var apiErr *APIError
	if !errors.As(refused, &apiErr) || apiErr.Code != 404 {
		t.Errorf("errors.As: %v", apiErr)
	}
}

// The binding's sentinels become this package's; the core ones the nats
// package's.
func TestTranslate(t *testing.T) {
	for _, p := range errorPairs {
		if got := translate(p.from); got != p.to {
			t.Errorf("translate(%v) = %v, want %v", p.from, got, p.to)
		}
	}
	if got := translate(natsio.ErrTimeout); got != nats.ErrTimeout {
		t.Errorf("timeout: %v", got)
	}
	if translate(nil) != nil {
		t.Error("translate(nil) is not nil")
	}
}

// The enums print as nats.go prints them and travel as the server's names.
func TestEnums(t *testing.T) {
	texts := []struct {
		got, want string
	}{
		{LimitsPolicy.String(), "Limits"}, {WorkQueuePolicy.String(), "WorkQueue"},
		{DiscardNew.String(), "DiscardNew"}, {FileStorage.String(), "File"}, {MemoryStorage.String(), "Memory"},
		{S2Compression.String(), "S2"}, {AckExplicitPolicy.String(), "AckExplicit"}, {AckNonePolicy.String(), "AckNone"},
		{DeliverLastPerSubjectPolicy.String(), "last_per_subject"}, {ReplayOriginalPolicy.String(), "original"},
		{StorageType(7).String(), "Unknown Storage Type"},
	}
	for _, tt := range texts {
		if tt.got != tt.want {
			t.Errorf("%q, want %q", tt.got, tt.want)
		}
	}
	b, err := json.Marshal(ConsumerConfig{Durable: "d", PriorityPolicy: PriorityPolicyPinned})
	if err != nil {
		t.Fatal(err)
	}
	var wire map[string]any
	json.Unmarshal(b, &wire)
	if wire["ack_policy"] != "explicit" || wire["deliver_policy"] != "all" || wire["priority_policy"] != "pinned_client" {
		t.Errorf("consumer config JSON: %s", b)
	}
	var cfg StreamConfig
	if err := json.Unmarshal([]byte(`{"name":"S","retention":"workqueue","storage":"memory","discard":"new"}`), &cfg); err != nil {
		t.Fatal(err)
	}
	if cfg.Retention != WorkQueuePolicy || cfg.Storage != MemoryStorage || cfg.Discard != DiscardNew {
		t.Errorf("stream config from JSON: %+v", cfg)
	}
	if err := json.Unmarshal([]byte(`{"storage":"tape"}`), &cfg); err == nil {
		t.Error("an unknown storage was accepted")
	}
}

// The header constants carry nats.go jetstream's names and values, so a
// program that sets or reads them talks to the server as nats.go's does.
func TestHeaderNames(t *testing.T) {
	for got, want := range map[string]string{
		MsgIDHeader:                   "Nats-Msg-Id",
		ExpectedStreamHeader:          "Nats-Expected-Stream",
		ExpectedLastSeqHeader:         "Nats-Expected-Last-Sequence",
		ExpectedLastSubjSeqHeader:     "Nats-Expected-Last-Subject-Sequence",
		ExpectedLastSubjSeqSubjHeader: "Nats-Expected-Last-Subject-Sequence-Subject",
		ExpectedLastMsgIDHeader:       "Nats-Expected-Last-Msg-Id",
		MsgTTLHeader:                  "Nats-TTL",
		MsgRollup:                     "Nats-Rollup",
		MarkerReasonHeader:            "Nats-Marker-Reason",
		ScheduleHeader:                "Nats-Schedule",
		ScheduleTargetHeader:          "Nats-Schedule-Target",
		ScheduleSourceHeader:          "Nats-Schedule-Source",
		ScheduleTTLHeader:             "Nats-Schedule-TTL",
		ScheduleTimeZoneHeader:        "Nats-Schedule-Time-Zone",
		ScheduleRollupHeader:          "Nats-Schedule-Rollup",
		StreamHeader:                  "Nats-Stream",
		SequenceHeader:                "Nats-Sequence",
		TimeStampHeaer:                "Nats-Time-Stamp",
		SubjectHeader:                 "Nats-Subject",
		SchedulerHeader:               "Nats-Scheduler",
		ScheduleNextHeader:            "Nats-Schedule-Next",
		LastSequenceHeader:            "Nats-Last-Sequence",
		MsgRollupSubject:              "sub",
		MsgRollupAll:                  "all",
	} {
		if got != want {
			t.Errorf("%q, want %q", got, want)
		}
	}
}

// The enums of newer servers print and travel as nats.go's; the default
// persist mode is left out of a config, as nats.go leaves it.
func TestNewerEnums(t *testing.T) {
	if AckFlowControlPolicy.String() != "AckFlowControl" || AsyncPersistMode.String() != "Async" ||
		PersistModeType(5).String() != "Unknown Persist Mode" {
		t.Errorf("texts: %q %q", AckFlowControlPolicy, AsyncPersistMode)
	}
	var cfg ConsumerConfig
	if err := json.Unmarshal([]byte(`{"ack_policy":"flow_control"}`), &cfg); err != nil || cfg.AckPolicy != AckFlowControlPolicy {
		t.Errorf("flow_control: %v, %v", cfg.AckPolicy, err)
	}
	b, err := json.Marshal(StreamConfig{Name: "S", PersistMode: AsyncPersistMode})
	if err != nil || !strings.Contains(string(b), `"persist_mode":"async"`) {
		t.Errorf("async persist mode: %s, %v", b, err)
	}
	if b, _ = json.Marshal(StreamConfig{Name: "S"}); strings.Contains(string(b), "persist_mode") {
		t.Errorf("default persist mode sent: %s", b)
	}
	if _, err := json.Marshal(StreamConfig{PersistMode: 9}); err == nil {
		t.Error("an unknown persist mode was marshalled")
	}
}

// The option constructors refuse the values nats.go's refuse, wrapping
// ErrInvalidOption.
func TestOptionValidation(t *testing.T) {
	var o pubOpts
	for _, opt := range []PublishOpt{WithScheduleEvery(time.Millisecond), WithScheduleCron(""), WithScheduleTarget(""),
		WithScheduleSource(""), WithScheduleTTL(0), WithScheduleTimeZone(""), WithStallWait(0), WithRetryWait(0), WithRetryAttempts(-1)} {
		if err := opt(&o); !errors.Is(err, ErrInvalidOption) {
			t.Errorf("%v", err)
		}
	}
	var p pullConfig
	for _, opt := range []PullConsumeOpt{StopAfter(0), PullMinPending(0), PullMinAckPending(-1),
		PullMaxMessagesWithBytesLimit(0, 1), PullMaxMessagesWithBytesLimit(1, 0), PullMaxMessages(0), PullMaxBytes(-1),
		PullExpiry(time.Millisecond), PullHeartbeat(time.Minute)} {
		if err := opt.configureConsume(&p); !errors.Is(err, ErrInvalidOption) {
			t.Errorf("%v", err)
		}
	}
	f := fetchConfig{}
	for _, opt := range []FetchOpt{FetchMaxWait(0), FetchMinPending(0), FetchMinAckPending(0), FetchMaxBytes(10)} {
		if err := opt(&f); !errors.Is(err, ErrInvalidOption) {
			t.Errorf("%v", err)
		}
	}
	ctx, cancel := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancel()
	if err := FetchContext(ctx)(&f); !errors.Is(err, ErrInvalidOption) {
		t.Errorf("FetchContext past its deadline: %v", err)
	}
}
