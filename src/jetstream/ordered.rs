//! The ordered consumer (ADR-17): an ephemeral, unacknowledged, memory
//! consumer read in stream order by a pull flow on the runtime. It heals
//! itself: a gap in its consumer sequence, missed heartbeats, a reconnect
//! or the consumer's loss make it delete the consumer and create a new one
//! starting after the last stream sequence delivered (duplicates are
//! dropped). KV watch, keys and history run on it.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use tokio::time::Instant;

use serde_json::{json, Value};

use super::consumer::{parse_metadata, MsgMetadata};
use super::pull::{nanos, Backoff, Consumption, PullEvent, PullWindow, Puller};
use super::{CreateAction, JetStream};
use crate::client::{new_nuid, Flow};
use crate::error::{Error, ErrorKind, Result};
use crate::feed::{Feed, FeedItem, Limits, ToOutcome};
use crate::log::log;
use crate::message::Message;
use crate::op::Op;
use crate::subscription::Subscription;

/// Where an ordered consumer starts.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum DeliverPolicy {
    #[default]
    All,
    Last,
    /// Only messages stored after it starts.
    New,
    ByStartSequence(u64),
    /// An RFC 3339 time.
    ByStartTime(String),
    LastPerSubject,
}

/// An ordered consumer's configuration.
#[derive(Debug, Clone)]
pub(crate) struct OrderedConfig {
    pub stream: String,
    pub filter_subjects: Vec<String>,
    pub deliver: DeliverPolicy,
    pub headers_only: bool,
    /// End once the messages that existed at creation are delivered.
    pub until_drained: bool,
    /// Messages per pull request at most.
    pub batch: usize,
    pub expires: Duration,
    pub idle_heartbeat: Duration,
    /// The buffer between the consumer and its reader.
    pub limits: Limits,
    /// The filter takes in every subject of the stream, so any gap in
    /// stream sequences is a message missed (not one of another subject).
    pub covers_stream: bool,
}

/// Lifetime of an ordered consumer once its reader is gone (nats.go's and
/// nats.js's default).
const INACTIVE_THRESHOLD: Duration = Duration::from_secs(5 * 60);

/// What the server-side consumers of one ordered consumer are called and
/// kept as, beyond what they read: as nats.go names its own,
/// `<prefix>_<serial>` (the serial counting creations from 1), so that a
/// program printing its consumer's info sees the official clients' shape.
struct ConsumerShape {
    name_prefix: String,
    /// Consumers created so far.
    serial: u64,
    inactive_threshold: Duration,
    /// Not set by default (nats.go's choice; nats.js sets 1).
    max_deliver: Option<i64>,
    /// Send one filter subject as a list (`filter_subjects`), as nats.js
    /// does with a list, rather than as `filter_subject` (nats.go).
    filter_subjects_as_list: bool,
    /// The consumers' metadata (empty: none sent).
    metadata: BTreeMap<String, String>,
}

impl ConsumerShape {
    fn new() -> ConsumerShape {
        ConsumerShape {
            name_prefix: new_nuid(),
            serial: 0,
            inactive_threshold: INACTIVE_THRESHOLD,
            max_deliver: None,
            filter_subjects_as_list: false,
            metadata: BTreeMap::new(),
        }
    }

    /// The name of the next consumer.
    fn next_name(&mut self) -> String {
        self.serial += 1;
        format!("{}_{}", self.name_prefix, self.serial)
    }
}

/// Turns an ordered consumer's messages into a flow's items.
pub(crate) trait OrderedSink: Send + 'static {
    type Item: FeedItem;

    /// The consumer was (re)created with `pending` messages to deliver.
    fn started(&mut self, _pending: u64, _out: &Feed<Self::Item>) {}

    /// A message, in order, without gaps or duplicates.
    fn deliver(&mut self, m: Message, md: &MsgMetadata<'_>, out: &Feed<Self::Item>) -> Result<()>;

    /// How an error ends the flow (e.g. a missing stream as a missing bucket).
    fn map_error(&self, e: Error) -> Error {
        e
    }
}

/// What an ordered consumer keeps between its runs: its configuration,
/// its server-side consumer and its position in the stream.
struct Core {
    js: JetStream,
    cfg: OrderedConfig,
    shape: ConsumerShape,
    consumer: Option<String>,
    /// The current consumer's name, for readers outside the run.
    current: Arc<std::sync::Mutex<Option<String>>>,
    last_stream_seq: u64,
    last_consumer_seq: u64,
    /// Where a consumer recreated before any message arrived resumes: for
    /// `New`, the stream's last sequence at the first creation; for other
    /// policies, set once a creation found nothing pending (see
    /// `create_consumer`).
    anchor: Option<u64>,
    /// A consumer asked for and not answered (the create was given up): the
    /// next create deletes it, in case the server makes it late.
    unanswered: Option<String>,
    /// Count what the reader has not taken yet against `cfg.batch`, as
    /// consume does: a paused reader then holds at most `batch` messages
    /// requested and buffered together (OrderedConsumer::messages), not
    /// the whole stream up to the buffer's limits.
    count_buffered: bool,
    /// The status events of a `messages` run (its pullers' and "reset" /
    /// "ordered_consumer_recreated" when the consumer is recreated, as
    /// nats.js names them); `None` for the other runs (watches).
    events: Option<Arc<Feed<String>>>,
}

