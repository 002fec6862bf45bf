//! The reductions of `f32` sums: each step of the lesson, in `f32`, `f64` and compensated, and
//! the book's atomic reduction in double.

use super::LEN;
use crate::check::{Case, Ran};
use gpu::LaunchConfig;
use gridsync::reduce::{Accumulate, Step, StepLaunch};
use gridsync::runtime::error::{Error, Result};
use gridsync::runtime::launch::Target;

/// The sums of floats.
pub(super) fn cases() -> Vec<Case> {
    use gpu::Kernel as K;
    vec![
        case!(
            "reduce",
            K::PartialReduce.name(),
            Clean,
            "3001 floats",
            "a block's tree in shared memory, sums finished on the host",
            |t| reduce(t, Step::Partial)
        ),
        case!(
            "reduce",
            K::ReduceAtomic.name(),
            Clean,
            "3001 floats",
            "the book's atomicAdd per block",
            |t| reduce(t, Step::Atomic)
        ),
        case!(
            "reduce",
            K::ReduceWarp.name(),
            Clean,
            "3001 floats",
            "shuffles, one atomic per block",
            |t| reduce(t, Step::Warp)
        ),
        case!(
            "reduce",
            K::ReduceLastBlockSumF32.name(),
            Clean,
            "3001 floats",
            "the last block to finish sums the partials (threadfence reduction)",
            |t| reduce(t, Step::LastBlock)
        ),
        case!(
            "reduce",
            K::ReduceVecSumF32.name(),
            Clean,
            "3001 floats",
            "16-byte loads, the last block finishes",
            |t| reduce(t, Step::Vec)
        ),
        case!(
            "reduce",
            K::ReducePipelineSumF32.name(),
            Clean,
            "3001 floats",
            "bulk copies into a ring of stages (sm_90)",
            |t| reduce(t, Step::Pipeline)
        ),
        case!(
            "reduce",
            K::ReduceAtomicF64.name(),
            Clean,
            "3001 doubles",
            "the book's atomicAdd per block, in double",
            |t| reduce_atomic_f64(t)
        ),
        case!(
            "reduce",
            K::ReduceLastBlockSumF32InF64.name(),
            Clean,
            "3001 floats",
            "the last block sums the partials, in f64",
            |t| reduce_with(t, Step::LastBlock, Accumulate::F64)
        ),
        case!(
            "reduce",
            K::ReduceLastBlockSumF32Kahan.name(),
            Clean,
            "3001 floats",
            "the last block sums the partials, compensated",
            |t| reduce_with(t, Step::LastBlock, Accumulate::Kahan)
        ),
        case!(
            "reduce",
            K::ReduceVecSumF32InF64.name(),
            Clean,
            "3001 floats",
            "16-byte loads, in f64, the last block finishes",
            |t| reduce_with(t, Step::Vec, Accumulate::F64)
        ),
        case!(
            "reduce",
            K::ReduceVecSumF32Kahan.name(),
            Clean,
            "3001 floats",
            "16-byte loads, compensated, the last block finishes",
            |t| reduce_with(t, Step::Vec, Accumulate::Kahan)
        ),
        case!(
            "reduce",
            K::ReducePipelineSumF32InF64.name(),
            Clean,
            "3001 floats",
            "bulk copies into a ring of stages, in f64 (sm_90)",
            |t| reduce_with(t, Step::Pipeline, Accumulate::F64)
        ),
        case!(
            "reduce",
            K::ReducePipelineSumF32Kahan.name(),
            Clean,
            "3001 floats",
            "bulk copies into a ring of stages, compensated (sm_90)",
            |t| reduce_with(t, Step::Pipeline, Accumulate::Kahan)
        ),
    ]
}

fn reduce(t: &Target, step: Step) -> Result<Ran> {
    let data = gridsync::reduce::random_input(LEN, 1, true);
    let x = t.upload(&data)?;
    let got = StepLaunch::new(t, step, Accumulate::F32, LEN, None)?.run(&x, LEN)?;
    let want = gridsync::reduce::sum_cpu(&data);
    let bound = 1e-4 * gridsync::reduce::sum_abs_cpu(&data);
    if (got - want).abs() > bound {
        return Err(Error::Mismatch(format!("{step:?}: {got}, the CPU {want}")));
    }
    Ok(Ran::Finished)
}

fn reduce_with(t: &Target, step: Step, acc: Accumulate) -> Result<Ran> {
    let data = gridsync::reduce::random_input(LEN, 1, true);
    let x = t.upload(&data)?;
    let got = StepLaunch::new(t, step, acc, LEN, None)?.run(&x, LEN)?;
    let want = gridsync::reduce::sum_cpu(&data);
    let bound = 1e-4 * gridsync::reduce::sum_abs_cpu(&data);
    if (got - want).abs() > bound {
        return Err(Error::Mismatch(format!(
            "{step:?} {acc:?}: {got}, the CPU {want}"
        )));
    }
    Ok(Ran::Finished)
}

/// The book's `reduce` in double: `(N + 127) / 128` blocks of 128, `*d_y` zeroed first.
fn reduce_atomic_f64(t: &Target) -> Result<Ran> {
    let data: Vec<f64> = gridsync::reduce::random_input(LEN, 1, true)
        .into_iter()
        .map(f64::from)
        .collect();
    let x = t.upload(&data)?;
    let y = t.zeros::<f64>(1)?;
    let (threads, shared) = gridsync::reduce::shape_of(gpu::Kernel::ReduceAtomicF64);
    let blocks = LEN.div_ceil(threads as usize) as u32;
    let cfg = LaunchConfig::linear(blocks, threads).with_shared_bytes(shared);
    // SAFETY: `x` holds `LEN` doubles, `y` one, touched only atomically; `shared` is
    // `blockDim.x` doubles.
    unsafe {
        gridsync::launch!(
            t,
            gpu::lessons::reduce::reduce_atomic_f64,
            cfg,
            (x.ptr().cast_const(), y.ptr(), LEN as u64)
        )?
    };
    let got = t.download(&y)?[0];
    let want = gridsync::reduce::sum_cpu(&data);
    if (got - want).abs() > 1e-9 * data.iter().map(|v| v.abs()).sum::<f64>() {
        return Err(Error::Mismatch(format!("{got}, the CPU {want}")));
    }
    Ok(Ran::Finished)
}
