//! Kernels that exercise the warp, shared-memory, fence and clock primitives, so that tests can
//! compare what they do on the GPU and on the simulator with a CPU model — and so that every
//! primitive's instruction is in the PTX the tests read.

use crate::atomic::Scope;
use crate::index::{global_id_x, thread_idx_x};
use crate::mem::Ptr;
use crate::shared::{dynamic_shared, dynamic_shared_bytes};
use crate::sync::{
    fence_acq_rel, fence_sc, sync_threads, threadfence, threadfence_block, threadfence_system,
};
use crate::time::{clock64, globaltimer_ns, nanosleep};
use crate::warp::{
    active_mask, ballot_sync, lane_id, shfl_down_sync, shfl_sync, shfl_up_sync, shfl_xor_sync,
    sync_warp,
};

/// Fields `warp_check` writes per thread.
pub const WARP_CHECK_FIELDS: usize = 9;

kernel! {
    /// Each thread writes, into its row of `WARP_CHECK_FIELDS` words of `out`: its lane, lane 0's
    /// value (`shfl_sync`), its neighbors' values (`shfl_up/down/xor_sync` by 1), the warp's
    /// ballot of odd values, the block's wrapping sum through shared memory, and a 64-bit
    /// `shfl_down_sync` of `(value << 32) | global id` (two words).
    ///
    /// Launch with exactly one thread per input and `block_dim_x * 4` bytes of shared memory.
    pub unsafe fn warp_check(input: *const u32, out: *mut u32) {
        let (input, out) = (Ptr::new(input.cast_mut()), Ptr::new(out));
        let g = global_id_x();
        // SAFETY: one input and one row of output per thread (launch contract above); the
        // shared array has one word per thread of the block.
        unsafe {
            let v = input.add(g).load();
            let mask = active_mask();
            let row = out.add(g * WARP_CHECK_FIELDS);
            row.store(lane_id());
            row.add(1).store(shfl_sync(mask, v, 0));
            row.add(2).store(shfl_up_sync(mask, v, 1));
            row.add(3).store(shfl_down_sync(mask, v, 1));
            row.add(4).store(shfl_xor_sync(mask, v, 1));
            row.add(5).store(ballot_sync(mask, v & 1 == 1));
            sync_warp(mask);

            // Every thread publishes its value, waits for the others, and reads them all.
            let s_block = Ptr::new(dynamic_shared::<u32>());
            let threads = dynamic_shared_bytes() as usize / 4;
            s_block.add(thread_idx_x() as usize).store(v);
            sync_threads();
            let mut sum = 0u32;
            for i in 0..threads {
                sum = sum.wrapping_add(s_block.add(i).load());
            }
            row.add(6).store(sum);

            let wide = shfl_down_sync(mask, ((v as u64) << 32) | g as u64, 1);
            row.add(7).store(wide as u32);
            row.add(8).store((wide >> 32) as u32);
        }
    }
}

kernel! {
    /// Writes `data[i] = i + 1` for `i` in 0..9 with each kind of fence between consecutive
    /// writes, then `flag = 1`: the publish-then-signal pattern every fence exists for. One
    /// thread is enough; the fences' PTX is what the tests look for, the values what they check.
    pub unsafe fn fence_check(data: *mut u32, flag: *mut u32) {
        if global_id_x() != 0 {
            return;
        }
        let data = Ptr::new(data);
        // SAFETY: `data` has 9 words and `flag` one, written by this thread alone.
        unsafe {
            data.store(1);
            threadfence_block();
            data.add(1).store(2);
            threadfence();
            data.add(2).store(3);
            threadfence_system();
            // Written out rather than looped over `Scope::ALL`: a loop over an array would put
            // the array in local memory (a stack frame) for a handful of stores.
            data.add(3).store(4);
            fence_acq_rel(Scope::Block);
            data.add(4).store(5);
            fence_acq_rel(Scope::Device);
            data.add(5).store(6);
            fence_acq_rel(Scope::System);
            data.add(6).store(7);
            fence_sc(Scope::Block);
            data.add(7).store(8);
            fence_sc(Scope::Device);
            data.add(8).store(9);
            fence_sc(Scope::System);
            crate::atomic::store(flag, 1, Scope::Device, crate::atomic::StoreOrder::Release);
        }
    }
}

kernel! {
    /// Thread 0 reads `%globaltimer` and `%clock64`, sleeps `sleep_ns`, and reads both again:
    /// `out = [timer before, timer after, clock before, clock after]`.
    pub unsafe fn timer_check(out: *mut u64, sleep_ns: u32) {
        if global_id_x() != 0 {
            return;
        }
        let t0 = globaltimer_ns();
        let c0 = clock64();
        nanosleep(sleep_ns);
        let c1 = clock64();
        let t1 = globaltimer_ns();
        let out = Ptr::new(out);
        // SAFETY: `out` has 4 words, written by this thread alone.
        unsafe {
            out.store(t0);
            out.add(1).store(t1);
            out.add(2).store(c0);
            out.add(3).store(c1);
        }
    }
}

kernel! {
    /// Thread 0 waits until `%globaltimer` has moved at least `ns` past its first reading,
    /// sleeping between looks, and writes both readings to `out[0..2]`: a launch that lasts
    /// at least `ns` whatever `nanosleep` does (the hardware may wake it early).
    pub unsafe fn wait_at_least(out: *mut u64, ns: u64) {
        if global_id_x() != 0 {
            return;
        }
        let t0 = globaltimer_ns();
        let mut t1 = t0;
        while t1.wrapping_sub(t0) < ns {
            nanosleep(10_000);
            t1 = globaltimer_ns();
        }
        let out = Ptr::new(out);
        // SAFETY: `out` has 2 words, written by this thread alone.
        unsafe {
            out.store(t0);
            out.add(1).store(t1);
        }
    }
}
