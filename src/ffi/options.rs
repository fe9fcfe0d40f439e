//! `natsio_options`: connection options, built with setters before connect.

use std::ffi::{c_char, c_void, CStr};
use std::sync::Arc;
use std::time::Duration;

use super::status::natsio_status;
use super::{
    arg_mut, bytes_arg, free_box, guard, opt_str_arg, out_arg, str_arg, write_box, Released,
};
use crate::error::{Error, ErrorKind, Result};
use base64::Engine;

use crate::auth::{AuthFields, Authenticator, Credentials};
use crate::log::LogLevel;
use crate::options::{ErrorEvent, Event, EventKind, Options, ReconnectDelay};
use crate::tls::{Pem, TlsOptions};

/// Connection options. Create with `natsio_options_new`, free with
/// `natsio_options_free`. Not thread-safe: configure from one thread.
pub struct natsio_options {
    pub(crate) opts: Options,
}

/// Receives asynchronous errors: slow consumers (at most one report per
/// subscription per second), server -ERR that keep the connection, a lost
/// connection, a drain timeout. `sid` and `subject` identify the
/// subscription concerned, or are 0 and NULL. `text` is borrowed for the
/// call. Runs on the client's event dispatcher thread.
pub type natsio_error_cb = Option<
    unsafe extern "C" fn(
        user_data: *mut c_void,
        status: natsio_status,
        text: *const c_char,
        sid: u64,
        subject: *const c_char,
    ),
>;

/// Creates options with the defaults: server NATSIO_DEFAULT_URL,
/// connect timeout 5 s, echo on, ping interval 120 s, 2 outstanding pings,
/// write buffer 2 MiB, flush timeout 10 s, drain timeout 30 s, request
/// timeout 5 s, inbox prefix "_INBOX", pending limits 65536 messages and
/// 64 MiB per subscription, max control line 4096.
/// Errors: NATSIO_ERR_NULL_ARGUMENT.
#[no_mangle]
pub unsafe extern "C" fn natsio_options_new(out: *mut *mut natsio_options) -> natsio_status {
    guard(|| {
        let out = out_arg(out, "out")?;
        write_box(
            out,
            natsio_options {
                opts: Options::default(),
            },
        );
        Ok(())
    })
}

/// Frees options. Accepts NULL. Clients already connected with them are
/// not affected.
#[no_mangle]
pub unsafe extern "C" fn natsio_options_free(opts: *mut natsio_options) {
    free_box(opts)
}

unsafe fn with_opts(
    opts: *mut natsio_options,
    f: impl FnOnce(&mut Options) -> Result<()>,
) -> natsio_status {
    guard(|| f(&mut arg_mut(opts, "opts")?.opts))
}

fn ms(v: i64, field: &str) -> Result<Duration> {
    if v <= 0 {
        return Err(Error::new(
            ErrorKind::Config,
            format!("{field}: must be a positive number of milliseconds"),
        ));
    }
    Ok(Duration::from_millis(v as u64))
}

/// Sets the server URL(s): one URL, or several separated by commas
/// (`nats://host:port`, `host:port`, `nats://user:pass@host`). Servers are
/// tried in order. An empty string means NATSIO_DEFAULT_URL (as nats.go's
/// Connect("")).
///
/// Schemes: `nats://` (TLS if the server requires it or TLS is set),
/// `tls://` (or `nats+tls://`: TLS required), `ws://` and `wss://` (the
/// NATS protocol inside WebSocket binary frames, for servers with a
/// `websocket` block or behind an HTTP proxy; `wss://` runs TLS first,
/// with the settings of `natsio_options_set_tls`, and `ws://` does too
/// when TLS is set). Default ports: 4222, 80 for ws, 443 for wss. A
/// WebSocket URL may carry a path (and query), sent in the upgrade request
/// (`wss://proxy.example.com/nats`); the others may not. One list may mix
/// the schemes (unlike the reference client, which refuses that): each
/// server is reached its own way, and servers a server announces are
/// reached with the scheme of the connection that learned of them (a
/// WebSocket client learns the cluster's WebSocket URLs). Masking of
/// WebSocket frames is on, and no compression is negotiated. A failed
/// WebSocket upgrade (not a WebSocket endpoint, an HTTP status other than
/// 101, a wrong Sec-WebSocket-Accept) or a framing violation by the server
/// (RSV bits set, a frame over 64 MiB) fails the attempt with
/// NATSIO_ERR_WEBSOCKET (a kind of NATSIO_ERR_PROTOCOL), whose detail
/// (natsio_last_error) says which.
///
/// Errors: NATSIO_ERR_NULL_ARGUMENT, NATSIO_ERR_INVALID_UTF8,
/// NATSIO_ERR_CONFIG (a malformed URL, an unknown scheme, a path in a
/// non-WebSocket URL).
#[no_mangle]
pub unsafe extern "C" fn natsio_options_set_url(
    opts: *mut natsio_options,
    url: *const c_char,
) -> natsio_status {
    with_opts(opts, |o| {
        o.servers = crate::options::server_list(str_arg(url, "url")?)?;
        Ok(())
    })
}

/// Sets the server URLs from an array of `count` strings.
/// Errors: as `natsio_options_set_url`; NATSIO_ERR_CONFIG when count is 0.
#[no_mangle]
pub unsafe extern "C" fn natsio_options_set_servers(
    opts: *mut natsio_options,
    urls: *const *const c_char,
    count: usize,
) -> natsio_status {
    with_opts(opts, |o| {
        if count == 0 {
            return Err(Error::new(
                ErrorKind::Config,
                "servers: at least one URL is required",
            ));
        }
        let urls = super::strings_arg(urls, count, "urls", "url")?;
        for url in &urls {
            crate::options::ServerAddr::parse(url)?;
        }
        o.servers = urls.into_iter().map(str::to_string).collect();
        Ok(())
    })
}

/// Sets the connection name shown by the server's monitoring; NULL clears it.
#[no_mangle]
pub unsafe extern "C" fn natsio_options_set_name(
    opts: *mut natsio_options,
    name: *const c_char,
) -> natsio_status {
    with_opts(opts, |o| {
        o.name = opt_str_arg(name, "name")?.map(str::to_string);
        Ok(())
    })
}

/// Sets the timeout of each connection attempt (handshake included).
/// Errors: NATSIO_ERR_CONFIG when not positive.
#[no_mangle]
pub unsafe extern "C" fn natsio_options_set_connect_timeout_ms(
    opts: *mut natsio_options,
    timeout_ms: i64,
) -> natsio_status {
    with_opts(opts, |o| {
        o.connect_timeout = ms(timeout_ms, "connect_timeout")?;
        Ok(())
    })
}

/// Whether the server sends this connection its own publishes back when it
/// is subscribed to them (default true).
#[no_mangle]
pub unsafe extern "C" fn natsio_options_set_echo(
    opts: *mut natsio_options,
    echo: bool,
) -> natsio_status {
    with_opts(opts, |o| {
        o.echo = echo;
        Ok(())
    })
}

/// Whether the server acknowledges every protocol operation with `+OK`
/// (the CONNECT field `verbose`, default false). The client reads and
/// ignores the acknowledgements; errors still arrive as `-ERR`.
#[no_mangle]
pub unsafe extern "C" fn natsio_options_set_verbose(
    opts: *mut natsio_options,
    verbose: bool,
) -> natsio_status {
    with_opts(opts, |o| {
        o.verbose = verbose;
        Ok(())
    })
}

