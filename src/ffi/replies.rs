//! `natsio_replies`: the replies of `natsio_client_request_many`.

use std::sync::{Mutex, Weak};

use super::msg::natsio_msg;
use super::status::natsio_status;
use super::{arg, guard, guard_void, out_arg, write_box};
use crate::client::{ClientInner, RequestMany, RequestManyStopper};
use crate::completion::lock;

/// An iterator over replies. Owned, freed with `natsio_replies_free`.
pub struct natsio_replies {
    pub(crate) it: Mutex<RequestMany>,
    /// Outside the mutex, which a blocked `next` holds.
    pub(crate) stopper: RequestManyStopper,
    pub(crate) client: Weak<ClientInner>,
}

/// The next reply (owned; free with `natsio_msg_free`), waiting as the
/// request's stall and timeout allow. Returns NATSIO_DONE when the replies
/// have ended: max_msgs reached, a stall, the overall timeout, or no
/// responders. Blocks. Errors: NATSIO_ERR_CONNECTION_CLOSED and the like.
#[no_mangle]
pub unsafe extern "C" fn natsio_replies_next(
    replies: *mut natsio_replies,
    msg_out: *mut *mut natsio_msg,
) -> natsio_status {
    let mut done = false;
    let s = guard(|| {
        let r = arg(replies, "replies")?;
        let out = out_arg(msg_out, "msg_out")?;
        match lock(&r.it).next_msg()? {
            Some(m) => write_box(out, natsio_msg::new(m, r.client.clone())),
            None => done = true,
        }
        Ok(())
    });
    if done {
        natsio_status::NATSIO_DONE
    } else {
        s
    }
}

/// Ends the replies early: a `natsio_replies_next` blocked on another
/// thread returns NATSIO_DONE at once, and so do later calls. Thread-safe;
/// the handle stays valid until `natsio_replies_free`.
#[no_mangle]
pub unsafe extern "C" fn natsio_replies_close(replies: *const natsio_replies) -> natsio_status {
    guard(|| {
        arg(replies, "replies")?.stopper.stop();
        Ok(())
    })
}

/// Frees the iterator (unsubscribing its inbox). Accepts NULL. Must not be
/// called while another thread is inside `natsio_replies_next` (call
/// `natsio_replies_close` and let it return first).
#[no_mangle]
pub unsafe extern "C" fn natsio_replies_free(replies: *mut natsio_replies) {
    guard_void(|| {
        if !replies.is_null() {
            drop(Box::from_raw(replies));
        }
    })
}
