//! Grids for grid-stride kernels: as many blocks as fit on the GPU at once, no more than the
//! work needs — and a few on the simulator.
//!
//! A grid-stride kernel covers any input with any grid, so the grid is a performance choice. A
//! grid of exactly one full wave (every SM holding as many blocks as its registers, shared memory
//! and thread slots allow) keeps every SM busy to the end with no second, partial wave, and
//! makes the per-block epilogue (one atomic, say) as rare as it can be while memory stays busy.
//! The driver's occupancy calculator says how many blocks of a given kernel fit on one SM.

use crate::runtime::device::Gpu;
use crate::runtime::error::{Result, check};
use crate::runtime::launch::Target;
use cust::sys as cu;
use gpu::LaunchConfig;

/// Blocks per grid on the simulator: several, so that the cross-block step of a kernel (an
/// atomic, a lock) is exercised, and few, since each simulated thread is an OS thread.
pub const SIM_BLOCKS: u32 = 4;

/// How many blocks of `threads_per_block` threads with `shared_bytes` of dynamic shared memory
/// of the kernel `name` one SM holds at once (`cuOccupancyMaxActiveBlocksPerMultiprocessor`).
///
/// # Errors
/// [`crate::Error::InvalidInput`] for an unknown kernel; a driver error.
pub fn blocks_per_sm(
    gpu: &Gpu,
    name: &'static str,
    threads_per_block: u32,
    shared_bytes: u32,
) -> Result<u32> {
    gpu.make_current()?;
    let f = gpu.function(name)?;
    let mut blocks = 0i32;
    // SAFETY: `f` is a live function of the current context; `blocks` is a valid out-pointer.
    let code = unsafe {
        cu::cuOccupancyMaxActiveBlocksPerMultiprocessor(
            &mut blocks,
            f,
            threads_per_block as i32,
            shared_bytes as usize,
        )
    };
    check(code, || {
        format!("cuOccupancyMaxActiveBlocksPerMultiprocessor({name})")
    })?;
    Ok(blocks.max(1) as u32)
}

/// A 1-D launch of kernel `name` over `work` items, one item per thread per step of its
/// grid-stride loop: on a GPU, one full wave (`blocks_per_sm`, or what the occupancy calculator
/// says, times the SMs), but no more blocks than `work` fills; on the simulator at most
/// [`SIM_BLOCKS`]. Always at least one block, so that an empty input still launches (and
/// counts nothing).
///
/// # Errors
/// As [`blocks_per_sm`].
pub fn grid_stride_config(
    target: &Target,
    name: &'static str,
    work: usize,
    threads_per_block: u32,
    shared_bytes: u32,
    blocks_per_sm_override: Option<u32>,
) -> Result<LaunchConfig> {
    let needed = work.div_ceil(threads_per_block as usize).max(1);
    let wave = match target {
        Target::Sim => SIM_BLOCKS as usize,
        Target::Gpu(gpu) => {
            let per_sm = match blocks_per_sm_override {
                Some(b) => b,
                None => blocks_per_sm(gpu, name, threads_per_block, shared_bytes)?,
            };
            per_sm.max(1) as usize * gpu.info().sm_count as usize
        }
    };
    let blocks = needed.min(wave) as u32;
    Ok(LaunchConfig::linear(blocks, threads_per_block).with_shared_bytes(shared_bytes))
}
