//! `natsio_sub`: a subscription, read through the iterator contract
//! (`natsio_sub_next`, `natsio_sub_next_async`, or a callback set with
//! `natsio_sub_set_callback`).

use std::ffi::{c_char, c_void, CString};
use std::sync::Arc;

use super::iter::{self, natsio_iter_stats};
use super::msg::{natsio_msg, natsio_msg_cb};
use super::status::natsio_status;
use super::token::natsio_token;
use super::{arg, free_box, guard, guard_value, out_arg, timeout_arg, write_box};
use crate::client_handle::ClientHandle;
use crate::error::{Error, ErrorKind, Result};
use crate::feed::{Delivery, Handler};
use crate::message::Message;
use crate::options::PendingPolicy;
use crate::subscription::{SubOptions, Subscription};

/// A subscription. Owned by the caller, freed with `natsio_sub_free`. All
/// functions are thread-safe.
pub struct natsio_sub {
    pub(crate) sub: Subscription,
    subject: CString,
    queue: Option<CString>,
}

impl natsio_sub {
    pub(crate) fn new(sub: Subscription) -> Self {
        let subject = CString::new(sub.subject()).unwrap_or_default();
        let queue = sub.queue_group().and_then(|q| CString::new(q).ok());
        natsio_sub {
            sub,
            subject,
            queue,
        }
    }

    fn client_handle(&self) -> ClientHandle {
        ClientHandle::from(&self.sub.client)
    }
}

/// What a subscription does when a pending limit is exceeded.
#[repr(i32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum natsio_pending_policy {
    /// Discard the arriving message (default).
    NATSIO_POLICY_DROP_NEW = 0,
    /// Evict the oldest queued messages to make room.
    NATSIO_POLICY_DROP_OLD = 1,
    /// Pause reading from the socket (the whole connection) until the
    /// consumer catches up; nothing is lost. The message that found the
    /// queue full is kept, so the queue may hold one message over the limit.
    NATSIO_POLICY_BLOCK = 2,
    /// Fail the subscription with NATSIO_ERR_SLOW_CONSUMER: delivery stops
    /// at once and the queued backlog is discarded.
    NATSIO_POLICY_ERROR = 3,
}

/// `natsio_sub_options.version` of this header. Version 2 gave the limits
/// the reference's meaning (0 disables); a version-1 struct keeps its own
/// (0: the client's default).
pub const NATSIO_SUB_OPTIONS_VERSION: u32 = 2;

/// A `natsio_sub_options` pending limit meaning "the client's default"
/// (`natsio_options_set_pending_limits`): what `natsio_sub_options_init`
/// puts in both limits.
pub const NATSIO_PENDING_LIMIT_DEFAULT: i64 = i64::MIN;

/// Per-subscription settings. Initialise with `natsio_sub_options_init`.
///
/// Flow control within the limits: when a subscription's consumer lags
/// (its queue takes more than 1 MiB for a callback, 4 MiB for one read
/// with `natsio_sub_next` or a binding's iterator; each message counted
/// with its protocol line and bookkeeping), the connection's reader stops
/// reading until the consumer has taken half of the queue, 20 ms at most,
/// so what it has not taken waits in the socket and the server rather
/// than in this process. A consumer that did not catch up in that time is
/// not waited for again until its queue falls back under that size; the
/// limits and the policy then apply. Every subscription of the connection
/// waits with it: give a subscription that may lag a connection of its
/// own.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct natsio_sub_options {
    /// NATSIO_SUB_OPTIONS_VERSION.
    pub version: u32,
    /// Pending message limit: NATSIO_PENDING_LIMIT_DEFAULT (the _init
    /// value) = the client's default; 0 or less = no limit (as the
    /// reference's `pending_msgs_limit`).
    pub pending_msgs_limit: i64,
    /// Pending byte limit: NATSIO_PENDING_LIMIT_DEFAULT (the _init value) =
    /// the client's default; 0 or less = no limit.
    pub pending_bytes_limit: i64,
    /// A `natsio_pending_policy` value.
    pub policy: i32,
}

