//! Pull consumers through a `natsio_js` context: management, fetching
//! (`natsio_msg_list`), and acknowledging consumed messages.

use std::ffi::c_char;
use std::sync::atomic::Ordering;
use std::time::Duration;

use super::js::{js, natsio_js};
use super::msg::natsio_msg;
use super::status::natsio_status;
use super::{
    arg, guard, guard_value, guard_void, opt_str_arg, out_arg, str_arg, write_box, write_string,
};
use crate::error::{Error, ErrorKind, Result};
use crate::jetstream::{parse_metadata, AckKind, CreateAction, FetchOptions};

unsafe fn create(
    js: *const natsio_js,
    stream: *const c_char,
    config_json: *const c_char,
    info_json_out: *mut *mut c_char,
    action: CreateAction,
) -> natsio_status {
    guard(|| {
        let j = self::js(js)?;
        let stream = str_arg(stream, "stream")?;
        let cfg = str_arg(config_json, "config_json")?;
        let info = j.create_consumer(stream, cfg, action)?;
        if !info_json_out.is_null() {
            write_string(info_json_out, &info.to_string())?;
        }
        Ok(())
    })
}

/// Creates a pull consumer on `stream` from `config_json`, a
/// ConsumerConfig object (server field names: "durable_name" or "name",
/// "filter_subject(s)", "deliver_policy", "ack_policy" (default
/// "explicit", as in nats.go; the server's own default is "none"), "ack_wait" as a
/// duration, "max_deliver", "inactive_threshold", ...); without a name the
/// library generates one (an ephemeral consumer: give it an
/// "inactive_threshold"). If `info_json_out` is not NULL it receives the
/// ConsumerInfo JSON (free with `natsio_string_free`); its "name" is the
/// consumer's name. An identical existing consumer is fine. Blocks up to
/// the context's timeout. Errors: NATSIO_ERR_NULL_ARGUMENT,
/// NATSIO_ERR_CONFIG (the detail names the field),
/// NATSIO_ERR_INVALID_ARGUMENT (bad stream or consumer name),
/// NATSIO_ERR_STREAM_NOT_FOUND, NATSIO_ERR_JS_API (e.g. exists with another
/// configuration), NATSIO_ERR_TIMEOUT, NATSIO_ERR_CONNECTION_CLOSED.
#[no_mangle]
pub unsafe extern "C" fn natsio_js_consumer_create(
    js: *const natsio_js,
    stream: *const c_char,
    config_json: *const c_char,
    info_json_out: *mut *mut c_char,
) -> natsio_status {
    create(js, stream, config_json, info_json_out, CreateAction::Create)
}

/// Changes an existing consumer (named in the config):
/// NATSIO_ERR_CONSUMER_NOT_FOUND if there is none. Otherwise as
/// `natsio_js_consumer_create`.
#[no_mangle]
pub unsafe extern "C" fn natsio_js_consumer_update(
    js: *const natsio_js,
    stream: *const c_char,
    config_json: *const c_char,
    info_json_out: *mut *mut c_char,
) -> natsio_status {
    create(js, stream, config_json, info_json_out, CreateAction::Update)
}

/// Creates the consumer, or updates it if it exists. Otherwise as
/// `natsio_js_consumer_create`.
#[no_mangle]
pub unsafe extern "C" fn natsio_js_consumer_create_or_update(
    js: *const natsio_js,
    stream: *const c_char,
    config_json: *const c_char,
    info_json_out: *mut *mut c_char,
) -> natsio_status {
    create(
        js,
        stream,
        config_json,
        info_json_out,
        CreateAction::CreateOrUpdate,
    )
}

/// The ConsumerInfo JSON of `consumer` on `stream` through `info_json_out`
/// (free with `natsio_string_free`): config, delivered and ack_floor
/// sequences, num_pending, num_ack_pending, num_waiting, ...
/// Errors: NATSIO_ERR_CONSUMER_NOT_FOUND, NATSIO_ERR_STREAM_NOT_FOUND, as
/// for `natsio_js_consumer_create`.
#[no_mangle]
pub unsafe extern "C" fn natsio_js_consumer_info(
    js: *const natsio_js,
    stream: *const c_char,
    consumer: *const c_char,
    info_json_out: *mut *mut c_char,
) -> natsio_status {
    guard(|| {
        let j = self::js(js)?;
        let stream = str_arg(stream, "stream")?;
        let consumer = str_arg(consumer, "consumer")?;
        let out = out_arg(info_json_out, "info_json_out")?;
        write_string(out, &j.consumer_info(stream, consumer)?.to_string())
    })
}

