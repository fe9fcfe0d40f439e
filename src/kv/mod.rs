//! Key-Value buckets (ADR-8) on JetStream: bucket `b` is the stream `KV_b`
//! on `$KV.b.>`; each key is a subject, each revision a stream sequence.

mod codec;
mod keys;
mod watch;

use std::sync::Arc;

use bytes::Bytes;
use serde_json::{json, Map, Value};

use std::time::Duration;

use crate::error::{Error, ErrorKind, Result};
use crate::feed::Limits;
use crate::headers::Headers;
pub use crate::jetstream::bucket::validate_bucket;
use crate::jetstream::bucket::{bucket_error, metadata_to_json, BucketKind, StreamStatusFields};
use crate::jetstream::config::{
    domain_to_external, normalize, Kind, Schema, STORAGE, STREAM_CONFIG,
};
use crate::jetstream::{
    start_ordered, CreateAction, DeliverPolicy, JetStream, OrderedConfig, PublishOptions, Ttl,
    DEFAULT_API_PREFIX,
};
use crate::op::Op;

/// What a revision of a key records.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Operation {
    Put,
    Delete,
    Purge,
}

/// One revision of a key.
#[derive(Debug, Clone)]
pub struct Entry {
    pub bucket: Arc<str>,
    pub key: String,
    /// Shares the received frame when read with Direct Get.
    pub value: Bytes,
    pub revision: u64,
    pub operation: Operation,
    /// Nanoseconds since the Unix epoch.
    pub created_ns: i64,
    /// Revisions of the key newer than this one (0 for `get`).
    pub delta: u64,
}

use codec::Codecs;
pub use codec::{
    Base64KeyCodec, Base64ValueCodec, KeyChainCodec, KeyCodec, NoOpCodec, PathKeyCodec,
    ValueChainCodec, ValueCodec, ZlibValueCodec,
};
pub use keys::KeyLister;
pub use watch::{validate_key_pattern, WatchEvent, WatchOptions, Watcher};
use watch::{watch_outcome, EntrySink};

/// KeyValueConfig (the reference client's fields).
const KV_CONFIG: Schema = &[
    ("bucket", Kind::Str),
    ("description", Kind::Str),
    ("history", Kind::UInt),
    ("ttl", Kind::Duration),
    ("max_value_size", Kind::Int),
    ("max_bytes", Kind::Int),
    ("storage", Kind::Enum(STORAGE)),
    ("replicas", Kind::UInt),
    ("placement", Kind::Object),
    ("republish", Kind::Object),
    ("compression", Kind::Bool),
    ("allow_msg_ttl", Kind::Bool),
    ("limit_marker_ttl", Kind::Duration),
    ("metadata", Kind::StrMap),
    ("mirror", Kind::Object),
    ("sources", Kind::ObjectList),
];

const OPERATION_HEADER: &str = "KV-Operation";
const MARKER_REASON_HEADER: &str = crate::jetstream::header_names::MARKER_REASON;
const MAX_HISTORY: u64 = 64;
const DEFAULT_DUPLICATE_WINDOW_NS: i64 = 120_000_000_000;
const MIN_TTL_NS: i64 = 100_000_000;
/// Messages per pull when listing keys or history.
const SCAN_BATCH: usize = 256;
/// How often `create` re-resolves against a delete marker's revision.
const CREATE_RETRIES: usize = 4;
/// `purge_deletes`' default age beyond which a marker is removed too (as
/// nats.go).
pub const DEFAULT_PURGE_DELETES_OLDER_THAN: Duration = Duration::from_secs(30 * 60);
/// The subjects every bucket's stream holds, and its stream name's prefix.
const KV_BUCKETS: BucketKind = BucketKind {
    stream_prefix: "KV_",
    streams_subject: "$KV.*.>",
    bucket_subjects: Some(|bucket| format!("$KV.{bucket}.>")),
};

/// Keys: `[-/_=.A-Za-z0-9]+` without leading, trailing or empty tokens.
pub fn validate_key(key: &str) -> Result<()> {
    let charset_ok = key
        .bytes()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'/' | b'_' | b'=' | b'.'));
    if key.is_empty() || !charset_ok || key.split('.').any(str::is_empty) {
        return Err(Error::new(
            ErrorKind::InvalidKey,
            format!("invalid key {key:?}: use [-/_=.A-Za-z0-9]+ without empty tokens"),
        ));
    }
    Ok(())
}

