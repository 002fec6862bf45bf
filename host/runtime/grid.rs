//! Grids for grid-stride kernels: as many blocks as fit on the GPU at once, no more than the
//! work needs — and a few on the simulator.
//!
//! A grid-stride kernel covers any input with any grid, so the grid is a performance choice. A
//! grid of exactly one full wave (every SM holding as many blocks as its registers, shared memory
//! and thread slots allow) keeps every SM busy to the end with no second, partial wave, and
//! makes the per-block epilogue (one atomic, say) as rare as it can be while memory stays busy.
//! The driver's occupancy calculator says how many blocks of a given kernel fit on one SM.
//!
//! A kernel with a grid barrier needs the opposite bound: not "enough blocks to fill the GPU"
//! but "no more blocks than fit at once" ([`check_coresident`]).

use crate::runtime::device::Gpu;
use crate::runtime::error::{Error, Result, check};
use crate::runtime::launch::{Target, check_shape};
use crate::runtime::module::{Functions, Module};
use cust::sys as cu;
use gpu::LaunchConfig;

/// Blocks per grid on the simulator: several, so that the cross-block step of a kernel (an
/// atomic, a lock) is exercised, and few, since each simulated thread is an OS thread.
pub const SIM_BLOCKS: u32 = 4;

/// One block per SM on a GPU, two on the simulator: the default grid of the Hopper lessons
/// (`mbarrier`, `pipeline`), whose blocks each run the lesson on their own — on the simulator
/// two, so that blocks still run beside each other.
pub fn one_block_per_sm(target: &Target) -> u32 {
    match target {
        Target::Sim => 2,
        Target::Gpu(g) => g.info().sm_count,
    }
}

/// How many blocks of `threads_per_block` threads with `shared_bytes` of dynamic shared memory
/// of the kernel `name` one SM holds at once (`cuOccupancyMaxActiveBlocksPerMultiprocessor`),
/// at least 1: a sizing hint for grid-stride grids, where a block that does not fit fails at
/// launch anyway. [`max_coresident_blocks`] gives the raw count.
///
/// # Errors
/// [`crate::Error::InvalidInput`] for an unknown kernel; a driver error.
pub fn blocks_per_sm(
    gpu: &Gpu,
    name: &'static str,
    threads_per_block: u32,
    shared_bytes: u32,
) -> Result<u32> {
    Ok(occupancy(gpu, gpu.functions(), name, threads_per_block, shared_bytes)?.max(1))
}

/// The occupancy calculator's answer as it is: 0 when one block does not fit on an SM.
fn occupancy(
    gpu: &Gpu,
    functions: &Functions,
    name: &'static str,
    threads_per_block: u32,
    shared_bytes: u32,
) -> Result<u32> {
    gpu.make_current()?;
    let f = functions.get(name)?;
    // Past 48 KiB the kernel must have opted in first, or the calculator answers 0.
    // SAFETY: `f` is a live function of the current context.
    unsafe { crate::runtime::launch::allow_shared_bytes(gpu, f, name, shared_bytes) }?;
    let mut blocks = 0i32;
    // SAFETY: `f` is a live function of the current context; `blocks` is a valid out-pointer.
    let code = unsafe {
        cu::cuOccupancyMaxActiveBlocksPerMultiprocessor(
            &mut blocks,
            f,
            i32::try_from(threads_per_block).unwrap_or(i32::MAX),
            shared_bytes as usize,
        )
    };
    check(code, || {
        format!("cuOccupancyMaxActiveBlocksPerMultiprocessor({name})")
    })?;
    Ok(blocks.max(0) as u32)
}

/// The most blocks of kernel `name` (`threads_per_block` threads, `shared_bytes` of dynamic
/// shared memory each) that can be resident on the GPU at once: blocks per SM from the
/// occupancy calculator (not rounded up: 0 if one block does not fit) × SMs. The largest grid a
/// grid barrier can run with — when nothing else runs on the GPU; a cooperative launch is the
/// only way to be sure of it.
///
/// # Errors
/// As [`blocks_per_sm`].
pub fn max_coresident_blocks(
    gpu: &Gpu,
    name: &'static str,
    threads_per_block: u32,
    shared_bytes: u32,
) -> Result<u32> {
    let per_sm = occupancy(gpu, gpu.functions(), name, threads_per_block, shared_bytes)?;
    Ok(per_sm.saturating_mul(gpu.info().sm_count))
}

