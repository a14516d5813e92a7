//! `profil-report --gprof ARGS…`: gprof 2.40's own command line, parsed the way its
//! `getopt_long` call parses it, so that `alias gprof='profil-report --gprof'` reads every
//! command as gprof does. clap cannot express it: gprof's style options take an *optional*
//! argument glued to the letter (`-qab` is "the call graph of `ab`", not `-q -a -b`), long
//! options may be abbreviated to any unique prefix, and options and files mix in any order
//! (GNU getopt permutes; `--` ends the options).
//!
//! Parsing yields the library's [`Request`]. Every option of gprof 2.40 is read (`-h` and `-v`
//! print gprof's own usage and version texts); an option gprof rejects fails with gprof's
//! status 1.

use profil_symbols::demangle::Style as DemangleStyle;
use std::ffi::OsString;
use std::path::PathBuf;

use profil_report::gprof::cg_print::Sections;
use profil_report::gprof::symspec::{SymSpec, Table};
use profil_report::gprof::FileFormat;
use profil_report::request::{GprofRequest, Mode, Request};

/// gprof 2.40's short options (its `getopt_long` string): a letter followed by `:` takes an
/// argument, by `::` an optional one (only glued: `-pmain`).
const SHORT: &str = "aA::bBcC::d::De:E:f:F:hiI:J::k:lLm:n:N:O:p::P::q::Q::rR:sS:t:Tvw:xyzZ::";

/// Whether an option takes an argument.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Arg {
    No,
    Required,
    Optional,
}

/// What an option stands for: a short letter, or one of gprof's long-only options.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Opt {
    Short(char),
    Demangle,
    NoDemangle,
    InlineFileNames,
}

/// gprof 2.40's long options, in its table's order (the empty names are its
/// backward-compatibility entries, reachable only as short options).
const LONG: &[(&str, Arg, Opt)] = &[
    ("line", Arg::No, Opt::Short('l')),
    ("no-static", Arg::No, Opt::Short('a')),
    ("ignore-non-functions", Arg::No, Opt::Short('D')),
    ("external-symbol-table", Arg::Required, Opt::Short('S')),
    ("annotated-source", Arg::Optional, Opt::Short('A')),
    ("no-annotated-source", Arg::Optional, Opt::Short('J')),
    ("flat-profile", Arg::Optional, Opt::Short('p')),
    ("no-flat-profile", Arg::Optional, Opt::Short('P')),
    ("graph", Arg::Optional, Opt::Short('q')),
    ("no-graph", Arg::Optional, Opt::Short('Q')),
    ("exec-counts", Arg::Optional, Opt::Short('C')),
    ("no-exec-counts", Arg::Optional, Opt::Short('Z')),
    ("function-ordering", Arg::No, Opt::Short('r')),
    ("file-ordering", Arg::Required, Opt::Short('R')),
    ("file-info", Arg::No, Opt::Short('i')),
    ("sum", Arg::No, Opt::Short('s')),
    ("all-lines", Arg::No, Opt::Short('x')),
    ("demangle", Arg::Optional, Opt::Demangle),
    ("no-demangle", Arg::No, Opt::NoDemangle),
    ("directory-path", Arg::Required, Opt::Short('I')),
    ("display-unused-functions", Arg::No, Opt::Short('z')),
    ("inline-file-names", Arg::No, Opt::InlineFileNames),
    ("min-count", Arg::Required, Opt::Short('m')),
    ("print-path", Arg::No, Opt::Short('L')),
    ("separate-files", Arg::No, Opt::Short('y')),
    ("static-call-graph", Arg::No, Opt::Short('c')),
    ("table-length", Arg::Required, Opt::Short('t')),
    ("time", Arg::Required, Opt::Short('n')),
    ("no-time", Arg::Required, Opt::Short('N')),
    ("width", Arg::Required, Opt::Short('w')),
    ("brief", Arg::No, Opt::Short('b')),
    ("debug", Arg::Optional, Opt::Short('d')),
    ("help", Arg::No, Opt::Short('h')),
    ("file-format", Arg::Required, Opt::Short('O')),
    ("traditional", Arg::No, Opt::Short('T')),
    ("version", Arg::No, Opt::Short('v')),
];

/// The subcommands: `profil-report SUBCOMMAND … --gprof` is not the gprof mode.
const SUBCOMMANDS: &[&str] = &[
    "dump",
    "convert",
    "merge",
    "runtime-path",
    "link-args",
    "run",
    "demo",
    "export",
    "diff",
    "help",
];