fn operation_of(headers: Option<&Headers>) -> Result<Operation> {
    let Some(h) = headers else {
        return Ok(Operation::Put);
    };
    match h.get(OPERATION_HEADER) {
        Some("DEL") => return Ok(Operation::Delete),
        Some("PURGE") => return Ok(Operation::Purge),
        Some("PUT") | None => {}
        Some(other) => {
            return Err(Error::new(
                ErrorKind::JetStream,
                format!("unknown {OPERATION_HEADER} {other:?}"),
            ))
        }
    }
    // Server-written markers (TTL expiry, purge, removal) mean PURGE.
    match h.get(MARKER_REASON_HEADER) {
        Some("MaxAge" | "Purge" | "Remove") => Ok(Operation::Purge),
        _ => Ok(Operation::Put),
    }
}

/// The backing StreamConfig of a KeyValueConfig.
pub fn stream_config_for(config_json: &str) -> Result<(String, Map<String, Value>)> {
    let mut kv = normalize("KeyValueConfig", config_json, KV_CONFIG)?;
    let bucket = kv
        .remove("bucket")
        .and_then(|b| b.as_str().map(str::to_string))
        .ok_or_else(|| Error::new(ErrorKind::Config, "KeyValueConfig.bucket: required"))?;
    validate_bucket(&bucket)?;
    let history = kv.remove("history").and_then(|v| v.as_u64()).unwrap_or(1);
    if !(1..=MAX_HISTORY).contains(&history) {
        return Err(Error::new(
            ErrorKind::Config,
            format!("KeyValueConfig.history: must be 1..={MAX_HISTORY}"),
        ));
    }
    let ttl = kv.remove("ttl").and_then(|v| v.as_i64()).unwrap_or(0);
    if ttl > 0 && ttl < MIN_TTL_NS {
        return Err(Error::new(
            ErrorKind::Config,
            "KeyValueConfig.ttl: must be 0 (none) or at least 100ms",
        ));
    }
    let take =
        |kv: &mut Map<String, Value>, k: &str, default: Value| kv.remove(k).unwrap_or(default);
    let mut s = Map::new();
    s.insert("name".into(), Value::from(format!("KV_{bucket}")));
    match (kv.remove("mirror"), kv.remove("sources")) {
        // A mirror holds the mirrored bucket's subjects, none of its own.
        (Some(mirror), _) if !mirror.is_null() => {
            s.insert("mirror".into(), mirror_of_bucket(mirror)?);
            s.insert("mirror_direct".into(), Value::from(true));
        }
        (_, sources) => {
            if let Some(Value::Array(sources)) = sources {
                let sources = sources
                    .into_iter()
                    .map(|source| source_of_bucket(source, &bucket))
                    .collect::<Result<Vec<_>>>()?;
                s.insert("sources".into(), Value::Array(sources));
            }
            s.insert("subjects".into(), json!([format!("$KV.{bucket}.>")]));
        }
    }
    if let Some(d) = kv.remove("description") {
        s.insert("description".into(), d);
    }
    s.insert("max_msgs_per_subject".into(), Value::from(history));
    s.insert(
        "max_bytes".into(),
        take(&mut kv, "max_bytes", Value::from(-1)),
    );
    s.insert("max_age".into(), Value::from(ttl));
    s.insert(
        "max_msg_size".into(),
        take(&mut kv, "max_value_size", Value::from(-1)),
    );
    s.insert(
        "storage".into(),
        take(&mut kv, "storage", Value::from("file")),
    );
    s.insert(
        "num_replicas".into(),
        take(&mut kv, "replicas", Value::from(1)),
    );
    s.insert("allow_rollup_hdrs".into(), Value::from(true));
    s.insert("deny_delete".into(), Value::from(true));
    s.insert("allow_direct".into(), Value::from(true));
    s.insert("discard".into(), Value::from("new"));
    s.insert("max_msgs".into(), Value::from(-1));
    s.insert("max_consumers".into(), Value::from(-1));
    let window = if ttl > 0 && ttl < DEFAULT_DUPLICATE_WINDOW_NS {
        ttl
    } else {
        DEFAULT_DUPLICATE_WINDOW_NS
    };
    s.insert("duplicate_window".into(), Value::from(window));
    if kv.remove("compression").and_then(|v| v.as_bool()) == Some(true) {
        s.insert("compression".into(), Value::from("s2"));
    }
    if let Some(marker_ttl) = kv.remove("limit_marker_ttl") {
        if marker_ttl.as_i64() != Some(0) {
            s.insert("subject_delete_marker_ttl".into(), marker_ttl);
            s.insert("allow_msg_ttl".into(), Value::from(true));
        }
    }
    // placement, republish, metadata, allow_msg_ttl and fields this library
    // does not model go to the stream unchanged, checked as the stream's
    // (a "retention" of "limi|s" is refused here, not by the server).
    for (k, v) in kv {
        s.entry(k).or_insert(v);
    }
    let s = normalize(
        "KeyValueConfig",
        &Value::Object(s).to_string(),
        STREAM_CONFIG,
    )?;
    Ok((bucket, s))
}