impl super::Versioned for natsio_sub_options {
    const VERSION: u32 = NATSIO_SUB_OPTIONS_VERSION;
    const NAME: &'static str = "natsio_sub_options";
    fn set_version(&mut self) {
        self.version = NATSIO_SUB_OPTIONS_VERSION;
    }
    // Version 1 has the same layout; only the meaning of 0 differs.
    fn size_of_version(version: u32) -> Option<usize> {
        matches!(version, 1 | NATSIO_SUB_OPTIONS_VERSION).then_some(std::mem::size_of::<Self>())
    }
    // The defaults (NULL options, _init) are the client's limits, which
    // are not zero here.
    fn zeroed() -> Self {
        natsio_sub_options {
            version: 0,
            pending_msgs_limit: NATSIO_PENDING_LIMIT_DEFAULT,
            pending_bytes_limit: NATSIO_PENDING_LIMIT_DEFAULT,
            policy: 0,
        }
    }
}

pub(crate) fn sub_options(o: natsio_sub_options) -> Result<SubOptions> {
    let policy = match o.policy {
        0 => PendingPolicy::DropNew,
        1 => PendingPolicy::DropOld,
        2 => PendingPolicy::Block,
        3 => PendingPolicy::Error,
        p => {
            return Err(Error::new(
                ErrorKind::InvalidArgument,
                format!("unknown pending policy {p}"),
            ))
        }
    };
    // SubOptions: None = the client's default, Some(n <= 0) = no limit.
    let lim = |v: i64| match v {
        NATSIO_PENDING_LIMIT_DEFAULT => None,
        0 if o.version == 1 => None,
        v => Some(v),
    };
    Ok(SubOptions {
        pending_msgs_limit: lim(o.pending_msgs_limit),
        pending_bytes_limit: lim(o.pending_bytes_limit),
        policy,
        limits_count_handler: false,
    })
}

/// Fills `opts` with the defaults (NATSIO_PENDING_LIMIT_DEFAULT: the
/// client's limits; DROP_NEW) and the version. Errors:
/// NATSIO_ERR_NULL_ARGUMENT.
#[no_mangle]
pub unsafe extern "C" fn natsio_sub_options_init(opts: *mut natsio_sub_options) -> natsio_status {
    guard(|| super::options_init(opts))
}

fn sub<'a>(p: *const natsio_sub) -> Result<&'a natsio_sub> {
    // SAFETY: the caller passes a live handle or NULL.
    unsafe { arg(p, "sub") }
}

/// The next message, waiting up to `timeout_ms` (NATSIO_NO_WAIT: only one
/// already queued; NATSIO_TIMEOUT_DEFAULT or NATSIO_WAIT_FOREVER: until one
/// comes). NATSIO_OK: `*msg_out` is an owned message (free with
/// `natsio_msg_free`). NATSIO_DONE (`*msg_out` set to NULL): the
/// subscription has ended (stopped, drained, or its auto-unsubscribe
/// count reached after the backlog). Blocks. Errors: NATSIO_ERR_TIMEOUT,
/// NATSIO_ERR_NO_RESPONDERS for a 503 status message,
/// NATSIO_ERR_CONNECTION_CLOSED (the client closed),
/// NATSIO_ERR_SLOW_CONSUMER (failed by the ERROR policy),
/// NATSIO_ERR_ILLEGAL_STATE (in callback mode, or on a runtime thread).
#[no_mangle]
pub unsafe extern "C" fn natsio_sub_next(
    sub: *const natsio_sub,
    timeout_ms: i64,
    msg_out: *mut *mut natsio_msg,
) -> natsio_status {
    let s = match self::sub(sub) {
        Ok(s) => s,
        Err(e) => return super::status::record(&e),
    };
    let client = s.client_handle();
    iter::next(s.sub.feed(), timeout_ms, msg_out, "msg_out", |m| {
        if m.is_no_responders() {
            return Err(Error::new(
                ErrorKind::NoResponders,
                "no responders available for request",
            ));
        }
        Ok(natsio_msg::new(m, client))
    })
}

