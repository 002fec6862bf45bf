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
use core::marker::PhantomData;

/// Bytes in one 16-byte vector, and the alignment its load needs.
pub const VEC16_BYTES: usize = 16;

/// Four `f32` at a 16-byte-aligned address: CUDA's `float4`. Reading one through a pointer is
/// a single `ld.global.v4.f32` (LLVM's load-store vectorizer merges the four lanes because the
/// type's alignment promises 16).
#[repr(C, align(16))]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct F32x4(pub [f32; 4]);

const _: () = assert!(size_of::<F32x4>() == VEC16_BYTES && align_of::<F32x4>() == VEC16_BYTES);

/// A 16-byte vector of a whole number of elements, 16-byte aligned: what a [`Split16`] loads
/// from its body ([`F32x4`] here; the lessons' byte and reduction vectors too).
pub trait Vector16: Copy {
    /// The element.
    type Elem: Copy;
    /// Elements in one vector.
    const LANES: usize = VEC16_BYTES / size_of::<Self::Elem>();
}

impl Vector16 for F32x4 {
    type Elem = f32;
}

/// How `len` elements starting at some address split into a scalar head, a body of vectors `V`
/// and a scalar tail. See the [module docs](self).
pub struct Split16<V> {
    /// Elements before the first 16-byte boundary (read one at a time).
    pub head: usize,
    /// Whole vectors `V` after the head.
    pub body: usize,
    /// All elements.
    pub len: usize,
    _vector: PhantomData<fn() -> V>,
}

/// The split of an `f32` array into [`F32x4`]: CUDA's `float4` loads.
pub type Split4 = Split16<F32x4>;

impl<V> Clone for Split16<V> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<V> Copy for Split16<V> {}
impl<V> PartialEq for Split16<V> {
    fn eq(&self, o: &Self) -> bool {
        (self.head, self.body, self.len) == (o.head, o.body, o.len)
    }
}
impl<V> Eq for Split16<V> {}
impl<V> core::fmt::Debug for Split16<V> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        let (head, body, len) = (self.head, self.body, self.len);
        write!(f, "Split16 {{ head: {head}, body: {body}, len: {len} }}")
    }
}

impl<V: Vector16> Split16<V> {
    /// The split of `len` elements starting at `p` (aligned to its element, as every pointer is).
    #[inline(always)]
    pub fn of(p: *const V::Elem, len: usize) -> Split16<V> {
        let misaligned = (p as usize % VEC16_BYTES) / size_of::<V::Elem>();
        let head = ((V::LANES - misaligned) % V::LANES).min(len);
        Split16 {
            head,
            body: (len - head) / V::LANES,
            len,
            _vector: PhantomData,
        }
    }

    /// The split shared by two arrays read at the same indices: [`Split16::of`] `a` if `b` is
    /// misaligned by the same amount, else all head (scalar).
    #[inline(always)]
    pub fn of_pair(a: *const V::Elem, b: *const V::Elem, len: usize) -> Split16<V> {
        if (a as usize ^ b as usize).is_multiple_of(VEC16_BYTES) {
            Split16::of(a, len)
        } else {
            Split16 {
                head: len,
                body: 0,
                len,
                _vector: PhantomData,
            }
        }
    }

    /// The index of the first tail element.
    #[inline(always)]
    pub fn tail_start(&self) -> usize {
        self.head + self.body * V::LANES
    }

    /// How many elements are read one at a time: head plus tail.
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

    /// The body's `v`-th vector of the array at `p` (the array this split was made for): one
    /// 16-byte plain load, which the simulator reports to the checker as such, naming the
    /// caller's line.
    ///
    /// # Safety
    /// `p` is the address the split was made for, valid for `self.len` elements, and
    /// `v < self.body`.
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub unsafe fn load(&self, p: *const V::Elem, v: usize) -> V {
        // SAFETY: `p + head` is 16-byte aligned (that is what `head` is), and body vector `v`
        // ends at or before `tail_start() <= len`; only read.
        unsafe {
            Ptr::new(p.cast_mut())
                .add(self.head)
                .cast::<V>()
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

#[cfg(all(test, not(target_arch = "nvptx64")))]
mod tests {
    use super::*;

    /// A 16-byte vector of `u16`: eight lanes, a length the crate's own vectors do not have.
    #[derive(Clone, Copy)]
    #[repr(C, align(16))]
    struct U16x8([u16; 8]);
    impl Vector16 for U16x8 {
        type Elem = u16;
    }

    /// At every misalignment and length: the body starts on a 16-byte boundary, head, body and
    /// tail cover the array exactly once, and the scalars are exactly the indices outside the body.
    fn covers<V: Vector16>(lanes: usize) {
        assert_eq!(V::LANES, lanes);
        let base = 0x1000usize;
        let each = size_of::<V::Elem>();
        for offset in 0..lanes {
            for len in [0, 1, lanes - 1, lanes, lanes + 1, 3 * lanes + 2, 100] {
                let p = (base + offset * each) as *const V::Elem;
                let s = Split16::<V>::of(p, len);
                assert!(s.head < lanes && s.head <= len, "{s:?}");
                if s.body > 0 {
                    assert_eq!((base + (offset + s.head) * each) % VEC16_BYTES, 0, "{s:?}");
                }
                assert!(len - s.tail_start() < lanes, "{s:?}");
                let mut seen = vec![false; len];
                seen[s.head..s.tail_start()].fill(true);
                for k in 0..s.scalars() {
                    let i = s.scalar_index(k);
                    assert!(!seen[i], "{s:?}: {i} twice");
                    seen[i] = true;
                }
                assert!(seen.iter().all(|&x| x), "{s:?} misses an index");
                // A second array at the same misalignment shares the split; at another, all head.
                let q = (base + 0x100 + offset * each) as *const V::Elem;
                assert_eq!(Split16::<V>::of_pair(p, q, len), s);
                let r = (base + 0x100 + (offset + 1) * each) as *const V::Elem;
                assert_eq!(Split16::<V>::of_pair(p, r, len).head, len);
            }
        }
    }

    #[test]
    fn the_split_covers_every_index_once_at_every_alignment() {
        covers::<F32x4>(4);
        covers::<U16x8>(8);
        #[cfg(feature = "kernels")]
        {
            covers::<crate::lessons::histogram::Bytes16>(16);
            covers::<crate::lessons::reduce::Vec16<f64, 2>>(2);
        }
    }

    #[test]
    fn the_body_is_loaded_from_the_aligned_address() {
        let data = F32x4Array([F32x4([1.0, 2.0, 3.0, 4.0]), F32x4([5.0, 6.0, 7.0, 8.0])]);
        let floats = data.0.as_ptr().cast::<f32>();
        // From the second float: three floats of head, one vector of body, no tail.
        let p = floats.wrapping_add(1);
        let s = Split4::of(p, 7);
        assert_eq!((s.head, s.body, s.tail_start()), (3, 1, 7));
        // SAFETY: `p` holds 7 floats, and `0 < s.body`.
        assert_eq!(unsafe { s.load(p, 0) }, F32x4([5.0, 6.0, 7.0, 8.0]));
    }

    #[repr(C)]
    struct F32x4Array([F32x4; 2]);
}
