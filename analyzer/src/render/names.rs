//! Names and locations as a table shows them: short enough to read, with the full form left
//! to JSON and CSV.
//!
//! * [`short_name`]: generic arguments are elided (`Vec<alloc::string::String>` becomes
//!   `Vec<…>`), qualified paths and `impl` blocks keep their shape
//!   (`<alloc::vec::Vec<…> as core::ops::drop::Drop>::drop`), and a name still longer than
//!   the limit keeps its crate and function (`hashbrown::…::RawTable<…>::reserve_rehash`),
//!   or, still too long, its last two path segments behind `…::`; it is never cut inside an
//!   identifier.
//! * [`short_location`]: a path under the current directory is shown relative to it; a
//!   registry source as `crate-version/src/file.rs:line`; the standard library as
//!   `library/…`; and a file that no longer exists (a deleted build directory) by its name
//!   only.

use std::path::{Path, PathBuf};

/// `name` with its generic arguments elided, then cut to at most `max` characters at a `::`
/// boundary from the left (the function's own name is the part that matters). A method keeps
/// its type (the last two segments) even beyond `max`.
pub fn short_name(name: &str, max: usize) -> String {
    if plain(name, max) {
        return name.to_owned();
    }
    cut_path(&elide_parameters(&elide_generics(name, 1), max), max)
}

/// A demangled C++ name still longer than `max` with its parameter list elided
/// (`ns::cost(machine_mode, int)` becomes `ns::cost(…)`), so that cutting leading segments
/// keeps the function's name rather than its parameters. The list is the last top-level
/// `(…)` (a `const` or `&` after it stays).
fn elide_parameters(name: &str, max: usize) -> String {
    if name.chars().count() <= max || !name.ends_with([')', 't', '&']) {
        return name.to_owned();
    }
    let bytes = name.as_bytes();
    let (mut depth, mut angle) = (0i32, 0i32);
    let mut list = None;
    for (i, &b) in bytes.iter().enumerate() {
        match b {
            b'<' => angle += 1,
            b'>' if angle > 0 => angle -= 1,
            b'(' => {
                if depth == 0 && angle == 0 && i > 0 {
                    list = Some((i, None));
                }
                depth += 1;
            }
            b')' => {
                depth -= 1;
                if depth == 0 {
                    if let Some((open, None)) = list {
                        list = Some((open, Some(i)));
                    }
                }
            }
            _ => {}
        }
    }
    match list {
        Some((open, Some(close))) if close > open + 1 => {
            let rest = &name[close + 1..];
            if rest.is_empty() || matches!(rest.trim(), "const" | "&" | "&&" | "const&") {
                return format!("{}(…){rest}", &name[..open]);
            }
            name.to_owned()
        }
        _ => name.to_owned(),
    }
}

/// A name that no rule shortens: no generic arguments and short enough (the common case,
/// checked first so that a large table does not pay for the rules).
fn plain(name: &str, max: usize) -> bool {
    name.len() <= max && !name.contains('<')
}

/// [`short_name`] for names that would otherwise look the same (instances of one generic
/// function): the outermost generic arguments are kept, only nested ones are elided
/// (`Accumulator<u32,64>::sum`, `HashMap<String,Vec<…>>::insert`).
pub fn short_name_with_arguments(name: &str, max: usize) -> String {
    if plain(name, max) {
        return name.to_owned();
    }
    cut_path(&elide_parameters(&elide_generics(name, 2), max), max)
}

