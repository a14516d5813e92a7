//! The gmon crate's integration tests: one test binary, one module per theme. `malformed`
//! installs a counting global allocator (per thread, so the themes running beside it do not
//! disturb its counts).

mod fuzz_regressions;
mod gcc_pg;
mod malformed;
mod roundtrip;
