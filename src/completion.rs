//! A one-shot completion: the result of an asynchronous operation that can be
//! waited on from any thread, awaited as a future, polled, cancelled, or
//! observed by a callback.
//!
//! The result is type-erased (`Outcome::Value`), so this primitive names no
//! higher layer: a JetStream ack, a KV entry or a stream info travel through
//! it as `Arc<dyn Any>` and are downcast where they are read.

use std::any::Any;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};

use crate::error::{Error, ErrorKind, Result};
use crate::message::Message;

/// What a successful operation produced.
#[derive(Clone)]
pub enum Outcome {
    /// Done, with nothing to hand back.
    Done,
    /// A message (a request's reply, an iterator's next message).
    Msg(Message),
    /// Any other result, downcast by whoever reads it (`Outcome::value`).
    Value(Arc<dyn Any + Send + Sync>),
    /// An iterator has ended: there is no next item.
    End,
}

impl std::fmt::Debug for Outcome {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Outcome::Done => f.write_str("Done"),
            Outcome::Msg(m) => f.debug_tuple("Msg").field(&m.subject()).finish(),
            Outcome::Value(_) => f.write_str("Value(..)"),
            Outcome::End => f.write_str("End"),
        }
    }
}

impl Outcome {
    /// Wraps any result value.
    pub fn value<T: Any + Send + Sync>(v: T) -> Outcome {
        Outcome::Value(Arc::new(v))
    }

    /// The value of type `T`, if this outcome holds one.
    pub fn downcast<T: Any + Send + Sync>(&self) -> Option<Arc<T>> {
        match self {
            Outcome::Value(v) => Arc::clone(v).downcast::<T>().ok(),
            _ => None,
        }
    }
}

type Hook = Box<dyn FnOnce() + Send>;

/// Hooks to run once, in the order added. Nearly every operation has at
/// most one of each kind, kept inline: a `Vec` would allocate for it.
#[derive(Default)]
enum Hooks {
    #[default]
    None,
    One(Hook),
    Many(Vec<Hook>),
}

impl Hooks {
    fn push(&mut self, h: Hook) {
        *self = match std::mem::take(self) {
            Hooks::None => Hooks::One(h),
            Hooks::One(first) => Hooks::Many(vec![first, h]),
            Hooks::Many(mut v) => {
                v.push(h);
                Hooks::Many(v)
            }
        };
    }

    fn run(self) {
        match self {
            Hooks::None => {}
            Hooks::One(h) => h(),
            Hooks::Many(v) => v.into_iter().for_each(|h| h()),
        }
    }
}

#[derive(Default)]
struct State {
    result: Option<Result<Outcome>>,
    on_complete: Hooks,
    /// What a cancel undoes, in the order added.
    on_cancel: Hooks,
    /// Asked before a cancel: false refuses it (the result is on its way).
    cancel_guard: Option<Arc<dyn Fn() -> bool + Send + Sync>>,
    /// Threads blocked in `wait`: the condvar is only notified when there
    /// are some (a futex notify is a syscall even with no waiter).
    waiting: usize,
    /// Futures awaiting the result.
    wakers: Vec<Waker>,
}

#[derive(Default)]
pub struct Completion {
    state: Mutex<State>,
    cv: Condvar,
    /// Set (after `state.result`) once completed: a lock-free `is_done`.
    done: AtomicBool,
}

impl std::fmt::Debug for Completion {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Completion")
            .field("result", &lock(&self.state).result)
            .finish()
    }
}

