//! `mbarrier.*` on the simulator's barrier word ([`crate::sim::mbarrier`]), which reports each
//! arrival, transaction and completed wait to the checker.

use super::shared::SharedAddr;
use super::site::Site;
use crate::mbarrier::BarrierScope;
use crate::sim::check::MBarrierUpdate;
use crate::sim::mbarrier as word;

/// `mbarrier.init`.
///
/// # Safety
/// As [`MBarrier::init`](crate::mbarrier::MBarrier::init).
#[inline(always)]
pub(crate) unsafe fn mbarrier_init(addr: SharedAddr, count: u32) {
    // SAFETY: the caller's contract.
    unsafe { word::init(addr.ptr(), count) };
}

/// `mbarrier.inval`.
///
/// # Safety
/// As [`MBarrier::inval`](crate::mbarrier::MBarrier::inval).
#[inline(always)]
pub(crate) unsafe fn mbarrier_inval(addr: SharedAddr) {
    // SAFETY: the caller's contract.
    unsafe { word::inval(addr.ptr()) };
}

/// `mbarrier.arrive` of `count`, returning the phase's state.
///
/// # Safety
/// As [`MBarrier::arrive_count`](crate::mbarrier::MBarrier::arrive_count).
#[inline(always)]
pub(crate) unsafe fn mbarrier_arrive(
    addr: SharedAddr,
    count: u32,
    scope: BarrierScope,
    site: Site,
) -> u64 {
    // SAFETY: the caller's contract.
    unsafe { word::arrive(addr.ptr(), count, 0, 0, scope, site) }
}

/// `mbarrier.arrive_drop`.
///
/// # Safety
/// As [`MBarrier::arrive_drop`](crate::mbarrier::MBarrier::arrive_drop).
#[inline(always)]
pub(crate) unsafe fn mbarrier_arrive_drop(
    addr: SharedAddr,
    scope: BarrierScope,
    site: Site,
) -> u64 {
    // SAFETY: the caller's contract.
    unsafe { word::arrive(addr.ptr(), 1, 1, 0, scope, site) }
}

/// `mbarrier.arrive.expect_tx`.
///
/// # Safety
/// As [`MBarrier::arrive_expect_tx`](crate::mbarrier::MBarrier::arrive_expect_tx).
#[inline(always)]
pub(crate) unsafe fn mbarrier_arrive_expect_tx(
    addr: SharedAddr,
    bytes: u32,
    scope: BarrierScope,
    site: Site,
) -> u64 {
    // SAFETY: the caller's contract.
    unsafe { word::arrive(addr.ptr(), 1, 0, bytes, scope, site) }
}

/// `mbarrier.expect_tx`.
///
/// # Safety
/// As [`MBarrier::expect_tx`](crate::mbarrier::MBarrier::expect_tx).
#[inline(always)]
pub(crate) unsafe fn mbarrier_expect_tx(addr: SharedAddr, bytes: u32) {
    // SAFETY: the caller's contract.
    unsafe { word::transact(addr.ptr(), bytes as i64, MBarrierUpdate::Transact) };
}

/// `mbarrier.complete_tx`.
///
/// # Safety
/// As [`MBarrier::complete_tx`](crate::mbarrier::MBarrier::complete_tx).
#[inline(always)]
pub(crate) unsafe fn mbarrier_complete_tx(addr: SharedAddr, bytes: u32) {
    // SAFETY: the caller's contract.
    unsafe { word::transact(addr.ptr(), -(bytes as i64), MBarrierUpdate::Transact) };
}

/// `mbarrier.test_wait`: whether the phase of `state` is complete.
///
/// # Safety
/// As [`MBarrier::test_wait`](crate::mbarrier::MBarrier::test_wait).
#[inline(always)]
pub(crate) unsafe fn mbarrier_test_wait(addr: SharedAddr, state: u64, scope: BarrierScope) -> bool {
    // SAFETY: the caller's contract.
    unsafe { word::phase_done(addr.ptr(), state, scope, None) }
}

/// `mbarrier.try_wait`: `test_wait`, and a while suspended, as the hardware is, before it
/// answers false.
///
/// # Safety
/// As [`MBarrier::test_wait`](crate::mbarrier::MBarrier::test_wait).
#[inline(always)]
pub(crate) unsafe fn mbarrier_try_wait(addr: SharedAddr, state: u64, scope: BarrierScope) -> bool {
    // SAFETY: the caller's contract.
    let done = unsafe { mbarrier_test_wait(addr, state, scope) };
    if !done {
        super::spin::nanosleep(0);
    }
    done
}

/// `mbarrier.try_wait.parity`: whether the phase of `parity` is complete, and a while
/// suspended before it answers false.
///
/// # Safety
/// As [`MBarrier::try_wait_parity`](crate::mbarrier::MBarrier::try_wait_parity).
#[inline(always)]
pub(crate) unsafe fn mbarrier_try_wait_parity(
    addr: SharedAddr,
    parity: u32,
    scope: BarrierScope,
    site: Site,
) -> bool {
    let state = if parity & 1 == 1 { word::PARITY_BIT } else { 0 };
    // SAFETY: the caller's contract.
    let done = unsafe { word::phase_done(addr.ptr(), state, scope, Some(site)) };
    if !done {
        // The hardware suspends the thread a while before it answers false.
        super::spin::nanosleep(0);
    }
    done
}

/// `mapa` and `mbarrier.arrive.release.cluster.shared::cluster`: an arrival at the barrier at
/// `addr` in block `rank` of the cluster.
///
/// # Safety
/// As [`MBarrier::arrive_remote`](crate::mbarrier::MBarrier::arrive_remote).
#[inline(always)]
pub(crate) unsafe fn mbarrier_arrive_shared_cluster(addr: SharedAddr, rank: u32, site: Site) {
    // SAFETY: the caller's contract.
    unsafe {
        let remote = crate::sim::map_shared(addr.ptr(), rank).cast::<u64>();
        word::arrive(remote, 1, 0, 0, BarrierScope::Cluster, site);
    }
}
