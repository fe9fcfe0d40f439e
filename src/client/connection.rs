//! The connection task: the first connect (`establish`), then one task
//! per client that serves a connection (its reader, its writer from
//! `write_side`, keepalive PINGs), reconnects through the connector when
//! it is lost, moves to another server when its server enters lame duck
//! mode, and lets every connection go without losing what crossed it.

use std::sync::Arc;
use std::time::Duration;

use bytes::BytesMut;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::client::connector::{Established, Pass, READ_CHUNK};
use crate::client::inner::{ClientInner, TaskRef};
use crate::client::routing::OwedWakes;
use crate::client::state::ConnState;
use crate::client::write_side::write_loop;
use crate::error::{Error, ErrorKind, Result};
use crate::options::EventKind;
use crate::proto::Parser;
use crate::runtime;
use crate::tls::{ReadHalf, Transport, WriteHalf};

/// Connects `inner` to the first server of its pool that accepts, and
/// starts its connection task (or, with retry_on_failed_connect, keeps
/// trying in the background).
pub(crate) async fn establish(inner: Arc<ClientInner>) -> Result<()> {
    let first = inner
        .connector
        .connect(
            &inner.opts,
            &inner.log,
            &inner.events,
            &inner.state.shutdown,
            Pass::First,
        )
        .await;
    match first {
        Ok((url, est)) => {
            inner.on_established(&url, est.info_json.clone(), est.info.clone());
            inner.connector.mark_connected();
            inner.state.set(ConnState::Connected);
            inner
                .events
                .emit(EventKind::Connected, Some(url), None, Vec::new());
            runtime::handle().spawn(run(inner.task_ref(), Some(est)));
            Ok(())
        }
        Err(_) if inner.opts.retry_on_failed_connect && inner.opts.allow_reconnect => {
            // Keep trying in the background; publishes are buffered meanwhile.
            inner.write.start_buffering();
            inner.state.set(ConnState::Reconnecting);
            runtime::handle().spawn(run(inner.task_ref(), None));
            Ok(())
        }
        Err(last) => Err(last),
    }
}

/// How a served connection ended.
enum Ended {
    /// The client closed.
    Shutdown,
    /// The connection was lost (and read to its end).
    Lost(Error),
    /// Its server went into lame duck mode and another one accepted us:
    /// the old connection was read to its end, this one takes over.
    Moved(Error, String, Box<Established>),
}

/// Runs the client's connection: serves it until it is lost, then
/// reconnects (if allowed) and serves the next one, until shutdown.
pub(crate) async fn run(inner: TaskRef, first: Option<Established>) {
    let mut next = first;
    let lost = loop {
        let est = match next.take() {
            Some(est) => est,
            None => match inner
                .connector
                .connect(
                    &inner.opts,
                    &inner.log,
                    &inner.events,
                    &inner.state.shutdown,
                    Pass::Reconnect,
                )
                .await
            {
                Ok((url, est)) => {
                    inner.finish_reconnect(&url, est.info_json.clone(), est.info.clone());
                    est
                }
                Err(e) => break Some(e),
            },
        };
        match serve(&inner, est).await {
            Ended::Shutdown => break None,
            _ if inner.is_shutting_down() => break None,
            Ended::Lost(e) if !inner.opts.allow_reconnect => break Some(e),
            Ended::Lost(e) => inner.begin_reconnect(&e),
            Ended::Moved(e, url, est) => {
                inner.begin_reconnect(&e);
                inner.finish_reconnect(&url, est.info_json.clone(), est.info.clone());
                next = Some(*est);
            }
        }
    };
    inner.connection_ended(lost);
}

/// The server announced lame duck mode: connects to another server of the
/// pool, in pool order, while the current connection keeps serving. None
/// when none accepts (the connection is then served until the server
/// closes it, and the client reconnects as after any loss).
async fn connect_elsewhere(inner: Arc<ClientInner>) -> Option<(String, Established)> {
    inner
        .connector
        .connect(
            &inner.opts,
            &inner.log,
            &inner.events,
            &inner.state.shutdown,
            Pass::LameDuck,
        )
        .await
        .ok()
}

