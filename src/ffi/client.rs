//! `natsio_client`: a connection to a NATS server and the core verbs.

use std::ffi::{c_char, c_void};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::msg::natsio_msg;
use super::options::natsio_options;
use super::replies::natsio_replies;
use super::status::natsio_status;
use super::sub::{natsio_sub, natsio_sub_options, sub_options};
use super::token::natsio_token;
use super::{
    arg, bytes_arg, guard, guard_value, guard_void, ms_timeout, opt_arg_headers, opt_str_arg,
    out_arg, str_arg, write_box, write_string, Released,
};
use crate::client::{Client, ConnState, RequestManyOptions};
use crate::error::{Error, Result};
use crate::headers::Headers;
use crate::message::Message;
use crate::options::Options;

/// A client connection. Owned by the caller, freed with
/// `natsio_client_free`. Every function is thread-safe.
pub struct natsio_client {
    client: Client,
}

/// Connection states of `natsio_client_status`.
#[repr(i32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum natsio_conn_status {
    NATSIO_CONN_DISCONNECTED = 0,
    NATSIO_CONN_CONNECTING = 1,
    NATSIO_CONN_CONNECTED = 2,
    NATSIO_CONN_RECONNECTING = 3,
    NATSIO_CONN_DRAINING = 4,
    NATSIO_CONN_CLOSED = 5,
}

/// Client traffic counters.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct natsio_client_stats {
    pub in_msgs: u64,
    pub out_msgs: u64,
    /// Payload bytes received.
    pub in_bytes: u64,
    /// Payload bytes published.
    pub out_bytes: u64,
    pub reconnects: u64,
    /// Asynchronous errors reported (slow consumers, server -ERR, ...).
    pub errors: u64,
}

/// Options of `natsio_client_request_many`.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct natsio_request_many_options {
    /// Stop after this many replies; 0 or less: no limit.
    pub max_msgs: i64,
    /// Stop when no reply arrives for this long after the first; 0 or less: none.
    pub stall_ms: i64,
    /// Overall deadline; 0 or less: the client's request timeout.
    pub timeout_ms: i64,
}

/// Receives a message in callback mode. `msg` is borrowed for the call
/// (`natsio_msg_clone` keeps it); `sub` is the subscription's handle, which
/// the callback may free. Runs on the subscription's own dispatcher thread,
/// one message at a time, in order; it may block and may call any natsio
/// function.
pub type natsio_msg_cb = Option<
    unsafe extern "C" fn(user_data: *mut c_void, sub: *mut natsio_sub, msg: *const natsio_msg),
>;

impl natsio_client {
    pub(crate) fn inner(&self) -> &Arc<crate::client::ClientInner> {
        self.client.inner_for_ffi()
    }
}

fn client<'a>(c: *const natsio_client) -> Result<&'a Client> {
    // SAFETY: the caller passes a live handle or NULL.
    unsafe { arg(c, "client").map(|c| &c.client) }
}

/// Asynchronous verbs fail at once on a closed client, like the blocking ones.
fn ensure_open(cl: &Client) -> Result<()> {
    match cl.status() {
        ConnState::Closed => Err(Error::closed()),
        _ => Ok(()),
    }
}

fn connect(opts: Options, out: *mut *mut natsio_client) -> Result<()> {
    let out = out_arg(out, "client_out")?;
    let client = Client::connect(opts)?;
    // SAFETY: checked non-NULL above.
    unsafe { write_box(out, natsio_client { client }) };
    Ok(())
}

/// Connects with `opts` (NULL: defaults) and returns the client through
/// `client_out` once the server accepted the connection. Blocks up to the
/// connect timeout per server. Errors: NATSIO_ERR_NULL_ARGUMENT,
/// NATSIO_ERR_CONFIG, NATSIO_ERR_NO_SERVERS, NATSIO_ERR_TIMEOUT,
/// NATSIO_ERR_AUTHORIZATION, NATSIO_ERR_ILLEGAL_STATE (on a runtime thread).
#[no_mangle]
pub unsafe extern "C" fn natsio_client_connect(
    opts: *const natsio_options,
    client_out: *mut *mut natsio_client,
) -> natsio_status {
    guard(|| {
        let o = opts.as_ref().map(|o| o.opts.clone()).unwrap_or_default();
        connect(o, client_out)
    })
}

