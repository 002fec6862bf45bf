//! [`bar_charts`]: the source's letter charts.

use super::{BLUE, esc, svg_open, tick_label, ticks};
use std::fmt::Write;

/// One panel of bars.
#[derive(Clone, Debug)]
pub struct BarPanel {
    /// The panel's title ("Lowercase").
    pub title: String,
    /// One label per bar, under it ("a").
    pub labels: Vec<String>,
    /// One height per bar.
    pub values: Vec<f64>,
}

/// The y scale reaches this much above the tallest bar (matplotlib's margin).
const HEADROOM: f64 = 1.05;

/// Panels of bars side by side on one y scale, `y_label` on the left; an SVG document.
pub fn bar_charts(panels: &[BarPanel], y_label: &str) -> String {
    let (pw, ph, left, top, bottom, gap) = (440.0, 240.0, 70.0, 30.0, 30.0, 30.0);
    let width = left + panels.len() as f64 * (pw + gap);
    let height = top + ph + bottom;
    let ymax = panels
        .iter()
        .flat_map(|p| p.values.iter().copied())
        .filter(|v| v.is_finite())
        .fold(0.0f64, f64::max)
        .max(1.0)
        * HEADROOM;
    let y = |v: f64| top + ph * (1.0 - v / ymax);
    let mut s = svg_open(width, height);
    let _ = writeln!(
        s,
        "<text x=\"16\" y=\"{}\" transform=\"rotate(-90 16 {})\" text-anchor=\"middle\">{}</text>",
        top + ph / 2.0,
        top + ph / 2.0,
        esc(y_label)
    );
    for (k, p) in panels.iter().enumerate() {
        let x0 = left + k as f64 * (pw + gap);
        let slot = pw / p.values.len().max(1) as f64;
        let _ = writeln!(
            s,
            "<g class=\"panel\"><text x=\"{}\" y=\"18\" text-anchor=\"middle\">{}</text>",
            x0 + pw / 2.0,
            esc(&p.title)
        );
        let _ = writeln!(
            s,
            "<rect x=\"{x0}\" y=\"{top}\" width=\"{pw}\" height=\"{ph}\" fill=\"none\" stroke=\"black\"/>"
        );
        for t in ticks(0.0, ymax, 5) {
            let _ = writeln!(
                s,
                "<line x1=\"{}\" y1=\"{1}\" x2=\"{x0}\" y2=\"{1}\" stroke=\"black\"/>",
                x0 - 4.0,
                y(t)
            );
            if k == 0 {
                let _ = writeln!(
                    s,
                    "<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>",
                    x0 - 6.0,
                    y(t) + 4.0,
                    tick_label(t)
                );
            }
        }
        for (i, (v, label)) in p.values.iter().zip(&p.labels).enumerate() {
            let v = if v.is_finite() { v.max(0.0) } else { 0.0 };
            let bx = x0 + slot * (i as f64 + 0.1);
            let _ = writeln!(
                s,
                "<rect class=\"bar\" x=\"{bx:.2}\" y=\"{:.2}\" width=\"{:.2}\" height=\"{:.2}\" fill=\"{BLUE}\"><title>{}: {v}</title></rect>",
                y(v),
                slot * 0.8,
                top + ph - y(v),
                esc(label)
            );
            let _ = writeln!(
                s,
                "<text x=\"{:.2}\" y=\"{}\" text-anchor=\"middle\">{}</text>",
                x0 + slot * (i as f64 + 0.5),
                top + ph + 16.0,
                esc(label)
            );
        }
        s.push_str("</g>\n");
    }
    s.push_str("</svg>\n");
    s
}
