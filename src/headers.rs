//! Message headers: a multi-value, order- and case-preserving map.
//!
//! Names and values are stored NUL-terminated so the C layer can hand out
//! borrowed `const char *` without copying.

use std::ffi::{CStr, CString};

use crate::error::{Error, ErrorKind, Result};

/// The first line of every header block.
pub(crate) const VERSION_LINE: &[u8] = b"NATS/1.0";

/// One name/value pair in one allocation, `name\0value\0`: a received
/// block of n headers costs n allocations, not 2n, and both halves stay
/// borrowable as C strings.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Entry {
    text: Box<[u8]>,
    /// The index of the NUL ending the name.
    split: usize,
}

impl Entry {
    fn name(&self) -> &CStr {
        // SAFETY: `entry` built `text` as two NUL-terminated strings with
        // no interior NUL (validated), the first ending at `split`.
        unsafe { CStr::from_bytes_with_nul_unchecked(&self.text[..=self.split]) }
    }

    fn value(&self) -> &CStr {
        // SAFETY: as in `name`; the value runs to the final NUL.
        unsafe { CStr::from_bytes_with_nul_unchecked(&self.text[self.split + 1..]) }
    }

    fn name_bytes(&self) -> &[u8] {
        &self.text[..self.split]
    }
}

/// Headers of a message. Lookup is by exact, case-sensitive name.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Headers {
    entries: Vec<Entry>,
    status: Option<u16>,
    description: Option<CString>,
    /// Set when some lines of a received header block could not be parsed.
    malformed: bool,
}

/// Checks a header name: printable ASCII without ':'.
pub fn validate_name(name: &str) -> Result<()> {
    if name.is_empty() {
        return Err(Error::new(ErrorKind::BadHeaders, "header name is empty"));
    }
    if let Some(b) = name
        .bytes()
        .find(|b| !(0x21..=0x7e).contains(b) || *b == b':')
    {
        return Err(Error::new(
            ErrorKind::BadHeaders,
            format!("header name {name:?} contains byte 0x{b:02x} (names are printable ASCII without ':')"),
        ));
    }
    Ok(())
}

/// Checks a header value: no CR, LF or NUL.
pub fn validate_value(value: &str) -> Result<()> {
    if let Some(b) = value.bytes().find(|b| matches!(b, b'\r' | b'\n' | 0)) {
        return Err(Error::new(
            ErrorKind::BadHeaders,
            format!("header value contains byte 0x{b:02x} (CR, LF and NUL are not allowed)"),
        ));
    }
    Ok(())
}

fn entry(name: &str, value: &str) -> Result<Entry> {
    validate_name(name)?;
    validate_value(value)?;
    // Validation above rules out interior NULs.
    let mut text = Vec::with_capacity(name.len() + value.len() + 2);
    text.extend_from_slice(name.as_bytes());
    text.push(0);
    text.extend_from_slice(value.as_bytes());
    text.push(0);
    Ok(Entry {
        text: text.into_boxed_slice(),
        split: name.len(),
    })
}

impl Headers {
    pub fn new() -> Self {
        Self::default()
    }

    /// Appends a value, keeping any earlier values of the same name.
    pub fn add(&mut self, name: &str, value: &str) -> Result<()> {
        self.entries.push(entry(name, value)?);
        Ok(())
    }

    /// Replaces every value of `name` with this one.
    pub fn set(&mut self, name: &str, value: &str) -> Result<()> {
        let e = entry(name, value)?;
        self.remove(name);
        self.entries.push(e);
        Ok(())
    }

    /// Removes every value of `name`; returns how many were removed.
    pub fn remove(&mut self, name: &str) -> usize {
        let before = self.entries.len();
        self.entries.retain(|e| e.name_bytes() != name.as_bytes());
        before - self.entries.len()
    }

