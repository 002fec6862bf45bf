//! [`SinglePass`]: one single-pass kernel ((d) or (e)) of one [`Reduction`](gpu::lessons::reduce::Reduction),
//! its partials, ticket counter and result allocated once, launched any number of times.

use super::kernels::DeviceReduction;
use super::{config_for, single_pass_shared_bytes};
use crate::runtime::buffer::Buffer;
use crate::runtime::error::{Error, Result};
use crate::runtime::launch::Target;
use crate::runtime::timer::Timer;
use gpu::LaunchConfig;
use gpu::lessons::reduce::{
    Element, REDUCE_PIPELINE_STAGE_BYTES, REDUCE_PIPELINE_THREADS_PER_BLOCK,
    reduce_pipeline_shared_bytes,
};
use gpu::vector::Vector16;
use serde::Serialize;

/// Which single-pass kernel of a reduction.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SinglePassKernel {
    /// (d) `reduce_last_block_*`: scalar loads (the `f32` sums only).
    LastBlock,
    /// (e) `reduce_vec_*`: 16-byte loads.
    Vec,
    /// (f) `reduce_pipeline_*` (sm_90): bulk copies into a ring of shared-memory stages (the
    /// `f32` sums only).
    Pipeline,
}

/// One single-pass kernel of `R`, ready to run over inputs of up to the length it was made for.
///
/// The ticket counter is zeroed once, here; each launch leaves it at 0 for the next (the last
/// block resets it). After a launch that failed, [`SinglePass::reset`] zeroes it again.
pub struct SinglePass<'a, R: DeviceReduction> {
    target: &'a Target,
    kernel: gpu::Kernel,
    cfg: LaunchConfig,
    /// `cfg.grid.x` accumulators, as 8-byte words (every accumulator is 8-byte aligned or less).
    partials: Buffer<u64>,
    count: Buffer<u32>,
    result: Buffer<R::Out>,
    /// (f)'s error word (unused by the others).
    err: Buffer<u32>,
}

