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
//!
//! Nor does a waiter spin while other programs keep the CPUs busy: a
//! spinning thread keeps its CPU looking busy, so the thread that will
//! answer (the runtime worker, the callback thread, the server), woken
//! meanwhile, is queued behind that other work instead of taking the CPU,
//! and waits for the next scheduler tick (4 ms at HZ=250) where a parked
//! waiter would have left it an idle CPU. Measured with one busy loop
//! beside the benchmark (bench/results/2026-12-06-tail-latency-under-contention.md).
//! What counts is the CPU time of everything but this process: the
//! kernel's CPU pressure, read before, also counts the waits this process
//! causes itself, and a request loop on an idle 2-CPU machine (its server
//! beside it) kept it at 30-45%, over the bound, so the spin was off where
//! it pays most (Go req p50 195 us without it, 145 with it, nats.go 179).

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

/// Set once the limit has been set by the application: it then applies
/// as set, whatever the load (see `cpus_contended`).
static LIMIT_SET: AtomicBool = AtomicBool::new(false);

/// Sets how long a waiting thread may spin before it blocks (0: never).
pub fn set_limit_us(us: u32) {
    LIMIT_NS.store(u64::from(us) * 1_000, Ordering::Relaxed);
    LIMIT_SET.store(true, Ordering::Relaxed);
}

