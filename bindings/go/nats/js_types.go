package nats

import (
	"encoding/json"
	"fmt"
	"time"
)

// The legacy JetStream API's enums: ints as in nats.go, their JSON the
// server's names, their String nats.go's (DeliverPolicy and ReplayPolicy
// have none there: they print as numbers).

type (
	RetentionPolicy int
	DiscardPolicy   int
	StorageType     int
	AckPolicy       int
	DeliverPolicy   int
	ReplayPolicy    int
)

const (
	LimitsPolicy RetentionPolicy = iota
	InterestPolicy
	WorkQueuePolicy
)

const (
	DiscardOld DiscardPolicy = iota
	DiscardNew
)

const (
	FileStorage StorageType = iota
	MemoryStorage
)

const (
	AckNonePolicy AckPolicy = iota
	AckAllPolicy
	AckExplicitPolicy
)

const (
	DeliverAllPolicy DeliverPolicy = iota
	DeliverLastPolicy
	DeliverNewPolicy
	DeliverByStartSequencePolicy
	DeliverByStartTimePolicy
	DeliverLastPerSubjectPolicy
)

const (
	ReplayInstantPolicy ReplayPolicy = iota
	ReplayOriginalPolicy
)

// enumNames are an enum's JSON names and String texts, by value.
type enumNames struct {
	json, texts []string
	unknown     string
}

var (
	retentionNames = enumNames{[]string{"limits", "interest", "workqueue"}, []string{"Limits", "Interest", "WorkQueue"}, "Unknown Retention Policy"}
	discardNames   = enumNames{[]string{"old", "new"}, []string{"DiscardOld", "DiscardNew"}, "Unknown Discard Policy"}
	storageNames   = enumNames{[]string{"file", "memory"}, []string{"File", "Memory"}, "Unknown Storage Type"}
	ackNames       = enumNames{[]string{"none", "all", "explicit"}, []string{"AckNone", "AckAll", "AckExplicit"}, "Unknown AckPolicy"}
	deliverNames   = enumNames{json: []string{"all", "last", "new", "by_start_sequence", "by_start_time", "last_per_subject"}}
	replayNames    = enumNames{json: []string{"instant", "original"}}
)

func (e enumNames) nameOf(v int) string {
	if v >= 0 && v < len(e.texts) {
		return e.texts[v]
	}
	return e.unknown
}

func (e enumNames) marshal(v int, what string) ([]byte, error) {
	if v < 0 || v >= len(e.json) {
		return nil, fmt.Errorf("nats: can not marshal %s %d", what, v)
	}
	return json.Marshal(e.json[v])
}

func (e enumNames) unmarshal(data []byte, what string) (int, error) {
	var s string
	if err := json.Unmarshal(data, &s); err != nil {
		return 0, err
	}
	for i, n := range e.json {
		if n == s {
			return i, nil
		}
	}
	return 0, fmt.Errorf("nats: can not unmarshal %q as %s", s, what)
}

func (p RetentionPolicy) String() string { return retentionNames.nameOf(int(p)) }
func (p RetentionPolicy) MarshalJSON() ([]byte, error) {
	return retentionNames.marshal(int(p), "retention policy")
}
func (p *RetentionPolicy) UnmarshalJSON(b []byte) error {
	v, err := retentionNames.unmarshal(b, "retention policy")
	*p = RetentionPolicy(v)
	return err
}
func (p DiscardPolicy) String() string { return discardNames.nameOf(int(p)) }
func (p DiscardPolicy) MarshalJSON() ([]byte, error) {
	return discardNames.marshal(int(p), "discard policy")
}
func (p *DiscardPolicy) UnmarshalJSON(b []byte) error {
	v, err := discardNames.unmarshal(b, "discard policy")
	*p = DiscardPolicy(v)
	return err
}
func (t StorageType) String() string { return storageNames.nameOf(int(t)) }
func (t StorageType) MarshalJSON() ([]byte, error) {
	return storageNames.marshal(int(t), "storage type")
}
func (t *StorageType) UnmarshalJSON(b []byte) error {
	v, err := storageNames.unmarshal(b, "storage type")
	*t = StorageType(v)
	return err
}
func (p AckPolicy) String() string               { return ackNames.nameOf(int(p)) }
func (p AckPolicy) MarshalJSON() ([]byte, error) { return ackNames.marshal(int(p), "ack policy") }
func (p *AckPolicy) UnmarshalJSON(b []byte) error {
	v, err := ackNames.unmarshal(b, "ack policy")
	*p = AckPolicy(v)
	return err
}
func (p DeliverPolicy) MarshalJSON() ([]byte, error) {
	return deliverNames.marshal(int(p), "deliver policy")
}
func (p *DeliverPolicy) UnmarshalJSON(b []byte) error {
	v, err := deliverNames.unmarshal(b, "deliver policy")
	*p = DeliverPolicy(v)
	return err
}
func (p ReplayPolicy) MarshalJSON() ([]byte, error) {
	return replayNames.marshal(int(p), "replay policy")
}
func (p *ReplayPolicy) UnmarshalJSON(b []byte) error {
	v, err := replayNames.unmarshal(b, "replay policy")
	*p = ReplayPolicy(v)
	return err
}

