//! Pull consumers (ADR-37, pull only): management, fetching batches
//! (ADR-13 pull requests and their status replies), and acknowledging
//! messages (ADR-15 ack subjects).

use std::borrow::Cow;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{json, Map, Value};

use super::config::{normalize, validate_name, Kind, Schema};
use super::pull::{
    bad_request, check_group_in, inbox_withdrawal, is_max_bytes_rejection, is_refused_request,
    notify_status, pull_inbox, put_group_fields, validate_group_fields, PullStatus, PIN_ID_HEADER,
};
use super::stream::{all_infos, all_names};
use super::{Consumption, CreateAction, JetStream};
use crate::client::{new_nuid, ClientInner, Flow, Wake};
use crate::completion::Outcome;
use crate::error::{Error, ErrorKind, Result};
use crate::feed::{Feed, Limits};
use crate::message::Message;
use crate::op::Op;
use crate::subscription::Subscription;

const DELIVER: &[&str] = &[
    "all",
    "last",
    "new",
    "by_start_sequence",
    "by_start_time",
    "last_per_subject",
];
const ACK: &[&str] = &["none", "all", "explicit", "flow_control"];
const REPLAY: &[&str] = &["instant", "original"];
const PRIORITY: &[&str] = &["none", "overflow", "pinned_client", "prioritized"];

/// ConsumerConfig (ADR-37 field names; unknown fields pass through).
pub const CONSUMER_CONFIG: Schema = &[
    ("name", Kind::Str),
    ("durable_name", Kind::Str),
    ("description", Kind::Str),
    ("deliver_policy", Kind::Enum(DELIVER)),
    ("opt_start_seq", Kind::UInt),
    ("opt_start_time", Kind::Str),
    ("replay_policy", Kind::Enum(REPLAY)),
    ("sample_freq", Kind::Str),
    ("headers_only", Kind::Bool),
    ("ack_policy", Kind::Enum(ACK)),
    ("ack_wait", Kind::Duration),
    ("max_deliver", Kind::Int),
    ("backoff", Kind::DurationList),
    ("max_ack_pending", Kind::Int),
    ("filter_subject", Kind::Str),
    ("filter_subjects", Kind::StrList),
    ("max_waiting", Kind::Int),
    ("max_batch", Kind::Int),
    ("max_expires", Kind::Duration),
    ("max_bytes", Kind::Int),
    ("inactive_threshold", Kind::Duration),
    ("num_replicas", Kind::UInt),
    ("mem_storage", Kind::Bool),
    ("metadata", Kind::StrMap),
    ("priority_groups", Kind::StrList),
    ("priority_policy", Kind::Enum(PRIORITY)),
    ("priority_timeout", Kind::Duration),
    ("pause_until", Kind::Str),
    // Push consumers (ADR-9, ADR-15).
    ("deliver_subject", Kind::Str),
    ("deliver_group", Kind::Str),
    ("idle_heartbeat", Kind::Duration),
    ("flow_control", Kind::Bool),
    ("rate_limit_bps", Kind::UInt),
];

/// The most messages one pull request asks for: a larger `max_messages`
/// of a fetch, a consumption or an ordered consumer is lowered to it (the
/// server takes any count, but what is asked for is buffered).
pub const MAX_BATCH: usize = 1 << 20;

/// A `max_messages` given as a count: 0 keeps `default`, a count above
/// `MAX_BATCH` is lowered to it.
pub fn batch_size(count: u64, default: usize) -> usize {
    match count {
        0 => default,
        n => n.min(MAX_BATCH as u64) as usize,
    }
}

/// Options of one fetch (a pull request).
#[derive(Debug, Clone)]
pub struct FetchOptions {
    /// Messages to fetch at most (at least 1).
    pub max_messages: usize,
    /// Payload bytes to fetch at most (0: no limit).
    pub max_bytes: usize,
    /// How long the server holds the request open.
    pub expires: Duration,
    /// Return at once with what is available (possibly nothing).
    pub no_wait: bool,
    /// Server heartbeats while the request is open (0: none). Set, two
    /// heartbeat intervals without a word from the server end the fetch
    /// with a `Timeout` ("no heartbeat received").
    pub idle_heartbeat: Duration,
    /// The ADR-42 priority group pulled for (required when the consumer
    /// has priority groups, refused when it has none).
    pub group: Option<String>,
    /// Overflow policy: served only while the consumer has at least this
    /// many messages pending (0: not set; needs `group`).
    pub min_pending: u64,
    /// Overflow policy: served only while at least this many messages
    /// await acks (0: not set; needs `group`).
    pub min_ack_pending: u64,
    /// Prioritized policy: the request's priority, 0 (the highest, the
    /// default) to 9; needs `group`.
    pub priority: u8,
}

