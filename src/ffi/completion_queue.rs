//! `natsio_completion_queue`: completed tokens reported as tags in a queue
//! that the application drains from its own event loop, instead of a
//! callback per completion on a library dispatcher thread.
//!
//! Why: a binding whose waiters live in another runtime (Go goroutines, the
//! Node event loop) pays twice for a per-completion callback: a hop from the
//! completing thread to the dispatcher thread, then the foreign runtime's
//! entry cost on that thread (cgo's C-to-Go callback, a threadsafe function
//! call). With a queue, the completing thread appends a tag and, only when
//! the queue turns non-empty, calls a notify function that wakes the
//! application's loop (an eventfd write, `uv_async_send`); one wake-up then
//! drains every completion that arrived meanwhile.

use std::collections::VecDeque;
use std::ffi::c_void;
use std::sync::{Arc, Mutex};

use super::status::natsio_status;
use super::{arg, guard, guard_value, null, out_arg, Released};
use crate::completion::lock;

/// Called on the thread that completed an operation (a library thread, or
/// the application's own when it registers a token that has completed
/// already, or cancels one) when the queue goes from empty to non-empty. It
/// must return quickly and must not call the library: write to an eventfd
/// or a pipe, `uv_async_send`, signal a condition variable.
///
/// Binding support (natsio_sys.h).
pub type natsio_completion_notify_cb = Option<unsafe extern "C" fn(user_data: *mut c_void)>;

struct QueueState {
    tags: VecDeque<u64>,
    /// The notify function has been called since the queue was last found
    /// empty by a poll: further completions need no wake-up.
    notified: bool,
    /// The queue was freed: late completions are dropped.
    closed: bool,
}

type Notify = (unsafe extern "C" fn(*mut c_void), Released);

pub(crate) struct QueueInner {
    state: Mutex<QueueState>,
    /// Held while notify runs, and taken (set to None) by free: once free
    /// returns, notify is never called again. A lock of its own so that
    /// the notify call (a syscall, typically) never holds up a poll.
    notify: Mutex<Option<Notify>>,
}

impl QueueInner {
    /// Appends a completed token's tag (on the completing thread).
    pub(crate) fn push(&self, tag: u64) {
        let wake = {
            let mut s = lock(&self.state);
            if s.closed {
                return; // nobody will read it
            }
            s.tags.push_back(tag);
            !std::mem::replace(&mut s.notified, true)
        };
        if wake {
            if let Some((notify, ud)) = &*lock(&self.notify) {
                // SAFETY: the application registered `notify` for `ud`.
                unsafe { notify(ud.ptr()) };
            }
        }
    }
}

/// A queue of completed tokens' tags. Created by
/// `natsio_completion_queue_new`, freed by `natsio_completion_queue_free`;
/// all functions are thread-safe.
///
/// Binding support (natsio_sys.h).
pub struct natsio_completion_queue {
    pub(crate) inner: Arc<QueueInner>,
}

/// Creates a completion queue. `notify` (required) is called with
/// `user_data` each time the queue goes from empty to non-empty, that is,
/// once after each `natsio_completion_queue_poll` that left it empty (see
/// `natsio_completion_notify_cb` for where it runs and what it may do).
/// `release`, if not NULL, is called with `user_data` when the queue is
/// freed. The caller frees `*queue_out` with `natsio_completion_queue_free`.
/// Errors: NATSIO_ERR_NULL_ARGUMENT.
///
/// Binding support (natsio_sys.h).
#[no_mangle]
pub unsafe extern "C" fn natsio_completion_queue_new(
    notify: natsio_completion_notify_cb,
    user_data: *mut c_void,
    release: super::natsio_release_cb,
    queue_out: *mut *mut natsio_completion_queue,
) -> natsio_status {
    guard(|| {
        let out = out_arg(queue_out, "queue_out")?;
        let Some(notify) = notify else {
            return Err(null("notify"));
        };
        let q = natsio_completion_queue {
            inner: Arc::new(QueueInner {
                state: Mutex::new(QueueState {
                    tags: VecDeque::new(),
                    notified: false,
                    closed: false,
                }),
                notify: Mutex::new(Some((notify, Released::new(user_data, release)))),
            }),
        };
        *out = Box::into_raw(Box::new(q));
        Ok(())
    })
}

/// Takes up to `max` tags of completed tokens, oldest first, into `tags`
/// and returns how many it took (0 for a NULL queue or array). Never
/// blocks. The notify function is called again only after a poll that
/// leaves the queue empty, so after a wake-up poll until it returns fewer
/// than `max`. Any thread may poll; the tags of one token are delivered
/// once.
///
/// Binding support (natsio_sys.h).
#[no_mangle]
pub unsafe extern "C" fn natsio_completion_queue_poll(
    queue: *mut natsio_completion_queue,
    tags: *mut u64,
    max: usize,
) -> usize {
    guard_value(0, || {
        let q = arg(queue, "queue")?;
        if tags.is_null() {
            return Err(null("tags"));
        }
        let mut s = lock(&q.inner.state);
        let n = max.min(s.tags.len());
        for (i, tag) in s.tags.drain(..n).enumerate() {
            // SAFETY: the caller gave room for `max` tags.
            *tags.add(i) = tag;
        }
        if s.tags.is_empty() {
            s.notified = false;
        }
        Ok(n)
    })
}

