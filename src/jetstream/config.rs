//! Structured configuration crossing the C ABI as JSON text, checked
//! field by field against a schema with the server's own field names.
//!
//! Known fields are validated (the error names the field) and normalised
//! (durations become integer nanoseconds); unknown fields are passed
//! through untouched, so configuration the library does not model yet
//! still reaches the server.

use serde_json::{Map, Value};

use super::duration::duration_from_json;
use crate::error::{Error, ErrorKind, Result};

/// What a known field may hold.
#[derive(Debug, Clone, Copy)]
pub enum Kind {
    Str,
    Bool,
    /// Any integer (limits use -1 for "unlimited").
    Int,
    /// A non-negative integer.
    UInt,
    /// Non-negative nanoseconds, or a duration string.
    Duration,
    /// One of these strings.
    Enum(&'static [&'static str]),
    StrList,
    /// Durations, each as for `Duration`.
    DurationList,
    Object,
    ObjectList,
    /// An object whose values are strings (metadata).
    StrMap,
}

pub type Schema = &'static [(&'static str, Kind)];

fn config_error(what: &str, field: &str, expected: &str) -> Error {
    Error::new(
        ErrorKind::Config,
        format!("{what}.{field}: expected {expected}"),
    )
}

fn check(what: &str, field: &str, kind: Kind, v: &mut Value) -> Result<()> {
    let ok = match kind {
        Kind::Str => v.is_string(),
        Kind::Bool => v.is_boolean(),
        Kind::Int => v.as_i64().is_some(),
        Kind::UInt => v.as_u64().is_some(),
        Kind::Duration => {
            match duration_from_json(v) {
                Some(Ok(ns)) if ns >= 0 => *v = Value::from(ns),
                Some(Ok(_)) => return Err(config_error(what, field, "a non-negative duration")),
                Some(Err(e)) => {
                    return Err(Error::new(
                        ErrorKind::Config,
                        format!("{what}.{field}: {}", e.detail()),
                    ))
                }
                None => {
                    return Err(config_error(
                        what,
                        field,
                        "a duration (integer nanoseconds or a string like \"90s\")",
                    ))
                }
            }
            true
        }
        Kind::Enum(values) => match v.as_str() {
            Some(s) if values.contains(&s) => true,
            _ => {
                return Err(config_error(
                    what,
                    field,
                    &format!("one of {}", values.join(", ")),
                ))
            }
        },
        Kind::StrList => v.as_array().is_some_and(|a| a.iter().all(Value::is_string)),
        Kind::DurationList => {
            let Some(items) = v.as_array_mut() else {
                return Err(config_error(what, field, "a list of durations"));
            };
            for item in items {
                check(what, field, Kind::Duration, item)?;
            }
            true
        }
        Kind::Object => v.is_object(),
        Kind::ObjectList => v.as_array().is_some_and(|a| a.iter().all(Value::is_object)),
        Kind::StrMap => v
            .as_object()
            .is_some_and(|m| m.values().all(Value::is_string)),
    };
    if ok {
        Ok(())
    } else {
        let expected = match kind {
            Kind::Str => "a string",
            Kind::Bool => "true or false",
            Kind::Int => "an integer",
            Kind::UInt => "a non-negative integer",
            Kind::StrList => "a list of strings",
            Kind::Object => "an object",
            Kind::ObjectList => "a list of objects",
            Kind::StrMap => "an object of strings",
            Kind::Duration | Kind::Enum(_) | Kind::DurationList => unreachable!(),
        };
        Err(config_error(what, field, expected))
    }
}

/// Parses `json` as an object and checks it against `schema`. `null`
/// fields are dropped (absent). `what` names the structure in errors.
pub fn normalize(what: &str, json: &str, schema: Schema) -> Result<Map<String, Value>> {
    let value: Value = serde_json::from_str(json)
        .map_err(|e| Error::new(ErrorKind::Config, format!("{what}: invalid JSON: {e}")))?;
    let Value::Object(mut map) = value else {
        return Err(Error::new(
            ErrorKind::Config,
            format!("{what}: expected a JSON object"),
        ));
    };
    map.retain(|_, v| !v.is_null());
    for (field, kind) in schema {
        if let Some(v) = map.get_mut(*field) {
            check(what, field, *kind, v)?;
        }
    }
    Ok(map)
}

/// Turns a StreamSource's `domain` (nats.go's and nats.js's client-side
/// field; the server knows none) into the `external` API prefix that
/// reaches the stream in that domain. `what` names the source in errors.
pub fn domain_to_external(what: &str, source: &mut Map<String, Value>) -> Result<()> {
    let domain = match source.remove("domain") {
        None | Some(Value::Null) => return Ok(()),
        Some(Value::String(d)) if d.is_empty() => return Ok(()),
        Some(Value::String(d)) => d,
        Some(_) => {
            return Err(Error::new(
                ErrorKind::Config,
                format!("{what}.domain: must be a string"),
            ))
        }
    };
    if source.get("external").is_some_and(|e| !e.is_null()) {
        return Err(Error::new(
            ErrorKind::Config,
            format!("{what}: domain and external are both set"),
        ));
    }
    if domain.contains(|c: char| matches!(c, '.' | '*' | '>') || c.is_whitespace()) {
        return Err(Error::new(
            ErrorKind::Config,
            format!("{what}.domain: invalid domain {domain:?}"),
        ));
    }
    source.insert(
        "external".into(),
        serde_json::json!({ "api": format!("$JS.{domain}.API") }),
    );
    Ok(())
}