/// Connects to `url` (comma-separated URLs allowed) with default options.
#[no_mangle]
pub unsafe extern "C" fn natsio_client_connect_url(
    url: *const c_char,
    client_out: *mut *mut natsio_client,
) -> natsio_status {
    guard(|| {
        let url = str_arg(url, "url")?;
        let servers = url
            .split(',')
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty())
            .collect();
        connect(
            Options {
                servers,
                ..Options::default()
            },
            client_out,
        )
    })
}

/// Publishes `len` bytes of `data` (NULL allowed when len is 0) to
/// `subject`. Returns once the frame is buffered; it does not wait for the
/// server. Errors: NATSIO_ERR_NULL_ARGUMENT, NATSIO_ERR_INVALID_UTF8,
/// NATSIO_ERR_BAD_SUBJECT, NATSIO_ERR_MAX_PAYLOAD (checked before anything is
/// written), NATSIO_ERR_CONNECTION_CLOSED, NATSIO_ERR_TIMEOUT (write buffer
/// full for flush_timeout).
#[no_mangle]
pub unsafe extern "C" fn natsio_client_publish(
    c: *const natsio_client,
    subject: *const c_char,
    data: *const c_void,
    len: usize,
) -> natsio_status {
    guard(|| {
        let cl = client(c)?;
        cl.publish(str_arg(subject, "subject")?, bytes_arg(data, len, "data")?)
    })
}

/// Publishes with an optional reply subject and optional headers (either
/// may be NULL). Errors: as `natsio_client_publish`; the max_payload check
/// counts headers and data together.
#[no_mangle]
pub unsafe extern "C" fn natsio_client_publish_with(
    c: *const natsio_client,
    subject: *const c_char,
    reply: *const c_char,
    headers: *const Headers,
    data: *const c_void,
    len: usize,
) -> natsio_status {
    guard(|| {
        let cl = client(c)?;
        cl.publish_with(
            str_arg(subject, "subject")?,
            opt_str_arg(reply, "reply")?,
            opt_arg_headers(headers),
            bytes_arg(data, len, "data")?,
        )
    })
}

/// Subscribes in iterator mode (read with `natsio_sub_next_msg`). `queue`
/// (NULL: none) joins a queue group; `opts` may be NULL. Registration takes
/// effect at once: no message sent after this returns is missed (call
/// `natsio_client_flush` to be sure the server has it). Errors:
/// NATSIO_ERR_BAD_SUBJECT, NATSIO_ERR_BAD_QUEUE_NAME,
/// NATSIO_ERR_INVALID_ARGUMENT (bad policy), NATSIO_ERR_CONNECTION_CLOSED.
#[no_mangle]
pub unsafe extern "C" fn natsio_client_subscribe(
    c: *const natsio_client,
    subject: *const c_char,
    queue: *const c_char,
    opts: *const natsio_sub_options,
    sub_out: *mut *mut natsio_sub,
) -> natsio_status {
    guard(|| {
        let cl = client(c)?;
        let out = out_arg(sub_out, "sub_out")?;
        let sub = cl.subscribe(
            str_arg(subject, "subject")?,
            opt_str_arg(queue, "queue")?,
            sub_options(opts.as_ref())?,
        )?;
        write_box(out, natsio_sub::new(sub));
        Ok(())
    })
}

/// Subscribes in callback mode: `cb` receives every message on the
/// subscription's dispatcher thread. `release` (may be NULL) is called with
/// `user_data` after the last callback, once the subscription is closed.
/// If this function fails, `release` is not called: `user_data` stays the
/// caller's. Errors: as `natsio_client_subscribe`; NATSIO_ERR_NULL_ARGUMENT
/// for `cb`.
#[no_mangle]
pub unsafe extern "C" fn natsio_client_subscribe_callback(
    c: *const natsio_client,
    subject: *const c_char,
    queue: *const c_char,
    opts: *const natsio_sub_options,
    cb: natsio_msg_cb,
    user_data: *mut c_void,
    release: super::natsio_release_cb,
    sub_out: *mut *mut natsio_sub,
) -> natsio_status {
    guard(|| {
        let cl = client(c)?;
        let out = out_arg(sub_out, "sub_out")?;
        let Some(f) = cb else {
            return Err(super::null("cb"));
        };
        let sub = cl.subscribe(
            str_arg(subject, "subject")?,
            opt_str_arg(queue, "queue")?,
            sub_options(opts.as_ref())?,
        )?;
        let handle = Box::into_raw(Box::new(natsio_sub::new(sub)));
        let handle_addr = handle as usize;
        let weak = Arc::downgrade(cl.inner_for_ffi());
        let ud = Arc::new(Released::new(user_data, release));
        let ud_in_handler = Arc::clone(&ud);
        let handler = Box::new(move |m: Message| {
            let msg = natsio_msg::new(m, weak.clone());
            // SAFETY: the handle outlives every callback: freeing it first
            // closes the subscription and waits for this thread.
            unsafe { f(ud_in_handler.ptr(), handle_addr as *mut natsio_sub, &msg) };
        });
        if let Err(e) = (*handle).sub.set_handler(handler, Box::new(|| {})) {
            drop(Box::from_raw(handle));
            // On failure the user data stays the caller's.
            if let Ok(r) = Arc::try_unwrap(ud) {
                r.disarm();
            }
            return Err(e);
        }
        drop(ud);
        *out = handle;
        Ok(())
    })
}

