//! Pull consumers through a `natsio_js` context: management, fetching
//! (`natsio_msg_list`), and acknowledging consumed messages.

use std::ffi::{c_char, c_void};
use std::time::Duration;

use super::iter::{self, natsio_iter_stats};
use super::js::{create_action, json_result, json_token, natsio_js};
use super::list::{json_texts, natsio_string_list, string_list_result, write_list};
use super::msg::{natsio_msg, natsio_msg_cb, natsio_msg_list};
use super::status::natsio_status;
use super::token::{natsio_token, token_value};
use super::{
    arg, bounded_timeout, free_box, guard, opt_str_arg, options_arg, out_arg, start_op, str_arg,
    write_box, TakeOnce,
};
use crate::client::Wake;
use crate::client_handle::ClientHandle;
use crate::error::{Error, ErrorKind, Result};
use crate::jetstream::{batch_size, parse_metadata, AckKind, Consumption, FetchOptions};
use crate::op::Op;

fn js<'a>(p: *const natsio_js) -> Result<&'a natsio_js> {
    // SAFETY: the caller passes a live handle or NULL.
    unsafe { arg(p, "js") }
}

unsafe fn create_op(
    h: &natsio_js,
    stream: *const c_char,
    config_json: *const c_char,
    action: i32,
) -> Result<Op<serde_json::Value>> {
    let action = create_action(action)?;
    let stream = str_arg(stream, "stream")?;
    Ok(h.js.create_consumer(stream, str_arg(config_json, "config_json")?, action))
}

/// Creates, updates or creates-or-updates (per `action`, a
/// `natsio_create_action` value) a pull consumer on `stream` from
/// `config_json`, a ConsumerConfig object (server field names:
/// "durable_name" or "name", "filter_subject(s)", "deliver_policy",
/// "ack_policy" (default "explicit", as in nats.go; the server's own
/// default is "none"), "ack_wait" as a duration, "max_deliver",
/// "inactive_threshold", ...); without a name the library generates one
/// (an ephemeral consumer: give it an "inactive_threshold"; NATSIO_UPDATE
/// needs the name). If `info_json_out` is not NULL it receives the
/// ConsumerInfo JSON (free with `natsio_string_free`); its "name" is the
/// consumer's name. NATSIO_CREATE of an identical existing consumer is
/// fine. Blocks up to the context's timeout. Errors:
/// NATSIO_ERR_NULL_ARGUMENT, NATSIO_ERR_CONFIG (the detail names the
/// field), NATSIO_ERR_INVALID_ARGUMENT (bad stream or consumer name, bad
/// action), NATSIO_ERR_STREAM_NOT_FOUND, NATSIO_ERR_CONSUMER_NOT_FOUND
/// (NATSIO_UPDATE of a missing consumer), NATSIO_ERR_JS_API (e.g. exists
/// with another configuration), NATSIO_ERR_TIMEOUT,
/// NATSIO_ERR_CONNECTION_CLOSED.
#[no_mangle]
pub unsafe extern "C" fn natsio_js_consumer_create(
    js: *const natsio_js,
    stream: *const c_char,
    config_json: *const c_char,
    action: i32,
    info_json_out: *mut *mut c_char,
) -> natsio_status {
    guard(|| {
        let op = create_op(self::js(js)?, stream, config_json, action)?;
        json_result(op, info_json_out, true)
    })
}

/// The token form of `natsio_js_consumer_create` (`natsio_token_string`).
#[no_mangle]
pub unsafe extern "C" fn natsio_js_consumer_create_async(
    js: *const natsio_js,
    stream: *const c_char,
    config_json: *const c_char,
    action: i32,
    token_out: *mut *mut natsio_token,
) -> natsio_status {
    guard(|| {
        let h = self::js(js)?;
        json_token(h, create_op(h, stream, config_json, action)?, token_out)
    })
}

unsafe fn info_op(
    h: &natsio_js,
    stream: *const c_char,
    consumer: *const c_char,
) -> Result<Op<serde_json::Value>> {
    let stream = str_arg(stream, "stream")?;
    Ok(h.js.consumer_info(stream, str_arg(consumer, "consumer")?))
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
        json_result(
            info_op(self::js(js)?, stream, consumer)?,
            info_json_out,
            false,
        )
    })
}

/// The token form of `natsio_js_consumer_info` (`natsio_token_string`).
#[no_mangle]
pub unsafe extern "C" fn natsio_js_consumer_info_async(
    js: *const natsio_js,
    stream: *const c_char,
    consumer: *const c_char,
    token_out: *mut *mut natsio_token,
) -> natsio_status {
    guard(|| {
        let h = self::js(js)?;
        json_token(h, info_op(h, stream, consumer)?, token_out)
    })
}

unsafe fn delete_op(
    h: &natsio_js,
    stream: *const c_char,
    consumer: *const c_char,
) -> Result<Op<()>> {
    let stream = str_arg(stream, "stream")?;
    Ok(h.js.delete_consumer(stream, str_arg(consumer, "consumer")?))
}

/// Deletes `consumer` of `stream`. A fetch waiting on it ends with
/// NATSIO_ERR_CONSUMER_DELETED. Errors as `natsio_js_consumer_info`.
#[no_mangle]
pub unsafe extern "C" fn natsio_js_consumer_delete(
    js: *const natsio_js,
    stream: *const c_char,
    consumer: *const c_char,
) -> natsio_status {
    guard(|| delete_op(self::js(js)?, stream, consumer)?.wait())
}

/// The token form of `natsio_js_consumer_delete`.
#[no_mangle]
pub unsafe extern "C" fn natsio_js_consumer_delete_async(
    js: *const natsio_js,
    stream: *const c_char,
    consumer: *const c_char,
    token_out: *mut *mut natsio_token,
) -> natsio_status {
    guard(|| {
        let h = self::js(js)?;
        start_op(
            delete_op(h, stream, consumer)?,
            h.client_handle(),
            token_out,
        )
    })
}

/// The names of `stream`'s consumers through `list_out` (free with
/// `natsio_string_list_free`). Errors as `natsio_js_consumer_info`.
#[no_mangle]
pub unsafe extern "C" fn natsio_js_consumer_names(
    js: *const natsio_js,
    stream: *const c_char,
    list_out: *mut *mut natsio_string_list,
) -> natsio_status {
    guard(|| {
        let op = self::js(js)?.js.consumer_names(str_arg(stream, "stream")?);
        string_list_result(op, list_out)
    })
}

