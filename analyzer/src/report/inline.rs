//! `--inline`: self time by the source function the code came from, through inlining.
//!
//! In optimized code, and in Rust above all, most hot code has been inlined: its samples
//! fall inside a caller's symbol, and a flat profile by symbol credits the caller. DWARF
//! records every inlined copy (`DW_TAG_inlined_subroutine`, [`profil_symbols::inline`]), so
//! each sample can go to the *innermost* function whose code it is.
//!
//! Two views:
//!
//! * **by source function**: one row per function, counting all its inlined copies and its
//!   out-of-line body together, with how many distinct places it was inlined into;
//! * **by inline chain**: one row per chain `outer > … > inner` (the out-of-line function
//!   first, each inlined step with the `file:line` it was inlined at).
//!
//! The samples are those the exports' inline frames count ([`crate::export::model`]): with
//! the runtime's stacks file, the exact PC of each sample in the executable (its stack's
//! innermost frame); without it, the histogram, where a bin that covers bytes of two chains
//! is split by byte overlap, as everywhere in the default report, so both views sum to the
//! total. The outermost function of a chain is named by its symbol, as the exports name it,
//! and instances of one generic function are told apart as everywhere
//! ([`super::loaded::distinct_names`]). Code without DWARF falls back to its
//! ELF symbol (a chain of one), and code outside every symbol to
//! `<outside known functions>`.
//!
//! `--json` prints `{"executable", "gmon_files", "hz", "total_samples", "total_seconds",
//! "functions": [..], "chains": [..]}`; `--csv` prints the functions view. Fields of a
//! function row: `rank`, `function`, `raw_name`, `location` (the `file:line` with most of its
//! samples, null without line tables), `percent`, `self_seconds`, `samples`,
//! `inlined_samples` (samples in inlined copies), `inclusive_samples` (samples of every
//! chain the function is part of, each chain once), `copies` (distinct chains that end in
//! this function), `inlined_into` (out-of-line functions holding a copy). Fields of a
//! chain row: `rank`, `chain` (names, outermost first), `call_sites` (`file:line` of each
//! inlining step), `location` (its hottest `file:line`), `percent`, `self_seconds`,
//! `samples`. The tables show names up to 48 characters, the location, and the first function
//! holding a copy with how many more.

use std::collections::{BTreeSet, HashMap};

use gmon::Target;
use profil_symbols::demangle::display_name;
use profil_symbols::inline::inline_map;
use profil_symbols::ranges::FunctionMap;
use profil_symbols::ElfImage;

use super::lines::read_histograms;
use super::Inputs;
use crate::profile::OUTSIDE;
use crate::Result;

/// One step of an inline chain.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Step {
    /// Raw (usually mangled) name.
    pub raw_name: String,
    /// Where this step was inlined (`file:line`); None for the outermost function.
    pub call_site: Option<String>,
}

/// Samples of one chain.
#[derive(Debug, Clone)]
pub struct ChainRow {
    /// Outermost first.
    pub steps: Vec<Step>,
    /// Self samples.
    pub samples: f64,
    /// The `file:line` with most of its samples (the line table's line at their address).
    pub location: Option<String>,
}

/// Samples of one source function, all copies together.
#[derive(Debug, Clone)]
pub struct FunctionRow {
    /// Raw name.
    pub raw_name: String,
    /// Demangled name.
    pub name: String,
    /// All samples whose innermost function this is.
    pub samples: f64,
    /// Of those, the samples in inlined copies.
    pub inlined_samples: f64,
    /// Samples of every chain this function is part of (its own code and what was inlined
    /// into it, each chain counted once).
    pub inclusive_samples: f64,
    /// Distinct chains ending in this function.
    pub copies: usize,
    /// Demangled names of the out-of-line functions that hold an inlined copy.
    pub inlined_into: Vec<String>,
    /// The `file:line` with most of its samples.
    pub location: Option<String>,
}

/// The inline report before formatting.
#[derive(Debug, Clone)]
pub struct InlineReport {
    /// Executable path.
    pub executable: String,
    /// gmon file paths.
    pub gmon_files: Vec<String>,
    /// Samples per second.
    pub hz: u32,
    /// All samples.
    pub total_samples: u64,
    /// By source function, most samples first.
    pub functions: Vec<FunctionRow>,
    /// By chain, most samples first.
    pub chains: Vec<ChainRow>,
    /// The name each step's raw name is shown by (instances of a generic function told
    /// apart).
    pub names: HashMap<String, String>,
}

impl InlineReport {
    /// All samples in seconds.
    pub fn total_seconds(&self) -> f64 {
        self.total_samples as f64 / f64::from(self.hz)
    }

