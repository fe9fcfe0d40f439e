//! JetStream (ADR-37): the JSON API on `$JS.API.>`, stream management and
//! publishing with acks, built on the core client's request path.
//!
//! A `JetStream` context does not keep its client open: once the client is
//! closed every operation fails with `ConnectionClosed`.

pub(crate) mod bucket;
pub mod config;
mod consumer;
pub mod duration;
pub mod header_names;
mod js_message;
mod last_msgs;
mod ordered;
mod publish;
mod pull;
mod push;
mod stream;
#[doc(hidden)]
pub mod time;

use std::collections::HashMap;
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use serde_json::Value;

use crate::client::{Client, ClientInner};
use crate::error::{Error, ErrorKind, Result};
use crate::headers::Headers;
use crate::message::Message;
use crate::op::Op;

pub use consumer::{
    batch_size, parse_metadata, AckKind, FetchOptions, MsgMetadata, CONSUMER_CONFIG, MAX_BATCH,
};
pub use js_message::JsMessage;
pub use last_msgs::{LastMsgsOptions, StoredMsgs};
pub(crate) use ordered::{spawn_ordered, start_ordered, OrderedConfig, OrderedSink, Started};
pub use ordered::{DeliverPolicy, OrderedConsumer, OrderedConsumerConfig, OrderedMessagesOptions};
pub(crate) use publish::parse_pub_ack;
#[doc(hidden)]
pub use publish::parse_pub_ack_json;
pub use publish::{PubAck, PublishOptions, Ttl};
pub use pull::{ConsumeOptions, Consumption};
pub(crate) use push::status_event_feed;
pub(crate) use stream::{all_names, all_stream_infos};
pub use stream::{MsgSelector, StoredMsg};

/// How a create call treats an existing resource (stream, consumer,
/// bucket).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CreateAction {
    /// Create; an existing one with the same configuration is fine,
    /// another configuration fails.
    Create,
    /// Change an existing one; fails if there is none.
    Update,
    /// Either.
    CreateOrUpdate,
}

/// Options of a JetStream context (the reference client's `jetstream()`).
#[derive(Debug, Clone)]
pub struct JetStreamOptions {
    /// JetStream domain: the API prefix becomes `$JS.<domain>.API`.
    pub domain: Option<String>,
    /// A custom API prefix (overrides `domain`).
    pub api_prefix: Option<String>,
    /// Timeout of API requests and synchronous publishes.
    pub timeout: Duration,
    /// Asynchronous publishes awaiting an ack before `publish_async` stalls.
    pub publish_async_max_pending: usize,
    /// How long a stalled `publish_async` waits for room before it fails.
    pub publish_async_stall_wait: Duration,
    /// How long an asynchronous publish waits for its ack (default: `timeout`).
    pub publish_async_timeout: Option<Duration>,
    /// Hand out API results (stream, consumer and account infos) with the
    /// response's `type` field, as the server sent them (nats.js does);
    /// by default it is dropped.
    pub keep_response_type: bool,
}

impl Default for JetStreamOptions {
    fn default() -> Self {
        JetStreamOptions {
            domain: None,
            api_prefix: None,
            timeout: Duration::from_secs(5),
            publish_async_max_pending: 4000,
            publish_async_stall_wait: Duration::from_millis(200),
            publish_async_timeout: None,
            keep_response_type: false,
        }
    }
}

/// Asynchronous publishes in flight, and who waits for them to go down.
#[derive(Default)]
pub(crate) struct Window {
    pending: usize,
    waiters: usize,
}

pub(crate) struct Shared {
    pub(crate) client: Arc<ClientInner>,
    prefix: String,
    opts: JetStreamOptions,
    window: Mutex<Window>,
    window_cv: Condvar,
    /// Notified when the last asynchronous publish completes.
    idle: tokio::sync::Notify,
    /// Streams seen and whether each allows Direct Get (`get_msg`).
    direct: Mutex<HashMap<String, bool>>,
    /// The priority groups of consumers a fetch named a group for
    /// ("<stream>.<consumer>"), so fetches validate without a round trip.
    pub(crate) priority_groups: Mutex<HashMap<String, Vec<String>>>,
    /// Pin ids of pinned_client groups fetched from
    /// ("<stream>.<consumer>.<group>"), as nats.go keeps them per consumer.
    pub(crate) pins: Mutex<HashMap<String, String>>,
}

/// A JetStream context. Cheap to clone; thread-safe.
#[derive(Clone)]
pub struct JetStream {
    pub(crate) shared: Arc<Shared>,
}

