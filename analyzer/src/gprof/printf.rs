//! The few C `printf` conversions gprof's reports use, reproduced exactly.
//!
//! `%W.Pf` ([`push_f`]) is written straight into the output buffer: the value is rounded
//! exactly (the binary value times 10^P, rounded half to even on the exact integer, as glibc
//! does in the default rounding mode) with integer arithmetic, so that printing 60,000 rows
//! does not go through `core::fmt` and an allocation per field. Values too large for that
//! (beyond 2^60) go through Rust's `{:.P}`, which rounds the same way. `%g` has no Rust
//! equivalent and is written out here: shortest of `%e`/`%f` by C's exponent rule, trailing
//! zeros removed. Unit tests compare every conversion with the C library's `snprintf`.

use std::fmt::Write as _;

/// `%W.Pf` as a string (see [`push_f`]).
pub fn f(width: usize, prec: usize, v: f64) -> String {
    let mut out = Vec::with_capacity(width.max(24));
    push_f(&mut out, width, prec, v);
    // Only ASCII digits, signs, '.', spaces and the C names of infinities and NaNs.
    String::from_utf8(out).unwrap_or_default()
}

/// Append `%W.Pf` of `v` to `out`. Precisions above 9 are not needed by gprof and take the
/// slower `core::fmt` path.
pub fn push_f(out: &mut Vec<u8>, width: usize, prec: usize, v: f64) {
    if !v.is_finite() {
        pad_left(out, width, nonfinite(v).as_bytes());
        return;
    }
    if v.to_bits() == 0 && prec <= 9 {
        // +0.0 (most of a call graph's columns): "0." and `prec` zeros.
        let text = &b"0.000000000"[..if prec == 0 { 1 } else { prec + 2 }];
        pad_left(out, width, text);
        return;
    }
    let mut buf = [0u8; 64];
    match fixed_digits(v, prec, &mut buf) {
        Some(start) => pad_left(out, width, &buf[start..]),
        None => {
            let mut s = String::new();
            // Writing into a String cannot fail.
            let _ = write!(s, "{v:>width$.prec$}");
            out.extend_from_slice(s.as_bytes());
        }
    }
}

/// `%Wlu`: `n` right-aligned in `width` columns.
pub fn push_u(out: &mut Vec<u8>, width: usize, n: u64) {
    let mut buf = [0u8; 20];
    let start = u64_digits(n, &mut buf);
    pad_left(out, width, &buf[start..]);
}

/// `%-Wlu`: `n` left-aligned in `width` columns.
pub fn push_u_left(out: &mut Vec<u8>, width: usize, n: u64) {
    let mut buf = [0u8; 20];
    let start = u64_digits(n, &mut buf);
    out.extend_from_slice(&buf[start..]);
    out.extend(std::iter::repeat_n(b' ', width.saturating_sub(20 - start)));
}

/// `%lx`: `n` in lower-case hexadecimal.
pub fn push_x(out: &mut Vec<u8>, n: u64) {
    let mut buf = [0u8; 16];
    let mut i = buf.len();
    let mut v = n;
    loop {
        i -= 1;
        buf[i] = b"0123456789abcdef"[(v & 15) as usize];
        v >>= 4;
        if v == 0 {
            break;
        }
    }
    out.extend_from_slice(&buf[i..]);
}

fn pad_left(out: &mut Vec<u8>, width: usize, text: &[u8]) {
    out.extend(std::iter::repeat_n(b' ', width.saturating_sub(text.len())));
    out.extend_from_slice(text);
}

/// "00" to "99": two digits per division in [`u64_digits`].
const PAIRS: [u8; 200] = {
    let mut t = [0u8; 200];
    let mut i = 0;
    while i < 100 {
        t[2 * i] = b'0' + (i / 10) as u8;
        t[2 * i + 1] = b'0' + (i % 10) as u8;
        i += 1;
    }
    t
};

/// Decimal digits of `n` at the end of `buf`; returns where they start.
fn u64_digits(mut n: u64, buf: &mut [u8; 20]) -> usize {
    let mut i = buf.len();
    while n >= 100 {
        let r = (n % 100) as usize;
        n /= 100;
        i -= 2;
        buf[i..i + 2].copy_from_slice(&PAIRS[2 * r..2 * r + 2]);
    }
    if n >= 10 {
        i -= 2;
        buf[i..i + 2].copy_from_slice(&PAIRS[2 * n as usize..2 * n as usize + 2]);
    } else {
        i -= 1;
        buf[i] = b'0' + n as u8;
    }
    i
}

