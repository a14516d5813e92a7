//! `cargo profil [--bin NAME | --example NAME] [-p PACKAGE] [--release] [--hz N] [--out FILE] [--report FILE]
//! [-- ARGS...]`: build the current cargo package with the runtime linked in, run it, and print
//! its report. The `cargo-profil` binary (installed next to `profil-report` by
//! `cargo install --path analyzer`) is a thin argument parser around [`run()`].
//!
//! # How it builds
//!
//! ```text
//! cargo rustc -p PACKAGE (--bin NAME | --example NAME) --target <host triple> [--release]
//!       --message-format=json-render-diagnostics -- -C link-arg=<cached profil_rt.o>
//!       -C link-arg=<LINK_FLAGS> -C strip=none [-C debuginfo=line-tables-only]
//! ```
//!
//! and nothing else: the user's `RUSTFLAGS`, `CARGO_ENCODED_RUSTFLAGS` and config apply as they
//! are. No frame pointers are forced: the runtime walks the sampled stacks with the call frame
//! information every crate carries, and measured against `perf --call-graph dwarf` a release
//! build without frame pointers came out as exact as one with them (top-10 inclusive error
//! 0.4 against 0.1 points, both within sampling noise; BENCHMARKS.md, issue 22), while forcing
//! them cost the program time (about 3%, noisy) and rebuilt every dependency with flags the
//! user did not choose.
//!
//! (The link arguments are those of `profil-report link-args`: the object and
//! [`crate::cmd::link_args::LINK_FLAGS`], the same for a dynamic and a `+crt-static` package,
//! whose `target-feature` in the user's flags or config still applies.
//! `-C strip=none`: a Cargo profile with `strip = true` would leave no symbols to name the
//! samples by. `-C debuginfo=line-tables-only`, with `--release` only: cargo's release profile
//! has `debug = false`, which leaves the program's own code without line tables, so its rows
//! would have no location and `--lines`/`--inline` nothing of its own to show; the building
//! line says so. It is the last `-C debuginfo`, so it also replaces a fuller `debug` setting
//! of the release profile for this one binary, which costs the profile nothing; the
//! dependencies keep theirs, and the standard library carries its own line tables.)
//!
//! * `cargo rustc` gives the extra `-C link-arg` to the final binary only: dependencies are
//!   linked into it but carry no runtime of their own, build scripts and proc macros (built
//!   for the host, untouched by rustflags under `--target`) are neither rebuilt nor
//!   profiled, and the user's own `RUSTFLAGS`, `CARGO_ENCODED_RUSTFLAGS` and `[build]
//!   rustflags` still apply.
//! * `--target <host triple>` puts the profiled binary in `target/<triple>/`, away from the
//!   `target/debug` and `target/release` binaries of normal builds, which stay unprofiled.
//! * The relink: cargo does not track files named in link arguments, so a runtime replaced at
//!   the same path would not be relinked. The runtime object's path contains a hash of its
//!   contents ([`crate::cmd::artifacts`]), so a different runtime is a different argument, which
//!   cargo's fingerprint does see; and cargo keeps one artifact per set of `cargo rustc`
//!   arguments, so alternating with plain `cargo rustc` builds never hands back a stale link.
//!
//! The binary is found from cargo's JSON messages (`compiler-artifact` with an `executable`),
//! the package and binary from `cargo metadata --no-deps` (the package whose directory holds
//! the current directory, else the workspace's only package with binaries; its `default-run`
//! if it has several binaries). Then it runs like `profil-report run` (see [`super::run`]):
//! in the current directory, stdin/stdout/stderr passed through, the report on stderr unless
//! `--report` says otherwise, exit status passed through.

use std::ffi::OsString;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde::Deserialize;

use super::run::{self, Launch};
use crate::cmd::artifacts::{self, Kind};
use crate::{Error, Result};

/// What `cargo profil` is asked (the `cargo-profil` binary builds it from its command line).
#[derive(Debug, Default)]
pub struct Options {
    /// The binary to build and run (None: the package's only one, or its default-run).
    pub bin: Option<String>,
    /// Build and run this example instead of a binary.
    pub example: Option<String>,
    /// The package (None: the one in the current directory).
    pub package: Option<String>,
    /// Build with the release profile.
    pub release: bool,
    /// Build with this cargo profile (passed to cargo as `--profile`).
    pub cargo_profile: Option<String>,
    /// Features to activate (passed to cargo; comma- or space-separated).
    pub features: Vec<String>,
    /// Activate all available features (passed to cargo).
    pub all_features: bool,
    /// Do not activate the `default` feature (passed to cargo).
    pub no_default_features: bool,
    /// Path to Cargo.toml (passed to cargo; the package is chosen from its directory).
    pub manifest_path: Option<PathBuf>,
    /// The rate, and where the profile and report go.
    pub profile: run::ProfileOptions,
    /// Arguments for the program.
    pub args: Vec<OsString>,
}

