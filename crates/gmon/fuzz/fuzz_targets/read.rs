//! Fuzz the reader: any bytes, every target. Decoding must never panic, the no-alloc
//! iterator must agree with `parse`, and whatever parses must survive a trip through the
//! merge/write path and read back with the same totals.
#![no_main]

use gmon::merge::{OutputFormat, Profile};
use gmon::write::Writer;
use gmon::{parse, read, Target};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
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
        let Ok(p) = Profile::from_file(&f) else { continue };
        let mut out = Vec::new();
        if p.write(&mut Writer::new(&mut out, t), OutputFormat::Gnu).is_err() {
            continue;
        }
        let back = parse(&out, t).expect("our own GNU output parses");
        let q = Profile::from_file(&back).expect("our own GNU output merges");
        assert_eq!(p.total_samples(), q.total_samples());
        assert_eq!(p.arcs, q.arcs);
    }
});
