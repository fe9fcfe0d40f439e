//! The JSON and text the client parses besides frames: the server's INFO
//! document and server URLs (configured or announced in connect_urls).
//! Neither may panic; a parsed URL keeps a non-empty host and a port.
#![no_main]

use libfuzzer_sys::fuzz_target;
use natsio::fuzzing::{parse_info, parse_url};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(info) = parse_info(text) {
        for url in &info.connect_urls {
            let _ = parse_url(url);
        }
    }
    if let Ok(addr) = parse_url(text) {
        assert!(!addr.host.is_empty(), "{text:?} parsed with an empty host");
    }
});
