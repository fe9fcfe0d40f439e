//! Arbitrary bytes from a server, delivered in arbitrary chunks.
//!
//! Properties: the parser never panics; it never holds much more memory than
//! it was fed plus a bounded read-ahead (a size announced in a frame header
//! is not a reason to allocate it before the bytes arrive); and where the stream is cut into
//! reads changes nothing: the same frames and the same error come out as
//! when the whole stream arrives at once.
#![no_main]

use libfuzzer_sys::fuzz_target;
use natsio::fuzzing::parse_chunks;
use natsio_fuzz::{peak_extra_bytes, split_input};

/// Small enough that long control lines are exercised, as a user may set it.
const MAX_CONTROL_LINE: usize = 256;

/// Parsing copies each frame into an owned `Frame` (strings, payload) next
/// to the read buffer, and vectors grow by doubling: a few times the input.
/// On top of that the parser may reserve room for an announced frame ahead
/// of its bytes, but only a bounded amount (the core caps it at 1 MiB): an
/// announced size alone must never make it allocate more than that.
const READ_AHEAD_ALLOWANCE: usize = 3 << 20;

fn memory_bound(fed: usize) -> usize {
    64 * fed + READ_AHEAD_ALLOWANCE
}

fuzz_target!(|data: &[u8]| {
    let (cuts, stream) = split_input(data);

    let ((whole_frames, whole_err), whole_peak) =
        peak_extra_bytes(|| parse_chunks(stream, &[], MAX_CONTROL_LINE));
    let ((cut_frames, cut_err), cut_peak) =
        peak_extra_bytes(|| parse_chunks(stream, &cuts, MAX_CONTROL_LINE));

    let bound = memory_bound(stream.len());
    assert!(
        whole_peak <= bound && cut_peak <= bound,
        "parsing {} bytes held {} bytes at once (in one read) / {} (in pieces at {:?}); bound {}",
        stream.len(),
        whole_peak,
        cut_peak,
        cuts,
        bound
    );
    assert_eq!(
        whole_frames, cut_frames,
        "frames depend on read boundaries {cuts:?}"
    );
    assert_eq!(
        whole_err.as_ref().map(|e| e.kind()),
        cut_err.as_ref().map(|e| e.kind()),
        "error depends on read boundaries {cuts:?}: {whole_err:?} vs {cut_err:?}"
    );
});
