//! Operations: every request-shaped call of the library (a KV get, a stream
//! create, a fetch, a connect) is one `Op`: its arguments checked at once,
//! then a future driven by the runtime and the client's reply routing.
//!
//! The same future runs either way a caller wants it:
//! - `wait`: on the caller's thread (`block_on`), for blocking calls; the
//!   reply wakes the caller directly, with no hop through another thread;
//! - `start`: as a task on the runtime, finishing a `Completion` (a C
//!   token); it is first polled on the caller's thread, so the request
//!   leaves from there, and only the rest runs on the runtime;
//! - `.await`: from async Rust.

use std::future::{Future, IntoFuture};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use crate::completion::{Completion, Outcome};
use crate::error::{Error, Result};

type BoxFut<T> = Pin<Box<dyn Future<Output = Result<T>> + Send + 'static>>;

thread_local! {
    /// How the requests of the operation polled on this thread are written.
    static URGENCY: std::cell::Cell<Urgency> = const { std::cell::Cell::new(Urgency::Coalesce) };
}

tokio::task_local! {
    /// The completion of the started operation being polled, where its
    /// steps add what a cancel must undo at once (`on_cancel`).
    static STARTED: Arc<Completion>;
}

/// Runs `undo` on the cancelling thread, before the cancel returns, if the
/// started operation polling this is cancelled before it completes. The
/// operation's task is dropped later, on the runtime; what the server must
/// not see after the cancel (a pull request's inbox) is undone here. No
/// effect for an operation waited on or awaited: dropping it undoes.
pub(crate) fn on_cancel(undo: impl FnOnce() + Send + 'static) {
    let _ = STARTED.try_with(|c| c.add_cancel_hook(undo));
}

/// How an operation's requests are written.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Urgency {
    /// A caller is blocked on the operation (`wait`): at once when the
    /// writer is idle (latency).
    Now,
    /// The application has just started it (its first poll), or an
    /// asynchronous JetStream publish: at once when no other request of
    /// the client awaits its reply (one operation waited for at a time),
    /// else coalesced (many in flight: throughput). Decided where the
    /// request is registered (`start_request_into`).
    IfAlone,
    /// It runs on the runtime: the writer coalesces.
    Coalesce,
    /// An asynchronous JetStream publish whose caller batches
    /// (`PublishOptions::defer_send`): at once when alone like `IfAlone`,
    /// else queued without waking the writer (`client::Wake::Deferred`).
    Deferred,
}

/// How the operation being polled on this thread writes its requests.
pub(crate) fn urgency() -> Urgency {
    URGENCY.with(|c| c.get())
}

/// An operation not started yet, or the error its arguments gave.
#[must_use = "an Op does nothing until it is waited on, started or awaited"]
pub struct Op<T> {
    inner: Result<BoxFut<T>>,
}

