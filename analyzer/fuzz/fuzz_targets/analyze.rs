//! Fuzz the analyzer's whole input path (ELF + DWARF + gmon → every report); see ../check.rs.
#![no_main]

use libfuzzer_sys::fuzz_target;

include!("../check.rs");

fuzz_target!(|data: &[u8]| check(data));