/// The token form of `natsio_js_consumer_names` (`natsio_token_string_list`).
#[no_mangle]
pub unsafe extern "C" fn natsio_js_consumer_names_async(
    js: *const natsio_js,
    stream: *const c_char,
    token_out: *mut *mut natsio_token,
) -> natsio_status {
    guard(|| {
        let h = self::js(js)?;
        let op = h.js.consumer_names(str_arg(stream, "stream")?);
        start_op(op, h.client_handle(), token_out)
    })
}

/// The ConsumerInfo JSON of every consumer of `stream`, one JSON text per
/// list entry, through `list_out` (free with `natsio_string_list_free`).
/// Pages through the API (`CONSUMER.LIST`) as needed. Errors as
/// `natsio_js_consumer_names`.
#[no_mangle]
pub unsafe extern "C" fn natsio_js_consumer_infos(
    js: *const natsio_js,
    stream: *const c_char,
    list_out: *mut *mut natsio_string_list,
) -> natsio_status {
    guard(|| {
        let op = self::js(js)?
            .js
            .consumer_infos(str_arg(stream, "stream")?)
            .map(json_texts);
        string_list_result(op, list_out)
    })
}

/// The token form of `natsio_js_consumer_infos` (`natsio_token_string_list`).
#[no_mangle]
pub unsafe extern "C" fn natsio_js_consumer_infos_async(
    js: *const natsio_js,
    stream: *const c_char,
    token_out: *mut *mut natsio_token,
) -> natsio_status {
    guard(|| {
        let h = self::js(js)?;
        let op =
            h.js.consumer_infos(str_arg(stream, "stream")?)
                .map(json_texts);
        start_op(op, h.client_handle(), token_out)
    })
}

unsafe fn pause_op(
    h: &natsio_js,
    stream: *const c_char,
    consumer: *const c_char,
    until_ns: Option<i64>,
) -> Result<Op<serde_json::Value>> {
    if until_ns.is_some_and(|ns| ns <= 0) {
        return Err(Error::new(
            ErrorKind::InvalidArgument,
            "pause_until_ns must be a time after the epoch (to resume, use natsio_js_consumer_resume)",
        ));
    }
    Ok(h.js.pause_consumer(
        str_arg(stream, "stream")?,
        str_arg(consumer, "consumer")?,
        until_ns,
    ))
}

/// Pauses consumer `consumer` of `stream` until `pause_until_ns`
/// (nanoseconds since the Unix epoch): until then it delivers nothing, and
/// pulls wait (server 2.11+). A time already past leaves it running. If
/// `json_out` is not NULL it receives the server's answer (free with
/// `natsio_string_free`): {"paused": bool, "pause_until": RFC 3339 time,
/// "pause_remaining": nanoseconds}; the consumer's info shows the same
/// fields. Errors: NATSIO_ERR_INVALID_ARGUMENT (bad names, a time not after
/// the epoch), NATSIO_ERR_CONSUMER_NOT_FOUND, NATSIO_ERR_STREAM_NOT_FOUND,
/// and the request errors of `natsio_js_consumer_info`.
#[no_mangle]
pub unsafe extern "C" fn natsio_js_consumer_pause(
    js: *const natsio_js,
    stream: *const c_char,
    consumer: *const c_char,
    pause_until_ns: i64,
    json_out: *mut *mut c_char,
) -> natsio_status {
    guard(|| {
        let op = pause_op(self::js(js)?, stream, consumer, Some(pause_until_ns))?;
        json_result(op, json_out, true)
    })
}

/// The token form of `natsio_js_consumer_pause` (`natsio_token_string`).
#[no_mangle]
pub unsafe extern "C" fn natsio_js_consumer_pause_async(
    js: *const natsio_js,
    stream: *const c_char,
    consumer: *const c_char,
    pause_until_ns: i64,
    token_out: *mut *mut natsio_token,
) -> natsio_status {
    guard(|| {
        let h = self::js(js)?;
        json_token(
            h,
            pause_op(h, stream, consumer, Some(pause_until_ns))?,
            token_out,
        )
    })
}

/// Resumes a paused consumer now (a running one stays running); `json_out`
/// as for `natsio_js_consumer_pause` ("paused" false). Errors as
/// `natsio_js_consumer_pause`.
#[no_mangle]
pub unsafe extern "C" fn natsio_js_consumer_resume(
    js: *const natsio_js,
    stream: *const c_char,
    consumer: *const c_char,
    json_out: *mut *mut c_char,
) -> natsio_status {
    guard(|| {
        let op = pause_op(self::js(js)?, stream, consumer, None)?;
        json_result(op, json_out, true)
    })
}

/// The token form of `natsio_js_consumer_resume` (`natsio_token_string`).
#[no_mangle]
pub unsafe extern "C" fn natsio_js_consumer_resume_async(
    js: *const natsio_js,
    stream: *const c_char,
    consumer: *const c_char,
    token_out: *mut *mut natsio_token,
) -> natsio_status {
    guard(|| {
        let h = self::js(js)?;
        json_token(h, pause_op(h, stream, consumer, None)?, token_out)
    })
}

unsafe fn unpin_op(
    h: &natsio_js,
    stream: *const c_char,
    consumer: *const c_char,
    group: *const c_char,
) -> Result<Op<()>> {
    Ok(h.js.unpin_consumer(
        str_arg(stream, "stream")?,
        str_arg(consumer, "consumer")?,
        str_arg(group, "group")?,
    ))
}

/// Releases the pinned client of priority group `group` of `consumer` on
/// `stream` (ADR-42 pinned_client, server 2.11+): the server drops the
/// current pin and the next pull request of any client in the group gets
/// pinned; the previously pinned client's next request gets a 423 status
/// and pulls again unpinned. Blocks up to the context's timeout. Errors:
/// NATSIO_ERR_NULL_ARGUMENT, NATSIO_ERR_INVALID_UTF8,
/// NATSIO_ERR_INVALID_ARGUMENT (bad names; a group that is not one of the
/// consumer's priority groups), NATSIO_ERR_CONSUMER_NOT_FOUND,
/// NATSIO_ERR_STREAM_NOT_FOUND, NATSIO_ERR_JS_API, NATSIO_ERR_TIMEOUT,
/// NATSIO_ERR_CONNECTION_CLOSED.
#[no_mangle]
pub unsafe extern "C" fn natsio_js_consumer_unpin(
    js: *const natsio_js,
    stream: *const c_char,
    consumer: *const c_char,
    group: *const c_char,
) -> natsio_status {
    guard(|| unpin_op(self::js(js)?, stream, consumer, group)?.wait())
}

