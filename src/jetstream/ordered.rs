//! The ordered consumer (ADR-17): an ephemeral, unacknowledged, memory
//! consumer read in stream order by a pull flow on the runtime. It heals
//! itself: a gap in its consumer sequence, missed heartbeats, a reconnect
//! or the consumer's loss make it delete the consumer and create a new one
//! starting after the last stream sequence delivered (duplicates are
//! dropped). KV watch, keys and history run on it.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{json, Value};

use super::consumer::{parse_metadata, MsgMetadata};
use super::pull::{nanos, Backoff, PullEvent, PullWindow, Puller};
use super::{CreateAction, JetStream};
use crate::client::new_nuid;
use crate::error::{Error, ErrorKind, Result};
use crate::feed::{Feed, FeedItem, Limits, ToOutcome};
use crate::message::Message;

/// Where an ordered consumer starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DeliverPolicy {
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

/// Lifetime of an ordered consumer once its reader is gone.
const INACTIVE_THRESHOLD: Duration = Duration::from_secs(5 * 60);

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

struct Ordered<S: OrderedSink> {
    js: JetStream,
    cfg: OrderedConfig,
    sink: S,
    out: Arc<Feed<S::Item>>,
    consumer: Option<String>,
    last_stream_seq: u64,
    last_consumer_seq: u64,
    /// Where a consumer recreated before any message arrived resumes: for
    /// `New`, the stream's last sequence at the first creation; for other
    /// policies, set once a creation found nothing pending (see `create`).
    anchor: Option<u64>,
}

fn is_fatal(e: &Error) -> bool {
    matches!(
        e.kind(),
        ErrorKind::StreamNotFound | ErrorKind::ConnectionClosed
    )
}

impl<S: OrderedSink> Ordered<S> {
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

    /// Creates the next consumer (deleting the previous one) and its puller.
    async fn create(&mut self) -> Result<Puller> {
        if let Some(old) = self.consumer.take() {
            self.js.delete_consumer_nowait(&self.cfg.stream, &old);
        }
        let mut cfg = json!({
            "name": format!("oc_{}", new_nuid()),
            "ack_policy": "none",
            "headers_only": self.cfg.headers_only,
            "mem_storage": true,
            "num_replicas": 1,
            "inactive_threshold": nanos(INACTIVE_THRESHOLD),
        });
        match self.cfg.filter_subjects.as_slice() {
            [] => {}
            [one] => cfg["filter_subject"] = Value::from(one.as_str()),
            many => cfg["filter_subjects"] = Value::from(many.to_vec()),
        }
        for (k, v) in self.deliver_config().as_object().into_iter().flatten() {
            cfg[k] = v.clone();
        }
        let info = self
            .js
            .create_consumer(&self.cfg.stream, &cfg.to_string(), CreateAction::Create)
            .await?;
        let name = info
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        let pending = info.get("num_pending").and_then(Value::as_u64).unwrap_or(0);
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
        let window = PullWindow {
            messages: self.cfg.batch,
            count_buffered: false,
            expires: self.cfg.expires,
            idle_heartbeat: self.cfg.idle_heartbeat,
        };
        let puller = match Puller::new(&self.js, &self.cfg.stream, &name, window) {
            Ok(p) => p,
            Err(e) => {
                self.js.delete_consumer_nowait(&self.cfg.stream, &name);
                return Err(e);
            }
        };
        self.consumer = Some(name);
        self.last_consumer_seq = 0;
        self.sink.started(pending, &self.out);
        if self.cfg.until_drained && pending == 0 {
            self.out.finish();
        }
        Ok(puller)
    }

