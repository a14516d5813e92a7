//! Builds the runtime artifacts as part of the analyzer's normal build, so that
//! `profil-report runtime-path [--shared]` can print where they are.
//!
//! 1. A nested `cargo rustc -p profil-rt --features artifact` builds the runtime as a staticlib
//!    and a cdylib with a custom profile (fat LTO, one codegen unit, `panic=abort`). It uses its
//!    own target directory under OUT_DIR (sharing the outer one would deadlock on its lock) and
//!    an environment cleared of everything the outer build sets (RUSTFLAGS, the target
//!    directory, wrappers such as clippy-driver), so it builds the same thing whoever runs it.
//! 2. `ld -r -u <entry points>` turns the staticlib into one relocatable object holding only
//!    what the runtime needs; `objcopy --keep-global-symbol` then localizes every other global
//!    (core, compiler_builtins), so the object cannot clash with a Rust program's own copies,
//!    and `--weaken-symbol` makes the entry points that libc.a defines strongly weak, so that
//!    it cannot clash with libc.a either (runtime/src/link.rs).
//! 3. The outputs `profil_rt.o` and `libprofil_rt.so` sit in OUT_DIR. The analyzer embeds their
//!    bytes (`include_bytes!`, see `src/cmd/artifacts.rs`) and writes them to a per-version
//!    cache directory when they are needed, so an installed binary works after this build
//!    directory is gone. Their build paths are also exported as `PROFIL_RT_OBJECT` /
//!    `PROFIL_RT_SHARED` (for tests that compare the two). If anything fails, the reason goes
//!    into `PROFIL_RT_ERROR`, empty placeholder files are written so that `include_bytes!`
//!    still compiles, and the analyzer still builds; every command that needs the runtime then
//!    reports the reason.
//! 4. For the integration tests only: `malformed_cases.rs` in OUT_DIR holds one `#[test]` per
//!    line of `fixtures/malformed/cases.txt`, so that each malformed input is a named test of
//!    its own inside the one test binary (`tests/integration/malformed.rs` includes it).

use std::env;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The runtime's exported entry points (everything else in the object becomes local): its own
/// start/finish, the exec family it wraps (to write the profile before the image is replaced),
/// `setitimer` (to stand aside when the program arms ITIMER_PROF), BSD `moncontrol` and the
/// `profil`/`pcsample` interfaces (runtime/include/profil_rt.h), the signal calls it
/// interposes so that the program sees only its own dispositions and masks
/// (runtime/src/signals.rs), `pthread_create` (runtime/src/threads.rs), and
/// `profil_rt_pthread_create`, which programs linked with the older
/// `-Wl,--wrap=pthread_create,--defsym=…` options call. Then the second names of
/// [`STRONG_IN_LIBC_A`]. Not `dlopen`/`dlmopen`: only the shared object wraps those (an
/// object exporting them would take static libc's `dlopen` out of a static executable, whose
/// wrapper then has nothing to call).
const ENTRY_POINTS: &[&str] = &[
    "profil_rt_start",
    "profil_rt_finish",
    "moncontrol",
    "setitimer",
    "profil",
    "pcsample",
    "profil_rt_hz",
    "profil_rt_set_hz",
    "pthread_create",
    "profil_rt_pthread_create",
    "execve",
    "execv",
    "execvp",
    "execvpe",
    "execl",
    "execlp",
    "execle",
    "fexecve",
    "prctl",
    "syscall",
    "sigaction",
    "signal",
    "bsd_signal",
    "sysv_signal",
    "__sysv_signal",
    "sigset",
    "sigprocmask",
    "pthread_sigmask",
    "sigtimedwait",
    "sigwaitinfo",
    "sigwait",
    "profil_rt_syscall",
    "profil_rt_execv",
    "profil_rt_execl",
    "profil_rt_execle",
    "profil_rt_execlp",
    "profil_rt_execvp",
    "profil_rt_fexecve",
    "profil_rt_sigset",
    "profil_rt___sysv_signal",
];

