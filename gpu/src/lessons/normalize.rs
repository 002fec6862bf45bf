//! Normalizing an array in place, `a ← a / Σa`: the Numba tutorial's three-kernel pipeline, and
//! the two-kernel one that needs no single-thread kernel.
//!
//! Source: the Numba tutorial, part 3 ("streams and events"). Its pipeline, on one stream:
//!
//! 1. [`partial_reduce`](crate::lessons::reduce::partial_reduce) over `[32 * 40, 256]`: one partial sum
//!    per block, 1280 of them;
//! 2. [`single_thread_sum`] on **one thread of one block**: adds the 1280 partials;
//! 3. [`divide_by`] over `[32 * 40, 256]`: every element divided by that sum.
//!
//! Step 2 is the weak point. One thread adds 1280 floats one after another, each addition
//! waiting for a global load: a few microseconds in which the other 16 895 thread slots of an
//! H200 do nothing, plus a third launch. The two-kernel pipeline replaces steps 1 and 2 with the
//! single-pass reduction of `gpu/src/lessons/reduce/vec.rs`
//! ([`reduce_vec_sum_f32_in_f64`](crate::lessons::reduce::reduce_vec_sum_f32_in_f64)): each block
//! writes its partial and takes a ticket, and the block that draws the last ticket adds the
//! partials with all of its threads. The sum is ready when that kernel ends, and it is an `f64`.
//! Step 3 becomes [`divide_by_sum`]: 16-byte loads and stores, and one `f64` multiplication per
//! element instead of an `f32` division.
//!
//! **A zero sum.** The source divides unconditionally, so an array that sums to 0 (or whose sum
//! overflowed to ∞, or is NaN) becomes ±∞ and NaN everywhere. Both divide kernels here leave
//! such an array unchanged instead: every thread reads the same sum, sees that it is not a
//! finite non-zero number, and returns. The host reads the sum back and reports the error. An
//! empty array never reaches the device: the host rejects it before launching.

use crate::index::{global_id_x, grid_stride, threads_per_grid_x};
use crate::mem::Ptr;
use crate::vector::{F32x4, Split4};

/// Whether `s` can divide: finite and not zero.
#[inline(always)]
pub fn usable_divisor(s: f64) -> bool {
    s.is_finite() && s != 0.0
}

kernel! {
    /// Adds the `n` partial sums in `partial_reduction` and writes the total to `sum[0]`, on one
    /// thread: launch it as `[1, 1]`.
    ///
    /// Source: Numba tutorial, part 3, `single_thread_sum(partial_reduction, sum)`: `sum[0] =
    /// 0.0`, then `sum[0] += element` for every partial, in `f32` (the arrays are `float32`).
    /// Here the running total stays in a register and is stored once, which is what the source's
    /// repeated `sum[0] +=` compiles to on one thread anyway. It is a 1280-step chain of dependent
    /// additions, each after a global load: the point of the two-kernel pipeline is not to need it.
    pub unsafe fn single_thread_sum(partial_reduction: *const f32, n: u64, sum: *mut f32) {
        if global_id_x() != 0 {
            return;
        }
        let (partial_reduction, sum) = (Ptr::new(partial_reduction.cast_mut()), Ptr::new(sum));
        let mut total = 0.0f32;
        for i in 0..n as usize {
            // SAFETY: `partial_reduction` holds `n` floats.
            total += unsafe { partial_reduction.add(i).load() };
        }
        // SAFETY: `sum` is valid for one write, by this one thread.
        unsafe { sum.store(total) };
    }
}

kernel! {
    /// `array[i] /= val_array[0]` for every `i < size`, grid-stride.
    ///
    /// Source: Numba tutorial, part 3, `divide_by(array, val_array)`, launched as
    /// `[32 * 40, 256]`. One change: a sum that is zero, infinite or NaN leaves the array
    /// unchanged (see the [module docs](self)); the source would fill it with ∞ and NaN.
    pub unsafe fn divide_by(array: *mut f32, size: u64, val_array: *const f32) {
        let (array, val_array) = (Ptr::new(array), Ptr::new(val_array.cast_mut()));
        // SAFETY: `val_array` holds the sum; nothing writes it during this launch.
        let val = unsafe { val_array.load() };
        if !usable_divisor(val as f64) {
            return;
        }
        for i in grid_stride(size as usize) {
            // SAFETY: `i < size`; each element belongs to exactly one thread.
            unsafe { array.add(i).store(array.add(i).load() / val) };
        }
    }
}

/// Four independent 16-byte loads per thread before any store: 64 bytes in flight per thread,
/// as in the reduction that runs just before.
const DIVIDE_UNROLL: usize = 4;

kernel! {
    /// `array[i] = array[i] · (1 / sum[0])` for every `i < size`: the two-kernel pipeline's
    /// second step.
    ///
    /// What changed from [`divide_by`]: the sum is the `f64` the single-pass reduction wrote;
    /// its reciprocal is taken once per thread, and each element is converted to `f64`,
    /// multiplied and rounded once back to `f32` — the correctly rounded quotient except in rare
    /// double-rounding ties, at the cost of one multiplication instead of an `f32` division (a
    /// dozen instructions). The body of the array moves as `float4`, four loads in flight per
    /// thread; the misaligned head and the tail go one float at a time. A sum that is zero,
    /// infinite or NaN leaves the array unchanged.
    pub unsafe fn divide_by_sum(array: *mut f32, size: u64, sum: *const f64) {
        let (array, sum) = (Ptr::new(array), Ptr::new(sum.cast_mut()));
        // SAFETY: `sum` holds the sum; nothing writes it during this launch.
        let s = unsafe { sum.load() };
        if !usable_divisor(s) {
            return;
        }
        let r = 1.0 / s;
        let scale = |v: f32| (v as f64 * r) as f32;
        let split = Split4::of(array.as_ptr(), size as usize);
        for k in grid_stride(split.scalars()) {
            let i = split.scalar_index(k);
            // SAFETY: `scalar_index(k) < size`; each element belongs to exactly one thread.
            unsafe { array.add(i).store(scale(array.add(i).load())) };
        }
        // SAFETY: `array + head` is 16-byte aligned (that is what `head` is).
        let body = unsafe { array.add(split.head) }.cast::<F32x4>();
        let stride = threads_per_grid_x();
        let mut v = global_id_x();
        // All loads of a step before any store: the stores could alias the later loads as far
        // as the compiler knows, so a load-store-load-store loop would keep one load in flight.
        while v + (DIVIDE_UNROLL - 1) * stride < split.body {
            // SAFETY: `v + 3·stride < body`: every vector lies inside the array, and each
            // belongs to one thread.
            unsafe {
                let p = [v, v + stride, v + 2 * stride, v + 3 * stride].map(|i| body.add(i));
                let (x0, x1, x2, x3) = (p[0].load(), p[1].load(), p[2].load(), p[3].load());
                p[0].store(F32x4(x0.0.map(scale)));
                p[1].store(F32x4(x1.0.map(scale)));
                p[2].store(F32x4(x2.0.map(scale)));
                p[3].store(F32x4(x3.0.map(scale)));
            }
            v += DIVIDE_UNROLL * stride;
        }
        while v < split.body {
            // SAFETY: `v < body`.
            unsafe {
                let F32x4(lanes) = body.add(v).load();
                body.add(v).store(F32x4(lanes.map(scale)));
            }
            v += stride;
        }
    }
}
