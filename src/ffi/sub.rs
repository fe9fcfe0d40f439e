//! `natsio_sub`: a subscription, consumed with `natsio_sub_next_msg`
//! (iterator mode) or by a callback (callback mode).

use std::ffi::{c_char, CString};
use std::sync::Arc;

use super::msg::natsio_msg;
use super::status::natsio_status;
use super::token::natsio_token;
use super::{arg, guard, guard_value, guard_void, ms_timeout, out_arg, write_box};
use crate::error::{Error, ErrorKind, Result};
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

/// Per-subscription settings. Initialize with `natsio_sub_options_init`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct natsio_sub_options {
    /// Pending message limit: 0 = the client's default, negative = unlimited.
    pub pending_msgs_limit: i64,
    /// Pending byte limit: 0 = the client's default, negative = unlimited.
    pub pending_bytes_limit: i64,
    /// A `natsio_pending_policy` value.
    pub policy: i32,
}

/// Live counters of a subscription.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct natsio_sub_stats {
    /// Messages handed to the application.
    pub delivered: u64,
    /// Messages dropped by the pending-limit policy.
    pub dropped: u64,
    /// Messages queued, not yet delivered.
    pub pending_msgs: u64,
    /// Bytes queued, not yet delivered.
    pub pending_bytes: u64,
}

pub(crate) fn sub_options(o: Option<&natsio_sub_options>) -> Result<SubOptions> {
    let Some(o) = o else {
        return Ok(SubOptions::default());
    };
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
    let lim = |v: i64| (v != 0).then_some(v);
    Ok(SubOptions {
        pending_msgs_limit: lim(o.pending_msgs_limit),
        pending_bytes_limit: lim(o.pending_bytes_limit),
        policy,
    })
}

/// Fills `opts` with the defaults: the client's limits, DROP_NEW.
#[no_mangle]
pub unsafe extern "C" fn natsio_sub_options_init(opts: *mut natsio_sub_options) -> natsio_status {
    guard(|| {
        let o = out_arg(opts, "opts")?;
        *o = natsio_sub_options {
            pending_msgs_limit: 0,
            pending_bytes_limit: 0,
            policy: natsio_pending_policy::NATSIO_POLICY_DROP_NEW as i32,
        };
        Ok(())
    })
}

/// Waits for the next message with `next` and hands it to C, owned.
unsafe fn next_into(
    sub: *const natsio_sub,
    timeout_ms: i64,
    msg_out: *mut *mut natsio_msg,
    next: fn(&Subscription, Option<std::time::Duration>) -> Result<crate::message::Message>,
) -> natsio_status {
    guard(|| {
        let s = arg(sub, "sub")?;
        let out = out_arg(msg_out, "msg_out")?;
        let m = next(&s.sub, ms_timeout(timeout_ms))?;
        write_box(out, natsio_msg::new(m, Arc::downgrade(&s.sub.client)));
        Ok(())
    })
}

/// Iterator mode: waits up to `timeout_ms` (negative: forever) for the next
/// message and returns it owned (free with `natsio_msg_free`). Blocks the
/// calling thread. Errors: NATSIO_ERR_TIMEOUT; NATSIO_ERR_SUBSCRIPTION_CLOSED
/// once it is closed (unsubscribed, drained, auto-unsubscribe reached after
/// the backlog, client closed) or when it is a callback subscription;
/// NATSIO_ERR_NO_RESPONDERS for a 503 status message; NATSIO_ERR_SLOW_CONSUMER
/// after the ERROR policy failed it; NATSIO_ERR_ILLEGAL_STATE on a runtime thread.
#[no_mangle]
pub unsafe extern "C" fn natsio_sub_next_msg(
    sub: *const natsio_sub,
    timeout_ms: i64,
    msg_out: *mut *mut natsio_msg,
) -> natsio_status {
    next_into(sub, timeout_ms, msg_out, Subscription::next_msg)
}

/// Like `natsio_sub_next_msg`, but a no-responders status message (503) is
/// returned as a message (see `natsio_msg_status`) instead of failing with
/// NATSIO_ERR_NO_RESPONDERS: what a callback receives. For wrappers that
/// deliver iterator-mode messages to handlers of their own.
#[no_mangle]
pub unsafe extern "C" fn natsio_sub_next_raw_msg(
    sub: *const natsio_sub,
    timeout_ms: i64,
    msg_out: *mut *mut natsio_msg,
) -> natsio_status {
    next_into(sub, timeout_ms, msg_out, Subscription::next_raw_msg)
}

