//! Inputs the fuzzer (fuzz/, `cargo +nightly fuzz run read`) found problems with, replayed
//! through the same check on stable. Add new crash inputs to tests/fuzz-regressions/.

include!("fuzz_check.rs");

#[test]
fn replay_fuzz_regressions() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fuzz-regressions");
    let mut n = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let data = std::fs::read(&path).unwrap();
        check(&data);
        n += 1;
    }
    assert!(n > 0, "no regression inputs in {}", dir.display());
}
