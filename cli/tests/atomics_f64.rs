//! The `double` adds' throughput benchmark (`gridsync bench atomics`), on the simulator and at
//! the full GPU. (The adds' sums: `tests/atomics_f64.rs`.)
//!
//! The base seed is printed; `GRIDSYNC_TEST_SEED=<seed>` replays a run.

#[path = "../../tests/common/f64_adds.rs"]
mod adds;
mod common;

use adds::*;

use gridsync::atomics::f64_add::{F64Add, F64AddShape};
use gridsync::atomics::throughput::Layout;
use gridsync::{Error, Target};

/// The full-GPU grid: every SM full of 256-thread blocks.
fn full_gpu(target: &Target) -> (u32, u32) {
    let Target::Gpu(gpu) = target else {
        unreachable!("a GPU test got the simulator")
    };
    let blocks = gridsync_cli::bench::atomics::full_gpu_blocks(gpu, 256, None).unwrap();
    (blocks, 256)
}

#[test]
#[cfg_attr(gridsync_no_driver, ignore = "no NVIDIA driver found at build time")]
fn both_adds_are_exact_and_bounded_on_a_full_gpu() {
    let target = common::gpu();
    let (blocks, threads) = full_gpu(&target);
    let all = blocks * threads;
    both_adds_pass(
        &target,
        &[
            // Every thread of the GPU on one word: the CAS loop completes only thousands of
            // additions a second there, so this one runs for 20 ms and is checked on what it did.
            F64AddShape {
                budget_ns: 20_000_000,
                ..shape(blocks, threads, all, 16)
            },
            shape(blocks, threads, 32, 16),
            shape(blocks, threads, 1, 16),
            shape(blocks, threads, 1000, 5),
        ],
    );
}

#[test]
#[cfg_attr(gridsync_no_driver, ignore = "no NVIDIA driver found at build time")]
fn both_f64_adds_are_timed_under_contention() {
    use gridsync_cli::bench::atomics::f64_add_throughput;
    let target = common::gpu();
    let cas = f64_add_throughput(&target, F64Add::CasLoop, Layout::Grid, 20, 10).unwrap();
    let native = f64_add_throughput(&target, F64Add::Native, Layout::Grid, 20, 10).unwrap();
    assert_eq!(cas.ms.samples, 10);
    assert_eq!(native.ms.samples, 10);
    // Rates measured; which add is faster is the benchmark's to say (the tests share the
    // GPU). Every thread's native add completes (a CAS loop may starve some threads).
    for r in [&cas, &native] {
        assert!(
            r.adds_per_s.median.is_finite() && r.adds_per_s.median > 0.0,
            "{r:?}"
        );
    }
    assert!(native.min_adds_per_thread > 0, "{native:?}");
    let spread = f64_add_throughput(&target, F64Add::Native, Layout::Thread, 5, 10).unwrap();
    assert!(spread.adds_per_s.median > 0.0 && spread.min_adds_per_thread > 0);
    assert!(f64_add_throughput(&target, F64Add::Native, Layout::Block, 1, 10).is_err());
}

#[test]
fn throughput_needs_a_gpu() {
    let r = gridsync_cli::bench::atomics::f64_add_throughput(
        &Target::Sim,
        F64Add::Native,
        Layout::Grid,
        1,
        10,
    );
    assert!(matches!(r, Err(Error::Unsupported(_))), "{r:?}");
}
