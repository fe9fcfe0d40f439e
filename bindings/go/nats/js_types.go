package nats

import (
	"encoding/json"
	"errors"
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
	// AckFlowControlPolicy acks like AckAllPolicy, by the replies to the
	// flow-control requests (nats-server 2.14+): for a durable push
	// consumer (DeliverSubject, FlowControl, Heartbeat and MaxAckPending
	// set, no AckWait) that a stream sources or mirrors through. The
	// server refuses it on a pull consumer. JSON "flow_control".
	AckFlowControlPolicy
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
	ackNames       = enumNames{[]string{"none", "all", "explicit", "flow_control"}, []string{"AckNone", "AckAll", "AckExplicit", "AckFlowControl"}, "Unknown AckPolicy"}
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

// StreamConfig is a stream's configuration, with nats.go's fields. It is
// sent to the server as JSON: each field means what the server makes of
// it.
type StreamConfig struct {
	Name                 string          `json:"name"`
	Description          string          `json:"description,omitempty"`
	Subjects             []string        `json:"subjects,omitempty"`
	Retention            RetentionPolicy `json:"retention"`
	MaxConsumers         int             `json:"max_consumers"`
	MaxMsgs              int64           `json:"max_msgs"`
	MaxBytes             int64           `json:"max_bytes"`
	Discard              DiscardPolicy   `json:"discard"`
	DiscardNewPerSubject bool            `json:"discard_new_per_subject,omitempty"`
	MaxAge               time.Duration   `json:"max_age"`
	MaxMsgsPerSubject    int64           `json:"max_msgs_per_subject"`
	MaxMsgSize           int32           `json:"max_msg_size,omitempty"`
	Storage              StorageType     `json:"storage"`
	Replicas             int             `json:"num_replicas"`
	NoAck                bool            `json:"no_ack,omitempty"`
	Duplicates           time.Duration   `json:"duplicate_window,omitempty"`
	Placement            *Placement      `json:"placement,omitempty"`
	// Mirror and Sources: a StreamSource's Domain is sent as its External
	// API prefix ("$JS.<domain>.API"), as nats.go does.
	Mirror           *StreamSource           `json:"mirror,omitempty"`
	Sources          []*StreamSource         `json:"sources,omitempty"`
	Sealed           bool                    `json:"sealed,omitempty"`
	DenyDelete       bool                    `json:"deny_delete,omitempty"`
	DenyPurge        bool                    `json:"deny_purge,omitempty"`
	AllowRollup      bool                    `json:"allow_rollup_hdrs,omitempty"`
	Compression      StoreCompression        `json:"compression"`
	FirstSeq         uint64                  `json:"first_seq,omitempty"`
	SubjectTransform *SubjectTransformConfig `json:"subject_transform,omitempty"`
	RePublish        *RePublish              `json:"republish,omitempty"`
	AllowDirect      bool                    `json:"allow_direct"`
	MirrorDirect     bool                    `json:"mirror_direct"`
	ConsumerLimits   StreamConsumerLimits    `json:"consumer_limits,omitempty"`
	Metadata         map[string]string       `json:"metadata,omitempty"`
	// Template is the stream template that owns the stream. Stream
	// templates are gone from nats-server 2.11 on: no server this
	// library supports fills it (as with nats.go).
	Template               string        `json:"template_owner,omitempty"`
	AllowMsgTTL            bool          `json:"allow_msg_ttl"`
	SubjectDeleteMarkerTTL time.Duration `json:"subject_delete_marker_ttl,omitempty"`
}

// StreamConsumerLimits are the defaults and limits a stream sets for its
// consumers.
type StreamConsumerLimits struct {
	InactiveThreshold time.Duration `json:"inactive_threshold,omitempty"`
	MaxAckPending     int           `json:"max_ack_pending,omitempty"`
}

// StoreCompression is how a file stream compresses its stored blocks.
type StoreCompression uint8

const (
	NoCompression StoreCompression = iota
	S2Compression
)

var compressionNames = enumNames{[]string{"none", "s2"}, []string{"None", "S2"}, "Unknown StoreCompression"}

func (c StoreCompression) String() string { return compressionNames.nameOf(int(c)) }

// MarshalJSON is the server's name ("none", "s2"); nats.go's error for
// another value.
func (c StoreCompression) MarshalJSON() ([]byte, error) {
	if int(c) >= len(compressionNames.json) {
		return nil, errors.New("unknown compression algorithm")
	}
	return json.Marshal(compressionNames.json[c])
}

func (c *StoreCompression) UnmarshalJSON(b []byte) error {
	v, err := compressionNames.unmarshal(b, "compression")
	if err != nil {
		var s string
		if json.Unmarshal(b, &s) == nil {
			return errors.New("unknown compression algorithm")
		}
		return err
	}
	*c = StoreCompression(v)
	return nil
}

// StreamState is what a stream holds. Deleted is filled when StreamInfo
// asks for it (StreamInfoRequest.DeletedDetails), Subjects when it asks
// for a SubjectsFilter.
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
}