/// Serves one established connection until shutdown, loss or a lame-duck
/// move.
async fn serve(inner: &Arc<ClientInner>, est: Established) -> Ended {
    let direct_fd = match &est.stream {
        Transport::Plain(tcp) => Some(std::os::fd::AsRawFd::as_raw_fd(tcp)),
        Transport::Tls(_) | Transport::Ws(_) => None,
    };
    let (mut rd, wr) = est.stream.split();
    let _ = inner.write.take_write_error();
    inner.write.start_writer();
    // Before the writer runs: enabling direct writes marks the writer idle,
    // which must not undo its taking a batch (a direct write would then
    // overtake or split that batch on the socket).
    inner.write.set_direct_fd(direct_fd);
    let writer = tokio::spawn(write_loop(Arc::clone(inner), wr));
    // Whatever was buffered while disconnected goes out first.
    inner.write.writer_wake.notify_one();
    let mut parser = Parser::new(inner.opts.max_control_line);
    let mut rbuf = est.rbuf;
    let result = read_loop(inner, &mut rd, &mut parser, &mut rbuf).await;
    // Before either half can close the socket: no more direct writes.
    inner.write.set_direct_fd(None);
    let ended = match result {
        Ok(None) => {
            // Shutdown: let the writer send what was accepted (it ends with
            // a FIN), then read until the server closes too, all bounded.
            // Closing a socket whose receive queue holds unread bytes (the
            // server's messages for our subscriptions keep coming) sends a
            // RST, and a server that gets a RST drops what it has not read
            // yet: the last publishes before a close would be lost.
            let until = tokio::time::Instant::now() + CLOSE_BOUND;
            let _ = tokio::time::timeout_at(until, writer).await;
            let _ = tokio::time::timeout_at(until, read_until_eof(&mut rd)).await;
            return Ended::Shutdown;
        }
        Ok(Some((url, next))) => Ended::Moved(
            Error::new(ErrorKind::Io, "server entered lame duck mode"),
            url,
            Box::new(next),
        ),
        Err(e) => Ended::Lost(e),
    };
    let_go(inner, writer, &mut rd, &mut parser, &mut rbuf).await;
    ended
}

/// How long a close may take to send what was accepted and see the
/// server close its side.
const CLOSE_BOUND: Duration = Duration::from_secs(5);

/// How long a closing client waits for the server's next bytes. A live
/// server sends until it reads the FIN, then closes; one that stays silent
/// this long is hung or has nothing for us (then no unread bytes can make
/// a RST), and a close does not wait the whole bound for it.
const CLOSE_IDLE: Duration = Duration::from_millis(250);

/// Lets a lost (or lame-duck) connection go without losing what crossed
/// it: the writer finishes the batch it holds and takes nothing more (the
/// rest goes to the next connection), a FIN tells the server we are done,
/// and everything the server sent before it closes its side is delivered.
/// Dropping a socket with unread bytes would send a RST, which makes the
/// server drop the publishes it has not read yet. All bounded: a hung
/// server costs CLOSE_IDLE, a dead one nothing.
async fn let_go(
    inner: &Arc<ClientInner>,
    mut writer: tokio::task::JoinHandle<Option<WriteHalf>>,
    rd: &mut ReadHalf,
    parser: &mut Parser,
    rbuf: &mut BytesMut,
) {
    let until = tokio::time::Instant::now() + CLOSE_BOUND;
    inner.write.stop_writer();
    let wr = match tokio::time::timeout(CLOSE_IDLE, &mut writer).await {
        Ok(Ok(wr)) => wr,
        _ => {
            // Stuck writing to a server that does not read. (Dropping a
            // plain TCP write half shuts the write side down too.)
            writer.abort();
            None
        }
    };
    if let Some(mut wr) = wr {
        let _ = tokio::time::timeout_at(until, wr.shutdown()).await;
    }
    let _ = tokio::time::timeout_at(until, deliver_until_eof(inner, rd, parser, rbuf)).await;
}

