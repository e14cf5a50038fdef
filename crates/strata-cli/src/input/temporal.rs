//! Dates, times and timestamps from text, strictly: ISO 8601's extended forms with fixed-width fields
//! (`2024-02-29`, `10:11:12.345`, `2024-02-29T10:11:12.345678` or with a space, `Z` or `+02:00` for an
//! instant), as `strata scan` prints them. A value with more fractional digits than the column's precision,
//! an instant for a column without a time zone or a local date-time for one with it are refused: either
//! would store something other than what was given.

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's `days_from_civil`).
fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = i64::from((m + 9) % 12);
    let doy = (153 * mp + 2) / 5 + i64::from(d) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

fn digits(s: &str) -> Option<u32> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

/// `YYYY-MM-DD` as days since the epoch.
fn parse_date(s: &str) -> Option<i64> {
    let b = s.as_bytes();
    if b.len() != 10 || b[4] != b'-' || b[7] != b'-' {
        return None;
    }
    let (y, m, d) = (digits(&s[..4])?, digits(&s[5..7])?, digits(&s[8..])?);
    let leap = y % 4 == 0 && (y % 100 != 0 || y % 400 == 0);
    let month_days = match m {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if leap => 29,
        2 => 28,
        _ => return None,
    };
    if d == 0 || d > month_days {
        return None;
    }
    Some(days_from_civil(i64::from(y), m, d))
}

/// `HH:MM:SS[.fffffffff]` as (seconds of the day, nanoseconds).
fn parse_time(s: &str) -> Option<(i64, u32)> {
    let b = s.as_bytes();
    if b.len() < 8 || b[2] != b':' || b[5] != b':' {
        return None;
    }
    let (h, m, sec) = (digits(&s[..2])?, digits(&s[3..5])?, digits(&s[6..8])?);
    if h > 23 || m > 59 || sec > 59 {
        return None;
    }
    let nanos = match &s[8..] {
        "" => 0,
        f => {
            let f = f.strip_prefix('.')?;
            if f.len() > 9 {
                return None;
            }
            digits(f)? * 10u32.pow(9 - f.len() as u32)
        }
    };
    Some((i64::from(h * 3600 + m * 60 + sec), nanos))
}

/// Refuses nanoseconds finer than `precision` fractional digits.
fn check_precision(nanos: u32, precision: u8, type_name: &str) -> Result<(), String> {
    let unit = 10u32.pow(9 - u32::from(precision.min(9)));
    if !nanos.is_multiple_of(unit) {
        return Err(format!("has more fractional digits than {type_name} holds"));
    }
    Ok(())
}

/// A DATE value: days since the epoch.
pub(crate) fn date(s: &str) -> Result<i32, String> {
    parse_date(s).and_then(|d| i32::try_from(d).ok()).ok_or_else(|| "is not a valid date (YYYY-MM-DD)".to_string())
}

/// A TIME(precision) value: milliseconds of the day (Paimon stores times in milliseconds).
pub(crate) fn time(s: &str, precision: u8, type_name: &str) -> Result<i32, String> {
    let (secs, nanos) =
        parse_time(s).ok_or_else(|| "is not a valid time (HH:MM:SS with an optional fraction)".to_string())?;
    if precision > 3 && !nanos.is_multiple_of(1_000_000) {
        return Err(format!(
            "has digits below a millisecond, which {type_name} does not keep (times are stored in milliseconds)"
        ));
    }
    check_precision(nanos, precision.min(3), type_name)?;
    Ok((secs * 1000) as i32 + (nanos / 1_000_000) as i32)
}

/// Splits a trailing offset (`Z`, `+HH:MM`, `+HHMM`, `+HH`) off a time; the offset in seconds east of UTC.
fn split_offset(s: &str) -> Option<(&str, Option<i64>)> {
    if let Some(t) = s.strip_suffix(['Z', 'z']) {
        return Some((t, Some(0)));
    }
    let Some(i) = s.rfind(['+', '-']) else { return Some((s, None)) };
    let (t, o) = (&s[..i], &s[i + 1..]);
    let (h, m) = match o.len() {
        2 => (digits(o)?, 0),
        4 => (digits(&o[..2])?, digits(&o[2..])?),
        5 if o.as_bytes()[2] == b':' => (digits(&o[..2])?, digits(&o[3..])?),
        _ => return None,
    };
    if h > 18 || m > 59 {
        return None;
    }
    let secs = i64::from(h * 3600 + m * 60);
    Some((t, Some(if s.as_bytes()[i] == b'-' { -secs } else { secs })))
}

