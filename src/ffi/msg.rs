//! `natsio_msg`: a received message. Accessors return pointers borrowed
//! from the message's single shared buffer.

use std::ffi::{c_char, c_void};

use super::list::count;
use super::status::natsio_status;
use super::token::{natsio_token, token_value, with_outcome, wrong_kind};
use super::{arg, bytes_arg, free_box, guard, guard_value, opt_arg_headers, out_arg, write_box};
use crate::client_handle::ClientHandle;
use crate::error::Error;
use crate::headers::Headers;
use crate::jetstream::JsMessage;
use crate::message::Message;

/// A received message. A message handed to a callback is borrowed for the
/// call; one returned through `natsio_msg **` is owned and freed with
/// `natsio_msg_free`. Read-only: safe to read from several threads.
pub struct natsio_msg {
    /// The message, its client and its acknowledgement state (a second
    /// ack, nak or term through this handle fails with
    /// MESSAGE_ALREADY_ACKED).
    js: JsMessage,
}

impl std::ops::Deref for natsio_msg {
    type Target = JsMessage;
    fn deref(&self) -> &JsMessage {
        &self.js
    }
}

/// Receives the messages of an iterator in push mode (`natsio_sub_set_callback`,
/// `natsio_replies_set_callback`, `natsio_js_messages_set_callback`): each
/// message with NATSIO_OK (`msg` borrowed for the call; `natsio_msg_clone`
/// keeps it), then once `msg` NULL with the status that ended the
/// iteration (NATSIO_DONE, or an error whose detail `natsio_last_error`
/// gives during the call). Runs on a library thread of that iterator, one
/// call at a time, in order; it may block and may call any natsio function.
pub type natsio_msg_cb = Option<
    unsafe extern "C" fn(user_data: *mut c_void, msg: *const natsio_msg, status: natsio_status),
>;

/// Calls a `natsio_msg_cb` with one delivery.
pub(crate) fn call_msg_cb(
    f: unsafe extern "C" fn(*mut c_void, *const natsio_msg, natsio_status),
    user_data: *mut c_void,
    msg: Option<Message>,
    client: &ClientHandle,
    status: natsio_status,
) {
    match msg {
        Some(m) => {
            let h = natsio_msg::new(m, client.clone());
            // SAFETY: the application registered `f` for this user data.
            unsafe { f(user_data, &h, status) };
        }
        // SAFETY: as above.
        None => unsafe { f(user_data, std::ptr::null(), status) },
    }
}

impl natsio_msg {
    pub(crate) fn new(msg: Message, client: ClientHandle) -> Self {
        natsio_msg {
            js: JsMessage::new(msg, client),
        }
    }
}

/// The subject (NUL-terminated, borrowed from the message). NULL for a NULL msg.
#[no_mangle]
pub unsafe extern "C" fn natsio_msg_subject(msg: *const natsio_msg) -> *const c_char {
    guard_value(std::ptr::null(), || {
        Ok(arg(msg, "msg")?.msg.subject_cstr().as_ptr())
    })
}

/// The reply subject, or NULL when the message has none.
#[no_mangle]
pub unsafe extern "C" fn natsio_msg_reply(msg: *const natsio_msg) -> *const c_char {
    guard_value(std::ptr::null(), || {
        Ok(arg(msg, "msg")?
            .msg
            .reply_cstr()
            .map_or(std::ptr::null(), |r| r.as_ptr()))
    })
}

/// The payload, borrowed from the message; it is followed by a NUL byte so
/// text payloads can be printed directly. Use `natsio_msg_data_len` for
/// its length (payloads may contain NUL).
#[no_mangle]
pub unsafe extern "C" fn natsio_msg_data(msg: *const natsio_msg) -> *const c_char {
    guard_value(std::ptr::null(), || {
        Ok(arg(msg, "msg")?.msg.payload_ptr().cast())
    })
}

/// Payload length in bytes (0 for NULL).
#[no_mangle]
pub unsafe extern "C" fn natsio_msg_data_len(msg: *const natsio_msg) -> usize {
    guard_value(0, || Ok(arg(msg, "msg")?.msg.payload().len()))
}

/// The message's headers (borrowed, read-only), or NULL when it carried no
/// header block.
#[no_mangle]
pub unsafe extern "C" fn natsio_msg_headers(msg: *const natsio_msg) -> *const Headers {
    guard_value(std::ptr::null(), || {
        Ok(arg(msg, "msg")?
            .msg
            .headers()
            .map_or(std::ptr::null(), |h| h as *const Headers))
    })
}

