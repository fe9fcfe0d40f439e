//! `natsio_token`: the completion of an asynchronous operation. It can be
//! waited on with a timeout, polled, given a completion callback, cancelled,
//! and asked for its typed result. C++ futures, Go channels and Node
//! promises are built on it.

use std::ffi::{c_char, c_void};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::ThreadId;

use super::completion_queue::{natsio_completion_queue, QueueInner};
use super::status::natsio_status;
use super::{arg, guard, guard_value, guard_void, timeout_arg, Released};
use crate::client_handle::ClientHandle;
use crate::completion::{lock, Completion, Outcome};
use crate::error::{Error, ErrorKind, Result};

/// Called once when the operation completes, on a library dispatcher
/// thread. `token` is the token it was registered on; it may be freed from
/// inside the callback.
pub type natsio_token_cb =
    Option<unsafe extern "C" fn(user_data: *mut c_void, token: *mut natsio_token)>;

/// What a token's completion is reported to (one registration per token).
enum Notice {
    /// `natsio_token_on_complete`: a callback on a dispatcher thread.
    Callback(
        unsafe extern "C" fn(*mut c_void, *mut natsio_token),
        Released,
    ),
    /// `natsio_token_complete_to`: a tag in a completion queue.
    Queue(Arc<QueueInner>, u64),
}

#[derive(Default)]
struct CbState {
    registered: bool,
    pending: Option<Notice>,
    running_on: Option<ThreadId>,
}

#[derive(Default)]
struct CbCell {
    state: Mutex<CbState>,
    cv: Condvar,
}

/// An asynchronous operation's completion. Owned by the caller and freed
/// with `natsio_token_free`; all functions are thread-safe.
pub struct natsio_token {
    completion: Arc<Completion>,
    pub(crate) client: ClientHandle,
    /// Created by the first `natsio_token_on_complete` or
    /// `natsio_token_complete_to` (most tokens are only waited on: no
    /// allocation for them).
    cb: std::sync::OnceLock<Arc<CbCell>>,
    /// An iterator's `_next_async`: freeing it before it completed gives
    /// the item back to the iterator.
    cancel_on_free: bool,
}

impl natsio_token {
    pub(crate) fn new(completion: Arc<Completion>, client: ClientHandle) -> Self {
        natsio_token {
            completion,
            client,
            cb: std::sync::OnceLock::new(),
            cancel_on_free: false,
        }
    }

    /// The token of an iterator's `_next_async`.
    pub(crate) fn for_next(completion: Arc<Completion>, client: ClientHandle) -> Self {
        natsio_token {
            cancel_on_free: true,
            ..natsio_token::new(completion, client)
        }
    }
}

fn run_callback(cell: &CbCell, token: usize) {
    let (f, ud) = {
        let mut s = lock(&cell.state);
        let Some(Notice::Callback(f, ud)) = s.pending.take() else {
            return; // the token was freed first
        };
        s.running_on = Some(std::thread::current().id());
        (f, ud)
    };
    // SAFETY: the token is alive: freeing it waits for a running callback.
    unsafe { f(ud.ptr(), token as *mut natsio_token) };
    drop(ud);
    lock(&cell.state).running_on = None;
    cell.cv.notify_all();
}

/// Waits up to `timeout_ms` for the operation to complete
/// (NATSIO_TIMEOUT_DEFAULT and NATSIO_WAIT_FOREVER: as long as it takes;
/// NATSIO_NO_WAIT: only checks). Returns NATSIO_OK once it has completed,
/// whatever its outcome (see `natsio_token_status`), NATSIO_ERR_TIMEOUT
/// while it is still pending. Blocks the calling thread. Errors:
/// NATSIO_ERR_NULL_ARGUMENT, NATSIO_ERR_INVALID_ARGUMENT (timeout),
/// NATSIO_ERR_ILLEGAL_STATE on a library runtime thread.
#[no_mangle]
pub unsafe extern "C" fn natsio_token_wait(
    token: *const natsio_token,
    timeout_ms: i64,
) -> natsio_status {
    guard(|| {
        let t = arg(token, "token")?;
        let timeout = timeout_arg(timeout_ms, None, true)?;
        crate::runtime::ensure_may_block()?;
        // What it waits for may be a deferred publish (`defer_send`).
        t.client.send_deferred();
        match t.completion.wait(timeout) {
            Some(_) => Ok(()),
            None => Err(Error::new(ErrorKind::Timeout, "operation still pending")),
        }
    })
}

