//! Buckets: what Key-Value (ADR-8) and Object Store (ADR-20) share. A
//! bucket of either kind is a stream named `<prefix><bucket>` holding the
//! kind's subjects; creating, binding, deleting, listing and reading the
//! status of one is the same stream call with errors in bucket terms.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use super::{CreateAction, JetStream};
use crate::error::{Error, ErrorKind, Result};
use crate::op::Op;

/// One kind of bucket: its stream names and subjects.
pub(crate) struct BucketKind {
    /// The stream name of bucket `b` is `<stream_prefix>b`.
    pub stream_prefix: &'static str,
    /// The subjects every bucket's stream of this kind holds (a plain
    /// stream that merely takes such subjects is no bucket).
    pub streams_subject: &'static str,
    /// The subjects the stream of bucket `b` must cover to be bound as
    /// one (a stream of the bucket's name holding other subjects is no
    /// bucket); `None`: not checked.
    pub bucket_subjects: Option<fn(&str) -> String>,
}

/// Bucket names: `[A-Za-z0-9_-]+`.
pub fn validate_bucket(name: &str) -> Result<()> {
    if name.is_empty()
        || !name
            .bytes()
            .all(|c| c.is_ascii_alphanumeric() || c == b'_' || c == b'-')
    {
        return Err(Error::new(
            ErrorKind::InvalidBucketName,
            format!("invalid bucket name {name:?}: use [A-Za-z0-9_-]+"),
        ));
    }
    Ok(())
}

/// A stream error in bucket terms.
pub(crate) fn bucket_error(e: Error, bucket: &str) -> Error {
    /// The JetStream API error of a write to a sealed stream.
    const SEALED_ERR_CODE: &str = "err_code 10109)";
    match e.kind() {
        ErrorKind::StreamNotFound => Error::new(
            ErrorKind::BucketNotFound,
            format!("bucket {bucket:?} not found"),
        ),
        ErrorKind::StreamNameInUse => Error::new(
            ErrorKind::BucketExists,
            format!("bucket {bucket:?} exists with another configuration"),
        ),
        ErrorKind::JetStreamApi if e.detail().ends_with(SEALED_ERR_CODE) => Error::new(
            ErrorKind::BucketSealed,
            format!("bucket {bucket:?} is sealed"),
        ),
        _ => e,
    }
}

/// Whether a StreamInfo's stream holds every subject `required` matches,
/// or mirrors another stream.
fn holds_subjects(info: &Value, required: &str) -> bool {
    info.pointer("/config/mirror").is_some_and(|m| !m.is_null())
        || info
            .pointer("/config/subjects")
            .and_then(Value::as_array)
            .is_some_and(|subjects| {
                subjects
                    .iter()
                    .filter_map(Value::as_str)
                    .any(|s| crate::subject::covers(s, required))
            })
}

/// `op` with its errors in bucket terms (an error before it started too).
fn in_bucket_terms<T: Send + 'static>(op: Op<T>, bucket: &str) -> Op<T> {
    let bucket = bucket.to_string();
    Op::build(|| {
        op.check().map_err(|e| bucket_error(e, &bucket))?;
        Ok(async move { op.await.map_err(|e| bucket_error(e, &bucket)) })
    })
}

impl BucketKind {
    pub(crate) fn stream_name(&self, bucket: &str) -> String {
        format!("{}{bucket}", self.stream_prefix)
    }

    /// Creates, updates or creates-or-updates (per `action`) the stream of
    /// `bucket` from its StreamConfig; its StreamInfo. Same configuration:
    /// bound; another: `BucketExists`; updating a missing one:
    /// `BucketNotFound`.
    pub(crate) fn create(
        &self,
        js: &JetStream,
        bucket: &str,
        stream_config: Map<String, Value>,
        action: CreateAction,
    ) -> Op<Value> {
        let op = js.create_stream(&Value::Object(stream_config).to_string(), action);
        in_bucket_terms(op, bucket)
    }

    /// The StreamInfo of an existing bucket. A stream of the bucket's
    /// name whose subjects do not cover `bucket_subjects` fails with
    /// `BucketNotFound` (a mirror, holding no subjects of its own, is not
    /// checked).
    pub(crate) fn bind(&self, js: &JetStream, bucket: &str) -> Op<Value> {
        if let Err(e) = validate_bucket(bucket) {
            return Op::fail(e);
        }
        let stream = self.stream_name(bucket);
        let required = self.bucket_subjects.map(|subjects| subjects(bucket));
        in_bucket_terms(js.stream_info(&stream), bucket).and_then(move |info| match required {
            Some(required) if !holds_subjects(&info, &required) => Err(Error::new(
                ErrorKind::BucketNotFound,
                format!("stream {stream:?} is no bucket: its subjects do not cover {required:?}"),
            )),
            _ => Ok(info),
        })
    }

