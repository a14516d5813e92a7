//! The default report reads well: no empty table for a profile without samples (a note
//! instead), no columns that are empty for the profile, a table that fits 100 columns for C;
//! and `run` / `cargo profil` take the report and cargo options.

use crate::ux_support;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use ux_support::*;

fn fixture(name: &str) -> PathBuf {
    root().join("fixtures/gcc-pg").join(name)
}

/// The GNU file header and the first (histogram) record of `gmon`, without the arcs after it.
fn histogram_only(gmon: &[u8]) -> Vec<u8> {
    assert_eq!(&gmon[..4], b"gmon");
    assert_eq!(gmon[20], 0, "the first record is the histogram");
    let n = u32::from_le_bytes(gmon[37..41].try_into().unwrap()) as usize;
    let end = 20 + 1 + 16 + 24 + 2 * n;
    gmon[..end].to_vec()
}

fn report(dir: &Path, args: &[&str]) -> String {
    let out = Command::new(BIN)
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", show(&out));
    text(&out.stdout)
}

/// Lines of the table: the header, the rule and the rows.
fn table_lines(report: &str) -> Vec<&str> {
    report
        .lines()
        .skip_while(|l| !l.contains("function"))
        .take_while(|l| !l.is_empty())
        .collect()
}

/// Every line of `text` is at most `width` columns.
fn lines_within(text: &str, width: usize) {
    for l in text.lines() {
        assert!(
            l.chars().count() <= width,
            "{} columns: {l}\n{text}",
            l.chars().count()
        );
    }
}

/// The report's table (more than a header), each line of it at most `width` columns.
fn table_within(report: &str, width: usize) -> String {
    let lines = table_lines(report);
    assert!(lines.len() > 2, "{report}");
    for l in &lines {
        assert!(
            l.chars().count() <= width,
            "{} columns: {l}\n{report}",
            l.chars().count()
        );
    }
    lines.join("\n")
}

#[test]
fn a_profile_without_samples_gets_a_note_and_no_empty_table() {
    let s = TempDir::new("readable-zero");
    let mut g = histogram_only(&std::fs::read(fixture("loop2.gmon")).unwrap());
    let bins = 20 + 1 + 16 + 24;
    g[bins..].fill(0);
    std::fs::write(s.join("gmon.out"), g).unwrap();
    std::fs::copy(fixture("loop2"), s.join("loop2")).unwrap();
    let r = report(&s.0, &["gmon.out", "loop2"]);
    assert!(
        r.contains("note: no samples fell in loop2's own code"),
        "{r}"
    );
    assert!(!r.contains("% time") && !r.contains("---"), "{r}");
}

#[test]
fn per_call_columns_are_left_out_without_arcs() {
    let s = TempDir::new("readable-noarcs");
    let g = histogram_only(&std::fs::read(fixture("loop2.gmon")).unwrap());
    std::fs::write(s.join("gmon.out"), g).unwrap();
    std::fs::copy(fixture("loop2"), s.join("loop2")).unwrap();
    let r = report(&s.0, &["gmon.out", "loop2"]);
    let header = table_lines(&r)[0];
    assert!(
        header.contains("samples") && header.contains("function"),
        "{r}"
    );
    for gone in ["calls", "self/call", "total/call"] {
        assert!(!header.contains(gone), "{gone} in\n{r}");
    }
    // No debug info in this fixture: no location column either.
    assert!(!header.contains("location"), "{r}");
    // With arcs, the per-call columns are there.
    let r = report(
        &root(),
        &[
            fixture("loop2").to_str().unwrap(),
            fixture("loop2.gmon").to_str().unwrap(),
        ],
    );
    assert!(table_lines(&r)[0].contains("self/call"), "{r}");
}

#[test]
fn the_table_of_a_c_program_with_calls_fits_100_columns() {
    for prog in ["loop2", "cycle", "recursion", "threads"] {
        let r = report(
            &root(),
            &[
                fixture(prog).to_str().unwrap(),
                fixture(&format!("{prog}.gmon")).to_str().unwrap(),
            ],
        );
        table_within(&r, 100);
        // Every sample count is a whole number.
        for l in table_lines(&r).iter().skip(2) {
            let samples = l.split('|').nth(2).unwrap().trim();
            assert!(samples.parse::<u64>().is_ok(), "{samples:?} in {l}");
        }
    }
}

