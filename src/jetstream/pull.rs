//! Pulling from a consumer (ADR-13, ADR-37): the status classifier shared
//! by fetch and the continuous flows, the pull engine (`Puller`) that keeps
//! requests open on the runtime whether or not anyone reads, and `consume`
//! on top of it.
//!
//! A flow keeps pulling into its feed up to the feed's room (consume also
//! counts what it buffered against `max_messages`, as ADR-37 does), re-pulls
//! at half its window, notices a lost request by two missed heartbeats and
//! re-pulls at once after a reconnect.

use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use tokio::sync::watch;
use tokio::time::Instant;

use super::JetStream;
use crate::client::{new_nuid, ClientInner, Flow, Lifecycle};
use crate::error::{Error, ErrorKind, Result};
use crate::feed::{Feed, FeedItem, Limits};
use crate::message::Message;
use crate::op::Op;
use crate::options::PendingPolicy;
use crate::subscription::{SubOptions, Subscription};

/// What a message on a pull inbox is (ADR-13 status codes).
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum PullStatus<'a> {
    /// A message for the application.
    Msg,
    /// 100: an idle heartbeat.
    Heartbeat,
    /// 404/408: the request ended (nothing left, or it expired) with this
    /// many of its messages undelivered.
    RequestEnded {
        pending_msgs: usize,
    },
    /// 409 "Consumer Deleted".
    ConsumerDeleted,
    /// Another 409: the request ended on a limit (batch, bytes, max
    /// waiting, a leadership change), with this many undelivered (0 when
    /// the server does not say).
    Rejected(&'a str, usize),
    /// 503: no responders (no such consumer, or JetStream unavailable).
    NoResponders,
    Other(u16, &'a str),
}

fn pending_in(m: &Message) -> usize {
    m.headers()
        .and_then(|h| h.get("Nats-Pending-Messages"))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0)
}

impl<'a> PullStatus<'a> {
    pub(crate) fn of(m: &'a Message) -> PullStatus<'a> {
        let Some(code) = m.status() else {
            return PullStatus::Msg;
        };
        let desc = m.headers().and_then(|h| h.description()).unwrap_or("");
        match code {
            100 => PullStatus::Heartbeat,
            404 | 408 => PullStatus::RequestEnded {
                pending_msgs: pending_in(m),
            },
            409 if desc.eq_ignore_ascii_case("consumer deleted") => PullStatus::ConsumerDeleted,
            409 => PullStatus::Rejected(desc, pending_in(m)),
            503 => PullStatus::NoResponders,
            code => PullStatus::Other(code, desc),
        }
    }
}

/// A fresh inbox and its subscription for pull replies. Unlimited: the
/// server never sends more than was requested, and nothing pulled may be
/// dropped.
pub(crate) fn pull_inbox(client: &Arc<ClientInner>) -> Result<(String, Subscription)> {
    let inbox = format!("{}.{}", client.opts.inbox_prefix, new_nuid());
    let sub = client.subscribe(
        &inbox,
        None,
        SubOptions {
            pending_msgs_limit: Some(0),
            pending_bytes_limit: Some(0),
            policy: PendingPolicy::DropNew,
        },
    )?;
    Ok((inbox, sub))
}

pub(crate) fn nanos(d: Duration) -> u64 {
    d.as_nanos().min(u64::MAX as u128) as u64
}

/// What the pull engine hands its flow.
pub(crate) enum PullEvent {
    Msg(Message),
    /// The open pull requests are gone (heartbeats missed, reconnected).
    Lost,
    /// 409 "Consumer Deleted".
    ConsumerDeleted,
    /// 503 to a pull: the consumer is missing or JetStream is unavailable.
    NoResponders,
    /// The flow's feed ended (its owner stopped it).
    Stopped,
    /// The client closed (or the inbox failed).
    Failed(Error),
}

/// How a puller sizes its requests.
#[derive(Debug, Clone, Copy)]
pub(crate) struct PullWindow {
    /// Messages kept requested (and, with `count_buffered`, buffered).
    pub messages: usize,
    /// Count messages buffered in the feed against `messages` (ADR-37
    /// consume); otherwise only the feed's room bounds what is buffered.
    pub count_buffered: bool,
    /// Lifetime of each pull request.
    pub expires: Duration,
    /// Server heartbeats while a request is open.
    pub idle_heartbeat: Duration,
}

/// Keeps pull requests open for one consumer.
pub(crate) struct Puller {
    client: Arc<ClientInner>,
    next_subject: String,
    inbox: String,
    sub: Subscription,
    window: PullWindow,
    /// Messages requested and not yet delivered (or ended by a status).
    outstanding: usize,
    last_activity: Instant,
    /// The feed was full with nothing requested (counted once per stall).
    stalled: bool,
    /// A stall happened since the last message was handed out.
    stalled_before_next: bool,
}

impl Puller {
    pub(crate) fn new(
        js: &JetStream,
        stream: &str,
        consumer: &str,
        window: PullWindow,
    ) -> Result<Puller> {
        let (inbox, sub) = pull_inbox(js.client())?;
        Ok(Puller {
            client: Arc::clone(js.client()),
            next_subject: format!("{}.CONSUMER.MSG.NEXT.{stream}.{consumer}", js.api_prefix()),
            inbox,
            sub,
            window,
            outstanding: 0,
            last_activity: Instant::now(),
            stalled: false,
            stalled_before_next: false,
        })
    }

