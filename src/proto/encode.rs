//! Encodes client frames straight into the connection's write buffer.

use crate::headers::Headers;

fn put_num(out: &mut Vec<u8>, v: u64) {
    let n = digits(v);
    out.reserve(n);
    let start = out.len();
    // SAFETY: `reserve` made room for the `n` bytes `put_digits` writes.
    unsafe {
        put_digits(out.as_mut_ptr().add(start), v, n);
        out.set_len(start + n);
    }
}

/// A PUB/HPUB frame measured once: its exact length on the wire, headers
/// included (the reconnect buffer's documented limit counts these bytes),
/// and the counts `write` puts on its control line. A publish measures
/// before it takes the write lock and writes under it.
pub(crate) struct PubFrame<'a> {
    subject: &'a str,
    reply: Option<&'a str>,
    headers: Option<&'a Headers>,
    payload: &'a [u8],
    line: PubLine,
    /// Bytes of the encoded header block (0: no headers).
    pub(crate) hdr_len: usize,
}

impl<'a> PubFrame<'a> {
    pub(crate) fn new(
        subject: &'a str,
        reply: Option<&'a str>,
        headers: Option<&'a Headers>,
        payload: &'a [u8],
    ) -> Self {
        let hdr_len = headers.map(Headers::encoded_len);
        PubFrame {
            subject,
            reply,
            headers,
            payload,
            line: PubLine::new(subject, reply, hdr_len, payload.len()),
            hdr_len: hdr_len.unwrap_or(0),
        }
    }

    /// Bytes the frame occupies on the wire.
    pub(crate) fn len(&self) -> usize {
        self.line.len + self.hdr_len + self.payload.len() + 2
    }

    /// `PUB subject [reply] len\r\npayload\r\n`, or HPUB with headers.
    pub(crate) fn write(&self, out: &mut Vec<u8>) {
        let line = &self.line;
        out.reserve(self.len());
        // The control line is written straight into the reserved room (this
        // runs on every publish): no staging buffer, the digits in place.
        let start = out.len();
        // SAFETY: `reserve` made room for `line.len` bytes past `start`, and
        // the writes below are exactly the terms `PubLine::new` adds up, in
        // order; `set_len` then covers only bytes written.
        unsafe {
            let mut at = out.as_mut_ptr().add(start);
            at = put(at, line.verb);
            at = put(at, self.subject.as_bytes());
            at = put(at, b" ");
            if let Some(r) = self.reply {
                at = put(at, r.as_bytes());
                at = put(at, b" ");
            }
            at = put_digits(at, line.count, line.count_digits);
            if let Some(t) = line.total {
                at = put(at, b" ");
                at = put_digits(at, t, line.total_digits);
            }
            put(at, b"\r\n");
            out.set_len(start + line.len);
        }
        if let Some(h) = self.headers {
            h.encode(out);
        }
        out.extend_from_slice(self.payload);
        out.extend_from_slice(b"\r\n");
    }
}

/// A PUB/HPUB control line's counts and exact length: what `PubFrame`
/// writes and counts, worked out in one place.
struct PubLine {
    verb: &'static [u8],
    /// PUB's payload length, or HPUB's header length.
    count: u64,
    /// HPUB's header plus payload length.
    total: Option<u64>,
    count_digits: usize,
    total_digits: usize,
    /// Bytes of the line, CRLF included.
    len: usize,
}

impl PubLine {
    fn new(subject: &str, reply: Option<&str>, hdr_len: Option<usize>, payload_len: usize) -> Self {
        let (verb, count, total): (&'static [u8], u64, Option<u64>) = match hdr_len {
            Some(h) => (b"HPUB ", h as u64, Some((h + payload_len) as u64)),
            None => (b"PUB ", payload_len as u64, None),
        };
        let count_digits = digits(count);
        let total_digits = total.map_or(0, digits);
        // verb, subject, " ", [reply " "], count, [" " total], CRLF
        let len = verb.len()
            + subject.len()
            + 1
            + reply.map_or(0, |r| r.len() + 1)
            + count_digits
            + total.map_or(0, |_| 1 + total_digits)
            + 2;
        PubLine {
            verb,
            count,
            total,
            count_digits,
            total_digits,
            len,
        }
    }
}

