//! Requests: the reply mux (one wildcard subscription on a per-client
//! inbox prefix, each request a token under it), what becomes of each
//! reply (`OnReply`), the verbs that send a request and wait for its
//! reply, and their deadlines: one queue in deadline order and one timer
//! task that sleeps until the first deadline, instead of a timer task per
//! request. Requests with the same timeout arrive sorted; a shorter one is
//! inserted in place and wakes the timer if it is due before the timer's.
//! Entries already answered are dropped from the front as new ones arrive,
//! so the queue stays about as long as the number of requests in flight,
//! and the timer runs only while some are pending.

use std::collections::{HashMap, VecDeque};
use std::hash::BuildHasherDefault;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

use crate::client::routing::IdHasher;
use crate::client::write_side::Wake;
use crate::completion::{lock, Completion, Outcome};
use crate::error::{Error, ErrorKind, Result};
use crate::headers::Headers;
use crate::message::Message;
use crate::op::Urgency;
use crate::runtime;

pub(crate) fn new_nuid() -> String {
    nuid::next().to_string()
}

/// Turns a request's reply (or its failure) into the outcome its
/// completion gets; runs on the thread that routes the reply.
pub(crate) type ReplyMap = fn(Result<Message>) -> Result<Outcome>;

/// What becomes of a request's reply (or its failure), on the thread that
/// routes it.
pub(crate) enum OnReply {
    /// The completion gets the message.
    Msg,
    /// The completion gets what this makes of the reply.
    Map(ReplyMap),
    /// This decides; it may complete the completion later (a retry). The
    /// number is the handler's own (e.g. retries left): no allocation per
    /// request beyond the handler's `Arc`.
    Handle(Arc<dyn ReplyHandler>, u32),
}

/// Handles the replies of requests it sent (`OnReply::Handle`).
pub(crate) trait ReplyHandler: Send + Sync {
    fn on_reply(self: Arc<Self>, reply: Result<Message>, done: Arc<Completion>, n: u32);
}

/// A request awaiting its reply.
struct Waiter {
    done: Arc<Completion>,
    on_reply: OnReply,
}

impl Waiter {
    fn finish(self, r: Result<Message>) {
        match self.on_reply {
            OnReply::Msg => {
                self.done.complete(r.map(Outcome::Msg));
            }
            OnReply::Map(map) => {
                self.done.complete(map(r));
            }
            OnReply::Handle(handler, n) => handler.on_reply(r, self.done, n),
        }
    }
}

#[derive(Default)]
struct Mux {
    prefix: String,
    sid: u64,
    next_id: u64,
    waiters: HashMap<u64, Waiter, BuildHasherDefault<IdHasher>>,
}

/// What requests need of their client: its requests, a way to send a
/// request's frame, and the reply mux's subscription.
pub(crate) trait RequestHost: Send + Sync + 'static {
    fn requests(&self) -> &Requests;
    /// Sends `subject` with reply subject `reply` (a request's own inbox,
    /// valid by construction), written as `wake` says.
    fn send_request(
        &self,
        subject: &str,
        reply: &str,
        headers: Option<&Headers>,
        payload: &[u8],
        wake: Wake,
    ) -> Result<()>;
    /// Subscribes the reply mux to `wildcard`; its sid.
    fn subscribe_mux(&self, wildcard: &str) -> u64;
}

/// A client's requests in flight and their deadlines.
pub(crate) struct Requests {
    inbox_prefix: String,
    mux: Mutex<Mux>,
    /// The reply mux's sid (0 until the first request), read per routed
    /// message.
    mux_sid: AtomicU64,
    /// Timeouts of asynchronous requests (one timer for all).
    pub(crate) deadlines: Deadlines,
}

impl Requests {
    pub(crate) fn new(inbox_prefix: &str) -> Requests {
        Requests {
            inbox_prefix: inbox_prefix.to_string(),
            mux: Mutex::new(Mux::default()),
            mux_sid: AtomicU64::new(0),
            deadlines: Deadlines::default(),
        }
    }

