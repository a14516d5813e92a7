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

    let out = cargo_profil(
        &proj,
        &[
            "--release",
            "--hz",
            "1000",
            "--html",
            "crunch.html",
            "--",
            "300000000",
        ],
    );
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
    // --html: the page too (html:: tests what it shows).
    let page = std::fs::read_to_string(proj.join("crunch.html")).unwrap();
    assert!(page.contains("<canvas id=\"flame\""), "{page}");

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

/// Issue 14: `cargo profil` links the runtime in so that the 1000 short std threads of
/// fixtures/runtime/short_threads.rs (each under one sampling period) get their share of the
/// samples: see [`check_short_threads`].
#[test]
fn short_threads_are_sampled_in_proportion() {
    check_short_threads("cargo-short", None);
}

/// Issue 28: the same on a `+crt-static` project (`target-feature` in its `.cargo/config.toml`):
/// it builds (before, libc.a's `syscall` and `execvp` clashed with the runtime's), the binary
/// is static, and its short threads are sampled in proportion.
#[test]
fn a_crt_static_project_builds_and_samples_short_threads_in_proportion() {
    let (_scratch, exe) = check_short_threads(
        "cargo-static",
        Some("[build]\nrustflags = [\"-C\", \"target-feature=+crt-static\"]\n"),
    );
    let out = Command::new("readelf")
        .arg("-lW")
        .arg(&exe)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", show(&out));
    assert!(
        !text(&out.stdout).contains("INTERP"),
        "not static: {}",
        exe.display()
    );
}

/// A fresh project `short` (in scratch directory `scratch`, with `config` as its
/// `.cargo/config.toml`) running fixtures/runtime/short_threads.rs under `cargo profil`:
/// `task_spin`'s share of the samples of `task_spin` and `main_spin` is the share of CPU time
/// the program measured for it, within 10 points plus 4 standard deviations. Runs are repeated
/// (at most 6) until they used 1.5 CPU-seconds together. Returns the scratch directory and the
/// built binary in it.
fn check_short_threads(scratch: &str, config: Option<&str>) -> (TempDir, std::path::PathBuf) {
    let s = TempDir::new(scratch);
    let proj = cargo_new(&s, "short", "fixtures/runtime/short_threads.rs");
    if let Some(config) = config {
        std::fs::create_dir_all(proj.join(".cargo")).unwrap();
        std::fs::write(proj.join(".cargo/config.toml"), config).unwrap();
    }
    let (mut task, mut main, mut samples) = (0.0, 0.0, 0.0);
    let (mut task_cpu, mut cpu, mut runs) = (0.0, 0.0, 0);
    while cpu < 1.5 && runs < 6 {
        let out = cargo_profil(&proj, &["--release", "--hz", "1000"]);
        assert!(out.status.success(), "{}", show(&out));
        // `truth task T main M cpu S`
        let words: Vec<f64> = text(&out.stdout)
            .split_whitespace()
            .filter_map(|w| w.parse().ok())
            .collect();
        let [t, _, c] = words[..] else {
            panic!("{}", show(&out))
        };
        task_cpu += t / 100.0 * c;
        cpu += c;
        let err = text(&out.stderr);
        let n = total_samples(&err) as f64;
        let pct = |f: &str| percent_of(&err, f).unwrap_or(0.0) / 100.0 * n;
        task += pct("short::task_spin");
        main += pct("short::main_spin");
        samples += n;
        runs += 1;
    }
    let truth = 100.0 * task_cpu / cpu;
    let share = 100.0 * task / (task + main);
    let p = truth / 100.0;
    let band = 10.0 + 400.0 * (p * (1.0 - p) / samples.max(1.0)).sqrt();
    assert!(
        (share - truth).abs() <= band,
        "task_spin has {share:.1}% of the samples of task_spin and main_spin ({task:.0} and \
         {main:.0} of {samples:.0}, {runs} runs), its CPU time {truth:.1}% (band {band:.1})"
    );
    let host = String::from_utf8(
        Command::new(std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into()))
            .arg("-vV")
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    let host = host
        .lines()
        .find_map(|l| l.strip_prefix("host: "))
        .unwrap()
        .to_string();
    let exe = proj.join("target").join(host).join("release/short");
    (s, exe)
}

/// `cargo profil --bin nosuch`: one line, the command's name once (it said
/// `cargo-profil: cargo profil: package …`).
#[test]
fn a_missing_binary_is_one_line_naming_the_command_once() {
    let s = TempDir::new("cargo-nosuch");
    let proj = s.join("little");
    std::fs::create_dir_all(proj.join("src")).unwrap();
    std::fs::write(
        proj.join("Cargo.toml"),
        "[package]\nname = \"little\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[workspace]\n",
    )
    .unwrap();
    std::fs::write(proj.join("src/main.rs"), "fn main() {}\n").unwrap();
    let out = cargo_profil(&proj, &["--bin", "nosuch"]);
    assert_eq!(out.status.code(), Some(2), "{}", show(&out));
    assert_eq!(
        text(&out.stderr).trim_end(),
        "cargo profil: package `little` has no binary `nosuch` (it has: little)",
        "{}",
        show(&out)
    );
}
