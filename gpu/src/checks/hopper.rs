//! Kernels that exercise Hopper's primitives — `mbarrier`s, asynchronous copies, clusters and
//! distributed shared memory — so that tests can compare what the GPU and the simulator do with
//! a CPU model, and so that each primitive's instruction is in the sm_90 PTX the tests read.
//!
//! Compiled into the sm_90 PTX only (and for the simulator).

use crate::async_copy::{
    BulkCopyError, cp_async_16, cp_async_16_zfill, cp_async_bulk_commit_group,
    cp_async_bulk_global_to_shared, cp_async_bulk_shared_to_global, cp_async_bulk_wait_group,
    cp_async_commit_group, cp_async_mbarrier_arrive_noinc, cp_async_wait_all, cp_async_wait_group,
    fence_proxy_async_shared,
};
use crate::atomic::{Order, Scope, fetch_or};
use crate::cluster::{
    ClusterU32, cluster_arrive, cluster_block_count, cluster_block_idx_x, cluster_block_rank,
    cluster_dim_x, cluster_idx_x, cluster_sync, cluster_wait, clusters_per_grid_x,
    fence_acq_rel_cluster, map_shared_rank,
};
use crate::index::{block_dim_x, block_idx_x, global_id_x, grid_dim_x, thread_idx_x};
use crate::mbarrier::{BarrierScope, MBarrier, Parity, WaitError, fence_mbarrier_init};
use crate::mem::Ptr;
use crate::shared::dynamic_shared;
use crate::shared_atomic::SharedU32;
use crate::sync::sync_threads;

/// Bits of the error word the checks set.
pub mod errors {
    /// A bounded `mbarrier` wait timed out.
    pub const TIMED_OUT: u32 = 1;
    /// A bulk copy was refused: an address not 16-byte aligned.
    pub const MISALIGNED: u32 = 2;
    /// A bulk copy was refused: a size not a non-zero multiple of 16 or too large.
    pub const BAD_SIZE: u32 = 4;
}

/// Records `bit` in the error word.
///
/// # Safety
/// `err` is a valid word touched only atomically.
unsafe fn flag(err: *mut u32, bit: u32) {
    // SAFETY: forwarded to the caller.
    unsafe { fetch_or(err, bit, Scope::Device, Order::Relaxed) };
}

fn wait_error(e: WaitError) -> u32 {
    match e {
        WaitError::TimedOut => errors::TIMED_OUT,
    }
}

fn bulk_error(e: BulkCopyError) -> u32 {
    match e {
        BulkCopyError::Misaligned => errors::MISALIGNED,
        BulkCopyError::BadSize => errors::BAD_SIZE,
    }
}

/// Bytes of shared memory before the data, where the checks keep their barriers: 16 of them.
pub const BARRIER_BYTES: u32 = 128;

