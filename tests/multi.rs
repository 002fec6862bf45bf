//! Every GPU of a node: the split and the combine on N simulated devices equal one device's
//! result (odd sizes, more devices than elements, empty slices); on a GPU, the set of every
//! device against one. The command: `cli/tests/`.

mod common;

use gridsync::multi::{self, DeviceList, DeviceSet};
use gridsync::{Error, Target};
use rand::Rng;

#[test]
fn every_split_gives_the_single_device_result() {
    let mut rng = common::rng();
    for len in [0usize, 1, 1000 + 3] {
        let x: Vec<f32> = (0..len).map(|_| rng.random_range(-1.0f32..1.0)).collect();
        let bytes: Vec<u8> = (0..len).map(|_| rng.random()).collect();
        let one = DeviceSet::simulated(1).unwrap();
        let want_sum = multi::sum(&one, &x).unwrap();
        let want_hist = multi::histogram(&one, &bytes).unwrap();
        let want_ascii = multi::histogram_ascii(&one, &bytes).unwrap();
        let want_count = multi::count_above(&one, &x, 0.25).unwrap();
        assert_eq!(want_count, x.iter().filter(|&&v| v > 0.25).count() as u64);
        let abs: f64 = x.iter().map(|&v| v.abs() as f64).sum();
        // Three slices; eight, some of them empty.
        for n in [3, 8] {
            let set = DeviceSet::simulated(n).unwrap();
            let s = multi::sum(&set, &x).unwrap();
            // Each part in f64, then n − 1 more f64 additions.
            approx::assert_abs_diff_eq!(s, want_sum, epsilon = 1e-12 * abs.max(1.0));
            assert_eq!(
                multi::histogram(&set, &bytes).unwrap(),
                want_hist,
                "{len} in {n}"
            );
            assert_eq!(multi::histogram_ascii(&set, &bytes).unwrap(), want_ascii);
            assert_eq!(multi::count_above(&set, &x, 0.25).unwrap(), want_count);
            let (s3, lo, hi) = multi::sum_min_max(&set, &x).unwrap();
            assert_eq!(s3, s, "one upload or three, the same partials");
            if len > 0 {
                assert_eq!(
                    (lo, hi),
                    (multi::min(&one, &x).unwrap(), multi::max(&one, &x).unwrap())
                );
                assert_eq!(multi::min(&set, &x).unwrap(), multi::min(&one, &x).unwrap());
                assert_eq!(multi::max(&set, &x).unwrap(), multi::max(&one, &x).unwrap());
            } else {
                assert!(lo.is_nan() && hi.is_nan());
                assert!(matches!(multi::min(&set, &x), Err(Error::InvalidInput(_))));
            }
        }
    }
}

#[test]
fn nan_is_skipped_by_min_and_max_across_devices() {
    let x = [f32::NAN, 3.0, f32::NAN, -2.0, f32::NAN];
    let set = DeviceSet::simulated(5).unwrap();
    assert_eq!(multi::min(&set, &x).unwrap(), -2.0);
    assert_eq!(multi::max(&set, &x).unwrap(), 3.0);
}

#[test]
fn device_sets_refuse_what_does_not_exist() {
    assert!(DeviceSet::simulated(0).is_err());
    assert!("0,x".parse::<DeviceList>().is_err());
    let set = DeviceSet::open(&DeviceList::Ordinals(vec![0, 1, 2]), true).unwrap();
    assert_eq!(set.len(), 3);
    assert!(set.targets().iter().all(Target::is_sim));
}