impl<T: Send + 'static> Op<T> {
    /// An operation running `fut`.
    pub fn new(fut: impl Future<Output = Result<T>> + Send + 'static) -> Op<T> {
        Op {
            inner: Ok(Box::pin(fut)),
        }
    }

    /// An operation whose arguments are checked by `prepare`, which returns
    /// the future to run (or the argument error, reported at once).
    pub fn build<F>(prepare: impl FnOnce() -> Result<F>) -> Op<T>
    where
        F: Future<Output = Result<T>> + Send + 'static,
    {
        match prepare() {
            Ok(f) => Op::new(f),
            Err(e) => Op::fail(e),
        }
    }

    /// An operation that fails with `e` when run.
    pub fn fail(e: Error) -> Op<T> {
        Op { inner: Err(e) }
    }

    /// The argument error, if any, without running anything.
    pub fn check(&self) -> Result<()> {
        match &self.inner {
            Ok(_) => Ok(()),
            Err(e) => Err(e.clone()),
        }
    }

    /// Transforms the result.
    pub fn map<U: Send + 'static>(self, f: impl FnOnce(T) -> U + Send + 'static) -> Op<U> {
        match self.inner {
            Ok(fut) => Op::new(async move { fut.await.map(f) }),
            Err(e) => Op::fail(e),
        }
    }

    /// Runs the operation on the runtime and waits for its result on this
    /// thread: for an operation that writes to a socket itself (a
    /// connection's handshake), which only the runtime's threads may do
    /// without risking SIGPIPE.
    pub fn wait_on_runtime(self) -> Result<T> {
        let fut = self.inner?;
        crate::runtime::ensure_may_block()?;
        let (tx, rx) = std::sync::mpsc::sync_channel(1);
        crate::runtime::handle().spawn(async move {
            let _ = tx.send(fut.await);
        });
        rx.recv().unwrap_or_else(|_| {
            Err(Error::new(
                crate::error::ErrorKind::Internal,
                "operation lost",
            ))
        })
    }

    /// Transforms the result with a step that may fail.
    pub fn and_then<U: Send + 'static>(
        self,
        f: impl FnOnce(T) -> Result<U> + Send + 'static,
    ) -> Op<U> {
        match self.inner {
            Ok(fut) => Op::new(async move { fut.await.and_then(f) }),
            Err(e) => Op::fail(e),
        }
    }

    /// Runs the operation on this thread until it finishes. Fails with
    /// `IllegalState` on a runtime thread, where blocking would deadlock.
    pub fn wait(self) -> Result<T> {
        let fut = self.inner?;
        crate::runtime::ensure_may_block()?;
        let outer = URGENCY.with(|c| c.replace(Urgency::Now));
        let r = run_here(fut);
        URGENCY.with(|c| c.set(outer));
        r
    }

    /// Starts the operation; its completion gets `to_outcome(result)`.
    /// Argument errors are returned at once (nothing is started).
    pub fn start_with(
        self,
        to_outcome: impl FnOnce(T) -> Outcome + Send + 'static,
    ) -> Result<Arc<Completion>> {
        let fut = self.inner?;
        Ok(spawn(async move { fut.await.map(to_outcome) }))
    }
}

impl<T: std::any::Any + Send + Sync> Op<T> {
    /// Starts the operation; its completion holds the result as
    /// `Outcome::Value` (read with `Outcome::downcast::<T>`).
    pub fn start(self) -> Result<Arc<Completion>> {
        self.start_with(Outcome::value)
    }
}

impl<T: Send + 'static> IntoFuture for Op<T> {
    type Output = Result<T>;
    type IntoFuture = OpFuture<T>;

    fn into_future(self) -> OpFuture<T> {
        OpFuture {
            inner: Some(self.inner),
        }
    }
}

/// An `Op` being awaited.
pub struct OpFuture<T> {
    inner: Option<Result<BoxFut<T>>>,
}

impl<T> Future for OpFuture<T> {
    type Output = Result<T>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<T>> {
        match self.inner.as_mut() {
            None => Poll::Ready(Err(Error::new(
                crate::error::ErrorKind::IllegalState,
                "operation polled after it finished",
            ))),
            Some(Err(_)) => match self.inner.take() {
                Some(Err(e)) => Poll::Ready(Err(e)),
                _ => unreachable!("checked above"),
            },
            Some(Ok(fut)) => {
                let r = fut.as_mut().poll(cx);
                if r.is_ready() {
                    self.inner = None;
                }
                r
            }
        }
    }
}

/// Wakes a thread parked in `run_here`.
struct ThreadWaker {
    thread: std::thread::Thread,
    woken: std::sync::atomic::AtomicBool,
}

impl std::task::Wake for ThreadWaker {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        if !self.woken.swap(true, std::sync::atomic::Ordering::AcqRel) {
            self.thread.unpark();
        }
    }
}

/// Drives `fut` to completion on this thread, parking it between polls
/// (a futex, as a condvar wait would be; lighter than a runtime
/// `block_on`), inside the runtime's context so that timers and I/O work.
fn run_here<F: Future>(fut: F) -> F::Output {
    let _ctx = crate::runtime::handle().enter();
    let me = Arc::new(ThreadWaker {
        thread: std::thread::current(),
        woken: std::sync::atomic::AtomicBool::new(false),
    });
    let waker = std::task::Waker::from(Arc::clone(&me));
    let mut cx = Context::from_waker(&waker);
    let mut fut = std::pin::pin!(fut);
    loop {
        if let Poll::Ready(v) = fut.as_mut().poll(&mut cx) {
            return v;
        }
        while !me.woken.swap(false, std::sync::atomic::Ordering::AcqRel) {
            std::thread::park();
        }
    }
}

