//! `profil-report export` and `profil-report diff`, each checked with the real tool that
//! reads the format: `go tool pprof` (Debian's golang-go), valgrind's `callgrind_annotate`,
//! an XML parser for the flame graph, speedscope's published JSON schema.
//!
//! The test program is `fixtures/exports/four.c` (four functions with a 4:3:2:1 split of CPU
//! work), linked with the runtime that `profil-report runtime-path` names, run at test time.
//! A run's length is not assumed: the work is doubled until a run has enough samples.
//!
//! The oracles must be installed: `.ci/run` installs them. When one is missing, a test fails
//! under CI (`CI=true`) and is skipped with a message elsewhere.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::support::{runtime_path, TempDir};
use serde_json::Value;

fn fixture(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../fixtures")
        .join(rel)
}

/// A scratch directory, removed when the test passes.
fn show(o: &Output) -> String {
    format!(
        "{}\n{}{}",
        o.status,
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

fn must(cmd: &mut Command) -> Vec<u8> {
    let o = cmd
        .output()
        .unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e}"));
    assert!(o.status.success(), "{cmd:?} failed: {}", show(&o));
    o.stdout
}

fn ours_ok(dir: &Path, args: &[&str]) -> Vec<u8> {
    must(
        Command::new(env!("CARGO_BIN_EXE_profil-report"))
            .args(args)
            .current_dir(dir),
    )
}

/// Whether `tool` can be started (callgrind_annotate exits 255 even for --help, so the exit
/// status says nothing); when it cannot, fail under CI and skip (false) elsewhere.
fn have(tool: &str, args: &[&str]) -> bool {
    let ok = Command::new(tool).args(args).output().is_ok();
    if !ok {
        let msg = format!("{tool} is not installed (.ci/run installs it)");
        if std::env::var("CI").is_ok_and(|v| v == "true") {
            panic!("{msg}");
        }
        eprintln!("skipped: {msg}");
    }
    ok
}

/// Build four.c with the runtime (`defines` such as `-DWITH_INLINE`) into `dir/exe`.
fn build(dir: &TempDir, exe: &str, defines: &[&str]) -> PathBuf {
    let out = dir.join(exe);
    must(
        Command::new("gcc")
            .args(["-O2", "-g"])
            .args(defines)
            .arg("-o")
            .arg(&out)
            .arg(fixture("exports/four.c"))
            .arg(runtime_path(false)),
    );
    out
}

/// Run `exe UNITS [extra]` in `dir`, keep its profile as `dir/save_as`: the executable's own
/// (`PROFIL_RANGES=exe`; the shared-library case has a test of its own).
///
/// The inlined build (`fouri`) records PCs only: its tests compare the export's one-location
/// stacks with the `--inline` report, which splits histogram bins between inline chains by
/// bytes, where the sampled stacks would give the exact PCs.
fn run(dir: &TempDir, exe: &str, units: u64, extra: &[&str], save_as: &str) -> PathBuf {
    let gmon = dir.join(save_as);
    must(
        Command::new(dir.join(exe))
            .arg(units.to_string())
            .args(extra)
            .current_dir(&dir.0)
            .env("PROFIL_OUT", &gmon)
            .env("PROFIL_RANGES", "exe")
            .env("PROFIL_STACKS", if exe == "fouri" { "0" } else { "1" })
            .env_remove("GMON_OUT_PREFIX")
            .env_remove("PROFIL_HZ"),
    );
    gmon
}

/// The default report's rows with self samples, by name, each with `value(row)`. (Functions
/// only on the sampled stacks, with no self samples, have rows for their totals.)
fn self_rows(report: &Value, value: impl Fn(&Value) -> f64) -> Vec<(String, f64)> {
    report["rows"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["samples"].as_f64().unwrap() > 0.0)
        .map(|r| (r["name"].as_str().unwrap().to_owned(), value(r)))
        .collect()
}

/// Our default report as JSON.
fn report_json(dir: &TempDir, args: &[&str]) -> Value {
    let mut a = vec!["--json"];
    a.extend_from_slice(args);
    serde_json::from_slice(&ours_ok(&dir.0, &a)).expect("report JSON")
}

/// Units of work that give a run of `exe` at least `want` samples: doubled from 10 until it
/// does (at most 8 tries), whatever the machine's speed.
fn units_for(dir: &TempDir, exe: &str, want: u64) -> u64 {
    let mut units = 10;
    for _ in 0..8 {
        let g = run(dir, exe, units, &[], "probe.gmon");
        let total = report_json(dir, &["probe.gmon", exe])["total_samples"]
            .as_u64()
            .unwrap();
        if total >= want {
            return units;
        }
        units *= 2;
        let _ = fs::remove_file(g);
    }
    panic!("{exe} did not reach {want} samples");
}

/// A profiled run of four (inlined or not) with at least 600 samples.
fn profiled(dir: &TempDir, exe: &str, defines: &[&str]) -> PathBuf {
    build(dir, exe, defines);
    let units = units_for(dir, exe, 600);
    run(dir, exe, units, &[], "gmon.out")
}

fn export(dir: &TempDir, to: &str, file: &str, exe: &str) -> PathBuf {
    ours_ok(&dir.0, &["export", "--to", to, "-o", file, "gmon.out", exe]);
    dir.join(file)
}

/// What `go tool pprof ARGS FILE` prints (run in `dir`, its temporary files there).
fn pprof_text(dir: &TempDir, args: &[&str], file: &Path) -> String {
    String::from_utf8(must(
        Command::new("go")
            .arg("tool")
            .arg("pprof")
            .args(args)
            .arg(file)
            .current_dir(&dir.0)
            .env("PPROF_TMPDIR", &dir.0),
    ))
    .unwrap()
}

/// `go tool pprof -top` rows: (name, flat value) in printed order (`-unit=ns` for CPU).
fn pprof_top(dir: &TempDir, file: &Path, extra: &[&str]) -> Vec<(String, f64)> {
    let out = must(
        Command::new("go")
            .args([
                "tool",
                "pprof",
                "-top",
                "-nodefraction=0",
                "-nodecount=1000000",
            ])
            .args(extra)
            .arg(file)
            .current_dir(&dir.0)
            .env("PPROF_TMPDIR", &dir.0),
    );
    let text = String::from_utf8(out).unwrap();
    let mut rows = Vec::new();
    let mut in_table = false;
    // With sampled stacks, callers without self samples are listed with a zero flat value:
    // they are not in the flat profiles compared with.
    let nonzero = |r: &(String, f64)| r.1 != 0.0;
    for line in text.lines() {
        if line.trim_start().starts_with("flat") {
            in_table = true;
            continue;
        }
        if !in_table {
            continue;
        }
        // flat flat% sum% cum cum% name (the name may contain spaces)
        let fields: Vec<&str> = line.split_whitespace().collect();
        assert!(
            fields.len() >= 6,
            "unexpected -top line {line:?} in\n{text}"
        );
        let flat: f64 = fields[0]
            .trim_end_matches("ns")
            .parse()
            .unwrap_or_else(|_| panic!("flat value {:?} in {line:?}", fields[0]));
        rows.push((fields[5..].join(" "), flat));
    }
    rows.retain(nonzero);
    assert!(!rows.is_empty(), "no rows in\n{text}");
    rows
}

/// Both lists are ordered by value, largest first, and name the same functions with the same
/// values within `tol`. Functions with equal values may come in either order (pprof breaks
/// ties by inclusive time, our reports by name), so each run of ties is compared as a set.
fn assert_same_ranking(ours: &[(String, f64)], theirs: &[(String, f64)], tol: f64) {
    let sorted = |v: &[(String, f64)]| v.windows(2).all(|w| w[0].1 >= w[1].1 - tol);
    assert!(sorted(ours), "ours not by value: {ours:?}");
    assert!(sorted(theirs), "theirs not by value: {theirs:?}");
    let canonical = |v: &[(String, f64)]| {
        let mut out: Vec<(String, f64)> = Vec::new();
        let mut group: Vec<(String, f64)> = Vec::new();
        for r in v {
            if group.first().is_some_and(|g| (g.1 - r.1).abs() > tol) {
                group.sort_by(|a, b| a.0.cmp(&b.0));
                out.append(&mut group);
            }
            group.push(r.clone());
        }
        group.sort_by(|a, b| a.0.cmp(&b.0));
        out.append(&mut group);
        out
    };
    let (ours, theirs) = (canonical(ours), canonical(theirs));
    let names = |v: &[(String, f64)]| v.iter().map(|r| r.0.clone()).collect::<Vec<_>>();
    assert_eq!(
        names(&ours),
        names(&theirs),
        "ours {ours:?}\ntheirs {theirs:?}"
    );
    for (a, b) in ours.iter().zip(&theirs) {
        assert!(
            (a.1 - b.1).abs() <= tol,
            "{}: ours {} theirs {}\nours {ours:?}\ntheirs {theirs:?}",
            a.0,
            a.1,
            b.1
        );
    }
}

#[test]
fn pprof_top_lists_our_functions_in_our_order_with_our_totals() {
    if !have("go", &["version"]) {
        return;
    }
    let dir = TempDir::new("pprof-top");
    profiled(&dir, "four", &[]);
    let report = report_json(&dir, &["gmon.out", "four"]);
    let file = export(&dir, "pprof", "four.pb.gz", "four");
    // CPU time in nanoseconds (the default sample type): each sample is one period, rounded
    // to a nanosecond, so allow a nanosecond per sample.
    let total = report["total_samples"].as_f64().unwrap();
    let ours = self_rows(&report, |r| r["self_seconds"].as_f64().unwrap() * 1e9);
    let theirs = pprof_top(&dir, &file, &["-unit=ns"]);
    assert_same_ranking(&ours, &theirs, total + 1.0);
    // The samples type: the same counts as the report's.
    let ours = self_rows(&report, |r| r["samples"].as_f64().unwrap());
    let theirs = pprof_top(&dir, &file, &["-sample_index=samples"]);
    assert_same_ranking(&ours, &theirs, 0.5);
    assert_eq!(theirs.iter().map(|r| r.1).sum::<f64>(), total);
}

#[test]
fn pprof_with_inlining_matches_the_inline_report_and_traces_show_the_chains() {
    if !have("go", &["version"]) {
        return;
    }
    let dir = TempDir::new("pprof-inline");
    profiled(&dir, "fouri", &["-DWITH_INLINE"]);
    let file = export(&dir, "pprof", "fouri.pb.gz", "fouri");
    // pprof's functions are source functions, inlined ones included: our --inline report.
    let inline: Value = serde_json::from_slice(&ours_ok(
        &dir.0,
        &["--inline", "--json", "gmon.out", "fouri"],
    ))
    .unwrap();
    let total = inline["total_samples"].as_f64().unwrap();
    let hz = inline["hz"].as_f64().unwrap();
    let ours: Vec<(String, f64)> = inline["functions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["function"].as_str().unwrap().to_owned(),
                r["samples"].as_f64().unwrap() / hz * 1e9,
            )
        })
        .collect();
    let theirs: Vec<(String, f64)> = pprof_top(&dir, &file, &["-unit=ns"])
        .into_iter()
        .map(|(n, v)| (n.trim_end_matches(" (inline)").to_owned(), v))
        .collect();
    assert_same_ranking(&ours, &theirs, total + 1.0);

    // -traces: every stack of ours is there, leaf first, inlined frames marked.
    let traces = pprof_text(&dir, &["-traces"], &file);
    let mut seen: BTreeMap<Vec<String>, usize> = BTreeMap::new();
    for block in traces.split("-----------+-------------------------------------------------------")
    {
        let frames: Vec<String> = block
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| {
                // The first line of a trace starts with its value.
                let t = l.trim();
                let name = match t.split_once("   ") {
                    Some((v, rest)) if v.ends_with('s') => rest.trim(),
                    _ => t,
                };
                name.to_owned()
            })
            .collect();
        if !frames.is_empty() && !block.contains("File:") {
            *seen.entry(frames).or_default() += 1;
        }
    }
    let folded = String::from_utf8(ours_ok(
        &dir.0,
        &["export", "--to", "folded", "-o", "-", "gmon.out", "fouri"],
    ))
    .unwrap();
    let mut inlined = 0;
    for line in folded.lines() {
        let (stack, _) = line.rsplit_once(' ').unwrap();
        let mut want: Vec<String> = stack.split(';').map(str::to_owned).collect();
        want.reverse();
        if want.len() > 1 {
            inlined += 1;
            want[0] += " (inline)";
        }
        assert!(
            seen.contains_key(&want),
            "stack {want:?} not among pprof's traces:\n{traces}"
        );
    }
    assert!(
        inlined >= 4,
        "each of the four functions inlines mix:\n{folded}"
    );
    assert!(traces.contains("mix (inline)"), "{traces}");
}

