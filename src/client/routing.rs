//! Routing on the read path: the subscriptions registry (sid to
//! subscription), each subscription's state shared with the read path
//! (`SubShared`), the wake-ups the reading task owes their readers, and
//! how the reader waits for a consumer that lags (`give_way`) or is full
//! under the BLOCK policy (`wait_for_room`).

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::client::state::Shutdown;
use crate::completion::{lock, Outcome};
use crate::error::{Error, ErrorKind, Result};
use crate::feed::{Feed, FeedStats, Limits, Pushed};
use crate::message::Message;
use crate::options::PendingPolicy;
use crate::proto;

/// Wake-ups the reading task owes to subscriptions' readers (dispatchers,
/// blocked `next` calls). A reader woken at the first message of a run
/// empties the queue faster than the reading thread fills it and sleeps
/// again: a futex wake and two context switches every few messages. Owed,
/// the wake-up goes once the run ends (`send`: before the next socket
/// read, before the reading task waits or yields, on its way out) or after
/// `OWED_WAKE_MAX_MSGS` messages, which bounds the delay it adds.
#[derive(Default)]
pub(crate) struct OwedWakes {
    subs: Vec<Arc<SubShared>>,
    msgs: usize,
}

/// Messages routed at most while a wake-up is owed.
const OWED_WAKE_MAX_MSGS: usize = 256;

impl OwedWakes {
    pub(crate) fn owe(&mut self, sub: Arc<SubShared>) {
        self.subs.push(sub);
    }

    /// Counts a routed message; true when owed wake-ups are due.
    pub(crate) fn due(&mut self) -> bool {
        if self.subs.is_empty() {
            return false;
        }
        self.msgs += 1;
        self.msgs >= OWED_WAKE_MAX_MSGS
    }

    pub(crate) fn send(&mut self) {
        for sub in self.subs.drain(..) {
            sub.wake_reader();
        }
        self.msgs = 0;
    }
}

impl Drop for OwedWakes {
    fn drop(&mut self) {
        self.send();
    }
}

pub(crate) fn no_responders() -> Error {
    Error::new(
        ErrorKind::NoResponders,
        "no responders available for request",
    )
}

/// What a subscription's `next_async` completes with: the message, or
/// `NoResponders` for a no-responders status (iterator semantics; push
/// mode hands the status message itself to the handler).
fn sub_outcome(m: Message) -> Result<Outcome> {
    if m.is_no_responders() {
        Err(no_responders())
    } else {
        Ok(Outcome::Msg(m))
    }
}

/// The subscription's state shared with the client's read path.
pub(crate) struct SubShared {
    pub sid: u64,
    pub subject: String,
    pub queue_group: Option<String>,
    pub policy: PendingPolicy,
    pub(crate) feed: Arc<Feed<Message>>,
    /// A subscription the library makes for itself, which works without
    /// (a leader-elected advisory): a permissions violation for it is not
    /// the application's error; it ends the subscription quietly.
    pub(crate) optional: std::sync::atomic::AtomicBool,
    /// Told of each slow-consumer report of this subscription (on the
    /// events thread, just before the client's error callback): a service
    /// endpoint counts it as the endpoint's error.
    pub(crate) slow_listener: std::sync::OnceLock<SlowListener>,
}

/// See `SubShared::slow_listener`.
pub(crate) type SlowListener = Arc<dyn Fn(&Error) + Send + Sync>;

impl SubShared {
    pub(crate) fn new(
        sid: u64,
        subject: String,
        queue_group: Option<String>,
        msgs: i64,
        bytes: i64,
        policy: PendingPolicy,
        limits_count_handler: bool,
    ) -> Self {
        SubShared {
            sid,
            subject,
            queue_group,
            policy,
            feed: Arc::new({
                let feed = Feed::new(Limits::from_config(msgs, bytes, policy), sub_outcome);
                if limits_count_handler {
                    feed.limiting_calls()
                } else {
                    feed
                }
            }),
            optional: std::sync::atomic::AtomicBool::new(false),
            slow_listener: std::sync::OnceLock::new(),
        }
    }

