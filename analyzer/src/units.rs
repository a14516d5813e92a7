//! Quantities as people read them.

/// Seconds with an adaptive unit, three significant digits.
pub fn human_seconds(s: f64) -> String {
    let mut out = String::new();
    push_human_seconds(&mut out, s);
    out
}

/// [`human_seconds`] appended to `out`.
pub fn push_human_seconds(out: &mut String, s: f64) {
    use std::fmt::Write as _;
    if s == 0.0 {
        // (The most common value in a large table, and the same text for -0.)
        out.push_str("0.00 s");
        return;
    }
    let (v, unit) = if s == 0.0 {
        (0.0, "s")
    } else if s.abs() >= 1.0 {
        (s, "s")
    } else if s.abs() >= 1e-3 {
        (s * 1e3, "ms")
    } else if s.abs() >= 1e-6 {
        (s * 1e6, "us")
    } else {
        (s * 1e9, "ns")
    };
    let digits = if v.abs() >= 100.0 {
        0
    } else if v.abs() >= 10.0 {
        1
    } else {
        2
    };
    let _ = write!(out, "{v:.digits$} {unit}");
}

/// A sample count as a table shows it: whole samples. (A bin shared by two functions or lines
/// is split by byte overlap, so a row's share can be fractional; JSON and CSV keep it exact.)
pub fn samples(n: f64) -> String {
    format!("{n:.0}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seconds_are_readable() {
        assert_eq!(human_seconds(0.0), "0.00 s");
        assert_eq!(human_seconds(-0.0), "0.00 s");
        assert_eq!(human_seconds(1.5), "1.50 s");
        assert_eq!(human_seconds(0.0123), "12.3 ms");
        assert_eq!(human_seconds(2.5e-7), "250 ns");
    }
}
