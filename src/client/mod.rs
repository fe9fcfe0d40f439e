//! The client: the public `Client` and its verbs, the flows it feeds,
//! and the modules that make one up (see `inner.rs` for how they fit):
//!
//! - `state`: the connection state, the close gate, the shutdown signal;
//! - `events`: lifecycle events, errors and completion callbacks for the
//!   application;
//! - `write_side`: the write buffer, how frames reach the socket, the
//!   writer loop;
//! - `routing`: the subscriptions registry and the read path's waits;
//! - `requests`: the reply mux, the request verbs and their deadlines;
//! - `connector`: the server pool, the handshake, the one connect loop;
//! - `inner`: `ClientInner`, the parts composed, the read path;
//! - `lifecycle`: close and drain;
//! - `connection`: the connection task (first connect, serve, reconnect).

pub(crate) mod connection;
pub(crate) mod connector;
pub(crate) mod events;
pub(crate) mod inner;
pub(crate) mod lifecycle;
pub(crate) mod requests;
pub(crate) mod routing;
pub(crate) mod state;
pub(crate) mod write_side;

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::completion::{Completion, Outcome};
use crate::error::{Error, ErrorKind, Result};
use crate::feed::{Feed, FeedItem, Limits};
use crate::headers::Headers;
use crate::library_thread;
use crate::message::Message;
use crate::op::Op;
use crate::options::{Options, PendingPolicy};
pub use crate::pool::PoolServer;
use crate::pool::ServerPool;
use crate::runtime;
use crate::subject;
use crate::subscription::{SubOptions, Subscription};

pub use connector::ServerInfo;
pub(crate) use inner::ClientInner;
pub(crate) use requests::{new_nuid, OnReply, ReplyFuture, ReplyHandler};
pub use state::ConnState;
pub(crate) use state::Lifecycle;
pub(crate) use write_side::Wake;

/// Traffic and error counters of a client.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ClientStats {
    pub in_msgs: u64,
    pub out_msgs: u64,
    pub in_bytes: u64,
    pub out_bytes: u64,
    pub reconnects: u64,
    pub errors: u64,
    /// PINGs the server sent (each answered with a PONG).
    pub server_pings: u64,
}

/// Options of `Client::request_many`.
#[derive(Debug, Clone, Copy)]
pub struct RequestManyOptions {
    /// Stop after this many replies (`None`: no limit).
    pub max_msgs: Option<u64>,
    /// Stop when no reply arrives for this long after the first one.
    pub stall: Option<Duration>,
    /// Overall deadline.
    pub timeout: Duration,
}

/// Gathers the replies of one request into `out` until max_msgs, a stall,
/// the deadline or a no-responders status (the end), the client's close
/// (an error), or the owner stopping `out`.
async fn gather_replies(
    inbox: Subscription,
    out: Arc<Feed<Message>>,
    opts: RequestManyOptions,
    deadline: tokio::time::Instant,
) {
    let mut received = 0u64;
    loop {
        let until = match opts.stall {
            Some(stall) if received > 0 => deadline.min(crate::clock::tokio_deadline_in(stall)),
            _ => deadline,
        };
        let next = tokio::select! {
            _ = out.until_ended() => break,
            r = tokio::time::timeout_at(until, inbox.feed().recv()) => r,
        };
        match next {
            Ok(Ok(Some(m))) if !m.is_no_responders() => {
                out.push(m);
                received += 1;
                if opts.max_msgs.is_some_and(|max| received >= max) {
                    out.finish();
                    break;
                }
            }
            // Deadline, stall, no responders, or the inbox ended.
            Err(_) | Ok(Ok(_)) => {
                out.finish();
                break;
            }
            Ok(Err(e)) => {
                out.fail(e);
                break;
            }
        }
    }
    drop(inbox);
}

