//! Subscriptions: a bounded delivery queue fed by the connection's read path,
//! consumed either by `next_msg` (iterator mode) or by a handler running on a
//! dedicated dispatcher thread (callback mode).

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::client::ClientInner;
use crate::completion::{lock, Completion, Outcome};
use crate::dispatch;
use crate::error::{Error, ErrorKind, Result};
use crate::message::Message;
use crate::options::PendingPolicy;

/// Per-subscription overrides of the client's pending limits.
#[derive(Debug, Clone, Copy, Default)]
pub struct SubOptions {
    /// `None`: the client's default. `Some(n)` with n <= 0: unlimited.
    pub pending_msgs_limit: Option<i64>,
    pub pending_bytes_limit: Option<i64>,
    pub policy: PendingPolicy,
}

/// Live counters of a subscription.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SubStats {
    pub delivered: u64,
    pub dropped: u64,
    pub pending_msgs: u64,
    pub pending_bytes: u64,
}

pub type Handler = Box<dyn FnMut(Message) + Send>;

#[derive(Default)]
struct State {
    queue: VecDeque<Message>,
    pending_bytes: usize,
    /// Messages the server sent us (auto-unsubscribe counts these).
    received: u64,
    max: Option<u64>,
    /// No more messages will arrive; close once the queue is empty.
    finished: bool,
    closed: Option<Error>,
    /// Closed by finishing (drain or auto-unsubscribe), not cut short.
    closed_gracefully: bool,
    in_callback: bool,
    /// Threads blocked on `cv`; notifying costs a syscall, so only when > 0.
    waiting: u32,
    /// A wake-up is on its way to a waiter; don't send another per message.
    wakeup_sent: bool,
    drain_waiters: Vec<Arc<Completion>>,
    last_slow_report: Option<Instant>,
}

/// What happened to a message offered to a subscription.
pub(crate) enum Pushed {
    Queued,
    /// This many messages were dropped (the new one or old ones).
    Dropped(u64),
    /// Queued over the limit: the reader must wait for room (BLOCK).
    Blocked,
    /// The subscription failed (ERROR policy).
    Failed,
    /// Closed or finished: ignored.
    Ignored,
}

pub(crate) struct SubShared {
    pub sid: u64,
    pub subject: String,
    pub queue_group: Option<String>,
    max_msgs: usize,
    max_bytes: usize,
    pub policy: PendingPolicy,
    state: Mutex<State>,
    cv: Condvar,
    /// Wakes a reader paused by the BLOCK policy.
    pub(crate) space: tokio::sync::Notify,
    reader_waiting: AtomicBool,
    delivered: AtomicU64,
    dropped: AtomicU64,
    callback_mode: AtomicBool,
    dispatcher: Mutex<Option<JoinHandle<()>>>,
    dispatcher_id: Mutex<Option<std::thread::ThreadId>>,
}

fn limit(v: i64) -> usize {
    if v <= 0 {
        usize::MAX
    } else {
        v as usize
    }
}

impl SubShared {
    pub(crate) fn new(
        sid: u64,
        subject: String,
        queue_group: Option<String>,
        msgs: i64,
        bytes: i64,
        policy: PendingPolicy,
    ) -> Self {
        SubShared {
            sid,
            subject,
            queue_group,
            max_msgs: limit(msgs),
            max_bytes: limit(bytes),
            policy,
            state: Mutex::new(State::default()),
            cv: Condvar::new(),
            space: tokio::sync::Notify::new(),
            reader_waiting: AtomicBool::new(false),
            delivered: AtomicU64::new(0),
            dropped: AtomicU64::new(0),
            callback_mode: AtomicBool::new(false),
            dispatcher: Mutex::new(None),
            dispatcher_id: Mutex::new(None),
        }
    }

    fn over(&self, s: &State, extra_msgs: usize, extra_bytes: usize) -> bool {
        s.queue.len() + extra_msgs > self.max_msgs || s.pending_bytes + extra_bytes > self.max_bytes
    }