/// The token form of `natsio_js_consumer_unpin`.
#[no_mangle]
pub unsafe extern "C" fn natsio_js_consumer_unpin_async(
    js: *const natsio_js,
    stream: *const c_char,
    consumer: *const c_char,
    group: *const c_char,
    token_out: *mut *mut natsio_token,
) -> natsio_status {
    guard(|| {
        let h = self::js(js)?;
        start_op(
            unpin_op(h, stream, consumer, group)?,
            h.client_handle(),
            token_out,
        )
    })
}

/// `natsio_fetch_options.version` of this header (2 added `group`,
/// `min_pending` and `min_ack_pending`, 3 `priority`; older structs are
/// still read, without the fields they lack).
pub const NATSIO_FETCH_OPTIONS_VERSION: u32 = 3;

/// Options of `natsio_js_fetch` and `natsio_js_next` (a fetch of one).
/// Initialise with `natsio_fetch_options_init`: every zero field (NULL
/// pointer) means the default.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct natsio_fetch_options {
    /// NATSIO_FETCH_OPTIONS_VERSION.
    pub version: u32,
    /// Messages to fetch at most; 0: 100; above NATSIO_MAX_BATCH:
    /// NATSIO_MAX_BATCH.
    pub max_messages: i64,
    /// Payload bytes to fetch at most; 0: no limit.
    pub max_bytes: i64,
    /// How long the server holds the pull request open; 0: 5000 ms. The
    /// call returns at the latest one second after that.
    pub expires_ms: i64,
    /// Return at once with the messages available now (possibly none):
    /// the call ends when the server says nothing more is available, or
    /// one second after the request if the server holds it (messages
    /// pending but not deliverable yet: max_ack_pending reached).
    pub no_wait: bool,
    /// Server heartbeats while the request is open; 0: none. Set, two
    /// intervals without a heartbeat or message end the call with
    /// NATSIO_ERR_TIMEOUT ("no heartbeat received") instead of waiting
    /// out `expires_ms`.
    pub idle_heartbeat_ms: i64,
    /// The ADR-42 priority group to pull for (NULL or "": none). Required
    /// when the consumer has `priority_groups`, and must be one of them;
    /// a consumer without priority groups refuses one. Either mistake is
    /// NATSIO_ERR_INVALID_ARGUMENT ("priority group is required" /
    /// "invalid priority group"). The context remembers each consumer's
    /// groups once it has read them (one consumer info request the first
    /// time a group is named for it; re-read when the server refuses), and,
    /// for a pinned_client group, the pin id the server gave it, sent with
    /// later requests. Copied during the call.
    pub group: *const c_char,
    /// Overflow policy: the server serves the request only while the
    /// consumer has at least this many messages pending; 0: not set. Needs
    /// `group`.
    pub min_pending: i64,
    /// Overflow policy: served only while at least this many messages
    /// await acks; 0: not set. Needs `group`.
    pub min_ack_pending: i64,
    /// Prioritized policy (a consumer whose `priority_policy` is
    /// "prioritized"): the request's priority, 0 (the highest, the
    /// default) to 9; the server serves waiting requests of a lower
    /// number first. Needs `group`; out of range, or without a group:
    /// NATSIO_ERR_INVALID_ARGUMENT. Other policies ignore it.
    pub priority: i32,
}

fn non_negative(v: i64, what: &str) -> Result<u64> {
    u64::try_from(v).map_err(|_| {
        Error::new(
            ErrorKind::InvalidArgument,
            format!("{what} must not be negative"),
        )
    })
}

super::versioned!(
    natsio_fetch_options,
    NATSIO_FETCH_OPTIONS_VERSION,
    older: [1 => group, 2 => priority]
);

/// A pull priority argument; one out of `u8`'s range becomes one the core
/// refuses with its range in the message ("priority must be between 0
/// and 9"), so the message is the core's alone.
fn priority_arg(p: i32) -> u8 {
    u8::try_from(p).unwrap_or(u8::MAX)
}

/// A priority group argument: NULL or "" is none.
unsafe fn group_arg(p: *const c_char) -> Result<Option<String>> {
    Ok(opt_str_arg(p, "group")?
        .filter(|g| !g.is_empty())
        .map(str::to_string))
}

/// Fills `opts` with the defaults and the version.
/// Errors: NATSIO_ERR_NULL_ARGUMENT.
#[no_mangle]
pub unsafe extern "C" fn natsio_fetch_options_init(
    opts: *mut natsio_fetch_options,
) -> natsio_status {
    guard(|| super::options_init(opts))
}

/// The options `o` gives over `opts` (its zero fields keep them).
unsafe fn fetch_options(
    o: *const natsio_fetch_options,
    mut opts: FetchOptions,
) -> Result<FetchOptions> {
    if o.is_null() {
        return Ok(opts);
    }
    let o = options_arg(o)?;
    opts.max_messages = batch_size(
        non_negative(o.max_messages, "max_messages")?,
        opts.max_messages,
    );
    opts.max_bytes = non_negative(o.max_bytes, "max_bytes")? as usize;
    match non_negative(o.expires_ms, "expires_ms")? {
        0 => {}
        ms => opts.expires = Duration::from_millis(ms),
    }
    opts.no_wait = o.no_wait;
    opts.idle_heartbeat =
        Duration::from_millis(non_negative(o.idle_heartbeat_ms, "idle_heartbeat_ms")?);
    opts.group = group_arg(o.group)?;
    opts.min_pending = non_negative(o.min_pending, "min_pending")?;
    opts.min_ack_pending = non_negative(o.min_ack_pending, "min_ack_pending")?;
    opts.priority = priority_arg(o.priority);
    Ok(opts)
}

/// The arguments the blocking and the streamed fetch share, read once.
unsafe fn fetch_args<'a>(
    stream: *const c_char,
    consumer: *const c_char,
    opts: *const natsio_fetch_options,
) -> Result<(&'a str, &'a str, FetchOptions)> {
    Ok((
        str_arg(stream, "stream")?,
        str_arg(consumer, "consumer")?,
        fetch_options(opts, FetchOptions::default())?,
    ))
}

unsafe fn fetch_op(
    h: &natsio_js,
    stream: *const c_char,
    consumer: *const c_char,
    opts: *const natsio_fetch_options,
) -> Result<Op<Vec<crate::message::Message>>> {
    let (stream, consumer, opts) = fetch_args(stream, consumer, opts)?;
    Ok(h.js.fetch(stream, consumer, &opts))
}