/// True once the operation has completed (false for NULL). Never blocks.
#[no_mangle]
pub unsafe extern "C" fn natsio_token_is_done(token: *const natsio_token) -> bool {
    guard_value(false, || Ok(arg(token, "token")?.completion.is_done()))
}

/// Reads a token's outcome with `read`: NATSIO_PENDING while the operation
/// runs, NATSIO_DONE for an iterator's end, its error status if it failed.
pub(crate) unsafe fn with_outcome(
    token: *const natsio_token,
    read: impl FnOnce(&natsio_token, Outcome) -> Result<()>,
) -> natsio_status {
    let mut special = None;
    let s = guard(|| {
        let t = arg(token, "token")?;
        match t.completion.result() {
            None => {
                special = Some(natsio_status::NATSIO_PENDING);
                Ok(())
            }
            Some(Err(e)) => Err(e),
            Some(Ok(Outcome::End)) => {
                special = Some(natsio_status::NATSIO_DONE);
                Ok(())
            }
            Some(Ok(o)) => read(t, o),
        }
    });
    special.unwrap_or(s)
}

/// The operation's outcome: NATSIO_PENDING while it runs, then NATSIO_OK,
/// NATSIO_DONE (an iterator's `_next_async` found the iteration ended), or
/// its error status (with the detail in `natsio_last_error`).
#[no_mangle]
pub unsafe extern "C" fn natsio_token_status(token: *const natsio_token) -> natsio_status {
    with_outcome(token, |_, _| Ok(()))
}

pub(crate) fn wrong_kind(what: &str) -> Error {
    Error::new(
        ErrorKind::IllegalState,
        format!("this token's operation produces no {what}"),
    )
}

/// Reads a token's result value of type `T` into `out` through `convert`.
/// The returns are those of `natsio_token_status`, plus
/// NATSIO_ERR_ILLEGAL_STATE when the operation produces no `T`.
pub(crate) unsafe fn token_value<T, O>(
    token: *const natsio_token,
    out: *mut O,
    what: &str,
    convert: impl FnOnce(&natsio_token, &T) -> Result<O>,
) -> natsio_status
where
    T: std::any::Any + Send + Sync,
{
    token_shared_value(token, out, what, |t, v: Arc<T>| convert(t, &v))
}

/// `token_value` handing `convert` the shared result itself, for a C
/// handle that can keep it instead of a copy.
pub(crate) unsafe fn token_shared_value<T, O>(
    token: *const natsio_token,
    out: *mut O,
    what: &str,
    convert: impl FnOnce(&natsio_token, Arc<T>) -> Result<O>,
) -> natsio_status
where
    T: std::any::Any + Send + Sync,
{
    if out.is_null() {
        return guard(|| Err(super::null(what)));
    }
    with_outcome(token, |t, o| {
        let v = o.downcast::<T>().ok_or_else(|| wrong_kind(what))?;
        *out = convert(t, v)?;
        Ok(())
    })
}

/// A text result (JSON of an info, account info) as a new string freed
/// with `natsio_string_free`. Returns as `natsio_token_msg`.
#[no_mangle]
pub unsafe extern "C" fn natsio_token_string(
    token: *const natsio_token,
    string_out: *mut *mut c_char,
) -> natsio_status {
    token_value(token, string_out, "string_out", |_, s: &String| {
        std::ffi::CString::new(s.as_str())
            .map(std::ffi::CString::into_raw)
            .map_err(|_| Error::new(ErrorKind::Internal, "string contains NUL"))
    })
}

/// A number result (a revision, a sequence, a count purged). Returns as
/// `natsio_token_msg`.
#[no_mangle]
pub unsafe extern "C" fn natsio_token_u64(
    token: *const natsio_token,
    value_out: *mut u64,
) -> natsio_status {
    token_value(token, value_out, "value_out", |_, v: &u64| Ok(*v))
}

/// Cancels a pending operation: it completes with NATSIO_ERR_CANCELLED (a
/// registered callback still runs). An iterator's `_next_async` cancelled
/// before an item reached it leaves the items in the iterator. Returns
/// NATSIO_ERR_ILLEGAL_STATE if it had already completed (or an item is
/// already on its way to it).
#[no_mangle]
pub unsafe extern "C" fn natsio_token_cancel(token: *mut natsio_token) -> natsio_status {
    guard(|| {
        let t = arg(token, "token")?;
        if t.completion.cancel() {
            Ok(())
        } else {
            Err(Error::new(
                ErrorKind::IllegalState,
                "the operation has already completed",
            ))
        }
    })
}