/// Whether the server checks this connection's protocol strictly (the
/// CONNECT field `pedantic`, default false): it then also validates the
/// subjects of publishes and subscriptions, which the client validates
/// anyway.
#[no_mangle]
pub unsafe extern "C" fn natsio_options_set_pedantic(
    opts: *mut natsio_options,
    pedantic: bool,
) -> natsio_status {
    with_opts(opts, |o| {
        o.pedantic = pedantic;
        Ok(())
    })
}

/// Sets `user` and `password` (may be NULL). Credentials in the URL
/// take precedence. Errors: NATSIO_ERR_CONFIG when another auth kind is set.
#[no_mangle]
pub unsafe extern "C" fn natsio_options_set_user_password(
    opts: *mut natsio_options,
    user: *const c_char,
    password: *const c_char,
) -> natsio_status {
    with_opts(opts, |o| {
        let user = str_arg(user, "user")?;
        let password = opt_str_arg(password, "password")?;
        o.check_auth_kind("user/password")?;
        o.user = Some(user.into());
        o.password = password.map(Into::into);
        Ok(())
    })
}

/// Sets an authentication token. Errors: NATSIO_ERR_CONFIG when another
/// auth kind is set.
#[no_mangle]
pub unsafe extern "C" fn natsio_options_set_token(
    opts: *mut natsio_options,
    token: *const c_char,
) -> natsio_status {
    with_opts(opts, |o| {
        let token = str_arg(token, "token")?;
        o.check_auth_kind("token")?;
        o.token = Some(token.into());
        Ok(())
    })
}

/// Sets how often the client PINGs the server, and how many PINGs may go
/// unanswered before the connection is declared stale.
/// Errors: NATSIO_ERR_CONFIG when either is not positive.
#[no_mangle]
pub unsafe extern "C" fn natsio_options_set_ping(
    opts: *mut natsio_options,
    interval_ms: i64,
    max_outstanding: i32,
) -> natsio_status {
    with_opts(opts, |o| {
        o.ping_interval = ms(interval_ms, "ping_interval")?;
        if max_outstanding <= 0 {
            return Err(Error::new(
                ErrorKind::Config,
                "max_outstanding_pings: must be positive",
            ));
        }
        o.max_outstanding_pings = max_outstanding as u32;
        Ok(())
    })
}

/// Sets the write buffer bound in bytes: past it, publish waits up to the
/// flush timeout for the writer, then fails with NATSIO_ERR_TIMEOUT
/// (unless `natsio_options_set_wait_for_write_room` turned the wait off).
#[no_mangle]
pub unsafe extern "C" fn natsio_options_set_max_pending_size(
    opts: *mut natsio_options,
    bytes: i64,
) -> natsio_status {
    with_opts(opts, |o| {
        if bytes <= 0 {
            return Err(Error::new(
                ErrorKind::Config,
                "max_pending_size: must be positive",
            ));
        }
        o.max_pending_size = bytes as usize;
        Ok(())
    })
}

/// Whether a publish that finds the write buffer over its bound
/// (`natsio_options_set_max_pending_size`) waits for room.
///
/// `true` (the default): it waits up to the flush timeout for the writer,
/// then fails with NATSIO_ERR_TIMEOUT (the frame is not queued). `false`:
/// the frame is queued over the bound at once and the buffer grows until
/// the writer catches up: for a caller that must never block, such as an
/// event loop that also handles the messages it subscribes to (the Node
/// binding). Memory is then bounded only by how fast the caller publishes;
/// `natsio_client_flush` paces it. Applies to every frame the client
/// writes (publish, request, respond, acks). Errors: NATSIO_ERR_NULL_ARGUMENT.
#[no_mangle]
pub unsafe extern "C" fn natsio_options_set_wait_for_write_room(
    opts: *mut natsio_options,
    wait: bool,
) -> natsio_status {
    with_opts(opts, |o| {
        o.wait_for_write_room = wait;
        Ok(())
    })
}

/// How long a frame that finds the write buffer over its bound
/// (`natsio_options_set_max_pending_size`) pauses for room when
/// `natsio_options_set_wait_for_write_room` is off; 0 (the default): no
/// pause.
///
/// After the pause the frame is queued over the bound: a publish never
/// fails for lack of room, yet while the server keeps reading, a caller
/// that publishes faster than the connection writes is paced by it and the
/// buffer stays near the bound (the Node binding's default, 500 ms, for
/// an event loop that may pause briefly but must not stall). Once a pause
/// ran out without the connection writing anything meanwhile (a server
/// that stopped reading), frames are queued at once, as with no pause,
/// until it writes again; so a stalled server costs the caller one pause,
/// not one per frame. A caller on one of the library's own threads (a
/// callback) never pauses. Ignored while `wait_for_write_room` is on.
/// Errors: NATSIO_ERR_NULL_ARGUMENT; NATSIO_ERR_CONFIG for a negative
/// `pause_ms`.
#[no_mangle]
pub unsafe extern "C" fn natsio_options_set_write_room_pause_ms(
    opts: *mut natsio_options,
    pause_ms: i64,
) -> natsio_status {
    with_opts(opts, |o| {
        o.write_room_pause = match pause_ms {
            0 => None,
            _ => Some(ms(pause_ms, "write_room_pause")?),
        };
        Ok(())
    })
}

/// Default timeout of `natsio_client_flush` (and of a full write buffer).
#[no_mangle]
pub unsafe extern "C" fn natsio_options_set_flush_timeout_ms(
    opts: *mut natsio_options,
    timeout_ms: i64,
) -> natsio_status {
    with_opts(opts, |o| {
        o.flush_timeout = ms(timeout_ms, "flush_timeout")?;
        Ok(())
    })
}

/// Default bound of `natsio_client_drain`.
#[no_mangle]
pub unsafe extern "C" fn natsio_options_set_drain_timeout_ms(
    opts: *mut natsio_options,
    timeout_ms: i64,
) -> natsio_status {
    with_opts(opts, |o| {
        o.drain_timeout = ms(timeout_ms, "drain_timeout")?;
        Ok(())
    })
}

/// Default timeout of requests.
#[no_mangle]
pub unsafe extern "C" fn natsio_options_set_request_timeout_ms(
    opts: *mut natsio_options,
    timeout_ms: i64,
) -> natsio_status {
    with_opts(opts, |o| {
        o.request_timeout = ms(timeout_ms, "request_timeout")?;
        Ok(())
    })
}

/// Sets the prefix of reply inboxes (default "_INBOX").
/// Errors: NATSIO_ERR_CONFIG when not a valid subject without wildcards.
#[no_mangle]
pub unsafe extern "C" fn natsio_options_set_inbox_prefix(
    opts: *mut natsio_options,
    prefix: *const c_char,
) -> natsio_status {
    with_opts(opts, |o| {
        let p = str_arg(prefix, "prefix")?;
        if crate::subject::validate_publish(p).is_err() {
            return Err(Error::new(
                ErrorKind::Config,
                "inbox_prefix: must be a valid subject without wildcards",
            ));
        }
        o.inbox_prefix = p.into();
        Ok(())
    })
}

/// Whether a subscription the server refuses for lack of permission ends
/// with NATSIO_ERR_PERMISSIONS (its `_next` returns it, a callback gets it
/// as its final status) besides the error callback's report (default
/// false: only reported, the subscription stays open and receives nothing).
#[no_mangle]
pub unsafe extern "C" fn natsio_options_set_permission_err_on_subscribe(
    opts: *mut natsio_options,
    enabled: bool,
) -> natsio_status {
    with_opts(opts, |o| {
        o.permission_err_on_subscribe = enabled;
        Ok(())
    })
}