/// Pulls up to `max_messages` messages from the pull consumer `consumer`
/// of `stream` (`opts` may be NULL: 100 messages, 5 s) and returns them, in
/// order, through `list_out` (free with `natsio_msg_list_free`; possibly
/// empty: the server had none before `expires`, or none at all with
/// `no_wait`). Blocks the calling thread until the batch is full or the
/// request ends (`natsio_js_fetch_messages` hands each message out as it
/// arrives instead). Acknowledge each message with `natsio_msg_ack` (or
/// nak/term/in_progress) unless the consumer's ack policy is "none".
/// Errors: NATSIO_ERR_NULL_ARGUMENT, NATSIO_ERR_INVALID_ARGUMENT (bad names
/// or options, a priority group missing or not the consumer's),
/// NATSIO_ERR_CONSUMER_DELETED, NATSIO_ERR_CONSUMER_NOT_FOUND
/// (no such consumer or stream), NATSIO_ERR_JETSTREAM (a push consumer;
/// a first message larger than `max_bytes`; a request the server refuses:
/// more than the consumer's `max_batch`, `max_expires` or `max_bytes`, or
/// `max_waiting` requests already waiting; natsio_last_error() gives the
/// server's reason, e.g. "Exceeded MaxRequestBatch of 10"),
/// NATSIO_ERR_TIMEOUT (no heartbeat within two `idle_heartbeat_ms`),
/// NATSIO_ERR_JS_API,
/// NATSIO_ERR_CONNECTION_CLOSED, NATSIO_ERR_ILLEGAL_STATE (on a library
/// runtime thread).
#[no_mangle]
pub unsafe extern "C" fn natsio_js_fetch(
    js: *const natsio_js,
    stream: *const c_char,
    consumer: *const c_char,
    opts: *const natsio_fetch_options,
    list_out: *mut *mut natsio_msg_list,
) -> natsio_status {
    guard(|| {
        let h = self::js(js)?;
        let op = fetch_op(h, stream, consumer, opts)?;
        out_arg(list_out, "list_out")?;
        let client = h.client_handle();
        let items = op
            .wait()?
            .into_iter()
            .map(|m| natsio_msg::new(m, client.clone()))
            .collect();
        write_list(list_out, natsio_msg_list { items })
    })
}

/// The token form of `natsio_js_fetch` (`natsio_token_msg_list`).
/// `natsio_token_cancel` withdraws the pull request at the server before
/// it returns: a message published after goes to the consumer's next
/// reader. Messages the request had received are dropped unacknowledged
/// (the server redelivers them after the consumer's ack wait).
#[no_mangle]
pub unsafe extern "C" fn natsio_js_fetch_async(
    js: *const natsio_js,
    stream: *const c_char,
    consumer: *const c_char,
    opts: *const natsio_fetch_options,
    token_out: *mut *mut natsio_token,
) -> natsio_status {
    guard(|| {
        let h = self::js(js)?;
        start_op(
            fetch_op(h, stream, consumer, opts)?,
            h.client_handle(),
            token_out,
        )
    })
}

unsafe fn fetch_messages_op(
    h: &natsio_js,
    stream: *const c_char,
    consumer: *const c_char,
    opts: *const natsio_fetch_options,
) -> Result<Op<Consumption>> {
    let (stream, consumer, opts) = fetch_args(stream, consumer, opts)?;
    Ok(h.js.fetch_messages(stream, consumer, &opts))
}

/// The messages of one fetch (a pull request with the options of
/// `natsio_js_fetch`; `opts` may be NULL), handed out one by one as they
/// arrive instead of once the batch is complete, through `messages_out`
/// (free with `natsio_js_messages_free`; read with
/// `natsio_js_messages_next`, `_next_async` or `_set_callback`). Returns
/// once the pull request is sent, without waiting for messages (first
/// reading the consumer's info when `group` names a priority group the
/// context does not know yet). The iterator ends with NATSIO_DONE where
/// `natsio_js_fetch` returns its batch: `max_messages` delivered,
/// `max_bytes` reached, the request expired or ended by the server (a 408
/// or 404 status: nothing more with `no_wait`, or `expires_ms` passed; at
/// the latest one second after), and with `natsio_js_fetch`'s error
/// (NATSIO_ERR_CONSUMER_DELETED, NATSIO_ERR_JETSTREAM, NATSIO_ERR_TIMEOUT
/// for missed heartbeats, ...) after the messages that came before it.
/// Nothing is dropped: the buffer is bounded by `max_messages` alone.
/// `natsio_js_messages_stop` (or `_free`) withdraws the request at the
/// server before it returns: a message published after goes to the
/// consumer's next reader; messages received but not taken are not
/// acknowledged (redelivered after the consumer's ack wait). Every
/// function of the iterator is thread-safe; a callback runs on a library
/// dispatcher thread. Errors: NATSIO_ERR_NULL_ARGUMENT,
/// NATSIO_ERR_INVALID_ARGUMENT (bad names or options, a priority group
/// missing or not the consumer's), NATSIO_ERR_CONSUMER_NOT_FOUND (only
/// when reading the consumer's info for its priority groups; otherwise a
/// missing consumer ends the iterator with it), NATSIO_ERR_TIMEOUT,
/// NATSIO_ERR_CONNECTION_CLOSED, NATSIO_ERR_ILLEGAL_STATE (on a library
/// runtime thread).
#[no_mangle]
pub unsafe extern "C" fn natsio_js_fetch_messages(
    js: *const natsio_js,
    stream: *const c_char,
    consumer: *const c_char,
    opts: *const natsio_fetch_options,
    messages_out: *mut *mut natsio_js_messages,
) -> natsio_status {
    guard(|| {
        let h = self::js(js)?;
        let op = fetch_messages_op(h, stream, consumer, opts)?;
        let out = out_arg(messages_out, "messages_out")?;
        let it = op.wait()?;
        write_box(
            out,
            natsio_js_messages {
                it,
                client: h.client_handle(),
            },
        );
        Ok(())
    })
}

/// The token form of `natsio_js_fetch_messages`; the iterator is taken
/// (once) with `natsio_token_js_messages`. A token cancelled or freed
/// without taking it withdraws the request.
#[no_mangle]
pub unsafe extern "C" fn natsio_js_fetch_messages_async(
    js: *const natsio_js,
    stream: *const c_char,
    consumer: *const c_char,
    opts: *const natsio_fetch_options,
    token_out: *mut *mut natsio_token,
) -> natsio_status {
    guard(|| {
        let h = self::js(js)?;
        let op = fetch_messages_op(h, stream, consumer, opts)?.map(TakeOnce::new);
        start_op(op, h.client_handle(), token_out)
    })
}

unsafe fn next_op(
    h: &natsio_js,
    stream: *const c_char,
    consumer: *const c_char,
    opts: *const natsio_fetch_options,
) -> Result<Op<crate::message::Message>> {
    let stream = str_arg(stream, "stream")?;
    let consumer = str_arg(consumer, "consumer")?;
    let o = fetch_options(opts, h.js.next_options())?;
    let op = h.js.next_with(stream, consumer, o);
    op.check()?;
    Ok(op)
}