/// Runs `fut` as an operation finishing the returned completion: polled
/// once on this thread (inside the runtime's context, so timers and I/O
/// work; on an application thread its first request is written at once
/// when no other is in flight: `Urgency::IfAlone`), then parked until
/// something it waits for wakes it, which hands it to the runtime. So a
/// started request costs no runtime thread's wake-up until its reply
/// arrives (the reading thread then runs the rest). Cancelling the
/// completion drops a parked operation or aborts its task.
pub(crate) fn spawn(
    fut: impl Future<Output = Result<Outcome>> + Send + 'static,
) -> Arc<Completion> {
    let done = Completion::new();
    let finish = Arc::clone(&done);
    let fut = STARTED.scope(Arc::clone(&done), fut);
    let mut task: Task = Box::pin(async move {
        let r = fut.await;
        finish.complete(r);
    });
    let parked = Arc::new(Parked {
        state: std::sync::Mutex::new(ParkState::Polling { woken: false }),
    });
    let pending = {
        let _ctx = crate::runtime::handle().enter();
        let urgency = if crate::runtime::on_runtime_thread() {
            Urgency::Coalesce
        } else {
            Urgency::IfAlone
        };
        let outer = URGENCY.with(|c| c.replace(urgency));
        let waker = std::task::Waker::from(Arc::clone(&parked));
        let r = task.as_mut().poll(&mut Context::from_waker(&waker));
        URGENCY.with(|c| c.set(outer));
        r.is_pending()
    };
    if pending {
        parked.park(task);
        let p = Arc::clone(&parked);
        done.add_cancel_hook(move || p.cancel());
        if done.is_done() {
            // Cancelled between the first poll and the hook.
            parked.cancel();
        }
    }
    done
}

type Task = Pin<Box<dyn Future<Output = ()> + Send + 'static>>;

/// A started operation's place between its first poll and the runtime:
/// also the waker of that first poll.
struct Parked {
    state: std::sync::Mutex<ParkState>,
}

enum ParkState {
    /// Polled for the first time on the starting thread; `woken` when a
    /// wake-up came during that poll.
    Polling { woken: bool },
    /// Waiting for its first wake-up.
    Waiting(Task),
    /// Handed to the runtime (its abort handle, once spawned).
    Running(Option<tokio::task::AbortHandle>),
    /// Dropped or aborted by a cancel.
    Cancelled,
}

impl Parked {
    /// After the first poll: waits for a wake-up, or runs at once if one
    /// came during the poll.
    fn park(self: &Arc<Self>, task: Task) {
        let mut s = crate::completion::lock(&self.state);
        match *s {
            ParkState::Polling { woken: false } => *s = ParkState::Waiting(task),
            _ => {
                *s = ParkState::Running(None);
                drop(s);
                self.run(task);
            }
        }
    }

    /// Spawns the task; the lock is not held meanwhile (a task dropped by
    /// a runtime shutting down may wake this very waker).
    fn run(&self, task: Task) {
        let abort = crate::runtime::handle().spawn(task).abort_handle();
        let mut s = crate::completion::lock(&self.state);
        match *s {
            ParkState::Running(None) => *s = ParkState::Running(Some(abort)),
            // Cancelled while being spawned.
            _ => abort.abort(),
        }
    }

    fn cancel(&self) {
        let prev = std::mem::replace(
            &mut *crate::completion::lock(&self.state),
            ParkState::Cancelled,
        );
        match prev {
            ParkState::Waiting(task) => {
                // Its drop may release runtime resources (timers).
                let _ctx = crate::runtime::handle().enter();
                drop(task);
            }
            ParkState::Running(Some(abort)) => abort.abort(),
            _ => {}
        }
    }
}

