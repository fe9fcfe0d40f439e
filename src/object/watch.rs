//! Watching and listing a bucket's objects: an ordered consumer on the
//! description subjects `$O.<bucket>.M.>`, each message an ObjectInfo.

use std::sync::Arc;
use std::time::Duration;

use super::{ObjectInfo, ObjectStore};
use crate::client::Flow;
use crate::completion::Outcome;
use crate::error::{Error, Result};
use crate::feed::{Feed, FeedItem, Limits};
use crate::jetstream::{start_ordered, DeliverPolicy, MsgMetadata, OrderedConfig, OrderedSink};
use crate::message::Message;
use crate::op::Op;
use crate::options::PendingPolicy;

/// Options of `ObjectStore::watch`.
#[derive(Debug, Clone, Copy, Default)]
pub struct ObjectWatchOptions {
    /// Every stored description first, not only the latest per object.
    pub include_history: bool,
    /// Leave out deleted objects.
    pub ignore_deletes: bool,
    /// Only changes made after the watch starts.
    pub updates_only: bool,
}

/// What a watcher yields.
#[derive(Debug, Clone)]
pub enum ObjectWatchEvent {
    Info(Arc<ObjectInfo>),
    /// Every object that existed when the watch started has been
    /// delivered; it names the bucket.
    InitialDone(Arc<str>),
}

impl FeedItem for ObjectWatchEvent {
    fn pending_size(&self) -> usize {
        match self {
            ObjectWatchEvent::Info(i) => i.name.len() + 256,
            ObjectWatchEvent::InitialDone(_) => 0,
        }
    }
}

fn watch_outcome(e: ObjectWatchEvent) -> Result<Outcome> {
    Ok(Outcome::value(e))
}

/// A running watch of a bucket's objects.
pub type ObjectWatcher = Flow<ObjectWatchEvent>;

struct InfoSink {
    bucket: Arc<str>,
    ignore_deletes: bool,
    initial_done: bool,
}

impl InfoSink {
    fn mark_initial_done(&mut self, out: &Feed<ObjectWatchEvent>) {
        if !self.initial_done {
            self.initial_done = true;
            out.push(ObjectWatchEvent::InitialDone(Arc::clone(&self.bucket)));
        }
    }
}

impl OrderedSink for InfoSink {
    type Item = ObjectWatchEvent;

    fn started(&mut self, pending: u64, out: &Feed<ObjectWatchEvent>) {
        if pending == 0 {
            self.mark_initial_done(out);
        }
    }

    fn deliver(
        &mut self,
        m: Message,
        md: &MsgMetadata<'_>,
        out: &Feed<ObjectWatchEvent>,
    ) -> Result<()> {
        // A description another client wrote badly is skipped, not fatal.
        if let Ok(mut info) = ObjectInfo::from_meta_json(m.payload(), md.timestamp_ns) {
            info.revision = md.stream_seq;
            if !(self.ignore_deletes && info.deleted) {
                out.push(ObjectWatchEvent::Info(Arc::new(info)));
            }
        }
        if md.num_pending == 0 {
            self.mark_initial_done(out);
        }
        Ok(())
    }

    fn map_error(&self, e: Error) -> Error {
        super::bucket_error(e, &self.bucket)
    }
}

impl ObjectStore {
    fn info_consumer(
        &self,
        deliver: DeliverPolicy,
        until_drained: bool,
        limits: Limits,
    ) -> OrderedConfig {
        OrderedConfig {
            stream: self.stream.to_string(),
            filter_subjects: vec![format!("$O.{}.M.>", self.bucket)],
            deliver,
            headers_only: false,
            until_drained,
            batch: 256,
            expires: Duration::from_secs(30),
            idle_heartbeat: Duration::from_secs(5),
            limits,
            covers_stream: false,
        }
    }

    /// Watches the bucket's objects: the latest description of each (or
    /// every one kept, or none with `updates_only`), then an `InitialDone`
    /// marker, then every change as it happens. Buffered from the moment
    /// this returns, up to the client's pending limits (a full buffer
    /// pauses pulling).
    pub fn watch(&self, opts: ObjectWatchOptions) -> Op<ObjectWatcher> {
        let deliver = if opts.updates_only {
            DeliverPolicy::New
        } else if opts.include_history {
            DeliverPolicy::All
        } else {
            DeliverPolicy::LastPerSubject
        };
        let o = &self.client().opts;
        let limits = Limits::from_config(
            o.pending_msgs_limit,
            o.pending_bytes_limit,
            PendingPolicy::DropNew,
        );
        let cfg = self.info_consumer(deliver, false, limits);
        let sink = InfoSink {
            bucket: Arc::clone(&self.bucket),
            ignore_deletes: opts.ignore_deletes,
            initial_done: false,
        };
        let os = self.clone();
        Op::new(async move {
            let client = Arc::clone(os.client());
            let started = start_ordered(os.js.clone(), cfg, sink, watch_outcome).await?;
            Ok(Flow::new(started.feed, &client, "natsio-obj-watch"))
        })
    }

    /// The latest description of every object (deleted ones only with
    /// `include_deleted`), in the order they were last written.
    pub fn list(&self, include_deleted: bool) -> Op<Vec<ObjectInfo>> {
        let cfg = self.info_consumer(DeliverPolicy::LastPerSubject, true, Limits::unlimited());
        let sink = InfoSink {
            bucket: Arc::clone(&self.bucket),
            ignore_deletes: !include_deleted,
            initial_done: true,
        };
        let os = self.clone();
        Op::new(async move {
            let started = start_ordered(os.js.clone(), cfg, sink, watch_outcome).await?;
            let feed = started.feed;
            let mut infos = Vec::new();
            let collected = async {
                while let Some(item) = feed.recv().await? {
                    if let ObjectWatchEvent::Info(i) = item {
                        infos.push(Arc::unwrap_or_clone(i));
                    }
                }
                Ok::<(), Error>(())
            }
            .await;
            feed.stop();
            let _ = started.task.await;
            collected.map(|()| infos)
        })
    }
}
