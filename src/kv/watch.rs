//! Watching a bucket (ADR-8): an ordered consumer (ephemeral, no acks,
//! memory storage) read through a continuous pull; a gap in its consumer
//! sequence or a lost consumer recreates it from the last revision seen.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use super::{operation_of, Entry, KeyValue, Operation};
use crate::completion::lock;
use crate::error::{Error, ErrorKind, Result};
use crate::jetstream::{parse_metadata, ConsumeOptions, CreateAction, PullStopper, PullStream};

/// Options of `KeyValue::watch`.
#[derive(Debug, Clone, Copy, Default)]
pub struct WatchOptions {
    /// Deliver every kept revision, not only the latest of each key.
    pub include_history: bool,
    /// Leave out delete and purge markers.
    pub ignore_deletes: bool,
    /// Entries without values (headers only).
    pub meta_only: bool,
    /// Only changes made after the watch starts (no initial values).
    pub updates_only: bool,
}

/// What `Watcher::next` yields.
#[derive(Debug, Clone)]
pub enum WatchEvent {
    Entry(Entry),
    /// Every value that existed when the watch started has been delivered
    /// (once, right away when there were none or with `updates_only`).
    InitialDone,
}

/// A key pattern: key tokens, `*` as a whole token, `>` as the last one.
pub fn validate_key_pattern(pattern: &str) -> Result<()> {
    let tokens: Vec<&str> = pattern.split('.').collect();
    let ok = !pattern.is_empty()
        && tokens.iter().enumerate().all(|(i, t)| match *t {
            "*" => true,
            ">" => i == tokens.len() - 1,
            t => super::validate_key(t).is_ok(),
        });
    if ok {
        Ok(())
    } else {
        Err(Error::new(
            ErrorKind::InvalidKey,
            format!("invalid key pattern {pattern:?}: key tokens, '*' as a token, '>' last"),
        ))
    }
}

/// Lifetime of a watch's consumer once the watcher is gone.
const WATCH_INACTIVE_THRESHOLD_NS: i64 = 5 * 60 * 1_000_000_000;

/// Stops a watch from any thread (also across consumer resets).
#[derive(Clone)]
pub struct WatchStopper {
    stopped: Arc<AtomicBool>,
    current: Arc<Mutex<PullStopper>>,
}

impl WatchStopper {
    pub fn stop(&self) {
        self.stopped.store(true, Ordering::SeqCst);
        lock(&self.current).stop();
    }
}

/// Watches keys of a bucket; see `KeyValue::watch`.
pub struct Watcher {
    stopper: WatchStopper,
    kv: KeyValue,
    filters: Vec<String>,
    opts: WatchOptions,
    pull: PullStream,
    consumer: String,
    last_stream_seq: u64,
    last_consumer_seq: u64,
    /// The initial-done marker is still to be delivered.
    marker_due: bool,
    initial_done: bool,
    /// The consumer was lost or skipped a message: recreate it first.
    needs_reset: bool,
}

impl KeyValue {
    /// Watches the keys matching `patterns` (all keys when empty): first
    /// their current values (or history), then an `InitialDone` marker,
    /// then every change as it happens.
    pub fn watch(&self, patterns: &[&str], opts: WatchOptions) -> Result<Watcher> {
        let mut filters = Vec::new();
        for p in patterns {
            validate_key_pattern(p)?;
            filters.push(format!("{}{}", self.key_prefix, p));
        }
        if filters.is_empty() {
            filters.push(format!("{}>", self.key_prefix));
        }
        let deliver = if opts.updates_only {
            json!({ "deliver_policy": "new" })
        } else if opts.include_history {
            json!({ "deliver_policy": "all" })
        } else {
            json!({ "deliver_policy": "last_per_subject" })
        };
        let started = start(self, &filters, opts, deliver)?;
        let initial_done = opts.updates_only || started.pending == 0;
        let pull = started.pull;
        let consumer = started.name;
        Ok(Watcher {
            stopper: WatchStopper {
                stopped: Arc::new(AtomicBool::new(false)),
                current: Arc::new(Mutex::new(pull.stopper())),
            },
            kv: self.clone(),
            filters,
            opts,
            pull,
            consumer,
            // Updates only: a recreated consumer resumes after the stream's
            // last message at the start, not at the recreation.
            last_stream_seq: if opts.updates_only { started.anchor } else { 0 },
            last_consumer_seq: 0,
            marker_due: initial_done,
            initial_done,
            needs_reset: false,
        })
    }
}

/// The ordered consumer as created.
struct Started {
    pull: PullStream,
    name: String,
    /// Messages it had to deliver at creation.
    pending: u64,
    /// The stream's sequence it starts after (the last one, for "new").
    anchor: u64,
}

/// Creates the ordered consumer and starts pulling.
fn start(kv: &KeyValue, filters: &[String], opts: WatchOptions, deliver: Value) -> Result<Started> {
    let mut cfg = json!({
        "ack_policy": "none",
        "headers_only": opts.meta_only,
        "mem_storage": true,
        "num_replicas": 1,
        "inactive_threshold": WATCH_INACTIVE_THRESHOLD_NS,
    });
    if filters.len() == 1 {
        cfg["filter_subject"] = Value::from(filters[0].as_str());
    } else {
        cfg["filter_subjects"] = Value::from(filters.to_vec());
    }
    for (k, v) in deliver.as_object().into_iter().flatten() {
        cfg[k] = v.clone();
    }
    let info = kv
        .js
        .create_consumer(&kv.stream, &cfg.to_string(), CreateAction::Create)?;
    let name = info
        .get("name")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    let pending = info.get("num_pending").and_then(Value::as_u64).unwrap_or(0);
    let anchor = info
        .pointer("/delivered/stream_seq")
        .and_then(Value::as_u64)
        .unwrap_or(0);
    let consume = ConsumeOptions {
        max_messages: 256,
        expires: Duration::from_secs(30),
        idle_heartbeat: Duration::from_secs(5),
    };
    match kv.js.consume(&kv.stream, &name, consume) {
        Ok(pull) => Ok(Started {
            pull,
            name,
            pending,
            anchor,
        }),
        Err(e) => {
            kv.js.delete_consumer_nowait(&kv.stream, &name);
            Err(e)
        }
    }
}

