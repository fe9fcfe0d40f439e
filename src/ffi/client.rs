//! `natsio_client`: a connection to a NATS server and the core verbs.

use std::ffi::{c_char, c_void};
use std::time::Duration;

use super::list::{natsio_string_list, write_list};
use super::msg::natsio_msg;
use super::options::natsio_options;
use super::replies::natsio_replies;
use super::server_pool::natsio_server_list;
use super::status::natsio_status;
use super::sub::{natsio_sub, natsio_sub_options, sub_options};
use super::token::{natsio_token, token_value};
use super::{
    arg, bounded_timeout, bytes_arg, free_box, guard, guard_value, opt_arg_headers, opt_str_arg,
    options_arg, out_arg, str_arg, str_arg_n, timeout_arg, write_box, write_string, TakeOnce,
};
use crate::client::{Client, ConnState, RequestManyOptions};
use crate::client_handle::ClientHandle;
use crate::error::{Error, Result};
use crate::headers::Headers;
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
    /// Messages received (delivered to subscriptions or replies).
    pub in_msgs: u64,
    /// Messages published.
    pub out_msgs: u64,
    /// Payload bytes received.
    pub in_bytes: u64,
    /// Payload bytes published.
    pub out_bytes: u64,
    /// Successful reconnects since the client connected.
    pub reconnects: u64,
    /// Asynchronous errors reported (slow consumers, server -ERR, ...).
    pub errors: u64,
    /// PINGs the server sent, each answered with a PONG (nats-server sends
    /// its first about 2 s after the connect, then one per ping interval).
    pub server_pings: u64,
}

/// `natsio_request_many_options.version` of this header.
pub const NATSIO_REQUEST_MANY_OPTIONS_VERSION: u32 = 1;

/// Options of `natsio_client_request_many`. Initialise with
/// `natsio_request_many_options_init`; zero fields mean the defaults.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct natsio_request_many_options {
    /// NATSIO_REQUEST_MANY_OPTIONS_VERSION.
    pub version: u32,
    /// Stop after this many replies; 0: no limit.
    pub max_msgs: i64,
    /// Stop when no reply arrives for this long after the first; 0: none.
    pub stall_ms: i64,
    /// Overall deadline; 0: the client's request timeout.
    pub timeout_ms: i64,
}

super::versioned!(
    natsio_request_many_options,
    NATSIO_REQUEST_MANY_OPTIONS_VERSION
);

/// Fills `opts` with the defaults and the version.
/// Errors: NATSIO_ERR_NULL_ARGUMENT.
#[no_mangle]
pub unsafe extern "C" fn natsio_request_many_options_init(
    opts: *mut natsio_request_many_options,
) -> natsio_status {
    guard(|| super::options_init(opts))
}

