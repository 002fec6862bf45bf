//! Normalizing arrays (`a ← a / Σa`, the Numba tutorial's streams-and-events pipeline): both
//! pipelines against a float64 CPU reference on the simulator at odd lengths and on mixed-sign
//! data, empty arrays and zero, NaN and overflowing sums rejected without touching the data, the
//! batch API, the experiment and its CLI — and on the GPU: one and many streams, pinned and
//! pageable memory, both copy schedules, the events' order, the timeline, the transfer benchmark
//! and the timer's error paths (ignored where no NVIDIA driver was found at build time).

mod common;

use gridsync::bench::transfer::Direction;
use gridsync::normalize::experiment::{self, ExperimentOptions};
use gridsync::normalize::{
    BatchOptions, Normalizer, Pipeline, Schedule, normalize, normalize_batch, normalize_cpu,
    normalize_with, source_arrays,
};
use gridsync::{Error, Target};
use rand::Rng;

fn random_f32(n: usize, lo: f32, hi: f32) -> Vec<f32> {
    let mut rng = common::rng();
    (0..n).map(|_| rng.random_range(lo..hi)).collect()
}

/// How far a pipeline may be from the float64 reference, relative to each element: the
/// single-pass pipeline rounds once (plus a rare double-rounding tie), the source's sums in
/// `f32` on one thread.
fn tolerance(p: Pipeline) -> f64 {
    match p {
        Pipeline::SinglePass => 2.0 * f32::EPSILON as f64,
        Pipeline::Source => 2e-5,
    }
}

