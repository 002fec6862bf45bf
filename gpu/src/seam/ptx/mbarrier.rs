//! `mbarrier.*` (sm_90): one function per instruction form, the barrier's address in the
//! shared window. Where an instruction has a `.cta` and a `.cluster` form, the scope is an
//! argument, which a constant folds to one instruction.

use super::shared::SharedAddr;
use super::site::Site;
use crate::mbarrier::BarrierScope;

/// `asm!` of the `.cta` or the `.cluster` form, by `$scope`.
macro_rules! scoped_asm {
    ($scope:expr, $cta:literal, $cluster:literal, $($args:tt)*) => {
        match $scope {
            BarrierScope::Block => core::arch::asm!($cta, $($args)*),
            BarrierScope::Cluster => core::arch::asm!($cluster, $($args)*),
        }
    };
}

/// `mbarrier.init.shared::cta.b64 [a], count;`
///
/// # Safety
/// As [`MBarrier::init`](crate::mbarrier::MBarrier::init).
#[inline(always)]
pub(crate) unsafe fn mbarrier_init(addr: SharedAddr, count: u32) {
    // SAFETY: the caller's contract.
    unsafe {
        core::arch::asm!(
            "mbarrier.init.shared::cta.b64 [{0}], {1};",
            in(reg32) addr.0, in(reg32) count, options(nostack)
        )
    };
}

/// `mbarrier.inval.shared::cta.b64 [a];`
///
/// # Safety
/// As [`MBarrier::inval`](crate::mbarrier::MBarrier::inval).
#[inline(always)]
pub(crate) unsafe fn mbarrier_inval(addr: SharedAddr) {
    // SAFETY: the caller's contract.
    unsafe {
        core::arch::asm!("mbarrier.inval.shared::cta.b64 [{0}];", in(reg32) addr.0, options(nostack))
    };
}

/// `mbarrier.arrive.release.{cta,cluster}.shared::cta.b64 state, [a], count;`
///
/// # Safety
/// As [`MBarrier::arrive_count`](crate::mbarrier::MBarrier::arrive_count).
#[inline(always)]
pub(crate) unsafe fn mbarrier_arrive(
    addr: SharedAddr,
    count: u32,
    scope: BarrierScope,
    _site: Site,
) -> u64 {
    let state: u64;
    // SAFETY: the caller's contract.
    unsafe {
        scoped_asm!(
            scope,
            "mbarrier.arrive.release.cta.shared::cta.b64 {0}, [{1}], {2};",
            "mbarrier.arrive.release.cluster.shared::cta.b64 {0}, [{1}], {2};",
            out(reg64) state, in(reg32) addr.0, in(reg32) count, options(nostack)
        )
    };
    state
}

/// `mbarrier.arrive_drop.release.{cta,cluster}.shared::cta.b64 state, [a];`
///
/// # Safety
/// As [`MBarrier::arrive_drop`](crate::mbarrier::MBarrier::arrive_drop).
#[inline(always)]
pub(crate) unsafe fn mbarrier_arrive_drop(
    addr: SharedAddr,
    scope: BarrierScope,
    _site: Site,
) -> u64 {
    let state: u64;
    // SAFETY: the caller's contract.
    unsafe {
        scoped_asm!(
            scope,
            "mbarrier.arrive_drop.release.cta.shared::cta.b64 {0}, [{1}];",
            "mbarrier.arrive_drop.release.cluster.shared::cta.b64 {0}, [{1}];",
            out(reg64) state, in(reg32) addr.0, options(nostack)
        )
    };
    state
}

/// `mbarrier.arrive.expect_tx.release.{cta,cluster}.shared::cta.b64 state, [a], bytes;`
///
/// # Safety
/// As [`MBarrier::arrive_expect_tx`](crate::mbarrier::MBarrier::arrive_expect_tx).
#[inline(always)]
pub(crate) unsafe fn mbarrier_arrive_expect_tx(
    addr: SharedAddr,
    bytes: u32,
    scope: BarrierScope,
    _site: Site,
) -> u64 {
    let state: u64;
    // SAFETY: the caller's contract.
    unsafe {
        scoped_asm!(
            scope,
            "mbarrier.arrive.expect_tx.release.cta.shared::cta.b64 {0}, [{1}], {2};",
            "mbarrier.arrive.expect_tx.release.cluster.shared::cta.b64 {0}, [{1}], {2};",
            out(reg64) state, in(reg32) addr.0, in(reg32) bytes, options(nostack)
        )
    };
    state
}

/// `mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [a], bytes;`
///
/// # Safety
/// As [`MBarrier::expect_tx`](crate::mbarrier::MBarrier::expect_tx).
#[inline(always)]
pub(crate) unsafe fn mbarrier_expect_tx(addr: SharedAddr, bytes: u32) {
    // SAFETY: the caller's contract.
    unsafe {
        core::arch::asm!(
            "mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [{0}], {1};",
            in(reg32) addr.0, in(reg32) bytes, options(nostack)
        )
    };
}

