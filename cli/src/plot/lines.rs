//! [`two_axis_chart`]: the source's time-against-blocks plot.

use super::{esc, svg_open, tick_label, ticks};
use std::fmt::Write;

/// One line of a [`TwoAxisChart`].
#[derive(Clone, Debug)]
pub struct Series {
    /// Its name, in the legend.
    pub name: String,
    /// One value per x (non-finite values are left out of the line).
    pub values: Vec<f64>,
    /// Its colour.
    pub color: &'static str,
    /// Drawn dashed.
    pub dashed: bool,
    /// Draw a dashed vertical line at the x of its smallest value.
    pub mark_min: bool,
}

/// Series against a shared x and two y axes.
#[derive(Clone, Debug)]
pub struct TwoAxisChart {
    /// Over the plot.
    pub title: String,
    /// Under the x axis.
    pub x_label: String,
    /// The x of every point.
    pub x: Vec<f64>,
    /// The left axis' label (coloured as its first series).
    pub left_label: String,
    /// Series on the left axis.
    pub left: Vec<Series>,
    /// The right axis' label.
    pub right_label: String,
    /// Series on the right axis.
    pub right: Vec<Series>,
}

/// The range of the finite values of `series`, widened a little.
fn value_range(series: &[Series]) -> (f64, f64) {
    let vals = series
        .iter()
        .flat_map(|s| s.values.iter().copied())
        .filter(|v| v.is_finite());
    let (lo, hi) = vals.fold((f64::MAX, f64::MIN), |(a, b), v| (a.min(v), b.max(v)));
    if lo > hi {
        return (0.0, 1.0);
    }
    let pad = ((hi - lo) * 0.05).max(hi.abs() * 1e-3).max(1e-12);
    ((lo - pad).max(0.0), hi + pad)
}

/// The source's plot: series against x on two y axes; an SVG document.
pub fn two_axis_chart(c: &TwoAxisChart) -> String {
    let (w, h, left, right, top, bottom) = (820.0, 500.0, 80.0, 80.0, 40.0, 60.0);
    let (pw, ph) = (w - left - right, h - top - bottom);
    let (xlo, xhi) =
        c.x.iter()
            .fold((f64::MAX, f64::MIN), |(a, b), &x| (a.min(x), b.max(x)));
    let (xlo, xhi) = if xlo < xhi {
        (xlo, xhi)
    } else {
        (xlo - 1.0, xlo + 1.0)
    };
    let px = |x: f64| left + pw * (x - xlo) / (xhi - xlo);
    let mut s = svg_open(w, h);
    let _ = writeln!(
        s,
        "<text x=\"{}\" y=\"22\" text-anchor=\"middle\">{}</text>",
        w / 2.0,
        esc(&c.title)
    );
    let _ = writeln!(
        s,
        "<rect x=\"{left}\" y=\"{top}\" width=\"{pw}\" height=\"{ph}\" fill=\"none\" stroke=\"black\"/>"
    );
    for t in ticks(xlo, xhi, 8) {
        let _ = writeln!(
            s,
            "<line x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\" stroke=\"black\"/><text x=\"{0}\" y=\"{3}\" text-anchor=\"middle\">{4}</text>",
            px(t),
            top + ph,
            top + ph + 4.0,
            top + ph + 18.0,
            tick_label(t)
        );
    }
    let _ = writeln!(
        s,
        "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>",
        left + pw / 2.0,
        h - 16.0,
        esc(&c.x_label)
    );
    for (series, label, side) in [(&c.left, &c.left_label, 0), (&c.right, &c.right_label, 1)] {
        let color = series.first().map_or("black", |s| s.color);
        let (lo, hi) = value_range(series);
        let py = |v: f64| top + ph * (1.0 - (v - lo) / (hi - lo));
        let (ax, dir, anchor) = if side == 0 {
            (left, -1.0, "end")
        } else {
            (left + pw, 1.0, "start")
        };
        for t in ticks(lo, hi, 6) {
            let _ = writeln!(
                s,
                "<line x1=\"{ax}\" y1=\"{0}\" x2=\"{1}\" y2=\"{0}\" stroke=\"{color}\"/><text x=\"{2}\" y=\"{3}\" text-anchor=\"{anchor}\" fill=\"{color}\">{4}</text>",
                py(t),
                ax + 4.0 * dir,
                ax + 7.0 * dir,
                py(t) + 4.0,
                tick_label(t)
            );
        }
        let lx = if side == 0 { 18.0 } else { w - 14.0 };
        let _ = writeln!(
            s,
            "<text x=\"{lx}\" y=\"{0}\" transform=\"rotate(-90 {lx} {0})\" text-anchor=\"middle\" fill=\"{color}\">{1}</text>",
            top + ph / 2.0,
            esc(label)
        );
        for (k, ser) in series.iter().enumerate() {
            let points: Vec<String> =
                c.x.iter()
                    .zip(&ser.values)
                    .filter(|(_, v)| v.is_finite())
                    .map(|(&x, &v)| format!("{:.2},{:.2}", px(x), py(v)))
                    .collect();
            let dash = if ser.dashed {
                " stroke-dasharray=\"6 3\""
            } else {
                ""
            };
            let _ = writeln!(
                s,
                "<polyline class=\"series\" data-name=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"1.5\"{dash} points=\"{}\"/>",
                esc(&ser.name),
                ser.color,
                points.join(" ")
            );
            let best =
                c.x.iter()
                    .zip(&ser.values)
                    .filter(|(_, v)| v.is_finite())
                    .min_by(|a, b| a.1.total_cmp(b.1));
            if let (true, Some((&bx, _))) = (ser.mark_min, best) {
                let _ = writeln!(
                    s,
                    "<line class=\"best\" x1=\"{0:.2}\" y1=\"{top}\" x2=\"{0:.2}\" y2=\"{1}\" stroke=\"{2}\" stroke-dasharray=\"4 4\"/>",
                    px(bx),
                    top + ph,
                    ser.color
                );
            }
            let ly = top + 16.0 + 16.0 * (k + side * c.left.len()) as f64;
            let _ = writeln!(
                s,
                "<line x1=\"{0}\" y1=\"{ly}\" x2=\"{1}\" y2=\"{ly}\" stroke=\"{2}\" stroke-width=\"2\"{dash}/><text x=\"{3}\" y=\"{4}\">{5}</text>",
                left + 10.0,
                left + 34.0,
                ser.color,
                left + 40.0,
                ly + 4.0,
                esc(&ser.name)
            );
        }
    }
    s.push_str("</svg>\n");
    s
}