#[test]
fn system_scope_counter_lock_and_barrier_span_simulated_devices() {
    use gpu::LaunchConfig;
    use gpu::atomic::Scope;
    use multi::devices::peer;
    use std::time::Duration;
    let set = DeviceSet::simulated(2).unwrap();
    let cfg = LaunchConfig::linear(2, 32);
    let c = peer::count(&set, Scope::System, cfg, 5).unwrap();
    assert_eq!(
        (c.expected, c.counted, c.wrong),
        (2 * 64 * 5, 2 * 64 * 5, 0)
    );
    let l = peer::lock(&set, Scope::System, cfg, 3, Duration::from_secs(20), 1).unwrap();
    assert_eq!(
        (l.expected, l.counted, l.wrong),
        (2 * 64 * 3, 2 * 64 * 3, 0)
    );
    // Three devices: the barrier's partner of a block is on another device.
    let three = DeviceSet::simulated(3).unwrap();
    let b = peer::barrier(&three, Scope::System, cfg, 25, Duration::from_secs(20), 2).unwrap();
    assert_eq!((b.expected, b.wrong), (3 * 2 * 25, 0));
    // Block scope cannot span GPUs; a counter past 32 bits is refused before launching.
    assert!(matches!(
        peer::count(&set, Scope::Block, cfg, 1),
        Err(Error::InvalidInput(_))
    ));
    let huge = LaunchConfig::linear(1 << 20, 1024);
    assert!(matches!(
        peer::count(&set, Scope::System, huge, 4096),
        Err(Error::InvalidInput(_))
    ));
}

/// What the plans must give, computed here in `f64` and `u64`: Σ `x`, Σ |`x`| (the sum's error
/// scale), the histogram of `bytes`, and the count of `x` above `threshold`.
fn on_the_cpu(x: &[f32], bytes: &[u8], threshold: f32) -> (f64, f64, Vec<u64>, u64) {
    let sum = x.iter().map(|&v| v as f64).sum();
    let abs = x.iter().map(|&v| v.abs() as f64).sum();
    let mut hist = vec![0u64; 256];
    for &b in bytes {
        hist[b as usize] += 1;
    }
    let count = x.iter().filter(|&&v| v > threshold).count() as u64;
    (sum, abs, hist, count)
}

#[test]
fn scattered_plans_combine_to_the_single_device_result() {
    use gpu::lessons::reduce::SumF32InF64 as Sum;
    use gridsync::histogram::Bins;
    use gridsync::multi::{Combiner, CountPlan, HistogramPlan, Op, ReducePlan, Scattered};
    let mut rng = common::rng();
    for len in [0usize, 1, 1000 + 3] {
        let x: Vec<f32> = (0..len).map(|_| rng.random_range(-1.0f32..1.0)).collect();
        let bytes: Vec<u8> = (0..len).map(|_| rng.random()).collect();
        let (want_sum, abs, want_hist, want_count) = on_the_cpu(&x, &bytes, 0.25);
        // One device, three, and eight (some with empty slices).
        for n in [1, 3, 8] {
            let set = DeviceSet::simulated(n).unwrap();
            let combiner = Combiner::open(&set).unwrap();
            assert!(
                matches!(combiner, Combiner::PeerCopies { .. }),
                "{combiner:?}"
            );
            let xs = set.scatter(&x).unwrap();
            let bs = set.scatter(&bytes).unwrap();
            assert_eq!((xs.len(), xs.parts().len()), (len, n));
            let s = ReducePlan::<Sum>::new(&set, &xs, Op::Sum)
                .unwrap()
                .run(&combiner)
                .unwrap();
            approx::assert_abs_diff_eq!(s, want_sum, epsilon = 1e-12 * abs.max(1.0));
            let h = HistogramPlan::new(&set, &bs, Bins::Byte).unwrap();
            assert_eq!(
                h.run(&combiner).unwrap(),
                want_hist,
                "{len} bytes on {n} devices"
            );
            let c = CountPlan::new(&set, &xs, 0.25).unwrap();
            assert_eq!(c.run(&combiner).unwrap(), want_count);
            // 65 536 bins of 16-bit values, values at both ends included.
            let mut words: Vec<u16> = (0..len).map(|_| rng.random()).collect();
            if len > 2 {
                (words[0], words[1]) = (0, u16::MAX);
            }
            let ws = set.scatter(&words).unwrap();
            let w = gridsync::multi::WideHistogramPlan::new(&set, &ws).unwrap();
            assert_eq!(
                w.run(&combiner).unwrap(),
                gridsync::histogram::wide::histogram_u16_cpu(&words),
                "{len} values on {n} devices"
            );
            // Zeroed slices filled from the host in place give the same count; a length that
            // does not match is refused.
            let again = Scattered::<f32>::zeros(&set, len).unwrap();
            again.copy_from(&set, &x).unwrap();
            let c = CountPlan::new(&set, &again, 0.25).unwrap();
            assert_eq!(c.run(&combiner).unwrap(), want_count);
            assert!(again.copy_from(&set, &x[..len / 2]).is_err() || len == 0);
            let other = DeviceSet::simulated(n + 1).unwrap();
            assert!(matches!(
                again.copy_from(&other, &x),
                Err(Error::InvalidInput(_))
            ));
        }
    }
}

