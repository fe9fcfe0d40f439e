//! A publish queue in shared memory, for a language binding whose every
//! call into C is dear (Go's cgo crossing costs about as much as the whole
//! publish of the official Go client). The binding writes plain publishes
//! (subject, payload) into a ring of bytes the library owns, with no call;
//! the library moves them into the write buffer, in order, whenever it
//! takes the write lock (`WriteSide::lock_write`): before any other frame
//! is added and before the writer takes the buffer. So a publish through
//! the ring keeps its place before every later call of the binding's.
//!
//! Protocol (natsio.h, `natsio_pub_ring`), one producer at a time:
//! - positions count bytes since the ring was made (they never wrap); a
//!   record starts at `position % capacity`, 8-byte aligned, and never
//!   straddles the end: the producer writes a skip marker there instead;
//! - a record: u32 subject length, u32 payload length (native byte
//!   order), the subject, the payload, zeros up to a multiple of 8; a
//!   subject length of `SKIP`: the rest of the lap is unused;
//! - the producer writes in [tail, head + capacity), then stores tail;
//!   if head then equals the tail before its record, the library may have
//!   found the ring empty and gone idle: the producer kicks the writer;
//! - the gate is the largest payload the ring takes now; 0 while the
//!   connection is closed, draining or reconnecting: the producer publishes
//!   through the call, whose errors and buffering apply.
//!
//! The library checks every record (lengths, subject, payload limit): a
//! broken producer loses its records, never the connection's framing.

use std::cell::UnsafeCell;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::cache_line::CacheLine;
use crate::error::{Error, ErrorKind};
use crate::proto;
use crate::subject;

/// The ring's size: 64 KiB, enough to cover the writer's wake-up at the
/// rate of a tight publish loop.
pub(crate) const CAPACITY: usize = 64 * 1024;
/// A record's subject length telling that the rest of the lap is unused.
pub(crate) const SKIP: u32 = u32::MAX;
const HEADER: usize = 8;

pub(crate) struct PubRing {
    gate: CacheLine<AtomicU64>,
    /// Written by the library (the consumer), under the write lock.
    head: CacheLine<AtomicU64>,
    /// Written by the producer.
    tail: CacheLine<AtomicU64>,
    data: Box<[UnsafeCell<u8>]>,
}

// The producer and the consumer touch disjoint ranges of `data`, ordered by
// `tail` and `head` (release/acquire through SeqCst).
unsafe impl Sync for PubRing {}
unsafe impl Send for PubRing {}

/// What a drain moved into the write buffer.
#[derive(Default, Debug)]
pub(crate) struct Drained {
    pub(crate) msgs: u64,
    pub(crate) payload_bytes: u64,
    /// The first record refused (a broken producer, or a payload over a
    /// limit lowered since the producer read the gate).
    pub(crate) refused: Option<Error>,
}

impl PubRing {
    pub(crate) fn new() -> PubRing {
        PubRing {
            gate: CacheLine(AtomicU64::new(0)),
            head: CacheLine(AtomicU64::new(0)),
            tail: CacheLine(AtomicU64::new(0)),
            data: (0..CAPACITY).map(|_| UnsafeCell::new(0)).collect(),
        }
    }

    pub(crate) fn gate_ptr(&self) -> *const u64 {
        self.gate.as_ptr()
    }

    pub(crate) fn head_ptr(&self) -> *const u64 {
        self.head.as_ptr()
    }

    pub(crate) fn tail_ptr(&self) -> *mut u64 {
        self.tail.as_ptr()
    }

    pub(crate) fn data_ptr(&self) -> *mut u8 {
        UnsafeCell::raw_get(self.data.as_ptr())
    }

    pub(crate) fn set_gate(&self, max_payload: u64) {
        self.gate.store(max_payload, Ordering::SeqCst);
    }