/// Frees a queue. Accepts NULL. Once it returns, `notify` is never called
/// again and `release` has been called; tokens registered on the queue and
/// still pending complete as usual, but their tags are dropped, as are
/// tags not yet polled.
///
/// Binding support (natsio_sys.h).
#[no_mangle]
pub unsafe extern "C" fn natsio_completion_queue_free(queue: *mut natsio_completion_queue) {
    super::guard_void(|| {
        if queue.is_null() {
            return;
        }
        let q = Box::from_raw(queue);
        {
            let mut s = lock(&q.inner.state);
            s.closed = true;
            s.tags.clear();
        }
        // Waits for a notify call in progress; release runs outside the lock.
        let notify = lock(&q.inner.notify).take();
        drop(notify);
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client_handle::ClientHandle;
    use crate::completion::{Completion, Outcome};
    use crate::ffi::token::{natsio_token, natsio_token_complete_to, natsio_token_free};
    use std::sync::atomic::{AtomicUsize, Ordering};

    unsafe extern "C" fn count(ud: *mut c_void) {
        (*(ud as *const AtomicUsize)).fetch_add(1, Ordering::SeqCst);
    }

    unsafe extern "C" fn count_release(ud: *mut c_void) {
        (*(ud as *const AtomicUsize)).fetch_add(100, Ordering::SeqCst);
    }

    fn token() -> (Arc<Completion>, *mut natsio_token) {
        let c = Completion::new();
        let t = Box::into_raw(Box::new(natsio_token::new(
            Arc::clone(&c),
            ClientHandle::default(),
        )));
        (c, t)
    }

    fn poll_all(q: *mut natsio_completion_queue) -> Vec<u64> {
        let mut out = [0u64; 8];
        let n = unsafe { natsio_completion_queue_poll(q, out.as_mut_ptr(), out.len()) };
        out[..n].to_vec()
    }

    #[test]
    fn tags_arrive_in_completion_order_with_one_wakeup_per_empty_queue() {
        let notified = AtomicUsize::new(0);
        let ud = &notified as *const AtomicUsize as *mut c_void;
        let mut q = std::ptr::null_mut();
        unsafe {
            assert_eq!(
                natsio_completion_queue_new(Some(count), ud, Some(count_release), &mut q),
                natsio_status::NATSIO_OK
            );
        }
        let toks: Vec<_> = (0..3).map(|_| token()).collect();
        for (i, (_, t)) in toks.iter().enumerate() {
            let s = unsafe { natsio_token_complete_to(*t, q, 10 + i as u64) };
            assert_eq!(s, natsio_status::NATSIO_OK);
        }
        // A second registration on the same token is refused.
        let s = unsafe { natsio_token_complete_to(toks[0].1, q, 99) };
        assert_eq!(s, natsio_status::NATSIO_ERR_ILLEGAL_STATE);
        assert!(poll_all(q).is_empty());
        toks[2].0.complete(Ok(Outcome::Done));
        toks[0].0.complete(Ok(Outcome::Done));
        // Two completions, one wake-up: the queue was not polled between.
        assert_eq!(notified.load(Ordering::SeqCst), 1);
        assert_eq!(poll_all(q), vec![12, 10]);
        // Polled empty: the next completion wakes again.
        toks[1].0.complete(Ok(Outcome::Done));
        assert_eq!(notified.load(Ordering::SeqCst), 2);
        assert_eq!(poll_all(q), vec![11]);
        // A token registered after it completed is queued at once.
        let (c, t) = token();
        c.complete(Ok(Outcome::Done));
        assert_eq!(
            unsafe { natsio_token_complete_to(t, q, 7) },
            natsio_status::NATSIO_OK
        );
        assert_eq!(poll_all(q), vec![7]);
        assert_eq!(notified.load(Ordering::SeqCst), 3);
        for (_, t) in toks {
            unsafe { natsio_token_free(t) };
        }
        unsafe { natsio_token_free(t) };
        unsafe { natsio_completion_queue_free(q) };
        assert_eq!(notified.load(Ordering::SeqCst), 103, "release once");
    }

    #[test]
    fn freed_tokens_and_freed_queues_deliver_nothing() {
        let notified = AtomicUsize::new(0);
        let ud = &notified as *const AtomicUsize as *mut c_void;
        let mut q = std::ptr::null_mut();
        unsafe { natsio_completion_queue_new(Some(count), ud, None, &mut q) };
        let (c1, t1) = token();
        let (c2, t2) = token();
        unsafe {
            natsio_token_complete_to(t1, q, 1);
            natsio_token_complete_to(t2, q, 2);
            natsio_token_free(t1);
        }
        c1.complete(Ok(Outcome::Done));
        assert!(poll_all(q).is_empty());
        assert_eq!(notified.load(Ordering::SeqCst), 0);
        unsafe { natsio_completion_queue_free(q) };
        c2.complete(Ok(Outcome::Done)); // after the free: dropped, no notify
        assert_eq!(notified.load(Ordering::SeqCst), 0);
        unsafe { natsio_token_free(t2) };
    }

    #[test]
    fn null_arguments_are_refused() {
        let mut q = std::ptr::null_mut();
        unsafe {
            assert_eq!(
                natsio_completion_queue_new(None, std::ptr::null_mut(), None, &mut q),
                natsio_status::NATSIO_ERR_NULL_ARGUMENT
            );
            assert_eq!(
                natsio_completion_queue_new(
                    Some(count),
                    std::ptr::null_mut(),
                    None,
                    std::ptr::null_mut()
                ),
                natsio_status::NATSIO_ERR_NULL_ARGUMENT
            );
            let mut tags = [0u64; 1];
            assert_eq!(
                natsio_completion_queue_poll(std::ptr::null_mut(), tags.as_mut_ptr(), 1),
                0
            );
            let (_, t) = token();
            assert_eq!(
                natsio_token_complete_to(t, std::ptr::null(), 1),
                natsio_status::NATSIO_ERR_NULL_ARGUMENT
            );
            natsio_token_free(t);
            natsio_completion_queue_free(std::ptr::null_mut());
        }
    }
}
