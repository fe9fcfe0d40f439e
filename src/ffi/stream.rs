//! Stream management through a `natsio_js` context, and `natsio_stored_msg`.
//! Configurations and infos cross the ABI as JSON text with the server's
//! field names; durations in a config may be integer nanoseconds or strings
//! like "90s" or "1h30m". Every call has a token form (`_async`).

use std::ffi::{c_char, CString};

use super::js::{create_action, json_result, json_token, natsio_js};
use super::list::{json_texts, natsio_string_list, string_list_result};
use super::status::natsio_status;
use super::token::{natsio_token, token_value};
use super::{
    arg, free_box, guard, guard_value, opt_str_arg, options_arg, out_arg, start_op, str_arg,
    write_box,
};
use crate::error::Result;
use crate::headers::Headers;
use crate::jetstream::{MsgSelector, StoredMsg};
use crate::op::Op;

fn js<'a>(p: *const natsio_js) -> Result<&'a natsio_js> {
    // SAFETY: the caller passes a live handle or NULL.
    unsafe { arg(p, "js") }
}

unsafe fn create_op(
    h: &natsio_js,
    config_json: *const c_char,
    action: i32,
) -> Result<Op<serde_json::Value>> {
    let action = create_action(action)?;
    Ok(h.js.create_stream(str_arg(config_json, "config_json")?, action))
}

/// Creates, updates or creates-or-updates a stream (per `action`, a
/// `natsio_create_action` value) from
/// `config_json`, a StreamConfig object ("name" is required; a "domain"
/// in its "mirror" or a "sources" entry becomes the "external" API prefix
/// `$JS.<domain>.API`, as nats.go and nats.js send it). If
/// `info_json_out` is not NULL it receives the StreamInfo JSON (free with
/// `natsio_string_free`). NATSIO_CREATE of a stream that exists with the
/// same configuration succeeds. Blocks up to the context's timeout.
/// Errors: NATSIO_ERR_NULL_ARGUMENT, NATSIO_ERR_CONFIG (invalid JSON or a
/// field of the wrong type; the detail names it), NATSIO_ERR_INVALID_ARGUMENT
/// (bad stream name or action), NATSIO_ERR_STREAM_NAME_IN_USE (exists with
/// another configuration), NATSIO_ERR_STREAM_NOT_FOUND (NATSIO_UPDATE of a
/// missing stream), NATSIO_ERR_JS_API (other server rejections, e.g.
/// subjects overlapping another stream), NATSIO_ERR_JS_NOT_ENABLED (the account has no JetStream),
/// NATSIO_ERR_NO_RESPONDERS (nobody answered: no leader during an election,
/// retry; or the server has no JetStream),
/// NATSIO_ERR_TIMEOUT, NATSIO_ERR_CONNECTION_CLOSED.
#[no_mangle]
pub unsafe extern "C" fn natsio_js_stream_create(
    js: *const natsio_js,
    config_json: *const c_char,
    action: i32,
    info_json_out: *mut *mut c_char,
) -> natsio_status {
    guard(|| {
        json_result(
            create_op(self::js(js)?, config_json, action)?,
            info_json_out,
            true,
        )
    })
}

/// The token form of `natsio_js_stream_create`; the StreamInfo JSON is
/// read with `natsio_token_string`.
#[no_mangle]
pub unsafe extern "C" fn natsio_js_stream_create_async(
    js: *const natsio_js,
    config_json: *const c_char,
    action: i32,
    token_out: *mut *mut natsio_token,
) -> natsio_status {
    guard(|| {
        let h = self::js(js)?;
        json_token(h, create_op(h, config_json, action)?, token_out)
    })
}

/// `natsio_stream_info_options.version` of this header.
pub const NATSIO_STREAM_INFO_OPTIONS_VERSION: u32 = 1;

/// Options of `natsio_js_stream_info`. Initialise with
/// `natsio_stream_info_options_init` (nothing set).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct natsio_stream_info_options {
    /// NATSIO_STREAM_INFO_OPTIONS_VERSION.
    pub version: u32,
    /// Also give "state"."subjects": an object mapping each stored subject
    /// that matches this filter (wildcards allowed, e.g. "orders.>") to its
    /// message count (the reference's `subjects_filter`). The server sends
    /// large maps in pages; all are merged. NULL: no subjects. Copied
    /// during the call.
    pub subjects_filter: *const c_char,
}

