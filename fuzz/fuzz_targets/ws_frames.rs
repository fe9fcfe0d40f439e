//! Arbitrary bytes from a WebSocket server: decoding never panics, never
//! yields more payload than came in, and gives the same result however the
//! bytes are split into reads and however small the reader's buffer is.
#![no_main]

use libfuzzer_sys::fuzz_target;
use natsio::fuzzing::decode_ws_stream;

fuzz_target!(|input: &[u8]| {
    let Some((&shape, wire)) = input.split_first() else {
        return;
    };
    let whole = decode_ws_stream(wire, wire.len().max(1), 64 * 1024);
    assert!(whole.data.len() <= wire.len());
    let chunk = usize::from(shape & 0x0F) + 1;
    let out_cap = usize::from(shape >> 4) + 1;
    let split = decode_ws_stream(wire, chunk, out_cap);
    assert_eq!(whole, split, "chunk {chunk}, out_cap {out_cap}");
});