#[test]
fn pprof_names_the_executable_and_its_build_id() {
    if !have("go", &["version"]) {
        return;
    }
    let dir = TempDir::new("pprof-raw");
    profiled(&dir, "four", &["-Wl,--build-id=sha1"]);
    let file = export(&dir, "pprof", "four.pb.gz", "four");
    let raw = String::from_utf8(must(
        Command::new("go")
            .args(["tool", "pprof", "-raw"])
            .arg(&file)
            .current_dir(&dir.0)
            .env("PPROF_TMPDIR", &dir.0),
    ))
    .unwrap();
    let notes = String::from_utf8(must(
        Command::new("readelf").args(["-n"]).arg(dir.join("four")),
    ))
    .unwrap();
    let id = notes
        .lines()
        .find_map(|l| l.trim().strip_prefix("Build ID: "))
        .expect("readelf shows the build-id")
        .to_owned();
    let mapping = raw
        .lines()
        .skip_while(|l| !l.starts_with("Mappings"))
        .nth(1)
        .unwrap_or_else(|| panic!("no mapping in {raw}"));
    assert!(
        mapping.contains(&id) && mapping.contains("four"),
        "{id}: {raw}"
    );
    assert!(raw.contains("PeriodType: cpu nanoseconds"), "{raw}");
    assert!(raw.contains("four"), "{raw}");
}