/// Whether `args` (without the program name) ask for the gprof mode: `--gprof` among the
/// options (before any `--`), and no subcommand first.
pub fn is_gprof_mode(args: &[OsString]) -> bool {
    if args
        .first()
        .is_some_and(|a| SUBCOMMANDS.iter().any(|s| a == *s))
    {
        return false;
    }
    args.iter()
        .take_while(|a| *a != "--")
        .any(|a| a == "--gprof")
}

/// One option as `getopt_long` returns it, with its argument.
#[derive(Debug, PartialEq, Eq)]
struct Parsed {
    opt: Opt,
    arg: Option<String>,
}

/// The options and operands of `args`, or getopt's complaint (gprof then prints its usage
/// and exits with status 1).
#[cfg(test)]
fn getopt(args: &[String]) -> Result<(Vec<Parsed>, Vec<String>), String> {
    let mut opts = Vec::new();
    let mut operands = Vec::new();
    getopt_into(args, &mut opts, &mut operands)?;
    Ok((opts, operands))
}

/// [`getopt`] into `opts` and `operands`: on a complaint they hold what getopt returned before
/// it, which gprof has acted on (`-d`'s banner, `-v`'s exit).
fn getopt_into(
    args: &[String],
    opts: &mut Vec<Parsed>,
    operands: &mut Vec<String>,
) -> Result<(), String> {
    let mut i = 0;
    while i < args.len() {
        let a = &args[i];
        i += 1;
        if a == "--" {
            operands.extend(args[i..].iter().cloned());
            break;
        }
        if let Some(long) = a.strip_prefix("--") {
            let (name, value) = match long.split_once('=') {
                Some((n, v)) => (n, Some(v.to_string())),
                None => (long, None),
            };
            let (full, has, opt) = find_long(name)?;
            let arg = match (has, value) {
                (Arg::No, Some(_)) => {
                    return Err(format!("option '--{full}' doesn't allow an argument"))
                }
                (Arg::No, None) | (Arg::Optional, None) => None,
                (_, Some(v)) => Some(v),
                (Arg::Required, None) => match args.get(i) {
                    Some(v) => {
                        i += 1;
                        Some(v.clone())
                    }
                    None => return Err(format!("option '--{full}' requires an argument")),
                },
            };
            opts.push(Parsed { opt, arg });
            continue;
        }
        let Some(cluster) = a.strip_prefix('-').filter(|c| !c.is_empty()) else {
            operands.push(a.clone());
            continue;
        };
        for (at, c) in cluster.char_indices() {
            let rest = &cluster[at + c.len_utf8()..];
            let kind = short_kind(c).ok_or_else(|| format!("invalid option -- '{c}'"))?;
            match kind {
                Arg::No => opts.push(Parsed {
                    opt: Opt::Short(c),
                    arg: None,
                }),
                Arg::Optional => {
                    opts.push(Parsed {
                        opt: Opt::Short(c),
                        arg: (!rest.is_empty()).then(|| rest.to_string()),
                    });
                    break;
                }
                Arg::Required => {
                    let arg = if !rest.is_empty() {
                        rest.to_string()
                    } else if let Some(v) = args.get(i) {
                        i += 1;
                        v.clone()
                    } else {
                        return Err(format!("option requires an argument -- '{c}'"));
                    };
                    opts.push(Parsed {
                        opt: Opt::Short(c),
                        arg: Some(arg),
                    });
                    break;
                }
            }
        }
    }
    Ok(())
}

/// Whether short option `c` exists, and how it takes its argument.
fn short_kind(c: char) -> Option<Arg> {
    if c == ':' {
        return None;
    }
    let at = SHORT.find(c)?;
    let after = &SHORT[at + 1..];
    Some(if after.starts_with("::") {
        Arg::Optional
    } else if after.starts_with(':') {
        Arg::Required
    } else {
        Arg::No
    })
}

