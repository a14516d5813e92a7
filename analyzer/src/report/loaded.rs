//! What a report across objects reads of each object and the row it makes of a function:
//! shared by the rows ([`super::objects`]) and the stacks pass ([`super::objects_stacks`]),
//! which reuses what the rows read, so that neither needs the other.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use profil_symbols::ElfImage;

use crate::profile::debuginfo::SymbolSource;
use crate::profile::input::read_file;

/// One row: a function of one object.
#[derive(Debug, Clone)]
pub struct ObjectRow {
    /// Object display name.
    pub object: String,
    /// Demangled function name (or `<outside known functions>`).
    pub function: String,
    /// Samples.
    pub samples: f64,
    /// `file:line` of the function's entry (the executable's functions, from DWARF).
    pub location: Option<String>,
    /// For a row of code without symbols (`<object+0xLO-0xHI>`), that half-open link-time
    /// range.
    pub unknown_range: Option<(u64, u64)>,
    /// For a function's row, its address and symbol: the function's identity (two instances
    /// of a generic function share a demangled name, never these).
    pub symbol: Option<(u64, String)>,
}

impl ObjectRow {
    /// What identifies the row's function: (object, symbol, address), or (object, name, 0)
    /// for a row that is no function.
    pub fn key(&self) -> (String, String, u64) {
        match &self.symbol {
            Some((addr, raw)) => (self.object.clone(), raw.clone(), *addr),
            None => (self.object.clone(), self.function.clone(), 0),
        }
    }
}

/// A function to name among the others of a report ([`distinct_names`]).
pub struct Named<'a> {
    /// Object display name.
    pub object: &'a str,
    /// Demangled name.
    pub display: std::borrow::Cow<'a, str>,
    /// Symbol.
    pub raw: &'a str,
    /// Address (0 outside functions).
    pub addr: u64,
}