    /// Offers a message from the read path. Never blocks.
    pub(crate) fn push(&self, msg: Message) -> (Pushed, bool) {
        let size = msg.pending_size();
        let mut s = lock(&self.state);
        if s.closed.is_some() || s.finished {
            return (Pushed::Ignored, false);
        }
        s.received += 1;
        let reached_max = s.max.is_some_and(|m| s.received >= m);
        if reached_max {
            s.finished = true;
        }
        let outcome = if !self.over(&s, 1, size) {
            s.pending_bytes += size;
            s.queue.push_back(msg);
            Pushed::Queued
        } else {
            match self.policy {
                PendingPolicy::DropNew => Pushed::Dropped(1),
                PendingPolicy::DropOld => {
                    if size > self.max_bytes {
                        Pushed::Dropped(1)
                    } else {
                        let mut n = 0;
                        while self.over(&s, 1, size) {
                            match s.queue.pop_front() {
                                Some(old) => {
                                    s.pending_bytes -= old.pending_size();
                                    n += 1;
                                }
                                None => break,
                            }
                        }
                        s.pending_bytes += size;
                        s.queue.push_back(msg);
                        Pushed::Dropped(n)
                    }
                }
                PendingPolicy::Block => {
                    s.pending_bytes += size;
                    s.queue.push_back(msg);
                    Pushed::Blocked
                }
                PendingPolicy::Error => {
                    s.queue.clear();
                    s.pending_bytes = 0;
                    s.closed = Some(Error::new(
                        ErrorKind::SlowConsumer,
                        format!(
                            "slow consumer on subject {:?}: pending limits exceeded",
                            self.subject
                        ),
                    ));
                    Pushed::Failed
                }
            }
        };
        let dropped_now = match outcome {
            Pushed::Dropped(n) => n,
            Pushed::Failed => 1,
            _ => 0,
        };
        if dropped_now > 0 {
            self.dropped.fetch_add(dropped_now, Ordering::Relaxed);
        }
        let waiters = if matches!(outcome, Pushed::Failed) {
            std::mem::take(&mut s.drain_waiters)
        } else {
            Vec::new()
        };
        let wake = s.waiting > 0 && !s.wakeup_sent;
        if wake {
            s.wakeup_sent = true;
        }
        drop(s);
        if wake {
            self.cv.notify_one();
        }
        for w in waiters {
            w.complete(Err(Error::new(
                ErrorKind::SlowConsumer,
                "subscription failed as a slow consumer",
            )));
        }
        (outcome, reached_max)
    }

    /// True while a BLOCK-policy queue is over its limits.
    pub(crate) fn must_wait_for_room(&self) -> bool {
        let s = lock(&self.state);
        s.closed.is_none() && self.over(&s, 0, 0) && !s.queue.is_empty()
    }

    pub(crate) fn set_reader_waiting(&self, v: bool) {
        self.reader_waiting.store(v, Ordering::SeqCst);
    }

    /// Rate limit for slow-consumer reports: at most one per second.
    pub(crate) fn should_report_slow(&self) -> bool {
        let mut s = lock(&self.state);
        let now = Instant::now();
        match s.last_slow_report {
            Some(t) if now.duration_since(t) < Duration::from_secs(1) => false,
            _ => {
                s.last_slow_report = Some(now);
                true
            }
        }
    }

    /// Called after a message left the queue.
    fn after_pop(&self, s: &mut State) -> Vec<Arc<Completion>> {
        if self.reader_waiting.load(Ordering::SeqCst) && !self.over(s, 0, 0) {
            self.space.notify_waiters();
        }
        self.pass_wakeup_on(s);
        self.maybe_finish(s)
    }

    /// Wake-ups are sent once per batch, so a waiter that took a message
    /// wakes the next one while messages remain.
    fn pass_wakeup_on(&self, s: &mut State) {
        if !s.queue.is_empty() && s.waiting > 0 && !s.wakeup_sent {
            s.wakeup_sent = true;
            self.cv.notify_one();
        }
    }

    /// Closes a finished subscription whose backlog is handled; returns the
    /// drain waiters to complete (outside the lock).
    fn maybe_finish(&self, s: &mut State) -> Vec<Arc<Completion>> {
        if s.finished && s.queue.is_empty() && !s.in_callback && s.closed.is_none() {
            s.closed = Some(Error::sub_closed());
            s.closed_gracefully = true;
            self.cv.notify_all();
            return std::mem::take(&mut s.drain_waiters);
        }
        Vec::new()
    }

    fn complete_drained(waiters: Vec<Arc<Completion>>) {
        for w in waiters {
            w.complete(Ok(Outcome::Done));
        }
    }

    /// Marks that no more messages will arrive (auto-unsubscribe reached,
    /// drain flushed). Returns true once the subscription is fully closed.
    pub(crate) fn finish(&self) -> bool {
        let mut s = lock(&self.state);
        s.finished = true;
        let w = self.maybe_finish(&mut s);
        let closed = s.closed.is_some();
        drop(s);
        self.cv.notify_all();
        Self::complete_drained(w);
        closed
    }

    /// Closes now, discarding the backlog. Returns false if already closed.
    pub(crate) fn close(&self, reason: Error) -> bool {
        let mut s = lock(&self.state);
        if s.closed.is_some() {
            return false;
        }
        s.closed = Some(reason.clone());
        s.queue.clear();
        s.pending_bytes = 0;
        let waiters = std::mem::take(&mut s.drain_waiters);
        drop(s);
        self.cv.notify_all();
        self.space.notify_waiters();
        for w in waiters {
            w.complete(Err(reason.clone()));
        }
        true
    }

