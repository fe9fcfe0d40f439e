//! Object Store buckets (ADR-20) on JetStream: bucket `b` is the stream
//! `OBJ_b`; an object's chunks are the messages of `$O.b.C.<nuid>`, its
//! description (ObjectInfo JSON) the last message of
//! `$O.b.M.<base64url(name)>`, written with a subject rollup. The layout,
//! JSON and digest are those of nats.go and nats.js, so each reads what the
//! other writes.

mod get;
mod info;
mod put;
mod watch;

use std::sync::Arc;

use base64::engine::general_purpose::URL_SAFE;
use base64::Engine;
use serde_json::{json, Map, Value};

use crate::error::{Error, ErrorKind, Result};
use crate::headers::Headers;
use crate::jetstream::config::{normalize, Kind, Schema, STORAGE};
use crate::jetstream::{CreateAction, JetStream, PublishOptions, StoredMsg};
use crate::op::Op;

pub use get::{Chunk, ObjectReader};
pub use info::{ObjectInfo, ObjectLink, ObjectMeta, ObjectStoreStatus};
pub use put::ObjectWriter;
pub use watch::{ObjectWatchEvent, ObjectWatchOptions, ObjectWatcher};

/// ObjectStoreConfig (the reference's fields).
const OBJ_CONFIG: Schema = &[
    ("bucket", Kind::Str),
    ("description", Kind::Str),
    ("ttl", Kind::Duration),
    ("max_bytes", Kind::Int),
    ("storage", Kind::Enum(STORAGE)),
    ("replicas", Kind::UInt),
    ("placement", Kind::Object),
    ("compression", Kind::Bool),
    ("metadata", Kind::StrMap),
];

/// Chunk size when the meta sets none (ADR-20).
pub(crate) const DEFAULT_CHUNK_SIZE: usize = 128 * 1024;

/// Object names: any non-empty text.
pub fn validate_name(name: &str) -> Result<()> {
    if name.is_empty() {
        return Err(Error::new(
            ErrorKind::InvalidObjectName,
            "invalid object name: it is empty",
        ));
    }
    Ok(())
}

/// The backing StreamConfig of an ObjectStoreConfig.
pub fn stream_config_for(config_json: &str) -> Result<(String, Map<String, Value>)> {
    let mut o = normalize("ObjectStoreConfig", config_json, OBJ_CONFIG)?;
    let bucket = o
        .remove("bucket")
        .and_then(|b| b.as_str().map(str::to_string))
        .ok_or_else(|| Error::new(ErrorKind::Config, "ObjectStoreConfig.bucket: required"))?;
    validate_bucket(&bucket)?;
    let take = |o: &mut Map<String, Value>, k: &str, default: Value| o.remove(k).unwrap_or(default);
    let mut s = Map::new();
    s.insert("name".into(), Value::from(format!("OBJ_{bucket}")));
    s.insert(
        "subjects".into(),
        json!([format!("$O.{bucket}.C.>"), format!("$O.{bucket}.M.>")]),
    );
    if let Some(d) = o.remove("description") {
        s.insert("description".into(), d);
    }
    s.insert("max_age".into(), take(&mut o, "ttl", Value::from(0)));
    s.insert(
        "max_bytes".into(),
        take(&mut o, "max_bytes", Value::from(-1)),
    );
    s.insert(
        "storage".into(),
        take(&mut o, "storage", Value::from("file")),
    );
    s.insert(
        "num_replicas".into(),
        take(&mut o, "replicas", Value::from(1)),
    );
    s.insert("discard".into(), Value::from("new"));
    s.insert("allow_rollup_hdrs".into(), Value::from(true));
    s.insert("allow_direct".into(), Value::from(true));
    if o.remove("compression").and_then(|v| v.as_bool()) == Some(true) {
        s.insert("compression".into(), Value::from("s2"));
    }
    // placement, metadata and fields this library does not model go to the
    // stream unchanged.
    for (k, v) in o {
        s.entry(k).or_insert(v);
    }
    Ok((bucket, s))
}

pub use crate::jetstream::bucket::validate_bucket;
use crate::jetstream::bucket::{bucket_error, BucketKind};

