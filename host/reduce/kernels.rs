//! [`DeviceReduction`]: each [`Reduction`] the device crate exposes, tied to its kernels — the one
//! place that names them for launching.

use crate::runtime::buffer::Plain;
use crate::runtime::error::{Error, Result};
use crate::runtime::launch::Target;
use crate::runtime::wait::wait_bound;
use gpu::LaunchConfig;
use gpu::lessons::reduce::{self as r, Reduction};

/// The arguments every single-pass kernel takes, in order: `x`, `n`, `partials`, `count`,
/// `result`.
pub type SinglePassArgs<R> = (
    *const <R as Reduction>::Item,
    u64,
    *mut <R as Reduction>::Acc,
    *mut u32,
    *mut <R as Reduction>::Out,
);

/// A [`Reduction`] with single-pass kernels: the vectorized (e) for every one, the scalar (d)
/// and the pipelined (f, sm_90) for the `f32` sums.
pub trait DeviceReduction: Reduction<Item: Plain, Out: Plain> + Sized {
    /// The (e) kernel, `reduce_vec_*`.
    const VEC: gpu::Kernel;
    /// The (d) kernel, `reduce_last_block_*`, where there is one.
    const LAST_BLOCK: Option<gpu::Kernel>;
    /// The (f) kernel, `reduce_pipeline_*`, where there is one.
    const PIPELINE: Option<gpu::Kernel>;

    /// Launches `kernel` (one of the three above) with `args`; (f) also gets the bound of its
    /// waits, [`wait_bound`]`(gpu::mbarrier::DEFAULT_TIMEOUT_NS)` (1 s, stretched under a
    /// sanitizer), and the error word `err`.
    ///
    /// # Safety
    /// The kernel's contract: `x` holds `n` elements, `partials` room for `cfg.grid.x`
    /// accumulators, `count` a `u32` that is 0, `result` one value, `err` a zeroed `u32`; `cfg`
    /// has the shared memory.
    ///
    /// # Errors
    /// [`Error::InvalidInput`] for a kernel that is not this reduction's; a launch error.
    unsafe fn launch(
        target: &Target,
        kernel: gpu::Kernel,
        cfg: LaunchConfig,
        args: SinglePassArgs<Self>,
        err: *mut u32,
    ) -> Result<()>;
}

macro_rules! optional_kernel {
    () => {
        None
    };
    ($name:ident) => {
        Some(kernel_of(stringify!($name)))
    };
}

macro_rules! device_reduction {
    ($($r:ty => $vec:ident $(, $last:ident, $pipe:ident)?;)*) => {$(
        impl DeviceReduction for $r {
            const VEC: gpu::Kernel = kernel_of(stringify!($vec));
            const LAST_BLOCK: Option<gpu::Kernel> = optional_kernel!($($last)?);
            const PIPELINE: Option<gpu::Kernel> = optional_kernel!($($pipe)?);

            unsafe fn launch(
                target: &Target,
                kernel: gpu::Kernel,
                cfg: LaunchConfig,
                (x, n, partials, count, result): SinglePassArgs<Self>,
                err: *mut u32,
            ) -> Result<()> {
                let _ = err;
                // SAFETY (every arm): forwarded to the caller.
                if kernel == Self::VEC {
                    return unsafe {
                        crate::launch!(target, gpu::lessons::reduce::$vec, cfg, (x, n, partials, count, result))
                    };
                }
                $(
                    if Some(kernel) == Self::LAST_BLOCK {
                        return unsafe {
                            crate::launch!(target, gpu::lessons::reduce::$last, cfg, (x, n, partials, count, result))
                        };
                    }
                    if Some(kernel) == Self::PIPELINE {
                        let timeout_ns = wait_bound(gpu::mbarrier::DEFAULT_TIMEOUT_NS);
                        return unsafe {
                            crate::launch!(target, gpu::lessons::reduce::$pipe, cfg, (x, n, partials, count, result, timeout_ns, err))
                        };
                    }
                )?
                Err(Error::InvalidInput(format!(
                    "{} is not a kernel of {}",
                    kernel.name(),
                    std::any::type_name::<$r>()
                )))
            }
        }
    )*};
}

/// The [`gpu::Kernel`] named `name`, at compile time (a name that is not one fails the build).
const fn kernel_of(name: &str) -> gpu::Kernel {
    let mut k = 0;
    while k < gpu::Kernel::ALL.len() {
        if const_str_eq(gpu::Kernel::ALL[k].name(), name) {
            return gpu::Kernel::ALL[k];
        }
        k += 1;
    }
    panic!("a single-pass kernel missing from gpu::Kernel")
}

const fn const_str_eq(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

device_reduction! {
    r::SumF32 => reduce_vec_sum_f32, reduce_last_block_sum_f32, reduce_pipeline_sum_f32;
    r::SumF32InF64 => reduce_vec_sum_f32_in_f64, reduce_last_block_sum_f32_in_f64, reduce_pipeline_sum_f32_in_f64;
    r::SumF32Kahan => reduce_vec_sum_f32_kahan, reduce_last_block_sum_f32_kahan, reduce_pipeline_sum_f32_kahan;
    r::SumF64 => reduce_vec_sum_f64;
    r::SumI32 => reduce_vec_sum_i32;
    r::SumU64 => reduce_vec_sum_u64;
    r::MinF32 => reduce_vec_min_f32;
    r::MaxF32 => reduce_vec_max_f32;
    r::MinI32 => reduce_vec_min_i32;
    r::MaxI32 => reduce_vec_max_i32;
}
