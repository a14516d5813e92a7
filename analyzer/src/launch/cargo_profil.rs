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
//!       -C force-frame-pointers=yes -C strip=none
//! ```
//!
//! plus [`FRAME_POINTERS`] for every crate (dependencies and the final crate: the runtime's
//! sampled call stacks are walked by frame pointers), appended to the user's
//! `CARGO_ENCODED_RUSTFLAGS` or `RUSTFLAGS` when one is set, else given as `--config
//! build.rustflags=[..]`, which cargo joins to the config files' `[build] rustflags`
//! ([`frame_pointer_flags`]). Dependencies are then built once more, for the profiled target
//! only.
//!
//! (`-C strip=none`: a Cargo profile with `strip = true` would leave no symbols to name the
//! samples by.)
//!
//! * `cargo rustc` gives the extra `-C link-arg` to the final binary only: dependencies are
//!   linked into it but carry no runtime of their own, build scripts and proc macros (built
//!   for the host, untouched by rustflags under `--target`) are neither rebuilt nor
//!   profiled, and the user's own `RUSTFLAGS`, `CARGO_ENCODED_RUSTFLAGS` and `[build]
//!   rustflags` still apply (with frame pointers added, above).
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

use super::run::{self, Launch};
use crate::cmd::artifacts::{self, Kind};
use crate::{Error, Result};

/// Options of `cargo profil`.
#[derive(clap::Args, Debug, Default)]
pub struct Args {
    /// The binary to build and run (default: the package's only one, or its default-run).
    #[arg(long, value_name = "NAME")]
    pub bin: Option<String>,
    /// Build and run this example instead of a binary.
    #[arg(long, value_name = "NAME", conflicts_with = "bin")]
    pub example: Option<String>,
    /// The package (default: the one in the current directory).
    #[arg(short = 'p', long, value_name = "SPEC")]
    pub package: Option<String>,
    /// Build with the release profile.
    #[arg(long)]
    pub release: bool,
    /// Build with this cargo profile (passed to cargo as `--profile`).
    #[arg(
        long = "profile",
        value_name = "PROFILE-NAME",
        conflicts_with = "release"
    )]
    pub cargo_profile: Option<String>,
    /// Features to activate (passed to cargo; repeatable, comma- or space-separated).
    #[arg(short = 'F', long, value_name = "FEATURES")]
    pub features: Vec<String>,
    /// Activate all available features (passed to cargo).
    #[arg(long)]
    pub all_features: bool,
    /// Do not activate the `default` feature (passed to cargo).
    #[arg(long)]
    pub no_default_features: bool,
    /// Path to Cargo.toml (passed to cargo; the package is chosen from its directory).
    #[arg(long, value_name = "PATH")]
    pub manifest_path: Option<PathBuf>,
    /// The rate, and where the profile and report go.
    #[command(flatten)]
    pub profile: run::ProfileOptions,
    /// Arguments for the program (after `--`).
    #[arg(last = true, value_name = "ARGS")]
    pub args: Vec<OsString>,
}

fn cargo() -> OsString {
    std::env::var_os("CARGO")
        .filter(|v| !v.is_empty())
        .unwrap_or_else(|| OsString::from("cargo"))
}

/// The rustc flag that keeps frame pointers (the runtime walks stacks by them).
pub const FRAME_POINTERS: &str = "-Cforce-frame-pointers=yes";

/// How `cargo profil` adds [`FRAME_POINTERS`] to every crate of the build.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FramePointers {
    /// Set this environment variable to this value (the user's flags, then ours).
    Env(&'static str, OsString),
    /// Pass `--config` with this value.
    Config(String),
}