fn cargo() -> OsString {
    std::env::var_os("CARGO")
        .filter(|v| !v.is_empty())
        .unwrap_or_else(|| OsString::from("cargo"))
}

/// The host triple, from `rustc -vV`.
pub fn host_triple() -> Result<String> {
    let rustc = std::env::var_os("RUSTC")
        .filter(|v| !v.is_empty())
        .unwrap_or_else(|| OsString::from("rustc"));
    let out = Command::new(&rustc)
        .arg("-vV")
        .output()
        .map_err(|e| Error::input(format!("cannot run {rustc:?} -vV: {e}")))?;
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .find_map(|l| l.strip_prefix("host: "))
        .map(|h| h.trim().to_string())
        .ok_or_else(|| Error::input(format!("{rustc:?} -vV printed no host line")))
}

/// What to build and run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// `--bin NAME`.
    Bin(String),
    /// `--example NAME`.
    Example(String),
}

impl Target {
    /// The cargo option and the name.
    pub fn cargo_args(&self) -> [&str; 2] {
        match self {
            Target::Bin(n) => ["--bin", n],
            Target::Example(n) => ["--example", n],
        }
    }

    /// The target's name.
    pub fn name(&self) -> &str {
        match self {
            Target::Bin(n) | Target::Example(n) => n,
        }
    }
}

/// What `cargo profil` reads of `cargo metadata --no-deps --format-version 1` (every other
/// field is ignored).
#[derive(Debug, Deserialize)]
pub struct Metadata {
    /// The workspace's packages.
    pub packages: Vec<Package>,
}

/// A package of [`Metadata`].
#[derive(Debug, Deserialize)]
pub struct Package {
    /// Its name.
    pub name: String,
    /// Its `Cargo.toml`.
    pub manifest_path: PathBuf,
    /// Its targets (libraries, binaries, examples, ...).
    pub targets: Vec<CargoTarget>,
    /// `package.default-run`.
    #[serde(default)]
    pub default_run: Option<String>,
}

/// A target of a [`Package`] or of a [`Message`].
#[derive(Debug, Deserialize)]
pub struct CargoTarget {
    /// Its name.
    pub name: String,
    /// `bin`, `example`, `lib`, ...
    #[serde(default)]
    pub kind: Vec<String>,
}

/// What `cargo profil` reads of one of cargo's `--message-format=json` lines.
#[derive(Debug, Deserialize)]
pub struct Message {
    /// `compiler-artifact`, `build-finished`, ...
    pub reason: String,
    /// The target a `compiler-artifact` is of.
    #[serde(default)]
    pub target: Option<CargoTarget>,
    /// The executable it built, if any.
    #[serde(default)]
    pub executable: Option<PathBuf>,
}

