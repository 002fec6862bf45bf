//! Warp-level primitives: lane id, active mask, vote, shuffles and the warp barrier.
//!
//! A warp is 32 consecutive threads of a block (numbered with `x` fastest). Since Volta (sm_70)
//! its lanes are scheduled independently, so warp-synchronous code must say which lanes take part:
//! every `_sync` operation takes a `mask` of the participating lanes, and every lane named in it
//! must execute the same operation. [`FULL_MASK`] names all 32.
//!
//! Shuffles here work on the whole warp (CUDA's `width = 32`); values of 64 bits move as two
//! 32-bit shuffles. In the simulator a warp operation is a rendezvous of the warp's lanes that are
//! still running; lanes that have exited are treated as absent (their values read as the
//! caller's own), and divergent warp code (lanes calling it from different branches) is reported
//! as a deadlock rather than modeled.

/// All 32 lanes.
pub const FULL_MASK: u32 = 0xffff_ffff;

/// Lanes in a warp.
pub const WARP_SIZE: u32 = 32;

/// This thread's lane in its warp, 0..32. PTX: `%laneid`.
#[inline(always)]
pub fn lane_id() -> u32 {
    crate::seam::sreg::laneid()
}

/// The lanes of this warp executing this instruction together. CUDA: `__activemask()`.
/// PTX: `activemask.b32`. A snapshot, not a promise of convergence: use it to build a `mask`, not
/// to assume lanes stay together. In the simulator: the lanes that have not exited.
#[inline(always)]
pub fn active_mask() -> u32 {
    crate::seam::warp::activemask()
}

/// Waits until every lane in `mask` has reached a `sync_warp` with the same mask, and orders
/// their memory accesses. CUDA: `__syncwarp(mask)`. PTX: `bar.warp.sync`.
#[inline(always)]
pub fn sync_warp(mask: u32) {
    // SAFETY: the caller's lanes in `mask` all execute this call (module contract).
    unsafe { crate::seam::warp::bar_warp_sync(mask) }
}

/// A bit per lane in `mask`: set where that lane's `predicate` is true. CUDA: `__ballot_sync`.
/// PTX: `vote.sync.ballot.b32`.
#[inline(always)]
pub fn ballot_sync(mask: u32, predicate: bool) -> u32 {
    // SAFETY: the lanes in `mask` all execute this call (module contract).
    unsafe { crate::seam::warp::vote_sync_ballot_b32(mask, predicate) }
}

/// True if `predicate` holds on any lane of `mask`. CUDA: `__any_sync`.
#[inline(always)]
pub fn any_sync(mask: u32, predicate: bool) -> bool {
    ballot_sync(mask, predicate) != 0
}

/// True if `predicate` holds on every lane of `mask` that takes part. CUDA: `__all_sync`.
#[inline(always)]
pub fn all_sync(mask: u32, predicate: bool) -> bool {
    ballot_sync(mask, !predicate) == 0
}

/// Which lane a shuffle reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shuffle {
    /// Lane `b` (CUDA `__shfl_sync`). PTX `shfl.sync.idx`.
    Idx,
    /// Lane `lane - b`, or its own value below lane `b` (CUDA `__shfl_up_sync`). PTX `shfl.sync.up`.
    Up,
    /// Lane `lane + b`, or its own value past lane 31 (CUDA `__shfl_down_sync`).
    /// PTX `shfl.sync.down`.
    Down,
    /// Lane `lane ^ b` (CUDA `__shfl_xor_sync`, the butterfly). PTX `shfl.sync.bfly`.
    Xor,
}

#[inline(always)]
fn shfl_u32(mode: Shuffle, mask: u32, v: u32, b: u32) -> u32 {
    use crate::seam::warp::*;
    // SAFETY: the lanes in `mask` all execute this call (module contract).
    unsafe {
        match mode {
            Shuffle::Idx => shfl_sync_idx_b32(mask, v, b),
            Shuffle::Up => shfl_sync_up_b32(mask, v, b),
            Shuffle::Down => shfl_sync_down_b32(mask, v, b),
            Shuffle::Xor => shfl_sync_bfly_b32(mask, v, b),
        }
    }
}

/// A value a shuffle can move: `u32 i32 f32` (one shuffle) and `u64 i64 f64` (two).
pub trait WarpValue: Copy {
    /// Moves `self` between lanes as `mode` says.
    fn shuffle(self, mode: Shuffle, mask: u32, b: u32) -> Self;
}

macro_rules! warp_value_32 {
    ($($t:ty: |$x:ident| $to:expr, |$r:ident| $from:expr;)*) => {$(
        impl WarpValue for $t {
            #[inline(always)]
            fn shuffle(self, mode: Shuffle, mask: u32, b: u32) -> Self {
                let $x = self;
                let $r = shfl_u32(mode, mask, $to, b);
                $from
            }
        }
    )*};
}

warp_value_32! {
    u32: |x| x, |r| r;
    i32: |x| x as u32, |r| r as i32;
    f32: |x| x.to_bits(), |r| f32::from_bits(r);
}

macro_rules! warp_value_64 {
    ($($t:ty: |$x:ident| $to:expr, |$r:ident| $from:expr;)*) => {$(
        impl WarpValue for $t {
            #[inline(always)]
            fn shuffle(self, mode: Shuffle, mask: u32, b: u32) -> Self {
                let $x = self;
                let bits: u64 = $to;
                let lo = shfl_u32(mode, mask, bits as u32, b) as u64;
                let hi = shfl_u32(mode, mask, (bits >> 32) as u32, b) as u64;
                let $r = lo | (hi << 32);
                $from
            }
        }
    )*};
}

warp_value_64! {
    u64: |x| x, |r| r;
    i64: |x| x as u64, |r| r as i64;
    f64: |x| x.to_bits(), |r| f64::from_bits(r);
}

/// The value of lane `src_lane`. CUDA: `__shfl_sync(mask, v, src_lane)`.
#[inline(always)]
pub fn shfl_sync<T: WarpValue>(mask: u32, v: T, src_lane: u32) -> T {
    v.shuffle(Shuffle::Idx, mask, src_lane)
}

/// The value of lane `lane_id() - delta` (own value in the lowest `delta` lanes).
/// CUDA: `__shfl_up_sync`.
#[inline(always)]
pub fn shfl_up_sync<T: WarpValue>(mask: u32, v: T, delta: u32) -> T {
    v.shuffle(Shuffle::Up, mask, delta)
}

/// The value of lane `lane_id() + delta` (own value past lane 31). CUDA: `__shfl_down_sync` — the
/// step of a warp tree reduction.
#[inline(always)]
pub fn shfl_down_sync<T: WarpValue>(mask: u32, v: T, delta: u32) -> T {
    v.shuffle(Shuffle::Down, mask, delta)
}

/// The value of lane `lane_id() ^ lane_mask`. CUDA: `__shfl_xor_sync` — the butterfly, after
/// which every lane holds the reduction.
#[inline(always)]
pub fn shfl_xor_sync<T: WarpValue>(mask: u32, v: T, lane_mask: u32) -> T {
    v.shuffle(Shuffle::Xor, mask, lane_mask)
}