/// A StreamSource naming a bucket (`KV_` added to its name when
/// missing), its `domain` turned into the `external` API prefix that
/// reaches it, as nats.go does. Returns it with the source bucket's name.
fn bucket_source(source: Value, field: &str) -> Result<(Map<String, Value>, String)> {
    let Value::Object(mut source) = source else {
        return Err(Error::new(
            ErrorKind::Config,
            format!("KeyValueConfig.{field}: must be a StreamSource object"),
        ));
    };
    let Some(name) = source.get("name").and_then(Value::as_str) else {
        return Err(Error::new(
            ErrorKind::Config,
            format!("KeyValueConfig.{field}.name: required"),
        ));
    };
    let from = name.strip_prefix("KV_").unwrap_or(name).to_string();
    validate_bucket(&from).map_err(|e| {
        Error::new(
            ErrorKind::Config,
            format!("KeyValueConfig.{field}.name: {e}"),
        )
    })?;
    source.insert("name".into(), Value::from(format!("KV_{from}")));
    domain_to_external(&format!("KeyValueConfig.{field}"), &mut source)?;
    Ok((source, from))
}

/// The `mirror` of a bucket's stream.
fn mirror_of_bucket(mirror: Value) -> Result<Value> {
    bucket_source(mirror, "mirror").map(|(m, _)| Value::Object(m))
}

/// One of the `sources` of `bucket`'s stream: unless it brings its own
/// subject transforms (then it is taken as given: any stream), its keys
/// are mapped into `bucket`'s subjects, except for `bucket` itself in
/// another domain, whose subjects are already the same (as nats.go).
fn source_of_bucket(source: Value, bucket: &str) -> Result<Value> {
    let has_transforms = source
        .get("subject_transforms")
        .and_then(Value::as_array)
        .is_some_and(|t| !t.is_empty());
    if has_transforms {
        return Ok(source);
    }
    let (mut source, from) = bucket_source(source, "sources")?;
    let external = source.get("external").is_some_and(|e| !e.is_null());
    if !external || from != bucket {
        source.insert(
            "subject_transforms".into(),
            json!([{ "src": format!("$KV.{from}.>"), "dest": format!("$KV.{bucket}.>") }]),
        );
    }
    Ok(Value::Object(source))
}

/// The key and write prefixes of `bucket`, whose stream's info is
/// `info`, reached through `api_prefix`. A mirror holds the mirrored bucket's subjects and writes go
/// to that bucket: through the mirror's external API prefix when it
/// lives in another domain, as nats.go and nats.js write to a mirror.
/// (They read a mirror of the same domain on the mirror's own name,
/// where it holds nothing; this reads the subjects it holds.)
fn kv_prefixes(api_prefix: &str, bucket: &str, info: &Value) -> (String, String) {
    let own = format!("$KV.{bucket}.");
    let in_this_domain = |prefix: String| match api_prefix {
        DEFAULT_API_PREFIX => prefix,
        api => format!("{api}.{prefix}"),
    };
    let Some(mirror) = info.pointer("/config/mirror").filter(|m| !m.is_null()) else {
        return (own.clone(), in_this_domain(own));
    };
    let name = mirror.get("name").and_then(Value::as_str).unwrap_or("");
    let origin = format!("$KV.{}.", name.strip_prefix("KV_").unwrap_or(name));
    let external_api = mirror
        .pointer("/external/api")
        .and_then(Value::as_str)
        .filter(|api| !api.is_empty());
    match external_api {
        Some(api) => {
            let write = format!("{}.{origin}", api.trim_end_matches('.'));
            (origin, write)
        }
        None => (origin.clone(), in_this_domain(origin)),
    }
}

/// A bucket's status, read from its stream's info.
#[derive(Debug, Clone)]
pub struct KeyValueStatus {
    pub bucket: String,
    /// Revisions stored (markers included): the stream's message count.
    pub values: u64,
    /// Revisions kept per key.
    pub history: i64,
    /// How long revisions live, nanoseconds (0: forever).
    pub ttl_ns: i64,
    /// Bytes stored.
    pub bytes: u64,
    /// "file" or "memory".
    pub storage: String,
    pub replicas: i64,
    pub compressed: bool,
    pub description: Option<String>,
    pub metadata: std::collections::BTreeMap<String, String>,
    /// How long the server's markers for keys removed by their TTL or by
    /// limits live, nanoseconds (0: no markers, no per-key TTL).
    pub limit_marker_ttl_ns: i64,
    /// The backing stream's StreamInfo.
    pub stream_info: Value,
}

