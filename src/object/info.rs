//! What describes objects and buckets: the meta a writer gives, the
//! ObjectInfo JSON stored per object (ADR-20 field names, as nats.go and
//! nats.js write it) and a bucket's status.

use std::collections::BTreeMap;

use serde_json::{json, Map, Value};

use crate::error::{Error, ErrorKind, Result};
use crate::headers::Headers;
use crate::jetstream::bucket::{self, metadata_to_json};
use crate::jetstream::time::{format_rfc3339_ns, parse_rfc3339_ns};

/// What a writer says about an object (and `update_meta` changes).
#[derive(Debug, Clone, Default)]
pub struct ObjectMeta {
    pub name: String,
    pub description: Option<String>,
    pub headers: Option<Headers>,
    pub metadata: BTreeMap<String, String>,
    /// Bytes per chunk (`None`: 128 KiB).
    pub chunk_size: Option<usize>,
}

fn meta_error(field: &str, expected: &str) -> Error {
    Error::new(
        ErrorKind::Config,
        format!("ObjectMeta.{field}: expected {expected}"),
    )
}

/// `{"Name": ["v", ...]}` (a plain string is one value) as headers.
fn headers_from_json(v: &Value, strict: bool) -> Result<Option<Headers>> {
    let Some(map) = v.as_object() else {
        return if strict {
            Err(meta_error("headers", "an object of string lists"))
        } else {
            Ok(None)
        };
    };
    let mut h = Headers::new();
    for (name, values) in map {
        let values: Vec<&str> = match values {
            Value::String(s) => vec![s.as_str()],
            Value::Array(a) if a.iter().all(Value::is_string) => {
                a.iter().filter_map(Value::as_str).collect()
            }
            _ if strict => return Err(meta_error("headers", "an object of string lists")),
            _ => continue,
        };
        for value in values {
            match h.add(name, value) {
                Ok(()) => {}
                Err(e) if strict => return Err(e),
                Err(_) => {}
            }
        }
    }
    Ok((!h.is_empty()).then_some(h))
}

fn headers_to_json(h: &Headers) -> Value {
    let mut map: Map<String, Value> = Map::new();
    for (name, value) in h.iter() {
        match map.entry(name.to_string()).or_insert_with(|| json!([])) {
            Value::Array(a) => a.push(Value::from(value)),
            _ => unreachable!("header values are lists"),
        }
    }
    Value::Object(map)
}

/// A metadata object of strings, refused in ObjectMeta's terms.
fn metadata_from_json(v: &Value, strict: bool) -> Result<BTreeMap<String, String>> {
    bucket::metadata_from_json(v, strict)
        .map_err(|()| meta_error("metadata", "an object of strings"))
}

impl ObjectMeta {
    /// Parses a meta JSON object: "name", "description", "headers",
    /// "metadata", "chunk_size" (any other field is an error). `None` or
    /// "" is an empty meta.
    pub fn from_json(json: Option<&str>) -> Result<ObjectMeta> {
        let mut meta = ObjectMeta::default();
        let Some(text) = json.filter(|t| !t.trim().is_empty()) else {
            return Ok(meta);
        };
        let v: Value = serde_json::from_str(text)
            .map_err(|e| Error::new(ErrorKind::Config, format!("ObjectMeta: invalid JSON: {e}")))?;
        let Value::Object(fields) = v else {
            return Err(Error::new(
                ErrorKind::Config,
                "ObjectMeta: expected a JSON object",
            ));
        };
        for (k, v) in fields {
            if v.is_null() {
                continue;
            }
            match k.as_str() {
                "name" => {
                    meta.name = v
                        .as_str()
                        .ok_or_else(|| meta_error("name", "a string"))?
                        .to_string();
                    super::validate_name(&meta.name)?;
                }
                "description" => {
                    meta.description = Some(
                        v.as_str()
                            .ok_or_else(|| meta_error("description", "a string"))?
                            .to_string(),
                    )
                }
                "headers" => meta.headers = headers_from_json(&v, true)?,
                "metadata" => meta.metadata = metadata_from_json(&v, true)?,
                "chunk_size" => match v.as_u64() {
                    Some(n) if n > 0 && n <= u32::MAX as u64 => meta.chunk_size = Some(n as usize),
                    _ => return Err(meta_error("chunk_size", "a positive integer")),
                },
                other => {
                    return Err(Error::new(
                        ErrorKind::Config,
                        format!("ObjectMeta: unknown field {other:?}"),
                    ))
                }
            }
        }
        Ok(meta)
    }

