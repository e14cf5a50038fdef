//! Numbers from text, exactly: a decimal literal (JSON's number grammar, plus a leading `+`) becomes an
//! integer or a scaled decimal only when no digit is lost, and a float only when it is finite.
//!
//! Paimon's casts (`CastExecutors`) truncate or round; an input file is not a cast, so a value that does
//! not fit its column is refused instead.

/// A decimal literal split into its parts: `-12.50e3` is negative, digits "1250", exponent 3 - 2 = 1.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Literal<'a> {
    negative: bool,
    /// The integer part's digits.
    int: &'a str,
    /// The fraction's digits.
    frac: &'a str,
    /// The exponent after `e`, saturated.
    exp: i64,
}

/// Splits a decimal literal; `None` when `s` is not one.
pub(crate) fn literal(s: &str) -> Option<Literal<'_>> {
    let (negative, rest) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    let (mantissa, exp) = match rest.find(['e', 'E']) {
        Some(i) => (&rest[..i], Some(&rest[i + 1..])),
        None => (rest, None),
    };
    let (int, frac) = match mantissa.find('.') {
        Some(i) => (&mantissa[..i], &mantissa[i + 1..]),
        None => (mantissa, ""),
    };
    let digits = |d: &str| d.bytes().all(|b| b.is_ascii_digit());
    // JSON's grammar: digits before the point, and after it when there is one.
    if int.is_empty() || !digits(int) || !digits(frac) || mantissa.ends_with('.') {
        return None;
    }
    let exp = match exp {
        None => 0,
        Some(e) => {
            let (neg, d) = match e.as_bytes().first() {
                Some(b'-') => (true, &e[1..]),
                Some(b'+') => (false, &e[1..]),
                _ => (false, e),
            };
            if d.is_empty() || !digits(d) {
                return None;
            }
            // More than 18 digits of exponent: far outside anything representable either way.
            let v = d.trim_start_matches('0');
            let v: i64 = if v.len() > 18 { i64::MAX / 2 } else { v.parse().unwrap_or(0) };
            if neg {
                -v
            } else {
                v
            }
        }
    };
    Some(Literal { negative, int, frac, exp })
}

/// Why a literal does not fit.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Inexact {
    /// Digits would be dropped (1.9 as an integer, 1.234 at scale 2).
    Digits,
    /// The value is too large for 128 bits.
    Overflow,
}

impl Literal<'_> {
    fn is_zero(&self) -> bool {
        self.int.bytes().chain(self.frac.bytes()).all(|b| b == b'0')
    }

    /// The value times 10^`scale`, when that is a whole number that fits in an i128.
    pub(crate) fn scaled(&self, scale: u8) -> Result<i128, Inexact> {
        if self.is_zero() {
            return Ok(0);
        }
        // value = digits(int ++ frac) * 10^shift
        let shift = self.exp.saturating_sub(self.frac.len() as i64).saturating_add(i64::from(scale));
        let all = || self.int.bytes().chain(self.frac.bytes());
        let total = self.int.len() + self.frac.len();
        let keep = if shift >= 0 {
            total
        } else {
            let drop = usize::try_from(shift.unsigned_abs()).unwrap_or(usize::MAX);
            if all().skip(total.saturating_sub(drop)).any(|b| b != b'0') {
                return Err(Inexact::Digits);
            }
            total.saturating_sub(drop)
        };
        let mut v: i128 = 0;
        for b in all().take(keep) {
            v = v.checked_mul(10).and_then(|v| v.checked_add(i128::from(b - b'0'))).ok_or(Inexact::Overflow)?;
        }
        if shift > 0 {
            let p = u32::try_from(shift).map_err(|_| Inexact::Overflow)?;
            v = 10i128.checked_pow(p).and_then(|m| v.checked_mul(m)).ok_or(Inexact::Overflow)?;
        }
        Ok(if self.negative { -v } else { v })
    }
}

/// A whole number in `min..=max`, or why not.
pub(crate) fn integer(text: &str, min: i128, max: i128, type_name: &str) -> Result<i128, String> {
    // The common case, plain digits, without splitting the literal.
    if let Ok(v) = text.parse::<i64>() {
        let v = i128::from(v);
        if (min..=max).contains(&v) {
            return Ok(v);
        }
    }
    let lit = literal(text).ok_or_else(|| format!("is not a number ({type_name} takes whole numbers)"))?;
    match lit.scaled(0) {
        Ok(v) if (min..=max).contains(&v) => Ok(v),
        Ok(_) | Err(Inexact::Overflow) => Err(format!("is out of range for {type_name} ({min} to {max})")),
        Err(Inexact::Digits) => Err(format!("is not a whole number ({type_name} takes whole numbers only)")),
    }
}

