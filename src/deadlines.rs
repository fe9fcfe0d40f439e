//! Request deadlines of a client: one queue in deadline order and one timer
//! task that sleeps until the first deadline, instead of a timer task per
//! request. Requests with the same timeout arrive sorted; a shorter one is
//! inserted in place and wakes the timer if it is due before the timer's.
//! Entries already answered are dropped from the front as new ones arrive,
//! so the queue stays about as long as the number of requests in flight,
//! and the timer runs only while some are pending.

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
    /// What the running timer sleeps until (`None`: it is about to look).
    timer_at: Option<Instant>,
    /// Times `arm` woke the sleeping timer for a nearer deadline (the
    /// tests check which deadlines do and do not).
    early_wakes: u64,
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
        } else if q.timer_at.is_some_and(|t| deadline < t) {
            // The timer sleeps until a later deadline. (A permit is kept
            // if it is not waiting yet.) Not for a deadline after the
            // timer's: one request at a time would wake it each time.
            q.timer_at = None;
            q.early_wakes += 1;
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
                        q.timer_at = None;
                        break None;
                    }
                    Some((_, _, w)) if answered(w) => {
                        q.entries.pop_front();
                    }
                    Some((t, _, _)) if *t <= now => {
                        let (_, id, _) = q.entries.pop_front().expect("front");
                        expired.push(id);
                    }
                    Some(&(t, _, _)) => {
                        q.timer_at = Some(t);
                        break Some(t);
                    }
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

#[cfg(test)]
mod tests {
    //! The queue is tested through a real client that never connects
    //! (nothing answers its requests), so each request ends by its deadline
    //! only, through the same path as in use: `expire_request` and the
    //! request's completion.

    use std::sync::mpsc;
    use std::time::Duration;

    use super::*;
    use crate::client::Client;
    use crate::completion::Outcome;
    use crate::error::ErrorKind;
    use crate::options::Options;

    /// Long enough that nothing armed with it expires during a test.
    const LATER: Duration = Duration::from_secs(3600);
    /// How long a test waits for something due at once; generous, so
    /// that a loaded machine does not fail it.
    const PATIENCE: Duration = Duration::from_secs(20);

    /// A client whose server is never reached (port 1 refuses): connecting
    /// goes on in the background, and requests are buffered unanswered.
    fn offline_client() -> Client {
        Client::connect(Options {
            servers: vec!["nats://127.0.0.1:1".into()],
            retry_on_failed_connect: true,
            reconnect_time_wait: LATER,
            reconnect_time_wait_max: LATER,
            no_randomize: true,
            ..Options::default()
        })
        .expect("retry_on_failed_connect: connect returns at once")
    }

    /// A registered request (its reply would complete it), not armed yet.
    fn request(c: &Client) -> (u64, Arc<Completion>) {
        c.inner
            .start_request_with(
                "deadlines.test",
                None,
                b"",
                crate::op::Urgency::Coalesce,
                None,
            )
            .expect("request buffered")
    }

    /// Arms a new request at `deadline`.
    fn armed(c: &Client, deadline: Instant) -> (u64, Arc<Completion>) {
        let (id, done) = request(c);
        Deadlines::arm(&c.inner, deadline, id, &done);
        (id, done)
    }

    /// The ids in the queue, front first.
    fn queued(c: &Client) -> Vec<u64> {
        let q = lock(&c.inner.deadlines.queue);
        q.entries.iter().map(|(_, id, _)| *id).collect()
    }

    fn timer_running(c: &Client) -> bool {
        lock(&c.inner.deadlines.queue).timer_running
    }

    /// Waits until the timer sleeps until the queue's first deadline.
    fn wait_timer_asleep(c: &Client) {
        let until = Instant::now() + PATIENCE;
        loop {
            {
                let q = lock(&c.inner.deadlines.queue);
                if q.timer_running
                    && q.timer_at.is_some()
                    && q.timer_at == q.entries.front().map(|e| e.0)
                {
                    return;
                }
            }
            assert!(Instant::now() < until, "the timer did not go to sleep");
            std::thread::sleep(Duration::from_millis(2));
        }
    }

    fn early_wakes(c: &Client) -> u64 {
        lock(&c.inner.deadlines.queue).early_wakes
    }

