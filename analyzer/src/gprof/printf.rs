//! The few C `printf` conversions gprof's flat profile uses, reproduced exactly.
//!
//! Rust's `{:.N}` rounds the exact binary value half-to-even like glibc, so `%W.Nf` only
//! needs C's spelling of infinities and NaNs. `%g` has no Rust equivalent and is written
//! out here: shortest of `%e`/`%f` by C's exponent rule, trailing zeros removed.

/// `%W.Pf`.
pub fn f(width: usize, prec: usize, v: f64) -> String {
    if v.is_finite() {
        format!("{v:>width$.prec$}")
    } else {
        let s = nonfinite(v);
        format!("{s:>width$}")
    }
}

fn nonfinite(v: f64) -> &'static str {
    match (v.is_nan(), v.is_sign_negative()) {
        (true, false) => "nan",
        (true, true) => "-nan",
        (false, false) => "inf",
        (false, true) => "-inf",
    }
}

/// `%g` (precision 6).
pub fn g(v: f64) -> String {
    if !v.is_finite() {
        return nonfinite(v).to_owned();
    }
    const P: i32 = 6;
    if v == 0.0 {
        return if v.is_sign_negative() {
            "-0".into()
        } else {
            "0".into()
        };
    }
    // The exponent %e would print, after rounding to P significant digits.
    let e_form = format!("{:.*e}", (P - 1) as usize, v);
    let (mantissa, exp) = e_form.split_once('e').unwrap_or((&e_form, "0"));
    let x: i32 = exp.parse().unwrap_or(0);
    if (-4..P).contains(&x) {
        let prec = (P - 1 - x) as usize;
        strip_zeros(&format!("{v:.prec$}"))
    } else {
        let m = strip_zeros(mantissa);
        let sign = if x < 0 { '-' } else { '+' };
        format!("{m}e{sign}{:02}", x.abs())
    }
}

fn strip_zeros(s: &str) -> String {
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_owned()
    } else {
        s.to_owned()
    }
}

/// `%W.Ps` (right-aligned) or `%-W.Ps` (left-aligned) on raw bytes.
pub fn s(out: &mut Vec<u8>, width: usize, prec: usize, left: bool, text: &[u8]) {
    let t = &text[..text.len().min(prec)];
    let pad = width.saturating_sub(t.len());
    if !left {
        out.extend(std::iter::repeat_n(b' ', pad));
    }
    out.extend_from_slice(t);
    if left {
        out.extend(std::iter::repeat_n(b' ', pad));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percent_g_matches_c() {
        // Expected values are what glibc's printf("%g") prints.
        let cases = [
            (0.01, "0.01"),
            (1.0 / 100.0, "0.01"),
            (1.0 / 60.0, "0.0166667"),
            (1.0 / 1000.0, "0.001"),
            (1.0 / 3.0e5, "3.33333e-06"),
            (1e-5, "1e-05"),
            (123456.0, "123456"),
            (1234567.0, "1.23457e+06"),
            (1.0, "1"),
            (0.0001, "0.0001"),
            (0.00009999995, "0.0001"),
            (999999.5, "1e+06"),
            (f64::INFINITY, "inf"),
        ];
        for (v, want) in cases {
            assert_eq!(g(v), want, "{v}");
        }
    }

    #[test]
    fn fixed_and_strings() {
        assert_eq!(f(6, 2, 0.125), "  0.12");
        assert_eq!(f(6, 2, 0.375), "  0.38");
        assert_eq!(f(8, 2, 1.005), "    1.00");
        assert_eq!(f(8, 2, f64::INFINITY), "     inf");
        let mut v = Vec::new();
        s(&mut v, 8, 8, false, b"seconds");
        s(&mut v, 5, 5, false, b"cumulative");
        s(&mut v, 8, 8, true, b"name");
        assert_eq!(v, b" secondscumulname    ");
    }
}
