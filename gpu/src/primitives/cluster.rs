//! Thread block clusters (sm_90): the level between a block and the grid.
//!
//! A launch may group its blocks in clusters of up to 8 blocks (16 where the kernel allows a
//! non-portable size): the blocks of one cluster are scheduled at the same time on one GPC, so
//! they can wait for each other — the **cluster barrier**, a hardware barrier over every thread
//! of the cluster — and read, write and update each other's shared memory — **distributed shared
//! memory**, reached through [`map_shared_rank`] (`mapa`). A cluster is what a grid barrier
//! would be if the grid were small enough to be resident by construction: nothing here can
//! deadlock for want of an SM.
//!
//! CUDA: `cooperative_groups::this_cluster()` — `block_rank()`, `num_blocks()`, `sync()`,
//! `barrier_arrive()`/`barrier_wait()`, `map_shared_rank(p, rank)`; the launch attribute
//! `cudaLaunchAttributeClusterDimension`. The host side is `LaunchConfig::with_cluster`.
//!
//! # Rules the hardware does not check
//!
//! - A block's shared memory exists only while the block runs. A block must not exit while a
//!   sibling may still touch its shared memory: end every kernel that uses distributed shared
//!   memory with a [`cluster_sync`] after the last remote access.
//! - The cluster barrier counts every thread of the cluster that has not exited: every running
//!   thread must arrive, once per phase, and wait before it arrives again.
//! - Remote shared memory is not ordered with this block's accesses by `sync_threads`: use the
//!   cluster barrier (release/acquire at cluster scope) or cluster-scope atomics and fences.
//!
//! Everything here needs sm_90: it is compiled into the sm_90 PTX only (and for the
//! simulator), and the host refuses clustered launches on older GPUs.
//!
//! In the simulator a cluster's blocks run at once like every block; the barrier is a real
//! split barrier over the cluster's threads, and `mapa` returns the address in the sibling
//! block's own shared-memory buffer.

use crate::seam::cluster::{
    atom_relaxed_cluster_shared_cluster_add_u32, ld_shared_cluster_u32, mapa_shared_cluster_u32,
    red_relaxed_cluster_shared_cluster_add_u32,
};
use crate::seam::shared::SharedAddr;
use crate::shared_atomic::SharedU32;

