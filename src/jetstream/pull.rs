//! Continuous pulling from a consumer (the reference's `consume()`): one
//! inbox subscription, pull requests re-issued as messages are taken so
//! that about `max_messages` stay requested, idle heartbeats watched to
//! notice a lost request. Everything runs in the caller's `next` (no
//! thread of its own); `stop` may be called from any thread.

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::json;

use super::JetStream;
use crate::client::new_nuid;
use crate::error::{Error, ErrorKind, Result};
use crate::message::Message;
use crate::subscription::{SubOptions, SubShared, Subscription};

/// Options of a continuous pull.
#[derive(Debug, Clone)]
pub struct ConsumeOptions {
    /// Messages kept requested (and buffered) at most.
    pub max_messages: usize,
    /// Lifetime of each pull request on the server.
    pub expires: Duration,
    /// Server heartbeats while a request waits; two missed ones mean the
    /// request is gone and a new one is sent.
    pub idle_heartbeat: Duration,
}

impl Default for ConsumeOptions {
    fn default() -> Self {
        ConsumeOptions {
            max_messages: 500,
            expires: Duration::from_secs(30),
            idle_heartbeat: Duration::from_secs(15),
        }
    }
}

/// Stops a `PullStream` from another thread: a blocked `next` returns.
#[derive(Clone)]
pub struct PullStopper {
    shared: Arc<SubShared>,
    client: Arc<crate::client::ClientInner>,
}

impl PullStopper {
    pub fn stop(&self) {
        let stopped = Error::new(ErrorKind::SubscriptionClosed, "consumption stopped");
        if self.shared.close(stopped) {
            self.client.remove_sub(self.shared.sid, true);
        }
    }
}

/// A continuous pull from one consumer.
pub struct PullStream {
    js: JetStream,
    sub: Subscription,
    inbox: String,
    next_subject: String,
    opts: ConsumeOptions,
    /// Messages requested and not yet delivered (or ended by a status).
    outstanding: usize,
    /// When a message or heartbeat last arrived (or a request was sent).
    last_activity: Instant,
}

fn pending_in(m: &Message) -> usize {
    m.headers()
        .and_then(|h| h.get("Nats-Pending-Messages"))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0)
}

impl JetStream {
    /// Starts pulling continuously from `consumer` of `stream`.
    pub fn consume(
        &self,
        stream: &str,
        consumer: &str,
        opts: ConsumeOptions,
    ) -> Result<PullStream> {
        super::config::validate_name("stream", stream)?;
        super::config::validate_name("consumer", consumer)?;
        if opts.max_messages == 0 {
            return Err(Error::new(
                ErrorKind::InvalidArgument,
                "max_messages must be at least 1",
            ));
        }
        if opts.expires < Duration::from_secs(1) {
            return Err(Error::new(
                ErrorKind::InvalidArgument,
                "expires must be at least 1 s",
            ));
        }
        if opts.idle_heartbeat.is_zero() || opts.idle_heartbeat > opts.expires / 2 {
            return Err(Error::new(
                ErrorKind::InvalidArgument,
                "idle_heartbeat must be positive and at most half of expires",
            ));
        }
        // Check the consumer exists now rather than at the first `next`.
        self.consumer_info(stream, consumer)?;
        let client = &self.shared.client;
        let inbox = format!("{}.{}", client.opts.inbox_prefix, new_nuid());
        // The queue never holds more than what was requested.
        let limits = SubOptions {
            pending_msgs_limit: Some((opts.max_messages as i64).saturating_mul(2).max(1024)),
            ..SubOptions::default()
        };
        let sub = client.subscribe(&inbox, None, limits)?;
        Ok(PullStream {
            js: self.clone(),
            sub,
            inbox,
            next_subject: format!(
                "{}.CONSUMER.MSG.NEXT.{stream}.{consumer}",
                self.shared.prefix
            ),
            opts,
            outstanding: 0,
            last_activity: Instant::now(),
        })
    }
}

impl PullStream {
    /// A handle that stops this stream from any thread.
    pub fn stopper(&self) -> PullStopper {
        PullStopper {
            shared: Arc::clone(&self.sub.shared),
            client: Arc::clone(&self.sub.client),
        }
    }

