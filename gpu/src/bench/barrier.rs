//! Kernels for the grid-barrier benchmark: nothing but barriers, so a launch's time over the
//! barrier count is the cost of one.

use crate::grid::{GridBarrier, GridBarrierState};

kernel! {
    /// `rounds` bare [`GridBarrier`]s in one launch.
    pub unsafe fn grid_barrier_bare(state: *mut GridBarrierState, rounds: u32) {
        // SAFETY: the host passes a live, zeroed barrier state.
        let mut barrier = unsafe { GridBarrier::from_ptr(state) };
        for _ in 0..rounds {
            if barrier.sync().is_err() {
                return;
            }
        }
    }
}

#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90"))]
kernel! {
    /// `rounds` bare [`ClusterGridBarrier`](crate::cluster::ClusterGridBarrier)s in one
    /// clustered launch (sm_90).
    pub unsafe fn grid_barrier_cluster_bare(state: *mut GridBarrierState, rounds: u32) {
        // SAFETY: the host passes a live, zeroed barrier state and a clustered launch.
        let mut barrier = unsafe { crate::cluster::ClusterGridBarrier::from_ptr(state) };
        for _ in 0..rounds {
            if barrier.sync().is_err() {
                return;
            }
        }
    }
}
