//! `--own-lines`: time by the program's own source lines.
//!
//! In a Rust release build most samples land in code inlined from the standard library and
//! the crates of the registry (`/rustc/<hash>/library/…`, `~/.cargo/registry/…`), so
//! `--lines` credits lines the user did not write. This view credits each sample to the
//! **innermost frame in the program's own code**: the sample's inline chain at its PC,
//! innermost first, then each caller's (its return address's inline chain), until a frame's
//! line is in one of the program's files. That line gets the sample, under the function
//! whose code it is; with `--chains`, each row also lists what ran below it (from the
//! program's frame down to the sampled one, `own_fn > std_fn > … > leaf`). Samples with no
//! frame of the program's own are one `<outside the program's own code>` row, so the rows
//! sum to the total.
//!
//! The frames are the exports' ([`crate::export::model`]): with the runtime's stacks file,
//! the exact PC of each sample whose innermost frame is in the executable, and the return
//! addresses above it; without one, the histogram, a bin going by its first byte (no
//! callers: only inline chains are followed).
//!
//! **The program's own code** ([`Scope`]): by default, the package's source tree (a file
//! named relative to the compilation directory, or under the current directory), or, with
//! `--own-crates`, every file outside the standard library (`/rustc/…`, `library/…`, and
//! its own dependencies, `/rust/deps/…`), the cargo registry and git checkouts (`…/.cargo/registry/…`, `…/.cargo/git/…`), and `/usr/`.
//!
//! The output is the line report's ([`super::lines::LineReport`], rendered by
//! [`crate::render::lines`]) with its `own` field set.

use std::collections::HashMap;
use std::path::Path;

use gmon::Target;
use profil_symbols::inline::inline_map;
use profil_symbols::lines::line_map;
use profil_symbols::ranges::FunctionMap;
use profil_symbols::ElfImage;

use super::lines::{read_histograms, LineReport, LineRow};
use super::Inputs;
use crate::profile::OUTSIDE;
use crate::Result;

/// The row of samples with no frame in the program's own code.
pub const NOT_OWN: &str = "<outside the program's own code>";

/// Which files are the program's own.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Scope {
    /// The package's source tree (relative paths, or under the current directory).
    #[default]
    Package,
    /// Every crate outside the standard library and the cargo registry.
    Crates,
}

impl Scope {
    /// `--own-crates` or not.
    pub fn with_crates(crates: bool) -> Scope {
        if crates {
            Scope::Crates
        } else {
            Scope::Package
        }
    }

    /// How the report's title names the scope.
    pub fn describe(self) -> &'static str {
        match self {
            Scope::Package => "the package's source tree",
            Scope::Crates => "every crate outside the standard library and the registry",
        }
    }

    /// Whether `file` (as the line table names it) is the program's own. `cwd`: the current
    /// directory.
    pub fn owns(self, file: &str, cwd: Option<&Path>) -> bool {
        let foreign = file.starts_with("/rustc/")
            || file.starts_with("library/")
            || file.starts_with("/rust/deps/")
            || file.contains("/.cargo/registry/")
            || file.contains("/.cargo/git/")
            || file.contains("/.rustup/toolchains/")
            || file.starts_with('<');
        if foreign || file.is_empty() {
            return false;
        }
        match self {
            Scope::Package => {
                !file.starts_with('/') || cwd.is_some_and(|c| Path::new(file).starts_with(c))
            }
            Scope::Crates => !file.starts_with("/usr/"),
        }
    }
}

/// One level of a frame: the function whose code it is and its line, if known.
#[derive(Debug, Clone)]
struct Level {
    function: String,
    file: Option<String>,
    line: u64,
}