impl KeyValueStatus {
    pub(crate) fn from_stream_info(bucket: &str, info: Value) -> KeyValueStatus {
        let f = StreamStatusFields::of(&info);
        let cfg = |k: &str| info.pointer(&format!("/config/{k}"));
        KeyValueStatus {
            bucket: bucket.to_string(),
            values: info
                .pointer("/state/messages")
                .and_then(Value::as_u64)
                .unwrap_or(0),
            history: cfg("max_msgs_per_subject")
                .and_then(Value::as_i64)
                .unwrap_or(1),
            limit_marker_ttl_ns: cfg("subject_delete_marker_ttl")
                .and_then(Value::as_i64)
                .unwrap_or(0),
            ttl_ns: f.ttl_ns,
            bytes: f.bytes,
            storage: f.storage,
            replicas: f.replicas,
            compressed: f.compression,
            description: f.description,
            metadata: f.metadata,
            stream_info: info,
        }
    }

    /// The metadata as a JSON object of strings.
    pub fn metadata_json(&self) -> String {
        metadata_to_json(&self.metadata)
    }
}

/// A bound Key-Value bucket. Cheap to clone; thread-safe.
#[derive(Clone)]
pub struct KeyValue {
    js: JetStream,
    bucket: Arc<str>,
    stream: Arc<str>,
    /// The prefix of the subjects the bucket's stream holds its keys on:
    /// `$KV.<bucket>.`, or the mirrored bucket's for a mirror.
    key_prefix: Arc<str>,
    /// The prefix of the subjects writes go to: the key prefix, behind the
    /// JetStream API prefix when the context has a domain or a custom
    /// prefix (the server maps `<prefix>.$KV.>` to that domain's `$KV.>`),
    /// or the mirrored bucket's subjects in the domain it lives in.
    write_prefix: Arc<str>,
    direct: bool,
    codecs: Codecs,
}

impl std::fmt::Debug for KeyValue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KeyValue")
            .field("bucket", &self.bucket)
            .field("direct", &self.direct)
            .finish()
    }
}

impl JetStream {
    fn kv_handle(&self, bucket: &str, info: &Value) -> KeyValue {
        let direct = info
            .pointer("/config/allow_direct")
            .and_then(Value::as_bool)
            .unwrap_or(false);
        let (key_prefix, write_prefix) = kv_prefixes(self.api_prefix(), bucket, info);
        KeyValue {
            js: self.clone(),
            bucket: Arc::from(bucket),
            stream: Arc::from(format!("KV_{bucket}")),
            key_prefix: Arc::from(key_prefix),
            write_prefix: Arc::from(write_prefix),
            direct,
            codecs: Codecs::default(),
        }
    }

    /// Creates, updates or creates-or-updates (per `action`) a bucket from a
    /// KeyValueConfig JSON object. Creating a bucket that exists with the
    /// same configuration returns it; another configuration fails with
    /// `BucketExists`; updating a missing one with `BucketNotFound`.
    pub fn create_key_value(&self, config_json: &str, action: CreateAction) -> Op<KeyValue> {
        let (bucket, cfg) = match stream_config_for(config_json) {
            Ok(c) => c,
            Err(e) => return Op::fail(e),
        };
        let js = self.clone();
        KV_BUCKETS
            .create(self, &bucket, cfg, action)
            .map(move |info| js.kv_handle(&bucket, &info))
    }

    /// Binds an existing bucket.
    pub fn key_value(&self, bucket: &str) -> Op<KeyValue> {
        let (js, name) = (self.clone(), bucket.to_string());
        KV_BUCKETS
            .bind(self, bucket)
            .map(move |info| js.kv_handle(&name, &info))
    }

    /// Names of every bucket: streams holding `$KV.*.>` and named
    /// `KV_<bucket>`.
    pub fn key_value_names(&self) -> Op<Vec<String>> {
        KV_BUCKETS.names(self)
    }

    /// The status of every bucket, from the paged stream list (no request
    /// per bucket); filtered as `key_value_names`.
    pub fn key_values(&self) -> Op<Vec<KeyValueStatus>> {
        KV_BUCKETS.statuses(self, KeyValueStatus::from_stream_info)
    }

    /// Deletes a bucket and all its keys.
    pub fn delete_key_value(&self, bucket: &str) -> Op<()> {
        KV_BUCKETS.delete(self, bucket)
    }
}

impl KeyValue {
    pub fn bucket(&self) -> &str {
        &self.bucket
    }

    pub(crate) fn client(&self) -> &Arc<crate::client::ClientInner> {
        self.js.client()
    }

    /// The same bucket seen through codecs (the reference's `key_codec`
    /// and `value_codec`): every verb of the returned handle encodes the
    /// keys, filters and values it is given and decodes the keys and values
    /// it returns; only the encoded key is validated. `None` keeps keys or
    /// values as they are. Codecs encode on the thread that calls a verb
    /// and decode where entries are read from the server (the runtime).
    pub fn with_codecs(
        &self,
        key: Option<Arc<dyn KeyCodec>>,
        value: Option<Arc<dyn ValueCodec>>,
    ) -> KeyValue {
        KeyValue {
            codecs: Codecs { key, value },
            ..self.clone()
        }
    }