    /// Appends the queued publishes to `out` as PUB frames. Called with
    /// the write lock held: one consumer at a time.
    pub(crate) fn drain(&self, out: &mut Vec<u8>, max_payload: usize) -> Drained {
        let mut d = Drained::default();
        let mut head = self.head.load(Ordering::Relaxed);
        // The last subject checked in this drain: a run of publishes to one
        // subject is checked once.
        let mut checked: Option<&[u8]> = None;
        loop {
            // Stored head, then tail read again: a producer storing its tail
            // after this read sees the head and kicks the writer.
            let tail = self.tail.load(Ordering::SeqCst);
            if tail == head {
                return d;
            }
            if tail < head || tail - head > CAPACITY as u64 {
                d.refuse(format!(
                    "publish ring positions out of order (head {head}, tail {tail})"
                ));
                head = tail;
            }
            while head < tail {
                match self.record_at(head, tail) {
                    Ok(None) => head += (CAPACITY - (head as usize % CAPACITY)) as u64,
                    Ok(Some((subject, payload, len))) => {
                        if checked != Some(subject) {
                            match check_subject(subject) {
                                Ok(()) => checked = Some(subject),
                                Err(e) => d.refuse(e),
                            }
                        }
                        if checked == Some(subject) {
                            move_record(subject, payload, max_payload, out, &mut d);
                        }
                        head += len as u64;
                    }
                    Err(e) => {
                        d.refuse(e);
                        head = tail;
                    }
                }
            }
            self.head.store(head, Ordering::SeqCst);
        }
    }

    /// The record at `pos` (subject, payload, padded length), or `None`
    /// for a skip marker; an error when it breaks the layout.
    #[allow(clippy::type_complexity)]
    fn record_at(&self, pos: u64, tail: u64) -> Result<Option<(&[u8], &[u8], usize)>, String> {
        let at = pos as usize % CAPACITY;
        let room = CAPACITY - at;
        if at % HEADER != 0 || tail - pos < HEADER as u64 {
            return Err(format!("publish ring record misplaced at {pos}"));
        }
        // SAFETY: [pos, tail) was published by the producer's tail store
        // (read with SeqCst) and is not written again before head passes it.
        let bytes = |from: usize, len: usize| unsafe {
            std::slice::from_raw_parts(self.data_ptr().add(from), len)
        };
        let word = |from: usize| u32::from_ne_bytes(bytes(from, 4).try_into().unwrap());
        let (subject_len, payload_len) = (word(at), word(at + 4));
        if subject_len == SKIP {
            return Ok(None);
        }
        let len = HEADER + subject_len as usize + payload_len as usize;
        let padded = len.next_multiple_of(HEADER);
        if padded > room || padded as u64 > tail - pos {
            return Err(format!(
                "publish ring record of {len} bytes at {pos} overruns the ring"
            ));
        }
        let subject = bytes(at + HEADER, subject_len as usize);
        let payload = bytes(at + HEADER + subject_len as usize, payload_len as usize);
        Ok(Some((subject, payload, padded)))
    }
}

fn check_subject(subject: &[u8]) -> Result<(), String> {
    match std::str::from_utf8(subject) {
        Ok(s) if !s.contains('\0') => subject::validate_publish(s)
            .map_err(|e| format!("publish ring record refused: {}", e.detail())),
        _ => Err("publish ring record refused: subject not UTF-8 or holding a NUL".into()),
    }
}

/// Appends one checked record as a PUB frame.
fn move_record(
    subject: &[u8],
    payload: &[u8],
    max_payload: usize,
    out: &mut Vec<u8>,
    d: &mut Drained,
) {
    if payload.len() > max_payload {
        return d.refuse(format!(
            "publish ring message of {} bytes exceeds the server's max_payload of {max_payload}",
            payload.len()
        ));
    }
    // SAFETY: checked by check_subject (UTF-8) before.
    let subject = unsafe { std::str::from_utf8_unchecked(subject) };
    proto::write_pub(out, subject, None, None, payload);
    d.msgs += 1;
    d.payload_bytes += payload.len() as u64;
}