    /// The first value of `name`.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.get_cstr(name).map(cstr_str)
    }

    pub(crate) fn get_cstr(&self, name: &str) -> Option<&CStr> {
        self.entries
            .iter()
            .find(|e| e.name_bytes() == name.as_bytes())
            .map(Entry::value)
    }

    /// Every value of `name`, in order.
    pub fn get_all<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a str> + 'a {
        self.entries
            .iter()
            .filter(move |e| e.name_bytes() == name.as_bytes())
            .map(|e| cstr_str(e.value()))
    }

    /// The `index`-th value of `name`.
    pub(crate) fn get_nth_cstr(&self, name: &str, index: usize) -> Option<&CStr> {
        self.entries
            .iter()
            .filter(|e| e.name_bytes() == name.as_bytes())
            .nth(index)
            .map(Entry::value)
    }

    /// Number of name/value pairs.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The pair at `index`, in wire order.
    pub(crate) fn entry_cstr(&self, index: usize) -> Option<(&CStr, &CStr)> {
        self.entries.get(index).map(|e| (e.name(), e.value()))
    }

    /// Iterates name/value pairs in wire order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.entries
            .iter()
            .map(|e| (cstr_str(e.name()), cstr_str(e.value())))
    }

    /// The inline status code of the header block (e.g. 503), if any.
    pub fn status(&self) -> Option<u16> {
        self.status
    }

    /// The text beside the inline status (e.g. "Request Timeout"), if any.
    pub fn description(&self) -> Option<&str> {
        self.description.as_deref().map(cstr_str)
    }

    /// `description` NUL-terminated, for handing out borrowed.
    pub(crate) fn description_cstr(&self) -> Option<&CStr> {
        self.description.as_deref()
    }

    /// True when some line of the received block was malformed and skipped.
    pub fn is_malformed(&self) -> bool {
        self.malformed
    }

    /// Size of the encoded block, including the version line and final CRLF.
    pub(crate) fn encoded_len(&self) -> usize {
        let mut n = VERSION_LINE.len() + 2 + 2;
        for e in &self.entries {
            // "name: value\r\n" is `text` (name, value, two NULs) plus two.
            n += e.text.len() + 2;
        }
        n
    }

    /// Writes the block in wire form. Entries were validated on insertion.
    pub(crate) fn encode(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(VERSION_LINE);
        out.extend_from_slice(b"\r\n");
        for e in &self.entries {
            out.extend_from_slice(e.name_bytes());
            out.extend_from_slice(b": ");
            out.extend_from_slice(e.value().to_bytes());
            out.extend_from_slice(b"\r\n");
        }
        out.extend_from_slice(b"\r\n");
    }

    /// Parses a received header block. Never fails: bad lines are skipped
    /// and flagged, so a corrupt block still delivers its message.
    pub(crate) fn parse(block: &[u8]) -> Headers {
        let mut h = Headers::default();
        let mut lines = block
            .split(|b| *b == b'\n')
            .map(|l| l.strip_suffix(b"\r").unwrap_or(l));
        match lines.next() {
            Some(first) if first.starts_with(VERSION_LINE) => {
                let rest = trim(&first[VERSION_LINE.len()..]);
                if !rest.is_empty() {
                    let (code, desc) = match memchr::memchr(b' ', rest) {
                        Some(i) => (&rest[..i], trim(&rest[i + 1..])),
                        None => (rest, &b""[..]),
                    };
                    match std::str::from_utf8(code)
                        .ok()
                        .and_then(|c| c.parse::<u16>().ok())
                    {
                        Some(c) => h.status = Some(c),
                        None => h.malformed = true,
                    }
                    if !desc.is_empty() {
                        h.description =
                            CString::new(String::from_utf8_lossy(desc).into_owned()).ok();
                    }
                }
            }
            _ => h.malformed = true,
        }
        for line in lines {
            if line.is_empty() {
                continue;
            }
            let Some(colon) = memchr::memchr(b':', line) else {
                h.malformed = true;
                continue;
            };
            let name = trim(&line[..colon]);
            let value = trim(&line[colon + 1..]);
            let name = String::from_utf8_lossy(name);
            let value = String::from_utf8_lossy(value);
            match entry(&name, &value) {
                Ok(e) => h.entries.push(e),
                Err(_) => h.malformed = true,
            }
        }
        h
    }
}

