//! Reductions: every kernel of the `f32` progression and every typed kernel against the CPU on the
//! simulator (sizes 0, 1, 127, 128, 129, 30 011; exact on integer-valued floats, within the
//! bound on random data), bit-identical repeated runs of the single-pass kernels, exact integer
//! sums through wrap-around, min/max with NaN, odd launch shapes, misaligned input, the library
//! API, bad input — and the GPU at the CUDA book's size and at 1 GiB (ignored where no NVIDIA
//! driver was found at build time). The command: `cli/tests/`.

mod common;

use gridsync::gpu::lessons::reduce::{
    self as r, Element, REDUCE_PIPELINE_STAGE_BYTES, Reduction, SumF32InF64, SumI32,
    last_block_shared_bytes, reduce_pipeline_shared_bytes,
};
use gridsync::gpu::vector::Vector16;
use gridsync::reduce::{
    self, Accumulate, DeviceReduction, ReduceOptions, SinglePass, SinglePassKernel, Step,
    StepLaunch, sum_abs_cpu, sum_cpu,
};
use gridsync::{Error, LaunchConfig, Target};
use rand::Rng;

/// The last: many elements per thread of the simulator's grid-stride grids (4 blocks), the
/// book's kernel (a thread per element) in 8 launches, not a multiple of any block.
const SIZES: [usize; 6] = [0, 1, 127, 128, 129, 30_011];
const U32: f64 = 1.0 / (1u64 << 24) as f64;

fn random_f32(n: usize, lo: f32, hi: f32) -> Vec<f32> {
    let mut rng = common::rng();
    (0..n).map(|_| rng.random_range(lo..hi)).collect()
}

/// Whole numbers in [-8, 8] as floats: every partial sum of up to 10⁶ of them is exact in `f32`,
/// so every kernel, whatever its order of additions, must give the CPU's sum exactly.
fn integer_valued(n: usize) -> Vec<f32> {
    let mut rng = common::rng();
    (0..n).map(|_| rng.random_range(-8i32..=8) as f32).collect()
}

/// One step over `data`: its result and its launch shape.
fn step_sum(t: &Target, step: Step, acc: Accumulate, data: &[f32]) -> (f64, LaunchConfig) {
    let x = t.upload(data).unwrap();
    let launch = StepLaunch::new(t, step, acc, data.len(), None).unwrap();
    (launch.run(&x, data.len()).unwrap(), launch.config())
}

/// Every (step, accumulation) pair that exists.
fn all_steps() -> Vec<(Step, Accumulate)> {
    Step::ALL
        .into_iter()
        .flat_map(|s| {
            let accs: &[Accumulate] = if s.takes_accumulate() {
                &Accumulate::ALL
            } else {
                &[Accumulate::F32]
            };
            accs.iter().map(move |&a| (s, a))
        })
        .collect()
}

/// The rounding bound of a float sum computed as a tree of depth `L` in `f32`: `L·2⁻²⁴·Σ|xᵢ|`,
/// with `L` bounded by the elements per thread, the blocks (a chain of atomics) and 64 levels.
fn f32_bound(cfg: &LaunchConfig, n: usize, abs_sum: f64) -> f64 {
    let per_thread = n as f64 / cfg.threads().max(1) as f64;
    (per_thread + cfg.grid.x as f64 + 64.0) * U32 * abs_sum
}

#[test]
fn every_step_is_exact_on_integer_valued_floats() {
    for n in SIZES {
        let data = integer_valued(n);
        let want: f64 = data.iter().map(|&x| x as f64).sum();
        for (step, acc) in all_steps() {
            let (got, _) = step_sum(&Target::Sim, step, acc, &data);
            assert_eq!(got, want, "{step:?} {acc:?}, n = {n}");
        }
    }
}

