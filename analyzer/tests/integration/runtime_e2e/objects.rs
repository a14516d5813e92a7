//! PROFIL_RANGES=all: one histogram per shared object, and the manifest naming them.

use super::*;

/// The separate debug file of a build-id, when installed (`/usr/lib/debug/.build-id/xx/y.debug`).
fn debug_file(build_id: &[u8]) -> Option<PathBuf> {
    let hex: String = build_id.iter().map(|b| format!("{b:02x}")).collect();
    if hex.len() < 3 {
        return None;
    }
    let p = PathBuf::from(format!(
        "/usr/lib/debug/.build-id/{}/{}.debug",
        &hex[..2],
        &hex[2..]
    ));
    p.is_file().then_some(p)
}

#[test]
fn ranges_all_profiles_shared_objects_into_their_own_files() {
    let dir = TempDir::new("ranges-all");
    let exe = libm_prog(&dir);
    let all_gmon = || {
        let mut v: Vec<String> = fs::read_dir(&dir.0)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with("gmon.out") && !n.ends_with(".stacks"))
            .collect();
        v.sort();
        v
    };
    // PROFIL_RANGES=exe: the executable alone: no manifest, no other file.
    let r = run(
        &dir,
        &exe,
        &["20"],
        &[("PROFIL_HZ", "1000"), ("PROFIL_RANGES", "exe")],
    );
    assert_eq!((r.status, r.stderr.as_str()), (0, ""), "{r:?}");
    assert_eq!(all_gmon(), ["gmon.out"]);
    fs::remove_file(dir.join("gmon.out")).unwrap();
    // By default (issue 14) every shared object is profiled too: the manifest lists libm, whose
    // file is beside gmon.out.
    let r = run(&dir, &exe, &["20"], &[("PROFIL_HZ", "1000")]);
    assert_eq!((r.status, r.stderr.as_str()), (0, ""), "{r:?}");
    let text = fs::read(dir.join("gmon.out.objects")).expect("the manifest, by default");
    let entries = gmon::manifest::parse(&text).unwrap_or_else(|e| panic!("manifest: {e}"));
    let libm = entries
        .iter()
        .find(|e| e.path.unescaped().ends_with(b"/libm.so.6"))
        .unwrap_or_else(|| panic!("no libm in {}", String::from_utf8_lossy(&text)));
    assert!(dir.join(&String::from_utf8_lossy(libm.gmon_file)).is_file());
    for f in all_gmon() {
        fs::remove_file(dir.join(&f)).unwrap();
    }

    // At the default rate, as the issue asks: the total is a count of the perf clock's
    // periods (deterministic), compared with the user time from wait4 (measured 1.6-3% apart
    // on the reference VM, where the kernel's user/system split of rusage counts some of the
    // signal delivery as user time; at 1000 Hz it reaches 4-4.5%).
    let r = run(&dir, &exe, &["300"], &[("PROFIL_RANGES", "all")]);
    assert_eq!((r.status, r.stderr.as_str()), (0, ""), "{r:?}");
    let text = fs::read(dir.join("gmon.out.objects")).expect("the manifest gmon.out.objects");
    let entries = gmon::manifest::parse(&text).unwrap_or_else(|e| panic!("manifest: {e}"));
    assert_eq!(entries[0].kind, gmon::manifest::Kind::Exe);
    assert_eq!(entries[0].gmon_file, b"gmon.out");
    assert_eq!(
        Path::new(&String::from_utf8_lossy(&entries[0].path.unescaped()).into_owned()),
        exe
    );
    let libm = entries
        .iter()
        .find(|e| e.path.unescaped().ends_with(b"/libm.so.6"))
        .unwrap_or_else(|| panic!("no libm in {}", String::from_utf8_lossy(&text)));
    assert_eq!(libm.kind, gmon::manifest::Kind::Lib);
    // The build-id recorded is the one in the file.
    let libm_path = PathBuf::from(String::from_utf8(libm.path.unescaped()).unwrap());
    let notes = Command::new("readelf")
        .arg("-n")
        .arg(&libm_path)
        .output()
        .unwrap();
    let hex: String = libm
        .build_id
        .as_bytes()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    assert!(
        !hex.is_empty() && String::from_utf8_lossy(&notes.stdout).contains(&hex),
        "build-id {hex} not in readelf -n {}",
        libm_path.display()
    );
    // Every file listed exists, parses, and together they hold the process's CPU time.
    let mut per_file = Vec::new();
    for e in &entries {
        let f = dir.join(&String::from_utf8_lossy(e.gmon_file));
        per_file.push((
            String::from_utf8_lossy(e.gmon_file).into_owned(),
            gmon_seconds(&f),
        ));
    }
    let total: f64 = per_file.iter().map(|(_, s)| s).sum();
    assert_user_time(total, &r, &format!("all objects ({per_file:?})"));
    let libm_s = gmon_seconds(&dir.join(&String::from_utf8_lossy(libm.gmon_file)));
    let exe_s = gmon_seconds(&dir.join("gmon.out"));
    assert!(
        libm_s > 2.0 * exe_s,
        "libm {libm_s} s vs the program {exe_s} s"
    );
    // The executable's file is what gprof reads as before.
    let (_, rows) = gprof_flat(&exe, &dir.join("gmon.out"));
    assert!(seconds_of(&rows, "own_work") > 0.0, "{rows:?}");
    // gprof reads libm's file against libm's symbols: the stripped library has none (gprof
    // refuses it), its separate debug file (same link-time addresses) has them when installed.
    if let Some(dbg) = debug_file(libm.build_id.as_bytes()) {
        let (_, rows) = gprof_flat(&dbg, &dir.join(&String::from_utf8_lossy(libm.gmon_file)));
        let top: Vec<&str> = rows.iter().take(2).map(|(n, _)| n.as_str()).collect();
        assert!(
            top.iter().all(|n| n.contains("sin") || n.contains("exp")),
            "libm's top functions: {rows:?}"
        );
    } else {
        eprintln!("no debug file for libm installed: gprof's view of libm not checked");
    }
    // The analyzer reads the manifest and puts libm's hottest function on top.
    let (top, text) = report_top_row(&exe, &dir.join("gmon.out"));
    assert!(top.contains("libm.so.6"), "{text}");
}
