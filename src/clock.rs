//! Deadlines from timeouts that cannot overflow. `Instant + Duration`
//! panics past the clock's range, and a Rust caller may pass
//! `Duration::MAX` to mean "no timeout"; every deadline in the crate is
//! made here. A leaf module (std and tokio only), so that the core
//! primitives (completion, feed) can use it without importing the client.

use std::time::{Duration, Instant};

/// How far off "no deadline in practice" is. A timeout longer than this
/// (up to `Duration::MAX`, which a Rust caller may pass) is cut to it, so that
/// adding it to an instant cannot overflow (`Instant + Duration` panics).
pub(crate) const FAR_FUTURE: Duration = Duration::from_secs(86_400 * 365 * 30);

/// `base + d`, with `d` cut to [`FAR_FUTURE`]: never panics.
pub(crate) fn instant_after(base: Instant, d: Duration) -> Instant {
    base + d.min(FAR_FUTURE)
}

/// The deadline `timeout` from now (see [`instant_after`]).
pub(crate) fn deadline_in(timeout: Duration) -> Instant {
    instant_after(Instant::now(), timeout)
}

/// `base + d` on the runtime's clock, with `d` cut to [`FAR_FUTURE`].
pub(crate) fn tokio_instant_after(base: tokio::time::Instant, d: Duration) -> tokio::time::Instant {
    base + d.min(FAR_FUTURE)
}

/// The runtime-clock deadline `timeout` from now.
pub(crate) fn tokio_deadline_in(timeout: Duration) -> tokio::time::Instant {
    tokio_instant_after(tokio::time::Instant::now(), timeout)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_huge_timeout_is_a_far_deadline_not_a_panic() {
        const LATER: Duration = Duration::from_millis(1500);
        let now = Instant::now();
        let far = deadline_in(Duration::MAX);
        assert!(far >= now + FAR_FUTURE, "{:?}", far - now);
        assert_eq!(instant_after(now, Duration::MAX), now + FAR_FUTURE);
        assert_eq!(instant_after(now, LATER), now + LATER, "others unchanged");
        let tnow = tokio::time::Instant::now();
        assert!(tokio_deadline_in(Duration::MAX) >= tnow + FAR_FUTURE);
        assert_eq!(tokio_instant_after(tnow, LATER), tnow + LATER);
    }
}
