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

use serde_json::{json, Value};
use tokio::sync::watch;
use tokio::time::Instant;

use super::JetStream;
use crate::client::{new_nuid, ClientInner, Flow, Lifecycle, Wake};
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
    /// 423 (ADR-42 pinned client): the request's pin id is not the
    /// consumer's current one; the request ended.
    PinMismatch,
    Other(u16, &'a str),
}

/// The pin id the server puts on messages of a pinned_client group.
pub(crate) const PIN_ID_HEADER: &str = super::header_names::PIN_ID;

/// Bytes a message counts against a pull request's `max_bytes`, as the
/// server counts them (subject, reply, headers, payload).
pub(crate) fn msg_size(m: &Message) -> usize {
    m.subject().len()
        + m.reply().map_or(0, str::len)
        + m.headers().map_or(0, |h| h.encoded_len())
        + m.payload().len()
}

fn pending_bytes_in(m: &Message) -> usize {
    m.headers()
        .and_then(|h| h.get(super::header_names::PENDING_BYTES))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0)
}

/// The 409 descriptions after which pulling again cannot help.
fn is_fatal_rejection(desc: &str) -> bool {
    desc.eq_ignore_ascii_case("consumer is push based")
}

/// 409s refusing a pull request outright, before anything is delivered
/// for it: it asks beyond the consumer's `max_batch`, `max_expires` or
/// `max_bytes` ("Exceeded MaxRequestBatch of 10", ...), or the consumer
/// holds `max_waiting` requests already ("Exceeded MaxWaiting").
pub(crate) fn is_refused_request(desc: &str) -> bool {
    let d = desc.to_ascii_lowercase();
    d.starts_with("exceeded maxrequest") || d.starts_with("exceeded maxwaiting")
}

/// 409 "Message Size Exceeds MaxBytes": the next message is bigger than
/// what the request had left.
pub(crate) fn is_max_bytes_rejection(desc: &str) -> bool {
    desc.eq_ignore_ascii_case("message size exceeds maxbytes")
}

fn pending_in(m: &Message) -> usize {
    m.headers()
        .and_then(|h| h.get(super::header_names::PENDING_MESSAGES))
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
            423 => PullStatus::PinMismatch,
            code => PullStatus::Other(code, desc),
        }
    }
}

/// nats.js's consumer notifications for a status on a pull inbox, as the
/// JSON of `Flow::status_events`: an idle heartbeat is "heartbeat" (the
/// last sequences it names); a request ended with messages or bytes left
/// is "discard"; then 409 "consumer deleted" is "consumer_deleted", a 409
/// over a limit "exceeded_limits", 423 "consumer_unpinned", 503
/// "no_responders", 400 nothing (it fails the pull), any other code
/// "debug". Descriptions lowercased, as nats.js reads them.
pub(crate) fn status_notifications(m: &Message) -> Vec<Value> {
    let Some(code) = m.status() else {
        return Vec::new();
    };
    let h = m.headers();
    let desc = h
        .and_then(|h| h.description())
        .unwrap_or("")
        .to_ascii_lowercase();
    let number = |name: &str| -> u64 {
        h.and_then(|h| h.get(name))
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or(0)
    };
    if code == 100 {
        return vec![json!({
            "type": "heartbeat",
            "last_consumer_seq": number(super::push::LAST_CONSUMER),
            "last_stream_seq": number(super::push::LAST_STREAM),
        })];
    }
    let mut out = Vec::new();
    let (messages_left, bytes_left) = (
        number(super::header_names::PENDING_MESSAGES),
        number(super::header_names::PENDING_BYTES),
    );
    if messages_left > 0 || bytes_left > 0 {
        out.push(
            json!({"type": "discard", "messages_left": messages_left, "bytes_left": bytes_left}),
        );
    }
    let limit = desc.contains("exceeded maxrequest")
        || desc.contains("exceeded maxwaiting")
        || desc == "message size exceeds maxbytes";
    match code {
        400 => {}
        409 if desc == "consumer deleted" => {
            out.push(json!({"type": "consumer_deleted", "code": code, "description": desc}))
        }
        409 if limit => {
            out.push(json!({"type": "exceeded_limits", "code": code, "description": desc}))
        }
        409 => {}
        423 => out.push(json!({"type": "consumer_unpinned"})),
        503 => out.push(json!({"type": "no_responders", "code": code})),
        _ => out.push(json!({"type": "debug", "code": code, "description": desc})),
    }
    out
}

/// Hands `events` (a flow's status events) each notification of `m`.
pub(crate) fn notify_status(events: Option<&Feed<String>>, m: &Message) {
    if let Some(events) = events {
        for n in status_notifications(m) {
            events.push(n.to_string());
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
            limits_count_handler: false,
        },
    )?;
    Ok((inbox, sub))
}

