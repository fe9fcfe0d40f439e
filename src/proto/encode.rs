//! Encodes client frames straight into the connection's write buffer.

use crate::headers::Headers;

fn put_num(out: &mut Vec<u8>, v: u64) {
    out.extend_from_slice(num(&mut [0u8; 20], v));
}

/// Bytes a PUB/HPUB frame occupies on the wire, headers included: exact,
/// since the reconnect buffer's documented limit counts these bytes.
pub(crate) fn pub_frame_len(
    subject: &str,
    reply: Option<&str>,
    hdr_len: usize,
    payload_len: usize,
) -> usize {
    let args = subject.len() + reply.map_or(0, |r| r.len() + 1);
    let counts = if hdr_len > 0 {
        // "HPUB " args " " hdr_len " " total
        5 + args + 1 + digits(hdr_len) + 1 + digits(hdr_len + payload_len)
    } else {
        // "PUB " args " " payload_len
        4 + args + 1 + digits(payload_len)
    };
    counts + 2 + hdr_len + payload_len + 2
}

fn digits(v: usize) -> usize {
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
    let hdr_len = headers.map(Headers::encoded_len);
    // Room for the frame: a bound, not pub_frame_len's exact count (this
    // runs on every publish; 64 covers "HPUB ", the spaces, both counts
    // and both CRLFs).
    out.reserve(
        subject.len() + reply.map_or(0, str::len) + hdr_len.unwrap_or(0) + payload.len() + 64,
    );
    // The control line is assembled on the stack and copied once: small
    // copies are cheaper in one piece (this runs on every publish).
    let mut line = [0u8; 160];
    let mut n = 0;
    let mut put = |bytes: &[u8], line: &mut [u8; 160], out: &mut Vec<u8>| {
        if n + bytes.len() <= line.len() {
            line[n..n + bytes.len()].copy_from_slice(bytes);
            n += bytes.len();
        } else {
            out.extend_from_slice(&line[..n]);
            n = 0;
            out.extend_from_slice(bytes);
        }
    };
    put(
        if hdr_len.is_some() { b"HPUB " } else { b"PUB " },
        &mut line,
        out,
    );
    put(subject.as_bytes(), &mut line, out);
    put(b" ", &mut line, out);
    if let Some(r) = reply {
        put(r.as_bytes(), &mut line, out);
        put(b" ", &mut line, out);
    }
    let mut digits = [0u8; 20];
    if let Some(h) = hdr_len {
        put(num(&mut digits, h as u64), &mut line, out);
        put(b" ", &mut line, out);
        put(num(&mut digits, (h + payload.len()) as u64), &mut line, out);
    } else {
        put(num(&mut digits, payload.len() as u64), &mut line, out);
    }
    put(b"\r\n", &mut line, out);
    out.extend_from_slice(&line[..n]);
    if let Some(h) = headers {
        h.encode(out);
    }
    out.extend_from_slice(payload);
    out.extend_from_slice(b"\r\n");
}

/// Decimal digits of `v`, written at the end of `buf`.
fn num(buf: &mut [u8; 20], mut v: u64) -> &[u8] {
    let mut i = buf.len();
    loop {
        i -= 1;
        buf[i] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    &buf[i..]
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
        assert_eq!(out.len(), pub_frame_len("s", None, h.encoded_len(), 2));
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
                    let hdr_len = headers.map_or(0, Headers::encoded_len);
                    assert_eq!(
                        out.len(),
                        pub_frame_len("sub.ject", reply, hdr_len, payload.len()),
                        "{reply:?} {headers:?} {}",
                        payload.len()
                    );
                }
            }
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