pub(crate) fn client<'a>(c: *const natsio_client) -> Result<&'a Client> {
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

unsafe fn client_options(opts: *const natsio_options) -> Options {
    opts.as_ref().map(|o| o.opts.clone()).unwrap_or_default()
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
    guard(|| connect(client_options(opts), client_out))
}

/// The token form of `natsio_client_connect`: returns at once; the token
/// completes with the client (`natsio_token_client`) or the connect
/// error. `opts` is copied: it may be freed at once. Errors (immediate):
/// NATSIO_ERR_NULL_ARGUMENT, NATSIO_ERR_CONFIG.
#[no_mangle]
pub unsafe extern "C" fn natsio_client_connect_async(
    opts: *const natsio_options,
    token_out: *mut *mut natsio_token,
) -> natsio_status {
    guard(|| {
        let op = Client::connect_op(client_options(opts)).map(TakeOnce::new);
        super::start_op(op, ClientHandle::default(), token_out)
    })
}

/// The client a `natsio_client_connect_async` produced, through
/// `client_out` (free with `natsio_client_free`). It can be taken once: a
/// second call fails with NATSIO_ERR_ILLEGAL_STATE. Otherwise returns as
/// `natsio_token_msg`.
#[no_mangle]
pub unsafe extern "C" fn natsio_token_client(
    token: *const natsio_token,
    client_out: *mut *mut natsio_client,
) -> natsio_status {
    token_value(
        token,
        client_out,
        "client_out",
        |_, c: &TakeOnce<Client>| Ok(Box::into_raw(Box::new(natsio_client { client: c.take()? }))),
    )
}

/// Connects to `url` (comma-separated URLs allowed; "":
/// NATSIO_DEFAULT_URL) with default options. Blocks as
/// `natsio_client_connect`, with its errors.
#[no_mangle]
pub unsafe extern "C" fn natsio_client_connect_url(
    url: *const c_char,
    client_out: *mut *mut natsio_client,
) -> natsio_status {
    guard(|| {
        let servers = crate::options::server_list(str_arg(url, "url")?)?;
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

/// `natsio_client_publish` with the subject given by pointer and length
/// (`subject` need not be NUL-terminated; NULL only with `subject_len` 0):
/// for bindings whose strings carry their length, saving a copy and a
/// strlen per publish. Errors: as `natsio_client_publish`, plus
/// NATSIO_ERR_INVALID_ARGUMENT for a NUL byte in the subject.
///
/// Binding support (natsio_sys.h).
#[no_mangle]
pub unsafe extern "C" fn natsio_client_publish_n(
    c: *const natsio_client,
    subject: *const c_char,
    subject_len: usize,
    data: *const c_void,
    len: usize,
) -> natsio_status {
    guard(|| {
        let cl = client(c)?;
        cl.publish(
            str_arg_n(subject, subject_len, "subject")?,
            bytes_arg(data, len, "data")?,
        )
    })
}

/// A publish queue in the library's memory, for a language binding whose
/// every call into C costs as much as a whole publish (Go's cgo): the
/// binding writes plain publishes into it with no call, and the library
/// sends them in order, ahead of anything the client writes later.
/// Filled by `natsio_client_pub_ring`; every pointer stays valid until
/// `natsio_client_free`. Most programs never need it: `natsio_client_publish`
/// is one cheap call from C.
///
/// One producer at a time (the caller serializes its threads). Positions
/// count bytes since the ring was made and never wrap; a record starts at
/// `position % capacity`, 8-byte aligned, and never straddles the end.
/// A record: uint32 subject length, uint32 payload length (native byte
/// order), the subject (no NUL), the payload, padding to a multiple of 8.
/// Where a record does not fit before the end, the producer writes a
/// subject length of UINT32_MAX there (the rest of the lap is skipped) and
/// starts the record at the next lap.
///
/// To publish: read `*gate` (atomically); if the payload is larger (a gate
/// of 0: closed, draining or reconnecting), or the producer cannot tell
/// the subject is valid (queue only subjects certainly valid, such as
/// printable ASCII without wildcards or empty tokens), or the record does
/// not fit in [`*tail`, `*head` + capacity), call `natsio_client_publish`
/// instead (it reports the error, or buffers, and keeps the order). Else write the
/// record, store the new `*tail` atomically (sequentially consistent),
/// then read `*head`: if it equals the tail before the record, call
/// `natsio_client_pub_ring_kick`. The library checks every record again
/// when it takes it; a refused one is dropped and reported to the error
/// callback as NATSIO_ERR_INVALID_ARGUMENT.
///
/// Binding support (natsio_sys.h).
#[repr(C)]
pub struct natsio_pub_ring {
    /// The largest payload the ring takes now; 0: use the call.
    pub gate: *const u64,
    /// Where the library will read next (written by the library).
    pub head: *const u64,
    /// Where the producer writes next (written by the producer).
    pub tail: *mut u64,
    /// The ring's bytes.
    pub data: *mut u8,
    /// The size of `data` in bytes.
    pub capacity: u64,
}

/// Fills `ring_out` with the client's publish queue (made on the first
/// call; later calls return the same). Thread-safe. Errors:
/// NATSIO_ERR_NULL_ARGUMENT.
///
/// Binding support (natsio_sys.h).
#[no_mangle]
pub unsafe extern "C" fn natsio_client_pub_ring(
    c: *const natsio_client,
    ring_out: *mut natsio_pub_ring,
) -> natsio_status {
    guard(|| {
        let cl = client(c)?;
        let out = out_arg(ring_out, "ring_out")?;
        let ring = cl.pub_ring();
        *out = natsio_pub_ring {
            gate: ring.gate_ptr(),
            head: ring.head_ptr(),
            tail: ring.tail_ptr(),
            data: ring.data_ptr(),
            capacity: crate::pub_ring::CAPACITY as u64,
        };
        Ok(())
    })
}

/// Wakes the client's writer for records queued in its publish queue (see
/// `natsio_pub_ring` for when). Thread-safe, cheap, never blocks. Errors:
/// NATSIO_ERR_NULL_ARGUMENT.
///
/// Binding support (natsio_sys.h).
#[no_mangle]
pub unsafe extern "C" fn natsio_client_pub_ring_kick(c: *const natsio_client) -> natsio_status {
    guard(|| {
        client(c)?.kick_pub_ring();
        Ok(())
    })
}

/// Sends now what `natsio_js_publish_options.defer_send` and
/// `natsio_msg_ack_deferred` queued and nothing has sent yet (else it goes
/// within about a millisecond). Call it after a run of them. Thread-safe,
/// cheap when there are none, never blocks. Errors:
/// NATSIO_ERR_NULL_ARGUMENT.
#[no_mangle]
pub unsafe extern "C" fn natsio_client_send_deferred(c: *const natsio_client) -> natsio_status {
    guard(|| {
        client(c)?.send_deferred();
        Ok(())
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

/// Publishes a response to `reply_subject` (with optional `headers`): as
/// `natsio_client_publish_with` with no reply subject, but written at once
/// from the calling thread when the connection's writer is idle, as a
/// request is, instead of being batched with bulk publishes, so a
/// responder adds no thread hop to the round trip. For a binding that
/// copied a message out and freed it (`natsio_msg_respond` needs the
/// message). Thread-safe. Errors: as `natsio_client_publish_with`.
#[no_mangle]
pub unsafe extern "C" fn natsio_client_respond(
    c: *const natsio_client,
    reply_subject: *const c_char,
    headers: *const Headers,
    data: *const c_void,
    len: usize,
) -> natsio_status {
    guard(|| {
        let cl = client(c)?;
        cl.respond_to(
            str_arg(reply_subject, "reply_subject")?,
            opt_arg_headers(headers),
            bytes_arg(data, len, "data")?,
        )
    })
}

/// Subscribes to `subject` (wildcards allowed); read the messages with
/// `natsio_sub_next`, `natsio_sub_next_async`, or a callback set with
/// `natsio_sub_set_callback` (messages arriving before it is set are
/// queued and delivered to it first). `queue` (NULL: none) joins a queue
/// group; `opts` may be NULL. Registration takes effect at once: no message
/// sent after this returns is missed (call `natsio_client_flush` to be sure
/// the server has it). Errors: NATSIO_ERR_BAD_SUBJECT,
/// NATSIO_ERR_BAD_QUEUE_NAME, NATSIO_ERR_INVALID_ARGUMENT (bad policy or
/// options version), NATSIO_ERR_CONNECTION_CLOSED.
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
            sub_options(options_arg(opts)?)?,
        )?;
        write_box(out, natsio_sub::new(sub));
        Ok(())
    })
}

fn request_timeout(cl: &Client, ms: i64) -> Result<Duration> {
    bounded_timeout(ms, cl.options().request_timeout)
}

/// Sends a request and waits up to `timeout_ms` (NATSIO_TIMEOUT_DEFAULT:
/// the client's request timeout) for one reply, returned owned through
/// `reply_out`. Blocks. Errors: NATSIO_ERR_NO_RESPONDERS (at once, when
/// nobody is subscribed), NATSIO_ERR_TIMEOUT, NATSIO_ERR_INVALID_ARGUMENT
/// (timeout), and those of `natsio_client_publish_with`.
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
            Some(request_timeout(cl, timeout_ms)?),
        )?;
        write_box(out, natsio_msg::new(m, ClientHandle::of(cl)));
        Ok(())
    })
}