/// The package and target to build, from `cargo metadata --no-deps` output.
pub fn choose_target(
    metadata: &Metadata,
    cwd: &Path,
    package: Option<&str>,
    bin: Option<&str>,
    example: Option<&str>,
) -> Result<(String, Target)> {
    struct Pkg<'a> {
        name: &'a str,
        dir: PathBuf,
        bins: Vec<&'a str>,
        examples: Vec<&'a str>,
        default_run: Option<&'a str>,
    }
    let pkgs: Vec<Pkg<'_>> = metadata
        .packages
        .iter()
        .filter_map(|p| {
            let dir = p.manifest_path.parent()?.to_owned();
            let of_kind = |kind: &str| -> Vec<&str> {
                p.targets
                    .iter()
                    .filter(|t| t.kind.iter().any(|k| k == kind))
                    .map(|t| t.name.as_str())
                    .collect()
            };
            Some(Pkg {
                name: &p.name,
                dir,
                bins: of_kind("bin"),
                examples: of_kind("example"),
                default_run: p.default_run.as_deref(),
            })
        })
        .collect();
    let pkg = if let Some(spec) = package {
        pkgs.iter()
            .find(|p| p.name == spec)
            .ok_or_else(|| Error::input(format!("no package `{spec}` here")))?
    } else if let Some(p) = pkgs
        .iter()
        .filter(|p| cwd.starts_with(&p.dir))
        .max_by_key(|p| p.dir.components().count())
    {
        p
    } else if let Some(b) = bin {
        pkgs.iter()
            .find(|p| p.bins.contains(&b))
            .ok_or_else(|| Error::input(format!("no binary `{b}` in this workspace")))?
    } else if let Some(e) = example {
        pkgs.iter()
            .find(|p| p.examples.contains(&e))
            .ok_or_else(|| Error::input(format!("no example `{e}` in this workspace")))?
    } else {
        let with_bins: Vec<&Pkg<'_>> = pkgs.iter().filter(|p| !p.bins.is_empty()).collect();
        match with_bins.len() {
            1 => with_bins[0],
            0 => return Err(Error::input("this workspace has no binaries")),
            _ => {
                let names: Vec<&str> = with_bins.iter().map(|p| p.name).collect();
                return Err(Error::input(format!(
                    "several packages have binaries ({}): choose one with -p",
                    names.join(", ")
                )));
            }
        }
    };
    if let Some(e) = example {
        if !pkg.examples.contains(&e) {
            return Err(Error::input(format!(
                "package `{}` has no example `{e}` (it has: {})",
                pkg.name,
                if pkg.examples.is_empty() {
                    "none".to_string()
                } else {
                    pkg.examples.join(", ")
                }
            )));
        }
        return Ok((pkg.name.to_string(), Target::Example(e.to_string())));
    }
    let bin = match bin {
        Some(b) if pkg.bins.contains(&b) => b,
        Some(b) => {
            return Err(Error::input(format!(
                "package `{}` has no binary `{b}` (it has: {})",
                pkg.name,
                pkg.bins.join(", ")
            )))
        }
        None => match (pkg.bins.as_slice(), pkg.default_run) {
            (_, Some(d)) => d,
            ([one], None) => one,
            ([], None) => {
                return Err(Error::input(format!(
                    "package `{}` has no binary to run (a library? profile a \
                     binary or an example that uses it)",
                    pkg.name
                )))
            }
            (many, None) => {
                return Err(Error::input(format!(
                    "package `{}` has several binaries ({}): choose one with --bin",
                    pkg.name,
                    many.join(", ")
                )))
            }
        },
    };
    Ok((pkg.name.to_string(), Target::Bin(bin.to_string())))
}

/// The executable of binary `bin` among cargo's JSON messages.
pub fn executable_from_messages(messages: &str, bin: &str) -> Option<PathBuf> {
    messages
        .lines()
        .filter_map(|l| serde_json::from_str::<Message>(l).ok())
        .filter(|m| m.reason == "compiler-artifact")
        .filter(|m| m.target.as_ref().is_some_and(|t| t.name == bin))
        .filter_map(|m| m.executable)
        .next_back()
}

impl Options {
    /// The options that go to `cargo rustc` as given.
    pub fn cargo_passthrough(&self) -> Vec<OsString> {
        let mut v: Vec<OsString> = Vec::new();
        if let Some(p) = &self.cargo_profile {
            v.extend(["--profile".into(), p.into()]);
        }
        for f in &self.features {
            v.extend(["--features".into(), f.into()]);
        }
        if self.all_features {
            v.push("--all-features".into());
        }
        if self.no_default_features {
            v.push("--no-default-features".into());
        }
        if let Some(m) = &self.manifest_path {
            v.extend(["--manifest-path".into(), m.into()]);
        }
        v
    }
}

/// Build, run, report. Returns the exit code to leave with (the program's).
pub fn run(args: &Options, out: &mut impl Write, err: &mut impl Write) -> Result<u8> {
    let object = artifacts::materialize(Kind::Object)?;
    let mut package_dir = std::env::current_dir()?;
    let mut metadata = Command::new(cargo());
    metadata.args(["metadata", "--no-deps", "--format-version", "1"]);
    if let Some(m) = &args.manifest_path {
        metadata.arg("--manifest-path").arg(m);
        // The package is the one whose directory holds the manifest.
        let dir = m.parent().filter(|d| !d.as_os_str().is_empty());
        package_dir = package_dir.join(dir.unwrap_or(Path::new(".")));
        package_dir = package_dir.canonicalize().unwrap_or(package_dir);
    }
    let meta = metadata
        .stderr(Stdio::inherit())
        .output()
        .map_err(|e| Error::input(format!("cannot run cargo: {e}")))?;
    if !meta.status.success() {
        return Err(Error::input(
            "`cargo metadata` failed (is this a cargo project? see above)",
        ));
    }
    let meta: Metadata = serde_json::from_slice(&meta.stdout)
        .map_err(|e| Error::input(format!("cannot read `cargo metadata`: {e}")))?;
    let (package, target) = choose_target(
        &meta,
        &package_dir,
        args.package.as_deref(),
        args.bin.as_deref(),
        args.example.as_deref(),
    )?;
    let bin = target.name();
    let host = host_triple()?;
    let mut build = Command::new(cargo());
    build
        .args(["rustc", "-p", &package])
        .args(target.cargo_args())
        .args(["--target", &host])
        .arg("--message-format=json-render-diagnostics");
    if args.release {
        build.arg("--release");
    }
    build.args(args.cargo_passthrough());
    build
        .arg("--")
        .arg("-C")
        .arg(format!("link-arg={}", object.display()))
        .arg("-C")
        .arg(format!("link-arg={}", crate::cmd::link_args::LINK_FLAGS))
        // A profile with `strip = true` would leave nothing to name the samples by; the
        // extra arguments come last, so this wins.
        .args(["-C", "strip=none"]);
    // Cargo's release profile has no line tables (`debug = false`): the program's own lines
    // come from its own crate's, added here (the final crate only: no dependency rebuilt).
    if args.release {
        build.args(["-C", "debuginfo=line-tables-only"]);
    }
    build.stderr(Stdio::inherit());
    writeln!(
        err,
        "{}",
        crate::render::message(
            "",
            &format!(
                "cargo profil: building `{bin}` ({package}) for {host} with the runtime linked \
                 in{}",
                if args.release {
                    " and line tables (-C debuginfo=line-tables-only)"
                } else {
                    ""
                }
            )
        )
    )?;
    let built = build
        .output()
        .map_err(|e| Error::input(format!("cannot run cargo: {e}")))?;
    if !built.status.success() {
        return Err(Error::input(format!(
            "the build of `{bin}` failed (see cargo's messages above)"
        )));
    }
    let exe = executable_from_messages(&String::from_utf8_lossy(&built.stdout), bin)
        .ok_or_else(|| Error::input(format!("cargo reported no executable for `{bin}`")))?;
    let launch = Launch {
        arg0: exe.clone().into_os_string(),
        program: exe,
        args: args.args.clone(),
        preload: false,
        hz: args.profile.hz,
    };
    args.profile.profile_and_report(&launch, out, err)
}