/// Removes a pull inbox's subscription (an UNSUB queued ahead of the
/// caller's next frame): the server keeps a pull request only while its
/// inbox has interest. For hooks that end a pull before its task notices.
pub(crate) fn inbox_withdrawal(
    client: &Arc<ClientInner>,
    inbox_sub: &Subscription,
) -> impl FnOnce() + Send + 'static {
    let client = Arc::downgrade(client);
    let sid = inbox_sub.sid();
    move || {
        if let Some(client) = client.upgrade() {
            client.remove_sub(sid, true);
        }
    }
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
    /// The stream elected a leader (`Puller::watching_elections`): told
    /// between two messages, never with one taken and not handed out.
    LeaderElected,
    /// A drain asked for by the flow's owner is complete: the inbox is
    /// withdrawn and everything the server sent to it was handed out.
    Drained,
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

/// What a puller's requests carry besides its window (ADR-42 priority
/// groups, byte-bounded pulls) and when it pulls again. The default adds
/// nothing: every request as the window alone makes it.
#[derive(Debug, Clone, Default)]
pub(crate) struct PullRequestExtras {
    /// The priority group the requests are for.
    pub group: Option<String>,
    /// Overflow policy: serve the requests only while the consumer has at
    /// least this many messages pending (0: not set).
    pub min_pending: u64,
    /// Overflow policy: serve them only while at least this many are
    /// awaiting acks (0: not set).
    pub min_ack_pending: u64,
    /// Prioritized policy: the requests' priority (0, the highest, is
    /// not sent: the server's default).
    pub priority: u8,
    /// Bytes kept requested (0: requests bounded by messages only). Set,
    /// it is what decides when to pull again, as in nats.go.
    pub max_bytes: usize,
    /// Pull again once what is in flight falls to this many messages
    /// (default: half of the window).
    pub threshold_messages: Option<usize>,
    /// With `max_bytes`: pull again once the bytes requested and not yet
    /// delivered fall to this (default: half of `max_bytes`).
    pub threshold_bytes: Option<usize>,
}

/// Keeps pull requests open for one consumer.
pub(crate) struct Puller {
    client: Arc<ClientInner>,
    next_subject: String,
    inbox: String,
    sub: Subscription,
    window: PullWindow,
    extras: PullRequestExtras,
    /// The pin id of the consumer's pinned_client group, once the server
    /// pinned this puller (sent with every request as "id").
    pin_id: Option<String>,
    /// Messages requested and not yet delivered (or ended by a status).
    outstanding: usize,
    /// Bytes requested (with `extras.max_bytes`) and not yet delivered.
    outstanding_bytes: usize,
    /// Requests ended by the server without a message: the next pull waits
    /// for the backoff instead of repeating at once.
    backoff: Backoff,
    hold_until: Option<Instant>,
    delivered_since_pull: bool,
    last_activity: Instant,
    /// Something arrived since `last_activity` was read from the clock
    /// (read once before waiting, not per message).
    active: bool,
    /// The feed was full with nothing requested (counted once per stall).
    stalled: bool,
    /// A stall happened since the last message was handed out.
    stalled_before_next: bool,
    /// The stream's leader-elected advisories, for a flow that heals its
    /// consumer when the stream's leadership moves (the ordered consumer);
    /// dropped once refused (no permission) or ended.
    elections: Option<Subscription>,
    /// The flow is draining (its owner asked, `Feed::request_drain`): no
    /// more requests; the inbox is withdrawn once none of them can still be
    /// answered (`drain_step`), and what the server sent before that is
    /// still handed out.
    drain: Option<Drain>,
    /// When the last request sent expires at the server.
    requests_expire_at: Instant,
    /// Where the flow's status events go (`with_status_events`).
    events: Option<Arc<Feed<String>>>,
    /// Heartbeat intervals told missed in the current silence (from the
    /// second on; 0: none), and when the server last said anything.
    missed: u32,
    heard_at: Instant,
}

/// A drain in progress. The inbox's UNSUB cannot be ordered with the
/// server's deliveries (its consumer hands a message to a request it saw
/// with interest, then routes it apart from the connection reading the
/// UNSUB): a message routed after the UNSUB reaches no one and stays
/// pending at the server. So the inbox is withdrawn only once the open
/// requests are complete, or expired, or cannot be served: a `no_wait`
/// probe on its own inbox answers 404 only when the consumer has nothing
/// left to deliver (and after what it delivered before); its one byte of
/// `max_bytes` holds no message, so it takes none from the requests
/// (those are handed out in the order they come).
struct Drain {
    /// The inbox's UNSUB was sent: what is left is handing out what came.
    withdrawn: bool,
    /// The probe's inbox while its request is open.
    probe: Option<Subscription>,
    /// When to probe next (after an answer that was not "nothing left").
    probe_at: Instant,
    probe_backoff: Backoff,
    /// The inbox is withdrawn by then whatever the probes said: the open
    /// requests have expired at the server.
    deadline: Instant,
}