// StreamInfo is a stream's configuration and state, with its cluster,
// its mirror's and sources' progress, and the streams (mirrors) that
// also answer its direct reads.
type StreamInfo struct {
	Config     StreamConfig        `json:"config"`
	Created    time.Time           `json:"created"`
	State      StreamState         `json:"state"`
	Cluster    *ClusterInfo        `json:"cluster,omitempty"`
	Mirror     *StreamSourceInfo   `json:"mirror,omitempty"`
	Sources    []*StreamSourceInfo `json:"sources,omitempty"`
	Alternates []*StreamAlternate  `json:"alternates,omitempty"`
}

// StreamAlternate is a stream that can answer a stream's direct reads
// (itself, or a mirror with MirrorDirect).
type StreamAlternate struct {
	Name    string `json:"name"`
	Domain  string `json:"domain,omitempty"`
	Cluster string `json:"cluster"`
}

// StreamSourceInfo is how far a mirror or source has copied its stream.
type StreamSourceInfo struct {
	Name              string                   `json:"name"`
	Lag               uint64                   `json:"lag"`
	Seq               uint64                   `json:"seq,omitempty"`
	Active            time.Duration            `json:"active"`
	External          *ExternalStream          `json:"external"`
	Error             *APIError                `json:"error"`
	FilterSubject     string                   `json:"filter_subject,omitempty"`
	SubjectTransforms []SubjectTransformConfig `json:"subject_transforms,omitempty"`
}

// ClusterInfo is the cluster a stream or consumer lives on: its Raft
// group's leader and the other replicas (a server outside a cluster
// names only itself as Leader).
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

// DesiredClusterInfo is where a stream or consumer being moved or
// rescaled is going, and how far along that is.
type DesiredClusterInfo struct {
	Created  time.Time                 `json:"created"`
	Name     string                    `json:"name,omitempty"`
	Replicas []*DesiredPeerInfo        `json:"replicas,omitempty"`
	Origin   *DesiredClusterInfoOrigin `json:"origin,omitempty"`
	Status   *DesiredClusterInfoStatus `json:"status,omitempty"`
}

// DesiredClusterInfoOrigin is the placement a move started from.
type DesiredClusterInfoOrigin struct {
	Replicas  int              `json:"replicas"`
	Placement *Placement       `json:"placement,omitempty"`
	Retention *RetentionPolicy `json:"retention,omitempty"`
}

// DesiredPeerInfo is a server a moving stream or consumer is to live on.
type DesiredPeerInfo struct {
	Name    string `json:"name"`
	Offline bool   `json:"offline,omitempty"`
	Peer    string `json:"peer"`
}

// DesiredClusterInfoStatus is what a move waits for.
type DesiredClusterInfoStatus struct {
	Description string              `json:"description"`
	Type        MigrationStatusType `json:"type"`
	Err         string              `json:"err,omitempty"`
}

// MigrationStatusType is the kind of step a move waits for.
type MigrationStatusType string

const (
	MigrationStatusMeta        MigrationStatusType = "meta"
	MigrationStatusMembership  MigrationStatusType = "membership"
	MigrationStatusSnapshot    MigrationStatusType = "snapshot"
	MigrationStatusCatchup     MigrationStatusType = "catchup"
	MigrationStatusQuorum      MigrationStatusType = "quorum"
	MigrationStatusBlocked     MigrationStatusType = "blocked"
	MigrationStatusUnavailable MigrationStatusType = "unavailable"
)

// PeerInfo is one replica of a stream or consumer.
type PeerInfo struct {
	Name    string        `json:"name"`
	Current bool          `json:"current"`
	Offline bool          `json:"offline,omitempty"`
	Active  time.Duration `json:"active"`
	Lag     uint64        `json:"lag,omitempty"`
	Peer    string        `json:"peer"`
	Pending bool          `json:"pending,omitempty"`
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
	Cluster        *ClusterInfo   `json:"cluster,omitempty"`
	PushBound      bool           `json:"push_bound,omitempty"`
}