    /// For re-subscribing after a reconnect: `None` if the subscription no
    /// longer wants messages, else what remains of its auto-unsubscribe count.
    pub(crate) fn resend_state(&self) -> Option<Option<u64>> {
        let s = lock(&self.state);
        if s.closed.is_some() || s.finished {
            return None;
        }
        Some(s.max.map(|m| m.saturating_sub(s.received)))
    }

    pub(crate) fn is_closed(&self) -> bool {
        lock(&self.state).closed.is_some()
    }

    /// Registers a drain waiter; completes it at once if already closed.
    pub(crate) fn add_drain_waiter(&self, c: Arc<Completion>) {
        let mut s = lock(&self.state);
        match &s.closed {
            None => s.drain_waiters.push(c),
            Some(_) if s.closed_gracefully => {
                drop(s);
                c.complete(Ok(Outcome::Done));
            }
            Some(e) => {
                let e = e.clone();
                drop(s);
                c.complete(Err(e));
            }
        }
    }

    /// Sets the auto-unsubscribe limit. Returns true if it is already reached.
    pub(crate) fn set_max(&self, max: u64) -> Result<bool> {
        let mut s = lock(&self.state);
        if s.closed.is_some() {
            return Err(Error::sub_closed());
        }
        s.max = Some(max);
        Ok(s.received >= max)
    }

    pub(crate) fn stats(&self) -> SubStats {
        let s = lock(&self.state);
        SubStats {
            delivered: self.delivered.load(Ordering::Relaxed),
            dropped: self.dropped.load(Ordering::Relaxed),
            pending_msgs: s.queue.len() as u64,
            pending_bytes: s.pending_bytes as u64,
        }
    }

    /// Iterator mode: the next message, waiting up to `timeout`.
    /// `status_as_error`: a no-responders status message fails with
    /// NoResponders (iterator semantics) instead of being returned.
    pub(crate) fn next_msg(
        &self,
        timeout: Option<Duration>,
        status_as_error: bool,
    ) -> Result<Message> {
        if self.callback_mode.load(Ordering::SeqCst) {
            return Err(Error::new(
                ErrorKind::SubscriptionClosed,
                "next_msg is not available on a callback subscription",
            ));
        }
        let deadline = timeout.map(|t| Instant::now() + t);
        let mut s = lock(&self.state);
        loop {
            if let Some(m) = s.queue.pop_front() {
                s.pending_bytes -= m.pending_size();
                self.delivered.fetch_add(1, Ordering::Relaxed);
                let w = self.after_pop(&mut s);
                drop(s);
                Self::complete_drained(w);
                if status_as_error && m.is_no_responders() {
                    return Err(Error::new(
                        ErrorKind::NoResponders,
                        "no responders available for request",
                    ));
                }
                return Ok(m);
            }
            if let Some(e) = &s.closed {
                return Err(e.clone());
            }
            let w = self.maybe_finish(&mut s);
            if !w.is_empty() || s.closed.is_some() {
                let e = s.closed.clone().unwrap_or_else(Error::sub_closed);
                drop(s);
                Self::complete_drained(w);
                return Err(e);
            }
            let now = Instant::now();
            if deadline.is_some_and(|d| now >= d) {
                return Err(Error::timeout("next_msg"));
            }
            s.waiting += 1;
            s = match deadline {
                None => self.cv.wait(s).unwrap_or_else(|p| p.into_inner()),
                Some(d) => {
                    self.cv
                        .wait_timeout(s, d - now)
                        .unwrap_or_else(|p| p.into_inner())
                        .0
                }
            };
            s.waiting -= 1;
            s.wakeup_sent = false;
        }
    }

    /// Switches to callback mode and starts the dispatcher thread.
    pub(crate) fn start_dispatcher(
        self: &Arc<Self>,
        owner: usize,
        mut handler: Handler,
        on_exit: Box<dyn FnOnce() + Send>,
    ) -> Result<()> {
        if self.callback_mode.swap(true, Ordering::SeqCst) {
            return Err(Error::new(
                ErrorKind::IllegalState,
                "subscription already has a handler",
            ));
        }
        let me = Arc::clone(self);
        let mut slot = lock(&self.dispatcher);
        let handle = std::thread::Builder::new()
            .name(format!("natsio-sub-{}", self.sid))
            .spawn(move || {
                dispatch::mark_dispatcher_of(owner);
                me.dispatch_loop(&mut handler);
                drop(handler);
                on_exit();
            })
            .map_err(|e| Error::new(ErrorKind::Io, format!("cannot spawn dispatcher: {e}")))?;
        *lock(&self.dispatcher_id) = Some(handle.thread().id());
        *slot = Some(handle);
        Ok(())
    }

