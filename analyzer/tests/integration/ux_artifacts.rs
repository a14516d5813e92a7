//! The runtime artifacts embedded in `profil-report`: `runtime-path [--shared]` and `link-args`
//! write them to the per-version cache and print where, from a copy of the binary far from its
//! build directory (as after `cargo install`), and repair a damaged cache.

use crate::ux_support;

use std::path::{Path, PathBuf};
use std::process::Command;
use ux_support::*;

/// A copy of the binary in `dir` (an "installed" profil-report, away from target/).
fn installed(dir: &Path) -> PathBuf {
    let bin = dir.join("bin/profil-report");
    std::fs::create_dir_all(bin.parent().unwrap()).unwrap();
    install_exec(Path::new(BIN), &bin);
    bin
}

fn clean_env(cmd: &mut Command) -> &mut Command {
    cmd.env_remove("PROFIL_CACHE_DIR")
        .env_remove("XDG_CACHE_HOME")
}

fn elf_type(p: &Path) -> u16 {
    let d = std::fs::read(p).unwrap();
    assert_eq!(&d[..4], b"\x7fELF", "{}", p.display());
    u16::from_le_bytes([d[16], d[17]])
}

#[test]
fn installed_binary_writes_the_cache_under_xdg_cache_home() {
    let s = TempDir::new("xdg");
    let bin = installed(&s.0);
    let cache = s.join("cache");
    let run = |args: &[&str]| {
        let out = output_retrying(
            clean_env(&mut Command::new(&bin))
                .args(args)
                .env("XDG_CACHE_HOME", &cache)
                .current_dir(&s.0),
        );
        assert!(out.status.success(), "{}", show(&out));
        PathBuf::from(text(&out.stdout).trim_end())
    };
    let obj = run(&["runtime-path"]);
    let so = run(&["runtime-path", "--shared"]);
    let root = cache.join("profil-rs");
    assert!(obj.starts_with(&root), "{}", obj.display());
    assert_eq!(obj.parent(), so.parent());
    let dir = obj
        .parent()
        .unwrap()
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    assert!(
        dir.starts_with(concat!(env!("CARGO_PKG_VERSION"), "-")) && dir.len() > 17,
        "versioned, hashed directory name: {dir}"
    );
    assert_eq!(elf_type(&obj), 1, "profil_rt.o is relocatable");
    assert_eq!(elf_type(&so), 3, "libprofil_rt.so is a shared object");
    let nm = Command::new("nm").arg(&obj).output().unwrap();
    assert!(
        text(&nm.stdout).contains(" T profil_rt_start"),
        "{}",
        show(&nm)
    );

    // Damaged (truncated) → rewritten in place, same path, same bytes as before.
    let good = std::fs::read(&obj).unwrap();
    std::fs::write(&obj, &good[..good.len() / 2]).unwrap();
    assert_eq!(run(&["runtime-path"]), obj);
    assert_eq!(std::fs::read(&obj).unwrap(), good);
    // Removed → recreated.
    std::fs::remove_dir_all(&root).unwrap();
    assert_eq!(run(&["runtime-path", "--shared"]), so);
    assert!(so.is_file());

    let words = run(&["link-args"]);
    assert_eq!(
        words.to_string_lossy(),
        format!(
            "-C link-arg={} -C link-arg={}",
            obj.display(),
            profil_rt::link::LINK_FLAGS
        )
    );
    let words = run(&["link-args", "--cc"]);
    assert_eq!(
        words.to_string_lossy(),
        format!("{} {}", obj.display(), profil_rt::link::LINK_FLAGS)
    );
    // The README links C programs with the same words.
    let readme = std::fs::read_to_string(ux_support::root().join("README.md")).unwrap();
    assert!(readme.contains("$(profil-report link-args --cc)"));
}

#[test]
fn home_cache_and_explicit_cache_dir() {
    let s = TempDir::new("home");
    let bin = installed(&s.0);
    let out = output_retrying(
        clean_env(&mut Command::new(&bin))
            .arg("runtime-path")
            .env("HOME", s.join("home")),
    );
    assert!(out.status.success(), "{}", show(&out));
    assert!(
        text(&out.stdout).starts_with(&format!("{}/", s.join("home/.cache/profil-rs").display()))
    );

    let out = output_retrying(
        Command::new(&bin)
            .arg("runtime-path")
            .env("PROFIL_CACHE_DIR", s.join("explicit"))
            .env("XDG_CACHE_HOME", s.join("ignored")),
    );
    assert!(out.status.success(), "{}", show(&out));
    assert!(text(&out.stdout).starts_with(&format!("{}/", s.join("explicit").display())));
    assert!(!s.join("ignored").exists());
}

#[test]
fn unwritable_cache_and_spaces_are_clear_errors() {
    let s = TempDir::new("bad");
    std::fs::write(s.join("file"), b"").unwrap();
    let out = Command::new(BIN)
        .arg("runtime-path")
        .env("PROFIL_CACHE_DIR", s.join("file/sub"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", show(&out));
    let err = text(&out.stderr);
    assert!(
        err.starts_with("profil-report: runtime-path: cannot write the runtime to the cache")
            && err.contains("PROFIL_CACHE_DIR")
            && err.lines().count() == 1,
        "{err}"
    );

    let out = Command::new(BIN)
        .arg("link-args")
        .env("PROFIL_CACHE_DIR", s.join("with space"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", show(&out));
    assert!(text(&out.stderr).contains("whitespace"), "{}", show(&out));
}

#[test]
fn link_args_link_a_rust_program() {
    // The printed words, given to rustc as RUSTFLAGS would be, produce a profiled program.
    let s = TempDir::new("rustc");
    let out = Command::new(BIN).arg("link-args").output().unwrap();
    assert!(out.status.success(), "{}", show(&out));
    let words = text(&out.stdout);
    std::fs::write(
        s.join("p.rs"),
        "fn main() { let mut x = 1u64; for i in 0..50_000_000u64 { x = std::hint::black_box(x.wrapping_mul(3) ^ i); } println!(\"{x}\"); }",
    )
    .unwrap();
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let out = Command::new(rustc)
        .args(words.split_whitespace())
        .args(["-O", "-o"])
        .arg(s.join("p"))
        .arg(s.join("p.rs"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", show(&out));
    let out = output_retrying(Command::new(s.join("p")).current_dir(&s.0));
    assert!(out.status.success(), "{}", show(&out));
    assert!(
        s.join("gmon.out").is_file(),
        "the linked-in runtime wrote gmon.out"
    );
}