/// How long a waiting thread may spin before it blocks, in microseconds:
/// the limit set, or 0 where no thread may spin (a single CPU). While the
/// default is skipped (contended CPUs) it still reads as set: a binding
/// spinning on its own loop keeps its turns, and each step of its spin
/// (`spin_until_set`) is declined instead (Node's pubsub 16 B lost ~35% of
/// its rate on a loaded machine when its loop took no spin turn at all).
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
    if limit == 0 || default_skipped() {
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

/// The default limit is skipped while the CPUs are contended; a limit the
/// application set applies as set. Also for a binding that chooses between
/// a wait in the library and one of its own (the Go binding's requests).
pub fn default_skipped() -> bool {
    !LIMIT_SET.load(Ordering::Relaxed) && cpus_contended()
}

/// How often the CPUs' use is read again (by a waiter that finds the last
/// reading older).
const READ_EVERY_MS: u64 = 250;

/// Whether other programs keep the CPUs busy (the default spin is then
/// skipped: see the module's comment). Read from the CPU time of the whole
/// machine and of this process (/proc/stat, /proc/self/stat) at most every
/// READ_EVERY_MS, over the time since the last reading; from the 1-minute
/// load average against the CPU count where they cannot be read. Unit
/// tests keep their spins regardless of the machine's load.
fn cpus_contended() -> bool {
    static CHECKED_MS: AtomicU64 = AtomicU64::new(0);
    static CONTENDED: AtomicBool = AtomicBool::new(false);
    static LAST: std::sync::Mutex<Option<CpuTimes>> = std::sync::Mutex::new(None);
    if cfg!(test) {
        return false;
    }
    static START: OnceLock<Instant> = OnceLock::new();
    let now_ms = START.get_or_init(Instant::now).elapsed().as_millis() as u64 + 1;
    let last = CHECKED_MS.load(Ordering::Relaxed);
    if (last == 0 || now_ms.saturating_sub(last) >= READ_EVERY_MS)
        && CHECKED_MS
            .compare_exchange(last, now_ms, Ordering::Relaxed, Ordering::Relaxed)
            .is_ok()
    {
        let contended = match CpuTimes::read() {
            Some(now) => {
                let mut prev = LAST.lock().unwrap_or_else(|e| e.into_inner());
                let verdict = prev.is_some_and(|p| others_keep_cpus_busy(&p, &now, max_spinners()));
                *prev = Some(now);
                verdict
            }
            None => load_average_over_cpus().unwrap_or(false),
        };
        CONTENDED.store(contended, Ordering::Relaxed);
    }
    CONTENDED.load(Ordering::Relaxed)
}

/// CPU time in clock ticks: the machine's, busy and in all, and this
/// process's.
#[derive(Debug, Clone, Copy, PartialEq)]
struct CpuTimes {
    cpus: u32,
    total: u64,
    busy: u64,
    own: u64,
}

impl CpuTimes {
    fn read() -> Option<CpuTimes> {
        let stat = std::fs::read_to_string("/proc/stat").ok()?;
        let own = std::fs::read_to_string("/proc/self/stat").ok()?;
        CpuTimes::parse(&stat, &own)
    }

    fn parse(stat: &str, own_stat: &str) -> Option<CpuTimes> {
        let mut lines = stat.lines();
        let all = lines.next()?.strip_prefix("cpu ")?;
        let t: Vec<u64> = all
            .split_whitespace()
            .map(|f| f.parse().ok())
            .collect::<Option<_>>()?;
        // user nice system idle iowait irq softirq steal (guest time is
        // in user already): idle and iowait are the CPU left unused.
        if t.len() < 8 {
            return None;
        }
        let total: u64 = t[..8].iter().sum();
        let busy = total - t[3] - t[4];
        let cpus = lines
            .filter(|l| l.starts_with("cpu") && l.as_bytes().get(3).is_some_and(u8::is_ascii_digit))
            .count() as u32;
        // utime and stime: the 14th and 15th fields, the 12th and 13th
        // after the command name (which may hold spaces and parentheses).
        let rest = &own_stat[own_stat.rfind(')')? + 1..];
        let mut f = rest.split_whitespace().skip(11);
        let own = f.next()?.parse::<u64>().ok()? + f.next()?.parse::<u64>().ok()?;
        (cpus > 0).then_some(CpuTimes {
            cpus,
            total,
            busy,
            own,
        })
    }
}

/// Whether, between two readings, everything but this process used the
/// CPUs that `spinners` spinning waiters leave, so that a spinning waiter
/// would leave the thread that answers no idle CPU. On 2 CPUs (one
/// spinner): one CPU. A
/// busy loop beside a request loop makes others use 1.3-1.8 there; a
/// server and a responder in another process, answering it, 0.3-1.0.
fn others_keep_cpus_busy(before: &CpuTimes, now: &CpuTimes, spinners: usize) -> bool {
    let elapsed = now.total.saturating_sub(before.total);
    if elapsed == 0 || now.cpus != before.cpus {
        return false;
    }
    let others = now
        .busy
        .saturating_sub(before.busy)
        .saturating_sub(now.own.saturating_sub(before.own));
    // In CPUs: the machine's ticks advance `cpus` at a time.
    let others_cpus = others as f64 * f64::from(now.cpus) / elapsed as f64;
    others_cpus >= f64::from(now.cpus) - spinners as f64
}

fn load_average_over_cpus() -> Option<bool> {
    let text = std::fs::read_to_string("/proc/loadavg").ok()?;
    let load: f64 = text.split_whitespace().next()?.parse().ok()?;
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    Some(load >= cpus as f64)
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

    const STAT: &str = "cpu  1000 100 200 5000 50 0 20 30 0 0\n\
                        cpu0 500 50 100 2500 25 0 10 15 0 0\n\
                        cpu1 500 50 100 2500 25 0 10 15 0 0\n\
                        intr 12345\n";

    #[test]
    fn cpu_times_are_read_from_proc_stat_and_the_process_stat() {
        let own = "4242 (natsio (a) b) S 1 2 3 4 5 6 7 8 9 10 77 23 0 0 20 0 9";
        let t = CpuTimes::parse(STAT, own).unwrap();
        assert_eq!(
            t,
            CpuTimes {
                cpus: 2,
                total: 6400,
                busy: 1350,
                own: 100,
            }
        );
        assert_eq!(CpuTimes::parse("intr 1\n", own), None);
        assert_eq!(CpuTimes::parse(STAT, "4242 (x) S 1 2"), None);
    }

    #[test]
    fn the_cpus_are_contended_when_others_keep_the_spare_ones_busy() {
        let at = |total: u64, busy: u64, own: u64| CpuTimes {
            cpus: 2,
            total,
            busy,
            own,
        };
        let before = at(10_000, 2_000, 500);
        // 50 ticks of 2 CPUs (100 in all): this process used 90 of them
        // (spinning), the rest 20: 0.4 CPU, a server answering it; 0.96
        // with a responder in another process too.
        assert!(!others_keep_cpus_busy(&before, &at(10_100, 2_110, 590), 1));
        assert!(!others_keep_cpus_busy(&before, &at(10_100, 2_138, 590), 1));
        // A busy loop beside it: others a whole CPU and more.
        assert!(others_keep_cpus_busy(&before, &at(10_100, 2_140, 590), 1));
        assert!(others_keep_cpus_busy(&before, &at(10_100, 2_170, 510), 1));
        // Nothing elapsed, or a CPU came or went: no verdict.
        assert!(!others_keep_cpus_busy(&before, &before, 1));
        let mut four = at(10_100, 2_100, 500);
        four.cpus = 4;
        assert!(!others_keep_cpus_busy(&before, &four, 1));
    }

    #[test]
    fn no_more_than_half_the_cpus_spin_at_once() {
        let _settings = SETTINGS.lock().unwrap_or_else(|e| e.into_inner());
        let slots: Vec<Slot> = std::iter::from_fn(Slot::take).take(1_000).collect();
        assert!(slots.len() <= max_spinners());
    }
}