    fn register(
        &self,
        host: &(impl RequestHost + ?Sized),
        done: Arc<Completion>,
        on_reply: OnReply,
    ) -> Result<(u64, ReplySubject, bool)> {
        let mut mux = lock(&self.mux);
        if mux.sid == 0 {
            mux.prefix = format!("{}.{}.", self.inbox_prefix, new_nuid());
            let wildcard = format!("{}*", mux.prefix);
            let sid = host.subscribe_mux(&wildcard);
            mux.sid = sid;
            self.mux_sid.store(sid, Ordering::Relaxed);
        }
        mux.next_id += 1;
        let id = mux.next_id;
        mux.waiters.insert(id, Waiter { done, on_reply });
        // Alone: no other request of this client awaits its reply.
        Ok((
            id,
            ReplySubject::new(&mux.prefix, id),
            mux.waiters.len() == 1,
        ))
    }

    pub(crate) fn unregister(&self, id: u64) {
        lock(&self.mux).waiters.remove(&id);
    }

    /// Fails request `id` with `e` (through its reply map) if it still waits.
    pub(crate) fn expire(&self, id: u64, e: Error) {
        let waiter = lock(&self.mux).waiters.remove(&id);
        if let Some(w) = waiter {
            w.finish(Err(e));
        }
    }

    /// Whether a message with this sid is a reply to a request.
    pub(crate) fn is_reply(&self, sid: u64) -> bool {
        sid == self.mux_sid.load(Ordering::Relaxed)
    }

    pub(crate) fn route_reply(&self, m: Message) {
        let id = m
            .subject()
            .rsplit('.')
            .next()
            .and_then(|t| t.parse::<u64>().ok());
        let Some(w) = id.and_then(|id| lock(&self.mux).waiters.remove(&id)) else {
            return;
        };
        if m.is_no_responders() {
            w.finish(Err(Error::new(
                ErrorKind::NoResponders,
                "no responders available for request",
            )));
        } else {
            w.finish(Ok(m));
        }
    }

    /// The reply mux's SUB for a new connection (none before the first
    /// request).
    pub(crate) fn write_resubscribe(&self, frames: &mut Vec<u8>) {
        let m = lock(&self.mux);
        if m.sid != 0 {
            crate::proto::write_sub(frames, &format!("{}*", m.prefix), None, m.sid);
        }
    }

    /// Fails every request still waiting (the client closes).
    pub(crate) fn fail_all(&self, e: &Error) {
        let waiters: Vec<_> = lock(&self.mux).waiters.drain().map(|(_, w)| w).collect();
        for w in waiters {
            w.finish(Err(e.clone()));
        }
    }
}

/// Registers a request and sends it, written as `urgency` says (at once
/// when the writer is idle, or coalesced like a publish), for a given
/// completion and reply handling (a retry re-sends a request for the same
/// completion). No timer is armed: the caller expires it (`expire`).
pub(crate) fn start_request_into(
    host: &(impl RequestHost + ?Sized),
    subject: &str,
    headers: Option<&Headers>,
    payload: &[u8],
    urgency: Urgency,
    done: &Arc<Completion>,
    on_reply: OnReply,
) -> Result<u64> {
    let requests = host.requests();
    // send_request validates the subject; a failure unregisters.
    let (id, reply, alone) = requests.register(host, Arc::clone(done), on_reply)?;
    let wake = match urgency {
        Urgency::Now => Wake::Direct,
        Urgency::IfAlone | Urgency::Deferred if alone => Wake::Direct,
        Urgency::IfAlone | Urgency::Coalesce => Wake::Writer,
        Urgency::Deferred => Wake::Deferred,
    };
    let sent = host.send_request(subject, reply.as_str(), headers, payload, wake);
    if let Err(e) = sent {
        requests.unregister(id);
        return Err(e);
    }
    Ok(id)
}

