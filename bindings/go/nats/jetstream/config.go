package jetstream

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/libnatsio/natsio/bindings/go/nats"
)

// The types both of nats.go's JetStream APIs have, field for field: one
// definition, the nats package's, serves both.
type (
	APIStats             = nats.APIStats
	AccountLimits        = nats.AccountLimits
	Tier                 = nats.Tier
	AccountInfo          = nats.AccountInfo
	PeerInfo             = nats.PeerInfo
	Placement            = nats.Placement
	RePublish            = nats.RePublish
	SequenceInfo         = nats.SequenceInfo
	SequencePair         = nats.SequencePair
	StreamAlternate      = nats.StreamAlternate
	StreamConsumerLimits = nats.StreamConsumerLimits
	StreamPurgeRequest   = nats.StreamPurgeRequest
	MsgMetadata          = nats.MsgMetadata
)

// enum is the JSON and text of one of nats.go's integer enums: wire[i] is
// the server's name of value i, text[i] what String prints.
type enum struct {
	kind       string
	wire, text []string
}

func (e enum) marshal(v int) ([]byte, error) {
	if v < 0 || v >= len(e.wire) {
		return nil, fmt.Errorf("nats: can not marshal %v", v)
	}
	return json.Marshal(e.wire[v])
}

func (e enum) unmarshal(data []byte) (int, error) {
	var s string
	if err := json.Unmarshal(data, &s); err != nil {
		return 0, err
	}
	for i, w := range e.wire {
		if w == s {
			return i, nil
		}
	}
	return 0, fmt.Errorf("nats: can not unmarshal %q", data)
}

func (e enum) string(v int) string {
	if v < 0 || v >= len(e.text) {
		return "Unknown " + e.kind
	}
	return e.text[v]
}

type (
	RetentionPolicy  int
	DiscardPolicy    int
	StorageType      int
	StoreCompression int
	DeliverPolicy    int
	AckPolicy        int
	ReplayPolicy     int
	PriorityPolicy   int
	// PersistModeType is how a stream persists its writes (StreamConfig.PersistMode).
	PersistModeType int
	// MigrationStatusType classifies what a stream's or consumer's
	// migration (ClusterInfo.Desired) waits for.
	MigrationStatusType string
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
	NoCompression StoreCompression = iota
	S2Compression
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
	AckExplicitPolicy AckPolicy = iota
	AckAllPolicy
	AckNonePolicy
	// AckFlowControlPolicy acks like AckAllPolicy, by the flow-control
	// replies of a push consumer (server 2.14+, for stream sources read
	// through a durable consumer). A consumer's info shows it; the core
	// does not create consumers with it (the create fails with an
	// invalid configuration error).
	AckFlowControlPolicy
)

const (
	DefaultPersistMode PersistModeType = iota // writes are synced as the server is configured
	AsyncPersistMode                          // writes are acknowledged before they are synced
)

// The migration statuses of DesiredClusterInfoStatus.Type.
const (
	MigrationStatusMeta        MigrationStatusType = "meta"
	MigrationStatusMembership  MigrationStatusType = "membership"
	MigrationStatusSnapshot    MigrationStatusType = "snapshot"
	MigrationStatusCatchup     MigrationStatusType = "catchup"
	MigrationStatusQuorum      MigrationStatusType = "quorum"
	MigrationStatusBlocked     MigrationStatusType = "blocked"
	MigrationStatusUnavailable MigrationStatusType = "unavailable"
)

const (
	ReplayInstantPolicy ReplayPolicy = iota
	ReplayOriginalPolicy
)

const (
	PriorityPolicyNone PriorityPolicy = iota
	PriorityPolicyPinned
	PriorityPolicyOverflow
	PriorityPolicyPrioritized
)

