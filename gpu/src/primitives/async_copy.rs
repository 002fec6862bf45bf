//! Asynchronous copies between global and shared memory: the thread asks, the hardware moves
//! the bytes, and a wait — a group wait or an [`mbarrier`](crate::mbarrier) phase — says when
//! they have landed.
//!
//! An ordinary load into shared memory goes through a register: the thread stalls until the
//! data arrives, then stores it. An asynchronous copy does not occupy the thread, so a block can
//! have the next tile in flight while it computes on the current one — the software pipeline of
//! every fast Hopper kernel. Two generations:
//!
//! - **`cp.async`** (sm_80): each thread copies 4, 8 or 16 bytes; the thread groups its copies
//!   ([`cp_async_commit_group`]) and waits until at most N groups are still in flight
//!   ([`cp_async_wait_group`]), or has an `mbarrier` count their completion
//!   ([`cp_async_mbarrier_arrive_noinc`]). CUDA: `__pipeline_memcpy_async`, `cuda::memcpy_async`.
//! - **`cp.async.bulk`** (sm_90): one thread copies a whole contiguous range (a multiple of 16
//!   bytes, 16-byte aligned) with the copy engine (the TMA unit); the bytes complete on an
//!   `mbarrier`'s transaction count ([`cp_async_bulk_global_to_shared`]). The other way,
//!   shared → global, completes on a bulk group ([`cp_async_bulk_commit_group`],
//!   [`cp_async_bulk_wait_group_read`]). CUDA: `cuda::memcpy_async` with a `cuda::barrier`,
//!   `cuda::ptx::cp_async_bulk`.
//!
//! # Two proxies
//!
//! The copy engine accesses memory through the *async proxy*; ordinary loads and stores go
//! through the *generic proxy*, and the two are not ordered with each other by barriers alone.
//! Shared memory that threads wrote with ordinary stores and that a bulk copy reads next (shared
//! → global), or that a bulk copy overwrites after threads read it, needs
//! [`fence_proxy_async_shared`] between the two. Data a bulk copy wrote and an `mbarrier` wait
//! completed is visible to the waiting threads' ordinary loads: the barrier does that.
//!
//! In the simulator every copy is performed at once by the issuing thread, and a bulk copy
//! then completes its bytes on its barrier; a wait therefore never waits for data, only for
//! arrivals — the logic of a pipeline is tested, not its timing.

#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90"))]
use crate::mbarrier::MBarrier;
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_80"))]
use crate::seam::async_copy as seam;

/// The most bytes one bulk copy may move: what one `mbarrier` phase can count, 2²⁰ − 1
/// rounded down to a multiple of 16.
pub const BULK_MAX_BYTES: u32 = ((1 << 20) - 1) & !15;

/// Why a bulk copy was refused before it was issued.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BulkCopyError {
    /// An address is not 16-byte aligned.
    Misaligned,
    /// The size is 0, not a multiple of 16, or more than one `mbarrier` phase can count
    /// ([`BULK_MAX_BYTES`]).
    BadSize,
}

/// What a bulk copy needs of its operands: 16-byte-aligned addresses, and a size that is a
/// non-zero multiple of 16 an `mbarrier` can count.
///
/// # Errors
/// [`BulkCopyError`] naming what is wrong.
#[inline(always)]
pub fn check_bulk_copy(dst: *const u8, src: *const u8, bytes: u32) -> Result<(), BulkCopyError> {
    if !(dst as usize | src as usize).is_multiple_of(16) {
        return Err(BulkCopyError::Misaligned);
    }
    if bytes == 0 || !bytes.is_multiple_of(16) || bytes > BULK_MAX_BYTES {
        return Err(BulkCopyError::BadSize);
    }
    Ok(())
}

/// Starts a copy of 4 bytes from global to shared memory, through the L1 cache.
///
/// CUDA: `__pipeline_memcpy_async(dst, src, 4)`. PTX: `cp.async.ca.shared.global [dst], [src], 4`.
///
/// # Safety
/// `dst` is an aligned word of this block's shared memory and `src` an aligned word of global
/// memory, both valid until the copy is waited for; nothing reads `dst` before that wait, nor
/// writes `src` or `dst` meanwhile.
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_80"))]
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub unsafe fn cp_async_4(dst: *mut u32, src: *const u32) {
    // SAFETY: the caller upholds the contract above.
    unsafe { seam::cp_async_ca_shared_global_4(dst, src) };
}

/// Starts a copy of 8 bytes from global to shared memory, through the L1 cache.
///
/// PTX: `cp.async.ca.shared.global [dst], [src], 8`.
///
/// # Safety
/// As [`cp_async_4`], for 8-byte-aligned elements.
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_80"))]
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub unsafe fn cp_async_8(dst: *mut u64, src: *const u64) {
    // SAFETY: the caller upholds the contract above.
    unsafe { seam::cp_async_ca_shared_global_8(dst, src) };
}