impl std::fmt::Debug for JetStream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JetStream")
            .field("api_prefix", &self.shared.prefix)
            .finish()
    }
}

/// The API prefix of the account's own JetStream domain.
pub(crate) const DEFAULT_API_PREFIX: &str = "$JS.API";

fn api_prefix(opts: &JetStreamOptions) -> Result<String> {
    if let Some(p) = &opts.api_prefix {
        let p = p.trim_end_matches('.');
        crate::subject::validate_publish(p).map_err(|_| {
            Error::new(
                ErrorKind::Config,
                format!("invalid JetStream api_prefix {p:?}"),
            )
        })?;
        return Ok(p.to_string());
    }
    match &opts.domain {
        Some(d) if !d.is_empty() => {
            if d.contains(|c: char| c == '.' || c == '*' || c == '>' || c.is_whitespace()) {
                return Err(Error::new(
                    ErrorKind::Config,
                    format!("invalid JetStream domain {d:?}"),
                ));
            }
            Ok(format!("$JS.{d}.API"))
        }
        _ => Ok(DEFAULT_API_PREFIX.to_string()),
    }
}

/// The error of a JetStream API `{"error":{...}}` object, typed by err_code.
pub(crate) fn api_error(err: &Value) -> Error {
    let code = err.get("code").and_then(Value::as_u64).unwrap_or(0);
    let err_code = err.get("err_code").and_then(Value::as_u64).unwrap_or(0);
    let description = err
        .get("description")
        .and_then(Value::as_str)
        .unwrap_or("unknown error");
    let kind = match err_code {
        10059 => ErrorKind::StreamNotFound,
        10058 => ErrorKind::StreamNameInUse,
        10014 => ErrorKind::ConsumerNotFound,
        // 10043: "sequence not found" (deleting a message that is gone).
        10037 | 10043 => ErrorKind::MessageNotFound,
        // 10164: the same refusal from a replicated stream while an earlier
        // write of the subject is still being proposed (no sequence to name).
        10071 | 10164 => ErrorKind::WrongLastSequence,
        // Only the server saying so: other 503s (10008, "JetStream system
        // temporarily unavailable" while a stream or the meta group has no
        // leader) are rejections a caller can retry.
        10076 | 10039 => ErrorKind::JetStreamNotEnabled,
        _ => ErrorKind::JetStreamApi,
    };
    Error::new(
        kind,
        format!("{description} (code {code}, err_code {err_code})"),
    )
    .with_api_codes(
        u32::try_from(code).unwrap_or(u32::MAX),
        u32::try_from(err_code).unwrap_or(u32::MAX),
    )
}

/// The detail of a JetStream API request nobody answered.
pub(crate) fn no_api_responders(subject: &str) -> String {
    format!(
        "no responders on {subject}: no leader for the stream or consumer \
         yet (an election), or no JetStream on the server"
    )
}

/// Parses an API response: its JSON object, or the error it carries.
pub fn parse_response(payload: &[u8]) -> Result<Value> {
    let v: Value = serde_json::from_slice(payload).map_err(|e| {
        Error::new(
            ErrorKind::JetStream,
            format!("invalid JetStream API response: {e}"),
        )
    })?;
    if !v.is_object() {
        return Err(Error::new(
            ErrorKind::JetStream,
            "invalid JetStream API response: not an object",
        ));
    }
    if let Some(err) = v.get("error") {
        return Err(api_error(err));
    }
    Ok(v)
}

impl JetStream {
    /// A JetStream context over `client`.
    pub fn new(client: &Client, opts: JetStreamOptions) -> Result<JetStream> {
        Self::from_inner(Arc::clone(&client.inner), opts)
    }

    pub(crate) fn from_inner(
        client: Arc<ClientInner>,
        opts: JetStreamOptions,
    ) -> Result<JetStream> {
        if opts.publish_async_max_pending == 0 {
            return Err(Error::new(
                ErrorKind::Config,
                "publish_async_max_pending must be at least 1",
            ));
        }
        if opts.timeout.is_zero() {
            return Err(Error::new(ErrorKind::Config, "timeout must be positive"));
        }
        let prefix = api_prefix(&opts)?;
        Ok(JetStream {
            shared: Arc::new(Shared {
                client,
                prefix,
                opts,
                window: Mutex::default(),
                window_cv: Condvar::new(),
                idle: tokio::sync::Notify::new(),
                direct: Mutex::default(),
                priority_groups: Mutex::default(),
                pins: Mutex::default(),
            }),
        })
    }

