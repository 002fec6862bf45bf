//! Warp-level instructions on the simulator's warps: each lane an OS thread, exchanging values
//! through [`crate::sim::warp_exchange`].

use crate::primitives::warp::WARP_SIZE;

/// The lanes of this thread's warp that are still running.
#[inline(always)]
pub(crate) fn activemask() -> u32 {
    crate::sim::warp_exchange(0).live
}

/// The lanes that run a warp-wide step together with this one: the simulator's warp
/// operations need every live lane of the warp, so each thread is alone.
#[inline(always)]
pub(crate) fn converged_mask(lane: u32) -> u32 {
    1 << lane
}

/// Whether this thread is lane 0 of its warp and `rank` is 0 (the PTX side's test of a block's
/// thread 0).
#[inline(always)]
pub(crate) fn leads_block(rank: u32) -> bool {
    crate::sim::lane() == 0 && rank == 0
}

/// `bar.warp.sync`: the simulator's warp barrier (over the live lanes).
///
/// # Safety
/// Every lane in `mask` executes it.
#[inline(always)]
pub(crate) unsafe fn bar_warp_sync(mask: u32) {
    let _ = mask;
    crate::sim::warp_sync();
}

/// `vote.sync.ballot.b32`: bit `l` set when lane `l` is live, in `mask`, and its predicate
/// is true.
///
/// # Safety
/// Every lane in `mask` executes it.
#[inline(always)]
pub(crate) unsafe fn vote_sync_ballot_b32(mask: u32, predicate: bool) -> u32 {
    let w = crate::sim::warp_exchange(predicate as u64);
    (0..WARP_SIZE)
        .filter(|&l| w.live & mask & (1 << l) != 0 && w.values[l as usize] != 0)
        .fold(0, |b, l| b | (1 << l))
}

/// A shuffle from the lane `src` names: its value if that lane is in the warp and live, else
/// this lane's own `v`.
#[inline(always)]
fn shuffle(v: u32, src: impl FnOnce(i64) -> i64) -> u32 {
    let w = crate::sim::warp_exchange(v as u64);
    let src = src(crate::sim::lane() as i64);
    if (0..32).contains(&src) && w.live & (1 << src) != 0 {
        w.values[src as usize] as u32
    } else {
        v
    }
}

/// `shfl.sync.idx.b32`: lane `b`'s value.
///
/// # Safety
/// Every lane in `mask` executes it.
#[inline(always)]
pub(crate) unsafe fn shfl_sync_idx_b32(mask: u32, v: u32, b: u32) -> u32 {
    let _ = mask;
    shuffle(v, |_| (b & 31) as i64)
}

/// `shfl.sync.up.b32`: the value of the lane `b` below.
///
/// # Safety
/// Every lane in `mask` executes it.
#[inline(always)]
pub(crate) unsafe fn shfl_sync_up_b32(mask: u32, v: u32, b: u32) -> u32 {
    let _ = mask;
    shuffle(v, |lane| lane - b as i64)
}

/// `shfl.sync.down.b32`: the value of the lane `b` above.
///
/// # Safety
/// Every lane in `mask` executes it.
#[inline(always)]
pub(crate) unsafe fn shfl_sync_down_b32(mask: u32, v: u32, b: u32) -> u32 {
    let _ = mask;
    shuffle(v, |lane| lane + b as i64)
}

/// `shfl.sync.bfly.b32`: the value of lane `lane ^ b`.
///
/// # Safety
/// Every lane in `mask` executes it.
#[inline(always)]
pub(crate) unsafe fn shfl_sync_bfly_b32(mask: u32, v: u32, b: u32) -> u32 {
    let _ = mask;
    shuffle(v, |lane| lane ^ (b & 31) as i64)
}