/// Sets the default pending limits of new subscriptions; 0 or less
/// disables a limit.
#[no_mangle]
pub unsafe extern "C" fn natsio_options_set_pending_limits(
    opts: *mut natsio_options,
    msgs: i64,
    bytes: i64,
) -> natsio_status {
    with_opts(opts, |o| {
        o.pending_msgs_limit = msgs;
        o.pending_bytes_limit = bytes;
        Ok(())
    })
}

/// Sets the longest control line accepted from the server (at least 64).
#[no_mangle]
pub unsafe extern "C" fn natsio_options_set_max_control_line(
    opts: *mut natsio_options,
    bytes: i64,
) -> natsio_status {
    with_opts(opts, |o| {
        if bytes < 64 {
            return Err(Error::new(
                ErrorKind::Config,
                "max_control_line: must be at least 64",
            ));
        }
        o.max_control_line = bytes as usize;
        Ok(())
    })
}

/// Registers the error callback (NULL `cb` removes it, and then `release`,
/// if given, is called with `user_data` at once). `release`, if not NULL,
/// is called with `user_data` once no client or options object uses the
/// callback any more: when the options are freed (or the callback replaced)
/// and every client connected with them is closed. (The log and auth
/// callbacks of `natsio_options_set_log` and `natsio_options_set_auth_callbacks`
/// are released when the client is freed instead, or later if a handle taken
/// from it, such as a subscription or a JetStream context, is still alive.)
/// If this function fails, `release` is not called.
#[no_mangle]
pub unsafe extern "C" fn natsio_options_set_error_callback(
    opts: *mut natsio_options,
    cb: natsio_error_cb,
    user_data: *mut c_void,
    release: super::natsio_release_cb,
) -> natsio_status {
    with_opts(opts, |o| {
        let Some(cb) = cb else {
            o.error_callback = None;
            drop(Released::new(user_data, release));
            return Ok(());
        };
        let ud = Released::new(user_data, release);
        o.error_callback = Some(Arc::new(move |ev: &ErrorEvent| {
            let text =
                std::ffi::CString::new(ev.error.detail().replace('\0', " ")).unwrap_or_default();
            let subject = ev
                .subject
                .as_deref()
                .and_then(|s| std::ffi::CString::new(s).ok());
            let status = natsio_status::from(ev.error.kind());
            let subject_ptr = subject.as_deref().map_or(std::ptr::null(), CStr::as_ptr);
            // SAFETY: the application registered `cb` with this user data.
            unsafe {
                cb(
                    ud.ptr(),
                    status,
                    text.as_ptr(),
                    ev.sid.unwrap_or(0),
                    subject_ptr,
                )
            };
        }));
        Ok(())
    })
}

/// Levels of `natsio_options_set_log`; each includes those above it.
#[repr(i32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum natsio_log_level {
    /// Nothing (the default).
    NATSIO_LOG_OFF = 0,
    /// Asynchronous errors (those of the error callback, slow consumers
    /// excepted).
    NATSIO_LOG_ERROR = 1,
    /// Slow consumers, lost connections, failed (re)connect attempts.
    NATSIO_LOG_WARN = 2,
    /// Connected, reconnected, lame duck, servers discovered, closed.
    NATSIO_LOG_INFO = 3,
    /// Each connection attempt.
    NATSIO_LOG_DEBUG = 4,
    /// Every protocol frame sent (`>>> `) and received (`<<< `), payloads
    /// cut to a 32-byte preview, CONNECT's password, token, JWT and
    /// signature redacted.
    NATSIO_LOG_TRACE = 5,
}

/// Receives one log line (`message`, no trailing newline, borrowed for the
/// call) of a client. Called synchronously on the library thread where the
/// event happens (the connection's I/O thread for frames, the caller's
/// thread for frames it writes): it must return quickly and must not call
/// natsio functions that wait.
pub type natsio_log_cb = Option<
    unsafe extern "C" fn(user_data: *mut c_void, level: natsio_log_level, message: *const c_char),
>;

/// Makes clients connected with these options log what they do, up to
/// `level` (a natsio_log_level): to `cb`, or to standard error (`natsio[<name>]
/// LEVEL: text`) when `cb` is NULL. The environment variable NATSIO_LOG
/// (off, error, warn, info, debug, trace) raises the level of every client
/// without a code change, and sends lines to standard error for clients
/// without a callback: `NATSIO_LOG=trace ./app` traces the protocol.
/// `release` follows the rules of `natsio_options_set_error_callback`.
/// Errors: NATSIO_ERR_INVALID_ARGUMENT for a level outside 0..5 (then
/// `release` is not called).
#[no_mangle]
pub unsafe extern "C" fn natsio_options_set_log(
    opts: *mut natsio_options,
    level: i32,
    cb: natsio_log_cb,
    user_data: *mut c_void,
    release: super::natsio_release_cb,
) -> natsio_status {
    with_opts(opts, |o| {
        let Some(level) = LogLevel::from_i32(level) else {
            return Err(Error::new(
                ErrorKind::InvalidArgument,
                format!("log level {level}: must be NATSIO_LOG_OFF (0) to NATSIO_LOG_TRACE (5)"),
            ));
        };
        o.log_level = level;
        let Some(cb) = cb else {
            o.log_callback = None;
            drop(Released::new(user_data, release));
            return Ok(());
        };
        let ud = Released::new(user_data, release);
        o.log_callback = Some(Arc::new(move |level: LogLevel, text: &str| {
            let text = std::ffi::CString::new(text.replace('\0', " ")).unwrap_or_default();
            let level = match level {
                LogLevel::Off => natsio_log_level::NATSIO_LOG_OFF,
                LogLevel::Error => natsio_log_level::NATSIO_LOG_ERROR,
                LogLevel::Warn => natsio_log_level::NATSIO_LOG_WARN,
                LogLevel::Info => natsio_log_level::NATSIO_LOG_INFO,
                LogLevel::Debug => natsio_log_level::NATSIO_LOG_DEBUG,
                LogLevel::Trace => natsio_log_level::NATSIO_LOG_TRACE,
            };
            // SAFETY: the application registered `cb` with this user data.
            unsafe { cb(ud.ptr(), level, text.as_ptr()) };
        }));
        Ok(())
    })
}

/// Sets what the client tells the server it is: CONNECT's `lang` and
/// `version` (the server's monitoring shows them, e.g. `/connz`). Defaults:
/// "natsio-c" and the library's version; the C++, Go and Node bindings set
/// their own. Errors: NATSIO_ERR_NULL_ARGUMENT, NATSIO_ERR_INVALID_UTF8,
/// NATSIO_ERR_INVALID_ARGUMENT for an empty `lang`.
#[no_mangle]
pub unsafe extern "C" fn natsio_options_set_client_lang(
    opts: *mut natsio_options,
    lang: *const c_char,
    version: *const c_char,
) -> natsio_status {
    with_opts(opts, |o| {
        let lang = str_arg(lang, "lang")?;
        let version = str_arg(version, "version")?;
        if lang.is_empty() {
            return Err(Error::new(
                ErrorKind::InvalidArgument,
                "lang: must not be empty",
            ));
        }
        o.client_lang = lang.to_string();
        o.client_version = version.to_string();
        Ok(())
    })
}

