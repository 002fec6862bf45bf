//! A [`Lane`]: what one stream needs to normalize arrays one after another — a device array,
//! the reductions' scratch, and the launch shapes — and the kernels of each [`Pipeline`].

use super::Pipeline;
use crate::reduce::single_pass_shared_bytes;
use crate::runtime::buffer::Buffer;
use crate::runtime::error::{Error, Result};
use crate::runtime::grid::{SIM_BLOCKS, grid_stride_config};
use crate::runtime::launch::{KernelArgs, LaunchMode, Target, kernel_name, launch_on};
use crate::runtime::stats::Stats;
use crate::runtime::stream::Stream;
use crate::runtime::timer::Timer;
use gpu::lessons::reduce::{NUMBA_BLOCKS_PER_GRID, NUMBA_THREADS_PER_BLOCK, THREADS_PER_BLOCK};
use gpu::{Kernel, LaunchConfig};

/// Launches on `stream` of a GPU, or runs on the simulator (which has no streams).
///
/// # Safety
/// As [`Target::launch`].
unsafe fn launch_in<A: KernelArgs>(
    target: &Target,
    stream: Option<&Stream>,
    name: &'static str,
    cfg: LaunchConfig,
    args: A,
    kernel: A::Fn,
) -> Result<()> {
    match (target, stream) {
        // SAFETY: forwarded to the caller.
        (Target::Gpu(gpu), Some(stream)) => unsafe {
            launch_on(
                gpu,
                gpu.functions(),
                stream,
                name,
                &cfg,
                args,
                LaunchMode::Plain,
            )
        },
        // SAFETY: forwarded to the caller.
        _ => unsafe { target.launch(name, cfg, args, kernel) },
    }
}

/// `launch!` on a chosen stream.
macro_rules! queue {
    ($target:expr, $stream:expr, $kernel:path, $cfg:expr, ($($arg:expr),* $(,)?)) => {
        launch_in($target, $stream, kernel_name(stringify!($kernel)), $cfg, ($($arg,)*), $kernel)
    };
}

/// The most blocks each kernel is launched with; an array that needs fewer gets fewer.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Grids {
    /// A full wave of `reduce_vec_sum_f32_in_f64` (a few blocks on the simulator).
    reduce: u32,
    /// A full wave of `divide_by_sum`.
    divide: u32,
    /// `partial_reduce` and `divide_by`: the source's 32 × 40 (a few on the simulator).
    source: u32,
}

impl Grids {
    /// Asks the occupancy calculator once.
    pub(crate) fn of(target: &Target) -> Result<Grids> {
        let wave = |k: Kernel, shared: u32| -> Result<u32> {
            let cfg = grid_stride_config(
                target,
                k.name(),
                usize::MAX / 2,
                THREADS_PER_BLOCK,
                shared,
                None,
            )?;
            Ok(cfg.grid.x)
        };
        Ok(Grids {
            reduce: wave(
                Kernel::ReduceVecSumF32InF64,
                single_pass_shared_bytes::<f64>(),
            )?,
            divide: wave(Kernel::DivideBySum, 0)?,
            source: if target.is_sim() {
                SIM_BLOCKS
            } else {
                NUMBA_BLOCKS_PER_GRID
            },
        })
    }

    /// The most partials any reduction writes.
    fn partials(&self) -> usize {
        self.reduce.max(self.source) as usize
    }
}

/// `threads`-thread blocks for `work` items, at most `max` of them, at least one.
fn blocks_for(work: usize, threads: u32, max: u32) -> u32 {
    work.div_ceil(threads as usize).clamp(1, max as usize) as u32
}

/// One stream's device memory: an array of up to `capacity` floats, and the scratch of both
/// pipelines' reductions.
pub(crate) struct Lane {
    /// The array being normalized.
    pub(crate) data: Buffer<f32>,
    /// One partial per block: `f32` for `partial_reduce`, `f64` for the single-pass reduction
    /// (stored as 8-byte words, which hold either).
    partials: Buffer<u64>,
    /// The single-pass reduction's ticket counter: 0 before a launch, 0 after.
    count: Buffer<u32>,
    /// The sum: an `f32` in its low 4 bytes (source pipeline) or an `f64`.
    pub(crate) sum: Buffer<u64>,
    grids: Grids,
}

impl Lane {
    /// Allocates for arrays of up to `capacity` floats.
    pub(crate) fn new(target: &Target, capacity: usize, grids: Grids) -> Result<Lane> {
        Ok(Lane {
            data: target.zeros(capacity)?,
            partials: target.zeros(grids.partials())?,
            count: target.zeros(1)?,
            sum: target.zeros(1)?,
            grids,
        })
    }

