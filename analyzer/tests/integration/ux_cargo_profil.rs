//! `cargo profil` on a fresh `cargo new` project (no dependencies, so it builds offline): builds
//! with the runtime linked into the binary only, runs it with arguments, passes its output and
//! exit status through, and prints the report.

use crate::ux_support;

use std::path::Path;
use std::process::Command;
use ux_support::*;

const MAIN_RS: &str = r#"
#[inline(never)]
fn crunch(n: u64) -> u64 {
    let mut x = n;
    for i in 0..n {
        x = std::hint::black_box(x.wrapping_mul(6364136223846793005).wrapping_add(i));
    }
    x
}

fn main() {
    let n: u64 = std::env::args().nth(1).expect("an argument").parse().unwrap();
    println!("crunched {}", crunch(n));
    std::process::exit(5);
}
"#;

fn cargo() -> String {
    std::env::var("CARGO").unwrap_or_else(|_| "cargo".into())
}

/// `cargo profil ARGS` in `dir`, with the test's cargo-profil first on PATH.
fn cargo_profil(dir: &Path, args: &[&str]) -> std::process::Output {
    let bin_dir = Path::new(CARGO_PROFIL).parent().unwrap();
    let path = format!("{}:{}", bin_dir.display(), std::env::var("PATH").unwrap());
    Command::new(cargo())
        .arg("profil")
        .args(args)
        .current_dir(dir)
        .env("PATH", path)
        .env_remove("CARGO_TARGET_DIR")
        .env_remove("CARGO_BUILD_TARGET_DIR")
        .env_remove("RUSTFLAGS")
        .env_remove("CARGO_ENCODED_RUSTFLAGS")
        .output()
        .unwrap()
}

/// Run `exe 1000` in a fresh directory `dir`: did it leave a gmon.out (is the runtime in it)?
fn writes_a_profile(exe: &Path, dir: &Path) -> bool {
    let _ = std::fs::remove_dir_all(dir);
    std::fs::create_dir_all(dir).unwrap();
    let out = Command::new(exe)
        .arg("1000")
        .current_dir(dir)
        .env_remove("LD_PRELOAD")
        .env_remove("PROFIL_OUT")
        .env_remove("GMON_OUT_PREFIX")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(5), "{}", show(&out));
    dir.join("gmon.out").is_file()
}

#[test]
fn fresh_cargo_new_project() {
    let s = TempDir::new("cargo");
    let out = Command::new(cargo())
        .args(["new", "--quiet", "--vcs", "none", "crunch"])
        .current_dir(&s.0)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", show(&out));
    let proj = s.join("crunch");
    std::fs::write(proj.join("src/main.rs"), MAIN_RS).unwrap();
    // A release profile that strips: cargo profil keeps the symbols anyway.
    let manifest = std::fs::read_to_string(proj.join("Cargo.toml")).unwrap();
    std::fs::write(
        proj.join("Cargo.toml"),
        format!("{manifest}\n[profile.release]\nstrip = true\n"),
    )
    .unwrap();

    let out = cargo_profil(&proj, &["--release", "--hz", "1000", "--", "300000000"]);
    assert_eq!(out.status.code(), Some(5), "{}", show(&out));
    assert_eq!(
        text(&out.stdout)
            .lines()
            .next()
            .map(|l| l.starts_with("crunched ")),
        Some(true)
    );
    let err = text(&out.stderr);
    assert!(
        err.contains("exited with status 5; profile saved as gmon.out"),
        "{err}"
    );
    let pct = percent_of(&err, "crunch::crunch").unwrap_or_else(|| panic!("{err}"));
    assert!(pct > 90.0, "{err}");
    assert!(proj.join("gmon.out").is_file());

    // Built for the host triple: the normal target/release stays unprofiled (absent here).
    let host = Command::new("rustc").arg("-vV").output().unwrap();
    let host = text(&host.stdout)
        .lines()
        .find_map(|l| l.strip_prefix("host: ").map(str::to_string))
        .unwrap();
    let exe = proj.join(format!("target/{host}/release/crunch"));
    assert!(
        writes_a_profile(&exe, &s.join("probe")),
        "the binary is profiled"
    );
    assert!(!proj.join("target/release/crunch").exists());

    // A plain build for the host in between, then cargo profil again: the binary is
    // relinked with the runtime (cargo keys the link on the arguments).
    let out = Command::new(cargo())
        .args(["build", "--release", "--target", &host])
        .current_dir(&proj)
        .env_remove("CARGO_TARGET_DIR")
        .env_remove("RUSTFLAGS")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", show(&out));
    assert!(!writes_a_profile(&exe, &s.join("probe")), "a plain build");
    let out = cargo_profil(&proj, &["--release", "--report", "-", "--", "1000"]);
    assert_eq!(out.status.code(), Some(5), "{}", show(&out));
    assert!(
        text(&out.stdout).contains("Flat profile of"),
        "{}",
        show(&out)
    );
    assert!(
        writes_a_profile(&exe, &s.join("probe")),
        "relinked with the runtime"
    );

    // An example instead of the binary.
    std::fs::create_dir_all(proj.join("examples")).unwrap();
    std::fs::write(
        proj.join("examples/ex.rs"),
        "fn main() { println!(\"example ran\"); std::process::exit(9); }",
    )
    .unwrap();
    let out = cargo_profil(&proj, &["--example", "ex"]);
    assert_eq!(out.status.code(), Some(9), "{}", show(&out));
    assert_eq!(text(&out.stdout), "example ran\n");
    assert!(
        text(&out.stderr).contains("/examples/ex exited with status 9"),
        "{}",
        show(&out)
    );

    // Errors a new user hits.
    let out = cargo_profil(&proj, &["--bin", "nope"]);
    assert_eq!(out.status.code(), Some(2), "{}", show(&out));
    assert!(
        text(&out.stderr).contains("has no binary `nope` (it has: crunch)"),
        "{}",
        show(&out)
    );
    let out = cargo_profil(&s.0, &[]);
    assert_eq!(out.status.code(), Some(2), "{}", show(&out));
    assert!(
        text(&out.stderr).contains("is this a cargo project?"),
        "{}",
        show(&out)
    );
}