impl<'a, R: DeviceReduction> SinglePass<'a, R> {
    /// Prepares `which` kernel of `R` with a grid for `len` elements: one full wave of blocks
    /// (`blocks_per_sm` per SM if given), fewer if `len` needs fewer, a few on the simulator.
    ///
    /// # Errors
    /// [`Error::InvalidInput`] if `R` has no such kernel; [`Error::Unsupported`] for (f) on a
    /// GPU below compute capability 9.0; a driver error (out of memory, …).
    pub fn new(
        target: &'a Target,
        which: SinglePassKernel,
        len: usize,
        blocks_per_sm: Option<u32>,
    ) -> Result<SinglePass<'a, R>> {
        const { assert!(align_of::<R::Acc>() <= 8) };
        let (kernel, work) = match which {
            SinglePassKernel::Vec => (R::VEC, len.div_ceil(<R::Item as Element>::Vec16::LANES)),
            SinglePassKernel::LastBlock => (
                R::LAST_BLOCK.ok_or_else(|| {
                    Error::InvalidInput(format!(
                        "{} has no scalar last-block kernel",
                        std::any::type_name::<R>()
                    ))
                })?,
                len,
            ),
            SinglePassKernel::Pipeline => {
                let kernel = R::PIPELINE.ok_or_else(|| {
                    Error::InvalidInput(format!(
                        "{} has no pipelined kernel",
                        std::any::type_name::<R>()
                    ))
                })?;
                target.require_kernel(
                    kernel,
                    &format!(
                        "{} needs compute capability 9.0 (bulk copies completing on an mbarrier)",
                        kernel.name()
                    ),
                )?;
                // A block per stage's worth of bytes at most.
                let stage = REDUCE_PIPELINE_STAGE_BYTES as usize;
                let tiles = (len * size_of::<R::Item>()).div_ceil(stage);
                (kernel, tiles * REDUCE_PIPELINE_THREADS_PER_BLOCK as usize)
            }
        };
        let shared = match which {
            SinglePassKernel::Pipeline => {
                reduce_pipeline_shared_bytes::<R::Acc>(REDUCE_PIPELINE_THREADS_PER_BLOCK)
            }
            _ => single_pass_shared_bytes::<R::Acc>(),
        };
        let cfg = config_for(target, kernel, work, shared, blocks_per_sm)?;
        let words = size_of::<R::Acc>().div_ceil(8) * cfg.grid.x as usize;
        Ok(SinglePass {
            target,
            kernel,
            cfg,
            partials: target.zeros(words)?,
            count: target.zeros(1)?,
            result: target.zeros(1)?,
            err: target.zeros(1)?,
        })
    }

    /// The kernel.
    pub fn kernel(&self) -> gpu::Kernel {
        self.kernel
    }

    /// The launch shape.
    pub fn config(&self) -> LaunchConfig {
        self.cfg
    }

    /// Zeroes the ticket counter and the error word: needed only after a launch that failed
    /// midway.
    ///
    /// # Errors
    /// A driver error.
    pub fn reset(&self) -> Result<()> {
        self.target.write(&self.err, &[0])?;
        self.target.write(&self.count, &[0])
    }

    /// Queues the kernel over `x[..len]` (on the simulator: runs it).
    ///
    /// # Errors
    /// [`Error::InvalidInput`] if `len` exceeds `x`; a launch error.
    pub fn launch(&self, x: &Buffer<R::Item>, len: usize) -> Result<()> {
        x.check_prefix(len, || format!("reducing {len} elements"))?;
        let args = (
            x.ptr().cast_const(),
            len as u64,
            self.partials.ptr().cast::<R::Acc>(),
            self.count.ptr(),
            self.result.ptr(),
        );
        // SAFETY: `x` holds at least `len` elements (checked); `partials` holds `grid.x`
        // accumulators (sized in `new`, alignment checked there), `count` one zeroed `u32`
        // (zeroed in `new`, and left at 0 by every launch), `result` one value, all owned by
        // `self` or borrowed for the call; `cfg` carries the shared memory; `result` and
        // `download` synchronize before the buffers are read or freed.
        unsafe { R::launch(self.target, self.kernel, self.cfg, args, self.err.ptr()) }
    }

    /// Where the kernel leaves its result (one value, on the target): for combining it where
    /// it is, as the multi-GPU calls do.
    pub fn result_buffer(&self) -> &Buffer<R::Out> {
        &self.result
    }

    /// Waits for the kernel and returns its result.
    ///
    /// # Errors
    /// A driver error (including a fault of the kernel); for (f), [`Error::WaitTimeout`] if a
    /// stage's bounded wait gave up (call [`SinglePass::reset`] before launching again).
    pub fn result(&self) -> Result<R::Out> {
        let out = self.target.download(&self.result)?;
        if Some(self.kernel) == R::PIPELINE {
            Error::from_pipeline_word(self.kernel.name(), self.target.download(&self.err)?[0])?;
        }
        out.first()
            .copied()
            .ok_or_else(|| Error::InvalidInput("the result buffer is empty".into()))
    }

    /// Launches over `x[..len]` and returns the result.
    ///
    /// # Errors
    /// As [`SinglePass::launch`] and [`SinglePass::result`].
    pub fn run(&self, x: &Buffer<R::Item>, len: usize) -> Result<R::Out> {
        self.launch(x, len)?;
        self.result()
    }

    /// Like [`SinglePass::run`], event-timed on a GPU: the result and the milliseconds of the
    /// launch (`None` on the simulator, whose timings mean nothing, or without a timer).
    ///
    /// # Errors
    /// As [`SinglePass::run`].
    pub fn run_timed(
        &self,
        x: &Buffer<R::Item>,
        len: usize,
        timer: Option<&mut Timer>,
    ) -> Result<(R::Out, Option<f64>)> {
        let ms = Timer::time_if(self.target, timer, || self.launch(x, len))?;
        Ok((self.result()?, ms))
    }
}