impl Default for FetchOptions {
    fn default() -> Self {
        FetchOptions {
            max_messages: 100,
            max_bytes: 0,
            expires: Duration::from_secs(5),
            no_wait: false,
            idle_heartbeat: Duration::ZERO,
            group: None,
            min_pending: 0,
            min_ack_pending: 0,
            priority: 0,
        }
    }
}

impl FetchOptions {
    /// The options of `next`: one message, waiting up to `timeout` (the
    /// JetStream context's timeout when the caller names none).
    pub fn for_next(timeout: Duration) -> Self {
        FetchOptions {
            max_messages: 1,
            expires: timeout,
            no_wait: timeout.is_zero(),
            ..FetchOptions::default()
        }
    }
}

/// How long past `expires` a fetch waits for the server's closing status.
const FETCH_GRACE: Duration = Duration::from_secs(1);

fn nanos(d: Duration) -> u64 {
    d.as_nanos().min(u64::MAX as u128) as u64
}

fn consumer_config(config_json: &str) -> Result<Map<String, Value>> {
    let mut cfg = normalize("ConsumerConfig", config_json, CONSUMER_CONFIG)?;
    // The reference (and nats.go) default; the server's own is "none",
    // which would silently make every ack a no-op.
    cfg.entry("ack_policy")
        .or_insert_with(|| Value::from("explicit"));
    for field in ["name", "durable_name"] {
        if let Some(n) = cfg.get(field).and_then(Value::as_str) {
            validate_name("consumer", n)?;
        }
    }
    if let (Some(a), Some(b)) = (
        cfg.get("name").and_then(Value::as_str),
        cfg.get("durable_name").and_then(Value::as_str),
    ) {
        if a != b {
            return Err(Error::new(
                ErrorKind::Config,
                "ConsumerConfig: name and durable_name differ",
            ));
        }
    }
    if cfg.contains_key("filter_subject") && cfg.contains_key("filter_subjects") {
        return Err(Error::new(
            ErrorKind::Config,
            "ConsumerConfig: filter_subject and filter_subjects exclude each other",
        ));
    }
    Ok(cfg)
}

fn consumer_error(e: Error) -> Error {
    // The server reports a missing consumer on create-or-update's
    // "update" action as 10149; keep ConsumerNotFound for both.
    if e.kind() == ErrorKind::JetStreamApi && e.detail().contains("err_code 10149") {
        return Error::new(ErrorKind::ConsumerNotFound, e.detail().to_string());
    }
    e
}

/// The ConsumerConfig to send and the consumer's name (generated when
/// the config has none).
fn named_config(config_json: &str, action: CreateAction) -> Result<(Map<String, Value>, String)> {
    let mut cfg = consumer_config(config_json)?;
    let name = match cfg
        .get("name")
        .or_else(|| cfg.get("durable_name"))
        .and_then(Value::as_str)
    {
        Some(n) => n.to_string(),
        None => {
            if action == CreateAction::Update {
                return Err(Error::new(
                    ErrorKind::Config,
                    "ConsumerConfig.name: required to update a consumer",
                ));
            }
            let n = new_nuid();
            cfg.insert("name".into(), Value::from(n.clone()));
            n
        }
    };
    Ok((cfg, name))
}