pub(crate) fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    // A panic while holding a lock must not turn every later call into one.
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Completion {
    pub fn new() -> Arc<Self> {
        Arc::new(Self::default())
    }

    pub fn completed(r: Result<Outcome>) -> Arc<Self> {
        let c = Self::new();
        c.complete(r);
        c
    }

    /// Sets the result once; later calls are ignored. Returns whether this
    /// call was the one that completed it.
    pub fn complete(&self, r: Result<Outcome>) -> bool {
        let (hooks, wakers) = {
            let mut s = lock(&self.state);
            if s.result.is_some() {
                return false;
            }
            s.result = Some(r);
            self.done.store(true, Ordering::Release);
            s.on_cancel = Hooks::None;
            s.cancel_guard = None;
            if s.waiting > 0 {
                self.cv.notify_all();
            }
            (
                std::mem::take(&mut s.on_complete),
                std::mem::take(&mut s.wakers),
            )
        };
        for w in wakers {
            w.wake();
        }
        hooks.run();
        true
    }

    pub fn is_done(&self) -> bool {
        self.done.load(Ordering::Acquire)
    }

    pub fn result(&self) -> Option<Result<Outcome>> {
        lock(&self.state).result.clone()
    }

    /// Waits for the result; `None` when `timeout` passed first.
    pub fn wait(&self, timeout: Option<Duration>) -> Option<Result<Outcome>> {
        let deadline = timeout.map(crate::clock::deadline_in);
        // The answer is usually near: see it without a wake-up if it comes
        // within the spin.
        crate::spin::spin_until(deadline, || self.is_done());
        let mut s = lock(&self.state);
        if let Some(r) = &s.result {
            return Some(r.clone());
        }
        s.waiting += 1;
        let r = loop {
            if let Some(r) = &s.result {
                break Some(r.clone());
            }
            match deadline {
                None => s = self.cv.wait(s).unwrap_or_else(|p| p.into_inner()),
                Some(d) => {
                    let now = Instant::now();
                    if now >= d {
                        break None;
                    }
                    s = self
                        .cv
                        .wait_timeout(s, d - now)
                        .unwrap_or_else(|p| p.into_inner())
                        .0;
                }
            }
        };
        s.waiting -= 1;
        r
    }

    /// A future of the result. Dropping it does not cancel the operation.
    pub fn wait_async(self: &Arc<Self>) -> CompletionFuture {
        CompletionFuture {
            c: Arc::clone(self),
        }
    }

    /// A completion with this one's result, or a timeout error (`what`
    /// timed out) once `timeout` passes first; `None`: no bound, this one.
    /// The operation itself goes on (a late PONG still completes this one);
    /// only its waiter stops waiting.
    pub fn within(self: &Arc<Self>, timeout: Option<Duration>, what: &'static str) -> Arc<Self> {
        let Some(timeout) = timeout else {
            return Arc::clone(self);
        };
        if self.is_done() {
            return Arc::clone(self);
        }
        let bounded = Completion::new();
        let (inner, outer) = (Arc::clone(self), Arc::clone(&bounded));
        crate::runtime::handle().spawn(async move {
            let r = match tokio::time::timeout(timeout, inner.wait_async()).await {
                Ok(r) => r,
                Err(_) => Err(Error::timeout(what)),
            };
            outer.complete(r);
        });
        bounded
    }

    /// Runs `f` once the result is set: at once (on this thread) if it is
    /// already, else on the completing thread.
    pub fn on_complete(&self, f: impl FnOnce() + Send + 'static) {
        let mut s = lock(&self.state);
        if s.result.is_some() {
            drop(s);
            f();
        } else {
            s.on_complete.push(Box::new(f));
        }
    }

    /// Adds what to undo if the operation is cancelled before it
    /// completes; the hooks run on the cancelling thread, before `cancel`
    /// returns, in the order added.
    pub fn add_cancel_hook(&self, f: impl FnOnce() + Send + 'static) {
        let mut s = lock(&self.state);
        if s.result.is_none() {
            s.on_cancel.push(Box::new(f));
        }
    }

    /// Lets `guard` refuse a cancel (by returning false) when the result
    /// can no longer be withdrawn; it may be asked more than once.
    pub fn set_cancel_guard(&self, guard: impl Fn() -> bool + Send + Sync + 'static) {
        let mut s = lock(&self.state);
        if s.result.is_none() {
            s.cancel_guard = Some(Arc::new(guard));
        }
    }

    /// Completes with `Cancelled` if still pending; returns whether it did.
    pub fn cancel(&self) -> bool {
        let guard = lock(&self.state).cancel_guard.clone();
        if guard.is_some_and(|g| !g()) {
            return false;
        }
        let hooks = std::mem::take(&mut lock(&self.state).on_cancel);
        let done = self.complete(Err(Error::new(ErrorKind::Cancelled, "operation cancelled")));
        if done {
            hooks.run();
        }
        done
    }
}

/// Awaits a completion's result (`Completion::wait_async`).
pub struct CompletionFuture {
    c: Arc<Completion>,
}

impl CompletionFuture {
    pub fn completion(&self) -> &Arc<Completion> {
        &self.c
    }
}

impl Future for CompletionFuture {
    type Output = Result<Outcome>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let mut s = lock(&self.c.state);
        if let Some(r) = &s.result {
            return Poll::Ready(r.clone());
        }
        if !s.wakers.iter().any(|w| w.will_wake(cx.waker())) {
            s.wakers.push(cx.waker().clone());
        }
        Poll::Pending
    }
}