#[test]
fn run_takes_lines_and_inline() {
    let s = TempDir::new("readable-run");
    gcc(&demo_source(), &s.join("demo"), &["-g"]);
    for (flag, title) in [
        ("-l", "Self time per source line of "),
        ("--inline", "Self time by source function of "),
    ] {
        let out = Command::new(BIN)
            .args(["run", flag, "--report", "-", "--hz", "1000", "./demo", "3"])
            .current_dir(&s.0)
            .env_remove("LD_PRELOAD")
            .output()
            .unwrap();
        assert!(out.status.success(), "{flag}: {}", show(&out));
        let stdout = text(&out.stdout);
        assert!(stdout.contains(title), "{flag}: {stdout}");
        // Sample counts are whole numbers here too (shares of split bins are rounded).
        let rows = stdout
            .lines()
            .skip_while(|l| !(l.contains("samples") && l.contains('|')))
            .skip(2)
            .take_while(|l| l.contains('|'));
        let col = if flag == "-l" { 3 } else { 2 };
        for l in rows {
            let cell = l.split('|').nth(col).unwrap().trim();
            assert!(cell.parse::<u64>().is_ok(), "{flag}: {cell:?} in {l}");
        }
    }
}

#[test]
fn cargo_profil_passes_features_profile_and_manifest_path_to_cargo() {
    let s = TempDir::new("readable-cargo");
    let out = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
        .args(["new", "--quiet", "--vcs", "none", "feat"])
        .current_dir(&s.0)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", show(&out));
    let proj = s.join("feat");
    std::fs::write(
        proj.join("src/main.rs"),
        r#"fn main() {
    if cfg!(feature = "loud") { println!("loud"); }
    if cfg!(feature = "quiet") { println!("quiet"); }
    if cfg!(debug_assertions) { println!("debug"); } else { println!("optimized"); }
}
"#,
    )
    .unwrap();
    let manifest = std::fs::read_to_string(proj.join("Cargo.toml")).unwrap();
    std::fs::write(
        proj.join("Cargo.toml"),
        format!(
            "{manifest}\n[features]\ndefault = [\"quiet\"]\nloud = []\nquiet = []\n\n\
             [profile.fast]\ninherits = \"release\"\n"
        ),
    )
    .unwrap();
    let bin_dir = Path::new(CARGO_PROFIL).parent().unwrap();
    let path = format!("{}:{}", bin_dir.display(), std::env::var("PATH").unwrap());
    // From the parent directory: only --manifest-path says which project.
    let out = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
        .args([
            "profil",
            "--manifest-path",
            "feat/Cargo.toml",
            "--features",
            "loud",
            "--no-default-features",
            "--profile",
            "fast",
            "--report",
            "-",
        ])
        .current_dir(&s.0)
        .env("PATH", path)
        .env_remove("CARGO_TARGET_DIR")
        .env_remove("CARGO_BUILD_TARGET_DIR")
        .env_remove("RUSTFLAGS")
        .env_remove("CARGO_ENCODED_RUSTFLAGS")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", show(&out));
    let stdout = text(&out.stdout);
    let program: Vec<&str> = stdout.lines().take(2).collect();
    assert_eq!(program, ["loud", "optimized"], "{}", show(&out));
    assert!(
        stdout.contains("Flat profile of") || stdout.contains("note: "),
        "{stdout}"
    );
}