/// One run of an ordered consumer: its core pulling into one feed.
struct Ordered<S: OrderedSink> {
    core: Core,
    sink: S,
    out: Arc<Feed<S::Item>>,
    /// End the flow with `NoMessages` when nothing arrives for this long.
    idle_timeout: Option<Duration>,
}

fn is_fatal(e: &Error) -> bool {
    matches!(
        e.kind(),
        ErrorKind::StreamNotFound | ErrorKind::ConnectionClosed
    )
}

impl Core {
    fn new(js: JetStream, cfg: OrderedConfig) -> Core {
        Core {
            js,
            cfg,
            shape: ConsumerShape::new(),
            consumer: None,
            current: Default::default(),
            last_stream_seq: 0,
            last_consumer_seq: 0,
            anchor: None,
            unanswered: None,
            count_buffered: false,
            events: None,
        }
    }

    fn event(&self, event: Value) {
        if let Some(events) = &self.events {
            events.push(event.to_string());
        }
    }

    fn deliver_config(&self) -> Value {
        let resume_after = match (self.last_stream_seq, self.anchor) {
            (0, None) => None,
            (0, Some(a)) => Some(a),
            (last, _) => Some(last),
        };
        if let Some(seq) = resume_after {
            return json!({ "deliver_policy": "by_start_sequence", "opt_start_seq": seq + 1 });
        }
        match &self.cfg.deliver {
            DeliverPolicy::All => json!({ "deliver_policy": "all" }),
            DeliverPolicy::Last => json!({ "deliver_policy": "last" }),
            DeliverPolicy::New => json!({ "deliver_policy": "new" }),
            DeliverPolicy::LastPerSubject => json!({ "deliver_policy": "last_per_subject" }),
            DeliverPolicy::ByStartSequence(s) => {
                json!({ "deliver_policy": "by_start_sequence", "opt_start_seq": s })
            }
            DeliverPolicy::ByStartTime(t) => {
                json!({ "deliver_policy": "by_start_time", "opt_start_time": t })
            }
        }
    }

    /// Creates the next server-side consumer (deleting the previous one);
    /// returns its info.
    async fn create_consumer(&mut self) -> Result<Value> {
        for old in [self.consumer.take(), self.unanswered.take()]
            .into_iter()
            .flatten()
        {
            self.js.delete_consumer_nowait(&self.cfg.stream, &old);
        }
        let name = self.shape.next_name();
        // nats.go's fields (jetstream/ordered.go, getConsumerConfig).
        let mut cfg = json!({ "name": name });
        for (k, v) in self.deliver_config().as_object().into_iter().flatten() {
            cfg[k] = v.clone();
        }
        cfg["ack_policy"] = "none".into();
        cfg["inactive_threshold"] = nanos(self.shape.inactive_threshold).into();
        cfg["num_replicas"] = 1.into();
        if self.cfg.headers_only {
            cfg["headers_only"] = true.into();
        }
        cfg["mem_storage"] = true.into();
        if let Some(n) = self.shape.max_deliver {
            cfg["max_deliver"] = n.into();
        }
        if !self.shape.metadata.is_empty() {
            cfg["metadata"] = json!(self.shape.metadata);
        }
        match self.cfg.filter_subjects.as_slice() {
            [] => {}
            [one] if !self.shape.filter_subjects_as_list => {
                cfg["filter_subject"] = Value::from(one.as_str())
            }
            many => cfg["filter_subjects"] = Value::from(many.to_vec()),
        }
        self.unanswered = Some(name);
        let info = self
            .js
            .create_consumer(&self.cfg.stream, &cfg.to_string(), CreateAction::Create)
            .await;
        self.unanswered = None;
        let info = info?;
        let name = info
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        let pending = pending_of(&info);
        // Where a consumer recreated before any message arrived resumes.
        // `New` always resumes at its first creation. Any other policy
        // with nothing pending at its first creation has delivered its
        // whole initial set (none): recreating it with the same policy
        // would skip what was stored meanwhile (a `last_per_subject` watch
        // would see only the latest of several new revisions), so it
        // resumes right after the position the server chose.
        if self.anchor.is_none()
            && self.last_stream_seq == 0
            && (self.cfg.deliver == DeliverPolicy::New || pending == 0)
        {
            let at = info
                .pointer("/delivered/stream_seq")
                .and_then(Value::as_u64)
                .unwrap_or(0);
            self.anchor = Some(at);
        }
        *crate::completion::lock(&self.current) = Some(name.clone());
        self.consumer = Some(name);
        self.last_consumer_seq = 0;
        Ok(info)
    }

