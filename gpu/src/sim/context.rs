//! What each simulated thread knows about itself, and the block and warp state it shares.

use super::barrier::SimBarrier;
use super::check::ThreadScope;
use super::weak::sched::WeakLaunch;
use super::{Abort, Launch, SimError};
use crate::LaunchConfig;
use std::cell::{Cell, UnsafeCell};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::time::Instant;

/// A simulated thread's `threadIdx`, `blockIdx`, `blockDim` and `gridDim`, as `[x, y, z]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ids {
    /// `threadIdx`.
    pub thread: [u32; 3],
    /// `blockIdx`.
    pub block: [u32; 3],
    /// `blockDim`.
    pub block_dim: [u32; 3],
    /// `gridDim`.
    pub grid_dim: [u32; 3],
    /// The launch's cluster shape (`%cluster_nctaid`): `[1, 1, 1]` without clusters.
    pub cluster_dim: [u32; 3],
}

impl Ids {
    /// `%cluster_ctaid`: this block's position in its cluster.
    pub fn cluster_ctaid(&self) -> [u32; 3] {
        std::array::from_fn(|a| self.block[a] % self.cluster_dim[a])
    }

    /// `%clusterid`: this block's cluster's position in the grid of clusters.
    pub fn cluster_id(&self) -> [u32; 3] {
        std::array::from_fn(|a| self.block[a] / self.cluster_dim[a])
    }

    /// `%nclusterid`: clusters in the grid, per axis.
    pub fn cluster_count(&self) -> [u32; 3] {
        std::array::from_fn(|a| self.grid_dim[a] / self.cluster_dim[a])
    }

    /// `%cluster_ctarank`: this block's rank in its cluster, x fastest.
    pub fn cluster_rank(&self) -> u32 {
        let [x, y, z] = self.cluster_ctaid();
        let [cx, cy, _] = self.cluster_dim;
        x + y * cx + z * cx * cy
    }

    /// The linear index of this block's cluster, x fastest.
    pub fn cluster_linear(&self) -> u32 {
        let [x, y, z] = self.cluster_id();
        let [nx, ny, _] = self.cluster_count();
        x + y * nx + z * nx * ny
    }

    /// The linear block index (x fastest) of the block of rank `rank` in this block's cluster.
    pub fn block_of_rank(&self, rank: u32) -> u32 {
        let [cx, cy, _] = self.cluster_dim;
        let local = [rank % cx, (rank / cx) % cy, rank / (cx * cy)];
        let id = self.cluster_id();
        let b: [u32; 3] = std::array::from_fn(|a| id[a] * self.cluster_dim[a] + local[a]);
        b[0] + b[1] * self.grid_dim[0] + b[2] * self.grid_dim[0] * self.grid_dim[1]
    }
}

/// What one lane sees of a warp operation: every lane's value, and which lanes are running.
#[derive(Clone, Copy, Debug)]
pub struct WarpView {
    /// The value each lane contributed (0 for lanes that do not exist or have exited).
    pub values: [u64; 32],
    /// A bit per lane still running.
    pub live: u32,
}

pub(super) struct WarpState {
    barrier: SimBarrier,
    slots: [AtomicU64; 32],
    live: AtomicU32,
}

pub(super) struct BlockState {
    barrier: SimBarrier,
    warps: Vec<WarpState>,
    /// 16-byte units, so the base is 16-byte aligned; written through raw pointers by the
    /// block's threads, hence `UnsafeCell`.
    shared: Box<[UnsafeCell<u128>]>,
    shared_bytes: u32,
}

impl BlockState {
    pub(super) fn new(cfg: &LaunchConfig) -> BlockState {
        let threads = cfg.block.count() as u32;
        let warps = threads.div_ceil(32);
        BlockState {
            barrier: SimBarrier::new(threads),
            warps: (0..warps)
                .map(|w| {
                    let lanes = (threads - w * 32).min(32);
                    WarpState {
                        barrier: SimBarrier::new(lanes),
                        slots: std::array::from_fn(|_| AtomicU64::new(0)),
                        live: AtomicU32::new(if lanes == 32 {
                            u32::MAX
                        } else {
                            (1 << lanes) - 1
                        }),
                    }
                })
                .collect(),
            shared: (0..(cfg.shared_bytes as usize).div_ceil(16))
                .map(|_| UnsafeCell::new(0))
                .collect(),
            shared_bytes: cfg.shared_bytes,
        }
    }

    /// The block's barrier, for the barrier's own tests.
    #[cfg(test)]
    pub(super) fn barrier(&self) -> &SimBarrier {
        &self.barrier
    }

