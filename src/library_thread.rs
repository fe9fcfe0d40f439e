//! The library's one way to run work off the runtime: closing a client,
//! a drain, an application's authenticator, a callback whose client or
//! dispatcher is gone. Such work joins user threads or runs user code
//! that may block, which no runtime thread may do. Each job gets a thread
//! of its own, named for what it does: a job may block for seconds (a
//! close waits for the connection task and for callbacks), and one shared
//! thread would hold one client's close behind another's.

use std::sync::Arc;

use crate::completion::{Completion, Outcome};
use crate::error::{Error, ErrorKind, Result};

/// Runs `job` on a library thread named `name`.
pub(crate) fn spawn(name: &str, job: impl FnOnce() + Send + 'static) -> Result<()> {
    std::thread::Builder::new()
        .name(name.into())
        .spawn(job)
        .map(drop)
        .map_err(|e| Error::new(ErrorKind::Io, format!("cannot spawn a library thread: {e}")))
}

/// Runs `job` on a library thread; the completion gets its result.
pub(crate) fn complete(
    name: &str,
    job: impl FnOnce() -> Result<Outcome> + Send + 'static,
) -> Arc<Completion> {
    let c = Completion::new();
    let done = Arc::clone(&c);
    if let Err(e) = spawn(name, move || {
        done.complete(job());
    }) {
        c.complete(Err(e));
    }
    c
}

/// Runs `job` on a library thread and waits, without holding a runtime
/// thread, for what it returns: the application's callbacks asked during a
/// connect (an authenticator, a reconnect delay). A job that panics gives
/// an internal error, `panicked` saying whose.
pub(crate) async fn ask<T: Send + 'static>(
    name: &str,
    panicked: &str,
    job: impl FnOnce() -> T + Send + 'static,
) -> Result<T> {
    let (tx, rx) = tokio::sync::oneshot::channel();
    spawn(name, move || {
        let _ = tx.send(job());
    })?;
    rx.await
        .map_err(|_| Error::new(ErrorKind::Internal, panicked.to_string()))
}