    /// A puller on the current consumer; on failure the consumer is
    /// deleted (and forgotten).
    fn puller(&mut self) -> Result<Puller> {
        let Some(name) = self.consumer.clone() else {
            return Err(Error::new(
                ErrorKind::Internal,
                "ordered consumer not created",
            ));
        };
        let window = PullWindow {
            messages: self.cfg.batch,
            count_buffered: self.count_buffered,
            expires: self.cfg.expires,
            idle_heartbeat: self.cfg.idle_heartbeat,
        };
        let puller = Puller::new(&self.js, &self.cfg.stream, &name, window).inspect_err(|_| {
            self.js.delete_consumer_nowait(&self.cfg.stream, &name);
            self.consumer = None;
        })?;
        Ok(match &self.events {
            Some(events) => puller.with_status_events(Arc::clone(events)),
            None => puller,
        })
    }

    /// Deletes the current consumer, if any.
    async fn delete_consumer(&mut self) -> Result<()> {
        match self.consumer.take() {
            Some(name) => match self.js.delete_consumer(&self.cfg.stream, &name).await {
                Err(e) if e.kind() != ErrorKind::ConsumerNotFound => Err(e),
                _ => Ok(()),
            },
            None => Ok(()),
        }
    }
}

fn pending_of(info: &Value) -> u64 {
    info.get("num_pending").and_then(Value::as_u64).unwrap_or(0)
}

impl<S: OrderedSink> Ordered<S> {
    /// A fresh engine (no consumer yet) delivering into a new feed.
    fn with_new_feed(
        js: JetStream,
        cfg: OrderedConfig,
        sink: S,
        to_outcome: ToOutcome<S::Item>,
    ) -> Ordered<S> {
        Ordered {
            out: Arc::new(Feed::new(cfg.limits, to_outcome)),
            core: Core::new(js, cfg),
            sink,
            idle_timeout: None,
        }
    }

    /// Starts pulling from the current consumer, which has `pending`
    /// messages to deliver.
    fn attach(&mut self, pending: u64) -> Result<Puller> {
        let puller = self.core.puller()?;
        self.sink.started(pending, &self.out);
        if self.core.cfg.until_drained && pending == 0 {
            self.out.finish();
        }
        Ok(puller)
    }

    /// Creates the next consumer (deleting the previous one) and its puller.
    async fn create(&mut self) -> Result<Puller> {
        let info = self.core.create_consumer().await?;
        let client = self.core.js.client();
        log!(
            client.log,
            Debug,
            "ordered consumer on {}: {} created on {}, {} pending",
            self.core.cfg.stream,
            info.get("name").and_then(Value::as_str).unwrap_or("?"),
            info.pointer("/cluster/leader")
                .and_then(Value::as_str)
                .unwrap_or("?"),
            pending_of(&info)
        );
        self.attach(pending_of(&info))
    }

    /// Recreates the consumer, with backoff between failed attempts; `None`
    /// when the flow ended meanwhile (or failed for good).
    async fn recreate(&mut self) -> Option<Puller> {
        let mut backoff = Backoff::new();
        // A create sent while the stream or the meta group has no leader, or
        // placed on a server that was killed and is not yet known offline,
        // is never answered (a healthy one is answered in milliseconds):
        // rather than wait out the API timeout, ask again after a heartbeat,
        // 1 to 2 s, so the first create after an election goes out within
        // 2 s of it (a bound doubling after each miss let an election of a
        // few seconds cost up to a whole API timeout more). Only after five
        // misses in a row, longer than an election lasts, does the bound
        // double (up to the API timeout), for a server that answers slowly.
        // A create given up is deleted by the next one.
        let api_timeout = self.core.js.options().timeout;
        let mut bound = self
            .core
            .cfg
            .idle_heartbeat
            .clamp(Duration::from_secs(1), Duration::from_secs(2))
            .min(api_timeout);
        let mut misses = 0u32;
        loop {
            if self.out.has_ended() {
                return None;
            }
            match tokio::time::timeout(bound, self.create()).await {
                Ok(Ok(p)) => return Some(p),
                Ok(Err(e)) if is_fatal(&e) => {
                    self.out.fail(self.sink.map_error(e));
                    return None;
                }
                Ok(Err(_)) => {
                    // Answered with an error (no responders, 10008 during
                    // an election): wait a little, a heartbeat at most.
                    let cap = self.core.cfg.idle_heartbeat;
                    if !backoff.sleep_at_most(&self.out, cap).await {
                        return None;
                    }
                }
                // Unanswered: the bound was the wait.
                Err(_) => {
                    misses += 1;
                    if misses % 5 == 0 {
                        bound = (bound * 2).min(api_timeout);
                    }
                }
            }
        }
    }

