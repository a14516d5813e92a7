//! Replays the analyzer fuzz target's regression inputs on stable: every file under
//! `analyzer/fuzz/regressions/` (each one a crash, hang or outsized allocation the fuzzer
//! found, kept after the fix) goes through the same whole input path as the fuzz target
//! (`analyzer/fuzz/check.rs`: ELF + DWARF + gmon → `--gprof` sections and the default report
//! in every format). A second test drives the same check over the valid base profile with
//! every flag combination, so the harness is known to reach the reports.

include!("../../fuzz/check.rs");

fn replay_dir(dir: &std::path::Path) -> usize {
    let mut n = 0;
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file() && p.extension().is_none_or(|x| x != "md"))
        .collect();
    entries.sort();
    for p in entries {
        let data = std::fs::read(&p).unwrap();
        eprintln!("replaying {}", p.display());
        check(&data);
        n += 1;
    }
    n
}

#[test]
fn fuzz_regressions_replay_without_panic() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/regressions");
    let n = replay_dir(&dir);
    eprintln!("{n} regression inputs replayed");
}

/// The base profile through every flag combination: the check must reach the reports (a
/// valid input whose analysis fails would mean the harness tests nothing).
#[test]
fn base_profile_reaches_every_report() {
    use profil_report::report::{self, GmonInput, Input, Inputs};
    use profil_report::request::Format;
    let inputs = Inputs {
        exe: Input {
            path: "prog".into(),
            data: BASE_ELF.to_vec().into(),
        },
        gmons: vec![GmonInput::from_bytes("gmon.out", BASE_GMON.to_vec())],
    };
    let image = report::parse_exe(&inputs.exe).expect("base ELF parses");
    assert!(image.symtab.is_some(), "base ELF has symbols");
    let a = profil_report::gprof::Analysis::of_inputs(&inputs, &image, Default::default())
        .expect("base analysis");
    assert!(a.total_time > 0.0, "base profile has samples");
    let mut json = Vec::new();
    let req = profil_report::request::Request::default_report(Vec::new(), Format::Json);
    profil_report::pipeline::report(&req, &inputs, &image, &mut json, &mut Vec::new())
        .expect("default report");
    assert!(
        String::from_utf8_lossy(&json).contains("\"fib\""),
        "fib in the report"
    );
    for flags in 0..=255u8 {
        let mut input = vec![flags, 0, 0];
        input.extend_from_slice(BASE_GMON);
        check(&input);
    }
}
