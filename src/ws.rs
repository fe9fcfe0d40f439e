//! The WebSocket transport (RFC 6455, client side), for `ws://` and
//! `wss://` servers: the HTTP/1.1 upgrade, then a byte stream carried in
//! binary frames. The rest of the client sees the same byte stream as over
//! TCP, so the parser, reconnect, buffering, auth and drain are unchanged.
//!
//! Written here rather than taken from a crate: the framing NATS needs is
//! small (no extensions, no messages, only a byte stream), SHA-1 and
//! base64 come from crates already linked (ring, base64), and a
//! message-oriented crate would need an adapter back to a byte stream and
//! a frame per message instead of one per write batch.
//!
//! One frame per write call (the writer writes a whole batch at once), no
//! compression offered, so a frame with an RSV bit set is a protocol
//! error, and frames over 64 MiB are refused.

use std::pin::Pin;
use std::task::{Context, Poll, Waker};

use base64::Engine;
use bytes::{Buf, BytesMut};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, ReadBuf};

use crate::error::{Error, ErrorKind, Result};
use crate::server_addr::ServerAddr;

/// The largest frame accepted from the server, and the largest the client
/// writes (a write past it goes out in several frames).
pub(crate) const MAX_FRAME: u64 = 64 * 1024 * 1024;
/// The upgrade response's headers may not exceed this.
const MAX_RESPONSE_HEAD: usize = 16 * 1024;
/// The GUID of RFC 6455 section 1.3, appended to the key for the accept hash.
const ACCEPT_GUID: &str = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";
/// nats-server stops expecting masked frames when a client asks with this
/// header and answers with it.
const NO_MASKING_HEADER: &str = "Nats-No-Masking";

const OP_CONTINUATION: u8 = 0x0;
const OP_TEXT: u8 = 0x1;
const OP_BINARY: u8 = 0x2;
const OP_CLOSE: u8 = 0x8;
const OP_PING: u8 = 0x9;
const OP_PONG: u8 = 0xA;
/// Control frames carry at most this much (RFC 6455 section 5.5).
const MAX_CONTROL_PAYLOAD: usize = 125;
const CLOSE_NORMAL: u16 = 1000;
const CLOSE_GOING_AWAY: u16 = 1001;

fn ws_err(detail: impl Into<String>) -> Error {
    Error::new(ErrorKind::Websocket, detail)
}

/// What the next bytes of the server's stream decoded to.
#[derive(Debug, PartialEq, Eq)]
pub enum Decoded {
    /// This many payload bytes of a data frame were copied out.
    Data(usize),
    /// A ping with its payload, to be answered with a pong carrying it.
    Ping(Vec<u8>),
    Pong,
    /// A close frame: its status code (if any) and reason.
    Close(Option<u16>, String),
    /// The input holds no complete frame header (or control frame).
    NeedMore,
}

/// Decodes the server's frames incrementally: data frames' payloads are
/// streamed out as they arrive (a frame need not be buffered whole),
/// control frames come out whole.
#[derive(Debug, Default)]
pub struct Decoder {
    /// Payload bytes of the current data frame not yet copied out.
    payload_left: u64,
    /// Inside a fragmented message: the next data frame must be a
    /// continuation.
    in_message: bool,
}

impl Decoder {
    pub fn new() -> Decoder {
        Decoder::default()
    }