    /// Waits for `done`'s result and requires a timeout.
    fn assert_timed_out(done: &Completion, what: &str) {
        match done.wait(Some(PATIENCE)) {
            Some(Err(e)) => assert_eq!(e.kind(), ErrorKind::Timeout, "{what}: {e}"),
            Some(Ok(o)) => panic!("{what}: completed with {o:?}, not a timeout"),
            None => panic!("{what}: not timed out after {PATIENCE:?}"),
        }
    }

    #[test]
    fn a_request_fails_with_a_timeout_at_its_deadline_not_before() {
        let c = offline_client();
        let (id, done) = request(&c);
        let (tx, rx) = mpsc::channel();
        // Stamped on the completing thread: when the timer failed it.
        done.on_complete(move || tx.send(Instant::now()).expect("send"));
        let deadline = Instant::now() + Duration::from_millis(300);
        Deadlines::arm(&c.inner, deadline, id, &done);
        assert_timed_out(&done, "request");
        let failed_at = rx.recv().expect("completion time");
        assert!(
            failed_at >= deadline,
            "failed {:?} before its deadline",
            deadline - failed_at
        );
    }

    #[test]
    fn a_deadline_already_past_fails_the_request_at_once() {
        let c = offline_client();
        let (_, done) = armed(&c, Instant::now());
        assert_timed_out(&done, "zero timeout");
    }

    #[test]
    fn a_nearer_deadline_armed_later_wakes_the_sleeping_timer() {
        let c = offline_client();
        let (_, far) = armed(&c, Instant::now() + LATER);
        wait_timer_asleep(&c);
        let (_, near) = armed(&c, Instant::now() + Duration::from_millis(50));
        assert_eq!(early_wakes(&c), 1, "the nearer deadline woke the timer");
        assert_timed_out(&near, "nearer request");
        assert!(!far.is_done(), "the far request expired with the near one");
        assert!(timer_running(&c), "the far request still needs the timer");
    }

    #[test]
    fn a_later_deadline_armed_while_the_timer_sleeps_for_an_answered_one_expires_in_turn() {
        let c = offline_client();
        let (_, first) = armed(&c, Instant::now() + Duration::from_millis(200));
        wait_timer_asleep(&c);
        // Answered before its deadline, as one request at a time is: the
        // next one, due later, lets the timer sleep on (no wake-up)...
        first.complete(Ok(Outcome::Done));
        let (_, second) = armed(&c, Instant::now() + Duration::from_millis(400));
        assert_eq!(early_wakes(&c), 0, "a later deadline woke the timer");
        // ...which then finds it and fails it at its own deadline.
        let started = Instant::now();
        assert_timed_out(&second, "second request");
        assert!(started.elapsed() >= Duration::from_millis(300));
    }

    #[test]
    fn the_queue_is_in_deadline_order_and_equal_deadlines_in_arrival_order() {
        let c = offline_client();
        let base = Instant::now() + LATER;
        let at = |s: u64| base + Duration::from_secs(s);
        // (seconds after base) in arrival order: an append, inserts at the
        // front, in the middle and among equals, and an append again.
        let (a, _a) = armed(&c, at(3));
        let (b, _b) = armed(&c, at(1));
        let (d, _d) = armed(&c, at(3));
        let (e, _e) = armed(&c, at(2));
        let (f, _f) = armed(&c, at(1));
        let (g, _g) = armed(&c, at(5));
        let (h, _h) = armed(&c, at(3));
        assert_eq!(queued(&c), vec![b, f, e, a, d, h, g]);
        let q = lock(&c.inner.deadlines.queue);
        assert!(
            q.entries
                .iter()
                .zip(q.entries.iter().skip(1))
                .all(|(x, y)| x.0 <= y.0),
            "deadlines out of order"
        );
    }

    #[test]
    fn answered_requests_leave_the_queue_as_new_ones_arrive() {
        let c = offline_client();
        let deadline = Instant::now() + LATER;
        let early: Vec<_> = (0..100).map(|_| armed(&c, deadline)).collect();
        // Answered by a reply, or given up by the caller: both are done.
        for (i, (_, done)) in early.iter().enumerate() {
            if i % 2 == 0 {
                done.complete(Ok(Outcome::Done));
            } else {
                done.cancel();
            }
        }
        let (id, pending) = armed(&c, deadline);
        assert_eq!(queued(&c), vec![id], "answered entries were kept");
        // Trimmed from the front only: a pending entry there keeps the
        // answered ones behind it until it is answered too.
        let (x, x_done) = armed(&c, deadline);
        let (y, y_done) = armed(&c, deadline);
        y_done.cancel();
        let (z, _z_done) = armed(&c, deadline);
        assert_eq!(queued(&c), vec![id, x, y, z]);
        pending.cancel();
        x_done.cancel();
        let (w, _w_done) = armed(&c, deadline);
        assert_eq!(queued(&c), vec![z, w]);
    }