/// One message from the pull consumer `consumer` of `stream` (a fetch of
/// one), with a fetch's options; `opts` may be NULL (the defaults below).
/// The wait: `expires_ms` (0: the context's timeout, what
/// NATSIO_TIMEOUT_DEFAULT meant before the options struct); `no_wait`
/// true: only a message available now (what NATSIO_NO_WAIT meant).
/// `idle_heartbeat_ms` and the priority-group fields `group`,
/// `min_pending`, `min_ack_pending` are as for `natsio_js_fetch`;
/// `max_messages` must be 0 or 1 and `max_bytes` bounds the one message.
/// The message goes to `msg_out` (free with `natsio_msg_free`). Blocks the
/// calling thread. Errors: NATSIO_ERR_NO_MESSAGES when none came in time,
/// NATSIO_ERR_INVALID_ARGUMENT (`max_messages` above 1, a negative field),
/// NATSIO_ERR_TIMEOUT (no heartbeat), else as `natsio_js_fetch`.
#[no_mangle]
pub unsafe extern "C" fn natsio_js_next(
    js: *const natsio_js,
    stream: *const c_char,
    consumer: *const c_char,
    opts: *const natsio_fetch_options,
    msg_out: *mut *mut natsio_msg,
) -> natsio_status {
    guard(|| {
        let h = self::js(js)?;
        let op = next_op(h, stream, consumer, opts)?;
        let out = out_arg(msg_out, "msg_out")?;
        write_box(out, natsio_msg::new(op.wait()?, h.client_handle()));
        Ok(())
    })
}

/// The token form of `natsio_js_next` (`natsio_token_msg`); a cancel
/// withdraws the pull request as `natsio_js_fetch_async`'s does.
#[no_mangle]
pub unsafe extern "C" fn natsio_js_next_async(
    js: *const natsio_js,
    stream: *const c_char,
    consumer: *const c_char,
    opts: *const natsio_fetch_options,
    token_out: *mut *mut natsio_token,
) -> natsio_status {
    guard(|| {
        let h = self::js(js)?;
        let op = next_op(h, stream, consumer, opts)?;
        let out = out_arg(token_out, "token_out")?;
        let c = op.start_with(crate::completion::Outcome::Msg)?;
        write_box(out, natsio_token::new(c, h.client_handle()));
        Ok(())
    })
}

fn ack(msg: *const natsio_msg, kind: AckKind) -> Result<()> {
    ack_with(msg, kind, Wake::Writer)
}

fn ack_with(msg: *const natsio_msg, kind: AckKind, wake: Wake) -> Result<()> {
    // SAFETY: the caller passes a live message or NULL.
    unsafe { arg(msg, "msg")? }.ack(&kind, wake)
}

/// Acknowledges a consumed JetStream message (`+ACK`); buffered like a
/// publish. Thread-safe. Errors: NATSIO_ERR_NULL_ARGUMENT,
/// NATSIO_ERR_NOT_JS_MESSAGE (no ack subject),
/// NATSIO_ERR_MESSAGE_ALREADY_ACKED (acked, nak'ed or terminated before
/// through this handle), NATSIO_ERR_CONNECTION_CLOSED.
#[no_mangle]
pub unsafe extern "C" fn natsio_msg_ack(msg: *const natsio_msg) -> natsio_status {
    guard(|| ack(msg, AckKind::Ack))
}

/// `natsio_msg_ack` for a loop that acks many messages: when the ack finds
/// the connection's writer thread idle it is queued without waking it,
/// like a publish with `natsio_js_publish_options.defer_send`, so that a
/// run of acks goes out in one write. It is sent within about a
/// millisecond, or sooner: with the next frame that wakes the writer (a
/// consumption's next pull request among them), when a thread waits on a
/// token of the connection, once 64 KiB are queued, or at
/// `natsio_client_send_deferred`. Thread-safe. Errors: as
/// `natsio_msg_ack`.
#[no_mangle]
pub unsafe extern "C" fn natsio_msg_ack_deferred(msg: *const natsio_msg) -> natsio_status {
    guard(|| ack_with(msg, AckKind::Ack, Wake::Deferred))
}

/// The ack-and-confirm operation of `msg` (`JsMessage::ack_sync`).
unsafe fn ack_sync_op(msg: *const natsio_msg, timeout_ms: i64) -> Result<Op<()>> {
    arg(msg, "msg")?.ack_sync(|default| bounded_timeout(timeout_ms, default))
}

/// Acknowledges and waits up to `timeout_ms` (NATSIO_TIMEOUT_DEFAULT: the
/// client's request timeout) for the server to confirm it. Errors as
/// `natsio_msg_ack`, plus NATSIO_ERR_TIMEOUT; blocks the calling thread.
#[no_mangle]
pub unsafe extern "C" fn natsio_msg_ack_sync(
    msg: *const natsio_msg,
    timeout_ms: i64,
) -> natsio_status {
    guard(|| ack_sync_op(msg, timeout_ms)?.wait())
}

/// The token form of `natsio_msg_ack_sync`: the token completes once the
/// server confirmed the ack (the message may be freed meanwhile).
#[no_mangle]
pub unsafe extern "C" fn natsio_msg_ack_sync_async(
    msg: *const natsio_msg,
    timeout_ms: i64,
    token_out: *mut *mut natsio_token,
) -> natsio_status {
    guard(|| {
        let client = arg(msg, "msg")?.client.clone();
        out_arg(token_out, "token_out")?;
        start_op(ack_sync_op(msg, timeout_ms)?, client, token_out)
    })
}

/// Negatively acknowledges (`-NAK`): the server redelivers the message,
/// after `delay_ms` if positive. Errors as `natsio_msg_ack`.
#[no_mangle]
pub unsafe extern "C" fn natsio_msg_nak(msg: *const natsio_msg, delay_ms: i64) -> natsio_status {
    let delay = (delay_ms > 0).then(|| Duration::from_millis(delay_ms as u64));
    guard(|| ack(msg, AckKind::Nak(delay)))
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
        ack(msg, AckKind::Term(reason))
    })
}

/// Tells the server the message is still being worked on (`+WPI`),
/// resetting its ack wait; may be sent any number of times before the
/// final ack. Errors as `natsio_msg_ack`.
#[no_mangle]
pub unsafe extern "C" fn natsio_msg_in_progress(msg: *const natsio_msg) -> natsio_status {
    guard(|| ack(msg, AckKind::InProgress))
}

