//! The one text-table layout of the reports: `psql` style (`|` between columns, a `-+-` rule
//! under the header), numbers right-aligned, text left-aligned.

use tabled::builder::Builder;
use tabled::settings::object::Columns;
use tabled::settings::{Alignment, Style};

/// A table being filled: the header first, then the rows.
#[derive(Default)]
pub struct Table(Builder);

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
        self.0.push_record(cells.into_iter().map(Into::into));
    }

    /// The table as text (no final newline), with its first `numeric` columns right-aligned.
    pub fn render(self, numeric: usize) -> String {
        let mut t = self.0.build();
        t.with(Style::psql());
        if numeric > 0 {
            t.modify(Columns::new(0..numeric), Alignment::right());
        }
        t.to_string()
    }
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
            "   n | name \n-----+------\n   1 | a    \n 100 | bcd  "
        );
    }
}