kernel! {
    /// Split-phase barrier over `rounds` rounds: in each, every thread writes a value into its
    /// slot of shared memory, arrives, waits on its token, and adds its right neighbour's slot
    /// to `out[global id]`; a second phase keeps the next round's writes from overtaking the
    /// reads. With `warp_arrivals` set, warp leaders arrive for their warp with one counted
    /// arrival (`arrive_count`) in odd rounds, after the warp meets (`sync_warp`), and the other
    /// lanes wait by parity. Round `r`'s value of thread `t` is `(r + 1) * 1000 + t`.
    ///
    /// Launch with `BARRIER_BYTES + 4 * block_dim_x` bytes of shared memory; `out` has a word
    /// per thread, zeroed; `err` one word.
    pub unsafe fn mbarrier_phases(out: *mut u32, rounds: u32, warp_arrivals: u32, timeout_ns: u64, err: *mut u32) {
        let out = Ptr::new(out);
        let t = thread_idx_x();
        let n = block_dim_x();
        // SAFETY: the launch gives `BARRIER_BYTES` for the barrier and a word per thread after
        // them; each thread writes its own slot and reads its neighbour's between two phases.
        unsafe {
            let base = dynamic_shared::<u8>();
            let bar = MBarrier::from_generic(base.cast());
            let s_data = Ptr::new(base.add(BARRIER_BYTES as usize).cast::<u32>());
            if t == 0 {
                bar.init(n);
            }
            sync_threads();
            let mut sum = 0u32;
            for r in 0..rounds {
                s_data.add(t as usize).store((r + 1) * 1000 + t);
                let warp_threads = (n - (t & !31)).min(32);
                let phase = if warp_arrivals != 0 && r % 2 == 1 {
                    // The leader's counted arrival must come after every lane's write: the
                    // warp's lanes meet first.
                    crate::warp::sync_warp(crate::warp::active_mask());
                    if t.is_multiple_of(32) {
                        Some(bar.arrive_count(warp_threads, BarrierScope::Block))
                    } else {
                        None
                    }
                } else {
                    Some(bar.arrive(BarrierScope::Block))
                };
                let waited = match phase {
                    Some(p) => bar.wait(p, BarrierScope::Block, timeout_ns),
                    None => {
                        let mut parity = Parity::of_phase(2 * r);
                        bar.wait_parity(&mut parity, BarrierScope::Block, timeout_ns)
                    }
                };
                if let Err(e) = waited {
                    flag(err, wait_error(e));
                    return;
                }
                let right = if t + 1 == n { 0 } else { t + 1 };
                sum = sum.wrapping_add(s_data.add(right as usize).load());
                let after = bar.arrive(BarrierScope::Block);
                if let Err(e) = bar.wait(after, BarrierScope::Block, timeout_ns) {
                    flag(err, wait_error(e));
                    return;
                }
            }
            out.add(global_id_x()).store(sum);
        }
    }
}

