//! Kernels for the cluster-barrier benchmark: nothing but cluster barriers, so a launch's time
//! over the barrier count is the cost of one (sm_90).

use crate::cluster::{cluster_arrive, cluster_arrive_relaxed, cluster_sync, cluster_wait};

kernel! {
    /// `rounds` cluster barriers ([`cluster_sync`]: arrive with release, wait with acquire) in
    /// one launch, every thread of the grid taking part.
    pub unsafe fn cluster_sync_bare(rounds: u32) {
        for _ in 0..rounds {
            cluster_sync();
        }
    }
}

kernel! {
    /// `rounds` cluster barriers whose arrival is relaxed ([`cluster_arrive_relaxed`]): the
    /// barrier that only paces, ordering no memory.
    pub unsafe fn cluster_sync_relaxed(rounds: u32) {
        for _ in 0..rounds {
            cluster_arrive_relaxed();
            cluster_wait();
        }
    }
}

kernel! {
    /// `rounds` split cluster barriers with independent work between the arrival and the wait:
    /// `work` dependent integer operations per thread, the latency an arrival can hide. With
    /// `work = 0` it is [`cluster_sync_bare`].
    pub unsafe fn cluster_split(rounds: u32, work: u32, out: *mut u32) {
        let mut x = crate::index::global_id_x() as u32;
        for _ in 0..rounds {
            cluster_arrive();
            for _ in 0..work {
                x = x.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            }
            cluster_wait();
        }
        if x == 0x5eed_5eed {
            // SAFETY: `out` is one word; reached only for this value, so the work stays.
            unsafe { *out = x };
        }
    }
}

kernel! {
    /// [`cluster_split`]'s work with the barrier in one piece: `cluster_sync`, then the work —
    /// what the split saves is the difference.
    pub unsafe fn cluster_unsplit(rounds: u32, work: u32, out: *mut u32) {
        let mut x = crate::index::global_id_x() as u32;
        for _ in 0..rounds {
            cluster_sync();
            for _ in 0..work {
                x = x.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            }
        }
        if x == 0x5eed_5eed {
            // SAFETY: `out` is one word; reached only for this value, so the work stays.
            unsafe { *out = x };
        }
    }
}