#[cfg(test)]
mod tests {
    use super::*;

    const META: &str = r#"{"packages":[
      {"name":"app","manifest_path":"/w/app/Cargo.toml","default_run":null,
       "targets":[{"name":"app","kind":["bin"]},{"name":"tool","kind":["bin"]},{"name":"applib","kind":["lib"]},{"name":"bench_it","kind":["example"]}]},
      {"name":"one","manifest_path":"/w/one/Cargo.toml","default_run":null,
       "targets":[{"name":"one","kind":["bin"]}]},
      {"name":"lib","manifest_path":"/w/lib/Cargo.toml","default_run":null,
       "targets":[{"name":"lib","kind":["lib"]}]}
    ]}"#;

    #[test]
    fn chooses_package_and_binary_like_cargo_run() {
        let m: Metadata = serde_json::from_str(META).unwrap();
        let c = |cwd: &str, p: Option<&str>, b: Option<&str>| {
            choose_target(&m, Path::new(cwd), p, b, None)
                .map(|(p, t)| (p, t.name().to_string()))
                .map_err(|e| e.to_string())
        };
        assert_eq!(
            c("/w/one/src", None, None).unwrap(),
            ("one".into(), "one".into())
        );
        assert!(c("/w/app", None, None).unwrap_err().contains("--bin"));
        assert_eq!(
            c("/w/app", None, Some("tool")).unwrap(),
            ("app".into(), "tool".into())
        );
        assert!(c("/w/lib", None, None).unwrap_err().contains("no binary"));
        assert!(c("/w", None, None).unwrap_err().contains("-p"));
        assert_eq!(
            c("/w", Some("one"), None).unwrap(),
            ("one".into(), "one".into())
        );
        assert!(c("/w/app", None, Some("nope"))
            .unwrap_err()
            .contains("tool"));
        let e = |cwd: &str, ex: &str| {
            choose_target(&m, Path::new(cwd), None, None, Some(ex)).map_err(|e| e.to_string())
        };
        assert_eq!(
            e("/w/app", "bench_it").unwrap(),
            ("app".into(), Target::Example("bench_it".into()))
        );
        assert_eq!(e("/w", "bench_it").unwrap().0, "app");
        assert!(e("/w/one", "bench_it")
            .unwrap_err()
            .contains("(it has: none)"));
    }

    #[test]
    fn finds_the_executable_in_cargo_messages() {
        let msgs = concat!(
            r#"{"reason":"compiler-artifact","target":{"name":"dep","kind":["lib"]},"executable":null}"#,
            "\n",
            "not json\n",
            r#"{"reason":"compiler-artifact","target":{"name":"app","kind":["bin"]},"executable":"/t/x86/debug/app"}"#,
            "\n",
            r#"{"reason":"build-finished","success":true}"#,
        );
        assert_eq!(
            executable_from_messages(msgs, "app"),
            Some(PathBuf::from("/t/x86/debug/app"))
        );
        assert_eq!(executable_from_messages(msgs, "dep"), None);
    }
}
