//! dlopen behaves exactly as without the runtime, and objects loaded later are profiled.

use super::*;

/// A shared object built from a fixture (`gcc -O2 -shared -fPIC`).
fn shared_object(dir: &TempDir, src: &str, out: &str, flags: &[&str]) -> PathBuf {
    let so = dir.join(out);
    if let Some(parent) = so.parent() {
        fs::create_dir_all(parent).unwrap();
    }
    must(
        Command::new("gcc")
            .args(["-O2", "-shared", "-fPIC"])
            .args(flags)
            .arg("-o")
            .arg(&so)
            .arg(fixtures().join(src)),
    );
    so
}

/// Environment variables for [`run`].
type Env<'a> = Vec<(&'a str, &'a str)>;

/// What a run shows the user: status, stdout, stderr.
fn shown(r: &Run) -> (i32, &str, &str) {
    (r.status, r.stdout.as_str(), r.stderr.as_str())
}

#[test]
fn dlopen_searches_the_programs_runpath_and_rpath_with_the_runtime_linked_or_preloaded() {
    let dir = TempDir::new("dlopen-runpath");
    shared_object(&dir, "plug.c", "plugins/libplug.so", &[]);
    let so = runtime_path(true);
    let so = so.to_str().unwrap();
    let origin = "-Wl,-rpath,$ORIGIN/plugins";
    // `new:` loads with dlmopen into a new namespace.
    let args = ["libplug.so", "libm.so.6", "new:libplug.so"];
    for dtags in ["--enable-new-dtags", "--disable-new-dtags"] {
        let dt = format!("-Wl,{dtags}");
        let plain = gcc(&dir, "dlhost.c", "host", &[origin, &dt], false);
        let expected = run(&dir, &plain, &args, &[]);
        assert_eq!(
            expected.status, 0,
            "{dtags}, without the runtime: {expected:?}"
        );
        assert!(
            expected.stdout.contains("libplug.so: loaded"),
            "{expected:?}"
        );
        let linked = gcc(&dir, "dlhost.c", "host-linked", &[origin, &dt], true);
        let rdynamic = gcc(
            &dir,
            "dlhost.c",
            "host-rdynamic",
            &[origin, &dt, "-rdynamic"],
            true,
        );
        let cases: [(&str, &Path, Env<'_>); 7] = [
            ("preloaded", &plain, vec![("LD_PRELOAD", so)]),
            (
                "preloaded, PROFIL_OFF=1",
                &plain,
                vec![("LD_PRELOAD", so), ("PROFIL_OFF", "1")],
            ),
            (
                "preloaded, PROFIL_RANGES=all",
                &plain,
                vec![("LD_PRELOAD", so), ("PROFIL_RANGES", "all")],
            ),
            (
                "preloaded, PROFIL_MODE=pcsample",
                &plain,
                vec![("LD_PRELOAD", so), ("PROFIL_MODE", "pcsample")],
            ),
            ("linked", &linked, vec![("PROFIL_RANGES", "all")]),
            ("linked and preloaded", &linked, vec![("LD_PRELOAD", so)]),
            (
                "linked with -rdynamic and preloaded",
                &rdynamic,
                vec![("LD_PRELOAD", so), ("PROFIL_RANGES", "all")],
            ),
        ];
        for (what, exe, env) in cases {
            let r = run(&dir, exe, &args, &env);
            assert_eq!(shown(&r), shown(&expected), "{dtags}, {what}");
        }
    }
}

#[test]
fn a_dlopen_in_another_librarys_constructor_before_ours_behaves_as_without_us() {
    let dir = TempDir::new("dlopen-early");
    let early = shared_object(&dir, "dlopen_early.c", "libdlearly.so", &[]);
    let exe = gcc(&dir, "dlhost.c", "host", &[], false);
    let expected = run(&dir, &exe, &[], &[("LD_PRELOAD", early.to_str().unwrap())]);
    assert_eq!(
        shown(&expected),
        (0, "early dlopen: ok\n", ""),
        "without the runtime"
    );
    // Preloaded objects' constructors run in reverse order: libearly's before ours.
    let preload = format!("{} {}", runtime_path(true).display(), early.display());
    for env in [
        vec![],
        vec![("PROFIL_OFF", "1")],
        vec![("PROFIL_RANGES", "all")],
    ] {
        let mut env = env;
        env.push(("LD_PRELOAD", &preload));
        let r = run(&dir, &exe, &[], &env);
        assert_eq!(shown(&r), shown(&expected), "{env:?}");
    }
}

#[test]
fn python_ctypes_finds_libpython_with_the_runtime_preloaded() {
    let dir = TempDir::new("dlopen-python");
    let Ok(python) = which("python3") else {
        eprintln!("no python3: test skipped");
        return;
    };
    let script = "import ctypes; ctypes.CDLL('libpython3.so'); print('loaded')";
    let expected = run(&dir, &python, &["-c", script], &[]);
    if expected.status != 0 {
        eprintln!("this python3 cannot load libpython3.so by itself: test skipped: {expected:?}");
        return;
    }
    let so = runtime_path(true);
    for env in [vec![], vec![("PROFIL_OFF", "1")]] {
        let mut env = env;
        env.push(("LD_PRELOAD", so.to_str().unwrap()));
        let r = run(&dir, &python, &["-c", script], &env);
        assert_eq!(shown(&r), shown(&expected), "{env:?}");
    }
}

/// The first `name` on `PATH`, resolved through symbolic links (pyenv shims are scripts: the
/// real interpreter is what `sys.executable` names).
fn which(name: &str) -> Result<PathBuf, String> {
    let out = Command::new(name)
        .args(["-c", "import sys; print(sys.executable)"])
        .output()
        .map_err(|e| e.to_string())?;
    let p = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
    if out.status.success() && p.is_file() {
        Ok(p)
    } else {
        Err(format!("{name}: {out:?}"))
    }
}

/// `fixtures/runtime/dlcycle.c` and its two plugins: A (1 share of the work) is loaded,
/// unloaded, and B (3 shares) loaded in its place.
fn dlcycle(dir: &TempDir, linked: bool) -> (PathBuf, [PathBuf; 2]) {
    let a = shared_object(dir, "plug.c", "libplug_a.so", &["-DPLUG_NAME=\"a\""]);
    let b = shared_object(dir, "plug.c", "libplug_b.so", &["-DPLUG_NAME=\"b\""]);
    let name = if linked { "dlcycle-linked" } else { "dlcycle" };
    (gcc(dir, "dlcycle.c", name, &[], linked), [a, b])
}

const CYCLE_UNITS: [&str; 2] = ["40", "120"];

fn cycle_args(libs: &[PathBuf; 2]) -> [&str; 4] {
    [
        libs[0].to_str().unwrap(),
        CYCLE_UNITS[0],
        libs[1].to_str().unwrap(),
        CYCLE_UNITS[1],
    ]
}

#[test]
fn ranges_all_profiles_objects_loaded_later_and_one_loaded_where_another_was_unloaded() {
    let dir = TempDir::new("dlopen-cycle");
    for linked in [true, false] {
        let (exe, libs) = dlcycle(&dir, linked);
        let so = runtime_path(true);
        let mut env = vec![("PROFIL_RANGES", "all")];
        if !linked {
            env.push(("LD_PRELOAD", so.to_str().unwrap()));
        }
        let r = run(&dir, &exe, &cycle_args(&libs), &env);
        assert_eq!(
            shown(&r),
            (0, "same address\n", ""),
            "linked {linked}: B must be loaded where A was for this test"
        );
        let text = fs::read(dir.join("gmon.out.objects")).expect("the manifest");
        let entries = gmon::manifest::parse(&text).unwrap_or_else(|e| panic!("manifest: {e}"));
        let seconds = |lib: &Path| {
            let e = entries
                .iter()
                .find(|e| e.path.unescaped() == lib.as_os_str().as_encoded_bytes())
                .unwrap_or_else(|| {
                    panic!(
                        "linked {linked}: no {} in\n{}",
                        lib.display(),
                        String::from_utf8_lossy(&text)
                    )
                });
            gmon_seconds(&dir.join(&String::from_utf8_lossy(e.gmon_file)))
        };
        let (a, b) = (seconds(&libs[0]), seconds(&libs[1]));
        let total: f64 = entries
            .iter()
            .map(|e| gmon_seconds(&dir.join(&String::from_utf8_lossy(e.gmon_file))))
            .sum();
        // B does three times A's work; together nearly all of the CPU time.
        let share = b / (a + b);
        assert!(
            (0.65..=0.85).contains(&share) && a + b > 0.8 * total,
            "linked {linked}: A {a:.3} s, B {b:.3} s of {total:.3} s"
        );
        assert_user_time(total, &r, &format!("linked {linked}: all objects"));
        // The analyzer reads both entries, at the same addresses, each against its own file.
        let (top, text) = report_top_row(&exe, &dir.join("gmon.out"));
        assert!(top.contains("libplug_b.so"), "{text}");
        assert!(text.contains("libplug_a.so"), "{text}");
        for f in gmon_files(&dir) {
            fs::remove_file(dir.join(&f)).unwrap();
        }
    }
}

#[test]
fn pcsample_mode_tells_an_unloaded_object_from_the_one_loaded_at_its_address() {
    let dir = TempDir::new("dlopen-cycle-pcsample");
    for linked in [true, false] {
        let (exe, libs) = dlcycle(&dir, linked);
        let so = runtime_path(true);
        let mut env = vec![("PROFIL_MODE", "pcsample")];
        if !linked {
            env.push(("LD_PRELOAD", so.to_str().unwrap()));
        }
        let r = run(&dir, &exe, &cycle_args(&libs), &env);
        assert_eq!(shown(&r), (0, "same address\n", ""), "linked {linked}");
        let data = fs::read(dir.join("gmon.out")).unwrap();
        let f = gmon::pcsample::parse(&data).unwrap_or_else(|e| panic!("pcsample file: {e}"));
        let index = |lib: &Path| {
            f.objects
                .iter()
                .position(|o| o.path == lib.as_os_str().as_encoded_bytes())
                .unwrap_or_else(|| {
                    panic!("linked {linked}: no {} in {:?}", lib.display(), f.objects)
                })
        };
        let (ia, ib) = (index(&libs[0]), index(&libs[1]));
        let (mut a, mut b, mut all) = (0usize, 0usize, 0usize);
        for s in f.samples() {
            all += 1;
            match f.object_of(s.pc) {
                Some(o) if o == ia => a += 1,
                Some(o) if o == ib => b += 1,
                _ => {}
            }
        }
        let share = b as f64 / (a + b).max(1) as f64;
        assert!(
            (0.65..=0.85).contains(&share) && (a + b) as f64 > 0.8 * all as f64,
            "linked {linked}: A {a}, B {b} of {all} samples"
        );
        fs::remove_file(dir.join("gmon.out")).unwrap();
    }
}
