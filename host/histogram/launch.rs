//! [`HistogramLaunch`]: one histogram kernel over one uploaded input, launched any number of
//! times.

use super::{Bins, HistKernel};
use crate::runtime::args::KernelRef;
use crate::runtime::buffer::Buffer;
use crate::runtime::error::{Error, Result};
use crate::runtime::launch::Target;
use crate::runtime::timer::Timer;
use crate::runtime::wait::wait_bound;
use gpu::LaunchConfig;
use gpu::lessons::histogram::BYTES16;
use gpu::warp::WARP_SIZE;

/// The most dynamic shared memory a block gets without opting in (CUDA's default limit): every
/// kernel here but the pipeline (96 KiB, which the launch opts in to) stays under it.
pub const SHARED_LIMIT: u32 = 48 * 1024;

/// Bytes of the grid-stride loop one thread of [`HistKernel::Warp`] or [`HistKernel::Vec16`]
/// may have: 32 lanes of them, plus the vector kernel's rounding to 16 bytes and its scalar head
/// and tail (three times 16 per lane, generously), must fit a warp's `u32` bin.
const MAX_WARP_SHARE: u64 = u32::MAX as u64 / WARP_SIZE as u64 - 3 * BYTES16 as u64;

/// One kernel over the first `len` bytes of an uploaded input, ready to run any number of times:
/// the bins (and, for the instrument, the rows) are allocated once.
pub struct HistogramLaunch<'a> {
    target: &'a Target,
    kernel: HistKernel,
    src: &'a Buffer<u8>,
    len: usize,
    bins: Bins,
    cfg: LaunchConfig,
    /// `bins` u64, or `grid × bins` for [`HistKernel::SharedRows`].
    out: Buffer<u64>,
    /// The pipeline's error word (one `u32`; unused by the other kernels).
    err: Buffer<u32>,
}