var (
	retentionEnum   = enum{"Retention Policy", []string{"limits", "interest", "workqueue"}, []string{"Limits", "Interest", "WorkQueue"}}
	discardEnum     = enum{"Discard Policy", []string{"old", "new"}, []string{"DiscardOld", "DiscardNew"}}
	storageEnum     = enum{"Storage Type", []string{"file", "memory"}, []string{"File", "Memory"}}
	compressionEnum = enum{"StoreCompression", []string{"none", "s2"}, []string{"None", "S2"}}
	deliverEnum     = enum{"Deliver Policy", []string{"all", "last", "new", "by_start_sequence", "by_start_time", "last_per_subject"},
		[]string{"all", "last", "new", "by_start_sequence", "by_start_time", "last_per_subject"}}
	ackEnum      = enum{"AckPolicy", []string{"explicit", "all", "none", "flow_control"}, []string{"AckExplicit", "AckAll", "AckNone", "AckFlowControl"}}
	persistEnum  = enum{"Persist Mode", []string{"default", "async"}, []string{"Default", "Async"}}
	replayEnum   = enum{"ReplayPolicy", []string{"instant", "original"}, []string{"instant", "original"}}
	priorityEnum = enum{"Priority Policy", []string{"", "pinned_client", "overflow", "prioritized"}, []string{"", "pinned_client", "overflow", "prioritized"}}
)

func (p RetentionPolicy) String() string               { return retentionEnum.string(int(p)) }
func (p RetentionPolicy) MarshalJSON() ([]byte, error) { return retentionEnum.marshal(int(p)) }
func (p *RetentionPolicy) UnmarshalJSON(b []byte) error {
	return unmarshalEnum(retentionEnum, b, (*int)(p))
}
func (p DiscardPolicy) String() string               { return discardEnum.string(int(p)) }
func (p DiscardPolicy) MarshalJSON() ([]byte, error) { return discardEnum.marshal(int(p)) }
func (p *DiscardPolicy) UnmarshalJSON(b []byte) error {
	return unmarshalEnum(discardEnum, b, (*int)(p))
}
func (p StorageType) String() string                    { return storageEnum.string(int(p)) }
func (p StorageType) MarshalJSON() ([]byte, error)      { return storageEnum.marshal(int(p)) }
func (p *StorageType) UnmarshalJSON(b []byte) error     { return unmarshalEnum(storageEnum, b, (*int)(p)) }
func (p StoreCompression) String() string               { return compressionEnum.string(int(p)) }
func (p StoreCompression) MarshalJSON() ([]byte, error) { return compressionEnum.marshal(int(p)) }
func (p *StoreCompression) UnmarshalJSON(b []byte) error {
	return unmarshalEnum(compressionEnum, b, (*int)(p))
}
func (p DeliverPolicy) String() string               { return deliverEnum.string(int(p)) }
func (p DeliverPolicy) MarshalJSON() ([]byte, error) { return deliverEnum.marshal(int(p)) }
func (p *DeliverPolicy) UnmarshalJSON(b []byte) error {
	return unmarshalEnum(deliverEnum, b, (*int)(p))
}
func (p AckPolicy) String() string                    { return ackEnum.string(int(p)) }
func (p AckPolicy) MarshalJSON() ([]byte, error)      { return ackEnum.marshal(int(p)) }
func (p *AckPolicy) UnmarshalJSON(b []byte) error     { return unmarshalEnum(ackEnum, b, (*int)(p)) }
func (p ReplayPolicy) String() string                 { return replayEnum.string(int(p)) }
func (p ReplayPolicy) MarshalJSON() ([]byte, error)   { return replayEnum.marshal(int(p)) }
func (p *ReplayPolicy) UnmarshalJSON(b []byte) error  { return unmarshalEnum(replayEnum, b, (*int)(p)) }
func (p PriorityPolicy) MarshalJSON() ([]byte, error) { return priorityEnum.marshal(int(p)) }
func (p *PriorityPolicy) UnmarshalJSON(b []byte) error {
	return unmarshalEnum(priorityEnum, b, (*int)(p))
}

func (p PersistModeType) String() string               { return persistEnum.string(int(p)) }
func (p PersistModeType) MarshalJSON() ([]byte, error) { return persistEnum.marshal(int(p)) }
func (p *PersistModeType) UnmarshalJSON(b []byte) error {
	return unmarshalEnum(persistEnum, b, (*int)(p))
}

func unmarshalEnum(e enum, b []byte, v *int) error {
	n, err := e.unmarshal(b)
	if err == nil {
		*v = n
	}
	return err
}