    /// The key as stored: encoded by the key codec, then validated.
    fn stored_key(&self, key: &str) -> Result<String> {
        let stored = self.codecs.encode_key(key)?;
        validate_key(&stored)?;
        Ok(stored)
    }

    /// The subject `key` is stored on (read, watched, purged).
    fn subject(&self, key: &str) -> Result<String> {
        Ok(format!("{}{}", self.key_prefix, self.stored_key(key)?))
    }

    /// The subject a write of `key` is published to.
    fn write_subject(&self, key: &str) -> Result<String> {
        Ok(format!("{}{}", self.write_prefix, self.stored_key(key)?))
    }

    /// Publishes a revision of `key`, its value encoded by the value
    /// codec; the operation yields its revision.
    fn write(&self, key: &str, value: &[u8], opts: &PublishOptions) -> Op<u64> {
        let stored = self
            .write_subject(key)
            .and_then(|subject| Ok((subject, self.codecs.encode_value(value)?)));
        match stored {
            Ok((subject, value)) => self.write_stored(&subject, &value, opts),
            Err(e) => Op::fail(e),
        }
    }

    /// Publishes an encoded value to a key's subject.
    fn write_stored(&self, subject: &str, value: &[u8], opts: &PublishOptions) -> Op<u64> {
        let publish = self.js.publish(subject, value, opts);
        let kv = self.clone();
        Op::new(async move {
            match publish.await {
                Ok(ack) => Ok(ack.seq),
                Err(e) => Err(kv.explain(e).await),
            }
        })
    }