/// The inline status code of the header block (e.g. 503), or 0.
#[no_mangle]
pub unsafe extern "C" fn natsio_msg_status(msg: *const natsio_msg) -> i32 {
    guard_value(0, || Ok(arg(msg, "msg")?.msg.status().map_or(0, i32::from)))
}

/// The description beside the message's inline status (e.g. "Request
/// Timeout" for 408), borrowed from the message; NULL when there is none
/// or `msg` is NULL. See `natsio_headers_status_description`.
#[no_mangle]
pub unsafe extern "C" fn natsio_msg_status_description(msg: *const natsio_msg) -> *const c_char {
    guard_value(std::ptr::null(), || {
        Ok(arg(msg, "msg")?
            .msg
            .headers()
            .and_then(|h| h.description_cstr())
            .map_or(std::ptr::null(), |d| d.as_ptr()))
    })
}

/// Whether the message arrived with a corrupt header block (see
/// `natsio_headers_malformed`; its good lines are in
/// `natsio_msg_headers`). False without headers or for NULL.
#[no_mangle]
pub unsafe extern "C" fn natsio_msg_headers_malformed(msg: *const natsio_msg) -> bool {
    guard_value(false, || {
        Ok(arg(msg, "msg")?
            .msg
            .headers()
            .is_some_and(|h| h.is_malformed()))
    })
}

/// The subscription id the message was delivered on (0 for NULL).
#[no_mangle]
pub unsafe extern "C" fn natsio_msg_sid(msg: *const natsio_msg) -> u64 {
    guard_value(0, || Ok(arg(msg, "msg")?.msg.sid()))
}

/// Every field of a message, read at once by `natsio_msg_get_fields`. The
/// pointers are borrowed from the message: valid while it is.
///
/// Binding support (natsio_sys.h).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct natsio_msg_fields {
    /// The subject, NUL-terminated, `subject_len` bytes before the NUL.
    pub subject: *const c_char,
    /// Length of `subject`.
    pub subject_len: usize,
    /// The reply subject, NUL-terminated, or NULL (`reply_len` 0) when the
    /// message has none.
    pub reply: *const c_char,
    /// Length of `reply` (0 without).
    pub reply_len: usize,
    /// The payload, `data_len` bytes (it may hold NULs), followed by a NUL.
    pub data: *const c_char,
    /// Length of `data`.
    pub data_len: usize,
    /// The headers, or NULL when the message carried no header block.
    pub headers: *const Headers,
    /// Header pairs in `headers` (0 without).
    pub header_count: usize,
    /// The inline status code of the header block (e.g. 503), or 0.
    pub status: i32,
    /// The subscription id the message was delivered on.
    pub sid: u64,
}

/// Reads every field of `msg` into `*fields_out` in one call: what
/// `natsio_msg_subject`, `_reply`, `_data`, `_data_len`, `_headers`,
/// `natsio_headers_len`, `natsio_msg_status` and `_sid` give, with the
/// subjects' lengths. For bindings that copy each delivered message into
/// another runtime (one call per message instead of one per field). Any
/// thread. Errors: NATSIO_ERR_NULL_ARGUMENT (`*fields_out` untouched).
///
/// Binding support (natsio_sys.h).
#[no_mangle]
pub unsafe extern "C" fn natsio_msg_get_fields(
    msg: *const natsio_msg,
    fields_out: *mut natsio_msg_fields,
) -> natsio_status {
    guard(|| {
        let m = &arg(msg, "msg")?.msg;
        let out = out_arg(fields_out, "fields_out")?;
        let headers = m.headers();
        *out = natsio_msg_fields {
            subject: m.subject_cstr().as_ptr(),
            // The spans' lengths: no scan for the NULs.
            subject_len: m.subject().len(),
            reply: m.reply_cstr().map_or(std::ptr::null(), |r| r.as_ptr()),
            reply_len: m.reply().map_or(0, str::len),
            data: m.payload_ptr().cast(),
            data_len: m.payload().len(),
            headers: headers.map_or(std::ptr::null(), |h| h as *const Headers),
            header_count: headers.map_or(0, Headers::len),
            status: m.status().map_or(0, i32::from),
            sid: m.sid(),
        };
        Ok(())
    })
}

