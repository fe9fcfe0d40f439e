//! Arbitrary header blocks: parsing never panics, and what was parsed
//! encodes to a block that parses back to the same entries, cleanly.
#![no_main]

use libfuzzer_sys::fuzz_target;
use natsio::fuzzing::{encode_headers, parse_headers};

fuzz_target!(|block: &[u8]| {
    let parsed = parse_headers(block);
    let entries: Vec<(String, String)> = parsed
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    assert_eq!(entries.len(), parsed.len());

    let encoded = encode_headers(&parsed);
    let reparsed = parse_headers(&encoded);
    let reentries: Vec<(String, String)> = reparsed
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    assert_eq!(
        entries,
        reentries,
        "encoded as {:?}",
        String::from_utf8_lossy(&encoded)
    );
    assert!(
        !reparsed.is_malformed(),
        "own encoding parsed as malformed: {:?}",
        String::from_utf8_lossy(&encoded)
    );
    // The status line is not part of an outgoing block (clients never send
    // one), so only the entries are compared.
    for (name, _) in &entries {
        assert_eq!(
            parsed.get_all(name).collect::<Vec<_>>(),
            reparsed.get_all(name).collect::<Vec<_>>()
        );
    }
});
