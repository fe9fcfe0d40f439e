//! `ClientInner`: one client's state, composed of its parts, each with a
//! narrow interface of its own: the write side (`write_side.rs`), the
//! connector (`connector.rs`), requests and their deadlines
//! (`requests.rs`), the subscriptions registry (`routing.rs`), the
//! lifecycle state (`state.rs`) and what the application is told
//! (`events.rs`). What is here joins them: the read path's handling of
//! each server operation, the changes a new or lost connection makes to
//! every part, and the verbs the rest of the library calls (delegated).
//! Closing and draining are in `lifecycle.rs`; subscribing is in
//! `subscription.rs`; the connection task in `connection.rs`.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use crate::cache_line::CacheLine;
use crate::client::connector::{parse_info, Connector, ServerInfo};
use crate::client::events::Events;
use crate::client::requests::{self, OnReply, ReplyFuture, ReplyMap, RequestHost, Requests};
use crate::client::routing::{self, OwedWakes, Routing, SubShared};
use crate::client::state::{ClientState, ConnState, Lifecycle, Shutdown, TaskHold};
use crate::client::write_side::{Wake, WriteSide, Writer};
use crate::completion::{Completion, Outcome};
use crate::error::{Error, ErrorKind, Result};
use crate::feed::Pushed;
use crate::headers::Headers;
use crate::log::Logger;
use crate::message::Message;
use crate::op::Urgency;
use crate::options::{EventKind, Options, PendingPolicy};
use crate::pool::ServerPool;
use crate::proto::{self, ServerOp};
use crate::pub_ring::PubRing;

/// Traffic counters the reading thread keeps per message.
#[derive(Default)]
pub(crate) struct Counters {
    pub(crate) in_msgs: AtomicU64,
    pub(crate) in_bytes: AtomicU64,
    pub(crate) reconnects: AtomicU64,
    pub(crate) server_pings: AtomicU64,
}

pub(crate) struct ClientInner {
    pub(crate) opts: Options,
    /// The options' log callback and level (and NATSIO_LOG's).
    pub(crate) log: Logger,
    /// The client's address, which marks its dispatcher threads.
    pub(crate) owner_id: usize,
    pub(crate) write: WriteSide,
    pub(crate) connector: Connector,
    pub(crate) requests: Requests,
    pub(crate) routing: Routing,
    pub(crate) state: ClientState,
    pub(crate) events: Arc<Events>,
    /// Counted by the reading thread per message (its own cache line).
    pub(crate) counters: CacheLine<Counters>,
    /// Asks the connection task to drop the connection and reconnect.
    pub(crate) force_reconnect: tokio::sync::Notify,
}

/// A strong reference to the client held by one of the library's tasks or
/// threads (the connection task, a closing thread), counted until it is
/// dropped. Freeing the client waits until none is left, so that the last
/// reference, and with it the application's log callback state, is released
/// before `natsio_client_free` returns rather than on a runtime thread later.
pub(crate) struct TaskRef {
    // Declared before `_hold`, so dropped first: the count falls to zero only
    // once this reference is gone.
    inner: Arc<ClientInner>,
    _hold: TaskHold,
}

impl std::ops::Deref for TaskRef {
    type Target = Arc<ClientInner>;

    fn deref(&self) -> &Arc<ClientInner> {
        &self.inner
    }
}

impl Writer for ClientInner {
    fn write_side(&self) -> &WriteSide {
        &self.write
    }

    fn shutdown(&self) -> &Shutdown {
        &self.state.shutdown
    }
}

impl RequestHost for ClientInner {
    fn requests(&self) -> &Requests {
        &self.requests
    }

    fn send_request(
        &self,
        subject: &str,
        reply: &str,
        headers: Option<&Headers>,
        payload: &[u8],
        wake: Wake,
    ) -> Result<()> {
        self.write
            .publish_frame_checked_reply(subject, Some(reply), headers, payload, wake)
    }