    /// Consumes what it decodes from `input`, copying data payload into
    /// `out` (which must not be empty). Errors are protocol violations;
    /// the connection cannot go on after one.
    pub fn decode(&mut self, input: &mut BytesMut, out: &mut [u8]) -> Result<Decoded> {
        loop {
            if self.payload_left > 0 {
                if input.is_empty() {
                    return Ok(Decoded::NeedMore);
                }
                let n = (self.payload_left.min(input.len() as u64) as usize).min(out.len());
                out[..n].copy_from_slice(&input[..n]);
                input.advance(n);
                self.payload_left -= n as u64;
                return Ok(Decoded::Data(n));
            }
            if input.len() < 2 {
                return Ok(Decoded::NeedMore);
            }
            let (b0, b1) = (input[0], input[1]);
            let fin = b0 & 0x80 != 0;
            if b0 & 0x70 != 0 {
                return Err(ws_err(
                    "websocket frame with RSV bits set (no extension was negotiated: the server compresses?)",
                ));
            }
            let opcode = b0 & 0x0F;
            if b1 & 0x80 != 0 {
                return Err(ws_err("websocket frame from the server is masked"));
            }
            let (header_len, len) = match b1 & 0x7F {
                126 => {
                    if input.len() < 4 {
                        return Ok(Decoded::NeedMore);
                    }
                    (4, u64::from(u16::from_be_bytes([input[2], input[3]])))
                }
                127 => {
                    if input.len() < 10 {
                        return Ok(Decoded::NeedMore);
                    }
                    let mut b = [0u8; 8];
                    b.copy_from_slice(&input[2..10]);
                    (10, u64::from_be_bytes(b))
                }
                n => (2, u64::from(n)),
            };
            if len > MAX_FRAME {
                return Err(ws_err(format!(
                    "websocket frame of {len} bytes exceeds the limit of {MAX_FRAME} bytes"
                )));
            }
            match opcode {
                OP_CONTINUATION | OP_TEXT | OP_BINARY => {
                    if opcode == OP_CONTINUATION && !self.in_message {
                        return Err(ws_err("websocket continuation frame outside a message"));
                    }
                    if opcode != OP_CONTINUATION && self.in_message {
                        return Err(ws_err(
                            "websocket data frame inside an unfinished fragmented message",
                        ));
                    }
                    input.advance(header_len);
                    self.in_message = !fin;
                    self.payload_left = len;
                }
                OP_CLOSE | OP_PING | OP_PONG => {
                    if !fin {
                        return Err(ws_err("fragmented websocket control frame"));
                    }
                    if len as usize > MAX_CONTROL_PAYLOAD {
                        return Err(ws_err(format!(
                            "websocket control frame of {len} bytes (at most {MAX_CONTROL_PAYLOAD})"
                        )));
                    }
                    let end = header_len + len as usize;
                    if input.len() < end {
                        return Ok(Decoded::NeedMore);
                    }
                    let frame = input.split_to(end);
                    let payload = &frame[header_len..];
                    return Ok(match opcode {
                        OP_PING => Decoded::Ping(payload.to_vec()),
                        OP_PONG => Decoded::Pong,
                        _ => match payload.len() {
                            0 => Decoded::Close(None, String::new()),
                            1 => return Err(ws_err("websocket close frame of one byte")),
                            _ => Decoded::Close(
                                Some(u16::from_be_bytes([payload[0], payload[1]])),
                                String::from_utf8_lossy(&payload[2..]).into_owned(),
                            ),
                        },
                    });
                }
                other => {
                    return Err(ws_err(format!(
                        "websocket frame with unknown opcode {other}"
                    )));
                }
            }
        }
    }
}

/// Appends one frame (FIN set) of `opcode` carrying `payload` to `out`,
/// masked with `mask` unless it is `None`.
pub fn encode_frame(out: &mut Vec<u8>, opcode: u8, payloads: &[&[u8]], mask: Option<[u8; 4]>) {
    let len: usize = payloads.iter().map(|p| p.len()).sum();
    let mask_bit = if mask.is_some() { 0x80 } else { 0 };
    out.reserve(14 + len);
    out.push(0x80 | opcode);
    if len < 126 {
        out.push(mask_bit | len as u8);
    } else if len <= usize::from(u16::MAX) {
        out.push(mask_bit | 126);
        out.extend_from_slice(&(len as u16).to_be_bytes());
    } else {
        out.push(mask_bit | 127);
        out.extend_from_slice(&(len as u64).to_be_bytes());
    }
    if let Some(key) = mask {
        out.extend_from_slice(&key);
    }
    let start = out.len();
    for p in payloads {
        out.extend_from_slice(p);
    }
    if let Some(key) = mask {
        apply_mask(&mut out[start..], key);
    }
}

