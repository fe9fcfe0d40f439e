//! Services (ADR-32, revision 6): a named, versioned set of request
//! endpoints, discoverable and monitored through `$SRV.PING|INFO|STATS`.
//!
//! Endpoints are subscriptions (queue group "q" unless configured,
//! revision 5's "no queue group" included) read through the iterator
//! contract; monitoring requests are answered on the runtime without a
//! thread of their own (a stats handler, being user code, runs on the
//! client's completions thread).

pub mod config;
mod endpoint;
pub mod wire;

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

pub use config::{
    validate_name, validate_version, EndpointConfig, EndpointRef, ErrorHandler, QueueGroup,
    ServiceConfig, ServiceError, StatsHandler, DEFAULT_QUEUE_GROUP,
};
pub(crate) use endpoint::request_for_message;
pub use endpoint::{Endpoint, Request, ERROR_CODE_HEADER, ERROR_HEADER};

use self::config::{config_error, validate_queue_group, validate_subject_part};
use self::endpoint::EndpointShared;
use crate::client::{Client, ClientInner, Replies, RequestManyOptions};
use crate::completion::{lock, Completion, Outcome};
use crate::error::{Error, Result};
use crate::message::Message;
use crate::subscription::{SubOptions, Subscription};

/// The prefix of the monitoring subjects.
pub const API_PREFIX: &str = "$SRV";

/// A monitoring verb.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verb {
    Ping,
    Info,
    Stats,
}

impl Verb {
    pub fn as_str(self) -> &'static str {
        match self {
            Verb::Ping => "PING",
            Verb::Info => "INFO",
            Verb::Stats => "STATS",
        }
    }
}

/// `$SRV.<verb>`, `$SRV.<verb>.<name>` or `$SRV.<verb>.<name>.<id>` (an
/// id needs a name).
pub fn control_subject(verb: Verb, name: Option<&str>, id: Option<&str>) -> Result<String> {
    let verb = verb.as_str();
    match (name.filter(|n| !n.is_empty()), id.filter(|i| !i.is_empty())) {
        (None, None) => Ok(format!("{API_PREFIX}.{verb}")),
        (Some(n), None) => {
            validate_name("service", n)?;
            Ok(format!("{API_PREFIX}.{verb}.{n}"))
        }
        (Some(n), Some(i)) => {
            validate_name("service", n)?;
            validate_name("service id", i)?;
            Ok(format!("{API_PREFIX}.{verb}.{n}.{i}"))
        }
        (None, Some(_)) => Err(config_error(
            "a service id needs the service's name".to_string(),
        )),
    }
}

/// Asks every service (of `name`, or the instance `name`/`id`) for its
/// PING, INFO or STATS response: one reply per instance, gathered as
/// `request_many` gathers (a stall after the first reply ends it).
pub fn discover(
    client: &Client,
    verb: Verb,
    name: Option<&str>,
    id: Option<&str>,
    opts: RequestManyOptions,
) -> Result<Replies> {
    let subject = control_subject(verb, name, id)?;
    client.request_many(&subject, None, &[], opts)
}

pub(crate) struct ServiceShared {
    client: Arc<ClientInner>,
    id: String,
    name: String,
    version: String,
    description: String,
    metadata: BTreeMap<String, String>,
    /// Resolved: named or disabled.
    queue_group: QueueGroup,
    stats_handler: Mutex<Option<StatsHandler>>,
    error_handler: Mutex<Option<ErrorHandler>>,
    started_ns: Mutex<i64>,
    endpoints: Mutex<Vec<Arc<EndpointShared>>>,
    monitors: Mutex<Vec<Subscription>>,
    stopping: AtomicBool,
    /// Completes once every subscription of the service has ended.
    stopped: Arc<Completion>,
}

/// A service. Clones share it. It runs until `stop` or its client's
/// close; dropping the last handle stops it at once (no drain).
#[derive(Clone)]
pub struct Service {
    shared: Arc<ServiceShared>,
}

