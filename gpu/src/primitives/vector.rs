//! Streaming `f32` arrays with 16-byte loads: CUDA's `float4` trick.
//!
//! A memory-bound kernel is fast when enough bytes are in flight to cover the memory latency.
//! One 16-byte load (`ld.global.v4.f32`) asks for four floats with one instruction, a quarter
//! of the instructions and address arithmetic of four scalar loads; several of them issued
//! before any result is used ([`grid_stride_unrolled`]) keep tens of bytes per thread in flight.
//!
//! A 16-byte load must be 16-byte aligned. An array's start need not be (a sub-slice, an
//! offset view), nor its length a multiple of four, so [`Split4`] cuts the index range into a
//! scalar **head** (up to the first 16-byte boundary), a **body** of whole [`F32x4`], and a
//! scalar **tail**. Two arrays read side by side (a dot product) can share one body only if
//! their addresses are equally misaligned; otherwise everything is "head" and read one float at
//! a time — correct, slower, and never the case for the host's allocations (256-byte aligned).

use crate::index::{global_id_x, threads_per_grid_x};
use crate::mem::Ptr;

/// The floats of one 16-byte load.
pub const F32X4_LANES: usize = 4;
/// The alignment, in bytes, a 16-byte load needs.
pub const F32X4_ALIGN: usize = 16;

/// Four `f32` at a 16-byte-aligned address: CUDA's `float4`. Reading one through a pointer is
/// a single `ld.global.v4.f32` (LLVM's load-store vectorizer merges the four lanes because the
/// type's alignment promises 16).
#[repr(C, align(16))]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct F32x4(pub [f32; 4]);

const _: () = assert!(size_of::<F32x4>() == F32X4_ALIGN && align_of::<F32x4>() == F32X4_ALIGN);

/// How `len` floats starting at some address split into a scalar head, a body of [`F32x4`]
/// and a scalar tail. See the [module docs](self).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Split4 {
    /// Floats before the first 16-byte boundary (read one at a time).
    pub head: usize,
    /// Whole [`F32x4`] after the head.
    pub body: usize,
    /// All floats.
    pub len: usize,
}

impl Split4 {
    /// The split of `len` floats starting at `p`.
    #[inline(always)]
    pub fn of(p: *const f32, len: usize) -> Split4 {
        let misaligned = (p as usize % F32X4_ALIGN) / size_of::<f32>();
        let head = ((F32X4_LANES - misaligned) % F32X4_LANES).min(len);
        Split4 {
            head,
            body: (len - head) / F32X4_LANES,
            len,
        }
    }

    /// The split shared by two arrays read at the same indices: [`Split4::of`] `a` if `b` is
    /// misaligned by the same amount, else all head (scalar).
    #[inline(always)]
    pub fn of_pair(a: *const f32, b: *const f32, len: usize) -> Split4 {
        if (a as usize ^ b as usize).is_multiple_of(F32X4_ALIGN) {
            Split4::of(a, len)
        } else {
            Split4 {
                head: len,
                body: 0,
                len,
            }
        }
    }

    /// The index of the first tail float.
    #[inline(always)]
    pub fn tail_start(&self) -> usize {
        self.head + self.body * F32X4_LANES
    }

    /// How many floats are read one at a time: head plus tail.
    #[inline(always)]
    pub fn scalars(&self) -> usize {
        self.head + (self.len - self.tail_start())
    }

    /// The array index of scalar number `k` (`k < self.scalars()`): the head first, then the
    /// tail.
    #[inline(always)]
    pub fn scalar_index(&self, k: usize) -> usize {
        if k < self.head {
            k
        } else {
            self.tail_start() + (k - self.head)
        }
    }

    /// The body's `v`-th [`F32x4`] of the array at `p` (the array this split was made for):
    /// one 16-byte plain load, which the simulator reports to the checker as such, naming the
    /// caller's line.
    ///
    /// # Safety
    /// `p` is the address the split was made for, valid for `self.len` floats, and
    /// `v < self.body`.
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub unsafe fn load(&self, p: *const f32, v: usize) -> F32x4 {
        // SAFETY: `p + head` is 16-byte aligned (that is what `head` is), and body element `v`
        // ends at or before `tail_start() <= len`; only read.
        unsafe {
            Ptr::new(p.cast_mut())
                .add(self.head)
                .cast::<F32x4>()
                .add(v)
                .load()
        }
    }
}

/// Calls `f(k)` for every `k < n` this thread owns in a 1-D grid-stride loop, one at a time:
/// for the few scalars of a split's head and tail. A plain counted loop, which ptxas keeps
/// rolled; the `StepBy` iterator of [`grid_stride`](crate::index::grid_stride) computes a trip
/// count that ptxas unrolls into some thirty scalar loads and a dozen registers more, for at
/// most six floats (`scripts/twins/`: `gt_thr_cnt_vec4` against its nvcc twin).
#[inline(always)]
pub fn grid_stride_each(n: usize, mut f: impl FnMut(usize)) {
    let stride = threads_per_grid_x();
    let mut k = global_id_x();
    while k < n {
        f(k);
        k += stride;
    }
}

/// Calls `f(i)` for every `i < n` this thread owns in a 1-D grid-stride loop, `UNROLL`
/// iterations at a time: the unrolled body is straight-line code, so the compiler issues all of
/// its loads before it uses any, and each thread keeps `UNROLL` loads in flight. The remainder
/// (fewer than `UNROLL` strides) runs one at a time.
#[inline(always)]
pub fn grid_stride_unrolled<const UNROLL: usize>(n: usize, mut f: impl FnMut(usize)) {
    let stride = threads_per_grid_x();
    let mut i = global_id_x();
    while i + (UNROLL - 1) * stride < n {
        for k in 0..UNROLL {
            f(i + k * stride);
        }
        i += UNROLL * stride;
    }
    while i < n {
        f(i);
        i += stride;
    }
}