/// XORs `data` with the repeated 4-byte `key`, eight bytes at a time.
fn apply_mask(data: &mut [u8], key: [u8; 4]) {
    let wide = u64::from_ne_bytes([
        key[0], key[1], key[2], key[3], key[0], key[1], key[2], key[3],
    ]);
    let mut chunks = data.chunks_exact_mut(8);
    for c in &mut chunks {
        let v = u64::from_ne_bytes(c.try_into().expect("8 bytes")) ^ wide;
        c.copy_from_slice(&v.to_ne_bytes());
    }
    for (i, b) in chunks.into_remainder().iter_mut().enumerate() {
        *b ^= key[i % 4];
    }
}

/// The `Sec-WebSocket-Accept` value the server must answer `key` with.
fn accept_for(key: &str) -> String {
    let mut ctx = ring::digest::Context::new(&ring::digest::SHA1_FOR_LEGACY_USE_ONLY);
    ctx.update(key.as_bytes());
    ctx.update(ACCEPT_GUID.as_bytes());
    base64::engine::general_purpose::STANDARD.encode(ctx.finish().as_ref())
}

fn random_bytes<const N: usize>() -> Result<[u8; N]> {
    use ring::rand::SecureRandom;
    let mut b = [0u8; N];
    ring::rand::SystemRandom::new()
        .fill(&mut b)
        .map_err(|_| Error::new(ErrorKind::Internal, "no system randomness"))?;
    Ok(b)
}

/// The upgrade request for `addr` with `key`.
fn upgrade_request(addr: &ServerAddr, key: &str, headers: &[(String, String)]) -> String {
    let host = if addr.host.contains(':') {
        format!("[{}]", addr.host)
    } else {
        addr.host.clone()
    };
    let default_port = if addr.tls { 443 } else { 80 };
    let host = if addr.port == default_port {
        host
    } else {
        format!("{host}:{}", addr.port)
    };
    let mut req = format!(
        "GET {} HTTP/1.1\r\nHost: {host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
         Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n",
        addr.path
    );
    for (name, value) in headers {
        req.push_str(&format!("{name}: {value}\r\n"));
    }
    req.push_str("\r\n");
    req
}

/// What the server's upgrade response said, once checked.
struct Upgraded {
    no_masking: bool,
}

/// Checks the server's response head (status line and headers, without
/// the blank line) against the request's `key`.
fn check_response(head: &str, key: &str, url: &str) -> Result<Upgraded> {
    let mut lines = head.split("\r\n");
    let status = lines.next().unwrap_or_default();
    let mut parts = status.splitn(3, ' ');
    let (version, code) = (parts.next().unwrap_or(""), parts.next().unwrap_or(""));
    if !version.starts_with("HTTP/1.") {
        return Err(ws_err(format!(
            "websocket handshake with {url}: not an HTTP response"
        )));
    }
    if code != "101" {
        return Err(ws_err(format!(
            "websocket handshake with {url}: the server answered {status:?}, not 101 Switching Protocols"
        )));
    }
    let (mut upgrade, mut connection, mut accept, mut no_masking) = (false, false, None, false);
    for line in lines {
        let Some((name, value)) = line.split_once(':') else {
            continue;
        };
        let value = value.trim();
        match name.trim().to_ascii_lowercase().as_str() {
            "upgrade" => upgrade = value.eq_ignore_ascii_case("websocket"),
            "connection" => {
                connection = value
                    .split(',')
                    .any(|t| t.trim().eq_ignore_ascii_case("upgrade"))
            }
            "sec-websocket-accept" => accept = Some(value.to_string()),
            "sec-websocket-extensions" if !value.is_empty() => {
                return Err(ws_err(format!(
                    "websocket handshake with {url}: the server chose extension {value:?}, which was not offered"
                )));
            }
            n if n.eq_ignore_ascii_case(NO_MASKING_HEADER) => {
                no_masking = value.eq_ignore_ascii_case("true")
            }
            _ => {}
        }
    }
    if !upgrade || !connection {
        return Err(ws_err(format!(
            "websocket handshake with {url}: the response lacks Upgrade: websocket or Connection: Upgrade"
        )));
    }
    if accept.as_deref() != Some(accept_for(key).as_str()) {
        return Err(ws_err(format!(
            "websocket handshake with {url}: wrong or missing Sec-WebSocket-Accept"
        )));
    }
    Ok(Upgraded { no_masking })
}

