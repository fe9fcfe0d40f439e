//! Subscriptions: a feed of messages filled by the connection's read path,
//! read through the one iterator contract (`next`, `next_async`, or a
//! handler in push mode).

use std::sync::Arc;
use std::time::Duration;

use crate::client::ClientInner;
use crate::completion::{Completion, Outcome};
use crate::error::{Error, ErrorKind, Result};
use crate::feed::{Feed, FeedStats, Handler, Limits, Pushed};
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
pub type SubStats = FeedStats;

fn no_responders() -> Error {
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
            policy,
            feed: Arc::new(Feed::new(
                Limits::from_config(msgs, bytes, policy),
                sub_outcome,
            )),
            optional: std::sync::atomic::AtomicBool::new(false),
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

    pub(crate) fn stats(&self) -> SubStats {
        self.feed.stats()
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

    /// True once the subscription has ended.
    pub fn is_closed(&self) -> bool {
        self.shared.feed.has_ended()
    }

    pub(crate) fn feed(&self) -> &Arc<Feed<Message>> {
        &self.shared.feed
    }

    /// Waits up to `timeout` (forever if `None`) for the next message.
    /// `Ok(None)`: the subscription has ended (stopped, drained, or its
    /// auto-unsubscribe count reached); a no-responders status fails with
    /// `NoResponders`.
    pub fn next_msg(&self, timeout: Option<Duration>) -> Result<Option<Message>> {
        crate::runtime::ensure_may_block()?;
        match self.shared.feed.next(timeout)? {
            Some(m) if m.is_no_responders() => Err(no_responders()),
            m => Ok(m),
        }
    }

    /// A completion for the next message (`Outcome::Msg`, or `Outcome::End`).
    pub fn next_async(&self) -> Result<Arc<Completion>> {
        self.shared.feed.next_async()
    }

    /// Delivers messages to `handler` on a library thread instead: every
    /// message (status messages included), then the end; `on_exit` runs
    /// after its last call.
    pub fn set_handler(
        &self,
        handler: Handler<Message>,
        on_exit: Box<dyn FnOnce() + Send>,
    ) -> Result<()> {
        self.set_batch_handler(1, handler, on_exit)
    }

    /// `set_handler` with up to `max` messages per call
    /// (`Delivery::Batch`).
    pub fn set_batch_handler(
        &self,
        max: usize,
        handler: Handler<Message>,
        on_exit: Box<dyn FnOnce() + Send>,
    ) -> Result<()> {
        self.shared.feed.set_batch_handler(
            Arc::as_ptr(&self.client) as usize,
            format!("natsio-sub-{}", self.shared.sid),
            max,
            handler,
            on_exit,
        )
    }

    /// Unsubscribes at once, discarding the backlog; iteration ends.
    /// After it returns the handler runs no more (unless called from it).
    /// Stopping an ended subscription does nothing.
    pub fn stop(&self) {
        // A subscription that ended by itself (drain, auto-unsubscribe) is
        // unsubscribed on the server already; it still leaves the registry.
        let stopped_now = self.shared.feed.stop();
        self.client.remove_sub(self.shared.sid, stopped_now);
        self.shared.feed.join_dispatcher();
    }

    /// Asks the server to stop after `max` messages in total; the
    /// subscription then ends once they are handled.
    pub fn unsubscribe_after(&self, max: u64) -> Result<()> {
        if max == 0 {
            return Err(Error::new(
                ErrorKind::InvalidArgument,
                "max must be positive",
            ));
        }
        let reached = self.shared.feed.set_max(max)?;
        if reached {
            self.client.remove_sub(self.shared.sid, true);
            self.shared.finish();
        } else {
            self.client.send_unsub(self.shared.sid, Some(max));
        }
        Ok(())
    }

    /// Starts a graceful drain: no new messages, the backlog is handled,
    /// then the subscription ends and the completion succeeds.
    /// Starts a drain: the completion reports when the backlog is handled,
    /// or fails with a timeout once `timeout` passes (`None`: no bound).
    pub fn drain_async(&self, timeout: Option<Duration>) -> Arc<Completion> {
        self.client.drain_sub(&self.shared).within(timeout, "drain")
    }

    /// A completion for the subscription's end that takes no message: done
    /// once it ended cleanly (the backlog handled after a drain, an
    /// unsubscribe count or the server's end), failed with
    /// `SubscriptionClosed` once stopped, or with the error that ended it.
    /// For a reader that stops taking messages for a while (a full window
    /// towards another runtime) and must still learn of the end.
    pub fn end_async(&self) -> Arc<Completion> {
        let c = Completion::new();
        self.shared.feed.add_drain_waiter(Arc::clone(&c));
        c
    }

    /// Drains and waits up to `timeout` for the backlog to be handled.
    pub fn drain(&self, timeout: Option<Duration>) -> Result<()> {
        crate::runtime::ensure_may_block()?;
        let c = self.drain_async(None);
        match c.wait(timeout) {
            Some(r) => {
                r?;
                // Drained: the handler's final call comes before this returns.
                self.shared.feed.join_dispatcher();
                Ok(())
            }
            None => Err(Error::timeout("drain")),
        }
    }
}

impl Drop for Subscription {
    fn drop(&mut self) {
        self.stop();
    }
}