kernel! {
    /// Copies `src[..len]` to `dst[..len]` through shared memory, one block per range of
    /// `stage_bytes` at a time, with a ring of `stages` stages: thread 0 of the block (the
    /// producer) issues one bulk copy per stage, expecting its bytes on the stage's *full*
    /// barrier; the threads of the other warps (the consumers) wait on it, copy the stage out
    /// with ordinary loads and stores, and arrive on the stage's *empty* barrier, which the
    /// producer waits on before it refills the stage. The bytes of a range past its last
    /// multiple of 16 are copied by the consumers straight from `src`.
    ///
    /// Launch with at least 64 threads per block and `BARRIER_BYTES + stages * stage_bytes`
    /// bytes of shared memory; `1 <= stages <= 8`, `stage_bytes` a non-zero multiple of 16 (else
    /// `err` gets `BAD_SIZE` and nothing is copied); `src` 16-byte aligned (else `MISALIGNED`).
    pub unsafe fn bulk_pipeline_copy(
        src: *const u8,
        dst: *mut u8,
        len: u64,
        stage_bytes: u32,
        stages: u32,
        timeout_ns: u64,
        err: *mut u32,
    ) {
        let t = thread_idx_x();
        let len = len as usize;
        if stages == 0 || stages > 8 || stage_bytes == 0 || !stage_bytes.is_multiple_of(16) || block_dim_x() < 64 {
            if t == 0 {
                // SAFETY: `err` is the launch's error word.
                unsafe { flag(err, errors::BAD_SIZE) };
            }
            return;
        }
        let consumers = block_dim_x() - 32;
        // SAFETY: the barriers take the first 2 * stages * 8 <= BARRIER_BYTES bytes, the stages
        // the rest of what the launch gave; the producer writes a stage only through the copy
        // engine after the consumers' empty arrivals, the consumers read it after the full
        // phase completes.
        unsafe {
            let base = dynamic_shared::<u8>();
            let full = |s: u32| MBarrier::from_generic(base.cast::<u64>().add(s as usize));
            let empty = |s: u32| MBarrier::from_generic(base.cast::<u64>().add((8 + s) as usize));
            let stage = |s: u32| base.add((BARRIER_BYTES + s * stage_bytes) as usize);
            if t == 0 {
                for s in 0..stages {
                    full(s).init(1);
                    empty(s).init(consumers);
                }
                // The copy engine (the async proxy) completes bytes on the full barriers.
                fence_proxy_async_shared();
            }
            sync_threads();

            let chunks = len.div_ceil(stage_bytes as usize);
            let first = block_idx_x() as usize;
            let step = grid_dim_x() as usize;
            if t == 0 {
                // PHASE: produce.
                let mut k = 0u32;
                let mut c = first;
                while c < chunks {
                    let (s, round) = (k % stages, k / stages);
                    if round > 0 {
                        let mut parity = Parity::of_phase(round - 1);
                        if let Err(e) = empty(s).wait_parity(&mut parity, BarrierScope::Block, timeout_ns) {
                            flag(err, wait_error(e));
                            return;
                        }
                    }
                    let off = c * stage_bytes as usize;
                    let bytes = (len - off).min(stage_bytes as usize) as u32;
                    let bulk = bytes & !15;
                    let _ = full(s).arrive_expect_tx(bulk, BarrierScope::Block);
                    if bulk > 0
                        && let Err(e) = cp_async_bulk_global_to_shared(stage(s), src.add(off), bulk, full(s))
                    {
                        flag(err, bulk_error(e));
                        // The phase still expects the bytes; complete them so the consumers
                        // are not left waiting for a copy that never started.
                        full(s).complete_tx(bulk);
                    }
                    k += 1;
                    c += step;
                }
            } else if t >= 32 {
                // PHASE: consume.
                let (src, dst) = (Ptr::new(src.cast_mut()), Ptr::new(dst));
                let me = (t - 32) as usize;
                let mut k = 0u32;
                let mut c = first;
                while c < chunks {
                    let (s, round) = (k % stages, k / stages);
                    let mut parity = Parity::of_phase(round);
                    if let Err(e) = full(s).wait_parity(&mut parity, BarrierScope::Block, timeout_ns) {
                        flag(err, wait_error(e));
                        return;
                    }
                    let off = c * stage_bytes as usize;
                    let bytes = (len - off).min(stage_bytes as usize);
                    let bulk = bytes & !15;
                    let mut i = me;
                    while i < bytes {
                        let v = if i < bulk { Ptr::new(stage(s)).add(i).load() } else { src.add(off + i).load() };
                        dst.add(off + i).store(v);
                        i += consumers as usize;
                    }
                    let _ = empty(s).arrive(BarrierScope::Block);
                    k += 1;
                    c += step;
                }
            }
        }
    }
}