/// Stops delivery at once and discards queued messages. After it returns no
/// callback of this subscription runs again (unless called from that
/// callback). The handle stays valid until `natsio_sub_free`.
/// Errors: NATSIO_ERR_SUBSCRIPTION_CLOSED if already closed.
#[no_mangle]
pub unsafe extern "C" fn natsio_sub_unsubscribe(sub: *mut natsio_sub) -> natsio_status {
    guard(|| arg(sub, "sub")?.sub.unsubscribe())
}

/// Asks the server to stop after `max` messages in total (counting those
/// already received); the subscription closes itself once they are handled.
/// Errors: NATSIO_ERR_INVALID_ARGUMENT for 0, NATSIO_ERR_SUBSCRIPTION_CLOSED.
#[no_mangle]
pub unsafe extern "C" fn natsio_sub_unsubscribe_after(
    sub: *mut natsio_sub,
    max: u64,
) -> natsio_status {
    guard(|| arg(sub, "sub")?.sub.unsubscribe_after(max))
}

/// Graceful close: stops new deliveries, lets the queued backlog be handled,
/// then closes. Waits up to `timeout_ms` (negative: forever). On
/// NATSIO_ERR_TIMEOUT the drain goes on. In iterator mode another thread
/// must consume the backlog. Errors: NATSIO_ERR_TIMEOUT,
/// NATSIO_ERR_SUBSCRIPTION_CLOSED (closed before draining finished),
/// NATSIO_ERR_SLOW_CONSUMER.
#[no_mangle]
pub unsafe extern "C" fn natsio_sub_drain(sub: *mut natsio_sub, timeout_ms: i64) -> natsio_status {
    guard(|| arg(sub, "sub")?.sub.drain(ms_timeout(timeout_ms)))
}

/// Starts a drain and returns its token (free with `natsio_token_free`).
#[no_mangle]
pub unsafe extern "C" fn natsio_sub_drain_async(
    sub: *mut natsio_sub,
    token_out: *mut *mut natsio_token,
) -> natsio_status {
    guard(|| {
        let s = arg(sub, "sub")?;
        let out = out_arg(token_out, "token_out")?;
        let c = s.sub.drain_async();
        write_box(out, natsio_token::new(c, Arc::downgrade(&s.sub.client)));
        Ok(())
    })
}

/// The subject subscribed to (borrowed from the handle); NULL for NULL.
#[no_mangle]
pub unsafe extern "C" fn natsio_sub_subject(sub: *const natsio_sub) -> *const c_char {
    guard_value(std::ptr::null(), || Ok(arg(sub, "sub")?.subject.as_ptr()))
}

/// The queue group, or NULL when there is none.
#[no_mangle]
pub unsafe extern "C" fn natsio_sub_queue(sub: *const natsio_sub) -> *const c_char {
    guard_value(std::ptr::null(), || {
        Ok(arg(sub, "sub")?
            .queue
            .as_ref()
            .map_or(std::ptr::null(), |q| q.as_ptr()))
    })
}

/// The subscription id (0 for NULL).
#[no_mangle]
pub unsafe extern "C" fn natsio_sub_sid(sub: *const natsio_sub) -> u64 {
    guard_value(0, || Ok(arg(sub, "sub")?.sub.sid()))
}

/// True once the subscription is closed (also for NULL).
#[no_mangle]
pub unsafe extern "C" fn natsio_sub_is_closed(sub: *const natsio_sub) -> bool {
    guard_value(true, || Ok(arg(sub, "sub")?.sub.is_closed()))
}

/// Reads the live counters into `stats_out`.
#[no_mangle]
pub unsafe extern "C" fn natsio_sub_get_stats(
    sub: *const natsio_sub,
    stats_out: *mut natsio_sub_stats,
) -> natsio_status {
    guard(|| {
        let s = arg(sub, "sub")?;
        let out = out_arg(stats_out, "stats_out")?;
        let st = s.sub.stats();
        *out = natsio_sub_stats {
            delivered: st.delivered,
            dropped: st.dropped,
            pending_msgs: st.pending_msgs,
            pending_bytes: st.pending_bytes,
        };
        Ok(())
    })
}

/// Unsubscribes (if still open) and frees the handle. Accepts NULL. Waits
/// for a running callback of this subscription to return, unless called from
/// it; the callback's release function runs after its last call.
#[no_mangle]
pub unsafe extern "C" fn natsio_sub_free(sub: *mut natsio_sub) {
    guard_void(|| {
        if !sub.is_null() {
            drop(Box::from_raw(sub));
        }
    })
}