    /// Offers a message from the read path. Never blocks.
    /// Queues a message for the reader, whose wake-up is left owed: see
    /// `Feed::push_owing_wake`.
    pub(crate) fn push_owing_wake(&self, msg: Message) -> (Pushed, bool, bool) {
        self.feed.push_owing_wake(msg)
    }

    pub(crate) fn wake_reader(&self) {
        self.feed.wake_reader()
    }

    pub(crate) fn must_wait_for_room(&self) -> bool {
        self.feed.must_wait_for_room()
    }

    pub(crate) fn should_report_slow(&self) -> bool {
        self.feed.should_report_slow()
    }

    /// No more messages will arrive (auto-unsubscribe reached, drain
    /// flushed). Returns true once the subscription has ended.
    pub(crate) fn finish(&self) -> bool {
        self.feed.finish()
    }

    /// Ends the subscription now with `reason`, discarding the backlog.
    pub(crate) fn fail(&self, reason: Error) -> bool {
        self.feed.fail(reason)
    }

    /// For re-subscribing after a reconnect: `None` if the subscription no
    /// longer wants messages, else what remains of its auto-unsubscribe count.
    pub(crate) fn resend_state(&self) -> Option<Option<u64>> {
        self.feed.remaining()
    }

    pub(crate) fn stats(&self) -> FeedStats {
        self.feed.stats()
    }
}

/// The subscriptions of a client, by sid.
pub(crate) struct Routing {
    subs: Mutex<HashMap<u64, Arc<SubShared>, BuildHasherDefault<IdHasher>>>,
    next_sid: AtomicU64,
}

impl Default for Routing {
    fn default() -> Self {
        Routing {
            subs: Mutex::new(HashMap::default()),
            next_sid: AtomicU64::new(1),
        }
    }
}

impl Routing {
    /// A new subscription id (the request mux takes one too).
    pub(crate) fn next_sid(&self) -> u64 {
        self.next_sid.fetch_add(1, Ordering::Relaxed)
    }

    pub(crate) fn insert(&self, sub: Arc<SubShared>) {
        lock(&self.subs).insert(sub.sid, sub);
    }

    /// The subscription a message's sid names.
    pub(crate) fn get(&self, sid: u64) -> Option<Arc<SubShared>> {
        lock(&self.subs).get(&sid).cloned()
    }

    /// Removes `sid`; true when it was registered.
    pub(crate) fn remove(&self, sid: u64) -> bool {
        lock(&self.subs).remove(&sid).is_some()
    }

    /// Every subscription, in sid order.
    pub(crate) fn all(&self) -> Vec<Arc<SubShared>> {
        let mut subs: Vec<_> = lock(&self.subs).values().cloned().collect();
        subs.sort_by_key(|s| s.sid);
        subs
    }

    /// The subscriptions `pick` selects.
    pub(crate) fn select(&self, pick: impl Fn(&SubShared) -> bool) -> Vec<Arc<SubShared>> {
        lock(&self.subs)
            .values()
            .filter(|s| pick(s))
            .cloned()
            .collect()
    }

    /// Empties the registry (the client closes).
    pub(crate) fn take_all(&self) -> Vec<Arc<SubShared>> {
        lock(&self.subs).drain().map(|(_, s)| s).collect()
    }

    /// Wakes a reader paused by the BLOCK policy (to notice a shutdown).
    pub(crate) fn wake_paused_readers(&self) {
        for s in lock(&self.subs).values() {
            s.feed.space.notify_waiters();
        }
    }

    /// The SUB frames (and what is left of their auto-unsubscribe counts)
    /// that re-establish the subscriptions on a new connection.
    pub(crate) fn write_resubscribes(&self, frames: &mut Vec<u8>) {
        for sub in &self.all() {
            if let Some(remaining) = sub.resend_state() {
                proto::write_sub(frames, &sub.subject, sub.queue_group.as_deref(), sub.sid);
                if remaining.is_some() {
                    proto::write_unsub(frames, sub.sid, remaining);
                }
            }
        }
    }
}