/// `%.Pf` of a finite `v` at the end of `buf` (returns where it starts), or `None` when
/// the exact integer arithmetic does not cover it (`prec > 9` or `|v| >= 2^60`).
fn fixed_digits(v: f64, prec: usize, buf: &mut [u8; 64]) -> Option<usize> {
    if prec > 9 {
        return None;
    }
    let bits = v.to_bits();
    let neg = bits >> 63 != 0;
    let exp_field = ((bits >> 52) & 0x7ff) as i32;
    let frac = bits & ((1u64 << 52) - 1);
    // v = m * 2^e exactly.
    let (m, e) = if exp_field == 0 {
        (frac, -1074)
    } else {
        (frac | (1u64 << 52), exp_field - 1075)
    };
    let scale = 10u128.pow(prec as u32);
    // x = m * 10^P < 2^53 * 2^30 = 2^83; the result is round(x * 2^e).
    let x = u128::from(m) * scale;
    let q: u128 = if e >= 0 {
        if e > 7 {
            return None; // |v| >= 2^60: leave it to core::fmt
        }
        x << e
    } else {
        let s = (-e) as u32;
        if s >= 127 {
            0 // x < 2^83 <= 2^(s-1): below one half, rounds to 0
        } else {
            let q = x >> s;
            let r = x & ((1u128 << s) - 1);
            let half = 1u128 << (s - 1);
            if r > half || (r == half && q & 1 == 1) {
                q + 1
            } else {
                q
            }
        }
    };
    // q < 2^91: integer part below 2^91 / 10^P, at most 28 digits; P <= 9 fraction digits.
    // 128-bit division is a library call: split in 64 bits when q fits (the usual case).
    let (mut int_part, mut frac_part) = match u64::try_from(q) {
        Ok(q) => {
            let scale = scale as u64;
            (u128::from(q / scale), q % scale)
        }
        Err(_) => (q / scale, (q % scale) as u64),
    };
    let mut i = buf.len();
    for _ in 0..prec {
        i -= 1;
        buf[i] = b'0' + (frac_part % 10) as u8;
        frac_part /= 10;
    }
    if prec > 0 {
        i -= 1;
        buf[i] = b'.';
    }
    while u64::try_from(int_part).is_err() {
        i -= 1;
        buf[i] = b'0' + (int_part % 10) as u8;
        int_part /= 10;
    }
    let mut int_part = int_part as u64;
    loop {
        i -= 1;
        buf[i] = b'0' + (int_part % 10) as u8;
        int_part /= 10;
        if int_part == 0 {
            break;
        }
    }
    if neg {
        i -= 1;
        buf[i] = b'-';
    }
    Some(i)
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
    fn hex_is_lx() {
        for n in [0u64, 1, 15, 16, 0x11c9, 0xdead_beef, u64::MAX] {
            let mut out = Vec::new();
            push_x(&mut out, n);
            assert_eq!(out, format!("{n:x}").into_bytes());
        }
    }

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

    /// C's `snprintf(fmt, width, prec, v)` for a format taking `*`, `.*` and a double.
    fn c_printf(fmt: &std::ffi::CStr, width: usize, prec: usize, v: f64) -> String {
        let mut buf = [0u8; 512];
        // SAFETY: the format takes exactly an int width, an int precision and a double; the
        // buffer is large enough for any double at precision <= 12 (at most 330 bytes) and
        // snprintf never writes past the length we give.
        let n = unsafe {
            libc::snprintf(
                buf.as_mut_ptr().cast(),
                buf.len(),
                fmt.as_ptr(),
                width as libc::c_int,
                prec as libc::c_int,
                v,
            )
        };
        assert!(
            n >= 0 && (n as usize) < buf.len(),
            "snprintf failed for {v:e}"
        );
        String::from_utf8(buf[..n as usize].to_vec()).unwrap()
    }

    /// A small deterministic generator (xorshift64*), so that failures reproduce.
    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
        }
        fn below(&mut self, n: u64) -> u64 {
            self.next() % n
        }
    }

    /// Doubles of every shape printf has to get right: any bit pattern, decimal ties
    /// (k + 0.5) / 10^P and their neighbours, binary fractions, sample-count ratios as gprof
    /// computes them, tiny and huge magnitudes, zeros of both signs.
    fn interesting(rng: &mut Rng) -> f64 {
        let v = match rng.below(8) {
            0 => f64::from_bits(rng.next()),
            1 => {
                let p = rng.below(7) as i32;
                let k = rng.below(2_000_000) as f64;
                let tie = (k + 0.5) / 10f64.powi(p);
                match rng.below(3) {
                    0 => tie,
                    1 => f64::from_bits(tie.to_bits() + 1),
                    _ => f64::from_bits(tie.to_bits().saturating_sub(1)),
                }
            }
            2 => rng.below(1 << 20) as f64 / (1u64 << rng.below(24)) as f64,
            3 => 100.0 * rng.below(5000) as f64 / (1 + rng.below(100_000)) as f64,
            4 => rng.below(100_000) as f64 / 1000.0 / (1 + rng.below(1000)) as f64 * 1e6,
            5 => (rng.next() as f64) * 10f64.powi(rng.below(40) as i32 - 20),
            6 => f64::from_bits(rng.below(1 << 20)) * [1.0, 1e300, 1e-300][rng.below(3) as usize],
            _ => [0.0, 0.005, 0.015, 0.125, 2.5, 1e22, 1.152921504606847e18][rng.below(7) as usize],
        };
        if rng.below(4) == 0 {
            -v
        } else {
            v
        }
    }

    #[test]
    fn fixed_matches_c_snprintf() {
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        for _ in 0..200_000 {
            let v = interesting(&mut rng);
            let width = rng.below(14) as usize;
            let prec = rng.below(11) as usize;
            let want = c_printf(c"%*.*f", width, prec, v);
            assert_eq!(
                f(width, prec, v),
                want,
                "%{width}.{prec}f of {v:e} ({:#x})",
                v.to_bits()
            );
            let mut pushed = b"x".to_vec();
            push_f(&mut pushed, width, prec, v);
            assert_eq!(&pushed[1..], want.as_bytes());
        }
        for v in [f64::INFINITY, f64::NEG_INFINITY, f64::NAN, -f64::NAN] {
            assert_eq!(f(8, 2, v), c_printf(c"%*.*f", 8, 2, v));
        }
    }

    #[test]
    fn g_matches_c_snprintf() {
        let mut rng = Rng(0x2545_f491_4f6c_dd1d);
        for _ in 0..100_000 {
            let v = match rng.below(3) {
                0 => interesting(&mut rng),
                // Sample periods: 1 / rate.
                1 => 1.0 / (1 + rng.below(10_000_000)) as f64,
                _ => (1 + rng.below(1_000_000)) as f64 * 10f64.powi(rng.below(20) as i32 - 10),
            };
            assert_eq!(
                g(v),
                c_printf(c"%*.*g", 0, 6, v),
                "%g of {v:e} ({:#x})",
                v.to_bits()
            );
        }
    }

    #[test]
    fn unsigned_matches_c_snprintf() {
        let mut rng = Rng(0x1234_5678_9abc_def1);
        for _ in 0..20_000 {
            let n = rng.next() >> rng.below(64);
            let width = rng.below(25) as usize;
            for (fmt, left) in [(c"%*lu", false), (c"%-*lu", true)] {
                let mut got = Vec::new();
                if left {
                    push_u_left(&mut got, width, n);
                } else {
                    push_u(&mut got, width, n);
                }
                let mut buf = [0u8; 64];
                // SAFETY: both formats take an int width and an unsigned long; the buffer
                // holds any 64-bit number padded to 24 columns and snprintf respects the
                // length.
                let len = unsafe {
                    libc::snprintf(
                        buf.as_mut_ptr().cast(),
                        buf.len(),
                        fmt.as_ptr(),
                        width as libc::c_int,
                        n as libc::c_ulong,
                    )
                };
                assert_eq!(got, &buf[..len as usize], "{fmt:?} width {width} of {n}");
            }
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