    /// Reports what the stream discarded (a history or age limit) before it
    /// could be delivered, so that nothing is skipped in silence: when the
    /// filter is the whole stream any gap in stream sequences is such a
    /// message (counted as dropped); otherwise a gap right after a full
    /// buffer paused pulling may hide some.
    ///
    /// The first message counts from the anchor, when there is one: the
    /// position the consumer started after, with nothing of the initial set
    /// to skip. A revision stored and then discarded (a later one of its key
    /// in a history-1 bucket) before the consumer's first delivery is missed
    /// like any other (on a loaded machine, or while the buffer holds the
    /// initial-done marker and nothing is pulled). Without an anchor the
    /// initial set may skip sequences by design (last per subject).
    fn report_gap(&self, seq: u64, after_stall: bool) {
        let after = match (self.core.last_stream_seq, self.core.anchor) {
            (0, None) => return,
            (0, Some(anchor)) => anchor,
            (last, _) => last,
        };
        if seq <= after + 1 {
            return;
        }
        let gap = seq - after - 1;
        let why = if after_stall {
            "while the reader's buffer was full"
        } else {
            "before they could be delivered"
        };
        let detail = if self.core.cfg.covers_stream {
            self.out.count_dropped(gap);
            format!(
                "{}: {gap} message(s) after stream sequence {after} were discarded by the stream {why}",
                self.core.cfg.stream
            )
        } else if after_stall {
            format!(
                "{}: the reader's buffer was full; messages the stream discarded before sequence {seq} are not delivered",
                self.core.cfg.stream
            )
        } else {
            return;
        };
        self.core
            .js
            .client()
            .report_error(Error::new(ErrorKind::SlowConsumer, detail), None);
    }

    /// Handles one message; false when the consumer must be recreated.
    fn on_message(&mut self, m: Message, after_stall: bool) -> Result<bool> {
        let md = match parse_metadata(m.reply().unwrap_or("")) {
            Ok(md) => md,
            Err(_) => return Ok(true), // not a consumer delivery: ignore
        };
        if md.consumer_seq != self.core.last_consumer_seq + 1 {
            return Ok(false);
        }
        self.core.last_consumer_seq = md.consumer_seq;
        if md.stream_seq <= self.core.last_stream_seq {
            return Ok(true); // seen before a reset
        }
        self.report_gap(md.stream_seq, after_stall);
        self.core.last_stream_seq = md.stream_seq;
        let drained = md.num_pending == 0;
        self.sink.deliver(m.clone(), &md, &self.out)?;
        if self.core.cfg.until_drained && drained {
            self.out.finish();
        }
        Ok(true)
    }

    /// The `NoMessages` error an idle timeout ends the flow with.
    fn idle_error(&self) -> Error {
        let t = self.idle_timeout.unwrap_or_default();
        Error::new(
            ErrorKind::NoMessages,
            format!(
                "{}: no message arrived for the idle timeout ({} ms)",
                self.core.cfg.stream,
                t.as_millis()
            ),
        )
    }

    /// A subscription to the stream's leader-elected advisories, where the
    /// API is this account's own (`$JS.API` or a domain's: an API imported
    /// from another account has its advisories there). Optional: a user
    /// not allowed `$JS.EVENT.>` still reads, healing after two missed
    /// heartbeats instead.
    fn leader_elections(&self) -> Option<Subscription> {
        if !self.core.js.api_prefix().starts_with("$JS.") {
            return None;
        }
        let subject = format!(
            "$JS.EVENT.ADVISORY.STREAM.LEADER_ELECTED.{}",
            self.core.cfg.stream
        );
        self.core.js.client().subscribe_optional(&subject).ok()
    }

