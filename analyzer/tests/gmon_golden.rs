//! Golden files for `profil-report dump` (fixtures/gcc-pg/*.dump.*). One test per file.
//! Re-bless after an intended change with `PROFIL_BLESS=1 cargo test -p profil-report --test gmon_golden`
//! (fixtures/gcc-pg/regenerate.sh does it after rebuilding the profiles).

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
    if std::env::var_os("PROFIL_BLESS").is_some_and(|v| v == "1") {
        std::fs::write(&path, &out.stdout).unwrap();
        return;
    }
    let want = std::fs::read(&path)
        .unwrap_or_else(|e| panic!("{}: {e} (bless with PROFIL_BLESS=1)", path.display()));
    if out.stdout != want {
        panic!(
            "{} differs from `profil-report {}`; if the change is intended, rerun with PROFIL_BLESS=1\n--- got ---\n{}",
            path.display(),
            args.join(" "),
            String::from_utf8_lossy(&out.stdout)
        );
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
