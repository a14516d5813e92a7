//! Golden files for `profil-report dump` (fixtures/gcc-pg/*.dump.*). One test per file.
//! Re-bless after an intended change with `PROFIL_BLESS=1 cargo test -p profil-report --test integration gmon_golden::`
//! (fixtures/gcc-pg/regenerate.sh does it after rebuilding the profiles).

use crate::golden;

use std::path::Path;
use std::process::Command;

fn check(golden: &str, args: &[&str]) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/gcc-pg");
    let out = Command::new(env!("CARGO_BIN_EXE_profil-report"))
        .args(args)
        .current_dir(&dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let path = dir.join(golden);
    if let Err(e) = golden::check(&path, &out.stdout) {
        panic!("`profil-report {}`: {e}", args.join(" "));
    }
}

#[test]
fn loop2_dump_text() {
    check("loop2.dump.txt", &["dump", "loop2.gmon", "--exe", "loop2"]);
}

#[test]
fn cycle_dump_json() {
    check(
        "cycle.dump.json",
        &["dump", "--json", "cycle.gmon", "--exe", "cycle"],
    );
}