    /// Runs until the flow ends; then deletes the consumer and hands back
    /// the core (its position, for a later run) and the sink.
    ///
    /// When the stream elects a leader, the consumer (one replica) may stop
    /// without a word (seen after step-downs): rather than wait for two
    /// missed heartbeats (10 s for a KV watch), it is recreated at once,
    /// after the last message delivered. The puller tells an election
    /// between messages only, so none is taken and dropped; one before the
    /// first delivery is ignored (the stream's creation sends one, and
    /// there is no position to resume from yet: heartbeats heal that case).
    async fn run(mut self, puller: Puller) -> (Core, S) {
        let mut puller = puller.watching_elections(self.leader_elections());
        let mut life = self.core.js.client().lifecycle();
        let idle_timeout = self.idle_timeout;
        let idle_after = move |from: Instant| idle_timeout.map(|t| from + t);
        let mut idle_at = idle_after(Instant::now());
        loop {
            let event = match idle_at {
                None => puller.next(&self.out, &mut life).await,
                Some(at) => {
                    match tokio::time::timeout_at(at, puller.next(&self.out, &mut life)).await {
                        Ok(ev) => ev,
                        Err(_) if self.out.fill().items > 0 => {
                            // The reader has not taken what came yet: its wait
                            // for a message has not begun.
                            idle_at = idle_after(Instant::now());
                            continue;
                        }
                        Err(_) => {
                            self.out.fail(self.idle_error());
                            break;
                        }
                    }
                }
            };
            // Why the consumer is recreated, when it is (debug log).
            let why = match &event {
                PullEvent::Msg(_) => "a delivery out of consumer sequence",
                PullEvent::Lost => "its requests were lost (heartbeats missed or a reconnect)",
                PullEvent::ConsumerDeleted => "the consumer was deleted",
                PullEvent::NoResponders => "no responders to a pull",
                _ => "the stream elected a leader",
            };
            let keep = match event {
                PullEvent::Msg(m) => {
                    let delivered = self.core.last_stream_seq;
                    match self.on_message(m, puller.take_stalled()) {
                        Ok(keep) => {
                            if self.core.last_stream_seq != delivered {
                                idle_at = idle_after(Instant::now());
                            }
                            keep
                        }
                        Err(e) => {
                            self.out.fail(e);
                            break;
                        }
                    }
                }
                PullEvent::Lost | PullEvent::ConsumerDeleted | PullEvent::NoResponders => false,
                PullEvent::LeaderElected => self.core.last_stream_seq == 0,
                PullEvent::Stopped | PullEvent::Drained => break,
                PullEvent::Failed(e) => {
                    self.out.fail(e);
                    break;
                }
            };
            if self.out.has_ended() {
                break;
            }
            if !keep {
                let client = self.core.js.client();
                log!(
                    client.log,
                    Debug,
                    "ordered consumer on {}: recreated after stream sequence {}: {why}",
                    self.core.cfg.stream,
                    self.core.last_stream_seq
                );
                let elections = puller.take_elections();
                drop(puller);
                if let Some(name) = &self.core.consumer {
                    self.core.event(json!({"type": "reset", "name": name}));
                }
                let healed = match idle_at {
                    None => self.recreate().await,
                    Some(at) => match tokio::time::timeout_at(at, self.recreate()).await {
                        Ok(p) => p,
                        Err(_) => {
                            self.out.fail(self.idle_error());
                            None
                        }
                    },
                };
                match healed {
                    Some(p) => {
                        if let Some(name) = &self.core.consumer {
                            let recreated =
                                json!({"type": "ordered_consumer_recreated", "name": name});
                            self.core.event(recreated);
                        }
                        // Elections told while the new consumer was being
                        // created are behind it: not a reason to heal again.
                        if let Some(e) = &elections {
                            while let Some(Ok(Some(_))) = e.feed().try_recv() {}
                        }
                        puller = p.watching_elections(elections);
                    }
                    None => break,
                }
            }
        }
        // Memory-only and short-lived anyway: a failure is harmless.
        let _ = self.core.delete_consumer().await;
        (self.core, self.sink)
    }
}

/// A running ordered consumer: its feed, and its task (which ends, having
/// deleted its consumer, once the feed has ended).
pub(crate) struct Started<T: FeedItem> {
    pub feed: Arc<Feed<T>>,
    pub task: tokio::task::JoinHandle<()>,
}

/// Starts an ordered consumer on `cfg.stream` without waiting: its feed
/// is returned at once, and the first consumer is created on the runtime
/// (a failure to create it, a missing stream included, ends the feed with
/// that error; later losses are healed).
pub(crate) fn spawn_ordered<S: OrderedSink>(
    js: JetStream,
    cfg: OrderedConfig,
    sink: S,
    to_outcome: ToOutcome<S::Item>,
) -> Started<S::Item> {
    let mut ordered = Ordered::with_new_feed(js, cfg, sink, to_outcome);
    let out = Arc::clone(&ordered.out);
    let task = crate::runtime::handle().spawn(async move {
        if ordered.out.has_ended() {
            return; // stopped before the first consumer was asked for
        }
        // Stopped while it is created: `run` sees it at once and deletes it.
        match ordered.create().await {
            Ok(p) => {
                ordered.run(p).await;
            }
            Err(e) => {
                let e = ordered.sink.map_error(e);
                ordered.out.fail(e);
            }
        }
    });
    Started { feed: out, task }
}

/// Creates an ordered consumer on `cfg.stream` and starts it pulling into
/// a new feed on the runtime. Fails when the first consumer cannot be
/// created (the stream is missing, ...); later losses are healed.
pub(crate) async fn start_ordered<S: OrderedSink>(
    js: JetStream,
    cfg: OrderedConfig,
    sink: S,
    to_outcome: ToOutcome<S::Item>,
) -> Result<Started<S::Item>> {
    let mut ordered = Ordered::with_new_feed(js, cfg, sink, to_outcome);
    let out = Arc::clone(&ordered.out);
    let mut puller = match ordered.create().await {
        Ok(p) => p,
        Err(e) => return Err(ordered.sink.map_error(e)),
    };
    // Pulling starts before this returns, not when the task first runs (on
    // a loaded machine, late enough for a bucket's history limit to discard
    // changes made right after a watch returned).
    puller.request_now(&ordered.out);
    let task = crate::runtime::handle().spawn(async move {
        ordered.run(puller).await;
    });
    Ok(Started { feed: out, task })
}

// ---- the public ordered consumer -----------------------------------------