/// Publishes `data` (and optional `headers`) to the message's reply subject
/// through the client that received it. Thread-safe.
/// Errors: NATSIO_ERR_NO_REPLY_SUBJECT, NATSIO_ERR_CONNECTION_CLOSED, and
/// those of `natsio_client_publish`.
#[no_mangle]
pub unsafe extern "C" fn natsio_msg_respond_with(
    msg: *const natsio_msg,
    headers: *const Headers,
    data: *const c_void,
    len: usize,
) -> natsio_status {
    guard(|| {
        let m = arg(msg, "msg")?;
        let headers = opt_arg_headers(headers);
        let data = bytes_arg(data, len, "data")?;
        if m.msg.reply().is_none() {
            return Err(Error::new(
                crate::ErrorKind::NoReplySubject,
                "message has no reply subject",
            ));
        }
        m.client.respond(&m.msg, headers, data)
    })
}

/// `natsio_msg_respond_with` without headers.
#[no_mangle]
pub unsafe extern "C" fn natsio_msg_respond(
    msg: *const natsio_msg,
    data: *const c_void,
    len: usize,
) -> natsio_status {
    natsio_msg_respond_with(msg, std::ptr::null(), data, len)
}

/// Keeps a message beyond the callback that received it: a cheap copy
/// sharing the same buffer, freed with `natsio_msg_free`.
#[no_mangle]
pub unsafe extern "C" fn natsio_msg_clone(
    msg: *const natsio_msg,
    out: *mut *mut natsio_msg,
) -> natsio_status {
    guard(|| {
        let m = arg(msg, "msg")?;
        let out = out_arg(out, "out")?;
        write_box(out, natsio_msg { js: m.copy() });
        Ok(())
    })
}

/// Frees an owned message. Accepts NULL. Never free a message borrowed by a
/// callback.
#[no_mangle]
pub unsafe extern "C" fn natsio_msg_free(msg: *mut natsio_msg) {
    free_box(msg)
}

/// Messages returned by `natsio_js_fetch`. Owned by the caller, freed with
/// `natsio_msg_list_free` (which frees the messages it holds).
pub struct natsio_msg_list {
    pub(crate) items: Vec<natsio_msg>,
}

/// How many messages the list holds (0 for NULL).
#[no_mangle]
pub unsafe extern "C" fn natsio_msg_list_count(list: *const natsio_msg_list) -> usize {
    count(list.as_ref().map(|l| &l.items))
}

/// Message `index` of the list, borrowed until the list is freed (NULL if
/// out of range). Acknowledge it through this pointer; `natsio_msg_clone`
/// keeps it longer.
#[no_mangle]
pub unsafe extern "C" fn natsio_msg_list_get(
    list: *const natsio_msg_list,
    index: usize,
) -> *const natsio_msg {
    guard_value(std::ptr::null(), || {
        Ok(arg(list, "list")?
            .items
            .get(index)
            .map_or(std::ptr::null(), |m| m as *const natsio_msg))
    })
}

/// Frees a list and its messages. Accepts NULL.
#[no_mangle]
pub unsafe extern "C" fn natsio_msg_list_free(list: *mut natsio_msg_list) {
    free_box(list)
}

/// The messages a fetch produced, as a new list freed with
/// `natsio_msg_list_free`. Returns as `natsio_token_msg`.
#[no_mangle]
pub unsafe extern "C" fn natsio_token_msg_list(
    token: *const natsio_token,
    list_out: *mut *mut natsio_msg_list,
) -> natsio_status {
    token_value(token, list_out, "list_out", |t, v: &Vec<Message>| {
        let items = v
            .iter()
            .map(|m| natsio_msg::new(m.clone(), t.client.clone()))
            .collect();
        Ok(Box::into_raw(Box::new(natsio_msg_list { items })))
    })
}

/// The message an operation produced (a request's reply, an iterator's
/// next message), as a new owned message freed with `natsio_msg_free`.
/// Returns NATSIO_PENDING while the operation runs, NATSIO_DONE when an
/// iteration ended, its error status if it failed, NATSIO_ERR_ILLEGAL_STATE
/// if it produces no message.
#[no_mangle]
pub unsafe extern "C" fn natsio_token_msg(
    token: *const natsio_token,
    msg_out: *mut *mut natsio_msg,
) -> natsio_status {
    if msg_out.is_null() {
        return guard(|| Err(super::null("msg_out")));
    }
    with_outcome(token, |t, o| match o {
        crate::completion::Outcome::Msg(m) => {
            write_box(msg_out, natsio_msg::new(m, t.client.clone()));
            Ok(())
        }
        _ => Err(wrong_kind("message")),
    })
}