/// `mbarrier.complete_tx.relaxed.cta.shared::cta.b64 [a], bytes;`
///
/// # Safety
/// As [`MBarrier::complete_tx`](crate::mbarrier::MBarrier::complete_tx).
#[inline(always)]
pub(crate) unsafe fn mbarrier_complete_tx(addr: SharedAddr, bytes: u32) {
    // SAFETY: the caller's contract.
    unsafe {
        core::arch::asm!(
            "mbarrier.complete_tx.relaxed.cta.shared::cta.b64 [{0}], {1};",
            in(reg32) addr.0, in(reg32) bytes, options(nostack)
        )
    };
}

/// `mbarrier.test_wait.acquire.{cta,cluster}.shared::cta.b64 p, [a], state;`
///
/// # Safety
/// As [`MBarrier::test_wait`](crate::mbarrier::MBarrier::test_wait).
#[inline(always)]
pub(crate) unsafe fn mbarrier_test_wait(addr: SharedAddr, state: u64, scope: BarrierScope) -> bool {
    let done: u32;
    // SAFETY: the caller's contract.
    unsafe {
        scoped_asm!(
            scope,
            "{{ .reg .pred p; mbarrier.test_wait.acquire.cta.shared::cta.b64 p, [{1}], {2}; selp.u32 {0}, 1, 0, p; }}",
            "{{ .reg .pred p; mbarrier.test_wait.acquire.cluster.shared::cta.b64 p, [{1}], {2}; selp.u32 {0}, 1, 0, p; }}",
            out(reg32) done, in(reg32) addr.0, in(reg64) state, options(nostack)
        )
    };
    done != 0
}

/// `mbarrier.try_wait.acquire.{cta,cluster}.shared::cta.b64 p, [a], state;`
///
/// # Safety
/// As [`MBarrier::test_wait`](crate::mbarrier::MBarrier::test_wait).
#[inline(always)]
pub(crate) unsafe fn mbarrier_try_wait(addr: SharedAddr, state: u64, scope: BarrierScope) -> bool {
    let done: u32;
    // SAFETY: the caller's contract.
    unsafe {
        scoped_asm!(
            scope,
            "{{ .reg .pred p; mbarrier.try_wait.acquire.cta.shared::cta.b64 p, [{1}], {2}; selp.u32 {0}, 1, 0, p; }}",
            "{{ .reg .pred p; mbarrier.try_wait.acquire.cluster.shared::cta.b64 p, [{1}], {2}; selp.u32 {0}, 1, 0, p; }}",
            out(reg32) done, in(reg32) addr.0, in(reg64) state, options(nostack)
        )
    };
    done != 0
}

/// `mbarrier.try_wait.parity.acquire.{cta,cluster}.shared::cta.b64 p, [a], parity;`
///
/// # Safety
/// As [`MBarrier::try_wait_parity`](crate::mbarrier::MBarrier::try_wait_parity).
#[inline(always)]
pub(crate) unsafe fn mbarrier_try_wait_parity(
    addr: SharedAddr,
    parity: u32,
    scope: BarrierScope,
    _site: Site,
) -> bool {
    let done: u32;
    // SAFETY: the caller's contract.
    unsafe {
        scoped_asm!(
            scope,
            "{{ .reg .pred p; mbarrier.try_wait.parity.acquire.cta.shared::cta.b64 p, [{1}], {2}; selp.u32 {0}, 1, 0, p; }}",
            "{{ .reg .pred p; mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 p, [{1}], {2}; selp.u32 {0}, 1, 0, p; }}",
            out(reg32) done, in(reg32) addr.0, in(reg32) parity, options(nostack)
        )
    };
    done != 0
}

/// `mapa.shared::cluster.u32 r, a, rank; mbarrier.arrive.release.cluster.shared::cluster.b64
/// _, [r];`: an arrival at the barrier at `addr` in block `rank` of the cluster.
///
/// # Safety
/// As [`MBarrier::arrive_remote`](crate::mbarrier::MBarrier::arrive_remote).
#[inline(always)]
pub(crate) unsafe fn mbarrier_arrive_shared_cluster(addr: SharedAddr, rank: u32, _site: Site) {
    // SAFETY: the caller's contract.
    unsafe {
        core::arch::asm!(
            "{{ .reg .b32 r; mapa.shared::cluster.u32 r, {0}, {1}; mbarrier.arrive.release.cluster.shared::cluster.b64 _, [r]; }}",
            in(reg32) addr.0, in(reg32) rank, options(nostack)
        )
    };
}