/// Connection lifecycle events of `natsio_options_set_event_callback`.
#[repr(i32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum natsio_event_kind {
    /// The first connection was established; `text` is the server URL.
    NATSIO_EVENT_CONNECTED = 0,
    /// The connection was lost and the client is reconnecting; `status`
    /// and `text` say why.
    NATSIO_EVENT_DISCONNECTED = 1,
    /// Connected again, subscriptions restored; `text` is the server URL.
    NATSIO_EVENT_RECONNECTED = 2,
    /// The server entered lame-duck mode. The client keeps receiving and
    /// publishing on this connection while it connects to another server,
    /// then lets the old one go after reading it to its end (nothing it
    /// received or sent is lost); DISCONNECTED and RECONNECTED follow. With
    /// no other server it stays until the server closes the connection.
    /// `text` is the server URL.
    NATSIO_EVENT_LAME_DUCK = 3,
    /// Servers were discovered; `text` lists the new URLs, comma-separated.
    NATSIO_EVENT_SERVERS_DISCOVERED = 4,
    /// The client closed for good; always the last event.
    NATSIO_EVENT_CLOSED = 5,
    /// An attempt to reconnect failed (nats.go's ReconnectErrCB): one
    /// event per attempt while the client keeps trying; `status` is the
    /// attempt's error and `text` names the server and why ("reconnect to
    /// <url> failed: ..."). Comes after DISCONNECTED, before RECONNECTED or
    /// CLOSED.
    NATSIO_EVENT_RECONNECT_FAILED = 6,
}

/// Receives connection lifecycle events, in order, on the client's event
/// dispatcher thread. `status` is NATSIO_OK unless the event has a cause;
/// `text` (borrowed for the call) is described per event kind.
pub type natsio_event_cb = Option<
    unsafe extern "C" fn(
        user_data: *mut c_void,
        kind: natsio_event_kind,
        status: natsio_status,
        text: *const c_char,
    ),
>;

/// Registers the event callback (NULL `cb` removes it). `release` follows
/// the rules of `natsio_options_set_error_callback`. A failed
/// `natsio_client_connect` delivers no event; a client that connected (or
/// was returned by `retry_on_failed_connect`) always ends with
/// NATSIO_EVENT_CLOSED, delivered before its close or free returns.
#[no_mangle]
pub unsafe extern "C" fn natsio_options_set_event_callback(
    opts: *mut natsio_options,
    cb: natsio_event_cb,
    user_data: *mut c_void,
    release: super::natsio_release_cb,
) -> natsio_status {
    with_opts(opts, |o| {
        let Some(cb) = cb else {
            o.event_callback = None;
            drop(Released::new(user_data, release));
            return Ok(());
        };
        let ud = Released::new(user_data, release);
        o.event_callback = Some(Arc::new(move |ev: &Event| {
            let kind = match ev.kind {
                EventKind::Connected => natsio_event_kind::NATSIO_EVENT_CONNECTED,
                EventKind::Disconnected => natsio_event_kind::NATSIO_EVENT_DISCONNECTED,
                EventKind::Reconnected => natsio_event_kind::NATSIO_EVENT_RECONNECTED,
                EventKind::LameDuck => natsio_event_kind::NATSIO_EVENT_LAME_DUCK,
                EventKind::ServersDiscovered => natsio_event_kind::NATSIO_EVENT_SERVERS_DISCOVERED,
                EventKind::Closed => natsio_event_kind::NATSIO_EVENT_CLOSED,
                EventKind::ReconnectFailed => natsio_event_kind::NATSIO_EVENT_RECONNECT_FAILED,
            };
            let status = ev
                .error
                .as_ref()
                .map_or(natsio_status::NATSIO_OK, |e| natsio_status::from(e.kind()));
            let text = match (&ev.error, &ev.url) {
                _ if !ev.servers.is_empty() => ev.servers.join(","),
                (Some(e), _) => e.detail().to_string(),
                (None, Some(u)) => u.clone(),
                (None, None) => String::new(),
            };
            let text = std::ffi::CString::new(text.replace('\0', " ")).unwrap_or_default();
            // SAFETY: the application registered `cb` with this user data.
            unsafe { cb(ud.ptr(), kind, status, text.as_ptr()) };
        }));
        Ok(())
    })
}

/// Whether to reconnect after losing the connection (default true). When
/// false, a lost connection closes the client.
#[no_mangle]
pub unsafe extern "C" fn natsio_options_set_allow_reconnect(
    opts: *mut natsio_options,
    allow: bool,
) -> natsio_status {
    with_opts(opts, |o| {
        o.allow_reconnect = allow;
        Ok(())
    })
}

/// Consecutive failed attempts allowed per server before it is dropped
/// from the pool (default 60; -1: unlimited). Errors: NATSIO_ERR_CONFIG
/// below -1.
#[no_mangle]
pub unsafe extern "C" fn natsio_options_set_max_reconnect_attempts(
    opts: *mut natsio_options,
    attempts: i64,
) -> natsio_status {
    with_opts(opts, |o| {
        if attempts < -1 {
            return Err(Error::new(
                ErrorKind::Config,
                "max_reconnect_attempts: -1 (unlimited) or more",
            ));
        }
        o.max_reconnect_attempts = attempts;
        Ok(())
    })
}

/// Wait between attempts to the same server: `wait_ms` doubling per
/// failed attempt up to `wait_max_ms` (defaults 2000 and 8000).
/// Errors: NATSIO_ERR_CONFIG unless 0 < wait_ms <= wait_max_ms.
#[no_mangle]
pub unsafe extern "C" fn natsio_options_set_reconnect_wait(
    opts: *mut natsio_options,
    wait_ms: i64,
    wait_max_ms: i64,
) -> natsio_status {
    with_opts(opts, |o| {
        let wait = ms(wait_ms, "reconnect_time_wait")?;
        let max = ms(wait_max_ms, "reconnect_time_wait_max")?;
        if max < wait {
            return Err(Error::new(
                ErrorKind::Config,
                "reconnect_time_wait_max: must be at least reconnect_time_wait",
            ));
        }
        o.reconnect_time_wait = wait;
        o.reconnect_time_wait_max = max;
        Ok(())
    })
}

/// Random extra wait added to each reconnect delay, for plain and TLS
/// connections (defaults 100 and 1000 ms; 0 allowed).
#[no_mangle]
pub unsafe extern "C" fn natsio_options_set_reconnect_jitter(
    opts: *mut natsio_options,
    jitter_ms: i64,
    jitter_tls_ms: i64,
) -> natsio_status {
    with_opts(opts, |o| {
        if jitter_ms < 0 || jitter_tls_ms < 0 {
            return Err(Error::new(
                ErrorKind::Config,
                "reconnect_jitter: must not be negative",
            ));
        }
        o.reconnect_jitter = Duration::from_millis(jitter_ms as u64);
        o.reconnect_jitter_tls = Duration::from_millis(jitter_tls_ms as u64);
        Ok(())
    })
}

/// What a `natsio_reconnect_delay_cb` returns to wait what the library
/// would without the callback (reconnect wait plus jitter).
pub const NATSIO_RECONNECT_DELAY_DEFAULT: i64 = -1;

/// Returns how many milliseconds to wait before the next reconnect
/// attempt; `attempts` is the number of the turn through the server pool
/// (1, 2, ... counted afresh on every reconnect). 0 tries at once.
/// NATSIO_RECONNECT_DELAY_DEFAULT waits what the library would without
/// the callback; any other negative value fails the attempt (see
/// `natsio_options_set_reconnect_delay_callback`).
pub type natsio_reconnect_delay_cb =
    Option<unsafe extern "C" fn(user_data: *mut c_void, attempts: i64) -> i64>;

