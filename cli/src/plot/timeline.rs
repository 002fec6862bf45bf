//! [`timeline_chart`]: what events measured on several streams, one bar per operation, so that
//! a reader can see whether the streams overlapped.

use super::{esc, svg_open, tick_label, ticks};
use std::fmt::Write;

/// One bar: an operation on a stream, from one event to the next.
#[derive(Clone, Debug)]
pub struct TimelineBar {
    /// When it began, in ms (since the first begin event).
    pub start_ms: f64,
    /// When it ended, in ms.
    pub end_ms: f64,
    /// What it was: an index into [`Timeline::legend`].
    pub kind: usize,
}

/// One row: one stream (or one array on a stream).
#[derive(Clone, Debug)]
pub struct TimelineRow {
    /// At the row's left ("stream 3").
    pub label: String,
    /// Its operations.
    pub bars: Vec<TimelineBar>,
}

/// A panel: one run (e.g. "10 streams" or "1 stream"), its rows stacked top to bottom.
#[derive(Clone, Debug)]
pub struct TimelinePanel {
    /// Over the panel.
    pub title: String,
    /// Top to bottom.
    pub rows: Vec<TimelineRow>,
}

/// The whole picture.
#[derive(Clone, Debug)]
pub struct Timeline {
    /// Over the picture.
    pub title: String,
    /// Name and colour of each bar kind (`("copy in", BLUE)`), indexed by [`TimelineBar::kind`].
    pub legend: Vec<(String, &'static str)>,
    /// Stacked top to bottom, on one time axis.
    pub panels: Vec<TimelinePanel>,
    /// Under the time axis ("time since the first begin event (ms)").
    pub x_label: String,
}

/// The picture's width.
const WIDTH: f64 = 900.0;
/// The row labels' column, left of the plot, at its narrowest.
const LEFT: f64 = 110.0;
/// The row labels' column at its widest (longer labels are cut, with an ellipsis).
const LEFT_MAX: f64 = 250.0;
/// Room right of the plot (for the last tick label).
const RIGHT: f64 = 30.0;
/// A bar's height.
const ROW: f64 = 18.0;
/// Between rows, and between the frame and the first and last rows.
const GAP: f64 = 4.0;
/// A panel's title strip, above its frame.
const STRIP: f64 = 20.0;
/// Between one panel's frame and the next panel's title strip.
const PANEL_GAP: f64 = 10.0;
/// Where the first panel's strip begins (under the title and the legend).
const TOP: f64 = 52.0;
/// Under the last panel: tick labels and the x label.
const BOTTOM: f64 = 50.0;
/// The colour of a bar whose kind is not in the legend.
const GREY: &str = "#7f7f7f";
/// A rough width of one character of the 12 px font, to keep texts apart.
const CHAR_W: f64 = 7.0;

/// Whether a bar can be drawn: finite, not ending before it begins.
fn valid(b: &TimelineBar) -> bool {
    b.start_ms.is_finite() && b.end_ms.is_finite() && b.end_ms >= b.start_ms
}

/// The latest end of the drawable bars of `p`, if it has any.
fn latest_end(p: &TimelinePanel) -> Option<f64> {
    p.rows
        .iter()
        .flat_map(|r| r.bars.iter())
        .filter(|b| valid(b))
        .map(|b| b.end_ms)
        .reduce(f64::max)
}

/// The end of the time axis: the latest end over all panels, rounded up to a tick.
fn axis_end(t: &Timeline) -> f64 {
    let max = t
        .panels
        .iter()
        .filter_map(latest_end)
        .fold(0.0f64, f64::max);
    if max <= 0.0 {
        return 1.0;
    }
    let tk = ticks(0.0, max, 8);
    let step = match tk.as_slice() {
        [a, b, ..] => b - a,
        _ => max,
    };
    ((max / step - 1e-9).ceil() * step).max(max)
}

/// The time axis, shared by all panels.
struct Axis {
    /// The plot's left edge (the right of the label column).
    left: f64,
    /// The plot's width.
    width: f64,
    /// The time at the right edge, in ms.
    end: f64,
    /// Where the grid lines and tick labels go, in ms.
    ticks: Vec<f64>,
}

impl Axis {
    /// The x of time `v` (clamped to the plot).
    fn x(&self, v: f64) -> f64 {
        self.left + self.width * v.clamp(0.0, self.end) / self.end
    }
}

/// A rough width of `text` in the 12 px font.
fn text_width(text: &str) -> f64 {
    CHAR_W * text.chars().count() as f64
}

/// `label`, cut with an ellipsis to fit in `width`.
fn fit(label: &str, width: f64) -> String {
    if text_width(label) <= width {
        return label.into();
    }
    let keep = ((width / CHAR_W) as usize).saturating_sub(1);
    label.chars().take(keep).chain(['…']).collect()
}

/// A panel's frame height.
fn frame_height(p: &TimelinePanel) -> f64 {
    p.rows.len().max(1) as f64 * (ROW + GAP) + GAP
}

/// The legend under the title: a coloured square and a name per kind, centred.
fn legend(s: &mut String, t: &Timeline) {
    let widths: Vec<f64> = t
        .legend
        .iter()
        .map(|(name, _)| 16.0 + CHAR_W * name.chars().count() as f64 + 18.0)
        .collect();
    let mut x = (WIDTH - widths.iter().sum::<f64>()) / 2.0;
    for ((name, color), w) in t.legend.iter().zip(&widths) {
        let _ = writeln!(
            s,
            "<rect class=\"key\" x=\"{x:.2}\" y=\"32\" width=\"10\" height=\"10\" fill=\"{color}\"/><text x=\"{:.2}\" y=\"41\">{}</text>",
            x + 16.0,
            esc(name)
        );
        x += w;
    }
}

/// A stream timeline: each panel one run, each row one stream, each bar one operation between
/// two events, coloured by kind; every panel on one time axis so a shorter run looks shorter,
/// with a dashed line at each run's latest end. An SVG document.
pub fn timeline_chart(t: &Timeline) -> String {
    let longest = t
        .panels
        .iter()
        .flat_map(|p| p.rows.iter())
        .map(|r| text_width(&r.label) + 16.0)
        .fold(LEFT, f64::max);
    let left = longest.min(LEFT_MAX);
    let end = axis_end(t);
    let axis = Axis {
        left,
        width: WIDTH - left - RIGHT,
        end,
        ticks: ticks(0.0, end, 8),
    };
    let panels_h: f64 = t
        .panels
        .iter()
        .map(|p| STRIP + frame_height(p) + PANEL_GAP)
        .sum();
    let axis_y = TOP + (panels_h - PANEL_GAP).max(0.0);
    let height = axis_y + BOTTOM;
    let mut s = svg_open(WIDTH, height);
    let _ = writeln!(
        s,
        "<text x=\"{}\" y=\"22\" text-anchor=\"middle\" font-size=\"14\">{}</text>",
        WIDTH / 2.0,
        esc(&t.title)
    );
    legend(&mut s, t);
    let mut y0 = TOP;
    for p in &t.panels {
        panel(&mut s, t, p, y0, &axis);
        y0 += STRIP + frame_height(p) + PANEL_GAP;
    }
    for &v in &axis.ticks {
        let _ = writeln!(
            s,
            "<line x1=\"{0:.2}\" y1=\"{1}\" x2=\"{0:.2}\" y2=\"{2}\" stroke=\"black\"/><text x=\"{0:.2}\" y=\"{3}\" text-anchor=\"middle\">{4}</text>",
            axis.x(v),
            axis_y,
            axis_y + 4.0,
            axis_y + 18.0,
            tick_label(v)
        );
    }
    let _ = writeln!(
        s,
        "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>",
        left + axis.width / 2.0,
        axis_y + 38.0,
        esc(&t.x_label)
    );
    s.push_str("</svg>\n");
    s
}

/// One panel, its strip starting at `y0`: title, frame, grid, row labels, bars, total.
fn panel(s: &mut String, t: &Timeline, p: &TimelinePanel, y0: f64, axis: &Axis) {
    let (top, fh, left, pw) = (y0 + STRIP, frame_height(p), axis.left, axis.width);
    let _ = writeln!(
        s,
        "<g class=\"panel\"><text x=\"10\" y=\"{}\" font-weight=\"bold\">{}</text>",
        y0 + 14.0,
        esc(&p.title)
    );
    for &v in &axis.ticks {
        let _ = writeln!(
            s,
            "<line x1=\"{0:.2}\" y1=\"{top}\" x2=\"{0:.2}\" y2=\"{1}\" stroke=\"#e0e0e0\"/>",
            axis.x(v),
            top + fh
        );
    }
    let _ = writeln!(
        s,
        "<rect x=\"{left}\" y=\"{top}\" width=\"{pw}\" height=\"{fh}\" fill=\"none\" stroke=\"#b0b0b0\"/>"
    );
    for (i, row) in p.rows.iter().enumerate() {
        let ry = top + GAP + i as f64 * (ROW + GAP);
        let _ = writeln!(
            s,
            "<text x=\"{}\" y=\"{}\" text-anchor=\"end\"><title>{}</title>{}</text>",
            left - 6.0,
            ry + ROW / 2.0 + 4.0,
            esc(&row.label),
            esc(&fit(&row.label, left - 16.0))
        );
        for b in row.bars.iter().filter(|b| valid(b)) {
            let (name, color) = t
                .legend
                .get(b.kind)
                .map_or((format!("kind {}", b.kind), GREY), |(n, c)| (n.clone(), *c));
            let x = axis.x(b.start_ms);
            let tip = format!(
                "{}: {}, {:.3}–{:.3} ms ({:.3} ms)",
                row.label,
                name,
                b.start_ms,
                b.end_ms,
                b.end_ms - b.start_ms
            );
            let _ = writeln!(
                s,
                "<rect class=\"bar\" data-kind=\"{}\" x=\"{x:.2}\" y=\"{ry}\" width=\"{:.2}\" height=\"{ROW}\" fill=\"{color}\"><title>{}</title></rect>",
                b.kind,
                (axis.x(b.end_ms) - x).max(1.0),
                esc(&tip)
            );
        }
    }
    if let Some(end) = latest_end(p) {
        let x = axis.x(end);
        let label = format!("{end:.2} ms");
        let lw = text_width(&label);
        let title_end = 10.0 + text_width(&p.title) + 10.0;
        let (lx, anchor) = if x - 4.0 - lw >= title_end {
            (x - 4.0, "end")
        } else {
            ((x + 4.0).max(title_end), "start")
        };
        let _ = writeln!(
            s,
            "<line class=\"total\" x1=\"{x:.2}\" y1=\"{}\" x2=\"{x:.2}\" y2=\"{}\" stroke=\"black\" stroke-dasharray=\"4 3\"/><text class=\"total\" x=\"{lx:.2}\" y=\"{}\" text-anchor=\"{anchor}\">{}</text>",
            top - 6.0,
            top + fh,
            y0 + 14.0,
            esc(&label)
        );
    }
    s.push_str("</g>\n");
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plot::{BLUE, ORANGE};

    fn bar(start_ms: f64, end_ms: f64, kind: usize) -> TimelineBar {
        TimelineBar {
            start_ms,
            end_ms,
            kind,
        }
    }

    fn row(label: &str, bars: Vec<TimelineBar>) -> TimelineRow {
        TimelineRow {
            label: label.into(),
            bars,
        }
    }

    fn chart(panels: Vec<TimelinePanel>) -> Timeline {
        Timeline {
            title: "streams".into(),
            legend: vec![("copy in".into(), BLUE), ("kernel".into(), ORANGE)],
            panels,
            x_label: "time (ms)".into(),
        }
    }

    /// The value of attribute `name` in `tag`.
    fn attr(tag: &str, name: &str) -> f64 {
        let key = format!(" {name}=\"");
        let at = tag.find(&key).expect("attribute") + key.len();
        let rest = &tag[at..];
        rest[..rest.find('"').expect("closing quote")]
            .parse()
            .expect("number")
    }

    /// The opening tags of the bars, in order.
    fn bars(svg: &str) -> Vec<&str> {
        svg.match_indices("<rect class=\"bar\"")
            .map(|(i, _)| &svg[i..i + svg[i..].find('>').expect("tag end")])
            .collect()
    }

    #[test]
    fn one_rect_per_valid_bar() {
        let t = chart(vec![TimelinePanel {
            title: "2 streams".into(),
            rows: vec![
                row("stream 0", vec![bar(0.0, 1.0, 0), bar(1.0, 3.0, 1)]),
                row("stream 1", vec![bar(0.5, 0.5, 0), bar(2.0, 2.5, 7)]),
            ],
        }]);
        let svg = timeline_chart(&t);
        assert_eq!(svg.matches("class=\"bar\"").count(), 4);
        assert_eq!(svg.matches("</title></rect>").count(), 4);
        let b = bars(&svg);
        assert!(b.iter().all(|tag| attr(tag, "width") >= 1.0));
        assert!(svg.contains("data-kind=\"7\""));
        assert!(svg.contains("stream 0: kernel, 1.000–3.000 ms (2.000 ms)"));
        assert!(svg.contains("3.00 ms"));
    }

    #[test]
    fn invalid_bars_are_skipped() {
        let t = chart(vec![TimelinePanel {
            title: "odd".into(),
            rows: vec![row(
                "s",
                vec![
                    bar(f64::NAN, 1.0, 0),
                    bar(0.0, f64::INFINITY, 0),
                    bar(2.0, 1.0, 1),
                    bar(f64::NEG_INFINITY, f64::NAN, 1),
                    bar(0.25, 0.75, 1),
                ],
            )],
        }]);
        let svg = timeline_chart(&t);
        assert_eq!(svg.matches("class=\"bar\"").count(), 1);
        assert!(!svg.contains("NaN") && !svg.contains("inf"));
    }

    #[test]
    fn long_labels_widen_the_column_then_are_cut() {
        assert_eq!(fit("stream 0", 100.0), "stream 0");
        let cut = fit(&"x".repeat(40), 100.0);
        assert!(cut.ends_with('…') && text_width(&cut) <= 100.0);
        let long = "stream 0 (array 12)";
        let t = chart(vec![TimelinePanel {
            title: "run".into(),
            rows: vec![row(long, vec![bar(0.0, 1.0, 0)])],
        }]);
        let svg = timeline_chart(&t);
        let x = attr(bars(&svg)[0], "x");
        assert!(
            x >= text_width(long) + 6.0,
            "the label fits left of the plot"
        );
        assert!(svg.contains(&format!("<title>{}</title>{}</text>", esc(long), esc(long))));
    }

    #[test]
    fn empty_input_is_a_document() {
        let none = chart(vec![]);
        let rowless = chart(vec![TimelinePanel {
            title: "nothing".into(),
            rows: vec![],
        }]);
        let barless = chart(vec![TimelinePanel {
            title: "idle".into(),
            rows: vec![row("stream 0", vec![])],
        }]);
        for t in [none, rowless, barless] {
            let svg = timeline_chart(&t);
            assert!(svg.starts_with("<?xml"));
            assert!(svg.trim_end().ends_with("</svg>"));
            assert_eq!(svg.matches("class=\"bar\"").count(), 0);
            assert!(!svg.contains("NaN"));
        }
    }

    #[test]
    fn panels_share_the_time_axis() {
        let t = chart(vec![
            TimelinePanel {
                title: "2 streams".into(),
                rows: vec![
                    row("stream 0", vec![bar(0.0, 4.0, 0)]),
                    row("stream 1", vec![bar(1.0, 9.0, 1)]),
                ],
            },
            TimelinePanel {
                title: "1 stream".into(),
                rows: vec![row("stream 0", vec![bar(0.0, 4.5, 0), bar(4.5, 9.0, 1)])],
            },
        ]);
        let svg = timeline_chart(&t);
        let b = bars(&svg);
        assert_eq!(b.len(), 4);
        let right = |tag: &str| attr(tag, "x") + attr(tag, "width");
        // Both runs end at 9 ms: their last bars end at the same x, and bars starting at 0 start
        // at the same x.
        assert!((right(b[1]) - right(b[3])).abs() < 0.02);
        assert!((attr(b[0], "x") - attr(b[2], "x")).abs() < 0.02);
        // 4 ms and 4.5 ms ends are to the left of it, in proportion.
        let x0 = attr(b[0], "x");
        let per_ms = (right(b[1]) - x0) / 9.0;
        assert!((right(b[0]) - (x0 + 4.0 * per_ms)).abs() < 0.02);
        assert!((right(b[2]) - (x0 + 4.5 * per_ms)).abs() < 0.02);
        assert_eq!(svg.matches("class=\"total\"").count(), 4);
    }
}
