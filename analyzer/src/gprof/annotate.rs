//! `-A` (`--annotated-source`) and `-y` (`--separate-files`): the source files with each
//! function's first line prefixed by its call count, as gprof 2.40's
//! `print_annotated_source` prints them for a `-pg` profile (which has no basic-block counts).
//!
//! What gprof does, as observed and reproduced here:
//!
//! * A symbol belongs to the source file and line BFD gives for its address
//!   ([`profil_symbols::gprof::source_locations`]); the annotation tables (`-A NAME`,
//!   `-J NAME`) choose which symbols count. A file's length is its largest such line.
//! * Files come in the reverse order of their creation (gprof prepends each new file to its
//!   list): by first appearance among the function symbols in `.symtab` order, then under
//!   `-l` among the line symbols in address order (so files known only from line symbols,
//!   such as headers, come first). With `-z` off, a file whose symbols have no call at all is
//!   skipped.
//! * Under `-l` the line symbols (no calls, not functions) are symbols of their lines like any
//!   other: each counts as an executable line, annotated blank (or with `-x` the last count).
//! * Each line gets a 16-column annotation: blank for a line without a symbol, `N -> ` right
//!   aligned for a function's line (`##### -> ` below `-m`, default 1), blank for other
//!   symbols' lines (with `-x`, the last count printed). Several symbols on one line add up.
//! * Then "Top N Lines" (`-t`, default 10) by count, and an execution summary.
//! * On standard output each file is headed `*** File PATH:` (a blank line and a form feed
//!   before every file but the first, the form feed also after an earlier section); with `-y`
//!   each goes to `BASENAME-ann` in the current directory instead, without the heading.
//! * A source that cannot be opened (by its path, then in each `-I` directory and
//!   `GPROF_PATH`, with its path and then its base name) is skipped with a message.

use std::cmp::Ordering;
use std::collections::HashMap;
use std::io::Write;
use std::path::PathBuf;

use profil_symbols::gprof::{gprof_symbols, source_locations};
use profil_symbols::ElfImage;

use super::msort::msort;
use super::printf;
use super::symspec::Table;
use super::Analysis;
use crate::{Error, Result};

/// The annotation settings.
#[derive(Debug, Clone, Copy, Default)]
pub struct AnnotateOptions {
    /// `-y`: write `BASENAME-ann` files instead of standard output.
    pub separate_files: bool,
    /// `-x`: annotate every line of a function's code with the last count.
    pub all_lines: bool,
    /// `-m`: counts below this print as `#####` (gprof's default: 1).
    pub min_count: u64,
    /// `-t`: the length of the "Top N Lines" table (gprof's default: 10; 0: no table).
    pub table_length: usize,
    /// `-I` directories, then `GPROF_PATH`'s, in order.
    pub search: &'static [PathBuf],
}

/// One line's symbol(s): the first symbol's kind and the summed calls.
#[derive(Clone, Copy)]
struct LineStat {
    line: u64,
    calls: u64,
    is_func: bool,
}