/// The runtime's entry points that libc.a also defines strongly (`STRONG_IN_LIBC_A`): weak in
/// the object, each with a strong second name `profil_rt_<name>`, so that a static link that
/// read libc.a's first keeps libc's without a clash, and reached there through the linker
/// options `profil-report link-args` prints. From runtime/src/link.rs itself (it uses nothing
/// of its crate; the runtime is not a build dependency of the analyzer).
#[path = "../runtime/src/link.rs"]
#[allow(dead_code, rustdoc::broken_intra_doc_links)]
mod runtime_link;
use runtime_link::STRONG_IN_LIBC_A;

fn main() {
    let manifest_dir =
        PathBuf::from(env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    let root = manifest_dir
        .parent()
        .expect("analyzer/ lives in the workspace root")
        .to_path_buf();
    let out_dir = PathBuf::from(env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    for p in [
        "runtime/src",
        "runtime/Cargo.toml",
        "crates/gmon/src",
        "crates/gmon/Cargo.toml",
        "Cargo.lock",
        "fixtures/malformed/cases.txt",
    ] {
        println!("cargo:rerun-if-changed={}", root.join(p).display());
    }
    println!("cargo:rerun-if-env-changed=PROFIL_RT_SKIP_BUILD");
    malformed_cases(&root.join("fixtures/malformed/cases.txt"), &out_dir);

    let result = if env::var_os("PROFIL_RT_SKIP_BUILD").is_some() {
        Err("the runtime build was skipped (PROFIL_RT_SKIP_BUILD is set)".to_string())
    } else {
        build(&root, &out_dir)
    };
    match result {
        Ok((object, shared)) => {
            println!("cargo:rustc-env=PROFIL_RT_OBJECT={}", object.display());
            println!("cargo:rustc-env=PROFIL_RT_SHARED={}", shared.display());
            println!("cargo:rustc-env=PROFIL_RT_ERROR=");
        }
        Err(e) => {
            println!("cargo:warning=profil-rt artifacts not built: {e}");
            for name in ["profil_rt.o", "libprofil_rt.so"] {
                // Empty placeholders keep `include_bytes!` compiling; an empty artifact is never
                // handed out (the analyzer checks PROFIL_RT_ERROR first).
                let _ = std::fs::remove_file(out_dir.join(name));
                std::fs::write(out_dir.join(name), b"").expect("write to OUT_DIR");
            }
            println!("cargo:rustc-env=PROFIL_RT_OBJECT=");
            println!("cargo:rustc-env=PROFIL_RT_SHARED=");
            println!("cargo:rustc-env=PROFIL_RT_ERROR={}", e.replace('\n', " "));
        }
    }
}

/// Write `OUT_DIR/malformed_cases.rs`: for each `ROLE FILE` line of `cases` (see that file),
/// `#[test] fn <role>_<file>() { check(ROLE, "FILE") }`, the name made of the line's letters
/// and digits (others become `_`; a repeated name gets a numeric suffix). An unreadable list
/// gives no tests; the integration test that counts the cases then fails.
fn malformed_cases(cases: &Path, out_dir: &Path) {
    let text = std::fs::read_to_string(cases).unwrap_or_default();
    let mut code = String::new();
    let mut seen = std::collections::HashSet::new();
    for line in text.lines().map(str::trim) {
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let mut words = line.split_whitespace();
        let (Some(role), Some(file)) = (words.next(), words.next()) else {
            continue;
        };
        let variant = match role {
            "gmon" => "Gmon",
            "exe" => "Exe",
            _ => continue,
        };
        let base: String = format!("{role}_{file}")
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() {
                    c.to_ascii_lowercase()
                } else {
                    '_'
                }
            })
            .collect();
        let mut name = base.clone();
        let mut n = 2;
        while !seen.insert(name.clone()) {
            name = format!("{base}_{n}");
            n += 1;
        }
        code.push_str(&format!(
            "#[test]\nfn {name}() {{\n    super::run_case(super::Role::{variant}, {file:?});\n}}\n"
        ));
    }
    std::fs::write(out_dir.join("malformed_cases.rs"), code).expect("write to OUT_DIR");
}

