//! Connection options, with the reference client's defaults.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use crate::auth::Credentials;
use crate::error::{Error, ErrorKind, Result};
use crate::log::{LogCallback, LogLevel};
pub use crate::server_addr::ServerAddr;
use crate::tls::TlsOptions;
use crate::ws::WsOptions;

/// An asynchronous error reported to the application (slow consumer,
/// server -ERR, failed callback, drain timeout, lost connection).
#[derive(Debug, Clone)]
pub struct ErrorEvent {
    pub error: Error,
    /// The subscription concerned, if any.
    pub sid: Option<u64>,
    pub subject: Option<String>,
}

pub type ErrorCallback = Arc<dyn Fn(&ErrorEvent) + Send + Sync>;

/// Connection lifecycle events, delivered in order on the client's event
/// dispatcher thread.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventKind {
    /// The first connection was established.
    Connected,
    /// The connection was lost; the client is reconnecting.
    Disconnected,
    /// The client connected again and restored its subscriptions.
    Reconnected,
    /// The server entered lame-duck mode; the client keeps the connection
    /// while it connects elsewhere, then moves without losing anything.
    LameDuck,
    /// The server announced servers the pool did not know.
    ServersDiscovered,
    /// The client closed for good (always the last event).
    Closed,
    /// An attempt to reconnect to a server failed (one event per attempt;
    /// the error says which server and why). The client keeps trying.
    ReconnectFailed,
}

#[derive(Debug, Clone)]
pub struct Event {
    pub kind: EventKind,
    /// The server URL concerned (connected, reconnected, lame duck).
    pub url: Option<String>,
    /// Why (disconnected, closed after a failure).
    pub error: Option<Error>,
    /// Newly discovered server URLs.
    pub servers: Vec<String>,
}

pub type EventCallback = Arc<dyn Fn(&Event) + Send + Sync>;

/// What the application's reconnect delay callback answered.
#[derive(Debug, Clone)]
pub enum ReconnectDelay {
    /// Wait this long before the next attempt.
    Wait(Duration),
    /// Wait what the library would without a callback (reconnect wait
    /// plus jitter): the answer was not had in time.
    Default,
    /// The callback failed: the attempt it paces fails with this error
    /// after the default wait.
    Failed(Error),
}

/// Asked, with the number of the turn through the server pool (1 for the
/// first of a reconnect), for the wait before the last server of that
/// turn is tried (nats.go's CustomReconnectDelay). Runs on a library
/// thread of its own, never on the runtime.
pub type ReconnectDelayCallback = Arc<dyn Fn(u64) -> ReconnectDelay + Send + Sync>;

/// What a subscription does when its pending limits are exceeded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PendingPolicy {
    /// Discard the arriving message.
    #[default]
    DropNew,
    /// Evict the oldest queued messages to make room.
    DropOld,
    /// Pause reading from the socket until the consumer catches up.
    Block,
    /// Fail the subscription with a slow-consumer error.
    Error,
}

