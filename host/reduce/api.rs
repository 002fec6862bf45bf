//! The reduction API for other projects: `gridsync::reduce::{sum, sum_f64, sum_i32, sum_u64,
//! min, max, min_i32, max_i32}` over host slices, [`sum_with`] to choose the accumulation, and
//! [`reduce_buffer`] for data already on the device.
//!
//! ```no_run
//! # fn main() -> gridsync::Result<()> {
//! let target = gridsync::Target::open(0, false)?;
//! let x = vec![1.23f32; 100_000_000];
//! let s = gridsync::reduce::sum(&target, &x)?; // 123000000 (the f32 nearest 1.23f32 · 10⁸)
//! let m = gridsync::reduce::max(&target, &x)?; // 1.23
//! # Ok(()) }
//! ```
//!
//! **Which kernel.** Every function runs the vectorized single-pass kernel (e) of its reduction
//! (`gpu/src/lessons/reduce/vec.rs`): 16-byte loads, one wave of blocks, the last block finishing — the
//! fastest correct kernel at every size the benchmark measures (docs/perf-notes.md). Its grid
//! shrinks with the input (one block of 256 threads below 1024 vectors), where the launch, not
//! the kernel, is the cost; an empty sum returns 0 without launching anything.
//!
//! **Accuracy.** Integer sums are exact (modulo 2³² or 2⁶⁴: they wrap, as the device's and C's
//! integer additions do); min and max are exact. A float sum `Ŝ` of `n` values with exact sum
//! `S` is a tree of additions of depth `L ≤ n/(4·T) + 40`, `T` the threads launched (≥ 256; about
//! 200 000–270 000 on an H200); with unit roundoff `u` of the accumulator,
//! `|Ŝ − S| ≤ L·u/(1 − L·u) · Σ|xᵢ|` (the standard bound for any summation order), then one
//! rounding of the result:
//!
//! | function | accumulator | bound on `|Ŝ − S|` |
//! |---|---|---|
//! | [`sum`] | `f64` (`u = 2⁻⁵³`) | `2⁻²⁴·|S| + L·2⁻⁵³·Σ|xᵢ|` (the second term below `10⁻¹³·Σ|xᵢ|` for 10⁹ floats on an H200) |
//! | [`sum_with`] `F64` | `f64` | `L·2⁻⁵³·Σ|xᵢ|` (returned as `f64`, not rounded to `f32`) |
//! | [`sum_with`] `Kahan` | compensated `f32` | first order `2⁻²⁴·|S| + L·2⁻⁴⁷·Σ|xᵢ|` |
//! | [`sum_with`] `F32` | `f32` (`u = 2⁻²⁴`) | `L·2⁻²⁴·Σ|xᵢ|` (the book's 10⁸ × 1.23 comes out about 3·10⁻⁷ off) |
//! | [`sum_f64`] | `f64` | `L'·2⁻⁵³·Σ|xᵢ|`, `L' ≤ n/(2·T) + 40` |
//!
//! Where the values cancel (`|S| ≪ Σ|xᵢ|`) the relative error `|Ŝ − S|/|S|` can be far larger
//! than these factors. The order of additions depends only on the launch shape, so one input on
//! one GPU gives the same bits on every call.

use super::Accumulate;
use super::kernels::DeviceReduction;
use super::single_pass::{SinglePass, SinglePassKernel};
use crate::runtime::buffer::Buffer;
use crate::runtime::error::{Error, Result};
use crate::runtime::launch::Target;
use gpu::lessons::reduce::{
    MaxF32, MaxI32, MinF32, MinI32, SumF32, SumF32InF64, SumF32Kahan, SumF64, SumI32, SumU64,
};

/// Runs `R`'s vectorized kernel over `x` (all of it), already on the target.
///
/// For an empty buffer this launches nothing and returns `R::finish(R::identity())`: 0 for sums,
/// NaN for float min/max, `i32::MAX` / `i32::MIN` for integer min/max.
///
/// # Errors
/// A launch or driver error (out of memory for the kernel's few bytes of scratch, a fault).
pub fn reduce_buffer<R: DeviceReduction>(target: &Target, x: &Buffer<R::Item>) -> Result<R::Out> {
    if x.is_empty() {
        return Ok(R::finish(R::identity()));
    }
    SinglePass::<R>::new(target, SinglePassKernel::Vec, x.len(), None)?.run(x, x.len())
}

