//! The interactive HTML report: one self-contained file (`profil-report html`, `run --html`,
//! `cargo profil --html`, `diff --html`).
//!
//! The page is a template written for this crate (`html/page.html`, `html/page.css`,
//! `html/page.js`, included with `include_str!`, no library vendored) and one [`Page`] of
//! plain data: the report's JSON exactly as `--json` writes it, the call tree of the sampled
//! stacks (the flame graph's), the source lines with samples, the process tree and, for
//! `diff`, the comparison's JSON. The data is serialized, gzip-compressed and base64-encoded
//! into the page, which the page's script inflates with the browser's own
//! `DecompressionStream`; nothing is fetched, and the file opens from disk with no server.
//! Every number the page shows is one of these (the header's figures are written here with
//! the text report's units); the script only lays them out, sorts, filters and sums the call
//! tree into frames.

use std::io::Write;

use flate2::write::GzEncoder;
use flate2::Compression;
use serde::Serialize;
use serde_json::value::RawValue;

use crate::units::human_seconds;
use crate::Result;

/// The page's markup, with `{{TITLE}}`, `{{STYLE}}`, `{{SCRIPT}}` and `{{DATA}}` to fill.
const TEMPLATE: &str = include_str!("html/page.html");
/// Its style sheet (light and dark).
const STYLE: &str = include_str!("html/page.css");
/// Its script.
const SCRIPT: &str = include_str!("html/page.js");

/// Everything the page shows, as plain data.
#[derive(Debug, Default, Serialize)]
pub struct Page {
    /// The page's title and heading.
    pub title: String,
    /// The header's figures as the text report writes them: (label, value).
    pub header: Vec<(String, String)>,
    /// The report's warnings.
    pub warnings: Vec<String>,
    /// The report's JSON object as `--json` writes it (None for `diff`).
    pub report: Option<Box<RawValue>>,
    /// The call tree of the sampled stacks.
    pub flame: Flame,
    /// Source lines of the functions with samples.
    pub sources: Vec<Source>,
    /// The processes of a `run` (its `--json` `processes`), when there were several.
    pub processes: Option<Box<RawValue>>,
    /// `diff`'s JSON (its `--json` output).
    pub diff: Option<Box<RawValue>>,
}

/// The sampled stacks as a call tree: the flame graph's frames.
#[derive(Debug, Default, Serialize)]
pub struct Flame {
    /// Frame names (demangled functions, inline frames included).
    pub names: Vec<String>,
    /// The objects frames are in (file names).
    pub objects: Vec<String>,
    /// For each name, its object's index in `objects` (-1: not known).
    pub object_of: Vec<i64>,
    /// The tree, three numbers per node in order of creation: the parent node's index (-1
    /// for a root), the name's index, the samples whose stack ends at this node. A parent
    /// always comes before its children.
    pub nodes: Vec<i64>,
    /// All samples in the tree.
    pub samples: u64,
    /// Samples per second.
    pub hz: u32,
}

/// One function's source lines.
#[derive(Debug, Serialize)]
pub struct Source {
    /// The function's index in [`Flame::names`].
    pub function: usize,
    /// The source file as the debug information names it.
    pub file: String,
    /// Why the text is not there (the file could not be read), or None.
    pub note: Option<String>,
    /// Lines: number, self samples, total samples (once per sample), text (empty without the
    /// file). Sorted by number; a gap in the numbers is source left out.
    pub lines: Vec<(u64, u64, u64, String)>,
}

/// The header's figures of a profile report, as its text table heads them.
#[derive(Debug, Clone, Default)]
pub struct Figures {
    /// The program.
    pub program: String,
    /// The gmon files read.
    pub gmon_files: usize,
    /// Processes in the run (None: not a run of a process tree).
    pub processes: Option<usize>,
    /// Samples.
    pub samples: f64,
    /// Samples per second.
    pub hz: u32,
    /// CPU seconds of the samples.
    pub seconds: f64,
    /// CPU seconds measured but not sampled (None: not known).
    pub unsampled_seconds: Option<f64>,
}

/// The header's (label, value) pairs for `f`, in the text report's units.
pub fn header(f: &Figures) -> Vec<(String, String)> {
    let mut h = vec![("program".to_owned(), f.program.clone())];
    if let Some(n) = f.processes {
        h.push(("processes".into(), n.to_string()));
    }
    h.push(("gmon files".into(), f.gmon_files.to_string()));
    h.push(("samples".into(), crate::units::samples(f.samples)));
    h.push(("rate".into(), format!("{} Hz", f.hz)));
    h.push(("CPU time".into(), human_seconds(f.seconds)));
    h.push((
        "not sampled".into(),
        match f.unsampled_seconds {
            Some(u) => human_seconds(u),
            None => "not known".into(),
        },
    ));
    h
}

/// Write the page for `page`.
pub fn write(page: &Page, out: &mut impl Write) -> Result<()> {
    let mut gz = GzEncoder::new(Vec::new(), Compression::fast());
    serde_json::to_writer(&mut gz, page).map_err(crate::render::json::json_error)?;
    let data = base64(&gz.finish()?);
    let title = escape(&page.title);
    // Each placeholder where the template has it; the script and data never hold `</script`.
    let mut rest = TEMPLATE;
    while let Some(at) = rest.find("{{") {
        out.write_all(&rest.as_bytes()[..at])?;
        rest = &rest[at..];
        let (key, value) = [
            ("{{TITLE}}", title.as_str()),
            ("{{STYLE}}", STYLE),
            ("{{SCRIPT}}", SCRIPT),
            ("{{DATA}}", data.as_str()),
        ]
        .into_iter()
        .find(|(k, _)| rest.starts_with(k))
        .unwrap_or(("{{", "{{"));
        out.write_all(value.as_bytes())?;
        rest = &rest[key.len()..];
    }
    out.write_all(rest.as_bytes())?;
    Ok(())
}

/// Text for HTML: `&`, `<`, `>` and `"` escaped.
fn escape(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            c => o.push(c),
        }
    }
    o
}

/// Standard base64 with padding (RFC 4648), what the browser's `atob` reads.
fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut o = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            chunk.get(1).copied().unwrap_or(0),
            chunk.get(2).copied().unwrap_or(0),
        ];
        let n = u32::from(b[0]) << 16 | u32::from(b[1]) << 8 | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                o.push(char::from(ALPHABET[(n >> (18 - 6 * i)) as usize & 63]));
            } else {
                o.push('=');
            }
        }
    }
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_matches_rfc_4648_vectors() {
        for (i, o) in [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
        ] {
            assert_eq!(base64(i.as_bytes()), o);
        }
    }

    #[test]
    fn the_title_is_escaped_and_every_placeholder_filled() {
        let page = Page {
            title: "a<b>&\"c\"".into(),
            ..Page::default()
        };
        let mut out = Vec::new();
        write(&page, &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(text.contains("a&lt;b&gt;&amp;&quot;c&quot;"));
        assert!(!text.contains("{{"), "a placeholder is left");
    }
}
