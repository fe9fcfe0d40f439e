//! Encodes client frames straight into the connection's write buffer.

use crate::headers::Headers;

fn put_num(out: &mut Vec<u8>, mut v: u64) {
    let mut tmp = [0u8; 20];
    let mut i = tmp.len();
    loop {
        i -= 1;
        tmp[i] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    out.extend_from_slice(&tmp[i..]);
}

/// Bytes a PUB/HPUB frame will occupy, headers included.
pub(crate) fn pub_frame_len(
    subject: &str,
    reply: Option<&str>,
    hdr_len: usize,
    payload_len: usize,
) -> usize {
    // op + spaces + two numbers of at most 20 digits + CRLFs.
    6 + subject.len() + reply.map_or(0, |r| r.len() + 1) + 44 + 4 + hdr_len + payload_len
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
    out.extend_from_slice(if hdr_len.is_some() { b"HPUB " } else { b"PUB " });
    out.extend_from_slice(subject.as_bytes());
    out.push(b' ');
    if let Some(r) = reply {
        out.extend_from_slice(r.as_bytes());
        out.push(b' ');
    }
    if let Some(h) = hdr_len {
        put_num(out, h as u64);
        out.push(b' ');
        put_num(out, (h + payload.len()) as u64);
    } else {
        put_num(out, payload.len() as u64);
    }
    out.extend_from_slice(b"\r\n");
    if let Some(h) = headers {
        h.encode(out);
    }
    out.extend_from_slice(payload);
    out.extend_from_slice(b"\r\n");
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
        assert!(out.len() <= pub_frame_len("s", None, h.encoded_len(), 2));
    }
}
