//! The library API: the CPU's counts and the choice by size, the flush count, the sweep, the
//! demo, bad bins and bad launches.

use super::*;

#[test]
fn the_library_api_matches_the_cpu_and_picks_by_size() {
    let t = Target::Sim;
    for len in [0, 1 << 20, PIPELINE_MIN_BYTES - 1] {
        assert_eq!(fastest_kernel(&t, len), HistKernel::Vec16);
    }
    for len in [PIPELINE_MIN_BYTES, 1 << 30] {
        assert_eq!(fastest_kernel(&t, len), HistKernel::Pipeline);
    }
    for data in [
        Vec::new(),
        b"hello, world".to_vec(),
        random_bytes((1 << 20) + 5),
    ] {
        let byte = histogram::histogram(&t, &data).unwrap();
        assert_eq!(byte.to_vec(), expected(&data, Bins::Byte));
        let ascii = histogram::histogram_ascii(&t, &data).unwrap();
        assert_eq!(ascii.to_vec(), expected(&data, Bins::Ascii));
    }
    assert_eq!(
        histogram::histogram(&t, b"hello, world").unwrap()[b'l' as usize],
        3
    );
}

#[test]
fn flush_atomic_counts_match_a_direct_count() {
    let data = english_text(50_000, 3);
    let blocks = [1, 2, 7, 64, 500];
    for bins in BINS {
        let got = flush_atomic_counts(&data, 128, bins, &blocks);
        for (&b, &n) in blocks.iter().zip(&got) {
            // Block k reads bytes i with (i / 128) mod b == k.
            let mut seen = vec![std::collections::BTreeSet::new(); b as usize];
            for (i, &x) in data.iter().enumerate() {
                if (x as u32) < bins.count() {
                    seen[(i / 128) % b as usize].insert(x);
                }
            }
            let want: u64 = seen.iter().map(|s| s.len() as u64).sum();
            assert_eq!(n, want, "{b} blocks, {bins:?}");
        }
    }
}

#[test]
fn the_sweep_checks_every_kernel_and_reports_each_point() {
    let data = english_text(20_000, 5);
    let opts = SweepOptions {
        blocks: vec![1, 3, 8],
        trials: 1,
        bins: Bins::Ascii,
    };
    let r = sweep(&Target::Sim, &data, "test", &opts, |_, _| {}).unwrap();
    assert_eq!(r.points.len(), 3);
    assert_eq!(r.threads_per_block, 128);
    let flush = flush_atomic_counts(&data, 128, Bins::Ascii, &[1, 3, 8]);
    for (p, f) in r.points.iter().zip(flush) {
        assert_eq!(p.flush_atomics, f);
        assert!(
            p.global_ms.is_none() && p.shared_ms.is_none(),
            "the simulator is not timed"
        );
    }
    assert!(r.best_shared.is_none() && r.contention.is_none());
    let chart = sweep_chart(&r);
    assert_eq!(chart.x, [1.0, 3.0, 8.0]);
    assert_eq!(chart.left.len() + chart.right.len(), 3);
    for bad in [vec![], vec![0, 1]] {
        let opts = SweepOptions {
            blocks: bad,
            ..opts.clone()
        };
        let e = sweep(&Target::Sim, &data, "test", &opts, |_, _| {});
        assert!(matches!(e, Err(Error::InvalidInput(_))));
    }
    assert_eq!(block_sweep::source_block_counts(5).len(), 198);
    assert_eq!(block_sweep::source_block_counts(5)[..2], [320, 480]);
    assert_eq!(
        *block_sweep::source_block_counts(5).last().unwrap(),
        32 * 995
    );
}

#[test]
fn the_demo_reports_letters_and_every_kernel() {
    let data = english_text(30_000, 11);
    for bins in BINS {
        let opts = HistogramOptions { bins, blocks: None };
        let r = demo::run(&Target::Sim, &data, "test", &opts, |_, _| {}).unwrap();
        assert_eq!(r.histogram, expected(&data, bins));
        assert_eq!(r.runs.len(), HistKernel::ALL.len());
        assert_eq!(r.letters.lowercase.len(), 26);
        assert_eq!(
            r.letters.uppercase[0],
            ('A', expected(&data, bins)[b'A' as usize])
        );
        assert_eq!(
            r.skipped,
            data.iter().filter(|&&b| b as u32 >= bins.count()).count() as u64
        );
        assert!(r.runs.iter().all(|k| k.launch.ms.is_none()) && r.shared_speedup.is_none());
    }
    let opts = HistogramOptions {
        bins: Bins::Ascii,
        blocks: Some(3),
    };
    let r = demo::run(&Target::Sim, &data, "test", &opts, |_, _| {}).unwrap();
    assert!(r.runs.iter().all(|k| k.launch.blocks == 3));
    let zero = HistogramOptions {
        bins: Bins::Ascii,
        blocks: Some(0),
    };
    assert!(demo::run(&Target::Sim, &data, "test", &zero, |_, _| {}).is_err());
}

#[test]
fn bad_bins_and_bad_launches_are_errors() {
    assert!(matches!(Bins::from_count(100), Err(Error::InvalidInput(_))));
    assert_eq!(Bins::from_count(256).unwrap(), Bins::Byte);
    let t = Target::Sim;
    let src = t.upload(&[1u8; 100]).unwrap();
    let lane = |threads: u32, shared: u32| {
        let cfg = LaunchConfig::linear(1, threads).with_shared_bytes(shared);
        HistogramLaunch::new(&t, HistKernel::Lane, &src, 100, Bins::Byte, cfg).map(|_| ())
    };
    assert!(
        matches!(lane(64, 5), Err(Error::InvalidInput(_))),
        "wrong shared memory"
    );
    let big = HistKernel::Lane.shared_bytes(Bins::Byte, 1024);
    assert!(
        matches!(lane(1024, big), Err(Error::InvalidInput(_))),
        "over 48 KiB"
    );
    let cfg = config_for(&t, HistKernel::Warp, Bins::Byte, 101, None).unwrap();
    let long = HistogramLaunch::new(&t, HistKernel::Warp, &src, 101, Bins::Byte, cfg);
    assert!(
        matches!(long, Err(Error::InvalidInput(_))),
        "longer than the buffer"
    );
    for threads in [32, 48, 65] {
        let shared = HistKernel::Pipeline.shared_bytes(Bins::Byte, threads);
        let cfg = LaunchConfig::linear(1, threads).with_shared_bytes(shared);
        let pipe = HistogramLaunch::new(&t, HistKernel::Pipeline, &src, 100, Bins::Byte, cfg);
        assert!(
            matches!(pipe, Err(Error::InvalidInput(_))),
            "a pipeline of {threads} threads"
        );
    }
}