    fn pull(&mut self, batch: usize) -> Result<()> {
        let req = json!({
            "batch": batch,
            "expires": nanos(self.window.expires),
            "idle_heartbeat": nanos(self.window.idle_heartbeat),
        });
        self.client.publish_frame(
            &self.next_subject,
            Some(&self.inbox),
            None,
            req.to_string().as_bytes(),
            true,
        )?;
        self.outstanding += batch;
        self.last_activity = Instant::now();
        Ok(())
    }

    /// Pulls what the window and the feed's room allow. Returns the queue
    /// length at or below which pulling becomes possible again, when what
    /// stops it is the reader (`None`: waiting on the server is enough).
    fn top_up<T: FeedItem>(&mut self, out: &Feed<T>) -> Result<Option<usize>> {
        let w = self.window;
        let half = w.messages / 2;
        let (len, room) = out.fill();
        let buffered = if w.count_buffered { len } else { 0 };
        let in_flight = self.outstanding + buffered;
        if in_flight > half {
            // Enough requested; for consume, what it buffered counts too,
            // so the reader must take some first.
            return Ok(match half.checked_sub(self.outstanding) {
                Some(at) if w.count_buffered => Some(at),
                _ => None,
            });
        }
        let batch = (w.messages - in_flight).min(room.saturating_sub(self.outstanding));
        if batch > 0 {
            self.stalled = false;
            self.pull(batch)?;
            return Ok(None);
        }
        if self.outstanding > 0 {
            // What is requested fills the buffer's room: wait for it.
            return Ok(None);
        }
        // The buffer is full: nothing more fits until the reader takes some.
        if !self.stalled {
            self.stalled = true;
            self.stalled_before_next = true;
            out.count_stall();
        }
        Ok(Some(len.saturating_sub(1)))
    }

    /// Runs until something for the flow happens.
    pub(crate) async fn next<T: FeedItem>(
        &mut self,
        out: &Feed<T>,
        life: &mut watch::Receiver<Lifecycle>,
    ) -> PullEvent {
        loop {
            if out.has_ended() {
                return PullEvent::Stopped;
            }
            let wake_at_len = match self.top_up(out) {
                Ok(w) => w,
                Err(e) if e.kind() == ErrorKind::ConnectionClosed => return PullEvent::Failed(e),
                // Not sent (buffer full, reconnecting): retried below.
                Err(_) => None,
            };
            let silent_until = (self.outstanding > 0).then(|| {
                crate::clock::tokio_instant_after(
                    self.last_activity,
                    self.window.idle_heartbeat.saturating_mul(2),
                )
            });
            tokio::select! {
                _ = out.until_ended() => return PullEvent::Stopped,
                changed = life.changed() => {
                    let closed = changed.is_err() || life.borrow_and_update().closed;
                    if closed {
                        return PullEvent::Failed(Error::closed());
                    }
                    // Reconnected: open requests may be gone with the old
                    // connection (a restarted server); ask again now.
                    self.outstanding = 0;
                    return PullEvent::Lost;
                }
                _ = tokio::time::sleep_until(silent_until.unwrap_or_else(far_future)), if silent_until.is_some() => {
                    self.outstanding = 0;
                    return PullEvent::Lost;
                }
                _ = out.wait_for_room(wake_at_len.unwrap_or(0)), if wake_at_len.is_some() => {}
                r = self.sub.feed().recv() => match r {
                    Ok(Some(m)) => {
                        self.last_activity = Instant::now();
                        if let Some(ev) = self.on_message(m) {
                            return ev;
                        }
                    }
                    Ok(None) => return PullEvent::Failed(Error::closed()),
                    Err(e) => return PullEvent::Failed(e),
                },
            }
        }
    }

    /// Whether the buffer filled up (and pulling paused) since the
    /// previous message; asking resets it.
    pub(crate) fn take_stalled(&mut self) -> bool {
        std::mem::take(&mut self.stalled_before_next)
    }

