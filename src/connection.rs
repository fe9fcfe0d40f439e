//! The connection: handshake, then one task per client that reads and
//! dispatches frames, keeps the connection alive with PINGs, and a writer
//! task that drains the shared write buffer in coalesced batches.

use std::sync::Arc;
use std::time::Duration;

use bytes::BytesMut;
use serde::Deserialize;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::auth::{AuthFields, Credentials};
use crate::client::{ClientInner, OwedWakes, TaskRef};
use crate::completion::lock;
use crate::error::{Error, ErrorKind, Result};
use crate::log::{log, Logger};
use crate::options::{Options, ServerAddr};
use crate::proto::{Parser, ServerOp, PONG};
use crate::tls::{self, ReadHalf, Transport, WriteHalf};
use crate::ws;

const READ_CHUNK: usize = 64 * 1024;
/// Batches smaller than this make the writer yield once before the next.
const COALESCE_BELOW: usize = 16 * 1024;

/// The fields of the server's INFO that the client acts on.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct ServerInfo {
    pub server_id: String,
    pub server_name: String,
    pub version: String,
    pub proto: i32,
    pub headers: bool,
    pub max_payload: i64,
    pub tls_required: bool,
    pub auth_required: bool,
    pub nonce: Option<String>,
    pub connect_urls: Vec<String>,
    pub ldm: bool,
    pub jetstream: bool,
    pub client_id: u64,
}

pub(crate) fn parse_info(json: &str) -> Result<ServerInfo> {
    serde_json::from_str(json)
        .map_err(|e| Error::new(ErrorKind::Protocol, format!("invalid INFO: {e}")))
}

fn connect_json(opts: &Options, addr: &ServerAddr, tls: bool, auth: AuthFields) -> String {
    let mut o = serde_json::json!({
        "verbose": opts.verbose,
        "pedantic": opts.pedantic,
        "tls_required": tls,
        "lang": opts.client_lang,
        "version": opts.client_version,
        "protocol": 1,
        "echo": opts.echo,
        "headers": true,
        "no_responders": true,
    });
    let m = o.as_object_mut().expect("object");
    let mut put = |k: &str, v: Option<String>| {
        if let Some(v) = v {
            m.insert(k.into(), v.into());
        }
    };
    put("name", opts.name.clone());
    // Credentials in the URL win over the options; a URL user without a
    // password is a token (as nats.go reads it).
    match (&addr.user, &addr.password) {
        (Some(u), Some(p)) => {
            put("user", Some(u.clone()));
            put("pass", Some(p.clone()));
        }
        (Some(t), None) => put("auth_token", Some(t.clone())),
        _ => {
            put("user", auth.user.or_else(|| opts.user.clone()));
            put("pass", auth.pass.or_else(|| opts.password.clone()));
            put("auth_token", auth.auth_token.or_else(|| opts.token.clone()));
        }
    }
    put("jwt", auth.jwt);
    put("nkey", auth.nkey);
    put("sig", auth.sig);
    o.to_string()
}

/// Computes the key-based credentials; application callbacks run on a
/// thread of their own, never on the runtime.
async fn auth_fields(opts: &Options, nonce: Option<&str>) -> Result<AuthFields> {
    match &opts.credentials {
        None => Ok(AuthFields::default()),
        Some(c @ Credentials::Custom(_)) => {
            let (tx, rx) = tokio::sync::oneshot::channel();
            let c = c.clone();
            let nonce = nonce.map(str::to_string);
            std::thread::Builder::new()
                .name("natsio-auth".into())
                .spawn(move || {
                    let _ = tx.send(c.fields(nonce.as_deref()));
                })
                .map_err(|e| Error::new(ErrorKind::Io, format!("cannot spawn auth thread: {e}")))?;
            rx.await
                .unwrap_or_else(|_| Err(Error::new(ErrorKind::Internal, "authenticator panicked")))
        }
        Some(c) => c.fields(nonce),
    }
}

/// A connected, authenticated socket with whatever the server sent after PONG.
pub(crate) struct Established {
    pub stream: Transport,
    pub rbuf: BytesMut,
    pub info_json: String,
    pub info: ServerInfo,
}

async fn read_op(
    stream: &mut Transport,
    parser: &mut Parser,
    rbuf: &mut BytesMut,
    log: &Logger,
) -> Result<ServerOp> {
    loop {
        if let Some(op) = parser.parse(rbuf)? {
            log.trace_received(&op);
            return Ok(op);
        }
        rbuf.reserve(READ_CHUNK);
        if stream.read_buf(rbuf).await? == 0 {
            return Err(Error::new(
                ErrorKind::Io,
                "connection closed by server during handshake",
            ));
        }
    }
}

