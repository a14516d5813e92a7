//! A pcsample timeline as text and as an SVG chart: rendering only; the timeline is built in
//! [`crate::report::timeline`].

use std::io::Write;

use crate::report::timeline::Timeline;
use crate::Result;

const SHADES: &[u8] = b" .:-=+*#%@";

fn shade(part: u64, whole: u64) -> char {
    if part == 0 || whole == 0 {
        return ' ';
    }
    let k = ((part as f64 / whole as f64) * (SHADES.len() - 1) as f64).ceil() as usize;
    SHADES[k.clamp(1, SHADES.len() - 1)] as char
}

/// The text form.
pub fn print_text(t: &Timeline, out: &mut impl Write) -> Result<()> {
    let n = t.counts.first().map_or(0, Vec::len);
    let per_bucket: Vec<u64> = (0..n)
        .map(|b| t.counts.iter().map(|r| r[b]).sum())
        .collect();
    let max = per_bucket.iter().copied().max().unwrap_or(0);
    let secs = t.bucket_ns as f64 * n as f64 / 1e9;
    writeln!(
        out,
        "Timeline: {n} buckets of {:.3} s ({:.2} s); each character is the share of that bucket's samples",
        t.bucket_ns as f64 / 1e9,
        secs
    )?;
    let width = t
        .series
        .iter()
        .map(|s| s.chars().count())
        .max()
        .unwrap_or(0)
        .clamp(7, 40);
    let label = |s: &str| -> String {
        let mut l: String = s.chars().take(width).collect();
        while l.chars().count() < width {
            l.push(' ');
        }
        l
    };
    let row: String = per_bucket.iter().map(|&c| shade(c, max)).collect();
    writeln!(out, "{} |{row}|", label("samples"))?;
    for (name, counts) in t.series.iter().zip(&t.counts) {
        let row: String = counts
            .iter()
            .zip(&per_bucket)
            .map(|(&c, &w)| shade(c, w))
            .collect();
        let total: u64 = counts.iter().sum();
        writeln!(out, "{} |{row}| {total}", label(name))?;
    }
    writeln!(
        out,
        "{} 0 s{:>w$}",
        " ".repeat(width),
        format!("{secs:.2} s"),
        w = n.saturating_sub(1)
    )?;
    Ok(())
}

const COLORS: [&str; 9] = [
    "#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7",
    "#bab0ac",
];

fn xml(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// The SVG chart: stacked bars per bucket, legend on the right, time axis below.
pub fn svg(t: &Timeline, title: &str) -> String {
    let n = t.counts.first().map_or(0, Vec::len).max(1);
    let per_bucket: Vec<u64> = (0..n)
        .map(|b| {
            t.counts
                .iter()
                .map(|r| r.get(b).copied().unwrap_or(0))
                .sum()
        })
        .collect();
    let max = per_bucket.iter().copied().max().unwrap_or(0).max(1);
    let (left, top, plot_w, plot_h) = (60.0, 40.0, 720.0, 300.0);
    let legend_x = left + plot_w + 20.0;
    let width = legend_x + 360.0;
    let height = top + plot_h + 60.0;
    let bar_w = plot_w / n as f64;
    let mut s = String::new();
    s += &format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width}\" height=\"{height}\" viewBox=\"0 0 {width} {height}\" font-family=\"sans-serif\" font-size=\"12\">\n"
    );
    s += &format!("<rect width=\"{width}\" height=\"{height}\" fill=\"white\"/>\n");
    s += &format!(
        "<text x=\"{left}\" y=\"24\" font-size=\"15\" font-weight=\"bold\">{}</text>\n",
        xml(title)
    );
    // Axes and grid.
    for k in 0..=4 {
        let y = top + plot_h - plot_h * k as f64 / 4.0;
        let v = max as f64 * k as f64 / 4.0;
        s += &format!(
            "<line x1=\"{left}\" y1=\"{y}\" x2=\"{}\" y2=\"{y}\" stroke=\"#ddd\"/>\n<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{v:.0}</text>\n",
            left + plot_w,
            left - 6.0,
            y + 4.0
        );
    }
    for (b, _) in per_bucket.iter().enumerate() {
        let mut y = top + plot_h;
        for (si, row) in t.counts.iter().enumerate() {
            let c = row.get(b).copied().unwrap_or(0);
            if c == 0 {
                continue;
            }
            let h = plot_h * c as f64 / max as f64;
            y -= h;
            s += &format!(
                "<rect x=\"{:.2}\" y=\"{y:.2}\" width=\"{:.2}\" height=\"{h:.2}\" fill=\"{}\"/>\n",
                left + bar_w * b as f64,
                bar_w.max(1.0) - if bar_w > 3.0 { 1.0 } else { 0.0 },
                COLORS[si % COLORS.len()]
            );
        }
    }
    s += &format!(
        "<line x1=\"{left}\" y1=\"{0}\" x2=\"{1}\" y2=\"{0}\" stroke=\"black\"/>\n<line x1=\"{left}\" y1=\"{top}\" x2=\"{left}\" y2=\"{0}\" stroke=\"black\"/>\n",
        top + plot_h,
        left + plot_w
    );
    let secs = t.bucket_ns as f64 * n as f64 / 1e9;
    for k in 0..=4 {
        let x = left + plot_w * k as f64 / 4.0;
        s += &format!(
            "<text x=\"{x}\" y=\"{}\" text-anchor=\"middle\">{:.2} s</text>\n",
            top + plot_h + 18.0,
            secs * k as f64 / 4.0
        );
    }
    s += &format!(
        "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">time since start</text>\n<text x=\"16\" y=\"{}\" transform=\"rotate(-90 16 {})\" text-anchor=\"middle\">samples per bucket</text>\n",
        left + plot_w / 2.0,
        top + plot_h + 40.0,
        top + plot_h / 2.0,
        top + plot_h / 2.0
    );
    for (si, name) in t.series.iter().enumerate() {
        let y = top + 18.0 * si as f64;
        let total: u64 = t.counts[si].iter().sum();
        let short: String = name.chars().take(44).collect();
        s += &format!(
            "<rect x=\"{legend_x}\" y=\"{y}\" width=\"12\" height=\"12\" fill=\"{}\"/>\n<text x=\"{}\" y=\"{}\">{} ({total})</text>\n",
            COLORS[si % COLORS.len()],
            legend_x + 18.0,
            y + 10.0,
            xml(&short)
        );
    }
    s += "</svg>\n";
    s
}
