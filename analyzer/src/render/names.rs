//! Names and locations as a table shows them: short enough to read, with the full form left
//! to JSON and CSV.
//!
//! * [`short_name`]: generic arguments are elided (`Vec<alloc::string::String>` becomes
//!   `Vec<…>`), qualified paths and `impl` blocks keep their shape
//!   (`<alloc::vec::Vec<…> as core::ops::drop::Drop>::drop`), and a name still longer than
//!   the limit keeps its last path segments behind `…::`.
//! * [`short_location`]: a path under the current directory is shown relative to it; a
//!   registry source as `crate-version/src/file.rs:line`; the standard library as
//!   `library/…`; and a file that no longer exists (a deleted build directory) by its name
//!   only.

use std::path::{Path, PathBuf};

/// `name` with its generic arguments elided, then cut to at most `max` characters at a `::`
/// boundary from the left (the function's own name is the part that matters).
pub fn short_name(name: &str, max: usize) -> String {
    let elided = elide_generics(name);
    if elided.chars().count() <= max {
        return elided;
    }
    // Drop leading path segments (outside angle brackets) until it fits.
    let mut depth = 0i32;
    let bytes = elided.as_bytes();
    let mut cuts = Vec::new();
    for (i, &b) in bytes.iter().enumerate() {
        match b {
            b'<' => depth += 1,
            b'>' => depth -= 1,
            b':' if depth == 0 && bytes.get(i + 1) == Some(&b':') => cuts.push(i + 2),
            _ => {}
        }
    }
    for c in cuts {
        let tail = &elided[c..];
        if tail.chars().count() + 3 <= max {
            return format!("…::{tail}");
        }
    }
    // One segment longer than the limit: keep its end.
    let n = elided.chars().count();
    let tail: String = elided.chars().skip(n + 1 - max.max(2)).collect();
    format!("…{tail}")
}

/// Replace the contents of every generic argument list (a `<` right after an identifier or
/// `::`-less path end) by `…`. A `<` that opens a qualified path (`<T as Trait>`) or an
/// `impl` segment (`<impl Trait for T>`) starts a name or follows `::`, and is kept.
fn elide_generics(name: &str) -> String {
    let chars: Vec<char> = name.chars().collect();
    let mut out = String::with_capacity(name.len());
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let after_ident = i > 0 && (chars[i - 1].is_alphanumeric() || chars[i - 1] == '_');
        if c == '<' && after_ident {
            if let Some(end) = matching_close(&chars, i) {
                out.push_str("<…>");
                i = end + 1;
                continue;
            }
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
    let (file, line) = match location.rsplit_once(':') {
        Some((f, l)) if !l.is_empty() && l.bytes().all(|b| b.is_ascii_digit()) => (f, Some(l)),
        _ => (location, None),
    };
    let shown = short_file(file, cwd);
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

/// The current directory, for [`short_location`].
pub fn current_dir() -> Option<PathBuf> {
    std::env::current_dir().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

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
    }

    #[test]
    fn long_names_keep_their_last_segments() {
        let s = short_name(
            "my_crate::some::deeply::nested::module::path::Type<X>::function_name",
            40,
        );
        assert!(s.chars().count() <= 40, "{s}");
        assert!(
            s.starts_with("…::") && s.ends_with("Type<…>::function_name"),
            "{s}"
        );
        let s = short_name(&"x".repeat(100), 20);
        assert_eq!(s.chars().count(), 20, "{s}");
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
