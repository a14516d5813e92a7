//! gprof's symbol table: `symtab_finalize` (sort, alias removal, end addresses) and
//! `sym_lookup`.

use profil_symbols::gprof::GprofSymbol;

use super::debug::{Trace, AOUTDEBUG, IDDEBUG, LOOKUPDEBUG};

/// One entry of gprof's symbol table after `symtab_finalize`.
#[derive(Debug, Clone)]
pub struct Sym<'data> {
    /// Raw (mangled) name, as in `.strtab`.
    pub name: &'data [u8],
    /// Link-time address of the first byte.
    pub addr: u64,
    /// Link-time address of the last byte: the next kept symbol's address minus one, or for
    /// the last symbol the end of `.text` minus one (which can be below `addr`).
    pub end_addr: u64,
    /// `STT_FUNC` (or IFUNC); arcs into non-functions are moved back to the preceding function.
    pub is_func: bool,
    /// Local (`t`) symbol.
    pub is_static: bool,
    /// Renamed to its object file by `-R`'s map ([`super::file_order`]).
    pub mapped: bool,
}

/// The finalized table, sorted by address, one symbol per address.
#[derive(Debug, Clone, Default)]
pub struct SymTab<'data> {
    /// The symbols.
    pub syms: Vec<Sym<'data>>,
    /// What gprof's `find_call` (`-c`) takes for the end of the last symbol, the address of
    /// the entry after it (`(parent + 1)->addr`): the sorted table's entry left over at that
    /// position when `symtab_finalize` removed some. `None` when it removed none: gprof then
    /// reads past its allocation, and the scan goes to the end of the histogram here.
    pub after_last: Option<u64>,
}

/// `src` replaces the kept `dst` at the same address (gprof's preference order).
fn favors(src: &Sym<'_>, dst: &Sym<'_>) -> bool {
    let c0 = |s: &Sym<'_>| s.name.first().copied().unwrap_or(0);
    let c1 = |s: &Sym<'_>| s.name.get(1).copied().unwrap_or(0);
    (!src.is_static && dst.is_static)
        || (src.is_static == dst.is_static
            && ((src.is_func && !dst.is_func)
                || (src.is_func == dst.is_func
                    && ((c0(src) != b'_' && c0(dst) == b'_')
                        || (c0(src) == b'_'
                            && c0(dst) == b'_'
                            && c1(src) != b'_'
                            && c1(dst) == b'_')))))
}

