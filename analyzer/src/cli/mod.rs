//! The command line (clap derives): parsed here, turned into the library's typed requests
//! and option structs ([`Request`], `cmd::*::Options`, [`export::Options`],
//! [`diff::Options`], `launch::*::Options`), so that clap stays out of the library. The
//! options `run` shares with `cargo profil` are in [`profile`], which the `cargo-profil`
//! binary includes too.

pub mod gprof;
mod profile;

use std::ffi::OsString;
use std::path::PathBuf;

use clap::error::ErrorKind;
use clap::{CommandFactory, Parser, Subcommand, ValueEnum};

use profil_report::cmd::{convert, dump, link_args, merge, runtime_path};
use profil_report::gprof::cg_print::Sections;
use profil_report::request::{Format, GprofRequest, Mode, Request, Timeline};
use profil_report::{diff, export, launch};

#[derive(Parser, Debug)]
#[command(
    name = "profil-report",
    version,
    about = "Reports for gmon.out profiles: a gprof-identical mode and a better default",
    args_conflicts_with_subcommands = true
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,
    #[command(flatten)]
    pub report: ReportArgs,
    /// Full names and paths, every column, no 100-column budget (reports, run, diff, demo).
    #[arg(long, global = true)]
    pub wide: bool,
}

impl Cli {
    /// Parse the process's arguments, or exit as clap does (status 2) where the words cannot
    /// be meant as a report: a first word that is no file but one typo away from a subcommand
    /// (`rnu`, `expot --to pprof`: clap would take it for a file to read), and nothing given
    /// where there is no `gmon.out` to read (the usage, rather than `a.out: no such file`).
    pub fn parse_or_exit() -> Cli {
        let argv: Vec<OsString> = std::env::args_os().collect();
        let cmd = Cli::command();
        match argv.get(1) {
            None if !std::path::Path::new("gmon.out").exists() => {
                let mut cmd = cmd;
                eprint!("{}", cmd.render_help());
                std::process::exit(2);
            }
            Some(first) => {
                let names: Vec<&str> = cmd.get_subcommands().map(|c| c.get_name()).collect();
                if let Some(near) = first
                    .to_str()
                    .filter(|w| !w.starts_with('-') && !std::path::Path::new(w).exists())
                    .and_then(|w| similar_subcommand(w, &names).map(|n| (w, n)))
                {
                    let (word, name) = near;
                    let mut cmd = Cli::command();
                    cmd.error(
                        ErrorKind::InvalidSubcommand,
                        format!(
                            "unrecognized subcommand '{word}' (and no such file)\n\n  \
                             tip: a similar subcommand exists: '{name}'"
                        ),
                    )
                    .exit();
                }
            }
            None => {}
        }
        Cli::parse_from(argv)
    }
}

/// The subcommand `word` is most likely a typo of: one edit away (a letter added, dropped,
/// changed, or two neighbours swapped), two for words of five letters or more.
fn similar_subcommand<'a>(word: &str, names: &[&'a str]) -> Option<&'a str> {
    let limit = if word.chars().count() >= 5 { 2 } else { 1 };
    names
        .iter()
        .map(|n| (typo_distance(word, n), *n))
        .filter(|&(d, _)| d > 0 && d <= limit)
        .min_by_key(|&(d, _)| d)
        .map(|(_, n)| n)
}

/// The optimal string alignment distance: insertions, deletions, substitutions and swaps of
/// adjacent letters, each counted once.
fn typo_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let mut d = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for (i, row) in d.iter_mut().enumerate() {
        row[0] = i;
    }
    d[0] = (0..=b.len()).collect();
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut v = (d[i - 1][j] + 1)
                .min(d[i][j - 1] + 1)
                .min(d[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                v = v.min(d[i - 2][j - 2] + 1);
            }
            d[i][j] = v;
        }
    }
    d[a.len()][b.len()]
}

