//! The client: shared state between the application's threads and the
//! connection task, and the public verbs.

use std::collections::{HashMap, VecDeque};
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use crate::cache_line::CacheLine;
use crate::completion::{lock, Completion, Outcome};
use crate::connection::{self, parse_info, ServerInfo};
use crate::dispatch::{self, Dispatcher};
use crate::error::{Error, ErrorKind, Result};
use crate::feed::{Feed, FeedItem, Limits, Pushed};
use crate::headers::Headers;
use crate::log::{log, LogLevel, Logger};
use crate::message::Message;
use crate::op::{Op, Urgency};
use crate::options::{
    ErrorCallback, ErrorEvent, Event, EventCallback, EventKind, Options, PendingPolicy, ServerAddr,
};
use crate::pool::ServerPool;
use crate::proto::{self, ServerOp};
use crate::pub_ring::PubRing;
use crate::runtime;
use crate::subject;
use crate::subscription::{SubOptions, SubShared, Subscription};

/// Connection state, as reported by `Client::status`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum ConnState {
    Disconnected = 0,
    Connecting = 1,
    Connected = 2,
    Reconnecting = 3,
    Draining = 4,
    Closed = 5,
}

impl ConnState {
    fn from_u8(v: u8) -> ConnState {
        match v {
            1 => ConnState::Connecting,
            2 => ConnState::Connected,
            3 => ConnState::Reconnecting,
            4 => ConnState::Draining,
            5 => ConnState::Closed,
            _ => ConnState::Disconnected,
        }
    }
}

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

#[derive(Default)]
struct Counters {
    in_msgs: AtomicU64,
    in_bytes: AtomicU64,
    reconnects: AtomicU64,
    errors: AtomicU64,
    server_pings: AtomicU64,
}

/// Wake-ups the reading task owes to subscriptions' readers (dispatchers,
/// blocked `next` calls). A reader woken at the first message of a run
/// empties the queue faster than the reading thread fills it and sleeps
/// again: a futex wake and two context switches every few messages. Owed,
/// the wake-up goes once the run ends (`send`: before the next socket
/// read, before the reading task waits or yields, on its way out) or after
/// `OWED_WAKE_MAX_MSGS` messages, which bounds the delay it adds.
#[derive(Default)]
pub(crate) struct OwedWakes {
    subs: Vec<Arc<SubShared>>,
    msgs: usize,
}

/// Messages routed at most while a wake-up is owed.
const OWED_WAKE_MAX_MSGS: usize = 256;

impl OwedWakes {
    fn owe(&mut self, sub: Arc<SubShared>) {
        self.subs.push(sub);
    }

    /// Counts a routed message; true when owed wake-ups are due.
    fn due(&mut self) -> bool {
        if self.subs.is_empty() {
            return false;
        }
        self.msgs += 1;
        self.msgs >= OWED_WAKE_MAX_MSGS
    }

    pub(crate) fn send(&mut self) {
        for sub in self.subs.drain(..) {
            sub.wake_reader();
        }
        self.msgs = 0;
    }
}

impl Drop for OwedWakes {
    fn drop(&mut self) {
        self.send();
    }
}

/// The write side shared by publishers and the writer task.
#[derive(Default)]
struct WriteState {
    buf: Vec<u8>,
    /// One entry per PING in flight, in order: a flush waiter, or `None`
    /// for a keepalive.
    pongs: VecDeque<Option<Arc<Completion>>>,
    pings_outstanding: u32,
    closed: Option<Error>,
    /// Set once a client drain has handled its subscriptions.
    publishes_blocked: bool,
    space_waiters: usize,
    // Counted here, under the lock publish holds anyway, not in atomics.
    out_msgs: u64,
    out_bytes: u64,
    /// Disconnected: publishes accumulate (bounded by reconnect_buf_size)
    /// for the next connection; control frames are regenerated instead.
    reconnecting: bool,
    /// The writer task holds a batch it is writing.
    writer_busy: bool,
    /// The connection is being let go: the writer takes nothing more and
    /// ends once its batch is written (what is left stays for the next
    /// connection).
    writer_stopped: bool,
    /// The plain-TCP socket, for direct writes of urgent frames.
    direct_fd: Option<i32>,
    /// `buf` holds a deferred frame (`Wake::Deferred`) that found the
    /// writer idle and did not wake it: the next frame queued, a blocking
    /// wait in the library, `send_deferred` or the writer's tick will.
    wake_owed: bool,
    /// A deferred frame was queued since the writer last found nothing to
    /// write: it looks again after DEFERRED_TICK instead of parking.
    deferred_queued: bool,
    /// The writer found nothing to write and no deferred frames came: it
    /// waits without a tick, so a deferred frame must wake it.
    writer_parked: bool,
    /// Buffers the writer has taken to write: it counts the writer's
    /// progress, which is what makes room.
    batches_taken: u64,
    /// `batches_taken` when a `write_room_pause` last ran out: until the
    /// writer takes another buffer, frames are queued without a pause.
    pause_expired_at: Option<u64>,
}

/// What a queued frame does when it finds the writer idle (an empty
/// buffer).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Wake {
    /// Written straight from the caller's thread (someone waits for its
    /// answer: a request, a reply, a flush), saving a thread hop.
    Direct,
    /// Wakes the writer task, which batches what arrives meanwhile.
    Writer,
    /// Wakes nothing when the writer is ticking (deferred frames came
    /// within the last tick): a run of frames (asynchronous publishes,
    /// acks) goes out in one write within DEFERRED_TICK, or sooner with
    /// any other frame, a blocking wait in the library, `send_deferred` or
    /// DEFERRED_LIMIT queued bytes, instead of a wake-up and a write per
    /// frame or two. The first of a run wakes a parked writer.
    Deferred,
}

/// How long the reader waits at most for a lagging consumer
/// (`ClientInner::give_way`).
const GIVE_WAY_MAX: Duration = Duration::from_millis(20);

/// Deferred frames past this many queued bytes wake the writer anyway:
/// enough to batch, far below any sensible `max_pending_size`.
const DEFERRED_LIMIT: usize = 64 * 1024;

/// How long a deferred frame may wait for the writer's next look.
pub(crate) const DEFERRED_TICK: std::time::Duration = std::time::Duration::from_millis(1);

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

/// Request ids and subscription ids are counters: a multiplicative hash
/// spreads them well and costs far less than SipHash on the hot paths
/// (every reply, every message routed).
#[derive(Default)]
struct IdHasher(u64);

