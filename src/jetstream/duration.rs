//! Durations as the JetStream API and its users write them: integer
//! nanoseconds (the server's form) or Go-style strings ("90s", "1h30m",
//! "1.5s", "250ms").

use crate::error::{Error, ErrorKind, Result};

const UNITS: &[(&str, f64)] = &[
    ("ns", 1.0),
    ("us", 1e3),
    ("µs", 1e3),
    ("μs", 1e3),
    ("ms", 1e6),
    ("s", 1e9),
    ("m", 60e9),
    ("h", 3600e9),
];

fn bad(text: &str, why: &str) -> Error {
    Error::new(
        ErrorKind::Config,
        format!("invalid duration {text:?}: {why}"),
    )
}

/// Parses a Go-style duration string into nanoseconds. "0" needs no unit;
/// a leading '-' is accepted (callers that need a non-negative value check).
pub fn parse_duration(text: &str) -> Result<i64> {
    let s = text.trim();
    if s.is_empty() {
        return Err(bad(text, "empty"));
    }
    let (negative, mut rest) = match s.as_bytes()[0] {
        b'-' => (true, &s[1..]),
        b'+' => (false, &s[1..]),
        _ => (false, s),
    };
    if rest == "0" {
        return Ok(0);
    }
    if rest.is_empty() {
        return Err(bad(text, "no number"));
    }
    let mut total: f64 = 0.0;
    while !rest.is_empty() {
        let num_len = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        let number = &rest[..num_len];
        if number.is_empty() || number == "." || number.matches('.').count() > 1 {
            return Err(bad(text, "expected a number"));
        }
        let value: f64 = number.parse().map_err(|_| bad(text, "expected a number"))?;
        rest = &rest[num_len..];
        let unit_len = rest
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(rest.len());
        let unit = &rest[..unit_len];
        let Some(&(_, scale)) = UNITS.iter().find(|(u, _)| *u == unit) else {
            return Err(bad(
                text,
                if unit.is_empty() {
                    "missing unit (ns, us, ms, s, m, h)"
                } else {
                    "unknown unit (ns, us, ms, s, m, h)"
                },
            ));
        };
        total += value * scale;
        rest = &rest[unit_len..];
    }
    if !total.is_finite() || total >= i64::MAX as f64 {
        return Err(bad(text, "out of range"));
    }
    let ns = total.round() as i64;
    Ok(if negative { -ns } else { ns })
}

/// A JSON duration value: an integer (nanoseconds) or a duration string.
pub fn duration_from_json(v: &serde_json::Value) -> Option<Result<i64>> {
    match v {
        serde_json::Value::Number(n) => Some(
            n.as_i64()
                .ok_or_else(|| bad(&n.to_string(), "not an integer number of nanoseconds")),
        ),
        serde_json::Value::String(s) => Some(parse_duration(s)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_go_durations() {
        assert_eq!(parse_duration("0").unwrap(), 0);
        assert_eq!(parse_duration("90s").unwrap(), 90_000_000_000);
        assert_eq!(parse_duration("1h30m").unwrap(), 5_400_000_000_000);
        assert_eq!(parse_duration("1.5s").unwrap(), 1_500_000_000);
        assert_eq!(parse_duration("250ms").unwrap(), 250_000_000);
        assert_eq!(parse_duration("10us").unwrap(), 10_000);
        assert_eq!(parse_duration("7ns").unwrap(), 7);
        assert_eq!(parse_duration("-2m").unwrap(), -120_000_000_000);
        assert_eq!(parse_duration("2h45m30.5s").unwrap(), 9_930_500_000_000);
    }

    #[test]
    fn rejects_malformed_durations() {
        for bad in [
            "",
            "s",
            "10",
            "1x",
            "1..2s",
            "h1",
            ".s",
            "-",
            "1e9s",
            "99999999999h",
        ] {
            let e = parse_duration(bad).unwrap_err();
            assert_eq!(e.kind(), ErrorKind::Config, "{bad:?}");
        }
    }
}
