//! The runtime artifacts carried inside this binary, and the cache directory they are written to.
//!
//! `analyzer/build.rs` builds `profil_rt.o` (link-time injection) and `libprofil_rt.so`
//! (`LD_PRELOAD`); this module embeds their bytes with `include_bytes!`, so `profil-report` and
//! `cargo-profil` work anywhere after `cargo install`, long after the build directory is gone.
//!
//! Linkers and the dynamic loader need real files, so [`materialize`] writes the artifacts to
//!
//! ```text
//! $PROFIL_CACHE_DIR/<version>-<hash>/          if PROFIL_CACHE_DIR is set, else
//! $XDG_CACHE_HOME/profil-rs/<version>-<hash>/  if XDG_CACHE_HOME is set (absolute), else
//! $HOME/.cache/profil-rs/<version>-<hash>/     and if that cannot be written,
//! <temp dir>/profil-rs-<euid>/<version>-<hash>/ (only if that directory is ours, mode 0700)
//! ```
//!
//! where `<hash>` is a 64-bit FNV-1a hash of both artifacts. Why a content hash in the name:
//! cargo does not track files named in `-C link-arg`, so if a rebuilt runtime replaced the old
//! one at the same path, cargo would not relink. With the hash in the path, a different runtime
//! is a different link argument, which cargo does notice.
//!
//! Every use checks the cached files byte for byte against the embedded ones; a missing,
//! truncated or modified file is rewritten. Each file is written to a temporary name in the
//! same directory and renamed into place, so concurrent users never see a partial file.
//!
//! `runtime-path` always prints the cache path (never the build directory's), so a development
//! build and an installed binary behave the same.

use std::fs;
use std::io::Write;
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use crate::{Error, Result};

/// The relocatable object, for `-C link-arg=` or a C link line.
pub const OBJECT_NAME: &str = "profil_rt.o";
/// The shared object, for `LD_PRELOAD`.
pub const SHARED_NAME: &str = "libprofil_rt.so";

const OBJECT: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/profil_rt.o"));
const SHARED: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/libprofil_rt.so"));
/// Why the build could not produce the artifacts (empty when it did).
const BUILD_ERROR: &str = env!("PROFIL_RT_ERROR");

/// Which artifact.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// `profil_rt.o`.
    Object,
    /// `libprofil_rt.so`.
    Shared,
}

impl Kind {
    /// File name in the cache directory.
    pub fn file_name(self) -> &'static str {
        match self {
            Kind::Object => OBJECT_NAME,
            Kind::Shared => SHARED_NAME,
        }
    }

    fn what(self) -> &'static str {
        match self {
            Kind::Object => "object",
            Kind::Shared => "shared object",
        }
    }
}

/// The embedded bytes of an artifact, or why this binary has none.
pub fn embedded(kind: Kind) -> Result<&'static [u8]> {
    let bytes = match kind {
        Kind::Object => OBJECT,
        Kind::Shared => SHARED,
    };
    if !BUILD_ERROR.is_empty() || bytes.is_empty() {
        let why = if BUILD_ERROR.is_empty() {
            "the build produced an empty file"
        } else {
            BUILD_ERROR
        };
        return Err(Error::input(format!(
            "this profil-report was built without the runtime {}: {why}; rebuild it where \
             `cargo`, `ld` and `objcopy` work (and PROFIL_RT_SKIP_BUILD is unset)",
            kind.what()
        )));
    }
    Ok(bytes)
}

