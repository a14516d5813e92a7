//! Statistics of sample counts: how much a count of samples says about the time behind it.

/// `ln Γ(x)` for `x > 0` (Lanczos approximation, g = 7, n = 9): the intervals here and the
/// significance tests of [`crate::diff`].
pub fn ln_gamma(x: f64) -> f64 {
    const C: [f64; 9] = [
        0.999_999_999_999_809_9,
        676.520_368_121_885_1,
        -1_259.139_216_722_402_8,
        771.323_428_777_653_1,
        -176.615_029_162_140_6,
        12.507_343_278_686_905,
        -0.138_571_095_265_720_12,
        9.984_369_578_019_572e-6,
        1.505_632_735_149_311_6e-7,
    ];
    if x < 0.5 {
        let pi = std::f64::consts::PI;
        return (pi / (pi * x).sin()).ln() - ln_gamma(1.0 - x);
    }
    let x = x - 1.0;
    let t = x + 7.5;
    let sum = C[1..]
        .iter()
        .enumerate()
        .fold(C[0], |acc, (i, c)| acc + c / (x + i as f64 + 1.0));
    0.5 * (2.0 * std::f64::consts::PI).ln() + (x + 0.5) * t.ln() - t + sum.ln()
}

/// Regularized lower incomplete gamma `P(a, x)` (series below `a + 1`, continued fraction above).
fn gamma_p(a: f64, x: f64) -> f64 {
    if x <= 0.0 {
        return 0.0;
    }
    let lead = a * x.ln() - x - ln_gamma(a);
    if x < a + 1.0 {
        let (mut term, mut sum, mut n) = (1.0 / a, 1.0 / a, a);
        for _ in 0..1000 {
            n += 1.0;
            term *= x / n;
            sum += term;
            if term.abs() < sum.abs() * 1e-15 {
                break;
            }
        }
        (sum.ln() + lead).exp().min(1.0)
    } else {
        // Lentz's method for the continued fraction of Q(a, x).
        let tiny = 1e-300;
        let mut b = x + 1.0 - a;
        let mut c = 1.0 / tiny;
        let mut d = 1.0 / b;
        let mut h = d;
        for i in 1..1000 {
            let an = -(i as f64) * (i as f64 - a);
            b += 2.0;
            d = an * d + b;
            if d.abs() < tiny {
                d = tiny;
            }
            c = b + an / c;
            if c.abs() < tiny {
                c = tiny;
            }
            d = 1.0 / d;
            let del = d * c;
            h *= del;
            if (del - 1.0).abs() < 1e-15 {
                break;
            }
        }
        (1.0 - (lead.exp() * h)).max(0.0)
    }
}

/// The `x` where `f` (increasing in `x`) crosses `target`, by bisection.
fn solve_increasing(f: impl Fn(f64) -> f64, target: f64, mut lo: f64, mut hi: f64) -> f64 {
    while f(hi) < target {
        hi *= 2.0;
    }
    while hi - lo > 1e-7 * hi.max(1e-300) {
        let mid = 0.5 * (lo + hi);
        if f(mid) < target {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    0.5 * (lo + hi)
}

/// [`poisson_ci95`] for a list of counts in which equal counts are adjacent (report rows,
/// sorted by samples): the interval, an iterative solve, is computed once per run of equal
/// counts, not once per row.
#[derive(Debug, Default)]
pub struct Ci95OfSorted {
    last: Option<(u64, (f64, f64))>,
}

impl Ci95OfSorted {
    /// [`poisson_ci95`]`(n)`.
    pub fn of(&mut self, n: f64) -> (f64, f64) {
        match self.last {
            Some((bits, ci)) if bits == n.to_bits() => ci,
            _ => {
                let ci = poisson_ci95(n);
                self.last = Some((n.to_bits(), ci));
                ci
            }
        }
    }
}

/// Exact (Garwood) 95% interval for the mean of a Poisson count `n`: the means under which
/// seeing `n` or more (fewer) samples has probability 2.5%. Fractional counts, from bins
/// split between functions, use the gamma-function form of the same bounds.
pub fn poisson_ci95(n: f64) -> (f64, f64) {
    let n = n.max(0.0);
    // Whole counts up to 100 (most rows of a large profile) are solved once per thread:
    // the bisection costs thousands of `ln`/`exp` calls.
    if n <= 100.0 && n == n.trunc() {
        thread_local! {
            static WHOLE: std::cell::RefCell<[Option<(f64, f64)>; 101]> =
                const { std::cell::RefCell::new([None; 101]) };
        }
        let k = n as usize;
        if let Some(ci) = WHOLE.with(|w| w.borrow()[k]) {
            return ci;
        }
        let ci = poisson_ci95_solved(n);
        WHOLE.with(|w| w.borrow_mut()[k] = Some(ci));
        return ci;
    }
    poisson_ci95_solved(n)
}

fn poisson_ci95_solved(n: f64) -> (f64, f64) {
    if n > 100.0 {
        // Wilson–Hilferty: within 0.02% of the exact bounds from here on, and much cheaper.
        const Z: f64 = 1.959_963_984_540_054;
        let lo = n * (1.0 - 1.0 / (9.0 * n) - Z / (3.0 * n.sqrt())).powi(3);
        let m = n + 1.0;
        let hi = m * (1.0 - 1.0 / (9.0 * m) + Z / (3.0 * m.sqrt())).powi(3);
        return (lo, hi);
    }
    let lo = if n == 0.0 {
        0.0
    } else {
        solve_increasing(|l| gamma_p(n, l), 0.025, 0.0, n.max(1.0))
    };
    let hi = solve_increasing(|l| gamma_p(n + 1.0, l), 0.975, 0.0, n + 10.0);
    (lo, hi)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn poisson_interval_is_sane() {
        let (lo, hi) = poisson_ci95(0.0);
        assert_eq!(lo, 0.0);
        assert!((hi - 3.689).abs() < 0.01, "{hi}");
        // Exact Garwood interval for n = 10 is [4.795, 18.39].
        let (lo, hi) = poisson_ci95(10.0);
        assert!(
            (lo - 4.795).abs() < 0.05 && (hi - 18.39).abs() < 0.05,
            "{lo} {hi}"
        );
        let (lo, hi) = poisson_ci95(10000.0);
        assert!(lo < 10000.0 && hi > 10000.0 && hi - lo < 400.0 && hi - lo > 390.0);
        // Both methods agree where they meet.
        let (a, b) = (poisson_ci95(100.0), poisson_ci95(100.0 + 1e-9));
        assert!(
            (a.0 - b.0).abs() < 0.02 && (a.1 - b.1).abs() < 0.02,
            "{a:?} {b:?}"
        );
    }

    #[test]
    fn remembered_whole_counts_are_the_solved_ones() {
        for k in 0..=101 {
            let n = f64::from(k);
            let solved = poisson_ci95_solved(n);
            assert_eq!(poisson_ci95(n), solved, "{k}");
            assert_eq!(poisson_ci95(n), solved, "{k}, again");
        }
    }
}
