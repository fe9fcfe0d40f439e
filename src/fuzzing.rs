//! Entry points for fuzz targets (`fuzz/`): the protocol parser, the
//! header-block parser, and the JetStream JSON config, duration, timestamp
//! and API-reply parsers, reachable without a connection. Not a stable API.

use bytes::BytesMut;

use crate::headers::Headers;
use crate::proto::{Parser, ServerOp};

/// A parsed frame, reduced to what a round-trip check needs.
#[derive(Debug, PartialEq, Eq)]
pub enum Frame {
    Info(String),
    Msg {
        subject: String,
        reply: Option<String>,
        sid: u64,
        headers: Option<Vec<(String, String)>>,
        status: Option<u16>,
        payload: Vec<u8>,
    },
    Ping,
    Pong,
    Ok,
    Err(String),
}

/// Feeds `input` to a parser in chunks ending at each offset of `splits`
/// (as a socket would deliver them), returning every complete frame and the
/// first error. Bytes of an incomplete last frame are left unparsed.
pub fn parse_chunks(
    input: &[u8],
    splits: &[usize],
    max_control_line: usize,
) -> (Vec<Frame>, Option<crate::Error>) {
    let mut parser = Parser::new(max_control_line);
    let mut buf = BytesMut::new();
    let mut frames = Vec::new();
    let mut cuts: Vec<usize> = splits.iter().map(|s| s % (input.len() + 1)).collect();
    cuts.push(input.len());
    cuts.sort_unstable();
    let mut at = 0;
    for cut in cuts {
        if cut < at {
            continue;
        }
        buf.extend_from_slice(&input[at..cut]);
        at = cut;
        loop {
            match parser.parse(&mut buf) {
                Ok(Some(op)) => frames.push(frame(op)),
                Ok(None) => break,
                Err(e) => return (frames, Some(e)),
            }
        }
    }
    (frames, None)
}

fn frame(op: ServerOp) -> Frame {
    match op {
        ServerOp::Info(j) => Frame::Info(j),
        ServerOp::Ping => Frame::Ping,
        ServerOp::Pong => Frame::Pong,
        ServerOp::Ok => Frame::Ok,
        ServerOp::Err(t) => Frame::Err(t),
        ServerOp::Msg(m) => Frame::Msg {
            subject: m.subject().to_string(),
            reply: m.reply().map(str::to_string),
            sid: m.sid(),
            headers: m.headers().map(|h| {
                h.iter()
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .collect()
            }),
            status: m.status(),
            payload: m.payload().to_vec(),
        },
    }
}

/// Encodes a MSG/HMSG frame as a server would (for round-trip checks).
pub fn encode_msg(
    subject: &str,
    reply: Option<&str>,
    sid: u64,
    headers: Option<&Headers>,
    payload: &[u8],
) -> Vec<u8> {
    let mut out = Vec::new();
    let mut hdr = Vec::new();
    if let Some(h) = headers {
        h.encode(&mut hdr);
    }
    let reply = reply.map(|r| format!(" {r}")).unwrap_or_default();
    if headers.is_some() {
        out.extend_from_slice(
            format!(
                "HMSG {subject} {sid}{reply} {} {}\r\n",
                hdr.len(),
                hdr.len() + payload.len()
            )
            .as_bytes(),
        );
        out.extend_from_slice(&hdr);
    } else {
        out.extend_from_slice(
            format!("MSG {subject} {sid}{reply} {}\r\n", payload.len()).as_bytes(),
        );
    }
    out.extend_from_slice(payload);
    out.extend_from_slice(b"\r\n");
    out
}

/// Parses a header block as received (never fails; bad lines are flagged).
pub fn parse_headers(block: &[u8]) -> Headers {
    Headers::parse(block)
}

/// Encodes headers as they go on the wire.
pub fn encode_headers(h: &Headers) -> Vec<u8> {
    let mut out = Vec::new();
    h.encode(&mut out);
    out
}

/// Parses a server INFO JSON document (fuzz target `info_and_urls`).
pub fn parse_info(json: &str) -> Result<crate::ServerInfo, crate::Error> {
    crate::client::connector::parse_info(json)
}

/// Parses a server URL as the options do (fuzz target `info_and_urls`).
pub fn parse_url(url: &str) -> Result<crate::options::ServerAddr, crate::Error> {
    crate::options::ServerAddr::parse(url)
}

/// Which structure `normalize_config` checks `json` as.
#[derive(Debug, Clone, Copy)]
pub enum ConfigKind {
    Stream,
    KeyValue,
    Purge,
}

/// A JSON configuration as the C ABI takes it, checked and normalised the
/// way `natsio_js_stream_create` / `natsio_js_kv_create` /
/// `natsio_js_stream_purge` do before anything is sent; returns the JSON
/// that would go on the wire.
pub fn normalize_config(kind: ConfigKind, json: &str) -> crate::Result<String> {
    use crate::jetstream::config::{normalize, PURGE_REQUEST, STREAM_CONFIG};
    let map = match kind {
        ConfigKind::Stream => normalize("StreamConfig", json, STREAM_CONFIG)?,
        ConfigKind::KeyValue => crate::kv::stream_config_for(json)?.1,
        ConfigKind::Purge => normalize("purge options", json, PURGE_REQUEST)?,
    };
    Ok(serde_json::Value::Object(map).to_string())
}

/// A Go-style duration string in nanoseconds.
pub fn parse_duration(text: &str) -> crate::Result<i64> {
    crate::jetstream::duration::parse_duration(text)
}

/// An RFC 3339 timestamp (as in Direct Get headers) in Unix nanoseconds.
pub fn parse_timestamp(text: &str) -> Option<i64> {
    crate::jetstream::time::parse_rfc3339_ns(text)
}

/// A JetStream API reply read as a publish ack: the ack's stream and
/// sequence, or the error the reply carries.
pub fn parse_pub_ack_reply(payload: &[u8]) -> crate::Result<(String, u64)> {
    crate::jetstream::parse_pub_ack_json(payload).map(|a| (a.stream, a.seq))
}

/// What decoding a server's WebSocket byte stream gave (fuzz target
/// `ws_frames`): the data payload reassembled, the control frames seen,
/// and the error that stopped it, if any.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct WsDecoded {
    pub data: Vec<u8>,
    pub controls: Vec<String>,
    pub error: Option<String>,
}

/// Decodes `wire` as the client reads a WebSocket stream, fed in chunks
/// of `chunk` bytes into an output buffer of `out_cap` bytes (both at
/// least 1), until the input runs out or a protocol error.
pub fn decode_ws_stream(wire: &[u8], chunk: usize, out_cap: usize) -> WsDecoded {
    use crate::ws::{Decoded, Decoder};
    let mut d = Decoder::new();
    let mut input = bytes::BytesMut::new();
    let mut out = vec![0u8; out_cap.max(1)];
    let mut result = WsDecoded::default();
    for piece in wire.chunks(chunk.max(1)) {
        input.extend_from_slice(piece);
        loop {
            match d.decode(&mut input, &mut out) {
                Ok(Decoded::NeedMore) => break,
                Ok(Decoded::Data(n)) => result.data.extend_from_slice(&out[..n]),
                Ok(other) => result.controls.push(format!("{other:?}")),
                Err(e) => {
                    result.error = Some(e.detail().to_string());
                    return result;
                }
            }
        }
    }
    result
}