    fn subscribe_mux(&self, wildcard: &str) -> u64 {
        let sid = self.routing.next_sid();
        self.write
            .enqueue_control(|b| proto::write_sub(b, wildcard, None, sid));
        sid
    }
}

impl ClientInner {
    pub(crate) fn new(mut opts: Options, pool: ServerPool, owner_id: usize) -> ClientInner {
        // Held only here, so that close can release them.
        let error_cb = opts.error_callback.take();
        let event_cb = opts.event_callback.take();
        let log = Logger::new(
            opts.log_level,
            opts.log_callback.take(),
            opts.name.as_deref(),
        );
        let events = Arc::new(Events::new(log.clone(), owner_id, error_cb, event_cb));
        ClientInner {
            write: WriteSide::new(&opts, log.clone(), Arc::clone(&events)),
            connector: Connector::new(pool),
            requests: Requests::new(&opts.inbox_prefix),
            routing: Routing::default(),
            state: ClientState::default(),
            events,
            counters: CacheLine(Counters::default()),
            force_reconnect: tokio::sync::Notify::new(),
            log,
            owner_id,
            opts,
        }
    }

    pub(crate) fn state(&self) -> ConnState {
        self.state.get()
    }

    pub(crate) fn is_shutting_down(&self) -> bool {
        self.state.shutdown.is_set()
    }

    /// A reference for a library task or thread; see `TaskRef`.
    pub(crate) fn task_ref(self: &Arc<Self>) -> TaskRef {
        let hold = self.state.hold();
        TaskRef {
            inner: Arc::clone(self),
            _hold: hold,
        }
    }

    /// Lifecycle changes (reconnects, close), for flows that must
    /// re-establish themselves.
    pub(crate) fn lifecycle(&self) -> tokio::sync::watch::Receiver<Lifecycle> {
        self.state.lifecycle()
    }

    // ---- the write side's verbs --------------------------------------------

    /// The binding's publish queue, made on the first call.
    pub(crate) fn pub_ring(&self) -> &PubRing {
        self.write.pub_ring()
    }

    /// Wakes the writer for publishes queued in the ring.
    pub(crate) fn kick_pub_ring(&self) {
        self.write.kick_pub_ring();
    }

    /// Wakes the writer for deferred frames (`Wake::Deferred`) that have
    /// not woken it. Cheap when there are none.
    pub(crate) fn send_deferred(&self) {
        self.write.send_deferred();
    }

    pub(crate) fn max_payload(&self) -> usize {
        self.write.max_payload()
    }

    pub(crate) fn publish(
        &self,
        subject: &str,
        reply: Option<&str>,
        headers: Option<&Headers>,
        payload: &[u8],
    ) -> Result<()> {
        self.write
            .publish_frame(subject, reply, headers, payload, Wake::Writer)
    }

    /// `wake`: Direct when someone waits for this frame's answer (request,
    /// reply).
    pub(crate) fn publish_frame(
        &self,
        subject: &str,
        reply: Option<&str>,
        headers: Option<&Headers>,
        payload: &[u8],
        wake: Wake,
    ) -> Result<()> {
        self.write
            .publish_frame(subject, reply, headers, payload, wake)
    }

    /// `publish_frame` with both subjects known to be valid (an ack
    /// subject the server sent and `parse_metadata` accepted).
    pub(crate) fn publish_frame_checked(
        &self,
        subject: &str,
        reply: Option<&str>,
        headers: Option<&Headers>,
        payload: &[u8],
        wake: Wake,
    ) -> Result<()> {
        self.write
            .publish_frame_checked(subject, reply, headers, payload, wake)
    }

    /// A response: urgent, so written at once when the writer is idle
    /// (someone waits for it).
    pub(crate) fn respond_to(
        &self,
        reply_subject: &str,
        headers: Option<&Headers>,
        payload: &[u8],
    ) -> Result<()> {
        self.write.respond_to(reply_subject, headers, payload)
    }