/// Starts a copy of 16 bytes from global to shared memory, bypassing L1 (data read once).
///
/// PTX: `cp.async.cg.shared.global [dst], [src], 16`.
///
/// # Safety
/// As [`cp_async_4`], for 16-byte-aligned elements.
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_80"))]
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub unsafe fn cp_async_16(dst: *mut [u32; 4], src: *const [u32; 4]) {
    // SAFETY: the caller upholds the contract above.
    unsafe { seam::cp_async_cg_shared_global_16(dst, src) };
}

/// [`cp_async_16`] that copies only the first `src_bytes` (0 to 16) of `src` and fills the
/// rest of `dst` with zeros: the tail of an array whose length is not a multiple of 16 bytes
/// lands in shared memory followed by zeros, not by whatever came after it.
///
/// PTX: `cp.async.cg.shared.global [dst], [src], 16, src_bytes`.
///
/// The access is still a 16-byte one: compute-sanitizer's memcheck checks all 16 bytes of
/// `src` against the allocation (seen on an H100), and PTX does not promise that the hardware
/// fetches fewer. Keep the allocation readable to the next 16-byte boundary (allocations from
/// the driver are at least 256-byte aligned and rounded; a sub-range of one is the case to
/// watch).
///
/// # Safety
/// As [`cp_async_16`]: `src` is 16-byte aligned and its 16 bytes are in a readable
/// allocation; `src_bytes <= 16`.
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_80"))]
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub unsafe fn cp_async_16_zfill(dst: *mut [u32; 4], src: *const u8, src_bytes: u32) {
    // SAFETY: the caller upholds the contract above.
    unsafe { seam::cp_async_cg_shared_global_16_zfill(dst, src, src_bytes) };
}

/// Closes the group of this thread's `cp.async` copies issued since the last commit.
///
/// CUDA: `__pipeline_commit()`. PTX: `cp.async.commit_group`.
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_80"))]
#[inline(always)]
pub fn cp_async_commit_group() {
    seam::cp_async_commit_group()
}

/// Waits until at most `N` of this thread's committed `cp.async` groups are still in flight:
/// the copies of the older groups have landed and are visible to this thread. (Other threads
/// see them after a `sync_threads` that follows the wait.)
///
/// CUDA: `__pipeline_wait_prior(N)`. PTX: `cp.async.wait_group N`.
///
/// With a ring of `S` stages, `cp_async_wait_group::<{ S - 1 }>()` waits for the oldest.
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_80"))]
#[inline(always)]
pub fn cp_async_wait_group<const N: u32>() {
    seam::cp_async_wait_group::<N>()
}

/// Waits until all of this thread's `cp.async` copies have landed.
///
/// PTX: `cp.async.wait_all`.
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_80"))]
#[inline(always)]
pub fn cp_async_wait_all() {
    seam::cp_async_wait_all()
}

/// Has `bar` count one arrival when all of this thread's `cp.async` copies issued so far have
/// landed: the arrival is one of the phase's expected ones (`.noinc`), so a barrier
/// initialized for T threads completes when each of the T threads' copies are in.
///
/// CUDA: `cuda::memcpy_async` with a `cuda::barrier`. PTX: `cp.async.mbarrier.arrive.noinc.shared::cta.b64`.
///
/// # Safety
/// `bar`'s contract ([`crate::mbarrier`]); the phase expects this arrival.
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90"))]
#[inline(always)]
pub unsafe fn cp_async_mbarrier_arrive_noinc(bar: MBarrier) {
    // SAFETY: the caller upholds the contract above.
    unsafe { seam::cp_async_mbarrier_arrive_noinc_shared_cta(bar.addr()) };
}

/// Starts a bulk copy of `bytes` from global memory at `src` to this block's shared memory at
/// `dst`, whose completion delivers `bytes` to `bar`'s current phase. One thread issues it;
/// the phase must expect the bytes ([`MBarrier::arrive_expect_tx`], usually by the same thread
/// just before), and the consumers wait on the phase.
///
/// CUDA: `cuda::memcpy_async(dst, src, bytes, bar)`, `cuda::ptx::cp_async_bulk`.
/// PTX: `cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [dst], [src], bytes, [bar]`.
///
/// # Errors
/// [`BulkCopyError`] before anything is issued, from [`check_bulk_copy`].
///
/// # Safety
/// `dst[..bytes]` is in this block's shared memory and `src[..bytes]` in global memory, valid
/// until the phase completes; nothing reads `dst` before the phase completes or writes it
/// meanwhile (generic-proxy accesses before the copy need [`fence_proxy_async_shared`]);
/// `bar`'s contract ([`crate::mbarrier`]).
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90"))]
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub unsafe fn cp_async_bulk_global_to_shared(
    dst: *mut u8,
    src: *const u8,
    bytes: u32,
    bar: MBarrier,
) -> Result<(), BulkCopyError> {
    check_bulk_copy(dst, src, bytes)?;
    // SAFETY: checked above; the rest is the caller's.
    unsafe { cp_async_bulk_global_to_shared_unchecked(dst, src, bytes, bar) };
    Ok(())
}