/// Margin past a request's expiry after which the server has ended it.
const EXPIRY_GRACE: Duration = Duration::from_secs(1);

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
            extras: PullRequestExtras::default(),
            pin_id: None,
            outstanding: 0,
            outstanding_bytes: 0,
            backoff: Backoff::new(),
            hold_until: None,
            delivered_since_pull: false,
            last_activity: Instant::now(),
            active: false,
            stalled: false,
            stalled_before_next: false,
            elections: None,
            drain: None,
            requests_expire_at: Instant::now(),
            events: None,
            missed: 0,
            heard_at: Instant::now(),
        })
    }

    /// Tells nats.js's consumer notifications to `events` (a flow's
    /// status events): each status the server sends
    /// (`status_notifications`), each request sent ("next", with the
    /// request), the pin taken ("consumer_pinned"), and each heartbeat
    /// interval of a silence from the second on ("heartbeats_missed",
    /// counted until the server speaks again).
    pub(crate) fn with_status_events(mut self, events: Arc<Feed<String>>) -> Puller {
        self.events = Some(events);
        self
    }

    fn event(&self, event: Value) {
        if let Some(events) = &self.events {
            events.push(event.to_string());
        }
    }

    /// Ends `next` with `LeaderElected` when `elections` (a subscription to
    /// the stream's leader-elected advisory) receives one.
    pub(crate) fn watching_elections(mut self, elections: Option<Subscription>) -> Puller {
        self.elections = elections;
        self
    }

    /// The subscription `watching_elections` gave, for the next puller.
    pub(crate) fn take_elections(&mut self) -> Option<Subscription> {
        self.elections.take()
    }

    /// Withdraws the requests' inbox at the server on the thread that stops
    /// or fails `out`, before that call returns, not when this puller's task
    /// notices: what is published after `stop` returns must reach the
    /// consumer's next reader, not a request nobody reads (the server keeps
    /// a request only while its inbox has interest).
    pub(crate) fn unsubscribe_on_cut<T: FeedItem>(&self, out: &Feed<T>) {
        out.on_cut(Box::new(inbox_withdrawal(&self.client, &self.sub)));
    }

    /// Sets what the requests carry besides the window.
    pub(crate) fn with_request(mut self, extras: PullRequestExtras) -> Puller {
        self.extras = extras;
        self
    }

    /// Asks for `batch` messages and, with `extras.max_bytes`, the bytes
    /// left beside the `held_bytes` requested or buffered already.
    fn pull(&mut self, batch: usize, held_bytes: usize) -> Result<()> {
        let mut req = self.request_body(batch);
        req["expires"] = json!(nanos(self.window.expires));
        req["idle_heartbeat"] = json!(nanos(self.window.idle_heartbeat));
        let bytes = self.extras.max_bytes.saturating_sub(held_bytes);
        if self.extras.max_bytes > 0 {
            req["max_bytes"] = json!(bytes);
        }
        self.client.publish_frame(
            &self.next_subject,
            Some(&self.inbox),
            None,
            req.to_string().as_bytes(),
            Wake::Direct,
        )?;
        self.outstanding += batch;
        self.outstanding_bytes += bytes;
        self.delivered_since_pull = false;
        self.last_activity = Instant::now();
        if self.missed == 0 {
            // Heartbeats are owed from now; a silence already told goes on.
            self.heard_at = self.last_activity;
        }
        self.event(json!({"type": "next", "options": req}));
        self.requests_expire_at = self.last_activity + self.window.expires;
        Ok(())
    }

    /// A request for `batch` messages with the priority-group fields.
    fn request_body(&self, batch: usize) -> serde_json::Value {
        let mut req = json!({ "batch": batch });
        let x = &self.extras;
        if let Some(g) = &x.group {
            put_group_fields(&mut req, g, x.min_pending, x.min_ack_pending, x.priority);
            if let Some(id) = &self.pin_id {
                req["id"] = json!(id);
            }
        }
        req
    }

    /// Whether a request sent may still be answered with messages (as far
    /// as the counts tell; with bytes, a request ends when they run out).
    fn requests_open(&self) -> bool {
        self.outstanding > 0 && (self.extras.max_bytes == 0 || self.outstanding_bytes > 0)
    }

    /// Starts a drain: no more requests from now on.
    fn begin_drain(&mut self) {
        let now = Instant::now();
        self.drain = Some(Drain {
            withdrawn: false,
            probe: None,
            probe_at: now,
            probe_backoff: Backoff::new(),
            deadline: self.requests_expire_at.max(now) + EXPIRY_GRACE,
        });
    }

    /// Moves a drain on: withdraws the inbox once no open request can be
    /// answered any more (all complete, the deadline passed), else probes
    /// whether the consumer still has messages for them when due.
    fn drain_step(&mut self) {
        let open = self.requests_open();
        let Some(d) = self.drain.as_mut() else {
            return;
        };
        if d.withdrawn {
            return;
        }
        let now = Instant::now();
        if (!open && d.probe.is_none()) || now >= d.deadline {
            self.withdraw_inbox();
        } else if d.probe.is_none() && now >= d.probe_at {
            if let Err(e) = self.probe() {
                if e.kind() == ErrorKind::ConnectionClosed {
                    // The lifecycle reports the close.
                    return;
                }
                // Not sent (reconnecting): tried again after a wait.
                if let Some(d) = self.drain.as_mut() {
                    d.probe_at = now + d.probe_backoff.next();
                }
            }
        }
    }

    /// Sends the drain's probe: no wait, room for no message (a message
    /// due to it ends it with 409 instead), on its own inbox.
    fn probe(&mut self) -> Result<()> {
        let (inbox, sub) = pull_inbox(&self.client)?;
        let mut req = self.request_body(1);
        req["no_wait"] = json!(true);
        req["max_bytes"] = json!(1);
        self.client.publish_frame(
            &self.next_subject,
            Some(&inbox),
            None,
            req.to_string().as_bytes(),
            Wake::Direct,
        )?;
        if let Some(d) = self.drain.as_mut() {
            d.probe = Some(sub);
        }
        Ok(())
    }

    /// The probe's answer: 404 means nothing is left for the open
    /// requests; "requests pending" (408) or a refusal (409: a message was
    /// due, or too many requests wait) is asked again later; an error ends
    /// the drain's wait. A message (none fits) is handed out.
    fn on_probe_answer(&mut self, answer: Result<Option<Message>>) -> Option<PullEvent> {
        let d = self.drain.as_mut()?;
        d.probe = None;
        let again = |d: &mut Drain| d.probe_at = Instant::now() + d.probe_backoff.next();
        match answer {
            Ok(Some(m)) => match PullStatus::of(&m) {
                PullStatus::Msg => {
                    again(d);
                    return Some(PullEvent::Msg(m));
                }
                PullStatus::RequestEnded { .. }
                | PullStatus::Rejected(..)
                | PullStatus::PinMismatch
                    if m.status() != Some(404) =>
                {
                    again(d)
                }
                _ => self.withdraw_inbox(),
            },
            _ => self.withdraw_inbox(),
        }
        None
    }

    /// Sends the inbox's UNSUB (and a flush): the inbox ends once the
    /// server processed it (`inbox_ended`); what came before is handed out.
    fn withdraw_inbox(&mut self) {
        if let Some(d) = self.drain.as_mut() {
            d.withdrawn = true;
            d.probe = None;
        }
        drop(self.sub.drain_async(None));
    }

    /// Sends the first request now rather than when the puller's task first
    /// runs: an operation that promises to collect from the moment it
    /// completes (a watch) has its request queued ahead of anything its
    /// caller does next. A request not sent (the connection is
    /// reconnecting) is sent by `next`.
    pub(crate) fn request_now<T: FeedItem>(&mut self, out: &Feed<T>) {
        let _ = self.top_up(out);
    }

    /// Pulls what the window and the feed's room allow. Returns what the
    /// reader must hold at most (items, bytes) for pulling to become
    /// possible again, when what stops it is the reader (`None`: waiting
    /// on the server is enough).
    fn top_up<T: FeedItem>(&mut self, out: &Feed<T>) -> Result<Option<(usize, usize)>> {
        let w = self.window;
        let half = self
            .extras
            .threshold_messages
            .unwrap_or(w.messages / 2)
            .min(w.messages.saturating_sub(1));
        let fill = out.fill();
        let (len, room) = (fill.items, fill.room);
        // For consume, what the reader holds (buffered, or in a callback
        // that has not returned) counts against the window too.
        let (buffered, buffered_bytes) = if w.count_buffered {
            (fill.items, fill.bytes)
        } else {
            (0, 0)
        };
        let in_flight = self.outstanding + buffered;
        // A drain asked for stops pulling at once, before this task takes
        // the request up (nothing is pulled once the drain call returned).
        if self.drain.is_some() || out.drain_requested() {
            return Ok(None);
        }
        if self.hold_until.is_some_and(|t| t > Instant::now()) {
            // Backing off after requests that ended at once.
            return Ok(None);
        }
        if self.extras.max_bytes > 0 {
            // Bytes decide: the message window only bounds the buffer.
            let x = &self.extras;
            let at = x.threshold_bytes.unwrap_or(x.max_bytes / 2);
            if self.outstanding_bytes + buffered_bytes > at {
                return Ok(match at.checked_sub(self.outstanding_bytes) {
                    // Any item count (`usize::MAX` would mean "none waits").
                    Some(bytes) if buffered_bytes > 0 => Some((usize::MAX - 1, bytes)),
                    _ => None,
                });
            }
        } else if in_flight > half {
            // Enough requested; for consume, what it buffered counts too,
            // so the reader must take some first.
            return Ok(match half.checked_sub(self.outstanding) {
                Some(at) if w.count_buffered => Some((at, usize::MAX)),
                _ => None,
            });
        }
        let batch = (w.messages - in_flight).min(room.saturating_sub(self.outstanding));
        if batch > 0 {
            self.stalled = false;
            self.pull(batch, self.outstanding_bytes + buffered_bytes)?;
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
        Ok(Some((len.saturating_sub(1), usize::MAX)))
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
            self.drain_step();
            let wake_at = match self.top_up(out) {
                Ok(w) => w,
                Err(e) if e.kind() == ErrorKind::ConnectionClosed => return PullEvent::Failed(e),
                // Not sent (buffer full, reconnecting): retried below.
                Err(_) => None,
            };
            // A message already queued is taken without arming the wait
            // below: its timers and clock reads would cost more than the
            // message when they flow.
            if let Some(r) = self.sub.feed().try_recv() {
                match r {
                    Ok(Some(m)) => {
                        self.active = true;
                        if let Some(ev) = self.on_message(m) {
                            return ev;
                        }
                        continue;
                    }
                    Ok(None) => return self.inbox_ended(),
                    Err(e) => return PullEvent::Failed(e),
                }
            }
            if std::mem::take(&mut self.active) {
                self.last_activity = Instant::now();
                self.heard_at = self.last_activity;
            }
            let waiting = self.outstanding > 0 && self.drain.is_none();
            let heartbeat = self.window.idle_heartbeat;
            let lost_at = waiting.then(|| {
                crate::clock::tokio_instant_after(self.last_activity, heartbeat.saturating_mul(2))
            });
            // Status events tell each interval of a silence from the second
            // on, counted from the server's last word (as nats.js's monitor).
            let missed_at = (waiting && self.events.is_some()).then(|| {
                let intervals = self.missed.saturating_add(1).max(2);
                crate::clock::tokio_instant_after(
                    self.heard_at,
                    heartbeat.saturating_mul(intervals),
                )
            });
            let silent_until = match (lost_at, missed_at) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            };
            let (drain_wake, probing) = match &self.drain {
                Some(d) if !d.withdrawn => (
                    Some(match d.probe {
                        None => d.probe_at.min(d.deadline),
                        Some(_) => d.deadline,
                    }),
                    d.probe.is_some(),
                ),
                _ => (None, false),
            };
            tokio::select! {
                _ = out.until_ended() => return PullEvent::Stopped,
                _ = out.until_drain_requested(), if self.drain.is_none() => self.begin_drain(),
                _ = tokio::time::sleep_until(drain_wake.unwrap_or_else(far_future)), if drain_wake.is_some() => {}
                answer = recv_from(self.drain.as_ref().and_then(|d| d.probe.as_ref())), if probing => {
                    if let Some(ev) = self.on_probe_answer(answer) {
                        return ev;
                    }
                }
                changed = life.changed() => {
                    let closed = changed.is_err() || life.borrow_and_update().closed;
                    if closed {
                        return PullEvent::Failed(Error::closed());
                    }
                    // Reconnected: open requests may be gone with the old
                    // connection (a restarted server); ask again now (a
                    // drain withdraws the inbox instead, as no request of
                    // its own is left to end).
                    self.outstanding = 0;
                    self.outstanding_bytes = 0;
                    if let Some(d) = self.drain.as_mut() {
                        d.probe = None;
                    }
                    return PullEvent::Lost;
                }
                _ = tokio::time::sleep_until(silent_until.unwrap_or_else(far_future)), if silent_until.is_some() => {
                    let now = Instant::now();
                    if missed_at.is_some_and(|t| t <= now) {
                        self.missed = self.missed.saturating_add(1).max(2);
                        self.event(json!({"type": "heartbeats_missed", "count": self.missed}));
                    }
                    if lost_at.is_some_and(|t| t <= now) {
                        self.outstanding = 0;
                        self.outstanding_bytes = 0;
                        return PullEvent::Lost;
                    }
                }
                _ = tokio::time::sleep_until(self.hold_until.unwrap_or_else(far_future)), if self.hold_until.is_some() => {
                    self.hold_until = None;
                }
                _ = out.wait_for_room(wake_at.map_or(0, |w| w.0), wake_at.map_or(0, |w| w.1)), if wake_at.is_some() => {}
                // Like the branches above, it wins only while no message is
                // taken: a message received is handed out before it is seen.
                elected = recv_from(self.elections.as_ref()), if self.elections.is_some() => match elected {
                    Ok(Some(_)) => return PullEvent::LeaderElected,
                    // Refused (no permission) or closed: heartbeats alone.
                    _ => self.elections = None,
                },
                r = self.sub.feed().recv() => match r {
                    Ok(Some(m)) => {
                        self.active = true;
                        if let Some(ev) = self.on_message(m) {
                            return ev;
                        }
                    }
                    Ok(None) => return self.inbox_ended(),
                    Err(e) => return PullEvent::Failed(e),
                },
            }
        }
    }

    /// The inbox ended cleanly: drained, or closed under a puller that
    /// did not drain it.
    fn inbox_ended(&self) -> PullEvent {
        if self.drain.is_some() {
            PullEvent::Drained
        } else {
            PullEvent::Failed(Error::closed())
        }
    }

    /// Whether the buffer filled up (and pulling paused) since the
    /// previous message; asking resets it.
    pub(crate) fn take_stalled(&mut self) -> bool {
        std::mem::take(&mut self.stalled_before_next)
    }

    /// A request ended by a status, with `pending` messages and
    /// `pending_bytes` undelivered (0, 0: the server did not say; then
    /// all of them).
    fn request_ended(&mut self, pending: usize, pending_bytes: usize) {
        if pending > 0 || pending_bytes > 0 {
            self.outstanding = self.outstanding.saturating_sub(pending);
            self.outstanding_bytes = self.outstanding_bytes.saturating_sub(pending_bytes);
        } else {
            self.outstanding = 0;
            self.outstanding_bytes = 0;
        }
    }

    fn on_message(&mut self, m: Message) -> Option<PullEvent> {
        self.missed = 0;
        if m.status().is_some() {
            notify_status(self.events.as_deref(), &m);
        }
        match PullStatus::of(&m) {
            PullStatus::Msg => {
                self.outstanding = self.outstanding.saturating_sub(1);
                self.outstanding_bytes = self.outstanding_bytes.saturating_sub(msg_size(&m));
                self.delivered_since_pull = true;
                self.backoff.reset();
                if self.extras.group.is_some() {
                    if let Some(id) = m.headers().and_then(|h| h.get(PIN_ID_HEADER)) {
                        if self.pin_id.as_deref() != Some(id) {
                            if self.pin_id.is_none() {
                                self.event(json!({"type": "consumer_pinned", "id": id}));
                            }
                            self.pin_id = Some(id.to_string());
                        }
                    }
                }
                return Some(PullEvent::Msg(m));
            }
            PullStatus::Heartbeat => {}
            PullStatus::RequestEnded { pending_msgs } => {
                self.outstanding = self.outstanding.saturating_sub(pending_msgs);
                self.outstanding_bytes =
                    self.outstanding_bytes.saturating_sub(pending_bytes_in(&m));
            }
            PullStatus::PinMismatch => {
                // Another client holds the pin now (or it was unpinned):
                // drop ours and pull again without it at once.
                self.pin_id = None;
                self.request_ended(pending_in(&m), pending_bytes_in(&m));
            }
            PullStatus::Rejected(desc, pending) => {
                if is_fatal_rejection(desc) {
                    return Some(PullEvent::Failed(Error::new(
                        ErrorKind::JetStream,
                        format!("pull request rejected: {desc}"),
                    )));
                }
                let pending_bytes = pending_bytes_in(&m);
                if is_max_bytes_rejection(desc) && pending_bytes >= self.extras.max_bytes {
                    // Not even the whole byte budget holds the next
                    // message: it can never be delivered.
                    return Some(PullEvent::Failed(Error::new(
                        ErrorKind::JetStream,
                        format!(
                            "pull request rejected: {desc} (the next message is larger than max_bytes {})",
                            self.extras.max_bytes
                        ),
                    )));
                }
                if is_refused_request(desc) {
                    // Pulling goes on (with a backoff), but the application
                    // learns why nothing comes, as nats.go's error handler.
                    self.client.report_error(
                        Error::new(
                            ErrorKind::JetStream,
                            format!("pull request rejected: {desc}"),
                        ),
                        Some((self.sub.sid(), self.inbox.clone())),
                    );
                }
                // That request is over; without a count, all of them.
                self.request_ended(pending, pending_bytes);
                if !self.delivered_since_pull && !is_max_bytes_rejection(desc) {
                    // Ended without delivering (max waiting exceeded, a
                    // leadership change, ...): do not pull again at once,
                    // nor later than a heartbeat (a new leader is served
                    // within two).
                    let wait = self.backoff.next().min(self.window.idle_heartbeat);
                    self.hold_until = Some(Instant::now() + wait);
                }
            }
            PullStatus::ConsumerDeleted => return Some(PullEvent::ConsumerDeleted),
            PullStatus::NoResponders => {
                self.outstanding = 0;
                self.outstanding_bytes = 0;
                return Some(PullEvent::NoResponders);
            }
            PullStatus::Other(400, desc) => {
                // The server refused the request itself (a priority group
                // missing or unknown, ...): repeating it cannot help.
                return Some(PullEvent::Failed(bad_request(desc)));
            }
            PullStatus::Other(code, desc) => {
                // Unknown to this library: reported to the application's
                // error callback (as nats.go hands it to ConsumeErrHandler),
                // and pulling goes on.
                self.client.report_error(
                    Error::new(
                        ErrorKind::JetStreamApi,
                        format!("unexpected pull status {code} {desc}"),
                    ),
                    Some((self.sub.sid(), self.inbox.clone())),
                );
            }
        }
        None
    }
}

