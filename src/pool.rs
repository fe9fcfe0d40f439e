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
    /// Connected to at least once.
    pub did_connect: bool,
    /// Learned from a server's INFO, not configured.
    pub discovered: bool,
}

impl PoolEntry {
    fn new(url: String, addr: ServerAddr, discovered: bool) -> PoolEntry {
        PoolEntry {
            url,
            addr,
            attempts: 0,
            last_attempt: None,
            last_auth_error: None,
            did_connect: false,
            discovered,
        }
    }

    /// The same server: host and port (a URL may spell it otherwise).
    fn same_server(&self, addr: &ServerAddr) -> bool {
        self.addr.host == addr.host && self.addr.port == addr.port
    }
}

/// One server of the pool as a user sees it (nats.go's `Server`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PoolServer {
    pub url: String,
    /// Failed attempts since it was last connected to.
    pub reconnects: u32,
    pub did_connect: bool,
    pub discovered: bool,
}

/// Where one reconnect is in its turns through the pool when the
/// application paces it (`ServerPool::next_paced`).
#[derive(Debug, Default)]
pub(crate) struct Pace {
    /// Servers tried in this turn.
    tried: usize,
    /// Turns through the pool completed or begun (nats.go's `attempts`).
    turns: u64,
    /// A forced reconnect: the first server is tried without asking.
    forced: bool,
}

impl Pace {
    /// The reconnect was forced by the application (nats.go's
    /// ForceReconnect): its first attempt is made at once.
    pub fn forced(&mut self) {
        self.forced = true;
    }
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
        pool.entries = configured(urls)?;
        if randomize {
            for i in (1..pool.entries.len()).rev() {
                let j = (pool.next_random() % (i as u64 + 1)) as usize;
                pool.entries.swap(i, j);
            }
        }
        Ok(pool)
    }

    /// Replaces the servers with `urls`, in that order (nats.go's
    /// SetServerPool): a server already in the pool (same host and port)
    /// keeps its reconnect bookkeeping; the others are forgotten, the
    /// current connection's too (it stays up; the next reconnect picks
    /// from the new pool). Nothing changes when a URL is invalid.
    pub fn replace(&mut self, urls: &[String]) -> Result<()> {
        let mut entries = configured(urls)?;
        for e in &mut entries {
            if let Some(old) = self.entries.iter().find(|old| old.same_server(&e.addr)) {
                e.attempts = old.attempts;
                e.last_attempt = old.last_attempt;
                e.last_auth_error = old.last_auth_error.clone();
                e.did_connect = old.did_connect;
            }
        }
        self.entries = entries;
        Ok(())
    }

    /// The servers as a user sees them, in the order they are tried.
    pub fn servers(&self) -> Vec<PoolServer> {
        self.entries
            .iter()
            .map(|e| PoolServer {
                url: e.url.clone(),
                reconnects: e.attempts,
                did_connect: e.did_connect,
                discovered: e.discovered,
            })
            .collect()
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

    /// The next server in turn when the application paces reconnects
    /// (nats.go's CustomReconnectDelay): drops servers that used up
    /// `max_attempts` as `next_candidate` does, takes the first server
    /// and moves it to the back. With it, `Some(n)` when it is the last
    /// server of a turn through the pool: the caller asks the application
    /// for the wait with `n` (1 for the first turn of this reconnect) and
    /// waits before trying it, as nats.go's doReconnect does.
    pub fn next_paced(
        &mut self,
        max_attempts: i64,
        pace: &mut Pace,
    ) -> Option<(PoolEntry, Option<u64>)> {
        if max_attempts >= 0 {
            self.entries
                .retain(|e| i64::from(e.attempts) < max_attempts.max(1));
        }
        if self.entries.is_empty() {
            return None;
        }
        let e = self.entries.remove(0);
        self.entries.push(e.clone());
        let forced = std::mem::take(&mut pace.forced);
        if pace.tried + 1 >= self.entries.len() && !forced {
            pace.tried = 0;
            pace.turns += 1;
            Some((e, Some(pace.turns)))
        } else {
            pace.tried += 1;
            Some((e, None))
        }
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
            e.did_connect = true;
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
            let known = self.entries.iter().any(|e| e.same_server(&addr));
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
            self.entries.push(PoolEntry::new(url.clone(), addr, true));
            added.push(url);
        }
        added
    }
}

