//! `--timeline`: samples over time by the top functions; built here, rendered as text and as an
//! SVG chart by [`crate::render::timeline`].
//!
//! The run is cut into equal time buckets (by the samples' timestamps). The functions with
//! the most samples overall each get a series; everything else is `other`. The text form
//! prints one row per series with one character per bucket, darker where the function took
//! a larger share of that bucket's samples, and a first row with the buckets' sample counts
//! on the same scale; the SVG form ([`crate::render::timeline::svg`]) draws stacked bars, one per bucket, with a
//! legend and a time axis.

use std::collections::HashMap;

/// How many functions get their own series.
pub const TOP: usize = 8;
/// Buckets in the text form and the chart.
pub const BUCKETS: usize = 60;

/// Samples per bucket per series.
#[derive(Debug, Clone, PartialEq)]
pub struct Timeline {
    /// Series names: the top functions by samples, then `other` if anything is left.
    pub series: Vec<String>,
    /// `counts[series][bucket]`.
    pub counts: Vec<Vec<u64>>,
    /// Duration of one bucket in ns.
    pub bucket_ns: u64,
}

/// Bucket `(time_ns, function)` samples.
pub fn build(samples: &[(u64, &str)], buckets: usize) -> Timeline {
    let buckets = buckets.max(1);
    let mut totals: HashMap<&str, u64> = HashMap::new();
    for (_, f) in samples {
        *totals.entry(f).or_default() += 1;
    }
    let mut order: Vec<(&str, u64)> = totals.into_iter().collect();
    order.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    let top: Vec<&str> = order.iter().take(TOP).map(|x| x.0).collect();
    let has_other = order.len() > TOP;
    let mut series: Vec<String> = top.iter().map(|s| s.to_string()).collect();
    if has_other {
        series.push("other".into());
    }
    let end = samples.iter().map(|s| s.0).max().unwrap_or(0);
    let bucket_ns = (end / buckets as u64 + 1).max(1);
    let mut counts = vec![vec![0u64; buckets]; series.len()];
    let index: HashMap<&str, usize> = top.iter().enumerate().map(|(i, s)| (*s, i)).collect();
    for (t, f) in samples {
        let b = ((t / bucket_ns) as usize).min(buckets - 1);
        let s = index
            .get(f)
            .copied()
            .unwrap_or(series.len().saturating_sub(1));
        if let Some(row) = counts.get_mut(s) {
            row[b] += 1;
        }
    }
    Timeline {
        series,
        counts,
        bucket_ns,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::render::timeline::{print_text, svg};

    #[test]
    fn buckets_and_series() {
        let mut samples = Vec::new();
        // f for the first half, g for the second, one of each of nine rare functions.
        for i in 0..100u64 {
            samples.push((i * 10, if i < 50 { "f" } else { "g" }));
        }
        let rare: Vec<String> = (0..9).map(|i| format!("r{i}")).collect();
        for r in &rare {
            samples.push((500, r.as_str()));
        }
        let t = build(&samples, 10);
        assert_eq!(t.series.len(), TOP + 1);
        assert_eq!(t.series[0], "f");
        assert_eq!(t.series.last().map(String::as_str), Some("other"));
        let f: u64 = t.counts[0].iter().sum();
        assert_eq!(f, 50);
        assert_eq!(t.counts[0][9], 0);
        assert!(t.counts[1][9] > 0);
        let total: u64 = t.counts.iter().flatten().sum();
        assert_eq!(total, samples.len() as u64);
        let svg = svg(&t, "a <title>");
        assert!(svg.starts_with("<svg") && svg.contains("a &lt;title&gt;"));
        let mut text = Vec::new();
        print_text(&t, &mut text).unwrap();
        let text = String::from_utf8(text).unwrap();
        assert!(
            text.lines()
                .any(|l| l.starts_with("f ") && l.ends_with("| 50")),
            "{text}"
        );
    }
}
