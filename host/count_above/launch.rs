//! [`CountLaunch`]: one counting kernel, its counter and its mutex, launched any number of
//! times.

use super::CountKernel;
use crate::primitives::lock::{DeviceMutex, MutexBounds};
use crate::runtime::args::KernelRef;
use crate::runtime::buffer::Buffer;
use crate::runtime::error::{Error, Result};
use crate::runtime::launch::Target;
use crate::runtime::timer::Timer;
use gpu::LaunchConfig;

/// One kernel over the first `len` floats of one input on the target, ready to run any number
/// of times: the counter (and, for the lock kernel, the mutex) are allocated once.
pub struct CountLaunch<'a> {
    target: &'a Target,
    kernel: CountKernel,
    src: &'a Buffer<f32>,
    len: usize,
    threshold: f32,
    cfg: LaunchConfig,
    cnt: Buffer<u64>,
    mutex: Option<DeviceMutex>,
}

impl<'a> CountLaunch<'a> {
    /// Prepares `kernel` over `src[..len]` with launch shape `cfg`; `lock` bounds the lock
    /// kernel's mutex (the other kernels take no lock).
    ///
    /// # Errors
    /// [`Error::InvalidInput`] if `len` exceeds the buffer; as [`MutexBounds::state`]; a driver
    /// error.
    pub fn new(
        target: &'a Target,
        kernel: CountKernel,
        src: &'a Buffer<f32>,
        len: usize,
        threshold: f32,
        cfg: LaunchConfig,
        lock: MutexBounds,
    ) -> Result<CountLaunch<'a>> {
        src.check_prefix(len, || format!("counting {len} elements"))?;
        let mutex = match kernel {
            CountKernel::Mutex => Some(DeviceMutex::with_bounds(target, lock)?),
            _ => None,
        };
        Ok(CountLaunch {
            target,
            kernel,
            src,
            len,
            threshold,
            cfg,
            cnt: target.zeros(1)?,
            mutex,
        })
    }

    /// The launch shape.
    pub fn config(&self) -> LaunchConfig {
        self.cfg
    }

    /// Zeroes the counter (and resets the mutex): call before each [`CountLaunch::launch`].
    ///
    /// # Errors
    /// A driver error.
    pub fn reset(&self) -> Result<()> {
        if let Some(m) = &self.mutex {
            m.reset(self.target)?;
        }
        // Queued, not waited for: the launch after it is ordered behind it on the stream.
        self.target.clear(&self.cnt)
    }

    /// Queues the kernel (on the simulator: runs it).
    ///
    /// # Errors
    /// A launch error.
    pub fn launch(&self) -> Result<()> {
        let (t, src, len, thr, cnt) = (
            self.target,
            self.src.ptr().cast_const(),
            self.len as u64,
            self.threshold,
            self.cnt.ptr(),
        );
        // SAFETY (every launch): `src` holds at least `len` floats (checked in `new`), `cnt` one
        // u64 and the mutex one `MutexState`, all owned by `self` or borrowed for its life;
        // the kernels write only `cnt` and the mutex; `result` synchronizes before they are
        // read or freed. The shared memory of the block kernels is in `cfg`.
        unsafe {
            use gpu::lessons::count_above as k;
            let one_count: KernelRef<(*const f32, u64, f32, *mut u64)> =
                match (self.kernel, &self.mutex) {
                    (CountKernel::Mutex, Some(m)) => {
                        let mutex = m.ptr();
                        return crate::launch!(
                            t,
                            k::gt_thr_cnt_mutex,
                            self.cfg,
                            (src, len, thr, cnt, mutex)
                        );
                    }
                    (CountKernel::Mutex, None) => {
                        let why = "the lock kernel's mutex is missing";
                        return Err(Error::InvalidInput(why.into()));
                    }
                    (CountKernel::Atomic, _) => crate::kernel_ref!(k::gt_thr_cnt_atomic),
                    (CountKernel::Warp, _) => crate::kernel_ref!(k::gt_thr_cnt_warp),
                    (CountKernel::Block, _) => crate::kernel_ref!(k::gt_thr_cnt_block),
                    (CountKernel::Vec4, _) => crate::kernel_ref!(k::gt_thr_cnt_vec4),
                };
            t.launch_ref(one_count, self.cfg, (src, len, thr, cnt))
        }
    }

    /// Where the kernel leaves its count (one `u64`, on the target), for combining it where it
    /// is.
    pub fn count_buffer(&self) -> &Buffer<u64> {
        &self.cnt
    }

    /// Waits for the kernel, checks the mutex, and returns the count.
    ///
    /// # Errors
    /// [`Error::LockTimeout`] / [`Error::LockHeld`] from the lock kernel; a driver error.
    pub fn result(&self) -> Result<u64> {
        if let Some(m) = &self.mutex {
            m.check(self.target)?;
        }
        Ok(self.target.download(&self.cnt)?[0])
    }

    /// Resets, launches and returns the count.
    ///
    /// # Errors
    /// As [`CountLaunch::reset`], [`CountLaunch::launch`] and [`CountLaunch::result`].
    pub fn run(&self) -> Result<u64> {
        self.reset()?;
        self.launch()?;
        self.result()
    }

    /// Like [`CountLaunch::run`], event-timed on a GPU: the count and the milliseconds (`None`
    /// on the simulator, whose timings mean nothing).
    ///
    /// # Errors
    /// As [`CountLaunch::run`].
    pub fn run_timed(&self, timer: Option<&mut Timer>) -> Result<(u64, Option<f64>)> {
        self.reset()?;
        let ms = Timer::time_if(self.target, timer, || self.launch())?;
        Ok((self.result()?, ms))
    }
}