/// Min and max through `combiner` on inputs whose slices hold no number (all NaN, or empty):
/// what one device gives — the numbers' extreme, or NaN where there is none.
fn plans_skip_nan_and_empty_slices(set: &DeviceSet, combiner: &gridsync::multi::Combiner) {
    use gpu::lessons::reduce::{MaxF32, MinF32};
    use gridsync::multi::{Op, ReducePlan};
    let nan = f32::NAN;
    let half_nan: Vec<f32> = (0..1001)
        .map(|k| if k < 600 { nan } else { k as f32 - 900.5 })
        .collect();
    let cases: [&[f32]; 6] = [
        &[],
        &[nan],
        &[nan, nan, nan],
        &[nan, 1.5],
        &[nan, 3.0, nan, -2.0, nan],
        &half_nan,
    ];
    let what = combiner.describe();
    for x in cases {
        let want_lo = x.iter().copied().fold(nan, f32::min);
        let want_hi = x.iter().copied().fold(nan, f32::max);
        let xs = set.scatter(x).unwrap();
        let lo = ReducePlan::<MinF32>::new(set, &xs, Op::Min)
            .unwrap()
            .run(combiner)
            .unwrap();
        let hi = ReducePlan::<MaxF32>::new(set, &xs, Op::Max)
            .unwrap()
            .run(combiner)
            .unwrap();
        // Exactly the extreme, or a NaN (of any payload) where there is no number.
        let same = |a: f32, b: f32| a == b || (a.is_nan() && b.is_nan());
        assert!(
            same(lo, want_lo) && same(hi, want_hi),
            "{} elements on {} devices, {what}: min {lo}, max {hi}, want {want_lo}, {want_hi}",
            x.len(),
            set.len()
        );
    }
}

#[test]
fn plans_give_nan_where_no_device_has_a_number() {
    for n in [1, 2, 3, 8] {
        let set = DeviceSet::simulated(n).unwrap();
        plans_skip_nan_and_empty_slices(&set, &gridsync::multi::Combiner::open(&set).unwrap());
    }
}

#[test]
fn missing_nccl_is_an_error_and_the_fallback_is_taken() {
    use gridsync::multi::{Combiner, NcclComms};
    let set = DeviceSet::simulated(2).unwrap();
    // Without the library (as on a machine with no NVIDIA software) the error names it; with
    // it, simulated devices are refused. Never a panic.
    match NcclComms::new(&set) {
        Err(Error::Unsupported(why)) => {
            if !gridsync::multi::collective::nccl_installed() {
                assert!(why.contains("NCCL is not installed"), "{why}");
            }
        }
        other => panic!("expected an unsupported error, got {other:?}"),
    }
    match Combiner::open(&set) {
        Ok(Combiner::PeerCopies { why }) => assert!(why.contains("NCCL"), "{why}"),
        other => panic!("expected the fallback, got {other:?}"),
    }
}