/// Lets the application pace reconnects, as nats.go's CustomReconnectDelay:
/// once the connection is lost (or, with
/// `natsio_options_set_retry_on_failed_connect`, the first connect found no
/// server), the servers of the pool are tried in turn, and before the last
/// server of each turn `cb(user_data, attempts)` is called with the
/// turn's number (1 for the first turn of this reconnect; with one server,
/// before every attempt) and its answer, in milliseconds, is waited. It
/// replaces the backoff of `natsio_options_set_reconnect_wait` and the
/// jitter of `natsio_options_set_reconnect_jitter`; the other servers of a
/// turn are tried without waiting. `natsio_options_set_max_reconnect_attempts`
/// still drops a server after that many failed attempts. The first connect
/// (each server once) and a lame-duck move do not call it, and a reconnect
/// forced by `natsio_client_force_reconnect` tries its first server
/// without calling it (as nats.go's ForceReconnect).
///
/// Called on a library thread of its own (never two at once for one
/// client): a slow callback delays that reconnect attempt by its own time,
/// and nothing else. A close does not wait for a running call (its answer
/// is then ignored, and `release` comes after it returns); no call starts
/// after the close. A negative answer other than
/// NATSIO_RECONNECT_DELAY_DEFAULT is a failure: the library waits the
/// default delay, then counts a failed attempt for that server without
/// connecting, reported like any failed attempt (NATSIO_EVENT_RECONNECT_FAILED,
/// status NATSIO_ERR_CONFIG, detail naming the callback).
///
/// NULL `cb` removes the callback (the pool's backoff applies again).
/// `release` follows the rules of `natsio_options_set_error_callback`.
/// Errors: NATSIO_ERR_NULL_ARGUMENT (`opts`; `release` is then not called).
#[no_mangle]
pub unsafe extern "C" fn natsio_options_set_reconnect_delay_callback(
    opts: *mut natsio_options,
    cb: natsio_reconnect_delay_cb,
    user_data: *mut c_void,
    release: super::natsio_release_cb,
) -> natsio_status {
    with_opts(opts, |o| {
        let Some(cb) = cb else {
            o.reconnect_delay_callback = None;
            drop(Released::new(user_data, release));
            return Ok(());
        };
        let ud = Released::new(user_data, release);
        o.reconnect_delay_callback = Some(Arc::new(move |turn: u64| {
            let attempts = i64::try_from(turn).unwrap_or(i64::MAX);
            // SAFETY: the application registered `cb` with this user data.
            match unsafe { cb(ud.ptr(), attempts) } {
                ms if ms >= 0 => ReconnectDelay::Wait(Duration::from_millis(ms as u64)),
                NATSIO_RECONNECT_DELAY_DEFAULT => ReconnectDelay::Default,
                ms => ReconnectDelay::Failed(Error::new(
                    ErrorKind::Config,
                    format!("the reconnect delay callback failed (returned {ms})"),
                )),
            }
        }));
        Ok(())
    })
}

/// Bytes of publishes kept while disconnected and sent after the
/// reconnect (default 8 MiB; 0: the default; -1: no buffering, publishes
/// fail with NATSIO_ERR_RECONNECT_BUF_EXCEEDED while disconnected).
///
/// The limit counts wire bytes, as nats.go does: each publish takes its
/// whole protocol frame, `PUB <subject> [<reply>] <size>\r\n<payload>\r\n`
/// (HPUB with its headers block when it has headers), e.g. 123 bytes for
/// 100 payload bytes to "survive.buf". A publish fits while the frames
/// buffered so far, publishes left unsent when the connection was lost
/// included, plus its own frame are at most `bytes`; one that does not fit
/// fails with NATSIO_ERR_RECONNECT_BUF_EXCEEDED and is not kept, and the
/// ones kept are all sent, in order, after the reconnect.
#[no_mangle]
pub unsafe extern "C" fn natsio_options_set_reconnect_buf_size(
    opts: *mut natsio_options,
    bytes: i64,
) -> natsio_status {
    with_opts(opts, |o| {
        if bytes < -1 {
            return Err(Error::new(
                ErrorKind::Config,
                "reconnect_buf_size: -1 (disabled) or more",
            ));
        }
        o.reconnect_buf_size = bytes;
        Ok(())
    })
}

/// Try servers in the configured order instead of a random one (default false).
#[no_mangle]
pub unsafe extern "C" fn natsio_options_set_no_randomize(
    opts: *mut natsio_options,
    no_randomize: bool,
) -> natsio_status {
    with_opts(opts, |o| {
        o.no_randomize = no_randomize;
        Ok(())
    })
}

/// Ignore the servers a server announces in INFO (default false).
#[no_mangle]
pub unsafe extern "C" fn natsio_options_set_ignore_discovered_servers(
    opts: *mut natsio_options,
    ignore: bool,
) -> natsio_status {
    with_opts(opts, |o| {
        o.ignore_discovered_servers = ignore;
        Ok(())
    })
}

/// When no server is reachable at connect, return a client that keeps
/// trying in the background (status NATSIO_CONN_RECONNECTING, publishes
/// buffered) instead of failing (default false).
#[no_mangle]
pub unsafe extern "C" fn natsio_options_set_retry_on_failed_connect(
    opts: *mut natsio_options,
    retry: bool,
) -> natsio_status {
    with_opts(opts, |o| {
        o.retry_on_failed_connect = retry;
        Ok(())
    })
}

/// Keep retrying a server that rejects the credentials with the same error
/// twice in a row, instead of closing (default false).
#[no_mangle]
pub unsafe extern "C" fn natsio_options_set_ignore_auth_error_abort(
    opts: *mut natsio_options,
    ignore: bool,
) -> natsio_status {
    with_opts(opts, |o| {
        o.ignore_auth_error_abort = ignore;
        Ok(())
    })
}

fn set_credentials(o: &mut Options, c: Credentials) -> Result<()> {
    o.check_auth_kind(c.kind_name())?;
    c.validate()?;
    o.credentials = Some(c);
    Ok(())
}

/// Authenticates with an NKey seed ("SU..."): the server's nonce is signed
/// on every connect. Errors: NATSIO_ERR_CONFIG (not a valid seed, or another
/// auth kind is set), NATSIO_ERR_NULL_ARGUMENT, NATSIO_ERR_INVALID_UTF8.
#[no_mangle]
pub unsafe extern "C" fn natsio_options_set_nkey_seed(
    opts: *mut natsio_options,
    seed: *const c_char,
) -> natsio_status {
    with_opts(opts, |o| {
        set_credentials(o, Credentials::NKeySeed(str_arg(seed, "seed")?.to_string()))
    })
}

/// Authenticates with the NKey seed in a file, read on every connect.
/// Errors: NATSIO_ERR_CONFIG (missing file, another auth kind).
#[no_mangle]
pub unsafe extern "C" fn natsio_options_set_nkey_file(
    opts: *mut natsio_options,
    path: *const c_char,
) -> natsio_status {
    with_opts(opts, |o| {
        set_credentials(o, Credentials::NKeyFile(str_arg(path, "path")?.into()))
    })
}

/// Authenticates with a .creds file (user JWT + NKey seed), read on every
/// connect. Errors: NATSIO_ERR_CONFIG (missing file, another auth kind).
#[no_mangle]
pub unsafe extern "C" fn natsio_options_set_credentials_file(
    opts: *mut natsio_options,
    path: *const c_char,
) -> natsio_status {
    with_opts(opts, |o| {
        set_credentials(o, Credentials::CredsFile(str_arg(path, "path")?.into()))
    })
}

/// Returns the user JWT to present (NUL-terminated; it must stay valid until
/// the callback is called again or released). NULL fails the connection
/// attempt.
pub type natsio_jwt_cb = Option<unsafe extern "C" fn(user_data: *mut c_void) -> *const c_char>;

/// Signs the server's nonce with the user's Ed25519 key, writing exactly
/// 64 bytes to `signature_out`; returns NATSIO_OK, or an error status to fail
/// the connection attempt.
pub type natsio_sign_cb = Option<
    unsafe extern "C" fn(
        user_data: *mut c_void,
        nonce: *const u8,
        nonce_len: usize,
        signature_out: *mut u8,
    ) -> natsio_status,
