//! What a service, a group and an endpoint are configured with, and the
//! ADR-32 rules that configuration must follow (checked before anything
//! is sent to the server).

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::error::{Error, ErrorKind, Result};

/// The queue group every endpoint joins unless told otherwise (ADR-32).
pub const DEFAULT_QUEUE_GROUP: &str = "q";

/// An endpoint's or group's queue group. ADR-32 revision 5: a queue group
/// can be named, inherited from the enclosing group or service, or turned
/// off (a plain subscription: every instance gets every request).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum QueueGroup {
    /// The enclosing group's or service's (the service's default: "q").
    #[default]
    Inherit,
    Named(String),
    Disabled,
}

impl QueueGroup {
    /// What `self` comes to inside `parent` (already resolved).
    pub(crate) fn resolve(&self, parent: &QueueGroup) -> QueueGroup {
        match (self, parent) {
            (QueueGroup::Inherit, QueueGroup::Inherit) => {
                QueueGroup::Named(DEFAULT_QUEUE_GROUP.to_string())
            }
            (QueueGroup::Inherit, p) => p.clone(),
            (q, _) => q.clone(),
        }
    }

    /// The name used on the wire ("" when disabled, as nats.go reports it).
    pub(crate) fn wire_name(&self) -> &str {
        match self {
            QueueGroup::Named(q) => q,
            QueueGroup::Inherit => DEFAULT_QUEUE_GROUP,
            QueueGroup::Disabled => "",
        }
    }
}

/// Data for an endpoint's `data` field in STATS: JSON text, or `None` to
/// leave the field out. Called for every STATS request and `stats()`, on a
/// library thread, never on the runtime.
pub type StatsHandler = Arc<dyn Fn(&EndpointRef<'_>) -> Option<String> + Send + Sync>;

/// Told of every handler failure, on the thread that saw it, and of
/// requests dropped over an endpoint's pending limits, on the client's
/// event dispatcher thread (ADR-32's error handler).
pub type ErrorHandler = Arc<dyn Fn(&ServiceError) + Send + Sync>;

/// The endpoint a stats handler is asked about.
#[derive(Debug)]
pub struct EndpointRef<'a> {
    pub name: &'a str,
    pub subject: &'a str,
}

/// A handler failure, or requests dropped over an endpoint's pending
/// limits. (A response that cannot be sent is the respond call's error,
/// counted in the endpoint's stats.)
#[derive(Debug, Clone)]
pub struct ServiceError {
    /// The endpoint's name.
    pub endpoint: String,
    /// The failed request's subject; for dropped requests the endpoint's
    /// subject (wildcards as subscribed).
    pub subject: String,
    /// The error code sent to the requester (500 for a handler failure);
    /// 0 for requests dropped over the endpoint's pending limits (a slow
    /// consumer: no reply carried it).
    pub code: i32,
    pub description: String,
}

/// `add_service`'s configuration.
#[derive(Clone, Default)]
pub struct ServiceConfig {
    /// The kind of service: `A-Z a-z 0-9 - _`, shared by its instances.
    pub name: String,
    /// A SemVer 2.0 version.
    pub version: String,
    pub description: String,
    pub metadata: BTreeMap<String, String>,
    /// The endpoints' queue group (Inherit: "q").
    pub queue_group: QueueGroup,
    pub stats_handler: Option<StatsHandler>,
    pub error_handler: Option<ErrorHandler>,
}

impl std::fmt::Debug for ServiceConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServiceConfig")
            .field("name", &self.name)
            .field("version", &self.version)
            .field("description", &self.description)
            .field("metadata", &self.metadata)
            .field("queue_group", &self.queue_group)
            .finish_non_exhaustive()
    }
}

/// An endpoint's configuration (`add_endpoint`).
#[derive(Debug, Clone, Default)]
pub struct EndpointConfig {
    /// `A-Z a-z 0-9 - _`; also the subject when `subject` is `None`.
    pub name: String,
    /// The subject inside the group (wildcards allowed, `>` last).
    pub subject: Option<String>,
    pub queue_group: QueueGroup,
    pub metadata: BTreeMap<String, String>,
    /// The endpoint subscription's pending limits (nats.go's
    /// `WithEndpointPendingLimits`): messages and bytes, each `None` for
    /// the client's default, negative for no limit, never 0. Requests over
    /// them are dropped and reported as the endpoint's errors.
    pub pending_msgs_limit: Option<i64>,
    pub pending_bytes_limit: Option<i64>,
}

pub(crate) fn config_error(what: String) -> Error {
    Error::new(ErrorKind::ServiceConfig, what)
}

/// A service or endpoint name: `^[A-Za-z0-9\-_]+$`.
pub fn validate_name(what: &str, name: &str) -> Result<()> {
    if name.is_empty()
        || !name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
    {
        return Err(config_error(format!(
            "invalid {what} name {name:?}: it must be non-empty and consist of A-Z, a-z, 0-9, dash and underscore"
        )));
    }
    Ok(())
}