#[test]
fn only_a_missing_nccl_falls_back_and_every_other_nccl_failure_is_an_error() {
    use gridsync::multi::Combiner;
    let missing = Combiner::from_attempt(Err(Error::Unsupported("NCCL is not installed".into())));
    assert!(
        matches!(missing, Ok(Combiner::PeerCopies { .. })),
        "{missing:?}"
    );
    // An NCCL that is there but fails to make its communicators must be seen, not hidden
    // behind peer copies.
    let failed = Combiner::from_attempt(Err(Error::Nccl {
        call: "ncclCommInitAll".into(),
        why: "ncclSystemError (2)".into(),
    }));
    match failed {
        Err(e) => assert!(e.to_string().contains("ncclCommInitAll failed"), "{e}"),
        Ok(c) => panic!("fell back to {}", c.describe()),
    }
    let driver = Combiner::from_attempt(Err(Error::Driver {
        op: "cuCtxSetCurrent".into(),
        code: 201,
    }));
    assert!(matches!(driver, Err(Error::Driver { .. })), "{driver:?}");
}

#[test]
#[cfg_attr(gridsync_no_driver, ignore = "no NVIDIA driver found at build time")]
fn gpu_every_device_gives_the_single_device_result() {
    let set = DeviceSet::open(&DeviceList::All, false).unwrap();
    let one = DeviceSet::open(&DeviceList::Ordinals(vec![0]), false).unwrap();
    let mut rng = common::rng();
    let len = 10_000_019;
    let x: Vec<f32> = (0..len).map(|_| rng.random_range(-1.0f32..1.0)).collect();
    let bytes: Vec<u8> = (0..len).map(|_| rng.random()).collect();
    let abs: f64 = x.iter().map(|&v| v.abs() as f64).sum();
    approx::assert_abs_diff_eq!(
        multi::sum(&set, &x).unwrap(),
        multi::sum(&one, &x).unwrap(),
        epsilon = 1e-12 * abs
    );
    assert_eq!(
        multi::histogram(&set, &bytes).unwrap(),
        multi::histogram(&one, &bytes).unwrap()
    );
    assert_eq!(
        multi::count_above(&set, &x, 0.0).unwrap(),
        x.iter().filter(|&&v| v > 0.0).count() as u64
    );
    assert_eq!(
        multi::max(&set, &x).unwrap(),
        x.iter().copied().fold(f32::NAN, f32::max)
    );
}