/// Deletes `consumer` of `stream`. A fetch waiting on it ends with
/// NATSIO_ERR_CONSUMER_DELETED. Errors as `natsio_js_consumer_info`.
#[no_mangle]
pub unsafe extern "C" fn natsio_js_consumer_delete(
    js: *const natsio_js,
    stream: *const c_char,
    consumer: *const c_char,
) -> natsio_status {
    guard(|| {
        let j = self::js(js)?;
        j.delete_consumer(str_arg(stream, "stream")?, str_arg(consumer, "consumer")?)
    })
}

/// The names of `stream`'s consumers as a JSON array of strings through
/// `json_out` (free with `natsio_string_free`).
#[no_mangle]
pub unsafe extern "C" fn natsio_js_consumer_names(
    js: *const natsio_js,
    stream: *const c_char,
    json_out: *mut *mut c_char,
) -> natsio_status {
    guard(|| {
        let j = self::js(js)?;
        let stream = str_arg(stream, "stream")?;
        let out = out_arg(json_out, "json_out")?;
        let names = j.consumer_names(stream)?;
        write_string(out, &serde_json::Value::from(names).to_string())
    })
}

/// Options of `natsio_js_fetch`. Zero-initialise it: every zero field
/// means the default.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct natsio_fetch_options {
    /// Messages to fetch at most; 0: 100.
    pub max_messages: i64,
    /// Payload bytes to fetch at most; 0: no limit.
    pub max_bytes: i64,
    /// How long the server holds the pull request open; 0: 5000 ms. The
    /// call returns at the latest one second after that.
    pub expires_ms: i64,
    /// Return at once with the messages available now (possibly none).
    pub no_wait: bool,
    /// Server heartbeats while the request is open; 0: none.
    pub idle_heartbeat_ms: i64,
}

fn non_negative(v: i64, what: &str) -> Result<u64> {
    u64::try_from(v).map_err(|_| {
        Error::new(
            ErrorKind::InvalidArgument,
            format!("{what} must not be negative"),
        )
    })
}

unsafe fn fetch_options(o: *const natsio_fetch_options) -> Result<FetchOptions> {
    let mut opts = FetchOptions::default();
    let Some(o) = o.as_ref() else {
        return Ok(opts);
    };
    match non_negative(o.max_messages, "max_messages")? {
        0 => {}
        n => opts.max_messages = n.min(1 << 20) as usize,
    }
    opts.max_bytes = non_negative(o.max_bytes, "max_bytes")? as usize;
    match non_negative(o.expires_ms, "expires_ms")? {
        0 => {}
        ms => opts.expires = Duration::from_millis(ms),
    }
    opts.no_wait = o.no_wait;
    opts.idle_heartbeat =
        Duration::from_millis(non_negative(o.idle_heartbeat_ms, "idle_heartbeat_ms")?);
    Ok(opts)
}

/// Messages returned by `natsio_js_fetch`. Owned by the caller, freed with
/// `natsio_msg_list_free` (which frees the messages it holds).
pub struct natsio_msg_list {
    msgs: Vec<natsio_msg>,
}

/// Pulls up to `max_messages` messages from the pull consumer `consumer`
/// of `stream` (`opts` may be NULL: 100 messages, 5 s) and returns them, in
/// order, through `list_out` (possibly empty: the server had none before
/// `expires`, or none at all with `no_wait`). Blocks the calling thread
/// until the batch is full or the request ends. Acknowledge each message
/// with `natsio_msg_ack` (or nak/term/in_progress) unless the consumer's
/// ack policy is "none". Errors: NATSIO_ERR_NULL_ARGUMENT,
/// NATSIO_ERR_INVALID_ARGUMENT (bad names or negative options),
/// NATSIO_ERR_CONSUMER_DELETED, NATSIO_ERR_CONSUMER_NOT_FOUND (no such
/// consumer or stream), NATSIO_ERR_JS_API, NATSIO_ERR_CONNECTION_CLOSED,
/// NATSIO_ERR_ILLEGAL_STATE (on a library runtime thread).
#[no_mangle]
pub unsafe extern "C" fn natsio_js_fetch(
    js: *const natsio_js,
    stream: *const c_char,
    consumer: *const c_char,
    opts: *const natsio_fetch_options,
    list_out: *mut *mut natsio_msg_list,
) -> natsio_status {
    guard(|| {
        let h = arg(js, "js")?;
        let stream = str_arg(stream, "stream")?;
        let consumer = str_arg(consumer, "consumer")?;
        let out = out_arg(list_out, "list_out")?;
        let opts = fetch_options(opts)?;
        let client = h.client_weak();
        let msgs =
            h.js.fetch(stream, consumer, &opts)?
                .into_iter()
                .map(|m| natsio_msg::new(m, client.clone()))
                .collect();
        write_box(out, natsio_msg_list { msgs });
        Ok(())
    })
}