super::versioned!(
    natsio_stream_info_options,
    NATSIO_STREAM_INFO_OPTIONS_VERSION
);

/// Fills `opts` with the defaults (nothing set) and the version.
/// Errors: NATSIO_ERR_NULL_ARGUMENT.
#[no_mangle]
pub unsafe extern "C" fn natsio_stream_info_options_init(
    opts: *mut natsio_stream_info_options,
) -> natsio_status {
    guard(|| super::options_init(opts))
}

unsafe fn info_op(
    h: &natsio_js,
    name: *const c_char,
    opts: *const natsio_stream_info_options,
) -> Result<Op<serde_json::Value>> {
    let name = str_arg(name, "name")?;
    let filter = if opts.is_null() {
        None
    } else {
        opt_str_arg(options_arg(opts)?.subjects_filter, "subjects_filter")?
    };
    Ok(match filter {
        None => h.js.stream_info(name),
        Some(filter) => h.js.stream_info_with_subjects(name, filter),
    })
}

/// The StreamInfo JSON of stream `name` (config, state, created, cluster),
/// through `info_json_out` (free with `natsio_string_free`). `opts` may be
/// NULL (no subjects); its `subjects_filter` adds the subjects' counts.
/// Errors: NATSIO_ERR_STREAM_NOT_FOUND, NATSIO_ERR_INVALID_ARGUMENT (bad
/// name, an uninitialised `opts`), NATSIO_ERR_BAD_SUBJECT (bad filter),
/// and the request errors of `natsio_js_stream_create`.
#[no_mangle]
pub unsafe extern "C" fn natsio_js_stream_info(
    js: *const natsio_js,
    name: *const c_char,
    opts: *const natsio_stream_info_options,
    info_json_out: *mut *mut c_char,
) -> natsio_status {
    guard(|| {
        let op = info_op(self::js(js)?, name, opts)?;
        json_result(op, info_json_out, false)
    })
}

/// The token form of `natsio_js_stream_info` (`natsio_token_string`).
#[no_mangle]
pub unsafe extern "C" fn natsio_js_stream_info_async(
    js: *const natsio_js,
    name: *const c_char,
    opts: *const natsio_stream_info_options,
    token_out: *mut *mut natsio_token,
) -> natsio_status {
    guard(|| {
        let h = self::js(js)?;
        json_token(h, info_op(h, name, opts)?, token_out)
    })
}

/// Deletes stream `name` and all its messages.
/// Errors: NATSIO_ERR_STREAM_NOT_FOUND, as for `natsio_js_stream_info`.
#[no_mangle]
pub unsafe extern "C" fn natsio_js_stream_delete(
    js: *const natsio_js,
    name: *const c_char,
) -> natsio_status {
    guard(|| {
        self::js(js)?
            .js
            .delete_stream(str_arg(name, "name")?)
            .wait()
    })
}

/// The token form of `natsio_js_stream_delete`.
#[no_mangle]
pub unsafe extern "C" fn natsio_js_stream_delete_async(
    js: *const natsio_js,
    name: *const c_char,
    token_out: *mut *mut natsio_token,
) -> natsio_status {
    guard(|| {
        let h = self::js(js)?;
        start_op(
            h.js.delete_stream(str_arg(name, "name")?),
            h.client_handle(),
            token_out,
        )
    })
}

unsafe fn purge_op(
    h: &natsio_js,
    name: *const c_char,
    options_json: *const c_char,
) -> Result<Op<u64>> {
    Ok(h.js.purge_stream(
        str_arg(name, "name")?,
        opt_str_arg(options_json, "options_json")?,
    ))
}

/// Purges stream `name`: all messages when `options_json` is NULL, else as
/// it says: {"filter": subject, "seq": purge below this sequence, "keep":
/// keep this many newest} (seq and keep exclude each other). `purged_out`
/// (may be NULL) receives how many messages were removed.
/// Errors: NATSIO_ERR_CONFIG (bad options), as for `natsio_js_stream_info`.
#[no_mangle]
pub unsafe extern "C" fn natsio_js_stream_purge(
    js: *const natsio_js,
    name: *const c_char,
    options_json: *const c_char,
    purged_out: *mut u64,
) -> natsio_status {
    guard(|| {
        let n = purge_op(self::js(js)?, name, options_json)?.wait()?;
        if !purged_out.is_null() {
            *purged_out = n;
        }
        Ok(())
    })
}