/// The error of a 400 status to a pull request.
pub(crate) fn bad_request(desc: &str) -> Error {
    let d = desc.to_ascii_lowercase();
    if d.contains("priority group missing") {
        Error::new(
            ErrorKind::InvalidArgument,
            "priority group is required (the consumer has priority groups)",
        )
    } else if d.contains("invalid priority group") {
        Error::new(
            ErrorKind::InvalidArgument,
            "invalid priority group (not one of the consumer's priority_groups)",
        )
    } else {
        Error::new(
            ErrorKind::JetStreamApi,
            format!("pull request failed: 400 {desc}"),
        )
    }
}

async fn recv_from(sub: Option<&Subscription>) -> Result<Option<Message>> {
    match sub {
        Some(sub) => sub.feed().recv().await,
        None => std::future::pending().await,
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

    /// Sleeps the next wait, `cap` at most; false if `out` ended meanwhile.
    pub(crate) async fn sleep_at_most<T: FeedItem>(
        &mut self,
        out: &Feed<T>,
        cap: Duration,
    ) -> bool {
        let d = self.next().min(cap);
        tokio::select! {
            _ = out.until_ended() => false,
            _ = tokio::time::sleep(d) => true,
        }
    }
}

/// Options of a continuous pull.
#[derive(Debug, Clone)]
pub struct ConsumeOptions {
    /// Messages kept requested and buffered at most (not used with
    /// `max_bytes`).
    pub max_messages: usize,
    /// Bytes kept requested at most (0: not set). Set, requests are
    /// bounded by bytes instead of messages (as nats.go's PullMaxBytes:
    /// each asks for up to 1,000,000 messages within the bytes left).
    pub max_bytes: usize,
    /// Lifetime of each pull request on the server.
    pub expires: Duration,
    /// Server heartbeats while a request waits; two missed ones mean the
    /// request is gone and a new one is sent.
    pub idle_heartbeat: Duration,
    /// Pull again once what is requested (and buffered) falls to this
    /// fraction of `max_messages` (of `max_bytes` with bytes); in (0, 1).
    pub threshold: f64,
    /// Overrides `threshold` for messages with a count.
    pub threshold_messages: Option<usize>,
    /// Overrides `threshold` for bytes with a count.
    pub threshold_bytes: Option<usize>,
    /// The ADR-42 priority group pulled for (required when the consumer
    /// has priority groups, refused when it has none).
    pub group: Option<String>,
    /// Overflow policy: the server serves the requests only while the
    /// consumer has at least this many messages pending (0: not set).
    pub min_pending: u64,
    /// Overflow policy: only while at least this many await acks.
    pub min_ack_pending: u64,
    /// Prioritized policy: the requests' priority, 0 (the highest, the
    /// default) to 9; needs `group`.
    pub priority: u8,
}

impl Default for ConsumeOptions {
    fn default() -> Self {
        ConsumeOptions {
            max_messages: 500,
            max_bytes: 0,
            expires: Duration::from_secs(30),
            idle_heartbeat: Duration::from_secs(15),
            threshold: 0.5,
            threshold_messages: None,
            threshold_bytes: None,
            group: None,
            min_pending: 0,
            min_ack_pending: 0,
            priority: 0,
        }
    }
}

impl ConsumeOptions {
    /// The default heartbeat for `expires`: half of it, at most 30 s.
    pub fn default_idle_heartbeat(expires: Duration) -> Duration {
        (expires / 2).min(Duration::from_secs(30))
    }
}

/// Messages asked for per request when bytes bound them (nats.go's).
const BYTES_MODE_BATCH: usize = 1_000_000;

/// Writes a pull request's priority-group fields (ADR-42) into `req`:
/// the group, and each threshold or priority that is set.
pub(crate) fn put_group_fields(
    req: &mut serde_json::Value,
    group: &str,
    min_pending: u64,
    min_ack_pending: u64,
    priority: u8,
) {
    req["group"] = json!(group);
    if min_pending > 0 {
        req["min_pending"] = json!(min_pending);
    }
    if min_ack_pending > 0 {
        req["min_ack_pending"] = json!(min_ack_pending);
    }
    if priority > 0 {
        req["priority"] = json!(priority);
    }
}

/// The highest priority number (the lowest priority) a pull request of
/// a consumer with the prioritized policy may carry (ADR-42).
pub(crate) const MAX_PULL_PRIORITY: u8 = 9;

/// Checks the priority-group fields of a pull against each other.
pub(crate) fn validate_group_fields(
    group: Option<&str>,
    min_pending: u64,
    min_ack_pending: u64,
    priority: u8,
) -> Result<()> {
    if priority > MAX_PULL_PRIORITY {
        return Err(Error::new(
            ErrorKind::InvalidArgument,
            format!("priority must be between 0 and {MAX_PULL_PRIORITY}"),
        ));
    }
    if let Some(g) = group {
        // ADR-42 group names: 1 to 16 of A-Z a-z 0-9 - _ / =.
        let ok = !g.is_empty()
            && g.len() <= 16
            && g.bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'/' | b'='));
        if !ok {
            return Err(Error::new(
                ErrorKind::InvalidArgument,
                format!("invalid priority group name {g:?} (1 to 16 of A-Z a-z 0-9 - _ / =)"),
            ));
        }
    } else if min_pending > 0 || min_ack_pending > 0 {
        return Err(Error::new(
            ErrorKind::InvalidArgument,
            "min_pending and min_ack_pending need a priority group",
        ));
    } else if priority > 0 {
        return Err(Error::new(
            ErrorKind::InvalidArgument,
            "priority needs a priority group",
        ));
    }
    Ok(())
}