impl JetStream {
    /// Creates (or updates, per `action`) a consumer on `stream` from a
    /// ConsumerConfig JSON object; unnamed consumers get a generated name.
    /// Returns its ConsumerInfo.
    pub fn create_consumer(
        &self,
        stream: &str,
        config_json: &str,
        action: CreateAction,
    ) -> Op<Value> {
        Op::build(|| {
            validate_name("stream", stream)?;
            let (cfg, name) = named_config(config_json, action)?;
            let single_filter = cfg
                .get("filter_subject")
                .and_then(Value::as_str)
                .filter(|f| !f.contains('*') && !f.contains('>'))
                .map(str::to_string);
            let api = match single_filter {
                Some(f) => format!("CONSUMER.CREATE.{stream}.{name}.{f}"),
                None => format!("CONSUMER.CREATE.{stream}.{name}"),
            };
            let mut req = json!({ "stream_name": stream, "config": Value::Object(cfg) });
            match action {
                CreateAction::Create => req["action"] = Value::from("create"),
                CreateAction::Update => req["action"] = Value::from("update"),
                CreateAction::CreateOrUpdate => {}
            }
            let js = self.clone();
            Ok(async move {
                js.api_info(&api, req.to_string().as_bytes())
                    .await
                    .map_err(consumer_error)
            })
        })
    }

    /// A consumer's ConsumerInfo.
    pub fn consumer_info(&self, stream: &str, consumer: &str) -> Op<Value> {
        Op::build(|| {
            validate_name("stream", stream)?;
            validate_name("consumer", consumer)?;
            let (js, api) = (self.clone(), format!("CONSUMER.INFO.{stream}.{consumer}"));
            Ok(async move { js.api_info(&api, b"").await })
        })
    }

    /// Deletes a consumer.
    pub fn delete_consumer(&self, stream: &str, consumer: &str) -> Op<()> {
        Op::build(|| {
            validate_name("stream", stream)?;
            validate_name("consumer", consumer)?;
            let (js, api) = (self.clone(), format!("CONSUMER.DELETE.{stream}.{consumer}"));
            Ok(async move {
                let v = js.api(&api, b"").await?;
                match v.get("success").and_then(Value::as_bool) {
                    Some(true) => Ok(()),
                    _ => Err(Error::new(
                        ErrorKind::JetStream,
                        "invalid JetStream API response: consumer delete did not succeed",
                    )),
                }
            })
        })
    }

    /// Asks the server to delete a consumer without waiting for the answer
    /// (cleanup on paths that must not wait).
    pub(crate) fn delete_consumer_nowait(&self, stream: &str, consumer: &str) {
        let subject = format!("{}.CONSUMER.DELETE.{stream}.{consumer}", self.shared.prefix);
        let _ = self
            .shared
            .client
            .publish_frame(&subject, None, None, b"", Wake::Writer);
    }

    /// Names of the consumers of `stream`, in pages.
    pub fn consumer_names(&self, stream: &str) -> Op<Vec<String>> {
        Op::build(|| {
            validate_name("stream", stream)?;
            let (js, api) = (self.clone(), format!("CONSUMER.NAMES.{stream}"));
            Ok(async move { all_names(&js, &api, "consumers", None).await })
        })
    }

    /// The ConsumerInfo of every consumer of `stream`, in pages of the
    /// server's size (`CONSUMER.LIST`).
    pub fn consumer_infos(&self, stream: &str) -> Op<Vec<Value>> {
        Op::build(|| {
            validate_name("stream", stream)?;
            let (js, api) = (self.clone(), format!("CONSUMER.LIST.{stream}"));
            Ok(async move { all_infos(&js, &api, "consumers", None).await })
        })
    }

    /// Pauses a consumer until `until_ns` (nanoseconds since the epoch):
    /// it delivers nothing before then (server 2.11+). `None`
    /// resumes it now. Returns the server's answer: `paused`,
    /// `pause_until`, `pause_remaining` (nanoseconds).
    pub fn pause_consumer(&self, stream: &str, consumer: &str, until_ns: Option<i64>) -> Op<Value> {
        Op::build(|| {
            validate_name("stream", stream)?;
            validate_name("consumer", consumer)?;
            let body = match until_ns {
                Some(ns) => {
                    json!({ "pause_until": super::time::format_rfc3339_ns(ns) }).to_string()
                }
                None => String::new(),
            };
            let (js, api) = (self.clone(), format!("CONSUMER.PAUSE.{stream}.{consumer}"));
            Ok(async move {
                let v = js
                    .api_info(&api, body.as_bytes())
                    .await
                    .map_err(consumer_error)?;
                if v.get("paused").and_then(Value::as_bool).is_none() {
                    return Err(Error::new(
                        ErrorKind::JetStream,
                        "invalid JetStream API response: no paused field",
                    ));
                }
                Ok(v)
            })
        })
    }