/// `symtab_finalize`'s `qsort`: positions of `input` by address, functions first, globals
/// first. glibc's qsort is a merge sort, so ties keep `.symtab` order; the comparison is
/// consistent, so a sort of distinct (address, flags, position) keys gives the same order
/// while moving 16-byte keys instead of symbols.
fn address_order(input: &[GprofSymbol<'_>]) -> Vec<usize> {
    // Positions fit in 62 bits (a symbol takes at least 16 bytes of `.symtab`).
    const POS: u64 = (1 << 62) - 1;
    let mut keys: Vec<(u64, u64)> = input
        .iter()
        .enumerate()
        .map(|(i, g)| {
            let flags = (u64::from(!g.is_func) << 1) | u64::from(g.is_static);
            (g.addr, (flags << 62) | (i as u64 & POS))
        })
        .collect();
    // The keys are distinct, so a stable sort gives the same order; it merges sorted runs
    // (under `-l` the input is the line symbols then the function table, both by address).
    keys.sort();
    keys.into_iter().map(|(_, k)| (k & POS) as usize).collect()
}

impl<'data> SymTab<'data> {
    /// `symtab_finalize`: a stable sort by (address, functions first, globals first), then
    /// one symbol per address, then end addresses. `text_end` is `.text`'s vma + size.
    pub fn finalize(input: &[GprofSymbol<'data>], text_end: u64) -> Self {
        Self::finalize_traced(input, &[], text_end, &mut Trace::default())
    }

    /// [`SymTab::finalize`], where `mapped[i]` says whether `input[i]` is a symbol `-R`'s map
    /// renamed (missing entries: not mapped), with gprof's traces under `AOUTDEBUG | IDDEBUG`:
    /// each duplicate (which one is favoured), the number removed, and the table with its
    /// ranges.
    pub fn finalize_traced(
        input: &[GprofSymbol<'data>],
        mapped: &[bool],
        text_end: u64,
        trace: &mut Trace,
    ) -> Self {
        let table = Self::finalize_favors(input, mapped, text_end, trace);
        table.trace_table(input.len() - table.len(), trace);
        table
    }

    /// [`SymTab::finalize_traced`] with only the traces of its duplicates (the caller prints
    /// the rest with [`SymTab::trace_table`]).
    pub fn finalize_favors(
        input: &[GprofSymbol<'data>],
        mapped: &[bool],
        text_end: u64,
        trace: &mut Trace,
    ) -> Self {
        let traced = trace.on(AOUTDEBUG | IDDEBUG);
        let sorted = address_order(input).into_iter().map(|i| {
            let g = &input[i];
            Sym {
                name: g.name,
                addr: g.addr,
                end_addr: 0,
                is_func: g.is_func,
                is_static: g.is_static,
                mapped: mapped.get(i).copied().unwrap_or(false),
            }
        });
        let mut syms: Vec<Sym<'data>> = Vec::with_capacity(input.len());
        let mut sorted = sorted.peekable();
        let Some(first) = sorted.peek() else {
            return SymTab {
                syms,
                after_last: None,
            };
        };
        let mut prev_addr = first.addr.wrapping_sub(1);
        for src in sorted {
            if src.addr == prev_addr {
                // Same address as the kept symbol (always the last one pushed).
                if let Some(dst) = syms.last_mut() {
                    let favored = favors(&src, dst);
                    if traced {
                        let (w, l) = if favored {
                            (&src, &*dst)
                        } else {
                            (&*dst, &src)
                        };
                        trace.put(b"[symtab_finalize] favor ");
                        for (k, s) in [w, l].into_iter().enumerate() {
                            if k == 1 {
                                trace.put(b" over ");
                            }
                            trace.put(s.name);
                            let st = if s.is_static { 't' } else { 'T' };
                            let fu = if s.is_func { 'F' } else { 'f' };
                            trace.fmt(format_args!("@{st}{fu}"));
                        }
                        trace.fmt(format_args!(" (addr={:x})\n", src.addr));
                    }
                    if favored {
                        *dst = src;
                    }
                }
            } else {
                if let Some(dst) = syms.last_mut() {
                    if dst.end_addr == 0 {
                        dst.end_addr = src.addr.wrapping_sub(1);
                    }
                }
                prev_addr = src.addr;
                syms.push(src);
            }
        }
        if let Some(last) = syms.last_mut() {
            if last.end_addr == 0 {
                last.end_addr = text_end.wrapping_sub(1);
            }
        }
        let mut addrs: Vec<u64> = input.iter().map(|g| g.addr).collect();
        let after_last = (syms.len() < addrs.len()).then(|| {
            let k = syms.len();
            *addrs.select_nth_unstable(k).1
        });
        SymTab { syms, after_last }
    }

    /// The end of `symtab_finalize`'s traces (`AOUTDEBUG | IDDEBUG`): how many entries were
    /// `removed`, then the table with its ranges.
    pub fn trace_table(&self, removed: usize, trace: &mut Trace) {
        if !trace.on(AOUTDEBUG | IDDEBUG) {
            return;
        }
        trace.fmt(format_args!(
            "[symtab_finalize]: removed {removed} duplicate entries\n"
        ));
        for s in &self.syms {
            trace.fmt(format_args!(
                "[symtab_finalize] 0x{:x}-0x{:x}\t",
                s.addr, s.end_addr
            ));
            trace.put(s.name);
            trace.put(b"\n");
        }
    }

    /// Number of symbols.
    pub fn len(&self) -> usize {
        self.syms.len()
    }

    /// True when there are no symbols.
    pub fn is_empty(&self) -> bool {
        self.syms.is_empty()
    }

    /// `sym_lookup` as gprof runs it, binary search and `LOOKUPDEBUG` trace of its probes
    /// included (the same answer as [`SymTab::lookup`]; only used when tracing).
    pub fn lookup_traced(&self, addr: u64, trace: &mut Trace) -> Option<usize> {
        let sym = &self.syms;
        let len = sym.len();
        if len == 0 {
            return None;
        }
        let (mut low, mut high) = (0usize, len - 1);
        let mut mid = usize::MAX;
        let mut probes = 0;
        while low != high {
            probes += 1;
            mid = (high + low) / 2;
            if sym[mid].addr <= addr && sym[mid + 1].addr > addr {
                if addr > sym[mid].end_addr {
                    return None;
                }
                if trace.on(LOOKUPDEBUG) {
                    trace.fmt(format_args!(
                        "[sym_lookup] {probes} probes (symtab->len={})\n",
                        len - 1
                    ));
                }
                return Some(mid);
            }
            if sym[mid].addr > addr {
                high = mid;
            } else {
                low = mid + 1;
            }
        }
        let next = mid.wrapping_add(1);
        if sym.get(next)?.addr <= addr {
            if addr > sym[next].end_addr {
                return None;
            }
            if trace.on(LOOKUPDEBUG) {
                trace.fmt(format_args!(
                    "[sym_lookup] {probes} ({}) probes, fall off\n",
                    len - 1
                ));
            }
            return Some(next);
        }
        None
    }

    /// `sym_lookup`: the last symbol starting at or before `addr`, if `addr` is not past its
    /// `end_addr`.
    pub fn lookup(&self, addr: u64) -> Option<usize> {
        let i = self
            .syms
            .partition_point(|s| s.addr <= addr)
            .checked_sub(1)?;
        (addr <= self.syms[i].end_addr).then_some(i)
    }
}

/// A bucketed index over sorted start addresses, for many lookups in a large table (tally's
/// 90,000 arcs in 60,000 symbols): the address range is cut into about as many buckets as
/// there are addresses, and a lookup searches only its bucket's addresses instead of the
/// whole array (whose binary search misses the cache at every step).
#[derive(Debug, Clone, Default)]
pub struct AddrIndex {
    /// The sorted addresses.
    starts: Vec<u64>,
    /// Address of bucket 0 (the first address).
    base: u64,
    /// Bucket `k` covers `[base + k << shift, base + (k + 1) << shift)`.
    shift: u32,
    /// `first[k]`: how many addresses lie below bucket `k` (`first[buckets] = len`).
    first: Vec<u32>,
}

impl AddrIndex {
    /// Index `starts` (sorted ascending).
    pub fn new(starts: Vec<u64>) -> Self {
        let (Some(&base), Some(&last)) = (starts.first(), starts.last()) else {
            return AddrIndex::default();
        };
        let n = starts.len();
        if u32::try_from(n).is_err() {
            return AddrIndex {
                starts,
                ..AddrIndex::default()
            };
        }
        let span = last.wrapping_sub(base);
        let mut shift = 0;
        while shift < 63 && (span >> shift) as u128 >= n as u128 {
            shift += 1;
        }
        // At most n + 1 buckets (span >> shift < n), so the table is proportional to `starts`.
        let buckets = (span >> shift) as usize + 1;
        let mut first = Vec::with_capacity(buckets + 1);
        let mut j = 0usize;
        for k in 0..=buckets as u128 {
            let bucket_start = u128::from(base) + (k << shift);
            while j < n && u128::from(starts[j]) < bucket_start {
                j += 1;
            }
            first.push(j as u32);
        }
        AddrIndex {
            starts,
            base,
            shift,
            first,
        }
    }

    /// The number of addresses `<= addr` (`starts.partition_point(|&a| a <= addr)`).
    pub fn count_at_or_below(&self, addr: u64) -> usize {
        if self.first.is_empty() {
            return self.starts.partition_point(|&a| a <= addr);
        }
        if addr < self.base {
            return 0;
        }
        // `first` has buckets + 1 entries; past the last bucket every address is below.
        let k = (addr - self.base) >> self.shift;
        if k >= (self.first.len() - 1) as u64 {
            return self.starts.len();
        }
        let k = k as usize;
        let (lo, hi) = (self.first[k] as usize, self.first[k + 1] as usize);
        lo + self.starts[lo..hi].partition_point(|&a| a <= addr)
    }

    /// Number of addresses.
    pub fn len(&self) -> usize {
        self.starts.len()
    }

    /// True without addresses.
    pub fn is_empty(&self) -> bool {
        self.starts.is_empty()
    }

    /// Address `i`.
    pub fn get(&self, i: usize) -> Option<u64> {
        self.starts.get(i).copied()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// gprof's own binary search (traced under `-d`) finds what the partition search finds,
    /// gaps, the last symbol (found by "falling off") and an end below the start included.
    #[test]
    fn traced_lookup_answers_like_lookup() {
        let mut rng = super::super::TestRng(0x9e37_79b9_7f4a_7c15u64);
        let mut next = move |k: u64| rng.below(k);
        for _ in 0..300 {
            let n = 1 + next(40) as usize;
            let mut addr = next(8);
            let syms: Vec<Sym<'static>> = (0..n)
                .map(|i| {
                    let start = addr;
                    addr += 1 + next(16);
                    // Some gaps; the last symbol may end below its start (as `data_start`).
                    let end = match (i + 1 == n, next(4)) {
                        (true, 0) => start.saturating_sub(1 + next(4)),
                        (_, 0) => start + next(addr - start),
                        _ => addr - 1,
                    };
                    Sym {
                        name: b"f",
                        addr: start,
                        end_addr: end,
                        is_func: true,
                        is_static: false,
                        mapped: false,
                    }
                })
                .collect();
            let t = SymTab {
                syms,
                after_last: None,
            };
            let mut trace = Trace::new(LOOKUPDEBUG);
            let mut found = 0;
            for a in 0..addr + 20 {
                let want = t.lookup(a);
                assert_eq!(t.lookup_traced(a, &mut trace), want, "{a:#x}");
                found += usize::from(want.is_some());
            }
            // Each symbol found printed its probes.
            assert_eq!(trace.out.iter().filter(|&&b| b == b'\n').count(), found);
        }
    }

    #[test]
    fn addr_index_counts_like_a_binary_search() {
        let mut rng = super::super::TestRng(0x3c6e_f372_fe94_f82bu64);
        let mut next = move || rng.next();
        for round in 0..400 {
            let n = (next() % 300) as usize;
            let spread = [16, 1 << 20, u64::MAX][round % 3];
            let offset = [0, 0x40_0000, u64::MAX - spread.min(u64::MAX / 2)][round % 3];
            let mut starts: Vec<u64> = (0..n)
                .map(|_| offset.wrapping_add(next() % spread.max(1)))
                .collect();
            starts.sort_unstable();
            if round % 2 == 0 {
                starts.dedup();
            }
            let index = AddrIndex::new(starts.clone());
            let mut probes = vec![0, u64::MAX, offset, offset.wrapping_sub(1)];
            for &a in &starts {
                probes.extend([a, a.wrapping_sub(1), a.wrapping_add(1)]);
            }
            probes.extend((0..50).map(|_| offset.wrapping_add(next() % spread.max(1))));
            for addr in probes {
                let want = starts.partition_point(|&a| a <= addr);
                assert_eq!(
                    index.count_at_or_below(addr),
                    want,
                    "round {round}, {addr:#x}"
                );
            }
        }
    }

    fn g(
        name: &'static str,
        addr: u64,
        is_func: bool,
        is_static: bool,
        index: usize,
    ) -> GprofSymbol<'static> {
        GprofSymbol {
            name: name.as_bytes(),
            addr,
            is_func,
            is_static,
            index,
        }
    }

    #[test]
    fn address_order_is_the_stable_sort_order() {
        let mut rng = super::super::TestRng(0x5851_f42d_4c95_7f2du64);
        let mut next = move |k: u64| rng.below(k);
        for _ in 0..500 {
            let input: Vec<GprofSymbol<'static>> = (0..next(300) as usize)
                .map(|i| g("s", next(40), next(2) == 0, next(2) == 0, i))
                .collect();
            let mut want: Vec<usize> = (0..input.len()).collect();
            want.sort_by(|&l, &r| {
                let (l, r) = (&input[l], &input[r]);
                l.addr
                    .cmp(&r.addr)
                    .then(r.is_func.cmp(&l.is_func))
                    .then(l.is_static.cmp(&r.is_static))
            });
            assert_eq!(address_order(&input), want);
        }
    }

    #[test]
    fn aliases_prefer_global_function_without_underscore() {
        let input = [
            g("_b", 0x20, true, false, 1),
            g("a_static", 0x10, true, true, 2),
            g("a_global", 0x10, true, false, 3),
            g("b", 0x20, true, false, 4),
            g("b2", 0x20, true, false, 5),
            g("label", 0x30, false, false, 6),
            g("__x", 0x30, true, false, 7),
        ];
        let t = SymTab::finalize(&input, 0x40);
        let names: Vec<_> = t
            .syms
            .iter()
            .map(|s| std::str::from_utf8(s.name).unwrap())
            .collect();
        // b beats _b; b2 does not beat b (first wins); the function beats the label.
        assert_eq!(names, ["a_global", "b", "__x"]);
        assert_eq!(t.syms[0].end_addr, 0x1f);
        assert_eq!(t.syms[2].end_addr, 0x3f);
        assert_eq!(t.lookup(0x0f), None);
        assert_eq!(t.lookup(0x1f), Some(0));
        assert_eq!(t.lookup(0x3f), Some(2));
        assert_eq!(t.lookup(0x40), None);
    }
}