impl Drained {
    fn refuse(&mut self, detail: String) {
        if self.refused.is_none() {
            self.refused = Some(Error::new(ErrorKind::InvalidArgument, detail));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A producer as the protocol describes it (the Go binding's, in Rust).
    struct Producer<'a> {
        ring: &'a PubRing,
    }

    impl Producer<'_> {
        fn push(&self, subject: &[u8], payload: &[u8]) -> bool {
            let tail = self.ring.tail.load(Ordering::SeqCst);
            let head = self.ring.head.load(Ordering::SeqCst);
            let len = (HEADER + subject.len() + payload.len()).next_multiple_of(HEADER);
            let at = tail as usize % CAPACITY;
            let mut pos = tail;
            if CAPACITY - at < len {
                pos += (CAPACITY - at) as u64;
            }
            if pos + len as u64 - head > CAPACITY as u64 {
                return false;
            }
            let write = |off: usize, b: &[u8]| unsafe {
                std::ptr::copy_nonoverlapping(b.as_ptr(), self.ring.data_ptr().add(off), b.len())
            };
            if pos != tail {
                write(at, &SKIP.to_ne_bytes());
            }
            let at = pos as usize % CAPACITY;
            write(at, &(subject.len() as u32).to_ne_bytes());
            write(at + 4, &(payload.len() as u32).to_ne_bytes());
            write(at + 8, subject);
            write(at + 8 + subject.len(), payload);
            self.ring.tail.store(pos + len as u64, Ordering::SeqCst);
            true
        }
    }

    #[test]
    fn records_come_out_as_pub_frames_in_order_across_laps() {
        let ring = PubRing::new();
        let p = Producer { ring: &ring };
        let payload = vec![b'x'; 1000];
        let mut out = Vec::new();
        let mut expected = Vec::new();
        let mut total = Drained::default();
        // Several laps, drained every 50 records: skip markers included.
        for i in 0..400 {
            let subject = format!("s.{i}");
            assert!(p.push(subject.as_bytes(), &payload[..i % 1000]));
            proto::write_pub(&mut expected, &subject, None, None, &payload[..i % 1000]);
            if i % 50 == 49 {
                let d = ring.drain(&mut out, 1 << 20);
                total.msgs += d.msgs;
                assert!(d.refused.is_none());
            }
        }
        assert_eq!(total.msgs, 400);
        assert_eq!(out, expected);
        let rest = ring.drain(&mut out, 1 << 20);
        assert!(rest.msgs == 0 && rest.refused.is_none());
    }

    #[test]
    fn a_full_ring_refuses_the_producer_until_drained() {
        let ring = PubRing::new();
        let p = Producer { ring: &ring };
        let payload = vec![0u8; 4096 - 16];
        let mut n = 0;
        while p.push(b"a.b", &payload) {
            n += 1;
        }
        assert_eq!(n, CAPACITY / 4096);
        let mut out = Vec::new();
        assert_eq!(ring.drain(&mut out, 1 << 20).msgs, n as u64);
        assert!(p.push(b"a.b", &payload));
    }

    #[test]
    fn bad_records_are_refused_and_the_rest_still_flows() {
        let ring = PubRing::new();
        let p = Producer { ring: &ring };
        let mut out = Vec::new();
        assert!(p.push(b"", b"0"));
        assert!(p.push(b"bad subject", b"1"));
        assert!(p.push(b"ok", b"2"));
        assert!(p.push(b"ok", &[0u8; 20]));
        let d = ring.drain(&mut out, 10);
        assert_eq!(d.msgs, 1);
        assert!(d.refused.unwrap().detail().contains("refused"));
        assert_eq!(out, b"PUB ok 1\r\n2\r\n");

        // A producer breaking the layout loses what it queued, nothing else.
        out.clear();
        let tail = ring.tail.load(Ordering::SeqCst);
        unsafe {
            let at = ring.data_ptr().add(tail as usize % CAPACITY);
            std::ptr::copy_nonoverlapping(1_000_000u32.to_ne_bytes().as_ptr(), at, 4);
        }
        ring.tail.store(tail + 16, Ordering::SeqCst);
        let d = ring.drain(&mut out, 10);
        assert!(d.refused.unwrap().detail().contains("overruns"));
        assert!(out.is_empty());
        assert!(p.push(b"ok", b"3"));
        assert_eq!(ring.drain(&mut out, 10).msgs, 1);
        assert_eq!(out, b"PUB ok 1\r\n3\r\n");
    }
}
