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

use std::io::Write;
use std::path::{Path, PathBuf};

use profil_symbols::file::FileBytes;
use profil_symbols::gprof::locate;

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

/// Print (or with `-y` write) the annotated sources of `a` (`exe` is the executable's bytes)
/// as `opts` says (`zeros`: `-z`, files without calls too); returns the warnings (sources not
/// found). `first_output` is false when a section was printed before. Between files `out`
/// goes to `sink` once it holds a megabyte ([`super::sink::spill`]).
pub fn print(
    a: &Analysis<'_>,
    exe: &[u8],
    opts: &AnnotateOptions,
    zeros: bool,
    mut first_output: bool,
    out: &mut Vec<u8>,
    sink: &mut dyn std::io::Write,
) -> Result<Vec<String>> {
    let mut warnings = Vec::new();
    let syms = &a.symtab.syms;
    if a.external_symbols {
        // No symbol has a source file.
        return Ok(warnings);
    }
    // gprof's file list: newest first, by first appearance among the function symbols in
    // `.symtab` order, then (under -l) among the line symbols in address order. `index`:
    // each path's place in `files`, by its index in `found`.
    let (found, in_symtab_order) = a.locate_symbols(|addrs| locate(exe, addrs));
    let of_syms = &found.at[..];
    let mut files: Vec<u32> = Vec::new();
    let mut index: Vec<usize> = vec![usize::MAX; found.num_files()];
    let mut add = |file: u32| {
        if index[file as usize] == usize::MAX {
            index[file as usize] = files.len();
            files.push(file);
        }
    };
    for file in in_symtab_order {
        add(file);
    }
    if a.lines.is_some() {
        // The line symbols the table kept (a dropped one shares its address, and so its
        // file, with a function symbol).
        for &(file, _) in of_syms.iter().flatten() {
            add(file);
        }
    }
    // Each file's symbols (those the annotation tables accept), in table order.
    let mut of_file: Vec<Vec<(usize, u64)>> = vec![Vec::new(); files.len()];
    for (i, at) in of_syms.iter().enumerate() {
        if let Some((file, line)) = *at {
            let k = index[file as usize];
            if k != usize::MAX && a.select.anno.on(i) && line != 0 {
                of_file[k].push((i, line));
            }
        }
    }
    if let Some(t) = a.spec_tables.as_deref() {
        // Under -d, the traces of gprof's look-ups in its tables: its first pass looks up a
        // symbol whose line is past its file's longest line so far (which only an accepted
        // symbol extends), its second pass every symbol of a file with lines.
        let (incl, excl) = (Table::InclAnno, Table::ExclAnno);
        let mut probes = super::debug::Trace::new(a.trace.level);
        let mut num_lines = vec![0u64; found.num_files()];
        for (s, at) in syms.iter().zip(of_syms) {
            if let Some((file, line)) = *at {
                let n = &mut num_lines[file as usize];
                if line > *n && t.on(incl, excl, s.addr, &mut probes) {
                    *n = line;
                }
            }
        }
        for (s, at) in syms.iter().zip(of_syms) {
            if let Some((file, _)) = *at {
                if num_lines[file as usize] != 0 {
                    t.on(incl, excl, s.addr, &mut probes);
                }
            }
        }
        out.append(&mut probes.out);
    }
    let mut last_count = 0u64;
    let mut first_file = true;
    for (k, &file) in files.iter().enumerate().rev() {
        let path = found.path(file);
        // A file without symbols has no lines to annotate (its symbols' lines are not 0).
        if of_file[k].is_empty() {
            continue;
        }
        // The lines with symbols, in line order (a file can have millions of lines and a few
        // symbols): several symbols of one line add up, the first in table order giving its
        // kind.
        let mut syms_by_line = std::mem::take(&mut of_file[k]);
        syms_by_line.sort_by_key(|&(_, line)| line);
        let mut lines: Vec<LineStat> = Vec::with_capacity(syms_by_line.len());
        let mut total = 0u64;
        for &(i, line) in &syms_by_line {
            let calls = a.cg.nodes[i].ncalls;
            total = total.wrapping_add(calls);
            match lines.last_mut() {
                Some(st) if st.line == line => st.calls = st.calls.wrapping_add(calls),
                _ => lines.push(LineStat {
                    line,
                    calls,
                    is_func: syms[i].is_func,
                }),
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
        // With -y the file is written as it is printed, as gprof writes it: created once its
        // source opened, then filled a megabyte at a time.
        let ann_name = opts.separate_files.then(|| {
            let mut file_name = super::base_name(path).to_vec();
            file_name.extend_from_slice(b"-ann");
            String::from_utf8_lossy(&file_name).into_owned()
        });
        let write_err = |e: std::io::Error| match &ann_name {
            Some(name) => Error::input(format!("{name}: {e}")),
            None => Error::from(e),
        };
        let mut ann_file = match &ann_name {
            Some(name) => Some(std::fs::File::create(name).map_err(write_err)?),
            None => None,
        };
        let mut buf = Vec::new();
        let (target, dest): (&mut Vec<u8>, &mut dyn Write) = match ann_file.as_mut() {
            Some(file) => (&mut buf, file),
            None => (&mut *out, &mut *sink),
        };
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
        // Each line (the last one also without its newline) after its annotation. The sources
        // can be tens of megabytes: what is printed goes out a megabyte at a time, so that
        // one buffer, warm in the cache, serves the whole file.
        let mut rest = &source[..];
        let mut stats = lines.iter().peekable();
        let mut line_num = 1u64;
        while !rest.is_empty() {
            let stat = stats.next_if(|st| st.line == line_num).copied();
            line_num += 1;
            annotation(
                stat,
                opts,
                &mut last_count,
                &mut executable,
                &mut executed,
                target,
            );
            let end = memchr::memchr(b'\n', rest).map_or(rest.len(), |i| i + 1);
            target.extend_from_slice(&rest[..end]);
            rest = &rest[end..];
            super::sink::spill(target, dest).map_err(write_err)?;
        }
        if opts.table_length > 0 {
            target.extend_from_slice(
                format!(
                    "\n\nTop {} Lines:\n\n     Line      Count\n\n",
                    opts.table_length
                )
                .as_bytes(),
            );
            // `cmp_ncalls` through glibc's merge sort puts the lines with a symbol first, by
            // most calls, then lower line number (a total order: a line is there once), and
            // the table stops at the first without calls: the first of those with calls in
            // that order, chosen without sorting every line of the file.
            let n = opts.table_length;
            let by = |l: &LineStat, r: &LineStat| r.calls.cmp(&l.calls).then(l.line.cmp(&r.line));
            let mut top: Vec<LineStat> = lines.iter().filter(|s| s.calls != 0).copied().collect();
            if top.len() > n {
                top.select_nth_unstable_by(n - 1, by);
                top.truncate(n);
            }
            top.sort_unstable_by(by);
            for st in &top {
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
        if let Some(mut file) = ann_file {
            file.write_all(&buf).map_err(write_err)?;
        } else {
            super::sink::spill(out, sink)?;
        }
    }
    Ok(warnings)
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
    // `%*s` of the count and " -> " in 16 columns, cut to 16 when longer.
    let start = out.len();
    if calls < opts.min_count {
        out.extend_from_slice(b"#####");
    } else {
        printf::push_u(out, 0, calls);
    }
    out.extend_from_slice(b" -> ");
    let len = out.len() - start;
    if len >= WIDTH {
        out.truncate(start + WIDTH);
    } else {
        out.splice(start..start, std::iter::repeat_n(b' ', WIDTH - len));
    }
}

/// `annotate_source`'s search: the path itself, then each search directory joined with the
/// path (relative paths only), then each joined with the base name. Under `-d` with
/// `SRCDEBUG`, `tried` gets gprof's line for each attempt.
fn open_source(
    name: &str,
    search: &[PathBuf],
    mut tried: Option<&mut Vec<u8>>,
) -> Option<FileBytes> {
    let mut attempt = |path: &str| {
        if let Some(out) = tried.as_deref_mut() {
            out.extend_from_slice(
                format!("[annotate_source]: looking for {name}, trying {path}\n").as_bytes(),
            );
        }
        FileBytes::open(Path::new(path)).ok()
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