impl std::fmt::Debug for Service {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Service")
            .field("name", &self.shared.name)
            .field("id", &self.shared.id)
            .finish()
    }
}

fn now_ns() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_nanos()).unwrap_or(i64::MAX))
}

impl Service {
    /// Validates `config` (nothing is sent when it is refused), subscribes
    /// the monitoring subjects and returns the running service.
    pub fn add(client: &Client, config: ServiceConfig) -> Result<Service> {
        Service::add_to(&client.inner, config)
    }

    pub(crate) fn add_to(client: &Arc<ClientInner>, config: ServiceConfig) -> Result<Service> {
        validate_name("service", &config.name)?;
        validate_version(&config.version)?;
        validate_queue_group(&config.queue_group)?;
        let shared = Arc::new(ServiceShared {
            client: Arc::clone(client),
            id: crate::client::new_nuid(),
            queue_group: config.queue_group.resolve(&QueueGroup::Inherit),
            name: config.name,
            version: config.version,
            description: config.description,
            metadata: config.metadata,
            stats_handler: Mutex::new(config.stats_handler),
            error_handler: Mutex::new(config.error_handler),
            started_ns: Mutex::new(now_ns()),
            endpoints: Mutex::default(),
            monitors: Mutex::default(),
            stopping: AtomicBool::new(false),
            stopped: Completion::new(),
        });
        let service = Service { shared };
        for verb in [Verb::Ping, Verb::Info, Verb::Stats] {
            for (name, id) in [
                (None, None),
                (Some(service.name()), None),
                (Some(service.name()), Some(service.id())),
            ] {
                let subject = control_subject(verb, name, id)?;
                // Monitoring answers every instance: no queue group.
                let sub = match client.subscribe(&subject, None, SubOptions::default()) {
                    Ok(s) => s,
                    Err(e) => {
                        service.stop_async();
                        return Err(e);
                    }
                };
                let feed = Arc::clone(sub.feed());
                lock(&service.shared.monitors).push(sub);
                crate::runtime::handle().spawn(answer_monitoring(
                    feed,
                    verb,
                    Arc::downgrade(&service.shared),
                ));
            }
        }
        Ok(service)
    }

    pub fn id(&self) -> &str {
        &self.shared.id
    }

    pub fn name(&self) -> &str {
        &self.shared.name
    }

    pub fn version(&self) -> &str {
        &self.shared.version
    }

    pub fn description(&self) -> &str {
        &self.shared.description
    }

    pub fn metadata(&self) -> &BTreeMap<String, String> {
        &self.shared.metadata
    }

    /// When the service started or was last reset (RFC 3339, UTC).
    pub fn started(&self) -> String {
        crate::jetstream::time::format_rfc3339_ns(*lock(&self.shared.started_ns))
    }

    /// The service's root group (no prefix, the service's queue group).
    pub fn root(&self) -> Group {
        Group {
            service: self.clone(),
            prefix: String::new(),
            queue_group: self.shared.queue_group.clone(),
        }
    }

    pub fn add_endpoint(&self, config: EndpointConfig) -> Result<Endpoint> {
        self.root().add_endpoint(config)
    }

    pub fn add_group(&self, name: &str, queue_group: QueueGroup) -> Result<Group> {
        self.root().add_group(name, queue_group)
    }

    pub fn endpoints(&self) -> Vec<Endpoint> {
        lock(&self.shared.endpoints)
            .iter()
            .map(|e| Endpoint {
                shared: Arc::clone(e),
            })
            .collect()
    }

    fn identity(&self) -> wire::Identity {
        wire::Identity {
            name: self.shared.name.clone(),
            id: self.shared.id.clone(),
            version: self.shared.version.clone(),
            metadata: self.shared.metadata.clone(),
        }
    }

    pub fn ping(&self) -> wire::PingResponse {
        wire::PingResponse {
            kind: wire::PING_RESPONSE_TYPE.to_string(),
            identity: self.identity(),
        }
    }

