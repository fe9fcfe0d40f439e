//! `natsio_js`: a JetStream context, publishing with acks, and
//! `natsio_pub_ack`.

use std::ffi::{c_char, c_void, CString};
use std::sync::Arc;
use std::time::Duration;

use super::client::natsio_client;
use super::status::natsio_status;
use super::token::{natsio_token, token_shared_value};
use super::{
    arg, bytes_arg, free_box, guard, guard_value, opt_arg_headers, opt_str_arg, options_arg,
    out_arg, start_op, str_arg, timeout_arg, write_box, write_string,
};
use crate::client_handle::ClientHandle;
use crate::error::{Error, ErrorKind, Result};
use crate::jetstream::{JetStream, JetStreamOptions, PubAck, PublishOptions, Ttl};
use crate::op::Op;

/// A JetStream context. Created with `natsio_client_jetstream`, freed with
/// `natsio_js_free`. It does not keep its client open: after the client is
/// closed or freed every call fails with NATSIO_ERR_CONNECTION_CLOSED.
/// Every function is thread-safe.
pub struct natsio_js {
    pub(crate) js: JetStream,
}

impl natsio_js {
    pub(crate) fn client_handle(&self) -> ClientHandle {
        ClientHandle::from(&self.js.shared.client)
    }
}

/// `natsio_js_options.version` of this header.
pub const NATSIO_JS_OPTIONS_VERSION: u32 = 2;

/// Options of `natsio_client_jetstream`. Initialise with
/// `natsio_js_options_init`: every zero or NULL field means the default.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct natsio_js_options {
    /// NATSIO_JS_OPTIONS_VERSION.
    pub version: u32,
    /// JetStream domain: the API prefix becomes `$JS.DOMAIN.API` with this
    /// value as DOMAIN; NULL: none.
    pub domain: *const c_char,
    /// Custom API prefix, overriding `domain`; NULL: `$JS.API`.
    pub api_prefix: *const c_char,
    /// API request and synchronous publish timeout; 0: 5000 ms.
    pub timeout_ms: i64,
    /// Asynchronous publishes awaiting acks before `natsio_js_publish_async`
    /// stalls; 0: 4000.
    pub publish_async_max_pending: i64,
    /// How long a stalled asynchronous publish waits for room before it
    /// fails with NATSIO_ERR_TOO_MANY_STALLED; 0: 200 ms.
    pub publish_async_stall_wait_ms: i64,
    /// How long an asynchronous publish waits for its ack; 0: `timeout_ms`.
    pub publish_async_timeout_ms: i64,
    /// Since version 2. true: the stream, consumer and account info JSON
    /// this context hands out keeps the response's `type` field
    /// ("io.nats.jetstream.api.v1.stream_info_response", ...), as nats.js
    /// hands it out; false: it is dropped. Either way the keys come in
    /// the server's order.
    pub keep_response_type: bool,
}

/// How a create call treats an existing resource (stream, consumer,
/// bucket): the `action` argument of `natsio_js_stream_create`,
/// `natsio_js_consumer_create`, `natsio_js_kv_create` and
/// `natsio_js_obj_create` (and their `_async` forms).
#[repr(i32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum natsio_create_action {
    /// Create it; one that exists with the same configuration is fine,
    /// another configuration fails.
    NATSIO_CREATE = 0,
    /// Change an existing one; fails if there is none.
    NATSIO_UPDATE = 1,
    /// Create it, or change it if it exists.
    NATSIO_CREATE_OR_UPDATE = 2,
}

/// Reads an `action` argument (a `natsio_create_action` value).
pub(crate) fn create_action(v: i32) -> Result<crate::jetstream::CreateAction> {
    use crate::jetstream::CreateAction;
    match v {
        0 => Ok(CreateAction::Create),
        1 => Ok(CreateAction::Update),
        2 => Ok(CreateAction::CreateOrUpdate),
        v => Err(Error::new(
            ErrorKind::InvalidArgument,
            format!("unknown create action {v}"),
        )),
    }
}

