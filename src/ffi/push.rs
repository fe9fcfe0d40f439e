//! Push consumers through a `natsio_js` context: consuming one into the
//! same iterator (`natsio_js_messages`) as a pull consumption. A push
//! consumer is created with `natsio_js_consumer_create` and a config that
//! has a "deliver_subject".

use std::ffi::{c_char, CString};
use std::sync::Arc;

use super::consumer::natsio_js_messages;
use super::iter;
use super::js::natsio_js;
use super::status::natsio_status;
use super::token::natsio_token;
use super::{arg, guard, out_arg, start_op, str_arg, write_box, TakeOnce};
use crate::client_handle::ClientHandle;
use crate::error::Result;
use crate::feed::Feed;
use crate::jetstream::Consumption;
use crate::op::Op;

unsafe fn push_consume_op<'a>(
    js: *const natsio_js,
    stream: *const c_char,
    consumer: *const c_char,
) -> Result<(&'a natsio_js, Op<Consumption>)> {
    let h: &'a natsio_js = arg(js, "js")?;
    let stream = str_arg(stream, "stream")?;
    let consumer = str_arg(consumer, "consumer")?;
    let op = h.js.push_consume(stream, consumer);
    op.check()?;
    Ok((h, op))
}

/// Starts consuming the push consumer `consumer` of `stream` (one created
/// with a "deliver_subject" in its config, durable or not) once its info
/// shows it exists: the library subscribes to its deliver subject (in its
/// "deliver_group" queue group when it has one, so that the members of the
/// group share the messages) and buffers what the server sends, bounded by
/// the client's pending limits. With the consumer's "flow_control", each
/// flow-control request is answered once the reader has finished with
/// every message delivered before it, so the server sends no faster than
/// the application reads and nothing is dropped; without it, what arrives
/// while the buffer is full waits in the subscription, bounded by the
/// client's pending limits again (beyond them a slow consumer is reported
/// to the error callback, and what is dropped the server redelivers after
/// the consumer's ack wait unless its ack policy is "none"). An idle heartbeat
/// naming a stalled flow-control reply gets that reply answered at once.
/// With its "idle_heartbeat", two intervals without a word from the server
/// are reported to the client's error callback (NATSIO_ERR_TIMEOUT, "no
/// heartbeat received", with the deliver subject) and consuming goes on.
/// Status messages never reach the reader. Read with the
/// `natsio_js_messages_` functions (iterator or callback); messages are
/// acknowledged with `natsio_msg_ack` etc. and carry
/// `natsio_msg_js_metadata`. `natsio_js_messages_stop` withdraws the
/// subscription before it returns. The consumer deleted ends the
/// iteration with NATSIO_ERR_CONSUMER_DELETED. The result goes to
/// `messages_out` (free with `natsio_js_messages_free`). Thread-safe;
/// blocks up to the context's timeout. Errors: NATSIO_ERR_NULL_ARGUMENT,
/// NATSIO_ERR_INVALID_UTF8, NATSIO_ERR_INVALID_ARGUMENT (bad names; a
/// consumer without a deliver subject, i.e. a pull consumer),
/// NATSIO_ERR_CONSUMER_NOT_FOUND, NATSIO_ERR_STREAM_NOT_FOUND,
/// NATSIO_ERR_TIMEOUT, NATSIO_ERR_CONNECTION_CLOSED.
#[no_mangle]
pub unsafe extern "C" fn natsio_js_push_consume(
    js: *const natsio_js,
    stream: *const c_char,
    consumer: *const c_char,
    messages_out: *mut *mut natsio_js_messages,
) -> natsio_status {
    guard(|| {
        let (h, op) = push_consume_op(js, stream, consumer)?;
        let out = out_arg(messages_out, "messages_out")?;
        let it = op.wait()?;
        write_box(
            out,
            natsio_js_messages {
                it,
                client: h.client_handle(),
            },
        );
        Ok(())
    })
}

/// The token form of `natsio_js_push_consume`; the iterator is taken
/// (once) with `natsio_token_js_messages`. A token freed without taking it
/// stops the consumption.
#[no_mangle]
pub unsafe extern "C" fn natsio_js_push_consume_async(
    js: *const natsio_js,
    stream: *const c_char,
    consumer: *const c_char,
    token_out: *mut *mut natsio_token,
) -> natsio_status {
    guard(|| {
        let (h, op) = push_consume_op(js, stream, consumer)?;
        start_op(op.map(TakeOnce::new), h.client_handle(), token_out)
    })
}