#[test]
fn folded_counts_sum_to_the_samples() {
    let dir = TempDir::new("folded");
    profiled(&dir, "four", &[]);
    let report = report_json(&dir, &["gmon.out", "four"]);
    let file = export(&dir, "folded", "four.folded", "four");
    let text = fs::read_to_string(file).unwrap();
    let mut per_fn: BTreeMap<String, u64> = BTreeMap::new();
    let mut sum = 0;
    for line in text.lines() {
        let (stack, count) = line.rsplit_once(' ').expect("stack count");
        let count: u64 = count.parse().expect("integer count");
        assert!(count > 0 && !stack.is_empty(), "{line}");
        sum += count;
        *per_fn
            .entry(stack.rsplit(';').next().unwrap().to_owned())
            .or_default() += count;
    }
    assert_eq!(sum, report["total_samples"].as_u64().unwrap(), "{text}");
    for r in report["rows"].as_array().unwrap() {
        let samples = r["samples"].as_f64().unwrap();
        let got = per_fn
            .get(r["name"].as_str().unwrap())
            .copied()
            .unwrap_or(0) as f64;
        // Counts are the report's samples; a bin shared by two functions is rounded to whole
        // samples inside the bin.
        assert!((got - samples).abs() <= 1.0, "{r}: {got}");
    }
}

#[test]
fn svg_parses_and_names_every_function_above_one_percent() {
    let dir = TempDir::new("svg");
    profiled(&dir, "four", &[]);
    let report = report_json(&dir, &["gmon.out", "four"]);
    let file = export(&dir, "svg", "four.svg", "four");
    let text = fs::read_to_string(file).unwrap();
    // inferno writes a DOCTYPE (SVG 1.1's), which roxmltree reads when allowed to.
    let opt = roxmltree::ParsingOptions {
        allow_dtd: true,
        ..Default::default()
    };
    let doc = roxmltree::Document::parse_with_options(&text, opt)
        .expect("the flame graph is well-formed XML");
    assert_eq!(doc.root_element().tag_name().name(), "svg");
    let titles: Vec<String> = doc
        .descendants()
        .filter(|n| n.tag_name().name() == "title")
        .filter_map(|n| n.text().map(str::to_owned))
        .collect();
    let mut checked = 0;
    for r in report["rows"].as_array().unwrap() {
        if r["percent"].as_f64().unwrap() <= 1.0 {
            continue;
        }
        let name = r["name"].as_str().unwrap();
        // inferno's tooltip: "NAME (N samples, P%)".
        assert!(
            titles.iter().any(|t| t.starts_with(&format!("{name} ("))),
            "{name} missing from the flame graph's frames {titles:?}"
        );
        checked += 1;
    }
    assert!(checked >= 4, "{report}");
}

