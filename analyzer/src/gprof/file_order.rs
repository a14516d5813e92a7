//! `-R MAP` (`--file-ordering=MAP`): gprof's suggested order of `.o` files for the link line
//! (`cg_print_file_ordering`), and the map file that drives it (`read_function_mappings`).
//!
//! The map names, one a line, the object file of a function: `FILE: … SYMBOL`, the symbol
//! being the line's last space-separated word, so that `nm -A`'s (`--print-file-name`) lines
//! `loop2.o:0000000000000000 T inner` serve as they are. Lines starting `No symbols in ` are
//! skipped. gprof reads it with `fscanf`: `%1023[^\n:]` for the file (a first line keeps its
//! leading blanks, later ones lose them with the previous line's `\n`), then `%1023[^\n]\n`
//! for the rest; a line that starts with `:` or has no `:` before its newline is "unable to
//! parse mapping file" (status 1).
//!
//! The map changes the symbol table ([`FunctionMap::apply`]): a function the map names
//! (binary search on the names, sorted with `strcmp`) is renamed to its file when it is the
//! first of a run of lines with the same file, and dropped otherwise (its code then belongs
//! to the symbol before it, as with any missing symbol). Every report then prints the file
//! names; renamed symbols are "mapped".
//!
//! Under `-l` (and `-s`, which implies it) the map applies to the function symbols only:
//! gprof copies them, renamed and mapped, beside the line symbols, which keep their DWARF
//! function names and are never mapped ([`super::lines`]). An arc from a call site (a line
//! symbol) therefore counts as placed, and the mapped functions come out in address order.
//!
//! The ordering: arcs with an end that is not mapped count as placed, then gprof's greedy
//! chain placement over the arcs in the order they were made, self-calls left out (the first
//! 99% of the calls,
//! [`super::ordering`]) prints chains of files; then every mapped symbol not placed, in
//! address order; then the map's files that no symbol carries (sorted by `filename_cmp`,
//! which compares `char`s, signed on x86).
//!
//! Where gprof 2.40 misbehaves, the emulation does what the code means:
//!
//! * The run-start flag (`is_first`) is set for the first line of each run and never cleared
//!   for the others, whose flag is whatever `malloc` returned (valgrind reports the
//!   uninitialised read). gprof therefore keeps some non-first functions as further symbols
//!   named after their file, varying with the map's size (`loop2.o` printed twice for a
//!   three-line map of one file). Here only the first line of a run counts; the tests run gprof
//!   with `malloc`'s fresh memory zeroed (`MALLOC_PERTURB_`, no tcache), where it agrees.
//! * An empty map: gprof copies an uninitialised buffer as a file name and segfaults. Here it
//!   maps nothing (the ordering then lists nothing).
//! * A symbol part without a space (`a.o:inner`, `a.o:`, or a last line without a newline,
//!   colon or space): gprof takes the text after a missing space (`strrchr` is NULL) and
//!   segfaults. Here the symbol is the text after the colon (all of it without one).

use super::msort::msort;
use super::ordering;
use super::Analysis;
use profil_symbols::gprof::GprofSymbol;

/// One line of the map.
#[derive(Debug, Clone, Copy)]
struct Mapping {
    file: &'static [u8],
    function: &'static [u8],
    is_first: bool,
}

/// The map file, read as gprof reads it: entries sorted by function name.
#[derive(Debug, Clone, Default)]
pub struct FunctionMap {
    entries: Vec<Mapping>,
}

/// `fscanf` over the map's bytes: the position and the end-of-file flag.
struct Scan<'a> {
    text: &'a [u8],
    at: usize,
    eof: bool,
}

/// How a `%[` conversion ended.
enum Conv<'a> {
    /// Read these bytes.
    Read(&'a [u8]),
    /// Nothing read: at the end of the file (`fscanf` returns `EOF`).
    End,
    /// Nothing read: the next byte is in the stop set (`fscanf` returns 0).
    NoMatch,
}

