//! Block barriers and fences.

/// `bar.sync 0;` (CUDA's `__syncthreads`).
///
/// # Safety
/// Every thread of the block reaches it, or none does.
#[inline(always)]
pub(crate) unsafe fn bar_sync() {
    // SAFETY: the caller's contract.
    unsafe { core::arch::nvptx::_syncthreads() }
}

/// `bar.red.or.pred p, 0, q;`: the block barrier, returning whether any thread's `predicate`
/// was true.
///
/// # Safety
/// As [`bar_sync`].
#[inline(always)]
pub(crate) unsafe fn bar_red_or(predicate: bool) -> bool {
    let any: u32;
    // SAFETY: the caller's contract.
    unsafe {
        core::arch::asm!(
            "{{",
            ".reg .pred %q, %p;",
            "setp.ne.u32 %q, {pred}, 0;",
            "bar.red.or.pred %p, 0, %q;",
            "selp.u32 {any}, 1, 0, %p;",
            "}}",
            pred = in(reg32) predicate as u32,
            any = out(reg32) any,
            options(nostack)
        );
    }
    any != 0
}

macro_rules! fences {
    ($($name:ident => $ptx:literal;)*) => {$(
        #[doc = concat!("`", $ptx, "`")]
        #[inline(always)]
        pub(crate) fn $name() {
            // SAFETY: a fence only constrains the order of this thread's memory accesses.
            unsafe {
                core::arch::asm!($ptx, options(nostack));
            }
        }
    )*};
}

fences! {
    membar_cta => "membar.cta;";
    membar_gl => "membar.gl;";
    membar_sys => "membar.sys;";
    fence_acq_rel_cta => "fence.acq_rel.cta;";
    fence_acq_rel_gpu => "fence.acq_rel.gpu;";
    fence_acq_rel_sys => "fence.acq_rel.sys;";
    fence_sc_cta => "fence.sc.cta;";
    fence_sc_gpu => "fence.sc.gpu;";
    fence_sc_sys => "fence.sc.sys;";
}

#[cfg(target_feature = "sm_90")]
fences! {
    fence_mbarrier_init_release_cluster => "fence.mbarrier_init.release.cluster;";
}

#[cfg(target_feature = "sm_90")]
fences! {
    fence_proxy_async_shared_cta => "fence.proxy.async.shared::cta;";
    fence_proxy_async_global => "fence.proxy.async.global;";
}

#[cfg(target_feature = "sm_90")]
fences! {
    fence_acq_rel_cluster => "fence.acq_rel.cluster;";
    fence_sc_cluster => "fence.sc.cluster;";
}
