//! Reports across several loaded objects: the executable and its shared libraries.
//!
//! Two inputs carry more than the executable's code: the objects manifest that the runtime
//! writes next to `gmon.out` with `PROFIL_RANGES=all` ([`gmon::manifest`]; one gmon file per
//! object, each at the object's link-time addresses), and pcsample files
//! ([`super::pcsample`]). Both end up as *samples per link-time address per object*, and
//! this module turns them into one flat profile with an object column.
//!
//! # Finding an object's symbols
//!
//! The executable is the one given on the command line. A library is read from the path
//! the loader used; its functions come from `.symtab`, or else from the separate debug
//! file named by its build-id (`/usr/lib/debug/.build-id/xx/yyyy….debug`, where Debian's
//! `-dbg`/`-dbgsym` packages put it) when that is installed, or else from `.dynsym` (exported
//! functions only: samples in static functions then land in `<outside known functions>`
//! of that object, which the report says). A library that cannot be read at all keeps its
//! samples as one `<unreadable: reason>` row.

use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};

use gmon::Target;
use profil_symbols::ranges::FunctionMap;
use profil_symbols::ElfImage;

use super::{GmonInput, Inputs};
use crate::profile::input::read_file;
use crate::profile::samples::Samples;
use crate::profile::stats::poisson_ci95;
use crate::profile::OUTSIDE;
use crate::render::table::Table;
use crate::render::units::human_seconds;
use crate::request::Format;
use crate::{Error, Result};

/// `(lo, hi, samples)`: samples in the half-open link-time range `[lo, hi)`.
pub type Piece = (u64, u64, f64);

/// Samples of one object, by link-time address ranges.
#[derive(Debug, Clone, Default)]
pub struct ObjectSamples {
    /// Display name (file name of the path).
    pub name: String,
    /// Path as recorded.
    pub path: PathBuf,
    /// Build-id bytes (may be empty).
    pub build_id: Vec<u8>,
    /// Samples by half-open link-time address range.
    pub pieces: Vec<Piece>,
}

/// One row: a function of one object.
#[derive(Debug, Clone)]
pub struct ObjectRow {
    /// Object display name.
    pub object: String,
    /// Demangled function name (or `<outside known functions>`).
    pub function: String,
    /// Samples.
    pub samples: f64,
}

/// Where the symbols of an object come from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SymbolSource {
    /// The object's own `.symtab`.
    Symtab(PathBuf),
    /// The separate debug file found by build-id.
    DebugFile(PathBuf),
    /// `.dynsym` only.
    Dynsym(PathBuf),
}

/// The separate debug file path for a build-id, under `root` (normally `/usr/lib/debug`).
pub fn debug_file_path(root: &Path, build_id: &[u8]) -> Option<PathBuf> {
    let (first, rest) = build_id.split_first()?;
    if rest.is_empty() {
        return None;
    }
    let hex: String = rest.iter().map(|b| format!("{b:02x}")).collect();
    Some(
        root.join(".build-id")
            .join(format!("{first:02x}"))
            .join(format!("{hex}.debug")),
    )
}

