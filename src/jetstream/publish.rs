//! Publishing to streams: synchronous publish-and-wait-for-ack, and
//! asynchronous publishes bounded by a window of unacknowledged messages.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, MutexGuard, Weak};
use std::time::{Duration, Instant};

use serde::Deserialize;

use super::header_names as names;
use super::{merged_headers, JetStream, Shared};
use crate::client::{ClientInner, OnReply, ReplyHandler};
use crate::completion::{lock, Completion, Outcome};
use crate::error::{Error, ErrorKind, Result};
use crate::headers::Headers;
use crate::message::Message;
use crate::op::Op;
use crate::op::Urgency;

/// The server's acknowledgement of a stored message.
#[derive(Debug, Clone, Deserialize, PartialEq, Eq)]
pub struct PubAck {
    pub stream: String,
    pub seq: u64,
    #[serde(default)]
    pub duplicate: bool,
    #[serde(default)]
    pub domain: Option<String>,
    /// Counter streams: the counter's value after this message.
    #[serde(default)]
    pub val: Option<String>,
    /// Atomic batch publishes (ADR-50): the batch's id, on its last message.
    #[serde(default, rename = "batch")]
    pub batch_id: Option<String>,
    /// Atomic batch publishes: how many messages the batch stored.
    #[serde(default, rename = "count")]
    pub batch_size: u64,
}

/// Per-message TTL (`Nats-TTL`, server 2.11+ with `allow_msg_ttl`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ttl {
    Seconds(u64),
    Never,
}

/// Options of one publish; all optional.
#[derive(Debug, Clone, Default)]
pub struct PublishOptions {
    pub headers: Option<Headers>,
    /// `Nats-Msg-Id`: deduplication within the stream's duplicate window.
    pub msg_id: Option<String>,
    pub expected_stream: Option<String>,
    pub expected_last_seq: Option<u64>,
    pub expected_last_subject_seq: Option<u64>,
    /// The subject (may be a wildcard) `expected_last_subject_seq` applies to.
    pub expected_last_subject_seq_subject: Option<String>,
    pub expected_last_msg_id: Option<String>,
    pub ttl: Option<Ttl>,
    /// Ack wait (default: the context's timeout, or its async publish timeout).
    pub timeout: Option<Duration>,
    /// Asynchronous publishes only: while others await their acks, queue
    /// this one without waking the connection's writer; it goes out within
    /// about a millisecond, or sooner with the next frame that wakes the
    /// writer, at a stall in the publish window, at a blocking wait, past
    /// 64 KiB queued, or at `Client::send_deferred`. For a batching
    /// publisher: one write per run of publishes.
    pub defer_send: bool,
    /// Times "no responders" (no stream listening yet: a leader may be
    /// moving, ADR-22) is retried before the publish fails with
    /// `NoStreamResponse`; `None`: 2 (nats.go's DefaultPubRetryAttempts).
    pub retry_attempts: Option<u32>,
    /// The wait before each such retry; `None`: 250 ms (nats.go's
    /// DefaultPubRetryWait).
    pub retry_wait: Option<Duration>,
}

impl PublishOptions {
    /// The retries after "no responders" and the wait before each.
    fn retries(&self) -> (u32, Duration) {
        (
            self.retry_attempts.unwrap_or(NO_RESPONDERS_RETRIES),
            self.retry_wait.unwrap_or(NO_RESPONDERS_WAIT),
        )
    }

    fn is_plain(&self) -> bool {
        self.headers.is_none()
            && self.msg_id.is_none()
            && self.expected_stream.is_none()
            && self.expected_last_seq.is_none()
            && self.expected_last_subject_seq.is_none()
            && self.expected_last_subject_seq_subject.is_none()
            && self.expected_last_msg_id.is_none()
            && self.ttl.is_none()
    }