/// What an ordered consumer reads (`JetStream::ordered_consumer`).
#[derive(Debug, Clone, Default)]
pub struct OrderedConsumerConfig {
    /// Subjects (wildcards allowed) to read; empty: the whole stream.
    pub filter_subjects: Vec<String>,
    /// Where it starts; `All` by default.
    pub deliver_policy: DeliverPolicy,
    /// Deliver headers only (the payload size in `Nats-Msg-Size`).
    pub headers_only: bool,
    /// Its consumers are named `<name_prefix>_<serial>`; `None`: a fresh
    /// NUID (nats.go's `NamePrefix`, nats.js's `name_prefix`).
    pub name_prefix: Option<String>,
    /// How long the server keeps a consumer nobody reads; `None`: 5 min.
    pub inactive_threshold: Option<Duration>,
    /// The consumers' `max_deliver` (nothing is redelivered without acks,
    /// so it only shows in their info); `None`: not set (the server's
    /// unlimited), as nats.go; nats.js sets 1.
    pub max_deliver: Option<i64>,
    /// Send a single filter subject as a list (`filter_subjects`, as
    /// nats.js does when given a list) rather than as `filter_subject`
    /// (nats.go); the consumer's info shows which.
    pub filter_subjects_as_list: bool,
    /// Metadata of every consumer it creates (nats.go's `Metadata`);
    /// empty: none.
    pub metadata: BTreeMap<String, String>,
}

/// Options of one `OrderedConsumer::messages` run.
#[derive(Debug, Clone)]
pub struct OrderedMessagesOptions {
    /// Messages requested and buffered together at most: a reader that
    /// pauses holds at most this many (as consume's `max_messages`), and
    /// pulling resumes as it reads.
    pub max_messages: usize,
    /// Lifetime of each pull request (at least 1 s).
    pub expires: Duration,
    /// Server heartbeats while a request waits; two missed ones heal the
    /// consumer. `None`: half of `expires`, at most 5 s.
    pub idle_heartbeat: Option<Duration>,
    /// End the run with `NoMessages` once no message has arrived for this
    /// long while the buffer is empty, instead of healing forever.
    pub idle_timeout: Option<Duration>,
    /// End the run (without error) once caught up: at the delivery whose
    /// `num_pending` is 0, or at once when nothing is pending at start.
    pub until_drained: bool,
}

impl Default for OrderedMessagesOptions {
    fn default() -> Self {
        OrderedMessagesOptions {
            max_messages: 500,
            expires: Duration::from_secs(30),
            idle_heartbeat: None,
            idle_timeout: None,
            until_drained: false,
        }
    }
}

/// Hands each delivered message to the reader as is, and remembers the
/// stream sequences of those the reader has not taken yet, so that the
/// next run continues after the last one taken (what a stopped run had
/// buffered is dropped with it).
struct MsgSink {
    /// The stream sequence before `seqs[0]`.
    before: u64,
    /// Index in the feed of `seqs[0]`.
    first_index: u64,
    /// Stream sequences of the messages queued, in feed order.
    seqs: std::collections::VecDeque<u64>,
}

impl MsgSink {
    fn new(last_stream_seq: u64) -> MsgSink {
        MsgSink {
            before: last_stream_seq,
            first_index: 0,
            seqs: Default::default(),
        }
    }

    /// The stream sequence of the last message of `taken` (the feed's
    /// delivered count).
    fn last_taken(&self, taken: u64) -> u64 {
        match taken.checked_sub(self.first_index + 1) {
            None => self.before,
            Some(i) => self
                .seqs
                .get(i as usize)
                .or(self.seqs.back())
                .copied()
                .unwrap_or(self.before),
        }
    }
}

impl OrderedSink for MsgSink {
    type Item = Message;

    fn deliver(&mut self, m: Message, md: &MsgMetadata<'_>, out: &Feed<Message>) -> Result<()> {
        let seq = md.stream_seq;
        if let (crate::feed::Pushed::Queued | crate::feed::Pushed::Backlogged, _) = out.push(m) {
            self.seqs.push_back(seq);
        }
        if self.seqs.len() > 4096 {
            let taken = out.stats().delivered;
            while self.first_index < taken && self.seqs.len() > 1 {
                self.before = self.seqs.pop_front().unwrap_or(self.before);
                self.first_index += 1;
            }
        }
        Ok(())
    }
}

struct Running {
    feed: Arc<Feed<Message>>,
    task: tokio::task::JoinHandle<(Core, MsgSink)>,
}

struct OcState {
    /// `None` while a run owns it.
    core: Option<Core>,
    running: Option<Running>,
    stopped: bool,
}

impl OcState {
    /// Waits for the run's end (if any), taking its core back: it
    /// continues after the last message the reader took. Cancelled
    /// midway, the run stays to be joined later.
    async fn join(&mut self) -> Result<()> {
        let Some(r) = self.running.as_mut() else {
            return Ok(());
        };
        let joined = (&mut r.task).await;
        let Some(r) = self.running.take() else {
            return Ok(());
        };
        let (mut core, sink) = joined
            .map_err(|e| Error::new(ErrorKind::Internal, format!("ordered consumer task: {e}")))?;
        core.last_stream_seq = sink.last_taken(r.feed.stats().delivered);
        self.core = Some(core);
        Ok(())
    }

    /// The core, once the previous run (if any) has ended; an error while
    /// one still runs.
    async fn idle_core(&mut self) -> Result<&mut Core> {
        if self.stopped {
            return Err(Error::new(
                ErrorKind::IllegalState,
                "the ordered consumer was stopped",
            ));
        }
        if let Some(r) = &self.running {
            if !r.feed.has_ended() {
                return Err(Error::new(
                    ErrorKind::IllegalState,
                    "a messages() run of this ordered consumer is still going: stop it first",
                ));
            }
        }
        self.join().await?;
        self.core
            .as_mut()
            .ok_or_else(|| Error::new(ErrorKind::Internal, "ordered consumer state lost"))
    }
}