/// A Rust program whose hot functions have long generic paths: every line of the report
/// stays within 100 columns (also when a stray sample lands in the standard library, whose
/// location is long), the names lose their generic arguments and leading modules, the two
/// instances of the generic method keep the argument that tells them apart (`--wide` and JSON
/// keep them whole), and the locations are relative to the project (no absolute path into a
/// build directory).
#[test]
fn long_rust_names_are_shortened_the_report_fits_100_columns_and_wide_shows_them_whole() {
    let s = TempDir::new("readable-rust");
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = Command::new(&cargo)
        .args(["new", "--quiet", "--vcs", "none", "generic_names_project"])
        .current_dir(&s.0)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", show(&out));
    let proj = s.join("generic_names_project");
    std::fs::write(
        proj.join("src/main.rs"),
        r#"
pub mod deeply { pub mod nested { pub mod module_path {
    pub struct Accumulator<T, const N: usize>(pub [T; N]);
    impl<T: Copy + Into<u64>, const N: usize> Accumulator<T, N> {
        #[inline(never)]
        pub fn accumulate_with<F: Fn(u64) -> u64>(&self, rounds: u64, f: F) -> u64 {
            let mut x = 0u64;
            for r in 0..rounds {
                for v in self.0 { x = std::hint::black_box(f(x ^ v.into()).wrapping_add(r)); }
            }
            x
        }
    }
}}}
use deeply::nested::module_path::Accumulator;
fn main() {
    let n: u64 = std::env::args().nth(1).unwrap().parse().unwrap();
    let a = Accumulator::<u32, 64>([7; 64]);
    let b = Accumulator::<u16, 64>([3; 64]);
    let x = a.accumulate_with(n, |v| v.wrapping_mul(31));
    let y = b.accumulate_with(n, |v| v.rotate_left(5));
    println!("{}", x ^ y);
}
"#,
    )
    .unwrap();
    // Line tables, so that the report has locations.
    let manifest = std::fs::read_to_string(proj.join("Cargo.toml")).unwrap();
    std::fs::write(
        proj.join("Cargo.toml"),
        format!("{manifest}\n[profile.release]\ndebug = 1\n"),
    )
    .unwrap();
    let bin_dir = Path::new(CARGO_PROFIL).parent().unwrap();
    let path = format!("{}:{}", bin_dir.display(), std::env::var("PATH").unwrap());
    let out = Command::new(&cargo)
        .args(["profil", "--release", "--report", "-", "--", "3000000"])
        .current_dir(&proj)
        .env("PATH", path)
        // The flat table's width: PCs only (the runtime's sampled arcs add the call columns,
        // whose presentation is issue 17's analyzer side).
        .env("PROFIL_STACKS", "0")
        .env_remove("CARGO_TARGET_DIR")
        .env_remove("CARGO_BUILD_TARGET_DIR")
        .env_remove("RUSTFLAGS")
        .env_remove("CARGO_ENCODED_RUSTFLAGS")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", show(&out));
    let stdout = text(&out.stdout);
    let table = table_within(&stdout, 100);
    for l in stdout.lines() {
        assert!(l.chars().count() <= 100, "{l}\n{stdout}");
    }
    // The two instances are told apart (issue 29: both read
    // `…::Accumulator<…>::accumulate_with`), by the argument that differs.
    assert!(
        table.contains("::accumulate_with<u32, …>") && table.contains("::accumulate_with<u16, …>"),
        "{stdout}"
    );
    assert!(
        !table.contains("<T") && !table.contains("/tmp/"),
        "{stdout}"
    );
    // (`src/main.rs:6`, `main.rs:6` or `…in.rs:6` as the table needs the columns: how wide
    // the run's figures come out decides.)
    assert!(table.contains(".rs:"), "{stdout}");
    // `--wide` shows the full names and the executable's full path.
    let exe = proj.join(format!("target/{}/release/generic_names_project", host()));
    let wide = Command::new(BIN)
        .arg("--wide")
        .arg("gmon.out")
        .arg(&exe)
        .current_dir(&proj)
        .output()
        .unwrap();
    assert!(wide.status.success(), "{}", show(&wide));
    let wide = text(&wide.stdout);
    assert!(
        wide.contains(&format!("Flat profile of {} ", exe.display()))
            && wide.contains("src/main.rs:")
            && wide.contains("generic_names_project::deeply::nested::module_path::Accumulator<")
            && wide.lines().any(|l| l.chars().count() > 100),
        "{wide}"
    );
    // JSON keeps the full name.
    let json = Command::new(BIN)
        .args(["--json", "gmon.out"])
        .arg(proj.join(format!("target/{}/release/generic_names_project", host())))
        .current_dir(&proj)
        .output()
        .unwrap();
    assert!(json.status.success(), "{}", show(&json));
    // (Legacy mangling names the generic parameters, v0 mangling the arguments.)
    let json = text(&json.stdout);
    assert!(
        json.contains("generic_names_project::deeply::nested::module_path::Accumulator<")
            && json.contains(">::accumulate_with"),
        "{json}"
    );
}