    /// The headers on the wire: the user's plus the JetStream ones.
    pub(crate) fn wire_headers(&self) -> Result<Option<Headers>> {
        if self.is_plain() {
            return Ok(None);
        }
        let mut extra: Vec<(&str, String)> = Vec::new();
        if let Some(v) = &self.msg_id {
            extra.push((names::MSG_ID, v.clone()));
        }
        if let Some(v) = &self.expected_stream {
            extra.push((names::EXPECTED_STREAM, v.clone()));
        }
        if let Some(v) = self.expected_last_seq {
            extra.push((names::EXPECTED_LAST_SEQUENCE, v.to_string()));
        }
        if let Some(v) = self.expected_last_subject_seq {
            extra.push((names::EXPECTED_LAST_SUBJECT_SEQUENCE, v.to_string()));
        }
        if let Some(v) = &self.expected_last_subject_seq_subject {
            if self.expected_last_subject_seq.is_none() {
                return Err(Error::new(
                    ErrorKind::InvalidArgument,
                    "expected_last_subject_seq_subject needs expected_last_subject_seq",
                ));
            }
            extra.push((names::EXPECTED_LAST_SUBJECT_SEQUENCE_SUBJECT, v.clone()));
        }
        if let Some(v) = &self.expected_last_msg_id {
            extra.push((names::EXPECTED_LAST_MSG_ID, v.clone()));
        }
        match self.ttl {
            Some(Ttl::Never) => extra.push((names::TTL, "never".into())),
            Some(Ttl::Seconds(0)) => {
                return Err(Error::new(
                    ErrorKind::InvalidArgument,
                    "ttl must be at least 1 second (or never)",
                ))
            }
            Some(Ttl::Seconds(s)) => extra.push((names::TTL, format!("{s}s"))),
            None => {}
        }
        merged_headers(self.headers.as_ref(), &extra)
    }
}

/// A publish's reply as a PubAck, or the error it carries.
pub(crate) fn parse_pub_ack(msg: &Message) -> Result<PubAck> {
    if msg.is_no_responders() {
        return Err(no_stream_response());
    }
    parse_pub_ack_json(msg.payload())
}

/// A publish reply's JSON: an ack, or `{"error":{...}}`. Read straight
/// into a struct (no intermediate `Value` map: this runs once per publish).
pub fn parse_pub_ack_json(payload: &[u8]) -> Result<PubAck> {
    #[derive(Deserialize)]
    struct Reply {
        error: Option<serde_json::Value>,
        stream: Option<String>,
        seq: Option<u64>,
        #[serde(default)]
        duplicate: bool,
        domain: Option<String>,
        val: Option<String>,
        batch: Option<String>,
        #[serde(default)]
        count: u64,
    }
    let invalid = |e: &dyn std::fmt::Display| {
        Error::new(ErrorKind::JetStream, format!("invalid publish ack: {e}"))
    };
    let reply: Reply = serde_json::from_slice(payload).map_err(|e| invalid(&e))?;
    if let Some(err) = reply.error {
        return Err(super::api_error(&err));
    }
    match (reply.stream, reply.seq) {
        (Some(stream), Some(seq)) => Ok(PubAck {
            stream,
            seq,
            duplicate: reply.duplicate,
            domain: reply.domain,
            val: reply.val,
            batch_id: reply.batch,
            batch_size: reply.count,
        }),
        _ => Err(invalid(&"no stream or seq")),
    }
}

fn no_stream_response() -> Error {
    Error::new(
        ErrorKind::NoStreamResponse,
        "no stream answered the publish (no stream matches the subject?)",
    )
}

/// The outcome of an asynchronous publish's reply (runs where the reply is
/// routed).
fn ack_outcome(reply: Result<Message>) -> Result<Outcome> {
    match reply {
        Ok(m) => parse_pub_ack(&m).map(Outcome::value),
        Err(e) => Err(match e.kind() {
            ErrorKind::NoResponders => no_stream_response(),
            ErrorKind::Timeout => async_publish_timeout(),
            _ => e,
        }),
    }
}

fn async_publish_timeout() -> Error {
    Error::new(
        ErrorKind::AsyncPublishTimeout,
        "no ack for the asynchronous publish in time",
    )
}

/// An asynchronous publish in flight: what a retry re-sends.
struct AsyncPublish {
    client: Weak<ClientInner>,
    /// The subject's bytes, then the payload's (one allocation).
    frame: Vec<u8>,
    subject_len: usize,
    headers: Option<Headers>,
    /// The ack's deadline, the same across retries.
    deadline: Instant,
    /// The wait before each retry.
    retry_wait: Duration,
    /// The request id in flight (for a cancel).
    id: AtomicU64,
}

impl AsyncPublish {
    fn subject(&self) -> &str {
        // Built from a &str.
        std::str::from_utf8(&self.frame[..self.subject_len]).unwrap_or_default()
    }

    fn payload(&self) -> &[u8] {
        &self.frame[self.subject_len..]
    }