impl<'a> Named<'a> {
    /// A row's function (`None` for a row that is no function).
    pub fn of_row(r: &'a ObjectRow) -> Option<Named<'a>> {
        let (addr, raw) = r.symbol.as_ref()?;
        Some(Named {
            object: &r.object,
            display: profil_symbols::demangle::display_name(raw),
            raw,
            addr: *addr,
        })
    }
}

/// A name for each of `items`, in order: the demangled name, told apart where two different
/// functions of one object share it ([`profil_symbols::distinguish`]; the executable's
/// `exe_data` is read for generic arguments only when its names collide).
pub fn distinct_names(items: &[Named<'_>], exe_name: &str, exe_data: &[u8]) -> Vec<String> {
    let mut by_object: HashMap<&str, Vec<usize>> = HashMap::new();
    for (i, n) in items.iter().enumerate() {
        by_object.entry(n.object).or_default().push(i);
    }
    // Every item is in one object's list, so each is named below.
    let mut out: Vec<String> = vec![String::new(); items.len()];
    let mut generics: Option<HashMap<u64, String>> = None;
    for (object, members) in by_object {
        let plain = |generic: Option<&HashMap<u64, String>>| -> Vec<String> {
            let list: Vec<profil_symbols::distinguish::Instance<'_>> = members
                .iter()
                .map(|&i| profil_symbols::distinguish::Instance {
                    display: &items[i].display,
                    raw: items[i].raw,
                    addr: items[i].addr,
                    generic: generic
                        .and_then(|g| g.get(&items[i].addr))
                        .map(String::as_str),
                })
                .collect();
            profil_symbols::distinguish::distinguish(&list)
        };
        let mut names = plain(None);
        let collided = names
            .iter()
            .zip(&members)
            .any(|(n, &i)| *n != items[i].display);
        if collided && object == exe_name {
            let g = generics.get_or_insert_with(|| profil_symbols::dwarf::generic_names(exe_data));
            names = plain(Some(g));
        }
        for (n, &i) in names.into_iter().zip(&members) {
            out[i] = n;
        }
    }
    // The executable's legacy Rust instances are told apart among all its functions of the
    // same path, not only those shown, so that every view names an instance alike.
    if items
        .iter()
        .any(|n| n.object == exe_name && profil_symbols::distinguish::legacy_path(n.raw).is_some())
    {
        let groups = same_path_groups(exe_data);
        if !groups.is_empty() {
            let g = generics.get_or_insert_with(|| profil_symbols::dwarf::generic_names(exe_data));
            let mut named: HashMap<&str, Vec<String>> = HashMap::new();
            for (i, n) in items.iter().enumerate() {
                let path = match profil_symbols::distinguish::legacy_path(n.raw) {
                    Some(p) if n.object == exe_name => p,
                    _ => continue,
                };
                let Some(group) = groups.get(path) else {
                    continue;
                };
                let names = named.entry(path).or_insert_with(|| {
                    let displays: Vec<String> = group
                        .iter()
                        .map(|(r, _)| profil_symbols::demangle::display_name(r).into_owned())
                        .collect();
                    let list: Vec<profil_symbols::distinguish::Instance<'_>> = group
                        .iter()
                        .zip(&displays)
                        .map(
                            |((raw, addr), display)| profil_symbols::distinguish::Instance {
                                display,
                                raw,
                                addr: *addr,
                                generic: g.get(addr).map(String::as_str),
                            },
                        )
                        .collect();
                    profil_symbols::distinguish::distinguish(&list)
                });
                if let Some(k) = group.iter().position(|(r, a)| r == n.raw && *a == n.addr) {
                    out[i] = names[k].clone();
                }
            }
        }
    }
    out
}

/// The executable's legacy Rust functions by path ([`profil_symbols::distinguish::legacy_path`]),
/// the paths with more than one function only: (symbol, address) of each.
fn same_path_groups(exe_data: &[u8]) -> HashMap<String, Vec<(String, u64)>> {
    let mut groups: HashMap<String, Vec<(String, u64)>> = HashMap::new();
    let Ok(image) = ElfImage::parse(exe_data) else {
        return groups;
    };
    let Some(table) = image.symtab.as_ref().or(image.dynsym.as_ref()) else {
        return groups;
    };
    let map = profil_symbols::ranges::FunctionMap::build(&image, table);
    for f in &map.functions {
        let raw = String::from_utf8_lossy(f.name);
        if let Some(path) = profil_symbols::distinguish::legacy_path(&raw) {
            groups
                .entry(path.to_owned())
                .or_default()
                .push((raw.clone().into_owned(), f.addr));
        }
    }
    groups.retain(|_, v| v.len() > 1);
    groups
}

/// Read an object and pick its symbol source ([`crate::profile::debuginfo`]: `.symtab`, the
/// build-id debug file, the `.gnu_debuglink` file, `.dynsym`). Errors are short reasons.
pub fn load_object(
    path: &Path,
    build_id: &[u8],
    debug_root: &Path,
) -> std::result::Result<(Vec<u8>, SymbolSource), String> {
    let data = read_file(path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?
        .to_vec();
    ElfImage::parse(&data).map_err(|e| format!("{}: {e}", path.display()))?;
    let (debug, source) =
        crate::profile::debuginfo::find_symbols(path, &data, build_id, debug_root);
    Ok((debug.unwrap_or(data), source))
}

/// What [`super::objects::attribute`] read, for the stacks pass ([`super::objects_stacks::measure`]) to reuse
/// instead of reading and parsing every object, and the executable's DWARF, a second time.
#[derive(Debug, Default)]
pub struct Loaded {
    /// Each object's symbol file (its own bytes, or its debug file), by the object's path.
    pub files: HashMap<PathBuf, Vec<u8>>,
    /// The executable's function locations (object 0, when it had samples).
    pub exe_locations: Option<HashMap<u64, profil_symbols::dwarf::Location>>,
}

/// Samples closer than this (bytes) outside every symbol of an object are one
/// `<object+0xLO-0xHI>` row.
pub(crate) const UNKNOWN_GAP: u64 = 0x400;

/// What the executable's line tables say about its sampled functions (`(address, size,
/// samples)`): the `file:line` of each entry that has a line, and a warning when most of the
/// samples lie in code with no line table at all (cargo's release default, `debug = false`,
/// keeps only the standard library's lines), naming the `Cargo.toml` setting. `rust`: the
/// program is Rust (only then is there a warning).
pub fn line_tables(
    exe_name: &str,
    data: &[u8],
    functions: &[(u64, u64, f64)],
    rust: bool,
) -> (HashMap<u64, String>, Option<String>) {
    let wanted: Vec<(u64, u64)> = functions
        .iter()
        .map(|&(a, size, _)| (a, a + size.max(1)))
        .collect();
    let lines = profil_symbols::lines::line_map(data, &wanted);
    let mut entries = HashMap::new();
    let (mut without, mut all) = (0.0, 0.0);
    for &(a, size, samples) in functions {
        all += samples;
        if lines.overlapping(a, a + size.max(1)).is_empty() {
            without += samples;
        }
        if let Some(span) = lines.lookup(a) {
            entries.insert(a, format!("{}:{}", lines.file(span), span.line));
        }
    }
    // Only for Rust: a C program built without -g is what gprof users have always profiled,
    // and says so at its build; cargo's release default hides it.
    let warning = (rust && all > 0.0 && without / all > 0.5)
        .then(|| no_line_tables(exe_name, &format!("{:.0}% of", 100.0 * without / all)));
    (entries, warning)
}

/// The one warning for a Rust program whose own code has no line tables: `share` says how
/// much of its samples (`"87% of"`, `"all"`), and the `Cargo.toml` setting to add is named.
pub fn no_line_tables(exe_name: &str, share: &str) -> String {
    format!(
        "{exe_name}: {share} the program's samples are in code without line tables, so its \
         rows have no location and --lines, --inline and --own-lines cannot name its lines; \
         add to Cargo.toml: [profile.release] debug = \"line-tables-only\" (`cargo profil \
         --release` adds line tables to the binary it builds)"
    )
}

/// Whether the executable is a Rust program: its `main` starts Rust's runtime
/// (`std::rt::lang_start`). Rust symbols alone do not say it: a C program with the profil-rs
/// runtime linked in has them too.
pub fn is_rust(image: &ElfImage<'_>) -> bool {
    image
        .symtab
        .as_ref()
        .or(image.dynsym.as_ref())
        .is_some_and(|t| {
            t.symbols
                .iter()
                .any(|s| t.name(s).windows(10).any(|w| w == b"lang_start"))
        })
}

/// The names of the executable's functions `shown` (indexes into `map`), told apart where
/// their demangled names collide ([`distinct_names`]).
pub fn function_names(
    map: &profil_symbols::ranges::FunctionMap<'_>,
    shown: &[usize],
    exe_data: &[u8],
) -> HashMap<usize, String> {
    let raws: Vec<String> = shown
        .iter()
        .map(|&i| String::from_utf8_lossy(map.functions[i].name).into_owned())
        .collect();
    let named: Vec<Named<'_>> = shown
        .iter()
        .zip(&raws)
        .map(|(&i, raw)| Named {
            object: "",
            display: profil_symbols::demangle::display_name(raw),
            raw,
            addr: map.functions[i].addr,
        })
        .collect();
    shown
        .iter()
        .copied()
        .zip(distinct_names(&named, "", exe_data))
        .collect()
}

/// Samples outside every symbol of an object, `(lo, hi, samples)` pieces, grouped into the
/// address ranges the report names (pieces no more than `UNKNOWN_GAP`, 1 KiB, apart are one), in
/// address order.
pub fn group_unknown(mut pieces: Vec<(u64, u64, f64)>) -> Vec<(u64, u64, f64)> {
    pieces.sort_by_key(|p| p.0);
    let mut groups: Vec<(u64, u64, f64)> = Vec::new();
    for (lo, hi, s) in pieces {
        match groups.last_mut() {
            Some(g) if lo <= g.1.saturating_add(UNKNOWN_GAP) => {
                g.1 = g.1.max(hi);
                g.2 += s;
            }
            _ => groups.push((lo, hi, s)),
        }
    }
    groups
}

/// The name of code of `object` outside every symbol in `[lo, hi)`: `<object+0xLO-0xHI>`.
pub fn unknown_name(object: &str, lo: u64, hi: u64) -> String {
    format!("<{object}+{lo:#x}-{hi:#x}>")
}

/// The name of a stack frame at `addr` of `object` outside every symbol: the range of
/// `ranges` (the object's [`group_unknown`] ranges) that holds it, or is within the grouping
/// gap of it, else its own 4 KiB page. Every view names such a frame this way.
pub fn unknown_frame_name(object: &str, ranges: &[(u64, u64)], addr: u64) -> String {
    let (lo, hi) = ranges
        .iter()
        .copied()
        .find(|&(lo, hi)| {
            addr >= lo.saturating_sub(UNKNOWN_GAP) && addr < hi.saturating_add(UNKNOWN_GAP)
        })
        .unwrap_or_else(|| {
            let lo = addr & !0xfff;
            (lo, lo + 0x1000)
        });
    unknown_name(object, lo, hi)
}