/// A token for the next message, read with `natsio_token_msg` (which
/// returns NATSIO_DONE once the subscription has ended). Pending tokens are
/// served in call order; freeing or cancelling one before a message reached
/// it leaves the messages queued. Errors: NATSIO_ERR_ILLEGAL_STATE (in
/// callback mode).
#[no_mangle]
pub unsafe extern "C" fn natsio_sub_next_async(
    sub: *const natsio_sub,
    token_out: *mut *mut natsio_token,
) -> natsio_status {
    match self::sub(sub) {
        Ok(s) => iter::next_async(s.sub.feed(), s.client_handle(), token_out),
        Err(e) => super::status::record(&e),
    }
}

/// Switches to push mode: `cb` receives every message, status messages
/// included (borrowed for the call), in order, one at a time, on the
/// subscription's own library thread, then once with a NULL message and
/// the status that ended it (NATSIO_DONE after stop, drain, free or the
/// auto-unsubscribe count; an error status otherwise). It may block, and
/// may call any natsio function, `natsio_sub_free` of this subscription
/// included. Messages queued before the call are delivered first.
/// `release` (may be NULL) is called with `user_data` after the last call.
/// If this function fails, `release` is not called. Errors:
/// NATSIO_ERR_NULL_ARGUMENT, NATSIO_ERR_ILLEGAL_STATE (a callback is set
/// already, or `natsio_sub_next_async` tokens are pending).
#[no_mangle]
pub unsafe extern "C" fn natsio_sub_set_callback(
    sub: *const natsio_sub,
    cb: natsio_msg_cb,
    user_data: *mut c_void,
    release: super::natsio_release_cb,
) -> natsio_status {
    guard(|| {
        let s = self::sub(sub)?;
        let Some(f) = cb else {
            return Err(super::null("cb"));
        };
        let client = s.client_handle();
        iter::set_callback(
            user_data,
            release,
            move |ud, m, st| super::msg::call_msg_cb(f, ud, m, &client, st),
            |h| s.sub.set_handler(h, Box::new(|| {})),
        )
    })
}

/// Called with up to the registered number of a subscription's messages
/// at a time (`count` > 0, status NATSIO_OK; the messages are borrowed for
/// the call, oldest first), then once with `msgs` NULL, `count` 0 and the
/// status that ended the subscription, as for `natsio_msg_cb`.
///
/// Binding support (natsio_sys.h).
pub type natsio_msg_batch_cb = Option<
    unsafe extern "C" fn(
        user_data: *mut c_void,
        msgs: *const *const natsio_msg,
        count: usize,
        status: natsio_status,
    ),
>;

/// `natsio_sub_set_callback` for callers whose per-call cost matters
/// (a binding entering another runtime): `cb` receives, in order, the
/// messages queued at the time, up to `max_batch` per call, on the
/// subscription's own library thread, then the end (see
/// `natsio_msg_batch_cb`). The messages of one call were taken off the
/// queue together: when the subscription is stopped or fails during the
/// call (another thread's `natsio_sub_stop`, which waits for the call to
/// return, a close, a drain timeout), the call still holds messages that a
/// per-message callback would not have received: check
/// `natsio_sub_is_stopped` between messages and handle no more once it is
/// true. The rest is as for `natsio_sub_set_callback`. Errors:
/// NATSIO_ERR_NULL_ARGUMENT, NATSIO_ERR_INVALID_ARGUMENT (`max_batch` 0),
/// NATSIO_ERR_ILLEGAL_STATE (a callback is set already, or
/// `natsio_sub_next_async` tokens are pending).
///
/// Binding support (natsio_sys.h).
#[no_mangle]
pub unsafe extern "C" fn natsio_sub_set_batch_callback(
    sub: *const natsio_sub,
    cb: natsio_msg_batch_cb,
    user_data: *mut c_void,
    release: super::natsio_release_cb,
    max_batch: usize,
) -> natsio_status {
    guard(|| {
        let s = self::sub(sub)?;
        let Some(f) = cb else {
            return Err(super::null("cb"));
        };
        if max_batch == 0 {
            return Err(Error::new(
                ErrorKind::InvalidArgument,
                "max_batch must be at least 1",
            ));
        }
        let client = s.client_handle();
        let make = move |held: Arc<super::Released>| -> Handler<Message> {
            // Reused from call to call: a batch allocates nothing once warm.
            let mut handles: Vec<natsio_msg> = Vec::new();
            let mut ptrs: Vec<usize> = Vec::new(); // the handles' addresses (Send)
            Box::new(move |d| {
                let items = match d {
                    Delivery::Item(m) => vec![m],
                    Delivery::Batch(ms) => ms,
                    Delivery::End(e) => {
                        // SAFETY: the application registered `f` for this data.
                        unsafe { f(held.ptr(), std::ptr::null(), 0, iter::end_status(e)) };
                        return;
                    }
                };
                handles.extend(
                    items
                        .into_iter()
                        .map(|m| natsio_msg::new(m, client.clone())),
                );
                ptrs.extend(handles.iter().map(|h| h as *const natsio_msg as usize));
                let array = ptrs.as_ptr() as *const *const natsio_msg;
                // SAFETY: as above; the handles outlive the call.
                unsafe { f(held.ptr(), array, ptrs.len(), natsio_status::NATSIO_OK) };
                ptrs.clear();
                handles.clear();
            })
        };
        iter::install_with_user_data(user_data, release, make, |h| {
            s.sub.set_batch_handler(max_batch, h, Box::new(|| {}))
        })
    })
}

