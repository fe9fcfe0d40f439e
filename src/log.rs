//! What the client does, as log lines: the application's log callback (an
//! option), or standard error when the `NATSIO_LOG` environment variable
//! asks for it (`NATSIO_LOG=trace` turns protocol tracing on without a code
//! change). Levels: error, warn, info (connections), debug, trace (every
//! protocol frame, payloads cut to a short preview, secrets of CONNECT
//! redacted).
//!
//! A disabled level costs one comparison: callers ask [`Logger::enabled`]
//! (through the `log!` macro) before formatting anything.

use std::fmt;
use std::io::Write;
use std::sync::Arc;

use crate::message::Message;
use crate::proto::ServerOp;

/// How much the client tells; each level includes those above it.
#[repr(i32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default, Hash)]
pub enum LogLevel {
    #[default]
    Off = 0,
    Error = 1,
    Warn = 2,
    Info = 3,
    Debug = 4,
    Trace = 5,
}

impl LogLevel {
    pub fn name(self) -> &'static str {
        match self {
            LogLevel::Off => "off",
            LogLevel::Error => "error",
            LogLevel::Warn => "warn",
            LogLevel::Info => "info",
            LogLevel::Debug => "debug",
            LogLevel::Trace => "trace",
        }
    }

    pub fn from_i32(v: i32) -> Option<LogLevel> {
        Some(match v {
            0 => LogLevel::Off,
            1 => LogLevel::Error,
            2 => LogLevel::Warn,
            3 => LogLevel::Info,
            4 => LogLevel::Debug,
            5 => LogLevel::Trace,
            _ => return None,
        })
    }

    /// `NATSIO_LOG`'s values: a level's name, any case.
    pub fn parse(s: &str) -> Option<LogLevel> {
        [
            LogLevel::Off,
            LogLevel::Error,
            LogLevel::Warn,
            LogLevel::Info,
            LogLevel::Debug,
            LogLevel::Trace,
        ]
        .into_iter()
        .find(|l| l.name().eq_ignore_ascii_case(s.trim()))
    }
}

impl fmt::Display for LogLevel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Receives a client's log lines (level, text without a trailing newline).
pub type LogCallback = Arc<dyn Fn(LogLevel, &str) + Send + Sync>;

/// The environment variable that turns logging on (to standard error when
/// no callback is set) or raises the level of a callback.
pub const LOG_ENV: &str = "NATSIO_LOG";

/// A client's logger, fixed when it connects.
#[derive(Clone, Default)]
pub(crate) struct Logger {
    level: LogLevel,
    sink: Option<LogCallback>,
    /// Standard error's lines name the client ("natsio[name]").
    label: String,
}

impl Logger {
    /// The options' callback and level; `NATSIO_LOG` raises the level (and,
    /// without a callback, writes to standard error), so tracing can be
    /// turned on in a deployed program.
    pub(crate) fn new(
        level: LogLevel,
        callback: Option<LogCallback>,
        name: Option<&str>,
    ) -> Logger {
        let env = std::env::var(LOG_ENV)
            .ok()
            .and_then(|v| LogLevel::parse(&v));
        Logger::with_env(level, callback, name, env)
    }

    fn with_env(
        level: LogLevel,
        callback: Option<LogCallback>,
        name: Option<&str>,
        env: Option<LogLevel>,
    ) -> Logger {
        let label = match name {
            Some(n) if !n.is_empty() => format!("natsio[{n}]"),
            _ => "natsio".to_string(),
        };
        let level = env.map_or(level, |e| level.max(e));
        Logger {
            level,
            sink: callback,
            label,
        }
    }

    #[inline]
    pub(crate) fn enabled(&self, level: LogLevel) -> bool {
        level != LogLevel::Off && level <= self.level
    }

    /// Writes one line; callers check [`enabled`](Self::enabled) first.
    pub(crate) fn write(&self, level: LogLevel, args: fmt::Arguments<'_>) {
        let text = args.to_string();
        match &self.sink {
            Some(cb) => cb(level, &text),
            None => {
                let mut err = std::io::stderr().lock();
                let _ = writeln!(
                    err,
                    "{} {}: {}",
                    self.label,
                    level.name().to_uppercase(),
                    text
                );
            }
        }
    }