/// Delivery metadata of a consumed JetStream message. The strings point
/// into the message (not NUL-terminated: use the lengths, e.g.
/// `printf("%.*s", (int)md.stream_len, md.stream)`) and are valid while
/// the message is.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct natsio_js_msg_metadata {
    /// The stream's name (`stream_len` bytes).
    pub stream: *const c_char,
    /// Length of `stream`.
    pub stream_len: usize,
    /// The consumer's name (`consumer_len` bytes).
    pub consumer: *const c_char,
    /// Length of `consumer`.
    pub consumer_len: usize,
    /// NULL when the message has no domain.
    pub domain: *const c_char,
    /// Length of `domain` (0 without one).
    pub domain_len: usize,
    /// How many times the message was delivered (1 the first time).
    pub num_delivered: u64,
    /// The message's sequence in the stream.
    pub stream_seq: u64,
    /// Its delivery sequence for this consumer.
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

/// `natsio_consume_options.version` of this header (2 added `max_bytes`,
/// the thresholds and the priority-group fields, 3 `priority`; older
/// structs are still read, without the fields they lack).
pub const NATSIO_CONSUME_OPTIONS_VERSION: u32 = 3;

/// Options of `natsio_js_consume`. Initialise with
/// `natsio_consume_options_init`: every zero field means the default.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct natsio_consume_options {
    /// NATSIO_CONSUME_OPTIONS_VERSION.
    pub version: u32,
    /// Messages kept requested from the server and buffered, together, at
    /// most; 0: 500 (not with `max_bytes`). Buffered counts a message until
    /// the reader is done with it: taken by `natsio_js_messages_next`, or
    /// returned from the callback (a callback busy with a message holds
    /// it). A new pull request goes out when that falls to `threshold`.
    /// Above NATSIO_MAX_BATCH: NATSIO_MAX_BATCH.
    pub max_messages: i64,
    /// Lifetime of each pull request; 0: 30000 ms (at least 1000).
    pub expires_ms: i64,
    /// Server heartbeats while a request waits (two missed ones re-send
    /// it); 0: half of `expires_ms`, at most 30000 ms.
    pub idle_heartbeat_ms: i64,
    /// Bytes (subjects, headers and payloads, as the server counts them)
    /// kept requested at most; 0: not set. Set, requests are bounded by
    /// bytes rather than messages (as nats.go's PullMaxBytes); excludes
    /// `max_messages` (NATSIO_ERR_INVALID_ARGUMENT if both are set). A
    /// message larger than `max_bytes` can never be delivered: the
    /// consume ends with NATSIO_ERR_JETSTREAM.
    pub max_bytes: i64,
    /// Pull again once what is requested and buffered falls to this
    /// fraction of `max_messages` (of `max_bytes` with bytes); 0: 0.5; else
    /// strictly between 0 and 1.
    pub threshold: f64,
    /// The same as a count of messages (nats.go's PullThresholdMessages);
    /// 0: from `threshold`. Below `max_messages`.
    pub threshold_messages: i64,
    /// The same as a count of bytes with `max_bytes` (nats.go's
    /// PullThresholdBytes); 0: from `threshold`. Below `max_bytes`.
    pub threshold_bytes: i64,
    /// The ADR-42 priority group to pull for (NULL or "": none); checked
    /// against the consumer's `priority_groups` when the consume starts
    /// (NATSIO_ERR_INVALID_ARGUMENT: "priority group is required", "invalid
    /// priority group"). With a pinned_client group the consume keeps the
    /// pin id the server gives it and sends it with every request; when the
    /// pin moves on (a 423 status, e.g. after `natsio_js_consumer_unpin`)
    /// it drops it and pulls again. Copied during the call.
    pub group: *const c_char,
    /// Overflow policy: served only while the consumer has at least this
    /// many messages pending; 0: not set. Needs `group`.
    pub min_pending: i64,
    /// Overflow policy: served only while at least this many messages
    /// await acks; 0: not set. Needs `group`.
    pub min_ack_pending: i64,
    /// Prioritized policy (a consumer whose `priority_policy` is
    /// "prioritized"): the request's priority, 0 (the highest, the
    /// default) to 9; the server serves waiting requests of a lower
    /// number first. Needs `group`; out of range, or without a group:
    /// NATSIO_ERR_INVALID_ARGUMENT. Other policies ignore it.
    pub priority: i32,
}

super::versioned!(
    natsio_consume_options,
    NATSIO_CONSUME_OPTIONS_VERSION,
    older: [1 => max_bytes, 2 => priority]
);

/// Fills `opts` with the defaults and the version.
/// Errors: NATSIO_ERR_NULL_ARGUMENT.
#[no_mangle]
pub unsafe extern "C" fn natsio_consume_options_init(
    opts: *mut natsio_consume_options,
) -> natsio_status {
    guard(|| super::options_init(opts))
}

/// A continuous pull from one consumer (`natsio_js_consume`,
/// `natsio_js_push_consume`), the messages of one fetch
/// (`natsio_js_fetch_messages`) or a run of an ordered consumer
/// (`natsio_ordered_consumer_messages`), read through the iterator
/// contract. Owned by the caller, freed with
/// `natsio_js_messages_free`; every function is thread-safe.
pub struct natsio_js_messages {
    pub(crate) it: Consumption,
    pub(crate) client: ClientHandle,
}

unsafe fn consume_op(
    h: &natsio_js,
    stream: *const c_char,
    consumer: *const c_char,
    opts: *const natsio_consume_options,
) -> Result<Op<Consumption>> {
    let stream = str_arg(stream, "stream")?;
    let consumer = str_arg(consumer, "consumer")?;
    let mut o = crate::jetstream::ConsumeOptions::default();
    if !opts.is_null() {
        let c = options_arg(opts)?;
        o.max_messages = batch_size(
            non_negative(c.max_messages, "max_messages")?,
            o.max_messages,
        );
        match non_negative(c.expires_ms, "expires_ms")? {
            0 => {}
            ms => o.expires = Duration::from_millis(ms),
        }
        o.idle_heartbeat = match non_negative(c.idle_heartbeat_ms, "idle_heartbeat_ms")? {
            0 => crate::jetstream::ConsumeOptions::default_idle_heartbeat(o.expires),
            ms => Duration::from_millis(ms),
        };
        o.max_bytes = non_negative(c.max_bytes, "max_bytes")? as usize;
        if o.max_bytes > 0 && c.max_messages != 0 {
            return Err(Error::new(
                ErrorKind::InvalidArgument,
                "max_messages and max_bytes exclude each other",
            ));
        }
        if c.threshold != 0.0 {
            o.threshold = c.threshold;
        }
        match non_negative(c.threshold_messages, "threshold_messages")? {
            0 => {}
            n if o.max_bytes == 0 && n as usize >= o.max_messages => {
                return Err(Error::new(
                    ErrorKind::InvalidArgument,
                    "threshold_messages must be below max_messages",
                ))
            }
            n => o.threshold_messages = Some(n as usize),
        }
        match non_negative(c.threshold_bytes, "threshold_bytes")? {
            0 => {}
            n if n as usize >= o.max_bytes => {
                return Err(Error::new(
                    ErrorKind::InvalidArgument,
                    "threshold_bytes must be below max_bytes",
                ))
            }
            n => o.threshold_bytes = Some(n as usize),
        }
        o.group = group_arg(c.group)?;
        o.min_pending = non_negative(c.min_pending, "min_pending")?;
        o.min_ack_pending = non_negative(c.min_ack_pending, "min_ack_pending")?;
        o.priority = priority_arg(c.priority);
    }
    Ok(h.js.consume(stream, consumer, o))
}