/// A continuous flow of items produced on the runtime (request-many
/// replies, consume, the ordered consumer, a KV watch), read through the
/// one iterator contract. Dropping it stops the flow.
pub struct Flow<T: FeedItem> {
    pub(crate) feed: Arc<Feed<T>>,
    /// The client (by address) whose dispatchers may run its handler.
    owner: usize,
    name: &'static str,
    /// What its producer tells besides the items (a push consume's
    /// heartbeats and flow control), as JSON texts; ends with the flow.
    status_events: Option<Arc<Feed<String>>>,
}

impl<T: FeedItem> Flow<T> {
    pub(crate) fn new(feed: Arc<Feed<T>>, client: &Arc<ClientInner>, name: &'static str) -> Self {
        let endable: Arc<dyn crate::feed::Endable> = feed.clone();
        client.state.add_flow(Arc::downgrade(&endable));
        if client.state() == ConnState::Closed {
            // Closed meanwhile: the close may have missed this flow.
            feed.fail(Error::closed());
        }
        Flow {
            feed,
            owner: Arc::as_ptr(client) as usize,
            name,
            status_events: None,
        }
    }

    pub(crate) fn with_status_events(mut self, events: Arc<Feed<String>>) -> Self {
        self.status_events = Some(events);
        self
    }

    /// The status events of the flow (`None`: its producer tells none).
    pub(crate) fn status_events(&self) -> Option<&Arc<Feed<String>>> {
        self.status_events.as_ref()
    }

    /// The next item, waiting up to `timeout` (forever if `None`).
    /// `Ok(None)`: the flow has ended without error.
    pub fn next(&self, timeout: Option<Duration>) -> Result<Option<T>> {
        runtime::ensure_may_block()?;
        self.feed.next(timeout)
    }

    /// A completion for the next item (`Outcome::End` at the end).
    pub fn next_async(&self) -> Result<Arc<Completion>> {
        self.feed.next_async()
    }

    /// Delivers every item, then the end, to `handler` on a library thread.
    pub fn set_handler(
        &self,
        handler: crate::feed::Handler<T>,
        on_exit: Box<dyn FnOnce() + Send>,
    ) -> Result<()> {
        self.feed
            .set_handler(self.owner, self.name.to_string(), handler, on_exit)
    }

    /// Stops the flow (the backlog is dropped). After it returns the
    /// handler runs no more, unless called from it.
    pub fn stop(&self) {
        self.feed.stop();
        self.feed.join_dispatcher();
    }

    /// Drains the flow: its producer stops taking in more (withdraws its
    /// interest at the server, as a subscription's drain does) and what was
    /// sent before is handed out; then the flow ends without error. The
    /// completion reports that end, or fails after `timeout` (the drain
    /// goes on) or once the flow is stopped or fails first.
    pub fn drain_async(&self, timeout: Option<Duration>) -> Arc<Completion> {
        let c = Completion::new();
        self.feed.request_drain(Arc::clone(&c));
        c.within(timeout, "drain")
    }

    /// `drain_async`, waiting for it; after it returns, the handler's
    /// final call has been made.
    pub fn drain(&self, timeout: Option<Duration>) -> Result<()> {
        runtime::ensure_may_block()?;
        match self.drain_async(None).wait(timeout) {
            Some(r) => {
                r?;
                self.feed.join_dispatcher();
                Ok(())
            }
            None => Err(Error::timeout("drain")),
        }
    }

    pub fn has_ended(&self) -> bool {
        self.feed.has_ended()
    }

    pub fn stats(&self) -> crate::feed::FeedStats {
        self.feed.stats()
    }

    /// A handle that stops the flow from anywhere.
    pub fn stopper(&self) -> FlowStopper<T> {
        FlowStopper {
            feed: Arc::clone(&self.feed),
        }
    }
}

impl<T: FeedItem> std::fmt::Debug for Flow<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Flow")
            .field("name", &self.name)
            .field("stats", &self.feed.stats())
            .finish()
    }
}

