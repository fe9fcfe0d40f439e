//! Well-formed MSG/HMSG frames, encoded as a server would and delivered in
//! arbitrary chunks, parse back to exactly what was encoded.
#![no_main]

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use natsio::fuzzing::{encode_msg, parse_chunks, Frame};
use natsio::headers::Headers;

#[derive(Debug, Arbitrary)]
struct MsgSpec {
    subject: String,
    reply: Option<String>,
    sid: u64,
    headers: Option<Vec<(String, String)>>,
    payload: Vec<u8>,
}

#[derive(Debug, Arbitrary)]
struct Input {
    msgs: Vec<MsgSpec>,
    cuts: Vec<u16>,
}

/// A subject or reply token as a server can send it: non-empty text without
/// whitespace or control characters (which would end the token or line).
fn valid_token(s: &str) -> bool {
    !s.is_empty() && !s.chars().any(|c| c.is_whitespace() || c.is_control())
}

/// Header values are trimmed when received (as every NATS client does), so
/// only values without surrounding whitespace survive a round trip as-is.
fn survives_trim(value: &str) -> bool {
    value.trim_matches(|c: char| c.is_ascii_whitespace()) == value
}

fuzz_target!(|input: Input| {
    let mut stream = Vec::new();
    let mut expected = Vec::new();
    for spec in input.msgs.iter().take(8) {
        if !valid_token(&spec.subject) {
            continue;
        }
        let reply = spec.reply.as_deref().filter(|r| valid_token(r));
        let headers = spec.headers.as_ref().map(|pairs| {
            let mut h = Headers::new();
            for (name, value) in pairs {
                // Names and values the encoder refuses never reach the wire.
                if survives_trim(value) {
                    let _ = h.add(name, value);
                }
            }
            h
        });
        stream.extend_from_slice(&encode_msg(
            &spec.subject,
            reply,
            spec.sid,
            headers.as_ref(),
            &spec.payload,
        ));
        expected.push(Frame::Msg {
            subject: spec.subject.clone(),
            reply: reply.map(str::to_string),
            sid: spec.sid,
            headers: headers.map(|h| {
                h.iter()
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .collect()
            }),
            status: None,
            payload: spec.payload.clone(),
        });
    }
    let cuts: Vec<usize> = input.cuts.iter().map(|&c| usize::from(c)).collect();
    // Control lines here may be long (arbitrary subjects); the limit is not
    // what this target checks.
    let (frames, err) = parse_chunks(&stream, &cuts, 1 << 20);
    assert!(err.is_none(), "well-formed stream rejected: {err:?}");
    assert_eq!(frames, expected, "cut at {cuts:?}");
});
