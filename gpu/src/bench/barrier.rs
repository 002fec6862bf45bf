//! Kernels for the grid-barrier benchmark: nothing but barriers, so a launch's time over the
//! barrier count is the cost of one.

use crate::grid::{GridBarrier, GridBarrierState, Poll};

kernel! {
    /// `rounds` bare [`GridBarrier`]s in one launch.
    pub unsafe fn grid_barrier_bare(state: *mut GridBarrierState, rounds: u32) {
        // SAFETY: the host passes a live, zeroed barrier state.
        let barrier = unsafe { GridBarrier::from_ptr(state) };
        for _ in 0..rounds {
            if barrier.sync().is_err() {
                return;
            }
        }
    }
}

kernel! {
    /// `rounds` bare [`GridBarrier`]s with relaxed polls and one fence after the flip
    /// ([`Poll::RelaxedThenFence`]), to measure against the default's acquire polls.
    pub unsafe fn grid_barrier_bare_relaxed_poll(state: *mut GridBarrierState, rounds: u32) {
        // SAFETY: the host passes a live, zeroed barrier state.
        let barrier = unsafe { GridBarrier::from_ptr(state) };
        for _ in 0..rounds {
            if barrier.sync_with(Poll::RelaxedThenFence).is_err() {
                return;
            }
        }
    }
}
