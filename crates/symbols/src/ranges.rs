//! Honest function ranges for the default report.
//!
//! gprof gives every symbol the bytes up to the next symbol, so padding, PLT stubs and code
//! without a symbol are silently credited to whatever precedes them. Here a function covers
//! exactly `[st_value, st_value + st_size)`; bytes outside every function stay outside.
//! Symbols with the same address and size are one function with several names (aliases).
//! Compiler-split fragments (`foo.cold`, `foo.part.0`, `foo.cold.3`) are folded into the
//! function whose name they extend, when that function exists. A function symbol with size 0
//! gets the bytes up to the next function symbol in its section (marked `size_known = false`).

use object::elf;

use crate::elf::{ElfImage, SymbolTable};

/// One function, possibly with several names and several address ranges.
#[derive(Debug, Clone)]
pub struct Function<'data> {
    /// The preferred name (global before weak before local, then fewest leading underscores).
    pub name: &'data [u8],
    /// Other names at the same address and size.
    pub aliases: Vec<&'data [u8]>,
    /// Names of the fragments folded into this function.
    pub fragments: Vec<&'data [u8]>,
    /// Link-time address of the entry.
    pub addr: u64,
    /// Size from `st_size` (or up to the next symbol when `size_known` is false).
    pub size: u64,
    /// Whether `st_size` was non-zero.
    pub size_known: bool,
    /// Local (`STB_LOCAL`) symbol.
    pub is_static: bool,
}

/// A contiguous piece of code and the function it belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Range {
    /// First byte (link-time address).
    pub start: u64,
    /// One past the last byte.
    pub end: u64,
    /// Index into [`FunctionMap::functions`].
    pub function: usize,
}

/// Functions and their disjoint, sorted ranges.
#[derive(Debug, Clone, Default)]
pub struct FunctionMap<'data> {
    /// The functions, in address order of their entries.
    pub functions: Vec<Function<'data>>,
    /// Disjoint ranges sorted by start.
    pub ranges: Vec<Range>,
}

fn bind_rank(bind: u8) -> u8 {
    match bind {
        b if b == elf::STB_GLOBAL.0 => 0,
        b if b == elf::STB_WEAK.0 => 1,
        _ => 2,
    }
}

fn underscores(name: &[u8]) -> usize {
    name.iter().take_while(|&&c| c == b'_').count()
}

/// The parent name of a split fragment (`foo.cold.1` → `foo`), if `name` is one.
pub fn fragment_parent(name: &[u8]) -> Option<&[u8]> {
    let s = name;
    let pos = [&b".cold"[..], &b".part."[..]]
        .iter()
        .filter_map(|pat| s.windows(pat.len()).position(|w| w == *pat))
        .min()?;
    // ".cold" must end the name or be followed by '.'.
    let rest = &s[pos..];
    if rest.starts_with(b".cold") && !(rest.len() == 5 || rest[5] == b'.') {
        return None;
    }
    (pos > 0).then(|| &s[..pos])
}

/// Resolve overlaps (a function symbol inside another's `st_size`, or sizes that run into the
/// next function): every byte goes to the innermost range covering it, the one that starts
/// last (ties: the one that ends first). Adjacent pieces of one function are merged.
fn make_disjoint(ranges: &[Range]) -> Vec<Range> {
    if ranges.windows(2).all(|w| w[0].end <= w[1].start) {
        // Already disjoint (the usual symbol table): only the merging of adjacent pieces.
        let mut out: Vec<Range> = Vec::with_capacity(ranges.len());
        for &r in ranges {
            match out.last_mut() {
                Some(last) if last.end == r.start && last.function == r.function => {
                    last.end = r.end
                }
                _ => out.push(r),
            }
        }
        return out;
    }
    make_disjoint_overlapping(ranges)
}