/// The token form of `natsio_client_request`: the reply is read with
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
            Some(request_timeout(cl, timeout_ms)?),
        )?;
        write_box(out, natsio_token::new(comp, ClientHandle::of(cl)));
        Ok(())
    })
}

/// `natsio_request_many_options` (NULL: the defaults) for the core.
pub(crate) fn request_many_options(
    cl: &Client,
    opts: *const natsio_request_many_options,
) -> Result<RequestManyOptions> {
    // SAFETY: the caller passes valid options or NULL.
    let o = unsafe { options_arg(opts)? };
    let positive = |v: i64| (v > 0).then_some(v as u64);
    Ok(RequestManyOptions {
        max_msgs: positive(o.max_msgs),
        stall: positive(o.stall_ms).map(Duration::from_millis),
        timeout: positive(o.timeout_ms).map_or(cl.options().request_timeout, Duration::from_millis),
    })
}

/// Sends one request and returns an iterator over its replies (ADR-47),
/// gathered on the runtime from now on; read them with the
/// `natsio_replies_` functions. `opts` may be NULL (no count limit, no
/// stall, the client's request timeout). Errors: as
/// `natsio_client_publish_with`, NATSIO_ERR_INVALID_ARGUMENT (options).
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
        let rm = request_many_options(cl, opts)?;
        let it = cl.request_many(
            str_arg(subject, "subject")?,
            opt_arg_headers(headers),
            bytes_arg(data, len, "data")?,
            rm,
        )?;
        write_box(
            out,
            natsio_replies {
                it,
                client: ClientHandle::of(cl),
            },
        );
        Ok(())
    })
}

