//! Parses server frames in place. A `MSG`/`HMSG` frame is split off the read
//! buffer without copying; the separators after subject, reply and payload
//! are overwritten with NUL so C callers get terminated strings for free.

use std::sync::Arc;

use bytes::BytesMut;
use memchr::memchr;

use crate::error::{Error, ErrorKind, Result};
use crate::headers::Headers;
use crate::message::{Message, Span};

/// A frame sent by the server.
#[derive(Debug)]
pub(crate) enum ServerOp {
    Info(String),
    Msg(Message),
    Ping,
    Pong,
    Ok,
    Err(String),
}

pub(crate) struct Parser {
    max_control_line: usize,
}

const MAX_DIGITS: usize = 20;
const MAX_INFO_LINE: usize = 1 << 20;
/// nats-server caps max_payload at 64 MiB; anything larger is corrupt.
const MAX_MESSAGE: usize = 64 << 20;
const MAX_RESERVE: usize = 256 << 10;

fn parser_err(msg: impl Into<String>) -> Error {
    Error::new(ErrorKind::Parser, msg)
}

fn is_ws(b: u8) -> bool {
    b == b' ' || b == b'\t'
}

/// Splits a control line's arguments into (start, end) offsets.
fn split_args(line: &[u8], base: usize, out: &mut [(usize, usize); 6]) -> Result<usize> {
    let mut n = 0;
    let mut i = 0;
    while i < line.len() {
        while i < line.len() && is_ws(line[i]) {
            i += 1;
        }
        if i == line.len() {
            break;
        }
        let start = i;
        while i < line.len() && !is_ws(line[i]) {
            i += 1;
        }
        if n == out.len() {
            return Err(parser_err("too many arguments in control line"));
        }
        out[n] = (base + start, base + i);
        n += 1;
    }
    Ok(n)
}

fn parse_num(b: &[u8]) -> Result<usize> {
    let v = decimal(b)
        .ok_or_else(|| parser_err(format!("bad number {:?}", String::from_utf8_lossy(b))))?;
    usize::try_from(v).map_err(|_| parser_err("number too large"))
}

/// An unsigned decimal of the protocol: ASCII digits only (no sign), at
/// most 20 of them, within u64. Shared by the parser and the ack-subject
/// reader, both on every message.
pub(crate) fn decimal(b: &[u8]) -> Option<u64> {
    if b.is_empty() || b.len() > MAX_DIGITS {
        return None;
    }
    let digit = |d: u8| {
        let v = d.wrapping_sub(b'0');
        (v <= 9).then_some(u64::from(v))
    };
    // Up to 19 digits cannot overflow a u64 (10^19 - 1 < 2^64): only a
    // 20th takes checked arithmetic. This parses every message's size and
    // every JetStream ack subject's five numbers.
    let (head, last) = b.split_at(b.len().min(MAX_DIGITS - 1));
    let mut v: u64 = 0;
    for &d in head {
        v = v * 10 + digit(d)?;
    }
    match last.first() {
        None => Some(v),
        Some(&d) => v.checked_mul(10)?.checked_add(digit(d)?),
    }
}

fn check_token(b: &[u8], what: &str) -> Result<()> {
    if b.contains(&0) || std::str::from_utf8(b).is_err() {
        return Err(parser_err(format!("{what} is not valid UTF-8 text")));
    }
    Ok(())
}

impl Parser {
    pub fn new(max_control_line: usize) -> Self {
        Parser {
            max_control_line: max_control_line.max(64),
        }
    }

    /// Takes one complete frame off the front of `buf`, or returns `None`
    /// when more bytes are needed.
    pub fn parse(&mut self, buf: &mut BytesMut) -> Result<Option<ServerOp>> {
        // INFO may legitimately be long (large clusters list many URLs).
        let limit = if buf.len() >= 4 && buf[..4].eq_ignore_ascii_case(b"INFO") {
            MAX_INFO_LINE
        } else {
            self.max_control_line
        };
        let Some(nl) = memchr(b'\n', buf) else {
            if buf.len() > limit {
                return Err(Error::new(
                    ErrorKind::MaxControlLineExceeded,
                    format!("control line exceeds {limit} bytes"),
                ));
            }
            return Ok(None);
        };
        if nl > limit {
            return Err(Error::new(
                ErrorKind::MaxControlLineExceeded,
                format!("control line exceeds {limit} bytes"),
            ));
        }
        let line_end = if nl > 0 && buf[nl - 1] == b'\r' {
            nl - 1
        } else {
            nl
        };
        let line = &buf[..line_end];
        let op_end = line.iter().position(|b| is_ws(*b)).unwrap_or(line.len());
        let op = &line[..op_end];
        let after = nl + 1;

        let simple = |buf: &mut BytesMut, op: ServerOp| {
            let _ = buf.split_to(after);
            Ok(Some(op))
        };
        if op.eq_ignore_ascii_case(b"MSG") {
            self.parse_msg(buf, op_end, line_end, after, false)
        } else if op.eq_ignore_ascii_case(b"HMSG") {
            self.parse_msg(buf, op_end, line_end, after, true)
        } else if op.eq_ignore_ascii_case(b"PING") {
            simple(buf, ServerOp::Ping)
        } else if op.eq_ignore_ascii_case(b"PONG") {
            simple(buf, ServerOp::Pong)
        } else if op.eq_ignore_ascii_case(b"+OK") {
            simple(buf, ServerOp::Ok)
        } else if op.eq_ignore_ascii_case(b"-ERR") {
            let text = String::from_utf8_lossy(line[op_end..].trim_ascii()).into_owned();
            let text = text
                .strip_prefix('\'')
                .and_then(|t| t.strip_suffix('\''))
                .map(str::to_owned)
                .unwrap_or(text);
            simple(buf, ServerOp::Err(text))
        } else if op.eq_ignore_ascii_case(b"INFO") {
            let json = String::from_utf8_lossy(line[op_end..].trim_ascii()).into_owned();
            simple(buf, ServerOp::Info(json))
        } else {
            Err(parser_err(format!(
                "unknown protocol operation {:?}",
                String::from_utf8_lossy(&op[..op.len().min(32)])
            )))
        }
    }

