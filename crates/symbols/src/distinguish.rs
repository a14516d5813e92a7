//! Names that tell functions apart: distinct functions (different addresses or symbols) whose
//! demangled names collide get the shortest part that tells them apart, appended to the
//! demangled name.
//!
//! Demangling as gprof does ([`crate::demangle`]) drops what distinguishes the instances of a
//! generic Rust function: legacy symbols (`_ZN8wordfreq5count17h…E`) carry no generic
//! arguments at all, only a hash, so `count::<String>` and `count::<(u64, u64)>` both read
//! `wordfreq::count`. What tells them apart, in order of preference:
//!
//! 1. **Generic arguments**, from DWARF (`DW_AT_name` `count<alloc::string::String, …>`, in
//!    any build with line tables) or a v0 symbol: each argument with its paths dropped
//!    (`String`, `(u64, u64)`, `Cloned<Iter<String>>`), as few arguments as tell the
//!    colliding names apart, the rest written `…`: `wordfreq::count<String, …>`.
//! 2. **The symbol's hash** (legacy Rust, no debug information): its first hex digits, as
//!    many as tell the names apart (at least 5): `wordfreq::count [h902cf]`.
//! 3. **The address**, for anything else (two C `static` functions of one name):
//!    `helper @0x1140`.
//!
//! A name that collides with no other is left as it is.

/// One function to name: its demangled (display) name, symbol, address, and its name with
/// generic arguments from DWARF when known.
#[derive(Debug, Clone, Copy)]
pub struct Instance<'a> {
    /// The demangled name ([`crate::demangle::display_name`]).
    pub display: &'a str,
    /// The symbol as in the symbol table.
    pub raw: &'a str,
    /// Link-time address (with `raw`, the function's identity).
    pub addr: u64,
    /// DWARF's `DW_AT_name` when it carries generic arguments (`count<String, …>`).
    pub generic: Option<&'a str>,
}

