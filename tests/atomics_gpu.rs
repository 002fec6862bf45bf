//! Every atomic operation, type, scope and ordering on a real GPU, against the sequential model
//! of `gridsync::atomics`, at shapes the simulator cannot run: a full wave of 132 blocks of 256
//! threads (an H100 SXM has 132 SMs), on one address and on four.
//!
//! Ignored where no NVIDIA driver was found at build time. The base seed is printed, and
//! `GRIDSYNC_TEST_SEED=<seed>` replays a run.

mod common;

use gridsync::Error;
use gridsync::atomics::{Case, CheckShape, ValueType, check};
use gridsync::gpu::atomic::{Order, Scope};
use gridsync::gpu::checks::atomics::AtomicOp;

/// Blocks of the big shapes: one per SM of an H100 SXM.
const BLOCKS: u32 = 132;
/// Threads per block of the big shapes: eight warps.
const THREADS_PER_BLOCK: u32 = 256;

/// Runs every supported case at `shape`, each with its own seed from the base seed, and fails
/// with the list of the cases that did not pass.
fn every_case_passes(shape: CheckShape) {
    common::every_atomic_case_passes(&common::gpu(), shape);
}

#[test]
#[cfg_attr(gridsync_no_driver, ignore = "no NVIDIA driver found at build time")]
fn every_case_on_one_contended_address() {
    every_case_passes(CheckShape::new(BLOCKS, THREADS_PER_BLOCK, 1));
}

#[test]
#[cfg_attr(gridsync_no_driver, ignore = "no NVIDIA driver found at build time")]
fn every_case_on_four_addresses() {
    every_case_passes(CheckShape::new(BLOCKS, THREADS_PER_BLOCK, 4));
}

#[test]
#[cfg_attr(gridsync_no_driver, ignore = "no NVIDIA driver found at build time")]
fn every_case_with_more_operations_than_threads() {
    // The grid-stride loop on an odd grid: 7 × 97 threads doing 5000 operations on 3 addresses.
    every_case_passes(CheckShape::new(7, 97, 3).with_n(5000));
}

#[test]
#[cfg_attr(gridsync_no_driver, ignore = "no NVIDIA driver found at build time")]
fn every_case_with_fewer_operations_than_threads() {
    every_case_passes(CheckShape::new(BLOCKS, THREADS_PER_BLOCK, 2).with_n(10_007));
}

#[test]
#[cfg_attr(gridsync_no_driver, ignore = "no NVIDIA driver found at build time")]
fn every_case_with_one_operation() {
    every_case_passes(CheckShape::new(BLOCKS, THREADS_PER_BLOCK, 1).with_n(1));
}

#[test]
#[cfg_attr(gridsync_no_driver, ignore = "no NVIDIA driver found at build time")]
fn every_case_with_no_operations() {
    every_case_passes(CheckShape::new(BLOCKS, THREADS_PER_BLOCK, 4).with_n(0));
}

#[test]
#[cfg_attr(gridsync_no_driver, ignore = "no NVIDIA driver found at build time")]
fn unsupported_combinations_are_refused_before_launch() {
    let target = common::gpu();
    let shape = CheckShape::new(BLOCKS, THREADS_PER_BLOCK, 1);
    for (ty, op) in [
        (ValueType::F32, AtomicOp::Min),
        (ValueType::F64, AtomicOp::And),
        (ValueType::I32, AtomicOp::Inc),
        (ValueType::U64, AtomicOp::Dec),
    ] {
        let case = Case {
            ty,
            op,
            scope: Scope::Device,
            order: Order::Relaxed,
        };
        let result = check(&target, &case, &shape, 1);
        assert!(
            matches!(result, Err(Error::InvalidInput(_))),
            "{case}: {result:?}"
        );
    }
}