fn host() -> String {
    let out = Command::new("rustc").arg("-vV").output().unwrap();
    text(&out.stdout)
        .lines()
        .find_map(|l| l.strip_prefix("host: ").map(str::to_owned))
        .unwrap()
}

/// One histogram bin over two functions is split between them by byte overlap: the shares
/// are fractional, the table still shows whole samples (JSON keeps the exact share).
#[test]
fn split_bins_show_whole_samples_in_tables() {
    let s = TempDir::new("readable-split");
    // nm: inner at 0x11c9 (0x37 bytes), outer at 0x1200 (0x65 bytes): one bin over
    // [0x11f0, 0x1210) has 16 bytes of each.
    let mut g = b"gmon".to_vec();
    g.extend_from_slice(&1u32.to_le_bytes());
    g.extend_from_slice(&[0; 12]);
    g.push(0);
    g.extend_from_slice(&0x11f0u64.to_le_bytes());
    g.extend_from_slice(&0x1210u64.to_le_bytes());
    g.extend_from_slice(&1u32.to_le_bytes());
    g.extend_from_slice(&100u32.to_le_bytes());
    g.extend_from_slice(b"seconds\0\0\0\0\0\0\0\0s");
    g.extend_from_slice(&7u16.to_le_bytes());
    std::fs::write(s.join("gmon.out"), g).unwrap();
    std::fs::copy(fixture("loop2"), s.join("loop2")).unwrap();
    let r = report(&s.0, &["gmon.out", "loop2"]);
    let lines = table_lines(&r);
    let col = lines[0]
        .split('|')
        .position(|c| c.trim() == "samples")
        .unwrap();
    let rows = &lines[2..];
    assert_eq!(rows.len(), 2, "{r}");
    for l in rows {
        let cell = l.split('|').nth(col).unwrap().trim();
        assert!(cell.parse::<u64>().is_ok(), "{cell:?} in {l}\n{r}");
    }
    let json = report(&s.0, &["--json", "gmon.out", "loop2"]);
    assert!(json.contains("\"samples\": 3.5"), "{json}");
}

/// Long names and long locations together: names and locations are shortened until every
/// line of the report fits 100 columns (it was 120: a file name was never cut).
#[test]
fn long_names_and_locations_still_fit_100_columns() {
    let s = TempDir::new("readable-wide");
    let deep = s.join("first_directory/second_directory/third_directory");
    std::fs::create_dir_all(&deep).unwrap();
    let src = deep.join("a_source_file_with_a_rather_long_name_too.c");
    std::fs::write(
        &src,
        r#"
volatile unsigned long sink;
__attribute__((noinline)) void a_function_whose_name_goes_on_and_on_for_quite_a_while_first(unsigned long n) {
    for (unsigned long i = 0; i < n; i++) sink += i * 7;
}
__attribute__((noinline)) void a_function_whose_name_goes_on_and_on_for_quite_a_while_second(unsigned long n) {
    for (unsigned long i = 0; i < n; i++) sink ^= i * 13;
}
int main(void) {
    for (int k = 0; k < 3; k++) {
        a_function_whose_name_goes_on_and_on_for_quite_a_while_first(40000000);
        a_function_whose_name_goes_on_and_on_for_quite_a_while_second(40000000);
    }
    return 0;
}
"#,
    )
    .unwrap();
    let out = build_and_run(&s.0, "gcc", &src, "wide", false);
    assert!(out.status.success(), "{}", show(&out));
    let stdout = text(&out.stdout);
    let table = table_within(&stdout, 100);
    for l in stdout.lines() {
        assert!(l.chars().count() <= 100, "{l}\n{stdout}");
    }
    assert!(table.contains("…") && table.contains("_second"), "{stdout}");
    // The file's name keeps its end and the line (issue 24: the table fits 100 columns).
    assert!(table.contains("_long_name_too.c:"), "{stdout}");
}