/// Arguments of the report (the command without a subcommand); [`ReportArgs::request`]
/// turns them into the library's typed [`Request`].
#[derive(clap::Args, Debug, Default, Clone)]
pub struct ReportArgs {
    /// gmon files and the executable, in any order (default: a.out gmon.out).
    files: Vec<PathBuf>,
    /// Emulate GNU gprof 2.40 exactly: with -b, its brief flat profile, call graph and index.
    #[arg(long)]
    gprof: bool,
    /// gprof's -b (brief: no explanations). Required with --gprof.
    #[arg(short = 'b', long = "brief")]
    brief: bool,
    /// gprof's -p: the flat profile (without -p/-q, every section the profile has data for).
    #[arg(short = 'p', long = "flat-profile")]
    flat_profile: bool,
    /// gprof's -P: no flat profile.
    #[arg(short = 'P', long = "no-flat-profile")]
    no_flat_profile: bool,
    /// gprof's -q: the call graph (with its index by function name).
    #[arg(short = 'q', long = "graph")]
    graph: bool,
    /// gprof's -Q: no call graph.
    #[arg(short = 'Q', long = "no-graph")]
    no_graph: bool,
    /// With --gprof: gprof's -z, also list functions that were never called and have no time.
    #[arg(short = 'z', long = "display-unused-functions")]
    zeros: bool,
    /// With --gprof: gprof's -a, ignore static (local) functions (their samples go to the
    /// preceding symbol).
    #[arg(short = 'a', long = "no-static")]
    no_static: bool,
    /// Default report: print JSON instead of a table.
    #[arg(long, conflicts_with_all = ["csv", "gprof"])]
    json: bool,
    /// Default report: print CSV instead of a table.
    #[arg(long, conflicts_with_all = ["json", "gprof"])]
    csv: bool,
    /// Run the installed gprof on the same inputs and explain every difference (a table
    /// only).
    #[arg(long, conflicts_with_all = ["gprof", "json", "csv"])]
    compare_gprof: bool,
    /// Self time per source line (DWARF); with --gprof, gprof's -l (one row per address).
    #[arg(short = 'l', long = "lines", conflicts_with = "compare_gprof")]
    lines: bool,
    /// Self time by source function through inlining (DWARF), and by inline chain.
    #[arg(long = "inline", conflicts_with_all = ["compare_gprof", "gprof", "lines"])]
    inline: bool,
    /// Time by the program's own source lines: each sample credited to the innermost frame
    /// in the package's source tree (DWARF line tables; inlined copies and callers followed).
    #[arg(long = "own-lines", conflicts_with_all = ["compare_gprof", "gprof", "lines", "inline"])]
    own_lines: bool,
    /// With --own-lines: every crate outside the standard library and the cargo registry is
    /// the program's own (not only the package's source tree).
    #[arg(long = "own-crates", requires = "own_lines")]
    own_crates: bool,
    /// With --own-lines: list, per line, what ran below the program's frame.
    #[arg(long, requires = "own_lines")]
    chains: bool,
    /// With a pcsample file: samples over time by the top functions, as text.
    #[arg(long)]
    timeline: bool,
    /// With a pcsample file: write the timeline as an SVG chart to FILE.
    #[arg(long, value_name = "FILE")]
    svg: Option<PathBuf>,
}

