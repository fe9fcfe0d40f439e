//! The ordered consumer (ADR-17) through a `natsio_js` context: a
//! `natsio_ordered_consumer` handle whose runs are read as
//! `natsio_js_messages` iterators.

use std::collections::BTreeMap;
use std::ffi::c_char;
use std::time::Duration;

use super::consumer::natsio_js_messages;
use super::js::{json_result, natsio_js};
use super::status::natsio_status;
use super::token::natsio_token;
use super::{arg, free_box, guard, options_arg, out_arg, start_op, str_arg, write_box, TakeOnce};
use crate::client_handle::ClientHandle;
use crate::error::{Error, ErrorKind, Result};
use crate::jetstream::{
    Consumption, DeliverPolicy, OrderedConsumer, OrderedConsumerConfig, OrderedMessagesOptions,
};
use crate::op::Op;

/// Where an ordered consumer starts
/// (`natsio_ordered_consumer_options.deliver_policy`).
#[repr(i32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum natsio_deliver_policy {
    /// Every message of the stream (that matches the filters).
    NATSIO_DELIVER_ALL = 0,
    /// The last message of the stream (that matches the filters), then
    /// what comes.
    NATSIO_DELIVER_LAST = 1,
    /// Only messages stored after the consumer is created.
    NATSIO_DELIVER_NEW = 2,
    /// From stream sequence `opt_start_seq` on.
    NATSIO_DELIVER_BY_START_SEQUENCE = 3,
    /// From the first message stored at or after `opt_start_time_ns`.
    NATSIO_DELIVER_BY_START_TIME = 4,
    /// The last message of each subject, then what comes.
    NATSIO_DELIVER_LAST_PER_SUBJECT = 5,
}

/// `natsio_ordered_consumer_options.version` of this header.
pub const NATSIO_ORDERED_CONSUMER_OPTIONS_VERSION: u32 = 3;

/// What a `natsio_js_ordered_consumer` reads. Initialise with
/// `natsio_ordered_consumer_options_init`: every zero or NULL field means
/// the default (the whole stream, from its first message, with payloads).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct natsio_ordered_consumer_options {
    /// NATSIO_ORDERED_CONSUMER_OPTIONS_VERSION.
    pub version: u32,
    /// Subjects (wildcards allowed) to read, `filter_subjects_count` of
    /// them; NULL and 0: the whole stream. Copied by the call.
    pub filter_subjects: *const *const c_char,
    /// How many `filter_subjects` there are.
    pub filter_subjects_count: usize,
    /// A `natsio_deliver_policy` value; 0: NATSIO_DELIVER_ALL.
    pub deliver_policy: i32,
    /// The first stream sequence (at least 1) for
    /// NATSIO_DELIVER_BY_START_SEQUENCE; must be 0 with any other policy.
    pub opt_start_seq: u64,
    /// The start time in nanoseconds since the Unix epoch (not 0) for
    /// NATSIO_DELIVER_BY_START_TIME; must be 0 with any other policy.
    pub opt_start_time_ns: i64,
    /// Deliver headers only (the payload's size in the `Nats-Msg-Size`
    /// header).
    pub headers_only: bool,
    /// Since version 2. The server-side consumers are named
    /// `<name_prefix>_<serial>`, the serial counting them from 1 (nats.go's
    /// NamePrefix, nats.js's name_prefix); NULL: a fresh NUID. Copied by
    /// the call.
    pub name_prefix: *const c_char,
    /// Since version 2. How long the server keeps a consumer nobody reads;
    /// 0: 300000 ms (5 min).
    pub inactive_threshold_ms: i64,
    /// Since version 2. The consumers' `max_deliver`, shown in their info
    /// only (nothing is acknowledged, so nothing is redelivered); 0: not
    /// set (the server's -1, as nats.go); nats.js sets 1.
    pub max_deliver: i64,
    /// Since version 2. true: one filter subject is sent as a list
    /// (`filter_subjects`, as nats.js does when given a list); false: as
    /// `filter_subject` (as nats.go). The consumer's info shows which.
    pub filter_subjects_as_list: bool,
    /// Since version 3. Metadata of every server-side consumer it
    /// creates, a JSON object of strings (nats.go's Metadata); NULL or
    /// "{}": none. Anything else: NATSIO_ERR_INVALID_ARGUMENT. Copied by
    /// the call.
    pub metadata_json: *const c_char,
}

