//! The one iterator of the library: a bounded buffer of items filled by a
//! producer (the connection's read path for a subscription, a runtime task
//! for consume, the ordered consumer, a KV watch or request-many replies)
//! and read by the application in one of three ways:
//!
//! - `next(timeout)`: a blocking wait on the caller's thread;
//! - `next_async()`: a completion for one item (a token, a promise, a
//!   channel); pending ones are served in call order before anything is
//!   queued;
//! - push mode (`set_handler`): a library dispatcher thread calls a handler
//!   with every item, in order, then once with the end.
//!
//! A feed ends without error (stopped by its owner, or finished after its
//! last item: drain, auto-unsubscribe, the end of a finite flow) or with the
//! error that ended it. Limits and pending-limit policies are the
//! subscription's; pull-based producers instead wait for room
//! (`wait_for_room`) before asking the server for more.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, Weak};
use std::thread::{JoinHandle, ThreadId};
use std::time::{Duration, Instant};

use tokio::sync::oneshot;

use crate::completion::{lock, Completion, Outcome};
use crate::dispatch;
use crate::error::{Error, ErrorKind, Result};
use crate::options::PendingPolicy;

/// What a reader holds of a feed (`Feed::fill`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Fill {
    pub items: usize,
    pub bytes: usize,
    /// Items that fit before the feed's own limits.
    pub room: usize,
}

/// An item a feed can hold.
pub trait FeedItem: Send + Sized + 'static {
    /// Bytes counted against the byte limit.
    fn pending_size(&self) -> usize;

    /// Memory the item takes beyond `pending_size` (its own struct, what
    /// else it carries): counted, per item, in the backlog a producer
    /// gives way at, so that small items do not pile up by the thousand
    /// before it does.
    fn overhead(&self) -> usize {
        std::mem::size_of::<Self>()
    }
}

impl FeedItem for crate::message::Message {
    fn pending_size(&self) -> usize {
        self.size as usize
    }

    fn overhead(&self) -> usize {
        self.memory_overhead()
    }
}

/// What a push-mode handler receives: each item (or, for a handler set
/// with `set_batch_handler`, the items queued at once), then the end once.
pub enum Delivery<T> {
    Item(T),
    /// Up to the handler's batch size of items, oldest first, taken off
    /// the queue together.
    Batch(Vec<T>),
    /// The feed ended: `None` without error (stopped, drained, finished).
    End(Option<Error>),
}

pub type Handler<T> = Box<dyn FnMut(Delivery<T>) + Send>;

/// Turns an item into what a `next_async` completion holds.
pub type ToOutcome<T> = fn(T) -> Result<Outcome>;

/// How a feed ended.
#[derive(Clone)]
enum End {
    /// Stopped by its owner: iteration ends; a pending drain fails.
    Stopped,
    /// Finished after its last item.
    Finished,
    Failed(Error),
}

impl End {
    fn error(&self) -> Option<Error> {
        match self {
            End::Failed(e) => Some(e.clone()),
            _ => None,
        }
    }

    fn outcome(&self) -> Result<Outcome> {
        match self.error() {
            Some(e) => Err(e),
            None => Ok(Outcome::End),
        }
    }
}

/// Limits of a feed.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Items at most (`usize::MAX`: unlimited).
    pub items: usize,
    /// Bytes at most (`usize::MAX`: unlimited).
    pub bytes: usize,
    pub policy: PendingPolicy,
}

/// A backlog taking more than this much memory (its bytes and each item's
/// overhead), or over half the byte limit, makes the producer give way
/// to a push-mode handler (`Pushed::Backlogged`): what a consumer that
/// keeps up on average needs queued, far below the default limit, which
/// bounds what a stalled one may hold. (Half the limit, as for items, let
/// a Go handler's backlog sit at 32 MiB, issue 45; payload bytes alone
/// let 16-byte messages pile up to half the item limit, 32k of them.)
const BACKLOG_BYTES: usize = 1024 * 1024;
/// The same for a pull-mode reader, which takes items between other work
/// (an event loop's turn: Node's JS thread publishes a run of messages,
/// then takes what its subscriptions received): room for a few turns.
/// Node pubsub 1 KiB, 1,000 publishes a turn: at 1 MiB the reader waited
/// every turn, and its waits met the publisher's pauses for write room,
/// which the server, holding what it forwards to this reader, prolongs:
/// the wait ran out and the reader read on without a bound (17-26k
/// messages queued, in half of the runs); at 2 MiB in 3 of 6 runs, at
/// 4 MiB in none of 19 (peak RSS 83-87 MB; 8 MiB: 88-89 MB).
const PULL_BACKLOG_BYTES: usize = 4 * 1024 * 1024;

impl Limits {
    /// Whether a backlog of `items` and `bytes`, each item taking about
    /// `overhead` more, is one the consumer lags behind (the producer
    /// should give way to it): past `bound` bytes in all, or half a limit
    /// (items: a lower count cost small messages their rate when the
    /// producer yielded per message).
    fn backlogged(&self, items: usize, bytes: usize, overhead: usize, bound: usize) -> bool {
        items > self.items / 2
            || bytes > self.bytes / 2
            || bytes.saturating_add(items.saturating_mul(overhead)) > bound
    }

    /// Limits by the reference's convention: a value <= 0 disables one.
    pub fn from_config(items: i64, bytes: i64, policy: PendingPolicy) -> Limits {
        let lim = |v: i64| if v <= 0 { usize::MAX } else { v as usize };
        Limits {
            items: lim(items),
            bytes: lim(bytes),
            policy,
        }
    }

    pub fn unlimited() -> Limits {
        Limits {
            items: usize::MAX,
            bytes: usize::MAX,
            policy: PendingPolicy::DropNew,
        }
    }
}

/// Live counters of a feed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FeedStats {
    /// Items handed to the application.
    pub delivered: u64,
    /// Items dropped by the pending-limit policy, or known to be missed by
    /// a pulling flow while its buffer was full.
    pub dropped: u64,
    /// Items queued, not yet delivered.
    pub pending_items: u64,
    /// Bytes queued, not yet delivered.
    pub pending_bytes: u64,
    /// Times a pull-based producer found the buffer full and paused.
    pub stalls: u64,
}

/// What happened to an item offered to a feed.
pub(crate) enum Pushed {
    Queued,
    /// Queued, and the backlog is over half a limit (or `BACKLOG_BYTES`,
    /// `PULL_BACKLOG_BYTES` for a pull-mode reader): its reader lags.
    Backlogged,
    /// This many items were dropped (the new one or old ones).
    Dropped(u64),
    /// Queued over the limit: the producer must wait for room (BLOCK).
    Blocked,
    /// The feed failed (ERROR policy).
    Failed,
    /// Ended already: ignored.
    Ignored,
}

/// A reader waiting for an item without blocking a thread.
enum Waiter<T> {
    /// `next_async`: its completion gets the item's outcome. Once taken
    /// off the list it can no longer be cancelled (see `withdraw`).
    Token(Arc<Completion>),
    /// `recv` of a producer task reading another feed.
    Task(oneshot::Sender<Result<Option<T>>>),
}