fn request_timeout(cl: &Client, ms: i64) -> Duration {
    ms_timeout(ms)
        .filter(|d| !d.is_zero())
        .unwrap_or(cl.options().request_timeout)
}

/// Sends a request and waits for one reply, returned owned through
/// `reply_out`. `timeout_ms` of 0 or less means the client's request timeout.
/// Blocks. Errors: NATSIO_ERR_NO_RESPONDERS (at once, when nobody is
/// subscribed), NATSIO_ERR_TIMEOUT, and those of `natsio_client_publish_with`.
#[no_mangle]
pub unsafe extern "C" fn natsio_client_request(
    c: *const natsio_client,
    subject: *const c_char,
    headers: *const Headers,
    data: *const c_void,
    len: usize,
    timeout_ms: i64,
    reply_out: *mut *mut natsio_msg,
) -> natsio_status {
    guard(|| {
        let cl = client(c)?;
        let out = out_arg(reply_out, "reply_out")?;
        let m = cl.request(
            str_arg(subject, "subject")?,
            opt_arg_headers(headers),
            bytes_arg(data, len, "data")?,
            Some(request_timeout(cl, timeout_ms)),
        )?;
        write_box(out, natsio_msg::new(m, Arc::downgrade(cl.inner_for_ffi())));
        Ok(())
    })
}

/// Starts a request and returns its token at once; the reply is read with
/// `natsio_token_msg`. The token completes with the reply,
/// NATSIO_ERR_NO_RESPONDERS, NATSIO_ERR_TIMEOUT or NATSIO_ERR_CANCELLED.
/// Errors (immediate): as `natsio_client_publish_with`.
#[no_mangle]
pub unsafe extern "C" fn natsio_client_request_async(
    c: *const natsio_client,
    subject: *const c_char,
    headers: *const Headers,
    data: *const c_void,
    len: usize,
    timeout_ms: i64,
    token_out: *mut *mut natsio_token,
) -> natsio_status {
    guard(|| {
        let cl = client(c)?;
        let out = out_arg(token_out, "token_out")?;
        let comp = cl.request_async(
            str_arg(subject, "subject")?,
            opt_arg_headers(headers),
            bytes_arg(data, len, "data")?,
            Some(request_timeout(cl, timeout_ms)),
        )?;
        write_box(
            out,
            natsio_token::new(comp, Arc::downgrade(cl.inner_for_ffi())),
        );
        Ok(())
    })
}

/// Sends one request and returns an iterator over its replies (ADR-47);
/// read them with `natsio_replies_next`. `opts` may be NULL (no count limit,
/// no stall, the client's request timeout).
#[no_mangle]
pub unsafe extern "C" fn natsio_client_request_many(
    c: *const natsio_client,
    subject: *const c_char,
    headers: *const Headers,
    data: *const c_void,
    len: usize,
    opts: *const natsio_request_many_options,
    replies_out: *mut *mut natsio_replies,
) -> natsio_status {
    guard(|| {
        let cl = client(c)?;
        let out = out_arg(replies_out, "replies_out")?;
        let o = opts.as_ref().copied().unwrap_or_default();
        let rm = RequestManyOptions {
            max_msgs: (o.max_msgs > 0).then_some(o.max_msgs as u64),
            stall: (o.stall_ms > 0).then(|| Duration::from_millis(o.stall_ms as u64)),
            timeout: request_timeout(cl, o.timeout_ms),
        };
        let it = cl.request_many(
            str_arg(subject, "subject")?,
            opt_arg_headers(headers),
            bytes_arg(data, len, "data")?,
            rm,
        )?;
        write_box(
            out,
            natsio_replies {
                stopper: it.stopper(),
                it: Mutex::new(it),
                client: Arc::downgrade(cl.inner_for_ffi()),
            },
        );
        Ok(())
    })
}

