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

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
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

/// What a spin came to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Spun {
    /// What it waited for happened (perhaps before it began).
    Ready,
    /// The bound or the deadline passed first.
    TimedOut,
    /// It did not spin: spinning is off, or every spinning slot is taken.
    /// The caller should sleep rather than try again at once.
    Declined,
}

/// Checks `ready` until it is true, the spin bound passes or `deadline`
/// comes; true when it became true. Returns at once when it is true
/// already, spinning is off or every slot is taken.
pub(crate) fn spin_until(deadline: Option<Instant>, ready: impl FnMut() -> bool) -> bool {
    spin(deadline, ready) == Spun::Ready
}

/// For a thread that waits on its own loop (a binding's event loop) and
/// spins there in steps: checks `flag` until it is set, for at most
/// `max_us` and never longer than the wait spin, in one of the same slots
/// as the library's own waiters.
pub fn spin_until_set(flag: &AtomicBool, max_us: u32) -> Spun {
    let deadline = Instant::now() + std::time::Duration::from_micros(u64::from(max_us));
    spin(Some(deadline), || flag.load(Ordering::Acquire))
}

fn spin(deadline: Option<Instant>, mut ready: impl FnMut() -> bool) -> Spun {
    let mut limit = LIMIT_NS.load(Ordering::Relaxed);
    if ready() {
        return Spun::Ready;
    }
    if limit == 0 {
        return Spun::Declined;
    }
    if let Some(d) = deadline {
        let left = d.saturating_duration_since(Instant::now()).as_nanos();
        limit = limit.min(left.try_into().unwrap_or(u64::MAX));
        if limit == 0 {
            return Spun::TimedOut;
        }
    }
    let Some(_slot) = Slot::take() else {
        return Spun::Declined;
    };
    if spin_for(limit, ready) {
        Spun::Ready
    } else {
        Spun::TimedOut
    }
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
    use std::sync::Mutex;
    use std::time::Duration;

    /// Serializes the tests that set the process-wide limit or take slots.
    static SETTINGS: Mutex<()> = Mutex::new(());

    /// A spin on `flag`, taken again while another test's waiter holds the
    /// only slot (a 2-CPU machine has one).
    fn spin_with_a_slot(flag: &AtomicBool, max_us: u32) -> Spun {
        for _ in 0..if max_spinners() > 0 { 1_000 } else { 1 } {
            match spin_until_set(flag, max_us) {
                Spun::Declined => std::thread::sleep(Duration::from_millis(1)),
                spun => return spun,
            }
        }
        Spun::Declined
    }

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
        let _settings = SETTINGS.lock().unwrap_or_else(|e| e.into_inner());
        let before = limit_us();
        set_limit_us(1_234);
        let expected = if max_spinners() > 0 { 1_234 } else { 0 };
        assert_eq!(limit_us(), expected);
        set_limit_us(before);
    }

    #[test]
    fn a_spin_on_a_flag_sees_it_set_and_keeps_the_bounds() {
        let _settings = SETTINGS.lock().unwrap_or_else(|e| e.into_inner());
        let flag = std::sync::Arc::new(AtomicBool::new(false));
        // Not set: it spins to the step's bound.
        let t = Instant::now();
        let spun = spin_with_a_slot(&flag, 50);
        if max_spinners() > 0 {
            assert_eq!(spun, Spun::TimedOut);
            assert!(t.elapsed() >= Duration::from_micros(50));
        } else {
            assert_eq!(spun, Spun::Declined);
        }
        // Set by another thread while spinning (a long bound: only the
        // flag ends it early).
        let setter = {
            let flag = flag.clone();
            std::thread::spawn(move || {
                std::thread::sleep(Duration::from_micros(100));
                flag.store(true, Ordering::Release);
            })
        };
        let before = limit_us();
        set_limit_us(5_000_000);
        let t = Instant::now();
        let spun = spin_with_a_slot(&flag, 5_000_000);
        setter.join().unwrap();
        if max_spinners() > 0 {
            assert_eq!(spun, Spun::Ready);
            assert!(t.elapsed() < Duration::from_secs(4));
        }
        // Set before: ready at once, even with spinning off.
        set_limit_us(0);
        assert_eq!(spin_until_set(&flag, 50), Spun::Ready);
        flag.store(false, Ordering::Release);
        assert_eq!(spin_until_set(&flag, 50), Spun::Declined);
        set_limit_us(before);
    }

    #[test]
    fn no_more_than_half_the_cpus_spin_at_once() {
        let _settings = SETTINGS.lock().unwrap_or_else(|e| e.into_inner());
        let slots: Vec<Slot> = std::iter::from_fn(Slot::take).take(1_000).collect();
        assert!(slots.len() <= max_spinners());
    }
}