    /// Wakes every thread waiting at this block's barrier or at one of its warps'.
    pub(super) fn wake(&self) {
        self.barrier.wake();
        for w in &self.warps {
            w.barrier.wake();
        }
    }
}

// SAFETY: the barriers and warp slots are synchronized; the shared-memory cells are only
// reached through raw pointers handed to kernel code, whose own contract (barriers or atomics
// between conflicting accesses) is the GPU's.
unsafe impl Sync for BlockState {}

#[derive(Clone, Copy)]
pub(super) struct ThreadCtx {
    ids: Ids,
    launch: *const Launch,
    /// The thread's rank in the grid: its number in a weak launch's scheduler.
    rank: u32,
    block: u32,
    warp: u32,
    lane: u32,
}

impl ThreadCtx {
    pub(super) fn new(launch: &Launch, block: u32, rank: u32) -> ThreadCtx {
        let cfg = &launch.cfg;
        let (bx, by) = (cfg.block.x, cfg.block.y);
        let (gx, gy) = (cfg.grid.x, cfg.grid.y);
        ThreadCtx {
            ids: Ids {
                thread: [rank % bx, (rank / bx) % by, rank / (bx * by)],
                block: [block % gx, (block / gx) % gy, block / (gx * gy)],
                block_dim: [cfg.block.x, cfg.block.y, cfg.block.z],
                grid_dim: [cfg.grid.x, cfg.grid.y, cfg.grid.z],
                cluster_dim: [cfg.cluster.x, cfg.cluster.y, cfg.cluster.z],
            },
            launch,
            rank: block * cfg.block.count() as u32 + rank,
            block,
            warp: rank / 32,
            lane: rank % 32,
        }
    }
}

// SAFETY: the pointer is to the `Launch` whose `launch` call waits for every job that holds a
// context of it to end (`pool::Group::join`), and `run_thread` clears the thread's context
// before it returns.
unsafe impl Send for ThreadCtx {}

thread_local! {
    static CTX: Cell<Option<ThreadCtx>> = const { Cell::new(None) };
}

fn ctx() -> ThreadCtx {
    CTX.get()
        .expect("gridsync device code called outside a kernel (no simulated thread here)")
}

fn with_launch<R>(f: impl FnOnce(&ThreadCtx, &Launch, &BlockState) -> R) -> R {
    let c = ctx();
    // SAFETY: `launch` points to the launch this thread belongs to, alive until it returns.
    let launch = unsafe { &*c.launch };
    f(&c, launch, &launch.blocks[c.block as usize])
}

/// The calling simulated thread's ids.
///
/// # Panics
/// Outside a simulated kernel, where there are no ids to read.
pub fn ids() -> Ids {
    ctx().ids
}

/// The calling simulated thread's lane in its warp.
pub fn lane() -> u32 {
    ctx().lane
}

/// In a weak launch ([`weak::scoped`](super::weak::scoped)), runs `op` on its memory as the
/// calling thread, then hands the token on (maybe back to itself); `None` — and `op` not run —
/// outside a weak launch, or outside a kernel.
pub(crate) fn weak<R>(op: impl FnOnce(&WeakLaunch, u32) -> R) -> Option<R> {
    let c = CTX.get()?;
    // A thread unwinding out of an aborted launch (a guard's `drop` releasing its lock) must
    // neither wait for the token nor unwind again: its operations go to plain memory, and the
    // launch's result is the error already recorded.
    if std::thread::panicking() {
        return None;
    }
    // SAFETY: `launch` points to the launch this thread belongs to, alive until it returns.
    let launch = unsafe { &*c.launch };
    let w = launch.weak.as_ref()?;
    let r = op(w, c.rank);
    if HOLD.get() > 0 {
        // Inside one of the checker's locks: the thread keeps the token until it lets go.
        HANDOFF_DUE.set(true);
    } else if let Err(why) = w.switch(c.rank, &|| launch.aborted()) {
        launch.stuck(why, "a memory operation");
    }
    Some(r)
}

thread_local! {
    /// How many [`HoldToken`]s the thread holds.
    static HOLD: Cell<u32> = const { Cell::new(0) };
    /// Whether a weak operation made while holding them owes the token a hand-off.
    static HANDOFF_DUE: Cell<bool> = const { Cell::new(false) };
}

/// Keeps the weak launch's token with the calling thread while it lives: the checker holds one
/// around the memory operations it makes under its own locks (an atomic, an `mbarrier`'s
/// update), so that no other thread runs — and waits for that lock — before it is released.
/// The hand-off the operations owe happens when the last one drops.
pub(crate) struct HoldToken(());