/// Object Store buckets: streams `OBJ_<bucket>` holding their chunks'
/// keyspace `$O.*.C.>`.
const OBJ_BUCKETS: BucketKind = BucketKind {
    stream_prefix: "OBJ_",
    streams_subject: "$O.*.C.>",
    bucket_subjects: None,
};

/// A bound Object Store bucket. Cheap to clone; thread-safe.
#[derive(Clone)]
pub struct ObjectStore {
    js: JetStream,
    bucket: Arc<str>,
    stream: Arc<str>,
    direct: bool,
}

impl std::fmt::Debug for ObjectStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ObjectStore")
            .field("bucket", &self.bucket)
            .finish()
    }
}

impl JetStream {
    fn object_store_handle(&self, bucket: &str, info: &Value) -> ObjectStore {
        ObjectStore {
            js: self.clone(),
            bucket: Arc::from(bucket),
            stream: Arc::from(format!("OBJ_{bucket}")),
            direct: info
                .pointer("/config/allow_direct")
                .and_then(Value::as_bool)
                .unwrap_or(false),
        }
    }

    /// Creates, updates or creates-or-updates (per `action`) a bucket from
    /// an ObjectStoreConfig JSON object. Creating one that exists with the
    /// same configuration binds it; another configuration fails with
    /// `BucketExists`; updating a missing one with `BucketNotFound`.
    pub fn create_object_store(&self, config_json: &str, action: CreateAction) -> Op<ObjectStore> {
        let (bucket, cfg) = match stream_config_for(config_json) {
            Ok(c) => c,
            Err(e) => return Op::fail(e),
        };
        let js = self.clone();
        OBJ_BUCKETS
            .create(self, &bucket, cfg, action)
            .map(move |info| js.object_store_handle(&bucket, &info))
    }

    /// Binds an existing bucket.
    pub fn object_store(&self, bucket: &str) -> Op<ObjectStore> {
        let (js, name) = (self.clone(), bucket.to_string());
        OBJ_BUCKETS
            .bind(self, bucket)
            .map(move |info| js.object_store_handle(&name, &info))
    }

    /// Deletes a bucket and every object in it.
    pub fn delete_object_store(&self, bucket: &str) -> Op<()> {
        OBJ_BUCKETS.delete(self, bucket)
    }

    /// Names of every bucket: streams holding the chunk keyspace
    /// `$O.*.C.>` and named `OBJ_<bucket>` (a plain stream that merely
    /// takes `$O` subjects is no bucket), as nats.go filters them.
    pub fn object_store_names(&self) -> Op<Vec<String>> {
        OBJ_BUCKETS.names(self)
    }

    /// The status of every bucket, from the paged stream list (no request
    /// per bucket); filtered as `object_store_names`.
    pub fn object_stores(&self) -> Op<Vec<ObjectStoreStatus>> {
        OBJ_BUCKETS.statuses(self, ObjectStoreStatus::from_stream_info)
    }
}

/// The meta subject token of an object name: URL-safe base64, padded.
pub fn encode_name(name: &str) -> String {
    URL_SAFE.encode(name.as_bytes())
}

impl ObjectStore {
    pub fn bucket(&self) -> &str {
        &self.bucket
    }

    pub(crate) fn client(&self) -> &Arc<crate::client::ClientInner> {
        self.js.client()
    }

    fn meta_subject(&self, name: &str) -> String {
        format!("$O.{}.M.{}", self.bucket, encode_name(name))
    }

    fn chunk_subject(&self, nuid: &str) -> String {
        format!("$O.{}.C.{nuid}", self.bucket)
    }

    /// A failure that no stream answered (or a stream error) in bucket
    /// terms: `BucketNotFound` when the bucket is gone.
    async fn explain(&self, e: Error) -> Error {
        let e = bucket_error(e, &self.bucket);
        if !matches!(
            e.kind(),
            ErrorKind::NoStreamResponse | ErrorKind::NoResponders
        ) {
            return e;
        }
        match self.js.stream_gone(&self.stream).await {
            Some(gone) => bucket_error(gone, &self.bucket),
            None => e,
        }
    }

    /// The last message stored on `subject` of the bucket's stream (Direct
    /// Get when the stream allows it); failures in bucket terms.
    async fn last_msg_on(&self, subject: &str) -> Result<Option<StoredMsg>> {
        match self
            .js
            .stored_msg(&self.stream, subject, None, self.direct)
            .await
        {
            Ok(found) => Ok(found),
            Err(e) => Err(self.explain(e).await),
        }
    }