/// `natsio_js_publish_options.ttl_s` value: the message never expires,
/// even if the stream has a max age.
pub const NATSIO_TTL_NEVER: i64 = -1;

/// A `ttl_s` argument: whole seconds (at least 1) or NATSIO_TTL_NEVER.
pub(crate) fn ttl_arg(ttl_s: i64) -> Result<Ttl> {
    match ttl_s {
        NATSIO_TTL_NEVER => Ok(Ttl::Never),
        s if s > 0 => Ok(Ttl::Seconds(s as u64)),
        s => Err(Error::new(
            ErrorKind::InvalidArgument,
            format!("ttl_s {s}: use whole seconds (at least 1) or NATSIO_TTL_NEVER"),
        )),
    }
}

/// `natsio_js_publish_options.retry_attempts` value: no retry, the first
/// "no responders" fails the publish.
pub const NATSIO_PUBLISH_NO_RETRY: i32 = -1;

/// `natsio_js_publish_options.version` of this header (2 added
/// `defer_send`, 3 `retry_attempts` and `retry_wait_ms`; older structs are
/// still read, without the fields they lack).
pub const NATSIO_JS_PUBLISH_OPTIONS_VERSION: u32 = 3;

/// Options of one JetStream publish. Initialise with
/// `natsio_js_publish_options_init`: every zero or NULL field means "not set". Pointers are borrowed for the
/// call only.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct natsio_js_publish_options {
    /// NATSIO_JS_PUBLISH_OPTIONS_VERSION.
    pub version: u32,
    /// Headers sent with the message; NULL: none.
    pub headers: *const crate::headers::Headers,
    /// `Nats-Msg-Id`: the stream drops a second message with this id within
    /// its duplicate window (the ack then says duplicate).
    pub msg_id: *const c_char,
    /// The publish fails unless it lands in this stream.
    pub expected_stream: *const c_char,
    /// If not NULL: fail with NATSIO_ERR_WRONG_LAST_SEQUENCE unless the
    /// stream's last sequence is `*expected_last_seq` (0: empty stream).
    pub expected_last_seq: *const u64,
    /// If not NULL: likewise for the last sequence of this subject (or of
    /// `expected_last_subject_seq_subject`); 0: no message on it yet.
    pub expected_last_subject_seq: *const u64,
    /// The subject (wildcards allowed) `expected_last_subject_seq` checks.
    pub expected_last_subject_seq_subject: *const c_char,
    /// The publish fails unless the stream's last message has this id.
    pub expected_last_msg_id: *const c_char,
    /// Per-message TTL in whole seconds (the stream needs allow_msg_ttl);
    /// 0: none; NATSIO_TTL_NEVER: never expires.
    pub ttl_s: i64,
    /// How long to wait for the ack; 0: the context's timeout (for
    /// asynchronous publishes its async publish timeout).
    pub timeout_ms: i64,
    /// `natsio_js_publish_async` only (since version 2): true: while other
    /// publishes of the connection await their acks, this one is queued
    /// without waking the connection's writer thread, so that a run of
    /// publishes goes out in one write instead of a wake-up and a write
    /// each. It is sent within about a millisecond (the writer looks again
    /// while such publishes keep coming), or sooner: with the next frame
    /// that wakes the writer, when a publish stalls on
    /// `publish_async_max_pending`, when a thread waits on a token of the
    /// connection (`natsio_token_wait`) or for
    /// `natsio_js_publish_async_complete`, once 64 KiB are queued, or at
    /// `natsio_client_send_deferred` (call it after a run to save the
    /// millisecond).
    pub defer_send: bool,
    /// Since version 3. How many times "no responders" (no stream listens
    /// on the subject yet: a stream leader may be moving, ADR-22) is
    /// retried before the publish fails with NATSIO_ERR_NO_STREAM_RESPONSE;
    /// 0: 2 (nats.go's DefaultPubRetryAttempts); NATSIO_PUBLISH_NO_RETRY:
    /// none. Below NATSIO_PUBLISH_NO_RETRY: NATSIO_ERR_INVALID_ARGUMENT.
    /// An asynchronous publish's retries end at its ack deadline
    /// (`timeout_ms`) at the latest.
    pub retry_attempts: i32,
    /// Since version 3. The wait before each retry; 0: 250 ms (nats.go's
    /// DefaultPubRetryWait). Negative: NATSIO_ERR_INVALID_ARGUMENT.
    pub retry_wait_ms: i64,
}

