//! The profile reports: `profil-report [OPTIONS] [FILE]...`.
//!
//! Inputs are recognised by content: exactly one ELF executable and any number of gmon
//! files, in any order (`gmon.out ./prog` and gprof's `./prog gmon.out` both work). With no
//! files, `a.out` and `gmon.out` are read, as gprof does.
//!
//! * `--gprof -b [-p|-P] [-q|-Q] [-z] [-a]`: byte-identical to the same `gprof` command
//!   ([`crate::gprof`]): flat profile, call graph, index by function name.
//! * `--gprof -b -l [-p|-P] [-q|-Q] [-z] [-a]`: byte-identical to the same `gprof` command
//!   ([`crate::gprof::lines`], through [`lines::run_gprof`]).
//! * `--lines`: self time per source line ([`lines`]).
//! * `--inline`: self time by source function through inlining ([`inline`]).
//! * a pcsample file instead of gmon files: flat profile per object, `--timeline`, `--svg`
//!   ([`pcsample`]).
//! * `gmon.out` with a `gmon.out.objects` manifest next to it: one report across the
//!   executable and its shared libraries ([`objects`]).
//! * default: the better report ([`default`]).
//!
//! Each module builds its report as plain data and never prints: [`crate::render`] writes
//! it as a table, JSON or CSV, and the modules' `run` functions only chain the two.

pub mod callgraph;
pub mod compare;
pub mod default;
pub mod inline;
pub mod lines;
pub mod objects;
pub mod objects_stacks;
pub mod pcsample;
pub mod sampled_graph;
pub mod timeline;

use std::io::Write;

use profil_symbols::ElfImage;

use crate::gprof::cg_print::GraphOptions;
use crate::gprof::{self, Analysis, Options};
pub use crate::profile::input::{load_inputs, GmonInput, Input, Inputs};
use crate::request::{Mode, Request};
use crate::{Error, Result};

/// Parse the executable.
pub fn parse_exe(exe: &Input) -> Result<ElfImage<'_>> {
    ElfImage::parse(&exe.data).map_err(|e| Error::input(format!("{}: {e}", exe.name())))
}

/// Run gprof's pipeline over the inputs.
pub fn gprof_analysis<'d>(
    inputs: &'d Inputs,
    image: &ElfImage<'d>,
    opts: Options,
) -> Result<Analysis<'d>> {
    let mut a = Analysis::new(image, &inputs.exe.name(), opts)?;
    for g in &inputs.gmons {
        a.read_gmon(&g.name(), &g.bytes()?)?;
    }
    a.finish();
    Ok(a)
}

/// Print the report `req` asks for to `out`; return the warnings for the user (the caller
/// prints them: on stderr, prefixed `profil-report: warning: `).
pub fn run(req: &Request, out: &mut impl Write) -> Result<Vec<String>> {
    let mut warnings = Vec::new();
    let inputs = load_inputs(&req.files)?;
    let image = parse_exe(&inputs.exe)?;
    if let Some(pc) = inputs
        .gmons
        .iter()
        .find(|g| gmon::pcsample::looks_like_pcsample(g.head()))
    {
        if inputs.gmons.len() > 1 || matches!(req.mode, Mode::Gprof(_)) {
            return Err(Error::input(format!(
                "{}: a pcsample file is reported alone: give it and the executable only (no --gprof)",
                pc.name()
            )));
        }
        pcsample::run(req, &inputs, pc, out, &mut warnings)?;
        return Ok(warnings);
    }
    if req.timeline.any() {
        return Err(Error::input(
            "--timeline and --svg need a pcsample file (PROFIL_MODE=pcsample), not a gmon file",
        ));
    }
    if let (Mode::Default, [g]) = (&req.mode, inputs.gmons.as_slice()) {
        if let Some(m) = objects::find_manifest(g) {
            objects::run_manifest(req.format, &inputs, &image, &m, out, &mut warnings)?;
            return Ok(warnings);
        }
    }
    match &req.mode {
        Mode::Gprof(g) if g.lines && g.brief => lines::run_gprof(g, &inputs, &image, out)?,
        Mode::Gprof(g) => {
            if !g.brief {
                return Err(Error::input(
                    "--gprof reproduces gprof's brief output only: use --gprof -b [-p|-q]",
                ));
            }
            let a = gprof_analysis(
                &inputs,
                &image,
                Options {
                    no_static: g.no_static,
                },
            )?;
            let last = inputs.gmons.last().map(GmonInput::name).unwrap_or_default();
            let mut buf = Vec::new();
            let opts = GraphOptions { zeros: g.zeros };
            gprof::cg_print::print_report(&a, g.sections, opts, &last, &inputs.exe.data, &mut buf)?;
            out.write_all(&buf)?;
        }
        Mode::Lines => lines::run(req.format, &inputs, &image, out)?,
        Mode::Inline => inline::run(req.format, &inputs, &image, out)?,
        Mode::CompareGprof => {
            let report = default::build(&inputs, &image)?;
            warnings.extend(report.warnings.iter().cloned());
            compare::run(&report, &inputs, &image, out)?;
        }
        Mode::Default => default::run(req.format, &inputs, &image, out, &mut warnings)?,
    }
    Ok(warnings)
}