#[test]
fn callgrind_annotate_totals_and_top_functions_equal_ours() {
    if !have("callgrind_annotate", &["--help"]) {
        return;
    }
    let dir = TempDir::new("callgrind");
    profiled(&dir, "four", &[]);
    let report = report_json(&dir, &["gmon.out", "four"]);
    let file = export(&dir, "callgrind", "callgrind.out.four", "four");
    // Every function: by default the list stops once 99% of the total is listed (a single
    // sample in the runtime's exit path, 0.1%, was left off it).
    let text = String::from_utf8(must(
        Command::new("callgrind_annotate")
            .arg("--threshold=100")
            .arg(&file)
            .current_dir(&dir.0),
    ))
    .unwrap();
    let number = |s: &str| s.replace(',', "").parse::<u64>().ok();
    let total = text
        .lines()
        .find(|l| l.contains("PROGRAM TOTALS"))
        .and_then(|l| number(l.split_whitespace().next()?))
        .unwrap_or_else(|| panic!("no PROGRAM TOTALS in\n{text}"));
    assert_eq!(total, report["total_samples"].as_u64().unwrap(), "{text}");
    // The function list: "COUNT (P%)  file:function [object]", largest first.
    let theirs: Vec<(String, f64)> = text
        .lines()
        .skip_while(|l| !l.contains("file:function"))
        .skip(2)
        .take_while(|l| !l.trim().is_empty())
        .filter_map(|l| {
            // Functions without self samples (`.` for a count of 0) are not in our list.
            let count = number(l.split_whitespace().next()?)? as f64;
            let place = l.split_once(")").map_or(l, |p| p.1).trim();
            let place = place.rsplit_once(" [").map_or(place, |p| p.0);
            let name = place.rsplit_once(':').map_or(place, |p| p.1);
            Some((name.to_owned(), count))
        })
        .filter(|r| r.1 > 0.0)
        .collect();
    let ours = self_rows(&report, |r| r["samples"].as_f64().unwrap());
    // Whole samples are exact; a bin shared by two functions is rounded within the bin.
    let tol = if ours.iter().all(|r| r.1.fract() == 0.0) {
        0.0
    } else {
        1.0
    };
    assert_same_ranking(&ours, &theirs, tol);
    assert_eq!(
        theirs.iter().map(|r| r.1).sum::<f64>(),
        total as f64,
        "{text}"
    );
}

#[test]
fn speedscope_file_validates_against_the_published_schema() {
    let dir = TempDir::new("speedscope");
    profiled(&dir, "fouri", &["-DWITH_INLINE"]);
    let report = report_json(&dir, &["gmon.out", "fouri"]);
    let file = export(&dir, "speedscope", "four.speedscope.json", "fouri");
    let doc: Value = serde_json::from_slice(&fs::read(file).unwrap()).unwrap();
    let schema: Value = serde_json::from_slice(
        &fs::read(fixture("exports/speedscope-file-format-schema.json")).unwrap(),
    )
    .unwrap();
    let validator = jsonschema::validator_for(&schema).expect("the schema compiles");
    let errors: Vec<String> = validator.iter_errors(&doc).map(|e| e.to_string()).collect();
    assert!(errors.is_empty(), "{errors:?}");
    // What the schema cannot say: indexes in range, weights adding up to the profile.
    let frames = doc["shared"]["frames"].as_array().unwrap();
    let p = &doc["profiles"][0];
    for s in p["samples"].as_array().unwrap() {
        for i in s.as_array().unwrap() {
            assert!((i.as_u64().unwrap() as usize) < frames.len());
        }
    }
    let sum: f64 = p["weights"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w.as_f64().unwrap())
        .sum();
    let total = report["total_seconds"].as_f64().unwrap();
    assert!(
        (sum - total).abs() < 1e-9 * total.max(1.0),
        "{sum} vs {total}"
    );
    // Stacks are root first: every two-frame stack ends in the inlined `mix`.
    let name = |i: &Value| {
        frames[i.as_u64().unwrap() as usize]["name"]
            .as_str()
            .unwrap()
    };
    let deep: Vec<_> = p["samples"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|s| s.as_array().filter(|s| s.len() == 2))
        .collect();
    assert!(!deep.is_empty());
    for s in deep {
        assert_eq!(name(&s[1]), "mix", "{s:?}");
    }
    // And the schema check can fail: a frame without its required name does not validate.
    let mut broken = doc.clone();
    broken["shared"]["frames"][0]
        .as_object_mut()
        .unwrap()
        .remove("name");
    assert!(!validator.is_valid(&broken));
}

/// `profil-report diff --json` on base and new runs.
fn diff_json(dir: &TempDir, base: &[PathBuf], new: &[PathBuf], extra: &[&str]) -> Value {
    let mut args: Vec<String> = vec!["diff".into(), "--json".into(), "--base".into()];
    args.extend(base.iter().map(|p| p.display().to_string()));
    args.push("--new".into());
    args.extend(new.iter().map(|p| p.display().to_string()));
    args.extend(["--base-exe".into(), "four".into()]);
    args.extend(extra.iter().map(|s| s.to_string()));
    let a: Vec<&str> = args.iter().map(String::as_str).collect();
    serde_json::from_slice(&ours_ok(&dir.0, &a)).expect("diff JSON")
}