#[test]
fn every_step_is_within_its_bound_on_random_data() {
    for n in SIZES {
        let data = random_f32(n, -1.0, 1.0);
        let (want, abs_sum) = (sum_cpu(&data), sum_abs_cpu(&data));
        for (step, acc) in all_steps() {
            if step == Step::Atomic && n > 4096 {
                // One simulated thread per element, 8 launches at 30 011: the exact test
                // above runs the book's kernel at this size; here it runs at the small sizes.
                continue;
            }
            let (got, cfg) = step_sum(&Target::Sim, step, acc, &data);
            let err = (got - want).abs();
            let bound = match (step.takes_accumulate(), acc) {
                (true, Accumulate::F64) => 1e-12 * abs_sum,
                (true, Accumulate::Kahan) => U32 * want.abs() + 1e-9 * abs_sum,
                _ => f32_bound(&cfg, n, abs_sum),
            };
            assert!(
                err <= bound,
                "{step:?} {acc:?}, n = {n}: {got} vs {want}, error {err:e} > {bound:e}"
            );
        }
    }
}

#[test]
fn the_single_pass_kernels_give_the_same_bits_every_run() {
    let data = random_f32(30_011, -1.0, 1.0);
    let t = Target::Sim;
    let x = t.upload(&data).unwrap();
    for (step, acc) in all_steps().into_iter().filter(|(s, _)| s.deterministic()) {
        let launch = StepLaunch::new(&t, step, acc, data.len(), None).unwrap();
        let runs: Vec<u64> = (0..3)
            .map(|_| launch.run(&x, data.len()).unwrap().to_bits())
            .collect();
        assert!(
            runs.iter().all(|&b| b == runs[0]),
            "{step:?} {acc:?}: {runs:x?}"
        );
    }
    // The same through the API, which allocates afresh on every call.
    let sums: Vec<u32> = (0..3)
        .map(|_| {
            reduce::sum_with(&t, &data, Accumulate::F32)
                .map(|s| (s as f32).to_bits())
                .unwrap()
        })
        .collect();
    assert!(sums.iter().all(|&b| b == sums[0]), "{sums:x?}");
}

#[test]
fn typed_kernels_match_the_cpu_at_every_size() {
    let t = Target::Sim;
    let mut rng = common::rng();
    for n in SIZES {
        let ints: Vec<i32> = (0..n).map(|_| rng.random()).collect();
        let want = ints.iter().fold(0i32, |s, &x| s.wrapping_add(x));
        assert_eq!(
            reduce::sum_i32(&t, &ints).unwrap(),
            want,
            "sum_i32, n = {n}"
        );
        let words: Vec<u64> = (0..n).map(|_| rng.random()).collect();
        let want = words.iter().fold(0u64, |s, &x| s.wrapping_add(x));
        assert_eq!(
            reduce::sum_u64(&t, &words).unwrap(),
            want,
            "sum_u64, n = {n}"
        );
        let wide: Vec<f64> = (0..n).map(|_| rng.random_range(-1.0..1.0)).collect();
        let got = reduce::sum_f64(&t, &wide).unwrap();
        let abs: f64 = wide.iter().map(|x| x.abs()).sum();
        assert!(
            (got - sum_cpu(&wide)).abs() <= 1e-13 * abs.max(1.0),
            "sum_f64, n = {n}"
        );
        let floats = random_f32(n, -1e3, 1e3);
        let want = sum_cpu(&floats);
        let got = reduce::sum(&t, &floats).unwrap();
        assert!((got as f64 - want).abs() <= U32 * want.abs() + 1e-12 * sum_abs_cpu(&floats));
        if n == 0 {
            continue;
        }
        assert_eq!(
            reduce::min_i32(&t, &ints).unwrap(),
            *ints.iter().min().unwrap()
        );
        assert_eq!(
            reduce::max_i32(&t, &ints).unwrap(),
            *ints.iter().max().unwrap()
        );
        let lo = floats.iter().copied().fold(f32::INFINITY, f32::min);
        let hi = floats.iter().copied().fold(f32::NEG_INFINITY, f32::max);
        assert_eq!(reduce::min(&t, &floats).unwrap(), lo, "min, n = {n}");
        assert_eq!(reduce::max(&t, &floats).unwrap(), hi, "max, n = {n}");
    }
}

