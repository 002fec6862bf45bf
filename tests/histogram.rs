//! Histograms: every kernel against a CPU count on the simulator (odd sizes, bytes >= 128, one
//! repeated byte, odd launch shapes, misaligned input, counters folded before they overflow),
//! the generated text, the library API, the sweep's flush count, the SVG plots, bad input, the
//! CLI — and the GPU at full size, 1 GiB included (ignored where no NVIDIA driver was found at
//! build time).

mod common;

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

#[test]
fn every_kernel_counts_like_the_cpu_at_odd_sizes() {
    for n in [0, 1, 127, 100_003] {
        every_kernel_counts(&Target::Sim, &random_bytes(n), &format!("{n} random bytes"));
    }
}

#[test]
fn bytes_of_128_and_above_are_skipped_by_the_ascii_histogram_only() {
    let all: Vec<u8> = (0..=255u8).cycle().take(256 * 7 + 13).collect();
    let high: Vec<u8> = (128..=255u8).cycle().take(1001).collect();
    for kernel in KERNELS {
        assert_eq!(
            count(&Target::Sim, kernel, &high, Bins::Ascii),
            vec![0; 128],
            "{kernel:?}"
        );
        let byte = count(&Target::Sim, kernel, &high, Bins::Byte);
        assert_eq!(byte.iter().sum::<u64>(), 1001, "{kernel:?}");
        let ascii = count(&Target::Sim, kernel, &all, Bins::Ascii);
        assert_eq!(ascii, expected(&all, Bins::Ascii), "{kernel:?}");
        assert!(ascii.iter().all(|&n| n == 7 || n == 8), "{kernel:?}");
    }
}

#[test]
fn one_repeated_byte_is_counted_exactly() {
    // Maximum contention: every thread on one bin.
    for byte in [b'e', b' ', 0, 127, 128, 255] {
        let data = vec![byte; 100_003];
        every_kernel_counts(&Target::Sim, &data, &format!("100003 × {byte}"));
    }
}

#[test]
fn odd_launch_shapes_count_exactly() {
    // One thread, partial warps, more threads than bytes.
    let data = random_bytes(10_007);
    let t = Target::Sim;
    for (blocks, threads) in [(1, 1), (3, 48), (2, 96), (5, 33), (7, 64)] {
        for bins in BINS {
            let want = expected(&data, bins);
            for kernel in KERNELS {
                let got = count_with(&t, kernel, &data, bins, (blocks, threads));
                assert_eq!(got, want, "{kernel:?} at {blocks}×{threads}, {bins:?}");
            }
        }
    }
}

#[test]
fn misaligned_input_is_counted_exactly_by_the_vector_kernels() {
    let data = random_bytes(1100);
    let t = Target::Sim;
    let src = t.upload(&data).unwrap();
    let out = t.zeros::<u64>(256).unwrap();
    for kernel in [HistKernel::Vec16, HistKernel::Lane] {
        for offset in 0..17 {
            for len in [0, 1, 15, 16, 17, 100, 1000] {
                t.write(&out, &[0; 256]).unwrap();
                let cfg = LaunchConfig::linear(2, 64)
                    .with_shared_bytes(kernel.shared_bytes(Bins::Byte, 64));
                // SAFETY: `offset + len <= data.len()`, so the kernel reads inside `src`; `out`
                // holds 256 zeroed u64; the shared memory is the kernel's.
                unsafe {
                    let p = src.ptr().add(offset).cast_const();
                    let args = (p, len as u64, out.ptr(), 256u32);
                    match kernel {
                        HistKernel::Vec16 => gridsync::launch!(
                            t,
                            gridsync::gpu::lessons::histogram::histogram_vec16,
                            cfg,
                            (args.0, args.1, args.2, args.3)
                        ),
                        _ => gridsync::launch!(
                            t,
                            gridsync::gpu::lessons::histogram::histogram_lane,
                            cfg,
                            (args.0, args.1, args.2, args.3)
                        ),
                    }
                    .unwrap();
                }
                let want = expected(&data[offset..offset + len], Bins::Byte);
                assert_eq!(
                    t.download(&out).unwrap(),
                    want,
                    "{kernel:?}, offset {offset}, len {len}"
                );
            }
        }
    }
}

