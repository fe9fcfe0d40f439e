//! The connector: the server pool and where the client is connected, the
//! handshake (TCP, TLS, WebSocket, INFO, CONNECT, PING/PONG), and the one
//! connect loop over the pool that the first connect, every reconnect and
//! a lame-duck move run (`Connector::connect`, one `Pass` each), with the
//! servers the cluster announces and the lame-duck flag.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::Duration;

use bytes::BytesMut;
use serde::Deserialize;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::auth::{AuthFields, Credentials};
use crate::client::events::Events;
use crate::client::state::Shutdown;
use crate::completion::lock;
use crate::error::{Error, ErrorKind, Result};
use crate::library_thread;
use crate::log::{log, Logger};
use crate::options::{EventKind, Options, ReconnectDelay, ReconnectDelayCallback, ServerAddr};
use crate::pool::{self, Pace, PoolEntry, PoolServer, ServerPool};
use crate::proto::{Parser, ServerOp, PONG};
use crate::tls::{self, Transport};
use crate::ws;

/// How much the reading side reserves per read.
pub(crate) const READ_CHUNK: usize = 64 * 1024;

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
            let c = c.clone();
            let nonce = nonce.map(str::to_string);
            library_thread::ask("natsio-auth", "authenticator panicked", move || {
                c.fields(nonce.as_deref())
            })
            .await?
        }
        Some(c) => c.fields(nonce),
    }
}

/// Asks the application's reconnect delay callback, on a thread of its
/// own, for the wait before turn `turn`'s last server. A close does not
/// wait for it (as for an authenticator): `connect` stops waiting at the
/// shutdown, and the thread's hold on the callback keeps its user data
/// until the call returns.
async fn ask_delay(cb: &ReconnectDelayCallback, turn: u64) -> ReconnectDelay {
    let cb = cb.clone();
    library_thread::ask(
        "natsio-reconnect-delay",
        "the reconnect delay callback panicked",
        move || cb(turn),
    )
    .await
    .unwrap_or_else(ReconnectDelay::Failed)
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

/// Which connect a run of `Connector::connect` is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Pass {
    /// The first connect: each server of the pool once, in pool order,
    /// without waiting between them.
    First,
    /// After a lost connection: the pool's candidates with backoff until
    /// one accepts, the attempts run out, the same authentication error
    /// repeats, or the client closes.
    Reconnect,
    /// The current server announced lame duck mode: every other server
    /// once, in pool order, while the current connection keeps serving.
    LameDuck,
}

/// The server pool and the current connection's server (see the module's
/// comment).
pub(crate) struct Connector {
    pool: Mutex<ServerPool>,
    connected_url: Mutex<String>,
    /// The last INFO: its JSON text and its fields.
    info: Mutex<(String, ServerInfo)>,
    lame_duck_seen: AtomicBool,
    ever_connected: AtomicBool,
    /// The application forced the coming reconnect: its first server is
    /// tried without asking the reconnect delay callback (as nats.go).
    forced: AtomicBool,
}

impl Connector {
    pub(crate) fn new(pool: ServerPool) -> Connector {
        Connector {
            pool: Mutex::new(pool),
            connected_url: Mutex::new(String::new()),
            info: Mutex::new((String::new(), ServerInfo::default())),
            lame_duck_seen: AtomicBool::new(false),
            ever_connected: AtomicBool::new(false),
            forced: AtomicBool::new(false),
        }
    }

