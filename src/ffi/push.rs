//! Push consumers through a `natsio_js` context: consuming one into the
//! same iterator (`natsio_js_messages`) as a pull consumption. A push
//! consumer is created with `natsio_js_consumer_create` and a config that
//! has a "deliver_subject".

use std::ffi::c_char;

use super::consumer::natsio_js_messages;
use super::js::natsio_js;
use super::status::natsio_status;
use super::token::natsio_token;
use super::{arg, guard, out_arg, start_op, str_arg, write_box, TakeOnce};
use crate::error::Result;
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