// StreamConfig is a stream's configuration (the fields of nats.go's most
// programs set).
type StreamConfig struct {
	Name              string          `json:"name"`
	Description       string          `json:"description,omitempty"`
	Subjects          []string        `json:"subjects,omitempty"`
	Retention         RetentionPolicy `json:"retention"`
	MaxConsumers      int             `json:"max_consumers"`
	MaxMsgs           int64           `json:"max_msgs"`
	MaxBytes          int64           `json:"max_bytes"`
	Discard           DiscardPolicy   `json:"discard"`
	MaxAge            time.Duration   `json:"max_age"`
	MaxMsgsPerSubject int64           `json:"max_msgs_per_subject"`
	MaxMsgSize        int32           `json:"max_msg_size,omitempty"`
	Storage           StorageType     `json:"storage"`
	Replicas          int             `json:"num_replicas"`
	NoAck             bool            `json:"no_ack,omitempty"`
	Duplicates        time.Duration   `json:"duplicate_window,omitempty"`
	AllowDirect       bool            `json:"allow_direct"`
}

// StreamState is what a stream holds.
type StreamState struct {
	Msgs        uint64    `json:"messages"`
	Bytes       uint64    `json:"bytes"`
	FirstSeq    uint64    `json:"first_seq"`
	FirstTime   time.Time `json:"first_ts"`
	LastSeq     uint64    `json:"last_seq"`
	LastTime    time.Time `json:"last_ts"`
	Consumers   int       `json:"consumer_count"`
	NumDeleted  int       `json:"num_deleted"`
	NumSubjects uint64    `json:"num_subjects"`
}

// StreamInfo is a stream's configuration and state.
type StreamInfo struct {
	Config  StreamConfig `json:"config"`
	Created time.Time    `json:"created"`
	State   StreamState  `json:"state"`
}

// ConsumerConfig is a consumer's configuration, push fields included.
type ConsumerConfig struct {
	Durable         string          `json:"durable_name,omitempty"`
	Name            string          `json:"name,omitempty"`
	Description     string          `json:"description,omitempty"`
	DeliverPolicy   DeliverPolicy   `json:"deliver_policy"`
	OptStartSeq     uint64          `json:"opt_start_seq,omitempty"`
	OptStartTime    *time.Time      `json:"opt_start_time,omitempty"`
	AckPolicy       AckPolicy       `json:"ack_policy"`
	AckWait         time.Duration   `json:"ack_wait,omitempty"`
	MaxDeliver      int             `json:"max_deliver,omitempty"`
	BackOff         []time.Duration `json:"backoff,omitempty"`
	FilterSubject   string          `json:"filter_subject,omitempty"`
	FilterSubjects  []string        `json:"filter_subjects,omitempty"`
	ReplayPolicy    ReplayPolicy    `json:"replay_policy"`
	RateLimit       uint64          `json:"rate_limit_bps,omitempty"`
	SampleFrequency string          `json:"sample_freq,omitempty"`
	MaxWaiting      int             `json:"max_waiting,omitempty"`
	MaxAckPending   int             `json:"max_ack_pending,omitempty"`
	FlowControl     bool            `json:"flow_control,omitempty"`
	Heartbeat       time.Duration   `json:"idle_heartbeat,omitempty"`
	HeadersOnly     bool            `json:"headers_only,omitempty"`

	MaxRequestBatch    int           `json:"max_batch,omitempty"`
	MaxRequestExpires  time.Duration `json:"max_expires,omitempty"`
	MaxRequestMaxBytes int           `json:"max_bytes,omitempty"`

	DeliverSubject    string            `json:"deliver_subject,omitempty"`
	DeliverGroup      string            `json:"deliver_group,omitempty"`
	InactiveThreshold time.Duration     `json:"inactive_threshold,omitempty"`
	Replicas          int               `json:"num_replicas"`
	MemoryStorage     bool              `json:"mem_storage,omitempty"`
	Metadata          map[string]string `json:"metadata,omitempty"`
}

// SequenceInfo is a consumer's position.
type SequenceInfo struct {
	Consumer uint64     `json:"consumer_seq"`
	Stream   uint64     `json:"stream_seq"`
	Last     *time.Time `json:"last_active,omitempty"`
}

// ConsumerInfo is a consumer's configuration and state.
type ConsumerInfo struct {
	Stream         string         `json:"stream_name"`
	Name           string         `json:"name"`
	Created        time.Time      `json:"created"`
	Config         ConsumerConfig `json:"config"`
	Delivered      SequenceInfo   `json:"delivered"`
	AckFloor       SequenceInfo   `json:"ack_floor"`
	NumAckPending  int            `json:"num_ack_pending"`
	NumRedelivered int            `json:"num_redelivered"`
	NumWaiting     int            `json:"num_waiting"`
	NumPending     uint64         `json:"num_pending"`
	PushBound      bool           `json:"push_bound,omitempty"`
}