/// The token form of `natsio_js_stream_purge`; the count is read with
/// `natsio_token_u64`.
#[no_mangle]
pub unsafe extern "C" fn natsio_js_stream_purge_async(
    js: *const natsio_js,
    name: *const c_char,
    options_json: *const c_char,
    token_out: *mut *mut natsio_token,
) -> natsio_status {
    guard(|| {
        let h = self::js(js)?;
        start_op(
            purge_op(h, name, options_json)?,
            h.client_handle(),
            token_out,
        )
    })
}

/// The names of all streams, or of those holding `subject` (NULL: all),
/// through `list_out` (free with `natsio_string_list_free`). Pages through
/// the API as needed. Errors: as `natsio_js_stream_info`.
#[no_mangle]
pub unsafe extern "C" fn natsio_js_stream_names(
    js: *const natsio_js,
    subject: *const c_char,
    list_out: *mut *mut natsio_string_list,
) -> natsio_status {
    guard(|| {
        let op = self::js(js)?
            .js
            .stream_names(opt_str_arg(subject, "subject")?);
        string_list_result(op, list_out)
    })
}

/// The token form of `natsio_js_stream_names` (`natsio_token_string_list`).
#[no_mangle]
pub unsafe extern "C" fn natsio_js_stream_names_async(
    js: *const natsio_js,
    subject: *const c_char,
    token_out: *mut *mut natsio_token,
) -> natsio_status {
    guard(|| {
        let h = self::js(js)?;
        let op = h.js.stream_names(opt_str_arg(subject, "subject")?);
        start_op(op, h.client_handle(), token_out)
    })
}

/// The StreamInfo JSON of every stream, or of those holding `subject`
/// (NULL: all; wildcards allowed), one JSON text per list entry, through
/// `list_out` (free with `natsio_string_list_free`). Pages through the API
/// (`STREAM.LIST`) as needed. Errors: NATSIO_ERR_BAD_SUBJECT, as
/// `natsio_js_stream_info`.
#[no_mangle]
pub unsafe extern "C" fn natsio_js_stream_infos(
    js: *const natsio_js,
    subject: *const c_char,
    list_out: *mut *mut natsio_string_list,
) -> natsio_status {
    guard(|| {
        let op = self::js(js)?
            .js
            .stream_infos(opt_str_arg(subject, "subject")?)
            .map(json_texts);
        string_list_result(op, list_out)
    })
}

/// The token form of `natsio_js_stream_infos` (`natsio_token_string_list`).
#[no_mangle]
pub unsafe extern "C" fn natsio_js_stream_infos_async(
    js: *const natsio_js,
    subject: *const c_char,
    token_out: *mut *mut natsio_token,
) -> natsio_status {
    guard(|| {
        let h = self::js(js)?;
        let op =
            h.js.stream_infos(opt_str_arg(subject, "subject")?)
                .map(json_texts);
        start_op(op, h.client_handle(), token_out)
    })
}

/// The JetStream API level the server implements (2.11 reports 1, 2.12
/// reports 2, ...; 0 for servers too old to report one), through
/// `level_out`. Errors: as `natsio_js_account_info`.
#[no_mangle]
pub unsafe extern "C" fn natsio_js_api_level(
    js: *const natsio_js,
    level_out: *mut u64,
) -> natsio_status {
    guard(|| {
        let op = self::js(js)?.js.api_level();
        let out = out_arg(level_out, "level_out")?;
        *out = op.wait()?;
        Ok(())
    })
}

/// The token form of `natsio_js_api_level` (`natsio_token_u64`).
#[no_mangle]
pub unsafe extern "C" fn natsio_js_api_level_async(
    js: *const natsio_js,
    token_out: *mut *mut natsio_token,
) -> natsio_status {
    guard(|| {
        let h = self::js(js)?;
        start_op(h.js.api_level(), h.client_handle(), token_out)
    })
}

/// A message read back from a stream. Owned by the caller, freed with
/// `natsio_stored_msg_free`; read-only, safe to share between threads.
pub struct natsio_stored_msg {
    msg: StoredMsg,
    subject: CString,
}

