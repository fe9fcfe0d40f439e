//! JetStream configuration, duration, timestamp and API-reply parsers:
//! never panic; a normalised config normalises to itself again (durations
//! become non-negative integer nanoseconds, so a second pass changes
//! nothing; a KeyValueConfig's output is a valid StreamConfig); a parsed duration re-parses from its nanoseconds.
//!
//! Input: byte 0 picks the parser (mod 6), the rest is the text.
#![no_main]

use libfuzzer_sys::fuzz_target;
use natsio::fuzzing::{
    normalize_config, parse_duration, parse_pub_ack_reply, parse_timestamp, ConfigKind,
};

const DURATION_FIELDS: &[&str] = &[
    "max_age",
    "duplicate_window",
    "subject_delete_marker_ttl",
];

fn check_config(kind: ConfigKind, text: &str) {
    let Ok(once) = normalize_config(kind, text) else {
        return;
    };
    // A KeyValueConfig becomes the StreamConfig of its backing stream.
    let output_kind = match kind {
        ConfigKind::KeyValue => ConfigKind::Stream,
        k => k,
    };
    let again = normalize_config(output_kind, &once).unwrap_or_else(|e| {
        panic!("normalised config rejected on a second pass: {e:?}\n{once}")
    });
    let a: serde_json::Value = serde_json::from_str(&once).unwrap();
    let b: serde_json::Value = serde_json::from_str(&again).unwrap();
    assert_eq!(a, b, "normalising is not idempotent");
    if matches!(output_kind, ConfigKind::Purge) {
        return;
    }
    for field in DURATION_FIELDS {
        if let Some(v) = a.get(*field) {
            assert!(v.as_i64().is_some_and(|ns| ns >= 0), "{field} = {v}");
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((&which, rest)) = data.split_first() else {
        return;
    };
    let text = String::from_utf8_lossy(rest);
    match which % 6 {
        0 => check_config(ConfigKind::Stream, &text),
        1 => check_config(ConfigKind::KeyValue, &text),
        2 => check_config(ConfigKind::Purge, &text),
        3 => {
            if let Ok(ns) = parse_duration(&text) {
                let back = parse_duration(&format!("{ns}ns")).expect("nanoseconds re-parse");
                assert_eq!(back, ns);
            }
        }
        4 => {
            let _ = parse_timestamp(&text);
        }
        _ => {
            let _ = parse_pub_ack_reply(rest);
        }
    }
});