    /// Releases the pinned client of `group` (ADR-42 pinned_client): the
    /// next pull of any client in the group gets pinned.
    pub fn unpin_consumer(&self, stream: &str, consumer: &str, group: &str) -> Op<()> {
        Op::build(|| {
            validate_name("stream", stream)?;
            validate_name("consumer", consumer)?;
            validate_group_fields(Some(group), 0, 0, 0)?;
            let body = json!({ "group": group }).to_string();
            let (js, api) = (self.clone(), format!("CONSUMER.UNPIN.{stream}.{consumer}"));
            Ok(async move {
                js.api(&api, body.as_bytes()).await.map_err(|e| {
                    // 10160: the group is not one of the consumer's.
                    if e.kind() == ErrorKind::JetStreamApi && e.detail().contains("err_code 10160")
                    {
                        Error::new(
                            ErrorKind::InvalidArgument,
                            format!("invalid priority group: {}", e.detail()),
                        )
                    } else {
                        consumer_error(e)
                    }
                })?;
                Ok(())
            })
        })
    }

    /// Pulls up to `opts.max_messages` messages from a pull consumer. Ends
    /// when the batch is full, when the server ends the request (no
    /// messages with `no_wait`, or `expires` passed), or at `expires` plus
    /// a second of grace (with `no_wait`: a second after the request, if
    /// the server holds it). Returns what arrived, possibly nothing; a
    /// deleted consumer fails with `ConsumerDeleted`; a request the server
    /// refuses (beyond the consumer's max_batch, max_expires, max_bytes or
    /// max_waiting) fails with `JetStream` and the server's reason.
    pub fn fetch(&self, stream: &str, consumer: &str, opts: &FetchOptions) -> Op<Vec<Message>> {
        Op::build(|| {
            FetchRequest::check(stream, consumer, opts)?;
            let sent = FetchRequest::send(
                self.clone(),
                stream.to_string(),
                consumer.to_string(),
                opts.clone(),
            );
            Ok(async move {
                let request = sent.await?;
                // A cancelled fetch (a token, a Go context) withdraws its
                // request at once: a message published after the cancel
                // returns must go to the consumer's next reader, not wait
                // out the ack wait here.
                crate::op::on_cancel(request.withdrawal());
                let batch = Feed::new(Limits::unlimited(), message_outcome);
                request.run(&batch).await?;
                batch.finish();
                Ok(
                    std::iter::from_fn(|| batch.try_recv().and_then(|r| r.ok().flatten()))
                        .collect(),
                )
            })
        })
    }

    /// The messages of one pull request (a fetch, with the same options
    /// and ends), handed out as they arrive rather than once the batch is
    /// complete: the iterator ends without error when `fetch` would return
    /// its batch, and with `fetch`'s error after the messages that came
    /// before it. Completes once the request is sent (after the consumer's
    /// info when a priority group is named and not known yet). Stopping
    /// the iterator withdraws the request at the server.
    pub fn fetch_messages(
        &self,
        stream: &str,
        consumer: &str,
        opts: &FetchOptions,
    ) -> Op<Consumption> {
        Op::build(|| {
            FetchRequest::check(stream, consumer, opts)?;
            let sent = FetchRequest::send(
                self.clone(),
                stream.to_string(),
                consumer.to_string(),
                opts.clone(),
            );
            let js = self.clone();
            Ok(async move {
                let mut request = sent.await?;
                let events = super::status_event_feed();
                request.events = Some(Arc::clone(&events));
                request.event(json!({"type": "next", "options": request.req}));
                let out = Arc::new(Feed::new(Limits::unlimited(), message_outcome));
                out.on_cut(Box::new(request.withdrawal()));
                let flow = Flow::new(Arc::clone(&out), js.client(), "natsio-fetch")
                    .with_status_events(Arc::clone(&events));
                crate::runtime::handle().spawn(async move {
                    match request.run(&out).await {
                        Ok(()) => out.finish(),
                        Err(e) => out.finish_failing(e),
                    };
                    events.finish();
                });
                Ok(flow)
            })
        })
    }