fn build(root: &Path, out_dir: &Path) -> Result<(PathBuf, PathBuf), String> {
    let cargo = env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let target_dir = out_dir.join("profil-rt-target");
    let mut cmd = Command::new(&cargo);
    cmd.current_dir(root)
        .args([
            "rustc",
            "-p",
            "profil-rt",
            "--lib",
            "--locked",
            "--features",
            "artifact",
        ])
        .args(["--profile", "profil-rt-artifact"])
        .args([
            "--config",
            "profile.profil-rt-artifact.inherits=\"release\"",
        ])
        .args(["--config", "profile.profil-rt-artifact.lto=\"fat\""])
        .args(["--config", "profile.profil-rt-artifact.codegen-units=1"])
        .args(["--config", "profile.profil-rt-artifact.panic=\"abort\""])
        .args(["--config", "profile.profil-rt-artifact.opt-level=2"])
        .args(["--config", "profile.profil-rt-artifact.debug=0"])
        .args(["--config", "profile.profil-rt-artifact.strip=false"])
        .args(["--crate-type", "staticlib,cdylib"])
        .arg("--target-dir")
        .arg(&target_dir);
    scrub_environment(&mut cmd);
    let output = cmd
        .output()
        .map_err(|e| format!("cannot run {}: {e}", Path::new(&cargo).display()))?;
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr);
        let tail: Vec<&str> = stderr.lines().rev().take(15).collect();
        let tail: Vec<&str> = tail.into_iter().rev().collect();
        return Err(format!(
            "nested cargo build failed ({}):\n{}",
            output.status,
            tail.join("\n")
        ));
    }
    let built = target_dir.join("profil-rt-artifact");
    let staticlib = built.join("libprofil_rt.a");
    let cdylib = built.join("libprofil_rt.so");

    let relocatable = out_dir.join("profil_rt.r.o");
    let mut ld = Command::new("ld");
    ld.arg("-r").arg("-o").arg(&relocatable);
    for sym in ENTRY_POINTS {
        ld.arg("-u").arg(sym);
    }
    ld.arg(&staticlib);
    run(&mut ld)?;

    let object = out_dir.join("profil_rt.o");
    let mut objcopy = Command::new("objcopy");
    for sym in ENTRY_POINTS {
        objcopy.arg(format!("--keep-global-symbol={sym}"));
    }
    for sym in STRONG_IN_LIBC_A {
        objcopy.arg(format!("--weaken-symbol={sym}"));
    }
    objcopy.arg(&relocatable).arg(&object);
    run(&mut objcopy)?;

    let shared = out_dir.join("libprofil_rt.so");
    std::fs::copy(&cdylib, &shared)
        .map_err(|e| format!("cannot copy {}: {e}", cdylib.display()))?;
    Ok((object, shared))
}

/// Remove what the outer build put in the environment, so the nested build is the same
/// whether the outer one is `cargo build`, `cargo test`, `cargo clippy` or has RUSTFLAGS.
fn scrub_environment(cmd: &mut Command) {
    const KEEP: &[&str] = &["CARGO_HOME", "CARGO_NET_OFFLINE"];
    for (key, _) in env::vars_os() {
        let Some(key) = key.to_str() else { continue };
        let cargo_var = key.starts_with("CARGO_")
            && !KEEP.contains(&key)
            && !key.starts_with("CARGO_REGISTRIES_")
            && !key.starts_with("CARGO_HTTP_")
            && !key.starts_with("CARGO_NET_");
        let build_var = matches!(
            key,
            "RUSTFLAGS"
                | "RUSTDOCFLAGS"
                | "RUSTC_WRAPPER"
                | "RUSTC_WORKSPACE_WRAPPER"
                | "RUSTC_LINKER"
                | "TARGET"
                | "HOST"
                | "OUT_DIR"
                | "PROFILE"
                | "OPT_LEVEL"
                | "DEBUG"
                | "NUM_JOBS"
                | "CARGO"
        );
        if cargo_var || build_var {
            cmd.env_remove(key);
        }
    }
}

fn run(cmd: &mut Command) -> Result<(), String> {
    let output = cmd
        .output()
        .map_err(|e| format!("cannot run {:?}: {e}", cmd.get_program()))?;
    if output.status.success() {
        Ok(())
    } else {
        Err(format!(
            "{:?} failed ({}): {}",
            cmd.get_program(),
            output.status,
            String::from_utf8_lossy(&output.stderr).trim()
        ))
    }
}