kernel! {
    /// `dst[i] = 3 * src[i] + 1` for `i < len`, through shared memory filled by `cp.async`:
    /// each block takes tiles of `4 * block_dim_x` words, double-buffered — the next tile's
    /// 16-byte copies are in flight (`cp.async.cg`, zero-filled past `len`) while this one is
    /// computed; even tiles are waited for with `cp.async.wait_group 1`, odd ones with an
    /// `mbarrier` that counts each thread's copies (`cp.async.mbarrier.arrive.noinc`).
    ///
    /// Launch with `BARRIER_BYTES + 2 * 16 * block_dim_x` bytes of shared memory; `src` 16-byte
    /// aligned and readable to the next multiple of 4 words past `len` (the zero-filling copy
    /// of the tail reads 16 bytes).
    pub unsafe fn cp_async_transform(src: *const u32, dst: *mut u32, len: u64, timeout_ns: u64, err: *mut u32) {
        let dst = Ptr::new(dst);
        let len = len as usize;
        let t = thread_idx_x() as usize;
        let n = block_dim_x() as usize;
        let tile = 4 * n;
        if tile == 0 {
            return;
        }
        let tiles = len.div_ceil(tile);
        // SAFETY: two buffers of `tile` words after the barrier; thread `t` copies into and
        // reads back only its own 16 bytes of each buffer, so the copies need no barrier
        // between threads; every read of `src` is inside `len` (the zero-fill covers the rest).
        unsafe {
            let base = dynamic_shared::<u8>();
            let bar = MBarrier::from_generic(base.cast());
            let buf = |b: usize| base.add(BARRIER_BYTES as usize + b * 16 * n).cast::<[u32; 4]>();
            if t == 0 {
                bar.init(n as u32);
            }
            sync_threads();
            // Tile `k` into buffer `b`.
            let issue = |k: usize, b: usize| {
                let first = (k * tile + 4 * t) as isize;
                let avail = (len as isize - first).clamp(0, 4) as u32;
                let s = src.wrapping_add(first as usize).cast::<[u32; 4]>();
                if avail == 4 {
                    cp_async_16(buf(b).add(t), s);
                } else {
                    // The tail: copy the last words (or none, reading from the array's
                    // start, which is readable) and zero the rest.
                    let from = if avail == 0 { src.cast::<u8>() } else { s.cast::<u8>() };
                    cp_async_16_zfill(buf(b).add(t), from, 4 * avail);
                }
            };
            let mut k = block_idx_x() as usize;
            let step = grid_dim_x() as usize;
            let mut barrier_phases = 0u32;
            // The buffer of this block's current tile: 0 for its even tiles (0, 2, …), 1 for
            // the odd ones; the next tile goes into the other.
            let mut b = 0;
            if k < tiles {
                issue(k, b);
                cp_async_commit_group();
            }
            while k < tiles {
                let next = k + step;
                if next < tiles {
                    issue(next, 1 - b);
                }
                cp_async_commit_group();
                if b == 0 {
                    // This tile's group is the older of the two in flight.
                    cp_async_wait_group::<1>();
                } else {
                    // Arrives when all this thread's copies so far (this tile's and the
                    // next's) have landed.
                    cp_async_mbarrier_arrive_noinc(bar);
                    let mut parity = Parity::of_phase(barrier_phases);
                    barrier_phases += 1;
                    if let Err(e) = bar.wait_parity(&mut parity, BarrierScope::Block, timeout_ns) {
                        flag(err, wait_error(e));
                        return;
                    }
                }
                let v = Ptr::new(buf(b)).add(t).load();
                for (j, w) in v.iter().enumerate() {
                    let i = k * tile + 4 * t + j;
                    if i < len {
                        dst.add(i).store(w.wrapping_mul(3).wrapping_add(1));
                    }
                }
                k = next;
                b = 1 - b;
            }
            cp_async_wait_all();
        }
    }
}

kernel! {
    /// Each block fills `words` words of shared memory with `block * 1_000_000 + i` by ordinary
    /// stores and writes them to `dst[block * words..]` with one bulk copy (shared → global),
    /// waited for with the bulk group.
    ///
    /// Launch with `4 * words` bytes of shared memory; `words` a multiple of 4; `dst` 16-byte
    /// aligned.
    pub unsafe fn bulk_store(dst: *mut u32, words: u32, err: *mut u32) {
        let t = thread_idx_x();
        let b = block_idx_x();
        // SAFETY: `words` words of shared memory (launch contract) written by ordinary stores,
        // then read by the copy engine after the proxy fence and the barrier.
        unsafe {
            let s_data = Ptr::new(dynamic_shared::<u32>());
            let mut i = t;
            while i < words {
                s_data.add(i as usize).store(b * 1_000_000 + i);
                i += block_dim_x();
            }
            fence_proxy_async_shared();
            sync_threads();
            if t == 0 {
                let to = dst.add((b * words) as usize).cast::<u8>();
                match cp_async_bulk_shared_to_global(to, s_data.as_ptr().cast(), 4 * words) {
                    Ok(()) => {
                        cp_async_bulk_commit_group();
                        cp_async_bulk_wait_group::<0>();
                    }
                    Err(e) => flag(err, bulk_error(e)),
                }
            }
        }
    }
}

/// Words each block of `cluster_check` writes.
pub const CLUSTER_CHECK_FIELDS: usize = 8;