#[test]
fn integer_sums_wrap_exactly() {
    let t = Target::Sim;
    let big = vec![i32::MAX; 5000];
    let want = (i32::MAX as i64 * 5000).rem_euclid(1 << 32) as u32 as i32;
    assert_eq!(reduce::sum_i32(&t, &big).unwrap(), want);
    assert_eq!(reduce::sum_i32(&t, &[i32::MIN, -1]).unwrap(), i32::MAX);
    let words = vec![u64::MAX; 3001];
    assert_eq!(reduce::sum_u64(&t, &words).unwrap(), 3001u64.wrapping_neg());
    // The demo's derived integers wrap too (1.23 · 2³⁰ · 10⁴ > 2³¹).
    let derived = reduce::derived_i32(&reduce::book_input(10_000));
    let want = derived.iter().fold(0i32, |s, &x| s.wrapping_add(x));
    assert_eq!(reduce::sum_i32(&t, &derived).unwrap(), want);
}

#[test]
fn min_and_max_skip_nan_and_fail_on_empty_input() {
    let t = Target::Sim;
    let mut data = random_f32(3000, -5.0, 5.0);
    for k in (0..data.len()).step_by(7) {
        data[k] = f32::NAN;
    }
    data[1500] = -7.5;
    data[2999] = 9.25;
    assert_eq!(reduce::min(&t, &data).unwrap(), -7.5);
    assert_eq!(reduce::max(&t, &data).unwrap(), 9.25);
    data[10] = f32::NEG_INFINITY;
    assert_eq!(reduce::min(&t, &data).unwrap(), f32::NEG_INFINITY);
    assert!(reduce::min(&t, &[f32::NAN; 300]).unwrap().is_nan());
    assert_eq!(reduce::max(&t, &[f32::NAN, 2.0, f32::NAN]).unwrap(), 2.0);
    for e in [
        reduce::min(&t, &[]).err(),
        reduce::max(&t, &[]).err(),
        reduce::min_i32(&t, &[]).err(),
        reduce::max_i32(&t, &[]).err(),
    ] {
        assert!(
            matches!(e, Some(Error::InvalidInput(ref why)) if why.contains("empty")),
            "{e:?}"
        );
    }
    assert_eq!(reduce::sum(&t, &[]).unwrap(), 0.0);
    assert_eq!(reduce::sum_i32(&t, &[]).unwrap(), 0);
    // A NaN poisons a sum; an infinity survives compensation.
    assert!(reduce::sum(&t, &[1.0, f32::NAN, 2.0]).unwrap().is_nan());
    let inf = [1.0, f32::INFINITY, 2.0];
    for acc in Accumulate::ALL {
        assert_eq!(
            reduce::sum_with(&t, &inf, acc).unwrap(),
            f64::INFINITY,
            "{acc:?}"
        );
    }
}

/// Runs `R`'s `kernel` over `data[offset..offset + len]` with an explicit launch shape.
fn raw<R: DeviceReduction>(
    t: &Target,
    kernel: gridsync::gpu::Kernel,
    data: &[R::Item],
    offset: usize,
    len: usize,
    blocks: u32,
    threads: u32,
) -> R::Out {
    let x = t.upload(data).unwrap();
    let words = size_of::<R::Acc>().div_ceil(8) * blocks as usize;
    let partials = t.zeros::<u64>(words).unwrap();
    let count = t.zeros::<u32>(1).unwrap();
    let result = t.zeros::<R::Out>(1).unwrap();
    let err = t.zeros::<u32>(1).unwrap();
    let shared = if Some(kernel) == R::PIPELINE {
        reduce_pipeline_shared_bytes::<R::Acc>(threads)
    } else {
        last_block_shared_bytes::<R::Acc>(threads)
    };
    let cfg = LaunchConfig::linear(blocks, threads).with_shared_bytes(shared);
    assert!(offset + len <= data.len());
    // SAFETY: the kernel reads `data[offset..offset + len]` inside `x`; `partials` holds `blocks`
    // accumulators (8-byte aligned), `count` a zeroed u32, `result` one value, `err` a zeroed
    // u32; the shared memory is what the kernel asks for.
    unsafe {
        let args = (
            x.ptr().add(offset).cast_const(),
            len as u64,
            partials.ptr().cast::<R::Acc>(),
            count.ptr(),
            result.ptr(),
        );
        R::launch(t, kernel, cfg, args, err.ptr()).unwrap();
    }
    assert_eq!(
        t.download(&err).unwrap()[0],
        0,
        "{}: error word",
        kernel.name()
    );
    assert_eq!(
        t.download(&count).unwrap()[0],
        0,
        "the counter was not reset"
    );
    t.download(&result).unwrap()[0]
}