impl<T: FeedItem> Drop for Flow<T> {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Stops a flow from any thread.
pub struct FlowStopper<T: FeedItem> {
    feed: Arc<Feed<T>>,
}

impl<T: FeedItem> Clone for FlowStopper<T> {
    fn clone(&self) -> Self {
        FlowStopper {
            feed: Arc::clone(&self.feed),
        }
    }
}

impl<T: FeedItem> FlowStopper<T> {
    pub fn stop(&self) {
        self.feed.stop();
    }
}

/// Replies to one request (`Client::request_many`).
pub type Replies = Flow<Message>;

/// A connection to a NATS server.
pub struct Client {
    pub(crate) inner: Arc<ClientInner>,
}

impl Client {
    /// Connects to the first reachable server of `opts.servers`.
    pub fn connect(opts: Options) -> Result<Client> {
        let inner = new_client(opts)?;
        // The handshake runs on the runtime (see `Op::wait_on_runtime`); a
        // failure is cleaned up here, so that the application's callback
        // data is released before this returns.
        match Op::new(connection::establish(Arc::clone(&inner))).wait_on_runtime() {
            Ok(()) => Ok(Client { inner }),
            Err(e) => {
                inner.abandon();
                Err(e)
            }
        }
    }

    /// Connecting as an operation: each server of the pool in turn, each
    /// within the connect timeout.
    pub fn connect_op(opts: Options) -> Op<Client> {
        Op::build(|| {
            let inner = new_client(opts)?;
            Ok(async move {
                match connection::establish(Arc::clone(&inner)).await {
                    Ok(()) => Ok(Client { inner }),
                    Err(e) => {
                        // Cleaning up joins threads: not on the runtime.
                        let _ = library_thread::spawn("natsio-close", move || inner.abandon());
                        Err(e)
                    }
                }
            })
        })
    }
    /// Connects to one URL with default options.
    pub fn connect_url(url: &str) -> Result<Client> {
        Client::connect(Options {
            servers: vec![url.to_string()],
            ..Options::default()
        })
    }

    /// Publishes once the frame is buffered; does not wait for the server.
    pub fn publish(&self, subject: &str, payload: &[u8]) -> Result<()> {
        self.inner.publish(subject, None, None, payload)
    }

    pub fn publish_with(
        &self,
        subject: &str,
        reply: Option<&str>,
        headers: Option<&Headers>,
        payload: &[u8],
    ) -> Result<()> {
        self.inner.publish(subject, reply, headers, payload)
    }

    pub fn subscribe(
        &self,
        subject: &str,
        queue: Option<&str>,
        opts: SubOptions,
    ) -> Result<Subscription> {
        self.inner.subscribe(subject, queue, opts)
    }

    /// Sends a request and waits up to `timeout` (the client's default when
    /// `None`) for one reply.
    pub fn request(
        &self,
        subject: &str,
        headers: Option<&Headers>,
        payload: &[u8],
        timeout: Option<Duration>,
    ) -> Result<Message> {
        self.inner.request(
            subject,
            headers,
            payload,
            timeout.unwrap_or(self.inner.opts.request_timeout),
        )
    }

    pub fn request_async(
        &self,
        subject: &str,
        headers: Option<&Headers>,
        payload: &[u8],
        timeout: Option<Duration>,
    ) -> Result<Arc<Completion>> {
        self.inner.request_async(
            subject,
            headers,
            payload,
            timeout.unwrap_or(self.inner.opts.request_timeout),
        )
    }

    /// Sends one request and gathers every reply (ADR-47) on the runtime,
    /// ending on max_msgs, a stall, the timeout or no responders.
    pub fn request_many(
        &self,
        subject: &str,
        headers: Option<&Headers>,
        payload: &[u8],
        opts: RequestManyOptions,
    ) -> Result<Replies> {
        subject::validate_publish(subject)?;
        let inbox = self.new_inbox();
        let sub = self.inner.subscribe(
            &inbox,
            None,
            SubOptions {
                policy: PendingPolicy::DropNew,
                ..SubOptions::default()
            },
        )?;
        self.inner
            .publish_frame(subject, Some(&inbox), headers, payload, Wake::Direct)?;
        let out = Arc::new(Feed::new(
            Limits::from_config(
                self.inner.opts.pending_msgs_limit,
                self.inner.opts.pending_bytes_limit,
                PendingPolicy::DropNew,
            ),
            |m| Ok(Outcome::Msg(m)),
        ));
        let deadline = crate::clock::tokio_deadline_in(opts.timeout);
        runtime::handle().spawn(gather_replies(sub, Arc::clone(&out), opts, deadline));
        Ok(Flow::new(out, &self.inner, "natsio-replies"))
    }