    /// `samples` as a percentage of all samples.
    pub fn percent(&self, samples: f64) -> f64 {
        100.0 * samples / self.total_samples.max(1) as f64
    }

    /// `samples` in seconds.
    pub fn seconds(&self, samples: f64) -> f64 {
        samples / f64::from(self.hz)
    }

    /// The name a step's raw name is shown by.
    pub fn name_of(&self, raw: &str) -> String {
        self.names
            .get(raw)
            .cloned()
            .unwrap_or_else(|| display_name(raw).into_owned())
    }
}

/// Compute the inline report.
pub fn build(inputs: &Inputs, image: &ElfImage<'_>) -> Result<InlineReport> {
    let hist = read_histograms(inputs, Target::of_executable(image.is_64, image.big_endian))?;
    let table = image.symtab.as_ref().or(image.dynsym.as_ref());
    let map = table.map(|t| FunctionMap::build(image, t));
    let bins: Vec<_> = hist.sampled_bins().collect();
    // With the runtime's stacks: the exact PC of every sample in the executable (the stack's
    // innermost frame), the samples the exports' inline frames count.
    let leaves: Option<Vec<(u64, u64)>> =
        crate::profile::stacks::Sampled::find(&inputs.gmons, &mut Vec::new())?.map(|s| {
            s.stacks
                .iter()
                .filter_map(|st| {
                    let f = st.frames.first()?;
                    (f.object == Some(0)).then_some((f.addr, st.count))
                })
                .collect()
        });
    let wanted: Vec<(u64, u64)> = match &leaves {
        Some(l) => l.iter().map(|&(a, _)| (a, a + 1)).collect(),
        None => bins.iter().map(|b| b.addr_range()).collect(),
    };
    let inl = inline_map(&inputs.exe.data, &wanted);
    let lines = profil_symbols::lines::line_map(&inputs.exe.data, &wanted);
    let line_at = |addr: u64| {
        lines
            .lookup(addr)
            .map(|l| format!("{}:{}", lines.file(l), l.line))
    };
    // Each outermost function by its symbol, as the exports name it (the entry address too,
    // for telling instances of one generic function apart).
    let function_at = |addr: u64| -> Option<(String, u64)> {
        let m = map.as_ref()?;
        let f = &m.functions[m.function_at(addr)?];
        Some((String::from_utf8_lossy(f.name).into_owned(), f.addr))
    };
    let mut entries: HashMap<String, u64> = HashMap::new();
    let mut symbol_at = |addr: u64| -> String {
        match function_at(addr) {
            Some((raw, entry)) => {
                entries.insert(raw.clone(), entry);
                raw
            }
            None => OUTSIDE.to_owned(),
        }
    };
    let mut chain_at = |addr: u64| -> Vec<Step> {
        let frames = inl.chain(addr);
        if frames.is_empty() {
            return vec![Step {
                raw_name: symbol_at(addr),
                call_site: None,
            }];
        }
        frames
            .iter()
            .enumerate()
            .map(|(k, f)| Step {
                raw_name: match (k, inl.name(f)) {
                    // The outermost frame is the symbol's code, named as the exports do.
                    (0, n) => match function_at(addr) {
                        Some(_) => symbol_at(addr),
                        None => n.unwrap_or(OUTSIDE).to_owned(),
                    },
                    (_, Some(n)) => n.to_owned(),
                    (_, None) => "<unnamed inlined code>".to_owned(),
                },
                call_site: if k == 0 { None } else { inl.call_site(f) },
            })
            .collect()
    };
    let mut per_chain: HashMap<Vec<Step>, f64> = HashMap::new();
    // Samples per chain and line.
    let mut per_line: HashMap<(Vec<Step>, Option<String>), f64> = HashMap::new();
    let mut add = |chain: Vec<Step>, addr: u64, n: f64| {
        *per_line.entry((chain.clone(), line_at(addr))).or_default() += n;
        *per_chain.entry(chain).or_default() += n;
    };
    let mut total = 0u64;
    match &leaves {
        Some(leaves) => {
            for &(addr, count) in leaves {
                total += count;
                add(chain_at(addr), addr, count as f64);
            }
        }
        None => {
            for b in &bins {
                total += b.count;
                let (lo_a, hi_a) = b.addr_range();
                let mut cuts: Vec<u128> = vec![b.lo];
                cuts.extend(
                    inl.boundaries(lo_a, hi_a)
                        .into_iter()
                        .map(|a| u128::from(a) * b.n)
                        .filter(|&c| b.lo < c && c < b.hi),
                );
                cuts.push(b.hi);
                for w in cuts.windows(2) {
                    let addr = (w[0] / b.n) as u64;
                    add(chain_at(addr), addr, b.share(w[0], w[1]));
                }
            }
        }
    }
    // The hottest line of each chain and of each innermost function.
    let mut chain_line: HashMap<Vec<Step>, (f64, Option<String>)> = HashMap::new();
    let mut fn_lines: HashMap<(String, Option<String>), f64> = HashMap::new();
    for ((steps, line), n) in per_line {
        if let Some(inner) = steps.last() {
            *fn_lines
                .entry((inner.raw_name.clone(), line.clone()))
                .or_default() += n;
        }
        let e = chain_line.entry(steps).or_insert((f64::MIN, None));
        if n > e.0 || (n == e.0 && line < e.1) {
            *e = (n, line);
        }
    }
    let mut fn_line: HashMap<String, (f64, Option<String>)> = HashMap::new();
    for ((raw, line), n) in fn_lines {
        let e = fn_line.entry(raw).or_insert((f64::MIN, None));
        if n > e.0 || (n == e.0 && line < e.1) {
            *e = (n, line);
        }
    }
    let mut chains: Vec<ChainRow> = per_chain
        .into_iter()
        .map(|(steps, samples)| {
            let location = chain_line.remove(&steps).and_then(|l| l.1);
            ChainRow {
                steps,
                samples,
                location,
            }
        })
        .collect();
    chains.sort_by(|a, b| {
        b.samples
            .total_cmp(&a.samples)
            .then_with(|| a.steps.cmp(&b.steps))
    });
    struct Acc {
        samples: f64,
        inclusive: f64,
        inlined: f64,
        copies: usize,
        into: BTreeSet<String>,
    }
    let mut per_fn: HashMap<String, Acc> = HashMap::new();
    let new_acc = || Acc {
        samples: 0.0,
        inclusive: 0.0,
        inlined: 0.0,
        copies: 0,
        into: BTreeSet::new(),
    };
    for c in &chains {
        let distinct: BTreeSet<&str> = c.steps.iter().map(|s| s.raw_name.as_str()).collect();
        for name in distinct {
            per_fn
                .entry(name.to_owned())
                .or_insert_with(new_acc)
                .inclusive += c.samples;
        }
        let inner = c
            .steps
            .last()
            .map(|s| s.raw_name.clone())
            .unwrap_or_default();
        let acc = per_fn.entry(inner).or_insert_with(new_acc);
        acc.samples += c.samples;
        acc.copies += 1;
        if c.steps.len() > 1 {
            acc.inlined += c.samples;
            acc.into.insert(c.steps[0].raw_name.clone());
        }
    }
    // Names told apart where instances collide, as in the other reports and the exports.
    let mut raws: Vec<String> = per_fn.keys().cloned().collect();
    raws.extend(
        chains
            .iter()
            .flat_map(|c| &c.steps)
            .map(|s| s.raw_name.clone())
            .filter(|r| !per_fn.contains_key(r)),
    );
    raws.sort_unstable();
    raws.dedup();
    let named: Vec<super::loaded::Named<'_>> = raws
        .iter()
        .map(|raw| super::loaded::Named {
            object: "",
            display: display_name(raw),
            raw,
            addr: entries.get(raw).copied().unwrap_or(0),
        })
        .collect();
    let names: HashMap<String, String> = raws
        .iter()
        .cloned()
        .zip(super::loaded::distinct_names(&named, "", &inputs.exe.data))
        .collect();
    drop(named);
    let mut functions: Vec<FunctionRow> = per_fn
        .into_iter()
        .map(|(raw, a)| FunctionRow {
            name: names[&raw].clone(),
            location: fn_line.remove(&raw).and_then(|l| l.1),
            raw_name: raw,
            samples: a.samples,
            inlined_samples: a.inlined,
            inclusive_samples: a.inclusive,
            copies: a.copies,
            inlined_into: {
                let mut into: Vec<String> = a
                    .into
                    .iter()
                    .map(|r| {
                        names
                            .get(r)
                            .cloned()
                            .unwrap_or_else(|| display_name(r).into_owned())
                    })
                    .collect();
                into.sort_unstable();
                into
            },
        })
        .collect();
    functions.sort_by(|a, b| {
        b.samples
            .total_cmp(&a.samples)
            .then_with(|| a.name.cmp(&b.name))
    });
    Ok(InlineReport {
        executable: inputs.exe.name(),
        gmon_files: inputs.gmons.iter().map(|g| g.name()).collect(),
        hz: hist.hz,
        total_samples: total,
        functions,
        chains,
        names,
    })
}