impl ReportArgs {
    /// The library's request.
    pub fn request(self) -> Request {
        let format = Format::from_flags(self.json, self.csv);
        let mode = if self.gprof {
            Mode::Gprof(GprofRequest {
                brief: self.brief,
                sections: Sections {
                    flat: self.flat_profile,
                    no_flat: self.no_flat_profile,
                    graph: self.graph,
                    no_graph: self.no_graph,
                    file_info: false,
                    exec_counts: false,
                    annotated_source: false,
                    function_order: false,
                    file_order: false,
                    guess_exec_counts: true,
                },
                zeros: self.zeros,
                no_static: self.no_static,
                lines: self.lines,
                specs: &[],
                static_calls: false,
                width: None,
                sum: false,
                ignore_non_functions: false,
                no_demangle: false,
                demangle_style: Default::default(),
                bsd: false,
                print_path: false,
                inline_file_names: false,
                file_format: Default::default(),
                annotate: Default::default(),
                external_symbols: None,
                debug: 0,
                debug_banners: "",
                file_ordering: None,
            })
        } else if self.compare_gprof {
            Mode::CompareGprof
        } else if self.lines {
            Mode::Lines
        } else if self.inline {
            Mode::Inline
        } else if self.own_lines {
            Mode::OwnLines {
                scope: profil_report::report::own_lines::Scope::with_crates(self.own_crates),
                chains: self.chains,
            }
        } else {
            Mode::Default
        };
        Request {
            files: self.files,
            mode,
            format,
            timeline: Timeline {
                text: self.timeline,
                svg: self.svg,
            },
        }
    }
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Print every record of a gmon file (like `gprof -i`, but complete).
    Dump(DumpArgs),
    /// Convert a gmon file between the GNU, 4.4BSD and old BSD formats.
    Convert(ConvertArgs),
    /// Sum several gmon files into one (gprof's rules, without `gprof -s` side effects).
    Merge(MergeArgs),
    /// Print the absolute path of the runtime object (or, with --shared, the shared object).
    RuntimePath(RuntimePathArgs),
    /// Print the words that link the runtime into a program (RUSTFLAGS; --cc for C).
    #[command(long_about = LINK_ARGS_ABOUT)]
    LinkArgs(LinkArgsArgs),
    /// Run a dynamically linked program with the runtime preloaded, then print its report.
    Run(RunArgs),
    /// Build and profile the bundled demo workload, next to gprof's view of it.
    Demo(DemoArgs),
    /// Write the profile as pprof, folded stacks, a flame graph SVG, callgrind or speedscope.
    Export(ExportArgs),
    /// Compare two sets of runs: which functions changed, and which changes are noise.
    Diff(DiffArgs),
    /// Write the report as one interactive HTML file (table, flame graph, callers and
    /// callees, source lines), opened from disk in any browser.
    Html(HtmlArgs),
}

/// Arguments of `profil-report run`.
#[derive(clap::Args, Debug)]
#[command(after_help = "\
The program's stdin, stdout and stderr pass through; the report follows on stderr (or --report).
Every process of the tree keeps its profile: the busiest as --out, the others (and every side
file) in the folder <out>.d/ beside it.
profil-report exits with the program's status (128+N if signal N killed it).
Arguments after CMD are the program's: profil-report run ./prog --its-own-flag

Examples:
  profil-report run ./prog input.txt
  profil-report run --hz 2000 --report - -- ./prog > everything.txt
  profil-report run --out prog.gmon --json --report prog.json ./prog
  profil-report run --all sh -c './prog a; ./prog b'   (every process, each its own report)
  profil-report run sort big.txt > sorted.txt          (stripped programs and their libraries)")]
pub struct RunArgs {
    /// The rate, and where the profile and report go.
    #[command(flatten)]
    pub profile: profile::ProfileArgs,
    /// The program and its arguments.
    #[arg(
        required = true,
        trailing_var_arg = true,
        allow_hyphen_values = true,
        value_name = "CMD"
    )]
    pub command: Vec<OsString>,
}

impl RunArgs {
    /// The library's options.
    pub fn options(self) -> launch::run::Options {
        launch::run::Options {
            profile: self.profile.options(),
            command: self.command,
        }
    }
}

/// Arguments of `profil-report demo`.
#[derive(clap::Args, Debug)]
pub struct DemoArgs {
    /// Samples per CPU-second (sets PROFIL_HZ; default: PROFIL_HZ if set, else 1000).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=i64::from(launch::MAX_HZ)))]
    pub hz: Option<u32>,
    /// Work units per 10% share (30 is about one CPU-second).
    #[arg(long, value_name = "N", default_value_t = 30, value_parser = clap::value_parser!(u32).range(1..=100_000))]
    pub scale: u32,
    /// Build and run in DIR and keep demo.c, demo and gmon.out there (default: a scratch
    /// directory, removed afterwards).
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
    /// Do not run gprof even if it is installed.
    #[arg(long)]
    pub no_gprof: bool,
}

impl DemoArgs {
    /// The library's options.
    pub fn options(self) -> launch::demo::Options {
        launch::demo::Options {
            hz: self.hz,
            scale: self.scale,
            dir: self.dir,
            no_gprof: self.no_gprof,
        }
    }
}

/// Arguments of `profil-report dump`.
#[derive(clap::Args, Debug)]
pub struct DumpArgs {
    /// The gmon file.
    file: PathBuf,
    /// The executable the profile belongs to: its ELF class and byte order decide how the
    /// file is decoded. Without it, both are guessed from the file (and the dump says so).
    #[arg(long, value_name = "PROG")]
    exe: Option<PathBuf>,
    /// Machine-readable output (one JSON object, every bin included).
    #[arg(long)]
    json: bool,
    /// List every bin, zeros included (text output lists only non-zero bins).
    #[arg(long)]
    all_bins: bool,
}

