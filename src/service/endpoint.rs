//! An endpoint (a subscription whose messages are requests) and a request
//! (a message that knows its endpoint, so that answering it counts in the
//! endpoint's stats wherever and whenever the answer is sent).

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock, Weak};
use std::time::{Duration, Instant};

use super::config::{EndpointRef, QueueGroup, ServiceError};
use super::wire;
use super::ServiceShared;
use crate::client::ClientInner;
use crate::client_handle::ClientHandle;
use crate::completion::{lock, Completion};
use crate::error::{Error, ErrorKind, Result};
use crate::feed::{Delivery, Handler};
use crate::headers::Headers;
use crate::message::Message;
use crate::subscription::Subscription;

/// The header carrying an error reply's description (ADR-32).
pub const ERROR_HEADER: &str = "Nats-Service-Error";
/// The header carrying an error reply's code (ADR-32).
pub const ERROR_CODE_HEADER: &str = "Nats-Service-Error-Code";

#[derive(Debug, Default)]
struct Counters {
    requests: u64,
    errors: u64,
    last_error: String,
    processing_ns: u64,
}

pub(crate) struct EndpointShared {
    pub(crate) name: String,
    pub(crate) subject: String,
    pub(crate) queue_group: QueueGroup,
    pub(crate) metadata: BTreeMap<String, String>,
    pub(crate) sub: Subscription,
    counters: Mutex<Counters>,
    /// `set_stats_data`'s JSON, reported when there is no stats handler.
    data: Mutex<Option<serde_json::Value>>,
    service: Weak<ServiceShared>,
}

/// The endpoints by (client address, subscription id): how a request read
/// through a token (a bare message) finds its endpoint again.
type Registry = Mutex<HashMap<(usize, u64), Weak<EndpointShared>>>;

fn registry() -> &'static Registry {
    static REGISTRY: OnceLock<Registry> = OnceLock::new();
    REGISTRY.get_or_init(Default::default)
}

fn registry_key(client: &Arc<ClientInner>, sid: u64) -> (usize, u64) {
    (Arc::as_ptr(client) as usize, sid)
}

impl Drop for EndpointShared {
    fn drop(&mut self) {
        lock(registry()).remove(&registry_key(&self.sub.client, self.sub.sid()));
    }
}

impl EndpointShared {
    pub(crate) fn new(
        name: String,
        subject: String,
        queue_group: QueueGroup,
        metadata: BTreeMap<String, String>,
        sub: Subscription,
        service: Weak<ServiceShared>,
    ) -> Arc<EndpointShared> {
        let key = registry_key(&sub.client, sub.sid());
        let ep = Arc::new(EndpointShared {
            name,
            subject,
            queue_group,
            metadata,
            sub,
            counters: Mutex::default(),
            data: Mutex::default(),
            service,
        });
        lock(registry()).insert(key, Arc::downgrade(&ep));
        let weak = Arc::downgrade(&ep);
        // A request dropped over the pending limits is the endpoint's
        // error, as in nats.go's micro: counted, and told to the error
        // handler (code 0: no reply carried it).
        // The subscription is new and the endpoint's own: nothing else
        // sets its listener, so `set` cannot find one there.
        let _ = ep.sub.shared.slow_listener.set(Arc::new(move |e: &Error| {
            if let Some(ep) = weak.upgrade() {
                ep.slow_consumer(e);
            }
        }));
        ep
    }

    /// Counts a slow-consumer report and tells the service's error
    /// handler (on the client's event dispatcher thread).
    fn slow_consumer(&self, e: &Error) {
        let description = e.to_string();
        self.record_error(description.clone());
        if let Some(h) = self.service.upgrade().and_then(|s| s.error_handler()) {
            h(&ServiceError {
                endpoint: self.name.clone(),
                subject: self.subject.clone(),
                code: 0,
                description,
            });
        }
    }

    /// Counts an error that is no request's first answer.
    fn record_error(&self, error: String) {
        self.record(false, Duration::ZERO, Some(error));
    }

    fn record(&self, first: bool, elapsed: Duration, error: Option<String>) {
        let mut c = lock(&self.counters);
        if first {
            c.requests += 1;
            c.processing_ns = c
                .processing_ns
                .saturating_add(u64::try_from(elapsed.as_nanos()).unwrap_or(u64::MAX));
        }
        if let Some(e) = error {
            c.errors += 1;
            c.last_error = e;
        }
    }

    pub(crate) fn reset(&self) {
        *lock(&self.counters) = Counters::default();
    }

    pub(crate) fn info(&self) -> wire::EndpointInfo {
        wire::EndpointInfo {
            name: self.name.clone(),
            subject: self.subject.clone(),
            queue_group: self.queue_group.wire_name().to_string(),
            metadata: (!self.metadata.is_empty()).then(|| self.metadata.clone()),
        }
    }

