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

pub mod callgraph;
pub mod compare;
pub mod default;
pub mod inline;
pub mod lines;
pub mod objects;
pub mod pcsample;
pub mod timeline;

use std::io::Write;
use std::path::{Path, PathBuf};

use profil_symbols::ElfImage;

use crate::gprof::cg_print::{GraphOptions, Sections};
use crate::gprof::{self, Analysis, Options};
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

/// An input file, mapped read-only (only the pages read cost memory: a flat profile of a
/// large executable touches little more than its symbol table).
#[derive(Debug)]
pub struct Input {
    /// The path as given.
    pub path: PathBuf,
    /// Its bytes (`Vec<u8>::into()` for bytes already in memory).
    pub data: profil_symbols::file::FileBytes,
}

impl Input {
    /// The path for messages.
    pub fn name(&self) -> String {
        self.path.display().to_string()
    }
}

/// The executable and the gmon files, sorted out by content.
#[derive(Debug)]
pub struct Inputs {
    /// The executable.
    pub exe: Input,
    /// The gmon files, in command-line order.
    pub gmons: Vec<Input>,
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

fn read(path: &Path) -> Result<Input> {
    let data = profil_symbols::file::FileBytes::open(path).map_err(|e| {
        Error::input(format!(
            "{}: {}{}",
            path.display(),
            io_reason(&e),
            missing_hint(path, &e)
        ))
    })?;
    Ok(Input {
        path: path.to_owned(),
        data,
    })
}

/// What a new user should do when the default inputs are missing.
fn missing_hint(path: &Path, e: &std::io::Error) -> &'static str {
    if e.kind() != std::io::ErrorKind::NotFound {
        return "";
    }
    match path.file_name().and_then(|n| n.to_str()) {
        Some("gmon.out") => {
            " (no profile yet: run the program with `profil-report run ./prog`, or link the \
             runtime in with `profil-report link-args` / `cargo profil` and run it; it writes \
             gmon.out in its working directory when it exits)"
        }
        Some("a.out") if path == Path::new("a.out") => {
            " (name the profiled program: `profil-report gmon.out ./prog`)"
        }
        _ => "",
    }
}

fn io_reason(e: &std::io::Error) -> String {
    match e.kind() {
        std::io::ErrorKind::NotFound => "no such file".into(),
        std::io::ErrorKind::PermissionDenied => "permission denied".into(),
        _ => e.to_string(),
    }
}

/// Read the files and tell the executable from the gmon files.
pub fn load_inputs(files: &[PathBuf]) -> Result<Inputs> {
    let files: Vec<PathBuf> = if files.is_empty() {
        vec![PathBuf::from("a.out"), PathBuf::from("gmon.out")]
    } else {
        files.to_vec()
    };
    let mut exe: Option<Input> = None;
    let mut gmons = Vec::new();
    for f in &files {
        let input = read(f)?;
        if profil_symbols::elf::looks_like_elf(&input.data) {
            if let Some(first) = &exe {
                return Err(Error::input(format!(
                    "{}: a second executable (already have {}); give exactly one",
                    input.name(),
                    first.name()
                )));
            }
            exe = Some(input);
        } else {
            gmons.push(input);
        }
    }
    let exe = exe.ok_or_else(|| {
        // Name what was read, so that a damaged or wrong "executable" is recognisable.
        let names: Vec<String> = gmons.iter().map(Input::name).collect();
        Error::input(format!(
            "no executable among the inputs ({} not ELF; give the program as well as its gmon files)",
            names.join(", ")
        ))
    })?;
    if gmons.is_empty() {
        gmons.push(read(Path::new("gmon.out"))?);
    }
    Ok(Inputs { exe, gmons })
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
        a.read_gmon(&g.name(), &g.data)?;
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
        .find(|g| gmon::pcsample::looks_like_pcsample(&g.data))
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
        let last = inputs.gmons.last().map(Input::name).unwrap_or_default();
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
