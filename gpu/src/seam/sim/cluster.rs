//! Thread block clusters on the simulator: its cluster barrier, and another block's shared
//! memory reached through [`crate::sim::map_shared`].

use super::shared::SharedAddr;
use crate::sim::check::{AccessKind, ThreadScope, report_access, report_atomic};
use core::sync::atomic::{AtomicU32, Ordering};

/// `barrier.cluster.arrive.release`.
#[inline(always)]
pub(crate) fn barrier_cluster_arrive_release() {
    crate::sim::cluster_arrive(true);
}

/// `barrier.cluster.arrive.relaxed`.
#[inline(always)]
pub(crate) fn barrier_cluster_arrive_relaxed() {
    crate::sim::cluster_arrive(false);
}

/// `barrier.cluster.wait.acquire`.
#[inline(always)]
pub(crate) fn barrier_cluster_wait_acquire() {
    crate::sim::cluster_wait();
}

/// `mapa`: the host address of `p`'s twin in block `rank` of the cluster.
///
/// # Safety
/// As [`cluster::map_shared_rank`](crate::cluster::map_shared_rank).
#[inline(always)]
pub(crate) unsafe fn mapa_u64<T>(p: *mut T, rank: u32) -> *mut T {
    crate::sim::map_shared(p.cast(), rank).cast()
}

/// `mapa.shared::cluster`: as [`mapa_u64`].
///
/// # Safety
/// As [`ClusterU32::map`](crate::cluster::ClusterU32::map).
#[inline(always)]
pub(crate) unsafe fn mapa_shared_cluster_u32(addr: SharedAddr, rank: u32) -> SharedAddr {
    SharedAddr(crate::sim::map_shared(addr.0, rank))
}

/// `red.relaxed.cluster.shared::cluster.add.u32`: the simulator has no `red`; the add of
/// [`atom_relaxed_cluster_shared_cluster_add_u32`], its result unused (the caller's line
/// reaches the checker through both).
///
/// # Safety
/// As [`ClusterU32::red_add_cluster`](crate::cluster::ClusterU32::red_add_cluster).
#[inline(always)]
#[track_caller]
pub(crate) unsafe fn red_relaxed_cluster_shared_cluster_add_u32(addr: SharedAddr, val: u32) {
    // SAFETY: the same contract.
    unsafe {
        atom_relaxed_cluster_shared_cluster_add_u32(addr, val);
    }
}

/// `atom.relaxed.cluster.shared::cluster.add.u32`: a relaxed add at cluster scope, reported
/// to the checker.
///
/// # Safety
/// As [`ClusterU32::fetch_add_cluster`](crate::cluster::ClusterU32::fetch_add_cluster).
#[inline(always)]
#[track_caller]
pub(crate) unsafe fn atom_relaxed_cluster_shared_cluster_add_u32(
    addr: SharedAddr,
    val: u32,
) -> u32 {
    let p = addr.ptr::<u32>();
    // SAFETY: the caller's contract.
    let a = unsafe { AtomicU32::from_ptr(p) };
    report_atomic(
        AccessKind::Rmw,
        p as usize,
        4,
        crate::atomic::Order::Relaxed,
        ThreadScope::Cluster,
        || a.fetch_add(val, Ordering::Relaxed),
    )
}

/// `ld.shared::cluster.u32`: a plain load, reported to the checker.
///
/// # Safety
/// As [`ClusterU32::read`](crate::cluster::ClusterU32::read).
#[inline(always)]
#[track_caller]
pub(crate) unsafe fn ld_shared_cluster_u32(addr: SharedAddr) -> u32 {
    let p = addr.ptr::<u32>();
    report_access(AccessKind::Load, p as usize, 4, false);
    // SAFETY: the caller's contract.
    unsafe { p.read() }
}
