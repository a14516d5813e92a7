//! The whole of gprof's output for one run: which sections, in gprof's order, each printed by
//! its own module ([`super::flat`], [`super::cg_print`], [`super::annotate`],
//! [`super::ordering`], [`super::file_order`]). Kept apart from the call-graph printer, which the flat profile and the
//! function ordering use, so that no module of the emulation imports one that imports it.

use super::cg_print::{self, GraphOptions, Sections};
use super::flat::{self, FlatOptions};
use super::Analysis;
use crate::Result;

/// Print what gprof prints for the sections `req` and the options `opts`, in gprof's order
/// (`-i`'s summary, the flat profile, the call graph and its index, execution counts,
/// annotated source, function order, file order; `-T` puts the call graph first). With neither a
/// histogram nor arcs and no section asked for, gprof falls back to the execution counts
/// (empty without `-z`); so do we. `exe` is the executable's bytes (its DWARF names source
/// files). Returns the warnings (sources `-A` could not find). The text goes to `out`, which
/// the printers write to `sink` and empty whenever it holds a megabyte
/// ([`super::sink::spill`]): what is left in `out` is the caller's to write.
pub fn print_report(
    a: &Analysis<'_>,
    req: Sections,
    opts: GraphOptions,
    gmon: &str,
    exe: &[u8],
    out: &mut Vec<u8>,
    sink: &mut dyn std::io::Write,
) -> Result<Vec<String>> {
    let mut warnings = Vec::new();
    if a.bb_ignored {
        warnings.push(super::BB_IGNORED.to_string());
    }
    // Under -d the caller has put each file's lines among the traces, where gprof prints them.
    if req.file_info && a.trace.level == 0 {
        cg_print::print_file_info(a, out);
    }
    let (flat, graph) = cg_print::choose_sections(a, req, gmon)?;
    let mut first = !req.file_info;
    // Under -T the call graph comes first, its index last.
    if graph && opts.bsd {
        cg_print::print(a, opts, first, out, sink)?;
        first = false;
    }
    if flat {
        if !first {
            out.extend_from_slice(b"\x0c\n");
        }
        let fo = FlatOptions {
            zeros: opts.zeros,
            bsd: opts.bsd,
        };
        if opts.bsd && !opts.brief {
            out.extend_from_slice(b"\n\n\nflat profile:\n");
            out.extend_from_slice(cg_print::FLAT_BLURB);
        }
        flat::print(a, fo, out, sink)?;
        if !opts.brief && !opts.bsd {
            out.extend_from_slice(cg_print::FLAT_BLURB);
        }
        first = false;
    }
    if graph {
        if !opts.bsd {
            cg_print::print(a, opts, first, out, sink)?;
        }
        // Under line granularity gprof prints no `(file)` after static functions.
        let files = match a.lines {
            Some(_) => Vec::new(),
            None => cg_print::static_source_files(a, exe),
        };
        cg_print::print_index(a, opts, &files, out, sink)?;
        first = false;
    }
    let guessed = req.guess_exec_counts && !a.hist.present() && !a.has_call_graph;
    if req.exec_counts || guessed {
        if !first {
            out.extend_from_slice(b"\x0c\n");
        }
        cg_print::print_exec_counts(a, opts, exe, out, sink)?;
        first = false;
    }
    if req.annotated_source {
        warnings.extend(super::annotate::print(
            a,
            exe,
            &opts.annotate,
            opts.zeros,
            first,
            out,
            sink,
        )?);
    }
    if req.function_order {
        super::ordering::print(a, graph, opts, out);
    }
    if let (true, Some(map)) = (req.file_order, &a.function_map) {
        super::file_order::print(a, map, out);
    }
    Ok(warnings)
}