/// Like `start_request_into`, for a new completion.
pub(crate) fn start_request_with(
    host: &(impl RequestHost + ?Sized),
    subject: &str,
    headers: Option<&Headers>,
    payload: &[u8],
    urgency: Urgency,
    map: Option<ReplyMap>,
) -> Result<(u64, Arc<Completion>)> {
    let c = Completion::new();
    let on_reply = map.map_or(OnReply::Msg, OnReply::Map);
    let id = start_request_into(host, subject, headers, payload, urgency, &c, on_reply)?;
    Ok((id, c))
}

/// Sends a request and waits up to `timeout` for its reply (blocking).
pub(crate) fn request(
    host: &(impl RequestHost + ?Sized),
    subject: &str,
    headers: Option<&Headers>,
    payload: &[u8],
    timeout: Duration,
) -> Result<Message> {
    runtime::ensure_may_block()?;
    let (id, c) = start_request_with(host, subject, headers, payload, Urgency::Now, None)?;
    let r = match c.wait(Some(timeout)) {
        Some(r) => r,
        None => {
            host.requests().unregister(id);
            c.complete(Err(Error::timeout("request")));
            c.result().expect("completed")
        }
    };
    match r? {
        Outcome::Msg(m) => Ok(m),
        _ => Err(Error::new(
            ErrorKind::Protocol,
            "request completed without a reply",
        )),
    }
}

/// Starts a request whose reply (or failure) completes the returned
/// completion, timed out by the client's deadline queue; cancelling the
/// completion withdraws the request.
pub(crate) fn request_with_deadline<H: RequestHost>(
    host: &Arc<H>,
    subject: &str,
    headers: Option<&Headers>,
    payload: &[u8],
    timeout: Duration,
    urgency: Urgency,
    map: Option<ReplyMap>,
) -> Result<(u64, Arc<Completion>)> {
    let (id, c) = start_request_with(&**host, subject, headers, payload, urgency, map)?;
    let weak = Arc::downgrade(host);
    c.add_cancel_hook(move || {
        if let Some(h) = weak.upgrade() {
            h.requests().unregister(id);
        }
    });
    Deadlines::arm(host, crate::clock::deadline_in(timeout), id, &c);
    Ok((id, c))
}

/// A request as a future of its reply (`NoResponders` when nobody
/// listens, `Timeout` after `timeout`). Sent when this is called: at once
/// when a caller blocks on it or the application just started it with no
/// other request in flight, else coalesced with other writes; dropping the
/// future before the reply withdraws it.
pub(crate) fn request_fut<H: RequestHost>(
    host: &Arc<H>,
    subject: &str,
    headers: Option<&Headers>,
    payload: &[u8],
    timeout: Duration,
) -> Result<ReplyFuture> {
    let urgency = crate::op::urgency();
    let (_, c) = request_with_deadline(host, subject, headers, payload, timeout, urgency, None)?;
    Ok(ReplyFuture {
        fut: c.wait_async(),
    })
}

/// A reply subject `<prefix><id>`, built on the stack when it fits.
struct ReplySubject {
    buf: [u8; 120],
    len: usize,
    heap: Option<String>,
}

impl ReplySubject {
    fn new(prefix: &str, id: u64) -> Self {
        let mut r = ReplySubject {
            buf: [0; 120],
            len: 0,
            heap: None,
        };
        let mut digits = [0u8; 20];
        let mut n = id;
        let mut i = digits.len();
        loop {
            i -= 1;
            digits[i] = b'0' + (n % 10) as u8;
            n /= 10;
            if n == 0 {
                break;
            }
        }
        let digits = &digits[i..];
        let len = prefix.len() + digits.len();
        if len <= r.buf.len() {
            r.buf[..prefix.len()].copy_from_slice(prefix.as_bytes());
            r.buf[prefix.len()..len].copy_from_slice(digits);
            r.len = len;
        } else {
            r.heap = Some(format!("{prefix}{id}"));
        }
        r
    }

    fn as_str(&self) -> &str {
        match &self.heap {
            Some(h) => h,
            // ASCII digits after a UTF-8 prefix.
            None => std::str::from_utf8(&self.buf[..self.len]).unwrap_or_default(),
        }
    }
}