/// Checks an extra header of the upgrade request: an HTTP token as its
/// name, no control characters in its value, none of the request's own.
pub(crate) fn check_header(name: &str, value: &str) -> Result<()> {
    let bad = |why: &str| {
        Err(Error::new(
            ErrorKind::Config,
            format!("websocket header {name:?}: {why}"),
        ))
    };
    let token = |b: u8| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_|~".contains(&b);
    if name.is_empty() || !name.bytes().all(token) {
        return bad("not a valid header name");
    }
    if value.bytes().any(|b| b.is_ascii_control() && b != b'\t') {
        return bad("the value holds a control character");
    }
    let lower = name.to_ascii_lowercase();
    if ["host", "upgrade", "connection"].contains(&lower.as_str())
        || lower.starts_with("sec-websocket-")
    {
        return bad("set by the client itself");
    }
    Ok(())
}

/// Settings of the upgrade request.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WsOptions {
    /// Extra headers of the upgrade request (a proxy's authorization, ...).
    pub headers: Vec<(String, String)>,
    /// Asks the server not to expect masked frames (nats-server's
    /// `Nats-No-Masking`); the client masks anyway unless the server agrees.
    pub no_masking: bool,
}

/// Runs the upgrade over `inner` (TCP, or TLS for wss) and returns the
/// framed stream.
pub(crate) async fn connect<S>(
    mut inner: S,
    addr: &ServerAddr,
    url: &str,
    opts: &WsOptions,
) -> Result<WsStream<S>>
where
    S: AsyncRead + AsyncWrite + Unpin,
{
    let key = base64::engine::general_purpose::STANDARD.encode(random_bytes::<16>()?);
    let mut headers = opts.headers.clone();
    if opts.no_masking {
        headers.push((NO_MASKING_HEADER.into(), "true".into()));
    }
    inner
        .write_all(upgrade_request(addr, &key, &headers).as_bytes())
        .await?;
    inner.flush().await?;
    let mut buf = BytesMut::with_capacity(4096);
    let head_end = loop {
        if let Some(i) = memchr::memmem::find(&buf, b"\r\n\r\n") {
            break i;
        }
        // A NATS server on a websocket URL's port starts with INFO: say so
        // now instead of waiting for a blank line that never comes.
        if buf.len() >= 5 && !buf.starts_with(b"HTTP/") {
            return Err(ws_err(format!(
                "websocket handshake with {url}: not an HTTP response (a NATS port?)"
            )));
        }
        if buf.len() > MAX_RESPONSE_HEAD {
            return Err(ws_err(format!(
                "websocket handshake with {url}: response head over {MAX_RESPONSE_HEAD} bytes"
            )));
        }
        buf.reserve(4096);
        if inner.read_buf(&mut buf).await? == 0 {
            return Err(ws_err(format!(
                "websocket handshake with {url}: the server closed the connection"
            )));
        }
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).into_owned();
    let upgraded = check_response(&head, &key, url)?;
    buf.advance(head_end + 4);
    Ok(WsStream::new(inner, buf, !upgraded.no_masking))
}

/// A byte stream carried in WebSocket frames over `S`.
pub(crate) struct WsStream<S> {
    inner: S,
    /// Bytes read from `inner` not decoded yet.
    rbuf: BytesMut,
    decoder: Decoder,
    /// Encoded frames not yet written to `inner`: the current write's, and
    /// pongs and close frames the reading side queued.
    out: Vec<u8>,
    /// Written part of `out`.
    out_pos: usize,
    mask: bool,
    /// Mask keys: seeded from the system's randomness once per
    /// connection, then xorshift (RFC 6455 asks for unpredictable keys
    /// against proxy cache poisoning, not for secrets).
    rng: u64,
    /// The close handshake: the server's close has been read (the stream
    /// reads as ended) / ours has been queued.
    close_received: bool,
    close_sent: bool,
    /// The reading side queued a pong or close that is not written yet.
    control_queued: bool,
    /// The writing task waiting for `out` to drain, to wake it when the
    /// reading side drains it (the halves share `inner`'s write waker).
    write_waker: Option<Waker>,
}