/// Waits until the server has processed everything sent before this call
/// (a PING/PONG round trip), up to `timeout_ms` (NATSIO_TIMEOUT_DEFAULT:
/// the client's flush timeout). Blocks. Errors: NATSIO_ERR_TIMEOUT,
/// NATSIO_ERR_CONNECTION_CLOSED, NATSIO_ERR_INVALID_ARGUMENT (timeout).
#[no_mangle]
pub unsafe extern "C" fn natsio_client_flush(
    c: *const natsio_client,
    timeout_ms: i64,
) -> natsio_status {
    guard(|| {
        let cl = client(c)?;
        cl.flush(Some(bounded_timeout(
            timeout_ms,
            cl.options().flush_timeout,
        )?))
    })
}

/// Starts a flush and returns its token at once (free it with
/// `natsio_token_free`). The token completes with NATSIO_OK once the server
/// has processed everything sent before this call, or fails with
/// NATSIO_ERR_TIMEOUT once `timeout_ms` passes (NATSIO_TIMEOUT_DEFAULT: the
/// client's flush timeout; NATSIO_WAIT_FOREVER: no bound), or with
/// NATSIO_ERR_CONNECTION_CLOSED. Errors (immediate): NATSIO_ERR_NULL_ARGUMENT,
/// NATSIO_ERR_CONNECTION_CLOSED, NATSIO_ERR_INVALID_ARGUMENT (timeout).
#[no_mangle]
pub unsafe extern "C" fn natsio_client_flush_async(
    c: *const natsio_client,
    timeout_ms: i64,
    token_out: *mut *mut natsio_token,
) -> natsio_status {
    guard(|| {
        let cl = client(c)?;
        let out = out_arg(token_out, "token_out")?;
        let timeout = timeout_arg(timeout_ms, Some(cl.options().flush_timeout), false)?;
        ensure_open(cl)?;
        write_box(
            out,
            natsio_token::new(cl.flush_async(timeout), ClientHandle::of(cl)),
        );
        Ok(())
    })
}

/// Drains: every subscription stops receiving and handles its backlog,
/// pending publishes are flushed, then the client closes. Bounded by
/// `timeout_ms` (NATSIO_TIMEOUT_DEFAULT: the client's drain timeout); past
/// it the client closes anyway and NATSIO_ERR_DRAIN_TIMEOUT is returned
/// (and reported to the error callback). A client that is reconnecting
/// drains too: the drain completes once it has reconnected (subscriptions
/// re-sent, the publishes buffered meanwhile delivered), within the same
/// bound. Blocks. Errors: NATSIO_ERR_CONNECTION_CLOSED (closed),
/// NATSIO_ERR_ILLEGAL_STATE (already draining, or the first connect has
/// not succeeded yet), NATSIO_ERR_INVALID_ARGUMENT (timeout).
#[no_mangle]
pub unsafe extern "C" fn natsio_client_drain(
    c: *const natsio_client,
    timeout_ms: i64,
) -> natsio_status {
    guard(|| {
        let cl = client(c)?;
        cl.drain(Some(bounded_timeout(
            timeout_ms,
            cl.options().drain_timeout,
        )?))
    })
}

/// The token form of `natsio_client_drain` (the drain runs on a library
/// thread).
#[no_mangle]
pub unsafe extern "C" fn natsio_client_drain_async(
    c: *const natsio_client,
    timeout_ms: i64,
    token_out: *mut *mut natsio_token,
) -> natsio_status {
    guard(|| {
        let cl = client(c)?;
        let out = out_arg(token_out, "token_out")?;
        let timeout = bounded_timeout(timeout_ms, cl.options().drain_timeout)?;
        ensure_open(cl)?;
        write_box(
            out,
            natsio_token::new(cl.drain_async(Some(timeout)), ClientHandle::of(cl)),
        );
        Ok(())
    })
}

/// Closes the connection: buffered publishes are sent (best effort),
/// pending requests and flushes fail with NATSIO_ERR_CONNECTION_CLOSED,
/// subscriptions and other iterators end with it. Idempotent. After it
/// returns no callback of this client runs again (unless called from one).
/// The handle stays valid until `natsio_client_free`; later calls fail with
/// NATSIO_ERR_CONNECTION_CLOSED. Blocks while callbacks finish.
#[no_mangle]
pub unsafe extern "C" fn natsio_client_close(c: *const natsio_client) -> natsio_status {
    guard(|| {
        client(c)?.close();
        Ok(())
    })
}

