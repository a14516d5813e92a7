//! `profil-report FILE ./prog` when FILE is a pcsample file ([`gmon::pcsample`], recognised
//! by its magic): the flat profile per object and function, and with `--timeline` the
//! samples over time (text, and an SVG chart with `--svg FILE`).
//!
//! Each sample's runtime address is matched against the file's snapshot of loaded objects
//! (`bias + start <= pc < bias + end`) and turned into that object's link-time address;
//! objects are symbolized as in [`super::objects`] (the executable is the one given on the
//! command line). Samples in no object of the snapshot (code of a library unloaded before
//! exit, JIT code, vDSO) are one `<unknown object>` row. A file whose buffer filled up says
//! so, with the number of samples dropped.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use gmon::pcsample::{parse, FLAG_BUFFER_FULL};
use profil_symbols::ranges::FunctionMap;
use profil_symbols::ElfImage;

use super::objects::{load_object, ObjectRow};
use super::timeline::Timeline;
use super::{GmonInput, Input};
use crate::profile::OUTSIDE;
use crate::{Error, Result};

/// Name of the row for samples outside every object of the snapshot.
pub const UNKNOWN_OBJECT: &str = "<unknown object>";

/// Resolved samples: `(time_ns, object, function)` and the warnings found on the way.
pub struct Resolved {
    /// One entry per sample, in file order.
    pub samples: Vec<(u64, String, String)>,
    /// Samples per second.
    pub hz: u32,
    /// Warnings (also printed on stderr).
    pub warnings: Vec<String>,
    /// Distinct thread ids.
    pub threads: usize,
}

/// Read and symbolize a pcsample file. `debug_root` is normally `/usr/lib/debug`.
pub fn resolve(file: &GmonInput, exe: &Input, debug_root: &Path) -> Result<Resolved> {
    let name = file.name();
    let data = file.bytes()?;
    let pc = parse(&data).map_err(|e| Error::input(format!("{name}: {e}")))?;
    let mut warnings = Vec::new();
    if pc.header.flags & FLAG_BUFFER_FULL != 0 || pc.header.dropped > 0 {
        warnings.push(format!(
            "{name}: the sample buffer was full: {} samples were dropped (raise PROFIL_PCSAMPLES)",
            pc.header.dropped
        ));
    }
    // Distinct link-time addresses per object.
    let mut per_obj: Vec<Vec<u64>> = vec![Vec::new(); pc.objects.len()];
    let mut located: Vec<(u64, Option<(usize, u64)>)> = Vec::with_capacity(pc.samples().len());
    let mut tids = std::collections::HashSet::new();
    for s in pc.samples() {
        tids.insert(s.tid);
        let hit = pc
            .object_of(s.pc)
            .map(|o| (o, pc.objects[o].link_time(s.pc)));
        if let Some((o, a)) = hit {
            per_obj[o].push(a);
        }
        located.push((s.time_ns, hit));
    }
    let mut names: HashMap<(usize, u64), String> = HashMap::new();
    let mut object_names = Vec::new();
    for (k, o) in pc.objects.iter().enumerate() {
        let path = PathBuf::from(String::from_utf8_lossy(o.path).into_owned());
        object_names.push(path.file_name().map_or_else(
            || path.display().to_string(),
            |n| n.to_string_lossy().into_owned(),
        ));
        let addrs = &mut per_obj[k];
        if addrs.is_empty() {
            continue;
        }
        addrs.sort_unstable();
        addrs.dedup();
        let loaded = if k == 0 {
            Ok(exe.data.to_vec())
        } else {
            load_object(&path, o.build_id, debug_root).map(|(d, _)| d)
        };
        let data = match loaded {
            Ok(d) => d,
            Err(reason) => {
                warnings.push(format!("{}: {reason}", object_names[k]));
                for &a in addrs.iter() {
                    names.insert((k, a), format!("<unreadable: {reason}>"));
                }
                continue;
            }
        };
        let image = ElfImage::parse(&data).ok();
        let table = image
            .as_ref()
            .and_then(|i| i.symtab.as_ref().or(i.dynsym.as_ref()));
        let map = match (&image, table) {
            (Some(i), Some(t)) => Some(FunctionMap::build(i, t)),
            _ => None,
        };
        for &a in addrs.iter() {
            let n = map
                .as_ref()
                .and_then(|m| m.function_at(a).map(|f| m.functions[f].name))
                .map(|n| {
                    profil_symbols::demangle::display_name(&String::from_utf8_lossy(n)).into_owned()
                })
                .unwrap_or_else(|| OUTSIDE.to_owned());
            names.insert((k, a), n);
        }
    }
    let samples = located
        .into_iter()
        .map(|(t, hit)| match hit {
            Some((o, a)) => (
                t,
                object_names[o].clone(),
                names
                    .get(&(o, a))
                    .cloned()
                    .unwrap_or_else(|| OUTSIDE.into()),
            ),
            None => (t, UNKNOWN_OBJECT.to_owned(), UNKNOWN_OBJECT.to_owned()),
        })
        .collect();
    Ok(Resolved {
        samples,
        hz: pc.header.rate_hz,
        warnings,
        threads: tids.len(),
    })
}

impl Resolved {
    /// The flat profile: samples per object and function, most first.
    pub fn flat(&self) -> Vec<ObjectRow> {
        let mut per: HashMap<(&str, &str), f64> = HashMap::new();
        for (_, o, f) in &self.samples {
            *per.entry((o.as_str(), f.as_str())).or_default() += 1.0;
        }
        let mut rows: Vec<ObjectRow> = per
            .into_iter()
            .map(|((o, f), s)| ObjectRow {
                object: o.to_owned(),
                function: f.to_owned(),
                samples: s,
                location: None,
                unknown_range: None,
                symbol: None,
            })
            .collect();
        super::objects::sort_rows(&mut rows);
        rows
    }

    /// The samples over time, by function (`function [object]` outside the executable).
    pub fn timeline(&self) -> Timeline {
        let keyed: Vec<(u64, String)> = self
            .samples
            .iter()
            .map(|(t, o, f)| {
                if o == f {
                    (*t, f.clone())
                } else {
                    (*t, format!("{f} [{o}]"))
                }
            })
            .collect();
        let refs: Vec<(u64, &str)> = keyed.iter().map(|(t, s)| (*t, s.as_str())).collect();
        super::timeline::build(&refs, super::timeline::BUCKETS)
    }

    /// `N thread` or `N threads`.
    pub fn threads_text(&self) -> String {
        format!(
            "{} thread{}",
            self.threads,
            if self.threads == 1 { "" } else { "s" }
        )
    }
}