impl<S: AsyncRead + AsyncWrite + Unpin> WsStream<S> {
    fn new(inner: S, rbuf: BytesMut, mask: bool) -> WsStream<S> {
        let seed = random_bytes::<8>().map_or(0x9E37_79B9_7F4A_7C15, u64::from_ne_bytes);
        WsStream {
            inner,
            rbuf,
            decoder: Decoder::new(),
            out: Vec::new(),
            out_pos: 0,
            mask,
            rng: seed | 1,
            close_received: false,
            close_sent: false,
            control_queued: false,
            write_waker: None,
        }
    }

    pub(crate) fn inner(&self) -> &S {
        &self.inner
    }

    fn next_mask(&mut self) -> Option<[u8; 4]> {
        if !self.mask {
            return None;
        }
        let mut x = self.rng;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.rng = x;
        Some((x as u32).to_ne_bytes())
    }

    fn queue_frame(&mut self, opcode: u8, payloads: &[&[u8]]) {
        if self.out_pos == self.out.len() {
            self.out.clear();
            self.out_pos = 0;
        }
        let mask = self.next_mask();
        encode_frame(&mut self.out, opcode, payloads, mask);
    }

    fn queue_close(&mut self, code: u16) {
        if !self.close_sent {
            self.close_sent = true;
            self.queue_frame(OP_CLOSE, &[&code.to_be_bytes()]);
        }
    }

    /// Writes `out` to `inner` until it is empty (`Ready`), `inner` would
    /// block (`Pending`) or fails.
    fn poll_drain(&mut self, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        let mut progressed = false;
        while self.out_pos < self.out.len() {
            match Pin::new(&mut self.inner).poll_write(cx, &self.out[self.out_pos..]) {
                Poll::Ready(Ok(0)) => {
                    return Poll::Ready(Err(std::io::ErrorKind::WriteZero.into()));
                }
                Poll::Ready(Ok(n)) => {
                    self.out_pos += n;
                    progressed = true;
                }
                Poll::Ready(Err(e)) => return Poll::Ready(Err(e)),
                Poll::Pending => {
                    if progressed {
                        self.wake_writer();
                    }
                    return Poll::Pending;
                }
            }
        }
        self.out.clear();
        self.out_pos = 0;
        self.control_queued = false;
        if progressed {
            self.wake_writer();
        }
        Poll::Ready(Ok(()))
    }

    fn wake_writer(&mut self) {
        if let Some(w) = self.write_waker.take() {
            w.wake();
        }
    }

    /// `poll_drain` for the writing side: remembers its waker, which a
    /// drain by the reading side (a pong) would otherwise take over.
    fn poll_drain_for_writer(&mut self, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        let r = self.poll_drain(cx);
        if r.is_pending() {
            self.write_waker = Some(cx.waker().clone());
        }
        r
    }

    /// One frame carrying `bufs` (up to MAX_FRAME bytes of them).
    fn poll_write_frame(
        &mut self,
        cx: &mut Context<'_>,
        bufs: &[&[u8]],
    ) -> Poll<std::io::Result<usize>> {
        // One frame at a time in `out`: earlier ones go first.
        if self.poll_drain_for_writer(cx)?.is_pending() {
            return Poll::Pending;
        }
        if self.close_sent {
            return Poll::Ready(Err(std::io::Error::new(
                std::io::ErrorKind::BrokenPipe,
                "websocket closed",
            )));
        }
        let mut room = MAX_FRAME as usize;
        let mut taken: Vec<&[u8]> = Vec::with_capacity(bufs.len());
        for b in bufs {
            if room == 0 {
                break;
            }
            let part = &b[..b.len().min(room)];
            room -= part.len();
            taken.push(part);
        }
        let n: usize = taken.iter().map(|p| p.len()).sum();
        if n == 0 {
            return Poll::Ready(Ok(0));
        }
        self.queue_frame(OP_BINARY, &taken);
        // Start sending now; what does not go yet goes on the next write
        // or flush.
        if let Poll::Ready(Err(e)) = self.poll_drain_for_writer(cx) {
            return Poll::Ready(Err(e));
        }
        Poll::Ready(Ok(n))
    }
}

