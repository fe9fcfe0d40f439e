//! `natsio_replies`: the replies of `natsio_client_request_many`, gathered
//! on the runtime and read through the iterator contract.

use std::ffi::c_void;

use super::iter::{self, natsio_iter_stats};
use super::msg::{natsio_msg, natsio_msg_cb};
use super::status::natsio_status;
use super::token::natsio_token;
use super::{arg, free_box, guard};
use crate::client::Replies;
use crate::client_handle::ClientHandle;
use crate::error::Result;

/// An iterator over the replies to one request. Owned, freed with
/// `natsio_replies_free`; every function is thread-safe.
pub struct natsio_replies {
    pub(crate) it: Replies,
    pub(crate) client: ClientHandle,
}

fn replies<'a>(p: *const natsio_replies) -> Result<&'a natsio_replies> {
    // SAFETY: the caller passes a live handle or NULL.
    unsafe { arg(p, "replies") }
}

/// The next reply (owned; free with `natsio_msg_free`), waiting up to
/// `timeout_ms` (NATSIO_TIMEOUT_DEFAULT or NATSIO_WAIT_FOREVER: as the
/// request's own stall and timeout allow; NATSIO_NO_WAIT: only one already
/// received). NATSIO_DONE (`*msg_out` set to NULL) once the replies have
/// ended: max_msgs reached, a stall, the overall timeout, no responders, or
/// `natsio_replies_stop`. Blocks. Errors: NATSIO_ERR_TIMEOUT,
/// NATSIO_ERR_CONNECTION_CLOSED (the client closed meanwhile),
/// NATSIO_ERR_ILLEGAL_STATE (callback mode, runtime thread).
#[no_mangle]
pub unsafe extern "C" fn natsio_replies_next(
    replies: *const natsio_replies,
    timeout_ms: i64,
    msg_out: *mut *mut natsio_msg,
) -> natsio_status {
    match self::replies(replies) {
        Ok(r) => {
            let client = r.client.clone();
            iter::next(&r.it.feed, timeout_ms, msg_out, "msg_out", |m| {
                Ok(natsio_msg::new(m, client))
            })
        }
        Err(e) => super::status::record(&e),
    }
}

/// A token for the next reply (`natsio_token_msg`; NATSIO_DONE at the end).
#[no_mangle]
pub unsafe extern "C" fn natsio_replies_next_async(
    replies: *const natsio_replies,
    token_out: *mut *mut natsio_token,
) -> natsio_status {
    match self::replies(replies) {
        Ok(r) => iter::next_async(&r.it.feed, r.client.clone(), token_out),
        Err(e) => super::status::record(&e),
    }
}

/// Push mode for the replies, as `natsio_sub_set_callback`.
#[no_mangle]
pub unsafe extern "C" fn natsio_replies_set_callback(
    replies: *const natsio_replies,
    cb: natsio_msg_cb,
    user_data: *mut c_void,
    release: super::natsio_release_cb,
) -> natsio_status {
    guard(|| {
        let r = self::replies(replies)?;
        let Some(f) = cb else {
            return Err(super::null("cb"));
        };
        let client = r.client.clone();
        iter::set_callback(
            user_data,
            release,
            move |ud, m, st| super::msg::call_msg_cb(f, ud, m, &client, st),
            |h| r.it.set_handler(h, Box::new(|| {})),
        )
    })
}

/// Ends the replies early: `natsio_replies_next` returns NATSIO_DONE, now
/// and later, and a callback gets its final call before this returns.
/// Idempotent; the handle stays valid until `natsio_replies_free`.
#[no_mangle]
pub unsafe extern "C" fn natsio_replies_stop(replies: *const natsio_replies) -> natsio_status {
    guard(|| {
        self::replies(replies)?.it.stop();
        Ok(())
    })
}

/// Reads the live counters into `stats_out`.
#[no_mangle]
pub unsafe extern "C" fn natsio_replies_get_stats(
    replies: *const natsio_replies,
    stats_out: *mut natsio_iter_stats,
) -> natsio_status {
    guard(|| iter::stats(self::replies(replies)?.it.stats(), stats_out))
}

/// Stops (if needed) and frees the iterator. Accepts NULL.
#[no_mangle]
pub unsafe extern "C" fn natsio_replies_free(replies: *mut natsio_replies) {
    free_box(replies)
}