/// Uploads `data` (after checking that it fits in the GPU's free memory) and reduces it.
fn reduce_slice<R: DeviceReduction>(target: &Target, data: &[R::Item]) -> Result<R::Out> {
    if data.is_empty() {
        return Ok(R::finish(R::identity()));
    }
    if let Target::Gpu(gpu) = target {
        let bytes = std::mem::size_of_val(data) as u64;
        if let Some(why) = crate::runtime::memory::does_not_fit(gpu, bytes)? {
            return Err(Error::InvalidInput(format!(
                "{} values ({bytes} bytes) do not fit on the GPU: {why}",
                data.len()
            )));
        }
    }
    let x = target.upload(data)?;
    reduce_buffer::<R>(target, &x)
}

/// Σ `data`, accumulated in `f64` on the device and rounded once to `f32`. Empty: 0.
///
/// Accuracy: `|Ŝ − S| ≤ 2⁻²⁴·|S| + L·2⁻⁵³·Σ|xᵢ|` ([module docs](self)): on the book's 10⁸ × 1.23
/// the correctly rounded sum. NaN if any element is NaN, ±∞ if one is (and no opposite one).
///
/// # Errors
/// [`Error::InvalidInput`] if `data` does not fit in the GPU's free memory; a driver error.
pub fn sum(target: &Target, data: &[f32]) -> Result<f32> {
    Ok(reduce_slice::<SumF32InF64>(target, data)? as f32)
}

/// Σ `data` with the accumulation chosen, as `f64` (exact for the `f32` results of `F32` and
/// `Kahan`). Empty: 0. Bounds in the [module docs](self).
///
/// # Errors
/// As [`sum`].
pub fn sum_with(target: &Target, data: &[f32], acc: Accumulate) -> Result<f64> {
    Ok(match acc {
        Accumulate::F32 => reduce_slice::<SumF32>(target, data)? as f64,
        Accumulate::F64 => reduce_slice::<SumF32InF64>(target, data)?,
        Accumulate::Kahan => reduce_slice::<SumF32Kahan>(target, data)? as f64,
    })
}

/// Σ `data` in `f64`. Empty: 0. Accuracy: `L'·2⁻⁵³·Σ|xᵢ|`, `L' ≤ n/(2·T) + 40`.
///
/// # Errors
/// As [`sum`].
pub fn sum_f64(target: &Target, data: &[f64]) -> Result<f64> {
    reduce_slice::<SumF64>(target, data)
}

/// Σ `data` modulo 2³² (wrapping, exact). Empty: 0.
///
/// # Errors
/// As [`sum`].
pub fn sum_i32(target: &Target, data: &[i32]) -> Result<i32> {
    reduce_slice::<SumI32>(target, data)
}

/// Σ `data` modulo 2⁶⁴ (wrapping, exact). Empty: 0.
///
/// # Errors
/// As [`sum`].
pub fn sum_u64(target: &Target, data: &[u64]) -> Result<u64> {
    reduce_slice::<SumU64>(target, data)
}

/// Fails on an empty input: a minimum or maximum of nothing has no value.
fn non_empty<T>(data: &[T], what: &str) -> Result<()> {
    if data.is_empty() {
        Err(Error::InvalidInput(format!("the {what} of an empty array")))
    } else {
        Ok(())
    }
}

/// The smallest element, exactly. NaNs are skipped (IEEE `minNum`): the result is NaN only if
/// every element is. `-0.0` and `+0.0` compare equal; either may be returned.
///
/// # Errors
/// [`Error::InvalidInput`] for an empty `data`; as [`sum`].
pub fn min(target: &Target, data: &[f32]) -> Result<f32> {
    non_empty(data, "minimum")?;
    reduce_slice::<MinF32>(target, data)
}

/// The largest element, exactly; NaNs skipped as in [`min`].
///
/// # Errors
/// [`Error::InvalidInput`] for an empty `data`; as [`sum`].
pub fn max(target: &Target, data: &[f32]) -> Result<f32> {
    non_empty(data, "maximum")?;
    reduce_slice::<MaxF32>(target, data)
}

/// The smallest element.
///
/// # Errors
/// [`Error::InvalidInput`] for an empty `data`; as [`sum`].
pub fn min_i32(target: &Target, data: &[i32]) -> Result<i32> {
    non_empty(data, "minimum")?;
    reduce_slice::<MinI32>(target, data)
}

/// The largest element.
///
/// # Errors
/// [`Error::InvalidInput`] for an empty `data`; as [`sum`].
pub fn max_i32(target: &Target, data: &[i32]) -> Result<i32> {
    non_empty(data, "maximum")?;
    reduce_slice::<MaxI32>(target, data)
}