    fn on_message(&mut self, m: Message) -> Option<PullEvent> {
        match PullStatus::of(&m) {
            PullStatus::Msg => {
                self.outstanding = self.outstanding.saturating_sub(1);
                return Some(PullEvent::Msg(m));
            }
            PullStatus::Heartbeat | PullStatus::Other(..) => {}
            PullStatus::RequestEnded { pending_msgs } => {
                self.outstanding = self.outstanding.saturating_sub(pending_msgs);
            }
            PullStatus::Rejected(_, pending) => {
                // That request is over; without a count, all of them.
                self.outstanding = if pending > 0 {
                    self.outstanding.saturating_sub(pending)
                } else {
                    0
                };
            }
            PullStatus::ConsumerDeleted => return Some(PullEvent::ConsumerDeleted),
            PullStatus::NoResponders => {
                self.outstanding = 0;
                return Some(PullEvent::NoResponders);
            }
        }
        None
    }
}

fn far_future() -> Instant {
    Instant::now() + Duration::from_secs(86_400 * 365)
}

/// Growing waits between retries: 100 ms doubling up to 5 s (ADR-17).
pub(crate) struct Backoff(u32);

impl Backoff {
    pub(crate) fn new() -> Backoff {
        Backoff(0)
    }

    pub(crate) fn reset(&mut self) {
        self.0 = 0;
    }

    pub(crate) fn next(&mut self) -> Duration {
        let d = Duration::from_millis(100u64 << self.0.min(6)).min(Duration::from_secs(5));
        self.0 += 1;
        d
    }

    /// Sleeps the next wait; false if `out` ended meanwhile.
    pub(crate) async fn sleep<T: FeedItem>(&mut self, out: &Feed<T>) -> bool {
        let d = self.next();
        tokio::select! {
            _ = out.until_ended() => false,
            _ = tokio::time::sleep(d) => true,
        }
    }
}

/// Options of a continuous pull.
#[derive(Debug, Clone)]
pub struct ConsumeOptions {
    /// Messages kept requested and buffered at most.
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

/// A running consume: messages pulled continuously from one consumer.
pub type Consumption = Flow<Message>;

impl JetStream {
    /// Starts pulling continuously from `consumer` of `stream` (once it is
    /// known to exist), into a buffer read through the flow.
    pub fn consume(&self, stream: &str, consumer: &str, opts: ConsumeOptions) -> Op<Consumption> {
        Op::build(|| {
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
            let info = self.consumer_info(stream, consumer);
            let (js, stream, consumer) = (self.clone(), stream.to_string(), consumer.to_string());
            Ok(async move {
                // Check the consumer exists now rather than at the first read.
                info.await?;
                let window = PullWindow {
                    messages: opts.max_messages,
                    count_buffered: true,
                    expires: opts.expires,
                    idle_heartbeat: opts.idle_heartbeat,
                };
                let puller = Puller::new(&js, &stream, &consumer, window)?;
                let o = &js.client().opts;
                let out = Arc::new(Feed::new(
                    Limits::from_config(
                        o.pending_msgs_limit,
                        o.pending_bytes_limit,
                        PendingPolicy::DropNew,
                    ),
                    |m| Ok(crate::completion::Outcome::Msg(m)),
                ));
                crate::runtime::handle().spawn(run_consume(
                    puller,
                    Arc::clone(&out),
                    js.clone(),
                    stream,
                    consumer,
                ));
                Ok(Flow::new(out, js.client(), "natsio-consume"))
            })
        })
    }
}

async fn run_consume(
    mut puller: Puller,
    out: Arc<Feed<Message>>,
    js: JetStream,
    stream: String,
    consumer: String,
) {
    let mut life = js.client().lifecycle();
    let mut backoff = Backoff::new();
    loop {
        match puller.next(&out, &mut life).await {
            PullEvent::Msg(m) => {
                backoff.reset();
                out.push(m);
            }
            // The next round pulls again.
            PullEvent::Lost => {}
            PullEvent::ConsumerDeleted => {
                out.fail(Error::new(
                    ErrorKind::ConsumerDeleted,
                    format!("consumer {consumer:?} was deleted"),
                ));
                return;
            }
            PullEvent::NoResponders => {
                // A missing consumer ends the consume; JetStream not ready
                // yet (a restarting server) is waited out.
                match js.consumer_info(&stream, &consumer).await {
                    Err(e)
                        if matches!(
                            e.kind(),
                            ErrorKind::ConsumerNotFound | ErrorKind::StreamNotFound
                        ) =>
                    {
                        out.fail(Error::new(
                            ErrorKind::ConsumerNotFound,
                            format!("consumer {consumer:?} of stream {stream:?} is gone"),
                        ));
                        return;
                    }
                    _ => {
                        if !backoff.sleep(&out).await {
                            return;
                        }
                    }
                }
            }
            PullEvent::Stopped => return,
            PullEvent::Failed(e) => {
                out.fail(e);
                return;
            }
        }
    }
}