/// The reply of a request started by `request_fut`.
pub(crate) struct ReplyFuture {
    fut: crate::completion::CompletionFuture,
}

impl std::future::Future for ReplyFuture {
    type Output = Result<Message>;

    fn poll(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Result<Message>> {
        std::pin::Pin::new(&mut self.fut)
            .poll(cx)
            .map(|r| match r? {
                Outcome::Msg(m) => Ok(m),
                _ => Err(Error::new(
                    ErrorKind::Protocol,
                    "request completed without a reply",
                )),
            })
    }
}

impl Drop for ReplyFuture {
    fn drop(&mut self) {
        // Withdraws the request if no reply came (a no-op otherwise).
        self.fut.completion().cancel();
    }
}

#[derive(Default)]
struct Queue {
    entries: VecDeque<(Instant, u64, Weak<Completion>)>,
    timer_running: bool,
    /// What the running timer sleeps until (`None`: it is about to look).
    timer_at: Option<Instant>,
    /// Times `arm` woke the sleeping timer for a nearer deadline (the
    /// tests check which deadlines do and do not).
    early_wakes: u64,
}

#[derive(Default)]
pub(crate) struct Deadlines {
    queue: Mutex<Queue>,
    wake: Arc<tokio::sync::Notify>,
}

fn answered(w: &Weak<Completion>) -> bool {
    w.upgrade().is_none_or(|c| c.is_done())
}

impl Deadlines {
    /// Fails request `id` of `client` with a timeout at `deadline` unless
    /// `done` has completed by then.
    pub(crate) fn arm<H: RequestHost>(
        client: &Arc<H>,
        deadline: Instant,
        id: u64,
        done: &Arc<Completion>,
    ) {
        let d = &client.requests().deadlines;
        let mut q = lock(&d.queue);
        while q.entries.front().is_some_and(|(_, _, w)| answered(w)) {
            q.entries.pop_front();
        }
        let entry = (deadline, id, Arc::downgrade(done));
        let at = match q.entries.back() {
            Some((last, _, _)) if *last > deadline => {
                q.entries.partition_point(|(t, _, _)| *t <= deadline)
            }
            _ => q.entries.len(),
        };
        q.entries.insert(at, entry);
        if !q.timer_running {
            q.timer_running = true;
            crate::runtime::handle()
                .spawn(Self::run_timer(Arc::downgrade(client), Arc::clone(&d.wake)));
        } else if q.timer_at.is_some_and(|t| deadline < t) {
            // The timer sleeps until a later deadline. (A permit is kept
            // if it is not waiting yet.) Not for a deadline after the
            // timer's: one request at a time would wake it each time.
            q.timer_at = None;
            q.early_wakes += 1;
            d.wake.notify_one();
        }
    }

    /// Expires due entries; the next deadline, or `None` once none is left
    /// (the timer then stops; the next `arm` starts another).
    fn expire_due(requests: &Requests) -> Option<Instant> {
        let mut expired = Vec::new();
        let now = Instant::now();
        let next = {
            let mut q = lock(&requests.deadlines.queue);
            loop {
                match q.entries.front() {
                    None => {
                        q.timer_running = false;
                        q.timer_at = None;
                        break None;
                    }
                    Some((_, _, w)) if answered(w) => {
                        q.entries.pop_front();
                    }
                    Some((t, _, _)) if *t <= now => {
                        let (_, id, _) = q.entries.pop_front().expect("front");
                        expired.push(id);
                    }
                    Some(&(t, _, _)) => {
                        q.timer_at = Some(t);
                        break Some(t);
                    }
                }
            }
        };
        for id in expired {
            requests.expire(id, Error::timeout("request"));
        }
        next
    }