    pub fn info(&self) -> wire::InfoResponse {
        wire::InfoResponse {
            kind: wire::INFO_RESPONSE_TYPE.to_string(),
            identity: self.identity(),
            description: self.shared.description.clone(),
            endpoints: lock(&self.shared.endpoints)
                .iter()
                .map(|e| e.info())
                .collect(),
        }
    }

    /// The stats of every endpoint. Runs the stats handler (if any) on
    /// this thread.
    pub fn stats(&self) -> wire::StatsResponse {
        let endpoints: Vec<_> = lock(&self.shared.endpoints).clone();
        let stats_handler = self.shared.stats_handler();
        wire::StatsResponse {
            kind: wire::STATS_RESPONSE_TYPE.to_string(),
            identity: self.identity(),
            started: self.started(),
            endpoints: endpoints
                .iter()
                .map(|e| e.stats(stats_handler.as_ref()))
                .collect(),
        }
    }

    /// Zeroes every endpoint's counters and restarts the clock.
    pub fn reset(&self) {
        for e in lock(&self.shared.endpoints).iter() {
            e.reset();
        }
        *lock(&self.shared.started_ns) = now_ns();
    }

    /// Replaces the stats handler (`None`: the endpoints' own data).
    pub fn set_stats_handler(&self, handler: Option<StatsHandler>) {
        *lock(&self.shared.stats_handler) = handler;
    }

    /// Replaces the error handler.
    pub fn set_error_handler(&self, handler: Option<ErrorHandler>) {
        *lock(&self.shared.error_handler) = handler;
    }

    pub fn is_stopped(&self) -> bool {
        self.shared.stopped.is_done()
    }

    /// Starts the stop (once): every endpoint and monitoring subscription
    /// drains (requests already received are still handled, new ones find
    /// no responder); the completion succeeds once all have ended.
    pub fn stop_async(&self) -> Arc<Completion> {
        begin_stop(&self.shared);
        Arc::clone(&self.shared.stopped)
    }

    /// Completes once the service has stopped (a stop, or its client's
    /// close), without stopping it.
    pub fn stopped_async(&self) -> Arc<Completion> {
        Arc::clone(&self.shared.stopped)
    }

    /// Stops and waits up to `timeout` (forever if `None`) for the drain.
    pub fn stop(&self, timeout: Option<Duration>) -> Result<()> {
        crate::runtime::ensure_may_block()?;
        match self.stop_async().wait(timeout) {
            Some(r) => r.map(|_| ()),
            None => Err(Error::timeout("service stop")),
        }
    }
}

impl ServiceShared {
    pub(crate) fn stats_handler(&self) -> Option<StatsHandler> {
        lock(&self.stats_handler).clone()
    }

    pub(crate) fn error_handler(&self) -> Option<ErrorHandler> {
        lock(&self.error_handler).clone()
    }
}

fn begin_stop(shared: &Arc<ServiceShared>) {
    let endpoints = {
        let eps = lock(&shared.endpoints);
        if shared.stopping.swap(true, Ordering::AcqRel) {
            return;
        }
        eps.clone()
    };
    let mut drains: Vec<Arc<Completion>> =
        endpoints.iter().map(|e| e.sub.drain_async(None)).collect();
    drains.extend(lock(&shared.monitors).iter().map(|s| s.drain_async(None)));
    let remaining = Arc::new(AtomicUsize::new(drains.len()));
    if drains.is_empty() {
        shared.stopped.complete(Ok(Outcome::Done));
    }
    for d in drains {
        let (remaining, stopped) = (Arc::clone(&remaining), Arc::clone(&shared.stopped));
        // Ended either way (a drain on a closed client fails at once).
        d.on_complete(move || {
            if remaining.fetch_sub(1, Ordering::AcqRel) == 1 {
                stopped.complete(Ok(Outcome::Done));
            }
        });
    }
}