/// [`cp_async_bulk_global_to_shared`] without the check, for a kernel that has proven the
/// alignment and size once for all its copies.
///
/// # Safety
/// As [`cp_async_bulk_global_to_shared`], and [`check_bulk_copy`] would return `Ok`.
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90"))]
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub unsafe fn cp_async_bulk_global_to_shared_unchecked(
    dst: *mut u8,
    src: *const u8,
    bytes: u32,
    bar: MBarrier,
) {
    // SAFETY: the caller upholds the contract above.
    unsafe { seam::cp_async_bulk_shared_cluster_global_mbarrier(dst, src, bytes, bar.addr()) };
}

/// Starts a bulk copy of `bytes` from this block's shared memory at `src` to global memory at
/// `dst`, in this thread's current bulk group ([`cp_async_bulk_commit_group`]).
///
/// CUDA: `cuda::ptx::cp_async_bulk` (global ← shared). PTX:
/// `cp.async.bulk.global.shared::cta.bulk_group [dst], [src], bytes`.
///
/// Shared memory written with ordinary stores needs [`fence_proxy_async_shared`] in each
/// writing thread and a `sync_threads` before the copy reads it.
///
/// # Errors
/// [`BulkCopyError`] before anything is issued, from [`check_bulk_copy`].
///
/// # Safety
/// `src[..bytes]` is in this block's shared memory and `dst[..bytes]` in global memory; nothing
/// writes `src` until the group's [`cp_async_bulk_wait_group_read`], nor touches `dst` until
/// its [`cp_async_bulk_wait_group`].
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90"))]
#[inline(always)]
pub unsafe fn cp_async_bulk_shared_to_global(
    dst: *mut u8,
    src: *const u8,
    bytes: u32,
) -> Result<(), BulkCopyError> {
    check_bulk_copy(dst, src, bytes)?;
    // SAFETY: the caller upholds the contract above.
    unsafe { seam::cp_async_bulk_global_shared_cta(dst, src, bytes) };
    Ok(())
}

/// Closes this thread's current bulk group (the shared → global copies issued since the last
/// commit). PTX: `cp.async.bulk.commit_group`.
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90"))]
#[inline(always)]
pub fn cp_async_bulk_commit_group() {
    seam::cp_async_bulk_commit_group()
}

/// Waits until at most `N` of this thread's bulk groups are still in flight: the older groups'
/// copies are complete and their writes to global memory performed.
///
/// PTX: `cp.async.bulk.wait_group N`.
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90"))]
#[inline(always)]
pub fn cp_async_bulk_wait_group<const N: u32>() {
    seam::cp_async_bulk_wait_group::<N>()
}

/// Waits until at most `N` of this thread's bulk groups may still be *reading* their source:
/// the older groups' shared memory may be written again (their writes to global memory may
/// still be in flight). The cheaper wait of a pipeline that reuses its stages.
///
/// PTX: `cp.async.bulk.wait_group.read N`.
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90"))]
#[inline(always)]
pub fn cp_async_bulk_wait_group_read<const N: u32>() {
    seam::cp_async_bulk_wait_group_read::<N>()
}

/// Orders this thread's ordinary (generic-proxy) accesses to this block's shared memory before
/// the asynchronous proxy's accesses after it: between threads' stores into a buffer and the
/// bulk copy that reads it, or between threads' reads of a stage and the copy that refills it.
///
/// Scope: the executing thread, across proxies. CUDA: `cuda::ptx::fence_proxy_async(space_shared)`,
/// `fence_proxy_async_shared_cta()`. PTX: `fence.proxy.async.shared::cta`.
///
/// A proxy fence, not a barrier: the other threads still need a `sync_threads` (or an
/// `mbarrier`) after it before the copy is issued.
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90"))]
#[inline(always)]
pub fn fence_proxy_async_shared() {
    crate::seam::sync::fence_proxy_async_shared_cta()
}

/// [`fence_proxy_async_shared`] for global memory: ordinary writes to global memory before it,
/// the copy engine's reads of them after it. PTX: `fence.proxy.async.global`.
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90"))]
#[inline(always)]
pub fn fence_proxy_async_global() {
    crate::seam::sync::fence_proxy_async_global()
}
