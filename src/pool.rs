//! The server pool: configured and discovered servers, the order they are
//! tried in, and each one's reconnect bookkeeping.

use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use crate::error::{Error, ErrorKind, Result};
use crate::server_addr::ServerAddr;

/// Whether `url` names a server reached over TLS (tls://, wss://, ...).
pub(crate) fn url_is_tls(url: &str) -> bool {
    ServerAddr::parse(url).is_ok_and(|a| a.tls)
}

#[derive(Debug, Clone)]
pub(crate) struct PoolEntry {
    pub url: String,
    pub addr: ServerAddr,
    /// Consecutive failed attempts since it was last connected to.
    pub attempts: u32,
    pub last_attempt: Option<Instant>,
    /// The last authentication error this server gave, to stop looping on it.
    pub last_auth_error: Option<String>,
}

#[derive(Debug, Default)]
pub(crate) struct ServerPool {
    entries: Vec<PoolEntry>,
    rng: u64,
}

fn seed() -> u64 {
    let t = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    (t ^ (u64::from(std::process::id()) << 32)) | 1
}

impl ServerPool {
    pub fn new(urls: &[String], randomize: bool) -> Result<ServerPool> {
        let mut pool = ServerPool {
            entries: Vec::new(),
            rng: seed(),
        };
        for u in urls {
            let addr = ServerAddr::parse(u)?;
            pool.entries.push(PoolEntry {
                url: u.clone(),
                addr,
                attempts: 0,
                last_attempt: None,
                last_auth_error: None,
            });
        }
        if pool.entries.is_empty() {
            return Err(Error::new(
                ErrorKind::Config,
                "servers: at least one server URL is required",
            ));
        }
        if randomize {
            for i in (1..pool.entries.len()).rev() {
                let j = (pool.next_random() % (i as u64 + 1)) as usize;
                pool.entries.swap(i, j);
            }
        }
        Ok(pool)
    }

    fn next_random(&mut self) -> u64 {
        // xorshift64: scheduling jitter and shuffling only, not security.
        let mut x = self.rng;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.rng = x;
        x
    }

    /// A random duration in [0, max].
    pub fn jitter(&mut self, max: Duration) -> Duration {
        let m = max.as_nanos() as u64;
        if m == 0 {
            return Duration::ZERO;
        }
        Duration::from_nanos(self.next_random() % (m + 1))
    }

    pub fn entries(&self) -> Vec<PoolEntry> {
        self.entries.clone()
    }

    pub fn urls(&self) -> Vec<String> {
        self.entries.iter().map(|e| e.url.clone()).collect()
    }

    /// Moves the server at `i` to the back: after a disconnect, others are
    /// tried first.
    pub fn rotate_to_back(&mut self, url: &str) {
        if let Some(i) = self.entries.iter().position(|e| e.url == url) {
            let e = self.entries.remove(i);
            self.entries.push(e);
        }
    }

    /// Drops servers that used up `max_attempts` (negative: unlimited) and
    /// returns the next candidate: the one whose earliest permitted attempt
    /// comes first, with the time to wait for it.
    pub fn next_candidate(
        &mut self,
        max_attempts: i64,
        wait: Duration,
        wait_max: Duration,
        jitter: Duration,
    ) -> Option<(PoolEntry, Duration)> {
        if max_attempts >= 0 {
            self.entries
                .retain(|e| i64::from(e.attempts) < max_attempts.max(1));
        }
        let now = Instant::now();
        let mut best: Option<(usize, Instant)> = None;
        for (i, e) in self.entries.iter().enumerate() {
            let ready = match e.last_attempt {
                None => now,
                Some(t) => {
                    let shift = e.attempts.saturating_sub(1).min(16);
                    t + (wait * (1u32 << shift)).min(wait_max.max(wait))
                }
            };
            if best.is_none_or(|(_, b)| ready < b) {
                best = Some((i, ready));
            }
        }
        let (i, ready) = best?;
        let delay = ready.saturating_duration_since(now);
        let delay = if delay.is_zero() {
            delay
        } else {
            delay + self.jitter(jitter)
        };
        Some((self.entries[i].clone(), delay))
    }

    fn entry_mut(&mut self, url: &str) -> Option<&mut PoolEntry> {
        self.entries.iter_mut().find(|e| e.url == url)
    }

    pub fn record_attempt(&mut self, url: &str) {
        if let Some(e) = self.entry_mut(url) {
            e.attempts += 1;
            e.last_attempt = Some(Instant::now());
        }
    }

    pub fn record_success(&mut self, url: &str) {
        if let Some(e) = self.entry_mut(url) {
            e.attempts = 0;
            e.last_auth_error = None;
        }
    }

