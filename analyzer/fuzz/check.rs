// The analyzer's whole input path on one fuzz input, shared by the cargo-fuzz target
// (fuzz_targets/analyze.rs) and the stable replay test (analyzer/tests/integration/fuzz_regressions.rs),
// which both `include!` this file.
//
// Input layout (every split is total: any byte string is a valid input):
//   byte 0        flags: bit 0 raw ELF (else: the base ELF with patches), bit 1 add the base
//                 profile as a second gmon file, bit 2 `-a`, bit 3 `-z`, bits 4-5 the default
//                 report's format (table, JSON, CSV), bits 6-7 which gprof sections
//   bytes 1..3    n, little-endian: the length of the ELF part
//   next n bytes  raw ELF, or patches to the base ELF: 5 bytes each, a u32 offset (taken
//                 modulo the ELF's length) and the byte to store there
//   the rest      the gmon file
// The base ELF is a gcc -pg -g build (DWARF included) of fixtures/flat/corpus/cycles.c, and
// the base profile the gmon.out it wrote (base/README.md).
//
// The gmon part is also read as a stacks file (profile::stacks) and measured: no function's
// total exceeds the samples.
//
// Nothing else is checked but the absence of panics, hangs and outsized allocations (cargo
// fuzz runs with -malloc_limit_mb); errors are the expected outcome for most inputs.

const BASE_ELF: &[u8] = include_bytes!("base/prog");
const BASE_GMON: &[u8] = include_bytes!("base/prog.gmon");

/// Run every report over the input described by `data`.
pub fn check(data: &[u8]) {
    use profil_report::gprof::cg_print::{GraphOptions, Sections};
    use profil_report::report::{self, GmonInput, Input, Inputs};
    use profil_report::request::Format;
    use std::path::PathBuf;

    let Some((&flags, rest)) = data.split_first() else {
        return;
    };
    if rest.len() < 2 {
        return;
    }
    let n = usize::from(u16::from_le_bytes([rest[0], rest[1]])).min(rest.len() - 2);
    let (elf_part, gmon) = rest[2..].split_at(n);
    let exe = if flags & 1 != 0 {
        elf_part.to_vec()
    } else {
        let mut e = BASE_ELF.to_vec();
        for p in elf_part.chunks_exact(5) {
            let off = u32::from_le_bytes([p[0], p[1], p[2], p[3]]) as usize % e.len();
            e[off] = p[4];
        }
        e
    };
    let mut gmons = vec![GmonInput::from_bytes("gmon.out", gmon.to_vec())];
    if flags & 2 != 0 {
        gmons.push(GmonInput::from_bytes("base.gmon", BASE_GMON.to_vec()));
    }
    let inputs = Inputs {
        exe: Input {
            path: PathBuf::from("prog"),
            data: exe.into(),
        },
        gmons,
    };
    let Ok(image) = report::parse_exe(&inputs.exe) else {
        return;
    };

    // --gprof -b with the sections chosen by bits 6-7.
    let opts = profil_report::gprof::Options {
        no_static: flags & 4 != 0,
        specs: &[],
        static_calls: flags & 2 != 0,
        ignore_non_functions: flags & 1 != 0,
        no_demangle: flags & 8 != 0,
        demangle_style: Default::default(),
        print_path: flags & 16 != 0,
        inline_file_names: flags & 32 != 0,
        file_format: Default::default(),
        external_symbols: None,
        // gprof's -d (every trace) with bits 4 and 5 together.
        debug: if flags & 48 == 48 { !0 } else { 0 },
        file_ordering: None,
    };
    if let Ok(a) = profil_report::gprof::Analysis::of_inputs(&inputs, &image, opts) {
        let sel = flags >> 6;
        let sections = Sections {
            flat: sel == 1 || sel == 3,
            no_flat: sel == 2,
            graph: sel == 2 || sel == 3,
            no_graph: sel == 1,
            // Bits 4-5 also choose the default report's format below.
            file_info: flags & 32 != 0,
            exec_counts: flags & 64 != 0,
            annotated_source: false,
            function_order: flags & 128 != 0,
            file_order: false,
            guess_exec_counts: true,
        };
        let mut buf = Vec::new();
        let _ = profil_report::gprof::report::print_report(
            &a,
            sections,
            GraphOptions {
                zeros: flags & 8 != 0,
                brief: flags & 16 == 0,
                width: None,
                bsd: flags & 4 != 0,
                annotate: Default::default(),
            },
            "gmon.out",
            &inputs.exe.data,
            &mut buf,
            &mut std::io::sink(),
        );
    }

    // The default report, in the format chosen by bits 4-5.
    let format = match (flags >> 4) & 3 {
        1 => Format::Json,
        2 => Format::Csv,
        _ => Format::Table,
    };
    let mut warnings = Vec::new();
    let req = profil_report::request::Request::default_report(Vec::new(), format);
    let _ = profil_report::pipeline::report(&req, &inputs, &image, &mut std::io::sink(), &mut warnings);

    // The same bytes as a stacks file (issue 17): read, then measured (nodes by address).
    let mut sampled = profil_report::profile::stacks::Sampled::default();
    if sampled.add_file("fuzz.stacks", gmon).is_ok() {
        let m = sampled.measure(64, |f| Some((f.addr % 64) as usize));
        let _ = sampled.warnings();
        assert!(m.inclusive.iter().all(|&t| t <= m.samples));
    }
}
