//! The profiles a process tree leaves, as `run` and `cargo profil` find them.
//!
//! `run` gives the program `GMON_OUT_PREFIX=<scratch>/gmon`, so every profiled process image of
//! the tree writes `gmon.<pid>` there, a later image of the same pid (an exec chain)
//! `gmon.<pid>.<n>` (the runtime's lineage rules, runtime/src/lineage.rs), each with its objects
//! manifest `<file>.objects` and one gmon file per shared object the manifest lists. The
//! manifest's `process` line gives the pid, the parent's pid and the CPU time, its `exe` line
//! the executable's path and build-id: together they say which program each profile belongs
//! to and how much CPU each process used, which [`Found::cpu_seconds`] ranks.
//!
//! [`keep`] moves every file out of the scratch directory under the name the user asked for
//! (`--out`, default `gmon.out`) for the process reported, `<out>.d/<out>.<pid>[.<n>]` for the
//! others, every side file (manifest, stacks, shared objects' files) in that folder `<out>.d/`,
//! rewriting each manifest's file column to the new names, so that
//! `profil-report <file> <program>` reads any of them later as it reads `gmon.out`.

use std::fs;
use std::path::{Path, PathBuf};

use gmon::manifest::{self, Kind, Process};

use crate::profile::samples::Samples;
use crate::{Error, Result};

/// One process image's profile.
#[derive(Debug, Clone)]
pub struct Found {
    /// The pid that wrote it.
    pub pid: u32,
    /// 0 for `gmon.<pid>`, n for `gmon.<pid>.<n>` (a later image of the same process).
    pub image: u32,
    /// The gmon file (the executable's histogram).
    pub file: PathBuf,
    /// Its objects manifest, if the runtime wrote one.
    pub manifest: Option<PathBuf>,
    /// The shared objects' gmon files the manifest lists (file names beside `file`).
    pub lib_files: Vec<String>,
    /// The process line of the manifest.
    pub process: Option<Process>,
    /// The executable, from the manifest (None without one).
    pub exe: Option<PathBuf>,
    /// Its build-id as the runtime recorded it (empty: none or unknown).
    pub build_id: Vec<u8>,
    /// Samples in the executable's histogram.
    pub exe_samples: u64,
    /// The histogram's rate (samples per second, from the gmon header).
    pub hz: u32,
}

impl Found {
    /// Whether [`Self::cpu_seconds`] is the user + system time the runtime measured (else it
    /// is the samples at the rate).
    pub fn cpu_measured(&self) -> bool {
        self.process
            .as_ref()
            .is_some_and(|p| p.cpu_user_ns.is_some() && p.cpu_system_ns.is_some())
    }

    /// The CPU time of this process image: the manifest's user + system time, or else its
    /// samples at the histogram's rate.
    pub fn cpu_seconds(&self) -> f64 {
        if let Some(p) = &self.process {
            if let (Some(u), Some(s)) = (p.cpu_user_ns, p.cpu_system_ns) {
                return (u.saturating_add(s)) as f64 / 1e9;
            }
        }
        self.exe_samples as f64 / f64::from(self.hz.max(1))
    }

    /// The program's display name: the executable's file name, or `pid N`.
    pub fn program_name(&self) -> String {
        match &self.exe {
            Some(p) => p
                .file_name()
                .map_or_else(|| p.display().to_string(), |n| n.to_string_lossy().into()),
            None => "(unknown program)".into(),
        }
    }

    /// The parent's pid, when the manifest says.
    pub fn ppid(&self) -> Option<u32> {
        self.process.and_then(|p| p.ppid)
    }
}

/// Move `from` to `to` atomically (rename, or copy to a temporary beside `to` and rename).
pub fn move_file(from: &Path, to: &Path) -> Result<()> {
    if fs::rename(from, to).is_ok() {
        return Ok(());
    }
    let fail = |e: std::io::Error| Error::input(format!("cannot write {}: {e}", to.display()));
    let mut tmp = to.as_os_str().to_owned();
    tmp.push(format!(".profil-tmp.{}", std::process::id()));
    let tmp = PathBuf::from(tmp);
    if let Err(e) = fs::copy(from, &tmp) {
        let _ = fs::remove_file(&tmp);
        return Err(fail(e));
    }
    fs::rename(&tmp, to).map_err(|e| {
        let _ = fs::remove_file(&tmp);
        fail(e)
    })?;
    let _ = fs::remove_file(from);
    Ok(())
}