super::versioned!(
    natsio_ordered_consumer_options,
    NATSIO_ORDERED_CONSUMER_OPTIONS_VERSION,
    older: [1 => name_prefix, 2 => metadata_json]
);

/// Fills `opts` with the defaults and the version.
/// Errors: NATSIO_ERR_NULL_ARGUMENT.
#[no_mangle]
pub unsafe extern "C" fn natsio_ordered_consumer_options_init(
    opts: *mut natsio_ordered_consumer_options,
) -> natsio_status {
    guard(|| super::options_init(opts))
}

/// `natsio_ordered_messages_options.version` of this header.
pub const NATSIO_ORDERED_MESSAGES_OPTIONS_VERSION: u32 = 1;

/// Options of `natsio_ordered_consumer_messages`. Initialise with
/// `natsio_ordered_messages_options_init`: every zero field means the
/// default.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct natsio_ordered_messages_options {
    /// NATSIO_ORDERED_MESSAGES_OPTIONS_VERSION.
    pub version: u32,
    /// Messages requested from the server and buffered, together, at
    /// most; 0: 500. A reader that pauses (or a callback busy with a
    /// message: it counts until it returns) holds at most this many; the
    /// consumer pulls again as it reads, never the whole stream ahead.
    /// Above NATSIO_MAX_BATCH: NATSIO_MAX_BATCH.
    pub max_messages: i64,
    /// Lifetime of each pull request; 0: 30000 ms (at least 1000).
    pub expires_ms: i64,
    /// Server heartbeats while a request waits (two missed ones heal the
    /// consumer); 0: half of `expires_ms`, at most 5000 ms.
    pub idle_heartbeat_ms: i64,
    /// 0: none. Otherwise the run ends with NATSIO_ERR_NO_MESSAGES once no
    /// message has arrived for this long while nothing is buffered, rather
    /// than healing forever (a quiet stream and a dead one look alike).
    pub idle_timeout_ms: i64,
    /// End the run (NATSIO_DONE) once caught up: after the message the
    /// server delivered with nothing more pending (messages stored
    /// meanwhile are still delivered), or at once if nothing is pending.
    pub until_drained: bool,
}

super::versioned!(
    natsio_ordered_messages_options,
    NATSIO_ORDERED_MESSAGES_OPTIONS_VERSION
);

/// Fills `opts` with the defaults and the version.
/// Errors: NATSIO_ERR_NULL_ARGUMENT.
#[no_mangle]
pub unsafe extern "C" fn natsio_ordered_messages_options_init(
    opts: *mut natsio_ordered_messages_options,
) -> natsio_status {
    guard(|| super::options_init(opts))
}

/// An ordered consumer (ADR-17) on one stream
/// (`natsio_js_ordered_consumer`): an always-in-order, self-healing view
/// of the stream, backed by an ephemeral server-side consumer (no acks,
/// memory storage, one replica, 5 min inactive threshold) named, as
/// nats.go's, `<prefix>_<serial>`: a NUID prefix unless `name_prefix` is
/// given, the serial counting the consumers it created from 1. On a gap in
/// its consumer sequence, missed heartbeats, a reconnect or the consumer's
/// loss the library deletes it and creates the next one with
/// `by_start_sequence` from the stream sequence after the last message
/// delivered (backoff 100 ms doubling to 5 s between failed attempts), so
/// the reader sees no gap and no duplicate. Owned by the caller, freed with
/// `natsio_ordered_consumer_free`; every function is thread-safe.
pub struct natsio_ordered_consumer {
    oc: OrderedConsumer,
    client: ClientHandle,
}

fn oc<'a>(p: *const natsio_ordered_consumer) -> Result<&'a natsio_ordered_consumer> {
    // SAFETY: the caller passes a live handle or NULL.
    unsafe { arg(p, "oc") }
}

fn non_negative(v: i64, what: &str) -> Result<u64> {
    u64::try_from(v).map_err(|_| {
        Error::new(
            ErrorKind::InvalidArgument,
            format!("{what} must not be negative"),
        )
    })
}