// StreamConfig is a stream's configuration, with nats.go's field names,
// types and JSON tags.
type StreamConfig struct {
	Name                   string                  `json:"name"`
	Description            string                  `json:"description,omitempty"`
	Subjects               []string                `json:"subjects,omitempty"`
	Retention              RetentionPolicy         `json:"retention"`
	MaxConsumers           int                     `json:"max_consumers"`
	MaxMsgs                int64                   `json:"max_msgs"`
	MaxBytes               int64                   `json:"max_bytes"`
	Discard                DiscardPolicy           `json:"discard"`
	DiscardNewPerSubject   bool                    `json:"discard_new_per_subject,omitempty"`
	MaxAge                 time.Duration           `json:"max_age"`
	MaxMsgsPerSubject      int64                   `json:"max_msgs_per_subject"`
	MaxMsgSize             int32                   `json:"max_msg_size,omitempty"`
	Storage                StorageType             `json:"storage"`
	Replicas               int                     `json:"num_replicas"`
	NoAck                  bool                    `json:"no_ack,omitempty"`
	Duplicates             time.Duration           `json:"duplicate_window,omitempty"`
	Placement              *Placement              `json:"placement,omitempty"`
	Mirror                 *StreamSource           `json:"mirror,omitempty"`
	Sources                []*StreamSource         `json:"sources,omitempty"`
	Sealed                 bool                    `json:"sealed,omitempty"`
	DenyDelete             bool                    `json:"deny_delete,omitempty"`
	DenyPurge              bool                    `json:"deny_purge,omitempty"`
	AllowRollup            bool                    `json:"allow_rollup_hdrs,omitempty"`
	Compression            StoreCompression        `json:"compression"`
	FirstSeq               uint64                  `json:"first_seq,omitempty"`
	SubjectTransform       *SubjectTransformConfig `json:"subject_transform,omitempty"`
	RePublish              *RePublish              `json:"republish,omitempty"`
	AllowDirect            bool                    `json:"allow_direct"`
	MirrorDirect           bool                    `json:"mirror_direct"`
	Metadata               map[string]string       `json:"metadata,omitempty"`
	AllowMsgTTL            bool                    `json:"allow_msg_ttl,omitempty"`
	SubjectDeleteMarkerTTL time.Duration           `json:"subject_delete_marker_ttl,omitempty"`
	ConsumerLimits         StreamConsumerLimits    `json:"consumer_limits,omitempty"`
	// Template is the stream template that made the stream (read only;
	// templates are gone from current servers).
	Template string `json:"template_owner,omitempty"`
	// AllowMsgCounter makes the stream a counter stream (server 2.12+):
	// a publish with a Nats-Incr header adds to its subject's value,
	// which comes back in PubAck.Value.
	AllowMsgCounter bool `json:"allow_msg_counter,omitempty"`
	// AllowAtomicPublish lets a batch of publishes be stored all or none
	// (server 2.12+).
	AllowAtomicPublish bool `json:"allow_atomic,omitempty"`
	// AllowMsgSchedules lets publishes schedule messages (Nats-Schedule
	// headers, server 2.12+).
	AllowMsgSchedules bool `json:"allow_msg_schedules,omitempty"`
	// PersistMode is AsyncPersistMode to acknowledge writes before they
	// are synced (server 2.12+).
	PersistMode PersistModeType `json:"persist_mode,omitempty"`
	// AllowBatchPublish lets a batch of publishes be sent with one ack
	// (server 2.14+).
	AllowBatchPublish bool `json:"allow_batched,omitempty"`
}

type StreamSource struct {
	Name              string                   `json:"name"`
	OptStartSeq       uint64                   `json:"opt_start_seq,omitempty"`
	OptStartTime      *time.Time               `json:"opt_start_time,omitempty"`
	FilterSubject     string                   `json:"filter_subject,omitempty"`
	SubjectTransforms []SubjectTransformConfig `json:"subject_transforms,omitempty"`
	External          *ExternalStream          `json:"external,omitempty"`
	// Consumer names the consumer the source is read through (server
	// 2.14+).
	Consumer *StreamConsumerSource `json:"consumer,omitempty"`
	// Domain is the JetStream domain the stream lives in: stream
	// creation and update turn it into External (an error if both are
	// set), as nats.go does.
	Domain string `json:"-"`
}

// StreamConsumerSource is the consumer a stream source reads through.
type StreamConsumerSource struct {
	Name           string `json:"name,omitempty"`
	DeliverSubject string `json:"deliver_subject,omitempty"`
}

// ExternalStream is the API prefix (and deliver prefix) through which a
// stream of another account or domain is reached.
type ExternalStream struct {
	APIPrefix     string `json:"api"`
	DeliverPrefix string `json:"deliver"`
}

type SubjectTransformConfig struct {
	Source      string `json:"src"`
	Destination string `json:"dest"`
}