>;

struct CallbackAuth {
    jwt: unsafe extern "C" fn(*mut c_void) -> *const c_char,
    /// `natsio_sign_cb`, its status read as an integer
    /// (`status::CALLBACK_OK`).
    sign: unsafe extern "C" fn(*mut c_void, *const u8, usize, *mut u8) -> i32,
    ud: Released,
}

impl Authenticator for CallbackAuth {
    fn authenticate(&self, nonce: &[u8]) -> Result<AuthFields> {
        // SAFETY: the application registered both callbacks with this data.
        let jwt = unsafe { (self.jwt)(self.ud.ptr()) };
        if jwt.is_null() {
            return Err(Error::new(
                ErrorKind::Config,
                "the JWT callback returned NULL",
            ));
        }
        // SAFETY: documented as a NUL-terminated string.
        let jwt = unsafe { CStr::from_ptr(jwt) }
            .to_str()
            .map_err(|_| {
                Error::new(
                    ErrorKind::InvalidUtf8,
                    "the JWT callback returned invalid UTF-8",
                )
            })?
            .to_string();
        let mut sig = [0u8; 64];
        // SAFETY: `sig` has the 64 bytes the callback may write.
        let st =
            unsafe { (self.sign)(self.ud.ptr(), nonce.as_ptr(), nonce.len(), sig.as_mut_ptr()) };
        if st != super::status::CALLBACK_OK {
            return Err(Error::new(
                ErrorKind::Config,
                format!("the signature callback failed with status {st}"),
            ));
        }
        Ok(AuthFields {
            jwt: Some(jwt),
            nkey: None,
            sig: Some(base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(sig)),
            ..AuthFields::default()
        })
    }
}

/// Makes the authenticator `make` gives the options' credentials: checked
/// first (one authentication kind per client), so that on a conflict
/// nothing is made and the caller's `release` is not called.
fn use_authenticator<A: Authenticator + 'static>(
    o: &mut Options,
    make: impl FnOnce() -> A,
) -> Result<()> {
    o.check_auth_kind("authenticator")?;
    o.credentials = Some(Credentials::Custom(Arc::new(make())));
    Ok(())
}

/// Authenticates through application callbacks (keys kept elsewhere, e.g. in
/// an HSM): `jwt_cb` gives the user JWT and `sign_cb` signs the server nonce,
/// on every connect, on a library thread. `release` follows the rules of
/// `natsio_options_set_error_callback`. Errors: NATSIO_ERR_NULL_ARGUMENT
/// (either callback), NATSIO_ERR_CONFIG (another auth kind is set).
#[no_mangle]
pub unsafe extern "C" fn natsio_options_set_auth_callbacks(
    opts: *mut natsio_options,
    jwt_cb: natsio_jwt_cb,
    sign_cb: natsio_sign_cb,
    user_data: *mut c_void,
    release: super::natsio_release_cb,
) -> natsio_status {
    with_opts(opts, |o| {
        let jwt = jwt_cb.ok_or_else(|| super::null("jwt_cb"))?;
        let sign = sign_cb.ok_or_else(|| super::null("sign_cb"))?;
        // SAFETY: natsio_status is repr(i32): the same ABI as i32.
        let sign = std::mem::transmute::<
            unsafe extern "C" fn(*mut c_void, *const u8, usize, *mut u8) -> natsio_status,
            unsafe extern "C" fn(*mut c_void, *const u8, usize, *mut u8) -> i32,
        >(sign);
        use_authenticator(o, || CallbackAuth {
            jwt,
            sign,
            ud: Released::new(user_data, release),
        })
    })
}

/// Gives the user and password to present on a connect: writes the user
/// (NUL-terminated, not NULL) to `user_out` and the password (may be NULL)
/// to `password_out`; both must stay valid until the callback is called
/// again or released. Returns NATSIO_OK, or an error status to fail the
/// connection attempt.
pub type natsio_user_password_cb = Option<
    unsafe extern "C" fn(
        user_data: *mut c_void,
        user_out: *mut *const c_char,
        password_out: *mut *const c_char,
    ) -> natsio_status,
>;

/// Returns the token to present on a connect (NUL-terminated; it must stay
/// valid until the callback is called again or released). NULL fails the
/// connection attempt.
pub type natsio_auth_token_cb =
    Option<unsafe extern "C" fn(user_data: *mut c_void) -> *const c_char>;

/// A string a credentials callback returned.
unsafe fn callback_string(p: *const c_char, what: &str) -> Result<String> {
    if p.is_null() {
        return Err(Error::new(
            ErrorKind::Config,
            format!("the {what} callback returned NULL"),
        ));
    }
    Ok(CStr::from_ptr(p)
        .to_str()
        .map_err(|_| {
            Error::new(
                ErrorKind::InvalidUtf8,
                format!("the {what} callback returned invalid UTF-8"),
            )
        })?
        .to_string())
}

/// User and password from an application callback, on every connect.
struct UserPasswordCallback {
    /// `natsio_user_password_cb`, its status read as an integer
    /// (`status::CALLBACK_OK`).
    cb: unsafe extern "C" fn(*mut c_void, *mut *const c_char, *mut *const c_char) -> i32,
    ud: Released,
}

impl Authenticator for UserPasswordCallback {
    fn authenticate(&self, _nonce: &[u8]) -> Result<AuthFields> {
        let (mut user, mut password) = (std::ptr::null(), std::ptr::null());
        // SAFETY: the application registered the callback with this data.
        let st = unsafe { (self.cb)(self.ud.ptr(), &mut user, &mut password) };
        if st != super::status::CALLBACK_OK {
            return Err(Error::new(
                ErrorKind::Config,
                format!("the user/password callback failed with status {st}"),
            ));
        }
        // SAFETY: documented as NUL-terminated strings (password may be NULL).
        unsafe {
            Ok(AuthFields {
                user: Some(callback_string(user, "user/password")?),
                pass: match password.is_null() {
                    true => None,
                    false => Some(callback_string(password, "user/password")?),
                },
                ..AuthFields::default()
            })
        }
    }
}

/// A token from an application callback, on every connect.
struct TokenCallback {
    cb: unsafe extern "C" fn(*mut c_void) -> *const c_char,
    ud: Released,
}

impl Authenticator for TokenCallback {
    fn authenticate(&self, _nonce: &[u8]) -> Result<AuthFields> {
        // SAFETY: the application registered the callback with this data;
        // it returns a NUL-terminated string or NULL.
        let token = unsafe { callback_string((self.cb)(self.ud.ptr()), "token")? };
        Ok(AuthFields {
            auth_token: Some(token),
            ..AuthFields::default()
        })
    }
}

/// Takes the user and password from `cb`, called on every connect and
/// reconnect (on a library thread, never on two at once for one client),
/// so rotated credentials are picked up: the callable form of
/// `natsio_options_set_user_password`. Credentials in the URL take
/// precedence. `release` follows the rules of
/// `natsio_options_set_error_callback`. A failing callback fails that
/// connection attempt (NATSIO_ERR_CONFIG). Errors: NATSIO_ERR_NULL_ARGUMENT
/// (`cb`), NATSIO_ERR_CONFIG (another auth kind is set).
#[no_mangle]
pub unsafe extern "C" fn natsio_options_set_user_password_callback(
    opts: *mut natsio_options,
    cb: natsio_user_password_cb,
    user_data: *mut c_void,
    release: super::natsio_release_cb,
) -> natsio_status {
    with_opts(opts, |o| {
        let cb = cb.ok_or_else(|| super::null("cb"))?;
        // SAFETY: natsio_status is repr(i32): the same ABI as i32.
        let cb = std::mem::transmute::<
            unsafe extern "C" fn(
                *mut c_void,
                *mut *const c_char,
                *mut *const c_char,
            ) -> natsio_status,
            unsafe extern "C" fn(*mut c_void, *mut *const c_char, *mut *const c_char) -> i32,
        >(cb);
        use_authenticator(o, || UserPasswordCallback {
            cb,
            ud: Released::new(user_data, release),
        })
    })
}