/// `gmon.<pid>` → (pid, 0); `gmon.<pid>.<n>` → (pid, n); anything else None.
pub fn parse_name(name: &str, stem: &str) -> Option<(u32, u32)> {
    let rest = name.strip_prefix(stem)?.strip_prefix('.')?;
    let mut parts = rest.split('.');
    let num = |s: Option<&str>| -> Option<u32> {
        let s = s?;
        if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        s.parse().ok()
    };
    let pid = num(parts.next())?;
    let image = match parts.next() {
        None => 0,
        Some(n) => num(Some(n))?,
    };
    parts.next().is_none().then_some((pid, image))
}

/// Every profile in `dir` whose name is `<stem>.<pid>[.<n>]`, with what its manifest says,
/// sorted by pid and image.
pub fn scan(dir: &Path, stem: &str) -> Result<Vec<Found>> {
    let mut found = Vec::new();
    for e in fs::read_dir(dir)? {
        let e = e?;
        let name = e.file_name().to_string_lossy().into_owned();
        let Some((pid, image)) = parse_name(&name, stem) else {
            continue;
        };
        let file = e.path();
        let data = fs::read(&file)?;
        let mut hist = Samples::default();
        let exe_samples = if hist
            .add_file(&name, &data, gmon::Target::HOST, false)
            .is_ok()
        {
            hist.sampled_bins().map(|b| b.count).sum::<u64>()
        } else {
            0
        };
        let mut f = Found {
            pid,
            image,
            file: file.clone(),
            manifest: None,
            lib_files: Vec::new(),
            process: None,
            exe: None,
            build_id: Vec::new(),
            exe_samples,
            hz: hist.hz,
        };
        let m = dir.join(manifest::manifest_name(&name));
        if let Ok(text) = fs::read(&m) {
            if let Ok(parsed) = manifest::parse_manifest(&text) {
                f.process = parsed.process;
                for entry in &parsed.entries {
                    let gname = String::from_utf8_lossy(entry.gmon_file).into_owned();
                    match entry.kind {
                        Kind::Exe => {
                            f.exe = Some(PathBuf::from(
                                String::from_utf8_lossy(&entry.path.unescaped()).into_owned(),
                            ));
                            f.build_id = entry.build_id.as_bytes().to_vec();
                        }
                        Kind::Lib => f.lib_files.push(gname),
                    }
                }
                f.manifest = Some(m);
            }
        }
        found.push(f);
    }
    found.sort_by_key(|f| (f.pid, f.image));
    Ok(found)
}

/// The index of the process image that used the most CPU (ties: the first in pid order).
pub fn busiest(found: &[Found]) -> Option<usize> {
    let mut best: Option<usize> = None;
    for (i, f) in found.iter().enumerate() {
        if best.is_none_or(|b| f.cpu_seconds() > found[b].cpu_seconds()) {
            best = Some(i);
        }
    }
    best
}

/// The name `keep` gives to `f`'s gmon file: `out` for the reported process, else
/// `<out>.<pid>` or `<out>.<pid>.<n>` in the side folder `<out>.d`
/// ([`crate::profile::input::side_folder`]).
pub fn kept_name(out: &Path, f: &Found, reported: bool) -> PathBuf {
    if reported {
        return out.to_owned();
    }
    let mut s = out.file_name().unwrap_or(out.as_os_str()).to_owned();
    s.push(format!(".{}", f.pid));
    if f.image > 0 {
        s.push(format!(".{}", f.image));
    }
    crate::profile::input::side_folder(out).join(s)
}