    /// A failure that nobody answered (no stream took a write, no replica
    /// answered a Direct Get) is `BucketNotFound` when the bucket is gone.
    async fn explain(&self, e: Error) -> Error {
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

    /// Stores `value` under `key`; returns the new revision.
    pub fn put(&self, key: &str, value: &[u8]) -> Op<u64> {
        self.write(key, value, &PublishOptions::default())
    }

    /// As `put`, and the revision expires after `ttl` (ADR-48: the bucket
    /// needs `limit_marker_ttl`, which allows per-message TTLs; the server
    /// then writes a purge marker when it expires).
    pub fn put_with_ttl(&self, key: &str, value: &[u8], ttl: Ttl) -> Op<u64> {
        let opts = PublishOptions {
            ttl: Some(ttl),
            ..PublishOptions::default()
        };
        self.write(key, value, &opts)
    }

    /// Stores `value` only if `key`'s latest revision is `last`
    /// (`WrongLastSequence` otherwise); returns the new revision.
    pub fn update(&self, key: &str, value: &[u8], last: u64) -> Op<u64> {
        self.compare_and_set(key, value, last, None)
    }

    fn compare_and_set(&self, key: &str, value: &[u8], last: u64, ttl: Option<Ttl>) -> Op<u64> {
        self.write(key, value, &Self::cas_options(last, ttl))
    }

    fn cas_options(last: u64, ttl: Option<Ttl>) -> PublishOptions {
        PublishOptions {
            expected_last_subject_seq: Some(last),
            ttl,
            ..PublishOptions::default()
        }
    }

    /// Stores `value` only if `key` has no live value (`KeyExists`
    /// otherwise). A deleted or purged key may be created again.
    pub fn create(&self, key: &str, value: &[u8]) -> Op<u64> {
        self.create_with(key, value, None)
    }

    /// As `create`, and the revision expires after `ttl` (ADR-48: the
    /// bucket needs `limit_marker_ttl`, which allows per-message TTLs; the
    /// server then writes a purge marker when it expires).
    pub fn create_with_ttl(&self, key: &str, value: &[u8], ttl: Ttl) -> Op<u64> {
        self.create_with(key, value, Some(ttl))
    }

    fn create_with(&self, key: &str, value: &[u8], ttl: Option<Ttl>) -> Op<u64> {
        Op::build(|| {
            // Encoded here, on the caller's thread, once for every retry.
            let stored = self.stored_key(key)?;
            let subject = format!("{}{stored}", self.write_prefix);
            let read_subject = format!("{}{stored}", self.key_prefix);
            let value = self.codecs.encode_value(value)?.into_owned();
            let (kv, key) = (self.clone(), key.to_string());
            Ok(async move {
                let mut last = 0;
                for _ in 0..=CREATE_RETRIES {
                    let opts = Self::cas_options(last, ttl);
                    match kv.write_stored(&subject, &value, &opts).await {
                        Err(e) if e.kind() == ErrorKind::WrongLastSequence => {}
                        r => return r,
                    }
                    match kv.entry(&read_subject, &key, None).await? {
                        Some(entry) if entry.operation != Operation::Put => last = entry.revision,
                        Some(entry) => {
                            return Err(Error::new(
                                ErrorKind::KeyExists,
                                format!("key {key:?} exists at revision {}", entry.revision),
                            )
                            .with_revision(entry.revision))
                        }
                        None => last = 0,
                    }
                }
                Err(Error::new(
                    ErrorKind::KeyExists,
                    format!("key {key:?} kept changing while being created"),
                ))
            })
        })
    }

    fn marker(
        &self,
        key: &str,
        op: &str,
        rollup: bool,
        last: Option<u64>,
        ttl: Option<Ttl>,
    ) -> Op<u64> {
        let mut h = Headers::new();
        let headers = h.set(OPERATION_HEADER, op).and_then(|_| {
            if rollup {
                h.set(
                    crate::jetstream::header_names::ROLLUP,
                    crate::jetstream::header_names::ROLLUP_SUBJECT,
                )
            } else {
                Ok(())
            }
        });
        if let Err(e) = headers {
            return Op::fail(e);
        }
        let opts = PublishOptions {
            headers: Some(h),
            expected_last_subject_seq: last,
            ttl,
            ..PublishOptions::default()
        };
        // A marker has no value to encode.
        match self.write_subject(key) {
            Ok(subject) => self.write_stored(&subject, b"", &opts),
            Err(e) => Op::fail(e),
        }
    }

    /// Writes a delete marker (history is kept); returns its revision.
    /// With `last`, only if the key's latest revision is `last`.
    pub fn delete(&self, key: &str, last: Option<u64>) -> Op<u64> {
        self.marker(key, "DEL", false, last, None)
    }

    /// Writes a purge marker that removes the key's earlier revisions;
    /// returns its revision.
    pub fn purge(&self, key: &str, last: Option<u64>) -> Op<u64> {
        self.marker(key, "PURGE", true, last, None)
    }

    /// As `purge`, and the purge marker itself expires after `ttl` (ADR-48:
    /// the bucket needs `limit_marker_ttl`), leaving no trace of the key.
    pub fn purge_with_ttl(&self, key: &str, last: Option<u64>, ttl: Ttl) -> Op<u64> {
        self.marker(key, "PURGE", true, last, Some(ttl))
    }

    /// Removes the delete and purge markers that are the latest revisions
    /// of their keys, as nats.go's PurgeDeletes: a marker older than
    /// `older_than` (`None`: every marker, whatever its age) goes with all
    /// its key's revisions; a younger one stays, with the key's earlier
    /// revisions removed (keep 1), so that watchers still see the delete.
    /// Yields how many messages the server removed.
    pub fn purge_deletes(&self, older_than: Option<Duration>) -> Op<u64> {
        let kv = self.clone();
        Op::new(async move {
            let filter = format!("{}>", kv.key_prefix);
            // Stored keys (not decoded): they name the subjects to purge.
            let markers: Vec<Entry> = kv
                .scan(filter, DeliverPolicy::LastPerSubject, true, false)
                .await?
                .into_iter()
                .filter(|e| e.operation != Operation::Put)
                .collect();
            let limit_ns = older_than.map(|age| {
                let now = std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .unwrap_or_default()
                    .as_nanos() as i64;
                now.saturating_sub(age.as_nanos().min(i64::MAX as u128) as i64)
            });
            let mut purged = 0;
            for e in markers {
                let mut req = json!({ "filter": format!("{}{}", kv.key_prefix, e.key) });
                if limit_ns.is_some_and(|limit| e.created_ns > limit) {
                    req["keep"] = Value::from(1);
                }
                purged += kv
                    .js
                    .purge_stream(&kv.stream, Some(&req.to_string()))
                    .await
                    .map_err(|err| bucket_error(err, &kv.bucket))?;
            }
            Ok(purged)
        })
    }

    /// The latest value of `key` (or the given revision). Fails with
    /// `KeyNotFound`, or `KeyDeleted` when it is a delete/purge marker.
    pub fn get(&self, key: &str, revision: Option<u64>) -> Op<Entry> {
        Op::build(|| {
            let subject = self.subject(key)?;
            let (kv, key) = (self.clone(), key.to_string());
            Ok(async move {
                let found = match kv.entry(&subject, &key, revision).await {
                    Ok(found) => found,
                    Err(e) => return Err(kv.explain(e).await),
                };
                match found {
                    None => Err(Error::new(
                        ErrorKind::KeyNotFound,
                        format!("key {key:?} not found"),
                    )),
                    Some(e) if e.operation != Operation::Put => Err(Error::new(
                        ErrorKind::KeyDeleted,
                        format!("key {key:?} was deleted at revision {}", e.revision),
                    )
                    .with_revision(e.revision)),
                    Some(e) => Ok(e),
                }
            })
        })
    }

    /// The stored revision (marker or value) of `key` (whose subject is
    /// `subject`), its value decoded, or `None` if there is none.
    async fn entry(
        &self,
        subject: &str,
        key: &str,
        revision: Option<u64>,
    ) -> Result<Option<Entry>> {
        let Some(m) = self
            .js
            .stored_msg(&self.stream, subject, revision, self.direct)
            .await?
        else {
            return Ok(None);
        };
        let operation = operation_of(m.headers.as_deref())?;
        let value = match operation {
            Operation::Put => self.codecs.decode_value(m.payload)?,
            _ => m.payload,
        };
        Ok(Some(Entry {
            bucket: Arc::clone(&self.bucket),
            key: key.to_string(),
            operation,
            value,
            revision: m.seq,
            created_ns: m.time_ns,
            delta: 0,
        }))
    }

    /// Every entry an ordered consumer on `filter` delivers up to now.
    /// Every entry an ordered consumer on `filter` delivers up to now,
    /// decoded when `decode`.
    async fn scan(
        &self,
        filter: String,
        deliver: DeliverPolicy,
        headers_only: bool,
        decode: bool,
    ) -> Result<Vec<Entry>> {
        let cfg = OrderedConfig {
            stream: self.stream.to_string(),
            filter_subjects: vec![filter],
            deliver,
            headers_only,
            until_drained: true,
            batch: SCAN_BATCH,
            expires: Duration::from_secs(30),
            idle_heartbeat: Duration::from_secs(5),
            limits: Limits::unlimited(),
            covers_stream: false,
        };
        let sink = EntrySink {
            kv: self.clone(),
            ignore_deletes: false,
            initial_done: true,
            decode,
            meta_only: headers_only,
        };
        let started = start_ordered(self.js.clone(), cfg, sink, watch_outcome).await?;
        let feed = started.feed;
        let mut entries = Vec::new();
        let collected = async {
            while let Some(item) = feed.recv().await? {
                if let WatchEvent::Entry(e) = item {
                    entries.push(e);
                }
            }
            Ok::<(), Error>(())
        }
        .await;
        feed.stop();
        // Its consumer is gone once the task has ended.
        let _ = started.task.await;
        collected.map(|()| entries)
    }

    /// Every kept revision of `key`, oldest first (markers included);
    /// `KeyNotFound` if there is none.
    pub fn history(&self, key: &str) -> Op<Vec<Entry>> {
        Op::build(|| {
            let subject = self.subject(key)?;
            let (kv, key) = (self.clone(), key.to_string());
            Ok(async move {
                let entries = kv.scan(subject, DeliverPolicy::All, false, true).await?;
                if entries.is_empty() {
                    return Err(Error::new(
                        ErrorKind::KeyNotFound,
                        format!("key {key:?} not found"),
                    ));
                }
                Ok(entries)
            })
        })
    }

    /// The bucket's typed status.
    pub fn bucket_status(&self) -> Op<KeyValueStatus> {
        let kv = self.clone();
        Op::new(async move {
            match kv.js.stream_info(&kv.stream).await {
                Ok(info) => Ok(KeyValueStatus::from_stream_info(&kv.bucket, info)),
                Err(e) => Err(bucket_error(e, &kv.bucket)),
            }
        })
    }

    /// The bucket's status: its backing stream's StreamInfo as JSON.
    pub fn status(&self) -> Op<Value> {
        let (info, bucket) = (self.js.stream_info(&self.stream), Arc::clone(&self.bucket));
        Op::new(async move { info.await.map_err(|e| bucket_error(e, &bucket)) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_mirror_or_sources_become_the_streams_as_nats_go_makes_them() {
        let (_, m) =
            stream_config_for(r#"{"bucket":"M","mirror":{"name":"ORIGIN","domain":"hub"}}"#)
                .unwrap();
        assert_eq!(
            m["mirror"],
            json!({"name": "KV_ORIGIN", "external": {"api": "$JS.hub.API"}})
        );
        assert_eq!(m["mirror_direct"], json!(true));
        assert!(!m.contains_key("subjects"), "a mirror holds no subjects");

        let (_, s) = stream_config_for(
            r#"{"bucket":"S","sources":[
                {"name":"A"},
                {"name":"KV_S","external":{"api":"$JS.far.API"}},
                {"name":"KV_B","domain":"far"},
                {"name":"plain","subject_transforms":[{"src":"x.>","dest":"$KV.S.x.>"}]}]}"#,
        )
        .unwrap();
        assert_eq!(s["subjects"], json!(["$KV.S.>"]));
        assert_eq!(
            s["sources"],
            json!([
                {"name": "KV_A", "subject_transforms": [{"src": "$KV.A.>", "dest": "$KV.S.>"}]},
                // The bucket itself in another domain: its subjects are the same.
                {"name": "KV_S", "external": {"api": "$JS.far.API"}},
                {"name": "KV_B", "external": {"api": "$JS.far.API"},
                 "subject_transforms": [{"src": "$KV.B.>", "dest": "$KV.S.>"}]},
                // Transforms given: taken as they are, any stream.
                {"name": "plain", "subject_transforms": [{"src": "x.>", "dest": "$KV.S.x.>"}]},
            ])
        );

        for (bad, names) in [
            (
                r#"{"bucket":"M","mirror":{"name":"O","domain":"d","external":{"api":"x"}}}"#,
                "both set",
            ),
            (r#"{"bucket":"M","mirror":{"domain":"d"}}"#, "mirror.name"),
            (
                r#"{"bucket":"M","mirror":{"name":"O","domain":"a.b"}}"#,
                "mirror.domain",
            ),
            (r#"{"bucket":"M","mirror":"O"}"#, "mirror"),
            (
                r#"{"bucket":"M","sources":[{"name":"a b"}]}"#,
                "sources.name",
            ),
            (r#"{"bucket":"M","sources":[7]}"#, "sources"),
        ] {
            let e = stream_config_for(bad).unwrap_err();
            assert_eq!(e.kind(), ErrorKind::Config, "{bad}");
            assert!(e.to_string().contains(names), "{bad}: {e}");
        }
    }

    #[test]
    fn a_mirror_is_read_on_the_mirrored_keys_and_written_to_its_bucket() {
        let prefixes = |api: &str, info: Value| kv_prefixes(api, "M", &info);
        let plain = json!({"config": {"name": "KV_M", "subjects": ["$KV.M.>"]}});
        let local = json!({"config": {"name": "KV_M", "mirror": {"name": "KV_O"}}});
        let far = json!({"config": {"name": "KV_M",
            "mirror": {"name": "KV_O", "external": {"api": "$JS.hub.API"}}}});
        let (default, domain) = ("$JS.API", "$JS.leaf.API");
        let own = || ("$KV.M.".to_string(), "$KV.M.".to_string());
        assert_eq!(prefixes(default, plain.clone()), own());
        assert_eq!(
            prefixes(domain, plain),
            ("$KV.M.".into(), "$JS.leaf.API.$KV.M.".into())
        );
        assert_eq!(
            prefixes(default, local.clone()),
            ("$KV.O.".into(), "$KV.O.".into())
        );
        assert_eq!(
            prefixes(domain, local),
            ("$KV.O.".into(), "$JS.leaf.API.$KV.O.".into())
        );
        // The mirror's own domain prefix, whatever the context's.
        assert_eq!(
            prefixes(domain, far),
            ("$KV.O.".into(), "$JS.hub.API.$KV.O.".into())
        );
    }

    #[test]
    fn a_status_reads_the_bucket_terms_of_its_stream_info() {
        let info = json!({
            "config": {
                "name": "KV_b", "description": "d", "max_msgs_per_subject": 5,
                "max_age": 3_600_000_000_000_i64, "storage": "memory", "num_replicas": 3,
                "compression": "s2", "metadata": {"team": "red", "n": 1},
                "subject_delete_marker_ttl": 1_000_000_000_i64
            },
            "state": {"messages": 4, "bytes": 120}
        });
        let s = KeyValueStatus::from_stream_info("b", info.clone());
        assert_eq!(s.bucket, "b");
        assert_eq!(
            (s.values, s.history, s.ttl_ns, s.bytes),
            (4, 5, 3_600_000_000_000, 120)
        );
        assert_eq!(
            (s.storage.as_str(), s.replicas, s.compressed),
            ("memory", 3, true)
        );
        assert_eq!(s.description.as_deref(), Some("d"));
        assert_eq!(s.metadata_json(), r#"{"team":"red"}"#);
        assert_eq!(s.limit_marker_ttl_ns, 1_000_000_000);
        assert_eq!(s.stream_info, info);

        // The defaults of a bare stream info.
        let bare = KeyValueStatus::from_stream_info("b", json!({"config": {"description": ""}}));
        assert_eq!(
            (bare.values, bare.history, bare.ttl_ns, bare.bytes),
            (0, 1, 0, 0)
        );
        assert_eq!(
            (bare.storage.as_str(), bare.replicas, bare.compressed),
            ("file", 1, false)
        );
        assert_eq!(bare.description, None);
        assert_eq!(bare.metadata_json(), "{}");
        assert_eq!(bare.limit_marker_ttl_ns, 0);
    }
}
