//! The default report: conservation of samples, the outside row, folded fragments and
//! aliases, DWARF locations, calls, the `.dynsym` fallback, mismatch warnings, CSV = JSON,
//! and `--compare-gprof`.

use crate::flat_support;

use flat_support::*;
use gmon::write::{HistHeader, Writer};
use gmon::{Dimension, Endian, PtrSize, Target};

/// The fields of a JSON row these tests read.
#[derive(Debug, Clone)]
struct JRow {
    name: String,
    samples: f64,
    calls: Option<u64>,
    location: Option<String>,
    aliases: Vec<String>,
    fragments: Vec<String>,
    self_per_call: Option<f64>,
    total_per_call: Option<f64>,
}

/// Whether one of `names` contains `part`.
fn has(names: &[String], part: &str) -> bool {
    names.iter().any(|n| n.contains(part))
}

fn json(dir: &TempDir, args: &[&str]) -> (Vec<JRow>, f64, String) {
    let mut a = vec!["--json"];
    a.extend_from_slice(args);
    let out = ours(dir.path(), &a);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).expect("report JSON");
    let total = doc["total_samples"].as_f64().expect("total_samples");
    let names = |v: &serde_json::Value| -> Vec<String> {
        v.as_array()
            .expect("a list of names")
            .iter()
            .map(|n| n.as_str().expect("a name").to_owned())
            .collect()
    };
    let rows = doc["rows"]
        .as_array()
        .expect("rows")
        .iter()
        .map(|r| JRow {
            name: r["name"].as_str().expect("name").to_owned(),
            samples: r["samples"].as_f64().expect("samples"),
            calls: r["calls"].as_u64(),
            location: r["location"].as_str().map(str::to_owned),
            aliases: names(&r["aliases"]),
            fragments: names(&r["fragments"]),
            self_per_call: r["self_seconds_per_call"].as_f64(),
            total_per_call: r["total_seconds_per_call"].as_f64(),
        })
        .collect();
    (
        rows,
        total,
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn build(src: &str, flags: &[&str]) -> TempDir {
    let dir = TempDir::new(src.trim_end_matches(".c"));
    let s = corpus(src);
    let mut args = vec!["-pg", "-g", "-o", "prog", s.to_str().unwrap()];
    args.extend_from_slice(flags);
    compile(dir.path(), "gcc", &args);
    profile_run(dir.path(), "prog", &[], "gmon.out");
    dir
}

fn text_range(dir: &TempDir) -> (u64, u64) {
    let data = std::fs::read(dir.join("prog")).unwrap();
    let img = profil_symbols::ElfImage::parse(&data).unwrap();
    let t = img.section_by_name(".text").unwrap();
    (t.addr, t.addr + t.size)
}

/// Bins of about 3 bytes over the whole PIE image from address 0: most bins straddle, many
/// fall outside every function. Every sample must still be counted exactly once.
#[test]
fn samples_are_conserved_and_outside_is_a_row() {
    let dir = build("cycles.c", &["-O0"]);
    let (_, hi) = text_range(&dir);
    let n = (hi / 3) as u32;
    let mut w = Writer::new(Vec::new(), Target::new(PtrSize::Eight, Endian::Little));
    w.gnu_header().unwrap();
    let h = HistHeader {
        low_pc: 0,
        high_pc: u64::from(n) * 3,
        hist_size: n,
        prof_rate: 100,
        dimension: Dimension::SECONDS,
    };
    w.gnu_histogram(&h, (0..n).map(|i| (i % 5) as u16)).unwrap();
    std::fs::write(dir.join("straddle.gmon"), w.into_inner()).unwrap();
    let (rows, total, _) = json(&dir, &["prog", "straddle.gmon"]);
    let expected: u64 = (0..u64::from(n)).map(|i| i % 5).sum();
    assert_eq!(total as u64, expected);
    let sum: f64 = rows.iter().map(|r| r.samples).sum();
    assert!(
        (sum - total).abs() < 1e-6 * total,
        "rows sum to {sum}, total {total}"
    );
    let outside = rows
        .iter()
        .find(|r| r.name == "<outside known functions>")
        .expect("outside row");
    assert!(outside.samples > 0.0);
    // CSV carries the same rows.
    let csv = ours(dir.path(), &["--csv", "prog", "straddle.gmon"]);
    let csv = String::from_utf8(csv.stdout).unwrap();
    let mut lines = csv.lines();
    assert!(lines
        .next()
        .unwrap()
        .starts_with("rank,object,name,raw_name,location,percent,"));
    let csv_rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    assert_eq!(csv_rows.len(), rows.len());
    for (c, j) in csv_rows.iter().zip(&rows) {
        assert_eq!(c[2], j.name);
        assert!((c[8].parse::<f64>().unwrap() - j.samples).abs() < 1e-9);
    }
}

/// `.cold` / `.part.N` fragments are credited to their parent; aliases are one row.
#[test]
fn fragments_and_aliases_are_folded() {
    let dir = build("dotted.c", &["-O0"]);
    let (rows, _, _) = json(&dir, &["prog", "gmon.out"]);
    assert!(
        rows.iter()
            .all(|r| r.name != "hot.cold" && r.name != "hot.part.0"),
        "{rows:?}"
    );
    let hot = rows.iter().find(|r| r.name == "hot").expect("hot row");
    assert!(
        has(&hot.fragments, "hot.cold") && has(&hot.fragments, "hot.part.0"),
        "{hot:?}"
    );

    let dir = build("aliases.c", &["-O0"]);
    let (rows, _, _) = json(&dir, &["prog", "gmon.out"]);
    let with_target: Vec<&JRow> = rows
        .iter()
        .filter(|r| r.name == "target_fn" || r.aliases.iter().any(|a| a == "target_fn"))
        .collect();
    assert_eq!(with_target.len(), 1, "{rows:?}");
    assert!(has(&with_target[0].aliases, "alias_fn") || with_target[0].name == "alias_fn");
}

/// file:line from DWARF, calls without self-recursion (as gprof counts them), per-call times.
#[test]
fn locations_and_calls() {
    let dir = build("cycles.c", &["-O0"]);
    let (rows, _, _) = json(&dir, &["prog", "gmon.out"]);
    let fib = rows.iter().find(|r| r.name == "fib").expect("fib");
    assert!(
        fib.location
            .as_deref()
            .is_some_and(|l| l.ends_with("cycles.c:15")),
        "{fib:?}"
    );
    let g = String::from_utf8(gprof(dir.path(), &["-b", "-p", "prog", "gmon.out"]).stdout).unwrap();
    let gfib = g
        .lines()
        .find(|l| l.ends_with(" fib"))
        .expect("gprof fib row");
    let gcalls: u64 = gfib.split_whitespace().nth(3).unwrap().parse().unwrap();
    assert_eq!(fib.calls, Some(gcalls));
    let ping = rows.iter().find(|r| r.name == "ping").expect("ping");
    assert!(ping.total_per_call.unwrap() >= ping.self_per_call.unwrap());
}

/// Without .symtab the dynamic symbols are used, with a warning.
#[test]
fn stripped_executable_uses_dynsym() {
    let dir = build("cycles.c", &["-O0", "-rdynamic"]);
    compile(dir.path(), "strip", &["-o", "stripped", "prog"]);
    let (rows, _, stderr) = json(&dir, &["stripped", "gmon.out"]);
    assert!(
        stderr.contains("warning") && stderr.contains(".symtab"),
        "{stderr}"
    );
    assert!(rows.iter().any(|r| r.name == "fib"), "{rows:?}");
    assert!(
        rows.iter().all(|r| r.name != "spin"),
        "a static function survived stripping"
    );
}

/// A profile that does not belong to the executable is reported, not silently printed.
#[test]
fn mismatched_profile_warns() {
    let dir = build("cycles.c", &["-O0"]);
    let mut w = Writer::new(Vec::new(), Target::new(PtrSize::Eight, Endian::Little));
    w.gnu_header().unwrap();
    let h = HistHeader {
        low_pc: 0x7000_0000,
        high_pc: 0x7000_4000,
        hist_size: 0x1000,
        prof_rate: 100,
        dimension: Dimension::SECONDS,
    };
    w.gnu_histogram(&h, (0..0x1000).map(|i| (i % 3) as u16))
        .unwrap();
    std::fs::write(dir.join("other.gmon"), w.into_inner()).unwrap();
    let (_, _, stderr) = json(&dir, &["prog", "other.gmon"]);
    // (Warnings are wrapped to 100 columns: the words, not the line breaks.)
    let words = stderr.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(words.contains("outside the code"), "{stderr}");
    assert!(words.contains("may not belong"), "{stderr}");
}

/// A profile of another program whose histogram overlaps the executable's text (two PIEs
/// both start at 0; two -no-pie programs at 0x400000) is flagged; the executable's own
/// profiles, written by glibc (PIE, -no-pie, static) and by profil-rt (linked in, PIE and
/// -no-pie, 4-byte bins and wider ones, GNU and 4.4BSD files), are not.
#[test]
fn profile_of_another_program_is_flagged() {
    let dir = TempDir::new("fit");
    let runtime = ours(dir.path(), &["runtime-path"]);
    assert!(runtime.status.success());
    let runtime = String::from_utf8(runtime.stdout).unwrap();
    let (cycles, threads) = (corpus("cycles.c"), corpus("threads.c"));
    let (cycles, threads) = (cycles.to_str().unwrap(), threads.to_str().unwrap());
    let builds: [(&str, &[&str]); 7] = [
        ("pie", &["-pg", "-O0", cycles]),
        ("pie_other", &["-pg", "-O0", threads, "-lpthread"]),
        ("nopie", &["-pg", "-O2", "-no-pie", cycles]),
        (
            "nopie_other",
            &["-pg", "-O2", "-no-pie", threads, "-lpthread"],
        ),
        ("static", &["-pg", "-O1", "-static", cycles]),
        ("rt", &["-O1", cycles, runtime.trim_end()]),
        ("rt_nopie", &["-O1", "-no-pie", cycles, runtime.trim_end()]),
    ];
    for (exe, flags) in builds {
        let mut args = vec!["-o", exe];
        args.extend_from_slice(flags);
        compile(dir.path(), "gcc", &args);
        profile_run(dir.path(), exe, &[], &format!("{exe}.gmon"));
    }
    // Wider bins and the 4.4BSD format from the runtime.
    for (scale, format) in [("4096", "bsd"), ("100", "gnu")] {
        let out = std::process::Command::new(dir.join("rt"))
            .current_dir(dir.path())
            .env("PROFIL_SCALE", scale)
            .env("PROFIL_FORMAT", format)
            .output()
            .unwrap();
        assert!(out.status.success());
        let name = format!("rt-{scale}-{format}.gmon");
        std::fs::rename(dir.join("gmon.out"), dir.join(&name)).unwrap();
    }
    let own = [
        ("pie", "pie.gmon"),
        ("pie_other", "pie_other.gmon"),
        ("nopie", "nopie.gmon"),
        ("nopie_other", "nopie_other.gmon"),
        ("static", "static.gmon"),
        ("rt", "rt.gmon"),
        ("rt_nopie", "rt_nopie.gmon"),
        ("rt", "rt-4096-bsd.gmon"),
        ("rt", "rt-100-gnu.gmon"),
    ];
    for (exe, gmon) in own {
        let (_, _, stderr) = json(&dir, &[exe, gmon]);
        assert!(!stderr.contains("warning"), "{exe} {gmon}: {stderr}");
    }
    for (exe, gmon) in [
        ("pie", "pie_other.gmon"),
        ("pie_other", "pie.gmon"),
        ("nopie", "nopie_other.gmon"),
        ("nopie_other", "nopie.gmon"),
    ] {
        let (_, _, stderr) = json(&dir, &[exe, gmon]);
        assert!(
            stderr.contains("is not the text of") && stderr.contains("another program"),
            "{exe} {gmon}: {stderr}"
        );
        // The same in JSON, and nothing new in --gprof mode.
        let out = ours(dir.path(), &["--json", exe, gmon]);
        assert!(String::from_utf8_lossy(&out.stdout).contains("another program"));
        let out = ours(dir.path(), &["--gprof", "-b", exe, gmon]);
        assert!(
            out.stderr.is_empty(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

/// --compare-gprof runs gprof and explains the differences. The profile is made by hand so
/// that the functions gprof mistreats certainly have samples.
#[test]
fn compare_gprof_explains_differences() {
    let dir = build("dotted.c", &["-O0"]);
    let data = std::fs::read(dir.join("prog")).unwrap();
    let img = profil_symbols::ElfImage::parse(&data).unwrap();
    let table = img.symtab.as_ref().unwrap();
    let addr = |name: &str| {
        table
            .symbols
            .iter()
            .find(|s| table.name(s) == name.as_bytes())
            .unwrap()
            .value
    };
    let (lo, hi) = text_range(&dir);
    let (lo, hi) = (lo & !15, (hi + 15) & !15);
    let n = ((hi - lo) / 4) as usize;
    let mut bins = vec![0u16; n];
    for (name, count) in [("dot.1", 50), ("hot.cold", 30), ("plainname", 20)] {
        bins[((addr(name) + 8 - lo) / 4) as usize] = count;
    }
    let mut w = Writer::new(Vec::new(), Target::new(PtrSize::Eight, Endian::Little));
    w.gnu_header().unwrap();
    let h = HistHeader {
        low_pc: lo,
        high_pc: hi,
        hist_size: n as u32,
        prof_rate: 100,
        dimension: Dimension::SECONDS,
    };
    w.gnu_histogram(&h, bins.iter().copied()).unwrap();
    std::fs::write(dir.join("crafted.gmon"), w.into_inner()).unwrap();
    let out = ours(dir.path(), &["--compare-gprof", "prog", "crafted.gmon"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(text.starts_with("Comparison with GNU gprof"), "{text}");
    // dot.1 is rejected by gprof's name rules (the next string, other.x, fails them).
    let dot1 = text
        .lines()
        .find(|l| l.contains("dot.1"))
        .expect("dot.1 row");
    assert!(dot1.contains("gprof rejects this symbol"), "{text}");
    assert!(dot1.contains("credits its samples to"), "{text}");
    // ... and the symbol that took them says so.
    assert!(
        text.contains("also holds dot.1, which gprof does not list"),
        "{text}"
    );
    // hot.cold is folded into hot here, and gprof credits it to the symbol before it, which
    // is hot too: they agree, so neither is listed.
    assert!(!text.contains(" hot "), "{text}");
    // plainname is a plain local: same numbers, so it is not listed.
    assert!(!text.contains("plainname"), "{text}");
}

/// CSV rows name their object (the executable's file name, not the path it was given by)
/// second, as the JSON rows and the objects report's CSV do (issue 14).
#[test]
fn csv_rows_carry_the_object_as_json_rows_do() {
    let dir = fixtures_dir("gcc-pg");
    let dir = dir.parent().unwrap();
    let args = ["gcc-pg/cycle.gmon", "gcc-pg/cycle"];
    let csv = ours_ok(dir, &[&["--csv"][..], &args].concat());
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    assert_eq!(header[..3], ["rank", "object", "name"], "{csv}");
    let doc: serde_json::Value =
        serde_json::from_str(&ours_ok(dir, &[&["--json"][..], &args].concat())).unwrap();
    let rows = doc["rows"].as_array().unwrap();
    let csv_rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    assert!(!rows.is_empty());
    assert_eq!(csv_rows.len(), rows.len(), "{csv}");
    for (c, j) in csv_rows.iter().zip(rows) {
        assert_eq!(c[1], "cycle", "{csv}");
        assert_eq!(c[1], j["object"], "{csv}");
        assert_eq!(c[2], j["name"], "{csv}");
    }
}
