// The property the fuzz target checks, shared with the regression test
// (`include!`d by fuzz/fuzz_targets/read.rs and tests/integration/fuzz_regressions.rs).
//
// Any bytes, every target: decoding never panics; the no-alloc validator agrees with
// `parse`; whatever parses survives the merge/write path and reads back with the same totals.
pub fn check(data: &[u8]) {
    use gmon::merge::{OutputFormat, Profile};
    use gmon::write::Writer;
    use gmon::{parse, read, Target};

    check_stacks(data);
    let _ = Target::guess(data);
    for t in Target::candidates() {
        let parsed = parse(data, t);
        let validated = read::validate(data, t);
        assert_eq!(parsed.is_ok(), validated.is_ok());
        if let (Err(a), Err(b)) = (&parsed, &validated) {
            assert_eq!(a, b);
            assert!(a.offset <= data.len() as u64);
            let _ = a.to_string();
        }
        let Ok(f) = parsed else { continue };
        let Ok(p) = Profile::from_file(&f) else {
            continue;
        };
        for format in [OutputFormat::Gnu, OutputFormat::Bsd44, OutputFormat::OldBsd] {
            let mut out = Vec::new();
            if p.write(&mut Writer::new(&mut out, t), format).is_err() {
                continue;
            }
            // Output is bounded by the input: at most MAX_ARC_PIECES records per arc.
            assert!(out.len() <= 64 + 2 * data.len() * gmon::merge::MAX_ARC_PIECES as usize);
            let back = parse(&out, t).expect("our own output parses");
            let q = Profile::from_file(&back).expect("our own output merges");
            if format == OutputFormat::Gnu {
                assert_eq!(p.total_samples(), q.total_samples());
                assert_eq!(p.arcs, q.arcs);
            }
        }
    }
}

// The stacks file (gmon::stacks): never panics; what parses is written back and reads the same.
fn check_stacks(data: &[u8]) {
    use gmon::stacks::{parse, StacksWriter};
    let Ok(f) = parse(data) else { return };
    let mut w = StacksWriter::new(Vec::new());
    w.header(&f.header).unwrap();
    for o in &f.objects {
        w.object(o).unwrap();
    }
    for s in &f.stacks {
        w.stack_with_flags(s.count, s.depth() as u32, s.flags, s.pcs())
            .unwrap();
    }
    let out = w.finish().unwrap();
    assert!(out.len() <= data.len());
    assert_eq!(parse(&out).unwrap(), f);
}