struct State<T> {
    queue: VecDeque<T>,
    pending_bytes: usize,
    /// Items offered (auto-finish counts these).
    received: u64,
    /// Finish once this many were offered.
    max: Option<u64>,
    /// No more items will arrive; end once the queue is empty.
    finished: bool,
    /// What the feed ends with once finished and empty (`finish_failing`).
    finish_error: Option<Error>,
    end: Option<End>,
    in_callback: bool,
    /// Threads blocked on `cv`; notifying costs a syscall, so only when > 0.
    waiting: u32,
    /// A wake-up is on its way to a waiter; don't send another per item.
    wakeup_sent: bool,
    /// Readers waiting, oldest first. Non-empty only while the queue is.
    waiters: VecDeque<Waiter<T>>,
    drain_waiters: Vec<Arc<Completion>>,
    last_slow_report: Option<Instant>,
}

impl<T> Default for State<T> {
    fn default() -> Self {
        State {
            queue: VecDeque::new(),
            pending_bytes: 0,
            received: 0,
            max: None,
            finished: false,
            finish_error: None,
            end: None,
            in_callback: false,
            waiting: 0,
            wakeup_sent: false,
            waiters: VecDeque::new(),
            drain_waiters: Vec::new(),
            last_slow_report: None,
        }
    }
}

/// Waiters to wake once the lock is released.
struct Wakeups<T> {
    handed: Option<(Arc<Completion>, Result<Outcome>)>,
    drains: Vec<Arc<Completion>>,
    drain_result: Option<Result<Outcome>>,
    ended: Option<(VecDeque<Waiter<T>>, End)>,
}

impl<T> Default for Wakeups<T> {
    fn default() -> Self {
        Wakeups {
            handed: None,
            drains: Vec::new(),
            drain_result: None,
            ended: None,
        }
    }
}

/// A `recv` in progress: if it is dropped (a `select!` took another
/// branch) after an item was handed to it, the item goes back to the
/// feed instead of being lost.
struct PendingRecv<'a, T: FeedItem> {
    feed: &'a Feed<T>,
    rx: Option<oneshot::Receiver<Result<Option<T>>>>,
}

impl<T: FeedItem> Drop for PendingRecv<'_, T> {
    fn drop(&mut self) {
        if let Some(mut rx) = self.rx.take() {
            rx.close();
            if let Ok(Ok(Some(item))) = rx.try_recv() {
                self.feed.unreceive(item);
            }
        }
    }
}

/// A feed whose item type does not matter: what a client needs to end
/// the flows it feeds when it closes.
pub(crate) trait Endable: Send + Sync {
    /// Ends the feed with `e` (if it has not ended) and waits for its
    /// push-mode thread's last call, unless called from that thread.
    fn end_and_join(&self, e: Error);
}

impl<T: FeedItem> Endable for Feed<T> {
    fn end_and_join(&self, e: Error) {
        self.fail(e);
        self.join_dispatcher();
    }
}

pub struct Feed<T: FeedItem> {
    limits: Limits,
    to_outcome: ToOutcome<T>,
    state: Mutex<State<T>>,
    cv: Condvar,
    /// Wakes a producer waiting for room (BLOCK policy, pull flows).
    pub(crate) space: tokio::sync::Notify,
    /// A producer waits for the queue to shrink to this many items
    /// (`usize::MAX`: none waits).
    space_wanted_at: AtomicUsize,
    /// A producer's wait for a lagging consumer (`Pushed::Backlogged`)
    /// ran out: it does not wait again until the backlog falls back.
    give_way_ran_out: AtomicBool,
    /// Wakes producers when the feed ends.
    ended: tokio::sync::Notify,
    dropped: AtomicU64,
    stalls: AtomicU64,
    /// `state.received`, mirrored for a reader spinning for the next item
    /// without the lock (`spin_for_push`). Written only under the lock, so
    /// a plain store.
    received_mirror: AtomicU64,
    push_mode: AtomicBool,
    /// Items per handler call in push mode: 1 (`Delivery::Item`) unless
    /// set by `set_batch_handler`.
    batch: AtomicUsize,
    dispatcher: Mutex<Option<JoinHandle<()>>>,
    dispatcher_id: Mutex<Option<ThreadId>>,
    /// The reader's counters: delivered, and the items the push-mode
    /// dispatcher took off the queue together and has not handed to its
    /// handler yet (`dispatch_loop`).
    reader: ReaderCounters,
    /// Set (under the lock) when the feed is stopped or failed: the
    /// dispatcher discards the items in its hand.
    cut: AtomicBool,
    /// Run once by whoever stops or fails the feed (`on_cut`).
    cut_hook: Mutex<Option<Box<dyn FnOnce() + Send>>>,
    /// Count the items in the push-mode handler's call (`in_call`), for a
    /// producer with a budget (`counting_calls`); others skip the cost.
    count_calls: bool,
    /// The limits count the items in the handler's call too
    /// (`limiting_calls`; implies `count_calls`).
    limit_calls: bool,
    /// The producer drains on its owner's request (`drained_by_producer`):
    /// it withdraws its interest at the server, hands on what was sent
    /// before, then finishes the feed. Without, a drain finishes it at once.
    producer_drains: bool,
    /// Set once a drain was asked for (`request_drain`).
    drain_requested: AtomicBool,
    /// Wakes a producer waiting for a drain request.
    drain_wanted: tokio::sync::Notify,
    /// In push mode, drain outcomes wait here for the handler's final
    /// call (a drain's completion promises it was made); `None` once it
    /// was made.
    after_final_call: Mutex<Option<Vec<DrainOutcome>>>,
}

/// A drain's completion and what it completes with.
type DrainOutcome = (Arc<Completion>, Result<Outcome>);

/// What the reader of a feed counts per item, on its own cache line: the
/// reader (a dispatcher) writes these per item, the producer only reads
/// the items in hand (under the feed's lock, for the limits).
#[repr(align(128))]
#[derive(Default)]
struct ReaderCounters {
    /// Items taken off the queue together, not handed out yet.
    in_hand: AtomicUsize,
    in_hand_bytes: AtomicUsize,
    /// Items in the handler's call (one, or a batch) until it returns:
    /// not pending any more, but not done with either, so a producer that
    /// fills the feed on demand (a consume) counts them (`fill`).
    in_call: AtomicUsize,
    in_call_bytes: AtomicUsize,
    /// Items handed to the application.
    delivered: AtomicU64,
}

/// Items a per-item push-mode dispatcher takes off the queue under one
/// lock. Taking them one at a time moved the lock's cache line between
/// the reading thread and the dispatcher twice per message.
const HANDOFF: usize = 64;