/// The unscaled value of a DECIMAL(precision, scale), or why not.
pub(crate) fn decimal(text: &str, precision: u8, scale: u8, type_name: &str) -> Result<i128, String> {
    let lit = literal(text).ok_or_else(|| format!("is not a number ({type_name})"))?;
    let v = match lit.scaled(scale) {
        Ok(v) => v,
        Err(Inexact::Digits) => return Err(format!("has more than {scale} digits after the point ({type_name})")),
        Err(Inexact::Overflow) => return Err(format!("has more than {precision} digits ({type_name})")),
    };
    if v.unsigned_abs() >= 10u128.pow(u32::from(precision)) {
        return Err(format!("has more than {} digits before the point ({type_name})", precision - scale));
    }
    Ok(v)
}

/// A DOUBLE (`single` false) or FLOAT value from a literal or NaN/Infinity (any case, signed), or why not:
/// a finite literal that overflows or underflows to zero is refused.
pub(crate) fn float(text: &str, single: bool, type_name: &str) -> Result<f64, String> {
    let special = text.trim_start_matches(['+', '-']).to_ascii_lowercase();
    if matches!(special.as_str(), "nan" | "inf" | "infinity") {
        return text.parse::<f64>().map_err(|_| format!("is not a number ({type_name})"));
    }
    let lit = literal(text).ok_or_else(|| format!("is not a number ({type_name})"))?;
    let v = if single {
        text.parse::<f32>().map(f64::from).map_err(|_| format!("is not a number ({type_name})"))?
    } else {
        text.parse::<f64>().map_err(|_| format!("is not a number ({type_name})"))?
    };
    if v.is_infinite() {
        return Err(format!("is out of range for {type_name}"));
    }
    if v == 0.0 && !lit.is_zero() {
        return Err(format!("is too small for {type_name} (it would be stored as 0)"));
    }
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integers_are_whole_and_in_range() {
        assert_eq!(integer("12", -128, 127, "TINYINT"), Ok(12));
        assert_eq!(integer("-0", -128, 127, "TINYINT"), Ok(0));
        assert_eq!(integer("1.0", -128, 127, "TINYINT"), Ok(1));
        assert_eq!(integer("1.20e1", -128, 127, "TINYINT"), Ok(12));
        assert_eq!(integer("+7", -128, 127, "TINYINT"), Ok(7));
        assert!(integer("1.9", -128, 127, "TINYINT").unwrap_err().contains("whole"));
        assert!(integer("128", -128, 127, "TINYINT").unwrap_err().contains("out of range"));
        assert!(integer("1e400", -128, 127, "TINYINT").unwrap_err().contains("out of range"));
        assert!(integer("1e-400", -128, 127, "TINYINT").unwrap_err().contains("whole"));
        assert_eq!(integer("0e999999999999999999999", -1, 1, "INT"), Ok(0));
        for bad in ["", "-", "1.", ".5", "1e", "0x10", "1_000", " 1", "1,5", "--1", "1e+"] {
            assert!(integer(bad, -128, 127, "TINYINT").unwrap_err().contains("not a number"), "{bad}");
        }
        let max = i64::MAX as i128;
        assert_eq!(integer("9223372036854775807", -max - 1, max, "BIGINT"), Ok(max));
        assert!(integer("9223372036854775808", -max - 1, max, "BIGINT").is_err());
    }

    #[test]
    fn decimals_keep_every_digit() {
        assert_eq!(decimal("12.34", 10, 2, "D"), Ok(1234));
        assert_eq!(decimal("12.3", 10, 2, "D"), Ok(1230));
        assert_eq!(decimal("-0.01", 10, 2, "D"), Ok(-1));
        assert_eq!(decimal("1.5e-1", 3, 2, "D"), Ok(15));
        assert_eq!(decimal("12.340", 4, 2, "D"), Ok(1234));
        assert!(decimal("12.345", 10, 2, "D").unwrap_err().contains("after the point"));
        assert!(decimal("123.4", 4, 2, "D").unwrap_err().contains("before the point"));
        assert!(decimal("1e40", 38, 0, "D").is_err());
    }

    #[test]
    fn floats_are_finite() {
        assert_eq!(float("0.1", false, "DOUBLE"), Ok(0.1));
        assert_eq!(float("0.1", true, "FLOAT"), Ok(f64::from(0.1f32)));
        assert!(float("NaN", false, "DOUBLE").is_ok_and(f64::is_nan));
        assert_eq!(float("-Infinity", false, "DOUBLE"), Ok(f64::NEG_INFINITY));
        assert!(float("1e400", false, "DOUBLE").is_err());
        assert!(float("1e39", true, "FLOAT").is_err());
        assert!(float("1e-400", false, "DOUBLE").is_err());
        assert_eq!(float("0e-400", false, "DOUBLE"), Ok(0.0));
        assert!(float("abc", false, "DOUBLE").is_err());
    }
}