kernel! {
    /// What a cluster looks like from inside, one row of `CLUSTER_CHECK_FIELDS` words per
    /// block of `out`: its rank and the cluster's size, its position in the cluster and the
    /// cluster's in the grid (x), the clusters per grid (x); then, after a cluster barrier, the
    /// value its right neighbour in the cluster wrote into its own shared memory (read through
    /// `mapa`), the count every thread of the cluster added into rank 0's shared memory
    /// (cluster-scope atomics on distributed shared memory), and the sum of every block's
    /// value read back by each thread through the split barrier (arrive, then wait).
    ///
    /// Launch with clusters along x and 16 bytes of shared memory.
    pub unsafe fn cluster_check(out: *mut u32) {
        let out = Ptr::new(out);
        let t = thread_idx_x();
        let rank = cluster_block_rank();
        let size = cluster_block_count();
        // SAFETY: 16 bytes of shared memory per block: word 0 the block's value, word 1 the
        // cluster's counter (used in rank 0), word 2 the split-barrier sum; remote accesses
        // happen between cluster barriers while every block runs (the last barrier keeps
        // each block's memory alive until its siblings are done with it).
        unsafe {
            let s = Ptr::new(dynamic_shared::<u32>());
            if t == 0 {
                s.store(100 + block_idx_x());
                s.add(1).store(0);
            }
            cluster_sync();
            let right = map_shared_rank(s.as_ptr(), if rank + 1 == size { 0 } else { rank + 1 });
            let neighbour = Ptr::new(right).load();
            let counter = ClusterU32::map(SharedU32::from_generic(s.add(1).as_ptr()), 0);
            counter.red_add_cluster(1);
            fence_acq_rel_cluster();
            cluster_arrive();
            // Independent work between the arrival and the wait.
            let mine = s.load();
            cluster_wait();
            let mut sum = 0u32;
            for r in 0..size {
                sum = sum.wrapping_add(Ptr::new(map_shared_rank(s.as_ptr(), r)).load());
            }
            let count = counter.read();
            if t == 0 {
                let row = out.add(block_idx_x() as usize * CLUSTER_CHECK_FIELDS);
                row.store(rank);
                row.add(1).store(size);
                row.add(2).store(cluster_block_idx_x() + 1000 * cluster_dim_x());
                row.add(3).store(cluster_idx_x());
                row.add(4).store(clusters_per_grid_x());
                row.add(5).store(neighbour);
                row.add(6).store(count);
                row.add(7).store(sum.wrapping_sub(mine));
            }
            cluster_sync();
        }
    }
}

kernel! {
    /// A consumer block tells a producer block through a barrier in the producer's shared
    /// memory: every block of the cluster but rank 0 arrives (once per thread) on rank 0's
    /// barrier, remotely; rank 0 waits for them all, then writes how many phases completed.
    ///
    /// Launch with clusters along x of at least 2 blocks and 16 bytes of shared memory; `out`
    /// has a word per cluster.
    pub unsafe fn mbarrier_remote(out: *mut u32, timeout_ns: u64, err: *mut u32) {
        let rank = cluster_block_rank();
        let size = cluster_block_count();
        let t = thread_idx_x();
        // SAFETY: the barrier is the first 8 bytes of each block's shared memory; rank 0's is
        // initialized before the cluster barrier that precedes every remote arrival, and
        // rank 0 waits for all of them before the final cluster barrier.
        unsafe {
            let bar = MBarrier::from_generic(dynamic_shared::<u64>());
            if t == 0 {
                bar.init((size - 1) * block_dim_x());
                fence_mbarrier_init();
            }
            cluster_sync();
            if rank != 0 {
                bar.arrive_remote(0);
            } else {
                let mut parity = Parity::FIRST;
                match bar.wait_parity(&mut parity, BarrierScope::Cluster, timeout_ns) {
                    Ok(()) if t == 0 => Ptr::new(out).add(cluster_idx_x() as usize).store(1),
                    Ok(()) => {}
                    Err(e) => flag(err, wait_error(e)),
                }
            }
            cluster_sync();
        }
    }
}

