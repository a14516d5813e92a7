//! No import cycles between modules (issue 25): the module graph of every crate of the
//! workspace — the analyzer's library and binaries, the runtime, `crates/*` — read from the
//! sources, must have no cycle.
//!
//! How the graph is read: the crate's modules are found from its root by their `mod name;`
//! declarations (`#[path]` honoured); a module is one file (its inline modules, tests
//! included, are part of it). A module depends on another when its code names it: a path that
//! starts with `crate::`, `super::`, `self::` or the name of one of its own submodules, in a
//! `use` (groups `{..}` expanded) or in an expression, goes to the deepest module the path
//! names. Comments, string literals and `#[cfg(test)]` modules are skipped. A module may
//! name what its ancestors define (they are its namespace: `crate::Error`, `super::Options`),
//! so a path to an ancestor is no dependency; a parent's `mod x;` is none either, its
//! `pub use x::..` is. A cycle is then between siblings or cousins: two files that each need
//! the other.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// One crate: its module tree and the dependencies between its modules.
struct Graph {
    /// Module path ("" for the root) → its file.
    files: BTreeMap<String, PathBuf>,
    /// Module → the modules it names, each with the first line that does.
    deps: BTreeMap<String, BTreeMap<String, usize>>,
}

/// `text` without comments, and with string and char literals emptied (line breaks kept).
fn strip(text: &str) -> String {
    let b = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'/' if b.get(i + 1) == Some(&b'/') => {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                let mut depth = 0;
                while i < b.len() {
                    if b[i..].starts_with(b"/*") {
                        depth += 1;
                        i += 2;
                    } else if b[i..].starts_with(b"*/") {
                        depth -= 1;
                        i += 2;
                        if depth == 0 {
                            break;
                        }
                    } else {
                        if b[i] == b'\n' {
                            out.push('\n');
                        }
                        i += 1;
                    }
                }
            }
            b'r' if (b.get(i + 1) == Some(&b'"') || b.get(i + 1) == Some(&b'#'))
                && (i == 0 || !(b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_')) =>
            {
                // Raw string r"..." / r#"..."#.
                let mut j = i + 1;
                let mut hashes = 0;
                while b.get(j) == Some(&b'#') {
                    hashes += 1;
                    j += 1;
                }
                if b.get(j) != Some(&b'"') {
                    out.push('r');
                    i += 1;
                    continue;
                }
                j += 1;
                let close: Vec<u8> = std::iter::once(b'"')
                    .chain(std::iter::repeat_n(b'#', hashes))
                    .collect();
                while j < b.len() && !b[j..].starts_with(&close) {
                    if b[j] == b'\n' {
                        out.push('\n');
                    }
                    j += 1;
                }
                out.push_str("\"\"");
                i = j + close.len();
            }
            b'"' => {
                i += 1;
                while i < b.len() && b[i] != b'"' {
                    if b[i] == b'\\' {
                        i += 1;
                    }
                    if i < b.len() && b[i] == b'\n' {
                        out.push('\n');
                    }
                    i += 1;
                }
                out.push_str("\"\"");
                i += 1;
            }
            b'\'' => {
                // A char literal ('x', '\n', '\u{..}') or a lifetime ('a).
                let end = if b.get(i + 1) == Some(&b'\\') {
                    b[i + 2..]
                        .iter()
                        .position(|&c| c == b'\'')
                        .map(|p| i + 2 + p)
                } else if b.get(i + 2) == Some(&b'\'') {
                    Some(i + 2)
                } else {
                    None
                };
                match end {
                    Some(e) => {
                        out.push_str("' '");
                        i = e + 1;
                    }
                    None => {
                        out.push('\'');
                        i += 1;
                    }
                }
            }
            _ => {
                let c = text[i..].chars().next().unwrap();
                out.push(c);
                i += c.len_utf8();
            }
        }
    }
    out
}

/// `code` without its `#[cfg(test)]` modules (blanked, line breaks kept).
fn without_tests(code: &str) -> String {
    let mut out = code.to_owned();
    let mut from = 0;
    while let Some(at) = out[from..].find("#[cfg(test)]").map(|p| p + from) {
        let after = out[at + 12..].trim_start();
        if !(after.starts_with("mod ") || after.starts_with("pub mod ")) {
            from = at + 12;
            continue;
        }
        let Some(open) = out[at..].find('{').map(|p| p + at) else {
            break;
        };
        let mut depth = 0;
        let mut end = out.len();
        for (i, c) in out[open..].char_indices() {
            match c {
                '{' => depth += 1,
                '}' => {
                    depth -= 1;
                    if depth == 0 {
                        end = open + i + 1;
                        break;
                    }
                }
                _ => {}
            }
        }
        let blank: String = out[at..end]
            .chars()
            .map(|c| if c == '\n' { '\n' } else { ' ' })
            .collect();
        out.replace_range(at..end, &blank);
        from = at + blank.len();
    }
    out
}

