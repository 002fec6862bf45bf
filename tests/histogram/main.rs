//! Histograms: every kernel against a CPU count on the simulator (odd sizes, bytes >= 128, one
//! repeated byte, odd launch shapes, misaligned input, counters folded before they overflow),
//! the generated text, the library API, the sweep's flush count, the SVG plots, bad input, the
//! CLI — and the GPU at full size, 1 GiB included (ignored where no NVIDIA driver was found at
//! build time).

mod api;
mod cli;
#[path = "../common/mod.rs"]
mod common;
mod files;
mod inputs;
mod kernels;
mod on_gpu;
mod pipeline;
mod svg;

use gridsync::histogram::{
    self, Bins, HistKernel, HistogramLaunch, HistogramOptions, PIPELINE_MIN_BYTES, SweepOptions,
    config_for, fastest_kernel, flush_atomic_counts, histogram_cpu, sweep, sweep_chart,
    uniform_bytes,
};
use gridsync::inputs::text::{DEFAULT_TEXT_BYTES, DEFAULT_TEXT_SEED, english_text};
use gridsync::plot::{BarPanel, Series, TwoAxisChart, bar_charts, two_axis_chart, write_svg};
use gridsync::runtime::wait::wait_bound;
use gridsync::{Error, LaunchConfig, Target};
use rand::Rng;

/// Every kernel, the instrument included.
const KERNELS: [HistKernel; 7] = [
    HistKernel::Global,
    HistKernel::Shared,
    HistKernel::SharedRows,
    HistKernel::Warp,
    HistKernel::Vec16,
    HistKernel::Lane,
    HistKernel::Pipeline,
];
const BINS: [Bins; 2] = [Bins::Ascii, Bins::Byte];

/// The histogram the tests trust: a plain loop, independent of the library's CPU reference.
fn expected(data: &[u8], bins: Bins) -> Vec<u64> {
    let mut h = vec![0u64; bins.count() as usize];
    for &b in data {
        if let Some(slot) = h.get_mut(b as usize) {
            *slot += 1;
        }
    }
    h
}

/// `kernel` over all of `data` with the launch shape the library uses.
fn count(target: &Target, kernel: HistKernel, data: &[u8], bins: Bins) -> Vec<u64> {
    let src = target.upload(data).unwrap();
    let cfg = config_for(target, kernel, bins, data.len(), None).unwrap();
    let launch = HistogramLaunch::new(target, kernel, &src, data.len(), bins, cfg).unwrap();
    launch.run().unwrap()
}

/// `kernel` over `data` with `blocks` × `threads`.
fn count_with(
    t: &Target,
    kernel: HistKernel,
    data: &[u8],
    bins: Bins,
    shape: (u32, u32),
) -> Vec<u64> {
    let src = t.upload(data).unwrap();
    // The pipeline needs whole warps, at least two: its shape is rounded up to that.
    let threads = match kernel {
        HistKernel::Pipeline => shape.1.next_multiple_of(32).max(64),
        _ => shape.1,
    };
    let shared = kernel.shared_bytes(bins, threads);
    let cfg = LaunchConfig::linear(shape.0, threads).with_shared_bytes(shared);
    let launch = HistogramLaunch::new(t, kernel, &src, data.len(), bins, cfg).unwrap();
    launch.run().unwrap()
}

fn random_bytes(n: usize) -> Vec<u8> {
    let mut rng = common::rng();
    (0..n).map(|_| rng.random::<u8>()).collect()
}

fn every_kernel_counts(t: &Target, data: &[u8], what: &str) {
    for bins in BINS {
        let want = expected(data, bins);
        assert_eq!(histogram_cpu(data, bins), want, "CPU reference, {what}");
        for kernel in KERNELS {
            assert_eq!(
                count(t, kernel, data, bins),
                want,
                "{kernel:?}, {bins:?}, {what}"
            );
        }
    }
}

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