/// Compute the view. `chains`: list, per row, what ran below the program's frame.
pub fn build(
    inputs: &Inputs,
    image: &ElfImage<'_>,
    scope: Scope,
    chains: bool,
) -> Result<LineReport> {
    let hist = read_histograms(inputs, Target::of_executable(image.is_64, image.big_endian))?;
    let table = image.symtab.as_ref().or(image.dynsym.as_ref());
    let map = table.map(|t| FunctionMap::build(image, t));
    // Each sample's frames in the executable (innermost first) and its count.
    let stacks: Vec<(Vec<u64>, u64)> =
        match crate::profile::stacks::Sampled::find(&inputs.gmons, &mut Vec::new())? {
            Some(s) => s
                .stacks
                .iter()
                .filter(|st| st.frames.first().is_some_and(|f| f.object == Some(0)))
                .map(|st| {
                    let frames = st
                        .frames
                        .iter()
                        .filter(|f| f.object == Some(0))
                        .map(|f| f.addr)
                        .collect();
                    (frames, st.count)
                })
                .collect(),
            None => hist
                .sampled_bins()
                .map(|b| (vec![(b.lo / b.n) as u64], b.count))
                .collect(),
        };
    let wanted: Vec<(u64, u64)> = stacks
        .iter()
        .flat_map(|(f, _)| f.iter().map(|&a| (a, a + 1)))
        .collect();
    let inl = inline_map(&inputs.exe.data, &wanted);
    let lines = line_map(&inputs.exe.data, &wanted);
    // The functions on the stacks by their names, told apart as in the other reports.
    let mut shown: Vec<usize> = match &map {
        Some(m) => wanted
            .iter()
            .filter_map(|&(a, _)| m.function_at(a))
            .collect(),
        None => Vec::new(),
    };
    shown.sort_unstable();
    shown.dedup();
    let names: HashMap<usize, String> = match &map {
        Some(m) => super::loaded::function_names(m, &shown, &inputs.exe.data),
        None => HashMap::new(),
    };
    let symbol = |addr: u64| -> String {
        map.as_ref()
            .and_then(|m| m.function_at(addr))
            .and_then(|i| names.get(&i).cloned())
            .unwrap_or_else(|| OUTSIDE.to_owned())
    };
    // The levels of the code at `addr`, innermost first.
    let levels_at = |addr: u64| -> Vec<Level> {
        let leaf = lines
            .lookup(addr)
            .map(|s| (lines.file(s).to_owned(), s.line));
        let chain = inl.chain(addr);
        if chain.is_empty() {
            return vec![Level {
                function: symbol(addr),
                file: leaf.as_ref().map(|l| l.0.clone()),
                line: leaf.map_or(0, |l| l.1),
            }];
        }
        let name = |k: usize| match (k, inl.name(chain[k])) {
            (0, _) if map.as_ref().is_some_and(|m| m.function_at(addr).is_some()) => symbol(addr),
            (_, Some(n)) => n.to_owned(),
            (_, None) => symbol(addr),
        };
        let mut out = Vec::with_capacity(chain.len());
        let n = chain.len();
        out.push(Level {
            function: name(n - 1),
            file: leaf.as_ref().map(|l| l.0.clone()),
            line: leaf.map_or(0, |l| l.1),
        });
        for k in (0..n - 1).rev() {
            // Level k's line is where level k+1 was inlined.
            let site = inl.call_site(chain[k + 1]);
            let (file, line) = match site.as_deref().and_then(|s| s.rsplit_once(':')) {
                Some((f, l)) => (Some(f.to_owned()), l.parse().unwrap_or(0)),
                None => (None, 0),
            };
            out.push(Level {
                function: name(k),
                file,
                line,
            });
        }
        out
    };
    let cwd = std::env::current_dir().ok();
    let mut memo: HashMap<u64, Vec<Level>> = HashMap::new();
    // (file, line) or the outside row → samples, and per function (or chain) text.
    type Key = Option<(String, u64)>;
    let mut per_key: HashMap<Key, f64> = HashMap::new();
    let mut per_fn: HashMap<(Key, String), f64> = HashMap::new();
    let mut total = 0u64;
    for (frames, count) in &stacks {
        total += count;
        let mut below: Vec<String> = Vec::new();
        let mut found: Option<(Key, String)> = None;
        'frames: for &addr in frames {
            let levels = memo.entry(addr).or_insert_with(|| levels_at(addr));
            for l in levels.iter() {
                if let Some(file) = &l.file {
                    if scope.owns(file, cwd.as_deref()) {
                        let text = if chains && !below.is_empty() {
                            let mut steps = vec![l.function.clone()];
                            steps.extend(below.iter().rev().cloned());
                            steps.join(" > ")
                        } else {
                            l.function.clone()
                        };
                        found = Some((Some((file.clone(), l.line)), text));
                        break 'frames;
                    }
                }
                if below.last() != Some(&l.function) {
                    below.push(l.function.clone());
                }
            }
        }
        let (key, text) = found.unwrap_or_else(|| (None, NOT_OWN.to_owned()));
        *per_key.entry(key.clone()).or_default() += *count as f64;
        *per_fn.entry((key, text)).or_default() += *count as f64;
    }
    let mut fns_of: HashMap<Key, Vec<(f64, String)>> = HashMap::new();
    for ((k, f), c) in per_fn {
        fns_of.entry(k).or_default().push((c, f));
    }
    let mut rows: Vec<LineRow> = per_key
        .into_iter()
        .map(|(k, samples)| {
            let mut fns = fns_of.remove(&k).unwrap_or_default();
            fns.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
            let (file, line) = match k {
                Some((f, l)) => (Some(f), Some(l)),
                None => (None, None),
            };
            LineRow {
                file,
                line,
                functions: fns.into_iter().map(|(_, f)| f).collect(),
                samples,
            }
        })
        .collect();
    super::lines::sort_rows(&mut rows);
    Ok(LineReport {
        executable: inputs.exe.name(),
        gmon_files: inputs.gmons.iter().map(|g| g.name()).collect(),
        hz: hist.hz,
        total_samples: total,
        rows,
        units_decoded: lines.units_decoded,
        own: Some(scope.describe().to_owned()),
    })
}
