//! RFC 3339 timestamps as the server writes them
//! ("2024-05-06T07:08:09.123456789Z", or with a numeric offset).

fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    // Howard Hinnant's algorithm: days since 1970-01-01 (proleptic Gregorian).
    let y = if m <= 2 { y - 1 } else { y };
    let era = if y >= 0 { y } else { y - 399 } / 400;
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

fn civil_from_days(z: i64) -> (i64, i64, i64) {
    // The inverse of `days_from_civil` (same algorithm).
    let z = z + 719_468;
    let era = if z >= 0 { z } else { z - 146_096 } / 146_097;
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

/// `ns` since the Unix epoch as UTC RFC 3339 with nanoseconds, as the
/// server and nats.go write timestamps.
pub fn format_rfc3339_ns(ns: i64) -> String {
    let (secs, nanos) = (ns.div_euclid(1_000_000_000), ns.rem_euclid(1_000_000_000));
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    let (y, m, d) = civil_from_days(days);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{nanos:09}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

fn num(s: &[u8]) -> Option<i64> {
    if s.is_empty() || !s.iter().all(u8::is_ascii_digit) {
        return None;
    }
    std::str::from_utf8(s).ok()?.parse().ok()
}

/// Nanoseconds since the Unix epoch, or `None` if `s` is not RFC 3339.
pub fn parse_rfc3339_ns(s: &str) -> Option<i64> {
    let b = s.as_bytes();
    if b.len() < 20 || b[4] != b'-' || b[7] != b'-' || !matches!(b[10], b'T' | b't' | b' ') {
        return None;
    }
    if b[13] != b':' || b[16] != b':' {
        return None;
    }
    let (year, month, day) = (num(&b[0..4])?, num(&b[5..7])?, num(&b[8..10])?);
    let (hour, min, sec) = (num(&b[11..13])?, num(&b[14..16])?, num(&b[17..19])?);
    if !(1..=12).contains(&month) || !(1..=31).contains(&day) || hour > 23 || min > 59 || sec > 60 {
        return None;
    }
    let mut rest = &b[19..];
    let mut nanos = 0i64;
    if rest.first() == Some(&b'.') {
        let digits = rest[1..].iter().take_while(|c| c.is_ascii_digit()).count();
        if digits == 0 {
            return None;
        }
        let frac = &rest[1..1 + digits];
        for i in 0..9 {
            nanos = nanos * 10 + frac.get(i).map_or(0, |c| (c - b'0') as i64);
        }
        rest = &rest[1 + digits..];
    }
    let offset_s = match rest {
        [b'Z'] | [b'z'] => 0,
        [sign @ (b'+' | b'-'), h1, h2, b':', m1, m2] => {
            let off = num(&[*h1, *h2])? * 3600 + num(&[*m1, *m2])? * 60;
            if *sign == b'+' {
                off
            } else {
                -off
            }
        }
        _ => return None,
    };
    let secs = days_from_civil(year, month, day) * 86_400 + hour * 3600 + min * 60 + sec - offset_s;
    secs.checked_mul(1_000_000_000)?.checked_add(nanos)
}

#[cfg(test)]
mod tests {
    use super::{format_rfc3339_ns, parse_rfc3339_ns};

    #[test]
    fn formats_what_it_parses() {
        for ns in [0, 1_709_210_096_123_456_789, 951_782_400_000_000_001, -1] {
            let text = format_rfc3339_ns(ns);
            assert_eq!(parse_rfc3339_ns(&text), Some(ns), "{text}");
        }
        assert_eq!(
            format_rfc3339_ns(1_709_210_096_123_456_789),
            "2024-02-29T12:34:56.123456789Z"
        );
    }

    #[test]
    fn parses_server_timestamps() {
        assert_eq!(parse_rfc3339_ns("1970-01-01T00:00:00Z"), Some(0));
        assert_eq!(
            parse_rfc3339_ns("2024-02-29T12:34:56.123456789Z"),
            Some(1_709_210_096_123_456_789)
        );
        assert_eq!(
            parse_rfc3339_ns("2024-02-29T13:34:56.5+01:00"),
            Some(1_709_210_096_500_000_000)
        );
        for bad in [
            "",
            "2024-02-29",
            "2024-13-01T00:00:00Z",
            "2024-02-29T12:34:56",
            "x024-02-29T12:34:56Z",
        ] {
            assert_eq!(parse_rfc3339_ns(bad), None, "{bad:?}");
        }
    }
}