/// getopt_long's long option lookup: an exact name, else a unique prefix (several prefixes
/// matching options that behave alike count as one).
fn find_long(name: &str) -> Result<(&'static str, Arg, Opt), String> {
    if let Some(&(n, a, o)) = LONG.iter().find(|(n, _, _)| *n == name) {
        return Ok((n, a, o));
    }
    let matches: Vec<&(&str, Arg, Opt)> = LONG
        .iter()
        .filter(|(n, _, _)| n.starts_with(name))
        .collect();
    match matches.as_slice() {
        [] => Err(format!("unrecognized option '--{name}'")),
        [first, rest @ ..] if rest.iter().all(|m| m.1 == first.1 && m.2 == first.2) => {
            Ok((first.0, first.1, first.2))
        }
        _ => Err(format!("option '--{name}' is ambiguous")),
    }
}

/// Add `spec` to `table` (every form of gprof's `parse_spec` is reproduced).
fn add_spec(specs: &mut Vec<SymSpec>, table: Table, spec: &str) {
    specs.push(SymSpec {
        table,
        spec: Box::leak(spec.to_string().into_boxed_str()),
    });
}

/// C's `atoi`: leading blanks, an optional sign, then digits; 0 without any.
fn atoi(s: &str) -> i64 {
    let t = s.trim_start_matches([' ', '\t', '\n', '\r', '\x0b', '\x0c']);
    let (neg, digits) = match t.as_bytes().first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, t),
    };
    let n = digits
        .bytes()
        .take_while(u8::is_ascii_digit)
        .fold(0i64, |n, d| {
            n.saturating_mul(10).saturating_add(i64::from(d - b'0'))
        });
    if neg {
        -n
    } else {
        n
    }
}

/// libiberty's `expandargv`, which gprof calls first: each word `@FILE` naming a readable
/// file is replaced by the words of the file (split as [`split_response_file`] splits them),
/// which are expanded in turn; any other `@FILE` stays a word. gprof fails (status 1) on an
/// `@FILE` that is a directory and after 2000 expansions (an `@FILE` naming itself).
fn expand_response_files(mut words: Vec<String>) -> Result<Vec<String>, EarlyExit> {
    let fail = |message: String| EarlyExit {
        message,
        code: 1,
        stdout: String::new(),
    };
    let mut expansions = 0;
    let mut i = 0;
    while i < words.len() {
        let Some(name) = words[i].strip_prefix('@') else {
            i += 1;
            continue;
        };
        let Ok(meta) = std::fs::metadata(name) else {
            i += 1;
            continue;
        };
        if meta.is_dir() {
            return Err(fail("--gprof: error: @-file refers to a directory".into()));
        }
        let Ok(bytes) = std::fs::read(name) else {
            i += 1;
            continue;
        };
        expansions += 1;
        if expansions > 2000 {
            return Err(fail("--gprof: error: too many @-files encountered".into()));
        }
        let text = String::from_utf8(bytes)
            .map_err(|_| fail(format!("--gprof: @{name}: not valid UTF-8")))?;
        // The file's words take the `@FILE`'s place and are looked at next.
        words.splice(i..=i, split_response_file(&text));
    }
    Ok(words)
}

/// libiberty's `buildargv`: words separated by white space, where single and double quotes
/// group (and are dropped) and a backslash takes the next character as it is. A file of
/// only white space has no words.
fn split_response_file(text: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut chars = text.chars().peekable();
    let space = |c: char| matches!(c, ' ' | '\t' | '\n' | '\x0b' | '\x0c' | '\r');
    loop {
        while chars.peek().is_some_and(|&c| space(c)) {
            chars.next();
        }
        if chars.peek().is_none() {
            return words;
        }
        let mut word = String::new();
        let (mut squote, mut dquote, mut backslash) = (false, false, false);
        while let Some(&c) = chars.peek() {
            if space(c) && !squote && !dquote && !backslash {
                break;
            }
            chars.next();
            if backslash {
                word.push(c);
                backslash = false;
            } else if c == '\\' {
                backslash = true;
            } else if squote {
                if c == '\'' {
                    squote = false;
                } else {
                    word.push(c);
                }
            } else if dquote {
                if c == '"' {
                    dquote = false;
                } else {
                    word.push(c);
                }
            } else if c == '\'' {
                squote = true;
            } else if c == '"' {
                dquote = true;
            } else {
                word.push(c);
            }
        }
        words.push(word);
    }
}

