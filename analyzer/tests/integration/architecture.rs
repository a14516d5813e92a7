//! ARCHITECTURE.md stays true: every file or directory it names exists, and every module path
//! (`render::json`, `export::model::StackProfile`, `handler::on_sample`) names a module of the
//! analyzer or the runtime, and an item defined in it when the path ends in one.

use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The code spans of `text` (between single backticks).
fn spans(text: &str) -> Vec<&str> {
    text.split('`').skip(1).step_by(2).collect()
}

/// The file of module `segments` under `src`, if there is one.
fn module_file(src: &Path, segments: &[&str]) -> Option<PathBuf> {
    if segments.is_empty() {
        return Some(src.join("lib.rs"));
    }
    let base = src.join(segments.join("/"));
    [base.with_extension("rs"), base.join("mod.rs")]
        .into_iter()
        .find(|p| p.is_file())
}

/// Does `path` (`a::b::Item` or `a::b`) name a module of `src` (and an item defined in it)?
fn resolves(src: &Path, path: &str) -> bool {
    let segs: Vec<&str> = path.split("::").collect();
    for split in (1..=segs.len()).rev() {
        let Some(file) = module_file(src, &segs[..split]) else {
            continue;
        };
        let rest = &segs[split..];
        return match rest {
            [] => true,
            [item] => {
                let text = std::fs::read_to_string(file).unwrap();
                ["fn", "struct", "enum", "const", "type", "trait", "mod"]
                    .iter()
                    .any(|k| text.contains(&format!("{k} {item}")))
            }
            _ => false,
        };
    }
    false
}

#[test]
fn every_name_in_architecture_md_exists() {
    let text = std::fs::read_to_string(root().join("ARCHITECTURE.md")).unwrap();
    let srcs = [root().join("analyzer/src"), root().join("runtime/src")];
    let mut checked = 0;
    let mut missing = Vec::new();
    for span in spans(&text) {
        let top = ["analyzer/", "runtime/", "crates/", "fixtures/"];
        if top.iter().any(|t| span.starts_with(t)) || span.ends_with(".md") {
            checked += 1;
            if !root().join(span).exists() {
                missing.push(span.to_owned());
            }
        } else if span.contains("::")
            && span
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == ':')
        {
            checked += 1;
            if !srcs.iter().any(|s| resolves(s, span)) {
                missing.push(span.to_owned());
            }
        }
    }
    assert!(checked > 30, "only {checked} names checked");
    assert!(
        missing.is_empty(),
        "ARCHITECTURE.md names what does not exist: {missing:?}"
    );
}