/// The token form of `natsio_client_close`: the close runs on a library
/// thread; the token completes once it is done.
#[no_mangle]
pub unsafe extern "C" fn natsio_client_close_async(
    c: *const natsio_client,
    token_out: *mut *mut natsio_token,
) -> natsio_status {
    guard(|| {
        let cl = client(c)?;
        let out = out_arg(token_out, "token_out")?;
        write_box(
            out,
            natsio_token::new(cl.close_async(), ClientHandle::of(cl)),
        );
        Ok(())
    })
}

/// Closes (if needed) and frees the client. Accepts NULL. Subscriptions,
/// messages and tokens obtained from it stay valid (they report the closed
/// connection) and are freed separately. Returns once the library's own
/// threads have let go of the client (bounded by 5 s), so a callback
/// `release` due at this point has run (unless called from one of this
/// client's callbacks).
#[no_mangle]
pub unsafe extern "C" fn natsio_client_free(c: *mut natsio_client) {
    free_box(c)
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

/// The prefix of this client's reply inboxes, as set with
/// `natsio_options_set_inbox_prefix` (default "_INBOX"), freed with
/// `natsio_string_free`. Readable after the client is closed too.
/// Thread-safe.
#[no_mangle]
pub unsafe extern "C" fn natsio_client_inbox_prefix(
    c: *const natsio_client,
    prefix_out: *mut *mut c_char,
) -> natsio_status {
    guard(|| {
        let cl = client(c)?;
        let out = out_arg(prefix_out, "prefix_out")?;
        write_string(out, &cl.options().inbox_prefix)
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
            server_pings: s.server_pings,
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

/// Measures a round trip to the server (PING/PONG) in microseconds, within
/// `timeout_ms` (NATSIO_TIMEOUT_DEFAULT: the flush timeout). Blocks.
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
        let rtt = cl.rtt(Some(bounded_timeout(
            timeout_ms,
            cl.options().flush_timeout,
        )?))?;
        *out = rtt.as_micros().min(i64::MAX as u128) as i64;
        Ok(())
    })
}

/// The servers in the pool (configured and discovered), as a list through
/// `list_out` (free with `natsio_string_list_free`).
#[no_mangle]
pub unsafe extern "C" fn natsio_client_servers(
    c: *const natsio_client,
    list_out: *mut *mut natsio_string_list,
) -> natsio_status {
    guard(|| {
        let cl = client(c)?;
        write_list(list_out, natsio_string_list::new(&cl.servers()))
    })
}

/// The servers in the pool (configured and discovered) in the order they
/// are tried, each with its reconnect bookkeeping (nats.go's ServerPool),
/// as a list through `list_out` (free with `natsio_server_list_free`). A
/// snapshot: later changes to the pool do not show in it. Any thread.
/// Errors: NATSIO_ERR_NULL_ARGUMENT.
#[no_mangle]
pub unsafe extern "C" fn natsio_client_server_pool(
    c: *const natsio_client,
    list_out: *mut *mut natsio_server_list,
) -> natsio_status {
    guard(|| {
        let cl = client(c)?;
        write_list(list_out, natsio_server_list::new(cl.server_pool()))
    })
}

/// Replaces the pool's servers with the `count` URLs of `urls`, in that
/// order (nats.go's SetServerPool, nats.js's setServers; the client's
/// randomize option is not applied). The current connection stays up, even
/// when its server is not among them: the next reconnect picks from the
/// new pool (`natsio_client_force_reconnect` moves now). A server already
/// in the pool (same host and port) keeps its reconnect count; servers the
/// cluster tells of are added again unless the options ignore them. Any
/// thread, callbacks included. Errors: NATSIO_ERR_NULL_ARGUMENT,
/// NATSIO_ERR_CONFIG (count 0 or an invalid URL; the pool is unchanged),
/// NATSIO_ERR_INVALID_UTF8, NATSIO_ERR_INVALID_ARGUMENT (count above
/// NATSIO_LIST_MAX_ITEMS), NATSIO_ERR_CONNECTION_CLOSED.
#[no_mangle]
pub unsafe extern "C" fn natsio_client_set_server_pool(
    c: *const natsio_client,
    urls: *const *const c_char,
    count: usize,
) -> natsio_status {
    guard(|| {
        let cl = client(c)?;
        let urls: Vec<String> = super::strings_arg(urls, count, "urls", "url")?
            .into_iter()
            .map(str::to_string)
            .collect();
        cl.set_server_pool(&urls)
    })
}
