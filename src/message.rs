//! A received message: one shared, immutable buffer holding the whole frame,
//! with subject, reply and payload as NUL-terminated spans inside it.

use std::ffi::CStr;
use std::sync::Arc;

use bytes::Bytes;

use crate::headers::Headers;

#[derive(Debug, Clone, Copy)]
pub(crate) struct Span {
    pub start: u32,
    pub len: u32,
}

impl Span {
    pub fn new(start: usize, len: usize) -> Self {
        Span {
            start: start as u32,
            len: len as u32,
        }
    }
    fn range(self) -> std::ops::Range<usize> {
        self.start as usize..(self.start + self.len) as usize
    }
}

/// A message delivered by the server. Cloning is cheap (reference counts).
///
/// Invariant (see `from_parsed`): subject and reply are UTF-8 without NUL,
/// each followed by a NUL in the frame, which never changes. The accessors
/// below, read per message on every delivery path, rely on it instead of
/// checking again.
#[derive(Debug, Clone)]
pub struct Message {
    frame: Bytes,
    subject: Span,
    reply: Option<Span>,
    pub(crate) payload: Span,
    pub(crate) headers: Option<Arc<Headers>>,
    pub(crate) sid: u64,
    /// Header block plus payload bytes, as counted against pending limits.
    pub(crate) size: u32,
}

impl Message {
    /// Memory this message takes beyond its `size`: the struct, the rest
    /// of its frame (the MSG line with subject, sid and reply, the CRLFs)
    /// and the parsed copy of its header block.
    pub(crate) fn memory_overhead(&self) -> usize {
        let header_block = (self.size as usize).saturating_sub(self.payload.len as usize);
        let parsed_headers = if self.headers.is_some() {
            header_block
        } else {
            0
        };
        std::mem::size_of::<Message>()
            + self.frame.len().saturating_sub(self.size as usize)
            + parsed_headers
    }

    /// A message over `frame`.
    ///
    /// # Safety
    /// `subject` and `reply` lie inside `frame`, are valid UTF-8 without a
    /// NUL byte, and the byte right after each is NUL (the parser checks
    /// and writes exactly that).
    pub(crate) unsafe fn from_parsed(
        frame: Bytes,
        subject: Span,
        reply: Option<Span>,
        payload: Span,
        headers: Option<Arc<Headers>>,
        sid: u64,
        size: u32,
    ) -> Self {
        debug_assert!(std::iter::once(subject)
            .chain(reply)
            .all(|s| std::str::from_utf8(&frame[s.range()]).is_ok()
                && frame.get((s.start + s.len) as usize) == Some(&0)
                && !frame[s.range()].contains(&0)));
        Message {
            frame,
            subject,
            reply,
            payload,
            headers,
            sid,
            size,
        }
    }

    pub fn subject(&self) -> &str {
        text(&self.frame, self.subject)
    }

    pub fn reply(&self) -> Option<&str> {
        self.reply.map(|r| text(&self.frame, r))
    }

    pub fn payload(&self) -> &[u8] {
        &self.frame[self.payload.range()]
    }

    /// The payload as a shared slice of the frame (no copy).
    pub(crate) fn payload_bytes(&self) -> Bytes {
        self.frame.slice(self.payload.range())
    }

    pub fn headers(&self) -> Option<&Headers> {
        self.headers.as_deref()
    }

    /// Inline status code (e.g. 503 for no responders), if the message has one.
    pub fn status(&self) -> Option<u16> {
        self.headers.as_ref().and_then(|h| h.status())
    }

    pub fn sid(&self) -> u64 {
        self.sid
    }

    /// Subject, NUL-terminated inside the frame.
    pub(crate) fn subject_cstr(&self) -> &CStr {
        nul_terminated(&self.frame, self.subject)
    }

    pub(crate) fn reply_cstr(&self) -> Option<&CStr> {
        self.reply.map(|r| nul_terminated(&self.frame, r))
    }

    /// Pointer to the payload; the byte after it is NUL.
    pub(crate) fn payload_ptr(&self) -> *const u8 {
        self.frame[self.payload.start as usize..].as_ptr()
    }

    /// True for a no-responders status (503 with an empty payload).
    pub(crate) fn is_no_responders(&self) -> bool {
        self.status() == Some(503) && self.payload.len == 0
    }
}

fn text(frame: &Bytes, span: Span) -> &str {
    // SAFETY: UTF-8, as `from_parsed` requires.
    unsafe { std::str::from_utf8_unchecked(&frame[span.range()]) }
}

fn nul_terminated(frame: &Bytes, span: Span) -> &CStr {
    let end = (span.start + span.len) as usize;
    // SAFETY: no NUL inside the span and a NUL at `end`, as `from_parsed`
    // requires.
    unsafe { CStr::from_bytes_with_nul_unchecked(&frame[span.start as usize..=end]) }
}