/// The status events of a consumption; for one whose producer tells none,
/// an ended feed (its reader gets NATSIO_DONE at once).
fn status_events(messages: *const natsio_js_messages) -> Result<(Arc<Feed<String>>, ClientHandle)> {
    // SAFETY: the caller passes a live handle or NULL.
    let it: &natsio_js_messages = unsafe { arg(messages, "messages")? };
    let events = match it.it.status_events() {
        Some(f) => Arc::clone(f),
        None => {
            let f = crate::jetstream::status_event_feed();
            f.finish();
            f
        }
    };
    Ok((events, it.client.clone()))
}

/// The next status event of a consumption (nats.js's consumer status
/// notifications), waiting up to `timeout_ms` (NATSIO_TIMEOUT_DEFAULT or
/// NATSIO_WAIT_FOREVER: until one comes; NATSIO_NO_WAIT: only one already
/// there), as JSON text in `status_json_out` (free with
/// `natsio_string_free`). Push (`natsio_js_push_consume`) and pull
/// (`natsio_js_consume`, `natsio_js_fetch_messages`) alike:
/// `{"type":"heartbeat","last_consumer_seq":N,"last_stream_seq":N}` for
/// each idle heartbeat, `{"type":"heartbeats_missed","count":N}` for each
/// heartbeat interval without a word from the server from the second on
/// (N counts the intervals; it starts again after the server's next word).
/// Push: `{"type":"flow_control"}` for each flow-control request answered.
/// Pull: `{"type":"next","options":{...}}` for each pull request sent (the
/// request's JSON); for a request the server ended with messages or bytes
/// left, `{"type":"discard","messages_left":N,"bytes_left":N}`; for the
/// server's statuses `{"type":"consumer_deleted","code":409,
/// "description":"consumer deleted"}`, `{"type":"exceeded_limits",
/// "code":409,"description":D}` (a request over max_batch, max_expires,
/// max_bytes or max_waiting), `{"type":"no_responders","code":503}`,
/// `{"type":"consumer_unpinned"}` (423) and `{"type":"debug","code":N,
/// "description":D}` for any other but 400 (404, 408: a request ended),
/// descriptions in lower case; `{"type":"consumer_pinned","id":ID}` when
/// a priority group pins the consumption. An ordered consumer's run tells
/// its pulls' events too, and `{"type":"reset","name":N}` then
/// `{"type":"ordered_consumer_recreated","name":N}` when it recreates its
/// consumer. Events are kept from the start of the consumption, the newest
/// 256 when nobody reads them. NATSIO_DONE (`*status_json_out` set to
/// NULL) once the consumption ended and its events are read, and at once
/// for an iterator whose producer tells none. Reading events does not take
/// messages: read them on another thread, or with
/// `natsio_js_messages_next_status_async`.
/// Thread-safe. Errors: NATSIO_ERR_NULL_ARGUMENT, NATSIO_ERR_TIMEOUT,
/// NATSIO_ERR_INVALID_ARGUMENT (timeout), NATSIO_ERR_ILLEGAL_STATE (on a
/// library runtime thread).
#[no_mangle]
pub unsafe extern "C" fn natsio_js_messages_next_status(
    messages: *const natsio_js_messages,
    timeout_ms: i64,
    status_json_out: *mut *mut c_char,
) -> natsio_status {
    match status_events(messages) {
        Ok((events, _)) => iter::next_ptr(
            &events,
            timeout_ms,
            status_json_out,
            "status_json_out",
            |e| {
                CString::new(e).map(CString::into_raw).map_err(|_| {
                    crate::error::Error::new(
                        crate::error::ErrorKind::Internal,
                        "string contains NUL",
                    )
                })
            },
        ),
        Err(e) => super::status::record(&e),
    }
}

/// A token for the next status event of `natsio_js_messages_next_status`
/// (read it with `natsio_token_string`; NATSIO_DONE at the end). Pending
/// tokens are served in call order; freeing or cancelling one before an
/// event reached it leaves the event queued. Thread-safe. Errors:
/// NATSIO_ERR_NULL_ARGUMENT.
#[no_mangle]
pub unsafe extern "C" fn natsio_js_messages_next_status_async(
    messages: *const natsio_js_messages,
    token_out: *mut *mut natsio_token,
) -> natsio_status {
    match status_events(messages) {
        Ok((events, client)) => iter::next_async(&events, client, token_out),
        Err(e) => super::status::record(&e),
    }
}