#[test]
fn odd_launch_shapes_reduce_exactly() {
    // Partial warps (48, 33 threads), one thread, a block larger than the input.
    let t = Target::Sim;
    let data = integer_valued(1003);
    let want: f64 = data.iter().map(|&x| x as f64).sum();
    let ints: Vec<i32> = data.iter().map(|&x| x as i32 * 1_000_003).collect();
    let want_i = ints.iter().fold(0i32, |s, &x| s.wrapping_add(x));
    for (blocks, threads) in [(3, 48), (1, 1), (2, 1000), (5, 33)] {
        for k in [SumF32InF64::VEC, SumF32InF64::LAST_BLOCK.unwrap()] {
            let got = raw::<SumF32InF64>(&t, k, &data, 0, data.len(), blocks, threads);
            assert_eq!(got, want, "{} at {blocks}×{threads}", k.name());
        }
        let got = raw::<SumI32>(&t, SumI32::VEC, &ints, 0, ints.len(), blocks, threads);
        assert_eq!(got, want_i, "sum_i32 at {blocks}×{threads}");
        let got = raw::<r::MinF32>(&t, r::MinF32::VEC, &data, 0, data.len(), blocks, threads);
        assert_eq!(got, -8.0, "min_f32 at {blocks}×{threads}");
    }
}

#[test]
fn misaligned_input_is_reduced_exactly_by_the_vector_kernels() {
    let t = Target::Sim;
    let data = integer_valued(1000 + 4);
    let wide: Vec<f64> = data.iter().map(|&x| x as f64).collect();
    for offset in 0..4 {
        for len in [0, 1, 2, 3, 5, 8, 1000] {
            let want: f64 = wide[offset..offset + len].iter().sum();
            let got = raw::<SumF32InF64>(&t, SumF32InF64::VEC, &data, offset, len, 2, 64);
            assert_eq!(got, want, "f32, offset {offset}, len {len}");
            let got = raw::<r::SumF64>(&t, r::SumF64::VEC, &wide, offset, len, 2, 64);
            assert_eq!(got, want, "f64, offset {offset}, len {len}");
        }
    }
    assert_eq!(<<f32 as Element>::Vec16 as Vector16>::LANES, 4);
    assert_eq!(<<u64 as Element>::Vec16 as Vector16>::LANES, 2);
}

#[test]
fn the_pipelined_kernels_wrap_their_ring_at_any_alignment_and_shape() {
    // 8 KiB stages of 2048 floats: 13 tiles, so one block refills each of its four stages three
    // times (every empty-barrier phase waited for), two blocks about half as often; a short last
    // tile, a head at every offset, a tail; exact on integer-valued floats in f64.
    let t = Target::Sim;
    let per_stage = REDUCE_PIPELINE_STAGE_BYTES as usize / 4;
    let data = integer_valued(12 * per_stage + 1003 + 4);
    let wide: Vec<f64> = data.iter().map(|&x| x as f64).collect();
    // Every offset and length meets every shape over the grid, each pair of them once: the
    // shape rotates with the offset and the length (a full product cost 22 s of CI).
    let shapes = [(1, 64), (2, 96), (3, 288)];
    for offset in 0..4 {
        for (i, len) in [0, 1, 5, per_stage, 12 * per_stage + 1003]
            .into_iter()
            .enumerate()
        {
            let want: f64 = wide[offset..offset + len].iter().sum();
            let (blocks, threads) = shapes[(offset + i) % shapes.len()];
            let k = SumF32InF64::PIPELINE.unwrap();
            let got = raw::<SumF32InF64>(&t, k, &data, offset, len, blocks, threads);
            assert_eq!(got, want, "offset {offset}, len {len}, {blocks}×{threads}");
            let k = r::SumF32::PIPELINE.unwrap();
            let got = raw::<r::SumF32>(&t, k, &data, offset, len, 2, 64);
            assert_eq!(got as f64, want, "f32, offset {offset}, len {len}");
        }
    }
}

