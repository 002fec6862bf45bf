//! (e) The single-pass, last-block reduction with 16-byte loads, four in flight per thread: the
//! fast one, for every element type and reduction the library exposes.

use super::last_block::finish_in_last_block;
use super::ops::{Element, Reduction};
use crate::index::{global_id_x, threads_per_grid_x};
use crate::mem::Ptr;
use crate::vector::{Split16, grid_stride_each};

/// 16-byte loads each thread issues back to back before it combines any: 64 bytes in flight per
/// thread, over 100 KiB per SM at full occupancy — more than an H200's memory latency ×
/// bandwidth per SM needs (about 30 KiB).
pub const VEC_UNROLL: usize = 4;

/// (e)'s body: head and tail one element at a time; the body [`VEC_UNROLL`] vectors per step,
/// combined as a tree (`(v0 ∘ v1) ∘ (v2 ∘ v3)`, each vector a tree of its lanes) before joining
/// the thread's accumulator; then [`finish_in_last_block`].
///
/// The tree per step is for accuracy as much as for speed: a thread's running sum takes one
/// addition per 16 `f32` instead of one per element, so its chain of roundings is 16× shorter —
/// at 10⁸ elements about 25 additions per thread.
///
/// # Safety
/// `x` holds `n` elements; the rest as [`finish_in_last_block`].
#[inline(always)]
unsafe fn vec_reduce<R: Reduction>(
    x: *const R::Item,
    n: u64,
    partials: *mut R::Acc,
    count: *mut u32,
    result: *mut R::Out,
) {
    let x = Ptr::new(x.cast_mut());
    let split = Split16::<<R::Item as Element>::Vec16>::of(x.as_ptr(), n as usize);
    let mut acc = R::identity();
    grid_stride_each(split.scalars(), |k| {
        // SAFETY: `scalar_index(k) < n` for `k < scalars()`.
        acc = R::combine(acc, R::lift(unsafe { x.add(split.scalar_index(k)).load() }));
    });
    // SAFETY (every load): `combine_strided` asks only for `v < split.body`; `split` was made
    // for `x` and `n`.
    let load = |v: usize| unsafe { split.load(x.as_ptr(), v) };
    acc = combine_strided::<R>(acc, load, global_id_x(), split.body, threads_per_grid_x());
    // SAFETY: forwarded.
    unsafe { finish_in_last_block::<R>(acc, partials, count, result) }
}

/// Combines into `acc` the vectors `load(v)` for `v = start, start + stride, …` below `end`:
/// [`VEC_UNROLL`] loads issued back to back, added as a tree `(v0 ∘ v1) ∘ (v2 ∘ v3)` before
/// joining `acc`, then the rest one at a time. (e)'s loop over global memory and (f)'s over a
/// landed shared-memory stage.
#[inline(always)]
pub(super) fn combine_strided<R: Reduction>(
    mut acc: R::Acc,
    load: impl Fn(usize) -> <R::Item as Element>::Vec16,
    start: usize,
    end: usize,
    stride: usize,
) -> R::Acc {
    let mut v = start;
    while v + (VEC_UNROLL - 1) * stride < end {
        // Four independent loads first, so that all four are in flight at once.
        let (v0, v1, v2, v3) = (
            load(v),
            load(v + stride),
            load(v + 2 * stride),
            load(v + 3 * stride),
        );
        let left = R::combine(R::lift_vec(v0), R::lift_vec(v1));
        let right = R::combine(R::lift_vec(v2), R::lift_vec(v3));
        acc = R::combine(acc, R::combine(left, right));
        v += VEC_UNROLL * stride;
    }
    while v < end {
        acc = R::combine(acc, R::lift_vec(load(v)));
        v += stride;
    }
    acc
}

macro_rules! vec_kernels {
    ($($(#[$doc:meta])* $name:ident: $r:ty;)*) => {$(
        kernel! {
            $(#[$doc])*
            ///
            /// Arguments: `x` holds `n` elements (any alignment of the element type); `partials`
            /// room for `gridDim.x` accumulators; `count` a `u32`, 0 before the first launch
            /// (each launch leaves it 0); `result` one value. Dynamic shared memory:
            /// `last_block_shared_bytes::<Acc>(blockDim.x)`; any grid, any block size.
            pub unsafe fn $name(
                x: *const <$r as Reduction>::Item,
                n: u64,
                partials: *mut <$r as Reduction>::Acc,
                count: *mut u32,
                result: *mut <$r as Reduction>::Out,
            ) {
                // SAFETY: forwarded to the launch's contract.
                unsafe { vec_reduce::<$r>(x, n, partials, count, result) }
            }
        }
    )*};
}

vec_kernels! {
    /// Σ `f32` in `f32`: [`reduce_last_block_sum_f32`](super::reduce_last_block_sum_f32) with
    /// 16-byte loads.
    ///
    /// What changed from (d): the body of the array is read as `float4` (`ld.global.v4.f32`),
    /// four loads in flight per thread, so each thread keeps 64 bytes in flight and spends a
    /// quarter of the instructions per byte; the misaligned head and the tail are read one float
    /// at a time. Each step's 16 floats are added as a tree before joining the running sum.
    reduce_vec_sum_f32: super::ops::SumF32;
    /// Σ `f32` accumulated in `f64` (each vector's lanes converted, added in `f64`): the one
    /// `gridsync::reduce::sum` uses.
    reduce_vec_sum_f32_in_f64: super::ops::SumF32InF64;
    /// Σ `f32` with Neumaier-compensated `f32` accumulators.
    reduce_vec_sum_f32_kahan: super::ops::SumF32Kahan;
    /// Σ `f64` (`double2` loads).
    reduce_vec_sum_f64: super::ops::SumF64;
    /// Σ `i32`, wrapping (`int4` loads).
    reduce_vec_sum_i32: super::ops::SumI32;
    /// Σ `u64`, wrapping (`ulonglong2` loads).
    reduce_vec_sum_u64: super::ops::SumU64;
    /// The smallest `f32`, NaNs skipped.
    reduce_vec_min_f32: super::ops::MinF32;
    /// The largest `f32`, NaNs skipped.
    reduce_vec_max_f32: super::ops::MaxF32;
    /// The smallest `i32`.
    reduce_vec_min_i32: super::ops::MinI32;
    /// The largest `i32`.
    reduce_vec_max_i32: super::ops::MaxI32;
}