/// Refuses a grid that cannot be resident all at once, before anything is launched, and
/// returns the limit. Every launch of a kernel with a grid barrier goes through it, plain or
/// cooperative: in a plain launch of too many blocks the blocks could never all arrive (those
/// that arrived spin on the SMs the missing ones wait for) — gridsync's bounded
/// [`GridBarrier`](gpu::grid::GridBarrier) then times out with the work undone
/// ([`Error::BarrierTimeout`]), an unbounded barrier of your own hangs — and a cooperative one
/// would fail with a bare driver code.
///
/// On a GPU the limit is [`max_coresident_blocks`] for the launch's block size and shared
/// memory; for a clustered launch of gridsync's own kernels, the clusters the driver can hold at
/// once ([`Gpu::max_active_clusters`](crate::runtime::device::Gpu::max_active_clusters)) times
/// their size. On the simulator it is [`gpu::sim::MAX_THREADS`] / threads per block: the simulator
/// runs every block of a grid at once, and refuses grids past its thread limit.
///
/// # Errors
/// [`Error::InvalidInput`] for a grid over the limit (naming the kernel, the grid, the limit
/// and how it was found) or, on a GPU, a shape the device cannot launch at all; as
/// [`blocks_per_sm`].
pub fn check_coresident(target: &Target, name: &'static str, cfg: &LaunchConfig) -> Result<u32> {
    coresident(target, None, name, cfg)
}

/// [`check_coresident`] for the kernel `name` of your own `module` (the simulator's limit does
/// not depend on the kernel).
///
/// # Errors
/// As [`check_coresident`]; [`Error::MissingKernel`] naming the kernel and the module;
/// [`Error::InvalidInput`] for a module loaded for another target.
pub fn check_coresident_in(
    target: &Target,
    module: &Module,
    name: &'static str,
    cfg: &LaunchConfig,
) -> Result<u32> {
    coresident(target, Some(module), name, cfg)
}

fn coresident(
    target: &Target,
    module: Option<&Module>,
    name: &'static str,
    cfg: &LaunchConfig,
) -> Result<u32> {
    let blocks = cfg.grid.count();
    let threads = cfg.block.count();
    let refuse = |limit: u64, how: String| {
        Error::InvalidInput(format!(
            "{name} with a grid of {blocks} blocks of {threads} threads: at most {limit} blocks \
             fit at once ({how}); a grid barrier needs every block resident at once: more blocks \
             could never all arrive (a bounded barrier times out, an unbounded one hangs)"
        ))
    };
    let limit = match target {
        Target::Sim => {
            if let Some(m) = module {
                m.check_sim()?;
            }
            let limit = gpu::sim::MAX_THREADS / threads.max(1);
            if blocks > limit {
                return Err(refuse(
                    limit,
                    format!(
                        "the simulator runs every block at once, {max} threads at most: \
                         {max} / {threads}",
                        max = gpu::sim::MAX_THREADS
                    ),
                ));
            }
            limit
        }
        Target::Gpu(gpu) if cfg.is_clustered() && module.is_none() => {
            // Clusters are placed whole, on one GPC each: what fits is what the driver's
            // cluster occupancy says, not blocks per SM × SMs.
            let clusters = gpu.max_active_clusters(name, cfg)?;
            let per_cluster = cfg.cluster.count();
            let limit = clusters as u64 * per_cluster;
            if blocks > limit {
                return Err(refuse(
                    limit,
                    format!(
                        "{clusters} clusters of {per_cluster} blocks at once \
                         (cuOccupancyMaxActiveClusters) for {threads} threads and {} bytes of \
                         dynamic shared memory per block",
                        cfg.shared_bytes
                    ),
                ));
            }
            limit
        }
        Target::Gpu(gpu) => {
            check_shape(gpu, name, cfg)?;
            let functions = match module {
                Some(m) => m.functions_on(gpu)?,
                None => gpu.functions(),
            };
            let per_sm = occupancy(gpu, functions, name, threads as u32, cfg.shared_bytes)?;
            let sms = gpu.info().sm_count;
            let limit = per_sm as u64 * sms as u64;
            if blocks > limit {
                return Err(refuse(
                    limit,
                    format!(
                        "{per_sm} blocks per SM × {sms} SMs for {threads} threads and {} bytes \
                         of dynamic shared memory per block",
                        cfg.shared_bytes
                    ),
                ));
            }
            limit
        }
    };
    Ok(u32::try_from(limit).unwrap_or(u32::MAX))
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

/// The full-GPU grid: `sm_count × blocks_per_sm` blocks of `threads_per_block`.
///
/// # Errors
/// [`Error::InvalidInput`] for zero or too many threads per block, or zero blocks per SM.
pub fn full_gpu_blocks(
    gpu: &Gpu,
    threads_per_block: u32,
    blocks_per_sm: Option<u32>,
) -> Result<u32> {
    let info = gpu.info();
    if threads_per_block == 0 || threads_per_block > info.max_threads_per_block {
        return Err(Error::InvalidInput(format!(
            "{threads_per_block} threads per block: the device takes 1 to {}",
            info.max_threads_per_block
        )));
    }
    let per_sm = blocks_per_sm.unwrap_or((info.max_threads_per_sm / threads_per_block).max(1));
    if per_sm == 0 {
        return Err(Error::InvalidInput("0 blocks per SM".into()));
    }
    info.sm_count.checked_mul(per_sm).ok_or_else(|| {
        Error::InvalidInput(format!(
            "{per_sm} blocks per SM × {} SMs: too many blocks",
            info.sm_count
        ))
    })
}
