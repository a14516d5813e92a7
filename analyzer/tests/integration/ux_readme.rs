//! Every command in README.md runs, in order, and succeeds.
//!
//! Each fenced `sh` block is run as one `bash -euo pipefail` script, in one scratch directory
//! shared by all blocks (so the guide's files carry over from block to block, and nothing is
//! written into the repository). Three things are substituted, to keep CI time in check, and
//! said here so the substitution is honest:
//!
//! * the test command block (`cargo test --workspace --locked`) is skipped: it is what CI runs,
//!   and this test is part of it;
//! * `cargo run [--release|-q] -p profil-report -- ARGS` runs the `profil-report` these tests
//!   were built with, instead of a second (release) build of the same code;
//! * `cargo install [--locked] --path analyzer` is replaced by copying the two binaries these tests were
//!   built with into a directory put first on `PATH` — a copy away from the build directory, as
//!   an installed binary is. Every other `cargo` command (`cargo new`, `cargo build`,
//!   `cargo profil`) is the real cargo.
//!
//! From the guide on (the section "Profiling a program" and every one after it), every line
//! the blocks print must fit [`crate::ux_support`]'s 100 columns, except what gprof prints
//! (a block that runs `gprof` or `--gprof`: its standard output is gprof's, byte for byte)
//! and what the profiled programs print themselves (the guide's programs print short lines).
//! The blocks are read from README.md, so a command added to the guide is checked too.

use crate::ux_support;

use std::path::Path;
use std::process::Command;
use ux_support::*;

/// The heading from which on every printed line must fit 100 columns.
const GUIDE: &str = "## Profiling a program";

/// The fenced `sh` blocks of README.md, in order, each with whether it comes after [`GUIDE`].
fn sh_blocks(readme: &str) -> Vec<(bool, String)> {
    let mut blocks = Vec::new();
    let mut current: Option<String> = None;
    let mut in_guide = false;
    for line in readme.lines() {
        let t = line.trim();
        if current.is_none() && line.starts_with(GUIDE) {
            in_guide = true;
        }
        if t.starts_with("```") {
            match current.take() {
                Some(b) => blocks.push((in_guide, b)),
                None if t == "```sh" => current = Some(String::new()),
                None => {}
            }
            continue;
        }
        if let Some(b) = &mut current {
            b.push_str(line);
            b.push('\n');
        }
    }
    blocks
}

const CARGO_SHIM: &str = r#"#!/usr/bin/env bash
# README test: see analyzer/tests/integration/ux_readme.rs for what is substituted and why.
if [ "$1" = run ]; then
    for a in "$@"; do shift; [ "$a" = -- ] && break; done
    exec profil-report "$@"
fi
if [ "$1" = install ] && [[ " $* " == *" --path analyzer "* ]]; then
    echo "(README test: profil-report and cargo-profil are already installed on PATH)"
    exit 0
fi
exec "$REAL_CARGO" "$@"
"#;

#[test]
fn every_readme_command_runs() {
    run_readme(false);
}

/// Every line the guide's commands print fits 100 columns (see the module docs for what is
/// left out): headers name programs by shortened paths and wrap, the tables with totals and
/// `diff`'s and `--inline`'s leave intervals and counts to `--wide` (issue 24).
#[test]
fn every_line_the_guide_prints_fits_100_columns() {
    run_readme(true);
}

/// Run every `sh` block of README.md (see the module docs); with `check_widths`, fail on any
/// line of the guide wider than 100 columns.
fn run_readme(check_widths: bool) {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let blocks = sh_blocks(&readme);
    assert!(blocks.len() >= 8, "README has its guide: {blocks:?}");
    assert!(blocks.iter().filter(|b| b.0).count() >= 5, "{blocks:?}");
    assert_eq!(
        blocks[0].1.trim(),
        "cargo run --release -p profil-report -- demo",
        "the main job is the demo"
    );
    let s = TempDir::new("readme");
    let bin = s.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    install_exec(Path::new(BIN), &bin.join("profil-report"));
    install_exec(Path::new(CARGO_PROFIL), &bin.join("cargo-profil"));
    std::fs::write(s.join("cargo-shim"), CARGO_SHIM).unwrap();
    install_exec(&s.join("cargo-shim"), &bin.join("cargo"));
    let work = s.join("work");
    std::fs::create_dir_all(&work).unwrap();
    let real_cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap());
    let mut ran = 0;
    let mut too_wide = Vec::new();
    for (in_guide, block) in &blocks {
        if block.trim() == "cargo test --workspace --locked" {
            continue;
        }
        let out = Command::new("bash")
            .args(["-euo", "pipefail", "-c", block])
            .current_dir(&work)
            .env("PATH", &path)
            .env("REAL_CARGO", &real_cargo)
            .env("PROFIL_CACHE_DIR", s.join("cache"))
            .env_remove("CARGO_TARGET_DIR")
            .env_remove("CARGO_BUILD_TARGET_DIR")
            .env_remove("RUSTFLAGS")
            .env_remove("CARGO_ENCODED_RUSTFLAGS")
            .env_remove("LD_PRELOAD")
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "README block failed:\n{block}\n{}",
            show(&out)
        );
        if check_widths && *in_guide {
            // gprof's own output (standard output of a block that runs it) is gprof's.
            let gprof = block
                .split(|c: char| c.is_whitespace() || c == '|' || c == ';')
                .any(|w| w == "gprof" || w == "--gprof");
            let mut printed = text(&out.stderr);
            if !gprof {
                printed.push_str(&text(&out.stdout));
            }
            for line in printed.lines() {
                if line.chars().count() > 100 {
                    too_wide.push(format!(
                        "{} columns, from\n{block}{line}",
                        line.chars().count()
                    ));
                }
            }
        }
        if ran == 0 {
            // The main job: the demo's report, its designed split and gprof's view.
            let stdout = text(&out.stdout);
            assert_demo_split(&stdout);
            assert!(stdout.contains("GNU gprof's view"), "{stdout}");
        }
        ran += 1;
    }
    assert_eq!(ran, blocks.len() - 1);
    assert!(
        too_wide.is_empty(),
        "lines wider than 100 columns:\n{}",
        too_wide.join("\n\n")
    );
    // The guide's outputs exist where it says.
    for f in [
        "demo/demo.c",
        "prog",
        "prog-linked",
        "one.gmon",
        "prog-report.txt",
    ] {
        assert!(Path::new(&work.join(f)).exists(), "{f}");
    }
    assert_demo_split(&std::fs::read_to_string(work.join("prog-report.txt")).unwrap());
}
