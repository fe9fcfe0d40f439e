//! Request deadlines of a client: one queue in deadline order and one timer
//! task that sleeps until the first deadline, instead of a timer task per
//! request. Requests with the same timeout arrive sorted; a shorter one is
//! inserted in place and wakes the timer. Entries already answered are
//! dropped from the front as new ones arrive, so the queue stays about as
//! long as the number of requests in flight, and the timer runs only while
//! some are pending.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, Weak};
use std::time::Instant;

use crate::client::ClientInner;
use crate::completion::{lock, Completion};
use crate::error::Error;

#[derive(Default)]
struct Queue {
    entries: VecDeque<(Instant, u64, Weak<Completion>)>,
    timer_running: bool,
}

#[derive(Default)]
pub(crate) struct Deadlines {
    queue: Mutex<Queue>,
    wake: Arc<tokio::sync::Notify>,
}

fn answered(w: &Weak<Completion>) -> bool {
    w.upgrade().is_none_or(|c| c.is_done())
}

impl Deadlines {
    /// Fails request `id` of `client` with a timeout at `deadline` unless
    /// `done` has completed by then.
    pub(crate) fn arm(
        client: &Arc<ClientInner>,
        deadline: Instant,
        id: u64,
        done: &Arc<Completion>,
    ) {
        let d = &client.deadlines;
        let mut q = lock(&d.queue);
        while q.entries.front().is_some_and(|(_, _, w)| answered(w)) {
            q.entries.pop_front();
        }
        let entry = (deadline, id, Arc::downgrade(done));
        let at = match q.entries.back() {
            Some((last, _, _)) if *last > deadline => {
                q.entries.partition_point(|(t, _, _)| *t <= deadline)
            }
            _ => q.entries.len(),
        };
        q.entries.insert(at, entry);
        if !q.timer_running {
            q.timer_running = true;
            crate::runtime::handle()
                .spawn(Self::run_timer(Arc::downgrade(client), Arc::clone(&d.wake)));
        } else if at == 0 {
            // The timer sleeps until a later deadline. (A permit is kept
            // if it is not waiting yet.)
            d.wake.notify_one();
        }
    }

    /// Expires due entries; the next deadline, or `None` once none is left
    /// (the timer then stops; the next `arm` starts another).
    fn expire_due(client: &ClientInner) -> Option<Instant> {
        let mut expired = Vec::new();
        let now = Instant::now();
        let next = {
            let mut q = lock(&client.deadlines.queue);
            loop {
                match q.entries.front() {
                    None => {
                        q.timer_running = false;
                        break None;
                    }
                    Some((_, _, w)) if answered(w) => {
                        q.entries.pop_front();
                    }
                    Some((t, _, _)) if *t <= now => {
                        let (_, id, _) = q.entries.pop_front().expect("front");
                        expired.push(id);
                    }
                    Some((t, _, _)) => break Some(*t),
                }
            }
        };
        for id in expired {
            client.expire_request(id, Error::timeout("request"));
        }
        next
    }

    /// Holds the client weakly: a closed client has failed every request,
    /// so a timer that finds it gone has nothing left to do.
    async fn run_timer(client: Weak<ClientInner>, wake: Arc<tokio::sync::Notify>) {
        loop {
            let next = match client.upgrade() {
                Some(c) => Self::expire_due(&c),
                None => return,
            };
            let Some(next) = next else {
                return;
            };
            tokio::select! {
                _ = tokio::time::sleep_until(next.into()) => {}
                _ = wake.notified() => {}
            }
        }
    }
}