    /// Holds the client weakly: a closed client has failed every request,
    /// so a timer that finds it gone has nothing left to do.
    async fn run_timer<H: RequestHost>(client: Weak<H>, wake: Arc<tokio::sync::Notify>) {
        loop {
            let next = match client.upgrade() {
                Some(c) => Self::expire_due(c.requests()),
                None => return,
            };
            let Some(next) = next else {
                return;
            };
            tokio::select! {
                _ = tokio::time::sleep_until(next.into()) => {}
                _ = wake.notified() => {}
            }
        }
    }
}

#[cfg(test)]
mod tests {
    //! The queue is tested through a real client that never connects
    //! (nothing answers its requests), so each request ends by its deadline
    //! only, through the same path as in use: `expire_request` and the
    //! request's completion.

    use std::sync::mpsc;
    use std::time::Duration;

    use super::*;
    use crate::client::Client;
    use crate::completion::Outcome;
    use crate::error::ErrorKind;
    use crate::options::Options;

    /// Long enough that nothing armed with it expires during a test.
    const LATER: Duration = Duration::from_secs(3600);
    /// How long a test waits for something due at once; generous, so
    /// that a loaded machine does not fail it.
    const PATIENCE: Duration = Duration::from_secs(20);

    /// A client whose server is never reached (port 1 refuses): connecting
    /// goes on in the background, and requests are buffered unanswered.
    fn offline_client() -> Client {
        Client::connect(Options {
            servers: vec!["nats://127.0.0.1:1".into()],
            retry_on_failed_connect: true,
            reconnect_time_wait: LATER,
            reconnect_time_wait_max: LATER,
            no_randomize: true,
            ..Options::default()
        })
        .expect("retry_on_failed_connect: connect returns at once")
    }

    /// A registered request (its reply would complete it), not armed yet.
    fn request(c: &Client) -> (u64, Arc<Completion>) {
        start_request_with(
            &*c.inner,
            "deadlines.test",
            None,
            b"",
            crate::op::Urgency::Coalesce,
            None,
        )
        .expect("request buffered")
    }

    /// Arms a new request at `deadline`.
    fn armed(c: &Client, deadline: Instant) -> (u64, Arc<Completion>) {
        let (id, done) = request(c);
        Deadlines::arm(&c.inner, deadline, id, &done);
        (id, done)
    }

    /// The ids in the queue, front first.
    fn queued(c: &Client) -> Vec<u64> {
        let q = lock(&c.inner.requests.deadlines.queue);
        q.entries.iter().map(|(_, id, _)| *id).collect()
    }

    fn timer_running(c: &Client) -> bool {
        lock(&c.inner.requests.deadlines.queue).timer_running
    }

    /// Waits until the timer sleeps until the queue's first deadline.
    fn wait_timer_asleep(c: &Client) {
        let until = Instant::now() + PATIENCE;
        loop {
            {
                let q = lock(&c.inner.requests.deadlines.queue);
                if q.timer_running
                    && q.timer_at.is_some()
                    && q.timer_at == q.entries.front().map(|e| e.0)
                {
                    return;
                }
            }
            assert!(Instant::now() < until, "the timer did not go to sleep");
            std::thread::sleep(Duration::from_millis(2));
        }
    }

    fn early_wakes(c: &Client) -> u64 {
        lock(&c.inner.requests.deadlines.queue).early_wakes
    }

    /// Waits for `done`'s result and requires a timeout.
    fn assert_timed_out(done: &Completion, what: &str) {
        match done.wait(Some(PATIENCE)) {
            Some(Err(e)) => assert_eq!(e.kind(), ErrorKind::Timeout, "{what}: {e}"),
            Some(Ok(o)) => panic!("{what}: completed with {o:?}, not a timeout"),
            None => panic!("{what}: not timed out after {PATIENCE:?}"),
        }
    }

    #[test]
    fn a_request_fails_with_a_timeout_at_its_deadline_not_before() {
        let c = offline_client();
        let (id, done) = request(&c);
        let (tx, rx) = mpsc::channel();
        // Stamped on the completing thread: when the timer failed it.
        done.on_complete(move || tx.send(Instant::now()).expect("send"));
        let deadline = Instant::now() + Duration::from_millis(300);
        Deadlines::arm(&c.inner, deadline, id, &done);
        assert_timed_out(&done, "request");
        let failed_at = rx.recv().expect("completion time");
        assert!(
            failed_at >= deadline,
            "failed {:?} before its deadline",
            deadline - failed_at
        );
    }

