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
#[derive(Debug, Clone)]
pub struct Message {
    pub(crate) frame: Bytes,
    pub(crate) subject: Span,
    pub(crate) reply: Option<Span>,
    pub(crate) payload: Span,
    pub(crate) headers: Option<Arc<Headers>>,
    pub(crate) sid: u64,
    /// Header block plus payload bytes, as counted against pending limits.
    pub(crate) size: u32,
}

impl Message {
    pub fn subject(&self) -> &str {
        // The parser checked that subject and reply are UTF-8.
        std::str::from_utf8(&self.frame[self.subject.range()]).unwrap_or("")
    }

    pub fn reply(&self) -> Option<&str> {
        self.reply
            .map(|r| std::str::from_utf8(&self.frame[r.range()]).unwrap_or(""))
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

fn nul_terminated(frame: &Bytes, span: Span) -> &CStr {
    let end = (span.start + span.len) as usize;
    // The parser wrote a NUL at `end` and rejected NULs inside the span.
    CStr::from_bytes_with_nul(&frame[span.start as usize..=end]).unwrap_or_default()
}
