//! [`heatmaps`]: grids of cells coloured by a rate on a log scale — the litmus tests' weak
//! outcome per variant and placement.

use super::{esc, svg_open};
use std::fmt::Write;

/// One cell of a heat map.
#[derive(Clone, Debug, PartialEq)]
pub struct HeatCell {
    /// The rate (0 to 1); `None` where nothing ran.
    pub value: Option<f64>,
    /// Drawn with a cross: here, an outcome the model forbids.
    pub marked: bool,
    /// The tooltip.
    pub note: String,
}

/// One panel: a title, row and column labels, and a cell per row and column.
#[derive(Clone, Debug, PartialEq)]
pub struct HeatPanel {
    /// Above the panel.
    pub title: String,
    /// Left of each row.
    pub rows: Vec<String>,
    /// Above each column.
    pub cols: Vec<String>,
    /// `cells[row][col]`.
    pub cells: Vec<Vec<HeatCell>>,
}

const CELL_W: f64 = 34.0;
const CELL_H: f64 = 15.0;
const ROW_LABEL: f64 = 84.0;
const TITLE: f64 = 34.0;
const GAP: f64 = 24.0;

/// The colour of `rate` on a log scale from `10^lo` (pale) to `10^hi` (dark red); white for 0.
fn colour(rate: f64, lo: f64, hi: f64) -> String {
    if rate <= 0.0 {
        return "#ffffff".into();
    }
    let t = ((rate.log10() - lo) / (hi - lo)).clamp(0.0, 1.0);
    // From a pale yellow to a dark red.
    let lerp = |a: f64, b: f64| (a + (b - a) * t).round() as u8;
    format!(
        "#{:02x}{:02x}{:02x}",
        lerp(255.0, 128.0),
        lerp(237.0, 0.0),
        lerp(160.0, 38.0)
    )
}