/// Shorten every name of a table with [`short_name`], falling back to
/// [`short_name_with_arguments`] for names that would collide.
pub fn short_names(names: &[&str], max: usize) -> Vec<String> {
    if crate::render::wide() {
        // `--wide`: the full names.
        return names.iter().map(|n| n.to_string()).collect();
    }
    let short: Vec<String> = names.iter().map(|n| short_name(n, max)).collect();
    // Two different names can only look the same when one of them was shortened.
    if short.iter().zip(names).all(|(s, n)| s == n) {
        return short;
    }
    // Whether more than one distinct full name is behind each short one (identical full
    // names, such as the instances of a generic function under legacy mangling, stay
    // identical anyway): the first full name seen, and whether another one differs.
    let mut behind: std::collections::HashMap<&str, (&str, bool)> =
        std::collections::HashMap::with_capacity(names.len());
    for (s, n) in short.iter().zip(names) {
        let e = behind.entry(s.as_str()).or_insert((n, false));
        e.1 |= e.0 != *n;
    }
    // Colliding names keep their last argument list first (the one that tells generic
    // instances apart: `count<String, …>`, `accumulate_with<u32, …>`), then their outer ones.
    let last: Vec<Option<String>> = names
        .iter()
        .zip(&short)
        .map(|(n, s)| {
            behind[s.as_str()]
                .1
                .then(|| short_name_keeping_last(n, max))
        })
        .collect();
    let mut again: std::collections::HashMap<&str, (&str, bool)> = std::collections::HashMap::new();
    for (l, n) in last.iter().zip(names) {
        if let Some(l) = l {
            let e = again.entry(l.as_str()).or_insert((n, false));
            e.1 |= e.0 != *n;
        }
    }
    let still: Vec<bool> = last
        .iter()
        .map(|l| l.as_ref().is_some_and(|l| again[l.as_str()].1))
        .collect();
    // Instances told apart only by arguments too long for `max` (C++ templates of long
    // types): the short name and which instance it is, in the table's order (`f(…) #2`);
    // `--wide`, JSON and CSV name them whole.
    let mut instances: std::collections::HashMap<String, Vec<&str>> =
        std::collections::HashMap::new();
    names
        .iter()
        .zip(short)
        .zip(last)
        .zip(still)
        .map(|(((n, s), l), still)| match l {
            Some(_) if still => {
                let with = short_name_with_arguments(n, max);
                if with.chars().count() <= max {
                    return with;
                }
                let seen = instances.entry(s.clone()).or_default();
                let k = match seen.iter().position(|f| f == n) {
                    Some(k) => k,
                    None => {
                        seen.push(n);
                        seen.len() - 1
                    }
                };
                format!("{s} #{}", k + 1)
            }
            Some(l) => l,
            None => s,
        })
        .collect()
}

/// [`short_name`] that keeps the name's last generic argument list when it closes the name
/// (nested lists in it elided): `…::Accumulator<…>::accumulate_with<u32, …>`.
pub fn short_name_keeping_last(name: &str, max: usize) -> String {
    let chars: Vec<char> = name.chars().collect();
    let Some(open) = name
        .ends_with('>')
        .then(|| {
            (0..chars.len())
                .filter(|&i| chars[i] == '<' && matching_close(&chars, i) == Some(chars.len() - 1))
                .find(|&i| i > 0 && (chars[i - 1].is_alphanumeric() || chars[i - 1] == '_'))
        })
        .flatten()
    else {
        return short_name(name, max);
    };
    let head: String = chars[..open].iter().collect();
    let list: String = chars[open..].iter().collect();
    let head = elide_generics(&head, 1);
    let mut list = format!("<{}>", elide_generics(&list[1..list.len() - 1], 1));
    if head.chars().count() + list.chars().count() > max {
        // Its first argument only (`{closure#0}<(String, u64), …>`), paths dropped.
        if let Some(first) = first_argument(&list[1..list.len() - 1]) {
            if first.len() + 2 < list.len() {
                list = format!("<{}, …>", profil_symbols::distinguish::drop_paths(first));
            }
        }
    }
    let cut = cut_path(&elide_parameters(&format!("{head}{list}"), max), max);
    if cut.chars().count() <= max {
        return cut;
    }
    // Still too long: the function and the list that tells it apart, without its type
    // (never without its crate alone: `wordfreq::count<String, …>` stays).
    match head.rfind("::") {
        Some(i) if !head[i..].contains('>') && head.matches("::").count() >= 2 => {
            format!("…::{}{list}", &head[i + 2..])
        }
        _ => cut,
    }
}