/// Answers one monitoring subject until its subscription ends; the end
/// (a stop, or the client's close) stops the whole service.
async fn answer_monitoring(
    feed: Arc<crate::feed::Feed<Message>>,
    verb: Verb,
    service: Weak<ServiceShared>,
) {
    while let Ok(Some(msg)) = feed.recv().await {
        let Some(shared) = service.upgrade() else {
            return;
        };
        let client = Arc::clone(&shared.client);
        let runs_user_code = verb == Verb::Stats && shared.stats_handler().is_some();
        let svc = Service { shared };
        let answer = move || {
            let body = match verb {
                Verb::Ping => serde_json::to_vec(&svc.ping()),
                Verb::Info => serde_json::to_vec(&svc.info()),
                Verb::Stats => serde_json::to_vec(&svc.stats()),
            };
            if let (Ok(body), Some(reply)) = (body, msg.reply()) {
                let _ = svc.shared.client.respond_to(reply, None, &body);
            }
        };
        if runs_user_code {
            // The stats handler is user code: off the runtime.
            client.post_completion(Box::new(answer));
        } else {
            answer();
        }
    }
    if let Some(shared) = service.upgrade() {
        begin_stop(&shared);
    }
}

/// A group of endpoints: a subject prefix and a queue group.
#[derive(Clone, Debug)]
pub struct Group {
    service: Service,
    prefix: String,
    /// Resolved: named or disabled.
    queue_group: QueueGroup,
}

impl Group {
    /// The subject prefix ("" for the service's root).
    pub fn prefix(&self) -> &str {
        &self.prefix
    }

    fn join(&self, tail: &str) -> String {
        if self.prefix.is_empty() {
            tail.to_string()
        } else if tail.is_empty() {
            self.prefix.clone()
        } else {
            format!("{}.{tail}", self.prefix)
        }
    }

    /// A group inside this one: `<prefix>.<name>`; `name` is a subject
    /// without `>` (ADR-32), possibly with `*`.
    pub fn add_group(&self, name: &str, queue_group: QueueGroup) -> Result<Group> {
        validate_subject_part("group name", name, false)?;
        validate_queue_group(&queue_group)?;
        let prefix = self.join(name);
        if !prefix.is_empty() {
            crate::subject::validate_subscribe(&prefix)
                .map_err(|e| config_error(format!("invalid group name {name:?}: {e}")))?;
        }
        Ok(Group {
            service: self.service.clone(),
            prefix,
            queue_group: queue_group.resolve(&self.queue_group),
        })
    }

    /// Subscribes an endpoint on `<prefix>.<subject or name>`.
    pub fn add_endpoint(&self, config: EndpointConfig) -> Result<Endpoint> {
        validate_name("endpoint", &config.name)?;
        let tail = config.subject.as_deref().unwrap_or(&config.name);
        validate_subject_part("endpoint subject", tail, true)?;
        validate_queue_group(&config.queue_group)?;
        let sub_options = config.sub_options()?;
        let subject = self.join(tail);
        crate::subject::validate_subscribe(&subject)
            .map_err(|e| config_error(format!("invalid endpoint subject {subject:?}: {e}")))?;
        let queue_group = config.queue_group.resolve(&self.queue_group);
        let shared = &self.service.shared;
        let mut endpoints = lock(&shared.endpoints);
        if shared.stopping.load(Ordering::Acquire) {
            return Err(Error::new(
                crate::error::ErrorKind::IllegalState,
                "the service has stopped",
            ));
        }
        let queue = match &queue_group {
            QueueGroup::Named(q) => Some(q.as_str()),
            _ => None,
        };
        let sub = shared.client.subscribe(&subject, queue, sub_options)?;
        let ep = EndpointShared::new(
            config.name,
            subject,
            queue_group,
            config.metadata,
            sub,
            Arc::downgrade(shared),
        );
        endpoints.push(Arc::clone(&ep));
        Ok(Endpoint { shared: ep })
    }
}
