//! Block barriers and fences: the simulator's block barrier; each fence reported to the
//! checker with its scope, then made on the weak memory in a weak launch or on the host.

use crate::sim::check::{ThreadScope, report_fence};
use crate::sim::weak::FenceKind;
use core::sync::atomic::{Ordering, fence};

/// The block barrier.
///
/// # Safety
/// Every thread of the block reaches it, or none does.
#[inline(always)]
#[track_caller]
pub(crate) unsafe fn bar_sync() {
    crate::sim::block_barrier(false);
}

/// The block barrier, returning whether any thread's `predicate` was true.
///
/// # Safety
/// As [`bar_sync`].
#[inline(always)]
#[track_caller]
pub(crate) unsafe fn bar_red_or(predicate: bool) -> bool {
    crate::sim::block_barrier(predicate)
}

/// A fence of `kind` and `scope`: reported, then on the weak memory or the host's with
/// `host`'s ordering.
#[inline(always)]
fn weak_fence(kind: FenceKind, scope: impl Into<ThreadScope>, host: Ordering) {
    let scope = scope.into();
    report_fence(kind, scope);
    if crate::sim::weak_op(|w, me| w.fence_scoped(me, kind, scope)).is_none() {
        fence(host);
    }
}

macro_rules! fences {
    ($($name:ident => $kind:ident, $scope:expr, $host:ident;)*) => {$(
        #[inline(always)]
        pub(crate) fn $name() {
            weak_fence(FenceKind::$kind, $scope, Ordering::$host);
        }
    )*};
}

fences! {
    membar_cta => Sc, crate::atomic::Scope::Block, SeqCst;
    membar_gl => Sc, crate::atomic::Scope::Device, SeqCst;
    membar_sys => Sc, crate::atomic::Scope::System, SeqCst;
    fence_acq_rel_cta => AcqRel, crate::atomic::Scope::Block, AcqRel;
    fence_acq_rel_gpu => AcqRel, crate::atomic::Scope::Device, AcqRel;
    fence_acq_rel_sys => AcqRel, crate::atomic::Scope::System, AcqRel;
    fence_sc_cta => Sc, crate::atomic::Scope::Block, SeqCst;
    fence_sc_gpu => Sc, crate::atomic::Scope::Device, SeqCst;
    fence_sc_sys => Sc, crate::atomic::Scope::System, SeqCst;
}

/// `fence.acq_rel.cluster`: reported with cluster scope, then a host fence (the weak memory
/// has no clusters).
#[inline(always)]
pub(crate) fn fence_acq_rel_cluster() {
    report_fence(FenceKind::AcqRel, ThreadScope::Cluster);
    fence(Ordering::AcqRel);
}

/// `fence.sc.cluster`: as [`fence_acq_rel_cluster`], sequentially consistent.
#[inline(always)]
pub(crate) fn fence_sc_cluster() {
    report_fence(FenceKind::Sc, ThreadScope::Cluster);
    fence(Ordering::SeqCst);
}

/// `fence.proxy.async.shared::cta`: the simulator's copies are made by the issuing thread, in
/// its order; a host fence.
#[inline(always)]
pub(crate) fn fence_proxy_async_shared_cta() {
    fence(Ordering::SeqCst);
}

/// `fence.proxy.async.global`: as [`fence_proxy_async_shared_cta`].
#[inline(always)]
pub(crate) fn fence_proxy_async_global() {
    fence(Ordering::SeqCst);
}

/// `fence.mbarrier_init.release.cluster`: a host release fence.
#[inline(always)]
pub(crate) fn fence_mbarrier_init_release_cluster() {
    fence(Ordering::Release);
}
