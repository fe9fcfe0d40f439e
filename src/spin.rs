//! A brief spin before a thread blocks for an answer that is usually near.
//!
//! A thread parked on a futex is woken by another thread's syscall, and on
//! a virtual machine an idle vCPU may take 70-180 us to run it (measured
//! with `perf sched timehist` on the project's 2-vCPU machines: a request
//! round trip paid that for each of its thread hand-offs). A waiter that
//! keeps checking for a short while sees the answer the moment the reading
//! thread publishes it, with no wake-up at all. Spinning costs CPU, so it
//! is bounded in time and in the number of threads doing it at once (half
//! the CPUs: never every CPU, none on a single one), and a thread that
//! finds no free spinning slot parks at once.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::OnceLock;
use std::time::Instant;

/// Default bound of one spin: about one loopback round trip through a
/// server on a loaded small VM, where the wake-up it saves costs as much.
const DEFAULT_SPIN_US: u32 = 200;

static LIMIT_NS: AtomicU64 = AtomicU64::new(DEFAULT_SPIN_US as u64 * 1_000);
static SPINNING: AtomicUsize = AtomicUsize::new(0);

fn max_spinners() -> usize {
    static MAX: OnceLock<usize> = OnceLock::new();
    *MAX.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get()) / 2)
}

/// Sets how long a waiting thread may spin before it blocks (0: never).
pub fn set_limit_us(us: u32) {
    LIMIT_NS.store(u64::from(us) * 1_000, Ordering::Relaxed);
}

/// How long a waiting thread may spin before it blocks, in microseconds:
/// the limit set, or 0 where no thread may spin (a single CPU).
pub fn limit_us() -> u32 {
    if max_spinners() == 0 {
        return 0;
    }
    (LIMIT_NS.load(Ordering::Relaxed) / 1_000) as u32
}

/// Holds one of the spinning slots.
struct Slot;

impl Slot {
    fn take() -> Option<Slot> {
        let max = max_spinners();
        SPINNING
            .fetch_update(Ordering::Acquire, Ordering::Relaxed, |n| {
                (n < max).then_some(n + 1)
            })
            .ok()
            .map(|_| Slot)
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        SPINNING.fetch_sub(1, Ordering::Release);
    }
}

/// Checks `ready` until it is true, the spin bound passes or `deadline`
/// comes; true when it became true. Returns at once when it is true
/// already, spinning is off or every slot is taken.
pub(crate) fn spin_until(deadline: Option<Instant>, mut ready: impl FnMut() -> bool) -> bool {
    let mut limit = LIMIT_NS.load(Ordering::Relaxed);
    if let Some(d) = deadline {
        let left = d.saturating_duration_since(Instant::now()).as_nanos();
        limit = limit.min(left.try_into().unwrap_or(u64::MAX));
    }
    if ready() {
        return true;
    }
    if limit == 0 {
        return false;
    }
    let Some(_slot) = Slot::take() else {
        return false;
    };
    spin_for(limit, ready)
}

/// The spin itself. Yields the CPU now and then, so that a thread waiting
/// to run on this CPU (perhaps the very one that will answer) is not held
/// up by it.
fn spin_for(limit_ns: u64, mut ready: impl FnMut() -> bool) -> bool {
    let start = Instant::now();
    let mut round = 0u32;
    loop {
        if ready() {
            return true;
        }
        round = round.wrapping_add(1);
        if round % 64 == 0 {
            if start.elapsed().as_nanos() as u64 >= limit_ns {
                return ready();
            }
            std::thread::yield_now();
        } else {
            std::hint::spin_loop();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn a_spin_ends_when_ready_or_at_its_bound() {
        assert!(spin_for(1_000_000, || true));
        let mut calls = 0;
        assert!(spin_for(1_000_000_000, || {
            calls += 1;
            calls == 1_000
        }));
        let t = Instant::now();
        assert!(!spin_for(300_000, || false));
        assert!(t.elapsed() >= Duration::from_micros(300));
    }

    #[test]
    fn the_limit_reads_back_as_set() {
        let before = limit_us();
        set_limit_us(1_234);
        let expected = if max_spinners() > 0 { 1_234 } else { 0 };
        assert_eq!(limit_us(), expected);
        set_limit_us(before);
    }

    #[test]
    fn no_more_than_half_the_cpus_spin_at_once() {
        let slots: Vec<Slot> = std::iter::from_fn(Slot::take).take(1_000).collect();
        assert!(slots.len() <= max_spinners());
    }
}
