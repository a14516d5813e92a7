//! Fuzz the runtime's seed APIs (profil, extended profil, pcsample, record) against a model of
//! their documented rules; see ../check.rs.
#![no_main]

use libfuzzer_sys::fuzz_target;

/// No operation log while fuzzing (speed); replay a crash with the stable test to see it.
const VERBOSE: bool = false;

include!("../check.rs");

fuzz_target!(|data: &[u8]| check(data));