/// A name for each of `items`, in order: the display name, with the shortest distinguishing
/// part added where display names collide between different functions (see the module docs).
/// The same (symbol, address) always gets the same name.
pub fn distinguish(items: &[Instance<'_>]) -> Vec<String> {
    let mut out: Vec<String> = items.iter().map(|i| i.display.to_owned()).collect();
    // Colliding display names, found by sorting (most names collide with none: one sort of
    // indices instead of a map of groups keeps a 50,000-function report's naming cheap).
    let mut order: Vec<usize> = (0..items.len()).collect();
    order.sort_unstable_by(|&a, &b| items[a].display.cmp(items[b].display).then(a.cmp(&b)));
    for members in order.chunk_by(|&a, &b| items[a].display == items[b].display) {
        if members.len() < 2 {
            continue;
        }
        // The distinct functions of the group.
        let mut distinct: Vec<usize> = Vec::new();
        for &m in members {
            if !distinct
                .iter()
                .any(|&d| items[d].raw == items[m].raw && items[d].addr == items[m].addr)
            {
                distinct.push(m);
            }
        }
        if distinct.len() < 2 {
            continue;
        }
        let named: Vec<&Instance<'_>> = distinct.iter().map(|&d| &items[d]).collect();
        let names = by_generics(&named)
            .or_else(|| by_hash(&named))
            .unwrap_or_else(|| {
                named
                    .iter()
                    .map(|i| format!("{} @{:#x}", i.display, i.addr))
                    .collect()
            });
        for &m in members {
            let k = distinct
                .iter()
                .position(|&d| items[d].raw == items[m].raw && items[d].addr == items[m].addr)
                .unwrap_or(0);
            out[m] = names[k].clone();
        }
    }
    out
}

/// All names different?
fn all_differ(names: &[String]) -> bool {
    let mut sorted: Vec<&String> = names.iter().collect();
    sorted.sort();
    sorted.windows(2).all(|w| w[0] != w[1])
}

/// `display<A, …>` with the fewest generic arguments that tell the instances apart.
fn by_generics(items: &[&Instance<'_>]) -> Option<Vec<String>> {
    let args: Vec<Vec<String>> = items
        .iter()
        .map(|i| {
            let text = match i.generic {
                Some(g) => g.to_owned(),
                None => v0_generics(i.raw)?,
            };
            generic_args(&text)
        })
        .collect::<Option<_>>()?;
    let short: Vec<Vec<String>> = args
        .iter()
        .map(|a| a.iter().map(|t| drop_paths(t)).collect())
        .collect();
    let most = args.iter().map(Vec::len).max()?;
    for list in [&short, &args] {
        for k in 1..=most {
            let names: Vec<String> = items
                .iter()
                .zip(list)
                .map(|(i, a)| {
                    let shown = a[..k.min(a.len())].join(", ");
                    let more = if a.len() > k { ", …" } else { "" };
                    format!("{}<{shown}{more}>", i.display)
                })
                .collect();
            if all_differ(&names) {
                return Some(names);
            }
        }
    }
    None
}

/// The generic arguments of a v0 symbol's instance (`count::<String, …>`), as text.
fn v0_generics(raw: &str) -> Option<String> {
    if !raw.starts_with("_R") {
        return None;
    }
    let d = rustc_demangle::try_demangle(raw).ok()?;
    let full = format!("{d:#}");
    // The instance's arguments close the name: `path::name::<A, B>`.
    let open = full.rfind("::<")?;
    full.ends_with('>').then(|| full[open + 2..].to_owned())
}

/// The top-level generic arguments of `name<A, B<C, D>, (E, F)>`; `None` without `<…>`.
fn generic_args(name: &str) -> Option<Vec<String>> {
    let open = name.find('<')?;
    let body = name[open + 1..].strip_suffix('>')?;
    let mut args = Vec::new();
    let (mut depth, mut start) = (0i32, 0);
    for (i, c) in body.char_indices() {
        match c {
            '<' | '(' | '[' => depth += 1,
            '>' | ')' | ']' => depth -= 1,
            ',' if depth == 0 => {
                args.push(body[start..i].trim().to_owned());
                start = i + 1;
            }
            _ => {}
        }
    }
    args.push(body[start..].trim().to_owned());
    Some(args).filter(|a| a.iter().all(|s| !s.is_empty()))
}

/// `alloc::string::String` → `String`; `core::slice::iter::Iter<alloc::string::String>` →
/// `Iter<String>`: every `segment::` before an identifier is dropped.
pub fn drop_paths(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut word = String::new();
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c.is_alphanumeric() || c == '_' {
            word.push(c);
            continue;
        }
        if c == ':' && chars.peek() == Some(&':') {
            chars.next();
            word.clear();
            continue;
        }
        out.push_str(&word);
        word.clear();
        out.push(c);
    }
    out.push_str(&word);
    out
}

/// `display [hXXXXX]`: the legacy hash's first digits (5 or more) that tell them apart.
fn by_hash(items: &[&Instance<'_>]) -> Option<Vec<String>> {
    let hashes: Vec<&str> = items
        .iter()
        .map(|i| legacy_hash(i.raw))
        .collect::<Option<_>>()?;
    for k in 5..=16 {
        let names: Vec<String> = items
            .iter()
            .zip(&hashes)
            .map(|(i, h)| format!("{} [h{}]", i.display, &h[..k]))
            .collect();
        if all_differ(&names) {
            return Some(names);
        }
    }
    None
}

/// A legacy Rust symbol without its hash (`_ZN8wordfreq5count` of
/// `_ZN8wordfreq5count17h902cf1327b8fa0c7E`): symbols with the same one demangle alike.
pub fn legacy_path(raw: &str) -> Option<&str> {
    legacy_hash(raw)?;
    if !raw.starts_with("_ZN") {
        return None;
    }
    Some(&raw[..raw.rfind("17h")?])
}

/// The 16 hex digits of a legacy Rust symbol's hash (`…17h0123456789abcdefE`).
fn legacy_hash(raw: &str) -> Option<&str> {
    let i = raw.rfind("17h")?;
    let tail = &raw[i + 3..];
    let hex = tail.get(..16)?;
    (hex.bytes().all(|b| b.is_ascii_hexdigit()) && tail[16..].starts_with('E')).then_some(hex)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn inst<'a>(
        display: &'a str,
        raw: &'a str,
        addr: u64,
        generic: Option<&'a str>,
    ) -> Instance<'a> {
        Instance {
            display,
            raw,
            addr,
            generic,
        }
    }

    #[test]
    fn generic_arguments_tell_instances_apart() {
        let a = "count<alloc::string::String, core::iter::adapters::cloned::Cloned<core::slice::iter::Iter<alloc::string::String>>>";
        let b = "count<(u64, u64), core::iter::adapters::copied::Copied<core::slice::iter::Iter<(u64, u64)>>>";
        let names = distinguish(&[
            inst(
                "wordfreq::count",
                "_ZN8wordfreq5count17h902cf1327b8fa0c7E",
                0x10,
                Some(a),
            ),
            inst(
                "wordfreq::main",
                "_ZN8wordfreq4main17h0000000000000000E",
                0x20,
                None,
            ),
            inst(
                "wordfreq::count",
                "_ZN8wordfreq5count17hee02884db8a4f9beE",
                0x30,
                Some(b),
            ),
            inst(
                "wordfreq::count",
                "_ZN8wordfreq5count17h902cf1327b8fa0c7E",
                0x10,
                Some(a),
            ),
        ]);
        assert_eq!(
            names,
            [
                "wordfreq::count<String, …>",
                "wordfreq::main",
                "wordfreq::count<(u64, u64), …>",
                "wordfreq::count<String, …>"
            ]
        );
    }

    #[test]
    fn the_hash_without_debug_information_then_the_address() {
        let names = distinguish(&[
            inst("w::count", "_ZN1w5count17h902cf1327b8fa0c7E", 0x10, None),
            inst("w::count", "_ZN1w5count17h902cf4427b8fa0c7E", 0x30, None),
            inst("helper", "helper", 0x40, None),
            inst("helper", "helper", 0x50, None),
        ]);
        assert_eq!(
            names,
            [
                "w::count [h902cf1]",
                "w::count [h902cf4]",
                "helper @0x40",
                "helper @0x50"
            ]
        );
    }

    #[test]
    fn paths_are_dropped_inside_arguments() {
        assert_eq!(
            drop_paths("core::iter::Cloned<core::slice::iter::Iter<alloc::string::String>>"),
            "Cloned<Iter<String>>"
        );
        assert_eq!(
            generic_args("f<A<B, C>, (D, E)>").unwrap(),
            ["A<B, C>", "(D, E)"]
        );
    }
}
