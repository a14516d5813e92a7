//! The one text-table layout of the reports: `psql` style (`|` between columns, a `-+-` rule
//! under the header), numbers right-aligned, text left-aligned.
//!
//! tabled lays the table out: its style, alignment and width rules make the header and the
//! rule under it, from the header and the widest cell of each column. The data rows of a
//! large table (the default report of a 200,000-function program has 200,000 of them) are
//! then written straight into the output in the same layout, each cell padded to tabled's
//! column width, instead of going through tabled's per-cell grid: that grid costs several
//! allocations and a width lookup per cell, which made the table the largest cost of the
//! default report. Tables whose cells tabled would not print as one plain line (a newline,
//! a tab or another control character) and ragged tables are rendered by tabled whole; a
//! test compares both paths on tables of every kind of cell.

use tabled::builder::Builder;
use tabled::grid::util::string::get_string_width;
use tabled::settings::object::Columns;
use tabled::settings::{Alignment, Style};

/// A table being filled: the header first, then the rows.
#[derive(Default)]
pub struct Table {
    records: Vec<Vec<String>>,
}

impl Table {
    /// An empty table.
    pub fn new() -> Table {
        Table::default()
    }

    /// Add a record (the first one is the header).
    pub fn row<I, S>(&mut self, cells: I)
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.records
            .push(cells.into_iter().map(Into::into).collect());
    }

    /// The table as text (no final newline), with its first `numeric` columns right-aligned.
    pub fn render(self, numeric: usize) -> String {
        let mut s = Vec::new();
        self.write(numeric, &mut s)
            .expect("writing to a Vec does not fail");
        String::from_utf8(s).expect("the table is made of strings")
    }

    /// [`Table::render`], written to `out` line by line (no final newline).
    pub fn write(self, numeric: usize, out: &mut impl std::io::Write) -> std::io::Result<()> {
        let columns = self.records.first().map_or(0, Vec::len);
        let plain = self.records.len() > 1
            && columns > 0
            && self
                .records
                .iter()
                .all(|r| r.len() == columns && r.iter().all(|c| !has_control(c)));
        if !plain {
            return out.write_all(trim_lines(&with_tabled(self.records, numeric)).as_bytes());
        }
        // Column widths as tabled measures them, and the widest cell of each column.
        let mut widths = vec![0usize; columns];
        let mut widest = vec![0usize; columns];
        for (i, r) in self.records.iter().enumerate() {
            for (c, cell) in r.iter().enumerate() {
                let w = width(cell);
                if w > widths[c] || i == 0 {
                    widths[c] = w.max(widths[c]);
                    widest[c] = i;
                }
            }
        }
        // The header and its rule, laid out by tabled from the header and the widest cells.
        let mut sample = vec![self.records[0].clone()];
        sample.push(
            widest
                .iter()
                .enumerate()
                .map(|(c, &i)| self.records[i][c].clone())
                .collect(),
        );
        let head = with_tabled(sample, numeric);
        let mut lines = head.split('\n');
        let (Some(header), Some(rule)) = (lines.next(), lines.next()) else {
            return out.write_all(trim_lines(&with_tabled(self.records, numeric)).as_bytes());
        };
        out.write_all(header.trim_end_matches(' ').as_bytes())?;
        out.write_all(b"\n")?;
        out.write_all(rule.as_bytes())?;
        let mut line = String::new();
        for r in &self.records[1..] {
            line.clear();
            line.push('\n');
            for (c, cell) in r.iter().enumerate() {
                if c > 0 {
                    line.push('|');
                }
                line.push(' ');
                let pad = widths[c] - width(cell);
                if c < numeric {
                    push_spaces(&mut line, pad);
                    line.push_str(cell);
                } else {
                    line.push_str(cell);
                    push_spaces(&mut line, pad);
                }
                line.push(' ');
            }
            // No padding after the last column's text.
            out.write_all(line.trim_end_matches(' ').as_bytes())?;
        }
        Ok(())
    }
}

/// Whether `cell` holds a control character (`char::is_control`: C0, DEL and C1), looked
/// for in the bytes (a C1 control is `0xC2 0x80..=0x9F` in UTF-8).
fn has_control(cell: &str) -> bool {
    let b = cell.as_bytes();
    b.iter().enumerate().any(|(i, &c)| {
        c < 0x20
            || c == 0x7f
            || (c == 0xc2 && b.get(i + 1).is_some_and(|n| (0x80..0xa0).contains(n)))
    })
}

/// A cell's width as tabled counts it (ASCII text: its length).
fn width(cell: &str) -> usize {
    if cell.is_ascii() {
        cell.len()
    } else {
        get_string_width(cell)
    }
}

fn push_spaces(out: &mut String, n: usize) {
    const SPACES: &str = "                                                                ";
    let mut n = n;
    while n > 0 {
        let k = n.min(SPACES.len());
        out.push_str(&SPACES[..k]);
        n -= k;
    }
}

/// `text` without the spaces at the ends of its lines (the padding of the last column).
fn trim_lines(text: &str) -> String {
    text.split('\n')
        .map(|l| l.trim_end_matches(' '))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The whole table through tabled's grid.
fn with_tabled(records: Vec<Vec<String>>, numeric: usize) -> String {
    let mut b = Builder::default();
    for r in records {
        b.push_record(r);
    }
    let mut t = b.build();
    t.with(Style::psql());
    if numeric > 0 {
        t.modify(Columns::new(0..numeric), Alignment::right());
    }
    t.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_right_text_left() {
        let mut t = Table::new();
        t.row(["n", "name"]);
        t.row(["1", "a"]);
        t.row(["100", "bcd"]);
        assert_eq!(
            t.render(1),
            "   n | name\n-----+------\n   1 | a\n 100 | bcd"
        );
    }

    #[test]
    fn control_characters_are_found_in_the_bytes() {
        for c in ('\0'..='\u{2ff}').chain(['\u{200b}', '\u{2028}', '漢', '🦀']) {
            let s = format!("a{c}b");
            assert_eq!(has_control(&s), c.is_control(), "{c:?}");
        }
    }

    /// The direct row writer lays out every kind of cell exactly as tabled does.
    #[test]
    fn direct_rows_equal_tabled() {
        let cells = [
            "",
            "x",
            "12.50 ms",
            "1.00–2.00 ms",
            "…::drop",
            "漢字の名前",
            "e\u{301}te\u{301}",
            "a b  c ",
            " lead",
            "emoji 🦀",
            "tab\there",
            "two\nlines",
            "zero\u{200b}width",
            "ctl\u{1b}[1m",
        ];
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut next = |n: usize| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % n as u64) as usize
        };
        for case in 0..400 {
            let columns = 1 + next(5);
            let rows = next(6);
            let numeric = next(columns + 1);
            let mut records = Vec::new();
            for _ in 0..=rows {
                let len = if case % 50 == 49 {
                    1 + next(columns)
                } else {
                    columns
                };
                let row: Vec<String> = (0..len)
                    .map(|_| {
                        // Mostly plain cells, so that the direct path is taken often.
                        let c = if next(8) == 0 {
                            cells[next(cells.len())]
                        } else {
                            cells[next(10)]
                        };
                        c.to_owned()
                    })
                    .collect();
                records.push(row);
            }
            let mut t = Table::new();
            for r in &records {
                t.row(r.clone());
            }
            assert_eq!(
                t.render(numeric),
                trim_lines(&with_tabled(records.clone(), numeric)),
                "{records:?}, numeric {numeric}"
            );
        }
    }
}
