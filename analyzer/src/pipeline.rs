//! The profile report from end to end: load the inputs ([`crate::profile::input`]), build the
//! report ([`crate::report`]), write it ([`crate::render`]).
//!
//! This is the one module that knows both the builders and the renderers, so neither needs
//! the other's: a builder returns plain data and never prints, a renderer takes that data and
//! never computes. [`run`] is the one entry point: `profil-report [OPTIONS] [FILE]...` and
//! the launchers (`run`, `demo` and `cargo profil`, [`crate::launch`], for the program they
//! ran) build a [`Request`] (which report, in which format) and call it, and [`report`] is
//! the one place that chooses the report. The `--gprof` modes are the emulation's own
//! ([`crate::gprof`]), which builds and prints gprof's text in one; `--compare-gprof` runs
//! the installed gprof and the emulation here and gives both results to its builder.
//!
//! [`run`] returns the report's warnings (the caller prints them: on stderr, prefixed
//! `profil-report: warning: `) and what it counted ([`Written`]).

use std::io::Write;
use std::path::{Path, PathBuf};

use profil_symbols::ElfImage;

use crate::gprof::{self, Analysis, Options};
use crate::profile::input::{load_inputs_deferring, parse_exe, read_file, GmonInput, Inputs};
use crate::render;
use crate::report::{self, compare, default as default_report, objects as objects_report};
use crate::request::{Format, GprofRequest, Mode, Request};
use crate::{Error, Result};

/// What [`run`] wrote.
#[derive(Debug, Default)]
pub struct Written {
    /// The report's warnings.
    pub warnings: Vec<String>,
    /// What the default, lines or inline report counted (None: another report).
    pub counted: Option<Counted>,
}

/// Write the report `req` asks for to `out`.
pub fn run(req: &Request, out: &mut impl Write) -> Result<Written> {
    let mut warnings = Vec::new();
    let inputs = load_inputs_deferring(&req.files, matches!(req.mode, Mode::Gprof(_)))?;
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
        pcsample(req, &inputs, pc, out, &mut warnings)?;
        return Ok(Written {
            warnings,
            counted: None,
        });
    }
    if req.timeline.any() {
        return Err(Error::input(
            "--timeline and --svg need a pcsample file (PROFIL_MODE=pcsample), not a gmon file",
        ));
    }
    let counted = report(req, &inputs, &image, out, &mut warnings)?;
    Ok(Written { warnings, counted })
}

/// The manifests the runtime wrote beside the gmon files, when the report to print is the
/// one across objects: when any of them lists a shared object with samples, or the
/// executable has no `.symtab` (its exported functions, debug files and address ranges name
/// the code). Otherwise the default report reads their process lines itself
/// ([`default_report::apply_manifests`]). A manifest that cannot be read is an error naming
/// it.
fn across_objects(inputs: &Inputs, image: &ElfImage<'_>) -> Result<Option<Vec<PathBuf>>> {
    let manifests: Vec<PathBuf> = inputs
        .gmons
        .iter()
        .filter_map(objects_report::find_manifest)
        .collect();
    let mut a_library = false;
    for m in &manifests {
        let name = m.display();
        let text = read_file(m).map_err(|e| Error::input(format!("{name}: {e}")))?;
        let parsed = gmon::manifest::parse_manifest(&text)
            .map_err(|e| Error::input(format!("{name}: {e}")))?;
        a_library |= parsed
            .entries
            .iter()
            .any(|e| e.kind == gmon::manifest::Kind::Lib);
    }
    let by_objects = !manifests.is_empty() && (image.symtab.is_none() || a_library);
    Ok(by_objects.then_some(manifests))
}