/// An ordered consumer (ADR-17) on one stream: an always-in-order,
/// self-healing view read through `messages`, backed by an ephemeral,
/// unacknowledged, memory consumer (R1, 5 min inactive threshold) that is
/// deleted and recreated after the last delivered stream sequence on a
/// consumer-sequence gap, missed heartbeats, a reconnect or its loss.
///
/// Its consumers are configured as nats.go's: named `<prefix>_<serial>`
/// (a NUID prefix unless one is given; the serial counts creations from
/// 1), the first with the deliver policy asked for, each later one with
/// `by_start_sequence` right after the last stream sequence delivered
/// (or, before any delivery, after the position the first one started
/// at), `ack_policy` none, `mem_storage`, one replica.
///
/// - `start` creates the server-side consumer and returns its info;
///   `messages` before `start` starts it implicitly.
/// - One `messages` run at a time: another while one is going fails with
///   `IllegalState`. A run ends when its flow is stopped, drained
///   (`until_drained`), idle (`idle_timeout`) or failed; it then deletes
///   its consumer, and a next `messages` continues after the last message
///   the reader took from it (what it had buffered comes again), on a new
///   consumer.
/// - `stop` ends a run, deletes the consumer and ends the ordered
///   consumer: `start` and `messages` fail after it (`IllegalState`).
/// - Dropping it deletes an unused consumer; a run still going goes on
///   until its flow is stopped.
pub struct OrderedConsumer {
    js: JetStream,
    stream: String,
    state: Arc<tokio::sync::Mutex<OcState>>,
    /// The name of the consumer in use (`Core::current`).
    current: Arc<std::sync::Mutex<Option<String>>>,
}

impl std::fmt::Debug for OrderedConsumer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OrderedConsumer")
            .field("stream", &self.stream)
            .finish()
    }
}

impl JetStream {
    /// An ordered consumer on `stream`. Checks its arguments only; nothing
    /// is sent to the server until `start` or `messages`.
    pub fn ordered_consumer(
        &self,
        stream: &str,
        cfg: OrderedConsumerConfig,
    ) -> Result<OrderedConsumer> {
        super::config::validate_name("stream", stream)?;
        for f in &cfg.filter_subjects {
            crate::subject::validate_subscribe(f)?;
        }
        match &cfg.deliver_policy {
            DeliverPolicy::ByStartSequence(0) => {
                return Err(Error::new(
                    ErrorKind::InvalidArgument,
                    "by_start_sequence needs a start sequence of at least 1",
                ))
            }
            DeliverPolicy::ByStartTime(t) if super::time::parse_rfc3339_ns(t).is_none() => {
                return Err(Error::new(
                    ErrorKind::InvalidArgument,
                    format!("opt_start_time {t:?} is not an RFC 3339 time"),
                ))
            }
            _ => {}
        }
        let mut filter_subjects = cfg.filter_subjects;
        if filter_subjects.is_empty() && cfg.deliver_policy == DeliverPolicy::LastPerSubject {
            // The server wants a filter for last per subject.
            filter_subjects.push(">".to_string());
        }
        let o = &self.client().opts;
        let ocfg = OrderedConfig {
            stream: stream.to_string(),
            filter_subjects,
            deliver: cfg.deliver_policy,
            headers_only: cfg.headers_only,
            until_drained: false,
            batch: 500,
            expires: Duration::from_secs(30),
            idle_heartbeat: Duration::from_secs(5),
            limits: Limits::from_config(
                o.pending_msgs_limit,
                o.pending_bytes_limit,
                crate::options::PendingPolicy::DropNew,
            ),
            covers_stream: false,
        };
        let mut core = Core::new(self.clone(), ocfg);
        if let Some(p) = cfg.name_prefix {
            super::config::validate_name("consumer name prefix", &p)?;
            core.shape.name_prefix = p;
        }
        if let Some(t) = cfg.inactive_threshold {
            if t.is_zero() {
                return Err(Error::new(
                    ErrorKind::InvalidArgument,
                    "inactive_threshold must be positive",
                ));
            }
            core.shape.inactive_threshold = t;
        }
        core.shape.max_deliver = cfg.max_deliver;
        core.shape.filter_subjects_as_list = cfg.filter_subjects_as_list;
        core.shape.metadata = cfg.metadata;
        Ok(OrderedConsumer {
            js: self.clone(),
            stream: stream.to_string(),
            current: Arc::clone(&core.current),
            state: Arc::new(tokio::sync::Mutex::new(OcState {
                core: Some(core),
                running: None,
                stopped: false,
            })),
        })
    }
}

impl OrderedConsumer {
    /// The stream it reads.
    pub fn stream(&self) -> &str {
        &self.stream
    }

