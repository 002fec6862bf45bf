//! Normalizing arrays (`a ← a / Σa`, the Numba tutorial's streams-and-events pipeline): both
//! pipelines against a float64 CPU reference on the simulator at odd lengths and on mixed-sign
//! data, empty arrays and zero, NaN and overflowing sums rejected without touching the data, the
//! batch API — and on the GPU: one and many streams, pinned and pageable memory, both copy
//! schedules, the events' order and the timer's error paths (ignored where no NVIDIA driver was
//! found at build time). The experiment, its timeline and its command: `cli/tests/`.

#[path = "common/normalize.rs"]
mod checks;
mod common;

use checks::*;
use gridsync::normalize::{
    BatchOptions, BatchReport, Normalizer, Pipeline, Schedule, normalize, normalize_batch,
    normalize_cpu, normalize_with, source_arrays,
};
use gridsync::{Error, Target};
use rand::Rng;

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
    for p in Pipeline::ALL {
        let options = BatchOptions {
            streams: 2,
            pipeline: p,
            schedule: Schedule::Staged,
        };
        let report = vec_batch(&Target::Sim, &[1, 100, 1001], (0.1, 1.0), &options);
        assert!(report.timing.is_none(), "the simulator has no events");
    }
}

/// Random arrays of `lens` in `[lo, hi)`, in ordinary `Vec`s, normalized as one batch with
/// `options`, each checked against the CPU; the report, for the caller's own checks.
fn vec_batch(
    t: &Target,
    lens: &[usize],
    (lo, hi): (f32, f32),
    options: &BatchOptions,
) -> BatchReport {
    let data: Vec<Vec<f32>> = lens.iter().map(|&n| random_f32(n, lo, hi)).collect();
    let mut arrays = data.clone();
    let mut slices: Vec<&mut [f32]> = arrays.iter_mut().map(|a| &mut a[..]).collect();
    let report = normalize_batch(t, &mut slices, options).unwrap();
    assert_eq!(report.arrays.len(), lens.len());
    for ((d, a), r) in data.iter().zip(&arrays).zip(&report.arrays) {
        assert_eq!(r.len, d.len());
        check_normalized(options.pipeline, d, a, r.sum);
    }
    report
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

// ---------------------------------------------------------------------------------------------
// GPU

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
        let options = BatchOptions {
            streams: 3,
            pipeline: p,
            schedule: Schedule::PerStream,
        };
        let report = vec_batch(&t, &[5, 100_001, 2_000_003], (-0.5, 1.5), &options);
        for r in &report.arrays {
            assert!(!r.pinned, "a Vec is pageable");
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