    /// Replies to `msg` on its reply subject.
    pub(crate) fn respond(
        &self,
        msg: &Message,
        headers: Option<&Headers>,
        payload: &[u8],
    ) -> Result<()> {
        let Some(reply) = msg.reply() else {
            return Err(Error::new(
                ErrorKind::NoReplySubject,
                "message has no reply subject",
            ));
        };
        self.respond_to(reply, headers, payload)
    }

    pub(crate) fn send_unsub(&self, sid: u64, max: Option<u64>) {
        self.write.send_unsub(sid, max);
    }

    /// Queues a PING whose PONG completes the returned completion.
    pub(crate) fn flush_async(&self) -> Arc<Completion> {
        self.write.flush_async()
    }

    pub(crate) fn flush(&self, timeout: Duration) -> Result<()> {
        self.write.flush(timeout)
    }

    // ---- requests (requests.rs) ------------------------------------------

    pub(crate) fn start_request_into(
        &self,
        subject: &str,
        headers: Option<&Headers>,
        payload: &[u8],
        urgency: Urgency,
        done: &Arc<Completion>,
        on_reply: OnReply,
    ) -> Result<u64> {
        requests::start_request_into(self, subject, headers, payload, urgency, done, on_reply)
    }

    pub(crate) fn unregister_request(&self, id: u64) {
        self.requests.unregister(id);
    }

    pub(crate) fn request(
        &self,
        subject: &str,
        headers: Option<&Headers>,
        payload: &[u8],
        timeout: Duration,
    ) -> Result<Message> {
        requests::request(self, subject, headers, payload, timeout)
    }

    pub(crate) fn request_async(
        self: &Arc<Self>,
        subject: &str,
        headers: Option<&Headers>,
        payload: &[u8],
        timeout: Duration,
    ) -> Result<Arc<Completion>> {
        self.request_with_deadline(subject, headers, payload, timeout, Urgency::Now, None)
            .map(|(_, c)| c)
    }

    pub(crate) fn request_with_deadline(
        self: &Arc<Self>,
        subject: &str,
        headers: Option<&Headers>,
        payload: &[u8],
        timeout: Duration,
        urgency: Urgency,
        map: Option<ReplyMap>,
    ) -> Result<(u64, Arc<Completion>)> {
        requests::request_with_deadline(self, subject, headers, payload, timeout, urgency, map)
    }

    pub(crate) fn request_fut(
        self: &Arc<Self>,
        subject: &str,
        headers: Option<&Headers>,
        payload: &[u8],
        timeout: Duration,
    ) -> Result<ReplyFuture> {
        requests::request_fut(self, subject, headers, payload, timeout)
    }

    // ---- what the application is told (events.rs) ------------------------

    /// Hands an error to the application's error callback, on the events
    /// dispatcher thread.
    pub(crate) fn report_error(&self, error: Error, sub: Option<(u64, String)>) {
        self.events.report_error(error, sub);
    }

    /// Runs a token's completion callback on this client's completions
    /// thread.
    pub(crate) fn post_completion(&self, job: Box<dyn FnOnce() + Send>) {
        self.events.post_completion(job);
    }

    // ---- read path --------------------------------------------------------

    pub(crate) async fn handle_op(
        self: &Arc<Self>,
        op: ServerOp,
        wakes: &mut OwedWakes,
    ) -> Result<()> {
        match op {
            ServerOp::Msg(m) => self.route(m, wakes).await,
            ServerOp::Ping => {
                self.write
                    .enqueue_control(|b| b.extend_from_slice(proto::PONG));
                self.counters.server_pings.fetch_add(1, Ordering::Relaxed);
            }
            ServerOp::Pong => {
                if let Some(c) = self.write.pong_received() {
                    c.complete(Ok(Outcome::Done));
                }
            }
            ServerOp::Ok => {}
            ServerOp::Err(text) => {
                let (e, fatal) = Error::from_server(&text);
                if fatal {
                    return Err(e);
                }
                if !self.end_optional_subs(&e, &text) {
                    if self.opts.permission_err_on_subscribe {
                        self.end_refused_subscriptions(&text, &e);
                    }
                    self.report_error(e, None);
                }
            }
            ServerOp::Info(json) => {
                if let Ok(info) = parse_info(&json) {
                    let lame_duck = info.ldm;
                    self.discover(&info, true);
                    self.set_info(json, info);
                    if lame_duck && self.connector.lame_duck_announced() {
                        // Reported, and nothing else here: the connection
                        // keeps reading, delivering and publishing. The read
                        // loop connects to another server meanwhile and lets
                        // this one go only after reading it to its end.
                        let url = self.connector.connected_url();
                        self.events
                            .emit(EventKind::LameDuck, Some(url), None, Vec::new());
                    }
                }
            }
        }
        Ok(())
    }