/// Handles what is buffered and what the server still sends (delivering
/// messages, answering flushes) until it closes, the connection fails or
/// the server stays silent for CLOSE_IDLE. Errors no longer matter: the
/// connection is already being let go.
async fn deliver_until_eof(
    inner: &Arc<ClientInner>,
    rd: &mut ReadHalf,
    parser: &mut Parser,
    rbuf: &mut BytesMut,
) {
    let mut wakes = OwedWakes::default();
    let mut parsing = true;
    loop {
        while parsing {
            match parser.parse(rbuf) {
                Ok(Some(op)) => {
                    inner.log.trace_received(&op);
                    let _ = inner.handle_op(op, &mut wakes).await;
                }
                Ok(None) => break,
                // Past a malformed frame nothing can be parsed: only read
                // on, so the close sends no RST.
                Err(_) => parsing = false,
            }
        }
        wakes.send();
        if !parsing {
            rbuf.clear();
        }
        if inner.is_shutting_down() {
            return;
        }
        if rbuf.capacity() - rbuf.len() < READ_CHUNK / 4 {
            rbuf.reserve(READ_CHUNK);
        }
        match tokio::time::timeout(CLOSE_IDLE, rd.read_buf(rbuf)).await {
            Ok(Ok(n)) if n > 0 => {}
            _ => return,
        }
    }
}

/// Reads and drops everything until the server closes its side, the
/// connection fails or the server stays silent for CLOSE_IDLE.
async fn read_until_eof(rd: &mut ReadHalf) {
    let mut sink = vec![0u8; READ_CHUNK];
    while let Ok(Ok(n)) = tokio::time::timeout(CLOSE_IDLE, rd.read(&mut sink)).await {
        if n == 0 {
            return;
        }
    }
}

/// Ok(None) at shutdown; Ok(Some) once the server went into lame duck
/// mode and another server accepted us; Err when the connection is lost.
async fn read_loop(
    inner: &Arc<ClientInner>,
    rd: &mut ReadHalf,
    parser: &mut Parser,
    rbuf: &mut BytesMut,
) -> Result<Option<(String, Established)>> {
    inner.reassert_block_pauses().await;
    let period = inner.opts.ping_interval;
    let mut ticker = tokio::time::interval_at(crate::clock::tokio_deadline_in(period), period);
    // Sent when dropped too, on every way out of this loop.
    let mut wakes = OwedWakes::default();
    // The connection to the next server, started once this one's server
    // announced lame duck; aborted if this loop ends another way.
    let mut elsewhere: Option<AbortOnDrop<Option<(String, Established)>>> = None;
    let mut elsewhere_done = false;
    loop {
        while let Some(op) = parser.parse(rbuf)? {
            inner.log.trace_received(&op);
            inner.handle_op(op, &mut wakes).await?;
        }
        wakes.send();
        if elsewhere.is_none()
            && !elsewhere_done
            && inner.opts.allow_reconnect
            && inner.connector.in_lame_duck()
        {
            elsewhere = Some(AbortOnDrop(tokio::spawn(connect_elsewhere(Arc::clone(
                inner,
            )))));
        }
        if rbuf.capacity() - rbuf.len() < READ_CHUNK / 4 {
            rbuf.reserve(READ_CHUNK);
        }
        let next = async {
            match elsewhere.as_mut() {
                Some(task) => (&mut task.0).await.ok().flatten(),
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            r = rd.read_buf(rbuf) => {
                if r? == 0 {
                    return Err(Error::new(ErrorKind::Io, "connection closed by the server"));
                }
            }
            moved = next => {
                elsewhere = None;
                elsewhere_done = true;
                if moved.is_some() {
                    return Ok(moved);
                }
                // Nobody else accepted: stay until the server closes.
            }
            _ = ticker.tick() => inner.write.send_keepalive()?,
            _ = inner.state.shutdown.notified() => return Ok(None),
            _ = inner.write.write_error_notified() => {
                if let Some(e) = inner.write.take_write_error() {
                    return Err(e);
                }
            }
            _ = inner.force_reconnect.notified() => {
                inner.connector.mark_forced();
                return Err(Error::new(ErrorKind::Io, "reconnect forced by the application"));
            }
        }
    }
}

/// A spawned task aborted when its handle is dropped.
struct AbortOnDrop<T>(tokio::task::JoinHandle<T>);

impl<T> Drop for AbortOnDrop<T> {
    fn drop(&mut self) {
        self.0.abort();
    }
}