type StreamState struct {
	Msgs        uint64            `json:"messages"`
	Bytes       uint64            `json:"bytes"`
	FirstSeq    uint64            `json:"first_seq"`
	FirstTime   time.Time         `json:"first_ts"`
	LastSeq     uint64            `json:"last_seq"`
	LastTime    time.Time         `json:"last_ts"`
	Consumers   int               `json:"consumer_count"`
	Deleted     []uint64          `json:"deleted"`
	NumDeleted  int               `json:"num_deleted"`
	NumSubjects uint64            `json:"num_subjects"`
	Subjects    map[string]uint64 `json:"subjects"`
	Lost        *LostStreamData   `json:"lost,omitempty"`
}

// LostStreamData is what a stream lost (damaged storage).
type LostStreamData struct {
	Msgs  []uint64 `json:"msgs"`
	Bytes uint64   `json:"bytes"`
}

type ClusterInfo struct {
	Name        string              `json:"name,omitempty"`
	RaftGroup   string              `json:"raft_group,omitempty"`
	Leader      string              `json:"leader,omitempty"`
	LeaderSince *time.Time          `json:"leader_since,omitempty"`
	SystemAcc   bool                `json:"system_account,omitempty"`
	TrafficAcc  string              `json:"traffic_account,omitempty"`
	Replicas    []*PeerInfo         `json:"replicas,omitempty"`
	Desired     *DesiredClusterInfo `json:"desired,omitempty"`
}

// DesiredClusterInfo is where a migrating stream or consumer is going.
type DesiredClusterInfo struct {
	Created  time.Time                 `json:"created"`
	Name     string                    `json:"name,omitempty"`
	Replicas []*DesiredPeerInfo        `json:"replicas,omitempty"`
	Origin   *DesiredClusterInfoOrigin `json:"origin,omitempty"`
	Status   *DesiredClusterInfoStatus `json:"status,omitempty"`
}

// DesiredClusterInfoOrigin is what a migration started from.
type DesiredClusterInfoOrigin struct {
	Replicas  int              `json:"replicas"`
	Placement *Placement       `json:"placement,omitempty"`
	Retention *RetentionPolicy `json:"retention,omitempty"`
}

// DesiredPeerInfo is a server a migration moves to.
type DesiredPeerInfo struct {
	Name    string `json:"name"`
	Offline bool   `json:"offline,omitempty"`
	Peer    string `json:"peer"`
}

// DesiredClusterInfoStatus is what a migration waits for.
type DesiredClusterInfoStatus struct {
	Description string              `json:"description"`
	Type        MigrationStatusType `json:"type"`
	Err         string              `json:"err,omitempty"`
}

type StreamInfo struct {
	Config     StreamConfig        `json:"config"`
	Created    time.Time           `json:"created"`
	State      StreamState         `json:"state"`
	Domain     string              `json:"domain,omitempty"`
	Cluster    *ClusterInfo        `json:"cluster,omitempty"`
	Mirror     *StreamSourceInfo   `json:"mirror,omitempty"`
	Sources    []*StreamSourceInfo `json:"sources,omitempty"`
	Alternates []StreamAlternate   `json:"alternates,omitempty"`
	TimeStamp  time.Time           `json:"ts"`
}

// StreamSourceInfo is the state of a mirror or source of a stream.
type StreamSourceInfo struct {
	Name              string                   `json:"name"`
	External          *ExternalStream          `json:"external,omitempty"`
	Lag               uint64                   `json:"lag"`
	Seq               uint64                   `json:"seq,omitempty"`
	Active            time.Duration            `json:"active"`
	Error             *APIError                `json:"error,omitempty"`
	FilterSubject     string                   `json:"filter_subject"`
	SubjectTransforms []SubjectTransformConfig `json:"subject_transforms"`
}

