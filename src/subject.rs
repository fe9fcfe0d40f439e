//! Subject and queue-name validation (the server's rules, checked before
//! anything is written so a bad subject never reaches the wire).

use crate::error::{Error, ErrorKind, Result};

fn bad(what: &str, s: &str, why: &str) -> Error {
    Error::new(
        ErrorKind::BadSubject,
        format!("invalid {what} {s:?}: {why}"),
    )
}

fn check_tokens(what: &str, s: &str, allow_wildcards: bool) -> Result<()> {
    // This runs on every publish: a tight pass for the common subject
    // (printable, no empty token, no '*' or '>'), the exact one otherwise.
    let b = s.as_bytes();
    let mut after_dot = true;
    let mut plain = !b.is_empty();
    for &c in b {
        if c <= b' ' || c == 0x7f || c == b'*' || c == b'>' || (c == b'.' && after_dot) {
            plain = false;
            break;
        }
        after_dot = c == b'.';
    }
    if plain && !after_dot {
        return Ok(());
    }
    check_tokens_exactly(what, s, allow_wildcards)
}

fn check_tokens_exactly(what: &str, s: &str, allow_wildcards: bool) -> Result<()> {
    let b = s.as_bytes();
    if b.is_empty() {
        return Err(bad(what, s, "empty"));
    }
    let mut start = 0;
    for i in 0..=b.len() {
        let c = b.get(i).copied();
        match c {
            Some(b'.') | None => {
                let token = &b[start..i];
                match token {
                    [] => return Err(bad(what, s, "empty token")),
                    [b'*'] | [b'>'] if !allow_wildcards => {
                        return Err(bad(what, s, "wildcards are not allowed here"))
                    }
                    [b'>'] if c.is_some() => {
                        return Err(bad(what, s, "'>' must be the last token"))
                    }
                    _ => {}
                }
                start = i + 1;
            }
            Some(c) if c <= b' ' || c == 0x7f => {
                return Err(bad(what, s, "whitespace or control character"));
            }
            Some(_) => {}
        }
    }
    Ok(())
}

/// Room for the subject `validate_publish` remembers.
const REMEMBERED_MAX: usize = 64;

thread_local! {
    /// The publish subject this thread checked last (length, bytes): a
    /// publisher sends to the same subject over and over, and comparing
    /// with it costs a third of the check (which was an eighth of a small
    /// publish's CPU). Validity depends on the bytes alone.
    static LAST_VALID: std::cell::RefCell<(usize, [u8; REMEMBERED_MAX])> =
        const { std::cell::RefCell::new((usize::MAX, [0; REMEMBERED_MAX])) };
}

/// A subject to publish to (or a reply subject): no wildcards.
pub fn validate_publish(subject: &str) -> Result<()> {
    let b = subject.as_bytes();
    if b.len() > REMEMBERED_MAX {
        return check_tokens("subject", subject, false);
    }
    if LAST_VALID.with(|l| {
        let l = l.borrow();
        l.0 == b.len() && &l.1[..b.len()] == b
    }) {
        return Ok(());
    }
    check_tokens("subject", subject, false)?;
    LAST_VALID.with(|l| {
        let mut l = l.borrow_mut();
        l.1[..b.len()].copy_from_slice(b);
        l.0 = b.len();
    });
    Ok(())
}

/// A subject to subscribe to: `*` and `>` allowed as whole tokens.
pub fn validate_subscribe(subject: &str) -> Result<()> {
    check_tokens("subject", subject, true)
}

/// A queue group name: non-empty, no whitespace.
pub fn validate_queue(queue: &str) -> Result<()> {
    if queue.is_empty()
        || queue
            .bytes()
            .any(|b| b.is_ascii_whitespace() || b.is_ascii_control())
    {
        return Err(Error::new(
            ErrorKind::BadQueueName,
            format!("invalid queue group {queue:?}: empty or contains whitespace"),
        ));
    }
    Ok(())
}

/// Whether every subject `inner` matches is matched by `outer` (both
/// valid subscription subjects): `$KV.>` and `$KV.*.>` cover `$KV.b.>`,
/// `$KV.b.x` does not.
pub(crate) fn covers(outer: &str, inner: &str) -> bool {
    let mut inner_tokens = inner.split('.');
    for o in outer.split('.') {
        if o == ">" {
            return inner_tokens.next().is_some();
        }
        match inner_tokens.next() {
            None | Some(">") => return false,
            Some(i) if o != "*" && (i == "*" || i != o) => return false,
            Some(_) => {}
        }
    }
    inner_tokens.next().is_none()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rules() {
        for ok in ["a", "a.b.c", "foo*", "$JS.API.INFO", "_INBOX.x"] {
            validate_publish(ok).unwrap();
        }
        for bad in ["", "a..b", ".a", "a.", "a b", "a.*", ">", "a\tb", "a\r\n"] {
            assert!(validate_publish(bad).is_err(), "{bad:?}");
        }
        for ok in ["a.*", "a.>", "*", ">", "*.b.>"] {
            validate_subscribe(ok).unwrap();
        }
        for bad in ["a.>.b", "a..*", "", "a *"] {
            assert!(validate_subscribe(bad).is_err(), "{bad:?}");
        }
        assert!(validate_queue("q").is_ok());
        assert!(validate_queue("a b").is_err());
        assert!(validate_queue("").is_err());
    }

    #[test]
    fn the_remembered_subject_never_vouches_for_another() {
        // Each bad subject right after a good one of the same length (or
        // a prefix of it), and the good one again after the bad one.
        for (good, bad) in [
            ("a.b", "a.*"),
            ("ab.c", "ab. "),
            ("a.b", "a.b."),
            ("x.y", ""),
        ] {
            for _ in 0..2 {
                validate_publish(good).unwrap();
                assert!(validate_publish(bad).is_err(), "{bad:?} after {good:?}");
            }
        }
        let long_good = format!("{}.end", "t".repeat(REMEMBERED_MAX));
        let long_bad = format!("{}..end", "t".repeat(REMEMBERED_MAX));
        validate_publish(&long_good).unwrap();
        assert!(validate_publish(&long_bad).is_err());
        validate_publish(&long_good).unwrap();
    }

    #[test]
    fn covering_subjects() {
        for outer in ["$KV.b.>", "$KV.>", "$KV.*.>", ">", "*.b.>", "$KV.b.*.>"] {
            let want = outer != "$KV.b.*.>";
            assert_eq!(covers(outer, "$KV.b.>"), want, "{outer:?}");
        }
        for outer in ["$KV.b", "$KV.b.x", "$KV.c.>", "$KV.b.*", "KV.b.>"] {
            assert!(!covers(outer, "$KV.b.>"), "{outer:?}");
        }
        assert!(covers("a.*", "a.b") && covers("a.*", "a.*") && !covers("a.b", "a.*"));
        assert!(!covers("a.*", "a.b.c") && !covers("a.b.c", "a.b"));
    }
}