impl std::task::Wake for Parked {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        let mut s = crate::completion::lock(&self.state);
        match &mut *s {
            ParkState::Polling { woken } => *woken = true,
            ParkState::Waiting(_) => {
                let ParkState::Waiting(task) = std::mem::replace(&mut *s, ParkState::Running(None))
                else {
                    unreachable!("matched above")
                };
                drop(s);
                self.run(task);
            }
            ParkState::Running(_) | ParkState::Cancelled => {}
        }
    }
}

#[cfg(test)]
mod tests {
    //! A started operation: first polled on the starting thread, parked
    //! without a runtime task until woken, then finished on the runtime.

    use std::sync::atomic::{AtomicBool, Ordering};
    use std::time::Duration;

    use super::*;
    use crate::error::ErrorKind;

    const PATIENCE: Duration = Duration::from_secs(20);

    /// Sets its flag when dropped: shows whether a parked future is gone.
    struct DropFlag(Arc<AtomicBool>);

    impl Drop for DropFlag {
        fn drop(&mut self) {
            self.0.store(true, Ordering::SeqCst);
        }
    }

    #[test]
    fn a_parked_operation_finishes_once_what_it_waits_for_arrives() {
        let (tx, rx) = tokio::sync::oneshot::channel::<u64>();
        let done = Op::new(async move { rx.await.map_err(|_| Error::closed()) })
            .start()
            .expect("started");
        assert!(!done.is_done(), "finished before its value was sent");
        std::thread::spawn(move || tx.send(7).expect("receiver alive"));
        let outcome = done.wait(Some(PATIENCE)).expect("finished").expect("ok");
        assert_eq!(outcome.downcast::<u64>().map(|v| *v), Some(7));
    }

    #[test]
    fn a_wake_during_the_first_poll_runs_the_operation_on() {
        let done = Op::new(async {
            tokio::task::yield_now().await;
            Ok(1u8)
        })
        .start()
        .expect("started");
        let outcome = done.wait(Some(PATIENCE)).expect("finished").expect("ok");
        assert_eq!(outcome.downcast::<u8>().map(|v| *v), Some(1));
    }

    #[test]
    fn an_operation_finished_by_its_first_poll_needs_no_runtime_task() {
        let done = Op::new(async { Ok(5u8) }).start().expect("started");
        assert!(done.is_done(), "finished on the starting thread");
    }

    #[test]
    fn cancelling_a_parked_operation_drops_it_and_fails_its_completion() {
        let dropped = Arc::new(AtomicBool::new(false));
        let flag = DropFlag(Arc::clone(&dropped));
        let (_tx, rx) = tokio::sync::oneshot::channel::<()>();
        let done = Op::new(async move {
            let _flag = flag;
            rx.await.map_err(|_| Error::closed())
        })
        .start()
        .expect("started");
        assert!(done.cancel());
        assert!(dropped.load(Ordering::SeqCst), "the parked future was kept");
        match done.result() {
            Some(Err(e)) => assert_eq!(e.kind(), ErrorKind::Cancelled),
            other => panic!("not cancelled: {other:?}"),
        }
    }

    #[test]
    fn cancelling_a_running_operation_aborts_its_task() {
        let dropped = Arc::new(AtomicBool::new(false));
        let flag = DropFlag(Arc::clone(&dropped));
        let done = Op::new(async move {
            let _flag = flag;
            // Woken once (now a task on the runtime), then never again.
            tokio::task::yield_now().await;
            std::future::pending::<Result<()>>().await
        })
        .start()
        .expect("started");
        // An absence: not ended within 50 ms.
        std::thread::sleep(Duration::from_millis(50));
        assert!(!dropped.load(Ordering::SeqCst));
        assert!(done.cancel());
        let deadline = std::time::Instant::now() + PATIENCE;
        while !dropped.load(Ordering::SeqCst) {
            assert!(
                std::time::Instant::now() < deadline,
                "the task was not aborted"
            );
            std::thread::sleep(Duration::from_millis(5));
        }
    }
}