/// Rewrite a manifest's gmon file column (field 2 of `exe` and `lib` lines) with `rename`.
pub fn rewrite_manifest(text: &[u8], rename: impl Fn(&str) -> String) -> Vec<u8> {
    let mut out = Vec::with_capacity(text.len() + 64);
    for line in text.split_inclusive(|&b| b == b'\n') {
        let is_entry = line.starts_with(b"exe\t") || line.starts_with(b"lib\t");
        if !is_entry {
            out.extend_from_slice(line);
            continue;
        }
        let mut fields = line.splitn(3, |&b| b == b'\t');
        let (Some(kind), Some(file), Some(rest)) = (fields.next(), fields.next(), fields.next())
        else {
            out.extend_from_slice(line);
            continue;
        };
        out.extend_from_slice(kind);
        out.push(b'\t');
        out.extend_from_slice(rename(&String::from_utf8_lossy(file)).as_bytes());
        out.push(b'\t');
        out.extend_from_slice(rest);
    }
    out
}

/// Remove what an earlier run kept in the side folder `side_dir` of the profile named
/// `out_name`: the regular files named `<out_name>.…` (its other processes' profiles and every
/// side file), so that the folder holds one run's files. Anything else there (a file of the
/// user's, a directory, a symbolic link) stays; a folder that is not a directory is left alone.
pub fn clear_earlier_run(side_dir: &Path, out_name: &str) {
    let is_dir = fs::symlink_metadata(side_dir).is_ok_and(|m| m.is_dir());
    let Ok(entries) = fs::read_dir(side_dir) else {
        return;
    };
    if !is_dir {
        return;
    }
    let prefix = format!("{out_name}.");
    for e in entries.flatten() {
        let ours = e
            .file_name()
            .to_str()
            .is_some_and(|n| n.starts_with(&prefix));
        if ours && e.file_type().is_ok_and(|t| t.is_file()) {
            let _ = fs::remove_file(e.path());
        }
    }
}

/// Move `f`'s files out of the scratch directory: the gmon file to `to`, and into `side_dir`
/// (created when needed) the manifest as `<to's name>.objects` (rewritten to the new names),
/// each shared object's file as `<to's name>` + what followed the old gmon file's name, the
/// sampled stacks as `<to's name>.stacks`. Stale side files of `to` from an earlier run, in
/// `side_dir` or beside `to`, are removed (they would be read as this profile's). Updates
/// `f`'s paths.
pub fn keep(f: &mut Found, to: &Path, side_dir: &Path) -> Result<()> {
    let old_name = f
        .file
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let new_name = to
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .ok_or_else(|| Error::input(format!("{}: not a file name", to.display())))?;
    let from_dir = f.file.parent().unwrap_or(Path::new(".")).to_owned();
    let to_dir = side_dir.to_owned();
    let beside_dir = match to.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_owned(),
        _ => PathBuf::from("."),
    };
    let has_sides = f.manifest.is_some()
        || !f.lib_files.is_empty()
        || crate::profile::stacks::stacks_path(&f.file).is_file();
    if has_sides {
        fs::create_dir_all(&to_dir)
            .map_err(|e| Error::input(format!("cannot create {}: {e}", to_dir.display())))?;
    }
    if beside_dir != to_dir {
        // The layout before side folders: a manifest or stacks file beside `to` would be
        // found first.
        let _ = fs::remove_file(beside_dir.join(manifest::manifest_name(&new_name)));
        let _ = fs::remove_file(crate::profile::stacks::stacks_path(to));
    }
    let rename = |old: &str| -> String {
        match old.strip_prefix(old_name.as_str()) {
            Some(rest) => format!("{new_name}{rest}"),
            None => old.to_owned(),
        }
    };
    for lib in &mut f.lib_files {
        let new = rename(lib);
        let from = from_dir.join(&*lib);
        if from.is_file() {
            move_file(&from, &to_dir.join(&new))?;
        }
        *lib = new;
    }
    let new_manifest = to_dir.join(manifest::manifest_name(&new_name));
    match &f.manifest {
        Some(m) => {
            let text = fs::read(m)?;
            let tmp = to_dir.join(format!(
                "{}.profil-tmp.{}",
                manifest::manifest_name(&new_name),
                std::process::id()
            ));
            fs::write(&tmp, rewrite_manifest(&text, rename))
                .and_then(|()| fs::rename(&tmp, &new_manifest))
                .map_err(|e| {
                    let _ = fs::remove_file(&tmp);
                    Error::input(format!("cannot write {}: {e}", new_manifest.display()))
                })?;
            let _ = fs::remove_file(m);
            f.manifest = Some(new_manifest);
        }
        None => {
            let _ = fs::remove_file(&new_manifest);
        }
    }
    // The sampled stacks go beside the profile under its new name; a stale one there goes.
    let (stacks_from, stacks_to) = (
        crate::profile::stacks::stacks_path(&f.file),
        crate::profile::stacks::stacks_path(&to_dir.join(&new_name)),
    );
    if stacks_from.is_file() {
        move_file(&stacks_from, &stacks_to)?;
    } else if stacks_to.is_file() {
        let _ = fs::remove_file(&stacks_to);
    }
    move_file(&f.file, to)?;
    f.file = to.to_owned();
    Ok(())
}

