//! `ClientHandle`: a weak reference to a client, with the few operations
//! that outlive the call that made them: a message replied to or acked, a
//! token's completion callback, a deferred frame sent before a wait. The
//! FFI layer's handles (messages, tokens, iterators, buckets) hold one; it
//! keeps no connection alive and names none of the client's internals.

use std::sync::{Arc, Weak};

use crate::client::{Client, ClientInner};
use crate::error::{Error, Result};
use crate::headers::Headers;
use crate::library_thread;
use crate::message::Message;

/// A client that may have been closed and dropped meanwhile: every
/// operation fails with `ConnectionClosed` then (or, where nothing can
/// fail, does nothing). Cheap to clone.
#[derive(Clone, Default)]
pub struct ClientHandle(Weak<ClientInner>);

impl ClientHandle {
    /// A handle to `client`.
    pub(crate) fn of(client: &Client) -> Self {
        Self::from(&client.inner)
    }

    /// The client, for the core's own modules (`ConnectionClosed` once it
    /// is gone).
    pub(crate) fn live(&self) -> Result<Arc<ClientInner>> {
        self.0.upgrade().ok_or_else(Error::closed)
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
                let _ = library_thread::spawn("natsio-token-cb", job);
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
        self.live()?.respond(msg, headers, payload)
    }
}

impl From<&Arc<ClientInner>> for ClientHandle {
    fn from(inner: &Arc<ClientInner>) -> Self {
        ClientHandle(Arc::downgrade(inner))
    }
}
