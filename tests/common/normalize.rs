//! What the normalize tests of the library (`tests/normalize.rs`) and of the command
//! (`cli/tests/normalize.rs`) check a result against: the float64 reference within each
//! pipeline's tolerance, and a batch's events in order.
#![allow(dead_code)]

use gridsync::Target;
use gridsync::normalize::{Pipeline, normalize_cpu};
use rand::Rng;

pub fn random_f32(n: usize, lo: f32, hi: f32) -> Vec<f32> {
    let mut rng = crate::common::rng();
    (0..n).map(|_| rng.random_range(lo..hi)).collect()
}

/// How far a pipeline may be from the float64 reference, relative to each element: the
/// single-pass pipeline rounds once (plus a rare double-rounding tie), the source's sums in
/// `f32` on one thread.
pub fn tolerance(p: Pipeline) -> f64 {
    match p {
        Pipeline::SinglePass => 2.0 * f32::EPSILON as f64,
        Pipeline::Source => 2e-5,
    }
}

/// `got` is `data` normalized by `p`: elementwise against the CPU, and `Σ got ≈ 1` in float64.
pub fn check_normalized(p: Pipeline, data: &[f32], got: &[f32], sum: f64) {
    let (s, want) = normalize_cpu(data).expect("test data has a usable sum");
    let tol = tolerance(p);
    assert!(
        ((sum - s) / s).abs() <= tol,
        "{p:?}, n = {}: device sum {sum}, CPU {s}",
        data.len()
    );
    for (i, (&g, &w)) in got.iter().zip(&want).enumerate() {
        let err = (g as f64 - w as f64).abs();
        assert!(
            err <= tol * (w as f64).abs() + 1e-30,
            "{p:?}, n = {}: element {i} is {g}, CPU {w}",
            data.len()
        );
    }
    let total: f64 = got.iter().map(|&v| v as f64).sum();
    let scale: f64 = want.iter().map(|&v| (v as f64).abs()).sum();
    assert!(
        (total - 1.0).abs() <= tol * scale.max(1.0),
        "{p:?}, n = {}: the result sums to {total}",
        data.len()
    );
}

pub fn gpu_of(t: &Target) -> &gridsync::Gpu {
    match t {
        Target::Gpu(g) => g,
        Target::Sim => unreachable!("common::gpu() opens a GPU"),
    }
}

/// Every event of every array in order, the total the latest end, the streams' spans right.
pub fn check_events(report: &gridsync::normalize::BatchReport, streams: usize) {
    let t = report.timing.as_ref().expect("a GPU batch has events");
    let eps = 1e-3;
    let mut latest = (0, f64::MIN);
    for (i, a) in report.arrays.iter().enumerate() {
        let e = a.timing.as_ref().unwrap();
        assert_eq!(e.stream, i % streams);
        let seq = [
            e.begin_ms,
            e.copied_in_ms,
            e.computed_ms,
            e.copy_out_ms,
            e.end_ms,
        ];
        // Times count from array 0's begin: arrays on its stream come after it; those on
        // other streams may start before it.
        assert!(
            seq.windows(2).all(|w| w[0] <= w[1] + eps) && (e.stream != 0 || seq[0] >= -eps),
            "array {i}: events out of order: {seq:?}"
        );
        if e.end_ms > latest.1 {
            latest = (i, e.end_ms);
        }
    }
    assert_eq!(t.last_array, latest.0);
    assert!((t.total_ms - latest.1).abs() < 1e-9);
    assert_eq!(t.streams.len(), streams.min(report.arrays.len()));
    assert!(t.serial_ms > 0.0 && t.overlap < 1.0);
}
