//! The CPU simulator: runs a kernel body as a real grid of OS threads.
//!
//! [`launch`] runs one OS thread per GPU thread — every block of the grid at once: the launch
//! has all its threads before the first starts (kept between launches, since starting thousands
//! of threads cost more than most kernels) — with what the primitives need:
//!
//! - indices: each thread's `threadIdx`, `blockIdx`, `blockDim`, `gridDim`;
//! - per-block dynamic shared memory, zeroed, 16-byte aligned;
//! - `sync_threads` as a real barrier over the block's running threads;
//! - thread block clusters: the split cluster barrier over the cluster's running threads, and
//!   `mapa` into a sibling block's shared memory (every block runs at once anyway);
//! - `mbarrier`s as atomic words in shared memory with their phase, pending count and
//!   transaction count, and asynchronous copies performed at once, completing their bytes on
//!   the `mbarrier` they name (see [`crate::mbarrier`], [`crate::async_copy`]);
//! - warp operations as a rendezvous of the warp's running lanes (see [`crate::warp`]);
//! - atomics as `core::sync::atomic` operations, fences as `core::sync::atomic::fence`.
//!
//! The same kernel source runs here and on the GPU. What the simulator cannot show: the
//! lockstep execution of a warp (a naive spinlock that deadlocks a pre-Volta warp runs fine
//! here), scope bugs (CPU atomics are all coherent: [`check::checked`] reports them instead),
//! and performance. Grids are limited to
//! [`MAX_THREADS`] threads: enough for every test shape, and every source's demo shape.

mod barrier;
pub mod check;
mod cluster;
mod context;
pub(crate) mod mbarrier;
mod pool;
pub mod weak;

pub use context::{Ids, WarpView, ids, in_weak_launch, lane, warp_exchange};
pub(crate) use context::{
    block_barrier, cluster_arrive, cluster_wait, host_clock_ns, map_shared, shared_base,
    shared_len, warp_sync, weak as weak_op,
};

use crate::LaunchConfig;
use cluster::SplitBarrier;
use context::{BlockState, ThreadCtx};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// The most threads one simulated launch may have.
pub const MAX_THREADS: u64 = 4096;
/// The most threads one block may have (CUDA's limit).
pub const MAX_BLOCK_THREADS: u64 = 1024;
/// The most dynamic shared memory a block may have: an H100's or H200's opt-in limit (227 KiB).
/// On the GPU a launch past 48 KiB must opt in, which the host's launch does.
pub const MAX_SHARED_BYTES: u32 = 227 * 1024;
/// The most blocks in a cluster: the H100's non-portable limit (8 is the portable one).
pub const MAX_CLUSTER_BLOCKS: u64 = 16;
/// How long threads may wait at a barrier that no thread arrives at or leaves before the launch
/// is declared deadlocked.
pub const WAIT_LIMIT: Duration = Duration::from_secs(20);
/// A wait bound from which the simulator means "never in practice": bounds of a second or more
/// are stretched to [`WAIT_LIMIT`] by [`stretch_bound`].
pub const STRETCH_BOUNDS_FROM_NS: u64 = 1_000_000_000;

/// The bound a simulated wait uses for a kernel's `timeout_ns`. A bound of a second or more is a
/// kernel's "this never happens" (a pipeline's producer always arrives well within it on a GPU);
/// in the simulator, whose threads are OS threads a busy host may leave unscheduled for seconds,
/// it becomes [`WAIT_LIMIT`], the simulator's own deadlock bound. Shorter bounds — a lesson's
/// deliberate deadlock, a test of the timeout — are kept.
pub fn stretch_bound(timeout_ns: u64) -> u64 {
    if timeout_ns >= STRETCH_BOUNDS_FROM_NS {
        timeout_ns.max(WAIT_LIMIT.as_nanos() as u64)
    } else {
        timeout_ns
    }
}

/// Stack of each simulated thread (every thread of the pool has this one): kernels are small,
/// and thousands of threads must fit.
const STACK_BYTES: usize = 256 * 1024;

/// Why a simulated launch failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SimError {
    /// The launch shape is not one a GPU would accept.
    Config(String),
    /// The grid has more threads than the simulator runs at once.
    TooManyThreads {
        /// Threads asked for.
        threads: u64,
        /// [`MAX_THREADS`].
        max: u64,
    },
    /// Threads waited at a barrier or warp operation that no thread reached or left for longer
    /// than [`WAIT_LIMIT`].
    Deadlock(&'static str),
    /// The kernel panicked (on the GPU: a trap): the panic's message, then the block and thread
    /// that panicked.
    Panicked(String),
    /// The operating system refused to start a thread.
    Spawn(String),
}

impl std::fmt::Display for SimError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SimError::Config(why) => write!(f, "invalid launch shape: {why}"),
            SimError::TooManyThreads { threads, max } => write!(
                f,
                "the simulator runs at most {max} threads at once (one OS thread each); this grid has {threads}"
            ),
            SimError::Deadlock(what) => write!(
                f,
                "deadlock: threads waited at {what} for over {} s with no thread arriving, or \
                 (in a weak launch) every thread left waits for one that cannot come (a barrier some threads never reach?)",
                WAIT_LIMIT.as_secs()
            ),
            SimError::Panicked(msg) => write!(f, "the kernel panicked: {msg}"),
            SimError::Spawn(why) => write!(f, "could not start a simulator thread: {why}"),
        }
    }
}

impl std::error::Error for SimError {}

/// The payload a simulated thread unwinds with when the launch is abandoned.
struct Abort;

