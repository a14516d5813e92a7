//! Fuzz the reader (and the merge/write path behind it); see tests/integration/fuzz_check.rs.
#![no_main]

use libfuzzer_sys::fuzz_target;

include!("../../tests/integration/fuzz_check.rs");

fuzz_target!(|data: &[u8]| check(data));