/// Identifiers up to this long are never cut (`__memcpy_avx512_unaligned_erms` was shown as
/// `…y_avx512_unaligned_erms`).
const WHOLE_IDENTIFIER: usize = 40;

/// One identifier longer than `max`: whole up to [`WHOLE_IDENTIFIER`] characters; a longer
/// one keeps its end from a `_` on (`…_for_quite_a_while_second`), never part of a word.
fn long_identifier(name: &str, max: usize) -> String {
    let n = name.chars().count();
    if n <= WHOLE_IDENTIFIER.max(max) {
        return name.to_owned();
    }
    let chars: Vec<char> = name.chars().collect();
    let from = (n + 1).saturating_sub(max.max(2));
    // The tail from an underscore: `…` and `_rest` within `max`.
    match (from.max(1)..n).find(|&i| chars[i] == '_') {
        Some(i) => format!("…{}", chars[i..].iter().collect::<String>()),
        None => format!("…{}", chars[from..].iter().collect::<String>()),
    }
}

/// Drop leading path segments (outside angle brackets) until the name fits: the crate (a
/// plain first segment) and the function are kept (`hashbrown::…::RawTable<…>::reserve_rehash`),
/// then, if that is still too long, only the last two segments (a method's type and its name)
/// behind `…::`, even beyond `max`. A path segment is never cut; a name of one identifier
/// only as [`long_identifier`] says.
fn cut_path(elided: &str, max: usize) -> String {
    if elided.chars().count() <= max {
        return elided.to_owned();
    }
    // A qualified path first loses the paths inside its brackets:
    // `<Vec<…> as SpecFromIterNested<…>>::from_iter`.
    if elided.starts_with('<') {
        let chars: Vec<char> = elided.chars().collect();
        if let Some(close) = matching_close(&chars, 0) {
            let inside: String = chars[1..close].iter().collect();
            let rest: String = chars[close + 1..].iter().collect();
            let short = format!(
                "<{}>{rest}",
                profil_symbols::distinguish::drop_paths(&inside)
            );
            if short != elided {
                return cut_path(&short, max);
            }
        }
    }
    let mut depth = 0i32;
    let bytes = elided.as_bytes();
    let mut cuts = Vec::new();
    for (i, &b) in bytes.iter().enumerate() {
        match b {
            b'<' => depth += 1,
            b'>' => depth -= 1,
            b':' if depth == 0 && bytes.get(i + 1) == Some(&b':') && i > 0 => cuts.push(i + 2),
            _ => {}
        }
    }
    // Crate and function alone: nothing to drop.
    if cuts.len() == 1 {
        return elided.to_owned();
    }
    if cuts.is_empty() {
        return long_identifier(elided, max);
    }
    let first = &elided[..cuts[0] - 2];
    let crate_like = first.chars().all(|c| c.is_alphanumeric() || c == '_');
    // Tails from the longest (after the crate) to the last two segments.
    let keep = cuts.len() - 1;
    if crate_like {
        for &c in &cuts[1..keep] {
            let kept = format!("{first}::…::{}", &elided[c..]);
            if kept.chars().count() <= max {
                return kept;
            }
        }
    }
    for &c in &cuts[..keep] {
        let tail = &elided[c..];
        if tail.chars().count() + 3 <= max || c == cuts[keep - 1] {
            return format!("…::{tail}");
        }
    }
    elided.to_owned()
}

/// The first top-level argument of an argument list's inside, when there are more.
fn first_argument(list: &str) -> Option<&str> {
    let mut depth = 0i32;
    for (i, c) in list.char_indices() {
        match c {
            '<' | '(' | '[' => depth += 1,
            '>' | ')' | ']' => depth -= 1,
            ',' if depth == 0 => return Some(list[..i].trim()),
            _ => {}
        }
    }
    None
}

