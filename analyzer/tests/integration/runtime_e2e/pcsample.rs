//! PROFIL_MODE=pcsample: every sample kept, in the gmon crate's pcsample format.

use super::*;

#[test]
fn pcsample_mode_keeps_every_sample_with_its_object_thread_and_time() {
    let dir = TempDir::new("pcsample-mode");
    let exe = libm_prog(&dir);
    let started = std::time::Instant::now();
    // The default rate (see the PROFIL_RANGES=all test for why).
    let r = run(&dir, &exe, &["300"], &[("PROFIL_MODE", "pcsample")]);
    let wall_ns = started.elapsed().as_nanos() as u64;
    assert_eq!((r.status, r.stderr.as_str()), (0, ""), "{r:?}");
    assert_eq!(gmon_files(&dir), ["gmon.out"], "one file, at the gmon name");
    let data = fs::read(dir.join("gmon.out")).unwrap();
    let f = gmon::pcsample::parse(&data).unwrap_or_else(|e| panic!("pcsample file: {e}"));
    assert_eq!(f.header.flags, 0);
    assert_eq!(f.header.dropped, 0);
    assert_eq!(f.objects[0].path, exe.as_os_str().as_encoded_bytes());
    let libm = f
        .objects
        .iter()
        .position(|o| o.path.ends_with(b"/libm.so.6"))
        .expect("libm in the objects");
    let samples: Vec<_> = f.samples().collect();
    // Every sample is there: the count over the CPU time is the recorded rate (within 5%).
    let expected = r.user_s * f64::from(f.header.rate_hz);
    assert!(
        (samples.len() as f64 - expected).abs() <= 0.05 * expected && samples.len() > 100,
        "{} samples vs {expected:.0} (rate {} × user {:.3} s)",
        samples.len(),
        f.header.rate_hz,
        r.user_s
    );
    let in_libm = samples
        .iter()
        .filter(|s| f.object_of(s.pc) == Some(libm))
        .count();
    let in_exe = samples
        .iter()
        .filter(|s| f.object_of(s.pc) == Some(0))
        .count();
    assert!(
        in_libm > 2 * in_exe && in_exe > 0,
        "libm {in_libm}, program {in_exe}"
    );
    // One thread; timestamps within the run.
    let tids: std::collections::BTreeSet<u32> = samples.iter().map(|s| s.tid).collect();
    assert_eq!(tids.len(), 1, "{tids:?}");
    assert!(samples.iter().all(|s| s.time_ns <= wall_ns));
    let unix_now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64;
    // The analyzer reads the file in place of a gmon file: libm's code on top.
    let (top, text) = report_top_row(&exe, &dir.join("gmon.out"));
    assert!(top.contains("libm.so.6"), "{text}");
    assert!(
        f.header.start_unix_ns <= unix_now
            && f.header.start_unix_ns + wall_ns + 1_000_000_000 >= unix_now
    );
}

#[test]
fn pcsample_mode_with_a_full_buffer_stops_and_says_so() {
    let dir = TempDir::new("pcsample-full");
    let arg = format!("link-arg={}", runtime_path(false).display());
    let exe = rustc(&dir, "split.rs", "split", &["-C", &arg]);
    let r = run(
        &dir,
        &exe,
        &["threads", "100"],
        &[
            ("PROFIL_HZ", "1000"),
            ("PROFIL_MODE", "pcsample"),
            ("PROFIL_PCSAMPLES", "300"),
        ],
    );
    assert_eq!(r.status, 0, "{r:?}");
    let lines: Vec<&str> = r.stderr.lines().collect();
    assert_eq!(lines.len(), 1, "{}", r.stderr);
    assert!(
        lines[0].starts_with("profil-rt: the pcsample buffer was full (PROFIL_PCSAMPLES); "),
        "{}",
        r.stderr
    );
    let data = fs::read(dir.join("gmon.out")).unwrap();
    let f = gmon::pcsample::parse(&data).unwrap_or_else(|e| panic!("pcsample file: {e}"));
    assert_eq!(f.header.flags, gmon::pcsample::FLAG_BUFFER_FULL);
    assert_eq!(f.samples().len(), 300);
    assert!(f.header.dropped > 0);
    assert!(
        lines[0].contains(&format!(" {} samples were not recorded", f.header.dropped)),
        "{} vs {}",
        lines[0],
        f.header.dropped
    );
    // Both worker threads (and maybe main) are in the samples.
    let tids: std::collections::BTreeSet<u32> = f.samples().map(|s| s.tid).collect();
    assert!(tids.len() >= 2, "{tids:?}");
}

#[test]
fn a_static_program_using_dlopen_keeps_working_with_the_runtime_linked_in() {
    let dir = TempDir::new("static-dlopen");
    let exe = gcc(&dir, "late.c", "late", &["-static"], true);
    let r = run(&dir, &exe, &["5"], &[("PROFIL_RANGES", "all")]);
    assert_eq!((r.status, r.stderr.as_str()), (0, ""), "{r:?}");
    gprof_flat(&exe, &dir.join("gmon.out"));
}

#[test]
fn ranges_all_profiles_an_object_loaded_later_with_dlopen() {
    let dir = TempDir::new("ranges-dlopen");
    let exe = gcc(&dir, "late.c", "late", &[], false);
    // Preloaded (the linked-in object is checked with dlcycle.c below). The default rate (see
    // the test above for why).
    let so = runtime_path(true);
    let r = run(
        &dir,
        &exe,
        &["300"],
        &[
            ("PROFIL_RANGES", "all"),
            ("LD_PRELOAD", so.to_str().unwrap()),
        ],
    );
    assert_eq!((r.status, r.stderr.as_str()), (0, ""), "{r:?}");
    let text = fs::read(dir.join("gmon.out.objects")).expect("the manifest gmon.out.objects");
    let entries = gmon::manifest::parse(&text).unwrap_or_else(|e| panic!("manifest: {e}"));
    let libm = entries
        .iter()
        .find(|e| e.path.unescaped().ends_with(b"/libm.so.6"))
        .unwrap_or_else(|| panic!("no libm in {}", String::from_utf8_lossy(&text)));
    let libm_s = gmon_seconds(&dir.join(&String::from_utf8_lossy(libm.gmon_file)));
    let total: f64 = entries
        .iter()
        .map(|e| gmon_seconds(&dir.join(&String::from_utf8_lossy(e.gmon_file))))
        .sum();
    assert!(
        libm_s > 0.5 * total,
        "libm {libm_s:.3} s of {total:.3} s: {}",
        String::from_utf8_lossy(&text)
    );
    assert_user_time(total, &r, "all objects");
}