/// Read an object and pick its symbol source. Errors are short reasons.
pub fn load_object(
    path: &Path,
    build_id: &[u8],
    debug_root: &Path,
) -> std::result::Result<(Vec<u8>, SymbolSource), String> {
    let data = read_file(path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?
        .to_vec();
    let has_symtab = ElfImage::parse(&data)
        .map_err(|e| format!("{}: {e}", path.display()))?
        .symtab
        .is_some();
    if has_symtab {
        return Ok((data, SymbolSource::Symtab(path.to_owned())));
    }
    if let Some(dbg) = debug_file_path(debug_root, build_id) {
        if let Ok(d) = read_file(&dbg).map(|d| d.to_vec()) {
            if ElfImage::parse(&d).is_ok_and(|i| i.symtab.is_some()) {
                return Ok((d, SymbolSource::DebugFile(dbg)));
            }
        }
    }
    Ok((data, SymbolSource::Dynsym(path.to_owned())))
}

/// Credit each object's pieces to its functions. `exe_data` stands in for object 0 when
/// given (the executable named on the command line). Warnings are pushed for objects
/// without full symbols.
pub fn attribute(
    objects: &[ObjectSamples],
    exe_data: Option<&[u8]>,
    debug_root: &Path,
    warnings: &mut Vec<String>,
) -> Vec<ObjectRow> {
    let mut rows = Vec::new();
    for (k, o) in objects.iter().enumerate() {
        if o.pieces.is_empty() {
            continue;
        }
        let loaded = match (k, exe_data) {
            (0, Some(d)) => Ok((d.to_vec(), SymbolSource::Symtab(o.path.clone()))),
            _ => load_object(&o.path, &o.build_id, debug_root),
        };
        let total: f64 = o.pieces.iter().map(|p| p.2).sum();
        let (data, source) = match loaded {
            Ok(x) => x,
            Err(reason) => {
                warnings.push(format!("{}: {reason}", o.name));
                rows.push(ObjectRow {
                    object: o.name.clone(),
                    function: format!("<unreadable: {reason}>"),
                    samples: total,
                });
                continue;
            }
        };
        if let SymbolSource::Dynsym(p) = &source {
            warnings.push(format!(
                "{}: no .symtab and no debug file by build-id; using exported symbols only",
                p.display()
            ));
        }
        let Ok(image) = ElfImage::parse(&data) else {
            continue;
        };
        let table = match (&image.symtab, &image.dynsym) {
            (Some(t), _) => t,
            (None, Some(d)) => d,
            (None, None) => {
                rows.push(ObjectRow {
                    object: o.name.clone(),
                    function: OUTSIDE.into(),
                    samples: total,
                });
                continue;
            }
        };
        let map = FunctionMap::build(&image, table);
        let mut per_fn: HashMap<Option<usize>, f64> = HashMap::new();
        for &(lo, hi, s) in &o.pieces {
            let span = (hi - lo).max(1) as f64;
            let mut credited = 0.0;
            let mut r = map.first_range_ending_after(lo);
            while let Some(fr) = map.ranges.get(r) {
                if fr.start >= hi.max(lo + 1) {
                    break;
                }
                let ov = hi.max(lo + 1).min(fr.end).saturating_sub(lo.max(fr.start));
                if ov > 0 {
                    let c = s * ov as f64 / span;
                    *per_fn.entry(Some(fr.function)).or_default() += c;
                    credited += c;
                }
                r += 1;
            }
            if s - credited > 1e-9 {
                *per_fn.entry(None).or_default() += s - credited;
            }
        }
        for (f, s) in per_fn {
            let function = match f {
                Some(i) => profil_symbols::demangle::display_name(&String::from_utf8_lossy(
                    map.functions[i].name,
                ))
                .into_owned(),
                None => OUTSIDE.to_owned(),
            };
            rows.push(ObjectRow {
                object: o.name.clone(),
                function,
                samples: s,
            });
        }
    }
    rows.sort_by(|a, b| {
        b.samples
            .total_cmp(&a.samples)
            .then_with(|| a.object.cmp(&b.object))
            .then_with(|| a.function.cmp(&b.function))
    });
    rows
}

/// Print rows with an object column (table, `--json` or `--csv`). `title` is the first
/// line of the table form.
pub fn print_rows(
    format: Format,
    title: &str,
    hz: u32,
    rows: &[ObjectRow],
    warnings: &[String],
    out: &mut impl Write,
) -> Result<()> {
    let hz_f = f64::from(hz.max(1));
    let total: f64 = rows.iter().map(|r| r.samples).sum();
    let pct = |s: f64| if total > 0.0 { 100.0 * s / total } else { 0.0 };
    if format == Format::Csv {
        let header = [
            "rank",
            "object",
            "function",
            "percent",
            "self_seconds",
            "samples",
        ];
        let records = rows.iter().enumerate().map(|(i, r)| {
            [
                (i + 1).to_string(),
                r.object.clone(),
                r.function.clone(),
                format!("{}", pct(r.samples)),
                format!("{}", r.samples / hz_f),
                format!("{}", r.samples),
            ]
        });
        return crate::render::csv::write(out, &header, records);
    }
    if format == Format::Json {
        let js = |s: &str| {
            let mut o = String::from("\"");
            for c in s.chars() {
                match c {
                    '"' => o.push_str("\\\""),
                    '\\' => o.push_str("\\\\"),
                    c if (c as u32) < 0x20 => o.push_str(&format!("\\u{:04x}", c as u32)),
                    c => o.push(c),
                }
            }
            o.push('"');
            o
        };
        writeln!(out, "{{")?;
        writeln!(out, "  \"hz\": {hz},")?;
        writeln!(out, "  \"total_samples\": {total},")?;
        let w: Vec<String> = warnings.iter().map(|w| js(w)).collect();
        writeln!(out, "  \"warnings\": [{}],", w.join(","))?;
        writeln!(out, "  \"rows\": [")?;
        for (i, r) in rows.iter().enumerate() {
            writeln!(
                out,
                "    {{\"rank\": {}, \"object\": {}, \"function\": {}, \"percent\": {}, \"self_seconds\": {}, \"samples\": {}}}{}",
                i + 1,
                js(&r.object),
                js(&r.function),
                pct(r.samples),
                r.samples / hz_f,
                r.samples,
                if i + 1 < rows.len() { "," } else { "" }
            )?;
        }
        writeln!(out, "  ]")?;
        writeln!(out, "}}")?;
        return Ok(());
    }
    writeln!(
        out,
        "{title}: {total} samples at {hz} Hz = {} of CPU time",
        human_seconds(total / hz_f)
    )?;
    writeln!(out)?;
    let mut b = Table::new();
    b.row(["%", "self", "samples", "95% interval", "object", "function"]);
    for r in rows {
        let (lo, hi) = poisson_ci95(r.samples);
        b.row([
            format!("{:.2}", pct(r.samples)),
            human_seconds(r.samples / hz_f),
            crate::render::units::samples(r.samples),
            format!("{}–{}", human_seconds(lo / hz_f), human_seconds(hi / hz_f)),
            r.object.clone(),
            r.function.clone(),
        ]);
    }
    writeln!(out, "{}", b.render(4))?;
    Ok(())
}

/// The manifest next to a gmon file, if there is one.
pub fn find_manifest(gmon: &GmonInput) -> Option<PathBuf> {
    let name = gmon.path.file_name()?.to_str()?;
    let p = gmon
        .path
        .with_file_name(gmon::manifest::manifest_name(name));
    p.is_file().then_some(p)
}

/// Histogram samples of one gmon file as pieces.
fn gmon_pieces(name: &str, data: &[u8], target: Target) -> Result<(Vec<Piece>, u32)> {
    let mut hist = Samples::default();
    hist.add_file(name, data, target, false)?;
    let mut pieces = Vec::new();
    for b in hist.sampled_bins() {
        let (lo, hi) = b.addr_range();
        pieces.push((lo, hi, b.count as f64));
    }
    Ok((pieces, hist.hz))
}

/// `profil-report gmon.out ./prog` when `gmon.out.objects` exists: one report across the
/// executable and every library in the manifest. Its warnings are added to `all_warnings`.
pub fn run_manifest(
    format: Format,
    inputs: &Inputs,
    image: &ElfImage<'_>,
    manifest: &Path,
    out: &mut impl Write,
    all_warnings: &mut Vec<String>,
) -> Result<()> {
    let mname = manifest.display().to_string();
    let text = read_file(manifest).map_err(|e| Error::input(format!("{mname}: {e}")))?;
    let entries =
        gmon::manifest::parse(&text).map_err(|e| Error::input(format!("{mname}: {e}")))?;
    let dir = manifest.parent().unwrap_or(Path::new("."));
    let target = Target::of_executable(image.is_64, image.big_endian);
    let mut objects = vec![ObjectSamples {
        name: inputs
            .exe
            .path
            .file_name()
            .map_or_else(|| inputs.exe.name(), |n| n.to_string_lossy().into_owned()),
        path: inputs.exe.path.clone(),
        ..Default::default()
    }];
    let mut hz = 0;
    for g in &inputs.gmons {
        let (p, h) = gmon_pieces(&g.name(), &g.bytes()?, target)?;
        objects[0].pieces.extend(p);
        hz = hz.max(h);
    }
    for e in entries
        .iter()
        .filter(|e| e.kind == gmon::manifest::Kind::Lib)
    {
        let file = dir.join(String::from_utf8_lossy(e.gmon_file).as_ref());
        let fname = file.display().to_string();
        let data = read_file(&file)
            .map_err(|err| Error::input(format!("{fname}: {err} (listed in {mname})")))?;
        let (pieces, h) = gmon_pieces(&fname, &data, target)?;
        hz = hz.max(h);
        let path = PathBuf::from(String::from_utf8_lossy(&e.path.unescaped()).into_owned());
        objects.push(ObjectSamples {
            name: path.file_name().map_or_else(
                || path.display().to_string(),
                |n| n.to_string_lossy().into_owned(),
            ),
            path,
            build_id: e.build_id.as_bytes().to_vec(),
            pieces,
        });
    }
    let mut warnings = Vec::new();
    let rows = attribute(
        &objects,
        Some(&inputs.exe.data),
        Path::new("/usr/lib/debug"),
        &mut warnings,
    );
    let title = format!(
        "Flat profile of {} and {} shared object{}",
        inputs.exe.name(),
        objects.len() - 1,
        if objects.len() == 2 { "" } else { "s" }
    );
    let hz = if hz == 0 { 100 } else { hz };
    // With the runtime's stacks file: total times and the measured call graph.
    if let Some(sampled) = crate::profile::stacks::Sampled::find(&inputs.gmons, &mut warnings)? {
        let t = super::objects_stacks::measure(
            &sampled,
            &objects[0].name,
            &inputs.exe.data,
            hz,
            Path::new("/usr/lib/debug"),
            &mut warnings,
        );
        let mut rows = rows;
        let totals = super::objects_stacks::with_totals(&mut rows, &t);
        super::objects_stacks::print_rows(
            format, &title, hz, &rows, &totals, &t.graph, &warnings, out,
        )?;
        all_warnings.extend(warnings);
        return Ok(());
    }
    print_rows(
        format,
        &title,
        if hz == 0 { 100 } else { hz },
        &rows,
        &warnings,
        out,
    )?;
    all_warnings.extend(warnings);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_quotes_a_carriage_return_in_a_name() {
        let rows = [ObjectRow {
            object: "lib\rodd.so".into(),
            function: "f, g".into(),
            samples: 2.0,
        }];
        let mut v = Vec::new();
        print_rows(Format::Csv, "t", 100, &rows, &[], &mut v).unwrap();
        assert_eq!(
            String::from_utf8(v).unwrap(),
            "rank,object,function,percent,self_seconds,samples\n1,\"lib\rodd.so\",\"f, g\",100,0.02,2\n"
        );
    }

    #[test]
    fn debug_files_are_found_by_build_id() {
        let root = Path::new("/usr/lib/debug");
        assert_eq!(
            debug_file_path(root, &[0xab, 0xcd, 0x01, 0x02]),
            Some(PathBuf::from("/usr/lib/debug/.build-id/ab/cd0102.debug"))
        );
        assert_eq!(debug_file_path(root, &[0xab]), None);
        assert_eq!(debug_file_path(root, &[]), None);
    }

    #[test]
    fn unreadable_objects_keep_their_samples() {
        let objects = vec![ObjectSamples {
            name: "libgone.so".into(),
            path: PathBuf::from("/nonexistent/libgone.so"),
            build_id: Vec::new(),
            pieces: vec![(0x1000, 0x1004, 3.0), (0x2000, 0x2001, 2.0)],
        }];
        let mut warnings = Vec::new();
        let rows = attribute(&objects, None, Path::new("/nonexistent"), &mut warnings);
        assert_eq!(rows.len(), 1);
        assert_eq!(rows[0].samples, 5.0);
        assert!(
            rows[0].function.starts_with("<unreadable: cannot read"),
            "{rows:?}"
        );
        assert_eq!(warnings.len(), 1);
    }
}
