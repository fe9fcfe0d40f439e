//! A server's address, parsed from its URL: scheme (plain, TLS,
//! WebSocket), host, port, credentials and a WebSocket path. Below the
//! options, the pool and the transports, which all read it.

use crate::error::{Error, ErrorKind, Result};

/// A parsed server address.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerAddr {
    /// TLS: `tls://`, `nats+tls://`, `wss://` (TLS first for wss).
    pub tls: bool,
    /// WebSocket: `ws://`, `wss://`.
    pub websocket: bool,
    /// The path of a WebSocket URL (with its query), "/" when none.
    pub path: String,
    pub host: String,
    pub port: u16,
    pub user: Option<String>,
    pub password: Option<String>,
}

impl ServerAddr {
    /// Parses `nats://[user[:pass]@]host[:port]`, `tls://...`,
    /// `ws://host[:port][/path]`, `wss://...` or `host[:port]`. Default
    /// ports: 4222, 80 for ws, 443 for wss.
    pub fn parse(url: &str) -> Result<ServerAddr> {
        let bad = |why: &str| {
            Error::new(
                ErrorKind::Config,
                format!("invalid server URL {url:?}: {why}"),
            )
        };
        let url = url.trim();
        let (scheme, rest) = match url.split_once("://") {
            Some((s, r)) => (s.to_ascii_lowercase(), r),
            None => ("nats".to_string(), url),
        };
        let (tls, websocket) = match scheme.as_str() {
            "nats" => (false, false),
            "tls" | "nats+tls" => (true, false),
            "ws" => (false, true),
            "wss" => (true, true),
            _ => return Err(bad("unknown scheme")),
        };
        // A WebSocket URL's authority ends at its path; other URLs have
        // none (their credentials may hold a '/').
        let (rest, path) = if websocket {
            match rest.find(['/', '?']) {
                Some(i) if rest.as_bytes()[i] == b'?' => (&rest[..i], format!("/{}", &rest[i..])),
                Some(i) => (&rest[..i], rest[i..].to_string()),
                None => (rest, "/".to_string()),
            }
        } else {
            (rest.trim_end_matches('/'), String::new())
        };
        let (creds, hostport) = match rest.rsplit_once('@') {
            Some((c, h)) => (Some(c), h),
            None => (None, rest),
        };
        let (user, password) = match creds {
            Some(c) => match c.split_once(':') {
                Some((u, p)) => (Some(u.to_string()), Some(p.to_string())),
                None => (Some(c.to_string()), None),
            },
            None => (None, None),
        };
        let (host, port) = if let Some(h) = hostport.strip_prefix('[') {
            // [ipv6]:port
            let (h, p) = h
                .split_once(']')
                .ok_or_else(|| bad("unterminated IPv6 address"))?;
            (h.to_string(), p.strip_prefix(':'))
        } else {
            match hostport.rsplit_once(':') {
                Some((h, p)) => (h.to_string(), Some(p)),
                None => (hostport.to_string(), None),
            }
        };
        if host.is_empty() {
            return Err(bad("missing host"));
        }
        let port = match port {
            Some(p) => p.parse::<u16>().map_err(|_| bad("bad port"))?,
            None if websocket && tls => 443,
            None if websocket => 80,
            None => 4222,
        };
        Ok(ServerAddr {
            tls,
            websocket,
            path,
            host,
            port,
            user,
            password,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls() {
        let a = ServerAddr::parse("nats://u:p@127.0.0.1:4333").unwrap();
        assert_eq!(
            (
                a.host.as_str(),
                a.port,
                a.user.as_deref(),
                a.password.as_deref()
            ),
            ("127.0.0.1", 4333, Some("u"), Some("p"))
        );
        let a = ServerAddr::parse("localhost").unwrap();
        assert_eq!((a.host.as_str(), a.port, a.tls), ("localhost", 4222, false));
        assert!(ServerAddr::parse("tls://h:1").unwrap().tls);
        let a = ServerAddr::parse("[::1]:5000").unwrap();
        assert_eq!((a.host.as_str(), a.port), ("::1", 5000));
        assert!(ServerAddr::parse("ftp://x").is_err());
        assert!(ServerAddr::parse("nats://:4222").is_err());
        assert!(ServerAddr::parse("nats://h:99999").is_err());
        assert!(ServerAddr::parse("nats://h:1/").is_ok());
    }
}