#[test]
fn the_pipelined_kernels_refuse_a_block_without_consumers() {
    let t = Target::Sim;
    let x = t.upload(&[1.0f32; 100]).unwrap();
    let partials = t.zeros::<u64>(2).unwrap();
    let count = t.zeros::<u32>(1).unwrap();
    let result = t.zeros::<f64>(1).unwrap();
    let err = t.zeros::<u32>(1).unwrap();
    for threads in [32, 48] {
        t.write(&err, &[0]).unwrap();
        let cfg = LaunchConfig::linear(2, threads)
            .with_shared_bytes(reduce_pipeline_shared_bytes::<f64>(threads));
        // SAFETY: `x` holds 100 floats, `partials` two f64, `count` and `err` a zeroed u32,
        // `result` one f64; the shared memory is the kernel's.
        unsafe {
            let args = (
                x.ptr().cast_const(),
                100u64,
                partials.ptr().cast(),
                count.ptr(),
                result.ptr(),
            );
            SumF32InF64::launch(&t, SumF32InF64::PIPELINE.unwrap(), cfg, args, err.ptr()).unwrap();
        }
        let word = t.download(&err).unwrap()[0];
        assert_eq!(
            word,
            gridsync::gpu::pipeline::error_bits::BAD_LAUNCH,
            "{threads} threads"
        );
        assert_eq!(t.download(&count).unwrap(), [0], "no block took a ticket");
    }
}

#[test]
fn neumaier_keeps_what_f32_loses() {
    // 1 followed by 10⁴ × 2⁻²⁵: in f32 each small term rounds away; compensated, it is kept.
    let mut data = vec![1.0f32];
    data.extend(std::iter::repeat_n(2f32.powi(-25), 10_000));
    let t = Target::Sim;
    let plain = reduce::sum_with(&t, &data, Accumulate::F32).unwrap();
    let kahan = reduce::sum_with(&t, &data, Accumulate::Kahan).unwrap();
    let exact = 1.0 + 10_000.0 * 2f64.powi(-25);
    assert!((kahan - exact).abs() <= U32 * exact, "{kahan} vs {exact}");
    assert!((kahan - exact).abs() <= (plain - exact).abs());
    // One step: the rounded sum drops 1e-8 entirely, and the compensation keeps it.
    let acc = r::SumF32Kahan::combine(r::SumF32Kahan::lift(1.0), r::SumF32Kahan::lift(1e-8));
    assert_eq!((acc.sum, acc.c), (1.0, 1e-8));
}

#[test]
fn the_demo_reports_every_step_and_every_type() {
    let data = reduce::book_input(2000);
    for acc in Accumulate::ALL {
        // The typed kernels do not depend on the accumulation: run them (and repeat) once.
        let types = acc == Accumulate::F32;
        let opts = ReduceOptions {
            accumulate: acc,
            types,
            repeats: if types { 3 } else { 1 },
        };
        let rep = reduce::run(&Target::Sim, &data, "test", &opts, |_, _| {}).unwrap();
        assert_eq!(rep.runs.len(), Step::ALL.len());
        assert_eq!(rep.types.len(), if types { 7 } else { 0 });
        for k in &rep.runs {
            assert!(k.rel_error < 1e-5, "{}: {}", k.name, k.rel_error);
            assert!(k.launch.ms.is_none(), "the simulator is not timed");
            if k.deterministic_by_design {
                assert!(k.same_bits);
            }
        }
        assert!(
            rep.types.iter().all(|t| t.rel_error < 1e-12),
            "{:?}",
            rep.types
        );
    }
    let none = ReduceOptions {
        repeats: 0,
        ..Default::default()
    };
    assert!(matches!(
        reduce::run(&Target::Sim, &data, "t", &none, |_, _| {}),
        Err(Error::InvalidInput(_))
    ));
    let p = SinglePass::<r::SumF64>::new(&Target::Sim, SinglePassKernel::LastBlock, 10, None);
    assert!(
        matches!(p, Err(Error::InvalidInput(_))),
        "f64 has no scalar kernel"
    );
}

// ---- GPU ----