impl<T: FeedItem> Feed<T> {
    pub fn new(limits: Limits, to_outcome: ToOutcome<T>) -> Feed<T> {
        Feed {
            limits,
            to_outcome,
            state: Mutex::new(State::default()),
            cv: Condvar::new(),
            space: tokio::sync::Notify::new(),
            space_wanted_at: AtomicUsize::new(usize::MAX),
            give_way_ran_out: AtomicBool::new(false),
            ended: tokio::sync::Notify::new(),
            dropped: AtomicU64::new(0),
            stalls: AtomicU64::new(0),
            received_mirror: AtomicU64::new(0),
            push_mode: AtomicBool::new(false),
            batch: AtomicUsize::new(1),
            dispatcher: Mutex::new(None),
            dispatcher_id: Mutex::new(None),
            reader: ReaderCounters::default(),
            cut: AtomicBool::new(false),
            cut_hook: Mutex::new(None),
            count_calls: false,
            limit_calls: false,
            producer_drains: false,
            drain_requested: AtomicBool::new(false),
            drain_wanted: tokio::sync::Notify::new(),
            after_final_call: Mutex::new(Some(Vec::new())),
        }
    }

    /// For a producer that drains on request (`until_drain_requested`):
    /// what it has at the server keeps coming until it withdrew its
    /// interest, and it finishes the feed after that.
    pub(crate) fn drained_by_producer(mut self) -> Feed<T> {
        self.producer_drains = true;
        self
    }

    /// For a producer that fills the feed within a budget (a consume): the
    /// items in the push-mode handler's call count as the reader's until
    /// it returns (`fill`), and its return wakes the producer waiting for
    /// room.
    pub(crate) fn counting_calls(mut self) -> Feed<T> {
        self.count_calls = true;
        self
    }

    /// The items in the push-mode handler's call count against the limits
    /// until it returns, as nats.go counts a subscription's pending
    /// messages (`SubOptions::limits_count_handler`).
    pub(crate) fn limiting_calls(mut self) -> Feed<T> {
        self.limit_calls = true;
        self.counting_calls()
    }

    pub fn limits(&self) -> Limits {
        self.limits
    }

    fn over(&self, s: &State<T>, extra_items: usize, extra_bytes: usize) -> bool {
        let (items, bytes) = if self.limit_calls {
            self.unfinished(s)
        } else {
            self.pending(s)
        };
        items + extra_items > self.limits.items || bytes + extra_bytes > self.limits.bytes
    }

    /// Items and bytes pending: queued, or in the dispatcher's hand.
    fn pending(&self, s: &State<T>) -> (usize, usize) {
        (
            s.queue.len() + self.reader.in_hand.load(Ordering::Relaxed),
            s.pending_bytes + self.reader.in_hand_bytes.load(Ordering::Relaxed),
        )
    }

    /// Items and bytes the reader has not finished with: pending, or in
    /// the push-mode handler's call. SeqCst against `space_wanted_at`: a
    /// producer about to wait for room sees the call's end, or the
    /// dispatcher sees the producer waiting (`call_returned`).
    fn unfinished(&self, s: &State<T>) -> (usize, usize) {
        let (items, bytes) = self.pending(s);
        (
            items + self.reader.in_call.load(Ordering::SeqCst),
            bytes + self.reader.in_call_bytes.load(Ordering::SeqCst),
        )
    }

    /// The dispatcher hands items to its handler (under the lock, so that
    /// the items are never counted nowhere).
    fn call_starts(&self, items: usize, bytes: usize) {
        if !self.count_calls {
            return;
        }
        self.reader.in_call.store(items, Ordering::SeqCst);
        self.reader.in_call_bytes.store(bytes, Ordering::SeqCst);
    }

    /// The handler returned: its items are done with; a producer waiting
    /// for room may go on.
    fn call_returned(&self) {
        if !self.count_calls {
            return;
        }
        self.reader.in_call.store(0, Ordering::SeqCst);
        self.reader.in_call_bytes.store(0, Ordering::SeqCst);
        let wanted_at = self.space_wanted_at.load(Ordering::SeqCst);
        // The items still in hand bound what can have freed up from below.
        if wanted_at != usize::MAX && self.reader.in_hand.load(Ordering::Relaxed) <= wanted_at {
            self.space.notify_waiters();
        }
    }

    /// Completes what `w` collected; call without the lock held (hooks of
    /// completions may call back into the feed).
    fn wake(&self, w: Wakeups<T>) {
        if let Some((c, r)) = w.handed {
            c.complete(r);
        }
        if let Some(r) = w.drain_result {
            for d in w.drains {
                self.complete_drain(d, r.clone());
            }
        }
        if let Some((waiters, end)) = w.ended {
            self.ended.notify_waiters();
            for waiter in waiters {
                match waiter {
                    Waiter::Token(c) => {
                        c.complete(end.outcome());
                    }
                    Waiter::Task(tx) => {
                        let _ = tx.send(match end.error() {
                            Some(e) => Err(e),
                            None => Ok(None),
                        });
                    }
                }
            }
        }
    }

    // ---- producer side ----------------------------------------------------

    /// Offers an item. Never blocks. Returns what happened to it and
    /// whether the auto-finish count was reached with it.
    pub(crate) fn push(&self, item: T) -> (Pushed, bool) {
        let (pushed, reached_max, _) = self.push_with(item, false);
        (pushed, reached_max)
    }

    /// `push`, leaving a blocked reader's wake-up to the caller: the third
    /// value is true when one is owed (`wake_reader`, later; until then no
    /// other push sends one). The reading thread owes it for a run of
    /// messages instead of waking the dispatcher at the first.
    pub(crate) fn push_owing_wake(&self, item: T) -> (Pushed, bool, bool) {
        self.push_with(item, true)
    }

    /// Sends the wake-up `push_owing_wake` left owed.
    pub(crate) fn wake_reader(&self) {
        self.cv.notify_one();
    }