    /// Queues `pipeline`'s kernels over the first `len` floats of `data` ([`Lane::data`], or on
    /// the simulator a buffer of the array's own length) on `stream` (the simulator runs them).
    ///
    /// # Errors
    /// [`Error::InvalidInput`] unless `1 <= len <= data.len()`; a launch error.
    pub(crate) fn queue(
        &self,
        target: &Target,
        stream: Option<&Stream>,
        pipeline: Pipeline,
        data: &Buffer<f32>,
        len: usize,
    ) -> Result<()> {
        if len == 0 || len > data.len() {
            return Err(Error::InvalidInput(format!(
                "normalizing {len} floats of a buffer of {}",
                data.len()
            )));
        }
        let x = data.ptr();
        let n = len as u64;
        let g = self.grids;
        match pipeline {
            Pipeline::Source => {
                let threads = NUMBA_THREADS_PER_BLOCK;
                let blocks = blocks_for(len, threads, g.source);
                let shared = threads * size_of::<f32>() as u32;
                let partials = self.partials.ptr().cast::<f32>();
                let sum = self.sum.ptr().cast::<f32>();
                // SAFETY: `x` holds `len` floats (checked above), `partials` at least
                // `blocks` floats (`partials()` words of 8 bytes), `sum` one float; the block is
                // a power of two with its floats of shared memory; the three launches run in
                // stream order, and the caller synchronizes before the buffers are read or freed.
                unsafe {
                    queue!(
                        target,
                        stream,
                        gpu::lessons::reduce::partial_reduce,
                        LaunchConfig::linear(blocks, threads).with_shared_bytes(shared),
                        (x.cast_const(), n, partials)
                    )?;
                    queue!(
                        target,
                        stream,
                        gpu::lessons::normalize::single_thread_sum,
                        LaunchConfig::linear(1, 1),
                        (partials.cast_const(), blocks as u64, sum)
                    )?;
                    queue!(
                        target,
                        stream,
                        gpu::lessons::normalize::divide_by,
                        LaunchConfig::linear(blocks, threads),
                        (x, n, sum.cast_const())
                    )
                }
            }
            Pipeline::SinglePass => {
                let threads = THREADS_PER_BLOCK;
                let work = len.div_ceil(4);
                let reduce_cfg = LaunchConfig::linear(blocks_for(work, threads, g.reduce), threads)
                    .with_shared_bytes(single_pass_shared_bytes::<f64>());
                let divide_cfg = LaunchConfig::linear(blocks_for(work, threads, g.divide), threads);
                let sum = self.sum.ptr().cast::<f64>();
                // SAFETY: `x` holds `len` floats; `partials` holds `g.reduce` 8-byte
                // accumulators, `count` a `u32` that is 0 (zeroed at allocation, reset by every
                // launch), `sum` one `f64`; the launch carries the reduction's shared memory;
                // stream order puts the divide after the sum; the caller synchronizes before the
                // buffers are read or freed.
                unsafe {
                    queue!(
                        target,
                        stream,
                        gpu::lessons::reduce::reduce_vec_sum_f32_in_f64,
                        reduce_cfg,
                        (
                            x.cast_const(),
                            n,
                            self.partials.ptr().cast::<f64>(),
                            self.count.ptr(),
                            sum
                        )
                    )?;
                    queue!(
                        target,
                        stream,
                        gpu::lessons::normalize::divide_by_sum,
                        divide_cfg,
                        (x, n, sum.cast_const())
                    )
                }
            }
        }
    }

    /// The sum the last pipeline wrote, as an `f64`, from the 8 bytes of [`Lane::sum`].
    pub(crate) fn decode_sum(pipeline: Pipeline, word: u64) -> f64 {
        match pipeline {
            Pipeline::Source => f32::from_bits(word as u32) as f64,
            Pipeline::SinglePass => f64::from_bits(word),
        }
    }

    /// Zeroes the ticket counter after a failed launch may have left it nonzero.
    pub(crate) fn reset(&self, target: &Target) -> Result<()> {
        target.write(&self.count, &[0])
    }
}

/// Times `pipeline`'s kernels on one device-resident array of `len` random floats: `trials`
/// event-timed runs on the GPU's own stream, after one untimed warm-up.
///
/// # Errors
/// [`Error::Unsupported`] on the simulator; [`Error::InvalidInput`] for zero trials; a launch or
/// driver error.
pub fn time_pipeline(
    target: &Target,
    pipeline: Pipeline,
    len: usize,
    trials: u32,
) -> Result<Stats> {
    let Target::Gpu(gpu) = target else {
        return Err(Error::Unsupported("kernel timing needs a GPU".into()));
    };
    let grids = Grids::of(target)?;
    let lane = Lane::new(target, len, grids)?;
    target.write(&lane.data, &crate::inputs::uniform_f32(len, 7, 0.5, 1.5))?;
    let mut timer = Timer::new()?;
    let mut ms = Vec::new();
    for t in 0..=trials {
        let x = timer.time(gpu.stream(), || {
            lane.queue(target, Some(gpu.stream()), pipeline, &lane.data, len)
        })?;
        if t > 0 {
            ms.push(f64::from(x));
        }
    }
    Stats::of(&ms)
}
