//! Watching a bucket (ADR-8) on the ordered consumer: from the moment
//! `watch` returns, changes are pulled into the watcher's buffer on the
//! runtime, whether or not anyone reads; gaps, lost consumers and
//! reconnects are healed by the ordered consumer.

use std::sync::Arc;
use std::time::Duration;

use super::{operation_of, Entry, KeyValue, Operation};
use crate::client::Flow;
use crate::completion::Outcome;
use crate::error::{Error, ErrorKind, Result};
use crate::feed::{Feed, FeedItem, Limits};
use crate::jetstream::{start_ordered, DeliverPolicy, MsgMetadata, OrderedConfig, OrderedSink};
use crate::message::Message;
use crate::op::Op;
use crate::options::PendingPolicy;

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
    /// Start at this revision (0: not set): every revision from it on, as
    /// with `include_history`, then the `InitialDone` marker once the
    /// revisions stored when the watch started are delivered. Excludes
    /// `updates_only`.
    pub resume_from_revision: u64,
}

/// What a watcher yields.
#[derive(Debug, Clone)]
pub enum WatchEvent {
    Entry(Entry),
    /// Every value that existed when the watch started has been delivered
    /// (once, right away when there were none or with `updates_only`); it
    /// names the bucket.
    InitialDone(Arc<str>),
}

impl FeedItem for WatchEvent {
    fn pending_size(&self) -> usize {
        match self {
            WatchEvent::Entry(e) => e.key.len() + e.value.len(),
            WatchEvent::InitialDone(_) => 0,
        }
    }
}

pub(crate) fn watch_outcome(e: WatchEvent) -> Result<Outcome> {
    Ok(Outcome::value(e))
}

/// A running watch of a bucket.
pub type Watcher = Flow<WatchEvent>;

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

/// Turns the ordered consumer's messages into entries, with the
/// initial-values marker.
pub(crate) struct EntrySink {
    pub kv: KeyValue,
    pub ignore_deletes: bool,
    /// The marker was delivered (or is not wanted).
    pub initial_done: bool,
    /// Keys and values go through the bucket's codecs (stored keys
    /// otherwise).
    pub decode: bool,
    /// Entries come without values: nothing to decode.
    pub meta_only: bool,
}

impl EntrySink {
    fn mark_initial_done(&mut self, out: &Feed<WatchEvent>) {
        if !self.initial_done {
            self.initial_done = true;
            out.push(WatchEvent::InitialDone(Arc::clone(&self.kv.bucket)));
        }
    }
}

impl OrderedSink for EntrySink {
    type Item = WatchEvent;

    fn started(&mut self, pending: u64, out: &Feed<WatchEvent>) {
        if pending == 0 {
            self.mark_initial_done(out);
        }
    }

    fn deliver(&mut self, m: Message, md: &MsgMetadata<'_>, out: &Feed<WatchEvent>) -> Result<()> {
        if let Some(stored) = m.subject().strip_prefix(&*self.kv.key_prefix) {
            let operation = operation_of(m.headers())?;
            if !(self.ignore_deletes && operation != Operation::Put) {
                let (key, value) = if self.decode {
                    let value = if operation == Operation::Put && !self.meta_only {
                        self.kv.codecs.decode_value(m.payload_bytes())?
                    } else {
                        m.payload_bytes()
                    };
                    (self.kv.codecs.decode_key(stored)?, value)
                } else {
                    (stored.to_string(), m.payload_bytes())
                };
                out.push(WatchEvent::Entry(Entry {
                    bucket: Arc::clone(&self.kv.bucket),
                    key,
                    value,
                    revision: md.stream_seq,
                    operation,
                    created_ns: md.timestamp_ns,
                    delta: md.num_pending,
                }));
            }
        }
        if md.num_pending == 0 {
            self.mark_initial_done(out);
        }
        Ok(())
    }

    fn map_error(&self, e: Error) -> Error {
        if e.kind() == ErrorKind::StreamNotFound {
            return Error::new(
                ErrorKind::BucketNotFound,
                format!("bucket {:?} not found", &*self.kv.bucket),
            );
        }
        e
    }
}

impl KeyValue {
    /// Watches the keys matching `patterns` (all keys when empty): first
    /// their current values (or history), then an `InitialDone` marker,
    /// then every change as it happens. Changes are buffered from the
    /// moment this returns (up to the client's pending limits; a full
    /// buffer pauses pulling, counted in the watcher's stalls).
    pub fn watch(&self, patterns: &[&str], opts: WatchOptions) -> Op<Watcher> {
        Op::build(|| {
            // All keys: the filter is the bucket's whole stream.
            let (filters, covers_stream) = self.key_filters(patterns)?;
            if opts.resume_from_revision > 0 && opts.updates_only {
                return Err(Error::new(
                    ErrorKind::InvalidArgument,
                    "resume_from_revision and updates_only exclude each other: one starts at a revision, the other after the latest",
                ));
            }
            let deliver = if opts.resume_from_revision > 0 {
                DeliverPolicy::ByStartSequence(opts.resume_from_revision)
            } else if opts.updates_only {
                DeliverPolicy::New
            } else if opts.include_history {
                DeliverPolicy::All
            } else {
                DeliverPolicy::LastPerSubject
            };
            let o = &self.js.client().opts;
            let cfg = OrderedConfig {
                stream: self.stream.to_string(),
                filter_subjects: filters,
                deliver,
                headers_only: opts.meta_only,
                until_drained: false,
                batch: 256,
                expires: Duration::from_secs(30),
                idle_heartbeat: Duration::from_secs(5),
                limits: Limits::from_config(
                    o.pending_msgs_limit,
                    o.pending_bytes_limit,
                    PendingPolicy::DropNew,
                ),
                covers_stream,
            };
            let sink = EntrySink {
                kv: self.clone(),
                ignore_deletes: opts.ignore_deletes,
                initial_done: false,
                decode: true,
                meta_only: opts.meta_only,
            };
            let js = self.js.clone();
            Ok(async move {
                let client = Arc::clone(js.client());
                let started = start_ordered(js, cfg, sink, watch_outcome).await?;
                Ok(Flow::new(started.feed, &client, "natsio-kv-watch"))
            })
        })
    }
}