    #[test]
    fn the_timer_stops_when_the_queue_empties_and_the_next_request_restarts_it() {
        let c = offline_client();
        assert!(!timer_running(&c), "a timer before any request");
        let wake = Arc::clone(&c.inner.deadlines.wake);
        let (_, first) = armed(&c, Instant::now() + Duration::from_millis(50));
        assert_timed_out(&first, "first request");
        // The timer marks itself stopped before it fails the last request,
        // and its task ends (dropping its handle on `wake`).
        assert!(!timer_running(&c), "the timer runs on with nothing queued");
        assert!(queued(&c).is_empty());
        let until = Instant::now() + PATIENCE;
        while Arc::strong_count(&wake) > 2 {
            assert!(Instant::now() < until, "the timer task did not end");
            std::thread::sleep(Duration::from_millis(10));
        }
        let (_, second) = armed(&c, Instant::now() + Duration::from_millis(50));
        assert_timed_out(&second, "request after the timer stopped");
    }

    #[test]
    fn far_deadlines_do_not_stop_the_timer_for_nearer_ones() {
        let c = offline_client();
        let now = Instant::now();
        // The longest timeouts C can ask for: NATSIO_WAIT_FOREVER on a
        // request (ffi::FOREVER), and the largest positive timeout_ms.
        let forever = now + crate::ffi::FOREVER;
        let largest = now
            .checked_add(Duration::from_millis(i64::MAX as u64))
            .expect("an Instant holds i64::MAX ms from now");
        let (_, f1) = armed(&c, forever);
        let (_, f2) = armed(&c, largest);
        // The timer sleeps until the far deadline (a panic there would
        // end its task and leave every later request without a timeout).
        wait_timer_asleep(&c);
        let (_, near) = armed(&c, Instant::now() + Duration::from_millis(50));
        assert_timed_out(&near, "near request after far ones");
        assert!(!f1.is_done() && !f2.is_done());
        // Still alive: another near one expires too.
        let (_, again) = armed(&c, Instant::now() + Duration::from_millis(50));
        assert_timed_out(&again, "second near request");
    }

    #[test]
    fn a_closed_client_ends_its_timer() {
        let c = offline_client();
        let (_, done) = armed(&c, Instant::now() + Duration::from_millis(200));
        let wake = Arc::clone(&c.inner.deadlines.wake);
        assert_eq!(
            Arc::strong_count(&wake),
            3,
            "ours, the queue's, the timer's"
        );
        c.close();
        drop(c);
        // Closing fails the request at once; the timer finds nothing left
        // (or no client) when it wakes, and ends.
        assert!(done.is_done(), "close left the request pending");
        let until = Instant::now() + PATIENCE;
        while Arc::strong_count(&wake) > 1 {
            assert!(Instant::now() < until, "the timer task outlived its client");
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    #[test]
    fn a_request_and_a_publish_with_a_huge_timeout_start_and_stay_pending() {
        // `Instant::now() + Duration::MAX` panics; a Rust caller may pass it
        // to mean "no timeout".
        // Through the API: a request and a JetStream async publish with
        // that timeout start (they used to panic) and stay pending.
        let c = offline_client();
        let r = c
            .request_async("deadlines.max", None, b"", Some(Duration::MAX))
            .expect("request started");
        let js = crate::jetstream::JetStream::new(&c, Default::default()).expect("js");
        let p = js
            .publish_async(
                "deadlines.max",
                b"",
                &crate::jetstream::PublishOptions {
                    timeout: Some(Duration::MAX),
                    ..Default::default()
                },
            )
            .expect("publish started");
        // An absence: neither ends within 100 ms.
        std::thread::sleep(Duration::from_millis(100));
        assert!(!r.is_done() && !p.is_done());
        c.close();
        assert!(
            r.wait(Some(PATIENCE)).is_some() && p.wait(Some(PATIENCE)).is_some(),
            "closing ends them"
        );
    }
}
