//! The reports' `--csv` outputs, written with the `csv` crate: a field is quoted (inner quotes
//! doubled) when it holds a comma, a quote or a line break (`\n` or `\r`), and left as it is
//! otherwise; records end with `\n`.

use std::io::Write;

use crate::{Error, Result};

/// Write `header` and then `rows` (plain, unquoted values) to `out`.
pub fn write<W, R, I, S>(out: &mut W, header: &[&str], rows: R) -> Result<()>
where
    W: Write,
    R: IntoIterator<Item = I>,
    I: IntoIterator<Item = S>,
    S: AsRef<[u8]>,
{
    let mut w = csv::WriterBuilder::new()
        .terminator(csv::Terminator::Any(b'\n'))
        .flexible(true)
        .from_writer(out);
    w.write_record(header).map_err(csv_error)?;
    for r in rows {
        w.write_record(r).map_err(csv_error)?;
    }
    w.flush()?;
    Ok(())
}

/// The columns of a row's total (inclusive) time, added after a report's own when the
/// runtime's stacks file is there (the default report and the report across objects).
pub const TOTAL_FIELDS: [&str; 4] = [
    "total_seconds",
    "total_samples",
    "total_ci95_low_seconds",
    "total_ci95_high_seconds",
];

/// `fields`, then [`TOTAL_FIELDS`] when the report has totals.
pub fn header<'a>(fields: &[&'a str], totals: bool) -> Vec<&'a str> {
    let extra: &[&'a str] = if totals { &TOTAL_FIELDS } else { &[] };
    fields.iter().chain(extra).copied().collect()
}

/// The cells of [`TOTAL_FIELDS`] for a row's total `(seconds, samples, 95% interval of the
/// seconds)`, all empty when the stacks do not know the row.
pub fn total_cells(total: Option<(f64, u64, (f64, f64))>) -> [String; 4] {
    match total {
        Some((seconds, samples, (lo, hi))) => [
            format!("{seconds}"),
            samples.to_string(),
            format!("{lo}"),
            format!("{hi}"),
        ],
        None => Default::default(),
    }
}

/// A write error stays an I/O error (a closed pipe ends the program quietly).
fn csv_error(e: csv::Error) -> Error {
    match e.into_kind() {
        csv::ErrorKind::Io(io) => Error::from(io),
        other => Error::input(format!("CSV: {other:?}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(field: &str) -> String {
        let mut v = Vec::new();
        write(&mut v, &["h"], [[field]]).unwrap();
        String::from_utf8(v).unwrap()["h\n".len()..].to_owned()
    }

    #[test]
    fn fields_are_quoted_only_when_needed() {
        assert_eq!(one("main"), "main\n");
        assert_eq!(one("f(int, int)"), "\"f(int, int)\"\n");
        assert_eq!(one("say \"hi\""), "\"say \"\"hi\"\"\"\n");
        assert_eq!(one("a\nb"), "\"a\nb\"\n");
        // objects' own escaper left a carriage return bare.
        assert_eq!(one("a\rb"), "\"a\rb\"\n");
        let mut v = Vec::new();
        write(&mut v, &["a", "b"], [["", "x"]]).unwrap();
        assert_eq!(String::from_utf8(v).unwrap(), "a,b\n,x\n");
    }
}