#[test]
#[cfg_attr(gridsync_no_driver, ignore = "no NVIDIA driver found at build time")]
fn gpu_every_step_at_odd_sizes() {
    let gpu = common::gpu();
    for n in SIZES {
        let data = integer_valued(n);
        let want: f64 = data.iter().map(|&x| x as f64).sum();
        for (step, acc) in all_steps() {
            assert_eq!(
                step_sum(&gpu, step, acc, &data).0,
                want,
                "{step:?} {acc:?}, n = {n}"
            );
        }
        let data = random_f32(n, -1.0, 1.0);
        let (want, abs_sum) = (sum_cpu(&data), sum_abs_cpu(&data));
        for (step, acc) in all_steps() {
            let (got, cfg) = step_sum(&gpu, step, acc, &data);
            let bound = f32_bound(&cfg, n, abs_sum);
            assert!(
                (got - want).abs() <= bound,
                "{step:?} {acc:?}, n = {n}: {got} vs {want}"
            );
        }
        if n > 0 {
            let ints: Vec<i32> = data.iter().map(|&x| (x * 2e9) as i32).collect();
            let want = ints.iter().fold(0i32, |s, &x| s.wrapping_add(x));
            assert_eq!(reduce::sum_i32(&gpu, &ints).unwrap(), want);
            assert_eq!(
                reduce::min_i32(&gpu, &ints).unwrap(),
                *ints.iter().min().unwrap()
            );
            let hi = data.iter().copied().fold(f32::NEG_INFINITY, f32::max);
            assert_eq!(reduce::max(&gpu, &data).unwrap(), hi);
        }
    }
}

#[test]
#[cfg_attr(gridsync_no_driver, ignore = "no NVIDIA driver found at build time")]
fn gpu_the_books_workload() {
    let gpu = common::gpu();
    let n = reduce::DEFAULT_LEN;
    let data = reduce::book_input(n);
    let exact = reduce::BOOK_VALUE as f64 * n as f64;
    let x = gpu.upload(&data).unwrap();
    for (step, acc) in all_steps() {
        let launch = StepLaunch::new(&gpu, step, acc, n, None).unwrap();
        let runs: Vec<f64> = (0..3).map(|_| launch.run(&x, n).unwrap()).collect();
        let rel = (runs[0] - exact).abs() / exact;
        eprintln!(
            "{}: {} (rel. error {rel:.2e})",
            launch.kernel().name(),
            runs[0]
        );
        if step.deterministic() {
            assert!(
                runs.iter().all(|v| v.to_bits() == runs[0].to_bits()),
                "{runs:?}"
            );
        }
        let limit = match (step, acc) {
            (Step::Atomic | Step::Warp, _) => continue, // float atomics: reported, not bounded
            (Step::LastBlock, Accumulate::F32) => 1e-5, // 370 additions per thread in f32
            _ => 1e-6,
        };
        assert!(
            rel <= limit,
            "{step:?} {acc:?}: rel. error {rel:e} > {limit:e}"
        );
    }
    let s = reduce::sum(&gpu, &data).unwrap();
    assert_eq!(s, exact as f32, "the correctly rounded sum");
    assert_eq!(reduce::min(&gpu, &data).unwrap(), reduce::BOOK_VALUE);
}

#[test]
#[cfg_attr(gridsync_no_driver, ignore = "no NVIDIA driver found at build time")]
fn gpu_one_gibibyte() {
    let gpu = common::gpu();
    let n = (1usize << 30) / 4;
    let data = reduce::random_input(n, common::seed(), true);
    let (want, abs_sum) = (sum_cpu(&data), sum_abs_cpu(&data));
    for acc in Accumulate::ALL {
        let got = reduce::sum_with(&gpu, &data, acc).unwrap();
        let bound = match acc {
            Accumulate::F32 => 2000.0 * U32 * abs_sum,
            _ => U32 * want.abs() + 1e-9 * abs_sum,
        };
        assert!((got - want).abs() <= bound, "{acc:?}: {got} vs {want}");
    }
    let lo = data.iter().copied().fold(f32::INFINITY, f32::min);
    assert_eq!(reduce::min(&gpu, &data).unwrap(), lo);
    let ints = reduce::derived_i32(&data);
    let want = ints.iter().fold(0i32, |s, &x| s.wrapping_add(x));
    assert_eq!(reduce::sum_i32(&gpu, &ints).unwrap(), want);
    let rep = reduce::run(&gpu, &data, "1 GiB", &ReduceOptions::default(), |_, _| {}).unwrap();
    assert!(
        rep.runs
            .iter()
            .all(|k| k.launch.ms.is_some_and(|ms| ms > 0.0))
    );
}
