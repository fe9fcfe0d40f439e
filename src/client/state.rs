//! A client's lifecycle state: the connection state, the close gate, the
//! shutdown signal its tasks watch, the library tasks that hold it, what
//! flows watch to re-establish themselves, and the flows to end at close.
//! Below everything else of the client: the write side, the connector and
//! the routing read the shutdown signal; closing and draining (in
//! `lifecycle.rs`) drive the rest.

use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::sync::{Arc, Condvar, Mutex, Weak};
use std::time::Duration;

use crate::completion::lock;
use crate::feed::Endable;

/// Connection state, as reported by `Client::status`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum ConnState {
    Disconnected = 0,
    Connecting = 1,
    Connected = 2,
    Reconnecting = 3,
    Draining = 4,
    Closed = 5,
}

impl ConnState {
    fn from_u8(v: u8) -> ConnState {
        match v {
            1 => ConnState::Connecting,
            2 => ConnState::Connected,
            3 => ConnState::Reconnecting,
            4 => ConnState::Draining,
            5 => ConnState::Closed,
            _ => ConnState::Disconnected,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum CloseState {
    Open,
    Closing,
    Closed,
}

/// What flows watch to re-establish themselves: the number of reconnects
/// so far, and whether the client has closed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Lifecycle {
    pub reconnects: u64,
    pub closed: bool,
}

/// Asks the connection task (its reader, writer and reconnect loop) to
/// end; set once, when the client closes.
#[derive(Default)]
pub(crate) struct Shutdown {
    flag: AtomicBool,
    notify: tokio::sync::Notify,
}

impl Shutdown {
    pub(crate) fn is_set(&self) -> bool {
        self.flag.load(Ordering::SeqCst)
    }

    /// Sets the flag and wakes the one task waiting in `notified` (or the
    /// next one to wait).
    pub(crate) fn set(&self) {
        self.flag.store(true, Ordering::SeqCst);
        self.notify.notify_one();
    }

    pub(crate) fn notified(&self) -> tokio::sync::futures::Notified<'_> {
        self.notify.notified()
    }
}

/// How many `TaskRef`s are alive.
#[derive(Default)]
struct TaskHolds {
    count: Mutex<usize>,
    released: Condvar,
}

/// One library task's or thread's hold on the client (see `TaskRef`):
/// counted until dropped.
pub(crate) struct TaskHold(Arc<TaskHolds>);

impl Drop for TaskHold {
    fn drop(&mut self) {
        let mut n = lock(&self.0.count);
        *n -= 1;
        if *n == 0 {
            self.0.released.notify_all();
        }
    }
}

/// Whether a close that finds another one under way waits for it.
pub(crate) enum CloseBegun {
    /// This call closes.
    Now,
    /// Closed already, or closing elsewhere (waited for unless
    /// `from_own_dispatcher`).
    Elsewhere,
}

/// The client's lifecycle state (see the module's comment).
pub(crate) struct ClientState {
    state: AtomicU8,
    close_state: Mutex<CloseState>,
    close_cv: Condvar,
    conn_done: Mutex<bool>,
    conn_done_cv: Condvar,
    /// The library's own tasks and threads that hold the client (see
    /// `TaskRef`); freeing the client waits for them.
    task_holds: Arc<TaskHolds>,
    lifecycle: tokio::sync::watch::Sender<Lifecycle>,
    /// Flows fed by this client (consume, watch, request-many): closing
    /// the client ends them before `close` returns.
    flows: Mutex<Vec<Weak<dyn Endable>>>,
    pub(crate) shutdown: Shutdown,
}

impl Default for ClientState {
    fn default() -> Self {
        ClientState {
            state: AtomicU8::new(ConnState::Connecting as u8),
            close_state: Mutex::new(CloseState::Open),
            close_cv: Condvar::new(),
            conn_done: Mutex::new(false),
            conn_done_cv: Condvar::new(),
            task_holds: Arc::default(),
            lifecycle: tokio::sync::watch::Sender::new(Lifecycle::default()),
            flows: Mutex::new(Vec::new()),
            shutdown: Shutdown::default(),
        }
    }
}

impl ClientState {
    pub(crate) fn get(&self) -> ConnState {
        ConnState::from_u8(self.state.load(Ordering::SeqCst))
    }

