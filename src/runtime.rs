//! The process-wide tokio runtime, started lazily on first use.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;

use tokio::runtime::{Builder, Handle, Runtime};

use crate::error::{Error, ErrorKind, Result};

static RUNTIME: OnceLock<Runtime> = OnceLock::new();
static WORKERS: AtomicUsize = AtomicUsize::new(0);

thread_local! {
    /// Set on the runtime's own threads.
    static ON_RUNTIME: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// One core fewer than the machine has, 1 to 4: the runtime only moves
/// bytes and routes messages, and the threads that call the library (and
/// run its callbacks) need a core of their own. On 2 cores a second worker
/// cost CPU per operation and throughput (kv-par, pub, pubsub, jspub) and
/// did not lower latency (commit a662df6 has the figures).
fn default_workers() -> usize {
    std::thread::available_parallelism()
        .map_or(2, |n| n.get())
        .saturating_sub(1)
        .clamp(1, 4)
}

/// Sets the worker-thread count. Only possible before the runtime starts.
pub fn set_worker_threads(n: usize) -> Result<()> {
    if n == 0 || n > 256 {
        return Err(Error::new(
            ErrorKind::InvalidArgument,
            "worker threads must be 1..=256",
        ));
    }
    if RUNTIME.get().is_some() {
        return Err(Error::new(
            ErrorKind::IllegalState,
            "the runtime has already started",
        ));
    }
    WORKERS.store(n, Ordering::SeqCst);
    Ok(())
}

/// The runtime's handle, starting it on first use.
pub fn handle() -> &'static Handle {
    RUNTIME
        .get_or_init(|| {
            let n = match WORKERS.load(Ordering::SeqCst) {
                0 => default_workers(),
                n => n,
            };
            Builder::new_multi_thread()
                .worker_threads(n)
                .thread_name("natsio-rt")
                .on_thread_start(|| {
                    ON_RUNTIME.with(|f| f.set(true));
                    ignore_sigpipe_on_this_thread();
                })
                .enable_all()
                .build()
                .expect("failed to start the natsio runtime")
        })
        .handle()
}

/// Socket writes to a peer that closed raise SIGPIPE, whose default action
/// kills the process: a library inside a C program must not. Blocked on
/// the runtime's threads (where the sockets are written), it stays pending
/// and the write fails with EPIPE instead.
fn ignore_sigpipe_on_this_thread() {
    // SAFETY: plain libc calls on a local, initialised signal set.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, libc::SIGPIPE);
        libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
    }
}

/// True on one of the runtime's own threads.
pub fn on_runtime_thread() -> bool {
    ON_RUNTIME.with(|f| f.get())
}

/// Fails when called on a runtime thread, where blocking would deadlock.
/// (A user thread running an operation to completion is not one.)
pub fn ensure_may_block() -> Result<()> {
    if on_runtime_thread() {
        return Err(Error::new(
            ErrorKind::IllegalState,
            "blocking call made from a natsio runtime thread",
        ));
    }
    Ok(())
}