    async fn route(self: &Arc<Self>, m: Message, wakes: &mut OwedWakes) {
        // Only the connection's reading task counts these (one connection
        // at a time): a load and a store, not a locked add, per message.
        let c = &self.counters;
        c.in_msgs
            .store(c.in_msgs.load(Ordering::Relaxed) + 1, Ordering::Relaxed);
        let bytes = c.in_bytes.load(Ordering::Relaxed) + m.payload().len() as u64;
        c.in_bytes.store(bytes, Ordering::Relaxed);
        let sid = m.sid;
        if self.requests.is_reply(sid) {
            self.requests.route_reply(m);
            return;
        }
        let Some(sub) = self.routing.get(sid) else {
            return;
        };
        let (pushed, reached_max, owed) = sub.push_owing_wake(m);
        // This task is about to wait for room or yield: its reader must run.
        let will_wait = matches!(pushed, Pushed::Blocked | Pushed::Backlogged);
        if owed {
            wakes.owe(sub.clone());
        }
        if will_wait || wakes.due() {
            wakes.send();
        }
        match pushed {
            Pushed::Dropped(n) if n > 0 => self.report_slow(&sub, n),
            Pushed::Failed => {
                self.report_slow(&sub, 1);
                self.remove_sub(sid, true);
            }
            Pushed::Blocked => routing::wait_for_room(&sub, &self.state.shutdown).await,
            // Its reader lags (a handler slower than this thread reads):
            // let it catch up before the backlog grows further.
            Pushed::Backlogged => routing::give_way(&sub, &self.state.shutdown).await,
            _ => {}
        }
        if reached_max {
            sub.finish();
        }
    }

    fn report_slow(&self, sub: &SubShared, dropped: u64) {
        if sub.should_report_slow() {
            let e = Error::new(
                ErrorKind::SlowConsumer,
                format!(
                    "slow consumer on subject {:?} (sid {}): {dropped} message(s) dropped, {} in total",
                    sub.subject,
                    sub.sid,
                    sub.stats().dropped
                ),
            );
            if let Some(listener) = sub.slow_listener.get() {
                let (listener, e) = (Arc::clone(listener), e.clone());
                self.events.post_event(Box::new(move || listener(&e)));
            }
            self.report_error(e, Some((sub.sid, sub.subject.clone())));
        }
    }

    /// A permissions violation for a subject only optional subscriptions
    /// take ends them, unreported: true when `text` was one.
    fn end_optional_subs(&self, e: &Error, text: &str) -> bool {
        if e.kind() != ErrorKind::PermissionsViolation {
            return false;
        }
        let Some((subject, _)) = routing::refused_subscription(text) else {
            return false;
        };
        let subs = self.routing.select(|s| s.subject == subject);
        if subs.is_empty() || !subs.iter().all(|s| s.optional.load(Ordering::Relaxed)) {
            return false;
        }
        for s in subs {
            self.remove_sub(s.sid, false);
            s.fail(e.clone());
        }
        true
    }