/// Takes the token from `cb`, called on every connect and reconnect: the
/// callable form of `natsio_options_set_token`, otherwise as
/// `natsio_options_set_user_password_callback`. Errors:
/// NATSIO_ERR_NULL_ARGUMENT (`cb`), NATSIO_ERR_CONFIG (another auth kind
/// is set).
#[no_mangle]
pub unsafe extern "C" fn natsio_options_set_token_callback(
    opts: *mut natsio_options,
    cb: natsio_auth_token_cb,
    user_data: *mut c_void,
    release: super::natsio_release_cb,
) -> natsio_status {
    with_opts(opts, |o| {
        let cb = cb.ok_or_else(|| super::null("cb"))?;
        use_authenticator(o, || TokenCallback {
            cb,
            ud: Released::new(user_data, release),
        })
    })
}

/// `natsio_auth_fields.version` of this header.
pub const NATSIO_AUTH_FIELDS_VERSION: u32 = 1;

/// The credentials a `natsio_authenticator_cb` gives for one CONNECT: the
/// fields of the protocol's CONNECT with the same names (`token` is
/// CONNECT's `auth_token`). Each is a NUL-terminated UTF-8 string, or NULL
/// for "not sent"; any combination may be set, and the server decides
/// whether it is enough. The library zeroes the struct and sets `version`
/// before each call: a callback writes only the fields of that version
/// (fields are only ever added at the end, with a higher version), so a
/// callback built with an older header works with a newer library, and
/// one built with a newer header checks `version` before writing a field
/// added later.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct natsio_auth_fields {
    /// NATSIO_AUTH_FIELDS_VERSION (set by the library).
    pub version: u32,
    /// The user of user/password authentication.
    pub user: *const c_char,
    /// The password.
    pub pass: *const c_char,
    /// A token (CONNECT's `auth_token`).
    pub token: *const c_char,
    /// A user JWT (decentralized authentication; with `sig`).
    pub jwt: *const c_char,
    /// An NKey public key ("U..."), for NKey authentication (with `sig`).
    pub nkey: *const c_char,
    /// The Ed25519 signature of the nonce, as CONNECT carries it: URL-safe
    /// base64 of the 64 signature bytes, without padding (standard base64
    /// is accepted by the server too).
    pub sig: *const c_char,
}

super::versioned!(natsio_auth_fields, NATSIO_AUTH_FIELDS_VERSION);

/// Gives the credentials of one connection attempt (nats.go's
/// `Nkey(pubKey, sigCB)` and nats.js's `Authenticator` in one hook).
/// `nonce` is the nonce of the server's INFO (`nonce_len` bytes, followed
/// by a NUL; empty when the server sent none), to be signed for NKey and
/// JWT authentication. Writes the fields to send into `fields_out` (see
/// `natsio_auth_fields`); the strings must stay valid until the callback
/// is called again or released. Returns NATSIO_OK, or an error status to
/// fail the connection attempt.
pub type natsio_authenticator_cb = Option<
    unsafe extern "C" fn(
        user_data: *mut c_void,
        nonce: *const u8,
        nonce_len: usize,
        fields_out: *mut natsio_auth_fields,
    ) -> natsio_status,
>;

/// The raw form of `natsio_authenticator_cb`: the status read as an
/// integer, so a callback returning a value outside `natsio_status` fails
/// the attempt instead of being undefined behaviour.
type RawAuthenticatorCb =
    unsafe extern "C" fn(*mut c_void, *const u8, usize, *mut natsio_auth_fields) -> i32;

/// The CONNECT's credentials from an application callback, on every
/// connect.
struct FieldsCallback {
    cb: RawAuthenticatorCb,
    ud: Released,
}

/// One field an authenticator callback gave: NULL is none.
unsafe fn callback_field(p: *const c_char, name: &str) -> Result<Option<String>> {
    if p.is_null() {
        return Ok(None);
    }
    match CStr::from_ptr(p).to_str() {
        Ok(s) => Ok(Some(s.to_string())),
        Err(_) => Err(Error::new(
            ErrorKind::InvalidUtf8,
            format!("the authenticator callback's {name} is not valid UTF-8"),
        )),
    }
}

impl Authenticator for FieldsCallback {
    fn authenticate(&self, nonce: &[u8]) -> Result<AuthFields> {
        // The nonce, NUL-terminated (a valid pointer even when empty).
        let mut nonce_c = Vec::with_capacity(nonce.len() + 1);
        nonce_c.extend_from_slice(nonce);
        nonce_c.push(0);
        let mut f = <natsio_auth_fields as super::Versioned>::zeroed();
        super::Versioned::set_version(&mut f);
        // SAFETY: the application registered the callback with this data;
        // `f` is a whole struct of this version.
        let st = unsafe { (self.cb)(self.ud.ptr(), nonce_c.as_ptr(), nonce.len(), &mut f) };
        if st != super::status::CALLBACK_OK {
            let name = super::status::text_of(st);
            return Err(Error::new(
                ErrorKind::Config,
                format!("the authenticator callback failed with status {st} ({name})"),
            ));
        }
        // SAFETY: documented as NUL-terminated strings or NULL, valid
        // until the next call.
        unsafe {
            Ok(AuthFields {
                user: callback_field(f.user, "user")?,
                pass: callback_field(f.pass, "pass")?,
                auth_token: callback_field(f.token, "token")?,
                jwt: callback_field(f.jwt, "jwt")?,
                nkey: callback_field(f.nkey, "nkey")?,
                sig: callback_field(f.sig, "sig")?,
            })
        }
    }
}

/// Authenticates through one application callback that gives the
/// CONNECT's credentials (user/password, token, user JWT, NKey public key
/// and nonce signature: any of `natsio_auth_fields`) for each connection
/// attempt: nats.go's `Nkey(pubKey, sigCB)` (set `nkey` and `sig`) and
/// nats.js's custom `Authenticator` functions. `cb` is called on every
/// connect and reconnect, with that server's nonce, on a library thread
/// (never on two at once for one client), so it may block (e.g. ask an
/// HSM to sign) up to the connect timeout. What it gives is serialized as
/// JSON: any text is safe in a field. Credentials in the URL take
/// precedence over its user, password and token. A callback returning an
/// error status fails that attempt with NATSIO_ERR_CONFIG, a field that is
/// not UTF-8 with NATSIO_ERR_INVALID_UTF8 (natsio_last_error says which);
/// a reconnecting client keeps trying. Credentials the server refuses fail
/// it with NATSIO_ERR_AUTHORIZATION. `release` follows the rules of
/// `natsio_options_set_error_callback`. Errors: NATSIO_ERR_NULL_ARGUMENT
/// (`opts`, `cb`), NATSIO_ERR_CONFIG (another auth kind is set).
#[no_mangle]
pub unsafe extern "C" fn natsio_options_set_authenticator(
    opts: *mut natsio_options,
    cb: natsio_authenticator_cb,
    user_data: *mut c_void,
    release: super::natsio_release_cb,
) -> natsio_status {
    with_opts(opts, |o| {
        let cb = cb.ok_or_else(|| super::null("cb"))?;
        // SAFETY: natsio_status is repr(i32): the same ABI as i32.
        let cb: RawAuthenticatorCb = std::mem::transmute(cb);
        use_authenticator(o, || FieldsCallback {
            cb,
            ud: Released::new(user_data, release),
        })
    })
}

