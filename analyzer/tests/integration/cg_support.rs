//! Helpers of the `cg_*` tests: the shared oracle helpers of `tests/support`, the corpus of
//! `fixtures/callgraph/corpus`, the call-graph comparison with the installed GNU gprof, gmon
//! files written by hand, a small random generator and a small JSON parser.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

use crate::support;
pub use support::*;

/// A file of `fixtures/callgraph/corpus`.
pub fn corpus(name: &str) -> PathBuf {
    fixtures_dir("callgraph/corpus").join(name)
}

/// `gprof -b FLAGS exe gmon...` and `profil-report --gprof -b FLAGS gmon... exe` must print
/// the same bytes and both succeed (our inputs in the other order: detection by content).
/// Returns gprof's output.
pub fn assert_same(dir: &Path, exe: &str, gmons: &[&str], flags: &[&str]) -> Vec<u8> {
    assert_same_as_gprof(dir, exe, gmons, &["-b"], flags)
}

/// Compile `fixtures/callgraph/corpus/<src>` with `tool` and `flags` into `dir/prog`.
pub fn compile_corpus(dir: &Path, tool: &str, src: &str, flags: &[&str]) {
    let src = corpus(src);
    let mut args = flags.to_vec();
    args.extend_from_slice(&["-o", "prog", src.to_str().unwrap()]);
    compile(dir, tool, &args);
}

/// The flag sets every real profile is checked under (the call graph alone, the whole
/// report, and with -z / -a).
pub const FLAG_SETS: [&[&str]; 6] = [
    &["-q"],
    &[],
    &["-q", "-z"],
    &["-z"],
    &["-q", "-a"],
    &["-a", "-z"],
];

/// A GNU gmon.out (version 1, little-endian, 64-bit addresses unless made by `new32`)
/// written field by field, independent of the `gmon` crate.
#[derive(Default)]
pub struct GmonFile(pub Vec<u8>, pub bool);

impl GmonFile {
    pub fn new() -> Self {
        let mut v = b"gmon".to_vec();
        v.extend_from_slice(&1u32.to_le_bytes());
        v.extend_from_slice(&[0; 12]);
        GmonFile(v, false)
    }
    /// For a 32-bit executable: addresses are 4 bytes.
    pub fn new32() -> Self {
        let mut g = Self::new();
        g.1 = true;
        g
    }
    fn addr(&mut self, a: u64) {
        if self.1 {
            self.0
                .extend_from_slice(&u32::try_from(a).unwrap().to_le_bytes());
        } else {
            self.0.extend_from_slice(&a.to_le_bytes());
        }
    }
    /// A histogram record over `[low, high)` with `bins`, `rate` samples per second.
    pub fn hist(&mut self, low: u64, high: u64, rate: u32, bins: &[u16]) -> &mut Self {
        self.0.push(0);
        self.addr(low);
        self.addr(high);
        self.0
            .extend_from_slice(&u32::try_from(bins.len()).unwrap().to_le_bytes());
        self.0.extend_from_slice(&rate.to_le_bytes());
        let mut dim = [0u8; 15];
        dim[..7].copy_from_slice(b"seconds");
        self.0.extend_from_slice(&dim);
        self.0.push(b's');
        for b in bins {
            self.0.extend_from_slice(&b.to_le_bytes());
        }
        self
    }
    /// A call-graph arc record.
    pub fn arc(&mut self, from_pc: u64, self_pc: u64, count: u32) -> &mut Self {
        self.0.push(1);
        self.addr(from_pc);
        self.addr(self_pc);
        self.0.extend_from_slice(&count.to_le_bytes());
        self
    }
    pub fn write(&self, path: &Path) {
        std::fs::write(path, &self.0).expect("write gmon file");
    }

    /// A 4.4BSD gmon.out (64-bit little-endian): `struct gmonhdr`, the bins, then raw arcs
    /// with 8-byte counts. gprof always treats such a file as having a call graph.
    pub fn bsd44(low: u64, high: u64, rate: u32, bins: &[u16], arcs: &[(u64, u64, u64)]) -> Self {
        let mut v = Vec::new();
        v.extend_from_slice(&low.to_le_bytes());
        v.extend_from_slice(&high.to_le_bytes());
        let ncnt = u32::try_from(40 + 2 * bins.len()).unwrap();
        v.extend_from_slice(&ncnt.to_le_bytes());
        v.extend_from_slice(&0x0005_1879u32.to_le_bytes());
        v.extend_from_slice(&rate.to_le_bytes());
        v.extend_from_slice(&[0; 12]);
        for b in bins {
            v.extend_from_slice(&b.to_le_bytes());
        }
        for &(from, to, count) in arcs {
            v.extend_from_slice(&from.to_le_bytes());
            v.extend_from_slice(&to.to_le_bytes());
            v.extend_from_slice(&count.to_le_bytes());
        }
        GmonFile(v, false)
    }
}

/// xorshift64*: small, deterministic, good enough for test shapes.
pub struct Rng(pub u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1)
    }
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
    pub fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }
}

/// A parsed JSON document (serde_json), read with the panicking accessors of [`JsonExt`].
pub type Json = serde_json::Value;

/// Accessors that panic with what was expected, for tests.
pub trait JsonExt {
    /// Parse a whole document; panics on malformed input.
    fn parse(text: &str) -> Json;
    /// Member `key` of an object (panics if absent).
    fn key(&self, key: &str) -> &Json;
    fn arr(&self) -> &[Json];
    fn num(&self) -> f64;
    fn u(&self) -> u64;
    fn str(&self) -> &str;
    fn bool(&self) -> bool;
}

impl JsonExt for Json {
    fn parse(text: &str) -> Json {
        serde_json::from_str(text).unwrap_or_else(|e| panic!("not JSON: {e}"))
    }
    fn key(&self, key: &str) -> &Json {
        match self {
            Json::Object(m) => m.get(key).unwrap_or_else(|| panic!("no key {key:?}")),
            _ => panic!("not an object looking for {key:?}"),
        }
    }
    fn arr(&self) -> &[Json] {
        self.as_array()
            .unwrap_or_else(|| panic!("not an array: {self:?}"))
    }
    fn num(&self) -> f64 {
        self.as_f64()
            .unwrap_or_else(|| panic!("not a number: {self:?}"))
    }
    fn u(&self) -> u64 {
        self.as_u64()
            .unwrap_or_else(|| panic!("not a count: {self:?}"))
    }
    fn str(&self) -> &str {
        self.as_str()
            .unwrap_or_else(|| panic!("not a string: {self:?}"))
    }
    fn bool(&self) -> bool {
        self.as_bool()
            .unwrap_or_else(|| panic!("not a boolean: {self:?}"))
    }
}
