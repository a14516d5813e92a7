//! `profil-report html -o FILE [gmon files] EXE`, and the `--html FILE` of `run`, `cargo
//! profil` and `diff`: the interactive report in one HTML file ([`crate::render::html`]).
//!
//! The page holds the report the same inputs give with `--json` (written by
//! [`pipeline::run`], so its rows, totals and call graph are the text report's), the call
//! tree of the stack profile the exports render ([`crate::export::model`]: the sampled
//! stacks, or one location per sample without them), and the source lines that have samples,
//! read from the files the debug information names when they can be read (a note when not).
//! The file is written to a temporary name beside FILE and renamed over it.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use serde_json::value::RawValue;

use crate::export::model::{self, StackProfile};
use crate::profile::input::{load_inputs, GmonInput, Input};
use crate::render::html::{self, Figures, Flame, Page, Source};
use crate::report::parse_exe;
use crate::request::{Format, Request};
use crate::{pipeline, Error, Result};

/// What `profil-report html` is asked for (the binary builds it from its command line).
#[derive(Debug, Clone)]
pub struct Options {
    /// Where to write the page.
    pub output: PathBuf,
    /// gmon files and the executable, in any order (empty: `a.out gmon.out`).
    pub files: Vec<PathBuf>,
}

/// At most this many functions get their source lines (those with the most samples).
const MAX_SOURCES: usize = 2000;
/// A function whose sampled lines span more than this keeps only those lines and their
/// neighbours ([`CONTEXT`]), not the whole span.
const WHOLE_SPAN: u64 = 400;
/// Lines shown around a sampled line.
const CONTEXT: u64 = 2;
/// Characters of a source line kept.
const LINE_CHARS: usize = 240;

/// Run the subcommand; return the warnings for the user (the caller prints them).
pub fn run(args: &Options) -> Result<Vec<String>> {
    let (page, warnings) = report_page(&args.files, None)?;
    write_page(&args.output, &page)?;
    Ok(warnings)
}

/// The page of the default report of `files` (gmon files and the executable), with the
/// `processes` of a run when it had several; and the report's warnings.
pub fn report_page(
    files: &[PathBuf],
    processes: Option<Box<RawValue>>,
) -> Result<(Page, Vec<String>)> {
    let mut json = Vec::new();
    let written = pipeline::run(
        &Request::default_report(files.to_vec(), Format::Json),
        &mut json,
    )?;
    let mut warnings = written.warnings;
    // The header's figures, read back from the report's own fields (the rows are skipped).
    #[derive(serde::Deserialize, Default)]
    #[serde(default)]
    struct Head {
        hz: f64,
        total_samples: f64,
        total_seconds: f64,
        unsampled_seconds: Option<f64>,
        warnings: Vec<String>,
    }
    let head: Head = serde_json::from_slice(&json)
        .map_err(|e| Error::input(format!("the report's JSON: {e}")))?;
    let inputs = load_inputs(files)?;
    let image = parse_exe(&inputs.exe)?;
    let gmons: Vec<&GmonInput> = inputs.gmons.iter().collect();
    let process_count = processes
        .as_ref()
        .and_then(|p| serde_json::from_str::<Vec<serde::de::IgnoredAny>>(p.get()).ok())
        .map(|p| p.len());
    let figures = Figures {
        program: inputs.exe.name(),
        gmon_files: inputs.gmons.len(),
        processes: process_count,
        samples: head.total_samples,
        hz: head.hz as u32,
        seconds: head.total_seconds,
        unsampled_seconds: head.unsampled_seconds,
    };
    let (flame, sources) = stacks_of(&inputs.exe, &image, &gmons, &mut warnings);
    let text = String::from_utf8(json).map_err(|e| Error::input(format!("JSON: {e}")))?;
    let page = Page {
        title: format!("Profile of {}", inputs.exe.name()),
        header: html::header(&figures),
        warnings: head.warnings,
        report: Some(raw(text)?),
        flame,
        sources,
        processes,
        diff: None,
    };
    Ok((page, warnings))
}