/// Starts consuming `consumer` of `stream` continuously (`opts` may be
/// NULL), once the consumer is known to exist: from then on the library
/// keeps up to `max_messages` requested and buffered on its own threads,
/// whether or not the application reads, re-pulls at `threshold`, notices
/// a lost request by two missed heartbeats and pulls again at once after a
/// reconnect (a restarted server). Requests the server ends without a
/// message (409 "Exceeded MaxWaiting", a leadership change, ...) are
/// repeated after a growing backoff (100 ms doubling up to 5 s), not at
/// once. A 409 "Consumer is push based", or a message larger than
/// `max_bytes`, ends the consumption with NATSIO_ERR_JETSTREAM; a 400 (a
/// request the server refuses) with NATSIO_ERR_INVALID_ARGUMENT or
/// NATSIO_ERR_JS_API; a status this library does not know is reported to
/// the client's error callback (NATSIO_ERR_JS_API, with its code and
/// description; as nats.go's ConsumeErrHandler) and pulling goes on. Read
/// with the `natsio_js_messages_` functions. Blocks up to the context's
/// timeout. Errors: NATSIO_ERR_NULL_ARGUMENT, NATSIO_ERR_INVALID_ARGUMENT
/// (names, options, priority group), NATSIO_ERR_CONSUMER_NOT_FOUND,
/// NATSIO_ERR_STREAM_NOT_FOUND, NATSIO_ERR_TIMEOUT,
/// NATSIO_ERR_CONNECTION_CLOSED.
#[no_mangle]
pub unsafe extern "C" fn natsio_js_consume(
    js: *const natsio_js,
    stream: *const c_char,
    consumer: *const c_char,
    opts: *const natsio_consume_options,
    messages_out: *mut *mut natsio_js_messages,
) -> natsio_status {
    guard(|| {
        let h = self::js(js)?;
        let op = consume_op(h, stream, consumer, opts)?;
        let out = out_arg(messages_out, "messages_out")?;
        let it = op.wait()?;
        write_box(
            out,
            natsio_js_messages {
                it,
                client: h.client_handle(),
            },
        );
        Ok(())
    })
}

/// The token form of `natsio_js_consume`; the iterator is taken (once)
/// with `natsio_token_js_messages`.
#[no_mangle]
pub unsafe extern "C" fn natsio_js_consume_async(
    js: *const natsio_js,
    stream: *const c_char,
    consumer: *const c_char,
    opts: *const natsio_consume_options,
    token_out: *mut *mut natsio_token,
) -> natsio_status {
    guard(|| {
        let h = self::js(js)?;
        let op = consume_op(h, stream, consumer, opts)?.map(TakeOnce::new);
        start_op(op, h.client_handle(), token_out)
    })
}

/// The iterator a `natsio_js_consume_async` (or
/// `natsio_js_fetch_messages_async`, ...) started, through
/// `messages_out` (free with `natsio_js_messages_free`). It can be taken
/// once (NATSIO_ERR_ILLEGAL_STATE after). Returns as `natsio_token_msg`.
/// A token freed without taking it stops the consume.
#[no_mangle]
pub unsafe extern "C" fn natsio_token_js_messages(
    token: *const natsio_token,
    messages_out: *mut *mut natsio_js_messages,
) -> natsio_status {
    token_value(
        token,
        messages_out,
        "messages_out",
        |t, c: &TakeOnce<Consumption>| {
            Ok(Box::into_raw(Box::new(natsio_js_messages {
                it: c.take()?,
                client: t.client.clone(),
            })))
        },
    )
}

fn messages<'a>(p: *const natsio_js_messages) -> Result<&'a natsio_js_messages> {
    // SAFETY: the caller passes a live handle or NULL.
    unsafe { arg(p, "messages") }
}

/// The next consumed message, waiting up to `timeout_ms`
/// (NATSIO_TIMEOUT_DEFAULT or NATSIO_WAIT_FOREVER: until one comes;
/// NATSIO_NO_WAIT: only one already buffered); it goes to `msg_out` (free
/// with `natsio_msg_free`; acknowledge it with `natsio_msg_ack` etc.).
/// NATSIO_DONE (`*msg_out` set to NULL) once stopped (or, for an ordered
/// run, drained; for a fetch, once its request ended). An ordered run's messages need no acknowledgement; it
/// ends as `natsio_ordered_consumer_messages` says (NATSIO_ERR_NO_MESSAGES
/// after its idle timeout, NATSIO_ERR_STREAM_NOT_FOUND). Errors:
/// NATSIO_ERR_TIMEOUT (nothing in time; consumption goes on),
/// NATSIO_ERR_CONSUMER_DELETED / NATSIO_ERR_CONSUMER_NOT_FOUND (the consumer
/// went away: consumption ended), NATSIO_ERR_JETSTREAM /
/// NATSIO_ERR_JS_API / NATSIO_ERR_INVALID_ARGUMENT (the server refused the
/// pulls: consumption ended, see `natsio_js_consume`),
/// NATSIO_ERR_CONNECTION_CLOSED,
/// NATSIO_ERR_ILLEGAL_STATE (callback mode, or on a library runtime thread).
#[no_mangle]
pub unsafe extern "C" fn natsio_js_messages_next(
    messages: *const natsio_js_messages,
    timeout_ms: i64,
    msg_out: *mut *mut natsio_msg,
) -> natsio_status {
    match self::messages(messages) {
        Ok(it) => {
            let client = it.client.clone();
            iter::next(&it.it.feed, timeout_ms, msg_out, "msg_out", |m| {
                Ok(natsio_msg::new(m, client))
            })
        }
        Err(e) => super::status::record(&e),
    }
}

