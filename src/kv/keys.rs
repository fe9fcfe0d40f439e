//! Listing a bucket's keys (nats.go's ListKeys / ListKeysFiltered, nats.js
//! kv.keys(filter)): one ordered consumer, headers only, last revision per
//! subject, over the keys matching the filters; delete and purge markers
//! are skipped. The listing is a flow that yields each key as it is read
//! and ends once every key stored when it started has been delivered.

use std::sync::Arc;
use std::time::Duration;

use super::{operation_of, KeyValue, Operation};
use crate::client::Flow;
use crate::completion::Outcome;
use crate::error::{Error, ErrorKind, Result};
use crate::feed::{Feed, FeedItem, Limits};
use crate::jetstream::{
    spawn_ordered, DeliverPolicy, MsgMetadata, OrderedConfig, OrderedSink, Started,
};
use crate::message::Message;
use crate::op::Op;
use crate::options::PendingPolicy;

/// A key, as a key listing yields it.
impl FeedItem for String {
    fn pending_size(&self) -> usize {
        self.len()
    }
}

fn key_outcome(k: String) -> Result<Outcome> {
    Ok(Outcome::value(k))
}

/// A running listing of a bucket's keys (`KeyValue::list_keys`): each key
/// that holds a value, once, in stream order of its last revision; it ends
/// without error after the last. Dropping it stops it.
pub type KeyLister = Flow<String>;

/// Turns the ordered consumer's last revisions into the keys holding a
/// value.
struct KeysSink {
    kv: KeyValue,
}

impl OrderedSink for KeysSink {
    type Item = String;

    fn deliver(&mut self, m: Message, _md: &MsgMetadata<'_>, out: &Feed<String>) -> Result<()> {
        if let Some(stored) = m.subject().strip_prefix(&*self.kv.key_prefix) {
            if operation_of(m.headers())? == Operation::Put {
                out.push(self.kv.codecs.decode_key(stored)?);
            }
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
    /// The consumer filters of the keys matching `patterns` (every key when
    /// empty; each validated by `validate_key_pattern`), and whether they
    /// cover the bucket's whole stream.
    pub(crate) fn key_filters(&self, patterns: &[&str]) -> Result<(Vec<String>, bool)> {
        let mut filters = Vec::with_capacity(patterns.len().max(1));
        for p in patterns {
            // Encoded by the key codec (its filter form for wildcards),
            // then validated.
            let stored = self.codecs.encode_filter(p)?;
            super::validate_key_pattern(&stored)?;
            let f = format!("{}{}", self.key_prefix, stored);
            // The server refuses a consumer whose filters repeat one.
            if !filters.contains(&f) {
                filters.push(f);
            }
        }
        if filters.is_empty() {
            filters.push(format!("{}>", self.key_prefix));
            return Ok((filters, true));
        }
        Ok((filters, false))
    }

    /// Lists the keys matching `patterns` (every key when empty; key
    /// tokens, `*` as a whole token, `>` as the last one) that hold a
    /// value now: deleted and purged keys are left out. Returns at once;
    /// the keys are read on the runtime into the lister's buffer (bounded
    /// by the client's pending limits: a full buffer pauses reading) and
    /// the lister ends once every key stored when the listing started was
    /// delivered (at once for none). A missing bucket ends it with
    /// `BucketNotFound`. Errors: `InvalidKey` for a bad pattern.
    pub fn list_keys(&self, patterns: &[&str]) -> Result<KeyLister> {
        let started = self.start_listing(self.key_filters(patterns)?);
        Ok(Flow::new(started.feed, self.js.client(), "natsio-kv-keys"))
    }

    /// Starts the ordered consumer of a listing on `filters` (from
    /// `key_filters`).
    fn start_listing(&self, filters: (Vec<String>, bool)) -> Started<String> {
        let (filter_subjects, covers_stream) = filters;
        let o = &self.js.client().opts;
        let cfg = OrderedConfig {
            stream: self.stream.to_string(),
            filter_subjects,
            deliver: DeliverPolicy::LastPerSubject,
            headers_only: true,
            until_drained: true,
            batch: super::SCAN_BATCH,
            expires: Duration::from_secs(30),
            idle_heartbeat: Duration::from_secs(5),
            limits: Limits::from_config(
                o.pending_msgs_limit,
                o.pending_bytes_limit,
                PendingPolicy::DropNew,
            ),
            covers_stream,
        };
        spawn_ordered(
            self.js.clone(),
            cfg,
            KeysSink { kv: self.clone() },
            key_outcome,
        )
    }

    /// The keys matching `patterns` (every key when empty) that hold a
    /// value now, gathered from a listing (whose consumer is gone when
    /// this completes).
    pub fn keys_filtered(&self, patterns: &[&str]) -> Op<Vec<String>> {
        Op::build(|| {
            let filters = self.key_filters(patterns)?;
            let kv = self.clone();
            Ok(async move {
                // Started only when the operation runs (an operation
                // dropped unrun leaves nothing behind), as a flow so that a
                // close of the client, or dropping this, stops it.
                let started = kv.start_listing(filters);
                let client = Arc::clone(kv.js.client());
                let flow = Flow::new(started.feed, &client, "natsio-kv-keys");
                let mut keys = Vec::new();
                let collected = async {
                    while let Some(k) = flow.feed.recv().await? {
                        keys.push(k);
                    }
                    Ok::<(), Error>(())
                }
                .await;
                drop(flow);
                // Its consumer is gone once the task has ended.
                let _ = started.task.await;
                collected.map(|()| keys)
            })
        })
    }

    /// The keys that currently have a value (not deleted or purged).
    pub fn keys(&self) -> Op<Vec<String>> {
        self.keys_filtered(&[])
    }
}