/// The page of a `diff`: its JSON (`diff --json`), and the new side's stacks and sources.
pub fn diff_page(
    diff_json: Vec<u8>,
    new_exe: &Input,
    new_gmons: &[GmonInput],
    warnings: &mut Vec<String>,
) -> Result<Page> {
    let image = parse_exe(new_exe)?;
    let gmons: Vec<&GmonInput> = new_gmons.iter().collect();
    let (flame, sources) = stacks_of(new_exe, &image, &gmons, warnings);
    let text = String::from_utf8(diff_json).map_err(|e| Error::input(format!("JSON: {e}")))?;
    let samples = flame.samples as f64;
    let figures = Figures {
        program: new_exe.name(),
        gmon_files: new_gmons.len(),
        processes: None,
        samples,
        hz: flame.hz,
        seconds: samples / f64::from(flame.hz.max(1)),
        unsampled_seconds: None,
    };
    let mut header = html::header(&figures);
    // The new side's figures: say so.
    for (label, _) in &mut header {
        if label != "program" {
            *label = format!("new: {label}");
        }
    }
    header.retain(|(l, _)| l != "new: not sampled");
    Ok(Page {
        title: format!("Diff of {}", new_exe.name()),
        header,
        warnings: Vec::new(),
        report: None,
        flame,
        sources,
        processes: None,
        diff: Some(raw(text)?),
    })
}

/// Write `page` to `path` atomically.
pub fn write_page(path: &Path, page: &Page) -> Result<()> {
    let mut buf = Vec::new();
    html::write(page, &mut buf)?;
    crate::export::write_atomically(path, &buf)
}

fn raw(text: String) -> Result<Box<RawValue>> {
    RawValue::from_string(text.trim_end().to_owned())
        .map_err(|e| Error::input(format!("JSON: {e}")))
}

/// The call tree and the source lines of the stack profile of `gmons` (empty, with a
/// warning, when there is none: a pcsample file).
fn stacks_of(
    exe: &Input,
    image: &profil_symbols::ElfImage<'_>,
    gmons: &[&GmonInput],
    warnings: &mut Vec<String>,
) -> (Flame, Vec<Source>) {
    match model::build(exe, image, gmons) {
        Ok(p) => (call_tree(&p), sources(&p, &mut FileCache::new(&exe.path))),
        Err(e) => {
            warnings.push(format!("no flame graph: {e}"));
            (Flame::default(), Vec::new())
        }
    }
}

/// The flame graph's tree: one node per distinct path of frames from the root (outermost
/// first, inline frames included), with the samples that end there.
pub fn call_tree(p: &StackProfile) -> Flame {
    let mut object_of = vec![-1i64; p.functions.len()];
    for l in &p.locations {
        if let Some(o) = l.object {
            for line in &l.lines {
                if object_of[line.function] < 0 {
                    object_of[line.function] = o as i64;
                }
            }
        }
    }
    let mut nodes: Vec<i64> = Vec::new();
    let mut index: HashMap<(i64, usize), usize> = HashMap::new();
    let mut frames: Vec<usize> = Vec::new();
    let mut samples = 0;
    for s in &p.samples {
        if s.count == 0 {
            continue;
        }
        frames.clear();
        frames.extend(p.frames(s).map(|l| l.function));
        let mut parent = -1i64;
        for &f in frames.iter().rev() {
            let n = *index.entry((parent, f)).or_insert_with(|| {
                nodes.extend([parent, f as i64, 0]);
                nodes.len() / 3 - 1
            });
            parent = n as i64;
        }
        if parent >= 0 {
            nodes[parent as usize * 3 + 2] += s.count as i64;
            samples += s.count;
        }
    }
    Flame {
        names: p.functions.iter().map(|f| f.name.clone()).collect(),
        objects: p
            .objects
            .iter()
            .map(|o| {
                Path::new(&o.path)
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_else(|| o.path.clone())
            })
            .collect(),
        object_of,
        nodes,
        samples,
        hz: p.hz,
    }
}