/// State shared by every thread of one launch.
pub(crate) struct Launch {
    cfg: LaunchConfig,
    blocks: Vec<BlockState>,
    clusters: Vec<SplitBarrier>,
    aborted: AtomicBool,
    error: Mutex<Option<SimError>>,
    /// The scheduler and memory of a weak launch ([`weak::scoped`]).
    weak: Option<weak::sched::WeakLaunch>,
    /// The checker's side of a checked launch ([`check::checked`]).
    check: Option<check::LaunchCheck>,
}

impl Launch {
    fn new(
        cfg: &LaunchConfig,
        weak: Option<weak::sched::WeakLaunch>,
        check: Option<check::LaunchCheck>,
    ) -> Launch {
        Launch {
            cfg: *cfg,
            blocks: (0..cfg.grid.count())
                .map(|_| BlockState::new(cfg))
                .collect(),
            clusters: (0..cfg.grid.count() / cfg.cluster.count())
                .map(|_| SplitBarrier::new((cfg.cluster.count() * cfg.block.count()) as u32))
                .collect(),
            aborted: AtomicBool::new(false),
            error: Mutex::new(None),
            weak,
            check,
        }
    }

    fn aborted(&self) -> bool {
        self.aborted.load(Ordering::Acquire)
    }

    /// A weak launch cannot go on: records a deadlock (every thread left waits at a barrier)
    /// and unwinds this thread.
    fn stuck(&self, why: weak::sched::Stuck, what: &'static str) -> ! {
        if let weak::sched::Stuck::Deadlock = why {
            self.fail(SimError::Deadlock(what));
        }
        std::panic::resume_unwind(Box::new(Abort));
    }

    /// Records the first error and tells every thread to stop, waking those that wait.
    fn fail(&self, e: SimError) {
        self.error
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .get_or_insert(e);
        if self.aborted.swap(true, Ordering::AcqRel) {
            return;
        }
        for b in &self.blocks {
            b.wake();
        }
        for c in &self.clusters {
            c.wake();
        }
        if let Some(w) = &self.weak {
            w.wake_all();
        }
    }
}

/// Checks a launch shape as the driver would, plus the simulator's own size limit.
///
/// # Errors
/// [`SimError::Config`] for an empty grid or block, a block over 1024 threads, shared memory
/// over [`MAX_SHARED_BYTES`], a cluster whose extents do not divide the grid's or of more than
/// [`MAX_CLUSTER_BLOCKS`] blocks; [`SimError::TooManyThreads`] past [`MAX_THREADS`].
pub fn check_config(cfg: &LaunchConfig) -> Result<(), SimError> {
    if cfg.grid.count() == 0 || cfg.block.count() == 0 {
        return Err(SimError::Config(format!(
            "grid {:?} and block {:?} must both be non-empty",
            cfg.grid, cfg.block
        )));
    }
    if cfg.block.count() > MAX_BLOCK_THREADS || cfg.block.z > 64 {
        return Err(SimError::Config(format!(
            "a block has at most {MAX_BLOCK_THREADS} threads (z at most 64); asked for {:?}",
            cfg.block
        )));
    }
    if cfg.shared_bytes > MAX_SHARED_BYTES {
        return Err(SimError::Config(format!(
            "{} bytes of dynamic shared memory per block; the limit is {MAX_SHARED_BYTES}",
            cfg.shared_bytes
        )));
    }
    let (g, c) = (cfg.grid, cfg.cluster);
    if c.count() == 0 || g.x % c.x != 0 || g.y % c.y != 0 || g.z % c.z != 0 {
        return Err(SimError::Config(format!(
            "cluster {c:?} must be non-empty and divide the grid {g:?} in every axis"
        )));
    }
    if c.count() > MAX_CLUSTER_BLOCKS {
        return Err(SimError::Config(format!(
            "a cluster has at most {MAX_CLUSTER_BLOCKS} blocks; asked for {c:?}"
        )));
    }
    if cfg.threads() > MAX_THREADS {
        return Err(SimError::TooManyThreads {
            threads: cfg.threads(),
            max: MAX_THREADS,
        });
    }
    Ok(())
}

/// Runs `kernel` once per thread of `cfg`'s grid, every thread on its own OS thread, and returns
/// when all have finished.
///
/// `kernel` is the body every GPU thread runs (typically a closure calling a [`kernel!`]
/// function with the launch's arguments); inside it the primitives see the thread's ids.
///
/// # Errors
/// What [`check_config`] refuses; [`SimError::Deadlock`] when threads wait at a barrier that no
/// thread reaches or leaves for [`WAIT_LIMIT`]; [`SimError::Panicked`] when the kernel panics; [`SimError::Spawn`] when the OS
/// refuses a thread.
pub fn launch<F: Fn() + Sync>(cfg: &LaunchConfig, kernel: F) -> Result<(), SimError> {
    check_config(cfg)?;
    let total = cfg.threads() as u32;
    let per_block = cfg.block.count() as u32;
    let weak = weak::sched::next_launch_seed()
        .map(|rng| weak::sched::WeakLaunch::new(total, per_block, rng));
    if weak.is_some() && cfg.is_clustered() {
        return Err(SimError::Config(
            "the weak memory does not simulate thread block clusters".into(),
        ));
    }
    let check = check::next_launch(cfg)?;
    let launch = &Launch::new(cfg, weak, check);
    let kernel = &kernel;
    // Every thread of the grid is there before any runs: a partial grid never runs.
    let mut threads =
        pool::Group::new(total as usize).map_err(|e| SimError::Spawn(e.to_string()))?;
    for rank in 0..total {
        let ctx = ThreadCtx::new(launch, rank / per_block, rank % per_block);
        threads.spawn(move || context::run_thread(launch, ctx, kernel));
    }
    threads.join();
    if let Some(w) = &launch.weak {
        w.report();
    }
    match launch
        .error
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .take()
    {
        Some(e) => Err(e),
        None => Ok(()),
    }
}
