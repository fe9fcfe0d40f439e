//! Closing and draining a client: the close that ends every part in
//! order (writes, the connection task, requests, subscriptions, flows,
//! events), the drain before it, and the close after a lost connection
//! that may not reconnect.

use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::client::inner::ClientInner;
use crate::client::state::{CloseBegun, ConnState};
use crate::dispatch;
use crate::error::{Error, ErrorKind, Result};
use crate::library_thread;
use crate::options::EventKind;

impl ClientInner {
    /// Called by the connection task when it ends.
    pub(crate) fn connection_ended(self: &Arc<Self>, lost: Option<Error>) {
        self.state.connection_done();
        if let Some(e) = lost {
            if self.state() != ConnState::Closed {
                // Closing joins user threads: never do that on the runtime.
                let me = self.task_ref();
                let _ = library_thread::spawn("natsio-close", move || me.close_with(Some(e)));
            }
        }
    }

    pub(crate) fn close_with(&self, reason: Option<Error>) {
        let owner = self.owner_id;
        if let CloseBegun::Elsewhere = self.state.begin_close(|| dispatch::is_dispatcher_of(owner))
        {
            return;
        }
        self.state.set(ConnState::Closed);
        self.state.note_closed();
        let closed = reason.clone().map_or_else(Error::closed, |e| {
            Error::new(
                ErrorKind::ConnectionClosed,
                format!("connection closed: {}", e.detail()),
            )
        });
        // Stop accepting writes; fail pending flushes.
        for c in self.write.close(&closed) {
            c.complete(Err(closed.clone()));
        }
        // Stop the connection task; its writer sends what was accepted.
        self.state.shutdown.set();
        self.write.writer_wake.notify_one();
        // A reader paused by the BLOCK policy must notice the shutdown.
        self.routing.wake_paused_readers();
        self.state.wait_connection_done(Duration::from_secs(5));
        // Fail pending requests.
        self.requests.fail_all(&closed);
        // Close every subscription and wait for their handlers.
        let subs = self.routing.take_all();
        for s in &subs {
            s.fail(closed.clone());
        }
        for s in &subs {
            s.feed.join_dispatcher();
        }
        for f in self.state.take_flows() {
            f.end_and_join(closed.clone());
        }
        if let Some(e) = reason {
            self.report_error(e, None);
        }
        self.events.emit(EventKind::Closed, None, None, Vec::new());
        // Release the application's callback state here, not on a runtime thread.
        self.events.stop();
        self.state.finish_close();
    }

    /// Closes a client whose connect failed: it never existed for the
    /// application, so it delivers no events.
    pub(crate) fn abandon(&self) {
        self.events.drop_event_callback();
        self.state.connection_done();
        self.close_with(None);
    }

    /// Moves the client to Draining (a second drain fails at once). A
    /// client that is reconnecting drains too: its UNSUBs and the flush
    /// wait in the reconnect buffer, behind the subscriptions it re-sends,
    /// so the drain completes once it has reconnected (the reconnect
    /// leaves a Draining state as it is), or ends with DRAIN_TIMEOUT and
    /// closes if that takes longer than the drain's bound. Nothing buffered
    /// is lost either way, where nats.go closes at once and fails with
    /// "reconnecting".
    pub(crate) fn begin_drain(&self) -> Result<()> {
        for from in [ConnState::Connected, ConnState::Reconnecting] {
            if self.state.change(from, ConnState::Draining) {
                return Ok(());
            }
        }
        Err(match self.state() {
            ConnState::Draining => Error::new(ErrorKind::IllegalState, "already draining"),
            ConnState::Connecting | ConnState::Disconnected => Error::new(
                ErrorKind::IllegalState,
                "not connected yet: drain once the first connect has succeeded",
            ),
            _ => Error::closed(),
        })
    }

    pub(crate) fn drain(&self, timeout: Duration) -> Result<()> {
        self.begin_drain()?;
        self.drain_begun(timeout)
    }

    /// The rest of a drain, once `begin_drain` succeeded.
    pub(crate) fn drain_begun(&self, timeout: Duration) -> Result<()> {
        let deadline = crate::clock::deadline_in(timeout);
        let subs = self.routing.select(|_| true);
        let waiters: Vec<_> = subs.iter().map(|s| self.drain_sub(s)).collect();
        let mut timed_out = false;
        for w in &waiters {
            let left = deadline.saturating_duration_since(Instant::now());
            if w.wait(Some(left)).is_none() {
                timed_out = true;
                break;
            }
        }
        self.write.block_publishes();
        if !timed_out {
            let left = deadline.saturating_duration_since(Instant::now());
            if self.flush_async().wait(Some(left)).is_none() {
                timed_out = true;
            }
        }
        let result = if timed_out {
            let e = Error::new(
                ErrorKind::DrainTimeout,
                format!("drain did not finish within {timeout:?}"),
            );
            self.report_error(e.clone(), None);
            Err(e)
        } else {
            Ok(())
        };
        self.close_with(None);
        result
    }
}
