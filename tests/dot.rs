//! dot: every kernel against a float64 dot on the simulator (odd sizes, the source's data, odd
//! launch shapes, misaligned arrays) — and the GPU at full size (ignored where no NVIDIA driver
//! was found at build time). The command: `cli/tests/`.

mod common;

use gridsync::dot::{self, DotKernel, DotLaunch, config_for, dot_cpu, source_data};
use gridsync::gpu::block_reduce::block_reduce_shared_bytes;
use gridsync::{Error, LaunchConfig, Target};
use rand::Rng;

/// The dot the tests trust: float64, sequential, and `Σ|a·b|`.
fn exact(a: &[f32], b: &[f32]) -> (f64, f64) {
    a.iter().zip(b).fold((0.0, 0.0), |(s, m), (&x, &y)| {
        let p = x as f64 * y as f64;
        (s + p, m + p.abs())
    })
}

/// Asserts `got` is within `1e-5 · Σ|a·b|` of the float64 dot: ten times tighter than the
/// library's own check, which must also hold at a billion elements.
fn assert_close(got: f64, a: &[f32], b: &[f32], what: &str) {
    let (dot, sum_abs) = exact(a, b);
    let bound = 1e-5 * sum_abs;
    assert!(
        (got - dot).abs() <= bound,
        "{what}: {got} vs {dot} (bound {bound:e})"
    );
}

fn random_pair(n: usize) -> (Vec<f32>, Vec<f32>) {
    let mut rng = common::rng();
    let mut v = || {
        (0..n)
            .map(|_| rng.random_range(-1.0f32..1.0))
            .collect::<Vec<_>>()
    };
    (v(), v())
}

fn run_kernel(target: &Target, kernel: DotKernel, a: &[f32], b: &[f32]) -> f64 {
    let (da, db) = (target.upload(a).unwrap(), target.upload(b).unwrap());
    let cfg = config_for(target, kernel, a.len(), None).unwrap();
    let launch = DotLaunch::new(target, kernel, &da, &db, cfg).unwrap();
    launch.run_timed(None).unwrap().0
}

#[test]
fn every_kernel_matches_the_cpu_at_odd_sizes() {
    for n in [0, 1, 31, 33, 1000 + 3] {
        let (a, b) = random_pair(n);
        let cpu = dot_cpu(&a, &b);
        let (want, sum_abs) = exact(&a, &b);
        assert!(
            (cpu.dot - want).abs() <= 1e-12 * sum_abs.max(1.0),
            "CPU reference"
        );
        for kernel in DotKernel::ALL {
            let got = run_kernel(&Target::Sim, kernel, &a, &b);
            assert_close(got, &a, &b, &format!("{kernel:?}, n = {n}"));
        }
    }
}

#[test]
fn the_source_data_gives_one() {
    let (a, b) = source_data(10_000);
    for kernel in DotKernel::ALL {
        let got = run_kernel(&Target::Sim, kernel, &a, &b);
        assert!((got - 1.0).abs() < 1e-5, "{kernel:?}: {got}");
    }
}

#[test]
fn odd_launch_shapes_sum_exactly() {
    // dot_vec4 takes any block size (partial warps, one thread); the source kernels need a
    // power of two, as their tree does.
    let (a, b) = random_pair(1003);
    let t = Target::Sim;
    let (da, db) = (t.upload(&a).unwrap(), t.upload(&b).unwrap());
    for (blocks, threads) in [(3, 48), (1, 1), (2, 1000), (5, 33)] {
        let cfg = LaunchConfig::linear(blocks, threads)
            .with_shared_bytes(block_reduce_shared_bytes::<f32>(threads));
        let launch = DotLaunch::new(&t, DotKernel::Vec4, &da, &db, cfg).unwrap();
        let got = launch.run_timed(None).unwrap().0;
        assert_close(got, &a, &b, &format!("dot_vec4 at {blocks}×{threads}"));
    }
    for (blocks, threads) in [(3, 64), (1, 1), (7, 512)] {
        for kernel in [DotKernel::Partial, DotKernel::Mutex, DotKernel::Atomic] {
            let cfg = LaunchConfig::linear(blocks, threads).with_shared_bytes(4 * threads);
            let launch = DotLaunch::new(&t, kernel, &da, &db, cfg).unwrap();
            let got = launch.run_timed(None).unwrap().0;
            assert_close(got, &a, &b, &format!("{kernel:?} at {blocks}×{threads}"));
        }
    }
}