impl<S: AsyncRead + AsyncWrite + Unpin> AsyncRead for WsStream<S> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let this = self.get_mut();
        if buf.remaining() == 0 {
            return Poll::Ready(Ok(()));
        }
        loop {
            // Pongs and a close reply go out without waiting for the writer
            // (which may be idle). The halves share the socket's one
            // write-readiness waker: when the socket is full, the writing
            // task is woken to take it back, and it drains everything.
            if this.control_queued {
                match this.poll_drain(cx) {
                    Poll::Ready(Err(e)) => return Poll::Ready(Err(e)),
                    Poll::Pending => this.wake_writer(),
                    Poll::Ready(Ok(())) => {}
                }
            }
            if this.close_received {
                return Poll::Ready(Ok(()));
            }
            let decoded = this
                .decoder
                .decode(&mut this.rbuf, buf.initialize_unfilled())
                .map_err(std::io::Error::other)?;
            match decoded {
                Decoded::Data(0) => {}
                Decoded::Data(n) => {
                    buf.advance(n);
                    return Poll::Ready(Ok(()));
                }
                Decoded::Ping(payload) => {
                    if !this.close_sent {
                        this.queue_frame(OP_PONG, &[&payload]);
                        this.control_queued = true;
                    }
                }
                Decoded::Pong => {}
                Decoded::Close(code, reason) => {
                    this.close_received = true;
                    this.queue_close(code.unwrap_or(CLOSE_NORMAL));
                    if this.poll_drain(cx).is_pending() {
                        this.wake_writer();
                    }
                    return match code {
                        None | Some(CLOSE_NORMAL) | Some(CLOSE_GOING_AWAY) => Poll::Ready(Ok(())),
                        Some(c) => Poll::Ready(Err(std::io::Error::other(ws_err(format!(
                            "the server closed the websocket with status {c}: {reason}"
                        ))))),
                    };
                }
                Decoded::NeedMore => {
                    if this.rbuf.capacity() - this.rbuf.len() < 4096 {
                        this.rbuf.reserve(64 * 1024);
                    }
                    let spare = this.rbuf.spare_capacity_mut();
                    let mut rb = ReadBuf::uninit(spare);
                    match Pin::new(&mut this.inner).poll_read(cx, &mut rb) {
                        Poll::Ready(Ok(())) => {
                            let n = rb.filled().len();
                            if n == 0 {
                                // The connection ended (mid-frame or not).
                                return Poll::Ready(Ok(()));
                            }
                            // SAFETY: `n` bytes of the spare capacity were
                            // initialised by the read.
                            unsafe { this.rbuf.set_len(this.rbuf.len() + n) };
                        }
                        Poll::Ready(Err(e)) => return Poll::Ready(Err(e)),
                        Poll::Pending => return Poll::Pending,
                    }
                }
            }
        }
    }
}