/// One message from the pull consumer, waiting up to `timeout_ms` (0 or
/// less: 5000 ms); it goes to `msg_out` (free with `natsio_msg_free`).
/// Errors: NATSIO_ERR_NO_MESSAGES when none came in time, else as
/// `natsio_js_fetch`.
#[no_mangle]
pub unsafe extern "C" fn natsio_js_next(
    js: *const natsio_js,
    stream: *const c_char,
    consumer: *const c_char,
    timeout_ms: i64,
    msg_out: *mut *mut natsio_msg,
) -> natsio_status {
    guard(|| {
        let h = arg(js, "js")?;
        let stream = str_arg(stream, "stream")?;
        let consumer = str_arg(consumer, "consumer")?;
        let out = out_arg(msg_out, "msg_out")?;
        let timeout = if timeout_ms > 0 {
            Duration::from_millis(timeout_ms as u64)
        } else {
            Duration::from_secs(5)
        };
        let m = h.js.next(stream, consumer, timeout)?;
        write_box(out, natsio_msg::new(m, h.client_weak()));
        Ok(())
    })
}

/// How many messages the list holds (0 for NULL).
#[no_mangle]
pub unsafe extern "C" fn natsio_msg_list_count(list: *const natsio_msg_list) -> usize {
    guard_value(0, || Ok(arg(list, "list")?.msgs.len()))
}

/// Message `index` of the list, borrowed until the list is freed (NULL if
/// out of range). Acknowledge it through this pointer;
/// `natsio_msg_clone` keeps it longer.
#[no_mangle]
pub unsafe extern "C" fn natsio_msg_list_get(
    list: *const natsio_msg_list,
    index: usize,
) -> *const natsio_msg {
    guard_value(std::ptr::null(), || {
        Ok(arg(list, "list")?
            .msgs
            .get(index)
            .map_or(std::ptr::null(), |m| m as *const natsio_msg))
    })
}

/// Frees a list and its messages. Accepts NULL.
#[no_mangle]
pub unsafe extern "C" fn natsio_msg_list_free(list: *mut natsio_msg_list) {
    guard_void(|| {
        if !list.is_null() {
            drop(Box::from_raw(list));
        }
    })
}

fn ack(msg: *const natsio_msg, kind: AckKind, sync: Option<Duration>) -> Result<()> {
    // SAFETY: the caller passes a live message or NULL.
    let m = unsafe { arg(msg, "msg")? };
    crate::jetstream::ack_subject(&m.msg)?;
    let client = m.client.upgrade().ok_or_else(Error::closed)?;
    if kind.is_terminal() && m.acked.swap(true, Ordering::SeqCst) {
        return Err(Error::new(
            ErrorKind::MessageAlreadyAcked,
            "message already acknowledged or terminated",
        ));
    }
    let r = crate::jetstream::send_ack(&client, &m.msg, &kind, sync);
    if r.is_err() && kind.is_terminal() {
        m.acked.store(false, Ordering::SeqCst);
    }
    r
}

/// Acknowledges a consumed JetStream message (`+ACK`); buffered like a
/// publish. Thread-safe. Errors: NATSIO_ERR_NULL_ARGUMENT,
/// NATSIO_ERR_NOT_JS_MESSAGE (no ack subject),
/// NATSIO_ERR_MESSAGE_ALREADY_ACKED (acked, nak'ed or terminated before
/// through this handle), NATSIO_ERR_CONNECTION_CLOSED.
#[no_mangle]
pub unsafe extern "C" fn natsio_msg_ack(msg: *const natsio_msg) -> natsio_status {
    guard(|| ack(msg, AckKind::Ack, None))
}

/// Acknowledges and waits up to `timeout_ms` (0 or less: 5000 ms) for the
/// server to confirm it. Errors as `natsio_msg_ack`, plus
/// NATSIO_ERR_TIMEOUT; blocks the calling thread.
#[no_mangle]
pub unsafe extern "C" fn natsio_msg_ack_sync(
    msg: *const natsio_msg,
    timeout_ms: i64,
) -> natsio_status {
    let t = if timeout_ms > 0 {
        Duration::from_millis(timeout_ms as u64)
    } else {
        Duration::from_secs(5)
    };
    guard(|| ack(msg, AckKind::Ack, Some(t)))
}

