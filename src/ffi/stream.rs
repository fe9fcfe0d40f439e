//! Stream management through a `natsio_js` context, and `natsio_stored_msg`.
//! Configurations and infos cross the ABI as JSON text with the server's
//! field names; durations in a config may be integer nanoseconds or strings
//! like "90s" or "1h30m".

use std::ffi::{c_char, CString};

use super::js::{js, natsio_js};
use super::status::natsio_status;
use super::{
    arg, guard, guard_value, guard_void, opt_str_arg, out_arg, str_arg, write_box, write_string,
};
use crate::error::Result;
use crate::headers::Headers;
use crate::jetstream::{MsgSelector, StoredMsg};

unsafe fn write_opt_json(out: *mut *mut c_char, v: &serde_json::Value) -> Result<()> {
    if out.is_null() {
        Ok(())
    } else {
        write_string(out, &v.to_string())
    }
}

/// Creates a stream from `config_json`, a StreamConfig object ("name" is
/// required). If `info_json_out` is not NULL it receives the StreamInfo
/// JSON (free with `natsio_string_free`). Creating a stream that exists with
/// the same configuration succeeds. Blocks up to the context's timeout.
/// Errors: NATSIO_ERR_NULL_ARGUMENT, NATSIO_ERR_CONFIG (invalid JSON or a
/// field of the wrong type; the detail names it), NATSIO_ERR_INVALID_ARGUMENT
/// (bad stream name), NATSIO_ERR_STREAM_NAME_IN_USE (exists with another
/// configuration), NATSIO_ERR_JS_API (other server rejections, e.g. subjects
/// overlapping another stream), NATSIO_ERR_JS_NOT_ENABLED, NATSIO_ERR_TIMEOUT,
/// NATSIO_ERR_CONNECTION_CLOSED.
#[no_mangle]
pub unsafe extern "C" fn natsio_js_stream_create(
    js: *const natsio_js,
    config_json: *const c_char,
    info_json_out: *mut *mut c_char,
) -> natsio_status {
    guard(|| {
        let j = self::js(js)?;
        let info = j.create_stream(str_arg(config_json, "config_json")?)?;
        write_opt_json(info_json_out, &info)
    })
}

/// Changes an existing stream's configuration (NATSIO_ERR_STREAM_NOT_FOUND
/// if there is none). Otherwise as `natsio_js_stream_create`.
#[no_mangle]
pub unsafe extern "C" fn natsio_js_stream_update(
    js: *const natsio_js,
    config_json: *const c_char,
    info_json_out: *mut *mut c_char,
) -> natsio_status {
    guard(|| {
        let j = self::js(js)?;
        let info = j.update_stream(str_arg(config_json, "config_json")?)?;
        write_opt_json(info_json_out, &info)
    })
}

/// Updates the stream, or creates it if it does not exist. Otherwise as
/// `natsio_js_stream_create`.
#[no_mangle]
pub unsafe extern "C" fn natsio_js_stream_create_or_update(
    js: *const natsio_js,
    config_json: *const c_char,
    info_json_out: *mut *mut c_char,
) -> natsio_status {
    guard(|| {
        let j = self::js(js)?;
        let info = j.create_or_update_stream(str_arg(config_json, "config_json")?)?;
        write_opt_json(info_json_out, &info)
    })
}

/// The StreamInfo JSON of stream `name` (config, state, created, cluster),
/// through `info_json_out` (free with `natsio_string_free`).
/// Errors: NATSIO_ERR_STREAM_NOT_FOUND, NATSIO_ERR_INVALID_ARGUMENT (bad
/// name), and the request errors of `natsio_js_stream_create`.
#[no_mangle]
pub unsafe extern "C" fn natsio_js_stream_info(
    js: *const natsio_js,
    name: *const c_char,
    info_json_out: *mut *mut c_char,
) -> natsio_status {
    guard(|| {
        let j = self::js(js)?;
        let name = str_arg(name, "name")?;
        let out = out_arg(info_json_out, "info_json_out")?;
        let info = j.stream_info(name)?;
        write_string(out, &info.to_string())
    })
}