/// No line of a report ends in padding (the table padded its last column to the widest
/// name on every row).
#[test]
fn no_line_ends_in_padding() {
    let s = TempDir::new("readable-padding");
    std::fs::copy(fixture("loop2.gmon"), s.join("gmon.out")).unwrap();
    std::fs::copy(fixture("loop2"), s.join("loop2")).unwrap();
    for args in [&["gmon.out", "loop2"][..], &["-l", "gmon.out", "loop2"]] {
        let r = report(&s.0, args);
        assert!(table_lines(&r).len() > 2, "{r}");
        for l in r.lines() {
            assert!(!l.ends_with(' '), "{args:?}: {l:?}\n{r}");
        }
    }
}

/// Long demangled C++ names keep the function's name when shortened: the parameter list goes
/// first (they were cut from the left down to their parameters: `… int, ht_lookup_option)`).
#[test]
fn long_cxx_names_keep_the_function_when_shortened() {
    use profil_report::render::names::short_name;
    for (full, want) in [
        (
            "ht_lookup_with_hash(ht*, unsigned char const*, unsigned long, unsigned int, ht_lookup_option)",
            "ht_lookup_with_hash(…)",
        ),
        (
            "gcc::ira_costs::record_operand_costs::move_cost(machine_mode)",
            "…::record_operand_costs::move_cost(…)",
        ),
        (
            "std::vector<int, std::allocator<int> >::_M_realloc_insert(iterator, int const&) const",
            "…::vector<…>::_M_realloc_insert(…) const",
        ),
    ] {
        let short = short_name(full, 40);
        assert!(short.chars().count() <= 40, "{short}");
        assert!(short.ends_with(want) || short == want, "{full}: {short}");
    }
    // Short enough: unchanged.
    assert_eq!(short_name("f(int)", 32), "f(int)");
}

/// The demo's table under `run` (totals, intervals and locations) fits 100 columns (it was
/// 102-103: a zero low end written `0.00 s–3.69 ms`, and a 120-column limit).
#[test]
fn the_table_of_a_run_with_stacks_fits_100_columns() {
    let s = TempDir::new("readable-run100");
    // The guide's layout: the source in a directory of its own (`demo/prog.c:31`).
    std::fs::create_dir_all(s.join("demo")).unwrap();
    gcc(&demo_source(), &s.join("demo/prog"), &[]);
    let out = Command::new(BIN)
        .args(["run", "./demo/prog", "5"])
        .current_dir(&s.0)
        .env_remove("LD_PRELOAD")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", show(&out));
    let err = text(&out.stderr);
    assert!(err.contains(" total "), "{err}");
    table_within(&err, 100);
}