/// The entries of configured `urls`: at least one, each valid.
fn configured(urls: &[String]) -> Result<Vec<PoolEntry>> {
    if urls.is_empty() {
        return Err(Error::new(
            ErrorKind::Config,
            "servers: at least one server URL is required",
        ));
    }
    urls.iter()
        .map(|u| Ok(PoolEntry::new(u.clone(), ServerAddr::parse(u)?, false)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn urls(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn a_replaced_pool_keeps_what_it_knew_of_the_servers_it_keeps() {
        let mut p = ServerPool::new(&urls(&["nats://a:1", "nats://b:2"]), false).unwrap();
        p.add_discovered(&urls(&["c:3"]), false, false);
        p.record_attempt("nats://b:2");
        p.record_success("nats://a:1");
        // b spelled otherwise is b; c (discovered) and a are dropped.
        p.replace(&urls(&["d:4", "b:2"])).unwrap();
        let servers = p.servers();
        assert_eq!(
            servers,
            vec![
                PoolServer {
                    url: "d:4".into(),
                    reconnects: 0,
                    did_connect: false,
                    discovered: false
                },
                PoolServer {
                    url: "b:2".into(),
                    reconnects: 1,
                    did_connect: false,
                    discovered: false
                },
            ]
        );
        // Nothing changes on a bad list.
        assert_eq!(p.replace(&[]).unwrap_err().kind(), ErrorKind::Config);
        assert!(p.replace(&urls(&["e:5", "nats://f:x"])).is_err());
        assert_eq!(p.servers(), servers);
        p.add_discovered(&urls(&["c:3"]), false, false);
        assert!(p.servers()[2].discovered);
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
    fn paced_reconnects_ask_once_per_turn_through_the_pool() {
        // Two servers: a is tried at once, the wait for turn n comes
        // before b, the last of each turn (nats.go's doReconnect).
        let mut p = ServerPool::new(&urls(&["a:1", "b:2"]), false).unwrap();
        let mut pace = Pace::default();
        let mut seen = Vec::new();
        for _ in 0..5 {
            let (e, ask) = p.next_paced(-1, &mut pace).unwrap();
            p.record_attempt(&e.url);
            seen.push((e.url, ask));
        }
        let want = vec![
            ("a:1".to_string(), None),
            ("b:2".to_string(), Some(1)),
            ("a:1".to_string(), None),
            ("b:2".to_string(), Some(2)),
            ("a:1".to_string(), None),
        ];
        assert_eq!(seen, want);
        // One server: every attempt waits; attempts are counted per
        // server and end the pool at the limit.
        let mut p = ServerPool::new(&urls(&["a:1"]), false).unwrap();
        let mut pace = Pace::default();
        for n in 1..=3 {
            let (e, ask) = p.next_paced(3, &mut pace).unwrap();
            assert_eq!(ask, Some(n));
            p.record_attempt(&e.url);
        }
        assert!(p.next_paced(3, &mut pace).is_none());
        // A forced reconnect tries its first server at once (nats.go's
        // doReconnect after ForceReconnect), then as before.
        let mut p = ServerPool::new(&urls(&["a:1"]), false).unwrap();
        let mut pace = Pace::default();
        pace.forced();
        let asks: Vec<_> = (0..3)
            .map(|_| p.next_paced(-1, &mut pace).unwrap().1)
            .collect();
        assert_eq!(asks, vec![None, Some(1), Some(2)]);
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