    #[test]
    fn a_deadline_already_past_fails_the_request_at_once() {
        let c = offline_client();
        let (_, done) = armed(&c, Instant::now());
        assert_timed_out(&done, "zero timeout");
    }

    #[test]
    fn a_nearer_deadline_armed_later_wakes_the_sleeping_timer() {
        let c = offline_client();
        let (_, far) = armed(&c, Instant::now() + LATER);
        wait_timer_asleep(&c);
        let (_, near) = armed(&c, Instant::now() + Duration::from_millis(50));
        assert_eq!(early_wakes(&c), 1, "the nearer deadline woke the timer");
        assert_timed_out(&near, "nearer request");
        assert!(!far.is_done(), "the far request expired with the near one");
        assert!(timer_running(&c), "the far request still needs the timer");
    }

    #[test]
    fn a_later_deadline_armed_while_the_timer_sleeps_for_an_answered_one_expires_in_turn() {
        let c = offline_client();
        let (_, first) = armed(&c, Instant::now() + Duration::from_millis(200));
        wait_timer_asleep(&c);
        // Answered before its deadline, as one request at a time is: the
        // next one, due later, lets the timer sleep on (no wake-up)...
        first.complete(Ok(Outcome::Done));
        let (_, second) = armed(&c, Instant::now() + Duration::from_millis(400));
        assert_eq!(early_wakes(&c), 0, "a later deadline woke the timer");
        // ...which then finds it and fails it at its own deadline.
        let started = Instant::now();
        assert_timed_out(&second, "second request");
        assert!(started.elapsed() >= Duration::from_millis(300));
    }

    #[test]
    fn the_queue_is_in_deadline_order_and_equal_deadlines_in_arrival_order() {
        let c = offline_client();
        let base = Instant::now() + LATER;
        let at = |s: u64| base + Duration::from_secs(s);
        // (seconds after base) in arrival order: an append, inserts at the
        // front, in the middle and among equals, and an append again.
        let (a, _a) = armed(&c, at(3));
        let (b, _b) = armed(&c, at(1));
        let (d, _d) = armed(&c, at(3));
        let (e, _e) = armed(&c, at(2));
        let (f, _f) = armed(&c, at(1));
        let (g, _g) = armed(&c, at(5));
        let (h, _h) = armed(&c, at(3));
        assert_eq!(queued(&c), vec![b, f, e, a, d, h, g]);
        let q = lock(&c.inner.requests.deadlines.queue);
        assert!(
            q.entries
                .iter()
                .zip(q.entries.iter().skip(1))
                .all(|(x, y)| x.0 <= y.0),
            "deadlines out of order"
        );
    }

    #[test]
    fn answered_requests_leave_the_queue_as_new_ones_arrive() {
        let c = offline_client();
        let deadline = Instant::now() + LATER;
        let early: Vec<_> = (0..100).map(|_| armed(&c, deadline)).collect();
        // Answered by a reply, or given up by the caller: both are done.
        for (i, (_, done)) in early.iter().enumerate() {
            if i % 2 == 0 {
                done.complete(Ok(Outcome::Done));
            } else {
                done.cancel();
            }
        }
        let (id, pending) = armed(&c, deadline);
        assert_eq!(queued(&c), vec![id], "answered entries were kept");
        // Trimmed from the front only: a pending entry there keeps the
        // answered ones behind it until it is answered too.
        let (x, x_done) = armed(&c, deadline);
        let (y, y_done) = armed(&c, deadline);
        y_done.cancel();
        let (z, _z_done) = armed(&c, deadline);
        assert_eq!(queued(&c), vec![id, x, y, z]);
        pending.cancel();
        x_done.cancel();
        let (w, _w_done) = armed(&c, deadline);
        assert_eq!(queued(&c), vec![z, w]);
    }