/// Checks `group` against a consumer's ConsumerInfo (as nats.go does).
pub(crate) fn check_group(
    info: &serde_json::Value,
    consumer: &str,
    group: Option<&str>,
) -> Result<()> {
    let groups: Vec<&str> = info
        .pointer("/config/priority_groups")
        .and_then(serde_json::Value::as_array)
        .map(|a| a.iter().filter_map(serde_json::Value::as_str).collect())
        .unwrap_or_default();
    check_group_in(&groups, consumer, group)
}

pub(crate) fn check_group_in<S: AsRef<str>>(
    groups: &[S],
    consumer: &str,
    group: Option<&str>,
) -> Result<()> {
    match group {
        None if !groups.is_empty() => Err(Error::new(
            ErrorKind::InvalidArgument,
            format!("priority group is required: consumer {consumer:?} has priority groups"),
        )),
        None => Ok(()),
        Some(g) if groups.is_empty() => Err(Error::new(
            ErrorKind::InvalidArgument,
            format!("invalid priority group {g:?}: consumer {consumer:?} has no priority groups"),
        )),
        Some(g) if !groups.iter().any(|x| x.as_ref() == g) => Err(Error::new(
            ErrorKind::InvalidArgument,
            format!(
                "invalid priority group {g:?}: not one of consumer {consumer:?}'s priority_groups"
            ),
        )),
        Some(_) => Ok(()),
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
            if !(opts.threshold > 0.0 && opts.threshold < 1.0) {
                return Err(Error::new(
                    ErrorKind::InvalidArgument,
                    "threshold must be between 0 and 1 (exclusive)",
                ));
            }
            validate_group_fields(
                opts.group.as_deref(),
                opts.min_pending,
                opts.min_ack_pending,
                opts.priority,
            )?;
            let info = self.consumer_info(stream, consumer);
            let (js, stream, consumer) = (self.clone(), stream.to_string(), consumer.to_string());
            Ok(async move {
                // Check the consumer exists now rather than at the first
                // read, and the group against its priority groups.
                let info = info.await?;
                check_group(&info, &consumer, opts.group.as_deref())?;
                let bytes_mode = opts.max_bytes > 0;
                let messages = if bytes_mode {
                    BYTES_MODE_BATCH
                } else {
                    opts.max_messages
                };
                let window = PullWindow {
                    messages,
                    count_buffered: true,
                    expires: opts.expires,
                    idle_heartbeat: opts.idle_heartbeat,
                };
                let extras = PullRequestExtras {
                    group: opts.group.clone(),
                    min_pending: opts.min_pending,
                    min_ack_pending: opts.min_ack_pending,
                    priority: opts.priority,
                    max_bytes: opts.max_bytes,
                    threshold_messages: Some(
                        opts.threshold_messages
                            .unwrap_or((messages as f64 * opts.threshold) as usize),
                    ),
                    threshold_bytes: bytes_mode.then(|| {
                        opts.threshold_bytes
                            .unwrap_or((opts.max_bytes as f64 * opts.threshold) as usize)
                    }),
                };
                let events = super::status_event_feed();
                let puller = Puller::new(&js, &stream, &consumer, window)?
                    .with_request(extras)
                    .with_status_events(Arc::clone(&events));
                let o = &js.client().opts;
                let out = Arc::new(
                    Feed::new(
                        Limits::from_config(
                            o.pending_msgs_limit,
                            o.pending_bytes_limit,
                            PendingPolicy::DropNew,
                        ),
                        |m| Ok(crate::completion::Outcome::Msg(m)),
                    )
                    .counting_calls()
                    .drained_by_producer(),
                );
                puller.unsubscribe_on_cut(&out);
                let consuming = run_consume(puller, Arc::clone(&out), js.clone(), stream, consumer);
                let told = Arc::clone(&events);
                crate::runtime::handle().spawn(async move {
                    consuming.await;
                    // The reader still gets the events queued, then the end.
                    told.finish();
                });
                Ok(Flow::new(out, js.client(), "natsio-consume").with_status_events(events))
            })
        })
    }
}