impl Hasher for IdHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 = (self.0.rotate_left(8) ^ u64::from(*b)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
    }
    fn write_u64(&mut self, id: u64) {
        self.0 = id.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
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

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum CloseState {
    Open,
    Closing,
    Closed,
}

pub(crate) struct ClientInner {
    pub(crate) opts: Options,
    /// The options' log callback and level (and NATSIO_LOG's).
    pub(crate) log: Logger,
    owner_id: usize,
    state: AtomicU8,
    /// Publishers and the writer lock it per frame: its own cache line,
    /// apart from what the reading thread touches per message.
    write: CacheLine<Mutex<WriteState>>,
    write_space: Condvar,
    pub(crate) writer_wake: tokio::sync::Notify,
    pub(crate) shutdown: tokio::sync::Notify,
    shutting_down: AtomicBool,
    pub(crate) write_error: tokio::sync::Notify,
    write_error_value: Mutex<Option<Error>>,
    subs: Mutex<HashMap<u64, Arc<SubShared>, BuildHasherDefault<IdHasher>>>,
    next_sid: AtomicU64,
    info: Mutex<(String, ServerInfo)>,
    pub(crate) max_payload: AtomicUsize,
    /// A binding's publish queue, made on its first request
    /// (`natsio_client_pub_ring`); drained under the write lock.
    pub_ring: std::sync::OnceLock<PubRing>,
    /// Counted by the reading thread per message (its own cache line).
    counters: CacheLine<Counters>,
    mux: Mutex<Mux>,
    /// Timeouts of asynchronous requests (one timer for all).
    pub(crate) deadlines: crate::deadlines::Deadlines,
    mux_sid: AtomicU64,
    events: Dispatcher,
    /// Runs token completion callbacks, apart from lifecycle and error
    /// callbacks, so that either may wait for the other. Started by the
    /// first callback.
    completions: std::sync::OnceLock<Dispatcher>,
    error_cb: Mutex<Option<ErrorCallback>>,
    close_state: Mutex<CloseState>,
    close_cv: Condvar,
    conn_done: Mutex<bool>,
    conn_done_cv: Condvar,
    /// The library's own tasks and threads that hold the client (see
    /// `TaskRef`); freeing the client waits for them.
    task_holds: Arc<TaskHolds>,
    pub(crate) connected_url: Mutex<String>,
    pub(crate) pool: Mutex<ServerPool>,
    event_cb: Mutex<Option<EventCallback>>,
    /// Asks the connection task to drop the connection and reconnect.
    pub(crate) force_reconnect: tokio::sync::Notify,
    lame_duck_seen: AtomicBool,
    ever_connected: AtomicBool,
    lifecycle: tokio::sync::watch::Sender<Lifecycle>,
    /// Flows fed by this client (consume, watch, request-many): closing
    /// the client ends them before `close` returns.
    flows: Mutex<Vec<std::sync::Weak<dyn crate::feed::Endable>>>,
}

/// Whether a frame just queued must wake the writer: it found the buffer
/// empty, or a deferred frame before it left the wake owed (now paid).
fn owes_wake(w: &mut WriteState, was_empty: bool) -> bool {
    std::mem::take(&mut w.wake_owed) || was_empty
}

fn closed_err(w: &WriteState) -> Option<Error> {
    if let Some(e) = &w.closed {
        return Some(e.clone());
    }
    if w.publishes_blocked {
        return Some(Error::new(
            ErrorKind::ConnectionClosed,
            "connection is draining",
        ));
    }
    None
}

/// How many `TaskRef`s are alive.
#[derive(Default)]
struct TaskHolds {
    count: Mutex<usize>,
    released: Condvar,
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

struct TaskHold(Arc<TaskHolds>);

impl Drop for TaskHold {
    fn drop(&mut self) {
        let mut n = lock(&self.0.count);
        *n -= 1;
        if *n == 0 {
            self.0.released.notify_all();
        }
    }
}

impl std::ops::Deref for TaskRef {
    type Target = Arc<ClientInner>;

    fn deref(&self) -> &Arc<ClientInner> {
        &self.inner
    }
}

const DEFAULT_RECONNECT_BUF: usize = 8 * 1024 * 1024;

pub(crate) fn new_nuid() -> String {
    nuid::next().to_string()
}

impl ClientInner {
    fn new(mut opts: Options, pool: ServerPool, owner_id: usize) -> ClientInner {
        // Held only here, so that close can release them.
        let error_cb = opts.error_callback.take();
        let event_cb = opts.event_callback.take();
        let log = Logger::new(
            opts.log_level,
            opts.log_callback.take(),
            opts.name.as_deref(),
        );
        ClientInner {
            log,
            owner_id,
            state: AtomicU8::new(ConnState::Connecting as u8),
            write: CacheLine(Mutex::new(WriteState::default())),
            write_space: Condvar::new(),
            writer_wake: tokio::sync::Notify::new(),
            shutdown: tokio::sync::Notify::new(),
            shutting_down: AtomicBool::new(false),
            write_error: tokio::sync::Notify::new(),
            write_error_value: Mutex::new(None),
            subs: Mutex::new(HashMap::default()),
            next_sid: AtomicU64::new(1),
            info: Mutex::new((String::new(), ServerInfo::default())),
            max_payload: AtomicUsize::new(1024 * 1024),
            pub_ring: std::sync::OnceLock::new(),
            counters: CacheLine(Counters::default()),
            mux: Mutex::new(Mux::default()),
            deadlines: crate::deadlines::Deadlines::default(),
            mux_sid: AtomicU64::new(0),
            events: Dispatcher::start("natsio-events", owner_id),
            completions: std::sync::OnceLock::new(),
            error_cb: Mutex::new(error_cb),
            close_state: Mutex::new(CloseState::Open),
            close_cv: Condvar::new(),
            conn_done: Mutex::new(false),
            conn_done_cv: Condvar::new(),
            task_holds: Arc::default(),
            connected_url: Mutex::new(String::new()),
            pool: Mutex::new(pool),
            event_cb: Mutex::new(event_cb),
            force_reconnect: tokio::sync::Notify::new(),
            lame_duck_seen: AtomicBool::new(false),
            ever_connected: AtomicBool::new(false),
            lifecycle: tokio::sync::watch::Sender::new(Lifecycle::default()),
            flows: Mutex::new(Vec::new()),
            opts,
        }
    }

    pub(crate) fn state(&self) -> ConnState {
        ConnState::from_u8(self.state.load(Ordering::SeqCst))
    }

    pub(crate) fn is_shutting_down(&self) -> bool {
        self.shutting_down.load(Ordering::SeqCst)
    }

    /// A reference for a library task or thread; see `TaskRef`.
    pub(crate) fn task_ref(self: &Arc<Self>) -> TaskRef {
        *lock(&self.task_holds.count) += 1;
        TaskRef {
            inner: Arc::clone(self),
            _hold: TaskHold(Arc::clone(&self.task_holds)),
        }
    }

    /// Waits, up to `timeout`, until no `TaskRef` is left.
    fn wait_for_task_refs(&self, timeout: Duration) {
        let holds = &self.task_holds;
        let n = lock(&holds.count);
        let _ = holds
            .released
            .wait_timeout_while(n, timeout, |n| *n > 0)
            .unwrap_or_else(|p| p.into_inner());
    }

    // ---- write path -------------------------------------------------------

    /// Locks the write state, first moving the binding's queued publishes
    /// (`PubRing`) into the buffer: they keep their place before whatever
    /// the caller adds, and the writer takes them with the rest.
    fn lock_write(&self) -> std::sync::MutexGuard<'_, WriteState> {
        let mut w = lock(&self.write.0);
        if let Some(ring) = self.pub_ring.get() {
            let max = self.max_payload.load(Ordering::Relaxed);
            let d = ring.drain(&mut w.buf, max);
            w.out_msgs += d.msgs;
            w.out_bytes += d.payload_bytes;
            if let Some(e) = d.refused {
                // Reported on the events thread: no user code runs here.
                self.report_error(e, None);
            }
        }
        w
    }

    /// The binding's publish queue, made on the first call.
    pub(crate) fn pub_ring(&self) -> &PubRing {
        self.pub_ring.get_or_init(|| {
            let ring = PubRing::new();
            ring.set_gate(self.pub_gate(&lock(&self.write.0)));
            ring
        })
    }

    /// Wakes the writer for publishes queued in the ring.
    pub(crate) fn kick_pub_ring(&self) {
        self.writer_wake.notify_one();
    }

    /// The largest payload the ring takes now: none unless the connection
    /// is open for publishes (closed, draining and reconnecting publishes
    /// go through the call, for its errors and its reconnect buffer).
    fn pub_gate(&self, w: &WriteState) -> u64 {
        if w.closed.is_some() || w.publishes_blocked || w.reconnecting {
            0
        } else {
            self.max_payload.load(Ordering::Relaxed) as u64
        }
    }

    /// Called with the write lock held, after a change of what `pub_gate`
    /// reads.
    fn refresh_pub_gate(&self, w: &WriteState) {
        if let Some(ring) = self.pub_ring.get() {
            ring.set_gate(self.pub_gate(w));
        }
    }

    /// Appends a frame to the write buffer, waiting up to `flush_timeout`
    /// for room when the buffer is over `max_pending_size` (unless
    /// `wait_for_write_room` is off: then up to `write_room_pause`, if
    /// set, after which the frame is queued over the bound).
    fn enqueue(
        &self,
        frame_len: usize,
        payload_len: usize,
        wake: Wake,
        encode: impl FnOnce(&mut Vec<u8>),
    ) -> Result<()> {
        let mut w = self.lock_write();
        if let Some(e) = closed_err(&w) {
            return Err(e);
        }
        if w.reconnecting {
            return self.buffer_while_reconnecting(w, frame_len, payload_len, encode);
        }
        if !w.buf.is_empty() && w.buf.len() + frame_len > self.opts.max_pending_size {
            // How long to wait for room, and whether to fail after it.
            let wait = if self.opts.wait_for_write_room {
                Some((self.opts.flush_timeout, true))
            } else {
                // A pause that ran out without the writer moving (a
                // stopped server) is not repeated for every frame.
                self.opts
                    .write_room_pause
                    .filter(|_| w.pause_expired_at != Some(w.batches_taken))
                    .map(|pause| (pause, false))
            };
            if let Some((limit, fail)) = wait.filter(|_| runtime::ensure_may_block().is_ok()) {
                let deadline = crate::clock::deadline_in(limit);
                while !w.buf.is_empty() && w.buf.len() + frame_len > self.opts.max_pending_size {
                    if let Some(e) = closed_err(&w) {
                        return Err(e);
                    }
                    if w.reconnecting {
                        return self.buffer_while_reconnecting(w, frame_len, payload_len, encode);
                    }
                    let now = Instant::now();
                    if now >= deadline {
                        if !fail {
                            // The pause is over: queue over the bound.
                            w.pause_expired_at = Some(w.batches_taken);
                            break;
                        }
                        return Err(Error::new(
                            ErrorKind::Timeout,
                            "write buffer stayed full for flush_timeout",
                        ));
                    }
                    if std::mem::take(&mut w.wake_owed) {
                        self.writer_wake.notify_one();
                    }
                    w.space_waiters += 1;
                    w = self
                        .write_space
                        .wait_timeout(w, deadline - now)
                        .unwrap_or_else(|p| p.into_inner())
                        .0;
                    w.space_waiters -= 1;
                }
                if let Some(e) = closed_err(&w) {
                    return Err(e);
                }
            }
        }
        let was_empty = w.buf.is_empty();
        encode(&mut w.buf);
        w.out_msgs += 1;
        w.out_bytes += payload_len as u64;
        self.kick_writer(w, was_empty, wake);
        Ok(())
    }

    /// After appending a frame: gets the buffer to the socket as `wake`
    /// says when the frame found the writer idle (or a deferred frame
    /// before it did).
    fn kick_writer(
        &self,
        mut w: std::sync::MutexGuard<'_, WriteState>,
        was_empty: bool,
        wake: Wake,
    ) {
        if wake == Wake::Deferred {
            w.deferred_queued = true;
            w.wake_owed |= was_empty;
            if !w.wake_owed || (!w.writer_parked && w.buf.len() < DEFERRED_LIMIT) {
                return;
            }
            w.wake_owed = false;
        } else if !owes_wake(&mut w, was_empty) {
            return;
        }
        if wake == Wake::Direct && self.send_direct(&mut w) {
            return;
        }
        drop(w);
        self.writer_wake.notify_one();
    }

    /// Wakes the writer for deferred frames (`Wake::Deferred`) that have
    /// not woken it. Cheap when there are none.
    pub(crate) fn send_deferred(&self) {
        let mut w = lock(&self.write.0);
        if std::mem::take(&mut w.wake_owed) {
            drop(w);
            self.writer_wake.notify_one();
        }
    }

    /// Sends the buffer straight to the socket when the writer is idle;
    /// true when all of it went. Partial, would block or failed: the rest
    /// stays for the writer (which reports a broken connection).
    fn send_direct(&self, w: &mut WriteState) -> bool {
        // While tracing, the writer writes everything: it traces each batch
        // just before writing it, so a frame is never traced after the
        // server's answer to it.
        if w.writer_busy || self.log.enabled(LogLevel::Trace) {
            return false;
        }
        let Some(fd) = w.direct_fd else {
            return false;
        };
        // SAFETY: `fd` is the live socket: the connection clears
        // `direct_fd` under this lock before its socket can close.
        let n = unsafe {
            libc::send(
                fd,
                w.buf.as_ptr().cast(),
                w.buf.len(),
                libc::MSG_DONTWAIT | libc::MSG_NOSIGNAL,
            )
        };
        if n <= 0 {
            return false;
        }
        let n = n as usize;
        if n == w.buf.len() {
            w.buf.clear();
            return true;
        }
        w.buf.drain(..n);
        false
    }

    /// Enables (with the plain-TCP socket's fd) or disables direct writes.
    pub(crate) fn set_direct_fd(&self, fd: Option<i32>) {
        let mut w = lock(&self.write.0);
        w.direct_fd = fd;
        w.writer_busy = false;
    }

    fn buffer_while_reconnecting(
        &self,
        mut w: std::sync::MutexGuard<'_, WriteState>,
        frame_len: usize,
        payload_len: usize,
        encode: impl FnOnce(&mut Vec<u8>),
    ) -> Result<()> {
        let limit = match self.opts.reconnect_buf_size {
            n if n < 0 => {
                return Err(Error::new(
                    ErrorKind::ReconnectBufExceeded,
                    "disconnected, and reconnect buffering is disabled",
                ))
            }
            0 => DEFAULT_RECONNECT_BUF,
            n => n as usize,
        };
        if w.buf.len() + frame_len > limit {
            return Err(Error::new(
                ErrorKind::ReconnectBufExceeded,
                format!("disconnected, and the reconnect buffer of {limit} bytes is full"),
            ));
        }
        encode(&mut w.buf);
        w.out_msgs += 1;
        w.out_bytes += payload_len as u64;
        Ok(())
    }

    /// Control frames (SUB, UNSUB, PONG) bypass the size limit and the drain
    /// block; they are dropped once the connection is closed, and while
    /// reconnecting (subscriptions are re-sent from the registry).
    fn enqueue_control(&self, encode: impl FnOnce(&mut Vec<u8>)) {
        let mut w = self.lock_write();
        if w.closed.is_some() || w.reconnecting {
            return;
        }
        let was_empty = w.buf.is_empty();
        encode(&mut w.buf);
        let wake = owes_wake(&mut w, was_empty);
        drop(w);
        if wake {
            self.writer_wake.notify_one();
        }
    }

    /// The writer takes everything buffered so far. With nothing to take,
    /// true: deferred frames came since it last had nothing, so it must
    /// look again within DEFERRED_TICK (false: it may wait for a wake).
    /// None once `stop_writer` was called: the writer ends.
    pub(crate) fn take_pending_writes(&self, batch: &mut Vec<u8>) -> Option<bool> {
        let mut w = self.lock_write();
        if w.writer_stopped {
            w.writer_busy = false;
            return None;
        }
        std::mem::swap(&mut w.buf, batch);
        w.writer_busy = !batch.is_empty();
        w.batches_taken += u64::from(w.writer_busy);
        w.wake_owed = false;
        let tick = batch.is_empty() && std::mem::take(&mut w.deferred_queued);
        w.writer_parked = batch.is_empty() && !tick;
        if w.space_waiters > 0 {
            self.write_space.notify_all();
        }
        Some(tick)
    }

    /// The writer of the connection being let go takes nothing more.
    pub(crate) fn stop_writer(&self) {
        lock(&self.write.0).writer_stopped = true;
        self.writer_wake.notify_one();
    }

    /// A new connection's writer takes the buffer again.
    pub(crate) fn start_writer(&self) {
        lock(&self.write.0).writer_stopped = false;
    }

    pub(crate) fn writer_failed(&self, e: Error) {
        *lock(&self.write_error_value) = Some(e);
        self.write_error.notify_one();
    }

    /// The writer's error, if this connection's writer failed (a wake-up
    /// left over from an earlier connection finds none).
    pub(crate) fn take_write_error(&self) -> Option<Error> {
        lock(&self.write_error_value).take()
    }

    pub(crate) fn publish(
        &self,
        subject: &str,
        reply: Option<&str>,
        headers: Option<&Headers>,
        payload: &[u8],
    ) -> Result<()> {
        self.publish_frame(subject, reply, headers, payload, Wake::Writer)
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
        if let Some(r) = reply {
            subject::validate_publish(r)?;
        }
        self.publish_frame_checked_reply(subject, reply, headers, payload, wake)
    }

    /// A response: urgent, so written at once when the writer is idle
    /// (someone waits for it).
    pub(crate) fn respond_to(
        &self,
        reply_subject: &str,
        headers: Option<&Headers>,
        payload: &[u8],
    ) -> Result<()> {
        self.publish_frame(reply_subject, None, headers, payload, Wake::Direct)
    }

    /// `publish_frame` with a reply subject known to be valid (a request's
    /// own inbox, made from the validated inbox prefix).
    fn publish_frame_checked_reply(
        &self,
        subject: &str,
        reply: Option<&str>,
        headers: Option<&Headers>,
        payload: &[u8],
        wake: Wake,
    ) -> Result<()> {
        subject::validate_publish(subject)?;
        self.publish_frame_checked(subject, reply, headers, payload, wake)
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
        let frame = proto::PubFrame::new(subject, reply, headers, payload);
        let max = self.max_payload.load(Ordering::Relaxed);
        if frame.hdr_len + payload.len() > max {
            return Err(Error::new(
                ErrorKind::MaxPayloadExceeded,
                format!(
                    "message of {} bytes exceeds the server's max_payload of {max}",
                    frame.hdr_len + payload.len()
                ),
            ));
        }
        self.enqueue(frame.len(), payload.len(), wake, |buf| frame.write(buf))
    }

    pub(crate) fn send_unsub(&self, sid: u64, max: Option<u64>) {
        self.enqueue_control(|buf| proto::write_unsub(buf, sid, max));
    }

    /// Queues a PING whose PONG completes the returned completion.
    pub(crate) fn flush_async(&self) -> Arc<Completion> {
        let c = Completion::new();
        let mut w = self.lock_write();
        if let Some(e) = &w.closed {
            let e = e.clone();
            drop(w);
            c.complete(Err(e));
            return c;
        }
        w.pongs.push_back(Some(Arc::clone(&c)));
        // While reconnecting the PING is sent after the reconnect.
        if !w.reconnecting {
            let was_empty = w.buf.is_empty();
            w.buf.extend_from_slice(proto::PING);
            self.kick_writer(w, was_empty, Wake::Direct);
        }
        c
    }

    pub(crate) fn flush(&self, timeout: Duration) -> Result<()> {
        runtime::ensure_may_block()?;
        match self.flush_async().wait(Some(timeout)) {
            Some(r) => r.map(|_| ()),
            None => Err(Error::timeout("flush")),
        }
    }

    /// Keepalive tick: fail as stale once too many PINGs went unanswered.
    pub(crate) fn send_keepalive(&self) -> Result<()> {
        let mut w = self.lock_write();
        if w.pings_outstanding >= self.opts.max_outstanding_pings {
            return Err(Error::new(
                ErrorKind::StaleConnection,
                "stale connection: PINGs went unanswered",
            ));
        }
        w.pings_outstanding += 1;
        let was_empty = w.buf.is_empty();
        w.buf.extend_from_slice(proto::PING);
        w.pongs.push_back(None);
        let wake = owes_wake(&mut w, was_empty);
        drop(w);
        if wake {
            self.writer_wake.notify_one();
        }
        Ok(())
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
                self.enqueue_control(|b| b.extend_from_slice(proto::PONG));
                self.counters.server_pings.fetch_add(1, Ordering::Relaxed);
            }
            ServerOp::Pong => {
                let waiter = {
                    let mut w = lock(&self.write.0);
                    w.pings_outstanding = 0;
                    w.pongs.pop_front().flatten()
                };
                if let Some(c) = waiter {
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
                    if lame_duck && !self.lame_duck_seen.swap(true, Ordering::SeqCst) {
                        // Reported, and nothing else here: the connection
                        // keeps reading, delivering and publishing. The read
                        // loop connects to another server meanwhile and lets
                        // this one go only after reading it to its end.
                        let url = lock(&self.connected_url).clone();
                        self.emit(EventKind::LameDuck, Some(url), None, Vec::new());
                    }
                }
            }
        }
        Ok(())
    }

    /// The server of the current connection announced lame-duck mode.
    pub(crate) fn in_lame_duck(&self) -> bool {
        self.lame_duck_seen.load(Ordering::SeqCst)
    }

    /// Delivers a lifecycle event on the events dispatcher thread.
    pub(crate) fn emit(
        &self,
        kind: EventKind,
        url: Option<String>,
        error: Option<Error>,
        servers: Vec<String>,
    ) {
        let ev = Event {
            kind,
            url,
            error,
            servers,
        };
        let level = event_log_level(kind);
        if self.log.enabled(level) {
            let (log, ev) = (self.log.clone(), ev.clone());
            self.events
                .post(Box::new(move || log_event(&log, level, &ev)));
        }
        let Some(cb) = lock(&self.event_cb).clone() else {
            return;
        };
        self.events.post(Box::new(move || cb(&ev)));
    }

    /// Adds INFO's connect_urls to the pool; reports new ones when `announce`.
    fn discover(&self, info: &ServerInfo, announce: bool) {
        if self.opts.ignore_discovered_servers || info.connect_urls.is_empty() {
            return;
        }
        // Servers tell a client the URLs of its own kind of port (a
        // websocket client gets the cluster's websocket URLs): they are
        // reached as the server that told of them.
        let via = ServerAddr::parse(&lock(&self.connected_url)).ok();
        let (tls, websocket) = via.map_or((false, false), |a| (a.tls, a.websocket));
        let added = lock(&self.pool).add_discovered(&info.connect_urls, tls, websocket);
        if announce && !added.is_empty() {
            self.emit(EventKind::ServersDiscovered, None, None, added);
        }
    }

    /// Records a freshly established connection.
    pub(crate) fn on_established(&self, url: &str, info_json: String, info: ServerInfo) {
        *lock(&self.connected_url) = url.to_string();
        lock(&self.pool).record_success(url);
        self.lame_duck_seen.store(false, Ordering::SeqCst);
        self.discover(&info, self.ever_connected.load(Ordering::SeqCst));
        self.set_info(info_json, info);
    }

    /// The connection was lost: keep buffered publishes (only those),
    /// forget keepalives, and start buffering for the next connection.
    pub(crate) fn begin_reconnect(&self, cause: &Error) {
        {
            let mut w = self.lock_write();
            if w.closed.is_some() {
                return;
            }
            w.buf = proto::retain_publishes(&w.buf);
            w.pongs.retain(Option::is_some);
            w.pings_outstanding = 0;
            w.reconnecting = true;
            self.refresh_pub_gate(&w);
        }
        self.write_space.notify_all();
        let _ = self.state.compare_exchange(
            ConnState::Connected as u8,
            ConnState::Reconnecting as u8,
            Ordering::SeqCst,
            Ordering::SeqCst,
        );
        let url = lock(&self.connected_url).clone();
        lock(&self.pool).rotate_to_back(&url);
        self.emit(
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
        let mut subs: Vec<_> = lock(&self.subs).values().cloned().collect();
        subs.sort_by_key(|s| s.sid);
        let mux = {
            let m = lock(&self.mux);
            (m.sid != 0).then(|| (m.sid, format!("{}*", m.prefix)))
        };
        {
            let mut w = self.lock_write();
            if w.closed.is_some() {
                return;
            }
            let mut frames = Vec::with_capacity(w.buf.len() + 64 * subs.len());
            if let Some((sid, subject)) = &mux {
                proto::write_sub(&mut frames, subject, None, *sid);
            }
            for sub in &subs {
                if let Some(remaining) = sub.resend_state() {
                    proto::write_sub(
                        &mut frames,
                        &sub.subject,
                        sub.queue_group.as_deref(),
                        sub.sid,
                    );
                    if remaining.is_some() {
                        proto::write_unsub(&mut frames, sub.sid, remaining);
                    }
                }
            }
            frames.extend_from_slice(&w.buf);
            for _ in w.pongs.iter().filter(|p| p.is_some()) {
                frames.extend_from_slice(proto::PING);
            }
            w.buf = frames;
            w.reconnecting = false;
            self.refresh_pub_gate(&w);
        }
        let _ = self.state.compare_exchange(
            ConnState::Reconnecting as u8,
            ConnState::Connected as u8,
            Ordering::SeqCst,
            Ordering::SeqCst,
        );
        if self.ever_connected.swap(true, Ordering::SeqCst) {
            self.counters.reconnects.fetch_add(1, Ordering::Relaxed);
            self.lifecycle.send_modify(|l| l.reconnects += 1);
            self.emit(
                EventKind::Reconnected,
                Some(url.to_string()),
                None,
                Vec::new(),
            );
        } else {
            self.emit(
                EventKind::Connected,
                Some(url.to_string()),
                None,
                Vec::new(),
            );
        }
    }

    /// BLOCK-policy pauses hold across reconnects: wait before reading.
    pub(crate) async fn reassert_block_pauses(&self) {
        let blocked: Vec<_> = lock(&self.subs)
            .values()
            .filter(|s| s.policy == PendingPolicy::Block)
            .cloned()
            .collect();
        for s in blocked {
            if s.must_wait_for_room() {
                self.wait_for_room(&s).await;
            }
        }
    }

    fn set_info(&self, json: String, info: ServerInfo) {
        if info.max_payload > 0 {
            self.max_payload
                .store(info.max_payload as usize, Ordering::Relaxed);
            if self.pub_ring.get().is_some() {
                self.refresh_pub_gate(&lock(&self.write.0));
            }
        }
        *lock(&self.info) = (json, info);
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
        if sid == self.mux_sid.load(Ordering::Relaxed) {
            self.route_reply(m);
            return;
        }
        let Some(sub) = lock(&self.subs).get(&sid).cloned() else {
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
            Pushed::Blocked => self.wait_for_room(&sub).await,
            // Its reader lags (a handler slower than this thread reads):
            // let it catch up before the backlog grows further.
            Pushed::Backlogged => self.give_way(&sub).await,
            _ => {}
        }
        if reached_max {
            sub.finish();
        }
    }

    /// A subscription's consumer lags (its backlog is past the bound of
    /// `Pushed::Backlogged`): for a push-mode handler, stop reading until
    /// it has taken half of what is queued, for GIVE_WAY_MAX at most, so
    /// that a handler that keeps up on average holds a bounded backlog
    /// (issue 45: a Go handler's sat at 32 MiB). One that took less in
    /// that time lags for good: it is not waited for again until its
    /// backlog falls under the bound, so it cannot pace the connection's
    /// other subscriptions. Otherwise this thread only gives up the CPU
    /// (a handler slower than this thread reads, on a machine with fewer
    /// cores than busy threads), and the pending limits apply as before.
    async fn give_way(&self, sub: &SubShared) {
        let feed = &sub.feed;
        let (queued, may_wait) = feed.give_way_state();
        if !may_wait {
            std::thread::yield_now();
            return;
        }
        let target = queued / 2;
        let deadline = tokio::time::Instant::now() + GIVE_WAY_MAX;
        loop {
            let notified = feed.space.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            feed.want_room(Some(target));
            if feed.give_way_state().0 <= target || self.is_shutting_down() {
                break;
            }
            if tokio::time::timeout_at(deadline, notified).await.is_err() {
                feed.give_way_ran_out();
                break;
            }
        }
        feed.want_room(None);
    }

    /// BLOCK policy: stop reading until the consumer makes room.
    async fn wait_for_room(&self, sub: &SubShared) {
        let feed = &sub.feed;
        loop {
            let notified = feed.space.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            feed.want_room(Some(feed.limits().items));
            if !sub.must_wait_for_room() || self.is_shutting_down() {
                break;
            }
            notified.await;
        }
        feed.want_room(None);
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
            self.report_error(e, Some((sub.sid, sub.subject.clone())));
        }
    }

    /// Hands an error to the application's error callback, on the events
    /// dispatcher thread.
    pub(crate) fn report_error(&self, error: Error, sub: Option<(u64, String)>) {
        self.counters.errors.fetch_add(1, Ordering::Relaxed);
        let level = if error.kind() == ErrorKind::SlowConsumer {
            LogLevel::Warn
        } else {
            LogLevel::Error
        };
        if self.log.enabled(level) {
            // On the events thread: the reporter may hold locks a log
            // callback that publishes would need.
            let text = match &sub {
                Some((sid, subject)) => format!("{error} (subject {subject}, sid {sid})"),
                None => error.to_string(),
            };
            let log = self.log.clone();
            self.events
                .post(Box::new(move || log.write(level, format_args!("{text}"))));
        }
        let Some(cb) = lock(&self.error_cb).clone() else {
            return;
        };
        let (sid, subject) = match sub {
            Some((sid, s)) => (Some(sid), Some(s)),
            None => (None, None),
        };
        let ev = ErrorEvent {
            error,
            sid,
            subject,
        };
        self.events.post(Box::new(move || cb(&ev)));
    }

    /// Runs a token's completion callback on this client's completions
    /// thread.
    pub(crate) fn post_completion(&self, job: Box<dyn FnOnce() + Send>) {
        self.completions
            .get_or_init(|| Dispatcher::start("natsio-completions", self.owner_id))
            .post(job);
    }

    // ---- subscriptions ----------------------------------------------------

    pub(crate) fn subscribe(
        self: &Arc<Self>,
        subject: &str,
        queue: Option<&str>,
        o: SubOptions,
    ) -> Result<Subscription> {
        subject::validate_subscribe(subject)?;
        if let Some(q) = queue {
            subject::validate_queue(q)?;
        }
        if self.state() == ConnState::Closed {
            return Err(Error::closed());
        }
        if self.state() == ConnState::Draining {
            return Err(Error::new(
                ErrorKind::ConnectionClosed,
                "connection is draining",
            ));
        }
        let sid = self.next_sid.fetch_add(1, Ordering::Relaxed);
        let shared = Arc::new(SubShared::new(
            sid,
            subject.to_string(),
            queue.map(str::to_string),
            o.pending_msgs_limit.unwrap_or(self.opts.pending_msgs_limit),
            o.pending_bytes_limit
                .unwrap_or(self.opts.pending_bytes_limit),
            o.policy,
        ));
        lock(&self.subs).insert(sid, Arc::clone(&shared));
        self.enqueue_control(|b| proto::write_sub(b, subject, queue, sid));
        if self.state() == ConnState::Closed {
            lock(&self.subs).remove(&sid);
            return Err(Error::closed());
        }
        Ok(Subscription {
            shared,
            client: Arc::clone(self),
        })
    }

    /// A subscription the library makes for itself and does without (see
    /// `SubShared::optional`).
    pub(crate) fn subscribe_optional(self: &Arc<Self>, subject: &str) -> Result<Subscription> {
        let sub = self.subscribe(subject, None, SubOptions::default())?;
        sub.shared.optional.store(true, Ordering::Relaxed);
        Ok(sub)
    }

    /// A permissions violation for a subject only optional subscriptions
    /// take ends them, unreported: true when `text` was one.
    fn end_optional_subs(&self, e: &Error, text: &str) -> bool {
        if e.kind() != ErrorKind::PermissionsViolation {
            return false;
        }
        let Some((subject, _)) = refused_subscription(text) else {
            return false;
        };
        let subs: Vec<Arc<SubShared>> = lock(&self.subs)
            .values()
            .filter(|s| s.subject == subject)
            .cloned()
            .collect();
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
        let Some((subject, queue)) = refused_subscription(text) else {
            return;
        };
        let ended: Vec<_> = lock(&self.subs)
            .values()
            .filter(|s| s.subject == subject && s.queue_group.as_deref() == queue)
            .cloned()
            .collect();
        for s in ended {
            self.remove_sub(s.sid, false);
            s.fail(error.clone());
        }
    }

    pub(crate) fn remove_sub(&self, sid: u64, send_unsub: bool) {
        if lock(&self.subs).remove(&sid).is_some() && send_unsub {
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

    // ---- requests ---------------------------------------------------------

    fn register_request(
        &self,
        done: Arc<Completion>,
        on_reply: OnReply,
    ) -> Result<(u64, ReplySubject, bool)> {
        let mut mux = lock(&self.mux);
        if mux.sid == 0 {
            mux.prefix = format!("{}.{}.", self.opts.inbox_prefix, new_nuid());
            let sid = self.next_sid.fetch_add(1, Ordering::Relaxed);
            let wildcard = format!("{}*", mux.prefix);
            self.enqueue_control(|b| proto::write_sub(b, &wildcard, None, sid));
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

    pub(crate) fn unregister_request(&self, id: u64) {
        lock(&self.mux).waiters.remove(&id);
    }

    /// Fails request `id` with `e` (through its reply map) if it still waits.
    pub(crate) fn expire_request(&self, id: u64, e: Error) {
        let waiter = lock(&self.mux).waiters.remove(&id);
        if let Some(w) = waiter {
            w.finish(Err(e));
        }
    }

    fn route_reply(&self, m: Message) {
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

    fn start_request(
        &self,
        subject: &str,
        headers: Option<&Headers>,
        payload: &[u8],
    ) -> Result<(u64, Arc<Completion>)> {
        self.start_request_with(subject, headers, payload, Urgency::Now, None)
    }

    /// Registers a request and sends it, written as `urgency` says (at
    /// once when the writer is idle, or coalesced like a publish).
    /// No timer is armed: the caller expires it (`expire_request`).
    pub(crate) fn start_request_with(
        &self,
        subject: &str,
        headers: Option<&Headers>,
        payload: &[u8],
        urgency: Urgency,
        map: Option<ReplyMap>,
    ) -> Result<(u64, Arc<Completion>)> {
        let c = Completion::new();
        let on_reply = map.map_or(OnReply::Msg, OnReply::Map);
        let id = self.start_request_into(subject, headers, payload, urgency, &c, on_reply)?;
        Ok((id, c))
    }

    /// Like `start_request_with`, for a given completion and reply handling
    /// (a retry re-sends a request for the same completion).
    pub(crate) fn start_request_into(
        &self,
        subject: &str,
        headers: Option<&Headers>,
        payload: &[u8],
        urgency: Urgency,
        done: &Arc<Completion>,
        on_reply: OnReply,
    ) -> Result<u64> {
        // publish_frame validates the subject; a failure unregisters.
        let (id, reply, alone) = self.register_request(Arc::clone(done), on_reply)?;
        let wake = match urgency {
            Urgency::Now => Wake::Direct,
            Urgency::IfAlone | Urgency::Deferred if alone => Wake::Direct,
            Urgency::IfAlone | Urgency::Coalesce => Wake::Writer,
            Urgency::Deferred => Wake::Deferred,
        };
        let sent =
            self.publish_frame_checked_reply(subject, Some(reply.as_str()), headers, payload, wake);
        if let Err(e) = sent {
            self.unregister_request(id);
            return Err(e);
        }
        Ok(id)
    }

    pub(crate) fn request(
        &self,
        subject: &str,
        headers: Option<&Headers>,
        payload: &[u8],
        timeout: Duration,
    ) -> Result<Message> {
        runtime::ensure_may_block()?;
        let (id, c) = self.start_request(subject, headers, payload)?;
        let r = match c.wait(Some(timeout)) {
            Some(r) => r,
            None => {
                self.unregister_request(id);
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

    /// Starts a request whose reply (or failure) completes the returned
    /// completion, timed out by the client's deadline queue; cancelling
    /// the completion withdraws the request.
    pub(crate) fn request_with_deadline(
        self: &Arc<Self>,
        subject: &str,
        headers: Option<&Headers>,
        payload: &[u8],
        timeout: Duration,
        urgency: Urgency,
        map: Option<ReplyMap>,
    ) -> Result<(u64, Arc<Completion>)> {
        let (id, c) = self.start_request_with(subject, headers, payload, urgency, map)?;
        let weak = Arc::downgrade(self);
        c.add_cancel_hook(move || {
            if let Some(i) = weak.upgrade() {
                i.unregister_request(id);
            }
        });
        crate::deadlines::Deadlines::arm(self, crate::clock::deadline_in(timeout), id, &c);
        Ok((id, c))
    }

    /// A request as a future of its reply (`NoResponders` when nobody
    /// listens, `Timeout` after `timeout`). Sent when this is called: at
    /// once when a caller blocks on it or the application just started it
    /// with no other request in flight, else coalesced with other writes;
    /// dropping the future before the reply withdraws it.
    pub(crate) fn request_fut(
        self: &Arc<Self>,
        subject: &str,
        headers: Option<&Headers>,
        payload: &[u8],
        timeout: Duration,
    ) -> Result<ReplyFuture> {
        let urgency = crate::op::urgency();
        let (_, c) =
            self.request_with_deadline(subject, headers, payload, timeout, urgency, None)?;
        Ok(ReplyFuture {
            fut: c.wait_async(),
        })
    }

    /// Lifecycle changes (reconnects, close), for flows that must
    /// re-establish themselves.
    pub(crate) fn lifecycle(&self) -> tokio::sync::watch::Receiver<Lifecycle> {
        self.lifecycle.subscribe()
    }

    // ---- lifecycle --------------------------------------------------------

    /// Called by the connection task when it ends.
    pub(crate) fn connection_ended(self: &Arc<Self>, lost: Option<Error>) {
        *lock(&self.conn_done) = true;
        self.conn_done_cv.notify_all();
        if let Some(e) = lost {
            if self.state() != ConnState::Closed {
                // Closing joins user threads: never do that on the runtime.
                let me = self.task_ref();
                let _ = std::thread::Builder::new()
                    .name("natsio-close".into())
                    .spawn(move || me.close_with(Some(e)));
            }
        }
    }

    pub(crate) fn close_with(&self, reason: Option<Error>) {
        {
            let mut cs = lock(&self.close_state);
            match *cs {
                CloseState::Closed => return,
                CloseState::Closing => {
                    if dispatch::is_dispatcher_of(self.owner_id) {
                        return;
                    }
                    while *cs != CloseState::Closed {
                        cs = self.close_cv.wait(cs).unwrap_or_else(|p| p.into_inner());
                    }
                    return;
                }
                CloseState::Open => *cs = CloseState::Closing,
            }
        }
        self.state.store(ConnState::Closed as u8, Ordering::SeqCst);
        self.lifecycle.send_modify(|l| l.closed = true);
        let closed = reason.clone().map_or_else(Error::closed, |e| {
            Error::new(
                ErrorKind::ConnectionClosed,
                format!("connection closed: {}", e.detail()),
            )
        });
        // Stop accepting writes; fail pending flushes.
        let pongs = {
            let mut w = self.lock_write();
            w.closed = Some(closed.clone());
            self.refresh_pub_gate(&w);
            std::mem::take(&mut w.pongs)
        };
        self.write_space.notify_all();
        for c in pongs.into_iter().flatten() {
            c.complete(Err(closed.clone()));
        }
        // Stop the connection task; its writer sends what was accepted.
        self.shutting_down.store(true, Ordering::SeqCst);
        self.shutdown.notify_one();
        self.writer_wake.notify_one();
        // A reader paused by the BLOCK policy must notice the shutdown.
        for s in lock(&self.subs).values() {
            s.feed.space.notify_waiters();
        }
        let done = lock(&self.conn_done);
        let _ = self
            .conn_done_cv
            .wait_timeout_while(done, Duration::from_secs(5), |done| !*done)
            .unwrap_or_else(|p| p.into_inner());
        // Fail pending requests.
        let waiters: Vec<_> = lock(&self.mux).waiters.drain().map(|(_, w)| w).collect();
        for w in waiters {
            w.finish(Err(closed.clone()));
        }
        // Close every subscription and wait for their handlers.
        let subs: Vec<_> = lock(&self.subs).drain().map(|(_, s)| s).collect();
        for s in &subs {
            s.fail(closed.clone());
        }
        for s in &subs {
            s.feed.join_dispatcher();
        }
        let flows: Vec<_> = std::mem::take(&mut *lock(&self.flows))
            .into_iter()
            .filter_map(|f| f.upgrade())
            .collect();
        for f in flows {
            f.end_and_join(closed.clone());
        }
        if let Some(e) = reason {
            self.report_error(e, None);
        }
        self.emit(EventKind::Closed, None, None, Vec::new());
        self.events.stop();
        if let Some(c) = self.completions.get() {
            c.stop();
        }
        drop(lock(&self.event_cb).take());
        // Release the application's callback state here, not on a runtime thread.
        drop(lock(&self.error_cb).take());
        *lock(&self.close_state) = CloseState::Closed;
        self.close_cv.notify_all();
    }
}

/// The subject and queue group a server's "Permissions Violation for
/// Subscription to "<subject>" [using queue "<queue>"]" error names (the
/// text as the server sends it, quoted or not, in any case).
fn refused_subscription(text: &str) -> Option<(&str, Option<&str>)> {
    const PREFIX: &str = "permissions violation for subscription to \"";
    let text = text.trim_matches(|c| c == '\'' || c == ' ');
    if !text.get(..PREFIX.len())?.eq_ignore_ascii_case(PREFIX) {
        return None;
    }
    let refused = &text[PREFIX.len()..];
    Some(match refused.split_once("\" using queue \"") {
        Some((subject, queue)) => (subject, Some(queue.trim_end_matches('"'))),
        None => (refused.trim_end_matches('"'), None),
    })
}

/// The reply of a request started by `ClientInner::request_fut`.
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

/// What flows watch to re-establish themselves: the number of reconnects
/// so far, and whether the client has closed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Lifecycle {
    pub reconnects: u64,
    pub closed: bool,
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
}

impl<T: FeedItem> Flow<T> {
    pub(crate) fn new(feed: Arc<Feed<T>>, client: &Arc<ClientInner>, name: &'static str) -> Self {
        {
            let mut flows = lock(&client.flows);
            flows.retain(|f| f.strong_count() > 0);
            let endable: Arc<dyn crate::feed::Endable> = feed.clone();
            flows.push(Arc::downgrade(&endable));
        }
        if client.state() == ConnState::Closed {
            // Closed meanwhile: the close may have missed this flow.
            feed.fail(Error::closed());
        }
        Flow {
            feed,
            owner: Arc::as_ptr(client) as usize,
            name,
        }
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
        match Op::new(establish(Arc::clone(&inner))).wait_on_runtime() {
            Ok(()) => Ok(Client { inner }),
            Err(e) => {
                abandon(inner);
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
                match establish(Arc::clone(&inner)).await {
                    Ok(()) => Ok(Client { inner }),
                    Err(e) => {
                        // Cleaning up joins threads: not on the runtime.
                        let _ = std::thread::Builder::new()
                            .name("natsio-close".into())
                            .spawn(move || abandon(inner));
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
        respond(&self.inner, msg, headers, payload)
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
        drain(
            &self.inner,
            timeout.unwrap_or(self.inner.opts.drain_timeout),
        )
    }

    /// Like `drain`, on a library thread; the completion reports the result.
    pub fn drain_async(&self, timeout: Option<Duration>) -> Arc<Completion> {
        let inner = Arc::clone(&self.inner);
        let timeout = timeout.unwrap_or(inner.opts.drain_timeout);
        // The state changes now, so that a second drain fails in order.
        if let Err(e) = begin_drain(&inner) {
            return Completion::completed(Err(e));
        }
        on_library_thread("natsio-drain", move || {
            drain_begun(&inner, timeout).map(|_| Outcome::Done)
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
        on_library_thread("natsio-close", move || {
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
        lock(&self.inner.pool).urls()
    }

    pub fn max_payload(&self) -> usize {
        self.inner.max_payload.load(Ordering::Relaxed)
    }

    pub fn server_info_json(&self) -> String {
        lock(&self.inner.info).0.clone()
    }

    pub fn server_info(&self) -> ServerInfo {
        lock(&self.inner.info).1.clone()
    }

    pub fn connected_url(&self) -> Option<String> {
        (self.status() != ConnState::Closed).then(|| lock(&self.inner.connected_url).clone())
    }

    pub fn stats(&self) -> ClientStats {
        let c = &self.inner.counters;
        let (out_msgs, out_bytes) = {
            let w = self.inner.lock_write();
            (w.out_msgs, w.out_bytes)
        };
        ClientStats {
            in_msgs: c.in_msgs.load(Ordering::Relaxed),
            out_msgs,
            in_bytes: c.in_bytes.load(Ordering::Relaxed),
            out_bytes,
            reconnects: c.reconnects.load(Ordering::Relaxed),
            errors: c.errors.load(Ordering::Relaxed),
            server_pings: c.server_pings.load(Ordering::Relaxed),
        }
    }

    pub fn new_inbox(&self) -> String {
        format!("{}.{}", self.inner.opts.inbox_prefix, new_nuid())
    }

    pub fn options(&self) -> &Options {
        &self.inner.opts
    }

    /// A second handle to the same connection, for the C layer's messages.
    pub(crate) fn inner_for_ffi(&self) -> &Arc<ClientInner> {
        &self.inner
    }
}

impl Drop for Client {
    fn drop(&mut self) {
        if runtime::on_runtime_thread() {
            // Closing waits for the connection task and joins callback
            // threads: never on the runtime (a client nobody took, e.g. from
            // a connect token freed before it completed, ends here).
            let inner = Arc::clone(&self.inner);
            let _ = std::thread::Builder::new()
                .name("natsio-close".into())
                .spawn(move || inner.close_with(None));
        } else {
            self.inner.close_with(None);
            // Not when closing returned early (freed from one of this
            // client's callbacks): the tasks may wait for that callback.
            if *lock(&self.inner.close_state) == CloseState::Closed {
                self.inner.wait_for_task_refs(Duration::from_secs(5));
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

/// A lifecycle event's log level: warn for a lost connection, else info.
fn event_log_level(kind: EventKind) -> LogLevel {
    if kind == EventKind::Disconnected {
        LogLevel::Warn
    } else {
        LogLevel::Info
    }
}

/// A lifecycle event as a log line (the caller checked `level` is enabled).
fn log_event(log: &Logger, level: LogLevel, ev: &Event) {
    let url = ev.url.as_deref().unwrap_or("");
    let why = ev
        .error
        .as_ref()
        .map(|e| format!(": {e}"))
        .unwrap_or_default();
    match ev.kind {
        EventKind::Connected => log.write(level, format_args!("connected to {url}")),
        EventKind::Disconnected => {
            log.write(level, format_args!("disconnected{why}; reconnecting"))
        }
        EventKind::Reconnected => log.write(level, format_args!("reconnected to {url}")),
        EventKind::LameDuck => log.write(level, format_args!("{url} entered lame duck mode")),
        EventKind::ServersDiscovered => log.write(
            level,
            format_args!("servers discovered: {}", ev.servers.join(", ")),
        ),
        EventKind::Closed => log.write(level, format_args!("closed{why}")),
    }
}

/// Connects `inner` to the first server of its pool that accepts, and
/// starts its connection task (or, with retry_on_failed_connect, keeps
/// trying in the background).
async fn establish(inner: Arc<ClientInner>) -> Result<()> {
    let mut last = Error::new(ErrorKind::NoServers, "no servers available");
    let entries = lock(&inner.pool).entries();
    for entry in entries {
        let attempt = connection::handshake(&inner.opts, &inner.log, &entry.url, &entry.addr);
        let r = tokio::time::timeout(inner.opts.connect_timeout, attempt)
            .await
            .unwrap_or_else(|_| {
                Err(Error::new(
                    ErrorKind::Timeout,
                    format!("connect to {} timed out", entry.url),
                ))
            });
        match r {
            Ok(est) => {
                inner.on_established(&entry.url, est.info_json.clone(), est.info.clone());
                inner.ever_connected.store(true, Ordering::SeqCst);
                inner
                    .state
                    .store(ConnState::Connected as u8, Ordering::SeqCst);
                inner.emit(
                    EventKind::Connected,
                    Some(entry.url.clone()),
                    None,
                    Vec::new(),
                );
                runtime::handle().spawn(connection::run(inner.task_ref(), Some(est)));
                return Ok(());
            }
            Err(e) => {
                log!(inner.log, Warn, "connect to {} failed: {e}", entry.url);
                lock(&inner.pool).record_attempt(&entry.url);
                last = e;
            }
        }
    }
    if inner.opts.retry_on_failed_connect && inner.opts.allow_reconnect {
        // Keep trying in the background; publishes are buffered meanwhile.
        {
            let mut w = inner.lock_write();
            w.reconnecting = true;
            inner.refresh_pub_gate(&w);
        }
        inner
            .state
            .store(ConnState::Reconnecting as u8, Ordering::SeqCst);
        runtime::handle().spawn(connection::run(inner.task_ref(), None));
        return Ok(());
    }
    Err(last)
}

/// Closes a client whose connect failed: it never existed for the
/// application, so it delivers no events.
fn abandon(inner: Arc<ClientInner>) {
    drop(lock(&inner.event_cb).take());
    *lock(&inner.conn_done) = true;
    inner.close_with(None);
}

/// Replies to `msg` through `inner`.
pub(crate) fn respond(
    inner: &ClientInner,
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
    inner.respond_to(reply, headers, payload)
}

/// Runs `job` on a thread of its own (it joins user threads, which no
/// runtime thread may do); the completion gets its result.
fn on_library_thread(
    name: &str,
    job: impl FnOnce() -> Result<Outcome> + Send + 'static,
) -> Arc<Completion> {
    let c = Completion::new();
    let done = Arc::clone(&c);
    let spawned = std::thread::Builder::new()
        .name(name.into())
        .spawn(move || {
            done.complete(job());
        });
    if let Err(e) = spawned {
        c.complete(Err(Error::new(
            ErrorKind::Io,
            format!("cannot spawn a library thread: {e}"),
        )));
    }
    c
}

/// Moves a connected client to draining (a second drain fails at once).
/// Moves the client to Draining. A client that is reconnecting drains too:
/// its UNSUBs and the flush wait in the reconnect buffer, behind the
/// subscriptions it re-sends, so the drain completes once it has
/// reconnected (the reconnect leaves a Draining state as it is), or ends
/// with DRAIN_TIMEOUT and closes if that takes longer than the drain's
/// bound. Nothing buffered is lost either way, where nats.go closes at once
/// and fails with "reconnecting".
fn begin_drain(inner: &ClientInner) -> Result<()> {
    for from in [ConnState::Connected, ConnState::Reconnecting] {
        if inner
            .state
            .compare_exchange(
                from as u8,
                ConnState::Draining as u8,
                Ordering::SeqCst,
                Ordering::SeqCst,
            )
            .is_ok()
        {
            return Ok(());
        }
    }
    Err(match inner.state() {
        ConnState::Draining => Error::new(ErrorKind::IllegalState, "already draining"),
        ConnState::Connecting | ConnState::Disconnected => Error::new(
            ErrorKind::IllegalState,
            "not connected yet: drain once the first connect has succeeded",
        ),
        _ => Error::closed(),
    })
}

fn drain(inner: &Arc<ClientInner>, timeout: Duration) -> Result<()> {
    begin_drain(inner)?;
    drain_begun(inner, timeout)
}

/// The rest of a drain, once `begin_drain` succeeded.
fn drain_begun(inner: &Arc<ClientInner>, timeout: Duration) -> Result<()> {
    let deadline = crate::clock::deadline_in(timeout);
    let subs: Vec<_> = lock(&inner.subs).values().cloned().collect();
    let waiters: Vec<_> = subs.iter().map(|s| inner.drain_sub(s)).collect();
    let mut timed_out = false;
    for w in &waiters {
        let left = deadline.saturating_duration_since(Instant::now());
        if w.wait(Some(left)).is_none() {
            timed_out = true;
            break;
        }
    }
    {
        let mut w = inner.lock_write();
        w.publishes_blocked = true;
        inner.refresh_pub_gate(&w);
    }
    if !timed_out {
        let left = deadline.saturating_duration_since(Instant::now());
        if inner.flush_async().wait(Some(left)).is_none() {
            timed_out = true;
        }
    }
    let result = if timed_out {
        let e = Error::new(
            ErrorKind::DrainTimeout,
            format!("drain did not finish within {timeout:?}"),
        );
        inner.report_error(e.clone(), None);
        Err(e)
    } else {
        Ok(())
    };
    inner.close_with(None);
    result
}