    /// Connects as `pass` says; the server's URL and the established
    /// connection. `shutdown` ends a reconnect (not the other passes: the
    /// first connect has no client to close yet, and a lame-duck move
    /// runs beside the read loop, which waits on it itself).
    pub(crate) async fn connect(
        &self,
        opts: &Options,
        log: &Logger,
        events: &Events,
        shutdown: &Shutdown,
        pass: Pass,
    ) -> Result<(String, Established)> {
        let mut once = match pass {
            Pass::Reconnect => None,
            Pass::First => Some(lock(&self.pool).entries().into_iter()),
            Pass::LameDuck => {
                let current = self.connected_url();
                let mut entries = lock(&self.pool).entries();
                entries.retain(|e| e.url != current);
                Some(entries.into_iter())
            }
        };
        let mut last = Error::new(ErrorKind::NoServers, "no servers available");
        let mut pace = Pace::default();
        if pass == Pass::Reconnect && self.forced.swap(false, Ordering::SeqCst) {
            pace.forced();
        }
        loop {
            // An attempt the reconnect delay callback failed: not made.
            let mut refused = None;
            if pass != Pass::First && shutdown.is_set() {
                return Err(Error::closed());
            }
            let (entry, delay) = match once.as_mut() {
                Some(entries) => match entries.next() {
                    Some(entry) => (entry, Duration::ZERO),
                    None => return Err(last),
                },
                None => match self
                    .next_reconnect(opts, &mut pace, &mut refused, shutdown)
                    .await
                {
                    Some(next) => next,
                    None => {
                        return Err(Error::new(
                            ErrorKind::NoServers,
                            "no servers left to reconnect to",
                        ))
                    }
                },
            };
            if !delay.is_zero() {
                tokio::select! {
                    _ = tokio::time::sleep(delay) => {}
                    _ = shutdown.notified() => return Err(Error::closed()),
                }
            }
            if pass != Pass::First && shutdown.is_set() {
                return Err(Error::closed());
            }
            if pass != Pass::First {
                lock(&self.pool).record_attempt(&entry.url);
            }
            let attempt = tokio::time::timeout(
                opts.connect_timeout,
                handshake(opts, log, &entry.url, &entry.addr),
            );
            let result = if let Some(e) = refused {
                drop(attempt);
                Ok(Err(e))
            } else if pass == Pass::Reconnect {
                tokio::select! {
                    r = attempt => r,
                    _ = shutdown.notified() => return Err(Error::closed()),
                }
            } else {
                attempt.await
            };
            let e = match result {
                Ok(Ok(est)) => return Ok((entry.url, est)),
                Ok(Err(e)) => e,
                Err(_) if pass == Pass::LameDuck => {
                    log!(log, Debug, "lame duck: {} timed out", entry.url);
                    continue;
                }
                Err(_) if pass == Pass::First => Error::new(
                    ErrorKind::Timeout,
                    format!("connect to {} timed out", entry.url),
                ),
                Err(_) => Error::new(ErrorKind::Timeout, "connect timed out"),
            };
            if pass == Pass::Reconnect {
                // nats.go's ReconnectErrCB: each failed attempt is told.
                let why = Error::new(
                    e.kind(),
                    format!("reconnect to {} failed: {}", entry.url, e.detail()),
                );
                events.emit(
                    EventKind::ReconnectFailed,
                    Some(entry.url.clone()),
                    Some(why),
                    Vec::new(),
                );
            }
            match pass {
                Pass::First => {
                    log!(log, Warn, "connect to {} failed: {e}", entry.url);
                    lock(&self.pool).record_attempt(&entry.url);
                    last = e;
                }
                Pass::LameDuck => log!(log, Debug, "lame duck: {} refused: {e}", entry.url),
                Pass::Reconnect
                    if matches!(
                        e.kind(),
                        ErrorKind::AuthorizationViolation | ErrorKind::AuthenticationExpired
                    ) =>
                {
                    let repeated = lock(&self.pool).record_auth_error(&entry.url, e.detail());
                    if repeated && !opts.ignore_auth_error_abort {
                        return Err(e);
                    }
                }
                Pass::Reconnect => log!(log, Warn, "reconnect to {} failed: {e}", entry.url),
            }
        }
    }

    /// The next server to try after a loss, and how long to wait first:
    /// the pool's backoff, or, with a reconnect delay callback, the next
    /// server in turn and, before the last of each turn through the pool,
    /// the callback's answer (nats.go's doReconnect). A failed callback
    /// sets `refused`: the attempt is not made, it fails with that error.
    async fn next_reconnect(
        &self,
        o: &Options,
        pace: &mut Pace,
        refused: &mut Option<Error>,
        shutdown: &Shutdown,
    ) -> Option<(PoolEntry, Duration)> {
        let Some(cb) = &o.reconnect_delay_callback else {
            return self.next_candidate(o);
        };
        let next = lock(&self.pool).next_paced(o.max_reconnect_attempts, pace);
        let (entry, turn) = next?;
        let Some(turn) = turn else {
            return Some((entry, Duration::ZERO));
        };
        let answer = tokio::select! {
            a = ask_delay(cb, turn) => a,
            // `connect` sees the shutdown next.
            _ = shutdown.notified() => return Some((entry, Duration::ZERO)),
        };
        match answer {
            ReconnectDelay::Wait(d) => return Some((entry, d)),
            ReconnectDelay::Default => {}
            // The attempt fails after the default wait.
            ReconnectDelay::Failed(e) => *refused = Some(e),
        }
        Some((entry, o.reconnect_time_wait + self.jitter(o)))
    }