    /// The meta of a put of `name`: `json` may repeat the name, not change it.
    pub fn for_put(name: &str, json: Option<&str>) -> Result<ObjectMeta> {
        let mut meta = ObjectMeta::from_json(json)?;
        if !meta.name.is_empty() && meta.name != name {
            return Err(Error::new(
                ErrorKind::Config,
                format!(
                    "ObjectMeta.name {:?} differs from the object name {name:?}",
                    meta.name
                ),
            ));
        }
        meta.name = name.to_string();
        super::validate_name(name)?;
        Ok(meta)
    }
}

/// Where a link points: an object of a bucket, or a whole bucket.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ObjectLink {
    pub bucket: String,
    /// `None` for a link to a bucket.
    pub name: Option<String>,
}

/// The description of an object, as stored in its meta message.
#[derive(Debug, Clone, Default)]
pub struct ObjectInfo {
    pub name: String,
    pub description: Option<String>,
    pub headers: Option<Headers>,
    pub metadata: BTreeMap<String, String>,
    pub link: Option<ObjectLink>,
    /// The chunk size the writer used (`None` if it recorded none).
    pub max_chunk_size: Option<u32>,
    pub bucket: String,
    pub nuid: String,
    pub size: u64,
    pub chunks: u64,
    /// `SHA-256=<base64url>`; `None` for links and deleted objects.
    pub digest: Option<String>,
    pub deleted: bool,
    /// When its description was stored (the server's time when read back).
    pub mtime_ns: i64,
    /// The stream sequence its description is stored at (nats.js's
    /// `revision`): as read back, or as stored by the call that returns
    /// it; not part of the stored JSON.
    pub revision: u64,
}

impl ObjectInfo {
    pub fn is_link(&self) -> bool {
        self.link.is_some()
    }

    /// The metadata as a JSON object of strings.
    pub fn metadata_json(&self) -> String {
        metadata_to_json(&self.metadata)
    }

    /// The ObjectInfo JSON, as ADR-20 clients write it.
    pub fn to_meta_json(&self) -> String {
        let mut v = Map::new();
        v.insert("name".into(), Value::from(self.name.as_str()));
        if let Some(d) = &self.description {
            v.insert("description".into(), Value::from(d.as_str()));
        }
        if let Some(h) = self.headers.as_ref().filter(|h| !h.is_empty()) {
            v.insert("headers".into(), headers_to_json(h));
        }
        if !self.metadata.is_empty() {
            v.insert(
                "metadata".into(),
                serde_json::from_str(&self.metadata_json()).unwrap_or(Value::Null),
            );
        }
        let mut options = Map::new();
        if let Some(l) = &self.link {
            let mut link = json!({ "bucket": l.bucket });
            if let Some(n) = &l.name {
                link["name"] = Value::from(n.as_str());
            }
            options.insert("link".into(), link);
        }
        if let Some(c) = self.max_chunk_size {
            options.insert("max_chunk_size".into(), Value::from(c));
        }
        if !options.is_empty() {
            v.insert("options".into(), Value::Object(options));
        }
        v.insert("bucket".into(), Value::from(self.bucket.as_str()));
        v.insert("nuid".into(), Value::from(self.nuid.as_str()));
        v.insert("size".into(), Value::from(self.size));
        v.insert(
            "mtime".into(),
            Value::from(format_rfc3339_ns(self.mtime_ns)),
        );
        v.insert("chunks".into(), Value::from(self.chunks));
        if let Some(d) = &self.digest {
            v.insert("digest".into(), Value::from(d.as_str()));
        }
        if self.deleted {
            v.insert("deleted".into(), Value::from(true));
        }
        Value::Object(v).to_string()
    }

    /// Reads a stored description; `stored_ns` (the meta message's time)
    /// is its mtime, as nats.go reports it.
    pub fn from_meta_json(payload: &[u8], stored_ns: i64) -> Result<ObjectInfo> {
        let v: Value = serde_json::from_slice(payload).map_err(|e| {
            Error::new(
                ErrorKind::JetStream,
                format!("invalid object description: {e}"),
            )
        })?;
        let text = |k: &str| v.get(k).and_then(Value::as_str).map(str::to_string);
        let options = v.get("options");
        let link = options.and_then(|o| o.get("link")).and_then(|l| {
            let bucket = l.get("bucket")?.as_str()?.to_string();
            let name = l
                .get("name")
                .and_then(Value::as_str)
                .filter(|n| !n.is_empty())
                .map(str::to_string);
            Some(ObjectLink { bucket, name })
        });
        let name = text("name").ok_or_else(|| {
            Error::new(ErrorKind::JetStream, "invalid object description: no name")
        })?;
        let written_ns = v
            .get("mtime")
            .and_then(Value::as_str)
            .and_then(parse_rfc3339_ns)
            .unwrap_or(0);
        Ok(ObjectInfo {
            name,
            description: text("description").filter(|d| !d.is_empty()),
            headers: match v.get("headers") {
                Some(h) => headers_from_json(h, false)?,
                None => None,
            },
            metadata: metadata_from_json(v.get("metadata").unwrap_or(&Value::Null), false)?,
            link,
            max_chunk_size: options
                .and_then(|o| o.get("max_chunk_size"))
                .and_then(Value::as_u64)
                .filter(|&c| c > 0)
                .map(|c| c.min(u32::MAX as u64) as u32),
            bucket: text("bucket").unwrap_or_default(),
            nuid: text("nuid").unwrap_or_default(),
            size: v.get("size").and_then(Value::as_u64).unwrap_or(0),
            chunks: v.get("chunks").and_then(Value::as_u64).unwrap_or(0),
            digest: text("digest").filter(|d| !d.is_empty()),
            deleted: v.get("deleted").and_then(Value::as_bool).unwrap_or(false),
            mtime_ns: if stored_ns != 0 {
                stored_ns
            } else {
                written_ns
            },
            revision: 0,
        })
    }
}