/// Frame pointers for every crate without dropping the user's own flags. Cargo takes its
/// flags from the first of `CARGO_ENCODED_RUSTFLAGS`, `RUSTFLAGS`, `target.<triple>.rustflags`
/// and `build.rustflags` that is set: so ours are appended to whichever variable is set (even
/// empty), and otherwise given as `--config build.rustflags=[..]`, which cargo joins to the
/// `[build] rustflags` of the user's config files. (A config with `target.<triple>.rustflags`
/// wins over `build.rustflags`: the user's flags then apply unchanged, and the final crate
/// still gets frame pointers from the `-C force-frame-pointers=yes` after `--`.)
pub fn frame_pointer_flags(
    encoded: Option<&std::ffi::OsStr>,
    plain: Option<&std::ffi::OsStr>,
) -> FramePointers {
    let join = |v: &std::ffi::OsStr, sep: &str| {
        let mut s = v.to_owned();
        if !v.is_empty() {
            s.push(sep);
        }
        s.push(FRAME_POINTERS);
        s
    };
    match (encoded, plain) {
        (Some(e), _) => FramePointers::Env("CARGO_ENCODED_RUSTFLAGS", join(e, "\x1f")),
        (None, Some(p)) => FramePointers::Env("RUSTFLAGS", join(p, " ")),
        (None, None) => FramePointers::Config(format!("build.rustflags=[\"{FRAME_POINTERS}\"]")),
    }
}

