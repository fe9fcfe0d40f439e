//! Subscriptions: a feed of messages filled by the connection's read path,
//! read through the one iterator contract (`next`, `next_async`, or a
//! handler in push mode).

use std::sync::Arc;
use std::time::Duration;

use std::sync::atomic::Ordering;

use crate::client::inner::ClientInner;
use crate::client::routing::{no_responders, SubShared};
use crate::client::state::ConnState;
use crate::completion::Completion;
use crate::error::{Error, ErrorKind, Result};
use crate::feed::{Feed, FeedStats, Handler};
use crate::message::Message;
use crate::options::PendingPolicy;
use crate::proto;
use crate::subject;

/// Per-subscription overrides of the client's pending limits.
#[derive(Debug, Clone, Copy, Default)]
pub struct SubOptions {
    /// `None`: the client's default. `Some(n)` with n <= 0: unlimited.
    pub pending_msgs_limit: Option<i64>,
    pub pending_bytes_limit: Option<i64>,
    pub policy: PendingPolicy,
    /// The message a push-mode handler is busy with counts against the
    /// limits until the handler returns, as nats.go counts it (a service
    /// endpoint's limits: a handler holding one request leaves room for
    /// one request fewer). Off: only what waits counts.
    pub limits_count_handler: bool,
}

/// Live counters of a subscription.
pub type SubStats = FeedStats;

impl ClientInner {
    pub(crate) fn subscribe(
        self: &Arc<Self>,
        subject: &str,
        queue: Option<&str>,
        o: SubOptions,
    ) -> Result<Subscription> {
        subject::validate_subscribe(subject)?;
        if let Some(q) = queue {
            subject::validate_queue(q)?;
        }
        if self.state() == ConnState::Closed {
            return Err(Error::closed());
        }
        if self.state() == ConnState::Draining {
            return Err(Error::new(
                ErrorKind::ConnectionClosed,
                "connection is draining",
            ));
        }
        let sid = self.routing.next_sid();
        let shared = Arc::new(SubShared::new(
            sid,
            subject.to_string(),
            queue.map(str::to_string),
            o.pending_msgs_limit.unwrap_or(self.opts.pending_msgs_limit),
            o.pending_bytes_limit
                .unwrap_or(self.opts.pending_bytes_limit),
            o.policy,
            o.limits_count_handler,
        ));
        self.routing.insert(Arc::clone(&shared));
        self.write
            .enqueue_control(|b| proto::write_sub(b, subject, queue, sid));
        if self.state() == ConnState::Closed {
            self.routing.remove(sid);
            return Err(Error::closed());
        }
        Ok(Subscription {
            shared,
            client: Arc::clone(self),
        })
    }

    /// A subscription the library makes for itself and does without (see
    /// `SubShared::optional`).
    pub(crate) fn subscribe_optional(self: &Arc<Self>, subject: &str) -> Result<Subscription> {
        let sub = self.subscribe(subject, None, SubOptions::default())?;
        sub.shared.optional.store(true, Ordering::Relaxed);
        Ok(sub)
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