/// Negatively acknowledges (`-NAK`): the server redelivers the message,
/// after `delay_ms` if positive. Errors as `natsio_msg_ack`.
#[no_mangle]
pub unsafe extern "C" fn natsio_msg_nak(msg: *const natsio_msg, delay_ms: i64) -> natsio_status {
    let delay = (delay_ms > 0).then(|| Duration::from_millis(delay_ms as u64));
    guard(|| ack(msg, AckKind::Nak(delay), None))
}

/// Terminates delivery (`+TERM`): never redelivered. `reason` (may be NULL)
/// is recorded by the server. Errors as `natsio_msg_ack`, plus
/// NATSIO_ERR_INVALID_UTF8.
#[no_mangle]
pub unsafe extern "C" fn natsio_msg_term(
    msg: *const natsio_msg,
    reason: *const c_char,
) -> natsio_status {
    guard(|| {
        let reason = opt_str_arg(reason, "reason")?.map(str::to_string);
        ack(msg, AckKind::Term(reason), None)
    })
}

/// Tells the server the message is still being worked on (`+WPI`),
/// resetting its ack wait; may be sent any number of times before the
/// final ack. Errors as `natsio_msg_ack`.
#[no_mangle]
pub unsafe extern "C" fn natsio_msg_in_progress(msg: *const natsio_msg) -> natsio_status {
    guard(|| ack(msg, AckKind::InProgress, None))
}

/// Delivery metadata of a consumed JetStream message. The strings point
/// into the message (not NUL-terminated: use the lengths, e.g.
/// `printf("%.*s", (int)md.stream_len, md.stream)`) and are valid while
/// the message is.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct natsio_js_msg_metadata {
    pub stream: *const c_char,
    pub stream_len: usize,
    pub consumer: *const c_char,
    pub consumer_len: usize,
    /// NULL when the message has no domain.
    pub domain: *const c_char,
    pub domain_len: usize,
    /// How many times the message was delivered (1 the first time).
    pub num_delivered: u64,
    pub stream_seq: u64,
    pub consumer_seq: u64,
    /// When the stream stored it, in nanoseconds since the Unix epoch.
    pub timestamp_ns: i64,
    /// Messages left for the consumer after this one.
    pub num_pending: u64,
}

/// Fills `out` with `msg`'s delivery metadata, parsed from its ack subject.
/// Errors: NATSIO_ERR_NULL_ARGUMENT, NATSIO_ERR_NOT_JS_MESSAGE.
#[no_mangle]
pub unsafe extern "C" fn natsio_msg_js_metadata(
    msg: *const natsio_msg,
    out: *mut natsio_js_msg_metadata,
) -> natsio_status {
    guard(|| {
        let m = arg(msg, "msg")?;
        let out = out_arg(out, "out")?;
        let reply = m
            .msg
            .reply()
            .ok_or_else(|| Error::new(ErrorKind::NotJsMessage, "message has no ack subject"))?;
        let md = parse_metadata(reply)?;
        *out = natsio_js_msg_metadata {
            stream: md.stream.as_ptr().cast(),
            stream_len: md.stream.len(),
            consumer: md.consumer.as_ptr().cast(),
            consumer_len: md.consumer.len(),
            domain: md.domain.map_or(std::ptr::null(), |d| d.as_ptr().cast()),
            domain_len: md.domain.map_or(0, str::len),
            num_delivered: md.num_delivered,
            stream_seq: md.stream_seq,
            consumer_seq: md.consumer_seq,
            timestamp_ns: md.timestamp_ns,
            num_pending: md.num_pending,
        };
        Ok(())
    })
}

/// Options of `natsio_js_consume`. Zero-initialise it: every zero field
/// means the default.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct natsio_consume_options {
    /// Messages kept requested from the server (and buffered) at most;
    /// 0: 500. A new pull request goes out when half have arrived.
    pub max_messages: i64,
    /// Lifetime of each pull request; 0: 30000 ms (at least 1000).
    pub expires_ms: i64,
    /// Server heartbeats while a request waits (two missed ones re-send
    /// it); 0: half of `expires_ms`, at most 15000 ms.
    pub idle_heartbeat_ms: i64,
}

/// A continuous pull from one consumer (`natsio_js_consume`). Owned by the
/// caller, freed with `natsio_js_messages_free`. `_next` is for one thread
/// at a time (calls are serialised); `_stop` may come from any thread.
pub struct natsio_js_messages {
    pull: std::sync::Mutex<crate::jetstream::PullStream>,
    stopper: crate::jetstream::PullStopper,
    client: std::sync::Weak<crate::client::ClientInner>,
}

