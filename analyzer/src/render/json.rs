//! The reports' `--json` outputs, written with `serde_json` from `#[derive(Serialize)]`
//! structs: the key order is the order of the struct's fields.
//!
//! # Layout
//!
//! A report is one object, one key per line (two spaces of indentation per level, as
//! `serde_json`'s pretty printer writes it), whose tables have one row per line, so that a
//! report can be read, grepped and diffed line by line:
//!
//! ```text
//! {
//!   "executable": "prog",
//!   "gmon_files": ["gmon.out"],
//!   "rows": [
//!     {"rank": 1, "name": "main", "aliases": []},
//!     {"rank": 2, "name": "f", "aliases": ["g","h"]}
//!   ]
//! }
//! ```
//!
//! The struct says which parts go on one line, with two wrappers: [`OneLine`] (a row: `", "`
//! between members, `": "` after keys; a list of rows is a `Vec<OneLine<Row>>`) and
//! [`Compact`] (a list of names: no spaces at all). Each is rendered on its own and inserted
//! as a `serde_json` raw value; everything else is pretty-printed (an empty list is `[]`).
//! `profil-report dump --json` is compact
//! throughout ([`write_compact`]).
//!
//! # Numbers and strings
//!
//! Floating-point numbers are written as Rust's `Display` writes them, the shortest form
//! that reads back as the same number, without an exponent (`3`, not `3.0`; `0.0001`, not
//! `1e-4`): the form these outputs have always had, which `serde_json`'s own (`3.0`, `1e-4`)
//! would change in every row. NaN and infinities are `null` (JSON cannot hold them).
//! Strings are escaped as `serde_json` does, except that backspace and form feed are written
//! `\u0008` and `\u000c` (as every other control character but `\n`, `\r`, `\t`) rather than
//! `\b` and `\f`: again the form the outputs had.

use std::io::{self, Write};

use serde::{Serialize, Serializer};
use serde_json::ser::{CharEscape, CompactFormatter, Formatter, PrettyFormatter};
use serde_json::value::RawValue;

use crate::Result;

/// Write `value` as a report: pretty-printed (with [`OneLine`] and [`Compact`] parts on one
/// line), then a newline.
pub fn write_report<T: Serialize + ?Sized>(out: &mut impl Write, value: &T) -> Result<()> {
    let pretty = Numbers(PrettyFormatter::with_indent(b"  "));
    write_with(out, value, pretty)
}

/// Write `value` on one line without spaces, then a newline.
pub fn write_compact<T: Serialize + ?Sized>(out: &mut impl Write, value: &T) -> Result<()> {
    write_with(out, value, Numbers(CompactFormatter))
}

fn write_with<T: Serialize + ?Sized>(
    out: &mut impl Write,
    value: &T,
    formatter: impl Formatter,
) -> Result<()> {
    let mut ser = serde_json::Serializer::with_formatter(&mut *out, formatter);
    value.serialize(&mut ser).map_err(json_error)?;
    out.write_all(b"\n")?;
    Ok(())
}

/// `value` on one line as [`OneLine`] writes it (for a part spliced into another output).
pub fn one_line<T: Serialize + ?Sized>(value: &T) -> Result<String> {
    let mut text = Vec::new();
    let mut ser = serde_json::Serializer::with_formatter(&mut text, Numbers(Spaced));
    value.serialize(&mut ser).map_err(json_error)?;
    String::from_utf8(text).map_err(|e| crate::Error::input(format!("JSON: {e}")))
}

/// Write `value` on one line, spaced like [`OneLine`], except that each element of a list in
/// the top object goes on a line of its own: `{"a": 1, "list": [\n{..},\n{..}\n]}` (`run
/// --all --json`: one report per element).
pub fn write_listing<T: Serialize + ?Sized>(out: &mut impl Write, value: &T) -> Result<()> {
    write_with(out, value, Numbers(Listing::default()))
}

/// A rendered report's JSON object read back as its keys and the text of their values, in
/// order: an output that holds reports (`run --json`) puts them in its own serde structs
/// (a flattened field, or an element) and each value is written out exactly as the report
/// wrote it.
#[derive(Debug, Default)]
pub struct ReportObject(pub Vec<(String, Box<RawValue>)>);

impl ReportObject {
    /// Read the JSON object `text` (a report [`write_report`] wrote).
    pub fn parse(text: &[u8]) -> Result<ReportObject> {
        serde_json::from_slice(text).map_err(|e| crate::Error::input(format!("JSON: {e}")))
    }

    /// The object without the key `key`.
    pub fn without(mut self, key: &str) -> ReportObject {
        self.0.retain(|(k, _)| k != key);
        self
    }
}

impl Serialize for ReportObject {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap as _;
        let mut map = s.serialize_map(Some(self.0.len()))?;
        for (k, v) in &self.0 {
            map.serialize_entry(k, v)?;
        }
        map.end()
    }
}

