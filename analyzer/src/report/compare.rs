//! `--compare-gprof`: the installed GNU gprof's flat profile of the same inputs next to ours,
//! and per function why its self time differs. The pipeline runs gprof and the emulation and
//! passes their results here ([`build`] is plain data).
//!
//! The explanations come from replaying gprof's own rules ([`crate::gprof`]) on the same
//! executable: which symbols gprof rejects (dotted locals, IFUNCs, `.cold`/`.part`) and
//! who absorbs their samples, how far each gprof range reaches past `st_size`, which bins
//! straddle a boundary (gprof's 2-byte units), aliases, and saturated 16-bit bins.

use std::collections::HashMap;

use super::default::Report;
use crate::gprof::Analysis;
use crate::profile::OUTSIDE;

/// One row of gprof's flat profile.
#[derive(Debug, Clone, PartialEq)]
pub struct GprofRow {
    /// Self seconds.
    pub self_seconds: f64,
    /// Calls, if printed.
    pub calls: Option<u64>,
    /// The printed (demangled) name.
    pub name: String,
}

/// Parse the rows of `gprof -b -p` output (fixed columns: `%6.2f %9.2f %8.2f`, then either
/// ` %8lu %8.2f %8.2f  ` or 29 spaces, then the name).
pub fn parse_gprof_flat(text: &str) -> Vec<GprofRow> {
    let mut rows = Vec::new();
    for line in text
        .lines()
        .skip_while(|l| !l.starts_with(" time "))
        .skip(1)
    {
        if line.len() < 26 || !line.is_char_boundary(25) {
            continue;
        }
        let (nums, rest) = line.split_at(25);
        let f: Vec<&str> = nums.split_whitespace().collect();
        let Some(self_seconds) = f.get(2).and_then(|s| s.parse().ok()) else {
            continue;
        };
        let (calls, name) =
            if rest.len() >= 29 && rest.is_char_boundary(29) && rest[..29].trim().is_empty() {
                (None, rest[29..].to_owned())
            } else {
                // calls, self/call, total/call, then the name after two spaces.
                let mut tail = rest;
                let mut fields = Vec::new();
                for _ in 0..3 {
                    let t = tail.trim_start();
                    let end = t.find(' ').unwrap_or(t.len());
                    fields.push(&t[..end]);
                    tail = &t[end..];
                }
                (fields[0].parse().ok(), tail.trim_start().to_owned())
            };
        rows.push(GprofRow {
            self_seconds,
            calls,
            name,
        });
    }
    rows
}

/// One row of the comparison: a function whose self time differs from gprof's (by a
/// hundredth of a second or more, or that gprof prints under another name).
#[derive(Debug, Clone, PartialEq)]
pub struct CompareRow {
    /// The function (our name, or gprof's for a row only gprof has).
    pub function: String,
    /// Our self seconds (None: a row only gprof has).
    pub ours: Option<f64>,
    /// gprof's self seconds (None: gprof does not list it).
    pub gprof: Option<f64>,
    /// Ours minus gprof's.
    pub difference: f64,
    /// Why they differ (empty: rounding, gprof prints hundredths).
    pub why: Vec<String>,
}

/// The comparison with gprof.
#[derive(Debug, Clone)]
pub struct Comparison {
    /// Executable path.
    pub executable: String,
    /// Samples per second.
    pub hz: u32,
    /// All samples.
    pub total_samples: u64,
    /// The functions whose times differ, ours first (in our order), then gprof's only.
    pub rows: Vec<CompareRow>,
    /// The sum of gprof's rows.
    pub gprof_total_seconds: f64,
}

impl Comparison {
    /// All samples in seconds.
    pub fn total_seconds(&self) -> f64 {
        self.total_samples as f64 / f64::from(self.hz)
    }
}