    /// Deletes a bucket and everything in it.
    pub(crate) fn delete(&self, js: &JetStream, bucket: &str) -> Op<()> {
        match validate_bucket(bucket) {
            Ok(()) => in_bucket_terms(js.delete_stream(&self.stream_name(bucket)), bucket),
            Err(e) => Op::fail(e),
        }
    }

    /// The names of every bucket of this kind, from the paged
    /// `STREAM.NAMES` filtered by subject and name, as nats.go filters them.
    pub(crate) fn names(&'static self, js: &JetStream) -> Op<Vec<String>> {
        let js = js.clone();
        Op::new(async move {
            let names = super::all_names(
                &js,
                "STREAM.NAMES",
                "streams",
                Some(("subject", self.streams_subject)),
            )
            .await?;
            Ok(names
                .into_iter()
                .filter_map(|n| n.strip_prefix(self.stream_prefix).map(str::to_string))
                .collect())
        })
    }

    /// Each bucket of this kind (filtered as `names`) as `status` makes it
    /// of its name and StreamInfo, from the paged `STREAM.LIST` (no request
    /// per bucket).
    pub(crate) fn statuses<T: Send + 'static>(
        &'static self,
        js: &JetStream,
        status: fn(&str, Value) -> T,
    ) -> Op<Vec<T>> {
        let js = js.clone();
        Op::new(async move {
            let infos = super::all_stream_infos(&js, Some(self.streams_subject)).await?;
            Ok(infos
                .into_iter()
                .filter_map(|info| {
                    let name = info.pointer("/config/name")?.as_str()?;
                    let bucket = name.strip_prefix(self.stream_prefix)?.to_string();
                    Some(status(&bucket, info))
                })
                .collect())
        })
    }
}

/// What Key-Value and Object Store statuses read alike from a bucket's
/// StreamInfo.
#[derive(Debug, Clone)]
pub(crate) struct StreamStatusFields {
    pub description: Option<String>,
    /// The stream's max_age, nanoseconds (0: none).
    pub ttl_ns: i64,
    /// "file" or "memory".
    pub storage: String,
    pub replicas: i64,
    pub compression: bool,
    pub metadata: BTreeMap<String, String>,
    /// state.bytes.
    pub bytes: u64,
}

impl StreamStatusFields {
    pub(crate) fn of(info: &Value) -> Self {
        let cfg = |k: &str| info.pointer(&format!("/config/{k}"));
        StreamStatusFields {
            description: cfg("description")
                .and_then(Value::as_str)
                .filter(|d| !d.is_empty())
                .map(str::to_string),
            ttl_ns: cfg("max_age").and_then(Value::as_i64).unwrap_or(0),
            storage: cfg("storage")
                .and_then(Value::as_str)
                .unwrap_or("file")
                .to_string(),
            replicas: cfg("num_replicas").and_then(Value::as_i64).unwrap_or(1),
            compression: cfg("compression")
                .and_then(Value::as_str)
                .is_some_and(|c| c != "none"),
            metadata: cfg("metadata").map(metadata_of).unwrap_or_default(),
            bytes: info
                .pointer("/state/bytes")
                .and_then(Value::as_u64)
                .unwrap_or(0),
        }
    }
}

/// A metadata object of strings. `strict`: anything else (a non-string
/// value, not an object) is refused with `Err(())`, for the caller to say
/// in its own terms; otherwise it is left out.
pub(crate) fn metadata_from_json(
    v: &Value,
    strict: bool,
) -> std::result::Result<BTreeMap<String, String>, ()> {
    let mut out = BTreeMap::new();
    match v {
        Value::Object(m) => {
            for (k, v) in m {
                match v.as_str() {
                    Some(s) => {
                        out.insert(k.clone(), s.to_string());
                    }
                    None if strict => return Err(()),
                    None => {}
                }
            }
        }
        Value::Null => {}
        _ if strict => return Err(()),
        _ => {}
    }
    Ok(out)
}

/// A stream's or bucket's metadata (an object of strings; anything else
/// is left out).
pub(crate) fn metadata_of(v: &Value) -> BTreeMap<String, String> {
    metadata_from_json(v, false).unwrap_or_default()
}

/// Metadata as a JSON object of strings.
pub(crate) fn metadata_to_json(m: &BTreeMap<String, String>) -> String {
    Value::Object(
        m.iter()
            .map(|(k, v)| (k.clone(), Value::from(v.as_str())))
            .collect(),
    )
    .to_string()
}
