//! End-to-end tests of the runtime's sampled call stacks (issue 17): fixtures/runtime/stacks.c
//! built `-O2 -fno-omit-frame-pointer` with the runtime object linked in, run, and the real
//! GNU `gprof -b` reads the call graph the runtime wrote into gmon.out. The walk statistics come
//! from the test setting `PROFIL_STACK_STATS=1` (one line on stderr at exit).

use crate::stacks_support::{
    build_rust, check_report_costly_share, report, report_json, row_total, run,
    run_until_2000_walks, stat, ONE_CHILD,
};
use crate::support::{runtime_path, TempDir};
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

fn build(dir: &TempDir) -> PathBuf {
    let exe = dir.0.join("stacks");
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/runtime/stacks.c");
    let out = Command::new("gcc")
        .args(["-O2", "-fno-omit-frame-pointer", "-o"])
        .arg(&exe)
        .arg(src)
        .arg(runtime_path(false))
        .arg("-lpthread")
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    exe
}

fn gprof(dir: &TempDir, exe: &Path) -> String {
    let out = Command::new("gprof")
        .arg("-b")
        .arg(exe)
        .arg(dir.0.join("gmon.out"))
        .output()
        .expect("gprof");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The `% time` of `name`'s primary line in gprof's call graph.
fn inclusive_percent(graph: &str, name: &str) -> Option<f64> {
    graph.lines().find_map(|l| {
        let l = l.trim_start();
        if !l.starts_with('[') || !l.ends_with(']') {
            return None;
        }
        let w: Vec<&str> = l.split_whitespace().collect();
        (w.len() >= 3 && w[w.len() - 2] == name).then(|| w[1].parse().ok())?
    })
}

/// Run `exe [mode] scale` until enough samples were walked ([`run_until_2000_walks`]), then
/// compare gprof's inclusive share for `costly` from our sampled arcs with the share the
/// program measured itself.
fn check_costly_share(dir: &TempDir, exe: &Path, mode: Option<&str>) {
    let truth = run_until_2000_walks(dir, exe, mode, &[]);
    let g = gprof(dir, exe);
    let got = inclusive_percent(&g, "costly").unwrap_or_else(|| panic!("no costly:\n{g}"));
    assert!(
        (got - truth * 100.0).abs() <= 3.0,
        "gprof {got}% vs truth {:.1}%\n{g}",
        truth * 100.0
    );
}

#[test]
fn rust_with_forced_frame_pointers_gprof_costly_share_within_3_points() {
    let dir = TempDir::new("rust-fp");
    let exe = build_rust(&dir, &["-C", "force-frame-pointers=yes"]);
    check_costly_share(&dir, &exe, None);
}

/// C at -O2 -fno-omit-frame-pointer: `work` is a frameless leaf, whose caller the CFI walk
/// keeps; every walk reaches the outermost frame.
#[test]
fn gprof_shows_costly_inclusive_share_within_3_points_of_the_truth() {
    let dir = TempDir::new("cheapcostly");
    let exe = build(&dir);
    check_costly_share(&dir, &exe, Some("cheapcostly"));
    let r = run(&dir, &exe, &["cheapcostly", "100"], &[]);
    assert!(
        stat(&r, "complete") * 100 >= stat(&r, "walks") * 99,
        "{}",
        r.stderr
    );
}

#[test]
fn a_clobbered_frame_pointer_never_crashes_and_counts_cut_walks() {
    let dir = TempDir::new("badfp");
    let exe = build(&dir);
    let r = run(&dir, &exe, &["badfp", "20"], &[]);
    assert!(r.ok, "{}", r.stderr);
    // spin_bad's asm pushes a word its CFI does not know of and sets rbp to garbage: the
    // return address read is not code, and the walk stops there.
    assert!(
        stat(&r, "walks") > 0 && stat(&r, "no_info") + stat(&r, "bad_unwind") > 0,
        "{}",
        r.stderr
    );
}

#[test]
fn recursion_deeper_than_the_limit_counts_as_too_deep_and_does_not_inflate_arcs() {
    let dir = TempDir::new("deep");
    let exe = build(&dir);
    let r = run(&dir, &exe, &["deep", "20"], &[]);
    assert!(r.ok, "{}", r.stderr);
    let walks = stat(&r, "walks");
    assert!(walks > 0 && stat(&r, "too_deep") > 0, "{}", r.stderr);
    // The recursive arc deep -> deep is on every stack ~128 times, but counted once a sample:
    // gprof shows it as "N deep [2]" under the cycle-free self-recursion line.
    let g = gprof(&dir, &exe);
    let rec: u64 = g
        .lines()
        .filter_map(|l| {
            let w: Vec<&str> = l.split_whitespace().collect();
            (w.len() == 3 && w[1] == "deep" && w[2].starts_with('[')).then(|| w[0].parse().ok())?
        })
        .next()
        .unwrap_or_else(|| panic!("no recursive arc:\n{g}"));
    assert!(rec <= walks, "recursive arc {rec} > {walks} samples\n{g}");
}

#[test]
fn a_thread_with_a_tiny_stack_is_walked_to_its_start() {
    let dir = TempDir::new("tiny");
    let exe = build(&dir);
    let r = run(&dir, &exe, &["tinythread", "200"], &[]);
    assert!(r.ok, "{}", r.stderr);
    assert!(stat(&r, "complete") > 0, "{}", r.stderr);
    assert_eq!(stat(&r, "no_range"), 0, "{}", r.stderr);
    let g = gprof(&dir, &exe);
    assert!(inclusive_percent(&g, "thread_main").is_some(), "{g}");
    // The runtime starts the thread through its own trampoline (to start the thread's clock):
    // the walk leaves that frame out, so no arc names it (issue 29).
    assert!(
        !g.contains("profil_rt"),
        "the runtime's own frame in the arcs:\n{g}"
    );
}

#[test]
fn a_full_table_counts_what_it_dropped_and_pcs_only_writes_no_arcs() {
    let dir = TempDir::new("full");
    let exe = build(&dir);
    let r = run(
        &dir,
        &exe,
        &["cheapcostly", "50"],
        &[("PROFIL_STACK_SLOTS", "1")],
    );
    assert!(r.ok, "{}", r.stderr);
    assert!(
        r.stderr.contains("the stack tables were full") && stat(&r, "stacks_dropped") > 0,
        "{}",
        r.stderr
    );
    let r = run(
        &dir,
        &exe,
        &["cheapcostly", "50"],
        &[("PROFIL_STACKS", "0")],
    );
    assert!(
        r.ok && !r.stderr.contains("profil-rt: stacks"),
        "{}",
        r.stderr
    );
    let g = gprof(&dir, &exe);
    assert!(inclusive_percent(&g, "costly").is_none(), "{g}");
}

#[test]
fn the_stacks_file_is_written_beside_the_profile_by_default() {
    let dir = TempDir::new("file");
    let exe = build(&dir);
    let r = run(&dir, &exe, &["deep", "5"], &[]);
    assert!(r.ok, "{}", r.stderr);
    let bytes = fs::read(dir.0.join("gmon.out.stacks")).expect("gmon.out.stacks");
    let f = gmon::stacks::parse(&bytes).unwrap();
    let s = f.header.stats;
    assert_eq!(s.walks, stat(&r, "walks"));
    assert_eq!(s.too_deep, stat(&r, "too_deep"));
    assert_eq!(f.header.max_depth, 128);
    // Every walk is one stack sample (nothing dropped at the default size).
    let total: u64 = f.stacks.iter().map(|s| s.count).sum();
    assert_eq!(total, s.walks);
    // The executable comes first, and every leaf of this program is in it.
    let exe_seg = f.objects[0];
    assert!(f
        .stacks
        .iter()
        .all(|s| s.pcs().next().is_some_and(|pc| exe_seg.contains(pc))));
    // Recursion beyond the limit: the deepest stacks hold exactly the limit.
    assert!(f.stacks.iter().any(|s| s.depth() == 128));
    // `file` is the default's synonym; PCs only writes no such file.
    let dir2 = TempDir::new("nofile");
    let r = run(&dir2, &exe, &["deep", "1"], &[("PROFIL_STACKS", "file")]);
    assert!(r.ok && dir2.0.join("gmon.out.stacks").exists());
    fs::remove_file(dir2.0.join("gmon.out.stacks")).unwrap();
    let r = run(&dir2, &exe, &["deep", "1"], &[("PROFIL_STACKS", "0")]);
    assert!(r.ok && !dir2.0.join("gmon.out.stacks").exists());
}

// ---- The analyzer's side: total times and the call graph from the stacks file ----

#[test]
fn the_report_total_column_gives_costly_within_3_points_of_the_truth() {
    let dir = TempDir::new("total-c");
    let exe = build(&dir);
    check_report_costly_share(&dir, &exe, Some("cheapcostly"), &[], 3.0);
    check_report_costly_share(
        &dir,
        &exe,
        Some("cheapcostly"),
        &[("PROFIL_RANGES", "exe")],
        3.0,
    );
}

#[test]
fn the_report_total_column_for_rust_with_frame_pointers() {
    let dir = TempDir::new("total-rs");
    let exe = build_rust(&dir, &["-C", "force-frame-pointers=yes"]);
    check_report_costly_share(&dir, &exe, None, &[], 3.0);
}

#[test]
fn the_report_shows_the_sampled_call_graph_not_the_estimate() {
    let dir = TempDir::new("cgtext");
    let exe = build(&dir);
    for env in [&[][..], &[("PROFIL_RANGES", "exe")][..]] {
        let r = run(&dir, &exe, &["cheapcostly", "100"], env);
        assert!(r.ok, "{}", r.stderr);
        let (code, out, err) = report(&dir, &["gmon.out", exe.to_str().unwrap()]);
        assert_eq!(code, 0, "{err}");
        assert!(out.contains("Call graph (from "), "{out}");
        assert!(!out.contains("Children time is an estimate"), "{out}");
        // The totals (their interval is a column of the default report's table; the report
        // across objects, chosen when a shared object has samples, leaves it to --wide).
        assert!(out.contains(" total "), "{out}");
        // costly calls work, and work is called by both cheap and costly.
        let work = out
            .split("\n\n")
            .find(|b| b.starts_with("work ["))
            .unwrap_or_else(|| panic!("no work entry:\n{out}"));
        assert!(
            work.contains("costly [") && work.contains("cheap ["),
            "{work}"
        );
        // Sampled arcs are not calls: no calls column.
        assert!(!out.contains("| calls "), "{out}");
        // One rate: the graph's seconds are its samples at the report's rate (the clock's
        // nominal rate, from the manifest), as the rows' are (issue 24).
        let j = report_json(&dir, &exe);
        let hz = j["hz"].as_f64().unwrap();
        let g = &j["call_graph"];
        let same = |secs: &serde_json::Value, samples: &serde_json::Value| {
            let (secs, samples) = (secs.as_f64().unwrap(), samples.as_f64().unwrap());
            assert!(
                (secs - samples / hz).abs() < 1e-9,
                "{secs} s for {samples} at {hz} Hz"
            );
        };
        for a in g["arcs"].as_array().unwrap() {
            same(&a["seconds"], &a["samples"]);
        }
        for f in g["functions"].as_array().unwrap() {
            same(&f["total_seconds"], &f["total_samples"]);
        }
        same(&g["total_seconds"], &g["samples"]);
        // CSV carries the totals too.
        let (_, csv, _) = report(&dir, &["--csv", "gmon.out", exe.to_str().unwrap()]);
        assert!(
            csv.lines().next().unwrap().contains("total_seconds"),
            "{csv}"
        );
    }
}

#[test]
fn recursion_counts_once_in_the_total() {
    let dir = TempDir::new("total-deep");
    let exe = build(&dir);
    let r = run(&dir, &exe, &["deep", "10"], &[("PROFIL_RANGES", "exe")]);
    assert!(r.ok, "{}", r.stderr);
    let j = report_json(&dir, &exe);
    let samples = j["call_graph"]["samples"].as_u64().unwrap();
    let deep = row_total(&j, "deep").unwrap();
    // deep is on (nearly) every stack up to 128 times, but counts once per sample.
    assert!(deep <= samples, "deep {deep} of {samples}");
    assert!(
        deep as f64 >= 0.9 * samples as f64,
        "deep {deep} of {samples}"
    );
    let f = j["call_graph"]["functions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["name"] == "deep")
        .unwrap();
    assert_eq!(f["total_samples"].as_u64().unwrap(), deep);
    let rec = j["call_graph"]["arcs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["caller"] == f["id"] && a["callee"] == f["id"])
        .expect("the recursive arc");
    assert!(rec["samples"].as_u64().unwrap() <= deep, "{rec}");
}

#[test]
fn a_stacks_file_with_a_bad_frame_count_is_an_error_with_its_offset() {
    let dir = TempDir::new("badstacks");
    let exe = build(&dir);
    let r = run(&dir, &exe, &["cheapcostly", "20"], &[]);
    assert!(r.ok, "{}", r.stderr);
    let path = dir.0.join("gmon.out.stacks");
    let mut b = fs::read(&path).unwrap();
    // The first stack record follows the header and the object records.
    let u32_at = |b: &[u8], at: usize| u32::from_le_bytes(b[at..at + 4].try_into().unwrap());
    let mut at = u32_at(&b, 12) as usize;
    for _ in 0..u32_at(&b, 24) {
        at += u32_at(&b, at) as usize;
    }
    b[at + 8..at + 12].copy_from_slice(&0x4000_0000u32.to_le_bytes());
    fs::write(&path, &b).unwrap();
    for extra in [&[][..], &["--json"][..]] {
        let mut args = extra.to_vec();
        args.extend(["gmon.out", exe.to_str().unwrap()]);
        let (code, out, err) = report(&dir, &args);
        assert_eq!(code, 2, "{out}{err}");
        assert!(
            err.contains("gmon.out.stacks: stacks file: truncated stack at byte ")
                && err.contains(&format!("at byte {}", at + 16))
                && err.lines().count() == 1,
            "{err}"
        );
    }
}

/// `cargo profil` leaves the user's flags as they are and forces no frame pointers (the CFI
/// walk needs none): a stand-in `cargo` (answering `metadata` with the real one) records what
/// the build got.
#[test]
fn cargo_profil_keeps_the_users_flags_and_forces_no_frame_pointers() {
    use std::os::unix::fs::PermissionsExt;
    let dir = TempDir::new("cargofp");
    let proj = dir.0.join("app");
    fs::create_dir_all(proj.join("src")).unwrap();
    fs::write(
        proj.join("Cargo.toml"),
        "[package]\nname = \"app\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
    )
    .unwrap();
    fs::write(proj.join("src/main.rs"), "fn main() {}\n").unwrap();
    let real = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let log = dir.0.join("log");
    let fake = dir.0.join("fake-cargo");
    fs::write(
        &fake,
        format!(
            "#!/bin/sh\nif [ \"$1\" = metadata ]; then exec '{real}' \"$@\"; fi\n\
             printf 'ENC=%s\\nRF=%s\\nARGS=%s\\n' \"${{CARGO_ENCODED_RUSTFLAGS-unset}}\" \"${{RUSTFLAGS-unset}}\" \"$*\" > '{}'\nexit 1\n",
            log.display()
        ),
    )
    .unwrap();
    fs::set_permissions(&fake, fs::Permissions::from_mode(0o755)).unwrap();
    let go = |env: &[(&str, &str)]| -> String {
        let _ = fs::remove_file(&log);
        let mut c = Command::new(env!("CARGO_BIN_EXE_cargo-profil"));
        c.arg("profil")
            .current_dir(&proj)
            .env("CARGO", &fake)
            .env_remove("RUSTFLAGS")
            .env_remove("CARGO_ENCODED_RUSTFLAGS")
            .envs(env.iter().copied());
        let out = c.output().unwrap();
        assert!(!out.status.success());
        fs::read_to_string(&log).unwrap_or_else(|_| {
            panic!(
                "the build did not run: {}",
                String::from_utf8_lossy(&out.stderr)
            )
        })
    };
    let l = go(&[("RUSTFLAGS", "-C target-cpu=x86-64")]);
    assert!(
        l.contains("RF=-C target-cpu=x86-64\n") && l.contains("ENC=unset"),
        "{l}"
    );
    let l = go(&[("CARGO_ENCODED_RUSTFLAGS", "-Copt-level=2")]);
    assert!(l.contains("ENC=-Copt-level=2\n"), "{l}");
    let l = go(&[]);
    assert!(
        !l.contains("frame-pointers")
            && !l.contains("--config")
            && l.contains("ENC=unset\nRF=unset"),
        "{l}"
    );
}

/// `--gprof` reads the runtime's gmon.out (sampled arcs: multiple callers of `work`, direct
/// recursion in `deep`, the ping/pong cycle) byte-identically to the real GNU gprof.
#[test]
fn gprof_emulation_is_byte_identical_on_a_runtime_file_with_sampled_arcs() {
    let dir = TempDir::new("gprof-ident");
    let exe = build(&dir);
    let exe_s = exe.to_str().unwrap();
    for mode in ["cheapcostly", "deep", "cycle"] {
        let r = run(&dir, &exe, &[mode, "30"], &[]);
        assert!(r.ok, "{}", r.stderr);
        for opts in [&["-b"][..], &["-b", "-p"], &["-b", "-q"], &["-b", "-z"]] {
            let g = Command::new("gprof")
                .args(opts)
                .arg(&exe)
                .arg("gmon.out")
                .current_dir(&dir.0)
                .output()
                .expect("gprof");
            let mut args = vec!["--gprof"];
            args.extend(opts);
            args.extend(["gmon.out", exe_s]);
            let out = Command::new(env!("CARGO_BIN_EXE_profil-report"))
                .args(&args)
                .current_dir(&dir.0)
                .output()
                .unwrap();
            let text = String::from_utf8_lossy(&g.stdout);
            assert!(
                text.contains("Call graph") || opts.contains(&"-p"),
                "{mode} {opts:?}: gprof printed no call graph: {text}"
            );
            assert_eq!(
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&g.stdout),
                "{mode} {opts:?}"
            );
            assert_eq!(out.status.code(), g.status.code(), "{mode} {opts:?}");
        }
    }
}

/// The exports use the real sampled stacks: costly's inclusive share in the folded stacks
/// (and in `go tool pprof -top`'s cum column, when Go is installed) is within 3 points of
/// the program's own clock.
#[test]
fn exports_show_the_sampled_stacks_with_costly_inclusive_share_near_the_truth() {
    let dir = TempDir::new("export");
    let exe = build(&dir);
    let exe_s = exe.to_str().unwrap();
    let truth = run_until_2000_walks(&dir, &exe, Some("cheapcostly"), &[]);
    let (code, _, err) = report(
        &dir,
        &["export", "--to", "folded", "-o", "f.txt", "gmon.out", exe_s],
    );
    assert_eq!(code, 0, "{err}");
    let folded = fs::read_to_string(dir.0.join("f.txt")).unwrap();
    let on_stack = |name: &str| -> u64 {
        folded
            .lines()
            .filter_map(|l| l.rsplit_once(' '))
            .filter(|(stack, _)| stack.split(';').any(|f| f == name))
            .map(|(_, n)| n.parse::<u64>().unwrap())
            .sum()
    };
    let (costly, cheap) = (on_stack("costly"), on_stack("cheap"));
    // Real stacks: main calls both, and work sits under them.
    assert!(
        folded.contains(";main;costly;work ") && folded.contains(";main;cheap;work "),
        "{folded}"
    );
    let got = 100.0 * costly as f64 / (costly + cheap) as f64;
    assert!(
        (got - 100.0 * truth).abs() <= 3.0,
        "folded {got:.1}% vs truth {:.1}%\n{folded}",
        100.0 * truth
    );
    if Command::new("go")
        .arg("version")
        .output()
        .is_ok_and(|o| o.status.success())
    {
        let (code, _, err) = report(
            &dir,
            &[
                "export", "--to", "pprof", "-o", "p.pb.gz", "gmon.out", exe_s,
            ],
        );
        assert_eq!(code, 0, "{err}");
        let top = Command::new("go")
            .args(["tool", "pprof", "-top", "-unit=ns", "p.pb.gz"])
            .current_dir(&dir.0)
            .output()
            .unwrap();
        let top = String::from_utf8_lossy(&top.stdout).into_owned();
        let cum = |name: &str| -> f64 {
            top.lines()
                .find(|l| l.split_whitespace().last() == Some(name))
                .and_then(|l| l.split_whitespace().nth(3))
                .and_then(|v| v.trim_end_matches("ns").parse().ok())
                .unwrap_or_else(|| panic!("no {name} in\n{top}"))
        };
        let got = 100.0 * cum("costly") / (cum("costly") + cum("cheap"));
        assert!(
            (got - 100.0 * truth).abs() <= 3.0,
            "pprof {got:.1}% vs truth {:.1}%\n{top}",
            100.0 * truth
        );
    }
}

/// Walks cut short (a function without a frame pointer) are reported with the likely cause
/// and the fix; a frame-pointer build gets no such warning.
#[test]
fn the_report_warns_when_frames_were_missing() {
    let dir = TempDir::new("truncwarn");
    let exe = build(&dir);
    let exe_s = exe.to_str().unwrap();
    let r = run(&dir, &exe, &["badfp", "20"], &[]);
    assert!(r.ok, "{}", r.stderr);
    assert!(
        stat(&r, "no_info") + stat(&r, "bad_unwind") > 0,
        "{}",
        r.stderr
    );
    for env in [&[][..], &[("PROFIL_RANGES", "exe")][..]] {
        let r = run(&dir, &exe, &["badfp", "20"], env);
        assert!(r.ok, "{}", r.stderr);
        let (code, _, err) = report(&dir, &["gmon.out", exe_s]);
        assert_eq!(code, 0, "{err}");
        // It says where the walks were cut (the executable, named by its file), and no longer
        // tells C users to add frame pointers.
        assert!(
            err.contains("of the sampled stacks were cut short")
                && err.contains("ended in the executable")
                && !err.contains("-fno-omit-frame-pointer"),
            "{env:?}: {err}"
        );
    }
    let r = run(&dir, &exe, &["cheapcostly", "50"], &[]);
    assert!(r.ok, "{}", r.stderr);
    let (code, _, err) = report(&dir, &["gmon.out", exe_s]);
    assert_eq!(code, 0, "{err}");
    assert!(!err.contains("cut short"), "{err}");
}

/// Objects loaded with `dlopen` after sampling started get object records in the stacks file
/// (registered by the handler when first sampled), so that their frames map to an object:
/// fixtures/runtime/dlcycle.c loads plugin A, burns, unloads it, loads B and burns.
#[test]
fn objects_loaded_later_have_object_records_in_the_stacks_file() {
    let dir = TempDir::new("dlrecords");
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/runtime");
    let mut libs = Vec::new();
    for name in ["a", "b"] {
        let so = dir.0.join(format!("libplug_{name}.so"));
        let out = Command::new("gcc")
            .args(["-O2", "-shared", "-fPIC", "-fno-omit-frame-pointer"])
            .arg(format!("-DPLUG_NAME=\"{name}\""))
            .arg("-o")
            .arg(&so)
            .arg(fixtures.join("plug.c"))
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        libs.push(so);
    }
    let exe = dir.0.join("dlcycle");
    let out = Command::new("gcc")
        .args(["-O2", "-fno-omit-frame-pointer", "-o"])
        .arg(&exe)
        .arg(fixtures.join("dlcycle.c"))
        .arg(runtime_path(false))
        .arg("-ldl")
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let (a, b) = (libs[0].to_str().unwrap(), libs[1].to_str().unwrap());
    let r = run(&dir, &exe, &[a, "40", b, "120"], &[]);
    assert!(r.ok, "{}", r.stderr);
    let bytes = fs::read(dir.0.join("gmon.out.stacks")).expect("gmon.out.stacks");
    let f = gmon::stacks::parse(&bytes).unwrap();
    for lib in [a, b] {
        assert!(
            f.objects.iter().any(|o| o.path == lib.as_bytes()),
            "no record for {lib}: {:?}",
            f.objects
        );
    }
    // Every sampled leaf lies in some object record.
    let unmapped: u64 = f
        .stacks
        .iter()
        .filter(|s| {
            let pc = s.pcs().next().unwrap();
            !f.objects.iter().any(|o| o.contains(pc))
        })
        .map(|s| s.count)
        .sum();
    let all: u64 = f.stacks.iter().map(|s| s.count).sum();
    assert!(
        (unmapped as f64) < 0.02 * all as f64,
        "{unmapped} of {all} leaves in no object record"
    );
}

/// `profil-report run` keeps the stacks file in the saved profile's side folder (`--out X` →
/// `X.d/X.stacks`), does not count it as a child process's profile, and reports the totals.
#[test]
fn run_keeps_the_stacks_file_beside_the_saved_profile() {
    let dir = TempDir::new("runsave");
    let exe = dir.0.join("plain");
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/runtime/stacks.c");
    let out = Command::new("gcc")
        .args(["-O2", "-fno-omit-frame-pointer", "-o"])
        .arg(&exe)
        .arg(src)
        .arg("-lpthread")
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    // A stale stacks file beside the profile (the layout before side folders) goes.
    fs::write(dir.0.join("saved.gmon.stacks"), b"stale").unwrap();
    let _one = ONE_CHILD.lock().unwrap_or_else(|e| e.into_inner());
    let out = Command::new(env!("CARGO_BIN_EXE_profil-report"))
        .args(["run", "--out", "saved.gmon", "--report", "-", "--"])
        .arg(&exe)
        .args(["cheapcostly", "50"])
        .current_dir(&dir.0)
        .env_remove("PROFIL_STACKS")
        .env_remove("PROFIL_RANGES")
        .output()
        .unwrap();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(out.status.success(), "{stdout}{stderr}");
    assert!(!stdout.contains("not kept"), "{stdout}");
    assert!(stdout.contains(" total "), "{stdout}{stderr}");
    assert!(!dir.0.join("saved.gmon.stacks").exists());
    let bytes = fs::read(dir.0.join("saved.gmon.d/saved.gmon.stacks")).unwrap();
    assert!(gmon::stacks::parse(&bytes).is_ok());
}

/// `PROFIL_STACKS=0` removes a stacks file an earlier run left beside the profile, so that
/// it is never paired with the new one.
#[test]
fn pcs_only_removes_a_stale_stacks_file() {
    let dir = TempDir::new("stale");
    let exe = build(&dir);
    let r = run(&dir, &exe, &["cheapcostly", "20"], &[]);
    assert!(
        r.ok && dir.0.join("gmon.out.stacks").is_file(),
        "{}",
        r.stderr
    );
    let r = run(
        &dir,
        &exe,
        &["cheapcostly", "20"],
        &[("PROFIL_STACKS", "0")],
    );
    assert!(r.ok, "{}", r.stderr);
    assert!(!dir.0.join("gmon.out.stacks").exists());
    let (code, out, err) = report(&dir, &["gmon.out", exe.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    assert!(!out.contains("total 95%"), "{out}");
}

/// A runtime profile's arcs are sample counts: even without its stacks file (and without the
/// objects manifest: `PROFIL_RANGES=exe`), the report recognises the runtime's histogram
/// range and shows no calls column and no call graph drawn from them.
#[test]
fn sampled_arcs_are_never_shown_as_calls() {
    let dir = TempDir::new("arcsonly");
    let exe = build(&dir);
    let r = run(
        &dir,
        &exe,
        &["cheapcostly", "50"],
        &[("PROFIL_RANGES", "exe")],
    );
    assert!(r.ok, "{}", r.stderr);
    fs::remove_file(dir.0.join("gmon.out.stacks")).unwrap();
    // The arcs are there (gprof shows them)...
    assert!(inclusive_percent(&gprof(&dir, &exe), "costly").is_some());
    // ...but our report does not present them as calls.
    let (code, out, err) = report(&dir, &["gmon.out", exe.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    assert!(!out.contains("| calls"), "{out}");
    assert!(!out.contains("Call graph"), "{out}");
    let j = report_json(&dir, &exe);
    assert!(
        j["rows"]
            .as_array()
            .unwrap()
            .iter()
            .all(|r| r["calls"].is_null()),
        "{j}"
    );
}