/// A bucket's status, read from its stream's info.
#[derive(Debug, Clone)]
pub struct ObjectStoreStatus {
    pub bucket: String,
    pub description: Option<String>,
    /// Maximum age of objects, nanoseconds (0: none).
    pub ttl_ns: i64,
    /// "file" or "memory".
    pub storage: String,
    pub replicas: i64,
    pub sealed: bool,
    /// Bytes stored (chunks and descriptions).
    pub size: u64,
    pub compression: bool,
    pub metadata: BTreeMap<String, String>,
    /// The backing stream's StreamInfo.
    pub stream_info: Value,
}

impl ObjectStoreStatus {
    pub(crate) fn from_stream_info(bucket: &str, info: Value) -> ObjectStoreStatus {
        let f = bucket::StreamStatusFields::of(&info);
        ObjectStoreStatus {
            bucket: bucket.to_string(),
            description: f.description,
            ttl_ns: f.ttl_ns,
            storage: f.storage,
            replicas: f.replicas,
            sealed: info
                .pointer("/config/sealed")
                .and_then(Value::as_bool)
                .unwrap_or(false),
            size: f.bytes,
            compression: f.compression,
            metadata: f.metadata,
            stream_info: info,
        }
    }

    /// The metadata as a JSON object of strings.
    pub fn metadata_json(&self) -> String {
        metadata_to_json(&self.metadata)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn info_json_round_trips() {
        let mut h = Headers::new();
        h.add("X-A", "1").unwrap();
        h.add("X-A", "2").unwrap();
        let info = ObjectInfo {
            name: "a/b c".into(),
            description: Some("d".into()),
            headers: Some(h),
            metadata: [("k".to_string(), "v".to_string())].into(),
            link: Some(ObjectLink {
                bucket: "B".into(),
                name: Some("n".into()),
            }),
            max_chunk_size: Some(1024),
            bucket: "B".into(),
            nuid: "N".into(),
            size: 10,
            chunks: 1,
            digest: Some("SHA-256=x".into()),
            deleted: false,
            mtime_ns: 1_709_210_096_123_456_789,
            revision: 0,
        };
        let back = ObjectInfo::from_meta_json(info.to_meta_json().as_bytes(), 0).unwrap();
        assert_eq!(back.to_meta_json(), info.to_meta_json());
        let h = back.headers.unwrap();
        assert_eq!(h.get_all("X-A").collect::<Vec<_>>(), ["1", "2"]);
    }

    #[test]
    fn meta_json_is_checked() {
        assert!(ObjectMeta::from_json(Some(r#"{"chunk_size":0}"#)).is_err());
        assert!(ObjectMeta::from_json(Some(r#"{"bogus":1}"#)).is_err());
        assert!(ObjectMeta::from_json(Some(r#"{"headers":{"X":["a\r\nb"]}}"#)).is_err());
        assert!(ObjectMeta::for_put("a", Some(r#"{"name":"b"}"#)).is_err());
        assert_eq!(
            ObjectMeta::from_json(Some(r#"{"name":""}"#))
                .unwrap_err()
                .kind(),
            ErrorKind::InvalidObjectName,
            "a rename to nothing is refused; an absent name keeps it"
        );
        let m = ObjectMeta::for_put("a", Some(r#"{"headers":{"X":"1"},"chunk_size":5}"#)).unwrap();
        assert_eq!(m.chunk_size, Some(5));
        assert_eq!(m.headers.unwrap().get("X"), Some("1"));
        assert_eq!(
            ObjectMeta::for_put("", None).unwrap_err().kind(),
            ErrorKind::InvalidObjectName
        );
    }
}