/// How many of the other processes [`others`] lists by name; the rest are counted.
pub const OTHERS_LISTED: usize = 5;

/// The processes other than `shown`, busiest first: the first [`OTHERS_LISTED`] as (program,
/// pid, CPU seconds), then how many more there are and their CPU seconds together.
pub fn others(found: &[Found], shown: &[usize]) -> (Vec<(String, u32, f64)>, usize, f64) {
    let mut others: Vec<&Found> = found
        .iter()
        .enumerate()
        .filter(|(i, _)| !shown.contains(i))
        .map(|(_, f)| f)
        .collect();
    others.sort_by(|a, b| {
        b.cpu_seconds()
            .total_cmp(&a.cpu_seconds())
            .then(a.pid.cmp(&b.pid))
    });
    let rest = others.split_off(others.len().min(OTHERS_LISTED));
    let listed = others
        .iter()
        .map(|f| (f.program_name(), f.pid, f.cpu_seconds()))
        .collect();
    (
        listed,
        rest.len(),
        rest.iter().map(|f| f.cpu_seconds()).sum(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_of_the_lineage() {
        assert_eq!(parse_name("gmon.123", "gmon"), Some((123, 0)));
        assert_eq!(parse_name("gmon.123.2", "gmon"), Some((123, 2)));
        assert_eq!(parse_name("gmon.123.objects", "gmon"), None);
        assert_eq!(parse_name("gmon.123.libc.so.6.0", "gmon"), None);
        assert_eq!(parse_name("gmon.123.2.3", "gmon"), None);
        assert_eq!(parse_name("gmon.", "gmon"), None);
        assert_eq!(parse_name("gmonx.1", "gmon"), None);
    }

    #[test]
    fn manifest_file_column_is_renamed() {
        let text = b"profil-rs objects 2\nprocess\tpid=5\n\
exe\tgmon.5\t-\t0x0\t0x1\t0x2\t/bin/x\n\
lib\tgmon.5.libc.so.6.0\t-\t0x0\t0x1\t0x2\t/lib/libc.so.6\n";
        let out = rewrite_manifest(text, |old| {
            old.strip_prefix("gmon.5")
                .map_or(old.to_owned(), |r| format!("gmon.out{r}"))
        });
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "profil-rs objects 2\nprocess\tpid=5\n\
exe\tgmon.out\t-\t0x0\t0x1\t0x2\t/bin/x\n\
lib\tgmon.out.libc.so.6.0\t-\t0x0\t0x1\t0x2\t/lib/libc.so.6\n"
        );
    }

    #[test]
    fn kept_names() {
        let f = Found {
            pid: 42,
            image: 0,
            file: PathBuf::from("/s/gmon.42"),
            manifest: None,
            lib_files: Vec::new(),
            process: None,
            exe: None,
            build_id: Vec::new(),
            exe_samples: 0,
            hz: 100,
        };
        assert_eq!(
            kept_name(Path::new("d/gmon.out"), &f, true),
            PathBuf::from("d/gmon.out")
        );
        assert_eq!(
            kept_name(Path::new("d/gmon.out"), &f, false),
            PathBuf::from("d/gmon.out.d/gmon.out.42")
        );
        let g = Found { image: 3, ..f };
        assert_eq!(
            kept_name(Path::new("gmon.out"), &g, false),
            PathBuf::from("gmon.out.d/gmon.out.42.3")
        );
    }
}