/// [`make_disjoint`] for ranges that overlap: a sweep over the elementary segments.
fn make_disjoint_overlapping(ranges: &[Range]) -> Vec<Range> {
    use std::cmp::Reverse;
    use std::collections::BTreeSet;
    let mut bounds: Vec<u64> = ranges.iter().flat_map(|r| [r.start, r.end]).collect();
    bounds.sort_unstable();
    bounds.dedup();
    // `ranges` is sorted by start; walk the elementary segments with the set of ranges that
    // cover them.
    let mut active: BTreeSet<(u64, Reverse<u64>, usize)> = BTreeSet::new();
    let mut ends: BTreeSet<(u64, usize)> = BTreeSet::new();
    let mut next = 0;
    let mut out: Vec<Range> = Vec::new();
    for w in bounds.windows(2) {
        let (lo, hi) = (w[0], w[1]);
        while next < ranges.len() && ranges[next].start <= lo {
            let r = ranges[next];
            active.insert((r.start, Reverse(r.end), next));
            ends.insert((r.end, next));
            next += 1;
        }
        while let Some(&(end, i)) = ends.first() {
            if end > lo {
                break;
            }
            ends.pop_first();
            active.remove(&(ranges[i].start, Reverse(end), i));
        }
        let Some(&(_, _, i)) = active.last() else {
            continue;
        };
        let function = ranges[i].function;
        match out.last_mut() {
            Some(last) if last.end == lo && last.function == function => last.end = hi,
            _ => out.push(Range {
                start: lo,
                end: hi,
                function,
            }),
        }
    }
    out
}