    /// Replies to `msg` on its reply subject.
    pub fn respond(&self, msg: &Message, headers: Option<&Headers>, payload: &[u8]) -> Result<()> {
        self.inner.respond(msg, headers, payload)
    }

    /// Publishes a response to `reply_subject` (a request's reply subject):
    /// like `publish_with` without a reply, but written at once when the
    /// connection's writer is idle, as a request is, not batched with bulk
    /// publishes. For bindings that keep a message's reply subject but not
    /// the message.
    pub fn respond_to(
        &self,
        reply_subject: &str,
        headers: Option<&Headers>,
        payload: &[u8],
    ) -> Result<()> {
        self.inner.respond_to(reply_subject, headers, payload)
    }

    /// Waits up to `timeout` (the client's flush_timeout when `None`) for
    /// the server to have processed everything sent so far.
    pub fn flush(&self, timeout: Option<Duration>) -> Result<()> {
        self.inner
            .flush(timeout.unwrap_or(self.inner.opts.flush_timeout))
    }

    /// Sends now the asynchronous JetStream publishes queued with
    /// `PublishOptions::defer_send` that nothing has sent yet (else they
    /// go within about a millisecond). Cheap when there are none; never
    /// blocks.
    pub fn send_deferred(&self) {
        self.inner.send_deferred();
    }

    /// Like `flush`, without blocking: the completion fails with a timeout
    /// once `timeout` passes (`None`: it waits as long as it takes).
    pub fn flush_async(&self, timeout: Option<Duration>) -> Arc<Completion> {
        self.inner.flush_async().within(timeout, "flush")
    }

    /// Drains every subscription, flushes, then closes; bounded by `timeout`
    /// (the client's drain_timeout when `None`). While reconnecting, the
    /// drain completes after the reconnect (see `begin_drain`).
    pub fn drain(&self, timeout: Option<Duration>) -> Result<()> {
        runtime::ensure_may_block()?;
        self.inner
            .drain(timeout.unwrap_or(self.inner.opts.drain_timeout))
    }

    /// Like `drain`, on a library thread; the completion reports the result.
    pub fn drain_async(&self, timeout: Option<Duration>) -> Arc<Completion> {
        let inner = Arc::clone(&self.inner);
        let timeout = timeout.unwrap_or(inner.opts.drain_timeout);
        // The state changes now, so that a second drain fails in order.
        if let Err(e) = inner.begin_drain() {
            return Completion::completed(Err(e));
        }
        library_thread::complete("natsio-drain", move || {
            inner.drain_begun(timeout).map(|_| Outcome::Done)
        })
    }

    /// Closes the connection. Idempotent. After it returns no callback of
    /// this client runs again (unless called from one of them).
    pub fn close(&self) {
        self.inner.close_with(None);
    }

    /// Like `close`, on a library thread; the completion reports when the
    /// client is closed.
    pub fn close_async(&self) -> Arc<Completion> {
        let inner = Arc::clone(&self.inner);
        library_thread::complete("natsio-close", move || {
            inner.close_with(None);
            Ok(Outcome::Done)
        })
    }

    pub fn status(&self) -> ConnState {
        self.inner.state()
    }

    /// Drops the current connection and reconnects (to another server of
    /// the pool when there is one). Fails unless connected.
    pub fn force_reconnect(&self) -> Result<()> {
        match self.status() {
            ConnState::Connected => {
                self.inner.force_reconnect.notify_one();
                Ok(())
            }
            ConnState::Closed => Err(Error::closed()),
            _ => Err(Error::new(ErrorKind::IllegalState, "not connected")),
        }
    }

