//! The profile reports: `profil-report [OPTIONS] [FILE]...`.
//!
//! Inputs are recognised by content: exactly one ELF executable and any number of gmon
//! files, in any order (`gmon.out ./prog` and gprof's `./prog gmon.out` both work). With no
//! files, `a.out` and `gmon.out` are read, as gprof does.
//!
//! * `--gprof -b [-p|-P] [-q|-Q] [-z] [-a]`: byte-identical to the same `gprof` command
//!   ([`crate::gprof`]): flat profile, call graph, index by function name.
//! * `--gprof -b -p -l`: byte-identical to `gprof -b -p -l` ([`lines::run_gprof`]).
//! * `--lines`: self time per source line ([`lines`]).
//! * `--inline`: self time by source function through inlining ([`inline`]).
//! * a pcsample file instead of gmon files: flat profile per object, `--timeline`, `--svg`
//!   ([`pcsample`]).
//! * `gmon.out` with a `gmon.out.objects` manifest next to it: one report across the
//!   executable and its shared libraries ([`objects`]).
//! * default: the better report ([`default`]).

pub mod callgraph;
pub mod compare;
pub mod default;
pub mod inline;
pub mod lines;
pub mod objects;
pub mod pcsample;
pub mod timeline;

use std::io::Write;
use std::path::PathBuf;

use profil_symbols::ElfImage;

use crate::gprof::cg_print::{GraphOptions, Sections};
use crate::gprof::{self, Analysis, Options};
pub use crate::profile::input::{load_inputs, GmonInput, Input, Inputs};
use crate::{Error, Result};

/// Arguments of the report (the command without a subcommand).
#[derive(clap::Args, Debug, Default, Clone)]
pub struct ReportArgs {
    /// gmon files and the executable, in any order (default: a.out gmon.out).
    pub files: Vec<PathBuf>,
    /// Emulate GNU gprof 2.40 exactly: with -b, its brief flat profile, call graph and index.
    #[arg(long)]
    pub gprof: bool,
    /// gprof's -b (brief: no explanations). Required with --gprof.
    #[arg(short = 'b', long = "brief")]
    pub brief: bool,
    /// gprof's -p: the flat profile (without -p/-q, every section the profile has data for).
    #[arg(short = 'p', long = "flat-profile")]
    pub flat_profile: bool,
    /// gprof's -P: no flat profile.
    #[arg(short = 'P', long = "no-flat-profile")]
    pub no_flat_profile: bool,
    /// gprof's -q: the call graph (with its index by function name).
    #[arg(short = 'q', long = "graph")]
    pub graph: bool,
    /// gprof's -Q: no call graph.
    #[arg(short = 'Q', long = "no-graph")]
    pub no_graph: bool,
    /// With --gprof: gprof's -z, also list functions that were never called and have no time.
    #[arg(short = 'z', long = "display-unused-functions")]
    pub zeros: bool,
    /// With --gprof: gprof's -a, ignore static (local) functions (their samples go to the
    /// preceding symbol).
    #[arg(short = 'a', long = "no-static")]
    pub no_static: bool,
    /// Default report: print JSON instead of a table.
    #[arg(long, conflicts_with_all = ["csv", "gprof"])]
    pub json: bool,
    /// Default report: print CSV instead of a table.
    #[arg(long, conflicts_with_all = ["json", "gprof"])]
    pub csv: bool,
    /// Run the installed gprof on the same inputs and explain every difference.
    #[arg(long, conflicts_with = "gprof")]
    pub compare_gprof: bool,
    /// Self time per source line (DWARF); with --gprof, gprof's -l (one row per address).
    #[arg(short = 'l', long = "lines", conflicts_with = "compare_gprof")]
    pub lines: bool,
    /// Self time by source function through inlining (DWARF), and by inline chain.
    #[arg(long = "inline", conflicts_with_all = ["compare_gprof", "gprof", "lines"])]
    pub inline: bool,
    /// With a pcsample file: samples over time by the top functions, as text.
    #[arg(long)]
    pub timeline: bool,
    /// With a pcsample file: write the timeline as an SVG chart to FILE.
    #[arg(long, value_name = "FILE")]
    pub svg: Option<PathBuf>,
}

/// One CSV field of the reports' `--csv` outputs: quoted (inner quotes doubled) when it holds
/// a comma, a quote or a line break, as is otherwise.
pub(crate) fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_owned()
    }
}

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

/// Print the report.
pub fn run(args: &ReportArgs, out: &mut impl Write) -> Result<()> {
    let inputs = load_inputs(&args.files)?;
    let image = parse_exe(&inputs.exe)?;
    if let Some(pc) = inputs
        .gmons
        .iter()
        .find(|g| gmon::pcsample::looks_like_pcsample(g.head()))
    {
        if inputs.gmons.len() > 1 || args.gprof {
            return Err(Error::input(format!(
                "{}: a pcsample file is reported alone: give it and the executable only (no --gprof)",
                pc.name()
            )));
        }
        return pcsample::run(args, &inputs, pc, out);
    }
    if args.timeline || args.svg.is_some() {
        return Err(Error::input(
            "--timeline and --svg need a pcsample file (PROFIL_MODE=pcsample), not a gmon file",
        ));
    }
    if let (false, false, false, false, [g]) = (
        args.gprof,
        args.lines,
        args.inline,
        args.compare_gprof,
        inputs.gmons.as_slice(),
    ) {
        if let Some(m) = objects::find_manifest(g) {
            return objects::run_manifest(args, &inputs, &image, &m, out);
        }
    }
    if args.gprof && args.lines && args.brief {
        return lines::run_gprof(args, &inputs, &image, out);
    }
    if args.gprof {
        if !args.brief {
            return Err(Error::input(
                "--gprof reproduces gprof's brief output only: use --gprof -b [-p|-q]",
            ));
        }
        let a = gprof_analysis(
            &inputs,
            &image,
            Options {
                no_static: args.no_static,
            },
        )?;
        let last = inputs.gmons.last().map(GmonInput::name).unwrap_or_default();
        let sections = Sections {
            flat: args.flat_profile,
            no_flat: args.no_flat_profile,
            graph: args.graph,
            no_graph: args.no_graph,
        };
        let mut buf = Vec::new();
        let opts = GraphOptions { zeros: args.zeros };
        gprof::cg_print::print_report(&a, sections, opts, &last, &inputs.exe.data, &mut buf)?;
        out.write_all(&buf)?;
        return Ok(());
    }
    if args.lines {
        return lines::run(args, &inputs, &image, out);
    }
    if args.inline {
        return inline::run(args, &inputs, &image, out);
    }
    default::run(args, &inputs, &image, out)
}

#[cfg(test)]
mod tests {
    use super::csv_field;

    #[test]
    fn csv_fields_are_quoted_only_when_needed() {
        assert_eq!(csv_field("main"), "main");
        assert_eq!(csv_field(""), "");
        assert_eq!(csv_field("f(int, int)"), "\"f(int, int)\"");
        assert_eq!(csv_field("say \"hi\""), "\"say \"\"hi\"\"\"");
        assert_eq!(csv_field("a\nb"), "\"a\nb\"");
        assert_eq!(csv_field("a\rb"), "\"a\rb\"");
    }
}