/// Every line `run` prints for a stripped system program with shared objects fits 100
/// columns: the warning that names its debug package (330-360 characters on one line), the
/// header, the unsampled line, the table with totals (its fixed columns alone were 91: the
/// total's interval is left to `--wide`) and the call graph; the report read again from the
/// files, too; `--wide` gives the total's interval back. An address-range row keeps its
/// object's name (`<sort+0x…>`, not `<+0x…>`), as every other view names it.
#[test]
fn every_line_of_a_stripped_programs_report_fits_100_columns() {
    let s = TempDir::new("readable-stripped");
    let mut x = 7u64;
    let lines: String = (0..200_000)
        .map(|_| {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            format!("{}\n", x >> 20)
        })
        .collect();
    std::fs::write(s.join("input.txt"), lines).unwrap();
    let out = Command::new(BIN)
        .args(["run", "sort", "input.txt", "-o", "sorted.txt"])
        .current_dir(&s.0)
        .env_remove("LD_PRELOAD")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", show(&out));
    let again = Command::new(BIN)
        .args(["gmon.out", "/usr/bin/sort"])
        .current_dir(&s.0)
        .output()
        .unwrap();
    assert!(again.status.success(), "{}", show(&again));
    let all = format!(
        "{}{}{}{}",
        text(&out.stdout),
        text(&out.stderr),
        text(&again.stdout),
        text(&again.stderr)
    );
    assert!(all.contains("no .symtab"), "{all}");
    assert!(
        all.contains("| <sort+0x") && !all.contains("| <+0x"),
        "{all}"
    );
    lines_within(&all, 100);
    // With the stacks `run` records, the table has totals; `--wide` adds their interval.
    assert!(all.contains("| total"), "{all}");
    assert!(!all.contains("total 95%"), "{all}");
    let wide = Command::new(BIN)
        .args(["--wide", "gmon.out", "/usr/bin/sort"])
        .current_dir(&s.0)
        .output()
        .unwrap();
    assert!(wide.status.success(), "{}", show(&wide));
    assert!(text(&wide.stdout).contains("total 95%"), "{}", show(&wide));
}

/// A C++ program with long demangled names (namespaces, templates, parameter lists) under
/// `run`: every line fits 100 columns, each name keeps its function's name (the template
/// arguments, parameters and leading namespaces go first), and `--wide` shows the names
/// whole (issue 24).
#[test]
fn cxx_names_keep_the_function_in_100_columns_and_wide_shows_them_whole() {
    let s = TempDir::new("readable-cxx");
    let src = s.join("names.cpp");
    std::fs::write(
        &src,
        r#"
#include <vector>
#include <map>
#include <string>
namespace outer_namespace { namespace inner_namespace_with_a_long_name {
template <typename Key, typename Value>
struct RegistryOfThings {
    std::map<Key, std::vector<Value>> items;
    __attribute__((noinline)) unsigned long accumulate_every_item_slowly(unsigned long rounds,
            const std::vector<std::string>& labels, std::map<int, std::string>* extra) {
        volatile unsigned long x = labels.size() + (extra ? 1 : 0);
        for (unsigned long r = 0; r < rounds; r++) x = x * 31 + r;
        return x;
    }
};
}}
int main() {
    outer_namespace::inner_namespace_with_a_long_name::RegistryOfThings<std::string, std::vector<int>> a;
    outer_namespace::inner_namespace_with_a_long_name::RegistryOfThings<int, std::string> b;
    std::vector<std::string> labels{"x"};
    unsigned long t = 0;
    for (int k = 0; k < 4; k++) {
        t += a.accumulate_every_item_slowly(30000000, labels, nullptr);
        t += b.accumulate_every_item_slowly(30000000, labels, nullptr);
    }
    return (int)(t & 1);
}
"#,
    )
    .unwrap();
    // With the sampled stacks the table has no room for the totals' interval: it waits for
    // `--wide`, and the note says so; the names, as a last resort, are their bare function
    // identifiers (never cut), told apart by their numbers.
    let out = build_and_run(&s.0, "g++", &src, "names", true);
    let report = text(&out.stdout);
    assert!(
        report.contains(" total ") && !report.contains("total 95%"),
        "{report}"
    );
    assert!(
        report.contains("(its 95% interval: --wide, --json)"),
        "{report}"
    );
    assert!(
        report.contains("accumulate_every_item_slowly #1"),
        "{report}"
    );
    lines_within(&format!("{report}{}", text(&out.stderr)), 100);
    let wide = Command::new(BIN)
        .args(["--wide", "gmon.out", "names"])
        .current_dir(&s.0)
        .output()
        .unwrap();
    assert!(text(&wide.stdout).contains("total 95%"), "{}", show(&wide));
    // PCs only: every line within 100 columns.
    {
        let stacks = false;
        let out = build_and_run(&s.0, "g++", &src, "names", stacks);
        let report = format!("{}{}", text(&out.stdout), text(&out.stderr));
        assert!(report.contains("accumulate_every_item_slowly"), "{report}");
        assert_eq!(
            report.contains(" total "),
            stacks,
            "stacks {stacks}: {report}"
        );
        lines_within(&report, 100);
        // The names lost their template arguments and parameter lists, not their function.
        assert!(
            !report.contains("std::allocator") && !report.contains("unsigned long rounds"),
            "{report}"
        );
    }
    let wide = Command::new(BIN)
        .args(["--wide", "gmon.out", "names"])
        .current_dir(&s.0)
        .output()
        .unwrap();
    assert!(wide.status.success(), "{}", show(&wide));
    let wide = text(&wide.stdout);
    assert!(
        wide.contains(
            "outer_namespace::inner_namespace_with_a_long_name::RegistryOfThings<std::__cxx11::basic_string"
        ) && wide.contains("accumulate_every_item_slowly(unsigned long"),
        "{wide}"
    );
}

