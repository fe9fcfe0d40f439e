package jetstream

import natsio "github.com/libnatsio/natsio/bindings/go"

// The headers JetStream reads and writes, under nats.go jetstream's names
// (natsio.h's NATSIO_JS_HEADER_ defines describe each).
const (
	MsgIDHeader                   = natsio.JSHeaderMsgID
	ExpectedStreamHeader          = natsio.JSHeaderExpectedStream
	ExpectedLastSeqHeader         = natsio.JSHeaderExpectedLastSequence
	ExpectedLastSubjSeqHeader     = natsio.JSHeaderExpectedLastSubjectSequence
	ExpectedLastSubjSeqSubjHeader = natsio.JSHeaderExpectedLastSubjectSequenceSubject
	ExpectedLastMsgIDHeader       = natsio.JSHeaderExpectedLastMsgID
	MsgTTLHeader                  = natsio.JSHeaderTTL
	MsgRollup                     = natsio.JSHeaderRollup
	MarkerReasonHeader            = natsio.JSHeaderMarkerReason
	ScheduleHeader                = natsio.JSHeaderSchedule
	ScheduleTargetHeader          = natsio.JSHeaderScheduleTarget
	ScheduleSourceHeader          = natsio.JSHeaderScheduleSource
	ScheduleTTLHeader             = natsio.JSHeaderScheduleTTL
	ScheduleTimeZoneHeader        = natsio.JSHeaderScheduleTimeZone
	ScheduleRollupHeader          = natsio.JSHeaderScheduleRollup
)

// The headers of republished messages and direct gets.
const (
	StreamHeader    = natsio.JSHeaderStream
	SequenceHeader  = natsio.JSHeaderSequence
	TimeStampHeaer  = natsio.JSHeaderTimeStamp // sic: nats.go's spelling
	SubjectHeader   = natsio.JSHeaderSubject
	SchedulerHeader = natsio.JSHeaderScheduler
	// ScheduleNextHeader is on a scheduled message's next run.
	ScheduleNextHeader = natsio.JSHeaderScheduleNext
	LastSequenceHeader = natsio.JSHeaderLastSequence
)

// Nats-Rollup's values: the subject's messages, or the whole stream's.
const (
	MsgRollupSubject = natsio.JSHeaderRollupSubject
	MsgRollupAll     = natsio.JSHeaderRollupAll
)