/// Request ids and subscription ids are counters: a multiplicative hash
/// spreads them well and costs far less than SipHash on the hot paths
/// (every reply, every message routed).
#[derive(Default)]
pub(crate) struct IdHasher(u64);

impl Hasher for IdHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 = (self.0.rotate_left(8) ^ u64::from(*b)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
    }
    fn write_u64(&mut self, id: u64) {
        self.0 = id.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
}

/// How long the reader waits at most for a lagging consumer
/// (`give_way`).
const GIVE_WAY_MAX: Duration = Duration::from_millis(20);

/// A subscription's consumer lags (its backlog is past the bound of
/// `Pushed::Backlogged`): stop reading until it has taken half of what
/// is queued, for GIVE_WAY_MAX at most, so that a consumer that keeps up
/// on average holds a bounded backlog and what it has not taken yet waits
/// in the socket and the server, as with the official clients (issue 45:
/// a Go handler's backlog sat at 32 MiB; a Node subscriber's, whose JS
/// thread also publishes, spiked to 15k messages of 1 KiB while a
/// publish paused for write room). One that took less in that time lags
/// for good: it is not waited for again until its backlog falls under
/// the bound, so it cannot pace the connection's other subscriptions,
/// and the pending limits apply. The wait is the same for a push-mode
/// handler and a pull-mode reader: a reader that is itself paused in a
/// publish (the server may hold that publish's room until this reader
/// reads) costs one wait, then the reader reads on. It once gave up the
/// CPU per message instead: beside a CPU hog each yield cost a scheduler
/// slice, reading crawled, and the server cut the connection as a slow
/// consumer (a Node subscriber whose JS thread was publishing lost a
/// fifth of 32 MiB; issue 46).
pub(crate) async fn give_way(sub: &SubShared, shutdown: &Shutdown) {
    let feed = &sub.feed;
    let (queued, may_wait) = feed.give_way_state();
    if !may_wait {
        return;
    }
    let target = queued / 2;
    let deadline = tokio::time::Instant::now() + GIVE_WAY_MAX;
    loop {
        let notified = feed.space.notified();
        tokio::pin!(notified);
        notified.as_mut().enable();
        feed.want_room(Some(target));
        if feed.give_way_state().0 <= target || shutdown.is_set() {
            break;
        }
        if tokio::time::timeout_at(deadline, notified).await.is_err() {
            feed.give_way_ran_out();
            break;
        }
    }
    feed.want_room(None);
}

/// BLOCK policy: stop reading until the consumer makes room.
pub(crate) async fn wait_for_room(sub: &SubShared, shutdown: &Shutdown) {
    let feed = &sub.feed;
    loop {
        let notified = feed.space.notified();
        tokio::pin!(notified);
        notified.as_mut().enable();
        feed.want_room(Some(feed.limits().items));
        if !sub.must_wait_for_room() || shutdown.is_set() {
            break;
        }
        notified.await;
    }
    feed.want_room(None);
}

/// The subject and queue group a server's "Permissions Violation for
/// Subscription to "<subject>" [using queue "<queue>"]" error names (the
/// text as the server sends it, quoted or not, in any case).
pub(crate) fn refused_subscription(text: &str) -> Option<(&str, Option<&str>)> {
    const PREFIX: &str = "permissions violation for subscription to \"";
    let text = text.trim_matches(|c| c == '\'' || c == ' ');
    if !text.get(..PREFIX.len())?.eq_ignore_ascii_case(PREFIX) {
        return None;
    }
    let refused = &text[PREFIX.len()..];
    Some(match refused.split_once("\" using queue \"") {
        Some((subject, queue)) => (subject, Some(queue.trim_end_matches('"'))),
        None => (refused.trim_end_matches('"'), None),
    })
}