    /// The stats, with `data` from the service's stats handler (user code:
    /// never call this on a runtime thread) or `set_stats_data`.
    pub(crate) fn stats(
        &self,
        handler: Option<&super::config::StatsHandler>,
    ) -> wire::EndpointStats {
        let data = match handler {
            Some(h) => h(&EndpointRef {
                name: &self.name,
                subject: &self.subject,
            })
            .map(|json| serde_json::from_str(&json).unwrap_or(serde_json::Value::String(json))),
            None => lock(&self.data).clone(),
        };
        let c = lock(&self.counters);
        wire::EndpointStats {
            name: self.name.clone(),
            subject: self.subject.clone(),
            queue_group: self.queue_group.wire_name().to_string(),
            num_requests: c.requests,
            num_errors: c.errors,
            last_error: c.last_error.clone(),
            processing_time: c.processing_ns,
            average_processing_time: c.processing_ns.checked_div(c.requests).unwrap_or(0),
            data,
        }
    }
}

/// An endpoint of a service. Requests are read as from a subscription:
/// `next`, `next_async` (read the message with `Endpoint::request`), or a
/// handler. Cloning shares the endpoint; the service owns it (dropping
/// every handle does not stop it: `Service::stop` does).
#[derive(Clone)]
pub struct Endpoint {
    pub(crate) shared: Arc<EndpointShared>,
}

impl std::fmt::Debug for Endpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Endpoint")
            .field("name", &self.shared.name)
            .field("subject", &self.shared.subject)
            .finish()
    }
}

impl Endpoint {
    pub fn name(&self) -> &str {
        &self.shared.name
    }

    /// The full subject (group prefix included).
    pub fn subject(&self) -> &str {
        &self.shared.subject
    }

    /// The queue group, `None` when disabled.
    pub fn queue_group(&self) -> Option<&str> {
        match &self.shared.queue_group {
            QueueGroup::Disabled => None,
            q => Some(q.wire_name()),
        }
    }

    pub fn info(&self) -> wire::EndpointInfo {
        self.shared.info()
    }

    /// The endpoint's stats (`data` from the service's stats handler,
    /// which runs on this thread, or `set_stats_data`).
    pub fn stats(&self) -> wire::EndpointStats {
        let handler = self
            .shared
            .service
            .upgrade()
            .and_then(|s| s.stats_handler());
        self.shared.stats(handler.as_ref())
    }

    /// The endpoint's `data` in STATS when the service has no stats
    /// handler: JSON text (`None` leaves the field out).
    pub fn set_stats_data(&self, json: Option<&str>) -> Result<()> {
        let value = json
            .map(|j| {
                serde_json::from_str(j).map_err(|e| {
                    Error::new(
                        ErrorKind::InvalidArgument,
                        format!("stats data is not JSON: {e}"),
                    )
                })
            })
            .transpose()?;
        *lock(&self.shared.data) = value;
        Ok(())
    }

    pub fn subscription(&self) -> &Subscription {
        &self.shared.sub
    }

    /// The next request, waiting up to `timeout` (forever if `None`).
    /// `Ok(None)`: the endpoint has stopped.
    pub fn next(&self, timeout: Option<Duration>) -> Result<Option<Request>> {
        crate::runtime::ensure_may_block()?;
        Ok(self
            .shared
            .sub
            .feed()
            .next(timeout)?
            .map(|m| Request::new(m, Arc::clone(&self.shared))))
    }

    /// The request `msg`, read off this endpoint's subscription, is.
    pub(crate) fn request_for(&self, msg: Message) -> Request {
        Request::new(msg, Arc::clone(&self.shared))
    }

    /// A completion for the next request's message (`Outcome::Msg`, read
    /// with `request_for_message`), or `Outcome::End`.
    pub fn next_async(&self) -> Result<Arc<Completion>> {
        self.shared.sub.feed().next_async()
    }

    /// Delivers every request to `handler` on the endpoint's library
    /// thread, then the end.
    pub fn set_handler(&self, mut handler: Handler<Request>) -> Result<()> {
        let ep = Arc::clone(&self.shared);
        let wrap = move |m: Message| Request::new(m, Arc::clone(&ep));
        self.shared.sub.set_handler(
            Box::new(move |d| match d {
                Delivery::Item(m) => handler(Delivery::Item(wrap(m))),
                Delivery::Batch(ms) => {
                    for m in ms {
                        handler(Delivery::Item(wrap(m)));
                    }
                }
                Delivery::End(e) => handler(Delivery::End(e)),
            }),
            Box::new(|| {}),
        )
    }
}