fn cstr_str(c: &CStr) -> &str {
    // Every stored string came from a Rust `&str` (lossily converted when
    // received), so it is valid UTF-8.
    c.to_str().unwrap_or("")
}

fn trim(mut s: &[u8]) -> &[u8] {
    while let [first, rest @ ..] = s {
        if first.is_ascii_whitespace() {
            s = rest;
        } else {
            break;
        }
    }
    while let [rest @ .., last] = s {
        if last.is_ascii_whitespace() {
            s = rest;
        } else {
            break;
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_multi_value_and_case() {
        let mut h = Headers::new();
        h.add("Content-Type", "application/json").unwrap();
        h.add("X-Tag", "red").unwrap();
        h.add("X-Tag", "blue").unwrap();
        let mut out = Vec::new();
        h.encode(&mut out);
        assert_eq!(out.len(), h.encoded_len());
        let p = Headers::parse(&out);
        assert_eq!(p.get("Content-Type"), Some("application/json"));
        assert_eq!(p.get("content-type"), None);
        assert_eq!(p.get_all("X-Tag").collect::<Vec<_>>(), vec!["red", "blue"]);
        assert!(!p.is_malformed());
    }

    #[test]
    fn entries_read_back_as_c_strings_after_edits() {
        let mut h = Headers::new();
        h.add("A", "1").unwrap();
        h.add("Empty", "").unwrap();
        h.add("A", "two").unwrap();
        h.add("Long-Name-Of-A-Header", "a value with spaces")
            .unwrap();
        assert_eq!(h.get_cstr("A"), Some(c"1"));
        assert_eq!(h.get_nth_cstr("A", 1), Some(c"two"));
        assert_eq!(h.get_nth_cstr("A", 2), None);
        assert_eq!(h.get("Empty"), Some(""));
        assert_eq!(h.entry_cstr(1), Some((c"Empty", c"")));
        assert_eq!(
            h.entry_cstr(3),
            Some((c"Long-Name-Of-A-Header", c"a value with spaces"))
        );
        assert_eq!(h.entry_cstr(4), None);
        assert_eq!(h.remove("A"), 2);
        h.set("Empty", "now set").unwrap();
        assert_eq!(
            h.iter().collect::<Vec<_>>(),
            vec![
                ("Long-Name-Of-A-Header", "a value with spaces"),
                ("Empty", "now set")
            ]
        );
        let mut out = Vec::new();
        h.encode(&mut out);
        assert_eq!(
            out,
            b"NATS/1.0\r\nLong-Name-Of-A-Header: a value with spaces\r\nEmpty: now set\r\n\r\n"
        );
        assert_eq!(out.len(), h.encoded_len());
        assert_eq!(Headers::parse(&out), h);
    }

    #[test]
    fn rejects_injection() {
        let mut h = Headers::new();
        assert_eq!(
            h.add("Bad:Name", "v").unwrap_err().kind(),
            ErrorKind::BadHeaders
        );
        assert_eq!(
            h.add("Bad Name", "v").unwrap_err().kind(),
            ErrorKind::BadHeaders
        );
        assert_eq!(h.add("", "v").unwrap_err().kind(), ErrorKind::BadHeaders);
        assert_eq!(
            h.add("K", "a\r\nX: y").unwrap_err().kind(),
            ErrorKind::BadHeaders
        );
        assert!(h.is_empty());
    }

    #[test]
    fn status_line_and_bad_lines() {
        let p = Headers::parse(b"NATS/1.0 503\r\n\r\n");
        assert_eq!(p.status(), Some(503));
        let p = Headers::parse(b"NATS/1.0 408 Request Timeout\r\nA: 1\r\ngarbage\r\n\r\n");
        assert_eq!(p.status(), Some(408));
        assert_eq!(p.description(), Some("Request Timeout"));
        assert_eq!(p.get("A"), Some("1"));
        assert!(p.is_malformed());
    }
}