fn digits(v: u64) -> usize {
    v.checked_ilog10().map_or(1, |d| d as usize + 1)
}

/// `PUB subject [reply] len\r\npayload\r\n`, or HPUB when headers are given.
pub(crate) fn write_pub(
    out: &mut Vec<u8>,
    subject: &str,
    reply: Option<&str>,
    headers: Option<&Headers>,
    payload: &[u8],
) {
    PubFrame::new(subject, reply, headers, payload).write(out);
}

/// Copies `bytes` to `at`; returns the end. The caller guarantees room.
#[inline(always)]
unsafe fn put(at: *mut u8, bytes: &[u8]) -> *mut u8 {
    std::ptr::copy_nonoverlapping(bytes.as_ptr(), at, bytes.len());
    at.add(bytes.len())
}

/// Writes the `n` decimal digits of `v` (n == digits(v)) at `at`; returns
/// the end. The caller guarantees room.
#[inline(always)]
unsafe fn put_digits(at: *mut u8, mut v: u64, n: usize) -> *mut u8 {
    let mut i = n;
    while i > 0 {
        i -= 1;
        *at.add(i) = b'0' + (v % 10) as u8;
        v /= 10;
    }
    at.add(n)
}

pub(crate) fn write_sub(out: &mut Vec<u8>, subject: &str, queue: Option<&str>, sid: u64) {
    out.extend_from_slice(b"SUB ");
    out.extend_from_slice(subject.as_bytes());
    out.push(b' ');
    if let Some(q) = queue {
        out.extend_from_slice(q.as_bytes());
        out.push(b' ');
    }
    put_num(out, sid);
    out.extend_from_slice(b"\r\n");
}

pub(crate) fn write_unsub(out: &mut Vec<u8>, sid: u64, max: Option<u64>) {
    out.extend_from_slice(b"UNSUB ");
    put_num(out, sid);
    if let Some(m) = max {
        out.push(b' ');
        put_num(out, m);
    }
    out.extend_from_slice(b"\r\n");
}

pub(crate) const PING: &[u8] = b"PING\r\n";