impl natsio_stored_msg {
    pub(crate) fn new(msg: StoredMsg) -> Self {
        let subject = CString::new(msg.subject.as_str()).unwrap_or_default();
        natsio_stored_msg { msg, subject }
    }
}

unsafe fn get_msg_op(
    h: &natsio_js,
    stream: *const c_char,
    seq: u64,
    last_by_subject: *const c_char,
) -> Result<Op<StoredMsg>> {
    let stream = str_arg(stream, "stream")?;
    let which = match opt_str_arg(last_by_subject, "last_by_subject")? {
        Some(s) => MsgSelector::LastBySubject(s.to_string()),
        None => MsgSelector::Seq(seq),
    };
    Ok(h.js.get_msg(stream, which))
}

/// Reads one message of `stream`: the one with sequence `seq` when
/// `last_by_subject` is NULL, else the last one on that subject (then `seq`
/// is ignored; wildcards are allowed: the last message on any subject
/// matching it). The message goes to `msg_out` (free with
/// `natsio_stored_msg_free`). Reads with Direct Get (ADR-31) when the
/// stream has allow_direct, else with the stream's leader
/// (`STREAM.MSG.GET`); the context reads each stream's config once to
/// know. Errors: NATSIO_ERR_MESSAGE_NOT_FOUND (also when a Direct Get gets
/// no answer: the stream is gone), NATSIO_ERR_STREAM_NOT_FOUND,
/// NATSIO_ERR_BAD_SUBJECT, as for `natsio_js_stream_info`.
#[no_mangle]
pub unsafe extern "C" fn natsio_js_stream_get_msg(
    js: *const natsio_js,
    stream: *const c_char,
    seq: u64,
    last_by_subject: *const c_char,
    msg_out: *mut *mut natsio_stored_msg,
) -> natsio_status {
    guard(|| {
        let op = get_msg_op(self::js(js)?, stream, seq, last_by_subject)?;
        let out = out_arg(msg_out, "msg_out")?;
        write_box(out, natsio_stored_msg::new(op.wait()?));
        Ok(())
    })
}

/// The token form of `natsio_js_stream_get_msg`; the message is read with
/// `natsio_token_stored_msg`.
#[no_mangle]
pub unsafe extern "C" fn natsio_js_stream_get_msg_async(
    js: *const natsio_js,
    stream: *const c_char,
    seq: u64,
    last_by_subject: *const c_char,
    token_out: *mut *mut natsio_token,
) -> natsio_status {
    guard(|| {
        let h = self::js(js)?;
        start_op(
            get_msg_op(h, stream, seq, last_by_subject)?,
            h.client_handle(),
            token_out,
        )
    })
}

unsafe fn next_msg_op(
    h: &natsio_js,
    stream: *const c_char,
    seq: u64,
    subject: *const c_char,
) -> Result<Op<StoredMsg>> {
    let which = MsgSelector::NextBySubject {
        seq,
        subject: str_arg(subject, "subject")?.to_string(),
    };
    Ok(h.js.get_msg(str_arg(stream, "stream")?, which))
}

/// Reads the first message of `stream` at or after sequence `seq` whose
/// subject matches `subject` (wildcards allowed): to walk one subject's
/// messages, pass the last one's sequence + 1. The message goes to
/// `msg_out` (free with `natsio_stored_msg_free`); it is read as
/// `natsio_js_stream_get_msg` reads. Errors: NATSIO_ERR_MESSAGE_NOT_FOUND
/// (none at or after `seq`), as `natsio_js_stream_get_msg`.
#[no_mangle]
pub unsafe extern "C" fn natsio_js_stream_get_next_msg(
    js: *const natsio_js,
    stream: *const c_char,
    seq: u64,
    subject: *const c_char,
    msg_out: *mut *mut natsio_stored_msg,
) -> natsio_status {
    guard(|| {
        let op = next_msg_op(self::js(js)?, stream, seq, subject)?;
        let out = out_arg(msg_out, "msg_out")?;
        write_box(out, natsio_stored_msg::new(op.wait()?));
        Ok(())
    })
}