    /// `$JS.API`, `$JS.<domain>.API` or the custom prefix.
    pub fn api_prefix(&self) -> &str {
        &self.shared.prefix
    }

    pub fn options(&self) -> &JetStreamOptions {
        &self.shared.opts
    }

    /// A request to the JetStream API (`<prefix>.<api>`), sent when this
    /// is called; the future yields the reply message. Nobody answering is
    /// `NoResponders` (as nats.go reports it): a stream or consumer without
    /// a leader during an election, or a server without JetStream. Only
    /// the account-info call reads it as JetStream not enabled.
    pub(crate) fn api_msg(
        &self,
        api: &str,
        body: &[u8],
    ) -> Result<impl std::future::Future<Output = Result<Message>> + Send + 'static> {
        let subject = format!("{}.{}", self.shared.prefix, api);
        let reply =
            self.shared
                .client
                .request_fut(&subject, None, body, self.shared.opts.timeout)?;
        Ok(async move {
            reply.await.map_err(|e| {
                if e.kind() == ErrorKind::NoResponders {
                    Error::new(ErrorKind::NoResponders, no_api_responders(&subject))
                } else {
                    e
                }
            })
        })
    }

    /// A JSON request to the JetStream API: the response object, or the
    /// API error it carries.
    pub(crate) async fn api(&self, api: &str, body: &[u8]) -> Result<Value> {
        let msg = self.api_msg(api, body)?.await?;
        parse_response(msg.payload())
    }

    /// Like `api`, for a result handed to users: the API's `type` field
    /// dropped unless `keep_response_type`.
    pub(crate) async fn api_info(&self, api: &str, body: &[u8]) -> Result<Value> {
        let mut v = self.api(api, body).await?;
        self.strip_type(&mut v);
        Ok(v)
    }

    /// An operation making one API request and returning the response.
    pub fn api_request(&self, api: &str, body: &[u8]) -> Op<Value> {
        let js = self.clone();
        let (api, body) = (api.to_string(), body.to_vec());
        Op::new(async move { js.api(&api, &body).await })
    }

    /// Account usage and limits (`INFO`), as the server's JSON.
    /// `JetStreamNotEnabled` when the account or the server has no JetStream.
    pub fn account_info(&self) -> Op<Value> {
        let js = self.clone();
        Op::new(async move {
            let mut v = js.account_info_json().await?;
            js.strip_type(&mut v);
            Ok(v)
        })
    }

    /// The `INFO` response. Unlike other API calls, nobody answering it
    /// means the server has no JetStream (nats.go's AccountInfo reads it
    /// so): every server with JetStream serves it, whatever the leaders.
    pub(crate) async fn account_info_json(&self) -> Result<Value> {
        match self.api("INFO", b"").await {
            Err(e) if e.kind() == ErrorKind::NoResponders => Err(Error::new(
                ErrorKind::JetStreamNotEnabled,
                format!(
                    "JetStream not enabled: no responders on {}.INFO",
                    self.shared.prefix
                ),
            )),
            r => r,
        }
    }

    pub(crate) fn client(&self) -> &Arc<ClientInner> {
        &self.shared.client
    }
}

/// Drops the API's `type` field from a response that is handed to users.
impl JetStream {
    /// Drops a response's `type` field, unless the options keep it.
    fn strip_type(&self, v: &mut Value) {
        if self.options().keep_response_type {
            return;
        }
        if let Some(m) = v.as_object_mut() {
            // Keeps the order of the other keys.
            m.shift_remove("type");
        }
    }
}

/// Headers of `opts` and its JetStream fields, or `None` when there are none.
pub(crate) fn merged_headers(
    base: Option<&Headers>,
    extra: &[(&str, String)],
) -> Result<Option<Headers>> {
    if base.is_none() && extra.is_empty() {
        return Ok(None);
    }
    let mut h = base.cloned().unwrap_or_default();
    for (name, value) in extra {
        h.set(name, value)?;
    }
    Ok(Some(h))
}

#[cfg(test)]
mod api_error_tests {
    use super::*;

    #[test]
    fn both_wrong_last_sequence_codes_are_wrong_last_sequence() {
        for (err_code, description) in [
            (10071, "wrong last sequence: 7"),
            (10164, "wrong last sequence"),
        ] {
            let e = api_error(&serde_json::json!({
                "code": 400, "err_code": err_code, "description": description
            }));
            assert_eq!(e.kind(), ErrorKind::WrongLastSequence, "{err_code}");
        }
    }
}