impl<'a> Scan<'a> {
    /// `%1023[^…]` with the stop bytes `stop`.
    fn set(&mut self, stop: &[u8]) -> Conv<'a> {
        let start = self.at;
        while self.at < self.text.len() && self.at - start < 1023 {
            if stop.contains(&self.text[self.at]) {
                break;
            }
            self.at += 1;
        }
        if self.at == self.text.len() {
            self.eof = true;
        }
        if self.at > start {
            Conv::Read(&self.text[start..self.at])
        } else if self.at == self.text.len() {
            Conv::End
        } else {
            Conv::NoMatch
        }
    }

    /// A whitespace directive: skip `isspace` bytes.
    fn blanks(&mut self) {
        while self
            .text
            .get(self.at)
            .is_some_and(|&b| matches!(b, b' ' | b'\t' | b'\n' | b'\x0b' | b'\x0c' | b'\r'))
        {
            self.at += 1;
        }
        if self.at == self.text.len() {
            self.eof = true;
        }
    }
}

impl FunctionMap {
    /// `read_function_mappings` on the map's bytes; `None` is gprof's "unable to parse".
    pub fn parse(text: &'static [u8]) -> Option<FunctionMap> {
        let mut scan = Scan {
            text,
            at: 0,
            eof: text.is_empty(),
        };
        let mut dummy: &'static [u8] = b"";
        let mut entries = Vec::new();
        while !scan.eof {
            match scan.set(b"\n:") {
                Conv::Read(r) => dummy = r,
                Conv::NoMatch => return None,
                Conv::End => {}
            }
            if dummy.starts_with(b"No symbols in ") {
                scan.blanks();
                continue;
            }
            let file = dummy;
            match scan.set(b"\n") {
                Conv::Read(r) => {
                    dummy = r;
                    scan.blanks();
                }
                Conv::NoMatch => return None,
                Conv::End => {}
            }
            let function = match dummy.iter().rposition(|&b| b == b' ') {
                Some(i) => &dummy[i + 1..],
                None => dummy.strip_prefix(b":").unwrap_or(dummy),
            };
            entries.push(Mapping {
                file,
                function,
                is_first: false,
            });
        }
        for i in 0..entries.len() {
            entries[i].is_first = i == 0 || filename_cmp(entries[i].file, entries[i - 1].file) != 0;
        }
        msort(&mut entries, |l, r| l.function.cmp(r.function));
        Some(FunctionMap { entries })
    }

    /// glibc's `bsearch` for `name` among the entries (sorted by function name).
    /// What the map does to the function `name` (for `-d`'s traces): `None`, nothing;
    /// `Some(Some(file))`, renamed to its file; `Some(None)`, dropped.
    pub fn mapped_name(&self, name: &[u8]) -> Option<Option<Vec<u8>>> {
        self.find(name).map(|m| m.is_first.then(|| m.file.to_vec()))
    }

    fn find(&self, name: &[u8]) -> Option<&Mapping> {
        let (mut l, mut u) = (0, self.entries.len());
        while l < u {
            let i = (l + u) / 2;
            match name.cmp(self.entries[i].function) {
                std::cmp::Ordering::Less => u = i,
                std::cmp::Ordering::Greater => l = i + 1,
                std::cmp::Ordering::Equal => return Some(&self.entries[i]),
            }
        }
        None
    }

    /// `core_create_function_syms` with a map: the symbols the map names become their file
    /// (the first of a run of lines) or disappear (the others). Returns whether each kept
    /// symbol is mapped.
    pub fn apply<'d>(&self, syms: &mut Vec<GprofSymbol<'d>>) -> Vec<bool> {
        let mut mapped = Vec::with_capacity(syms.len());
        if self.entries.is_empty() {
            mapped.resize(syms.len(), false);
            return mapped;
        }
        syms.retain_mut(|s| match self.find(s.name) {
            None => {
                mapped.push(false);
                true
            }
            Some(m) if m.is_first => {
                s.name = m.file;
                mapped.push(true);
                true
            }
            Some(_) => false,
        });
        mapped
    }
}

