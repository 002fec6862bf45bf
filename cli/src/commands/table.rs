//! The text tables of the reports, each written once as a template that reads like its header
//! line — `"  {kernel:<24} {ms:>9.3}  {what}"` — so that a header and its rows cannot drift
//! apart.
//!
//! Written here rather than taken from a table crate: the reports need only `format!`'s fixed
//! widths and the spacing the book's transcripts show; the crates measure, wrap and draw
//! borders.

use gridsync::runtime::stats::TimedLaunch;
use std::fmt::Display;

/// One piece of a template: text as it stands, or a column.
#[derive(Debug)]
enum Piece {
    Text(&'static str),
    Col {
        header: &'static str,
        left: bool,
        width: usize,
        precision: Option<usize>,
    },
}

/// A table from a template: text between columns as written, each column `{header}`,
/// `{header:<W}` (left in W characters), `{header:>W}` (right) or `{header:>W.P}` (P digits
/// after the point: for numbers — as in `format!`, a precision cuts text short, so a column
/// of formatted text, such as [`sci`]'s, takes none).
#[derive(Debug)]
pub struct Table {
    pieces: Vec<Piece>,
}

impl Table {
    /// The table of `template`.
    ///
    /// # Panics
    /// On a template that does not parse: a column without its `}` or with a width or
    /// precision that is not a number. Templates are literals of this crate; its tests print
    /// every report.
    pub fn new(template: &'static str) -> Table {
        let mut pieces = Vec::new();
        let mut rest = template;
        while let Some(open) = rest.find('{') {
            pieces.push(Piece::Text(&rest[..open]));
            let close = open + rest[open..].find('}').expect("a column ends with }");
            pieces.push(column(&rest[open + 1..close]));
            rest = &rest[close + 1..];
        }
        pieces.push(Piece::Text(rest));
        Table { pieces }
    }

    /// The line of `cells`, one per column in order. Missing cells are blank; trailing spaces
    /// are dropped.
    pub fn line(&self, cells: &[&dyn Display]) -> String {
        self.fill(cells, true)
    }

    /// The line of `cells`, each column's precision applied where `precise` (not to the
    /// header's names, which it would cut short).
    fn fill(&self, cells: &[&dyn Display], precise: bool) -> String {
        let mut out = String::new();
        let mut cells = cells.iter();
        for piece in &self.pieces {
            match *piece {
                Piece::Text(t) => out.push_str(t),
                Piece::Col {
                    left,
                    width,
                    precision,
                    ..
                } => {
                    let cell = cells.next().map_or_else(String::new, |c| match precision {
                        Some(p) if precise => format!("{c:.p$}"),
                        _ => c.to_string(),
                    });
                    out.push_str(&if left {
                        format!("{cell:<width$}")
                    } else {
                        format!("{cell:>width$}")
                    });
                }
            }
        }
        out.truncate(out.trim_end().len());
        out
    }

    /// Prints the header line.
    pub fn header(&self) {
        println!("{}", self.header_line());
    }

    /// The header line: each column's name in its width.
    fn header_line(&self) -> String {
        let names: Vec<&dyn Display> = self
            .pieces
            .iter()
            .filter_map(|p| match p {
                Piece::Col { header, .. } => Some(header as &dyn Display),
                Piece::Text(_) => None,
            })
            .collect();
        self.fill(&names, false)
    }

    /// Prints one row.
    pub fn row(&self, cells: &[&dyn Display]) {
        println!("{}", self.line(cells));
    }
}

/// A column from the text between its braces: `header`, `header:<W`, `header:>W.P`.
fn column(spec: &'static str) -> Piece {
    let (header, format) = spec.rsplit_once(':').unwrap_or((spec, ""));
    let left = !format.starts_with('>');
    let format = format.trim_start_matches(['<', '>']);
    let (width, precision) = match format.split_once('.') {
        Some((w, p)) => (w, Some(p.parse().expect("a precision is a number"))),
        None => (format, None),
    };
    let width = if width.is_empty() {
        0
    } else {
        width.parse().expect("a width is a number")
    };
    Piece::Col {
        header,
        left,
        width,
        precision,
    }
}

/// `v` with `digits` after the point, or `—` where there is none (nothing timed).
pub fn fmt_opt(v: Option<f64>, digits: usize) -> String {
    v.map_or("—".into(), |v| format!("{v:.digits$}"))
}

/// The cells every demo's kernel table ends with: the grid, ms and GB/s (`—` untimed).
pub fn launch_cells(l: &TimedLaunch) -> [String; 3] {
    [
        grid(l.blocks, l.threads_per_block),
        fmt_opt(l.ms, 4),
        fmt_opt(l.gb_per_s, 0),
    ]
}

/// `yes` or `no`.
pub fn yes_no(b: bool) -> &'static str {
    if b { "yes" } else { "no" }
}

/// A launch's grid, `blocks×threads`.
pub fn grid(blocks: u32, threads_per_block: u32) -> String {
    format!("{blocks}×{threads_per_block}")
}

/// `fraction` as a percentage with `digits` after the point and a `%`, for a column of a
/// [`Table`].
pub fn percent(fraction: f64, digits: usize) -> String {
    format!("{:.digits$}%", 100.0 * fraction)
}

/// `x` in scientific notation with `digits` after the point (`{:.digits$e}`), for a column
/// of a [`Table`].
pub fn sci(x: f64, digits: usize) -> String {
    format!("{x:.digits$e}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_line_up_as_format_would() {
        let t = Table::new("  {kernel:<8} {ms:>7.3}  {what}");
        assert_eq!(
            t.line(&[&"dot", &1.23456, &"a sum"]),
            format!("  {:<8} {:>7.3}  {}", "dot", 1.23456, "a sum")
        );
        let rate = Table::new("  {kernel:<8} {rate:>7}");
        assert_eq!(
            rate.line(&[&"x", &sci(12345.0, 2)]),
            format!("  {:<8} {:>7}", "x", "1.23e4")
        );
        // A cell wider than its column pushes the rest right, as `format!` does.
        assert_eq!(
            t.line(&[&"long_kernel", &1.0, &""]),
            "  long_kernel   1.000"
        );
        let t = Table::new("  {median ms:>9.3} {M/s:>5}  {what}");
        assert_eq!(t.header_line(), "  median ms   M/s  what");
    }
}