/// `got` is `data` normalized by `p`: elementwise against the CPU, and `Σ got ≈ 1` in float64.
fn check_normalized(p: Pipeline, data: &[f32], got: &[f32], sum: f64) {
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

#[test]
fn both_pipelines_match_the_cpu_at_odd_lengths_on_the_simulator() {
    let t = Target::Sim;
    for p in Pipeline::ALL {
        for n in [1, 2, 3, 5, 255, 256, 257, 1025, 4099] {
            let data = random_f32(n, 0.5, 2.0);
            let mut x = data.clone();
            let sum = normalize_with(&t, &mut x, p).unwrap();
            check_normalized(p, &data, &x, sum);
        }
    }
}

#[test]
fn mixed_signs_normalize_too() {
    let t = Target::Sim;
    for p in Pipeline::ALL {
        let data = random_f32(2049, -1.0, 3.0);
        let mut x = data.clone();
        let sum = normalize_with(&t, &mut x, p).unwrap();
        check_normalized(p, &data, &x, sum);
    }
}

#[test]
fn the_default_pipeline_is_single_pass() {
    let data = random_f32(777, 0.0, 1.0);
    let (mut a, mut b) = (data.clone(), data.clone());
    let sa = normalize(&Target::Sim, &mut a).unwrap();
    let sb = normalize_with(&Target::Sim, &mut b, Pipeline::SinglePass).unwrap();
    assert_eq!(sa.to_bits(), sb.to_bits());
    assert_eq!(a, b);
}

#[test]
fn empty_arrays_are_rejected_before_anything_runs() {
    let t = Target::Sim;
    for p in Pipeline::ALL {
        let e = normalize_with(&t, &mut [], p).unwrap_err();
        assert!(
            matches!(&e, Error::InvalidInput(m) if m.contains("empty")),
            "{e}"
        );
    }
    let mut a = vec![1.0f32, 2.0, 3.0];
    let mut empty: Vec<f32> = Vec::new();
    let e = normalize_batch(&t, &mut [&mut a, &mut empty], &BatchOptions::default()).unwrap_err();
    assert!(
        matches!(&e, Error::InvalidInput(m) if m.contains("array 1 is empty")),
        "{e}"
    );
    assert_eq!(a, [1.0, 2.0, 3.0], "nothing ran");
    let e = normalize_batch(&t, &mut [], &BatchOptions::default()).unwrap_err();
    assert!(matches!(e, Error::InvalidInput(_)));
    let zero_streams = BatchOptions {
        streams: 0,
        ..BatchOptions::default()
    };
    assert!(matches!(
        normalize_batch(&t, &mut [&mut a], &zero_streams),
        Err(Error::InvalidInput(_))
    ));
}

#[test]
fn unusable_sums_leave_the_array_unchanged_and_say_so() {
    let t = Target::Sim;
    let cases: [&[f32]; 4] = [
        &[1.0, -1.0, 2.0, -2.0],
        &[0.0; 7],
        &[1.0, f32::NAN, 2.0],
        &[1.0, f32::INFINITY],
    ];
    for p in Pipeline::ALL {
        for data in cases {
            let mut x = data.to_vec();
            let e = normalize_with(&t, &mut x, p).unwrap_err();
            assert!(
                matches!(&e, Error::InvalidInput(m) if m.contains("array 0 sums to")),
                "{p:?} {data:?}: {e}"
            );
            assert_eq!(
                x.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
                data.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
                "{p:?}: {data:?} was changed"
            );
        }
    }
}

#[test]
fn an_f32_sum_that_overflows_is_refused_by_the_source_and_fine_in_f64() {
    let data = [3.0e38f32, 3.0e38, 1.0e38];
    let mut x = data.to_vec();
    let e = normalize_with(&Target::Sim, &mut x, Pipeline::Source).unwrap_err();
    assert!(
        matches!(&e, Error::InvalidInput(m) if m.contains("inf")),
        "{e}"
    );
    assert_eq!(x, data);
    let sum = normalize_with(&Target::Sim, &mut x, Pipeline::SinglePass).unwrap();
    assert!(sum > 6.9e38 && sum < 7.1e38, "{sum}");
    check_normalized(Pipeline::SinglePass, &data, &x, sum);
}

#[test]
fn a_batch_on_the_simulator_normalizes_every_array() {
    let t = Target::Sim;
    for p in Pipeline::ALL {
        let data: Vec<Vec<f32>> = [1usize, 100, 1001]
            .iter()
            .map(|&n| random_f32(n, 0.1, 1.0))
            .collect();
        let mut arrays = data.clone();
        let mut slices: Vec<&mut [f32]> = arrays.iter_mut().map(|a| &mut a[..]).collect();
        let options = BatchOptions {
            streams: 2,
            pipeline: p,
            schedule: Schedule::Staged,
        };
        let report = normalize_batch(&t, &mut slices, &options).unwrap();
        assert!(report.timing.is_none(), "the simulator has no events");
        assert_eq!(report.arrays.len(), 3);
        for ((d, a), r) in data.iter().zip(&arrays).zip(&report.arrays) {
            assert_eq!(r.len, d.len());
            check_normalized(p, d, a, r.sum);
        }
    }
}

#[test]
fn a_normalizer_refuses_arrays_past_its_capacity() {
    let t = Target::Sim;
    let mut n = Normalizer::new(&t, 10, BatchOptions::default()).unwrap();
    assert_eq!(n.capacity(), 10);
    let mut a = vec![1.0f32; 11];
    let e = n.run(&mut [&mut a]).unwrap_err();
    assert!(
        matches!(&e, Error::InvalidInput(m) if m.contains("more than")),
        "{e}"
    );
    let mut b = vec![2.0f32; 10];
    let r = n.run(&mut [&mut b]).unwrap();
    assert_eq!(r.arrays[0].sum, 20.0);
    assert!(b.iter().all(|&v| v == 0.1));
    assert!(Normalizer::new(&t, 0, BatchOptions::default()).is_err());
}

#[test]
fn the_sources_arrays_hold_i_plus_one() {
    let a = source_arrays(4, 5);
    assert_eq!(a.len(), 4);
    for (i, x) in a.iter().enumerate() {
        assert_eq!(x, &vec![(i + 1) as f32; 5]);
    }
}

#[test]
fn the_experiment_runs_on_the_simulator() {
    let options = ExperimentOptions {
        arrays: 3,
        len: 301,
        streams: 3,
        repeats: 1,
        ..ExperimentOptions::default()
    };
    let r = experiment::run(&Target::Sim, &options, |_, _| {}).unwrap();
    // Per pipeline: staged and per-stream on 3 streams, then 1 stream.
    assert_eq!(r.runs.len(), 6);
    for run in &r.runs {
        assert_eq!(run.new_sums.len(), 3);
        assert!(run.max_error < 1e-5, "{run:?}");
        for (i, a) in run.report.arrays.iter().enumerate() {
            assert_eq!(a.sum, 301.0 * (i + 1) as f64);
        }
    }
    assert!(r.bound_ms.is_none() && r.copies.is_none() && r.kernels.is_empty());
    assert!(experiment::timeline(&r, Pipeline::SinglePass).is_none());
    let bad = ExperimentOptions {
        repeats: 0,
        ..options
    };
    assert!(matches!(
        experiment::run(&Target::Sim, &bad, |_, _| {}),
        Err(Error::InvalidInput(_))
    ));
}

#[test]
fn cli_streams_on_the_simulator() {
    let out = common::cli(&[
        "streams",
        "--simulate",
        "--arrays",
        "3",
        "--len",
        "257",
        "--repeats",
        "1",
        "--json",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let runs = v["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 6);
    for run in runs {
        for s in run["new_sums"].as_array().unwrap() {
            assert!((s.as_f64().unwrap() - 1.0).abs() < 1e-5);
        }
    }
    let out = common::cli(&["streams", "--simulate", "--len", "100", "--repeats", "1"]);
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("single-pass, 1 stream"), "{text}");
    for bad in [
        &["streams", "--simulate", "--arrays", "0"][..],
        &["streams", "--simulate", "--len", "0"],
        &["streams", "--simulate", "--plot", "timeline.png"],
        &["streams", "--simulate", "--pipeline", "fast"],
        &["streams", "--simulate", "--schedule", "in-order"],
    ] {
        let out = common::cli(bad);
        assert!(!out.status.success(), "{bad:?} succeeded");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!err.contains("panicked"), "{bad:?}: {err}");
    }
}

// ---------------------------------------------------------------------------------------------
// GPU

fn gpu_of(t: &Target) -> &gridsync::Gpu {
    match t {
        Target::Gpu(g) => g,
        Target::Sim => unreachable!("common::gpu() opens a GPU"),
    }
}

/// Every event of every array in order, the total the latest end, the streams' spans right.
fn check_events(report: &gridsync::normalize::BatchReport, streams: usize) {
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

#[test]
#[cfg_attr(gridsync_no_driver, ignore = "no NVIDIA driver found at build time")]
fn gpu_one_array_matches_the_cpu() {
    let t = common::gpu();
    for p in Pipeline::ALL {
        for n in [1, 3, 1000, 262_147, 1_000_003] {
            let data = random_f32(n, 0.5, 2.0);
            let mut x = data.clone();
            let sum = normalize_with(&t, &mut x, p).unwrap();
            check_normalized(p, &data, &x, sum);
        }
        for bad in [&[1.0f32, -1.0][..], &[f32::NAN, 1.0]] {
            let mut x = bad.to_vec();
            assert!(matches!(
                normalize_with(&t, &mut x, p),
                Err(Error::InvalidInput(_))
            ));
            assert_eq!(format!("{x:?}"), format!("{bad:?}"), "unchanged");
        }
        assert!(matches!(
            normalize_with(&t, &mut [], p),
            Err(Error::InvalidInput(_))
        ));
    }
}

#[test]
#[cfg_attr(gridsync_no_driver, ignore = "no NVIDIA driver found at build time")]
fn gpu_batches_on_many_streams_from_pinned_memory() {
    let t = common::gpu();
    let gpu = gpu_of(&t);
    let mut rng = common::rng();
    let lens: Vec<usize> = (0..7).map(|_| rng.random_range(1..300_000)).collect();
    for p in Pipeline::ALL {
        for schedule in Schedule::ALL {
            for streams in [1, 3, 7] {
                let data: Vec<Vec<f32>> = lens.iter().map(|&n| random_f32(n, 0.1, 1.0)).collect();
                let mut pinned: Vec<_> = data
                    .iter()
                    .map(|d| gridsync::PinnedBuffer::from_slice(gpu, d).unwrap())
                    .collect();
                let mut slices: Vec<&mut [f32]> = pinned.iter_mut().map(|a| &mut a[..]).collect();
                let options = BatchOptions {
                    streams,
                    pipeline: p,
                    schedule,
                };
                let report = normalize_batch(&t, &mut slices, &options).unwrap();
                for ((d, a), r) in data.iter().zip(&pinned).zip(&report.arrays) {
                    assert!(r.pinned, "PinnedBuffer memory is pinned");
                    check_normalized(p, d, a, r.sum);
                }
                check_events(&report, streams);
            }
        }
    }
}

#[test]
#[cfg_attr(gridsync_no_driver, ignore = "no NVIDIA driver found at build time")]
fn gpu_batches_from_pageable_memory_are_correct_and_marked() {
    let t = common::gpu();
    for p in Pipeline::ALL {
        let data: Vec<Vec<f32>> = [5usize, 100_001, 2_000_003]
            .iter()
            .map(|&n| random_f32(n, -0.5, 1.5))
            .collect();
        let mut arrays = data.clone();
        let mut slices: Vec<&mut [f32]> = arrays.iter_mut().map(|a| &mut a[..]).collect();
        let options = BatchOptions {
            streams: 3,
            pipeline: p,
            schedule: Schedule::PerStream,
        };
        let report = normalize_batch(&t, &mut slices, &options).unwrap();
        for ((d, a), r) in data.iter().zip(&arrays).zip(&report.arrays) {
            assert!(!r.pinned, "a Vec is pageable");
            check_normalized(p, d, a, r.sum);
        }
        check_events(&report, 3);
    }
}

#[test]
#[cfg_attr(gridsync_no_driver, ignore = "no NVIDIA driver found at build time")]
fn gpu_a_zero_sum_array_in_a_batch_is_reported_and_the_others_normalized() {
    let t = common::gpu();
    let good = random_f32(10_001, 0.1, 1.0);
    let (mut a, mut b, mut c) = (good.clone(), vec![1.0f32, -1.0, 0.0], good.clone());
    let e =
        normalize_batch(&t, &mut [&mut a, &mut b, &mut c], &BatchOptions::default()).unwrap_err();
    assert!(
        matches!(&e, Error::InvalidInput(m) if m.contains("array 1 sums to 0")),
        "{e}"
    );
    assert_eq!(b, [1.0, -1.0, 0.0]);
    let (s, want) = normalize_cpu(&good).unwrap();
    assert!(s > 0.0);
    for x in [&a, &c] {
        for (g, w) in x.iter().zip(&want) {
            assert!((g - w).abs() <= 2.0 * f32::EPSILON * w.abs());
        }
    }
}

#[test]
#[cfg_attr(gridsync_no_driver, ignore = "no NVIDIA driver found at build time")]
fn gpu_the_tutorials_experiment_runs_on_one_and_many_streams() {
    let t = common::gpu();
    let options = ExperimentOptions {
        arrays: 10,
        len: 4_000_000,
        streams: 10,
        repeats: 3,
        pipelines: vec![Pipeline::SinglePass],
        schedules: vec![Schedule::Staged],
        pageable: false,
    };
    let r = experiment::run(&t, &options, |_, _| {}).unwrap();
    let many = r.run(Pipeline::SinglePass, 10, Schedule::Staged).unwrap();
    let one = r.run(Pipeline::SinglePass, 1, Schedule::Staged).unwrap();
    // Results right and timings taken; which is faster is the benchmark's to say (the tests
    // share the GPU), not this test's.
    for run in [many, one] {
        assert!(run.max_error < 1e-5, "new sums {:?}", run.new_sums);
        check_events(&run.report, run.options.streams);
        let total = run.total_ms.unwrap();
        assert_eq!(total.samples, 3);
        assert!(total.median.is_finite() && total.median > 0.0, "{total:?}");
    }
    let bound = r.bound_ms.unwrap();
    assert!(bound.is_finite() && bound > 0.0, "{bound}");
    let plot = experiment::timeline(&r, Pipeline::SinglePass).unwrap();
    assert_eq!(plot.panels.len(), 2);
    let svg = gridsync::plot::timeline_chart(&plot);
    assert_eq!(svg.matches("class=\"bar\"").count(), 2 * 10 * 3);
}

#[test]
#[cfg_attr(gridsync_no_driver, ignore = "no NVIDIA driver found at build time")]
fn gpu_pinned_buffers_are_pinned_and_vecs_are_not() {
    let t = common::gpu();
    let gpu = gpu_of(&t);
    let p = gridsync::PinnedBuffer::new(gpu, 1000, 3.5f32).unwrap();
    assert_eq!(p.len(), 1000);
    assert!(p.iter().all(|&v| v == 3.5));
    assert!(gridsync::runtime::pinned::is_pinned(&p));
    assert!(gridsync::runtime::pinned::is_pinned(&p[10..20]));
    let v = vec![0u8; 1 << 20];
    assert!(!gridsync::runtime::pinned::is_pinned(&v));
    let empty = gridsync::PinnedBuffer::<f32>::new(gpu, 0, 0.0).unwrap();
    assert!(empty.is_empty());
    let copy = gridsync::PinnedBuffer::from_slice(gpu, &[1u32, 2, 3]).unwrap();
    assert_eq!(&copy[..], &[1, 2, 3]);
}

#[test]
#[cfg_attr(gridsync_no_driver, ignore = "no NVIDIA driver found at build time")]
fn gpu_transfer_benchmark_measures_every_direction() {
    let t = common::gpu();
    let b = gridsync::bench::transfer::run(&t, &[1 << 20, 3_000_001], 3, |_, _| {}).unwrap();
    assert_eq!(b.transfers.len(), 12);
    for x in &b.transfers {
        // Measured, and the rate follows from the bytes and the median; the ceiling is no
        // machine's bus (a rate above it is a unit error, not a fast run).
        assert_eq!(x.ms.samples, 3, "{x:?}");
        assert!(x.ms.median.is_finite() && x.ms.median > 0.0, "{x:?}");
        let ways = if x.direction == Direction::Both {
            2.0
        } else {
            1.0
        };
        let rate = ways * x.bytes as f64 / (x.ms.median * 1e6);
        assert!((x.gb_per_s - rate).abs() <= 1e-9 * rate, "{x:?}");
        assert!(x.gb_per_s < 2000.0, "{x:?}");
    }
    assert!(gridsync::bench::transfer::run(&t, &[], 3, |_, _| {}).is_err());
    assert!(gridsync::bench::transfer::run(&t, &[0], 3, |_, _| {}).is_err());
    assert!(gridsync::bench::transfer::run(&Target::Sim, &[8], 3, |_, _| {}).is_err());
}

#[test]
#[cfg_attr(gridsync_no_driver, ignore = "no NVIDIA driver found at build time")]
fn gpu_timer_refuses_to_stop_on_another_stream_or_read_early() {
    let t = common::gpu();
    let gpu = gpu_of(&t);
    let other = gridsync::Stream::new().unwrap();
    let mut timer = gridsync::Timer::new().unwrap();
    assert!(matches!(timer.elapsed_ms(), Err(Error::TimerNotReady)));
    timer.start(gpu.stream()).unwrap();
    let e = timer.stop(&other).unwrap_err();
    assert!(
        matches!(&e, Error::InvalidInput(m) if m.contains("another stream")),
        "{e}"
    );
    assert!(matches!(timer.wait_ms(), Err(Error::TimerNotReady)));
    timer.stop(gpu.stream()).unwrap();
    assert!(timer.wait_ms().unwrap() >= 0.0);
    // The guard form: stopped on drop, on the stream it started on.
    {
        let _g = timer.guard(&other).unwrap();
    }
    assert!(timer.wait_ms().unwrap() >= 0.0);
}

#[test]
#[cfg_attr(gridsync_no_driver, ignore = "no NVIDIA driver found at build time")]
fn gpu_cli_streams_writes_the_timeline() {
    let dir = std::env::temp_dir().join(format!("gridsync-streams-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let plot = dir.join("timeline.svg");
    let out = common::cli(&[
        "streams",
        "--arrays",
        "4",
        "--len",
        "1000003",
        "--repeats",
        "2",
        "--plot",
        plot.to_str().unwrap(),
        "--json",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["runs"].as_array().unwrap().len(), 6);
    assert!(v["bound_ms"].as_f64().unwrap() > 0.0);
    let svg = std::fs::read_to_string(&plot).unwrap();
    // The single-pass pipeline's three runs (staged, per stream, one stream) × 4 arrays × 3 bars.
    assert_eq!(svg.matches("class=\"bar\"").count(), 3 * 4 * 3);
    let out = common::cli(&[
        "streams",
        "--arrays",
        "3",
        "--len",
        "100000",
        "--pageable",
        "--repeats",
        "1",
        "--verbose",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("pageable"), "{text}");
    let _ = std::fs::remove_dir_all(&dir);
}
