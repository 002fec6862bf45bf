//! Histograms through the command's harness: the library API beside the demo, the sweep's flush
//! count, the SVG plots, bad input, the CLI — and the GPU at full size, 1 GiB included (ignored
//! where no NVIDIA driver was found at build time). The kernels against the CPU on the
//! simulator: `tests/histogram/`.

mod api;
mod cli;
#[path = "../common/mod.rs"]
mod common;
#[path = "../../../tests/histogram/counts.rs"]
mod counts;
mod files;
mod on_gpu;
mod svg;

use counts::*;

use gridsync::histogram::{
    self, Bins, HistKernel, HistogramLaunch, PIPELINE_MIN_BYTES, config_for, fastest_kernel,
    histogram_cpu, uniform_bytes,
};
use gridsync::inputs::text::{DEFAULT_TEXT_BYTES, DEFAULT_TEXT_SEED, english_text};
use gridsync::{Error, LaunchConfig, Target};
use gridsync_cli::demos::histogram::{self as demo, HistogramOptions};
use gridsync_cli::demos::histogram_sweep::{
    self as block_sweep, SweepOptions, flush_atomic_counts, sweep, sweep_chart,
};
use gridsync_cli::plot::{BarPanel, Series, TwoAxisChart, bar_charts, two_axis_chart, write_svg};
use rand::Rng;

/// Checks that `svg` is well-formed XML in the small subset the writer uses (a declaration,
/// elements with quoted attributes, text with `&…;` entities), and returns its tags in order.
fn parse_svg(svg: &str) -> Vec<String> {
    let mut stack: Vec<String> = Vec::new();
    let mut tags = Vec::new();
    let mut rest = svg.trim_start();
    rest = rest.strip_prefix("<?xml").expect("XML declaration");
    rest = &rest[rest.find("?>").expect("declaration ends") + 2..];
    while let Some(open) = rest.find('<') {
        let text = &rest[..open];
        assert!(!text.contains('>'), "stray > in text {text:?}");
        for (k, _) in text.match_indices('&') {
            let entity = &text[k..text[k..].find(';').map_or(text.len(), |e| k + e + 1)];
            assert!(
                ["&amp;", "&lt;", "&gt;", "&quot;"].contains(&entity),
                "entity {entity}"
            );
        }
        let close = rest[open..].find('>').expect("tag ends") + open;
        let tag = &rest[open + 1..close];
        assert_eq!(
            tag.matches('"').count() % 2,
            0,
            "unbalanced quotes in <{tag}>"
        );
        if let Some(name) = tag.strip_prefix('/') {
            assert_eq!(
                stack.pop().as_deref(),
                Some(name.trim()),
                "mismatched </{name}>"
            );
        } else {
            let name: String = tag.chars().take_while(|c| c.is_alphanumeric()).collect();
            assert!(!name.is_empty(), "tag without a name: <{tag}>");
            tags.push(name.clone());
            if !tag.ends_with('/') {
                stack.push(name);
            }
        }
        rest = &rest[close + 1..];
    }
    assert!(rest.trim().is_empty(), "text after the root");
    assert!(stack.is_empty(), "unclosed {stack:?}");
    assert_eq!(tags.first().map(String::as_str), Some("svg"));
    tags
}

/// `name` in a temporary folder of this process's own.
fn temp_path(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("gridsync-histogram-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

/// The CLI's JSON output for `args`, which must succeed.
fn ok_json(args: &[&str]) -> serde_json::Value {
    let out = common::cli(args);
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}
