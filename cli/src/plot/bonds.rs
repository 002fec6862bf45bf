//! Atoms and their bonds, as the CUDA book draws the graphene sheet once its neighbor list is
//! known: every bond a line, every atom a dot coloured by its number of neighbors.
//!
//! All bonds are one `<path class="bonds">` (one `M … L …` per bond), the atoms of each
//! neighbor count one `<g class="atoms" data-neighbors="k">` of `<circle>`s: a sheet of 22 000
//! atoms stays a few MB and draws at once. Points are projected on `x`–`y`.

use super::{BLUE, GREEN, ORANGE, PURPLE, RED, esc, svg_open};
use gridsync::neighbor::list::NeighborList;
use std::fmt::Write;

/// Width of the drawing area in px; the height follows the window's aspect ratio.
const WIDTH: f64 = 1000.0;
/// Margin around the drawing area, in px.
const MARGIN: f64 = 20.0;
/// Room above the drawing area for the title and, under it, the legend.
const HEADER: f64 = 56.0;

/// Colours by neighbor count: 0 grey, 1 purple, 2 orange, 3 blue (the sheet's bulk), 4 red,
/// 5 or more green.
fn colour(k: usize) -> &'static str {
    match k {
        0 => "#7f7f7f",
        1 => PURPLE,
        2 => ORANGE,
        3 => BLUE,
        4 => RED,
        _ => GREEN,
    }
}

/// What [`bonds_chart`] draws.
pub struct BondsPlot<'a> {
    /// The title line.
    pub title: String,
    /// `x` of every atom.
    pub x: &'a [f64],
    /// `y` of every atom.
    pub y: &'a [f64],
    /// The neighbors of every atom.
    pub list: &'a NeighborList,
    /// The part of the plane drawn, `[x0, y0, x1, y1]`; atoms outside are left out, and bonds
    /// with an end outside too.
    pub window: [f64; 4],
}

/// The atoms inside `window` and the bonds between them, as SVG.
pub fn bonds_chart(p: &BondsPlot<'_>) -> String {
    let [x0, y0, x1, y1] = p.window;
    let (wx, wy) = ((x1 - x0).max(1e-9), (y1 - y0).max(1e-9));
    let scale = WIDTH / wx;
    let height = (wy * scale).min(4.0 * WIDTH);
    let scale = scale.min(height / wy);
    let px = |x: f64| MARGIN + (x - x0) * scale;
    // SVG's y grows downward; the plane's upward.
    let py = |y: f64| HEADER + (y1 - y) * scale;
    let inside = |i: usize| p.x[i] >= x0 && p.x[i] <= x1 && p.y[i] >= y0 && p.y[i] <= y1;
    // Dots a third of a bond wide at the sheet's scale (1.42 Å), at least a pixel.
    let r = (0.3 * scale).clamp(0.6, 6.0);

    let mut svg = svg_open(WIDTH + 2.0 * MARGIN, height + HEADER + MARGIN);
    let _ = writeln!(
        svg,
        "<text x=\"{MARGIN}\" y=\"24\">{}</text>",
        esc(&p.title)
    );
    let mut path = String::new();
    let mut by_count: Vec<String> = Vec::new();
    let mut shown: Vec<usize> = Vec::new();
    for i in (0..p.x.len()).filter(|&i| inside(i)) {
        let nb = p.list.neighbors(i);
        for &j in nb {
            let j = j as usize;
            if j > i && j < p.x.len() && inside(j) {
                let _ = write!(
                    path,
                    "M{:.1} {:.1}L{:.1} {:.1}",
                    px(p.x[i]),
                    py(p.y[i]),
                    px(p.x[j]),
                    py(p.y[j])
                );
            }
        }
        let k = nb.len().min(5);
        if by_count.len() <= k {
            by_count.resize(k + 1, String::new());
            shown.resize(k + 1, 0);
        }
        shown[k] += 1;
        let _ = write!(
            by_count[k],
            "<circle cx=\"{:.1}\" cy=\"{:.1}\" r=\"{r:.1}\"/>",
            px(p.x[i]),
            py(p.y[i])
        );
    }
    let _ = writeln!(
        svg,
        "<path class=\"bonds\" d=\"{path}\" stroke=\"#444\" stroke-width=\"{:.2}\" fill=\"none\"/>",
        (0.12 * scale).clamp(0.3, 2.0)
    );
    for (k, circles) in by_count.iter().enumerate() {
        if !circles.is_empty() {
            let _ = writeln!(
                svg,
                "<g class=\"atoms\" data-neighbors=\"{k}\" fill=\"{}\">{circles}</g>",
                colour(k)
            );
        }
    }
    // The legend, under the title: one swatch per neighbor count present, with how many
    // atoms have it.
    let mut lx = MARGIN + 5.0;
    for (k, &count) in shown.iter().enumerate() {
        if count == 0 {
            continue;
        }
        let label = match k {
            1 => format!("1 neighbor: {count}"),
            5 => format!("5+ neighbors: {count}"),
            _ => format!("{k} neighbors: {count}"),
        };
        let _ = writeln!(
            svg,
            "<circle cx=\"{lx:.0}\" cy=\"38\" r=\"5\" fill=\"{}\"/><text x=\"{:.0}\" y=\"42\">{}</text>",
            colour(k),
            lx + 9.0,
            esc(&label)
        );
        lx += 7.0 * label.len() as f64 + 30.0;
    }
    svg.push_str("</svg>\n");
    svg
}

/// A window around the atoms' centre holding about `atoms` of them (all when there are
/// fewer): what a large sheet's plot shows, so that bonds stay visible.
pub fn window_for(x: &[f64], y: &[f64], atoms: usize) -> [f64; 4] {
    if x.is_empty() {
        return [0.0, 0.0, 1.0, 1.0];
    }
    let bound = |v: &[f64]| {
        v.iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &c| {
                (lo.min(c), hi.max(c))
            })
    };
    let ((ax, bx), (ay, by)) = (bound(x), bound(y));
    let pad = 1.0;
    if x.len() <= atoms {
        return [ax - pad, ay - pad, bx + pad, by + pad];
    }
    // The same density everywhere: a square holding `atoms / n` of the area.
    let frac = (atoms as f64 / x.len() as f64).sqrt();
    let (cx, cy) = ((ax + bx) / 2.0, (ay + by) / 2.0);
    let (hw, hh) = ((bx - ax) * frac / 2.0, (by - ay) * frac / 2.0);
    [cx - hw, cy - hh, cx + hw, cy + hh]
}