/// Signs `data` with the NKey seed `seed` ("SU...", as an NKey seed file
/// or a .creds file holds it), as a server's nonce is signed for NKey and
/// JWT authentication (nats.c's nats_Sign): for an authenticator callback
/// (`natsio_options_set_authenticator`) that holds the seed itself. Writes
/// the seed's public key ("U...") to `public_key_out` (may be NULL) and
/// the 64-byte Ed25519 signature as CONNECT carries it (URL-safe base64
/// without padding) to `sig_out`; free both with `natsio_string_free`.
/// Any thread. Errors: NATSIO_ERR_NULL_ARGUMENT (`seed`, `sig_out`, or
/// `data` with a non-zero `len`), NATSIO_ERR_INVALID_UTF8 (`seed`),
/// NATSIO_ERR_CONFIG (not a valid seed); nothing is written then.
#[no_mangle]
pub unsafe extern "C" fn natsio_nkey_sign(
    seed: *const c_char,
    data: *const u8,
    len: usize,
    public_key_out: *mut *mut c_char,
    sig_out: *mut *mut c_char,
) -> natsio_status {
    guard(|| {
        let seed = str_arg(seed, "seed")?;
        let data = bytes_arg(data.cast(), len, "data")?;
        let sig_out = out_arg(sig_out, "sig_out")?;
        let (public_key, sig) = crate::auth::sign_with_seed(seed, data)?;
        if !public_key_out.is_null() {
            super::write_string(public_key_out, &public_key)?;
        }
        super::write_string(sig_out, &sig)
    })
}

/// Requires TLS for every server, verifying certificates against `ca_file`
/// (NULL: the system's trust roots; PEM), and presents `cert_file` (NULL:
/// none) with `key_file` (NULL: none; PEM, both or neither) for mutual TLS. There is no way to
/// skip verification. Files are checked now and re-read on every connect.
/// Replaces what `natsio_options_set_tls_pem` set.
/// Errors: NATSIO_ERR_CONFIG (unreadable or invalid files, a certificate
/// without its key).
#[no_mangle]
pub unsafe extern "C" fn natsio_options_set_tls(
    opts: *mut natsio_options,
    ca_file: *const c_char,
    cert_file: *const c_char,
    key_file: *const c_char,
) -> natsio_status {
    with_opts(opts, |o| {
        let mut t = o.tls.clone().unwrap_or_default();
        t.ca_file = opt_str_arg(ca_file, "ca_file")?.map(Into::into);
        t.cert_file = opt_str_arg(cert_file, "cert_file")?.map(Into::into);
        t.key_file = opt_str_arg(key_file, "key_file")?.map(Into::into);
        (t.ca_pem, t.cert_pem, t.key_pem) = (None, None, None);
        t.validate()?;
        o.tls = Some(t);
        Ok(())
    })
}

/// Requires TLS for every server, as `natsio_options_set_tls` does, from
/// PEM text in memory instead of files: `ca_pem` (length 0: the system's
/// trust roots) holds the trusted CA certificates, `cert_pem` the client's
/// certificate chain and `key_pem` its private key (both of length 0, or
/// neither) for mutual TLS. The bytes are copied: the buffers may be freed
/// when this returns. Replaces what `natsio_options_set_tls` set, and the
/// other way round. Errors: NATSIO_ERR_CONFIG (no certificate or an invalid
/// one, an invalid key, a certificate without its key),
/// NATSIO_ERR_NULL_ARGUMENT (a NULL buffer with a length above 0).
#[no_mangle]
pub unsafe extern "C" fn natsio_options_set_tls_pem(
    opts: *mut natsio_options,
    ca_pem: *const c_void,
    ca_pem_len: usize,
    cert_pem: *const c_void,
    cert_pem_len: usize,
    key_pem: *const c_void,
    key_pem_len: usize,
) -> natsio_status {
    with_opts(opts, |o| {
        let pem = |p, len, what| -> Result<Option<Pem>> {
            let b = bytes_arg(p, len, what)?;
            Ok((!b.is_empty()).then(|| Pem(Arc::from(b))))
        };
        let mut t = o.tls.clone().unwrap_or_default();
        t.ca_pem = pem(ca_pem, ca_pem_len, "ca_pem")?;
        t.cert_pem = pem(cert_pem, cert_pem_len, "cert_pem")?;
        t.key_pem = pem(key_pem, key_pem_len, "key_pem")?;
        (t.ca_file, t.cert_file, t.key_file) = (None, None, None);
        t.validate()?;
        o.tls = Some(t);
        Ok(())
    })
}

/// Verifies the server certificate against `hostname` instead of the URL's
/// host (e.g. connecting by IP to a certificate for a DNS name). Requires TLS.
#[no_mangle]
pub unsafe extern "C" fn natsio_options_set_tls_hostname(
    opts: *mut natsio_options,
    hostname: *const c_char,
) -> natsio_status {
    with_opts(opts, |o| {
        let h = str_arg(hostname, "hostname")?;
        if rustls::pki_types::ServerName::try_from(h.to_string()).is_err() {
            return Err(Error::new(
                ErrorKind::Config,
                format!("tls hostname {h:?} is not a valid server name"),
            ));
        }
        o.tls.get_or_insert_with(TlsOptions::default).hostname = Some(h.to_string());
        Ok(())
    })
}

/// Starts TLS before the server's INFO, for servers configured with
/// `handshake_first`. Requires TLS.
#[no_mangle]
pub unsafe extern "C" fn natsio_options_set_tls_handshake_first(
    opts: *mut natsio_options,
    first: bool,
) -> natsio_status {
    with_opts(opts, |o| {
        o.tls
            .get_or_insert_with(TlsOptions::default)
            .handshake_first = first;
        Ok(())
    })
}

/// Adds a header to the WebSocket upgrade request of `ws://` and `wss://`
/// servers (a proxy's authorization, a routing key, ...); headers added
/// twice are sent twice. The request's own headers (Host, Upgrade,
/// Connection, Sec-WebSocket-*) cannot be replaced. Without effect on
/// other servers. Errors: NATSIO_ERR_NULL_ARGUMENT, NATSIO_ERR_INVALID_UTF8,
/// NATSIO_ERR_CONFIG (an empty name or one with other than letters, digits
/// and `!#$%&'*+-.^_|~`, a value with a control character, or one of the
/// request's own headers).
#[no_mangle]
pub unsafe extern "C" fn natsio_options_add_ws_header(
    opts: *mut natsio_options,
    name: *const c_char,
    value: *const c_char,
) -> natsio_status {
    with_opts(opts, |o| {
        let name = str_arg(name, "name")?;
        let value = str_arg(value, "value")?;
        crate::ws::check_header(name, value)?;
        o.websocket
            .headers
            .push((name.to_string(), value.to_string()));
        Ok(())
    })
}

/// Asks `ws://` and `wss://` servers to accept unmasked frames from this
/// client (nats-server's `Nats-No-Masking` request header; default false).
/// The client stops masking only when the server agrees in its upgrade
/// answer, saving a pass over every byte it sends; a proxy between them
/// that inspects frames may refuse unmasked ones, so keep it off behind
/// one.
#[no_mangle]
pub unsafe extern "C" fn natsio_options_set_ws_no_masking(
    opts: *mut natsio_options,
    no_masking: bool,
) -> natsio_status {
    with_opts(opts, |o| {
        o.websocket.no_masking = no_masking;
        Ok(())
    })
}
