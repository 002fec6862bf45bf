//! The streams experiment (`gridsync streams`): its report, its timeline, its command and the
//! transfer benchmark, on the simulator and on the GPU. (Normalizing itself:
//! `tests/normalize.rs`.)

#[path = "../../tests/common/normalize.rs"]
mod checks;
mod common;

use checks::*;

use gridsync::normalize::{Pipeline, Schedule};
use gridsync::{Error, Target};
use gridsync_cli::bench::transfer::Direction;
use gridsync_cli::demos::streams::{self as experiment, ExperimentOptions};

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
        assert!(
            run.over_copies.is_none(),
            "no copies alone on the simulator"
        );
        for (i, a) in run.report.arrays.iter().enumerate() {
            assert_eq!(a.sum, 301.0 * (i + 1) as f64);
        }
    }
    assert!(r.bound_ms.is_none() && r.copies.is_none() && r.kernels.is_empty());
    assert!(r.streamed_copies_ms.is_none());
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
    let v = common::cli_json(&[
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

/// The bound from the bus, worked by hand: 10 arrays of 40 MB, 55.5 GB/s each way alone.
#[test]
fn the_bus_bound_follows_each_directions_share() {
    use gridsync_cli::bench::transfer::{Ends, concurrent_gbps};
    let rates = |both_in: f64, both_out: f64| experiment::CopyRates {
        h2d_gbps: 55.5,
        d2h_gbps: 55.5,
        both_gbps: both_in + both_out,
        both_in_gbps: both_in,
        both_out_gbps: both_out,
        h2d_pageable_gbps: 13.0,
        d2h_pageable_gbps: 19.0,
    };
    let bytes = 40_000_000;
    // Equal shares, no kernels: the first array in alone (0.7207 ms), nine arrays both ways
    // at 101 GB/s (7.1287 ms), the last out alone.
    let even = experiment::bound_ms(&rates(50.5, 50.5), 10, bytes, 0.0);
    assert!(
        (even - (2.0 * 40.0 / 55.5 + 360.0 / 50.5)).abs() < 1e-9,
        "{even}"
    );
    // Unknown shares are taken as equal halves of the pair's rate.
    let unknown = experiment::CopyRates {
        both_gbps: 101.0,
        ..rates(f64::NAN, f64::NAN)
    };
    let halves = experiment::bound_ms(&unknown, 10, bytes, 0.0);
    assert!((halves - even).abs() < 1e-9, "{halves}");
    // In faster than out beside it (53 against 48): the copy in runs out of bytes after
    // 360 MB / 53 GB/s, and the copy out moves the 74 MB it has left alone.
    let split = experiment::bound_ms(&rates(53.0, 48.0), 10, bytes, 0.0);
    let by_hand = 40.0 / 55.5 + 360.0 / 53.0 + (400.0 - 48.0 * 360.0 / 53.0) / 55.5;
    assert!((split - by_hand).abs() < 1e-9, "{split} against {by_hand}");
    assert!(split > even);
    // Kernels stretch each lone part by their time, less what the other direction moves then.
    let k = experiment::bound_ms(&rates(50.5, 50.5), 10, bytes, 0.03);
    assert!(k > even && k < even + 0.03, "{k}");
    // Running both at once can only help: never above one direction after the other.
    let slow = experiment::bound_ms(&rates(10.0, 10.0), 10, bytes, 0.0);
    assert!((slow - 800.0 / 55.5).abs() < 1e-9, "{slow}");
    // The shares from a pair's ends: in ended first at 0.8 ms (40 MB: 50 GB/s beside out);
    // out moved 40 MB − 55.5 GB/s · 0.1 ms alone in its last 0.1 ms, the rest beside in.
    let ends = Ends {
        in_ms: 0.8,
        out_ms: 0.9,
    };
    let (r_in, r_out) = concurrent_gbps(bytes, ends, 55.5, 55.5).unwrap();
    assert!((r_in - 50.0).abs() < 1e-9 && (r_out - (40.0 - 5.55) / 0.8).abs() < 1e-9);
    let swapped = Ends {
        in_ms: 0.9,
        out_ms: 0.8,
    };
    let (r_in, r_out) = concurrent_gbps(bytes, swapped, 55.5, 55.5).unwrap();
    assert!((r_out - 50.0).abs() < 1e-9 && (r_in - (40.0 - 5.55) / 0.8).abs() < 1e-9);
    // Times that cannot be (the later copy would have moved more than its bytes alone).
    let odd = Ends {
        in_ms: 0.1,
        out_ms: 5.0,
    };
    assert!(concurrent_gbps(bytes, odd, 55.5, 55.5).is_none());
    assert!(
        concurrent_gbps(
            bytes,
            Ends {
                in_ms: 0.0,
                out_ms: 0.0
            },
            55.5,
            55.5
        )
        .is_none()
    );
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
    // The copies alone, once per round; the many-stream run against them round by round, the
    // one-stream run not (it does not use the copies' streams).
    let copies = r.streamed_copies_ms.unwrap();
    assert!(
        copies.samples == 3 && copies.median > 0.0 && copies.median.is_finite(),
        "{copies:?}"
    );
    let paired = many.over_copies.unwrap();
    assert!(
        paired.samples == 3 && paired.median > 0.0 && paired.median.is_finite(),
        "{paired:?}"
    );
    assert!(one.over_copies.is_none());
    let plot = experiment::timeline(&r, Pipeline::SinglePass).unwrap();
    assert_eq!(plot.panels.len(), 2);
    let svg = gridsync_cli::plot::timeline_chart(&plot);
    assert_eq!(svg.matches("class=\"bar\"").count(), 2 * 10 * 3);
}

#[test]
#[cfg_attr(gridsync_no_driver, ignore = "no NVIDIA driver found at build time")]
fn gpu_transfer_benchmark_measures_every_direction() {
    let t = common::gpu();
    let b = gridsync_cli::bench::transfer::run(&t, &[1 << 20, 3_000_001], 3, |_, _| {}).unwrap();
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
        // A pair's time is its later copy's end.
        match x.ends {
            Some(e) => {
                assert_eq!(x.direction, Direction::Both, "{x:?}");
                assert!(e.in_ms > 0.0 && e.out_ms > 0.0, "{x:?}");
                assert!(e.in_ms.max(e.out_ms) <= x.ms.max + 1e-6, "{x:?}");
            }
            None => assert_ne!(x.direction, Direction::Both, "{x:?}"),
        }
    }
    // The caller's own page-locked memory: in, out, and both with each direction's end.
    let gpu = gridsync::runtime::stats::require_gpu(&t).unwrap();
    let mut h_in = gridsync::PinnedBuffer::new(gpu, 300_001, 1.5f32).unwrap();
    let mut h_out = gridsync::PinnedBuffer::new(gpu, 300_001, 0f32).unwrap();
    let own = gridsync_cli::bench::transfer::pinned_rates(&t, &mut h_in, &mut h_out, 3).unwrap();
    assert_eq!(own.transfers.len(), 3);
    assert!(
        own.transfers
            .iter()
            .all(|x| x.pinned && x.bytes == 1_200_004)
    );
    assert!(own.gbps(Direction::Both, true).unwrap() > 0.0);
    assert!(own.transfers[2].ends.is_some());
    assert!(
        h_out.iter().all(|&v| v == 0.0),
        "the device's zeros came back"
    );
    let mut pageable = vec![0f32; 300_001];
    let err = gridsync_cli::bench::transfer::pinned_rates(&t, &mut pageable, &mut h_out, 3);
    assert!(matches!(err, Err(Error::InvalidInput(_))), "{err:?}");
    let mut short = gridsync::PinnedBuffer::new(gpu, 3, 0f32).unwrap();
    let err = gridsync_cli::bench::transfer::pinned_rates(&t, &mut h_in, &mut short, 3);
    assert!(matches!(err, Err(Error::InvalidInput(_))), "{err:?}");
    // A whole schedule's copies alone: five arrays in and back out on three streams, each array
    // coming back as it went.
    let mut arrays: Vec<_> = (0..5)
        .map(|i| gridsync::PinnedBuffer::new(gpu, 300_001, i as f32 + 0.5).unwrap())
        .collect();
    let streamed = {
        let mut slices: Vec<&mut [f32]> = arrays.iter_mut().map(|a| &mut a[..]).collect();
        gridsync_cli::bench::transfer::streamed_copies(&t, &mut slices, 3, 3).unwrap()
    };
    assert!(
        streamed.samples == 3 && streamed.median > 0.0,
        "{streamed:?}"
    );
    for (i, a) in arrays.iter().enumerate() {
        assert!(a.iter().all(|&v| v == i as f32 + 0.5), "array {i} changed");
    }
    let mut slices: Vec<&mut [f32]> = vec![&mut pageable[..]];
    let err = gridsync_cli::bench::transfer::streamed_copies(&t, &mut slices, 3, 3);
    assert!(matches!(err, Err(Error::InvalidInput(_))), "{err:?}");
    let mut slices: Vec<&mut [f32]> = vec![&mut h_in[..], &mut short[..]];
    let err = gridsync_cli::bench::transfer::streamed_copies(&t, &mut slices, 3, 3);
    assert!(matches!(err, Err(Error::InvalidInput(_))), "{err:?}");
    let mut slices: Vec<&mut [f32]> = vec![&mut h_in[..]];
    let err = gridsync_cli::bench::transfer::streamed_copies(&t, &mut slices, 0, 3);
    assert!(matches!(err, Err(Error::InvalidInput(_))), "{err:?}");
    // Pageable memory of its own, one size: in, out, both.
    let p = gridsync_cli::bench::transfer::pageable_rates(&t, 1_000_003, 3).unwrap();
    assert_eq!(p.transfers.len(), 3);
    assert!(
        p.transfers
            .iter()
            .all(|x| !x.pinned && x.bytes == 1_000_003)
    );
    assert!(p.transfers[2].ends.is_some() && p.gbps(Direction::Both, false).is_some());
    assert!(gridsync_cli::bench::transfer::pageable_rates(&t, 0, 3).is_err());
    assert!(gridsync_cli::bench::transfer::run(&t, &[], 3, |_, _| {}).is_err());
    assert!(gridsync_cli::bench::transfer::run(&t, &[0], 3, |_, _| {}).is_err());
    assert!(gridsync_cli::bench::transfer::run(&Target::Sim, &[8], 3, |_, _| {}).is_err());
}

#[test]
#[cfg_attr(gridsync_no_driver, ignore = "no NVIDIA driver found at build time")]
fn gpu_cli_streams_writes_the_timeline() {
    let dir = std::env::temp_dir().join(format!("gridsync-streams-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let plot = dir.join("timeline.svg");
    let v = common::cli_json(&[
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
    assert_eq!(v["runs"].as_array().unwrap().len(), 6);
    assert!(v["bound_ms"].as_f64().unwrap() > 0.0);
    assert!(v["streamed_copies_ms"]["median"].as_f64().unwrap() > 0.0);
    let svg = std::fs::read_to_string(&plot).unwrap();
    // The single-pass pipeline's three runs (staged, per stream, one stream) × 4 arrays × 3 bars.
    assert_eq!(svg.matches("class=\"bar\"").count(), 3 * 4 * 3);
    let out = common::cli_ok(&[
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
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("pageable"), "{text}");
    let _ = std::fs::remove_dir_all(&dir);
}