fn is_ident(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// The paths in `code` (`a::b::c`, with `use` groups expanded), each with its line.
fn paths(code: &str) -> Vec<(Vec<String>, usize)> {
    let mut found = Vec::new();
    let chars: Vec<char> = code.chars().collect();
    let line_of = |at: usize| chars[..at].iter().filter(|&&c| c == '\n').count() + 1;
    let mut i = 0;
    while i < chars.len() {
        if !is_ident(chars[i]) || (i > 0 && (is_ident(chars[i - 1]) || chars[i - 1] == ':')) {
            i += 1;
            continue;
        }
        let start = i;
        let mut prefix = Vec::new();
        expand(&chars, &mut i, &mut prefix, &mut |p| {
            found.push((p, line_of(start)))
        });
    }
    found
}

/// Read a path (or a `use` tree) at `*i` after `prefix`, calling `emit` for each full path.
fn expand(
    chars: &[char],
    i: &mut usize,
    prefix: &mut Vec<String>,
    emit: &mut dyn FnMut(Vec<String>),
) {
    let skip_ws = |i: &mut usize| {
        while *i < chars.len() && chars[*i].is_whitespace() {
            *i += 1;
        }
    };
    let depth = prefix.len();
    loop {
        skip_ws(i);
        if *i < chars.len() && chars[*i] == '{' {
            *i += 1;
            loop {
                skip_ws(i);
                if *i >= chars.len() || chars[*i] == '}' {
                    *i += 1;
                    break;
                }
                if chars[*i] == ',' {
                    *i += 1;
                    continue;
                }
                if !is_ident(chars[*i]) && chars[*i] != '*' && chars[*i] != '{' {
                    *i += 1;
                    continue;
                }
                let mut sub = prefix.clone();
                expand(chars, i, &mut sub, emit);
            }
            prefix.truncate(depth);
            return;
        }
        let s = *i;
        while *i < chars.len() && (is_ident(chars[*i]) || chars[*i] == '*') {
            *i += 1;
        }
        if *i == s {
            break;
        }
        prefix.push(chars[s..*i].iter().collect());
        let mut j = *i;
        while j < chars.len() && chars[j] == ' ' {
            j += 1;
        }
        if chars.get(j) == Some(&':') && chars.get(j + 1) == Some(&':') {
            *i = j + 2;
            continue;
        }
        break;
    }
    if prefix.len() > 1 {
        emit(prefix.clone());
    }
    prefix.truncate(depth);
}

/// The `mod name;` declarations of `code` (with their `#[path]`, if any).
fn submodules(code: &str) -> Vec<(String, Option<String>)> {
    let mut subs = Vec::new();
    let mut path_attr = None;
    for line in code.lines() {
        let t = line.trim();
        if let Some(p) = t.strip_prefix("#[path = ") {
            path_attr = Some(p.trim_end_matches(']').trim_matches('"').to_owned());
            continue;
        }
        let t = t
            .strip_prefix("pub(crate) ")
            .or(t.strip_prefix("pub "))
            .unwrap_or(t);
        if let Some(name) = t.strip_prefix("mod ").and_then(|r| r.strip_suffix(';')) {
            subs.push((name.trim().to_owned(), path_attr.take()));
        } else if !t.starts_with("#[") {
            path_attr = None;
        }
    }
    subs
}

fn join(a: &str, b: &str) -> String {
    if a.is_empty() {
        b.to_owned()
    } else {
        format!("{a}::{b}")
    }
}

/// The crate rooted at `root`. Its `#[path]` strings hold no quotes in the stripped text,
/// so modules are found in the raw text.
fn graph(root: &Path) -> Graph {
    let mut files = BTreeMap::new();
    let mut todo = vec![(String::new(), root.to_path_buf())];
    while let Some((module, file)) = todo.pop() {
        let raw =
            std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        let dir = if module.is_empty() || file.file_name().is_some_and(|n| n == "mod.rs") {
            file.parent().unwrap().to_path_buf()
        } else {
            file.with_extension("")
        };
        for (name, path) in submodules(&raw) {
            let f = match path {
                Some(p) => file.parent().unwrap().join(p),
                None if dir.join(format!("{name}.rs")).is_file() => dir.join(format!("{name}.rs")),
                None => dir.join(&name).join("mod.rs"),
            };
            todo.push((join(&module, &name), f));
        }
        files.insert(module, file);
    }
    let mut deps: BTreeMap<String, BTreeMap<String, usize>> = BTreeMap::new();
    for (module, file) in &files {
        let code = without_tests(&strip(&std::fs::read_to_string(file).unwrap()));
        let own: Vec<&str> = module.split("::").filter(|s| !s.is_empty()).collect();
        for (p, line) in paths(&code) {
            let mut at: Vec<&str> = match p[0].as_str() {
                "crate" => Vec::new(),
                "self" => own.clone(),
                "super" => own[..own.len().saturating_sub(1)].to_vec(),
                first if files.contains_key(&join(module, first)) => own.clone(),
                _ => continue,
            };
            let mut rest = &p[..];
            if matches!(p[0].as_str(), "crate" | "self" | "super") {
                rest = &p[1..];
            }
            while let Some(s) = rest.first() {
                if s == "super" {
                    at.pop();
                } else if files.contains_key(&join(&at.join("::"), s)) {
                    at.push(s);
                } else {
                    break;
                }
                rest = &rest[1..];
            }
            let target = at.join("::");
            let ancestor = target.is_empty() || module.starts_with(&format!("{target}::"));
            if &target != module && !ancestor {
                deps.entry(module.clone())
                    .or_default()
                    .entry(target)
                    .or_insert(line);
            }
        }
    }
    Graph { files, deps }
}

/// The strongly connected components of more than one module (Tarjan).
fn cycles(g: &Graph) -> Vec<Vec<String>> {
    struct State<'a> {
        g: &'a Graph,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        on: BTreeSet<&'a str>,
        out: Vec<Vec<String>>,
    }
    fn visit<'a>(s: &mut State<'a>, v: &'a str) {
        let n = s.index.len();
        s.index.insert(v, n);
        s.low.insert(v, n);
        s.stack.push(v);
        s.on.insert(v);
        for w in s.g.deps.get(v).into_iter().flat_map(|d| d.keys()) {
            if !s.index.contains_key(w.as_str()) {
                visit(s, w);
                let lw = s.low[w.as_str()];
                let lv = s.low.get_mut(v).unwrap();
                *lv = (*lv).min(lw);
            } else if s.on.contains(w.as_str()) {
                let iw = s.index[w.as_str()];
                let lv = s.low.get_mut(v).unwrap();
                *lv = (*lv).min(iw);
            }
        }
        if s.low[v] == s.index[v] {
            let mut comp = Vec::new();
            while let Some(w) = s.stack.pop() {
                s.on.remove(w);
                comp.push(w.to_owned());
                if w == v {
                    break;
                }
            }
            if comp.len() > 1 {
                comp.sort();
                s.out.push(comp);
            }
        }
    }
    let mut s = State {
        g,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on: BTreeSet::new(),
        out: Vec::new(),
    };
    for m in g.files.keys() {
        if !s.index.contains_key(m.as_str()) {
            visit(&mut s, m);
        }
    }
    s.out
}