/// Compare the flat profile of the installed gprof (`gprof_text`, `gprof -b -p` on the same
/// inputs) with `report`, explained by the emulation's analysis of them (`emulation`). Plain
/// data: the pipeline runs gprof and the emulation.
pub fn build(report: &Report, gprof_text: &str, emulation: Option<&Analysis<'_>>) -> Comparison {
    let gprof_rows = parse_gprof_flat(gprof_text);
    let hz = f64::from(report.hz);
    let mut by_name: HashMap<&str, &GprofRow> = HashMap::new();
    for g in &gprof_rows {
        by_name.entry(g.name.as_str()).or_insert(g);
    }
    let mut matched: HashMap<&str, bool> = HashMap::new();
    // gprof's name -> our functions whose samples it takes.
    let mut absorbed: HashMap<String, Vec<String>> = HashMap::new();
    let mut rows = Vec::new();
    for r in &report.rows {
        let ours = r.samples / hz;
        let demangled_aliases: Vec<String> = r
            .aliases
            .iter()
            .map(|a| profil_symbols::demangle::display_name(a).into_owned())
            .collect();
        let (g, shown_as) = match by_name.get(r.name.as_str()) {
            Some(g) => (Some(*g), None),
            None => match demangled_aliases
                .iter()
                .find_map(|a| by_name.get(a.as_str()).map(|g| (*g, a.clone())))
            {
                Some((g, a)) => (Some(g), Some(a)),
                None => (None, None),
            },
        };
        if let Some(g) = g {
            matched.insert(g.name.as_str(), true);
        }
        let theirs = g.map_or(0.0, |g| g.self_seconds);
        let diff = ours - theirs;
        let mut why: Vec<String> = Vec::new();
        if let Some(a) = &shown_as {
            why.push(format!("alias: gprof prints it as {a}"));
        }
        if r.name == OUTSIDE {
            why.push("samples outside every function (PLT, padding, code without symbols): gprof credits them to the symbol before them, or to nobody below the first symbol".into());
        }
        if let (Some(a), Some((addr, size))) = (emulation, r.span) {
            match a.symtab.lookup(addr) {
                Some(i) if a.symtab.syms[i].addr == addr => {
                    let gend = a.symtab.syms[i].end_addr.wrapping_add(1);
                    if gend > addr + size {
                        why.push(format!(
                            "gprof's range runs {} bytes past st_size (to the next symbol) and takes the samples there",
                            gend - addr - size
                        ));
                    }
                }
                Some(i) => {
                    let owner = String::from_utf8_lossy(&a.display_name(i)).into_owned();
                    why.push(format!(
                        "gprof rejects this symbol (dotted local name, IFUNC or fragment) and credits its samples to {owner}"
                    ));
                    absorbed.entry(owner).or_default().push(r.name.clone());
                }
                None => why.push("gprof has no symbol here".into()),
            }
        }
        if !r.fragments.is_empty() {
            why.push(format!(
                "includes {} that gprof credits to the symbol before them",
                r.fragments.join(", ")
            ));
        }
        if r.straddled {
            why.push("bins straddle its boundaries: we split them by bytes, gprof in 2-byte units with truncation".into());
        }
        if r.saturated {
            why.push("a bin reached 65535 samples: 16-bit counters may have wrapped".into());
        }
        if g.is_none() && r.span.is_some() && why.is_empty() {
            why.push("not listed by gprof".into());
        }
        if diff.abs() < 0.005 && shown_as.is_none() {
            continue;
        }
        rows.push(CompareRow {
            function: r.name.clone(),
            ours: Some(ours),
            gprof: g.map(|g| g.self_seconds),
            difference: diff,
            why,
        });
    }
    for g in &gprof_rows {
        if matched.contains_key(g.name.as_str()) || g.self_seconds < 0.005 {
            continue;
        }
        rows.push(CompareRow {
            function: g.name.clone(),
            ours: None,
            gprof: Some(g.self_seconds),
            difference: -g.self_seconds,
            why: vec![match absorbed.get(&g.name) {
                Some(names) => format!(
                    "gprof's range for this symbol also holds {}, which gprof does not list",
                    names.join(", ")
                ),
                None => "gprof's range for this symbol covers code that belongs to other functions or to no function".into(),
            }],
        });
    }
    Comparison {
        executable: report.executable.clone(),
        hz: report.hz,
        total_samples: report.total_samples,
        rows,
        gprof_total_seconds: gprof_rows.iter().map(|g| g.self_seconds).sum(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_gprof_rows() {
        let text = "Flat profile:\n\nEach sample counts as 0.01 seconds.\n  %   cumulative   self              self     total           \n time   seconds   seconds    calls  ms/call  ms/call  name    \n 35.54      0.44     0.44        1   440.67   440.67  global_a\n 10.00      0.50     0.06                             static_b\n  0.00      0.50     0.00  1234567890     0.00     0.00  std::vector<int, std::allocator<int> >::size() const\n";
        let rows = parse_gprof_flat(text);
        assert_eq!(rows.len(), 3);
        assert_eq!(
            rows[0],
            GprofRow {
                self_seconds: 0.44,
                calls: Some(1),
                name: "global_a".into()
            }
        );
        assert_eq!(
            rows[1],
            GprofRow {
                self_seconds: 0.06,
                calls: None,
                name: "static_b".into()
            }
        );
        assert_eq!(rows[2].calls, Some(1234567890));
        assert_eq!(
            rows[2].name,
            "std::vector<int, std::allocator<int> >::size() const"
        );
    }
}