/// Panels side by side, `per_row` to a row, each cell coloured by its rate on a log scale from
/// `10^lo` to `10^hi`, with a legend saying `what`; an SVG document. Every cell is a
/// `<rect class="cell">` (marked ones also a `<path class="mark">`), so a test can count them.
pub fn heatmaps(panels: &[HeatPanel], per_row: usize, lo: f64, hi: f64, what: &str) -> String {
    let per_row = per_row.max(1);
    let cols = panels.iter().map(|p| p.cols.len()).max().unwrap_or(1);
    let rows = panels.iter().map(|p| p.rows.len()).max().unwrap_or(1);
    let pw = ROW_LABEL + cols as f64 * CELL_W;
    let ph = TITLE + rows as f64 * CELL_H;
    let lines = panels.len().div_ceil(per_row);
    let width = 20.0 + per_row.min(panels.len().max(1)) as f64 * (pw + GAP);
    let legend_h = 50.0;
    let height = 20.0 + lines as f64 * (ph + GAP) + legend_h;
    let mut s = svg_open(width, height);
    for (k, p) in panels.iter().enumerate() {
        let x0 = 20.0 + (k % per_row) as f64 * (pw + GAP);
        let y0 = 20.0 + (k / per_row) as f64 * (ph + GAP);
        let _ = writeln!(
            s,
            "<g class=\"panel\"><text x=\"{}\" y=\"{}\" font-weight=\"bold\">{}</text>",
            x0,
            y0 + 12.0,
            esc(&p.title)
        );
        for (c, label) in p.cols.iter().enumerate() {
            let _ = writeln!(
                s,
                "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" font-size=\"10\">{}</text>",
                x0 + ROW_LABEL + (c as f64 + 0.5) * CELL_W,
                y0 + TITLE - 4.0,
                esc(label)
            );
        }
        for (r, label) in p.rows.iter().enumerate() {
            let y = y0 + TITLE + r as f64 * CELL_H;
            let _ = writeln!(
                s,
                "<text x=\"{}\" y=\"{}\" text-anchor=\"end\" font-size=\"10\">{}</text>",
                x0 + ROW_LABEL - 4.0,
                y + CELL_H - 4.0,
                esc(label)
            );
            for (c, cell) in p.cells.get(r).into_iter().flatten().enumerate() {
                let x = x0 + ROW_LABEL + c as f64 * CELL_W;
                let fill = match cell.value {
                    Some(v) => colour(v, lo, hi),
                    None => "#e0e0e0".into(),
                };
                let _ = writeln!(
                    s,
                    "<rect class=\"cell\" x=\"{x}\" y=\"{y}\" width=\"{CELL_W}\" height=\"{CELL_H}\" \
                     fill=\"{fill}\" stroke=\"#999\" stroke-width=\"0.5\"><title>{}</title></rect>",
                    esc(&cell.note)
                );
                if cell.marked {
                    let (x1, y1, x2, y2) = (x + 12.0, y + 3.0, x + CELL_W - 12.0, y + CELL_H - 3.0);
                    let _ = writeln!(
                        s,
                        "<path class=\"mark\" d=\"M{x1} {y1}L{x2} {y2}M{x1} {y2}L{x2} {y1}\" \
                         stroke=\"#555\" stroke-width=\"1\"/>"
                    );
                }
            }
        }
        let _ = writeln!(s, "</g>");
    }
    // The legend: the scale, white for none seen, the cross.
    let ly = height - legend_h + 10.0;
    let steps = ((hi - lo).round() as i32).max(1);
    let _ = writeln!(
        s,
        "<g class=\"legend\"><text x=\"20\" y=\"{}\">{}</text>",
        ly + 10.0,
        esc(what)
    );
    let lx = 20.0;
    let _ = writeln!(
        s,
        "<rect x=\"{lx}\" y=\"{}\" width=\"24\" height=\"12\" fill=\"#ffffff\" stroke=\"#999\"/>\
         <text x=\"{}\" y=\"{}\" font-size=\"10\">0</text>",
        ly + 18.0,
        lx + 28.0,
        ly + 28.0
    );
    for i in 0..=steps {
        let e = lo + f64::from(i);
        let x = lx + 60.0 + f64::from(i) * 56.0;
        let _ = writeln!(
            s,
            "<rect x=\"{x}\" y=\"{}\" width=\"24\" height=\"12\" fill=\"{}\" stroke=\"#999\"/>\
             <text x=\"{}\" y=\"{}\" font-size=\"10\">1e{e}</text>",
            ly + 18.0,
            colour(10f64.powf(e), lo, hi),
            x + 28.0,
            ly + 28.0
        );
    }
    let mx = lx + 60.0 + f64::from(steps + 1) * 56.0;
    let _ = writeln!(
        s,
        "<path d=\"M{} {}L{} {}M{} {}L{} {}\" stroke=\"#555\"/><text x=\"{}\" y=\"{}\" \
         font-size=\"10\">forbidden by the model</text></g>",
        mx,
        ly + 19.0,
        mx + 10.0,
        ly + 29.0,
        mx,
        ly + 29.0,
        mx + 10.0,
        ly + 19.0,
        mx + 14.0,
        ly + 28.0
    );
    s.push_str("</svg>\n");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_cell_is_drawn_and_marked_cells_crossed() {
        let cell = |v: Option<f64>, marked| HeatCell {
            value: v,
            marked,
            note: "n".into(),
        };
        let p = HeatPanel {
            title: "MP".into(),
            rows: vec!["relaxed".into(), "sc.gpu".into()],
            cols: vec!["warp".into(), "sms".into()],
            cells: vec![
                vec![cell(Some(0.0), false), cell(Some(6e-4), false)],
                vec![cell(Some(0.0), true), cell(None, true)],
            ],
        };
        let svg = heatmaps(&[p.clone(), p], 2, -7.0, -2.0, "weak outcome rate");
        assert_eq!(svg.matches("class=\"cell\"").count(), 8);
        assert_eq!(svg.matches("class=\"mark\"").count(), 4);
        assert!(svg.starts_with("<?xml") && svg.ends_with("</svg>\n"));
        assert_eq!(colour(0.0, -7.0, -2.0), "#ffffff");
        assert_ne!(colour(1e-3, -7.0, -2.0), colour(1e-6, -7.0, -2.0));
    }
}