    /// The stored description of `name` (deleted ones included), its
    /// revision the meta message's sequence; `None` when there is none.
    async fn stored_info(&self, name: &str) -> Result<Option<ObjectInfo>> {
        match self.last_msg_on(&self.meta_subject(name)).await? {
            None => Ok(None),
            Some(m) => {
                let mut info = ObjectInfo::from_meta_json(&m.payload, m.time_ns)?;
                info.revision = m.seq;
                Ok(Some(info))
            }
        }
    }

    async fn info_of(&self, name: &str, show_deleted: bool) -> Result<ObjectInfo> {
        validate_name(name)?;
        match self.stored_info(name).await? {
            None => Err(Error::new(
                ErrorKind::ObjectNotFound,
                format!("object {name:?} not found in {:?}", &*self.bucket),
            )),
            Some(info) if info.deleted && !show_deleted => Err(deleted_error(name)),
            Some(info) => Ok(info),
        }
    }

    /// An operation on object `name`, whose name is checked before it
    /// starts (a bad one fails the call, not the operation).
    fn on_object<T, F>(&self, name: &str, run: impl FnOnce(ObjectStore, String) -> F) -> Op<T>
    where
        T: Send + 'static,
        F: std::future::Future<Output = Result<T>> + Send + 'static,
    {
        Op::build(|| {
            validate_name(name)?;
            Ok(run(self.clone(), name.to_string()))
        })
    }

    /// The description of object `name`. A deleted object fails with
    /// `ObjectDeleted` unless `show_deleted`.
    pub fn info(&self, name: &str, show_deleted: bool) -> Op<ObjectInfo> {
        self.on_object(name, move |os, name| async move {
            os.info_of(&name, show_deleted).await
        })
    }

    /// Publishes `info` as the description of its name, replacing earlier
    /// ones (rollup); with `expect`, only if the name's last description is
    /// at that sequence (0: there is none). Sets its revision to the
    /// sequence it was stored at.
    async fn publish_meta(&self, info: &mut ObjectInfo, expect: Option<u64>) -> Result<()> {
        let mut h = Headers::new();
        h.set(
            crate::jetstream::header_names::ROLLUP,
            crate::jetstream::header_names::ROLLUP_SUBJECT,
        )?;
        let opts = PublishOptions {
            headers: Some(h),
            expected_last_subject_seq: expect,
            ..PublishOptions::default()
        };
        let subject = self.meta_subject(&info.name);
        match self
            .js
            .publish(&subject, info.to_meta_json().as_bytes(), &opts)
            .await
        {
            Ok(ack) => {
                info.revision = ack.seq;
                Ok(())
            }
            Err(e) => Err(self.explain(e).await),
        }
    }

    /// Removes every message of `subject` (an object's chunks, a renamed
    /// object's old description).
    async fn purge_subject(&self, subject: &str) -> Result<()> {
        let opts = json!({ "filter": subject }).to_string();
        match self.js.purge_stream(&self.stream, Some(&opts)).await {
            Ok(_) => Ok(()),
            Err(e) => Err(self.explain(e).await),
        }
    }

    /// Replaces name, description, headers and metadata of `name` (a new
    /// name renames it). Fails with `ObjectExists` when a live object has
    /// the new name, `ObjectDeleted` for a deleted object.
    pub fn update_meta(&self, name: &str, meta: ObjectMeta) -> Op<()> {
        self.on_object(name, move |os, name| async move {
            let mut info = os.info_of(&name, false).await?;
            let new_name = if meta.name.is_empty() {
                name.clone()
            } else {
                meta.name.clone()
            };
            if new_name != name {
                match os.stored_info(&new_name).await? {
                    Some(other) if !other.deleted => {
                        return Err(Error::new(
                            ErrorKind::ObjectExists,
                            format!("object {new_name:?} already exists"),
                        ))
                    }
                    _ => {}
                }
            }
            info.name = new_name;
            info.description = meta.description;
            info.headers = meta.headers;
            info.metadata = meta.metadata;
            os.publish_meta(&mut info, None).await?;
            if info.name != name {
                os.purge_subject(&os.meta_subject(&name)).await?;
            }
            Ok(())
        })
    }