    /// Acknowledges a consumed message through this context's client; with
    /// `sync_timeout`, waits for the server's confirmation (ack_sync).
    /// Double-ack protection is the caller's.
    pub fn ack(&self, msg: &Message, kind: &AckKind, sync_timeout: Option<Duration>) -> Result<()> {
        match sync_timeout {
            None => send_ack(&self.shared.client, msg, kind),
            Some(t) => ack_sync(&self.shared.client, msg, kind, t).wait(),
        }
    }

    /// One message from a pull consumer, waiting up to `timeout`;
    /// `NoMessages` if none came.
    pub fn next(&self, stream: &str, consumer: &str, timeout: Duration) -> Op<Message> {
        self.next_with(stream, consumer, FetchOptions::for_next(timeout))
    }

    /// The options `next_with` starts from: `FetchOptions::for_next` with
    /// this context's timeout.
    pub fn next_options(&self) -> FetchOptions {
        FetchOptions::for_next(self.shared.opts.timeout)
    }

    /// `next` with the options of a fetch (`expires` is the wait; group,
    /// min_pending, min_ack_pending, idle_heartbeat); `max_messages` must
    /// be 1 (`InvalidArgument` otherwise: `fetch` takes more).
    pub fn next_with(&self, stream: &str, consumer: &str, opts: FetchOptions) -> Op<Message> {
        if opts.max_messages > 1 {
            return Op::fail(Error::new(
                ErrorKind::InvalidArgument,
                "max_messages: next takes one message (0 or 1; fetch takes more)",
            ));
        }
        let opts = FetchOptions {
            max_messages: 1,
            ..opts
        };
        self.fetch(stream, consumer, &opts).and_then(|mut msgs| {
            msgs.pop()
                .ok_or_else(|| Error::new(ErrorKind::NoMessages, "no message arrived in time"))
        })
    }
}

/// Checks `group` against the consumer's priority groups, from the
/// context's cache; a group the cache does not know (or a consumer not
/// seen yet) reads the consumer's info once and refreshes the cache.
async fn check_fetch_group(
    js: &JetStream,
    stream: &str,
    consumer: &str,
    group: &str,
) -> Result<()> {
    let key = format!("{stream}.{consumer}");
    let known = crate::completion::lock(&js.shared.priority_groups)
        .get(&key)
        .is_some_and(|g| g.iter().any(|x| x == group));
    if known {
        return Ok(());
    }
    let info = js.consumer_info(stream, consumer).await?;
    let groups: Vec<String> = info
        .pointer("/config/priority_groups")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default();
    let r = check_group_in(&groups, consumer, Some(group));
    crate::completion::lock(&js.shared.priority_groups).insert(key, groups);
    r
}

/// One pull request of a fetch: sent, its messages handed out as they
/// arrive until it ends. The one code of both the batch (`fetch`) and the
/// iterator (`fetch_messages`).
struct FetchRequest {
    js: JetStream,
    stream: String,
    consumer: String,
    opts: FetchOptions,
    inbox: String,
    sub: Subscription,
    req: Value,
    next_subject: String,
    /// Where the context keeps the pin id of a pinned_client group.
    pin_key: Option<String>,
    /// The status events of a streamed fetch (as `Puller::with_status_events`).
    events: Option<Arc<Feed<String>>>,
}

impl FetchRequest {
    /// Checks the arguments that need no server.
    fn check(stream: &str, consumer: &str, opts: &FetchOptions) -> Result<()> {
        validate_name("stream", stream)?;
        validate_name("consumer", consumer)?;
        if opts.max_messages == 0 {
            return Err(Error::new(
                ErrorKind::InvalidArgument,
                "max_messages must be at least 1",
            ));
        }
        if !opts.no_wait && opts.expires < Duration::from_millis(1) {
            return Err(Error::new(
                ErrorKind::InvalidArgument,
                "expires must be at least 1 ms (or use no_wait)",
            ));
        }
        validate_group_fields(
            opts.group.as_deref(),
            opts.min_pending,
            opts.min_ack_pending,
            opts.priority,
        )
    }

