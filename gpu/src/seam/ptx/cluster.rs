//! Thread block clusters (sm_90): the cluster barrier, `mapa`, and accesses to another block's
//! shared memory in the `.shared::cluster` window.

use super::shared::SharedAddr;

/// `barrier.cluster.arrive.release;`
#[inline(always)]
pub(crate) fn barrier_cluster_arrive_release() {
    // SAFETY: an arrival at the cluster barrier; the once-per-phase rule is the caller's.
    unsafe {
        core::arch::asm!("barrier.cluster.arrive.release;", options(nostack));
    }
}

/// `barrier.cluster.arrive.relaxed;`
#[inline(always)]
pub(crate) fn barrier_cluster_arrive_relaxed() {
    // SAFETY: as `barrier_cluster_arrive_release`.
    unsafe {
        core::arch::asm!("barrier.cluster.arrive.relaxed;", options(nostack));
    }
}

/// `barrier.cluster.wait.acquire;`
#[inline(always)]
pub(crate) fn barrier_cluster_wait_acquire() {
    // SAFETY: waits at the cluster barrier; the arrival before it is the caller's.
    unsafe {
        core::arch::asm!("barrier.cluster.wait.acquire;", options(nostack));
    }
}

/// `mapa.u64 q, p, rank;`: the generic address of `p`'s twin in block `rank` of the cluster.
///
/// # Safety
/// As [`cluster::map_shared_rank`](crate::cluster::map_shared_rank).
#[inline(always)]
pub(crate) unsafe fn mapa_u64<T>(p: *mut T, rank: u32) -> *mut T {
    let q: *mut T;
    // SAFETY: address arithmetic only; the caller upholds the contract.
    unsafe {
        core::arch::asm!(
            "mapa.u64 {0}, {1}, {2};",
            out(reg64) q, in(reg64) p, in(reg32) rank,
            options(nostack, pure, nomem)
        );
    }
    q
}

/// `mapa.shared::cluster.u32 r, a, rank;`: the `.shared::cluster` address of `addr`'s twin
/// in block `rank` of the cluster.
///
/// # Safety
/// As [`ClusterU32::map`](crate::cluster::ClusterU32::map).
#[inline(always)]
pub(crate) unsafe fn mapa_shared_cluster_u32(addr: SharedAddr, rank: u32) -> SharedAddr {
    let mapped: u32;
    // SAFETY: address arithmetic only.
    unsafe {
        core::arch::asm!(
            "mapa.shared::cluster.u32 {0}, {1}, {2};",
            out(reg32) mapped, in(reg32) addr.0, in(reg32) rank,
            options(nostack, pure, nomem)
        );
    }
    SharedAddr(mapped)
}

/// `red.relaxed.cluster.shared::cluster.add.u32 [a], v;`
///
/// # Safety
/// As [`ClusterU32::red_add_cluster`](crate::cluster::ClusterU32::red_add_cluster).
#[inline(always)]
pub(crate) unsafe fn red_relaxed_cluster_shared_cluster_add_u32(addr: SharedAddr, val: u32) {
    // SAFETY: the caller's contract.
    unsafe {
        core::arch::asm!(
            "red.relaxed.cluster.shared::cluster.add.u32 [{0}], {1};",
            in(reg32) addr.0, in(reg32) val, options(nostack)
        )
    };
}

/// `atom.relaxed.cluster.shared::cluster.add.u32 old, [a], v;`
///
/// # Safety
/// As [`ClusterU32::fetch_add_cluster`](crate::cluster::ClusterU32::fetch_add_cluster).
#[inline(always)]
pub(crate) unsafe fn atom_relaxed_cluster_shared_cluster_add_u32(
    addr: SharedAddr,
    val: u32,
) -> u32 {
    let old: u32;
    // SAFETY: the caller's contract.
    unsafe {
        core::arch::asm!(
            "atom.relaxed.cluster.shared::cluster.add.u32 {0}, [{1}], {2};",
            out(reg32) old, in(reg32) addr.0, in(reg32) val, options(nostack)
        )
    };
    old
}

/// `ld.shared::cluster.u32 v, [a];`
///
/// # Safety
/// As [`ClusterU32::read`](crate::cluster::ClusterU32::read).
#[inline(always)]
pub(crate) unsafe fn ld_shared_cluster_u32(addr: SharedAddr) -> u32 {
    let v: u32;
    // SAFETY: the caller's contract.
    unsafe {
        core::arch::asm!(
            "ld.shared::cluster.u32 {0}, [{1}];",
            out(reg32) v, in(reg32) addr.0, options(nostack, readonly)
        )
    };
    v
}
