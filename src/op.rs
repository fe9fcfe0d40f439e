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
    /// Set while this thread runs an operation to completion (`wait`):
    /// someone is blocked on it, so its requests go out at once.
    static CALLER_WAITS: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Whether the operation running on this thread has a caller blocked on
/// it. Its requests are then written at once (latency); started
/// operations let the writer coalesce theirs (throughput: many in flight).
pub(crate) fn caller_waits() -> bool {
    CALLER_WAITS.with(|c| c.get())
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
        let outer = CALLER_WAITS.with(|c| c.replace(true));
        let r = run_here(fut);
        CALLER_WAITS.with(|c| c.set(outer));
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
/// work), then, if not finished, handed to the runtime. Cancelling the
/// completion aborts the task.
pub(crate) fn spawn(
    fut: impl Future<Output = Result<Outcome>> + Send + 'static,
) -> Arc<Completion> {
    let done = Completion::new();
    let finish = Arc::clone(&done);
    let mut task = Box::pin(async move {
        let r = fut.await;
        finish.complete(r);
    });
    let handle = crate::runtime::handle();
    let pending = {
        let _ctx = handle.enter();
        let mut cx = Context::from_waker(std::task::Waker::noop());
        task.as_mut().poll(&mut cx).is_pending()
    };
    if pending {
        // The runtime polls it again at once, registering its own waker:
        // whatever the first poll waited for is seen then.
        let join = handle.spawn(task);
        let abort = join.abort_handle();
        done.set_cancel_hook(move || abort.abort());
        if done.is_done() {
            // Cancelled between the first poll and the hook.
            join.abort();
        }
    }
    done
}