/// A C++ program built with `-pg` (call counts, gprof's per-call columns, the call graph
/// estimated from call counts) with a long templated method: every line of the default report
/// fits 100 columns — the per-call times wait for `--wide`, said under the table, and the
/// graph shortens its names and wraps its long lines (the graph was 450 columns wide, the
/// table 117; issue 24).
#[test]
fn a_pg_cxx_programs_report_and_call_graph_fit_100_columns() {
    let s = TempDir::new("readable-pg-cxx");
    let src = s.join("n.cpp");
    std::fs::write(
        &src,
        r#"
#include <vector>
#include <string>
namespace outer_namespace { namespace inner_namespace_with_a_long_name {
template <typename K> struct RegistryOfThings {
    __attribute__((noinline)) unsigned long accumulate_every_item_slowly(unsigned long rounds,
            const std::vector<std::string>& labels) {
        volatile unsigned long x = labels.size();
        for (unsigned long r = 0; r < rounds; r++) x = x * 31 + r;
        return x;
    }
};
}}
int main(int argc, char **argv) {
    outer_namespace::inner_namespace_with_a_long_name::RegistryOfThings<std::string> a;
    std::vector<std::string> labels{"x"};
    return (int)(a.accumulate_every_item_slowly(argc > 1 ? 100000000 : 50000000, labels) & 1);
}
"#,
    )
    .unwrap();
    let cc = Command::new("g++")
        .args(["-O1", "-g", "-pg", "-o", "n", "n.cpp"])
        .current_dir(&s.0)
        .output()
        .unwrap();
    assert!(cc.status.success(), "{}", show(&cc));
    let ran = Command::new("./n").current_dir(&s.0).output().unwrap();
    assert!(s.join("gmon.out").exists(), "{}", show(&ran));
    let out = Command::new(BIN)
        .args(["gmon.out", "n"])
        .current_dir(&s.0)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", show(&out));
    let report = text(&out.stdout);
    assert!(report.contains("accumulate_every_item_slowly"), "{report}");
    assert!(report.contains("Call graph"), "{report}");
    lines_within(&format!("{report}{}", text(&out.stderr)), 100);
    let wide = Command::new(BIN)
        .args(["--wide", "gmon.out", "n"])
        .current_dir(&s.0)
        .output()
        .unwrap();
    let wide = text(&wide.stdout);
    assert!(
        wide.contains("total/call") && wide.contains("RegistryOfThings<std::__cxx11::basic_string"),
        "{wide}"
    );
}

/// Compile `src` with `compiler -O1 -g` into `dir/exe` and `run --report - ./exe` it, with the
/// sampled stacks or the PCs only (`PROFIL_STACKS=0`: the flat table without the stacks' total
/// columns).
fn build_and_run(dir: &Path, compiler: &str, src: &Path, exe: &str, stacks: bool) -> Output {
    let out = Command::new(compiler)
        .args(["-O1", "-g", "-o", exe])
        .arg(src)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", show(&out));
    Command::new(BIN)
        .args(["run", "--report", "-"])
        .arg(format!("./{exe}"))
        .current_dir(dir)
        .env_remove("LD_PRELOAD")
        .env("PROFIL_STACKS", if stacks { "1" } else { "0" })
        .output()
        .unwrap()
}