impl<S: AsyncRead + AsyncWrite + Unpin> AsyncWrite for WsStream<S> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        self.get_mut().poll_write_frame(cx, &[buf])
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        let parts: Vec<&[u8]> = bufs.iter().map(|b| &**b).collect();
        self.get_mut().poll_write_frame(cx, &parts)
    }

    fn is_write_vectored(&self) -> bool {
        true
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        let this = self.get_mut();
        if this.poll_drain_for_writer(cx)?.is_pending() {
            return Poll::Pending;
        }
        Pin::new(&mut this.inner).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        let this = self.get_mut();
        this.queue_close(CLOSE_NORMAL);
        if this.poll_drain_for_writer(cx)?.is_pending() {
            return Poll::Pending;
        }
        Pin::new(&mut this.inner).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode_all(bytes: &[u8], out_cap: usize) -> Result<(Vec<u8>, Vec<Decoded>)> {
        let mut d = Decoder::new();
        let mut input = BytesMut::from(bytes);
        let mut data = Vec::new();
        let mut events = Vec::new();
        let mut out = vec![0u8; out_cap];
        loop {
            match d.decode(&mut input, &mut out)? {
                Decoded::Data(n) => data.extend_from_slice(&out[..n]),
                Decoded::NeedMore => return Ok((data, events)),
                other => events.push(other),
            }
        }
    }

    #[test]
    fn accept_key_of_rfc_6455() {
        // The example of RFC 6455 section 1.3.
        assert_eq!(
            accept_for("dGhlIHNhbXBsZSBub25jZQ=="),
            "s3pPLMBiTxaQ9kYGzzhZRbK+xOo="
        );
    }

    #[test]
    fn unmasked_binary_frames_and_lengths() {
        // 5 bytes, then 126-byte (16-bit length) and 70000-byte (64-bit).
        let mut wire = vec![0x82, 5];
        wire.extend_from_slice(b"hello");
        let mid = vec![b'm'; 126];
        wire.extend_from_slice(&[0x82, 126, 0, 126]);
        wire.extend_from_slice(&mid);
        let big = vec![b'b'; 70_000];
        wire.extend_from_slice(&[0x82, 127]);
        wire.extend_from_slice(&70_000u64.to_be_bytes());
        wire.extend_from_slice(&big);
        let (data, events) = decode_all(&wire, 1000).unwrap();
        assert!(events.is_empty());
        assert_eq!(data.len(), 5 + 126 + 70_000);
        assert_eq!(&data[..5], b"hello");
        assert!(data[5..131].iter().all(|&b| b == b'm'));
    }

    #[test]
    fn fragments_reassemble_around_control_frames() {
        // "Hel" (no FIN), a ping in between, "lo" (continuation, FIN).
        let wire = [
            0x02, 3, b'H', b'e', b'l', 0x89, 2, b'h', b'i', 0x80, 2, b'l', b'o',
        ];
        let (data, events) = decode_all(&wire, 64).unwrap();
        assert_eq!(data, b"Hello");
        assert_eq!(events, vec![Decoded::Ping(b"hi".to_vec())]);
    }

    #[test]
    fn byte_at_a_time_input_decodes_the_same() {
        let wire = [0x82, 3, b'a', b'b', b'c', 0x8A, 0, 0x88, 2, 0x03, 0xE8];
        let mut d = Decoder::new();
        let mut input = BytesMut::new();
        let mut out = [0u8; 2];
        let (mut data, mut events) = (Vec::new(), Vec::new());
        for &b in &wire {
            input.extend_from_slice(&[b]);
            loop {
                match d.decode(&mut input, &mut out).unwrap() {
                    Decoded::NeedMore => break,
                    Decoded::Data(n) => data.extend_from_slice(&out[..n]),
                    e => events.push(e),
                }
            }
        }
        assert_eq!(data, b"abc");
        assert_eq!(
            events,
            vec![Decoded::Pong, Decoded::Close(Some(1000), String::new())]
        );
    }

    #[test]
    fn protocol_violations_are_errors() {
        let cases: &[(&[u8], &str)] = &[
            (&[0xC2, 1, b'x'], "RSV"),                   // compressed (RSV1)
            (&[0x82, 0x81, 1, 2, 3, 4, b'x'], "masked"), // server frames are not masked
            (&[0x80, 1, b'x'], "continuation"),          // continuation out of a message
            (&[0x02, 1, b'x', 0x82, 1, b'y'], "inside"), // new message inside one
            (&[0x09, 0], "fragmented"),                  // ping without FIN
            (&[0x89, 126, 0, 126], "control frame"),     // ping over 125 bytes
            (&[0x83, 0], "opcode"),                      // reserved opcode
            (&[0x88, 1, 3], "one byte"),                 // close of one byte
        ];
        for (wire, why) in cases {
            let e = decode_all(wire, 16).unwrap_err();
            assert_eq!(e.kind(), ErrorKind::Websocket);
            assert!(e.detail().contains(why), "{why}: {}", e.detail());
        }
    }

    #[test]
    fn frames_over_64_mib_are_refused_from_the_header() {
        let mut wire = vec![0x82, 127];
        wire.extend_from_slice(&(MAX_FRAME + 1).to_be_bytes());
        let e = decode_all(&wire, 16).unwrap_err();
        assert!(e.detail().contains("exceeds"), "{}", e.detail());
        // The largest allowed length is accepted (its payload awaited).
        let mut wire = vec![0x82, 127];
        wire.extend_from_slice(&MAX_FRAME.to_be_bytes());
        assert_eq!(decode_all(&wire, 16).unwrap().0.len(), 0);
        // A length with the top bit set is refused too.
        let mut wire = vec![0x82, 127];
        wire.extend_from_slice(&u64::MAX.to_be_bytes());
        assert!(decode_all(&wire, 16).is_err());
    }

    #[test]
    fn encoded_frames_are_masked_and_decode_back() {
        let key = [0x37, 0xfa, 0x21, 0x3d];
        let mut out = Vec::new();
        encode_frame(&mut out, OP_BINARY, &[b"Hel", b"lo"], Some(key));
        // RFC 6455 section 5.7's masked "Hello", as binary.
        assert_eq!(
            out,
            [0x82, 0x85, 0x37, 0xfa, 0x21, 0x3d, 0x7f, 0x9f, 0x4d, 0x51, 0x58]
        );
        for len in [0usize, 125, 126, 65_535, 65_536] {
            let payload: Vec<u8> = (0..len).map(|i| i as u8).collect();
            let mut frame = Vec::new();
            encode_frame(&mut frame, OP_BINARY, &[&payload], Some(key));
            // Unmask as the server does, then decode as an unmasked frame.
            let header = frame.len() - len - 4;
            let mut plain = frame[..header].to_vec();
            plain[1] &= 0x7F;
            let mut body = frame[header + 4..].to_vec();
            apply_mask(&mut body, key);
            plain.extend_from_slice(&body);
            let (data, _) = decode_all(&plain, 4096).unwrap();
            assert_eq!(data, payload, "length {len}");
        }
    }

    #[test]
    fn upgrade_response_checks() {
        let key = "dGhlIHNhbXBsZSBub25jZQ==";
        let ok = "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=";
        assert!(!check_response(ok, key, "ws://h").unwrap().no_masking);
        let nomask = format!("{ok}\r\nNats-No-Masking: true");
        assert!(check_response(&nomask, key, "ws://h").unwrap().no_masking);
        let cases = [
            ("HTTP/1.1 404 Not Found", "404"),
            ("INFO {}", "not an HTTP"),
            (
                "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: x",
                "Accept",
            ),
            (
                "HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=",
                "Upgrade",
            ),
        ];
        for (head, why) in cases {
            let e = check_response(head, key, "ws://h").err().unwrap();
            assert_eq!(e.kind(), ErrorKind::Websocket);
            assert!(e.detail().contains(why), "{why}: {}", e.detail());
        }
        let deflate = format!("{ok}\r\nSec-WebSocket-Extensions: permessage-deflate");
        assert!(check_response(&deflate, key, "ws://h").is_err());
    }

    #[test]
    fn extra_headers_are_checked() {
        assert!(check_header("X-Api-Key", "a b\tc").is_ok());
        for (name, value) in [
            ("", "v"),
            ("X Bad", "v"),
            ("X-A", "v\r\nInjected: 1"),
            ("Host", "elsewhere"),
            ("Sec-WebSocket-Key", "k"),
        ] {
            assert_eq!(
                check_header(name, value).unwrap_err().kind(),
                ErrorKind::Config,
                "{name:?}: {value:?}"
            );
        }
    }

    #[test]
    fn upgrade_request_names_host_path_and_key() {
        let addr = ServerAddr::parse("ws://example.com/nats?x=1").unwrap();
        let req = upgrade_request(&addr, "k", &[("X-A".into(), "b".into())]);
        assert!(req.starts_with("GET /nats?x=1 HTTP/1.1\r\nHost: example.com\r\n"));
        assert!(req.contains("Sec-WebSocket-Key: k\r\n"));
        assert!(req.contains("X-A: b\r\n"));
        assert!(req.ends_with("\r\n\r\n"));
        let addr = ServerAddr::parse("wss://[::1]:8443").unwrap();
        let req = upgrade_request(&addr, "k", &[]);
        assert!(req.starts_with("GET / HTTP/1.1\r\nHost: [::1]:8443\r\n"));
    }
}