impl DumpArgs {
    pub fn options(self) -> dump::Options {
        dump::Options {
            file: self.file,
            exe: self.exe,
            json: self.json,
            all_bins: self.all_bins,
        }
    }
}

/// Output format names on the command line.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
enum To {
    /// GNU tagged format ("gmon" magic, version 1), what glibc writes.
    Gnu,
    /// 4.4BSD format (`struct gmonhdr`, with the sampling rate).
    Bsd,
    /// Old BSD format (no rate; gprof assumes 100 Hz).
    Oldbsd,
}

impl From<To> for convert::To {
    fn from(t: To) -> Self {
        match t {
            To::Gnu => convert::To::Gnu,
            To::Bsd => convert::To::Bsd,
            To::Oldbsd => convert::To::Oldbsd,
        }
    }
}

/// Arguments of `profil-report convert`.
#[derive(clap::Args, Debug)]
pub struct ConvertArgs {
    /// Output format.
    #[arg(long, value_enum)]
    to: To,
    /// The gmon file to convert.
    input: PathBuf,
    /// Where to write the converted file (replaced atomically).
    output: PathBuf,
    /// The executable the profile belongs to (decides pointer size and byte order; guessed
    /// from the file without it).
    #[arg(long, value_name = "PROG")]
    exe: Option<PathBuf>,
}

impl ConvertArgs {
    pub fn options(self) -> convert::Options {
        convert::Options {
            to: self.to.into(),
            input: self.input,
            output: self.output,
            exe: self.exe,
        }
    }
}

/// Arguments of `profil-report merge`.
#[derive(clap::Args, Debug)]
pub struct MergeArgs {
    /// Where to write the sum (replaced atomically).
    #[arg(short, long, value_name = "OUT")]
    output: PathBuf,
    /// The gmon files to sum, in order (order matters to gprof's rules, as it does to gprof).
    #[arg(required = true, value_name = "IN")]
    inputs: Vec<PathBuf>,
    /// The executable the profiles belong to (decides pointer size and byte order; guessed
    /// from the first file without it).
    #[arg(long, value_name = "PROG")]
    exe: Option<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value = "gnu")]
    to: To,
}

impl MergeArgs {
    pub fn options(self) -> merge::Options {
        merge::Options {
            output: self.output,
            inputs: self.inputs,
            exe: self.exe,
            to: self.to.into(),
        }
    }
}

/// `profil-report link-args --help`: what the words do, and what a static link needs.
const LINK_ARGS_ABOUT: &str = "Print the words that link the runtime into a program: for Rust as \
RUSTFLAGS (`RUSTFLAGS=\"$(profil-report link-args)\" cargo build --target <host triple>`), with \
--cc for a C compiler (`cc prog.c $(profil-report link-args --cc)`). They are the runtime object's \
path and linker options, the same for dynamic and static programs.

Dynamic links need the object only: it defines pthread_create, so the threads the program and its \
shared libraries start are sampled in proportion to their CPU time, however short.

Static links (C -static or -static-pie, Rust -C target-feature=+crt-static) need the options too: \
libc.a defines syscall, execvp and a few other functions the runtime wraps, and where the linker \
reads libc.a before the object (rustc puts link arguments after the libraries) libc's are linked; \
the options (--wrap, --defsym) send the program's calls to the runtime's, which write the profile \
before an exec. GNU ld, gold and rust-lld take them. A static Rust program needs rustc's default \
linker, rust-lld: GNU ld (-C linker-features=-lld) reads libc.a once, before the object, and misses \
the libc functions only the runtime calls.";

/// Arguments of `profil-report link-args`.
#[derive(clap::Args, Debug)]
pub struct LinkArgsArgs {
    /// Print the words for a C compiler's command line instead of RUSTFLAGS.
    #[arg(long)]
    cc: bool,
}

impl LinkArgsArgs {
    pub fn options(self) -> link_args::Options {
        link_args::Options { cc: self.cc }
    }
}