super::versioned!(natsio_js_options, NATSIO_JS_OPTIONS_VERSION, older: [1 => keep_response_type]);

super::versioned!(
    natsio_js_publish_options,
    NATSIO_JS_PUBLISH_OPTIONS_VERSION,
    older: [1 => defer_send, 2 => retry_attempts]
);

/// Fills `opts` with the defaults and the version.
/// Errors: NATSIO_ERR_NULL_ARGUMENT.
#[no_mangle]
pub unsafe extern "C" fn natsio_js_options_init(opts: *mut natsio_js_options) -> natsio_status {
    guard(|| super::options_init(opts))
}

/// Fills `opts` with the defaults (nothing set) and the version.
/// Errors: NATSIO_ERR_NULL_ARGUMENT.
#[no_mangle]
pub unsafe extern "C" fn natsio_js_publish_options_init(
    opts: *mut natsio_js_publish_options,
) -> natsio_status {
    guard(|| super::options_init(opts))
}

pub(crate) fn positive_ms(v: i64, what: &str) -> Result<Option<Duration>> {
    match v {
        0 => Ok(None),
        v if v > 0 => Ok(Some(Duration::from_millis(v as u64))),
        _ => Err(Error::new(
            ErrorKind::InvalidArgument,
            format!("{what} must not be negative"),
        )),
    }
}

unsafe fn js_options(o: *const natsio_js_options) -> Result<JetStreamOptions> {
    let mut opts = JetStreamOptions::default();
    let o = &options_arg(o)?;
    opts.domain = opt_str_arg(o.domain, "domain")?.map(str::to_string);
    opts.api_prefix = opt_str_arg(o.api_prefix, "api_prefix")?.map(str::to_string);
    if let Some(t) = positive_ms(o.timeout_ms, "timeout_ms")? {
        opts.timeout = t;
    }
    match o.publish_async_max_pending {
        0 => {}
        n if n > 0 => opts.publish_async_max_pending = n as usize,
        _ => {
            return Err(Error::new(
                ErrorKind::InvalidArgument,
                "publish_async_max_pending must not be negative",
            ))
        }
    }
    if let Some(t) = positive_ms(o.publish_async_stall_wait_ms, "publish_async_stall_wait_ms")? {
        opts.publish_async_stall_wait = t;
    }
    opts.publish_async_timeout =
        positive_ms(o.publish_async_timeout_ms, "publish_async_timeout_ms")?;
    opts.keep_response_type = o.keep_response_type;
    Ok(opts)
}

pub(crate) unsafe fn publish_options(
    o: *const natsio_js_publish_options,
) -> Result<PublishOptions> {
    if o.is_null() {
        return Ok(PublishOptions::default());
    }
    let o = &options_arg(o)?;
    let owned = |p: *const c_char, what: &str| -> Result<Option<String>> {
        Ok(opt_str_arg(p, what)?.map(str::to_string))
    };
    Ok(PublishOptions {
        headers: opt_arg_headers(o.headers).cloned(),
        msg_id: owned(o.msg_id, "msg_id")?,
        expected_stream: owned(o.expected_stream, "expected_stream")?,
        expected_last_seq: o.expected_last_seq.as_ref().copied(),
        expected_last_subject_seq: o.expected_last_subject_seq.as_ref().copied(),
        expected_last_subject_seq_subject: owned(
            o.expected_last_subject_seq_subject,
            "expected_last_subject_seq_subject",
        )?,
        expected_last_msg_id: owned(o.expected_last_msg_id, "expected_last_msg_id")?,
        ttl: match o.ttl_s {
            0 => None,
            s => Some(ttl_arg(s)?),
        },
        timeout: positive_ms(o.timeout_ms, "timeout_ms")?,
        defer_send: o.defer_send,
        retry_attempts: match o.retry_attempts {
            0 => None,
            NATSIO_PUBLISH_NO_RETRY => Some(0),
            n => Some(u32::try_from(n).map_err(|_| {
                Error::new(
                    ErrorKind::InvalidArgument,
                    format!("retry_attempts {n}: use 0 (the default), a count or NATSIO_PUBLISH_NO_RETRY"),
                )
            })?),
        },
        retry_wait: positive_ms(o.retry_wait_ms, "retry_wait_ms")?,
    })
}