impl<'de> serde::Deserialize<'de> for ReportObject {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        struct Keys;
        impl<'de> serde::de::Visitor<'de> for Keys {
            type Value = ReportObject;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> std::result::Result<ReportObject, A::Error> {
                let mut fields = Vec::new();
                while let Some(entry) = map.next_entry::<String, Box<RawValue>>()? {
                    fields.push(entry);
                }
                Ok(ReportObject(fields))
            }
        }
        d.deserialize_map(Keys)
    }
}

/// A write error stays an I/O error (a closed pipe ends the program quietly).
pub fn json_error(e: serde_json::Error) -> crate::Error {
    match e.io_error_kind() {
        Some(kind) => crate::Error::from(io::Error::new(kind, e)),
        None => crate::Error::input(format!("JSON: {e}")),
    }
}

/// The fields a profile report's JSON starts with (the default, lines and inline reports
/// flatten it into their own object): the executable, the gmon files, the rate and the totals.
#[derive(Debug, Serialize)]
pub struct Header<'a> {
    /// The executable as given.
    pub executable: &'a str,
    /// The gmon files, in the order read.
    pub gmon_files: Compact<&'a [String]>,
    /// Samples per second.
    pub hz: u32,
    /// Samples in the histograms.
    pub total_samples: u64,
    /// Their seconds.
    pub total_seconds: f64,
}

impl<'a> Header<'a> {
    /// The header of a report of `executable` from `gmon_files`: `total_samples` at `hz`,
    /// `total_seconds` of CPU time.
    pub fn new(
        executable: &'a str,
        gmon_files: &'a [String],
        hz: u32,
        total_samples: u64,
        total_seconds: f64,
    ) -> Header<'a> {
        Header {
            executable,
            gmon_files: Compact(gmon_files),
            hz,
            total_samples,
            total_seconds,
        }
    }
}

/// `T` on one line: `{"a": 1, "b": [2, 3]}`.
#[derive(Debug, Clone, Copy)]
pub struct OneLine<T>(pub T);

/// `T` on one line without spaces: `["a","b"]`.
#[derive(Debug, Clone, Copy)]
pub struct Compact<T>(pub T);

impl<T: Serialize> Serialize for OneLine<T> {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        raw(&self.0, Numbers(Spaced), s)
    }
}

impl<T: Serialize> Serialize for Compact<T> {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        raw(&self.0, Numbers(CompactFormatter), s)
    }
}

/// `value` rendered with `formatter`, handed to `s` as a raw JSON value.
fn raw<T: Serialize, S: Serializer>(
    value: &T,
    formatter: impl Formatter,
    s: S,
) -> std::result::Result<S::Ok, S::Error> {
    use serde::ser::Error as _;
    let mut text = Vec::new();
    let mut ser = serde_json::Serializer::with_formatter(&mut text, formatter);
    value.serialize(&mut ser).map_err(S::Error::custom)?;
    let text = String::from_utf8(text).map_err(S::Error::custom)?;
    RawValue::from_string(text)
        .map_err(S::Error::custom)?
        .serialize(s)
}

/// One line with a space after each comma and colon.
struct Spaced;

impl Formatter for Spaced {
    fn begin_array_value<W: ?Sized + Write>(&mut self, w: &mut W, first: bool) -> io::Result<()> {
        if first {
            Ok(())
        } else {
            w.write_all(b", ")
        }
    }

    fn begin_object_key<W: ?Sized + Write>(&mut self, w: &mut W, first: bool) -> io::Result<()> {
        if first {
            Ok(())
        } else {
            w.write_all(b", ")
        }
    }

    fn begin_object_value<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        w.write_all(b": ")
    }
}

/// [`write_listing`]'s layout: [`Spaced`], but the lists of the top object one element per
/// line.
#[derive(Default)]
struct Listing {
    /// Containers open.
    depth: usize,
    /// For each list open: whether it is listed one element per line, and has elements.
    lists: Vec<(bool, bool)>,
}

impl Formatter for Listing {
    fn begin_object<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.depth += 1;
        w.write_all(b"{")
    }

    fn end_object<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.depth -= 1;
        w.write_all(b"}")
    }

    fn begin_array<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        let listed = self.depth == 1;
        self.depth += 1;
        self.lists.push((listed, false));
        w.write_all(if listed { b"[\n" } else { b"[" })
    }

    fn end_array<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.depth -= 1;
        match self.lists.pop() {
            Some((true, true)) => w.write_all(b"\n]"),
            _ => w.write_all(b"]"),
        }
    }

    fn begin_array_value<W: ?Sized + Write>(&mut self, w: &mut W, first: bool) -> io::Result<()> {
        let listed = match self.lists.last_mut() {
            Some(l) => {
                l.1 = true;
                l.0
            }
            None => false,
        };
        match (first, listed) {
            (true, _) => Ok(()),
            (false, true) => w.write_all(b",\n"),
            (false, false) => w.write_all(b", "),
        }
    }

    fn begin_object_key<W: ?Sized + Write>(&mut self, w: &mut W, first: bool) -> io::Result<()> {
        Spaced.begin_object_key(w, first)
    }

    fn begin_object_value<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        Spaced.begin_object_value(w)
    }
}

/// A layout `F` with this module's number and escape forms (see the module docs).
struct Numbers<F>(F);