/// Arguments of `profil-report runtime-path`.
#[derive(clap::Args, Debug)]
pub struct RuntimePathArgs {
    /// Print the shared object's path (for LD_PRELOAD) instead of the relocatable object's.
    #[arg(long)]
    shared: bool,
}

impl RuntimePathArgs {
    pub fn options(self) -> runtime_path::Options {
        runtime_path::Options {
            shared: self.shared,
        }
    }
}

/// An export format.
#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
enum ExportFormat {
    /// Gzipped profile.proto (go tool pprof, Pyroscope, Parca).
    Pprof,
    /// Collapsed stacks, `root;…;leaf count`.
    Folded,
    /// A flame graph (inferno).
    Svg,
    /// The callgrind format (KCachegrind, callgrind_annotate).
    Callgrind,
    /// Speedscope's JSON format.
    Speedscope,
}

impl From<ExportFormat> for export::Format {
    fn from(f: ExportFormat) -> Self {
        match f {
            ExportFormat::Pprof => export::Format::Pprof,
            ExportFormat::Folded => export::Format::Folded,
            ExportFormat::Svg => export::Format::Svg,
            ExportFormat::Callgrind => export::Format::Callgrind,
            ExportFormat::Speedscope => export::Format::Speedscope,
        }
    }
}

/// Arguments of `profil-report export`.
#[derive(clap::Args, Debug)]
pub struct ExportArgs {
    /// Output format.
    #[arg(long, value_enum)]
    to: ExportFormat,
    /// Where to write it (`-` for standard output).
    #[arg(short, long, value_name = "FILE")]
    output: PathBuf,
    /// gmon files (summed) and the executable, in any order.
    #[arg(required = true, value_name = "FILES")]
    files: Vec<PathBuf>,
}

impl ExportArgs {
    pub fn options(self) -> export::Options {
        export::Options {
            to: self.to.into(),
            output: self.output,
            files: self.files,
        }
    }
}

/// Arguments of `profil-report html`.
#[derive(clap::Args, Debug)]
pub struct HtmlArgs {
    /// Where to write the page.
    #[arg(short, long, value_name = "FILE")]
    output: PathBuf,
    /// gmon files and the executable, in any order (default: a.out gmon.out).
    #[arg(value_name = "FILES")]
    files: Vec<PathBuf>,
}

impl HtmlArgs {
    pub fn options(self) -> profil_report::cmd::html::Options {
        profil_report::cmd::html::Options {
            output: self.output,
            files: self.files,
        }
    }
}

/// Arguments of `profil-report diff`.
#[derive(clap::Args, Debug)]
pub struct DiffArgs {
    /// gmon files of the base runs (one file per run), optionally with the executable.
    #[arg(long, required = true, num_args = 1.., value_name = "FILE")]
    base: Vec<PathBuf>,
    /// gmon files of the new runs (one file per run), optionally with the executable.
    #[arg(long, required = true, num_args = 1.., value_name = "FILE")]
    new: Vec<PathBuf>,
    /// The base executable (default: the one among --base, else the new one).
    #[arg(long, value_name = "OLD")]
    base_exe: Option<PathBuf>,
    /// The new executable (default: the one among --new, else the base one).
    #[arg(long, value_name = "NEW")]
    new_exe: Option<PathBuf>,
    /// Print JSON instead of a table.
    #[arg(long)]
    json: bool,
    /// Also write the comparison as an interactive HTML page to FILE.
    #[arg(long, value_name = "FILE")]
    html: Option<PathBuf>,
    /// Family-wise significance level (Holm-corrected over the functions shown).
    #[arg(long, default_value_t = diff::ALPHA, value_parser = parse_alpha)]
    alpha: f64,
}

fn parse_alpha(s: &str) -> std::result::Result<f64, String> {
    match s.parse::<f64>() {
        Ok(a) if a > 0.0 && a < 1.0 => Ok(a),
        _ => Err(format!("{s}: give a level between 0 and 1, such as 0.05")),
    }
}

impl DiffArgs {
    pub fn options(self) -> diff::Options {
        diff::Options {
            base: self.base,
            new: self.new,
            base_exe: self.base_exe,
            new_exe: self.new_exe,
            json: self.json,
            html: self.html,
            alpha: self.alpha,
        }
    }
}