/// Stops the subscription at once (unsubscribes) and discards queued
/// messages: `natsio_sub_next` returns NATSIO_DONE. After it returns the
/// callback runs no more, except its final call, made before this returns
/// (unless this is called from the callback itself, which ends after it
/// returns). Stopping an ended subscription does nothing. The handle stays
/// valid until `natsio_sub_free`. Errors: NATSIO_ERR_NULL_ARGUMENT.
#[no_mangle]
pub unsafe extern "C" fn natsio_sub_stop(sub: *const natsio_sub) -> natsio_status {
    guard(|| {
        self::sub(sub)?.sub.stop();
        Ok(())
    })
}

/// Asks the server to stop after `max` messages in total (counting those
/// already received); the subscription ends once they are handled.
/// Errors: NATSIO_ERR_INVALID_ARGUMENT for 0, NATSIO_ERR_SUBSCRIPTION_CLOSED.
#[no_mangle]
pub unsafe extern "C" fn natsio_sub_unsubscribe_after(
    sub: *const natsio_sub,
    max: u64,
) -> natsio_status {
    guard(|| self::sub(sub)?.sub.unsubscribe_after(max))
}

/// Graceful end: stops new deliveries, lets the queued backlog be handled,
/// then ends. Waits up to `timeout_ms` (NATSIO_TIMEOUT_DEFAULT: the
/// client's drain timeout); on NATSIO_ERR_TIMEOUT the drain goes on. In
/// iterator mode another thread must take the backlog. Errors:
/// NATSIO_ERR_TIMEOUT, NATSIO_ERR_SUBSCRIPTION_CLOSED (stopped before
/// draining finished), NATSIO_ERR_SLOW_CONSUMER, NATSIO_ERR_CONNECTION_CLOSED,
/// NATSIO_ERR_INVALID_ARGUMENT (timeout).
#[no_mangle]
pub unsafe extern "C" fn natsio_sub_drain(
    sub: *const natsio_sub,
    timeout_ms: i64,
) -> natsio_status {
    guard(|| {
        let s = self::sub(sub)?;
        let timeout = timeout_arg(timeout_ms, Some(s.sub.client.opts.drain_timeout), false)?;
        s.sub.drain(timeout)
    })
}

/// Starts a drain and returns its token (free with `natsio_token_free`),
/// completing when the backlog is handled, or failing with
/// NATSIO_ERR_TIMEOUT once `timeout_ms` passes (NATSIO_TIMEOUT_DEFAULT: the
/// client's drain timeout; NATSIO_WAIT_FOREVER: no bound); the drain goes
/// on after a timeout (errors as `natsio_sub_drain`). Errors (immediate):
/// NATSIO_ERR_NULL_ARGUMENT, NATSIO_ERR_INVALID_ARGUMENT (timeout).
#[no_mangle]
pub unsafe extern "C" fn natsio_sub_drain_async(
    sub: *const natsio_sub,
    timeout_ms: i64,
    token_out: *mut *mut natsio_token,
) -> natsio_status {
    guard(|| {
        let s = self::sub(sub)?;
        let out = out_arg(token_out, "token_out")?;
        let timeout = timeout_arg(timeout_ms, Some(s.sub.client.opts.drain_timeout), false)?;
        let c = s.sub.drain_async(timeout);
        write_box(out, natsio_token::new(c, s.client_handle()));
        Ok(())
    })
}