/// `domain_to_external` on a StreamConfig's mirror and sources.
pub fn stream_source_domains(cfg: &mut Map<String, Value>) -> Result<()> {
    if let Some(Value::Object(mirror)) = cfg.get_mut("mirror") {
        domain_to_external("StreamConfig.mirror", mirror)?;
    }
    if let Some(Value::Array(sources)) = cfg.get_mut("sources") {
        for source in sources.iter_mut().filter_map(Value::as_object_mut) {
            domain_to_external("StreamConfig.sources", source)?;
        }
    }
    Ok(())
}

/// A stream or consumer name: non-empty, without '.', '*', '>', '/', '\'
/// or whitespace.
pub fn validate_name(what: &str, name: &str) -> Result<()> {
    let bad = name.is_empty()
        || name.chars().any(|c| {
            matches!(c, '.' | '*' | '>' | '/' | '\\') || c.is_whitespace() || c.is_control()
        });
    if bad {
        return Err(Error::new(
            ErrorKind::InvalidArgument,
            format!("invalid {what} name {name:?}: empty, or has '.', '*', '>', '/', '\\' or whitespace"),
        ));
    }
    Ok(())
}

const RETENTION: &[&str] = &["limits", "interest", "workqueue"];
/// Storage types, shared with the KV and Object Store schemas.
pub const STORAGE: &[&str] = &["file", "memory"];
const DISCARD: &[&str] = &["old", "new"];
const COMPRESSION: &[&str] = &["none", "s2"];

/// StreamConfig (ADR-37 field names).
pub const STREAM_CONFIG: Schema = &[
    ("name", Kind::Str),
    ("description", Kind::Str),
    ("subjects", Kind::StrList),
    ("retention", Kind::Enum(RETENTION)),
    ("storage", Kind::Enum(STORAGE)),
    ("num_replicas", Kind::UInt),
    ("max_consumers", Kind::Int),
    ("max_msgs", Kind::Int),
    ("max_bytes", Kind::Int),
    ("max_msgs_per_subject", Kind::Int),
    ("max_msg_size", Kind::Int),
    ("max_age", Kind::Duration),
    ("discard", Kind::Enum(DISCARD)),
    ("discard_new_per_subject", Kind::Bool),
    ("no_ack", Kind::Bool),
    ("duplicate_window", Kind::Duration),
    ("placement", Kind::Object),
    ("mirror", Kind::Object),
    ("sources", Kind::ObjectList),
    ("sealed", Kind::Bool),
    ("deny_delete", Kind::Bool),
    ("deny_purge", Kind::Bool),
    ("allow_rollup_hdrs", Kind::Bool),
    ("allow_direct", Kind::Bool),
    ("mirror_direct", Kind::Bool),
    ("compression", Kind::Enum(COMPRESSION)),
    ("first_seq", Kind::UInt),
    ("subject_transform", Kind::Object),
    ("republish", Kind::Object),
    ("consumer_limits", Kind::Object),
    ("metadata", Kind::StrMap),
    ("allow_msg_ttl", Kind::Bool),
    ("subject_delete_marker_ttl", Kind::Duration),
    ("allow_atomic", Kind::Bool),
    ("allow_msg_counter", Kind::Bool),
    ("allow_msg_schedules", Kind::Bool),
];

/// Options of a stream purge.
pub const PURGE_REQUEST: Schema = &[
    ("filter", Kind::Str),
    ("seq", Kind::UInt),
    ("keep", Kind::UInt),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalizes_durations_and_keeps_unknown_fields() {
        let m = normalize(
            "StreamConfig",
            r#"{"name":"S","max_age":"1h","duplicate_window":120000000000,"future_field":{"x":1},"description":null}"#,
            STREAM_CONFIG,
        )
        .unwrap();
        assert_eq!(m["max_age"], 3_600_000_000_000i64);
        assert_eq!(m["duplicate_window"], 120_000_000_000i64);
        assert_eq!(m["future_field"]["x"], 1);
        assert!(!m.contains_key("description"));
    }

    #[test]
    fn names_the_bad_field() {
        for (json, field) in [
            (r#"{"storage":"disk"}"#, "storage"),
            (r#"{"max_age":"forever"}"#, "max_age"),
            (r#"{"max_age":-5}"#, "max_age"),
            (r#"{"subjects":"a.b"}"#, "subjects"),
            (r#"{"num_replicas":-1}"#, "num_replicas"),
            (r#"{"metadata":{"a":1}}"#, "metadata"),
        ] {
            let e = normalize("StreamConfig", json, STREAM_CONFIG).unwrap_err();
            assert_eq!(e.kind(), ErrorKind::Config);
            assert!(
                e.detail().contains(&format!("StreamConfig.{field}")),
                "{}",
                e.detail()
            );
        }
        assert!(normalize("StreamConfig", "[1]", STREAM_CONFIG).is_err());
        assert!(normalize("StreamConfig", "{", STREAM_CONFIG).is_err());
    }

    #[test]
    fn stream_names() {
        assert!(validate_name("stream", "ORDERS_1-x").is_ok());
        for bad in ["", "a.b", "a*", "a>", "a/b", "a\\b", "a b", "a\tb"] {
            assert!(validate_name("stream", bad).is_err(), "{bad:?}");
        }
    }
}