impl<'a> HistogramLaunch<'a> {
    /// Prepares `kernel` over `src[..len]` with launch shape `cfg`.
    ///
    /// # Errors
    /// [`Error::InvalidInput`] if `len` exceeds the buffer, the shape's shared memory is not the
    /// kernel's or exceeds [`SHARED_LIMIT`] (the pipeline's: what the GPU allows, checked at
    /// launch), or the grid is too small for the per-warp `u32`
    /// bins of [`HistKernel::Warp`] and [`HistKernel::Vec16`] (a warp would count 2³² bytes:
    /// launch more blocks); a driver error.
    pub fn new(
        target: &'a Target,
        kernel: HistKernel,
        src: &'a Buffer<u8>,
        len: usize,
        bins: Bins,
        cfg: LaunchConfig,
    ) -> Result<HistogramLaunch<'a>> {
        src.check_prefix(len, || format!("a histogram of {len} bytes"))?;
        let threads = cfg.block.count();
        let want = kernel.shared_bytes(bins, cfg.block.x);
        let name = kernel.name();
        if threads != cfg.block.x as u64 || cfg.shared_bytes != want {
            return Err(Error::InvalidInput(format!(
                "{name} over {cfg:?}: it needs a 1-D block and {want} bytes of shared memory"
            )));
        }
        if want > SHARED_LIMIT && kernel != HistKernel::Pipeline {
            return Err(Error::InvalidInput(format!(
                "{name} with {} threads per block needs {want} bytes of shared memory, over the \
                 {SHARED_LIMIT} a block gets: use smaller blocks",
                cfg.block.x
            )));
        }
        if kernel == HistKernel::Pipeline && (threads < 64 || !threads.is_multiple_of(32)) {
            return Err(Error::InvalidInput(format!(
                "{name} with {threads} threads per block: it needs whole warps, at least two (a \
                 producer warp and consumers)"
            )));
        }
        if kernel == HistKernel::Pipeline {
            // A warp of the pipeline counts at most its block's tiles and the scalar bytes.
            let per_block = (len as u64).div_ceil(cfg.grid.count().max(1))
                + gpu::lessons::histogram::PIPELINE_STAGE_BYTES as u64
                + 2 * BYTES16 as u64;
            if per_block > u32::MAX as u64 {
                return Err(Error::InvalidInput(format!(
                    "{name} with {} blocks over {len} bytes: a warp could count past the 2^32 of \
                     its u32 bins; launch at least {} blocks",
                    cfg.grid.x,
                    (len as u64).div_ceil(u32::MAX as u64 / 2)
                )));
            }
        }
        if matches!(kernel, HistKernel::Warp | HistKernel::Vec16) {
            // Bytes one warp reads at most: its lanes' grid-stride shares, plus the 16-byte
            // rounding and the scalar head and tail of the vector kernel.
            if (len as u64).div_ceil(cfg.threads().max(1)) > MAX_WARP_SHARE {
                return Err(Error::InvalidInput(format!(
                    "{name} with {} blocks over {len} bytes: a warp would count past the 2^32 of \
                     its u32 bins; launch at least {} blocks",
                    cfg.grid.x,
                    (len as u64).div_ceil(MAX_WARP_SHARE * threads.max(1))
                )));
            }
        }
        let out_len = match kernel {
            HistKernel::SharedRows => cfg.grid.count() as usize * bins.count() as usize,
            _ => bins.count() as usize,
        };
        Ok(HistogramLaunch {
            target,
            kernel,
            src,
            len,
            bins,
            cfg,
            out: target.zeros(out_len)?,
            err: target.zeros(1)?,
        })
    }

    /// The launch shape.
    pub fn config(&self) -> LaunchConfig {
        self.cfg
    }

    /// The kernel.
    pub fn kernel(&self) -> HistKernel {
        self.kernel
    }

    /// Zeroes the bins (or rows) and the error word: call before each
    /// [`HistogramLaunch::launch`].
    ///
    /// # Errors
    /// A driver error.
    pub fn reset(&self) -> Result<()> {
        match self.target {
            // Queued on the library's stream, before any later launch, copy or synchronize.
            Target::Gpu(_) => {
                self.target.clear(&self.out)?;
                if self.kernel == HistKernel::Pipeline {
                    self.target.clear(&self.err)?;
                }
                Ok(())
            }
            Target::Sim => {
                self.target.write(&self.err, &[0])?;
                self.target.write(&self.out, &vec![0; self.out.len()])
            }
        }
    }

    /// Queues the kernel (on the simulator: runs it).
    ///
    /// # Errors
    /// A launch error.
    pub fn launch(&self) -> Result<()> {
        let (t, cfg) = (self.target, self.cfg);
        let (arr, len, out, bins) = (
            self.src.ptr().cast_const(),
            self.len as u64,
            self.out.ptr(),
            self.bins.count(),
        );
        // SAFETY (every launch): `src` holds at least `len` bytes (checked in `new`); `out` holds
        // `bins` u64 (the rows kernel: `grid × bins`), zeroed by `reset`; the shared memory in
        // `cfg` is the kernel's (checked in `new`); the kernels write only `out`, which `result`
        // reads after synchronizing.
        unsafe {
            use gpu::lessons::histogram as k;
            let plain: KernelRef<(*const u8, u64, *mut u64, u32)> = match self.kernel {
                HistKernel::Pipeline => {
                    let bound = wait_bound(gpu::mbarrier::DEFAULT_TIMEOUT_NS);
                    let err = self.err.ptr();
                    return crate::launch!(
                        t,
                        k::histogram_pipeline,
                        cfg,
                        (arr, len, out, bins, bound, err)
                    );
                }
                HistKernel::Global => crate::kernel_ref!(k::histogram_global),
                HistKernel::Shared => crate::kernel_ref!(k::histogram_shared),
                HistKernel::SharedRows => crate::kernel_ref!(k::histogram_shared_rows),
                HistKernel::Warp => crate::kernel_ref!(k::histogram_warp),
                HistKernel::Vec16 => crate::kernel_ref!(k::histogram_vec16),
                HistKernel::Lane => crate::kernel_ref!(k::histogram_lane),
            };
            t.launch_ref(plain, cfg, (arr, len, out, bins))
        }
    }

    /// Where the kernel leaves the bins (on the target), for combining them where they are;
    /// `None` for [`HistKernel::SharedRows`], whose rows the host sums.
    pub fn bins_buffer(&self) -> Option<&Buffer<u64>> {
        match self.kernel {
            HistKernel::SharedRows => None,
            _ => Some(&self.out),
        }
    }

    /// Waits for the kernel and returns the histogram (the instrument's rows summed).
    ///
    /// # Errors
    /// [`Error::WaitTimeout`] if the pipeline's bounded waits gave up, [`Error::InvalidInput`]
    /// if it refused its launch shape; a driver error.
    pub fn result(&self) -> Result<Vec<u64>> {
        let out = self.target.download(&self.out)?;
        if self.kernel == HistKernel::Pipeline {
            Error::from_pipeline_word(self.kernel.name(), self.target.download(&self.err)?[0])?;
        }
        let bins = self.bins.count() as usize;
        Ok(match self.kernel {
            HistKernel::SharedRows => {
                let mut sum = vec![0u64; bins];
                for row in out.chunks_exact(bins) {
                    for (s, v) in sum.iter_mut().zip(row) {
                        *s += v;
                    }
                }
                sum
            }
            _ => out,
        })
    }

    /// Resets, launches and returns the histogram.
    ///
    /// # Errors
    /// As [`HistogramLaunch::reset`], [`HistogramLaunch::launch`], [`HistogramLaunch::result`].
    pub fn run(&self) -> Result<Vec<u64>> {
        self.reset()?;
        self.launch()?;
        self.result()
    }

    /// Resets, then launches event-timed on a GPU; returns the milliseconds (`None` on the
    /// simulator, whose timings mean nothing). Read the histogram with
    /// [`HistogramLaunch::result`].
    ///
    /// # Errors
    /// As [`HistogramLaunch::run`].
    pub fn launch_timed(&self, timer: Option<&mut Timer>) -> Result<Option<f64>> {
        self.reset()?;
        Timer::time_if(self.target, timer, || self.launch())
    }
}