/// A token completing when the subscription ends, without taking a
/// message (free with `natsio_token_free`): NATSIO_OK once it ended
/// cleanly (its backlog handled after a drain, `natsio_sub_unsubscribe_after`
/// or the server's end), NATSIO_ERR_SUBSCRIPTION_CLOSED once stopped (or
/// freed), NATSIO_ERR_CONNECTION_CLOSED once its client closed, or the
/// error that failed it (e.g. NATSIO_ERR_SLOW_CONSUMER under the ERROR
/// policy). Completes at once for an ended subscription. For a reader
/// that pauses taking messages (a binding whose consumer's buffer is
/// full) and must still learn of the end. Errors (immediate):
/// NATSIO_ERR_NULL_ARGUMENT.
#[no_mangle]
pub unsafe extern "C" fn natsio_sub_end_async(
    sub: *const natsio_sub,
    token_out: *mut *mut natsio_token,
) -> natsio_status {
    guard(|| {
        let s = self::sub(sub)?;
        let out = out_arg(token_out, "token_out")?;
        write_box(out, natsio_token::new(s.sub.end_async(), s.client_handle()));
        Ok(())
    })
}

/// The subject subscribed to (borrowed from the handle); NULL for NULL.
#[no_mangle]
pub unsafe extern "C" fn natsio_sub_subject(sub: *const natsio_sub) -> *const c_char {
    guard_value(std::ptr::null(), || Ok(self::sub(sub)?.subject.as_ptr()))
}

/// The queue group, or NULL when there is none.
#[no_mangle]
pub unsafe extern "C" fn natsio_sub_queue(sub: *const natsio_sub) -> *const c_char {
    guard_value(std::ptr::null(), || {
        Ok(self::sub(sub)?
            .queue
            .as_ref()
            .map_or(std::ptr::null(), |q| q.as_ptr()))
    })
}

/// The subscription id (0 for NULL).
#[no_mangle]
pub unsafe extern "C" fn natsio_sub_sid(sub: *const natsio_sub) -> u64 {
    guard_value(0, || Ok(self::sub(sub)?.sub.sid()))
}

/// True once the subscription has ended (also for NULL).
#[no_mangle]
pub unsafe extern "C" fn natsio_sub_is_closed(sub: *const natsio_sub) -> bool {
    guard_value(true, || Ok(self::sub(sub)?.sub.is_closed()))
}

/// True once the subscription was stopped or ended with an error, its
/// backlog discarded (`natsio_sub_stop`, `natsio_sub_free`, the client
/// closed, a drain timeout, a slow-consumer error); false while it
/// delivers and after it finished normally (drained, or the
/// auto-unsubscribe count reached), and for NULL. A batch callback checks
/// it between the messages of a call: once true, the rest of the call's
/// messages are not to be handled, as a per-message callback would not
/// have been called for them. Never blocks; any thread.
#[no_mangle]
pub unsafe extern "C" fn natsio_sub_is_stopped(sub: *const natsio_sub) -> bool {
    guard_value(false, || Ok(self::sub(sub)?.sub.feed().is_cut()))
}

/// Reads the live counters into `stats_out`.
#[no_mangle]
pub unsafe extern "C" fn natsio_sub_get_stats(
    sub: *const natsio_sub,
    stats_out: *mut natsio_iter_stats,
) -> natsio_status {
    guard(|| iter::stats(self::sub(sub)?.sub.stats(), stats_out))
}

/// Stops the subscription (if needed) and frees the handle. Accepts NULL.
/// Waits for the callback's final call, unless called from the callback;
/// its release function runs after that call.
#[no_mangle]
pub unsafe extern "C" fn natsio_sub_free(sub: *mut natsio_sub) {
    free_box(sub)
}
