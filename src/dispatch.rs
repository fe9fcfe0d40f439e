//! Library-owned threads that run user callbacks, so that no user code ever
//! runs on a runtime thread.

use std::cell::Cell;
use std::sync::mpsc::{channel, Sender};
use std::sync::Mutex;
use std::thread::{JoinHandle, ThreadId};

use crate::completion::lock;

pub(crate) type Job = Box<dyn FnOnce() + Send>;

thread_local! {
    /// The client (by address) whose dispatcher this thread is, if any.
    static DISPATCHING_FOR: Cell<usize> = const { Cell::new(0) };
}

/// Marks the current thread as a dispatcher of `owner` for its lifetime.
pub(crate) fn mark_dispatcher_of(owner: usize) {
    DISPATCHING_FOR.with(|c| c.set(owner));
}

/// True when the current thread is one of `owner`'s dispatchers.
pub(crate) fn is_dispatcher_of(owner: usize) -> bool {
    DISPATCHING_FOR.with(|c| c.get()) == owner
}

/// One thread running jobs in order.
pub(crate) struct Dispatcher {
    tx: Mutex<Option<Sender<Job>>>,
    thread: Mutex<Option<JoinHandle<()>>>,
    thread_id: Mutex<Option<ThreadId>>,
}

impl Dispatcher {
    pub fn start(name: &str, owner: usize) -> Dispatcher {
        let (tx, rx) = channel::<Job>();
        let handle = std::thread::Builder::new()
            .name(name.into())
            .spawn(move || {
                mark_dispatcher_of(owner);
                while let Ok(job) = rx.recv() {
                    job();
                }
            })
            .expect("failed to spawn a natsio dispatcher thread");
        let id = handle.thread().id();
        Dispatcher {
            tx: Mutex::new(Some(tx)),
            thread: Mutex::new(Some(handle)),
            thread_id: Mutex::new(Some(id)),
        }
    }

    /// Queues a job. After `stop`, jobs run on a one-off thread instead.
    pub fn post(&self, job: Job) {
        let job = match lock(&self.tx).as_ref() {
            Some(tx) => match tx.send(job) {
                Ok(()) => return,
                Err(e) => e.0,
            },
            None => job,
        };
        let _ = crate::library_thread::spawn("natsio-late-cb", job);
    }

    /// Runs the queued jobs, then ends the thread; waits for it unless called
    /// from that very thread.
    pub fn stop(&self) {
        drop(lock(&self.tx).take());
        let me = std::thread::current().id();
        if *lock(&self.thread_id) == Some(me) {
            return;
        }
        if let Some(h) = lock(&self.thread).take() {
            let _ = h.join();
        }
    }
}
