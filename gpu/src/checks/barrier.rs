//! Kernels that check [`GridBarrier`]: no block passes a barrier before every block has
//! arrived, any number of times in one launch; and a block that never arrives makes the others
//! time out instead of hanging.

use crate::atomic::{LoadOrder, Scope, StoreOrder, atomic_add_device, load, store};
use crate::grid::{GridBarrier, GridBarrierState};
use crate::index::{block_rank_in_grid, blocks_per_grid, thread_rank_in_block, threads_per_block};

/// The body of the phase checks: `rounds` rounds of thread 0 of each block writing `r` into its
/// block's slot of `phases`, `sync`, every thread counting into `errors` each block's slot that
/// is not `r` (a block let through before that block arrived sees its old phase), and `sync`
/// again, which keeps the next round's writes from overtaking the reads. Returns at the first
/// failed `sync`. Shared by [`grid_barrier_phases`] and the cluster-aware barrier's check.
///
/// # Safety
/// `phases` holds one `u32` per block, `errors` one `u32`, both touched only atomically.
#[inline(always)]
pub(crate) unsafe fn check_phases(
    mut sync: impl FnMut() -> Result<(), crate::grid::BarrierError>,
    phases: *mut u32,
    rounds: u32,
    errors: *mut u32,
) {
    let blocks = blocks_per_grid();
    let me = block_rank_in_grid();
    for r in 1..=rounds {
        if thread_rank_in_block() == 0 {
            // Relaxed: the barrier's release and acquire order it, which is what is tested.
            // SAFETY: `phases` holds one `u32` per block.
            unsafe {
                store(
                    phases.add(me as usize),
                    r,
                    Scope::Device,
                    StoreOrder::Relaxed,
                )
            };
        }
        if sync().is_err() {
            return;
        }
        let mut b = thread_rank_in_block();
        while b < blocks {
            // SAFETY: `b < blocks`.
            let seen = unsafe { load(phases.add(b as usize), Scope::Device, LoadOrder::Relaxed) };
            if seen != r {
                // SAFETY: `errors` is one `u32`.
                unsafe { atomic_add_device(errors, 1) };
            }
            b += threads_per_block();
        }
        if sync().is_err() {
            return;
        }
    }
}

kernel! {
    /// `rounds` barriers in one launch (`check_phases`): before barrier `r`, thread 0 of each
    /// block writes `r` into its block's slot of `phases`; after it, the block's threads read
    /// every block's slot and count into `errors` each one that is not `r`. A second barrier
    /// keeps the next round's writes from overtaking the reads. `errors` must end at 0.
    pub unsafe fn grid_barrier_phases(state: *mut GridBarrierState, phases: *mut u32, rounds: u32, errors: *mut u32) {
        // SAFETY: the host passes a live, zeroed barrier state.
        let mut barrier = unsafe { GridBarrier::from_ptr(state) };
        // SAFETY: the launch's `phases` and `errors`.
        unsafe { check_phases(|| barrier.sync(), phases, rounds, errors) }
    }
}

kernel! {
    /// Every block but `absent` calls the barrier once; `absent` returns at once. The others
    /// must give up at the state's timeout and record it, not hang.
    pub unsafe fn grid_barrier_absent_block(state: *mut GridBarrierState, absent: u32) {
        if block_rank_in_grid() == absent {
            return;
        }
        // SAFETY: the host passes a live, zeroed barrier state.
        let mut barrier = unsafe { GridBarrier::from_ptr(state) };
        let _ = barrier.sync();
    }
}