/// How long a consume waits for the consumer info that tells a deleted
/// consumer from one without a leader.
const DIAGNOSE_BOUND: Duration = Duration::from_millis(500);

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
            // The next round pulls again (consume does not watch elections).
            PullEvent::Lost | PullEvent::LeaderElected => {}
            PullEvent::ConsumerDeleted => {
                out.fail(Error::new(
                    ErrorKind::ConsumerDeleted,
                    format!("consumer {consumer:?} was deleted"),
                ));
                return;
            }
            PullEvent::NoResponders => {
                // A missing consumer ends the consume; JetStream not ready
                // yet (a restarting server, a consumer without a leader) is
                // waited out. The meta leader says "not found" at once; a
                // consumer electing a leader answers nothing, so the question
                // is bounded and the pull repeated within a heartbeat: a new
                // leader is served within two heartbeats of its election.
                let heartbeat = puller.window.idle_heartbeat;
                let info = js.consumer_info(&stream, &consumer);
                match tokio::time::timeout(heartbeat.min(DIAGNOSE_BOUND), info).await {
                    Ok(Err(e))
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
                        if !backoff.sleep_at_most(&out, heartbeat).await {
                            return;
                        }
                    }
                }
            }
            PullEvent::Stopped => return,
            PullEvent::Drained => {
                out.finish();
                return;
            }
            PullEvent::Failed(e) => {
                out.fail(e);
                return;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn group_fields_and_priority() {
        assert!(validate_group_fields(Some("G"), 0, 0, 0).is_ok());
        assert!(validate_group_fields(Some("G"), 0, 0, MAX_PULL_PRIORITY).is_ok());
        let e = validate_group_fields(Some("G"), 0, 0, MAX_PULL_PRIORITY + 1).unwrap_err();
        assert!(e.to_string().contains("between 0 and 9"), "{e}");
        let e = validate_group_fields(None, 0, 0, 1).unwrap_err();
        assert!(
            e.to_string().contains("priority needs a priority group"),
            "{e}"
        );
        assert!(validate_group_fields(None, 0, 0, 0).is_ok());
        assert!(validate_group_fields(None, 1, 0, 0).is_err());
    }
}
