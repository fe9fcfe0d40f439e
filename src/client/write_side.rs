//! The write side of a client: the buffer publishers append frames to
//! and the writer task drains in coalesced batches, with what decides how
//! a frame reaches the socket (`Wake`: written directly from the caller's
//! thread when the writer is idle, left to the writer, or deferred to its
//! next tick), the binding's publish ring drained under the same lock,
//! flush PINGs and keepalives, the bound on what may be queued, and the
//! reconnect buffer. The writer loop itself is here too; the connection
//! task starts one per connection (`write_loop`).

use std::collections::VecDeque;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, OnceLock};
use std::time::{Duration, Instant};

use tokio::io::AsyncWriteExt;

use crate::cache_line::CacheLine;
use crate::client::events::Events;
use crate::client::state::Shutdown;
use crate::completion::{lock, Completion};
use crate::error::{Error, ErrorKind, Result};
use crate::headers::Headers;
use crate::log::{LogLevel, Logger};
use crate::options::Options;
use crate::proto;
use crate::pub_ring::PubRing;
use crate::runtime;
use crate::subject;
use crate::tls::WriteHalf;

/// The size the writer's batch buffer starts at (and returns to).
const BATCH_CAPACITY: usize = 64 * 1024;
/// Batches smaller than this make the writer yield once before the next.
const COALESCE_BELOW: usize = 16 * 1024;

const DEFAULT_RECONNECT_BUF: usize = 8 * 1024 * 1024;

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

/// Deferred frames past this many queued bytes wake the writer anyway:
/// enough to batch, far below any sensible `max_pending_size`.
const DEFERRED_LIMIT: usize = 64 * 1024;

/// How long a deferred frame may wait for the writer's next look.
pub(crate) const DEFERRED_TICK: std::time::Duration = std::time::Duration::from_millis(1);

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

/// The options the write side reads.
struct WriteLimits {
    max_pending_size: usize,
    flush_timeout: Duration,
    wait_for_write_room: bool,
    write_room_pause: Option<Duration>,
    reconnect_buf_size: i64,
    max_outstanding_pings: u32,
}

pub(crate) struct WriteSide {
    /// Publishers and the writer lock it per frame: its own cache line,
    /// apart from what the reading thread touches per message.
    write: CacheLine<Mutex<WriteState>>,
    write_space: Condvar,
    pub(crate) writer_wake: tokio::sync::Notify,
    write_error: tokio::sync::Notify,
    write_error_value: Mutex<Option<Error>>,
    max_payload: AtomicUsize,
    /// A binding's publish queue, made on its first request
    /// (`natsio_client_pub_ring`); drained under the write lock.
    pub_ring: OnceLock<PubRing>,
    limits: WriteLimits,
    log: Logger,
    /// Where refused ring publishes are reported.
    events: Arc<Events>,
}

/// What the writer loop needs of its client: the write side, and whether
/// the client is shutting down.
pub(crate) trait Writer: Send + Sync + 'static {
    fn write_side(&self) -> &WriteSide;
    fn shutdown(&self) -> &Shutdown;
}

impl WriteSide {
    pub(crate) fn new(opts: &Options, log: Logger, events: Arc<Events>) -> WriteSide {
        WriteSide {
            write: CacheLine(Mutex::new(WriteState::default())),
            write_space: Condvar::new(),
            writer_wake: tokio::sync::Notify::new(),
            write_error: tokio::sync::Notify::new(),
            write_error_value: Mutex::new(None),
            max_payload: AtomicUsize::new(1024 * 1024),
            pub_ring: OnceLock::new(),
            limits: WriteLimits {
                max_pending_size: opts.max_pending_size,
                flush_timeout: opts.flush_timeout,
                wait_for_write_room: opts.wait_for_write_room,
                write_room_pause: opts.write_room_pause,
                reconnect_buf_size: opts.reconnect_buf_size,
                max_outstanding_pings: opts.max_outstanding_pings,
            },
            log,
            events,
        }
    }