    /// A random part of a reconnect wait, up to the jitter for the current
    /// server's kind (TLS or not).
    fn jitter(&self, o: &Options) -> Duration {
        let max = self.jitter_max(o);
        lock(&self.pool).jitter(max)
    }

    fn jitter_max(&self, o: &Options) -> Duration {
        if pool::url_is_tls(&lock(&self.connected_url)) {
            o.reconnect_jitter_tls
        } else {
            o.reconnect_jitter
        }
    }

    /// The next server to try after a loss by the pool's backoff, and how
    /// long to wait first.
    fn next_candidate(&self, o: &Options) -> Option<(PoolEntry, Duration)> {
        let jitter = self.jitter_max(o);
        lock(&self.pool).next_candidate(
            o.max_reconnect_attempts,
            o.reconnect_time_wait,
            o.reconnect_time_wait_max,
            jitter,
        )
    }

    /// Records a freshly established connection to `url`: true when the
    /// client had been connected before (its servers discovered now are
    /// news to announce).
    pub(crate) fn established(&self, url: &str) -> bool {
        *lock(&self.connected_url) = url.to_string();
        lock(&self.pool).record_success(url);
        self.lame_duck_seen.store(false, Ordering::SeqCst);
        self.ever_connected.load(Ordering::SeqCst)
    }

    /// The application forced a reconnect (see `forced`).
    pub(crate) fn mark_forced(&self) {
        self.forced.store(true, Ordering::SeqCst);
    }

    /// Marks the client connected once; true when it had been before (a
    /// reconnect, not the first connect).
    pub(crate) fn mark_connected(&self) -> bool {
        self.ever_connected.swap(true, Ordering::SeqCst)
    }

    /// The connection was lost: its server goes to the back of the pool.
    /// Its URL.
    pub(crate) fn lost(&self) -> String {
        let url = self.connected_url();
        lock(&self.pool).rotate_to_back(&url);
        url
    }

    /// Adds INFO's connect_urls to the pool (unless the options ignore
    /// them); the URLs that are new.
    pub(crate) fn discover(&self, opts: &Options, info: &ServerInfo) -> Vec<String> {
        if opts.ignore_discovered_servers || info.connect_urls.is_empty() {
            return Vec::new();
        }
        // Servers tell a client the URLs of its own kind of port (a
        // websocket client gets the cluster's websocket URLs): they are
        // reached as the server that told of them.
        let via = ServerAddr::parse(&lock(&self.connected_url)).ok();
        let (tls, websocket) = via.map_or((false, false), |a| (a.tls, a.websocket));
        lock(&self.pool).add_discovered(&info.connect_urls, tls, websocket)
    }

    /// An INFO announced lame duck mode: true the first time for this
    /// connection.
    pub(crate) fn lame_duck_announced(&self) -> bool {
        !self.lame_duck_seen.swap(true, Ordering::SeqCst)
    }

    /// The server of the current connection announced lame-duck mode.
    pub(crate) fn in_lame_duck(&self) -> bool {
        self.lame_duck_seen.load(Ordering::SeqCst)
    }

    pub(crate) fn set_info(&self, json: String, info: ServerInfo) {
        *lock(&self.info) = (json, info);
    }

    pub(crate) fn info_json(&self) -> String {
        lock(&self.info).0.clone()
    }

    pub(crate) fn info(&self) -> ServerInfo {
        lock(&self.info).1.clone()
    }

    pub(crate) fn connected_url(&self) -> String {
        lock(&self.connected_url).clone()
    }

    /// The server URLs in the pool (configured and discovered).
    pub(crate) fn servers(&self) -> Vec<String> {
        lock(&self.pool).urls()
    }

    pub(crate) fn server_pool(&self) -> Vec<PoolServer> {
        lock(&self.pool).servers()
    }

    pub(crate) fn set_server_pool(&self, urls: &[String]) -> Result<()> {
        lock(&self.pool).replace(urls)
    }
}