/// A TIMESTAMP(precision) value in the column's unit (milliseconds up to precision 3, microseconds up to 6,
/// else nanoseconds). `instant` is whether the column is WITH LOCAL TIME ZONE: its text must carry an
/// offset (the value is stored in UTC); a column without a time zone refuses one.
pub(crate) fn timestamp(s: &str, precision: u8, instant: bool, type_name: &str) -> Result<i64, String> {
    let invalid = || "is not a valid timestamp (YYYY-MM-DD HH:MM:SS with an optional fraction)".to_string();
    let b = s.as_bytes();
    if b.len() < 19 || !matches!(b[10], b'T' | b't' | b' ') {
        return Err(invalid());
    }
    let days = parse_date(&s[..10]).ok_or_else(invalid)?;
    let (time, offset) = split_offset(&s[11..]).ok_or_else(invalid)?;
    let (secs, nanos) = parse_time(time).ok_or_else(invalid)?;
    match (instant, offset) {
        (true, None) => {
            return Err(format!(
                "has no time zone offset, but {type_name} holds instants: add Z (UTC) or an offset such as +02:00"
            ))
        }
        (false, Some(_)) => {
            return Err(format!(
                "has a time zone offset, but {type_name} holds date-times without one: drop the offset, or make the column TIMESTAMP WITH LOCAL TIME ZONE"
            ))
        }
        _ => {}
    }
    check_precision(nanos, precision, type_name)?;
    let seconds = days * 86_400 + secs - offset.unwrap_or(0);
    let value = match precision {
        0..=3 => seconds.checked_mul(1000).map(|v| v + i64::from(nanos / 1_000_000)),
        4..=6 => seconds.checked_mul(1_000_000).map(|v| v + i64::from(nanos / 1000)),
        _ => seconds.checked_mul(1_000_000_000).and_then(|v| v.checked_add(i64::from(nanos))),
    };
    value.ok_or_else(|| format!("is out of range for {type_name} (nanosecond timestamps span 1677 to 2262)"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_are_strict() {
        assert_eq!(date("1970-01-01"), Ok(0));
        assert_eq!(date("2024-02-29"), Ok(19_782));
        assert_eq!(date("1969-12-31"), Ok(-1));
        assert_eq!(date("0001-01-01"), Ok(-719_162));
        for bad in ["2023-02-29", "2024-13-01", "2024-1-01", "2024-01-00", "2024/01/01", "2024-01-01 ", "20240101"] {
            assert!(date(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn times_keep_their_precision() {
        assert_eq!(time("10:11:12.345", 3, "TIME(3)"), Ok(36_672_345));
        assert_eq!(time("00:00:00", 0, "TIME(0)"), Ok(0));
        assert_eq!(time("00:00:01.500000", 3, "TIME(3)"), Ok(1500));
        assert!(time("00:00:01.5", 0, "TIME(0)").unwrap_err().contains("fractional"));
        assert!(time("00:00:01.0001", 3, "TIME(3)").unwrap_err().contains("fractional"));
        assert!(time("00:00:01.0001", 6, "TIME(6)").unwrap_err().contains("milliseconds"));
        assert_eq!(time("00:00:01.001000", 6, "TIME(6)"), Ok(1001));
        for bad in ["24:00:00", "10:60:00", "1:00:00", "10:00", "10:00:00.", "10:00:00.1234567890"] {
            assert!(time(bad, 3, "TIME(3)").is_err(), "{bad}");
        }
    }

    #[test]
    fn timestamps_and_zones() {
        assert_eq!(timestamp("1970-01-01T00:00:01.5", 3, false, "T"), Ok(1500));
        assert_eq!(timestamp("1970-01-01 00:00:00.000001", 6, false, "T"), Ok(1));
        assert_eq!(timestamp("1970-01-01T00:00:00.000000001", 9, false, "T"), Ok(1));
        assert_eq!(timestamp("1970-01-01T02:00:00+02:00", 3, true, "T"), Ok(0));
        assert_eq!(timestamp("1970-01-01T00:00:00-0130", 0, true, "T"), Ok(5_400_000));
        assert_eq!(timestamp("1970-01-01T00:00:00Z", 6, true, "T"), Ok(0));
        assert_eq!(timestamp("1969-12-31T23:59:59.999", 3, false, "T"), Ok(-1));
        assert!(timestamp("1970-01-01T00:00:00", 6, true, "T").unwrap_err().contains("no time zone"));
        assert!(timestamp("1970-01-01T00:00:00Z", 6, false, "T").unwrap_err().contains("has a time zone"));
        assert!(timestamp("1970-01-01T00:00:00.1234", 3, false, "T").unwrap_err().contains("fractional"));
        assert!(timestamp("9999-01-01T00:00:00", 9, false, "T").unwrap_err().contains("out of range"));
        assert!(timestamp("2024-02-30T00:00:00", 3, false, "T").is_err());
        assert!(timestamp("2024-02-01T00:00:00+25:00", 3, true, "T").is_err());
    }
}