/// Replace the contents of every generic argument list (a `<` right after an identifier or
/// `::`-less path end) by `…`. A `<` that opens a qualified path (`<T as Trait>`) or an
/// `impl` segment (`<impl Trait for T>`) starts a name or follows `::`, and is kept.
/// Argument lists at nesting depth `depth` or deeper (1: every list) are elided.
fn elide_generics(name: &str, depth: usize) -> String {
    let chars: Vec<char> = name.chars().collect();
    let mut out = String::with_capacity(name.len());
    // Open generic-argument lists around the current position (qualified-path brackets do
    // not count).
    let mut open: Vec<bool> = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        // A closure's or shim's name (`{closure#0}<…>`) takes arguments too.
        let after_ident =
            i > 0 && (chars[i - 1].is_alphanumeric() || chars[i - 1] == '_' || chars[i - 1] == '}');
        if c == '<' {
            let generic = after_ident && matching_close(&chars, i).is_some();
            let level = open.iter().filter(|&&g| g).count() + 1;
            if generic && level >= depth {
                let end = matching_close(&chars, i).unwrap_or(i);
                out.push_str("<…>");
                i = end + 1;
                continue;
            }
            open.push(generic);
        } else if c == '>' && !open.is_empty() && !(i > 0 && chars[i - 1] == '-') {
            open.pop();
        }
        out.push(c);
        i += 1;
    }
    out
}

/// The index of the `>` closing the `<` at `open`, if any (`operator<<` has none).
fn matching_close(chars: &[char], open: usize) -> Option<usize> {
    let mut depth = 0usize;
    for (j, &d) in chars.iter().enumerate().skip(open) {
        match d {
            '<' => depth += 1,
            '>' => {
                depth -= 1;
                if depth == 0 {
                    return Some(j);
                }
            }
            _ => {}
        }
    }
    None
}

/// `file:line` as a table shows it (see the module docs). `cwd` is the current directory.
pub fn short_location(location: &str, cwd: Option<&Path>) -> String {
    short_location_with(location, cwd, &mut std::collections::HashMap::new())
}

/// [`short_location`], with the shown form of each file remembered in `files` (a table
/// of many functions from few files asks the file system once per file).
pub fn short_location_with(
    location: &str,
    cwd: Option<&Path>,
    files: &mut std::collections::HashMap<String, String>,
) -> String {
    let (file, line) = match location.rsplit_once(':') {
        Some((f, l)) if !l.is_empty() && l.bytes().all(|b| b.is_ascii_digit()) => (f, Some(l)),
        _ => (location, None),
    };
    let shown = match files.get(file) {
        Some(s) => s.clone(),
        None => {
            let s = short_file(file, cwd);
            files.insert(file.to_owned(), s.clone());
            s
        }
    };
    match line {
        Some(l) => format!("{shown}:{l}"),
        None => shown,
    }
}

fn short_file(file: &str, cwd: Option<&Path>) -> String {
    let path = Path::new(file);
    // ~/.cargo/registry/src/<index>/<crate>-<version>/src/lib.rs
    if let Some(i) = file.find("/registry/src/") {
        let rest = &file[i + "/registry/src/".len()..];
        if let Some((_, in_index)) = rest.split_once('/') {
            return in_index.to_owned();
        }
    }
    // /rustc/<commit>/library/core/src/…
    if let Some(rest) = file.strip_prefix("/rustc/") {
        if let Some((_, in_tree)) = rest.split_once('/') {
            return in_tree.to_owned();
        }
    }
    if path.is_absolute() {
        if let Some(rel) = cwd.and_then(|c| path.strip_prefix(c).ok()) {
            return rel.display().to_string();
        }
        if !path.exists() {
            // A deleted temporary build directory means nothing to the reader: the name does.
            return path
                .file_name()
                .map_or_else(|| file.to_owned(), |n| n.to_string_lossy().into_owned());
        }
    }
    file.to_owned()
}