/// What `gprof -h` prints (on stdout, status 0): gprof 2.40's usage text.
const USAGE: &str = "Usage: gprof [-[abcDhilLrsTvwxyz]] [-[ABCeEfFJnNOpPqQRStZ][name]] [-I dirs]
\t[-d[num]] [-k from/to] [-m min-count] [-t table-length]
\t[--[no-]annotated-source[=name]] [--[no-]exec-counts[=name]]
\t[--[no-]flat-profile[=name]] [--[no-]graph[=name]]
\t[--[no-]time=name] [--all-lines] [--brief] [--debug[=level]]
\t[--function-ordering] [--file-ordering] [--inline-file-names]
\t[--directory-path=dirs] [--display-unused-functions]
\t[--file-format=name] [--file-info] [--help] [--line] [--min-count=n]
\t[--no-static] [--print-path] [--separate-files]
\t[--static-call-graph] [--sum] [--table-length=len] [--traditional]
\t[--version] [--width=n] [--ignore-non-functions]
\t[--demangle[=STYLE]] [--no-demangle] [--external-symbol-table=name] [@FILE]
\t[image-file] [profile-file...]
Report bugs to <https://sourceware.org/bugzilla/>
";

/// What `gprof -v` prints (on stdout, status 0): Debian's gprof 2.40's version text.
const VERSION: &str = "GNU gprof (GNU Binutils for Debian) 2.40
Based on BSD gprof, copyright 1983 Regents of the University of California.
This program is free software.  This program has absolutely no warranty.
";

/// Where gprof ends while reading its command line: what it prints on stdout (`-d`'s banners
/// so far; `-h`'s and `-v`'s texts), its message on stderr (empty for `-h` and `-v`), and
/// its exit status.
#[derive(Debug)]
pub struct EarlyExit {
    pub message: String,
    pub code: u8,
    pub stdout: String,
}

/// gprof's `output_style` bits the emulation knows (the other styles, such as `-i`'s, count
/// as one: any of them stops gprof from guessing the sections).
const STYLE_FLAT: u32 = 1;
const STYLE_GRAPH: u32 = 2;
const STYLE_OTHER: u32 = 4;
const STYLE_EXEC: u32 = 8;
const STYLE_ANNO: u32 = 16;
const STYLE_ORDER: u32 = 32;
const STYLE_FILE_ORDER: u32 = 64;