    /// Remembers an authentication error; true if the server gave the very
    /// same one last time (the caller then stops retrying).
    pub fn record_auth_error(&mut self, url: &str, text: &str) -> bool {
        match self.entry_mut(url) {
            Some(e) => {
                let repeated = e.last_auth_error.as_deref() == Some(text);
                e.last_auth_error = Some(text.to_string());
                repeated
            }
            None => false,
        }
    }

    /// Adds servers from INFO connect_urls: credentials stripped, never a
    /// downgrade from TLS, reached over WebSocket when `websocket` (the
    /// connection that learned them is). Returns the URLs that were new.
    pub fn add_discovered(&mut self, urls: &[String], tls: bool, websocket: bool) -> Vec<String> {
        let mut added = Vec::new();
        for raw in urls {
            let Ok(mut addr) = ServerAddr::parse(raw) else {
                continue;
            };
            addr.user = None;
            addr.password = None;
            addr.tls = addr.tls || tls;
            if websocket && !addr.websocket {
                addr.websocket = true;
                addr.path = "/".into();
            }
            let known = self
                .entries
                .iter()
                .any(|e| e.addr.host == addr.host && e.addr.port == addr.port);
            if known {
                continue;
            }
            let scheme = match (addr.websocket, addr.tls) {
                (true, true) => "wss",
                (true, false) => "ws",
                (false, true) => "tls",
                (false, false) => "nats",
            };
            let host = if addr.host.contains(':') {
                format!("[{}]", addr.host)
            } else {
                addr.host.clone()
            };
            let url = format!("{scheme}://{host}:{}", addr.port);
            self.entries.push(PoolEntry {
                url: url.clone(),
                addr,
                attempts: 0,
                last_attempt: None,
                last_auth_error: None,
            });
            added.push(url);
        }
        added
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn urls(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn discovery_strips_credentials_and_keeps_tls() {
        let mut p = ServerPool::new(&urls(&["nats://a:1"]), false).unwrap();
        let added = p.add_discovered(&urls(&["u:p@b:2", "a:1", "c:3"]), true, false);
        assert_eq!(added, urls(&["tls://b:2", "tls://c:3"]));
        assert_eq!(p.urls().len(), 3);
        assert!(p.entries[1..]
            .iter()
            .all(|e| e.addr.user.is_none() && e.addr.tls));
    }

    #[test]
    fn discovery_over_websocket_keeps_the_scheme() {
        let mut p = ServerPool::new(&urls(&["ws://a:8080", "nats://b:4222"]), false).unwrap();
        let added = p.add_discovered(&urls(&["a:8080", "c:8081"]), false, true);
        assert_eq!(added, urls(&["ws://c:8081"]));
        let added = p.add_discovered(&urls(&["d:443"]), true, true);
        assert_eq!(added, urls(&["wss://d:443"]));
        assert!(p
            .entries
            .iter()
            .all(|e| e.addr.path == "/" || !e.addr.websocket));
        assert!(url_is_tls("wss://d") && url_is_tls("tls://d") && !url_is_tls("ws://d"));
    }

    #[test]
    fn attempts_limit_and_backoff() {
        let mut p = ServerPool::new(&urls(&["a:1", "b:2"]), false).unwrap();
        let w = Duration::from_millis(100);
        let (first, d) = p
            .next_candidate(2, w, Duration::from_secs(1), Duration::ZERO)
            .unwrap();
        assert_eq!((first.url.as_str(), d), ("a:1", Duration::ZERO));
        p.record_attempt("a:1");
        let (second, _) = p
            .next_candidate(2, w, Duration::from_secs(1), Duration::ZERO)
            .unwrap();
        assert_eq!(second.url, "b:2");
        p.record_attempt("b:2");
        p.record_attempt("a:1");
        p.record_attempt("b:2");
        assert!(p
            .next_candidate(2, w, Duration::from_secs(1), Duration::ZERO)
            .is_none());
        let mut p = ServerPool::new(&urls(&["a:1"]), false).unwrap();
        p.record_attempt("a:1");
        let (_, d) = p
            .next_candidate(-1, w, Duration::from_secs(1), Duration::ZERO)
            .unwrap();
        assert!(d > Duration::from_millis(50) && d <= w, "{d:?}");
        assert!(!p.record_auth_error("a:1", "Authorization Violation"));
        assert!(p.record_auth_error("a:1", "Authorization Violation"));
    }

    #[test]
    fn shuffle_keeps_every_server() {
        let all = urls(&["a:1", "b:2", "c:3", "d:4"]);
        let p = ServerPool::new(&all, true).unwrap();
        let mut got = p.urls();
        got.sort();
        assert_eq!(got, all);
    }
}
