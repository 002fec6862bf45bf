//! [`DotLaunch`]: one dot kernel, its output and its mutex, launched any number of times.

use super::DotKernel;
use crate::primitives::lock::DeviceMutex;
use crate::runtime::buffer::Buffer;
use crate::runtime::error::{Error, Result};
use crate::runtime::launch::Target;
use crate::runtime::timer::Timer;
use gpu::LaunchConfig;

/// One kernel over one pair of arrays on the target, ready to run any number of times.
pub struct DotLaunch<'a> {
    target: &'a Target,
    kernel: DotKernel,
    a: &'a Buffer<f32>,
    b: &'a Buffer<f32>,
    cfg: LaunchConfig,
    /// `c[0]`, or `partial_c` (one float per block) for `dot_partial`.
    c: Buffer<f32>,
    mutex: Option<DeviceMutex>,
}

impl<'a> DotLaunch<'a> {
    /// Prepares `kernel` over `a` and `b` with launch shape `cfg`.
    ///
    /// # Errors
    /// [`Error::InvalidInput`] if the arrays' lengths differ; a driver error.
    pub fn new(
        target: &'a Target,
        kernel: DotKernel,
        a: &'a Buffer<f32>,
        b: &'a Buffer<f32>,
        cfg: LaunchConfig,
    ) -> Result<DotLaunch<'a>> {
        if a.len() != b.len() {
            return Err(Error::InvalidInput(format!(
                "a dot of arrays of {} and {} elements",
                a.len(),
                b.len()
            )));
        }
        let c_len = match kernel {
            DotKernel::Partial => cfg.grid.x as usize,
            _ => 1,
        };
        let mutex = match kernel {
            DotKernel::Mutex => Some(DeviceMutex::new(target)?),
            _ => None,
        };
        Ok(DotLaunch {
            target,
            kernel,
            a,
            b,
            cfg,
            c: target.zeros(c_len)?,
            mutex,
        })
    }

    /// The launch shape.
    pub fn config(&self) -> LaunchConfig {
        self.cfg
    }

    /// Zeroes `c` (the source's `kernel_zero_init`) and resets the mutex.
    ///
    /// # Errors
    /// A driver error.
    pub fn reset(&self) -> Result<()> {
        if let Some(m) = &self.mutex {
            m.reset(self.target)?;
        }
        self.target.write(&self.c, &vec![0.0; self.c.len()])
    }

    /// Queues the kernel (on the simulator: runs it).
    ///
    /// # Errors
    /// A launch error.
    pub fn launch(&self) -> Result<()> {
        let (t, cfg) = (self.target, self.cfg);
        let (a, b, c) = (
            self.a.ptr().cast_const(),
            self.b.ptr().cast_const(),
            self.c.ptr(),
        );
        let n = self.a.len() as u64;
        // SAFETY (every launch): `a` and `b` hold `n` floats (checked in `new`); `c` holds one
        // float, or one per block for `dot_partial`; the mutex one `MutexState`; all live as long
        // as `self`, and `result` synchronizes before they are read. `cfg` carries the dynamic
        // shared memory each kernel needs and, for the source kernels, a block of 256 threads.
        unsafe {
            match (self.kernel, &self.mutex) {
                (DotKernel::Partial, _) => {
                    crate::launch!(t, gpu::lessons::dot::dot_partial, cfg, (a, b, n, c))
                }
                (DotKernel::Mutex, Some(m)) => {
                    crate::launch!(t, gpu::lessons::dot::dot_mutex, cfg, (m.ptr(), a, b, n, c))
                }
                (DotKernel::Mutex, None) => Err(Error::InvalidInput(
                    "the dot_mutex kernel's mutex is missing".into(),
                )),
                (DotKernel::Atomic, _) => {
                    crate::launch!(t, gpu::lessons::dot::dot_atomic, cfg, (a, b, n, c))
                }
                (DotKernel::Vec4, _) => {
                    crate::launch!(t, gpu::lessons::dot::dot_vec4, cfg, (a, b, n, c))
                }
            }
        }
    }

    /// Waits for the kernel, checks the mutex, and returns the dot (for `dot_partial`, the
    /// blocks' sums added on the host in float64).
    ///
    /// # Errors
    /// [`Error::LockTimeout`] / [`Error::LockHeld`] from `dot_mutex`; a driver error.
    pub fn result(&self) -> Result<f64> {
        if let Some(m) = &self.mutex {
            m.check(self.target)?;
        }
        let c = self.target.download(&self.c)?;
        Ok(c.iter().map(|&x| x as f64).sum())
    }

    /// Resets, launches (event-timed on a GPU when given a timer) and returns the dot and the
    /// milliseconds (`None` on the simulator).
    ///
    /// # Errors
    /// As [`DotLaunch::reset`], [`DotLaunch::launch`] and [`DotLaunch::result`].
    pub fn run_timed(&self, timer: Option<&mut Timer>) -> Result<(f64, Option<f64>)> {
        self.reset()?;
        let ms = Timer::time_if(self.target, timer, || self.launch())?;
        Ok((self.result()?, ms))
    }
}
