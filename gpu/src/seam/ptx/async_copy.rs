//! Asynchronous copies: `cp.async` (sm_80), and the bulk copies (sm_90) that complete on an
//! `mbarrier` or in a bulk group. The global source is named in the global window
//! (`cvta.to.global`), the shared destination in the shared window.

#[cfg(target_feature = "sm_90")]
use super::shared::SharedAddr;
use super::shared::cvta_to_shared;

/// `cp.async.ca.shared.global [d], [s], 4;`
///
/// # Safety
/// As [`async_copy::cp_async_4`](crate::async_copy::cp_async_4).
#[inline(always)]
pub(crate) unsafe fn cp_async_ca_shared_global_4(dst: *mut u32, src: *const u32) {
    // SAFETY: the caller's contract.
    unsafe {
        core::arch::asm!(
            "{{ .reg .u64 g; cvta.to.global.u64 g, {1}; cp.async.ca.shared.global [{0}], [g], 4; }}",
            in(reg32) cvta_to_shared(dst).0, in(reg64) src, options(nostack)
        )
    };
}

/// `cp.async.ca.shared.global [d], [s], 8;`
///
/// # Safety
/// As [`async_copy::cp_async_8`](crate::async_copy::cp_async_8).
#[inline(always)]
pub(crate) unsafe fn cp_async_ca_shared_global_8(dst: *mut u64, src: *const u64) {
    // SAFETY: the caller's contract.
    unsafe {
        core::arch::asm!(
            "{{ .reg .u64 g; cvta.to.global.u64 g, {1}; cp.async.ca.shared.global [{0}], [g], 8; }}",
            in(reg32) cvta_to_shared(dst).0, in(reg64) src, options(nostack)
        )
    };
}

/// `cp.async.cg.shared.global [d], [s], 16;`
///
/// # Safety
/// As [`async_copy::cp_async_16`](crate::async_copy::cp_async_16).
#[inline(always)]
pub(crate) unsafe fn cp_async_cg_shared_global_16(dst: *mut [u32; 4], src: *const [u32; 4]) {
    // SAFETY: the caller's contract.
    unsafe {
        core::arch::asm!(
            "{{ .reg .u64 g; cvta.to.global.u64 g, {1}; cp.async.cg.shared.global [{0}], [g], 16; }}",
            in(reg32) cvta_to_shared(dst).0, in(reg64) src, options(nostack)
        )
    };
}

/// `cp.async.cg.shared.global [d], [s], 16, src_bytes;`: the bytes past `src_bytes` are
/// zeros.
///
/// # Safety
/// As [`async_copy::cp_async_16_zfill`](crate::async_copy::cp_async_16_zfill).
#[inline(always)]
pub(crate) unsafe fn cp_async_cg_shared_global_16_zfill(
    dst: *mut [u32; 4],
    src: *const u8,
    src_bytes: u32,
) {
    // SAFETY: the caller's contract.
    unsafe {
        core::arch::asm!(
            "{{ .reg .u64 g; cvta.to.global.u64 g, {1}; cp.async.cg.shared.global [{0}], [g], 16, {2}; }}",
            in(reg32) cvta_to_shared(dst).0, in(reg64) src, in(reg32) src_bytes, options(nostack)
        )
    };
}

/// `cp.async.commit_group;`
#[inline(always)]
pub(crate) fn cp_async_commit_group() {
    // SAFETY: groups this thread's own copies; no memory is touched.
    unsafe { core::arch::asm!("cp.async.commit_group;", options(nostack)) };
}

/// `cp.async.wait_group N;`
#[inline(always)]
pub(crate) fn cp_async_wait_group<const N: u32>() {
    // SAFETY: waits for this thread's own copies.
    unsafe { core::arch::asm!("cp.async.wait_group {n};", n = const N, options(nostack)) };
}

/// `cp.async.wait_all;`
#[inline(always)]
pub(crate) fn cp_async_wait_all() {
    // SAFETY: waits for this thread's own copies.
    unsafe { core::arch::asm!("cp.async.wait_all;", options(nostack)) };
}

/// `cp.async.mbarrier.arrive.noinc.shared::cta.b64 [bar];`
///
/// # Safety
/// As [`async_copy::cp_async_mbarrier_arrive_noinc`](crate::async_copy::cp_async_mbarrier_arrive_noinc).
#[cfg(target_feature = "sm_90")]
#[inline(always)]
pub(crate) unsafe fn cp_async_mbarrier_arrive_noinc_shared_cta(bar: SharedAddr) {
    // SAFETY: the caller's contract.
    unsafe {
        core::arch::asm!(
            "cp.async.mbarrier.arrive.noinc.shared::cta.b64 [{0}];",
            in(reg32) bar.0, options(nostack)
        )
    };
}

/// `cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [d], [s], bytes, [bar];`
///
/// # Safety
/// As [`async_copy::cp_async_bulk_global_to_shared_unchecked`](crate::async_copy::cp_async_bulk_global_to_shared_unchecked).
#[cfg(target_feature = "sm_90")]
#[inline(always)]
pub(crate) unsafe fn cp_async_bulk_shared_cluster_global_mbarrier(
    dst: *mut u8,
    src: *const u8,
    bytes: u32,
    bar: SharedAddr,
) {
    // SAFETY: the caller's contract.
    unsafe {
        core::arch::asm!(
            "{{ .reg .u64 g; cvta.to.global.u64 g, {1}; cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [{0}], [g], {2}, [{3}]; }}",
            in(reg32) cvta_to_shared(dst).0, in(reg64) src, in(reg32) bytes, in(reg32) bar.0,
            options(nostack)
        )
    };
}

/// `cp.async.bulk.global.shared::cta.bulk_group [d], [s], bytes;`
///
/// # Safety
/// As [`async_copy::cp_async_bulk_shared_to_global`](crate::async_copy::cp_async_bulk_shared_to_global).
#[cfg(target_feature = "sm_90")]
#[inline(always)]
pub(crate) unsafe fn cp_async_bulk_global_shared_cta(dst: *mut u8, src: *const u8, bytes: u32) {
    // SAFETY: the caller's contract.
    unsafe {
        core::arch::asm!(
            "{{ .reg .u64 g; cvta.to.global.u64 g, {0}; cp.async.bulk.global.shared::cta.bulk_group [g], [{1}], {2}; }}",
            in(reg64) dst, in(reg32) cvta_to_shared(src).0, in(reg32) bytes, options(nostack)
        )
    };
}

/// `cp.async.bulk.commit_group;`
#[cfg(target_feature = "sm_90")]
#[inline(always)]
pub(crate) fn cp_async_bulk_commit_group() {
    // SAFETY: groups this thread's own copies.
    unsafe { core::arch::asm!("cp.async.bulk.commit_group;", options(nostack)) };
}

/// `cp.async.bulk.wait_group N;`
#[cfg(target_feature = "sm_90")]
#[inline(always)]
pub(crate) fn cp_async_bulk_wait_group<const N: u32>() {
    // SAFETY: waits for this thread's own copies.
    unsafe { core::arch::asm!("cp.async.bulk.wait_group {n};", n = const N, options(nostack)) };
}

/// `cp.async.bulk.wait_group.read N;`
#[cfg(target_feature = "sm_90")]
#[inline(always)]
pub(crate) fn cp_async_bulk_wait_group_read<const N: u32>() {
    // SAFETY: waits for this thread's own copies.
    unsafe {
        core::arch::asm!("cp.async.bulk.wait_group.read {n};", n = const N, options(nostack))
    };
}