/// A location of at most `max` characters: longer ones keep their first directory and their
/// file (`library/…/memchr.rs:111`), or only the file when even that is too long, or the end
/// of the file's name and the line (`…long_name.c:6`: the line number is never cut).
pub fn fit_location(location: &str, max: usize) -> String {
    if location.chars().count() <= max {
        return location.to_owned();
    }
    let parts: Vec<&str> = location.split('/').collect();
    let last = parts.last().copied().unwrap_or(location);
    if parts.len() > 2 {
        let kept = format!("{}/…/{last}", parts[0]);
        if kept.chars().count() <= max {
            return kept;
        }
    }
    let n = last.chars().count();
    let line = last
        .rsplit_once(':')
        .map_or(0, |(_, l)| l.chars().count() + 1);
    if n <= max || max <= line + 4 {
        return last.to_owned();
    }
    let tail: String = last.chars().skip(n - (max - 1)).collect();
    format!("…{tail}")
}

/// The last resort for a table still too wide: a plain identifier longer than `max` (which
/// [`short_name`] never cuts) keeps its end behind `…` (`…_unaligned_erms`: an identifier's
/// end tells a variant apart). A name with a path, generics or parameters is left as
/// [`short_name`] made it (its function's name survives).
pub fn keep_end(name: &str, max: usize) -> String {
    let n = name.chars().count();
    let plain = !name.contains(['…', ':', '<', '(', ' ']);
    if n <= max || max < 2 || !plain {
        return name.to_owned();
    }
    let tail: String = name.chars().skip(n - (max - 1)).collect();
    format!("…{tail}")
}

/// The last resort for a qualified name still longer than `max` (a method keeps its type in
/// [`short_name`]): its last segment, the function (`…::accumulate_every_item_slowly(…)`),
/// with what followed it (` #2`, ` (+1)`). A plain identifier is [`keep_end`]'s.
pub fn keep_function(name: &str, max: usize) -> String {
    if name.chars().count() <= max {
        return name.to_owned();
    }
    let bytes = name.as_bytes();
    let (mut depth, mut cut) = (0i32, None);
    for i in 0..bytes.len() {
        match bytes[i] {
            b'<' | b'(' | b'[' => depth += 1,
            b'>' | b')' | b']' => depth -= 1,
            b':' if depth == 0 && bytes.get(i + 1) == Some(&b':') => cut = Some(i + 2),
            _ => {}
        }
    }
    match cut {
        Some(c) if c < name.len() => format!("…::{}", &name[c..]),
        _ => keep_end(name, max),
    }
}

/// The very last resort, after [`keep_function`]: the function's identifier alone, with what
/// followed its name (`accumulate_every_item_slowly #1` for `…::accumulate_every_item_slowly(…)
/// #1`): the elided qualifier and argument list go, never a character of the identifier or of
/// the suffix (an identifier already cut, `…_unaligned_erms`, keeps its mark).
pub fn bare_function(shortened: &str) -> String {
    let mut s = shortened.to_owned();
    if let Some(rest) = s.strip_prefix("…::") {
        s = rest.to_owned();
    }
    match s.find("(…)") {
        Some(i) => format!("{}{}", &s[..i], &s[i + "(…)".len()..]),
        None => s,
    }
}

