//! `ClientHandle`: a weak reference to a client, with the few operations
//! that outlive the call that made them: a message replied to or acked, a
//! token's completion callback, a deferred frame sent before a wait. The
//! FFI layer's handles (messages, tokens, iterators, buckets) hold one; it
//! keeps no connection alive and names none of the client's internals.

use std::sync::{Arc, Weak};
use std::time::Duration;

use crate::client::{respond, Client, ClientInner, Wake};
use crate::error::{Error, Result};
use crate::headers::Headers;
use crate::message::Message;
use crate::op::Op;

/// A client that may have been closed and dropped meanwhile: every
/// operation fails with `ConnectionClosed` then (or, where nothing can
/// fail, does nothing). Cheap to clone.
#[derive(Clone, Default)]
pub struct ClientHandle(Weak<ClientInner>);

impl ClientHandle {
    /// A handle to `client`.
    pub(crate) fn of(client: &Client) -> Self {
        Self::from(client.inner_for_ffi())
    }

    /// The client, for the core's own modules (`ConnectionClosed` once it
    /// is gone).
    pub(crate) fn live(&self) -> Result<Arc<ClientInner>> {
        self.0.upgrade().ok_or_else(Error::closed)
    }

    /// Fails with `ConnectionClosed` once the client is gone.
    pub(crate) fn check_open(&self) -> Result<()> {
        self.live().map(drop)
    }

    /// Wakes the writer for frames queued without waking it
    /// (`Wake::Deferred`): what a thread about to wait may be waiting for.
    pub(crate) fn send_deferred(&self) {
        if let Some(c) = self.0.upgrade() {
            c.send_deferred();
        }
    }

    /// Runs `job` on the client's completions thread, or on a thread of its
    /// own once the client is gone (the job still runs, exactly once).
    pub(crate) fn post_completion(&self, job: Box<dyn FnOnce() + Send>) {
        match self.0.upgrade() {
            Some(c) => c.post_completion(job),
            None => {
                let _ = std::thread::Builder::new()
                    .name("natsio-token-cb".into())
                    .spawn(job);
            }
        }
    }

    /// Replies to `msg` (its reply subject).
    pub(crate) fn respond(
        &self,
        msg: &Message,
        headers: Option<&Headers>,
        payload: &[u8],
    ) -> Result<()> {
        respond(&*self.live()?, msg, headers, payload)
    }

    /// Sends `body` to `subject` without headers or reply, buffered like a
    /// publish (`wake` as for a publish): a JetStream acknowledgement.
    pub(crate) fn send(&self, subject: &str, body: &[u8], wake: Wake) -> Result<()> {
        self.live()?
            .publish_frame_checked(subject, None, None, body, wake)
    }

    /// A request of `body` to `subject`, answered within `timeout`. Only a
    /// client gone fails at once; what sending meets (a closed connection
    /// among them) is the operation's result, as for every token form.
    pub(crate) fn request(
        &self,
        subject: &str,
        body: &[u8],
        timeout: Duration,
    ) -> Result<Op<Message>> {
        let client = self.live()?;
        let (subject, body) = (subject.to_string(), body.to_vec());
        Ok(Op::new(async move {
            client.request_fut(&subject, None, &body, timeout)?.await
        }))
    }

    /// The client's request timeout (what NATSIO_TIMEOUT_DEFAULT stands for).
    pub(crate) fn request_timeout(&self) -> Result<Duration> {
        Ok(self.live()?.opts.request_timeout)
    }
}

impl From<&Arc<ClientInner>> for ClientHandle {
    fn from(inner: &Arc<ClientInner>) -> Self {
        ClientHandle(Arc::downgrade(inner))
    }
}