/// Keeps only the PUB/HPUB frames of an unsent write buffer (our own,
/// well-formed encoding): after a reconnect, subscriptions and PINGs are
/// regenerated, publishes are not.
pub(crate) fn retain_publishes(buf: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(buf.len());
    let mut at = 0;
    while at < buf.len() {
        let Some(nl) = memchr::memchr(b'\n', &buf[at..]) else {
            break;
        };
        let line = &buf[at..at + nl + 1];
        let is_pub = line.starts_with(b"PUB ") || line.starts_with(b"HPUB ");
        let body = if is_pub {
            // The last argument is the byte count that follows the line.
            let args = &line[..line.len().saturating_sub(2)];
            let last = args.rsplit(|b| *b == b' ').next().unwrap_or(b"");
            match std::str::from_utf8(last)
                .ok()
                .and_then(|n| n.parse::<usize>().ok())
            {
                Some(n) => n + 2,
                None => break,
            }
        } else {
            0
        };
        let end = (at + line.len() + body).min(buf.len());
        if is_pub {
            out.extend_from_slice(&buf[at..end]);
        }
        at = end;
    }
    out
}
pub(crate) const PONG: &[u8] = b"PONG\r\n";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames() {
        let mut out = Vec::new();
        write_pub(&mut out, "a.b", None, None, b"hi");
        write_pub(&mut out, "a.b", Some("r"), None, b"");
        write_sub(&mut out, "a.*", Some("q"), 12);
        write_unsub(&mut out, 12, Some(3));
        write_unsub(&mut out, 1, None);
        assert_eq!(
            out,
            b"PUB a.b 2\r\nhi\r\nPUB a.b r 0\r\n\r\nSUB a.* q 12\r\nUNSUB 12 3\r\nUNSUB 1\r\n"
        );
        let mut h = Headers::new();
        h.add("K", "v").unwrap();
        out.clear();
        write_pub(&mut out, "s", None, Some(&h), b"xy");
        assert_eq!(out, b"HPUB s 18 20\r\nNATS/1.0\r\nK: v\r\n\r\nxy\r\n");
        assert_eq!(out.len(), PubFrame::new("s", None, Some(&h), b"xy").len());
    }

    #[test]
    fn frame_len_is_exact() {
        let mut h = Headers::new();
        h.add("Key", "value").unwrap();
        for payload in [&b""[..], b"x", &[b'z'; 9], &[b'z'; 10], &[b'z'; 1000]] {
            for reply in [None, Some("_INBOX.abc")] {
                for headers in [None, Some(&h)] {
                    let mut out = Vec::new();
                    write_pub(&mut out, "sub.ject", reply, headers, payload);
                    assert_eq!(
                        out.len(),
                        PubFrame::new("sub.ject", reply, headers, payload).len(),
                        "{reply:?} {headers:?} {}",
                        payload.len()
                    );
                }
            }
        }
    }

    #[test]
    fn frames_match_the_protocol_text_at_every_digit_count() {
        let mut h = Headers::new();
        h.add("Key", "value").unwrap();
        for len in [0, 1, 9, 10, 99, 100, 999, 1000, 65_535, 1_048_576] {
            let payload = vec![b'p'; len];
            for reply in [None, Some("_INBOX.abc")] {
                for headers in [None, Some(&h)] {
                    let mut out = b"before".to_vec();
                    write_pub(&mut out, "sub.ject", reply, headers, &payload);
                    let args = match reply {
                        Some(r) => format!("sub.ject {r}"),
                        None => "sub.ject".to_string(),
                    };
                    let mut want = b"before".to_vec();
                    match headers {
                        Some(h) => {
                            let hl = h.encoded_len();
                            want.extend(format!("HPUB {args} {hl} {}\r\n", hl + len).bytes());
                            h.encode(&mut want);
                        }
                        None => want.extend(format!("PUB {args} {len}\r\n").bytes()),
                    }
                    want.extend_from_slice(&payload);
                    want.extend_from_slice(b"\r\n");
                    assert!(out == want, "{len} {reply:?} {headers:?}");
                    assert_eq!(
                        PubFrame::new("sub.ject", reply, headers, &payload).len(),
                        want.len() - b"before".len()
                    );
                }
            }
        }
        // SUB and UNSUB numbers use the same digit writer.
        for n in [0, 9, 10, 12_345, u64::MAX] {
            let mut out = Vec::new();
            write_sub(&mut out, "s", None, n);
            write_unsub(&mut out, n, Some(n));
            assert_eq!(out, format!("SUB s {n}\r\nUNSUB {n} {n}\r\n").into_bytes());
        }
    }

    #[test]
    fn retain_publishes_drops_control_frames() {
        let mut h = Headers::new();
        h.add("K", "v").unwrap();
        let mut buf = Vec::new();
        write_sub(&mut buf, "a", None, 1);
        write_pub(&mut buf, "a", Some("r"), None, b"x\r\nPING\r\n");
        buf.extend_from_slice(PING);
        write_unsub(&mut buf, 1, Some(2));
        write_pub(&mut buf, "b", None, Some(&h), b"yz");
        let mut want = Vec::new();
        write_pub(&mut want, "a", Some("r"), None, b"x\r\nPING\r\n");
        write_pub(&mut want, "b", None, Some(&h), b"yz");
        assert_eq!(retain_publishes(&buf), want);
    }
}