#[derive(Clone)]
pub struct Options {
    pub servers: Vec<String>,
    pub name: Option<String>,
    pub connect_timeout: Duration,
    pub verbose: bool,
    pub pedantic: bool,
    pub echo: bool,
    pub user: Option<String>,
    pub password: Option<String>,
    pub token: Option<String>,
    /// NKey, credentials-file or application-provided authentication.
    pub credentials: Option<Credentials>,
    /// TLS settings; `Some` requires TLS for every server.
    pub tls: Option<TlsOptions>,
    /// The WebSocket upgrade's extra headers and masking (ws/wss servers).
    pub websocket: WsOptions,
    pub ping_interval: Duration,
    pub max_outstanding_pings: u32,
    pub max_pending_size: usize,
    /// Whether a frame that finds the write buffer over `max_pending_size`
    /// waits for room (up to `flush_timeout`), or is queued over the bound
    /// at once: an event loop that also reads what it publishes must not
    /// stop in a publish while its subscriptions fill up.
    pub wait_for_write_room: bool,
    /// With `wait_for_write_room` off: how long a frame that finds the
    /// write buffer over `max_pending_size` waits for room before it is
    /// queued over the bound anyway (`None`: not at all). Publishing is
    /// paced by the connection while the server keeps reading, and never
    /// fails for lack of room; once a pause ran out without the writer
    /// taking anything (a stopped server), frames are queued at once until
    /// it does.
    pub write_room_pause: Option<Duration>,
    pub flush_timeout: Duration,
    pub drain_timeout: Duration,
    pub request_timeout: Duration,
    pub inbox_prefix: String,
    /// A subscription the server refuses (a permissions violation) ends
    /// with that error instead of only reporting it (nats.go's
    /// PermissionErrOnSubscribe).
    pub permission_err_on_subscribe: bool,
    /// Default per-subscription limits; 0 or less disables a limit.
    pub pending_msgs_limit: i64,
    pub pending_bytes_limit: i64,
    pub max_control_line: usize,
    pub error_callback: Option<ErrorCallback>,
    pub event_callback: Option<EventCallback>,
    /// Log lines up to `log_level` go to `log_callback`, or to standard
    /// error without one; `NATSIO_LOG=<level>` raises the level (see
    /// [`crate::log`]).
    pub log_level: LogLevel,
    pub log_callback: Option<LogCallback>,
    /// What CONNECT tells the server this client is (`lang`, `version`;
    /// shown by the server's monitoring): each binding names itself.
    pub client_lang: String,
    pub client_version: String,
    // Reconnect and server pool.
    pub allow_reconnect: bool,
    /// Consecutive attempts per server; negative: unlimited.
    pub max_reconnect_attempts: i64,
    pub reconnect_time_wait: Duration,
    pub reconnect_time_wait_max: Duration,
    pub reconnect_jitter: Duration,
    pub reconnect_jitter_tls: Duration,
    /// Replaces the backoff and jitter of reconnects (see
    /// [`ReconnectDelayCallback`]).
    pub reconnect_delay_callback: Option<ReconnectDelayCallback>,
    pub no_randomize: bool,
    pub ignore_discovered_servers: bool,
    pub retry_on_failed_connect: bool,
    /// Wire bytes (whole PUB/HPUB frames) of publishes kept while
    /// disconnected; 0: 8 MiB; negative disables.
    pub reconnect_buf_size: i64,
    pub ignore_auth_error_abort: bool,
}

/// The server a client connects to when given none (nats.go's DefaultURL).
pub const DEFAULT_URL: &str = "nats://127.0.0.1:4222";

/// The server list of a comma-separated URL string: the URLs, trimmed,
/// each checked; an empty string (or one of only commas and spaces) means
/// `DEFAULT_URL`, as in nats.go.
pub(crate) fn server_list(url: &str) -> Result<Vec<String>> {
    let mut servers: Vec<String> = url
        .split(',')
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .collect();
    if servers.is_empty() {
        servers.push(DEFAULT_URL.to_string());
    }
    for s in &servers {
        ServerAddr::parse(s)?;
    }
    Ok(servers)
}

/// CONNECT's `lang` unless a binding names itself: the C ABI's.
pub const DEFAULT_CLIENT_LANG: &str = "natsio-c";

impl Default for Options {
    fn default() -> Self {
        Options {
            servers: vec![DEFAULT_URL.into()],
            name: None,
            connect_timeout: Duration::from_secs(5),
            verbose: false,
            pedantic: false,
            echo: true,
            user: None,
            password: None,
            token: None,
            credentials: None,
            tls: None,
            websocket: WsOptions::default(),
            ping_interval: Duration::from_secs(120),
            max_outstanding_pings: 2,
            max_pending_size: 2 * 1024 * 1024,
            wait_for_write_room: true,
            write_room_pause: None,
            flush_timeout: Duration::from_secs(10),
            drain_timeout: Duration::from_secs(30),
            request_timeout: Duration::from_secs(5),
            inbox_prefix: "_INBOX".into(),
            permission_err_on_subscribe: false,
            pending_msgs_limit: 65_536,
            pending_bytes_limit: 64 * 1024 * 1024,
            max_control_line: 4096,
            error_callback: None,
            event_callback: None,
            log_level: LogLevel::Off,
            log_callback: None,
            client_lang: DEFAULT_CLIENT_LANG.into(),
            client_version: env!("CARGO_PKG_VERSION").into(),
            allow_reconnect: true,
            max_reconnect_attempts: 60,
            reconnect_time_wait: Duration::from_secs(2),
            reconnect_time_wait_max: Duration::from_secs(8),
            reconnect_jitter: Duration::from_millis(100),
            reconnect_jitter_tls: Duration::from_secs(1),
            reconnect_delay_callback: None,
            no_randomize: false,
            ignore_discovered_servers: false,
            retry_on_failed_connect: false,
            reconnect_buf_size: 8 * 1024 * 1024,
            ignore_auth_error_abort: false,
        }
    }
}