    pub(crate) fn set(&self, s: ConnState) {
        self.state.store(s as u8, Ordering::SeqCst);
    }

    /// Moves from `from` to `to`; false when the state was not `from`.
    pub(crate) fn change(&self, from: ConnState, to: ConnState) -> bool {
        self.state
            .compare_exchange(from as u8, to as u8, Ordering::SeqCst, Ordering::SeqCst)
            .is_ok()
    }

    /// A hold for a library task or thread; see `TaskRef`.
    pub(crate) fn hold(&self) -> TaskHold {
        *lock(&self.task_holds.count) += 1;
        TaskHold(Arc::clone(&self.task_holds))
    }

    /// Waits, up to `timeout`, until no `TaskRef` is left.
    pub(crate) fn wait_for_task_refs(&self, timeout: Duration) {
        let holds = &self.task_holds;
        let n = lock(&holds.count);
        let _ = holds
            .released
            .wait_timeout_while(n, timeout, |n| *n > 0)
            .unwrap_or_else(|p| p.into_inner());
    }

    /// Enters the close: `Now` for the first caller; a later caller waits
    /// until the close has finished, unless `from_own_dispatcher` (one of
    /// the client's callbacks, which the close waits for).
    pub(crate) fn begin_close(&self, from_own_dispatcher: impl FnOnce() -> bool) -> CloseBegun {
        let mut cs = lock(&self.close_state);
        match *cs {
            CloseState::Closed => CloseBegun::Elsewhere,
            CloseState::Closing => {
                if from_own_dispatcher() {
                    return CloseBegun::Elsewhere;
                }
                while *cs != CloseState::Closed {
                    cs = self.close_cv.wait(cs).unwrap_or_else(|p| p.into_inner());
                }
                CloseBegun::Elsewhere
            }
            CloseState::Open => {
                *cs = CloseState::Closing;
                CloseBegun::Now
            }
        }
    }

    pub(crate) fn finish_close(&self) {
        *lock(&self.close_state) = CloseState::Closed;
        self.close_cv.notify_all();
    }

    /// The close has finished (not merely begun).
    pub(crate) fn is_closed(&self) -> bool {
        *lock(&self.close_state) == CloseState::Closed
    }

    /// The connection task has ended (or never started).
    pub(crate) fn connection_done(&self) {
        *lock(&self.conn_done) = true;
        self.conn_done_cv.notify_all();
    }

    /// Waits up to `timeout` for `connection_done`.
    pub(crate) fn wait_connection_done(&self, timeout: Duration) {
        let done = lock(&self.conn_done);
        let _ = self
            .conn_done_cv
            .wait_timeout_while(done, timeout, |done| !*done)
            .unwrap_or_else(|p| p.into_inner());
    }

    pub(crate) fn lifecycle(&self) -> tokio::sync::watch::Receiver<Lifecycle> {
        self.lifecycle.subscribe()
    }

    pub(crate) fn note_reconnect(&self) {
        self.lifecycle.send_modify(|l| l.reconnects += 1);
    }

    pub(crate) fn note_closed(&self) {
        self.lifecycle.send_modify(|l| l.closed = true);
    }

    /// Registers a flow for `take_flows`.
    pub(crate) fn add_flow(&self, flow: Weak<dyn Endable>) {
        let mut flows = lock(&self.flows);
        flows.retain(|f| f.strong_count() > 0);
        flows.push(flow);
    }

    /// The flows still alive, for the close to end.
    pub(crate) fn take_flows(&self) -> Vec<Arc<dyn Endable>> {
        std::mem::take(&mut *lock(&self.flows))
            .into_iter()
            .filter_map(|f| f.upgrade())
            .collect()
    }
}