/// The host triple, from `rustc -vV`.
pub fn host_triple() -> Result<String> {
    let rustc = std::env::var_os("RUSTC")
        .filter(|v| !v.is_empty())
        .unwrap_or_else(|| OsString::from("rustc"));
    let out = Command::new(&rustc)
        .arg("-vV")
        .output()
        .map_err(|e| Error::input(format!("cargo profil: cannot run {rustc:?} -vV: {e}")))?;
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .find_map(|l| l.strip_prefix("host: "))
        .map(|h| h.trim().to_string())
        .ok_or_else(|| Error::input(format!("cargo profil: {rustc:?} -vV printed no host line")))
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

/// The package and target to build, from `cargo metadata --no-deps` output.
pub fn choose_target(
    metadata: &json::Value,
    cwd: &Path,
    package: Option<&str>,
    bin: Option<&str>,
    example: Option<&str>,
) -> Result<(String, Target)> {
    let packages = metadata
        .get("packages")
        .and_then(json::Value::as_array)
        .ok_or_else(|| Error::input("cargo profil: `cargo metadata` printed no packages"))?;
    struct Pkg<'a> {
        name: &'a str,
        dir: PathBuf,
        bins: Vec<&'a str>,
        examples: Vec<&'a str>,
        default_run: Option<&'a str>,
    }
    let pkgs: Vec<Pkg<'_>> = packages
        .iter()
        .filter_map(|p| {
            let name = p.get("name")?.as_str()?;
            let dir = Path::new(p.get("manifest_path")?.as_str()?)
                .parent()?
                .to_owned();
            let targets = p.get("targets")?.as_array()?;
            let of_kind = |kind: &str| -> Vec<&str> {
                targets
                    .iter()
                    .filter(|t| {
                        t.get("kind")
                            .and_then(json::Value::as_array)
                            .is_some_and(|k| k.iter().any(|k| k.as_str() == Some(kind)))
                    })
                    .filter_map(|t| t.get("name")?.as_str())
                    .collect()
            };
            let bins = of_kind("bin");
            let examples = of_kind("example");
            let default_run = p.get("default_run").and_then(json::Value::as_str);
            Some(Pkg {
                name,
                dir,
                bins,
                examples,
                default_run,
            })
        })
        .collect();
    let pkg = if let Some(spec) = package {
        pkgs.iter()
            .find(|p| p.name == spec)
            .ok_or_else(|| Error::input(format!("cargo profil: no package `{spec}` here")))?
    } else if let Some(p) = pkgs
        .iter()
        .filter(|p| cwd.starts_with(&p.dir))
        .max_by_key(|p| p.dir.components().count())
    {
        p
    } else if let Some(b) = bin {
        pkgs.iter().find(|p| p.bins.contains(&b)).ok_or_else(|| {
            Error::input(format!("cargo profil: no binary `{b}` in this workspace"))
        })?
    } else if let Some(e) = example {
        pkgs.iter()
            .find(|p| p.examples.contains(&e))
            .ok_or_else(|| {
                Error::input(format!("cargo profil: no example `{e}` in this workspace"))
            })?
    } else {
        let with_bins: Vec<&Pkg<'_>> = pkgs.iter().filter(|p| !p.bins.is_empty()).collect();
        match with_bins.len() {
            1 => with_bins[0],
            0 => return Err(Error::input("cargo profil: this workspace has no binaries")),
            _ => {
                let names: Vec<&str> = with_bins.iter().map(|p| p.name).collect();
                return Err(Error::input(format!(
                    "cargo profil: several packages have binaries ({}): choose one with -p",
                    names.join(", ")
                )));
            }
        }
    };
    if let Some(e) = example {
        if !pkg.examples.contains(&e) {
            return Err(Error::input(format!(
                "cargo profil: package `{}` has no example `{e}` (it has: {})",
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
                "cargo profil: package `{}` has no binary `{b}` (it has: {})",
                pkg.name,
                pkg.bins.join(", ")
            )))
        }
        None => match (pkg.bins.as_slice(), pkg.default_run) {
            (_, Some(d)) => d,
            ([one], None) => one,
            ([], None) => {
                return Err(Error::input(format!(
                    "cargo profil: package `{}` has no binary to run (a library? profile a \
                     binary or an example that uses it)",
                    pkg.name
                )))
            }
            (many, None) => {
                return Err(Error::input(format!(
                    "cargo profil: package `{}` has several binaries ({}): choose one with --bin",
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
        .filter_map(|l| json::parse(l).ok())
        .filter(|m| m.get("reason").and_then(json::Value::as_str) == Some("compiler-artifact"))
        .filter(|m| {
            m.get("target")
                .and_then(|t| t.get("name"))
                .and_then(json::Value::as_str)
                == Some(bin)
        })
        .filter_map(|m| m.get("executable")?.as_str().map(PathBuf::from))
        .next_back()
}

impl Args {
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
pub fn run(args: &Args, out: &mut impl Write, err: &mut impl Write) -> Result<u8> {
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
        .map_err(|e| Error::input(format!("cargo profil: cannot run cargo: {e}")))?;
    if !meta.status.success() {
        return Err(Error::input(
            "cargo profil: `cargo metadata` failed (is this a cargo project? see above)",
        ));
    }
    let meta = json::parse(&String::from_utf8_lossy(&meta.stdout))
        .map_err(|e| Error::input(format!("cargo profil: cannot read `cargo metadata`: {e}")))?;
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
    // Frame pointers in every crate, for the runtime's sampled call stacks.
    match frame_pointer_flags(
        std::env::var_os("CARGO_ENCODED_RUSTFLAGS").as_deref(),
        std::env::var_os("RUSTFLAGS").as_deref(),
    ) {
        FramePointers::Env(var, value) => {
            build.env(var, value);
        }
        FramePointers::Config(c) => {
            build.arg("--config").arg(c);
        }
    }
    build
        .arg("--")
        .args(["-C", "force-frame-pointers=yes"])
        .arg("-C")
        .arg(format!("link-arg={}", object.display()))
        // A profile with `strip = true` would leave nothing to name the samples by; the
        // extra arguments come last, so this wins.
        .args(["-C", "strip=none"])
        .stderr(Stdio::inherit());
    writeln!(
        err,
        "cargo profil: building `{bin}` ({package}) for {host} with the runtime linked in"
    )?;
    let built = build
        .output()
        .map_err(|e| Error::input(format!("cargo profil: cannot run cargo: {e}")))?;
    if !built.status.success() {
        return Err(Error::input(format!(
            "cargo profil: the build of `{bin}` failed (see cargo's messages above)"
        )));
    }
    let exe = executable_from_messages(&String::from_utf8_lossy(&built.stdout), bin).ok_or_else(
        || {
            Error::input(format!(
                "cargo profil: cargo reported no executable for `{bin}`"
            ))
        },
    )?;
    let launch = Launch {
        arg0: exe.clone().into_os_string(),
        program: exe,
        args: args.args.clone(),
        preload: false,
        hz: args.profile.hz,
    };
    args.profile.profile_and_report(&launch, out, err)
}

/// Just enough JSON to read cargo's output: a strict parser with a depth limit.
pub mod json {
    use std::collections::BTreeMap;

    /// A JSON value.
    #[derive(Debug, Clone, PartialEq)]
    pub enum Value {
        /// `null`.
        Null,
        /// `true` / `false`.
        Bool(bool),
        /// A number.
        Number(f64),
        /// A string.
        String(String),
        /// An array.
        Array(Vec<Value>),
        /// An object.
        Object(BTreeMap<String, Value>),
    }

    impl Value {
        /// Member of an object.
        pub fn get(&self, key: &str) -> Option<&Value> {
            match self {
                Value::Object(m) => m.get(key),
                _ => None,
            }
        }
        /// As a string.
        pub fn as_str(&self) -> Option<&str> {
            match self {
                Value::String(s) => Some(s),
                _ => None,
            }
        }
        /// As an array.
        pub fn as_array(&self) -> Option<&[Value]> {
            match self {
                Value::Array(a) => Some(a),
                _ => None,
            }
        }
    }

    const MAX_DEPTH: usize = 128;

    /// Parse one JSON text.
    pub fn parse(text: &str) -> Result<Value, String> {
        let mut p = Parser {
            s: text.as_bytes(),
            i: 0,
        };
        let v = p.value(0)?;
        p.ws();
        if p.i != p.s.len() {
            return Err(format!("trailing characters at byte {}", p.i));
        }
        Ok(v)
    }

    struct Parser<'a> {
        s: &'a [u8],
        i: usize,
    }

    impl Parser<'_> {
        fn ws(&mut self) {
            while matches!(self.s.get(self.i), Some(b' ' | b'\t' | b'\n' | b'\r')) {
                self.i += 1;
            }
        }
        fn err<T>(&self, what: &str) -> Result<T, String> {
            Err(format!("{what} at byte {}", self.i))
        }
        fn eat(&mut self, lit: &str) -> Result<(), String> {
            if self.s[self.i..].starts_with(lit.as_bytes()) {
                self.i += lit.len();
                Ok(())
            } else {
                self.err("unexpected character")
            }
        }
        fn value(&mut self, depth: usize) -> Result<Value, String> {
            if depth > MAX_DEPTH {
                return self.err("nesting too deep");
            }
            self.ws();
            match self.s.get(self.i) {
                Some(b'n') => self.eat("null").map(|_| Value::Null),
                Some(b't') => self.eat("true").map(|_| Value::Bool(true)),
                Some(b'f') => self.eat("false").map(|_| Value::Bool(false)),
                Some(b'"') => self.string().map(Value::String),
                Some(b'[') => {
                    self.i += 1;
                    let mut items = Vec::new();
                    self.ws();
                    if self.s.get(self.i) == Some(&b']') {
                        self.i += 1;
                        return Ok(Value::Array(items));
                    }
                    loop {
                        items.push(self.value(depth + 1)?);
                        self.ws();
                        match self.s.get(self.i) {
                            Some(b',') => self.i += 1,
                            Some(b']') => {
                                self.i += 1;
                                return Ok(Value::Array(items));
                            }
                            _ => return self.err("expected , or ]"),
                        }
                    }
                }
                Some(b'{') => {
                    self.i += 1;
                    let mut map = BTreeMap::new();
                    self.ws();
                    if self.s.get(self.i) == Some(&b'}') {
                        self.i += 1;
                        return Ok(Value::Object(map));
                    }
                    loop {
                        self.ws();
                        if self.s.get(self.i) != Some(&b'"') {
                            return self.err("expected a key");
                        }
                        let k = self.string()?;
                        self.ws();
                        if self.s.get(self.i) != Some(&b':') {
                            return self.err("expected :");
                        }
                        self.i += 1;
                        let v = self.value(depth + 1)?;
                        map.insert(k, v);
                        self.ws();
                        match self.s.get(self.i) {
                            Some(b',') => self.i += 1,
                            Some(b'}') => {
                                self.i += 1;
                                return Ok(Value::Object(map));
                            }
                            _ => return self.err("expected , or }"),
                        }
                    }
                }
                Some(b'-' | b'0'..=b'9') => {
                    let start = self.i;
                    while matches!(
                        self.s.get(self.i),
                        Some(b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9')
                    ) {
                        self.i += 1;
                    }
                    std::str::from_utf8(&self.s[start..self.i])
                        .ok()
                        .and_then(|t| t.parse().ok())
                        .map(Value::Number)
                        .map_or_else(|| self.err("bad number"), Ok)
                }
                _ => self.err("unexpected character"),
            }
        }
        fn hex4(&mut self) -> Result<u32, String> {
            let h = self
                .s
                .get(self.i..self.i + 4)
                .and_then(|h| std::str::from_utf8(h).ok())
                .and_then(|h| u32::from_str_radix(h, 16).ok());
            match h {
                Some(v) => {
                    self.i += 4;
                    Ok(v)
                }
                None => self.err("bad \\u escape"),
            }
        }
        fn string(&mut self) -> Result<String, String> {
            self.i += 1; // opening quote
            let mut out = String::new();
            loop {
                let start = self.i;
                while !matches!(self.s.get(self.i), None | Some(b'"' | b'\\')) {
                    self.i += 1;
                }
                match std::str::from_utf8(&self.s[start..self.i]) {
                    Ok(t) => out.push_str(t),
                    Err(_) => return self.err("invalid UTF-8"),
                }
                match self.s.get(self.i) {
                    Some(b'"') => {
                        self.i += 1;
                        return Ok(out);
                    }
                    Some(b'\\') => {
                        self.i += 1;
                        let c = self.s.get(self.i).copied();
                        self.i += 1;
                        match c {
                            Some(b'"') => out.push('"'),
                            Some(b'\\') => out.push('\\'),
                            Some(b'/') => out.push('/'),
                            Some(b'b') => out.push('\u{8}'),
                            Some(b'f') => out.push('\u{c}'),
                            Some(b'n') => out.push('\n'),
                            Some(b'r') => out.push('\r'),
                            Some(b't') => out.push('\t'),
                            Some(b'u') => {
                                let mut cp = self.hex4()?;
                                if (0xd800..0xdc00).contains(&cp)
                                    && self.s[self.i..].starts_with(b"\\u")
                                {
                                    self.i += 2;
                                    let lo = self.hex4()?;
                                    cp = 0x10000
                                        + ((cp - 0xd800) << 10)
                                        + (lo.wrapping_sub(0xdc00) & 0x3ff);
                                }
                                out.push(char::from_u32(cp).unwrap_or('\u{fffd}'));
                            }
                            _ => return self.err("bad escape"),
                        }
                    }
                    _ => return self.err("unterminated string"),
                }
            }
        }
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        #[test]
        fn parses_cargo_like_messages() {
            let v = parse(
                r#"{"reason":"compiler-artifact","target":{"name":"a b","kind":["bin"]},"executable":"/t/a\"b\\c\u00e9","n":[1,-2.5e3,true,null]}"#,
            )
            .unwrap();
            assert_eq!(v.get("executable").unwrap().as_str(), Some("/t/a\"b\\cé"));
            assert_eq!(
                v.get("n").unwrap().as_array().unwrap()[1],
                Value::Number(-2500.0)
            );
            assert!(parse("{\"a\":1,}").is_err());
            assert!(parse("[1] x").is_err());
            assert!(parse(&"[".repeat(1000)).is_err());
            assert!(parse("\"abc").is_err());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frame_pointers_are_added_to_the_users_flags() {
        use std::ffi::OsStr;
        let os = |s: &str| OsString::from(s);
        assert_eq!(
            frame_pointer_flags(
                Some(OsStr::new("-Ctarget-cpu=native\x1f-g")),
                Some(OsStr::new("-O"))
            ),
            FramePointers::Env(
                "CARGO_ENCODED_RUSTFLAGS",
                os("-Ctarget-cpu=native\x1f-g\x1f-Cforce-frame-pointers=yes")
            )
        );
        assert_eq!(
            frame_pointer_flags(Some(OsStr::new("")), None),
            FramePointers::Env("CARGO_ENCODED_RUSTFLAGS", os("-Cforce-frame-pointers=yes"))
        );
        assert_eq!(
            frame_pointer_flags(None, Some(OsStr::new("-C target-cpu=native"))),
            FramePointers::Env(
                "RUSTFLAGS",
                os("-C target-cpu=native -Cforce-frame-pointers=yes")
            )
        );
        assert_eq!(
            frame_pointer_flags(None, None),
            FramePointers::Config("build.rustflags=[\"-Cforce-frame-pointers=yes\"]".into())
        );
    }

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
        let m = json::parse(META).unwrap();
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
