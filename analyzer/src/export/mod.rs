//! `profil-report export --to FORMAT -o FILE <gmon files> <executable>`: the profile in the
//! formats other tools read.
//!
//! Every format is a renderer of one [`model::StackProfile`] (samples as stacks of frames),
//! built from the inputs by [`model::build`]; renderers never look at gmon records or ELF
//! files themselves:
//!
//! | `--to` | module | opened with |
//! |---|---|---|
//! | `pprof` | [`pprof`] | `go tool pprof`, Pyroscope, Parca, Grafana, Cloud Profiler |
//! | `folded` | [`folded`] | `flamegraph.pl`, inferno, speedscope |
//! | `svg` | [`folded::write_svg`] | a browser |
//! | `callgrind` | [`callgrind`] | KCachegrind/QCachegrind, `callgrind_annotate` |
//! | `speedscope` | [`speedscope`] | speedscope |
//!
//! The file is written to a temporary name next to FILE and renamed over it, so FILE is
//! either complete or untouched; `-o -` writes to standard output.

pub mod callgrind;
pub mod folded;
pub mod model;
pub mod pprof;
pub mod speedscope;

use std::io::Write;
use std::path::{Path, PathBuf};

use crate::profile::input::load_inputs;
use crate::report::parse_exe;
use crate::{Error, Result};

/// An export format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
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

/// What `profil-report export` is asked for (the binary builds it from its command line).
#[derive(Debug, Clone)]
pub struct Options {
    /// Output format.
    pub to: Format,
    /// Where to write it (`-` for standard output).
    pub output: PathBuf,
    /// gmon files (summed) and the executable, in any order.
    pub files: Vec<PathBuf>,
}

/// Render `p` as `format`.
pub fn render(p: &model::StackProfile, format: Format, out: &mut impl Write) -> Result<()> {
    match format {
        Format::Pprof => pprof::write(p, out),
        Format::Folded => folded::write(p, out),
        Format::Svg => folded::write_svg(p, out),
        Format::Callgrind => callgrind::write(p, out),
        Format::Speedscope => speedscope::write(p, out),
    }
}

/// Write `bytes` to `path` through a temporary file in the same directory and a rename.
pub(crate) fn write_atomically(path: &Path, bytes: &[u8]) -> Result<()> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_owned(),
        _ => PathBuf::from("."),
    };
    let name = path
        .file_name()
        .ok_or_else(|| Error::input(format!("{}: not a file name", path.display())))?;
    let tmp = dir.join(format!(
        ".{}.tmp{}",
        name.to_string_lossy(),
        std::process::id()
    ));
    let fail = |what: &str, e: std::io::Error| {
        Error::input(format!("{}: cannot {what}: {e}", path.display()))
    };
    std::fs::write(&tmp, bytes).map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        fail("write", e)
    })?;
    std::fs::rename(&tmp, path).map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        fail("rename into place", e)
    })
}

/// Run the subcommand (`out` is standard output, for `-o -`); return the warnings for the
/// user (the caller prints them).
pub fn run(args: &Options, out: &mut impl Write) -> Result<Vec<String>> {
    let inputs = load_inputs(&args.files)?;
    let image = parse_exe(&inputs.exe)?;
    let gmons: Vec<_> = inputs.gmons.iter().collect();
    let profile = model::build(&inputs.exe, &image, &gmons)?;
    let mut buf = Vec::new();
    render(&profile, args.to, &mut buf)?;
    if args.output == Path::new("-") {
        out.write_all(&buf)?;
    } else {
        write_atomically(&args.output, &buf)?;
    }
    Ok(profile.warnings)
}

#[cfg(test)]
mod tests {
    use super::model::{Function, Line, Location, Object, Sample, StackProfile};
    use super::*;
    use prost::Message;

    /// One function, five samples; the unknowns as given.
    fn profile(
        unsampled: Option<f64>,
        truncated: Option<u64>,
        duration: Option<u64>,
    ) -> StackProfile {
        StackProfile {
            executable: "prog".into(),
            gmon_files: vec!["gmon.out".into()],
            hz: 1000,
            total_samples: 5,
            duration_ns: duration,
            written_ns: None,
            unsampled_seconds: unsampled,
            truncated_stacks: truncated,
            has_call_stacks: true,
            objects: vec![Object {
                path: "prog".into(),
                build_id: Some("abcd".into()),
                start: 0x1000,
                limit: 0x2000,
                offset: 0x1000,
            }],
            functions: vec![Function {
                name: "main".into(),
                raw_name: "main".into(),
                file: Some("prog.c".into()),
                start_line: 3,
                object: Some(0),
            }],
            locations: vec![Location {
                address: 0x1010,
                object: Some(0),
                lines: vec![Line {
                    function: 0,
                    line: 4,
                }],
            }],
            samples: vec![Sample {
                locations: vec![0],
                samples: 5.0,
                count: 5,
            }],
            warnings: Vec::new(),
        }
    }

    fn text(p: &StackProfile, f: Format) -> String {
        let mut buf = Vec::new();
        render(p, f, &mut buf).unwrap();
        if f == Format::Pprof {
            let mut raw = Vec::new();
            std::io::Read::read_to_end(&mut flate2::read::GzDecoder::new(&buf[..]), &mut raw)
                .unwrap();
            let p = pprof::Profile::decode(&raw[..]).unwrap();
            let comments: Vec<&str> = p
                .comment
                .iter()
                .map(|&i| p.string_table[i as usize].as_str())
                .collect();
            return format!("duration {} {}", p.duration_nanos, comments.join("\n"));
        }
        String::from_utf8(buf).unwrap()
    }

    #[test]
    fn unsampled_time_and_truncated_stacks_are_written_when_known() {
        let known = profile(Some(0.25), Some(7), Some(2_000_000_000));
        let t = text(&known, Format::Pprof);
        assert!(t.contains("duration 2000000000"), "{t}");
        assert!(
            t.contains("unsampled CPU time: 0.25 s") && t.contains("truncated stacks: 7"),
            "{t}"
        );
        let t = text(&known, Format::Callgrind);
        assert!(t.contains("desc: Unsampled CPU time: 0.25 s\n"), "{t}");
        assert!(t.contains("desc: Truncated stacks: 7\n"), "{t}");
        let t = text(&known, Format::Svg);
        assert!(
            t.contains("unsampled: 0.25 s") && t.contains("truncated stacks: 7"),
            "{t}"
        );
        let t = text(&known, Format::Speedscope);
        assert!(t.contains("unsampled 0.25 s, 7 truncated stacks"), "{t}");
    }

    #[test]
    fn unknowns_are_not_made_up() {
        let unknown = profile(None, None, None);
        for f in [
            Format::Pprof,
            Format::Callgrind,
            Format::Svg,
            Format::Speedscope,
        ] {
            let t = text(&unknown, f).to_lowercase();
            assert!(
                !t.contains("unsampled") && !t.contains("truncated"),
                "{f:?}: {t}"
            );
        }
        assert!(text(&unknown, Format::Pprof).contains("duration 0"));
        assert_eq!(text(&unknown, Format::Folded), "main 5\n");
    }
}