/// A SemVer 2.0 version (the grammar of semver.org's suggested regex).
pub fn validate_version(version: &str) -> Result<()> {
    if is_semver(version) {
        Ok(())
    } else {
        Err(config_error(format!(
            "invalid version {version:?}: it must be a SemVer 2.0 version such as 1.0.0"
        )))
    }
}

fn is_semver(v: &str) -> bool {
    let (rest, build) = match v.split_once('+') {
        Some((r, b)) => (r, Some(b)),
        None => (v, None),
    };
    let (core, pre) = match rest.split_once('-') {
        Some((c, p)) => (c, Some(p)),
        None => (rest, None),
    };
    let numeric = |s: &str| {
        !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) && (s == "0" || !s.starts_with('0'))
    };
    let ident =
        |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-');
    let parts: Vec<&str> = core.split('.').collect();
    if parts.len() != 3 || !parts.iter().all(|p| numeric(p)) {
        return false;
    }
    // A numeric pre-release identifier has no leading zero.
    let pre_ok = pre.is_none_or(|p| {
        p.split('.')
            .all(|id| ident(id) && (!id.bytes().all(|b| b.is_ascii_digit()) || numeric(id)))
    });
    pre_ok && build.is_none_or(|b| b.split('.').all(ident))
}

/// An endpoint subject or group prefix: no spaces, `>` only at the end
/// (nats.go's `^[^ >]*[>]?$`); the full subject is checked as a subscribe
/// subject once the group prefix is joined.
pub(crate) fn validate_subject_part(what: &str, s: &str, allow_tail_wildcard: bool) -> Result<()> {
    let body = if allow_tail_wildcard {
        s.strip_suffix('>').unwrap_or(s)
    } else {
        s
    };
    if body.contains(' ') || body.contains('>') {
        return Err(config_error(format!(
            "invalid {what} {s:?}: no spaces, and a '>' only at the end"
        )));
    }
    Ok(())
}

pub(crate) fn validate_queue_group(q: &QueueGroup) -> Result<()> {
    if let QueueGroup::Named(name) = q {
        crate::subject::validate_queue(name)
            .and_then(|()| validate_subject_part("queue group", name, true))
            .map_err(|e| config_error(e.to_string()))?;
    }
    Ok(())
}

/// The JSON form of a service's, group's or endpoint's settings (the
/// field names of nats.go's `micro` configs). Unknown fields are refused:
/// a misspelt "queue_group" must not silently fall back to "q".
#[derive(serde::Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct JsonConfig {
    name: Option<String>,
    version: Option<String>,
    description: Option<String>,
    subject: Option<String>,
    metadata: Option<BTreeMap<String, String>>,
    queue_group: Option<String>,
    #[serde(default)]
    queue_group_disabled: bool,
    pending_msgs_limit: Option<i64>,
    pending_bytes_limit: Option<i64>,
}

impl JsonConfig {
    fn parse(what: &str, json: &str, allowed: &[&str]) -> Result<JsonConfig> {
        let c: JsonConfig = serde_json::from_str(json)
            .map_err(|e| config_error(format!("invalid {what} configuration: {e}")))?;
        let present = [
            ("version", c.version.is_some()),
            ("description", c.description.is_some()),
            ("subject", c.subject.is_some()),
            ("metadata", c.metadata.is_some()),
            ("pending_msgs_limit", c.pending_msgs_limit.is_some()),
            ("pending_bytes_limit", c.pending_bytes_limit.is_some()),
        ];
        if let Some((field, _)) = present.iter().find(|(f, set)| *set && !allowed.contains(f)) {
            return Err(config_error(format!("a {what} has no field {field:?}")));
        }
        Ok(c)
    }

    fn queue_group(&self) -> QueueGroup {
        match (&self.queue_group, self.queue_group_disabled) {
            (_, true) => QueueGroup::Disabled,
            (Some(q), false) if !q.is_empty() => QueueGroup::Named(q.clone()),
            _ => QueueGroup::Inherit,
        }
    }
}

impl ServiceConfig {
    /// From `{"name", "version", "description", "metadata",
    /// "queue_group", "queue_group_disabled"}` (handlers are set apart).
    pub fn from_json(json: &str) -> Result<ServiceConfig> {
        let c = JsonConfig::parse("service", json, &["version", "description", "metadata"])?;
        Ok(ServiceConfig {
            queue_group: c.queue_group(),
            name: c.name.unwrap_or_default(),
            version: c.version.unwrap_or_default(),
            description: c.description.unwrap_or_default(),
            metadata: c.metadata.unwrap_or_default(),
            stats_handler: None,
            error_handler: None,
        })
    }
}