/// Registers `cb` to run once when the operation completes (at once, on a
/// dispatcher thread, if it already has). `release`, if not NULL, is called
/// with `user_data` after the callback ran or when the token is freed before
/// it could. One callback per token: a second registration fails with
/// NATSIO_ERR_ILLEGAL_STATE. If this function fails, `release` is not
/// called. Errors: NATSIO_ERR_NULL_ARGUMENT.
#[no_mangle]
pub unsafe extern "C" fn natsio_token_on_complete(
    token: *mut natsio_token,
    cb: natsio_token_cb,
    user_data: *mut c_void,
    release: super::natsio_release_cb,
) -> natsio_status {
    guard(|| {
        let t = arg(token, "token")?;
        let Some(f) = cb else {
            return Err(super::null("cb"));
        };
        register(
            t,
            token,
            Notice::Callback(f, Released::new(user_data, release)),
        )
    })
}

/// Records `notice` as the token's one registration and arranges for it
/// to be given on completion.
fn register(t: &natsio_token, token: *mut natsio_token, notice: Notice) -> Result<()> {
    let cell = Arc::clone(t.cb.get_or_init(Arc::default));
    {
        let mut s = lock(&cell.state);
        if s.registered {
            if let Notice::Callback(_, user_data) = notice {
                user_data.disarm(); // a failed registration does not release
            }
            return Err(Error::new(
                ErrorKind::IllegalState,
                "a completion callback or queue is already registered",
            ));
        }
        s.registered = true;
        s.pending = Some(notice);
    }
    let client = t.client.clone();
    let token_addr = token as usize;
    t.completion.on_complete(move || {
        let queued = {
            let mut s = lock(&cell.state);
            match s.pending.take() {
                Some(Notice::Queue(q, tag)) => Some((q, tag)),
                other => {
                    s.pending = other;
                    None
                }
            }
        };
        if let Some((q, tag)) = queued {
            // On the completing thread: the queue's notify is made for it.
            q.push(tag);
            return;
        }
        let job = Box::new(move || run_callback(&cell, token_addr));
        client.post_completion(job);
    });
    Ok(())
}

/// Registers the token with a completion queue: once the operation
/// completes (at once if it has), `tag` is appended to `queue`, on the
/// completing thread, and the queue's notify function is called if the
/// queue was empty. The token stays the caller's: read its result and free
/// it after polling its tag. If the token is freed first, its tag is never
/// delivered. One registration per token, this or
/// `natsio_token_on_complete`: a second fails with
/// NATSIO_ERR_ILLEGAL_STATE. The queue may be freed before the token
/// completes (the tag is then dropped). Errors: NATSIO_ERR_NULL_ARGUMENT.
///
/// Binding support (natsio_sys.h).
#[no_mangle]
pub unsafe extern "C" fn natsio_token_complete_to(
    token: *mut natsio_token,
    queue: *const natsio_completion_queue,
    tag: u64,
) -> natsio_status {
    guard(|| {
        let t = arg(token, "token")?;
        let q = arg(queue, "queue")?;
        register(t, token, Notice::Queue(Arc::clone(&q.inner), tag))
    })
}

/// Frees a token. Accepts NULL. A pending operation goes on (except an
/// iterator's `_next_async`, which is withdrawn so that no item is lost),
/// but its callback will not run (its user data is released); if the
/// callback is running on another thread, this waits for it to return.
#[no_mangle]
pub unsafe extern "C" fn natsio_token_free(token: *mut natsio_token) {
    guard_void(|| {
        if token.is_null() {
            return;
        }
        let t = Box::from_raw(token);
        if t.cancel_on_free {
            t.completion.cancel();
        }
        if let Some(cell) = t.cb.get() {
            let unrun = {
                let mut s = lock(&cell.state);
                let unrun = s.pending.take();
                let me = std::thread::current().id();
                while s.running_on.is_some_and(|id| id != me) {
                    s = cell.cv.wait(s).unwrap_or_else(|p| p.into_inner());
                }
                unrun
            };
            drop(unrun);
        }
        drop(t);
    })
}