    /// Sends again after the retry wait, unless cancelled meanwhile; fails
    /// at the ack deadline if that comes first (no request is in flight
    /// meanwhile for the client's deadline timer to expire).
    async fn retry(self: Arc<Self>, done: Arc<Completion>, retries: u32) {
        let resend_at = crate::clock::deadline_in(self.retry_wait);
        if resend_at >= self.deadline {
            tokio::time::sleep_until(self.deadline.into()).await;
            if !done.is_done() {
                done.complete(Err(async_publish_timeout()));
            }
            return;
        }
        tokio::time::sleep(self.retry_wait).await;
        if done.is_done() {
            return;
        }
        let Some(client) = self.client.upgrade() else {
            done.complete(Err(Error::closed()));
            return;
        };
        let handler: Arc<dyn ReplyHandler> = Arc::clone(&self) as _;
        match client.start_request_into(
            self.subject(),
            self.headers.as_ref(),
            self.payload(),
            Urgency::Coalesce,
            &done,
            OnReply::Handle(handler, retries),
        ) {
            Ok(id) => {
                self.id.store(id, Ordering::Release);
                crate::client::requests::Deadlines::arm(&client, self.deadline, id, &done);
            }
            Err(e) => {
                done.complete(Err(e));
            }
        }
    }
}

impl ReplyHandler for AsyncPublish {
    /// `retries`: attempts left after this one.
    fn on_reply(self: Arc<Self>, reply: Result<Message>, done: Arc<Completion>, retries: u32) {
        match reply {
            Err(e) if e.kind() == ErrorKind::NoResponders && retries > 0 => {
                crate::runtime::handle().spawn(self.retry(done, retries - 1));
            }
            reply => {
                done.complete(ack_outcome(reply));
            }
        }
    }
}

/// Retries after "no responders" (ADR-22: a stream leader may be moving).
const NO_RESPONDERS_RETRIES: u32 = 2;
const NO_RESPONDERS_WAIT: Duration = Duration::from_millis(250);

impl Shared {
    /// Takes a slot of the async window, waiting up to the stall wait.
    fn reserve(&self) -> Result<()> {
        let max = self.opts.publish_async_max_pending;
        let mut w = lock(&self.window);
        if w.pending >= max {
            crate::runtime::ensure_may_block()?;
            // The acks awaited may be for publishes not sent yet.
            self.client.send_deferred();
            w = self.wait_window(w, Some(self.opts.publish_async_stall_wait), |w| {
                w.pending >= max
            });
            if w.pending >= max {
                return Err(Error::new(
                    ErrorKind::TooManyStalledMsgs,
                    format!("{} asynchronous publishes await acks", w.pending),
                ));
            }
        }
        w.pending += 1;
        Ok(())
    }

    /// Waits (counted as a waiter, so `release` notifies) while `blocked`
    /// holds, at most `timeout` (None: forever).
    fn wait_window<'a>(
        &self,
        mut w: MutexGuard<'a, super::Window>,
        timeout: Option<Duration>,
        mut blocked: impl FnMut(&mut super::Window) -> bool,
    ) -> MutexGuard<'a, super::Window> {
        w.waiters += 1;
        let mut w = match timeout {
            None => self
                .window_cv
                .wait_while(w, blocked)
                .unwrap_or_else(|p| p.into_inner()),
            Some(t) => {
                self.window_cv
                    .wait_timeout_while(w, t, &mut blocked)
                    .unwrap_or_else(|p| p.into_inner())
                    .0
            }
        };
        w.waiters -= 1;
        w
    }

    fn release(&self) {
        let mut w = lock(&self.window);
        w.pending -= 1;
        let idle = w.pending == 0;
        if w.waiters > 0 {
            drop(w);
            self.window_cv.notify_all();
        } else {
            drop(w);
        }
        if idle {
            self.idle.notify_waiters();
        }
    }
}

impl JetStream {
    /// Publishes and waits for the stream's ack. "No responders" is retried
    /// (`retry_attempts`, by default twice, `retry_wait` apart, by default
    /// 250 ms), then fails with `NoStreamResponse`.
    pub fn publish(&self, subject: &str, payload: &[u8], opts: &PublishOptions) -> Op<PubAck> {
        Op::build(|| {
            crate::subject::validate_publish(subject)?;
            let headers = opts.wire_headers()?;
            let timeout = opts.timeout.unwrap_or(self.shared.opts.timeout);
            let client = Arc::clone(&self.shared.client);
            let (subject, payload) = (subject.to_string(), payload.to_vec());
            let (attempts, wait) = opts.retries();
            Ok(async move {
                let mut retries = 0;
                loop {
                    let reply =
                        client.request_fut(&subject, headers.as_ref(), &payload, timeout)?;
                    match reply.await {
                        Ok(msg) => return parse_pub_ack(&msg),
                        Err(e) if e.kind() == ErrorKind::NoResponders => {
                            if retries == attempts {
                                return Err(no_stream_response());
                            }
                            retries += 1;
                            tokio::time::sleep(wait).await;
                        }
                        Err(e) => return Err(e),
                    }
                }
            })
        })
    }