    /// Measures a round trip to the server (PING/PONG).
    pub fn rtt(&self, timeout: Option<Duration>) -> Result<Duration> {
        let start = Instant::now();
        self.flush(timeout)?;
        Ok(start.elapsed())
    }

    /// The server URLs currently in the pool (configured and discovered).
    pub fn servers(&self) -> Vec<String> {
        self.inner.connector.servers()
    }

    /// The pool's servers in the order they are tried, each with its
    /// reconnect bookkeeping (nats.go's ServerPool).
    pub fn server_pool(&self) -> Vec<PoolServer> {
        self.inner.connector.server_pool()
    }

    /// Replaces the pool's servers with `urls`, in that order (nats.go's
    /// SetServerPool, nats.js's setServers). The current connection stays
    /// up, even when its server is not among them: the next reconnect
    /// picks from the new pool (`force_reconnect` to move now). A server
    /// already in the pool keeps its reconnect count; servers the cluster
    /// tells of are still added unless the options ignore them. Fails with
    /// `Config` (nothing changed) for an empty list or an invalid URL, and
    /// `ConnectionClosed` once closed.
    pub fn set_server_pool(&self, urls: &[String]) -> Result<()> {
        if self.status() == ConnState::Closed {
            return Err(Error::closed());
        }
        self.inner.connector.set_server_pool(urls)
    }

    pub fn max_payload(&self) -> usize {
        self.inner.max_payload()
    }

    pub fn server_info_json(&self) -> String {
        self.inner.connector.info_json()
    }

    pub fn server_info(&self) -> ServerInfo {
        self.inner.connector.info()
    }

    pub fn connected_url(&self) -> Option<String> {
        (self.status() != ConnState::Closed).then(|| self.inner.connector.connected_url())
    }

    pub fn stats(&self) -> ClientStats {
        let c = &self.inner.counters;
        let (out_msgs, out_bytes) = self.inner.write.out_counts();
        ClientStats {
            in_msgs: c.in_msgs.load(Ordering::Relaxed),
            out_msgs,
            in_bytes: c.in_bytes.load(Ordering::Relaxed),
            out_bytes,
            reconnects: c.reconnects.load(Ordering::Relaxed),
            errors: self.inner.events.errors(),
            server_pings: c.server_pings.load(Ordering::Relaxed),
        }
    }

    pub fn new_inbox(&self) -> String {
        format!("{}.{}", self.inner.opts.inbox_prefix, new_nuid())
    }

    pub fn options(&self) -> &Options {
        &self.inner.opts
    }

    /// The binding's publish queue (`natsio_client_pub_ring`), made on
    /// the first call.
    pub(crate) fn pub_ring(&self) -> &crate::pub_ring::PubRing {
        self.inner.pub_ring()
    }

    /// Wakes the writer for publishes queued in the ring.
    pub(crate) fn kick_pub_ring(&self) {
        self.inner.kick_pub_ring();
    }
}

impl Drop for Client {
    fn drop(&mut self) {
        if runtime::on_runtime_thread() {
            // Closing waits for the connection task and joins callback
            // threads: never on the runtime (a client nobody took, e.g. from
            // a connect token freed before it completed, ends here).
            let inner = Arc::clone(&self.inner);
            let _ = library_thread::spawn("natsio-close", move || inner.close_with(None));
        } else {
            self.inner.close_with(None);
            // Not when closing returned early (freed from one of this
            // client's callbacks): the tasks may wait for that callback.
            if self.inner.state.is_closed() {
                self.inner.state.wait_for_task_refs(Duration::from_secs(5));
            }
        }
    }
}

/// A client not connected yet, its options checked.
fn new_client(opts: Options) -> Result<Arc<ClientInner>> {
    opts.validate()?;
    let pool = ServerPool::new(&opts.servers, !opts.no_randomize)?;
    Ok(Arc::new_cyclic(|w| {
        ClientInner::new(opts, pool, w.as_ptr() as usize)
    }))
}