    /// Creates the server-side consumer (unless one exists already: then,
    /// as while a `messages` run is going, it reads the info of the one in
    /// use) and returns its ConsumerInfo, e.g. its `num_pending` to see an
    /// empty stream before reading. Fails with `StreamNotFound` for a
    /// missing stream, `IllegalState` after `stop`.
    pub fn start(&self) -> Op<Value> {
        let state = Arc::clone(&self.state);
        let current = Arc::clone(&self.current);
        let (js, stream) = (self.js.clone(), self.stream.clone());
        Op::new(async move {
            let mut st = state.lock().await;
            if !st.stopped && st.running.as_ref().is_some_and(|r| !r.feed.has_ended()) {
                let name = crate::completion::lock(&current)
                    .clone()
                    .unwrap_or_default();
                drop(st);
                return js.consumer_info(&stream, &name).await;
            }
            let core = st.idle_core().await?;
            if let Some(name) = core.consumer.clone() {
                match core.js.consumer_info(&core.cfg.stream, &name).await {
                    Ok(info) => return Ok(info),
                    Err(e) if e.kind() != ErrorKind::ConsumerNotFound => return Err(e),
                    Err(_) => {} // lost: created again below
                }
            }
            core.create_consumer().await
        })
    }

    /// Starts a run: the ordered messages, pulled on the runtime into a
    /// buffer read through the flow (starting the consumer first if
    /// needed). Delivered messages carry their JetStream metadata; they
    /// need no acknowledgement.
    pub fn messages(&self, opts: OrderedMessagesOptions) -> Op<Consumption> {
        Op::build(|| {
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
            let heartbeat = opts
                .idle_heartbeat
                .unwrap_or_else(|| (opts.expires / 2).min(Duration::from_secs(5)));
            if heartbeat.is_zero() || heartbeat > opts.expires / 2 {
                return Err(Error::new(
                    ErrorKind::InvalidArgument,
                    "idle_heartbeat must be positive and at most half of expires",
                ));
            }
            if opts.idle_timeout.is_some_and(|t| t.is_zero()) {
                return Err(Error::new(
                    ErrorKind::InvalidArgument,
                    "idle_timeout must be positive",
                ));
            }
            let state = Arc::clone(&self.state);
            let client = Arc::clone(self.js.client());
            Ok(async move {
                let mut st = state.lock().await;
                let core = st.idle_core().await?;
                core.cfg.batch = opts.max_messages;
                core.count_buffered = true;
                core.cfg.expires = opts.expires;
                core.cfg.idle_heartbeat = heartbeat;
                core.cfg.until_drained = opts.until_drained;
                // What is pending now: the consumer `start` created may
                // have more since.
                let mut info = None;
                if let Some(name) = core.consumer.clone() {
                    match core.js.consumer_info(&core.cfg.stream, &name).await {
                        Ok(i) => info = Some(i),
                        Err(e) if e.kind() != ErrorKind::ConsumerNotFound => return Err(e),
                        Err(_) => {}
                    }
                }
                let info = match info {
                    Some(i) => i,
                    None => core.create_consumer().await?,
                };
                let events = super::status_event_feed();
                core.events = Some(Arc::clone(&events));
                let core = st.core.take().expect("idle core");
                let out = Arc::new(
                    Feed::new(core.cfg.limits, |m| Ok(crate::completion::Outcome::Msg(m)))
                        .counting_calls(),
                );
                let sink = MsgSink::new(core.last_stream_seq);
                let mut ordered = Ordered {
                    core,
                    sink,
                    out: Arc::clone(&out),
                    idle_timeout: opts.idle_timeout,
                };
                let puller = match ordered.attach(pending_of(&info)) {
                    Ok(p) => p,
                    Err(e) => {
                        st.core = Some(ordered.core);
                        return Err(e);
                    }
                };
                let told = Arc::clone(&events);
                let task = crate::runtime::handle().spawn(async move {
                    let ended = ordered.run(puller).await;
                    // The reader still gets the events queued, then the end.
                    told.finish();
                    ended
                });
                st.running = Some(Running {
                    feed: Arc::clone(&out),
                    task,
                });
                Ok(Flow::new(out, &client, "natsio-ordered").with_status_events(events))
            })
        })
    }

    /// Ends a `messages` run (its flow ends without error), deletes the
    /// server-side consumer and ends the ordered consumer. Idempotent.
    pub fn stop(&self) -> Op<()> {
        let state = Arc::clone(&self.state);
        Op::new(async move {
            let mut st = state.lock().await;
            st.stopped = true;
            if let Some(r) = &st.running {
                r.feed.stop();
            }
            st.join().await?;
            match st.core.as_mut() {
                Some(core) => core.delete_consumer().await,
                None => Ok(()),
            }
        })
    }
}

impl Drop for OrderedConsumer {
    fn drop(&mut self) {
        if let Ok(mut st) = self.state.try_lock() {
            if st.running.is_none() {
                if let Some(core) = st.core.as_mut() {
                    if let Some(name) = core.consumer.take() {
                        core.js.delete_consumer_nowait(&core.cfg.stream, &name);
                    }
                }
            }
        }
    }
}