#[test]
fn misaligned_arrays_are_summed_exactly_by_the_vector_kernel() {
    let (a, b) = random_pair(1003 + 3);
    let t = Target::Sim;
    let (da, db, c) = (
        t.upload(&a).unwrap(),
        t.upload(&b).unwrap(),
        t.zeros::<f32>(1).unwrap(),
    );
    let cfg = LaunchConfig::linear(2, 64).with_shared_bytes(block_reduce_shared_bytes::<f32>(64));
    // Equal offsets share the vector body; unequal ones fall back to scalar loads.
    for (oa, ob) in [(0, 0), (1, 1), (2, 2), (3, 3), (0, 1), (1, 3), (2, 0)] {
        for len in [0, 1, 3, 4, 5, 9, 1000] {
            t.write(&c, &[0.0]).unwrap();
            // SAFETY: `offset + len <= 1006` for both arrays, so the kernel reads inside them;
            // `c` is one float; the shared memory is what the block reduction needs.
            unsafe {
                let (pa, pb) = (da.ptr().add(oa).cast_const(), db.ptr().add(ob).cast_const());
                gridsync::launch!(
                    t,
                    gridsync::gpu::lessons::dot::dot_vec4,
                    cfg,
                    (pa, pb, len as u64, c.ptr())
                )
                .unwrap();
            }
            let got = t.download(&c).unwrap()[0] as f64;
            let (sa, sb) = (&a[oa..oa + len], &b[ob..ob + len]);
            assert_close(got, sa, sb, &format!("offsets {oa}/{ob}, len {len}"));
        }
    }
}

#[test]
fn the_demo_reports_every_kernel_and_the_check_can_fail() {
    let (a, b) = random_pair(1003);
    let r = dot::run(&Target::Sim, &a, &b, "test", |_, _| {}).unwrap();
    assert_eq!(r.runs.len(), DotKernel::ALL.len());
    for k in &r.runs {
        assert_close(k.result, &a, &b, k.name);
        assert!(k.rel_error.is_finite() && k.launch.ms.is_none());
    }
    let cpu = dot_cpu(&a, &b);
    let off = cpu.dot + 2.0 * dot::TOLERANCE * cpu.sum_abs;
    assert!(matches!(
        dot::check(DotKernel::Vec4, off, &cpu),
        Err(Error::Mismatch(_))
    ));
    assert!(matches!(
        dot::check(DotKernel::Vec4, f64::NAN, &cpu),
        Err(Error::Mismatch(_))
    ));
    assert!(matches!(
        dot::run(&Target::Sim, &a, &b[..10], "test", |_, _| {}),
        Err(Error::InvalidInput(_))
    ));
}

#[test]
#[cfg_attr(gridsync_no_driver, ignore = "no NVIDIA driver found at build time")]
fn gpu_dot_at_the_source_size() {
    let gpu = common::gpu();
    let (a, b) = source_data(dot::DEFAULT_LEN);
    let r = dot::run(&gpu, &a, &b, "source", |_, _| {}).unwrap();
    for k in &r.runs {
        assert!((k.result - 1.0).abs() < 1e-4, "{}: {}", k.name, k.result);
        assert!(k.launch.ms.is_some_and(|ms| ms > 0.0));
    }
    let (a, b) = random_pair(dot::DEFAULT_LEN);
    for kernel in DotKernel::ALL {
        let got = run_kernel(&gpu, kernel, &a, &b);
        assert_close(got, &a, &b, kernel.name());
    }
}

#[test]
#[cfg_attr(gridsync_no_driver, ignore = "no NVIDIA driver found at build time")]
fn gpu_dot_of_a_billion_if_memory_allows() {
    let gpu = common::gpu();
    let Target::Gpu(g) = &gpu else { unreachable!() };
    let n = 1_000_000_000;
    if let Some(why) = gridsync::runtime::memory::does_not_fit(g, 8 * n as u64).unwrap() {
        eprintln!("skipped: {why}");
        return;
    }
    let a = gridsync::inputs::uniform_f32(n, 1, 0.0, 1.0);
    let b = gridsync::inputs::uniform_f32(n, 2, 0.0, 1.0);
    let cpu = dot_cpu(&a, &b);
    for kernel in [DotKernel::Vec4, DotKernel::Atomic] {
        let got = run_kernel(&gpu, kernel, &a, &b);
        dot::check(kernel, got, &cpu).unwrap();
    }
}