unsafe fn consumer_config(
    o: *const natsio_ordered_consumer_options,
) -> Result<OrderedConsumerConfig> {
    let c = options_arg(o)?;
    let filter_subjects: Vec<String> = super::strings_arg(
        c.filter_subjects,
        c.filter_subjects_count,
        "filter_subjects",
        "filter subject",
    )?
    .into_iter()
    .map(str::to_string)
    .collect();
    let want = |ok: bool, what: &str| {
        if ok {
            Ok(())
        } else {
            Err(Error::new(ErrorKind::InvalidArgument, what.to_string()))
        }
    };
    let by_seq = natsio_deliver_policy::NATSIO_DELIVER_BY_START_SEQUENCE as i32;
    let by_time = natsio_deliver_policy::NATSIO_DELIVER_BY_START_TIME as i32;
    want(
        c.opt_start_seq == 0 || c.deliver_policy == by_seq,
        "opt_start_seq is only for NATSIO_DELIVER_BY_START_SEQUENCE",
    )?;
    want(
        c.opt_start_time_ns == 0 || c.deliver_policy == by_time,
        "opt_start_time_ns is only for NATSIO_DELIVER_BY_START_TIME",
    )?;
    let deliver_policy = match c.deliver_policy {
        0 => DeliverPolicy::All,
        1 => DeliverPolicy::Last,
        2 => DeliverPolicy::New,
        3 => {
            want(
                c.opt_start_seq > 0,
                "NATSIO_DELIVER_BY_START_SEQUENCE needs opt_start_seq (at least 1)",
            )?;
            DeliverPolicy::ByStartSequence(c.opt_start_seq)
        }
        4 => {
            want(
                c.opt_start_time_ns != 0,
                "NATSIO_DELIVER_BY_START_TIME needs opt_start_time_ns",
            )?;
            DeliverPolicy::ByStartTime(crate::jetstream::time::format_rfc3339_ns(
                c.opt_start_time_ns,
            ))
        }
        5 => DeliverPolicy::LastPerSubject,
        v => {
            return Err(Error::new(
                ErrorKind::InvalidArgument,
                format!("unknown deliver policy {v}"),
            ))
        }
    };
    Ok(OrderedConsumerConfig {
        filter_subjects,
        deliver_policy,
        headers_only: c.headers_only,
        name_prefix: super::opt_str_arg(c.name_prefix, "name_prefix")?.map(str::to_string),
        inactive_threshold: match c.inactive_threshold_ms {
            0 => None,
            ms => Some(Duration::from_millis(non_negative(
                ms,
                "inactive_threshold_ms",
            )?)),
        },
        max_deliver: match c.max_deliver {
            0 => None,
            n => Some(n),
        },
        filter_subjects_as_list: c.filter_subjects_as_list,
        metadata: metadata_arg(c.metadata_json)?,
    })
}

/// A metadata argument: NULL, or a JSON object of strings.
unsafe fn metadata_arg(p: *const c_char) -> Result<BTreeMap<String, String>> {
    let Some(text) = super::opt_str_arg(p, "metadata_json")? else {
        return Ok(BTreeMap::new());
    };
    let invalid = || {
        Error::new(
            ErrorKind::InvalidArgument,
            "metadata_json must be a JSON object of strings",
        )
    };
    let v: serde_json::Value = serde_json::from_str(text).map_err(|_| invalid())?;
    if !v.is_object() {
        return Err(invalid());
    }
    crate::jetstream::bucket::metadata_from_json(&v, true).map_err(|()| invalid())
}

