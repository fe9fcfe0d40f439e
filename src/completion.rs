//! A one-shot completion: the result of an asynchronous operation that can be
//! waited on from any thread, polled, cancelled, or observed by a callback.

use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use crate::error::{Error, ErrorKind, Result};
use crate::message::Message;

/// What a successful operation produced.
#[derive(Debug, Clone)]
pub enum Outcome {
    Done,
    Msg(Message),
    /// A JetStream publish's acknowledgement.
    PubAck(std::sync::Arc<crate::jetstream::PubAck>),
}

type Hook = Box<dyn FnOnce() + Send>;

#[derive(Default)]
struct State {
    result: Option<Result<Outcome>>,
    on_complete: Vec<Hook>,
    on_cancel: Option<Hook>,
    /// Threads blocked in `wait`: the condvar is only notified when there
    /// are some (a futex notify is a syscall even with no waiter).
    waiting: usize,
}

#[derive(Default)]
pub struct Completion {
    state: Mutex<State>,
    cv: Condvar,
    /// Set (after `state.result`) once completed: a lock-free `is_done`.
    done: std::sync::atomic::AtomicBool,
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
        let hooks = {
            let mut s = lock(&self.state);
            if s.result.is_some() {
                return false;
            }
            s.result = Some(r);
            self.done.store(true, std::sync::atomic::Ordering::Release);
            s.on_cancel = None;
            let hooks = std::mem::take(&mut s.on_complete);
            if s.waiting > 0 {
                self.cv.notify_all();
            }
            hooks
        };
        for h in hooks {
            h();
        }
        true
    }

    pub fn is_done(&self) -> bool {
        self.done.load(std::sync::atomic::Ordering::Acquire)
    }

    pub fn result(&self) -> Option<Result<Outcome>> {
        lock(&self.state).result.clone()
    }

    /// Waits for the result; `None` when `timeout` passed first.
    pub fn wait(&self, timeout: Option<Duration>) -> Option<Result<Outcome>> {
        let deadline = timeout.map(|t| Instant::now() + t);
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

    /// What to undo if the operation is cancelled before it completes.
    pub fn set_cancel_hook(&self, f: impl FnOnce() + Send + 'static) {
        let mut s = lock(&self.state);
        if s.result.is_none() {
            s.on_cancel = Some(Box::new(f));
        }
    }

    /// Completes with `Cancelled` if still pending; returns whether it did.
    pub fn cancel(&self) -> bool {
        let hook = lock(&self.state).on_cancel.take();
        let done = self.complete(Err(Error::new(ErrorKind::Cancelled, "operation cancelled")));
        if done {
            if let Some(h) = hook {
                h();
            }
        }
        done
    }
}
