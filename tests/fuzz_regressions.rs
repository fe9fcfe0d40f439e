//! Inputs found by the fuzz targets in fuzz/ (scripts/fuzz.sh), kept as
//! ordinary tests so they run on every `cargo test`, and a check that the
//! committed seed corpora still mean what they were written to mean.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::path::{Path, PathBuf};

use natsio::fuzzing::{encode_headers, parse_chunks, parse_headers, Frame};

// ---------------------------------------------------------------------------
// Per-thread allocation accounting, so a test can measure what one parse
// holds at its peak while other tests run on other threads.

struct CountingAllocator;

thread_local! {
    static LIVE: Cell<isize> = const { Cell::new(0) };
    static PEAK: Cell<isize> = const { Cell::new(0) };
}

fn account(delta: isize) {
    let _ = LIVE.try_with(|live| {
        let now = live.get() + delta;
        live.set(now);
        let _ = PEAK.try_with(|peak| peak.set(peak.get().max(now)));
    });
}

unsafe impl GlobalAlloc for CountingAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = System.alloc(layout);
        if !p.is_null() {
            account(layout.size() as isize);
        }
        p
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        System.dealloc(ptr, layout);
        account(-(layout.size() as isize));
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let p = System.realloc(ptr, layout, new_size);
        if !p.is_null() {
            account(new_size as isize - layout.size() as isize);
        }
        p
    }
}

#[global_allocator]
static ALLOCATOR: CountingAllocator = CountingAllocator;

/// Runs `f` and returns the most memory this thread held at once beyond
/// what it held when `f` started.
fn peak_extra_bytes<T>(f: impl FnOnce() -> T) -> (T, usize) {
    let base = LIVE.with(Cell::get);
    PEAK.with(|p| p.set(base));
    let out = f();
    let peak = PEAK.with(Cell::get);
    (out, (peak - base).max(0) as usize)
}

// ---------------------------------------------------------------------------
// The fuzz input layout of fuzz/src/lib.rs: byte 0 = number of cut points
// (mod 9), two little-endian bytes per cut point, then the stream.

fn split_input(data: &[u8]) -> (Vec<usize>, &[u8]) {
    let Some((&count, rest)) = data.split_first() else {
        return (Vec::new(), data);
    };
    let count = usize::from(count % 9).min(rest.len() / 2);
    let (cut_bytes, stream) = rest.split_at(count * 2);
    let cuts = cut_bytes
        .chunks_exact(2)
        .map(|c| usize::from(u16::from_le_bytes([c[0], c[1]])))
        .collect();
    (cuts, stream)
}

fn corpus(target: &str) -> Vec<(String, Vec<u8>)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fuzz/corpus")
        .join(target);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    files
        .into_iter()
        .map(|p| {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            (name, std::fs::read(&p).unwrap())
        })
        .collect()
}

// ---------------------------------------------------------------------------
// Seed corpora

#[test]
fn every_parser_seed_is_a_complete_well_formed_stream_whatever_the_reads() {
    let mut kinds = std::collections::BTreeSet::new();
    for (name, data) in corpus("parser") {
        if name.starts_with("regression_") {
            continue; // fuzzer finds, checked by the tests below
        }
        let (cuts, stream) = split_input(&data);
        let (frames, err) = parse_chunks(stream, &cuts, 4096);
        assert!(err.is_none(), "seed {name}: {err:?}");
        assert!(!frames.is_empty(), "seed {name} holds no frame");
        for frame in &frames {
            kinds.insert(match frame {
                Frame::Info(_) => "INFO",
                Frame::Msg { headers: None, .. } => "MSG",
                Frame::Msg {
                    status: Some(503), ..
                } => "HMSG 503",
                Frame::Msg { .. } => "HMSG",
                Frame::Ping => "PING",
                Frame::Pong => "PONG",
                Frame::Ok => "+OK",
                Frame::Err(_) => "-ERR",
            });
        }
        // Cut into two reads at every offset: the same frames.
        for cut in 0..=stream.len() {
            let (split_frames, split_err) = parse_chunks(stream, &[cut], 4096);
            assert!(
                split_err.is_none(),
                "seed {name} cut at {cut}: {split_err:?}"
            );
            assert_eq!(split_frames, frames, "seed {name} cut at {cut}");
        }
    }
    assert_eq!(
        kinds.into_iter().collect::<Vec<_>>(),
        ["+OK", "-ERR", "HMSG", "HMSG 503", "INFO", "MSG", "PING", "PONG"],
        "the parser corpus must seed every frame kind"
    );
}

#[test]
fn header_seeds_re_encode_to_the_same_entries() {
    for (name, block) in corpus("headers") {
        let parsed = parse_headers(&block);
        let reparsed = parse_headers(&encode_headers(&parsed));
        assert!(
            parsed.iter().eq(reparsed.iter()),
            "seed {name}: {parsed:?} vs {reparsed:?}"
        );
        assert!(!reparsed.is_malformed(), "seed {name}");
    }
    let status = parse_headers(
        &std::fs::read(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/corpus/headers/status_503"),
        )
        .unwrap(),
    );
    assert_eq!(status.status(), Some(503));
}

#[test]
fn ws_frame_seeds_decode_the_same_in_any_pieces() {
    let seeds = corpus("ws_frames");
    assert!(seeds.len() >= 8, "the ws_frames corpus lost seeds");
    let mut errors = 0;
    for (name, input) in seeds {
        let wire = &input[1..];
        let whole = natsio::fuzzing::decode_ws_stream(wire, wire.len(), 64 * 1024);
        for (chunk, out_cap) in [(1, 1), (3, 7), (16, 16)] {
            let split = natsio::fuzzing::decode_ws_stream(wire, chunk, out_cap);
            assert_eq!(
                whole, split,
                "seed {name}, chunk {chunk}, out_cap {out_cap}"
            );
        }
        errors += usize::from(whole.error.is_some());
    }
    // rsv_set is the one seed the decoder refuses.
    assert_eq!(errors, 1);
}

