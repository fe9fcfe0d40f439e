//! `natsio_token`: the completion of an asynchronous operation. It can be
//! waited on with a timeout, polled, given a completion callback, cancelled,
//! and asked for its result. C++ futures, Go channels and Node promises are
//! built on it.

use std::ffi::c_void;
use std::sync::{Arc, Condvar, Mutex, Weak};
use std::thread::ThreadId;

use super::msg::natsio_msg;
use super::status::natsio_status;
use super::{arg, guard, guard_value, guard_void, ms_timeout, out_arg, write_box, Released};
use crate::client::ClientInner;
use crate::completion::{lock, Completion, Outcome};
use crate::error::{Error, ErrorKind};

/// Called once when the operation completes, on a library dispatcher
/// thread. `token` is the token it was registered on; it may be freed from
/// inside the callback.
pub type natsio_token_cb =
    Option<unsafe extern "C" fn(user_data: *mut c_void, token: *mut natsio_token)>;

#[derive(Default)]
struct CbState {
    registered: bool,
    pending: Option<(
        unsafe extern "C" fn(*mut c_void, *mut natsio_token),
        Released,
    )>,
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
    client: Weak<ClientInner>,
    /// Created by the first `natsio_token_on_complete` (most tokens are
    /// only waited on: no allocation for them).
    cb: std::sync::OnceLock<Arc<CbCell>>,
}

impl natsio_token {
    pub(crate) fn new(completion: Arc<Completion>, client: Weak<ClientInner>) -> Self {
        natsio_token {
            completion,
            client,
            cb: std::sync::OnceLock::new(),
        }
    }
}

fn run_callback(cell: &CbCell, token: usize) {
    let (f, ud) = {
        let mut s = lock(&cell.state);
        let Some(p) = s.pending.take() else {
            return; // the token was freed first
        };
        s.running_on = Some(std::thread::current().id());
        p
    };
    // SAFETY: the token is alive: freeing it waits for a running callback.
    unsafe { f(ud.ptr(), token as *mut natsio_token) };
    drop(ud);
    lock(&cell.state).running_on = None;
    cell.cv.notify_all();
}

/// Waits up to `timeout_ms` (negative: forever) for the operation to
/// complete. Returns NATSIO_OK once it has completed (whatever its outcome:
/// see `natsio_token_status`), NATSIO_ERR_TIMEOUT if it is still pending.
/// Blocks the calling thread. Errors: NATSIO_ERR_NULL_ARGUMENT,
/// NATSIO_ERR_ILLEGAL_STATE on a library runtime thread.
#[no_mangle]
pub unsafe extern "C" fn natsio_token_wait(
    token: *const natsio_token,
    timeout_ms: i64,
) -> natsio_status {
    guard(|| {
        let t = arg(token, "token")?;
        crate::runtime::ensure_may_block()?;
        match t.completion.wait(ms_timeout(timeout_ms)) {
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

/// The operation's outcome: NATSIO_PENDING while it runs, then NATSIO_OK
/// or its error status (with the detail in `natsio_last_error`).
#[no_mangle]
pub unsafe extern "C" fn natsio_token_status(token: *const natsio_token) -> natsio_status {
    let mut pending = false;
    let s = guard(|| match arg(token, "token")?.completion.result() {
        None => {
            pending = true;
            Ok(())
        }
        Some(r) => r.map(|_| ()),
    });
    if pending {
        natsio_status::NATSIO_PENDING
    } else {
        s
    }
}

/// The message an operation produced (a request's reply), as a new owned
/// message freed with `natsio_msg_free`. Returns NATSIO_PENDING while the
/// operation runs, its error status if it failed, NATSIO_ERR_ILLEGAL_STATE
/// if it produces no message.
#[no_mangle]
pub unsafe extern "C" fn natsio_token_msg(
    token: *const natsio_token,
    msg_out: *mut *mut natsio_msg,
) -> natsio_status {
    let mut pending = false;
    let s = guard(|| {
        let t = arg(token, "token")?;
        let out = out_arg(msg_out, "msg_out")?;
        match t.completion.result() {
            None => {
                pending = true;
                Ok(())
            }
            Some(Err(e)) => Err(e),
            Some(Ok(Outcome::Msg(m))) => {
                write_box(out, natsio_msg::new(m, t.client.clone()));
                Ok(())
            }
            Some(Ok(Outcome::Done | Outcome::PubAck(_))) => Err(Error::new(
                ErrorKind::IllegalState,
                "this operation produces no message",
            )),
        }
    });
    if pending {
        natsio_status::NATSIO_PENDING
    } else {
        s
    }
}

/// The acknowledgement a JetStream asynchronous publish produced, as a new
/// `natsio_pub_ack` freed with `natsio_pub_ack_free`. Returns
/// NATSIO_PENDING while the publish awaits its ack, the publish's error
/// status if it failed, NATSIO_ERR_ILLEGAL_STATE for a token of another
/// kind of operation.
#[no_mangle]
pub unsafe extern "C" fn natsio_token_pub_ack(
    token: *const natsio_token,
    ack_out: *mut *mut super::js::natsio_pub_ack,
) -> natsio_status {
    let mut pending = false;
    let s = guard(|| {
        let t = arg(token, "token")?;
        let out = out_arg(ack_out, "ack_out")?;
        match t.completion.result() {
            None => {
                pending = true;
                Ok(())
            }
            Some(Err(e)) => Err(e),
            Some(Ok(Outcome::PubAck(a))) => {
                write_box(out, super::js::natsio_pub_ack::new(a));
                Ok(())
            }
            Some(Ok(_)) => Err(Error::new(
                ErrorKind::IllegalState,
                "this operation produces no publish ack",
            )),
        }
    });
    if pending {
        natsio_status::NATSIO_PENDING
    } else {
        s
    }
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
        let cell = Arc::clone(t.cb.get_or_init(Arc::default));
        {
            let mut s = lock(&cell.state);
            if s.registered {
                return Err(Error::new(
                    ErrorKind::IllegalState,
                    "a completion callback is already registered",
                ));
            }
            s.registered = true;
            s.pending = Some((f, Released::new(user_data, release)));
        }
        let client = t.client.clone();
        let token_addr = token as usize;
        t.completion.on_complete(move || {
            let job = Box::new(move || run_callback(&cell, token_addr));
            match client.upgrade() {
                Some(c) => c.post_event(job),
                None => {
                    let _ = std::thread::Builder::new()
                        .name("natsio-token-cb".into())
                        .spawn(job);
                }
            }
        });
        Ok(())
    })
}

/// Cancels a pending operation: it completes with NATSIO_ERR_CANCELLED (a
/// registered callback still runs). Returns NATSIO_ERR_ILLEGAL_STATE if it
/// had already completed.
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

/// Frees a token. Accepts NULL. A pending operation goes on, but its
/// callback will not run (its user data is released); if the callback is
/// running on another thread, this waits for it to return.
#[no_mangle]
pub unsafe extern "C" fn natsio_token_free(token: *mut natsio_token) {
    guard_void(|| {
        if token.is_null() {
            return;
        }
        let t = Box::from_raw(token);
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
