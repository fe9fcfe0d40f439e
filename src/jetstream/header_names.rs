//! The names of the headers JetStream reads and writes (the reference's
//! `jetstream.headers`), and the values of `Nats-Rollup`.
//!
//! build.rs reads this file as text: every `pub const NAME: &str = "...";`
//! becomes `#define NATSIO_JS_HEADER_NAME "..."` in include/natsio.h, its
//! `///` lines the define's comment. Keep to that one form per constant.

/// Publish: a deduplication id; the stream drops a second message with
/// this id within its duplicate window.
pub const MSG_ID: &str = "Nats-Msg-Id";
/// Publish: the stream that must store the message.
pub const EXPECTED_STREAM: &str = "Nats-Expected-Stream";
/// Publish: the sequence the stream's last message must have.
pub const EXPECTED_LAST_SEQUENCE: &str = "Nats-Expected-Last-Sequence";
/// Publish: the sequence the last message on the subject must have.
pub const EXPECTED_LAST_SUBJECT_SEQUENCE: &str = "Nats-Expected-Last-Subject-Sequence";
/// Publish: the subject filter EXPECTED_LAST_SUBJECT_SEQUENCE applies to
/// (server 2.12+).
pub const EXPECTED_LAST_SUBJECT_SEQUENCE_SUBJECT: &str =
    "Nats-Expected-Last-Subject-Sequence-Subject";
/// Publish: the Msg-Id the stream's last message must have.
pub const EXPECTED_LAST_MSG_ID: &str = "Nats-Expected-Last-Msg-Id";
/// Publish: the message's own time to live (whole seconds with a unit,
/// or "never"); the stream must allow per-message TTLs.
pub const TTL: &str = "Nats-TTL";
/// Publish: replaces earlier messages (ROLLUP_SUBJECT or ROLLUP_ALL).
pub const ROLLUP: &str = "Nats-Rollup";
/// Value of ROLLUP: keep only this message on its subject.
pub const ROLLUP_SUBJECT: &str = "sub";
/// Value of ROLLUP: keep only this message in the stream.
pub const ROLLUP_ALL: &str = "all";
/// Publish: a message schedule's pattern ("@at ...", "@every ...", cron).
pub const SCHEDULE: &str = "Nats-Schedule";
/// Publish: the subject a schedule publishes to.
pub const SCHEDULE_TARGET: &str = "Nats-Schedule-Target";
/// Publish: the subject whose last message a schedule publishes.
pub const SCHEDULE_SOURCE: &str = "Nats-Schedule-Source";
/// Publish: the TTL of the messages a schedule produces.
pub const SCHEDULE_TTL: &str = "Nats-Schedule-TTL";
/// Publish: the time zone of a cron schedule.
pub const SCHEDULE_TIME_ZONE: &str = "Nats-Schedule-Time-Zone";
/// Publish: a rollup the schedule's messages apply to their target.
pub const SCHEDULE_ROLLUP: &str = "Nats-Schedule-Rollup";
/// Set by the server on a scheduled message: the schedule's subject.
pub const SCHEDULER: &str = "Nats-Scheduler";
/// Set by the server on a scheduled message: the next firing.
pub const SCHEDULE_NEXT: &str = "Nats-Schedule-Next";
/// Publish: adds this value to a counter stream's subject.
pub const INCR: &str = "Nats-Incr";
/// On a counter message: the sources' contributions.
pub const COUNTER_SOURCES: &str = "Nats-Counter-Sources";
/// Atomic batch publish: the batch's id.
pub const BATCH_ID: &str = "Nats-Batch-Id";
/// Atomic batch publish: the message's place in its batch.
pub const BATCH_SEQUENCE: &str = "Nats-Batch-Sequence";
/// Atomic batch publish: the batch's last message.
pub const BATCH_COMMIT: &str = "Nats-Batch-Commit";
/// Direct get and republish: the stream the message came from.
pub const STREAM: &str = "Nats-Stream";
/// Direct get and republish: the message's subject.
pub const SUBJECT: &str = "Nats-Subject";
/// Direct get and republish: the message's stream sequence.
pub const SEQUENCE: &str = "Nats-Sequence";
/// Direct get: when the message was stored (RFC 3339).
pub const TIME_STAMP: &str = "Nats-Time-Stamp";
/// Direct get and republish: the sequence of the stream's message before.
pub const LAST_SEQUENCE: &str = "Nats-Last-Sequence";
/// Direct get (batch): how many matching messages remain.
pub const NUM_PENDING: &str = "Nats-Num-Pending";
/// Direct get and headers-only delivery: the payload's size in bytes.
pub const MSG_SIZE: &str = "Nats-Msg-Size";
/// Pull status: the messages of a request that were not delivered.
pub const PENDING_MESSAGES: &str = "Nats-Pending-Messages";
/// Pull status: the bytes of a request that were not delivered.
pub const PENDING_BYTES: &str = "Nats-Pending-Bytes";
/// Pinned-client priority group: the id the pinned client fetches with.
pub const PIN_ID: &str = "Nats-Pin-Id";
/// On a delete marker: why the message went ("MaxAge", "Purge", "Remove").
pub const MARKER_REASON: &str = "Nats-Marker-Reason";
/// JetStream API request: the API level the server must have.
pub const REQUIRED_API_LEVEL: &str = "Nats-Required-Api-Level";
