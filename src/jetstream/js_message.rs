//! `JsMessage`: a received message with the client it came through, and
//! what a JetStream consumer adds to it: its acknowledgements, each
//! terminal one (ack, nak, term) accepted once.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use super::consumer::{ack_subject, ack_sync, send_ack_to, AckKind};
use crate::client::{ClientInner, Wake};
use crate::client_handle::ClientHandle;
use crate::error::{Error, ErrorKind, Result};
use crate::message::Message;
use crate::op::Op;

/// A received message, its client and its acknowledgement state. Any
/// message may be one (a reply, a subscription's): acknowledging one that
/// carries no JetStream ack subject fails with `NotJsMessage`. The state is
/// this value's: a `copy` starts from it and goes its own way.
pub struct JsMessage {
    pub(crate) msg: Message,
    pub(crate) client: ClientHandle,
    /// A terminal acknowledgement was sent (or is in flight): a second one
    /// fails with `MessageAlreadyAcked`; a failed one clears it. Made on
    /// first use: most messages are never acknowledged, and one allocation
    /// per message showed in the delivery path.
    acked: OnceLock<Arc<AtomicBool>>,
}

impl JsMessage {
    pub(crate) fn new(msg: Message, client: ClientHandle) -> Self {
        JsMessage {
            msg,
            client,
            acked: OnceLock::new(),
        }
    }

    /// A second value of the same message (sharing its buffer), starting
    /// with this one's acknowledgement state.
    pub(crate) fn copy(&self) -> JsMessage {
        let copy = JsMessage::new(self.msg.clone(), self.client.clone());
        if let Some(acked) = self.acked.get() {
            copy.acked()
                .store(acked.load(Ordering::SeqCst), Ordering::SeqCst);
        }
        copy
    }

    fn acked(&self) -> &Arc<AtomicBool> {
        self.acked.get_or_init(Default::default)
    }

    /// Checks an acknowledgement may be sent and marks a terminal one:
    /// the client to send it with and the ack subject.
    fn begin(&self, kind: &AckKind) -> Result<(Arc<ClientInner>, &str)> {
        let subject = ack_subject(&self.msg)?;
        let client = self.client.live()?;
        if kind.is_terminal() && self.acked().swap(true, Ordering::SeqCst) {
            return Err(Error::new(
                ErrorKind::MessageAlreadyAcked,
                "message already acknowledged or terminated",
            ));
        }
        Ok((client, subject))
    }

    /// Sends `kind`, buffered like a publish (`wake` as for a publish).
    pub(crate) fn ack(&self, kind: &AckKind, wake: Wake) -> Result<()> {
        let (client, subject) = self.begin(kind)?;
        let r = send_ack_to(&client, subject, kind, wake);
        if r.is_err() && kind.is_terminal() {
            self.acked().store(false, Ordering::SeqCst);
        }
        r
    }

    /// Acks and yields the server's confirmation; a failure clears the
    /// mark. `timeout` gives the wait from the client's request timeout
    /// (its default); its error is the call's.
    pub(crate) fn ack_sync(
        &self,
        timeout: impl FnOnce(Duration) -> Result<Duration>,
    ) -> Result<Op<()>> {
        let (client, _) = self.begin(&AckKind::Ack)?;
        let acked = Arc::clone(self.acked());
        let op = match timeout(client.opts.request_timeout) {
            Ok(t) => ack_sync(&client, &self.msg, &AckKind::Ack, t),
            Err(e) => {
                acked.store(false, Ordering::SeqCst);
                return Err(e);
            }
        };
        Ok(Op::new(async move {
            let r = op.await;
            if r.is_err() {
                acked.store(false, Ordering::SeqCst);
            }
            r
        }))
    }
}
