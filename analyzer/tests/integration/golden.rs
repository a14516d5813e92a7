//! The one golden-file check of the analyzer's tests, with one bless switch: `PROFIL_BLESS`
//! set (to anything) writes the output as the new golden file instead of comparing.
#![allow(dead_code)]

use std::path::Path;

/// Whether this run rewrites golden files.
pub fn blessing() -> bool {
    std::env::var_os("PROFIL_BLESS").is_some()
}

/// Compare `got` with the golden file at `path` (or write it when blessing). The error names
/// the file, says how to bless, and shows the first line that differs and both texts.
pub fn check(path: &Path, got: &[u8]) -> Result<(), String> {
    if blessing() {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        }
        return std::fs::write(path, got).map_err(|e| format!("{}: {e}", path.display()));
    }
    let want = std::fs::read(path)
        .map_err(|e| format!("{}: {e} (PROFIL_BLESS=1 creates it)", path.display()))?;
    if want == got {
        return Ok(());
    }
    let (want, got) = (String::from_utf8_lossy(&want), String::from_utf8_lossy(got));
    let first = want
        .lines()
        .zip(got.lines())
        .position(|(a, b)| a != b)
        .unwrap_or_else(|| want.lines().count().min(got.lines().count()));
    Err(format!(
        "{} differs from the output (first at line {}); if the change is intended, rerun \
         with PROFIL_BLESS=1\n--- expected\n{want}--- got\n{got}",
        path.display(),
        first + 1
    ))
}

/// [`check`], panicking on a difference.
pub fn assert_golden(path: &Path, got: &[u8]) {
    if let Err(e) = check(path, got) {
        panic!("{e}");
    }
}