    /// Checks the priority group (the context's cache, or the consumer's
    /// info once), subscribes the inbox and sends the request.
    async fn send(
        js: JetStream,
        stream: String,
        consumer: String,
        opts: FetchOptions,
    ) -> Result<FetchRequest> {
        if let Some(g) = &opts.group {
            check_fetch_group(&js, &stream, &consumer, g).await?;
        }
        let (inbox, sub) = pull_inbox(js.client())?;
        let mut req = json!({ "batch": opts.max_messages });
        if opts.no_wait {
            req["no_wait"] = Value::from(true);
        } else {
            req["expires"] = Value::from(nanos(opts.expires));
        }
        if opts.max_bytes > 0 {
            req["max_bytes"] = Value::from(opts.max_bytes);
        }
        if !opts.idle_heartbeat.is_zero() {
            req["idle_heartbeat"] = Value::from(nanos(opts.idle_heartbeat));
        }
        if let Some(g) = &opts.group {
            put_group_fields(
                &mut req,
                g,
                opts.min_pending,
                opts.min_ack_pending,
                opts.priority,
            );
        }
        let mut r = FetchRequest {
            next_subject: format!("{}.CONSUMER.MSG.NEXT.{stream}.{consumer}", js.api_prefix()),
            pin_key: opts
                .group
                .as_ref()
                .map(|g| format!("{stream}.{consumer}.{g}")),
            js,
            stream,
            consumer,
            opts,
            inbox,
            sub,
            req,
            events: None,
        };
        r.publish()?;
        Ok(r)
    }