/// Deletes stream `name` and all its messages.
/// Errors: NATSIO_ERR_STREAM_NOT_FOUND, as for `natsio_js_stream_info`.
#[no_mangle]
pub unsafe extern "C" fn natsio_js_stream_delete(
    js: *const natsio_js,
    name: *const c_char,
) -> natsio_status {
    guard(|| self::js(js)?.delete_stream(str_arg(name, "name")?))
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
        let j = self::js(js)?;
        let name = str_arg(name, "name")?;
        let opts = opt_str_arg(options_json, "options_json")?;
        let n = j.purge_stream(name, opts)?;
        if !purged_out.is_null() {
            *purged_out = n;
        }
        Ok(())
    })
}

/// The names of all streams, or of those holding `subject` (NULL: all),
/// as a JSON array of strings through `json_out` (free with
/// `natsio_string_free`). Pages through the API as needed.
#[no_mangle]
pub unsafe extern "C" fn natsio_js_stream_names(
    js: *const natsio_js,
    subject: *const c_char,
    json_out: *mut *mut c_char,
) -> natsio_status {
    guard(|| {
        let j = self::js(js)?;
        let subject = opt_str_arg(subject, "subject")?;
        let out = out_arg(json_out, "json_out")?;
        let names = j.stream_names(subject)?;
        write_string(out, &serde_json::Value::from(names).to_string())
    })
}

/// A message read back from a stream. Owned by the caller, freed with
/// `natsio_stored_msg_free`; read-only, safe to share between threads.
pub struct natsio_stored_msg {
    msg: StoredMsg,
    subject: CString,
}

/// Reads one message of `stream`: the one with sequence `seq` when
/// `last_by_subject` is NULL, else the last one on that subject (then `seq`
/// is ignored). The message goes to `msg_out` (free with
/// `natsio_stored_msg_free`). Errors: NATSIO_ERR_MESSAGE_NOT_FOUND,
/// NATSIO_ERR_STREAM_NOT_FOUND, NATSIO_ERR_BAD_SUBJECT, as for
/// `natsio_js_stream_info`.
#[no_mangle]
pub unsafe extern "C" fn natsio_js_stream_get_msg(
    js: *const natsio_js,
    stream: *const c_char,
    seq: u64,
    last_by_subject: *const c_char,
    msg_out: *mut *mut natsio_stored_msg,
) -> natsio_status {
    guard(|| {
        let j = self::js(js)?;
        let stream = str_arg(stream, "stream")?;
        let last = opt_str_arg(last_by_subject, "last_by_subject")?;
        let out = out_arg(msg_out, "msg_out")?;
        let which = match last {
            Some(s) => MsgSelector::LastBySubject(s),
            None => MsgSelector::Seq(seq),
        };
        let msg = j.get_msg(stream, which)?;
        let subject = CString::new(msg.subject.as_str()).unwrap_or_default();
        write_box(out, natsio_stored_msg { msg, subject });
        Ok(())
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
        let j = self::js(js)?;
        j.delete_msg(str_arg(stream, "stream")?, seq, erase)
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

/// The payload (borrowed; may contain NUL bytes: use the length).
#[no_mangle]
pub unsafe extern "C" fn natsio_stored_msg_data(msg: *const natsio_stored_msg) -> *const u8 {
    guard_value(std::ptr::null(), || {
        Ok(arg(msg, "msg")?.msg.payload.as_ptr())
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
            .as_ref()
            .map_or(std::ptr::null(), |h| h as *const Headers))
    })
}

/// Frees a stored message. Accepts NULL.
#[no_mangle]
pub unsafe extern "C" fn natsio_stored_msg_free(msg: *mut natsio_stored_msg) {
    guard_void(|| {
        if !msg.is_null() {
            drop(Box::from_raw(msg));
        }
    })
}