/// Runs a JSON-producing operation and writes its text to `out`, which may
/// be NULL when `optional`.
pub(crate) unsafe fn json_result(
    op: Op<serde_json::Value>,
    out: *mut *mut c_char,
    optional: bool,
) -> Result<()> {
    if !optional {
        out_arg(out, "info_json_out")?;
    }
    let v = op.wait()?;
    if out.is_null() {
        Ok(())
    } else {
        write_string(out, &v.to_string())
    }
}

/// Starts a JSON-producing operation; its token yields the text
/// (`natsio_token_string`).
pub(crate) unsafe fn json_token(
    h: &natsio_js,
    op: Op<serde_json::Value>,
    token_out: *mut *mut natsio_token,
) -> Result<()> {
    start_op(op.map(|v| v.to_string()), h.client_handle(), token_out)
}

pub(crate) fn js<'a>(p: *const natsio_js) -> Result<&'a JetStream> {
    // SAFETY: the caller passes a live handle or NULL.
    unsafe { arg(p, "js").map(|j| &j.js) }
}

/// Creates a JetStream context over `client` with `opts` (NULL: defaults).
/// Sends nothing to the server. Free it with `natsio_js_free`.
/// Errors: NATSIO_ERR_NULL_ARGUMENT, NATSIO_ERR_INVALID_UTF8,
/// NATSIO_ERR_INVALID_ARGUMENT (negative field), NATSIO_ERR_CONFIG (bad
/// domain or prefix).
#[no_mangle]
pub unsafe extern "C" fn natsio_client_jetstream(
    client: *const natsio_client,
    opts: *const natsio_js_options,
    js_out: *mut *mut natsio_js,
) -> natsio_status {
    guard(|| {
        let client = super::client::client(client)?;
        let out = out_arg(js_out, "js_out")?;
        let opts = js_options(opts)?;
        let js = JetStream::new(client, opts)?;
        write_box(out, natsio_js { js });
        Ok(())
    })
}

/// Frees a JetStream context. Accepts NULL. Pending asynchronous publishes
/// go on; their tokens stay valid.
#[no_mangle]
pub unsafe extern "C" fn natsio_js_free(js: *mut natsio_js) {
    free_box(js)
}

/// The account's JetStream usage and limits (`$JS.API.INFO`) as JSON,
/// returned through `json_out` (free with `natsio_string_free`). Blocks up
/// to the context's timeout. Errors: NATSIO_ERR_JS_NOT_ENABLED (the
/// account has no JetStream, or nobody answers: the server has none; every
/// other JetStream call reports nobody answering as
/// NATSIO_ERR_NO_RESPONDERS), NATSIO_ERR_TIMEOUT,
/// NATSIO_ERR_CONNECTION_CLOSED, NATSIO_ERR_JS_API.
#[no_mangle]
pub unsafe extern "C" fn natsio_js_account_info(
    js: *const natsio_js,
    json_out: *mut *mut c_char,
) -> natsio_status {
    guard(|| {
        let j = self::js(js)?;
        let out = out_arg(json_out, "json_out")?;
        write_string(out, &j.account_info().wait()?.to_string())
    })
}