    pub fn is_stopped(&self) -> bool {
        self.sub.is_closed()
    }

    fn request(&mut self) -> Result<()> {
        let batch = self.opts.max_messages - self.outstanding;
        let req = json!({
            "batch": batch,
            "expires": self.opts.expires.as_nanos() as u64,
            "idle_heartbeat": self.opts.idle_heartbeat.as_nanos() as u64,
        });
        self.js.shared.client.publish_frame(
            &self.next_subject,
            Some(&self.inbox),
            None,
            req.to_string().as_bytes(),
            true,
        )?;
        self.outstanding = self.opts.max_messages;
        self.last_activity = Instant::now();
        Ok(())
    }

    /// The next message, waiting up to `timeout` (forever if `None`).
    /// `Timeout` when none came in time; `SubscriptionClosed` once stopped;
    /// `ConsumerDeleted` / `ConsumerNotFound` when the consumer goes away.
    pub fn next(&mut self, timeout: Option<Duration>) -> Result<Message> {
        crate::runtime::ensure_may_block()?;
        let deadline = timeout.map(|t| Instant::now() + t);
        let heartbeat_gap = self.opts.idle_heartbeat * 2;
        loop {
            // Keep about max_messages requested: re-pull at half.
            if self.outstanding <= self.opts.max_messages / 2 {
                self.request()?;
            }
            let silent_until = self.last_activity + heartbeat_gap;
            let now = Instant::now();
            let wake = match deadline {
                Some(d) => d.min(silent_until),
                None => silent_until,
            };
            let m = match self
                .sub
                .next_raw_msg(Some(wake.saturating_duration_since(now)))
            {
                Ok(m) => m,
                Err(e) if e.kind() == ErrorKind::Timeout => {
                    if deadline.is_some_and(|d| Instant::now() >= d) {
                        return Err(Error::timeout("consume next"));
                    }
                    // Two heartbeats missed: the request is lost (server
                    // restart, leader change); ask again.
                    self.outstanding = 0;
                    continue;
                }
                Err(e) => {
                    // Closing the client closes every subscription: report
                    // the cause, not the inbox.
                    let client_closed =
                        self.js.shared.client.state() == crate::client::ConnState::Closed;
                    if e.kind() == ErrorKind::SubscriptionClosed && client_closed {
                        return Err(Error::closed());
                    }
                    return Err(e);
                }
            };
            self.last_activity = Instant::now();
            match m.status() {
                None => {
                    self.outstanding = self.outstanding.saturating_sub(1);
                    return Ok(m);
                }
                Some(100) => {} // heartbeat
                Some(404 | 408) => {
                    self.outstanding = self.outstanding.saturating_sub(pending_in(&m));
                }
                Some(409) => {
                    let desc = m.headers().and_then(|h| h.description()).unwrap_or("");
                    if desc.eq_ignore_ascii_case("consumer deleted") {
                        self.stopper().stop();
                        return Err(Error::new(
                            ErrorKind::ConsumerDeleted,
                            "consumer was deleted",
                        ));
                    }
                    // Limits reached for that request (max bytes, max
                    // waiting, leadership change): it is over.
                    let left = pending_in(&m);
                    self.outstanding = self.outstanding.saturating_sub(if left > 0 {
                        left
                    } else {
                        self.outstanding
                    });
                }
                Some(503) => {
                    self.stopper().stop();
                    return Err(Error::new(
                        ErrorKind::ConsumerNotFound,
                        "no responders for the pull request: the consumer is gone",
                    ));
                }
                Some(_) => {} // unknown statuses are ignored
            }
        }
    }

    /// Stops pulling (messages already buffered are dropped).
    pub fn stop(&self) {
        self.stopper().stop();
    }
}

impl Drop for PullStream {
    fn drop(&mut self) {
        self.stop();
    }
}

impl std::fmt::Debug for PullStream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PullStream")
            .field("subject", &self.next_subject)
            .field("outstanding", &self.outstanding)
            .finish()
    }
}