    /// Traces the frames of `bytes` (whole frames, as the client writes
    /// them), one line each.
    pub(crate) fn trace_sent(&self, bytes: &[u8]) {
        if !self.enabled(LogLevel::Trace) {
            return;
        }
        for frame in OutboundFrames(bytes) {
            self.write(LogLevel::Trace, format_args!(">>> {frame}"));
        }
    }

    /// Traces a frame the server sent.
    pub(crate) fn trace_received(&self, op: &ServerOp) {
        if !self.enabled(LogLevel::Trace) {
            return;
        }
        match op {
            ServerOp::Info(json) => self.write(LogLevel::Trace, format_args!("<<< INFO {json}")),
            ServerOp::Msg(m) => self.write(LogLevel::Trace, format_args!("<<< {}", InboundMsg(m))),
            ServerOp::Ping => self.write(LogLevel::Trace, format_args!("<<< PING")),
            ServerOp::Pong => self.write(LogLevel::Trace, format_args!("<<< PONG")),
            ServerOp::Ok => self.write(LogLevel::Trace, format_args!("<<< +OK")),
            ServerOp::Err(e) => self.write(LogLevel::Trace, format_args!("<<< -ERR {e}")),
        }
    }
}

/// `log!(logger, Level, "format", args...)`: formats only when enabled.
macro_rules! log {
    ($logger:expr, $level:ident, $($arg:tt)+) => {{
        let logger: &$crate::log::Logger = &$logger;
        if logger.enabled($crate::log::LogLevel::$level) {
            logger.write($crate::log::LogLevel::$level, format_args!($($arg)+));
        }
    }};
}
pub(crate) use log;

/// Payload bytes shown in a trace line; the rest is counted, not shown.
const PREVIEW: usize = 32;

/// A payload as a short quoted preview: printable ASCII as is, the rest
/// escaped, cut after [`PREVIEW`] bytes.
struct Preview<'a>(&'a [u8]);

impl fmt::Display for Preview<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("\"")?;
        for &b in self.0.iter().take(PREVIEW) {
            match b {
                b'"' => f.write_str("\\\"")?,
                b'\\' => f.write_str("\\\\")?,
                0x20..=0x7e => write!(f, "{}", b as char)?,
                b'\r' => f.write_str("\\r")?,
                b'\n' => f.write_str("\\n")?,
                _ => write!(f, "\\x{b:02x}")?,
            }
        }
        f.write_str("\"")?;
        if self.0.len() > PREVIEW {
            write!(f, "... ({} bytes)", self.0.len())?;
        }
        Ok(())
    }
}

struct InboundMsg<'a>(&'a Message);

impl fmt::Display for InboundMsg<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let m = self.0;
        let verb = if m.headers().is_some() { "HMSG" } else { "MSG" };
        write!(f, "{verb} {} {}", m.subject(), m.sid())?;
        if let Some(r) = m.reply() {
            write!(f, " {r}")?;
        }
        if let Some(h) = m.headers() {
            write!(f, " [{} header(s)]", h.len())?;
        }
        write!(f, " {} {}", m.payload().len(), Preview(m.payload()))
    }
}

/// One outbound frame: its control line, and the payload (header block
/// included) of PUB and HPUB.
struct OutboundFrame<'a> {
    line: &'a [u8],
    payload: Option<&'a [u8]>,
}

impl fmt::Display for OutboundFrame<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let line = String::from_utf8_lossy(self.line);
        match line.strip_prefix("CONNECT ") {
            Some(json) => write!(f, "CONNECT {}", redact_connect(json))?,
            None => f.write_str(&line)?,
        }
        if let Some(p) = self.payload {
            write!(f, " {}", Preview(p))?;
        }
        Ok(())
    }
}

struct OutboundFrames<'a>(&'a [u8]);

impl<'a> Iterator for OutboundFrames<'a> {
    type Item = OutboundFrame<'a>;

    fn next(&mut self) -> Option<OutboundFrame<'a>> {
        let buf = self.0;
        if buf.is_empty() {
            return None;
        }
        let Some(eol) = memchr::memmem::find(buf, b"\r\n") else {
            self.0 = &[];
            return Some(OutboundFrame {
                line: buf,
                payload: None,
            });
        };
        let line = &buf[..eol];
        let rest = &buf[eol + 2..];
        let is_pub = line.starts_with(b"PUB ") || line.starts_with(b"HPUB ");
        let len = is_pub
            .then(|| line.rsplit(|&b| b == b' ').next())
            .flatten()
            .and_then(|n| std::str::from_utf8(n).ok()?.parse::<usize>().ok());
        match len {
            Some(n) if n + 2 <= rest.len() => {
                self.0 = &rest[n + 2..];
                Some(OutboundFrame {
                    line,
                    payload: Some(&rest[..n]),
                })
            }
            _ => {
                self.0 = if is_pub { &[] } else { rest };
                Some(OutboundFrame {
                    line,
                    payload: None,
                })
            }
        }
    }
}