/// libiberty's `filename_cmp` on a POSIX host: `char` by `char`, signed.
fn filename_cmp(l: &[u8], r: &[u8]) -> i32 {
    let at = |s: &[u8], i: usize| i32::from(s.get(i).copied().unwrap_or(0) as i8);
    let mut i = 0;
    loop {
        let (a, b) = (at(l, i), at(r, i));
        if a != b || a == 0 {
            return a - b;
        }
        i += 1;
    }
}

/// `cg_print_file_ordering`: the `.o` files in the suggested link order, one a line.
pub fn print(a: &Analysis<'_>, map: &FunctionMap, out: &mut Vec<u8>) {
    let syms = &a.symtab.syms;
    let arcs = &a.cg.arcs;
    let placed: Vec<bool> = arcs
        .iter()
        .map(|arc| !syms[arc.parent].mapped || !syms[arc.child].mapped)
        .collect();
    // gprof's array of arcs leaves out self-calls.
    let order: Vec<usize> = (0..arcs.len())
        .filter(|&i| arcs[i].parent != arcs[i].child)
        .collect();
    let mut state = ordering::State::new(a, vec![false; syms.len()], placed);
    state.order_and_dump(&order, false, &mut Vec::new(), out);
    for (i, s) in syms.iter().enumerate() {
        if s.mapped && !state.is_placed(i) {
            out.extend_from_slice(s.name);
            out.push(b'\n');
        }
    }
    let mut files: Vec<&[u8]> = map.entries.iter().map(|m| m.file).collect();
    msort(&mut files, |l, r| filename_cmp(l, r).cmp(&0));
    files.dedup_by(|r, l| filename_cmp(l, r) == 0);
    // filename_cmp is equality of bytes on POSIX: a set of the mapped names answers.
    let carried: std::collections::HashSet<&[u8]> =
        syms.iter().filter(|s| s.mapped).map(|s| s.name).collect();
    for file in files {
        if !carried.contains(file) {
            out.extend_from_slice(file);
            out.push(b'\n');
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(s: &'static str) -> Option<Vec<(String, String, bool)>> {
        let m = FunctionMap::parse(s.as_bytes())?;
        Some(
            m.entries
                .iter()
                .map(|e| {
                    (
                        String::from_utf8_lossy(e.file).into_owned(),
                        String::from_utf8_lossy(e.function).into_owned(),
                        e.is_first,
                    )
                })
                .collect(),
        )
    }

    fn e(f: &str, s: &str, first: bool) -> (String, String, bool) {
        (f.into(), s.into(), first)
    }

    #[test]
    fn reads_like_fscanf() {
        assert_eq!(
            parse("b.o: f\nb.o:0000 T e\n  a.o: g x\nNo symbols in c.o\n").unwrap(),
            vec![
                e("b.o", "e", false),
                e("b.o", "f", true),
                e("a.o", "x", true)
            ]
        );
        // The first line keeps its blanks; a last line without a colon is an entry.
        assert_eq!(
            parse("  a.o: f\nb c").unwrap(),
            vec![e("b c", "c", true), e("  a.o", "f", true)]
        );
        assert_eq!(parse("").unwrap(), vec![]);
        assert_eq!(parse("a.o:f\n").unwrap(), vec![e("a.o", "f", true)]);
        assert!(parse(":x\n").is_none());
        assert!(parse("a.o: f\nb.o\nc.o: g\n").is_none());
        // gprof segfaults on these (no space after the colon).
        assert_eq!(parse("a.o:\n").unwrap(), vec![e("a.o", "", true)]);
        assert!(parse("\n").is_none());
    }

    #[test]
    fn filename_cmp_is_signed() {
        assert!(filename_cmp(b"a", b"b") < 0);
        assert!(filename_cmp(b"\xe9", b"a") < 0);
        assert_eq!(filename_cmp(b"a.o", b"a.o"), 0);
        assert!(filename_cmp(b"a", b"a.o") < 0);
    }
}
