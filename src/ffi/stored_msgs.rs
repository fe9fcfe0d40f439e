//! `natsio_stored_msgs`: the messages of `natsio_js_stream_get_last_msgs_for`
//! (a batch Direct Get), gathered on the runtime and read through the
//! iterator contract.

use std::ffi::{c_char, c_void};

use super::iter::{self, natsio_iter_stats};
use super::js::natsio_js;
use super::status::natsio_status;
use super::stream::natsio_stored_msg;
use super::token::natsio_token;
use super::{arg, free_box, guard, out_arg, str_arg, write_box};
use crate::client_handle::ClientHandle;
use crate::error::Result;
use crate::jetstream::{LastMsgsOptions, StoredMsgs};

/// An iterator over the messages of one batch read. Owned, freed with
/// `natsio_stored_msgs_free`; every function is thread-safe.
pub struct natsio_stored_msgs {
    it: StoredMsgs,
    client: ClientHandle,
}

fn msgs<'a>(p: *const natsio_stored_msgs) -> Result<&'a natsio_stored_msgs> {
    // SAFETY: the caller passes a live handle or NULL.
    unsafe { arg(p, "msgs") }
}

/// A batch read's messages in push mode (`natsio_stored_msgs_set_callback`):
/// each message with NATSIO_OK (borrowed for the call), then once `msg`
/// NULL with the status that ended the batch (NATSIO_DONE, or an error).
/// Runs on a library thread, one call at a time, in order.
pub type natsio_stored_msg_cb = Option<
    unsafe extern "C" fn(
        user_data: *mut c_void,
        msg: *const natsio_stored_msg,
        status: natsio_status,
    ),
>;

/// Reads the last message of every subject of `stream` that matches one of
/// the `nsubjects` filters in `subjects` (wildcards allowed), in stream
/// order, with one batch Direct Get (ADR-31; the stream needs allow_direct,
/// the server 2.11+). `batch` caps how many (0: the server's limit);
/// `up_to_seq` (0: none) or `up_to_time_ns` (nanoseconds since the epoch;
/// 0: none) reads the last messages as of that point instead of now (not
/// both). The messages are gathered on the library's threads from now on;
/// read them with the `natsio_stored_msgs_` functions through `msgs_out`
/// (free with `natsio_stored_msgs_free`). Does not block. Errors:
/// NATSIO_ERR_NULL_ARGUMENT, NATSIO_ERR_INVALID_UTF8,
/// NATSIO_ERR_INVALID_ARGUMENT (bad stream name, no subjects, both bounds),
/// NATSIO_ERR_BAD_SUBJECT, NATSIO_ERR_CONNECTION_CLOSED.
#[no_mangle]
pub unsafe extern "C" fn natsio_js_stream_get_last_msgs_for(
    js: *const natsio_js,
    stream: *const c_char,
    subjects: *const *const c_char,
    nsubjects: usize,
    batch: u32,
    up_to_seq: u64,
    up_to_time_ns: i64,
    msgs_out: *mut *mut natsio_stored_msgs,
) -> natsio_status {
    guard(|| {
        let h: &natsio_js = arg(js, "js")?;
        let stream = str_arg(stream, "stream")?;
        let filters = super::strings_arg(subjects, nsubjects, "subjects", "subject")?;
        let out = out_arg(msgs_out, "msgs_out")?;
        let opts = LastMsgsOptions {
            batch: (batch > 0).then_some(batch),
            up_to_seq: (up_to_seq > 0).then_some(up_to_seq),
            up_to_time_ns: (up_to_time_ns != 0).then_some(up_to_time_ns),
        };
        let it = h.js.get_last_msgs_for(stream, &filters, opts)?;
        write_box(
            out,
            natsio_stored_msgs {
                it,
                client: h.client_handle(),
            },
        );
        Ok(())
    })
}

/// The next message (owned; free with `natsio_stored_msg_free`), waiting up
/// to `timeout_ms` (NATSIO_TIMEOUT_DEFAULT or NATSIO_WAIT_FOREVER: until one
/// comes or the batch ends; NATSIO_NO_WAIT: only one already received).
/// NATSIO_DONE (`*msg_out` set to NULL) once the batch has ended: every
/// message was read, none matched, or `natsio_stored_msgs_stop`. Blocks.
/// Errors: NATSIO_ERR_TIMEOUT (the batch goes on), NATSIO_ERR_NO_RESPONDERS
/// (no such stream, or it does not allow direct get),
/// NATSIO_ERR_JS_API (another status from the server), NATSIO_ERR_TIMEOUT
/// as the batch's final error when it stalled for the context's timeout,
/// NATSIO_ERR_CONNECTION_CLOSED, NATSIO_ERR_ILLEGAL_STATE (callback mode, or
/// on a library runtime thread).
#[no_mangle]
pub unsafe extern "C" fn natsio_stored_msgs_next(
    msgs: *const natsio_stored_msgs,
    timeout_ms: i64,
    msg_out: *mut *mut natsio_stored_msg,
) -> natsio_status {
    match self::msgs(msgs) {
        Ok(m) => iter::next(&m.it.feed, timeout_ms, msg_out, "msg_out", |sm| {
            Ok(natsio_stored_msg::new(sm))
        }),
        Err(e) => super::status::record(&e),
    }
}

/// A token for the next message (`natsio_token_stored_msg`; NATSIO_DONE at
/// the end).
#[no_mangle]
pub unsafe extern "C" fn natsio_stored_msgs_next_async(
    msgs: *const natsio_stored_msgs,
    token_out: *mut *mut natsio_token,
) -> natsio_status {
    match self::msgs(msgs) {
        Ok(m) => iter::next_async(&m.it.feed, m.client.clone(), token_out),
        Err(e) => super::status::record(&e),
    }
}

/// Push mode for a batch read: `cb` gets every message, then a final call
/// with a NULL message and the status that ended it; `release` runs after
/// that. As `natsio_sub_set_callback` otherwise.
#[no_mangle]
pub unsafe extern "C" fn natsio_stored_msgs_set_callback(
    msgs: *const natsio_stored_msgs,
    cb: natsio_stored_msg_cb,
    user_data: *mut c_void,
    release: super::natsio_release_cb,
) -> natsio_status {
    guard(|| {
        let m = self::msgs(msgs)?;
        let Some(f) = cb else {
            return Err(super::null("cb"));
        };
        iter::set_callback(
            user_data,
            release,
            iter::item_cb(f, natsio_stored_msg::new),
            |h| m.it.set_handler(h, Box::new(|| {})),
        )
    })
}

/// Ends the batch read early: `natsio_stored_msgs_next` returns
/// NATSIO_DONE, now and later, and a callback gets its final call before
/// this returns. Idempotent; the handle stays valid until
/// `natsio_stored_msgs_free`.
#[no_mangle]
pub unsafe extern "C" fn natsio_stored_msgs_stop(msgs: *const natsio_stored_msgs) -> natsio_status {
    guard(|| {
        self::msgs(msgs)?.it.stop();
        Ok(())
    })
}

/// Reads the live counters into `stats_out`.
#[no_mangle]
pub unsafe extern "C" fn natsio_stored_msgs_get_stats(
    msgs: *const natsio_stored_msgs,
    stats_out: *mut natsio_iter_stats,
) -> natsio_status {
    guard(|| iter::stats(self::msgs(msgs)?.it.stats(), stats_out))
}

/// Stops (if needed) and frees the iterator. Accepts NULL.
#[no_mangle]
pub unsafe extern "C" fn natsio_stored_msgs_free(msgs: *mut natsio_stored_msgs) {
    free_box(msgs)
}