    /// Withdraws the request at the server (its inbox's interest), on the
    /// thread that calls it: what is published after goes to the
    /// consumer's next reader.
    fn withdrawal(&self) -> impl FnOnce() + Send + 'static {
        inbox_withdrawal(self.js.client(), &self.sub)
    }

    fn event(&self, event: Value) {
        if let Some(events) = &self.events {
            events.push(event.to_string());
        }
    }

    /// Sends the request, with the pin id the context holds, if any.
    fn publish(&mut self) -> Result<()> {
        if let Some(k) = &self.pin_key {
            match crate::completion::lock(&self.js.shared.pins).get(k) {
                Some(id) => self.req["id"] = Value::from(id.as_str()),
                None => {
                    if let Some(o) = self.req.as_object_mut() {
                        o.remove("id");
                    }
                }
            }
        }
        self.js.client().publish_frame(
            &self.next_subject,
            Some(&self.inbox),
            None,
            self.req.to_string().as_bytes(),
            Wake::Direct,
        )?;
        if self.events.is_some() {
            self.event(json!({"type": "next", "options": self.req}));
        }
        Ok(())
    }

    /// Hands each message to `out` as it arrives, until the request ends:
    /// `Ok` when the batch is complete, the server ended the request (it
    /// expired, nothing more with `no_wait`, a limit such as max_bytes),
    /// or `expires` plus a grace passed; the error otherwise. Returns at
    /// once when `out` ends (its reader stopped it).
    async fn run(mut self, out: &Feed<Message>) -> Result<()> {
        let wait = if self.opts.no_wait {
            // The server answers at once when nothing is available, but
            // holds the request while messages are pending yet not
            // deliverable (the consumer's max_ack_pending reached): a
            // no-wait fetch gives that the grace alone (as nats.go), not
            // the context's whole timeout.
            FETCH_GRACE
        } else {
            self.opts.expires.saturating_add(FETCH_GRACE)
        };
        let deadline = crate::clock::tokio_deadline_in(wait);
        // Two heartbeat intervals without a word: the request is gone.
        let silence = self.opts.idle_heartbeat.saturating_mul(2);
        let mut resent = false;
        let (mut count, mut bytes) = (0usize, 0usize);
        while count < self.opts.max_messages {
            let until = if silence.is_zero() {
                deadline
            } else {
                deadline.min(crate::clock::tokio_deadline_in(silence))
            };
            let received = tokio::select! {
                biased;
                _ = out.until_ended() => return Ok(()),
                r = tokio::time::timeout_at(until, self.sub.feed().recv()) => r,
            };
            let m = match received {
                Err(_) if until < deadline => {
                    // nats.js tells the second interval, then fails the fetch.
                    self.event(json!({"type": "heartbeats_missed", "count": 2}));
                    return Err(Error::new(
                        ErrorKind::Timeout,
                        format!(
                            "no heartbeat received: the server sent nothing for {} ms (idle_heartbeat {} ms)",
                            silence.as_millis(),
                            self.opts.idle_heartbeat.as_millis()
                        ),
                    ));
                }
                Err(_) | Ok(Ok(None)) => return Ok(()),
                Ok(Ok(Some(m))) => m,
                Ok(Err(e)) => return Err(e),
            };
            if m.status().is_some() {
                notify_status(self.events.as_deref(), &m);
            }
            match PullStatus::of(&m) {
                PullStatus::Msg => {
                    if let (Some(k), Some(id)) = (
                        &self.pin_key,
                        m.headers().and_then(|h| h.get(PIN_ID_HEADER)),
                    ) {
                        crate::completion::lock(&self.js.shared.pins)
                            .insert(k.clone(), id.to_string());
                    }
                    count += 1;
                    bytes += m.payload().len();
                    out.push(m);
                    if self.opts.max_bytes > 0 && bytes >= self.opts.max_bytes {
                        return Ok(());
                    }
                }
                PullStatus::Heartbeat => {}
                PullStatus::RequestEnded { .. } => return Ok(()),
                PullStatus::PinMismatch => {
                    // The pin moved on (unpinned, or timed out): forget it
                    // and ask once more without it, if nothing came yet.
                    if let Some(k) = &self.pin_key {
                        crate::completion::lock(&self.js.shared.pins).remove(k);
                    }
                    if resent || count > 0 {
                        return Ok(());
                    }
                    resent = true;
                    self.publish()?;
                }
                PullStatus::ConsumerDeleted => {
                    return Err(Error::new(
                        ErrorKind::ConsumerDeleted,
                        format!("consumer {:?} was deleted", self.consumer),
                    ))
                }
                PullStatus::Rejected(desc, _) => {
                    // A refused request is not "no messages": the caller
                    // must learn that this request can never be served as
                    // asked.
                    if desc.eq_ignore_ascii_case("consumer is push based")
                        || (count == 0
                            && (is_refused_request(desc) || is_max_bytes_rejection(desc)))
                    {
                        return Err(Error::new(
                            ErrorKind::JetStream,
                            format!("pull request rejected: {desc}"),
                        ));
                    }
                    return Ok(()); // batch or byte limits reached, leadership change, ...
                }
                PullStatus::NoResponders => {
                    // The server answers a pull on a missing consumer so.
                    return Err(Error::new(
                        ErrorKind::ConsumerNotFound,
                        format!(
                            "no responders for the pull request: consumer {:?} not found on stream {:?} (or JetStream is not enabled)",
                            self.consumer, self.stream
                        ),
                    ));
                }
                PullStatus::Other(400, desc) => {
                    // The consumer's groups changed under the cache.
                    crate::completion::lock(&self.js.shared.priority_groups)
                        .remove(&format!("{}.{}", self.stream, self.consumer));
                    return Err(bad_request(desc));
                }
                PullStatus::Other(code, desc) => {
                    return Err(Error::new(
                        ErrorKind::JetStreamApi,
                        format!("pull request failed: {code} {desc}"),
                    ));
                }
            }
        }
        Ok(())
    }
}

/// A feed's items as `next_async` completions carry them.
fn message_outcome(m: Message) -> Result<Outcome> {
    Ok(Outcome::Msg(m))
}

/// Where a consumed message stands, read from its ack subject.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MsgMetadata<'a> {
    pub domain: Option<&'a str>,
    pub stream: &'a str,
    pub consumer: &'a str,
    pub num_delivered: u64,
    pub stream_seq: u64,
    pub consumer_seq: u64,
    /// Nanoseconds since the Unix epoch.
    pub timestamp_ns: i64,
    pub num_pending: u64,
}

fn not_js(reply: &str) -> Error {
    Error::new(
        ErrorKind::NotJsMessage,
        format!("not a JetStream message: reply subject {reply:?}"),
    )
}