    fn parse_msg(
        &mut self,
        buf: &mut BytesMut,
        op_end: usize,
        line_end: usize,
        after: usize,
        with_headers: bool,
    ) -> Result<Option<ServerOp>> {
        let mut args = [(0usize, 0usize); 6];
        let n = split_args(&buf[op_end..line_end], op_end, &mut args)?;
        let arg = |i: usize| &buf[args[i].0..args[i].1];
        let (reply, hdr_len, total_len) = match (with_headers, n) {
            (false, 3) => (None, 0, parse_num(arg(2))?),
            (false, 4) => (Some(args[2]), 0, parse_num(arg(3))?),
            (true, 4) => (None, parse_num(arg(2))?, parse_num(arg(3))?),
            (true, 5) => (Some(args[2]), parse_num(arg(3))?, parse_num(arg(4))?),
            _ => return Err(parser_err("wrong number of arguments in MSG")),
        };
        if hdr_len > total_len {
            return Err(parser_err("header size exceeds total size"));
        }
        if total_len > MAX_MESSAGE {
            return Err(parser_err(format!(
                "message size {total_len} exceeds any server's max_payload"
            )));
        }
        let sid = parse_num(arg(1))? as u64;
        check_token(arg(0), "subject")?;
        if let Some(r) = reply {
            check_token(&buf[r.0..r.1], "reply subject")?;
        }
        let frame_len = after
            .checked_add(total_len)
            .and_then(|v| v.checked_add(2))
            .ok_or_else(|| parser_err("message size overflows"))?;
        if buf.len() < frame_len {
            // Room for more of the frame, but never trust the announced size
            // for the allocation: the bytes must actually arrive.
            buf.reserve((frame_len - buf.len()).min(MAX_RESERVE));
            return Ok(None);
        }
        let payload_end = after + total_len;
        if &buf[payload_end..payload_end + 2] != b"\r\n" {
            return Err(parser_err("message payload not terminated by CRLF"));
        }
        let mut frame = buf.split_to(frame_len);
        let subject = Span::new(args[0].0, args[0].1 - args[0].0);
        frame[args[0].1] = 0;
        let reply = reply.map(|r| {
            frame[r.1] = 0;
            Span::new(r.0, r.1 - r.0)
        });
        frame[payload_end] = 0;
        let headers = (with_headers && hdr_len > 0)
            .then(|| Arc::new(Headers::parse(&frame[after..after + hdr_len])));
        let payload = Span::new(after + hdr_len, total_len - hdr_len);
        // SAFETY: check_token found subject and reply UTF-8 without NUL,
        // and each is followed by the NUL written above.
        let msg = unsafe {
            Message::from_parsed(
                frame.freeze(),
                subject,
                reply,
                payload,
                headers,
                sid,
                total_len as u32,
            )
        };
        Ok(Some(ServerOp::Msg(msg)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_all(input: &[u8]) -> Vec<ServerOp> {
        let mut p = Parser::new(4096);
        let mut buf = BytesMut::from(input);
        let mut out = Vec::new();
        while let Some(op) = p.parse(&mut buf).unwrap() {
            out.push(op);
        }
        assert!(buf.is_empty());
        out
    }

    #[test]
    fn parses_every_frame_kind() {
        let ops = parse_all(
            b"INFO {\"max_payload\":1048576}\r\nPING\r\npong\r\n+OK\r\n-ERR 'Stale Connection'\r\n\
              MSG foo.bar 7 5\r\nhello\r\nmsg a 1 reply.x 0\r\n\r\n\
              HMSG h 2 12 14\r\nNATS/1.0\r\n\r\nhi\r\n",
        );
        assert_eq!(ops.len(), 8);
        assert!(matches!(&ops[0], ServerOp::Info(j) if j == "{\"max_payload\":1048576}"));
        assert!(matches!(ops[1], ServerOp::Ping));
        assert!(matches!(ops[2], ServerOp::Pong));
        assert!(matches!(ops[3], ServerOp::Ok));
        assert!(matches!(&ops[4], ServerOp::Err(t) if t == "Stale Connection"));
        let ServerOp::Msg(m) = &ops[5] else { panic!() };
        assert_eq!(
            (m.subject(), m.sid(), m.payload()),
            ("foo.bar", 7, &b"hello"[..])
        );
        assert_eq!(m.subject_cstr().to_bytes(), b"foo.bar");
        assert_eq!(unsafe { *m.payload_ptr().add(5) }, 0);
        let ServerOp::Msg(m) = &ops[6] else { panic!() };
        assert_eq!(m.reply(), Some("reply.x"));
        assert_eq!(m.payload(), b"");
        let ServerOp::Msg(m) = &ops[7] else { panic!() };
        assert_eq!(m.payload(), b"hi");
        assert!(m.headers().unwrap().is_empty());
    }

    #[test]
    fn partial_frames_split_at_every_point() {
        let input: &[u8] =
            b"MSG a.b 1 r 3\r\nabc\r\nHMSG c 2 22 24\r\nNATS/1.0 503\r\nK: v\r\n\r\nxy\r\nPING\r\n";
        for cut in 0..input.len() {
            let mut p = Parser::new(4096);
            let mut buf = BytesMut::from(&input[..cut]);
            let mut ops = Vec::new();
            while let Some(op) = p.parse(&mut buf).unwrap() {
                ops.push(op);
            }
            buf.extend_from_slice(&input[cut..]);
            while let Some(op) = p.parse(&mut buf).unwrap() {
                ops.push(op);
            }
            assert_eq!(ops.len(), 3, "cut at {cut}");
            let ServerOp::Msg(m) = &ops[1] else { panic!() };
            assert_eq!(m.status(), Some(503));
            assert_eq!(m.headers().unwrap().get("K"), Some("v"));
            assert_eq!(m.payload(), b"xy");
        }
    }

    #[test]
    fn decimals_take_digits_only_and_never_overflow() {
        for (text, want) in [
            ("0", Some(0)),
            ("007", Some(7)),
            ("9999999999999999999", Some(9_999_999_999_999_999_999)),
            ("18446744073709551615", Some(u64::MAX)),
            ("18446744073709551616", None),
            ("99999999999999999999", None),
            ("100000000000000000000", None),
            ("", None),
            ("1a", None),
            ("+1", None),
            ("-1", None),
            ("1/", None),
            ("1:", None),
            (" 1", None),
        ] {
            assert_eq!(decimal(text.as_bytes()), want, "{text:?}");
        }
    }

    // The accessors read subject and reply without checking them again:
    // the parser is what checks, so text that is not UTF-8 (or holds a
    // NUL) must never become a message, and what it lets through must read
    // back exactly, as text and as C strings.
    #[test]
    fn subjects_are_checked_once_and_read_back_exactly() {
        let mut p = Parser::new(4096);
        let mut buf = BytesMut::from(
            "MSG caf\u{e9}.\u{65e5}\u{672c} 3 r\u{e9}p.\u{1f600} 2\r\nok\r\n".as_bytes(),
        );
        let Some(ServerOp::Msg(m)) = p.parse(&mut buf).unwrap() else {
            panic!()
        };
        assert_eq!(m.subject(), "caf\u{e9}.\u{65e5}\u{672c}");
        assert_eq!(m.reply(), Some("r\u{e9}p.\u{1f600}"));
        assert_eq!(m.subject_cstr().to_str(), Ok("caf\u{e9}.\u{65e5}\u{672c}"));
        assert_eq!(
            m.reply_cstr().map(|r| r.to_str()),
            Some(Ok("r\u{e9}p.\u{1f600}"))
        );
        for bad in [
            &b"MSG a\xff 1 2\r\nok\r\n"[..],
            b"MSG a\xc3 1 2\r\nok\r\n",
            b"MSG a\x00b 1 2\r\nok\r\n",
            b"MSG a 1 r\xff 2\r\nok\r\n",
            b"MSG a 1 r\x00 2\r\nok\r\n",
        ] {
            let mut buf = BytesMut::from(bad);
            assert!(p.parse(&mut buf).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn rejects_garbage() {
        let mut p = Parser::new(4096);
        for bad in [
            &b"BOGUS\r\n"[..],
            b"MSG a 1\r\n",
            b"MSG a x 1\r\n",
            b"MSG a 1 123456789012345678901\r\n",
            b"HMSG a 1 5 3\r\n",
        ] {
            let mut buf = BytesMut::from(bad);
            assert!(
                p.parse(&mut buf).is_err(),
                "{:?}",
                String::from_utf8_lossy(bad)
            );
        }
        let mut buf = BytesMut::from(&b"MSG a 1 3\r\nabcXY"[..]);
        assert_eq!(p.parse(&mut buf).unwrap_err().kind(), ErrorKind::Parser);
        let mut p = Parser::new(64);
        let mut buf = BytesMut::from(&[b'x'; 100][..]);
        assert_eq!(
            p.parse(&mut buf).unwrap_err().kind(),
            ErrorKind::MaxControlLineExceeded
        );
    }
}