/// Waits until the server has processed everything sent before this call
/// (a PING/PONG round trip). `timeout_ms` negative: the flush timeout.
/// Blocks. Errors: NATSIO_ERR_TIMEOUT, NATSIO_ERR_CONNECTION_CLOSED.
#[no_mangle]
pub unsafe extern "C" fn natsio_client_flush(
    c: *const natsio_client,
    timeout_ms: i64,
) -> natsio_status {
    guard(|| client(c)?.flush(ms_timeout(timeout_ms)))
}

/// Starts a flush and returns its token at once.
#[no_mangle]
pub unsafe extern "C" fn natsio_client_flush_async(
    c: *const natsio_client,
    token_out: *mut *mut natsio_token,
) -> natsio_status {
    guard(|| {
        let cl = client(c)?;
        let out = out_arg(token_out, "token_out")?;
        ensure_open(cl)?;
        write_box(
            out,
            natsio_token::new(cl.flush_async(), Arc::downgrade(cl.inner_for_ffi())),
        );
        Ok(())
    })
}

/// Drains: every subscription stops receiving and handles its backlog,
/// pending publishes are flushed, then the client closes. Bounded by
/// `timeout_ms` (negative: the drain timeout option); past it the client
/// closes anyway and NATSIO_ERR_DRAIN_TIMEOUT is returned (and reported to
/// the error callback). Blocks. Errors: NATSIO_ERR_CONNECTION_CLOSED,
/// NATSIO_ERR_ILLEGAL_STATE (already draining).
#[no_mangle]
pub unsafe extern "C" fn natsio_client_drain(
    c: *const natsio_client,
    timeout_ms: i64,
) -> natsio_status {
    guard(|| client(c)?.drain(ms_timeout(timeout_ms)))
}

/// Starts a drain on a library thread and returns its token at once.
#[no_mangle]
pub unsafe extern "C" fn natsio_client_drain_async(
    c: *const natsio_client,
    timeout_ms: i64,
    token_out: *mut *mut natsio_token,
) -> natsio_status {
    guard(|| {
        let cl = client(c)?;
        let out = out_arg(token_out, "token_out")?;
        ensure_open(cl)?;
        write_box(
            out,
            natsio_token::new(
                cl.drain_async(ms_timeout(timeout_ms)),
                Arc::downgrade(cl.inner_for_ffi()),
            ),
        );
        Ok(())
    })
}

/// Closes the connection: buffered publishes are sent (best effort),
/// pending requests and flushes fail with NATSIO_ERR_CONNECTION_CLOSED,
/// subscriptions close. Idempotent. After it returns no callback of this
/// client runs again (unless called from one). The handle stays valid until
/// `natsio_client_free`; later calls fail with NATSIO_ERR_CONNECTION_CLOSED.
#[no_mangle]
pub unsafe extern "C" fn natsio_client_close(c: *const natsio_client) -> natsio_status {
    guard(|| {
        client(c)?.close();
        Ok(())
    })
}

/// Closes (if needed) and frees the client. Accepts NULL. Subscriptions,
/// messages and tokens obtained from it stay valid (they report the closed
/// connection) and are freed separately.
#[no_mangle]
pub unsafe extern "C" fn natsio_client_free(c: *mut natsio_client) {
    guard_void(|| {
        if !c.is_null() {
            drop(Box::from_raw(c));
        }
    })
}

/// The connection state (NATSIO_CONN_CLOSED for NULL).
#[no_mangle]
pub unsafe extern "C" fn natsio_client_status(c: *const natsio_client) -> natsio_conn_status {
    guard_value(natsio_conn_status::NATSIO_CONN_CLOSED, || {
        Ok(match client(c)?.status() {
            ConnState::Disconnected => natsio_conn_status::NATSIO_CONN_DISCONNECTED,
            ConnState::Connecting => natsio_conn_status::NATSIO_CONN_CONNECTING,
            ConnState::Connected => natsio_conn_status::NATSIO_CONN_CONNECTED,
            ConnState::Reconnecting => natsio_conn_status::NATSIO_CONN_RECONNECTING,
            ConnState::Draining => natsio_conn_status::NATSIO_CONN_DRAINING,
            ConnState::Closed => natsio_conn_status::NATSIO_CONN_CLOSED,
        })
    })
}