/// Makes an ordered consumer on `stream` reading what `opts` says (NULL:
/// the whole stream from its first message). Checks the arguments only:
/// nothing is sent to the server until `natsio_ordered_consumer_start` or
/// `natsio_ordered_consumer_messages` (so a missing stream shows there).
/// The handle goes to `oc_out` (free with `natsio_ordered_consumer_free`);
/// it keeps what it needs of `js`, which may be freed first. Does not
/// block. Errors: NATSIO_ERR_NULL_ARGUMENT, NATSIO_ERR_INVALID_UTF8,
/// NATSIO_ERR_INVALID_ARGUMENT (bad stream name or name prefix, an unknown
/// policy, a start sequence or time missing or given with another policy,
/// a negative inactive threshold, an unknown options version), NATSIO_ERR_BAD_SUBJECT (a bad filter subject).
#[no_mangle]
pub unsafe extern "C" fn natsio_js_ordered_consumer(
    js: *const natsio_js,
    stream: *const c_char,
    opts: *const natsio_ordered_consumer_options,
    oc_out: *mut *mut natsio_ordered_consumer,
) -> natsio_status {
    guard(|| {
        let h: &natsio_js = arg(js, "js")?;
        let stream = str_arg(stream, "stream")?;
        let cfg = consumer_config(opts)?;
        let out = out_arg(oc_out, "oc_out")?;
        let oc = h.js.ordered_consumer(stream, cfg)?;
        write_box(
            out,
            natsio_ordered_consumer {
                oc,
                client: h.client_handle(),
            },
        );
        Ok(())
    })
}

/// Creates the server-side consumer (if none exists yet; otherwise, as
/// while a run is going, reads the info of the one in use) and, if
/// `info_json_out` is not NULL, gives its
/// ConsumerInfo JSON (free with `natsio_string_free`): "name" is the
/// consumer's name, "num_pending" what it has to deliver (0: nothing to
/// read yet). Blocks up to the context's timeout. Errors:
/// NATSIO_ERR_NULL_ARGUMENT, NATSIO_ERR_STREAM_NOT_FOUND,
/// NATSIO_ERR_CONSUMER_NOT_FOUND (a run is healing its consumer),
/// NATSIO_ERR_ILLEGAL_STATE (after `natsio_ordered_consumer_stop`, or on a
/// library runtime thread), NATSIO_ERR_JS_API, NATSIO_ERR_TIMEOUT,
/// NATSIO_ERR_CONNECTION_CLOSED.
#[no_mangle]
pub unsafe extern "C" fn natsio_ordered_consumer_start(
    oc: *const natsio_ordered_consumer,
    info_json_out: *mut *mut c_char,
) -> natsio_status {
    guard(|| json_result(self::oc(oc)?.oc.start(), info_json_out, true))
}

/// The token form of `natsio_ordered_consumer_start` (`natsio_token_string`).
#[no_mangle]
pub unsafe extern "C" fn natsio_ordered_consumer_start_async(
    oc: *const natsio_ordered_consumer,
    token_out: *mut *mut natsio_token,
) -> natsio_status {
    guard(|| {
        let h = self::oc(oc)?;
        start_op(
            h.oc.start().map(|v| v.to_string()),
            h.client.clone(),
            token_out,
        )
    })
}

unsafe fn messages_op(
    h: &natsio_ordered_consumer,
    opts: *const natsio_ordered_messages_options,
) -> Result<Op<Consumption>> {
    let c = options_arg(opts)?;
    let mut o = OrderedMessagesOptions::default();
    o.max_messages = crate::jetstream::batch_size(
        non_negative(c.max_messages, "max_messages")?,
        o.max_messages,
    );
    match non_negative(c.expires_ms, "expires_ms")? {
        0 => {}
        ms => o.expires = Duration::from_millis(ms),
    }
    match non_negative(c.idle_heartbeat_ms, "idle_heartbeat_ms")? {
        0 => {}
        ms => o.idle_heartbeat = Some(Duration::from_millis(ms)),
    }
    match non_negative(c.idle_timeout_ms, "idle_timeout_ms")? {
        0 => {}
        ms => o.idle_timeout = Some(Duration::from_millis(ms)),
    }
    o.until_drained = c.until_drained;
    Ok(h.oc.messages(o))
}