#[test]
fn lane_counters_are_folded_before_they_overflow() {
    // One thread of one block reads everything: 16-bit counters must be folded every
    // LANE_FLUSH_LOADS loads (four rounds here), and one byte repeated fills one counter fastest.
    let t = Target::Sim;
    for data in [
        vec![b'e'; 250_001],
        vec![200u8; 70_000],
        random_bytes(200_003),
    ] {
        for bins in BINS {
            let got = count_with(&t, HistKernel::Lane, &data, bins, (1, 1));
            assert_eq!(got, expected(&data, bins), "{} bytes, {bins:?}", data.len());
        }
    }
    let data = vec![b' '; 140_000]; // two lanes of 70 000 spaces each
    assert_eq!(
        count_with(&t, HistKernel::Lane, &data, Bins::Ascii, (1, 2)),
        expected(&data, Bins::Ascii)
    );
}

#[test]
fn the_generated_text_is_deterministic_and_english_like() {
    let n = 300_000;
    let a = english_text(n, DEFAULT_TEXT_SEED);
    assert_eq!(a.len(), n);
    assert!(
        a == english_text(n, DEFAULT_TEXT_SEED),
        "same seed, same bytes"
    );
    let chunk = gridsync::inputs::text::CHUNK_BYTES;
    let long = english_text(2 * chunk + 5, DEFAULT_TEXT_SEED);
    assert!(
        long[..chunk] == english_text(chunk, DEFAULT_TEXT_SEED)[..],
        "whole chunks agree"
    );
    assert!(
        a != english_text(n, DEFAULT_TEXT_SEED + 1),
        "another seed, other bytes"
    );
    assert!(std::str::from_utf8(&long).is_ok(), "no split UTF-8");

    let h = expected(&a, Bins::Byte);
    let letter = |c: u8| h[c as usize] + h[c.to_ascii_uppercase() as usize];
    let most = (b'a'..=b'z').max_by_key(|&c| letter(c)).unwrap();
    assert_eq!(most, b'e', "e is the most common letter");
    for c in *b"toahn" {
        assert!(letter(c) > letter(b'z') * 20, "{} is common", c as char);
    }
    let space = h[b' ' as usize] as f64 / n as f64;
    assert!((0.12..0.25).contains(&space), "spaces: {space}");
    assert!(h[b'\n' as usize] > 0 && h[b'.' as usize] > 0 && h[b',' as usize] > 0);
    let upper: u64 = (b'A'..=b'Z').map(|c| h[c as usize]).sum();
    let lower: u64 = (b'a'..=b'z').map(|c| h[c as usize]).sum();
    assert!(
        upper * 50 > lower && upper * 4 < lower,
        "capitals: {upper} of {lower}"
    );
    assert!(h[128..].iter().sum::<u64>() > 0, "some UTF-8 (’)");
    every_kernel_counts(&Target::Sim, &a, "generated text");
}

#[test]
fn uniform_bytes_are_deterministic_and_uniform() {
    let a = uniform_bytes(1_000_003, 42);
    assert!(a == uniform_bytes(1_000_003, 42));
    assert!(
        a[..777_777] == uniform_bytes(777_777, 42)[..],
        "a function of the index only"
    );
    assert!(a != uniform_bytes(1_000_003, 43));
    let h = expected(&a, Bins::Byte);
    let mean = a.len() as f64 / 256.0;
    assert!(
        h.iter()
            .all(|&n| (n as f64 - mean).abs() < 6.0 * mean.sqrt()),
        "{h:?}"
    );
}

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
    assert_eq!(histogram::source_block_counts(5).len(), 198);
    assert_eq!(histogram::source_block_counts(5)[..2], [320, 480]);
    assert_eq!(*histogram::source_block_counts(5).last().unwrap(), 32 * 995);
}