impl EndpointConfig {
    /// From `{"name", "subject", "metadata", "queue_group",
    /// "queue_group_disabled", "pending_msgs_limit", "pending_bytes_limit"}`.
    pub fn from_json(json: &str) -> Result<EndpointConfig> {
        let c = JsonConfig::parse(
            "endpoint",
            json,
            &[
                "subject",
                "metadata",
                "pending_msgs_limit",
                "pending_bytes_limit",
            ],
        )?;
        Ok(EndpointConfig {
            queue_group: c.queue_group(),
            name: c.name.unwrap_or_default(),
            subject: c.subject.filter(|s| !s.is_empty()),
            metadata: c.metadata.unwrap_or_default(),
            pending_msgs_limit: c.pending_msgs_limit,
            pending_bytes_limit: c.pending_bytes_limit,
        })
    }

    /// The subscription options its pending limits make.
    pub(crate) fn sub_options(&self) -> Result<crate::subscription::SubOptions> {
        for (field, v) in [
            ("pending_msgs_limit", self.pending_msgs_limit),
            ("pending_bytes_limit", self.pending_bytes_limit),
        ] {
            if v == Some(0) {
                return Err(config_error(format!(
                    "invalid endpoint {field}: 0 (a limit, or negative for none)"
                )));
            }
        }
        Ok(crate::subscription::SubOptions {
            pending_msgs_limit: self.pending_msgs_limit,
            pending_bytes_limit: self.pending_bytes_limit,
            // As nats.go's micro: a request in the handler is still pending.
            limits_count_handler: true,
            ..Default::default()
        })
    }
}

/// A group's name and queue group from `{"name", "queue_group",
/// "queue_group_disabled"}`.
pub fn group_config_from_json(json: &str) -> Result<(String, QueueGroup)> {
    let c = JsonConfig::parse("group", json, &[])?;
    Ok((c.name.clone().unwrap_or_default(), c.queue_group()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn semver() {
        for ok in [
            "0.0.0",
            "1.2.3",
            "10.20.30",
            "1.0.0-alpha",
            "1.0.0-alpha.1",
            "1.0.0-0.3.7",
            "1.0.0-x.7.z.92",
            "1.0.0+20130313144700",
            "1.0.0-beta+exp.sha.5114f85",
            "1.0.0-x-y",
        ] {
            assert!(is_semver(ok), "{ok}");
        }
        for bad in [
            "",
            "1",
            "1.2",
            "1.2.3.4",
            "01.2.3",
            "1.02.3",
            "1.2.03",
            "1.2.3-",
            "1.2.3+",
            "1.2.3-01",
            "1.2.3-a..b",
            "v1.2.3",
            "1.2.3-a_b",
            " 1.2.3",
        ] {
            assert!(!is_semver(bad), "{bad}");
        }
    }

    #[test]
    fn names() {
        for ok in ["a", "A-b_9", "echo"] {
            validate_name("service", ok).unwrap();
        }
        for bad in ["", "a b", "a.b", "a*", "é"] {
            let e = validate_name("service", bad).unwrap_err();
            assert_eq!(e.kind(), ErrorKind::ServiceConfig);
        }
    }

    #[test]
    fn queue_group_resolution() {
        let q = |s: &str| QueueGroup::Named(s.into());
        assert_eq!(QueueGroup::Inherit.resolve(&QueueGroup::Inherit), q("q"));
        assert_eq!(QueueGroup::Inherit.resolve(&q("g")), q("g"));
        assert_eq!(
            QueueGroup::Inherit.resolve(&QueueGroup::Disabled),
            QueueGroup::Disabled
        );
        assert_eq!(q("e").resolve(&QueueGroup::Disabled), q("e"));
        assert_eq!(QueueGroup::Disabled.resolve(&q("g")), QueueGroup::Disabled);
    }

    #[test]
    fn endpoint_pending_limits() {
        let c = EndpointConfig::from_json(
            r#"{"name":"e","pending_msgs_limit":2,"pending_bytes_limit":-1}"#,
        )
        .unwrap();
        let o = c.sub_options().unwrap();
        assert_eq!(
            (o.pending_msgs_limit, o.pending_bytes_limit),
            (Some(2), Some(-1))
        );
        let o = EndpointConfig::from_json(r#"{"name":"e"}"#)
            .unwrap()
            .sub_options()
            .unwrap();
        assert_eq!((o.pending_msgs_limit, o.pending_bytes_limit), (None, None));
        for zero in [
            r#"{"name":"e","pending_msgs_limit":0}"#,
            r#"{"name":"e","pending_bytes_limit":0}"#,
        ] {
            let e = EndpointConfig::from_json(zero)
                .unwrap()
                .sub_options()
                .unwrap_err();
            assert_eq!(e.kind(), ErrorKind::ServiceConfig, "{zero}");
        }
        for elsewhere in [
            ServiceConfig::from_json(r#"{"name":"s","pending_msgs_limit":1}"#).err(),
            group_config_from_json(r#"{"name":"g","pending_bytes_limit":1}"#).err(),
        ] {
            assert_eq!(elsewhere.unwrap().kind(), ErrorKind::ServiceConfig);
        }
    }
}
