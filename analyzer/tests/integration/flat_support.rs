//! Helpers of the `flat_*` tests: the shared oracle helpers of `tests/support`, the corpus
//! of `fixtures/flat/corpus`, and the flat-profile comparison with the installed GNU gprof.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

use crate::support;
pub use support::*;

/// The corpus directory (`fixtures/flat/corpus`).
pub fn corpus(name: &str) -> PathBuf {
    fixtures_dir("flat/corpus").join(name)
}

/// `gprof -b -p FLAGS exe gmon...` and `profil-report --gprof -b -p FLAGS gmon... exe` must
/// print the same bytes (our inputs in the other order, to test detection by content).
/// Returns gprof's output.
pub fn assert_same(dir: &Path, exe: &str, gmons: &[&str], flags: &[&str]) -> Vec<u8> {
    assert_same_as_gprof(dir, exe, gmons, &["-b", "-p"], flags)
}

/// The flag sets every profile is checked under.
pub const FLAG_SETS: [&[&str]; 4] = [&[], &["-z"], &["-a"], &["-a", "-z"]];