fn flagged(d: &Value) -> Vec<String> {
    d["rows"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["significant"].as_bool().unwrap())
        .map(|r| r["name"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn diff_flags_the_doubled_function_and_not_the_three_others() {
    let dir = TempDir::new("diff");
    build(&dir, "four", &[]);
    let units = units_for(&dir, "four", 600);
    // One run per side (the exact binomial test), three times over. At the default 5% a
    // family of four tests still flags noise in up to one repetition in twenty, so the
    // repetitions use --alpha 0.001: a doubling is far beyond that, noise is not.
    for rep in 0..3 {
        let b = run(&dir, "four", units, &[], &format!("base{rep}.gmon"));
        let n = run(&dir, "four", units, &["beta"], &format!("new{rep}.gmon"));
        let d = diff_json(&dir, &[b], &[n], &["--alpha", "0.001"]);
        assert_eq!(flagged(&d), ["beta"], "repetition {rep}: {d:#}");
        let beta = &d["rows"][0];
        assert_eq!(beta["name"], "beta");
        let (bs, ns) = (
            beta["base_seconds"].as_f64().unwrap(),
            beta["new_seconds"].as_f64().unwrap(),
        );
        assert!(ns > 1.5 * bs, "{beta}");
        assert!((beta["delta_seconds"].as_f64().unwrap() - (ns - bs)).abs() < 1e-12);
        // The three others are rows, unflagged (other rows, such as `main` with a stray
        // sample, may come and go).
        for other in ["alpha", "gamma_", "delta"] {
            let row = d["rows"]
                .as_array()
                .unwrap()
                .iter()
                .find(|r| r["name"] == other);
            assert!(
                row.is_some_and(|r| r["significant"] == false),
                "{other}: {d:#}"
            );
        }
    }
    // The three runs of each side together, at the default level: Welch's test on the
    // per-run seconds.
    let bases: Vec<PathBuf> = (0..3).map(|r| dir.join(&format!("base{r}.gmon"))).collect();
    let news: Vec<PathBuf> = (0..3).map(|r| dir.join(&format!("new{r}.gmon"))).collect();
    let three = diff_json(&dir, &bases, &news, &[]);
    assert_eq!(flagged(&three), ["beta"], "{three:#}");
    assert!(three["test"].as_str().unwrap().contains("Welch"), "{three}");
    // A side against itself: nothing changed.
    let d = diff_json(&dir, &bases, &bases, &[]);
    assert!(flagged(&d).is_empty(), "{d:#}");
    // The table says the same.
    let mut args = vec!["diff".to_owned(), "--base".to_owned()];
    args.extend(bases.iter().map(|p| p.display().to_string()));
    args.push("--new".into());
    args.extend(news.iter().map(|p| p.display().to_string()));
    args.push("four".into());
    let a: Vec<&str> = args.iter().map(String::as_str).collect();
    let table = String::from_utf8(ours_ok(&dir.0, &a)).unwrap();
    // beta in the table of changes; the others (the three, and any function with a stray
    // sample) folded into one line.
    assert!(table.lines().any(|l| l.ends_with("| beta")), "{table}");
    let folded = table
        .lines()
        .find(|l| l.contains("functions without a significant change"))
        .unwrap_or_else(|| panic!("no folded line in {table}"));
    let unchanged = three["rows"].as_array().unwrap().len() - 1;
    assert!(folded.starts_with(&format!("{unchanged} ")), "{table}");
}

#[test]
fn exports_carry_every_shared_object_of_a_ranges_all_profile() {
    let dir = TempDir::new("objects");
    let exe = dir.join("libm_prog");
    must(
        Command::new("gcc")
            .args(["-O2", "-g", "-o"])
            .arg(&exe)
            .arg(fixture("runtime/libm.c"))
            .arg(runtime_path(false))
            .arg("-lm"),
    );
    // Double the work until the run has 300 samples (gmon.out, one file per object, and the
    // manifest gmon.out.objects).
    let mut units = 10;
    let report = loop {
        for f in fs::read_dir(&dir.0).unwrap() {
            let f = f.unwrap().path();
            if f.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("gmon.out")
            {
                fs::remove_file(f).unwrap();
            }
        }
        must(
            Command::new(&exe)
                .arg(units.to_string())
                .current_dir(&dir.0)
                .env("PROFIL_RANGES", "all")
                // PCs only: the check below is that the one-location stacks' outermost
                // frames are the objects report's rows (the sampled stacks have their own
                // test in runtime_stacks.rs).
                .env("PROFIL_STACKS", "0")
                .env_remove("PROFIL_OUT")
                .env_remove("GMON_OUT_PREFIX"),
        );
        let r = report_json(&dir, &["gmon.out", "libm_prog"]);
        if r["total_samples"].as_u64().unwrap() >= 300 || units > 2000 {
            break r;
        }
        units *= 2;
    };
    let total = report["total_samples"].as_u64().unwrap();
    let manifest = fs::read_to_string(dir.join("gmon.out.objects")).unwrap();
    let libm = manifest
        .lines()
        .map(|l| l.split('\t').collect::<Vec<_>>())
        .find(|f| f[0] == "lib" && f.last().unwrap().contains("libm.so"))
        .unwrap_or_else(|| panic!("no libm in the manifest:\n{manifest}"));
    let (libm_id, libm_path) = (libm[2], *libm.last().unwrap());

    // Folded: every sample once; the outermost frames are the objects report's functions.
    let folded = String::from_utf8(ours_ok(
        &dir.0,
        &[
            "export",
            "--to",
            "folded",
            "-o",
            "-",
            "gmon.out",
            "libm_prog",
        ],
    ))
    .unwrap();
    let mut per_root: BTreeMap<String, u64> = BTreeMap::new();
    for line in folded.lines() {
        let (stack, count) = line.rsplit_once(' ').unwrap();
        let root = stack.split(';').next().unwrap().to_owned();
        *per_root.entry(root).or_default() += count.parse::<u64>().unwrap();
    }
    assert_eq!(per_root.values().sum::<u64>(), total, "{folded}");
    let mut sums: BTreeMap<String, f64> = BTreeMap::new();
    for r in report["rows"].as_array().unwrap() {
        // Code outside every symbol is named by object and address range
        // (`<libm_prog+0x2050-0x2064>`) in the report and the exports alike.
        let f = r["function"].as_str().unwrap();
        *sums.entry(f.to_owned()).or_default() += r["samples"].as_f64().unwrap();
    }
    for (name, samples) in &sums {
        let got = per_root.get(name).copied().unwrap_or(0) as f64;
        assert!(
            (got - samples).abs() <= 1.0,
            "{name}: {got} vs {samples}\n{folded}"
        );
    }

    if !have("go", &["version"]) {
        return;
    }
    let file = dir.join("libm.pb.gz");
    ours_ok(
        &dir.0,
        &[
            "export",
            "--to",
            "pprof",
            "-o",
            "libm.pb.gz",
            "gmon.out",
            "libm_prog",
        ],
    );
    let raw = String::from_utf8(must(
        Command::new("go")
            .args(["tool", "pprof", "-raw"])
            .arg(&file)
            .current_dir(&dir.0)
            .env("PPROF_TMPDIR", &dir.0),
    ))
    .unwrap();
    let mappings: Vec<&str> = raw
        .lines()
        .skip_while(|l| !l.starts_with("Mappings"))
        .skip(1)
        .filter(|l| !l.trim().is_empty())
        .collect();
    assert_eq!(mappings.len(), 2, "{raw}");
    assert!(
        mappings
            .iter()
            .any(|m| m.contains(libm_path) && m.contains(libm_id)),
        "{libm_path} {libm_id}: {raw}"
    );
    let top = pprof_top(&dir, &file, &["-sample_index=samples"]);
    assert_eq!(
        top.iter().map(|r| r.1).sum::<f64>(),
        total as f64,
        "{top:?}"
    );
}

#[test]
fn pg_call_arcs_are_not_turned_into_stacks() {
    // glibc -pg profiles (checked in) have call arcs but no stacks: the exports keep one
    // frame per sample (these programs inline nothing) and no call arcs of their own.
    for prog in ["cycle", "loop2", "recursion", "threads"] {
        let dir = fixture("gcc-pg");
        let gmon = format!("{prog}.gmon");
        let report: Value =
            serde_json::from_slice(&ours_ok(&dir, &["--json", &gmon, prog])).unwrap();
        let arcs = report["call_graph"].to_string();
        assert!(
            arcs.contains("\"calls\""),
            "{prog}: the fixture has arcs: {arcs}"
        );
        let folded = String::from_utf8(ours_ok(
            &dir,
            &["export", "--to", "folded", "-o", "-", &gmon, prog],
        ))
        .unwrap();
        assert!(!folded.contains(';'), "{prog}: {folded}");
        let sum: u64 = folded
            .lines()
            .map(|l| l.rsplit_once(' ').unwrap().1.parse::<u64>().unwrap())
            .sum();
        assert_eq!(sum, report["total_samples"].as_u64().unwrap(), "{prog}");
        let cg = String::from_utf8(ours_ok(
            &dir,
            &["export", "--to", "callgrind", "-o", "-", &gmon, prog],
        ))
        .unwrap();
        assert!(!cg.contains("\ncalls="), "{prog}: {cg}");
    }
}

/// `profil-report run sort` on a generated input until the run has 200 samples: a stripped
/// system program (Debian's /usr/bin/sort has no `.symtab`) with shared objects, its stacks
/// sampled. Returns the `--json` report of `gmon.out` and `/usr/bin/sort`.
fn sorted_run(dir: &TempDir) -> Value {
    let mut lines = 100_000u64;
    for _ in 0..6 {
        // A fixed pseudo-random input (a linear congruential sequence), larger each try.
        let mut x = 12345u64;
        let mut text = String::with_capacity(lines as usize * 12);
        for _ in 0..lines {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            text.push_str(&format!("{}\n", x >> 24));
        }
        fs::write(dir.join("input.txt"), text).unwrap();
        ours_ok(&dir.0, &["run", "sort", "input.txt", "-o", "sorted.txt"]);
        let report = report_json(dir, &["gmon.out", "/usr/bin/sort"]);
        if report["total_samples"].as_u64().unwrap() >= 200 {
            return report;
        }
        lines *= 2;
    }
    panic!("sort did not reach 200 samples");
}

/// Each function's total samples as inferno draws `folded` (read by `inferno::flamegraph`,
/// every frame kept): the sum of its frames that have no frame of the same name below them,
/// from each frame's tooltip ("NAME (N samples, P%)") and its rectangle's place.
fn outermost_totals(folded: &str) -> BTreeMap<String, f64> {
    let mut opt = inferno::flamegraph::Options::default();
    opt.min_width = 0.0;
    let mut svg = Vec::new();
    inferno::flamegraph::from_lines(&mut opt, folded.lines(), &mut svg).expect("inferno reads it");
    let svg = String::from_utf8(svg).unwrap();
    let doc = roxmltree::Document::parse_with_options(
        &svg,
        roxmltree::ParsingOptions {
            allow_dtd: true,
            ..Default::default()
        },
    )
    .unwrap();
    // (name, samples, x, width, y): the root is drawn at the bottom (largest y).
    let mut frames: Vec<(String, f64, f64, f64, f64)> = Vec::new();
    for g in doc.descendants().filter(|n| n.tag_name().name() == "g") {
        let title = g.children().find(|n| n.tag_name().name() == "title");
        let rect = g.children().find(|n| n.tag_name().name() == "rect");
        let (Some(title), Some(rect)) = (title.and_then(|t| t.text()), rect) else {
            continue;
        };
        let Some((name, rest)) = title.rsplit_once(" (") else {
            continue;
        };
        let samples: f64 = rest
            .split_once(' ')
            .map(|(n, _)| n.replace(',', ""))
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("inferno's title {title}"));
        let num = |a: &str| -> f64 {
            rect.attribute(a)
                .unwrap()
                .trim_end_matches('%')
                .parse()
                .unwrap()
        };
        frames.push((name.to_owned(), samples, num("x"), num("width"), num("y")));
    }
    let mut totals = BTreeMap::new();
    for (i, (name, samples, x, w, y)) in frames.iter().enumerate() {
        let below = frames.iter().enumerate().any(|(j, (n, _, bx, bw, by))| {
            j != i && n == name && by > y && *bx <= x + 1e-3 && bx + bw >= x + w - 1e-3
        });
        if !below && name != "all" {
            *totals.entry(name.clone()).or_default() += samples;
        }
    }
    totals
}

/// The report's rows: function → (object, self samples, total samples).
fn rows_by_function(report: &Value) -> BTreeMap<String, (String, f64, f64)> {
    let mut out = BTreeMap::new();
    for r in report["rows"].as_array().unwrap() {
        let f = r["function"].as_str().unwrap().to_owned();
        let row = (
            r["object"].as_str().unwrap().to_owned(),
            r["samples"].as_f64().unwrap(),
            r["total_samples"].as_f64().unwrap_or(0.0),
        );
        assert!(out.insert(f.clone(), row).is_none(), "two rows name {f}");
    }
    out
}

/// How far a row's self samples may be from an export's: the report splits a histogram bin
/// shared by two functions (or a function and the padding after it) by bytes, where the
/// exports take each sampled stack's exact leaf PC, so a row with a fractional share may differ
/// by less than one sample per shared bin (one here; whole rows are exact).
fn self_tolerance(rows: &BTreeMap<String, (String, f64, f64)>) -> f64 {
    if rows.values().any(|r| r.1.fract() != 0.0) {
        1.0
    } else {
        0.0
    }
}

/// Whether a row of `object` can be held to an export's self samples: the program's rows
/// can; a shared object's cannot, since its histogram's bins are coarser than its smallest
/// functions, so the report gives such a function a byte share of every bin it shares, which
/// may be several samples from the exact leaf PCs (glibc 2.36's `__errno_location`: 3 samples
/// at its PCs, a 0.75 share; 9 against 3). Their sum is still checked against the total.
fn self_comparable(object: &str) -> bool {
    object == "sort"
}

/// Self samples by leaf frame name (an export whose leaf is the innermost inlined function)
/// against the report's rows (out-of-line functions): every program row's samples are the export's,
/// less what the export credits to a function inlined into it (none in the stripped
/// program), within [`self_tolerance`]; the export's leaves sum to the samples.
fn assert_self_samples(
    what: &str,
    rows: &BTreeMap<String, (String, f64, f64)>,
    leaf: &BTreeMap<String, f64>,
    total: f64,
) {
    let tol = self_tolerance(rows);
    for (name, (object, samples, _)) in rows {
        let theirs = leaf.get(name).copied().unwrap_or(0.0);
        if self_comparable(object) {
            assert!(
                (theirs - samples).abs() <= tol + 1e-9,
                "{what}: {name} has {theirs} samples, the report {samples}\n{leaf:?}"
            );
        }
    }
    assert!(
        (leaf.values().sum::<f64>() - total).abs() < 1e-6,
        "{what}: {leaf:?}"
    );
}

#[test]
fn every_export_names_a_stripped_programs_code_as_the_report_does() {
    let dir = TempDir::new("stripped");
    let report = sorted_run(&dir);
    let rows = rows_by_function(&report);
    let total = report["total_samples"].as_f64().unwrap();
    let hz = report["hz"].as_u64().unwrap();
    assert!(
        rows.keys().any(|f| f.starts_with("<sort+0x")),
        "no address-range row for the stripped program: {rows:?}"
    );
    assert!(rows.values().any(|r| r.0 == "libc.so.6"), "{rows:?}");
    let text = String::from_utf8(ours_ok(&dir.0, &["gmon.out", "/usr/bin/sort"])).unwrap();
    // One rate everywhere, and the text says which: the clock's nominal rate.
    let one_line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        one_line.contains(&format!(" samples at {hz} Hz = ")),
        "{text}"
    );
    assert!(
        one_line.contains("CPU time not sampled: ")
            && one_line.contains("CPU time the clock measures")
            && one_line.contains(&format!("; {hz} Hz is the clock's nominal rate)")),
        "{text}"
    );

    // Folded stacks: each line's leaf is its self samples; a frame is repeated only where the
    // report's call graph has the function calling itself (recursion), never an alias.
    let folded =
        fs::read_to_string(export(&dir, "folded", "sort.folded", "/usr/bin/sort")).unwrap();
    let recursive: Vec<String> = {
        let g = &report["call_graph"];
        let name = |id: &Value| {
            g["functions"]
                .as_array()
                .unwrap()
                .iter()
                .find(|f| &f["id"] == id)
                .map(|f| f["raw_name"].as_str().unwrap().to_owned())
                .unwrap()
        };
        g["arcs"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|a| a["caller"] == a["callee"])
            .map(|a| name(&a["caller"]))
            .collect()
    };
    let mut leaf: BTreeMap<String, f64> = BTreeMap::new();
    for line in folded.lines() {
        let (stack, count) = line.rsplit_once(' ').unwrap();
        let frames: Vec<&str> = stack.split(';').collect();
        for w in frames.windows(2) {
            assert!(
                w[0] != w[1] || recursive.iter().any(|r| r == w[0]),
                "doubled frame {} in {line}",
                w[0]
            );
        }
        for f in &frames {
            assert!(
                !f.contains("outside known functions"),
                "folded lumps code together: {line}"
            );
        }
        *leaf.entry(frames.last().unwrap().to_string()).or_default() +=
            count.parse::<f64>().unwrap();
    }
    assert_self_samples("folded", &rows, &leaf, total);
    // inferno, the folded format's reader, draws the same stacks: a function's outermost
    // frames (those with no frame of it below them) hold its total, the report's.
    let drawn = outermost_totals(&folded);
    let mut checked = 0;
    for (name, (_, _, report_total)) in &rows {
        if *report_total > 0.0 {
            let theirs = drawn.get(name).copied().unwrap_or(0.0);
            assert_eq!(theirs, *report_total, "inferno's {name}: {drawn:?}");
            checked += 1;
        }
    }
    assert!(checked >= 3, "{rows:?}");

    // Speedscope: self time per leaf frame, in seconds at the report's rate.
    let ss: Value = serde_json::from_str(
        &fs::read_to_string(export(
            &dir,
            "speedscope",
            "sort.speedscope.json",
            "/usr/bin/sort",
        ))
        .unwrap(),
    )
    .unwrap();
    let frames = ss["shared"]["frames"].as_array().unwrap();
    let prof = &ss["profiles"][0];
    assert!(
        prof["name"]
            .as_str()
            .unwrap()
            .contains(&format!("at {hz} Hz")),
        "{}",
        prof["name"]
    );
    let mut leaf: BTreeMap<String, f64> = BTreeMap::new();
    for (s, w) in prof["samples"]
        .as_array()
        .unwrap()
        .iter()
        .zip(prof["weights"].as_array().unwrap())
    {
        let top = s.as_array().unwrap().last().unwrap().as_u64().unwrap() as usize;
        let samples = (w.as_f64().unwrap() * hz as f64).round();
        *leaf
            .entry(frames[top]["name"].as_str().unwrap().to_owned())
            .or_default() += samples;
    }
    assert_self_samples("speedscope", &rows, &leaf, total);
    let end = prof["endValue"].as_f64().unwrap();
    let seconds = report["total_seconds"].as_f64().unwrap();
    assert!(
        (end - seconds).abs() < 1e-9,
        "speedscope {end} s, report {seconds} s"
    );

    // The flame graph says the rate.
    let svg = fs::read_to_string(export(&dir, "svg", "sort.svg", "/usr/bin/sort")).unwrap();
    assert!(svg.contains(&format!(" {hz} Hz")), "no {hz} Hz in the SVG");
    assert!(
        !svg.contains("outside known functions"),
        "the SVG lumps code together"
    );

    // Callgrind: each function with its own object, the same self samples.
    if have("callgrind_annotate", &["--help"]) {
        let file = export(&dir, "callgrind", "callgrind.out.sort", "/usr/bin/sort");
        let raw = fs::read_to_string(&file).unwrap();
        assert!(raw.contains(&format!(" samples at {hz} Hz ")), "{raw}");
        let text = String::from_utf8(must(
            Command::new("callgrind_annotate")
                .arg("--threshold=100")
                .arg(&file)
                .current_dir(&dir.0),
        ))
        .unwrap();
        let number = |s: &str| s.replace(',', "").parse::<f64>().ok();
        let mut leaf: BTreeMap<String, f64> = BTreeMap::new();
        for l in text
            .lines()
            .skip_while(|l| !l.contains("file:function"))
            .skip(2)
            .take_while(|l| !l.trim().is_empty())
        {
            // "COUNT (P%)  file:function [object]", or ".  file:function [object]" for
            // none.
            let (count, rest) = l.trim_start().split_once(' ').unwrap();
            let count = number(count).unwrap_or(0.0);
            let place = rest.split_once(')').map_or(rest, |p| p.1).trim();
            let (place, object) = place.rsplit_once(" [").unwrap();
            let object = object.trim_end_matches(']');
            let name = place.split_once(':').map_or(place, |p| p.1);
            if let Some(row) = rows.get(name) {
                assert!(
                    object.ends_with(&format!("/{}", row.0)),
                    "callgrind puts {name} in {object}, the report in {}",
                    row.0
                );
            }
            *leaf.entry(name.to_owned()).or_default() += count;
        }
        assert_self_samples("callgrind", &rows, &leaf, total);
    }

    // pprof, inlined frames folded into their functions: the report's rows, self and total.
    if have("go", &["version"]) {
        let file = export(&dir, "pprof", "sort.pb.gz", "/usr/bin/sort");
        let top = pprof_text(
            &dir,
            &[
                "-top",
                "-noinlines",
                "-sample_index=samples",
                "-nodefraction=0",
                "-nodecount=1000000",
            ],
            &file,
        );
        assert!(top.contains(&format!("samples at {hz} Hz")), "{top}");
        let mut theirs: BTreeMap<String, (f64, f64)> = BTreeMap::new();
        for line in top
            .lines()
            .skip_while(|l| !l.trim_start().starts_with("flat"))
            .skip(1)
        {
            let f: Vec<&str> = line.split_whitespace().collect();
            let name = f[5..].join(" ");
            theirs.insert(name, (f[0].parse().unwrap(), f[3].parse().unwrap()));
        }
        // The same functions, the same totals, the same self samples (within the bins the
        // report shares between functions).
        let tol = self_tolerance(&rows);
        for (name, &(flat, cum)) in &theirs {
            let r = rows
                .get(name)
                .unwrap_or_else(|| panic!("{name} is no row of the report\n{top}"));
            assert_eq!(cum, r.2, "{name}: total\n{top}");
            assert!(
                !self_comparable(&r.0) || (flat - r.1).abs() <= tol + 1e-9,
                "{name}: self {flat} vs {}\n{top}",
                r.1
            );
        }
        for (name, r) in &rows {
            assert!(
                theirs.contains_key(name) || (r.2 == 0.0 && (r.1 <= tol || !self_comparable(&r.0))),
                "{name} ({r:?}) is not in pprof\n{top}"
            );
        }
        // Seconds: the CPU values are samples at the report's rate.
        let raw = pprof_text(&dir, &["-raw"], &file);
        let period = 1_000_000_000 / hz;
        assert!(raw.contains(&format!("Period: {period}")), "{raw}");
    }
}
