//! Plots as SVG, without dependencies: the source's letter bar charts and its two-axis plot of
//! time against blocks. A third kind, [`timeline_chart`], draws what events measured on several
//! streams, one bar per operation on one time axis, so that a reader sees whether they overlapped.
//!
//! Two kinds, both drawn as matplotlib drew them in the source: [`bar_charts`] puts panels side
//! by side on one shared y scale (`plt.subplots(1, 2, sharey=True)`, lower and upper case), and
//! [`two_axis_chart`] plots series against a left and a right y axis, each axis in its series'
//! colour, with a dashed vertical line at each series' minimum (`ax.twinx()`, `axvline`).
//! Every bar is a `<rect class="bar">`, every series a `<polyline class="series">` with one
//! point per value, so a test (or a script) can count them.

use gridsync::runtime::error::{Error, Result};
use std::path::Path;

/// matplotlib's first colour (`C0`), the source's colour for the global-atomic kernel.
pub const BLUE: &str = "#1f77b4";
/// matplotlib's `C3`, the source's colour for the shared-memory kernel.
pub const RED: &str = "#d62728";
/// A third colour (`C1`), for an extra series.
pub const ORANGE: &str = "#ff7f0e";
/// A fourth colour (`C2`), for an extra series or bar kind.
pub const GREEN: &str = "#2ca02c";
/// A fifth colour (`C4`), for an extra series or bar kind.
pub const PURPLE: &str = "#9467bd";

const FONT: &str = "font-family=\"sans-serif\" font-size=\"12\"";

mod bars;
mod bonds;
mod heatmap;
mod lines;
mod timeline;

pub use bars::{BarPanel, bar_charts};
pub use bonds::{BondsPlot, bonds_chart, window_for};
pub use heatmap::{HeatCell, HeatPanel, heatmaps};
pub use lines::{Series, TwoAxisChart, two_axis_chart};
pub use timeline::{Timeline, TimelineBar, TimelinePanel, TimelineRow, timeline_chart};

/// Escapes text for SVG.
fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// About `n` round tick values covering `lo..=hi` (steps of 1, 2 or 5 × 10ᵏ).
pub fn ticks(lo: f64, hi: f64, n: usize) -> Vec<f64> {
    let (lo, hi) = if hi > lo { (lo, hi) } else { (lo, lo + 1.0) };
    let raw = (hi - lo) / n.max(1) as f64;
    let mag = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0]
        .iter()
        .map(|m| m * mag)
        .find(|s| *s >= raw)
        .unwrap_or(10.0 * mag);
    let first = (lo / step).ceil() as i64;
    let last = (hi / step).floor() as i64;
    (first..=last).map(|k| k as f64 * step).collect()
}

/// A tick label: 1.5M, 300k, 5k, 0.042, 12.
pub fn tick_label(v: f64) -> String {
    let a = v.abs();
    if a >= 1e6 {
        format!("{}M", trim(v / 1e6))
    } else if a >= 1e3 {
        format!("{}k", trim(v / 1e3))
    } else {
        trim(v)
    }
}

fn trim(v: f64) -> String {
    let s = format!("{v:.4}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s == "-0" { "0".into() } else { s.into() }
}

fn svg_open(w: f64, h: f64) -> String {
    format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\" \
         width=\"{w}\" height=\"{h}\" viewBox=\"0 0 {w} {h}\" {FONT}>\n\
         <rect width=\"{w}\" height=\"{h}\" fill=\"white\"/>\n"
    )
}

/// Checks that `path` names an SVG file, as [`write_svg`] requires: call it before long work
/// whose result is to be plotted, so that a wrong name fails at once.
///
/// # Errors
/// [`Error::InvalidInput`] unless the name ends in `.svg` (only SVG is written — a `.png` name
/// would hold SVG and mislead).
pub fn check_svg_path(path: &Path) -> Result<()> {
    let is_svg = path
        .extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| e.eq_ignore_ascii_case("svg"));
    if is_svg {
        Ok(())
    } else {
        Err(Error::InvalidInput(format!(
            "{}: plots are written as SVG; name the file *.svg (convert it to PNG with e.g. \
             `rsvg-convert in.svg -o out.png`)",
            path.display()
        )))
    }
}

/// Writes `svg` to `path`.
///
/// # Errors
/// As [`check_svg_path`]; [`Error::Io`] if the file cannot be written.
pub fn write_svg(path: &Path, svg: &str) -> Result<()> {
    check_svg_path(path)?;
    std::fs::write(path, svg).map_err(|source| Error::Io {
        path: path.to_path_buf(),
        source,
    })
}