/// Source files read once each: their lines, or why they could not be read. A relative name
/// (as the compiler was given it) is read from the current directory, else from the
/// executable's.
struct FileCache {
    exe_dir: Option<PathBuf>,
    read: HashMap<String, std::result::Result<Vec<String>, String>>,
}

impl FileCache {
    fn new(exe: &Path) -> FileCache {
        FileCache {
            exe_dir: exe.parent().map(Path::to_owned),
            read: HashMap::new(),
        }
    }

    fn lines(&mut self, file: &str) -> &std::result::Result<Vec<String>, String> {
        let exe_dir = &self.exe_dir;
        self.read.entry(file.to_owned()).or_insert_with(|| {
            let beside_exe = exe_dir.as_ref().filter(|_| Path::new(file).is_relative());
            std::fs::read(file)
                .or_else(|e| match beside_exe {
                    Some(d) => std::fs::read(d.join(file)).map_err(|_| e),
                    None => Err(e),
                })
                .map(|b| {
                    String::from_utf8_lossy(&b)
                        .lines()
                        .map(|l| l.chars().take(LINE_CHARS).collect())
                        .collect()
                })
                .map_err(|e| format!("{file}: cannot be read ({e})"))
        })
    }
}

/// A function's lines: number → (self samples, total samples).
type LineCounts = BTreeMap<u64, (u64, u64)>;

/// Per function with samples on a known line (the [`MAX_SOURCES`] with the most): its lines'
/// self samples (the sample's leaf frame is there) and total samples (a frame of the sample
/// is there, once per sample), with the text of the file around them.
fn sources(p: &StackProfile, files: &mut FileCache) -> Vec<Source> {
    let mut per: HashMap<usize, LineCounts> = HashMap::new();
    let mut seen: Vec<(usize, u64)> = Vec::new();
    for s in &p.samples {
        if s.count == 0 {
            continue;
        }
        seen.clear();
        for (i, l) in p.frames(s).enumerate() {
            if l.line == 0 || p.functions[l.function].file.is_none() {
                continue;
            }
            let e = per
                .entry(l.function)
                .or_default()
                .entry(l.line)
                .or_default();
            if i == 0 {
                e.0 += s.count;
            }
            if !seen.contains(&(l.function, l.line)) {
                seen.push((l.function, l.line));
                e.1 += s.count;
            }
        }
    }
    let mut chosen: Vec<(usize, LineCounts)> = per.into_iter().collect();
    let weight = |m: &LineCounts| m.values().map(|v| v.1).max().unwrap_or(0);
    chosen.sort_by(|a, b| weight(&b.1).cmp(&weight(&a.1)).then(a.0.cmp(&b.0)));
    chosen.truncate(MAX_SOURCES);
    chosen
        .into_iter()
        .filter_map(|(f, counts)| {
            let file = p.functions[f].file.clone()?;
            let (first, last) = (*counts.keys().next()?, *counts.keys().next_back()?);
            let text = files.lines(&file);
            let shown: Vec<u64> = if last - first <= WHOLE_SPAN {
                (first.saturating_sub(CONTEXT).max(1)..=last + CONTEXT).collect()
            } else {
                let mut v: Vec<u64> = counts
                    .keys()
                    .flat_map(|&n| n.saturating_sub(CONTEXT).max(1)..=n + CONTEXT)
                    .collect();
                v.sort_unstable();
                v.dedup();
                v
            };
            let (note, lines) = match text {
                Ok(text) => (
                    None,
                    shown
                        .into_iter()
                        .filter_map(|n| {
                            let t = text.get(n as usize - 1)?;
                            let (s, t2) = counts.get(&n).copied().unwrap_or_default();
                            Some((n, s, t2, t.clone()))
                        })
                        .collect(),
                ),
                Err(why) => (
                    Some(why.clone()),
                    counts
                        .iter()
                        .map(|(&n, &(s, t))| (n, s, t, String::new()))
                        .collect(),
                ),
            };
            Some(Source {
                function: f,
                file,
                note,
                lines,
            })
        })
        .collect()
}