/// The request a message delivered to an endpoint of `client` is, found
/// by its subscription (a message read through an endpoint's token).
pub(crate) fn request_for_message(client: &ClientHandle, msg: Message) -> Result<Request> {
    let client = &client.live()?;
    let ep = lock(registry())
        .get(&registry_key(client, msg.sid()))
        .and_then(Weak::upgrade)
        .ok_or_else(|| {
            Error::new(
                ErrorKind::IllegalState,
                "the message was not delivered to a service endpoint",
            )
        })?;
    Ok(Request::new(msg, ep))
}

struct RequestState {
    msg: Message,
    endpoint: Arc<EndpointShared>,
    received: Instant,
    /// Counted in the endpoint's stats (at the first answer, else when the
    /// last handle is dropped).
    counted: AtomicBool,
}

impl Drop for RequestState {
    fn drop(&mut self) {
        if !self.counted.swap(true, Ordering::AcqRel) {
            self.endpoint.record(true, self.received.elapsed(), None);
        }
    }
}

/// A request to a service endpoint. Clones share it: it may be answered
/// later and from any thread. Processing time runs from delivery to the
/// first answer (or to the drop of the last handle of an unanswered one).
#[derive(Clone)]
pub struct Request {
    state: Arc<RequestState>,
}

impl std::fmt::Debug for Request {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Request")
            .field("endpoint", &self.state.endpoint.name)
            .field("subject", &self.state.msg.subject())
            .finish()
    }
}

impl Request {
    fn new(msg: Message, endpoint: Arc<EndpointShared>) -> Request {
        Request {
            state: Arc::new(RequestState {
                msg,
                endpoint,
                received: Instant::now(),
                counted: AtomicBool::new(false),
            }),
        }
    }

    pub fn message(&self) -> &Message {
        &self.state.msg
    }

    pub fn endpoint_name(&self) -> &str {
        &self.state.endpoint.name
    }

    fn finish(&self, error: Option<String>) {
        let first = !self.state.counted.swap(true, Ordering::AcqRel);
        self.state
            .endpoint
            .record(first, self.state.received.elapsed(), error);
    }

    fn send(&self, headers: Option<&Headers>, payload: &[u8]) -> Result<()> {
        let client = self.state.endpoint.sub.client.as_ref();
        client.respond(&self.state.msg, headers, payload)
    }

    /// Answers the request. A failure to send counts as an error.
    /// Counted before it is sent: a requester that has the answer reads
    /// stats that include it.
    pub fn respond(&self, headers: Option<&Headers>, payload: &[u8]) -> Result<()> {
        self.finish(None);
        let r = self.send(headers, payload);
        if let Err(e) = &r {
            self.state.endpoint.record_error(format!("respond: {e}"));
        }
        r
    }

    /// Answers with an error: `Nats-Service-Error` = `description`,
    /// `Nats-Service-Error-Code` = `code` (beside `headers`), `payload` as
    /// the body. Counts as an error ("<code>:<description>").
    pub fn respond_error(
        &self,
        code: i32,
        description: &str,
        headers: Option<&Headers>,
        payload: &[u8],
    ) -> Result<()> {
        if description.is_empty() {
            return Err(Error::new(
                ErrorKind::InvalidArgument,
                "an error reply needs a description",
            ));
        }
        let mut h = headers.cloned().unwrap_or_default();
        h.set(ERROR_HEADER, description)?;
        h.set(ERROR_CODE_HEADER, &code.to_string())?;
        // Counted before it is sent, as `respond`.
        self.finish(Some(format!("{code}:{description}")));
        self.send(Some(&h), payload)
    }

    /// The handler failed (a C status, an exception, a panic, a rejected
    /// promise): tells the service's error handler, on this thread, then
    /// answers 500 with `description` unless answered already, and counts
    /// the error.
    pub fn fail(&self, description: &str) {
        let description = if description.is_empty() {
            "handler error"
        } else {
            description
        };
        // A description that cannot be a header value (a newline in an
        // exception's text) still gets its 500.
        let safe: String = description
            .chars()
            .map(|c| if c.is_control() { ' ' } else { c })
            .collect();
        let answered = self.state.counted.load(Ordering::Acquire);
        if answered {
            self.state.endpoint.record_error(format!("500:{safe}"));
        }
        // Before the 500 goes out: a requester that has it knows the
        // handler was told.
        if let Some(s) = self.state.endpoint.service.upgrade() {
            if let Some(h) = s.error_handler() {
                h(&ServiceError {
                    endpoint: self.state.endpoint.name.clone(),
                    subject: self.state.msg.subject().to_string(),
                    code: 500,
                    description: safe.clone(),
                });
            }
        }
        if !answered
            && self.respond_error(500, &safe, None, &[]).is_err()
            && !self.state.counted.load(Ordering::Acquire)
        {
            // Refused before sending: still an error.
            self.finish(Some(format!("500:{safe}")));
        }
    }
}