/// The request for `profil-report ARGS…` in gprof mode (`args` without the program name;
/// `--gprof` itself is dropped wherever it stands).
pub fn request(args: &[OsString]) -> Result<Request, EarlyExit> {
    let mut words = Vec::new();
    let mut seen_gprof = false;
    let mut after_dashes = false;
    for a in args {
        if a == "--" {
            after_dashes = true;
        }
        if !after_dashes && !seen_gprof && a == "--gprof" {
            seen_gprof = true;
            continue;
        }
        match a.to_str() {
            Some(s) => words.push(s.to_string()),
            None => {
                return Err(EarlyExit {
                    message: format!("--gprof: {}: not valid UTF-8", a.to_string_lossy()),
                    code: 1,
                    stdout: String::new(),
                })
            }
        }
    }
    let words = expand_response_files(words)?;
    // gprof acts on each option as getopt returns it: those before a complaint count.
    let (mut opts, mut operands) = (Vec::new(), Vec::new());
    let complaint = getopt_into(&words, &mut opts, &mut operands).err();
    let mut g = GprofRequest::default();
    let (mut style, mut user) = (0u32, 0u32);
    let mut file_info = false;
    let mut specs: Vec<SymSpec> = Vec::new();
    let mut search: Vec<PathBuf> = Vec::new();
    g.annotate.min_count = 1;
    g.annotate.table_length = 10;
    let (mut demangle, mut style_none) = (true, false);
    let mut debug_args: Vec<Option<i32>> = Vec::new();
    let mut banners = String::new();
    for Parsed { opt, arg } in opts {
        match (opt, arg) {
            (Opt::Short('a'), _) => g.no_static = true,
            (Opt::Short('b'), _) => g.brief = true,
            (Opt::Short('z'), _) => g.zeros = true,
            (Opt::Short('c'), _) => g.static_calls = true,
            (Opt::Short('D'), _) => g.ignore_non_functions = true,
            (Opt::Short('T'), _) => g.bsd = true,
            (Opt::Short('L'), _) => g.print_path = true,
            (Opt::InlineFileNames, _) => g.inline_file_names = true,
            // -A/-J: the annotated source, with or without a name (as -C/-Z).
            (Opt::Short(c @ ('A' | 'J')), arg) => {
                if c == 'A' || arg.is_some() {
                    style |= STYLE_ANNO;
                } else {
                    style &= !STYLE_ANNO;
                }
                user |= STYLE_ANNO;
                if let Some(spec) = arg {
                    let table = if c == 'A' {
                        Table::InclAnno
                    } else {
                        Table::ExclAnno
                    };
                    add_spec(&mut specs, table, &spec);
                }
            }
            (Opt::Short('y'), _) => g.annotate.separate_files = true,
            (Opt::Short('r'), _) => {
                style |= STYLE_ORDER;
                user |= STYLE_ORDER;
            }
            (Opt::Short('R'), Some(file)) => {
                g.file_ordering = Some(Box::leak(PathBuf::from(file).into_boxed_path()));
                style |= STYLE_FILE_ORDER;
                user |= STYLE_FILE_ORDER;
            }
            (Opt::Short('S'), Some(file)) => {
                if g.debug & profil_report::gprof::debug::AOUTDEBUG != 0 {
                    banners.push_str(&format!("external-symbol-table: {file}\n"));
                }
                g.external_symbols = Some(Box::leak(PathBuf::from(file).into_boxed_path()));
            }
            (Opt::Short('x'), _) => g.annotate.all_lines = true,
            // strtoul and atoi.
            (Opt::Short('m'), Some(m)) => g.annotate.min_count = atoi(&m) as u64,
            (Opt::Short('t'), Some(t)) => g.annotate.table_length = atoi(&t).max(0) as usize,
            (Opt::Short('I'), Some(dirs)) => {
                search.extend(dirs.split(':').filter(|d| !d.is_empty()).map(PathBuf::from))
            }
            // The input format (its first letter), or gprof's failures (status 1).
            (Opt::Short('O'), Some(f)) if f.starts_with('a') => g.file_format = FileFormat::Auto,
            (Opt::Short('O'), Some(f)) if f.starts_with('m') => g.file_format = FileFormat::Magic,
            (Opt::Short('O'), Some(f)) if f.starts_with('b') => g.file_format = FileFormat::Bsd,
            (Opt::Short('O'), Some(f)) if f.starts_with('4') => g.file_format = FileFormat::Bsd44,
            (Opt::Short('O'), Some(f)) => {
                return Err(EarlyExit {
                    message: if f.starts_with('p') {
                        "--gprof: sorry, file format `prof' is not yet supported".to_string()
                    } else {
                        format!("--gprof: {f}: unknown file format")
                    },
                    code: 1,
                    stdout: banners.clone(),
                });
            }
            // `--sum implies --line`.
            (Opt::Short('s'), _) => {
                g.sum = true;
                g.lines = true;
                style |= STYLE_OTHER;
                user |= STYLE_OTHER;
            }
            // atoi, at least 1.
            (Opt::Short('w'), Some(w)) => g.width = Some(atoi(&w).max(1) as usize),
            (Opt::Short('l'), _) => g.lines = true,
            (Opt::Short('i'), _) => {
                file_info = true;
                style |= STYLE_OTHER;
                user |= STYLE_OTHER;
            }
            (Opt::Short(c @ ('p' | 'P' | 'q' | 'Q')), arg) => {
                let bit = if matches!(c, 'p' | 'P') {
                    STYLE_FLAT
                } else {
                    STYLE_GRAPH
                };
                // `-p`/`-q` (with or without a spec) and `-PNAME`/`-QNAME` turn the section on;
                // a bare `-P`/`-Q` turns it off.
                if c.is_ascii_lowercase() || arg.is_some() {
                    style |= bit;
                } else {
                    style &= !bit;
                }
                user |= bit;
                if let Some(spec) = arg {
                    let arcs = spec.contains('/');
                    let table = match (c, arcs) {
                        ('p', _) => Table::InclFlat,
                        ('P', _) => Table::ExclFlat,
                        ('q', false) => Table::InclGraph,
                        ('q', true) => Table::InclArcs,
                        ('Q', false) => Table::ExclGraph,
                        _ => Table::ExclArcs,
                    };
                    add_spec(&mut specs, table, &spec);
                }
            }
            (Opt::Short(c @ ('C' | 'Z')), arg) => {
                if c == 'C' || arg.is_some() {
                    style |= STYLE_EXEC;
                } else {
                    style &= !STYLE_EXEC;
                }
                user |= STYLE_EXEC;
                if let Some(spec) = arg {
                    let table = if c == 'C' {
                        Table::InclExec
                    } else {
                        Table::ExclExec
                    };
                    add_spec(&mut specs, table, &spec);
                }
            }
            (Opt::Short(c @ ('e' | 'E' | 'f' | 'F' | 'n' | 'N' | 'k')), Some(spec)) => {
                let tables: &[Table] = match c {
                    'e' => &[Table::ExclGraph],
                    'E' => &[Table::ExclTime, Table::ExclGraph],
                    'f' => &[Table::InclGraph],
                    'F' => &[Table::InclTime, Table::InclGraph],
                    'n' => &[Table::InclTime],
                    'N' => &[Table::ExclTime],
                    _ => &[Table::ExclArcs],
                };
                for &t in tables {
                    add_spec(&mut specs, t, &spec);
                }
            }
            // gprof: `debug_level |= atoi (optarg) | ANYDEBUG`, or every bit for a bare -d,
            // and each -d prints the level.
            (Opt::Short('d'), arg) => {
                debug_args.push(arg.as_deref().map(|a| atoi(a) as i32));
                g.debug = profil_report::gprof::debug::level_of(&debug_args);
                banners.push_str(&format!("[main] debug-level=0x{:x}\n", g.debug));
            }
            // gprof's usage and version texts on stdout, status 0, as soon as the option is
            // read (after the banners of the `-d`s before it).
            (Opt::Short(c @ ('h' | 'v')), _) => {
                return Err(EarlyExit {
                    message: String::new(),
                    code: 0,
                    stdout: banners + if c == 'h' { USAGE } else { VERSION },
                })
            }
            // gprof 2.40 still takes `-B`, its old spelling of `-q` without a name.
            (Opt::Short('B'), _) => {
                style |= STYLE_GRAPH;
                user |= STYLE_GRAPH;
            }
            // Every letter of SHORT is handled above; getopt yields no other.
            (Opt::Short(c), _) => {
                return Err(EarlyExit {
                    message: format!("--gprof: invalid option -- '{c}'"),
                    code: 1,
                    stdout: banners,
                })
            }
            (Opt::Demangle, None) => demangle = true,
            (Opt::Demangle, Some(style)) => {
                // libiberty's styles; the style stays set whatever follows.
                match style.as_str() {
                    "auto" => g.demangle_style = DemangleStyle::Auto,
                    "gnu-v3" => g.demangle_style = DemangleStyle::GnuV3,
                    "rust" => g.demangle_style = DemangleStyle::Rust,
                    "none" => style_none = true,
                    "java" => g.demangle_style = DemangleStyle::Java,
                    "gnat" => g.demangle_style = DemangleStyle::Gnat,
                    "dlang" => g.demangle_style = DemangleStyle::Dlang,
                    _ => {
                        return Err(EarlyExit {
                            message: format!("--gprof: unknown demangling style `{style}'"),
                            code: 1,
                            stdout: banners.clone(),
                        })
                    }
                }
                demangle = true;
            }
            (Opt::NoDemangle, _) => demangle = false,
        }
    }
    if let Some(m) = complaint {
        return Err(EarlyExit {
            message: format!("--gprof: {m} (gprof's options: man gprof)"),
            code: 1,
            stdout: banners,
        });
    }
    g.sections = if style == 0 {
        // gprof guesses from the input, minus what the user turned off.
        Sections {
            no_flat: user & STYLE_FLAT != 0,
            no_graph: user & STYLE_GRAPH != 0,
            guess_exec_counts: user & STYLE_EXEC == 0,
            ..Sections::default()
        }
    } else {
        let (flat, graph) = (style & STYLE_FLAT != 0, style & STYLE_GRAPH != 0);
        Sections {
            flat,
            graph,
            no_flat: !flat,
            no_graph: !graph,
            file_info,
            exec_counts: style & STYLE_EXEC != 0,
            annotated_source: style & STYLE_ANNO != 0,
            function_order: style & STYLE_ORDER != 0,
            file_order: style & STYLE_FILE_ORDER != 0,
            guess_exec_counts: false,
        }
    };
    if style & STYLE_ORDER != 0 && style & STYLE_FILE_ORDER != 0 {
        return Err(EarlyExit {
            message: "--gprof: Only one of --function-ordering and --file-ordering may be \
                      specified."
                .into(),
            code: 1,
            stdout: banners.clone(),
        });
    }
    g.debug_banners = Box::leak(banners.into_boxed_str());
    // GPROF_PATH comes after the -I directories.
    if let Some(p) = std::env::var_os("GPROF_PATH") {
        search.extend(std::env::split_paths(&p).filter(|d| !d.as_os_str().is_empty()));
    }
    g.annotate.search = Box::leak(search.into_boxed_slice());
    // BSD style prints names raw.
    g.no_demangle = !demangle || style_none || g.bsd;
    // The specs live as long as the process (the request is `Copy`).
    g.specs = Box::leak(specs.into_boxed_slice());
    Ok(Request {
        files: operands.into_iter().map(PathBuf::from).collect(),
        mode: Mode::Gprof(g),
        ..Request::default()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Result<(Vec<Parsed>, Vec<String>), String> {
        getopt(&args.iter().map(|s| s.to_string()).collect::<Vec<_>>())
    }

    fn short(c: char, arg: Option<&str>) -> Parsed {
        Parsed {
            opt: Opt::Short(c),
            arg: arg.map(str::to_string),
        }
    }

    #[test]
    fn optional_arguments_are_glued_and_end_the_cluster() {
        let (o, f) = parse(&["-qab", "-bp", "-p", "prog", "-Pmain", "gmon.out"]).unwrap();
        assert_eq!(
            o,
            vec![
                short('q', Some("ab")),
                short('b', None),
                short('p', None),
                short('p', None),
                short('P', Some("main")),
            ]
        );
        assert_eq!(f, vec!["prog", "gmon.out"]);
    }

    #[test]
    fn required_arguments_take_the_rest_or_the_next_word() {
        let (o, _) = parse(&["-k", "a/b", "-m3", "-bw", "100"]).unwrap();
        assert_eq!(
            o,
            vec![
                short('k', Some("a/b")),
                short('m', Some("3")),
                short('b', None),
                short('w', Some("100")),
            ]
        );
        assert!(parse(&["-k"]).unwrap_err().contains("requires an argument"));
    }

    #[test]
    fn long_options_abbreviate_to_unique_prefixes() {
        let (o, f) = parse(&["--brief", "--flat=main", "--graph", "--", "-p"]).unwrap();
        assert_eq!(
            o,
            vec![short('b', None), short('p', Some("main")), short('q', None)]
        );
        assert_eq!(f, vec!["-p"]);
        assert!(parse(&["--no"]).unwrap_err().contains("ambiguous"));
        assert!(parse(&["--brief=x"]).unwrap_err().contains("doesn't allow"));
        assert!(parse(&["--bogus"]).unwrap_err().contains("unrecognized"));
        assert!(parse(&["-j"]).unwrap_err().contains("invalid option"));
        assert!(parse(&["-:"]).unwrap_err().contains("invalid option"));
    }

    #[test]
    fn debug_banners_are_printed_before_gprofs_option_failures() {
        let early_exit = |args: &[&str]| {
            let args: Vec<OsString> = args.iter().map(OsString::from).collect();
            request(&args).err().map(|r| (r.code, r.stdout))
        };
        // -d with -R is read (its traces are gprof's); with -r it is gprof's own failure
        // (status 1), after the banner of each -d before it.
        assert!(early_exit(&["-d", "-R", "map", "prog"]).is_none());
        assert!(early_exit(&["-R", "map", "prog"]).is_none());
        assert!(early_exit(&["-R", "map", "-l", "prog"]).is_none());
        assert!(early_exit(&["-s", "-R", "map", "prog"]).is_none());
        let (code, stdout) = early_exit(&["-d2", "-r", "-d", "-R", "map", "prog"]).unwrap();
        assert_eq!(code, 1);
        assert_eq!(
            stdout,
            "[main] debug-level=0x3\n[main] debug-level=0xffffffff\n"
        );
        // -S's file is printed as the option is parsed, with AOUTDEBUG on by then.
        let g = |args: &[&str]| {
            let args: Vec<OsString> = args.iter().map(OsString::from).collect();
            match request(&args).ok().map(|r| r.mode) {
                Some(Mode::Gprof(g)) => g.debug_banners,
                _ => panic!("{args:?} refused"),
            }
        };
        assert_eq!(g(&["-S", "s", "-d128", "p"]), "[main] debug-level=0x81\n");
        assert_eq!(
            g(&["-d128", "-S", "s", "-d4", "p"]),
            "[main] debug-level=0x81\nexternal-symbol-table: s\n[main] debug-level=0x85\n"
        );
    }
}