/// The token form of `natsio_js_account_info`; the JSON is read with
/// `natsio_token_string`.
#[no_mangle]
pub unsafe extern "C" fn natsio_js_account_info_async(
    js: *const natsio_js,
    token_out: *mut *mut natsio_token,
) -> natsio_status {
    guard(|| {
        let h = arg(js, "js")?;
        start_op(
            h.js.account_info().map(|v| v.to_string()),
            h.client_handle(),
            token_out,
        )
    })
}

unsafe fn publish_op(
    js: &JetStream,
    subject: *const c_char,
    data: *const c_void,
    len: usize,
    opts: *const natsio_js_publish_options,
) -> Result<Op<PubAck>> {
    let subject = str_arg(subject, "subject")?;
    let data = bytes_arg(data, len, "data")?;
    Ok(js.publish(subject, data, &publish_options(opts)?))
}

/// Publishes `len` bytes of `data` to `subject` and waits for the stream's
/// acknowledgement (the reference's `publish`: one request, outside the
/// window of `natsio_js_publish_async`). `opts` may be NULL. `ack_out` may
/// be NULL when the ack is not needed; otherwise it receives a
/// `natsio_pub_ack` to free with `natsio_pub_ack_free`. "No responders" is
/// retried (`retry_attempts`, by default twice, `retry_wait_ms` apart,
/// by default 250 ms). Its token form is
/// `natsio_js_publish_request_async`.
/// Blocks the calling thread (not allowed on a library runtime thread).
/// Errors: NATSIO_ERR_NULL_ARGUMENT, NATSIO_ERR_INVALID_UTF8,
/// NATSIO_ERR_BAD_SUBJECT, NATSIO_ERR_BAD_HEADERS, NATSIO_ERR_MAX_PAYLOAD,
/// NATSIO_ERR_INVALID_ARGUMENT, NATSIO_ERR_NO_STREAM_RESPONSE (no stream
/// holds the subject), NATSIO_ERR_WRONG_LAST_SEQUENCE, NATSIO_ERR_JS_API
/// (other rejections, e.g. a wrong expected stream), NATSIO_ERR_TIMEOUT,
/// NATSIO_ERR_CONNECTION_CLOSED.
#[no_mangle]
pub unsafe extern "C" fn natsio_js_publish(
    js: *const natsio_js,
    subject: *const c_char,
    data: *const c_void,
    len: usize,
    opts: *const natsio_js_publish_options,
    ack_out: *mut *mut natsio_pub_ack,
) -> natsio_status {
    guard(|| {
        let ack = publish_op(self::js(js)?, subject, data, len, opts)?.wait()?;
        if !ack_out.is_null() {
            write_box(ack_out, natsio_pub_ack::new(Arc::new(ack)));
        }
        Ok(())
    })
}

/// The token form of `natsio_js_publish`: the very same publish, one
/// request whose token completes with the ack (`natsio_token_pub_ack`) or
/// the error `natsio_js_publish` would return. It is not the windowed
/// `natsio_js_publish_async`: it takes no slot of
/// `publish_async_max_pending` (it never stalls and never fails with
/// NATSIO_ERR_TOO_MANY_STALLED), does not count in
/// `natsio_js_publish_async_pending` or `_complete`, and waits for its ack
/// up to `opts->timeout_ms` (0: the context's timeout), then fails with
/// NATSIO_ERR_TIMEOUT, never NATSIO_ERR_ASYNC_PUBLISH_TIMEOUT. A cancel
/// stops the wait, not the message (the stream may store it). Argument
/// errors come back from the call, as for `natsio_js_publish`.
#[no_mangle]
pub unsafe extern "C" fn natsio_js_publish_request_async(
    js: *const natsio_js,
    subject: *const c_char,
    data: *const c_void,
    len: usize,
    opts: *const natsio_js_publish_options,
    token_out: *mut *mut natsio_token,
) -> natsio_status {
    guard(|| {
        let h = arg(js, "js")?;
        let op = publish_op(&h.js, subject, data, len, opts)?;
        start_op(op, h.client_handle(), token_out)
    })
}