    /// Deletes `name`: a tombstone description replaces it and its chunks
    /// are purged.
    pub fn delete(&self, name: &str) -> Op<()> {
        self.on_object(name, move |os, name| async move {
            let mut info = os.info_of(&name, true).await?;
            let nuid = info.nuid.clone();
            info.deleted = true;
            info.size = 0;
            info.chunks = 0;
            info.digest = None;
            info.mtime_ns = now_ns();
            os.publish_meta(&mut info, None).await?;
            if !nuid.is_empty() {
                os.purge_subject(&os.chunk_subject(&nuid)).await?;
            }
            Ok(())
        })
    }

    /// Links `name` to the object `target` (of this or another bucket).
    /// ADR-20 allows no link to a deleted object or to another link
    /// (`ObjectLink`); a live object named `name` is not replaced
    /// (`ObjectExists`).
    pub fn add_link(&self, name: &str, target: &ObjectInfo) -> Op<ObjectInfo> {
        let link = if let Err(e) = validate_name(name) {
            Err(e)
        } else if target.deleted {
            Err(Error::new(
                ErrorKind::ObjectLink,
                format!("cannot link to the deleted object {:?}", target.name),
            ))
        } else if target.link.is_some() {
            Err(Error::new(
                ErrorKind::ObjectLink,
                format!("cannot link to {:?}: it is a link", target.name),
            ))
        } else if target.name.is_empty() || target.bucket.is_empty() {
            Err(Error::new(
                ErrorKind::InvalidArgument,
                "the link target has no name or bucket",
            ))
        } else {
            Ok(ObjectLink {
                bucket: target.bucket.clone(),
                name: Some(target.name.clone()),
            })
        };
        match link {
            Ok(link) => self.put_link(name, link),
            Err(e) => Op::fail(e),
        }
    }

    /// Links `name` to the whole bucket `bucket`.
    pub fn add_bucket_link(&self, name: &str, bucket: &str) -> Op<ObjectInfo> {
        if let Err(e) = validate_bucket(bucket) {
            return Op::fail(e);
        }
        self.put_link(
            name,
            ObjectLink {
                bucket: bucket.to_string(),
                name: None,
            },
        )
    }

    fn put_link(&self, name: &str, link: ObjectLink) -> Op<ObjectInfo> {
        self.on_object(name, move |os, name| async move {
            if let Some(existing) = os.stored_info(&name).await? {
                if !existing.deleted && existing.link.is_none() {
                    return Err(Error::new(
                        ErrorKind::ObjectExists,
                        format!("object {name:?} exists and is not a link"),
                    ));
                }
            }
            let mut info = ObjectInfo {
                name,
                bucket: os.bucket.to_string(),
                nuid: crate::client::new_nuid(),
                mtime_ns: now_ns(),
                link: Some(link),
                ..ObjectInfo::default()
            };
            os.publish_meta(&mut info, None).await?;
            Ok(info)
        })
    }

    /// Seals the bucket: it can be read, no longer changed.
    pub fn seal(&self) -> Op<()> {
        let os = self.clone();
        Op::new(async move {
            let info = match os.js.stream_info(&os.stream).await {
                Ok(info) => info,
                Err(e) => return Err(bucket_error(e, &os.bucket)),
            };
            let mut config = info.get("config").cloned().unwrap_or_else(|| json!({}));
            config["sealed"] = Value::from(true);
            os.js
                .create_stream(&config.to_string(), CreateAction::Update)
                .await
                .map(|_| ())
                .map_err(|e| bucket_error(e, &os.bucket))
        })
    }

    /// The bucket's status.
    pub fn status(&self) -> Op<ObjectStoreStatus> {
        let os = self.clone();
        Op::new(async move {
            match os.js.stream_info(&os.stream).await {
                Ok(info) => Ok(ObjectStoreStatus::from_stream_info(&os.bucket, info)),
                Err(e) => Err(bucket_error(e, &os.bucket)),
            }
        })
    }
}

fn deleted_error(name: &str) -> Error {
    Error::new(
        ErrorKind::ObjectDeleted,
        format!("object {name:?} was deleted"),
    )
}

fn now_ns() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as i64)
}