impl fmt::Debug for Options {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Options")
            .field("servers", &self.servers)
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

/// Two authentication kinds set at once: one kind only.
fn auth_conflict(setting: &str, set: &str) -> Error {
    Error::new(
        ErrorKind::Config,
        format!("{setting}: {set} is already set (one authentication kind only)"),
    )
}

impl Options {
    /// The authentication kinds set: "user/password", "token", or the
    /// credentials' kind (`Credentials::kind_name`).
    fn auth_kinds(&self) -> Vec<&'static str> {
        [
            (
                self.user.is_some() || self.password.is_some(),
                "user/password",
            ),
            (self.token.is_some(), "token"),
            (
                self.credentials.is_some(),
                self.credentials.as_ref().map_or("", Credentials::kind_name),
            ),
        ]
        .into_iter()
        .filter_map(|(set, name)| set.then_some(name))
        .collect()
    }

    /// Fails with a config error naming both kinds when an authentication
    /// kind other than `setting` (a name `auth_kinds` gives) is set
    /// already: one kind only, as `validate` checks of the whole.
    pub fn check_auth_kind(&self, setting: &str) -> Result<()> {
        match self.auth_kinds().into_iter().find(|k| *k != setting) {
            Some(set) => Err(auth_conflict(setting, set)),
            None => Ok(()),
        }
    }

    /// Checks the options together, naming the offending field.
    pub fn validate(&self) -> Result<()> {
        let cfg = |m: &str| Err(Error::new(ErrorKind::Config, m.to_string()));
        if self.servers.is_empty() {
            return cfg("servers: at least one server URL is required");
        }
        for s in &self.servers {
            ServerAddr::parse(s)?;
        }
        if let [first, second, ..] = self.auth_kinds()[..] {
            return Err(auth_conflict(second, first));
        }
        if let Some(c) = &self.credentials {
            c.validate()?;
        }
        if let Some(t) = &self.tls {
            t.validate()?;
        }
        if self.inbox_prefix.is_empty()
            || crate::subject::validate_publish(&self.inbox_prefix).is_err()
        {
            return cfg("inbox_prefix: must be a valid subject without wildcards");
        }
        if self.max_control_line < 64 {
            return cfg("max_control_line: must be at least 64");
        }
        if self.max_pending_size == 0 {
            return cfg("max_pending_size: must be positive");
        }
        if self.max_outstanding_pings == 0 {
            return cfg("max_outstanding_pings: must be positive");
        }
        if self.ping_interval.is_zero() {
            return cfg("ping_interval: must be positive");
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_url_matches_the_header() {
        let header = include_str!("../include/natsio.h");
        let define = format!("#define NATSIO_DEFAULT_URL \"{DEFAULT_URL}\"");
        assert!(header.contains(&define), "include/natsio.h lacks {define}");
    }

    #[test]
    fn an_empty_url_is_the_default_url() {
        for url in ["", " ", ",", " , "] {
            assert_eq!(server_list(url).unwrap(), vec![DEFAULT_URL.to_string()]);
        }
        assert_eq!(
            server_list("a:1, b:2").unwrap(),
            vec!["a:1".to_string(), "b:2".to_string()]
        );
        assert!(server_list("nats://:4222").is_err());
    }

    #[test]
    fn websocket_urls() {
        let a = ServerAddr::parse("ws://h").unwrap();
        assert_eq!(
            (a.websocket, a.tls, a.port, a.path.as_str()),
            (true, false, 80, "/")
        );
        let a = ServerAddr::parse("wss://u:p@h/nats/ws?x=1").unwrap();
        assert_eq!((a.websocket, a.tls, a.port), (true, true, 443));
        assert_eq!(
            (a.path.as_str(), a.user.as_deref()),
            ("/nats/ws?x=1", Some("u"))
        );
        let a = ServerAddr::parse("WS://[::1]:8080?t=1").unwrap();
        assert_eq!(
            (a.host.as_str(), a.port, a.path.as_str()),
            ("::1", 8080, "/?t=1")
        );
        // Mixed lists are allowed.
        assert_eq!(server_list("ws://a:1,nats://b:2,wss://c").unwrap().len(), 3);
    }
}