macro_rules! cluster_registers {
    ($($(#[$doc:meta])* $name:ident => $sreg:ident;)*) => {
        $(
            $(#[$doc])*
            #[inline(always)]
            pub fn $name() -> u32 {
                crate::seam::sreg::$sreg()
            }
        )*
    };
}

cluster_registers! {
    /// This block's rank in its cluster, `0..cluster_block_count()` (x fastest).
    ///
    /// CUDA: `this_cluster().block_rank()`. PTX: `%cluster_ctarank`.
    cluster_block_rank => cluster_ctarank;
    /// The number of blocks in this block's cluster (1 in a launch without clusters).
    ///
    /// CUDA: `this_cluster().num_blocks()`. PTX: `%cluster_nctarank`.
    cluster_block_count => cluster_nctarank;
    /// This block's position in its cluster, x. CUDA: `this_cluster().block_index().x`.
    /// PTX: `%cluster_ctaid.x`.
    cluster_block_idx_x => cluster_ctaid_x;
    /// This block's position in its cluster, y. PTX: `%cluster_ctaid.y`.
    cluster_block_idx_y => cluster_ctaid_y;
    /// This block's position in its cluster, z. PTX: `%cluster_ctaid.z`.
    cluster_block_idx_z => cluster_ctaid_z;
    /// Blocks per cluster, x. CUDA: `this_cluster().dim_blocks().x`. PTX: `%cluster_nctaid.x`.
    cluster_dim_x => cluster_nctaid_x;
    /// Blocks per cluster, y. PTX: `%cluster_nctaid.y`.
    cluster_dim_y => cluster_nctaid_y;
    /// Blocks per cluster, z. PTX: `%cluster_nctaid.z`.
    cluster_dim_z => cluster_nctaid_z;
    /// This block's cluster's position in the grid of clusters, x. PTX: `%clusterid.x`.
    cluster_idx_x => clusterid_x;
    /// This block's cluster's position, y. PTX: `%clusterid.y`.
    cluster_idx_y => clusterid_y;
    /// This block's cluster's position, z. PTX: `%clusterid.z`.
    cluster_idx_z => clusterid_z;
    /// Clusters in the grid, x. PTX: `%nclusterid.x`.
    clusters_per_grid_x => nclusterid_x;
    /// Clusters in the grid, y. PTX: `%nclusterid.y`.
    clusters_per_grid_y => nclusterid_y;
    /// Clusters in the grid, z. PTX: `%nclusterid.z`.
    clusters_per_grid_z => nclusterid_z;
}

/// The calling thread arrives at its cluster's barrier and goes on: what it wrote before is
/// released to the cluster's threads that [`cluster_wait`] for this phase.
///
/// Scope: cluster. Ordering: release. CUDA: `this_cluster().barrier_arrive()`.
/// PTX: `barrier.cluster.arrive.release`.
///
/// Split-phase: between the arrival and the wait a thread can do work that does not depend on
/// the others (the wait then often costs nothing). Every running thread of the cluster must
/// arrive once per phase, and must wait before it arrives again.
#[inline(always)]
pub fn cluster_arrive() {
    crate::seam::cluster::barrier_cluster_arrive_release()
}

/// [`cluster_arrive`] that orders nothing: the arrival only counts.
///
/// Scope: cluster. Ordering: relaxed. CUDA: `barrier_arrive` with relaxed semantics.
/// PTX: `barrier.cluster.arrive.relaxed`.
///
/// For a barrier that only paces (every block has started, say, before any touches a
/// sibling's shared memory) where no data passes through it; cheaper than a release.
#[inline(always)]
pub fn cluster_arrive_relaxed() {
    crate::seam::cluster::barrier_cluster_arrive_relaxed()
}

/// Waits until every running thread of the cluster has arrived at the phase this thread
/// arrived at; what they released before arriving is visible after it.
///
/// Scope: cluster. Ordering: acquire. CUDA: `this_cluster().barrier_wait()`.
/// PTX: `barrier.cluster.wait.acquire`.
///
/// The calling thread must have arrived first ([`cluster_arrive`]). Not bounded: the
/// cluster's blocks are resident together by construction, so only a thread that never arrives
/// can keep it waiting — a bug of the kernel, which the simulator reports as a deadlock.
#[inline(always)]
pub fn cluster_wait() {
    crate::seam::cluster::barrier_cluster_wait_acquire()
}

/// [`cluster_arrive`] then [`cluster_wait`]: every thread of the cluster waits for all, and
/// their writes before it (to their own or to distributed shared memory, or to global memory)
/// are visible to all after it.
///
/// Scope: cluster. Ordering: release, then acquire. CUDA: `this_cluster().sync()`.
/// PTX: `barrier.cluster.arrive.release` + `barrier.cluster.wait.acquire`.
///
/// The block-level twin is [`sync_threads`](crate::sync::sync_threads); the grid-level one,
/// [`GridBarrier`](crate::grid::GridBarrier). Every running thread of the cluster must call it.
#[inline(always)]
pub fn cluster_sync() {
    cluster_arrive();
    cluster_wait();
}

/// The address of the same object in the shared memory of the block of rank `rank` in this
/// block's cluster: `p` points into this block's shared memory, the result into the sibling's,
/// at the same offset. A generic address: ordinary loads, stores and
/// [`atomic`](crate::atomic) operations through it reach the sibling's shared memory.
///
/// CUDA: `this_cluster().map_shared_rank(p, rank)`. PTX: `mapa.u64`.
///
/// Atomics through it are at least cluster-scoped work: the device scope of
/// [`crate::atomic`] includes the cluster, and [`ClusterU32`] has the cluster-scope,
/// state-space-specific forms.
///
/// # Safety
/// - `p` points into this block's shared memory, and `rank < cluster_block_count()`;
/// - the sibling is still running whenever the result is dereferenced (see the module's rules).
#[inline(always)]
pub unsafe fn map_shared_rank<T>(p: *mut T, rank: u32) -> *mut T {
    // SAFETY: the caller upholds the contract.
    unsafe { crate::seam::cluster::mapa_u64(p, rank) }
}

/// A `u32` in the shared memory of some block of this cluster, addressed in the
/// `shared::cluster` state space: the distributed-shared-memory twin of [`SharedU32`].
///
/// Made from a [`SharedU32`] of this block's shared memory and the rank of the block it should
/// reach ([`ClusterU32::map`]). Its atomics name the state space and the cluster scope, so
/// ptxas emits the distributed-shared-memory atomic directly instead of a generic one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ClusterU32 {
    addr: SharedAddr,
}

impl ClusterU32 {
    /// The word at `word`'s offset in the shared memory of the block of rank `rank` of this
    /// cluster. PTX: `mapa.shared::cluster.u32`.
    ///
    /// # Safety
    /// `rank < cluster_block_count()`.
    #[inline(always)]
    pub unsafe fn map(word: SharedU32, rank: u32) -> ClusterU32 {
        ClusterU32 {
            // SAFETY: address arithmetic only.
            addr: unsafe { mapa_shared_cluster_u32(word.addr(), rank) },
        }
    }

    /// The address `i` words further (no check).
    #[inline(always)]
    pub fn offset(self, i: u32) -> ClusterU32 {
        ClusterU32 {
            addr: self.addr.wrapping_add(i.wrapping_mul(4)),
        }
    }

    /// `*self += val` atomically for every thread of the cluster, without the old value.
    ///
    /// Scope: cluster. Ordering: relaxed. CUDA: `atomicAdd` on a pointer from
    /// `map_shared_rank`, result unused. PTX: `red.relaxed.cluster.shared::cluster.add.u32`.
    ///
    /// # Safety
    /// The word is in the shared memory of a running block of this cluster (inside what its
    /// launch gave), and every access racing with this one is atomic at cluster scope or wider.
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub unsafe fn red_add_cluster(self, val: u32) {
        // SAFETY: the caller upholds the contract above.
        unsafe { red_relaxed_cluster_shared_cluster_add_u32(self.addr, val) };
    }

    /// `*self += val` atomically for every thread of the cluster; returns the old value.
    ///
    /// Scope: cluster. Ordering: relaxed. PTX: `atom.relaxed.cluster.shared::cluster.add.u32`.
    ///
    /// # Safety
    /// As [`ClusterU32::red_add_cluster`].
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub unsafe fn fetch_add_cluster(self, val: u32) -> u32 {
        // SAFETY: the caller upholds the contract above.
        unsafe { atom_relaxed_cluster_shared_cluster_add_u32(self.addr, val) }
    }

    /// A plain load of the word (no atomicity with concurrent writers).
    /// PTX: `ld.shared::cluster.u32`.
    ///
    /// # Safety
    /// As [`ClusterU32::red_add_cluster`], and nothing writes the word meanwhile (a cluster
    /// barrier separates the writes from this load).
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub unsafe fn read(self) -> u32 {
        // SAFETY: the caller upholds the contract above.
        unsafe { ld_shared_cluster_u32(self.addr) }
    }
}

/// Acquire-release fence at cluster scope: this thread's accesses before it are seen by the
/// cluster's threads before its accesses after it.
///
/// Scope: cluster. Ordering: acquire-release. PTX: `fence.acq_rel.cluster`.
///
/// A fence, not a barrier: nobody waits. Pairs with a relaxed flag in a sibling's shared memory
/// the way [`fence_acq_rel_device`](crate::sync::fence_acq_rel_device) pairs with one in global
/// memory.
#[inline(always)]
pub fn fence_acq_rel_cluster() {
    crate::seam::sync::fence_acq_rel_cluster()
}

/// Sequentially consistent fence at cluster scope. PTX: `fence.sc.cluster`.
#[inline(always)]
pub fn fence_sc_cluster() {
    crate::seam::sync::fence_sc_cluster()
}

/// A grid barrier for a clustered launch: the cluster barrier first, then one arrival per
/// cluster at the grid's word — a cluster of `n` blocks puts one L2 atomic on the grid word's
/// queue where [`GridBarrier`](crate::grid::GridBarrier) puts `n`.
///
/// Scope: device (all blocks of the launch). CUDA: none (cooperative groups' `grid.sync()` on a
/// clustered launch arrives per block).
/// PTX: every thread `barrier.cluster.arrive.release`; the cluster's rank-0 block
/// `barrier.cluster.wait.acquire`, then its thread 0 `red.release.gpu.add.u32` on the grid word;
/// thread 0 of every block polls it with `ld.acquire.gpu.b32` (as `GridBarrier`); the other
/// blocks `barrier.cluster.wait.acquire` after the poll, when that phase is long complete.
///
/// # Memory ordering
///
/// As [`GridBarrier`](crate::grid::GridBarrier): everything any thread did before its call
/// happens-before everything every thread does after it returns `Ok`. The chain for a block
/// that is not its cluster's leader: its threads' release arrival at the cluster barrier, the
/// leader block's acquire wait (cluster scope), `bar.sync` to the leader's thread 0, whose
/// release add at device scope is cumulative — it carries the whole cluster's writes — and the
/// acquire poll that sees the generation flip in every other block, handed to its block by
/// `bar.red`.
///
/// # Preconditions
///
/// Those of `GridBarrier` — every cluster resident at once (for a clustered launch the host
/// checks with `cuOccupancyMaxActiveClusters`), every thread calling `sync` equally often in
/// uniform control flow, a state zeroed per launch — and a clustered launch (`LaunchConfig::
/// with_cluster`; a launch without clusters is a grid of one-block clusters, where this is
/// `GridBarrier` with a cluster barrier added). The groups setting of the state is not used.
///
/// # Bounded, and one wait that is not
///
/// A block that has exited counts as arrived at the cluster barrier (its threads do): a block
/// that returns early while its cluster's siblings call `sync` is not waited for — unlike
/// `GridBarrier`, where the others time out. A whole cluster that never arrives is a timeout.
///
/// The wait on the grid word is bounded as in `GridBarrier`. The cluster barrier's wait is not
/// (the hardware's): it waits only for the cluster's own blocks, resident together by
/// construction. So that a failed block never leaves its siblings there, a handle that failed
/// keeps arriving at and waiting on the cluster barrier in every later `sync` (without arriving
/// at the grid word) until the kernel returns; a thread that has exited counts as arrived.
#[derive(Debug)]
pub struct ClusterGridBarrier {
    state: *mut crate::grid::GridBarrierState,
    passed: u32,
    start: u32,
    failed: bool,
    sleep_ns: u32,
}

impl ClusterGridBarrier {
    /// A handle to the barrier whose state is at `state` (see
    /// [`GridBarrier::from_ptr`](crate::grid::GridBarrier::from_ptr)).
    ///
    /// # Safety
    /// As [`GridBarrier::from_ptr`](crate::grid::GridBarrier::from_ptr); a clustered launch.
    #[inline(always)]
    pub unsafe fn from_ptr(state: *mut crate::grid::GridBarrierState) -> ClusterGridBarrier {
        use crate::atomic::{LoadOrder, Scope, load};
        // SAFETY: the caller's contract; nothing writes the setting during a launch.
        let sleep_word = unsafe { crate::mem::Ptr::new(&raw mut (*state).poll_sleep_ns).load() };
        // SAFETY: as above; the arrival word is only ever accessed atomically.
        let start = unsafe { load(&raw mut (*state).arrived, Scope::Device, LoadOrder::Relaxed) };
        ClusterGridBarrier {
            state,
            passed: 0,
            start: start & crate::grid::GENERATION_BIT,
            failed: false,
            sleep_ns: crate::grid::poll_sleep_of(sleep_word, clusters_in_grid()),
        }
    }

    /// Waits until every thread of the grid has called `sync` as many times as this thread.
    ///
    /// # Errors
    /// [`BarrierError`](crate::grid::BarrierError) if this block, or another, waited past the
    /// timeout. Every thread of the block gets the same answer.
    #[inline(always)]
    pub fn sync(&mut self) -> Result<(), crate::grid::BarrierError> {
        // Every thread of the cluster arrives, once per call, even after a failure: the
        // siblings' cluster barrier must not wait for this block.
        cluster_arrive();
        let leader = cluster_block_rank() == 0;
        if self.failed {
            cluster_wait();
            return Err(crate::grid::BarrierError::Abandoned);
        }
        self.passed = self.passed.wrapping_add(1);
        if leader {
            cluster_wait(); // the cluster's writes, acquired before the leader arrives for it
        }
        // SAFETY: `from_ptr`'s contract.
        let verdict = crate::grid::block_leader(|| unsafe { self.arrive_and_wait(leader) });
        if !leader {
            cluster_wait(); // complete since the leader arrived: every thread had arrived
        }
        self.failed = verdict.is_err();
        verdict
    }

    /// Thread 0's part: the leader block arrives for its cluster; every block waits for the
    /// generation flip.
    ///
    /// # Safety
    /// As [`ClusterGridBarrier::from_ptr`].
    #[inline(always)]
    unsafe fn arrive_and_wait(&self, leader: bool) -> Result<(), crate::grid::BarrierError> {
        use crate::atomic::{Scope, StoreOrder, red_add};
        // SAFETY: the caller's contract; raw field pointers.
        let (arrived, timeouts) = unsafe {
            (
                &raw mut (*self.state).arrived,
                &raw mut (*self.state).timeouts,
            )
        };
        let target = crate::grid::generation_after(self.start, self.passed);
        if leader {
            let clusters = clusters_in_grid();
            let me = cluster_rank_in_grid();
            // SAFETY: as above; the arrival word is only ever accessed atomically.
            unsafe {
                red_add(
                    arrived,
                    crate::grid::arrival(me == 0, clusters),
                    Scope::Device,
                    StoreOrder::Release,
                )
            };
        }
        // SAFETY: as above.
        unsafe {
            crate::grid::wait_for_generation(
                arrived,
                target,
                Scope::Device,
                self.sleep_ns,
                (timeouts, &raw const (*self.state).timeout_ns),
            )
        }
    }
}

/// Clusters in the grid: the product of [`clusters_per_grid_x`], `_y` and `_z`.
#[inline(always)]
pub fn clusters_in_grid() -> u32 {
    clusters_per_grid_x() * clusters_per_grid_y() * clusters_per_grid_z()
}

/// This block's cluster's linear index in the grid of clusters, x fastest.
#[inline(always)]
pub fn cluster_rank_in_grid() -> u32 {
    cluster_idx_x()
        + clusters_per_grid_x() * (cluster_idx_y() + clusters_per_grid_y() * cluster_idx_z())
}
