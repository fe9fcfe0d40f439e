//! The one iterator contract of the C ABI, implemented once for every
//! iterator handle (`natsio_sub`, `natsio_replies`, `natsio_js_messages`,
//! `natsio_kv_watcher`, `natsio_kv_key_lister`, ...): `_next`, `_next_async`, `_set_callback`,
//! `_get_stats`; each handle's module adds `_stop` and `_free`.

use std::ffi::c_void;
use std::sync::Arc;

use super::status::{self, natsio_status};
use super::token::natsio_token;
use super::{guard, out_arg, timeout_arg, write_box, Released};
use crate::client_handle::ClientHandle;
use crate::error::{Error, Result};
use crate::feed::{Delivery, Feed, FeedItem, FeedStats, Handler};

/// Live counters of an iterator (`natsio_sub_get_stats` and the like).
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct natsio_iter_stats {
    /// Items handed to the application.
    pub delivered: u64,
    /// Items dropped by a subscription's pending-limit policy.
    pub dropped: u64,
    /// Items buffered, not yet delivered.
    pub pending_items: u64,
    /// Bytes buffered, not yet delivered.
    pub pending_bytes: u64,
    /// Times a pulling iterator (consume, KV watch) found its buffer full
    /// and stopped pulling until the application caught up.
    pub stalls: u64,
}

/// `_next`: the next item through `out` (made by `to_c`), NATSIO_DONE
/// (with `*out` set to NULL) once the iteration ended without error.
pub(crate) unsafe fn next<T: FeedItem, H>(
    feed: &Feed<T>,
    timeout_ms: i64,
    out: *mut *mut H,
    out_name: &str,
    to_c: impl FnOnce(T) -> Result<H>,
) -> natsio_status {
    next_ptr(feed, timeout_ms, out, out_name, |item| {
        to_c(item).map(|h| Box::into_raw(Box::new(h)))
    })
}

/// `_next` for an item that crosses as its own pointer (a key as a C
/// string): `to_c` makes the owned pointer written to `out`.
pub(crate) unsafe fn next_ptr<T: FeedItem, H>(
    feed: &Feed<T>,
    timeout_ms: i64,
    out: *mut *mut H,
    out_name: &str,
    to_c: impl FnOnce(T) -> Result<*mut H>,
) -> natsio_status {
    let mut done = false;
    let s = guard(|| {
        let out = out_arg(out, out_name)?;
        let timeout = timeout_arg(timeout_ms, None, true)?;
        crate::runtime::ensure_may_block()?;
        match feed.next(timeout)? {
            Some(item) => *out = to_c(item)?,
            None => {
                *out = std::ptr::null_mut();
                done = true;
            }
        }
        Ok(())
    });
    if done {
        natsio_status::NATSIO_DONE
    } else {
        s
    }
}

/// `_next_async`: a token for the next item.
pub(crate) unsafe fn next_async<T: FeedItem>(
    feed: &Arc<Feed<T>>,
    client: ClientHandle,
    out: *mut *mut natsio_token,
) -> natsio_status {
    guard(|| {
        let out = out_arg(out, "token_out")?;
        let c = feed.next_async()?;
        write_box(out, natsio_token::for_next(c, client));
        Ok(())
    })
}

/// `_set_callback`: installs a push-mode handler (through `install`) that
/// calls `call(user_data, Some(item), NATSIO_OK)` for every item, then
/// `call(user_data, None, status)` once at the end (NATSIO_DONE, or the
/// error that ended it, whose detail `natsio_last_error` gives on that
/// thread). `release` runs after the last call; if installing fails it is
/// not called.
pub(crate) fn set_callback<T: FeedItem>(
    user_data: *mut c_void,
    release: super::natsio_release_cb,
    call: impl Fn(*mut c_void, Option<T>, natsio_status) + Send + 'static,
    install: impl FnOnce(Handler<T>) -> Result<()>,
) -> Result<()> {
    install_with_user_data(
        user_data,
        release,
        move |held| {
            Box::new(move |d| match d {
                Delivery::Item(item) => call(held.ptr(), Some(item), natsio_status::NATSIO_OK),
                Delivery::Batch(items) => {
                    for item in items {
                        call(held.ptr(), Some(item), natsio_status::NATSIO_OK);
                    }
                }
                Delivery::End(e) => call(held.ptr(), None, end_status(e)),
            })
        },
        install,
    )
}

/// The status a C callback gets for a feed's end: NATSIO_DONE, or the
/// error's (its detail recorded for `natsio_last_error` on this thread).
pub(crate) fn end_status(e: Option<Error>) -> natsio_status {
    match e {
        None => natsio_status::NATSIO_DONE,
        Some(e) => status::record(&e),
    }
}

/// Installs (through `install`) the handler `make` builds around the
/// user data, which is released after the handler's last call; if
/// installing fails, `release` is not called.
pub(crate) fn install_with_user_data<T: FeedItem>(
    user_data: *mut c_void,
    release: super::natsio_release_cb,
    make: impl FnOnce(Arc<Released>) -> Handler<T>,
    install: impl FnOnce(Handler<T>) -> Result<()>,
) -> Result<()> {
    let ud = Arc::new(Released::new(user_data, release));
    let handler = make(Arc::clone(&ud));
    match install(handler) {
        Ok(()) => Ok(()),
        Err(e) => {
            // The handler is gone: the user data stays the caller's.
            if let Ok(r) = Arc::try_unwrap(ud) {
                r.disarm();
            }
            Err(e)
        }
    }
}

/// The `call` of `set_callback` for an iterator whose C callback takes
/// each item as a handle made by `to_c`, borrowed for the call, then NULL
/// with the ending status.
pub(crate) fn item_cb<T: 'static, H: 'static>(
    f: unsafe extern "C" fn(*mut c_void, *const H, natsio_status),
    to_c: fn(T) -> H,
) -> impl Fn(*mut c_void, Option<T>, natsio_status) + Send + 'static {
    move |ud, item, st| match item {
        Some(item) => {
            let h = to_c(item);
            // SAFETY: the application registered `f` for `ud`.
            unsafe { f(ud, &h, st) }
        }
        // SAFETY: as above.
        None => unsafe { f(ud, std::ptr::null(), st) },
    }
}

/// `_get_stats`.
pub(crate) unsafe fn stats(s: FeedStats, out: *mut natsio_iter_stats) -> Result<()> {
    let out = out_arg(out, "stats_out")?;
    *out = natsio_iter_stats {
        delivered: s.delivered,
        dropped: s.dropped,
        pending_items: s.pending_items,
        pending_bytes: s.pending_bytes,
        stalls: s.stalls,
    };
    Ok(())
}