#[test]
fn the_demo_reports_letters_and_every_kernel() {
    let data = english_text(30_000, 11);
    for bins in BINS {
        let opts = HistogramOptions { bins, blocks: None };
        let r = histogram::run(&Target::Sim, &data, "test", &opts, |_, _| {}).unwrap();
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
        assert!(r.runs.iter().all(|k| k.ms.is_none()) && r.shared_speedup.is_none());
    }
    let opts = HistogramOptions {
        bins: Bins::Ascii,
        blocks: Some(3),
    };
    let r = histogram::run(&Target::Sim, &data, "test", &opts, |_, _| {}).unwrap();
    assert!(r.runs.iter().all(|k| k.blocks == 3));
    let zero = HistogramOptions {
        bins: Bins::Ascii,
        blocks: Some(0),
    };
    assert!(histogram::run(&Target::Sim, &data, "test", &zero, |_, _| {}).is_err());
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

#[test]
fn the_pipeline_kernel_refuses_a_shape_without_consumers_through_its_error_word() {
    // Past the host's check, the kernel checks too: one warp has no consumers.
    let t = Target::Sim;
    let src = t.upload(&[7u8; 1000]).unwrap();
    let out = t.zeros::<u64>(256).unwrap();
    let err = t.zeros::<u32>(1).unwrap();
    let cfg = LaunchConfig::linear(2, 32)
        .with_shared_bytes(HistKernel::Pipeline.shared_bytes(Bins::Byte, 32));
    // SAFETY: `src` holds 1000 bytes, `out` 256 zeroed u64, `err` one zeroed u32; the shared
    // memory is the kernel's for 32 threads.
    unsafe {
        gridsync::launch!(
            t,
            gridsync::gpu::lessons::histogram::histogram_pipeline,
            cfg,
            (
                src.ptr().cast_const(),
                1000u64,
                out.ptr(),
                256u32,
                wait_bound(gridsync::gpu::mbarrier::DEFAULT_TIMEOUT_NS),
                err.ptr()
            )
        )
        .unwrap();
    }
    let word = t.download(&err).unwrap()[0];
    assert_eq!(word, gridsync::gpu::pipeline::error_bits::BAD_LAUNCH);
    assert!(
        t.download(&out).unwrap().iter().all(|&n| n == 0),
        "nothing counted"
    );
    assert!(matches!(
        Error::from_pipeline_word("histogram_pipeline", word),
        Err(Error::InvalidInput(_))
    ));
    assert!(matches!(
        Error::from_pipeline_word("histogram_pipeline", 1),
        Err(Error::WaitTimeout(_))
    ));
    assert!(Error::from_pipeline_word("histogram_pipeline", 0).is_ok());
}

#[test]
fn the_pipeline_wraps_its_ring_many_times_at_any_alignment() {
    // One block reads every tile: 13 fills of a 4-stage ring, so every stage is refilled after
    // its consumers released it (the empty barriers' phases 0, 1, 2); two blocks: 7 and 6. The
    // input starts at every offset of a 16-byte boundary: a head, tiles, a short last tile, a tail.
    let stage = gridsync::gpu::lessons::histogram::PIPELINE_STAGE_BYTES as usize;
    let data = random_bytes(12 * stage + 5000 + 16);
    let t = Target::Sim;
    let src = t.upload(&data).unwrap();
    let out = t.zeros::<u64>(256).unwrap();
    let err = t.zeros::<u32>(1).unwrap();
    let cases = [
        (0, 12 * stage + 5000),
        (3, 12 * stage + 4999),
        (15, stage),
        (1, stage + 1),
        (8, 40),
        (5, 0),
        (9, 1),
    ];
    for (offset, len) in cases {
        for (blocks, threads) in [(1, 64), (2, 96)] {
            t.write(&out, &[0; 256]).unwrap();
            let cfg = LaunchConfig::linear(blocks, threads)
                .with_shared_bytes(HistKernel::Pipeline.shared_bytes(Bins::Byte, threads));
            // SAFETY: `offset + len <= data.len()`, so the kernel reads inside `src`; `out`
            // holds 256 zeroed u64, `err` one zeroed u32; the shared memory is the kernel's.
            unsafe {
                let p = src.ptr().add(offset).cast_const();
                gridsync::launch!(
                    t,
                    gridsync::gpu::lessons::histogram::histogram_pipeline,
                    cfg,
                    (
                        p,
                        len as u64,
                        out.ptr(),
                        256u32,
                        wait_bound(gridsync::gpu::mbarrier::DEFAULT_TIMEOUT_NS),
                        err.ptr()
                    )
                )
                .unwrap();
            }
            assert_eq!(t.download(&err).unwrap(), [0], "offset {offset}, len {len}");
            assert_eq!(
                t.download(&out).unwrap(),
                expected(&data[offset..offset + len], Bins::Byte),
                "offset {offset}, len {len}, {blocks}×{threads}"
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

#[test]
fn the_bar_charts_are_well_formed_svg_with_a_bar_per_letter() {
    let data = english_text(10_000, 1);
    let letters = gridsync::histogram::LetterCounts::of(&expected(&data, Bins::Ascii));
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
        color: gridsync::plot::BLUE,
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

fn temp_path(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("gridsync-histogram-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
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

fn ok_json(args: &[&str]) -> serde_json::Value {
    let out = common::cli(args);
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn cli_histogram_on_the_simulator() {
    let v = ok_json(&[
        "histogram",
        "--simulate",
        "--json",
        "--bytes",
        "5000",
        "--bins",
        "256",
    ]);
    let want = expected(&english_text(5000, DEFAULT_TEXT_SEED), Bins::Byte);
    assert_eq!(v["len"], 5000);
    assert_eq!(v["bins"], 256);
    assert_eq!(
        serde_json::from_value::<Vec<u64>>(v["histogram"].clone()).unwrap(),
        want
    );
    assert_eq!(v["runs"].as_array().unwrap().len(), HistKernel::ALL.len());

    let svg = temp_path("letters.svg");
    let file = temp_path("in.txt");
    std::fs::write(&file, b"Hello, World! \xe2\x80\x99 hello").unwrap();
    let out = common::cli(&[
        "histogram",
        "--simulate",
        "--input",
        file.to_str().unwrap(),
        "--plot",
        svg.to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("histogram_lane") && text.contains("3 bytes have no bin"),
        "{text}"
    );
    let svg = std::fs::read_to_string(&svg).unwrap();
    parse_svg(&svg);
    assert_eq!(svg.matches("class=\"bar\"").count(), 52);

    let written = temp_path("text.txt");
    let out = common::cli(&[
        "histogram",
        "--write-text",
        written.to_str().unwrap(),
        "--bytes",
        "12345",
        "--seed",
        "9",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(std::fs::read(&written).unwrap(), english_text(12345, 9));
}

#[test]
fn cli_rejects_bad_input_without_panicking() {
    for args in [
        &["histogram", "--simulate", "--input", "/nonexistent/x.txt"][..],
        &["histogram", "--simulate", "--bins", "100"],
        &["histogram", "--simulate", "--blocks", "0"],
        &["histogram", "--simulate", "--sweep"],
        &[
            "histogram",
            "--simulate",
            "--bytes",
            "100",
            "--plot",
            "/tmp/letters.png",
        ],
    ] {
        let out = common::cli(args);
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.starts_with("gridsync: ") && !err.contains("panicked"),
            "{args:?}: {err}"
        );
    }
}

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
    let r = histogram::run(&gpu, &text, "test", &HistogramOptions::default(), |_, _| {}).unwrap();
    assert!(r.runs.iter().all(|k| k.ms.is_some_and(|ms| ms > 0.0)));
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
    let out = common::cli(&[
        "histogram",
        "--sweep",
        "--sweep-step",
        "200",
        "--sweep-trials",
        "3",
        "--plot",
        svg.to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("best: histogram_global"));
    parse_svg(&std::fs::read_to_string(&svg).unwrap());
}

/// A `.npy` file's `u64` values (format 1.0, dtype `<u8`, one dimension), checked as it goes.
fn read_npy_u64(path: &std::path::Path) -> Vec<u64> {
    let b = std::fs::read(path).unwrap();
    assert_eq!(&b[..8], b"\x93NUMPY\x01\x00");
    let header_len = u16::from_le_bytes([b[8], b[9]]) as usize;
    let header = std::str::from_utf8(&b[10..10 + header_len]).unwrap();
    assert!(header.contains("'descr': '<u8'"), "{header}");
    let values: Vec<u64> = b[10 + header_len..]
        .chunks_exact(8)
        .map(|c| u64::from_le_bytes(c.try_into().unwrap()))
        .collect();
    assert!(
        header.contains(&format!("'shape': ({},)", values.len())),
        "{header}"
    );
    values
}

/// A CSV file's counts (`bin,count`, then every bin in order).
fn read_csv_counts(path: &std::path::Path) -> Vec<u64> {
    let text = std::fs::read_to_string(path).unwrap();
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some("bin,count"));
    lines
        .enumerate()
        .map(|(i, l)| {
            let (bin, count) = l.split_once(',').unwrap();
            assert_eq!(bin.parse::<usize>().unwrap(), i);
            count.parse().unwrap()
        })
        .collect()
}

#[test]
fn every_histogram_writes_its_counts_as_csv_or_npy() {
    let mut rng = common::rng();
    // Random bytes of an odd length (some ≥ 128), and the same bytes as 16-bit values.
    let bytes: Vec<u8> = (0..20_011).map(|_| rng.random()).collect();
    let file = temp_path("counts-in.bin");
    std::fs::write(&file, &bytes[..20_010]).unwrap();
    let f = file.to_str().unwrap();
    for (bins, name, bin_kind) in [
        ("256", "c256.csv", Bins::Byte),
        ("128", "c128.npy", Bins::Ascii),
    ] {
        let out = temp_path(name);
        let o = out.to_str().unwrap();
        ok_json(&[
            "histogram",
            "--simulate",
            "--json",
            "--bins",
            bins,
            "--input",
            f,
            "--output",
            o,
        ]);
        let got = if name.ends_with(".npy") {
            read_npy_u64(&out)
        } else {
            read_csv_counts(&out)
        };
        assert_eq!(got, expected(&bytes[..20_010], bin_kind), "{name}");
    }
    let out = temp_path("c65536.npy");
    let v = ok_json(&[
        "histogram",
        "--simulate",
        "--json",
        "--bins",
        "65536",
        "--input",
        f,
        "--output",
        out.to_str().unwrap(),
    ]);
    let words: Vec<u16> = bytes[..20_010]
        .chunks_exact(2)
        .map(|w| u16::from_le_bytes([w[0], w[1]]))
        .collect();
    let want = gridsync::histogram::histogram_u16_cpu(&words);
    assert_eq!(read_npy_u64(&out), want);
    // The JSON holds the counts too, as the byte histograms' does.
    assert_eq!(
        serde_json::from_value::<Vec<u64>>(v["histogram"].clone()).unwrap(),
        want
    );
    // A file in a directory that is not there is refused before anything runs.
    let out = common::cli(&[
        "histogram",
        "--simulate",
        "--input",
        f,
        "--output",
        "/nonexistent-gridsync/counts.csv",
    ]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("no directory"));
}