/// A program's or file's path as a header or a message shows it: relative to the current
/// directory when under it (`prog`, `hello/target/release/hello`); else, when longer than
/// `max` characters, its root and its last segments (`/tmp/…/work/demo/demo`), the file name
/// always kept. With `wide` (`--wide`), the path as given.
pub fn short_path(path: &str, max: usize, wide: bool) -> String {
    if wide {
        return path.to_owned();
    }
    let p = Path::new(path);
    let rel = match current_dir() {
        Some(c) if p.is_absolute() => p.strip_prefix(&c).ok().map(|r| r.display().to_string()),
        _ => None,
    };
    let shown = match rel {
        Some(r) if !r.is_empty() => r,
        _ => path.to_owned(),
    };
    if shown.chars().count() <= max {
        return shown;
    }
    let parts: Vec<&str> = shown.split('/').collect();
    let head = if shown.starts_with('/') { "/" } else { "" };
    let mut kept: Vec<&str> = Vec::new();
    for part in parts.iter().rev() {
        let len: usize = kept.iter().map(|k| k.chars().count() + 1).sum::<usize>()
            + part.chars().count()
            + head.len()
            + 2;
        if !kept.is_empty() && len > max {
            break;
        }
        kept.push(part);
    }
    if kept.len() == parts.len() {
        return shown;
    }
    kept.reverse();
    format!("{head}…/{}", kept.join("/"))
}

/// A chain of steps as a table shows it: each step shortened to 32 characters, and a chain of
/// more than four steps as its first step, how many are left out, and its last two.
pub fn short_chain(steps: &[String]) -> String {
    let n = steps.len();
    let step = |s: &String| short_name_keeping_last(s, 32);
    if n > 4 {
        return format!(
            "{} > … ({} more) > {} > {}",
            step(&steps[0]),
            n - 3,
            step(&steps[n - 2]),
            step(&steps[n - 1])
        );
    }
    steps.iter().map(step).collect::<Vec<_>>().join(" > ")
}

