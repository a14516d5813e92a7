//! Where an object's function symbols come from, best first.
//!
//! 1. The object's own `.symtab` (an unstripped build).
//! 2. The separate debug file named by its GNU build-id, `<root>/.build-id/xx/yyyy….debug`
//!    (root `/usr/lib/debug`: where Debian's `-dbgsym`/`-dbg` and Fedora's `-debuginfo`
//!    packages install them), when it has a `.symtab`.
//! 3. The file its `.gnu_debuglink` section names (with the CRC-32 it records), looked for as
//!    gdb does: beside the object, in `.debug/` beside it, and under `<root>` + the object's
//!    directory.
//! 4. `.dynsym`: the exported functions only (a stripped system library or program). Samples in
//!    its static functions then fall outside every symbol, and are reported per address range
//!    of that object (`<libc.so.6+0x2a0f0-0x2a3c0>`), never credited to a neighbour.
//!
//! With only `.dynsym`, [`debug_hint`] says which package would help, asking `dpkg -S` when
//! dpkg is there (one short process per such object), else naming the path.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use object::{Object, ObjectSection};
use profil_symbols::ElfImage;

use crate::profile::input::read_file;

/// Where the symbols were found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SymbolSource {
    /// The object's own `.symtab`.
    Symtab(PathBuf),
    /// The separate debug file found by build-id.
    DebugFile(PathBuf),
    /// The separate debug file `.gnu_debuglink` names.
    Debuglink(PathBuf),
    /// `.dynsym` only (or no symbols at all).
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

/// The GNU build-id note of an ELF file, if it has one.
pub fn build_id_of(data: &[u8]) -> Option<Vec<u8>> {
    let f = object::File::parse(data).ok()?;
    f.build_id().ok().flatten().map(<[u8]>::to_vec)
}

/// `(file name, CRC-32)` from `.gnu_debuglink`.
fn debuglink_of(data: &[u8]) -> Option<(String, u32)> {
    let f = object::File::parse(data).ok()?;
    let s = f.section_by_name(".gnu_debuglink")?;
    let bytes = s.data().ok()?;
    let end = bytes.iter().position(|&b| b == 0)?;
    let name = std::str::from_utf8(&bytes[..end]).ok()?.to_owned();
    let crc_at = (end + 4) & !3;
    let crc = bytes.get(crc_at..crc_at + 4)?;
    let crc = if f.is_little_endian() {
        u32::from_le_bytes(crc.try_into().ok()?)
    } else {
        u32::from_be_bytes(crc.try_into().ok()?)
    };
    (!name.is_empty() && !name.contains('/')).then_some((name, crc))
}

fn has_symtab(data: &[u8]) -> bool {
    ElfImage::parse(data).is_ok_and(|i| i.symtab.is_some())
}

/// The candidate places of a `.gnu_debuglink` file named `name` for the object at `path`.
fn debuglink_candidates(path: &Path, name: &str, root: &Path) -> Vec<PathBuf> {
    let dir = path.parent().unwrap_or(Path::new("/"));
    let mut v = vec![dir.join(name), dir.join(".debug").join(name)];
    let rel = dir.strip_prefix("/").unwrap_or(dir);
    v.push(root.join(rel).join(name));
    v
}

/// Pick the best symbols for the object `path` whose bytes are `data` (see the module docs).
/// `build_id` is the one the runtime recorded (empty: read it from `data`). Returns the bytes
/// to read symbols from (a debug file's, or `data` itself: None) and where they came from.
pub fn find_symbols(
    path: &Path,
    data: &[u8],
    build_id: &[u8],
    root: &Path,
) -> (Option<Vec<u8>>, SymbolSource) {
    if has_symtab(data) {
        return (None, SymbolSource::Symtab(path.to_owned()));
    }
    let own_id;
    let id = if build_id.is_empty() {
        own_id = build_id_of(data).unwrap_or_default();
        &own_id[..]
    } else {
        build_id
    };
    if let Some(dbg) = debug_file_path(root, id) {
        if let Ok(d) = read_file(&dbg).map(|d| d.to_vec()) {
            if has_symtab(&d) {
                return (Some(d), SymbolSource::DebugFile(dbg));
            }
        }
    }
    if let Some((name, crc)) = debuglink_of(data) {
        for cand in debuglink_candidates(path, &name, root) {
            if cand == path {
                continue;
            }
            let Ok(d) = read_file(&cand).map(|d| d.to_vec()) else {
                continue;
            };
            let mut h = flate2::Crc::new();
            h.update(&d);
            if h.sum() == crc && has_symtab(&d) {
                return (Some(d), SymbolSource::Debuglink(cand));
            }
        }
    }
    (None, SymbolSource::Dynsym(path.to_owned()))
}

/// What would give `path` full symbols: `the libc6-dbgsym package (Debian; or -dbg)` when
/// `dpkg -S` knows the file, else a debug file for its build-id.
pub fn debug_hint(path: &Path, build_id: &[u8], root: &Path) -> String {
    let by_id = debug_file_path(root, build_id)
        .map(|p| format!("a debug file at {}", p.display()))
        .unwrap_or_else(|| format!("a debug file for {}", path.display()));
    match dpkg_package(path) {
        Some(pkg) => format!(
            "install {pkg}-dbgsym (Debian's debug symbols; {pkg}-dbg for some packages), i.e. {by_id}"
        ),
        None => format!("install {by_id}"),
    }
}

/// The Debian package owning `path` (`dpkg -S`), when dpkg is installed and knows it.
fn dpkg_package(path: &Path) -> Option<String> {
    if !Path::new("/var/lib/dpkg/info").is_dir() {
        return None;
    }
    let mut tries = vec![path.to_owned()];
    if let Ok(c) = std::fs::canonicalize(path) {
        tries.push(c.clone());
        // Debian's merged /usr: dpkg knows /lib/… for files that live in /usr/lib/….
        if let Ok(rest) = c.strip_prefix("/usr") {
            tries.push(Path::new("/").join(rest));
        }
    }
    for p in tries {
        let out = Command::new("dpkg")
            .arg("-S")
            .arg(&p)
            .stdin(Stdio::null())
            .stderr(Stdio::null())
            .output()
            .ok()?;
        if !out.status.success() {
            continue;
        }
        let text = String::from_utf8_lossy(&out.stdout);
        let line = text.lines().next()?;
        let pkg = line.split(": ").next()?.split(',').next()?.trim();
        let pkg = pkg.split(':').next()?;
        if !pkg.is_empty() && !pkg.contains(' ') {
            return Some(pkg.to_owned());
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn debuglink_places_as_gdb() {
        let v = debuglink_candidates(
            Path::new("/opt/x/libq.so"),
            "libq.so.debug",
            Path::new("/usr/lib/debug"),
        );
        assert_eq!(
            v,
            [
                PathBuf::from("/opt/x/libq.so.debug"),
                PathBuf::from("/opt/x/.debug/libq.so.debug"),
                PathBuf::from("/usr/lib/debug/opt/x/libq.so.debug"),
            ]
        );
    }
}