/// The reference's `publish_async`: publishes within the context's async
/// window without waiting for the ack: `token_out` receives a token that
/// completes with the ack (`natsio_token_pub_ack`) or the publish's error
/// (NATSIO_ERR_NO_STREAM_RESPONSE, NATSIO_ERR_ASYNC_PUBLISH_TIMEOUT,
/// NATSIO_ERR_WRONG_LAST_SEQUENCE, NATSIO_ERR_JS_API, ...). Free the token
/// with `natsio_token_free` (the publish still counts until its ack comes).
/// When `publish_async_max_pending` publishes await acks, this call waits
/// up to the stall wait for one to complete, then fails with
/// NATSIO_ERR_TOO_MANY_STALLED (sending nothing). Argument errors as for
/// `natsio_js_publish`. The token form of `natsio_js_publish` itself,
/// outside this window, is `natsio_js_publish_request_async`.
#[no_mangle]
pub unsafe extern "C" fn natsio_js_publish_async(
    js: *const natsio_js,
    subject: *const c_char,
    data: *const c_void,
    len: usize,
    opts: *const natsio_js_publish_options,
    token_out: *mut *mut natsio_token,
) -> natsio_status {
    guard(|| {
        let h = arg(js, "js")?;
        let out = out_arg(token_out, "token_out")?;
        let subject = str_arg(subject, "subject")?;
        let data = bytes_arg(data, len, "data")?;
        let opts = publish_options(opts)?;
        let c = h.js.publish_async(subject, data, &opts)?;
        write_box(out, natsio_token::new(c, h.client_handle()));
        Ok(())
    })
}

/// Waits up to `timeout_ms` (NATSIO_TIMEOUT_DEFAULT: the context's
/// timeout) until every asynchronous publish of this context has
/// completed (acked or failed). Errors: NATSIO_ERR_TIMEOUT (some still
/// pending), NATSIO_ERR_INVALID_ARGUMENT (timeout), NATSIO_ERR_ILLEGAL_STATE
/// on a library runtime thread.
#[no_mangle]
pub unsafe extern "C" fn natsio_js_publish_async_complete(
    js: *const natsio_js,
    timeout_ms: i64,
) -> natsio_status {
    guard(|| {
        let j = self::js(js)?;
        let timeout = timeout_arg(timeout_ms, Some(j.options().timeout), false)?;
        j.publish_async_complete(timeout).wait()
    })
}

/// The token form of `natsio_js_publish_async_complete`.
#[no_mangle]
pub unsafe extern "C" fn natsio_js_publish_async_complete_async(
    js: *const natsio_js,
    timeout_ms: i64,
    token_out: *mut *mut natsio_token,
) -> natsio_status {
    guard(|| {
        let h = arg(js, "js")?;
        let timeout = timeout_arg(timeout_ms, Some(h.js.options().timeout), false)?;
        start_op(
            h.js.publish_async_complete(timeout),
            h.client_handle(),
            token_out,
        )
    })
}

/// How many asynchronous publishes of this context await their ack
/// (0 for NULL).
#[no_mangle]
pub unsafe extern "C" fn natsio_js_publish_async_pending(js: *const natsio_js) -> usize {
    guard_value(0, || Ok(self::js(js)?.publish_async_pending()))
}

/// A stream's acknowledgement of a publish. Owned by the caller, freed with
/// `natsio_pub_ack_free`; read-only and safe to share between threads.
pub struct natsio_pub_ack {
    ack: Arc<PubAck>,
    stream: CString,
    domain: Option<CString>,
    val: Option<CString>,
    batch_id: Option<CString>,
}