/// Parses an ack subject: v1 `$JS.ACK.<stream>.<consumer>.<delivered>.
/// <sseq>.<cseq>.<ts>.<pending>` (9 tokens) or v2 `$JS.ACK.<domain>.
/// <account hash>.<stream>.<consumer>.<delivered>.<sseq>.<cseq>.<ts>.
/// <pending>[.<token>...]` (11 or more; `_` is no domain).
pub fn parse_metadata(reply: &str) -> Result<MsgMetadata<'_>> {
    // Read once per consumed message (and per ack): the first 11 tokens go
    // into an array, with no allocation; only the count of the rest matters.
    let mut t = [""; 11];
    let mut count = 0;
    let mut start = 0;
    // A byte scan by index (a third faster than a chained iterator): '.'
    // is ASCII, so every cut is a char boundary.
    let bytes = reply.as_bytes();
    for i in 0..bytes.len() {
        if bytes[i] == b'.' {
            if count < t.len() {
                t[count] = &reply[start..i];
            }
            count += 1;
            start = i + 1;
        }
    }
    if count < t.len() {
        t[count] = &reply[start..];
    }
    count += 1;
    if count < 9 || t[0] != "$JS" || t[1] != "ACK" || count == 10 {
        return Err(not_js(reply));
    }
    let (domain, rest) = if count == 9 {
        (None, &t[2..])
    } else {
        (Some(t[2]).filter(|d| *d != "_"), &t[4..])
    };
    let num = |s: &str| crate::proto::decimal(s.as_bytes()).ok_or_else(|| not_js(reply));
    Ok(MsgMetadata {
        domain,
        stream: rest[0],
        consumer: rest[1],
        num_delivered: num(rest[2])?,
        stream_seq: num(rest[3])?,
        consumer_seq: num(rest[4])?,
        timestamp_ns: i64::try_from(num(rest[5])?).map_err(|_| not_js(reply))?,
        num_pending: num(rest[6])?,
    })
}

/// Acknowledgement kinds (ADR-15 bodies).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AckKind {
    Ack,
    /// Redeliver, after the delay if any.
    Nak(Option<Duration>),
    /// Never redeliver; the optional reason is recorded by the server.
    Term(Option<String>),
    /// Still working: resets the ack wait.
    InProgress,
}

impl AckKind {
    pub(crate) fn body(&self) -> Cow<'static, [u8]> {
        match self {
            AckKind::Ack => Cow::Borrowed(b"+ACK"),
            AckKind::Nak(None) => Cow::Borrowed(b"-NAK"),
            AckKind::Nak(Some(d)) => {
                Cow::Owned(format!("-NAK {}", json!({ "delay": nanos(*d) })).into_bytes())
            }
            AckKind::Term(None) => Cow::Borrowed(b"+TERM"),
            AckKind::Term(Some(r)) => Cow::Owned(format!("+TERM {r}").into_bytes()),
            AckKind::InProgress => Cow::Borrowed(b"+WPI"),
        }
    }

    /// Ends the message's delivery (a second one is an error).
    pub(crate) fn is_terminal(&self) -> bool {
        !matches!(self, AckKind::InProgress)
    }
}

/// The ack subject of `msg`, checked.
pub(crate) fn ack_subject(msg: &Message) -> Result<&str> {
    let reply = msg.reply().ok_or_else(|| not_js(""))?;
    parse_metadata(reply)?;
    Ok(reply)
}

/// Sends `kind` for `msg` through `client`, buffered like a publish.
/// Double-ack protection is the caller's (a message handle's).
pub(crate) fn send_ack(client: &ClientInner, msg: &Message, kind: &AckKind) -> Result<()> {
    send_ack_to(client, ack_subject(msg)?, kind, Wake::Writer)
}

/// `send_ack` to a subject `ack_subject` returned; `wake`: Writer, or
/// Deferred for a caller that sends its acks in runs.
pub(crate) fn send_ack_to(
    client: &ClientInner,
    ack_subject: &str,
    kind: &AckKind,
    wake: Wake,
) -> Result<()> {
    client.publish_frame_checked(ack_subject, None, None, &kind.body(), wake)
}

/// Sends `kind` for `msg` and waits for the server to confirm it
/// (ack_sync), up to `timeout`.
pub(crate) fn ack_sync(
    client: &std::sync::Arc<ClientInner>,
    msg: &Message,
    kind: &AckKind,
    timeout: Duration,
) -> Op<()> {
    Op::build(|| {
        let subject = ack_subject(msg)?.to_string();
        let (client, body) = (std::sync::Arc::clone(client), kind.body());
        Ok(async move {
            client
                .request_fut(&subject, None, &body, timeout)?
                .await
                .map(|_| ())
        })
    })
}