impl HoldToken {
    pub(crate) fn new() -> HoldToken {
        HOLD.set(HOLD.get() + 1);
        HoldToken(())
    }
}

impl Drop for HoldToken {
    fn drop(&mut self) {
        HOLD.set(HOLD.get() - 1);
        if HOLD.get() == 0 && HANDOFF_DUE.replace(false) && !std::thread::panicking() {
            let Some(c) = CTX.get() else { return };
            // SAFETY: as in `weak`.
            let launch = unsafe { &*c.launch };
            if let Some(w) = launch.weak.as_ref()
                && let Err(why) = w.switch(c.rank, &|| launch.aborted())
            {
                launch.stuck(why, "a memory operation");
            }
        }
    }
}

/// Whether the calling thread runs in a weak launch ([`weak::scoped`](super::weak::scoped)):
/// a kernel may bound a spin that the weak memory keeps stale for ever more tightly there.
pub fn in_weak_launch() -> bool {
    CTX.get().is_some_and(|c| {
        // SAFETY: as in `weak`.
        unsafe { &*c.launch }.weak.is_some()
    })
}

#[track_caller]
pub(crate) fn block_barrier(predicate: bool) -> bool {
    // The checker: an arrival releases before the real barrier, the wait acquires after it.
    super::check::barrier_arrive();
    let any = with_launch(|c, launch, block| match &launch.weak {
        // `bar.sync` synchronizes the block's threads (acquire-release among them): each
        // leaves with what every one of them had seen when it arrived.
        Some(w) => {
            let key = block.barrier.key();
            w.barrier_arrive(c.rank, key, ThreadScope::Block);
            let any = block
                .barrier
                .wait_weak(launch, w, c.rank, "sync_threads", predicate);
            w.barrier_leave(c.rank, key, ThreadScope::Block);
            any
        }
        None => block.barrier.wait(launch, "sync_threads", predicate),
    });
    super::check::barrier_leave();
    any
}

/// Whether `addr` lies in the shared memory of a block of the calling thread's launch (the
/// checker's way to tell a shared address from a global one).
pub(crate) fn in_shared(addr: usize) -> bool {
    with_launch(|_, launch, _| {
        launch.blocks.iter().any(|b| {
            let base = UnsafeCell::raw_get(b.shared.as_ptr()) as usize;
            (base..base + b.shared_bytes as usize).contains(&addr)
        })
    })
}

pub(crate) fn shared_base() -> *mut u8 {
    with_launch(|_, _, block| UnsafeCell::raw_get(block.shared.as_ptr()).cast())
}

pub(crate) fn shared_len() -> u32 {
    with_launch(|_, _, block| block.shared_bytes)
}

/// `barrier.cluster.arrive` (`.release` if `release`, else `.relaxed`): the calling thread
/// arrives at its cluster's barrier.
///
/// # Panics
/// In a weak launch, which does not simulate clusters (the launch fails with that message).
pub(crate) fn cluster_arrive(release: bool) {
    assert!(
        !in_weak_launch(),
        "the weak memory does not simulate thread block clusters (barrier.cluster)"
    );
    let cluster = ctx().ids.cluster_linear();
    super::check::cluster_arrive(cluster, release);
    with_launch(|_, launch, _| launch.clusters[cluster as usize].arrive())
}

/// `barrier.cluster.wait`: waits for the phase the calling thread arrived at.
pub(crate) fn cluster_wait() {
    let cluster = ctx().ids.cluster_linear();
    with_launch(|_, launch, _| launch.clusters[cluster as usize].wait(launch));
    super::check::cluster_waited(cluster);
}

/// `mapa`: the address in the shared memory of the block of `rank` in this block's cluster
/// that is at `p`'s offset in this block's.
///
/// # Panics
/// If `p` is not in this block's shared memory, or `rank` is not a rank of the cluster: on the
/// GPU the result would be undefined.
pub(crate) fn map_shared(p: *const u8, rank: u32) -> *mut u8 {
    with_launch(|c, launch, block| {
        let size = c.ids.cluster_dim.iter().product::<u32>();
        assert!(
            rank < size,
            "mapa to rank {rank} of a cluster of {size} blocks (undefined on the GPU)"
        );
        let base = UnsafeCell::raw_get(block.shared.as_ptr()) as usize;
        let offset = (p as usize).wrapping_sub(base);
        assert!(
            offset <= block.shared_bytes as usize,
            "mapa of an address outside this block's shared memory (undefined on the GPU)"
        );
        let other = &launch.blocks[c.ids.block_of_rank(rank) as usize];
        UnsafeCell::raw_get(other.shared.as_ptr())
            .cast::<u8>()
            .wrapping_add(offset)
    })
}

