//! The few JSON writing helpers every `--json` output shares (`dump`, the default report and
//! its call graph). The outputs are written by hand, field by field, so that their key order
//! and number formatting are fixed and reviewable; these functions only turn one value into
//! its JSON text.

use std::fmt::Write as _;

/// `s` as a JSON string literal, quotes included. Control characters are escaped (`\n`,
/// `\r`, `\t` by name, the others as `\u00XX`); everything else is kept as UTF-8.
pub fn json_str(s: &str) -> String {
    let mut o = String::with_capacity(s.len() + 2);
    o.push('"');
    for c in s.chars() {
        match c {
            '"' => o.push_str("\\\""),
            '\\' => o.push_str("\\\\"),
            '\n' => o.push_str("\\n"),
            '\r' => o.push_str("\\r"),
            '\t' => o.push_str("\\t"),
            c if (c as u32) < 0x20 => {
                let _ = write!(o, "\\u{:04x}", c as u32);
            }
            c => o.push(c),
        }
    }
    o.push('"');
    o
}

/// A finite number as Rust's shortest round-trip form; NaN and infinities (which JSON
/// cannot hold) as `null`.
pub fn json_num(v: f64) -> String {
    if v.is_finite() {
        format!("{v}")
    } else {
        "null".into()
    }
}

/// A value, or `null` for `None`.
pub fn json_opt<T: ToString>(v: Option<T>) -> String {
    v.map_or_else(|| "null".into(), |x| x.to_string())
}

/// A list of strings as a JSON array of string literals (no spaces).
pub fn json_list(v: &[String]) -> String {
    format!(
        "[{}]",
        v.iter().map(|s| json_str(s)).collect::<Vec<_>>().join(",")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strings_escape_quotes_backslashes_and_controls() {
        assert_eq!(json_str("plain"), "\"plain\"");
        assert_eq!(json_str("a\"b\\c"), "\"a\\\"b\\\\c\"");
        assert_eq!(json_str("\n\r\t"), "\"\\n\\r\\t\"");
        assert_eq!(json_str("\u{1}\u{1f}"), "\"\\u0001\\u001f\"");
        assert_eq!(json_str("é ∑ \u{7f}"), "\"é ∑ \u{7f}\"");
    }

    #[test]
    fn numbers_options_and_lists() {
        assert_eq!(json_num(0.5), "0.5");
        assert_eq!(json_num(3.0), "3");
        assert_eq!(json_num(f64::NAN), "null");
        assert_eq!(json_num(f64::INFINITY), "null");
        assert_eq!(json_opt(Some(7u32)), "7");
        assert_eq!(json_opt::<u32>(None), "null");
        assert_eq!(json_list(&[]), "[]");
        assert_eq!(json_list(&["a".into(), "\"".into()]), "[\"a\",\"\\\"\"]");
    }
}