impl Watcher {
    /// A handle that stops the watch from any thread: a blocked `next`
    /// returns `SubscriptionClosed`.
    pub fn stopper(&self) -> WatchStopper {
        self.stopper.clone()
    }

    /// Recreates the ordered consumer after the last revision seen (one
    /// attempt).
    fn reset(&mut self) -> Result<()> {
        self.kv
            .js
            .delete_consumer_nowait(&self.kv.stream, &self.consumer);
        let deliver = if self.last_stream_seq == 0 {
            match (self.opts.updates_only, self.opts.include_history) {
                (true, _) => json!({ "deliver_policy": "new" }),
                (false, true) => json!({ "deliver_policy": "all" }),
                (false, false) => json!({ "deliver_policy": "last_per_subject" }),
            }
        } else {
            json!({ "deliver_policy": "by_start_sequence", "opt_start_seq": self.last_stream_seq + 1 })
        };
        let started = start(&self.kv, &self.filters, self.opts, deliver)?;
        self.pull = started.pull;
        self.consumer = started.name;
        self.last_consumer_seq = 0;
        self.needs_reset = false;
        *lock(&self.stopper.current) = self.pull.stopper();
        if self.stopper.stopped.load(Ordering::SeqCst) {
            self.pull.stop();
        }
        Ok(())
    }

    /// Recreates the consumer, retrying with backoff until `deadline`;
    /// `Timeout` then (the next call tries again). A permanent failure
    /// (the bucket is gone) is returned at once.
    fn recover(&mut self, deadline: Option<Instant>) -> Result<()> {
        let mut wait = Duration::from_millis(50);
        loop {
            if self.stopper.stopped.load(Ordering::SeqCst) {
                return Err(Error::new(ErrorKind::SubscriptionClosed, "watch stopped"));
            }
            match self.reset() {
                Ok(()) => return Ok(()),
                Err(e)
                    if matches!(
                        e.kind(),
                        ErrorKind::StreamNotFound
                            | ErrorKind::ConnectionClosed
                            | ErrorKind::JetStreamNotEnabled
                    ) =>
                {
                    return Err(e)
                }
                Err(_) => {}
            }
            let now = Instant::now();
            let until = deadline.map_or(now + wait, |d| d.min(now + wait));
            if until <= now {
                return Err(Error::timeout("watch recovery"));
            }
            // Sleep in slices so that a stop is noticed.
            while Instant::now() < until && !self.stopper.stopped.load(Ordering::SeqCst) {
                std::thread::sleep((until - Instant::now()).min(Duration::from_millis(20)));
            }
            wait = (wait * 2).min(Duration::from_secs(2));
        }
    }

    /// The next event, waiting up to `timeout` (forever if `None`):
    /// `Timeout` when nothing changed in time, `SubscriptionClosed` once
    /// stopped.
    pub fn next(&mut self, timeout: Option<Duration>) -> Result<WatchEvent> {
        let deadline = timeout.map(|t| Instant::now() + t);
        loop {
            if self.marker_due {
                self.marker_due = false;
                return Ok(WatchEvent::InitialDone);
            }
            if self.needs_reset {
                self.recover(deadline)?;
            }
            let left = deadline.map(|d| d.saturating_duration_since(Instant::now()));
            let m = match self.pull.next(left) {
                Ok(m) => m,
                Err(e)
                    if matches!(
                        e.kind(),
                        ErrorKind::ConsumerDeleted | ErrorKind::ConsumerNotFound
                    ) && !self.stopper.stopped.load(Ordering::SeqCst) =>
                {
                    self.needs_reset = true;
                    continue;
                }
                Err(e) => return Err(e),
            };
            let md = parse_metadata(m.reply().unwrap_or(""))?;
            if md.consumer_seq != self.last_consumer_seq + 1 {
                // A gap: recreate from the last revision delivered.
                self.needs_reset = true;
                continue;
            }
            self.last_consumer_seq = md.consumer_seq;
            self.last_stream_seq = md.stream_seq;
            if !self.initial_done && md.num_pending == 0 {
                self.initial_done = true;
                self.marker_due = true;
            }
            let Some(key) = m.subject().strip_prefix(&self.kv.key_prefix) else {
                continue;
            };
            let operation = operation_of(m.headers())?;
            if self.opts.ignore_deletes && operation != Operation::Put {
                continue;
            }
            return Ok(WatchEvent::Entry(Entry {
                bucket: Arc::clone(&self.kv.bucket),
                key: key.to_string(),
                value: m.payload_bytes(),
                revision: md.stream_seq,
                operation,
                created_ns: md.timestamp_ns,
                delta: md.num_pending,
            }));
        }
    }

    /// Stops the watch.
    pub fn stop(&self) {
        self.stopper.stop();
    }
}

impl Drop for Watcher {
    fn drop(&mut self) {
        self.pull.stop();
        self.kv
            .js
            .delete_consumer_nowait(&self.kv.stream, &self.consumer);
    }
}

impl std::fmt::Debug for Watcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Watcher")
            .field("filters", &self.filters)
            .field("consumer", &self.consumer)
            .finish()
    }
}
