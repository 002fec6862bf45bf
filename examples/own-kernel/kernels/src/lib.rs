//! The example's kernels, on gridsync's primitives: a count finished with one device-scope
//! atomic per block, an append under a device mutex, and (sm_90) the count finished with one
//! device-scope atomic per thread block *cluster*, the blocks' totals gathered in distributed
//! shared memory. Built to PTX by the host crate's `build.rs`; on the host the same functions
//! run on gridsync's simulator.
//!
//! Their plain loads and stores go through [`Ptr`], whose accesses the simulator's race checker
//! sees (a raw `*p` it does not); on the GPU a `Ptr` access is the raw pointer's, the same PTX.
#![cfg_attr(target_arch = "nvptx64", no_std, feature(abi_ptx))]

use gpu::atomic::atomic_add_device;
use gpu::index::{grid_stride, thread_idx_x};
use gpu::kernel;
use gpu::lock::{Mutex, MutexState};
use gpu::mem::Ptr;
use gpu::shared::dynamic_shared;
use gpu::shared_atomic::SharedU32;
use gpu::sync::sync_threads;

/// Dynamic shared memory [`count_multiples`] needs: the block's counter.
pub const COUNT_SHARED_BYTES: u32 = 4;

/// Whether `x` is a multiple of `divisor` (never, for a divisor of 0: no division by zero).
#[inline(always)]
pub fn is_multiple(x: u32, divisor: u32) -> bool {
    x.checked_rem(divisor) == Some(0)
}

kernel! {
    /// Adds to `*count` how many of the `len` words at `src` are multiples of `divisor`.
    ///
    /// Each block counts in a shared-memory word with block-scope atomics (cheap: they stay on
    /// the SM), then its thread 0 adds the block's total with one device-scope atomic, so the
    /// global counter sees one atomic per block instead of one per element. Launch with
    /// [`COUNT_SHARED_BYTES`] of dynamic shared memory; `*count` starts at 0.
    pub unsafe fn count_multiples(src: *const u32, len: u64, divisor: u32, count: *mut u32) {
        let src = Ptr::new(src.cast_mut());
        // SAFETY: the launch gives the block `COUNT_SHARED_BYTES` of dynamic shared memory.
        let s_count = Ptr::new(unsafe { dynamic_shared::<u32>() });
        if thread_idx_x() == 0 {
            // SAFETY: one thread writes, before the barrier below.
            unsafe { s_count.store(0) };
        }
        // The zero is written before any thread adds to it.
        sync_threads();
        // SAFETY: `s_count` points into this block's shared memory.
        let counter = unsafe { SharedU32::from_generic(s_count.as_ptr()) };
        for i in grid_stride(len as usize) {
            // SAFETY: `i < len`, and `src` holds `len` words.
            if is_multiple(unsafe { src.add(i).load() }, divisor) {
                // SAFETY: the counter is touched only atomically until the next barrier.
                unsafe { counter.red_add_block(1) };
            }
        }
        // Every add of the block is done (and visible) before thread 0 reads the total.
        sync_threads();
        if thread_idx_x() == 0 {
            // SAFETY: after the barrier, nothing writes the counter.
            let total = unsafe { s_count.load() };
            if total != 0 {
                // SAFETY: `*count` is touched only atomically during the launch.
                unsafe { atomic_add_device(count, total) };
            }
        }
    }
}

kernel! {
    /// Appends each multiple of `divisor` among the `len` words at `src` to `out`, where
    /// `*out_len` words are already, under the mutex whose state is at `state`: inside the lock
    /// a plain load and store of `*out_len` are enough, because the lock's acquire and release
    /// order them. The order of the appended words is the order the threads took the lock in.
    /// `out` has room for `len` words; a thread whose lock times out stops (the host's
    /// `DeviceMutex::check` reports it).
    pub unsafe fn append_multiples(
        src: *const u32, len: u64, divisor: u32, out: *mut u32, out_len: *mut u32,
        state: *mut MutexState,
    ) {
        let (src, out, out_len) = (Ptr::new(src.cast_mut()), Ptr::new(out), Ptr::new(out_len));
        // SAFETY: `state` is a live `MutexState` used only through `Mutex` handles.
        let mutex = unsafe { Mutex::from_ptr(state) };
        for i in grid_stride(len as usize) {
            // SAFETY: `i < len`, and `src` holds `len` words.
            let x = unsafe { src.add(i).load() };
            if !is_multiple(x, divisor) {
                continue;
            }
            let Ok(_guard) = mutex.lock() else { return };
            // SAFETY: the guard makes this thread the only one touching `*out_len` and the
            // slot it names; at most `len` words are appended, and `out` holds `len`.
            unsafe {
                let n = out_len.load();
                out.add(n as usize).store(x);
                out_len.store(n + 1);
            }
        }
    }
}

/// Dynamic shared memory [`count_multiples_cluster`] needs: the block's counter and the
/// cluster's (used in rank 0).
pub const CLUSTER_COUNT_SHARED_BYTES: u32 = 8;

// A kernel on Hopper's primitives goes behind the same `cfg` as they do: it is built into the
// sm_90 PTX (and for the simulator) only, and the host refuses it on an older GPU.
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90"))]
kernel! {
    /// [`count_multiples`] finished per cluster: each block counts in its shared memory, adds its
    /// total to a counter in the shared memory of its cluster's first block (a cluster-scope
    /// atomic in distributed shared memory), and that block adds the cluster's total with one
    /// device-scope atomic. Launch in clusters, with [`CLUSTER_COUNT_SHARED_BYTES`].
    pub unsafe fn count_multiples_cluster(src: *const u32, len: u64, divisor: u32, count: *mut u32) {
        use gpu::cluster::{ClusterU32, cluster_block_rank, cluster_sync};
        // SAFETY: the launch gives `CLUSTER_COUNT_SHARED_BYTES`: word 0 the block's count, word
        // 1 the cluster's (in rank 0). Both are zeroed before the first cluster barrier, added
        // to atomically between the barriers, and read after the last one.
        unsafe {
            let src = Ptr::new(src.cast_mut());
            let s = Ptr::new(dynamic_shared::<u32>());
            if thread_idx_x() == 0 {
                s.store(0);
                s.add(1).store(0);
            }
            // Every block's counters are zero before any block adds to rank 0's.
            cluster_sync();
            let mine = SharedU32::from_generic(s.as_ptr());
            for i in grid_stride(len as usize) {
                if is_multiple(src.add(i).load(), divisor) {
                    mine.red_add_block(1);
                }
            }
            sync_threads(); // the block's count is complete
            if thread_idx_x() == 0 && s.load() != 0 {
                ClusterU32::map(mine.offset(1), 0).red_add_cluster(s.load());
            }
            // Every block's total is in rank 0's counter; no block exits while rank 0's
            // shared memory may still be added to.
            cluster_sync();
            if thread_idx_x() == 0 && cluster_block_rank() == 0 && s.add(1).load() != 0 {
                atomic_add_device(count, s.add(1).load());
            }
        }
    }
}
