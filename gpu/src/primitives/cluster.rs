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

use crate::shared_atomic::SharedU32;

macro_rules! cluster_registers {
    ($($(#[$doc:meta])* $name:ident => $reg:literal, $sim:expr;)*) => {
        $(
            $(#[$doc])*
            #[inline(always)]
            pub fn $name() -> u32 {
                #[cfg(target_arch = "nvptx64")]
                {
                    let v: u32;
                    // SAFETY: reading a special register has no preconditions.
                    unsafe {
                        core::arch::asm!(
                            concat!("mov.u32 {0}, ", $reg, ";"),
                            out(reg32) v,
                            options(nostack, pure, nomem)
                        );
                    }
                    v
                }
                #[cfg(not(target_arch = "nvptx64"))]
                {
                    let ids = crate::sim::ids();
                    #[allow(clippy::redundant_closure_call)]
                    ($sim)(ids)
                }
            }
        )*
    };
}

cluster_registers! {
    /// This block's rank in its cluster, `0..cluster_block_count()` (x fastest).
    ///
    /// CUDA: `this_cluster().block_rank()`. PTX: `%cluster_ctarank`.
    cluster_block_rank => "%cluster_ctarank", |i: crate::sim::Ids| i.cluster_rank();
    /// The number of blocks in this block's cluster (1 in a launch without clusters).
    ///
    /// CUDA: `this_cluster().num_blocks()`. PTX: `%cluster_nctarank`.
    cluster_block_count => "%cluster_nctarank", |i: crate::sim::Ids| i.cluster_dim.iter().product();
    /// This block's position in its cluster, x. CUDA: `this_cluster().block_index().x`.
    /// PTX: `%cluster_ctaid.x`.
    cluster_block_idx_x => "%cluster_ctaid.x", |i: crate::sim::Ids| i.cluster_ctaid()[0];
    /// This block's position in its cluster, y. PTX: `%cluster_ctaid.y`.
    cluster_block_idx_y => "%cluster_ctaid.y", |i: crate::sim::Ids| i.cluster_ctaid()[1];
    /// This block's position in its cluster, z. PTX: `%cluster_ctaid.z`.
    cluster_block_idx_z => "%cluster_ctaid.z", |i: crate::sim::Ids| i.cluster_ctaid()[2];
    /// Blocks per cluster, x. CUDA: `this_cluster().dim_blocks().x`. PTX: `%cluster_nctaid.x`.
    cluster_dim_x => "%cluster_nctaid.x", |i: crate::sim::Ids| i.cluster_dim[0];
    /// Blocks per cluster, y. PTX: `%cluster_nctaid.y`.
    cluster_dim_y => "%cluster_nctaid.y", |i: crate::sim::Ids| i.cluster_dim[1];
    /// Blocks per cluster, z. PTX: `%cluster_nctaid.z`.
    cluster_dim_z => "%cluster_nctaid.z", |i: crate::sim::Ids| i.cluster_dim[2];
    /// This block's cluster's position in the grid of clusters, x. PTX: `%clusterid.x`.
    cluster_idx_x => "%clusterid.x", |i: crate::sim::Ids| i.cluster_id()[0];
    /// This block's cluster's position, y. PTX: `%clusterid.y`.
    cluster_idx_y => "%clusterid.y", |i: crate::sim::Ids| i.cluster_id()[1];
    /// This block's cluster's position, z. PTX: `%clusterid.z`.
    cluster_idx_z => "%clusterid.z", |i: crate::sim::Ids| i.cluster_id()[2];
    /// Clusters in the grid, x. PTX: `%nclusterid.x`.
    clusters_per_grid_x => "%nclusterid.x", |i: crate::sim::Ids| i.cluster_count()[0];
    /// Clusters in the grid, y. PTX: `%nclusterid.y`.
    clusters_per_grid_y => "%nclusterid.y", |i: crate::sim::Ids| i.cluster_count()[1];
    /// Clusters in the grid, z. PTX: `%nclusterid.z`.
    clusters_per_grid_z => "%nclusterid.z", |i: crate::sim::Ids| i.cluster_count()[2];
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
    #[cfg(target_arch = "nvptx64")]
    // SAFETY: an arrival at the cluster barrier; the once-per-phase rule (above) is the
    // caller's.
    unsafe {
        core::arch::asm!("barrier.cluster.arrive.release;", options(nostack));
    }
    #[cfg(not(target_arch = "nvptx64"))]
    crate::sim::cluster_arrive(true);
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
    #[cfg(target_arch = "nvptx64")]
    // SAFETY: as `cluster_arrive`.
    unsafe {
        core::arch::asm!("barrier.cluster.arrive.relaxed;", options(nostack));
    }
    #[cfg(not(target_arch = "nvptx64"))]
    crate::sim::cluster_arrive(false);
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
    #[cfg(target_arch = "nvptx64")]
    // SAFETY: waits at the cluster barrier; the arrival before it is the caller's.
    unsafe {
        core::arch::asm!("barrier.cluster.wait.acquire;", options(nostack));
    }
    #[cfg(not(target_arch = "nvptx64"))]
    crate::sim::cluster_wait();
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
    #[cfg(target_arch = "nvptx64")]
    {
        let q: *mut T;
        // SAFETY: address arithmetic only; the caller upholds the contract.
        unsafe {
            core::arch::asm!(
                "mapa.u64 {0}, {1}, {2};",
                out(reg64) q, in(reg64) p, in(reg32) rank,
                options(nostack, pure, nomem)
            );
        }
        q
    }
    #[cfg(not(target_arch = "nvptx64"))]
    {
        crate::sim::map_shared(p.cast(), rank).cast()
    }
}

/// A `u32` in the shared memory of some block of this cluster, addressed in the
/// `shared::cluster` state space: the distributed-shared-memory twin of [`SharedU32`].
///
/// Made from a [`SharedU32`] of this block's shared memory and the rank of the block it should
/// reach ([`ClusterU32::map`]). Its atomics name the state space and the cluster scope, so
/// ptxas emits the distributed-shared-memory atomic directly instead of a generic one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ClusterU32 {
    #[cfg(target_arch = "nvptx64")]
    addr: u32,
    #[cfg(not(target_arch = "nvptx64"))]
    addr: *mut u32,
}

impl ClusterU32 {
    /// The word at `word`'s offset in the shared memory of the block of rank `rank` of this
    /// cluster. PTX: `mapa.shared::cluster.u32`.
    ///
    /// # Safety
    /// `rank < cluster_block_count()`.
    #[inline(always)]
    pub unsafe fn map(word: SharedU32, rank: u32) -> ClusterU32 {
        #[cfg(target_arch = "nvptx64")]
        {
            let addr: u32;
            // SAFETY: address arithmetic only.
            unsafe {
                core::arch::asm!(
                    "mapa.shared::cluster.u32 {0}, {1}, {2};",
                    out(reg32) addr, in(reg32) word.shared_addr(), in(reg32) rank,
                    options(nostack, pure, nomem)
                );
            }
            ClusterU32 { addr }
        }
        #[cfg(not(target_arch = "nvptx64"))]
        {
            ClusterU32 {
                addr: crate::sim::map_shared(word.host_ptr().cast(), rank).cast(),
            }
        }
    }

    /// The address `i` words further (no check).
    #[inline(always)]
    pub fn offset(self, i: u32) -> ClusterU32 {
        #[cfg(target_arch = "nvptx64")]
        {
            ClusterU32 {
                addr: self.addr.wrapping_add(i.wrapping_mul(4)),
            }
        }
        #[cfg(not(target_arch = "nvptx64"))]
        {
            ClusterU32 {
                addr: self.addr.wrapping_add(i as usize),
            }
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
        #[cfg(target_arch = "nvptx64")]
        // SAFETY: the caller upholds the contract above.
        unsafe {
            core::arch::asm!(
                "red.relaxed.cluster.shared::cluster.add.u32 [{0}], {1};",
                in(reg32) self.addr, in(reg32) val, options(nostack)
            )
        };
        // The simulator has no `red`: the add of `fetch_add_cluster`, its result unused (the
        // caller's line reaches the checker through both).
        #[cfg(not(target_arch = "nvptx64"))]
        // SAFETY: the same contract.
        unsafe {
            self.fetch_add_cluster(val);
        }
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
        #[cfg(target_arch = "nvptx64")]
        {
            let old: u32;
            // SAFETY: the caller upholds the contract above.
            unsafe {
                core::arch::asm!(
                    "atom.relaxed.cluster.shared::cluster.add.u32 {0}, [{1}], {2};",
                    out(reg32) old, in(reg32) self.addr, in(reg32) val, options(nostack)
                )
            };
            old
        }
        #[cfg(not(target_arch = "nvptx64"))]
        {
            // SAFETY: the caller upholds the contract above.
            let a = unsafe { core::sync::atomic::AtomicU32::from_ptr(self.addr) };
            crate::sim::check::report_atomic(
                crate::sim::check::AccessKind::Rmw,
                self.addr as usize,
                4,
                crate::atomic::Order::Relaxed,
                crate::sim::check::ThreadScope::Cluster,
                || a.fetch_add(val, core::sync::atomic::Ordering::Relaxed),
            )
        }
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
        #[cfg(target_arch = "nvptx64")]
        {
            let v: u32;
            // SAFETY: the caller upholds the contract above.
            unsafe {
                core::arch::asm!(
                    "ld.shared::cluster.u32 {0}, [{1}];",
                    out(reg32) v, in(reg32) self.addr, options(nostack, readonly)
                )
            };
            v
        }
        #[cfg(not(target_arch = "nvptx64"))]
        {
            crate::sim::check::report_access(
                crate::sim::check::AccessKind::Load,
                self.addr as usize,
                4,
                false,
            );
            // SAFETY: the caller upholds the contract above.
            unsafe { self.addr.read() }
        }
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
    #[cfg(target_arch = "nvptx64")]
    // SAFETY: a fence only orders this thread's accesses.
    unsafe {
        core::arch::asm!("fence.acq_rel.cluster;", options(nostack));
    }
    #[cfg(not(target_arch = "nvptx64"))]
    {
        use crate::sim::check::{ThreadScope, report_fence};
        report_fence(crate::sim::weak::FenceKind::AcqRel, ThreadScope::Cluster);
        core::sync::atomic::fence(core::sync::atomic::Ordering::AcqRel);
    }
}

/// Sequentially consistent fence at cluster scope. PTX: `fence.sc.cluster`.
#[inline(always)]
pub fn fence_sc_cluster() {
    #[cfg(target_arch = "nvptx64")]
    // SAFETY: a fence only orders this thread's accesses.
    unsafe {
        core::arch::asm!("fence.sc.cluster;", options(nostack));
    }
    #[cfg(not(target_arch = "nvptx64"))]
    {
        use crate::sim::check::{ThreadScope, report_fence};
        report_fence(crate::sim::weak::FenceKind::Sc, ThreadScope::Cluster);
        core::sync::atomic::fence(core::sync::atomic::Ordering::SeqCst);
    }
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