    /// Publishes without waiting: the completion yields the PubAck
    /// (`Outcome::Value` holding a `PubAck`). Stalls up to the stall wait while
    /// `publish_async_max_pending` publishes await acks, then fails with
    /// `TooManyStalledMsgs`. "No responders" is retried as `publish` does
    /// (ADR-22), then fails with `NoStreamResponse`. An
    /// ack that does not come within the async timeout fails the completion
    /// with `AsyncPublishTimeout`.
    ///
    /// The frame is coalesced with other writes unless no other request of
    /// the client awaits its reply (then written at once when the writer is
    /// idle), the
    /// ack is parsed on the reading thread, and one timer per context
    /// expires late acks: no task per publish (one only for a retry).
    pub fn publish_async(
        &self,
        subject: &str,
        payload: &[u8],
        opts: &PublishOptions,
    ) -> Result<Arc<Completion>> {
        let headers = opts.wire_headers()?;
        let o = &self.shared.opts;
        let timeout = opts
            .timeout
            .or(o.publish_async_timeout)
            .unwrap_or(o.timeout);
        let client = &self.shared.client;
        let mut frame = Vec::with_capacity(subject.len() + payload.len());
        frame.extend_from_slice(subject.as_bytes());
        frame.extend_from_slice(payload);
        let (attempts, retry_wait) = opts.retries();
        let plan = Arc::new(AsyncPublish {
            client: Arc::downgrade(client),
            frame,
            subject_len: subject.len(),
            headers,
            deadline: crate::clock::deadline_in(timeout),
            retry_wait,
            id: AtomicU64::new(0),
        });
        self.shared.reserve()?;
        let done = Completion::new();
        let id = match client.start_request_into(
            subject,
            plan.headers.as_ref(),
            payload,
            // At once when no other request (or ack) is awaited: one
            // publish waited for at a time; a stream of them coalesces.
            if opts.defer_send {
                Urgency::Deferred
            } else {
                Urgency::IfAlone
            },
            &done,
            OnReply::Handle(Arc::clone(&plan) as _, attempts),
        ) {
            Ok(id) => id,
            Err(e) => {
                self.shared.release();
                return Err(e);
            }
        };
        plan.id.store(id, Ordering::Release);
        let shared = Arc::clone(&self.shared);
        done.on_complete(move || shared.release());
        let cancel = Arc::clone(&plan);
        done.add_cancel_hook(move || {
            if let Some(c) = cancel.client.upgrade() {
                c.unregister_request(cancel.id.load(Ordering::Acquire));
            }
        });
        // Late acks time out through the client's one deadline timer.
        crate::client::requests::Deadlines::arm(client, plan.deadline, id, &done);
        Ok(done)
    }

    /// Asynchronous publishes awaiting their ack.
    pub fn publish_async_pending(&self) -> usize {
        lock(&self.shared.window).pending
    }

    /// Waits until every asynchronous publish has its ack (or failed), at
    /// most `timeout` (`None`: as long as it takes).
    pub fn publish_async_complete(&self, timeout: Option<Duration>) -> Op<()> {
        let shared = Arc::clone(&self.shared);
        shared.client.send_deferred();
        Op::new(async move {
            let all_done = async {
                loop {
                    let idle = shared.idle.notified();
                    tokio::pin!(idle);
                    idle.as_mut().enable();
                    if lock(&shared.window).pending == 0 {
                        return;
                    }
                    idle.await;
                }
            };
            match timeout {
                None => {
                    all_done.await;
                    Ok(())
                }
                Some(t) => tokio::time::timeout(t, all_done).await.map_err(|_| {
                    Error::new(
                        ErrorKind::Timeout,
                        format!(
                            "{} asynchronous publishes still await acks",
                            lock(&shared.window).pending
                        ),
                    )
                }),
            }
        })
    }
}