    #[test]
    fn the_timer_stops_when_the_queue_empties_and_the_next_request_restarts_it() {
        let c = offline_client();
        assert!(!timer_running(&c), "a timer before any request");
        let wake = Arc::clone(&c.inner.requests.deadlines.wake);
        let (_, first) = armed(&c, Instant::now() + Duration::from_millis(50));
        assert_timed_out(&first, "first request");
        // The timer marks itself stopped before it fails the last request,
        // and its task ends (dropping its handle on `wake`).
        assert!(!timer_running(&c), "the timer runs on with nothing queued");
        assert!(queued(&c).is_empty());
        let until = Instant::now() + PATIENCE;
        while Arc::strong_count(&wake) > 2 {
            assert!(Instant::now() < until, "the timer task did not end");
            std::thread::sleep(Duration::from_millis(10));
        }
        let (_, second) = armed(&c, Instant::now() + Duration::from_millis(50));
        assert_timed_out(&second, "request after the timer stopped");
    }

    #[test]
    fn far_deadlines_do_not_stop_the_timer_for_nearer_ones() {
        let c = offline_client();
        let now = Instant::now();
        // The longest timeouts C can ask for: NATSIO_WAIT_FOREVER on a
        // request (ffi::FOREVER), and the largest positive timeout_ms.
        let forever = now + crate::ffi::FOREVER;
        let largest = now
            .checked_add(Duration::from_millis(i64::MAX as u64))
            .expect("an Instant holds i64::MAX ms from now");
        let (_, f1) = armed(&c, forever);
        let (_, f2) = armed(&c, largest);
        // The timer sleeps until the far deadline (a panic there would
        // end its task and leave every later request without a timeout).
        wait_timer_asleep(&c);
        let (_, near) = armed(&c, Instant::now() + Duration::from_millis(50));
        assert_timed_out(&near, "near request after far ones");
        assert!(!f1.is_done() && !f2.is_done());
        // Still alive: another near one expires too.
        let (_, again) = armed(&c, Instant::now() + Duration::from_millis(50));
        assert_timed_out(&again, "second near request");
    }

    #[test]
    fn a_closed_client_ends_its_timer() {
        let c = offline_client();
        let (_, done) = armed(&c, Instant::now() + Duration::from_millis(200));
        let wake = Arc::clone(&c.inner.requests.deadlines.wake);
        assert_eq!(
            Arc::strong_count(&wake),
            3,
            "ours, the queue's, the timer's"
        );
        c.close();
        drop(c);
        // Closing fails the request at once; the timer finds nothing left
        // (or no client) when it wakes, and ends.
        assert!(done.is_done(), "close left the request pending");
        let until = Instant::now() + PATIENCE;
        while Arc::strong_count(&wake) > 1 {
            assert!(Instant::now() < until, "the timer task outlived its client");
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    #[test]
    fn a_request_and_a_publish_with_a_huge_timeout_start_and_stay_pending() {
        // `Instant::now() + Duration::MAX` panics; a Rust caller may pass it
        // to mean "no timeout".
        // Through the API: a request and a JetStream async publish with
        // that timeout start (they used to panic) and stay pending.
        let c = offline_client();
        let r = c
            .request_async("deadlines.max", None, b"", Some(Duration::MAX))
            .expect("request started");
        let js = crate::jetstream::JetStream::new(&c, Default::default()).expect("js");
        let p = js
            .publish_async(
                "deadlines.max",
                b"",
                &crate::jetstream::PublishOptions {
                    timeout: Some(Duration::MAX),
                    ..Default::default()
                },
            )
            .expect("publish started");
        // An absence: neither ends within 100 ms.
        std::thread::sleep(Duration::from_millis(100));
        assert!(!r.is_done() && !p.is_done());
        c.close();
        assert!(
            r.wait(Some(PATIENCE)).is_some() && p.wait(Some(PATIENCE)).is_some(),
            "closing ends them"
        );
    }
}