// ---------------------------------------------------------------------------
// Regressions found by fuzzing

/// Found by the `parser` target (libFuzzer: out-of-memory, malloc of 4 GB):
/// a MSG/HMSG control line announcing a size makes the parser reserve that
/// many bytes before any of them arrived. A server (or anything in between)
/// announcing a huge size made the client allocate it, or abort the process
/// when the allocation failed. The parser may reserve a bounded read-ahead
/// (1 MiB) for a frame announced larger than what arrived, never the
/// announced size itself.
#[test]
fn announced_message_size_is_not_reserved_before_the_bytes_arrive() {
    // The fuzzer's input (fuzz/corpus/parser/regression_announced_size_4g,
    // replayed by every fuzz run) announces 4 GB. A size no server allows
    // (over 64 MiB) is a parser error; a plausible one (60 MiB) waits for
    // its bytes without allocating them up front.
    let announced_60m = b"MSG big 1 62914560\r\nonly a few bytes follow";
    let announced_60m_headers = b"HMSG big 1 reply 16 62914560\r\nNATS/1.0 503\r\n\r\n";
    for stream in [&announced_60m[..], &announced_60m_headers[..]] {
        let ((frames, err), held) = peak_extra_bytes(|| parse_chunks(stream, &[], 4096));
        assert!(frames.is_empty() && err.is_none(), "{frames:?} {err:?}");
        assert!(
            held < 3 << 20,
            "parsing {} bytes ({:?}) held {} bytes",
            stream.len(),
            String::from_utf8_lossy(&stream[..stream.len().min(40)]),
            held
        );
    }
    let announced_256m = b"MSG big 1 268435456\r\nonly a few bytes follow";
    let (frames, err) = parse_chunks(announced_256m, &[], 4096);
    assert!(frames.is_empty());
    assert_eq!(err.map(|e| e.kind()), Some(natsio::ErrorKind::Parser));
}

/// An announced size near u64::MAX (not overflowing the frame length
/// computation) must be an error or wait for bytes, never a panic.
#[test]
fn announced_size_near_u64_max_does_not_panic() {
    let stream = b"MSG a 1 18446744073709551000\r\n";
    let outcome = std::panic::catch_unwind(|| parse_chunks(stream, &[], 4096));
    assert!(
        outcome.is_ok(),
        "the parser panicked on {:?}",
        String::from_utf8_lossy(stream)
    );
}

/// js_config found that unknown config fields holding large floats were
/// rewritten (serde_json's default float parsing is not exact); configs
/// must reach the server as written.
#[test]
fn unknown_config_fields_round_trip_exactly() {
    use natsio::fuzzing::{normalize_config, ConfigKind};
    let input = r#"{"name":"S","x_future":3.3333333333333326e+52,"y":0.1}"#;
    let out = normalize_config(ConfigKind::Stream, input).unwrap();
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["x_future"].as_f64(), Some(3.3333333333333326e52));
    assert_eq!(normalize_config(ConfigKind::Stream, &out).unwrap(), out);
    let kv = normalize_config(
        ConfigKind::KeyValue,
        r#"{"bucket":"B","z":3.3333333333333326e+52}"#,
    )
    .unwrap();
    assert_eq!(normalize_config(ConfigKind::Stream, &kv).unwrap(), kv);
}

/// js_config found that a KeyValueConfig's stream fields that this library
/// does not model as KV options ("retention") reached the stream config
/// unchecked: a bad value passed the KV check and failed the stream's.
#[test]
fn kv_config_stream_fields_are_checked_as_the_stream_checks_them() {
    use natsio::fuzzing::{normalize_config, ConfigKind};
    let err = normalize_config(
        ConfigKind::KeyValue,
        r#"{"bucket":"CFS","retention":"limi|s","max_age":"old"}"#,
    )
    .unwrap_err();
    assert!(
        err.to_string().contains("KeyValueConfig.retention"),
        "{err}"
    );
    let kv = normalize_config(
        ConfigKind::KeyValue,
        r#"{"bucket":"CFS","retention":"limits","metadata":{"a":"b"}}"#,
    )
    .unwrap();
    assert_eq!(normalize_config(ConfigKind::Stream, &kv).unwrap(), kv);
    // The input as found (its first byte picked the KV parser).
    let found = String::from_utf8_lossy(b"{\x22bucket\x22:\x22CFS\x22,\x22subjects\x22:[\x22o\xffders.>\x22],\x22maxga_e\x22:\x221h30m\x22,\x22duplicate_window\x22:120000000000,\x22storage\x22:\x22file\x22,\x22retention\x22:\x22limi|s\x22,\x22max_age\x22:\x22old\x22,\x22metadata\x22:{\x22a\x22:\x22b\x22},\x22sou\xe4\xe4\xe4\xe4\xe4\xe4\xe4\xe4subj\x5c\x5c\x5c\x5c\x5c\x5c\x5c\x5c\x5c\x5c\x5c\x5c\x5c\x5c\x5c\x5c\x5c\x5ce\x22:1024}");
    if let Ok(once) = normalize_config(ConfigKind::KeyValue, &found) {
        normalize_config(ConfigKind::Stream, &once).unwrap();
    }
}