/// Fail with every cycle of the crate rooted at `root` (relative to the workspace), each
/// module with the dependencies that close it and the line that makes each.
fn check(root: &str) {
    let ws = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let g = graph(&ws.join(root));
    assert!(
        g.files.len() > 1 || root.contains("bin/"),
        "{root}: no modules found"
    );
    let found = cycles(&g);
    let mut msg = String::new();
    for comp in &found {
        msg.push_str(&format!("cycle in {root}:\n"));
        for m in comp {
            for (t, line) in &g.deps[m] {
                if comp.contains(t) {
                    let f = g.files[m]
                        .strip_prefix(&ws)
                        .unwrap_or(&g.files[m])
                        .display()
                        .to_string();
                    msg.push_str(&format!("  {m} → {t} ({f}:{line})\n"));
                }
            }
        }
    }
    assert!(found.is_empty(), "{msg}");
}

#[test]
fn analyzer_library() {
    check("analyzer/src/lib.rs");
}

#[test]
fn analyzer_binary() {
    check("analyzer/src/main.rs");
}

#[test]
fn cargo_profil_binary() {
    check("analyzer/src/bin/cargo-profil.rs");
}

#[test]
fn runtime() {
    check("runtime/src/lib.rs");
}

#[test]
fn gmon() {
    check("crates/gmon/src/lib.rs");
}

#[test]
fn symbols() {
    check("crates/symbols/src/lib.rs");
}

/// The checker finds a cycle through `super::`, `crate::`, a group and an expression path,
/// and none through a parent's `mod` declaration or a comment.
#[test]
fn checker_finds_cycles() {
    let dir = crate::support::TempDir::new("cycles");
    let w = |p: &str, t: &str| {
        let f = dir.join(p);
        std::fs::create_dir_all(f.parent().unwrap()).unwrap();
        std::fs::write(f, t).unwrap();
    };
    w(
        "lib.rs",
        "mod a;\nmod b;\npub mod c;\n// use crate::a::X;\n",
    );
    w("a.rs", "use crate::{b::{self, Y}, c};\n");
    w("b.rs", "fn f() { super::c::g(\"crate::a\"); }\n");
    w("c.rs", "mod d;\nfn g() { crate::a::h(); }\n");
    w("c/d.rs", "use super::super::b;\n");
    let g = graph(&dir.join("lib.rs"));
    assert_eq!(g.files.len(), 5);
    assert_eq!(
        cycles(&g),
        vec![vec!["a".to_owned(), "b".into(), "c".into()]]
    );
    w("c.rs", "mod d;\nfn g() { /* crate::a::h() */ }\n");
    assert!(cycles(&graph(&dir.join("lib.rs"))).is_empty());
}