    /// Recreates the consumer, with backoff between failed attempts; `None`
    /// when the flow ended meanwhile (or failed for good).
    async fn recreate(&mut self) -> Option<Puller> {
        let mut backoff = Backoff::new();
        loop {
            if self.out.has_ended() {
                return None;
            }
            match self.create().await {
                Ok(p) => return Some(p),
                Err(e) if is_fatal(&e) => {
                    self.out.fail(self.sink.map_error(e));
                    return None;
                }
                Err(_) => {
                    if !backoff.sleep(&self.out).await {
                        return None;
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
        let after = match (self.last_stream_seq, self.anchor) {
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
        let detail = if self.cfg.covers_stream {
            self.out.count_dropped(gap);
            format!(
                "{}: {gap} message(s) after stream sequence {after} were discarded by the stream {why}",
                self.cfg.stream
            )
        } else if after_stall {
            format!(
                "{}: the reader's buffer was full; messages the stream discarded before sequence {seq} are not delivered",
                self.cfg.stream
            )
        } else {
            return;
        };
        self.js
            .client()
            .report_error(Error::new(ErrorKind::SlowConsumer, detail), None);
    }

    /// Handles one message; false when the consumer must be recreated.
    fn on_message(&mut self, m: Message, after_stall: bool) -> Result<bool> {
        let md = match parse_metadata(m.reply().unwrap_or("")) {
            Ok(md) => md,
            Err(_) => return Ok(true), // not a consumer delivery: ignore
        };
        if md.consumer_seq != self.last_consumer_seq + 1 {
            return Ok(false);
        }
        self.last_consumer_seq = md.consumer_seq;
        if md.stream_seq <= self.last_stream_seq {
            return Ok(true); // seen before a reset
        }
        self.report_gap(md.stream_seq, after_stall);
        self.last_stream_seq = md.stream_seq;
        let drained = md.num_pending == 0;
        self.sink.deliver(m.clone(), &md, &self.out)?;
        if self.cfg.until_drained && drained {
            self.out.finish();
        }
        Ok(true)
    }

    async fn run(mut self, mut puller: Puller) {
        let mut life = self.js.client().lifecycle();
        loop {
            let keep = match puller.next(&self.out, &mut life).await {
                PullEvent::Msg(m) => match self.on_message(m, puller.take_stalled()) {
                    Ok(keep) => keep,
                    Err(e) => {
                        self.out.fail(e);
                        break;
                    }
                },
                PullEvent::Lost | PullEvent::ConsumerDeleted | PullEvent::NoResponders => false,
                PullEvent::Stopped => break,
                PullEvent::Failed(e) => {
                    self.out.fail(e);
                    break;
                }
            };
            if self.out.has_ended() {
                break;
            }
            if !keep {
                drop(puller);
                match self.recreate().await {
                    Some(p) => puller = p,
                    None => break,
                }
            }
        }
        if let Some(name) = self.consumer.take() {
            // Memory-only and short-lived anyway: a failure is harmless.
            let _ = self.js.delete_consumer(&self.cfg.stream, &name).await;
        }
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
    let out = Arc::new(Feed::new(cfg.limits, to_outcome));
    let mut ordered = Ordered {
        js,
        cfg,
        sink,
        out: Arc::clone(&out),
        consumer: None,
        last_stream_seq: 0,
        last_consumer_seq: 0,
        anchor: None,
    };
    let task = crate::runtime::handle().spawn(async move {
        if ordered.out.has_ended() {
            return; // stopped before the first consumer was asked for
        }
        // Stopped while it is created: `run` sees it at once and deletes it.
        match ordered.create().await {
            Ok(p) => ordered.run(p).await,
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
    let out = Arc::new(Feed::new(cfg.limits, to_outcome));
    let mut ordered = Ordered {
        js,
        cfg,
        sink,
        out: Arc::clone(&out),
        consumer: None,
        last_stream_seq: 0,
        last_consumer_seq: 0,
        anchor: None,
    };
    let puller = match ordered.create().await {
        Ok(p) => p,
        Err(e) => return Err(ordered.sink.map_error(e)),
    };
    let task = crate::runtime::handle().spawn(ordered.run(puller));
    Ok(Started { feed: out, task })
}