    fn dispatch_loop(&self, handler: &mut Handler) {
        // One lock per message: the lock taken after a callback also pops
        // the next message (the reader pushes under the same lock, so every
        // acquisition may move its cache line between threads).
        let mut s = lock(&self.state);
        loop {
            let msg = loop {
                if s.closed.is_some() {
                    return;
                }
                if let Some(m) = s.queue.pop_front() {
                    break m;
                }
                let w = self.maybe_finish(&mut s);
                if s.closed.is_some() {
                    drop(s);
                    Self::complete_drained(w);
                    return;
                }
                s.waiting += 1;
                s = self.cv.wait(s).unwrap_or_else(|p| p.into_inner());
                s.waiting -= 1;
                s.wakeup_sent = false;
            };
            s.pending_bytes -= msg.pending_size();
            s.in_callback = true;
            if self.reader_waiting.load(Ordering::SeqCst) && !self.over(&s, 0, 0) {
                self.space.notify_waiters();
            }
            drop(s);
            self.delivered.fetch_add(1, Ordering::Relaxed);
            handler(msg);
            s = lock(&self.state);
            s.in_callback = false;
            let w = self.maybe_finish(&mut s);
            if !w.is_empty() {
                drop(s);
                Self::complete_drained(w);
                s = lock(&self.state);
            }
        }
    }

    /// Waits for the dispatcher thread to end, unless called from it.
    pub(crate) fn join_dispatcher(&self) {
        if *lock(&self.dispatcher_id) == Some(std::thread::current().id()) {
            return;
        }
        if let Some(h) = lock(&self.dispatcher).take() {
            let _ = h.join();
        }
    }
}

/// A subscription owned by the application.
pub struct Subscription {
    pub(crate) shared: Arc<SubShared>,
    pub(crate) client: Arc<ClientInner>,
}

impl Subscription {
    pub fn sid(&self) -> u64 {
        self.shared.sid
    }

    pub fn subject(&self) -> &str {
        &self.shared.subject
    }

    pub fn queue_group(&self) -> Option<&str> {
        self.shared.queue_group.as_deref()
    }

    pub fn stats(&self) -> SubStats {
        self.shared.stats()
    }

    pub fn is_closed(&self) -> bool {
        self.shared.is_closed()
    }

    /// Waits up to `timeout` (forever if `None`) for the next message.
    pub fn next_msg(&self, timeout: Option<Duration>) -> Result<Message> {
        crate::runtime::ensure_may_block()?;
        self.shared.next_msg(timeout, true)
    }

    /// Like `next_msg`, but a no-responders status message is returned as
    /// the message it is (status 503), as callback mode delivers it.
    pub fn next_raw_msg(&self, timeout: Option<Duration>) -> Result<Message> {
        crate::runtime::ensure_may_block()?;
        self.shared.next_msg(timeout, false)
    }

    /// Delivers messages to `handler` on a dedicated thread instead;
    /// `on_release` runs there after the last call.
    pub fn set_handler(
        &self,
        handler: Handler,
        on_release: Box<dyn FnOnce() + Send>,
    ) -> Result<()> {
        self.shared
            .start_dispatcher(Arc::as_ptr(&self.client) as usize, handler, on_release)
    }

    /// Stops delivery at once, discarding the backlog.
    pub fn unsubscribe(&self) -> Result<()> {
        if !self.shared.close(Error::sub_closed()) {
            return Err(Error::sub_closed());
        }
        self.client.remove_sub(self.shared.sid, true);
        self.shared.join_dispatcher();
        Ok(())
    }

    /// Asks the server to stop after `max` messages in total; the
    /// subscription then closes itself once they are handled.
    pub fn unsubscribe_after(&self, max: u64) -> Result<()> {
        if max == 0 {
            return Err(Error::new(
                ErrorKind::InvalidArgument,
                "max must be positive",
            ));
        }
        let reached = self.shared.set_max(max)?;
        if reached {
            self.client.remove_sub(self.shared.sid, true);
            self.shared.finish();
        } else {
            self.client.send_unsub(self.shared.sid, Some(max));
        }
        Ok(())
    }

    /// Starts a graceful drain: no new messages, the backlog is handled,
    /// then the subscription closes and the completion succeeds.
    pub fn drain_async(&self) -> Arc<Completion> {
        self.client.drain_sub(&self.shared)
    }

    /// Drains and waits up to `timeout` for the backlog to be handled.
    pub fn drain(&self, timeout: Option<Duration>) -> Result<()> {
        crate::runtime::ensure_may_block()?;
        let c = self.drain_async();
        match c.wait(timeout) {
            Some(r) => r.map(|_| ()),
            None => Err(Error::timeout("drain")),
        }
    }
}

impl Drop for Subscription {
    fn drop(&mut self) {
        if self.shared.close(Error::sub_closed()) {
            self.client.remove_sub(self.shared.sid, true);
        }
        self.shared.join_dispatcher();
    }
}