impl natsio_pub_ack {
    pub(crate) fn new(ack: Arc<PubAck>) -> Self {
        let c = |s: &str| CString::new(s).unwrap_or_default();
        natsio_pub_ack {
            stream: c(&ack.stream),
            domain: ack.domain.as_deref().map(c),
            val: ack.val.as_deref().map(c),
            batch_id: ack.batch_id.as_deref().map(c),
            ack,
        }
    }
}

fn opt_ptr(s: &Option<CString>) -> *const c_char {
    s.as_ref().map_or(std::ptr::null(), |s| s.as_ptr())
}

/// The stream that stored the message (borrowed from the ack; NULL for NULL).
#[no_mangle]
pub unsafe extern "C" fn natsio_pub_ack_stream(ack: *const natsio_pub_ack) -> *const c_char {
    guard_value(std::ptr::null(), || Ok(arg(ack, "ack")?.stream.as_ptr()))
}

/// The message's sequence number in the stream (0 for NULL).
#[no_mangle]
pub unsafe extern "C" fn natsio_pub_ack_seq(ack: *const natsio_pub_ack) -> u64 {
    guard_value(0, || Ok(arg(ack, "ack")?.ack.seq))
}

/// True if the stream had already stored a message with this `msg_id`
/// (nothing new was stored; `seq` is the original's).
#[no_mangle]
pub unsafe extern "C" fn natsio_pub_ack_duplicate(ack: *const natsio_pub_ack) -> bool {
    guard_value(false, || Ok(arg(ack, "ack")?.ack.duplicate))
}

/// The JetStream domain of the stream, or NULL when none.
#[no_mangle]
pub unsafe extern "C" fn natsio_pub_ack_domain(ack: *const natsio_pub_ack) -> *const c_char {
    guard_value(std::ptr::null(), || Ok(opt_ptr(&arg(ack, "ack")?.domain)))
}

/// On a stream with allow_msg_counter (ADR-49, server 2.12+): the
/// counter's value after this message, as decimal text (borrowed from the
/// ack; it may exceed 64 bits). NULL for other streams, and for NULL.
#[no_mangle]
pub unsafe extern "C" fn natsio_pub_ack_val(ack: *const natsio_pub_ack) -> *const c_char {
    guard_value(std::ptr::null(), || Ok(opt_ptr(&arg(ack, "ack")?.val)))
}

/// For the commit of an atomic batch publish (ADR-50, server 2.12+): the
/// batch's id (borrowed from the ack). NULL for other publishes, and for
/// NULL.
#[no_mangle]
pub unsafe extern "C" fn natsio_pub_ack_batch_id(ack: *const natsio_pub_ack) -> *const c_char {
    guard_value(std::ptr::null(), || Ok(opt_ptr(&arg(ack, "ack")?.batch_id)))
}

/// For the commit of an atomic batch publish: how many messages the batch
/// stored. 0 for other publishes, and for NULL.
#[no_mangle]
pub unsafe extern "C" fn natsio_pub_ack_batch_size(ack: *const natsio_pub_ack) -> u64 {
    guard_value(0, || Ok(arg(ack, "ack")?.ack.batch_size))
}

/// The acknowledgement a JetStream publish produced (`natsio_js_publish_async`),
/// as a new `natsio_pub_ack` freed with `natsio_pub_ack_free`. Returns
/// NATSIO_PENDING while the publish awaits its ack, the publish's error
/// status if it failed, NATSIO_ERR_ILLEGAL_STATE for a token of another
/// kind of operation.
#[no_mangle]
pub unsafe extern "C" fn natsio_token_pub_ack(
    token: *const natsio_token,
    ack_out: *mut *mut natsio_pub_ack,
) -> natsio_status {
    token_shared_value(token, ack_out, "ack_out", |_, a: Arc<PubAck>| {
        Ok(Box::into_raw(Box::new(natsio_pub_ack::new(a))))
    })
}

/// Frees an ack. Accepts NULL.
#[no_mangle]
pub unsafe extern "C" fn natsio_pub_ack_free(ack: *mut natsio_pub_ack) {
    free_box(ack)
}