/// 64-bit FNV-1a.
pub fn fnv1a64(parts: &[&[u8]]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for part in parts {
        for &b in *part {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    h
}

/// The cache directory's name: `<version>-<hash of both artifacts>`.
pub fn version_dir_name() -> String {
    format!(
        "{}-{:016x}",
        env!("CARGO_PKG_VERSION"),
        fnv1a64(&[OBJECT, b"\0", SHARED])
    )
}

/// Where the cache may live, in order of preference (see the module docs), each with whether
/// it is the shared-temp-dir fallback. An explicit `PROFIL_CACHE_DIR` is the only candidate
/// when set.
pub fn cache_roots() -> Vec<(PathBuf, bool)> {
    let absolute = |v: Option<std::ffi::OsString>| {
        v.map(PathBuf::from)
            .filter(|p| p.is_absolute() && !p.as_os_str().is_empty())
    };
    if let Some(p) = absolute(std::env::var_os("PROFIL_CACHE_DIR")) {
        return vec![(p, false)];
    }
    let mut roots = Vec::new();
    if let Some(p) = absolute(std::env::var_os("XDG_CACHE_HOME")) {
        roots.push((p.join("profil-rs"), false));
    } else if let Some(p) = absolute(std::env::var_os("HOME")) {
        roots.push((p.join(".cache").join("profil-rs"), false));
    }
    roots.push((
        std::env::temp_dir().join(format!("profil-rs-{}", effective_uid())),
        true,
    ));
    roots
}

fn effective_uid() -> u32 {
    // SAFETY: geteuid() has no preconditions and cannot fail.
    unsafe { libc::geteuid() }
}

/// The shared temp directory is writable by everyone: use our directory there only if we own
/// it and nobody else can write to it (another user could otherwise swap the shared object
/// that `run` preloads).
fn private_temp_dir(root: &Path) -> Result<()> {
    use std::os::unix::fs::{DirBuilderExt, MetadataExt};
    let _ = fs::DirBuilder::new().mode(0o700).create(root);
    let m = fs::symlink_metadata(root)
        .map_err(|e| Error::input(format!("cannot create the cache {}: {e}", root.display())))?;
    if !m.is_dir() || m.uid() != effective_uid() || m.mode() & 0o022 != 0 {
        return Err(Error::input(format!(
            "{} is not a private directory of this user",
            root.display()
        )));
    }
    Ok(())
}

/// Write the artifact to the cache (if it is not already there, intact) and return its
/// absolute path.
pub fn materialize(kind: Kind) -> Result<PathBuf> {
    let bytes = embedded(kind)?;
    let mut first_error = None;
    for (root, shared_temp) in cache_roots() {
        if shared_temp {
            if let Err(e) = private_temp_dir(&root) {
                first_error.get_or_insert(e);
                continue;
            }
        }
        match materialize_in(&root.join(version_dir_name()), kind.file_name(), bytes) {
            Ok(p) => return Ok(p),
            Err(e) => {
                first_error.get_or_insert(e);
            }
        }
    }
    Err(first_error.unwrap_or_else(|| Error::input("no cache directory")))
}

/// Write `bytes` as `dir/name` unless that file already holds exactly these bytes.
pub fn materialize_in(dir: &Path, name: &str, bytes: &[u8]) -> Result<PathBuf> {
    let path = dir.join(name);
    if fs::read(&path).is_ok_and(|b| b == bytes) {
        return Ok(path);
    }
    let fail = |what: &str, p: &Path, e: std::io::Error| {
        Error::input(format!(
            "cannot write the runtime to the cache: {what} {}: {e} (set PROFIL_CACHE_DIR to a \
             writable directory)",
            p.display()
        ))
    };
    fs::create_dir_all(dir).map_err(|e| fail("cannot create", dir, e))?;
    let tmp = dir.join(format!(".{name}.tmp.{}", std::process::id()));
    let _ = fs::remove_file(&tmp);
    let written = (|| {
        let mut f = fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o755)
            .open(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        fs::set_permissions(&tmp, fs::Permissions::from_mode(0o755))
    })();
    if let Err(e) = written {
        let _ = fs::remove_file(&tmp);
        return Err(fail("cannot write", &tmp, e));
    }
    if let Err(e) = fs::rename(&tmp, &path) {
        let _ = fs::remove_file(&tmp);
        return Err(fail("cannot rename into", &path, e));
    }
    // Another process may have raced us; either way the file must now hold our bytes.
    match fs::read(&path) {
        Ok(b) if b == bytes => Ok(path),
        Ok(_) => Err(Error::input(format!(
            "the cached runtime {} does not match this binary's after writing it",
            path.display()
        ))),
        Err(e) => Err(fail("cannot read back", &path, e)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fnv_matches_published_vectors() {
        // From the FNV reference test suite.
        assert_eq!(fnv1a64(&[b""]), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a64(&[b"a"]), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(fnv1a64(&[b"foo", b"bar"]), fnv1a64(&[b"foobar"]));
        assert_eq!(fnv1a64(&[b"foobar"]), 0x85944171f73967e8);
    }

    #[test]
    fn materialize_repairs_a_damaged_file() {
        let dir = std::env::temp_dir().join(format!("profil-artifacts-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        let p = materialize_in(&dir, "x.o", b"hello").unwrap();
        assert_eq!(fs::read(&p).unwrap(), b"hello");
        fs::write(&p, b"hel").unwrap();
        let p2 = materialize_in(&dir, "x.o", b"hello").unwrap();
        assert_eq!(p, p2);
        assert_eq!(fs::read(&p).unwrap(), b"hello");
        let leftovers: Vec<_> = fs::read_dir(&dir).unwrap().collect();
        assert_eq!(leftovers.len(), 1, "no temporary file is left behind");
        fs::remove_dir_all(&dir).unwrap();
    }
}