/// The report chooser: write the report `req.mode` names for the loaded gmon files (the
/// report across objects for the default mode when [`across_objects`] says so); return what
/// it counted. [`run`] after loading (and the fuzz target, on inputs in memory).
pub fn report(
    req: &Request,
    inputs: &Inputs,
    image: &ElfImage<'_>,
    out: &mut impl Write,
    warnings: &mut Vec<String>,
) -> Result<Option<Counted>> {
    if let Mode::Default = req.mode {
        if let Some(manifests) = across_objects(inputs, image)? {
            objects(req.format, inputs, image, &manifests, out, warnings)?;
            return Ok(None);
        }
    }
    let counted = match &req.mode {
        Mode::Gprof(g) if g.lines || g.sum => {
            warnings.extend(gprof_lines(g, inputs, image, out)?);
            None
        }
        Mode::Gprof(g) => {
            let opts = Options {
                no_static: g.no_static,
                specs: g.specs,
                static_calls: g.static_calls,
                ignore_non_functions: g.ignore_non_functions,
                no_demangle: g.no_demangle,
                demangle_style: g.demangle_style,
                print_path: g.print_path,
                inline_file_names: g.inline_file_names,
                file_format: g.file_format,
                external_symbols: g.external_symbols,
                debug: g.debug,
                file_ordering: g.file_ordering,
            };
            let mut read_so_far = Vec::new();
            read_so_far.extend_from_slice(g.debug_banners.as_bytes());
            let info = g.sections.file_info;
            let mut a = match Analysis::of_inputs_into(inputs, image, opts, info, &mut read_so_far)
            {
                Ok(a) => a,
                Err(e) => {
                    out.write_all(&read_so_far)?;
                    return Err(e);
                }
            };
            let last = inputs.gmons.last().map(GmonInput::name).unwrap_or_default();
            let mut buf = Vec::new();
            buf.extend_from_slice(g.debug_banners.as_bytes());
            a.take_traces(g.sections.file_info, &mut buf);
            let graph = g.graph_options();
            let printed = gprof::report::print_report(
                &a,
                g.sections,
                graph,
                &last,
                &inputs.exe.data,
                &mut buf,
                out,
            );
            match printed {
                Ok(w) => warnings.extend(w),
                Err(e) => {
                    // gprof fails after its traces (and prints no section before failing).
                    if g.debug != 0 {
                        out.write_all(&buf)?;
                    }
                    return Err(e);
                }
            }
            out.write_all(&buf)?;
            None
        }
        Mode::Lines => Some(lines(req.format, inputs, image, out, warnings)?),
        Mode::Inline => Some(inline(req.format, inputs, image, out, warnings)?),
        Mode::OwnLines { scope, chains } => {
            let r = report::own_lines::build(inputs, image, *scope, *chains)?;
            warnings.extend(no_own_lines(inputs, image, row_files(&r), r.total_samples));
            render::lines::write(req.format, &r, out)?;
            Some(Counted {
                recorded_hz: r.hz,
                total_samples: r.total_samples,
            })
        }
        Mode::CompareGprof => {
            let report = default_report::build(inputs, image)?;
            warnings.extend(report.warnings.iter().cloned());
            let gprof_text = installed_gprof_flat(inputs)?;
            let emulation = Analysis::of_inputs(inputs, image, Options::default()).ok();
            let comparison = compare::build(&report, &gprof_text, emulation.as_ref());
            render::compare::table(&comparison, out)?;
            None
        }
        Mode::Default => Some(default(req.format, inputs, image, out, warnings)?),
    };
    Ok(counted)
}

/// What a written report counted, for the caller's notes (`run` explains a rate far below
/// the one asked for, or a profile without samples).
#[derive(Debug, Clone, Copy)]
pub struct Counted {
    /// The rate the gmon files record (profil-rt writes the achieved rate).
    pub recorded_hz: u32,
    /// All samples in the histograms.
    pub total_samples: u64,
}

/// The default report (table, `--json` or `--csv`), with what the runtime's manifests say
/// of the process ([`default_report::apply_manifests`]).
fn default(
    format: Format,
    inputs: &Inputs,
    image: &ElfImage<'_>,
    out: &mut impl Write,
    warnings: &mut Vec<String>,
) -> Result<Counted> {
    let mut report = default_report::build(inputs, image)?;
    let counted = Counted {
        recorded_hz: report.hz,
        total_samples: report.total_samples,
    };
    default_report::apply_manifests(&mut report, inputs);
    warnings.extend(report.warnings.iter().cloned());
    match format {
        Format::Json => render::default::json(&report, out)?,
        Format::Csv => render::default::csv(&report, out)?,
        Format::Table => render::default::table(&report, out)?,
    }
    Ok(counted)
}

/// The report across the executable and the shared objects the runtime's `manifests` list.
fn objects(
    format: Format,
    inputs: &Inputs,
    image: &ElfImage<'_>,
    manifests: &[PathBuf],
    out: &mut impl Write,
    warnings: &mut Vec<String>,
) -> Result<()> {
    let report = objects_report::build_manifests(inputs, image, manifests)?;
    render::objects::write(format, &report, out)?;
    warnings.extend(report.warnings);
    Ok(())
}

/// A Rust program none of whose lines in `r` is in its own source tree (cargo's release
/// default, `debug = false`, keeps only the standard library's): the warning naming the
/// `Cargo.toml` setting.
fn no_own_lines<'a>(
    inputs: &Inputs,
    image: &ElfImage<'_>,
    mut files: impl Iterator<Item = &'a str>,
    total_samples: u64,
) -> Option<String> {
    let cwd = std::env::current_dir().ok();
    let own = report::own_lines::Scope::Package;
    let any_own = files.any(|f| own.owns(f, cwd.as_deref()));
    (!any_own && total_samples > 0 && report::loaded::is_rust(image))
        .then(|| report::loaded::no_line_tables(&inputs.exe.name(), "all"))
}