    /// Ends the subscriptions a refused-subscription error names (subject
    /// and queue group), with that error.
    fn end_refused_subscriptions(&self, text: &str, error: &Error) {
        let Some((subject, queue)) = routing::refused_subscription(text) else {
            return;
        };
        let ended = self
            .routing
            .select(|s| s.subject == subject && s.queue_group.as_deref() == queue);
        for s in ended {
            self.remove_sub(s.sid, false);
            s.fail(error.clone());
        }
    }

    pub(crate) fn remove_sub(&self, sid: u64, send_unsub: bool) {
        if self.routing.remove(sid) && send_unsub {
            self.send_unsub(sid, None);
        }
    }

    pub(crate) fn drain_sub(&self, sub: &Arc<SubShared>) -> Arc<Completion> {
        let c = Completion::new();
        sub.feed.add_drain_waiter(Arc::clone(&c));
        if c.is_done() {
            return c;
        }
        self.send_unsub(sub.sid, None);
        let s = Arc::clone(sub);
        let flushed = self.flush_async();
        let result = Arc::downgrade(&flushed);
        flushed.on_complete(move || {
            // The server has processed the UNSUB: nothing more will come. A
            // failed flush (the client closed) ends the drain with that error.
            if result
                .upgrade()
                .and_then(|f| f.result())
                .is_some_and(|r| r.is_ok())
            {
                s.finish();
            }
        });
        c
    }

    // ---- a connection established or lost ---------------------------------

    /// Adds INFO's connect_urls to the pool; reports new ones when `announce`.
    fn discover(&self, info: &ServerInfo, announce: bool) {
        let added = self.connector.discover(&self.opts, info);
        if announce && !added.is_empty() {
            self.events
                .emit(EventKind::ServersDiscovered, None, None, added);
        }
    }

    fn set_info(&self, json: String, info: ServerInfo) {
        if info.max_payload > 0 {
            self.write.set_max_payload(info.max_payload as usize);
        }
        self.connector.set_info(json, info);
    }

    /// Records a freshly established connection.
    pub(crate) fn on_established(&self, url: &str, info_json: String, info: ServerInfo) {
        let announce = self.connector.established(url);
        self.discover(&info, announce);
        self.set_info(info_json, info);
    }

    /// The connection was lost: keep buffered publishes (only those),
    /// forget keepalives, and start buffering for the next connection.
    pub(crate) fn begin_reconnect(&self, cause: &Error) {
        if !self.write.begin_reconnect() {
            return;
        }
        self.state
            .change(ConnState::Connected, ConnState::Reconnecting);
        let url = self.connector.lost();
        self.events.emit(
            EventKind::Disconnected,
            Some(url),
            Some(cause.clone()),
            Vec::new(),
        );
    }

    /// Connected again: re-send subscriptions (with what is left of their
    /// auto-unsubscribe counts), then the publishes buffered meanwhile, then
    /// one PING per flush still waiting.
    pub(crate) fn finish_reconnect(&self, url: &str, info_json: String, info: ServerInfo) {
        self.on_established(url, info_json, info);
        let mut frames = Vec::new();
        self.requests.write_resubscribe(&mut frames);
        self.routing.write_resubscribes(&mut frames);
        if !self.write.finish_reconnect(frames) {
            return;
        }
        self.state
            .change(ConnState::Reconnecting, ConnState::Connected);
        if self.connector.mark_connected() {
            self.counters.reconnects.fetch_add(1, Ordering::Relaxed);
            self.state.note_reconnect();
            self.events.emit(
                EventKind::Reconnected,
                Some(url.to_string()),
                None,
                Vec::new(),
            );
        } else {
            self.events.emit(
                EventKind::Connected,
                Some(url.to_string()),
                None,
                Vec::new(),
            );
        }
    }

    /// BLOCK-policy pauses hold across reconnects: wait before reading.
    pub(crate) async fn reassert_block_pauses(&self) {
        let blocked = self.routing.select(|s| s.policy == PendingPolicy::Block);
        for s in blocked {
            if s.must_wait_for_room() {
                routing::wait_for_room(&s, &self.state.shutdown).await;
            }
        }
    }
}