/// The token form of `natsio_js_stream_get_next_msg`
/// (`natsio_token_stored_msg`).
#[no_mangle]
pub unsafe extern "C" fn natsio_js_stream_get_next_msg_async(
    js: *const natsio_js,
    stream: *const c_char,
    seq: u64,
    subject: *const c_char,
    token_out: *mut *mut natsio_token,
) -> natsio_status {
    guard(|| {
        let h = self::js(js)?;
        start_op(
            next_msg_op(h, stream, seq, subject)?,
            h.client_handle(),
            token_out,
        )
    })
}

/// The message a `natsio_js_stream_get_msg_async` read, as a new
/// `natsio_stored_msg`. Returns as `natsio_token_msg`.
#[no_mangle]
pub unsafe extern "C" fn natsio_token_stored_msg(
    token: *const natsio_token,
    msg_out: *mut *mut natsio_stored_msg,
) -> natsio_status {
    token_value(token, msg_out, "msg_out", |_, m: &StoredMsg| {
        Ok(Box::into_raw(Box::new(natsio_stored_msg::new(m.clone()))))
    })
}

/// Deletes message `seq` of `stream`; `erase` also overwrites its bytes on
/// disk. Errors: NATSIO_ERR_MESSAGE_NOT_FOUND, as for `natsio_js_stream_info`.
#[no_mangle]
pub unsafe extern "C" fn natsio_js_stream_delete_msg(
    js: *const natsio_js,
    stream: *const c_char,
    seq: u64,
    erase: bool,
) -> natsio_status {
    guard(|| {
        let h = self::js(js)?;
        h.js.delete_msg(str_arg(stream, "stream")?, seq, erase)
            .wait()
    })
}

/// The token form of `natsio_js_stream_delete_msg`.
#[no_mangle]
pub unsafe extern "C" fn natsio_js_stream_delete_msg_async(
    js: *const natsio_js,
    stream: *const c_char,
    seq: u64,
    erase: bool,
    token_out: *mut *mut natsio_token,
) -> natsio_status {
    guard(|| {
        let h = self::js(js)?;
        let op = h.js.delete_msg(str_arg(stream, "stream")?, seq, erase);
        start_op(op, h.client_handle(), token_out)
    })
}

/// The message's subject (borrowed; NULL for NULL).
#[no_mangle]
pub unsafe extern "C" fn natsio_stored_msg_subject(msg: *const natsio_stored_msg) -> *const c_char {
    guard_value(std::ptr::null(), || Ok(arg(msg, "msg")?.subject.as_ptr()))
}

/// The message's stream sequence (0 for NULL).
#[no_mangle]
pub unsafe extern "C" fn natsio_stored_msg_seq(msg: *const natsio_stored_msg) -> u64 {
    guard_value(0, || Ok(arg(msg, "msg")?.msg.seq))
}

/// When the stream stored it, in nanoseconds since the Unix epoch.
#[no_mangle]
pub unsafe extern "C" fn natsio_stored_msg_time_ns(msg: *const natsio_stored_msg) -> i64 {
    guard_value(0, || Ok(arg(msg, "msg")?.msg.time_ns))
}

/// The payload (borrowed), followed by a NUL byte; it may contain NUL
/// bytes itself: use `natsio_stored_msg_data_len`.
#[no_mangle]
pub unsafe extern "C" fn natsio_stored_msg_data(msg: *const natsio_stored_msg) -> *const c_char {
    guard_value(std::ptr::null(), || {
        let p = &arg(msg, "msg")?.msg.payload;
        Ok(if p.is_empty() {
            c"".as_ptr()
        } else {
            p.as_ptr().cast()
        })
    })
}

/// The payload length in bytes (0 for NULL).
#[no_mangle]
pub unsafe extern "C" fn natsio_stored_msg_data_len(msg: *const natsio_stored_msg) -> usize {
    guard_value(0, || Ok(arg(msg, "msg")?.msg.payload.len()))
}

/// The message's headers (borrowed), or NULL when it has none.
#[no_mangle]
pub unsafe extern "C" fn natsio_stored_msg_headers(
    msg: *const natsio_stored_msg,
) -> *const Headers {
    guard_value(std::ptr::null(), || {
        Ok(arg(msg, "msg")?
            .msg
            .headers
            .as_deref()
            .map_or(std::ptr::null(), |h| h as *const Headers))
    })
}

/// Frees a stored message. Accepts NULL.
#[no_mangle]
pub unsafe extern "C" fn natsio_stored_msg_free(msg: *mut natsio_stored_msg) {
    free_box(msg)
}
