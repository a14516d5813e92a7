//! `hist_print`: gprof 2.40's flat profile in its brief (`-b`) GNU form.

use std::cmp::Ordering;

use super::msort::msort;
use super::printf;
use super::Analysis;

/// Options of the flat profile.
#[derive(Debug, Clone, Copy, Default)]
pub struct FlatOptions {
    /// `-z`: also print symbols with neither time nor calls.
    pub zeros: bool,
}

/// gprof's SI prefixes for the per-call columns, largest unit first.
const SI: [(u8, f64); 11] = [
    (b'T', 1e-12),
    (b'G', 1e-09),
    (b'M', 1e-06),
    (b'K', 1e-03),
    (b' ', 1.0),
    (b'm', 1e+03),
    (b'u', 1e+06),
    (b'n', 1e+09),
    (b'p', 1e+12),
    (b'f', 1e+15),
    (b'a', 1e+18),
];

/// `cmp_time`: time descending, then calls descending, then raw name.
fn cmp_time(a: &Analysis<'_>, l: usize, r: usize) -> Ordering {
    let diff = a.time[r] - a.time[l];
    if diff > 0.0 {
        return Ordering::Greater;
    }
    if diff < 0.0 {
        return Ordering::Less;
    }
    let (lc, rc) = (a.cg.nodes[l].ncalls, a.cg.nodes[r].ncalls);
    if rc > lc {
        return Ordering::Greater;
    }
    if rc < lc {
        return Ordering::Less;
    }
    a.symtab.syms[l].name.cmp(a.symtab.syms[r].name)
}

/// The symbols in flat-profile order (all of them, before the zero and exclusion filters).
pub fn time_sorted(a: &Analysis<'_>) -> Vec<usize> {
    let mut order: Vec<usize> = (0..a.symtab.len()).collect();
    msort(&mut order, |&l, &r| cmp_time(a, l, r));
    order
}

/// Print the flat profile exactly as `gprof -b -p` does.
pub fn print(a: &Analysis<'_>, opts: FlatOptions, out: &mut Vec<u8>) {
    let hz = f64::from(a.hist.hz);
    out.extend_from_slice(b"Flat profile:\n");
    let order = time_sorted(a);
    let mut top: Option<f64> = None;
    let mut top_time = 0.0f64;
    for &i in &order {
        let n = &a.cg.nodes[i];
        if n.ncalls != 0 {
            let t = (a.time[i] + n.child_time) / n.ncalls as f64;
            if t > top_time {
                top = Some(t);
                top_time = t;
            }
        }
    }
    let mut idx = 0;
    if top.is_some() && top_time > 0.0 {
        let t = top_time / hz;
        // gprof's loop can run off the table (index 11), e.g. with a rate of 0 (t infinite).
        idx = SI
            .iter()
            .position(|&(_, s)| (1.0..1000.0).contains(&(s * t)))
            .unwrap_or(SI.len());
    }
    // Off the table, gprof 2.40 (Debian's build) reads the byte after SItab: it prints `<`
    // (tests/malformed.rs, rate-zero.gmon); the smallest unit's scale stands in for its scale.
    let (prefix, scale) = SI.get(idx).copied().unwrap_or((b'<', SI[SI.len() - 1].1));
    let dim = a.hist.dimension.as_slice();
    let unit = [prefix, a.hist.abbrev, b'/', b'c', b'a', b'l', b'l'];
    out.extend_from_slice(b"\nEach sample counts as ");
    out.extend_from_slice(printf::g(1.0 / hz).as_bytes());
    out.push(b' ');
    out.extend_from_slice(dim);
    out.extend_from_slice(b".\n");
    let mut total = a.total_time;
    if total <= 0.0 {
        out.extend_from_slice(b" no time accumulated\n\n");
        total = 1.0;
    }
    // printf("%5.5s %10.10s %8.8s %8.8s %8.8s %8.8s  %-8.8s\n", ...)
    let cols1: [(&[u8], usize, &[u8]); 6] = [
        (b"%  ", 5, b" "),
        (b"cumulative", 10, b" "),
        (b"self  ", 8, b" "),
        (b"", 8, b" "),
        (b"self  ", 8, b" "),
        (b"total ", 8, b"  "),
    ];
    // printf("%5.5s %9.9s  %8.8s %8.8s %8.8s %8.8s  %-8.8s\n", ...)
    let cols2: [(&[u8], usize, &[u8]); 6] = [
        (b"time", 5, b" "),
        (dim, 9, b"  "),
        (dim, 8, b" "),
        (b"calls", 8, b" "),
        (&unit, 8, b" "),
        (&unit, 8, b"  "),
    ];
    for (cols, name) in [(cols1, &b""[..]), (cols2, &b"name"[..])] {
        for (text, w, sep) in cols {
            printf::s(out, w, w, false, text);
            out.extend_from_slice(sep);
        }
        printf::s(out, 8, 8, true, name);
        out.push(b'\n');
    }
    let mut accum = 0.0f64;
    for &i in &order {
        if a.excluded[i] {
            continue;
        }
        let n = &a.cg.nodes[i];
        let time = a.time[i];
        if !opts.zeros && n.ncalls == 0 && time == 0.0 {
            continue;
        }
        accum += time;
        let pct = if total > 0.0 {
            100.0 * time / total
        } else {
            0.0
        };
        out.extend_from_slice(printf::f(6, 2, pct).as_bytes());
        out.push(b' ');
        out.extend_from_slice(printf::f(9, 2, accum / hz).as_bytes());
        out.push(b' ');
        out.extend_from_slice(printf::f(8, 2, time / hz).as_bytes());
        if n.ncalls != 0 {
            let calls = n.ncalls as f64;
            out.extend_from_slice(format!(" {:>8}", n.ncalls).as_bytes());
            out.push(b' ');
            out.extend_from_slice(printf::f(8, 2, scale * time / hz / calls).as_bytes());
            out.push(b' ');
            out.extend_from_slice(
                printf::f(8, 2, scale * (time + n.child_time) / hz / calls).as_bytes(),
            );
            out.extend_from_slice(b"  ");
        } else {
            out.extend_from_slice(&[b' '; 29]);
        }
        out.extend_from_slice(&a.display_name(i));
        out.push(b'\n');
    }
}
