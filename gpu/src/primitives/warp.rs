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
    #[cfg(target_arch = "nvptx64")]
    {
        let l: u32;
        // SAFETY: reading a special register has no preconditions.
        unsafe {
            core::arch::asm!("mov.u32 {0}, %laneid;", out(reg32) l, options(nostack, pure, nomem))
        };
        l
    }
    #[cfg(not(target_arch = "nvptx64"))]
    {
        crate::sim::lane()
    }
}

/// The lanes of this warp executing this instruction together. CUDA: `__activemask()`.
/// PTX: `activemask.b32`. A snapshot, not a promise of convergence: use it to build a `mask`, not
/// to assume lanes stay together. In the simulator: the lanes that have not exited.
#[inline(always)]
pub fn active_mask() -> u32 {
    #[cfg(target_arch = "nvptx64")]
    {
        let m: u32;
        // SAFETY: `activemask` has no preconditions.
        unsafe { core::arch::asm!("activemask.b32 {0};", out(reg32) m, options(nostack)) };
        m
    }
    #[cfg(not(target_arch = "nvptx64"))]
    {
        crate::sim::warp_exchange(0).live
    }
}

/// Waits until every lane in `mask` has reached a `sync_warp` with the same mask, and orders
/// their memory accesses. CUDA: `__syncwarp(mask)`. PTX: `bar.warp.sync`.
#[inline(always)]
pub fn sync_warp(mask: u32) {
    #[cfg(target_arch = "nvptx64")]
    // SAFETY: the caller's lanes in `mask` all execute this call (module contract).
    unsafe {
        core::arch::asm!("bar.warp.sync {0};", in(reg32) mask, options(nostack))
    };
    #[cfg(not(target_arch = "nvptx64"))]
    {
        let _ = mask;
        crate::sim::warp_sync();
    }
}

/// A bit per lane in `mask`: set where that lane's `predicate` is true. CUDA: `__ballot_sync`.
/// PTX: `vote.sync.ballot.b32`.
#[inline(always)]
pub fn ballot_sync(mask: u32, predicate: bool) -> u32 {
    #[cfg(target_arch = "nvptx64")]
    {
        let b: u32;
        // SAFETY: the lanes in `mask` all execute this call (module contract).
        unsafe {
            core::arch::asm!(
                "{{ .reg .pred p; setp.ne.u32 p, {1}, 0; vote.sync.ballot.b32 {0}, p, {2}; }}",
                out(reg32) b, in(reg32) predicate as u32, in(reg32) mask, options(nostack)
            )
        };
        b
    }
    #[cfg(not(target_arch = "nvptx64"))]
    {
        let w = crate::sim::warp_exchange(predicate as u64);
        (0..WARP_SIZE)
            .filter(|&l| w.live & mask & (1 << l) != 0 && w.values[l as usize] != 0)
            .fold(0, |b, l| b | (1 << l))
    }
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
    #[cfg(target_arch = "nvptx64")]
    {
        let r: u32;
        // The `c` operand packs the segment mask (0: whole warp) and the clamp lane: 31 for
        // idx/down/bfly, 0 for up, as CUDA's width-32 shuffles use.
        macro_rules! shfl {
            ($m:literal, $c:literal) => {
                // SAFETY: the lanes in `mask` all execute this call (module contract).
                unsafe {
                    core::arch::asm!(
                        concat!("shfl.sync.", $m, ".b32 {0}, {1}, {2}, ", $c, ", {3};"),
                        out(reg32) r, in(reg32) v, in(reg32) b, in(reg32) mask, options(nostack)
                    )
                }
            };
        }
        match mode {
            Shuffle::Idx => shfl!("idx", "31"),
            Shuffle::Up => shfl!("up", "0"),
            Shuffle::Down => shfl!("down", "31"),
            Shuffle::Xor => shfl!("bfly", "31"),
        }
        r
    }
    #[cfg(not(target_arch = "nvptx64"))]
    {
        let _ = mask;
        let w = crate::sim::warp_exchange(v as u64);
        let lane = crate::sim::lane() as i64;
        let src = match mode {
            Shuffle::Idx => (b & 31) as i64,
            Shuffle::Up => lane - b as i64,
            Shuffle::Down => lane + b as i64,
            Shuffle::Xor => lane ^ (b & 31) as i64,
        };
        if (0..32).contains(&src) && w.live & (1 << src) != 0 {
            w.values[src as usize] as u32
        } else {
            v
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
