//! On the GPU: every kernel, small inputs for the sanitizers, a gibibyte of text and of random
//! bytes, the sweep.

use super::*;

#[test]
#[cfg_attr(gridsync_no_driver, ignore = "no NVIDIA driver found at build time")]
fn gpu_every_kernel_counts_like_the_cpu() {
    let gpu = common::gpu();
    for n in [0, 1, 127, 100_003] {
        every_kernel_counts(&gpu, &random_bytes(n), &format!("{n} random bytes"));
    }
    for byte in [b'e', 255] {
        every_kernel_counts(&gpu, &vec![byte; 1_000_003], &format!("1000003 × {byte}"));
    }
    let text = english_text(DEFAULT_TEXT_BYTES, DEFAULT_TEXT_SEED);
    every_kernel_counts(&gpu, &text, "the source-sized text");
    let data = random_bytes(100_003);
    for (blocks, threads) in [(1, 1), (3, 48), (2, 96), (5, 33), (4096, 64)] {
        for kernel in KERNELS {
            let got = count_with(&gpu, kernel, &data, Bins::Byte, (blocks, threads));
            assert_eq!(
                got,
                expected(&data, Bins::Byte),
                "{kernel:?} at {blocks}×{threads}"
            );
        }
    }
    let r = demo::run(&gpu, &text, "test", &HistogramOptions::default(), |_, _| {}).unwrap();
    assert!(
        r.runs
            .iter()
            .all(|k| k.launch.ms.is_some_and(|ms| ms > 0.0))
    );
    assert!(r.shared_speedup.is_some());
}

/// Small enough for `compute-sanitizer --tool racecheck` (and `memcheck`): every kernel, both
/// bin counts, the default grid and a small odd one, on text, random bytes and one byte.
#[test]
#[cfg_attr(gridsync_no_driver, ignore = "no NVIDIA driver found at build time")]
fn gpu_small_inputs_for_the_sanitizers() {
    let gpu = common::gpu();
    let inputs = [
        english_text(65_537, 3),
        random_bytes(40_003),
        vec![b' '; 30_001],
    ];
    for data in &inputs {
        for bins in BINS {
            let want = expected(data, bins);
            for kernel in KERNELS {
                assert_eq!(
                    count(&gpu, kernel, data, bins),
                    want,
                    "{kernel:?}, {bins:?}"
                );
                let odd = count_with(&gpu, kernel, data, bins, (3, 96));
                assert_eq!(odd, want, "{kernel:?} at 3×96, {bins:?}");
            }
        }
    }
}

#[test]
#[cfg_attr(gridsync_no_driver, ignore = "no NVIDIA driver found at build time")]
fn gpu_counts_a_gibibyte_of_text_and_of_random_bytes() {
    let gpu = common::gpu();
    let Target::Gpu(g) = &gpu else { unreachable!() };
    let n = 1usize << 30;
    if let Some(why) = gridsync::runtime::memory::does_not_fit(g, 2 * n as u64).unwrap() {
        eprintln!("skipped: {why}");
        return;
    }
    for data in [english_text(n, DEFAULT_TEXT_SEED), uniform_bytes(n, 1)] {
        let src = gpu.upload(&data).unwrap();
        for bins in BINS {
            let want = histogram_cpu(&data, bins);
            for kernel in KERNELS {
                let cfg = config_for(&gpu, kernel, bins, n, None).unwrap();
                let launch = HistogramLaunch::new(&gpu, kernel, &src, n, bins, cfg).unwrap();
                assert!(launch.run().unwrap() == want, "{kernel:?}, {bins:?}");
            }
        }
        let api = histogram::histogram_of_buffer(&gpu, &src, n, Bins::Byte).unwrap();
        assert!(
            api == histogram_cpu(&data, Bins::Byte),
            "the library's choice"
        );
    }
    // One repeated byte, 1 GiB: the most contention; on 4 × 64 threads each lane counts 4 MiB,
    // so its 16-bit counters are folded 65 times.
    let same = vec![b'e'; n];
    for kernel in [HistKernel::Warp, HistKernel::Vec16, HistKernel::Lane] {
        assert_eq!(
            count(&gpu, kernel, &same, Bins::Ascii)[b'e' as usize],
            n as u64,
            "{kernel:?}"
        );
    }
    assert_eq!(
        count_with(&gpu, HistKernel::Lane, &same, Bins::Byte, (4, 64))[b'e' as usize],
        n as u64
    );
}

#[test]
#[cfg_attr(gridsync_no_driver, ignore = "no NVIDIA driver found at build time")]
fn gpu_sweep_times_and_explains() {
    let gpu = common::gpu();
    let text = english_text(DEFAULT_TEXT_BYTES, DEFAULT_TEXT_SEED);
    let opts = SweepOptions {
        blocks: vec![320, 2560, 31_840],
        trials: 5,
        bins: Bins::Ascii,
    };
    let r = sweep(&gpu, &text, "test", &opts, |_, _| {}).unwrap();
    assert!(
        r.points
            .iter()
            .all(|p| p.global_ms.is_some() && p.shared_ms.is_some() && p.shared_rows_ms.is_some())
    );
    let c = r.contention.expect("timed");
    assert_eq!(c.to, 31_840);
    assert!(c.flush_atomics.1 > c.flush_atomics.0 || c.from == c.to);
    let svg = temp_path("sweep.svg");
    let out = common::cli_ok(&[
        "histogram",
        "--sweep",
        "--sweep-step",
        "200",
        "--sweep-trials",
        "3",
        "--plot",
        svg.to_str().unwrap(),
    ]);
    assert!(String::from_utf8_lossy(&out.stdout).contains("best: histogram_global"));
    parse_svg(&std::fs::read_to_string(&svg).unwrap());
}