/// The largest payload (headers included) the server accepts, in bytes
/// (-1 for NULL).
#[no_mangle]
pub unsafe extern "C" fn natsio_client_max_payload(c: *const natsio_client) -> i64 {
    guard_value(-1, || Ok(client(c)?.max_payload() as i64))
}

/// The server's latest INFO as JSON, returned as a new string freed with
/// `natsio_string_free`.
#[no_mangle]
pub unsafe extern "C" fn natsio_client_server_info(
    c: *const natsio_client,
    json_out: *mut *mut c_char,
) -> natsio_status {
    guard(|| {
        let cl = client(c)?;
        let out = out_arg(json_out, "json_out")?;
        write_string(out, &cl.server_info_json())
    })
}

/// The URL of the server currently connected to (freed with
/// `natsio_string_free`). Errors: NATSIO_ERR_CONNECTION_CLOSED.
#[no_mangle]
pub unsafe extern "C" fn natsio_client_connected_url(
    c: *const natsio_client,
    url_out: *mut *mut c_char,
) -> natsio_status {
    guard(|| {
        let cl = client(c)?;
        let out = out_arg(url_out, "url_out")?;
        let url = cl.connected_url().ok_or_else(Error::closed)?;
        write_string(out, &url)
    })
}

/// A new unique inbox subject under the inbox prefix (freed with
/// `natsio_string_free`).
#[no_mangle]
pub unsafe extern "C" fn natsio_client_new_inbox(
    c: *const natsio_client,
    inbox_out: *mut *mut c_char,
) -> natsio_status {
    guard(|| {
        let cl = client(c)?;
        let out = out_arg(inbox_out, "inbox_out")?;
        write_string(out, &cl.new_inbox())
    })
}

/// Reads the traffic counters into `stats_out`.
#[no_mangle]
pub unsafe extern "C" fn natsio_client_get_stats(
    c: *const natsio_client,
    stats_out: *mut natsio_client_stats,
) -> natsio_status {
    guard(|| {
        let cl = client(c)?;
        let out = out_arg(stats_out, "stats_out")?;
        let s = cl.stats();
        *out = natsio_client_stats {
            in_msgs: s.in_msgs,
            out_msgs: s.out_msgs,
            in_bytes: s.in_bytes,
            out_bytes: s.out_bytes,
            reconnects: s.reconnects,
            errors: s.errors,
        };
        Ok(())
    })
}

/// Drops the current connection and reconnects (to another server of the
/// pool when there is one); subscriptions are restored. Returns at once.
/// Errors: NATSIO_ERR_CONNECTION_CLOSED, NATSIO_ERR_ILLEGAL_STATE (not
/// connected right now).
#[no_mangle]
pub unsafe extern "C" fn natsio_client_force_reconnect(c: *const natsio_client) -> natsio_status {
    guard(|| client(c)?.force_reconnect())
}

/// Measures a round trip to the server (PING/PONG) in microseconds.
/// `timeout_ms` negative: the flush timeout. Blocks.
/// Errors: as `natsio_client_flush`.
#[no_mangle]
pub unsafe extern "C" fn natsio_client_rtt(
    c: *const natsio_client,
    timeout_ms: i64,
    rtt_us_out: *mut i64,
) -> natsio_status {
    guard(|| {
        let cl = client(c)?;
        let out = out_arg(rtt_us_out, "rtt_us_out")?;
        let rtt = cl.rtt(ms_timeout(timeout_ms))?;
        *out = rtt.as_micros().min(i64::MAX as u128) as i64;
        Ok(())
    })
}

/// The servers in the pool (configured and discovered), comma-separated, as
/// a new string freed with `natsio_string_free`.
#[no_mangle]
pub unsafe extern "C" fn natsio_client_servers(
    c: *const natsio_client,
    servers_out: *mut *mut c_char,
) -> natsio_status {
    guard(|| {
        let cl = client(c)?;
        let out = out_arg(servers_out, "servers_out")?;
        write_string(out, &cl.servers().join(","))
    })
}