    fn push_with(&self, item: T, owe_wake: bool) -> (Pushed, bool, bool) {
        let size = item.pending_size();
        // A feed's items are alike: this one's overhead stands for each.
        let overhead = item.overhead();
        let mut s = lock(&self.state);
        if s.end.is_some() || s.finished {
            return (Pushed::Ignored, false, false);
        }
        s.received += 1;
        self.received_mirror.store(s.received, Ordering::Relaxed);
        let reached_max = s.max.is_some_and(|m| s.received >= m);
        if reached_max {
            s.finished = true;
        }
        // A waiting reader takes it directly (the queue is empty then).
        let mut item = item;
        while let Some(w) = s.waiters.pop_front() {
            match w {
                Waiter::Token(c) => {
                    self.reader.delivered.fetch_add(1, Ordering::Relaxed);
                    let mut wake = self.maybe_finish(&mut s);
                    drop(s);
                    wake.handed = Some((c, (self.to_outcome)(item)));
                    self.wake(wake);
                    return (Pushed::Queued, reached_max, false);
                }
                Waiter::Task(tx) => match tx.send(Ok(Some(item))) {
                    Ok(()) => {
                        self.reader.delivered.fetch_add(1, Ordering::Relaxed);
                        let wake = self.maybe_finish(&mut s);
                        drop(s);
                        self.wake(wake);
                        return (Pushed::Queued, reached_max, false);
                    }
                    // That reader gave up waiting: try the next one.
                    Err(back) => match back {
                        Ok(Some(it)) => item = it,
                        _ => unreachable!("sent an item"),
                    },
                },
            }
        }
        let outcome = if !self.over(&s, 1, size) {
            s.pending_bytes += size;
            s.queue.push_back(item);
            let (items, bytes) = self.pending(&s);
            let bound = if self.push_mode.load(Ordering::Relaxed) {
                BACKLOG_BYTES
            } else {
                PULL_BACKLOG_BYTES
            };
            if self.limits.backlogged(items, bytes, overhead, bound) {
                Pushed::Backlogged
            } else {
                if self.give_way_ran_out.load(Ordering::Relaxed) {
                    self.give_way_ran_out.store(false, Ordering::Relaxed);
                }
                Pushed::Queued
            }
        } else {
            match self.limits.policy {
                PendingPolicy::DropNew => Pushed::Dropped(1),
                PendingPolicy::DropOld => {
                    if size > self.limits.bytes {
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
                        s.queue.push_back(item);
                        Pushed::Dropped(n)
                    }
                }
                PendingPolicy::Block => {
                    s.pending_bytes += size;
                    s.queue.push_back(item);
                    Pushed::Blocked
                }
                PendingPolicy::Error => Pushed::Failed,
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
        if matches!(outcome, Pushed::Failed) {
            drop(s);
            self.fail(Error::new(
                ErrorKind::SlowConsumer,
                "slow consumer: pending limits exceeded",
            ));
            return (outcome, reached_max, false);
        }
        let notify = s.waiting > 0 && !s.wakeup_sent;
        if notify {
            s.wakeup_sent = true;
        }
        drop(s);
        if notify && !owe_wake {
            self.cv.notify_one();
        }
        (outcome, reached_max, notify && owe_wake)
    }

    /// No more items will come; the feed ends once the backlog is taken.
    /// Returns true once it has ended.
    pub(crate) fn finish(&self) -> bool {
        let mut s = lock(&self.state);
        s.finished = true;
        let wake = self.maybe_finish(&mut s);
        let ended = s.end.is_some();
        drop(s);
        self.cv.notify_all();
        self.wake(wake);
        ended
    }

    /// `finish`, ending with `e` once the backlog is taken: the reader
    /// gets every item, then the error (a fetch's messages, then why it
    /// ended early).
    pub(crate) fn finish_failing(&self, e: Error) -> bool {
        let mut s = lock(&self.state);
        if s.end.is_none() && !s.finished {
            s.finish_error = Some(e);
        }
        drop(s);
        self.finish()
    }

    /// Ends the feed now with `e`, discarding the backlog. Returns false if
    /// it had ended already.
    pub(crate) fn fail(&self, e: Error) -> bool {
        self.end_now(End::Failed(e))
    }

    /// Ends the feed now without error (its owner stopped it), discarding
    /// the backlog. Returns false if it had ended already.
    pub(crate) fn stop(&self) -> bool {
        self.end_now(End::Stopped)
    }

    fn end_now(&self, end: End) -> bool {
        let mut s = lock(&self.state);
        if s.end.is_some() {
            return false;
        }
        s.end = Some(end.clone());
        self.cut.store(true, Ordering::Release);
        s.queue.clear();
        s.pending_bytes = 0;
        let wake = Wakeups {
            handed: None,
            drains: std::mem::take(&mut s.drain_waiters),
            drain_result: Some(Err(end.error().unwrap_or_else(|| {
                Error::new(
                    ErrorKind::SubscriptionClosed,
                    "stopped before draining finished",
                )
            }))),
            ended: Some((std::mem::take(&mut s.waiters), end)),
        };
        drop(s);
        self.cv.notify_all();
        self.space.notify_waiters();
        self.wake(wake);
        self.run_cut_hook();
        true
    }

    /// Makes the thread that stops or fails the feed run `hook` before that
    /// call returns (at once if the feed has ended already), replacing an
    /// earlier hook. For what the producer, a runtime task that learns of
    /// the end only later, must undo in order with the caller's next
    /// frames: a flow's interest at the server.
    pub(crate) fn on_cut(&self, hook: Box<dyn FnOnce() + Send>) {
        *lock(&self.cut_hook) = Some(hook);
        // Stored before checking: either this check or the one ending the
        // feed sees the hook.
        if self.has_ended() {
            self.run_cut_hook();
        }
    }

    fn run_cut_hook(&self) {
        let hook = lock(&self.cut_hook).take();
        if let Some(hook) = hook {
            hook();
        }
    }

    /// Ends a finished feed whose backlog is handled.
    fn maybe_finish(&self, s: &mut State<T>) -> Wakeups<T> {
        if s.finished && s.queue.is_empty() && !s.in_callback && s.end.is_none() {
            let end = s.finish_error.take().map_or(End::Finished, End::Failed);
            s.end = Some(end.clone());
            self.cv.notify_all();
            return Wakeups {
                handed: None,
                drains: std::mem::take(&mut s.drain_waiters),
                drain_result: Some(match end.error() {
                    Some(e) => Err(e),
                    None => Ok(Outcome::Done),
                }),
                ended: Some((std::mem::take(&mut s.waiters), end)),
            };
        }
        Wakeups::default()
    }

    /// Sets the auto-finish count (items offered in total). Returns true
    /// if it is already reached.
    pub(crate) fn set_max(&self, max: u64) -> Result<bool> {
        let mut s = lock(&self.state);
        if s.end.is_some() {
            return Err(Error::sub_closed());
        }
        s.max = Some(max);
        Ok(s.received >= max)
    }

    /// For re-subscribing after a reconnect: `None` if no more items are
    /// wanted, else what remains of the auto-finish count.
    pub(crate) fn remaining(&self) -> Option<Option<u64>> {
        let s = lock(&self.state);
        if s.end.is_some() || s.finished {
            return None;
        }
        Some(s.max.map(|m| m.saturating_sub(s.received)))
    }

    /// Queued items, and whether the producer may wait for this lagging
    /// consumer (`give_way`): unless a wait ran out since its backlog last
    /// fell under the bound.
    pub(crate) fn give_way_state(&self) -> (usize, bool) {
        let s = lock(&self.state);
        let may_wait = !self.give_way_ran_out.load(Ordering::Relaxed);
        (s.queue.len(), may_wait)
    }

    /// A wait for this lagging consumer ran out (see `give_way_state`).
    pub(crate) fn give_way_ran_out(&self) {
        self.give_way_ran_out.store(true, Ordering::Relaxed);
    }

    /// True while a BLOCK-policy queue is over its limits.
    pub(crate) fn must_wait_for_room(&self) -> bool {
        let s = lock(&self.state);
        s.end.is_none() && self.over(&s, 0, 0) && !s.queue.is_empty()
    }

    /// A producer wants `space` notified once the queue holds at most
    /// `items` items (`None`: no longer).
    pub(crate) fn want_room(&self, items: Option<usize>) {
        self.space_wanted_at
            .store(items.unwrap_or(usize::MAX), Ordering::SeqCst);
    }

    /// Waits until the reader holds at most `items` items and `bytes`
    /// bytes it has not finished with (`fill`) and the queue is not over
    /// its byte limit, or the feed ended. For producers that fill it on
    /// demand.
    pub(crate) async fn wait_for_room(&self, items: usize, bytes: usize) {
        loop {
            let notified = self.space.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            self.want_room(Some(items));
            {
                let s = lock(&self.state);
                let (held, held_bytes) = self.unfinished(&s);
                if s.end.is_some()
                    || (held <= items
                        && held_bytes <= bytes
                        && s.pending_bytes <= self.limits.bytes)
                {
                    break;
                }
            }
            notified.await;
        }
        self.want_room(None);
    }

    /// Items and bytes the reader has not finished with (queued, in the
    /// push-mode dispatcher's hand, or in its handler's call until it
    /// returns), and the room left for more items (0 when full or ended).
    /// A producer that fills the feed on demand within a budget (consume's
    /// max_messages, max_bytes) counts all of them: a callback still busy
    /// with a message holds it.
    pub(crate) fn fill(&self) -> Fill {
        let s = lock(&self.state);
        let (items, bytes) = self.unfinished(&s);
        let room = if s.end.is_some() || s.pending_bytes >= self.limits.bytes {
            0
        } else {
            self.limits.items.saturating_sub(items)
        };
        Fill { items, bytes, room }
    }

    /// Counts items a producer knows it missed.
    pub(crate) fn count_dropped(&self, n: u64) {
        self.dropped.fetch_add(n, Ordering::Relaxed);
    }

    /// Counts a pause of a pull-based producer on a full buffer.
    pub(crate) fn count_stall(&self) {
        self.stalls.fetch_add(1, Ordering::Relaxed);
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

    /// Waits until the feed ends (producers stop then).
    pub(crate) async fn until_ended(&self) {
        loop {
            let notified = self.ended.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            if self.has_ended() {
                return;
            }
            notified.await;
        }
    }

    // ---- consumer side ----------------------------------------------------

    pub fn has_ended(&self) -> bool {
        lock(&self.state).end.is_some()
    }

    /// Stopped or failed (its backlog discarded), as opposed to running or
    /// finished normally: a batch handler stops handing out its batch then.
    pub fn is_cut(&self) -> bool {
        matches!(
            lock(&self.state).end,
            Some(End::Stopped) | Some(End::Failed(_))
        )
    }

    /// Asks for a drain: no more items are taken in, those on their way or
    /// queued are handed out, then the feed ends without error and `c`
    /// completes (it fails if the feed is stopped or fails first). A
    /// producer that drains itself is woken (`until_drain_requested`);
    /// for any other the feed is finished now.
    pub(crate) fn request_drain(&self, c: Arc<Completion>) {
        self.add_drain_waiter(c);
        if self.producer_drains {
            if !self.drain_requested.swap(true, Ordering::SeqCst) {
                self.drain_wanted.notify_waiters();
            }
        } else {
            self.finish();
        }
    }

    /// Whether a drain was asked for.
    pub(crate) fn drain_requested(&self) -> bool {
        self.drain_requested.load(Ordering::SeqCst)
    }

    /// Waits until a drain is asked for (`request_drain`).
    pub(crate) async fn until_drain_requested(&self) {
        loop {
            let notified = self.drain_wanted.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            if self.drain_requested() {
                return;
            }
            notified.await;
        }
    }

    /// Completes a drain's completion, in push mode only once the
    /// handler's final call was made (the drain of a callback consumer
    /// returns after it, in C as in every binding).
    fn complete_drain(&self, c: Arc<Completion>, r: Result<Outcome>) {
        // From the handler itself (its final call draining again) the
        // call cannot wait for its own end.
        let on_dispatcher = *lock(&self.dispatcher_id) == Some(std::thread::current().id());
        if self.push_mode.load(Ordering::SeqCst) && !on_dispatcher {
            if let Some(waiting) = lock(&self.after_final_call).as_mut() {
                waiting.push((c, r));
                return;
            }
        }
        c.complete(r);
    }

    /// The push-mode handler's final call was made: completes the drains
    /// that waited for it.
    fn final_call_made(&self) {
        let waiting = lock(&self.after_final_call).take();
        for (c, r) in waiting.into_iter().flatten() {
            c.complete(r);
        }
    }

    /// Registers a drain waiter; completes it at once if already ended.
    pub(crate) fn add_drain_waiter(&self, c: Arc<Completion>) {
        let mut s = lock(&self.state);
        let r = match &s.end {
            None => {
                s.drain_waiters.push(c);
                return;
            }
            Some(End::Finished) => Ok(Outcome::Done),
            Some(End::Stopped) => Err(Error::sub_closed()),
            Some(End::Failed(e)) => Err(e.clone()),
        };
        drop(s);
        self.complete_drain(c, r);
    }

    pub fn stats(&self) -> FeedStats {
        let s = lock(&self.state);
        // Once cut, what the dispatcher holds is discarded.
        let (items, bytes) = if s.end.is_none() {
            self.pending(&s)
        } else {
            (s.queue.len(), s.pending_bytes)
        };
        FeedStats {
            delivered: self.reader.delivered.load(Ordering::Relaxed),
            dropped: self.dropped.load(Ordering::Relaxed),
            pending_items: items as u64,
            pending_bytes: bytes as u64,
            stalls: self.stalls.load(Ordering::Relaxed),
        }
    }

    /// Takes the first queued item, under the lock, as delivered.
    fn pop(&self, s: &mut State<T>) -> Option<T> {
        let item = self.take(s)?;
        self.reader.delivered.fetch_add(1, Ordering::Relaxed);
        Some(item)
    }

    /// Takes up to `max` queued items, oldest first, into `put`, under the
    /// lock, none counted as delivered; returns how many and their bytes.
    fn take_up_to(&self, s: &mut State<T>, max: usize, mut put: impl FnMut(T)) -> (usize, usize) {
        let (mut taken, mut bytes) = (0, 0);
        while taken < max {
            let Some(item) = self.take(s) else { break };
            bytes += item.pending_size();
            put(item);
            taken += 1;
        }
        (taken, bytes)
    }

    /// `pop` without counting the item as delivered.
    fn take(&self, s: &mut State<T>) -> Option<T> {
        let item = s.queue.pop_front()?;
        s.pending_bytes -= item.pending_size();
        let wanted_at = self.space_wanted_at.load(Ordering::Relaxed);
        if wanted_at != usize::MAX
            && s.queue.len() <= wanted_at
            && (self.limits.policy != PendingPolicy::Block || !self.over(s, 0, 0))
        {
            self.space.notify_waiters();
        }
        // Wake-ups are sent once per batch, so a waiter that took an item
        // wakes the next one while items remain.
        if !s.queue.is_empty() && s.waiting > 0 && !s.wakeup_sent {
            s.wakeup_sent = true;
            self.cv.notify_one();
        }
        Some(item)
    }

    /// The next item, or the end, when either is there now; with what
    /// must be woken once the lock is released. `None`: wait.
    fn ready(&self, s: &mut State<T>) -> Option<(Result<Option<T>>, Wakeups<T>)> {
        if let Some(item) = self.pop(s) {
            return Some((Ok(Some(item)), self.maybe_finish(s)));
        }
        let wake = self.maybe_finish(s);
        let end = s.end.as_ref()?;
        Some((end.error().map_or(Ok(None), Err), wake))
    }

    fn check_pull_mode(&self) -> Result<()> {
        if self.push_mode.load(Ordering::SeqCst) {
            return Err(Error::new(
                ErrorKind::IllegalState,
                "this iterator delivers to a callback",
            ));
        }
        Ok(())
    }

    /// Before a reader sleeps on an empty queue: unlocks and spins
    /// (`spin::spin_until`) until an item is offered, the bound passes or
    /// `deadline` comes, then locks again. A reply or the next message of
    /// a conversation usually comes within it, and is then taken with no
    /// wake-up of this thread.
    fn spin_for_push<'a>(
        &'a self,
        s: std::sync::MutexGuard<'a, State<T>>,
        deadline: Option<Instant>,
    ) -> std::sync::MutexGuard<'a, State<T>> {
        let seen = self.received_mirror.load(Ordering::Relaxed);
        drop(s);
        crate::spin::spin_until(deadline, || {
            self.received_mirror.load(Ordering::Relaxed) != seen || self.cut.load(Ordering::Relaxed)
        });
        lock(&self.state)
    }

    /// The next item, waiting up to `timeout` (forever if `None`; not at
    /// all if zero). `Ok(None)`: the feed ended without error.
    pub fn next(&self, timeout: Option<Duration>) -> Result<Option<T>> {
        self.check_pull_mode()?;
        let deadline = timeout.map(crate::clock::deadline_in);
        let mut s = lock(&self.state);
        let mut spun = false;
        loop {
            if let Some((r, wake)) = self.ready(&mut s) {
                drop(s);
                self.wake(wake);
                return r;
            }
            let now = Instant::now();
            if deadline.is_some_and(|d| now >= d) {
                return Err(Error::timeout("next"));
            }
            if !spun {
                spun = true;
                s = self.spin_for_push(s, deadline);
                continue;
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

    /// A completion for the next item (its outcome per the feed's
    /// `to_outcome`), `Outcome::End` once the feed ended without error, or
    /// the error that ended it. Pending ones are served in call order.
    /// Cancelling one before an item reached it leaves the items in the
    /// feed; once one has, the cancel is refused.
    pub fn next_async(self: &Arc<Self>) -> Result<Arc<Completion>> {
        self.check_pull_mode()?;
        let c = Completion::new();
        let mut s = lock(&self.state);
        if let Some((r, mut wake)) = self.ready(&mut s) {
            drop(s);
            let outcome = match r {
                Ok(Some(item)) => (self.to_outcome)(item),
                Ok(None) => Ok(Outcome::End),
                Err(e) => Err(e),
            };
            wake.handed = Some((Arc::clone(&c), outcome));
            self.wake(wake);
            return Ok(c);
        }
        s.waiters.push_back(Waiter::Token(Arc::clone(&c)));
        drop(s);
        let feed: Weak<Self> = Arc::downgrade(self);
        let me = Arc::downgrade(&c);
        c.set_cancel_guard(move || match (feed.upgrade(), me.upgrade()) {
            (Some(f), Some(c)) => f.withdraw(&c),
            _ => true,
        });
        Ok(c)
    }

    /// Takes a pending `next_async` off the list; false once an item or
    /// the end is on its way to it (it cannot be cancelled then).
    fn withdraw(&self, c: &Arc<Completion>) -> bool {
        let mut s = lock(&self.state);
        let at = s
            .waiters
            .iter()
            .position(|w| matches!(w, Waiter::Token(t) if Arc::ptr_eq(t, c)));
        match at {
            Some(i) => {
                s.waiters.remove(i);
                true
            }
            None => false,
        }
    }

    /// `recv` without waiting: `None` while nothing is there.
    pub(crate) fn try_recv(&self) -> Option<Result<Option<T>>> {
        let mut s = lock(&self.state);
        let (r, wake) = self.ready(&mut s)?;
        drop(s);
        self.wake(wake);
        Some(r)
    }

    /// The next item for a task reading this feed: `Ok(None)` once it
    /// ended without error. Dropping the future leaves the items in the
    /// feed.
    pub(crate) async fn recv(&self) -> Result<Option<T>> {
        let rx = {
            let mut s = lock(&self.state);
            if let Some((r, wake)) = self.ready(&mut s) {
                drop(s);
                self.wake(wake);
                return r;
            }
            // Readers that gave up (timed out) leave closed senders behind.
            s.waiters
                .retain(|w| !matches!(w, Waiter::Task(tx) if tx.is_closed()));
            let (tx, rx) = oneshot::channel();
            s.waiters.push_back(Waiter::Task(tx));
            rx
        };
        let mut pending = PendingRecv {
            feed: self,
            rx: Some(rx),
        };
        let rx = pending.rx.as_mut().expect("receiver");
        let r = rx.await.unwrap_or_else(|_| Err(Error::sub_closed()));
        pending.rx = None;
        r
    }

    /// Puts back an item a reader received but never took (its wait was
    /// cancelled after the hand-over): it was the oldest, so in front.
    fn unreceive(&self, item: T) {
        let mut s = lock(&self.state);
        if s.end.is_some() {
            return;
        }
        self.reader.delivered.fetch_sub(1, Ordering::Relaxed);
        s.pending_bytes += item.pending_size();
        s.queue.push_front(item);
        if s.waiting > 0 && !s.wakeup_sent {
            s.wakeup_sent = true;
            self.cv.notify_one();
        }
    }

    /// Switches to push mode: `handler` runs on a library thread with
    /// every item, in order, then once with the end; `on_exit` runs after
    /// its last call.
    pub(crate) fn set_handler(
        self: &Arc<Self>,
        owner: usize,
        name: String,
        handler: Handler<T>,
        on_exit: Box<dyn FnOnce() + Send>,
    ) -> Result<()> {
        self.set_batch_handler(owner, name, 1, handler, on_exit)
    }

    /// `set_handler` with up to `max` items per call (`Delivery::Batch`):
    /// one handler call, under one lock, for what is queued at once.
    pub(crate) fn set_batch_handler(
        self: &Arc<Self>,
        owner: usize,
        name: String,
        max: usize,
        mut handler: Handler<T>,
        on_exit: Box<dyn FnOnce() + Send>,
    ) -> Result<()> {
        if lock(&self.state)
            .waiters
            .iter()
            .any(|w| matches!(w, Waiter::Token(_)))
        {
            return Err(Error::new(
                ErrorKind::IllegalState,
                "next_async calls are pending on this iterator",
            ));
        }
        if self.push_mode.swap(true, Ordering::SeqCst) {
            return Err(Error::new(
                ErrorKind::IllegalState,
                "this iterator already delivers to a callback",
            ));
        }
        // Read by the dispatcher thread, which starts below.
        self.batch.store(max.max(1), Ordering::SeqCst);
        let me = Arc::clone(self);
        let mut slot = lock(&self.dispatcher);
        let spawned = std::thread::Builder::new().name(name).spawn(move || {
            dispatch::mark_dispatcher_of(owner);
            let end = me.dispatch_loop(&mut handler);
            handler(Delivery::End(end));
            drop(handler);
            me.final_call_made();
            on_exit();
        });
        let handle = match spawned {
            Ok(h) => h,
            Err(e) => {
                self.push_mode.store(false, Ordering::SeqCst);
                self.final_call_made();
                return Err(Error::new(
                    ErrorKind::Io,
                    format!("cannot spawn dispatcher: {e}"),
                ));
            }
        };
        *lock(&self.dispatcher_id) = Some(handle.thread().id());
        *slot = Some(handle);
        Ok(())
    }

    /// Delivers until the end; returns its error, if any.
    fn dispatch_loop(&self, handler: &mut Handler<T>) -> Option<Error> {
        let batch = self.batch.load(Ordering::SeqCst);
        // A per-item handler takes up to HANDOFF items per lock, unless its
        // policy evicts or waits on queued items (DROP_OLD must be able to
        // evict the oldest pending item; BLOCK is woken by each take).
        // A feed whose limits count the handler's item (`limiting_calls`)
        // takes one at a time too: its count moves from the queue to the
        // call under the lock, never counted twice (an item in hand moves
        // outside it, and a producer checking then would drop an item
        // that fits).
        let handoff = match self.limits.policy {
            PendingPolicy::DropNew | PendingPolicy::Error if batch == 1 && !self.limit_calls => {
                HANDOFF
            }
            _ => 1,
        };
        let mut hand: VecDeque<T> = VecDeque::with_capacity(handoff - 1);
        // The lock taken after a callback also takes the next items: the
        // producer pushes under the same lock, so every acquisition may
        // move its cache line between threads.
        let mut s = lock(&self.state);
        loop {
            let item = loop {
                if let Some(end) = &s.end {
                    return end.error();
                }
                if let Some(it) = self.pop(&mut s) {
                    break it;
                }
                let wake = self.maybe_finish(&mut s);
                if let Some(end) = &s.end {
                    let e = end.error();
                    drop(s);
                    self.wake(wake);
                    return e;
                }
                s.waiting += 1;
                s = self.cv.wait(s).unwrap_or_else(|p| p.into_inner());
                s.waiting -= 1;
                s.wakeup_sent = false;
            };
            s.in_callback = true;
            if batch > 1 {
                let mut items = Vec::with_capacity(batch.min(s.queue.len() + 1));
                let first_bytes = item.pending_size();
                items.push(item);
                let (taken, bytes) = self.take_up_to(&mut s, batch - 1, |it| items.push(it));
                self.reader
                    .delivered
                    .fetch_add(taken as u64, Ordering::Relaxed);
                self.call_starts(taken + 1, bytes + first_bytes);
                drop(s);
                handler(Delivery::Batch(items));
                self.call_returned();
            } else {
                let (taken, bytes) = self.take_up_to(&mut s, handoff - 1, |it| hand.push_back(it));
                if taken > 0 {
                    // Stored under the lock: the producer's limit checks
                    // see the items either queued or in hand.
                    self.reader.in_hand.store(taken, Ordering::Relaxed);
                    self.reader.in_hand_bytes.store(bytes, Ordering::Relaxed);
                }
                self.call_starts(1, item.pending_size());
                drop(s);
                handler(Delivery::Item(item));
                self.call_returned();
                self.hand_out(&mut hand, handler);
            }
            s = lock(&self.state);
            s.in_callback = false;
            let wake = self.maybe_finish(&mut s);
            if wake.ended.is_some() {
                drop(s);
                self.wake(wake);
                s = lock(&self.state);
            }
        }
    }

    /// Hands the items in hand to the handler one by one, each counted as
    /// delivered as it goes; all are discarded once the feed is cut (a
    /// stop, a failure), as queued ones are.
    fn hand_out(&self, hand: &mut VecDeque<T>, handler: &mut Handler<T>) {
        while let Some(item) = hand.pop_front() {
            if self.cut.load(Ordering::Acquire) {
                hand.clear();
                self.reader.in_hand.store(0, Ordering::Relaxed);
                self.reader.in_hand_bytes.store(0, Ordering::Relaxed);
                return;
            }
            // In the call before out of the hand: never counted nowhere.
            self.call_starts(1, item.pending_size());
            self.reader.in_hand.fetch_sub(1, Ordering::Relaxed);
            self.reader
                .in_hand_bytes
                .fetch_sub(item.pending_size(), Ordering::Relaxed);
            self.reader.delivered.fetch_add(1, Ordering::Relaxed);
            handler(Delivery::Item(item));
            self.call_returned();
        }
    }

    /// Waits for the push-mode thread to end, unless called from it.
    pub(crate) fn join_dispatcher(&self) {
        if *lock(&self.dispatcher_id) == Some(std::thread::current().id()) {
            return;
        }
        if let Some(h) = lock(&self.dispatcher).take() {
            let _ = h.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc;

    struct Item(u32);

    impl FeedItem for Item {
        fn pending_size(&self) -> usize {
            10
        }
    }

    /// Sets a per-item handler on `f` that reports each item's number on
    /// the first channel, then blocks until released through the second
    /// (one send per item; dropping it releases them all).
    fn block_in_handler(f: &Arc<Feed<Item>>) -> (mpsc::Receiver<u32>, mpsc::Sender<()>) {
        let (seen_tx, seen) = mpsc::channel();
        let (release, released) = mpsc::channel::<()>();
        let handler = move |d| {
            if let Delivery::Item(Item(n)) = d {
                seen_tx.send(n).unwrap();
                let _ = released.recv();
            }
        };
        f.set_handler(
            usize::MAX,
            "test".into(),
            Box::new(handler),
            Box::new(|| {}),
        )
        .unwrap();
        (seen, release)
    }

    /// A 16-byte message taking 112 bytes more (its struct, its MSG line).
    struct Small;

    impl FeedItem for Small {
        fn pending_size(&self) -> usize {
            16
        }

        fn overhead(&self) -> usize {
            112
        }
    }

    /// The producer is told to give way once the backlog's memory, each
    /// item's overhead counted, passes BACKLOG_BYTES (PULL_BACKLOG_BYTES
    /// for a pull-mode reader): small messages no longer pile up to half
    /// the item limit (32k) first.
    #[test]
    fn small_items_are_backlogged_by_their_memory() {
        let limits = Limits {
            items: 65536,
            bytes: 64 << 20,
            policy: PendingPolicy::DropNew,
        };
        let first_backlogged = |push_mode: bool| {
            let f = Feed::new(limits, |_: Small| Ok(Outcome::Done));
            // As set_handler sets it, without its dispatcher taking items.
            f.push_mode.store(push_mode, Ordering::SeqCst);
            (1..=limits.items)
                .find(|_| matches!(f.push(Small).0, Pushed::Backlogged))
                .unwrap()
        };
        // By memory: a push-mode handler's bound, and a pull-mode reader's
        // (room for a few event loop turns).
        assert_eq!(first_backlogged(true), BACKLOG_BYTES / (16 + 112) + 1);
        assert_eq!(first_backlogged(false), PULL_BACKLOG_BYTES / (16 + 112) + 1);
    }

    /// A per-item dispatcher takes what is queued off the queue together;
    /// those items stay pending, for the stats and the limits, until each
    /// is handed out, and a stop discards them as it discards queued ones.
    #[test]
    fn items_in_the_dispatchers_hand_count_as_pending_until_handed_out() {
        let limits = Limits {
            items: 11,
            bytes: usize::MAX,
            policy: PendingPolicy::DropNew,
        };
        let f = Arc::new(Feed::new(limits, |_: Item| Ok(Outcome::Done)));
        for i in 0..10 {
            assert!(matches!(
                f.push(Item(i)).0,
                Pushed::Queued | Pushed::Backlogged
            ));
        }
        let (seen, release) = block_in_handler(&f);
        assert_eq!(seen.recv().unwrap(), 0);
        let st = f.stats();
        assert_eq!(
            (st.delivered, st.pending_items, st.pending_bytes),
            (1, 9, 90)
        );

        // The limit (11) counts the 9 in hand: two more fit, a third not.
        assert!(!matches!(f.push(Item(10)).0, Pushed::Dropped(_)));
        assert!(!matches!(f.push(Item(11)).0, Pushed::Dropped(_)));
        assert!(matches!(f.push(Item(12)).0, Pushed::Dropped(1)));

        release.send(()).unwrap();
        assert_eq!(seen.recv().unwrap(), 1);
        let st = f.stats();
        assert_eq!((st.delivered, st.pending_items, st.dropped), (2, 10, 1));

        // Stopped while item 1 is handled: nothing more is handed out.
        assert!(f.stop());
        drop(release);
        f.join_dispatcher();
        assert_eq!(seen.try_iter().collect::<Vec<_>>(), Vec::<u32>::new());
        let st = f.stats();
        assert_eq!(
            (st.delivered, st.pending_items, st.pending_bytes),
            (2, 0, 0)
        );
    }

    /// With `counting_calls` (a consume's feed), an item in the handler's
    /// call counts in `fill` until the call returns, beside those queued
    /// or in hand; the stats count it as delivered.
    #[test]
    fn an_item_in_the_handlers_call_counts_in_fill_until_it_returns() {
        let f =
            Arc::new(Feed::new(Limits::unlimited(), |_: Item| Ok(Outcome::Done)).counting_calls());
        for i in 0..3 {
            f.push(Item(i));
        }
        let (seen, release) = block_in_handler(&f);
        assert_eq!(seen.recv().unwrap(), 0);
        assert_eq!((f.fill().items, f.fill().bytes), (3, 30));
        assert_eq!(f.stats().pending_items, 2);
        release.send(()).unwrap();
        assert_eq!(seen.recv().unwrap(), 1);
        assert_eq!(f.fill().items, 2);
        assert!(f.stop());
        drop(release);
        f.join_dispatcher();
        assert_eq!(f.fill().items, 0);
    }

    /// A cut hook runs once, on the thread that stops or fails the feed,
    /// before that call returns; a later hook replaces an earlier one, and
    /// one set after the end runs at once.
    #[test]
    fn the_cut_hook_runs_once_on_the_thread_that_ends_the_feed() {
        let f = Feed::new(Limits::unlimited(), |_: Item| Ok(Outcome::Done));
        let (tx, ran) = mpsc::channel();
        let hook = |name: &'static str| {
            let tx = tx.clone();
            Box::new(move || tx.send((name, std::thread::current().id())).unwrap())
        };
        f.on_cut(hook("replaced"));
        f.on_cut(hook("current"));
        assert!(ran.try_recv().is_err(), "ran before the end");
        assert!(f.fail(Error::closed()));
        let me = std::thread::current().id();
        assert_eq!(ran.try_iter().collect::<Vec<_>>(), vec![("current", me)]);
        assert!(!f.stop());
        assert!(ran.try_recv().is_err(), "ran twice");
        f.on_cut(hook("late"));
        assert_eq!(ran.try_iter().collect::<Vec<_>>(), vec![("late", me)]);
    }

    /// `finish_failing` hands out the backlog first, to a reader and to a
    /// push-mode handler alike, then ends with the error, for good; a feed
    /// that ended already keeps its end.
    #[test]
    fn finish_failing_ends_with_the_error_after_the_backlog() {
        let pulled = Feed::new(Limits::unlimited(), |_: Item| Ok(Outcome::Done));
        pulled.push(Item(1));
        pulled.push(Item(2));
        assert!(!pulled.finish_failing(Error::new(ErrorKind::ConsumerDeleted, "gone")));
        pulled.push(Item(3));
        let n = |r: Result<Option<Item>>| r.map(|i| i.map(|Item(n)| n));
        assert_eq!(n(pulled.next(Some(Duration::ZERO))).ok(), Some(Some(1)));
        assert_eq!(n(pulled.next(Some(Duration::ZERO))).ok(), Some(Some(2)));
        for _ in 0..2 {
            let end = pulled.next(Some(Duration::ZERO)).map(|_| ()).unwrap_err();
            assert_eq!(end.kind(), ErrorKind::ConsumerDeleted);
        }

        let pushed = Arc::new(Feed::new(Limits::unlimited(), |_: Item| Ok(Outcome::Done)));
        pushed.push(Item(7));
        let (tx, seen) = mpsc::channel();
        let handler = move |d| {
            tx.send(match d {
                Delivery::Item(Item(n)) => Ok(n),
                Delivery::End(e) => Err(e.map(|e| e.kind())),
                Delivery::Batch(_) => unreachable!("a per-item handler"),
            })
            .unwrap()
        };
        pushed
            .set_handler(
                usize::MAX,
                "test".into(),
                Box::new(handler),
                Box::new(|| {}),
            )
            .unwrap();
        pushed.finish_failing(Error::new(ErrorKind::Timeout, "no heartbeat"));
        pushed.join_dispatcher();
        assert_eq!(
            seen.try_iter().collect::<Vec<_>>(),
            vec![Ok(7), Err(Some(ErrorKind::Timeout))]
        );

        let stopped = Feed::new(Limits::unlimited(), |_: Item| Ok(Outcome::Done));
        assert!(stopped.stop());
        assert!(stopped.finish_failing(Error::closed()));
        assert_eq!(n(stopped.next(Some(Duration::ZERO))).ok(), Some(None));
    }

    /// The first push while a reader waits owes its wake-up (and sends
    /// none); pushes after it owe nothing more; `wake_reader` delivers.
    #[test]
    fn a_push_owing_the_wake_up_leaves_it_to_wake_reader() {
        let f = Arc::new(Feed::new(Limits::unlimited(), |_: Item| Ok(Outcome::Done)));
        let reader = {
            let f = Arc::clone(&f);
            std::thread::spawn(move || {
                let first = f
                    .next(Some(Duration::from_secs(20)))
                    .map(|i| i.map(|Item(n)| n));
                let second = f.next(Some(Duration::ZERO)).map(|i| i.map(|Item(n)| n));
                (first.ok().flatten(), second.ok().flatten())
            })
        };
        while lock(&f.state).waiting == 0 {
            std::thread::sleep(Duration::from_millis(1));
        }
        let (_, _, owed) = f.push_owing_wake(Item(1));
        assert!(owed, "the waiting reader's wake-up is owed");
        let (_, _, owed) = f.push_owing_wake(Item(2));
        assert!(!owed, "one wake-up is owed for the run");
        f.wake_reader();
        assert_eq!(reader.join().unwrap(), (Some(1), Some(2)));
        // Nobody waits now: nothing is owed.
        assert!(!f.push_owing_wake(Item(3)).2);
    }
}