impl<'data> FunctionMap<'data> {
    /// Build the map from one symbol table of `image`.
    pub fn build(image: &ElfImage<'data>, table: &SymbolTable<'data>) -> Self {
        struct Cand<'d> {
            name: &'d [u8],
            addr: u64,
            size: u64,
            bind: u8,
            section: u32,
        }
        let mut cands: Vec<Cand<'data>> = Vec::new();
        for s in &table.symbols {
            let is_code_type = s.typ == elf::STT_FUNC.0 || s.typ == elf::STT_GNU_IFUNC.0;
            if !is_code_type || s.shndx == 0 || s.shndx >= u32::from(elf::SHN_LORESERVE) {
                continue;
            }
            let Some(sec) = image.sections.get(s.shndx as usize) else {
                continue;
            };
            if !sec.is_exec() {
                continue;
            }
            let name = table.name(s);
            if name.is_empty() {
                continue;
            }
            cands.push(Cand {
                name,
                addr: s.value,
                size: s.size,
                bind: s.bind,
                section: s.shndx,
            });
        }
        // Sizes of zero: up to the next distinct address in the same section.
        cands.sort_by(|a, b| a.addr.cmp(&b.addr).then(b.size.cmp(&a.size)));
        let n = cands.len();
        let mut sizes = vec![0u64; n];
        for i in 0..n {
            if cands[i].size > 0 {
                sizes[i] = cands[i].size;
                continue;
            }
            let sec = &image.sections[cands[i].section as usize];
            let sec_end = sec.addr.saturating_add(sec.size);
            let next = cands[i + 1..]
                .iter()
                .find(|c| c.addr > cands[i].addr && c.section == cands[i].section)
                .map_or(sec_end, |c| c.addr.min(sec_end));
            sizes[i] = next.saturating_sub(cands[i].addr);
        }
        // Group aliases: same address and same size.
        let mut functions: Vec<Function<'data>> = Vec::new();
        let mut i = 0;
        while i < n {
            let mut j = i + 1;
            while j < n && cands[j].addr == cands[i].addr && sizes[j] == sizes[i] {
                j += 1;
            }
            let (best, aliases) = if j == i + 1 {
                (i, Vec::new())
            } else {
                let mut group: Vec<usize> = (i..j).collect();
                group.sort_by_key(|&k| {
                    (
                        bind_rank(cands[k].bind),
                        underscores(cands[k].name),
                        cands[k].name,
                    )
                });
                let best = group[0];
                let mut aliases: Vec<&[u8]> = group[1..].iter().map(|&k| cands[k].name).collect();
                aliases.dedup();
                aliases.retain(|a| *a != cands[best].name);
                (best, aliases)
            };
            functions.push(Function {
                name: cands[best].name,
                aliases,
                fragments: Vec::new(),
                addr: cands[i].addr,
                size: sizes[i],
                size_known: cands[i].size > 0,
                is_static: cands[best].bind == elf::STB_LOCAL.0,
            });
            i = j;
        }
        // Fold fragments into their parent, found by name.
        // (The name index is built only when there is a fragment to fold.)
        let fragments: Vec<usize> = (0..functions.len())
            .filter(|&k| fragment_parent(functions[k].name).is_some())
            .collect();
        let mut by_name: std::collections::HashMap<&[u8], usize> = std::collections::HashMap::new();
        if !fragments.is_empty() {
            by_name.reserve(functions.len());
            for (k, f) in functions.iter().enumerate() {
                by_name.entry(f.name).or_insert(k);
                for a in &f.aliases {
                    by_name.entry(a).or_insert(k);
                }
            }
        }
        let mut owner: Vec<usize> = (0..functions.len()).collect();
        for k in fragments {
            let mut parent = fragment_parent(functions[k].name);
            // foo.part.0.cold → foo.part.0 → foo: follow to an existing function.
            while let Some(p) = parent {
                if let Some(&pk) = by_name.get(p) {
                    if pk != k && fragment_parent(functions[pk].name).is_none() {
                        owner[k] = pk;
                        break;
                    }
                }
                parent = fragment_parent(p);
            }
        }
        let mut ranges: Vec<Range> = Vec::new();
        for (k, f) in functions.iter().enumerate() {
            if f.size == 0 {
                continue;
            }
            ranges.push(Range {
                start: f.addr,
                end: f.addr.saturating_add(f.size),
                function: owner[k],
            });
        }
        ranges.sort_by_key(|r| (r.start, r.end));
        let mut disjoint = make_disjoint(&ranges);
        // Record the fragments' names on their owners and keep only owners as functions.
        let mut keep = vec![true; functions.len()];
        let mut frag_names: Vec<(usize, &[u8])> = Vec::new();
        for (k, &o) in owner.iter().enumerate() {
            if o != k {
                keep[k] = false;
                frag_names.push((o, functions[k].name));
            }
        }
        for (o, name) in frag_names {
            functions[o].fragments.push(name);
        }
        let mut new_index = vec![usize::MAX; functions.len()];
        let mut kept = Vec::new();
        for (k, f) in functions.into_iter().enumerate() {
            if keep[k] {
                new_index[k] = kept.len();
                kept.push(f);
            }
        }
        for r in &mut disjoint {
            r.function = new_index[r.function];
        }
        FunctionMap {
            functions: kept,
            ranges: disjoint,
        }
    }

    /// The index of the range containing `addr`.
    pub fn range_at(&self, addr: u64) -> Option<usize> {
        let i = self
            .ranges
            .partition_point(|r| r.start <= addr)
            .checked_sub(1)?;
        (addr < self.ranges[i].end).then_some(i)
    }

    /// The function containing `addr`.
    pub fn function_at(&self, addr: u64) -> Option<usize> {
        self.range_at(addr).map(|i| self.ranges[i].function)
    }

    /// The first range ending after `addr` (to walk the ranges overlapping an interval).
    pub fn first_range_ending_after(&self, addr: u64) -> usize {
        self.ranges.partition_point(|r| r.end <= addr)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The shortcut for ranges that are already disjoint gives what the sweep gives.
    #[test]
    fn disjoint_shortcut_equals_the_sweep() {
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = |n: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % n
        };
        for _ in 0..500 {
            let mut ranges = Vec::new();
            let mut at = next(4);
            for _ in 0..next(12) {
                let len = 1 + next(6);
                ranges.push(Range {
                    start: at,
                    end: at + len,
                    function: next(3) as usize,
                });
                at += len + next(2);
            }
            assert!(ranges.windows(2).all(|w| w[0].end <= w[1].start));
            assert_eq!(
                make_disjoint(&ranges),
                make_disjoint_overlapping(&ranges),
                "{ranges:?}"
            );
        }
    }
    use crate::elf::{RawSymbol, Section};

    /// An image with `.text` at 0x1000 (0x1000 bytes) and `.data` after it, and a symbol table
    /// built from (name, value, size, bind, type, section) tuples.
    fn image(syms: &[(&str, u64, u64, u8, u8, u32)]) -> (ElfImage<'static>, SymbolTable<'static>) {
        let sections = vec![
            Section {
                name: b"",
                sh_type: 0,
                flags: 0,
                addr: 0,
                size: 0,
            },
            Section {
                name: b".text",
                sh_type: 1,
                flags: 6,
                addr: 0x1000,
                size: 0x1000,
            },
            Section {
                name: b".data",
                sh_type: 1,
                flags: 3,
                addr: 0x3000,
                size: 0x100,
            },
        ];
        let mut strtab = vec![0u8];
        let mut symbols = Vec::new();
        for (i, &(name, value, size, bind, typ, shndx)) in syms.iter().enumerate() {
            let name_offset = strtab.len() as u32;
            strtab.extend_from_slice(name.as_bytes());
            strtab.push(0);
            symbols.push(RawSymbol {
                index: i + 1,
                name_offset,
                value,
                size,
                bind,
                typ,
                visibility: 0,
                shndx,
            });
        }
        let img = ElfImage {
            is_64: true,
            big_endian: false,
            machine: 62,
            sections,
            symtab: None,
            dynsym: None,
        };
        (
            img,
            SymbolTable {
                strtab: Box::leak(strtab.into_boxed_slice()),
                symbols,
            },
        )
    }

    const G: u8 = 1; // STB_GLOBAL
    const L: u8 = 0; // STB_LOCAL
    const W: u8 = 2; // STB_WEAK
    const F: u8 = 2; // STT_FUNC
    const O: u8 = 1; // STT_OBJECT

    #[test]
    fn sizes_aliases_fragments_and_gaps() {
        let (img, t) = image(&[
            ("main", 0x1000, 0x40, G, F, 1),
            ("work", 0x1040, 0x20, G, F, 1),
            ("work_alias", 0x1040, 0x20, W, F, 1),
            ("_work", 0x1040, 0x20, G, F, 1),
            ("helper", 0x1080, 0x10, L, F, 1),
            ("work.cold", 0x1800, 0x30, L, F, 1),
            ("nosize", 0x1900, 0, G, F, 1),
            ("after", 0x1980, 0x10, G, F, 1),
            ("table", 0x3000, 0x10, G, O, 2),
        ]);
        let m = FunctionMap::build(&img, &t);
        let names: Vec<&[u8]> = m.functions.iter().map(|f| f.name).collect();
        assert_eq!(
            names,
            [&b"main"[..], b"work", b"helper", b"nosize", b"after"]
        );
        let work = &m.functions[1];
        assert_eq!(work.aliases, [&b"_work"[..], b"work_alias"]);
        assert_eq!(work.fragments, [&b"work.cold"[..]]);
        // st_size decides: 0x1060..0x1080 and 0x1090..0x1800 belong to nobody.
        assert_eq!(m.function_at(0x105f), Some(1));
        assert_eq!(m.function_at(0x1060), None);
        assert_eq!(m.function_at(0x108f), Some(2));
        assert_eq!(m.function_at(0x1090), None);
        // The fragment's bytes are its parent's.
        assert_eq!(m.function_at(0x1810), Some(1));
        // A size of zero runs to the next function symbol.
        assert!(!m.functions[3].size_known);
        assert_eq!(m.functions[3].size, 0x80);
        assert_eq!(m.function_at(0x197f), Some(3));
        // Data objects are not functions.
        assert_eq!(m.function_at(0x3000), None);
    }

    #[test]
    fn overlapping_sizes_are_cut_at_the_next_start() {
        let (img, t) = image(&[
            ("outer", 0x1000, 0x100, G, F, 1),
            ("inner", 0x1040, 0x10, G, F, 1),
        ]);
        let m = FunctionMap::build(&img, &t);
        assert_eq!(m.function_at(0x103f), Some(0));
        assert_eq!(m.function_at(0x1040), Some(1));
        // After the inner function, the rest of the outer one is the outer one's again.
        assert_eq!(m.function_at(0x1050), Some(0));
        assert_eq!(m.function_at(0x10ff), Some(0));
        assert_eq!(m.function_at(0x1100), None);
        let starts: Vec<u64> = m.ranges.iter().map(|r| r.start).collect();
        assert_eq!(starts, [0x1000, 0x1040, 0x1050]);
    }

    #[test]
    fn fragment_names() {
        assert_eq!(fragment_parent(b"foo.cold"), Some(&b"foo"[..]));
        assert_eq!(fragment_parent(b"foo.cold.3"), Some(&b"foo"[..]));
        assert_eq!(fragment_parent(b"foo.part.0"), Some(&b"foo"[..]));
        assert_eq!(fragment_parent(b"foo.part.0.cold"), Some(&b"foo"[..]));
        assert_eq!(fragment_parent(b"foo.isra.0"), None);
        assert_eq!(fragment_parent(b"foo.coldest"), None);
        assert_eq!(fragment_parent(b".cold"), None);
    }
}
