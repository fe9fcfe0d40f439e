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
            put("user", opts.user.clone());
            put("pass", opts.password.clone());
            put("auth_token", opts.token.clone());
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
            Ok(()) => break None,
            Err(_) if inner.is_shutting_down() => break None,
            Err(e) if !inner.opts.allow_reconnect => break Some(e),
            Err(e) => inner.begin_reconnect(&e),
        }
    };
    inner.connection_ended(lost);
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

/// Serves one established connection until shutdown (`Ok`) or loss (`Err`).
async fn serve(inner: &Arc<ClientInner>, est: Established) -> Result<()> {
    let direct_fd = match &est.stream {
        Transport::Plain(tcp) => Some(std::os::fd::AsRawFd::as_raw_fd(tcp)),
        Transport::Tls(_) | Transport::Ws(_) => None,
    };
    let (mut rd, wr) = est.stream.split();
    let _ = inner.take_write_error();
    let writer = tokio::spawn(write_loop(Arc::clone(inner), wr));
    inner.set_direct_fd(direct_fd);
    // Whatever was buffered while disconnected goes out first.
    inner.writer_wake.notify_one();
    let result = read_loop(inner, &mut rd, est.rbuf).await;
    // Before either half can close the socket: no more direct writes.
    inner.set_direct_fd(None);
    match result {
        Ok(()) => {
            // Shutdown: let the writer send what was accepted (it ends with
            // a FIN), then read until the server closes too, all bounded.
            // Closing a socket whose receive queue holds unread bytes (the
            // server's messages for our subscriptions keep coming) sends a
            // RST, and a server that gets a RST drops what it has not read
            // yet: the last publishes before a close would be lost.
            let until = tokio::time::Instant::now() + CLOSE_BOUND;
            let _ = tokio::time::timeout_at(until, writer).await;
            let _ = tokio::time::timeout_at(until, read_until_eof(&mut rd)).await;
            drop(rd);
            Ok(())
        }
        Err(e) => {
            writer.abort();
            drop(rd);
            Err(e)
        }
    }
}

/// How long a close may take to send what was accepted and see the
/// server close its side.
const CLOSE_BOUND: Duration = Duration::from_secs(5);

/// How long a closing client waits for the server's next bytes. A live
/// server sends until it reads the FIN, then closes; one that stays silent
/// this long is hung or has nothing for us (then no unread bytes can make
/// a RST), and a close does not wait the whole bound for it.
const CLOSE_IDLE: Duration = Duration::from_millis(250);

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

async fn write_loop(inner: Arc<ClientInner>, mut wr: WriteHalf) {
    let mut batch = Vec::with_capacity(READ_CHUNK);
    loop {
        let tick = inner.take_pending_writes(&mut batch);
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
                return;
            }
            let small = batch.len() < COALESCE_BELOW;
            batch.clear();
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
            return;
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

async fn read_loop(inner: &Arc<ClientInner>, rd: &mut ReadHalf, mut rbuf: BytesMut) -> Result<()> {
    inner.reassert_block_pauses().await;
    let mut parser = Parser::new(inner.opts.max_control_line);
    let period = inner.opts.ping_interval;
    let mut ticker = tokio::time::interval_at(crate::clock::tokio_deadline_in(period), period);
    // Sent when dropped too, on every way out of this loop.
    let mut wakes = OwedWakes::default();
    loop {
        while let Some(op) = parser.parse(&mut rbuf)? {
            inner.log.trace_received(&op);
            inner.handle_op(op, &mut wakes).await?;
        }
        wakes.send();
        if rbuf.capacity() - rbuf.len() < READ_CHUNK / 4 {
            rbuf.reserve(READ_CHUNK);
        }
        tokio::select! {
            r = rd.read_buf(&mut rbuf) => {
                if r? == 0 {
                    return Err(Error::new(ErrorKind::Io, "connection closed by the server"));
                }
            }
            _ = ticker.tick() => inner.send_keepalive()?,
            _ = inner.shutdown.notified() => return Ok(()),
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
