//! The monitoring responses of ADR-32 (`io.nats.micro.v1.*_response`),
//! field for field as nats.go's `micro` package and natscli read them.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

pub const PING_RESPONSE_TYPE: &str = "io.nats.micro.v1.ping_response";
pub const INFO_RESPONSE_TYPE: &str = "io.nats.micro.v1.info_response";
pub const STATS_RESPONSE_TYPE: &str = "io.nats.micro.v1.stats_response";

/// The fields every response starts with.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Identity {
    pub name: String,
    pub id: String,
    pub version: String,
    /// Always an object (`{}` when none was given), as nats.go sends it.
    #[serde(default)]
    pub metadata: BTreeMap<String, String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct PingResponse {
    #[serde(rename = "type")]
    pub kind: String,
    #[serde(flatten)]
    pub identity: Identity,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct EndpointInfo {
    pub name: String,
    pub subject: String,
    /// "" when the endpoint has no queue group.
    pub queue_group: String,
    /// `null` when none was given (as nats.go sends it).
    pub metadata: Option<BTreeMap<String, String>>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct InfoResponse {
    #[serde(rename = "type")]
    pub kind: String,
    #[serde(flatten)]
    pub identity: Identity,
    pub description: String,
    pub endpoints: Vec<EndpointInfo>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct EndpointStats {
    pub name: String,
    pub subject: String,
    pub queue_group: String,
    pub num_requests: u64,
    pub num_errors: u64,
    /// "" when there was none; "<code>:<description>" for an error reply.
    pub last_error: String,
    /// Nanoseconds, from delivery to the response, summed.
    pub processing_time: u64,
    /// Nanoseconds: `processing_time / num_requests`.
    pub average_processing_time: u64,
    /// What the stats handler returned, as JSON.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<serde_json::Value>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct StatsResponse {
    #[serde(rename = "type")]
    pub kind: String,
    #[serde(flatten)]
    pub identity: Identity,
    /// RFC 3339 in UTC: when the service started (or was last reset).
    pub started: String,
    pub endpoints: Vec<EndpointStats>,
}