/// A token for the next consumed message (`natsio_token_msg`; NATSIO_DONE
/// once stopped). Pending tokens are served in call order; freeing or
/// cancelling one before a message reached it leaves it buffered.
#[no_mangle]
pub unsafe extern "C" fn natsio_js_messages_next_async(
    messages: *const natsio_js_messages,
    token_out: *mut *mut natsio_token,
) -> natsio_status {
    match self::messages(messages) {
        Ok(it) => iter::next_async(&it.it.feed, it.client.clone(), token_out),
        Err(e) => super::status::record(&e),
    }
}

/// Push mode for a consume, as `natsio_sub_set_callback`: every message,
/// then a final call with a NULL message and the status that ended it.
#[no_mangle]
pub unsafe extern "C" fn natsio_js_messages_set_callback(
    messages: *const natsio_js_messages,
    cb: natsio_msg_cb,
    user_data: *mut c_void,
    release: super::natsio_release_cb,
) -> natsio_status {
    guard(|| {
        let it = self::messages(messages)?;
        let Some(f) = cb else {
            return Err(super::null("cb"));
        };
        let client = it.client.clone();
        iter::set_callback(
            user_data,
            release,
            move |ud, m, st| super::msg::call_msg_cb(f, ud, m, &client, st),
            |h| it.it.set_handler(h, Box::new(|| {})),
        )
    })
}

/// Stops consuming: `natsio_js_messages_next` returns NATSIO_DONE, now and
/// later; a callback gets its final call before this returns. Messages
/// buffered but not taken are not acknowledged (the server redelivers them
/// after the consumer's ack wait; `natsio_js_messages_drain` hands them out
/// first instead). Idempotent.
#[no_mangle]
pub unsafe extern "C" fn natsio_js_messages_stop(
    messages: *const natsio_js_messages,
) -> natsio_status {
    guard(|| {
        self::messages(messages)?.it.stop();
        Ok(())
    })
}

/// The drain bound of `timeout_ms` for a consumption (the default is its
/// client's drain timeout).
fn drain_timeout(it: &natsio_js_messages, timeout_ms: i64) -> Result<Option<Duration>> {
    let default = it.client.live()?.opts.drain_timeout;
    super::timeout_arg(timeout_ms, Some(default), false)
}

/// Graceful end of a consumption (nats.go's `ConsumeContext.Drain`): a
/// pull consume sends no more pull requests and withdraws its inbox once
/// those still open at the server have ended (their batch complete, or
/// the consumer has nothing left for them, which a `no_wait` request
/// asks; at the latest when they expire): withdrawn earlier, the server
/// could still send them messages that reach no one and wait for their
/// ack wait (a consumer at its max_ack_pending serves them as the reader
/// acknowledges). A push consume withdraws its subscription to the
/// deliver subject. What the server sent before that is still buffered
/// and handed out, to the iterator or the callback, and then the
/// consumption ends as after `natsio_js_messages_stop`
/// (`natsio_js_messages_next` returns NATSIO_DONE, a callback gets its
/// final call with NATSIO_DONE), so
/// nothing already sent is left to be redelivered if the reader
/// acknowledges what it takes. An ordered run just stops taking messages
/// in and ends once its buffer is read. Waits up to `timeout_ms`
/// (NATSIO_TIMEOUT_DEFAULT: the client's drain timeout;
/// NATSIO_WAIT_FOREVER: no bound) for the end; on NATSIO_ERR_TIMEOUT the
/// drain goes on. In iterator mode another thread must take the buffered
/// messages meanwhile (use `natsio_js_messages_drain_async` to read them
/// on this one); in callback mode the final call has been made when this
/// returns NATSIO_OK (unless called from the callback). A second drain
/// waits for the same end. Thread-safe. Errors: NATSIO_ERR_NULL_ARGUMENT,
/// NATSIO_ERR_INVALID_ARGUMENT (timeout), NATSIO_ERR_TIMEOUT,
/// NATSIO_ERR_SUBSCRIPTION_CLOSED (stopped before the drain finished, or
/// before it started), NATSIO_ERR_CONNECTION_CLOSED, or the error that
/// ended the consumption first (e.g. NATSIO_ERR_CONSUMER_DELETED),
/// NATSIO_ERR_ILLEGAL_STATE (on a library runtime thread).
#[no_mangle]
pub unsafe extern "C" fn natsio_js_messages_drain(
    messages: *const natsio_js_messages,
    timeout_ms: i64,
) -> natsio_status {
    guard(|| {
        let it = self::messages(messages)?;
        let timeout = drain_timeout(it, timeout_ms)?;
        it.it.drain(timeout)
    })
}

/// Starts the drain of `natsio_js_messages_drain` and returns at once with
/// a token (free with `natsio_token_free`; freeing it does not stop the
/// drain) completing as that call returns: NATSIO_OK once the
/// consumption ended after handing out its buffer, NATSIO_ERR_TIMEOUT
/// once `timeout_ms` passes (the drain goes on), or that call's errors.
/// Read on meanwhile with `natsio_js_messages_next` (NATSIO_DONE at the
/// end) or the callback. Thread-safe. Errors (immediate):
/// NATSIO_ERR_NULL_ARGUMENT, NATSIO_ERR_INVALID_ARGUMENT (timeout),
/// NATSIO_ERR_CONNECTION_CLOSED (the client is gone).
#[no_mangle]
pub unsafe extern "C" fn natsio_js_messages_drain_async(
    messages: *const natsio_js_messages,
    timeout_ms: i64,
    token_out: *mut *mut natsio_token,
) -> natsio_status {
    guard(|| {
        let it = self::messages(messages)?;
        let out = out_arg(token_out, "token_out")?;
        let timeout = drain_timeout(it, timeout_ms)?;
        let c = it.it.drain_async(timeout);
        write_box(out, natsio_token::new(c, it.client.clone()));
        Ok(())
    })
}

/// Reads the live counters into `stats_out` (`stalls` counts the times the
/// buffer was full and pulling paused).
#[no_mangle]
pub unsafe extern "C" fn natsio_js_messages_get_stats(
    messages: *const natsio_js_messages,
    stats_out: *mut natsio_iter_stats,
) -> natsio_status {
    guard(|| iter::stats(self::messages(messages)?.it.stats(), stats_out))
}

/// Stops (if needed) and frees a consumption. Accepts NULL.
#[no_mangle]
pub unsafe extern "C" fn natsio_js_messages_free(messages: *mut natsio_js_messages) {
    free_box(messages)
}