/// Starts consuming `consumer` of `stream` continuously (`opts` may be
/// NULL): the library keeps up to `max_messages` requested and re-requests
/// as they are taken, watching heartbeats to notice a lost request (server
/// restart, leader change). Read with `natsio_js_messages_next`.
/// Errors: NATSIO_ERR_NULL_ARGUMENT, NATSIO_ERR_INVALID_ARGUMENT (names,
/// options), NATSIO_ERR_CONSUMER_NOT_FOUND, NATSIO_ERR_STREAM_NOT_FOUND,
/// NATSIO_ERR_TIMEOUT, NATSIO_ERR_CONNECTION_CLOSED.
#[no_mangle]
pub unsafe extern "C" fn natsio_js_consume(
    js: *const natsio_js,
    stream: *const c_char,
    consumer: *const c_char,
    opts: *const natsio_consume_options,
    messages_out: *mut *mut natsio_js_messages,
) -> natsio_status {
    guard(|| {
        let h = arg(js, "js")?;
        let stream = str_arg(stream, "stream")?;
        let consumer = str_arg(consumer, "consumer")?;
        let out = out_arg(messages_out, "messages_out")?;
        let mut o = crate::jetstream::ConsumeOptions::default();
        if let Some(c) = opts.as_ref() {
            match non_negative(c.max_messages, "max_messages")? {
                0 => {}
                n => o.max_messages = n.min(1 << 20) as usize,
            }
            match non_negative(c.expires_ms, "expires_ms")? {
                0 => {}
                ms => o.expires = Duration::from_millis(ms),
            }
            o.idle_heartbeat = match non_negative(c.idle_heartbeat_ms, "idle_heartbeat_ms")? {
                0 => (o.expires / 2).min(Duration::from_secs(15)),
                ms => Duration::from_millis(ms),
            };
        }
        let pull = h.js.consume(stream, consumer, o)?;
        let stopper = pull.stopper();
        write_box(
            out,
            natsio_js_messages {
                pull: std::sync::Mutex::new(pull),
                stopper,
                client: h.client_weak(),
            },
        );
        Ok(())
    })
}

/// The next consumed message, waiting up to `timeout_ms` (negative:
/// forever); it goes to `msg_out` (free with `natsio_msg_free`; acknowledge
/// it with `natsio_msg_ack` etc.). Errors: NATSIO_ERR_TIMEOUT (nothing in
/// time; consumption goes on), NATSIO_ERR_SUBSCRIPTION_CLOSED (stopped),
/// NATSIO_ERR_CONSUMER_DELETED / NATSIO_ERR_CONSUMER_NOT_FOUND (the consumer
/// went away: consumption ended), NATSIO_ERR_CONNECTION_CLOSED,
/// NATSIO_ERR_ILLEGAL_STATE (on a library runtime thread).
#[no_mangle]
pub unsafe extern "C" fn natsio_js_messages_next(
    messages: *const natsio_js_messages,
    timeout_ms: i64,
    msg_out: *mut *mut natsio_msg,
) -> natsio_status {
    guard(|| {
        let it = arg(messages, "messages")?;
        let out = out_arg(msg_out, "msg_out")?;
        let m = crate::completion::lock(&it.pull).next(super::ms_timeout(timeout_ms))?;
        write_box(out, natsio_msg::new(m, it.client.clone()));
        Ok(())
    })
}

/// Stops consuming: a `natsio_js_messages_next` blocked on another thread
/// returns NATSIO_ERR_SUBSCRIPTION_CLOSED, and so do later calls. Messages
/// buffered but not taken are not acknowledged (the server redelivers them
/// after the consumer's ack wait). Accepts NULL; idempotent.
#[no_mangle]
pub unsafe extern "C" fn natsio_js_messages_stop(messages: *const natsio_js_messages) {
    guard_void(|| {
        if let Some(it) = messages.as_ref() {
            it.stopper.stop();
        }
    })
}

/// Stops (if needed) and frees a consumption. Accepts NULL. Must not race
/// with a `natsio_js_messages_next` on the same handle (stop first).
#[no_mangle]
pub unsafe extern "C" fn natsio_js_messages_free(messages: *mut natsio_js_messages) {
    guard_void(|| {
        if !messages.is_null() {
            let it = Box::from_raw(messages);
            it.stopper.stop();
            drop(it);
        }
    })
}