// ConsumerConfig is a consumer's configuration, with nats.go's field
// names, types and JSON tags.
type ConsumerConfig struct {
	Name               string            `json:"name,omitempty"`
	Durable            string            `json:"durable_name,omitempty"`
	Description        string            `json:"description,omitempty"`
	DeliverPolicy      DeliverPolicy     `json:"deliver_policy"`
	OptStartSeq        uint64            `json:"opt_start_seq,omitempty"`
	OptStartTime       *time.Time        `json:"opt_start_time,omitempty"`
	AckPolicy          AckPolicy         `json:"ack_policy"`
	AckWait            time.Duration     `json:"ack_wait,omitempty"`
	MaxDeliver         int               `json:"max_deliver,omitempty"`
	BackOff            []time.Duration   `json:"backoff,omitempty"`
	FilterSubject      string            `json:"filter_subject,omitempty"`
	ReplayPolicy       ReplayPolicy      `json:"replay_policy"`
	DeliverSubject     string            `json:"deliver_subject,omitempty"`
	DeliverGroup       string            `json:"deliver_group,omitempty"`
	FlowControl        bool              `json:"flow_control,omitempty"`
	IdleHeartbeat      time.Duration     `json:"idle_heartbeat,omitempty"`
	RateLimit          uint64            `json:"rate_limit_bps,omitempty"`
	SampleFrequency    string            `json:"sample_freq,omitempty"`
	MaxWaiting         int               `json:"max_waiting,omitempty"`
	MaxAckPending      int               `json:"max_ack_pending,omitempty"`
	HeadersOnly        bool              `json:"headers_only,omitempty"`
	MaxRequestBatch    int               `json:"max_batch,omitempty"`
	MaxRequestExpires  time.Duration     `json:"max_expires,omitempty"`
	MaxRequestMaxBytes int               `json:"max_bytes,omitempty"`
	InactiveThreshold  time.Duration     `json:"inactive_threshold,omitempty"`
	Replicas           int               `json:"num_replicas"`
	MemoryStorage      bool              `json:"mem_storage,omitempty"`
	FilterSubjects     []string          `json:"filter_subjects,omitempty"`
	Metadata           map[string]string `json:"metadata,omitempty"`
	PauseUntil         *time.Time        `json:"pause_until,omitempty"`
	PriorityPolicy     PriorityPolicy    `json:"priority_policy,omitempty"`
	PinnedTTL          time.Duration     `json:"priority_timeout,omitempty"`
	PriorityGroups     []string          `json:"priority_groups,omitempty"`
}

type ConsumerInfo struct {
	Stream         string               `json:"stream_name"`
	Name           string               `json:"name"`
	Created        time.Time            `json:"created"`
	Config         ConsumerConfig       `json:"config"`
	Delivered      SequenceInfo         `json:"delivered"`
	AckFloor       SequenceInfo         `json:"ack_floor"`
	NumAckPending  int                  `json:"num_ack_pending"`
	NumRedelivered int                  `json:"num_redelivered"`
	NumWaiting     int                  `json:"num_waiting"`
	NumPending     uint64               `json:"num_pending"`
	Cluster        *ClusterInfo         `json:"cluster,omitempty"`
	PushBound      bool                 `json:"push_bound,omitempty"`
	Paused         bool                 `json:"paused,omitempty"`
	PauseRemaining time.Duration        `json:"pause_remaining,omitempty"`
	TimeStamp      time.Time            `json:"ts"`
	PriorityGroups []PriorityGroupState `json:"priority_groups,omitempty"`
}

// PriorityGroupState is a priority group's state: its pinned client, if
// any.
type PriorityGroupState struct {
	Group          string    `json:"group"`
	PinnedClientID string    `json:"pinned_client_id,omitempty"`
	PinnedTS       time.Time `json:"pinned_ts,omitempty"`
}

// OrderedConsumerConfig is what an ordered consumer reads.
type OrderedConsumerConfig struct {
	FilterSubjects    []string
	DeliverPolicy     DeliverPolicy
	OptStartSeq       uint64
	OptStartTime      *time.Time
	ReplayPolicy      ReplayPolicy
	InactiveThreshold time.Duration
	HeadersOnly       bool
	MaxResetAttempts  int
	NamePrefix        string
	// Metadata is set on every server-side consumer the ordered consumer
	// creates (server 2.10+; nil: none), as in nats.go.
	Metadata map[string]string
}

type PubAck struct {
	Stream    string `json:"stream"`
	Sequence  uint64 `json:"seq"`
	Duplicate bool   `json:"duplicate,omitempty"`
	Domain    string `json:"domain,omitempty"`
	// Value is a counter stream's value of the subject after the publish
	// (AllowMsgCounter), "" otherwise.
	Value string `json:"val,omitempty"`
}

type RawStreamMsg struct {
	Subject  string
	Sequence uint64
	Header   nats.Header
	Data     []byte
	Time     time.Time
}

// convert copies from into to through JSON: the configs and infos of this
// package and the binding's share the server's field names.
func convert(from, to any) error {
	b, err := json.Marshal(from)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, to)
}
