//! [`Table`]: plain-text tables for standard output, columns padded to their widest cell.
//!
//! Invariant: the first column is left-aligned, every other column right-aligned (numbers).

use std::fmt::Write as _;

/// A table of text cells with a header row.
#[derive(Debug, Default)]
pub(crate) struct Table {
    rows: Vec<Vec<String>>,
}

impl Table {
    /// A table with `header`.
    pub(crate) fn new(header: &[&str]) -> Self {
        Table { rows: vec![header.iter().map(|&s| s.to_owned()).collect()] }
    }

    /// Appends a row.
    pub(crate) fn row(&mut self, cells: Vec<String>) {
        self.rows.push(cells);
    }

    /// The table as lines of text, with a rule under the header.
    pub(crate) fn render(&self) -> String {
        let cols = self.rows.iter().map(Vec::len).max().unwrap_or(0);
        let width = |c: usize| {
            self.rows.iter().filter_map(|r| r.get(c)).map(|s| s.chars().count()).max().unwrap_or(0)
        };
        let widths: Vec<usize> = (0..cols).map(width).collect();
        let mut out = String::new();
        for (i, row) in self.rows.iter().enumerate() {
            let mut line = String::new();
            for (c, w) in widths.iter().enumerate() {
                let cell = row.get(c).map_or("", String::as_str);
                let _ =
                    if c == 0 { write!(line, "{cell:<w$}") } else { write!(line, "  {cell:>w$}") };
            }
            out.push_str(line.trim_end());
            out.push('\n');
            if i == 0 {
                let total = widths.iter().sum::<usize>() + 2 * widths.len().saturating_sub(1);
                out.push_str(&"-".repeat(total));
                out.push('\n');
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::Table;

    #[test]
    fn aligns_columns() {
        let mut t = Table::new(&["name", "ns"]);
        t.row(vec!["a".into(), "12".into()]);
        t.row(vec!["longer".into(), "3".into()]);
        assert_eq!(t.render(), "name    ns\n----------\na       12\nlonger   3\n");
    }
}