    /// Locks the write state, first moving the binding's queued publishes
    /// (`PubRing`) into the buffer: they keep their place before whatever
    /// the caller adds, and the writer takes them with the rest.
    fn lock_write(&self) -> MutexGuard<'_, WriteState> {
        let mut w = lock(&self.write.0);
        if let Some(ring) = self.pub_ring.get() {
            let max = self.max_payload.load(Ordering::Relaxed);
            let d = ring.drain(&mut w.buf, max);
            w.out_msgs += d.msgs;
            w.out_bytes += d.payload_bytes;
            if let Some(e) = d.refused {
                // Reported on the events thread: no user code runs here.
                self.events.report_error(e, None);
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
        if !w.buf.is_empty() && w.buf.len() + frame_len > self.limits.max_pending_size {
            // How long to wait for room, and whether to fail after it.
            let wait = if self.limits.wait_for_write_room {
                Some((self.limits.flush_timeout, true))
            } else {
                // A pause that ran out without the writer moving (a
                // stopped server) is not repeated for every frame.
                self.limits
                    .write_room_pause
                    .filter(|_| w.pause_expired_at != Some(w.batches_taken))
                    .map(|pause| (pause, false))
            };
            if let Some((limit, fail)) = wait.filter(|_| runtime::ensure_may_block().is_ok()) {
                let deadline = crate::clock::deadline_in(limit);
                while !w.buf.is_empty() && w.buf.len() + frame_len > self.limits.max_pending_size {
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
    fn kick_writer(&self, mut w: MutexGuard<'_, WriteState>, was_empty: bool, wake: Wake) {
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
        mut w: MutexGuard<'_, WriteState>,
        frame_len: usize,
        payload_len: usize,
        encode: impl FnOnce(&mut Vec<u8>),
    ) -> Result<()> {
        let limit = match self.limits.reconnect_buf_size {
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
    pub(crate) fn enqueue_control(&self, encode: impl FnOnce(&mut Vec<u8>)) {
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

    /// Wakes the reader when the writer failed (`writer_failed`).
    pub(crate) fn write_error_notified(&self) -> tokio::sync::futures::Notified<'_> {
        self.write_error.notified()
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
    pub(crate) fn publish_frame_checked_reply(
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
        if w.pings_outstanding >= self.limits.max_outstanding_pings {
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

    // ---- the connection's changes -----------------------------------------

    /// Messages and payload bytes published so far.
    pub(crate) fn out_counts(&self) -> (u64, u64) {
        let w = self.lock_write();
        (w.out_msgs, w.out_bytes)
    }

    pub(crate) fn max_payload(&self) -> usize {
        self.max_payload.load(Ordering::Relaxed)
    }

    /// The server's max_payload, from its INFO.
    pub(crate) fn set_max_payload(&self, max: usize) {
        self.max_payload.store(max, Ordering::Relaxed);
        if self.pub_ring.get().is_some() {
            self.refresh_pub_gate(&lock(&self.write.0));
        }
    }

    /// A PONG came: the oldest PING is answered (its flush waiter, if any,
    /// is returned for the caller to complete).
    pub(crate) fn pong_received(&self) -> Option<Arc<Completion>> {
        let mut w = lock(&self.write.0);
        w.pings_outstanding = 0;
        w.pongs.pop_front().flatten()
    }

    /// The first connect failed and goes on in the background: publishes
    /// are buffered meanwhile.
    pub(crate) fn start_buffering(&self) {
        let mut w = self.lock_write();
        w.reconnecting = true;
        self.refresh_pub_gate(&w);
    }

    /// The connection was lost: keep buffered publishes (only those),
    /// forget keepalives, and start buffering for the next connection.
    /// False once closed.
    pub(crate) fn begin_reconnect(&self) -> bool {
        {
            let mut w = self.lock_write();
            if w.closed.is_some() {
                return false;
            }
            w.buf = proto::retain_publishes(&w.buf);
            w.pongs.retain(Option::is_some);
            w.pings_outstanding = 0;
            w.reconnecting = true;
            self.refresh_pub_gate(&w);
        }
        self.write_space.notify_all();
        true
    }

    /// Connected again: `resubscribe` (the subscriptions' frames) goes
    /// first, then the publishes buffered meanwhile, then one PING per
    /// flush still waiting. False once closed.
    pub(crate) fn finish_reconnect(&self, resubscribe: Vec<u8>) -> bool {
        let mut w = self.lock_write();
        if w.closed.is_some() {
            return false;
        }
        let mut frames = resubscribe;
        frames.reserve(w.buf.len());
        frames.extend_from_slice(&w.buf);
        for _ in w.pongs.iter().filter(|p| p.is_some()) {
            frames.extend_from_slice(proto::PING);
        }
        w.buf = frames;
        w.reconnecting = false;
        self.refresh_pub_gate(&w);
        true
    }

    /// A drain has handled its subscriptions: no more publishes.
    pub(crate) fn block_publishes(&self) {
        let mut w = self.lock_write();
        w.publishes_blocked = true;
        self.refresh_pub_gate(&w);
    }

    /// The client closes: no more writes; the flushes still waiting are
    /// returned for the caller to fail.
    pub(crate) fn close(&self, closed: &Error) -> Vec<Arc<Completion>> {
        let pongs = {
            let mut w = self.lock_write();
            w.closed = Some(closed.clone());
            self.refresh_pub_gate(&w);
            std::mem::take(&mut w.pongs)
        };
        self.write_space.notify_all();
        pongs.into_iter().flatten().collect()
    }
}

/// Writes the shared buffer until shutdown (then ends with a FIN), a
/// failed write, or `stop_writer` (then hands the write half back).
pub(crate) async fn write_loop(client: Arc<impl Writer>, mut wr: WriteHalf) -> Option<WriteHalf> {
    let inner = client.write_side();
    let mut batch = Vec::with_capacity(BATCH_CAPACITY);
    loop {
        let Some(tick) = inner.take_pending_writes(&mut batch) else {
            return Some(wr);
        };
        if !batch.is_empty() {
            // Before the write, so no answer to a frame is traced before it.
            inner.log.trace_sent(&batch);
            // flush: TLS buffers records until asked; a no-op for TCP.
            let written = match wr.write_all(&batch).await {
                Ok(()) => wr.flush().await,
                Err(e) => Err(e),
            };
            if let Err(e) = written {
                inner.writer_failed(e.into());
                return None;
            }
            let small = batch.len() < COALESCE_BELOW;
            batch.clear();
            if batch.capacity() > 2 * inner.limits.max_pending_size {
                // Grown past the bound (publishes that did not wait for
                // room): give it back rather than keep it for good.
                batch = Vec::with_capacity(BATCH_CAPACITY);
            }
            if small {
                // Give publishers a moment to add more before the next
                // write: fewer, larger writes and fewer wake-ups. Frames
                // someone waits on are written directly by their caller.
                tokio::task::yield_now().await;
            }
            continue;
        }
        if client.shutdown().is_set() {
            let _ = wr.shutdown().await;
            return None;
        }
        if tick {
            // Deferred frames keep coming, and they do not wake us.
            tokio::select! {
                _ = inner.writer_wake.notified() => {}
                _ = tokio::time::sleep(DEFERRED_TICK) => {}
            }
        } else {
            inner.writer_wake.notified().await;
        }
    }
}