#[test]
#[cfg_attr(gridsync_no_driver, ignore = "no NVIDIA driver found at build time")]
fn gpu_plans_combine_on_the_gpus_with_nccl_and_with_peer_copies() {
    use gpu::lessons::reduce::{MaxF32, MinF32, SumF32InF64 as Sum};
    use gridsync::histogram::Bins;
    use gridsync::multi::{Combiner, CountPlan, HistogramPlan, Op, ReducePlan};
    let set = DeviceSet::open(&DeviceList::All, false).unwrap();
    let mut rng = common::rng();
    // Past two staging buffers per device (the floats and the bytes), and odd.
    let stage = multi::devices::resident::STAGE_BYTES;
    let len = 2 * stage / 4 * set.len() + 1_000_003;
    let x: Vec<f32> = (0..len).map(|_| rng.random_range(-1.0f32..1.0)).collect();
    let bytes: Vec<u8> = (0..2 * stage * set.len() + 1_000_003)
        .map(|_| rng.random())
        .collect();
    let (want_sum, abs, want_hist, want_count) = on_the_cpu(&x, &bytes, 0.5);
    let xs = set.scatter(&x).unwrap();
    let bs = set.scatter(&bytes).unwrap();
    let nccl = Combiner::open(&set).unwrap();
    if multi::collective::nccl_installed() {
        assert!(matches!(nccl, Combiner::Nccl(_)), "{}", nccl.describe());
    }
    for combiner in [nccl, Combiner::peer_copies()] {
        let what = combiner.describe();
        let s = ReducePlan::<Sum>::new(&set, &xs, Op::Sum)
            .unwrap()
            .run(&combiner)
            .unwrap();
        approx::assert_abs_diff_eq!(s, want_sum, epsilon = 1e-12 * abs);
        let h = HistogramPlan::new(&set, &bs, Bins::Byte).unwrap();
        assert_eq!(h.run(&combiner).unwrap(), want_hist, "{what}");
        assert_eq!(h.run(&combiner).unwrap(), want_hist, "{what}, again");
        let c = CountPlan::new(&set, &xs, 0.5).unwrap();
        assert_eq!(c.run(&combiner).unwrap(), want_count, "{what}");
        // Min and max through the combine (NCCL's float min/max), and a combine repeated.
        let lo = ReducePlan::<MinF32>::new(&set, &xs, Op::Min).unwrap();
        let want_lo = x.iter().copied().fold(f32::NAN, f32::min);
        assert_eq!(lo.run(&combiner).unwrap(), want_lo, "{what}");
        assert_eq!(
            lo.combine(&combiner).unwrap(),
            want_lo,
            "{what}, combined again"
        );
        let hi = ReducePlan::<MaxF32>::new(&set, &xs, Op::Max).unwrap();
        assert_eq!(
            hi.run(&combiner).unwrap(),
            x.iter().copied().fold(f32::NAN, f32::max)
        );
        // Fewer elements than devices: the empty slices' identities, run twice.
        let tiny = set.scatter(&x[..1]).unwrap();
        let s = ReducePlan::<Sum>::new(&set, &tiny, Op::Sum).unwrap();
        let lo = ReducePlan::<MinF32>::new(&set, &tiny, Op::Min).unwrap();
        let c = CountPlan::new(&set, &tiny, -2.0).unwrap();
        for _ in 0..2 {
            assert_eq!(s.run(&combiner).unwrap(), x[0] as f64, "{what}");
            assert_eq!(lo.run(&combiner).unwrap(), x[0], "{what}");
            assert_eq!(c.run(&combiner).unwrap(), 1, "{what}");
        }
        // Slices with no number: NaN from a device is skipped by NCCL's min/max as by the
        // host's.
        plans_skip_nan_and_empty_slices(&set, &combiner);
        // Data of one set refused by another.
        let one = DeviceSet::open(&DeviceList::Ordinals(vec![0]), false).unwrap();
        if set.len() > 1 {
            assert!(matches!(
                xs.copy_from(&one, &x),
                Err(Error::InvalidInput(_))
            ));
            assert!(CountPlan::new(&one, &xs, 0.5).is_err());
        }
    }
}

#[test]
#[cfg_attr(gridsync_no_driver, ignore = "no NVIDIA driver found at build time")]
fn gpu_system_scope_counter_lock_and_barrier_are_exact_across_every_device() {
    use gpu::LaunchConfig;
    use gpu::atomic::Scope;
    use multi::devices::peer;
    use std::time::Duration;
    let set = DeviceSet::open(&DeviceList::All, false).unwrap();
    peer::enable_peer_access(&set).unwrap();
    let n = set.len() as u64;
    let cfg = LaunchConfig::linear(64, 128);
    let c = peer::count(&set, Scope::System, cfg, 50).unwrap();
    assert_eq!((c.counted, c.wrong), (n * 64 * 128 * 50, 0));
    let l = peer::lock(
        &set,
        Scope::System,
        cfg,
        4,
        Duration::from_secs(20),
        set.len() - 1,
    )
    .unwrap();
    assert_eq!((l.counted, l.wrong), (n * 64 * 128 * 4, 0));
    let b = peer::barrier(
        &set,
        Scope::System,
        LaunchConfig::linear(32, 64),
        2000,
        Duration::from_secs(5),
        set.len() - 1,
    )
    .unwrap();
    assert_eq!((b.expected, b.wrong), (n * 32 * 2000, 0));
}
