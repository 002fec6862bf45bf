//! Asynchronous copies on the simulator: each copy is made at once, by the issuing thread,
//! and reported as its load and store; a bulk copy's bytes complete on its barrier at once.
//! The groups have nothing to wait for.

use super::shared::SharedAddr;
use crate::sim::check::{AccessKind, Bytes, MBarrierUpdate, Space, report_access};

/// `cp.async` of 4 bytes: a load and a store, here.
///
/// # Safety
/// As [`async_copy::cp_async_4`](crate::async_copy::cp_async_4).
#[inline(always)]
#[track_caller]
pub(crate) unsafe fn cp_async_ca_shared_global_4(dst: *mut u32, src: *const u32) {
    // SAFETY: the caller's contract.
    unsafe { super::mem::write(dst, super::mem::read(src)) };
}

/// `cp.async` of 8 bytes: a load and a store, here.
///
/// # Safety
/// As [`async_copy::cp_async_8`](crate::async_copy::cp_async_8).
#[inline(always)]
#[track_caller]
pub(crate) unsafe fn cp_async_ca_shared_global_8(dst: *mut u64, src: *const u64) {
    // SAFETY: the caller's contract.
    unsafe { super::mem::write(dst, super::mem::read(src)) };
}

/// `cp.async` of 16 bytes: a load and a store, here.
///
/// # Safety
/// As [`async_copy::cp_async_16`](crate::async_copy::cp_async_16).
#[inline(always)]
#[track_caller]
pub(crate) unsafe fn cp_async_cg_shared_global_16(dst: *mut [u32; 4], src: *const [u32; 4]) {
    // SAFETY: the caller's contract.
    unsafe { super::mem::write(dst, super::mem::read(src)) };
}

/// `cp.async` of 16 bytes, the first `src_bytes` read: the checker sees the bytes read and
/// the 16 written.
///
/// # Safety
/// As [`async_copy::cp_async_16_zfill`](crate::async_copy::cp_async_16_zfill).
#[inline(always)]
#[track_caller]
pub(crate) unsafe fn cp_async_cg_shared_global_16_zfill(
    dst: *mut [u32; 4],
    src: *const u8,
    src_bytes: u32,
) {
    let mut bytes = [0u8; 16];
    let n = (src_bytes as usize).min(16);
    if n > 0 {
        report_access(AccessKind::Load, src as usize, n as u32, false);
    }
    // SAFETY: the caller's contract: `src[..n]` and `dst` are valid.
    unsafe {
        core::ptr::copy_nonoverlapping(src, bytes.as_mut_ptr(), n);
        super::mem::write(dst.cast::<[u8; 16]>(), bytes);
    }
}

/// `cp.async.commit_group`: nothing to group.
#[inline(always)]
pub(crate) fn cp_async_commit_group() {}

/// `cp.async.wait_group`: nothing to wait for.
#[inline(always)]
pub(crate) fn cp_async_wait_group<const N: u32>() {}

/// `cp.async.wait_all`: nothing to wait for.
#[inline(always)]
pub(crate) fn cp_async_wait_all() {}

/// `cp.async.mbarrier.arrive.noinc`: the copies are done already; the arrival.
///
/// # Safety
/// As [`async_copy::cp_async_mbarrier_arrive_noinc`](crate::async_copy::cp_async_mbarrier_arrive_noinc).
#[inline(always)]
#[track_caller]
pub(crate) unsafe fn cp_async_mbarrier_arrive_noinc_shared_cta(bar: SharedAddr) {
    let site = core::panic::Location::caller();
    // SAFETY: the caller's contract.
    unsafe {
        crate::sim::mbarrier::arrive(
            bar.ptr(),
            1,
            0,
            0,
            crate::mbarrier::BarrierScope::Block,
            site,
        );
    }
}

/// `cp.async.bulk` global to shared: the copy reads its source as the issuing thread, and its
/// write of the destination is released to the phase its bytes complete.
///
/// # Safety
/// As [`async_copy::cp_async_bulk_global_to_shared_unchecked`](crate::async_copy::cp_async_bulk_global_to_shared_unchecked).
#[inline(always)]
#[track_caller]
pub(crate) unsafe fn cp_async_bulk_shared_cluster_global_mbarrier(
    dst: *mut u8,
    src: *const u8,
    bytes: u32,
    bar: SharedAddr,
) {
    report_access(AccessKind::Load, src as usize, bytes, false);
    let write = MBarrierUpdate::BulkWrite(
        Bytes {
            addr: dst as usize,
            width: bytes,
            space: Space::Shared,
        },
        core::panic::Location::caller(),
    );
    // SAFETY: the caller's contract.
    unsafe {
        core::ptr::copy_nonoverlapping(src, dst, bytes as usize);
        crate::sim::mbarrier::transact(bar.ptr(), -(bytes as i64), write);
    }
}

/// `cp.async.bulk` shared to global: a host copy, at once.
///
/// # Safety
/// As [`async_copy::cp_async_bulk_shared_to_global`](crate::async_copy::cp_async_bulk_shared_to_global).
#[inline(always)]
pub(crate) unsafe fn cp_async_bulk_global_shared_cta(dst: *mut u8, src: *const u8, bytes: u32) {
    // SAFETY: the caller's contract.
    unsafe { core::ptr::copy_nonoverlapping(src, dst, bytes as usize) };
}

/// `cp.async.bulk.commit_group`: nothing to group.
#[inline(always)]
pub(crate) fn cp_async_bulk_commit_group() {}

/// `cp.async.bulk.wait_group`: nothing to wait for.
#[inline(always)]
pub(crate) fn cp_async_bulk_wait_group<const N: u32>() {}

/// `cp.async.bulk.wait_group.read`: nothing to wait for.
#[inline(always)]
pub(crate) fn cp_async_bulk_wait_group_read<const N: u32>() {}