/// The current directory, for [`short_location`].
pub fn current_dir() -> Option<PathBuf> {
    std::env::current_dir().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bare_function_keeps_the_identifier_and_the_suffix() {
        assert_eq!(
            bare_function("…::accumulate_every_item_slowly(…) #1"),
            "accumulate_every_item_slowly #1"
        );
        assert_eq!(bare_function("…::reserve_rehash"), "reserve_rehash");
        assert_eq!(bare_function("main"), "main");
        assert_eq!(bare_function("…_unaligned_erms"), "…_unaligned_erms");
    }

    #[test]
    fn long_paths_keep_their_last_segments() {
        let long = "/tmp/profil-test-26050-readme-0/work/hello/target/x86_64-unknown-linux-gnu/release/hello";
        let shown = short_path(long, 48, false);
        assert_eq!(shown, "/…/target/x86_64-unknown-linux-gnu/release/hello");
        assert!(shown.chars().count() <= 48);
        assert_eq!(short_path(long, 48, true), long);
        assert_eq!(short_path("/tmp/a/loop2", 48, false), "/tmp/a/loop2");
        let cwd = current_dir().unwrap();
        assert_eq!(
            short_path(&cwd.join("prog").display().to_string(), 48, false),
            "prog"
        );
    }

    #[test]
    fn generic_arguments_are_elided() {
        assert_eq!(
            short_name("core::ptr::drop_in_place<alloc::vec::Vec<u8>>", 80),
            "core::ptr::drop_in_place<…>"
        );
        assert_eq!(
            short_name("<alloc::vec::Vec<T,A> as core::ops::drop::Drop>::drop", 80),
            "<alloc::vec::Vec<…> as core::ops::drop::Drop>::drop"
        );
        assert_eq!(
            short_name("hashbrown::map::HashMap<K,V,S>::insert", 80),
            "hashbrown::map::HashMap<…>::insert"
        );
        assert_eq!(short_name("parse_records", 80), "parse_records");
        assert_eq!(short_name("operator<<", 80), "operator<<");
        assert_eq!(
            short_name(
                "{closure#0}<&[u8], u64, wordfreq::checksum::{closure_env#0}>",
                80
            ),
            "{closure#0}<…>"
        );
    }

    #[test]
    fn colliding_names_keep_their_outer_arguments() {
        let names = [
            "p::m::Accumulator<u32,64>::accumulate",
            "p::m::Accumulator<u16,64>::accumulate",
            "p::m::other",
        ];
        assert_eq!(
            short_names(&names, 80),
            [
                "p::m::Accumulator<u32,64>::accumulate",
                "p::m::Accumulator<u16,64>::accumulate",
                "p::m::other"
            ]
        );
        assert_eq!(
            short_name_with_arguments("a::HashMap<String,Vec<u8>>::insert", 80),
            "a::HashMap<String,Vec<…>>::insert"
        );
        assert_eq!(
            short_name("a::HashMap<String,Vec<u8>>::insert", 80),
            "a::HashMap<…>::insert"
        );
    }

    #[test]
    fn long_names_keep_their_last_segments() {
        let s = short_name(
            "my_crate::some::deeply::nested::module::path::Type<X>::function_name",
            40,
        );
        assert!(s.chars().count() <= 40, "{s}");
        assert!(
            s.starts_with("my_crate::…::") && s.ends_with("Type<…>::function_name"),
            "{s}"
        );
        // One identifier longer than the limit stays whole (it was cut to
        // `…y_avx512_unaligned_erms`).
        let s = short_name("__memmove_avx512_unaligned_erms", 20);
        assert_eq!(s, "__memmove_avx512_unaligned_erms");
        // A longer one keeps its end from an underscore on.
        let s = short_name(
            "a_function_whose_name_goes_on_and_on_for_quite_a_while_second",
            30,
        );
        assert_eq!(s, "…_on_for_quite_a_while_second");
        assert!(s.chars().count() <= 30, "{s}");
        // The crate and the function are kept, leading namespaces go first.
        assert_eq!(
            short_name("hashbrown::raw::inner::RawTable<T,A>::reserve_rehash", 42),
            "hashbrown::…::RawTable<…>::reserve_rehash"
        );
        assert_eq!(
            short_names(
                &[
                    "wordfreq::count<String, …>",
                    "wordfreq::count<(u64, u64), …>"
                ],
                20
            ),
            [
                "wordfreq::count<String, …>",
                "wordfreq::count<(u64, u64), …>"
            ]
        );
    }

    #[test]
    fn long_locations_keep_their_first_directory_and_file() {
        assert_eq!(fit_location("src/main.rs:6", 32), "src/main.rs:6");
        assert_eq!(
            fit_location("library/core/src/slice/memchr.rs:111", 32),
            "library/…/memchr.rs:111"
        );
        // Even the file is too long: its name's end and the line (issue 24: tables fit 100).
        assert_eq!(
            fit_location("a/b/c/a-very-long-file-name.rs:1", 10),
            "…name.rs:1"
        );
        // Too narrow to keep more than the line: the file whole.
        assert_eq!(
            fit_location("a/b/c/a-very-long-file-name.rs:1", 5),
            "a-very-long-file-name.rs:1"
        );
    }

    #[test]
    fn locations_are_relative_or_recognisable() {
        let cwd = Path::new("/home/me/proj");
        assert_eq!(
            short_location("/home/me/proj/src/main.rs:12", Some(cwd)),
            "src/main.rs:12"
        );
        assert_eq!(
            short_location(
                "/home/me/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/serde-1.0.200/src/de.rs:40",
                Some(cwd)
            ),
            "serde-1.0.200/src/de.rs:40"
        );
        assert_eq!(
            short_location(
                "/rustc/90b35a6239c3d8bdabc530a6a0816f7ff89a0aaf/library/core/src/ptr/mod.rs:523",
                Some(cwd)
            ),
            "library/core/src/ptr/mod.rs:523"
        );
        assert_eq!(
            short_location("/tmp/gone-12345/build/prog.c:7", Some(cwd)),
            "prog.c:7"
        );
        assert_eq!(short_location("prog.c:7", Some(cwd)), "prog.c:7");
    }
}