/// TCP, INFO (TLS before or after it as configured), CONNECT, PING, then
/// wait for PONG (or the server's -ERR).
pub(crate) async fn handshake(
    opts: &Options,
    log: &Logger,
    url: &str,
    addr: &ServerAddr,
) -> Result<Established> {
    log!(log, Debug, "connecting to {}:{}", addr.host, addr.port);
    let tcp = TcpStream::connect((addr.host.as_str(), addr.port))
        .await
        .map_err(|e| {
            Error::new(
                ErrorKind::NoServers,
                format!("cannot connect to {}:{}: {e}", addr.host, addr.port),
            )
        })?;
    tcp.set_nodelay(true)?;
    let tls_opts = opts.tls.clone().unwrap_or_default();
    let want_tls = addr.tls || opts.tls.is_some();
    let mut stream = if addr.websocket {
        // TLS first for wss (and for ws when TLS is configured), then the
        // upgrade; the NATS protocol then runs inside the frames.
        let under = if want_tls {
            Transport::Tls(Box::new(tls::upgrade(tcp, &addr.host, &tls_opts).await?))
        } else {
            Transport::Plain(tcp)
        };
        Transport::Ws(Box::new(
            ws::connect(under, addr, url, &opts.websocket).await?,
        ))
    } else if want_tls && tls_opts.handshake_first {
        Transport::Tls(Box::new(tls::upgrade(tcp, &addr.host, &tls_opts).await?))
    } else {
        Transport::Plain(tcp)
    };
    let mut parser = Parser::new(opts.max_control_line);
    let mut rbuf = BytesMut::with_capacity(READ_CHUNK);
    let mut info_json = match read_op(&mut stream, &mut parser, &mut rbuf, log).await? {
        ServerOp::Info(j) => j,
        _ => {
            return Err(Error::new(
                ErrorKind::Protocol,
                "server did not start with INFO",
            ))
        }
    };
    let mut info = parse_info(&info_json)?;
    if let Transport::Plain(tcp) = stream {
        stream = if want_tls || info.tls_required {
            if !rbuf.is_empty() {
                return Err(Error::new(
                    ErrorKind::Protocol,
                    "unexpected data before the TLS handshake",
                ));
            }
            Transport::Tls(Box::new(tls::upgrade(tcp, &addr.host, &tls_opts).await?))
        } else {
            Transport::Plain(tcp)
        };
    }
    let secure = stream.is_tls();
    let auth = auth_fields(opts, info.nonce.as_deref()).await?;
    let mut hello = format!("CONNECT {}\r\n", connect_json(opts, addr, secure, auth)).into_bytes();
    hello.extend_from_slice(crate::proto::PING);
    log.trace_sent(&hello);
    stream.write_all(&hello).await?;
    stream.flush().await?;
    loop {
        match read_op(&mut stream, &mut parser, &mut rbuf, log).await? {
            ServerOp::Pong => break,
            ServerOp::Err(text) => return Err(Error::from_server(&text).0),
            ServerOp::Info(j) => {
                info = parse_info(&j)?;
                info_json = j;
            }
            ServerOp::Ping => {
                log.trace_sent(PONG);
                stream.write_all(PONG).await?;
                stream.flush().await?;
            }
            ServerOp::Ok => {}
            ServerOp::Msg(_) => {
                return Err(Error::new(
                    ErrorKind::Protocol,
                    "unexpected MSG during handshake",
                ))
            }
        }
    }
    Ok(Established {
        stream,
        rbuf,
        info_json,
        info,
    })
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
            None => match reconnect(&inner).await {
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
    let current = lock(&inner.connected_url).clone();
    let entries = lock(&inner.pool).entries();
    for entry in entries.into_iter().filter(|e| e.url != current) {
        if inner.is_shutting_down() {
            return None;
        }
        lock(&inner.pool).record_attempt(&entry.url);
        let attempt = handshake(&inner.opts, &inner.log, &entry.url, &entry.addr);
        match tokio::time::timeout(inner.opts.connect_timeout, attempt).await {
            Ok(Ok(est)) => return Some((entry.url, est)),
            Ok(Err(e)) => log!(inner.log, Debug, "lame duck: {} refused: {e}", entry.url),
            Err(_) => log!(inner.log, Debug, "lame duck: {} timed out", entry.url),
        }
    }
    None
}

/// Tries the pool's servers with backoff until one accepts, the attempts
/// run out, the same authentication error repeats, or the client closes.
async fn reconnect(inner: &Arc<ClientInner>) -> Result<(String, Established)> {
    let o = &inner.opts;
    loop {
        if inner.is_shutting_down() {
            return Err(Error::closed());
        }
        let candidate = {
            let tls = crate::pool::url_is_tls(&lock(&inner.connected_url));
            let jitter = if tls {
                o.reconnect_jitter_tls
            } else {
                o.reconnect_jitter
            };
            lock(&inner.pool).next_candidate(
                o.max_reconnect_attempts,
                o.reconnect_time_wait,
                o.reconnect_time_wait_max,
                jitter,
            )
        };
        let Some((entry, delay)) = candidate else {
            return Err(Error::new(
                ErrorKind::NoServers,
                "no servers left to reconnect to",
            ));
        };
        if !delay.is_zero() {
            tokio::select! {
                _ = tokio::time::sleep(delay) => {}
                _ = inner.shutdown.notified() => return Err(Error::closed()),
            }
        }
        lock(&inner.pool).record_attempt(&entry.url);
        let attempt = tokio::time::timeout(
            o.connect_timeout,
            handshake(o, &inner.log, &entry.url, &entry.addr),
        );
        let result = tokio::select! {
            r = attempt => r.unwrap_or_else(|_| Err(Error::new(ErrorKind::Timeout, "connect timed out"))),
            _ = inner.shutdown.notified() => return Err(Error::closed()),
        };
        match result {
            Ok(est) => return Ok((entry.url, est)),
            Err(e)
                if matches!(
                    e.kind(),
                    ErrorKind::AuthorizationViolation | ErrorKind::AuthenticationExpired
                ) =>
            {
                let repeated = lock(&inner.pool).record_auth_error(&entry.url, e.detail());
                if repeated && !o.ignore_auth_error_abort {
                    return Err(e);
                }
            }
            Err(e) => log!(inner.log, Warn, "reconnect to {} failed: {e}", entry.url),
        }
    }
}

/// Serves one established connection until shutdown, loss or a lame-duck
/// move.
async fn serve(inner: &Arc<ClientInner>, est: Established) -> Ended {
    let direct_fd = match &est.stream {
        Transport::Plain(tcp) => Some(std::os::fd::AsRawFd::as_raw_fd(tcp)),
        Transport::Tls(_) | Transport::Ws(_) => None,
    };
    let (mut rd, wr) = est.stream.split();
    let _ = inner.take_write_error();
    inner.start_writer();
    // Before the writer runs: enabling direct writes marks the writer idle,
    // which must not undo its taking a batch (a direct write would then
    // overtake or split that batch on the socket).
    inner.set_direct_fd(direct_fd);
    let writer = tokio::spawn(write_loop(Arc::clone(inner), wr));
    // Whatever was buffered while disconnected goes out first.
    inner.writer_wake.notify_one();
    let mut parser = Parser::new(inner.opts.max_control_line);
    let mut rbuf = est.rbuf;
    let result = read_loop(inner, &mut rd, &mut parser, &mut rbuf).await;
    // Before either half can close the socket: no more direct writes.
    inner.set_direct_fd(None);
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
    inner.stop_writer();
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

/// Writes the shared buffer until shutdown (then ends with a FIN), a
/// failed write, or `stop_writer` (then hands the write half back).
async fn write_loop(inner: Arc<ClientInner>, mut wr: WriteHalf) -> Option<WriteHalf> {
    let mut batch = Vec::with_capacity(READ_CHUNK);
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
            if batch.capacity() > 2 * inner.opts.max_pending_size {
                // Grown past the bound (publishes that did not wait for
                // room): give it back rather than keep it for good.
                batch = Vec::with_capacity(READ_CHUNK);
            }
            if small {
                // Give publishers a moment to add more before the next
                // write: fewer, larger writes and fewer wake-ups. Frames
                // someone waits on are written directly by their caller.
                tokio::task::yield_now().await;
            }
            continue;
        }
        if inner.is_shutting_down() {
            let _ = wr.shutdown().await;
            return None;
        }
        if tick {
            // Deferred frames keep coming, and they do not wake us.
            tokio::select! {
                _ = inner.writer_wake.notified() => {}
                _ = tokio::time::sleep(crate::client::DEFERRED_TICK) => {}
            }
        } else {
            inner.writer_wake.notified().await;
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
            && inner.in_lame_duck()
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
            _ = ticker.tick() => inner.send_keepalive()?,
            _ = inner.shutdown.notified() => return Ok(None),
            _ = inner.write_error.notified() => {
                if let Some(e) = inner.take_write_error() {
                    return Err(e);
                }
            }
            _ = inner.force_reconnect.notified() => {
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