kernel! {
    /// Waits on the wrong phase: one thread initializes a barrier for one arrival, arrives
    /// (phase 0 completes), then waits for phase 1, which nobody arrives at — as a consumer
    /// that counted its phases wrong would. The bounded wait gives up after `timeout_ns` and
    /// sets `err`; an unbounded one would hang the GPU.
    ///
    /// Launch with one thread and 16 bytes of shared memory.
    pub unsafe fn mbarrier_wrong_parity(timeout_ns: u64, err: *mut u32) {
        // SAFETY: one thread, one barrier in the launch's shared memory.
        unsafe {
            let bar = MBarrier::from_generic(dynamic_shared::<u64>());
            bar.init(1);
            let token = bar.arrive(BarrierScope::Block);
            if bar.wait(token, BarrierScope::Block, timeout_ns).is_err() {
                flag(err, 8);
            }
            let mut parity = Parity::FIRST.next();
            if let Err(e) = bar.wait_parity(&mut parity, BarrierScope::Block, timeout_ns) {
                flag(err, wait_error(e));
            }
            bar.inval();
        }
    }
}

kernel! {
    /// [`grid_barrier_phases`](crate::checks::barrier::grid_barrier_phases) with the
    /// cluster-aware grid barrier ([`ClusterGridBarrier`](crate::cluster::ClusterGridBarrier)):
    /// before barrier `r` thread 0 of each block writes `r` into its block's slot of `phases`;
    /// after it every block reads every slot and counts into `errors` each that is not `r`. A
    /// second barrier keeps the next round's writes from overtaking the reads. Launch clustered;
    /// `errors` must end at 0.
    pub unsafe fn cluster_grid_barrier_phases(
        state: *mut crate::grid::GridBarrierState,
        phases: *mut u32,
        rounds: u32,
        errors: *mut u32,
    ) {
        // SAFETY: the host passes a live, zeroed barrier state and a clustered launch.
        let mut barrier = unsafe { crate::cluster::ClusterGridBarrier::from_ptr(state) };
        // SAFETY: the launch's `phases` and `errors`.
        unsafe { crate::checks::barrier::check_phases(|| barrier.sync(), phases, rounds, errors) }
    }
}

kernel! {
    /// Every cluster but the one of block `absent` calls the cluster-aware grid barrier once;
    /// that whole cluster returns at once. The others must give up at the state's timeout and
    /// record it, not hang. (A single block that returns early inside a cluster that calls the
    /// barrier counts as arrived at the cluster barrier — exited threads do — and is not
    /// detected: see [`ClusterGridBarrier`](crate::cluster::ClusterGridBarrier).)
    pub unsafe fn cluster_grid_barrier_absent_cluster(state: *mut crate::grid::GridBarrierState, absent: u32) {
        let n = cluster_block_count();
        if n != 0 && crate::index::block_rank_in_grid() / n == absent / n {
            return;
        }
        // SAFETY: the host passes a live, zeroed barrier state and a clustered launch.
        let mut barrier = unsafe { crate::cluster::ClusterGridBarrier::from_ptr(state) };
        let _ = barrier.sync();
    }
}

kernel! {
    /// The barrier rounds of `sync_stress::barrier_stress` (plain slots written, the barrier,
    /// a random slot of another block read back and checked) with the cluster-aware grid
    /// barrier. Launch clustered; `violations` must end at 0.
    pub unsafe fn cluster_barrier_stress(state: *mut crate::grid::GridBarrierState, slots: *mut u32, rounds: u32, seed: u32, violations: *mut u64, failures: *mut u32) {
        // SAFETY: the host passes a live, zeroed barrier state, a clustered launch, and the
        // buffers `barrier_rounds` needs.
        unsafe {
            let mut barrier = crate::cluster::ClusterGridBarrier::from_ptr(state);
            let c = crate::checks::sync_stress::Rounds { slots, rounds, seed, violations, failures, per_thread: false, first: 0, blocks: crate::index::blocks_per_grid() };
            crate::checks::sync_stress::barrier_rounds(|_| barrier.sync(), c)
        }
    }
}