/// Starts a run of the ordered consumer (`opts` may be NULL), creating
/// the server-side consumer first unless `natsio_ordered_consumer_start`
/// did: from then on the library pulls the messages in stream order on
/// its own threads, whether or not the application reads, and heals the
/// consumer as described at `natsio_ordered_consumer`. Read them with the
/// `natsio_js_messages_` functions through `messages_out` (free with
/// `natsio_js_messages_free`): each message carries its JetStream metadata
/// (`natsio_msg_js_metadata`) and needs no acknowledgement. The run ends
/// with NATSIO_DONE when stopped (`natsio_js_messages_stop`,
/// `natsio_ordered_consumer_stop`) or drained (`until_drained`), with
/// NATSIO_ERR_NO_MESSAGES after `idle_timeout_ms` without a message, with
/// NATSIO_ERR_STREAM_NOT_FOUND if the stream goes away. When a run ends its
/// consumer is deleted; a later run continues after the last message the
/// application took from it (what the run had buffered comes again). One
/// run at a time. Blocks up to the context's timeout.
/// Errors: NATSIO_ERR_NULL_ARGUMENT, NATSIO_ERR_INVALID_ARGUMENT (options:
/// expires under 1000 ms, a heartbeat over half of it, negative values, an
/// unknown version), NATSIO_ERR_ILLEGAL_STATE (another run is going, or
/// after `natsio_ordered_consumer_stop`; or on a library runtime thread),
/// NATSIO_ERR_STREAM_NOT_FOUND, NATSIO_ERR_JS_API, NATSIO_ERR_TIMEOUT,
/// NATSIO_ERR_CONNECTION_CLOSED.
#[no_mangle]
pub unsafe extern "C" fn natsio_ordered_consumer_messages(
    oc: *const natsio_ordered_consumer,
    opts: *const natsio_ordered_messages_options,
    messages_out: *mut *mut natsio_js_messages,
) -> natsio_status {
    guard(|| {
        let h = self::oc(oc)?;
        let op = messages_op(h, opts)?;
        let out = out_arg(messages_out, "messages_out")?;
        let it = op.wait()?;
        write_box(
            out,
            natsio_js_messages {
                it,
                client: h.client.clone(),
            },
        );
        Ok(())
    })
}

/// The token form of `natsio_ordered_consumer_messages`; the iterator is
/// taken (once) with `natsio_token_js_messages`.
#[no_mangle]
pub unsafe extern "C" fn natsio_ordered_consumer_messages_async(
    oc: *const natsio_ordered_consumer,
    opts: *const natsio_ordered_messages_options,
    token_out: *mut *mut natsio_token,
) -> natsio_status {
    guard(|| {
        let h = self::oc(oc)?;
        let op = messages_op(h, opts)?.map(TakeOnce::new);
        start_op(op, h.client.clone(), token_out)
    })
}

/// Stops the ordered consumer: a run going ends (its iterator returns
/// NATSIO_DONE), the server-side consumer is deleted (it leaves the
/// stream's consumer names), and `natsio_ordered_consumer_start` and
/// `_messages` fail with NATSIO_ERR_ILLEGAL_STATE from then on.
/// Idempotent. Blocks up to the context's timeout. Errors:
/// NATSIO_ERR_NULL_ARGUMENT, NATSIO_ERR_TIMEOUT,
/// NATSIO_ERR_CONNECTION_CLOSED (the consumer is then left to its
/// inactive threshold), NATSIO_ERR_ILLEGAL_STATE (on a library runtime
/// thread).
#[no_mangle]
pub unsafe extern "C" fn natsio_ordered_consumer_stop(
    oc: *const natsio_ordered_consumer,
) -> natsio_status {
    guard(|| self::oc(oc)?.oc.stop().wait())
}

/// The token form of `natsio_ordered_consumer_stop`.
#[no_mangle]
pub unsafe extern "C" fn natsio_ordered_consumer_stop_async(
    oc: *const natsio_ordered_consumer,
    token_out: *mut *mut natsio_token,
) -> natsio_status {
    guard(|| {
        let h = self::oc(oc)?;
        start_op(h.oc.stop(), h.client.clone(), token_out)
    })
}

/// Frees an ordered consumer; accepts NULL. Asks the server to delete a
/// consumer no run uses (without waiting); a run's iterator still alive
/// goes on until it is stopped or freed, and then deletes its consumer.
/// Call `natsio_ordered_consumer_stop` first to end everything and wait.
#[no_mangle]
pub unsafe extern "C" fn natsio_ordered_consumer_free(oc: *mut natsio_ordered_consumer) {
    free_box(oc)
}
