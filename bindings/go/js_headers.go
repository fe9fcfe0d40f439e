package natsio

/*
#include "natsio.h"
*/
import "C"

// The names of the headers JetStream reads and writes, and Nats-Rollup's
// values (JSHeaderRollupSubject, JSHeaderRollupAll): natsio.h's
// NATSIO_JS_HEADER_ defines, where each is described.
const (
	JSHeaderMsgID                              = C.NATSIO_JS_HEADER_MSG_ID
	JSHeaderExpectedStream                     = C.NATSIO_JS_HEADER_EXPECTED_STREAM
	JSHeaderExpectedLastSequence               = C.NATSIO_JS_HEADER_EXPECTED_LAST_SEQUENCE
	JSHeaderExpectedLastSubjectSequence        = C.NATSIO_JS_HEADER_EXPECTED_LAST_SUBJECT_SEQUENCE
	JSHeaderExpectedLastSubjectSequenceSubject = C.NATSIO_JS_HEADER_EXPECTED_LAST_SUBJECT_SEQUENCE_SUBJECT
	JSHeaderExpectedLastMsgID                  = C.NATSIO_JS_HEADER_EXPECTED_LAST_MSG_ID
	JSHeaderTTL                                = C.NATSIO_JS_HEADER_TTL
	JSHeaderRollup                             = C.NATSIO_JS_HEADER_ROLLUP
	JSHeaderRollupSubject                      = C.NATSIO_JS_HEADER_ROLLUP_SUBJECT
	JSHeaderRollupAll                          = C.NATSIO_JS_HEADER_ROLLUP_ALL
	JSHeaderSchedule                           = C.NATSIO_JS_HEADER_SCHEDULE
	JSHeaderScheduleTarget                     = C.NATSIO_JS_HEADER_SCHEDULE_TARGET
	JSHeaderScheduleSource                     = C.NATSIO_JS_HEADER_SCHEDULE_SOURCE
	JSHeaderScheduleTTL                        = C.NATSIO_JS_HEADER_SCHEDULE_TTL
	JSHeaderScheduleTimeZone                   = C.NATSIO_JS_HEADER_SCHEDULE_TIME_ZONE
	JSHeaderScheduleRollup                     = C.NATSIO_JS_HEADER_SCHEDULE_ROLLUP
	JSHeaderScheduler                          = C.NATSIO_JS_HEADER_SCHEDULER
	JSHeaderScheduleNext                       = C.NATSIO_JS_HEADER_SCHEDULE_NEXT
	JSHeaderIncr                               = C.NATSIO_JS_HEADER_INCR
	JSHeaderCounterSources                     = C.NATSIO_JS_HEADER_COUNTER_SOURCES
	JSHeaderBatchID                            = C.NATSIO_JS_HEADER_BATCH_ID
	JSHeaderBatchSequence                      = C.NATSIO_JS_HEADER_BATCH_SEQUENCE
	JSHeaderBatchCommit                        = C.NATSIO_JS_HEADER_BATCH_COMMIT
	JSHeaderStream                             = C.NATSIO_JS_HEADER_STREAM
	JSHeaderSubject                            = C.NATSIO_JS_HEADER_SUBJECT
	JSHeaderSequence                           = C.NATSIO_JS_HEADER_SEQUENCE
	JSHeaderTimeStamp                          = C.NATSIO_JS_HEADER_TIME_STAMP
	JSHeaderLastSequence                       = C.NATSIO_JS_HEADER_LAST_SEQUENCE
	JSHeaderNumPending                         = C.NATSIO_JS_HEADER_NUM_PENDING
	JSHeaderMsgSize                            = C.NATSIO_JS_HEADER_MSG_SIZE
	JSHeaderPendingMessages                    = C.NATSIO_JS_HEADER_PENDING_MESSAGES
	JSHeaderPendingBytes                       = C.NATSIO_JS_HEADER_PENDING_BYTES
	JSHeaderPinID                              = C.NATSIO_JS_HEADER_PIN_ID
	JSHeaderMarkerReason                       = C.NATSIO_JS_HEADER_MARKER_REASON
	JSHeaderRequiredAPILevel                   = C.NATSIO_JS_HEADER_REQUIRED_API_LEVEL
)