/// CONNECT's JSON with its secrets replaced: a trace may be shared.
fn redact_connect(json: &str) -> String {
    // (The nkey is a public key: shown.)
    const SECRETS: [&str; 4] = ["pass", "auth_token", "sig", "jwt"];
    match serde_json::from_str::<serde_json::Value>(json) {
        Ok(serde_json::Value::Object(mut fields)) => {
            for key in SECRETS {
                if let Some(v) = fields.get_mut(key) {
                    *v = serde_json::Value::String("[redacted]".into());
                }
            }
            serde_json::Value::Object(fields).to_string()
        }
        _ => "[unparsable, not shown]".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    fn lines(bytes: &[u8]) -> Vec<String> {
        OutboundFrames(bytes).map(|f| f.to_string()).collect()
    }

    #[test]
    fn outbound_frames_are_split_and_payloads_cut() {
        let long = vec![b'x'; 100];
        let mut buf = b"PUB a.b 5\r\nhello\r\nSUB c 1\r\nPING\r\n".to_vec();
        buf.extend_from_slice(b"HPUB d _INBOX.x 12 112\r\nNATS/1.0\r\n\r\n");
        buf.extend_from_slice(&long);
        buf.extend_from_slice(b"\r\nUNSUB 1\r\n");
        assert_eq!(
            lines(&buf),
            vec![
                "PUB a.b 5 \"hello\"".to_string(),
                "SUB c 1".into(),
                "PING".into(),
                format!(
                    "HPUB d _INBOX.x 12 112 \"NATS/1.0\\r\\n\\r\\n{}\"... (112 bytes)",
                    "x".repeat(20)
                ),
                "UNSUB 1".into(),
            ]
        );
        assert_eq!(lines(b"PUB a 1\r\n\x00\r\n"), vec!["PUB a 1 \"\\x00\""]);
    }

    #[test]
    fn connect_secrets_are_redacted() {
        let l = lines(
            b"CONNECT {\"user\":\"u\",\"pass\":\"hunter2\",\"auth_token\":\"t0k\",\"sig\":\"s\",\"jwt\":\"j\",\"lang\":\"x\"}\r\n",
        );
        assert_eq!(l.len(), 1);
        for secret in ["hunter2", "t0k", "\"s\"", "\"j\""] {
            assert!(!l[0].contains(secret), "{} shows {secret}", l[0]);
        }
        assert!(
            l[0].contains("\"user\":\"u\"") && l[0].contains("[redacted]"),
            "{}",
            l[0]
        );
    }

    #[test]
    fn levels_filter_and_the_environment_raises_them() {
        let got = Arc::new(Mutex::new(Vec::new()));
        let g = Arc::clone(&got);
        let cb: LogCallback = Arc::new(move |l, t| g.lock().unwrap().push((l, t.to_string())));
        let logger = Logger::with_env(LogLevel::Info, Some(Arc::clone(&cb)), None, None);
        log!(logger, Info, "connected to {}", "x");
        log!(logger, Debug, "not shown");
        logger.trace_sent(b"PING\r\n");
        assert_eq!(
            *got.lock().unwrap(),
            vec![(LogLevel::Info, "connected to x".to_string())]
        );
        let traced = Logger::with_env(LogLevel::Warn, Some(cb), None, Some(LogLevel::Trace));
        traced.trace_sent(b"PING\r\n");
        assert_eq!(
            got.lock().unwrap()[1],
            (LogLevel::Trace, ">>> PING".to_string())
        );
        // Off is off, whatever the environment says of a callback's level.
        assert!(!Logger::with_env(LogLevel::Off, None, None, None).enabled(LogLevel::Error));
        assert!(
            Logger::with_env(LogLevel::Off, None, None, Some(LogLevel::Debug))
                .enabled(LogLevel::Debug)
        );
        assert_eq!(LogLevel::parse(" TRACE "), Some(LogLevel::Trace));
        assert_eq!(LogLevel::parse("loud"), None);
    }
}
