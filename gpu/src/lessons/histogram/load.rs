//! Reading bytes sixteen at a time: [`vector`](crate::vector)'s head/body/tail split, for `u8`.
//!
//! A 16-byte load (`ld.global.v4.u32`) must be 16-byte aligned; a byte array need not start on
//! a boundary (a sub-slice) nor end on one. [`ByteSplit`] cuts it into a scalar head (up to the
//! first boundary, at most 15 bytes), a body of whole [`Bytes16`], and a scalar tail (at most 15
//! bytes).

use crate::index::{global_id_x, threads_per_grid_x};
use crate::mem::Ptr;
use crate::vector::{Split16, Vector16};

/// Bytes in one 16-byte load.
pub const BYTES16: usize = crate::vector::VEC16_BYTES;

/// Sixteen bytes at a 16-byte-aligned address, as four little-endian words: byte `4k + j` of the
/// load is bits `8j..8j + 8` of word `k`. Reading one through a pointer is one
/// `ld.global.v4.u32`.
#[repr(C, align(16))]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Bytes16(pub [u32; 4]);

const _: () = assert!(size_of::<Bytes16>() == BYTES16 && align_of::<Bytes16>() == BYTES16);

impl Vector16 for Bytes16 {
    type Elem = u8;
}

impl Bytes16 {
    /// Calls `f` with each of the sixteen bytes, in memory order.
    #[inline(always)]
    pub fn for_each_byte(self, mut f: impl FnMut(u32)) {
        let [w0, w1, w2, w3] = self.0;
        bytes_of(w0, &mut f);
        bytes_of(w1, &mut f);
        bytes_of(w2, &mut f);
        bytes_of(w3, &mut f);
    }
}

/// The four bytes of a little-endian word, lowest first.
#[inline(always)]
fn bytes_of(word: u32, f: &mut impl FnMut(u32)) {
    f(word & 0xff);
    f((word >> 8) & 0xff);
    f((word >> 16) & 0xff);
    f(word >> 24);
}

/// Calls `f` with the 64 bytes of four loads, **interleaved**: byte 0 of each load, then byte 1
/// of each, and so on. Every load's first byte is needed within four calls of the start, so
/// `ptxas` must issue all four loads before counting any; in memory order it reused the first
/// load's registers for the third and fourth, which it issued only after counting the first —
/// one or two loads in flight instead of four (seen in the SASS of `histogram_lane`). Written
/// out, not looped: an array indexed in a loop the compiler chose not to unroll would live in
/// local memory.
#[inline(always)]
fn bytes_of_four(a: Bytes16, b: Bytes16, c: Bytes16, d: Bytes16, f: &mut impl FnMut(u32)) {
    let (a, b, c, d) = (a.0, b.0, c.0, d.0);
    macro_rules! byte {
        ($k:tt, $shift:literal) => {
            f((a[$k] >> $shift) & 0xff);
            f((b[$k] >> $shift) & 0xff);
            f((c[$k] >> $shift) & 0xff);
            f((d[$k] >> $shift) & 0xff);
        };
    }
    macro_rules! word {
        ($k:tt) => {
            byte!($k, 0);
            byte!($k, 8);
            byte!($k, 16);
            byte!($k, 24);
        };
    }
    word!(0);
    word!(1);
    word!(2);
    word!(3);
}

/// How `len` bytes at some address split into a scalar head, a body of [`Bytes16`] and a scalar
/// tail: [`vector::Split16`](crate::vector::Split16) for bytes.
pub type ByteSplit = Split16<Bytes16>;

/// 16-byte loads each thread of [`for_each_body_byte`] has in flight: 64 bytes per thread, over
/// 20 KiB per SM at 12 warps — most of what HBM's latency × bandwidth per SM needs (about
/// 30 KiB on an H200) — at the cost of 16 registers.
pub const LOADS_IN_FLIGHT: usize = 4;

/// Calls `f(byte)` for every byte of this thread's body loads `v` of `split` in `start..end`:
/// a 1-D grid-stride loop whose first index is `start` (this thread's: `start ≡ global_id_x()`
/// modulo the grid), [`LOADS_IN_FLIGHT`] loads at a time, all issued before any byte is
/// counted. The window (`start..end` rather than `global_id_x()..body`) lets a kernel stop
/// after a bounded number of loads and resume.
///
/// # Safety
/// `split` was made for `arr`, which holds `split.len` bytes; `end <= split.body`.
#[inline(always)]
pub unsafe fn for_each_body_byte(
    split: &ByteSplit,
    arr: *const u8,
    start: usize,
    end: usize,
    f: impl FnMut(u32),
) {
    // SAFETY: `arr + head` is 16-byte aligned and holds `split.body` vectors.
    unsafe {
        for_each_strided_byte(
            arr.add(split.head).cast::<Bytes16>(),
            start,
            end,
            threads_per_grid_x(),
            f,
        )
    }
}

/// Calls `f(byte)` for every byte of the vectors `p[start]`, `p[start + stride]`, … below
/// `end`, [`LOADS_IN_FLIGHT`] loads at a time, all issued before any byte is counted: the loop
/// of [`for_each_body_byte`] over any array of [`Bytes16`] — global memory, or a stage in
/// shared memory.
///
/// # Safety
/// `p[..end]` is readable; `stride > 0`.
#[inline(always)]
pub unsafe fn for_each_strided_byte(
    p: *const Bytes16,
    start: usize,
    end: usize,
    stride: usize,
    mut f: impl FnMut(u32),
) {
    let p = Ptr::new(p.cast_mut());
    // SAFETY: every `v` passed is below `end`.
    let load = |v: usize| unsafe { p.add(v).load() };
    let mut v = start;
    while v + (LOADS_IN_FLIGHT - 1) * stride < end {
        let (a, b) = (load(v), load(v + stride));
        let (c, d) = (load(v + 2 * stride), load(v + 3 * stride));
        bytes_of_four(a, b, c, d, &mut f);
        v += LOADS_IN_FLIGHT * stride;
    }
    while v < end {
        load(v).for_each_byte(&mut f);
        v += stride;
    }
}

/// Calls `f(k)` for this thread's scalar bytes of `split` (grid-stride over its head and tail).
#[inline(always)]
pub fn for_each_scalar(split: &ByteSplit, mut f: impl FnMut(usize)) {
    let stride = threads_per_grid_x();
    let mut k = global_id_x();
    while k < split.scalars() {
        f(split.scalar_index(k));
        k += stride;
    }
}