impl<F: Formatter> Formatter for Numbers<F> {
    fn write_f64<W: ?Sized + Write>(&mut self, w: &mut W, value: f64) -> io::Result<()> {
        // serde_json writes non-finite values as null without asking the formatter.
        write!(w, "{value}")
    }

    fn write_f32<W: ?Sized + Write>(&mut self, w: &mut W, value: f32) -> io::Result<()> {
        write!(w, "{value}")
    }

    fn write_char_escape<W: ?Sized + Write>(
        &mut self,
        w: &mut W,
        escape: CharEscape,
    ) -> io::Result<()> {
        match escape {
            CharEscape::Backspace => w.write_all(b"\\u0008"),
            CharEscape::FormFeed => w.write_all(b"\\u000c"),
            other => self.0.write_char_escape(w, other),
        }
    }

    fn begin_array<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.begin_array(w)
    }

    fn end_array<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.end_array(w)
    }

    fn begin_array_value<W: ?Sized + Write>(&mut self, w: &mut W, first: bool) -> io::Result<()> {
        self.0.begin_array_value(w, first)
    }

    fn end_array_value<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.end_array_value(w)
    }

    fn begin_object<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.begin_object(w)
    }

    fn end_object<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.end_object(w)
    }

    fn begin_object_key<W: ?Sized + Write>(&mut self, w: &mut W, first: bool) -> io::Result<()> {
        self.0.begin_object_key(w, first)
    }

    fn end_object_key<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.end_object_key(w)
    }

    fn begin_object_value<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.begin_object_value(w)
    }

    fn end_object_value<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.end_object_value(w)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Serialize)]
    struct Row<'a> {
        rank: usize,
        name: &'a str,
        members: Vec<u32>,
        aliases: Compact<&'a [&'a str]>,
        calls: Option<u64>,
    }

    #[derive(Serialize)]
    struct Doc<'a> {
        files: Compact<&'a [&'a str]>,
        seconds: f64,
        rows: Vec<OneLine<Row<'a>>>,
        empty: Vec<OneLine<Row<'a>>>,
        notes: &'a [&'a str],
    }

    fn report(d: &Doc<'_>) -> String {
        let mut v = Vec::new();
        write_report(&mut v, d).unwrap();
        String::from_utf8(v).unwrap()
    }

    #[test]
    fn rows_go_on_one_line_and_lists_of_names_without_spaces() {
        let d = Doc {
            files: Compact(&["a", "b"]),
            seconds: 3.0,
            rows: vec![
                OneLine(Row {
                    rank: 1,
                    name: "main",
                    members: vec![3, 4],
                    aliases: Compact(&[]),
                    calls: None,
                }),
                OneLine(Row {
                    rank: 2,
                    name: "f",
                    members: vec![],
                    aliases: Compact(&["g", "h"]),
                    calls: Some(7),
                }),
            ],
            empty: vec![],
            notes: &["x"],
        };
        assert_eq!(
            report(&d),
            "{\n  \"files\": [\"a\",\"b\"],\n  \"seconds\": 3,\n  \"rows\": [\n    \
             {\"rank\": 1, \"name\": \"main\", \"members\": [3, 4], \"aliases\": [], \"calls\": null},\n    \
             {\"rank\": 2, \"name\": \"f\", \"members\": [], \"aliases\": [\"g\",\"h\"], \"calls\": 7}\n  ],\n  \
             \"empty\": [],\n  \"notes\": [\n    \"x\"\n  ]\n}\n"
        );
    }

    fn compact<T: Serialize>(v: T) -> String {
        let mut o = Vec::new();
        write_compact(&mut o, &v).unwrap();
        String::from_utf8(o).unwrap()
    }

    #[test]
    fn numbers_keep_the_display_form_and_non_finite_is_null() {
        assert_eq!(compact(0.5), "0.5\n");
        assert_eq!(compact(3.0), "3\n");
        assert_eq!(compact(-0.0), "-0\n");
        assert_eq!(compact(1e-7), "0.0000001\n");
        assert_eq!(compact(0.1 + 0.2), "0.30000000000000004\n");
        assert_eq!(compact(f64::NAN), "null\n");
        assert_eq!(compact(f64::INFINITY), "null\n");
        assert_eq!(compact([Some(7u32), None]), "[7,null]\n");
    }

    #[test]
    fn strings_escape_quotes_backslashes_and_controls() {
        assert_eq!(compact("plain"), "\"plain\"\n");
        assert_eq!(compact("a\"b\\c"), "\"a\\\"b\\\\c\"\n");
        assert_eq!(compact("\n\r\t"), "\"\\n\\r\\t\"\n");
        assert_eq!(
            compact("\u{1}\u{8}\u{c}\u{1f}"),
            "\"\\u0001\\u0008\\u000c\\u001f\"\n"
        );
        assert_eq!(compact("é ∑ \u{7f}"), "\"é ∑ \u{7f}\"\n");
        // Inside a one-line part too.
        assert_eq!(compact(OneLine(["\u{8}"])), "[\"\\u0008\"]\n");
    }
}
