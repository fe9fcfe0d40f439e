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

/// A subject to publish to (or a reply subject): no wildcards.
pub fn validate_publish(subject: &str) -> Result<()> {
    check_tokens("subject", subject, false)
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
}
