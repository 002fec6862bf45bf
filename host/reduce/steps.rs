//! [`StepLaunch`]: one kernel of the `f32` progression ((a)–(f)) over one input, its buffers
//! allocated once, run any number of times.

use super::single_pass::{SinglePass, SinglePassKernel};
use super::{Accumulate, Step, config_for, shape_of};
use crate::runtime::buffer::Buffer;
use crate::runtime::error::{Error, Result};
use crate::runtime::launch::Target;
use crate::runtime::timer::Timer;
use gpu::LaunchConfig;
use gpu::lessons::reduce::{BOOK_BLOCK_SIZE, SumF32, SumF32InF64, SumF32Kahan};

/// Elements per launch of the book's kernel on the simulator: as many blocks of 128 as fit in
/// its 4096 threads. On a GPU the whole input is one launch, as in the book.
const SIM_BOOK_CHUNK: usize = gpu::sim::MAX_THREADS as usize;

enum Engine<'a> {
    /// (a): one partial per block, added by the host.
    Partial(Buffer<f32>),
    /// (b), (c): the result the kernel adds to atomically, zeroed before each launch.
    Atomic(Buffer<f32>),
    F32(SinglePass<'a, SumF32>),
    F64(SinglePass<'a, SumF32InF64>),
    Kahan(SinglePass<'a, SumF32Kahan>),
}

/// One step of the progression, ready to run over `f32` inputs of up to the length it was made
/// for.
pub struct StepLaunch<'a> {
    target: &'a Target,
    step: Step,
    kernel: gpu::Kernel,
    cfg: LaunchConfig,
    engine: Engine<'a>,
}

impl<'a> StepLaunch<'a> {
    /// Prepares `step` (accumulating as `acc` where the step takes it) for `len` elements;
    /// `blocks_per_sm` overrides the occupancy calculator for the grid-stride steps.
    ///
    /// # Errors
    /// [`Error::InvalidInput`] if the book's kernel would need more than 2³¹ − 1 blocks; a driver
    /// error.
    pub fn new(
        target: &'a Target,
        step: Step,
        acc: Accumulate,
        len: usize,
        blocks_per_sm: Option<u32>,
    ) -> Result<StepLaunch<'a>> {
        let kernel = step.kernel(acc);
        let single = |which| -> Result<(Engine<'a>, LaunchConfig)> {
            let (engine, cfg) = match acc {
                Accumulate::F32 => {
                    let s = SinglePass::new(target, which, len, blocks_per_sm)?;
                    let cfg = s.config();
                    (Engine::F32(s), cfg)
                }
                Accumulate::F64 => {
                    let s = SinglePass::new(target, which, len, blocks_per_sm)?;
                    let cfg = s.config();
                    (Engine::F64(s), cfg)
                }
                Accumulate::Kahan => {
                    let s = SinglePass::new(target, which, len, blocks_per_sm)?;
                    let cfg = s.config();
                    (Engine::Kahan(s), cfg)
                }
            };
            Ok((engine, cfg))
        };
        let (engine, cfg) = match step {
            Step::Partial => {
                let cfg = config_for(target, kernel, len, 0, blocks_per_sm)?;
                (Engine::Partial(target.zeros(cfg.grid.x as usize)?), cfg)
            }
            Step::Atomic => {
                let blocks = u32::try_from(len.div_ceil(BOOK_BLOCK_SIZE as usize))
                    .ok()
                    .filter(|&b| b <= i32::MAX as u32)
                    .ok_or_else(|| {
                        Error::InvalidInput(format!(
                            "{len} elements need more than 2^31 - 1 blocks of {BOOK_BLOCK_SIZE}"
                        ))
                    })?;
                let (threads, shared) = shape_of(kernel);
                let cfg = LaunchConfig::linear(blocks, threads).with_shared_bytes(shared);
                (Engine::Atomic(target.zeros(1)?), cfg)
            }
            Step::Warp => {
                let cfg = config_for(target, kernel, len, 0, blocks_per_sm)?;
                (Engine::Atomic(target.zeros(1)?), cfg)
            }
            Step::LastBlock => single(SinglePassKernel::LastBlock)?,
            Step::Vec => single(SinglePassKernel::Vec)?,
            Step::Pipeline => single(SinglePassKernel::Pipeline)?,
        };
        Ok(StepLaunch {
            target,
            step,
            kernel,
            cfg,
            engine,
        })
    }

    /// The kernel.
    pub fn kernel(&self) -> gpu::Kernel {
        self.kernel
    }

    /// The launch shape (for the book's kernel: the whole grid, even where the simulator runs it
    /// in several launches).
    pub fn config(&self) -> LaunchConfig {
        self.cfg
    }

    /// Zeroes the result of the atomic steps — the book's wrapper's `*d_y = 0` — and the ticket
    /// counter of the single-pass ones. Call before each [`StepLaunch::launch`].
    ///
    /// # Errors
    /// A driver error.
    pub fn reset(&self) -> Result<()> {
        match &self.engine {
            Engine::Atomic(result) => self.target.write(result, &[0.0]),
            Engine::F32(s) => s.reset(),
            Engine::F64(s) => s.reset(),
            Engine::Kahan(s) => s.reset(),
            Engine::Partial(_) => Ok(()),
        }
    }

    /// Queues the kernel over `x[..len]` (on the simulator: runs it).
    ///
    /// # Errors
    /// [`Error::InvalidInput`] if `len` exceeds `x`; a launch error.
    pub fn launch(&self, x: &Buffer<f32>, len: usize) -> Result<()> {
        x.check_prefix(len, || format!("reducing {len} elements"))?;
        let (t, cfg, src, n) = (self.target, self.cfg, x.ptr().cast_const(), len as u64);
        match (&self.engine, self.step) {
            // SAFETY: `src` holds `n` floats; `partials` one float per block of `cfg`; the shared
            // memory is in `cfg`; `result` synchronizes before the buffer is read.
            (Engine::Partial(p), _) => unsafe {
                crate::launch!(
                    t,
                    gpu::lessons::reduce::partial_reduce,
                    cfg,
                    (src, n, p.ptr())
                )
            },
            (Engine::Atomic(y), Step::Atomic) => self.launch_book(src, len, y),
            // SAFETY: `src` holds `n` floats; `y` one float, touched only atomically.
            (Engine::Atomic(y), _) => unsafe {
                crate::launch!(t, gpu::lessons::reduce::reduce_warp, cfg, (src, n, y.ptr()))
            },
            (Engine::F32(s), _) => s.launch(x, len),
            (Engine::F64(s), _) => s.launch(x, len),
            (Engine::Kahan(s), _) => s.launch(x, len),
        }
    }

    /// The book's grid, one thread per element: one launch on a GPU; launches of at most 4096
    /// threads over consecutive chunks on the simulator (the blocks and their sums are the same).
    fn launch_book(&self, src: *const f32, len: usize, y: &Buffer<f32>) -> Result<()> {
        let chunk = match self.target {
            Target::Gpu(_) => len.max(1),
            Target::Sim => SIM_BOOK_CHUNK,
        };
        for start in (0..len).step_by(chunk) {
            let n = chunk.min(len - start);
            let blocks = n.div_ceil(BOOK_BLOCK_SIZE as usize) as u32;
            let cfg = LaunchConfig {
                grid: blocks.into(),
                ..self.cfg
            };
            // SAFETY: `start + n <= len`, so the kernel reads inside `src[..len]`; `y` is one
            // float touched only atomically; the shared memory is in `cfg`.
            unsafe {
                let d_x = src.add(start);
                crate::launch!(
                    self.target,
                    gpu::lessons::reduce::reduce_atomic,
                    cfg,
                    (d_x, y.ptr(), n as u64)
                )?;
            }
        }
        Ok(())
    }

    /// Waits for the kernel and returns its result as `f64` (exact for the `f32` results); for
    /// (a), the host's sum of the partials, in `f64` in block order.
    ///
    /// # Errors
    /// A driver error.
    pub fn result(&self) -> Result<f64> {
        let one = |v: Vec<f32>| v.first().map(|&x| x as f64).unwrap_or(0.0);
        Ok(match &self.engine {
            Engine::Partial(p) => self.target.download(p)?.iter().map(|&x| x as f64).sum(),
            Engine::Atomic(y) => one(self.target.download(y)?),
            Engine::F32(s) => s.result()? as f64,
            Engine::F64(s) => s.result()?,
            Engine::Kahan(s) => s.result()? as f64,
        })
    }

    /// Resets, launches over `x[..len]` and returns the result.
    ///
    /// # Errors
    /// As [`StepLaunch::reset`], [`StepLaunch::launch`] and [`StepLaunch::result`].
    pub fn run(&self, x: &Buffer<f32>, len: usize) -> Result<f64> {
        self.run_timed(x, len, None).map(|(v, _)| v)
    }

    /// Like [`StepLaunch::run`], with the launch event-timed on a GPU (the reset before it and,
    /// for (a), the host's sum after it are not timed).
    ///
    /// # Errors
    /// As [`StepLaunch::run`].
    pub fn run_timed(
        &self,
        x: &Buffer<f32>,
        len: usize,
        timer: Option<&mut Timer>,
    ) -> Result<(f64, Option<f64>)> {
        self.reset()?;
        let ms = Timer::time_if(self.target, timer, || self.launch(x, len))?;
        Ok((self.result()?, ms))
    }
}