/// The rendezvous behind every warp operation: each running lane of the warp deposits `value`,
/// and all see every lane's.
pub fn warp_exchange(value: u64) -> WarpView {
    exchange(value, false)
}

/// `__syncwarp`: a [`warp_exchange`] that also orders memory among the lanes (the checker
/// sees the lanes' arrivals released to each other).
pub(crate) fn warp_sync() {
    super::check::warp_arrive();
    exchange(0, true);
}

fn exchange(value: u64, synchronizes: bool) -> WarpView {
    with_launch(|c, launch, block| {
        let warp = &block.warps[c.warp as usize];
        // In a weak launch the warp's lanes meet through the scheduler and synchronize as
        // `__syncwarp` does (stronger than a shuffle, which orders no memory: nothing the GPU
        // forbids).
        let meet = || match &launch.weak {
            Some(w) => {
                let key = warp.barrier.key();
                w.barrier_arrive(c.rank, key, ThreadScope::Block);
                warp.barrier
                    .wait_weak(launch, w, c.rank, "a warp operation", false);
                w.barrier_leave(c.rank, key, ThreadScope::Block);
            }
            None => {
                warp.barrier.wait(launch, "a warp operation", false);
            }
        };
        warp.slots[c.lane as usize].store(value, Ordering::Relaxed);
        meet();
        let view = WarpView {
            values: std::array::from_fn(|l| warp.slots[l].load(Ordering::Relaxed)),
            live: warp.live.load(Ordering::Relaxed),
        };
        // Nobody may overwrite a slot until every lane has read them all.
        meet();
        super::check::warp_met(synchronizes);
        view
    })
}

pub(crate) fn host_clock_ns() -> u64 {
    static EPOCH: OnceLock<Instant> = OnceLock::new();
    EPOCH.get_or_init(Instant::now).elapsed().as_nanos() as u64
}

fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "a panic with a non-string payload".to_string()
    }
}

/// The body of one simulated thread: (in a weak launch, wait for the token), run the kernel,
/// then leave every barrier so that the threads still running do not wait for this one.
pub(super) fn run_thread<F: Fn() + Sync>(launch: &Launch, ctx: ThreadCtx, kernel: &F) {
    /// Clears the thread's context however this function ends: the OS thread is kept for
    /// later launches, and must not keep a pointer to this one.
    struct Clear;
    impl Drop for Clear {
        fn drop(&mut self) {
            super::check::leave();
            CTX.set(None);
        }
    }
    let _clear = Clear;
    CTX.set(Some(ctx));
    if let Some(check) = &launch.check {
        let per_block = launch.cfg.block.count() as u32;
        let thread = ctx.rank - ctx.block * per_block;
        super::check::enter(check, super::check::ThreadId::new(ctx.block, thread));
    }
    let block = &launch.blocks[ctx.block as usize];
    let warp = &block.warps[ctx.warp as usize];
    if let Some(w) = &launch.weak {
        w.register(ctx.rank);
    }
    let ran = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        if let Some(w) = &launch.weak
            && let Err(why) = w.wait_turn(ctx.rank, &|| launch.aborted())
        {
            launch.stuck(why, "the start of the launch");
        }
        if !launch.aborted() {
            kernel();
        }
    }));
    if let Err(payload) = ran
        && !payload.is::<Abort>()
    {
        // The kept OS threads all have one name: the panic says which GPU thread it was.
        launch.fail(SimError::Panicked(format!(
            "{} (block {:?}, thread {:?})",
            panic_message(payload.as_ref()),
            ctx.ids.block,
            ctx.ids.thread
        )));
    }
    warp.live.fetch_and(!(1 << ctx.lane), Ordering::Relaxed);
    let opened = [
        (warp.barrier.leave(), warp.barrier.key()),
        (block.barrier.leave(), block.barrier.key()),
    ];
    launch.clusters[ctx.ids.cluster_linear() as usize].leave();
    if let Some(w) = &launch.weak {
        for (open, key) in opened {
            if open {
                w.release(key);
            }
        }
        if w.exit(ctx.rank).is_err() {
            launch.fail(SimError::Deadlock(
                "a barrier the threads left wait at, which no thread can reach any more",
            ));
        }
    }
}