/// Print (or with `-y` write) the annotated sources of `a` (`exe` is the executable's bytes).
/// `first_output` is false when a section was printed before.
pub fn print(
    a: &Analysis<'_>,
    exe: &[u8],
    opts: &AnnotateOptions,
    zeros: bool,
    mut first_output: bool,
    out: &mut Vec<u8>,
    warnings: &mut Vec<String>,
) -> Result<()> {
    let syms = &a.symtab.syms;
    if a.external_symbols {
        // No symbol has a source file.
        return Ok(());
    }
    let addrs: Vec<u64> = syms.iter().map(|s| s.addr).collect();
    let found = source_locations(exe, &addrs);
    // gprof's file list: newest first, by first appearance among the function symbols in
    // `.symtab` order, then (under -l) among the line symbols in address order.
    let mut files: Vec<Vec<u8>> = Vec::new();
    let mut index: HashMap<Vec<u8>, usize> = HashMap::new();
    let mut add = |path: &Vec<u8>| {
        if !index.contains_key(path) {
            index.insert(path.clone(), files.len());
            files.push(path.clone());
        }
    };
    if let Ok(image) = ElfImage::parse(exe) {
        if let Some(table) = image.symtab.as_ref() {
            let gsyms = gprof_symbols(&image, table, a.class_options);
            let order: Vec<u64> = gsyms.iter().map(|s| s.addr).collect();
            let in_symtab_order = source_locations(exe, &order);
            for addr in &order {
                if let Some((path, _)) = in_symtab_order.get(addr) {
                    add(path);
                }
            }
        }
    }
    if a.lines.is_some() {
        // The line symbols the table kept (a dropped one shares its address, and so its
        // file, with a function symbol).
        for addr in &addrs {
            if let Some((path, _)) = found.get(addr) {
                add(path);
            }
        }
    }
    // Each file's symbols (those the annotation tables accept), in table order.
    let mut of_file: Vec<Vec<(usize, u64)>> = vec![Vec::new(); files.len()];
    for (i, s) in syms.iter().enumerate() {
        if let Some((p, line)) = found.get(&s.addr) {
            if let Some(&k) = index.get(p) {
                if a.select.anno.on(i) && *line != 0 {
                    of_file[k].push((i, *line));
                }
            }
        }
    }
    if let Some(t) = a.spec_tables.as_deref() {
        // Under -d, the traces of gprof's look-ups in its tables: its first pass looks up a
        // symbol whose line is past its file's longest line so far (which only an accepted
        // symbol extends), its second pass every symbol of a file with lines.
        let (incl, excl) = (Table::InclAnno, Table::ExclAnno);
        let mut probes = super::debug::Trace::new(a.trace.level);
        let mut num_lines: HashMap<&[u8], u64> = HashMap::new();
        for s in syms {
            if let Some((p, line)) = found.get(&s.addr) {
                let n = num_lines.entry(p.as_slice()).or_default();
                if *line > *n && t.on(incl, excl, s.addr, &mut probes) {
                    *n = *line;
                }
            }
        }
        for s in syms {
            if let Some((p, _)) = found.get(&s.addr) {
                if num_lines.get(p.as_slice()).is_some_and(|&n| n != 0) {
                    t.on(incl, excl, s.addr, &mut probes);
                }
            }
        }
        out.append(&mut probes.out);
    }
    let mut last_count = 0u64;
    let mut first_file = true;
    for (k, path) in files.iter().enumerate().rev() {
        // The file's symbols: its length, its lines, its total.
        let num_lines = of_file[k].iter().map(|&(_, l)| l).max().unwrap_or(0);
        if num_lines == 0 {
            continue;
        }
        let mut lines: Vec<Option<LineStat>> = vec![None; num_lines as usize];
        let mut total = 0u64;
        for &(i, line) in &of_file[k] {
            let calls = a.cg.nodes[i].ncalls;
            total = total.wrapping_add(calls);
            let slot = &mut lines[line as usize - 1];
            match slot {
                Some(st) => st.calls = st.calls.wrapping_add(calls),
                None => {
                    *slot = Some(LineStat {
                        line,
                        calls,
                        is_func: syms[i].is_func,
                    })
                }
            }
        }
        if !zeros && total == 0 {
            continue;
        }
        let name = String::from_utf8_lossy(path).into_owned();
        let tried = a.trace.on(super::debug::SRCDEBUG).then_some(&mut *out);
        let Some(source) = open_source(&name, opts.search, tried) else {
            warnings.push(format!("could not locate `{name}'"));
            continue;
        };
        let mut buf = Vec::new();
        let target: &mut Vec<u8> = if opts.separate_files { &mut buf } else { out };
        if !opts.separate_files {
            if !first_file {
                target.push(b'\n');
            }
            if !first_output {
                target.extend_from_slice(b"\x0c\n");
            }
            target.extend_from_slice(b"*** File ");
            target.extend_from_slice(path);
            target.extend_from_slice(b":\n");
            first_output = false;
        }
        first_file = false;
        let (mut executable, mut executed) = (0u64, 0u64);
        let mut line_num = 1usize;
        let mut new_line = true;
        for &byte in &source {
            if new_line {
                let stat = lines.get(line_num - 1).copied().flatten();
                annotation(
                    stat,
                    opts,
                    &mut last_count,
                    &mut executable,
                    &mut executed,
                    target,
                );
                line_num += 1;
            }
            new_line = byte == b'\n';
            target.push(byte);
        }
        if opts.table_length > 0 {
            target.extend_from_slice(
                format!(
                    "\n\nTop {} Lines:\n\n     Line      Count\n\n",
                    opts.table_length
                )
                .as_bytes(),
            );
            // `cmp_ncalls` through glibc's merge sort: empty lines last, then most calls,
            // then lower line numbers.
            msort(&mut lines, |l, r| match (l, r) {
                (None, _) => Ordering::Greater,
                (_, None) => Ordering::Less,
                (Some(l), Some(r)) => r.calls.cmp(&l.calls).then(l.line.cmp(&r.line)),
            });
            for st in lines.iter().take(opts.table_length) {
                let Some(st) = st.filter(|s| s.calls != 0) else {
                    break;
                };
                printf::push_u(target, 9, st.line);
                target.push(b' ');
                printf::push_u(target, 10, st.calls);
                target.push(b'\n');
            }
        }
        target.extend_from_slice(b"\nExecution Summary:\n\n");
        printf::push_u(target, 9, executable);
        target.extend_from_slice(b"   Executable lines in this file\n");
        printf::push_u(target, 9, executed);
        target.extend_from_slice(b"   Lines executed\n");
        let pct = if executable != 0 {
            100.0 * executed as f64 / executable as f64
        } else {
            100.0
        };
        printf::push_f(target, 9, 2, pct);
        target.extend_from_slice(b"   Percent of the file executed\n\n");
        printf::push_u(target, 9, total);
        target.extend_from_slice(b"   Total number of line executions\n");
        let avg = if executable != 0 {
            total as f64 / executable as f64
        } else {
            0.0
        };
        printf::push_f(target, 9, 2, avg);
        target.extend_from_slice(b"   Average executions per line\n");
        if opts.separate_files {
            let base = super::base_name(path);
            let mut file_name = base.to_vec();
            file_name.extend_from_slice(b"-ann");
            let file_name = String::from_utf8_lossy(&file_name).into_owned();
            std::fs::File::create(&file_name)
                .and_then(|mut f| f.write_all(&buf))
                .map_err(|e| Error::input(format!("{file_name}: {e}")))?;
        }
    }
    Ok(())
}

