//! `hist_print`: gprof 2.40's flat profile table (GNU form, or BSD with `-T`); its
//! explanation is [`super::report::print_report`]'s.

use std::cmp::Ordering;

use super::msort::{msort, NameKey};
use super::printf;
use super::symspec::Table;
use super::Analysis;

/// Options of the flat profile.
#[derive(Debug, Clone, Copy, Default)]
pub struct FlatOptions {
    /// `-z`: also print symbols with neither time nor calls.
    pub zeros: bool,
    /// `-T`: BSD style (no title here, the granularity header, `ms/call`, other widths,
    /// names with their cycle and index).
    pub bsd: bool,
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

/// `cmp_time` over symbols `l` and `r`: time descending, then calls descending, then raw
/// name (`strcmp`: names have no NUL).
fn cmp_time(time: &[f64], calls: &[u64], names: &[&[u8]], l: usize, r: usize) -> Ordering {
    let diff = time[r] - time[l];
    if diff > 0.0 {
        return Ordering::Greater;
    }
    if diff < 0.0 {
        return Ordering::Less;
    }
    if calls[r] > calls[l] {
        return Ordering::Greater;
    }
    if calls[r] < calls[l] {
        return Ordering::Less;
    }
    names[l].cmp(names[r])
}

/// The symbols in flat-profile order, before the exclusion filter; without `zeros` only
/// those the flat profile can print (not those with neither time nor calls, which it skips
/// without `-z`): dropping elements of a consistent order keeps the others' order, and under
/// `-l` most symbols are such lines.
pub fn time_sorted(a: &Analysis<'_>, zeros: bool) -> Vec<usize> {
    let n = a.symtab.len().min(a.time.len()).min(a.cg.nodes.len());
    let calls: Vec<u64> = a.cg.nodes[..n].iter().map(|x| x.ncalls).collect();
    let names: Vec<&[u8]> = a.symtab.syms[..n].iter().map(|s| s.name).collect();
    time_order(&a.time[..n], &calls, &names, zeros)
}

/// gprof's `qsort(..., cmp_time)` over `0..time.len()`.
///
/// glibc's qsort is a merge sort. When every time is finite, `cmp_time` is a consistent
/// order whose only ties are symbols equal in time, calls and name; a merge sort is stable,
/// so any sort by (time, calls, name, position) gives the same permutation, and an unstable
/// sort of precomputed keys is much cheaper than [`msort`] through indices. Infinite or NaN
/// times (a histogram scale of 0) make the comparison inconsistent; then glibc's exact
/// merge order is reproduced with [`msort`].
///
/// Without `zeros`, the fast path leaves out the symbols with no time and no calls.
fn time_order(time: &[f64], calls: &[u64], names: &[&[u8]], zeros: bool) -> Vec<usize> {
    let n = time.len();
    if time.iter().any(|t| !t.is_finite()) {
        let mut order: Vec<usize> = (0..n).collect();
        msort(&mut order, |&l, &r| cmp_time(time, calls, names, l, r));
        return order;
    }
    let mut keys: Vec<(f64, u64, NameKey<'_>, usize)> = (0..n)
        .filter(|&i| zeros || calls[i] != 0 || time[i] != 0.0)
        .map(|i| (time[i], calls[i], NameKey::new(names[i]), i))
        .collect();
    keys.sort_unstable_by(|l, r| {
        // Finite times: `r - l > 0` exactly when `r > l` (an overflow keeps the sign).
        r.0.partial_cmp(&l.0)
            .unwrap_or(Ordering::Equal)
            .then(r.1.cmp(&l.1))
            .then(l.2.cmp(&r.2))
            .then(l.3.cmp(&r.3))
    });
    keys.into_iter().map(|k| k.3).collect()
}

/// Print the flat profile table exactly as `gprof -b -p` (or `-T -b -p`) does (`out` goes to
/// `sink` a megabyte at a time: [`super::sink::spill`]).
pub fn print(
    a: &Analysis<'_>,
    opts: FlatOptions,
    out: &mut Vec<u8>,
    sink: &mut dyn std::io::Write,
) -> std::io::Result<()> {
    let hz = f64::from(a.hist.hz);
    if !opts.bsd {
        out.extend_from_slice(b"Flat profile:\n");
    }
    // Under -d gprof's look-ups in its tables (with their traces) run for every symbol.
    let order = time_sorted(a, opts.zeros || a.spec_tables.is_some());
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
    if opts.bsd {
        // Milliseconds, BSD's default.
        idx = 5;
    } else if top.is_some() && top_time > 0.0 {
        let t = top_time / hz;
        // gprof's loop can run off the table (index 11), e.g. with a rate of 0 (t infinite).
        idx = SI
            .iter()
            .position(|&(_, s)| (1.0..1000.0).contains(&(s * t)))
            .unwrap_or(SI.len());
    }
    // Off the table, gprof 2.40 (Debian's build) reads the byte after SItab: it prints `<`
    // (tests/integration/malformed.rs, rate-zero.gmon); the smallest unit's scale stands in for its scale.
    let (prefix, scale) = SI.get(idx).copied().unwrap_or((b'<', SI[SI.len() - 1].1));
    let dim = a.hist.dimension.as_slice();
    let unit = [prefix, a.hist.abbrev, b'/', b'c', b'a', b'l', b'l'];
    let mut total = a.total_time;
    if opts.bsd {
        // `(long) hist_scale * sizeof (UNIT)`
        let granularity = (a.hist.scale as i64).wrapping_mul(2);
        out.extend_from_slice(
            format!("\ngranularity: each sample hit covers {granularity} byte(s)").as_bytes(),
        );
        if total > 0.0 {
            out.extend_from_slice(b" for ");
            printf::push_f(out, 0, 2, 100.0 / total);
            out.extend_from_slice(b"% of ");
            printf::push_f(out, 0, 2, total / hz);
            out.push(b' ');
            out.extend_from_slice(dim);
            out.extend_from_slice(b"\n\n");
        }
    } else {
        out.extend_from_slice(b"\nEach sample counts as ");
        out.extend_from_slice(printf::g(1.0 / hz).as_bytes());
        out.push(b' ');
        out.extend_from_slice(dim);
        out.extend_from_slice(b".\n");
    }
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
    // Under -d, gprof's look-ups in its tables print their traces among the rows.
    let mut probes = super::debug::Trace::new(a.trace.level);
    for &i in &order {
        let on = match a.spec_tables.as_deref() {
            Some(t) => {
                let addr = a.symtab.syms[i].addr;
                let on = t.on(Table::InclFlat, Table::ExclFlat, addr, &mut probes);
                out.append(&mut probes.out);
                on
            }
            None => a.select.flat.on(i),
        };
        if !on {
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
        if opts.bsd {
            // "%5.1f %10.2f %8.2f"
            printf::push_f(out, 5, 1, pct);
            out.push(b' ');
            printf::push_f(out, 10, 2, accum / hz);
        } else {
            printf::push_f(out, 6, 2, pct);
            out.push(b' ');
            printf::push_f(out, 9, 2, accum / hz);
        }
        out.push(b' ');
        printf::push_f(out, 8, 2, time / hz);
        if n.ncalls != 0 {
            let calls = n.ncalls as f64;
            out.push(b' ');
            printf::push_u(out, 8, n.ncalls);
            out.push(b' ');
            printf::push_f(out, 8, 2, scale * time / hz / calls);
            out.push(b' ');
            printf::push_f(out, 8, 2, scale * (time + n.child_time) / hz / calls);
            out.extend_from_slice(b"  ");
        } else {
            out.extend_from_slice(&[b' '; 29]);
        }
        if opts.bsd {
            super::cg_print::print_name(a, i, out);
        } else {
            let _ = a.push_display_name(i, out);
        }
        out.push(b'\n');
        super::sink::spill(out, sink)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The fast path must give glibc's merge order (msort with gprof's comparator) exactly,
    /// including ties between equal names (static functions of the same name), negative
    /// zeros, and the fallback for infinite and NaN times.
    #[test]
    fn time_order_is_the_merge_sort_order() {
        let mut rng = super::super::TestRng(0x0123_4567_89ab_cdefu64);
        let mut next = move |k: u64| rng.below(k);
        let names_pool: [&[u8]; 5] = [b"a", b"b", b"ab", b"f1", b"_x"];
        for round in 0..3000 {
            let n = next(200) as usize;
            let special = round % 10 == 0;
            let time: Vec<f64> = (0..n)
                .map(|_| match next(if special { 8 } else { 6 }) {
                    0 => 0.0,
                    1 => -0.0,
                    2 => 1.0,
                    3 => 0.5,
                    4 => 1e308,
                    5 => -1e308,
                    6 => f64::INFINITY,
                    _ => f64::NAN,
                })
                .collect();
            let calls: Vec<u64> = (0..n).map(|_| next(3) * (u64::MAX / 2)).collect();
            let names: Vec<&[u8]> = (0..n).map(|_| names_pool[next(5) as usize]).collect();
            let mut want: Vec<usize> = (0..n).collect();
            msort(&mut want, |&l, &r| cmp_time(&time, &calls, &names, l, r));
            assert_eq!(
                time_order(&time, &calls, &names, true),
                want,
                "round {round}"
            );
            if !special {
                let printed: Vec<usize> = want
                    .iter()
                    .copied()
                    .filter(|&i| calls[i] != 0 || time[i] != 0.0)
                    .collect();
                assert_eq!(time_order(&time, &calls, &names, false), printed);
            }
        }
    }
}