/// The files of a line report's rows.
fn row_files(r: &report::lines::LineReport) -> impl Iterator<Item = &str> {
    r.rows.iter().filter_map(|row| row.file.as_deref())
}

/// `--lines`: self time per source line.
fn lines(
    format: Format,
    inputs: &Inputs,
    image: &ElfImage<'_>,
    out: &mut impl Write,
    warnings: &mut Vec<String>,
) -> Result<Counted> {
    let r = report::lines::build(inputs, image)?;
    warnings.extend(no_own_lines(inputs, image, row_files(&r), r.total_samples));
    render::lines::write(format, &r, out)?;
    Ok(Counted {
        recorded_hz: r.hz,
        total_samples: r.total_samples,
    })
}

/// `--inline`: self time by source function through inlining.
fn inline(
    format: Format,
    inputs: &Inputs,
    image: &ElfImage<'_>,
    out: &mut impl Write,
    warnings: &mut Vec<String>,
) -> Result<Counted> {
    let r = report::inline::build(inputs, image)?;
    let files = r
        .functions
        .iter()
        .filter_map(|f| f.location.as_deref()?.rsplit_once(':').map(|l| l.0));
    warnings.extend(no_own_lines(inputs, image, files, r.total_samples));
    render::inline::write(format, &r, out)?;
    Ok(Counted {
        recorded_hz: r.hz,
        total_samples: r.total_samples,
    })
}

/// A pcsample file: the flat profile per object, or the timeline as text and/or SVG.
fn pcsample(
    req: &Request,
    inputs: &Inputs,
    file: &GmonInput,
    out: &mut impl Write,
    warnings: &mut Vec<String>,
) -> Result<()> {
    let r = report::pcsample::resolve(file, &inputs.exe, Path::new("/usr/lib/debug"))?;
    warnings.extend(r.warnings.iter().cloned());
    if req.timeline.any() {
        let tl = r.timeline();
        if let Some(path) = &req.timeline.svg {
            let title = format!(
                "{}: {} samples, {}",
                inputs.exe.name(),
                r.samples.len(),
                r.threads_text()
            );
            std::fs::write(path, render::timeline::svg(&tl, &title))
                .map_err(|e| Error::input(format!("{}: {e}", path.display())))?;
        }
        if req.timeline.text {
            render::timeline::print_text(&tl, out)?;
            return Ok(());
        }
    }
    let title = format!(
        "Flat profile of {} from raw PC samples ({}, {})",
        inputs.exe.name(),
        file.name(),
        r.threads_text()
    );
    let report = objects_report::ObjectsReport::new(title, r.hz, r.flat(), r.warnings);
    render::objects::write(req.format, &report, out)
}

/// `--gprof -l [-b] [-p|-P] [-q|-Q] [-z] [-a]`: what the same gprof command prints
/// ([`gprof::lines`]).
fn gprof_lines(
    args: &GprofRequest,
    inputs: &Inputs,
    image: &ElfImage<'_>,
    out: &mut impl Write,
) -> Result<Vec<String>> {
    let gmons = inputs.gmons.iter().map(|g| Ok((g.name(), g.bytes()?)));
    let mut buf = Vec::new();
    buf.extend_from_slice(args.debug_banners.as_bytes());
    let report = gprof::lines::print_report(
        image,
        &inputs.exe.data,
        &inputs.exe.name(),
        gmons,
        gprof::lines::Request {
            sections: args.sections,
            graph: args.graph_options(),
            options: Options {
                no_static: args.no_static,
                specs: args.specs,
                static_calls: args.static_calls,
                ignore_non_functions: args.ignore_non_functions,
                no_demangle: args.no_demangle,
                demangle_style: args.demangle_style,
                print_path: args.print_path,
                inline_file_names: args.inline_file_names,
                file_format: args.file_format,
                external_symbols: args.external_symbols,
                debug: args.debug,
                file_ordering: args.file_ordering,
            },
            sum: args.sum,
        },
        &mut buf,
        out,
    );
    // On a failing gmon file, `buf` holds what gprof printed before failing (-i's lines).
    out.write_all(&buf)?;
    report
}

/// The flat profile of the installed GNU gprof (`gprof -b -p`) on the same inputs, for
/// `--compare-gprof`.
fn installed_gprof_flat(inputs: &Inputs) -> Result<String> {
    let mut cmd = std::process::Command::new("gprof");
    cmd.arg("-b").arg("-p").arg(&inputs.exe.path);
    for g in &inputs.gmons {
        cmd.arg(&g.path);
    }
    let out = cmd
        .env("LC_ALL", "C")
        .output()
        .map_err(|e| Error::input(format!("cannot run gprof: {e}")))?;
    if !out.status.success() {
        let msg = String::from_utf8_lossy(&out.stderr);
        return Err(Error::input(format!(
            "gprof failed: {}",
            msg.lines().next().unwrap_or("").trim()
        )));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}