/// `annotate_with_count` for one line, into `out` (16 columns).
fn annotation(
    stat: Option<LineStat>,
    opts: &AnnotateOptions,
    last_count: &mut u64,
    executable: &mut u64,
    executed: &mut u64,
    out: &mut Vec<u8>,
) {
    const WIDTH: usize = 16;
    let Some(st) = stat else {
        out.extend_from_slice(&[b' '; WIDTH]);
        return;
    };
    *executable += 1;
    let calls = if st.is_func {
        *last_count = st.calls;
        Some(st.calls)
    } else if opts.all_lines {
        Some(*last_count)
    } else {
        None
    };
    let Some(calls) = calls else {
        out.extend_from_slice(&[b' '; WIDTH]);
        return;
    };
    *executed += 1;
    let mut text = if calls < opts.min_count {
        b"#####".to_vec()
    } else {
        calls.to_string().into_bytes()
    };
    text.extend_from_slice(b" -> ");
    if text.len() >= WIDTH {
        out.extend_from_slice(&text[..WIDTH]);
    } else {
        out.extend(std::iter::repeat_n(b' ', WIDTH - text.len()));
        out.extend_from_slice(&text);
    }
}

/// `annotate_source`'s search: the path itself, then each search directory joined with the
/// path (relative paths only), then each joined with the base name. Under `-d` with
/// `SRCDEBUG`, `tried` gets gprof's line for each attempt.
fn open_source(name: &str, search: &[PathBuf], mut tried: Option<&mut Vec<u8>>) -> Option<Vec<u8>> {
    let mut attempt = |path: &str| {
        if let Some(out) = tried.as_deref_mut() {
            out.extend_from_slice(
                format!("[annotate_source]: looking for {name}, trying {path}\n").as_bytes(),
            );
        }
        std::fs::read(path).ok()
    };
    if let Some(b) = attempt(name) {
        return Some(b);
    }
    if !name.starts_with('/') {
        for dir in search {
            if let Some(b) = attempt(&format!("{}/{name}", dir.display())) {
                return Some(b);
            }
        }
    }
    let base = name.rsplit('/').next().unwrap_or(name);
    if base.len() != name.len() {
        for dir in search {
            if let Some(b) = attempt(&format!("{}/{base}", dir.display())) {
                return Some(b);
            }
        }
    }
    None
}
