//! The SVG plots: well-formed bar charts and two-axis charts, file names and writability.

use super::*;

#[test]
fn the_bar_charts_are_well_formed_svg_with_a_bar_per_letter() {
    let data = english_text(10_000, 1);
    let letters = gridsync_cli::demos::histogram::LetterCounts::of(&expected(&data, Bins::Ascii));
    let svg = bar_charts(&letters.panels(), "Count");
    let tags = parse_svg(&svg);
    assert_eq!(svg.matches("class=\"bar\"").count(), 52);
    assert!(tags.iter().filter(|t| *t == "rect").count() >= 52);
    assert!(svg.contains(">Lowercase<") && svg.contains(">Uppercase<") && svg.contains(">z<"));
    let odd = [BarPanel {
        title: "a < b & \"c\"".into(),
        labels: vec!["<".into()],
        values: vec![f64::NAN],
    }];
    parse_svg(&bar_charts(&odd, "y & x"));
    parse_svg(&bar_charts(&[], ""));
}

#[test]
fn the_two_axis_chart_is_well_formed_svg_with_a_point_per_value() {
    let x: Vec<f64> = (10..1000).step_by(5).map(|i| 32.0 * i as f64).collect();
    let line = |name: &str, f: fn(f64) -> f64, mark_min| Series {
        name: name.into(),
        values: x.iter().map(|&b| f(b)).collect(),
        color: gridsync_cli::plot::BLUE,
        dashed: false,
        mark_min,
    };
    let mut right = line("shared", |b| 0.05 + 1e-6 * (b - 5000.0).abs(), true);
    right.values[3] = f64::NAN; // left out of the line
    let chart = TwoAxisChart {
        title: "time vs blocks".into(),
        x_label: "Blocks per grid".into(),
        x: x.clone(),
        left_label: "Time of conflicted version [ms]".into(),
        left: vec![line("global", |b| 3.0 - 1e-5 * b, true)],
        right_label: "Time of shared version [ms]".into(),
        right: vec![right],
    };
    let svg = two_axis_chart(&chart);
    parse_svg(&svg);
    let points: Vec<usize> = svg
        .lines()
        .filter(|l| l.contains("class=\"series\""))
        .map(|l| {
            let p = &l[l.find("points=\"").unwrap() + 8..];
            p[..p.find('"').unwrap()].split_whitespace().count()
        })
        .collect();
    assert_eq!(points, [x.len(), x.len() - 1]);
    assert_eq!(svg.matches("class=\"best\"").count(), 2);
}

#[test]
fn svg_files_must_be_named_svg_and_writable() {
    assert!(matches!(
        write_svg(&temp_path("a.png"), "<svg/>"),
        Err(Error::InvalidInput(_))
    ));
    let missing = std::path::Path::new("/nonexistent-gridsync/x.svg");
    assert!(matches!(
        write_svg(missing, "<svg/>"),
        Err(Error::Io { .. })
    ));
    write_svg(&temp_path("ok.SVG"), "<svg/>").unwrap();
}
